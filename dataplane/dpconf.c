/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lb/dpconf.h"

static uint32_t
mask_of(uint8_t len)
{
	return htonl(len == 0 ? 0 : ~0u << (32 - len));
}

int
lb_dpconf_build(struct lb_dpconf *d, const struct lb_conf *c, char *err,
		size_t errlen)
{
	memset(d, 0, sizeof(*d));
	memset(d->slot, 0xff, sizeof(d->slot));

	for (unsigned int i = 0; i < lb_conf_nb_addrs(c); i++) {
		const struct lb_conf_addr *a = lb_conf_addr_at(c, i);

		d->addr[d->nb_addr++] = (struct lb_dpconf_addr){
			htonl(a->ip), mask_of(a->len), a->port
		};
	}
	for (unsigned int i = 0; i < lb_conf_nb_snats(c); i++) {
		const struct lb_conf_snat *s = lb_conf_snat_at(c, i);

		d->snat[d->nb_snat++] = (struct lb_dpconf_addr){
			htonl(s->ip), 0xffffffff, s->port
		};
	}
	for (unsigned int i = 0; i < lb_conf_nb_routes(c); i++) {
		const struct lb_conf_route *r = lb_conf_route_at(c, i);
		struct lb_dpconf_route nr = { htonl(r->net), mask_of(r->len),
					      r->len, htonl(r->gw), r->port };
		uint32_t k = d->nb_route++;

		/* Keep routes longest prefix first so the first match is
		 * the best one. */
		while (k > 0 && d->route[k - 1].len < nr.len) {
			d->route[k] = d->route[k - 1];
			k--;
		}
		d->route[k] = nr;
	}
	for (unsigned int i = 0; i < lb_conf_nb_svcs(c); i++) {
		const struct lb_conf_svc *s = lb_conf_svc_at(c, i);
		struct lb_dpconf_svc *v = &d->svc[d->nb_svc];
		uint32_t h;

		v->proto = s->key.proto;
		v->vip = htonl(s->key.vip);
		v->vport = htons(s->key.port);
		v->opts = s->opts;
		v->sched = lb_sched_find(s->opts.sched);
		if (v->sched == NULL) {
			snprintf(err, errlen, "unknown scheduler '%s'",
				 s->opts.sched);
			return -EINVAL;
		}
		v->nb_be = s->nb_be;
		for (unsigned int b = 0; b < s->nb_be; b++)
			v->be[b] = (struct lb_dpconf_be){
				htonl(s->be[b].ip), htons(s->be[b].port),
				s->be[b].weight, s->be[b].draining
			};
		h = lb_dpconf_svc_hash(v->proto, v->vip, v->vport);
		while (d->slot[h & (LB_DPCONF_SVC_SLOTS - 1)] >= 0)
			h++;
		d->slot[h & (LB_DPCONF_SVC_SLOTS - 1)] = (int16_t)d->nb_svc;
		d->nb_svc++;
	}
	return 0;
}

static bool
connected(const struct lb_dpconf *d, uint32_t ip, int port)
{
	for (uint32_t i = 0; i < d->nb_addr; i++)
		if ((port < 0 || d->addr[i].port == port) &&
		    ((ip ^ d->addr[i].ip) & d->addr[i].mask) == 0)
			return true;
	return false;
}

bool
lb_dpconf_is_ours(const struct lb_dpconf *d, uint32_t ip, uint16_t port)
{
	for (uint32_t i = 0; i < d->nb_addr; i++)
		if (d->addr[i].ip == ip && d->addr[i].port == port)
			return true;
	for (uint32_t i = 0; i < d->nb_snat; i++)
		if (d->snat[i].ip == ip && d->snat[i].port == port)
			return true;
	for (uint32_t i = 0; i < d->nb_svc; i++) {
		if (d->svc[i].vip != ip)
			continue;
		return connected(d, ip, port) || !connected(d, ip, -1);
	}
	return false;
}

int
lb_dpconf_next_hop(const struct lb_dpconf *d, uint32_t dst, uint16_t *port,
		   uint32_t *nh, uint32_t *src)
{
	uint32_t gw = dst;
	bool routed = false;

	for (uint32_t pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < d->nb_addr; i++) {
			if (((gw ^ d->addr[i].ip) & d->addr[i].mask) != 0)
				continue;
			*port = d->addr[i].port;
			*nh = gw;
			*src = d->addr[i].ip;
			return 0;
		}
		if (routed)
			break;
		for (uint32_t i = 0; i < d->nb_route; i++) {
			if (((dst ^ d->route[i].net) & d->route[i].mask) != 0)
				continue;
			gw = d->route[i].gw;
			routed = true;
			break;
		}
		if (!routed)
			break;
	}
	return -ENETUNREACH;
}
