/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-instance: a backend instance for Sluice. An HTTP/1.1 server that
 * rates its own load on every response as the SPL autoscaling seed's
 * instances do (WO 2021/086339, claim 3: execution time / stored
 * benchmark time) and sends it in X-SPL, with the time it was measured in
 * X-SPL-Time ([0065]). Options make it slow, busy, failing or silent, so
 * that the load balancer and the orchestrator can be shown at work.
 *
 * The main thread owns the signals and the ORCA load sampler; workers
 * (inst_worker.c) own the connections.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "inst.h"
#include "inst_http.h"

#define PROG "lb-instance"
/** How often the ORCA figures are refreshed, and over what window. */
#define SAMPLE_PERIOD_NS 250000000ll
#define SAMPLE_WINDOW_NS 1000000000ull

static const char usage_text[] =
	"usage: " PROG " --listen ADDR:PORT [options]\n"
	"An HTTP/1.1 backend that reports its self-perceived load.\n"
	"\n"
	"  --listen ADDR:PORT  address to serve; port 0 picks a free one,\n"
	"                      [V6ADDR]:PORT for IPv6, *:PORT for all IPv4\n"
	"  --name NAME         X-Instance and body (default: ADDR:PORT)\n"
	"  --bench-ms MS       benchmark time of a request (10)\n"
	"  --delay-ms MS       latency added to each request (0)\n"
	"  --jitter-ms MS      the delay varies uniformly by +-MS (0)\n"
	"  --cpu-us US         CPU time burnt per request (0)\n"
	"  --error-rate F      share of requests answered 503, 0..1 (0)\n"
	"  --error-path PREFIX answer 500 to every request whose target\n"
	"                      starts with PREFIX (e.g. /fail)\n"
	"  --seed N            seed of the 503 and jitter draws (1)\n"
	"  --stall             read requests, never answer; SIGUSR1 "
	"toggles\n"
	"  --spl on|off        send X-SPL and X-SPL-Time (on)\n"
	"  --spl-header NAME   send the SPL in header NAME (X-SPL)\n"
	"  --orca              send endpoint-load-metrics (ORCA TEXT)\n"
	"  --threads N         worker threads (1)\n"
	"  --max-inflight N    503 beyond N requests in flight (0: none)\n"
	"  --slots N           requests in service at once per thread;\n"
	"                      the others queue (0: no limit)\n"
	"  --max-head BYTES    longest request head (8192)\n"
	"  --idle-ms MS        close connections quiet this long (60000)\n"
	"  --drain-ms MS       on SIGTERM, time left to finish (5000)\n"
	"  --access-log FILE   append each request's target to FILE\n"
	"  -h, --help          this text\n";

static void
usage(FILE *f)
{
	fputs(usage_text, f);
}

static int
parse_num(const char *opt, const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !isfinite(v) || v < lo ||
	    v > hi) {
		fprintf(stderr,
			PROG ": --%s: '%s' is not a number in "
			     "%g..%g\n",
			opt, s, lo, hi);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int
parse_ns(const char *opt, const char *s, double unit_ns, double lo, double hi,
	 uint64_t *out)
{
	double v;

	if (parse_num(opt, s, lo, hi, &v) != 0)
		return -EINVAL;
	*out = (uint64_t)llround(v * unit_ns);
	return 0;
}

static int
parse_uint(const char *opt, const char *s, unsigned long long lo,
	   unsigned long long hi, unsigned long long *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v < lo ||
	    v > hi) {
		fprintf(stderr,
			PROG ": --%s: '%s' is not an integer in "
			     "%llu..%llu\n",
			opt, s, lo, hi);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* Visible ASCII only: the name goes into a header and a body as is. */
static int
set_name(struct lb_inst_conf *conf, const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > LB_INST_NAME_MAX)
		goto bad;
	for (size_t i = 0; i < n; i++)
		if (s[i] <= 0x20 || s[i] >= 0x7f)
			goto bad;
	memcpy(conf->name, s, n + 1);
	return 0;
bad:
	fprintf(stderr, PROG ": --name: 1 to %u visible ASCII characters\n",
		LB_INST_NAME_MAX);
	return -EINVAL;
}

/* A header name: RFC 9110 token characters. */
static int
set_spl_hdr(struct lb_inst_conf *conf, const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > LB_INST_NAME_MAX ||
	    strspn(s, "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyz"
		      "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != n) {
		fprintf(stderr,
			PROG ": --spl-header: 1 to %u token characters\n",
			LB_INST_NAME_MAX);
		return -EINVAL;
	}
	memcpy(conf->spl_hdr, s, n + 1);
	return 0;
}

enum {
	OPT_LISTEN = 256,
	OPT_NAME,
	OPT_BENCH,
	OPT_DELAY,
	OPT_JITTER,
	OPT_CPU,
	OPT_ERRATE,
	OPT_ERRPATH,
	OPT_SEED,
	OPT_STALL,
	OPT_SPL,
	OPT_SPL_HDR,
	OPT_ORCA,
	OPT_THREADS,
	OPT_MAXINF,
	OPT_SLOTS,
	OPT_MAXHEAD,
	OPT_IDLE,
	OPT_DRAIN,
	OPT_LOG,
};

static const struct option long_opts[] = {
	{"listen", required_argument, NULL, OPT_LISTEN},
	{"name", required_argument, NULL, OPT_NAME},
	{"bench-ms", required_argument, NULL, OPT_BENCH},
	{"delay-ms", required_argument, NULL, OPT_DELAY},
	{"jitter-ms", required_argument, NULL, OPT_JITTER},
	{"cpu-us", required_argument, NULL, OPT_CPU},
	{"error-rate", required_argument, NULL, OPT_ERRATE},
	{"error-path", required_argument, NULL, OPT_ERRPATH},
	{"seed", required_argument, NULL, OPT_SEED},
	{"stall", no_argument, NULL, OPT_STALL},
	{"spl", required_argument, NULL, OPT_SPL},
	{"spl-header", required_argument, NULL, OPT_SPL_HDR},
	{"orca", no_argument, NULL, OPT_ORCA},
	{"threads", required_argument, NULL, OPT_THREADS},
	{"max-inflight", required_argument, NULL, OPT_MAXINF},
	{"slots", required_argument, NULL, OPT_SLOTS},
	{"max-head", required_argument, NULL, OPT_MAXHEAD},
	{"idle-ms", required_argument, NULL, OPT_IDLE},
	{"drain-ms", required_argument, NULL, OPT_DRAIN},
	{"access-log", required_argument, NULL, OPT_LOG},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

/* 0, 1 for --help, or -EINVAL; *listen points into argv. */
/* Options about how the instance behaves as a loaded backend. */
static int
parse_load_opt(int c, const char *arg, struct lb_inst_conf *conf)
{
	unsigned long long u;
	int rc = 0;

	switch (c) {
	case OPT_BENCH:
		/* 1 us .. 1 h; 0 would divide by zero. */
		rc = parse_ns("bench-ms", arg, 1e6, 0.001, 3.6e6,
			      &conf->bench_ns);
		break;
	case OPT_DELAY:
		rc = parse_ns("delay-ms", arg, 1e6, 0, 3.6e6, &conf->delay_ns);
		break;
	case OPT_JITTER:
		rc = parse_ns("jitter-ms", arg, 1e6, 0, 3.6e6,
			      &conf->jitter_ns);
		break;
	case OPT_CPU:
		rc = parse_ns("cpu-us", arg, 1e3, 0, 6e7, &conf->cpu_ns);
		break;
	case OPT_ERRATE:
		rc = parse_num("error-rate", arg, 0, 1, &conf->error_rate);
		break;
	case OPT_ERRPATH:
		if (arg[0] != '/' || strlen(arg) > LB_INST_TARGET_KEEP) {
			fprintf(stderr,
				PROG ": --error-path: '/' and up to %u "
				     "characters\n",
				LB_INST_TARGET_KEEP);
			rc = -EINVAL;
		}
		conf->error_path = arg;
		break;
	case OPT_SEED:
		rc = parse_uint("seed", arg, 0, UINT64_MAX, &u);
		conf->seed = u;
		break;
	case OPT_STALL:
		conf->stall = true;
		break;
	case OPT_SPL:
		if (strcmp(arg, "on") == 0) {
			conf->spl = true;
		} else if (strcmp(arg, "off") == 0) {
			conf->spl = false;
		} else {
			fprintf(stderr, PROG ": --spl: on or off\n");
			rc = -EINVAL;
		}
		break;
	case OPT_SPL_HDR:
		rc = set_spl_hdr(conf, arg);
		break;
	case OPT_ORCA:
		conf->orca = true;
		break;
	default:
		return -EINVAL;
	}
	return rc;
}

/* Options about the server: where it listens, its threads and limits. */
static int
parse_server_opt(int c, const char *arg, struct lb_inst_conf *conf,
		 const char **listen)
{
	unsigned long long u;
	int rc = 0;

	switch (c) {
	case OPT_LISTEN:
		*listen = arg;
		break;
	case OPT_NAME:
		rc = set_name(conf, arg);
		break;
	case OPT_LOG:
		if (conf->log_fd >= 0)
			close(conf->log_fd);
		conf->log_fd = open(arg,
				    O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
				    0644);
		if (conf->log_fd < 0) {
			fprintf(stderr, PROG ": --access-log '%s': %s\n", arg,
				strerror(errno));
			rc = -EINVAL;
		}
		break;
	case OPT_THREADS:
		rc = parse_uint("threads", arg, 1, LB_INST_THREADS_MAX, &u);
		conf->threads = (unsigned int)u;
		break;
	case OPT_MAXINF:
		rc = parse_uint("max-inflight", arg, 0, 1u << 30, &u);
		conf->max_inflight = (unsigned int)u;
		break;
	case OPT_SLOTS:
		rc = parse_uint("slots", arg, 0, 1u << 30, &u);
		conf->slots = (unsigned int)u;
		break;
	case OPT_MAXHEAD:
		rc = parse_uint("max-head", arg, LB_INST_HEAD_MAX_MIN,
				LB_INST_HEAD_MAX_MAX, &u);
		conf->head_max = (uint32_t)u;
		break;
	case OPT_IDLE:
		rc = parse_ns("idle-ms", arg, 1e6, 1, 8.64e7, &conf->idle_ns);
		break;
	case OPT_DRAIN:
		rc = parse_ns("drain-ms", arg, 1e6, 0, 8.64e7, &conf->drain_ns);
		break;
	default:
		return parse_load_opt(c, arg, conf);
	}
	return rc;
}

static int
parse_args(int argc, char **argv, struct lb_inst_conf *conf,
	   const char **listen)
{
	int c, rc = 0;

	memset(conf, 0, sizeof(*conf));
	conf->bench_ns = 10000000;
	conf->seed = 1;
	conf->spl = true;
	snprintf(conf->spl_hdr, sizeof(conf->spl_hdr), "X-SPL");
	conf->threads = 1;
	conf->head_max = LB_INST_HEAD_MAX_DEFAULT;
	conf->idle_ns = 60000000000ull;
	conf->drain_ns = 5000000000ull;
	conf->log_fd = -1;
	*listen = NULL;
	while (rc == 0 &&
	       (c = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
		if (c == 'h')
			return 1;
		rc = parse_server_opt(c, optarg, conf, listen);
	}
	if (rc != 0)
		return rc;
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'\n",
			argv[optind]);
		return -EINVAL;
	}
	if (*listen == NULL) {
		fprintf(stderr, PROG ": --listen ADDR:PORT is required\n");
		return -EINVAL;
	}
	return 0;
}

/* Where --listen points: host (numeric or a name) and port. */
struct listen_spec {
	char host[256];
	char port[6];
};

/*
 * Splits "host:port", "[v6]:port", "*:port" or ":port" (the last two:
 * all IPv4 addresses); the port is 0 (any free one) to 65535.
 */
static int
split_listen(const char *spec, struct listen_spec *ls)
{
	const char *colon, *h = spec, *p;
	size_t hl;

	if (spec[0] == '[') {
		colon = strstr(spec, "]:");
		h = spec + 1;
		hl = colon != NULL ? (size_t)(colon - h) : 0;
		colon = colon != NULL ? colon + 1 : NULL;
	} else {
		colon = strrchr(spec, ':');
		hl = colon != NULL ? (size_t)(colon - spec) : 0;
	}
	if (colon == NULL || hl >= sizeof(ls->host))
		goto bad;
	p = colon + 1;
	if (p[0] == '\0' || strlen(p) > 5 ||
	    strspn(p, "0123456789") != strlen(p) || atoi(p) > 65535)
		goto bad;
	memcpy(ls->host, h, hl);
	ls->host[hl] = '\0';
	if (hl == 0 || strcmp(ls->host, "*") == 0)
		strcpy(ls->host, "0.0.0.0");
	strcpy(ls->port, p);
	return 0;
bad:
	fprintf(stderr, PROG ": --listen '%s': want ADDR:PORT, PORT 0..65535\n",
		spec);
	return -EINVAL;
}

/*
 * Opens the listening socket. Writes the bound address, as "host:port"
 * or "[v6]:port", to @p bound.
 */
static int
open_listener(const char *spec, const struct listen_spec *ls, char *bound,
	      size_t bound_len)
{
	char serv[NI_MAXSERV], nhost[NI_MAXHOST];
	struct addrinfo hints, *res = NULL;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int fd = -1, one = 1, rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	rc = getaddrinfo(ls->host, ls->port, &hints, &res);
	if (rc != 0) {
		fprintf(stderr, PROG ": --listen '%s': %s\n", spec,
			gai_strerror(rc));
		return -EINVAL;
	}
	fd = socket(res->ai_family,
		    res->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, res->ai_addr, res->ai_addrlen) != 0 ||
	    listen(fd, SOMAXCONN) != 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
		goto fail;
	freeaddrinfo(res);
	res = NULL;
	rc = getnameinfo((struct sockaddr *)&ss, sl, nhost, sizeof(nhost), serv,
			 sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV);
	if (rc != 0) {
		errno = EINVAL;
		goto fail;
	}
	snprintf(bound, bound_len,
		 ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", nhost, serv);
	return fd;
fail:
	rc = errno;
	fprintf(stderr, PROG ": --listen '%s': %s\n", spec, strerror(rc));
	if (res != NULL)
		freeaddrinfo(res);
	if (fd >= 0)
		close(fd);
	return -rc;
}

/* The workers' counters added up. */
struct totals {
	uint64_t accepted;
	uint64_t responses;
	uint64_t errors_4xx;
	uint64_t errors_5xx;
};

static struct totals
totals(struct lb_inst_worker **ws, unsigned int n)
{
	struct totals t = {0, 0, 0, 0};

	for (unsigned int i = 0; i < n; i++) {
		const struct lb_inst_stats *st = lb_inst_worker_stats(ws[i]);

		t.accepted += atomic_load_explicit(&st->accepted,
						   memory_order_relaxed);
		t.responses += atomic_load_explicit(&st->responses,
						    memory_order_relaxed);
		t.errors_4xx += atomic_load_explicit(&st->errors_4xx,
						     memory_order_relaxed);
		t.errors_5xx += atomic_load_explicit(&st->errors_5xx,
						     memory_order_relaxed);
	}
	return t;
}

static void
kick_all(struct lb_inst_worker **ws, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		lb_inst_worker_kick(ws[i]);
}

/*
 * Signals are taken synchronously here, never in a handler: SIGUSR1
 * toggles the stall, SIGTERM and SIGINT drain and end the process.
 */
static void
run(struct lb_inst_srv *srv, struct lb_inst_worker **ws, const sigset_t *set)
{
	const struct lb_inst_conf *conf = srv->conf;
	struct lb_inst_load_sampler *smp = NULL;
	struct timespec ts = {0, SAMPLE_PERIOD_NS};

	if (conf->orca) {
		smp = lb_inst_load_sampler_create(SAMPLE_WINDOW_NS,
						  conf->threads);
		if (smp == NULL)
			fprintf(stderr, PROG ": no ORCA sampler: %s\n",
				strerror(errno));
	}
	for (;;) {
		int sig = sigtimedwait(set, NULL, &ts);

		if (smp != NULL)
			lb_inst_load_sample(
				smp, srv, totals(ws, conf->threads).responses);
		if (sig == SIGUSR1) {
			bool on = !atomic_load(&srv->stall);

			atomic_store(&srv->stall, on);
			fprintf(stderr, PROG ": %s: stall %s\n", conf->name,
				on ? "on" : "off");
			kick_all(ws, conf->threads);
		} else if (sig == SIGTERM || sig == SIGINT) {
			break;
		}
	}
	lb_inst_load_sampler_free(smp);
}

int
main(int argc, char **argv)
{
	struct lb_inst_worker *ws[LB_INST_THREADS_MAX] = {NULL};
	struct lb_inst_conf conf;
	struct lb_inst_srv srv;
	const char *listen_spec;
	struct listen_spec ls;
	char bound[NI_MAXHOST + NI_MAXSERV + 4];
	sigset_t set;
	unsigned int started = 0;
	struct totals t;
	uint64_t t0;
	int rc, status = 1;

	rc = parse_args(argc, argv, &conf, &listen_spec);
	if (rc == 0)
		rc = split_listen(listen_spec, &ls);
	if (rc != 0) {
		usage(rc > 0 ? stdout : stderr);
		return rc > 0 ? 0 : 2;
	}
	/* Before any thread exists, so that all of them inherit it. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	memset(&srv, 0, sizeof(srv));
	srv.conf = &conf;
	srv.listen_fd = open_listener(listen_spec, &ls, bound, sizeof(bound));
	if (srv.listen_fd < 0)
		return 1;
	if (conf.name[0] == '\0') {
		size_t l = strnlen(bound, LB_INST_NAME_MAX);

		memcpy(conf.name, bound, l);
		conf.name[l] = '\0';
	}
	atomic_store(&srv.stall, conf.stall);

	for (unsigned int i = 0; i < conf.threads; i++) {
		ws[i] = lb_inst_worker_create(&srv, i);
		if (ws[i] == NULL) {
			fprintf(stderr, PROG ": worker %u: %s\n", i,
				strerror(errno));
			goto out;
		}
	}
	for (; started < conf.threads; started++) {
		rc = lb_inst_worker_start(ws[started]);
		if (rc != 0) {
			fprintf(stderr, PROG ": worker %u: %s\n", started,
				strerror(-rc));
			goto out;
		}
	}
	fprintf(stderr,
		PROG ": %s listening on %s (threads %u, bench %.3f ms, "
		     "delay %.3f+-%.3f ms, cpu %.0f us, error-rate %g, "
		     "slots %u, max-inflight %u, spl %s, orca %s, stall %s)\n",
		conf.name, bound, conf.threads, conf.bench_ns / 1e6,
		conf.delay_ns / 1e6, conf.jitter_ns / 1e6, conf.cpu_ns / 1e3,
		conf.error_rate, conf.slots, conf.max_inflight,
		conf.spl ? "on" : "off", conf.orca ? "on" : "off",
		conf.stall ? "on" : "off");

	run(&srv, ws, &set);
	status = 0;
out:
	/* Stop accepting first; what is in flight is then finished. */
	atomic_store(&srv.drain, true);
	kick_all(ws, started);
	t0 = lb_inst_mono_ns();
	while (atomic_load(&srv.deaf) < started &&
	       lb_inst_mono_ns() - t0 < 1000000000ull) {
		struct timespec ms = {0, 1000000};

		nanosleep(&ms, NULL);
	}
	close(srv.listen_fd);
	for (unsigned int i = 0; i < started; i++)
		lb_inst_worker_join(ws[i]);
	t = totals(ws, started);
	for (unsigned int i = 0; i < conf.threads; i++)
		lb_inst_worker_free(ws[i]);
	if (status == 0)
		fprintf(stderr,
			PROG ": %s stopped after %llu responses (%llu 4xx, "
			     "%llu 5xx) on %llu connections\n",
			conf.name, (unsigned long long)t.responses,
			(unsigned long long)t.errors_4xx,
			(unsigned long long)t.errors_5xx,
			(unsigned long long)t.accepted);
	return status;
}
