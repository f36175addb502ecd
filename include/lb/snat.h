/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_SNAT_H
#define LB_SNAT_H

/**
 * @file
 * SNAT (local) address and port allocation for full-NAT, one allocator per
 * worker.
 *
 * The port range [port_min, port_max] of every SNAT address is split
 * between the W workers by the port alone: worker w owns the ports p with
 * p mod W == w, on every address. A reply from a backend is addressed to
 * snat_ip:sport, so any worker can tell from the destination port which
 * worker owns the flow (lb_snat_owner()) and hand the packet over when
 * the NIC delivered it to the wrong queue. With W a power of two the owner
 * is the low log2(W) bits of the port, which a NIC flow rule can match
 * with a mask to steer replies to the right queue directly.
 *
 * A pair needs to be unique only per destination: a reply is found by
 * its whole key, backend ip:port -> snat ip:port, so one SNAT port can
 * carry a flow to every backend at once, as Linux's NAT does with
 * conntrack's tuple check. Each worker keeps, per address of its slice,
 * a count of the flows that hold each port and a cursor; an allocation
 * for a destination probes the ports from the cursor on and takes the
 * first one that no flow holds, or that the caller's lb_snat_taken_fn
 * (a flow table lookup of the reply key) says is free towards that
 * destination. At most LB_SNAT_TRIES ports are probed per address, the
 * addresses taken in turn, so an allocation costs O(1) and a lookup only
 * for a port that some flow holds. Ports run out per destination: a
 * flood towards one backend uses up that backend's ports and leaves
 * every other backend's free. The cursor goes round the slice, so a
 * released port is reused as late as possible (the backend may still
 * hold the old connection in TIME_WAIT), and the ports next in line are
 * the ones handed out longest ago: when LB_SNAT_TRIES of them in a row
 * are all still held towards the destination, that destination has used
 * up nearly all of its ports. The counts catch releases of pairs that no
 * flow holds.
 *
 * Addresses come and go while the allocator runs (lb_snat_addr_add(),
 * lb_snat_addr_del(), lb_snat_sync()): the memory holds max_addrs address
 * slots, each with its own counts and cursor. A removed address drains
 * like a backend: it hands out no new pair, the pairs in use stay valid
 * until they are released, and the slot is free again when the last one
 * is.
 * All memory is sized from the configuration and set up at init; like the
 * flow table the allocator holds no pointers, so it can live in shared
 * memory and its counters can be read by another process.
 *
 * Addresses and ports that come from or go into packets are in network
 * byte order; the configured port range is in host order.
 */

#include <arpa/inet.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LB_SNAT_PORT_MIN_DEFAULT 1024
#define LB_SNAT_PORT_MAX_DEFAULT 65535
/** Most SNAT addresses per allocator. */
#define LB_SNAT_MAX_ADDRS 256u
/** Most workers sharing the port range. */
#define LB_SNAT_MAX_WORKERS 1024u
/** lb_snat_owner() of a port outside the configured range. */
#define LB_SNAT_NO_OWNER UINT32_MAX
/** Most ports probed per address by one allocation. */
#define LB_SNAT_TRIES 32u
#define LB_SNAT_VERSION 3u
#define LB_SNAT_MAGIC 0x4c42534eu /* "LBSN" */

struct lb_snat_conf {
	/** SNAT IPv4 addresses to start with, network order; distinct and
	 * non-zero. NULL with nb_addrs 0 starts with none (max_addrs > 0). */
	const uint32_t *addrs;
	uint32_t nb_addrs;
	/** Inclusive port range in host order; both 0 means the default
	 * LB_SNAT_PORT_MIN_DEFAULT..LB_SNAT_PORT_MAX_DEFAULT. It must hold
	 * at least nb_workers ports, so that no worker's slice is empty. */
	uint16_t port_min;
	uint16_t port_max;
	/** Number of workers W sharing the range, and this worker's id. */
	uint32_t nb_workers;
	uint32_t worker_id;
	/** Where the cursor of each address starts, modulo the slice: a
	 * dataplane restarted under many short connections would otherwise
	 * hand out the pairs the backends still hold in TIME_WAIT from the
	 * previous run. 0 starts at the first pair. */
	uint32_t start;
	/** Address slots: most addresses in use or draining at once,
	 * nb_addrs..LB_SNAT_MAX_ADDRS; 0 means nb_addrs. */
	uint32_t max_addrs;
};

/** States of an address slot. */
enum lb_snat_addr_state {
	LB_SNAT_ADDR_FREE = 0,
	LB_SNAT_ADDR_ACTIVE,   /**< hands out pairs */
	LB_SNAT_ADDR_DRAINING, /**< removed: waits for its pairs to return */
};

/** One address slot: its address and the state of its ports. */
struct lb_snat_addr {
	uint32_t ip;      /**< network order; 0 when free */
	uint32_t state;   /**< enum lb_snat_addr_state */
	uint32_t head;    /**< slice position of the next port to probe */
	uint32_t nb_free; /**< ports that no flow holds */
	uint32_t nb_used; /**< pairs handed out: flows over all ports */
};

struct lb_snat_stats {
	uint64_t allocs;    /**< pairs handed out */
	uint64_t frees;     /**< pairs given back */
	uint64_t exhausted; /**< allocations refused: the ports next in
			     * line all held towards the destination */
	uint64_t bad_free;  /**< releases refused: double or foreign */
	uint64_t probes;    /**< ports probed that a flow held already */
};

/** Header of an allocator's memory block. */
struct lb_snat {
	uint32_t magic;
	uint32_t version;
	uint32_t max_addrs; /**< address slots */
	uint32_t nb_workers;
	uint32_t worker_id;
	uint16_t port_min; /**< host order */
	uint16_t port_max;
	uint16_t first_port; /**< lowest port of this worker's slice */
	uint16_t pad;
	uint32_t nb_ports; /**< ports per address in this worker's slice */
	uint32_t next;     /**< slot to take the next pair from, in turn */
	uint32_t start;    /**< the configuration's start */
	uint32_t pad2;
	uint64_t mem_size;
	uint64_t slots_off; /**< struct lb_snat_addr[max_addrs] */
	uint64_t refs_off;  /**< uint16_t[max_addrs][nb_ports]: holders */
	struct lb_snat_stats stats;
};

/** 0 if @p c is a valid configuration, else -EINVAL. */
int lb_snat_conf_check(const struct lb_snat_conf *c);

/** Bytes of an allocator for @p c, or 0 if @p c is not valid. */
size_t lb_snat_mem_size(const struct lb_snat_conf *c);

/**
 * Prepares @p mem (lb_snat_mem_size() bytes, 8-byte aligned) as the
 * allocator of worker c->worker_id, with its whole slice free.
 * @return 0 or -EINVAL (NULL or misaligned memory, invalid configuration:
 * no address slot, max_addrs below nb_addrs or above LB_SNAT_MAX_ADDRS,
 * a zero or repeated address, W = 0 or above
 * LB_SNAT_MAX_WORKERS, worker id >= W, port 0 in the range, inverted
 * range, or a range narrower than W)
 */
int lb_snat_init(void *mem, const struct lb_snat_conf *c);

/** Allocates and initialises an allocator; NULL with errno set. */
struct lb_snat *lb_snat_create(const struct lb_snat_conf *c);

void lb_snat_free(struct lb_snat *s);

/**
 * Checks that the @p len bytes at @p mem hold an allocator of this layout.
 * @return 0, -EINVAL or -EPROTO (another layout version)
 */
int lb_snat_check(const void *mem, size_t len);

/**
 * Whether pair (@p ip, @p port) (network order), held by some flow, is
 * held by one towards the destination the caller allocates for; @p arg
 * is the caller's (for the worker: its flow table and the backend).
 */
typedef bool lb_snat_taken_fn(void *arg, uint32_t ip, uint16_t port);

/**
 * Takes a pair of this worker's slice for a flow towards one destination:
 * from the next active address in turn, the first of the LB_SNAT_TRIES
 * ports next in line that no flow holds or that @p taken says is free
 * towards that destination. With @p taken NULL only ports that no flow
 * holds are handed out (one flow per port, whatever the destination).
 * @param ip set to the SNAT address, network order
 * @param port set to the port, network order
 * @return 0, -ENOSPC when the ports next in line are all held towards
 * the destination, or every address drains (counted in stats.exhausted),
 * or -EINVAL (NULL)
 */
int lb_snat_port_alloc(struct lb_snat *s, lb_snat_taken_fn *taken, void *arg,
		       uint32_t *ip, uint16_t *port);

/**
 * Gives back a pair obtained from lb_snat_port_alloc(), once per
 * allocation.
 * @return 0, or -EINVAL (counted in stats.bad_free) if @p ip is not a
 * SNAT address, @p port is not in this worker's slice, or no flow holds
 * the pair (a double free)
 */
int lb_snat_port_free(struct lb_snat *s, uint32_t ip, uint16_t port);

/**
 * Slot of SNAT address @p ip (network order), active or draining, or
 * -ENOENT. A scan of the slots.
 */
int lb_snat_addr_index(const struct lb_snat *s, uint32_t ip);

/**
 * Starts handing out pairs of @p ip (network order): a free slot gets the
 * address's whole slice; a draining address is active again.
 * @return 0, -EEXIST (already active), -ENOSPC (every slot taken) or
 * -EINVAL (NULL, address 0)
 */
int lb_snat_addr_add(struct lb_snat *s, uint32_t ip);

/**
 * Stops handing out pairs of @p ip: it drains, and its slot is free once
 * the last of its pairs is released (at once if none is in use).
 * @return 0 or -ENOENT (not active)
 */
int lb_snat_addr_del(struct lb_snat *s, uint32_t ip);

/**
 * Makes @p addrs (network order, @p n of them) the active addresses:
 * the others drain, the missing ones are added.
 * @return 0, or the number of addresses that found no free slot
 */
int lb_snat_sync(struct lb_snat *s, const uint32_t *addrs, uint32_t n);

/** enum lb_snat_addr_state of @p ip (FREE when it has no slot). */
enum lb_snat_addr_state lb_snat_addr_state(const struct lb_snat *s,
					   uint32_t ip);

/** Pairs of @p ip handed out and not released yet. */
uint32_t lb_snat_addr_used(const struct lb_snat *s, uint32_t ip);

/** Ports of this worker's slice that no flow holds, on active addresses. */
uint32_t lb_snat_nb_free(const struct lb_snat *s);

/** Ports in this worker's slice (active addresses x ports): the pairs
 * towards any one destination. */
uint32_t lb_snat_capacity(const struct lb_snat *s);

void lb_snat_stats_get(const struct lb_snat *s, struct lb_snat_stats *st);

/**
 * Worker that owns destination port @p port (network order) of a reply,
 * or LB_SNAT_NO_OWNER if the port is outside the SNAT range: port mod W,
 * the same answer from every worker's allocator.
 */
static inline uint32_t
lb_snat_owner(const struct lb_snat *s, uint16_t port)
{
	uint16_t p = ntohs(port);

	if (p < s->port_min || p > s->port_max)
		return LB_SNAT_NO_OWNER;
	return p % s->nb_workers;
}

#endif /* LB_SNAT_H */
