/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "lb/rng.h"
#include "lb/tb.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define MS 1000000ULL
#define SEC 1000000000ULL
#define NT LB_TB_NT_PER_TOKEN

static void
global_init(struct lb_tb_global *g, uint64_t cap, uint64_t rate,
	    uint64_t threshold, enum lb_tb_refill refill, uint64_t now)
{
	struct lb_tb_global_conf c = {
		.capacity = cap,
		.rate = rate,
		.threshold = threshold,
		.refill = refill,
	};

	assert_int_equal(lb_tb_global_init(g, &c, now), 0);
}

/* Claims 9 and 18: min(max, tokens + rate x elapsed), in nanotokens. */
static void
test_refill_vectors(void **state)
{
	static const struct {
		uint64_t tokens_nt, cap_nt, rate, elapsed_ns, expect_nt;
	} rows[] = {
		/* 10 tokens/s for 1 s from empty */
		{ 0, 100 * NT, 10, SEC, 10 * NT },
		/* the cap: 95 + 10 is cut to 100 */
		{ 95 * NT, 100 * NT, 10, SEC, 100 * NT },
		/* exactly reaching the cap */
		{ 90 * NT, 100 * NT, 10, SEC, 100 * NT },
		{ 0, 100 * NT, 10, 0, 0 },
		/* fractions of a token are kept: 3/s for 0.5 s = 1.5 */
		{ 0, 100 * NT, 3, 500 * MS, 1500000000ULL },
		/* one nanosecond at 1 token/s is one nanotoken */
		{ 7, 100 * NT, 1, 1, 8 },
		/* largest rate and capacity: 1 ms of 1e12/s fills 1e9 */
		{ 0, LB_TB_CAPACITY_MAX * NT, LB_TB_RATE_MAX, MS,
		  LB_TB_CAPACITY_MAX * NT },
		{ 0, LB_TB_CAPACITY_MAX * NT, LB_TB_RATE_MAX, MS - 1,
		  (LB_TB_CAPACITY_MAX - 1000) * NT },
		/* any elapsed time, however long, cannot overflow */
		{ 0, LB_TB_CAPACITY_MAX * NT, LB_TB_RATE_MAX, UINT64_MAX,
		  LB_TB_CAPACITY_MAX * NT },
		{ NT / 2, 1 * NT, 1, UINT64_MAX, 1 * NT },
		/* already above the cap (never happens, still capped) */
		{ 200 * NT, 100 * NT, 10, 0, 100 * NT },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(rows); i++)
		assert_int_equal(lb_tb_refill_nt(rows[i].tokens_nt,
						 rows[i].cap_nt, rows[i].rate,
						 rows[i].elapsed_ns),
				 rows[i].expect_nt);
}

/* Claims 1, 5, 6, 7: what a global bucket dispenses, step by step. */
static void
test_global_sequence(void **state)
{
	struct step {
		uint64_t now, lo, hi, expect, avail_after;
	};
	static const struct {
		const char *desc;
		uint64_t cap, rate, threshold;
		enum lb_tb_refill refill;
		struct step s[8];
		size_t n;
	} rows[] = {
		{ "claim 1: partial grants, lazy refill, cap", 100, 10, 0,
		  LB_TB_REFILL_EACH,
		  { { 0, 1, 100, 100, 0 },
		    { 0, 1, 5, 0, 0 },
		    { 1 * SEC, 1, 100, 10, 0 },
		    { 1500 * MS, 1, 100, 5, 0 },
		    { 1550 * MS, 1, 100, 0, 0 }, /* 0.5 token */
		    { 1600 * MS, 1, 100, 1, 0 }, /* 0.5 + 0.5 */
		    { 100 * SEC, 1, 1000, 100, 0 } },
		  7 },
		{ "take_range: a grant below lo is refused", 100, 10, 0,
		  LB_TB_REFILL_EACH,
		  { { 0, 1, 60, 60, 40 },
		    { 0, 50, 60, 0, 40 },
		    { 0, 40, 60, 40, 0 } },
		  3 },
		{ "claim 5: dispense only above a threshold of 5", 10, 1, 5,
		  LB_TB_REFILL_EACH,
		  { { 0, 1, 4, 4, 6 },
		    { 0, 1, 4, 4, 2 },
		    { 0, 1, 1, 0, 2 },
		    { 3 * SEC, 1, 10, 0, 5 },
		    { 4 * SEC, 1, 10, 6, 0 } },
		  5 },
		{ "claim 6: refill on every request", 10, 1, 0,
		  LB_TB_REFILL_EACH,
		  { { 0, 1, 5, 5, 5 },
		    { 20 * SEC, 1, 5, 5, 5 },
		    { 20 * SEC, 1, 20, 5, 0 } },
		  3 },
		{ "claim 7: refill only when short", 10, 1, 0,
		  LB_TB_REFILL_ON_SHORTAGE,
		  { { 0, 1, 5, 5, 5 },
		    /* 5 at hand: no refill, the clock stays at 0 */
		    { 20 * SEC, 1, 5, 5, 10 },
		    /* short: 20 s of refill, capped at 10 */
		    { 20 * SEC, 1, 20, 10, 0 } },
		  3 },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(rows); i++) {
		struct lb_tb_global g;

		global_init(&g, rows[i].cap, rows[i].rate, rows[i].threshold,
			    rows[i].refill, 0);
		for (size_t j = 0; j < rows[i].n; j++) {
			const struct step *s = &rows[i].s[j];

			print_message("%s, step %zu\n", rows[i].desc, j);
			assert_int_equal(lb_tb_global_take_range(&g, s->lo,
								 s->hi,
								 s->now),
					 s->expect);
			assert_int_equal(lb_tb_global_avail(&g, s->now),
					 s->avail_after);
		}
	}
}

/* Claim 12: ((1)tar_x + (2)tar_(x-1) + ... + (x)tar_1) / (1 + ... + x). */
static void
test_wavg_vectors(void **state)
{
	static const struct {
		uint64_t hist[LB_TB_INTERVALS_MAX]; /* tar_1 first */
		uint32_t x;
		uint64_t expect;
	} rows[] = {
		{ { 7 }, 1, 7 },
		/* (1 x 4 + 2 x 10) / 3 = 8 */
		{ { 10, 4 }, 2, 8 },
		/* (1 x 10 + 2 x 20 + 3 x 30) / 6 = 23.33, rounded up */
		{ { 30, 20, 10 }, 3, 24 },
		/* the latest interval weighs x, the oldest 1 */
		{ { 100, 0, 0, 0 }, 4, 40 },
		{ { 0, 0, 0, 100 }, 4, 10 },
		/* constant demand averages to itself */
		{ { 50, 50, 50, 50 }, 4, 50 },
		/* (1 + 4 + 9 + 16 + 25) / 15 = 3.67 */
		{ { 5, 4, 3, 2, 1 }, 5, 4 },
		{ { 1, 2, 3, 4, 5 }, 5, 3 }, /* 35 / 15 = 2.33 */
		{ { 0, 0, 0 }, 3, 0 },
		{ { 1 }, 1, 1 },
		{ { 0, 0, 1 }, 3, 1 }, /* 1/6 still asks for one token */
		/* 128-bit sum: no overflow with the largest values */
		{ { UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX,
		    UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX,
		    UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX,
		    UINT64_MAX },
		  16, UINT64_MAX },
		/* out of range x */
		{ { 5 }, 0, 0 },
		{ { 5 }, LB_TB_INTERVALS_MAX + 1, 0 },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(rows); i++) {
		print_message("wavg row %zu\n", i);
		assert_int_equal(lb_tb_wavg(rows[i].hist, rows[i].x),
				 rows[i].expect);
	}
	assert_int_equal(lb_tb_wavg(NULL, 3), 0);
	/* Against the formula in floating point on random histories. */
	{
		struct lb_xoshiro xs;
		struct lb_rng r;

		lb_xoshiro_seed(&xs, 12);
		r = lb_rng_xoshiro(&xs);
		for (int k = 0; k < 1000; k++) {
			uint64_t h[LB_TB_INTERVALS_MAX];
			uint32_t x = 1 + (uint32_t)lb_rng_below(&r, 16);
			double num = 0, den = 0;

			for (uint32_t j = 0; j < x; j++) {
				h[j] = lb_rng_below(&r, 100000);
				num += (double)(x - j) * (double)h[j];
				den += (double)(j + 1);
			}
			assert_int_equal(lb_tb_wavg(h, x),
					 (uint64_t)ceil(num / den - 1e-9));
		}
	}
}

/* Batches follow the weighted average of past intervals' demand. */
static void
test_batch_adapts(void **state)
{
	static const struct {
		const char *desc;
		enum lb_tb_batch batch;
		enum lb_tb_demand demand;
		double fraction;
		uint64_t min_batch, max_batch;
		uint32_t x;
		uint64_t cap, rate, pre_drain;
		uint64_t demand_per_iv[4];
		uint64_t expect_batch[4]; /* during each interval */
		uint64_t expect_admitted;
	} rows[] = {
		{ "claim 12, x = 3, served demand", LB_TB_BATCH_WAVG,
		  LB_TB_DEMAND_SERVED, 0, 1, 0, 3, 1000000, 1000000, 0,
		  /* no history -> min_batch; [10] -> 10; [20, 10] -> 50/3;
		   * [30, 20, 10] -> 140/6 */
		  { 10, 20, 30, 5 }, { 1, 10, 17, 24 }, 65 },
		{ "x = 1 follows the last interval", LB_TB_BATCH_WAVG,
		  LB_TB_DEMAND_SERVED, 0, 1, 0, 1, 1000000, 1000000, 0,
		  { 10, 20, 30, 5 }, { 1, 10, 20, 30 }, 65 },
		{ "max_batch caps, min_batch floors", LB_TB_BATCH_WAVG,
		  LB_TB_DEMAND_SERVED, 0, 8, 12, 3, 1000000, 1000000, 0,
		  { 10, 20, 30, 5 }, { 8, 10, 12, 12 }, 65 },
		{ "claims 10/21: a quarter of the capacity",
		  LB_TB_BATCH_FRACTION, LB_TB_DEMAND_SERVED, 0.25, 1, 0, 3,
		  1000, 1000000, 0, { 10, 20, 30, 5 }, { 250, 250, 250, 250 },
		  65 },
		/* 10 tokens left and 0.1 token/interval of refill: 10 of 30
		 * admitted. Served demand says 10, offered demand 30. */
		{ "served demand under throttling", LB_TB_BATCH_WAVG,
		  LB_TB_DEMAND_SERVED, 0, 1, 0, 1, 100, 1, 90, { 30, 1 },
		  { 1, 10 }, 10 },
		{ "offered demand under throttling", LB_TB_BATCH_WAVG,
		  LB_TB_DEMAND_OFFERED, 0, 1, 0, 1, 100, 1, 90, { 30, 1 },
		  { 1, 30 }, 10 },
	};
	const uint64_t iv = 100 * MS;

	(void)state;
	for (size_t i = 0; i < NELEM(rows); i++) {
		struct lb_tb_local_conf c;
		struct lb_tb_global g;
		struct lb_tb_local l;
		uint64_t admitted = 0;

		print_message("%s\n", rows[i].desc);
		lb_tb_local_conf_default(&c);
		c.interval_ns = iv;
		c.nb_intervals = rows[i].x;
		c.batch = rows[i].batch;
		c.demand = rows[i].demand;
		c.batch_fraction = rows[i].fraction;
		c.min_batch = rows[i].min_batch;
		c.max_batch = rows[i].max_batch;
		assert_int_equal(lb_tb_local_conf_check(&c), 0);
		global_init(&g, rows[i].cap, rows[i].rate, 0,
			    LB_TB_REFILL_EACH, 0);
		if (rows[i].pre_drain)
			assert_int_equal(lb_tb_global_take(&g,
							   rows[i].pre_drain,
							   0),
					 rows[i].pre_drain);
		lb_tb_local_init(&l, 1, 0);
		for (size_t k = 0; k < NELEM(rows[i].demand_per_iv); k++) {
			uint64_t d = rows[i].demand_per_iv[k];
			uint64_t borrows = l.cnt.borrows;

			if (d == 0)
				break;
			for (uint64_t j = 0; j < d; j++) {
				uint64_t t = k * iv + j * iv / d;

				admitted += lb_tb_local_take(&l, &c, &g, 1,
							     t) == 0;
				if (j == 0)
					assert_int_equal(
						lb_tb_local_batch(&l, &c,
								  rows[i].cap),
						rows[i].expect_batch[k]);
			}
			/* When the interval borrowed, it asked for that. */
			if (l.cnt.borrows > borrows)
				assert_int_equal(l.last_batch,
						 rows[i].expect_batch[k]);
		}
		assert_int_equal(admitted, rows[i].expect_admitted);
		assert_int_equal(l.cnt.admitted, rows[i].expect_admitted);
		assert_int_equal(l.cnt.admitted + l.tokens, l.cnt.borrowed);
	}
}

/* Intervals without traffic enter the history as zero demand. */
static void
test_idle_intervals(void **state)
{
	struct lb_tb_local_conf c;
	struct lb_tb_global g;
	struct lb_tb_local l;

	(void)state;
	lb_tb_local_conf_default(&c);
	c.nb_intervals = 4;
	global_init(&g, 1000000, 1000000, 0, LB_TB_REFILL_EACH, 0);
	lb_tb_local_init(&l, 9, 0);
	for (int j = 0; j < 100; j++)
		assert_int_equal(lb_tb_local_take(&l, &c, &g, 1, 0), 0);
	/* Only completed intervals count: x = 1 and [100] -> 100 */
	assert_int_equal(lb_tb_local_take(&l, &c, &g, 1, c.interval_ns), 0);
	assert_int_equal(l.nb_hist, 1);
	assert_int_equal(lb_tb_local_batch(&l, &c, 1000000), 100);
	/* Two intervals later: [0, 1, 100] -> (100 + 2 + 0) / 6 = 17 */
	assert_int_equal(lb_tb_local_take(&l, &c, &g, 1, 3 * c.interval_ns),
			 0);
	assert_int_equal(l.nb_hist, 3);
	assert_int_equal(l.hist[0], 0);
	assert_int_equal(l.hist[1], 1);
	assert_int_equal(l.hist[2], 100);
	assert_int_equal(lb_tb_local_batch(&l, &c, 1000000), 17);
	/* Far later: the whole history is quiet -> min_batch */
	assert_int_equal(lb_tb_local_take(&l, &c, &g, 1, 50 * c.interval_ns),
			 0);
	assert_int_equal(l.nb_hist, 4);
	assert_int_equal(lb_tb_local_batch(&l, &c, 1000000), 1);
	/* A clock going backwards stays in the current interval. */
	assert_int_equal(lb_tb_local_take(&l, &c, &g, 1, 10 * c.interval_ns),
			 0);
	assert_int_equal(l.interval_start, 50 * c.interval_ns);
}

/* Claims 2 and 3: the negative cache across interval boundaries. */
static void
test_negative_cache(void **state)
{
	struct step {
		uint64_t now;
		int rc;
		uint64_t borrows, neg_hits;
	};
	static const struct {
		const char *desc;
		enum lb_tb_neg neg;
		uint64_t hold;
		struct step s[10];
		size_t n;
	} rows[] = {
		{ "until the interval ends (default)", LB_TB_NEG_INTERVAL, 0,
		  { { 0, 0, 1, 0 },
		    { 0, 0, 2, 0 },
		    /* 0.01 token in the global bucket: refused */
		    { 10 * MS, -EAGAIN, 3, 0 },
		    /* throttled without asking the global bucket */
		    { 50 * MS, -EAGAIN, 3, 1 },
		    { 100 * MS - 1, -EAGAIN, 3, 2 },
		    /* new interval: ask again (0.1 token), refused */
		    { 100 * MS, -EAGAIN, 4, 2 },
		    { 150 * MS, -EAGAIN, 4, 3 },
		    /* a whole token has been refilled by 1 s */
		    { 1 * SEC, 0, 5, 3 },
		    { 1 * SEC, -EAGAIN, 6, 3 },
		    { 1 * SEC + 99 * MS, -EAGAIN, 6, 4 } },
		  10 },
		{ "hold for 30 ms after the refusal", LB_TB_NEG_HOLD, 30 * MS,
		  { { 0, 0, 1, 0 },
		    { 0, 0, 2, 0 },
		    { 10 * MS, -EAGAIN, 3, 0 },
		    { 39 * MS, -EAGAIN, 3, 1 },
		    { 40 * MS, -EAGAIN, 4, 1 },
		    /* the hold ignores the interval boundary at 100 ms */
		    { 69 * MS, -EAGAIN, 4, 2 },
		    { 70 * MS, -EAGAIN, 5, 2 },
		    { 1 * SEC, 0, 6, 2 } },
		  8 },
		{ "no negative cache: every shortage asks", LB_TB_NEG_OFF, 0,
		  { { 0, 0, 1, 0 },
		    { 0, 0, 2, 0 },
		    { 10 * MS, -EAGAIN, 3, 0 },
		    { 50 * MS, -EAGAIN, 4, 0 },
		    { 99 * MS, -EAGAIN, 5, 0 },
		    { 1 * SEC, 0, 6, 0 } },
		  6 },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(rows); i++) {
		struct lb_tb_local_conf c;
		struct lb_tb_global g;
		struct lb_tb_local l;

		lb_tb_local_conf_default(&c);
		c.neg = rows[i].neg;
		c.neg_hold_ns = rows[i].hold ? rows[i].hold : c.neg_hold_ns;
		assert_int_equal(lb_tb_local_conf_check(&c), 0);
		/* 2 tokens, refilled at 1 token per second */
		global_init(&g, 2, 1, 0, LB_TB_REFILL_EACH, 0);
		lb_tb_local_init(&l, 42, 0);
		for (size_t j = 0; j < rows[i].n; j++) {
			const struct step *s = &rows[i].s[j];

			print_message("%s, step %zu\n", rows[i].desc, j);
			assert_int_equal(lb_tb_local_take(&l, &c, &g, 1,
							  s->now),
					 s->rc);
			assert_int_equal(l.cnt.borrows, s->borrows);
			assert_int_equal(l.cnt.neg_hits, s->neg_hits);
		}
		assert_int_equal(l.cnt.admitted + l.cnt.throttled,
				 rows[i].n);
		assert_true(l.cnt.refused <= l.cnt.borrows);
	}
}

/* Claim 1 keeps a short grant; PARTIAL_NONE leaves it in the global. */
static void
test_partial_grant(void **state)
{
	static const struct {
		enum lb_tb_partial partial;
		int rc_third, rc_small;
		uint64_t local_after, global_after, neg_hits;
	} rows[] = {
		/* 2 tokens arrive, 4 are needed: throttled, the 2 kept
		 * serve a later request of 2 despite the negative cache */
		{ LB_TB_PARTIAL_KEEP, -EAGAIN, 0, 0, 0, 0 },
		/* nothing taken: the 2 stay global, the key is negative */
		{ LB_TB_PARTIAL_NONE, -EAGAIN, -EAGAIN, 0, 2, 1 },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(rows); i++) {
		struct lb_tb_local_conf c;
		struct lb_tb_global g;
		struct lb_tb_local l;

		lb_tb_local_conf_default(&c);
		c.partial = rows[i].partial;
		global_init(&g, 10, 1, 0, LB_TB_REFILL_EACH, 0);
		lb_tb_local_init(&l, 1, 0);
		assert_int_equal(lb_tb_local_take(&l, &c, &g, 4, 0), 0);
		assert_int_equal(lb_tb_local_take(&l, &c, &g, 4, 0), 0);
		assert_int_equal(lb_tb_local_take(&l, &c, &g, 4, 0),
				 rows[i].rc_third);
		assert_int_equal(lb_tb_local_take(&l, &c, &g, 2, 0),
				 rows[i].rc_small);
		assert_int_equal(l.tokens, rows[i].local_after);
		assert_int_equal(lb_tb_global_avail(&g, 0),
				 rows[i].global_after);
		assert_int_equal(l.cnt.neg_hits, rows[i].neg_hits);
		assert_int_equal(l.cnt.refused, 1);
	}
}

struct lru_op {
	char op; /* 'g' get (touches), 'l' lookup (does not) */
	uint64_t key;
};

static void
test_lru_order(void **state)
{
	static const struct {
		const char *desc;
		uint32_t cap;
		struct lru_op ops[8];
		size_t nops;
		uint64_t expect[4]; /* most recently used first */
		uint32_t nexpect;
		uint64_t evictions;
	} rows[] = {
		{ "fill", 3, { { 'g', 1 }, { 'g', 2 }, { 'g', 3 } }, 3,
		  { 3, 2, 1 }, 3, 0 },
		{ "evict the oldest", 3,
		  { { 'g', 1 }, { 'g', 2 }, { 'g', 3 }, { 'g', 4 } }, 4,
		  { 4, 3, 2 }, 3, 1 },
		{ "a touch saves 1, 2 goes", 3,
		  { { 'g', 1 }, { 'g', 2 }, { 'g', 3 }, { 'g', 1 },
		    { 'g', 4 } },
		  5, { 4, 1, 3 }, 3, 1 },
		{ "then 3 goes", 3,
		  { { 'g', 1 }, { 'g', 2 }, { 'g', 3 }, { 'g', 1 }, { 'g', 4 },
		    { 'g', 5 } },
		  6, { 5, 4, 1 }, 3, 2 },
		{ "lookup does not touch", 3,
		  { { 'g', 1 }, { 'g', 2 }, { 'g', 3 }, { 'l', 1 },
		    { 'g', 4 } },
		  5, { 4, 3, 2 }, 3, 1 },
		{ "repeated key", 3, { { 'g', 1 }, { 'g', 1 }, { 'g', 1 } }, 3,
		  { 1 }, 1, 0 },
		{ "extreme keys", 3,
		  { { 'g', 0 }, { 'g', UINT64_MAX }, { 'g', 0 } }, 3,
		  { 0, UINT64_MAX }, 2, 0 },
		{ "capacity 1", 1, { { 'g', 1 }, { 'g', 2 }, { 'g', 2 } }, 3,
		  { 2 }, 1, 1 },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(rows); i++) {
		struct lb_tb_local_conf c;
		struct lb_tb_table *t;
		struct lb_tb_counters cnt;
		uint64_t keys[8];
		uint32_t n;

		print_message("%s\n", rows[i].desc);
		lb_tb_local_conf_default(&c);
		t = lb_tb_table_create(rows[i].cap, &c);
		assert_non_null(t);
		for (size_t j = 0; j < rows[i].nops; j++) {
			const struct lru_op *o = &rows[i].ops[j];
			struct lb_tb_local *l;

			if (o->op == 'g') {
				l = lb_tb_table_get(t, o->key, 0);
				assert_non_null(l);
				assert_true(l->key == o->key);
			} else {
				l = lb_tb_table_lookup(t, o->key);
				assert_non_null(l);
			}
		}
		n = lb_tb_table_keys(t, keys, NELEM(keys));
		assert_int_equal(n, rows[i].nexpect);
		assert_int_equal(lb_tb_table_count(t), n);
		for (uint32_t j = 0; j < n; j++)
			assert_true(keys[j] == rows[i].expect[j]);
		assert_int_equal(lb_tb_table_counters(t, &cnt),
				 rows[i].evictions);
		lb_tb_table_free(t);
	}
}

/* The table against a plain array model under random gets and lookups;
 * small capacities and few keys make hash runs, wrap-around and
 * backward-shift deletion frequent. */
static void
test_lru_model(void **state)
{
	static const uint32_t caps[] = { 1, 2, 5, 8, 13 };
	struct lb_xoshiro xs;
	struct lb_rng r;

	(void)state;
	lb_xoshiro_seed(&xs, 7);
	r = lb_rng_xoshiro(&xs);
	for (size_t ci = 0; ci < NELEM(caps); ci++) {
		uint32_t cap = caps[ci], nmodel = 0;
		uint64_t model[16], keys[16];
		struct lb_tb_local_conf c;
		struct lb_tb_table *t;

		lb_tb_local_conf_default(&c);
		t = lb_tb_table_create(cap, &c);
		assert_non_null(t);
		for (int it = 0; it < 5000; it++) {
			/* keys spread over 64-bit space, 3 x cap of them */
			uint64_t key = lb_splitmix64(&(uint64_t){
				lb_rng_below(&r, 3 * cap) });
			uint32_t pos = nmodel;

			for (uint32_t j = 0; j < nmodel; j++)
				if (model[j] == key)
					pos = j;
			if (lb_rng_below(&r, 4) == 0) {
				struct lb_tb_local *l =
					lb_tb_table_lookup(t, key);

				assert_true((l != NULL) == (pos < nmodel));
				continue;
			}
			if (pos == nmodel && nmodel == cap)
				pos = --nmodel; /* drop the LRU one */
			else if (pos < nmodel)
				nmodel--;
			memmove(&model[1], &model[0], pos * sizeof(model[0]));
			model[0] = key;
			nmodel++;
			assert_non_null(lb_tb_table_get(t, key, 0));
			assert_int_equal(lb_tb_table_keys(t, keys, 16),
					 nmodel);
			for (uint32_t j = 0; j < nmodel; j++) {
				assert_true(keys[j] == model[j]);
				assert_non_null(lb_tb_table_lookup(t, keys[j]));
			}
		}
		lb_tb_table_free(t);
	}
}

/* Counters survive eviction in the table's totals; a re-created bucket
 * starts empty (its unspent tokens were dropped, never re-admitted). */
static void
test_table_counters(void **state)
{
	struct lb_tb_local_conf c;
	struct lb_tb_counters cnt;
	struct lb_tb_global g;
	struct lb_tb_table *t;
	struct lb_tb_local *l;

	(void)state;
	lb_tb_local_conf_default(&c);
	c.min_batch = 5;
	t = lb_tb_table_create(2, &c);
	assert_non_null(t);
	global_init(&g, 12, 1, 0, LB_TB_REFILL_EACH, 0);
	assert_int_equal(lb_tb_table_take(t, 1, &g, 1, 0), 0);
	assert_int_equal(lb_tb_table_take(t, 1, &g, 1, 0), 0);
	assert_int_equal(lb_tb_table_take(t, 2, &g, 1, 0), 0);
	/* key 3 evicts key 1, whose 3 unspent tokens are dropped, and
	 * gets the last 2 global tokens (asked for 5) */
	assert_int_equal(lb_tb_table_take(t, 3, &g, 1, 0), 0);
	/* key 1 comes back empty and evicts key 2: refused, negative */
	assert_int_equal(lb_tb_table_take(t, 1, &g, 1, 0), -EAGAIN);
	assert_int_equal(lb_tb_table_take(t, 1, &g, 1, 0), -EAGAIN);
	assert_int_equal(lb_tb_table_counters(t, &cnt), 2);
	assert_int_equal(cnt.admitted, 4);
	assert_int_equal(cnt.throttled, 2);
	assert_int_equal(cnt.borrows, 4);
	assert_int_equal(cnt.refused, 1);
	assert_int_equal(cnt.neg_hits, 1);
	assert_int_equal(cnt.borrowed, 12);
	l = lb_tb_table_lookup(t, 1);
	assert_non_null(l);
	assert_int_equal(l->cnt.admitted, 0);
	assert_null(lb_tb_table_lookup(t, 2));
	lb_tb_table_free(t);
}

/* ---- concurrency ----------------------------------------------------- */

#define MT_THREADS 4
/* Wall time the takers race for: long enough that both of this host's
 * cores run takers at once most of the time, whatever else is running. */
#define MT_RUN_MS 150

struct mt_shared {
	struct lb_tb_global g;
	_Atomic uint64_t clock; /* the simulated time, advanced by takers */
	uint64_t mean_dt;
	uint64_t want;
	int local; /* through per-thread local buckets */
	pthread_barrier_t start; /* so that the threads really overlap */
	atomic_int stop;
};

struct mt_thread {
	struct mt_shared *sh;
	uint64_t seed;
	uint64_t got;	   /* tokens the global bucket dispensed to us */
	uint64_t admitted; /* local mode: takes admitted */
	uint64_t left;	   /* local mode: tokens unspent at the end */
};

static void *
mt_worker(void *arg)
{
	struct mt_thread *th = arg;
	struct mt_shared *sh = th->sh;
	struct lb_tb_local_conf c;
	struct lb_tb_local l;
	struct lb_xoshiro xs;
	struct lb_rng r;

	lb_xoshiro_seed(&xs, th->seed);
	r = lb_rng_xoshiro(&xs);
	lb_tb_local_conf_default(&c);
	/* 200 us of refill (200 tokens) is below the capacity, so a
	 * negative-cached interval cannot make the global bucket overflow. */
	c.interval_ns = 200000;
	pthread_barrier_wait(&sh->start);
	lb_tb_local_init(&l, 1, atomic_load(&sh->clock));
	while (!atomic_load_explicit(&sh->stop, memory_order_relaxed)) {
		uint64_t dt = lb_rng_below(&r, 2 * sh->mean_dt + 1);
		/* Other threads move the clock too, so by the time this
		 * take runs its now may already be stale. */
		uint64_t now = atomic_fetch_add(&sh->clock, dt) + dt;

		if (sh->local)
			th->admitted +=
				lb_tb_local_take(&l, &c, &sh->g, 1, now) == 0;
		else
			th->got += lb_tb_global_take_range(&sh->g, 1, sh->want,
							   now);
	}
	if (sh->local) {
		th->got = l.cnt.borrowed;
		th->left = l.tokens;
		assert_int_equal(l.cnt.admitted, th->admitted);
	}
	return NULL;
}

/*
 * 4 threads race on one global bucket while the shared clock advances.
 * Invariant: dispensed <= capacity + rate x elapsed. Demand (want per take,
 * or one token per take at half a token of refill per take) exceeds the
 * supply, so the bucket stays near empty and the cap rarely cuts the
 * refill: apart from the capacity's worth of tokens that are lost while the
 * bucket starts full (at most the first few takes' refill), the full
 * supply must come out. We allow 1% of the bound, far above that loss and
 * far below what a lost-update bug would cost (a whole take's grant on
 * every collision).
 */
static void
test_mt_bound(void **state)
{
	static const struct {
		const char *desc;
		enum lb_tb_refill refill;
		int local;
		uint64_t cap, rate, mean_dt, want;
	} rows[] = {
		/* 1e6 tokens/s, 3 us per take: 3 tokens per take, want 8 */
		{ "global, refill on each", LB_TB_REFILL_EACH, 0, 1000, 1000000,
		  3000, 8 },
		{ "global, refill on shortage", LB_TB_REFILL_ON_SHORTAGE, 0,
		  1000, 1000000, 3000, 8 },
		/* 0.5 token per take of 1 via local batches */
		{ "local buckets borrowing", LB_TB_REFILL_EACH, 1, 1000,
		  1000000, 500, 1 },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(rows); i++) {
		static struct mt_shared sh;
		struct mt_thread th[MT_THREADS];
		pthread_t tid[MT_THREADS];
		uint64_t t0 = 5 * SEC, total = 0, admitted = 0, left = 0;
		uint64_t elapsed, bound, drain;

		print_message("%s\n", rows[i].desc);
		memset(&sh, 0, sizeof(sh));
		global_init(&sh.g, rows[i].cap, rows[i].rate, 0,
			    rows[i].refill, t0);
		atomic_store(&sh.clock, t0);
		sh.mean_dt = rows[i].mean_dt;
		sh.want = rows[i].want;
		sh.local = rows[i].local;
		pthread_barrier_init(&sh.start, NULL, MT_THREADS);
		for (int k = 0; k < MT_THREADS; k++) {
			th[k] = (struct mt_thread){ .sh = &sh,
						    .seed = 100 + k };
			assert_int_equal(pthread_create(&tid[k], NULL,
							mt_worker, &th[k]),
					 0);
		}
		nanosleep(&(struct timespec){ 0, MT_RUN_MS * 1000000L },
			  NULL);
		atomic_store(&sh.stop, 1);
		for (int k = 0; k < MT_THREADS; k++) {
			pthread_join(tid[k], NULL);
			total += th[k].got;
			admitted += th[k].admitted;
			left += th[k].left;
		}
		pthread_barrier_destroy(&sh.start);
		elapsed = atomic_load(&sh.clock) - t0;
		bound = (rows[i].cap * NT + rows[i].rate * elapsed) / NT;
		drain = lb_tb_global_take(&sh.g, rows[i].cap,
					  atomic_load(&sh.clock));
		print_message("  dispensed %llu + %llu left, bound %llu\n",
			      (unsigned long long)total,
			      (unsigned long long)drain,
			      (unsigned long long)bound);
		assert_true(total + drain <= bound);
		assert_true(total + drain >= bound - bound / 100);
		/* the racing takers themselves got nearly all of it */
		assert_true(total >= bound - rows[i].cap - bound / 100);
		if (rows[i].local) {
			assert_int_equal(admitted + left, total);
			assert_true(admitted <= bound);
		}
	}
}

/* ---- bad input and extremes ----------------------------------------- */

static void
test_bad_global(void **state)
{
	static const struct {
		struct lb_tb_global_conf c;
		int rc;
	} rows[] = {
		{ { 0, 10, 0, LB_TB_REFILL_EACH }, -EINVAL },
		{ { 10, 0, 0, LB_TB_REFILL_EACH }, -EINVAL },
		{ { LB_TB_CAPACITY_MAX + 1, 10, 0, LB_TB_REFILL_EACH },
		  -ERANGE },
		{ { 10, LB_TB_RATE_MAX + 1, 0, LB_TB_REFILL_EACH }, -ERANGE },
		/* a negative rate or capacity arrives as a huge one */
		{ { 10, (uint64_t)-1, 0, LB_TB_REFILL_EACH }, -ERANGE },
		{ { (uint64_t)-5, 10, 0, LB_TB_REFILL_EACH }, -ERANGE },
		{ { 10, 10, 10, LB_TB_REFILL_EACH }, -ERANGE },
		{ { 10, 10, 0, (enum lb_tb_refill)7 }, -EINVAL },
		{ { LB_TB_CAPACITY_MAX, LB_TB_RATE_MAX,
		    LB_TB_CAPACITY_MAX - 1, LB_TB_REFILL_ON_SHORTAGE },
		  0 },
		{ { 1, 1, 0, LB_TB_REFILL_EACH }, 0 },
	};
	struct lb_tb_global g;

	(void)state;
	for (size_t i = 0; i < NELEM(rows); i++) {
		print_message("global conf row %zu\n", i);
		assert_int_equal(lb_tb_global_conf_check(&rows[i].c),
				 rows[i].rc);
		assert_int_equal(lb_tb_global_init(&g, &rows[i].c, 0),
				 rows[i].rc);
	}
	assert_int_equal(lb_tb_global_conf_check(NULL), -EINVAL);
	assert_int_equal(lb_tb_global_init(NULL, &rows[9].c, 0), -EINVAL);
	assert_int_equal(lb_tb_global_init(&g, NULL, 0), -EINVAL);
	global_init(&g, 10, 1, 0, LB_TB_REFILL_EACH, 0);
	assert_int_equal(lb_tb_global_take(NULL, 1, 0), 0);
	assert_int_equal(lb_tb_global_take(&g, 0, 0), 0);
	assert_int_equal(lb_tb_global_take_range(&g, 5, 4, 0), 0);
	assert_int_equal(lb_tb_global_take_range(&g, 11, 20, 0), 0);
	assert_int_equal(lb_tb_global_avail(NULL, 0), 0);
	assert_int_equal(lb_tb_global_avail(&g, 0), 10);
}

static void
test_bad_local(void **state)
{
	static const struct {
		const char *desc;
		uint64_t interval_ns;
		uint32_t x;
		enum lb_tb_batch batch;
		double fraction;
		uint64_t min_batch, max_batch;
		enum lb_tb_neg neg;
		uint64_t hold;
		int mode_bad;
		int rc;
	} rows[] = {
		{ "defaults", 0, 0, LB_TB_BATCH_WAVG, 0, 0, 0,
		  LB_TB_NEG_INTERVAL, 0, 0, 0 },
		{ "interval 0", 1, 0, LB_TB_BATCH_WAVG, 0, 0, 0,
		  LB_TB_NEG_INTERVAL, 0, 0, -EINVAL },
		{ "interval too short", 999, 0, LB_TB_BATCH_WAVG, 0, 0, 0,
		  LB_TB_NEG_INTERVAL, 0, 0, -ERANGE },
		{ "interval too long", LB_TB_INTERVAL_MAX_NS + 1, 0,
		  LB_TB_BATCH_WAVG, 0, 0, 0, LB_TB_NEG_INTERVAL, 0, 0,
		  -ERANGE },
		{ "x = 0", 0, 100, LB_TB_BATCH_WAVG, 0, 0, 0,
		  LB_TB_NEG_INTERVAL, 0, 0, -EINVAL },
		{ "x = 17", 0, LB_TB_INTERVALS_MAX + 1, LB_TB_BATCH_WAVG, 0,
		  0, 0, LB_TB_NEG_INTERVAL, 0, 0, -ERANGE },
		{ "x = 16", 0, LB_TB_INTERVALS_MAX, LB_TB_BATCH_WAVG, 0, 0, 0,
		  LB_TB_NEG_INTERVAL, 0, 0, 0 },
		{ "fraction NaN", 0, 0, LB_TB_BATCH_FRACTION, NAN, 0, 0,
		  LB_TB_NEG_INTERVAL, 0, 0, -EINVAL },
		{ "fraction inf", 0, 0, LB_TB_BATCH_FRACTION, INFINITY, 0, 0,
		  LB_TB_NEG_INTERVAL, 0, 0, -ERANGE },
		{ "fraction 0", 0, 0, LB_TB_BATCH_FRACTION, 0.0, 0, 0,
		  LB_TB_NEG_INTERVAL, 0, 0, -ERANGE },
		{ "fraction negative", 0, 0, LB_TB_BATCH_FRACTION, -0.5, 0, 0,
		  LB_TB_NEG_INTERVAL, 0, 0, -ERANGE },
		{ "fraction above 1", 0, 0, LB_TB_BATCH_FRACTION, 1.5, 0, 0,
		  LB_TB_NEG_INTERVAL, 0, 0, -ERANGE },
		{ "fraction 1", 0, 0, LB_TB_BATCH_FRACTION, 1.0, 0, 0,
		  LB_TB_NEG_INTERVAL, 0, 0, 0 },
		{ "NaN fraction unused by WAVG", 0, 0, LB_TB_BATCH_WAVG, NAN, 0,
		  0, LB_TB_NEG_INTERVAL, 0, 0, 0 },
		{ "min_batch 0", 0, 0, LB_TB_BATCH_WAVG, 0, (uint64_t)-1, 0,
		  LB_TB_NEG_INTERVAL, 0, 0, -EINVAL },
		{ "min_batch huge", 0, 0, LB_TB_BATCH_WAVG, 0,
		  LB_TB_CAPACITY_MAX + 1, 0, LB_TB_NEG_INTERVAL, 0, 0,
		  -ERANGE },
		{ "max_batch below min", 0, 0, LB_TB_BATCH_WAVG, 0, 10, 9,
		  LB_TB_NEG_INTERVAL, 0, 0, -ERANGE },
		{ "max_batch huge", 0, 0, LB_TB_BATCH_WAVG, 0, 0,
		  LB_TB_CAPACITY_MAX + 1, LB_TB_NEG_INTERVAL, 0, 0, -ERANGE },
		{ "hold 0", 0, 0, LB_TB_BATCH_WAVG, 0, 0, 0, LB_TB_NEG_HOLD, 1,
		  0, -EINVAL },
		{ "hold too long", 0, 0, LB_TB_BATCH_WAVG, 0, 0, 0,
		  LB_TB_NEG_HOLD, LB_TB_INTERVAL_MAX_NS + 1, 0, -ERANGE },
		{ "unknown mode", 0, 0, LB_TB_BATCH_WAVG, 0, 0, 0,
		  LB_TB_NEG_INTERVAL, 0, 1, -EINVAL },
	};
	struct lb_tb_local_conf c;
	struct lb_tb_global g;
	struct lb_tb_local l;

	(void)state;
	for (size_t i = 0; i < NELEM(rows); i++) {
		print_message("%s\n", rows[i].desc);
		lb_tb_local_conf_default(&c);
		/* 0 keeps the default; 1 and (uint64_t)-1 mean "zero" */
		if (rows[i].interval_ns)
			c.interval_ns = rows[i].interval_ns == 1 ?
						0 :
						rows[i].interval_ns;
		if (rows[i].x)
			c.nb_intervals = rows[i].x == 100 ? 0 : rows[i].x;
		c.batch = rows[i].batch;
		c.batch_fraction = rows[i].fraction;
		if (rows[i].min_batch)
			c.min_batch = rows[i].min_batch == (uint64_t)-1 ?
					      0 :
					      rows[i].min_batch;
		c.max_batch = rows[i].max_batch;
		c.neg = rows[i].neg;
		if (rows[i].hold)
			c.neg_hold_ns = rows[i].hold == 1 ? 0 : rows[i].hold;
		if (rows[i].mode_bad)
			c.demand = (enum lb_tb_demand)9;
		assert_int_equal(lb_tb_local_conf_check(&c), rows[i].rc);
		errno = 0;
		if (rows[i].rc == 0) {
			struct lb_tb_table *t = lb_tb_table_create(4, &c);

			assert_non_null(t);
			lb_tb_table_free(t);
		} else {
			assert_null(lb_tb_table_create(4, &c));
			assert_int_equal(errno, EINVAL);
		}
	}
	assert_int_equal(lb_tb_local_conf_check(NULL), -EINVAL);
	lb_tb_local_conf_default(&c);
	errno = 0;
	assert_null(lb_tb_table_create(0, &c));
	assert_int_equal(errno, EINVAL);
	assert_null(lb_tb_table_create(LB_TB_TABLE_MAX + 1, &c));
	assert_int_equal(errno, ERANGE);
	assert_null(lb_tb_table_create(4, NULL));
	assert_null(lb_tb_table_get(NULL, 1, 0));
	assert_null(lb_tb_table_lookup(NULL, 1));
	assert_int_equal(lb_tb_table_keys(NULL, NULL, 0), 0);
	assert_int_equal(lb_tb_table_count(NULL), 0);
	assert_int_equal(lb_tb_table_take(NULL, 1, NULL, 1, 0), -EINVAL);
	lb_tb_table_free(NULL);

	global_init(&g, 10, 1, 0, LB_TB_REFILL_EACH, 0);
	assert_int_equal(lb_tb_local_init(NULL, 1, 0), -EINVAL);
	lb_tb_local_init(&l, 1, 0);
	assert_int_equal(lb_tb_local_take(NULL, &c, &g, 1, 0), -EINVAL);
	assert_int_equal(lb_tb_local_take(&l, NULL, &g, 1, 0), -EINVAL);
	assert_int_equal(lb_tb_local_take(&l, &c, NULL, 1, 0), -EINVAL);
	assert_int_equal(lb_tb_local_take(&l, &c, &g, 0, 0), -EINVAL);
	{
		/* an unchecked configuration cannot fault the take */
		struct lb_tb_local_conf z = c;

		z.interval_ns = 0;
		assert_int_equal(lb_tb_local_take(&l, &z, &g, 1, 0), -EINVAL);
		z = c;
		z.nb_intervals = LB_TB_INTERVALS_MAX + 1;
		assert_int_equal(lb_tb_local_take(&l, &z, &g, 1, 0), -EINVAL);
	}
	/* more than the global capacity can never be granted */
	assert_int_equal(lb_tb_local_take(&l, &c, &g, 11, 0), -ERANGE);
	assert_int_equal(lb_tb_local_take(&l, &c, &g, UINT64_MAX, 0),
			 -ERANGE);
	/* errors are not counted as decisions */
	assert_int_equal(l.cnt.admitted + l.cnt.throttled, 0);
	assert_int_equal(lb_tb_local_take(&l, &c, &g, 10, 0), 0);
	assert_int_equal(lb_tb_local_batch(NULL, &c, 10), 0);
}

/* The largest rate and capacity at the end of the clock's range. */
static void
test_extremes(void **state)
{
	const uint64_t t0 = UINT64_MAX - 10;
	struct lb_tb_global g;

	(void)state;
	global_init(&g, LB_TB_CAPACITY_MAX, LB_TB_RATE_MAX, 0,
		    LB_TB_REFILL_EACH, t0);
	assert_int_equal(lb_tb_global_take(&g, UINT64_MAX, t0),
			 LB_TB_CAPACITY_MAX);
	/* 10 ns at 1e12 tokens/s is 10000 tokens */
	assert_int_equal(lb_tb_global_avail(&g, UINT64_MAX), 10000);
	assert_int_equal(lb_tb_global_take(&g, UINT64_MAX, UINT64_MAX),
			 10000);
	/* a stale clock neither refills nor moves the clock back */
	assert_int_equal(lb_tb_global_take(&g, 1, 0), 0);
	assert_true(atomic_load(&g.last_ns) == UINT64_MAX);
	/* a negative cache hold near the end of time saturates */
	{
		struct lb_tb_local_conf c;
		struct lb_tb_local l;

		lb_tb_local_conf_default(&c);
		c.neg = LB_TB_NEG_HOLD;
		lb_tb_local_init(&l, 1, t0);
		assert_int_equal(lb_tb_local_take(&l, &c, &g, 1, UINT64_MAX),
				 -EAGAIN);
		assert_true(l.neg_until == UINT64_MAX);
	}
}

/* min_fraction: claim 10's share of the capacity under claim 12's
 * average, in the average mode only; out-of-range shares refused. */
static void
test_batch_floor(void **state)
{
	struct lb_tb_local_conf c;
	struct lb_tb_global g;
	struct lb_tb_local l;

	(void)state;
	lb_tb_local_conf_default(&c);
	assert_true(c.min_fraction == 0.0);
	c.min_fraction = 0.25;
	assert_int_equal(lb_tb_local_conf_check(&c), 0);
	lb_tb_local_init(&l, 3, 0);
	/* No history: the floor, ceil(0.25 x 101) = 26, not min_batch */
	assert_int_equal(lb_tb_local_batch(&l, &c, 101), 26);
	global_init(&g, 101, 1, 0, LB_TB_REFILL_EACH, 0);
	assert_int_equal(lb_tb_local_take(&l, &c, &g, 1, 0), 0);
	assert_int_equal(l.tokens, 25);
	assert_int_equal(lb_tb_global_avail(&g, 0), 75);
	/* An average above the floor wins: [40] -> 40 */
	l.hist[0] = 40;
	l.nb_hist = 1;
	assert_int_equal(lb_tb_local_batch(&l, &c, 101), 40);
	/* max_batch still caps it, and so does the capacity */
	c.max_batch = 30;
	assert_int_equal(lb_tb_local_batch(&l, &c, 101), 30);
	c.max_batch = 0;
	c.min_fraction = 1.0;
	assert_int_equal(lb_tb_local_batch(&l, &c, 101), 101);
	/* The fraction mode ignores the floor */
	c.batch = LB_TB_BATCH_FRACTION;
	c.batch_fraction = 0.01;
	assert_int_equal(lb_tb_local_batch(&l, &c, 101), 2);
	c.batch = LB_TB_BATCH_WAVG;
	c.min_fraction = NAN;
	assert_int_equal(lb_tb_local_conf_check(&c), -EINVAL);
	c.min_fraction = 1.5;
	assert_int_equal(lb_tb_local_conf_check(&c), -ERANGE);
	c.min_fraction = -0.1;
	assert_int_equal(lb_tb_local_conf_check(&c), -ERANGE);
	assert_null(lb_tb_table_create(4, &c));
}

/* lb_tb_table_get_ev() names the bucket it replaced and its tokens. */
static void
test_table_get_ev(void **state)
{
	struct lb_tb_local_conf c;
	struct lb_tb_table *t;
	struct lb_tb_evicted ev;
	struct lb_tb_local *l;

	(void)state;
	lb_tb_local_conf_default(&c);
	t = lb_tb_table_create(2, &c);
	assert_non_null(t);
	l = lb_tb_table_get_ev(t, 10, 0, &ev);
	assert_non_null(l);
	assert_int_equal(ev.replaced, 0);
	l->tokens = 7;
	assert_non_null(lb_tb_table_get_ev(t, 11, 0, &ev));
	assert_int_equal(ev.replaced, 0);
	/* present: nothing replaced, 10 becomes the most recent */
	assert_true(lb_tb_table_get_ev(t, 10, 0, &ev) == l);
	assert_int_equal(ev.replaced, 0);
	/* 12 replaces 11 (no tokens), then 13 replaces 10 (7 tokens) */
	assert_non_null(lb_tb_table_get_ev(t, 12, 0, &ev));
	assert_int_equal(ev.replaced, 1);
	assert_int_equal(ev.key, 11);
	assert_int_equal(ev.tokens, 0);
	l = lb_tb_table_get_ev(t, 13, 0, &ev);
	assert_int_equal(ev.replaced, 1);
	assert_int_equal(ev.key, 10);
	assert_int_equal(ev.tokens, 7);
	assert_int_equal(l->tokens, 0);
	assert_null(lb_tb_table_lookup(t, 10));
	assert_null(lb_tb_table_get_ev(NULL, 1, 0, &ev));
	assert_int_equal(ev.replaced, 0);
	lb_tb_table_free(t);
}

/* lb_tb_table_lru_slack(): a bucket used again within the slack stays
 * where it is; beyond it, it moves to the front; with replacements, a
 * bucket used within the last slack moves is never the one replaced. */
static void
test_lru_slack(void **state)
{
	struct lb_tb_local_conf c;
	struct lb_tb_table *t;
	uint64_t keys[8];
	struct lb_xoshiro xs;
	struct lb_rng rng;

	(void)state;
	lb_tb_local_conf_default(&c);
	t = lb_tb_table_create(8, &c);
	assert_non_null(t);
	assert_int_equal(lb_tb_table_lru_slack(NULL, 1), -EINVAL);
	assert_int_equal(lb_tb_table_lru_slack(t, 8), -ERANGE);
	assert_int_equal(lb_tb_table_lru_slack(t, 3), 0);
	for (uint64_t k = 1; k <= 4; k++)
		lb_tb_table_get(t, k, 0);
	/* 3 was added 1 move ago: stays */
	lb_tb_table_get(t, 3, 0);
	assert_int_equal(lb_tb_table_keys(t, keys, 8), 4);
	assert_int_equal(keys[0], 4);
	assert_int_equal(keys[1], 3);
	/* 2 was added 2 moves ago: stays; 1 (3 moves ago) moves */
	lb_tb_table_get(t, 2, 0);
	lb_tb_table_get(t, 1, 0);
	assert_int_equal(lb_tb_table_keys(t, keys, 8), 4);
	assert_int_equal(keys[0], 1);
	assert_int_equal(keys[1], 4);
	assert_int_equal(keys[2], 3);
	assert_int_equal(keys[3], 2);
	lb_tb_table_free(t);

	/* Random keys over a full table: every replaced key was last used
	 * at least slack moves earlier. */
	t = lb_tb_table_create(8, &c);
	assert_non_null(t);
	assert_int_equal(lb_tb_table_lru_slack(t, 4), 0);
	lb_xoshiro_seed(&xs, 42);
	rng = lb_rng_xoshiro(&xs);
	{
		uint64_t last_use[32] = {0}, step = 0;

		for (int i = 0; i < 5000; i++) {
			uint64_t k = 1 + lb_rng_below(&rng, 24);
			uint32_t n = lb_tb_table_count(t);
			uint64_t before[8];

			assert_int_equal(lb_tb_table_keys(t, before, 8), n);
			lb_tb_table_get(t, k, 0);
			step++;
			for (uint32_t j = 0; j < n; j++)
				if (lb_tb_table_lookup(t, before[j]) == NULL)
					/* the 3 checks before this one used
					 * other keys */
					assert_true(step - last_use[before[j]] >
						    3);
			last_use[k] = step;
		}
	}
	lb_tb_table_free(t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refill_vectors),
		cmocka_unit_test(test_global_sequence),
		cmocka_unit_test(test_wavg_vectors),
		cmocka_unit_test(test_batch_adapts),
		cmocka_unit_test(test_idle_intervals),
		cmocka_unit_test(test_negative_cache),
		cmocka_unit_test(test_partial_grant),
		cmocka_unit_test(test_lru_order),
		cmocka_unit_test(test_lru_model),
		cmocka_unit_test(test_table_counters),
		cmocka_unit_test(test_mt_bound),
		cmocka_unit_test(test_bad_global),
		cmocka_unit_test(test_bad_local),
		cmocka_unit_test(test_extremes),
		cmocka_unit_test(test_batch_floor),
		cmocka_unit_test(test_table_get_ev),
		cmocka_unit_test(test_lru_slack),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
