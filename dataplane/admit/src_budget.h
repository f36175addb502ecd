/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_SRC_BUDGET_H
#define LB_SRC_BUDGET_H

/**
 * @file
 * Budget of new flows per client source, per worker (docs/security.md,
 * "New flows per source"). Consulted with the first packet of a flow
 * (a TCP SYN, a first UDP datagram) before anything is taken for it: no
 * admission token, no flow entry, no SNAT port, no SYN copy. A source
 * over its budget has the packet dropped and counted.
 *
 * Each source has a token bucket of @c rate new flows per second and
 * depth @c burst, kept as the generic cell rate algorithm's theoretical
 * arrival time (ATM Forum TM 4.0; RFC 2697's bucket in one word): a flow
 * conforms when tat <= now + (burst - 1) x T, T = 1 s / rate, and moves
 * tat to max(tat, now) + T. A bucket whose tat has passed is full: it is
 * the same as no entry at all.
 *
 * The table is bounded and set-associative: a source hashes, with two
 * 64-bit secrets of the worker, to one set of four entries in one cache
 * line. A source not in its set takes the entry whose bucket is the
 * fullest (smallest tat), so that forgetting it changes least: a full
 * bucket loses nothing, and a source over its budget (tat furthest
 * ahead) is the last to go. Nobody outside knows the secrets, so no one
 * can pick addresses that land in the set of a given source.
 *
 * Per worker, no atomics, no allocation after creation.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lb/rng.h"
#include "lb/src_budget-t.h"

#define LB_SRC_BUDGET_WAYS 4u

/** One set: four sources and their buckets, one cache line. */
struct lb_src_budget_set {
	uint32_t key[LB_SRC_BUDGET_WAYS]; /**< source & prefix mask */
	uint32_t used;			  /**< one bit per way */
	uint32_t pad[3];
	uint64_t tat[LB_SRC_BUDGET_WAYS]; /**< ns; <= now: bucket full */
} __attribute__((aligned(64)));

struct lb_src_budget {
	uint64_t k0, k1;   /**< hash secrets */
	uint64_t t_ns;	   /**< T: ns per new flow at the rate */
	uint64_t tol_ns;   /**< (burst - 1) x T */
	uint32_t mask;	   /**< source address bits that count */
	uint32_t set_mask; /**< sets - 1 */
	struct lb_src_budget_stats *st;
	struct lb_src_budget_conf conf;
	struct lb_src_budget_set *set;
};

/** Fills @p c with the defaults (on, 10000/s, burst 20000, /32). */
void lb_src_budget_conf_default(struct lb_src_budget_conf *c);

/**
 * @return 0, -EINVAL (NULL, zero burst or sources with a rate, prefix
 * outside 8..32) or -ERANGE (above the maxima).
 */
int lb_src_budget_conf_check(const struct lb_src_budget_conf *c);

/**
 * Parses `off` or `RATE[/BURST]` (BURST defaults to twice RATE) into
 * @p c's rate and burst. @return 0 or -EINVAL.
 */
int lb_src_budget_parse(const char *s, struct lb_src_budget_conf *c);

/**
 * Writes what @p c says ("off", or "10000/s burst 20000 per /32, 65536
 * sources per worker") into @p buf. @return as snprintf().
 */
int lb_src_budget_describe(const struct lb_src_budget_conf *c, char *buf,
			   size_t len);

/**
 * A worker's budget table for @p c, hashed with secrets @p k0, @p k1,
 * counting into @p st (not NULL).
 * @return the table, or NULL with errno EINVAL (bad @p c, rate 0: no
 * table is needed) or ENOMEM.
 */
struct lb_src_budget *lb_src_budget_create(const struct lb_src_budget_conf *c,
					   uint64_t k0, uint64_t k1,
					   struct lb_src_budget_stats *st);

void lb_src_budget_free(struct lb_src_budget *b);

/** Entries in use (sources remembered, full buckets included). */
uint32_t lb_src_budget_count(const struct lb_src_budget *b);

/** The set of source key @p key (host order, masked). */
static inline struct lb_src_budget_set *
lb_src_budget_set_of(const struct lb_src_budget *b, uint32_t key)
{
	/* Two rounds of splitmix64, each keyed with a secret. */
	uint64_t st = (uint64_t)key ^ b->k0;
	uint64_t x = lb_splitmix64(&st);

	st = x ^ b->k1;
	x = lb_splitmix64(&st);
	return &b->set[(uint32_t)(x >> 32) & b->set_mask];
}

/** Prefetches the set of client @p src (host order): a burst asks for
 * the sets of its new flows before it handles the first. */
static inline void
lb_src_budget_prefetch(const struct lb_src_budget *b, uint32_t src)
{
	if (b != NULL)
		__builtin_prefetch(lb_src_budget_set_of(b, src & b->mask));
}

/** Out-of-line part of lb_src_budget_take(): a source not in its set. */
bool lb_src_budget_take_new(struct lb_src_budget *b,
			    struct lb_src_budget_set *s, uint32_t key,
			    uint64_t now_ns);

/**
 * Charges one new flow to client @p src (IPv4, host order) at
 * @p now_ns. @return true when it is within budget; false when it is not
 * (counted as dropped: the caller drops the packet). A NULL @p b (budget
 * off) takes everything.
 */
static inline bool
lb_src_budget_take(struct lb_src_budget *b, uint32_t src, uint64_t now_ns)
{
	struct lb_src_budget_set *s;
	uint32_t key;

	if (b == NULL)
		return true;
	key = src & b->mask;
	s = lb_src_budget_set_of(b, key);
	for (uint32_t i = 0; i < LB_SRC_BUDGET_WAYS; i++) {
		if (!(s->used & (1u << i)) || s->key[i] != key)
			continue;
		if (s->tat[i] > now_ns + b->tol_ns) {
			b->st->dropped++;
			return false;
		}
		s->tat[i] = (s->tat[i] > now_ns ? s->tat[i] : now_ns) +
			    b->t_ns;
		return true;
	}
	return lb_src_budget_take_new(b, s, key, now_ns);
}

#endif /* LB_SRC_BUDGET_H */
