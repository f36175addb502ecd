/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-control's scale runtime (scale_priv.h): the autoscaler's decisions
 * carried out through orchestrator drivers, instances joining as pending
 * and leaving through a drain.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "autoscale.h"
#include "health.h"
#include "leader.h"
#include "orch.h"
#include "scale_priv.h"

/* A failed instance stays listed this long, for lbctl. */
#define FAILED_LINGER_NS 30000000000ull
/* A pending instance is probed this often. */
#define PROBE_EVERY_NS 200000000ull
#define EV_MAX 32u
/* Bytes of a unit's label: a service and " pool NAME". */
#define LABEL_LEN 112u
/* Cluster: a host's load summary is published this often, a follower
 * reads the leader's list this often. */
#define REPORT_EVERY_NS 500000000ull
#define FETCH_EVERY_NS 250000000ull

struct probe {
	uint32_t inst;
	int fd; /* connect in progress, -1 none */
	uint64_t next_ns;
	char ns[64];
};

struct rsvc {
	struct lb_conf_svc_key key;
	char pool[LB_CONF_POOL_NAME_LEN + 1]; /* "" the service's own */
	const struct lb_orch_ops *ops;
	void *drv;
	struct lb_as_conf drv_conf; /* the driver's settings in use */
	bool said_busy;
	struct probe pr[LB_AS_INST_MAX];
	/* `cluster on` with a Redis: the lease and the lists. */
	bool cl_on;
	bool taken; /* leading: the list taken over, the driver made */
	struct lb_lease lease;
	/* "tcp:10.0.0.1:80" ("tcp:10.0.0.1:80/api" for pool api), the
	 * keys' part and the drivers' name of the unit. */
	char cl_svc[LABEL_LEN];
	char cl_name[LABEL_LEN]; /* "tcp 10.0.0.1:80 pool api", the log's */
	uint64_t next_report_ns;
	uint64_t next_fetch_ns;
	uint64_t last_tick_ns; /* to see a stalled loop */
	uint64_t seq;	    /* last list published or applied */
	uint64_t seq_term;  /* its term */
	bool unpublished;   /* the repository changed since */
	char *last_pub;	    /* the last list published, seq aside */
	struct lb_leader_list *lst;	/* scratch */
	struct lb_leader_load *loads;	/* the hosts' summaries */
	int nb_loads;			/* read at the last evaluation */
};

struct lb_scale {
	struct lb_ctl *ctl;
	lb_scale_commit_fn *commit;
	void *ctx;
	struct rsvc *rs[LB_AS_UNITS_MAX];
	unsigned int nb_rs;
	struct lb_view_be *vb; /* scratch */
	struct lb_leader *leader; /* the cluster's Redis, or NULL */
};

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
logf_(const char *fmt, ...)
{
	va_list ap;

	fputs("lb-control: scale: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void
label(const struct lb_conf_svc_key *k, char *buf, size_t n, char sep)
{
	struct lb_conf_ip vip = lb_conf_ip_of(k->af, k->vip, k->vip6);
	char a[LB_CMD_IP_ADDR_STRLEN];

	snprintf(buf, n, "%s%c%s", lb_cmd_proto_name(k->proto), sep,
		 lb_cmd_fmt_ip_port(&vip, k->port, a));
}

/* A unit's label: its service's (label()) and, for a named pool,
 * " pool NAME" (@p sep ' ', the log's) or "/NAME" (else: the Redis keys'
 * and the drivers' name). */
static void
unit_label(const struct lb_conf_svc_key *k, const char *pool, char *buf,
	   size_t n, char sep)
{
	char l[64];

	label(k, l, sizeof(l), sep);
	if (pool[0] == '\0')
		snprintf(buf, n, "%s", l);
	else
		snprintf(buf, n, sep == ' ' ? "%s pool %s" : "%s/%s", l, pool);
}

static void
ulabel(const struct lb_as_svc *s, char *buf, size_t n)
{
	unit_label(lb_as_svc_key(s), lb_as_svc_pool(s), buf, n, ' ');
}

struct lb_scale *
lb_scale_create(struct lb_ctl *ctl, lb_scale_commit_fn *commit, void *ctx)
{
	struct lb_scale *sc = calloc(1, sizeof(*sc));

	if (sc == NULL)
		return NULL;
	sc->vb = malloc(sizeof(*sc->vb));
	if (sc->vb == NULL) {
		free(sc);
		return NULL;
	}
	sc->ctl = ctl;
	sc->commit = commit;
	sc->ctx = ctx;
	lb_as_set_driver_check(ctl->as, lb_orch_check);
	return sc;
}

void
lb_scale_set_cluster(struct lb_scale *sc, struct lb_leader *ld)
{
	sc->leader = ld;
}

static bool
drv_same(const struct lb_as_conf *a, const struct lb_as_conf *b)
{
	return strcmp(a->driver, b->driver) == 0 &&
	       strcmp(a->command, b->command) == 0 &&
	       strcmp(a->target, b->target) == 0 &&
	       a->inst_port == b->inst_port &&
	       a->exec_timeout_ns == b->exec_timeout_ns;
}

static struct rsvc *
rs_get(struct lb_scale *sc, struct lb_as_svc *s)
{
	const struct lb_conf_svc_key *k = lb_as_svc_key(s);
	const char *pool = lb_as_svc_pool(s);
	struct rsvc *r = NULL;

	for (unsigned int i = 0; i < sc->nb_rs; i++)
		if (memcmp(&sc->rs[i]->key, k, sizeof(*k)) == 0 &&
		    strcmp(sc->rs[i]->pool, pool) == 0)
			r = sc->rs[i];
	if (r == NULL && sc->nb_rs < LB_AS_UNITS_MAX) {
		r = calloc(1, sizeof(*r));
		if (r == NULL)
			return NULL;
		r->key = *k;
		snprintf(r->pool, sizeof(r->pool), "%s", pool);
		for (unsigned int i = 0; i < LB_AS_INST_MAX; i++)
			r->pr[i].fd = -1;
		sc->rs[sc->nb_rs++] = r;
	}
	return r;
}

static void cl_leave(struct lb_scale *sc, struct rsvc *r);
static uint64_t cl_flows(struct rsvc *r, const struct lb_conf_ip *ip,
			 uint16_t port,
			 uint64_t local);

static void
rs_free(struct lb_scale *sc, struct rsvc *r, uint64_t wait_ns)
{
	/* A leader hands its instances over rather than stopping them. */
	if (r->cl_on)
		cl_leave(sc, r);
	if (r->drv != NULL)
		r->ops->destroy(r->drv, wait_ns);
	for (unsigned int i = 0; i < LB_AS_INST_MAX; i++)
		if (r->pr[i].fd >= 0)
			close(r->pr[i].fd);
	for (unsigned int i = 0; i < sc->nb_rs; i++)
		if (sc->rs[i] == r)
			sc->rs[i] = sc->rs[--sc->nb_rs];
	free(r->last_pub);
	free(r->lst);
	free(r->loads);
	free(r);
}

/* The driver of the service's current settings, made when none runs. */
static int
rs_driver(struct rsvc *r, const struct lb_as_conf *c)
{
	char err[128], svc[LABEL_LEN];

	if (r->drv != NULL && drv_same(&r->drv_conf, c))
		return 0;
	if (r->drv != NULL) {
		if (r->ops->busy(r->drv) > 0) {
			/* Its instances keep their driver until they go. */
			if (!r->said_busy)
				logf_("new driver settings apply once the "
				      "current instances are gone");
			r->said_busy = true;
			return 0;
		}
		r->ops->destroy(r->drv, 0);
		r->drv = NULL;
	}
	r->said_busy = false;
	r->ops = lb_orch_find(c->driver);
	if (r->ops == NULL)
		return -ENOENT;
	unit_label(&r->key, r->pool, svc, sizeof(svc), ':');
	r->drv = r->ops->create(c, svc, err, sizeof(err));
	if (r->drv == NULL) {
		logf_("%s: driver %s: %s", svc, c->driver, err);
		return -EINVAL;
	}
	r->drv_conf = *c;
	return 0;
}

static struct probe *
probe_of(struct rsvc *r, uint32_t inst, bool make)
{
	struct probe *free_one = NULL;

	for (unsigned int i = 0; i < LB_AS_INST_MAX; i++) {
		if (r->pr[i].inst == inst && r->pr[i].next_ns != 0)
			return &r->pr[i];
		if (free_one == NULL && r->pr[i].next_ns == 0)
			free_one = &r->pr[i];
	}
	if (!make || free_one == NULL)
		return NULL;
	free_one->inst = inst;
	free_one->fd = -1;
	free_one->next_ns = 1;
	free_one->ns[0] = '\0';
	return free_one;
}

static void
probe_drop(struct rsvc *r, uint32_t inst)
{
	struct probe *p = probe_of(r, inst, false);

	if (p == NULL)
		return;
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
	p->next_ns = 0;
}

/* A socket in network namespace @p ns ("" for ours). */
static int
ns_socket(const char *ns)
{
	char path[128];
	int self, fd, nsfd, err;

	if (ns[0] == '\0')
		return socket(AF_INET,
			      SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	nsfd = open(path, O_RDONLY | O_CLOEXEC);
	if (nsfd < 0)
		return -1;
	self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0 || setns(nsfd, CLONE_NEWNET) != 0) {
		err = errno;
		close(nsfd);
		if (self >= 0)
			close(self);
		errno = err;
		return -1;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	err = errno;
	if (setns(self, CLONE_NEWNET) != 0)
		logf_("cannot return to lb-control's network namespace: %s",
		      strerror(errno));
	close(self);
	close(nsfd);
	errno = err;
	return fd;
}

/* Whether a TCP connection to the instance succeeded (one in flight at a
 * time, a new one every PROBE_EVERY_NS). */
static bool
probe_run(struct probe *p, const struct lb_as_inst *i, uint64_t now)
{
	struct pollfd pf;
	int err = 0;
	socklen_t len = sizeof(err);

	if (p->fd >= 0) {
		pf = (struct pollfd){.fd = p->fd, .events = POLLOUT};
		if (poll(&pf, 1, 0) == 1) {
			getsockopt(p->fd, SOL_SOCKET, SO_ERROR, &err, &len);
			close(p->fd);
			p->fd = -1;
			if (err == 0)
				return true;
		} else if (now < p->next_ns) {
			return false;
		} else {
			close(p->fd); /* no answer within the period */
			p->fd = -1;
		}
	}
	if (now < p->next_ns)
		return false;
	p->next_ns = now + PROBE_EVERY_NS;
	p->fd = ns_socket(p->ns);
	if (p->fd >= 0) {
		struct sockaddr_in sa = {.sin_family = AF_INET,
					 .sin_port = htons(i->port),
					 .sin_addr.s_addr = htonl(i->ip.ip)};
		struct sockaddr_in6 sa6 = {.sin6_family = AF_INET6,
					   .sin6_port = htons(i->port)};
		bool v6 = i->ip.af == LB_CONF_AF_INET6;

		memcpy(&sa6.sin6_addr, i->ip.ip6, sizeof(sa6.sin6_addr));
		if (connect(p->fd,
			    v6 ? (struct sockaddr *)&sa6 : (struct sockaddr *)&sa,
			    v6 ? sizeof(sa6) : sizeof(sa)) == 0) {
			close(p->fd);
			p->fd = -1;
			return true;
		}
		if (errno != EINPROGRESS) {
			close(p->fd);
			p->fd = -1;
		}
	}
	return false;
}

/* ---- the dataplane's view of a service ---- */

static int
view_svc(const struct lb_ctl *ctl, const struct lb_conf_svc_key *k)
{
	return lb_ctlcmd_svc_slot(ctl, k);
}

/* Backend @p ip : @p port of table service @p s, or NULL. */
static struct lb_view_be *
view_be(struct lb_scale *sc, int s, const struct lb_conf_ip *ip,
	uint16_t port)
{
	const struct lb_dpconf *c = lb_view_conf(sc->ctl->view);
	const struct lb_dpconf_svc *t;

	if (c == NULL || s < 0)
		return NULL;
	t = &c->svc[s];
	for (uint32_t b = 0; b < t->nb_be; b++) {
		struct lb_conf_ip x = lb_dpconf_be_addr(&t->be[b]);

		if (t->be[b].state != LB_BE_EMPTY &&
		    t->be[b].port == htons(port) && lb_conf_ip_eq(&x, ip))
			return lb_view_be_get(sc->ctl->view, (uint32_t)s, b,
					      sc->vb) == 0
				       ? sc->vb
				       : NULL;
	}
	return NULL;
}

/* ---- the repository and the configuration ---- */

static bool
be_exists(const struct lb_conf *c, const struct lb_conf_svc_key *k,
	  const struct lb_conf_ip *ip, uint16_t port)
{
	const struct lb_conf_svc *sv = lb_conf_svc_find(c, k);

	for (unsigned int j = 0; sv != NULL && j < sv->nb_be; j++) {
		struct lb_conf_ip x = LB_CONF_IP_OF(&sv->be[j]);

		if (sv->be[j].port == port && lb_conf_ip_eq(&x, ip))
			return true;
	}
	return false;
}

static void
be_del(struct lb_scale *sc, const struct lb_conf_svc_key *k,
       const struct lb_as_inst *i)
{
	if (lb_as_inst_placed(i) &&
	    be_exists(sc->ctl->conf, k, &i->ip, i->port))
		lb_conf_be_del_ip(sc->ctl->conf, k, &i->ip, i->port, NULL);
}

/* Asks the driver to stop an instance; gone at once if nothing ran. */
static void
inst_stop(struct lb_as_svc *s, struct rsvc *r, struct lb_as_inst *i,
	  uint64_t now, bool failed, const char *why)
{
	int rc = 1;

	probe_drop(r, i->id);
	if (r->drv != NULL)
		rc = r->ops->stop(r->drv, i->id, i->drv_id, now);
	if (rc < 0)
		lb_as_note_driver_error(s);
	if (rc != 0 && !failed) {
		lb_as_inst_remove(s, i);
		return;
	}
	lb_as_inst_set(s, i, failed ? LB_AS_FAILED : LB_AS_STOPPING, now, why);
}

/*
 * An instance that ran before the driver did (lb-control restarted): an
 * instance from now on, which then comes up as a started one does. Not
 * when its address is a backend already, nor when the repository is
 * full: the driver then keeps it as it is, never stopped.
 */
static struct lb_as_inst *
adopt(struct lb_scale *sc, struct lb_as_svc *s, struct rsvc *r,
      const struct lb_orch_ev *ev, uint64_t now)
{
	const struct lb_conf_svc_key *k = lb_as_svc_key(s);
	struct lb_as_inst *i = NULL;
	char l[LABEL_LEN], a[LB_CMD_IP_ADDR_STRLEN];
	const char *why = NULL;

	ulabel(s, l, sizeof(l));
	lb_cmd_fmt_ip_port(&ev->ip, ev->port, a);
	if (r->ops->adopt == NULL)
		why = "the driver adopts nothing";
	else if (be_exists(sc->ctl->conf, k, &ev->ip, ev->port))
		why = "a backend already";
	else if ((i = lb_as_inst_adopt(s, now)) == NULL)
		why = "no room for an instance";
	if (why != NULL) {
		logf_("%s: %s at %s left as it is: %s", l, ev->id, a, why);
		return NULL;
	}
	if (r->ops->adopt(r->drv, ev->id, i->id) != 0)
		logf_("%s: instance %u: driver lost %s", l, i->id, ev->id);
	logf_("%s: instance %u adopted: %s at %s", l, i->id, ev->id, a);
	return i;
}

/* The unit's pool for lb_conf_be_add_pool(): NULL for the service's own. */
static const char *
pool_arg(const struct lb_as_svc *s)
{
	return lb_as_svc_pool(s)[0] != '\0' ? lb_as_svc_pool(s) : NULL;
}

static void
on_event(struct lb_scale *sc, struct lb_as_svc *s, struct rsvc *r,
	 const struct lb_orch_ev *ev, uint64_t now)
{
	const struct lb_conf_svc_key *k = lb_as_svc_key(s);
	struct lb_as_inst *i = lb_as_inst_find(s, ev->inst);
	char l[LABEL_LEN], a[LB_CMD_IP_ADDR_STRLEN];
	struct lb_cmd_out out;
	struct probe *p;
	int rc;

	ulabel(s, l, sizeof(l));
	if (ev->kind == LB_ORCH_EV_ERROR) {
		lb_as_note_driver_error(s);
		if (ev->inst == UINT32_MAX) /* not about one instance */
			logf_("%s: driver %s: %s; retrying", l, r->ops->name,
			      ev->msg);
		else
			logf_("%s: instance %u: %s; retrying", l, ev->inst,
			      ev->msg);
		if (i != NULL)
			snprintf(i->why, sizeof(i->why), "%s", ev->msg);
		return;
	}
	if (ev->kind == LB_ORCH_EV_ADOPTED &&
	    (i = adopt(sc, s, r, ev, now)) == NULL)
		return;
	if (i == NULL) {
		/* An instance no one waits for (stopped meanwhile). */
		if (ev->kind == LB_ORCH_EV_UP)
			r->ops->stop(r->drv, ev->inst, ev->id, now);
		return;
	}
	switch (ev->kind) {
	case LB_ORCH_EV_ADOPTED:
	case LB_ORCH_EV_UP:
		if (i->state != LB_AS_STARTING) {
			r->ops->stop(r->drv, ev->inst, ev->id, now);
			return;
		}
		i->ip = ev->ip;
		i->port = ev->port;
		snprintf(i->drv_id, sizeof(i->drv_id), "%s", ev->id);
		lb_cmd_out_init(&out);
		/* Pending: in the table (in the unit's pool), but drained
		 * until healthy. */
		rc = lb_conf_be_add_pool(sc->ctl->conf, k, &ev->ip, ev->port,
					 LB_CONF_WEIGHT_DEFAULT, pool_arg(s),
					 &out);
		if (rc == 0)
			lb_conf_be_set_orch_ip(sc->ctl->conf, k, &ev->ip,
					       ev->port, true, NULL);
		if (rc == 0)
			rc = lb_conf_be_drain_ip(sc->ctl->conf, k, &ev->ip,
						 ev->port, true, &out);
		if (rc != 0) {
			logf_("%s: instance %u at %s cannot be a backend: %s",
			      l, i->id,
			      lb_cmd_fmt_ip_port(&ev->ip, ev->port, a),
			      lb_cmd_out_errmsg(&out));
			lb_cmd_out_free(&out);
			be_del(sc, k, i);
			i->ip = lb_conf_ip4(0);
			inst_stop(s, r, i, now, true, "not a valid backend");
			return;
		}
		lb_cmd_out_free(&out);
		lb_as_inst_set(s, i, LB_AS_PENDING, now, "waiting for health");
		p = probe_of(r, i->id, true);
		if (p != NULL)
			snprintf(p->ns, sizeof(p->ns), "%s", ev->ns);
		logf_("%s: instance %u up at %s, pending", l, i->id,
		      lb_cmd_fmt_ip_port(&ev->ip, ev->port, a));
		return;
	case LB_ORCH_EV_FAILED:
	case LB_ORCH_EV_EXITED:
		logf_("%s: instance %u %s: %s", l, i->id,
		      ev->kind == LB_ORCH_EV_FAILED ? "could not start"
						    : "exited",
		      ev->msg);
		probe_drop(r, i->id);
		be_del(sc, k, i);
		lb_as_inst_set(s, i, LB_AS_FAILED, now, ev->msg);
		return;
	case LB_ORCH_EV_STOPPED:
		probe_drop(r, i->id);
		be_del(sc, k, i);
		if (i->state == LB_AS_FAILED)
			return; /* stays listed as failed for a while */
		logf_("%s: instance %u stopped", l, i->id);
		lb_as_inst_remove(s, i);
		return;
	case LB_ORCH_EV_ERROR:
		return;
	}
}

/*
 * Whether a pending instance is healthy: its pool's health check (the
 * pool's own, else the service's: lb_conf_pool_check()) decides when
 * there is one (control/health/health.h: a backend added at
 * run time is pending until `check-rise` checks in a row passed, through the
 * dataplane's exception path); without one, a TCP connection to the
 * instance (probe_run()).
 */
static bool
healthy(struct lb_scale *sc, const struct lb_as_svc *s, struct rsvc *r,
	const struct lb_conf_svc_key *k, const struct lb_as_inst *i,
	uint64_t now)
{
	const struct lb_conf_svc *sv = lb_conf_svc_find(sc->ctl->conf, k);
	int pidx = sv != NULL ? lb_as_svc_pool_index(s, sv) : -1;
	struct lb_health_be_info hi;
	struct probe *p;

	if (pidx >= 0 &&
	    lb_conf_pool_check(sv, (unsigned int)pidx)->type !=
		    LB_CONF_CHECK_NONE &&
	    sc->ctl->health != NULL)
		return lb_health_get_ip(sc->ctl->health, k, &i->ip, i->port,
					&hi) == 0 &&
		       hi.state == LB_HEALTH_UP;
	p = probe_of(r, i->id, true);
	return p != NULL && probe_run(p, i, now);
}

/* Pending instances that pass their check become active; drains end. */
static void
lifecycle(struct lb_scale *sc, struct lb_as_svc *s, struct rsvc *r,
	  uint64_t now)
{
	const struct lb_conf_svc_key *k = lb_as_svc_key(s);
	const struct lb_as_conf *c = lb_as_svc_conf(s);
	int slot = view_svc(sc->ctl, k);
	char l[LABEL_LEN];

	ulabel(s, l, sizeof(l));
	for (unsigned int j = lb_as_nb_inst(s); j-- > 0;) {
		struct lb_as_inst *i = lb_as_inst_at(s, j);
		struct lb_view_be *vb;
		uint64_t flows;

		if (i->origin != LB_AS_ORCH)
			continue;
		switch (i->state) {
		case LB_AS_PENDING:
			if (!healthy(sc, s, r, k, i, now))
				break;
			probe_drop(r, i->id);
			if (lb_conf_be_drain_ip(sc->ctl->conf, k, &i->ip, i->port,
					     false, NULL) == 0) {
				lb_as_inst_set(s, i, LB_AS_ACTIVE, now,
					       "healthy");
				logf_("%s: instance %u active", l, i->id);
			}
			break;
		case LB_AS_DRAINING:
			vb = view_be(sc, slot, &i->ip, i->port);
			/* In a cluster, the flows on every host. */
			flows = cl_flows(r, &i->ip, i->port,
					 vb != NULL ? vb->flows_active : 0);
			if (flows > 0 &&
			    now - i->since_ns < c->drain_timeout_ns)
				break;
			if (flows > 0) {
				lb_as_note_drain_timeout(s);
				logf_("%s: instance %u: drain timeout with "
				      "%lu flow(s) left",
				      l, i->id, (unsigned long)flows);
			}
			be_del(sc, k, i);
			inst_stop(s, r, i, now, false, "drained");
			break;
		case LB_AS_FAILED:
			if (now - i->since_ns >= FAILED_LINGER_NS)
				lb_as_inst_remove(s, i);
			break;
		default:
			break;
		}
	}
}

/* Newest active orchestrated instance (the last one in is the first
 * out: it has the fewest flows), or NULL. */
static struct lb_as_inst *
newest_active(struct lb_as_svc *s)
{
	struct lb_as_inst *best = NULL;

	for (unsigned int j = 0; j < lb_as_nb_inst(s); j++) {
		struct lb_as_inst *i = lb_as_inst_at(s, j);

		if (i->origin == LB_AS_ORCH && i->state == LB_AS_ACTIVE &&
		    (best == NULL || i->id > best->id))
			best = i;
	}
	return best;
}

static struct lb_as_inst *
oldest_pending(struct lb_as_svc *s)
{
	struct lb_as_inst *best = NULL;

	for (unsigned int j = 0; j < lb_as_nb_inst(s); j++) {
		struct lb_as_inst *i = lb_as_inst_at(s, j);

		if (i->origin == LB_AS_ORCH &&
		    (i->state == LB_AS_STARTING || i->state == LB_AS_PENDING) &&
		    (best == NULL || i->requested_ns < best->requested_ns))
			best = i;
	}
	return best;
}

/* ---- the cluster (`cluster on` with --redis) ---- */

/* Room for a formatted list. */
#define LIST_TXT_LEN (LB_AS_INST_MAX * 128u + 128u)

static bool
cl_leading(struct rsvc *r, uint64_t now)
{
	return r->cl_on && r->taken && lb_lease_leading(&r->lease, now);
}

/* Instance states whose address is a backend. */
static bool
in_table(enum lb_as_state st)
{
	return st == LB_AS_PENDING || st == LB_AS_ACTIVE ||
	       st == LB_AS_DRAINING;
}

static const struct lb_conf_be *
conf_be(const struct lb_conf *c, const struct lb_conf_svc_key *k,
	const struct lb_conf_ip *ip, uint16_t port)
{
	const struct lb_conf_svc *sv = lb_conf_svc_find(c, k);

	for (unsigned int j = 0; sv != NULL && j < sv->nb_be; j++) {
		struct lb_conf_ip x = LB_CONF_IP_OF(&sv->be[j]);

		if (lb_conf_ip_eq(&x, ip) && sv->be[j].port == port)
			return &sv->be[j];
	}
	return NULL;
}

static int
cl_init(struct rsvc *r)
{
	struct lb_lease_params p;

	unit_label(&r->key, r->pool, r->cl_svc, sizeof(r->cl_svc), ':');
	unit_label(&r->key, r->pool, r->cl_name, sizeof(r->cl_name), ' ');
	if (r->lst == NULL)
		r->lst = malloc(sizeof(*r->lst));
	if (r->loads == NULL)
		r->loads = calloc(LB_LEADER_HOSTS_MAX + 1, sizeof(*r->loads));
	if (r->last_pub == NULL)
		r->last_pub = calloc(2, LIST_TXT_LEN);
	if (r->lst == NULL || r->loads == NULL || r->last_pub == NULL)
		return -ENOMEM;
	lb_lease_params_default(&p);
	lb_lease_init(&r->lease, &p);
	r->taken = false;
	r->seq = r->seq_term = 0;
	r->last_pub[0] = '\0';
	r->nb_loads = 0;
	r->cl_on = true;
	return 0;
}

/* The repository's orchestrated instances, as a list of our term. */
static void
cl_list_of(struct lb_scale *sc, struct lb_as_svc *s, struct rsvc *r,
	   struct lb_leader_list *l)
{
	l->term = r->lease.term;
	l->seq = 0;
	l->next_id = lb_as_next_id(s);
	l->n = 0;
	for (unsigned int j = 0; j < lb_as_nb_inst(s); j++) {
		const struct lb_as_inst *i = lb_as_inst_at(s, j);
		const struct lb_conf_be *be;
		struct lb_leader_inst *x;

		if (i->origin != LB_AS_ORCH)
			continue;
		be = conf_be(sc->ctl->conf, &r->key, &i->ip, i->port);
		x = &l->inst[l->n++];
		*x = (struct lb_leader_inst){
			.id = i->id,
			.state = i->state,
			.ip = i->ip,
			.port = i->port,
			.weight = be != NULL ? be->weight
					     : LB_CONF_WEIGHT_DEFAULT,
		};
		snprintf(x->drv_id, sizeof(x->drv_id), "%s", i->drv_id);
	}
}

static void cl_step_down(struct lb_scale *sc, struct lb_as_svc *s,
			 struct rsvc *r, const char *why);

/*
 * Publishes the repository when it changed. Write-ahead: while a change
 * is not in Redis the driver is not polled, so it runs no command that
 * a next leader would not know of.
 */
static void
cl_publish(struct lb_scale *sc, struct lb_as_svc *s, struct rsvc *r,
	   uint64_t now)
{
	struct lb_as_cluster *cl = lb_as_svc_cluster(s);
	char *txt = r->last_pub + LIST_TXT_LEN;
	struct lb_leader_list *l = r->lst;
	int rc;

	if (!cl_leading(r, now))
		return;
	cl_list_of(sc, s, r, l);
	if (lb_leader_list_fmt(l, txt, LIST_TXT_LEN) < 0)
		return;
	if (!r->unpublished && strcmp(txt, r->last_pub) == 0)
		return;
	l->seq = r->seq_term == l->term ? r->seq + 1 : 1;
	rc = lb_leader_publish(sc->leader, r->cl_svc, l);
	if (rc == 0) {
		r->seq = l->seq;
		r->seq_term = l->term;
		r->unpublished = false;
		memcpy(r->last_pub, txt, strlen(txt) + 1);
		cl->seq = l->seq;
		return;
	}
	r->unpublished = true;
	if (rc == -EPERM) {
		cl->fenced++;
		lb_lease_step_down(&r->lease);
		cl_step_down(sc, s, r, "Redis refused its list");
	}
}

/* A follower's backends and repository become the leader's list. */
static void
cl_apply(struct lb_scale *sc, struct lb_as_svc *s, struct rsvc *r,
	 const struct lb_leader_list *l, uint64_t now)
{
	const struct lb_conf_svc_key *k = &r->key;
	struct lb_conf *c = sc->ctl->conf;

	for (unsigned int j = lb_as_nb_inst(s); j-- > 0;) {
		struct lb_as_inst *i = lb_as_inst_at(s, j);
		bool listed = false;

		if (i->origin != LB_AS_ORCH)
			continue;
		for (unsigned int x = 0; x < l->n; x++)
			listed |= l->inst[x].id == i->id;
		if (listed)
			continue;
		probe_drop(r, i->id);
		be_del(sc, k, i);
		lb_as_inst_remove(s, i);
	}
	for (unsigned int x = 0; x < l->n; x++) {
		const struct lb_leader_inst *li = &l->inst[x];
		struct lb_as_inst *i = lb_as_inst_find(s, li->id);
		const struct lb_conf_be *be;

		if (i == NULL || i->origin != LB_AS_ORCH)
			i = lb_as_inst_import(s, li->id, li->state, now);
		if (i == NULL)
			continue;
		if (!lb_conf_ip_eq(&i->ip, &li->ip) || i->port != li->port)
			be_del(sc, k, i);
		i->ip = li->ip;
		i->port = li->port;
		snprintf(i->drv_id, sizeof(i->drv_id), "%s", li->drv_id);
		if (i->state != li->state)
			lb_as_inst_set(s, i, li->state, now, "from the leader");
		if (!in_table(li->state) ||
		    (li->ip.af == LB_CONF_AF_INET && li->ip.ip == 0)) {
			be_del(sc, k, i);
			continue;
		}
		be = conf_be(c, k, &li->ip, li->port);
		if (be == NULL &&
		    lb_conf_be_add_pool(c, k, &li->ip, li->port,
					li->weight != 0
						? li->weight
						: LB_CONF_WEIGHT_DEFAULT,
					pool_arg(s), NULL) == 0) {
			lb_conf_be_set_orch_ip(c, k, &li->ip, li->port, true,
					       NULL);
			be = conf_be(c, k, &li->ip, li->port);
		}
		if (be != NULL && be->draining != (li->state != LB_AS_ACTIVE))
			lb_conf_be_drain_ip(c, k, &li->ip, li->port,
					    li->state != LB_AS_ACTIVE, NULL);
	}
	lb_as_raise_next_id(s, l->next_id);
	r->seq = l->seq;
	r->seq_term = l->term;
	lb_as_svc_cluster(s)->seq = l->seq;
	lb_as_svc_cluster(s)->applied++;
}

/* Reads the leader's list and applies it when it is newer. @return 0,
 * or a negative errno (Redis down: the backends stay as they are). */
static int
cl_follow(struct lb_scale *sc, struct lb_as_svc *s, struct rsvc *r,
	  uint64_t now)
{
	struct lb_leader_list *l = r->lst;
	int rc = lb_leader_fetch(sc->leader, r->cl_svc, l);

	if (rc == -ENOENT)
		return 0;
	if (rc != 0)
		return rc;
	if (l->term < r->seq_term ||
	    (l->term == r->seq_term && l->seq <= r->seq))
		return 0;
	cl_apply(sc, s, r, l, now);
	return 0;
}

/*
 * The lease is ours: the latest list first (our repository becomes it),
 * then a driver that adopts the instances the list holds. A start that
 * the old leader recorded but never saw through is asked again under
 * the same instance name.
 */
static int
cl_take_over(struct lb_scale *sc, struct lb_as_svc *s, struct rsvc *r,
	     uint64_t now)
{
	char l[LABEL_LEN];
	int rc;

	ulabel(s, l, sizeof(l));
	r->seq_term = r->seq = 0; /* whatever the list says is news */
	rc = cl_follow(sc, s, r, now);
	if (rc != 0)
		return rc;
	rc = rs_driver(r, lb_as_svc_conf(s));
	if (rc != 0 || r->drv == NULL)
		return rc != 0 ? rc : -ENOENT;
	for (unsigned int j = 0; j < lb_as_nb_inst(s); j++) {
		struct lb_as_inst *i = lb_as_inst_at(s, j);

		if (i->origin != LB_AS_ORCH)
			continue;
		if (i->state == LB_AS_STARTING) {
			if (r->ops->start(r->drv, i->id, now) != 0)
				lb_as_note_driver_error(s);
			continue;
		}
		if (i->drv_id[0] == '\0' || i->state == LB_AS_FAILED)
			continue;
		if (r->ops->adopt(r->drv, i->drv_id, i->id) != 0) {
			logf_("%s: instance %u (%s) cannot be adopted", l,
			      i->id, i->drv_id);
			continue;
		}
		if (i->state == LB_AS_STOPPING &&
		    r->ops->stop(r->drv, i->id, i->drv_id, now) < 0)
			lb_as_note_driver_error(s);
	}
	r->taken = true;
	r->unpublished = true; /* the list again, in our term */
	lb_as_svc_cluster(s)->acquired++;
	logf_("%s: scaling leader, term %llu", l,
	      (unsigned long long)r->lease.term);
	return 0;
}

/* No longer the leader: the driver goes, its instances stay. */
static void
cl_step_down(struct lb_scale *sc, struct lb_as_svc *s, struct rsvc *r,
	     const char *why)
{
	char l[LABEL_LEN];

	(void)sc;
	if (!r->taken)
		return;
	ulabel(s, l, sizeof(l));
	if (r->drv != NULL)
		r->ops->forget(r->drv);
	r->drv = NULL;
	for (unsigned int i = 0; i < LB_AS_INST_MAX; i++)
		probe_drop(r, r->pr[i].inst);
	r->taken = false;
	lb_as_svc_cluster(s)->lost++;
	logf_("%s: no longer the scaling leader (term %llu): %s", l,
	      (unsigned long long)r->lease.term, why);
}

/* This host's load of the unit, for the leader to merge: of a service
 * with named pools, only the unit's pool's backends (its repository). */
static void
cl_report(struct lb_scale *sc, struct lb_as_svc *s, struct rsvc *r)
{
	struct lb_leader_load *ld = &r->loads[LB_LEADER_HOSTS_MAX];
	const struct lb_conf_svc *sv = lb_conf_svc_find(sc->ctl->conf, &r->key);
	bool pooled = sv != NULL && sv->nb_pool > 0;
	const struct lb_dpconf *c;
	struct lb_view_svc vs;
	int slot = view_svc(sc->ctl, &r->key);

	if (slot < 0 || sc->ctl->view == NULL ||
	    (c = lb_view_conf(sc->ctl->view)) == NULL ||
	    lb_view_svc_get(sc->ctl->view, (uint32_t)slot, &vs) != 0)
		return;
	memset(ld, 0, sizeof(*ld));
	ld->inflight = pooled ? 0 : vs.inflight;
	for (uint32_t b = 0; b < c->svc[slot].nb_be && ld->n < LB_AS_INST_MAX;
	     b++) {
		struct lb_view_be *vb = sc->vb;
		struct lb_conf_ip ip;

		if (c->svc[slot].be[b].state == LB_BE_EMPTY ||
		    lb_view_be_get(sc->ctl->view, (uint32_t)slot, b, vb) != 0)
			continue;
		ip = lb_conf_ip_of(vb->af, vb->ip, vb->ip6);
		if (pooled) {
			if (lb_as_inst_by_addr(s, &ip, vb->port) == NULL)
				continue;
			ld->inflight += vb->inflight;
		}
		ld->be[ld->n++] = (struct lb_leader_be_load){
			.ip = lb_conf_ip_of(vb->af, vb->ip, vb->ip6),
			.port = vb->port,
			.seen = vb->l7.spl_seen,
			.spl = vb->l7.spl < LB_LEADER_SPL_MAX
				       ? vb->l7.spl
				       : LB_LEADER_SPL_MAX,
			.age_ns = vb->l7.spl_age_ns < LB_LEADER_AGE_MAX_NS
					  ? vb->l7.spl_age_ns
					  : LB_LEADER_AGE_MAX_NS,
			.responses = vb->l7.win_responses,
			.flows = vb->flows_active,
		};
	}
	lb_leader_report(sc->leader, r->cl_svc, ld, LB_LEADER_LOAD_TTL_MS);
}

/*
 * The cluster's part of a tick: `cluster on` followed, the lease asked
 * for or renewed, leadership taken or given up, this host's load
 * published, and for a follower the leader's list applied.
 * @return true when this lb-control follows (it then does nothing
 * more for the service).
 */
static bool
cl_tick(struct lb_scale *sc, struct lb_as_svc *s, struct rsvc *r,
	uint64_t now)
{
	struct lb_as_cluster *cl = lb_as_svc_cluster(s);
	bool want = sc->leader != NULL && !lb_as_svc_deleted(s) &&
		    lb_as_svc_conf(s)->cluster;
	char holder[LB_LEADER_TOKEN_LEN + 1] = "";
	enum lb_lease_outcome out;
	enum lb_lease_op op;
	uint64_t term;

	if (!want && r->cl_on) {
		/* Alone from now on: a leader keeps its driver. */
		if (r->taken)
			lb_leader_release(sc->leader, r->cl_svc,
					  r->lease.term);
		r->cl_on = false;
		r->taken = false;
		memset(cl, 0, sizeof(*cl));
		return false;
	}
	if (!want)
		return false;
	if (!r->cl_on && cl_init(r) != 0) {
		/* Deciding alone could start what a leader starts too. */
		logf_("%s: no memory for the cluster's state: not scaling",
		      r->cl_name);
		return true;
	}
	cl->on = true;
	/* A loop stalled for a renewal period loses the lease. */
	if (r->last_tick_ns != 0 &&
	    now - r->last_tick_ns > r->lease.p.renew_ns)
		logf_("%s: no tick for %llu ms: the lease may have been lost",
		      r->cl_name,
		      (unsigned long long)(now - r->last_tick_ns) / 1000000);
	r->last_tick_ns = now;
	op = lb_lease_due(&r->lease, now);
	if (op != LB_LEASE_OP_NONE) {
		term = r->lease.term;
		out = lb_leader_lease(sc->leader, r->cl_svc, op, r->lease.term,
				      r->lease.p.ttl_ns / 1000000, &term,
				      holder, sizeof(holder));
		lb_lease_answer(&r->lease, op, now, lb_orch_now(), out, term,
				holder);
	}
	if (!lb_lease_leading(&r->lease, lb_orch_now()))
		cl_step_down(sc, s, r,
			     lb_leader_up(sc->leader)
				     ? "another holds the lease"
				     : "Redis did not answer in time");
	else if (!r->taken)
		cl_take_over(sc, s, r, now);
	if (now >= r->next_report_ns) {
		r->next_report_ns = now + REPORT_EVERY_NS;
		cl_report(sc, s, r);
	}
	if (!r->taken && now >= r->next_fetch_ns) {
		r->next_fetch_ns = now + FETCH_EVERY_NS;
		cl_follow(sc, s, r, now);
	}
	cl->leader = r->taken;
	cl->term = r->lease.term;
	snprintf(cl->leader_id, sizeof(cl->leader_id), "%s", r->lease.leader);
	cl->redis_up = lb_leader_up(sc->leader);
	return !r->taken;
}

/* Flows on the backend across the hosts, as the leader last read them
 * (@p local when it has no summaries). */
static uint64_t
cl_flows(struct rsvc *r, const struct lb_conf_ip *ip, uint16_t port,
	 uint64_t local)
{
	struct lb_leader_be_load m;

	if (!r->cl_on || !r->taken || r->nb_loads <= 0)
		return local;
	lb_leader_merge_be(r->loads, (unsigned int)r->nb_loads, ip, port, &m);
	return m.flows > local ? m.flows : local;
}

/*
 * The leader decides on the cluster's load, not its own: requests in
 * flight summed over the hosts, each instance's SPL merged from the
 * hosts' summaries (lb_leader_merge_be(): weighted by each host's
 * responses). Without summaries (Redis slow), its own view stands.
 */
static void
cl_merge_input(struct lb_scale *sc, struct lb_as_svc *s, struct rsvc *r,
	       struct lb_as_input *x, struct lb_as_spl_in *in)
{
	uint64_t inflight = 0;

	if (!cl_leading(r, x->now_ns))
		return;
	r->nb_loads = lb_leader_loads(sc->leader, r->cl_svc, r->loads,
				      LB_LEADER_HOSTS_MAX);
	if (r->nb_loads <= 0)
		return;
	lb_as_svc_cluster(s)->hosts = (uint32_t)r->nb_loads;
	for (int h = 0; h < r->nb_loads; h++)
		inflight += r->loads[h].inflight;
	x->inflight = inflight;
	for (unsigned int j = 0; j < x->nb_spl; j++) {
		const struct lb_as_inst *i = lb_as_inst_find(s, in[j].inst);
		struct lb_leader_be_load m;

		if (i == NULL ||
		    !lb_leader_merge_be(r->loads, (unsigned int)r->nb_loads,
					&i->ip, i->port, &m))
			continue;
		in[j].seen = true;
		in[j].spl = m.spl;
		in[j].gen_ns = x->spl_now_ns > m.age_ns
				       ? x->spl_now_ns - m.age_ns
				       : 0;
	}
}

/* lb-control stops: a leader hands over (its instances stay for the
 * next one, which it lets take the lease at once). */
static void
cl_leave(struct lb_scale *sc, struct rsvc *r)
{
	if (!r->taken)
		return;
	if (r->drv != NULL)
		r->ops->forget(r->drv);
	r->drv = NULL;
	lb_leader_release(sc->leader, r->cl_svc, r->lease.term);
	r->taken = false;
	logf_("%s: lease of term %llu given up; the instances stay for the "
	      "next leader",
	      r->cl_name, (unsigned long long)r->lease.term);
}

/* Carries out a decision: the one path for automatic and manual ones. */
static void
carry_out(struct lb_scale *sc, struct lb_as_svc *s, struct rsvc *r,
	  const struct lb_as_decision *d, uint64_t now)
{
	const struct lb_conf_svc_key *k = lb_as_svc_key(s);
	char l[LABEL_LEN];

	ulabel(s, l, sizeof(l));
	if (d->action != LB_SG_NONE)
		logf_("%s: %s %s %u (%s)", l, d->manual ? "manual" : "auto",
		      lb_scale_guard_action_name(d->action), d->count,
		      d->reason);
	for (uint32_t n = 0; n < d->count; n++) {
		struct lb_as_inst *i;

		switch (d->action) {
		case LB_SG_UP:
			i = lb_as_inst_add(s, LB_AS_ORCH, LB_AS_STARTING, now);
			if (i == NULL)
				return;
			if (r->drv == NULL ||
			    r->ops->start(r->drv, i->id, now) != 0) {
				lb_as_note_driver_error(s);
				lb_as_inst_set(s, i, LB_AS_FAILED, now,
					       "driver refused the start");
			}
			break;
		case LB_SG_DOWN:
			i = newest_active(s);
			if (i == NULL)
				return; /* static backends are not ours */
			if (lb_conf_be_drain_ip(sc->ctl->conf, k, &i->ip, i->port,
					     true, NULL) == 0) {
				lb_as_inst_set(s, i, LB_AS_DRAINING, now,
					       "scaled down");
				logf_("%s: instance %u draining", l, i->id);
			}
			break;
		case LB_SG_REMOVE_PENDING:
			i = oldest_pending(s);
			if (i == NULL)
				return;
			logf_("%s: instance %u not healthy within the "
			      "start-up timeout; removed",
			      l, i->id);
			be_del(sc, k, i);
			inst_stop(s, r, i, now, true, "start-up timeout");
			break;
		default:
			return;
		}
	}
}

static void
evaluate(struct lb_scale *sc, struct lb_as_svc *s, struct rsvc *r, uint64_t now)
{
	struct lb_as_spl_in in[LB_AS_INST_MAX];
	struct lb_as_input x = {.now_ns = now, .spl = in};
	struct lb_as_decision d;
	const struct lb_conf_svc *sv;
	struct lb_view_svc vs;
	bool pooled;
	int slot;

	/* Decisions on instances that run but are not known yet would
	 * start too many, or stop the ones that serve. */
	if (r->drv != NULL && r->ops->synced != NULL && !r->ops->synced(r->drv))
		return;
	if (lb_as_take_manual(s, now, &d) == 1)
		carry_out(sc, s, r, &d, now);
	if (!lb_as_due(s, now) || sc->ctl->view == NULL)
		return;
	slot = view_svc(sc->ctl, lb_as_svc_key(s));
	sv = lb_conf_svc_find(sc->ctl->conf, lb_as_svc_key(s));
	pooled = sv != NULL && sv->nb_pool > 0;
	x.spl_now_ns = lb_view_now(sc->ctl->view);
	/* A service with named pools: the requests in flight of the unit's
	 * pool, summed over its backends (the repository holds them). */
	if (!pooled && slot >= 0 &&
	    lb_view_svc_get(sc->ctl->view, (uint32_t)slot, &vs) == 0)
		x.inflight = vs.inflight;
	for (unsigned int j = 0; pooled && j < lb_as_nb_inst(s); j++) {
		struct lb_as_inst *i = lb_as_inst_at(s, j);
		struct lb_view_be *vb;

		if (!lb_as_inst_placed(i) || !in_table(i->state))
			continue;
		vb = view_be(sc, slot, &i->ip, i->port);
		x.inflight += vb != NULL ? vb->inflight : 0;
	}
	for (unsigned int j = 0; j < lb_as_nb_inst(s); j++) {
		struct lb_as_inst *i = lb_as_inst_at(s, j);
		struct lb_view_be *vb;

		if (i->state != LB_AS_ACTIVE)
			continue;
		vb = view_be(sc, slot, &i->ip, i->port);
		in[x.nb_spl++] = (struct lb_as_spl_in){
			.inst = i->id,
			.seen = vb != NULL && vb->l7.spl_seen,
			.spl = vb != NULL ? vb->l7.spl : 0,
			.gen_ns = vb != NULL ? vb->l7.spl_gen_ns : 0,
		};
		/* A report stamped after the view's now is the clock's
		 * rounding, not the future. */
		if (in[x.nb_spl - 1].gen_ns > x.spl_now_ns)
			in[x.nb_spl - 1].gen_ns = x.spl_now_ns;
	}
	cl_merge_input(sc, s, r, &x, in);
	if (lb_as_eval(s, &x, &d) == 0)
		carry_out(sc, s, r, &d, now);
}

/* A service no longer autoscaled: its instances go, then its state. */
static bool
wind_down(struct lb_scale *sc, struct lb_as_svc *s, struct rsvc *r,
	  uint64_t now)
{
	const struct lb_conf_svc_key *k = lb_as_svc_key(s);
	bool svc_there = lb_conf_svc_find(sc->ctl->conf, k) != NULL;
	unsigned int left = 0;

	for (unsigned int j = lb_as_nb_inst(s); j-- > 0;) {
		struct lb_as_inst *i = lb_as_inst_at(s, j);

		if (i->origin != LB_AS_ORCH)
			continue;
		if (i->state == LB_AS_ACTIVE && svc_there) {
			if (lb_conf_be_drain_ip(sc->ctl->conf, k, &i->ip, i->port,
					     true, NULL) == 0)
				lb_as_inst_set(s, i, LB_AS_DRAINING, now,
					       "autoscaling off");
		} else if (i->state == LB_AS_STARTING ||
			   i->state == LB_AS_PENDING ||
			   (i->state == LB_AS_ACTIVE && !svc_there) ||
			   (i->state == LB_AS_DRAINING && !svc_there)) {
			be_del(sc, k, i);
			inst_stop(s, r, i, now, false, "autoscaling off");
		}
		left += lb_as_inst_find(s, i->id) != NULL &&
			i->state != LB_AS_FAILED;
	}
	return left == 0 && (r->drv == NULL || r->ops->busy(r->drv) == 0);
}

void
lb_scale_tick(struct lb_scale *sc, uint64_t now)
{
	struct lb_ctl *ctl;
	uint64_t gen0, agen0;

	if (sc == NULL)
		return;
	ctl = sc->ctl;
	gen0 = lb_conf_generation(ctl->conf);
	agen0 = lb_as_generation(ctl->as);

	for (unsigned int n = lb_as_nb_svcs(ctl->as); n-- > 0;) {
		struct lb_as_svc *s = lb_as_svc_at(ctl->as, n);
		const struct lb_conf_svc *sv =
			lb_conf_svc_find(ctl->conf, lb_as_svc_key(s));
		struct lb_orch_ev ev[EV_MAX];
		struct rsvc *r = rs_get(sc, s);
		int pidx = lb_as_svc_pool_index(s, sv);
		unsigned int ne;

		if (r == NULL)
			continue;
		/* Its service or its pool deleted: its autoscaler goes. */
		if (pidx < 0 && !lb_as_svc_deleted(s))
			lb_as_pool_del(ctl->as, lb_as_svc_key(s),
				       lb_as_svc_pool(s));
		if (cl_tick(sc, s, r, now)) {
			/* A follower: the leader decides, manual actions
			 * included. */
			lb_as_inst_sync(s, sv, now);
			if (lb_as_drop_manual(s) != 0)
				logf_("%s: manual action dropped: the scaling "
				      "leader is %s",
				      r->cl_name,
				      r->lease.leader[0] != '\0'
					      ? r->lease.leader
					      : "unknown");
			continue;
		}
		if (!lb_as_svc_deleted(s))
			rs_driver(r, lb_as_svc_conf(s));
		lb_as_inst_sync(s, sv, now);
		/* A leader's driver acts once its list is in Redis. */
		if (r->drv != NULL && !(r->cl_on && r->unpublished)) {
			ne = r->ops->poll(r->drv, now, ev, EV_MAX);
			for (unsigned int e = 0; e < ne; e++)
				on_event(sc, s, r, &ev[e], now);
		}
		lifecycle(sc, s, r, now);
		if (lb_as_svc_deleted(s)) {
			if (wind_down(sc, s, r, now)) {
				rs_free(sc, r, 0);
				lb_as_svc_reap(ctl->as, s);
			}
			continue;
		}
		evaluate(sc, s, r, now);
		if (r->cl_on)
			cl_publish(sc, s, r, now);
	}
	if (lb_conf_generation(ctl->conf) != gen0 ||
	    lb_as_generation(ctl->as) != agen0)
		sc->commit(sc->ctx);
}

void
lb_scale_free(struct lb_scale *sc)
{
	if (sc == NULL)
		return;
	while (sc->nb_rs > 0)
		rs_free(sc, sc->rs[0], 10000000000ull);
	free(sc->vb);
	free(sc);
}
