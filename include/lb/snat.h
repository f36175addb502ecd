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
 * Each worker hands out (address, port) pairs of its slice in FIFO order:
 * allocation and release are O(1), consecutive allocations rotate over
 * the addresses, and a released pair goes to the back of the queue, so it
 * is reused as late as possible (the backend may still hold the old
 * connection in TIME_WAIT). A bitmap catches double and foreign releases.
 * All memory is sized from the configuration and set up at init; like the
 * flow table the allocator holds no pointers, so it can live in shared
 * memory and its counters can be read by another process.
 *
 * Addresses and ports that come from or go into packets are in network
 * byte order; the configured port range is in host order.
 */

#include <arpa/inet.h>
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
#define LB_SNAT_VERSION 1u
#define LB_SNAT_MAGIC 0x4c42534eu /* "LBSN" */

struct lb_snat_conf {
	/** SNAT IPv4 addresses, network order; distinct and non-zero. */
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
	/** Where the queue of free pairs starts, taken modulo its length: a
	 * dataplane restarted under many short connections would otherwise
	 * hand out the pairs the backends still hold in TIME_WAIT from the
	 * previous run. 0 starts at the first pair. */
	uint32_t start;
};

struct lb_snat_stats {
	uint64_t allocs;    /**< pairs handed out */
	uint64_t frees;     /**< pairs given back */
	uint64_t exhausted; /**< allocations refused: slice used up */
	uint64_t bad_free;  /**< releases refused: double or foreign */
};

/** Header of an allocator's memory block. */
struct lb_snat {
	uint32_t magic;
	uint32_t version;
	uint32_t nb_addrs;
	uint32_t nb_workers;
	uint32_t worker_id;
	uint16_t port_min; /**< host order */
	uint16_t port_max;
	uint16_t first_port; /**< lowest port of this worker's slice */
	uint16_t pad;
	uint32_t nb_ports; /**< ports per address in this worker's slice */
	uint32_t nb_items; /**< nb_addrs x nb_ports pairs */
	uint32_t head;     /**< queue position of the next pair to hand out */
	uint32_t nb_free;  /**< pairs in the queue */
	uint32_t addr_mask; /**< address hash slots - 1 */
	uint64_t mem_size;
	uint64_t addrs_off; /**< uint32_t[nb_addrs], network order */
	uint64_t hash_off;  /**< uint16_t[addr_mask + 1]: address index + 1 */
	uint64_t queue_off; /**< uint32_t[nb_items]: free pairs, FIFO */
	uint64_t used_off;  /**< uint64_t bitmap of pairs handed out */
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
 * no address, a zero or repeated address, W = 0 or above
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
 * Takes the next free (address, port) pair of this worker's slice.
 * @param ip set to the SNAT address, network order
 * @param port set to the port, network order
 * @return 0, -ENOSPC when the slice is used up (counted in
 * stats.exhausted), or -EINVAL (NULL)
 */
int lb_snat_port_alloc(struct lb_snat *s, uint32_t *ip, uint16_t *port);

/**
 * Gives back a pair obtained from lb_snat_port_alloc().
 * @return 0, or -EINVAL (counted in stats.bad_free) if @p ip is not a
 * SNAT address, @p port is not in this worker's slice, or the pair is not
 * allocated (a double free)
 */
int lb_snat_port_free(struct lb_snat *s, uint32_t ip, uint16_t port);

/** Index of SNAT address @p ip (network order) or -ENOENT. O(1). */
int lb_snat_addr_index(const struct lb_snat *s, uint32_t ip);

/** Pairs currently free in this worker's slice. */
uint32_t lb_snat_nb_free(const struct lb_snat *s);

/** Pairs in this worker's slice (addresses x ports). */
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
