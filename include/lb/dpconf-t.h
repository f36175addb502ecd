/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_DPCONF_T_H
#define LB_DPCONF_T_H

/**
 * @file
 * The compiled configuration's types (dpconf.h): the table lb-control
 * publishes into shared memory and every worker reads.
 */

#include <stddef.h>
#include <stdint.h>

#include "lb/conf-t.h"
#include "lb/route_flat-t.h"

#define LB_DPCONF_SVC_SLOTS 256u /* power of two, > 2 x LB_CONF_MAX_SVCS */
#define LB_DPCONF_NONE (-1)

enum lb_dpconf_svc_state {
	LB_SVC_EMPTY = 0, /**< free slot */
	LB_SVC_ACTIVE,    /**< takes new flows */
	LB_SVC_DELETED,   /**< gone from the configuration, flows remain */
};

enum lb_dpconf_be_state {
	LB_BE_EMPTY = 0, /**< free slot */
	LB_BE_ACTIVE,    /**< eligible for new flows */
	LB_BE_DRAINING,  /**< drained: existing flows only */
	LB_BE_REMOVED,   /**< deleted, its flows run out */
};

/** What lb-control's health checks say of a backend
 * (control/health/health.h). */
enum lb_dpconf_be_health {
	LB_BE_HEALTH_UP = 0, /**< healthy, or not checked */
	LB_BE_HEALTH_DOWN,   /**< pending or failed: no new flows */
};

/** A backend as workers see it; addresses and ports in network order. */
struct lb_dpconf_be {
	uint8_t af; /**< enum lb_conf_af: which of ip and ip6 */
	uint8_t ip6[LB_CONF_IP6_LEN];
	/** Its pool: 0 the service's own (the one new flows take), i the
	 * named pool pools[].pool[i] of its service. In the padding before
	 * ip: a backend stays 36 bytes. */
	uint8_t pool;
	uint32_t ip;
	uint16_t port;
	uint8_t state;	/**< enum lb_dpconf_be_state */
	uint8_t health; /**< enum lb_dpconf_be_health */
	uint32_t weight;
	/**
	 * Times lb-control's health checks brought this backend back up
	 * (down or pending to up); carried from table to table. A worker
	 * that sees it change, or the health go from down to up, forgets
	 * the errors it counted for the backend: they were about the
	 * instance that failed, not the one that now passes its check.
	 */
	uint32_t up_gen;
};

/**
 * A pool of a service: its name and scheduler, and the members' count
 * and weight sum (of the backends not removed), for lb-control's views.
 * Its members are the backends whose @c pool is its index.
 */
struct lb_dpconf_pool {
	char name[LB_CONF_POOL_NAME_LEN + 1];
	char sched[LB_CONF_SCHED_LEN + 1];
	uint32_t nb_be;
	uint64_t weight_sum;
};

struct lb_dpconf_svc {
	uint8_t state;  /**< enum lb_dpconf_svc_state */
	uint8_t proto;  /**< 6 (TCP) or 17 (UDP) */
	uint16_t vport; /**< network order */
	uint32_t vip;   /**< network order */
	uint8_t af;	/**< enum lb_conf_af: which of vip and vip6 */
	uint8_t vip6[LB_CONF_IP6_LEN];
	struct lb_conf_svc_opts opts; /**< opts.sched names the scheduler */
	uint32_t nb_be; /**< backend slots in use: highest index + 1 */
	struct lb_dpconf_be be[LB_CONF_MAX_BES];
};

/** The pools and content routing rules of a service slot. */
struct lb_dpconf_pools {
	/** Pools: pool[0] the service's own (named "default", with
	 * opts.sched), then its named pools in their order. */
	uint32_t nb_pool;
	struct lb_dpconf_pool pool[LB_CONF_MAX_POOLS + 1];
	/** Its content routing rules, compiled (route_rules.h matches on
	 * them); no rules and a default to pool 0 for a service without. */
	struct lb_route_flat rules;
};

/** An address we own; @c mask is in network order. */
struct lb_dpconf_addr {
	uint32_t ip;
	uint32_t mask;
	uint16_t port;
	/** A SNAT address removed from the configuration whose flows have
	 * not all ended: no new flow takes it, replies to it are still
	 * ours (lb_dpconf_snat_keep()). Unused for other addresses. */
	uint8_t draining;
};

/** An IPv6 address we own (local or SNAT), with its prefix length. */
struct lb_dpconf_addr6 {
	uint8_t ip[LB_CONF_IP6_LEN];
	uint8_t len;
	/** As lb_dpconf_addr's: a SNAT address on its way out. */
	uint8_t draining;
	uint16_t port;
};

/** An IPv6 route: next hop @c gw on @c port for @c net / @c len. */
struct lb_dpconf_route6 {
	uint8_t net[LB_CONF_IP6_LEN];
	uint8_t gw[LB_CONF_IP6_LEN];
	uint8_t len;
	uint16_t port;
};

struct lb_dpconf_route {
	uint32_t net;
	uint32_t mask;
	uint8_t len;
	uint32_t gw;
	uint16_t port;
};

struct lb_dpconf {
	uint64_t gen;   /**< generation: grows with every published table */
	uint32_t nb_svc; /**< service slots in use: highest slot + 1 */
	uint32_t nb_addr, nb_snat, nb_route;
	struct lb_dpconf_svc svc[LB_CONF_MAX_SVCS];
	struct lb_dpconf_addr addr[LB_CONF_MAX_ADDRS];
	struct lb_dpconf_addr snat[LB_CONF_MAX_SNATS]; /**< mask unused */
	struct lb_dpconf_route route[LB_CONF_MAX_ROUTES]; /**< longest first */
	/* IPv6: the same roles, apart so that IPv4's lookups stay as
	 * they were. Services and backends carry their family. */
	uint32_t nb_addr6, nb_snat6, nb_route6;
	struct lb_dpconf_addr6 addr6[LB_CONF_MAX_ADDRS];
	struct lb_dpconf_addr6 snat6[LB_CONF_MAX_SNATS];
	struct lb_dpconf_route6 route6[LB_CONF_MAX_ROUTES]; /**< longest first */
	int16_t slot[LB_DPCONF_SVC_SLOTS]; /**< service index, -1 empty */
	/** 802.1Q VLAN id of each port (host order), 0: untagged. */
	uint16_t port_vlan[LB_CONF_PORT_MAX + 1];
	/**
	 * The header scanner's database for the http services, serialized
	 * (lb_hdr_conf_blob()): hdr_len bytes that follow the published
	 * table in the same allocation (lb_dpconf_hdr_blob()); a worker's
	 * copy of the table has only these two fields. hdr_len 0: the
	 * dataplane's own database. hdr_id is lb_hdr_db_blob_id() of it.
	 */
	uint64_t hdr_id;
	uint64_t hdr_len;
	/**
	 * The pools and rules of each service slot, last: a worker's copy
	 * of the table stops before them (LB_DPCONF_WORKER_COPY): its
	 * schedulers choose among the backends of a service's own pool
	 * (be[].pool), and delayed binding copies the rules of only the
	 * services that have some (worker_bind.c). With them each switch
	 * would copy 1.14 MB instead of 0.67 MB, four times as long
	 * (docs/dataplane.md, "Table changes and schedulers").
	 */
	struct lb_dpconf_pools pools[LB_CONF_MAX_SVCS];
};

/** Bytes of a table a worker copies when it takes it up. */
#define LB_DPCONF_WORKER_COPY offsetof(struct lb_dpconf, pools)

/**
 * Room for the header database behind a published table: 16 fields of
 * 64-byte names serialize to about 27 KiB with Hyperscan 5.4.
 */
#define LB_DPCONF_HDR_MAX (64u * 1024u)
/** Bytes of a table slot in shared memory: the table and that room. */
#define LB_DPCONF_SLOT_SIZE (sizeof(struct lb_dpconf) + LB_DPCONF_HDR_MAX)

#endif /* LB_DPCONF_T_H */
