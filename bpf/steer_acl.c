/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The source ACL of include/lb/steer.h: prefixes the XDP program drops
 * or lets through, in its LPM trie, with expiry and their collection.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include <bpf/bpf.h>

#include "lb/steer.h"
#include "steer_priv.h"

static int
acl_key(uint32_t prefix, uint8_t prefixlen, struct lb_steer_acl_key *k)
{
	uint32_t mask;

	if (prefixlen > 32)
		return -EINVAL;
	mask = prefixlen == 0 ? 0 : htonl(~0u << (32 - prefixlen));
	if ((prefix & ~mask) != 0)
		return -EINVAL;
	k->prefixlen = prefixlen;
	k->addr = prefix;
	return 0;
}

int
lb_steer_acl_put(struct lb_steer *s, const struct lb_steer_acl *a)
{
	struct lb_steer_acl_key k;
	struct lb_steer_acl_val v;
	int rc;

	if (s == NULL || a == NULL ||
	    (a->action != LB_STEER_ACL_DENY &&
	     a->action != LB_STEER_ACL_DENY_LB &&
	     a->action != LB_STEER_ACL_ALLOW) ||
	    (a->origin != LB_STEER_ACL_MANUAL &&
	     a->origin != LB_STEER_ACL_AUTO))
		return -EINVAL;
	rc = acl_key(a->prefix, a->prefixlen, &k);
	if (rc != 0)
		return rc;
	memset(&v, 0, sizeof(v));
	v.action = (uint8_t)a->action;
	v.prefixlen = a->prefixlen;
	v.origin = (uint8_t)a->origin;
	v.expires_ns = a->expires_ns;
	return bpf_map_update_elem(s->fd_acl, &k, &v, BPF_ANY);
}

int
lb_steer_acl_set(struct lb_steer *s, uint32_t prefix, uint8_t prefixlen,
		 enum lb_steer_acl_action action, uint64_t ttl_ns)
{
	struct lb_steer_acl a = {
		.prefix = prefix,
		.prefixlen = prefixlen,
		.action = action,
		.origin = LB_STEER_ACL_MANUAL,
	};

	if (ttl_ns != 0) {
		a.expires_ns = lb_steer_now_ns() + ttl_ns;
		if (a.expires_ns < ttl_ns)
			a.expires_ns = UINT64_MAX;
	}
	return lb_steer_acl_put(s, &a);
}

int
lb_steer_acl_match(struct lb_steer *s, uint32_t addr, uint64_t now_ns,
		   struct lb_steer_acl *out)
{
	struct lb_steer_acl_key k = {.prefixlen = 32, .addr = addr};
	struct lb_steer_acl_val v;

	if (s == NULL || out == NULL)
		return -EINVAL;
	/* As the program: an expired entry is looked past, to the
	 * prefixes shorter than its own. */
	for (;;) {
		if (bpf_map_lookup_elem(s->fd_acl, &k, &v) != 0)
			return -ENOENT;
		if (v.expires_ns == 0 || v.expires_ns > now_ns)
			break;
		if (v.prefixlen == 0 || v.prefixlen > 32)
			return -ENOENT;
		k.prefixlen = v.prefixlen - 1u;
	}
	out->prefixlen = v.prefixlen;
	out->prefix = v.prefixlen == 0
			      ? 0
			      : addr & htonl(~0u << (32 - v.prefixlen));
	out->action = (enum lb_steer_acl_action)v.action;
	out->expires_ns = v.expires_ns;
	out->origin = (enum lb_steer_acl_origin)v.origin;
	return 0;
}

int
lb_steer_acl_del(struct lb_steer *s, uint32_t prefix, uint8_t prefixlen)
{
	struct lb_steer_acl_key k;
	int rc;

	if (s == NULL)
		return -EINVAL;
	rc = acl_key(prefix, prefixlen, &k);
	if (rc != 0)
		return rc;
	return bpf_map_delete_elem(s->fd_acl, &k);
}

int
lb_steer_acl_walk(struct lb_steer *s,
		  int (*cb)(const struct lb_steer_acl *a, void *arg), void *arg)
{
	struct lb_steer_acl_key k, next, *prev = NULL;
	struct lb_steer_acl_val v;
	int rc;

	if (s == NULL || cb == NULL)
		return -EINVAL;
	while ((rc = bpf_map_get_next_key(s->fd_acl, prev, &next)) == 0) {
		struct lb_steer_acl a;

		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(s->fd_acl, &k, &v) != 0)
			continue;
		a.prefix = k.addr;
		a.prefixlen = (uint8_t)k.prefixlen;
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
	struct lb_steer_acl_key *keys;
	size_t n, cap;
	uint64_t now;
};

static int
gc_collect(const struct lb_steer_acl *a, void *arg)
{
	struct gc_list *l = arg;

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
	l->keys[l->n].prefixlen = a->prefixlen;
	l->keys[l->n].addr = a->prefix;
	l->n++;
	return 0;
}

int
lb_steer_acl_gc(struct lb_steer *s, uint64_t now_ns)
{
	struct gc_list l = {.now = now_ns ? now_ns : lb_steer_now_ns()};
	int rc, removed = 0;

	if (s == NULL)
		return -EINVAL;
	/* Collect first: deleting while walking an LPM trie restarts the
	 * walk from its first key. */
	rc = lb_steer_acl_walk(s, gc_collect, &l);
	for (size_t i = 0; rc == 0 && i < l.n; i++) {
		struct lb_steer_acl_val v;

		/* Set again since the walk? Then it is not ours to remove. */
		if (bpf_map_lookup_elem(s->fd_acl, &l.keys[i], &v) != 0 ||
		    v.expires_ns == 0 || v.expires_ns > l.now)
			continue;
		if (bpf_map_delete_elem(s->fd_acl, &l.keys[i]) == 0 &&
		    removed < INT_MAX)
			removed++;
	}
	free(l.keys);
	return rc != 0 ? rc : removed;
}
