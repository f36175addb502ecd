/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>

#include "lb/sched.h"

/* ---- rr: plain round robin over eligible backends ---------------------- */

struct rr {
	uint32_t n;
	uint32_t cursor;
	bool eligible[];
};

static void *
rr_create(const struct lb_sched_be *be, uint32_t n)
{
	struct rr *r;

	if (n == 0) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r) + n * sizeof(bool));
	if (r == NULL)
		return NULL;
	r->n = n;
	for (uint32_t i = 0; i < n; i++)
		r->eligible[i] = be[i].eligible;
	return r;
}

static int
rr_next_from(const struct rr *r, uint32_t start, uint32_t skip, uint32_t *be)
{
	for (uint32_t k = 0; k < r->n; k++) {
		uint32_t i = (start + k) % r->n;

		if (i != skip && r->eligible[i]) {
			*be = i;
			return 0;
		}
	}
	return -ENOENT;
}

static int
rr_pick(void *st, uint64_t flow_hash, const struct lb_rng *rng, uint32_t *be)
{
	struct rr *r = st;
	int rc;

	(void)flow_hash;
	(void)rng;
	rc = rr_next_from(r, r->cursor, UINT32_MAX, be);
	if (rc == 0)
		r->cursor = (*be + 1) % r->n;
	return rc;
}

static int
rr_next(void *st, uint32_t prev, uint32_t *be)
{
	struct rr *r = st;

	if (prev >= r->n)
		return -EINVAL;
	return rr_next_from(r, prev + 1, prev, be);
}

static int
rr_set_eligible(void *st, uint32_t be, bool eligible)
{
	struct rr *r = st;

	if (be >= r->n)
		return -EINVAL;
	r->eligible[be] = eligible;
	return 0;
}

static const struct lb_sched_ops rr_ops = {
	.name = "rr",
	.help = "round robin, weights ignored",
	.create = rr_create,
	.destroy = lb_sched_free,
	.pick = rr_pick,
	.next = rr_next,
	.result = lb_sched_no_result,
	.set_eligible = rr_set_eligible,
	.errors = lb_sched_no_errors,
	.set_errors = lb_sched_no_set_errors,
};

LB_SCHED_REGISTER(rr_ops);
