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

/* ---- IPv6: the same rules, for steer_rules6 ---- */

static bool
addr6_in(const uint8_t *a, const uint8_t (*set)[16], size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (memcmp(set[i], a, 16) == 0)
			return true;
	return false;
}

static bool
same_rule6(const struct lb_steer_rule6 *a, const struct lb_steer_rule6 *b)
{
	return memcmp(a->addr, b->addr, 16) == 0 && a->proto == b->proto &&
	       a->port_min == b->port_min && a->port_max == b->port_max;
}

static void
push6(struct lb_steer_rule6 *out, size_t *n, const struct lb_steer_rule6 *r)
{
	for (size_t i = 0; i < *n; i++) {
		if (memcmp(out[i].addr, r->addr, 16) != 0)
			continue;
		if (same_rule6(&out[i], r) || out[i].proto == 0)
			return;
	}
	if (*n < LB_STEER_SYNC_MAX)
		out[(*n)++] = *r;
}

static void
push6_whole(struct lb_steer_rule6 *out, size_t *n, const uint8_t *addr,
	    enum lb_steer_kind kind)
{
	struct lb_steer_rule6 r = {.kind = kind};

	memcpy(r.addr, addr, 16);
	push6(out, n, &r);
}

static bool
svc6_live(const struct lb_dpconf_svc *s)
{
	return s->state != LB_SVC_EMPTY && s->af == LB_CONF_AF_INET6;
}

size_t
lb_steer_rules6_of(const struct lb_dpconf *c, const uint8_t (*host)[16],
		   size_t nb_host, struct lb_steer_rule6 *out)
{
	size_t n = 0;

	for (uint32_t i = 0; i < c->nb_addr6 && i < LB_CONF_MAX_ADDRS; i++)
		if (!addr6_in(c->addr6[i].ip, host, nb_host))
			push6_whole(out, &n, c->addr6[i].ip,
				    LB_STEER_KIND_LOCAL);
	for (uint32_t i = 0; i < c->nb_snat6 && i < LB_CONF_MAX_SNATS; i++)
		if (!addr6_in(c->snat6[i].ip, host, nb_host))
			push6_whole(out, &n, c->snat6[i].ip,
				    LB_STEER_KIND_SNAT);
	for (uint32_t i = 0; i < c->nb_svc && i < LB_CONF_MAX_SVCS; i++)
		if (svc6_live(&c->svc[i]) &&
		    !addr6_in(c->svc[i].vip6, host, nb_host))
			push6_whole(out, &n, c->svc[i].vip6,
				    LB_STEER_KIND_VIP);
	for (uint32_t i = 0; i < c->nb_snat6 && i < LB_CONF_MAX_SNATS; i++) {
		struct lb_steer_rule6 r = {
			.port_min = LB_SNAT_PORT_MIN_DEFAULT,
			.port_max = LB_SNAT_PORT_MAX_DEFAULT,
			.kind = LB_STEER_KIND_SNAT,
		};

		if (!addr6_in(c->snat6[i].ip, host, nb_host))
			continue;
		memcpy(r.addr, c->snat6[i].ip, 16);
		r.proto = IPPROTO_TCP;
		push6(out, &n, &r);
		r.proto = IPPROTO_UDP;
		push6(out, &n, &r);
	}
	for (uint32_t i = 0; i < c->nb_svc && i < LB_CONF_MAX_SVCS; i++) {
		const struct lb_dpconf_svc *s = &c->svc[i];
		struct lb_steer_rule6 r = {
			.proto = s->proto,
			.port_min = ntohs(s->vport),
			.port_max = ntohs(s->vport),
			.kind = LB_STEER_KIND_VIP,
		};

		if (!svc6_live(s) || !addr6_in(s->vip6, host, nb_host))
			continue;
		memcpy(r.addr, s->vip6, 16);
		push6(out, &n, &r);
	}
	return n;
}

/* The kernel's addresses of family @p af (elements of @p sz bytes, as
 * in sin_addr or sin6_addr) on the interfaces @p ifindex. */
static int
host_addrs(const int *ifindex, size_t nb_if, int af, size_t sz, void *out,
	   size_t max)
{
	struct ifaddrs *ifa, *i;
	uint8_t *o = out;
	size_t n = 0;

	if ((ifindex == NULL && nb_if > 0) || (out == NULL && max > 0))
		return -EINVAL;
	if (getifaddrs(&ifa) != 0)
		return -errno;
	for (i = ifa; i != NULL && n < max; i = i->ifa_next) {
		const void *a;
		unsigned int idx;
		bool ours = false, seen = false;

		if (i->ifa_addr == NULL || i->ifa_addr->sa_family != af)
			continue;
		idx = if_nametoindex(i->ifa_name);
		for (size_t k = 0; k < nb_if && !ours; k++)
			ours = idx != 0 && (int)idx == ifindex[k];
		if (!ours)
			continue;
		a = af == AF_INET
			    ? (const void *)&((const struct sockaddr_in *)(
					  const void *)i->ifa_addr)
				      ->sin_addr
			    : (const void *)&((const struct sockaddr_in6 *)(
					  const void *)i->ifa_addr)
				      ->sin6_addr;
		for (size_t k = 0; k < n && !seen; k++)
			seen = memcmp(o + k * sz, a, sz) == 0;
		if (!seen)
			memcpy(o + n++ * sz, a, sz);
	}
	freeifaddrs(ifa);
	return (int)n;
}

int
lb_steer_host_addrs(const int *ifindex, size_t nb_if, uint32_t *out,
		    size_t max)
{
	return host_addrs(ifindex, nb_if, AF_INET, sizeof(*out), out, max);
}

int
lb_steer_host_addrs6(const int *ifindex, size_t nb_if, uint8_t (*out)[16],
		     size_t max)
{
	return host_addrs(ifindex, nb_if, AF_INET6, 16, out, max);
}

/* One family's rules map, for the reconciliation both share. */
struct fam {
	size_t sz; /* of a rule */
	bool (*same)(const void *a, const void *b); /* kind included */
	int (*walk)(struct lb_steer *s, void *h);
	int (*add)(struct lb_steer *s, const void *r);
	int (*del)(struct lb_steer *s, const void *r);
};

struct have {
	const struct fam *f;
	uint8_t *r; /* in the map and wanted */
	size_t n;
	const uint8_t *want;
	size_t nb_want;
	uint8_t *extra; /* in the map, not wanted */
	size_t nb_extra, cap_extra;
};

static int
collect(const void *r, struct have *h)
{
	size_t sz = h->f->sz;

	for (size_t i = 0; i < h->nb_want; i++) {
		if (!h->f->same(r, h->want + i * sz))
			continue;
		if (h->n < LB_STEER_SYNC_MAX)
			memcpy(h->r + h->n++ * sz, r, sz);
		return 0;
	}
	if (h->nb_extra == h->cap_extra) {
		size_t cap = h->cap_extra ? h->cap_extra * 2 : 64;
		void *p = realloc(h->extra, cap * sz);

		if (p == NULL)
			return -ENOMEM;
		h->extra = p;
		h->cap_extra = cap;
	}
	memcpy(h->extra + h->nb_extra++ * sz, r, sz);
	return 0;
}

static int
sync_fam(struct lb_steer *s, const struct fam *f, const void *want, size_t n,
	 struct lb_steer_sync_res *res)
{
	struct have h = {.f = f, .want = want, .nb_want = n};
	struct lb_steer_sync_res dummy;
	int rc;

	if (s == NULL || (want == NULL && n > 0) || n > LB_STEER_SYNC_MAX)
		return -EINVAL;
	if (res == NULL)
		res = &dummy;
	memset(res, 0, sizeof(*res));
	h.r = calloc(LB_STEER_SYNC_MAX, f->sz);
	if (h.r == NULL)
		return -ENOMEM;
	/* Collect, then change: a hash map walked while it changes may
	 * skip or repeat keys. */
	rc = f->walk(s, &h);
	/* Removals first: a whole-address rule may give way to port rules
	 * of the same address (the host took the address), or back. */
	for (size_t i = 0; rc == 0 && i < h.nb_extra; i++) {
		rc = f->del(s, h.extra + i * f->sz);
		if (rc == -ENOENT)
			rc = 0; /* removed with its address meanwhile */
		else if (rc == 0)
			res->removed++;
	}
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const uint8_t *w = (const uint8_t *)want + i * f->sz;
		bool have = false;

		for (size_t j = 0; j < h.n && !have; j++)
			have = f->same(h.r + j * f->sz, w);
		if (have) {
			res->kept++;
			continue;
		}
		rc = f->add(s, w);
		if (rc == 0)
			res->added++;
	}
	free(h.extra);
	free(h.r);
	return rc;
}

static bool
same4(const void *a, const void *b)
{
	const struct lb_steer_rule *x = a, *y = b;

	return same_rule(x, y) && x->kind == y->kind;
}

static int
collect4(const struct lb_steer_rule *r, void *h)
{
	return collect(r, h);
}

static int
walk4(struct lb_steer *s, void *h)
{
	return lb_steer_rule_walk(s, collect4, h);
}

static int
add4(struct lb_steer *s, const void *r)
{
	return lb_steer_rule_add(s, r);
}

static int
del4(struct lb_steer *s, const void *r)
{
	return lb_steer_rule_del(s, r);
}

static const struct fam fam4 = {sizeof(struct lb_steer_rule), same4, walk4,
				add4, del4};

static bool
same6(const void *a, const void *b)
{
	const struct lb_steer_rule6 *x = a, *y = b;

	return same_rule6(x, y) && x->kind == y->kind;
}

static int
collect6(const struct lb_steer_rule6 *r, void *h)
{
	return collect(r, h);
}

static int
walk6(struct lb_steer *s, void *h)
{
	return lb_steer_rule6_walk(s, collect6, h);
}

static int
add6(struct lb_steer *s, const void *r)
{
	return lb_steer_rule6_add(s, r);
}

static int
del6(struct lb_steer *s, const void *r)
{
	return lb_steer_rule6_del(s, r);
}

static const struct fam fam6 = {sizeof(struct lb_steer_rule6), same6, walk6,
				add6, del6};

int
lb_steer_sync(struct lb_steer *s, const struct lb_steer_rule *want, size_t n,
	      struct lb_steer_sync_res *res)
{
	return sync_fam(s, &fam4, want, n, res);
}

int
lb_steer_sync6(struct lb_steer *s, const struct lb_steer_rule6 *want,
	       size_t n, struct lb_steer_sync_res *res)
{
	return sync_fam(s, &fam6, want, n, res);
}

int
lb_steer_sync6_dpconf(struct lb_steer *s, const struct lb_dpconf *c,
		      const uint8_t (*host)[16], size_t nb_host,
		      struct lb_steer_sync_res *res)
{
	struct lb_steer_rule6 *want;
	size_t n;
	int rc;

	if (s == NULL || c == NULL || (host == NULL && nb_host > 0))
		return -EINVAL;
	want = calloc(LB_STEER_SYNC_MAX, sizeof(*want));
	if (want == NULL)
		return -ENOMEM;
	n = lb_steer_rules6_of(c, host, nb_host, want);
	rc = lb_steer_sync6(s, want, n, res);
	free(want);
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
