/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The autoscaler (control/scale/autoscale.h): the autoscaled services,
 * their settings and the runtime state that follows them (policies and
 * guard rebuilt when the settings change). Instances, decisions,
 * commands and /metrics are in files of their own (autoscale_priv.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autoscale_priv.h"
#include "inflight.h"
#include "prom.h"
#include "spl.h"

/*
 * The commands and metric families are defined in their own files and
 * registered here: this file is in every program that has an autoscaler
 * (lb_as_create()), and a linker leaves out an archive member that
 * nothing references.
 */
LB_CMD_REGISTER(lb_as_cmd_table);
LB_PROM_REGISTER(lb_as_prom_src);

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

/* "" for the service's own pool, whichever way it is named. */
static const char *
pool_norm(const char *pool)
{
	return pool == NULL || strcmp(pool, LB_CONF_POOL_DEFAULT) == 0 ? ""
								       : pool;
}

static struct lb_as_svc *
rt_find(struct lb_as *as, const struct lb_conf_svc_key *k, const char *pool)
{
	for (unsigned int i = 0; i < as->nb_rt; i++)
		if (lb_conf_svc_key_eq(&as->rt[i]->key, k) &&
		    strcmp(as->rt[i]->pool, pool) == 0)
			return as->rt[i];
	return NULL;
}

struct lb_as_cfg *
lb_as_cfg_find(struct lb_as_cfgset *cs, const struct lb_conf_svc_key *k,
	       const char *pool)
{
	pool = pool_norm(pool);
	for (unsigned int i = 0; i < cs->n; i++)
		if (lb_conf_svc_key_eq(&cs->s[i].key, k) &&
		    strcmp(cs->s[i].pool, pool) == 0)
			return &cs->s[i];
	return NULL;
}

void
lb_as_reconcile(struct lb_as *as)
{
	for (unsigned int i = 0; i < as->cfg.n; i++) {
		struct lb_as_cfg *c = &as->cfg.s[i];
		struct lb_as_svc *s = rt_find(as, &c->key, c->pool);

		if (s == NULL) {
			if (as->nb_rt == LB_AS_UNITS_MAX)
				continue;
			s = calloc(1, sizeof(*s));
			if (s == NULL)
				continue;
			s->key = c->key;
			memcpy(s->pool, c->pool, sizeof(s->pool));
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
		if (lb_as_cfg_find(&as->cfg, &as->rt[i]->key,
				   as->rt[i]->pool) == NULL)
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
	struct lb_as_cfgset *c = malloc(sizeof(*c));

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
	as->cfg = *(const struct lb_as_cfgset *)snap;
	as->gen++;
	lb_as_reconcile(as);
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
lb_as_pool_find(struct lb_as *as, const struct lb_conf_svc_key *k,
		const char *pool)
{
	struct lb_as_svc *s;

	if (as == NULL || k == NULL)
		return NULL;
	s = rt_find(as, k, pool_norm(pool));
	return s != NULL && !s->deleted ? s : NULL;
}

struct lb_as_svc *
lb_as_svc_find(struct lb_as *as, const struct lb_conf_svc_key *k)
{
	return lb_as_pool_find(as, k, NULL);
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

const char *
lb_as_svc_pool(const struct lb_as_svc *s)
{
	return s->pool;
}

int
lb_as_svc_pool_index(const struct lb_as_svc *s, const struct lb_conf_svc *sv)
{
	if (sv == NULL)
		return -1;
	return s->pool[0] == '\0' ? 0 : lb_conf_pool_index(sv, s->pool);
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

struct lb_as_cluster *
lb_as_svc_cluster(struct lb_as_svc *s)
{
	return &s->cl;
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
lb_as_pool_set(struct lb_as *as, const struct lb_conf_svc_key *k,
	       const char *pool, const struct lb_as_conf *c,
	       struct lb_cmd_out *out)
{
	char s[AS_LABEL_LEN];
	const struct lb_conf_svc *sv;
	struct lb_as_cfg *x;
	int rc;

	if (as == NULL || k == NULL || c == NULL)
		return lb_cmd_error(out, -EINVAL, "no autoscaler");
	pool = pool_norm(pool);
	svc_label(k, s, sizeof(s));
	if (strlen(pool) > LB_CONF_POOL_NAME_LEN)
		return lb_cmd_error(out, -EINVAL,
				    "pool name too long (at "
				    "most %u bytes)",
				    LB_CONF_POOL_NAME_LEN);
	sv = as->conf != NULL ? lb_conf_svc_find(as->conf, k) : NULL;
	if (as->conf != NULL && sv == NULL)
		return lb_cmd_error(out, -ENOENT, "no service %s", s);
	/* Without a configuration to check against (a unit test) only
	 * the service's own pool is known. */
	if (pool[0] != '\0' && (sv == NULL || lb_conf_pool_index(sv, pool) < 0))
		return lb_cmd_error(out, -ENOENT,
				    "no pool %s in %s (pool add first)", pool,
				    s);
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
	x = lb_as_cfg_find(&as->cfg, k, pool);
	if (x == NULL) {
		if (as->cfg.n == LB_AS_UNITS_MAX)
			return lb_cmd_error(out, -ENOSPC,
					    "too many autoscaled pools (at "
					    "most %u)",
					    LB_AS_UNITS_MAX);
		x = &as->cfg.s[as->cfg.n++];
		memset(x, 0, sizeof(*x));
		x->key = *k;
		snprintf(x->pool, sizeof(x->pool), "%s", pool);
	}
	x->c = *c;
	as->gen++;
	lb_as_reconcile(as);
	return 0;
}

int
lb_as_svc_set(struct lb_as *as, const struct lb_conf_svc_key *k,
	      const struct lb_as_conf *c, struct lb_cmd_out *out)
{
	return lb_as_pool_set(as, k, NULL, c, out);
}

int
lb_as_pool_del(struct lb_as *as, const struct lb_conf_svc_key *k,
	       const char *pool)
{
	struct lb_as_cfg *x =
		as != NULL ? lb_as_cfg_find(&as->cfg, k, pool) : NULL;

	if (x == NULL)
		return -ENOENT;
	*x = as->cfg.s[--as->cfg.n];
	as->gen++;
	lb_as_reconcile(as);
	return 0;
}

int
lb_as_svc_del(struct lb_as *as, const struct lb_conf_svc_key *k)
{
	return lb_as_pool_del(as, k, NULL);
}
