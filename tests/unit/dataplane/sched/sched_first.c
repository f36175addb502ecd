/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `first`: every new flow goes to the first eligible backend. Linked only
 * into sched_test, it shows that a scheduler is one file registering
 * itself, with nothing else to edit; production programs do not have it.
 */
#include <errno.h>
#include <stdlib.h>

#include "lb/sched.h"

struct first {
	uint32_t n;
	bool eligible[];
};

static void *
first_create(const struct lb_sched_be *be, uint32_t n)
{
	struct first *f;

	if (n == 0) {
		errno = EINVAL;
		return NULL;
	}
	f = calloc(1, sizeof(*f) + n * sizeof(f->eligible[0]));
	if (f == NULL)
		return NULL;
	f->n = n;
	for (uint32_t i = 0; i < n; i++)
		f->eligible[i] = be[i].eligible;
	return f;
}

static int
first_from(const struct first *f, uint32_t start, uint32_t *be)
{
	for (uint32_t i = start; i < f->n; i++)
		if (f->eligible[i]) {
			*be = i;
			return 0;
		}
	return -ENOENT;
}

static int
first_pick(void *st, uint64_t flow_hash, const struct lb_rng *rng, uint32_t *be)
{
	(void)flow_hash;
	(void)rng;
	return first_from(st, 0, be);
}

static int
first_next(void *st, uint32_t prev, uint32_t *be)
{
	struct first *f = st;

	if (prev >= f->n)
		return -EINVAL;
	return first_from(f, prev + 1, be);
}

static int
first_set_eligible(void *st, uint32_t be, bool eligible)
{
	struct first *f = st;

	if (be >= f->n)
		return -EINVAL;
	f->eligible[be] = eligible;
	return 0;
}

static const struct lb_sched_ops first_ops = {
	.name = "first",
	.help = "the first eligible backend",
	.create = first_create,
	.destroy = lb_sched_free,
	.pick = first_pick,
	.next = first_next,
	.result = lb_sched_no_result,
	.set_eligible = first_set_eligible,
	.errors = lb_sched_no_errors,
	.set_errors = lb_sched_no_set_errors,
};

LB_SCHED_REGISTER(first_ops);
