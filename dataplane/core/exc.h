/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_DP_EXC_H
#define LB_DP_EXC_H

/**
 * @file
 * The exception path: a kernel interface (a tap, DPDK's net_tap) per data
 * port, with the port's MAC address and its local addresses ("addr") and
 * routes, so that the host's own stack can talk on the data networks
 * while DPDK owns the NICs: health checks, BGP daemons, ping and ssh work
 * unchanged.
 *
 * Workers never touch the taps. What a worker has no use for and is
 * addressed to a local address goes into its "out" ring (a burst per
 * poll, single producer); what the kernel sends comes back through the
 * worker's "in" ring and leaves on the worker's own TX queue of the data
 * port. One service thread (lb-exc) moves frames between those rings and
 * the taps, sleeping in epoll on the taps' RX interrupts, and mirrors the
 * published addresses and routes into the kernel through rtnetlink. All
 * system calls of the exception path are that thread's.
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "dp.h"

#define LB_EXC_IFPREFIX_DEFAULT "lbx"

struct lb_exc;

/**
 * Creates a tap interface named @p prefix + port number per data port of
 * @p dp, with the port's MAC address and MTU, and the rings of every
 * worker (dp->w[] must exist; their exc_out and exc_in are set). Kernel
 * addresses follow the published table once lb_exc_start() runs.
 * @return the exception path, or NULL (errno set, a message logged).
 */
struct lb_exc *lb_exc_create(struct lb_dp *dp, const char *prefix);

/**
 * Starts the service thread. It reads published tables as RCU reader
 * @p rcu_id of dp->shm->qsbr (ignored without shm).
 * @return 0 or a negative errno.
 */
int lb_exc_start(struct lb_exc *x, unsigned int rcu_id);

/** Stops the thread, closes the taps (the kernel interfaces go). */
void lb_exc_free(struct lb_exc *x);

/** Registers the /lb/exception telemetry command. */
int lb_exc_telemetry_init(struct lb_exc *x);

/* ---- the workers' half ------------------------------------------------ */

/** Whether @p ip (network order) is one of our local addresses. */
static inline bool
lb_exc_local(const struct lb_dpconf *c, uint32_t ip)
{
	for (uint32_t i = 0; i < c->nb_addr; i++)
		if (c->addr[i].ip == ip)
			return true;
	return false;
}

/**
 * Whether IPv6 destination @p dst is the kernel's: one of our local
 * addresses, a link-local address (the dataplane has none of its own, the
 * kernel's interface has one), or all nodes (router advertisements, the
 * queries of multicast listener discovery).
 */
static inline bool
lb_exc_local6(const struct lb_dpconf *c, const uint8_t *dst)
{
	static const uint8_t all_nodes[16] = {0xff, 0x02, [15] = 1};

	if ((dst[0] == 0xfe && (dst[1] & 0xc0) == 0x80) ||
	    memcmp(dst, all_nodes, 16) == 0)
		return true;
	for (uint32_t i = 0; i < c->nb_addr6 && i < LB_CONF_MAX_ADDRS; i++)
		if (memcmp(c->addr6[i].ip, dst, 16) == 0)
			return true;
	return false;
}

/** Hands the queued frames to the service thread; a full ring drops. */
static inline void
lb_exc_flush(struct lb_worker *w)
{
	unsigned int n = w->exc_n, k;

	if (n == 0)
		return;
	k = rte_ring_sp_enqueue_burst(w->exc_out, (void **)w->exc_m, n, NULL);
	w->st.exc_to_kernel += k;
	if (unlikely(k < n)) {
		w->st.drop[LB_DROP_EXC_FULL] += n - k;
		rte_pktmbuf_free_bulk(&w->exc_m[k], n - k);
	}
	w->exc_n = 0;
}

/**
 * Queues @p m (m->port: the data port it came in on) for the kernel.
 * The caller checked that the exception path is on (w->exc_out).
 */
static inline void
lb_exc_put(struct lb_worker *w, struct rte_mbuf *m)
{
	if (w->exc_n == LB_BURST)
		lb_exc_flush(w);
	w->exc_m[w->exc_n++] = m;
}

#endif /* LB_DP_EXC_H */
