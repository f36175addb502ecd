/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests of the scaling guards. Each guard gets a table of ticks run
 * against one configuration, with the expected action, count and reason
 * of every tick; times sit on both sides of every window and cooldown
 * edge, one nanosecond apart.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "scale_guard.h"

#define S(x) ((uint64_t)(x) * LB_SG_NS_PER_S)

#define NONE LB_SG_NONE
#define UP LB_SG_UP
#define DOWN LB_SG_DOWN
#define RM LB_SG_REMOVE_PENDING

#define STEADY LB_SG_R_STEADY
#define REC LB_SG_R_RECOMMENDED
#define TOL LB_SG_R_TOLERANCE
#define STAB LB_SG_R_STABILIZED
#define RATE LB_SG_R_RATE_LIMITED
#define BMIN LB_SG_R_BELOW_MIN
#define AMAX LB_SG_R_ABOVE_MAX
#define PEND LB_SG_R_PENDING
#define COOL LB_SG_R_COOLDOWN
#define BOOT LB_SG_R_STARTUP_TIMEOUT

struct tick {
	uint64_t now_ns;
	double desired;
	uint32_t running;
	uint32_t pending;
	uint64_t oldest_ns;
	enum lb_scale_guard_action action;
	uint32_t count;
	enum lb_scale_guard_reason reason;
};

struct gcase {
	const char *name;
	struct lb_scale_guard_params p;
	size_t n;
	struct tick t[10];
};

/* Every case starts from the seed's "all guards off" and sets its own. */
#define BASE(m) .max_instances = (m), .history_len = 64

static const struct gcase cases[] = {
	{
		/* Seed behaviour: the recommendation passes straight. */
		.name = "seed pass-through",
		.p = { .max_instances = 5, .history_len = 1 },
		.n = 9,
		.t = {
			{ 0, 3.0, 1, 0, 0, UP, 2, REC },
			{ 1, 1.0, 3, 0, 0, DOWN, 2, REC },
			{ 2, 2.2, 3, 0, 0, NONE, 0, STEADY },
			{ 3, 2.0, 3, 0, 0, DOWN, 1, REC },
			{ 4, 9.0, 3, 0, 0, UP, 2, AMAX },
			{ 5, 9.0, 5, 0, 0, NONE, 0, AMAX },
			{ 6, 7.0, 7, 0, 0, DOWN, 2, AMAX },
			/* No pending guard in the seed's guard set. */
			{ 7, 4.0, 1, 1, 0, UP, 2, REC },
			{ 8, 0.0, 0, 0, 0, NONE, 0, STEADY },
		},
	},
	{
		.name = "min bound",
		.p = { BASE(10), .min_instances = 2 },
		.n = 5,
		.t = {
			{ 0, 0.0, 3, 0, 0, DOWN, 1, BMIN },
			{ 1, 0.0, 2, 0, 0, NONE, 0, BMIN },
			{ 2, 0.0, 0, 0, 0, UP, 2, BMIN },
			{ 3, 1.0, 2, 0, 0, NONE, 0, BMIN },
			{ 4, 1.5, 2, 0, 0, NONE, 0, STEADY },
		},
	},
	{
		/* HPA: |ratio - 1| <= tolerance keeps the current count. */
		.name = "tolerance 0.1",
		.p = { BASE(30), .tolerance = 0.1 },
		.n = 8,
		.t = {
			{ 0, 11.0, 10, 0, 0, NONE, 0, TOL },
			{ 1, 9.0, 10, 0, 0, NONE, 0, TOL },
			{ 2, 10.5, 10, 0, 0, NONE, 0, TOL },
			{ 3, 11.01, 10, 0, 0, UP, 2, REC },
			{ 4, 8.99, 12, 0, 0, DOWN, 3, REC },
			{ 5, 22.0, 20, 0, 0, NONE, 0, TOL },
			{ 6, 10.0, 10, 0, 0, NONE, 0, STEADY },
			/* No band around an empty pool. */
			{ 7, 0.5, 0, 0, 0, UP, 1, REC },
		},
	},
	{
		/* 0.25 is exact in binary: the edge is exact too. */
		.name = "tolerance edge",
		.p = { BASE(10), .tolerance = 0.25 },
		.n = 4,
		.t = {
			{ 0, 5.0, 4, 0, 0, NONE, 0, TOL },
			{ 1, 5.000001, 4, 0, 0, UP, 2, REC },
			{ 2, 4.5, 6, 0, 0, NONE, 0, TOL },
			{ 3, 4.499999, 6, 0, 0, DOWN, 1, REC },
		},
	},
	{
		/* HPA: scale down only to the highest of the last 300 s. */
		.name = "down stabilization",
		.p = { BASE(10), .down_window_ns = S(300) },
		.n = 8,
		.t = {
			{ 0, 5.0, 5, 0, 0, NONE, 0, STEADY },
			{ S(100), 4.0, 5, 0, 0, NONE, 0, STAB },
			{ S(200), 2.0, 5, 0, 0, NONE, 0, STAB },
			{ S(300) - 1, 2.0, 5, 0, 0, NONE, 0, STAB },
			/* t=0 has aged out; 4 from t=100 is the highest. */
			{ S(300), 2.0, 5, 0, 0, DOWN, 1, STAB },
			{ S(400) - 1, 2.0, 4, 0, 0, NONE, 0, STAB },
			{ S(400), 2.0, 4, 0, 0, DOWN, 2, REC },
			/* Scale-ups are not delayed by the down window. */
			{ S(401), 8.0, 2, 0, 0, UP, 6, REC },
		},
	},
	{
		.name = "up stabilization",
		.p = { BASE(10), .up_window_ns = S(60) },
		.n = 5,
		.t = {
			{ 0, 2.0, 2, 0, 0, NONE, 0, STEADY },
			{ S(10), 6.0, 2, 0, 0, NONE, 0, STAB },
			{ S(60) - 1, 6.0, 2, 0, 0, NONE, 0, STAB },
			{ S(60), 6.0, 2, 0, 0, UP, 4, REC },
			/* Scale-downs are not delayed by the up window. */
			{ S(61), 1.0, 6, 0, 0, DOWN, 5, REC },
		},
	},
	{
		/* Each window has its own edge, whatever the other's. */
		.name = "up window shorter",
		.p = { BASE(10), .up_window_ns = S(60),
		       .down_window_ns = S(300) },
		.n = 4,
		.t = {
			{ 0, 2.0, 2, 0, 0, NONE, 0, STEADY },
			{ S(10), 6.0, 2, 0, 0, NONE, 0, STAB },
			{ S(60) - 1, 6.0, 2, 0, 0, NONE, 0, STAB },
			{ S(60), 6.0, 2, 0, 0, UP, 4, REC },
		},
	},
	{
		.name = "down window shorter",
		.p = { BASE(10), .up_window_ns = S(300),
		       .down_window_ns = S(60) },
		.n = 4,
		.t = {
			{ 0, 5.0, 5, 0, 0, NONE, 0, STEADY },
			{ S(10), 2.0, 5, 0, 0, NONE, 0, STAB },
			{ S(60) - 1, 2.0, 5, 0, 0, NONE, 0, STAB },
			{ S(60), 2.0, 5, 0, 0, DOWN, 3, REC },
		},
	},
	{
		/* The window keeps what the dead band made of a tick (10),
		 * not its raw ceil (11), as HPA records it. */
		.name = "window after tolerance",
		.p = { BASE(20), .tolerance = 0.1, .down_window_ns = S(300) },
		.n = 2,
		.t = {
			{ 0, 10.9, 10, 0, 0, NONE, 0, TOL },
			{ S(1), 5.0, 11, 0, 0, DOWN, 1, STAB },
		},
	},
	{
		/* After any action: ups wait 15 s, downs wait 300 s. */
		.name = "cooldown",
		.p = { BASE(10), .up_cooldown_ns = S(15),
		       .down_cooldown_ns = S(300) },
		.n = 8,
		.t = {
			{ S(1000), 4.0, 2, 0, 0, UP, 2, REC },
			{ S(1015) - 1, 6.0, 4, 0, 0, NONE, 0, COOL },
			{ S(1015) - 1, 4.0, 4, 0, 0, NONE, 0, STEADY },
			{ S(1015), 6.0, 4, 0, 0, UP, 2, REC },
			{ S(1015) + 1, 3.0, 6, 0, 0, NONE, 0, COOL },
			{ S(1315) - 1, 3.0, 6, 0, 0, NONE, 0, COOL },
			{ S(1315), 3.0, 6, 0, 0, DOWN, 3, REC },
			{ S(1316), 5.0, 3, 0, 0, NONE, 0, COOL },
		},
	},
	{
		/* Bounds are hard: leave [min, max] even while cooling. */
		.name = "cooldown yields to bounds",
		.p = { BASE(4), .min_instances = 2,
		       .up_cooldown_ns = S(60), .down_cooldown_ns = S(60) },
		.n = 4,
		.t = {
			{ 0, 3.0, 2, 0, 0, UP, 1, REC },
			{ 1, 3.0, 1, 0, 0, UP, 1, BMIN },
			{ 2, 3.0, 7, 0, 0, DOWN, 3, AMAX },
			{ 3, 1.0, 4, 0, 0, NONE, 0, COOL },
		},
	},
	{
		/* HPA defaults: 4 instances or 100 %, the larger wins. */
		.name = "rate limit up",
		.p = { BASE(100), .max_up_step = 4, .max_up_pct = 100 },
		.n = 4,
		.t = {
			{ 0, 20.0, 2, 0, 0, UP, 4, RATE },
			{ 1, 40.0, 10, 0, 0, UP, 10, RATE },
			{ 2, 3.0, 0, 0, 0, UP, 3, REC },
			{ 3, 14.0, 10, 0, 0, UP, 4, REC },
		},
	},
	{
		.name = "rate limit percent only",
		.p = { BASE(10), .max_up_pct = 50, .max_down_pct = 50 },
		.n = 4,
		.t = {
			/* 50 % of nothing would never start: at least 1. */
			{ 0, 5.0, 0, 0, 0, UP, 1, RATE },
			{ 1, 9.0, 3, 0, 0, UP, 2, RATE },
			{ 2, 0.0, 5, 0, 0, DOWN, 3, RATE },
			{ 3, 0.0, 1, 0, 0, DOWN, 1, REC },
		},
	},
	{
		.name = "rate limit down step",
		.p = { BASE(10), .max_down_step = 1 },
		.n = 2,
		.t = {
			{ 0, 0.0, 5, 0, 0, DOWN, 1, RATE },
			{ 1, 3.0, 4, 0, 0, DOWN, 1, REC },
		},
	},
	{
		/* Rate limit cannot keep a pool below its minimum. */
		.name = "rate limit yields to min",
		.p = { BASE(10), .min_instances = 3, .max_up_step = 1 },
		.n = 1,
		.t = {
			{ 0, 10.0, 0, 0, 0, UP, 3, BMIN },
		},
	},
	{
		.name = "pending guard",
		.p = { BASE(10), .min_instances = 3, .pending_guard = true },
		.n = 5,
		.t = {
			{ 0, 6.0, 3, 1, 0, NONE, 0, PEND },
			{ 1, 6.0, 4, 0, 0, UP, 2, REC },
			/* Scale-downs are not held. */
			{ 2, 3.0, 5, 1, 0, DOWN, 3, REC },
			/* Below min: climb to min only. */
			{ 3, 6.0, 1, 1, 0, UP, 1, BMIN },
			{ 4, 6.0, 3, 0, 0, UP, 3, REC },
		},
	},
	{
		/* WSO2: a pending instance not joined within 15 s goes. */
		.name = "startup timeout",
		.p = { BASE(10), .startup_timeout_ns = S(15),
		       .up_cooldown_ns = S(60), .pending_guard = true },
		.n = 6,
		.t = {
			{ S(100), 3.0, 2, 1, S(85) + 1, NONE, 0, STEADY },
			{ S(100), 3.0, 2, 1, S(85), RM, 1, BOOT },
			/* Removal starts no cooldown: replaced at once. */
			{ S(101), 3.0, 2, 0, 0, UP, 1, REC },
			{ S(102), 5.0, 2, 1, S(101), NONE, 0, PEND },
			/* Pre-empts cooldown and the pending guard. */
			{ S(116), 5.0, 2, 1, S(101), RM, 1, BOOT },
			/* pending == 0: the request time is not read. */
			{ S(117), 2.0, 2, 0, S(999), NONE, 0, STEADY },
		},
	},
	{
		/* A ring too short for the window forgets the old peak. */
		.name = "history overflow",
		.p = { .max_instances = 10, .history_len = 2,
		       .down_window_ns = S(300) },
		.n = 3,
		.t = {
			{ 0, 9.0, 9, 0, 0, NONE, 0, STEADY },
			{ S(1), 1.0, 9, 0, 0, NONE, 0, STAB },
			{ S(2), 1.0, 9, 0, 0, DOWN, 8, REC },
		},
	},
	{
		.name = "history long enough",
		.p = { .max_instances = 10, .history_len = 3,
		       .down_window_ns = S(300) },
		.n = 3,
		.t = {
			{ 0, 9.0, 9, 0, 0, NONE, 0, STEADY },
			{ S(1), 1.0, 9, 0, 0, NONE, 0, STAB },
			{ S(2), 1.0, 9, 0, 0, NONE, 0, STAB },
		},
	},
	{
		/* Recommended profile: tolerance, stabilization, limits. */
		.name = "recommended profile",
		.p = { .min_instances = 1, .max_instances = 20,
		       .tolerance = 0.1, .down_window_ns = S(300),
		       .up_cooldown_ns = S(15), .down_cooldown_ns = S(15),
		       .max_up_step = 4, .max_up_pct = 100,
		       .max_down_pct = 100, .pending_guard = true,
		       .startup_timeout_ns = S(15), .history_len = 1024 },
		.n = 7,
		.t = {
			{ 0, 10.0, 2, 0, 0, UP, 4, RATE },
			{ S(5), 10.0, 2, 4, S(0), NONE, 0, PEND },
			{ S(10), 10.0, 6, 0, 0, NONE, 0, COOL },
			{ S(15), 10.0, 6, 0, 0, UP, 4, REC },
			{ S(30), 10.5, 10, 0, 0, NONE, 0, TOL },
			{ S(60), 3.0, 10, 0, 0, NONE, 0, STAB },
			{ S(330), 3.0, 10, 0, 0, DOWN, 7, REC },
		},
	},
};

static void
test_cases(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const struct gcase *gc = &cases[c];
		struct lb_scale_guard *g = lb_scale_guard_create(&gc->p);
		struct lb_scale_guard_decision d;

		if (g == NULL)
			fail_msg("%s: create failed (errno %d)", gc->name,
				 errno);
		for (size_t i = 0; i < gc->n; i++) {
			const struct tick *t = &gc->t[i];
			struct lb_scale_guard_input in = {
				.now_ns = t->now_ns,
				.desired = t->desired,
				.running = t->running,
				.pending = t->pending,
				.oldest_pending_ns = t->oldest_ns,
			};
			int rc = lb_scale_guard_decide(g, &in, &d);

			if (rc != 0 || d.action != t->action ||
			    d.count != t->count || d.reason != t->reason)
				fail_msg("%s, tick %zu: rc %d, got %s %u (%s), "
					 "want %s %u (%s)",
					 gc->name, i + 1, rc,
					 lb_scale_guard_action_name(d.action),
					 d.count,
					 lb_scale_guard_reason_name(d.reason),
					 lb_scale_guard_action_name(t->action),
					 t->count,
					 lb_scale_guard_reason_name(t->reason));
			/* The target is always consistent with the action. */
			if (d.action == UP)
				assert_int_equal(d.target, d.current + d.count);
			else if (d.action == NONE)
				assert_int_equal(d.target, d.current);
			else
				assert_int_equal(d.target, d.current - d.count);
			assert_int_equal(d.current, t->running + t->pending);
		}
		lb_scale_guard_free(g);
	}
}

/* The intermediate values and counters of one stabilized run. */
static void
test_decision_fields_and_stats(void **state)
{
	struct lb_scale_guard_params p;
	struct lb_scale_guard_stats st;
	struct lb_scale_guard_decision d;
	struct lb_scale_guard_input in = { .running = 8 };
	struct lb_scale_guard *g;

	(void)state;
	lb_scale_guard_params_default(&p);
	p.max_instances = 10;
	p.tolerance = 0.1;
	p.down_window_ns = S(300);
	g = lb_scale_guard_create(&p);
	assert_non_null(g);
	in.desired = 8.0;
	assert_int_equal(lb_scale_guard_decide(g, &in, &d), 0);
	in.now_ns = S(1);
	in.desired = 2.4;
	assert_int_equal(lb_scale_guard_decide(g, &in, &d), 0);
	assert_int_equal(d.current, 8);
	assert_int_equal(d.raw, 3);
	assert_int_equal(d.recommended, 3);
	assert_int_equal(d.stabilized, 8);
	assert_int_equal(d.target, 8);
	assert_int_equal(d.reason, STAB);
	in.now_ns = S(2);
	in.desired = 8.5;
	assert_int_equal(lb_scale_guard_decide(g, &in, &d), 0);
	assert_int_equal(d.raw, 9);
	assert_int_equal(d.recommended, 8);
	assert_int_equal(d.reason, TOL);
	in.now_ns = S(301);
	in.desired = 2.4;
	assert_int_equal(lb_scale_guard_decide(g, &in, &d), 0);
	assert_int_equal(d.stabilized, 8); /* t=2 (8, within 10 %) */
	in.now_ns = S(302);
	assert_int_equal(lb_scale_guard_decide(g, &in, &d), 0);
	assert_int_equal(d.action, DOWN);
	assert_int_equal(d.count, 5);
	assert_int_equal(lb_scale_guard_stats_get(g, &st), 0);
	assert_int_equal(st.decisions, 5);
	assert_int_equal(st.downs, 1);
	assert_int_equal(st.removed, 5);
	assert_int_equal(st.ups, 0);
	assert_int_equal(st.by_reason[STAB], 2);
	assert_int_equal(st.by_reason[TOL], 1);
	assert_int_equal(st.by_reason[STEADY], 1);
	assert_int_equal(st.by_reason[REC], 1);
	assert_int_equal(st.history_overflows, 0);
	lb_scale_guard_free(g);
}

/*
 * The ring drops recommendations once they are as old as the longest
 * window, and counts an overflow only for one dropped while still inside.
 */
static void
test_history_ring(void **state)
{
	static const struct {
		uint64_t now_ns;
		uint64_t overflows;
	} rows[] = {
		{ 0, 0 }, { S(5), 0 }, { S(10), 0 }, { S(11), 1 },
		{ S(12), 2 }, { S(30), 2 },
	};
	struct lb_scale_guard_params p;
	struct lb_scale_guard_stats st;
	struct lb_scale_guard_decision d;
	struct lb_scale_guard *g;

	(void)state;
	lb_scale_guard_params_default(&p);
	p.history_len = 2;
	p.down_window_ns = S(10);
	g = lb_scale_guard_create(&p);
	assert_non_null(g);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct lb_scale_guard_input in = { .now_ns = rows[i].now_ns,
						   .desired = 3.0,
						   .running = 3 };

		assert_int_equal(lb_scale_guard_decide(g, &in, &d), 0);
		assert_int_equal(lb_scale_guard_stats_get(g, &st), 0);
		if (st.history_overflows != rows[i].overflows)
			fail_msg("t=%llu s: %llu overflows, want %llu",
				 (unsigned long long)(rows[i].now_ns /
						      LB_SG_NS_PER_S),
				 (unsigned long long)st.history_overflows,
				 (unsigned long long)rows[i].overflows);
	}
	lb_scale_guard_free(g);
}

static void
test_bad_input(void **state)
{
	static const struct {
		const char *name;
		uint64_t now_ns;
		double desired;
		uint32_t running;
		uint32_t pending;
		uint64_t oldest_ns;
		int rc;
	} rows[] = {
		{ "nan", S(10), NAN, 1, 0, 0, -EINVAL },
		{ "+inf", S(10), INFINITY, 1, 0, 0, -EINVAL },
		{ "-inf", S(10), -INFINITY, 1, 0, 0, -EINVAL },
		{ "negative", S(10), -0.5, 1, 0, 0, -EINVAL },
		{ "huge desired", S(10), LB_SG_INSTANCES_MAX + 1.0, 1, 0, 0,
		  -ERANGE },
		{ "huge running", S(10), 1.0, LB_SG_INSTANCES_MAX + 1, 0, 0,
		  -ERANGE },
		{ "huge pending", S(10), 1.0, 1, UINT32_MAX, 0, -ERANGE },
		{ "clock backwards", S(10) - 1, 1.0, 1, 0, 0, -ERANGE },
		{ "pending from the future", S(10), 1.0, 1, 1, S(10) + 1,
		  -ERANGE },
	};
	struct lb_scale_guard_params p;
	struct lb_scale_guard_stats st;
	struct lb_scale_guard_decision d, before;
	struct lb_scale_guard *g;
	struct lb_scale_guard_input in = { .now_ns = S(10), .desired = 9.0,
					   .running = 1 };

	(void)state;
	lb_scale_guard_params_default(&p);
	p.down_window_ns = S(300);
	g = lb_scale_guard_create(&p);
	assert_non_null(g);
	/* A peak of 9 in the window (recorded before the bounds). */
	assert_int_equal(lb_scale_guard_decide(g, &in, &d), 0);
	assert_int_equal(d.action, UP);
	assert_int_equal(d.count, 4);
	memset(&before, 0x5a, sizeof(before));
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct lb_scale_guard_input bad = {
			.now_ns = rows[i].now_ns,
			.desired = rows[i].desired,
			.running = rows[i].running,
			.pending = rows[i].pending,
			.oldest_pending_ns = rows[i].oldest_ns,
		};
		int rc;

		d = before;
		rc = lb_scale_guard_decide(g, &bad, &d);
		if (rc != rows[i].rc)
			fail_msg("%s: got %d want %d", rows[i].name, rc,
				 rows[i].rc);
		assert_memory_equal(&d, &before, sizeof(d));
	}
	assert_int_equal(lb_scale_guard_decide(NULL, &in, &d), -EINVAL);
	assert_int_equal(lb_scale_guard_decide(g, NULL, &d), -EINVAL);
	assert_int_equal(lb_scale_guard_decide(g, &in, NULL), -EINVAL);
	/* -0.0 is zero, and the same instant twice is fine. */
	in.desired = -0.0;
	in.running = 12;
	assert_int_equal(lb_scale_guard_decide(g, &in, &d), 0);
	/* Nothing rejected entered the window: its peak is still 9. */
	assert_int_equal(d.stabilized, 9);
	assert_int_equal(d.action, DOWN);
	assert_int_equal(d.count, 7);
	assert_int_equal(lb_scale_guard_stats_get(g, &st), 0);
	assert_int_equal(st.rejected, sizeof(rows) / sizeof(rows[0]) + 2);
	assert_int_equal(st.decisions, 2);
	assert_int_equal(lb_scale_guard_stats_get(NULL, &st), -EINVAL);
	assert_int_equal(lb_scale_guard_stats_get(g, NULL), -EINVAL);
	lb_scale_guard_free(g);
}

static void
test_reset(void **state)
{
	struct lb_scale_guard_params p;
	struct lb_scale_guard_decision d;
	struct lb_scale_guard *g;
	struct lb_scale_guard_input in = { .now_ns = S(50), .desired = 5.0,
					   .running = 5 };

	(void)state;
	lb_scale_guard_params_default(&p);
	p.down_window_ns = S(300);
	p.down_cooldown_ns = S(300);
	g = lb_scale_guard_create(&p);
	assert_non_null(g);
	assert_int_equal(lb_scale_guard_decide(g, &in, &d), 0);
	in.now_ns = S(49);
	in.desired = 1.0;
	assert_int_equal(lb_scale_guard_decide(g, &in, &d), -ERANGE);
	lb_scale_guard_reset(g);
	/* Clock, history and cooldown forgotten. */
	assert_int_equal(lb_scale_guard_decide(g, &in, &d), 0);
	assert_int_equal(d.action, DOWN);
	assert_int_equal(d.count, 4);
	lb_scale_guard_reset(NULL);
	lb_scale_guard_free(g);
	lb_scale_guard_free(NULL);
}

/* A noted count (a pool adopted as it is) holds the down window as a
 * decided one would; a bad note changes nothing. */
static void
test_note(void **state)
{
	struct lb_scale_guard_params p;
	struct lb_scale_guard_decision d;
	struct lb_scale_guard *g;
	struct lb_scale_guard_input in = {
		.now_ns = S(100), .desired = 1.0, .running = 3};

	(void)state;
	lb_scale_guard_params_default(&p);
	p.down_window_ns = S(300);
	g = lb_scale_guard_create(&p);
	assert_non_null(g);
	assert_int_equal(lb_scale_guard_note(NULL, S(100), 3), -EINVAL);
	assert_int_equal(
		lb_scale_guard_note(g, S(100), LB_SG_INSTANCES_MAX + 1),
		-ERANGE);
	assert_int_equal(lb_scale_guard_note(g, S(100), 3), 0);
	assert_int_equal(lb_scale_guard_note(g, S(99), 3), -ERANGE);
	assert_int_equal(lb_scale_guard_decide(g, &in, &d), 0);
	assert_int_equal(d.action, NONE);
	assert_int_equal(d.reason, STAB);
	in.now_ns = S(399);
	assert_int_equal(lb_scale_guard_decide(g, &in, &d), 0);
	assert_int_equal(d.action, NONE);
	/* 300 s after the note (and the first decision) it no longer
	 * counts. */
	in.now_ns = S(400);
	assert_int_equal(lb_scale_guard_decide(g, &in, &d), 0);
	assert_int_equal(d.action, DOWN);
	assert_int_equal(d.count, 2);
	/* Without the note the first decision goes down at once. */
	lb_scale_guard_reset(g);
	in.now_ns = S(100);
	assert_int_equal(lb_scale_guard_decide(g, &in, &d), 0);
	assert_int_equal(d.action, DOWN);
	lb_scale_guard_free(g);
}

static void
test_params(void **state)
{
	struct lb_scale_guard_params p, got;
	struct lb_scale_guard *g;

	(void)state;

	lb_scale_guard_params_default(&p);
	assert_int_equal(p.min_instances, 0);
	assert_int_equal(p.max_instances, 5);
	assert_true(p.tolerance == 0.0);
	assert_int_equal(p.down_window_ns, 0);
	assert_int_equal(p.up_cooldown_ns, 0);
	assert_int_equal(p.down_cooldown_ns, 0);
	assert_int_equal(p.max_up_step + p.max_up_pct, 0);
	assert_int_equal(p.max_down_step + p.max_down_pct, 0);
	assert_false(p.pending_guard);
	assert_int_equal(p.startup_timeout_ns, 0);
	assert_int_equal(lb_scale_guard_params_check(&p), 0);

	lb_scale_guard_params_recommended(&p);
	assert_int_equal(p.min_instances, 1);
	assert_true(p.tolerance == 0.1);
	assert_int_equal(p.down_window_ns, S(300));
	assert_int_equal(p.up_window_ns, 0);
	assert_int_equal(p.up_cooldown_ns, S(15));
	assert_int_equal(p.down_cooldown_ns, S(15));
	assert_int_equal(p.max_up_step, 4);
	assert_int_equal(p.max_up_pct, 100);
	assert_int_equal(p.max_down_pct, 100);
	assert_true(p.pending_guard);
	assert_int_equal(p.startup_timeout_ns, S(15));
	assert_int_equal(lb_scale_guard_params_check(&p), 0);
	g = lb_scale_guard_create(&p);
	assert_non_null(g);
	assert_int_equal(lb_scale_guard_params_get(g, &got), 0);
	assert_memory_equal(&got, &p, sizeof(p));
	assert_int_equal(lb_scale_guard_params_get(g, NULL), -EINVAL);
	lb_scale_guard_free(g);
}

/* One bad field at a time, on top of the defaults. */
#define BAD(field, value, err) { #field "=" #value, err, { .field = value } }
struct bad_param {
	const char *name;
	int rc;
	struct lb_scale_guard_params patch;
};

static void
apply(struct lb_scale_guard_params *p, const struct bad_param *b)
{
	const struct lb_scale_guard_params *q = &b->patch;

	if (q->min_instances)
		p->min_instances = q->min_instances;
	if (q->max_instances)
		p->max_instances = q->max_instances;
	if (q->tolerance != 0.0)
		p->tolerance = q->tolerance;
	if (q->max_up_step)
		p->max_up_step = q->max_up_step;
	if (q->max_up_pct)
		p->max_up_pct = q->max_up_pct;
	if (q->max_down_step)
		p->max_down_step = q->max_down_step;
	if (q->max_down_pct)
		p->max_down_pct = q->max_down_pct;
	if (q->history_len)
		p->history_len = q->history_len;
}

static void
test_bad_params(void **state)
{
	static const struct bad_param rows[] = {
		BAD(min_instances, 6, -EINVAL),
		BAD(tolerance, -0.01, -EINVAL),
		BAD(tolerance, 1.01, -EINVAL),
		BAD(tolerance, NAN, -EINVAL),
		BAD(tolerance, INFINITY, -EINVAL),
		BAD(max_down_pct, 101, -EINVAL),
		BAD(max_instances, LB_SG_INSTANCES_MAX + 1, -ERANGE),
		BAD(max_up_step, LB_SG_INSTANCES_MAX + 1, -ERANGE),
		BAD(max_down_step, UINT32_MAX, -ERANGE),
		BAD(max_up_pct, LB_SG_PCT_MAX + 1, -ERANGE),
		BAD(history_len, LB_SG_HISTORY_MAX + 1, -ERANGE),
		BAD(tolerance, 1.0, 0),
		BAD(max_up_pct, LB_SG_PCT_MAX, 0),
		BAD(max_down_pct, 100, 0),
		BAD(min_instances, 5, 0),
	};
	struct lb_scale_guard_params p;

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int rc;

		lb_scale_guard_params_default(&p);
		apply(&p, &rows[i]);
		rc = lb_scale_guard_params_check(&p);
		if (rc != rows[i].rc)
			fail_msg("%s: got %d want %d", rows[i].name, rc,
				 rows[i].rc);
		errno = 0;
		if (rc != 0) {
			assert_null(lb_scale_guard_create(&p));
			assert_int_equal(errno, -rc);
		}
	}
	/* Zero values the patch table cannot express. */
	lb_scale_guard_params_default(&p);
	p.max_instances = 0;
	assert_int_equal(lb_scale_guard_params_check(&p), -EINVAL);
	lb_scale_guard_params_default(&p);
	p.history_len = 0;
	assert_int_equal(lb_scale_guard_params_check(&p), -EINVAL);
	assert_int_equal(lb_scale_guard_params_check(NULL), -EINVAL);
	errno = 0;
	assert_null(lb_scale_guard_create(NULL));
	assert_int_equal(errno, EINVAL);
}

static void
test_names(void **state)
{
	(void)state;
	for (int i = 0; i < LB_SG_R_COUNT; i++) {
		const char *a = lb_scale_guard_reason_name(i);

		assert_string_not_equal(a, "?");
		for (int j = 0; j < i; j++)
			assert_string_not_equal(a,
						lb_scale_guard_reason_name(j));
	}
	assert_string_equal(lb_scale_guard_reason_name(LB_SG_R_COUNT), "?");
	assert_string_equal(lb_scale_guard_reason_name(COOL), "cooldown");
	assert_string_equal(lb_scale_guard_action_name(NONE), "none");
	assert_string_equal(lb_scale_guard_action_name(UP), "up");
	assert_string_equal(lb_scale_guard_action_name(DOWN), "down");
	assert_string_equal(lb_scale_guard_action_name(RM), "remove-pending");
	assert_string_equal(lb_scale_guard_action_name(9), "?");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_decision_fields_and_stats),
		cmocka_unit_test(test_history_ring),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_reset),
		cmocka_unit_test(test_note),
		cmocka_unit_test(test_params),
		cmocka_unit_test(test_bad_params),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
