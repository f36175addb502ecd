/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests of the error-adaptive scheduler against the adaptive-request-
 * dispatch paper: equation (6) weights worked by hand, landing frequencies,
 * the harmonic decay of equations (9)-(11) (figures 3 and 4), Algorithm 2's
 * round-robin retries and error resets, and bad input.
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

#include "lb/adaptive.h"
#include "lb/rng.h"

#define MAXN 16
#define ALL 0xffffffffu

static struct lb_adaptive *
make(uint32_t n, const uint32_t *err, uint32_t elig_mask,
     const struct lb_adaptive_conf *conf)
{
	struct lb_adaptive *ad = lb_adaptive_create(n, conf);

	assert_non_null(ad);
	for (uint32_t i = 0; i < n; i++) {
		if (err != NULL)
			assert_int_equal(lb_adaptive_set_errors(ad, i, err[i]),
					 0);
		assert_int_equal(
			lb_adaptive_set_eligible(ad, i, (elig_mask >> i) & 1),
			0);
	}
	return ad;
}

static uint32_t
err_of(struct lb_adaptive *ad, uint32_t be)
{
	struct lb_adaptive_view v;

	assert_int_equal(lb_adaptive_view(ad, be, &v), 0);
	return v.errors;
}

/*
 * An lb_rng whose j-th output makes lb_rng_below(rng, total) return
 * exactly j (mod total): the midpoint of the j-th of total equal slices
 * of 2^64, which also never falls in the rejection zone.
 */
struct enum_rng {
	uint64_t j;
	uint64_t total;
	uint64_t left; /* draws the test expects; one more is a failure */
};

static uint64_t
enum_next(void *ctx)
{
	struct enum_rng *e = ctx;
	uint64_t j = e->j++ % e->total;

	/* A draw out of step with the weights would otherwise loop. */
	if (e->left == 0)
		fail_msg("unexpected random draw");
	e->left--;

	return (uint64_t)((((unsigned __int128)(2 * j + 1)) << 63) / e->total);
}

/* ---- effective error ------------------------------------------------ */

static const struct {
	uint32_t e;
	uint64_t eff;
} eff_cases[] = {
	/* floor((1+e)^1.5) by hand: 2^1.5 = 2.83, 3^1.5 = 5.20, ... */
	{0, 1},
	{1, 2},
	{2, 5},
	{3, 8},
	{4, 11},
	{5, 14},
	{6, 18},
	{7, 22},
	{8, 27},
	{9, 31},
	{10, 36},
	{50, 364},
	{99, 1000},
	{65535, 16777216},
	{LB_ADAPTIVE_ERR_CAP_MAX, 4294964980ULL},
};

static void
test_eff_error_table(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(eff_cases) / sizeof(eff_cases[0]); k++) {
		uint64_t eff = 0;

		assert_int_equal(lb_adaptive_eff_error(eff_cases[k].e, &eff),
				 0);
		assert_int_equal(eff, eff_cases[k].eff);
	}
}

static void
check_isqrt_property(uint32_t e)
{
	unsigned __int128 b = (unsigned __int128)e + 1, v = b * b * b;
	uint64_t eff = 0;

	assert_int_equal(lb_adaptive_eff_error(e, &eff), 0);
	/* E = floor(sqrt(v)) iff E^2 <= v < (E+1)^2, checked in 128 bits. */
	assert_true((unsigned __int128)eff * eff <= v);
	assert_true((unsigned __int128)(eff + 1) * (eff + 1) > v);
}

static void
test_eff_error_exact(void **state)
{
	(void)state;
	for (uint32_t e = 0; e < 200000; e++)
		check_isqrt_property(e);
	for (uint32_t e = 200000; e < LB_ADAPTIVE_ERR_CAP_MAX; e += 997)
		check_isqrt_property(e);
	for (uint32_t e = LB_ADAPTIVE_ERR_CAP_MAX - 1000;
	     e <= LB_ADAPTIVE_ERR_CAP_MAX; e++)
		check_isqrt_property(e);
}

/* ---- weights of equation (6), worked by hand ------------------------ */

struct wcase {
	const char *name;
	uint32_t n;
	uint32_t err[MAXN];
	uint32_t elig; /* bit i: backend i eligible */
	uint64_t w[MAXN];
	uint64_t sum;
};

static const struct wcase wcases[] = {
	/* E_m = 1: uniform (Algorithm 1, "Randomize(1, n)"). */
	{"no errors", 3, {0, 0, 0}, ALL, {1, 1, 1}, 3},
	/* E_m = 4^1.5 = 8, w = 8/4 = 2 each: equal LP (figure 10). */
	{"all equal e=3", 3, {3, 3, 3}, ALL, {2, 2, 2}, 6},
	/* E_m = 2, w = ceil(2/2) = 1. */
	{"all equal e=1", 3, {1, 1, 1}, ALL, {1, 1, 1}, 3},
	/* E_m = floor(2.83) = 2: healthy 2/1, errored ceil(2/2) = 1. */
	{"one errored e=1", 3, {0, 1, 0}, ALL, {2, 1, 2}, 5},
	/* E_m = floor(5.20) = 5: ceil(5/3) = 2. */
	{"one errored e=2", 3, {0, 2, 0}, ALL, {5, 2, 5}, 12},
	/* E_m = floor(11.18) = 11: ceil(11/5) = 3. */
	{"one errored e=4", 3, {0, 4, 0}, ALL, {11, 3, 11}, 25},
	/* E_m = floor(8^1.5 = 22.63) = 22: 22, 11, ceil(5.5), ceil(2.75). */
	{"mixed 0/1/3/7", 4, {0, 1, 3, 7}, ALL, {22, 11, 6, 3}, 42},
	/* No healthy node: E_m = 5, ceil(5/2) = 3, ceil(5/3) = 2. */
	{"all errored 1/2", 2, {1, 2}, ALL, {3, 2}, 5},
	/* E_m = 100^1.5 = 1000 exactly. */
	{"e=99", 2, {99, 0}, ALL, {10, 1000}, 1010},
	/* Default cap: E_m = 65536^1.5 = 2^24, 2^24 / 2^16 = 256. */
	{"at default cap", 2, {0, 65535}, ALL, {16777216, 256}, 16777472},
	/* The drained backend holds the largest error but is not in E_m. */
	{"drained max", 3, {0, 5, 0}, 0x5, {1, 0, 1}, 2},
	/* E_m over {2, 0} = 3^1.5 -> 5: ceil(5/3) = 2, 0, 5. */
	{"drained other", 3, {2, 5, 0}, 0x5, {2, 0, 5}, 7},
	{"all drained", 2, {0, 0}, 0x0, {0, 0}, 0},
	/* 8 nodes, one at e=3: E_m = 8, ceil(8/4) = 2. */
	{"8 nodes one e=3",
	 8,
	 {0, 0, 0, 0, 0, 0, 0, 3},
	 ALL,
	 {8, 8, 8, 8, 8, 8, 8, 2},
	 58},
};

#define NWCASES (sizeof(wcases) / sizeof(wcases[0]))

static void
test_weights_table(void **state)
{
	(void)state;
	for (size_t k = 0; k < NWCASES; k++) {
		const struct wcase *c = &wcases[k];
		struct lb_adaptive *ad = make(c->n, c->err, c->elig, NULL);
		bool elig[MAXN];
		uint64_t w[MAXN];

		print_message("case: %s\n", c->name);
		for (uint32_t i = 0; i < c->n; i++)
			elig[i] = (c->elig >> i) & 1;
		assert_int_equal(lb_adaptive_weights(c->err, elig, c->n, w), 0);
		for (uint32_t i = 0; i < c->n; i++) {
			struct lb_adaptive_view v;
			double lp = c->sum ? (double)c->w[i] / c->sum : 0.0;

			assert_int_equal(w[i], c->w[i]);
			assert_int_equal(lb_adaptive_view(ad, i, &v), 0);
			assert_int_equal(v.errors, c->err[i]);
			assert_int_equal(v.weight, c->w[i]);
			assert_int_equal(v.weight_sum, c->sum);
			assert_true(fabs(v.lp - lp) < 1e-15);
		}
		lb_adaptive_free(ad);
	}
}

/* Each pick of an enumerating draw lands exactly w_i times on backend i. */
static void
test_pick_exact_enumeration(void **state)
{
	(void)state;
	for (size_t k = 0; k < NWCASES; k++) {
		const struct wcase *c = &wcases[k];
		struct lb_adaptive *ad;
		struct enum_rng er = {0, c->sum, c->sum};
		struct lb_rng rng = {enum_next, &er};
		uint64_t cnt[MAXN] = {0};

		if (c->sum == 0 || c->sum > 100000)
			continue;
		print_message("case: %s\n", c->name);
		ad = make(c->n, c->err, c->elig, NULL);
		for (uint64_t d = 0; d < c->sum; d++) {
			uint32_t be = LB_ADAPTIVE_NONE;

			assert_int_equal(lb_adaptive_pick(ad, &rng, &be), 0);
			assert_true(be < c->n);
			cnt[be]++;
		}
		for (uint32_t i = 0; i < c->n; i++)
			assert_int_equal(cnt[i], c->w[i]);
		lb_adaptive_free(ad);
	}
}

/* ---- landing frequencies against equation (6) ----------------------- */

static const struct {
	const char *name;
	uint32_t n;
	uint32_t err[MAXN];
	uint32_t elig;
} fcases[] = {
	{"uniform 3", 3, {0}, ALL},
	{"uniform 5, one drained", 5, {0}, 0x1b},
	{"one errored", 3, {0, 1, 0}, ALL},
	{"mixed", 4, {0, 1, 3, 7}, ALL},
	{"1 vs 100", 2, {99, 0}, ALL},
	{"drained other", 3, {2, 5, 0}, 0x5},
	{"16 mixed",
	 16,
	 {0, 0, 3, 0, 7, 0, 0, 1, 0, 0, 0, 20, 0, 0, 0, 2},
	 0xfdff},
};

static void
test_landing_frequencies(void **state)
{
	const uint64_t picks = 100000;

	(void)state;
	for (size_t k = 0; k < sizeof(fcases) / sizeof(fcases[0]); k++) {
		struct lb_adaptive *ad =
			make(fcases[k].n, fcases[k].err, fcases[k].elig, NULL);
		struct lb_xoshiro x;
		struct lb_rng rng = lb_rng_xoshiro(&x);
		uint64_t cnt[MAXN] = {0};

		print_message("case: %s\n", fcases[k].name);
		lb_xoshiro_seed(&x, 0x5eed0000 + k);
		for (uint64_t d = 0; d < picks; d++) {
			uint32_t be = LB_ADAPTIVE_NONE;

			assert_int_equal(lb_adaptive_pick(ad, &rng, &be), 0);
			assert_true(be < fcases[k].n);
			cnt[be]++;
		}
		for (uint32_t i = 0; i < fcases[k].n; i++) {
			struct lb_adaptive_view v;
			double p, mean, sigma;

			assert_int_equal(lb_adaptive_view(ad, i, &v), 0);
			p = v.lp;
			if (!v.eligible) {
				assert_int_equal(cnt[i], 0);
				continue;
			}
			/*
			 * Each count is Binomial(picks, p). 5 sigma leaves a
			 * chance of about 6e-7 per backend that a correct
			 * scheduler fails with some other seed, while an
			 * off-by-one in a prefix boundary moves the weight-1
			 * backends by 20 sigma or more (e.g. 1 vs 100: p
			 * doubles from 0.0099).
			 */
			mean = picks * p;
			sigma = sqrt(picks * p * (1 - p));
			assert_true(fabs((double)cnt[i] - mean) <= 5 * sigma);
		}
		lb_adaptive_free(ad);
	}
}

/* ---- harmonic decay of figures 3 and 4 (equations 9-11) ------------- */

/* Reference E by exhaustive search: independent of the module's isqrt. */
static uint64_t
ref_eff(uint32_t e)
{
	uint64_t v = (uint64_t)(e + 1) * (e + 1) * (e + 1), k = 0;

	while ((k + 1) * (k + 1) <= v)
		k++;
	return k;
}

struct hpoint {
	uint32_t e;
	uint64_t w, sum;
};

static const struct {
	uint32_t n;
	struct hpoint pts[8];
	size_t npts;
} hcases[] = {
	/*
	 * 3 nodes, node 1 failing, h = 2. e = 0: 1/3; e = 1: 1/5 and
	 * e = 3: 2/18 = 1/9, e = 8: 3/57 = 1/19 equal eq. (9) exactly
	 * ((1+e) a square); in between ceil() lifts LP above it, e.g.
	 * e = 2: 2/12 = 1/6 vs 1/7, e = 4: 3/25 vs 1/11.
	 */
	{3,
	 {{0, 1, 3},
	  {1, 1, 5},
	  {2, 2, 12},
	  {3, 2, 18},
	  {4, 3, 25},
	  {8, 3, 57},
	  {9, 4, 66}},
	 7},
	/* 8 nodes, h = 7: 1/8, 1/15, 1/29, 3/192 = 1/64. */
	{8, {{0, 1, 8}, {1, 1, 15}, {3, 2, 58}, {8, 3, 192}}, 4},
};

static void
test_harmonic_decay(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(hcases) / sizeof(hcases[0]); k++) {
		uint32_t n = hcases[k].n, bad = 1;
		double h = n - 1, prev_upper = 1.0;
		struct lb_adaptive *ad = lb_adaptive_create(n, NULL);
		size_t next_pt = 0;

		assert_non_null(ad);
		for (uint32_t e = 0; e <= 50; e++) {
			struct lb_adaptive_view v;
			uint64_t em = ref_eff(e), w = (em + e) / (e + 1);
			double lp_ref = (double)w / (h * em + w);
			double approx = 1.0 / ((e + 1) * h + 1);
			double wr = (double)em / (e + 1);
			double upper = (wr + 1) / (h * em + wr + 1);

			if (e > 0)
				assert_int_equal(lb_adaptive_fail(ad, bad), 0);
			assert_int_equal(lb_adaptive_view(ad, bad, &v), 0);
			assert_int_equal(v.errors, e);
			/* Exact equation (6). */
			assert_int_equal(v.weight, w);
			assert_int_equal(v.weight_sum, (n - 1) * em + w);
			assert_true(fabs(v.lp - lp_ref) < 1e-15);
			if (next_pt < hcases[k].npts &&
			    hcases[k].pts[next_pt].e == e) {
				assert_int_equal(v.weight,
						 hcases[k].pts[next_pt].w);
				assert_int_equal(v.weight_sum,
						 hcases[k].pts[next_pt].sum);
				next_pt++;
			}
			/*
			 * Equation (9) with r = e + 1 landings (LP^1 is the
			 * landing with e = 0): 1/(r h + 1) drops the ceil of
			 * eq. (6), so the exact LP lies between it and the LP
			 * with w_i one larger, and their ratio stays within
			 * 1/w_i < 1/(sqrt(1+e) - 1/(1+e)).
			 */
			assert_true(v.lp >= approx - 1e-15);
			assert_true(v.lp < upper);
			assert_true(v.lp / approx - 1 <=
				    1 / (sqrt(e + 1.0) - 1.0 / (e + 1)) +
					    1e-12);
			/*
			 * Only the envelope decays monotonically: ceil() can
			 * lift the exact value between squares (e = 3: 1/9,
			 * e = 4: 3/25), but never above the previous upper
			 * bound.
			 */
			assert_true(v.lp < prev_upper);
			prev_upper = upper;
		}
		assert_int_equal(next_pt, hcases[k].npts);
		/* The healthy nodes share the rest equally. */
		for (uint32_t i = 0; i < n; i++) {
			struct lb_adaptive_view v;

			if (i == bad)
				continue;
			assert_int_equal(lb_adaptive_view(ad, i, &v), 0);
			assert_int_equal(v.weight, ref_eff(50));
		}
		lb_adaptive_free(ad);
	}
}

/* ---- cap ------------------------------------------------------------ */

static void
test_cap(void **state)
{
	struct lb_adaptive_conf conf = {.err_cap = 10};
	struct lb_adaptive *ad = lb_adaptive_create(3, &conf);
	struct lb_adaptive_stats st;
	struct lb_adaptive_view v;
	struct lb_xoshiro x;
	struct lb_rng rng = lb_rng_xoshiro(&x);
	uint32_t be;

	(void)state;
	lb_xoshiro_seed(&x, 7);
	assert_non_null(ad);
	for (int i = 0; i < 20; i++)
		assert_int_equal(lb_adaptive_fail(ad, 1), 0);
	assert_int_equal(lb_adaptive_view(ad, 1, &v), 0);
	/* Saturated at 10: E_m = floor(11^1.5 = 36.48) = 36, ceil(36/11). */
	assert_int_equal(v.errors, 10);
	assert_int_equal(v.max_eff, 36);
	assert_int_equal(v.weight, 4);
	assert_int_equal(v.weight_sum, 76);
	assert_int_equal(lb_adaptive_set_errors(ad, 0, 11), -ERANGE);
	assert_int_equal(lb_adaptive_set_errors(ad, 0, 10), 0);
	/* Failures at the cap change nothing: no rebuild for them. */
	assert_int_equal(lb_adaptive_pick(ad, &rng, &be), 0);
	assert_int_equal(lb_adaptive_stats_get(ad, &st), 0);
	for (int i = 0; i < 100; i++) {
		assert_int_equal(lb_adaptive_fail(ad, 1), 0);
		assert_int_equal(lb_adaptive_pick(ad, &rng, &be), 0);
	}
	{
		struct lb_adaptive_stats st2;

		assert_int_equal(lb_adaptive_stats_get(ad, &st2), 0);
		assert_int_equal(st2.recomputes, st.recomputes);
		assert_int_equal(st2.fails, st.fails + 100);
	}
	lb_adaptive_free(ad);

	/* Default cap and the largest accepted one. */
	ad = lb_adaptive_create(2, NULL);
	assert_non_null(ad);
	assert_int_equal(
		lb_adaptive_set_errors(ad, 1, LB_ADAPTIVE_ERR_CAP_DEFAULT), 0);
	assert_int_equal(lb_adaptive_fail(ad, 1), 0);
	assert_int_equal(err_of(ad, 1), LB_ADAPTIVE_ERR_CAP_DEFAULT);
	assert_int_equal(
		lb_adaptive_set_errors(ad, 1, LB_ADAPTIVE_ERR_CAP_DEFAULT + 1),
		-ERANGE);
	lb_adaptive_free(ad);

	conf.err_cap = LB_ADAPTIVE_ERR_CAP_MAX;
	ad = lb_adaptive_create(2, &conf);
	assert_non_null(ad);
	assert_int_equal(lb_adaptive_set_errors(ad, 1, LB_ADAPTIVE_ERR_CAP_MAX),
			 0);
	assert_int_equal(lb_adaptive_view(ad, 0, &v), 0);
	assert_int_equal(v.weight, 4294964980ULL);
	assert_int_equal(lb_adaptive_view(ad, 1, &v), 0);
	/* ceil(4294964980 / 2642245) = 1626 (1625.45...). */
	assert_int_equal(v.weight, 1626);
	lb_adaptive_free(ad);
}

/* ---- success resets the error count (Algorithm 2) ------------------- */

static const struct {
	enum lb_adaptive_on_ok mode;
	uint32_t before, after;
} okcases[] = {
	{LB_ADAPTIVE_OK_RESET, 5, 0},	  {LB_ADAPTIVE_OK_RESET, 0, 0},
	{LB_ADAPTIVE_OK_RESET, 65535, 0}, {LB_ADAPTIVE_OK_HALVE, 5, 2},
	{LB_ADAPTIVE_OK_HALVE, 1, 0},	  {LB_ADAPTIVE_OK_HALVE, 65535, 32767},
};

static void
test_ok_resets(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(okcases) / sizeof(okcases[0]); k++) {
		struct lb_adaptive_conf conf = {.on_ok = okcases[k].mode};
		struct lb_adaptive *ad = lb_adaptive_create(3, &conf);

		assert_non_null(ad);
		assert_int_equal(
			lb_adaptive_set_errors(ad, 2, okcases[k].before), 0);
		assert_int_equal(lb_adaptive_ok(ad, 2), 0);
		assert_int_equal(err_of(ad, 2), okcases[k].after);
		lb_adaptive_free(ad);
	}
}

/* After a reset the paper's cluster is back to equal landing (fig. 12). */
static void
test_ok_restores_uniform(void **state)
{
	struct lb_adaptive *ad = lb_adaptive_create(3, NULL);
	struct lb_adaptive_view v;

	(void)state;
	assert_non_null(ad);
	for (int i = 0; i < 30; i++)
		assert_int_equal(lb_adaptive_fail(ad, 0), 0);
	assert_int_equal(lb_adaptive_view(ad, 0, &v), 0);
	assert_true(v.lp < 0.02);
	assert_int_equal(lb_adaptive_ok(ad, 0), 0);
	for (uint32_t i = 0; i < 3; i++) {
		assert_int_equal(lb_adaptive_view(ad, i, &v), 0);
		assert_int_equal(v.errors, 0);
		assert_int_equal(v.weight, 1);
		assert_int_equal(v.weight_sum, 3);
	}
	lb_adaptive_free(ad);
}

/* ---- round-robin for trials 2..n ------------------------------------ */

static const struct {
	uint32_t n, elig, prev;
	int rc;
	uint32_t next;
} nextcases[] = {
	{4, ALL, 0, 0, 1},	 {4, ALL, 3, 0, 0},  /* wraps */
	{4, 0xb, 1, 0, 3},			     /* 2 drained: skipped */
	{4, 0xb, 3, 0, 0},	 {5, 0x14, 4, 0, 2}, /* wraps and skips 0, 1 */
	{4, 0x2, 1, -ENOENT, 0}, /* only prev itself is eligible */
	{4, 0x2, 3, 0, 1},	 /* prev may be drained itself */
	{4, 0x0, 2, -ENOENT, 0}, {1, ALL, 0, -ENOENT, 0},
};

static void
test_next_table(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(nextcases) / sizeof(nextcases[0]); k++) {
		struct lb_adaptive *ad =
			make(nextcases[k].n, NULL, nextcases[k].elig, NULL);
		uint32_t nx = LB_ADAPTIVE_NONE;

		assert_int_equal(lb_adaptive_next(ad, nextcases[k].prev, &nx),
				 nextcases[k].rc);
		if (nextcases[k].rc == 0)
			assert_int_equal(nx, nextcases[k].next);
		lb_adaptive_free(ad);
	}
}

/* Outcomes: 'f' fail, 's' success. seq: backends of trials 1, 2, ... */
static const struct {
	const char *name;
	uint32_t n, elig, first, max_trials;
	const char *outcomes;
	uint32_t seq[MAXN];
	int last_rc; /* of the last trial_fail, or 0 after a success */
	uint32_t err_after[MAXN];
} trialcases[] = {
	{"all fail, wrap", 3, ALL, 1, 0, "fff", {1, 2, 0}, -ENOENT, {1, 1, 1}},
	{"second succeeds", 3, ALL, 2, 0, "fs", {2, 0}, 0, {0, 0, 1}},
	{"first succeeds", 3, ALL, 0, 0, "s", {0}, 0, {0, 0, 0}},
	{"skip drained",
	 5,
	 0xd,
	 3,
	 0,
	 "fff",
	 {3, 0, 2},
	 -ENOENT,
	 {1, 0, 1, 1, 0}},
	{"max_trials 2", 4, ALL, 3, 2, "ff", {3, 0}, -ENOENT, {1, 0, 0, 1}},
	{"max_trials 1", 4, ALL, 2, 1, "f", {2}, -ENOENT, {0, 0, 1, 0}},
	{"single backend", 1, ALL, 0, 0, "f", {0}, -ENOENT, {1}},
};

static void
test_trial_sequence(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(trialcases) / sizeof(trialcases[0]);
	     k++) {
		struct lb_adaptive_conf conf = {
			.max_trials = trialcases[k].max_trials,
		};
		uint32_t n = trialcases[k].n, rank = 0, n_elig = 0;
		struct lb_adaptive *ad =
			make(n, NULL, trialcases[k].elig, &conf);
		struct lb_adaptive_stats st;
		struct lb_adaptive_trial t;
		struct enum_rng er;
		struct lb_rng rng = {enum_next, &er};
		const char *o = trialcases[k].outcomes;
		size_t nfail = 0, i;
		int rc = 0;

		print_message("case: %s\n", trialcases[k].name);
		/* Errors are all 0: trial 1 is uniform over the eligible. */
		for (uint32_t b = 0; b < n; b++) {
			bool on = (trialcases[k].elig >> b) & 1;

			rank += on && b < trialcases[k].first;
			n_elig += on;
		}
		er.j = rank;
		er.total = n_elig;
		er.left = 1;
		assert_int_equal(lb_adaptive_trial_begin(ad, &rng, &t), 0);
		for (i = 0; o[i] != '\0'; i++) {
			assert_int_equal(t.trial, i + 1);
			assert_int_equal(t.be, trialcases[k].seq[i]);
			if (o[i] == 's') {
				rc = lb_adaptive_trial_ok(ad, &t);
				assert_int_equal(rc, 0);
				break;
			}
			rc = lb_adaptive_trial_fail(ad, &t);
			nfail++;
			if (o[i + 1] != '\0')
				assert_int_equal(rc, 0);
		}
		assert_int_equal(rc, trialcases[k].last_rc);
		assert_int_equal(t.be, LB_ADAPTIVE_NONE);
		/* A finished trial takes no more reports. */
		assert_int_equal(lb_adaptive_trial_fail(ad, &t), -EINVAL);
		assert_int_equal(lb_adaptive_trial_ok(ad, &t), -EINVAL);
		for (uint32_t b = 0; b < n; b++)
			assert_int_equal(err_of(ad, b),
					 trialcases[k].err_after[b]);
		assert_int_equal(lb_adaptive_stats_get(ad, &st), 0);
		assert_int_equal(st.picks, 1);
		assert_int_equal(st.fails, nfail);
		assert_int_equal(st.oks, o[i] == 's');
		assert_int_equal(st.exhausted, rc == -ENOENT);
		assert_int_equal(st.retries, strlen(o) - 1);
		lb_adaptive_free(ad);
	}
}

/* Eligibility changing mid-request: each backend is still tried once. */
static void
test_trial_eligibility_change(void **state)
{
	struct lb_adaptive *ad = lb_adaptive_create(4, NULL);
	struct enum_rng er = {0, 4, 1};
	struct lb_rng rng = {enum_next, &er};
	struct lb_adaptive_trial t;

	(void)state;
	assert_non_null(ad);
	assert_int_equal(lb_adaptive_trial_begin(ad, &rng, &t), 0);
	assert_int_equal(t.be, 0);
	assert_int_equal(lb_adaptive_trial_fail(ad, &t), 0);
	assert_int_equal(t.be, 1);
	/* 2 is drained now; 0 becomes ineligible too, and is not revisited. */
	assert_int_equal(lb_adaptive_set_eligible(ad, 2, false), 0);
	assert_int_equal(lb_adaptive_set_eligible(ad, 0, false), 0);
	assert_int_equal(lb_adaptive_trial_fail(ad, &t), 0);
	assert_int_equal(t.be, 3);
	/* Even re-enabled, the first backend is not tried a second time. */
	assert_int_equal(lb_adaptive_set_eligible(ad, 0, true), 0);
	assert_int_equal(lb_adaptive_trial_fail(ad, &t), -ENOENT);
	lb_adaptive_free(ad);
}

/* ---- lazy rebuild of the weight cache -------------------------------- */

static uint64_t
recomputes(struct lb_adaptive *ad)
{
	struct lb_adaptive_stats st;

	assert_int_equal(lb_adaptive_stats_get(ad, &st), 0);
	return st.recomputes;
}

static void
picks(struct lb_adaptive *ad, const struct lb_rng *rng, int count)
{
	uint32_t be;

	for (int i = 0; i < count; i++)
		assert_int_equal(lb_adaptive_pick(ad, rng, &be), 0);
}

static void
test_lazy_recompute(void **state)
{
	struct lb_adaptive *ad = lb_adaptive_create(4, NULL);
	struct lb_xoshiro x;
	struct lb_rng rng = lb_rng_xoshiro(&x);

	(void)state;
	lb_xoshiro_seed(&x, 11);
	assert_non_null(ad);
	picks(ad, &rng, 1000);
	assert_int_equal(recomputes(ad), 1);
	assert_int_equal(lb_adaptive_fail(ad, 0), 0);
	assert_int_equal(recomputes(ad), 1); /* lazily: not yet */
	picks(ad, &rng, 1000);
	assert_int_equal(recomputes(ad), 2);
	/* Changes that leave the weights alone do not dirty the cache. */
	assert_int_equal(lb_adaptive_ok(ad, 1), 0); /* 0 -> 0 */
	assert_int_equal(lb_adaptive_set_eligible(ad, 1, true), 0);
	assert_int_equal(lb_adaptive_set_errors(ad, 0, 1), 0); /* same */
	assert_int_equal(lb_adaptive_set_eligible(ad, 3, false), 0);
	picks(ad, &rng, 10);
	assert_int_equal(recomputes(ad), 3);
	assert_int_equal(lb_adaptive_fail(ad, 3), 0); /* drained backend */
	picks(ad, &rng, 10);
	assert_int_equal(recomputes(ad), 3);
	assert_int_equal(err_of(ad, 3), 1);
	/* Several changes between picks cost one rebuild. */
	assert_int_equal(lb_adaptive_fail(ad, 0), 0);
	assert_int_equal(lb_adaptive_fail(ad, 1), 0);
	assert_int_equal(lb_adaptive_ok(ad, 0), 0);
	picks(ad, &rng, 10);
	assert_int_equal(recomputes(ad), 4);
	lb_adaptive_free(ad);
}

/* ---- rebinding to a new backend set ---------------------------------- */

static void
test_rebind(void **state)
{
	static const uint32_t err3[] = {1, 2, 3};
	static const uint32_t map[] = {2, LB_ADAPTIVE_NONE, 0,
				       LB_ADAPTIVE_NONE};
	static const uint32_t dup[] = {0, 0};
	static const uint32_t oob[] = {3};
	static const struct {
		uint32_t e;
		bool elig;
	} want[] = {{3, true}, {0, true}, {1, true}, {0, true}};
	struct lb_adaptive *ad = make(3, err3, 0x5, NULL);
	struct enum_rng er = {0, 3, 1};
	struct lb_rng rng = {enum_next, &er};
	struct lb_adaptive_trial t;
	struct lb_adaptive_view v;

	(void)state;
	assert_int_equal(lb_adaptive_trial_begin(ad, &rng, &t), 0);
	assert_int_equal(lb_adaptive_rebind(ad, 4, map), 0);
	assert_int_equal(lb_adaptive_size(ad), 4);
	for (uint32_t j = 0; j < 4; j++) {
		assert_int_equal(lb_adaptive_view(ad, j, &v), 0);
		assert_int_equal(v.errors, want[j].e);
		assert_int_equal(v.eligible, want[j].elig);
	}
	/* e = {3, 0, 1, 0}: E_m = 8, w = {2, 8, 4, 8}. */
	assert_int_equal(lb_adaptive_view(ad, 0, &v), 0);
	assert_int_equal(v.weight, 2);
	assert_int_equal(v.weight_sum, 22);
	/* The request begun before the rebind is stale. */
	assert_int_equal(lb_adaptive_trial_fail(ad, &t), -ESTALE);
	assert_int_equal(lb_adaptive_trial_ok(ad, &t), -ESTALE);

	/* Bad maps leave the state as it was. */
	assert_int_equal(lb_adaptive_rebind(ad, 2, dup), -EINVAL);
	assert_int_equal(lb_adaptive_size(ad), 4);
	assert_int_equal(err_of(ad, 0), 3);
	assert_int_equal(lb_adaptive_rebind(ad, 1, oob), 0);
	assert_int_equal(lb_adaptive_size(ad), 1);
	assert_int_equal(err_of(ad, 0), 0);
	assert_int_equal(lb_adaptive_rebind(ad, 1, oob), -EINVAL);
	assert_int_equal(lb_adaptive_size(ad), 1);
	assert_int_equal(lb_adaptive_rebind(ad, 0, NULL), -EINVAL);
	assert_int_equal(lb_adaptive_rebind(ad, LB_ADAPTIVE_MAX_BE + 1, NULL),
			 -ERANGE);
	assert_int_equal(lb_adaptive_rebind(NULL, 2, NULL), -EINVAL);

	/* Without a map: grow keeps the prefix, new backends are clean. */
	assert_int_equal(lb_adaptive_set_errors(ad, 0, 4), 0);
	assert_int_equal(lb_adaptive_rebind(ad, 3, NULL), 0);
	assert_int_equal(err_of(ad, 0), 4);
	assert_int_equal(err_of(ad, 1), 0);
	assert_int_equal(err_of(ad, 2), 0);
	assert_int_equal(lb_adaptive_set_eligible(ad, 2, false), 0);
	assert_int_equal(lb_adaptive_rebind(ad, 2, NULL), 0);
	assert_int_equal(lb_adaptive_view(ad, 1, &v), 0);
	/* e = {4, 0}: E_m = 11, w = {3, 11}. */
	assert_int_equal(v.weight, 11);
	assert_int_equal(v.weight_sum, 14);
	lb_adaptive_free(ad);
}

/* ---- bad input ------------------------------------------------------- */

static void
test_bad_create(void **state)
{
	static const struct {
		uint32_t n;
		struct lb_adaptive_conf conf;
		int err;
	} cases[] = {
		{0, {0}, EINVAL},
		{LB_ADAPTIVE_MAX_BE + 1, {0}, ERANGE},
		{3, {.err_cap = LB_ADAPTIVE_ERR_CAP_MAX + 1}, ERANGE},
		{3, {.on_ok = (enum lb_adaptive_on_ok)7}, EINVAL},
	};
	struct lb_adaptive *ad;

	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		errno = 0;
		assert_null(lb_adaptive_create(cases[k].n, &cases[k].conf));
		assert_int_equal(errno, cases[k].err);
	}
	ad = lb_adaptive_create(LB_ADAPTIVE_MAX_BE, NULL);
	assert_non_null(ad);
	lb_adaptive_free(ad);
	lb_adaptive_free(NULL);
	assert_int_equal(lb_adaptive_size(NULL), 0);
}

static void
test_bad_args(void **state)
{
	struct lb_adaptive *ad = lb_adaptive_create(3, NULL);
	struct lb_xoshiro x;
	struct lb_rng rng = lb_rng_xoshiro(&x), nonext = {NULL, NULL};
	struct lb_adaptive_trial t = {0};
	struct lb_adaptive_view v;
	struct lb_adaptive_stats st;
	uint32_t err[2] = {0, LB_ADAPTIVE_ERR_CAP_MAX + 1};
	uint64_t w[2], eff;
	uint32_t be;

	(void)state;
	lb_xoshiro_seed(&x, 3);
	assert_non_null(ad);
	assert_int_equal(lb_adaptive_pick(NULL, &rng, &be), -EINVAL);
	assert_int_equal(lb_adaptive_pick(ad, NULL, &be), -EINVAL);
	assert_int_equal(lb_adaptive_pick(ad, &nonext, &be), -EINVAL);
	assert_int_equal(lb_adaptive_pick(ad, &rng, NULL), -EINVAL);
	assert_int_equal(lb_adaptive_fail(NULL, 0), -EINVAL);
	assert_int_equal(lb_adaptive_fail(ad, 3), -EINVAL);
	assert_int_equal(lb_adaptive_ok(NULL, 0), -EINVAL);
	assert_int_equal(lb_adaptive_ok(ad, 3), -EINVAL);
	assert_int_equal(lb_adaptive_set_eligible(NULL, 0, true), -EINVAL);
	assert_int_equal(lb_adaptive_set_eligible(ad, 3, true), -EINVAL);
	assert_int_equal(lb_adaptive_set_errors(NULL, 0, 0), -EINVAL);
	assert_int_equal(lb_adaptive_set_errors(ad, 3, 0), -EINVAL);
	assert_int_equal(lb_adaptive_next(NULL, 0, &be), -EINVAL);
	assert_int_equal(lb_adaptive_next(ad, 3, &be), -EINVAL);
	assert_int_equal(lb_adaptive_next(ad, 0, NULL), -EINVAL);
	assert_int_equal(lb_adaptive_view(NULL, 0, &v), -EINVAL);
	assert_int_equal(lb_adaptive_view(ad, 3, &v), -EINVAL);
	assert_int_equal(lb_adaptive_view(ad, 0, NULL), -EINVAL);
	assert_int_equal(lb_adaptive_stats_get(NULL, &st), -EINVAL);
	assert_int_equal(lb_adaptive_stats_get(ad, NULL), -EINVAL);
	assert_int_equal(lb_adaptive_trial_begin(ad, &rng, NULL), -EINVAL);
	assert_int_equal(lb_adaptive_trial_begin(NULL, &rng, &t), -EINVAL);
	assert_int_equal(t.be, LB_ADAPTIVE_NONE);
	assert_int_equal(lb_adaptive_trial_fail(ad, NULL), -EINVAL);
	assert_int_equal(lb_adaptive_trial_ok(NULL, &t), -EINVAL);
	/* A zeroed trial was never begun on this state. */
	t = (struct lb_adaptive_trial){0};
	assert_int_equal(lb_adaptive_trial_fail(ad, &t), -ESTALE);
	assert_int_equal(lb_adaptive_eff_error(0, NULL), -EINVAL);
	assert_int_equal(
		lb_adaptive_eff_error(LB_ADAPTIVE_ERR_CAP_MAX + 1, &eff),
		-ERANGE);
	assert_int_equal(lb_adaptive_weights(NULL, NULL, 2, w), -EINVAL);
	assert_int_equal(lb_adaptive_weights(err, NULL, 2, NULL), -EINVAL);
	assert_int_equal(lb_adaptive_weights(err, NULL, 0, w), -EINVAL);
	assert_int_equal(lb_adaptive_weights(err, NULL, 2, w), -ERANGE);
	/* Nothing was counted for the rejected calls. */
	assert_int_equal(lb_adaptive_stats_get(ad, &st), 0);
	assert_int_equal(st.picks + st.fails + st.oks + st.retries, 0);
	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(err_of(ad, i), 0);
	lb_adaptive_free(ad);
}

static void
test_no_eligible_backend(void **state)
{
	struct lb_adaptive *ad = make(3, NULL, 0x0, NULL);
	struct lb_xoshiro x;
	struct lb_rng rng = lb_rng_xoshiro(&x);
	struct lb_adaptive_trial t;
	struct lb_adaptive_stats st;
	struct lb_adaptive_view v;
	uint32_t be = 42;

	(void)state;
	lb_xoshiro_seed(&x, 5);
	assert_int_equal(lb_adaptive_pick(ad, &rng, &be), -ENOENT);
	assert_int_equal(be, 42);
	assert_int_equal(lb_adaptive_trial_begin(ad, &rng, &t), -ENOENT);
	assert_int_equal(t.be, LB_ADAPTIVE_NONE);
	assert_int_equal(lb_adaptive_view(ad, 0, &v), 0);
	assert_int_equal(v.weight_sum, 0);
	assert_int_equal(v.max_eff, 0);
	assert_true(v.lp == 0.0);
	assert_int_equal(lb_adaptive_stats_get(ad, &st), 0);
	assert_int_equal(st.no_backend, 2);
	assert_int_equal(st.picks, 0);
	/* One backend back: it takes every pick. */
	assert_int_equal(lb_adaptive_set_eligible(ad, 1, true), 0);
	for (int i = 0; i < 100; i++) {
		assert_int_equal(lb_adaptive_pick(ad, &rng, &be), 0);
		assert_int_equal(be, 1);
	}
	lb_adaptive_free(ad);
}

/* ---- guards against provoked errors ---------------------------------- */

static struct lb_adaptive_view
view_of(struct lb_adaptive *ad, uint32_t be)
{
	struct lb_adaptive_view v;

	assert_int_equal(lb_adaptive_view(ad, be, &v), 0);
	return v;
}

/* A success removes ceil(e / N): 1 is the paper's reset, 2 the halving. */
static void
test_err_memory(void **state)
{
	static const struct {
		uint32_t mem, e, want;
	} cases[] = {
		{1, 10, 0}, {2, 10, 5}, {2, 5, 2}, {4, 10, 7},
		{8, 8, 7},  {8, 1, 0},	{8, 0, 0}, {1024, 65535, 65471},
	};

	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct lb_adaptive_conf conf = {.err_memory = cases[k].mem};
		struct lb_adaptive *ad = make(2, NULL, ALL, &conf);

		assert_int_equal(lb_adaptive_set_errors(ad, 0, cases[k].e), 0);
		assert_int_equal(lb_adaptive_ok(ad, 0), 0);
		assert_int_equal(err_of(ad, 0), cases[k].want);
		lb_adaptive_free(ad);
	}
}

/* Errors count from the min_volume-th outcome on; set_errors is known. */
static void
test_min_volume(void **state)
{
	struct lb_adaptive_conf conf = {.min_volume = 3};
	struct lb_adaptive *ad = make(3, NULL, ALL, &conf);
	struct lb_adaptive_view v;

	(void)state;
	lb_adaptive_fail(ad, 0);
	lb_adaptive_fail(ad, 0);
	v = view_of(ad, 0);
	assert_int_equal(v.errors, 2);
	assert_int_equal(v.counted, 0);
	assert_int_equal(v.weight, 1);
	assert_int_equal(v.max_eff, 1);
	lb_adaptive_fail(ad, 0);
	v = view_of(ad, 0);
	assert_int_equal(v.counted, 3);
	/* E_m = floor(4^1.5) = 8, w_0 = ceil(8 / 4) = 2, healthy 8. */
	assert_int_equal(v.weight, 2);
	assert_int_equal(view_of(ad, 1).weight, 8);
	/* Carried into a new table: counts at once. */
	assert_int_equal(lb_adaptive_set_errors(ad, 2, 1), 0);
	assert_int_equal(view_of(ad, 2).counted, 1);
	lb_adaptive_free(ad);
}

/*
 * max_eject_pct 10 of 10 backends: one keeps its errors, the one with
 * most (ties to the lower index); the others weigh as healthy peers.
 */
static void
test_max_eject(void **state)
{
	static const uint32_t err[10] = {0, 0, 5, 0, 3, 0, 0, 5, 0, 0};
	struct lb_adaptive_conf conf = {.max_eject_pct = 10};
	struct lb_adaptive *ad = make(10, err, ALL, &conf);
	struct lb_adaptive_stats st;
	uint64_t w[10];

	(void)state;
	/* E_m = floor(6^1.5) = 14; w_2 = ceil(14 / 6) = 3; others 14. */
	for (uint32_t i = 0; i < 10; i++) {
		struct lb_adaptive_view v = view_of(ad, i);

		assert_int_equal(v.counted, i == 2 ? 5 : 0);
		assert_int_equal(v.weight, i == 2 ? 3 : 14);
		/* Fair share or more for all but the one. */
		if (i != 2)
			assert_true(v.lp >= 0.1);
	}
	assert_int_equal(lb_adaptive_stats_get(ad, &st), 0);
	assert_int_equal(st.capped, 1);
	assert_int_equal(st.panics, 0);
	assert_int_equal(lb_adaptive_weights_conf(err, NULL, 10, &conf, w), 0);
	for (uint32_t i = 0; i < 10; i++)
		assert_int_equal(w[i], view_of(ad, i).weight);
	lb_adaptive_free(ad);
	/* 11 backends at 10 %: ceil(1.1) = 2 keep their counts. */
	{
		static const uint32_t e11[11] = {1, 2, 3, 4,  5, 6,
						 7, 8, 9, 10, 11};
		uint64_t w11[11];

		assert_int_equal(
			lb_adaptive_weights_conf(e11, NULL, 11, &conf, w11), 0);
		/* E_m = floor(12^1.5) = 41: w_10 = 4, w_9 = 4, rest 41. */
		for (uint32_t i = 0; i < 9; i++)
			assert_int_equal(w11[i], 41);
		assert_int_equal(w11[9], 4);
		assert_int_equal(w11[10], 4);
	}
}

/* Fewer than panic_pct % error-free: every count ignored, even draw. */
static void
test_panic(void **state)
{
	static const uint32_t three[4] = {2, 2, 1, 0};
	static const uint32_t two[4] = {2, 0, 1, 0};
	struct lb_adaptive_conf conf = {.panic_pct = 50};
	struct lb_adaptive *ad = make(4, three, ALL, &conf);
	struct lb_adaptive_stats st;
	struct lb_xoshiro x;
	struct lb_rng rng = lb_rng_xoshiro(&x);
	uint32_t be;

	(void)state;
	lb_xoshiro_seed(&x, 7);
	for (uint32_t i = 0; i < 4; i++) {
		struct lb_adaptive_view v = view_of(ad, i);

		assert_true(v.panic);
		assert_int_equal(v.counted, 0);
		assert_int_equal(v.weight, 1);
	}
	assert_int_equal(lb_adaptive_pick(ad, &rng, &be), 0);
	/* Half error-free is not below half: out of panic. */
	lb_adaptive_ok(ad, 1);
	assert_false(view_of(ad, 0).panic);
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(view_of(ad, i).counted, two[i]);
	lb_adaptive_fail(ad, 3);
	assert_true(view_of(ad, 0).panic);
	assert_int_equal(lb_adaptive_stats_get(ad, &st), 0);
	assert_int_equal(st.panics, 2);
	/* Ineligible backends are not part of the pool: 1 of 2 healthy. */
	lb_adaptive_set_eligible(ad, 0, false);
	lb_adaptive_set_eligible(ad, 2, false);
	assert_false(view_of(ad, 1).panic);
	assert_int_equal(view_of(ad, 3).counted, 1);
	lb_adaptive_free(ad);
}

/*
 * A backend failing half its requests among two healthy peers: with the
 * paper's reset it keeps most of its share, with err_memory 8 it loses
 * most of it, and with the max-eject and panic guards on only one backend
 * of the three is weighed down when all of them fail half the time.
 */
static double
failing_share(const struct lb_adaptive_conf *conf, uint32_t bad_mask,
	      uint32_t fail_in)
{
	struct lb_adaptive *ad = lb_adaptive_create(3, conf);
	struct lb_xoshiro x, y;
	struct lb_rng rng = lb_rng_xoshiro(&x);
	uint32_t hits = 0, picks = 200000;

	assert_non_null(ad);
	lb_xoshiro_seed(&x, 11);
	lb_xoshiro_seed(&y, 12);
	for (uint32_t k = 0; k < picks; k++) {
		uint32_t be;

		assert_int_equal(lb_adaptive_pick(ad, &rng, &be), 0);
		hits += be == 1;
		if (((bad_mask >> be) & 1) &&
		    lb_xoshiro_next(&y) % fail_in == 0)
			lb_adaptive_fail(ad, be);
		else
			lb_adaptive_ok(ad, be);
	}
	lb_adaptive_free(ad);
	return 3.0 * hits / picks;
}

static void
test_half_failing_share(void **state)
{
	struct lb_adaptive_conf reset = {0}, mem = {.err_memory = 8};
	struct lb_adaptive_conf all = {
		.err_memory = 8, .max_eject_pct = 10, .panic_pct = 0};
	double r, m, a;

	(void)state;
	r = failing_share(&reset, 0x2, 2);
	m = failing_share(&mem, 0x2, 2);
	print_message("share of fair: reset %.2f, err_memory 8 %.2f\n", r, m);
	assert_true(r > 0.5);
	assert_true(m < 0.4);
	/* One request in ten failing costs little of the share. */
	m = failing_share(&mem, 0x2, 10);
	print_message("1 in 10 failing, err_memory 8: %.2f\n", m);
	assert_true(m > 0.8);
	/* All three fail half the time: one at most is weighed down, so
	 * backend 1 keeps its fair share on average whatever the others. */
	a = failing_share(&all, 0x7, 2);
	print_message("all failing, max-eject 10 %%: backend 1 %.2f\n", a);
	assert_true(a > 0.7);
}

static void
test_guard_bad(void **state)
{
	static const struct lb_adaptive_conf bad[] = {
		{.err_memory = LB_ADAPTIVE_MEMORY_MAX + 1},
		{.max_eject_pct = 101},
		{.panic_pct = 101},
	};
	struct lb_adaptive *ad = lb_adaptive_create(2, NULL);

	(void)state;
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		errno = 0;
		assert_null(lb_adaptive_create(2, &bad[k]));
		assert_int_equal(errno, ERANGE);
		assert_int_equal(lb_adaptive_guard(ad, &bad[k]), -ERANGE);
	}
	assert_int_equal(lb_adaptive_guard(NULL, &bad[0]), -EINVAL);
	assert_int_equal(lb_adaptive_guard(ad, NULL), -EINVAL);
	lb_adaptive_free(ad);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_eff_error_table),
		cmocka_unit_test(test_eff_error_exact),
		cmocka_unit_test(test_weights_table),
		cmocka_unit_test(test_pick_exact_enumeration),
		cmocka_unit_test(test_landing_frequencies),
		cmocka_unit_test(test_harmonic_decay),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_ok_resets),
		cmocka_unit_test(test_ok_restores_uniform),
		cmocka_unit_test(test_next_table),
		cmocka_unit_test(test_trial_sequence),
		cmocka_unit_test(test_trial_eligibility_change),
		cmocka_unit_test(test_lazy_recompute),
		cmocka_unit_test(test_rebind),
		cmocka_unit_test(test_bad_create),
		cmocka_unit_test(test_bad_args),
		cmocka_unit_test(test_no_eligible_backend),
		cmocka_unit_test(test_err_memory),
		cmocka_unit_test(test_min_volume),
		cmocka_unit_test(test_max_eject),
		cmocka_unit_test(test_panic),
		cmocka_unit_test(test_half_failing_share),
		cmocka_unit_test(test_guard_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
