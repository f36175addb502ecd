/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-control: the control-plane process. A DPDK secondary process of
 * lb-dataplane: it keeps the desired configuration (state file), is the
 * only writer of the dataplane's tables, merges the workers' feedback,
 * and serves lbctl's API on a Unix socket and Prometheus' /metrics.
 *
 * One thread does everything, driven by poll(2): API requests run one at
 * a time and the merged view needs no lock.
 *
 * Fail static: when lb-control stops, the dataplane keeps forwarding with
 * the last table. When the dataplane goes away, lb-control executes
 * itself again to attach to the next one and publish its state there.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/close_range.h>

#include <rte_eal.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_log.h>

#include "apisrv_priv.h"
#include "httpd_priv.h"
#include "api.h"
#include "autoscale.h"
#include "ctlcmd.h"
#include "govview.h"
#include "health.h"
#include "metrics.h"
#include "orch.h"
#include "privs.h"
#include "lb/rtlock.h"
#include "lb/sched.h"
#include "statefile.h"
#include "publish_priv.h"
#include "scale_priv.h"
#ifdef LB_WITH_STEER
#include "steerctl.h"
#endif

#define DEF_SOCKET "/run/sluice/lb-control.sock"
#define DEF_STATE "/var/lib/sluice/state.conf"
#define DEF_METRICS "127.0.0.1:9470"
#define DEF_TICK_MS 100u
#define DEF_SOCK_MODE 0600u
/* Times lb-control executed itself while waiting for a dataplane. */
#define WAITS_ENV "LB_CONTROL_WAITS"
/* Re-executions after a dataplane went away, for lb_control_attaches. */
#define ATTACHES_ENV "LB_CONTROL_ATTACHES"
#define SLOW_NS 1000000000ull /* retries and slot collection: every 1 s */
#define STATE_HEADER                                                           \
	"# lb-control state: the desired configuration, in lbctl's command\n"  \
	"# syntax (see 'lbctl save'). Written by lb-control; edit with\n"      \
	"# lbctl, or stop lb-control first.\n"

struct opts {
	const char *socket;
	const char *state;
	const char *metrics; /* NULL: off */
	const char *redis;   /* cluster tier HOST:PORT, NULL: none */
	unsigned int tick_ms;
	mode_t sock_mode;
	gid_t sock_gid;	   /* (gid_t)-1: lb-control's own */
	uint64_t keep_caps; /* capabilities kept after start-up */
	bool keep_all;	   /* --keep-caps all: drop nothing */
	bool markdown;
	bool cmd_table;	      /* --cmd-table: the registry as C source */
	const char *acl_auto; /* --acl-auto, NULL: off */
};

struct ctl_main {
	struct opts o;
	char **argv0; /* the command line as given, for executing again */
	struct lb_ctl ctl;
	struct lb_cmd_reg *reg;
	struct lb_conf *backup; /* the configuration before a request */
	void *as_backup;	/* the autoscaler's, likewise */
	uint64_t as_gen0;
	struct lb_pub pub;
	struct lb_scale *scale; /* the autoscaler's runtime */
	struct lb_apisrv *api;
	struct lb_httpd *httpd;
	struct lb_cluster *cluster; /* admission's Redis tier, or NULL */
	struct lb_steerctl *steer; /* the XDP steering maps' side */
	int rt_lock;  /* the runtime's attach lock while attaching, or -1 */
	bool dirty;   /* desired configuration not published yet */
	bool dp_gone; /* the dataplane went away: start again */
	bool health_changed; /* a backend's health changed: publish */
	uint64_t next_slow_ns;
};

static volatile sig_atomic_t quit;

static void
on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
logf_(const char *fmt, ...)
{
	va_list ap;

	fputs("lb-control: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int
sched_known(const char *name)
{
	return lb_sched_find(name) != NULL;
}

/* ---- command line ---- */

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: lb-control [EAL options] -- [options]\n"
		"       lb-control --markdown\n"
		"       lb-control --cmd-table\n"
		"\n"
		"Attaches to lb-dataplane as a DPDK secondary process (EAL "
		"options as the\n"
		"dataplane's: the same --file-prefix; typically "
		"--file-prefix P --no-pci -l 0).\n"
		"\n"
		"options:\n"
		"  --socket PATH       API socket (default %s)\n"
		"  --socket-mode MODE  its permissions, octal (default "
		"%04o: owner only)\n"
		"  --socket-group GROUP\n"
		"                      the socket's group, name or number (with "
		"--socket-mode 0660)\n"
		"  --keep-caps LIST|default|all\n"
		"                      capabilities kept once serving, e.g. "
		"net_admin,sys_admin\n"
		"                      (default: see docs/security.md); all "
		"drops nothing\n"
		"  --state FILE        state file (default %s)\n"
		"  --metrics ADDR:PORT|off\n"
		"                      Prometheus endpoint /metrics (default "
		"%s)\n"
		"  --tick MS           feedback and health period, 1..10000 "
		"(default %u)\n"
		"  --redis HOST:PORT   Redis of the admission cluster tier "
		"(services with\n"
		"                      admit-cluster open|closed)\n"
		"  --acl-auto REJECTS/WINDOW[,ttl=DURATION][,max=N]\n"
		"                      deny sources the admission control "
		"keeps rejecting\n"
		"                      in the NIC's driver (XDP; default "
		"off)\n"
		"  --markdown          print the command reference in "
		"Markdown and exit\n"
		"  --cmd-table         print the commands and their help as "
		"C source (lbctl's\n"
		"                      built-in help) and exit\n"
		"  -h, --help          this text\n",
		DEF_SOCKET, DEF_SOCK_MODE, DEF_STATE, DEF_METRICS, DEF_TICK_MS);
}

static int
parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{"socket", required_argument, NULL, 's'},
		{"socket-mode", required_argument, NULL, 'M'},
		{"socket-group", required_argument, NULL, 'G'},
		{"keep-caps", required_argument, NULL, 'C'},
		{"state", required_argument, NULL, 'S'},
		{"metrics", required_argument, NULL, 'm'},
		{"tick", required_argument, NULL, 't'},
		{"redis", required_argument, NULL, 'R'},
		{"markdown", no_argument, NULL, 'D'},
		{"cmd-table", no_argument, NULL, 'T'},
		{"acl-auto", required_argument, NULL, 'A'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	char err[128];
	unsigned long v;
	char *end;
	int c;

	optind = 1;
	opterr = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 's':
			o->socket = optarg;
			break;
		case 'S':
			o->state = optarg;
			break;
		case 'm':
			o->metrics = strcmp(optarg, "off") == 0 ? NULL : optarg;
			break;
		case 'M':
			errno = 0;
			v = strtoul(optarg, &end, 8);
			if (errno != 0 || *optarg == '\0' || *end != '\0' ||
			    v > 0777) {
				logf_("--socket-mode: '%s' is not an octal "
				      "mode 0..0777",
				      optarg);
				return -EINVAL;
			}
			o->sock_mode = (mode_t)v;
			break;
		case 'G':
		case 'C':
			o->keep_all = c == 'C' && strcmp(optarg, "all") == 0;
			if (o->keep_all)
				break;
			if ((c == 'G' ? lb_privs_group(optarg, &o->sock_gid,
						       err, sizeof(err))
				      : lb_privs_parse(optarg, &o->keep_caps,
						       err, sizeof(err))) != 0) {
				logf_("--%s: %s",
				      c == 'G' ? "socket-group" : "keep-caps",
				      err);
				return -EINVAL;
			}
			break;
		case 't':
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno != 0 || *optarg == '\0' || *end != '\0' ||
			    v < 1 || v > 10000) {
				logf_("--tick: '%s' is not a number of ms in "
				      "1..10000",
				      optarg);
				return -EINVAL;
			}
			o->tick_ms = (unsigned int)v;
			break;
		case 'A':
			o->acl_auto = optarg;
			break;
		case 'D':
			o->markdown = true;
			break;
		case 'T':
			o->cmd_table = true;
			break;
		case 'R':
			o->redis = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_SUCCESS);
		default:
			return -EINVAL;
		}
	}
	if (optind != argc) {
		logf_("unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

/*
 * The EAL's arguments: the ones given, and --proc-type=secondary unless
 * given. lb-control must never become a primary: it would start a DPDK
 * runtime of its own instead of attaching to the dataplane's.
 */
static char **
eal_args(int argc, char **argv, int *eargc)
{
	char **e = calloc((size_t)argc + 2, sizeof(*e));
	bool typed = false;
	int n = 0;

	if (e == NULL)
		return NULL;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (strncmp(a, "--proc-type", 11) == 0) {
			const char *t = a[11] == '='   ? a + 12
					: i + 1 < argc ? argv[i + 1]
						       : "";

			if (strcmp(t, "secondary") != 0) {
				logf_("lb-control runs as a DPDK secondary "
				      "process, not --proc-type %s",
				      t);
				free(e);
				return NULL;
			}
			typed = true;
		}
		e[n++] = argv[i];
	}
	if (!typed)
		e[n++] = "--proc-type=secondary";
	e[n] = NULL;
	*eargc = n;
	return e;
}

/*
 * Waits until a dataplane is ready for secondaries and takes the attach
 * lock (lb/rtlock.h): initialising the EAL against a primary that is
 * gone or still starting reads a half-written runtime and holds its
 * files, so that the new dataplane cannot start. False if asked to stop
 * meanwhile.
 */
static bool
wait_primary(struct ctl_main *m, const char *dir)
{
	unsigned int polls = 0;

	for (;;) {
		m->rt_lock = lb_rt_attach_lock(dir);
		if (m->rt_lock >= 0)
			return true;
		/* Once, then every minute: a dataplane may be down for
		 * long, and that is not news every second. */
		if (polls % 300 == 0)
			logf_("waiting for lb-dataplane (none is ready in %s; "
			      "a dataplane started with --no-shconf or "
			      "--in-memory has no secondaries)",
			      dir);
		if (quit)
			return false;
		polls++;
		usleep(200000);
	}
}

/* ---- executing again ---- */

static unsigned long
env_count(const char *name)
{
	const char *v = getenv(name);

	return v != NULL ? strtoul(v, NULL, 10) : 0;
}

/*
 * Starts over as a new process image with the original command line:
 * the EAL cannot be initialised twice, and a new dataplane is a new DPDK
 * runtime. Descriptors of this one (hugepage files among them) must not
 * leak into the next.
 *
 * No rte_eal_cleanup(): the runtime is gone, and its shared
 * configuration may already be a new dataplane's, half-written (the
 * EAL's memory detach divides by its page sizes). The new image drops
 * every mapping; the primary removes the multi-process socket left.
 */
static void __attribute__((noreturn))
exec_again(char **argv0, const char *counter)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%lu", env_count(counter) + 1);
	setenv(counter, buf, 1);
	fflush(NULL);
	/* Closed by the exec, not now: the EAL's threads still poll some of
	 * them (its interrupt thread panics on a closed epoll descriptor),
	 * and they only stop when the exec ends them. */
	if (close_range(3, ~0u, CLOSE_RANGE_CLOEXEC) != 0)
		for (int fd = 3; fd < 65536; fd++)
			fcntl(fd, F_SETFD, FD_CLOEXEC);
	execv("/proc/self/exe", argv0);
	logf_("cannot execute again: %s", strerror(errno));
	exit(EXIT_FAILURE);
}

/* ---- XDP steering (control/steer/steerctl.c) ---- */

#ifdef LB_WITH_STEER
static void
steer_feed(void *arg, const struct lb_fb *r, unsigned int n)
{
	struct ctl_main *m = arg;

	lb_steerctl_feed(m->steer, r, n, lb_view_conf(m->ctl.view),
			 lb_steer_now_ns());
}

static int
steer_setup(struct ctl_main *m)
{
	struct lb_acl_auto_conf ac = {0};
	char err[LB_CMD_ERR_MAX];

	if (m->o.acl_auto != NULL &&
	    lb_acl_auto_parse(m->o.acl_auto, &ac, err, sizeof(err)) != 0) {
		logf_("--acl-auto: %s", err);
		return -EINVAL;
	}
	m->steer = lb_steerctl_create(&ac, &m->ctl.data);
	if (m->steer == NULL)
		return -errno;
	m->ctl.xdp_stats = lb_steerctl_stats;
	m->ctl.xdp = m->steer;
	m->pub.fb_hook = steer_feed;
	m->pub.fb_arg = m;
	return 0;
}

/* The maps the dataplane pinned, and their rules for the table in
 * force: a restarted lb-control may have nothing new to publish. */
static void
steer_attach(struct ctl_main *m)
{
	const struct lb_shm *shm = m->pub.shm;
	int rc;

	rc = lb_steerctl_attach(m->steer, shm->steer_pin, shm->steer_host,
				RTE_MIN(shm->steer_nb_host,
					LB_SHM_STEER_HOST_MAX));
	if (rc != 0)
		logf_("cannot open the XDP steering maps in %s: %s",
		      shm->steer_pin, strerror(-rc));
	else if (lb_steerctl_attached(m->steer))
		logf_("XDP steering maps in %s", shm->steer_pin);
	if (lb_steerctl_sync(m->steer, lb_view_conf(m->ctl.view)) != 0)
		logf_("cannot sync the XDP steering rules");
}

static void
steer_sync(struct ctl_main *m, const struct lb_dpconf *d)
{
	if (lb_steerctl_sync(m->steer, d) != 0)
		logf_("cannot sync the XDP steering rules");
}

static void
steer_tick(struct ctl_main *m)
{
	lb_steerctl_tick(m->steer, lb_steer_now_ns());
}

static void
steer_free(struct ctl_main *m)
{
	lb_steerctl_free(m->steer);
	m->steer = NULL;
}
#else
static int
steer_setup(struct ctl_main *m)
{
	if (m->o.acl_auto == NULL)
		return 0;
	logf_("--acl-auto: built without XDP steering (bpf/)");
	return -ENOTSUP;
}

static void
steer_attach(struct ctl_main *m)
{
	(void)m;
}

static void
steer_sync(struct ctl_main *m, const struct lb_dpconf *d)
{
	(void)m;
	(void)d;
}

static void
steer_tick(struct ctl_main *m)
{
	(void)m;
}

static void
steer_free(struct ctl_main *m)
{
	(void)m;
}
#endif

/* ---- the desired configuration ---- */

static int
save_state(struct ctl_main *m, struct lb_cmd_out *out)
{
	char err[LB_CMD_ERR_MAX];
	struct lb_cmd_out t;
	int rc;

	lb_cmd_out_init(&t);
	rc = lb_cmd_printf(&t, "%s", STATE_HEADER);
	if (rc == 0)
		rc = lb_conf_save(m->ctl.conf, &t);
	if (rc == 0)
		rc = lb_as_save(m->ctl.as, &t);
	if (rc == 0)
		rc = lb_statefile_write(m->o.state, lb_cmd_out_text(&t), t.len,
					err, sizeof(err));
	else
		snprintf(err, sizeof(err), "cannot format the state: %s",
			 strerror(-rc));
	lb_cmd_out_free(&t);
	if (rc != 0) {
		m->ctl.ctr.state_errors++;
		return lb_cmd_error(out, rc, "%s; nothing changed", err);
	}
	m->ctl.ctr.state_writes++;
	return 0;
}

/*
 * Makes the desired configuration the dataplane's table, saving it first
 * when @p save is set: a change that cannot be saved is not made, and one
 * saved but not yet published is published from the state file by the
 * next lb-control.
 */
static int
publish(struct ctl_main *m, bool save, struct lb_cmd_out *out)
{
	char err[LB_CMD_ERR_MAX];
	struct lb_dpconf *d = NULL;
	int64_t ns;
	int rc;

	rc = lb_pub_build(&m->pub, m->ctl.conf, &d, err, sizeof(err));
	if (rc < 0) {
		m->ctl.ctr.publish_errors++;
		return lb_cmd_error(out, rc,
				    "the dataplane cannot take this "
				    "configuration: %s",
				    err);
	}
	if (save) {
		rc = save_state(m, out);
		if (rc != 0) {
			lb_pub_discard(d);
			return rc;
		}
	}
	m->dirty = false;
	if (d == NULL)
		return 0;
	ns = lb_pub_commit(&m->pub, d);
	if (ns == -EINTR)
		return 0; /* published and saved; stopping before the grace */
	if (ns < 0) {
		/* Saved: the next dataplane gets it from the state file. */
		m->dp_gone = true;
		return 0;
	}
	m->ctl.ctr.publishes++;
	m->ctl.ctr.grace_ns_last = (uint64_t)ns;
	if ((uint64_t)ns > m->ctl.ctr.grace_ns_max)
		m->ctl.ctr.grace_ns_max = (uint64_t)ns;
	lb_view_sync(m->ctl.view);
	steer_sync(m, d);
	return 0;
}

/* The autoscaler's settings before a request, to undo it. */
static void
as_backup(struct ctl_main *m)
{
	free(m->as_backup);
	m->as_backup = lb_as_snapshot(m->ctl.as);
	m->as_gen0 = lb_as_generation(m->ctl.as);
}

/* A request changed the configuration (or failed): publish, or undo. */
static int
finish_change(struct ctl_main *m, uint64_t gen0, int rc, struct lb_cmd_out *out)
{
	if (rc == 0 && lb_conf_generation(m->ctl.conf) != gen0)
		rc = publish(m, true, out);
	else if (rc == 0 && lb_as_generation(m->ctl.as) != m->as_gen0)
		rc = save_state(m, out);
	if (rc != 0 && lb_conf_generation(m->ctl.conf) != gen0)
		lb_conf_copy(m->ctl.conf, m->backup);
	if (rc != 0)
		lb_as_restore(m->ctl.as, m->as_backup);
	return rc;
}

static int
api_exec(void *ctx, int argc, char **argv, struct lb_cmd_out *out,
	 json_t **data)
{
	struct ctl_main *m = ctx;
	uint64_t gen0 = lb_conf_generation(m->ctl.conf);
	int rc;

	m->ctl.ctr.api_requests++;
	lb_conf_copy(m->backup, m->ctl.conf);
	as_backup(m);
	rc = lb_cmd_exec(m->reg, argc, argv, out);
	*data = m->ctl.data;
	m->ctl.data = NULL;
	rc = finish_change(m, gen0, rc, out);
	if (rc != 0) {
		m->ctl.ctr.api_errors++;
		json_decref(*data);
		*data = NULL;
	}
	return rc;
}

static int
api_apply(void *ctx, const char *text, size_t len, const char *name,
	  struct lb_cmd_out *out)
{
	struct ctl_main *m = ctx;
	uint64_t gen0 = lb_conf_generation(m->ctl.conf);
	FILE *f;
	int rc;

	m->ctl.ctr.api_requests++;
	if (len == 0)
		return 0;
	f = fmemopen((void *)(uintptr_t)text, len, "r");
	if (f == NULL) {
		m->ctl.ctr.api_errors++;
		return lb_cmd_error(out, -errno, "%s: %s", name,
				    strerror(errno));
	}
	/* Every line on the configuration, then one table for all of
	 * them; the first failing line undoes the lot. */
	lb_conf_copy(m->backup, m->ctl.conf);
	as_backup(m);
	rc = lb_cmd_apply_stream(m->reg, f, name, out, NULL);
	fclose(f);
	json_decref(m->ctl.data);
	m->ctl.data = NULL;
	rc = finish_change(m, gen0, rc, out);
	if (rc != 0)
		m->ctl.ctr.api_errors++;
	return rc;
}

static const struct lb_api_ops api_ops = {
	.exec = api_exec,
	.apply = api_apply,
};

static int
metrics_body(void *ctx, struct lb_cmd_out *out)
{
	struct ctl_main *m = ctx;

	return lb_metrics_format(&m->ctl, out);
}

/* The autoscaler changed the backends or its settings. */
static int
scale_commit(void *ctx)
{
	struct ctl_main *m = ctx;
	struct lb_cmd_out out;
	int rc;

	lb_cmd_out_init(&out);
	rc = publish(m, true, &out);
	if (rc != 0) {
		/* Published at the next slow tick. */
		m->dirty = true;
		logf_("%s", lb_cmd_out_errmsg(&out));
	}
	lb_cmd_out_free(&out);
	return rc;
}

static uint64_t
as_clock(void *arg)
{
	(void)arg;
	return mono_ns();
}

/* ---- health checks ---- */

/* lb_pub's hook: the health of every backend, in each table built. */
static void
health_mark(void *ctx, struct lb_dpconf *d)
{
	struct ctl_main *m = ctx;

	lb_health_mark(m->ctl.health, d, mono_ns());
}

static void
on_health(void *ctx, const struct lb_conf_svc_key *k, uint32_t ip,
	  uint16_t port, enum lb_health_state from, enum lb_health_state to)
{
	struct ctl_main *m = ctx;
	char s[LB_CTLCMD_SVC_STRLEN], a[LB_CMD_ADDR_STRLEN];
	struct lb_health_be_info i;

	if (lb_health_get(m->ctl.health, k, ip, port, &i) != 0)
		i.has_last = false;
	logf_("health: %s %s %s -> %s%s%s",
	      lb_ctlcmd_svc_str(k->proto, k->vip, k->port, s),
	      lb_cmd_fmt_ipv4_port(ip, port, a), lb_health_state_name(from),
	      lb_health_state_name(to), i.has_last ? ", last check " : "",
	      i.has_last ? lb_health_why_name(i.last) : "");
	m->health_changed = true;
}

/* The probes' turn in the loop; a change of health is published now
 * (not saved: health is not configuration). */
static void
health_run(struct ctl_main *m, const struct pollfd *pfd, unsigned int n)
{
	struct lb_cmd_out out;

	lb_health_process(m->ctl.health, pfd, n, mono_ns());
	if (!m->health_changed)
		return;
	m->health_changed = false;
	lb_cmd_out_init(&out);
	if (publish(m, false, &out) != 0) {
		logf_("health: %s; retrying", lb_cmd_out_errmsg(&out));
		m->dirty = true;
	}
	lb_cmd_out_free(&out);
}

/*
 * The registry: every command table the modules linked in registered
 * (LB_CMD_REGISTER()), each given the context it names.
 */
static int
registry_build(struct ctl_main *m)
{
	const struct lb_cmd_bind binds[] = {
		{"conf", m->ctl.conf},
		{"ctl", &m->ctl},
		{"as", m->ctl.as},
#ifdef LB_WITH_STEER
		{"steer", m->steer},
#endif
	};
	const char *unbound;
	int rc;

	rc = lb_cmd_reg_build(m->reg, binds, sizeof(binds) / sizeof(binds[0]),
			      &unbound);
	if (rc == 0 && unbound != NULL) {
		logf_("command table '%s' needs a context lb-control does "
		      "not give",
		      unbound);
		rc = -ENOENT;
	}
	return rc;
}

static int
ctl_setup(struct ctl_main *m)
{
	int rc;

	m->reg = lb_cmd_reg_create();
	m->ctl.conf = lb_conf_create(sched_known);
	m->backup = lb_conf_create(sched_known);
	if (m->reg == NULL || m->ctl.conf == NULL || m->backup == NULL)
		return -ENOMEM;
	lb_conf_set_sched_names(m->ctl.conf, lb_sched_names);
	lb_conf_set_sched_names(m->backup, lb_sched_names);
	m->ctl.as = lb_as_create(m->ctl.conf);
	if (m->ctl.as == NULL)
		return -ENOMEM;
	lb_as_set_data_slot(m->ctl.as, &m->ctl.data);
	lb_as_set_clock(m->ctl.as, as_clock, NULL);
	lb_as_set_driver_names(m->ctl.as, lb_orch_names);
	m->ctl.health = lb_health_create(m->ctl.conf);
	if (m->ctl.health == NULL ||
	    lb_health_listen(m->ctl.health, on_health, m) != 0)
		return -ENOMEM;
	m->pub.mark = health_mark;
	m->pub.mark_ctx = m;
	m->scale = lb_scale_create(&m->ctl, scale_commit, m);
	if (m->scale == NULL)
		return -ENOMEM;
	rc = steer_setup(m);
	return rc == 0 ? registry_build(m) : rc;
}

/* Runs a whole configuration text into the (empty) configuration. */
static int
load_text(struct ctl_main *m, const char *text, size_t len, const char *name)
{
	struct lb_cmd_out out;
	FILE *f;
	int rc = 0;

	if (len == 0)
		return 0;
	f = fmemopen((void *)(uintptr_t)text, len, "r");
	if (f == NULL)
		return -errno;
	lb_cmd_out_init(&out);
	rc = lb_cmd_apply_stream(m->reg, f, name, &out, NULL);
	fclose(f);
	if (rc != 0)
		logf_("%s", lb_cmd_out_errmsg(&out));
	lb_cmd_out_free(&out);
	json_decref(m->ctl.data);
	m->ctl.data = NULL;
	return rc;
}

/* The state file, or the text of the dataplane's --config. */
static int
load_desired(struct ctl_main *m)
{
	const struct lb_shm *shm = m->pub.shm;
	char err[LB_CMD_ERR_MAX];
	size_t len = 0;
	char *text;
	int rc;

	rc = lb_statefile_read(m->o.state, &text, &len, err, sizeof(err));
	if (rc == 0) {
		rc = load_text(m, text, len, m->o.state);
		free(text);
		if (rc != 0) {
			logf_("fix or remove %s: it is lb-control's state "
			      "file",
			      m->o.state);
			return rc;
		}
		logf_("desired configuration from %s: %u service(s)",
		      m->o.state, lb_conf_nb_svcs(m->ctl.conf));
		return 0;
	}
	if (rc != -ENOENT) {
		logf_("%s", err);
		return rc;
	}
	len = shm->boot_conf_len < sizeof(shm->boot_conf)
		      ? shm->boot_conf_len
		      : sizeof(shm->boot_conf) - 1;
	rc = load_text(m, shm->boot_conf, len, "dataplane --config");
	if (rc == 0)
		logf_("no state file %s: adopting the dataplane's --config "
		      "(%u service(s))",
		      m->o.state, lb_conf_nb_svcs(m->ctl.conf));
	return rc;
}

/* ---- attach ---- */

/*
 * The dataplane's clock, which stamps feedback records: the TSC scaled as
 * its workers scale it (shm tsc_hz), so that SPL ages compare like with
 * like.
 */
static uint64_t
dp_clock(void *arg)
{
	const struct lb_shm *shm = arg;

	if (shm->tsc_hz == 0)
		return 0;
	return (uint64_t)((double)rte_rdtsc() * (1e9 / (double)shm->tsc_hz));
}

static int
attach(struct ctl_main *m)
{
	char err[256];
	bool said = false;
	int rc;

	for (;;) {
		m->pub.stop = &quit;
		rc = lb_pub_attach(&m->pub, err, sizeof(err));
		if (rc == 0)
			break;
		if (rc != -EAGAIN) {
			logf_("%s", err);
			return rc;
		}
		if (!said)
			logf_("%s; waiting", err);
		said = true;
		/* A dataplane starting meanwhile must not wait for this. */
		lb_rt_unlock(m->rt_lock);
		m->rt_lock = -1;
		if (rte_eal_primary_proc_alive(NULL) == 0) {
			logf_("the dataplane went away");
			exec_again(m->argv0, WAITS_ENV);
		}
		if (quit)
			return -EINTR;
		sleep(1);
	}
	m->ctl.ctr.attaches = env_count(ATTACHES_ENV) + 1;
	m->ctl.view = lb_view_create(m->pub.shm);
	if (m->ctl.view == NULL)
		return -ENOMEM;
	lb_view_set_clock(m->ctl.view, dp_clock,
			  (void *)(uintptr_t)m->pub.shm);
	lb_view_sync(m->ctl.view);
	steer_attach(m);
	logf_("attached to the dataplane (pid %d, %u worker(s), table "
	      "generation %" PRIu64 ")",
	      m->pub.dp_pid, m->pub.shm->nb_workers,
	      lb_view_conf(m->ctl.view)->gen);
	return 0;
}

/*
 * Lets a dataplane that is shutting down finish, for at most 30 s, so
 * that the next attach is not to it; and lets go of its memory as soon as
 * it is gone, so that the next one can start.
 */
static void
wait_exit(pid_t pid)
{
	for (int i = 0; i < 3000 && pid > 0; i++) {
		if (kill(pid, 0) != 0 && errno == ESRCH)
			return;
		usleep(10000);
	}
}

/* ---- the loop ---- */

/* The governors' multipliers to the workers: no table is republished. */
static void
gov_publish(struct ctl_main *m)
{
	for (uint32_t s = 0; s < LB_CONF_MAX_SVCS; s++) {
		double x = lb_govview_m(lb_view_gov(m->ctl.view), s);
		uint64_t b;

		memcpy(&b, &x, sizeof(b));
		atomic_store_explicit(&m->pub.shm->gov_m[s], b,
				      memory_order_relaxed);
	}
}

static void
tick(struct ctl_main *m)
{
	struct lb_cmd_out out;
	uint64_t now = mono_ns();

	if (!lb_pub_alive(&m->pub)) {
		m->dp_gone = true;
		return;
	}
	lb_pub_drain(&m->pub, m->ctl.view, LB_FB_RING_SIZE);
	lb_view_sync(m->ctl.view);
	lb_view_tick(m->ctl.view);
	lb_scale_tick(m->scale, now);
	gov_publish(m);
	if (now < m->next_slow_ns)
		return;
	m->next_slow_ns = now + SLOW_NS;
	steer_tick(m);
	lb_cmd_out_init(&out);
	if (m->dirty) {
		if (publish(m, false, &out) == 0)
			logf_("configuration published (generation %" PRIu64
			      ")",
			      lb_view_conf(m->ctl.view)->gen);
	} else if (lb_pub_gc_due(&m->pub)) {
		/* Flows of removed backends ran out: their slots can be
		 * given to new ones. */
		uint64_t before = m->ctl.ctr.publishes;

		if (publish(m, false, &out) == 0 &&
		    m->ctl.ctr.publishes != before)
			m->ctl.ctr.gc_publishes++;
	}
	lb_cmd_out_free(&out);
}

static int
serve(struct ctl_main *m)
{
	struct pollfd pfd[LB_APISRV_CONNS + 2 + LB_HEALTH_MAX_PROBES];
	uint64_t next_tick = mono_ns(), next_cl = next_tick;

	while (!quit && !m->dp_gone) {
		uint64_t now = mono_ns();
		unsigned int n, hn;
		int timeout, rc, ht;

		if (now >= next_tick) {
			tick(m);
			next_tick = now + (uint64_t)m->o.tick_ms * 1000000ull;
			continue;
		}
		if (m->cluster != NULL && now >= next_cl) {
			lb_cluster_tick(m->cluster, lb_view_shm(m->ctl.view)->admit,
					lb_view_conf(m->ctl.view), now);
			next_cl = now + LB_CLUSTER_TICK_NS;
		}
		timeout = (int)((next_tick - now + 999999) / 1000000);
		if (m->cluster != NULL && next_cl > now &&
		    (int)((next_cl - now + 999999) / 1000000) < timeout)
			timeout = (int)((next_cl - now + 999999) / 1000000);
		n = lb_apisrv_pollfds(m->api, pfd, LB_APISRV_CONNS + 1);
		if (m->httpd != NULL) {
			int t = lb_httpd_timeout_ms(m->httpd);

			pfd[n++] = (struct pollfd){.fd = lb_httpd_fd(m->httpd),
						   .events = POLLIN};
			if (t >= 0 && t < timeout)
				timeout = t;
		}
		hn = lb_health_pollfds(m->ctl.health, pfd + n,
				       LB_HEALTH_MAX_PROBES);
		ht = lb_health_timeout_ms(m->ctl.health, now);
		if (ht >= 0 && ht < timeout)
			timeout = ht;
		rc = poll(pfd, n + hn, timeout);
		if (rc < 0 && errno != EINTR) {
			logf_("poll: %s", strerror(errno));
			return -errno;
		}
		health_run(m, pfd + n, hn);
		if (rc <= 0 && m->httpd == NULL)
			continue;
		lb_apisrv_process(m->api, pfd, m->httpd != NULL ? n - 1 : n);
		if (m->httpd != NULL)
			lb_httpd_run(m->httpd);
		m->ctl.ctr.api_conns = lb_apisrv_stats(m->api)->conns;
	}
	return 0;
}

static void
teardown(struct ctl_main *m)
{
	lb_httpd_stop(m->httpd);
	m->httpd = NULL;
	lb_apisrv_free(m->api);
	m->api = NULL;
	lb_view_free(m->ctl.view);
	m->ctl.view = NULL;
}

/* The command reference, without the EAL: Markdown (docs/lbctl.md), or
 * with --cmd-table C source that lbctl is built with. */
static int
markdown(struct ctl_main *m)
{
	struct lb_cmd_out out;
	int rc;

	rc = ctl_setup(m);
	lb_cmd_out_init(&out);
	if (rc == 0 && m->o.cmd_table)
		rc = lb_cmd_csource(m->reg, "lb_cmd_table", &out);
	else if (rc == 0)
		rc = lb_cmd_markdown(m->reg, "lbctl command reference", &out);
	if (rc == 0)
		fputs(lb_cmd_out_text(&out), stdout);
	else
		logf_("cannot build the command reference: %s", strerror(-rc));
	lb_cmd_out_free(&out);
	return rc == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

static void
quiet_eal_logs(bool quiet)
{
	/* While waiting for a dataplane every attempt would print the
	 * same EAL failure; the first and then one in 30 are enough. */
	rte_log_set_global_level(quiet ? RTE_LOG_EMERG : RTE_LOG_DEBUG);
}

/*
 * Start-up is over: the EAL is attached, the sockets bound, the state
 * read. What is left to do needs far less than root (docs/security.md).
 */
static int
drop_privs(struct ctl_main *m)
{
	struct lb_privs_report r;
	char err[128], kept[512];

	if (lb_privs_drop(m->o.keep_caps, true, &r, err, sizeof(err)) != 0) {
		logf_("cannot drop privileges: %s", err);
		return -1;
	}
	lb_privs_format(r.after, kept, sizeof(kept));
	if (r.before != r.after || r.bset_dropped > 0)
		logf_("capabilities kept: %s; %u left the bounding set%s",
		      kept, r.bset_dropped,
		      r.bset_denied ? " (not all: no CAP_SETPCAP)" : "");
	return 0;
}

int
main(int argc, char **argv)
{
	static struct ctl_main m;
	char err[256], rtdir[PATH_MAX];
	char **eargv;
	int dd, eargc, rc, ret = EXIT_FAILURE;
	unsigned long waits = env_count(WAITS_ENV);

	m.o = (struct opts){
		.socket = DEF_SOCKET,
		.state = DEF_STATE,
		.metrics = DEF_METRICS,
		.tick_ms = DEF_TICK_MS,
		.sock_mode = DEF_SOCK_MODE,
		.sock_gid = (gid_t)-1,
		.keep_caps = lb_privs_keep_default(),
	};
	m.argv0 = argv;
	m.rt_lock = -1;
	for (dd = 1; dd < argc && strcmp(argv[dd], "--") != 0; dd++)
		;
	/* lb-control's own options come after "--"; --markdown,
	 * --cmd-table and --help alone need no EAL. */
	if (argc == 2 &&
	    (strcmp(argv[1], "--markdown") == 0 ||
	     strcmp(argv[1], "--cmd-table") == 0 ||
	     strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		dd = 0;
	}
	if (dd < argc) {
		char **ours = calloc((size_t)(argc - dd) + 1, sizeof(*ours));

		if (ours == NULL)
			return EXIT_FAILURE;
		ours[0] = argv[0];
		for (int i = dd + 1; i < argc; i++)
			ours[i - dd] = argv[i];
		rc = parse_opts(argc - dd, ours, &m.o);
		free(ours);
		if (rc != 0) {
			usage(stderr);
			return 2;
		}
	}
	if (m.o.markdown || m.o.cmd_table)
		return markdown(&m);
	if (dd == 0)
		dd = 1;
	/* getopt inside the EAL permutes what it is given: a copy, so that
	 * argv stays as given for executing again. */
	eargv = eal_args(dd, argv, &eargc);
	if (eargv == NULL)
		return 2;

	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	if (lb_rt_dir(eargc, eargv, rtdir, sizeof(rtdir)) != 0) {
		logf_("no DPDK runtime directory to attach to (--in-memory "
		      "or --no-shconf, or a --file-prefix too long)");
		return 2;
	}
	if (!wait_primary(&m, rtdir))
		return EXIT_FAILURE;
	quiet_eal_logs(waits > 0 && waits % 30 != 0);
	rc = rte_eal_init(eargc, eargv);
	if (rc < 0) {
		if (rte_errno == EINVAL) {
			logf_("invalid EAL arguments");
			return 2;
		}
		if (waits % 30 == 0)
			logf_("cannot attach to the dataplane (EAL: %s; "
			      "it must run on hugepages, not --no-huge, to "
			      "have secondary processes); retrying every "
			      "second",
			      rte_strerror(rte_errno));
		lb_rt_unlock(m.rt_lock);
		m.rt_lock = -1;
		sleep(1);
		if (quit)
			return EXIT_FAILURE;
		exec_again(m.argv0, WAITS_ENV);
	}
	quiet_eal_logs(false);
	unsetenv(WAITS_ENV);

	rc = ctl_setup(&m);
	if (rc != 0) {
		logf_("cannot set up the commands: %s", strerror(-rc));
		goto out;
	}
	m.ctl.state_path = m.o.state;
	rc = attach(&m);
	/* Attached (or not): the next dataplane may start when it wants. */
	lb_rt_unlock(m.rt_lock);
	m.rt_lock = -1;
	if (rc != 0)
		goto out;
	if (load_desired(&m) != 0)
		goto out;
	{
		struct lb_cmd_out o;

		lb_cmd_out_init(&o);
		if (publish(&m, true, &o) != 0) {
			logf_("%s; retrying every second",
			      lb_cmd_out_errmsg(&o));
			m.dirty = true;
			save_state(&m, NULL);
		}
		lb_cmd_out_free(&o);
	}
	m.api = lb_apisrv_create_gid(m.o.socket, m.o.sock_mode, m.o.sock_gid,
				     &api_ops, &m, err, sizeof(err));
	if (m.api == NULL) {
		logf_("%s", err);
		goto out;
	}
	if (m.o.metrics != NULL) {
		m.httpd = lb_httpd_start(m.o.metrics, metrics_body, &m, err,
					 sizeof(err));
		if (m.httpd == NULL) {
			logf_("%s", err);
			goto out;
		}
	}
	if (m.o.redis != NULL) {
		char host[256];
		uint16_t port;

		if (lb_cluster_parse_addr(m.o.redis, host, sizeof(host),
					  &port) != 0 ||
		    (m.cluster = lb_cluster_create(host, port,
						   &m.ctl.ctr.cluster)) ==
			    NULL) {
			logf_("--redis: '%s' is not HOST:PORT", m.o.redis);
			goto out;
		}
	}
	if (!m.o.keep_all && drop_privs(&m) != 0)
		goto out;
	logf_("serving %s (mode %04o)%s%s", m.o.socket, m.o.sock_mode,
	      m.httpd != NULL ? ", metrics on http://" : "",
	      m.httpd != NULL ? m.o.metrics : "");
	serve(&m);
	if (m.dp_gone) {
		logf_("the dataplane (pid %d) went away; waiting for the next "
		      "one",
		      m.pub.dp_pid);
		teardown(&m);
		/* The next image knows nothing of these instances. */
		lb_scale_free(m.scale);
		m.scale = NULL;
		wait_exit(m.pub.dp_pid);
		exec_again(m.argv0, ATTACHES_ENV);
	}
	logf_("stopping; the dataplane keeps forwarding with its table");
	ret = EXIT_SUCCESS;
out:
	lb_scale_free(m.scale);
	teardown(&m);
	lb_cluster_free(m.cluster);
	lb_pub_detach(&m.pub);
	lb_cmd_reg_free(m.reg);
	lb_as_free(m.ctl.as);
	steer_free(&m);
	lb_health_free(m.ctl.health);
	free(m.as_backup);
	lb_conf_free(m.ctl.conf);
	lb_conf_free(m.backup);
	json_decref(m.ctl.data);
	free(eargv);
	rte_eal_cleanup();
	return ret;
}
