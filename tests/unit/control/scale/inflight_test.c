/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests of the requests-in-flight autoscaler. The seed's nine task
 * iterations are the first test vector; every other case is a row of a
 * table fed through the same replay helper.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "inflight.h"

#define NOOP LB_INFLIGHT_NOOP
#define UP LB_INFLIGHT_UP
#define DOWN LB_INFLIGHT_DOWN

/* One tick: inputs and the decision expected. */
struct step {
	uint32_t in_flight;
	uint32_t running;
	uint32_t pending;
	enum lb_inflight_action action;
	uint32_t count;
	enum lb_inflight_reason reason;
	/* l exactly as the seed prints it (all are multiples of 0.5). */
	double average;
	uint32_t required;
};

static void
replay(const struct lb_inflight_params *p, const struct step *s, size_t n,
       const char *what)
{
	struct lb_inflight *ifl = lb_inflight_create(p);
	struct lb_inflight_decision d;

	assert_non_null(ifl);
	for (size_t i = 0; i < n; i++) {
		int rc = lb_inflight_tick(ifl, s[i].in_flight, s[i].running,
					  s[i].pending, &d);

		if (rc != 0 || d.action != s[i].action ||
		    d.count != s[i].count || d.reason != s[i].reason ||
		    d.average != s[i].average ||
		    d.required != s[i].required)
			fail_msg("%s, tick %zu: rc %d, got %s %u (%s) l=%g "
				 "req=%u, want %s %u (%s) l=%g req=%u",
				 what, i + 1, rc,
				 lb_inflight_action_name(d.action), d.count,
				 lb_inflight_reason_name(d.reason), d.average,
				 d.required,
				 lb_inflight_action_name(s[i].action),
				 s[i].count,
				 lb_inflight_reason_name(s[i].reason),
				 s[i].average, s[i].required);
	}
	lb_inflight_free(ifl);
}

/*
 * The seed's example: min 0, max 5, queue_length_per_node 3,
 * rounds_to_average 2; "requestTokens" sizes 0 0 5 7 4 5 3 1 0; running
 * and pending instances as the seed states them in each iteration.
 */
static const struct step seed_iterations[] = {
	{ 0, 0, 0, NOOP, 0, LB_INFLIGHT_R_WINDOW_FILLING, 0.0, 0 },
	{ 0, 0, 0, NOOP, 0, LB_INFLIGHT_R_IN_BAND, 0.0, 0 },
	{ 5, 0, 0, UP, 1, LB_INFLIGHT_R_OVER_CAPACITY, 2.5, 1 },
	{ 7, 0, 1, NOOP, 0, LB_INFLIGHT_R_PENDING, 6.0, 2 },
	{ 4, 1, 0, UP, 1, LB_INFLIGHT_R_OVER_CAPACITY, 5.5, 2 },
	{ 5, 2, 0, NOOP, 0, LB_INFLIGHT_R_IN_BAND, 4.5, 2 },
	{ 3, 2, 0, NOOP, 0, LB_INFLIGHT_R_IN_BAND, 4.0, 2 },
	{ 1, 2, 0, DOWN, 1, LB_INFLIGHT_R_UNDER_CAPACITY, 2.0, 1 },
	{ 0, 1, 0, NOOP, 0, LB_INFLIGHT_R_IN_BAND, 0.5, 1 },
};

static void
test_seed_nine_iterations(void **state)
{
	struct lb_inflight_params p;

	(void)state;
	lb_inflight_params_default(&p);
	assert_int_equal(p.queue_length_per_node, 3);
	assert_int_equal(p.rounds_to_average, 2);
	assert_int_equal(p.min_instances, 0);
	assert_int_equal(p.max_instances, 5);
	replay(&p, seed_iterations,
	       sizeof(seed_iterations) / sizeof(seed_iterations[0]), "seed");
}

/* The capacities the seed prints next to each decision. */
static void
test_seed_capacities_and_counters(void **state)
{
	static const struct {
		uint64_t sum;
		uint64_t cap;
		int64_t cap_less_one;
		uint32_t target;
	} want[] = {
		{ 0, 0, -3, 0 }, { 0, 0, -3, 0 }, { 5, 0, -3, 1 },
		{ 12, 0, -3, 1 }, { 11, 3, 0, 2 }, { 9, 6, 3, 2 },
		{ 8, 6, 3, 2 },  { 4, 6, 3, 1 },  { 1, 3, 0, 1 },
	};
	struct lb_inflight_params p;
	struct lb_inflight_stats st;
	struct lb_inflight_decision d;
	struct lb_inflight *ifl;

	(void)state;
	lb_inflight_params_default(&p);
	ifl = lb_inflight_create(&p);
	assert_non_null(ifl);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct step *s = &seed_iterations[i];

		assert_int_equal(lb_inflight_tick(ifl, s->in_flight,
						  s->running, s->pending, &d),
				 0);
		assert_int_equal(d.nb_samples, i == 0 ? 1 : 2);
		assert_int_equal(d.sum, want[i].sum);
		assert_int_equal(d.capacity, want[i].cap);
		assert_true(d.capacity_less_one == want[i].cap_less_one);
		assert_int_equal(d.target, want[i].target);
	}
	assert_int_equal(lb_inflight_stats_get(ifl, &st), 0);
	assert_int_equal(st.ticks, 9);
	assert_int_equal(st.ups, 2);
	assert_int_equal(st.downs, 1);
	assert_int_equal(st.added, 2);
	assert_int_equal(st.removed, 1);
	assert_int_equal(st.rejected, 0);
	assert_int_equal(st.by_reason[LB_INFLIGHT_R_IN_BAND], 4);
	assert_int_equal(st.by_reason[LB_INFLIGHT_R_PENDING], 1);
	assert_int_equal(st.by_reason[LB_INFLIGHT_R_WINDOW_FILLING], 1);
	lb_inflight_free(ifl);
}

/* A scenario: configuration changes applied to the defaults, then ticks. */
struct scenario {
	const char *name;
	uint32_t rounds;
	uint32_t min, max;
	uint32_t step_up, step_down;
	enum lb_inflight_step step;
	enum lb_inflight_avg avg;
	int no_pending_guard;
	int no_top_up;
	int reset_after_action;
	size_t n;
	struct step s[6];
};

static const struct scenario scenarios[] = {
	{
		/* l == n*q is not "greater than": no scale-up. */
		.name = "up boundary", .n = 3,
		.s = {
			{ 6, 2, 0, NOOP, 0, LB_INFLIGHT_R_WINDOW_FILLING,
			  6.0, 2 },
			{ 6, 2, 0, NOOP, 0, LB_INFLIGHT_R_IN_BAND, 6.0, 2 },
			{ 7, 2, 0, UP, 1, LB_INFLIGHT_R_OVER_CAPACITY, 6.5,
			  3 },
		},
	},
	{
		/* l == (n-1)*q is not "less than": no scale-down. */
		.name = "down boundary", .n = 3,
		.s = {
			{ 3, 2, 0, NOOP, 0, LB_INFLIGHT_R_WINDOW_FILLING,
			  3.0, 1 },
			{ 3, 2, 0, NOOP, 0, LB_INFLIGHT_R_IN_BAND, 3.0, 1 },
			{ 2, 2, 0, DOWN, 1, LB_INFLIGHT_R_UNDER_CAPACITY,
			  2.5, 1 },
		},
	},
	{
		/* The released code's integer average: 13/2 -> 6. */
		.name = "truncated average", .avg = LB_INFLIGHT_AVG_TRUNCATE,
		.n = 3,
		.s = {
			{ 6, 2, 0, NOOP, 0, LB_INFLIGHT_R_WINDOW_FILLING,
			  6.0, 2 },
			{ 7, 2, 0, NOOP, 0, LB_INFLIGHT_R_IN_BAND, 6.0, 2 },
			{ 8, 2, 0, UP, 1, LB_INFLIGHT_R_OVER_CAPACITY, 7.0,
			  3 },
		},
	},
	{
		.name = "max clamp", .max = 2, .n = 3,
		.s = {
			{ 30, 1, 0, NOOP, 0, LB_INFLIGHT_R_WINDOW_FILLING,
			  30.0, 10 },
			{ 30, 1, 0, UP, 1, LB_INFLIGHT_R_OVER_CAPACITY, 30.0,
			  10 },
			{ 30, 2, 0, NOOP, 0, LB_INFLIGHT_R_AT_MAX, 30.0, 10 },
		},
	},
	{
		/* A pending instance counts against the maximum. */
		.name = "max counts pending", .max = 2,
		.no_pending_guard = 1, .n = 3,
		.s = {
			{ 30, 1, 0, NOOP, 0, LB_INFLIGHT_R_WINDOW_FILLING,
			  30.0, 10 },
			{ 30, 1, 0, UP, 1, LB_INFLIGHT_R_OVER_CAPACITY, 30.0,
			  10 },
			{ 30, 1, 1, NOOP, 0, LB_INFLIGHT_R_AT_MAX, 30.0, 10 },
		},
	},
	{
		.name = "min clamp", .min = 2, .n = 3,
		.s = {
			{ 0, 3, 0, NOOP, 0, LB_INFLIGHT_R_WINDOW_FILLING,
			  0.0, 0 },
			{ 0, 3, 0, DOWN, 1, LB_INFLIGHT_R_UNDER_CAPACITY, 0.0,
			  0 },
			{ 0, 2, 0, NOOP, 0, LB_INFLIGHT_R_AT_MIN, 0.0, 0 },
		},
	},
	{
		.name = "fixed step down stops at min", .min = 2,
		.step_down = 3, .n = 2,
		.s = {
			{ 0, 4, 0, NOOP, 0, LB_INFLIGHT_R_WINDOW_FILLING,
			  0.0, 0 },
			{ 0, 4, 0, DOWN, 2, LB_INFLIGHT_R_UNDER_CAPACITY, 0.0,
			  0 },
		},
	},
	{
		/* Topped up even before the window is full. */
		.name = "top up to min", .min = 2, .n = 3,
		.s = {
			{ 0, 0, 1, UP, 1, LB_INFLIGHT_R_BELOW_MIN, 0.0, 0 },
			{ 0, 0, 2, NOOP, 0, LB_INFLIGHT_R_IN_BAND, 0.0, 0 },
			{ 0, 2, 0, NOOP, 0, LB_INFLIGHT_R_AT_MIN, 0.0, 0 },
		},
	},
	{
		.name = "no top up", .min = 2, .no_top_up = 1, .n = 2,
		.s = {
			{ 9, 0, 0, NOOP, 0, LB_INFLIGHT_R_WINDOW_FILLING,
			  9.0, 3 },
			{ 9, 0, 0, UP, 1, LB_INFLIGHT_R_OVER_CAPACITY, 9.0,
			  3 },
		},
	},
	{
		/* Without the guard every tick adds while load stays high. */
		.name = "pending guard off", .no_pending_guard = 1, .n = 3,
		.s = {
			{ 9, 0, 0, NOOP, 0, LB_INFLIGHT_R_WINDOW_FILLING,
			  9.0, 3 },
			{ 9, 0, 0, UP, 1, LB_INFLIGHT_R_OVER_CAPACITY, 9.0,
			  3 },
			{ 9, 0, 1, UP, 1, LB_INFLIGHT_R_OVER_CAPACITY, 9.0,
			  3 },
		},
	},
	{
		/* Pending guard on, several instances per scale-up. */
		.name = "pending guard, step 2", .step_up = 2, .n = 4,
		.s = {
			{ 9, 0, 0, NOOP, 0, LB_INFLIGHT_R_WINDOW_FILLING,
			  9.0, 3 },
			{ 9, 0, 0, UP, 2, LB_INFLIGHT_R_OVER_CAPACITY, 9.0,
			  3 },
			{ 9, 1, 1, NOOP, 0, LB_INFLIGHT_R_PENDING, 9.0, 3 },
			{ 9, 2, 0, UP, 2, LB_INFLIGHT_R_OVER_CAPACITY, 9.0,
			  3 },
		},
	},
	{
		/* Jump to ceil(20/3) = 7, clamped to max 5 (4 more). */
		.name = "to band up", .step = LB_INFLIGHT_STEP_TO_BAND,
		.no_pending_guard = 1, .n = 4,
		.s = {
			{ 20, 1, 0, NOOP, 0, LB_INFLIGHT_R_WINDOW_FILLING,
			  20.0, 7 },
			{ 20, 1, 0, UP, 4, LB_INFLIGHT_R_OVER_CAPACITY, 20.0,
			  7 },
			/* ceil(11/3) = 4 already asked for. */
			{ 2, 1, 3, NOOP, 0, LB_INFLIGHT_R_PENDING, 11.0, 4 },
			{ 8, 1, 3, NOOP, 0, LB_INFLIGHT_R_PENDING, 5.0, 2 },
		},
	},
	{
		/* Down to floor(4/3)+1 = 2; then floor(3/3)+1 = 2 holds. */
		.name = "to band down", .step = LB_INFLIGHT_STEP_TO_BAND,
		.n = 4,
		.s = {
			{ 4, 5, 0, NOOP, 0, LB_INFLIGHT_R_WINDOW_FILLING,
			  4.0, 2 },
			{ 4, 5, 0, DOWN, 3, LB_INFLIGHT_R_UNDER_CAPACITY, 4.0,
			  2 },
			{ 2, 2, 0, NOOP, 0, LB_INFLIGHT_R_IN_BAND, 3.0, 1 },
			{ 1, 2, 0, DOWN, 1, LB_INFLIGHT_R_UNDER_CAPACITY, 1.5,
			  1 },
		},
	},
	{
		.name = "to band down stops at min",
		.step = LB_INFLIGHT_STEP_TO_BAND, .min = 3, .n = 2,
		.s = {
			{ 0, 5, 0, NOOP, 0, LB_INFLIGHT_R_WINDOW_FILLING,
			  0.0, 0 },
			{ 0, 5, 0, DOWN, 2, LB_INFLIGHT_R_UNDER_CAPACITY, 0.0,
			  0 },
		},
	},
	{
		/* The window slides: 3 samples, oldest dropped first. */
		.name = "sliding window", .rounds = 3, .n = 5,
		.s = {
			{ 9, 1, 0, NOOP, 0, LB_INFLIGHT_R_WINDOW_FILLING,
			  9.0, 3 },
			{ 0, 1, 0, NOOP, 0, LB_INFLIGHT_R_WINDOW_FILLING,
			  4.5, 2 },
			{ 0, 1, 0, NOOP, 0, LB_INFLIGHT_R_IN_BAND, 3.0, 1 },
			{ 0, 2, 0, DOWN, 1, LB_INFLIGHT_R_UNDER_CAPACITY, 0.0,
			  0 },
			{ 6, 1, 0, NOOP, 0, LB_INFLIGHT_R_IN_BAND, 2.0, 1 },
		},
	},
	{
		/* Option: decide again only on samples taken after acting. */
		.name = "reset after action", .reset_after_action = 1, .n = 5,
		.s = {
			{ 9, 0, 0, NOOP, 0, LB_INFLIGHT_R_WINDOW_FILLING,
			  9.0, 3 },
			{ 9, 0, 0, UP, 1, LB_INFLIGHT_R_OVER_CAPACITY, 9.0,
			  3 },
			{ 9, 1, 0, NOOP, 0, LB_INFLIGHT_R_WINDOW_FILLING,
			  9.0, 3 },
			{ 9, 1, 0, UP, 1, LB_INFLIGHT_R_OVER_CAPACITY, 9.0,
			  3 },
			{ 0, 2, 0, NOOP, 0, LB_INFLIGHT_R_WINDOW_FILLING,
			  0.0, 0 },
		},
	},
	{
		.name = "one round", .rounds = 1, .n = 2,
		.s = {
			{ 4, 1, 0, UP, 1, LB_INFLIGHT_R_OVER_CAPACITY, 4.0,
			  2 },
			{ 3, 2, 0, NOOP, 0, LB_INFLIGHT_R_IN_BAND, 3.0, 1 },
		},
	},
};

static void
test_scenarios(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]);
	     i++) {
		const struct scenario *sc = &scenarios[i];
		struct lb_inflight_params p;

		lb_inflight_params_default(&p);
		if (sc->rounds != 0)
			p.rounds_to_average = sc->rounds;
		p.min_instances = sc->min;
		if (sc->max != 0)
			p.max_instances = sc->max;
		if (sc->step_up != 0)
			p.instances_per_scale_up = sc->step_up;
		if (sc->step_down != 0)
			p.instances_per_scale_down = sc->step_down;
		p.step = sc->step;
		p.avg = sc->avg;
		p.pending_guard = !sc->no_pending_guard;
		p.top_up_to_min = !sc->no_top_up;
		p.reset_after_action = sc->reset_after_action;
		replay(&p, sc->s, sc->n, sc->name);
	}
}

static void
test_reset_empties_window(void **state)
{
	struct lb_inflight_params p;
	struct lb_inflight_decision d;
	struct lb_inflight *ifl;

	(void)state;
	lb_inflight_params_default(&p);
	ifl = lb_inflight_create(&p);
	assert_non_null(ifl);
	assert_int_equal(lb_inflight_tick(ifl, 9, 0, 0, &d), 0);
	assert_int_equal(lb_inflight_tick(ifl, 9, 0, 0, &d), 0);
	assert_int_equal(d.action, UP);
	lb_inflight_reset(ifl);
	assert_int_equal(lb_inflight_tick(ifl, 0, 0, 0, &d), 0);
	assert_int_equal(d.reason, LB_INFLIGHT_R_WINDOW_FILLING);
	assert_int_equal(d.nb_samples, 1);
	assert_int_equal(d.sum, 0);
	lb_inflight_reset(NULL);
	lb_inflight_free(ifl);
	lb_inflight_free(NULL);
}

/* The largest window of the largest samples stays exact. */
static void
test_huge_samples(void **state)
{
	struct lb_inflight_params p;
	struct lb_inflight_decision d;
	struct lb_inflight *ifl;

	(void)state;
	lb_inflight_params_default(&p);
	p.rounds_to_average = LB_INFLIGHT_ROUNDS_MAX;
	p.queue_length_per_node = 1;
	p.max_instances = LB_INFLIGHT_INSTANCES_MAX;
	p.step = LB_INFLIGHT_STEP_TO_BAND;
	ifl = lb_inflight_create(&p);
	assert_non_null(ifl);
	for (uint32_t i = 0; i < LB_INFLIGHT_ROUNDS_MAX; i++)
		assert_int_equal(lb_inflight_tick(ifl, UINT32_MAX,
						  LB_INFLIGHT_INSTANCES_MAX -
							  1,
						  0, &d),
				 0);
	assert_int_equal(d.sum, (uint64_t)UINT32_MAX * LB_INFLIGHT_ROUNDS_MAX);
	assert_true(d.average == (double)UINT32_MAX);
	assert_int_equal(d.required, UINT32_MAX);
	assert_int_equal(d.action, UP);
	assert_int_equal(d.count, 1);
	/* A full-size cluster with no load steps down to the band. */
	for (uint32_t i = 0; i < LB_INFLIGHT_ROUNDS_MAX; i++)
		assert_int_equal(lb_inflight_tick(ifl, 0,
						  LB_INFLIGHT_INSTANCES_MAX,
						  0, &d),
				 0);
	assert_int_equal(d.action, DOWN);
	assert_int_equal(d.count, LB_INFLIGHT_INSTANCES_MAX - 1);
	lb_inflight_free(ifl);
}

static void
test_bad_tick_input(void **state)
{
	struct lb_inflight_params p;
	struct lb_inflight_decision d;
	struct lb_inflight_stats st;
	struct lb_inflight *ifl;

	(void)state;
	lb_inflight_params_default(&p);
	ifl = lb_inflight_create(&p);
	assert_non_null(ifl);
	assert_int_equal(lb_inflight_tick(NULL, 1, 0, 0, &d), -EINVAL);
	assert_int_equal(lb_inflight_tick(ifl, 1, 0, 0, NULL), -EINVAL);
	memset(&d, 0xa5, sizeof(d));
	assert_int_equal(lb_inflight_tick(ifl, 1,
					  LB_INFLIGHT_INSTANCES_MAX + 1, 0,
					  &d),
			 -ERANGE);
	assert_int_equal(lb_inflight_tick(ifl, 1, 0, UINT32_MAX, &d),
			 -ERANGE);
	/* Untouched output, nothing recorded. */
	assert_int_equal(d.nb_samples, 0xa5a5a5a5u);
	assert_int_equal(lb_inflight_tick(ifl, 1, 0, 0, &d), 0);
	assert_int_equal(d.nb_samples, 1);
	assert_int_equal(d.sum, 1);
	assert_int_equal(lb_inflight_stats_get(ifl, &st), 0);
	assert_int_equal(st.rejected, 3);
	assert_int_equal(st.ticks, 1);
	assert_int_equal(lb_inflight_stats_get(NULL, &st), -EINVAL);
	assert_int_equal(lb_inflight_stats_get(ifl, NULL), -EINVAL);
	assert_int_equal(lb_inflight_params_get(ifl, NULL), -EINVAL);
	lb_inflight_free(ifl);
}

static void
test_bad_params(void **state)
{
	static const struct {
		const char *name;
		size_t off;
		size_t size;
		uint32_t value;
		int rc;
	} rows[] = {
#define ROW(f, v, e)                                                     \
	{ #f "=" #v, offsetof(struct lb_inflight_params, f),              \
	  sizeof(((struct lb_inflight_params *)0)->f), (uint32_t)(v), e }
		ROW(queue_length_per_node, 0, -EINVAL),
		ROW(rounds_to_average, 0, -EINVAL),
		ROW(rounds_to_average, LB_INFLIGHT_ROUNDS_MAX + 1, -EINVAL),
		ROW(max_instances, 0, -EINVAL),
		ROW(min_instances, 6, -EINVAL),
		ROW(max_instances, LB_INFLIGHT_INSTANCES_MAX + 1, -ERANGE),
		ROW(instances_per_scale_up, 0, -EINVAL),
		ROW(instances_per_scale_down, 0, -EINVAL),
		ROW(instances_per_scale_up, LB_INFLIGHT_INSTANCES_MAX + 1,
		    -ERANGE),
		ROW(instances_per_scale_down, UINT32_MAX, -ERANGE),
		ROW(step, 7, -EINVAL),
		ROW(avg, 2, -EINVAL),
		ROW(rounds_to_average, LB_INFLIGHT_ROUNDS_MAX, 0),
		ROW(max_instances, LB_INFLIGHT_INSTANCES_MAX, 0),
		ROW(min_instances, 5, 0),
#undef ROW
	};
	struct lb_inflight_params p, got;
	struct lb_inflight *ifl;

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		lb_inflight_params_default(&p);
		assert_int_equal(rows[i].size, sizeof(uint32_t));
		memcpy((char *)&p + rows[i].off, &rows[i].value,
		       sizeof(uint32_t));
		if (lb_inflight_params_check(&p) != rows[i].rc)
			fail_msg("%s: got %d want %d", rows[i].name,
				 lb_inflight_params_check(&p), rows[i].rc);
		errno = 0;
		ifl = lb_inflight_create(&p);
		if (rows[i].rc == 0) {
			assert_non_null(ifl);
			assert_int_equal(lb_inflight_params_get(ifl, &got),
					 0);
			assert_memory_equal(&got, &p, sizeof(p));
		} else {
			assert_null(ifl);
			assert_int_equal(errno, -rows[i].rc);
		}
		lb_inflight_free(ifl);
	}
	assert_int_equal(lb_inflight_params_check(NULL), -EINVAL);
	errno = 0;
	assert_null(lb_inflight_create(NULL));
	assert_int_equal(errno, EINVAL);
}

static void
test_names(void **state)
{
	(void)state;
	for (int i = 0; i < LB_INFLIGHT_R_COUNT; i++) {
		const char *a = lb_inflight_reason_name(i);

		assert_string_not_equal(a, "?");
		for (int j = 0; j < i; j++)
			assert_string_not_equal(a, lb_inflight_reason_name(j));
	}
	assert_string_equal(lb_inflight_reason_name(LB_INFLIGHT_R_COUNT),
			    "?");
	assert_string_equal(lb_inflight_reason_name(-1), "?");
	assert_string_equal(lb_inflight_action_name(NOOP), "noop");
	assert_string_equal(lb_inflight_action_name(UP), "up");
	assert_string_equal(lb_inflight_action_name(DOWN), "down");
	assert_string_equal(lb_inflight_action_name(3), "?");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seed_nine_iterations),
		cmocka_unit_test(test_seed_capacities_and_counters),
		cmocka_unit_test(test_scenarios),
		cmocka_unit_test(test_reset_empties_window),
		cmocka_unit_test(test_huge_samples),
		cmocka_unit_test(test_bad_tick_input),
		cmocka_unit_test(test_bad_params),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
