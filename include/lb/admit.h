/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_ADMIT_H
#define LB_ADMIT_H

/**
 * @file
 * Admission control over the hierarchical token buckets (lb/tb.h, seed
 * hierarchical-token-buckets-patent): one call per new flow (L4) or per
 * request (HTTP) answers admit or reject, and why.
 *
 * Two tiers, as in the seed:
 *  - each worker keeps the local buckets of the keys it sees in a bounded
 *    table with least-recently-used replacement (struct lb_admit_lc), and
 *    serves admissions from tokens it already holds without touching
 *    shared memory;
 *  - the global buckets live in one bounded table in memory shared by all
 *    workers and lb-control (struct lb_admit_shm). A worker borrows a batch
 *    from there with single atomic operations (lb_tb_global_take_range());
 *    an absent key is inserted lock-free by compare-and-swap, and an entry
 *    idle for longer than it takes to fill up again is reused for another
 *    key (its bucket would be full anyway, so nothing changes for the
 *    old key but the slot).
 *
 * The cluster tier (Redis, control/admit/cluster.c) sits above a service's
 * global bucket: for such services the bucket does not refill with time;
 * lb-control deposits the batches it borrows from Redis.
 *
 * Keys: every bucket is known by a 64-bit key that mixes the service slot,
 * the key class, the key material (client, prefix or priority) and the
 * service's admission settings, so a changed rate or burst starts fresh
 * buckets while the old ones age out. The mixing is keyed with the shared
 * table's secret (random, drawn when the table is set up), so that nobody
 * outside can choose clients whose buckets crowd one probe range of the
 * shared table or one run of a worker's local table.
 *
 * A key that finds no slot in the shared table (every slot of its probe
 * range busy) is handled as the service's `admit-full` says: counted,
 * then admitted without a token (open), refused (closed), or charged to
 * the service's overflow bucket (overflow, the default), one bucket of the
 * per-key rate and burst shared by every key of the service without a slot.
 */

#include <stdatomic.h>
#include <stdint.h>

#include "lb/admit-t.h"
#include "lb/admit_conf.h"
#include "lb/tb.h"

static inline int
lb_admit_rejected(enum lb_admit_verdict v)
{
	return v >= LB_ADMIT_REJ_EMPTY;
}

/** Name of a verdict for counters and metrics (inline: lb-control shows
 * them without linking the module). */
static inline const char *
lb_admit_verdict_name(enum lb_admit_verdict v)
{
	static const char *const names[LB_ADMIT_VERDICT_MAX] = {
		[LB_ADMIT_PASS] = "pass",
		[LB_ADMIT_PASS_FULL] = "pass_full",
		[LB_ADMIT_REJ_EMPTY] = "empty",
		[LB_ADMIT_REJ_NEG] = "negative_cache",
		[LB_ADMIT_REJ_CLUSTER] = "cluster_down",
		[LB_ADMIT_REJ_FULL] = "table_full",
	};

	return (unsigned int)v < LB_ADMIT_VERDICT_MAX ? names[v] : "?";
}

/** Bytes needed for a table of @p nb_slots (a power of two), or 0. */
uint64_t lb_admit_shm_size(uint32_t nb_slots);

/** Sets up an empty table in @p mem of lb_admit_shm_size() bytes, with a
 * fresh secret. @return the table, or NULL with errno EINVAL (bad size)
 * or the error of getrandom(). */
struct lb_admit_shm *lb_admit_shm_init(void *mem, uint32_t nb_slots);

/** Throttle key in table @p sh of the service slot @p svc with settings
 * @p c for a client (host order) and priority rank; never 0, never
 * LB_ADMIT_BUSY. Depends on @p sh's secret. */
uint64_t lb_admit_key_of(const struct lb_admit_shm *sh, uint16_t svc,
			 const struct lb_admit_conf *c, uint32_t client,
			 uint8_t prio);

/**
 * The overflow bucket of service slot @p svc with settings @p c, set up
 * (full, refilled at the rate) when absent or made for other settings.
 * @return the entry, or NULL while another thread sets it up.
 */
struct lb_admit_gent *lb_admit_shm_overflow(struct lb_admit_shm *sh,
					    uint16_t svc,
					    const struct lb_admit_conf *c,
					    uint64_t now_ns, uint64_t *atomics);

/**
 * The global bucket of @p key, inserted (full, or empty for a cluster
 * service) when absent. Lock-free; safe from any thread of any process
 * mapping @p sh. @p client and @p prio only label a new entry.
 * @param atomics  incremented by the read-modify-write operations done.
 * @return the entry, or NULL when no slot is free within the probe range.
 */
struct lb_admit_gent *lb_admit_shm_get(struct lb_admit_shm *sh, uint64_t key,
				       uint16_t svc,
				       const struct lb_admit_conf *c,
				       uint32_t client, uint64_t now_ns,
				       uint64_t *atomics);

/** The entry of @p key, or NULL; inserts nothing. */
struct lb_admit_gent *lb_admit_shm_find(struct lb_admit_shm *sh, uint64_t key);

/* ---- one worker's side ---------------------------------------------- */

struct lb_admit_lc;

/**
 * A worker's admission state: @p nb_local local buckets (LRU), borrowing
 * from @p sh. Counters go to @p st and @p svc_st (nb_svc entries), which
 * may live in shared memory for others to read.
 * @return the state, or NULL with errno EINVAL or ENOMEM.
 */
struct lb_admit_lc *lb_admit_lc_create(struct lb_admit_shm *sh,
				       uint32_t nb_local,
				       struct lb_admit_stats *st,
				       struct lb_admit_svc_stats *svc_st,
				       uint32_t nb_svc);

void lb_admit_lc_free(struct lb_admit_lc *lc);

/**
 * Admits or rejects one new flow or request of service slot @p svc with
 * settings @p c (c->rate != 0), from client @p client (IPv4, host order)
 * with priority rank @p prio (0 when none), at @p now_ns. Counts the
 * verdict. Never blocks, never allocates.
 */
enum lb_admit_verdict lb_admit_check(struct lb_admit_lc *lc, uint16_t svc,
				     const struct lb_admit_conf *c,
				     uint32_t client, uint8_t prio,
				     uint64_t now_ns);

/**
 * lb_admit_check() for a client of an IPv6 service, @p client its
 * address (network order): `admit-key client` keeps a bucket per
 * address, `prefix` per prefix of the settings' prefix6 bits (default
 * /64). Their buckets never share a key with an IPv4 client's.
 */
enum lb_admit_verdict lb_admit_check6(struct lb_admit_lc *lc, uint16_t svc,
				      const struct lb_admit_conf *c,
				      const uint8_t client[16], uint8_t prio,
				      uint64_t now_ns);

/** Local buckets present in @p lc. */
uint32_t lb_admit_lc_keys(const struct lb_admit_lc *lc);

#endif /* LB_ADMIT_H */
