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

/* The governor's options (LB_CONF_GOV_LIST): keyword, type, range. */
static const struct {
	struct lb_cmd_opt opt;
	uint64_t def;
} gov_opt[LB_CONF_GOV_NB] = {
#define GOV_OPT(id, kw, type, lo, hi, d) {{kw, type, lo, hi}, d},
	LB_CONF_GOV_LIST(GOV_OPT)
#undef GOV_OPT
};

/* The options of a service's flows (LB_CONF_FLOW_LIST), as gov_opt. */
static const struct {
	struct lb_cmd_opt opt;
	uint64_t def;
} flow_opt[LB_CONF_FLOW_NB] = {
#define FLOW_OPT(id, kw, type, lo, hi, d) {{kw, type, lo, hi}, d},
	LB_CONF_FLOW_LIST(FLOW_OPT)
#undef FLOW_OPT
};

static int
flow_opts_check(const struct lb_conf_svc_opts *o, struct lb_cmd_out *out)
{
	for (unsigned int i = 0; i < LB_CONF_FLOW_NB; i++)
		if (o->flow[i] < flow_opt[i].opt.min ||
		    o->flow[i] > flow_opt[i].opt.max)
			return lb_cmd_error(out, -ERANGE,
					    "%s %" PRIu64 " out of range",
					    flow_opt[i].opt.name, o->flow[i]);
	return 0;
}

/* What lb_cmd_parse_opts() and range checks cannot see. */
static int
gov_opts_check(const struct lb_conf_svc_opts *o, struct lb_cmd_out *out)
{
	const uint64_t *g = o->gov;

	for (unsigned int i = 0; i < LB_CONF_GOV_NB; i++)
		if (g[i] < gov_opt[i].opt.min || g[i] > gov_opt[i].opt.max)
			return lb_cmd_error(out, -ERANGE,
					    "%s %" PRIu64 " out of range",
					    gov_opt[i].opt.name, g[i]);
	if (g[LB_CONF_GOV_STATUS] != 503 && g[LB_CONF_GOV_STATUS] != 429)
		return lb_cmd_error(out, -EINVAL,
				    "reject-status must be 503 or 429");
	if (g[LB_CONF_GOV_R] > g[LB_CONF_GOV_T])
		return lb_cmd_error(out, -EINVAL,
				    "gov-release must not exceed gov-raise");
	if (g[LB_CONF_GOV_ON] && !o->http)
		return lb_cmd_error(out, -EINVAL, "governor needs http");
	return 0;
}

/* Option keyword and default name of each feedback header. */
static const struct {
	const char *opt;
	const char *name;
} hdr_tab[LB_CONF_HDR_NB] = {
	[LB_CONF_HDR_SPL] = {"spl-header", "X-SPL"},
	[LB_CONF_HDR_SPL_TIME] = {"spl-time-header", "X-SPL-Time"},
	[LB_CONF_HDR_PRIORITY] = {"priority-header", "X-Priority"},
	[LB_CONF_HDR_EXPECT] = {"expect-header", "X-Expect-Ms"},
	[LB_CONF_HDR_ORCA] = {"orca-header", "endpoint-load-metrics"},
};

const char *
lb_conf_hdr_default(enum lb_conf_hdr h)
{
	return (unsigned int)h < LB_CONF_HDR_NB ? hdr_tab[h].name : NULL;
}

const char *
lb_conf_hdr_opt(enum lb_conf_hdr h)
{
	return (unsigned int)h < LB_CONF_HDR_NB ? hdr_tab[h].opt : NULL;
}

/* A header name: an RFC 9110 token (tchar only). */
static int
hdr_name_check(const char *opt, const char *n, struct lb_cmd_out *out)
{
	size_t len = strnlen(n, LB_CONF_HDR_NAME_MAX + 1);

	if (len == 0 || len > LB_CONF_HDR_NAME_MAX)
		return lb_cmd_error(out, -ERANGE, "%s must be 1..%u bytes",
				    opt, LB_CONF_HDR_NAME_MAX);
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)n[i]) &&
		    strchr("!#$%&'*+-.^_`|~", n[i]) == NULL)
			return lb_cmd_error(out, -EINVAL,
					    "%s '%s' is not a header name (RFC "
					    "9110 token)",
					    opt, n);
	return 0;
}

/*
 * The HTTP-feedback options (header names, error policy, default
 * expectation), kept together so that each step of the option life cycle
 * calls one function.
 */
static void
l7_opts_default(struct lb_conf_svc_opts *o)
{
	for (int h = 0; h < LB_CONF_HDR_NB; h++)
		snprintf(o->hdr[h], sizeof(o->hdr[h]), "%s", hdr_tab[h].name);
	snprintf(o->errors, sizeof(o->errors), "5xx");
	lb_http_err_codes_default(&o->err_codes);
	o->err_exclude[0] = '\0';
	o->default_expect_ms = 0;
}

static int
l7_opts_check(const struct lb_conf_svc_opts *o, struct lb_cmd_out *out)
{
	char paths[LB_HTTP_ERR_PATHS][LB_HTTP_ERR_PATH_MAX + 1];
	struct lb_http_err_codes set;
	int rc;

	for (int h = 0; h < LB_CONF_HDR_NB; h++) {
		rc = hdr_name_check(hdr_tab[h].opt, o->hdr[h], out);
		for (int k = 0; rc == 0 && k < h; k++)
			if (strcasecmp(o->hdr[k], o->hdr[h]) == 0)
				rc = lb_cmd_error(out, -EINVAL,
						  "%s and %s are both '%s'",
						  hdr_tab[k].opt,
						  hdr_tab[h].opt, o->hdr[h]);
		if (rc != 0)
			return rc;
	}
	if (memchr(o->errors, '\0', sizeof(o->errors)) == NULL ||
	    lb_http_err_codes_parse(o->errors, &set) != 0)
		return lb_cmd_error(out, -EINVAL,
				    "errors: expected none or a list of "
				    "codes, ranges and classes within "
				    "100..599, such as 5xx or 500,502-504");
	if (memchr(o->err_exclude, '\0', sizeof(o->err_exclude)) == NULL ||
	    lb_http_err_paths(o->err_exclude, paths) < 0)
		return lb_cmd_error(out, -EINVAL,
				    "error-exclude: expected none or up to %u "
				    "comma-separated path prefixes starting "
				    "with /, %u bytes each at most",
				    LB_HTTP_ERR_PATHS, LB_HTTP_ERR_PATH_MAX);
	if (o->default_expect_ms > 3600000u)
		return lb_cmd_error(out, -ERANGE,
				    "default-expect out of range 0..1h");
	return 0;
}

/* The names without what follows their NUL; the set from its text
 * (checked already). */
static void
l7_opts_copy(struct lb_conf_svc_opts *t, const struct lb_conf_svc_opts *src)
{
	for (int h = 0; h < LB_CONF_HDR_NB; h++) {
		memset(t->hdr[h], 0, sizeof(t->hdr[h]));
		snprintf(t->hdr[h], sizeof(t->hdr[h]), "%s", src->hdr[h]);
	}
	memset(t->errors, 0, sizeof(t->errors));
	snprintf(t->errors, sizeof(t->errors), "%s", src->errors);
	if (lb_http_err_codes_parse(t->errors, &t->err_codes) != 0)
		lb_http_err_codes_default(&t->err_codes);
	memset(t->err_exclude, 0, sizeof(t->err_exclude));
	if (strcmp(src->err_exclude, "none") != 0)
		snprintf(t->err_exclude, sizeof(t->err_exclude), "%s",
			 src->err_exclude);
}

static bool
l7_opts_eq(const struct lb_conf_svc_opts *a, const struct lb_conf_svc_opts *b)
{
	return memcmp(a->hdr, b->hdr, sizeof(a->hdr)) == 0 &&
	       strcmp(a->errors, b->errors) == 0 &&
	       strcmp(a->err_exclude, b->err_exclude) == 0 &&
	       a->default_expect_ms == b->default_expect_ms;
}

/*
 * " keyword value", the value quoted as the tokenizer reads it back: a
 * header name may start with '#' and a path may hold '"', which a bare
 * word would turn into a comment or an open quote.
 */
static int
print_word(struct lb_cmd_out *out, const char *kw, const char *v)
{
	char q[2 * LB_HTTP_ERR_STRLEN + 3];

	if (lb_cmd_quote(v, q, sizeof(q)) < 0)
		return lb_cmd_error(out, -EINVAL, "%s cannot be saved", kw);
	return lb_cmd_printf(out, " %s %s", kw, q);
}

static int
l7_opts_save(struct lb_cmd_out *out, const struct lb_conf_svc_opts *o,
	     const struct lb_conf_svc_opts *def)
{
	char d[LB_CMD_DURATION_STRLEN];
	int rc = 0;

	for (int h = 0; h < LB_CONF_HDR_NB && rc == 0; h++)
		if (strcmp(o->hdr[h], def->hdr[h]) != 0)
			rc = print_word(out, hdr_tab[h].opt, o->hdr[h]);
	if (rc == 0 && strcmp(o->errors, def->errors) != 0)
		rc = print_word(out, "errors", o->errors);
	if (rc == 0 && o->err_exclude[0] != '\0')
		rc = print_word(out, "error-exclude", o->err_exclude);
	if (rc == 0 && o->default_expect_ms != 0)
		rc = lb_cmd_printf(
			out, " default-expect %s",
			lb_cmd_fmt_duration(o->default_expect_ms * 1000000ull,
					    d));
	return rc;
}

static void check_default(struct lb_conf_check *k);

void
lb_conf_svc_opts_default(struct lb_conf_svc_opts *o)
{
	if (o == NULL)
		return;
	memset(o, 0, sizeof(*o));
	snprintf(o->sched, sizeof(o->sched), "%s", LB_CONF_SCHED_DEFAULT);
	o->http = false;
	o->retries = LB_CONF_RETRIES_DEFAULT;
	o->deferq_len = LB_CONF_DEFERQ_DEFAULT;
	o->retry_gap_ns = LB_CONF_RETRY_GAP_DEFAULT_NS;
	o->expiry_ns = LB_CONF_EXPIRY_DEFAULT_NS;
	o->syn_timeout_ns = LB_CONF_SYN_TIMEOUT_DEFAULT_NS;
	o->err_memory = LB_CONF_ERR_MEMORY_DEFAULT;
	o->min_volume = LB_CONF_MIN_VOLUME_DEFAULT;
	o->max_eject = LB_CONF_MAX_EJECT_DEFAULT;
	o->panic = LB_CONF_PANIC_DEFAULT;
	for (unsigned int i = 0; i < LB_CONF_GOV_NB; i++)
		o->gov[i] = gov_opt[i].def;
	for (unsigned int i = 0; i < LB_CONF_FLOW_NB; i++)
		o->flow[i] = flow_opt[i].def;
	lb_admit_conf_default(&o->admit);
	l7_opts_default(o);
	check_default(&o->check);
}

static int
dur_range(const char *what, uint64_t v, uint64_t lo, uint64_t hi,
	  struct lb_cmd_out *out)
{
	char a[LB_CMD_DURATION_STRLEN], b[LB_CMD_DURATION_STRLEN];
	char x[LB_CMD_DURATION_STRLEN];

	if (v < lo || v > hi)
		return lb_cmd_error(out, -ERANGE, "%s %s out of range %s..%s",
				    what, lb_cmd_fmt_duration(v, x),
				    lb_cmd_fmt_duration(lo, a),
				    lb_cmd_fmt_duration(hi, b));
	return 0;
}

/* ---- health check options ---- */

static const char *const check_types[] = {
	[LB_CONF_CHECK_NONE] = "none",
	[LB_CONF_CHECK_TCP] = "tcp",
	[LB_CONF_CHECK_HTTP] = "http",
};
#define NB_CHECK_TYPES (sizeof(check_types) / sizeof(check_types[0]))

#define CHECK_OPTS                                                             \
	[SO_CHECK] = {"check", LB_CMD_OPT_NAME, 0, 4},                         \
	[SO_CHECK_PATH] = {"check-path", LB_CMD_OPT_WORD, 0,                   \
			   LB_CONF_CHECK_PATH_LEN},                            \
	[SO_CHECK_STATUS] = {"check-status", LB_CMD_OPT_WORD, 0, 7},           \
	[SO_CHECK_PORT] = {"check-port", LB_CMD_OPT_U64, 0, 65535},            \
	[SO_CHECK_INTERVAL] = {"check-interval", LB_CMD_OPT_DURATION,          \
			       LB_CONF_CHECK_INTERVAL_MIN_NS,                  \
			       LB_CONF_CHECK_INTERVAL_MAX_NS},                 \
	[SO_CHECK_TIMEOUT] = {"check-timeout", LB_CMD_OPT_DURATION,            \
			      LB_CONF_CHECK_TIMEOUT_MIN_NS,                    \
			      LB_CONF_CHECK_TIMEOUT_MAX_NS},                   \
	[SO_CHECK_RISE] = {"check-rise", LB_CMD_OPT_U64, 1,                    \
			   LB_CONF_CHECK_COUNT_MAX},                           \
	[SO_CHECK_FALL] = {"check-fall", LB_CMD_OPT_U64, 1,                    \
			   LB_CONF_CHECK_COUNT_MAX},

static void
check_default(struct lb_conf_check *k)
{
	memset(k, 0, sizeof(*k));
	k->type = LB_CONF_CHECK_NONE;
	k->status_lo = LB_CONF_CHECK_STATUS_LO_DEFAULT;
	k->status_hi = LB_CONF_CHECK_STATUS_HI_DEFAULT;
	k->rise = LB_CONF_CHECK_RISE_DEFAULT;
	k->fall = LB_CONF_CHECK_FALL_DEFAULT;
	k->interval_ns = LB_CONF_CHECK_INTERVAL_DEFAULT_NS;
	k->timeout_ns = LB_CONF_CHECK_TIMEOUT_DEFAULT_NS;
	snprintf(k->path, sizeof(k->path), "/");
}

static int
check_check(uint8_t proto, const struct lb_conf_check *k,
	    struct lb_cmd_out *out)
{
	if (k->type >= NB_CHECK_TYPES)
		return lb_cmd_error(out, -EINVAL, "unknown check type %u",
				    k->type);
	if (k->type != LB_CONF_CHECK_NONE && proto != LB_CONF_PROTO_TCP)
		return lb_cmd_error(out, -EINVAL,
				    "check %s needs a tcp service",
				    check_types[k->type]);
	if (memchr(k->path, '\0', sizeof(k->path)) == NULL || k->path[0] != '/')
		return lb_cmd_error(out, -EINVAL,
				    "check-path must start with '/'");
	/* It goes on the request line as it is. */
	for (const char *p = k->path; *p != '\0'; p++)
		if (*p <= ' ' || *p >= 0x7f)
			return lb_cmd_error(out, -EINVAL,
					    "check-path '%s' holds a space or "
					    "control character",
					    k->path);
	if (k->status_lo < 100 || k->status_hi > 599 ||
	    k->status_lo > k->status_hi)
		return lb_cmd_error(out, -ERANGE,
				    "check-status %u-%u out of 100..599",
				    k->status_lo, k->status_hi);
	if (k->rise < 1 || k->rise > LB_CONF_CHECK_COUNT_MAX || k->fall < 1 ||
	    k->fall > LB_CONF_CHECK_COUNT_MAX)
		return lb_cmd_error(out, -ERANGE,
				    "check-rise %u or check-fall %u out of "
				    "1..%u",
				    k->rise, k->fall, LB_CONF_CHECK_COUNT_MAX);
	if (dur_range("check-interval", k->interval_ns,
		      LB_CONF_CHECK_INTERVAL_MIN_NS,
		      LB_CONF_CHECK_INTERVAL_MAX_NS, out) != 0)
		return -ERANGE;
	return dur_range("check-timeout", k->timeout_ns,
			 LB_CONF_CHECK_TIMEOUT_MIN_NS,
			 LB_CONF_CHECK_TIMEOUT_MAX_NS, out);
}

static bool
check_eq(const struct lb_conf_check *a, const struct lb_conf_check *b)
{
	return a->type == b->type && a->port == b->port &&
	       a->status_lo == b->status_lo && a->status_hi == b->status_hi &&
	       a->rise == b->rise && a->fall == b->fall &&
	       a->interval_ns == b->interval_ns &&
	       a->timeout_ns == b->timeout_ns && strcmp(a->path, b->path) == 0;
}

/* The check options of a service that differ from @p def. */
static int
save_check(struct lb_cmd_out *out, const struct lb_conf_check *k,
	   const struct lb_conf_check *def)
{
	char d[LB_CMD_DURATION_STRLEN];
	int rc = 0;

	if (k->type != def->type)
		rc = lb_cmd_printf(out, " check %s", check_types[k->type]);
	if (rc == 0 && strcmp(k->path, def->path) != 0)
		rc = print_word(out, "check-path", k->path);
	if (rc == 0 && (k->status_lo != def->status_lo ||
			k->status_hi != def->status_hi))
		rc = lb_cmd_printf(out, " check-status %u-%u", k->status_lo,
				   k->status_hi);
	if (rc == 0 && k->port != def->port)
		rc = lb_cmd_printf(out, " check-port %u", k->port);
	if (rc == 0 && k->interval_ns != def->interval_ns)
		rc = lb_cmd_printf(out, " check-interval %s",
				   lb_cmd_fmt_duration(k->interval_ns, d));
	if (rc == 0 && k->timeout_ns != def->timeout_ns)
		rc = lb_cmd_printf(out, " check-timeout %s",
				   lb_cmd_fmt_duration(k->timeout_ns, d));
	if (rc == 0 && k->rise != def->rise)
		rc = lb_cmd_printf(out, " check-rise %u", k->rise);
	if (rc == 0 && k->fall != def->fall)
		rc = lb_cmd_printf(out, " check-fall %u", k->fall);
	return rc;
}

int
lb_conf_svc_opts_check(const struct lb_conf *c, uint8_t proto,
		       const struct lb_conf_svc_opts *o, struct lb_cmd_out *out)
{
	char a[LB_CMD_DURATION_STRLEN], b[LB_CMD_DURATION_STRLEN];
	int rc;

	if (c == NULL || o == NULL)
		return lb_cmd_error(out, -EINVAL, "no options");
	if (memchr(o->sched, '\0', sizeof(o->sched)) == NULL)
		return lb_cmd_error(out, -ERANGE, "sched name too long");
	rc = lb_cmd_parse_name(o->sched, "sched", LB_CONF_SCHED_LEN, out);
	if (rc != 0)
		return rc;
	if (c->sched_known != NULL && !c->sched_known(o->sched)) {
		char names[256];

		if (c->sched_names == NULL)
			return lb_cmd_error(out, -EINVAL,
					    "unknown scheduler '%s'", o->sched);
		c->sched_names(names, sizeof(names), ", ");
		return lb_cmd_error(
			out, -EINVAL,
			"unknown scheduler '%s'; expected one of %s", o->sched,
			names);
	}
	if (o->retries > LB_CONF_RETRIES_MAX)
		return lb_cmd_error(out, -ERANGE,
				    "retries %u out of range 0..%u", o->retries,
				    LB_CONF_RETRIES_MAX);
	if (o->deferq_len > LB_CONF_DEFERQ_MAX)
		return lb_cmd_error(out, -ERANGE,
				    "deferq %u out of range 0..%u",
				    o->deferq_len, LB_CONF_DEFERQ_MAX);
	if (o->err_memory < 1 || o->err_memory > LB_CONF_ERR_MEMORY_MAX ||
	    o->min_volume > LB_CONF_MIN_VOLUME_MAX || o->max_eject < 1 ||
	    o->max_eject > 100 || o->panic > 100)
		return lb_cmd_error(out, -ERANGE,
				    "err-memory %u, min-volume %u, max-eject "
				    "%u or panic %u out of range",
				    o->err_memory, o->min_volume, o->max_eject,
				    o->panic);
	rc = dur_range("retry-gap", o->retry_gap_ns, 0,
		       LB_CONF_RETRY_GAP_MAX_NS, out);
	if (rc == 0)
		rc = dur_range("expiry", o->expiry_ns, LB_CONF_EXPIRY_MIN_NS,
			       LB_CONF_EXPIRY_MAX_NS, out);
	if (rc == 0)
		rc = dur_range("syn-timeout", o->syn_timeout_ns,
			       LB_CONF_SYN_TIMEOUT_MIN_NS,
			       LB_CONF_SYN_TIMEOUT_MAX_NS, out);
	if (rc != 0)
		return rc;
	/* An entry would expire before its first retry (see deferq). */
	if (o->retry_gap_ns >= o->expiry_ns)
		return lb_cmd_error(out, -EINVAL,
				    "retry-gap %s must be shorter than expiry "
				    "%s",
				    lb_cmd_fmt_duration(o->retry_gap_ns, a),
				    lb_cmd_fmt_duration(o->expiry_ns, b));
	if (o->http && proto != LB_CONF_PROTO_TCP)
		return lb_cmd_error(out, -EINVAL, "http needs a tcp service");
	if (lb_admit_conf_error(&o->admit) != NULL)
		return lb_cmd_error(out, -EINVAL, "%s",
				    lb_admit_conf_error(&o->admit));
	rc = l7_opts_check(o, out);
	if (rc != 0)
		return rc;
	rc = check_check(proto, &o->check, out);
	if (rc == 0)
		rc = flow_opts_check(o, out);
	return rc != 0 ? rc : gov_opts_check(o, out);
}

/* Copies options without whatever follows the name's NUL. */
static void
opts_copy(struct lb_conf_svc_opts *dst, const struct lb_conf_svc_opts *src)
{
	struct lb_conf_svc_opts t = *src;

	memset(t.sched, 0, sizeof(t.sched));
	snprintf(t.sched, sizeof(t.sched), "%s", src->sched);
	l7_opts_copy(&t, src);
	*dst = t;
}

static bool
opts_eq(const struct lb_conf_svc_opts *a, const struct lb_conf_svc_opts *b)
{
	return strcmp(a->sched, b->sched) == 0 && a->http == b->http &&
	       a->retries == b->retries && a->deferq_len == b->deferq_len &&
	       a->retry_gap_ns == b->retry_gap_ns &&
	       a->expiry_ns == b->expiry_ns &&
	       a->syn_timeout_ns == b->syn_timeout_ns &&
	       a->err_memory == b->err_memory &&
	       a->min_volume == b->min_volume && a->max_eject == b->max_eject &&
	       a->panic == b->panic &&
	       memcmp(a->gov, b->gov, sizeof(a->gov)) == 0 &&
	       memcmp(a->flow, b->flow, sizeof(a->flow)) == 0 &&
	       lb_admit_conf_eq(&a->admit, &b->admit) &&
	       lb_admit_trust_eq(&a->prio_trust, &b->prio_trust) &&
	       l7_opts_eq(a, b) && check_eq(&a->check, &b->check);
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
	opts_copy(&sv->opts, o);
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
	if (!opts_eq(&sv->opts, o)) {
		opts_copy(&sv->opts, o);
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

/* The error-feedback guards of a service that differ from @p def. */
static int
save_guard(struct lb_cmd_out *out, const struct lb_conf_svc_opts *o,
	   const struct lb_conf_svc_opts *def)
{
	int rc = 0;

	if (o->err_memory != def->err_memory)
		rc = lb_cmd_printf(out, " err-memory %u", o->err_memory);
	if (rc == 0 && o->min_volume != def->min_volume)
		rc = lb_cmd_printf(out, " min-volume %u", o->min_volume);
	if (rc == 0 && o->max_eject != def->max_eject)
		rc = lb_cmd_printf(out, " max-eject %u", o->max_eject);
	if (rc == 0 && o->panic != def->panic)
		rc = lb_cmd_printf(out, " panic %u", o->panic);
	return rc;
}

/* " keyword value" of governor option @p g, as the parser reads it. */
static int
opt_print(struct lb_cmd_out *out, const struct lb_cmd_opt *opt, uint64_t v)
{
	char d[LB_CMD_DURATION_STRLEN];

	switch (opt->type) {
	case LB_CMD_OPT_BOOL:
		return lb_cmd_printf(out, " %s %s", opt->name,
				     v ? "on" : "off");
	case LB_CMD_OPT_DURATION:
		return lb_cmd_printf(out, " %s %s", opt->name,
				     lb_cmd_fmt_duration(v, d));
	default:
		return lb_cmd_printf(out, " %s %" PRIu64, opt->name, v);
	}
}

static int
gov_opt_print(struct lb_cmd_out *out, unsigned int g, uint64_t v)
{
	return opt_print(out, &gov_opt[g].opt, v);
}

int
lb_conf_flow_opts_print(struct lb_cmd_out *out,
			const struct lb_conf_svc_opts *o,
			const struct lb_conf_svc_opts *def)
{
	int rc = 0;

	for (unsigned int i = 0; i < LB_CONF_FLOW_NB && rc == 0; i++)
		if (def == NULL || o->flow[i] != def->flow[i])
			rc = opt_print(out, &flow_opt[i].opt, o->flow[i]);
	return rc;
}

/* The admit-* options that differ from the defaults. */
static int
save_admit(struct lb_cmd_out *out, const struct lb_admit_conf *a)
{
	struct lb_admit_conf d;
	int rc = 0;

	lb_admit_conf_default(&d);
	if (a->rate != d.rate)
		rc = lb_cmd_printf(out, " admit-rate %" PRIu64, a->rate);
	if (rc == 0 && a->burst != d.burst)
		rc = lb_cmd_printf(out, " admit-burst %" PRIu64, a->burst);
	if (rc == 0 && a->key != d.key && a->key < LB_ADMIT_KEY_MAX)
		rc = lb_cmd_printf(out, " admit-key %s",
				   lb_admit_key_names[a->key]);
	if (rc == 0 && a->prefix != d.prefix)
		rc = lb_cmd_printf(out, " admit-prefix %u", a->prefix);
	if (rc == 0 && a->reject != d.reject &&
	    a->reject < LB_ADMIT_REJECT_MAX)
		rc = lb_cmd_printf(out, " admit-reject %s",
				   lb_admit_reject_names[a->reject]);
	if (rc == 0 && a->cluster != d.cluster &&
	    a->cluster < LB_ADMIT_CLUSTER_MAX)
		rc = lb_cmd_printf(out, " admit-cluster %s",
				   lb_admit_cluster_names[a->cluster]);
	if (rc == 0 && a->full != d.full && a->full < LB_ADMIT_FULL_MAX)
		rc = lb_cmd_printf(out, " admit-full %s",
				   lb_admit_full_names[a->full]);
	if (rc == 0 && a->unfollow != d.unfollow &&
	    a->unfollow < LB_ADMIT_UNF_MAX)
		rc = lb_cmd_printf(out, " unfollowable %s",
				   lb_admit_unfollow_names[a->unfollow]);
	return rc;
}

/* `prio-trust` as it is read back: PREFIX[,PREFIX...] or none. */
static int
save_trust(struct lb_cmd_out *out, const struct lb_admit_trust *t)
{
	char a[LB_CMD_IPV4_STRLEN];
	int rc;

	if (t->n == 0)
		return 0;
	rc = lb_cmd_printf(out, " prio-trust ");
	for (unsigned int i = 0; i < t->n && i < LB_ADMIT_TRUST_MAX && rc == 0;
	     i++)
		rc = lb_cmd_printf(out, "%s%s/%u", i ? "," : "",
				   ipstr(t->net[i], a), t->len[i]);
	return rc;
}

/* The service's own options, which a `service add` line must carry. */
static int
save_core(struct lb_cmd_out *out, const struct lb_conf_svc_opts *o,
	  const struct lb_conf_svc_opts *def)
{
	char d[LB_CMD_DURATION_STRLEN];
	int rc = 0;

	if (strcmp(o->sched, def->sched) != 0)
		rc = lb_cmd_printf(out, " sched %s", o->sched);
	if (rc == 0 && o->http)
		rc = lb_cmd_printf(out, " http");
	if (rc == 0 && o->retries != def->retries)
		rc = lb_cmd_printf(out, " retries %u", o->retries);
	if (rc == 0 && o->deferq_len != def->deferq_len)
		rc = lb_cmd_printf(out, " deferq %u", o->deferq_len);
	if (rc == 0 && o->retry_gap_ns != def->retry_gap_ns)
		rc = lb_cmd_printf(out, " retry-gap %s",
				   lb_cmd_fmt_duration(o->retry_gap_ns, d));
	if (rc == 0 && o->expiry_ns != def->expiry_ns)
		rc = lb_cmd_printf(out, " expiry %s",
				   lb_cmd_fmt_duration(o->expiry_ns, d));
	if (rc == 0 && o->syn_timeout_ns != def->syn_timeout_ns)
		rc = lb_cmd_printf(out, " syn-timeout %s",
				   lb_cmd_fmt_duration(o->syn_timeout_ns, d));
	return rc;
}

static int
save_gov(struct lb_cmd_out *out, const struct lb_conf_svc_opts *o,
	 const struct lb_conf_svc_opts *def)
{
	int rc = 0;

	for (unsigned int g = 0; g < LB_CONF_GOV_NB && rc == 0; g++)
		if (o->gov[g] != def->gov[g])
			rc = gov_opt_print(out, g, o->gov[g]);
	return rc;
}

static int
save_admit_opts(struct lb_cmd_out *out, const struct lb_conf_svc_opts *o,
		const struct lb_conf_svc_opts *def)
{
	int rc;

	(void)def;
	rc = save_admit(out, &o->admit);
	return rc != 0 ? rc : save_trust(out, &o->prio_trust);
}

static int
save_check_opts(struct lb_cmd_out *out, const struct lb_conf_svc_opts *o,
		const struct lb_conf_svc_opts *def)
{
	return save_check(out, &o->check, &def->check);
}

/*
 * One service as `service add SVC OPTIONS`, in groups of options that
 * each hold what their checks relate (retry-gap with expiry, gov-release
 * with gov-raise, admit-burst with admit-rate): a group that would take
 * the line past LB_CMD_LINE_MAX, which every option at its longest can,
 * goes on a `service set SVC` line of its own. The service's own options
 * come first, so each line applies to a valid service.
 */
static int
save_svc(struct lb_cmd_out *out, const char *svc,
	 const struct lb_conf_svc_opts *o, const struct lb_conf_svc_opts *def)
{
	static int (*const group[])(struct lb_cmd_out *,
				    const struct lb_conf_svc_opts *,
				    const struct lb_conf_svc_opts *) = {
		save_core,  save_gov,	     l7_opts_save,
		save_guard, save_admit_opts, save_check_opts,
		lb_conf_flow_opts_print,
	};
	struct lb_cmd_out g;
	size_t line;
	int rc;

	rc = lb_cmd_printf(out, "service add %s", svc);
	line = strlen("service add ") + strlen(svc);
	lb_cmd_out_init(&g);
	for (size_t i = 0; i < sizeof(group) / sizeof(group[0]) && rc == 0;
	     i++) {
		lb_cmd_out_reset(&g);
		rc = group[i](&g, o, def);
		if (rc != 0) {
			rc = lb_cmd_error(out, rc, "%s", lb_cmd_out_errmsg(&g));
			break;
		}
		if (g.len == 0)
			continue;
		if (line + g.len > LB_CMD_LINE_MAX) {
			rc = lb_cmd_printf(out, "\nservice set %s", svc);
			line = strlen("service set ") + strlen(svc);
		}
		if (rc == 0)
			rc = lb_cmd_printf(out, "%s", lb_cmd_out_text(&g));
		line += g.len;
	}
	lb_cmd_out_free(&g);
	return rc != 0 ? rc : lb_cmd_printf(out, "\n");
}

int
lb_conf_save(const struct lb_conf *c, struct lb_cmd_out *out)
{
	char a[LB_CMD_ADDR_STRLEN], b[LB_CMD_ADDR_STRLEN], s[SVC_STRLEN];
	struct lb_conf_svc_opts def;
	int rc = 0;

	if (c == NULL || out == NULL)
		return lb_cmd_error(out, -EINVAL, "no configuration");
	lb_conf_svc_opts_default(&def);
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
		rc = save_svc(out, s, &sv->opts, &def);
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

enum {
	SO_SCHED,
	SO_HTTP,
	SO_RETRIES,
	SO_DEFERQ,
	SO_RETRY_GAP,
	SO_EXPIRY,
	SO_SYN_TIMEOUT,
	SO_ERR_MEMORY,
	SO_MIN_VOLUME,
	SO_MAX_EJECT,
	SO_PANIC,
	SO_ADMIT_RATE,
	SO_ADMIT_BURST,
	SO_ADMIT_KEY,
	SO_ADMIT_PREFIX,
	SO_ADMIT_REJECT,
	SO_ADMIT_CLUSTER,
	SO_CHECK,
	SO_CHECK_PATH,
	SO_CHECK_STATUS,
	SO_CHECK_PORT,
	SO_CHECK_INTERVAL,
	SO_CHECK_TIMEOUT,
	SO_CHECK_RISE,
	SO_CHECK_FALL,
	SO_GOV,
	SO_HDR = SO_GOV + LB_CONF_GOV_NB, /* LB_CONF_HDR_NB header names */
	SO_ERRORS = SO_HDR + LB_CONF_HDR_NB,
	SO_ERR_EXCLUDE,
	SO_DEFAULT_EXPECT,
	SO_ADMIT_FULL,
	SO_UNFOLLOW,
	SO_PRIO_TRUST,
	SO_FLOW,
	SO_NB = SO_FLOW + LB_CONF_FLOW_NB
};

#define SVC_OPTS(http_type)                                                    \
	{                                                                      \
		[SO_SCHED] = {"sched", LB_CMD_OPT_NAME, 0, LB_CONF_SCHED_LEN}, \
		[SO_HTTP] = {"http", http_type, 0, 0},                         \
		[SO_RETRIES] = {"retries", LB_CMD_OPT_U64, 0,                  \
				LB_CONF_RETRIES_MAX},                          \
		[SO_DEFERQ] = {"deferq", LB_CMD_OPT_U64, 0,                    \
			       LB_CONF_DEFERQ_MAX},                            \
		[SO_RETRY_GAP] = {"retry-gap", LB_CMD_OPT_DURATION, 0,         \
				  LB_CONF_RETRY_GAP_MAX_NS},                   \
		[SO_EXPIRY] = {"expiry", LB_CMD_OPT_DURATION,                  \
			       LB_CONF_EXPIRY_MIN_NS, LB_CONF_EXPIRY_MAX_NS},  \
		[SO_SYN_TIMEOUT] = {"syn-timeout", LB_CMD_OPT_DURATION,        \
				    LB_CONF_SYN_TIMEOUT_MIN_NS,                \
				    LB_CONF_SYN_TIMEOUT_MAX_NS},               \
		[SO_ERR_MEMORY] = {"err-memory", LB_CMD_OPT_U64, 1,            \
				   LB_CONF_ERR_MEMORY_MAX},                    \
		[SO_MIN_VOLUME] = {"min-volume", LB_CMD_OPT_U64, 0,            \
				   LB_CONF_MIN_VOLUME_MAX},                    \
		[SO_MAX_EJECT] = {"max-eject", LB_CMD_OPT_U64, 1, 100},        \
		[SO_PANIC] = {"panic", LB_CMD_OPT_U64, 0, 100},                \
		[SO_ADMIT_RATE] = {"admit-rate", LB_CMD_OPT_U64, 0,            \
				   LB_ADMIT_RATE_MAX},                         \
		[SO_ADMIT_BURST] = {"admit-burst", LB_CMD_OPT_U64, 0,          \
				    LB_ADMIT_BURST_MAX},                       \
		[SO_ADMIT_KEY] = {"admit-key", LB_CMD_OPT_NAME, 0, 16},        \
		[SO_ADMIT_PREFIX] = {"admit-prefix", LB_CMD_OPT_U64, 1, 32},   \
		[SO_ADMIT_REJECT] = {"admit-reject", LB_CMD_OPT_NAME, 0, 16},  \
		[SO_ADMIT_CLUSTER] = {"admit-cluster", LB_CMD_OPT_NAME, 0,     \
				      16},                                     \
		CHECK_OPTS                                                     \
		LB_CONF_GOV_LIST(SVC_GOV_OPT)                                  \
		[SO_HDR] = {"spl-header", LB_CMD_OPT_WORD, 0, HN},             \
		[SO_HDR + 1] = {"spl-time-header", LB_CMD_OPT_WORD, 0, HN},    \
		[SO_HDR + 2] = {"priority-header", LB_CMD_OPT_WORD, 0, HN},    \
		[SO_HDR + 3] = {"expect-header", LB_CMD_OPT_WORD, 0, HN},      \
		[SO_HDR + 4] = {"orca-header", LB_CMD_OPT_WORD, 0, HN},        \
		[SO_ERRORS] = {"errors", LB_CMD_OPT_WORD, 0, EL},              \
		[SO_ERR_EXCLUDE] = {"error-exclude", LB_CMD_OPT_WORD, 0, EL},  \
		[SO_DEFAULT_EXPECT] = {"default-expect", LB_CMD_OPT_DURATION,  \
				       0, 3600000000000ull},                   \
		[SO_ADMIT_FULL] = {"admit-full", LB_CMD_OPT_NAME, 0, 16},      \
		[SO_UNFOLLOW] = {"unfollowable", LB_CMD_OPT_NAME, 0, 16},      \
		[SO_PRIO_TRUST] = {"prio-trust", LB_CMD_OPT_WORD, 0, TL},      \
		LB_CONF_FLOW_LIST(SVC_FLOW_OPT)                                \
	}
#define SVC_FLOW_OPT(id, kw, type, lo, hi, d)                                  \
	[SO_FLOW + LB_CONF_FLOW_##id] = {kw, type, lo, hi},
#define SVC_GOV_OPT(id, kw, type, lo, hi, d)                                   \
	[SO_GOV + LB_CONF_GOV_##id] = {kw, type, lo, hi},
#define HN LB_CONF_HDR_NAME_MAX
#define TL (LB_ADMIT_TRUST_MAX * 19) /* "a.b.c.d/nn," each */
#define EL LB_HTTP_ERR_STRLEN

static const struct lb_cmd_opt svc_add_opts[SO_NB] = SVC_OPTS(LB_CMD_OPT_FLAG);
static const struct lb_cmd_opt svc_set_opts[SO_NB] = SVC_OPTS(LB_CMD_OPT_BOOL);

/* Unknown words become out-of-range values that the check names. */
static void
apply_admit_opts(const struct lb_cmd_optval *v, struct lb_admit_conf *a)
{
	if (v[SO_ADMIT_RATE].set)
		a->rate = v[SO_ADMIT_RATE].u;
	if (v[SO_ADMIT_BURST].set)
		a->burst = v[SO_ADMIT_BURST].u;
	if (v[SO_ADMIT_KEY].set)
		a->key = lb_admit_word(v[SO_ADMIT_KEY].str, lb_admit_key_names,
				       LB_ADMIT_KEY_MAX);
	if (v[SO_ADMIT_PREFIX].set)
		a->prefix = (uint8_t)v[SO_ADMIT_PREFIX].u;
	if (v[SO_ADMIT_REJECT].set)
		a->reject = lb_admit_word(v[SO_ADMIT_REJECT].str,
					  lb_admit_reject_names,
					  LB_ADMIT_REJECT_MAX);
	if (v[SO_ADMIT_CLUSTER].set)
		a->cluster = lb_admit_word(v[SO_ADMIT_CLUSTER].str,
					   lb_admit_cluster_names,
					   LB_ADMIT_CLUSTER_MAX);
	if (v[SO_ADMIT_FULL].set)
		a->full = lb_admit_word(v[SO_ADMIT_FULL].str,
					lb_admit_full_names, LB_ADMIT_FULL_MAX);
	if (v[SO_UNFOLLOW].set)
		a->unfollow = lb_admit_word(v[SO_UNFOLLOW].str,
					    lb_admit_unfollow_names,
					    LB_ADMIT_UNF_MAX);
}

/* `prio-trust none` or up to LB_ADMIT_TRUST_MAX comma-separated
 * prefixes (a.b.c.d/LEN, no host bits). */
static int
apply_trust_opt(const struct lb_cmd_optval *v, struct lb_admit_trust *t,
		struct lb_cmd_out *out)
{
	struct lb_admit_trust n = {.n = 0};
	char buf[TL + 1], *p, *save = NULL;
	int rc;

	if (!v[SO_PRIO_TRUST].set)
		return 0;
	snprintf(buf, sizeof(buf), "%s", v[SO_PRIO_TRUST].str);
	if (strcmp(buf, "none") == 0) {
		*t = n;
		return 0;
	}
	for (p = strtok_r(buf, ",", &save); p != NULL;
	     p = strtok_r(NULL, ",", &save)) {
		if (n.n == LB_ADMIT_TRUST_MAX)
			return lb_cmd_error(out, -EINVAL,
					    "prio-trust: at most %u prefixes",
					    LB_ADMIT_TRUST_MAX);
		rc = lb_cmd_parse_prefix(p, &n.net[n.n], &n.len[n.n], out);
		if (rc != 0)
			return rc;
		n.n++;
	}
	*t = n;
	return 0;
}

static void
apply_svc_opts(const struct lb_cmd_optval *v, struct lb_conf_svc_opts *o)
{
	if (v[SO_SCHED].set)
		snprintf(o->sched, sizeof(o->sched), "%s", v[SO_SCHED].str);
	if (v[SO_HTTP].set)
		o->http = v[SO_HTTP].u != 0;
	if (v[SO_RETRIES].set)
		o->retries = (uint32_t)v[SO_RETRIES].u;
	if (v[SO_DEFERQ].set)
		o->deferq_len = (uint32_t)v[SO_DEFERQ].u;
	if (v[SO_RETRY_GAP].set)
		o->retry_gap_ns = v[SO_RETRY_GAP].u;
	if (v[SO_EXPIRY].set)
		o->expiry_ns = v[SO_EXPIRY].u;
	if (v[SO_SYN_TIMEOUT].set)
		o->syn_timeout_ns = v[SO_SYN_TIMEOUT].u;
	if (v[SO_ERR_MEMORY].set)
		o->err_memory = (uint32_t)v[SO_ERR_MEMORY].u;
	if (v[SO_MIN_VOLUME].set)
		o->min_volume = (uint32_t)v[SO_MIN_VOLUME].u;
	if (v[SO_MAX_EJECT].set)
		o->max_eject = (uint32_t)v[SO_MAX_EJECT].u;
	if (v[SO_PANIC].set)
		o->panic = (uint32_t)v[SO_PANIC].u;
	for (unsigned int g = 0; g < LB_CONF_GOV_NB; g++)
		if (v[SO_GOV + g].set)
			o->gov[g] = v[SO_GOV + g].u;
	for (unsigned int i = 0; i < LB_CONF_FLOW_NB; i++)
		if (v[SO_FLOW + i].set)
			o->flow[i] = v[SO_FLOW + i].u;
	apply_admit_opts(v, &o->admit);
	for (int h = 0; h < LB_CONF_HDR_NB; h++)
		if (v[SO_HDR + h].set)
			snprintf(o->hdr[h], sizeof(o->hdr[h]), "%s",
				 v[SO_HDR + h].str);
	if (v[SO_ERRORS].set)
		snprintf(o->errors, sizeof(o->errors), "%s", v[SO_ERRORS].str);
	if (v[SO_ERR_EXCLUDE].set)
		snprintf(o->err_exclude, sizeof(o->err_exclude), "%s",
			 v[SO_ERR_EXCLUDE].str);
	/* Whole milliseconds, as X-Expect-Ms; a part of one rounds up. */
	if (v[SO_DEFAULT_EXPECT].set)
		o->default_expect_ms =
			(uint32_t)((v[SO_DEFAULT_EXPECT].u + 999999) / 1000000);
}

/* "200" or "200-399", each in 100..599. */
static int
parse_status(const char *s, struct lb_conf_check *k, struct lb_cmd_out *out)
{
	unsigned int lo, hi;
	int n = 0;

	if (sscanf(s, "%3u%n", &lo, &n) != 1 || n != 3)
		goto bad;
	hi = lo;
	if (s[3] == '-' && (sscanf(s + 4, "%3u%n", &hi, &n) != 1 || n != 3 ||
			    s[7] != '\0'))
		goto bad;
	if ((s[3] != '-' && s[3] != '\0') || lo < 100 || hi > 599 || lo > hi)
		goto bad;
	k->status_lo = (uint16_t)lo;
	k->status_hi = (uint16_t)hi;
	return 0;
bad:
	return lb_cmd_error(out, -EINVAL,
			    "invalid check-status '%s': expected LO or LO-HI "
			    "in 100..599",
			    s);
}

/* The check options given to `service add|set`, over @p k. */
static int
apply_check_opts(const struct lb_cmd_optval *v, struct lb_conf_check *k,
		 struct lb_cmd_out *out)
{
	int rc = 0;

	if (v[SO_CHECK].set) {
		unsigned int t;

		for (t = 0; t < NB_CHECK_TYPES; t++)
			if (strcmp(v[SO_CHECK].str, check_types[t]) == 0)
				break;
		if (t == NB_CHECK_TYPES)
			return lb_cmd_error(out, -EINVAL,
					    "unknown check '%s': expected none, "
					    "tcp or http",
					    v[SO_CHECK].str);
		k->type = (uint8_t)t;
	}
	if (v[SO_CHECK_PATH].set)
		snprintf(k->path, sizeof(k->path), "%s", v[SO_CHECK_PATH].str);
	if (v[SO_CHECK_STATUS].set)
		rc = parse_status(v[SO_CHECK_STATUS].str, k, out);
	if (v[SO_CHECK_PORT].set)
		k->port = (uint16_t)v[SO_CHECK_PORT].u;
	if (v[SO_CHECK_INTERVAL].set)
		k->interval_ns = v[SO_CHECK_INTERVAL].u;
	if (v[SO_CHECK_TIMEOUT].set)
		k->timeout_ns = v[SO_CHECK_TIMEOUT].u;
	if (v[SO_CHECK_RISE].set)
		k->rise = (uint32_t)v[SO_CHECK_RISE].u;
	if (v[SO_CHECK_FALL].set)
		k->fall = (uint32_t)v[SO_CHECK_FALL].u;
	return rc;
}

static int
cmd_svc_add(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_cmd_optval v[SO_NB];
	struct lb_conf_svc_opts o;
	struct lb_conf_svc_key k;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 2, -1);
	if (rc == 0)
		rc = parse_key(argv, &k, out);
	if (rc == 0)
		rc = lb_cmd_parse_opts(argc - 2, argv + 2, svc_add_opts, SO_NB,
				       v, out);
	if (rc != 0)
		return rc;
	lb_conf_svc_opts_default(&o);
	apply_svc_opts(v, &o);
	rc = apply_check_opts(v, &o.check, out);
	if (rc == 0)
		rc = apply_trust_opt(v, &o.prio_trust, out);
	if (rc != 0)
		return rc;
	return lb_conf_svc_add(ctx, &k, &o, out);
}

static int
cmd_svc_set(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_cmd_optval v[SO_NB];
	const struct lb_conf_svc *sv;
	struct lb_conf_svc_opts o;
	struct lb_conf_svc_key k;
	struct lb_conf *c = ctx;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 3, -1);
	if (rc == 0)
		rc = parse_key(argv, &k, out);
	if (rc == 0)
		rc = lb_cmd_parse_opts(argc - 2, argv + 2, svc_set_opts, SO_NB,
				       v, out);
	if (rc != 0)
		return rc;
	sv = svc_or_error(c, &k, out, &rc);
	if (sv == NULL)
		return rc;
	o = sv->opts;
	apply_svc_opts(v, &o);
	rc = apply_check_opts(v, &o.check, out);
	if (rc == 0)
		rc = apply_trust_opt(v, &o.prio_trust, out);
	if (rc != 0)
		return rc;
	return lb_conf_svc_set(c, &k, &o, out);
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
cmd_save(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	int rc = lb_cmd_want_args(out, argc, argv, 0, 0);

	return rc != 0 ? rc : lb_conf_save(ctx, out);
}

#define SVC_ARGS "PROTO VIP:PORT"
#define BE_ARGS "PROTO VIP:PORT IP:PORT"

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
		.synopsis =
			SVC_ARGS " [sched NAME] [http] [retries N] "
				 "[deferq LEN] [retry-gap DUR] [expiry DUR] "
				 "[syn-timeout DUR] [err-memory N] "
				 "[min-volume N] [max-eject PCT] [panic PCT] "
				 "[admit-rate N] [admit-...] "
				 "[governor on|off] "
				 "[gov-... V] [default-priority P] "
				 "[reject-status S] [retry-after S] "
				 "[spl-header NAME] [spl-time-header NAME] "
				 "[priority-header NAME] [expect-header NAME] "
				 "[orca-header NAME] [errors CODES] "
				 "[error-exclude PATHS] [default-expect DUR] "
				 "[admit-full overflow|open|closed] "
				 "[unfollowable refuse|admit-flow] "
				 "[prio-trust PREFIXES] "
				 "[check none|tcp|http] [check-path PATH] "
				 "[check-status LO[-HI]] [check-port N] "
				 "[check-interval DUR] [check-timeout DUR] "
				 "[check-rise N] [check-fall N] "
				 "[timeout-STATE DUR] [rst-rate N] "
				 "[idle-rst on|off]",
		.help = "Add a virtual service",
		.long_help =
			"Options and their defaults:\n\n"
			"- `sched NAME`: scheduler that picks a backend for "
			"each new flow;\n  default `adaptive` (error-adaptive "
			"weights).\n"
			"- `http`: follow HTTP/1.x on the flows and scan "
			"response headers\n  (load reports, status); TCP "
			"only; default off.\n"
			"- `retries N`: trials per new connection before it "
			"goes to the\n  deferred queue, 0..256; default 0, "
			"meaning one per backend.\n"
			"- `deferq LEN`: deferred queue length per worker, "
			"0..1048576;\n  default 2048; 0 disables the queue "
			"(a connection that failed\n  every trial is reset "
			"at once).\n"
			"- `retry-gap DUR`: time between retries of a queued "
			"connection,\n  0..1h; default 0 (every poll).\n"
			"- `expiry DUR`: longest wait in the deferred queue "
			"before a RST,\n  1ms..24h; default 5s. Must be "
			"longer than retry-gap.\n"
			"- `syn-timeout DUR`: a trial without an answer "
			"fails after this\n  long, 1ms..1m; default 1s.\n"
			"- `timeout-syn-recv DUR`, `timeout-established DUR`, "
			"`timeout-closing DUR`,\n  `timeout-time-wait DUR`, "
			"`timeout-closed DUR`, `timeout-udp DUR`: how\n  long "
			"a flow may stay idle in each state before it is "
			"forgotten,\n  1ms..168h each; defaults 30s, 15m, 7s, "
			"7s, 3s, 5m.\n"
			"- `rst-rate N`: RSTs per second and worker answered "
			"to TCP\n  segments without a flow (not SYNs, not "
			"RSTs), 0..1000000 (0: none);\n  default 1000.\n"
			"- `idle-rst on|off`: when an idle ESTABLISHED flow "
			"expires, probe\n  both ends so that each gets a RST "
			"(needs `rst-rate` above 0);\n  default on.\n"
			"- `err-memory N`: a success removes ceil(e/N) of a "
			"backend's\n  error count e, 1..1024; default 8 (1 "
			"forgets all, as the dispatch\n  paper does).\n"
			"- `min-volume N`: answers a worker sees from a "
			"backend before its\n  errors count, 0..1000000; "
			"default 10.\n"
			"- `max-eject PCT`: at most this share of the "
			"eligible backends\n  (rounded up) is weighted down "
			"by errors, the rest keep their fair\n  share; "
			"1..100; default 10.\n"
			"- `panic PCT`: when fewer backends than this share "
			"are free of\n  errors, errors are ignored and picks "
			"are even; 0..100 (0: never);\n  default 50.\n"
			"- `admit-rate N`: admission control, new connections "
			"per second\n  (requests per second on `http` "
			"services) per throttle key;\n  default 0 (off).\n"
			"- `admit-burst N`: tokens a key may save up; default "
			"rate/10,\n  at least rate/100.\n"
			"- `admit-key svc|client|prefix|client-svc|prio`: what "
			"a bucket is\n  kept for; default `svc`. `client` and "
			"`prefix` buckets are shared\n  by services with the "
			"same admit settings.\n"
			"- `admit-prefix N`: prefix length for `admit-key "
			"prefix`; default 24.\n"
			"- `admit-reject drop|rst`: a rejected SYN is dropped "
			"or answered\n  with a RST; default `drop`.\n"
			"- `admit-cluster off|open|closed`: share the limit "
			"between hosts\n  through Redis (lb-control "
			"`--redis`); when Redis is unreachable\n  `open` "
			"refills locally at the rate, `closed` admits no "
			"more than\n  was borrowed; default `off`. Only "
			"with `admit-key svc`.\n"
			"- `admit-full overflow|open|closed`: a key that finds "
			"no room in\n  the shared bucket table is charged to "
			"the service's overflow bucket\n  (one key's rate and "
			"burst for all such keys), admitted, or\n  refused; "
			"default `overflow`.\n"
			"- `unfollowable refuse|admit-flow`: a flow of a "
			"service with request\n  admission that can no longer "
			"be followed, or gets no follower\n  entry, is reset "
			"both ways, or charged as one request and\n  "
			"forwarded unfollowed (reset if refused); default "
			"`refuse`.\n"
			"- `prio-trust none|PREFIX[,PREFIX...]`: up to 4 "
			"client prefixes\n  whose X-Priority counts; other "
			"clients get `default-priority`;\n  default `none`.\n"
			"- `governor on|off`, `gov-ideal-rate on|off`, "
			"`gov-interval DUR`,\n  `gov-window N`, "
			"`gov-overload PCT`, `gov-raise T`, `gov-release R`,\n"
			"  `gov-calm K`, `gov-min-samples N`: the overload "
			"governor of an\n  `http` service "
			"(docs/admission.md); default off, 1s, 1, 5, 10, 1,\n"
			"  3, 10.\n"
			"- `default-priority P`: rank of requests without "
			"X-Priority, 0..100;\n  default 1.\n"
			"- `reject-status 503|429`, `retry-after S`: the "
			"answer to a refused\n  request; default 503, 1.\n"
			"- `spl-header`, `spl-time-header`, "
			"`priority-header`, `expect-header`,\n  `orca-header "
			"NAME`: names of the headers that carry the "
			"backend's\n  self-perceived load and its time, "
			"the request's priority rank and\n  expected "
			"response time, and ORCA load reports, on `http` "
			"services;\n  defaults `X-SPL`, `X-SPL-Time`, "
			"`X-Priority`, `X-Expect-Ms`,\n  "
			"`endpoint-load-metrics`. Matched without regard to "
			"case. At most\n  16 distinct names across all "
			"services, each always used for the same\n  kind "
			"of value.\n"
			"- `errors CODES`: response statuses that count as "
			"errors for the\n  scheduler on `http` services: "
			"`none`, or codes, ranges and classes,\n  such as "
			"`500,502-504` or `4xx,5xx`; default `5xx`.\n"
			"- `error-exclude PATHS`: up to 4 comma-separated "
			"request path\n  prefixes whose responses never count "
			"as errors (`/health,/ready`);\n  default none.\n"
			"- `default-expect DUR`: expected response time of "
			"requests without\n  X-Expect-Ms, 0..1h; default 0 "
			"(none).\n"
			"- `check none|tcp|http`: health check of the "
			"backends; default\n  `none`. A checked backend "
			"takes new flows only while up; one added\n  later "
			"starts pending. tcp and http need a tcp service.\n"
			"- `check-path PATH`: what http checks GET; default "
			"`/`.\n"
			"- `check-status LO[-HI]`: status range that passes "
			"an http check;\n  default 200-399.\n"
			"- `check-port N`: port the checks connect to, "
			"0..65535; default 0,\n  the backend's own.\n"
			"- `check-interval DUR`: time between checks of a "
			"backend, 100ms..1h;\n  default 2s.\n"
			"- `check-timeout DUR`: a check without its answer "
			"fails after this\n  long, 10ms..1m; default 2s.\n"
			"- `check-rise N`, `check-fall N`: successes in a row "
			"to go up,\n  failures in a row to go down, 1..100; "
			"defaults 2 and 3 (HAProxy's).\n\n"
			"The VIP may be a local address, but not a SNAT "
			"address, backend or\nroute gateway. At most 64 "
			"services.\n\n"
			"Example: `service add tcp 192.0.2.10:80 sched "
			"maglev http`",
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
	return lb_cmd_register_many(
		r, conf_cmds, sizeof(conf_cmds) / sizeof(conf_cmds[0]), c);
}

/* The same commands in lb-control's registry, with the self-registered
 * tables, its configuration bound as "conf". */
static const struct lb_cmd_table conf_table = {
	.name = "conf",
	.ctx = "conf",
	.defs = conf_cmds,
	.n = sizeof(conf_cmds) / sizeof(conf_cmds[0]),
};
LB_CMD_REGISTER(conf_table);
