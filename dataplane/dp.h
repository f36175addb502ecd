/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_DP_H
#define LB_DP_H

/*
 * State of the lb-dataplane process: what every worker reads (struct
 * lb_dp, read-only once the workers run) and what each worker owns
 * (struct lb_worker, written only by its lcore; other threads only read
 * its counters).
 */

#include <stdint.h>

#include <rte_common.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "lb/deferq.h"
#include "lb/dpconf.h"
#include "lb/flow_table.h"
#include "lb/neigh.h"
#include "lb/pkt_parse.h"
#include "lb/rng.h"
#include "lb/snat.h"
#include "port.h"

#define LB_BURST 32
#define LB_MAX_PORTS 4
#define LB_MAX_WORKERS 16
#define LB_HOLD_NONE UINT32_MAX

/* Why a packet was dropped after it parsed correctly. */
enum lb_drop {
	LB_DROP_NOT_OURS,    /**< not for a service, SNAT or local address */
	LB_DROP_NO_FLOW,     /**< TCP without SYN, or a reply, with no flow */
	LB_DROP_NO_BACKEND,  /**< service has no eligible backend, no queue */
	LB_DROP_FLOW_FULL,   /**< flow table full: new flow refused */
	LB_DROP_SNAT_FULL,   /**< no SNAT port left: new flow refused */
	LB_DROP_NO_ROUTE,    /**< no connected subnet or route to the peer */
	LB_DROP_NEIGH,       /**< next hop unresolved and its queue full */
	LB_DROP_REDIRECT,    /**< redirect ring to the owning worker full */
	LB_DROP_DEFERQ_FULL, /**< deferred queue full: SYN refused */
	LB_DROP_ICMP,        /**< ICMP we neither answer nor translate */
	LB_DROP_TX,          /**< the port did not take the packet */
	LB_DROP_NOMBUF,      /**< no mbuf for a copy or an ARP request */
	LB_DROP_TTL,         /**< arrived with TTL 0 or 1: would loop */
	LB_DROP_MAX,
};

const char *lb_drop_name(enum lb_drop d);

struct lb_worker_stats {
	uint64_t rx;
	uint64_t tx;
	uint64_t verdict[LB_PKT_VERDICT_MAX]; /**< parser outcomes */
	uint64_t drop[LB_DROP_MAX];
	uint64_t flows_created;
	uint64_t syn_retries;   /**< SYNs re-sent to the next backend */
	uint64_t deferred;      /**< SYNs queued after every trial failed */
	uint64_t deferq_joined; /**< retransmitted SYNs joining their entry */
	uint64_t rst_sent;      /**< RSTs answered to clients */
	uint64_t redirect_out;  /**< replies handed to their owning worker */
	uint64_t redirect_in;
	uint64_t arp_replies;
	uint64_t arp_requests;
	uint64_t echo_replies;
	uint64_t icmp_translated;
	uint64_t idle_sleeps;
} __rte_cache_aligned;

/** Per worker, per service, per backend. */
struct lb_be_stats {
	uint64_t flows;  /**< flows created toward this backend */
	int64_t active;  /**< flows in this worker's table now */
	uint64_t errors; /**< failed trials (RST, ICMP, SYN timeout) */
};

/** A learnt neighbour, broadcast to the other workers. */
struct lb_neigh_msg {
	uint32_t ip;
	uint8_t mac[6];
	uint16_t port;
};

/* What survives of a flow whose trial failed, to start the next trial. */
struct lb_trial {
	struct lb_flow_key orig;
	uint32_t snat_ip;
	uint16_t snat_port;
	uint16_t svc;
	uint32_t be;
	uint32_t trials;
	uint32_t hold; /**< SYN copy, or LB_HOLD_NONE */
};

#define LB_EXPIRE_BUDGET 512u

struct lb_dp;

struct lb_worker {
	struct lb_dp *dp;
	uint16_t wid;
	unsigned int lcore;
	struct lb_flow_table *ft;
	struct lb_snat *snat;
	struct lb_neigh *neigh;
	struct rte_ring *redirect; /**< mbufs of our flows from others */
	struct rte_ring *neigh_in; /**< struct lb_neigh_msg from others */
	struct lb_xoshiro xo;
	struct lb_rng rng;
	void *sched[LB_CONF_MAX_SVCS];
	struct lb_deferq *deferq[LB_CONF_MAX_SVCS];
	struct lb_be_stats *bst[LB_CONF_MAX_SVCS];
	/* SYN copies kept for retries, indexed by flow->l7 */
	struct rte_mbuf **hold;
	uint32_t *hold_free;
	uint32_t hold_cap, hold_nfree;
	uint64_t next_house_ns;
	unsigned int nb_pending;
	struct lb_trial pending[LB_EXPIRE_BUDGET]; /**< SYN timeouts */
	uint32_t idle_loops;
	struct {
		uint16_t n;
		struct rte_mbuf *m[LB_BURST];
	} tx[LB_MAX_PORTS];
	struct lb_worker_stats st;
} __rte_cache_aligned;

struct lb_dp {
	struct lb_dpconf *conf;
	struct rte_mempool *pool;
	uint16_t nb_ports;
	struct lb_port_info port[LB_MAX_PORTS];
	uint16_t nb_workers;
	struct lb_worker *w[LB_MAX_WORKERS];
	double ns_per_tsc;
	uint64_t hash_seed; /**< flow hash for maglev: same on every worker */
	uint32_t idle_us;   /**< longest sleep when idle; 0 = busy poll */
	uint32_t flows;     /**< flow table capacity per worker */
	volatile int quit;
};

/** Allocates and initialises worker @p wid's state. */
struct lb_worker *lb_worker_create(struct lb_dp *dp, uint16_t wid,
				   unsigned int lcore);
void lb_worker_free(struct lb_worker *w);

/**
 * One iteration of a worker's loop: a burst from each port queue and the
 * redirect ring, housekeeping when due, transmit. Returns packets handled.
 */
unsigned int lb_worker_poll(struct lb_worker *w);

/** The worker loop for rte_eal_remote_launch(); runs until dp->quit. */
int lb_worker_main(void *arg);

/** Registers the /lb/ telemetry commands. */
int lb_telemetry_init(struct lb_dp *dp);

#endif /* LB_DP_H */
