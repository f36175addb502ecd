/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_SRC_BUDGET_T_H
#define LB_SRC_BUDGET_T_H

/**
 * @file
 * Types of the per-source budget of new flows (dataplane/admit/
 * src_budget.h): its setting, which lb-dataplane takes from its command
 * line and shows in shared memory, and its counters, which live in each
 * worker's counters (lb/shm.h). Apart from the module's API because
 * lb-control reads both without linking the dataplane.
 */

#include <stdint.h>

/*
 * Defaults: 10,000 new flows per second and a burst of 20,000 per client
 * address and worker. A browser opens 6 connections per host name, a
 * busy proxy or CGNAT address some thousands per second, and a load test
 * from one host (wrk with a new connection per request, the demo's own
 * traffic) more than 1000: the default must not bite any of them. With
 * RSS a client's flows spread over the workers, so the host-wide budget
 * is the worker count times this. One client sending new flows from new
 * ports (UDP needs no handshake) is still held at 10,000/s per worker,
 * below the 12,900/s that would hold every port of a SNAT address.
 */
#define LB_SRC_BUDGET_RATE_DEFAULT 10000u
#define LB_SRC_BUDGET_BURST_DEFAULT 20000u
#define LB_SRC_BUDGET_RATE_MAX 1000000u  /**< new flows/s per source */
#define LB_SRC_BUDGET_BURST_MAX 1000000u
/** Client addresses that share a budget: one address by default. */
#define LB_SRC_BUDGET_PREFIX_DEFAULT 32u
#define LB_SRC_BUDGET_PREFIX_MIN 8u
/** Sources a worker keeps budgets for (64 B per 4 of them). */
#define LB_SRC_BUDGET_SOURCES_DEFAULT 65536u
#define LB_SRC_BUDGET_SOURCES_MAX (1u << 24)

/** The setting: rate 0 turns the budget off. */
struct lb_src_budget_conf {
	uint32_t rate;	  /**< new flows per second per source, 0: off */
	uint32_t burst;	  /**< new flows a quiet source may open at once */
	uint32_t prefix;  /**< client addresses share a budget per /prefix */
	uint32_t sources; /**< table size per worker (rounded up to 4) */
};

/** One worker's counters. */
struct lb_src_budget_stats {
	uint64_t dropped; /**< first packets of new flows over budget */
	/** Sources whose entry another source took while their bucket
	 * was not yet full again (the table was full). */
	uint64_t evicted;
};

#endif /* LB_SRC_BUDGET_T_H */
