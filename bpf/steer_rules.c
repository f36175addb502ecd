/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The steering rules of include/lb/steer.h: which destinations the XDP
 * program hands to the AF_XDP sockets, kept in its hash maps, one per
 * address family. Both maps' keys are the address, then port, protocol
 * and a zero byte, without padding, so one set of functions builds and
 * reads the keys of both as bytes.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include <bpf/bpf.h>

#include "lb/steer.h"
#include "steer_priv.h"

_Static_assert(sizeof(struct lb_steer_key) == 8 &&
		       offsetof(struct lb_steer_key, port) == 4,
	       "steer_rules key is not addr, port, proto, pad");
_Static_assert(sizeof(struct lb_steer_key6) == 20 &&
		       offsetof(struct lb_steer_key6, port) == 16,
	       "steer_rules6 key is not addr, port, proto, pad");

#define KEY_MAX sizeof(struct lb_steer_key6)

/* One family's rule map and the length of its addresses. */
struct fam {
	int fd;
	size_t alen;
};

/* A rule of either family; addr points at alen bytes, network order. */
struct grule {
	const uint8_t *addr;
	uint8_t proto;
	uint16_t port_min;
	uint16_t port_max;
	enum lb_steer_kind kind;
};

/* Can @p addr (network order) be the destination of our traffic? */
static int
unicast4(uint32_t addr)
{
	uint32_t h = ntohl(addr);

	return (h >> 24) != 0 && h < 0xe0000000u;
}

/* Not ::, ::1, multicast (ff00::/8) or IPv4-mapped (::ffff:0:0/96),
 * none of which is ever a packet's destination on the wire. */
static int
unicast6(const uint8_t *a)
{
	static const uint8_t mapped[12] = {[10] = 0xff, [11] = 0xff};
	static const uint8_t zero[15];

	if (a[0] == 0xff)
		return 0;
	if (memcmp(a, zero, 15) == 0 && a[15] <= 1)
		return 0;
	return memcmp(a, mapped, sizeof(mapped)) != 0;
}

static void
make_key(const struct fam *f, const uint8_t *addr, uint16_t port_be,
	 uint8_t proto, uint8_t *k)
{
	memset(k, 0, KEY_MAX);
	memcpy(k, addr, f->alen);
	memcpy(k + f->alen, &port_be, sizeof(port_be));
	k[f->alen + 2] = proto;
}

/* The map key of a rule; *is_range for the {addr, 0, proto} shape. */
static int
rule_key(const struct fam *f, const struct grule *r, uint8_t *k,
	 int *is_range)
{
	uint16_t port = 0;

	*is_range = 0;
	if (r->kind >= LB_STEER_KIND_MAX)
		return -EINVAL;
	if (r->proto == IPPROTO_TCP || r->proto == IPPROTO_UDP) {
		if (r->port_min > r->port_max)
			return -EINVAL;
		if (r->port_min != 0 && r->port_min == r->port_max)
			port = htons(r->port_min);
		else
			*is_range = 1;
	} else if (r->port_min != 0 || r->port_max != 0) {
		return -EINVAL;
	}
	make_key(f, r->addr, port, r->proto, k);
	return 0;
}

static int
rules_add_narrow(const struct fam *f, const struct grule *r, const uint8_t *k,
		 int is_range)
{
	struct lb_steer_val v = {.kind = (uint8_t)r->kind};
	struct lb_steer_val av;
	uint8_t ak[KEY_MAX];
	int rc;

	make_key(f, r->addr, 0, 0, ak);
	if (is_range) {
		v.port_min = r->port_min;
		v.port_max = r->port_max;
		if (r->port_min == 0 && r->port_max == 0)
			v.port_max = UINT16_MAX;
	}
	/* The address entry goes in last, so that the program never finds
	 * it without the rule it announces. */
	rc = bpf_map_update_elem(f->fd, k, &v, BPF_NOEXIST);
	if (rc != 0)
		return rc;
	if (bpf_map_lookup_elem(f->fd, ak, &av) != 0) {
		memset(&av, 0, sizeof(av));
		av.kind = (uint8_t)r->kind;
	}
	if (av.nb_narrow == UINT16_MAX) {
		rc = -E2BIG;
	} else {
		av.nb_narrow++;
		rc = bpf_map_update_elem(f->fd, ak, &av, BPF_ANY);
	}
	if (rc != 0)
		bpf_map_delete_elem(f->fd, k);
	return rc;
}

static int
rule_add(const struct fam *f, const struct grule *r)
{
	uint8_t k[KEY_MAX];
	struct lb_steer_val v;
	int is_range, rc;

	rc = rule_key(f, r, k, &is_range);
	if (rc != 0)
		return rc;
	if (r->proto != 0)
		return rules_add_narrow(f, r, k, is_range);
	if (bpf_map_lookup_elem(f->fd, k, &v) == 0) {
		if (v.flags & LB_STEER_F_ADDR)
			return -EEXIST;
	} else {
		memset(&v, 0, sizeof(v));
	}
	v.flags |= LB_STEER_F_ADDR;
	v.kind = (uint8_t)r->kind;
	return bpf_map_update_elem(f->fd, k, &v, BPF_ANY);
}

static int
rule_del(const struct fam *f, const struct grule *r)
{
	uint8_t k[KEY_MAX], ak[KEY_MAX];
	struct lb_steer_val v, av;
	int is_range, rc;

	rc = rule_key(f, r, k, &is_range);
	if (rc != 0)
		return rc;
	make_key(f, r->addr, 0, 0, ak);
	if (bpf_map_lookup_elem(f->fd, ak, &av) != 0)
		return -ENOENT;
	if (r->proto == 0) {
		if (!(av.flags & LB_STEER_F_ADDR))
			return -ENOENT;
		if (av.nb_narrow == 0)
			return bpf_map_delete_elem(f->fd, ak);
		av.flags &= (uint8_t)~LB_STEER_F_ADDR;
		return bpf_map_update_elem(f->fd, ak, &av, BPF_EXIST);
	}
	if (bpf_map_lookup_elem(f->fd, k, &v) != 0)
		return -ENOENT;
	/* A range and a single port of the same address and protocol live
	 * under different keys; the rule names which one to remove. */
	rc = bpf_map_delete_elem(f->fd, k);
	if (rc != 0)
		return rc;
	if (av.nb_narrow > 0)
		av.nb_narrow--;
	if (av.nb_narrow == 0 && !(av.flags & LB_STEER_F_ADDR))
		return bpf_map_delete_elem(f->fd, ak);
	return bpf_map_update_elem(f->fd, ak, &av, BPF_EXIST);
}

static int
rule_walk(const struct fam *f, int (*cb)(const struct grule *r, void *arg),
	  void *arg)
{
	uint8_t k[KEY_MAX], next[KEY_MAX], *prev = NULL;
	struct lb_steer_val v;
	int rc;

	while ((rc = bpf_map_get_next_key(f->fd, prev, next)) == 0) {
		struct grule r = {.addr = k};
		uint16_t port;

		memcpy(k, next, sizeof(k));
		prev = k;
		if (bpf_map_lookup_elem(f->fd, k, &v) != 0)
			continue; /* removed meanwhile */
		memcpy(&port, k + f->alen, sizeof(port));
		r.proto = k[f->alen + 2];
		if (r.proto == 0 && !(v.flags & LB_STEER_F_ADDR))
			continue; /* an index entry, not a rule */
		r.kind = (enum lb_steer_kind)v.kind;
		if (port != 0) {
			r.port_min = r.port_max = ntohs(port);
		} else if (r.proto == IPPROTO_TCP || r.proto == IPPROTO_UDP) {
			r.port_min = v.port_min;
			r.port_max = v.port_max;
			if (r.port_min == 0 && r.port_max == UINT16_MAX)
				r.port_max = 0;
		}
		rc = cb(&r, arg);
		if (rc != 0)
			return rc;
	}
	return rc == -ENOENT ? 0 : rc;
}

/* ---- the two families' calls ---- */

/* Adds (or with @p del removes) a rule of the family of @p alen. */
static int
rule_do(struct lb_steer *s, size_t alen, const uint8_t *addr, uint8_t proto,
	uint16_t lo, uint16_t hi, enum lb_steer_kind kind, int del)
{
	struct grule g = {addr, proto, lo, hi, kind};
	struct fam f = {.alen = alen};

	if (s == NULL)
		return -EINVAL;
	if (alen == 16) {
		if (!unicast6(addr))
			return -EINVAL;
		if (s->fd_rules6 < 0)
			return -EOPNOTSUPP;
		f.fd = s->fd_rules6;
	} else {
		uint32_t a;

		memcpy(&a, addr, sizeof(a));
		if (!unicast4(a))
			return -EINVAL;
		f.fd = s->fd_rules;
	}
	return del ? rule_del(&f, &g) : rule_add(&f, &g);
}

#define RULE_DO(s, r, alen, del)                                           \
	((r) == NULL ? -EINVAL                                             \
		     : rule_do(s, alen, (const uint8_t *)&(r)->addr,        \
			       (r)->proto, (r)->port_min, (r)->port_max,    \
			       (r)->kind, del))

int
lb_steer_rule_add(struct lb_steer *s, const struct lb_steer_rule *r)
{
	return RULE_DO(s, r, 4, 0);
}

int
lb_steer_rule_del(struct lb_steer *s, const struct lb_steer_rule *r)
{
	return RULE_DO(s, r, 4, 1);
}

int
lb_steer_rule6_add(struct lb_steer *s, const struct lb_steer_rule6 *r)
{
	return RULE_DO(s, r, 16, 0);
}

int
lb_steer_rule6_del(struct lb_steer *s, const struct lb_steer_rule6 *r)
{
	return RULE_DO(s, r, 16, 1);
}

/* A walk of either family: the caller's callback of that family. */
struct walk {
	int (*cb4)(const struct lb_steer_rule *r, void *arg);
	int (*cb6)(const struct lb_steer_rule6 *r, void *arg);
	void *arg;
};

#define RULE_FROM(r, g)                                                    \
	do {                                                               \
		memcpy(&(r).addr, (g)->addr, sizeof((r).addr));            \
		(r).proto = (g)->proto;                                    \
		(r).port_min = (g)->port_min;                              \
		(r).port_max = (g)->port_max;                              \
		(r).kind = (g)->kind;                                      \
	} while (0)

static int
walk_cb(const struct grule *g, void *arg)
{
	const struct walk *w = arg;
	struct lb_steer_rule6 r6;
	struct lb_steer_rule r4;

	if (w->cb6 != NULL) {
		RULE_FROM(r6, g);
		return w->cb6(&r6, w->arg);
	}
	RULE_FROM(r4, g);
	return w->cb4(&r4, w->arg);
}

int
lb_steer_rule_walk(struct lb_steer *s,
		   int (*cb)(const struct lb_steer_rule *r, void *arg),
		   void *arg)
{
	struct walk w = {.cb4 = cb, .arg = arg};
	struct fam f = {.alen = 4};

	if (s == NULL || cb == NULL)
		return -EINVAL;
	f.fd = s->fd_rules;
	return rule_walk(&f, walk_cb, &w);
}

int
lb_steer_rule6_walk(struct lb_steer *s,
		    int (*cb)(const struct lb_steer_rule6 *r, void *arg),
		    void *arg)
{
	struct walk w = {.cb6 = cb, .arg = arg};
	struct fam f = {.alen = 16};

	if (s == NULL || cb == NULL)
		return -EINVAL;
	if (s->fd_rules6 < 0)
		return -EOPNOTSUPP;
	f.fd = s->fd_rules6;
	return rule_walk(&f, walk_cb, &w);
}
