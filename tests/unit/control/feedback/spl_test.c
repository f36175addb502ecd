/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests of the SPL policy. The seed's worked examples (WO 2021/086339,
 * Tables 3-6 and [0063], [0069], [0072]-[0074]) are exact vectors.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "spl.h"

#define MS 1000000ull
#define SEC 1000000000ull
/* Arbitrary monotonic origin, far from 0 so that ages never wrap. */
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

static struct lb_spl_svc *
svc_new(unsigned int cap, const char *decay, double lower, double upper)
{
	struct lb_spl_conf c;
	struct lb_spl_svc *s;

	lb_spl_conf_init(&c, cap);
	if (decay != NULL)
		c.decay = decay;
	c.lower = lower;
	c.upper = upper;
	s = lb_spl_svc_create(&c);
	assert_non_null(s);
	return s;
}

/* Instance side: claim 3, Table 3, [0063]. */
static void
test_ratio(void **state)
{
	static const struct {
		const char *what;
		double exec, bench, want;
		int rc;
	} cases[] = {
		{"[0063] 120 ms vs 150 ms", 120, 150, 0.8, 0},
		{"Table 3 line 03,05 on time", 90, 90, 1.0, 0},
		{"Table 3 line 03..15 slow", 300, 200, 1.5, 0},
		{"units cancel (s)", 0.12, 0.15, 0.8, 0},
		{"zero execution time", 0, 150, 0.0, 0},
		{"negative zero execution", -0.0, 150, 0.0, 0},
		{"zero benchmark", 120, 0, 0, -EINVAL},
		{"negative benchmark", 120, -150, 0, -EINVAL},
		{"NaN execution", NAN, 150, 0, -EINVAL},
		{"NaN benchmark", 120, NAN, 0, -EINVAL},
		{"inf execution", INFINITY, 150, 0, -EINVAL},
		{"inf benchmark", 120, INFINITY, 0, -EINVAL},
		{"negative execution", -1, 150, 0, -EINVAL},
		{"overflow", 1e308, 1e-10, 0, -ERANGE},
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		double spl = -42.0;
		int rc = lb_spl_ratio(cases[i].exec, cases[i].bench, &spl);

		if (rc != cases[i].rc) {
			print_error("%s: rc %d want %d\n", cases[i].what, rc,
				    cases[i].rc);
			fail();
		}
		if (rc == 0) {
			near(spl, cases[i].want, 1e-12, cases[i].what);
			assert_false(signbit(spl));
		} else {
			assert_true(spl == -42.0); /* output untouched */
		}
	}
	assert_int_equal(lb_spl_ratio(120, 150, NULL), -EINVAL);
}

/* [0061]: execution time between the first and the last marker. */
static void
test_ratio_ns(void **state)
{
	static const struct {
		const char *what;
		uint64_t first, last, bench;
		double want;
		int rc;
	} cases[] = {
		{"markers 03..10 120 ms, 150 ms", T0, T0 + 120 * MS, 150 * MS,
		 0.8, 0},
		{"markers 03..15 250 ms, 200 ms", T0, T0 + 250 * MS, 200 * MS,
		 1.25, 0},
		{"same instant", T0, T0, 150 * MS, 0.0, 0},
		{"last before first", T0, T0 - 1, 150 * MS, 0, -ERANGE},
		{"zero benchmark", T0, T0 + MS, 0, 0, -EINVAL},
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		double spl = -1;
		int rc = lb_spl_ratio_ns(cases[i].first, cases[i].last,
					 cases[i].bench, &spl);

		if (rc != cases[i].rc) {
			print_error("%s: rc %d\n", cases[i].what, rc);
			fail();
		}
		if (rc == 0)
			near(spl, cases[i].want, 1e-12, cases[i].what);
	}
	assert_int_equal(lb_spl_ratio_ns(0, 1, 1, NULL), -EINVAL);
}

/* Each decay function on (value, age) -> expected. */
static void
test_decay_table(void **state)
{
	static const struct lb_spl_decay_params p = {
		.halflife_ns = 1 * SEC,
		.norm_span_ns = 1 * SEC,
	};
	static const struct {
		const char *decay;
		double spl;
		uint64_t age_ns;
		double want;
	} cases[] = {
		{"none", 0.8, 2 * MS, 0.8},
		{"none", 1.4, 3600 * SEC, 1.4},
		{"none", 0.0, 5 * MS, 0.0},
		/* Table 4, [0069]: 0.8 aged 2 ms -> 0.4. */
		{"age", 0.8, 2 * MS, 0.4},
		/* Below 1 ms the divisor is 1: no amplification. */
		{"age", 0.8, 0, 0.8},
		{"age", 0.8, MS / 2, 0.8},
		{"age", 0.8, MS, 0.8},
		/* Table 5: 0.95 kept, 1.4 -> 1.1, 1.2 -> 0.7. */
		{"age", 0.95, MS, 0.95},
		{"age", 1.4, 1272727, 1.1},
		{"age", 1.2, 1714286, 0.7},
		{"age", 0.8, 3 * MS / 2, 0.8 / 1.5},
		{"age", 0.8, 1 * SEC, 0.0008},
		/* Age 0..1 s -> factor 1..5, then 5. */
		{"normalized", 0.8, 0, 0.8},
		{"normalized", 0.8, 250 * MS, 0.4},
		{"normalized", 0.8, 500 * MS, 0.8 / 3.0},
		{"normalized", 1.0, 750 * MS, 0.25},
		{"normalized", 1.0, 1 * SEC, 0.2},
		{"normalized", 1.0, 3600 * SEC, 0.2},
		/* value * 2^(-age / 1 s). */
		{"halflife", 0.8, 0, 0.8},
		{"halflife", 0.8, 1 * SEC, 0.4},
		{"halflife", 0.8, 2 * SEC, 0.2},
		{"halflife", 1.0, 500 * MS, 0.70710678118654752},
		{"halflife", 1.0, 3600 * SEC, 0.0},
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct lb_spl_decay_ops *o =
			lb_spl_decay_find(cases[i].decay);
		char what[64];

		assert_non_null(o);
		snprintf(what, sizeof(what), "case %zu %s", i, cases[i].decay);
		/* 1e-6: ages of Table 5 are rounded to whole ns. */
		near(o->decay(&p, cases[i].spl, cases[i].age_ns), cases[i].want,
		     1e-6, what);
	}
}

static void
test_decay_lookup(void **state)
{
	static const struct {
		const char *name;
		int found;
	} cases[] = {
		{"none", 1}, {"age", 1}, {"normalized", 1}, {"halflife", 1},
		{"AGE", 0},  {"", 0},	 {"bogus", 0},	    {"age ", 0},
	};
	char list[64];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct lb_spl_decay_ops *o;

		errno = 0;
		o = lb_spl_decay_find(cases[i].name);
		if (cases[i].found) {
			assert_non_null(o);
			assert_string_equal(o->name, cases[i].name);
		} else {
			assert_null(o);
			assert_int_equal(errno, ENOENT);
		}
	}
	errno = 0;
	assert_null(lb_spl_decay_find(NULL));
	assert_int_equal(errno, EINVAL);
	/* Each registers itself from its own file; the list is in name
	 * order whatever the link order. */
	assert_int_equal(lb_spl_decay_names(list, sizeof(list), ", "),
			 (int)strlen("age, halflife, none, normalized"));
	assert_string_equal(list, "age, halflife, none, normalized");
	/* The seed's worked example divides by the age ([0067], Table 4). */
	assert_string_equal(LB_SPL_DECAY_DEFAULT, "age");
}

static double
decay_square(const struct lb_spl_decay_params *p, double spl, uint64_t age)
{
	(void)p;
	(void)age;
	return spl * spl;
}

static double
decay_nan(const struct lb_spl_decay_params *p, double spl, uint64_t age)
{
	(void)p;
	(void)age;
	(void)spl;
	return NAN;
}

static void
test_decay_register(void **state)
{
	static const struct lb_spl_decay_ops square = {
		.name = "test-square",
		.decay = decay_square,
	};
	static const struct lb_spl_decay_ops square_dup = {
		.name = "test-square",
		.decay = decay_nan,
	};
	static const struct lb_spl_decay_ops nan_ops = {
		.name = "test-nan",
		.decay = decay_nan,
	};
	static const struct lb_spl_decay_ops no_fn = {.name = "test-nofn"};
	static const struct lb_spl_decay_ops no_name = {.decay = decay_nan};
	static const struct lb_spl_decay_ops empty = {.name = "",
						      .decay = decay_nan};
	static const struct lb_spl_decay_ops age_again = {
		.name = "age",
		.decay = decay_square,
	};
	struct lb_spl_decision d;
	struct lb_spl_stats st;
	struct lb_spl_svc *s;

	(void)state;
	assert_int_equal(lb_spl_decay_register(NULL), -EINVAL);
	assert_int_equal(lb_spl_decay_register(&no_fn), -EINVAL);
	assert_int_equal(lb_spl_decay_register(&no_name), -EINVAL);
	assert_int_equal(lb_spl_decay_register(&empty), -EINVAL);
	assert_int_equal(lb_spl_decay_register(&age_again), -EEXIST);
	assert_int_equal(lb_spl_decay_register(&square), 0);
	assert_int_equal(lb_spl_decay_register(&square_dup), -EEXIST);
	assert_ptr_equal(lb_spl_decay_find("test-square"), &square);
	assert_int_equal(lb_spl_decay_register(&nan_ops), 0);

	/* A registered decay is usable by name. */
	s = svc_new(2, "test-square", 0.2, 0.8);
	assert_int_equal(lb_spl_inst_add(s, 0, T0), 0);
	assert_int_equal(lb_spl_report(s, 0, 0.5, T0, T0), 0);
	assert_int_equal(lb_spl_decide(s, T0 + MS, &d), 0);
	assert_string_equal(d.decay, "test-square");
	near(d.total, 0.25, 1e-15, "square");
	/* A decay that returns NaN stops the decision and is counted. */
	assert_int_equal(lb_spl_svc_set_decay(s, "test-nan",
					      &(struct lb_spl_decay_params){0}),
			 0);
	assert_int_equal(lb_spl_decide(s, T0 + MS, &d), -EDOM);
	assert_int_equal(lb_spl_stats_get(s, &st), 0);
	assert_int_equal(st.bad_decay, 1);
	assert_int_equal(st.decisions, 1);
	lb_spl_svc_free(s);

	/* The registry is bounded. */
	{
		static struct lb_spl_decay_ops fill[LB_SPL_DECAY_SLOTS];
		static char names[LB_SPL_DECAY_SLOTS][16];
		int rc = 0;
		unsigned int i;

		for (i = 0; i < LB_SPL_DECAY_SLOTS && rc == 0; i++) {
			snprintf(names[i], sizeof(names[i]), "fill-%u", i);
			fill[i].name = names[i];
			fill[i].decay = decay_square;
			rc = lb_spl_decay_register(&fill[i]);
		}
		assert_int_equal(rc, -ENOSPC);
		/* 4 built-ins + 2 above + the ones that fit. */
		assert_int_equal(i - 1, LB_SPL_DECAY_SLOTS - 6);
		assert_non_null(lb_spl_decay_find("age"));
	}
}

/*
 * Table 4 ([0068]-[0069]): three instances entered at 0; 108-1 reports
 * 0.8 which is 2 ms old when decided on -> modified 0.4, others 0.
 */
static void
test_patent_table4(void **state)
{
	struct lb_spl_decision d;
	struct lb_spl_svc *s = svc_new(8, NULL, 0.2, 0.8);

	(void)state;
	for (unsigned int id = 1; id <= 3; id++)
		assert_int_equal(lb_spl_inst_add(s, id, T0), 0);
	assert_int_equal(lb_spl_report(s, 1, 0.8, T0 + 10 * MS, T0 + 11 * MS),
			 0);
	assert_int_equal(lb_spl_decide(s, T0 + 12 * MS, &d), 0);
	assert_string_equal(d.decay, "age");
	assert_int_equal(d.nb_inst, 3);
	assert_int_equal(d.inst[0].id, 1);
	assert_false(d.inst[0].fresh);
	near(d.inst[0].spl, 0.8, 0, "108-1 load");
	assert_int_equal(d.inst[0].age_ns, 2 * MS);
	near(d.inst[0].decayed, 0.4, 1e-15, "108-1 modified");
	for (unsigned int k = 1; k < 3; k++) {
		assert_int_equal(d.inst[k].id, k + 1);
		assert_true(d.inst[k].fresh);
		near(d.inst[k].spl, 0, 0, "entered at 0");
		near(d.inst[k].decayed, 0, 0, "entered at 0, modified");
	}
	/* The seed stops here; the rules give 0.4 / 3 < 0.2. */
	near(d.total, 0.4 / 3, 1e-15, "total");
	assert_int_equal(d.action, LB_SPL_DECREMENT);
	lb_spl_svc_free(s);
}

/*
 * Table 5 -> [0072]-[0074] -> Table 6: modified 0.95, 1.1, 0.7 average to
 * 0.917 >= 0.8 -> increment; 108-4 enters at 0 and the average drops.
 */
static void
test_patent_table5_table6(void **state)
{
	static const struct {
		unsigned int id;
		double spl;
		uint64_t age_ns;
		double modified;
	} t5[] = {
		{1, 0.95, 1 * MS, 0.95},
		{2, 1.4, 1272727, 1.1},
		{3, 1.2, 1714286, 0.7},
	};
	const uint64_t now = T0 + 50 * MS;
	struct lb_spl_decision d;
	struct lb_spl_svc *s = svc_new(8, "age", 0.2, 0.8);

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(t5); i++) {
		assert_int_equal(lb_spl_inst_add(s, t5[i].id, T0), 0);
		assert_int_equal(lb_spl_report(s, t5[i].id, t5[i].spl,
					       now - t5[i].age_ns, now),
				 0);
	}
	assert_int_equal(lb_spl_decide(s, now, &d), 0);
	assert_int_equal(d.nb_inst, 3);
	for (size_t i = 0; i < ARRAY_SIZE(t5); i++) {
		assert_int_equal(d.inst[i].id, t5[i].id);
		near(d.inst[i].spl, t5[i].spl, 0, "load indicator");
		near(d.inst[i].decayed, t5[i].modified, 1e-6, "modified");
	}
	near(d.total, (0.95 + 1.1 + 0.7) / 3, 1e-6, "total");
	near(d.total, 0.917, 5e-4, "total as printed in [0072]");
	near(d.lower, 0.2, 0, "lower");
	near(d.upper, 0.8, 0, "upper");
	assert_int_equal(d.action, LB_SPL_INCREMENT);
	assert_int_equal(d.reason, LB_SPL_R_AT_OR_ABOVE_UPPER);

	/* Table 6: 108-4 enters at 0 and pulls the average down. */
	assert_int_equal(lb_spl_inst_add(s, 4, now), 0);
	assert_int_equal(lb_spl_decide(s, now, &d), 0);
	assert_int_equal(d.nb_inst, 4);
	assert_int_equal(d.inst[3].id, 4);
	assert_true(d.inst[3].fresh);
	near(d.inst[3].spl, 0, 0, "108-4 load");
	near(d.inst[3].decayed, 0, 0, "108-4 modified");
	near(d.total, (0.95 + 1.1 + 0.7) / 4, 1e-6, "total with 108-4");
	assert_int_equal(d.action, LB_SPL_NOOP);
	assert_int_equal(d.reason, LB_SPL_R_IN_BAND);
	lb_spl_svc_free(s);
}

/* [0072] directly on the modified values, without decay. */
static void
test_patent_average_nodecay(void **state)
{
	static const double v[] = {0.95, 1.1, 0.7};
	struct lb_spl_decision d;
	struct lb_spl_svc *s = svc_new(3, "none", 0.2, 0.8);

	(void)state;
	for (unsigned int i = 0; i < 3; i++) {
		assert_int_equal(lb_spl_inst_add(s, i, T0), 0);
		assert_int_equal(lb_spl_report(s, i, v[i], T0, T0), 0);
	}
	assert_int_equal(lb_spl_decide(s, T0 + 5 * SEC, &d), 0);
	near(d.total, 2.75 / 3, 1e-12, "average");
	assert_int_equal(d.action, LB_SPL_INCREMENT);
	lb_spl_svc_free(s);
}

/* Claim 6: total >= upper -> increment, total < lower -> decrement. */
#define INC LB_SPL_INCREMENT
#define DEC LB_SPL_DECREMENT
#define NOP LB_SPL_NOOP
#define UP LB_SPL_R_AT_OR_ABOVE_UPPER
#define LOW LB_SPL_R_BELOW_LOWER
#define BAND LB_SPL_R_IN_BAND

static void
test_threshold_boundaries(void **state)
{
	static const struct {
		const char *what;
		double lower, upper;
		unsigned int n;
		double v[3];
		enum lb_spl_action action;
		enum lb_spl_reason reason;
	} cases[] = {
		{"exactly upper", 0.2, 0.8, 1, {0.8}, INC, UP},
		{"just under upper", 0.2, 0.8, 1, {0.799999}, NOP, BAND},
		{"well above upper", 0.2, 0.8, 1, {5.0}, INC, UP},
		{"exactly lower", 0.2, 0.8, 1, {0.2}, NOP, BAND},
		{"just under lower", 0.2, 0.8, 1, {0.199999}, DEC, LOW},
		{"zero", 0.2, 0.8, 1, {0.0}, DEC, LOW},
		{"middle", 0.2, 0.8, 1, {0.5}, NOP, BAND},
		/* Both sums round below the threshold in binary; on paper they
		 * are exactly at it, so they "meet" it. */
		{"avg at upper", 0.2, 0.8, 2, {0.7, 0.9}, INC, UP},
		{"avg at lower", 0.2, 0.8, 2, {0.05, 0.35}, NOP, BAND},
		{"empty band: at", 0.5, 0.5, 1, {0.5}, INC, UP},
		{"empty band: under", 0.5, 0.5, 1, {0.4999}, DEC, LOW},
		{"lower 0 never decrements", 0.0, 0.8, 1, {0.0}, NOP, BAND},
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct lb_spl_svc *s =
			svc_new(3, "none", cases[i].lower, cases[i].upper);
		struct lb_spl_decision d;

		for (unsigned int k = 0; k < cases[i].n; k++) {
			assert_int_equal(lb_spl_inst_add(s, k, T0), 0);
			assert_int_equal(
				lb_spl_report(s, k, cases[i].v[k], T0, T0), 0);
		}
		assert_int_equal(lb_spl_decide(s, T0, &d), 0);
		if (d.action != cases[i].action ||
		    d.reason != cases[i].reason) {
			print_error("%s: total %.17g -> %s (%s)\n",
				    cases[i].what, d.total,
				    lb_spl_action_str(d.action),
				    lb_spl_reason_str(d.reason));
			fail();
		}
		lb_spl_svc_free(s);
	}
}

static void
test_empty_service(void **state)
{
	struct lb_spl_decision d;
	struct lb_spl_stats st;
	struct lb_spl_svc *s = svc_new(4, NULL, 0.2, 0.8);

	(void)state;
	assert_int_equal(lb_spl_inst_count(s), 0);
	assert_int_equal(lb_spl_decide(s, T0, &d), 0);
	assert_int_equal(d.nb_inst, 0);
	near(d.total, 0, 0, "empty total");
	assert_int_equal(d.action, LB_SPL_NOOP);
	assert_int_equal(d.reason, LB_SPL_R_NO_INSTANCES);

	/* Emptied again after use. */
	assert_int_equal(lb_spl_inst_add(s, 2, T0), 0);
	assert_int_equal(lb_spl_report(s, 2, 3.0, T0, T0), 0);
	assert_int_equal(lb_spl_decide(s, T0, &d), 0);
	assert_int_equal(d.action, LB_SPL_INCREMENT);
	assert_int_equal(lb_spl_inst_remove(s, 2), 0);
	assert_int_equal(lb_spl_decide(s, T0 + SEC, &d), 0);
	assert_int_equal(d.reason, LB_SPL_R_NO_INSTANCES);
	assert_int_equal(lb_spl_stats_get(s, &st), 0);
	assert_int_equal(st.decisions, 3);
	assert_int_equal(st.noops, 2);
	assert_int_equal(st.increments, 1);
	assert_int_equal(st.decrements, 0);
	lb_spl_svc_free(s);
}

static void
test_membership(void **state)
{
	struct lb_spl_decision d;
	struct lb_spl_svc *s = svc_new(4, "none", 0.2, 0.8);
	uint64_t gen;
	double v;

	(void)state;
	assert_int_equal(lb_spl_inst_add(s, 4, T0), -EINVAL);
	assert_int_equal(lb_spl_inst_add(NULL, 0, T0), -EINVAL);
	assert_int_equal(lb_spl_inst_remove(s, 4), -EINVAL);
	assert_int_equal(lb_spl_inst_remove(s, 0), -ENOENT);
	assert_int_equal(lb_spl_inst_add(s, 0, T0), 0);
	assert_int_equal(lb_spl_inst_add(s, 0, T0), -EEXIST);
	assert_int_equal(lb_spl_inst_add(s, 1, T0), 0);
	assert_int_equal(lb_spl_inst_add(s, 3, T0), 0);
	assert_int_equal(lb_spl_inst_count(s), 3);
	assert_int_equal(lb_spl_report(s, 0, 0.9, T0, T0), 0);
	assert_int_equal(lb_spl_report(s, 1, 0.3, T0, T0), 0);
	assert_int_equal(lb_spl_report(s, 3, 1.2, T0, T0), 0);
	assert_int_equal(lb_spl_inst_get(s, 3, &v, &gen), 0);
	near(v, 1.2, 0, "get");
	assert_int_equal(gen, T0);
	assert_int_equal(lb_spl_inst_get(s, 2, &v, &gen), -ENOENT);
	assert_int_equal(lb_spl_inst_get(s, 9, &v, &gen), -EINVAL);
	assert_int_equal(lb_spl_decide(s, T0, &d), 0);
	near(d.total, 0.8, 1e-12, "three");

	/* A removed instance leaves the average at once. */
	assert_int_equal(lb_spl_inst_remove(s, 3), 0);
	assert_int_equal(lb_spl_inst_count(s), 2);
	assert_int_equal(lb_spl_decide(s, T0, &d), 0);
	assert_int_equal(d.nb_inst, 2);
	near(d.total, 0.6, 1e-12, "removed");
	assert_int_equal(d.action, LB_SPL_NOOP);

	/* Re-added under the same id it enters at 0 again. */
	assert_int_equal(lb_spl_inst_add(s, 3, T0 + MS), 0);
	assert_int_equal(lb_spl_decide(s, T0 + MS, &d), 0);
	assert_int_equal(d.inst[2].id, 3);
	near(d.inst[2].spl, 0, 0, "re-added at 0");
	near(d.total, 0.4, 1e-12, "re-added");
	/* A late report of the old instance 3 (generated before the new
	 * one was added) is not attributed to the new one. */
	assert_int_equal(lb_spl_report(s, 3, 5.0, T0, T0 + 2 * MS), -ESTALE);
	assert_int_equal(lb_spl_inst_get(s, 3, &v, &gen), 0);
	near(v, 0, 0, "not overwritten");
	lb_spl_svc_free(s);
}

/* Bad reports are rejected, counted and never reach a decision. */
static void
test_bad_reports(void **state)
{
	enum ctr { BAD_VALUE, BAD_TIME, UNKNOWN, STALE };
	static const struct {
		const char *what;
		unsigned int id;
		double spl;
		int64_t gen_off; /* gen_ns relative to now */
		int rc;
		enum ctr ctr;
	} cases[] = {
		{"NaN", 0, NAN, 0, -EINVAL, BAD_VALUE},
		{"+inf", 0, INFINITY, 0, -EINVAL, BAD_VALUE},
		{"-inf", 0, -INFINITY, 0, -EINVAL, BAD_VALUE},
		{"negative", 0, -0.1, 0, -EINVAL, BAD_VALUE},
		{"tiny negative", 0, -1e-300, 0, -EINVAL, BAD_VALUE},
		{"above spl_max", 0, LB_SPL_MAX_DEFAULT * 1.001, 0, -EINVAL,
		 BAD_VALUE},
		{"absurd", 0, 1e300, 0, -EINVAL, BAD_VALUE},
		{"future by 1 ns", 0, 0.5, 1, -ERANGE, BAD_TIME},
		{"future by 1 s", 1, 0.5, (int64_t)SEC, -ERANGE, BAD_TIME},
		{"unknown id", 2, 0.5, 0, -ENOENT, UNKNOWN},
		{"id beyond capacity", 7, 0.5, 0, -ENOENT, UNKNOWN},
		{"older than kept", 1, 0.5, -(int64_t)(5 * MS), -ESTALE, STALE},
	};
	const uint64_t now = T0 + SEC;
	struct lb_spl_decision ref, d;
	struct lb_spl_stats st;
	struct lb_spl_svc *s = svc_new(4, "none", 0.2, 0.8);
	uint64_t want[4] = {0};

	(void)state;
	assert_int_equal(lb_spl_inst_add(s, 0, T0), 0);
	assert_int_equal(lb_spl_inst_add(s, 1, T0), 0);
	assert_int_equal(lb_spl_report(s, 0, 0.5, now - MS, now - MS), 0);
	assert_int_equal(lb_spl_report(s, 1, 0.7, now - MS, now - MS), 0);
	assert_int_equal(lb_spl_decide(s, now, &ref), 0);

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		uint64_t gen =
			(uint64_t)((int64_t)(now - MS) + cases[i].gen_off);
		int rc = lb_spl_report(s, cases[i].id, cases[i].spl, gen,
				       now - MS);

		if (rc != cases[i].rc) {
			print_error("%s: rc %d want %d\n", cases[i].what, rc,
				    cases[i].rc);
			fail();
		}
		want[cases[i].ctr]++;
		assert_int_equal(lb_spl_decide(s, now, &d), 0);
		near(d.total, ref.total, 0, cases[i].what);
		near(d.inst[0].spl, 0.5, 0, cases[i].what);
		near(d.inst[1].spl, 0.7, 0, cases[i].what);
	}
	assert_int_equal(lb_spl_stats_get(s, &st), 0);
	assert_int_equal(st.reports, 2 + ARRAY_SIZE(cases));
	assert_int_equal(st.accepted, 2);
	assert_int_equal(st.bad_value, want[BAD_VALUE]);
	assert_int_equal(st.bad_time, want[BAD_TIME]);
	assert_int_equal(st.unknown_inst, want[UNKNOWN]);
	assert_int_equal(st.stale, want[STALE]);

	/* Boundaries that are fine: spl_max itself, same-time, now. */
	assert_int_equal(lb_spl_report(s, 0, LB_SPL_MAX_DEFAULT, now, now), 0);
	assert_int_equal(lb_spl_report(s, 0, 0.3, now, now), 0);
	assert_int_equal(lb_spl_report(s, 0, -0.0, now, now), 0);
	assert_int_equal(lb_spl_decide(s, now, &d), 0);
	assert_false(signbit(d.inst[0].spl));

	/* Deciding at a time before a kept report: clock went backwards. */
	assert_int_equal(lb_spl_decide(s, now - 1, &d), -ERANGE);
	assert_int_equal(lb_spl_stats_get(s, &st), 0);
	assert_int_equal(st.bad_time, want[BAD_TIME] + 1);

	assert_int_equal(lb_spl_report(NULL, 0, 0.5, now, now), -EINVAL);
	assert_int_equal(lb_spl_decide(NULL, now, &d), -EINVAL);
	assert_int_equal(lb_spl_decide(s, now, NULL), -EINVAL);
	assert_int_equal(lb_spl_stats_get(s, NULL), -EINVAL);
	assert_int_equal(lb_spl_stats_get(NULL, &st), -EINVAL);
	lb_spl_svc_free(s);
}

static void
test_spl_max_configurable(void **state)
{
	struct lb_spl_conf c;
	struct lb_spl_svc *s;

	(void)state;
	lb_spl_conf_init(&c, 1);
	c.spl_max = 10.0;
	s = lb_spl_svc_create(&c);
	assert_non_null(s);
	assert_int_equal(lb_spl_inst_add(s, 0, T0), 0);
	assert_int_equal(lb_spl_report(s, 0, 10.0, T0, T0), 0);
	assert_int_equal(lb_spl_report(s, 0, 10.5, T0, T0), -EINVAL);
	lb_spl_svc_free(s);
}

/*
 * One instance of four reporting the largest accepted value: its decayed
 * value counts as 2 * upper, so it moves the mean by at most 0.4 and the
 * others' 0.3 keep the service in band; without the bound it alone would
 * ask for one more instance.
 */
static void
test_one_instance_share(void **state)
{
	static const double clamps[] = {LB_SPL_CLAMP_DEFAULT, 0.0};
	static const enum lb_spl_action want[] = {LB_SPL_NOOP,
						  LB_SPL_INCREMENT};

	(void)state;
	for (size_t k = 0; k < ARRAY_SIZE(clamps); k++) {
		struct lb_spl_decision d;
		struct lb_spl_stats st;
		struct lb_spl_conf c;
		struct lb_spl_svc *s;

		lb_spl_conf_init(&c, 4);
		c.decay = "none";
		c.clamp = clamps[k];
		s = lb_spl_svc_create(&c);
		assert_non_null(s);
		for (unsigned int i = 0; i < 4; i++) {
			assert_int_equal(lb_spl_inst_add(s, i, T0), 0);
			assert_int_equal(
				lb_spl_report(s, i,
					      i == 2 ? LB_SPL_MAX_DEFAULT : 0.3,
					      T0, T0),
				0);
		}
		assert_int_equal(lb_spl_decide(s, T0 + 1, &d), 0);
		assert_int_equal(d.action, want[k]);
		assert_int_equal(lb_spl_stats_get(s, &st), 0);
		if (k == 0) {
			near(d.total, (0.9 + 1.6) / 4, 1e-12, "bounded mean");
			assert_true(d.inst[2].clamped);
			assert_false(d.inst[0].clamped);
			near(d.inst[2].decayed, 1.6, 1e-12, "bounded value");
			assert_int_equal(st.clamped, 1);
		} else {
			near(d.total, (0.9 + 1000.0) / 4, 1e-9, "plain mean");
			assert_int_equal(st.clamped, 0);
		}
		lb_spl_svc_free(s);
	}
}

static void
test_bad_config(void **state)
{
	enum field { CAP, LOWER, UPPER, MAX, CLAMP, DECAY, HALF, SPAN };
	static const struct {
		const char *what;
		enum field f;
		double x;
		const char *decay;
		int err;
	} cases[] = {
		{"capacity 0", CAP, 0, NULL, EINVAL},
		{"capacity too big", CAP, LB_SPL_INST_MAX + 1, NULL, EINVAL},
		{"lower NaN", LOWER, NAN, NULL, EINVAL},
		{"lower negative", LOWER, -0.1, NULL, EINVAL},
		{"upper inf", UPPER, INFINITY, NULL, EINVAL},
		{"lower above upper", LOWER, 0.9, NULL, EINVAL},
		{"spl_max 0", MAX, 0, NULL, EINVAL},
		{"spl_max NaN", MAX, NAN, NULL, EINVAL},
		{"clamp negative", CLAMP, -1, NULL, EINVAL},
		{"clamp inf", CLAMP, INFINITY, NULL, EINVAL},
		{"unknown decay", DECAY, 0, "exp", ENOENT},
		{"NULL decay", DECAY, 0, NULL, EINVAL},
		{"halflife 0", HALF, 0, "halflife", EINVAL},
		{"normalized span 0", SPAN, 0, "normalized", EINVAL},
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct lb_spl_conf c;
		struct lb_spl_svc *s;

		lb_spl_conf_init(&c, 4);
		switch (cases[i].f) {
		case CAP:
			c.capacity = (unsigned int)cases[i].x;
			break;
		case LOWER:
			c.lower = cases[i].x;
			break;
		case UPPER:
			c.upper = cases[i].x;
			break;
		case MAX:
			c.spl_max = cases[i].x;
			break;
		case CLAMP:
			c.clamp = cases[i].x;
			break;
		case DECAY:
			c.decay = cases[i].decay;
			break;
		case HALF:
			c.decay = cases[i].decay;
			c.decay_params.halflife_ns = 0;
			break;
		case SPAN:
			c.decay = cases[i].decay;
			c.decay_params.norm_span_ns = 0;
			break;
		}
		errno = 0;
		s = lb_spl_svc_create(&c);
		if (s != NULL || errno != cases[i].err) {
			print_error("%s: %p errno %d\n", cases[i].what,
				    (void *)s, errno);
			fail();
		}
	}
	errno = 0;
	assert_null(lb_spl_svc_create(NULL));
	assert_int_equal(errno, EINVAL);
	/* Largest capacity is fine; the "none" decay ignores params. */
	{
		struct lb_spl_conf c;
		struct lb_spl_svc *s;

		lb_spl_conf_init(&c, LB_SPL_INST_MAX);
		c.decay = "none";
		c.decay_params.halflife_ns = 0;
		s = lb_spl_svc_create(&c);
		assert_non_null(s);
		assert_int_equal(lb_spl_inst_add(s, LB_SPL_INST_MAX - 1, T0),
				 0);
		lb_spl_svc_free(s);
	}
	lb_spl_svc_free(NULL);
}

static void
test_conf_defaults(void **state)
{
	struct lb_spl_conf c;

	(void)state;
	lb_spl_conf_init(&c, 3);
	assert_int_equal(c.capacity, 3);
	near(c.lower, 0.2, 0, "lower [0073]");
	near(c.upper, 0.8, 0, "upper [0074]");
	assert_string_equal(c.decay, "age");
	assert_true(c.decay_params.halflife_ns > 0);
	assert_true(c.decay_params.norm_span_ns > 0);
	lb_spl_conf_init(NULL, 3); /* no crash */
}

static void
test_reconfigure(void **state)
{
	struct lb_spl_decay_params p = {.halflife_ns = 2 * MS,
					.norm_span_ns = SEC};
	struct lb_spl_decision d;
	struct lb_spl_svc *s = svc_new(2, NULL, 0.2, 0.8);

	(void)state;
	assert_int_equal(lb_spl_inst_add(s, 0, T0), 0);
	assert_int_equal(lb_spl_report(s, 0, 0.8, T0, T0), 0);
	assert_int_equal(lb_spl_decide(s, T0 + 4 * MS, &d), 0);
	near(d.total, 0.2, 1e-15, "age: 0.8 / 4");
	assert_int_equal(d.action, LB_SPL_NOOP);

	assert_int_equal(lb_spl_svc_set_decay(s, "halflife", &p), 0);
	assert_int_equal(lb_spl_decide(s, T0 + 4 * MS, &d), 0);
	assert_string_equal(d.decay, "halflife");
	near(d.total, 0.2, 1e-15, "halflife 2 ms: 0.8 / 4");

	/* Refused changes leave the old decay in place. */
	assert_int_equal(lb_spl_svc_set_decay(s, "nope", &p), -ENOENT);
	p.halflife_ns = 0;
	assert_int_equal(lb_spl_svc_set_decay(s, "halflife", &p), -EINVAL);
	assert_int_equal(lb_spl_svc_set_decay(s, NULL, &p), -EINVAL);
	assert_int_equal(lb_spl_svc_set_decay(s, "none", NULL), -EINVAL);
	assert_int_equal(lb_spl_svc_set_decay(NULL, "none", &p), -EINVAL);
	assert_int_equal(lb_spl_decide(s, T0 + 4 * MS, &d), 0);
	assert_string_equal(d.decay, "halflife");
	near(d.total, 0.2, 1e-15, "unchanged");

	assert_int_equal(lb_spl_svc_set_thresholds(s, 0.1, 0.15), 0);
	assert_int_equal(lb_spl_decide(s, T0 + 4 * MS, &d), 0);
	assert_int_equal(d.action, LB_SPL_INCREMENT);
	near(d.upper, 0.15, 0, "new upper");
	assert_int_equal(lb_spl_svc_set_thresholds(s, 0.5, 0.4), -EINVAL);
	assert_int_equal(lb_spl_svc_set_thresholds(s, NAN, 0.4), -EINVAL);
	assert_int_equal(lb_spl_svc_set_thresholds(NULL, 0.1, 0.4), -EINVAL);
	assert_int_equal(lb_spl_decide(s, T0 + 4 * MS, &d), 0);
	near(d.lower, 0.1, 0, "lower unchanged");
	near(d.upper, 0.15, 0, "upper unchanged");
	lb_spl_svc_free(s);
}

static void
test_strings(void **state)
{
	(void)state;
	assert_string_equal(lb_spl_action_str(LB_SPL_NOOP), "noop");
	assert_string_equal(lb_spl_action_str(LB_SPL_INCREMENT), "increment");
	assert_string_equal(lb_spl_action_str(LB_SPL_DECREMENT), "decrement");
	assert_string_equal(lb_spl_action_str((enum lb_spl_action)99), "?");
	assert_string_equal(lb_spl_reason_str(LB_SPL_R_NO_INSTANCES),
			    "no instances");
	assert_string_equal(lb_spl_reason_str(LB_SPL_R_AT_OR_ABOVE_UPPER),
			    "total >= upper");
	assert_string_equal(lb_spl_reason_str(LB_SPL_R_BELOW_LOWER),
			    "total < lower");
	assert_string_equal(lb_spl_reason_str(LB_SPL_R_IN_BAND),
			    "lower <= total < upper");
	assert_string_equal(lb_spl_reason_str((enum lb_spl_reason)99), "?");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ratio),
		cmocka_unit_test(test_ratio_ns),
		cmocka_unit_test(test_decay_table),
		cmocka_unit_test(test_decay_lookup),
		cmocka_unit_test(test_decay_register),
		cmocka_unit_test(test_patent_table4),
		cmocka_unit_test(test_patent_table5_table6),
		cmocka_unit_test(test_patent_average_nodecay),
		cmocka_unit_test(test_threshold_boundaries),
		cmocka_unit_test(test_empty_service),
		cmocka_unit_test(test_membership),
		cmocka_unit_test(test_bad_reports),
		cmocka_unit_test(test_spl_max_configurable),
		cmocka_unit_test(test_one_instance_share),
		cmocka_unit_test(test_bad_config),
		cmocka_unit_test(test_conf_defaults),
		cmocka_unit_test(test_reconfigure),
		cmocka_unit_test(test_strings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
