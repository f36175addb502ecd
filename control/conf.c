/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Desired configuration: the model, its checks, and the commands that
 * change it. Every change checks everything first and only then writes,
 * so a refused command leaves no trace.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lb/conf.h"
#include "lb/svc_opt.h"

#define ROLE_ADDR 0x1u
#define ROLE_SNAT 0x2u
#define ROLE_VIP 0x4u
#define ROLE_BE 0x8u
#define ROLE_GW 0x10u

/* "udp 255.255.255.255:65535" */
#define SVC_STRLEN 32
#define DESC_LEN 64

struct lb_conf {
	lb_conf_sched_known_fn *sched_known;
	lb_conf_sched_names_fn *sched_names;
	uint64_t gen;
	unsigned int nb_addr;
	unsigned int nb_route;
	unsigned int nb_snat;
	unsigned int nb_svc;
	struct lb_conf_addr addr[LB_CONF_MAX_ADDRS];
	struct lb_conf_route route[LB_CONF_MAX_ROUTES];
	struct lb_conf_snat snat[LB_CONF_MAX_SNATS];
	struct lb_conf_svc svc[LB_CONF_MAX_SVCS];
};

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

static char *
ipstr(uint32_t ip, char *buf)
{
	return lb_cmd_fmt_ipv4(ip, buf);
}

static char *
subnet_str(uint32_t ip, unsigned int len, char *buf)
{
	char a[LB_CMD_IPV4_STRLEN];

	snprintf(buf, LB_CMD_ADDR_STRLEN, "%s/%u", ipstr(ip & mask_of(len), a),
		 len);
	return buf;
}

static char *
svc_str(const struct lb_conf_svc_key *k, char *buf)
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

static int
key_check(const struct lb_conf_svc_key *k, struct lb_cmd_out *out)
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

static struct lb_conf_addr *
find_addr(struct lb_conf *c, uint32_t ip)
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

static struct lb_conf_svc *
find_svc(const struct lb_conf *c, const struct lb_conf_svc_key *k)
{
	for (unsigned int i = 0; i < c->nb_svc; i++)
		if (key_eq(&c->svc[i].key, k))
			return (struct lb_conf_svc *)&c->svc[i];
	return NULL;
}

static struct lb_conf_be *
find_be(struct lb_conf_svc *s, uint32_t ip, uint16_t port)
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
				 ipstr(x->ip, b), x->len, x->port);
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
				 svc_str(&sv->key, s));
			return true;
		}
		if (!(roles & ROLE_BE))
			continue;
		for (unsigned int j = 0; j < sv->nb_be; j++) {
			if (sv->be[j].ip != ip)
				continue;
			snprintf(desc, DESC_LEN, "a backend of %s",
				 svc_str(&sv->key, s));
			return true;
		}
	}
	return false;
}

static int
check_roles(const struct lb_conf *c, uint32_t ip, unsigned int roles,
	    const char *what, struct lb_cmd_out *out)
{
	char desc[DESC_LEN], a[LB_CMD_IPV4_STRLEN];

	if (role_of(c, ip, roles, desc))
		return lb_cmd_error(out, -EINVAL, "%s %s is %s", what,
				    ipstr(ip, a), desc);
	return 0;
}

static int
check_unicast(uint32_t ip, const char *what, struct lb_cmd_out *out)
{
	char a[LB_CMD_IPV4_STRLEN];

	if (!unicast(ip))
		return lb_cmd_error(out, -EINVAL,
				    "%s %s is not a unicast address", what,
				    ipstr(ip, a));
	return 0;
}

/* ---- life cycle and read access ---- */

struct lb_conf *
lb_conf_create(lb_conf_sched_known_fn *sched_known)
{
	/* Not zeroed whole: slots past the counts are never read and are
	 * initialised when an entry is added, and validation creates one per
	 * change (touching a few hundred KiB of mostly empty slots each time
	 * would dominate it). */
	const size_t head = offsetof(struct lb_conf, addr);
	const size_t tail = offsetof(struct lb_conf, svc) +
			    sizeof(((struct lb_conf *)NULL)->svc);
	struct lb_conf *c = malloc(sizeof(*c));

	if (c == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	memset(c, 0, head);
	memset((char *)c + tail, 0, sizeof(*c) - tail);
	c->sched_known = sched_known;
	return c;
}

void
lb_conf_set_sched_names(struct lb_conf *c, lb_conf_sched_names_fn *names)
{
	c->sched_names = names;
}

void
lb_conf_free(struct lb_conf *c)
{
	free(c);
}

uint64_t
lb_conf_generation(const struct lb_conf *c)
{
	return c != NULL ? c->gen : 0;
}

unsigned int
lb_conf_nb_addrs(const struct lb_conf *c)
{
	return c != NULL ? c->nb_addr : 0;
}

const struct lb_conf_addr *
lb_conf_addr_at(const struct lb_conf *c, unsigned int i)
{
	return c != NULL && i < c->nb_addr ? &c->addr[i] : NULL;
}

unsigned int
lb_conf_nb_routes(const struct lb_conf *c)
{
	return c != NULL ? c->nb_route : 0;
}

const struct lb_conf_route *
lb_conf_route_at(const struct lb_conf *c, unsigned int i)
{
	return c != NULL && i < c->nb_route ? &c->route[i] : NULL;
}

unsigned int
lb_conf_nb_snats(const struct lb_conf *c)
{
	return c != NULL ? c->nb_snat : 0;
}

const struct lb_conf_snat *
lb_conf_snat_at(const struct lb_conf *c, unsigned int i)
{
	return c != NULL && i < c->nb_snat ? &c->snat[i] : NULL;
}

unsigned int
lb_conf_nb_svcs(const struct lb_conf *c)
{
	return c != NULL ? c->nb_svc : 0;
}

const struct lb_conf_svc *
lb_conf_svc_at(const struct lb_conf *c, unsigned int i)
{
	return c != NULL && i < c->nb_svc ? &c->svc[i] : NULL;
}

const struct lb_conf_svc *
lb_conf_svc_find(const struct lb_conf *c, const struct lb_conf_svc_key *key)
{
	return c != NULL && key != NULL ? find_svc(c, key) : NULL;
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
		rc = check_unicast(ip, "address", out);
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
					    port, ipstr(x->ip, a));
		return lb_cmd_error(out, -EINVAL,
				    "port %u is on vlan %u (address %s)", port,
				    x->vlan, ipstr(x->ip, a));
	}
	m = mask_of(len);
	subnet_str(ip, len, n1);
	/* /31 and /32 have no network or broadcast address (RFC 3021). */
	if (len <= 30 && (ip & ~m) == 0)
		return lb_cmd_error(out, -EINVAL,
				    "address %s is the network address of %s",
				    ipstr(ip, a), n1);
	if (len <= 30 && (ip & ~m) == ~m)
		return lb_cmd_error(out, -EINVAL,
				    "address %s is the broadcast address of %s",
				    ipstr(ip, a), n1);
	dup = find_addr(c, ip);
	if (dup != NULL)
		return lb_cmd_error(out, -EEXIST,
				    "address %s already exists (%s/%u port %u)",
				    ipstr(ip, a), a, dup->len, dup->port);
	/* A SNAT address may also be the local address of its own port:
	 * the usual one-arm and two-arm setups use one address per side.
	 * The subnet checks below keep it on the same port. */
	rc = check_roles(c, ip, ROLE_BE | ROLE_GW, "address", out);
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
					    ipstr(s->ip, a), s->port, n1, port);
	}
	if (c->nb_addr == LB_CONF_MAX_ADDRS)
		return lb_cmd_error(out, -ENOSPC,
				    "too many local addresses (limit %u)",
				    LB_CONF_MAX_ADDRS);
	c->addr[c->nb_addr++] = (struct lb_conf_addr){ip, len, port, vlan};
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
	x = find_addr(c, ip);
	if (x == NULL)
		return lb_cmd_error(out, -ENOENT, "no address %s",
				    ipstr(ip, a));
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
				ipstr(x->ip, a), x->len,
				lb_cmd_fmt_prefix(r->net, r->len, p),
				ipstr(r->gw, g));
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
				    ipstr(net, a), len);
	rc = port_check(port, out);
	if (rc != 0)
		return rc;
	lb_cmd_fmt_prefix(net, len, p);
	dup = find_route(c, net, len);
	if (dup != NULL)
		return lb_cmd_error(out, -EEXIST,
				    "route %s already exists (via %s port %u)",
				    p, ipstr(dup->gw, a), dup->port);
	rc = check_unicast(gw, "gateway", out);
	if (rc == 0)
		rc = check_roles(c, gw, ROLE_ADDR | ROLE_SNAT | ROLE_VIP,
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
				    ipstr(gw, a), port);
	if (c->nb_route == LB_CONF_MAX_ROUTES)
		return lb_cmd_error(out, -ENOSPC, "too many routes (limit %u)",
				    LB_CONF_MAX_ROUTES);
	c->route[c->nb_route++] = (struct lb_conf_route){net, len, gw, port};
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
		rc = check_unicast(ip, "SNAT address", out);
	if (rc != 0)
		return rc;
	dup = find_snat(c, ip);
	if (dup != NULL)
		return lb_cmd_error(out, -EEXIST,
				    "SNAT address %s already exists (port %u)",
				    ipstr(ip, a), dup->port);
	rc = check_roles(c, ip, ROLE_VIP | ROLE_BE | ROLE_GW, "SNAT address",
			 out);
	if (rc != 0)
		return rc;
	for (unsigned int i = 0; i < c->nb_addr; i++) {
		const struct lb_conf_addr *x = &c->addr[i];

		if (x->port != port && in_subnet(ip, x->ip, x->len))
			return lb_cmd_error(out, -EINVAL,
					    "SNAT address %s is inside subnet "
					    "%s of port %u, not port %u",
					    ipstr(ip, a),
					    subnet_str(x->ip, x->len, n),
					    x->port, port);
	}
	if (c->nb_snat == LB_CONF_MAX_SNATS)
		return lb_cmd_error(out, -ENOSPC,
				    "too many SNAT addresses (limit %u)",
				    LB_CONF_MAX_SNATS);
	c->snat[c->nb_snat++] = (struct lb_conf_snat){ip, port};
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
				    ipstr(ip, a));
	idx = (unsigned int)(s - c->snat);
	memmove(&c->snat[idx], &c->snat[idx + 1],
		(c->nb_snat - idx - 1) * sizeof(c->snat[0]));
	c->nb_snat--;
	c->gen++;
	return 0;
}

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

int
lb_conf_svc_add(struct lb_conf *c, const struct lb_conf_svc_key *key,
		const struct lb_conf_svc_opts *o, struct lb_cmd_out *out)
{
	char s[SVC_STRLEN];
	struct lb_conf_svc_opts def;
	struct lb_conf_svc *sv;
	int rc;

	if (c == NULL)
		return lb_cmd_error(out, -EINVAL, "no configuration");
	rc = key_check(key, out);
	if (rc != 0)
		return rc;
	if (o == NULL) {
		lb_conf_svc_opts_default(&def);
		o = &def;
	}
	if (find_svc(c, key) != NULL)
		return lb_cmd_error(out, -EEXIST, "service %s already exists",
				    svc_str(key, s));
	rc = check_unicast(key->vip, "VIP", out);
	if (rc == 0)
		rc = check_roles(c, key->vip, ROLE_SNAT | ROLE_BE | ROLE_GW,
				 "VIP", out);
	if (rc == 0)
		rc = lb_conf_svc_opts_check(c, key->proto, o, out);
	if (rc != 0)
		return rc;
	if (c->nb_svc == LB_CONF_MAX_SVCS)
		return lb_cmd_error(out, -ENOSPC,
				    "too many services (limit %u)",
				    LB_CONF_MAX_SVCS);
	sv = &c->svc[c->nb_svc++];
	/* Not the backend slots: each is written whole when added. */
	memset(sv, 0, offsetof(struct lb_conf_svc, be));
	sv->key = *key;
	lb_svc_opt_copy(&sv->opts, o);
	c->gen++;
	return 0;
}

static struct lb_conf_svc *
svc_or_error(const struct lb_conf *c, const struct lb_conf_svc_key *key,
	     struct lb_cmd_out *out, int *rc)
{
	char s[SVC_STRLEN];
	struct lb_conf_svc *sv;

	*rc = key_check(key, out);
	if (*rc != 0)
		return NULL;
	sv = find_svc(c, key);
	if (sv == NULL)
		*rc = lb_cmd_error(out, -ENOENT, "no service %s",
				   svc_str(key, s));
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
	sv = svc_or_error(c, key, out, &rc);
	if (sv == NULL)
		return rc;
	rc = lb_conf_svc_opts_check(c, key->proto, o, out);
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
	sv = svc_or_error(c, key, out, &rc);
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
be_or_error(struct lb_conf_svc *sv, uint32_t ip, uint16_t port,
	    struct lb_cmd_out *out, int *rc)
{
	char a[LB_CMD_ADDR_STRLEN], s[SVC_STRLEN];
	struct lb_conf_be *be = find_be(sv, ip, port);

	if (be == NULL)
		*rc = lb_cmd_error(out, -ENOENT, "no backend %s in %s",
				   lb_cmd_fmt_ipv4_port(ip, port, a),
				   svc_str(&sv->key, s));
	return be;
}

/* The backend @p ip:@p port of service @p key, or NULL with the error in
 * @p out and @p rc (the service too, in @p svp, when it is wanted). */
static struct lb_conf_be *
be_lookup(struct lb_conf *c, const struct lb_conf_svc_key *key, uint32_t ip,
	  uint16_t port, struct lb_conf_svc **svp, struct lb_cmd_out *out,
	  int *rc)
{
	struct lb_conf_svc *sv;

	if (c == NULL) {
		*rc = lb_cmd_error(out, -EINVAL, "no configuration");
		return NULL;
	}
	sv = svc_or_error(c, key, out, rc);
	if (svp != NULL)
		*svp = sv;
	return sv != NULL ? be_or_error(sv, ip, port, out, rc) : NULL;
}

int
lb_conf_be_add(struct lb_conf *c, const struct lb_conf_svc_key *key,
	       uint32_t ip, uint16_t port, uint32_t weight,
	       struct lb_cmd_out *out)
{
	char a[LB_CMD_ADDR_STRLEN], s[SVC_STRLEN];
	struct lb_conf_svc *sv;
	int rc;

	if (c == NULL)
		return lb_cmd_error(out, -EINVAL, "no configuration");
	sv = svc_or_error(c, key, out, &rc);
	if (sv == NULL)
		return rc;
	if (port == 0)
		return lb_cmd_error(out, -ERANGE,
				    "port 0 out of range 1..65535");
	rc = weight_check(weight, out);
	if (rc == 0)
		rc = check_unicast(ip, "backend", out);
	if (rc != 0)
		return rc;
	lb_cmd_fmt_ipv4_port(ip, port, a);
	svc_str(key, s);
	if (find_be(sv, ip, port) != NULL)
		return lb_cmd_error(out, -EEXIST,
				    "backend %s already exists in %s", a, s);
	rc = check_roles(c, ip, ROLE_ADDR | ROLE_SNAT | ROLE_VIP, "backend",
			 out);
	if (rc != 0)
		return rc;
	if (sv->nb_be == LB_CONF_MAX_BES)
		return lb_cmd_error(out, -ENOSPC,
				    "too many backends in %s (limit %u)", s,
				    LB_CONF_MAX_BES);
	sv->be[sv->nb_be++] = (struct lb_conf_be){ip, port, weight, false, false};
	c->gen++;
	return 0;
}

int
lb_conf_be_del(struct lb_conf *c, const struct lb_conf_svc_key *key,
	       uint32_t ip, uint16_t port, struct lb_cmd_out *out)
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
	char a[LB_CMD_ADDR_STRLEN], s[SVC_STRLEN];
	struct lb_conf_be *be;
	int rc;

	be = be_lookup(c, key, ip, port, NULL, out, &rc);
	if (be == NULL)
		return rc;
	if (be->draining == draining)
		return lb_cmd_error(
			out, -EINVAL, "backend %s of %s is %s",
			lb_cmd_fmt_ipv4_port(ip, port, a), svc_str(key, s),
			draining ? "already draining" : "not draining");
	be->draining = draining;
	c->gen++;
	return 0;
}

int
lb_conf_be_set_orch(struct lb_conf *c, const struct lb_conf_svc_key *key,
		    uint32_t ip, uint16_t port, bool orch,
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
	for (unsigned int i = 0; i < c->nb_addr && rc == 0; i++)
		rc = lb_conf_addr_add_vlan(t, c->addr[i].ip, c->addr[i].len,
					   c->addr[i].port, c->addr[i].vlan,
					   out);
	for (unsigned int i = 0; i < c->nb_route && rc == 0; i++)
		rc = lb_conf_route_add(t, c->route[i].net, c->route[i].len,
				       c->route[i].gw, c->route[i].port, out);
	for (unsigned int i = 0; i < c->nb_snat && rc == 0; i++)
		rc = lb_conf_snat_add(t, c->snat[i].ip, c->snat[i].port, out);
	for (unsigned int i = 0; i < c->nb_svc && rc == 0; i++) {
		const struct lb_conf_svc *sv = &c->svc[i];

		if (sv->nb_be > LB_CONF_MAX_BES) {
			rc = lb_cmd_error(out, -ENOSPC, "too many backends");
			break;
		}
		rc = lb_conf_svc_add(t, &sv->key, &sv->opts, out);
		for (unsigned int j = 0; j < sv->nb_be && rc == 0; j++) {
			const struct lb_conf_be *be = &sv->be[j];

			rc = lb_conf_be_add(t, &sv->key, be->ip, be->port,
					    be->weight, out);
			if (rc == 0 && be->draining)
				rc = lb_conf_be_drain(t, &sv->key, be->ip,
						      be->port, true, out);
		}
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
	uint64_t gen;

	if (dst == NULL || src == NULL)
		return -EINVAL;
	if (dst == src)
		return 0;
	known = dst->sched_known;
	names = dst->sched_names;
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
	dst->gen = gen + 1;
	return 0;
}

int
lb_conf_save(const struct lb_conf *c, struct lb_cmd_out *out)
{
	char a[LB_CMD_ADDR_STRLEN], b[LB_CMD_ADDR_STRLEN], s[SVC_STRLEN];
	int rc = 0;

	if (c == NULL || out == NULL)
		return lb_cmd_error(out, -EINVAL, "no configuration");
	for (unsigned int i = 0; i < c->nb_addr && rc == 0; i++) {
		rc = lb_cmd_printf(out, "addr add %s/%u port %u",
				   ipstr(c->addr[i].ip, a), c->addr[i].len,
				   c->addr[i].port);
		if (rc == 0 && c->addr[i].vlan != 0)
			rc = lb_cmd_printf(out, " vlan %u", c->addr[i].vlan);
		if (rc == 0)
			rc = lb_cmd_printf(out, "\n");
	}
	for (unsigned int i = 0; i < c->nb_route && rc == 0; i++) {
		const struct lb_conf_route *r = &c->route[i];

		rc = lb_cmd_printf(out, "route add %s via %s port %u\n",
				   lb_cmd_fmt_prefix(r->net, r->len, a),
				   ipstr(r->gw, b), r->port);
	}
	for (unsigned int i = 0; i < c->nb_snat && rc == 0; i++)
		rc = lb_cmd_printf(out, "snat add %s port %u\n",
				   ipstr(c->snat[i].ip, a), c->snat[i].port);
	for (unsigned int i = 0; i < c->nb_svc && rc == 0; i++) {
		const struct lb_conf_svc *sv = &c->svc[i];

		svc_str(&sv->key, s);
		rc = lb_svc_opt_save(out, s, &sv->opts);
		for (unsigned int j = 0; j < sv->nb_be && rc == 0; j++) {
			const struct lb_conf_be *be = &sv->be[j];

			if (be->orch)
				continue;
			lb_cmd_fmt_ipv4_port(be->ip, be->port, a);
			rc = lb_cmd_printf(out, "backend add %s %s", s, a);
			if (rc == 0 && be->weight != LB_CONF_WEIGHT_DEFAULT)
				rc = lb_cmd_printf(out, " weight %u",
						   be->weight);
			if (rc == 0)
				rc = lb_cmd_printf(out, "\n");
			if (rc == 0 && be->draining)
				rc = lb_cmd_printf(out, "backend drain %s %s\n",
						   s, a);
		}
	}
	return rc;
}

/* ---- commands ---- */

static int
missing(struct lb_cmd_out *out, const char *what)
{
	const struct lb_cmd_def *d = out != NULL ? out->cmd : NULL;

	if (d == NULL)
		return lb_cmd_error(out, -EINVAL, "missing '%s'", what);
	return lb_cmd_error(out, -EINVAL, "missing '%s'; usage: %s %s", what,
			    d->path, d->synopsis);
}

static int
parse_key(char **argv, struct lb_conf_svc_key *k, struct lb_cmd_out *out)
{
	int rc;

	memset(k, 0, sizeof(*k));
	rc = lb_cmd_parse_proto(argv[0], &k->proto, out);
	if (rc == 0)
		rc = lb_cmd_parse_ipv4_port(argv[1], &k->vip, &k->port, out);
	return rc;
}

static const struct lb_cmd_opt port_opt[] = {
	{"port", LB_CMD_OPT_U64, 0, LB_CONF_PORT_MAX},
};

static const struct lb_cmd_opt addr_opt[] = {
	{"port", LB_CMD_OPT_U64, 0, LB_CONF_PORT_MAX},
	{"vlan", LB_CMD_OPT_U64, 1, LB_CONF_VLAN_MAX},
};

static int
cmd_addr_add(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_cmd_optval v[2];
	uint32_t ip;
	uint8_t len;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 1, -1);
	if (rc == 0)
		rc = lb_cmd_parse_ipv4_len(argv[0], &ip, &len, out);
	if (rc == 0)
		rc = lb_cmd_parse_opts(argc - 1, argv + 1, addr_opt, 2, v, out);
	if (rc != 0)
		return rc;
	if (!v[0].set)
		return missing(out, "port N");
	return lb_conf_addr_add_vlan(ctx, ip, len, (uint16_t)v[0].u,
				     v[1].set ? (uint16_t)v[1].u : 0, out);
}

static int
cmd_addr_del(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	char a[LB_CMD_IPV4_STRLEN];
	const struct lb_conf_addr *x;
	struct lb_cmd_optval v[1];
	struct lb_conf *c = ctx;
	bool has_len;
	uint8_t len = 0;
	uint32_t ip;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 1, -1);
	if (rc != 0)
		return rc;
	has_len = strchr(argv[0], '/') != NULL;
	if (has_len)
		rc = lb_cmd_parse_ipv4_len(argv[0], &ip, &len, out);
	else
		rc = lb_cmd_parse_ipv4(argv[0], &ip, out);
	if (rc == 0)
		rc = lb_cmd_parse_opts(argc - 1, argv + 1, port_opt, 1, v, out);
	if (rc != 0)
		return rc;
	x = find_addr(c, ip);
	/* What is named must be what exists: no deleting by near-miss. */
	if (x != NULL &&
	    ((has_len && x->len != len) || (v[0].set && x->port != v[0].u)))
		return lb_cmd_error(out, -EINVAL,
				    "address %s is configured as %s/%u port %u",
				    ipstr(ip, a), a, x->len, x->port);
	return lb_conf_addr_del(c, ip, out);
}

static int
cmd_addr_list(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	char a[LB_CMD_ADDR_STRLEN], b[LB_CMD_IPV4_STRLEN];
	const struct lb_conf *c = ctx;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 0, 0);
	if (rc == 0)
		rc = lb_cmd_printf(out, "%-18s %s\n", "ADDRESS", "PORT");
	for (unsigned int i = 0; i < c->nb_addr && rc == 0; i++) {
		snprintf(a, sizeof(a), "%s/%u", ipstr(c->addr[i].ip, b),
			 c->addr[i].len);
		rc = lb_cmd_printf(out, "%-18s %u", a, c->addr[i].port);
		if (rc == 0 && c->addr[i].vlan != 0)
			rc = lb_cmd_printf(out, " vlan %u", c->addr[i].vlan);
		if (rc == 0)
			rc = lb_cmd_printf(out, "\n");
	}
	return rc;
}

static const struct lb_cmd_opt route_opts[] = {
	{"via", LB_CMD_OPT_IPV4, 0, 0},
	{"port", LB_CMD_OPT_U64, 0, LB_CONF_PORT_MAX},
};

static int
cmd_route_add(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_cmd_optval v[2];
	uint32_t net;
	uint8_t len;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 1, -1);
	if (rc == 0)
		rc = lb_cmd_parse_prefix(argv[0], &net, &len, out);
	if (rc == 0)
		rc = lb_cmd_parse_opts(argc - 1, argv + 1, route_opts, 2, v,
				       out);
	if (rc != 0)
		return rc;
	if (!v[0].set)
		return missing(out, "via GW");
	if (!v[1].set)
		return missing(out, "port N");
	return lb_conf_route_add(ctx, net, len, (uint32_t)v[0].u,
				 (uint16_t)v[1].u, out);
}

static int
cmd_route_del(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	uint32_t net;
	uint8_t len;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 1, 1);
	if (rc == 0)
		rc = lb_cmd_parse_prefix(argv[0], &net, &len, out);
	if (rc != 0)
		return rc;
	return lb_conf_route_del(ctx, net, len, out);
}

static int
cmd_route_list(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	char a[LB_CMD_ADDR_STRLEN], b[LB_CMD_IPV4_STRLEN];
	const struct lb_conf *c = ctx;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 0, 0);
	if (rc == 0)
		rc = lb_cmd_printf(out, "%-18s %-15s %s\n", "PREFIX", "VIA",
				   "PORT");
	for (unsigned int i = 0; i < c->nb_route && rc == 0; i++) {
		const struct lb_conf_route *r = &c->route[i];

		rc = lb_cmd_printf(out, "%-18s %-15s %u\n",
				   lb_cmd_fmt_prefix(r->net, r->len, a),
				   ipstr(r->gw, b), r->port);
	}
	return rc;
}

static int
cmd_snat_add(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_cmd_optval v[1];
	uint32_t ip;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 1, -1);
	if (rc == 0)
		rc = lb_cmd_parse_ipv4(argv[0], &ip, out);
	if (rc == 0)
		rc = lb_cmd_parse_opts(argc - 1, argv + 1, port_opt, 1, v, out);
	if (rc != 0)
		return rc;
	if (!v[0].set)
		return missing(out, "port N");
	return lb_conf_snat_add(ctx, ip, (uint16_t)v[0].u, out);
}

static int
cmd_snat_del(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	uint32_t ip;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 1, 1);
	if (rc == 0)
		rc = lb_cmd_parse_ipv4(argv[0], &ip, out);
	if (rc != 0)
		return rc;
	return lb_conf_snat_del(ctx, ip, out);
}

static int
cmd_snat_list(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	char a[LB_CMD_IPV4_STRLEN];
	const struct lb_conf *c = ctx;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 0, 0);
	if (rc == 0)
		rc = lb_cmd_printf(out, "%-15s %s\n", "ADDRESS", "PORT");
	for (unsigned int i = 0; i < c->nb_snat && rc == 0; i++)
		rc = lb_cmd_printf(out, "%-15s %u\n", ipstr(c->snat[i].ip, a),
				   c->snat[i].port);
	return rc;
}

static int
cmd_svc_add(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_conf_svc_opts o;
	struct lb_conf_svc_key k;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 2, -1);
	if (rc == 0)
		rc = parse_key(argv, &k, out);
	if (rc != 0)
		return rc;
	lb_conf_svc_opts_default(&o);
	rc = lb_svc_opt_parse(argc - 2, argv + 2, true, &o, out);
	return rc != 0 ? rc : lb_conf_svc_add(ctx, &k, &o, out);
}

static int
cmd_svc_set(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	const struct lb_conf_svc *sv;
	struct lb_conf_svc_opts o;
	struct lb_conf_svc_key k;
	struct lb_conf *c = ctx;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 3, -1);
	if (rc == 0)
		rc = parse_key(argv, &k, out);
	/* The options' errors before the service's: a scratch parse. */
	if (rc == 0) {
		lb_conf_svc_opts_default(&o);
		rc = lb_svc_opt_parse(argc - 2, argv + 2, false, &o, out);
	}
	if (rc != 0)
		return rc;
	sv = svc_or_error(c, &k, out, &rc);
	if (sv == NULL)
		return rc;
	o = sv->opts;
	rc = lb_svc_opt_parse(argc - 2, argv + 2, false, &o, out);
	return rc != 0 ? rc : lb_conf_svc_set(c, &k, &o, out);
}

static int
cmd_svc_del(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_conf_svc_key k;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 2, 2);
	if (rc == 0)
		rc = parse_key(argv, &k, out);
	if (rc != 0)
		return rc;
	return lb_conf_svc_del(ctx, &k, out);
}

static int
cmd_svc_list(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	char a[LB_CMD_ADDR_STRLEN], r[12], g[LB_CMD_DURATION_STRLEN];
	char e[LB_CMD_DURATION_STRLEN], t[LB_CMD_DURATION_STRLEN];
	const struct lb_conf *c = ctx;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 0, 0);
	if (rc == 0)
		rc = lb_cmd_printf(out,
				   "%-5s %-21s %-12s %-4s %-7s %-7s %-9s %-7s "
				   "%-11s %s\n",
				   "PROTO", "VIP:PORT", "SCHED", "HTTP",
				   "RETRIES", "DEFERQ", "RETRY-GAP", "EXPIRY",
				   "SYN-TIMEOUT", "BACKENDS");
	for (unsigned int i = 0; i < c->nb_svc && rc == 0; i++) {
		const struct lb_conf_svc *sv = &c->svc[i];
		const struct lb_conf_svc_opts *o = &sv->opts;
		unsigned int dr = 0;

		for (unsigned int j = 0; j < sv->nb_be; j++)
			dr += sv->be[j].draining;
		if (o->retries == 0)
			snprintf(r, sizeof(r), "all");
		else
			snprintf(r, sizeof(r), "%u", o->retries);
		rc = lb_cmd_printf(
			out,
			"%-5s %-21s %-12s %-4s %-7s %-7u %-9s %-7s "
			"%-11s %u",
			lb_cmd_proto_name(sv->key.proto),
			lb_cmd_fmt_ipv4_port(sv->key.vip, sv->key.port, a),
			o->sched, o->http ? "on" : "off", r, o->deferq_len,
			lb_cmd_fmt_duration(o->retry_gap_ns, g),
			lb_cmd_fmt_duration(o->expiry_ns, e),
			lb_cmd_fmt_duration(o->syn_timeout_ns, t), sv->nb_be);
		if (rc == 0 && dr > 0)
			rc = lb_cmd_printf(out, " (%u draining)", dr);
		if (rc == 0)
			rc = lb_cmd_printf(out, "\n");
	}
	return rc;
}

static const struct lb_cmd_opt weight_opt[] = {
	{"weight", LB_CMD_OPT_U64, 1, LB_CONF_WEIGHT_MAX},
};

/* PROTO VIP:PORT IP:PORT, then options. */
static int
parse_be(int argc, char **argv, struct lb_conf_svc_key *k, uint32_t *ip,
	 uint16_t *port, struct lb_cmd_optval *w, struct lb_cmd_out *out)
{
	int rc;

	rc = parse_key(argv, k, out);
	if (rc == 0)
		rc = lb_cmd_parse_ipv4_port(argv[2], ip, port, out);
	if (rc == 0 && w != NULL)
		rc = lb_cmd_parse_opts(argc - 3, argv + 3, weight_opt, 1, w,
				       out);
	return rc;
}

static int
cmd_be_add(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_conf_svc_key k;
	struct lb_cmd_optval w;
	uint16_t port;
	uint32_t ip;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 3, -1);
	if (rc == 0)
		rc = parse_be(argc, argv, &k, &ip, &port, &w, out);
	if (rc != 0)
		return rc;
	return lb_conf_be_add(ctx, &k, ip, port,
			      w.set ? (uint32_t)w.u : LB_CONF_WEIGHT_DEFAULT,
			      out);
}

static int
cmd_be_del(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_conf_svc_key k;
	uint16_t port;
	uint32_t ip;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 3, 3);
	if (rc == 0)
		rc = parse_be(argc, argv, &k, &ip, &port, NULL, out);
	if (rc != 0)
		return rc;
	return lb_conf_be_del(ctx, &k, ip, port, out);
}

static int
be_drain(void *ctx, int argc, char **argv, bool draining,
	 struct lb_cmd_out *out)
{
	struct lb_conf_svc_key k;
	uint16_t port;
	uint32_t ip;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 3, 3);
	if (rc == 0)
		rc = parse_be(argc, argv, &k, &ip, &port, NULL, out);
	if (rc != 0)
		return rc;
	return lb_conf_be_drain(ctx, &k, ip, port, draining, out);
}

static int
cmd_be_drain(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	return be_drain(ctx, argc, argv, true, out);
}

static int
cmd_be_undrain(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	return be_drain(ctx, argc, argv, false, out);
}

static int
cmd_be_set(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_conf_svc_key k;
	struct lb_cmd_optval w;
	uint16_t port;
	uint32_t ip;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 3, -1);
	if (rc == 0)
		rc = parse_be(argc, argv, &k, &ip, &port, &w, out);
	if (rc != 0)
		return rc;
	if (!w.set)
		return missing(out, "weight W");
	return lb_conf_be_set_weight(ctx, &k, ip, port, (uint32_t)w.u, out);
}

static int
list_be(const struct lb_conf_svc *sv, struct lb_cmd_out *out)
{
	char a[LB_CMD_ADDR_STRLEN], b[LB_CMD_ADDR_STRLEN];
	int rc = 0;

	lb_cmd_fmt_ipv4_port(sv->key.vip, sv->key.port, a);
	for (unsigned int j = 0; j < sv->nb_be && rc == 0; j++) {
		const struct lb_conf_be *be = &sv->be[j];

		rc = lb_cmd_printf(out, "%-5s %-21s %-21s %6u %s\n",
				   lb_cmd_proto_name(sv->key.proto), a,
				   lb_cmd_fmt_ipv4_port(be->ip, be->port, b),
				   be->weight,
				   be->draining ? "draining" : "active");
	}
	return rc;
}

static int
cmd_be_list(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	const struct lb_conf *c = ctx;
	const struct lb_conf_svc *sv = NULL;
	struct lb_conf_svc_key k;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 0, 2);
	if (rc == 0 && argc == 1)
		rc = lb_cmd_want_args(out, argc, argv, 2, 2);
	if (rc == 0 && argc == 2) {
		rc = parse_key(argv, &k, out);
		if (rc == 0)
			sv = svc_or_error(c, &k, out, &rc);
	}
	if (rc != 0)
		return rc;
	rc = lb_cmd_printf(out, "%-5s %-21s %-21s %6s %s\n", "PROTO",
			   "VIP:PORT", "BACKEND", "WEIGHT", "STATE");
	if (sv != NULL)
		return rc == 0 ? list_be(sv, out) : rc;
	for (unsigned int i = 0; i < c->nb_svc && rc == 0; i++)
		rc = list_be(&c->svc[i], out);
	return rc;
}

static int
cmd_save(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	int rc = lb_cmd_want_args(out, argc, argv, 0, 0);

	return rc != 0 ? rc : lb_conf_save(ctx, out);
}

#define SVC_ARGS "PROTO VIP:PORT"
#define BE_ARGS "PROTO VIP:PORT IP:PORT"

/*
 * `service add`'s synopsis and reference, made from the option rows by
 * lb_conf_register() (the rows register themselves before main()).
 */
#define SVC_ADD_INTRO "Options and their defaults:\n\n"
#define SVC_ADD_OUTRO                                                          \
	"\nThe VIP may be a local address, but not a SNAT address, backend "    \
	"or\nroute gateway. At most 64 services.\n\n"                          \
	"Example: `service add tcp 192.0.2.10:80 sched maglev http`"
static char svc_add_synopsis[sizeof(SVC_ARGS) + LB_SVC_OPT_MAX * 48];
static char svc_add_help[LB_SVC_OPT_MAX * 640];

static void
svc_add_doc(void)
{
	snprintf(svc_add_synopsis, sizeof(svc_add_synopsis), SVC_ARGS " %s",
		 lb_svc_opt_synopsis());
	snprintf(svc_add_help, sizeof(svc_add_help), "%s%s%s", SVC_ADD_INTRO,
		 lb_svc_opt_reference(), SVC_ADD_OUTRO);
}

static const struct lb_cmd_def conf_cmds[] = {
	{
		.path = "addr add",
		.synopsis = "IP/PREFIX port N [vlan V]",
		.help = "Add a local address and its connected subnet on a "
			"DPDK port",
		.long_help =
			"The dataplane answers ARP and ICMP echo for the "
			"address on DPDK port N\n(0..31) and treats "
			"IP/PREFIX as a subnet reachable directly through\n"
			"that port. A subnet belongs to one port: subnets "
			"on different ports\nmay not overlap. The address "
			"may not be the network or broadcast\naddress of "
			"its subnet, nor a SNAT address, backend or route "
			"gateway.\nAt most 16 local addresses.\n\n"
			"With `vlan V` (1..4094) the port's frames carry "
			"802.1Q tag V: frames\nwith another tag or none are "
			"dropped there, and what leaves the port\nis tagged "
			"V. Without it the port is untagged and drops tagged "
			"frames.\nEvery address of a port has the same "
			"VLAN.\n\n"
			"Example: `addr add 10.0.0.1/24 port 0`",
		.fn = cmd_addr_add,
	},
	{
		.path = "addr del",
		.synopsis = "IP[/PREFIX] [port N]",
		.help = "Delete a local address",
		.long_help =
			"If a prefix or port is given it must match the "
			"address as configured.\nRefused while a route's "
			"gateway is reachable only through this\naddress's "
			"subnet: delete the route first.",
		.fn = cmd_addr_del,
	},
	{
		.path = "addr list",
		.synopsis = "",
		.help = "List the local addresses",
		.long_help = NULL,
		.fn = cmd_addr_list,
	},
	{
		.path = "route add",
		.synopsis = "PREFIX via GW port N",
		.help = "Add a route to a non-connected network",
		.long_help =
			"Packets to PREFIX (`a.b.c.d/LEN`, or `default` for "
			"0.0.0.0/0) that are\nnot in a connected subnet are "
			"sent to gateway GW on DPDK port N; the\nlongest "
			"matching prefix wins. GW must lie in a connected "
			"subnet of\nport N (add the `addr` first) and may "
			"not be a local, SNAT or VIP\naddress. At most 16 "
			"routes.\n\nExample: `route add default via "
			"10.0.0.254 port 0`",
		.fn = cmd_route_add,
	},
	{
		.path = "route del",
		.synopsis = "PREFIX",
		.help = "Delete a route",
		.long_help = NULL,
		.fn = cmd_route_del,
	},
	{
		.path = "route list",
		.synopsis = "",
		.help = "List the routes",
		.long_help = NULL,
		.fn = cmd_route_list,
	},
	{
		.path = "snat add",
		.synopsis = "IP port N",
		.help = "Add a SNAT address used as source toward backends",
		.long_help =
			"Full NAT rewrites a client's connection to come "
			"from a SNAT address\nand port, so that backends "
			"reply through the load balancer. The\ndataplane "
			"answers ARP for it on DPDK port N. If it lies in a "
			"connected\nsubnet, that subnet must be on port N. "
			"It may not be a local address,\nVIP, backend or "
			"route gateway. At most 16 SNAT addresses.\n\n"
			"The running dataplane's workers take new connections "
			"from it as\nsoon as the change is published; no "
			"restart.\n\n"
			"Example: `snat add 10.0.0.10 port 0`",
		.fn = cmd_snat_add,
	},
	{
		.path = "snat del",
		.synopsis = "IP",
		.help = "Delete a SNAT address",
		.long_help =
			"The address drains like a backend: no new connection "
			"takes it,\nthe connections that use it keep their "
			"address and port until they\nend, and the "
			"dataplane still answers ARP and takes the "
			"backends'\nreplies for it until then.",
		.fn = cmd_snat_del,
	},
	{
		.path = "snat list",
		.synopsis = "",
		.help = "List the SNAT addresses",
		.long_help = NULL,
		.fn = cmd_snat_list,
	},
	{
		.path = "service add",
		.synopsis = svc_add_synopsis,
		.help = "Add a virtual service",
		.long_help = svc_add_help,
		.fn = cmd_svc_add,
	},
	{
		.path = "service set",
		.synopsis = SVC_ARGS " OPTION VALUE...",
		.help = "Change options of a virtual service",
		.long_help =
			"Takes the options of `service add`; `http` takes "
			"`on` or `off`.\nAll given options change together "
			"or, if one is invalid, none.\n\n"
			"Example: `service set tcp 192.0.2.10:80 retries 2 "
			"expiry 10s`",
		.fn = cmd_svc_set,
	},
	{
		.path = "service del",
		.synopsis = SVC_ARGS,
		.help = "Delete a virtual service and its backends",
		.long_help = NULL,
		.fn = cmd_svc_del,
	},
	{
		.path = "service list",
		.synopsis = "",
		.help = "List the virtual services and their options",
		.long_help = NULL,
		.fn = cmd_svc_list,
	},
	{
		.path = "backend add",
		.synopsis = BE_ARGS " [weight W]",
		.help = "Add a backend to a virtual service",
		.long_help =
			"`weight W` (1..65535, default 1) scales the "
			"backend's share of new\nflows for the schedulers "
			"that use weights. The backend may not be a\nlocal, "
			"SNAT or VIP address. At most 256 backends per "
			"service.\n\n"
			"Example: `backend add tcp 192.0.2.10:80 "
			"10.0.1.11:8080 weight 2`",
		.fn = cmd_be_add,
	},
	{
		.path = "backend del",
		.synopsis = BE_ARGS,
		.help = "Delete a backend",
		.long_help = NULL,
		.fn = cmd_be_del,
	},
	{
		.path = "backend drain",
		.synopsis = BE_ARGS,
		.help = "Send no new flows to a backend; existing flows go on",
		.long_help =
			"The backend stays configured until `backend del`. "
			"Draining a backend\nthat is already draining is an "
			"error.",
		.fn = cmd_be_drain,
	},
	{
		.path = "backend undrain",
		.synopsis = BE_ARGS,
		.help = "Give new flows to a draining backend again",
		.long_help = NULL,
		.fn = cmd_be_undrain,
	},
	{
		.path = "backend set",
		.synopsis = BE_ARGS " weight W",
		.help = "Change the weight of a backend",
		.long_help = NULL,
		.fn = cmd_be_set,
	},
	{
		.path = "backend list",
		.synopsis = "[" SVC_ARGS "]",
		.help = "List the backends of every service, or of one",
		.long_help = NULL,
		.fn = cmd_be_list,
	},
	{
		.path = "save",
		.synopsis = "",
		.help = "Print the configuration as commands that recreate it",
		.long_help = "Addresses, routes, SNAT addresses, then each "
			     "service followed by its\nbackends, in the order "
			     "they were added; options at their default are\n"
			     "left out. Applying the output to an empty "
			     "configuration gives the\nsame configuration, and "
			     "saving that gives the same text.",
		.fn = cmd_save,
	},
};

int
lb_conf_register(struct lb_conf *c, struct lb_cmd_reg *r)
{
	if (c == NULL || r == NULL)
		return -EINVAL;
	svc_add_doc();
	return lb_cmd_register_many(
		r, conf_cmds, sizeof(conf_cmds) / sizeof(conf_cmds[0]), c);
}
