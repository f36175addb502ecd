/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Requests-in-flight autoscaling (WSO2 Elastic Load Balancer 2.0 seed).
 * See control/scale/inflight.h for the algorithm and its citations.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "inflight.h"

struct lb_inflight {
	struct lb_inflight_params p;
	struct lb_inflight_stats st;
	/* Ring of the last rounds_to_average samples, oldest at head. */
	uint32_t head;
	uint32_t nb;
	uint64_t sum;
	uint32_t win[];
};

void
lb_inflight_params_default(struct lb_inflight_params *p)
{
	if (p == NULL)
		return;
	memset(p, 0, sizeof(*p));
	p->queue_length_per_node = LB_INFLIGHT_QUEUE_LENGTH_DEFAULT;
	p->rounds_to_average = LB_INFLIGHT_ROUNDS_DEFAULT;
	p->min_instances = LB_INFLIGHT_MIN_DEFAULT;
	p->max_instances = LB_INFLIGHT_MAX_DEFAULT;
	p->instances_per_scale_up = 1;
	p->instances_per_scale_down = 1;
	p->step = LB_INFLIGHT_STEP_FIXED;
	p->avg = LB_INFLIGHT_AVG_EXACT;
	p->pending_guard = true;
	p->top_up_to_min = true;
	p->reset_after_action = false;
}

int
lb_inflight_params_check(const struct lb_inflight_params *p)
{
	if (p == NULL || p->queue_length_per_node == 0 ||
	    p->rounds_to_average == 0 ||
	    p->rounds_to_average > LB_INFLIGHT_ROUNDS_MAX ||
	    p->max_instances == 0 || p->min_instances > p->max_instances ||
	    p->instances_per_scale_up == 0 || p->instances_per_scale_down == 0)
		return -EINVAL;
	if (p->step != LB_INFLIGHT_STEP_FIXED &&
	    p->step != LB_INFLIGHT_STEP_TO_BAND)
		return -EINVAL;
	if (p->avg != LB_INFLIGHT_AVG_EXACT &&
	    p->avg != LB_INFLIGHT_AVG_TRUNCATE)
		return -EINVAL;
	if (p->max_instances > LB_INFLIGHT_INSTANCES_MAX ||
	    p->instances_per_scale_up > LB_INFLIGHT_INSTANCES_MAX ||
	    p->instances_per_scale_down > LB_INFLIGHT_INSTANCES_MAX)
		return -ERANGE;
	return 0;
}

struct lb_inflight *
lb_inflight_create(const struct lb_inflight_params *p)
{
	struct lb_inflight *ifl;
	int rc = lb_inflight_params_check(p);

	if (rc != 0) {
		errno = -rc;
		return NULL;
	}
	ifl = calloc(1,
		     sizeof(*ifl) + p->rounds_to_average * sizeof(ifl->win[0]));
	if (ifl == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ifl->p = *p;
	return ifl;
}

void
lb_inflight_free(struct lb_inflight *ifl)
{
	free(ifl);
}

void
lb_inflight_reset(struct lb_inflight *ifl)
{
	if (ifl == NULL)
		return;
	ifl->head = 0;
	ifl->nb = 0;
	ifl->sum = 0;
}

int
lb_inflight_params_get(const struct lb_inflight *ifl,
		       struct lb_inflight_params *p)
{
	if (ifl == NULL || p == NULL)
		return -EINVAL;
	*p = ifl->p;
	return 0;
}

/*
 * Seed, first bullet of the algorithm: "If the size of the vector is
 * reached rounds_to_average, we remove the first entry of the vector,
 * before adding the new entry."
 */
static void
window_push(struct lb_inflight *ifl, uint32_t v)
{
	uint32_t len = ifl->p.rounds_to_average;

	if (ifl->nb == len) {
		ifl->sum -= ifl->win[ifl->head];
		ifl->win[ifl->head] = v;
		ifl->head = (ifl->head + 1) % len;
	} else {
		ifl->win[(ifl->head + ifl->nb) % len] = v;
		ifl->nb++;
	}
	ifl->sum += v;
}

static void
decide_up(const struct lb_inflight *ifl, struct lb_inflight_decision *d)
{
	const struct lb_inflight_params *p = &ifl->p;
	uint32_t total = d->running + d->pending;
	uint32_t room, k;

	if (p->pending_guard && d->pending > 0) {
		d->reason = LB_INFLIGHT_R_PENDING;
		return;
	}
	if (total >= p->max_instances) {
		d->reason = LB_INFLIGHT_R_AT_MAX;
		return;
	}
	room = p->max_instances - total;
	if (p->step == LB_INFLIGHT_STEP_FIXED) {
		k = p->instances_per_scale_up;
	} else {
		/* Instances already pending count towards the band. */
		if (d->required <= total) {
			d->reason = LB_INFLIGHT_R_PENDING;
			return;
		}
		k = d->required - total;
	}
	d->action = LB_INFLIGHT_UP;
	d->count = k < room ? k : room;
	d->reason = LB_INFLIGHT_R_OVER_CAPACITY;
}

/*
 * Seed: "Before scaling down we make sure that we maintain the minimum
 * instance count of this service domain." Only running instances are
 * stopped; pending ones are left to come up.
 */
static void
decide_down(const struct lb_inflight *ifl, uint64_t band_high,
	    struct lb_inflight_decision *d)
{
	const struct lb_inflight_params *p = &ifl->p;
	uint32_t floor_n, k;

	if (d->running <= p->min_instances) {
		d->reason = LB_INFLIGHT_R_AT_MIN;
		return;
	}
	if (p->step == LB_INFLIGHT_STEP_FIXED) {
		k = p->instances_per_scale_down;
		if (k > d->running - p->min_instances)
			k = d->running - p->min_instances;
	} else {
		/* band_high <= running - 1 whenever (n-1)*q > l. */
		floor_n = (uint32_t)band_high;
		if (floor_n < p->min_instances)
			floor_n = p->min_instances;
		k = d->running - floor_n;
	}
	d->action = LB_INFLIGHT_DOWN;
	d->count = k;
	d->reason = LB_INFLIGHT_R_UNDER_CAPACITY;
}

int
lb_inflight_tick(struct lb_inflight *ifl, uint32_t in_flight, uint32_t running,
		 uint32_t pending, struct lb_inflight_decision *d)
{
	const struct lb_inflight_params *p;
	uint64_t num, den, cap_den, q, band_high;
	uint32_t total;

	if (ifl == NULL)
		return -EINVAL;
	if (d == NULL) {
		ifl->st.rejected++;
		return -EINVAL;
	}
	if (running > LB_INFLIGHT_INSTANCES_MAX ||
	    pending > LB_INFLIGHT_INSTANCES_MAX) {
		ifl->st.rejected++;
		return -ERANGE;
	}
	p = &ifl->p;
	q = p->queue_length_per_node;
	total = running + pending;
	window_push(ifl, in_flight);

	memset(d, 0, sizeof(*d));
	d->in_flight = in_flight;
	d->running = running;
	d->pending = pending;
	d->nb_samples = ifl->nb;
	d->sum = ifl->sum;
	d->capacity = running * q;
	d->capacity_less_one = ((int64_t)running - 1) * (int64_t)q;
	d->action = LB_INFLIGHT_NOOP;

	/*
	 * l = num / den exactly. Every comparison of l with a multiple of q
	 * is done on num against the multiple times den, in integers.
	 */
	num = ifl->sum;
	den = ifl->nb > 0 ? ifl->nb : 1;
	if (p->avg == LB_INFLIGHT_AVG_TRUNCATE) {
		num /= den;
		den = 1;
	}
	d->average = (double)num / (double)den;
	cap_den = q * den;
	d->required = (uint32_t)((num + cap_den - 1) / cap_den);
	band_high = num / cap_den + 1;

	if (p->top_up_to_min && total < p->min_instances) {
		d->action = LB_INFLIGHT_UP;
		d->count = p->min_instances - total;
		d->reason = LB_INFLIGHT_R_BELOW_MIN;
	} else if (ifl->nb < p->rounds_to_average) {
		d->reason = LB_INFLIGHT_R_WINDOW_FILLING;
	} else if (num > running * cap_den) {
		decide_up(ifl, d);
	} else if (running > 0 && (running - 1) * cap_den > num) {
		decide_down(ifl, band_high, d);
	} else {
		d->reason = LB_INFLIGHT_R_IN_BAND;
	}

	if (d->action == LB_INFLIGHT_UP) {
		d->target = total + d->count;
		ifl->st.ups++;
		ifl->st.added += d->count;
	} else if (d->action == LB_INFLIGHT_DOWN) {
		d->target = total - d->count;
		ifl->st.downs++;
		ifl->st.removed += d->count;
	} else {
		d->target = total;
	}
	if (d->action != LB_INFLIGHT_NOOP && p->reset_after_action)
		lb_inflight_reset(ifl);
	ifl->st.ticks++;
	ifl->st.by_reason[d->reason]++;
	return 0;
}

int
lb_inflight_stats_get(const struct lb_inflight *ifl,
		      struct lb_inflight_stats *st)
{
	if (ifl == NULL || st == NULL)
		return -EINVAL;
	*st = ifl->st;
	return 0;
}

const char *
lb_inflight_action_name(enum lb_inflight_action a)
{
	switch (a) {
	case LB_INFLIGHT_NOOP:
		return "noop";
	case LB_INFLIGHT_UP:
		return "up";
	case LB_INFLIGHT_DOWN:
		return "down";
	}
	return "?";
}

const char *
lb_inflight_reason_name(enum lb_inflight_reason r)
{
	static const char *const names[LB_INFLIGHT_R_COUNT] = {
		[LB_INFLIGHT_R_WINDOW_FILLING] = "window-filling",
		[LB_INFLIGHT_R_IN_BAND] = "in-band",
		[LB_INFLIGHT_R_OVER_CAPACITY] = "over-capacity",
		[LB_INFLIGHT_R_UNDER_CAPACITY] = "under-capacity",
		[LB_INFLIGHT_R_PENDING] = "pending",
		[LB_INFLIGHT_R_AT_MAX] = "at-max",
		[LB_INFLIGHT_R_AT_MIN] = "at-min",
		[LB_INFLIGHT_R_BELOW_MIN] = "below-min",
	};

	if ((unsigned int)r >= LB_INFLIGHT_R_COUNT)
		return "?";
	return names[r];
}
