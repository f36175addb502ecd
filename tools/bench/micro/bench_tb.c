/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Token bucket takes: a local take served from tokens at hand (the common
 * case), a take that borrows from the shared global bucket (two atomic
 * compare-and-swaps), and the global take alone, each against a plain
 * single-threaded token bucket without atomics.
 */
#include <stdint.h>
#include <stdio.h>

#include "bench.h"
#include "lb/tb.h"

/* Simulated time advanced per call, so every take sees a fresh clock and
 * refills, as on a busy worker. */
#define STEP_NS 10

/* The baseline: the same lazy refill in nanotokens, no atomics. */
struct plain_tb {
	uint64_t tokens_nt;
	uint64_t last_ns;
	uint64_t cap_nt;
	uint64_t rate;
};

static int
plain_take(struct plain_tb *b, uint64_t n, uint64_t now_ns)
{
	if (now_ns > b->last_ns) {
		b->tokens_nt = lb_tb_refill_nt(b->tokens_nt, b->cap_nt, b->rate,
					       now_ns - b->last_ns);
		b->last_ns = now_ns;
	}
	if (b->tokens_nt < n * LB_TB_NT_PER_TOKEN)
		return -1;
	b->tokens_nt -= n * LB_TB_NT_PER_TOKEN;
	return 0;
}

struct plain_arg {
	struct plain_tb b;
	uint64_t now;
};

static void
run_plain(void *arg, uint64_t iters)
{
	struct plain_arg *a = arg;
	uint64_t ok = 0;

	for (uint64_t i = 0; i < iters; i++) {
		a->now += STEP_NS;
		ok += plain_take(&a->b, 1, a->now) == 0;
	}
	lb_bench_sink += ok;
}

struct local_arg {
	struct lb_tb_global g;
	struct lb_tb_local_conf conf;
	struct lb_tb_local l;
	uint64_t now;
};

static void
run_local(void *arg, uint64_t iters)
{
	struct local_arg *a = arg;
	uint64_t ok = 0;

	for (uint64_t i = 0; i < iters; i++) {
		a->now += STEP_NS;
		ok += lb_tb_local_take(&a->l, &a->conf, &a->g, 1, a->now) == 0;
	}
	lb_bench_sink += ok;
}

static void
run_global(void *arg, uint64_t iters)
{
	struct local_arg *a = arg;
	uint64_t got = 0;

	for (uint64_t i = 0; i < iters; i++) {
		a->now += STEP_NS;
		got += lb_tb_global_take(&a->g, 1, a->now);
	}
	lb_bench_sink += got;
}

static int
setup(struct local_arg *a, uint64_t batch)
{
	struct lb_tb_global_conf gc = {
		.capacity = LB_TB_CAPACITY_MAX,
		.rate = LB_TB_RATE_MAX,
	};

	lb_tb_local_conf_default(&a->conf);
	/* One huge batch keeps tokens at hand; a batch of 1 makes every
	 * take borrow. */
	a->conf.min_batch = batch;
	a->conf.max_batch = batch;
	a->now = 0;
	if (lb_tb_global_init(&a->g, &gc, 0) != 0 ||
	    lb_tb_local_conf_check(&a->conf) != 0)
		return -1;
	return lb_tb_local_init(&a->l, 1, 0);
}

void
lb_bench_tb(FILE *out, unsigned int rounds)
{
	static struct local_arg fast, borrow, global;
	struct plain_arg plain = {
		.b = { .cap_nt = LB_TB_CAPACITY_MAX * LB_TB_NT_PER_TOKEN,
		       .rate = LB_TB_RATE_MAX },
	};
	const struct lb_bench_case base = { "plain tb take (no atomics)",
					    run_plain, &plain };
	const struct lb_bench_case c_fast = { "tb local take, tokens at hand",
					      run_local, &fast };
	const struct lb_bench_case c_borrow = { "tb local take + global borrow",
						run_local, &borrow };
	const struct lb_bench_case c_global = { "tb global take (CAS)",
						run_global, &global };

	plain.b.tokens_nt = plain.b.cap_nt;
	if (setup(&fast, LB_TB_CAPACITY_MAX) != 0 || setup(&borrow, 1) != 0 ||
	    setup(&global, 1) != 0) {
		fprintf(out, "tb: setup failed\n");
		return;
	}
	lb_bench_pair(out, &c_fast, &base, 2000000, rounds);
	lb_bench_pair(out, &c_borrow, &base, 1000000, rounds);
	lb_bench_pair(out, &c_global, &base, 1000000, rounds);
}
