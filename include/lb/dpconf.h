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
 * worker can read it without synchronisation. It is part of the memory
 * shared with lb-control (include/lb/shm.h): plain data, no pointers.
 *
 * Slots are stable across versions: a service keeps its slot and a backend
 * its index for as long as it exists, because flow entries and per-backend
 * counters refer to them by index. A deleted service or backend keeps its
 * slot, marked deleted or removed, while flows still use it (the caller's
 * busy callback says so); only then can a new one take the slot.
 */

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "lb/conf.h"
#include "lb/dpconf-t.h"
#include "lb/sched.h"

/** The serialized header database of published table @p d, or NULL. */
static inline const void *
lb_dpconf_hdr_blob(const struct lb_dpconf *d)
{
	return d->hdr_len != 0 ? (const void *)(d + 1) : NULL;
}

/**
 * Whether flows still use service slot @p svc (@p be = UINT32_MAX) or
 * backend @p be of it, so that the slot cannot be given to another yet.
 */
typedef bool lb_dpconf_busy_fn(void *ctx, uint32_t svc, uint32_t be);

/**
 * Compiles @p c into @p d, keeping the slots of @p prev (NULL for the
 * first table). IPv4 entries go where they always went; IPv6 local and
 * SNAT addresses into addr6[] and snat6[], IPv6 routes into route6[]
 * (longest prefix first). An IPv6 service is an entry of svc[] with af
 * LB_CONF_AF_INET6, vip6 set and vip 0, left out of slot[] (the IPv4
 * lookup); its backends carry their own family (fnat66, fnat64). A
 * service keeps its slot, and a backend its index, only if family and
 * address are the same. Services and backends of @p prev that @p c no
 * longer has stay as LB_SVC_DELETED / LB_BE_REMOVED while @p busy says
 * flows use them (NULL: never busy). @p d->gen is @p prev->gen + 1 (1 for the first).
 * Every scheduler named must be registered.
 * @return 0; -EINVAL (unknown scheduler); -ENOSPC (every free slot is
 * still busy); with a message in @p err.
 */
int lb_dpconf_compile(struct lb_dpconf *d, const struct lb_conf *c,
		      const struct lb_dpconf *prev, lb_dpconf_busy_fn *busy,
		      void *ctx, char *err, size_t errlen);

/** The first table: lb_dpconf_compile() without a previous one. */
int lb_dpconf_build(struct lb_dpconf *d, const struct lb_conf *c, char *err,
		    size_t errlen);

/** Whether flows still use SNAT address @p ip (network order). */
typedef bool lb_dpconf_snat_busy_fn(void *ctx, uint32_t ip);

/**
 * Keeps in @p d, draining, each SNAT address of @p prev that @p d no
 * longer has while @p busy says flows use it: no new flow takes it, and
 * its replies are still recognised. Room permitting (LB_CONF_MAX_SNATS
 * with the configured ones). Call after lb_dpconf_compile().
 * @return addresses kept
 */
unsigned int lb_dpconf_snat_keep(struct lb_dpconf *d,
				 const struct lb_dpconf *prev,
				 lb_dpconf_snat_busy_fn *busy, void *ctx);

/** Whether @p d keeps a draining SNAT address that no flow uses now. */
bool lb_dpconf_snat_gc_due(const struct lb_dpconf *d,
			   lb_dpconf_snat_busy_fn *busy, void *ctx);

/** Whether flows still use IPv6 SNAT address @p ip (16 bytes). */
typedef bool lb_dpconf_snat6_busy_fn(void *ctx, const uint8_t *ip);

/**
 * lb_dpconf_snat_keep() for the IPv6 SNAT addresses (snat6[]): each of
 * @p prev that @p d no longer has stays, draining, while @p busy says
 * flows use it. @return addresses kept
 */
unsigned int lb_dpconf_snat6_keep(struct lb_dpconf *d,
				  const struct lb_dpconf *prev,
				  lb_dpconf_snat6_busy_fn *busy, void *ctx);

/** Whether @p d keeps a draining IPv6 SNAT address no flow uses now. */
bool lb_dpconf_snat6_gc_due(const struct lb_dpconf *d,
			    lb_dpconf_snat6_busy_fn *busy, void *ctx);

/** Whether backend @p be of service @p s takes new flows of pool
 * @p pool: those content routing sends there (delayed binding). */
static inline bool
lb_dpconf_be_eligible_pool(const struct lb_dpconf_svc *s, uint32_t be,
			   uint32_t pool)
{
	return be < s->nb_be && s->be[be].state == LB_BE_ACTIVE &&
	       s->be[be].health == LB_BE_HEALTH_UP && s->be[be].pool == pool;
}

/**
 * Whether backend @p be of service @p s takes new flows chosen at their
 * SYN: those of the service's own pool only. A backend of a named pool
 * gets a connection only when content routing chooses its pool, which
 * needs the first data of the connection, not the SYN.
 */
static inline bool
lb_dpconf_be_eligible(const struct lb_dpconf_svc *s, uint32_t be)
{
	return lb_dpconf_be_eligible_pool(s, be, 0);
}

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
 * Whether @p ip is one of our own addresses on any port: a local address,
 * a SNAT address or the VIP of a service (deleted ones included, while
 * their flows run). No packet from outside may carry it as its source.
 */
bool lb_dpconf_is_own(const struct lb_dpconf *d, uint32_t ip);

/**
 * The port and next hop for destination @p dst: @p dst itself when it
 * lies in a connected subnet, else the gateway of the longest matching
 * route. @p src receives our address on that port to use as ARP sender.
 * @return 0, -ENETUNREACH.
 */
int lb_dpconf_next_hop(const struct lb_dpconf *d, uint32_t dst,
		       uint16_t *port, uint32_t *nh, uint32_t *src);

/** The key of table service @p v, in the host order of lb/conf.h. */
static inline struct lb_conf_svc_key
lb_dpconf_svc_key(const struct lb_dpconf_svc *v)
{
	struct lb_conf_svc_key k = {.proto = v->proto, .af = v->af,
				    .port = ntohs(v->vport)};

	if (v->af == LB_CONF_AF_INET6)
		memcpy(k.vip6, v->vip6, LB_CONF_IP6_LEN);
	else
		k.vip = ntohl(v->vip);
	return k;
}

/** The address of table backend @p b, in the host order of lb/conf.h. */
static inline struct lb_conf_ip
lb_dpconf_be_addr(const struct lb_dpconf_be *b)
{
	return lb_conf_ip_of(b->af, ntohl(b->ip), b->ip6);
}

#endif /* LB_DPCONF_H */
