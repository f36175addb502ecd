/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Error-adaptive weighted random scheduler: Algorithms 1 and 2 of the
 * adaptive-request-dispatch paper, with the weights of its equation (6)
 * cached as prefix sums between error-count changes.
 */
#include <errno.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "lb/adaptive.h"

struct lb_adaptive {
	/* Read by every pick. */
	alignas(64) uint32_t n;
	bool dirty;	/* an input of the weights changed since the rebuild */
	bool uniform;	/* E_m = 1 and all eligible: lb_rng_below(n) suffices */
	uint64_t total; /* pre[n - 1], the paper's pre_n */
	uint64_t *pre;	/* prefix sums of w_i */
	uint32_t *err;	/* e_i */
	uint32_t *ce;	/* e_i as the weights count it (guards applied) */
	uint32_t *seen; /* outcomes seen, saturating at min_volume */
	uint32_t *tmp;	/* scratch of the max-eject selection */
	bool *elig;
	/* Read when weights are rebuilt or trials advance. */
	uint64_t max_eff; /* E_m, 0 when nothing is eligible */
	uint32_t n_elig;
	uint32_t err_cap;
	uint32_t max_trials;
	uint32_t gen;
	enum lb_adaptive_on_ok on_ok;
	struct lb_adaptive_conf guard; /* err_memory, min_volume, pcts */
	bool panic;
	struct lb_adaptive_stats st;
};

/*
 * Bit-by-bit integer square root, exact for every 64-bit input. pow()
 * promises no exact rounding, and floor() turns a result one ulp below an
 * integer (1 + e a perfect square) into an error of one.
 */
static uint64_t
isqrt_u64(uint64_t x)
{
	uint64_t r = 0, bit = 1ULL << 62;

	while (bit > x)
		bit >>= 2;
	while (bit != 0) {
		if (x >= r + bit) {
			x -= r + bit;
			r = (r >> 1) + bit;
		} else {
			r >>= 1;
		}
		bit >>= 2;
	}
	return r;
}

/* E = floor((1 + e)^1.5) = floor(sqrt((1 + e)^3)); e <= ERR_CAP_MAX. */
static uint64_t
eff_error(uint32_t e)
{
	uint64_t b = (uint64_t)e + 1;

	return isqrt_u64(b * b * b);
}

/* w = ceil(E_m / (1 + e)); E_m < 2^33 so E_m + e cannot overflow. */
static uint64_t
weight_of(uint64_t max_eff, uint32_t e)
{
	return (max_eff + e) / ((uint64_t)e + 1);
}

int
lb_adaptive_eff_error(uint32_t e, uint64_t *out)
{
	if (out == NULL)
		return -EINVAL;
	if (e > LB_ADAPTIVE_ERR_CAP_MAX)
		return -ERANGE;
	*out = eff_error(e);
	return 0;
}

int
lb_adaptive_weights(const uint32_t *err, const bool *eligible, uint32_t n,
		    uint64_t *w)
{
	uint32_t emax = 0;
	bool any = false;
	uint64_t max_eff;

	if (err == NULL || w == NULL || n == 0 || n > LB_ADAPTIVE_MAX_BE)
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++) {
		if (err[i] > LB_ADAPTIVE_ERR_CAP_MAX)
			return -ERANGE;
		if (eligible != NULL && !eligible[i])
			continue;
		any = true;
		if (err[i] > emax)
			emax = err[i];
	}
	max_eff = any ? eff_error(emax) : 0;
	for (uint32_t i = 0; i < n; i++) {
		bool on = eligible == NULL || eligible[i];

		w[i] = on ? weight_of(max_eff, err[i]) : 0;
	}
	return 0;
}

static int
cmp_desc(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

enum guard_res { GUARD_NONE, GUARD_CAPPED, GUARD_PANIC };

/*
 * Applies the panic and max-eject guards of @p g to the counts @p ce of
 * the eligible backends in place; @p tmp has room for n counts.
 */
static enum guard_res
guard_counts(const struct lb_adaptive_conf *g, const bool *elig, uint32_t n,
	     uint32_t *ce, uint32_t *tmp)
{
	uint32_t n_elig = 0, u = 0, k, t, eq;

	for (uint32_t i = 0; i < n; i++) {
		if (!elig[i])
			continue;
		n_elig++;
		if (ce[i] > 0)
			tmp[u++] = ce[i];
	}
	if (u == 0)
		return GUARD_NONE;
	/* Too few look healthy to trust the signal: spread evenly. */
	if ((uint64_t)(n_elig - u) * 100 < (uint64_t)g->panic_pct * n_elig) {
		for (uint32_t i = 0; i < n; i++)
			ce[i] = 0;
		return GUARD_PANIC;
	}
	if (g->max_eject_pct == 0 || g->max_eject_pct >= 100)
		return GUARD_NONE;
	k = (uint32_t)(((uint64_t)n_elig * g->max_eject_pct + 99) / 100);
	if (u <= k)
		return GUARD_NONE;
	/* Keep the k largest counts, ties to the lower index. */
	qsort(tmp, u, sizeof(*tmp), cmp_desc);
	t = tmp[k - 1];
	eq = 0;
	for (uint32_t j = 0; j < k; j++)
		eq += tmp[j] == t;
	for (uint32_t i = 0; i < n; i++) {
		if (!elig[i] || ce[i] > t)
			continue;
		if (ce[i] == t && eq > 0)
			eq--;
		else
			ce[i] = 0;
	}
	return GUARD_CAPPED;
}

int
lb_adaptive_weights_conf(const uint32_t *err, const bool *eligible, uint32_t n,
			 const struct lb_adaptive_conf *conf, uint64_t *w)
{
	uint32_t *ce;
	bool *el;
	int rc;

	if (conf == NULL || err == NULL || w == NULL || n == 0 ||
	    n > LB_ADAPTIVE_MAX_BE)
		return lb_adaptive_weights(err, eligible, n, w);
	ce = malloc((size_t)n * (2 * sizeof(*ce) + sizeof(*el)));
	if (ce == NULL)
		return -ENOMEM;
	el = (bool *)(ce + 2 * (size_t)n);
	for (uint32_t i = 0; i < n; i++) {
		el[i] = eligible == NULL || eligible[i];
		ce[i] = err[i];
	}
	for (uint32_t i = 0; i < n; i++)
		if (err[i] > LB_ADAPTIVE_ERR_CAP_MAX) {
			free(ce);
			return -ERANGE;
		}
	guard_counts(conf, el, n, ce, ce + n);
	rc = lb_adaptive_weights(ce, el, n, w);
	free(ce);
	return rc;
}

/* Algorithm 1, trial 1, up to the prefix array; run lazily by pick. */
static void
recompute(struct lb_adaptive *ad)
{
	uint32_t emax = 0;
	uint64_t acc = 0;
	enum guard_res g;
	bool panic;

	for (uint32_t i = 0; i < ad->n; i++)
		ad->ce[i] = ad->elig[i] && ad->seen[i] >= ad->guard.min_volume
				    ? ad->err[i]
				    : 0;
	g = guard_counts(&ad->guard, ad->elig, ad->n, ad->ce, ad->tmp);
	panic = g == GUARD_PANIC;
	if (panic && !ad->panic)
		ad->st.panics++;
	ad->panic = panic;
	if (g == GUARD_CAPPED)
		ad->st.capped++;
	for (uint32_t i = 0; i < ad->n; i++)
		if (ad->ce[i] > emax)
			emax = ad->ce[i];
	ad->max_eff = ad->n_elig > 0 ? eff_error(emax) : 0;
	for (uint32_t i = 0; i < ad->n; i++) {
		if (ad->elig[i])
			acc += weight_of(ad->max_eff, ad->ce[i]);
		ad->pre[i] = acc;
	}
	ad->total = acc;
	ad->uniform = ad->max_eff == 1 && ad->n_elig == ad->n;
	ad->dirty = false;
	ad->st.recomputes++;
}

/*
 * RangeBinarySearch: the smallest i with r <= pre[i], so that
 * pre[i - 1] < r <= pre[i]. A backend of weight 0 has pre[i] = pre[i - 1]
 * and is never the smallest such i. Needs 1 <= r <= pre[n - 1].
 */
static uint32_t
range_search(const uint64_t *pre, uint32_t n, uint64_t r)
{
	uint32_t lo = 0;

	while (n > 1) {
		uint32_t half = n / 2;

		if (pre[lo + half - 1] < r)
			lo += half;
		n -= half;
	}
	return lo;
}

/* One block per backend set: pre[], then err[], ce[], seen[], tmp[], elig[]. */
struct arrays {
	uint64_t *pre;
	uint32_t *err, *ce, *seen, *tmp;
	bool *elig;
};

static void *
alloc_arrays(uint32_t n, struct arrays *a)
{
	size_t sz = (size_t)n *
		    (sizeof(uint64_t) + 4 * sizeof(uint32_t) + sizeof(bool));
	char *p = calloc(1, sz);
	uint32_t *u;

	if (p == NULL)
		return NULL;
	a->pre = (uint64_t *)p;
	u = (uint32_t *)(p + (size_t)n * sizeof(uint64_t));
	a->err = u;
	a->ce = u + n;
	a->seen = u + 2 * (size_t)n;
	a->tmp = u + 3 * (size_t)n;
	a->elig = (bool *)(u + 4 * (size_t)n);
	return p;
}

static void
use_arrays(struct lb_adaptive *ad, const struct arrays *a)
{
	ad->pre = a->pre;
	ad->err = a->err;
	ad->ce = a->ce;
	ad->seen = a->seen;
	ad->tmp = a->tmp;
	ad->elig = a->elig;
}

static bool
guard_ok(const struct lb_adaptive_conf *g)
{
	return g->err_memory <= LB_ADAPTIVE_MEMORY_MAX &&
	       g->max_eject_pct <= 100 && g->panic_pct <= 100;
}

int
lb_adaptive_guard(struct lb_adaptive *ad, const struct lb_adaptive_conf *conf)
{
	if (ad == NULL || conf == NULL)
		return -EINVAL;
	if (!guard_ok(conf))
		return -ERANGE;
	ad->guard.err_memory = conf->err_memory;
	ad->guard.min_volume = conf->min_volume;
	ad->guard.max_eject_pct = conf->max_eject_pct;
	ad->guard.panic_pct = conf->panic_pct;
	ad->dirty = true;
	return 0;
}

struct lb_adaptive *
lb_adaptive_create(uint32_t n_be, const struct lb_adaptive_conf *conf)
{
	static const struct lb_adaptive_conf defaults;
	struct lb_adaptive *ad;
	struct arrays a;
	size_t sz = (sizeof(*ad) + 63) / 64 * 64;

	if (conf == NULL)
		conf = &defaults;
	if (n_be == 0 || (conf->on_ok != LB_ADAPTIVE_OK_RESET &&
			  conf->on_ok != LB_ADAPTIVE_OK_HALVE)) {
		errno = EINVAL;
		return NULL;
	}
	if (n_be > LB_ADAPTIVE_MAX_BE ||
	    conf->err_cap > LB_ADAPTIVE_ERR_CAP_MAX || !guard_ok(conf)) {
		errno = ERANGE;
		return NULL;
	}
	ad = aligned_alloc(64, sz);
	if (ad == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	memset(ad, 0, sizeof(*ad));
	if (alloc_arrays(n_be, &a) == NULL) {
		free(ad);
		errno = ENOMEM;
		return NULL;
	}
	use_arrays(ad, &a);
	for (uint32_t i = 0; i < n_be; i++)
		ad->elig[i] = true;
	ad->n = n_be;
	ad->n_elig = n_be;
	ad->err_cap =
		conf->err_cap ? conf->err_cap : LB_ADAPTIVE_ERR_CAP_DEFAULT;
	ad->max_trials = conf->max_trials;
	ad->on_ok = conf->on_ok;
	ad->guard = *conf;
	/* Starts at 1 so that a zeroed trial is never taken as current. */
	ad->gen = 1;
	ad->dirty = true;
	return ad;
}

void
lb_adaptive_free(struct lb_adaptive *ad)
{
	if (ad == NULL)
		return;
	free(ad->pre);
	free(ad);
}

uint32_t
lb_adaptive_size(const struct lb_adaptive *ad)
{
	return ad == NULL ? 0 : ad->n;
}

int
lb_adaptive_rebind(struct lb_adaptive *ad, uint32_t n_be,
		   const uint32_t *old_index)
{
	struct arrays a;
	bool *used = NULL;
	void *blk;
	uint32_t n_elig = 0;
	int rc = -EINVAL;

	if (ad == NULL || n_be == 0)
		return -EINVAL;
	if (n_be > LB_ADAPTIVE_MAX_BE)
		return -ERANGE;
	blk = alloc_arrays(n_be, &a);
	if (blk == NULL)
		return -ENOMEM;
	if (old_index != NULL) {
		used = calloc(ad->n, sizeof(*used));
		if (used == NULL) {
			rc = -ENOMEM;
			goto fail;
		}
	}
	for (uint32_t j = 0; j < n_be; j++) {
		uint32_t o;

		if (old_index != NULL)
			o = old_index[j];
		else
			o = j < ad->n ? j : LB_ADAPTIVE_NONE;
		if (o == LB_ADAPTIVE_NONE) {
			a.elig[j] = true;
		} else {
			if (o >= ad->n || (used != NULL && used[o]))
				goto fail;
			if (used != NULL)
				used[o] = true;
			a.err[j] = ad->err[o];
			a.seen[j] = ad->seen[o];
			a.elig[j] = ad->elig[o];
		}
		n_elig += a.elig[j];
	}
	free(used);
	free(ad->pre);
	use_arrays(ad, &a);
	ad->n = n_be;
	ad->n_elig = n_elig;
	if (++ad->gen == 0)
		ad->gen = 1;
	ad->dirty = true;
	return 0;
fail:
	free(used);
	free(blk);
	return rc;
}

int
lb_adaptive_set_eligible(struct lb_adaptive *ad, uint32_t be, bool eligible)
{
	if (ad == NULL || be >= ad->n)
		return -EINVAL;
	if (ad->elig[be] == eligible)
		return 0;
	ad->elig[be] = eligible;
	if (eligible)
		ad->n_elig++;
	else
		ad->n_elig--;
	ad->dirty = true;
	return 0;
}

/* Only an eligible backend's count enters the weights. */
static void
set_err(struct lb_adaptive *ad, uint32_t be, uint32_t e)
{
	if (ad->err[be] == e)
		return;
	ad->err[be] = e;
	if (ad->elig[be])
		ad->dirty = true;
}

int
lb_adaptive_set_errors(struct lb_adaptive *ad, uint32_t be, uint32_t e)
{
	if (ad == NULL || be >= ad->n)
		return -EINVAL;
	if (e > ad->err_cap)
		return -ERANGE;
	if (ad->seen[be] < ad->guard.min_volume) {
		ad->seen[be] = ad->guard.min_volume;
		ad->dirty = true;
	}
	set_err(ad, be, e);
	return 0;
}

int
lb_adaptive_pick(struct lb_adaptive *ad, const struct lb_rng *rng, uint32_t *be)
{
	if (ad == NULL || rng == NULL || rng->next == NULL || be == NULL)
		return -EINVAL;
	if (ad->dirty)
		recompute(ad);
	if (ad->uniform) {
		/* E_m = 1: Randomize(1, n) of Algorithm 1. */
		*be = (uint32_t)lb_rng_below(rng, ad->n);
	} else if (ad->total == 0) {
		ad->st.no_backend++;
		return -ENOENT;
	} else {
		uint64_t r = 1 + lb_rng_below(rng, ad->total);

		*be = range_search(ad->pre, ad->n, r);
	}
	ad->st.picks++;
	return 0;
}

/*
 * First eligible backend after @from in index order, wrapping, that is
 * reached before @stop; LB_ADAPTIVE_NONE if there is none.
 */
static uint32_t
walk(const struct lb_adaptive *ad, uint32_t from, uint32_t stop)
{
	uint32_t i = from;

	for (;;) {
		i = i + 1 == ad->n ? 0 : i + 1;
		if (i == stop)
			return LB_ADAPTIVE_NONE;
		if (ad->elig[i])
			return i;
	}
}

int
lb_adaptive_next(const struct lb_adaptive *ad, uint32_t prev, uint32_t *next)
{
	uint32_t i;

	if (ad == NULL || next == NULL || prev >= ad->n)
		return -EINVAL;
	i = walk(ad, prev, prev);
	if (i == LB_ADAPTIVE_NONE)
		return -ENOENT;
	*next = i;
	return 0;
}

/* One more outcome from @p be; its errors count from min_volume on. */
static void
seen_be(struct lb_adaptive *ad, uint32_t be)
{
	if (ad->seen[be] >= ad->guard.min_volume)
		return;
	if (++ad->seen[be] == ad->guard.min_volume && ad->err[be] > 0 &&
	    ad->elig[be])
		ad->dirty = true;
}

static void
fail_be(struct lb_adaptive *ad, uint32_t be)
{
	ad->st.fails++;
	seen_be(ad, be);
	if (ad->err[be] < ad->err_cap)
		set_err(ad, be, ad->err[be] + 1);
}

static void
ok_be(struct lb_adaptive *ad, uint32_t be)
{
	uint32_t e = ad->err[be], m = ad->guard.err_memory;

	ad->st.oks++;
	seen_be(ad, be);
	if (m != 0)
		e -= (e + m - 1) / m;
	else
		e = ad->on_ok == LB_ADAPTIVE_OK_HALVE ? e / 2 : 0;
	set_err(ad, be, e);
}

int
lb_adaptive_fail(struct lb_adaptive *ad, uint32_t be)
{
	if (ad == NULL || be >= ad->n)
		return -EINVAL;
	fail_be(ad, be);
	return 0;
}

int
lb_adaptive_ok(struct lb_adaptive *ad, uint32_t be)
{
	if (ad == NULL || be >= ad->n)
		return -EINVAL;
	ok_be(ad, be);
	return 0;
}

int
lb_adaptive_trial_begin(struct lb_adaptive *ad, const struct lb_rng *rng,
			struct lb_adaptive_trial *t)
{
	uint32_t be;
	int rc;

	if (t == NULL)
		return -EINVAL;
	t->be = LB_ADAPTIVE_NONE;
	t->first = LB_ADAPTIVE_NONE;
	t->trial = 0;
	t->gen = 0;
	rc = lb_adaptive_pick(ad, rng, &be);
	if (rc != 0)
		return rc;
	t->be = be;
	t->first = be;
	t->trial = 1;
	t->gen = ad->gen;
	return 0;
}

/* Common checks of the trial calls; 0 when t->be may be reported on. */
static int
trial_check(const struct lb_adaptive *ad, const struct lb_adaptive_trial *t)
{
	if (ad == NULL || t == NULL || t->be == LB_ADAPTIVE_NONE)
		return -EINVAL;
	if (t->gen != ad->gen)
		return -ESTALE;
	if (t->be >= ad->n || t->first >= ad->n)
		return -EINVAL;
	return 0;
}

int
lb_adaptive_trial_fail(struct lb_adaptive *ad, struct lb_adaptive_trial *t)
{
	uint32_t nx = LB_ADAPTIVE_NONE;
	int rc = trial_check(ad, t);

	if (rc != 0)
		return rc;
	fail_be(ad, t->be);
	/*
	 * Trials 2..n: prev_node + 1, wrapping, skipping backends that may
	 * take no new flows; stopping short of t->first means each eligible
	 * backend is tried at most once even if eligibility changes.
	 */
	if (ad->max_trials == 0 || t->trial < ad->max_trials)
		nx = walk(ad, t->be, t->first);
	t->be = nx;
	if (nx == LB_ADAPTIVE_NONE) {
		ad->st.exhausted++;
		return -ENOENT;
	}
	t->trial++;
	ad->st.retries++;
	return 0;
}

int
lb_adaptive_trial_ok(struct lb_adaptive *ad, struct lb_adaptive_trial *t)
{
	int rc = trial_check(ad, t);

	if (rc != 0)
		return rc;
	ok_be(ad, t->be);
	t->be = LB_ADAPTIVE_NONE;
	return 0;
}

int
lb_adaptive_view(struct lb_adaptive *ad, uint32_t be,
		 struct lb_adaptive_view *v)
{
	if (ad == NULL || v == NULL || be >= ad->n)
		return -EINVAL;
	if (ad->dirty)
		recompute(ad);
	v->errors = ad->err[be];
	v->counted = ad->ce[be];
	v->panic = ad->panic;
	v->eligible = ad->elig[be];
	v->eff_error = eff_error(ad->err[be]);
	v->max_eff = ad->max_eff;
	v->weight = ad->pre[be] - (be > 0 ? ad->pre[be - 1] : 0);
	v->weight_sum = ad->total;
	v->lp = ad->total > 0 ? (double)v->weight / (double)ad->total : 0.0;
	return 0;
}

int
lb_adaptive_stats_get(const struct lb_adaptive *ad, struct lb_adaptive_stats *s)
{
	if (ad == NULL || s == NULL)
		return -EINVAL;
	*s = ad->st;
	return 0;
}
