/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lb-control's governors per service slot
 * (control/gov/govview.c): which records count, how they become QoS records
 * (expected, actual, rank), and that M follows the patent's damping on
 * the options of the service.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "govview.h"

#define SEC 1000000000ull
#define MS 1000000ull

static void
opts(uint64_t g[LB_CONF_GOV_NB])
{
	struct lb_conf_svc_opts o;

	lb_conf_svc_opts_default(&o);
	memcpy(g, o.gov, sizeof(o.gov));
	g[LB_CONF_GOV_ON] = 1;
}

/* An HTTP record of slot @p svc: @p lat_ms against @p exp_ms. */
static struct lb_fb
rec(uint16_t svc, uint64_t ts, uint32_t exp_ms, uint64_t lat_ms, int prio)
{
	struct lb_fb r = {
		.ts_ns = ts,
		.svc = svc,
		.kind = LB_FB_HTTP,
		.u32 = 200,
		.u32b = exp_ms,
		.v = lat_ms * MS,
		.flags = LB_FB_F_TIMED | LB_FB_F_EXPECT,
	};

	if (lat_ms <= exp_ms)
		r.flags |= LB_FB_F_QOS_MET;
	if (prio >= 0)
		r.flags |= (uint16_t)(LB_FB_F_PRIO | prio << LB_FB_PRIO_SHIFT);
	return r;
}

static void
test_params(void **state)
{
	uint64_t g[LB_CONF_GOV_NB];
	struct lb_gov_params p;

	(void)state;
	opts(g);
	assert_int_equal(lb_govview_params(g, &p), 0);
	/* The service options' defaults are the governor's (policies.md). */
	assert_int_equal(p.mode, LB_GOV_MODE_DAMPED);
	assert_int_equal(p.interval_ns, SEC);
	assert_int_equal(p.window_slots, 1);
	assert_true(p.overload_pct == 5.0 && p.t_step == 10.0 &&
		    p.r_step == 1.0);
	assert_int_equal(p.calm_k, 3);
	assert_int_equal(p.min_samples, 10);
	g[LB_CONF_GOV_IDEAL] = 1;
	g[LB_CONF_GOV_T] = 1;
	g[LB_CONF_GOV_R] = 1;
	assert_int_equal(lb_govview_params(g, &p), 0);
	assert_int_equal(p.mode, LB_GOV_MODE_IDEAL_RATE);
	/* The ideal-rate steps are held within T. */
	assert_true(p.ideal_up == 1.0 && p.ideal_down == 1.0);
	g[LB_CONF_GOV_R] = 2;
	assert_int_equal(lb_govview_params(g, &p), -ERANGE);
}

static void
test_which_records(void **state)
{
	struct lb_govview *v = lb_govview_create();
	uint64_t g[LB_CONF_GOV_NB];
	struct lb_govview_svc s;
	struct lb_fb r;

	(void)state;
	assert_non_null(v);
	opts(g);
	assert_int_equal(lb_govview_set(v, 3, g, true, 0), 0);
	/* Slot without a governor, other kinds, no expectation: no. */
	r = rec(2, 10, 100, 5, 1);
	assert_false(lb_govview_feed(v, &r));
	r = rec(3, 10, 100, 5, 1);
	r.kind = LB_FB_SPL;
	assert_false(lb_govview_feed(v, &r));
	r = rec(3, 10, 100, 5, 1);
	r.flags &= (uint16_t)~LB_FB_F_EXPECT;
	assert_false(lb_govview_feed(v, &r));
	r = rec(LB_CONF_MAX_SVCS, 10, 100, 5, 1);
	assert_false(lb_govview_feed(v, &r));
	assert_false(lb_govview_feed(NULL, &r));
	/* Met, missed, untimed (a miss), no X-Priority (default rank 1). */
	r = rec(3, 10, 100, 5, 2);
	assert_true(lb_govview_feed(v, &r));
	r = rec(3, 10, 100, 150, 9);
	assert_true(lb_govview_feed(v, &r));
	r = rec(3, 10, 100, 5, 0);
	r.flags &= (uint16_t) ~(LB_FB_F_TIMED | LB_FB_F_QOS_MET);
	assert_true(lb_govview_feed(v, &r));
	r = rec(3, 10, 100, 100, -1);
	assert_true(lb_govview_feed(v, &r));
	assert_int_equal(lb_govview_get(v, 3, &s), 0);
	assert_true(s.on);
	assert_int_equal(s.cnt.records, 4);
	assert_int_equal(s.cnt.misses, 2);
	assert_int_equal(s.cnt.records_by_class[2], 1);
	assert_int_equal(s.cnt.misses_by_class[7], 1);
	assert_int_equal(s.cnt.misses_by_class[0], 1);
	assert_int_equal(s.cnt.records_by_class[1], 1);
	assert_int_equal(lb_govview_get(v, 2, &s), 0);
	assert_false(s.on);
	assert_int_equal(lb_govview_get(v, LB_CONF_MAX_SVCS, &s), -EINVAL);
	lb_govview_free(v);
}

/* Feeds one interval of @p n records, @p miss of them late, and ticks. */
static void
interval(struct lb_govview *v, uint16_t svc, uint64_t start, unsigned int n,
	 unsigned int miss)
{
	for (unsigned int i = 0; i < n; i++) {
		struct lb_fb r = rec(svc, start + i, 100, i < miss ? 200 : 50,
				     3);

		assert_true(lb_govview_feed(v, &r));
	}
	lb_govview_tick(v, start + SEC);
}

static void
test_damping(void **state)
{
	struct lb_govview *v = lb_govview_create();
	uint64_t g[LB_CONF_GOV_NB];
	struct lb_govview_svc s;
	uint64_t t = 0;

	(void)state;
	opts(g);
	g[LB_CONF_GOV_T] = 20;
	g[LB_CONF_GOV_R] = 5;
	g[LB_CONF_GOV_K] = 2;
	assert_int_equal(lb_govview_set(v, 0, g, true, 0), 0);
	assert_true(lb_govview_m(v, 0) == 0.0);
	/* Two overloaded intervals (30 % late > 5 %): +T twice. */
	interval(v, 0, t, 20, 6);
	t += SEC;
	assert_true(lb_govview_m(v, 0) == 20.0);
	interval(v, 0, t, 20, 6);
	t += SEC;
	assert_true(lb_govview_m(v, 0) == 40.0);
	assert_int_equal(lb_govview_get(v, 0, &s), 0);
	assert_true(s.st.overloaded);
	assert_true(s.st.miss_pct == 30.0);
	/* Calm: the K-th calm interval is the first to release, by R. */
	interval(v, 0, t, 20, 0);
	t += SEC;
	assert_true(lb_govview_m(v, 0) == 40.0);
	interval(v, 0, t, 20, 1);
	t += SEC;
	assert_true(lb_govview_m(v, 0) == 35.0);
	/* New parameters keep M; a new service in the slot starts over. */
	g[LB_CONF_GOV_R] = 10;
	assert_int_equal(lb_govview_set(v, 0, g, false, t), 0);
	assert_true(lb_govview_m(v, 0) == 35.0);
	interval(v, 0, t, 20, 0);
	t += SEC;
	assert_true(lb_govview_m(v, 0) == 25.0);
	assert_int_equal(lb_govview_set(v, 0, g, true, t), 0);
	assert_true(lb_govview_m(v, 0) == 0.0);
	/* Governor off: no governor, M 0. */
	interval(v, 0, t, 20, 10);
	assert_true(lb_govview_m(v, 0) == 20.0);
	g[LB_CONF_GOV_ON] = 0;
	assert_int_equal(lb_govview_set(v, 0, g, false, t), 0);
	assert_true(lb_govview_m(v, 0) == 0.0);
	assert_int_equal(lb_govview_set(v, 0, NULL, false, t), 0);
	assert_int_equal(lb_govview_set(v, LB_CONF_MAX_SVCS, NULL, false, t),
			 -EINVAL);
	lb_govview_free(v);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_params),
		cmocka_unit_test(test_which_records),
		cmocka_unit_test(test_damping),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
