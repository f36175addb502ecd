/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Guards on scaling decisions: dead band, stabilization windows, rate
 * limits, bounds, pending guard, cooldowns and start-up timeout. See
 * control/scale/scale_guard.h for the order of the stages and their sources.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scale_guard.h"

struct sg_rec {
	uint64_t t_ns;
	uint32_t count;
};

struct lb_scale_guard {
	struct lb_scale_guard_params p;
	struct lb_scale_guard_stats st;
	bool seen;  /* a call was accepted: last_ns is valid */
	bool acted; /* an up/down was decided: action_ns is valid */
	uint64_t last_ns;
	uint64_t action_ns;
	/* Ring of recommendations, oldest at head. */
	uint32_t head;
	uint32_t nb;
	struct sg_rec hist[];
};

void
lb_scale_guard_params_default(struct lb_scale_guard_params *p)
{
	if (p == NULL)
		return;
	memset(p, 0, sizeof(*p));
	p->min_instances = LB_SG_MIN_DEFAULT;
	p->max_instances = LB_SG_MAX_DEFAULT;
	p->history_len = LB_SG_HISTORY_DEFAULT;
}

void
lb_scale_guard_params_recommended(struct lb_scale_guard_params *p)
{
	if (p == NULL)
		return;
	lb_scale_guard_params_default(p);
	p->min_instances = LB_SG_REC_MIN;
	p->tolerance = LB_SG_REC_TOLERANCE;
	p->up_window_ns = LB_SG_REC_UP_WINDOW_NS;
	p->down_window_ns = LB_SG_REC_DOWN_WINDOW_NS;
	p->up_cooldown_ns = LB_SG_REC_UP_COOLDOWN_NS;
	p->down_cooldown_ns = LB_SG_REC_DOWN_COOLDOWN_NS;
	p->max_up_step = LB_SG_REC_MAX_UP_STEP;
	p->max_up_pct = LB_SG_REC_MAX_UP_PCT;
	p->max_down_pct = LB_SG_REC_MAX_DOWN_PCT;
	p->pending_guard = true;
	p->startup_timeout_ns = LB_SG_REC_STARTUP_TIMEOUT_NS;
}

int
lb_scale_guard_params_check(const struct lb_scale_guard_params *p)
{
	if (p == NULL || p->max_instances == 0 ||
	    p->min_instances > p->max_instances || p->history_len == 0 ||
	    p->max_down_pct > 100)
		return -EINVAL;
	/* Written so that NaN fails too. */
	if (!(p->tolerance >= 0.0 && p->tolerance <= 1.0))
		return -EINVAL;
	if (p->max_instances > LB_SG_INSTANCES_MAX ||
	    p->max_up_step > LB_SG_INSTANCES_MAX ||
	    p->max_down_step > LB_SG_INSTANCES_MAX ||
	    p->max_up_pct > LB_SG_PCT_MAX || p->history_len > LB_SG_HISTORY_MAX)
		return -ERANGE;
	return 0;
}

struct lb_scale_guard *
lb_scale_guard_create(const struct lb_scale_guard_params *p)
{
	struct lb_scale_guard *g;
	int rc = lb_scale_guard_params_check(p);

	if (rc != 0) {
		errno = -rc;
		return NULL;
	}
	g = calloc(1, sizeof(*g) + (size_t)p->history_len * sizeof(g->hist[0]));
	if (g == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	g->p = *p;
	return g;
}

void
lb_scale_guard_free(struct lb_scale_guard *g)
{
	free(g);
}

void
lb_scale_guard_reset(struct lb_scale_guard *g)
{
	if (g == NULL)
		return;
	g->seen = false;
	g->acted = false;
	g->last_ns = 0;
	g->action_ns = 0;
	g->head = 0;
	g->nb = 0;
}

int
lb_scale_guard_params_get(const struct lb_scale_guard *g,
			  struct lb_scale_guard_params *p)
{
	if (g == NULL || p == NULL)
		return -EINVAL;
	*p = g->p;
	return 0;
}

static int
check_input(const struct lb_scale_guard *g,
	    const struct lb_scale_guard_input *in)
{
	if (isnan(in->desired) || isinf(in->desired) || in->desired < 0.0)
		return -EINVAL;
	if (in->desired > (double)LB_SG_INSTANCES_MAX)
		return -ERANGE;
	if (in->running > LB_SG_INSTANCES_MAX ||
	    in->pending > LB_SG_INSTANCES_MAX)
		return -ERANGE;
	if (g->seen && in->now_ns < g->last_ns)
		return -ERANGE;
	if (in->pending > 0 && in->oldest_pending_ns > in->now_ns)
		return -ERANGE;
	return 0;
}

/*
 * HPA: "the difference between the desired and the current ratio is
 * within the tolerance" -> keep the current count. Compared as a distance
 * in instances so that 11 against 10 is exactly 10 %, then rounded up as
 * HPA's ceil(current * ratio).
 */
static uint32_t
ceil_count(double desired)
{
	uint32_t r = (uint32_t)desired;

	return (double)r < desired ? r + 1 : r;
}

static uint32_t
recommend(double desired, uint32_t cur, double tolerance)
{
	double dist = desired > cur ? desired - cur : cur - desired;

	if (cur > 0 && dist <= tolerance * cur)
		return cur;
	return ceil_count(desired);
}

static void
history_add(struct lb_scale_guard *g, uint64_t now_ns, uint32_t rec)
{
	uint64_t horizon = g->p.up_window_ns > g->p.down_window_ns
				   ? g->p.up_window_ns
				   : g->p.down_window_ns;
	uint32_t len = g->p.history_len;

	if (horizon == 0)
		return;
	while (g->nb > 0 && now_ns - g->hist[g->head].t_ns >= horizon) {
		g->head = (g->head + 1) % len;
		g->nb--;
	}
	if (g->nb == len) {
		g->head = (g->head + 1) % len;
		g->nb--;
		g->st.history_overflows++;
	}
	g->hist[(g->head + g->nb) % len] =
		(struct sg_rec){.t_ns = now_ns, .count = rec};
	g->nb++;
}

/*
 * HPA stabilizeRecommendationWithBehaviors: scale up no further than the
 * lowest recommendation of the up window, down no further than the
 * highest of the down window. A recommendation counts while its age is
 * below the window, so one exactly window_ns old no longer does.
 */
static uint32_t
stabilize(const struct lb_scale_guard *g, uint64_t now_ns, uint32_t rec,
	  uint32_t cur)
{
	uint32_t up = rec, down = rec, s = cur;

	for (uint32_t i = 0; i < g->nb; i++) {
		const struct sg_rec *h =
			&g->hist[(g->head + i) % g->p.history_len];
		uint64_t age = now_ns - h->t_ns;

		if (age < g->p.up_window_ns && h->count < up)
			up = h->count;
		if (age < g->p.down_window_ns && h->count > down)
			down = h->count;
	}
	if (s < up)
		s = up;
	if (s > down)
		s = down;
	return s;
}

/* HPA scaling policies with selectPolicy Max: the larger limit wins. */
static uint32_t
step_limit(uint32_t abs, uint32_t pct, uint32_t cur)
{
	uint64_t lim = abs, by_pct;

	if (abs == 0 && pct == 0)
		return UINT32_MAX;
	if (pct > 0) {
		by_pct = ((uint64_t)cur * pct + 99) / 100;
		/* A percentage of an empty pool must not lock it at 0. */
		if (by_pct == 0)
			by_pct = 1;
		if (by_pct > lim)
			lim = by_pct;
	}
	return lim > UINT32_MAX ? UINT32_MAX : (uint32_t)lim;
}

static bool
cooling(const struct lb_scale_guard *g, uint64_t now_ns, uint64_t cooldown)
{
	return g->acted && now_ns - g->action_ns < cooldown;
}

static void
decide(struct lb_scale_guard *g, const struct lb_scale_guard_input *in,
       struct lb_scale_guard_decision *d)
{
	const struct lb_scale_guard_params *p = &g->p;
	uint32_t cur = d->current;
	enum lb_scale_guard_reason why = LB_SG_R_RECOMMENDED;
	enum lb_scale_guard_reason hold = LB_SG_R_STEADY;
	uint32_t t, lim;

	if (d->raw != d->recommended)
		why = LB_SG_R_TOLERANCE;
	t = d->stabilized;
	if (t != d->recommended)
		why = LB_SG_R_STABILIZED;
	if (t > cur) {
		lim = step_limit(p->max_up_step, p->max_up_pct, cur);
		if (t - cur > lim) {
			t = cur + lim;
			why = LB_SG_R_RATE_LIMITED;
		}
	} else if (t < cur) {
		lim = step_limit(p->max_down_step, p->max_down_pct, cur);
		if (cur - t > lim) {
			t = cur - lim;
			why = LB_SG_R_RATE_LIMITED;
		}
	}
	if (t < p->min_instances) {
		t = p->min_instances;
		why = LB_SG_R_BELOW_MIN;
	} else if (t > p->max_instances) {
		t = p->max_instances;
		why = LB_SG_R_ABOVE_MAX;
	}

	if (t > cur) {
		if (p->pending_guard && in->pending > 0)
			hold = LB_SG_R_PENDING;
		else if (cooling(g, in->now_ns, p->up_cooldown_ns))
			hold = LB_SG_R_COOLDOWN;
		if (hold != LB_SG_R_STEADY) {
			/* Bounds are hard: still climb back to the minimum. */
			if (cur < p->min_instances) {
				t = p->min_instances;
				why = LB_SG_R_BELOW_MIN;
			} else {
				t = cur;
				why = hold;
			}
		}
	} else if (t < cur) {
		if (cooling(g, in->now_ns, p->down_cooldown_ns)) {
			if (cur > p->max_instances) {
				t = p->max_instances;
				why = LB_SG_R_ABOVE_MAX;
			} else {
				t = cur;
				why = LB_SG_R_COOLDOWN;
			}
		}
	} else if (why == LB_SG_R_RECOMMENDED) {
		why = LB_SG_R_STEADY;
	}

	d->target = t;
	d->reason = why;
	if (t > cur) {
		d->action = LB_SG_UP;
		d->count = t - cur;
	} else if (t < cur) {
		d->action = LB_SG_DOWN;
		d->count = cur - t;
	} else {
		d->action = LB_SG_NONE;
		d->count = 0;
	}
}

int
lb_scale_guard_note(struct lb_scale_guard *g, uint64_t now_ns, uint32_t count)
{
	if (g == NULL)
		return -EINVAL;
	if (count > LB_SG_INSTANCES_MAX || (g->seen && now_ns < g->last_ns)) {
		g->st.rejected++;
		return -ERANGE;
	}
	g->seen = true;
	g->last_ns = now_ns;
	history_add(g, now_ns, count);
	return 0;
}

int
lb_scale_guard_decide(struct lb_scale_guard *g,
		      const struct lb_scale_guard_input *in,
		      struct lb_scale_guard_decision *out)
{
	struct lb_scale_guard_decision d;
	int rc;

	if (g == NULL)
		return -EINVAL;
	if (in == NULL || out == NULL) {
		g->st.rejected++;
		return -EINVAL;
	}
	rc = check_input(g, in);
	if (rc != 0) {
		g->st.rejected++;
		return rc;
	}
	g->seen = true;
	g->last_ns = in->now_ns;

	memset(&d, 0, sizeof(d));
	d.current = in->running + in->pending;
	d.raw = ceil_count(in->desired);
	d.recommended = recommend(in->desired, d.current, g->p.tolerance);
	history_add(g, in->now_ns, d.recommended);
	d.stabilized = stabilize(g, in->now_ns, d.recommended, d.current);

	/*
	 * WSO2: a pending instance that has not joined within
	 * server_startup_delay is terminated. It changes no capacity that
	 * was serving, so it neither waits for nor starts a cooldown.
	 */
	if (g->p.startup_timeout_ns > 0 && in->pending > 0 &&
	    in->now_ns - in->oldest_pending_ns >= g->p.startup_timeout_ns) {
		d.action = LB_SG_REMOVE_PENDING;
		d.count = 1;
		d.target = d.current - 1;
		d.reason = LB_SG_R_STARTUP_TIMEOUT;
		g->st.removals++;
	} else {
		decide(g, in, &d);
		if (d.action != LB_SG_NONE) {
			g->acted = true;
			g->action_ns = in->now_ns;
		}
		if (d.action == LB_SG_UP) {
			g->st.ups++;
			g->st.added += d.count;
		} else if (d.action == LB_SG_DOWN) {
			g->st.downs++;
			g->st.removed += d.count;
		}
	}
	g->st.decisions++;
	g->st.by_reason[d.reason]++;
	*out = d;
	return 0;
}

int
lb_scale_guard_stats_get(const struct lb_scale_guard *g,
			 struct lb_scale_guard_stats *st)
{
	if (g == NULL || st == NULL)
		return -EINVAL;
	*st = g->st;
	return 0;
}

const char *
lb_scale_guard_action_name(enum lb_scale_guard_action a)
{
	switch (a) {
	case LB_SG_NONE:
		return "none";
	case LB_SG_UP:
		return "up";
	case LB_SG_DOWN:
		return "down";
	case LB_SG_REMOVE_PENDING:
		return "remove-pending";
	}
	return "?";
}

const char *
lb_scale_guard_reason_name(enum lb_scale_guard_reason r)
{
	static const char *const names[LB_SG_R_COUNT] = {
		[LB_SG_R_STEADY] = "steady",
		[LB_SG_R_RECOMMENDED] = "recommended",
		[LB_SG_R_TOLERANCE] = "tolerance",
		[LB_SG_R_STABILIZED] = "stabilized",
		[LB_SG_R_RATE_LIMITED] = "rate-limited",
		[LB_SG_R_BELOW_MIN] = "below-min",
		[LB_SG_R_ABOVE_MAX] = "above-max",
		[LB_SG_R_PENDING] = "pending",
		[LB_SG_R_COOLDOWN] = "cooldown",
		[LB_SG_R_STARTUP_TIMEOUT] = "startup-timeout",
	};

	if ((unsigned int)r >= LB_SG_R_COUNT)
		return "?";
	return names[r];
}
