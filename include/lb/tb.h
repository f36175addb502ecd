/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_TB_H
#define LB_TB_H

/**
 * @file
 * Hierarchical token buckets (US 11,616,725 B1, "Hierarchical token
 * buckets", claims 1-21).
 *
 * One global bucket per throttle key lives in shared memory and is refilled
 * lazily: tokens = min(max, tokens + rate x elapsed) (claims 9 and 18).
 * Every worker lcore keeps a local bucket per throttle key that serves
 * admissions from tokens it already holds; on a shortage it borrows a batch
 * from the global bucket (claim 1). The batch is the linearly weighted
 * average of the demand of the last x intervals (claims 11-12 and 19-20):
 *
 *     batch = (1 tar_x + 2 tar_(x-1) + ... + (x-1) tar_2 + x tar_1)
 *             / (1 + 2 + ... + x)
 *
 * where tar_1 is the most recent completed interval. When the global
 * bucket cannot supply the shortage, the key stays throttled on that lcore
 * until its interval ends, without asking the global bucket again (the
 * negative cache of claims 2 and 3).
 *
 * Units: time is nanoseconds, rates are tokens per second. The global
 * bucket counts in nanotokens (1e-9 token), so that rate x elapsed_ns is an
 * exact integer and no fraction of a token is ever lost between refills.
 */

#include <stdatomic.h>
#include <stdint.h>

#include "lb/tb-t.h"

/**
 * Checks @p conf and returns what the seed's ranges allow.
 * @return 0, -EINVAL (NULL, zero capacity or rate, unknown refill mode) or
 * -ERANGE (capacity or rate above the maxima, threshold >= capacity).
 */
int lb_tb_global_conf_check(const struct lb_tb_global_conf *conf);

/**
 * Initialises @p g full (capacity tokens) with its refill clock at
 * @p now_ns. Not concurrent with users of @p g.
 * @return 0, or the error of lb_tb_global_conf_check() (-EINVAL on NULL).
 */
int lb_tb_global_init(struct lb_tb_global *g,
		      const struct lb_tb_global_conf *conf, uint64_t now_ns);

/**
 * Refills lazily, then dispenses min(@p hi, available) whole tokens if
 * that is at least @p lo and more than the threshold are available; else
 * nothing. Lock-free, safe against any number of concurrent callers in any
 * process; one successful compare-and-swap on the token count, plus one on
 * the refill clock when time has advanced.
 * @return tokens dispensed; 0 when refused or on bad input (NULL,
 * lo == 0, lo > hi).
 */
uint64_t lb_tb_global_take_range(struct lb_tb_global *g, uint64_t lo,
				 uint64_t hi, uint64_t now_ns);

/** Claim 1: dispenses up to @p n tokens, whatever is available. */
static inline uint64_t
lb_tb_global_take(struct lb_tb_global *g, uint64_t n, uint64_t now_ns)
{
	return lb_tb_global_take_range(g, 1, n, now_ns);
}

/**
 * Adds @p n tokens to @p g, capped at its capacity; lock-free, one
 * successful compare-and-swap. For buckets fed by an upper tier.
 * @return the tokens actually added (less than @p n at the cap).
 */
uint64_t lb_tb_global_deposit(struct lb_tb_global *g, uint64_t n);

/**
 * Whole tokens a caller could take at @p now_ns (refill included, nothing
 * modified). A snapshot: other callers may change it at once.
 */
uint64_t lb_tb_global_avail(const struct lb_tb_global *g, uint64_t now_ns);

/**
 * The lazy refill of claims 9 and 18 in nanotokens:
 * min(cap_nt, tokens_nt + rate x elapsed_ns), computed without overflow
 * for any elapsed_ns when cap_nt and rate are within the maxima.
 */
static inline uint64_t
lb_tb_refill_nt(uint64_t tokens_nt, uint64_t cap_nt, uint64_t rate,
		uint64_t elapsed_ns)
{
	if (tokens_nt >= cap_nt)
		return cap_nt;
	/* Below the capacity gap / rate the product cannot overflow. */
	if (rate == 0 || elapsed_ns >= (cap_nt - tokens_nt) / rate + 1)
		return rate == 0 ? tokens_nt : cap_nt;
	tokens_nt += rate * elapsed_ns;
	return tokens_nt < cap_nt ? tokens_nt : cap_nt;
}

/**
 * Claim 12's linearly weighted average of @p x intervals, @p hist[0]
 * being tar_1 (the latest, weight x) and @p hist[x-1] tar_x (the oldest,
 * weight 1), rounded up to whole tokens so that any demand asks for at
 * least one. 128-bit intermediate, so it cannot overflow.
 * @return the average, or 0 when x == 0, x > LB_TB_INTERVALS_MAX or
 * hist is NULL.
 */
uint64_t lb_tb_wavg(const uint64_t *hist, uint32_t x);

/** Fills @p conf with the defaults (seed behaviour, 100 ms x 4). */
void lb_tb_local_conf_default(struct lb_tb_local_conf *conf);

/**
 * @return 0, -EINVAL (NULL, zero interval/count/min_batch, unknown mode,
 * NaN fraction or min_fraction) or -ERANGE (values outside the documented ranges,
 * max_batch below min_batch).
 */
int lb_tb_local_conf_check(const struct lb_tb_local_conf *conf);

/** Empties @p l for @p key; its first interval starts at @p now_ns.
 * @return 0 or -EINVAL on NULL. */
int lb_tb_local_init(struct lb_tb_local *l, uint64_t key, uint64_t now_ns);

/**
 * Batch the next borrow would ask for (before adding the shortage), for a
 * global bucket of @p capacity tokens: the weighted average (at least
 * min_fraction of @p capacity) or the fraction, clamped to
 * [min_batch, max_batch] and to @p capacity.
 */
uint64_t lb_tb_local_batch(const struct lb_tb_local *l,
			   const struct lb_tb_local_conf *conf,
			   uint64_t capacity);

/** Out-of-line part of lb_tb_local_take(): interval roll-over, borrowing,
 * negative cache and argument checks. */
int lb_tb_local_take_slow(struct lb_tb_local *l,
			  const struct lb_tb_local_conf *conf,
			  struct lb_tb_global *g, uint64_t n, uint64_t now_ns);

/**
 * Admits or throttles a request costing @p n tokens under the key of
 * @p l, borrowing from @p g (the same key's global bucket) on a shortage.
 * @p conf must have passed lb_tb_local_conf_check().
 * @return 0 admitted; -EAGAIN throttled; -EINVAL (NULL, n == 0) or
 * -ERANGE (n larger than the global capacity) on bad input.
 */
static inline int
lb_tb_local_take(struct lb_tb_local *l, const struct lb_tb_local_conf *conf,
		 struct lb_tb_global *g, uint64_t n, uint64_t now_ns)
{
	/* Common case: tokens at hand and still inside the interval (a
	 * clock that went backwards wraps and takes the slow path). */
	if (l != NULL && conf != NULL && n != 0 && l->tokens >= n &&
	    now_ns - l->interval_start < conf->interval_ns) {
		l->tokens -= n;
		l->cur_served += n;
		l->cur_offered += n;
		l->cnt.admitted++;
		return 0;
	}
	return lb_tb_local_take_slow(l, conf, g, n, now_ns);
}

/** Fixed-capacity per-lcore table of local buckets with LRU eviction. */
struct lb_tb_table;

/**
 * Allocates a table of @p capacity local buckets (all memory it will ever
 * use) sharing a copy of @p conf.
 * @return the table, or NULL with errno EINVAL (bad conf, capacity 0),
 * ERANGE (capacity > LB_TB_TABLE_MAX) or ENOMEM.
 */
struct lb_tb_table *lb_tb_table_create(uint32_t capacity,
				       const struct lb_tb_local_conf *conf);

void lb_tb_table_free(struct lb_tb_table *t);

/** The local bucket of @p key, or NULL; does not change the LRU order. */
struct lb_tb_local *lb_tb_table_lookup(struct lb_tb_table *t, uint64_t key);

/**
 * The local bucket of @p key, made most recently used. A missing key gets
 * a fresh bucket, evicting the least recently used one if the table is
 * full; the evicted bucket's counters are kept in the table's totals and
 * its unspent tokens are dropped (never returned, so never over-admitted).
 * @return the bucket, or NULL on NULL @p t.
 */
struct lb_tb_local *lb_tb_table_get(struct lb_tb_table *t, uint64_t key,
				    uint64_t now_ns);

/** What lb_tb_table_get_ev() replaced: a key and its unspent tokens. */
struct lb_tb_evicted {
	uint64_t key;
	uint64_t tokens;
	int replaced; /**< 0: the key was present or a free bucket used */
};

/**
 * lb_tb_table_get(), also telling in @p ev (may be NULL) which bucket it
 * replaced and the tokens that bucket still held, so that the caller may
 * give them back to that key's global bucket (lb_tb_global_deposit()).
 */
struct lb_tb_local *lb_tb_table_get_ev(struct lb_tb_table *t, uint64_t key,
				       uint64_t now_ns,
				       struct lb_tb_evicted *ev);

/**
 * Relaxes the LRU order of @p t: lb_tb_table_get() moves a present bucket
 * to the front only when at least @p slack buckets were moved there or
 * added since it last was; 0 (the default) is exact LRU. A bucket used
 * within the last @p slack moves is then never the next to be replaced
 * (it sits among the @p slack most recent), and a table whose keys recur
 * rarely touches the LRU links far less often.
 * @return 0, -EINVAL on NULL, -ERANGE when @p slack >= the capacity.
 */
int lb_tb_table_lru_slack(struct lb_tb_table *t, uint32_t slack);

/** lb_tb_local_take() on the bucket of @p key (see lb_tb_table_get()). */
int lb_tb_table_take(struct lb_tb_table *t, uint64_t key,
		     struct lb_tb_global *g, uint64_t n, uint64_t now_ns);

/** Keys present, at most @p max of them, most recently used first.
 * @return the number written. */
uint32_t lb_tb_table_keys(const struct lb_tb_table *t, uint64_t *keys,
			  uint32_t max);

/** Number of keys present. */
uint32_t lb_tb_table_count(const struct lb_tb_table *t);

/** Sums the counters of present and evicted buckets into @p out and
 * returns the number of evictions. */
uint64_t lb_tb_table_counters(const struct lb_tb_table *t,
			      struct lb_tb_counters *out);

#endif /* LB_TB_H */
