/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_ADMIT_T_H
#define LB_ADMIT_T_H

/**
 * @file
 * Admission's types (admit.h): the verdicts and per-worker counters that
 * lb-control reads, and the shared table of global buckets.
 */

#include <stdatomic.h>
#include <stdint.h>

#include "lb/admit_conf.h"
#include "lb/tb-t.h"

/** What lb_admit_check() decided. Values below LB_ADMIT_REJ_EMPTY admit. */
enum lb_admit_verdict {
	LB_ADMIT_PASS = 0, /**< admitted with a token */
	/** Admitted without a token: the shared table had no room for the
	 * key's global bucket (counted; a flood of new keys must not deny
	 * service to every new client). */
	LB_ADMIT_PASS_FULL,
	/** Rejected: the global bucket could not supply; the key is now in
	 * this worker's negative cache until its interval ends. */
	LB_ADMIT_REJ_EMPTY,
	/** Rejected by the negative cache without asking again. */
	LB_ADMIT_REJ_NEG,
	/** Rejected: the cluster tier is unreachable and fails closed. */
	LB_ADMIT_REJ_CLUSTER,
	/** Rejected: the shared table had no room for the key's bucket and
	 * the service fails closed (admit-full closed). */
	LB_ADMIT_REJ_FULL,
	LB_ADMIT_VERDICT_MAX,
};

/** One worker's admission counters; single writer (that worker). */
struct lb_admit_stats {
	/** [key class][verdict] */
	uint64_t n[LB_ADMIT_KEY_MAX][LB_ADMIT_VERDICT_MAX];
	uint64_t borrows;  /**< batches asked of the global buckets */
	uint64_t borrowed; /**< tokens received */
	/** Read-modify-write atomic operations on shared memory. */
	uint64_t shm_atomics;
	uint64_t evictions; /**< local buckets replaced (LRU) */
	/** Borrows whose key found no slot in the shared table, whatever
	 * the service's admit-full did about it. */
	uint64_t table_full;
};

/** One worker's admission counters for one service. */
struct lb_admit_svc_stats {
	uint64_t n[LB_ADMIT_VERDICT_MAX];
	uint64_t table_full; /**< as in struct lb_admit_stats */
};

/* ---- the shared table of global buckets ------------------------------ */

/** Key word states: a key never has this bit set. */
#define LB_ADMIT_BUSY (1ULL << 63)
/** Probes from a key's home slot before the table counts as full. */
#define LB_ADMIT_PROBES 16u
/** Entries idle at least this long (or their fill time) may be reused. */
#define LB_ADMIT_IDLE_MIN_NS 2000000000ULL
#define LB_ADMIT_SHM_SLOTS_DEFAULT 65536u
/** Overflow buckets after the hashed slots, one per service slot
 * (LB_CONF_MAX_SVCS); a service slot beyond wraps around. */
#define LB_ADMIT_OVF_SLOTS 64u
/** Local buckets per worker: twice the shared table's default, so that a
 * worker keeps the tokens of every key that has a slot and as many keys
 * without one (a cycle of keys just above the table's size would replace
 * a bucket at every check under LRU). 256 bytes each. */
#define LB_ADMIT_LOCAL_DEFAULT (2 * LB_ADMIT_SHM_SLOTS_DEFAULT)
/** Share of a key's burst that a borrow asks for at least
 * (lb_tb_local_conf.min_fraction): a key seen every few intervals then
 * borrows once per many admissions. Tokens a worker holds and does not
 * spend are at most this share of the burst per key and worker. */
#define LB_ADMIT_BATCH_FLOOR (1.0 / 16)

/** Entry flag set by lb-control: the cluster tier is unreachable. */
#define LB_ADMIT_F_CLUSTER_DOWN 0x1u

struct lb_admit_gent {
	struct lb_tb_global b; /**< first cache line: the hot atomics */
	/** Key, 0 when empty, key | LB_ADMIT_BUSY while being set up. */
	_Alignas(64) _Atomic uint64_t key;
	/** Last borrow (coarse: written at most every 1/8 s). */
	_Atomic uint64_t used_ns;
	_Atomic uint32_t flags; /**< LB_ADMIT_F_* */
	uint32_t client;	/**< key material, host order */
	uint16_t svc;		/**< service slot */
	uint8_t cls;		/**< enum lb_admit_key */
	uint8_t cluster;	/**< enum lb_admit_cluster */
};

struct lb_admit_shm {
	uint32_t nb_slots; /**< power of two */
	uint32_t pad;
	/** Keys the mixing of every key (lb_admit_key_of()): drawn from
	 * getrandom() by lb_admit_shm_init(), read by both processes. */
	uint64_t secret[2];
	/** nb_slots hashed slots, then LB_ADMIT_OVF_SLOTS overflow ones. */
	_Alignas(64) struct lb_admit_gent ent[];
};

#endif /* LB_ADMIT_T_H */
