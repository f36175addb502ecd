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

/* Whether an address of the table (@p ip, @p ip6 in network order) is
 * @p a's, family included: an IPv4 address is never an IPv6 one. */
static bool
same_ip(uint8_t af, uint32_t ip, const uint8_t *ip6,
	const struct lb_conf_ip *a)
{
	if (af != a->af)
		return false;
	if (af == LB_CONF_AF_INET6)
		return memcmp(ip6, a->ip6, LB_CONF_IP6_LEN) == 0;
	return ip == htonl(a->ip);
}

/* Slot of the service @p k in @p d, or -1. */
static int
svc_slot(const struct lb_dpconf *d, const struct lb_conf_svc_key *k)
{
	struct lb_conf_ip vip = lb_conf_ip_of(k->af, k->vip, k->vip6);

	for (uint32_t i = 0; d != NULL && i < d->nb_svc; i++) {
		const struct lb_dpconf_svc *v = &d->svc[i];

		if (v->state != LB_SVC_EMPTY && v->proto == k->proto &&
		    v->vport == htons(k->port) &&
		    same_ip(v->af, v->vip, v->vip6, &vip))
			return (int)i;
	}
	return -1;
}

static int
be_slot(const struct lb_dpconf_svc *s, const struct lb_conf_be *b)
{
	struct lb_conf_ip a = LB_CONF_IP_OF(b);

	for (uint32_t i = 0; s != NULL && i < s->nb_be; i++)
		if (s->be[i].state != LB_BE_EMPTY &&
		    s->be[i].port == htons(b->port) &&
		    same_ip(s->be[i].af, s->be[i].ip, s->be[i].ip6, &a))
			return (int)i;
	return -1;
}

static bool
is_busy(lb_dpconf_busy_fn *busy, void *ctx, uint32_t svc, uint32_t be)
{
	return busy != NULL && busy(ctx, svc, be);
}

/*
 * Backends of one service: those of @p cs keep the index they had in
 * @p old (the same service in the previous table); removed ones stay while
 * busy; new ones take the lowest index that is neither kept nor busy.
 */
static int
build_backends(struct lb_dpconf_svc *v, const struct lb_conf_svc *cs,
	       const struct lb_dpconf_svc *old, uint32_t slot,
	       lb_dpconf_busy_fn *busy, void *ctx, char *err, size_t errlen)
{
	bool taken[LB_CONF_MAX_BES] = { false };
	int idx[LB_CONF_MAX_BES];

	v->nb_be = 0;
	for (unsigned int b = 0; b < cs->nb_be; b++) {
		idx[b] = be_slot(old, &cs->be[b]);
		if (idx[b] >= 0)
			taken[idx[b]] = true;
	}
	/* Removed backends whose flows have not run out keep their index. */
	for (uint32_t i = 0; old != NULL && i < old->nb_be; i++) {
		if (old->be[i].state == LB_BE_EMPTY || taken[i] ||
		    !is_busy(busy, ctx, slot, i))
			continue;
		v->be[i] = old->be[i];
		v->be[i].state = LB_BE_REMOVED;
		taken[i] = true;
	}
	for (unsigned int b = 0; b < cs->nb_be; b++) {
		bool kept = idx[b] >= 0;
		uint32_t i;

		if (!kept) {
			for (i = 0; i < LB_CONF_MAX_BES; i++) {
				/* A slot whose old flows are still counted
				 * against it must not change hands. */
				if (!taken[i] && !is_busy(busy, ctx, slot, i))
					break;
			}
			if (i == LB_CONF_MAX_BES) {
				snprintf(err, errlen,
					 "no free backend slot: removed "
					 "backends still have flows");
				return -ENOSPC;
			}
			taken[i] = true;
			idx[b] = (int)i;
		}
		i = (uint32_t)idx[b];
		v->be[i] = (struct lb_dpconf_be){
			.af = cs->be[b].af,
			.ip = cs->be[b].af == LB_CONF_AF_INET6
				      ? 0
				      : htonl(cs->be[b].ip),
			.port = htons(cs->be[b].port),
			.state = cs->be[b].draining ? LB_BE_DRAINING :
						      LB_BE_ACTIVE,
			.weight = cs->be[b].weight,
			/* Only lb-control's health checks move it on. */
			.up_gen = kept ? old->be[i].up_gen : 0,
			.pool = cs->be[b].pool,
		};
		if (cs->be[b].af == LB_CONF_AF_INET6)
			memcpy(v->be[i].ip6, cs->be[b].ip6, LB_CONF_IP6_LEN);
	}
	for (uint32_t i = 0; i < LB_CONF_MAX_BES; i++)
		if (taken[i])
			v->nb_be = i + 1;
	return 0;
}

/* The pools of @p cs and its compiled rules. */
static int
build_pools(struct lb_dpconf_pools *v, const struct lb_conf_svc *cs,
	    char *err, size_t errlen)
{
	struct lb_cmd_out out;
	int rc;

	v->nb_pool = cs->nb_pool + 1;
	memset(v->pool, 0, sizeof(v->pool));
	snprintf(v->pool[0].name, sizeof(v->pool[0].name), "%s",
		 LB_CONF_POOL_DEFAULT);
	snprintf(v->pool[0].sched, sizeof(v->pool[0].sched), "%s",
		 cs->opts.sched);
	for (unsigned int p = 0; p < cs->nb_pool; p++) {
		memcpy(v->pool[p + 1].name, cs->pool[p].name,
		       sizeof(v->pool[p + 1].name));
		memcpy(v->pool[p + 1].sched, cs->pool[p].sched,
		       sizeof(v->pool[p + 1].sched));
	}
	for (unsigned int p = 0; p < v->nb_pool; p++)
		lb_conf_pool_sum(cs, p, &v->pool[p].nb_be,
				 &v->pool[p].weight_sum);
	lb_cmd_out_init(&out);
	rc = lb_conf_rules_compile(cs, &v->rules, &out);
	if (rc != 0)
		snprintf(err, errlen, "%s", lb_cmd_out_errmsg(&out));
	lb_cmd_out_free(&out);
	return rc;
}

static struct lb_dpconf_addr6
addr6(const uint8_t *ip, uint8_t len, uint16_t port)
{
	struct lb_dpconf_addr6 a = {.len = len, .port = port};

	memcpy(a.ip, ip, LB_CONF_IP6_LEN);
	return a;
}

/* An IPv6 route into route6[], longest prefix first as for IPv4. */
static void
route6_add(struct lb_dpconf *d, const struct lb_conf_route *r)
{
	struct lb_dpconf_route6 nr = {.len = r->len, .port = r->port};
	uint32_t k = d->nb_route6++;

	memcpy(nr.net, r->net6, LB_CONF_IP6_LEN);
	memcpy(nr.gw, r->gw6, LB_CONF_IP6_LEN);
	while (k > 0 && d->route6[k - 1].len < nr.len) {
		d->route6[k] = d->route6[k - 1];
		k--;
	}
	d->route6[k] = nr;
}

/* The local addresses, SNAT addresses and routes of @p c, in @p d: each
 * family in its own arrays, so that IPv4's stay as they were. */
static void
compile_net(struct lb_dpconf *d, const struct lb_conf *c)
{
	for (unsigned int i = 0; i < lb_conf_nb_addrs(c); i++) {
		const struct lb_conf_addr *a = lb_conf_addr_at(c, i);

		if (a->af == LB_CONF_AF_INET6)
			d->addr6[d->nb_addr6++] =
				addr6(a->ip6, a->len, a->port);
		else
			d->addr[d->nb_addr++] = (struct lb_dpconf_addr){
				htonl(a->ip), mask_of(a->len), a->port, 0
			};
		if (a->port <= LB_CONF_PORT_MAX)
			d->port_vlan[a->port] = a->vlan;
	}
	for (unsigned int i = 0; i < lb_conf_nb_snats(c); i++) {
		const struct lb_conf_snat *s = lb_conf_snat_at(c, i);

		if (s->af == LB_CONF_AF_INET6)
			d->snat6[d->nb_snat6++] = addr6(s->ip6, 128, s->port);
		else
			d->snat[d->nb_snat++] = (struct lb_dpconf_addr){
				htonl(s->ip), 0xffffffff, s->port, 0
			};
	}
	for (unsigned int i = 0; i < lb_conf_nb_routes(c); i++) {
		const struct lb_conf_route *r = lb_conf_route_at(c, i);
		struct lb_dpconf_route nr;
		uint32_t k;

		/* Before the IPv4 mask: an IPv6 length is up to 128. */
		if (r->af == LB_CONF_AF_INET6) {
			route6_add(d, r);
			continue;
		}
		nr = (struct lb_dpconf_route){htonl(r->net), mask_of(r->len),
					      r->len, htonl(r->gw), r->port};
		k = d->nb_route++;

		/* Keep routes longest prefix first so the first match is
		 * the best one. */
		while (k > 0 && d->route[k - 1].len < nr.len) {
			d->route[k] = d->route[k - 1];
			k--;
		}
		d->route[k] = nr;
	}
}

/*
 * Services: kept ones first, so new ones cannot take their slot. Fills
 * @p slot_of with each configured service's slot in @p prev (or -1) and
 * marks those slots, and the deleted services that still have flows
 * (copied into @p d), in @p taken.
 */
static int
keep_svc_slots(struct lb_dpconf *d, const struct lb_conf *c,
	       const struct lb_dpconf *prev, lb_dpconf_busy_fn *busy,
	       void *ctx, bool *taken, int *slot_of, char *err, size_t errlen)
{
	unsigned int nsvc = lb_conf_nb_svcs(c);

	for (unsigned int i = 0; i < nsvc; i++) {
		const struct lb_conf_svc *s = lb_conf_svc_at(c, i);

		if (lb_sched_find(s->opts.sched) == NULL) {
			char names[256];

			lb_sched_names(names, sizeof(names), ", ");
			snprintf(err, errlen,
				 "unknown scheduler '%s'; expected one of %s",
				 s->opts.sched, names);
			return -EINVAL;
		}
		slot_of[i] = svc_slot(prev, &s->key);
		if (slot_of[i] >= 0)
			taken[slot_of[i]] = true;
	}
	for (uint32_t i = 0; prev != NULL && i < prev->nb_svc; i++) {
		if (prev->svc[i].state == LB_SVC_EMPTY || taken[i] ||
		    !is_busy(busy, ctx, i, UINT32_MAX))
			continue;
		/* Deleted, flows remain: keep it out of the lookup, keep
		 * its backends for those flows. */
		d->svc[i] = prev->svc[i];
		d->svc[i].state = LB_SVC_DELETED;
		d->pools[i] = prev->pools[i];
		taken[i] = true;
	}
	return 0;
}

/* Each configured service in its slot: the kept one, or the lowest free
 * slot without flows for a new one. */
static int
build_svcs(struct lb_dpconf *d, const struct lb_conf *c,
	   const struct lb_dpconf *prev, lb_dpconf_busy_fn *busy, void *ctx,
	   bool *taken, int *slot_of, char *err, size_t errlen)
{
	unsigned int nsvc = lb_conf_nb_svcs(c);
	int rc;

	for (unsigned int i = 0; i < nsvc; i++) {
		const struct lb_conf_svc *s = lb_conf_svc_at(c, i);
		const struct lb_dpconf_svc *old = NULL;
		struct lb_dpconf_svc *v;
		uint32_t slot;

		if (slot_of[i] < 0) {
			for (slot = 0; slot < LB_CONF_MAX_SVCS; slot++)
				if (!taken[slot] &&
				    !is_busy(busy, ctx, slot, UINT32_MAX))
					break;
			if (slot == LB_CONF_MAX_SVCS) {
				snprintf(err, errlen,
					 "no free service slot: deleted "
					 "services still have flows");
				return -ENOSPC;
			}
			taken[slot] = true;
			slot_of[i] = (int)slot;
		} else {
			old = &prev->svc[slot_of[i]];
		}
		slot = (uint32_t)slot_of[i];
		v = &d->svc[slot];
		v->state = LB_SVC_ACTIVE;
		v->proto = s->key.proto;
		v->af = s->key.af;
		/* An IPv6 service's vip is 0: no IPv4 lookup can meet it. */
		v->vip = s->key.af == LB_CONF_AF_INET6 ? 0 : htonl(s->key.vip);
		memset(v->vip6, 0, sizeof(v->vip6));
		if (s->key.af == LB_CONF_AF_INET6)
			memcpy(v->vip6, s->key.vip6, LB_CONF_IP6_LEN);
		v->vport = htons(s->key.port);
		v->opts = s->opts;
		rc = build_backends(v, s, old, slot, busy, ctx, err, errlen);
		if (rc == 0)
			rc = build_pools(&d->pools[slot], s, err, errlen);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* The lookup of active IPv4 services by key: open addressing over the
 * slots. IPv6 services stay out of it: the dataplane indexes them. */
static void
index_svcs(struct lb_dpconf *d, const bool *taken)
{
	for (uint32_t i = 0; i < LB_CONF_MAX_SVCS; i++) {
		struct lb_dpconf_svc *v = &d->svc[i];
		uint32_t h;

		if (!taken[i])
			continue;
		d->nb_svc = i + 1;
		if (v->state != LB_SVC_ACTIVE || v->af == LB_CONF_AF_INET6)
			continue;
		h = lb_dpconf_svc_hash(v->proto, v->vip, v->vport);
		while (d->slot[h & (LB_DPCONF_SVC_SLOTS - 1)] >= 0)
			h++;
		d->slot[h & (LB_DPCONF_SVC_SLOTS - 1)] = (int16_t)i;
	}
}

int
lb_dpconf_compile(struct lb_dpconf *d, const struct lb_conf *c,
		  const struct lb_dpconf *prev, lb_dpconf_busy_fn *busy,
		  void *ctx, char *err, size_t errlen)
{
	bool taken[LB_CONF_MAX_SVCS] = { false };
	int slot_of[LB_CONF_MAX_SVCS];
	int rc;

	memset(d, 0, sizeof(*d));
	memset(d->slot, 0xff, sizeof(d->slot));
	d->gen = prev != NULL ? prev->gen + 1 : 1;
	compile_net(d, c);
	rc = keep_svc_slots(d, c, prev, busy, ctx, taken, slot_of, err,
			    errlen);
	if (rc != 0)
		return rc;
	rc = build_svcs(d, c, prev, busy, ctx, taken, slot_of, err, errlen);
	if (rc != 0)
		return rc;
	index_svcs(d, taken);
	return 0;
}

int
lb_dpconf_build(struct lb_dpconf *d, const struct lb_conf *c, char *err,
		size_t errlen)
{
	return lb_dpconf_compile(d, c, NULL, NULL, NULL, err, errlen);
}

unsigned int
lb_dpconf_snat_keep(struct lb_dpconf *d, const struct lb_dpconf *prev,
		    lb_dpconf_snat_busy_fn *busy, void *ctx)
{
	unsigned int kept = 0;

	for (uint32_t i = 0; prev != NULL && busy != NULL && i < prev->nb_snat;
	     i++) {
		const struct lb_dpconf_addr *a = &prev->snat[i];

		if (lb_dpconf_snat_find(d, a->ip) >= 0 || !busy(ctx, a->ip))
			continue;
		/* Full: the address is forgotten at once, and the replies
		 * of its last flows are no longer ours. */
		if (d->nb_snat == LB_CONF_MAX_SNATS)
			break;
		d->snat[d->nb_snat] = *a;
		d->snat[d->nb_snat++].draining = 1;
		kept++;
	}
	return kept;
}

static bool
snat6_find(const struct lb_dpconf *d, const uint8_t *ip)
{
	for (uint32_t i = 0; i < d->nb_snat6; i++)
		if (memcmp(d->snat6[i].ip, ip, LB_CONF_IP6_LEN) == 0)
			return true;
	return false;
}

unsigned int
lb_dpconf_snat6_keep(struct lb_dpconf *d, const struct lb_dpconf *prev,
		     lb_dpconf_snat6_busy_fn *busy, void *ctx)
{
	unsigned int kept = 0;

	for (uint32_t i = 0;
	     prev != NULL && busy != NULL && i < prev->nb_snat6; i++) {
		const struct lb_dpconf_addr6 *a = &prev->snat6[i];

		if (snat6_find(d, a->ip) || !busy(ctx, a->ip))
			continue;
		if (d->nb_snat6 == LB_CONF_MAX_SNATS)
			break;
		d->snat6[d->nb_snat6] = *a;
		d->snat6[d->nb_snat6++].draining = 1;
		kept++;
	}
	return kept;
}

bool
lb_dpconf_snat6_gc_due(const struct lb_dpconf *d,
		       lb_dpconf_snat6_busy_fn *busy, void *ctx)
{
	for (uint32_t i = 0; d != NULL && i < d->nb_snat6; i++)
		if (d->snat6[i].draining && !busy(ctx, d->snat6[i].ip))
			return true;
	return false;
}

bool
lb_dpconf_snat_gc_due(const struct lb_dpconf *d, lb_dpconf_snat_busy_fn *busy,
		      void *ctx)
{
	for (uint32_t i = 0; d != NULL && i < d->nb_snat; i++)
		if (d->snat[i].draining && !busy(ctx, d->snat[i].ip))
			return true;
	return false;
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
		/* An IPv6 service's vip is 0: never an IPv4 match. */
		if (d->svc[i].state != LB_SVC_ACTIVE ||
		    d->svc[i].af == LB_CONF_AF_INET6 || d->svc[i].vip != ip)
			continue;
		return connected(d, ip, port) || !connected(d, ip, -1);
	}
	return false;
}

bool
lb_dpconf_is_own(const struct lb_dpconf *d, uint32_t ip)
{
	for (uint32_t i = 0; i < d->nb_addr; i++)
		if (d->addr[i].ip == ip)
			return true;
	if (lb_dpconf_snat_find(d, ip) >= 0)
		return true;
	for (uint32_t i = 0; i < d->nb_svc; i++)
		if (d->svc[i].state != LB_SVC_EMPTY &&
		    d->svc[i].af != LB_CONF_AF_INET6 && d->svc[i].vip == ip)
			return true;
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
