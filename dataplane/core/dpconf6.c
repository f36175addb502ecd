/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>

#include "dpconf6.h"

bool
lb_dpconf6_prefix_eq(const uint8_t a[16], const uint8_t b[16],
		     unsigned int len)
{
	unsigned int n = len > 128 ? 16 : len / 8, r = len > 128 ? 0 : len % 8;

	if (memcmp(a, b, n) != 0)
		return false;
	return r == 0 || ((a[n] ^ b[n]) & (uint8_t)(0xff00 >> r)) == 0;
}

void
lb_dpconf6_svc_index_build(struct lb_dpconf6_svc_index *ix,
			   const struct lb_dpconf *d)
{
	memset(ix->slot, 0xff, sizeof(ix->slot));
	ix->nb = 0;
	for (uint32_t i = 0; i < d->nb_svc && i < LB_CONF_MAX_SVCS; i++) {
		const struct lb_dpconf_svc *v = &d->svc[i];
		uint32_t h;

		if (v->state != LB_SVC_ACTIVE || v->af != LB_CONF_AF_INET6)
			continue;
		/* Two entries for one key: the first one wins, as a lookup
		 * would find it first. */
		if (lb_dpconf6_svc_find(ix, d, v->proto, v->vip6, v->vport) >= 0)
			continue;
		h = lb_dpconf6_svc_hash(v->proto, v->vip6, v->vport);
		while (ix->slot[h & (LB_DPCONF6_SVC_SLOTS - 1)] >= 0)
			h++;
		ix->slot[h & (LB_DPCONF6_SVC_SLOTS - 1)] = (int16_t)i;
		ix->nb++;
	}
}

int
lb_dpconf6_snat_find(const struct lb_dpconf *d, const uint8_t ip[16])
{
	for (uint32_t i = 0; i < d->nb_snat6 && i < LB_CONF_MAX_SNATS; i++)
		if (memcmp(d->snat6[i].ip, ip, 16) == 0)
			return (int)i;
	return LB_DPCONF_NONE;
}

static bool
connected(const struct lb_dpconf *d, const uint8_t ip[16], int port)
{
	for (uint32_t i = 0; i < d->nb_addr6 && i < LB_CONF_MAX_ADDRS; i++)
		if ((port < 0 || d->addr6[i].port == port) &&
		    lb_dpconf6_prefix_eq(ip, d->addr6[i].ip, d->addr6[i].len))
			return true;
	return false;
}

bool
lb_dpconf6_is_ours(const struct lb_dpconf *d, const uint8_t ip[16],
		   uint16_t port)
{
	for (uint32_t i = 0; i < d->nb_addr6 && i < LB_CONF_MAX_ADDRS; i++)
		if (d->addr6[i].port == port &&
		    memcmp(d->addr6[i].ip, ip, 16) == 0)
			return true;
	for (uint32_t i = 0; i < d->nb_snat6 && i < LB_CONF_MAX_SNATS; i++)
		if (d->snat6[i].port == port &&
		    memcmp(d->snat6[i].ip, ip, 16) == 0)
			return true;
	for (uint32_t i = 0; i < d->nb_svc && i < LB_CONF_MAX_SVCS; i++) {
		const struct lb_dpconf_svc *v = &d->svc[i];

		if (v->state != LB_SVC_ACTIVE || v->af != LB_CONF_AF_INET6 ||
		    memcmp(v->vip6, ip, 16) != 0)
			continue;
		return connected(d, ip, port) || !connected(d, ip, -1);
	}
	return false;
}

bool
lb_dpconf6_is_own(const struct lb_dpconf *d, const uint8_t ip[16])
{
	for (uint32_t i = 0; i < d->nb_addr6 && i < LB_CONF_MAX_ADDRS; i++)
		if (memcmp(d->addr6[i].ip, ip, 16) == 0)
			return true;
	if (lb_dpconf6_snat_find(d, ip) >= 0)
		return true;
	for (uint32_t i = 0; i < d->nb_svc && i < LB_CONF_MAX_SVCS; i++)
		if (d->svc[i].state != LB_SVC_EMPTY &&
		    d->svc[i].af == LB_CONF_AF_INET6 &&
		    memcmp(d->svc[i].vip6, ip, 16) == 0)
			return true;
	return false;
}

int
lb_dpconf6_next_hop(const struct lb_dpconf *d, const uint8_t dst[16],
		    uint16_t *port, uint8_t nh[16], uint8_t src[16])
{
	const uint8_t *gw = dst;
	bool routed = false;

	for (uint32_t pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < d->nb_addr6 && i < LB_CONF_MAX_ADDRS;
		     i++) {
			const struct lb_dpconf_addr6 *a = &d->addr6[i];

			if (!lb_dpconf6_prefix_eq(gw, a->ip, a->len))
				continue;
			*port = a->port;
			memcpy(nh, gw, 16);
			memcpy(src, a->ip, 16);
			return 0;
		}
		/* A gateway must be on a connected prefix: one pass of
		 * routes only, as for IPv4. */
		if (routed)
			break;
		for (uint32_t i = 0; i < d->nb_route6 && i < LB_CONF_MAX_ROUTES;
		     i++) {
			if (lb_dpconf6_prefix_eq(dst, d->route6[i].net,
						 d->route6[i].len)) {
				gw = d->route6[i].gw;
				routed = true;
				break;
			}
		}
		if (!routed)
			break;
	}
	return -ENETUNREACH;
}
