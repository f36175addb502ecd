/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Desired configuration: its life cycle, read access, and the commands
 * that change it (the model's changes are in conf_net.c and conf_svc.c,
 * the service options in svc_opt*.c). Every change checks everything
 * first and only then writes, so a refused command leaves no trace.
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
lb_conf_set_rule_hits(struct lb_conf *c, lb_conf_rule_hits_fn *fn, void *arg)
{
	c->rule_hits = fn;
	c->rule_hits_arg = arg;
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
	return c != NULL && key != NULL ? lb_conf_svc_get(c, key) : NULL;
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

int
lb_conf_parse_key(char **argv, struct lb_conf_svc_key *k,
		  struct lb_cmd_out *out)
{
	struct lb_conf_ip vip;
	uint16_t port;
	uint8_t proto;
	int rc;

	rc = lb_cmd_parse_proto(argv[0], &proto, out);
	if (rc == 0)
		rc = lb_cmd_parse_ip_port(argv[1], &vip, &port, out);
	if (rc == 0)
		*k = lb_conf_svc_key_of(proto, &vip, port);
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
	struct lb_conf_ip ip;
	uint8_t len;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 1, -1);
	if (rc == 0)
		rc = lb_cmd_parse_ip_len(argv[0], &ip, &len, out);
	if (rc == 0)
		rc = lb_cmd_parse_opts(argc - 1, argv + 1, addr_opt, 2, v, out);
	if (rc != 0)
		return rc;
	if (!v[0].set)
		return missing(out, "port N");
	return lb_conf_addr_add_ip(ctx, &ip, len, (uint16_t)v[0].u,
				   v[1].set ? (uint16_t)v[1].u : 0, out);
}

static int
cmd_addr_del(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	char a[LB_CMD_IP_STRLEN];
	const struct lb_conf_addr *x;
	struct lb_cmd_optval v[1];
	struct lb_conf *c = ctx;
	struct lb_conf_ip ip;
	bool has_len;
	uint8_t len = 0;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 1, -1);
	if (rc != 0)
		return rc;
	has_len = strchr(argv[0], '/') != NULL;
	if (has_len)
		rc = lb_cmd_parse_ip_len(argv[0], &ip, &len, out);
	else
		rc = lb_cmd_parse_ip(argv[0], &ip, out);
	if (rc == 0)
		rc = lb_cmd_parse_opts(argc - 1, argv + 1, port_opt, 1, v, out);
	if (rc != 0)
		return rc;
	x = lb_conf_addr_find(c, &ip);
	/* What is named must be what exists: no deleting by near-miss. */
	if (x != NULL &&
	    ((has_len && x->len != len) || (v[0].set && x->port != v[0].u)))
		return lb_cmd_error(out, -EINVAL,
				    "address %s is configured as %s/%u port %u",
				    lb_conf_ipstr(&ip, a), a, x->len, x->port);
	return lb_conf_addr_del_ip(c, &ip, out);
}

static int
cmd_addr_list(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	char a[LB_CMD_IP_ADDR_STRLEN], b[LB_CMD_IP_STRLEN];
	const struct lb_conf *c = ctx;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 0, 0);
	if (rc == 0)
		rc = lb_cmd_printf(out, "%-18s %s\n", "ADDRESS", "PORT");
	for (unsigned int i = 0; i < c->nb_addr && rc == 0; i++) {
		const struct lb_conf_addr *x = &c->addr[i];
		struct lb_conf_ip ip = LB_CONF_IP_OF(x);

		snprintf(a, sizeof(a), "%s/%u", lb_conf_ipstr(&ip, b), x->len);
		rc = lb_cmd_printf(out, "%-18s %u", a, c->addr[i].port);
		if (rc == 0 && c->addr[i].vlan != 0)
			rc = lb_cmd_printf(out, " vlan %u", c->addr[i].vlan);
		if (rc == 0)
			rc = lb_cmd_printf(out, "\n");
	}
	return rc;
}

static const struct lb_cmd_opt route_opts[] = {
	{"via", LB_CMD_OPT_IP, 0, 0},
	{"port", LB_CMD_OPT_U64, 0, LB_CONF_PORT_MAX},
};

static int
cmd_route_add(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_cmd_optval v[2];
	struct lb_conf_ip net;
	uint8_t len;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 1, -1);
	if (rc == 0)
		rc = lb_cmd_parse_ip_prefix(argv[0], &net, &len, out);
	if (rc == 0)
		rc = lb_cmd_parse_opts(argc - 1, argv + 1, route_opts, 2, v,
				       out);
	if (rc != 0)
		return rc;
	if (!v[0].set)
		return missing(out, "via GW");
	if (!v[1].set)
		return missing(out, "port N");
	return lb_conf_route_add_ip(ctx, &net, len, &v[0].ip,
				    (uint16_t)v[1].u, out);
}

static int
cmd_route_del(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_conf_ip net;
	uint8_t len;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 1, 1);
	if (rc == 0)
		rc = lb_cmd_parse_ip_prefix(argv[0], &net, &len, out);
	if (rc != 0)
		return rc;
	return lb_conf_route_del_ip(ctx, &net, len, out);
}

static int
cmd_route_list(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	char a[LB_CMD_IP_ADDR_STRLEN], b[LB_CMD_IP_STRLEN];
	const struct lb_conf *c = ctx;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 0, 0);
	if (rc == 0)
		rc = lb_cmd_printf(out, "%-18s %-15s %s\n", "PREFIX", "VIA",
				   "PORT");
	for (unsigned int i = 0; i < c->nb_route && rc == 0; i++) {
		const struct lb_conf_route *r = &c->route[i];
		struct lb_conf_ip n = lb_conf_ip_of(r->af, r->net, r->net6);
		struct lb_conf_ip g = lb_conf_ip_of(r->af, r->gw, r->gw6);

		rc = lb_cmd_printf(out, "%-18s %-15s %u\n",
				   lb_cmd_fmt_ip_prefix(&n, r->len, a),
				   lb_conf_ipstr(&g, b), r->port);
	}
	return rc;
}

static int
cmd_snat_add(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_cmd_optval v[1];
	struct lb_conf_ip ip;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 1, -1);
	if (rc == 0)
		rc = lb_cmd_parse_ip(argv[0], &ip, out);
	if (rc == 0)
		rc = lb_cmd_parse_opts(argc - 1, argv + 1, port_opt, 1, v, out);
	if (rc != 0)
		return rc;
	if (!v[0].set)
		return missing(out, "port N");
	return lb_conf_snat_add_ip(ctx, &ip, (uint16_t)v[0].u, out);
}

static int
cmd_snat_del(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_conf_ip ip;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 1, 1);
	if (rc == 0)
		rc = lb_cmd_parse_ip(argv[0], &ip, out);
	if (rc != 0)
		return rc;
	return lb_conf_snat_del_ip(ctx, &ip, out);
}

static int
cmd_snat_list(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	char a[LB_CMD_IP_STRLEN];
	const struct lb_conf *c = ctx;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 0, 0);
	if (rc == 0)
		rc = lb_cmd_printf(out, "%-15s %s\n", "ADDRESS", "PORT");
	for (unsigned int i = 0; i < c->nb_snat && rc == 0; i++) {
		const struct lb_conf_snat *x = &c->snat[i];
		struct lb_conf_ip ip = LB_CONF_IP_OF(x);

		rc = lb_cmd_printf(out, "%-15s %u\n", lb_conf_ipstr(&ip, a),
				   x->port);
	}
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
		rc = lb_conf_parse_key(argv, &k, out);
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
		rc = lb_conf_parse_key(argv, &k, out);
	/* The options' errors before the service's: a scratch parse. */
	if (rc == 0) {
		lb_conf_svc_opts_default(&o);
		rc = lb_svc_opt_parse(argc - 2, argv + 2, false, &o, out);
	}
	if (rc != 0)
		return rc;
	sv = lb_conf_svc_or_error(c, &k, out, &rc);
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
		rc = lb_conf_parse_key(argv, &k, out);
	if (rc != 0)
		return rc;
	return lb_conf_svc_del(ctx, &k, out);
}

static const struct lb_cmd_opt weight_opt[] = {
	{"weight", LB_CMD_OPT_U64, 1, LB_CONF_WEIGHT_MAX},
	{"pool", LB_CMD_OPT_WORD, 0, LB_CONF_POOL_NAME_LEN},
};

/* PROTO VIP:PORT IP:PORT, then @p nw options of weight_opt[]. */
static int
parse_be(int argc, char **argv, struct lb_conf_svc_key *k,
	 struct lb_conf_ip *ip, uint16_t *port, struct lb_cmd_optval *w,
	 unsigned int nw, struct lb_cmd_out *out)
{
	int rc;

	rc = lb_conf_parse_key(argv, k, out);
	if (rc == 0)
		rc = lb_cmd_parse_ip_port(argv[2], ip, port, out);
	if (rc == 0 && w != NULL)
		rc = lb_cmd_parse_opts(argc - 3, argv + 3, weight_opt, nw, w,
				       out);
	return rc;
}

static int
cmd_be_add(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_conf_svc_key k;
	struct lb_cmd_optval w[2];
	struct lb_conf_ip ip;
	uint16_t port;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 3, -1);
	if (rc == 0)
		rc = parse_be(argc, argv, &k, &ip, &port, w, 2, out);
	if (rc != 0)
		return rc;
	return lb_conf_be_add_pool(ctx, &k, &ip, port,
				   w[0].set ? (uint32_t)w[0].u
					    : LB_CONF_WEIGHT_DEFAULT,
				   w[1].set ? w[1].str : NULL, out);
}

static int
cmd_be_del(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_conf_svc_key k;
	struct lb_conf_ip ip;
	uint16_t port;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 3, 3);
	if (rc == 0)
		rc = parse_be(argc, argv, &k, &ip, &port, NULL, 0, out);
	if (rc != 0)
		return rc;
	return lb_conf_be_del_ip(ctx, &k, &ip, port, out);
}

static int
be_drain(void *ctx, int argc, char **argv, bool draining,
	 struct lb_cmd_out *out)
{
	struct lb_conf_svc_key k;
	struct lb_conf_ip ip;
	uint16_t port;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 3, 3);
	if (rc == 0)
		rc = parse_be(argc, argv, &k, &ip, &port, NULL, 0, out);
	if (rc != 0)
		return rc;
	return lb_conf_be_drain_ip(ctx, &k, &ip, port, draining, out);
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
	struct lb_conf_ip ip;
	uint16_t port;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 3, -1);
	if (rc == 0)
		rc = parse_be(argc, argv, &k, &ip, &port, &w, 1, out);
	if (rc != 0)
		return rc;
	if (!w.set)
		return missing(out, "weight W");
	return lb_conf_be_set_weight_ip(ctx, &k, &ip, port, (uint32_t)w.u,
					out);
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
	"\nThe VIP may be a local address, but not a SNAT address, backend "   \
	"or\nroute gateway. At most 64 services.\n\n"                          \
	"An IPv6 VIP is bracketed: `service add tcp [2001:db8::10]:443`.\n\n" \
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
			"IP may be IPv6, with a prefix of 1..128: "
			"`addr add 2001:db8::1/64 port 0`.\nAn IPv6 "
			"address may not be the all-zero host of its "
			"subnet (up to /126);\nIPv6 has no broadcast "
			"address. A port may carry addresses of both\n"
			"families.\n\n"
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
			"routes.\n\n"
			"IPv6 prefixes are `IPV6/LEN` (LEN 0..128); `::/0` "
			"is the IPv6 default\nroute (`default` is IPv4's). "
			"GW is of the prefix's family.\n\n"
			"Example: `route add default via "
			"10.0.0.254 port 0`, `route add ::/0 via\n"
			"2001:db8::fe port 0`",
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
			"IP may be IPv6: an IPv6 SNAT address is the source "
			"toward IPv6\nbackends (fnat66), an IPv4 one toward "
			"IPv4 backends.\n\n"
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
		.path = "backend add",
		.synopsis = BE_ARGS " [weight W] [pool NAME]",
		.help = "Add a backend to a virtual service",
		.long_help =
			"`weight W` (1..65535, default 1) scales the "
			"backend's share of new\nflows for the schedulers "
			"that use weights. The backend may not be a\nlocal, "
			"SNAT or VIP address. At most 256 backends per "
			"service.\n\n"
			"An IPv6 service takes IPv6 backends "
			"(`[2001:db8:1::11]:8443`,\nfnat66) and IPv4 ones "
			"(`10.0.1.11:8443`, fnat64, from an IPv4 SNAT\n"
			"address), in one pool if need be; an IPv4 service "
			"IPv4 backends only.\n\n"
			"`pool NAME` puts it in a named pool of the service "
			"(`pool add`);\nwithout it, or with `pool default`, "
			"it is in the service's own pool,\nthe one new "
			"connections take until rules route them elsewhere.\n\n"
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

#define NB_CONF_CMDS (sizeof(conf_cmds) / sizeof(conf_cmds[0]))

int
lb_conf_register(struct lb_conf *c, struct lb_cmd_reg *r)
{
	static struct lb_cmd_def all[NB_CONF_CMDS + LB_CONF_POOL_NB_CMDS];

	if (c == NULL || r == NULL)
		return -EINVAL;
	svc_add_doc();
	/* Pools and rules are lines of the state file too: one array, so
	 * that the registry takes all the commands or none. */
	memcpy(all, conf_cmds, sizeof(conf_cmds));
	memcpy(all + NB_CONF_CMDS, lb_conf_pool_cmds,
	       LB_CONF_POOL_NB_CMDS * sizeof(all[0]));
	return lb_cmd_register_many(r, all, NB_CONF_CMDS + LB_CONF_POOL_NB_CMDS,
				    c);
}

/* The same commands in lb-control's registry, with the self-registered
 * tables, its configuration bound as "conf". The `service add` reference
 * is written from the option rows when the registry is built: the rows
 * register themselves by constructors, in no order a constructor of this
 * file could rely on. */
static int
conf_prepare(void *ctx, struct lb_cmd_def *defs, unsigned int n)
{
	(void)ctx;
	(void)defs;
	(void)n;
	svc_add_doc();
	return 0;
}

static const struct lb_cmd_table conf_table = {
	.name = "conf",
	.ctx = "conf",
	.defs = conf_cmds,
	.n = sizeof(conf_cmds) / sizeof(conf_cmds[0]),
	.prepare = conf_prepare,
};
LB_CMD_REGISTER(conf_table);
