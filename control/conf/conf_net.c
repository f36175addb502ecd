/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration's addresses: local addresses with their subnets,
 * routes, SNAT addresses, and the checks that keep one role per address.
 * Each takes IPv4 or IPv6; a subnet, a route's gateway and a SNAT
 * address's subnet are compared within one family only.
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

static unsigned int
max_len(const struct lb_conf_ip *ip)
{
	return ip->af == LB_CONF_AF_INET6 ? 128 : 32;
}

/* Whether @p ip lies in @p net / @p len; never across families. */
static bool
in_subnet(const struct lb_conf_ip *ip, const struct lb_conf_ip *net,
	  unsigned int len)
{
	if (ip->af != net->af)
		return false;
	if (ip->af == LB_CONF_AF_INET6)
		return lb_conf_ip6_same_prefix(ip->ip6, net->ip6, len);
	return ((ip->ip ^ net->ip) & mask_of(len)) == 0;
}

/* The network of @p ip / @p len. */
static struct lb_conf_ip
net_of(const struct lb_conf_ip *ip, unsigned int len)
{
	struct lb_conf_ip n = *ip;

	if (n.af == LB_CONF_AF_INET6)
		lb_conf_ip6_mask(n.ip6, len);
	else
		n.ip &= mask_of(len);
	return n;
}

/* Whether the host part of @p ip / @p len is all zero (all one: @p ones). */
static bool
host_bits_all(const struct lb_conf_ip *ip, unsigned int len, bool ones)
{
	if (ip->af != LB_CONF_AF_INET6) {
		uint32_t m = mask_of(len);

		return (ip->ip & ~m) == (ones ? ~m : 0);
	}
	for (unsigned int b = len; b < 128; b++) {
		bool set = (ip->ip6[b / 8] >> (7 - b % 8)) & 1;

		if (set != ones)
			return false;
	}
	return true;
}

/* IPv4: not "this network", loopback, multicast or reserved/broadcast.
 * IPv6: not unspecified, loopback, multicast or IPv4-mapped (RFC 4291),
 * which name no interface of ours or of a backend. */
static bool
unicast(const struct lb_conf_ip *ip)
{
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0,
					   0, 0, 0, 0, 0xff, 0xff};
	static const uint8_t zero[15];
	const uint8_t *b = ip->ip6;
	uint32_t a = ip->ip >> 24;

	if (ip->af != LB_CONF_AF_INET6)
		return a != 0 && a != 127 && a < 224;
	if (memcmp(b, zero, 15) == 0)
		return b[15] > 1;
	return b[0] != 0xff && memcmp(b, mapped, sizeof(mapped)) != 0;
}

static struct lb_conf_ip
route_net(const struct lb_conf_route *r)
{
	return lb_conf_ip_of(r->af, r->net, r->net6);
}

static struct lb_conf_ip
route_gw(const struct lb_conf_route *r)
{
	return lb_conf_ip_of(r->af, r->gw, r->gw6);
}

char *
lb_conf_ipstr(const struct lb_conf_ip *ip, char *buf)
{
	return lb_cmd_fmt_ip(ip, buf);
}

static char *
subnet_str(const struct lb_conf_ip *ip, unsigned int len, char *buf)
{
	struct lb_conf_ip n = net_of(ip, len);
	char a[LB_CMD_IP_STRLEN];

	snprintf(buf, LB_CMD_IP_ADDR_STRLEN, "%s/%u", lb_conf_ipstr(&n, a),
		 len);
	return buf;
}

struct lb_conf_ip
lb_conf_key_vip(const struct lb_conf_svc_key *k)
{
	return lb_conf_ip_of(k->af, k->vip, k->vip6);
}

char *
lb_conf_key_str(const struct lb_conf_svc_key *k, char *buf)
{
	char a[LB_CMD_IP_ADDR_STRLEN];
	const char *p = lb_cmd_proto_name(k->proto);
	struct lb_conf_ip v = lb_conf_key_vip(k);

	snprintf(buf, SVC_STRLEN, "%s %s", p != NULL ? p : "?",
		 lb_cmd_fmt_ip_port(&v, k->port, a));
	return buf;
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
	if (k->af != LB_CONF_AF_INET && k->af != LB_CONF_AF_INET6)
		return lb_cmd_error(out, -EINVAL, "invalid address family %u",
				    k->af);
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

static int
af_check(const struct lb_conf_ip *ip, struct lb_cmd_out *out)
{
	if (ip == NULL)
		return lb_cmd_error(out, -EINVAL, "missing address");
	if (ip->af != LB_CONF_AF_INET && ip->af != LB_CONF_AF_INET6)
		return lb_cmd_error(out, -EINVAL, "invalid address family %u",
				    ip->af);
	return 0;
}

struct lb_conf_addr *
lb_conf_addr_find(struct lb_conf *c, const struct lb_conf_ip *ip)
{
	for (unsigned int i = 0; i < c->nb_addr; i++) {
		struct lb_conf_ip a = LB_CONF_IP_OF(&c->addr[i]);

		if (lb_conf_ip_eq(&a, ip))
			return &c->addr[i];
	}
	return NULL;
}

static struct lb_conf_snat *
find_snat(struct lb_conf *c, const struct lb_conf_ip *ip)
{
	for (unsigned int i = 0; i < c->nb_snat; i++) {
		struct lb_conf_ip a = LB_CONF_IP_OF(&c->snat[i]);

		if (lb_conf_ip_eq(&a, ip))
			return &c->snat[i];
	}
	return NULL;
}

static struct lb_conf_route *
find_route(struct lb_conf *c, const struct lb_conf_ip *net, unsigned int len)
{
	for (unsigned int i = 0; i < c->nb_route; i++) {
		struct lb_conf_ip n = route_net(&c->route[i]);

		if (lb_conf_ip_eq(&n, net) && c->route[i].len == len)
			return &c->route[i];
	}
	return NULL;
}

struct lb_conf_svc *
lb_conf_svc_get(const struct lb_conf *c, const struct lb_conf_svc_key *k)
{
	for (unsigned int i = 0; i < c->nb_svc; i++)
		if (lb_conf_svc_key_eq(&c->svc[i].key, k))
			return (struct lb_conf_svc *)&c->svc[i];
	return NULL;
}

struct lb_conf_be *
lb_conf_be_find(struct lb_conf_svc *s, const struct lb_conf_ip *ip,
		uint16_t port)
{
	for (unsigned int i = 0; i < s->nb_be; i++) {
		struct lb_conf_ip a = LB_CONF_IP_OF(&s->be[i]);

		if (s->be[i].port == port && lb_conf_ip_eq(&a, ip))
			return &s->be[i];
	}
	return NULL;
}

/*
 * Describes the first role among @roles that @ip already has, e.g. "the
 * VIP of tcp 10.0.0.100:80". One address has one role so that the
 * dataplane can tell from a destination address alone what a packet is.
 */
static bool
role_of(const struct lb_conf *c, const struct lb_conf_ip *ip,
	unsigned int roles, char *desc)
{
	char a[LB_CMD_IP_ADDR_STRLEN], b[LB_CMD_IP_STRLEN], s[SVC_STRLEN];

	if (roles & ROLE_ADDR) {
		for (unsigned int i = 0; i < c->nb_addr; i++) {
			const struct lb_conf_addr *x = &c->addr[i];
			struct lb_conf_ip y = LB_CONF_IP_OF(x);

			if (!lb_conf_ip_eq(&y, ip))
				continue;
			snprintf(desc, DESC_LEN,
				 "a local address (%s/%u port %u)",
				 lb_conf_ipstr(&y, b), x->len, x->port);
			return true;
		}
	}
	if ((roles & ROLE_SNAT) && find_snat((struct lb_conf *)c, ip)) {
		snprintf(desc, DESC_LEN, "a SNAT address");
		return true;
	}
	if (roles & ROLE_GW) {
		for (unsigned int i = 0; i < c->nb_route; i++) {
			const struct lb_conf_route *r = &c->route[i];
			struct lb_conf_ip g = route_gw(r), n = route_net(r);

			if (!lb_conf_ip_eq(&g, ip))
				continue;
			snprintf(desc, DESC_LEN, "the gateway of route %s",
				 lb_cmd_fmt_ip_prefix(&n, r->len, a));
			return true;
		}
	}
	for (unsigned int i = 0; i < c->nb_svc; i++) {
		const struct lb_conf_svc *sv = &c->svc[i];
		struct lb_conf_ip v = lb_conf_key_vip(&sv->key);

		if ((roles & ROLE_VIP) && lb_conf_ip_eq(&v, ip)) {
			snprintf(desc, DESC_LEN, "the VIP of %s",
				 lb_conf_key_str(&sv->key, s));
			return true;
		}
		if (!(roles & ROLE_BE))
			continue;
		for (unsigned int j = 0; j < sv->nb_be; j++) {
			struct lb_conf_ip y = LB_CONF_IP_OF(&sv->be[j]);

			if (!lb_conf_ip_eq(&y, ip))
				continue;
			snprintf(desc, DESC_LEN, "a backend of %s",
				 lb_conf_key_str(&sv->key, s));
			return true;
		}
	}
	return false;
}

int
lb_conf_roles_check(const struct lb_conf *c, const struct lb_conf_ip *ip,
		    unsigned int roles, const char *what,
		    struct lb_cmd_out *out)
{
	char desc[DESC_LEN], a[LB_CMD_IP_STRLEN];

	if (role_of(c, ip, roles, desc))
		return lb_cmd_error(out, -EINVAL, "%s %s is %s", what,
				    lb_conf_ipstr(ip, a), desc);
	return 0;
}

int
lb_conf_unicast_check(const struct lb_conf_ip *ip, const char *what,
		      struct lb_cmd_out *out)
{
	char a[LB_CMD_IP_STRLEN];
	int rc = af_check(ip, out);

	if (rc == 0 && !unicast(ip))
		rc = lb_cmd_error(out, -EINVAL,
				  "%s %s is not a unicast address", what,
				  lb_conf_ipstr(ip, a));
	return rc;
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
	struct lb_conf_ip a = lb_conf_ip4(ip);

	return lb_conf_addr_add_ip(c, &a, len, port, vlan, out);
}

/* The port's frames are tagged one way: its addresses must agree. */
static int
vlan_check(const struct lb_conf *c, uint16_t port, uint16_t vlan,
	   struct lb_cmd_out *out)
{
	char a[LB_CMD_IP_STRLEN];

	for (unsigned int i = 0; i < c->nb_addr; i++) {
		const struct lb_conf_addr *x = &c->addr[i];
		struct lb_conf_ip y = LB_CONF_IP_OF(x);

		if (x->port != port || x->vlan == vlan)
			continue;
		if (x->vlan == 0)
			return lb_cmd_error(out, -EINVAL,
					    "port %u is untagged (address %s)",
					    port, lb_conf_ipstr(&y, a));
		return lb_cmd_error(out, -EINVAL,
				    "port %u is on vlan %u (address %s)", port,
				    x->vlan, lb_conf_ipstr(&y, a));
	}
	return 0;
}

/* /31 and /32 have no network or broadcast address (RFC 3021); IPv6 has
 * no broadcast, and its all-zero host part is the subnet-router anycast
 * address (RFC 4291 2.6.1), kept off interfaces up to /126. */
static int
host_check(const struct lb_conf_ip *ip, unsigned int len, const char *n1,
	   struct lb_cmd_out *out)
{
	char a[LB_CMD_IP_STRLEN];
	bool v6 = ip->af == LB_CONF_AF_INET6;

	if (len <= (v6 ? 126u : 30u) && host_bits_all(ip, len, false))
		return lb_cmd_error(out, -EINVAL,
				    "address %s is the network address of %s",
				    lb_conf_ipstr(ip, a), n1);
	if (!v6 && len <= 30 && host_bits_all(ip, len, true))
		return lb_cmd_error(out, -EINVAL,
				    "address %s is the broadcast address of %s",
				    lb_conf_ipstr(ip, a), n1);
	return 0;
}

int
lb_conf_addr_add_ip(struct lb_conf *c, const struct lb_conf_ip *ip,
		    uint8_t len, uint16_t port, uint16_t vlan,
		    struct lb_cmd_out *out)
{
	char a[LB_CMD_IP_STRLEN], n1[LB_CMD_IP_ADDR_STRLEN];
	char n2[LB_CMD_IP_ADDR_STRLEN];
	const struct lb_conf_addr *dup;
	struct lb_conf_addr *x;
	int rc;

	if (c == NULL)
		return lb_cmd_error(out, -EINVAL, "no configuration");
	rc = af_check(ip, out);
	if (rc != 0)
		return rc;
	if (len < 1 || len > max_len(ip))
		return lb_cmd_error(out, -ERANGE,
				    "prefix length %u out of range 1..%u", len,
				    max_len(ip));
	if (vlan > LB_CONF_VLAN_MAX)
		return lb_cmd_error(out, -ERANGE, "vlan %u out of range 1..%u",
				    vlan, LB_CONF_VLAN_MAX);
	rc = port_check(port, out);
	if (rc == 0)
		rc = lb_conf_unicast_check(ip, "address", out);
	if (rc == 0)
		rc = vlan_check(c, port, vlan, out);
	if (rc == 0)
		rc = host_check(ip, len, subnet_str(ip, len, n1), out);
	if (rc != 0)
		return rc;
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
	/* A subnet lives behind one port, or ARP (neighbour discovery)
	 * could not be answered. */
	for (unsigned int i = 0; i < c->nb_addr; i++) {
		const struct lb_conf_addr *y = &c->addr[i];
		struct lb_conf_ip yi = LB_CONF_IP_OF(y);
		unsigned int l = y->len < len ? y->len : len;

		if (y->port != port && in_subnet(ip, &yi, l))
			return lb_cmd_error(out, -EINVAL,
					    "subnet %s of port %u overlaps %s "
					    "of port %u",
					    n1, port,
					    subnet_str(&yi, y->len, n2),
					    y->port);
	}
	for (unsigned int i = 0; i < c->nb_snat; i++) {
		const struct lb_conf_snat *s = &c->snat[i];
		struct lb_conf_ip si = LB_CONF_IP_OF(s);

		if (s->port != port && in_subnet(&si, ip, len))
			return lb_cmd_error(out, -EINVAL,
					    "SNAT address %s of port %u is "
					    "inside subnet %s of port %u",
					    lb_conf_ipstr(&si, a), s->port,
					    n1, port);
	}
	if (c->nb_addr == LB_CONF_MAX_ADDRS)
		return lb_cmd_error(out, -ENOSPC,
				    "too many local addresses (limit %u)",
				    LB_CONF_MAX_ADDRS);
	x = &c->addr[c->nb_addr++];
	*x = (struct lb_conf_addr){
		.af = ip->af, .ip = ip->ip, .len = len, .port = port,
		.vlan = vlan};
	if (ip->af == LB_CONF_AF_INET6) {
		x->ip = 0;
		memcpy(x->ip6, ip->ip6, LB_CONF_IP6_LEN);
	}
	c->gen++;
	return 0;
}

int
lb_conf_addr_del(struct lb_conf *c, uint32_t ip, struct lb_cmd_out *out)
{
	struct lb_conf_ip a = lb_conf_ip4(ip);

	return lb_conf_addr_del_ip(c, &a, out);
}

int
lb_conf_addr_del_ip(struct lb_conf *c, const struct lb_conf_ip *ip,
		    struct lb_cmd_out *out)
{
	char a[LB_CMD_IP_STRLEN], p[LB_CMD_IP_ADDR_STRLEN];
	char g[LB_CMD_IP_STRLEN];
	struct lb_conf_addr *x;
	struct lb_conf_ip xi;
	unsigned int idx;
	int rc;

	if (c == NULL)
		return lb_cmd_error(out, -EINVAL, "no configuration");
	rc = af_check(ip, out);
	if (rc != 0)
		return rc;
	x = lb_conf_addr_find(c, ip);
	if (x == NULL)
		return lb_cmd_error(out, -ENOENT, "no address %s",
				    lb_conf_ipstr(ip, a));
	xi = LB_CONF_IP_OF(x);
	/* A route's gateway must stay reachable through some address. */
	for (unsigned int i = 0; i < c->nb_route; i++) {
		const struct lb_conf_route *r = &c->route[i];
		struct lb_conf_ip gw = route_gw(r), net = route_net(r);
		bool other = false;

		if (r->port != x->port || !in_subnet(&gw, &xi, x->len))
			continue;
		for (unsigned int j = 0; j < c->nb_addr; j++) {
			const struct lb_conf_addr *y = &c->addr[j];
			struct lb_conf_ip yi = LB_CONF_IP_OF(y);

			if (y != x && y->port == r->port &&
			    in_subnet(&gw, &yi, y->len))
				other = true;
		}
		if (!other)
			return lb_cmd_error(
				out, -EBUSY,
				"address %s/%u is needed by route "
				"%s via %s",
				lb_conf_ipstr(&xi, a), x->len,
				lb_cmd_fmt_ip_prefix(&net, r->len, p),
				lb_conf_ipstr(&gw, g));
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
	struct lb_conf_ip n = lb_conf_ip4(net), g = lb_conf_ip4(gw);

	return lb_conf_route_add_ip(c, &n, len, &g, port, out);
}

int
lb_conf_route_add_ip(struct lb_conf *c, const struct lb_conf_ip *net,
		     uint8_t len, const struct lb_conf_ip *gw, uint16_t port,
		     struct lb_cmd_out *out)
{
	char p[LB_CMD_IP_ADDR_STRLEN], a[LB_CMD_IP_STRLEN];
	const struct lb_conf_route *dup;
	struct lb_conf_route *r;
	bool connected = false;
	int rc;

	if (c == NULL)
		return lb_cmd_error(out, -EINVAL, "no configuration");
	rc = af_check(net, out);
	if (rc == 0)
		rc = af_check(gw, out);
	if (rc != 0)
		return rc;
	if (len > max_len(net))
		return lb_cmd_error(out, -ERANGE,
				    "prefix length %u out of range 0..%u", len,
				    max_len(net));
	if (!host_bits_all(net, len, false))
		return lb_cmd_error(out, -EINVAL,
				    "prefix %s/%u has host bits set",
				    lb_conf_ipstr(net, a), len);
	rc = port_check(port, out);
	if (rc != 0)
		return rc;
	lb_cmd_fmt_ip_prefix(net, len, p);
	if (gw->af != net->af)
		return lb_cmd_error(out, -EINVAL,
				    "gateway %s of route %s is of another "
				    "address family",
				    lb_conf_ipstr(gw, a), p);
	dup = find_route(c, net, len);
	if (dup != NULL) {
		struct lb_conf_ip dg = route_gw(dup);

		return lb_cmd_error(out, -EEXIST,
				    "route %s already exists (via %s port %u)",
				    p, lb_conf_ipstr(&dg, a), dup->port);
	}
	rc = lb_conf_unicast_check(gw, "gateway", out);
	if (rc == 0)
		rc = lb_conf_roles_check(c, gw,
					 ROLE_ADDR | ROLE_SNAT | ROLE_VIP,
					 "gateway", out);
	if (rc != 0)
		return rc;
	for (unsigned int i = 0; i < c->nb_addr; i++) {
		struct lb_conf_ip x = LB_CONF_IP_OF(&c->addr[i]);

		if (c->addr[i].port == port &&
		    in_subnet(gw, &x, c->addr[i].len))
			connected = true;
	}
	if (!connected)
		return lb_cmd_error(out, -EINVAL,
				    "gateway %s is not in a connected subnet "
				    "of port %u",
				    lb_conf_ipstr(gw, a), port);
	if (c->nb_route == LB_CONF_MAX_ROUTES)
		return lb_cmd_error(out, -ENOSPC, "too many routes (limit %u)",
				    LB_CONF_MAX_ROUTES);
	r = &c->route[c->nb_route++];
	*r = (struct lb_conf_route){
		.af = net->af, .len = len, .port = port};
	if (net->af == LB_CONF_AF_INET6) {
		memcpy(r->net6, net->ip6, LB_CONF_IP6_LEN);
		memcpy(r->gw6, gw->ip6, LB_CONF_IP6_LEN);
	} else {
		r->net = net->ip;
		r->gw = gw->ip;
	}
	c->gen++;
	return 0;
}

int
lb_conf_route_del(struct lb_conf *c, uint32_t net, uint8_t len,
		  struct lb_cmd_out *out)
{
	struct lb_conf_ip n = lb_conf_ip4(net);

	return lb_conf_route_del_ip(c, &n, len, out);
}

int
lb_conf_route_del_ip(struct lb_conf *c, const struct lb_conf_ip *net,
		     uint8_t len, struct lb_cmd_out *out)
{
	char p[LB_CMD_IP_ADDR_STRLEN];
	struct lb_conf_route *r;
	unsigned int idx;
	int rc;

	if (c == NULL)
		return lb_cmd_error(out, -EINVAL, "no configuration");
	rc = af_check(net, out);
	if (rc != 0)
		return rc;
	r = find_route(c, net, len);
	if (r == NULL)
		return lb_cmd_error(out, -ENOENT, "no route %s",
				    lb_cmd_fmt_ip_prefix(net, len, p));
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
	struct lb_conf_ip a = lb_conf_ip4(ip);

	return lb_conf_snat_add_ip(c, &a, port, out);
}

int
lb_conf_snat_add_ip(struct lb_conf *c, const struct lb_conf_ip *ip,
		    uint16_t port, struct lb_cmd_out *out)
{
	char a[LB_CMD_IP_STRLEN], n[LB_CMD_IP_ADDR_STRLEN];
	const struct lb_conf_snat *dup;
	struct lb_conf_snat *s;
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
		struct lb_conf_ip xi = LB_CONF_IP_OF(x);

		if (x->port != port && in_subnet(ip, &xi, x->len))
			return lb_cmd_error(out, -EINVAL,
					    "SNAT address %s is inside subnet "
					    "%s of port %u, not port %u",
					    lb_conf_ipstr(ip, a),
					    subnet_str(&xi, x->len, n),
					    x->port, port);
	}
	if (c->nb_snat == LB_CONF_MAX_SNATS)
		return lb_cmd_error(out, -ENOSPC,
				    "too many SNAT addresses (limit %u)",
				    LB_CONF_MAX_SNATS);
	s = &c->snat[c->nb_snat++];
	*s = (struct lb_conf_snat){.af = ip->af, .port = port};
	if (ip->af == LB_CONF_AF_INET6)
		memcpy(s->ip6, ip->ip6, LB_CONF_IP6_LEN);
	else
		s->ip = ip->ip;
	c->gen++;
	return 0;
}

int
lb_conf_snat_del(struct lb_conf *c, uint32_t ip, struct lb_cmd_out *out)
{
	struct lb_conf_ip a = lb_conf_ip4(ip);

	return lb_conf_snat_del_ip(c, &a, out);
}

int
lb_conf_snat_del_ip(struct lb_conf *c, const struct lb_conf_ip *ip,
		    struct lb_cmd_out *out)
{
	char a[LB_CMD_IP_STRLEN];
	struct lb_conf_snat *s;
	unsigned int idx;
	int rc;

	if (c == NULL)
		return lb_cmd_error(out, -EINVAL, "no configuration");
	rc = af_check(ip, out);
	if (rc != 0)
		return rc;
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
