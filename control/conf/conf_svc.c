/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration's services and their backends, and what works on the
 * whole configuration: validation, copy and save.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf_priv.h"
#include "lb/svc_opt.h"

/* ---- services ---- */

void
lb_conf_svc_opts_default(struct lb_conf_svc_opts *o)
{
	lb_svc_opt_default(o);
}

int
lb_conf_svc_opts_check(const struct lb_conf *c, uint8_t proto,
		       const struct lb_conf_svc_opts *o, struct lb_cmd_out *out)
{
	struct lb_svc_opt_ctx x;

	if (c == NULL || o == NULL)
		return lb_cmd_error(out, -EINVAL, "no options");
	x = (struct lb_svc_opt_ctx){proto, c->sched_known, c->sched_names};
	return lb_svc_opt_check_all(&x, o, out);
}

/*
 * What the dataplane does for an IPv6 service: full NAT to IPv6 backends
 * (fnat66), translation to IPv4 ones (fnat64), trials and the deferred
 * queue, the per-source budget, admission of new flows (admit-rate),
 * HTTP following and what rests on it over either family, and the SYN
 * proxy of layer-4 services to backends of either family. What would
 * need more (the SYN proxy with http, the PROXY protocol) is refused
 * rather than accepted and silently not applied: a limit an IPv6 client
 * could walk past is worse than none the operator knows of.
 */
static int
ip6_opts_check(const struct lb_conf_svc_key *key,
	       const struct lb_conf_svc_opts *o, struct lb_cmd_out *out)
{
	char s[SVC_STRLEN];
	const char *what = NULL;

	if (key->af != LB_CONF_AF_INET6)
		return 0;
	if (o->proxy_proto != LB_CONF_PP_OFF)
		what = "proxy-protocol";
	if (what != NULL)
		return lb_cmd_error(out, -EOPNOTSUPP,
				    "%s: %s is not available on IPv6 services "
				    "(they are forwarded at layer 4 only)",
				    lb_conf_key_str(key, s), what);
	if (o->synp.mode != LB_CONF_SYNP_OFF && o->http)
		return lb_cmd_error(out, -EOPNOTSUPP,
				    "%s: synproxy is not available on IPv6 "
				    "services with http",
				    lb_conf_key_str(key, s));
	return 0;
}

int
lb_conf_svc_add(struct lb_conf *c, const struct lb_conf_svc_key *key,
		const struct lb_conf_svc_opts *o, struct lb_cmd_out *out)
{
	char s[SVC_STRLEN];
	struct lb_conf_svc_opts def;
	struct lb_conf_svc *sv;
	struct lb_conf_ip vip;
	int rc;

	if (c == NULL)
		return lb_cmd_error(out, -EINVAL, "no configuration");
	rc = lb_conf_key_check(key, out);
	if (rc != 0)
		return rc;
	if (o == NULL) {
		lb_conf_svc_opts_default(&def);
		o = &def;
	}
	if (lb_conf_svc_get(c, key) != NULL)
		return lb_cmd_error(out, -EEXIST, "service %s already exists",
				    lb_conf_key_str(key, s));
	vip = lb_conf_key_vip(key);
	rc = lb_conf_unicast_check(&vip, "VIP", out);
	if (rc == 0)
		rc = lb_conf_roles_check(
			c, &vip, ROLE_SNAT | ROLE_BE | ROLE_GW, "VIP", out);
	if (rc == 0)
		rc = lb_conf_svc_opts_check(c, key->proto, o, out);
	if (rc == 0)
		rc = ip6_opts_check(key, o, out);
	if (rc != 0)
		return rc;
	if (c->nb_svc == LB_CONF_MAX_SVCS)
		return lb_cmd_error(out, -ENOSPC,
				    "too many services (limit %u)",
				    LB_CONF_MAX_SVCS);
	sv = &c->svc[c->nb_svc++];
	/* Not the backend slots: each is written whole when added. */
	memset(sv, 0, offsetof(struct lb_conf_svc, be));
	/* Only the family's address: the other stays zero. */
	sv->key = lb_conf_svc_key_of(key->proto, &vip, key->port);
	lb_svc_opt_copy(&sv->opts, o);
	c->gen++;
	return 0;
}

struct lb_conf_svc *
lb_conf_svc_or_error(const struct lb_conf *c, const struct lb_conf_svc_key *key,
		     struct lb_cmd_out *out, int *rc)
{
	char s[SVC_STRLEN];
	struct lb_conf_svc *sv;

	*rc = lb_conf_key_check(key, out);
	if (*rc != 0)
		return NULL;
	sv = lb_conf_svc_get(c, key);
	if (sv == NULL)
		*rc = lb_cmd_error(out, -ENOENT, "no service %s",
				   lb_conf_key_str(key, s));
	return sv;
}

int
lb_conf_svc_set(struct lb_conf *c, const struct lb_conf_svc_key *key,
		const struct lb_conf_svc_opts *o, struct lb_cmd_out *out)
{
	struct lb_conf_svc *sv;
	int rc;

	if (c == NULL || o == NULL)
		return lb_cmd_error(out, -EINVAL, "no configuration");
	sv = lb_conf_svc_or_error(c, key, out, &rc);
	if (sv == NULL)
		return rc;
	rc = lb_conf_svc_opts_check(c, key->proto, o, out);
	if (rc == 0)
		rc = ip6_opts_check(&sv->key, o, out);
	if (rc == 0)
		rc = lb_conf_rules_opts_check(sv, o, out);
	if (rc != 0)
		return rc;
	if (!lb_svc_opt_eq(&sv->opts, o)) {
		lb_svc_opt_copy(&sv->opts, o);
		c->gen++;
	}
	return 0;
}

int
lb_conf_svc_del(struct lb_conf *c, const struct lb_conf_svc_key *key,
		struct lb_cmd_out *out)
{
	struct lb_conf_svc *sv;
	unsigned int idx;
	int rc;

	if (c == NULL)
		return lb_cmd_error(out, -EINVAL, "no configuration");
	sv = lb_conf_svc_or_error(c, key, out, &rc);
	if (sv == NULL)
		return rc;
	idx = (unsigned int)(sv - c->svc);
	memmove(&c->svc[idx], &c->svc[idx + 1],
		(c->nb_svc - idx - 1) * sizeof(c->svc[0]));
	c->nb_svc--;
	c->gen++;
	return 0;
}

/* ---- backends ---- */

static int
weight_check(uint32_t weight, struct lb_cmd_out *out)
{
	if (weight < 1 || weight > LB_CONF_WEIGHT_MAX)
		return lb_cmd_error(out, -ERANGE,
				    "weight %u out of range 1..%u", weight,
				    LB_CONF_WEIGHT_MAX);
	return 0;
}

static struct lb_conf_be *
be_or_error(struct lb_conf_svc *sv, const struct lb_conf_ip *ip,
	    uint16_t port, struct lb_cmd_out *out, int *rc)
{
	char a[LB_CMD_IP_ADDR_STRLEN], s[SVC_STRLEN];
	struct lb_conf_be *be = lb_conf_be_find(sv, ip, port);

	if (be == NULL)
		*rc = lb_cmd_error(out, -ENOENT, "no backend %s in %s",
				   lb_cmd_fmt_ip_port(ip, port, a),
				   lb_conf_key_str(&sv->key, s));
	return be;
}

/* The backend @p ip:@p port of service @p key, or NULL with the error in
 * @p out and @p rc (the service too, in @p svp, when it is wanted). */
static struct lb_conf_be *
be_lookup(struct lb_conf *c, const struct lb_conf_svc_key *key,
	  const struct lb_conf_ip *ip, uint16_t port, struct lb_conf_svc **svp,
	  struct lb_cmd_out *out, int *rc)
{
	struct lb_conf_svc *sv;

	if (c == NULL) {
		*rc = lb_cmd_error(out, -EINVAL, "no configuration");
		return NULL;
	}
	if (ip == NULL) {
		*rc = lb_cmd_error(out, -EINVAL, "missing address");
		return NULL;
	}
	sv = lb_conf_svc_or_error(c, key, out, rc);
	if (svp != NULL)
		*svp = sv;
	return sv != NULL ? be_or_error(sv, ip, port, out, rc) : NULL;
}

int
lb_conf_be_add(struct lb_conf *c, const struct lb_conf_svc_key *key,
	       uint32_t ip, uint16_t port, uint32_t weight,
	       struct lb_cmd_out *out)
{
	struct lb_conf_ip a = lb_conf_ip4(ip);

	return lb_conf_be_add_ip(c, key, &a, port, weight, out);
}

int
lb_conf_be_add_ip(struct lb_conf *c, const struct lb_conf_svc_key *key,
		  const struct lb_conf_ip *ip, uint16_t port, uint32_t weight,
		  struct lb_cmd_out *out)
{
	char a[LB_CMD_IP_ADDR_STRLEN], s[SVC_STRLEN];
	struct lb_conf_svc *sv;
	struct lb_conf_be *be;
	int rc;

	if (c == NULL)
		return lb_cmd_error(out, -EINVAL, "no configuration");
	sv = lb_conf_svc_or_error(c, key, out, &rc);
	if (sv == NULL)
		return rc;
	if (port == 0)
		return lb_cmd_error(out, -ERANGE,
				    "port 0 out of range 1..65535");
	rc = weight_check(weight, out);
	if (rc == 0)
		rc = lb_conf_unicast_check(ip, "backend", out);
	if (rc != 0)
		return rc;
	lb_cmd_fmt_ip_port(ip, port, a);
	lb_conf_key_str(key, s);
	/* An IPv4 client has no IPv6 address to be written as; an IPv6
	 * client to an IPv4 backend is translated (fnat64), from an IPv4
	 * SNAT address. */
	if (sv->key.af == LB_CONF_AF_INET && ip->af == LB_CONF_AF_INET6)
		return lb_cmd_error(out, -EINVAL,
				    "backend %s is IPv6 but %s is IPv4: an "
				    "IPv4 service takes IPv4 backends only",
				    a, s);
	if (lb_conf_be_find(sv, ip, port) != NULL)
		return lb_cmd_error(out, -EEXIST,
				    "backend %s already exists in %s", a, s);
	rc = lb_conf_roles_check(c, ip, ROLE_ADDR | ROLE_SNAT | ROLE_VIP,
				 "backend", out);
	if (rc != 0)
		return rc;
	if (sv->nb_be == LB_CONF_MAX_BES)
		return lb_cmd_error(out, -ENOSPC,
				    "too many backends in %s (limit %u)", s,
				    LB_CONF_MAX_BES);
	be = &sv->be[sv->nb_be++];
	*be = (struct lb_conf_be){
		.af = ip->af, .port = port, .weight = weight};
	if (ip->af == LB_CONF_AF_INET6)
		memcpy(be->ip6, ip->ip6, LB_CONF_IP6_LEN);
	else
		be->ip = ip->ip;
	c->gen++;
	return 0;
}

int
lb_conf_be_del(struct lb_conf *c, const struct lb_conf_svc_key *key,
	       uint32_t ip, uint16_t port, struct lb_cmd_out *out)
{
	struct lb_conf_ip a = lb_conf_ip4(ip);

	return lb_conf_be_del_ip(c, key, &a, port, out);
}

int
lb_conf_be_del_ip(struct lb_conf *c, const struct lb_conf_svc_key *key,
		  const struct lb_conf_ip *ip, uint16_t port,
		  struct lb_cmd_out *out)
{
	struct lb_conf_svc *sv;
	struct lb_conf_be *be;
	unsigned int idx;
	int rc;

	be = be_lookup(c, key, ip, port, &sv, out, &rc);
	if (be == NULL)
		return rc;
	idx = (unsigned int)(be - sv->be);
	memmove(&sv->be[idx], &sv->be[idx + 1],
		(sv->nb_be - idx - 1) * sizeof(sv->be[0]));
	sv->nb_be--;
	c->gen++;
	return 0;
}

int
lb_conf_be_set_weight(struct lb_conf *c, const struct lb_conf_svc_key *key,
		      uint32_t ip, uint16_t port, uint32_t weight,
		      struct lb_cmd_out *out)
{
	struct lb_conf_ip a = lb_conf_ip4(ip);

	return lb_conf_be_set_weight_ip(c, key, &a, port, weight, out);
}

int
lb_conf_be_set_weight_ip(struct lb_conf *c, const struct lb_conf_svc_key *key,
			 const struct lb_conf_ip *ip, uint16_t port,
			 uint32_t weight, struct lb_cmd_out *out)
{
	struct lb_conf_be *be;
	int rc;

	be = be_lookup(c, key, ip, port, NULL, out, &rc);
	if (be == NULL)
		return rc;
	rc = weight_check(weight, out);
	if (rc != 0)
		return rc;
	if (be->weight != weight) {
		be->weight = weight;
		c->gen++;
	}
	return 0;
}

int
lb_conf_be_drain(struct lb_conf *c, const struct lb_conf_svc_key *key,
		 uint32_t ip, uint16_t port, bool draining,
		 struct lb_cmd_out *out)
{
	struct lb_conf_ip a = lb_conf_ip4(ip);

	return lb_conf_be_drain_ip(c, key, &a, port, draining, out);
}

int
lb_conf_be_drain_ip(struct lb_conf *c, const struct lb_conf_svc_key *key,
		    const struct lb_conf_ip *ip, uint16_t port, bool draining,
		    struct lb_cmd_out *out)
{
	char a[LB_CMD_IP_ADDR_STRLEN], s[SVC_STRLEN];
	struct lb_conf_be *be;
	int rc;

	be = be_lookup(c, key, ip, port, NULL, out, &rc);
	if (be == NULL)
		return rc;
	if (be->draining == draining)
		return lb_cmd_error(out, -EINVAL, "backend %s of %s is %s",
				    lb_cmd_fmt_ip_port(ip, port, a),
				    lb_conf_key_str(key, s),
				    draining ? "already draining"
					     : "not draining");
	be->draining = draining;
	c->gen++;
	return 0;
}

int
lb_conf_be_set_orch(struct lb_conf *c, const struct lb_conf_svc_key *key,
		    uint32_t ip, uint16_t port, bool orch,
		    struct lb_cmd_out *out)
{
	struct lb_conf_ip a = lb_conf_ip4(ip);

	return lb_conf_be_set_orch_ip(c, key, &a, port, orch, out);
}

int
lb_conf_be_set_orch_ip(struct lb_conf *c, const struct lb_conf_svc_key *key,
		       const struct lb_conf_ip *ip, uint16_t port, bool orch,
		       struct lb_cmd_out *out)
{
	struct lb_conf_be *be;
	int rc;

	be = be_lookup(c, key, ip, port, NULL, out, &rc);
	if (be == NULL)
		return rc;
	if (be->orch != orch) {
		be->orch = orch;
		c->gen++;
	}
	return 0;
}

/* ---- whole configuration ---- */

int
lb_conf_validate(const struct lb_conf *c, struct lb_cmd_out *out)
{
	struct lb_conf *t;
	int rc = 0;

	if (c == NULL)
		return lb_cmd_error(out, -EINVAL, "no configuration");
	if (c->nb_addr > LB_CONF_MAX_ADDRS ||
	    c->nb_route > LB_CONF_MAX_ROUTES ||
	    c->nb_snat > LB_CONF_MAX_SNATS || c->nb_svc > LB_CONF_MAX_SVCS)
		return lb_cmd_error(out, -ENOSPC, "too many entries");
	t = lb_conf_create(c->sched_known);
	if (t == NULL)
		return lb_cmd_error(out, -ENOMEM, "out of memory");
	t->sched_names = c->sched_names;
	/* The order of lb_conf_save(): each entry meets what it depends on. */
	for (unsigned int i = 0; i < c->nb_addr && rc == 0; i++) {
		const struct lb_conf_addr *x = &c->addr[i];
		struct lb_conf_ip a = LB_CONF_IP_OF(x);

		rc = lb_conf_addr_add_ip(t, &a, x->len, x->port, x->vlan, out);
	}
	for (unsigned int i = 0; i < c->nb_route && rc == 0; i++) {
		const struct lb_conf_route *r = &c->route[i];
		struct lb_conf_ip n = lb_conf_ip_of(r->af, r->net, r->net6);
		struct lb_conf_ip g = lb_conf_ip_of(r->af, r->gw, r->gw6);

		rc = lb_conf_route_add_ip(t, &n, r->len, &g, r->port, out);
	}
	for (unsigned int i = 0; i < c->nb_snat && rc == 0; i++) {
		const struct lb_conf_snat *x = &c->snat[i];
		struct lb_conf_ip a = LB_CONF_IP_OF(x);

		rc = lb_conf_snat_add_ip(t, &a, x->port, out);
	}
	for (unsigned int i = 0; i < c->nb_svc && rc == 0; i++) {
		const struct lb_conf_svc *sv = &c->svc[i];

		if (sv->nb_be > LB_CONF_MAX_BES) {
			rc = lb_cmd_error(out, -ENOSPC, "too many backends");
			break;
		}
		rc = lb_conf_svc_add(t, &sv->key, &sv->opts, out);
		if (rc == 0)
			rc = lb_conf_pool_replay(t, sv, out);
	}
	lb_conf_free(t);
	return rc;
}

int
lb_conf_copy(struct lb_conf *dst, const struct lb_conf *src)
{
	/* Every member before the arrays, and any after them. */
	const size_t head = offsetof(struct lb_conf, addr);
	const size_t tail = offsetof(struct lb_conf, svc) +
			    sizeof(((struct lb_conf *)NULL)->svc);
	lb_conf_sched_known_fn *known;
	lb_conf_sched_names_fn *names;
	lb_conf_rule_hits_fn *hits;
	void *hits_arg;
	uint64_t gen;

	if (dst == NULL || src == NULL)
		return -EINVAL;
	if (dst == src)
		return 0;
	known = dst->sched_known;
	names = dst->sched_names;
	hits = dst->rule_hits;
	hits_arg = dst->rule_hits_arg;
	gen = dst->gen;
	/* Only the entries in use: the whole structure is a few hundred KiB,
	 * mostly empty backend slots, and lb-control copies it around every
	 * command. Slots past the counts are never read and are initialised
	 * whole when an entry is added. */
	memcpy(dst, src, head);
	memcpy((char *)dst + tail, (const char *)src + tail,
	       sizeof(*dst) - tail);
	memcpy(dst->addr, src->addr, src->nb_addr * sizeof(src->addr[0]));
	memcpy(dst->route, src->route, src->nb_route * sizeof(src->route[0]));
	memcpy(dst->snat, src->snat, src->nb_snat * sizeof(src->snat[0]));
	for (unsigned int i = 0; i < src->nb_svc; i++)
		memcpy(&dst->svc[i], &src->svc[i],
		       offsetof(struct lb_conf_svc, be) +
			       src->svc[i].nb_be * sizeof(src->svc[i].be[0]));
	dst->sched_known = known;
	dst->sched_names = names;
	dst->rule_hits = hits;
	dst->rule_hits_arg = hits_arg;
	dst->gen = gen + 1;
	return 0;
}

int
lb_conf_save(const struct lb_conf *c, struct lb_cmd_out *out)
{
	char a[LB_CMD_IP_ADDR_STRLEN], b[LB_CMD_IP_ADDR_STRLEN];
	char s[SVC_STRLEN];
	int rc = 0;

	if (c == NULL || out == NULL)
		return lb_cmd_error(out, -EINVAL, "no configuration");
	for (unsigned int i = 0; i < c->nb_addr && rc == 0; i++) {
		const struct lb_conf_addr *x = &c->addr[i];
		struct lb_conf_ip ip = LB_CONF_IP_OF(x);

		rc = lb_cmd_printf(out, "addr add %s/%u port %u",
				   lb_conf_ipstr(&ip, a), x->len, x->port);
		if (rc == 0 && c->addr[i].vlan != 0)
			rc = lb_cmd_printf(out, " vlan %u", c->addr[i].vlan);
		if (rc == 0)
			rc = lb_cmd_printf(out, "\n");
	}
	for (unsigned int i = 0; i < c->nb_route && rc == 0; i++) {
		const struct lb_conf_route *r = &c->route[i];
		struct lb_conf_ip n = lb_conf_ip_of(r->af, r->net, r->net6);
		struct lb_conf_ip g = lb_conf_ip_of(r->af, r->gw, r->gw6);

		rc = lb_cmd_printf(out, "route add %s via %s port %u\n",
				   lb_cmd_fmt_ip_prefix(&n, r->len, a),
				   lb_conf_ipstr(&g, b), r->port);
	}
	for (unsigned int i = 0; i < c->nb_snat && rc == 0; i++) {
		const struct lb_conf_snat *x = &c->snat[i];
		struct lb_conf_ip ip = LB_CONF_IP_OF(x);

		rc = lb_cmd_printf(out, "snat add %s port %u\n",
				   lb_conf_ipstr(&ip, a), x->port);
	}
	for (unsigned int i = 0; i < c->nb_svc && rc == 0; i++) {
		const struct lb_conf_svc *sv = &c->svc[i];

		lb_conf_key_str(&sv->key, s);
		rc = lb_svc_opt_save(out, s, &sv->opts);
		if (rc == 0)
			rc = lb_conf_pool_save(out, s, sv);
		for (unsigned int j = 0; j < sv->nb_be && rc == 0; j++) {
			const struct lb_conf_be *be = &sv->be[j];
			struct lb_conf_ip ip =
				LB_CONF_IP_OF(be);

			if (be->orch)
				continue;
			lb_cmd_fmt_ip_port(&ip, be->port, a);
			rc = lb_cmd_printf(out, "backend add %s %s", s, a);
			if (rc == 0 && be->weight != LB_CONF_WEIGHT_DEFAULT)
				rc = lb_cmd_printf(out, " weight %u",
						   be->weight);
			if (rc == 0 && be->pool != 0 && be->pool <= sv->nb_pool)
				rc = lb_cmd_printf(out, " pool %s",
						   sv->pool[be->pool - 1].name);
			if (rc == 0)
				rc = lb_cmd_printf(out, "\n");
			if (rc == 0 && be->draining)
				rc = lb_cmd_printf(out, "backend drain %s %s\n",
						   s, a);
		}
		if (rc == 0)
			rc = lb_conf_rule_save(out, s, sv);
	}
	return rc;
}
