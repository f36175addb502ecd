/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The budget of new flows per source: one charge per new flow, for one
 * source that stays in cache, for 65,536 sources in a table of as many
 * (the default: 1 MiB, as lb-dpbench's new test spreads its SYNs), and
 * for a spray of addresses never seen that replace one entry each. The
 * baseline reads the same addresses and sums them.
 */
#include <stdio.h>

#include "bench.h"
#include "lb/rng.h"
#include "src_budget.h"

#define NB_SRC 65536
#define T_STEP 100 /* ns of clock per call: 10 M new flows/s */

struct arg {
	struct lb_src_budget *b;
	uint32_t mask; /* of the sources used */
	uint32_t spray; /* add a new high part each lap */
	uint64_t now;
	uint32_t src[NB_SRC];
};

static void
run_take(void *p, uint64_t iters)
{
	struct arg *a = p;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++) {
		uint32_t s = a->src[i & a->mask];

		if (a->spray && (i & a->mask) == 0)
			a->spray += 0x01000000u;
		a->now += T_STEP;
		acc += lb_src_budget_take(a->b, s ^ a->spray, a->now);
	}
	lb_bench_sink = acc;
}

static void
run_base(void *p, uint64_t iters)
{
	struct arg *a = p;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++) {
		a->now += T_STEP;
		acc += a->src[i & a->mask] ^ a->spray ^ a->now;
	}
	lb_bench_sink = acc;
}

static void
one(FILE *out, struct arg *a, const char *name, uint32_t mask,
    uint32_t spray, unsigned int rounds)
{
	const struct lb_bench_case take = { name, run_take, a };
	const struct lb_bench_case base = { "read the source", run_base, a };

	a->mask = mask;
	a->spray = spray;
	lb_bench_pair(out, &take, &base, 2000000, rounds);
}

void
lb_bench_src_budget(FILE *out, unsigned int rounds)
{
	static struct arg arg;
	static struct lb_src_budget_stats st;
	struct lb_src_budget_conf c;
	struct lb_xoshiro x;

	lb_src_budget_conf_default(&c);
	/* The rate high enough that every call passes: the cost, not the
	 * verdict, is measured. */
	c.rate = LB_SRC_BUDGET_RATE_MAX;
	c.burst = LB_SRC_BUDGET_BURST_MAX;
	arg.b = lb_src_budget_create(&c, 1, 2, &st);
	if (arg.b == NULL)
		return;
	lb_xoshiro_seed(&x, 42);
	for (int i = 0; i < NB_SRC; i++)
		arg.src[i] = (uint32_t)lb_xoshiro_next(&x) & 0x00ffffffu;
	arg.now = 1000000000ull;
	one(out, &arg, "src_budget take, 1 source", 0, 0, rounds);
	one(out, &arg, "src_budget take, 65536 sources", NB_SRC - 1, 0,
	    rounds);
	one(out, &arg, "src_budget take, sprayed sources", NB_SRC - 1,
	    0x01000000u, rounds);
	lb_src_budget_free(arg.b);
}
