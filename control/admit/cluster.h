/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_CLUSTER_H
#define LB_CLUSTER_H

/**
 * @file
 * The cluster tier of admission control: several load balancer hosts
 * (behind ECMP) share one limit per service through Redis. lb-control
 * tops up each `admit-cluster` service's global bucket (lb/admit.h), which
 * does not refill with time, by borrowing batches from a token bucket kept
 * in Redis: one round trip (an atomic Lua script) per batch, the way a
 * worker borrows from its host. The batch is the linearly weighted average
 * of the host's recent demand (lb_tb_wavg(), the seed's claim 12).
 *
 * When Redis cannot be reached the host keeps spending what it holds;
 * then `open` services refill locally at their rate (each host alone
 * admits up to the rate) and `closed` ones admit nothing more, their
 * rejections counted as cluster-down.
 */

#include <stdint.h>

/** Period of lb_cluster_tick(), and the host's view of demand. */
#define LB_CLUSTER_TICK_NS 10000000ULL

/** Counters of the cluster tier (in lb-control's counters). */
struct lb_cluster_stats {
	uint64_t borrows; /**< batches asked of Redis and answered */
	uint64_t tokens;  /**< tokens Redis gave */
	uint64_t errors;  /**< failed connections or commands */
	uint64_t local;	  /**< tokens refilled locally while down (open) */
	uint64_t down_ms; /**< time spent unreachable */
	uint64_t down;	  /**< 1 while Redis is unreachable */
};

struct lb_cluster;
struct lb_admit_shm;
struct lb_dpconf;

/**
 * A client of the Redis server at @p host:@p port (connected lazily, again
 * at most twice a second while down) counting into @p st.
 * @return the client, or NULL with errno EINVAL or ENOMEM.
 */
struct lb_cluster *lb_cluster_create(const char *host, uint16_t port,
				     struct lb_cluster_stats *st);

void lb_cluster_free(struct lb_cluster *cl);

/**
 * Tops up the global bucket of every active `admit-cluster` service of
 * table @p d in @p sh; call every LB_CLUSTER_TICK_NS. Blocks at most for
 * Redis's timeout (200 ms) when the server stops answering.
 */
void lb_cluster_tick(struct lb_cluster *cl, struct lb_admit_shm *sh,
		     const struct lb_dpconf *d, uint64_t now_ns);

/**
 * Parses "HOST:PORT" into @p host (of @p len bytes) and @p port.
 * @return 0 or -EINVAL.
 */
int lb_cluster_parse_addr(const char *s, char *host, unsigned int len,
			  uint16_t *port);

#endif /* LB_CLUSTER_H */
