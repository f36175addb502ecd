/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The autoscaler's decisions: one evaluation asks the service's policy
 * (SPL or requests in flight) for a desired count and passes it through
 * the guards; manual actions are clamped to min/max. Every decision goes
 * into a bounded history, which `scale history` shows.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autoscale_priv.h"
#include "inflight.h"
#include "spl.h"

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

int32_t
lb_as_drop_manual(struct lb_as_svc *s)
{
	int32_t m = s->manual;

	s->manual = 0;
	return m;
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
