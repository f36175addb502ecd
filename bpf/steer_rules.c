/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The steering rules of include/lb/steer.h: which destinations the XDP
 * program hands to the AF_XDP sockets, kept in its hash map.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include <bpf/bpf.h>

#include "lb/steer.h"
#include "steer_priv.h"

/* Can @p addr (network order) be the destination of our traffic? */
static int
unicast(uint32_t addr)
{
	uint32_t h = ntohl(addr);

	return (h >> 24) != 0 && h < 0xe0000000u;
}

/* The map key of a rule; *is_range for the {addr, 0, proto} shape. */
static int
rule_key(const struct lb_steer_rule *r, struct lb_steer_key *k, int *is_range)
{
	memset(k, 0, sizeof(*k));
	*is_range = 0;
	if (r == NULL || !unicast(r->addr) || r->kind >= LB_STEER_KIND_MAX)
		return -EINVAL;
	k->addr = r->addr;
	k->proto = r->proto;
	if (r->proto == IPPROTO_TCP || r->proto == IPPROTO_UDP) {
		if (r->port_min > r->port_max)
			return -EINVAL;
		if (r->port_min != 0 && r->port_min == r->port_max)
			k->port = htons(r->port_min);
		else
			*is_range = 1;
		return 0;
	}
	if (r->port_min != 0 || r->port_max != 0)
		return -EINVAL;
	return 0;
}

static int
rules_add_narrow(struct lb_steer *s, const struct lb_steer_rule *r,
		 const struct lb_steer_key *k, int is_range)
{
	struct lb_steer_key ak = {.addr = r->addr};
	struct lb_steer_val v = {.kind = (uint8_t)r->kind};
	struct lb_steer_val av;
	int rc;

	if (is_range) {
		v.port_min = r->port_min;
		v.port_max = r->port_max;
		if (r->port_min == 0 && r->port_max == 0)
			v.port_max = UINT16_MAX;
	}
	/* The address entry goes in last, so that the program never finds
	 * it without the rule it announces. */
	rc = bpf_map_update_elem(s->fd_rules, k, &v, BPF_NOEXIST);
	if (rc != 0)
		return rc;
	if (bpf_map_lookup_elem(s->fd_rules, &ak, &av) != 0) {
		memset(&av, 0, sizeof(av));
		av.kind = (uint8_t)r->kind;
	}
	if (av.nb_narrow == UINT16_MAX) {
		rc = -E2BIG;
	} else {
		av.nb_narrow++;
		rc = bpf_map_update_elem(s->fd_rules, &ak, &av, BPF_ANY);
	}
	if (rc != 0)
		bpf_map_delete_elem(s->fd_rules, k);
	return rc;
}

int
lb_steer_rule_add(struct lb_steer *s, const struct lb_steer_rule *r)
{
	struct lb_steer_key k;
	struct lb_steer_val v;
	int is_range, rc;

	if (s == NULL)
		return -EINVAL;
	rc = rule_key(r, &k, &is_range);
	if (rc != 0)
		return rc;
	if (r->proto != 0)
		return rules_add_narrow(s, r, &k, is_range);
	if (bpf_map_lookup_elem(s->fd_rules, &k, &v) == 0) {
		if (v.flags & LB_STEER_F_ADDR)
			return -EEXIST;
	} else {
		memset(&v, 0, sizeof(v));
	}
	v.flags |= LB_STEER_F_ADDR;
	v.kind = (uint8_t)r->kind;
	return bpf_map_update_elem(s->fd_rules, &k, &v, BPF_ANY);
}

int
lb_steer_rule_del(struct lb_steer *s, const struct lb_steer_rule *r)
{
	struct lb_steer_key k, ak;
	struct lb_steer_val v, av;
	int is_range, rc;

	if (s == NULL)
		return -EINVAL;
	rc = rule_key(r, &k, &is_range);
	if (rc != 0)
		return rc;
	memset(&ak, 0, sizeof(ak));
	ak.addr = r->addr;
	if (bpf_map_lookup_elem(s->fd_rules, &ak, &av) != 0)
		return -ENOENT;
	if (r->proto == 0) {
		if (!(av.flags & LB_STEER_F_ADDR))
			return -ENOENT;
		if (av.nb_narrow == 0)
			return bpf_map_delete_elem(s->fd_rules, &ak);
		av.flags &= (uint8_t)~LB_STEER_F_ADDR;
		return bpf_map_update_elem(s->fd_rules, &ak, &av, BPF_EXIST);
	}
	if (bpf_map_lookup_elem(s->fd_rules, &k, &v) != 0)
		return -ENOENT;
	/* A range and a single port of the same address and protocol live
	 * under different keys; the rule names which one to remove. */
	rc = bpf_map_delete_elem(s->fd_rules, &k);
	if (rc != 0)
		return rc;
	if (av.nb_narrow > 0)
		av.nb_narrow--;
	if (av.nb_narrow == 0 && !(av.flags & LB_STEER_F_ADDR))
		return bpf_map_delete_elem(s->fd_rules, &ak);
	return bpf_map_update_elem(s->fd_rules, &ak, &av, BPF_EXIST);
}

int
lb_steer_rule_walk(struct lb_steer *s,
		   int (*cb)(const struct lb_steer_rule *r, void *arg),
		   void *arg)
{
	struct lb_steer_key k, next;
	struct lb_steer_val v;
	struct lb_steer_key *prev = NULL;
	int rc;

	if (s == NULL || cb == NULL)
		return -EINVAL;
	while ((rc = bpf_map_get_next_key(s->fd_rules, prev, &next)) == 0) {
		struct lb_steer_rule r = {
			.addr = next.addr,
			.proto = next.proto,
		};

		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(s->fd_rules, &k, &v) != 0)
			continue; /* removed meanwhile */
		if (k.proto == 0 && !(v.flags & LB_STEER_F_ADDR))
			continue; /* an index entry, not a rule */
		r.kind = (enum lb_steer_kind)v.kind;
		if (k.port != 0) {
			r.port_min = r.port_max = ntohs(k.port);
		} else if (k.proto == IPPROTO_TCP || k.proto == IPPROTO_UDP) {
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
