/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Cost of the error-adaptive pick on 16 backends against a plain uniform
 * draw: the cached pick (one draw and a binary search over the prefix
 * sums), the uniform shortcut when nothing has failed, and a pick that
 * follows an error-count change and so rebuilds the weights first.
 */
#include <stdio.h>

#include "lb/adaptive.h"
#include "lb/rng.h"

#include "bench.h"

#define NB_BE 16

struct ctx {
	struct lb_adaptive *ad;
	struct lb_rng rng;
};

static void
run_pick(void *arg, uint64_t iters)
{
	struct ctx *c = arg;
	uint64_t acc = 0;
	uint32_t be = 0;

	for (uint64_t i = 0; i < iters; i++) {
		lb_adaptive_pick(c->ad, &c->rng, &be);
		acc += be;
	}
	lb_bench_sink += acc;
}

/* An error on a non-maximal backend, then its reset: one rebuild a pick. */
static void
run_change_pick(void *arg, uint64_t iters)
{
	struct ctx *c = arg;
	uint64_t acc = 0;
	uint32_t be = 0;

	for (uint64_t i = 0; i < iters; i++) {
		lb_adaptive_fail(c->ad, 0);
		lb_adaptive_ok(c->ad, 0);
		lb_adaptive_pick(c->ad, &c->rng, &be);
		acc += be;
	}
	lb_bench_sink += acc;
}

static void
run_uniform(void *arg, uint64_t iters)
{
	struct ctx *c = arg;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++)
		acc += lb_rng_below(&c->rng, NB_BE);
	lb_bench_sink += acc;
}

void
lb_bench_adaptive(FILE *out, unsigned int rounds)
{
	/* Five of the 16 backends with errors {backend, e_i}. */
	static const struct {
		uint32_t be, e;
	} errs[] = {{2, 3}, {4, 7}, {7, 1}, {11, 20}, {15, 2}};
	struct lb_xoshiro xa, xb, xc;
	struct ctx errored = {lb_adaptive_create(NB_BE, NULL),
			      lb_rng_xoshiro(&xa)};
	struct ctx clean = {lb_adaptive_create(NB_BE, NULL),
			    lb_rng_xoshiro(&xc)};
	struct ctx base = {NULL, lb_rng_xoshiro(&xb)};
	const struct lb_bench_case pick = {"adaptive pick, 16 be, 5 errored",
					   run_pick, &errored};
	const struct lb_bench_case pick_clean = {
		"adaptive pick, 16 be, no errors", run_pick, &clean};
	const struct lb_bench_case change = {"fail+ok+pick (weight rebuild)",
					     run_change_pick, &errored};
	const struct lb_bench_case uni = {"lb_rng_below(16)", run_uniform,
					  &base};

	lb_xoshiro_seed(&xa, 1);
	lb_xoshiro_seed(&xb, 2);
	lb_xoshiro_seed(&xc, 3);
	if (errored.ad == NULL || clean.ad == NULL) {
		fprintf(out, "adaptive: cannot create the scheduler\n");
		goto out;
	}
	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++)
		lb_adaptive_set_errors(errored.ad, errs[i].be, errs[i].e);
	lb_bench_pair(out, &pick, &uni, 200000, rounds);
	lb_bench_pair(out, &pick_clean, &uni, 200000, rounds);
	lb_bench_pair(out, &change, &uni, 50000, rounds);
out:
	lb_adaptive_free(errored.ad);
	lb_adaptive_free(clean.ad);
}
