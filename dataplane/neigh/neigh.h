/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_NEIGH_H
#define LB_NEIGH_H

/**
 * @file
 * Per-worker IPv4 neighbour table (ARP cache) of the dataplane.
 *
 * The worker asks the table for the MAC of a next hop (a backend, a
 * gateway) before it transmits, and feeds it the ARP packets it receives.
 * The table decides when an ARP request is due; the worker builds and
 * sends it (lb_nat_arp_request()). One table per worker lcore: no locks,
 * and no allocation after lb_neigh_create(). Entries refer to each other
 * by 32-bit index, never by pointer.
 *
 * States and times (defaults follow Linux's neighbour subsystem,
 * net.ipv4.neigh.default.*):
 *  - INCOMPLETE: an address was looked up and has no MAC yet. A request
 *    is due at once, then again every retrans_ns (Linux retrans_time_ms,
 *    1 s) while unresolved: the table asks for at most one request per
 *    entry per retrans_ns, whoever asks (lookups or lb_neigh_poll()).
 *    After max_probes requests (Linux mcast_solicit, 3) and one more
 *    retrans_ns without an answer, the entry FAILS.
 *  - REACHABLE: a MAC learned (ARP reply or request) less than
 *    reachable_ns ago (Linux base_reachable_time_ms, 30 s; Linux draws the
 *    actual time between 0.5 and 1.5 times that at random, this table
 *    uses it as it is). Lookups hit.
 *  - STALE: a REACHABLE entry not confirmed for reachable_ns. Lookups
 *    still hit with the known MAC, and the first one (then at most one
 *    per retrans_ns) also asks for a request, sent unicast to that MAC to
 *    revalidate it, as Linux's PROBE state does (without Linux's 5 s
 *    DELAY: the dataplane has no upper-layer confirmation to wait for).
 *    After max_probes unanswered requests and one more retrans_ns the
 *    entry FAILS. An unused stale entry stays until evicted, as Linux
 *    keeps them below gc_thresh1.
 *  - FAILED: for failed_ns (default 5 s) lookups miss without asking for
 *    a request, so a dead neighbour costs at most max_probes requests per
 *    failed_ns + max_probes * retrans_ns; the first lookup after that
 *    starts resolving again. (Linux restarts at the next packet.)
 *  - STATIC: configured; never expires, never probed, never evicted, and
 *    never changed by what the network says (lb_neigh_learn() refuses).
 *
 * Hold queue: packets for an INCOMPLETE entry wait in the entry as opaque
 * 64-bit handles (up to hold_max, at most LB_NEIGH_HOLD_MAX = 4). When
 * the entry resolves, each handle goes to the release callback with the
 * MAC; when it fails, is evicted, deleted or flushed, with NULL (drop).
 *
 * Capacity is fixed. A new entry on a full table evicts the least
 * recently used non-static entry (an ARP cache is a cache, unlike the flow
 * table). Lookups make an entry most recently used; an entry first
 * created by lb_neigh_learn() (an unsolicited ARP) starts least recently
 * used, so a burst of ARP from many hosts churns one slot instead of
 * flushing the neighbours in use.
 *
 * Time is the caller's monotonic now_ns; a value older than one already
 * seen is taken as the newest seen. Addresses are IPv4 in network byte
 * order. Not thread-safe: one owner per table.
 */

#include <stdint.h>

#include "lb/neigh-t.h"

/** Default number of entries. */
#define LB_NEIGH_CAPACITY_DEFAULT 1024u
/** Largest capacity accepted. */
#define LB_NEIGH_CAPACITY_MAX (1u << 20)
/** Default reachable time: Linux base_reachable_time_ms, 30 s. */
#define LB_NEIGH_REACHABLE_DEFAULT_NS (30ull * 1000000000ull)
/** Default interval between requests: Linux retrans_time_ms, 1 s. */
#define LB_NEIGH_RETRANS_DEFAULT_NS 1000000000ull
/** Default requests before failing: Linux mcast_solicit, 3. */
#define LB_NEIGH_PROBES_DEFAULT 3u
/** Largest max_probes accepted. */
#define LB_NEIGH_PROBES_MAX 32u
/** Default hold-down of a failed entry: 5 s. */
#define LB_NEIGH_FAILED_DEFAULT_NS (5ull * 1000000000ull)
/** Largest value accepted for any of the times above: one day. */
#define LB_NEIGH_TIME_MAX_NS (86400ull * 1000000000ull)
/** Most handles held per unresolved entry (and the default). */
#define LB_NEIGH_HOLD_MAX 4u

/** What lb_neigh_lookup() found and what the caller should do. */
enum lb_neigh_result {
	/** MAC written: transmit. */
	LB_NEIGH_HIT = 0,
	/** MAC written (stale): transmit, and send an ARP request unicast
	 * to that MAC to revalidate it. */
	LB_NEIGH_HIT_PROBE,
	/** No MAC: send a broadcast ARP request now, hold the packet. */
	LB_NEIGH_MISS_SEND,
	/** No MAC, a request is out: hold the packet. */
	LB_NEIGH_MISS_PENDING,
	/** Resolution failed recently: drop the packet. */
	LB_NEIGH_MISS_FAILED,
};

/**
 * Receives a held handle: with the resolved MAC (set it, transmit), or
 * with NULL (resolution failed or the entry went away: drop). The table
 * cannot be changed from the callback (its functions answer -EBUSY).
 */
typedef void (*lb_neigh_release_cb)(void *arg, uint32_t ip, uint64_t handle,
				    const uint8_t *mac);

/** Configuration; zero fields take the defaults above. */
struct lb_neigh_conf {
	uint32_t capacity;     /**< entries, at most LB_NEIGH_CAPACITY_MAX */
	uint32_t max_probes;   /**< requests per resolution, at most 32 */
	uint32_t hold_max;     /**< handles per entry, at most 4 */
	uint64_t reachable_ns; /**< REACHABLE -> STALE after this */
	uint64_t retrans_ns;   /**< least time between two requests */
	uint64_t failed_ns;    /**< FAILED hold-down */
	uint64_t hash_seed;    /**< per table, random in the dataplane */
	lb_neigh_release_cb release; /**< needed for lb_neigh_hold() */
	void *release_arg;
	/** An IPv6 table: its addresses are IPv6 ones, given to the
	 * lb_neigh6_*() functions; the IPv4 ones refuse it (-EINVAL), and
	 * the other way round. */
	uint8_t ipv6;
};

/** A copy of one entry. */
struct lb_neigh_info {
	enum lb_neigh_state state; /**< as of the now_ns given */
	uint8_t mac[6];		   /**< zero unless REACHABLE/STALE/STATIC */
	uint8_t probes;		   /**< requests of the current round */
	uint8_t held;		   /**< handles waiting */
	uint64_t confirmed_ns;	   /**< last learned (0 if never) */
	uint64_t next_ns;	   /**< next request due / end of FAILED */
};

/** A worker's neighbour table (opaque). */
struct lb_neigh;

/**
 * Checks a configuration without creating anything.
 *
 * @return 0; -EINVAL on NULL; -ERANGE for a value beyond its maximum.
 */
int lb_neigh_conf_check(const struct lb_neigh_conf *conf);

/**
 * Creates an empty table. The only function that allocates.
 *
 * @param conf  NULL for the defaults.
 * @return the table, or NULL with errno EINVAL, ERANGE or ENOMEM.
 */
struct lb_neigh *lb_neigh_create(const struct lb_neigh_conf *conf);

/**
 * Frees @p t; NULL is accepted. Held handles are not released: call
 * lb_neigh_flush() first.
 */
void lb_neigh_free(struct lb_neigh *t);

/**
 * Resolves @p ip for a packet about to be sent (see the file comment for
 * the state machine). An unknown address gets an INCOMPLETE entry
 * (evicting the least recently used non-static entry if the table is
 * full) and LB_NEIGH_MISS_SEND. Makes the entry most recently used.
 *
 * @param mac  receives the MAC on LB_NEIGH_HIT and LB_NEIGH_HIT_PROBE.
 * @return an enum lb_neigh_result; -EINVAL on NULL or an address that is
 *   0.0.0.0, multicast, class E or broadcast; -ENOSPC if the table is
 *   full of static entries; -EBUSY from the release callback.
 */
int lb_neigh_lookup(struct lb_neigh *t, uint32_t ip, uint64_t now_ns,
		    uint8_t *mac);

/**
 * Queues @p handle on the INCOMPLETE entry of @p ip (after a
 * LB_NEIGH_MISS_SEND or LB_NEIGH_MISS_PENDING lookup).
 *
 * @return 0; -ENOSPC if the entry holds hold_max handles already (the
 *   caller drops @p handle; counted in hold_overflow); -ENOENT if @p ip
 *   has no entry; -EEXIST if it is resolved (transmit instead);
 *   -EHOSTUNREACH if it failed (drop); -EINVAL on NULL @p t or no release
 *   callback configured; -EBUSY from the release callback.
 */
int lb_neigh_hold(struct lb_neigh *t, uint32_t ip, uint64_t handle);

/**
 * Stores @p mac for @p ip, from an ARP reply or request the caller
 * accepted (its sender is on one of our connected subnets): the entry
 * becomes REACHABLE from @p now_ns, and if it was resolving, its held
 * handles are released with @p mac. An unknown address gets a new entry
 * (least recently used, see the file comment).
 *
 * @return 0; -EPERM if @p ip has a static entry (unchanged; counted in
 *   static_kept); -EINVAL on NULL, a bad address or a multicast or zero
 *   MAC; -ENOSPC if the table is full of static entries; -EBUSY from the
 *   release callback.
 */
int lb_neigh_learn(struct lb_neigh *t, uint32_t ip, const uint8_t *mac,
		   uint64_t now_ns);

/**
 * Sets a static entry (configuration), replacing whatever @p ip had;
 * handles it held are released with @p mac.
 *
 * @return 0; -EINVAL on NULL, a bad address or MAC; -ENOSPC if the table
 *   is full of static entries; -EBUSY from the release callback.
 */
int lb_neigh_set_static(struct lb_neigh *t, uint32_t ip, const uint8_t *mac);

/**
 * Removes the entry of @p ip, static or not; its held handles are
 * released with NULL.
 *
 * @return 0; -ENOENT; -EINVAL on NULL @p t; -EBUSY from the callback.
 */
int lb_neigh_delete(struct lb_neigh *t, uint32_t ip);

/**
 * Removes every non-static entry (for example when the link went down),
 * releasing held handles with NULL.
 *
 * @return the number of entries removed; -EINVAL; -EBUSY.
 */
int lb_neigh_flush(struct lb_neigh *t);

/**
 * The timer side of resolution, for entries no packet looks up: walks
 * the INCOMPLETE entries whose next request is due, oldest first. One
 * with requests left gets one more (its address is written to @p ips);
 * one without fails and releases its handles with NULL. Stops when @p max
 * addresses were written. Costs O(1) per entry handled plus one check.
 * Call it about every retrans_ns / 10.
 *
 * @return the number of addresses written to @p ips (send a broadcast
 *   request to each); -EINVAL (@p t NULL, or @p ips NULL with @p max
 *   > 0); -EBUSY from the release callback.
 */
int lb_neigh_poll(struct lb_neigh *t, uint64_t now_ns, uint32_t *ips,
		  uint32_t max);

/**
 * Copies the entry of @p ip, with its state as of @p now_ns, without
 * changing anything (for lbctl and tests).
 *
 * @return 0; -ENOENT; -EINVAL on NULL.
 */
int lb_neigh_get(const struct lb_neigh *t, uint32_t ip, uint64_t now_ns,
		 struct lb_neigh_info *out);

/**
 * Copies the counters.
 *
 * @return 0, or -EINVAL on NULL.
 */
int lb_neigh_stats(const struct lb_neigh *t, struct lb_neigh_stats *out);

/**
 * Receives one entry of lb_neigh_walk(): its address (4 bytes in network
 * order, or 16 in an IPv6 table) and a copy as lb_neigh_get() makes it.
 */
typedef void (*lb_neigh_walk_cb)(void *arg, const uint8_t *addr,
				 const struct lb_neigh_info *info);

/**
 * Hands every entry in use, static ones included, to @p cb, without
 * changing anything (for `lbctl neigh`). Costs O(capacity).
 *
 * @return the number of entries handed; -EINVAL on NULL.
 */
int lb_neigh_walk(const struct lb_neigh *t, uint64_t now_ns,
		  lb_neigh_walk_cb cb, void *arg);

/*
 * IPv6 tables (conf.ipv6): the same states, times, hold queue and
 * counters, for IPv6 next hops resolved by neighbour solicitations (RFC
 * 4861 7.3: INCOMPLETE, REACHABLE, STALE and PROBE as above). Addresses
 * are 16 bytes as in the packet; unspecified, loopback, multicast and
 * IPv4-mapped ones are refused (-EINVAL). The release callback's @c ip
 * is then a hash of the address, not an address.
 */

/** lb_neigh_lookup() for an IPv6 next hop. */
int lb_neigh6_lookup(struct lb_neigh *t, const uint8_t *ip6, uint64_t now_ns,
		     uint8_t *mac);
/** lb_neigh_hold() for an IPv6 next hop. */
int lb_neigh6_hold(struct lb_neigh *t, const uint8_t *ip6, uint64_t handle);
/** lb_neigh_learn() from an advertisement or a solicitation's option. */
int lb_neigh6_learn(struct lb_neigh *t, const uint8_t *ip6, const uint8_t *mac,
		    uint64_t now_ns);
/** lb_neigh_set_static() of an IPv6 neighbour. */
int lb_neigh6_set_static(struct lb_neigh *t, const uint8_t *ip6,
			 const uint8_t *mac);
/** lb_neigh_delete() of an IPv6 neighbour. */
int lb_neigh6_delete(struct lb_neigh *t, const uint8_t *ip6);
/** lb_neigh_poll(): the addresses to solicit are written to @p ips. */
int lb_neigh6_poll(struct lb_neigh *t, uint64_t now_ns, uint8_t (*ips)[16],
		   uint32_t max);
/** lb_neigh_get() of an IPv6 neighbour. */
int lb_neigh6_get(const struct lb_neigh *t, const uint8_t *ip6,
		  uint64_t now_ns, struct lb_neigh_info *out);

#endif /* LB_NEIGH_H */
