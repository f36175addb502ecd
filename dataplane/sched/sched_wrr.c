/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>

#include "lb/sched.h"

/* ---- wrr: smooth weighted round robin ----------------------------------
 * Each pick adds every eligible backend's weight to its running score and
 * takes the highest, which then pays back the total: picks follow the
 * weights and never come in bursts for one backend. */

struct wrr_be {
	int64_t score;
	uint32_t weight;
	bool eligible;
};

struct wrr {
	uint32_t n;
	struct wrr_be be[];
};

static void *
wrr_create(const struct lb_sched_be *be, uint32_t n)
{
	struct wrr *w;

	if (n == 0) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w) + n * sizeof(w->be[0]));
	if (w == NULL)
		return NULL;
	w->n = n;
	for (uint32_t i = 0; i < n; i++) {
		w->be[i].weight = be[i].weight ? be[i].weight : 1;
		w->be[i].eligible = be[i].eligible;
	}
	return w;
}

static int
wrr_pick(void *st, uint64_t flow_hash, const struct lb_rng *rng, uint32_t *be)
{
	struct wrr *w = st;
	int64_t total = 0;
	uint32_t best = UINT32_MAX;

	(void)flow_hash;
	(void)rng;
	for (uint32_t i = 0; i < w->n; i++) {
		if (!w->be[i].eligible)
			continue;
		w->be[i].score += w->be[i].weight;
		total += w->be[i].weight;
		if (best == UINT32_MAX || w->be[i].score > w->be[best].score)
			best = i;
	}
	if (best == UINT32_MAX)
		return -ENOENT;
	w->be[best].score -= total;
	*be = best;
	return 0;
}

static int
wrr_next(void *st, uint32_t prev, uint32_t *be)
{
	struct wrr *w = st;

	if (prev >= w->n)
		return -EINVAL;
	for (uint32_t k = 1; k < w->n; k++) {
		uint32_t i = (prev + k) % w->n;

		if (w->be[i].eligible) {
			*be = i;
			return 0;
		}
	}
	return -ENOENT;
}

static int
wrr_set_eligible(void *st, uint32_t be, bool eligible)
{
	struct wrr *w = st;

	if (be >= w->n)
		return -EINVAL;
	w->be[be].eligible = eligible;
	w->be[be].score = 0;
	return 0;
}

static const struct lb_sched_ops wrr_ops = {
	.name = "wrr",
	.help = "smooth weighted round robin",
	.create = wrr_create,
	.destroy = lb_sched_free,
	.pick = wrr_pick,
	.next = wrr_next,
	.result = lb_sched_no_result,
	.set_eligible = wrr_set_eligible,
	.errors = lb_sched_no_errors,
	.set_errors = lb_sched_no_set_errors,
};

LB_SCHED_REGISTER(wrr_ops);
