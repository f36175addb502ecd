/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_ADAPTIVE_H
#define LB_ADAPTIVE_H

/**
 * @file
 * Error-adaptive weighted random scheduler (adaptive-request-dispatch-paper,
 * Algorithms 1 and 2, equations 6-11).
 *
 * One struct lb_adaptive is the per-lcore state a worker owns for the
 * backend set of one service. Every backend i carries a count e_i of
 * consecutive failed attempts. A new flow goes to a backend drawn with
 * probability proportional to
 *
 *     E_i = floor((1 + e_i)^1.5)            (effective error)
 *     E_m = max E_i over eligible backends
 *     w_i = ceil(E_m / (1 + e_i))
 *
 * (equation 6); when no eligible backend has an error (E_m = 1) the draw
 * is uniform. A failed attempt moves to the next eligible backend in
 * index order, wrapping, until one succeeds or every eligible backend was
 * tried once (Algorithm 2); the caller then defers the request.
 *
 * Weights and their prefix sums are cached: they are rebuilt in O(n) on the
 * first pick after an error count or an eligibility flag changed, and a
 * pick is then one random draw and a binary search, O(log n), with no
 * allocation. Only lb_adaptive_create() and lb_adaptive_rebind() allocate.
 *
 * Guards (all off in the all-zero configuration, which is the paper's
 * behaviour): error feedback is something clients can provoke (a URL that
 * answers 500), so the counts that enter the weights can be bounded.
 *   - min_volume: a backend's errors count only once this state has seen
 *     that many outcomes from it;
 *   - panic_pct: when fewer than that percentage of the eligible backends
 *     have no counted error, every count is ignored and the draw is
 *     uniform (Envoy's healthy panic threshold);
 *   - max_eject_pct: at most ceil(n_elig * pct / 100) backends, those with
 *     the most errors, keep their counts; the others weigh as if healthy,
 *     so they keep at least their fair share;
 *   - err_memory: a success removes ceil(e_i / err_memory) errors instead
 *     of all of them, so a backend failing half its requests keeps a
 *     count near err_memory and loses most of its share.
 *
 * Not thread-safe: one owner (an lcore) per struct lb_adaptive.
 */

#include <stdbool.h>
#include <stdint.h>

#include "lb/rng.h"

/**
 * Default saturation of the error counts. With e_i <= 65535, E_m is at most
 * 65536^1.5 = 2^24, the least-favoured backend keeps a weight of at least
 * 256 against 2^24 for a healthy one, and its landing probability bottoms
 * out near 1 / (65536 h + 1) (equation 11, h healthy peers).
 */
#define LB_ADAPTIVE_ERR_CAP_DEFAULT 65535u

/**
 * Largest accepted error cap: (1 + e)^3 must fit in 64 bits so that E_i is
 * an exact integer square root (2642245^3 < 2^64 <= 2642246^3).
 */
#define LB_ADAPTIVE_ERR_CAP_MAX 2642244u

/** Largest backend set of one scheduler. */
#define LB_ADAPTIVE_MAX_BE 65536u

/** Backend index meaning "none" (e.g. a finished trial). */
#define LB_ADAPTIVE_NONE UINT32_MAX

/** What a successful attempt does to the backend's error count. */
enum lb_adaptive_on_ok {
	/** e_i = 0: ResetErrorCount of Algorithm 2 (the default). */
	LB_ADAPTIVE_OK_RESET = 0,
	/** e_i = e_i / 2: a flapping backend needs several successes. */
	LB_ADAPTIVE_OK_HALVE,
};

/** Configuration; all-zero means the paper's behaviour. */
struct lb_adaptive_conf {
	/** Saturation of e_i, 1..LB_ADAPTIVE_ERR_CAP_MAX; 0 = default. */
	uint32_t err_cap;
	/**
	 * Most trials per request; 0 = every eligible backend once (the
	 * paper's n trials). 1 disables retries (e.g. for UDP).
	 */
	uint32_t max_trials;
	/** Effect of a success; LB_ADAPTIVE_OK_RESET is the paper's. */
	enum lb_adaptive_on_ok on_ok;
	/**
	 * 0: on_ok decides; N = 1..LB_ADAPTIVE_MEMORY_MAX: a success removes
	 * ceil(e_i / N) errors (1 is the reset, 2 the halving).
	 */
	uint32_t err_memory;
	/** Outcomes seen from a backend before its errors count; 0 = none. */
	uint32_t min_volume;
	/** Most backends with counted errors, % of the eligible; 0 = all. */
	uint32_t max_eject_pct;
	/** Uniform draw below this % of error-free backends; 0 = never. */
	uint32_t panic_pct;
};

/** Largest err_memory. */
#define LB_ADAPTIVE_MEMORY_MAX 1024u

/** Per-lcore scheduler state of one service (opaque). */
struct lb_adaptive;

/**
 * Retry state of one request (Algorithm 2), kept by the caller, e.g. in the
 * flow entry of a SYN that may be retried.
 */
struct lb_adaptive_trial {
	uint32_t be; /**< backend of the current trial, or LB_ADAPTIVE_NONE */
	uint32_t first; /**< backend of trial 1 */
	uint32_t trial; /**< 1-based number of the current trial */
	uint32_t gen;	/**< backend-set generation the indices refer to */
};

/** What lbctl shows for one backend. */
struct lb_adaptive_view {
	uint32_t errors;     /**< e_i */
	uint32_t counted;    /**< e_i as the weights use it, after guards */
	bool panic;	     /**< the weights are in panic mode (uniform) */
	bool eligible;	     /**< may receive new flows */
	uint64_t eff_error;  /**< E_i = floor((1 + e_i)^1.5) */
	uint64_t max_eff;    /**< E_m over eligible backends (0 if none) */
	uint64_t weight;     /**< w_i; 0 when not eligible */
	uint64_t weight_sum; /**< sum of w over all backends (pre_n) */
	double lp;	     /**< landing probability of trial 1, eq. (6) */
};

/** Counters of one scheduler since creation. */
struct lb_adaptive_stats {
	uint64_t picks;	     /**< trial-1 selections */
	uint64_t retries;    /**< trials 2..n handed out */
	uint64_t fails;	     /**< failures reported */
	uint64_t oks;	     /**< successes reported */
	uint64_t exhausted;  /**< requests that failed every trial */
	uint64_t no_backend; /**< picks refused: no eligible backend */
	uint64_t recomputes; /**< rebuilds of the weight cache */
	uint64_t panics;     /**< rebuilds that entered panic mode */
	uint64_t capped;     /**< rebuilds that ignored counts over the cap */
};

/**
 * Effective error E = floor((1 + e)^1.5), computed exactly as the integer
 * square root of (1 + e)^3.
 *
 * @return 0, -EINVAL if @p out is NULL, -ERANGE if
 *   e > LB_ADAPTIVE_ERR_CAP_MAX.
 */
int lb_adaptive_eff_error(uint32_t e, uint64_t *out);

/**
 * Weights of equation (6) for an error vector, without any scheduler
 * state (for a control plane showing merged per-core counts).
 *
 * @param err       e_i of @p n backends.
 * @param eligible  NULL (all eligible) or @p n flags.
 * @param w         receives w_i (0 for a backend not eligible).
 * @return 0, -EINVAL on NULL or n = 0 or n > LB_ADAPTIVE_MAX_BE, -ERANGE if
 *   some e_i > LB_ADAPTIVE_ERR_CAP_MAX.
 */
int lb_adaptive_weights(const uint32_t *err, const bool *eligible, uint32_t n,
			uint64_t *w);

/**
 * As lb_adaptive_weights(), with the panic and max-eject guards of
 * @p conf applied to the counts first (min_volume needs per-backend
 * history and is not applied). @p conf NULL: no guard.
 *
 * @return as lb_adaptive_weights(), or -ENOMEM.
 */
int lb_adaptive_weights_conf(const uint32_t *err, const bool *eligible,
			     uint32_t n, const struct lb_adaptive_conf *conf,
			     uint64_t *w);

/**
 * Creates the state for @p n_be backends, all eligible, without errors.
 *
 * @param conf  NULL for the defaults.
 * @return the state, or NULL with errno EINVAL (n_be = 0, bad on_ok),
 *   ERANGE (n_be > LB_ADAPTIVE_MAX_BE, err_cap > LB_ADAPTIVE_ERR_CAP_MAX,
 *   err_memory > LB_ADAPTIVE_MEMORY_MAX, a percentage above 100) or
 *   ENOMEM.
 */
struct lb_adaptive *lb_adaptive_create(uint32_t n_be,
				       const struct lb_adaptive_conf *conf);

/**
 * Sets the guards of @p ad (err_memory, min_volume, max_eject_pct,
 * panic_pct of @p conf; its other fields are ignored).
 *
 * @return 0, -EINVAL (NULL), -ERANGE (a value out of range: @p ad is
 *   unchanged).
 */
int lb_adaptive_guard(struct lb_adaptive *ad,
		      const struct lb_adaptive_conf *conf);

/** Frees @p ad; NULL is accepted. */
void lb_adaptive_free(struct lb_adaptive *ad);

/** Number of backends, 0 if @p ad is NULL. */
uint32_t lb_adaptive_size(const struct lb_adaptive *ad);

/**
 * Binds @p ad to a new backend set of @p n_be backends (configuration time;
 * allocates). New backend j takes error count and eligibility from old
 * backend old_index[j], or starts eligible without errors when old_index[j]
 * is LB_ADAPTIVE_NONE. With @p old_index NULL, indices below the smaller of
 * the two sizes are kept and the rest are new. Outstanding trials become
 * stale (lb_adaptive_trial_fail() returns -ESTALE). On error @p ad is
 * unchanged.
 *
 * @return 0, -EINVAL (NULL @p ad, n_be = 0, an old index out of range or
 *   used twice), -ERANGE (n_be > LB_ADAPTIVE_MAX_BE), -ENOMEM.
 */
int lb_adaptive_rebind(struct lb_adaptive *ad, uint32_t n_be,
		       const uint32_t *old_index);

/**
 * Marks backend @p be eligible for new flows or not (drained, removed). An
 * ineligible backend keeps its index and error count, gets no trial-1 pick
 * and is skipped by retries, and does not count in E_m.
 *
 * @return 0, -EINVAL (NULL, @p be out of range).
 */
int lb_adaptive_set_eligible(struct lb_adaptive *ad, uint32_t be,
			     bool eligible);

/**
 * Sets e_i of @p be directly (seeding from a control plane's view, or a
 * worker carrying what it learnt into a new table). The backend counts as
 * known: its errors count at once, whatever min_volume says.
 *
 * @return 0, -EINVAL (NULL, @p be out of range), -ERANGE (@p e above the
 *   configured cap).
 */
int lb_adaptive_set_errors(struct lb_adaptive *ad, uint32_t be, uint32_t e);

/**
 * Trial-1 selection of Algorithm 1: a uniform pick among eligible backends
 * when E_m = 1, otherwise r uniform in [1, pre_n] and the backend whose
 * prefix-sum range holds r. O(log n); O(n) once after a change.
 *
 * @return 0 with *be set, -EINVAL (NULL argument), -ENOENT (no eligible
 *   backend: the caller defers the request).
 */
int lb_adaptive_pick(struct lb_adaptive *ad, const struct lb_rng *rng,
		     uint32_t *be);

/**
 * Next eligible backend after @p prev in index order, wrapping: the
 * "prev_node + 1" of Algorithm 1 for trials 2..n, with ineligible
 * backends skipped. @p prev itself is never returned.
 *
 * @return 0 with *next set, -EINVAL (NULL, @p prev out of range), -ENOENT
 *   (no other eligible backend).
 */
int lb_adaptive_next(const struct lb_adaptive *ad, uint32_t prev,
		     uint32_t *next);

/**
 * Records a failed attempt on @p be: IncrementErrorCount, saturating at
 * the cap.
 *
 * @return 0, -EINVAL (NULL, @p be out of range).
 */
int lb_adaptive_fail(struct lb_adaptive *ad, uint32_t be);

/**
 * Records a successful attempt on @p be: ResetErrorCount (or halving, see
 * struct lb_adaptive_conf).
 *
 * @return 0, -EINVAL (NULL, @p be out of range).
 */
int lb_adaptive_ok(struct lb_adaptive *ad, uint32_t be);

/**
 * Starts Algorithm 2 for one request: trial 1 by lb_adaptive_pick().
 *
 * @return 0 with @p t filled, or as lb_adaptive_pick() (@p t then has
 *   be = LB_ADAPTIVE_NONE).
 */
int lb_adaptive_trial_begin(struct lb_adaptive *ad, const struct lb_rng *rng,
			    struct lb_adaptive_trial *t);

/**
 * The current trial of @p t failed: counts the error on t->be and moves
 * @p t to the next eligible backend after it, round-robin, unless every
 * eligible backend has been tried once since t->first or max_trials is
 * reached.
 *
 * @return 0 with t->be and t->trial advanced; -ENOENT when the request
 *   failed all its trials (t->be becomes LB_ADAPTIVE_NONE: defer it);
 *   -ESTALE if the backend set was rebound since trial 1 (nothing
 *   recorded); -EINVAL (NULL, finished trial).
 */
int lb_adaptive_trial_fail(struct lb_adaptive *ad, struct lb_adaptive_trial *t);

/**
 * The current trial of @p t succeeded: resets the error count of t->be
 * and finishes @p t.
 *
 * @return 0, -ESTALE (rebound since trial 1), -EINVAL (NULL, finished).
 */
int lb_adaptive_trial_ok(struct lb_adaptive *ad, struct lb_adaptive_trial *t);

/**
 * Fills @p v with what lbctl shows for backend @p be (rebuilds the weight
 * cache first if needed).
 *
 * @return 0, -EINVAL (NULL, @p be out of range).
 */
int lb_adaptive_view(struct lb_adaptive *ad, uint32_t be,
		     struct lb_adaptive_view *v);

/**
 * Copies the counters.
 *
 * @return 0, -EINVAL (NULL).
 */
int lb_adaptive_stats_get(const struct lb_adaptive *ad,
			  struct lb_adaptive_stats *s);

#endif /* LB_ADAPTIVE_H */
