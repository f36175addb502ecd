/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration's addresses: local addresses with their subnets,
 * routes, SNAT addresses, and the checks that keep one role per address.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf_priv.h"

/* ---- small helpers ---- */

static uint32_t
mask_of(unsigned int len)
{
	if (len >= 32)
		return UINT32_MAX;
	return len == 0 ? 0 : UINT32_MAX << (32 - len);
}

static bool
in_subnet(uint32_t ip, uint32_t net, unsigned int len)
{
	return ((ip ^ net) & mask_of(len)) == 0;
}

/* Not "this network", loopback, multicast or reserved/broadcast. */
static bool
unicast(uint32_t ip)
{
	uint32_t a = ip >> 24;

	return a != 0 && a != 127 && a < 224;
}

char *
lb_conf_ipstr(uint32_t ip, char *buf)
{
	return lb_cmd_fmt_ipv4(ip, buf);
}

static char *
subnet_str(uint32_t ip, unsigned int len, char *buf)
{
	char a[LB_CMD_IPV4_STRLEN];

	snprintf(buf, LB_CMD_ADDR_STRLEN, "%s/%u",
		 lb_conf_ipstr(ip & mask_of(len), a), len);
	return buf;
}

char *
lb_conf_key_str(const struct lb_conf_svc_key *k, char *buf)
{
	char a[LB_CMD_ADDR_STRLEN];
	const char *p = lb_cmd_proto_name(k->proto);

	snprintf(buf, SVC_STRLEN, "%s %s", p != NULL ? p : "?",
		 lb_cmd_fmt_ipv4_port(k->vip, k->port, a));
	return buf;
}

static bool
key_eq(const struct lb_conf_svc_key *a, const struct lb_conf_svc_key *b)
{
	return a->proto == b->proto && a->vip == b->vip && a->port == b->port;
}

int
lb_conf_key_check(const struct lb_conf_svc_key *k, struct lb_cmd_out *out)
{
	if (k == NULL)
		return lb_cmd_error(out, -EINVAL, "missing service");
	if (lb_cmd_proto_name(k->proto) == NULL)
		return lb_cmd_error(out, -EINVAL,
				    "invalid protocol %u: expected tcp or udp",
				    k->proto);
	if (k->port == 0)
		return lb_cmd_error(out, -ERANGE,
				    "port 0 out of range 1..65535");
	return 0;
}

static int
port_check(unsigned int port, struct lb_cmd_out *out)
{
	if (port > LB_CONF_PORT_MAX)
		return lb_cmd_error(out, -ERANGE, "port %u out of range 0..%u",
				    port, LB_CONF_PORT_MAX);
	return 0;
}

struct lb_conf_addr *
lb_conf_addr_find(struct lb_conf *c, uint32_t ip)
{
	for (unsigned int i = 0; i < c->nb_addr; i++)
		if (c->addr[i].ip == ip)
			return &c->addr[i];
	return NULL;
}

static struct lb_conf_snat *
find_snat(struct lb_conf *c, uint32_t ip)
{
	for (unsigned int i = 0; i < c->nb_snat; i++)
		if (c->snat[i].ip == ip)
			return &c->snat[i];
	return NULL;
}

static struct lb_conf_route *
find_route(struct lb_conf *c, uint32_t net, unsigned int len)
{
	for (unsigned int i = 0; i < c->nb_route; i++)
		if (c->route[i].net == net && c->route[i].len == len)
			return &c->route[i];
	return NULL;
}

struct lb_conf_svc *
lb_conf_svc_get(const struct lb_conf *c, const struct lb_conf_svc_key *k)
{
	for (unsigned int i = 0; i < c->nb_svc; i++)
		if (key_eq(&c->svc[i].key, k))
			return (struct lb_conf_svc *)&c->svc[i];
	return NULL;
}

struct lb_conf_be *
lb_conf_be_find(struct lb_conf_svc *s, uint32_t ip, uint16_t port)
{
	for (unsigned int i = 0; i < s->nb_be; i++)
		if (s->be[i].ip == ip && s->be[i].port == port)
			return &s->be[i];
	return NULL;
}

/*
 * Describes the first role among @roles that @ip already has, e.g. "the
 * VIP of tcp 10.0.0.100:80". One address has one role so that the
 * dataplane can tell from a destination address alone what a packet is.
 */
static bool
role_of(const struct lb_conf *c, uint32_t ip, unsigned int roles, char *desc)
{
	char a[LB_CMD_ADDR_STRLEN], b[LB_CMD_IPV4_STRLEN], s[SVC_STRLEN];

	if (roles & ROLE_ADDR) {
		for (unsigned int i = 0; i < c->nb_addr; i++) {
			const struct lb_conf_addr *x = &c->addr[i];

			if (x->ip != ip)
				continue;
			snprintf(desc, DESC_LEN,
				 "a local address (%s/%u port %u)",
				 lb_conf_ipstr(x->ip, b), x->len, x->port);
			return true;
		}
	}
	if (roles & ROLE_SNAT) {
		for (unsigned int i = 0; i < c->nb_snat; i++) {
			if (c->snat[i].ip != ip)
				continue;
			snprintf(desc, DESC_LEN, "a SNAT address");
			return true;
		}
	}
	if (roles & ROLE_GW) {
		for (unsigned int i = 0; i < c->nb_route; i++) {
			const struct lb_conf_route *r = &c->route[i];

			if (r->gw != ip)
				continue;
			snprintf(desc, DESC_LEN, "the gateway of route %s",
				 lb_cmd_fmt_prefix(r->net, r->len, a));
			return true;
		}
	}
	for (unsigned int i = 0; i < c->nb_svc; i++) {
		const struct lb_conf_svc *sv = &c->svc[i];

		if ((roles & ROLE_VIP) && sv->key.vip == ip) {
			snprintf(desc, DESC_LEN, "the VIP of %s",
				 lb_conf_key_str(&sv->key, s));
			return true;
		}
		if (!(roles & ROLE_BE))
			continue;
		for (unsigned int j = 0; j < sv->nb_be; j++) {
			if (sv->be[j].ip != ip)
				continue;
			snprintf(desc, DESC_LEN, "a backend of %s",
				 lb_conf_key_str(&sv->key, s));
			return true;
		}
	}
	return false;
}

int
lb_conf_roles_check(const struct lb_conf *c, uint32_t ip, unsigned int roles,
		    const char *what, struct lb_cmd_out *out)
{
	char desc[DESC_LEN], a[LB_CMD_IPV4_STRLEN];

	if (role_of(c, ip, roles, desc))
		return lb_cmd_error(out, -EINVAL, "%s %s is %s", what,
				    lb_conf_ipstr(ip, a), desc);
	return 0;
}

int
lb_conf_unicast_check(uint32_t ip, const char *what, struct lb_cmd_out *out)
{
	char a[LB_CMD_IPV4_STRLEN];

	if (!unicast(ip))
		return lb_cmd_error(out, -EINVAL,
				    "%s %s is not a unicast address", what,
				    lb_conf_ipstr(ip, a));
	return 0;
}

/* ---- local addresses ---- */

int
lb_conf_addr_add(struct lb_conf *c, uint32_t ip, uint8_t len, uint16_t port,
		 struct lb_cmd_out *out)
{
	return lb_conf_addr_add_vlan(c, ip, len, port, 0, out);
}

int
lb_conf_addr_add_vlan(struct lb_conf *c, uint32_t ip, uint8_t len,
		      uint16_t port, uint16_t vlan, struct lb_cmd_out *out)
{
	char a[LB_CMD_IPV4_STRLEN], n1[LB_CMD_ADDR_STRLEN];
	char n2[LB_CMD_ADDR_STRLEN];
	const struct lb_conf_addr *dup;
	uint32_t m;
	int rc;

	if (c == NULL)
		return lb_cmd_error(out, -EINVAL, "no configuration");
	if (len < 1 || len > 32)
		return lb_cmd_error(out, -ERANGE,
				    "prefix length %u out of range 1..32", len);
	if (vlan > LB_CONF_VLAN_MAX)
		return lb_cmd_error(out, -ERANGE, "vlan %u out of range 1..%u",
				    vlan, LB_CONF_VLAN_MAX);
	rc = port_check(port, out);
	if (rc == 0)
		rc = lb_conf_unicast_check(ip, "address", out);
	if (rc != 0)
		return rc;
	/* The dataplane tags a port's frames one way: its addresses must
	 * agree on it. */
	for (unsigned int i = 0; i < c->nb_addr; i++) {
		const struct lb_conf_addr *x = &c->addr[i];

		if (x->port != port || x->vlan == vlan)
			continue;
		if (x->vlan == 0)
			return lb_cmd_error(out, -EINVAL,
					    "port %u is untagged (address %s)",
					    port, lb_conf_ipstr(x->ip, a));
		return lb_cmd_error(out, -EINVAL,
				    "port %u is on vlan %u (address %s)", port,
				    x->vlan, lb_conf_ipstr(x->ip, a));
	}
	m = mask_of(len);
	subnet_str(ip, len, n1);
	/* /31 and /32 have no network or broadcast address (RFC 3021). */
	if (len <= 30 && (ip & ~m) == 0)
		return lb_cmd_error(out, -EINVAL,
				    "address %s is the network address of %s",
				    lb_conf_ipstr(ip, a), n1);
	if (len <= 30 && (ip & ~m) == ~m)
		return lb_cmd_error(out, -EINVAL,
				    "address %s is the broadcast address of %s",
				    lb_conf_ipstr(ip, a), n1);
	dup = lb_conf_addr_find(c, ip);
	if (dup != NULL)
		return lb_cmd_error(out, -EEXIST,
				    "address %s already exists (%s/%u port %u)",
				    lb_conf_ipstr(ip, a), a, dup->len,
				    dup->port);
	/* A SNAT address may also be the local address of its own port:
	 * the usual one-arm and two-arm setups use one address per side.
	 * The subnet checks below keep it on the same port. */
	rc = lb_conf_roles_check(c, ip, ROLE_BE | ROLE_GW, "address", out);
	if (rc != 0)
		return rc;
	/* A subnet lives behind one port, or ARP could not be answered. */
	for (unsigned int i = 0; i < c->nb_addr; i++) {
		const struct lb_conf_addr *x = &c->addr[i];
		unsigned int l = x->len < len ? x->len : len;

		if (x->port != port && in_subnet(ip, x->ip, l))
			return lb_cmd_error(out, -EINVAL,
					    "subnet %s of port %u overlaps %s "
					    "of port %u",
					    n1, port,
					    subnet_str(x->ip, x->len, n2),
					    x->port);
	}
	for (unsigned int i = 0; i < c->nb_snat; i++) {
		const struct lb_conf_snat *s = &c->snat[i];

		if (s->port != port && in_subnet(s->ip, ip, len))
			return lb_cmd_error(out, -EINVAL,
					    "SNAT address %s of port %u is "
					    "inside subnet %s of port %u",
					    lb_conf_ipstr(s->ip, a), s->port,
					    n1, port);
	}
	if (c->nb_addr == LB_CONF_MAX_ADDRS)
		return lb_cmd_error(out, -ENOSPC,
				    "too many local addresses (limit %u)",
				    LB_CONF_MAX_ADDRS);
	c->addr[c->nb_addr++] = (struct lb_conf_addr){
		.ip = ip, .len = len, .port = port, .vlan = vlan};
	c->gen++;
	return 0;
}

int
lb_conf_addr_del(struct lb_conf *c, uint32_t ip, struct lb_cmd_out *out)
{
	char a[LB_CMD_IPV4_STRLEN], p[LB_CMD_ADDR_STRLEN];
	char g[LB_CMD_IPV4_STRLEN];
	struct lb_conf_addr *x;
	unsigned int idx;

	if (c == NULL)
		return lb_cmd_error(out, -EINVAL, "no configuration");
	x = lb_conf_addr_find(c, ip);
	if (x == NULL)
		return lb_cmd_error(out, -ENOENT, "no address %s",
				    lb_conf_ipstr(ip, a));
	/* A route's gateway must stay reachable through some address. */
	for (unsigned int i = 0; i < c->nb_route; i++) {
		const struct lb_conf_route *r = &c->route[i];
		bool other = false;

		if (r->port != x->port || !in_subnet(r->gw, x->ip, x->len))
			continue;
		for (unsigned int j = 0; j < c->nb_addr; j++) {
			const struct lb_conf_addr *y = &c->addr[j];

			if (y != x && y->port == r->port &&
			    in_subnet(r->gw, y->ip, y->len))
				other = true;
		}
		if (!other)
			return lb_cmd_error(
				out, -EBUSY,
				"address %s/%u is needed by route "
				"%s via %s",
				lb_conf_ipstr(x->ip, a), x->len,
				lb_cmd_fmt_prefix(r->net, r->len, p),
				lb_conf_ipstr(r->gw, g));
	}
	idx = (unsigned int)(x - c->addr);
	memmove(&c->addr[idx], &c->addr[idx + 1],
		(c->nb_addr - idx - 1) * sizeof(c->addr[0]));
	c->nb_addr--;
	c->gen++;
	return 0;
}

/* ---- routes ---- */

int
lb_conf_route_add(struct lb_conf *c, uint32_t net, uint8_t len, uint32_t gw,
		  uint16_t port, struct lb_cmd_out *out)
{
	char p[LB_CMD_ADDR_STRLEN], a[LB_CMD_IPV4_STRLEN];
	const struct lb_conf_route *dup;
	bool connected = false;
	int rc;

	if (c == NULL)
		return lb_cmd_error(out, -EINVAL, "no configuration");
	if (len > 32)
		return lb_cmd_error(out, -ERANGE,
				    "prefix length %u out of range 0..32", len);
	if ((net & ~mask_of(len)) != 0)
		return lb_cmd_error(out, -EINVAL,
				    "prefix %s/%u has host bits set",
				    lb_conf_ipstr(net, a), len);
	rc = port_check(port, out);
	if (rc != 0)
		return rc;
	lb_cmd_fmt_prefix(net, len, p);
	dup = find_route(c, net, len);
	if (dup != NULL)
		return lb_cmd_error(out, -EEXIST,
				    "route %s already exists (via %s port %u)",
				    p, lb_conf_ipstr(dup->gw, a), dup->port);
	rc = lb_conf_unicast_check(gw, "gateway", out);
	if (rc == 0)
		rc = lb_conf_roles_check(c, gw,
					 ROLE_ADDR | ROLE_SNAT | ROLE_VIP,
					 "gateway", out);
	if (rc != 0)
		return rc;
	for (unsigned int i = 0; i < c->nb_addr; i++)
		if (c->addr[i].port == port &&
		    in_subnet(gw, c->addr[i].ip, c->addr[i].len))
			connected = true;
	if (!connected)
		return lb_cmd_error(out, -EINVAL,
				    "gateway %s is not in a connected subnet "
				    "of port %u",
				    lb_conf_ipstr(gw, a), port);
	if (c->nb_route == LB_CONF_MAX_ROUTES)
		return lb_cmd_error(out, -ENOSPC, "too many routes (limit %u)",
				    LB_CONF_MAX_ROUTES);
	c->route[c->nb_route++] = (struct lb_conf_route){
		.net = net, .len = len, .gw = gw, .port = port};
	c->gen++;
	return 0;
}

int
lb_conf_route_del(struct lb_conf *c, uint32_t net, uint8_t len,
		  struct lb_cmd_out *out)
{
	char p[LB_CMD_ADDR_STRLEN];
	struct lb_conf_route *r;
	unsigned int idx;

	if (c == NULL)
		return lb_cmd_error(out, -EINVAL, "no configuration");
	r = find_route(c, net, len);
	if (r == NULL)
		return lb_cmd_error(out, -ENOENT, "no route %s",
				    lb_cmd_fmt_prefix(net, len, p));
	idx = (unsigned int)(r - c->route);
	memmove(&c->route[idx], &c->route[idx + 1],
		(c->nb_route - idx - 1) * sizeof(c->route[0]));
	c->nb_route--;
	c->gen++;
	return 0;
}

/* ---- SNAT addresses ---- */

int
lb_conf_snat_add(struct lb_conf *c, uint32_t ip, uint16_t port,
		 struct lb_cmd_out *out)
{
	char a[LB_CMD_IPV4_STRLEN], n[LB_CMD_ADDR_STRLEN];
	const struct lb_conf_snat *dup;
	int rc;

	if (c == NULL)
		return lb_cmd_error(out, -EINVAL, "no configuration");
	rc = port_check(port, out);
	if (rc == 0)
		rc = lb_conf_unicast_check(ip, "SNAT address", out);
	if (rc != 0)
		return rc;
	dup = find_snat(c, ip);
	if (dup != NULL)
		return lb_cmd_error(out, -EEXIST,
				    "SNAT address %s already exists (port %u)",
				    lb_conf_ipstr(ip, a), dup->port);
	rc = lb_conf_roles_check(c, ip, ROLE_VIP | ROLE_BE | ROLE_GW,
				 "SNAT address", out);
	if (rc != 0)
		return rc;
	for (unsigned int i = 0; i < c->nb_addr; i++) {
		const struct lb_conf_addr *x = &c->addr[i];

		if (x->port != port && in_subnet(ip, x->ip, x->len))
			return lb_cmd_error(out, -EINVAL,
					    "SNAT address %s is inside subnet "
					    "%s of port %u, not port %u",
					    lb_conf_ipstr(ip, a),
					    subnet_str(x->ip, x->len, n),
					    x->port, port);
	}
	if (c->nb_snat == LB_CONF_MAX_SNATS)
		return lb_cmd_error(out, -ENOSPC,
				    "too many SNAT addresses (limit %u)",
				    LB_CONF_MAX_SNATS);
	c->snat[c->nb_snat++] = (struct lb_conf_snat){.ip = ip, .port = port};
	c->gen++;
	return 0;
}

int
lb_conf_snat_del(struct lb_conf *c, uint32_t ip, struct lb_cmd_out *out)
{
	char a[LB_CMD_IPV4_STRLEN];
	struct lb_conf_snat *s;
	unsigned int idx;

	if (c == NULL)
		return lb_cmd_error(out, -EINVAL, "no configuration");
	s = find_snat(c, ip);
	if (s == NULL)
		return lb_cmd_error(out, -ENOENT, "no SNAT address %s",
				    lb_conf_ipstr(ip, a));
	idx = (unsigned int)(s - c->snat);
	memmove(&c->snat[idx], &c->snat[idx + 1],
		(c->nb_snat - idx - 1) * sizeof(c->snat[0]));
	c->nb_snat--;
	c->gen++;
	return 0;
}
