/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests of the health checker: the rise/fall state machine as tables of
 * results; the HTTP status line parser fed whole, byte by byte and split;
 * the registry following a configuration (backends present at the first
 * sync start up, later ones pending) and marking a published table; and
 * real probes over loopback against a TCP listener and a small HTTP
 * server run by this test, with the checker driven by poll(2) as
 * lb-control drives it. Timeouts are tested with injected time.
 *
 * The probes run in a network namespace of the test's own (unshare(2);
 * as a user namespace too when not root): its loopback interface carries
 * the backends' address, since the configuration refuses 127/8 backends.
 * Without namespaces those tests are skipped.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "lb/dpconf.h"
#include "health.h"

#define NS_MS 1000000ull
#define NS_S 1000000000ull
#define LOOPBACK 0xc6336401u /* 198.51.100.1, on lo of our namespace */
/* 2001:db8::5, on lo of our namespace beside ::1, which (as 127/8 for
 * IPv4) the configuration refuses as a backend. */
#define LOOPBACK6 "2001:db8::5"
#define NONE LB_HEALTH_NONE
#define PEND LB_HEALTH_PENDING
#define UP LB_HEALTH_UP
#define DOWN LB_HEALTH_DOWN

/* ---- the state machine ------------------------------------------------- */

struct fsm_row {
	const char *what;
	uint8_t start;
	uint32_t rise, fall;
	const char *results; /* '+' success, '-' failure */
	const char *states;  /* state after each: N P U D */
};

static const struct fsm_row fsm_rows[] = {
	{"up goes down after fall failures", UP, 2, 3, "--+---", "UUUUUD"},
	{"down comes up after rise successes", DOWN, 2, 3, "+-++", "DDDU"},
	{"pending needs rise successes in a row", PEND, 3, 3, "++-+++",
	 "PPPPPU"},
	{"pending does not go down", PEND, 2, 1, "-----", "PPPPP"},
	{"rise 1 fall 1 flips at once", UP, 1, 1, "-+-+", "DUDU"},
	{"unchecked ignores results", NONE, 1, 1, "-+-", "NNN"},
	{"successes while up keep it up", UP, 2, 2, "+++-+-", "UUUUUU"},
};

static uint8_t
state_of(char c)
{
	return c == 'N' ? NONE : c == 'P' ? PEND : c == 'U' ? UP : DOWN;
}

static void
test_fsm(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(fsm_rows) / sizeof(fsm_rows[0]); i++) {
		const struct fsm_row *r = &fsm_rows[i];
		struct lb_health_fsm f = {.state = r->start};

		for (size_t k = 0; r->results[k] != '\0'; k++) {
			uint8_t before = f.state;
			bool changed = lb_health_fsm_result(
				&f, r->results[k] == '+', r->rise, r->fall);

			if (f.state != state_of(r->states[k]) ||
			    changed != (f.state != before))
				fail_msg("%s: after result %zu state %s "
					 "(changed %d), want %c",
					 r->what, k + 1,
					 lb_health_state_name(f.state),
					 changed, r->states[k]);
		}
	}
}

/* ---- the status line --------------------------------------------------- */

struct status_row {
	const char *in;
	int rc;
	unsigned int status;
};

static const struct status_row status_rows[] = {
	{"HTTP/1.1 200 OK\r\n", 1, 200},
	{"HTTP/1.0 503 Service Unavailable\r\n", 1, 503},
	{"HTTP/1.1 204\r\n", 1, 204},
	{"HTTP/1.1 301\n", 1, 301},
	{"HTTP/1.1 20", 0, 0},
	{"HTTP/1.1 200", 0, 0},
	{"", 0, 0},
	{"HTTP/2 200 OK\r\n", -1, 0},
	{"http/1.1 200 OK\r\n", -1, 0},
	{"HTTP/1.1 2000 OK\r\n", -1, 0},
	{"HTTP/1.1 20x OK\r\n", -1, 0},
	{"SSH-2.0-OpenSSH\r\n", -1, 0},
	{"HTTP/1.1  200 OK\r\n", -1, 0},
};

static void
test_status_line(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(status_rows) / sizeof(status_rows[0]);
	     i++) {
		const struct status_row *r = &status_rows[i];
		size_t len = strlen(r->in);
		unsigned int st = 0;
		int rc = lb_health_http_status(r->in, len, &st);

		if (rc != r->rc || (rc == 1 && st != r->status))
			fail_msg("'%s': %d %u, want %d %u", r->in, rc, st,
				 r->rc, r->status);
		/* Every prefix of a good line needs more, or is done; a bad
		 * one is bad once its first wrong byte is in. */
		for (size_t k = 0; k < len; k++) {
			int p = lb_health_http_status(r->in, k, &st);

			if (r->rc == 1 && p == -1)
				fail_msg("'%s' cut at %zu: rejected", r->in,
					 k);
			if (r->rc == 1 && p == 1 && st != r->status)
				fail_msg("'%s' cut at %zu: status %u", r->in,
					 k, st);
		}
	}
}

/* ---- the registry ------------------------------------------------------ */

struct change {
	uint32_t ip;
	uint16_t port;
	enum lb_health_state from, to;
	uint8_t af;
};

static struct change changes[64];
static unsigned int nb_changes;

static void
on_change(void *ctx, const struct lb_conf_svc_key *k,
	  const struct lb_conf_ip *ip, uint16_t port,
	  enum lb_health_state from, enum lb_health_state to)
{
	(void)ctx;
	(void)k;
	assert_true(nb_changes < 64);
	changes[nb_changes++] =
		(struct change){ip->ip, port, from, to, ip->af};
}

static const struct lb_conf_svc_key svc_a = {.proto = LB_CONF_PROTO_TCP, .vip = 0x0a0b0064,
		.port = 80};
static const struct lb_conf_svc_key svc_b = {.proto = LB_CONF_PROTO_TCP, .vip = 0x0a0b0064,
		.port = 8080};

static struct lb_conf *
conf_two(uint8_t check_a)
{
	struct lb_conf *c = lb_conf_create(NULL);
	struct lb_conf_svc_opts o;

	assert_non_null(c);
	lb_conf_svc_opts_default(&o);
	o.check.type = check_a;
	assert_int_equal(lb_conf_svc_add(c, &svc_a, &o, NULL), 0);
	lb_conf_svc_opts_default(&o);
	assert_int_equal(lb_conf_svc_add(c, &svc_b, &o, NULL), 0);
	assert_int_equal(lb_conf_be_add(c, &svc_a, 0x0a0c000b, 80, 1, NULL), 0);
	assert_int_equal(lb_conf_be_add(c, &svc_a, 0x0a0c000c, 80, 1, NULL), 0);
	assert_int_equal(lb_conf_be_add(c, &svc_b, 0x0a0c000b, 80, 1, NULL), 0);
	return c;
}

static enum lb_health_state
st(const struct lb_health *h, const struct lb_conf_svc_key *k, uint32_t ip,
   uint16_t port)
{
	struct lb_health_be_info i;

	if (lb_health_get(h, k, ip, port, &i) != 0)
		return LB_HEALTH_NB;
	return i.state;
}

/* A table as lb-control builds it: the services' slots and backends. */
static void
table_of(const struct lb_conf *c, struct lb_dpconf *d)
{
	memset(d, 0, sizeof(*d));
	d->nb_svc = lb_conf_nb_svcs(c);
	for (uint32_t s = 0; s < d->nb_svc; s++) {
		const struct lb_conf_svc *sv = lb_conf_svc_at(c, s);

		d->svc[s].state = LB_SVC_ACTIVE;
		d->svc[s].proto = sv->key.proto;
		d->svc[s].af = sv->key.af;
		memcpy(d->svc[s].vip6, sv->key.vip6, 16);
		d->svc[s].vip = htonl(sv->key.vip);
		d->svc[s].vport = htons(sv->key.port);
		d->svc[s].nb_be = sv->nb_be;
		for (uint32_t b = 0; b < sv->nb_be; b++) {
			d->svc[s].be[b].af = sv->be[b].af;
			memcpy(d->svc[s].be[b].ip6, sv->be[b].ip6, 16);
			d->svc[s].be[b].ip = htonl(sv->be[b].ip);
			d->svc[s].be[b].port = htons(sv->be[b].port);
			d->svc[s].be[b].state = LB_BE_ACTIVE;
			d->svc[s].be[b].health = LB_BE_HEALTH_DOWN; /* junk */
		}
	}
}

static void
test_registry(void **state)
{
	struct lb_conf *c = conf_two(LB_CONF_CHECK_TCP);
	struct lb_health *h = lb_health_create(c);
	static struct lb_dpconf d;
	struct lb_conf_svc_opts o;

	(void)state;
	assert_non_null(h);
	nb_changes = 0;
	assert_int_equal(lb_health_listen(h, on_change, NULL), 0);
	lb_health_sync(h, 1 * NS_S);
	/* Present at start: up. Unchecked service: none. */
	assert_int_equal(st(h, &svc_a, 0x0a0c000b, 80), UP);
	assert_int_equal(st(h, &svc_a, 0x0a0c000c, 80), UP);
	assert_int_equal(st(h, &svc_b, 0x0a0c000b, 80), NONE);
	assert_int_equal(st(h, &svc_a, 0x0a0c000d, 80), LB_HEALTH_NB);
	/* Added later: pending, not eligible, marked down. */
	assert_int_equal(lb_conf_be_add(c, &svc_a, 0x0a0c000d, 80, 1, NULL), 0);
	assert_int_equal(lb_conf_be_add(c, &svc_b, 0x0a0c000d, 80, 1, NULL), 0);
	table_of(c, &d);
	lb_health_mark(h, &d, 2 * NS_S);
	assert_int_equal(st(h, &svc_a, 0x0a0c000d, 80), PEND);
	assert_false(lb_health_eligible(h, &svc_a, 0x0a0c000d, 80));
	assert_int_equal(d.svc[0].be[0].health, LB_BE_HEALTH_UP);
	assert_int_equal(d.svc[0].be[1].health, LB_BE_HEALTH_UP);
	assert_int_equal(d.svc[0].be[2].health, LB_BE_HEALTH_DOWN);
	assert_false(lb_dpconf_be_eligible(&d.svc[0], 2));
	assert_true(lb_dpconf_be_eligible(&d.svc[0], 1));
	/* The unchecked service's new backend takes flows at once. */
	assert_int_equal(st(h, &svc_b, 0x0a0c000d, 80), NONE);
	assert_int_equal(d.svc[1].be[1].health, LB_BE_HEALTH_UP);
	/* Checks turned on for b: what served goes on serving. */
	lb_conf_svc_opts_default(&o);
	o.check.type = LB_CONF_CHECK_HTTP;
	assert_int_equal(lb_conf_svc_set(c, &svc_b, &o, NULL), 0);
	lb_health_sync(h, 3 * NS_S);
	assert_int_equal(st(h, &svc_b, 0x0a0c000b, 80), UP);
	assert_int_equal(st(h, &svc_b, 0x0a0c000d, 80), UP);
	assert_int_equal(nb_changes, 2);
	assert_int_equal(changes[0].from, NONE);
	assert_int_equal(changes[0].to, UP);
	/* Turned off for a: none, eligible whatever they were. */
	lb_conf_svc_opts_default(&o);
	assert_int_equal(lb_conf_svc_set(c, &svc_a, &o, NULL), 0);
	lb_health_sync(h, 4 * NS_S);
	assert_int_equal(st(h, &svc_a, 0x0a0c000d, 80), NONE);
	assert_true(lb_health_eligible(h, &svc_a, 0x0a0c000d, 80));
	/* Removed backends and services are forgotten. */
	assert_int_equal(lb_conf_be_del(c, &svc_b, 0x0a0c000b, 80, NULL), 0);
	assert_int_equal(lb_conf_svc_del(c, &svc_a, NULL), 0);
	lb_health_sync(h, 5 * NS_S);
	assert_int_equal(st(h, &svc_b, 0x0a0c000b, 80), LB_HEALTH_NB);
	assert_int_equal(st(h, &svc_a, 0x0a0c000c, 80), LB_HEALTH_NB);
	assert_int_equal(st(h, &svc_b, 0x0a0c000d, 80), UP);
	/* Nothing to probe on a fresh sync before its time... */
	assert_int_equal(lb_health_listen(h, on_change, NULL), 0);
	assert_int_equal(lb_health_listen(h, on_change, NULL), 0);
	assert_int_equal(lb_health_listen(h, on_change, NULL), 0);
	assert_int_equal(lb_health_listen(h, on_change, NULL), -ENOSPC);
	lb_health_free(h);
	lb_conf_free(c);
}

/* ---- real probes over loopback ----------------------------------------- */

static uint64_t
mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_S + (uint64_t)ts.tv_nsec;
}

static bool private_net_ok, private_net6_ok;

/* The kernel's struct in6_ifreq (linux/ipv6.h, which clashes with
 * netinet/in.h). */
struct ifreq6 {
	struct in6_addr addr;
	uint32_t prefixlen;
	int ifindex;
};

/* LOOPBACK6 on lo, once lo is up. */
static void
private_net6(void)
{
	struct ifreq6 r = {.prefixlen = 128};
	int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return;
	r.ifindex = (int)if_nametoindex("lo");
	inet_pton(AF_INET6, LOOPBACK6, &r.addr);
	private_net6_ok = r.ifindex > 0 && ioctl(fd, SIOCSIFADDR, &r) == 0;
	close(fd);
}

/* A network namespace of our own with LOOPBACK on its lo. */
static void
private_net(void)
{
	struct ifreq ifr;
	struct sockaddr_in *sa = (struct sockaddr_in *)&ifr.ifr_addr;
	int fd;

	if (unshare(CLONE_NEWNET) != 0 &&
	    unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0)
		return;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(fd, SIOCSIFFLAGS, &ifr) == 0) {
			memset(&ifr, 0, sizeof(ifr));
			snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo:hc");
			sa->sin_family = AF_INET;
			sa->sin_addr.s_addr = htonl(LOOPBACK);
			private_net_ok = ioctl(fd, SIOCSIFADDR, &ifr) == 0;
		}
	}
	close(fd);
	if (private_net_ok)
		private_net6();
}

static int
listener(uint16_t *port, int backlog)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t len = sizeof(sa);
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sa.sin_addr.s_addr = htonl(LOOPBACK);
	sa.sin_port = htons(*port);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, backlog), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	*port = ntohs(sa.sin_port);
	return fd;
}

static int
listener6(uint16_t *port)
{
	struct sockaddr_in6 sa = {.sin6_family = AF_INET6};
	socklen_t len = sizeof(sa);
	int one = 1, fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	inet_pton(AF_INET6, LOOPBACK6, &sa.sin6_addr);
	sa.sin6_port = htons(*port);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 64), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	*port = ntohs(sa.sin6_port);
	return fd;
}

/* Runs the checker like lb-control's loop until backend @p ip : @p port
 * is @p want, for at most @p secs. */
static bool
run_until_ip(struct lb_health *h, const struct lb_conf_svc_key *k,
	     const struct lb_conf_ip *ip, uint16_t port,
	     enum lb_health_state want, unsigned int secs)
{
	uint64_t end = mono() + secs * NS_S;

	while (mono() < end) {
		struct pollfd pfd[LB_HEALTH_MAX_PROBES];
		unsigned int n = lb_health_pollfds(h, pfd, LB_HEALTH_MAX_PROBES);
		int t = lb_health_timeout_ms(h, mono());
		struct lb_health_be_info i;

		poll(pfd, n, t < 0 || t > 50 ? 50 : t);
		lb_health_process(h, pfd, n, mono());
		if (lb_health_get_ip(h, k, ip, port, &i) == 0 &&
		    i.state == want)
			return true;
	}
	return false;
}

/* Runs the checker like lb-control's loop until @p want or @p secs. */
static bool
run_until(struct lb_health *h, const struct lb_conf_svc_key *k, uint16_t port,
	  enum lb_health_state want, unsigned int secs)
{
	struct lb_conf_ip ip = lb_conf_ip4(LOOPBACK);

	return run_until_ip(h, k, &ip, port, want, secs);
}

static struct lb_conf *
conf_one(uint8_t type, const char *path)
{
	struct lb_conf *c = lb_conf_create(NULL);
	struct lb_conf_svc_opts o;

	assert_non_null(c);
	lb_conf_svc_opts_default(&o);
	o.check.type = type;
	o.check.interval_ns = 100 * NS_MS;
	o.check.timeout_ns = 1 * NS_S;
	o.check.rise = 2;
	o.check.fall = 2;
	if (path != NULL)
		snprintf(o.check.path, sizeof(o.check.path), "%s", path);
	assert_int_equal(lb_conf_svc_add(c, &svc_a, &o, NULL), 0);
	return c;
}

static void
test_tcp_probe(void **state)
{
	uint16_t port = 0;
	int lfd;

	if (!private_net_ok)
		skip();
	lfd = listener(&port, 64);
	{
	struct lb_conf *c = conf_one(LB_CONF_CHECK_TCP, NULL);
	struct lb_health *h = lb_health_create(c);
	struct lb_health_be_info i;
	/* One table marked again and again: up_gen carried, as
	 * lb_dpconf_compile() carries it from table to table. */
	static struct lb_dpconf d;

	(void)state;
	lb_health_sync(h, mono());
	/* Added after the start: pending, up once two connects worked. */
	assert_int_equal(lb_conf_be_add(c, &svc_a, LOOPBACK, port, 1, NULL), 0);
	lb_health_sync(h, mono());
	assert_int_equal(st(h, &svc_a, LOOPBACK, port), PEND);
	table_of(c, &d);
	lb_health_mark(h, &d, mono());
	assert_int_equal(d.svc[0].be[0].health, LB_BE_HEALTH_DOWN);
	assert_int_equal(d.svc[0].be[0].up_gen, 0);
	assert_true(run_until(h, &svc_a, port, UP, 10));
	/* Each return to up moves up_gen on once, in the next table. */
	lb_health_mark(h, &d, mono());
	assert_int_equal(d.svc[0].be[0].health, LB_BE_HEALTH_UP);
	assert_int_equal(d.svc[0].be[0].up_gen, 1);
	lb_health_mark(h, &d, mono());
	assert_int_equal(d.svc[0].be[0].up_gen, 1);
	assert_int_equal(lb_health_get(h, &svc_a, LOOPBACK, port, &i), 0);
	assert_true(i.probes >= 2);
	assert_int_equal(i.last, LB_HC_OK);
	assert_true(i.has_last);
	assert_int_equal(i.last_status, 0);
	/* The listener goes: refused, down after two. */
	close(lfd);
	assert_true(run_until(h, &svc_a, port, DOWN, 10));
	assert_int_equal(lb_health_get(h, &svc_a, LOOPBACK, port, &i), 0);
	assert_int_equal(i.last, LB_HC_REFUSED);
	assert_int_equal(i.fail_run, 2);
	lb_health_mark(h, &d, mono());
	assert_int_equal(d.svc[0].be[0].health, LB_BE_HEALTH_DOWN);
	assert_int_equal(d.svc[0].be[0].up_gen, 1);
	/* And back. */
	lfd = listener(&port, 64);
	assert_true(run_until(h, &svc_a, port, UP, 10));
	assert_true(lb_health_stats(h)->changes >= 3);
	lb_health_mark(h, &d, mono());
	assert_int_equal(d.svc[0].be[0].health, LB_BE_HEALTH_UP);
	assert_int_equal(d.svc[0].be[0].up_gen, 2);
	lb_health_free(h);
	lb_conf_free(c);
	close(lfd);
	}
}

/* A small HTTP server: answers each request with the current status. */
struct srv {
	int lfd;
	atomic_uint status;
	atomic_int quit;
	atomic_uint requests;
	char last_req[512];
	pthread_mutex_t mu;
};

static void *
srv_main(void *arg)
{
	struct srv *s = arg;

	while (!atomic_load(&s->quit)) {
		struct pollfd p = {.fd = s->lfd, .events = POLLIN};
		char buf[512], resp[128];
		size_t len = 0;
		int fd, n;

		if (poll(&p, 1, 20) <= 0)
			continue;
		fd = accept(s->lfd, NULL, NULL);
		if (fd < 0)
			continue;
		/* A TCP check's connection sends nothing: do not wait for
		 * it past the quit flag. */
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO,
			   &(struct timeval){.tv_usec = 200000},
			   sizeof(struct timeval));
		while (len < sizeof(buf) - 1) {
			ssize_t r = recv(fd, buf + len, sizeof(buf) - 1 - len,
					 0);

			if (r <= 0)
				break;
			len += (size_t)r;
			buf[len] = '\0';
			if (strstr(buf, "\r\n\r\n") != NULL)
				break;
		}
		buf[len] = '\0';
		pthread_mutex_lock(&s->mu);
		snprintf(s->last_req, sizeof(s->last_req), "%s", buf);
		pthread_mutex_unlock(&s->mu);
		atomic_fetch_add(&s->requests, 1);
		n = snprintf(resp, sizeof(resp),
			     "HTTP/1.1 %u X\r\nContent-Length: 0\r\n\r\n",
			     atomic_load(&s->status));
		if (send(fd, resp, (size_t)n, MSG_NOSIGNAL) < 0)
			n = 0;
		close(fd);
	}
	return NULL;
}

static void
test_http_probe(void **state)
{
	static struct srv s;
	uint16_t port = 0;
	struct lb_conf *c;
	struct lb_health *h;
	struct lb_health_be_info i;
	pthread_t t;
	char host[64];

	(void)state;
	if (!private_net_ok)
		skip();
	s.lfd = listener(&port, 64);
	atomic_store(&s.status, 200);
	atomic_store(&s.quit, 0);
	pthread_mutex_init(&s.mu, NULL);
	assert_int_equal(pthread_create(&t, NULL, srv_main, &s), 0);
	c = conf_one(LB_CONF_CHECK_HTTP, "/healthz?x=1");
	h = lb_health_create(c);
	lb_health_sync(h, mono());
	assert_int_equal(lb_conf_be_add(c, &svc_a, LOOPBACK, port, 1, NULL), 0);
	assert_true(run_until(h, &svc_a, port, UP, 10));
	pthread_mutex_lock(&s.mu);
	snprintf(host, sizeof(host), "\r\nHost: 198.51.100.1:%u\r\n", port);
	assert_non_null(strstr(s.last_req, "GET /healthz?x=1 HTTP/1.1\r\n"));
	assert_non_null(strstr(s.last_req, host));
	assert_non_null(strstr(s.last_req, "\r\nConnection: close\r\n"));
	pthread_mutex_unlock(&s.mu);
	assert_int_equal(lb_health_get(h, &svc_a, LOOPBACK, port, &i), 0);
	assert_int_equal(i.last_status, 200);
	/* 503: outside 200-399, down after fall. */
	atomic_store(&s.status, 503);
	assert_true(run_until(h, &svc_a, port, DOWN, 10));
	assert_int_equal(lb_health_get(h, &svc_a, LOOPBACK, port, &i), 0);
	assert_int_equal(i.last, LB_HC_STATUS);
	assert_int_equal(i.last_status, 503);
	/* 302 passes the default range. */
	atomic_store(&s.status, 302);
	assert_true(run_until(h, &svc_a, port, UP, 10));
	assert_true(atomic_load(&s.requests) >= 6);
	atomic_store(&s.quit, 1);
	pthread_join(t, NULL);
	lb_health_free(h);
	lb_conf_free(c);
	close(s.lfd);
}

static void
srv_start(struct srv *s, pthread_t *t, uint16_t *port, unsigned int status)
{
	*port = 0;
	s->lfd = listener(port, 64);
	atomic_store(&s->status, status);
	atomic_store(&s->quit, 0);
	atomic_store(&s->requests, 0);
	pthread_mutex_init(&s->mu, NULL);
	assert_int_equal(pthread_create(t, NULL, srv_main, s), 0);
}

static void
srv_stop(struct srv *s, pthread_t t)
{
	atomic_store(&s->quit, 1);
	pthread_join(t, NULL);
	close(s->lfd);
}

static int
pool_words(struct lb_conf *c, bool add, const char *name, const char *words)
{
	char buf[256], *argv[32], *save = NULL;
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", words);
	for (char *w = strtok_r(buf, " ", &save); w != NULL && argc < 32;
	     w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	return add ? lb_conf_pool_add_opts(c, &svc_a, name, argc, argv, NULL)
		   : lb_conf_pool_set(c, &svc_a, name, argc, argv, NULL);
}

/*
 * A service checked by tcp, its pool `api` by http on /healthz: the
 * service's backend answers 404 to everything and stays up (a connect
 * is all its check asks); of the pool's two, the one answering 200 comes
 * up, the one answering 404 does not. A change of the pool's check
 * restarts its backends' checks only.
 */
static void
test_pool_checks(void **state)
{
	static struct srv x, y, z; /* x: the service's; y, z: api's */
	struct lb_conf_ip lo = lb_conf_ip4(LOOPBACK);
	pthread_t tx, ty, tz;
	uint16_t px, py, pz;
	struct lb_health_be_info i, ix;
	struct lb_conf *c;
	struct lb_health *h;
	static struct lb_dpconf d;

	(void)state;
	if (!private_net_ok)
		skip();
	srv_start(&x, &tx, &px, 404);
	srv_start(&y, &ty, &py, 200);
	srv_start(&z, &tz, &pz, 404);
	c = conf_one(LB_CONF_CHECK_TCP, NULL);
	assert_int_equal(pool_words(c, true, "api",
				    "check http check-path /healthz"),
			 0);
	assert_int_equal(pool_words(c, true, "static", "sched rr"), 0);
	h = lb_health_create(c);
	lb_health_sync(h, mono());
	assert_int_equal(lb_conf_be_add(c, &svc_a, LOOPBACK, px, 1, NULL), 0);
	assert_int_equal(lb_conf_be_add_pool(c, &svc_a, &lo, py, 1, "api",
					     NULL),
			 0);
	assert_int_equal(lb_conf_be_add_pool(c, &svc_a, &lo, pz, 1, "api",
					     NULL),
			 0);
	assert_true(run_until(h, &svc_a, py, UP, 10));
	assert_true(run_until(h, &svc_a, px, UP, 10));
	/* Two of z's probes over, at most ten seconds: it stays pending. */
	for (int n = 0; n < 10; n++) {
		assert_false(run_until(h, &svc_a, pz, UP, 1));
		assert_int_equal(lb_health_get(h, &svc_a, LOOPBACK, pz, &i),
				 0);
		if (i.probes >= 2)
			break;
	}
	assert_int_equal(i.state, PEND);
	assert_int_equal(i.last, LB_HC_STATUS);
	assert_int_equal(i.last_status, 404);
	assert_true(i.fail_run >= 2);
	pthread_mutex_lock(&y.mu);
	assert_non_null(strstr(y.last_req, "GET /healthz HTTP/1.1\r\n"));
	pthread_mutex_unlock(&y.mu);
	/* The service's backend saw connects, never a request. */
	pthread_mutex_lock(&x.mu);
	assert_null(strstr(x.last_req, "GET "));
	pthread_mutex_unlock(&x.mu);
	table_of(c, &d);
	lb_health_mark(h, &d, mono());
	assert_int_equal(d.svc[0].be[0].health, LB_BE_HEALTH_UP);
	assert_int_equal(d.svc[0].be[1].health, LB_BE_HEALTH_UP);
	assert_int_equal(d.svc[0].be[2].health, LB_BE_HEALTH_DOWN);

	/* api's check to tcp: its backends start their runs again, the
	 * service's goes on where it was. */
	assert_int_equal(lb_health_get(h, &svc_a, LOOPBACK, px, &ix), 0);
	assert_true(ix.ok_run >= 2);
	assert_int_equal(pool_words(c, false, "api", "check tcp"), 0);
	lb_health_sync(h, mono());
	assert_int_equal(lb_health_get(h, &svc_a, LOOPBACK, pz, &i), 0);
	assert_int_equal(i.fail_run, 0);
	assert_int_equal(i.state, PEND);
	assert_int_equal(lb_health_get(h, &svc_a, LOOPBACK, py, &i), 0);
	assert_int_equal(i.ok_run, 0);
	assert_int_equal(i.state, UP);
	assert_int_equal(lb_health_get(h, &svc_a, LOOPBACK, px, &i), 0);
	assert_int_equal(i.ok_run, ix.ok_run);
	assert_int_equal(i.probes, ix.probes);
	assert_true(run_until(h, &svc_a, pz, UP, 10));

	/* Unchecked pool: its backends take flows whatever they answer;
	 * the service's check stays. */
	assert_int_equal(pool_words(c, false, "api", "check none"), 0);
	lb_health_sync(h, mono());
	assert_int_equal(st(h, &svc_a, LOOPBACK, py), NONE);
	assert_int_equal(st(h, &svc_a, LOOPBACK, pz), NONE);
	assert_int_equal(st(h, &svc_a, LOOPBACK, px), UP);
	/* Back to the service's check: checked again, up as they served. */
	assert_int_equal(pool_words(c, false, "api", "check service"), 0);
	lb_health_sync(h, mono());
	assert_int_equal(st(h, &svc_a, LOOPBACK, pz), UP);
	assert_false(run_until(h, &svc_a, pz, DOWN, 1));
	lb_health_free(h);
	lb_conf_free(c);
	srv_stop(&x, tx);
	srv_stop(&y, ty);
	srv_stop(&z, tz);
}

/* A listener that accepts (in its backlog) and never answers: the probe
 * connects, sends, and times out at the injected deadline. */
static void
test_timeout(void **state)
{
	uint16_t port = 0;
	int lfd;

	if (!private_net_ok)
		skip();
	lfd = listener(&port, 64);
	{
	struct lb_conf *c = conf_one(LB_CONF_CHECK_HTTP, NULL);
	struct lb_health *h = lb_health_create(c);
	struct lb_health_be_info i;
	struct pollfd pfd[LB_HEALTH_MAX_PROBES];
	uint64_t t0 = 1000 * NS_S;
	unsigned int n;

	(void)state;
	assert_int_equal(lb_conf_be_add(c, &svc_a, LOOPBACK, port, 1, NULL), 0);
	lb_health_sync(h, t0); /* at start: up */
	/* Its first probe is spread within the interval. */
	assert_true(lb_health_timeout_ms(h, t0) <= 100);
	lb_health_process(h, NULL, 0, t0 + 100 * NS_MS);
	assert_int_equal(lb_health_stats(h)->inflight, 1);
	/* Connected and sent, in a few polls of real time. */
	for (int k = 0; k < 20; k++) {
		n = lb_health_pollfds(h, pfd, LB_HEALTH_MAX_PROBES);
		assert_int_equal(n, 1);
		poll(pfd, n, 10);
		lb_health_process(h, pfd, n, t0 + 200 * NS_MS);
	}
	assert_int_equal(lb_health_stats(h)->inflight, 1);
	assert_int_equal(lb_health_timeout_ms(h, t0 + 200 * NS_MS), 900);
	lb_health_process(h, NULL, 0, t0 + 1100 * NS_MS - 1);
	assert_int_equal(lb_health_stats(h)->inflight, 1);
	lb_health_process(h, NULL, 0, t0 + 1100 * NS_MS);
	assert_int_equal(lb_health_get(h, &svc_a, LOOPBACK, port, &i), 0);
	assert_int_equal(i.last, LB_HC_TIMEOUT);
	assert_int_equal(i.last_latency_ns, 1 * NS_S);
	assert_int_equal(i.state, UP); /* one failure of two */
	assert_int_equal(i.fail_run, 1);
	/* The next probe starts at once (its interval is over) and its
	 * timeout takes it down. */
	lb_health_process(h, NULL, 0, t0 + 1100 * NS_MS);
	assert_int_equal(lb_health_stats(h)->inflight, 1);
	lb_health_process(h, NULL, 0, t0 + 2100 * NS_MS);
	assert_int_equal(lb_health_get(h, &svc_a, LOOPBACK, port, &i), 0);
	assert_int_equal(i.state, DOWN);
	assert_int_equal(i.probes, 2);
	assert_int_equal(i.failures, 2);
	lb_health_free(h);
	lb_conf_free(c);
	close(lfd);
	}
}

/* The checker over IPv6: an IPv6 service whose backends are an IPv6
 * HTTP server (fnat66) and an IPv4 TCP listener (fnat64), each probed in
 * its own family; the IPv6 one's Host header bracketed; the health of
 * both written into a table. */
static void
test_ip6_probe(void **state)
{
	static struct srv s;
	static struct lb_dpconf d;
	struct lb_conf_ip vip = {.af = LB_CONF_AF_INET6};
	struct lb_conf_ip b6 = {.af = LB_CONF_AF_INET6};
	struct lb_conf_ip b4 = lb_conf_ip4(LOOPBACK);
	struct lb_health_be_info i;
	struct lb_conf_svc_key k, k4;
	struct lb_conf_svc_opts o;
	uint16_t port = 0, port4 = 0;
	struct lb_conf *c;
	struct lb_health *h;
	pthread_t t;
	char host[80];
	int lfd4;

	(void)state;
	if (!private_net6_ok)
		skip();
	inet_pton(AF_INET6, "2001:db8:ff::10", vip.ip6);
	inet_pton(AF_INET6, LOOPBACK6, b6.ip6);
	k = lb_conf_svc_key_of(LB_CONF_PROTO_TCP, &vip, 80);
	k4 = (struct lb_conf_svc_key){.proto = LB_CONF_PROTO_TCP,
				      .vip = 0xc0000264, .port = 80};
	s.lfd = listener6(&port);
	lfd4 = listener(&port4, 64);
	atomic_store(&s.status, 200);
	atomic_store(&s.quit, 0);
	pthread_mutex_init(&s.mu, NULL);
	assert_int_equal(pthread_create(&t, NULL, srv_main, &s), 0);
	c = lb_conf_create(NULL);
	assert_non_null(c);
	lb_conf_svc_opts_default(&o);
	o.check.type = LB_CONF_CHECK_HTTP;
	o.check.interval_ns = 100 * NS_MS;
	o.check.timeout_ns = 1 * NS_S;
	o.check.rise = 2;
	o.check.fall = 2;
	assert_int_equal(lb_conf_svc_add(c, &k, &o, NULL), 0);
	h = lb_health_create(c);
	nb_changes = 0;
	assert_int_equal(lb_health_listen(h, on_change, NULL), 0);
	lb_health_sync(h, mono());
	assert_int_equal(lb_conf_be_add_ip(c, &k, &b6, port, 1, NULL), 0);
	assert_true(run_until_ip(h, &k, &b6, port, UP, 10));
	pthread_mutex_lock(&s.mu);
	snprintf(host, sizeof(host), "\r\nHost: [%s]:%u\r\n", LOOPBACK6, port);
	assert_non_null(strstr(s.last_req, host));
	pthread_mutex_unlock(&s.mu);
	assert_int_equal(lb_health_get_ip(h, &k, &b6, port, &i), 0);
	assert_int_equal(i.last_status, 200);
	/* Only the IPv6 backend: an IPv4 one on the same bits is another. */
	assert_int_equal(lb_health_get(h, &k, 0, port, &i), -ENOENT);
	/* An IPv4 service beside it, its backend on the same port bits
	 * checked over IPv4 (TCP: the listener never answers HTTP). */
	o.check.type = LB_CONF_CHECK_TCP;
	assert_int_equal(lb_conf_svc_set(c, &k, &o, NULL), 0);
	assert_int_equal(lb_conf_svc_add(c, &k4, &o, NULL), 0);
	assert_int_equal(lb_conf_be_add_ip(c, &k4, &b4, port4, 1, NULL), 0);
	assert_true(run_until_ip(h, &k4, &b4, port4, UP, 10));
	assert_true(run_until_ip(h, &k, &b6, port, UP, 10));
	table_of(c, &d);
	lb_health_mark(h, &d, mono());
	assert_int_equal(d.svc[0].be[0].health, LB_BE_HEALTH_UP);
	assert_int_equal(d.svc[1].be[0].health, LB_BE_HEALTH_UP);
	/* The IPv6 server goes: refused, down after two; the other stays. */
	atomic_store(&s.quit, 1);
	pthread_join(t, NULL);
	close(s.lfd);
	assert_true(run_until_ip(h, &k, &b6, port, DOWN, 10));
	assert_int_equal(lb_health_get_ip(h, &k, &b6, port, &i), 0);
	assert_int_equal(i.last, LB_HC_REFUSED);
	assert_int_equal(lb_health_get_ip(h, &k4, &b4, port4, &i), 0);
	assert_int_equal(i.state, UP);
	lb_health_mark(h, &d, mono());
	assert_int_equal(d.svc[0].be[0].health, LB_BE_HEALTH_DOWN);
	assert_int_equal(d.svc[1].be[0].health, LB_BE_HEALTH_UP);
	/* Listeners are told which family: IPv6 pending -> up -> down. */
	assert_true(nb_changes >= 3);
	assert_int_equal(changes[0].af, LB_CONF_AF_INET6);
	assert_int_equal(changes[0].to, UP);
	assert_int_equal(changes[nb_changes - 1].af, LB_CONF_AF_INET6);
	assert_int_equal(changes[nb_changes - 1].to, DOWN);
	lb_health_free(h);
	lb_conf_free(c);
	close(lfd4);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fsm),
		cmocka_unit_test(test_status_line),
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_tcp_probe),
		cmocka_unit_test(test_http_probe),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_ip6_probe),
		cmocka_unit_test(test_pool_checks),
	};

	private_net();
	if (!private_net_ok)
		fprintf(stderr, "health_test: no network namespace of our own; "
				"the probe tests are skipped\n");
	else if (!private_net6_ok)
		fprintf(stderr, "health_test: no IPv6 address on lo; the "
				"IPv6 probe test is skipped\n");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
