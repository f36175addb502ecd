/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The steering rules of a published table, and the reconciliation of the
 * pinned rules map with them (include/lb/steer_sync.h).
 */
#include <errno.h>
#include <ifaddrs.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <net/if.h>
#include <netinet/in.h>

#include "lb/snat.h"
#include "lb/steer_sync.h"

static bool
addr_in(uint32_t a, const uint32_t *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (set[i] == a)
			return true;
	return false;
}

static bool
same_rule(const struct lb_steer_rule *a, const struct lb_steer_rule *b)
{
	return a->addr == b->addr && a->proto == b->proto &&
	       a->port_min == b->port_min && a->port_max == b->port_max;
}

/* Appends @p r unless the same rule is there, or a whole-address rule of
 * its address (which steers everything a narrower rule would). */
static void
push(struct lb_steer_rule *out, size_t *n, const struct lb_steer_rule *r)
{
	for (size_t i = 0; i < *n; i++) {
		if (out[i].addr != r->addr)
			continue;
		if (same_rule(&out[i], r) || out[i].proto == 0)
			return;
	}
	if (*n < LB_STEER_SYNC_MAX)
		out[(*n)++] = *r;
}

static void
push_whole(struct lb_steer_rule *out, size_t *n, uint32_t addr,
	   enum lb_steer_kind kind)
{
	struct lb_steer_rule r = {.addr = addr, .kind = kind};

	push(out, n, &r);
}

size_t
lb_steer_rules_of(const struct lb_dpconf *c, const uint32_t *host,
		  size_t nb_host, struct lb_steer_rule *out)
{
	size_t n = 0;

	/* Whole-address rules first, so that push() drops the narrower
	 * rules they cover whatever order the table lists things in. */
	for (uint32_t i = 0; i < c->nb_addr && i < LB_CONF_MAX_ADDRS; i++)
		if (!addr_in(c->addr[i].ip, host, nb_host))
			push_whole(out, &n, c->addr[i].ip, LB_STEER_KIND_LOCAL);
	for (uint32_t i = 0; i < c->nb_snat && i < LB_CONF_MAX_SNATS; i++)
		if (!addr_in(c->snat[i].ip, host, nb_host))
			push_whole(out, &n, c->snat[i].ip, LB_STEER_KIND_SNAT);
	for (uint32_t i = 0; i < c->nb_svc && i < LB_CONF_MAX_SVCS; i++) {
		const struct lb_dpconf_svc *s = &c->svc[i];

		/* IPv4 rules: an IPv6 service's vip is 0, not an address. */
		if (s->state != LB_SVC_EMPTY && s->af != LB_CONF_AF_INET6 &&
		    !addr_in(s->vip, host, nb_host))
			push_whole(out, &n, s->vip, LB_STEER_KIND_VIP);
	}
	/* Then the addresses the host shares: only our ports of them. */
	for (uint32_t i = 0; i < c->nb_snat && i < LB_CONF_MAX_SNATS; i++) {
		struct lb_steer_rule r = {
			.addr = c->snat[i].ip,
			.port_min = LB_SNAT_PORT_MIN_DEFAULT,
			.port_max = LB_SNAT_PORT_MAX_DEFAULT,
			.kind = LB_STEER_KIND_SNAT,
		};

		if (!addr_in(r.addr, host, nb_host))
			continue;
		r.proto = IPPROTO_TCP;
		push(out, &n, &r);
		r.proto = IPPROTO_UDP;
		push(out, &n, &r);
	}
	for (uint32_t i = 0; i < c->nb_svc && i < LB_CONF_MAX_SVCS; i++) {
		const struct lb_dpconf_svc *s = &c->svc[i];
		struct lb_steer_rule r = {
			.addr = s->vip,
			.proto = s->proto,
			.port_min = ntohs(s->vport),
			.port_max = ntohs(s->vport),
			.kind = LB_STEER_KIND_VIP,
		};

		if (s->state != LB_SVC_EMPTY && s->af != LB_CONF_AF_INET6 &&
		    addr_in(s->vip, host, nb_host))
			push(out, &n, &r);
	}
	return n;
}

int
lb_steer_host_addrs(const int *ifindex, size_t nb_if, uint32_t *out,
		    size_t max)
{
	struct ifaddrs *ifa, *i;
	size_t n = 0;

	if ((ifindex == NULL && nb_if > 0) || (out == NULL && max > 0))
		return -EINVAL;
	if (getifaddrs(&ifa) != 0)
		return -errno;
	for (i = ifa; i != NULL && n < max; i = i->ifa_next) {
		const struct sockaddr_in *sin;
		unsigned int idx;
		bool ours = false;

		if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET)
			continue;
		idx = if_nametoindex(i->ifa_name);
		for (size_t k = 0; k < nb_if && !ours; k++)
			ours = idx != 0 && (int)idx == ifindex[k];
		if (!ours)
			continue;
		sin = (const struct sockaddr_in *)(const void *)i->ifa_addr;
		if (!addr_in(sin->sin_addr.s_addr, out, n))
			out[n++] = sin->sin_addr.s_addr;
	}
	freeifaddrs(ifa);
	return (int)n;
}

struct have {
	struct lb_steer_rule r[LB_STEER_SYNC_MAX];
	size_t n;
	const struct lb_steer_rule *want;
	size_t nb_want;
	struct lb_steer_rule *extra; /* in the map, not wanted */
	size_t nb_extra, cap_extra;
};

static int
collect(const struct lb_steer_rule *r, void *arg)
{
	struct have *h = arg;

	for (size_t i = 0; i < h->nb_want; i++) {
		if (!same_rule(r, &h->want[i]) || r->kind != h->want[i].kind)
			continue;
		if (h->n < LB_STEER_SYNC_MAX)
			h->r[h->n++] = *r;
		return 0;
	}
	if (h->nb_extra == h->cap_extra) {
		size_t cap = h->cap_extra ? h->cap_extra * 2 : 64;
		void *p = realloc(h->extra, cap * sizeof(*h->extra));

		if (p == NULL)
			return -ENOMEM;
		h->extra = p;
		h->cap_extra = cap;
	}
	h->extra[h->nb_extra++] = *r;
	return 0;
}

int
lb_steer_sync(struct lb_steer *s, const struct lb_steer_rule *want, size_t n,
	      struct lb_steer_sync_res *res)
{
	struct have *h;
	struct lb_steer_sync_res dummy;
	int rc;

	if (s == NULL || (want == NULL && n > 0) || n > LB_STEER_SYNC_MAX)
		return -EINVAL;
	if (res == NULL)
		res = &dummy;
	memset(res, 0, sizeof(*res));
	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return -ENOMEM;
	h->want = want;
	h->nb_want = n;
	/* Collect, then change: a hash map walked while it changes may
	 * skip or repeat keys. */
	rc = lb_steer_rule_walk(s, collect, h);
	/* Removals first: a whole-address rule may give way to port rules
	 * of the same address (the host took the address), or back. */
	for (size_t i = 0; rc == 0 && i < h->nb_extra; i++) {
		rc = lb_steer_rule_del(s, &h->extra[i]);
		if (rc == -ENOENT)
			rc = 0; /* removed with its address meanwhile */
		else if (rc == 0)
			res->removed++;
	}
	for (size_t i = 0; rc == 0 && i < n; i++) {
		bool have = false;

		for (size_t j = 0; j < h->n && !have; j++)
			have = same_rule(&h->r[j], &want[i]) &&
			       h->r[j].kind == want[i].kind;
		if (have) {
			res->kept++;
			continue;
		}
		rc = lb_steer_rule_add(s, &want[i]);
		if (rc == 0)
			res->added++;
	}
	free(h->extra);
	free(h);
	return rc;
}

int
lb_steer_sync_dpconf(struct lb_steer *s, const struct lb_dpconf *c,
		     const uint32_t *host, size_t nb_host,
		     struct lb_steer_sync_res *res)
{
	struct lb_steer_rule *want;
	size_t n;
	int rc;

	if (s == NULL || c == NULL || (host == NULL && nb_host > 0))
		return -EINVAL;
	want = calloc(LB_STEER_SYNC_MAX, sizeof(*want));
	if (want == NULL)
		return -ENOMEM;
	n = lb_steer_rules_of(c, host, nb_host, want);
	rc = lb_steer_sync(s, want, n, res);
	free(want);
	return rc;
}
