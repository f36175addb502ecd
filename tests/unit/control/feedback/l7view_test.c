/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests of the L7 view: SPL per backend and the policy's reading per
 * service (the seed's worked example of [0067]-[0072] as a vector), the
 * sliding window's rates and percentiles, slot resets, in-flight average.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "l7view.h"

#define MS 1000000ull
#define SEC 1000000000ull
#define T0 (1000 * SEC)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void
near(double got, double want, double tol, const char *what)
{
	if (!(fabs(got - want) <= tol)) {
		print_error("%s: got %.12g, want %.12g (tol %g)\n", what, got,
			    want, tol);
		fail();
	}
}

static uint64_t
f64_bits(double d)
{
	uint64_t v;

	memcpy(&v, &d, sizeof(v));
	return v;
}

static struct lb_fb
spl_rec(uint16_t svc, uint16_t be, uint64_t ts, double spl, uint32_t age_ms)
{
	return (struct lb_fb){.kind = LB_FB_SPL,
			      .svc = svc,
			      .be = be,
			      .ts_ns = ts,
			      .flags = age_ms > 0 ? LB_FB_F_SPL_TIME : 0,
			      .u32 = age_ms,
			      .v = f64_bits(spl)};
}

static struct lb_fb
http_rec(uint16_t be, uint64_t ts, uint32_t status, uint64_t lat_ns,
	 uint16_t flags)
{
	return (struct lb_fb){.kind = LB_FB_HTTP,
			      .be = be,
			      .ts_ns = ts,
			      .flags = flags,
			      .u32 = status,
			      .v = lat_ns};
}

/* ---- histogram ---- */

static void
test_lat_bins(void **state)
{
	static const struct {
		uint64_t us;
		unsigned int bin;
	} rows[] = {
		{0, 0}, {7, 7}, {8, 8}, {9, 9}, {15, 15}, {16, 16}, {17, 16},
		{18, 17}, {31, 23}, {32, 24}, {LB_L7V_LAT_MAX_US - 1, 199},
		{LB_L7V_LAT_MAX_US, 200}, {UINT64_MAX, 200},
	};

	(void)state;
	assert_int_equal(lb_l7view_lat_bins(), 201);
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
		assert_int_equal(lb_l7view_lat_bin(rows[i].us), rows[i].bin);
	/* Bins never go down as latency grows. */
	for (uint64_t us = 1; us < LB_L7V_LAT_MAX_US; us = us * 5 / 4 + 1)
		assert_true(lb_l7view_lat_bin(us) >=
			    lb_l7view_lat_bin(us - 1));
}

/* Every percentile is within the documented 6.25 % of the exact one. */
static void
test_lat_resolution(void **state)
{
	uint32_t bins[201];

	(void)state;
	for (uint64_t us = 8; us < LB_L7V_LAT_MAX_US; us = us * 9 / 7 + 3) {
		double got;

		memset(bins, 0, sizeof(bins));
		bins[lb_l7view_lat_bin(us)] = 1;
		got = lb_l7view_lat_quantile(bins, 1, 0.5);
		if (fabs(got - (double)us) > (double)us / 16.0) {
			print_error("%llu us read as %g\n",
				    (unsigned long long)us, got);
			fail();
		}
	}
	/* Nearest rank: 100 values 1..100 ms, p50 is 50 ms, p99 99 ms. */
	memset(bins, 0, sizeof(bins));
	for (unsigned int i = 1; i <= 100; i++)
		bins[lb_l7view_lat_bin(i * 1000)]++;
	near(lb_l7view_lat_quantile(bins, 100, 0.5), 50000, 50000 / 16.0,
	     "p50");
	near(lb_l7view_lat_quantile(bins, 100, 0.99), 99000, 99000 / 16.0,
	     "p99");
	assert_true(lb_l7view_lat_quantile(bins, 0, 0.5) == 0.0);
	assert_true(lb_l7view_lat_quantile(bins, 100, 0.0) == 0.0);
}

/* ---- SPL ---- */

/*
 * The seed's example: 0.8 aged 2 ms decays to 0.4 with "age" ([0069]);
 * with a second instance at 0.2 aged 1 ms, the total is 0.3: in band.
 */
static void
test_spl_policy(void **state)
{
	struct lb_l7view *l = lb_l7view_create();
	struct lb_l7view_be b;
	struct lb_l7view_svc s;
	struct lb_fb r;

	(void)state;
	assert_non_null(l);
	assert_int_equal(lb_l7view_member(l, 3, 0, true, T0), 0);
	assert_int_equal(lb_l7view_member(l, 3, 1, true, T0), 0);
	r = spl_rec(3, 0, T0 + 10 * MS, 0.8, 0);
	lb_l7view_feed(l, &r);
	r = spl_rec(3, 1, T0 + 11 * MS, 0.2, 0);
	lb_l7view_feed(l, &r);
	assert_int_equal(lb_l7view_be_get(l, 3, 0, T0 + 12 * MS, &b), 0);
	assert_true(b.member && b.spl_seen);
	near(b.spl, 0.8, 0, "spl");
	assert_int_equal(b.spl_gen_ns, T0 + 10 * MS);
	assert_int_equal(b.spl_age_ns, 2 * MS);
	near(b.spl_decayed, 0.4, 1e-12, "decayed");
	assert_int_equal(b.spl_records, 1);
	assert_int_equal(lb_l7view_svc_get(l, 3, T0 + 12 * MS, &s), 0);
	assert_int_equal(s.nb_inst, 2);
	near(s.total, 0.3, 1e-12, "total");
	assert_int_equal(s.action, LB_SPL_NOOP);
	assert_int_equal(s.reason, LB_SPL_R_IN_BAND);
	assert_string_equal(s.decay, "age");
	near(s.lower, 0.2, 0, "lower");
	near(s.upper, 0.8, 0, "upper");

	/* Fresh and heavy: increment. */
	r = spl_rec(3, 0, T0 + 20 * MS, 1.4, 0);
	lb_l7view_feed(l, &r);
	r = spl_rec(3, 1, T0 + 20 * MS, 1.2, 0);
	lb_l7view_feed(l, &r);
	lb_l7view_svc_get(l, 3, T0 + 20 * MS, &s);
	near(s.total, 1.3, 1e-12, "total");
	assert_int_equal(s.action, LB_SPL_INCREMENT);
	/* A second later everything has decayed: decrement. */
	lb_l7view_svc_get(l, 3, T0 + 1020 * MS, &s);
	assert_int_equal(s.action, LB_SPL_DECREMENT);
	lb_l7view_free(l);
}

/* The generation time is the record's minus the age it carries; an
 * older report than the one kept is ignored, whatever arrives last. */
static void
test_spl_generation(void **state)
{
	struct lb_l7view *l = lb_l7view_create();
	struct lb_l7view_be b;
	struct lb_fb r;

	(void)state;
	lb_l7view_member(l, 0, 5, true, T0);
	r = spl_rec(0, 5, T0 + 100 * MS, 0.5, 30);
	lb_l7view_feed(l, &r);
	lb_l7view_be_get(l, 0, 5, T0 + 100 * MS, &b);
	assert_int_equal(b.spl_gen_ns, T0 + 70 * MS);
	assert_int_equal(b.spl_age_ns, 30 * MS);
	near(b.spl_decayed, 0.5 / 30, 1e-12, "decayed");
	r = spl_rec(0, 5, T0 + 110 * MS, 0.9, 50); /* generated at 60 ms */
	lb_l7view_feed(l, &r);
	lb_l7view_be_get(l, 0, 5, T0 + 110 * MS, &b);
	near(b.spl, 0.5, 0, "kept");
	assert_int_equal(b.spl_records, 2);
	/* Not a number, negative: counted, not kept. */
	r = spl_rec(0, 5, T0 + 120 * MS, -1.0, 0);
	lb_l7view_feed(l, &r);
	r = spl_rec(0, 5, T0 + 120 * MS, NAN, 0);
	lb_l7view_feed(l, &r);
	lb_l7view_be_get(l, 0, 5, T0 + 120 * MS, &b);
	near(b.spl, 0.5, 0, "kept");
	assert_int_equal(b.spl_records, 4);
	/* Not a member: shown, not averaged. */
	lb_l7view_member(l, 0, 5, false, T0 + 120 * MS);
	lb_l7view_be_get(l, 0, 5, T0 + 120 * MS, &b);
	assert_false(b.member);
	near(b.spl, 0.5, 0, "shown");
	assert_true(b.spl_decayed == 0.0);
	/* Joining again, its latest report counts at once. */
	lb_l7view_member(l, 0, 5, true, T0 + 130 * MS);
	lb_l7view_be_get(l, 0, 5, T0 + 130 * MS, &b);
	near(b.spl_decayed, 0.5 / 60, 1e-12, "rejoined");
	lb_l7view_free(l);
}

/* A slot given to another backend starts from nothing. */
static void
test_reset(void **state)
{
	struct lb_l7view *l = lb_l7view_create();
	struct lb_l7view_be b;
	struct lb_l7view_svc s;
	struct lb_fb r;

	(void)state;
	lb_l7view_member(l, 1, 2, true, T0);
	r = spl_rec(1, 2, T0 + MS, 0.7, 0);
	lb_l7view_feed(l, &r);
	r = http_rec(2, T0 + MS, 200, 5 * MS, LB_FB_F_TIMED);
	r.svc = 1;
	lb_l7view_feed(l, &r);
	lb_l7view_reset(l, 1, 2);
	lb_l7view_be_get(l, 1, 2, T0 + 2 * MS, &b);
	assert_false(b.spl_seen || b.member);
	assert_int_equal(b.spl_records + b.http_records + b.win_responses, 0);
	lb_l7view_svc_get(l, 1, T0 + 2 * MS, &s);
	assert_int_equal(s.nb_inst, 0);
	assert_int_equal(s.reason, LB_SPL_R_NO_INSTANCES);
	/* Out of range. */
	assert_int_equal(lb_l7view_be_get(l, LB_CONF_MAX_SVCS, 0, T0, &b),
			 -EINVAL);
	assert_int_equal(lb_l7view_member(l, 0, LB_CONF_MAX_BES, true, T0),
			 -EINVAL);
	r = spl_rec(LB_CONF_MAX_SVCS, 0, T0, 0.5, 0);
	lb_l7view_feed(l, &r); /* ignored, no crash */
	lb_l7view_free(l);
}

/* Past LB_SPL_INST_MAX members, the others are counted, not averaged. */
static void
test_members_max(void **state)
{
	struct lb_l7view *l = lb_l7view_create();
	struct lb_l7view_svc s;

	(void)state;
	for (uint32_t b = 0; b < LB_SPL_INST_MAX; b++)
		assert_int_equal(lb_l7view_member(l, 0, b, true, T0), 0);
	assert_int_equal(lb_l7view_member(l, 0, LB_SPL_INST_MAX, true, T0),
			 -ENOSPC);
	lb_l7view_svc_get(l, 0, T0, &s);
	assert_int_equal(s.nb_inst, LB_SPL_INST_MAX);
	assert_int_equal(s.untracked, 1);
	lb_l7view_member(l, 0, LB_SPL_INST_MAX, false, T0);
	lb_l7view_member(l, 0, 0, false, T0);
	assert_int_equal(lb_l7view_member(l, 0, LB_SPL_INST_MAX, true, T0),
			 0);
	lb_l7view_svc_get(l, 0, T0, &s);
	assert_int_equal(s.nb_inst, LB_SPL_INST_MAX);
	assert_int_equal(s.untracked, 0);
	lb_l7view_free(l);
}

/* ---- the window ---- */

static void
test_window(void **state)
{
	struct lb_l7view *l = lb_l7view_create();
	struct lb_l7view_be b;
	struct lb_fb r;

	(void)state;
	/* Second 0: 10 responses, 5 of them 5xx, latencies 1..10 ms. */
	for (unsigned int i = 1; i <= 10; i++) {
		r = http_rec(0, T0 + i * MS, i % 2 ? 503 : 200, i * MS,
			     LB_FB_F_TIMED);
		lb_l7view_feed(l, &r);
	}
	/* Second 3: 4 with an expectation, one met, one untimed. */
	r = http_rec(0, T0 + 3 * SEC, 200, MS,
		     LB_FB_F_TIMED | LB_FB_F_EXPECT | LB_FB_F_QOS_MET);
	lb_l7view_feed(l, &r);
	r = http_rec(0, T0 + 3 * SEC, 200, 90 * MS,
		     LB_FB_F_TIMED | LB_FB_F_EXPECT);
	lb_l7view_feed(l, &r);
	r = http_rec(0, T0 + 3 * SEC, 200, 90 * MS,
		     LB_FB_F_TIMED | LB_FB_F_EXPECT);
	lb_l7view_feed(l, &r);
	r = http_rec(0, T0 + 3 * SEC, 100, 0, LB_FB_F_EXPECT);
	lb_l7view_feed(l, &r);

	lb_l7view_be_get(l, 0, 0, T0 + 3 * SEC, &b);
	assert_int_equal(b.win_responses, 14);
	assert_int_equal(b.win_5xx, 5);
	assert_int_equal(b.win_timed, 13);
	assert_int_equal(b.win_expect, 4);
	assert_int_equal(b.win_qos_miss, 3);
	near(b.rate_5xx, 5.0 / 14, 1e-12, "5xx");
	near(b.rate_qos_miss, 0.75, 1e-12, "qos");
	/* 13 latencies: 1, 1..10, 90, 90 ms. p50 = 7th = 6 ms. */
	near(b.p50_ms, 6, 6 / 16.0, "p50");
	near(b.p90_ms, 90, 90 / 16.0, "p90");
	near(b.p99_ms, 90, 90 / 16.0, "p99");
	assert_int_equal(b.http_records, 14);

	/* Second 10: second 0 has left the window, second 3 has not. */
	lb_l7view_be_get(l, 0, 0, T0 + 10 * SEC, &b);
	assert_int_equal(b.win_responses, 4);
	assert_int_equal(b.win_5xx, 0);
	/* Second 13: nothing left, counts since the start stay. */
	lb_l7view_be_get(l, 0, 0, T0 + 13 * SEC, &b);
	assert_int_equal(b.win_responses, 0);
	assert_true(b.rate_5xx == 0.0 && b.p99_ms == 0.0);
	assert_int_equal(b.http_records, 14);
	/* A bucket reused by a later second is emptied first. */
	r = http_rec(0, T0 + 20 * SEC, 502, MS, 0);
	lb_l7view_feed(l, &r);
	lb_l7view_be_get(l, 0, 0, T0 + 20 * SEC, &b);
	assert_int_equal(b.win_responses, 1);
	assert_int_equal(b.win_5xx, 1);
	/* A record too old for the bucket of its second is not counted. */
	r = http_rec(0, T0 + 10 * SEC, 200, MS, 0);
	lb_l7view_feed(l, &r);
	lb_l7view_be_get(l, 0, 0, T0 + 20 * SEC, &b);
	assert_int_equal(b.win_responses, 1);
	lb_l7view_free(l);
}

static void
test_orca_inflight(void **state)
{
	struct lb_l7view *l = lb_l7view_create();
	struct lb_l7view_be b;
	struct lb_l7view_svc s;
	struct lb_fb r = {.kind = LB_FB_ORCA, .svc = 2, .be = 1, .ts_ns = T0,
			  .u32 = 250000, .v = f64_bits(0.75)};

	(void)state;
	lb_l7view_feed(l, &r);
	lb_l7view_be_get(l, 2, 1, T0, &b);
	assert_true(b.orca_seen);
	near(b.orca_cpu, 0.75, 0, "cpu");
	near(b.orca_mem, 0.25, 1e-12, "mem");
	assert_int_equal(b.orca_records, 1);

	lb_l7view_svc_get(l, 2, T0, &s);
	assert_int_equal(s.inflight_n, 0);
	assert_true(s.inflight_avg == 0.0);
	/* 0..14: the average covers the last LB_L7V_TICKS, 5..14. */
	for (uint64_t i = 0; i < 15; i++)
		lb_l7view_sample(l, 2, i);
	lb_l7view_svc_get(l, 2, T0, &s);
	assert_int_equal(s.inflight_n, LB_L7V_TICKS);
	near(s.inflight_avg, 9.5, 1e-12, "avg");
	lb_l7view_svc_reset(l, 2);
	lb_l7view_sample(l, 2, 4);
	lb_l7view_svc_get(l, 2, T0, &s);
	near(s.inflight_avg, 4, 0, "after reset");
	lb_l7view_free(l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lat_bins),
		cmocka_unit_test(test_lat_resolution),
		cmocka_unit_test(test_spl_policy),
		cmocka_unit_test(test_spl_generation),
		cmocka_unit_test(test_reset),
		cmocka_unit_test(test_members_max),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_orca_inflight),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
