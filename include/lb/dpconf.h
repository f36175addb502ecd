/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_DPCONF_H
#define LB_DPCONF_H

/**
 * @file
 * The dataplane's compiled configuration: what a worker needs from the
 * desired configuration (struct lb_conf), in network byte order and in
 * shapes that answer the per-packet questions in a few loads: is this
 * destination a service, one of our SNAT addresses, an address we answer
 * ARP and ping for, and which port and next hop lead to an address.
 *
 * Built whole at configuration time and read-only afterwards, so every
 * worker can read it without synchronisation.
 */

#include <stdbool.h>
#include <stdint.h>

#include "lb/conf.h"
#include "lb/sched.h"

#define LB_DPCONF_SVC_SLOTS 256u /* power of two, > 2 x LB_CONF_MAX_SVCS */
#define LB_DPCONF_NONE (-1)

/** A backend as workers see it; addresses and ports in network order. */
struct lb_dpconf_be {
	uint32_t ip;
	uint16_t port;
	uint32_t weight;
	bool draining;
};

struct lb_dpconf_svc {
	uint8_t proto; /**< 6 (TCP) or 17 (UDP) */
	uint32_t vip;  /**< network order */
	uint16_t vport; /**< network order */
	struct lb_conf_svc_opts opts;
	const struct lb_sched_ops *sched;
	uint32_t nb_be;
	struct lb_dpconf_be be[LB_CONF_MAX_BES];
};

/** An address we own; @c mask is in network order. */
struct lb_dpconf_addr {
	uint32_t ip;
	uint32_t mask;
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
	uint32_t nb_svc, nb_addr, nb_snat, nb_route;
	struct lb_dpconf_svc svc[LB_CONF_MAX_SVCS];
	struct lb_dpconf_addr addr[LB_CONF_MAX_ADDRS];
	struct lb_dpconf_addr snat[LB_CONF_MAX_SNATS]; /**< mask unused */
	struct lb_dpconf_route route[LB_CONF_MAX_ROUTES]; /**< longest first */
	int16_t slot[LB_DPCONF_SVC_SLOTS]; /**< service index, -1 empty */
};

/**
 * Compiles @p c into @p d. Every scheduler named must be registered.
 * @return 0, -EINVAL (unknown scheduler, @p c invalid), with a message in
 * @p err.
 */
int lb_dpconf_build(struct lb_dpconf *d, const struct lb_conf *c, char *err,
		    size_t errlen);

static inline uint32_t
lb_dpconf_svc_hash(uint8_t proto, uint32_t vip, uint16_t vport)
{
	uint64_t x = ((uint64_t)vip << 24) ^ ((uint64_t)vport << 8) ^ proto;

	x *= 0x9e3779b97f4a7c15ULL;
	return (uint32_t)(x >> 40);
}

/** Index of the service at @p proto, @p vip, @p vport, or -1. */
static inline int
lb_dpconf_svc_find(const struct lb_dpconf *d, uint8_t proto, uint32_t vip,
		   uint16_t vport)
{
	uint32_t i = lb_dpconf_svc_hash(proto, vip, vport);

	for (uint32_t k = 0; k < LB_DPCONF_SVC_SLOTS; k++) {
		int s = d->slot[(i + k) & (LB_DPCONF_SVC_SLOTS - 1)];
		const struct lb_dpconf_svc *v;

		if (s < 0)
			return LB_DPCONF_NONE;
		v = &d->svc[s];
		if (v->vip == vip && v->vport == vport && v->proto == proto)
			return s;
	}
	return LB_DPCONF_NONE;
}

/** Index of SNAT address @p ip, or -1. */
static inline int
lb_dpconf_snat_find(const struct lb_dpconf *d, uint32_t ip)
{
	for (uint32_t i = 0; i < d->nb_snat; i++)
		if (d->snat[i].ip == ip)
			return (int)i;
	return LB_DPCONF_NONE;
}

/**
 * Whether we answer ARP and ICMP echo for @p ip on port @p port: a local
 * address or SNAT address of that port, or a VIP that lies in a connected
 * subnet of that port (or in none, when the VIP is routed to us).
 */
bool lb_dpconf_is_ours(const struct lb_dpconf *d, uint32_t ip, uint16_t port);

/**
 * The port and next hop for destination @p dst: @p dst itself when it
 * lies in a connected subnet, else the gateway of the longest matching
 * route. @p src receives our address on that port to use as ARP sender.
 * @return 0, -ENETUNREACH.
 */
int lb_dpconf_next_hop(const struct lb_dpconf *d, uint32_t dst,
		       uint16_t *port, uint32_t *nh, uint32_t *src);

#endif /* LB_DPCONF_H */
