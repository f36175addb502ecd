/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_NEIGH_T_H
#define LB_NEIGH_T_H

/**
 * @file
 * Types of the neighbour tables (ARP and IPv6 neighbour discovery) that
 * lb-control reads too: the states and counters of a table
 * (dataplane/neigh/neigh.h has the API over them), and the snapshot of
 * its tables each worker writes into shared memory when asked
 * (`lbctl neigh`).
 */

#include <stdatomic.h>
#include <stdint.h>

/** State of an entry. */
enum lb_neigh_state {
	LB_NEIGH_INCOMPLETE = 1,
	LB_NEIGH_REACHABLE,
	LB_NEIGH_STALE,
	LB_NEIGH_FAILED,
	LB_NEIGH_STATIC,
};

/** Counters of one table since creation. */
struct lb_neigh_stats {
	uint64_t lookups;
	uint64_t hits;		/**< LB_NEIGH_HIT and LB_NEIGH_HIT_PROBE */
	uint64_t misses;	/**< LB_NEIGH_MISS_* */
	uint64_t requests;	/**< requests (ARP, solicitations) asked for */
	uint64_t learned;	/**< successful lb_neigh_learn() */
	uint64_t resolved;	/**< INCOMPLETE or FAILED -> REACHABLE */
	uint64_t mac_changed;	/**< learned a different MAC */
	uint64_t failed;	/**< entries that went FAILED */
	uint64_t evicted;	/**< LRU entries evicted for room */
	uint64_t full;		/**< entries refused (all static) */
	uint64_t static_kept;	/**< learns refused by a static entry */
	uint64_t held;		/**< handles queued */
	uint64_t hold_overflow; /**< handles refused, queue full */
	uint64_t released;	/**< handles released with a MAC */
	uint64_t dropped;	/**< handles released with NULL */
	uint32_t entries;	/**< in use now, static included */
	uint32_t statics;	/**< static entries now */
	uint32_t capacity;
};

/** The families of a worker's snapshot: its ARP table and its IPv6 one. */
enum lb_neigh_view_af {
	LB_NEIGH_VIEW_ARP = 0,
	LB_NEIGH_VIEW_ND,
	LB_NEIGH_VIEW_AFS,
};

/** Entries of one family one snapshot holds; the rest are counted. */
#define LB_NEIGH_VIEW_MAX 1024u

/** Port of an entry whose address no connected prefix holds any more. */
#define LB_NEIGH_VIEW_NO_PORT 0xffffu

/** One neighbour as a worker saw it. */
struct lb_neigh_view_entry {
	/** The address as in the packet: IPv4 in the first 4 bytes. */
	uint8_t addr[16];
	uint8_t mac[6];	  /**< zero unless reachable, stale or static */
	uint16_t port;	  /**< DPDK port, or LB_NEIGH_VIEW_NO_PORT */
	uint8_t state;	  /**< enum lb_neigh_state */
	uint8_t probes;	  /**< requests of the current round */
	uint8_t held;	  /**< packets waiting for the address */
	uint8_t pad[5];
	uint64_t age_ns;  /**< since last confirmed; UINT64_MAX: never */
};

/**
 * A worker's snapshot of its neighbour tables, in DPDK memory (struct
 * lb_shm_worker's @c neigh). A reader adds one to @c asked and waits for
 * @c answered to reach its value; the worker writes the snapshot in its
 * housekeeping (at most 1 ms later), with @c seq odd while it writes, so
 * a reader that saw @c seq change or odd copies again. Nothing is copied
 * while nobody asks.
 */
struct lb_neigh_view {
	_Atomic uint64_t asked;	   /**< readers: requests made */
	_Atomic uint64_t answered; /**< worker: the last request served */
	_Atomic uint64_t seq;	   /**< worker: odd while writing */
	struct lb_neigh_stats st[LB_NEIGH_VIEW_AFS];
	uint32_t nb[LB_NEIGH_VIEW_AFS];	  /**< entries written in e[] */
	uint32_t more[LB_NEIGH_VIEW_AFS]; /**< entries left out: no room */
	struct lb_neigh_view_entry e[LB_NEIGH_VIEW_AFS][LB_NEIGH_VIEW_MAX];
};

#endif /* LB_NEIGH_T_H */
