/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_DPCONF6_H
#define LB_DPCONF6_H

/**
 * @file
 * The IPv6 questions a worker asks of a compiled table: which service an
 * IPv6 VIP and port are, whether an address is ours, where a packet to
 * an address goes. Beside lb_dpconf_*() (dpconf.h), which answer them
 * for IPv4 from the table's own index: an IPv6 service (af
 * LB_CONF_AF_INET6) is not in the table's slot[], so each worker builds
 * its own index of them (struct lb_dpconf6_svc_index) when it takes up a
 * table, and IPv4's lookups stay what they were. Pure C, no DPDK.
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "lb/dpconf.h"

/** Slots of the IPv6 service index: load 1/2 at most. */
#define LB_DPCONF6_SVC_SLOTS (2u * LB_CONF_MAX_SVCS)

/** Open addressing over the active IPv6 services of one table. */
struct lb_dpconf6_svc_index {
	uint32_t nb;				/**< services indexed */
	int16_t slot[LB_DPCONF6_SVC_SLOTS];	/**< service index, -1 empty */
};

/** Hash of an IPv6 service's key, for its index. */
static inline uint32_t
lb_dpconf6_svc_hash(uint8_t proto, const uint8_t vip6[16], uint16_t vport)
{
	uint64_t w[2];
	uint64_t x;

	memcpy(w, vip6, sizeof(w));
	x = (w[0] ^ (w[1] * 0xbf58476d1ce4e5b9ULL) ^ ((uint64_t)vport << 8) ^
	     proto) * 0x9e3779b97f4a7c15ULL;
	return (uint32_t)(x >> 40);
}

/** Indexes the active IPv6 services of @p d into @p ix. */
void lb_dpconf6_svc_index_build(struct lb_dpconf6_svc_index *ix,
				const struct lb_dpconf *d);

/** Index of the IPv6 service at @p proto, @p vip6, @p vport, or -1. */
static inline int
lb_dpconf6_svc_find(const struct lb_dpconf6_svc_index *ix,
		    const struct lb_dpconf *d, uint8_t proto,
		    const uint8_t vip6[16], uint16_t vport)
{
	uint32_t i = lb_dpconf6_svc_hash(proto, vip6, vport);

	if (ix->nb == 0)
		return LB_DPCONF_NONE;
	for (uint32_t k = 0; k < LB_DPCONF6_SVC_SLOTS; k++) {
		int s = ix->slot[(i + k) & (LB_DPCONF6_SVC_SLOTS - 1)];
		const struct lb_dpconf_svc *v;

		if (s < 0)
			return LB_DPCONF_NONE;
		v = &d->svc[s];
		if (v->vport == vport && v->proto == proto &&
		    memcmp(v->vip6, vip6, 16) == 0)
			return s;
	}
	return LB_DPCONF_NONE;
}

/** Index of IPv6 SNAT address @p ip in snat6[], or -1. */
int lb_dpconf6_snat_find(const struct lb_dpconf *d, const uint8_t ip[16]);

/**
 * Whether we answer neighbour solicitations and echo requests for @p ip
 * on port @p port: a local or SNAT address of that port, or the VIP of
 * an active IPv6 service that lies in a connected prefix of that port
 * (or in none, when the VIP is routed to us). As lb_dpconf_is_ours().
 */
bool lb_dpconf6_is_ours(const struct lb_dpconf *d, const uint8_t ip[16],
			uint16_t port);

/**
 * Whether @p ip is one of our own IPv6 addresses on any port (local,
 * SNAT, a VIP of a service not empty): no packet from outside may carry
 * it as its source. As lb_dpconf_is_own().
 */
bool lb_dpconf6_is_own(const struct lb_dpconf *d, const uint8_t ip[16]);

/**
 * The port and next hop for IPv6 destination @p dst: @p dst itself when
 * it lies in a connected prefix, else the gateway of the longest
 * matching route (itself resolved through a connected prefix). @p src
 * receives our address on that port, the source of solicitations.
 * @return 0, -ENETUNREACH.
 */
int lb_dpconf6_next_hop(const struct lb_dpconf *d, const uint8_t dst[16],
			uint16_t *port, uint8_t nh[16], uint8_t src[16]);

/** Whether @p a and @p b share their first @p len bits. */
bool lb_dpconf6_prefix_eq(const uint8_t a[16], const uint8_t b[16],
			  unsigned int len);

#endif /* LB_DPCONF6_H */
