/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The autoscaler's decisions, instance repository, history and `scale`
 * commands (control/scale/autoscale.h). The configuration of every service
 * lives in one flat struct (struct cfgset) that lb-control copies before
 * a request and puts back when the request fails; the runtime state of a
 * service (policies, guard, instances, history) follows it lazily
 * (reconcile()).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autoscale.h"
#include "inflight.h"
#include "prom.h"
#include "spl.h"

struct cfg {
	struct lb_conf_svc_key key;
	struct lb_as_conf c;
	bool paused;
};

struct cfgset {
	unsigned int n;
	struct cfg s[LB_CONF_MAX_SVCS];
};

struct lb_as_svc {
	struct lb_conf_svc_key key;
	struct lb_as_conf conf; /* what the policies were built from */
	bool paused;
	bool deleted;
	uint64_t conf_gen;
	struct lb_spl_svc *spl;
	struct lb_inflight *ifl;
	struct lb_scale_guard *guard;
	int32_t manual; /* queued: > 0 up, < 0 down */
	uint64_t last_eval_ns;
	bool evaluated;
	bool adopted; /* instances adopted since the last evaluation */
	uint32_t next_id;
	bool used[LB_AS_INST_MAX];
	bool spl_member[LB_AS_INST_MAX];
	struct lb_as_inst inst[LB_AS_INST_MAX];
	unsigned int hist_head, hist_len;
	struct lb_as_decision hist[LB_AS_HIST];
	struct lb_as_stats st;
};

struct lb_as {
	const struct lb_conf *conf;
	struct cfgset cfg;
	uint64_t gen;
	struct lb_as_svc *rt[LB_CONF_MAX_SVCS];
	unsigned int nb_rt;
	lb_as_driver_check_fn *drv_check;
	uint64_t (*now)(void *);
	void *now_arg;
	json_t **data;
	lb_as_names_fn *drv_names;
	/* `scale set`'s long help, with the names of the drivers and decay
	 * functions this program has. */
	char set_help[2048];
};

static const char *const state_names[LB_AS_STATE_COUNT] = {
	"starting", "pending", "active", "draining", "stopping", "failed",
};

const char *
lb_as_state_name(enum lb_as_state st)
{
	return (unsigned int)st < LB_AS_STATE_COUNT ? state_names[st] : "?";
}

const char *
lb_as_origin_name(enum lb_as_origin o)
{
	return o == LB_AS_STATIC ? "static" : o == LB_AS_ORCH ? "orch" : "?";
}

const char *
lb_as_policy_name(enum lb_as_policy p)
{
	return p == LB_AS_POLICY_SPL	    ? "spl"
	       : p == LB_AS_POLICY_INFLIGHT ? "inflight"
					    : "?";
}

void
lb_as_conf_default(struct lb_as_conf *c)
{
	if (c == NULL)
		return;
	memset(c, 0, sizeof(*c));
	c->policy = LB_AS_POLICY_SPL;
	c->lower = LB_SPL_LOWER_DEFAULT;
	c->upper = LB_SPL_UPPER_DEFAULT;
	snprintf(c->decay, sizeof(c->decay), "%s", LB_AS_DECAY_DEFAULT);
	c->decay_ns = LB_SPL_HALFLIFE_DEFAULT_NS;
	c->queue_length = LB_INFLIGHT_QUEUE_LENGTH_DEFAULT;
	c->rounds = LB_INFLIGHT_ROUNDS_DEFAULT;
	lb_scale_guard_params_recommended(&c->guard);
	/* The policies have bands of their own (SPL's two thresholds,
	 * WSO2's strict comparisons); a dead band on top would swallow
	 * SPL's +-1 steps once a service has 10 instances. */
	c->guard.tolerance = 0;
	c->guard.startup_timeout_ns = LB_AS_STARTUP_DEFAULT_NS;
	c->interval_ns = LB_AS_INTERVAL_DEFAULT_NS;
	c->drain_timeout_ns = LB_AS_DRAIN_DEFAULT_NS;
	snprintf(c->driver, sizeof(c->driver), "process");
	c->inst_port = 80;
	c->exec_timeout_ns = LB_AS_EXEC_TIMEOUT_DEFAULT_NS;
}

/* ---- runtime state of a service ---- */

static void
rt_policies_free(struct lb_as_svc *s)
{
	lb_spl_svc_free(s->spl);
	lb_inflight_free(s->ifl);
	lb_scale_guard_free(s->guard);
	s->spl = NULL;
	s->ifl = NULL;
	s->guard = NULL;
}

/* Builds the policies of @p c; on failure @p s keeps its old ones. */
static int
rt_policies(struct lb_as_svc *s, const struct lb_as_conf *c)
{
	struct lb_spl_conf sc;
	struct lb_inflight_params ip;
	struct lb_spl_svc *spl;
	struct lb_inflight *ifl;
	struct lb_scale_guard *g;

	lb_spl_conf_init(&sc, LB_SPL_INST_MAX);
	sc.lower = c->lower;
	sc.upper = c->upper;
	sc.decay = c->decay;
	sc.decay_params.halflife_ns = c->decay_ns;
	sc.decay_params.norm_span_ns = c->decay_ns;
	lb_inflight_params_default(&ip);
	ip.queue_length_per_node = c->queue_length;
	ip.rounds_to_average = c->rounds;
	/* Bounds and the pending guard are scale_guard's job. */
	ip.min_instances = 0;
	ip.max_instances = LB_INFLIGHT_INSTANCES_MAX;
	ip.pending_guard = false;
	ip.top_up_to_min = false;
	spl = lb_spl_svc_create(&sc);
	ifl = lb_inflight_create(&ip);
	g = lb_scale_guard_create(&c->guard);
	if (spl == NULL || ifl == NULL || g == NULL) {
		lb_spl_svc_free(spl);
		lb_inflight_free(ifl);
		lb_scale_guard_free(g);
		return -errno;
	}
	rt_policies_free(s);
	s->spl = spl;
	s->ifl = ifl;
	s->guard = g;
	s->conf = *c;
	memset(s->spl_member, 0, sizeof(s->spl_member));
	s->conf_gen++;
	return 0;
}

static bool
key_eq(const struct lb_conf_svc_key *a, const struct lb_conf_svc_key *b)
{
	return a->proto == b->proto && a->vip == b->vip && a->port == b->port;
}

static struct lb_as_svc *
rt_find(struct lb_as *as, const struct lb_conf_svc_key *k)
{
	for (unsigned int i = 0; i < as->nb_rt; i++)
		if (key_eq(&as->rt[i]->key, k))
			return as->rt[i];
	return NULL;
}

static struct cfg *
cfg_find(struct cfgset *cs, const struct lb_conf_svc_key *k)
{
	for (unsigned int i = 0; i < cs->n; i++)
		if (key_eq(&cs->s[i].key, k))
			return &cs->s[i];
	return NULL;
}

/* Brings the runtime states in line with the configuration. */
static void
reconcile(struct lb_as *as)
{
	for (unsigned int i = 0; i < as->cfg.n; i++) {
		struct cfg *c = &as->cfg.s[i];
		struct lb_as_svc *s = rt_find(as, &c->key);

		if (s == NULL) {
			if (as->nb_rt == LB_CONF_MAX_SVCS)
				continue;
			s = calloc(1, sizeof(*s));
			if (s == NULL)
				continue;
			s->key = c->key;
			if (rt_policies(s, &c->c) != 0) {
				free(s);
				continue;
			}
			as->rt[as->nb_rt++] = s;
		} else if (s->deleted ||
			   memcmp(&s->conf, &c->c, sizeof(c->c)) != 0) {
			s->deleted = false;
			rt_policies(s, &c->c);
		}
		s->paused = c->paused;
	}
	for (unsigned int i = 0; i < as->nb_rt; i++)
		if (cfg_find(&as->cfg, &as->rt[i]->key) == NULL)
			as->rt[i]->deleted = true;
}

struct lb_as *
lb_as_create(const struct lb_conf *conf)
{
	struct lb_as *as = calloc(1, sizeof(*as));

	if (as == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	as->conf = conf;
	return as;
}

void
lb_as_free(struct lb_as *as)
{
	if (as == NULL)
		return;
	for (unsigned int i = 0; i < as->nb_rt; i++) {
		rt_policies_free(as->rt[i]);
		free(as->rt[i]);
	}
	free(as);
}

uint64_t
lb_as_generation(const struct lb_as *as)
{
	return as != NULL ? as->gen : 0;
}

void *
lb_as_snapshot(const struct lb_as *as)
{
	struct cfgset *c = malloc(sizeof(*c));

	if (c != NULL && as != NULL)
		*c = as->cfg;
	return c;
}

void
lb_as_restore(struct lb_as *as, const void *snap)
{
	if (as == NULL || snap == NULL)
		return;
	if (memcmp(&as->cfg, snap, sizeof(as->cfg)) == 0)
		return;
	as->cfg = *(const struct cfgset *)snap;
	as->gen++;
	reconcile(as);
}

unsigned int
lb_as_nb_svcs(const struct lb_as *as)
{
	return as != NULL ? as->nb_rt : 0;
}

struct lb_as_svc *
lb_as_svc_at(struct lb_as *as, unsigned int i)
{
	return as != NULL && i < as->nb_rt ? as->rt[i] : NULL;
}

struct lb_as_svc *
lb_as_svc_find(struct lb_as *as, const struct lb_conf_svc_key *k)
{
	struct lb_as_svc *s;

	if (as == NULL || k == NULL)
		return NULL;
	s = rt_find(as, k);
	return s != NULL && !s->deleted ? s : NULL;
}

void
lb_as_svc_reap(struct lb_as *as, struct lb_as_svc *s)
{
	for (unsigned int i = 0; as != NULL && i < as->nb_rt; i++) {
		if (as->rt[i] != s)
			continue;
		rt_policies_free(s);
		free(s);
		as->rt[i] = as->rt[--as->nb_rt];
		return;
	}
}

bool
lb_as_svc_deleted(const struct lb_as_svc *s)
{
	return s->deleted;
}

void
lb_as_set_driver_check(struct lb_as *as, lb_as_driver_check_fn *fn)
{
	as->drv_check = fn;
}

void
lb_as_set_driver_names(struct lb_as *as, lb_as_names_fn *fn)
{
	as->drv_names = fn;
}

void
lb_as_set_clock(struct lb_as *as, uint64_t (*now)(void *), void *arg)
{
	as->now = now;
	as->now_arg = arg;
}

void
lb_as_set_data_slot(struct lb_as *as, json_t **slot)
{
	as->data = slot;
}

const struct lb_conf_svc_key *
lb_as_svc_key(const struct lb_as_svc *s)
{
	return &s->key;
}

const struct lb_as_conf *
lb_as_svc_conf(const struct lb_as_svc *s)
{
	return &s->conf;
}

bool
lb_as_svc_paused(const struct lb_as_svc *s)
{
	return s->paused;
}

const struct lb_as_stats *
lb_as_svc_stats(const struct lb_as_svc *s)
{
	return &s->st;
}

uint64_t
lb_as_svc_conf_gen(const struct lb_as_svc *s)
{
	return s->conf_gen;
}

/* ---- configuration ---- */

static int
conf_check(const struct lb_as *as, const struct lb_as_conf *c,
	   struct lb_cmd_out *out)
{
	struct lb_spl_decay_params dp = {c->decay_ns, c->decay_ns};
	const struct lb_spl_decay_ops *d = lb_spl_decay_find(c->decay);
	int rc;

	if (!(c->lower >= 0 && c->upper >= c->lower && isfinite(c->upper)))
		return lb_cmd_error(out, -EINVAL,
				    "thresholds must satisfy 0 <= lower <= "
				    "upper (lower %g, upper %g)",
				    c->lower, c->upper);
	if (d == NULL) {
		char names[256];

		lb_spl_decay_names(names, sizeof(names), ", ");
		return lb_cmd_error(out, -EINVAL,
				    "unknown decay '%s'; expected one of %s",
				    c->decay, names);
	}
	if (d->check != NULL && d->check(&dp) != 0)
		return lb_cmd_error(out, -EINVAL,
				    "decay-time must be above 0 for decay %s",
				    c->decay);
	rc = lb_scale_guard_params_check(&c->guard);
	if (rc != 0)
		return lb_cmd_error(out, rc,
				    "min %u / max %u: need 1 <= max, min <= "
				    "max, at most %u",
				    c->guard.min_instances,
				    c->guard.max_instances, LB_AS_INST_MAX);
	if (c->guard.max_instances > LB_AS_INST_MAX)
		return lb_cmd_error(out, -ERANGE, "max %u above %u",
				    c->guard.max_instances, LB_AS_INST_MAX);
	if (as->drv_check != NULL)
		return as->drv_check(c, out);
	return 0;
}

int
lb_as_svc_set(struct lb_as *as, const struct lb_conf_svc_key *k,
	      const struct lb_as_conf *c, struct lb_cmd_out *out)
{
	char s[LB_CMD_ADDR_STRLEN + 8], a[LB_CMD_ADDR_STRLEN];
	const struct lb_conf_svc *sv;
	struct cfg *x;
	int rc;

	if (as == NULL || k == NULL || c == NULL)
		return lb_cmd_error(out, -EINVAL, "no autoscaler");
	snprintf(s, sizeof(s), "%s %s", lb_cmd_proto_name(k->proto),
		 lb_cmd_fmt_ipv4_port(k->vip, k->port, a));
	sv = as->conf != NULL ? lb_conf_svc_find(as->conf, k) : NULL;
	if (as->conf != NULL && sv == NULL)
		return lb_cmd_error(out, -ENOENT, "no service %s", s);
	/* Both policies read what the workers learn from HTTP responses:
	 * X-SPL, and requests awaiting their response. */
	if (sv != NULL && !sv->opts.http)
		return lb_cmd_error(out, -EINVAL,
				    "service %s does not follow HTTP; the %s "
				    "policy needs it (service set %s http on)",
				    s, lb_as_policy_name(c->policy), s);
	rc = conf_check(as, c, out);
	if (rc != 0)
		return rc;
	x = cfg_find(&as->cfg, k);
	if (x == NULL) {
		if (as->cfg.n == LB_CONF_MAX_SVCS)
			return lb_cmd_error(out, -ENOSPC,
					    "too many autoscaled services");
		x = &as->cfg.s[as->cfg.n++];
		memset(x, 0, sizeof(*x));
		x->key = *k;
	}
	x->c = *c;
	as->gen++;
	reconcile(as);
	return 0;
}

int
lb_as_svc_del(struct lb_as *as, const struct lb_conf_svc_key *k)
{
	struct cfg *x = as != NULL ? cfg_find(&as->cfg, k) : NULL;

	if (x == NULL)
		return -ENOENT;
	*x = as->cfg.s[--as->cfg.n];
	as->gen++;
	reconcile(as);
	return 0;
}

/* ---- instance repository ---- */

unsigned int
lb_as_nb_inst(const struct lb_as_svc *s)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < LB_AS_INST_MAX; i++)
		n += s->used[i];
	return n;
}

struct lb_as_inst *
lb_as_inst_at(struct lb_as_svc *s, unsigned int i)
{
	for (unsigned int j = 0; j < LB_AS_INST_MAX; j++)
		if (s->used[j] && i-- == 0)
			return &s->inst[j];
	return NULL;
}

struct lb_as_inst *
lb_as_inst_find(struct lb_as_svc *s, uint32_t id)
{
	for (unsigned int j = 0; j < LB_AS_INST_MAX; j++)
		if (s->used[j] && s->inst[j].id == id)
			return &s->inst[j];
	return NULL;
}

struct lb_as_inst *
lb_as_inst_by_addr(struct lb_as_svc *s, uint32_t ip, uint16_t port)
{
	for (unsigned int j = 0; j < LB_AS_INST_MAX; j++)
		if (s->used[j] && s->inst[j].ip == ip &&
		    s->inst[j].port == port && ip != 0)
			return &s->inst[j];
	return NULL;
}

struct lb_as_inst *
lb_as_inst_add(struct lb_as_svc *s, enum lb_as_origin o, enum lb_as_state state,
	       uint64_t now_ns)
{
	for (unsigned int j = 0; j < LB_AS_INST_MAX; j++) {
		if (s->used[j])
			continue;
		s->used[j] = true;
		s->inst[j] = (struct lb_as_inst){
			.id = s->next_id++,
			.origin = o,
			.state = state,
			.since_ns = now_ns,
			.requested_ns = now_ns,
		};
		if (o == LB_AS_ORCH)
			s->st.started++;
		return &s->inst[j];
	}
	return NULL;
}

struct lb_as_inst *
lb_as_inst_adopt(struct lb_as_svc *s, uint64_t now_ns)
{
	struct lb_as_inst *i =
		lb_as_inst_add(s, LB_AS_ORCH, LB_AS_STARTING, now_ns);

	if (i == NULL)
		return NULL;
	s->st.started--; /* lb_as_inst_add() counted a start */
	s->st.adopted++;
	s->adopted = true;
	snprintf(i->why, sizeof(i->why), "adopted");
	return i;
}

void
lb_as_inst_set(struct lb_as_svc *s, struct lb_as_inst *i,
	       enum lb_as_state state, uint64_t now_ns, const char *why)
{
	if (i->state == LB_AS_PENDING && state == LB_AS_ACTIVE)
		s->st.joined++;
	if (state == LB_AS_FAILED && i->state != LB_AS_FAILED)
		s->st.failed++;
	i->state = state;
	i->since_ns = now_ns;
	if (why != NULL)
		snprintf(i->why, sizeof(i->why), "%s", why);
}

void
lb_as_inst_remove(struct lb_as_svc *s, struct lb_as_inst *i)
{
	unsigned int j = (unsigned int)(i - s->inst);

	if (j >= LB_AS_INST_MAX || !s->used[j])
		return;
	if (i->origin == LB_AS_ORCH && i->state != LB_AS_FAILED)
		s->st.drained++;
	if (s->spl_member[j] && s->spl != NULL && j < LB_SPL_INST_MAX)
		lb_spl_inst_remove(s->spl, j);
	s->spl_member[j] = false;
	s->used[j] = false;
}

void
lb_as_note_driver_error(struct lb_as_svc *s)
{
	s->st.drv_errors++;
}

void
lb_as_note_drain_timeout(struct lb_as_svc *s)
{
	s->st.drain_timeouts++;
}

void
lb_as_inst_count(const struct lb_as_svc *s, uint32_t n[LB_AS_STATE_COUNT])
{
	memset(n, 0, sizeof(uint32_t) * LB_AS_STATE_COUNT);
	for (unsigned int j = 0; j < LB_AS_INST_MAX; j++)
		if (s->used[j] &&
		    (unsigned int)s->inst[j].state < LB_AS_STATE_COUNT)
			n[s->inst[j].state]++;
}

/* ---- decisions ---- */

bool
lb_as_due(const struct lb_as_svc *s, uint64_t now_ns)
{
	return !s->deleted && (!s->evaluated ||
			       now_ns - s->last_eval_ns >= s->conf.interval_ns);
}

static void
hist_push(struct lb_as_svc *s, const struct lb_as_decision *d)
{
	unsigned int at = (s->hist_head + s->hist_len) % LB_AS_HIST;

	s->hist[at] = *d;
	if (s->hist_len < LB_AS_HIST)
		s->hist_len++;
	else
		s->hist_head = (s->hist_head + 1) % LB_AS_HIST;
}

unsigned int
lb_as_hist_len(const struct lb_as_svc *s)
{
	return s->hist_len;
}

const struct lb_as_decision *
lb_as_hist_at(const struct lb_as_svc *s, unsigned int i)
{
	if (i >= s->hist_len)
		return NULL;
	return &s->hist[(s->hist_head + i) % LB_AS_HIST];
}

/* running: active instances; pending: asked for, not active yet. */
static void
pool(const struct lb_as_svc *s, uint32_t *running, uint32_t *pending,
     uint64_t *oldest)
{
	*running = 0;
	*pending = 0;
	*oldest = UINT64_MAX;
	for (unsigned int j = 0; j < LB_AS_INST_MAX; j++) {
		const struct lb_as_inst *i = &s->inst[j];

		if (!s->used[j])
			continue;
		if (i->state == LB_AS_ACTIVE)
			(*running)++;
		if (i->state == LB_AS_STARTING || i->state == LB_AS_PENDING) {
			(*pending)++;
			if (i->requested_ns < *oldest)
				*oldest = i->requested_ns;
		}
	}
	if (*pending == 0)
		*oldest = 0;
}

/* Active instances are the SPL policy's instances (the seed's table 6). */
static int
spl_desired(struct lb_as_svc *s, const struct lb_as_input *in, uint32_t cur,
	    struct lb_as_decision *d, char *why, size_t len)
{
	struct lb_spl_decision *sd;
	int rc;

	for (unsigned int j = 0; j < LB_SPL_INST_MAX; j++) {
		bool want = s->used[j] && s->inst[j].state == LB_AS_ACTIVE;

		if (want && !s->spl_member[j] &&
		    lb_spl_inst_add(s->spl, j, in->spl_now_ns) == 0)
			s->spl_member[j] = true;
		if (!want && s->spl_member[j]) {
			lb_spl_inst_remove(s->spl, j);
			s->spl_member[j] = false;
		}
	}
	for (unsigned int k = 0; k < in->nb_spl; k++) {
		const struct lb_as_spl_in *x = &in->spl[k];

		for (unsigned int j = 0; j < LB_SPL_INST_MAX; j++)
			if (s->spl_member[j] && s->inst[j].id == x->inst &&
			    x->seen)
				lb_spl_report(s->spl, j, x->spl, x->gen_ns,
					      in->spl_now_ns);
	}
	sd = malloc(sizeof(*sd));
	if (sd == NULL)
		return -ENOMEM;
	rc = lb_spl_decide(s->spl, in->spl_now_ns, sd);
	if (rc == 0) {
		d->load = sd->total;
		d->desired = sd->action == LB_SPL_INCREMENT ? cur + 1.0
			     : sd->action == LB_SPL_DECREMENT && cur > 0
				     ? cur - 1.0
				     : cur;
		snprintf(why, len, "%s", lb_spl_reason_str(sd->reason));
	}
	free(sd);
	return rc;
}

static int
inflight_desired(struct lb_as_svc *s, const struct lb_as_input *in,
		 uint32_t running, uint32_t pending, struct lb_as_decision *d,
		 char *why, size_t len)
{
	struct lb_inflight_decision id;
	uint32_t sample =
		in->inflight > UINT32_MAX ? UINT32_MAX : (uint32_t)in->inflight;
	int rc;

	rc = lb_inflight_tick(s->ifl, sample, running, pending, &id);
	if (rc != 0)
		return rc;
	d->load = id.average;
	d->desired =
		id.action == LB_INFLIGHT_NOOP ? running + pending : id.target;
	snprintf(why, len, "%s", lb_inflight_reason_name(id.reason));
	return 0;
}

int
lb_as_eval(struct lb_as_svc *s, const struct lb_as_input *in,
	   struct lb_as_decision *d)
{
	struct lb_scale_guard_input gi;
	struct lb_scale_guard_decision gd;
	uint32_t running, pending;
	uint64_t oldest;
	char why[32] = "";
	int rc;

	if (s == NULL || in == NULL || d == NULL || s->deleted)
		return -EINVAL;
	s->last_eval_ns = in->now_ns;
	s->evaluated = true;
	pool(s, &running, &pending, &oldest);
	/* What the adopted pool was decided on is not known: its count
	 * stands for it, so that the stabilization windows hold it. */
	if (s->adopted)
		lb_scale_guard_note(s->guard, in->now_ns, running + pending);
	s->adopted = false;
	memset(d, 0, sizeof(*d));
	d->now_ns = in->now_ns;
	d->policy = s->conf.policy;
	d->running = running;
	d->pending = pending;
	d->target = running + pending;
	if (s->paused) {
		/* Instances that never start are removed even so. */
		uint64_t t = s->conf.guard.startup_timeout_ns;

		if (pending == 0 || t == 0 || in->now_ns - oldest < t)
			return 0;
		d->action = LB_SG_REMOVE_PENDING;
		d->count = 1;
		snprintf(d->reason, sizeof(d->reason),
			 "paused; start-up timeout");
		hist_push(s, d);
		return 0;
	}
	if (s->conf.policy == LB_AS_POLICY_SPL)
		rc = spl_desired(s, in, running + pending, d, why, sizeof(why));
	else
		rc = inflight_desired(s, in, running, pending, d, why,
				      sizeof(why));
	if (rc != 0)
		return rc;
	gi = (struct lb_scale_guard_input){
		.now_ns = in->now_ns,
		.desired = d->desired,
		.running = running,
		.pending = pending,
		.oldest_pending_ns = oldest,
	};
	rc = lb_scale_guard_decide(s->guard, &gi, &gd);
	if (rc != 0)
		return rc;
	s->st.evals++;
	d->action = gd.action;
	d->count = gd.count;
	d->target = gd.target;
	s->st.ups += gd.action == LB_SG_UP;
	s->st.downs += gd.action == LB_SG_DOWN;
	snprintf(d->reason, sizeof(d->reason), "%s; %s", why,
		 lb_scale_guard_reason_name(gd.reason));
	hist_push(s, d);
	return 0;
}

int
lb_as_take_manual(struct lb_as_svc *s, uint64_t now_ns,
		  struct lb_as_decision *d)
{
	uint32_t running, pending, cur, want;
	uint64_t oldest;
	int32_t m;

	if (s == NULL || d == NULL || s->manual == 0 || s->deleted)
		return 0;
	m = s->manual;
	s->manual = 0;
	pool(s, &running, &pending, &oldest);
	cur = running + pending;
	if (m > 0)
		want = cur + (uint32_t)m;
	else
		want = (uint32_t)-m >= cur ? 0 : cur - (uint32_t)-m;
	if (want > s->conf.guard.max_instances)
		want = s->conf.guard.max_instances;
	if (want < s->conf.guard.min_instances)
		want = s->conf.guard.min_instances;
	memset(d, 0, sizeof(*d));
	d->now_ns = now_ns;
	d->manual = true;
	d->policy = s->conf.policy;
	d->running = running;
	d->pending = pending;
	d->desired = want;
	d->target = want;
	d->action = want > cur	 ? LB_SG_UP
		    : want < cur ? LB_SG_DOWN
				 : LB_SG_NONE;
	d->count = want > cur ? want - cur : cur - want;
	snprintf(d->reason, sizeof(d->reason), "manual %s %d%s",
		 m > 0 ? "up" : "down", m > 0 ? m : -m,
		 d->count != (uint32_t)(m > 0 ? m : -m) ? "; bounded by min/max"
							: "");
	s->st.manual++;
	s->st.ups += d->action == LB_SG_UP;
	s->st.downs += d->action == LB_SG_DOWN;
	hist_push(s, d);
	return 1;
}

/* ---- commands ---- */

enum opt_kind { K_POLICY, K_F64, K_NAME, K_STR, K_U32, K_DUR, K_BOOL };

struct opt {
	const char *name;
	enum opt_kind kind;
	size_t off;
	uint64_t min, max; /* U32, DUR; STR/NAME: size */
};

#define OFF(f) offsetof(struct lb_as_conf, f)
#define DAY_NS (86400ull * LB_SG_NS_PER_S)
static const struct opt opts[] = {
	{"policy", K_POLICY, OFF(policy), 0, 0},
	{"lower", K_F64, OFF(lower), 0, 0},
	{"upper", K_F64, OFF(upper), 0, 0},
	{"decay", K_NAME, OFF(decay), 0,
	 sizeof(((struct lb_as_conf *)0)->decay)},
	{"decay-time", K_DUR, OFF(decay_ns), 0, DAY_NS},
	{"queue-length", K_U32, OFF(queue_length), 1, 1u << 20},
	{"rounds", K_U32, OFF(rounds), 1, LB_INFLIGHT_ROUNDS_MAX},
	{"min", K_U32, OFF(guard.min_instances), 0, LB_AS_INST_MAX},
	{"max", K_U32, OFF(guard.max_instances), 1, LB_AS_INST_MAX},
	{"tolerance", K_F64, OFF(guard.tolerance), 0, 0},
	{"up-window", K_DUR, OFF(guard.up_window_ns), 0, DAY_NS},
	{"down-window", K_DUR, OFF(guard.down_window_ns), 0, DAY_NS},
	{"up-cooldown", K_DUR, OFF(guard.up_cooldown_ns), 0, DAY_NS},
	{"down-cooldown", K_DUR, OFF(guard.down_cooldown_ns), 0, DAY_NS},
	{"max-up-step", K_U32, OFF(guard.max_up_step), 0, LB_AS_INST_MAX},
	{"pending-guard", K_BOOL, OFF(guard.pending_guard), 0, 0},
	{"startup-timeout", K_DUR, OFF(guard.startup_timeout_ns), 0, DAY_NS},
	{"drain-timeout", K_DUR, OFF(drain_timeout_ns), 0, DAY_NS},
	{"interval", K_DUR, OFF(interval_ns), 10000000ull,
	 3600 * LB_SG_NS_PER_S},
	{"driver", K_NAME, OFF(driver), 0, LB_AS_DRIVER_LEN + 1},
	{"command", K_STR, OFF(command), 0, LB_AS_ARG_LEN + 1},
	{"target", K_STR, OFF(target), 0, LB_AS_ARG_LEN + 1},
	{"inst-port", K_U32, OFF(inst_port), 1, 65535},
	{"exec-timeout", K_DUR, OFF(exec_timeout_ns), 1000000ull, DAY_NS},
};
#define NB_OPTS (sizeof(opts) / sizeof(opts[0]))

static int
parse_f64(const char *s, const char *what, double *v, struct lb_cmd_out *out)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(s, &end);
	if (*s == '\0' || *end != '\0' || errno != 0 || !isfinite(x) || x < 0)
		return lb_cmd_error(out, -EINVAL,
				    "invalid %s '%s': expected a number >= 0",
				    what, s);
	*v = x;
	return 0;
}

static int
opt_set(struct lb_as_conf *c, const struct opt *o, const char *v,
	struct lb_cmd_out *out)
{
	char *p = (char *)c + o->off;
	uint64_t u;
	bool b;
	int rc = 0;

	switch (o->kind) {
	case K_POLICY:
		if (strcmp(v, "spl") == 0)
			c->policy = LB_AS_POLICY_SPL;
		else if (strcmp(v, "inflight") == 0)
			c->policy = LB_AS_POLICY_INFLIGHT;
		else
			rc = lb_cmd_error(out, -EINVAL,
					  "invalid policy '%s': expected spl "
					  "or inflight",
					  v);
		break;
	case K_F64:
		rc = parse_f64(v, o->name, (double *)(void *)p, out);
		break;
	case K_NAME:
		rc = lb_cmd_parse_name(v, o->name, o->max - 1, out);
		if (rc == 0)
			snprintf(p, o->max, "%s", v);
		break;
	case K_STR:
		if (strlen(v) >= o->max)
			return lb_cmd_error(out, -ERANGE,
					    "%s too long (more than %u bytes)",
					    o->name, (unsigned int)o->max - 1);
		snprintf(p, o->max, "%s", v);
		break;
	case K_U32:
		rc = lb_cmd_parse_u64(v, o->name, o->min, o->max, &u, out);
		if (rc == 0 && strcmp(o->name, "inst-port") == 0)
			*(uint16_t *)(void *)p = (uint16_t)u;
		else if (rc == 0)
			*(uint32_t *)(void *)p = (uint32_t)u;
		break;
	case K_DUR:
		rc = lb_cmd_parse_duration(v, o->name, o->min, o->max, &u, out);
		if (rc == 0)
			*(uint64_t *)(void *)p = u;
		break;
	case K_BOOL:
		rc = lb_cmd_parse_bool(v, o->name, &b, out);
		if (rc == 0)
			*(bool *)(void *)p = b;
		break;
	}
	return rc;
}

/* Writes option @p o of @p c as its value word. */
static void
opt_fmt(const struct lb_as_conf *c, const struct opt *o, char *buf, size_t n)
{
	const char *p = (const char *)c + o->off;
	char d[LB_CMD_DURATION_STRLEN];

	switch (o->kind) {
	case K_POLICY:
		snprintf(buf, n, "%s", lb_as_policy_name(c->policy));
		break;
	case K_F64:
		snprintf(buf, n, "%.17g", *(const double *)(const void *)p);
		break;
	case K_NAME:
	case K_STR:
		lb_cmd_quote(p, buf, n);
		break;
	case K_U32:
		if (strcmp(o->name, "inst-port") == 0)
			snprintf(buf, n, "%u",
				 *(const uint16_t *)(const void *)p);
		else
			snprintf(buf, n, "%u",
				 *(const uint32_t *)(const void *)p);
		break;
	case K_DUR:
		snprintf(buf, n, "%s",
			 lb_cmd_fmt_duration(*(const uint64_t *)(const void *)p,
					     d));
		break;
	case K_BOOL:
		snprintf(buf, n, "%s",
			 *(const bool *)(const void *)p ? "on" : "off");
		break;
	}
}

static size_t
opt_size(const struct opt *o)
{
	switch (o->kind) {
	case K_POLICY:
		return sizeof(enum lb_as_policy);
	case K_F64:
		return sizeof(double);
	case K_NAME:
	case K_STR:
		return o->max;
	case K_U32:
		return strcmp(o->name, "inst-port") == 0 ? 2 : 4;
	case K_DUR:
		return 8;
	case K_BOOL:
		return sizeof(bool);
	}
	return 0;
}

static int
parse_svc(int argc, char **argv, struct lb_conf_svc_key *k,
	  struct lb_cmd_out *out)
{
	int rc;

	if (argc < 2)
		return lb_cmd_usage(out);
	memset(k, 0, sizeof(*k));
	rc = lb_cmd_parse_proto(argv[0], &k->proto, out);
	if (rc == 0)
		rc = lb_cmd_parse_ipv4_port(argv[1], &k->vip, &k->port, out);
	return rc;
}

static void
svc_label(const struct lb_conf_svc_key *k, char *buf, size_t n)
{
	char a[LB_CMD_ADDR_STRLEN];

	snprintf(buf, n, "%s %s", lb_cmd_proto_name(k->proto),
		 lb_cmd_fmt_ipv4_port(k->vip, k->port, a));
}

static struct lb_as_svc *
want_svc(struct lb_as *as, int argc, char **argv, struct lb_conf_svc_key *k,
	 struct lb_cmd_out *out, int *rc)
{
	struct lb_as_svc *s;
	char l[40];

	*rc = parse_svc(argc, argv, k, out);
	if (*rc != 0)
		return NULL;
	s = lb_as_svc_find(as, k);
	if (s == NULL) {
		svc_label(k, l, sizeof(l));
		*rc = lb_cmd_error(out, -ENOENT,
				   "service %s is not autoscaled (see 'scale "
				   "set')",
				   l);
	}
	return s;
}

static int
cmd_set(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_as *as = ctx;
	struct lb_conf_svc_key k;
	struct lb_as_conf c;
	const struct cfg *x;
	bool seen[NB_OPTS] = {false};
	int rc;

	rc = parse_svc(argc, argv, &k, out);
	if (rc != 0)
		return rc;
	x = cfg_find(&as->cfg, &k);
	if (x != NULL)
		c = x->c;
	else
		lb_as_conf_default(&c);
	for (int i = 2; i < argc; i += 2) {
		unsigned int j;

		for (j = 0; j < NB_OPTS; j++)
			if (strcmp(argv[i], opts[j].name) == 0)
				break;
		if (j == NB_OPTS)
			return lb_cmd_error(out, -EINVAL,
					    "unknown option '%s'; see 'help "
					    "scale set'",
					    argv[i]);
		if (seen[j])
			return lb_cmd_error(out, -EINVAL,
					    "option '%s' given twice", argv[i]);
		seen[j] = true;
		if (i + 1 >= argc)
			return lb_cmd_error(out, -EINVAL,
					    "option '%s' needs a value",
					    argv[i]);
		rc = opt_set(&c, &opts[j], argv[i + 1], out);
		if (rc != 0)
			return rc;
	}
	return lb_as_svc_set(as, &k, &c, out);
}

static int
cmd_del(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_as *as = ctx;
	struct lb_conf_svc_key k;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 2, 2);
	if (rc == 0 && want_svc(as, argc, argv, &k, out, &rc) != NULL)
		rc = lb_as_svc_del(as, &k);
	return rc;
}

static int
pause_resume(struct lb_as *as, int argc, char **argv, bool pause,
	     struct lb_cmd_out *out)
{
	struct lb_conf_svc_key k;
	struct cfg *x;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 2, 2);
	if (rc != 0 || want_svc(as, argc, argv, &k, out, &rc) == NULL)
		return rc;
	x = cfg_find(&as->cfg, &k);
	if (x->paused == pause)
		return lb_cmd_error(out, -EINVAL, "already %s",
				    pause ? "paused" : "running");
	x->paused = pause;
	as->gen++;
	reconcile(as);
	return 0;
}

static int
cmd_pause(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	return pause_resume(ctx, argc, argv, true, out);
}

static int
cmd_resume(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	return pause_resume(ctx, argc, argv, false, out);
}

static int
manual(struct lb_as *as, int argc, char **argv, int sign,
       struct lb_cmd_out *out)
{
	struct lb_conf_svc_key k;
	struct lb_as_svc *s;
	uint64_t n = 1;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 2, 3);
	if (rc != 0 || (s = want_svc(as, argc, argv, &k, out, &rc)) == NULL)
		return rc;
	if (argc == 3) {
		rc = lb_cmd_parse_u64(argv[2], "count", 1, LB_AS_INST_MAX, &n,
				      out);
		if (rc != 0)
			return rc;
	}
	s->manual += sign * (int32_t)n;
	return lb_cmd_printf(out,
			     "queued: scale %s by %" PRIu64
			     " (carried out at the next tick)\n",
			     sign > 0 ? "up" : "down", n);
}

static int
cmd_up(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	return manual(ctx, argc, argv, 1, out);
}

static int
cmd_down(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	return manual(ctx, argc, argv, -1, out);
}

static int
jset(json_t *o, const char *k, json_t *v)
{
	return json_object_set_new(o, k, v) != 0;
}

static json_t *
inst_json(const struct lb_as_inst *i, uint64_t now)
{
	char a[LB_CMD_ADDR_STRLEN];
	json_t *o = json_object();
	int bad = o == NULL;

	if (bad)
		return NULL;
	bad |= jset(o, "id", json_integer(i->id));
	bad |= jset(o, "backend",
		    i->ip != 0 ? json_string(lb_cmd_fmt_ipv4_port(i->ip,
								  i->port, a))
			       : json_null());
	bad |= jset(o, "origin", json_string(lb_as_origin_name(i->origin)));
	bad |= jset(o, "state", json_string(lb_as_state_name(i->state)));
	bad |= jset(o, "in_state_ms",
		    json_integer(now > i->since_ns
					 ? (json_int_t)((now - i->since_ns) /
							1000000)
					 : 0));
	bad |= jset(o, "driver_id", json_string(i->drv_id));
	bad |= jset(o, "note", json_string(i->why));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static uint64_t
as_now(const struct lb_as *as)
{
	return as->now != NULL ? as->now(as->now_arg) : 0;
}

static json_t *
svc_json(struct lb_as *as, struct lb_as_svc *s)
{
	const struct lb_as_conf *c = &s->conf;
	uint32_t n[LB_AS_STATE_COUNT];
	char l[40], v[LB_AS_ARG_LEN * 2 + 3];
	json_t *o = json_object(), *conf = json_object(), *st = json_object(),
	       *insts = json_array(), *cnt = json_object();
	uint64_t now = as_now(as);
	int bad = o == NULL || conf == NULL || st == NULL || insts == NULL ||
		  cnt == NULL;

	if (!bad) {
		svc_label(&s->key, l, sizeof(l));
		bad |= jset(o, "service", json_string(l));
		bad |= jset(o, "paused", json_boolean(s->paused));
		for (unsigned int j = 0; j < NB_OPTS; j++) {
			if (opts[j].kind == K_F64)
				bad |= jset(
					conf, opts[j].name,
					json_real(*(
						const double
							*)(const void
								   *)((const char
									       *)
									      c +
								      opts[j].off)));
			else if (opts[j].kind == K_NAME ||
				 opts[j].kind == K_STR)
				bad |= jset(conf, opts[j].name,
					    json_string((const char *)c +
							opts[j].off));
			else {
				opt_fmt(c, &opts[j], v, sizeof(v));
				bad |= jset(conf, opts[j].name, json_string(v));
			}
		}
		lb_as_inst_count(s, n);
		for (unsigned int k = 0; k < LB_AS_STATE_COUNT; k++)
			bad |= jset(cnt, lb_as_state_name(k),
				    json_integer(n[k]));
		for (unsigned int j = 0; j < lb_as_nb_inst(s); j++) {
			json_t *x = inst_json(lb_as_inst_at(s, j), now);

			bad |= x == NULL || json_array_append_new(insts, x);
		}
		bad |= jset(st, "evaluations", json_integer(s->st.evals));
		bad |= jset(st, "ups", json_integer(s->st.ups));
		bad |= jset(st, "downs", json_integer(s->st.downs));
		bad |= jset(st, "manual", json_integer(s->st.manual));
		bad |= jset(st, "started", json_integer(s->st.started));
		bad |= jset(st, "joined", json_integer(s->st.joined));
		bad |= jset(st, "drained", json_integer(s->st.drained));
		bad |= jset(st, "failed", json_integer(s->st.failed));
		bad |= jset(st, "driver_errors",
			    json_integer(s->st.drv_errors));
		bad |= jset(st, "drain_timeouts",
			    json_integer(s->st.drain_timeouts));
		bad |= jset(st, "adopted", json_integer(s->st.adopted));
	}
	bad |= jset(o, "config", conf);
	bad |= jset(o, "counts", cnt);
	bad |= jset(o, "instances", insts);
	bad |= jset(o, "stats", st);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int
give(struct lb_as *as, json_t *d, struct lb_cmd_out *out)
{
	if (d == NULL)
		return lb_cmd_error(out, -ENOMEM, "out of memory");
	if (as->data == NULL) {
		json_decref(d);
		return 0;
	}
	json_decref(*as->data);
	*as->data = d;
	return 0;
}

static int
show_text(struct lb_as *as, struct lb_as_svc *s, struct lb_cmd_out *out)
{
	const struct lb_as_conf *c = &s->conf;
	char l[40], d1[LB_CMD_DURATION_STRLEN], d2[LB_CMD_DURATION_STRLEN],
		a[LB_CMD_ADDR_STRLEN];
	uint32_t n[LB_AS_STATE_COUNT];
	uint64_t now = as_now(as);
	int rc;

	svc_label(&s->key, l, sizeof(l));
	lb_as_inst_count(s, n);
	rc = lb_cmd_printf(out, "%s: policy %s%s, driver %s, min %u max %u\n",
			   l, lb_as_policy_name(c->policy),
			   s->paused ? " (paused)" : "", c->driver,
			   c->guard.min_instances, c->guard.max_instances);
	if (rc == 0 && c->policy == LB_AS_POLICY_SPL)
		rc = lb_cmd_printf(out,
				   "  spl: lower %g upper %g decay %s %s\n",
				   c->lower, c->upper, c->decay,
				   lb_cmd_fmt_duration(c->decay_ns, d1));
	if (rc == 0 && c->policy == LB_AS_POLICY_INFLIGHT)
		rc = lb_cmd_printf(out,
				   "  inflight: queue-length %u rounds %u\n",
				   c->queue_length, c->rounds);
	if (rc == 0)
		rc = lb_cmd_printf(
			out,
			"  guard: interval %s up-cooldown %s down-cooldown ",
			lb_cmd_fmt_duration(c->interval_ns, d1),
			lb_cmd_fmt_duration(c->guard.up_cooldown_ns, d2));
	if (rc == 0)
		rc = lb_cmd_printf(
			out, "%s down-window %s ",
			lb_cmd_fmt_duration(c->guard.down_cooldown_ns, d1),
			lb_cmd_fmt_duration(c->guard.down_window_ns, d2));
	if (rc == 0)
		rc = lb_cmd_printf(
			out,
			"startup-timeout %s drain-timeout %s pending-guard "
			"%s\n",
			lb_cmd_fmt_duration(c->guard.startup_timeout_ns, d1),
			lb_cmd_fmt_duration(c->drain_timeout_ns, d2),
			c->guard.pending_guard ? "on" : "off");
	if (rc == 0)
		rc = lb_cmd_printf(out,
				   "  instances: %u active, %u pending, %u "
				   "starting, %u draining, %u stopping, %u "
				   "failed\n",
				   n[LB_AS_ACTIVE], n[LB_AS_PENDING],
				   n[LB_AS_STARTING], n[LB_AS_DRAINING],
				   n[LB_AS_STOPPING], n[LB_AS_FAILED]);
	if (rc == 0)
		rc = lb_cmd_printf(out, "  %-5s %-21s %-7s %-9s %8s %s\n", "ID",
				   "BACKEND", "ORIGIN", "STATE", "FOR", "NOTE");
	for (unsigned int j = 0; j < lb_as_nb_inst(s) && rc == 0; j++) {
		const struct lb_as_inst *i = lb_as_inst_at(s, j);
		double age = now > i->since_ns
				     ? (double)(now - i->since_ns) / 1e9
				     : 0;

		rc = lb_cmd_printf(
			out, "  %-5u %-21s %-7s %-9s %7.1fs %s\n", i->id,
			i->ip != 0 ? lb_cmd_fmt_ipv4_port(i->ip, i->port, a)
				   : "-",
			lb_as_origin_name(i->origin),
			lb_as_state_name(i->state), age, i->why);
	}
	return rc;
}

static int
cmd_show(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_as *as = ctx;
	struct lb_conf_svc_key k;
	struct lb_as_svc *one = NULL;
	json_t *d = json_object(), *arr = json_array();
	int rc, bad = d == NULL || arr == NULL;

	rc = lb_cmd_want_args(out, argc, argv, 0, 2);
	if (rc == 0 && argc > 0 &&
	    (one = want_svc(as, argc, argv, &k, out, &rc)) == NULL)
		rc = rc != 0 ? rc : -ENOENT;
	if (rc != 0) {
		json_decref(d);
		json_decref(arr);
		return rc;
	}
	for (unsigned int i = 0; i < as->nb_rt && rc == 0; i++) {
		struct lb_as_svc *s = as->rt[i];
		json_t *x;

		if ((one != NULL && s != one) || s->deleted)
			continue;
		x = svc_json(as, s);
		bad |= x == NULL || json_array_append_new(arr, x);
		rc = show_text(as, s, out);
	}
	if (rc == 0 && as->nb_rt == 0)
		rc = lb_cmd_printf(out, "no autoscaled service\n");
	bad |= d != NULL && json_object_set(d, "services", arr);
	json_decref(arr);
	if (rc != 0 || bad) {
		json_decref(d);
		return rc != 0 ? rc
			       : lb_cmd_error(out, -ENOMEM, "out of memory");
	}
	return give(as, d, out);
}

static int
cmd_history(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_as *as = ctx;
	struct lb_conf_svc_key k;
	struct lb_as_svc *s;
	uint64_t n = 20, now = as_now(as);
	json_t *d = NULL, *arr;
	unsigned int from;
	int rc, bad;

	rc = lb_cmd_want_args(out, argc, argv, 2, 3);
	if (rc != 0 || (s = want_svc(as, argc, argv, &k, out, &rc)) == NULL)
		return rc;
	if (argc == 3) {
		rc = lb_cmd_parse_u64(argv[2], "count", 1, LB_AS_HIST, &n, out);
		if (rc != 0)
			return rc;
	}
	from = s->hist_len > n ? s->hist_len - (unsigned int)n : 0;
	arr = json_array();
	bad = arr == NULL;
	rc = lb_cmd_printf(out, "%9s %-6s %-8s %9s %4s %4s %7s %-14s %5s %s\n",
			   "AGO", "MODE", "POLICY", "LOAD", "RUN", "PEND",
			   "DESIRED", "ACTION", "COUNT", "REASON");
	for (unsigned int i = from; i < s->hist_len && rc == 0; i++) {
		const struct lb_as_decision *x = lb_as_hist_at(s, i);
		double ago =
			now > x->now_ns ? (double)(now - x->now_ns) / 1e9 : 0;
		json_t *e = json_object();

		bad |= e == NULL;
		if (e != NULL) {
			bad |= jset(e, "ago_s", json_real(ago));
			bad |= jset(e, "time_ns",
				    json_integer((json_int_t)x->now_ns));
			bad |= jset(e, "manual", json_boolean(x->manual));
			bad |= jset(e, "policy",
				    json_string(lb_as_policy_name(x->policy)));
			bad |= jset(e, "load", json_real(x->load));
			bad |= jset(e, "running", json_integer(x->running));
			bad |= jset(e, "pending", json_integer(x->pending));
			bad |= jset(e, "desired", json_real(x->desired));
			bad |= jset(e, "action",
				    json_string(lb_scale_guard_action_name(
					    x->action)));
			bad |= jset(e, "count", json_integer(x->count));
			bad |= jset(e, "target", json_integer(x->target));
			bad |= jset(e, "reason", json_string(x->reason));
			bad |= json_array_append_new(arr, e);
		}
		rc = lb_cmd_printf(out,
				   "%8.1fs %-6s %-8s %9.3f %4u %4u %7.2f "
				   "%-14s %5u %s\n",
				   ago, x->manual ? "manual" : "auto",
				   lb_as_policy_name(x->policy), x->load,
				   x->running, x->pending, x->desired,
				   lb_scale_guard_action_name(x->action),
				   x->count, x->reason);
	}
	if (!bad) {
		d = json_object();
		bad = d == NULL || json_object_set(d, "decisions", arr);
	}
	json_decref(arr);
	if (rc != 0 || bad) {
		json_decref(d);
		return rc != 0 ? rc
			       : lb_cmd_error(out, -ENOMEM, "out of memory");
	}
	return give(as, d, out);
}

int
lb_as_save(const struct lb_as *as, struct lb_cmd_out *out)
{
	struct lb_as_conf def;
	char l[40], v[LB_AS_ARG_LEN * 2 + 3];
	int rc = 0;

	if (as == NULL || out == NULL)
		return -EINVAL;
	lb_as_conf_default(&def);
	for (unsigned int i = 0; i < as->cfg.n && rc == 0; i++) {
		const struct cfg *x = &as->cfg.s[i];

		svc_label(&x->key, l, sizeof(l));
		rc = lb_cmd_printf(out, "scale set %s", l);
		for (unsigned int j = 0; j < NB_OPTS && rc == 0; j++) {
			const char *a = (const char *)&x->c + opts[j].off;
			const char *b = (const char *)&def + opts[j].off;

			if (memcmp(a, b, opt_size(&opts[j])) == 0)
				continue;
			opt_fmt(&x->c, &opts[j], v, sizeof(v));
			rc = lb_cmd_printf(out, " %s %s", opts[j].name, v);
		}
		if (rc == 0)
			rc = lb_cmd_printf(out, "\n");
		if (rc == 0 && x->paused)
			rc = lb_cmd_printf(out, "scale pause %s\n", l);
	}
	return rc;
}

#define SVC_ARGS "PROTO VIP:PORT"
/* `scale set`'s long help; the names come from the registries of decay
 * functions and orchestrator drivers (set_help()). */
#define SET_HELP_FMT                                                           \
	"Options (defaults and their sources in "                              \
	"docs/policies.md, autoscaler):\n\n"                                   \
	"- `policy spl|inflight`: the SPL patent's policy "                    \
	"(default) or WSO2's\n  requests-in-flight policy.\n"                  \
	"- `lower X`, `upper X`: SPL thresholds; default 0.2 "                 \
	"and 0.8.\n"                                                           \
	"- `decay %s`, `decay-time "                                           \
	"DUR`: SPL decay;\n  default halflife 1s.\n"                           \
	"- `queue-length N`, `rounds N`: inflight's "                          \
	"queue_length_per_node and\n  rounds_to_average; "                     \
	"default 3 and 2.\n"                                                   \
	"- `min N`, `max N`: instance bounds; default 1 and "                  \
	"5.\n"                                                                 \
	"- `tolerance X`: dead band as a fraction of the "                     \
	"count; default 0.\n"                                                  \
	"- `up-window DUR`, `down-window DUR`: stabilization "                 \
	"windows; default\n  0 and 5m.\n"                                      \
	"- `up-cooldown DUR`, `down-cooldown DUR`: no action "                 \
	"of that kind this\n  long after any action; default "                 \
	"15s.\n"                                                               \
	"- `max-up-step N`: most instances one scale-up adds; "                \
	"default 4.\n"                                                         \
	"- `pending-guard on|off`: no scale-up while an "                      \
	"instance is pending;\n  default on.\n"                                \
	"- `startup-timeout DUR`: an instance not healthy by "                 \
	"then is removed;\n  default 1m.\n"                                    \
	"- `drain-timeout DUR`: longest drain before the "                     \
	"instance is stopped;\n  default 30s.\n"                               \
	"- `interval DUR`: evaluation period; default 1s.\n"                   \
	"- `driver %s`, `command CMD`, "                                       \
	"`target T`,\n  `inst-port N`, `exec-timeout DUR`: "                   \
	"the orchestrator (see\n  docs/operating.md, "                         \
	"autoscaling).\n\n"                                                    \
	"Example: `scale set tcp 192.0.2.10:80 policy "                        \
	"inflight queue-length 20 min 1 max 4`"

static const struct lb_cmd_def as_cmds[] = {
	{
		.path = "scale set",
		.synopsis = SVC_ARGS " OPTION VALUE...",
		.help = "Autoscale a service, or change how",
		.long_help = NULL, /* set_help() */
		.fn = cmd_set,
	},
	{
		.path = "scale del",
		.synopsis = SVC_ARGS,
		.help = "Stop autoscaling a service; its instances are "
			"drained and stopped",
		.long_help = NULL,
		.fn = cmd_del,
	},
	{
		.path = "scale show",
		.synopsis = "[" SVC_ARGS "]",
		.help = "Show autoscaling settings and the instance "
			"repository",
		.long_help = NULL,
		.fn = cmd_show,
	},
	{
		.path = "scale pause",
		.synopsis = SVC_ARGS,
		.help = "Take manual control: no automatic scaling actions",
		.long_help = "Instances that never become healthy are still "
			     "removed at their start-up\ntimeout, and `scale "
			     "up|down` still work.",
		.fn = cmd_pause,
	},
	{
		.path = "scale resume",
		.synopsis = SVC_ARGS,
		.help = "Give control back to the autoscaler",
		.long_help = NULL,
		.fn = cmd_resume,
	},
	{
		.path = "scale history",
		.synopsis = SVC_ARGS " [N]",
		.help = "Show the last N decisions (default 20) with their "
			"inputs and reasons",
		.long_help = NULL,
		.fn = cmd_history,
	},
	{
		.path = "scale up",
		.synopsis = SVC_ARGS " [N]",
		.help = "Start N instances (default 1), within min/max",
		.long_help = "Carried out at the next tick through the same "
			     "path as the\nautoscaler's own actions, and "
			     "recorded in the history.",
		.fn = cmd_up,
	},
	{
		.path = "scale down",
		.synopsis = SVC_ARGS " [N]",
		.help = "Drain and stop N instances (default 1), within "
			"min/max",
		.long_help = NULL,
		.fn = cmd_down,
	},
};

/* `save`: the configuration, then the autoscaler's settings, which
 * name its services and so come after them. */
static int
save_scale(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	(void)argc;
	(void)argv;
	return lb_as_save(ctx, out);
}

static const struct lb_cmd_ext as_ext[] = {
	{
		.path = "save",
		.long_help = "Then the autoscaler's settings, after the "
			     "services they name. Backends\nstarted by an "
			     "orchestrator are left out: the orchestrator "
			     "starts its\ninstances again.",
		.fn = save_scale,
	},
};

static int
set_help(void *ctx, struct lb_cmd_def *defs, unsigned int n)
{
	struct lb_as *as = ctx;
	char drv[256] = "NAME", decay[256];

	if (as->drv_names != NULL)
		as->drv_names(drv, sizeof(drv), "|");
	lb_spl_decay_names(decay, sizeof(decay), "|");
	if ((size_t)snprintf(as->set_help, sizeof(as->set_help), SET_HELP_FMT,
			     decay, drv) >= sizeof(as->set_help))
		return -ENOSPC;
	for (unsigned int i = 0; i < n; i++)
		if (defs[i].fn == cmd_set)
			defs[i].long_help = as->set_help;
	return 0;
}

static const struct lb_cmd_table as_table = {
	.name = "scale",
	.ctx = "as",
	.defs = as_cmds,
	.n = sizeof(as_cmds) / sizeof(as_cmds[0]),
	.ext = as_ext,
	.n_ext = sizeof(as_ext) / sizeof(as_ext[0]),
	.prepare = set_help,
};
LB_CMD_REGISTER(as_table);

/* ---- /metrics ---- */

static const struct {
	const char *name;
	size_t off;
	const char *help;
} as_fams[] = {
	{"lb_scale_evaluations_total", offsetof(struct lb_as_stats, evals),
	 "Autoscaler evaluations."},
	{"lb_scale_ups_total", offsetof(struct lb_as_stats, ups),
	 "Scale-up actions, automatic and manual."},
	{"lb_scale_downs_total", offsetof(struct lb_as_stats, downs),
	 "Scale-down actions, automatic and manual."},
	{"lb_scale_manual_total", offsetof(struct lb_as_stats, manual),
	 "Manual actions (scale up|down)."},
	{"lb_scale_instances_started_total",
	 offsetof(struct lb_as_stats, started),
	 "Instances asked of the orchestrator."},
	{"lb_scale_instances_joined_total",
	 offsetof(struct lb_as_stats, joined),
	 "Instances that became active (pending to active)."},
	{"lb_scale_instances_drained_total",
	 offsetof(struct lb_as_stats, drained),
	 "Instances stopped after a drain."},
	{"lb_scale_instances_failed_total",
	 offsetof(struct lb_as_stats, failed),
	 "Instances that failed to start, never became healthy or died."},
	{"lb_scale_driver_errors_total",
	 offsetof(struct lb_as_stats, drv_errors),
	 "Orchestrator commands that failed or timed out."},
	{"lb_scale_drain_timeouts_total",
	 offsetof(struct lb_as_stats, drain_timeouts),
	 "Drains ended by the drain timeout with flows left."},
	{"lb_scale_instances_adopted_total",
	 offsetof(struct lb_as_stats, adopted),
	 "Instances the orchestrator had running, adopted (not started)."},
};

int
lb_as_metrics(struct lb_as *as, struct lb_cmd_out *o)
{
	char l[40], a[LB_CMD_ADDR_STRLEN];
	int rc = 0;

	if (as == NULL || as->nb_rt == 0)
		return 0;
	for (size_t f = 0; f < sizeof(as_fams) / sizeof(as_fams[0]) && rc == 0;
	     f++) {
		rc = lb_prom_family(o, as_fams[f].name, "counter",
				    as_fams[f].help);
		for (unsigned int i = 0; i < as->nb_rt && rc == 0; i++) {
			struct lb_prom_label lb = {"service", l};
			uint64_t v;

			svc_label(&as->rt[i]->key, l, sizeof(l));
			memcpy(&v,
			       (const char *)&as->rt[i]->st + as_fams[f].off,
			       sizeof(v));
			rc = lb_prom_u64(o, as_fams[f].name, &lb, 1, v);
		}
	}
	if (rc == 0)
		rc = lb_prom_family(o, "lb_scale_instances", "gauge",
				    "Instances of an autoscaled service by "
				    "state.");
	for (unsigned int i = 0; i < as->nb_rt && rc == 0; i++) {
		uint32_t n[LB_AS_STATE_COUNT];

		svc_label(&as->rt[i]->key, l, sizeof(l));
		lb_as_inst_count(as->rt[i], n);
		for (unsigned int k = 0; k < LB_AS_STATE_COUNT && rc == 0;
		     k++) {
			struct lb_prom_label lb[2] = {
				{"service", l}, {"state", lb_as_state_name(k)}};

			rc = lb_prom_u64(o, "lb_scale_instances", lb, 2, n[k]);
		}
	}
	if (rc == 0)
		rc = lb_prom_family(o, "lb_scale_paused", "gauge",
				    "1 while automatic scaling is paused.");
	for (unsigned int i = 0; i < as->nb_rt && rc == 0; i++) {
		struct lb_prom_label lb = {"service", l};

		svc_label(&as->rt[i]->key, l, sizeof(l));
		rc = lb_prom_u64(o, "lb_scale_paused", &lb, 1,
				 as->rt[i]->paused);
	}
	/* The instance identifier repository, one sample per instance. */
	if (rc == 0)
		rc = lb_prom_family(o, "lb_scale_instance_info", "gauge",
				    "Instances with their origin and state "
				    "(value 1).");
	for (unsigned int i = 0; i < as->nb_rt && rc == 0; i++) {
		struct lb_as_svc *s = as->rt[i];

		svc_label(&s->key, l, sizeof(l));
		for (unsigned int j = 0; j < LB_AS_INST_MAX && rc == 0; j++) {
			const struct lb_as_inst *x = &s->inst[j];
			char id[12];
			struct lb_prom_label lb[5] = {
				{"service", l},
				{"id", id},
				{"backend",
				 x->ip != 0 ? lb_cmd_fmt_ipv4_port(x->ip,
								   x->port, a)
					    : ""},
				{"origin", lb_as_origin_name(x->origin)},
				{"state", lb_as_state_name(x->state)},
			};

			if (!s->used[j])
				continue;
			snprintf(id, sizeof(id), "%u", x->id);
			rc = lb_prom_u64(o, "lb_scale_instance_info", lb, 5, 1);
		}
	}
	return rc;
}

static int
as_metrics_src(void *ctx, struct lb_cmd_out *o)
{
	return lb_as_metrics(ctx, o);
}

static const struct lb_prom_src as_src = {"scale", LB_METRICS_RANK_SCALE,
					  "as", as_metrics_src};
LB_PROM_REGISTER(as_src);
