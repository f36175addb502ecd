/* SPDX-License-Identifier: BSD-3-Clause */
#include "lb/adaptive.h"
#include "lb/sched.h"

/* ---- adaptive: the paper's error-adaptive weights ---------------------- */

static void *
ad_create(const struct lb_sched_be *be, uint32_t n)
{
	struct lb_adaptive *ad = lb_adaptive_create(n, NULL);

	if (ad == NULL)
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		if (!be[i].eligible)
			lb_adaptive_set_eligible(ad, i, false);
	return ad;
}

static void
ad_destroy(void *st)
{
	lb_adaptive_free(st);
}

static int
ad_pick(void *st, uint64_t flow_hash, const struct lb_rng *rng, uint32_t *be)
{
	(void)flow_hash;
	return lb_adaptive_pick(st, rng, be);
}

static int
ad_next(void *st, uint32_t prev, uint32_t *be)
{
	return lb_adaptive_next(st, prev, be);
}

static void
ad_result(void *st, uint32_t be, bool ok)
{
	if (ok)
		lb_adaptive_ok(st, be);
	else
		lb_adaptive_fail(st, be);
}

static int
ad_set_eligible(void *st, uint32_t be, bool eligible)
{
	return lb_adaptive_set_eligible(st, be, eligible);
}

static int
ad_set_errors(void *st, uint32_t be, uint32_t errors)
{
	/* States are created with the default cap; above it the count
	 * saturates, as failures would have made it. */
	if (errors > LB_ADAPTIVE_ERR_CAP_DEFAULT)
		errors = LB_ADAPTIVE_ERR_CAP_DEFAULT;
	return lb_adaptive_set_errors(st, be, errors);
}

static int
ad_guard(void *st, const struct lb_sched_guard *g)
{
	return lb_adaptive_guard(st, &(struct lb_adaptive_conf){
					     .err_memory = g->err_memory,
					     .min_volume = g->min_volume,
					     .max_eject_pct = g->max_eject_pct,
					     .panic_pct = g->panic_pct,
				     });
}

static uint32_t
ad_errors(void *st, uint32_t be)
{
	struct lb_adaptive_view v;

	if (lb_adaptive_view(st, be, &v) != 0)
		return 0;
	return v.errors;
}

static const struct lb_sched_ops adaptive_ops = {
	.name = "adaptive",
	.help = "weighted random with weights from recent errors "
		"(default)",
	.create = ad_create,
	.destroy = ad_destroy,
	.pick = ad_pick,
	.next = ad_next,
	.result = ad_result,
	.set_eligible = ad_set_eligible,
	.errors = ad_errors,
	.set_errors = ad_set_errors,
	.guard = ad_guard,
};

LB_SCHED_REGISTER(adaptive_ops);
