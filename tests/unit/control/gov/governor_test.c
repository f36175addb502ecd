/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lb/governor.h"

#define NS_PER_MS 1000000ULL
#define NS_PER_S 1000000000ULL
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Puts @rec QoS records, @miss of them late, into the interval that starts
 * at @t0 (interval length NS_PER_S). Met records have slack @slack_ms (>= 0),
 * late ones are 1 ms late, so the window's minimum slack is known.
 */
static void
put_interval(struct lb_gov *g, uint64_t t0, unsigned int rec,
	     unsigned int miss, int64_t slack_ms, unsigned int rank)
{
	const uint64_t exp_ns = 200 * NS_PER_MS;

	for (unsigned int i = 0; i < rec; i++) {
		uint64_t now = t0 + 1000 + i;
		uint64_t act = i < miss ? exp_ns + NS_PER_MS :
				exp_ns - (uint64_t)slack_ms * NS_PER_MS;

		assert_int_equal(lb_gov_record(g, now, exp_ns, act, rank), 0);
	}
}

static void
test_defaults(void **state)
{
	struct lb_gov_params p;
	struct lb_gov_state st;
	struct lb_gov *g;

	(void)state;
	lb_gov_params_default(&p);
	assert_int_equal(p.mode, LB_GOV_MODE_DAMPED);
	assert_int_equal(p.interval_ns, NS_PER_S);
	assert_int_equal(p.window_slots, 1);
	assert_true(p.overload_pct == 5.0);
	assert_true(p.t_step == 10.0);
	assert_true(p.r_step == 1.0);
	assert_int_equal(p.calm_k, 3);
	assert_true(p.m_init == 0.0);
	assert_true(p.m_max == 100.0);
	assert_int_equal(p.min_samples, 10);
	assert_int_equal(p.ideal_slack_ns, 0);
	assert_int_equal(p.ideal_band_ns, 30 * (int64_t)NS_PER_MS);
	assert_true(p.ideal_up == 2.0);
	assert_true(p.ideal_down == 1.0);
	assert_int_equal(lb_gov_params_check(&p), 0);

	/* NULL parameters mean the defaults; M starts at m_init */
	g = lb_gov_create(NULL, 5 * NS_PER_S);
	assert_non_null(g);
	assert_int_equal(lb_gov_state(g, &st), 0);
	assert_true(st.m == 0.0);
	assert_false(st.overloaded);
	assert_int_equal(st.calm_windows, 0);
	assert_int_equal(st.interval_start_ns, 5 * NS_PER_S);
	assert_int_equal(st.min_slack_ns, INT64_MAX);
	assert_int_equal(st.rate, LB_GOV_RATE_UNKNOWN);
	lb_gov_free(g);
	lb_gov_free(NULL);
}

/*
 * min(1, M x P / 100). The patent's examples: raising M from 0 to T
 * throttles (T x P) % of requests, a second raise (2T x P) %.
 */
static void
test_probability_formula(void **state)
{
	static const struct {
		double m;
		unsigned int rank;
		double p;
	} rows[] = {
		{ 0.0, 1, 0.0 },
		{ 10.0, 1, 0.10 },	/* T x P with T = 10, P = 1 */
		{ 10.0, 2, 0.20 },
		{ 10.0, 3, 0.30 },
		{ 20.0, 3, 0.60 },	/* 2T x P */
		{ 30.0, 3, 0.90 },
		{ 34.0, 3, 1.0 },	/* 1.02 clamps to 1 */
		{ 50.0, 2, 1.0 },	/* exactly 1 */
		{ 100.0, 1, 1.0 },
		{ 2.5, 4, 0.10 },
		{ 1.0, LB_GOV_RANK_MAX, 1.0 },
		{ 99.0, 0, 0.0 },	/* rank 0: exempt */
		{ -5.0, 2, 0.0 },	/* corrupt M throttles nothing */
		{ NAN, 1, 0.0 },
		{ INFINITY, 1, 1.0 },
		{ INFINITY, 0, 0.0 },
		{ 10.0, UINT32_MAX, 1.0 },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(rows); i++) {
		double p = lb_gov_throttle_prob(rows[i].m, rows[i].rank);

		assert_true(fabs(p - rows[i].p) < 1e-12);
	}
	/* higher rank (lower priority) is never throttled less */
	for (double m = 0.0; m <= 100.0; m += 0.5)
		for (unsigned int r = 1; r < 20; r++)
			assert_true(lb_gov_throttle_prob(m, r) <=
				    lb_gov_throttle_prob(m, r + 1));
}

static uint64_t draws;

static uint64_t
counting_next(void *ctx)
{
	(void)ctx;
	draws++;
	return 0;
}

static void
test_decide(void **state)
{
	static const struct {
		double m;
		unsigned int rank;
		enum lb_gov_verdict v;
	} fixed[] = {
		{ 0.0, 3, LB_GOV_ADMIT }, { 40.0, 0, LB_GOV_ADMIT },
		{ NAN, 2, LB_GOV_ADMIT }, { 50.0, 2, LB_GOV_THROTTLE },
		{ 100.0, 1, LB_GOV_THROTTLE }, { 1.0, 9, LB_GOV_THROTTLE },
	};
	struct lb_rng cnt = { .next = counting_next, .ctx = NULL };
	struct lb_gov_lcore_stats st;
	struct lb_xoshiro x;
	struct lb_rng rng;
	const unsigned int n = 20000;

	(void)state;
	memset(&st, 0, sizeof(st));
	/* p = 0 and p = 1 are decided without a random number */
	for (size_t i = 0; i < 5; i++) {
		draws = 0;
		assert_int_equal(lb_gov_decide(fixed[i].m, fixed[i].rank, &cnt,
					       &st), fixed[i].v);
		assert_int_equal(draws, 0);
	}
	/* 0 < p < 1 draws once; a draw of 0 is below any p > 0 */
	draws = 0;
	assert_int_equal(lb_gov_decide(fixed[5].m, fixed[5].rank, &cnt, &st),
			 fixed[5].v);
	assert_int_equal(draws, 1);
	assert_int_equal(st.admitted[0], 1);
	assert_int_equal(st.admitted[3], 1);
	assert_int_equal(st.admitted[2], 1);
	assert_int_equal(st.throttled[2], 1);
	assert_int_equal(st.throttled[1], 1);
	assert_int_equal(st.throttled[7], 1);	/* rank 9 -> last class */

	/*
	 * Frequencies follow M x P / 100. Fixed seed; the tolerance 0.02 is
	 * more than 5.6 standard deviations of a proportion over 20000 draws
	 * (sd <= sqrt(0.25 / 20000) = 0.0035).
	 */
	lb_xoshiro_seed(&x, 7);
	rng = lb_rng_xoshiro(&x);
	for (unsigned int rank = 1; rank <= 4; rank++) {
		unsigned int thr = 0;

		for (unsigned int i = 0; i < n; i++)
			thr += lb_gov_decide(15.0, rank, &rng, NULL) ==
			       LB_GOV_THROTTLE;
		assert_true(fabs((double)thr / n - 0.15 * rank) < 0.02);
	}
}

/* One interval of the dynamics table: misses out of 100 records. */
struct dyn_row {
	unsigned int miss;
	double m;
	bool over;
	unsigned int calm;
};

static void
run_dynamics(const struct lb_gov_params *p, const struct dyn_row *rows,
	     size_t n)
{
	struct lb_gov *g = lb_gov_create(p, 0);
	struct lb_gov_state st;

	assert_non_null(g);
	for (size_t i = 0; i < n; i++) {
		put_interval(g, i * NS_PER_S, 100, rows[i].miss, 0, 1);
		assert_int_equal(lb_gov_tick(g, (i + 1) * NS_PER_S), 1);
		assert_int_equal(lb_gov_state(g, &st), 0);
		assert_true(fabs(st.m - rows[i].m) < 1e-9);
		assert_true(lb_gov_multiplier(g) == st.m);
		assert_int_equal(st.overloaded, rows[i].over);
		assert_int_equal(st.calm_windows, rows[i].calm);
		assert_true(fabs(st.miss_pct - rows[i].miss) < 1e-9);
	}
	lb_gov_free(g);
}

/*
 * +T on every overloaded interval; -R only from the K-th consecutive calm
 * interval on; M stays within [m_init, m_max].
 */
static void
test_multiplier_dynamics(void **state)
{
	/* defaults: T = 10, R = 1, K = 3, threshold 5 % */
	static const struct dyn_row seed_default[] = {
		{ 0, 0, false, 1 },	/* calm at the floor: stays 0 */
		{ 10, 10, true, 0 },	/* overloaded: throttle T % */
		{ 10, 20, true, 0 },	/* still overloaded: 2T */
		{ 5, 20, false, 1 },	/* 5 % is not higher than 5 % */
		{ 0, 20, false, 2 },
		{ 0, 19, false, 3 },	/* K-th calm interval: first -R */
		{ 0, 18, false, 4 },
		{ 6, 28, true, 0 },	/* back to overload: +T, calm reset */
		{ 0, 28, false, 1 },
		{ 0, 28, false, 2 },
		{ 0, 27, false, 3 },
	};
	/* bounds: m_init = 5 is start and floor, m_max = 25 the ceiling */
	static const struct dyn_row bounded[] = {
		{ 50, 15, true, 0 }, { 50, 25, true, 0 }, { 50, 25, true, 0 },
		{ 0, 23, false, 1 }, { 0, 21, false, 2 }, { 0, 19, false, 3 },
		{ 0, 17, false, 4 }, { 0, 15, false, 5 }, { 0, 13, false, 6 },
		{ 0, 11, false, 7 }, { 0, 9, false, 8 },  { 0, 7, false, 9 },
		{ 0, 5, false, 10 }, { 0, 5, false, 11 },
	};
	/* the naive on/off throttle the patent warns about: K = 0, R = T */
	static const struct dyn_row naive[] = {
		{ 10, 10, true, 0 }, { 0, 0, false, 1 },
		{ 10, 10, true, 0 }, { 0, 0, false, 1 },
	};
	struct lb_gov_params p;

	(void)state;
	lb_gov_params_default(&p);
	run_dynamics(&p, seed_default, NELEM(seed_default));

	p.m_init = 5.0;
	p.m_max = 25.0;
	p.r_step = 2.0;
	p.calm_k = 1;
	run_dynamics(&p, bounded, NELEM(bounded));

	lb_gov_params_default(&p);
	p.calm_k = 0;
	p.r_step = p.t_step;
	run_dynamics(&p, naive, NELEM(naive));
}

static void
test_counters(void **state)
{
	static const unsigned int miss[] = { 0, 10, 10, 0, 0, 0, 9, 0 };
	struct lb_gov_counters c;
	struct lb_gov *g = lb_gov_create(NULL, 0);
	unsigned int i;

	(void)state;
	assert_non_null(g);
	for (i = 0; i < NELEM(miss); i++) {
		put_interval(g, i * NS_PER_S, 100, miss[i], 0, i % 3);
		assert_int_equal(lb_gov_tick(g, (i + 1) * NS_PER_S), 1);
	}
	/* an interval with too few records is not judged */
	put_interval(g, i * NS_PER_S, 9, 9, 0, 12);
	lb_gov_tick(g, (i + 1) * NS_PER_S);
	assert_int_equal(lb_gov_counters(g, &c), 0);
	assert_int_equal(c.records, 809);
	assert_int_equal(c.misses, 38);
	assert_int_equal(c.records_by_class[0], 300);
	assert_int_equal(c.records_by_class[1], 300);
	assert_int_equal(c.records_by_class[2], 200);
	assert_int_equal(c.records_by_class[7], 9);
	assert_int_equal(c.misses_by_class[1], 10);	/* interval 1 */
	assert_int_equal(c.misses_by_class[2], 10);	/* interval 2 */
	assert_int_equal(c.misses_by_class[0], 9);	/* interval 6 */
	assert_int_equal(c.misses_by_class[7], 9);
	assert_int_equal(c.intervals, 9);
	assert_int_equal(c.unjudged, 1);
	assert_int_equal(c.overload_intervals, 3);
	assert_int_equal(c.overload_entries, 2);
	assert_int_equal(c.overload_exits, 2);
	assert_int_equal(c.m_raises, 3);
	assert_int_equal(c.m_releases, 1);	/* only the 3rd calm of 3 */
	assert_int_equal(c.ideal_raises + c.ideal_releases + c.ideal_holds, 0);
	assert_int_equal(c.rejected, 0);
	lb_gov_free(g);
}

/* The moving window: three intervals, each row adds one interval. */
static void
test_window_arithmetic(void **state)
{
	static const struct {
		unsigned int rec, miss;	/* put into the interval */
		uint64_t w_rec, w_miss;	/* window after closing it */
		double pct, rate;
		bool over;
	} rows[] = {
		{ 20, 2, 20, 2, 10.0, 20.0, false },
		{ 10, 0, 30, 2, 100.0 * 2 / 30, 15.0, false },
		{ 30, 3, 60, 5, 100.0 * 5 / 60, 20.0, false },
		{ 40, 40, 80, 43, 100.0 * 43 / 80, 80.0 / 3, true },
		{ 0, 0, 70, 43, 100.0 * 43 / 70, 70.0 / 3, true },
		{ 5, 0, 45, 40, 100.0 * 40 / 45, 15.0, true },
		{ 0, 0, 5, 0, 0.0, 5.0 / 3, false },	/* 5 < min_samples */
		{ 0, 0, 5, 0, 0.0, 5.0 / 3, false },
		{ 0, 0, 0, 0, 0.0, 0.0, false },
	};
	struct lb_gov_params p;
	struct lb_gov_state st;
	struct lb_gov_counters c;
	struct lb_gov *g;

	(void)state;
	lb_gov_params_default(&p);
	p.window_slots = 3;
	p.overload_pct = 50.0;
	g = lb_gov_create(&p, 0);
	assert_non_null(g);
	for (size_t i = 0; i < NELEM(rows); i++) {
		put_interval(g, i * NS_PER_S, rows[i].rec, rows[i].miss, 4, 2);
		assert_int_equal(lb_gov_tick(g, (i + 1) * NS_PER_S), 1);
		lb_gov_state(g, &st);
		assert_int_equal(st.window_records, rows[i].w_rec);
		assert_int_equal(st.window_misses, rows[i].w_miss);
		assert_true(fabs(st.miss_pct - rows[i].pct) < 1e-9);
		assert_true(fabs(st.window_rate_rps - rows[i].rate) < 1e-9);
		assert_int_equal(st.overloaded, rows[i].over);
	}
	lb_gov_counters(g, &c);
	assert_int_equal(c.unjudged, 3);
	lb_gov_free(g);
}

/* Interval boundaries, late records, minimum slack, tick's return value. */
static void
test_interval_edges(void **state)
{
	const uint64_t e = 100 * NS_PER_MS;
	struct lb_gov_params p;
	struct lb_gov_state st;
	struct lb_gov *g;

	(void)state;
	lb_gov_params_default(&p);
	p.min_samples = 1;
	g = lb_gov_create(&p, 10 * NS_PER_S);
	assert_non_null(g);
	/* stamped before the first interval: counts in the open interval */
	assert_int_equal(lb_gov_record(g, 3 * NS_PER_S, e, e - 5 * NS_PER_MS,
				       1), 0);
	assert_int_equal(lb_gov_tick(g, 5 * NS_PER_S), 0);
	assert_int_equal(lb_gov_tick(g, 11 * NS_PER_S - 1), 0);
	assert_int_equal(lb_gov_record(g, 11 * NS_PER_S - 1, e,
				       e + 3 * NS_PER_MS, 1), 0);
	assert_int_equal(lb_gov_record(g, 11 * NS_PER_S - 1, e, e, 1), 0);
	/* exactly at the end: closes [10 s, 11 s), lands in the next one */
	assert_int_equal(lb_gov_record(g, 11 * NS_PER_S, e, 0, 1), 0);
	lb_gov_state(g, &st);
	assert_int_equal(st.window_records, 3);
	assert_int_equal(st.window_misses, 1);
	assert_int_equal(st.min_slack_ns, -3 * (int64_t)NS_PER_MS);
	assert_true(st.overloaded);	/* 33 % > 5 % */
	assert_int_equal(st.interval_start_ns, 11 * NS_PER_S);
	assert_int_equal(lb_gov_tick(g, 13 * NS_PER_S + 5), 2);
	lb_gov_state(g, &st);
	assert_int_equal(st.interval_start_ns, 13 * NS_PER_S);
	assert_int_equal(st.window_records, 0);	/* [12 s, 13 s) */
	assert_int_equal(st.min_slack_ns, INT64_MAX);
	/* a huge jump is capped in the return value and costs nothing */
	assert_int_equal(lb_gov_tick(g, UINT64_MAX), INT32_MAX);
	assert_true(lb_gov_multiplier(g) == 0.0);
	/* time going backwards changes nothing */
	assert_int_equal(lb_gov_tick(g, 0), 0);
	lb_gov_free(g);
}

/*
 * A long idle gap closed by one tick (closed form) ends in the same state
 * as closing each interval in turn.
 */
static void
test_idle_fast_forward(void **state)
{
	static const struct {
		enum lb_gov_mode mode;
		unsigned int slots, k;
		double r;
		uint64_t gap;
	} rows[] = {
		{ LB_GOV_MODE_DAMPED, 1, 3, 1.0, 50 },
		{ LB_GOV_MODE_DAMPED, 3, 5, 0.5, 20 },
		{ LB_GOV_MODE_DAMPED, 4, 0, 0.3, 400 },
		{ LB_GOV_MODE_DAMPED, 2, 30, 1.0, 10 },	/* K not reached */
		{ LB_GOV_MODE_IDEAL_RATE, 3, 3, 0.7, 30 },
		{ LB_GOV_MODE_IDEAL_RATE, 1, 2, 2.0, 3 },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(rows); i++) {
		struct lb_gov_params p;
		struct lb_gov *a, *b;
		struct lb_gov_state sa, sb;
		struct lb_gov_counters ca, cb;
		uint64_t t;

		lb_gov_params_default(&p);
		p.mode = rows[i].mode;
		p.window_slots = rows[i].slots;
		p.calm_k = rows[i].k;
		p.r_step = rows[i].r;
		p.ideal_down = rows[i].r;
		a = lb_gov_create(&p, 0);
		b = lb_gov_create(&p, 0);
		assert_non_null(a);
		assert_non_null(b);
		for (t = 0; t < 4; t++) {
			put_interval(a, t * NS_PER_S, 50, 25, 0, 1);
			put_interval(b, t * NS_PER_S, 50, 25, 0, 1);
		}
		for (t = 1; t <= 4 + rows[i].gap; t++)
			lb_gov_tick(a, t * NS_PER_S);
		assert_int_equal(lb_gov_tick(b, (4 + rows[i].gap) * NS_PER_S),
				 rows[i].gap + 1);
		lb_gov_state(a, &sa);
		lb_gov_state(b, &sb);
		lb_gov_counters(a, &ca);
		lb_gov_counters(b, &cb);
		assert_true(fabs(sa.m - sb.m) < 1e-9);
		assert_int_equal(sa.overloaded, sb.overloaded);
		assert_int_equal(sa.calm_windows, sb.calm_windows);
		assert_int_equal(sa.window_records, sb.window_records);
		assert_int_equal(sa.rate, sb.rate);
		assert_int_equal(sa.interval_start_ns, sb.interval_start_ns);
		assert_int_equal(ca.intervals, cb.intervals);
		assert_int_equal(ca.unjudged, cb.unjudged);
		assert_int_equal(ca.overload_exits, cb.overload_exits);
		assert_int_equal(ca.m_releases, cb.m_releases);
		assert_int_equal(ca.ideal_releases, cb.ideal_releases);
		lb_gov_free(a);
		lb_gov_free(b);
	}
}

/*
 * Ideal request rate mode: minimum slack below the threshold (0) -> +up;
 * inside [0, 30 ms] -> hold; above -> -down once K calm intervals passed;
 * overload still takes +T.
 */
static void
test_ideal_mode(void **state)
{
	static const struct {
		unsigned int miss;	/* out of 20 */
		int64_t slack_ms;	/* of the met records */
		enum lb_gov_rate rate;
		double m;
	} rows[] = {
		{ 0, 50, LB_GOV_RATE_BELOW, 0 },	/* floor */
		{ 10, 50, LB_GOV_RATE_UNKNOWN, 10 },	/* overloaded: +T */
		{ 0, 50, LB_GOV_RATE_BELOW, 10 },	/* calm 1 < K */
		{ 0, 50, LB_GOV_RATE_BELOW, 10 },	/* calm 2 */
		{ 0, 50, LB_GOV_RATE_BELOW, 9 },	/* calm 3: -down */
		{ 0, 20, LB_GOV_RATE_IDEAL, 9 },	/* hold */
		{ 0, 30, LB_GOV_RATE_IDEAL, 9 },	/* upper edge */
		{ 0, 0, LB_GOV_RATE_IDEAL, 9 },		/* lower edge */
		{ 1, 40, LB_GOV_RATE_ABOVE, 11 },	/* 5 %: +up */
		{ 0, 31, LB_GOV_RATE_BELOW, 10 },
		{ 0, 10, LB_GOV_RATE_IDEAL, 10 },
	};
	struct lb_gov_params p;
	struct lb_gov_state st;
	struct lb_gov_counters c;
	struct lb_gov *g;

	(void)state;
	lb_gov_params_default(&p);
	p.mode = LB_GOV_MODE_IDEAL_RATE;
	g = lb_gov_create(&p, 0);
	assert_non_null(g);
	for (size_t i = 0; i < NELEM(rows); i++) {
		put_interval(g, i * NS_PER_S, 20, rows[i].miss,
			     rows[i].slack_ms, 1);
		lb_gov_tick(g, (i + 1) * NS_PER_S);
		lb_gov_state(g, &st);
		assert_int_equal(st.mode, LB_GOV_MODE_IDEAL_RATE);
		assert_int_equal(st.rate, rows[i].rate);
		assert_true(fabs(st.m - rows[i].m) < 1e-9);
	}
	/* every ideal interval completed 20 requests in 1 s */
	assert_true(fabs(st.ideal_rate_rps - 20.0) < 1e-9);
	lb_gov_counters(g, &c);
	assert_int_equal(c.ideal_holds, 4);
	assert_int_equal(c.ideal_raises, 1);
	assert_int_equal(c.ideal_releases, 2);
	assert_int_equal(c.m_raises, 1);
	lb_gov_free(g);
}

enum field_kind { F_U32, F_U64, F_I64, F_DBL, F_MODE };

static void
set_field(struct lb_gov_params *p, size_t off, enum field_kind k, double v)
{
	char *base = (char *)p + off;

	switch (k) {
	case F_U32:
		*(unsigned int *)(void *)base = (unsigned int)v;
		break;
	case F_U64:
		*(uint64_t *)(void *)base = (uint64_t)v;
		break;
	case F_I64:
		*(int64_t *)(void *)base = (int64_t)v;
		break;
	case F_DBL:
		*(double *)(void *)base = v;
		break;
	case F_MODE:
		*(enum lb_gov_mode *)(void *)base = (enum lb_gov_mode)v;
		break;
	}
}

#define FLD(f) offsetof(struct lb_gov_params, f)

static void
test_bad_params(void **state)
{
	static const struct {
		size_t off;
		enum field_kind kind;
		double v;
		int rc;
	} rows[] = {
		{ FLD(mode), F_MODE, 7, -EINVAL },
		{ FLD(interval_ns), F_U64, 0, -EINVAL },
		{ FLD(interval_ns), F_U64, 999999, -ERANGE },
		{ FLD(interval_ns), F_U64, 3601e9, -ERANGE },
		{ FLD(window_slots), F_U32, 0, -EINVAL },
		{ FLD(window_slots), F_U32, LB_GOV_MAX_SLOTS + 1, -ERANGE },
		{ FLD(overload_pct), F_DBL, NAN, -EINVAL },
		{ FLD(overload_pct), F_DBL, INFINITY, -EINVAL },
		{ FLD(overload_pct), F_DBL, -0.1, -ERANGE },
		{ FLD(overload_pct), F_DBL, 100.0, -ERANGE },
		{ FLD(t_step), F_DBL, 0.0, -EINVAL },
		{ FLD(t_step), F_DBL, NAN, -EINVAL },
		{ FLD(t_step), F_DBL, -10.0, -ERANGE },
		{ FLD(t_step), F_DBL, 101.0, -ERANGE },
		{ FLD(r_step), F_DBL, 0.0, -EINVAL },
		{ FLD(r_step), F_DBL, -INFINITY, -EINVAL },
		{ FLD(r_step), F_DBL, 10.5, -ERANGE },	/* R > T */
		{ FLD(calm_k), F_U32, 1000001, -ERANGE },
		{ FLD(m_init), F_DBL, -1.0, -ERANGE },
		{ FLD(m_init), F_DBL, 100.0, -ERANGE },	/* not < m_max */
		{ FLD(m_init), F_DBL, NAN, -EINVAL },
		{ FLD(m_max), F_DBL, 100.5, -ERANGE },
		{ FLD(m_max), F_DBL, 0.0, -ERANGE },
		{ FLD(m_max), F_DBL, INFINITY, -EINVAL },
		{ FLD(min_samples), F_U32, 0, -EINVAL },
		{ FLD(min_samples), F_U32, 2e9, -ERANGE },
		{ FLD(ideal_slack_ns), F_I64, -3601e9, -ERANGE },
		{ FLD(ideal_slack_ns), F_I64, 3601e9, -ERANGE },
		{ FLD(ideal_band_ns), F_I64, -1, -ERANGE },
		{ FLD(ideal_band_ns), F_I64, 3601e9, -ERANGE },
		{ FLD(ideal_up), F_DBL, 0.0, -EINVAL },
		{ FLD(ideal_up), F_DBL, 11.0, -ERANGE },
		{ FLD(ideal_down), F_DBL, NAN, -EINVAL },
		{ FLD(ideal_down), F_DBL, -1.0, -ERANGE },
	};
	/* accepted limits */
	static const struct {
		size_t off;
		enum field_kind kind;
		double v;
	} ok[] = {
		{ FLD(interval_ns), F_U64, 1e6 },
		{ FLD(window_slots), F_U32, LB_GOV_MAX_SLOTS },
		{ FLD(overload_pct), F_DBL, 0.0 },
		{ FLD(r_step), F_DBL, 10.0 },
		{ FLD(calm_k), F_U32, 0 },
		{ FLD(m_init), F_DBL, 99.5 },
		{ FLD(ideal_slack_ns), F_I64, -5e6 },
		{ FLD(ideal_band_ns), F_I64, 0 },
		{ FLD(mode), F_MODE, LB_GOV_MODE_IDEAL_RATE },
	};
	struct lb_gov_params p, keep;
	struct lb_gov *g = lb_gov_create(NULL, 0);

	(void)state;
	assert_non_null(g);
	assert_int_equal(lb_gov_params_check(NULL), -EINVAL);
	assert_int_equal(lb_gov_configure(NULL, &p), -EINVAL);
	assert_int_equal(lb_gov_configure(g, NULL), -EINVAL);
	lb_gov_params_default(NULL);	/* must not crash */
	for (size_t i = 0; i < NELEM(rows); i++) {
		lb_gov_params_default(&p);
		set_field(&p, rows[i].off, rows[i].kind, rows[i].v);
		assert_int_equal(lb_gov_params_check(&p), rows[i].rc);
		errno = 0;
		assert_null(lb_gov_create(&p, 0));
		assert_int_equal(errno, -rows[i].rc);
		assert_int_equal(lb_gov_configure(g, &p), rows[i].rc);
	}
	for (size_t i = 0; i < NELEM(ok); i++) {
		lb_gov_params_default(&p);
		set_field(&p, ok[i].off, ok[i].kind, ok[i].v);
		assert_int_equal(lb_gov_params_check(&p), 0);
	}
	/* rejected configurations left the defaults in place */
	lb_gov_params_default(&keep);
	put_interval(g, 0, 100, 50, 0, 1);
	lb_gov_tick(g, NS_PER_S);
	assert_true(lb_gov_multiplier(g) == keep.t_step);
	lb_gov_free(g);
}

/* Run-time reconfiguration clamps M and keeps the controller going. */
static void
test_configure(void **state)
{
	struct lb_gov_params p;
	struct lb_gov_state st;
	struct lb_gov *g;

	(void)state;
	lb_gov_params_default(&p);
	p.window_slots = 2;
	g = lb_gov_create(&p, 0);
	assert_non_null(g);
	for (unsigned int i = 0; i < 4; i++)
		put_interval(g, i * NS_PER_S, 100, 50, 0, 1);
	lb_gov_tick(g, 4 * NS_PER_S);
	assert_true(lb_gov_multiplier(g) == 40.0);
	p.m_max = 30.0;
	assert_int_equal(lb_gov_configure(g, &p), 0);
	assert_true(lb_gov_multiplier(g) == 30.0);
	p.m_init = 35.0;
	p.m_max = 60.0;
	assert_int_equal(lb_gov_configure(g, &p), 0);
	assert_true(lb_gov_multiplier(g) == 35.0);
	/* a new window size starts from an empty window */
	put_interval(g, 4 * NS_PER_S, 100, 50, 0, 1);
	p.window_slots = 1;
	p.mode = LB_GOV_MODE_IDEAL_RATE;
	assert_int_equal(lb_gov_configure(g, &p), 0);
	lb_gov_tick(g, 5 * NS_PER_S);
	lb_gov_state(g, &st);
	assert_int_equal(st.mode, LB_GOV_MODE_IDEAL_RATE);
	assert_int_equal(st.window_records, 0);
	assert_false(st.overloaded);
	assert_true(st.m == 35.0);	/* calm 1 < K */
	lb_gov_free(g);
}

static void
test_bad_records(void **state)
{
	static const struct {
		uint64_t exp, act;
		unsigned int rank;
		int rc;
	} rows[] = {
		{ 0, 5, 1, -EINVAL },
		{ (uint64_t)INT64_MAX + 1, 5, 1, -ERANGE },
		{ 5, (uint64_t)INT64_MAX + 1, 1, -ERANGE },
		{ 5, UINT64_MAX, 1, -ERANGE },
		{ 5, 5, LB_GOV_RANK_MAX + 1, -ERANGE },
		{ 5, 5, UINT32_MAX, -ERANGE },
		{ INT64_MAX, 0, LB_GOV_RANK_MAX, 0 },	/* extremes are fine */
		{ 1, INT64_MAX, 0, 0 },
	};
	struct lb_gov_counters c;
	struct lb_gov_state st;
	struct lb_gov *g = lb_gov_create(NULL, 0);

	(void)state;
	assert_non_null(g);
	for (size_t i = 0; i < NELEM(rows); i++)
		assert_int_equal(lb_gov_record(g, 5 * NS_PER_S, rows[i].exp,
					       rows[i].act, rows[i].rank),
				 rows[i].rc);
	lb_gov_counters(g, &c);
	assert_int_equal(c.rejected, 6);
	assert_int_equal(c.records, 2);
	assert_int_equal(c.misses, 1);
	/* good records closed 5 intervals; bad ones alone would not have */
	assert_int_equal(c.intervals, 5);
	lb_gov_state(g, &st);
	assert_int_equal(st.interval_start_ns, 5 * NS_PER_S);

	assert_int_equal(lb_gov_record(NULL, 0, 1, 1, 1), -EINVAL);
	assert_int_equal(lb_gov_tick(NULL, 0), -EINVAL);
	assert_true(isnan(lb_gov_multiplier(NULL)));
	assert_int_equal(lb_gov_state(NULL, &st), -EINVAL);
	assert_int_equal(lb_gov_state(g, NULL), -EINVAL);
	assert_int_equal(lb_gov_counters(NULL, &c), -EINVAL);
	assert_int_equal(lb_gov_counters(g, NULL), -EINVAL);
	lb_gov_free(g);

	/* a rejected record does not advance time */
	g = lb_gov_create(NULL, 0);
	assert_non_null(g);
	assert_int_equal(lb_gov_record(g, 9 * NS_PER_S, 0, 1, 1), -EINVAL);
	lb_gov_counters(g, &c);
	assert_int_equal(c.intervals, 0);
	lb_gov_free(g);
}

/*
 * System test: a server is a FIFO queue with a fixed service rate; clients
 * offer Poisson traffic above it. Classes: rank 1/2/3, 20/30/50 % of the
 * requests, expecting 50/100/200 ms. The governor throttles arrivals with
 * min(1, M x P / 100) and learns from each completion.
 */
#define SRV_Q (1u << 17)

struct srv_job {
	uint64_t arr, fin, exp;
	unsigned int rank;
};

struct srv_run {
	double offered_rps, service_rps;
	unsigned int nb_windows;
	uint64_t seed;
	bool governed;
	struct lb_gov_params p;
	/* results, over the second half of the run */
	uint64_t done, missed;
	unsigned int transitions;	/* overloaded flag flips, all run */
	struct lb_gov_counters c;
	struct lb_gov_state st;
};

static const double srv_share[3] = { 0.2, 0.3, 0.5 };
static const uint64_t srv_exp[3] = { 50 * NS_PER_MS, 100 * NS_PER_MS,
				     200 * NS_PER_MS };

static void
srv_complete(struct srv_run *r, struct lb_gov *g, const struct srv_job *j)
{
	uint64_t half = (uint64_t)r->nb_windows / 2 * NS_PER_S;

	if (j->fin >= half) {
		r->done++;
		r->missed += j->fin - j->arr > j->exp;
	}
	if (g != NULL)
		assert_int_equal(lb_gov_record(g, j->fin, j->exp,
					       j->fin - j->arr, j->rank), 0);
}

static void
srv_simulate(struct srv_run *r)
{
	struct srv_job *q = calloc(SRV_Q, sizeof(*q));
	const uint64_t svc = (uint64_t)(1e9 / r->service_rps);
	const uint64_t end = (uint64_t)r->nb_windows * NS_PER_S;
	uint64_t t = 0, busy = 0, qh = 0, qt = 0, next_w = NS_PER_S;
	struct lb_gov *g = NULL;
	struct lb_xoshiro x;
	struct lb_rng rng;
	bool was_over = false;

	assert_non_null(q);
	lb_xoshiro_seed(&x, r->seed);
	rng = lb_rng_xoshiro(&x);
	if (r->governed) {
		g = lb_gov_create(&r->p, 0);
		assert_non_null(g);
	}
	for (;;) {
		double u = lb_rng_unit(&rng), c = lb_rng_unit(&rng);
		unsigned int k = c < srv_share[0] ? 0 :
				 c < srv_share[0] + srv_share[1] ? 1 : 2;

		t += (uint64_t)(-log1p(-u) / r->offered_rps * 1e9);
		/* completions in time order, window ends in between */
		while (next_w <= t && next_w <= end) {
			while (qh != qt && q[qh % SRV_Q].fin < next_w)
				srv_complete(r, g, &q[qh++ % SRV_Q]);
			if (g != NULL) {
				lb_gov_tick(g, next_w);
				lb_gov_state(g, &r->st);
				r->transitions += r->st.overloaded != was_over;
				was_over = r->st.overloaded;
			}
			next_w += NS_PER_S;
		}
		if (t >= end)
			break;
		while (qh != qt && q[qh % SRV_Q].fin <= t)
			srv_complete(r, g, &q[qh++ % SRV_Q]);
		if (g != NULL &&
		    lb_gov_decide(lb_gov_multiplier(g), k + 1, &rng, NULL) ==
			    LB_GOV_THROTTLE)
			continue;
		assert_true(qt - qh < SRV_Q);
		busy = (t > busy ? t : busy) + svc;
		q[qt++ % SRV_Q] = (struct srv_job){ t, busy, srv_exp[k],
						    k + 1 };
	}
	if (g != NULL) {
		lb_gov_counters(g, &r->c);
		lb_gov_free(g);
	}
	free(q);
}

static void
srv_init(struct srv_run *r, bool governed)
{
	memset(r, 0, sizeof(*r));
	r->offered_rps = 1500.0;
	r->service_rps = 1000.0;
	r->nb_windows = 120;
	r->seed = 42;
	r->governed = governed;
	lb_gov_params_default(&r->p);
}

/*
 * Flapping bound. Under a constant load the overload boundary sits at some
 * multiplier M*. Every overload episode raises M by at least T above the
 * value it entered with, and M only comes back down by R per interval after
 * K calm intervals, so two entries into overload are at least K + T/R
 * intervals apart. Over N intervals that allows at most
 * ceil(N / (K + T/R)) entries, each with one exit: transitions <= twice
 * that (20 for the defaults and N = 120). The naive on/off throttle (K = 0,
 * R = T) has no such spacing, and the same load makes it exceed the bound.
 */
static unsigned int
flap_bound(const struct lb_gov_params *p, unsigned int n)
{
	double cycle = p->calm_k + p->t_step / p->r_step;

	return 2 * (unsigned int)ceil(n / cycle);
}

static void
test_system_overload(void **state)
{
	struct srv_run *r = calloc(1, sizeof(*r));
	uint64_t damped_good;
	unsigned int bound;
	double share;

	(void)state;
	assert_non_null(r);
	/* without the governor the queue grows without end: all miss */
	srv_init(r, false);
	srv_simulate(r);
	assert_true(r->done > 0);
	assert_true((double)r->missed / r->done > 0.9);

	/* the patent's damped governor, default parameters */
	srv_init(r, true);
	srv_simulate(r);
	share = 100.0 * (double)r->missed / (double)r->done;
	bound = flap_bound(&r->p, r->nb_windows);
	assert_int_equal(bound, 20);
	assert_true(share < r->p.overload_pct);
	assert_true(r->c.overload_entries >= 1);	/* it did have to act */
	assert_true(r->transitions <= bound);
	assert_int_equal(r->transitions,
			 r->c.overload_entries + r->c.overload_exits);
	/* it still serves: at least half the capacity meets expectations */
	damped_good = r->done - r->missed;
	assert_true(damped_good > 500 * r->nb_windows / 2);

	/* ideal request rate mode: same guarantees, fewer episodes */
	srv_init(r, true);
	r->p.mode = LB_GOV_MODE_IDEAL_RATE;
	srv_simulate(r);
	share = 100.0 * (double)r->missed / (double)r->done;
	assert_true(share < r->p.overload_pct);
	assert_true(r->transitions <= flap_bound(&r->p, r->nb_windows));
	assert_true(r->c.ideal_holds > 0);
	/* holding at the ideal rate serves more on time than slow release */
	assert_true(r->done - r->missed > damped_good);
	/* the estimate is near the server's 1000 req/s, never above */
	assert_true(r->st.ideal_rate_rps > 850.0);
	assert_true(r->st.ideal_rate_rps <= 1001.0);

	/* naive on/off throttling flaps past the bound */
	srv_init(r, true);
	r->p.calm_k = 0;
	r->p.r_step = r->p.t_step;
	srv_simulate(r);
	assert_true(r->transitions > bound);
	free(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_probability_formula),
		cmocka_unit_test(test_decide),
		cmocka_unit_test(test_multiplier_dynamics),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_window_arithmetic),
		cmocka_unit_test(test_interval_edges),
		cmocka_unit_test(test_idle_fast_forward),
		cmocka_unit_test(test_ideal_mode),
		cmocka_unit_test(test_bad_params),
		cmocka_unit_test(test_configure),
		cmocka_unit_test(test_bad_records),
		cmocka_unit_test(test_system_overload),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
