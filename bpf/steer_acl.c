/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The source ACLs of include/lb/steer.h: prefixes the XDP program drops
 * or lets through, in its LPM tries acl_v4 and acl_v6, with expiry and
 * their collection. Both tries' keys are a 32-bit prefix length and then
 * the address, so one set of functions builds and reads both as bytes.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include <bpf/bpf.h>

#include "lb/steer.h"
#include "steer_priv.h"

_Static_assert(sizeof(struct lb_steer_acl_key) == 8 &&
		       offsetof(struct lb_steer_acl_key, addr) == 4,
	       "acl_v4 key is not prefixlen, addr");
_Static_assert(sizeof(struct lb_steer_acl_key6) == 20 &&
		       offsetof(struct lb_steer_acl_key6, addr) == 4,
	       "acl_v6 key is not prefixlen, addr");

#define KEY_MAX sizeof(struct lb_steer_acl_key6)

/* One family's ACL and the length of its addresses. */
struct fam {
	int fd;
	size_t alen;
};

/* An entry of either family. */
struct gacl {
	uint8_t prefix[16];
	uint8_t prefixlen;
	enum lb_steer_acl_action action;
	uint64_t expires_ns;
	enum lb_steer_acl_origin origin;
};

/* Zeroes the bits of @p a past @p len; are there any that were set? */
static int
mask_to(uint8_t *a, size_t alen, unsigned int len)
{
	int set = 0;

	for (size_t i = 0; i < alen; i++) {
		unsigned int keep = len >= 8 * (i + 1) ? 8
				    : len > 8 * i  ? len - 8 * (unsigned)i
						   : 0;
		uint8_t m = (uint8_t)(0xffu >> keep); /* host bits */

		set |= (a[i] & m) != 0;
		a[i] &= (uint8_t)~m;
	}
	return set;
}

static int
acl_key(const struct fam *f, const uint8_t *prefix, uint8_t prefixlen,
	uint8_t *k)
{
	uint32_t len = prefixlen;

	if (prefixlen > 8 * f->alen)
		return -EINVAL;
	memset(k, 0, KEY_MAX);
	memcpy(k, &len, sizeof(len));
	memcpy(k + 4, prefix, f->alen);
	if (mask_to(k + 4, f->alen, prefixlen))
		return -EINVAL;
	return 0;
}

static int
acl_put(const struct fam *f, const struct gacl *a)
{
	uint8_t k[KEY_MAX];
	struct lb_steer_acl_val v;
	int rc;

	if ((a->action != LB_STEER_ACL_DENY &&
	     a->action != LB_STEER_ACL_DENY_LB &&
	     a->action != LB_STEER_ACL_ALLOW) ||
	    (a->origin != LB_STEER_ACL_MANUAL &&
	     a->origin != LB_STEER_ACL_AUTO))
		return -EINVAL;
	rc = acl_key(f, a->prefix, a->prefixlen, k);
	if (rc != 0)
		return rc;
	memset(&v, 0, sizeof(v));
	v.action = (uint8_t)a->action;
	v.prefixlen = a->prefixlen;
	v.origin = (uint8_t)a->origin;
	v.expires_ns = a->expires_ns;
	return bpf_map_update_elem(f->fd, k, &v, BPF_ANY);
}

static uint64_t
expiry(uint64_t ttl_ns)
{
	uint64_t e;

	if (ttl_ns == 0)
		return 0;
	e = lb_steer_now_ns() + ttl_ns;
	return e < ttl_ns ? UINT64_MAX : e;
}

static int
acl_match(const struct fam *f, const uint8_t *addr, uint64_t now_ns,
	  struct gacl *out)
{
	uint8_t k[KEY_MAX];
	uint32_t len = (uint32_t)(8 * f->alen);
	struct lb_steer_acl_val v;

	memset(k, 0, sizeof(k));
	memcpy(k + 4, addr, f->alen);
	/* As the program: an expired entry is looked past, to the
	 * prefixes shorter than its own. */
	for (;;) {
		memcpy(k, &len, sizeof(len));
		if (bpf_map_lookup_elem(f->fd, k, &v) != 0)
			return -ENOENT;
		if (v.expires_ns == 0 || v.expires_ns > now_ns)
			break;
		if (v.prefixlen == 0 || v.prefixlen > 8 * f->alen)
			return -ENOENT;
		len = v.prefixlen - 1u;
	}
	memset(out, 0, sizeof(*out));
	memcpy(out->prefix, addr, f->alen);
	mask_to(out->prefix, f->alen, v.prefixlen);
	out->prefixlen = v.prefixlen;
	out->action = (enum lb_steer_acl_action)v.action;
	out->expires_ns = v.expires_ns;
	out->origin = (enum lb_steer_acl_origin)v.origin;
	return 0;
}

static int
acl_del(const struct fam *f, const uint8_t *prefix, uint8_t prefixlen)
{
	uint8_t k[KEY_MAX];
	int rc = acl_key(f, prefix, prefixlen, k);

	return rc != 0 ? rc : bpf_map_delete_elem(f->fd, k);
}

static int
acl_walk(const struct fam *f, int (*cb)(const struct gacl *a, void *arg),
	 void *arg)
{
	uint8_t k[KEY_MAX], next[KEY_MAX], *prev = NULL;
	struct lb_steer_acl_val v;
	int rc;

	while ((rc = bpf_map_get_next_key(f->fd, prev, next)) == 0) {
		struct gacl a;
		uint32_t len;

		memcpy(k, next, sizeof(k));
		prev = k;
		if (bpf_map_lookup_elem(f->fd, k, &v) != 0)
			continue;
		memset(&a, 0, sizeof(a));
		memcpy(&len, k, sizeof(len));
		memcpy(a.prefix, k + 4, f->alen);
		a.prefixlen = (uint8_t)len;
		a.action = (enum lb_steer_acl_action)v.action;
		a.expires_ns = v.expires_ns;
		a.origin = (enum lb_steer_acl_origin)v.origin;
		rc = cb(&a, arg);
		if (rc != 0)
			return rc;
	}
	return rc == -ENOENT ? 0 : rc;
}

struct gc_list {
	uint8_t (*keys)[KEY_MAX];
	size_t n, cap;
	size_t alen;
	uint64_t now;
};

static int
gc_collect(const struct gacl *a, void *arg)
{
	struct gc_list *l = arg;
	uint32_t len = a->prefixlen;

	if (a->expires_ns == 0 || a->expires_ns > l->now)
		return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		void *p = realloc(l->keys, cap * sizeof(*l->keys));

		if (p == NULL)
			return -ENOMEM;
		l->keys = p;
		l->cap = cap;
	}
	memset(l->keys[l->n], 0, KEY_MAX);
	memcpy(l->keys[l->n], &len, sizeof(len));
	memcpy(l->keys[l->n] + 4, a->prefix, l->alen);
	l->n++;
	return 0;
}

/* Removes one family's entries expired at @p now: their number, or a
 * negative errno. */
static int
acl_gc(const struct fam *f, uint64_t now)
{
	struct gc_list l = {.alen = f->alen, .now = now};
	int rc, removed = 0;

	/* Collect first: deleting while walking an LPM trie restarts the
	 * walk from its first key. */
	rc = acl_walk(f, gc_collect, &l);
	for (size_t i = 0; rc == 0 && i < l.n; i++) {
		struct lb_steer_acl_val v;

		/* Set again since the walk? Then it is not ours to remove. */
		if (bpf_map_lookup_elem(f->fd, l.keys[i], &v) != 0 ||
		    v.expires_ns == 0 || v.expires_ns > l.now)
			continue;
		if (bpf_map_delete_elem(f->fd, l.keys[i]) == 0 &&
		    removed < INT_MAX)
			removed++;
	}
	free(l.keys);
	return rc != 0 ? rc : removed;
}

/* The ACL of the family of @p alen in *@p f; -EOPNOTSUPP for IPv6 on
 * the pins of a version without it. */
static int
fam_of(const struct lb_steer *s, size_t alen, struct fam *f)
{
	if (s == NULL)
		return -EINVAL;
	f->alen = alen;
	f->fd = alen == 16 ? s->fd_acl6 : s->fd_acl;
	return f->fd < 0 ? -EOPNOTSUPP : 0;
}

int
lb_steer_acl_gc(struct lb_steer *s, uint64_t now_ns)
{
	uint64_t now = now_ns ? now_ns : lb_steer_now_ns();
	int total = 0;

	if (s == NULL)
		return -EINVAL;
	for (size_t alen = 4; alen <= 16; alen += 12) {
		struct fam f;
		int n;

		if (fam_of(s, alen, &f) != 0)
			continue; /* no IPv6 ACL in older pins */
		n = acl_gc(&f, now);
		if (n < 0)
			return n;
		total = total > INT_MAX - n ? INT_MAX : total + n;
	}
	return total;
}

/* ---- the two families' calls ---- */

/* Copies what an entry holds besides its prefix, between struct gacl and
 * struct lb_steer_acl or lb_steer_acl6. */
#define ACL_COPY(dst, src)                                                 \
	do {                                                               \
		memcpy(&(dst)->prefix, &(src)->prefix,                     \
		       sizeof((dst)->prefix) < sizeof((src)->prefix)       \
			       ? sizeof((dst)->prefix)                     \
			       : sizeof((src)->prefix));                   \
		(dst)->prefixlen = (src)->prefixlen;                       \
		(dst)->action = (src)->action;                             \
		(dst)->expires_ns = (src)->expires_ns;                     \
		(dst)->origin = (src)->origin;                             \
	} while (0)

static int
put(struct lb_steer *s, size_t alen, const struct gacl *g)
{
	struct fam f;
	int rc = fam_of(s, alen, &f);

	return rc != 0 ? rc : acl_put(&f, g);
}

int
lb_steer_acl_put(struct lb_steer *s, const struct lb_steer_acl *a)
{
	struct gacl g = {.prefixlen = 0};

	if (a == NULL)
		return -EINVAL;
	ACL_COPY(&g, a);
	return put(s, 4, &g);
}

int
lb_steer_acl6_put(struct lb_steer *s, const struct lb_steer_acl6 *a)
{
	struct gacl g;

	if (a == NULL)
		return -EINVAL;
	ACL_COPY(&g, a);
	return put(s, 16, &g);
}

static int
set(struct lb_steer *s, size_t alen, const void *prefix, uint8_t prefixlen,
    enum lb_steer_acl_action action, uint64_t ttl_ns)
{
	struct gacl g = {
		.prefixlen = prefixlen,
		.action = action,
		.expires_ns = expiry(ttl_ns),
		.origin = LB_STEER_ACL_MANUAL,
	};

	if (prefix == NULL)
		return -EINVAL;
	memcpy(g.prefix, prefix, alen);
	return put(s, alen, &g);
}

int
lb_steer_acl_set(struct lb_steer *s, uint32_t prefix, uint8_t prefixlen,
		 enum lb_steer_acl_action action, uint64_t ttl_ns)
{
	return set(s, 4, &prefix, prefixlen, action, ttl_ns);
}

int
lb_steer_acl6_set(struct lb_steer *s, const uint8_t prefix[16],
		  uint8_t prefixlen, enum lb_steer_acl_action action,
		  uint64_t ttl_ns)
{
	return set(s, 16, prefix, prefixlen, action, ttl_ns);
}

static int
match(struct lb_steer *s, size_t alen, const void *addr, uint64_t now_ns,
      struct gacl *g)
{
	struct fam f;
	int rc = fam_of(s, alen, &f);

	if (rc != 0)
		return rc;
	return addr == NULL ? -EINVAL : acl_match(&f, addr, now_ns, g);
}

int
lb_steer_acl_match(struct lb_steer *s, uint32_t addr, uint64_t now_ns,
		   struct lb_steer_acl *out)
{
	struct gacl g;
	int rc = out == NULL ? -EINVAL : match(s, 4, &addr, now_ns, &g);

	if (rc == 0)
		ACL_COPY(out, &g);
	return rc;
}

int
lb_steer_acl6_match(struct lb_steer *s, const uint8_t addr[16],
		    uint64_t now_ns, struct lb_steer_acl6 *out)
{
	struct gacl g;
	int rc = out == NULL ? -EINVAL : match(s, 16, addr, now_ns, &g);

	if (rc == 0)
		ACL_COPY(out, &g);
	return rc;
}

static int
del(struct lb_steer *s, size_t alen, const void *prefix, uint8_t prefixlen)
{
	struct fam f;
	int rc = fam_of(s, alen, &f);

	if (rc != 0)
		return rc;
	return prefix == NULL ? -EINVAL : acl_del(&f, prefix, prefixlen);
}

int
lb_steer_acl_del(struct lb_steer *s, uint32_t prefix, uint8_t prefixlen)
{
	return del(s, 4, &prefix, prefixlen);
}

int
lb_steer_acl6_del(struct lb_steer *s, const uint8_t prefix[16],
		  uint8_t prefixlen)
{
	return del(s, 16, prefix, prefixlen);
}

/* A walk of either family: the caller's callback of that family. */
struct walk {
	int (*cb4)(const struct lb_steer_acl *a, void *arg);
	int (*cb6)(const struct lb_steer_acl6 *a, void *arg);
	void *arg;
};

static int
walk_cb(const struct gacl *g, void *arg)
{
	const struct walk *w = arg;
	struct lb_steer_acl6 a6;
	struct lb_steer_acl a4;

	if (w->cb6 != NULL) {
		ACL_COPY(&a6, g);
		return w->cb6(&a6, w->arg);
	}
	ACL_COPY(&a4, g);
	return w->cb4(&a4, w->arg);
}

static int
walk(struct lb_steer *s, size_t alen, struct walk *w)
{
	struct fam f;
	int rc = fam_of(s, alen, &f);

	if (rc != 0)
		return rc;
	if (w->cb4 == NULL && w->cb6 == NULL)
		return -EINVAL;
	return acl_walk(&f, walk_cb, w);
}

int
lb_steer_acl_walk(struct lb_steer *s,
		  int (*cb)(const struct lb_steer_acl *a, void *arg), void *arg)
{
	struct walk w = {.cb4 = cb, .arg = arg};

	return walk(s, 4, &w);
}

int
lb_steer_acl6_walk(struct lb_steer *s,
		   int (*cb)(const struct lb_steer_acl6 *a, void *arg),
		   void *arg)
{
	struct walk w = {.cb6 = cb, .arg = arg};

	return walk(s, 16, &w);
}
