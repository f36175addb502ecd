/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet tests of the worker's IPv6 path (dataplane/core/worker6.c), on
 * the harness of harness.h: IPv6 frames in, the dataplane's answers out
 * byte for byte, built apart by pktbuild.c. The IPv6 parts of the table
 * are set on the compiled IPv4 one, as lb-control's compile will fill
 * them.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_malloc.h>
#include <rte_ring.h>

#include "harness.h"
#include "icmp6.h"
#include "lb/admit.h"
#include "lb/fb.h"
#include "lb/hdr_conf.h"
#include "lb/hdr_scan.h"
#include "l7_reject.h"
#include "pkt_parse6.h"
#include "tcp_opts.h"

#define POOL_SIZE 2047
#define FLOWS 256
#define TCP6_PORT 443
#define UDP6_PORT 53

/* ---- the cast ----------------------------------------------------------- */

enum who {
	A_LB0,	   /* 2001:db8:1::1, ours on port 0 */
	A_C,	   /* 2001:db8:1::7, the client */
	A_VIP_LAN, /* 2001:db8:1::10, a VIP in port 0's prefix (UDP 53) */
	A_VIP,	   /* 2001:db8:a::10, a routed VIP (TCP 443) */
	A_LB1,	   /* 2001:db8:2::1, ours on port 1 */
	A_SNAT,	   /* 2001:db8:2::2, SNAT address on port 1 */
	A_OTHER,   /* 2001:db8:1::99, a neighbour, not ours */
	A_PEER1,   /* 2001:db8:2::20, a host on port 1's side */
	A_ANY,	   /* ::, duplicate address detection's source */
	A_ALL,	   /* ff02::1 */
};

static void
addr(uint8_t out[16], enum who a)
{
	switch (a) {
	case A_LB0:
		pb_ip6(out, 0x2001, 0xdb8, 1, 1);
		break;
	case A_C:
		pb_ip6(out, 0x2001, 0xdb8, 1, 7);
		break;
	case A_VIP_LAN:
		pb_ip6(out, 0x2001, 0xdb8, 1, 0x10);
		break;
	case A_VIP:
		pb_ip6(out, 0x2001, 0xdb8, 0xa, 0x10);
		break;
	case A_LB1:
		pb_ip6(out, 0x2001, 0xdb8, 2, 1);
		break;
	case A_SNAT:
		pb_ip6(out, 0x2001, 0xdb8, 2, 2);
		break;
	case A_OTHER:
		pb_ip6(out, 0x2001, 0xdb8, 1, 0x99);
		break;
	case A_PEER1:
		pb_ip6(out, 0x2001, 0xdb8, 2, 0x20);
		break;
	case A_ANY:
		memset(out, 0, 16);
		break;
	case A_ALL:
		pb_ip6(out, 0xff02, 0, 0, 1);
		break;
	}
}

static const char *const conf4[] = {
	"addr add 198.51.100.1/24 port 0",
	"addr add 10.1.0.1/24 port 1",
	"snat add 10.1.0.2 port 1",
	"service add tcp 203.0.113.10:80 sched rr",
	"backend add tcp 203.0.113.10:80 10.1.0.20:8080",
	NULL,
};

/* Sets the IPv6 parts of table @p d. */
static void
conf6(struct lb_dpconf *d)
{
	struct lb_dpconf_svc *v;
	uint32_t s = d->nb_svc;

	addr(d->addr6[0].ip, A_LB0);
	d->addr6[0].len = 64;
	d->addr6[0].port = 0;
	addr(d->addr6[1].ip, A_LB1);
	d->addr6[1].len = 64;
	d->addr6[1].port = 1;
	d->nb_addr6 = 2;
	addr(d->snat6[0].ip, A_SNAT);
	d->snat6[0].port = 1;
	d->nb_snat6 = 1;

	v = &d->svc[s];
	memset(v, 0, sizeof(*v));
	v->state = LB_SVC_ACTIVE;
	v->af = LB_CONF_AF_INET6;
	v->proto = PB_PROTO_TCP;
	v->vport = htons(TCP6_PORT);
	addr(v->vip6, A_VIP);
	v->opts = d->svc[0].opts;
	/* A SYN no backend takes is dropped (no_backend), and one every
	 * backend refused let go: test_fnat66_deferq queues them. */
	v->opts.deferq_len = 0;
	v = &d->svc[s + 1];
	memset(v, 0, sizeof(*v));
	v->state = LB_SVC_ACTIVE;
	v->af = LB_CONF_AF_INET6;
	v->proto = PB_PROTO_UDP;
	v->vport = htons(UDP6_PORT);
	addr(v->vip6, A_VIP_LAN);
	v->opts = d->svc[0].opts;
	d->nb_svc = s + 2;
}

/* Takes what the workers sent on each port: @p got[port] (at most 4
 * each), their numbers in @p n[port]. */
static void
take_all(struct ph_env *e, struct pb_frame got[NB_PORTS][4],
	 unsigned int n[NB_PORTS])
{
	ph_poll_all(e);
	for (uint16_t p = 0; p < NB_PORTS; p++)
		n[p] = ph_take(e, p, 0, got[p], 4);
}

/* A dataplane whose table has the IPv6 parts; the advertisements of its
 * start are taken (test_announce checks them). */
static struct ph_env *
env6(void **state)
{
	struct ph_env *e = ph_env_new(state);
	const char *const *sets[1] = {conf4};
	static struct pb_frame got[NB_PORTS][4];
	unsigned int n[NB_PORTS];

	e->dp.conf = ph_conf_compile(e, sets, 1, NULL);
	conf6(e->dp.conf);
	e->dp.flows = FLOWS;
	ph_env_start(e, 1);
	take_all(e, got, n);
	CHECK_EQ(n[0] + n[1], 4, "advertisements at start");
	return e;
}


/* ---- frames ------------------------------------------------------------- */

static const uint8_t mac_peer1[6] = {0x02, 0xbe, 0, 0, 0, 0x20};
static const uint8_t mac_all[6] = {0x33, 0x33, 0, 0, 0, 1};

/* An advertisement of @who at @mac: unsolicited to all nodes, or
 * solicited to @to at @to_mac. */
static void
na_frame(struct pb_frame *f, const uint8_t who[16], const uint8_t *mac,
	 bool solicited, const uint8_t to[16], const uint8_t *to_mac)
{
	static uint8_t na[24];
	struct pb_dg6 d;

	memset(&d, 0, sizeof(d));
	memcpy(d.src, who, 16);
	if (solicited)
		memcpy(d.dst, to, 16);
	else
		addr(d.dst, A_ALL);
	d.hlim = 255;
	d.l4.proto = PB_PROTO_ICMPV6;
	d.l4.type = 136;
	d.l4.rest = solicited ? 0x60000000u : 0x20000000u;
	memcpy(na, who, 16);
	na[16] = 2; /* target link-layer address */
	na[17] = 1;
	memcpy(na + 18, mac, 6);
	d.l4.data = na;
	d.l4.plen = 24;
	pb_ipv6_frame(f, solicited ? to_mac : mac_all, mac, &d);
}

/* The client and the host on port 1 announce themselves. */
static void
learn6(struct ph_env *e)
{
	struct pb_frame f;
	uint8_t a[16];

	addr(a, A_C);
	na_frame(&f, a, mac_c, false, NULL, NULL);
	ph_rx(e, 0, &f);
	addr(a, A_PEER1);
	na_frame(&f, a, mac_peer1, false, NULL, NULL);
	ph_rx(e, 1, &f);
	ph_expect_quiet(e, "advertisements taken in");
}

static struct ph_env *
env6_learnt(void **state)
{
	struct ph_env *e = env6(state);

	learn6(e);
	return e;
}

static const uint8_t mac_sn_base[6] = {0x33, 0x33, 0xff, 0, 0, 0};

/* The solicited-node group of @p a and its MAC. */
static void
solicited(const uint8_t a[16], uint8_t grp[16], uint8_t mac[6])
{
	pb_ip6(grp, 0xff02, 0, 0, 0);
	grp[11] = 1;
	grp[12] = 0xff;
	memcpy(grp + 13, a + 13, 3);
	memcpy(mac, mac_sn_base, 6);
	memcpy(mac + 3, a + 13, 3);
}

enum kind {
	K_NS,	  /* neighbour solicitation for @target */
	K_ECHO,	  /* echo request */
	K_ICMP,	  /* another ICMPv6 message (router advertisement) */
	K_TCP,	  /* a SYN */
	K_UDP,	  /* a datagram */
};

enum expect {
	X_NONE,
	X_NA,	  /* the advertisement answering the solicitation */
	X_NA_DAD, /* the one telling a duplicate address check to all */
	X_ECHO,	  /* the echo reply */
};

struct row6 {
	const char *what;
	uint16_t port;
	enum kind kind;
	enum who src, dst, target;
	uint8_t hlim;	  /* 0: 64, or 255 for ND */
	uint8_t zero_hlim; /* a hop limit of 0 */
	uint8_t hbh, frag_hdr;
	uint16_t frag;
	int16_t plen_adj;
	uint16_t vlan;
	uint8_t no_slla;
	enum lb_pkt6_verdict v6;
	int drop;
	enum expect expect;
};

static const uint8_t slla_mac[6] = {0x02, 0xcc, 0, 0, 0, 0x77};

static void
ns_data(uint8_t *data, const uint8_t target[16], bool slla)
{
	memcpy(data, target, 16);
	if (slla) {
		data[16] = 1; /* source link-layer address */
		data[17] = 1;
		memcpy(data + 18, slla_mac, 6);
	}
}

static void
build6(const void *r, struct ph_case *c)
{
	const struct row6 *row = r;
	static uint8_t data[64];
	struct pb_dg6 d;
	uint8_t dmac[6], grp[16], tgt[16];
	const uint8_t *dst_mac = mac_port[row->port];
	uint32_t v6_off = offsetof(struct lb_worker_stats, verdict6);

	memset(&d, 0, sizeof(d));
	addr(d.src, row->src);
	addr(d.dst, row->dst);
	d.hlim = row->zero_hlim ? 0 : row->hlim ? row->hlim : 64;
	d.hbh = row->hbh;
	d.frag_hdr = row->frag_hdr;
	d.frag = row->frag;
	d.plen_adj = row->plen_adj;
	d.vlan = row->vlan;
	switch (row->kind) {
	case K_NS:
		addr(tgt, row->target);
		d.l4.proto = PB_PROTO_ICMPV6;
		d.l4.type = 135;
		ns_data(data, tgt, !row->no_slla);
		d.l4.data = data;
		d.l4.plen = row->no_slla ? 16 : 24;
		if (row->hlim == 0)
			d.hlim = 255;
		if (row->dst != A_ALL) {
			solicited(tgt, grp, dmac);
			memcpy(d.dst, grp, 16);
			dst_mac = dmac;
		}
		break;
	case K_ECHO:
		d.l4.proto = PB_PROTO_ICMPV6;
		d.l4.type = 128;
		d.l4.rest = 0x4242001;
		d.l4.plen = 24;
		d.l4.seed = 5;
		break;
	case K_ICMP:
		d.l4.proto = PB_PROTO_ICMPV6;
		d.l4.type = 134;
		d.l4.plen = 8;
		break;
	case K_TCP:
		d.l4.proto = PB_PROTO_TCP;
		d.l4.sport = 40000;
		d.l4.dport = TCP6_PORT;
		d.l4.seq = 1000;
		d.l4.flags = PB_SYN;
		d.l4.win = 65535;
		d.l4.plen = 4;
		break;
	case K_UDP:
		d.l4.proto = PB_PROTO_UDP;
		d.l4.sport = 40000;
		d.l4.dport = UDP6_PORT;
		d.l4.plen = 20;
		d.l4.seed = 9;
		break;
	}
	pb_ipv6_frame(&c->in, dst_mac, mac_c, &d);
	c->port = row->port;
	c->drop = row->drop;
	c->pkt = -1;
	c->count[0] = (struct ph_count){"verdict6[v6]",
					v6_off + row->v6 * sizeof(uint64_t), 1};
	c->count[1] = (struct ph_count)PH_COUNT(
		verdict[LB_PKT_DROP_ETHERTYPE], 0);
	c->count[2] = (struct ph_count)PH_COUNT(nd_adverts,
						row->expect == X_NA ||
							row->expect == X_NA_DAD);
	c->count[3] = (struct ph_count)PH_COUNT(echo6_replies,
						row->expect == X_ECHO);
	if (row->expect == X_NONE)
		return;
	c->verdict = PH_SENT;
	c->out_port = row->port;
	if (row->expect == X_ECHO) {
		struct pb_dg6 o = d;

		memcpy(o.src, d.dst, 16);
		memcpy(o.dst, d.src, 16);
		o.hlim = 64;
		o.l4.type = 129;
		pb_ipv6_frame(&c->out, row->src == A_PEER1 ? mac_peer1 : mac_c,
			      mac_port[row->port], &o);
		return;
	}
	/* RFC 4861 7.2.4: from the target, to the solicitation's source at
	 * its link-layer address, solicited and override, with our MAC in
	 * the target link-layer option; a duplicate address check is told
	 * to all nodes, unsolicited. */
	{
		struct pb_dg6 o;
		uint8_t na[32];
		const uint8_t *omac = slla_mac;
		static const uint8_t all_mac[6] = {0x33, 0x33, 0, 0, 0, 1};

		memset(&o, 0, sizeof(o));
		addr(o.src, row->target);
		addr(o.dst, row->src);
		o.hlim = 255;
		o.vlan = row->vlan;
		o.l4.proto = PB_PROTO_ICMPV6;
		o.l4.type = 136;
		o.l4.rest = 0x60000000u;
		if (row->expect == X_NA_DAD) {
			addr(o.dst, A_ALL);
			o.l4.rest = 0x20000000u;
			omac = all_mac;
		} else if (row->no_slla) {
			omac = mac_c;
		}
		memcpy(na, tgt, 16);
		na[16] = 2; /* target link-layer address */
		na[17] = 1;
		memcpy(na + 18, mac_port[row->port], 6);
		o.l4.data = na;
		o.l4.plen = 24;
		pb_ipv6_frame(&c->out, omac, mac_port[row->port], &o);
	}
}

/* clang-format off */
static const struct row6 rows6[] = {
	/* Neighbour discovery. */
	{"NS for our address on port 0", 0, K_NS, A_C, A_ANY, A_LB0,
	 .v6 = LB_PKT6_OK, .drop = -1, .expect = X_NA},
	{"NS for a VIP in port 0's prefix", 0, K_NS, A_C, A_ANY, A_VIP_LAN,
	 .v6 = LB_PKT6_OK, .drop = -1, .expect = X_NA},
	{"NS for a routed VIP", 1, K_NS, A_C, A_ANY, A_VIP,
	 .v6 = LB_PKT6_OK, .drop = -1, .expect = X_NA},
	{"NS for the SNAT address on its port", 1, K_NS, A_PEER1, A_ANY,
	 A_SNAT, .v6 = LB_PKT6_OK, .drop = -1, .expect = X_NA},
	{"NS without a link-layer option: answered to the frame's source",
	 0, K_NS, A_C, A_ANY, A_LB0, .no_slla = 1, .v6 = LB_PKT6_OK,
	 .drop = -1, .expect = X_NA},
	{"NS from :: (duplicate address check): told to all nodes", 0, K_NS,
	 A_ANY, A_ANY, A_LB0, .no_slla = 1, .v6 = LB_PKT6_OK, .drop = -1,
	 .expect = X_NA_DAD},
	{"NS for the SNAT address on another port: not answered", 0, K_NS,
	 A_C, A_ANY, A_SNAT, .v6 = LB_PKT6_OK, .drop = -1},
	{"NS for port 1's address on port 0: not answered", 0, K_NS, A_C,
	 A_ANY, A_LB1, .v6 = LB_PKT6_OK, .drop = -1},
	{"NS for a neighbour: not answered", 0, K_NS, A_C, A_ANY, A_OTHER,
	 .v6 = LB_PKT6_OK, .drop = -1},
	{"NS with hop limit 254: from off-link", 0, K_NS, A_C, A_ANY, A_LB0,
	 .hlim = 254, .v6 = LB_PKT6_OK, .drop = LB_DROP_ND_INVALID},
	{"NS from our own address", 0, K_NS, A_VIP_LAN, A_ANY, A_LB0,
	 .v6 = LB_PKT6_OK, .drop = LB_DROP_ND_SPOOF},
	/* Echo. */
	{"echo to our address", 0, K_ECHO, A_C, A_LB0, .v6 = LB_PKT6_OK,
	 .drop = -1, .expect = X_ECHO},
	{"echo to a VIP", 0, K_ECHO, A_C, A_VIP, .v6 = LB_PKT6_OK,
	 .drop = -1, .expect = X_ECHO},
	{"echo to the SNAT address on its port", 1, K_ECHO, A_PEER1, A_SNAT,
	 .v6 = LB_PKT6_OK, .drop = -1, .expect = X_ECHO},
	{"echo to a neighbour", 0, K_ECHO, A_C, A_OTHER, .v6 = LB_PKT6_OK,
	 .drop = LB_DROP_ICMP6},
	{"echo to all nodes", 0, K_ECHO, A_C, A_ALL, .v6 = LB_PKT6_OK,
	 .drop = LB_DROP_ICMP6},
	{"echo from one of our addresses", 0, K_ECHO, A_VIP, A_LB0,
	 .v6 = LB_PKT6_OK, .drop = LB_DROP_SRC_OURS},
	{"echo with a hop-by-hop header: not answered with it", 0, K_ECHO,
	 A_C, A_LB0, .hbh = 1, .v6 = LB_PKT6_OK, .drop = LB_DROP_ICMP6},
	{"router advertisement", 0, K_ICMP, A_C, A_ALL, .v6 = LB_PKT6_OK,
	 .drop = LB_DROP_ICMP6},
	/* To a VIP, to the SNAT address, to others. */
	{"SYN to the IPv6 VIP", 0, K_TCP, A_C, A_VIP, .v6 = LB_PKT6_OK,
	 .drop = LB_DROP_NO_BACKEND},
	{"SYN to the IPv6 VIP behind a hop-by-hop header", 0, K_TCP, A_C,
	 A_VIP, .hbh = 1, .v6 = LB_PKT6_OK, .drop = LB_DROP_NO_BACKEND},
	{"datagram to the IPv6 VIP", 0, K_UDP, A_C, A_VIP_LAN,
	 .v6 = LB_PKT6_OK, .drop = LB_DROP_NO_BACKEND},
	{"datagram to the SNAT address", 1, K_UDP, A_PEER1, A_SNAT,
	 .v6 = LB_PKT6_OK, .drop = LB_DROP_NO_FLOW},
	{"SYN with hop limit 1", 0, K_TCP, A_C, A_VIP, .hlim = 1,
	 .v6 = LB_PKT6_OK, .drop = LB_DROP_HOP_LIMIT},
	{"datagram with hop limit 0", 0, K_UDP, A_C, A_VIP_LAN,
	 .zero_hlim = 1, .v6 = LB_PKT6_OK, .drop = LB_DROP_HOP_LIMIT},
	{"first fragment to the VIP", 0, K_TCP, A_C, A_VIP, .frag_hdr = 1,
	 .frag = 1, .v6 = LB_PKT6_OK, .drop = LB_DROP_IP6_FRAG},
	{"atomic fragment to the VIP: a whole packet", 0, K_TCP, A_C, A_VIP,
	 .frag_hdr = 1, .v6 = LB_PKT6_OK, .drop = LB_DROP_NO_BACKEND},
	{"datagram to the TCP VIP", 0, K_UDP, A_C, A_VIP,
	 .v6 = LB_PKT6_OK, .drop = LB_DROP_NOT_OURS},
	{"SYN to a neighbour", 0, K_TCP, A_C, A_OTHER, .v6 = LB_PKT6_OK,
	 .drop = LB_DROP_NOT_OURS},
	{"tagged on an untagged port", 0, K_ECHO, A_C, A_LB0, .vlan = 7,
	 .v6 = LB_PKT6_OK, .drop = LB_DROP_VLAN},
	/* Malformed: the IPv6 parser's verdicts, no drop reason. */
	{"payload length beyond the frame", 0, K_TCP, A_C, A_VIP,
	 .plen_adj = 8, .v6 = LB_PKT6_DROP_PLEN, .drop = -1},
	{"later fragment", 0, K_TCP, A_C, A_VIP, .frag_hdr = 1,
	 .frag = 8 << 3, .v6 = LB_PKT6_DROP_FRAG, .drop = -1},
	{"payload length cutting the TCP header", 0, K_TCP, A_C, A_VIP,
	 .plen_adj = -16, .v6 = LB_PKT6_DROP_TCP_TRUNC, .drop = -1},
};
/* clang-format on */

static const struct ph_table table6 = {
	"ipv6",
	PH_ROWS(rows6),
	env6_learnt,
	build6,
	NULL,
};

/* ---- sequences ----------------------------------------------------------- */

/* A solicitation for @target from @src at @mac, in VLAN @vlan (0:
 * untagged), with the source link-layer option. */
static void
ns_frame(struct pb_frame *f, const uint8_t src[16], const uint8_t target[16],
	 const uint8_t *mac, uint16_t vlan)
{
	static uint8_t data[24];
	struct pb_dg6 d;
	uint8_t dmac[6];

	memset(&d, 0, sizeof(d));
	memcpy(d.src, src, 16);
	solicited(target, d.dst, dmac);
	d.hlim = 255;
	d.vlan = vlan;
	d.l4.proto = PB_PROTO_ICMPV6;
	d.l4.type = 135;
	memcpy(data, target, 16);
	data[16] = 1;
	data[17] = 1;
	memcpy(data + 18, mac, 6);
	d.l4.data = data;
	d.l4.plen = 24;
	pb_ipv6_frame(f, dmac, mac, &d);
}

/* The solicitation we send for @target from @src on @port. */
static void
ns_out(struct pb_frame *f, uint16_t port, const uint8_t src[16],
       const uint8_t target[16])
{
	ns_frame(f, src, target, mac_port[port], 0);
}

/* An echo request from @src (at @src_mac) to @dst on port 0. */
static void
echo_in(struct pb_frame *f, const uint8_t src[16], const uint8_t dst[16],
	const uint8_t *src_mac, struct pb_dg6 *d)
{
	memset(d, 0, sizeof(*d));
	memcpy(d->src, src, 16);
	memcpy(d->dst, dst, 16);
	d->hlim = 64;
	d->l4.proto = PB_PROTO_ICMPV6;
	d->l4.type = 128;
	d->l4.rest = 0x77000001;
	d->l4.plen = 16;
	pb_ipv6_frame(f, mac_port[0], src_mac, d);
}

/* The reply to @in (built by echo_in()) as it leaves toward @mac. */
static void
echo_out(struct pb_frame *f, const struct pb_dg6 *in, const uint8_t *mac)
{
	struct pb_dg6 o = *in;

	memcpy(o.src, in->dst, 16);
	memcpy(o.dst, in->src, 16);
	o.l4.type = 129;
	pb_ipv6_frame(f, mac, mac_port[0], &o);
}

/* A client nobody knows yet: its reply waits for the answer to our
 * solicitation, then leaves to the MAC it gave. */
static void
test_echo_resolves(void **state)
{
	struct ph_env *e = env6(state);
	struct pb_frame f, want;
	struct pb_dg6 d;
	uint8_t lb0[16], c[16];

	addr(lb0, A_LB0);
	addr(c, A_C);
	echo_in(&f, c, lb0, mac_c, &d);
	ph_rx(e, 0, &f);
	ns_out(&want, 0, lb0, c);
	ph_expect_frame(e, 0, 0, &want, "solicitation for the client");
	CHECK_EQ(e->w->st.nd_solicits, 1, "solicitations");
	/* Another request meanwhile waits too, without a second one. */
	ph_rx(e, 0, &f);
	ph_expect_quiet(e, "second request held");
	na_frame(&f, c, mac_c, true, lb0, mac_port[0]);
	ph_rx(e, 0, &f);
	{
		struct pb_frame got[2];

		echo_out(&want, &d, mac_c);
		CHECK_EQ(ph_take(e, 0, 0, got, 2), 2, "both replies");
		ph_expect_same(&got[0], &want, "first reply");
		ph_expect_same(&got[1], &want, "second reply");
	}
	CHECK_EQ(e->w->st.echo6_replies, 2, "echo replies");
	CHECK_EQ(e->w->st.nd_solicits, 1, "solicitations");
	ph_check_no_drops(e->w, "echo resolved");
}

/* A pinger off-link: the reply goes to the gateway of the route, which
 * is solicited first. */
static void
test_echo_via_gateway(void **state)
{
	struct ph_env *e = env6(state);
	struct lb_dpconf *d = ph_table_next(e);
	static const uint8_t mac_gw[6] = {0x02, 0xcc, 0, 0, 0, 0xfe};
	struct pb_frame f, want;
	struct pb_dg6 dg;
	uint8_t lb0[16], far[16], vip[16], gw[16];

	pb_ip6(gw, 0x2001, 0xdb8, 1, 0xfe);
	memcpy(d->route6[0].gw, gw, 16); /* ::/0 via 2001:db8:1::fe */
	d->nb_route6 = 1;
	ph_table_publish(e, d);

	addr(lb0, A_LB0);
	addr(vip, A_VIP);
	pb_ip6(far, 0x2001, 0xdb8, 0x99, 5);
	echo_in(&f, far, vip, mac_gw, &dg);
	ph_rx(e, 0, &f);
	ns_out(&want, 0, lb0, gw);
	ph_expect_frame(e, 0, 0, &want, "solicitation for the gateway");
	na_frame(&f, gw, mac_gw, true, lb0, mac_port[0]);
	ph_rx(e, 0, &f);
	echo_out(&want, &dg, mac_gw);
	ph_expect_frame(e, 0, 0, &want, "reply through the gateway");
	ph_check_no_drops(e->w, "echo via gateway");
}

/* An IPv4 frame still goes the IPv4 way beside them: ARP answered. */
static void
test_ipv4_beside(void **state)
{
	struct ph_env *e = env6(state);
	struct pb_frame f, got;

	pb_arp_frame(&f, (const uint8_t[6]){0xff, 0xff, 0xff, 0xff, 0xff,
					    0xff},
		     mac_c, 1, mac_c, IP_C, (const uint8_t[6]){0}, IP_LB0,
		     PB_FRAME_MIN);
	ph_rx(e, 0, &f);
	ph_expect_one(e, 0, 0, &got, "ARP beside IPv6");
	CHECK_EQ(e->w->st.arp_replies, 1, "arp replies");
	CHECK_EQ(e->w->st.verdict6[LB_PKT6_OK], 0, "no IPv6 seen");
}

/* A new table without IPv6 services: the VIP is no longer ours. */
static void
test_table_switch(void **state)
{
	struct ph_env *e = env6(state);
	struct lb_dpconf *d = ph_table_next(e);
	struct ph_case c;
	const struct row6 *syn = NULL;

	for (size_t i = 0; i < NELEM(rows6); i++)
		if (strcmp(rows6[i].what, "SYN to the IPv6 VIP") == 0)
			syn = &rows6[i];
	assert_non_null(syn);
	d->svc[d->nb_svc - 2].state = LB_SVC_DELETED;
	ph_table_publish(e, d);
	ph_case_init(&c);
	build6(syn, &c);
	c.drop = LB_DROP_NOT_OURS;
	ph_case_run(e, &c, "SYN to a deleted IPv6 service");
}

/* A neighbour is learnt only on the port whose prefix holds it: an
 * advertisement for a port 1 host arriving on port 0 teaches nothing. */
static void
test_na_wrong_port(void **state)
{
	struct ph_env *e = env6(state);
	struct pb_frame f, want;
	struct pb_dg6 d;
	uint8_t peer[16], snat[16], lb1[16];

	addr(peer, A_PEER1);
	addr(snat, A_SNAT);
	addr(lb1, A_LB1);
	na_frame(&f, peer, mac_peer1, false, NULL, NULL);
	ph_rx(e, 0, &f);
	ph_expect_quiet(e, "advertisement on the wrong port");
	memset(&d, 0, sizeof(d));
	memcpy(d.src, peer, 16);
	memcpy(d.dst, snat, 16);
	d.hlim = 64;
	d.l4.proto = PB_PROTO_ICMPV6;
	d.l4.type = 128;
	d.l4.plen = 8;
	pb_ipv6_frame(&f, mac_port[1], mac_peer1, &d);
	ph_rx(e, 1, &f);
	ns_out(&want, 1, lb1, peer);
	ph_expect_frame(e, 1, 0, &want, "solicitation: the host unknown");
	/* On its own port it is learnt, and the reply leaves. */
	na_frame(&f, peer, mac_peer1, false, NULL, NULL);
	ph_rx(e, 1, &f);
	{
		struct pb_dg6 o = d;
		struct pb_frame got;

		memcpy(o.src, snat, 16);
		memcpy(o.dst, peer, 16);
		o.l4.type = 129;
		pb_ipv6_frame(&want, mac_peer1, mac_port[1], &o);
		ph_expect_one(e, 1, 0, &got, "reply once learnt");
		ph_expect_same(&got, &want, "reply once learnt");
	}
}

/* The unsolicited advertisement of @p who out of @p port: the one a
 * neighbour sends, from our MAC. */
static void
announce_out(struct pb_frame *f, uint16_t port, enum who who)
{
	uint8_t a[16];

	addr(a, who);
	na_frame(f, a, mac_port[port], false, NULL, NULL);
}

/* At start each address is announced on its port (a VIP on the port
 * whose prefix holds it, a routed VIP nowhere); a new table announces
 * only what it adds. */
static void
test_announce(void **state)
{
	struct ph_env *e = ph_env_new(state);
	const char *const *sets[1] = {conf4};
	static struct pb_frame got[NB_PORTS][4];
	struct pb_frame want;
	unsigned int n[NB_PORTS];
	struct lb_dpconf *d;

	e->dp.conf = ph_conf_compile(e, sets, 1, NULL);
	conf6(e->dp.conf);
	e->dp.flows = FLOWS;
	ph_env_start(e, 1);
	take_all(e, got, n);
	CHECK_EQ(n[0], 2, "announced on port 0");
	CHECK_EQ(n[1], 2, "announced on port 1");
	announce_out(&want, 0, A_LB0);
	ph_expect_same(&got[0][0], &want, "our address on port 0");
	announce_out(&want, 0, A_VIP_LAN);
	ph_expect_same(&got[0][1], &want, "the VIP in port 0's prefix");
	announce_out(&want, 1, A_LB1);
	ph_expect_same(&got[1][0], &want, "our address on port 1");
	announce_out(&want, 1, A_SNAT);
	ph_expect_same(&got[1][1], &want, "the SNAT address");
	CHECK_EQ(e->w->st.nd_announces, 4, "announcements");

	/* A second SNAT address: announced alone. */
	d = ph_table_next(e);
	d->snat6[1] = d->snat6[0];
	d->snat6[1].ip[15] = 3;
	d->nb_snat6 = 2;
	ph_table_publish(e, d);
	take_all(e, got, n);
	CHECK_EQ(n[0], 0, "nothing new on port 0");
	CHECK_EQ(n[1], 1, "the new SNAT address on port 1");
	CHECK_EQ(pb_get16(got[1][0].b + ETH + 40), 136 << 8, "an advertisement");
	CHECK_EQ(got[1][0].b[ETH + 8 + 15], 3, "of 2001:db8:2::3");
	CHECK_EQ(e->w->st.nd_announces, 5, "announcements");
}

/* Port 1 tagged 20: neighbour discovery and echo there come and go in
 * its VLAN, untagged frames are not its own. */
static void
test_vlan(void **state)
{
	struct ph_env *e = ph_env_new(state);
	const char *const *sets[1] = {conf4};
	static struct pb_frame got[NB_PORTS][4];
	struct pb_frame f, want;
	struct pb_dg6 d, o;
	unsigned int n[NB_PORTS];
	uint8_t peer[16], snat[16];

	e->dp.conf = ph_conf_compile(e, sets, 1, NULL);
	conf6(e->dp.conf);
	e->dp.conf->port_vlan[1] = 20;
	e->dp.flows = FLOWS;
	ph_env_start(e, 1);
	take_all(e, got, n);
	CHECK_EQ(n[1], 2, "announced on port 1");
	CHECK_EQ(pb_get16(got[1][0].b + 12), 0x8100, "tagged");
	CHECK_EQ(pb_get16(got[1][0].b + 14), 20, "in VLAN 20");

	addr(peer, A_PEER1);
	addr(snat, A_SNAT);
	ns_frame(&f, peer, snat, mac_peer1, 0);
	ph_rx(e, 1, &f);
	ph_expect_quiet(e, "untagged solicitation");
	CHECK_EQ(e->w->st.drop[LB_DROP_VLAN], 1, "vlan mismatch");

	ns_frame(&f, peer, snat, mac_peer1, 20);
	ph_rx(e, 1, &f);
	na_frame(&want, snat, mac_port[1], true, peer, mac_peer1);
	memmove(want.b + 16, want.b + 12, want.len - 12);
	pb_put16(want.b + 12, 0x8100);
	pb_put16(want.b + 14, 20);
	want.len += 4;
	ph_expect_frame(e, 1, 0, &want, "advertisement in VLAN 20");

	/* The solicitation taught us the peer: its ping is answered in
	 * the VLAN at once. */
	memset(&d, 0, sizeof(d));
	memcpy(d.src, peer, 16);
	memcpy(d.dst, snat, 16);
	d.hlim = 64;
	d.vlan = 20;
	d.l4.proto = PB_PROTO_ICMPV6;
	d.l4.type = 128;
	d.l4.plen = 8;
	pb_ipv6_frame(&f, mac_port[1], mac_peer1, &d);
	ph_rx(e, 1, &f);
	o = d;
	memcpy(o.src, snat, 16);
	memcpy(o.dst, peer, 16);
	o.l4.type = 129;
	pb_ipv6_frame(&want, mac_peer1, mac_port[1], &o);
	ph_expect_frame(e, 1, 0, &want, "echo reply in VLAN 20");
}

/* ---- fnat66 ------------------------------------------------------------- */

#define BPORT6 8443
#define UBPORT6 5353
#define CPORT6 40000

/* The dataplane of env6() whose IPv6 services have one backend each,
 * the host on port 1, with @p nb workers, each knowing the client and
 * that host; @p sb, when not NULL, the budget of new flows per source;
 * @p ac, when not NULL, the TCP service's admission settings. */
static struct ph_env *
env66_build(void **state, const struct lb_src_budget_conf *sb,
	    const struct lb_admit_conf *ac)
{
	struct ph_env *e = ph_env_new(state);
	const char *const *sets[1] = {conf4};
	struct lb_dpconf *d;

	d = e->dp.conf = ph_conf_compile(e, sets, 1, NULL);
	conf6(d);
	for (uint32_t k = 0; k < 2; k++) {
		struct lb_dpconf_svc *v = &d->svc[d->nb_svc - 2 + k];

		memset(&v->be[0], 0, sizeof(v->be[0]));
		v->be[0].af = LB_CONF_AF_INET6;
		addr(v->be[0].ip6, A_PEER1);
		v->be[0].port = htons(k == 0 ? BPORT6 : UBPORT6);
		v->be[0].state = LB_BE_ACTIVE;
		v->be[0].weight = 1;
		v->nb_be = 1;
	}
	e->dp.flows = FLOWS;
	if (sb != NULL)
		e->dp.src_budget = *sb;
	if (ac != NULL) {
		d->svc[d->nb_svc - 2].opts.admit = *ac;
		e->admit_mem = rte_zmalloc("pkt6_admit",
					   lb_admit_shm_size(64), 64);
		assert_non_null(e->admit_mem);
		e->dp.admit = lb_admit_shm_init(e->admit_mem, 64);
		assert_non_null(e->dp.admit);
	}
	return e;
}

/* Starts env66_build()'s dataplane with @p nb workers, each knowing the
 * client and the host on port 1. */
static struct ph_env *
env66_go(struct ph_env *e, uint16_t nb)
{
	static struct pb_frame got[NB_PORTS][4];
	unsigned int n[NB_PORTS];

	ph_env_start(e, nb);
	take_all(e, got, n);
	for (uint16_t q = 0; q < nb; q++) {
		struct pb_frame f;
		uint8_t a[16];

		addr(a, A_C);
		na_frame(&f, a, mac_c, false, NULL, NULL);
		ph_inject(e, 0, q, &f);
		addr(a, A_PEER1);
		na_frame(&f, a, mac_peer1, false, NULL, NULL);
		ph_inject(e, 1, q, &f);
		ph_poll(e, q);
	}
	ph_expect_quiet(e, "advertisements taken in");
	return e;
}

static struct ph_env *
env66_opt(void **state, uint16_t nb, const struct lb_src_budget_conf *sb,
	  const struct lb_admit_conf *ac)
{
	return env66_go(env66_build(state, sb, ac), nb);
}

static struct ph_env *
env66_n(void **state, uint16_t nb)
{
	return env66_opt(state, nb, NULL, NULL);
}

static struct ph_env *
env66(void **state)
{
	return env66_n(state, 1);
}

/* A TCP segment or UDP datagram from @src:@sport to @dst:@dport. */
static void
seg6(struct pb_dg6 *d, enum who src, uint16_t sport, const uint8_t dst[16],
     uint16_t dport, uint8_t proto, uint8_t flags, uint32_t seq,
     uint32_t ack, uint8_t hlim)
{
	memset(d, 0, sizeof(*d));
	addr(d->src, src);
	memcpy(d->dst, dst, 16);
	d->hlim = hlim;
	d->l4.proto = proto;
	d->l4.sport = sport;
	d->l4.dport = dport;
	d->l4.flags = flags;
	d->l4.seq = seq;
	d->l4.ack = ack;
	d->l4.win = 65535;
	d->l4.plen = flags & PB_SYN ? 0 : 12;
	d->l4.seed = (uint8_t)(seq + ack);
}

/* The same packet as it leaves: from @src:@sport to @dst:@dport, one hop
 * less. */
static void
seg6_out(struct pb_dg6 *o, const struct pb_dg6 *in, const uint8_t src[16],
	 uint16_t sport, const uint8_t dst[16], uint16_t dport)
{
	*o = *in;
	memcpy(o->src, src, 16);
	memcpy(o->dst, dst, 16);
	o->l4.sport = sport;
	o->l4.dport = dport;
	o->hlim = (uint8_t)(in->hlim - 1);
}

/* The client's SYN to the TCP VIP, and the addresses of the cast. */
static void
client_syn(struct pb_dg6 *in, struct pb_frame *f, uint8_t vip[16],
	   uint8_t snat[16], uint8_t c[16])
{
	addr(vip, A_VIP);
	addr(snat, A_SNAT);
	addr(c, A_C);
	seg6(in, A_C, CPORT6, vip, TCP6_PORT, PB_PROTO_TCP, PB_SYN, 1000, 0,
	     64);
	pb_ipv6_frame(f, mac_port[0], mac_c, in);
}

/* The backend's SYN-ACK from @p bport to SNAT port @p sport, and what
 * the client gets of it, byte for byte. */
static void
backend_synack(struct ph_env *e, uint16_t bport, const uint8_t snat[16],
	       uint16_t sport, const uint8_t vip[16], const uint8_t c[16])
{
	struct pb_frame f, want;
	struct pb_dg6 in, out;

	seg6(&in, A_PEER1, bport, snat, sport, PB_PROTO_TCP, PB_SYN | PB_ACK,
	     5000, 1001, 64);
	pb_ipv6_frame(&f, mac_port[1], mac_peer1, &in);
	ph_rx(e, 1, &f);
	seg6_out(&out, &in, vip, TCP6_PORT, c, CPORT6);
	pb_ipv6_frame(&want, mac_c, mac_port[0], &out);
	ph_expect_frame(e, 0, 0, &want, "SYN-ACK to the client");
}

/*
 * A client's connection through the TCP VIP, both ways, byte for byte:
 * SNAT address and a port of the worker's slice towards the backend, the
 * VIP back towards the client, one hop less each way, checksums as
 * pktbuild.c computes them from scratch.
 */
static void
test_fnat66_tcp(void **state)
{
	struct ph_env *e = env66(state);
	struct pb_frame f, want, got;
	struct pb_dg6 in, out;
	uint8_t vip[16], snat[16], c[16], be[16];
	uint16_t sport;
	enum lb_flow_dir dir;
	struct lb_flow6_tuple t;
	uint32_t idx;
	int s = (int)e->dp.conf->nb_svc - 2;

	client_syn(&in, &f, vip, snat, c);
	addr(be, A_PEER1);
	ph_rx(e, 0, &f);
	ph_expect_one(e, 1, 0, &got, "SYN to the backend");
	sport = pb_get16(got.b + ETH + 40);
	CHECK_EQ(lb_snat_owner(e->w->snat6, htons(sport)), 0, "our slice");
	seg6_out(&out, &in, snat, sport, be, BPORT6);
	pb_ipv6_frame(&want, mac_peer1, mac_port[1], &out);
	ph_expect_same(&got, &want, "SYN to the backend");

	backend_synack(e, BPORT6, snat, sport, vip, c);

	seg6(&in, A_C, CPORT6, vip, TCP6_PORT, PB_PROTO_TCP, PB_ACK, 1001,
	     5001, 64);
	pb_ipv6_frame(&f, mac_port[0], mac_c, &in);
	ph_rx(e, 0, &f);
	seg6_out(&out, &in, snat, sport, be, BPORT6);
	pb_ipv6_frame(&want, mac_peer1, mac_port[1], &out);
	ph_expect_frame(e, 1, 0, &want, "data to the backend");

	memset(&t, 0, sizeof(t));
	memcpy(t.src, c, 16);
	memcpy(t.dst, vip, 16);
	t.sport = htons(CPORT6);
	t.dport = htons(TCP6_PORT);
	t.proto = PB_PROTO_TCP;
	idx = lb_flow6_lookup(e->w->ft, e->w->f6, &t, &dir);
	assert_int_not_equal(idx, LB_FLOW_NONE);
	CHECK_EQ(lb_flow_entries(e->w->ft)[idx].state, LB_FLOW_ESTABLISHED,
		 "state");
	CHECK_EQ(e->w->st.flows_created, 1, "flows created");
	CHECK_EQ(e->w->bst[s][0].active, 1, "active on the backend");
	/* As lb-control sees it, through the shared worker record. */
	CHECK_EQ(lb_snat_addr_used(e->w->sh.snat6,
				   lb_flow6_fold(e->w->sh.ft, snat)),
		 1, "SNAT port held");
	ph_check_no_drops(e->w, "fnat66 TCP");

	/* A segment of the backend to another port of ours: no flow, and
	 * a RST at the sequence number it acknowledged (RFC 793), from the
	 * SNAT addresses' bucket. */
	seg6(&in, A_PEER1, BPORT6, snat, (uint16_t)(sport + 1), PB_PROTO_TCP,
	     PB_ACK, 5001, 1013, 64);
	pb_ipv6_frame(&f, mac_port[1], mac_peer1, &in);
	ph_rx(e, 1, &f);
	seg6(&out, A_SNAT, (uint16_t)(sport + 1), be, BPORT6, PB_PROTO_TCP,
	     PB_RST, 1013, 0, 64);
	out.l4.win = 0;
	out.l4.plen = 0;
	pb_ipv6_frame(&want, mac_peer1, mac_port[1], &out);
	ph_expect_frame(e, 1, 0, &want, "RST to a reply without a flow");
	CHECK_EQ(e->w->st.drop[LB_DROP_NO_FLOW], 1, "no flow");
	CHECK_EQ(e->w->st.rst_no_flow, 1, "RST without a flow");

	/* The flow's end gives its port back. */
	CHECK_EQ(lb_flow_expire(e->w->ft, ph_now_ns(e) + 86400000000000ull,
				16, e->w->ft->reaper, e->w->ft->reaper_ctx),
		 1, "expired");
	CHECK_EQ(lb_snat_addr_used(e->w->snat6,
				   lb_flow6_fold(e->w->ft, snat)),
		 0, "SNAT port free");
	CHECK_EQ(e->w->bst[s][0].active, 0, "nothing active");
}

/* ---- the SYN proxy on fnat66 (worker_synp.c) ---- */

static void too_big6(struct pb_dg6 *err, const uint8_t src[16],
		     const uint8_t dst[16], uint32_t mtu, const uint8_t *quote,
		     uint32_t qlen);

/* env66_build()'s dataplane with the TCP service's SYN proxy in @p mode
 * (the defaults of lb-control: MSS 1460, scale 7), @p nb_be backends
 * (A_PEER1 on ports BPORT6, BPORT6 + 1, ...). */
static struct ph_env *
env66_synp(void **state, uint8_t mode, uint32_t syn_rate, uint32_t nb_be)
{
	struct ph_env *e = env66_build(state, NULL, NULL);
	struct lb_dpconf_svc *v = &e->dp.conf->svc[e->dp.conf->nb_svc - 2];

	v->opts.synp.mode = mode;
	v->opts.synp.mss = 1460;
	v->opts.synp.wscale = 7;
	v->opts.synp.syn_rate = syn_rate;
	v->opts.synp.half_open = 1000000;
	v->opts.synp.calm_ns = 1000000000ull;
	for (uint32_t b = 1; b < nb_be; b++) {
		v->be[b] = v->be[0];
		v->be[b].port = htons((uint16_t)(BPORT6 + b));
	}
	v->nb_be = nb_be;
	return env66_go(e, 1);
}

/* A segment from the client (@p to_be) or the backend with TCP options
 * @p opt (@p n bytes, whole words) before @p plen bytes of payload,
 * window @p win: the options go in as payload, then the data offset and
 * checksum are made to say so. */
static void
opt6_frame(struct pb_frame *f, bool to_be, uint16_t sport, uint16_t dport,
	   uint8_t flags, uint32_t seq, uint32_t ack, uint16_t win,
	   const uint8_t *opt, uint16_t n, uint16_t plen)
{
	uint8_t buf[256], a[16];
	struct pb_dg6 d;
	uint8_t *ip, *th;
	uint32_t tl = 20u + n + plen;

	memcpy(buf, opt, n);
	for (uint16_t i = 0; i < plen; i++)
		buf[n + i] = (uint8_t)('a' + i % 26);
	if (to_be)
		addr(a, A_VIP);
	else
		addr(a, A_SNAT);
	seg6(&d, to_be ? A_C : A_PEER1, sport, a, dport, PB_PROTO_TCP, flags,
	     seq, ack, 64);
	d.l4.data = buf;
	d.l4.plen = (uint16_t)(n + plen);
	if (to_be)
		pb_ipv6_frame(f, mac_port[0], mac_c, &d);
	else
		pb_ipv6_frame(f, mac_port[1], mac_peer1, &d);
	ip = f->b + ETH;
	th = ip + 40;
	th[12] = (uint8_t)((20 + n) / 4 << 4);
	pb_put16(th + 14, win);
	pb_put16(th + 16, 0);
	pb_put16(th + 16, (uint16_t)~pb_fold(pb_sum(
				  th, tl, pb_sum(ip + 8, 32, PB_PROTO_TCP + tl))));
}

/* A segment the worker sent, read back: its checksum must verify. */
struct seg6_out {
	uint8_t src[16], dst[16];
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t win, plen;
	struct lb_tcp_opts o;
};

static void
seg6_read(const struct pb_frame *f, struct seg6_out *s, const char *what)
{
	struct lb_pkt6 pkt;
	const uint8_t *th;

	if (lb_pkt6_parse(f->b, f->len, &pkt) != LB_PKT6_OK ||
	    pkt.proto != PB_PROTO_TCP || !lb_pkt6_l4_csum_ok(f->b, &pkt))
		fail_msg("%s: not a TCP segment with a good checksum", what);
	th = f->b + pkt.l4_off;
	memcpy(s->src, pkt.src, 16);
	memcpy(s->dst, pkt.dst, 16);
	s->sport = ntohs(pkt.sport);
	s->dport = ntohs(pkt.dport);
	s->seq = pb_get32(th + 4);
	s->ack = pb_get32(th + 8);
	s->flags = th[13];
	s->win = pb_get16(th + 14);
	s->plen = pkt.payload_len;
	lb_tcp_opts_read(th + 20, pkt.payload_off - pkt.l4_off - 20u, &s->o);
}

static void
check_addr(const uint8_t got[16], enum who want, const char *what)
{
	uint8_t a[16];

	addr(a, want);
	if (memcmp(got, a, 16) != 0)
		fail_msg("%s: another address", what);
}

/* The client's SYN of port @p cport, ISN @p iss, answered with a cookie:
 * @return the cookie, the SYN-ACK in @p o. */
static uint32_t
synp6_cookie(struct ph_env *e, uint16_t cport, uint32_t iss,
	     const uint8_t *opt, uint16_t n, struct seg6_out *o)
{
	struct pb_frame in, got;

	opt6_frame(&in, true, cport, TCP6_PORT, PB_SYN, iss, 0, 65535, opt, n,
		   0);
	ph_rx(e, 0, &in);
	ph_expect_one(e, 0, 0, &got, "SYN-ACK");
	seg6_read(&got, o, "SYN-ACK");
	return o->seq;
}

/*
 * synproxy on an IPv6 service, a Linux client (MSS, SACK, timestamps,
 * scale 6) across a sequence wrap and a backend with scale 9, as IPv4's
 * test_synproxy: the SYN is answered with a cookie over the IPv6 tuple
 * and nothing kept, a flood of them neither; an ACK with a forged cookie
 * opens nothing; the ACK that proves it opens the backend's connection
 * with the client's options (its MSS class of IPv6's); the client's
 * early data waits, and sent again sends the backend's SYN again; the
 * backend's SYN-ACK goes no further and the client's ACK and data
 * complete its handshake; from then on both sides see their own
 * numbers, timestamps and window scales.
 */
static void
test_synproxy6(void **state)
{
	struct ph_env *e = env66_synp(state, LB_CONF_SYNP_ON, 20000, 1);
	const struct lb_worker *w = e->w;
	const uint32_t iss = 0xfffffff0u, irs = 0x7ffffff0u;
	const uint8_t syn_opt[20] = {2, 4, 0x05, 0x96, 4, 2, 8, 10, 0, 0, 0x03,
				     0xe8, 0, 0, 0, 0, 1, 3, 3, 6};
	struct pb_frame in, got, two[3];
	struct seg6_out o;
	uint32_t cookie, tsv;
	uint16_t sport;
	uint8_t opt[20];

	cookie = synp6_cookie(e, CPORT6, iss, syn_opt, sizeof(syn_opt), &o);
	check_addr(o.src, A_VIP, "SYN-ACK from the VIP");
	check_addr(o.dst, A_C, "SYN-ACK to the client");
	CHECK_EQ(o.sport, TCP6_PORT, "VIP port");
	CHECK_EQ(o.dport, CPORT6, "client port");
	CHECK_EQ(o.flags, PB_SYN | PB_ACK, "SYN-ACK flags");
	CHECK_EQ(o.ack, iss + 1, "acknowledges the SYN");
	CHECK_EQ(o.o.mss, 1440, "MSS offered: the service's less 20");
	CHECK_EQ(o.o.wscale, 7, "window scale offered");
	CHECK_EQ(o.o.sack_ok, 1, "SACK offered");
	CHECK_EQ(o.o.ts, 1, "timestamps");
	CHECK_EQ(o.o.tsecr, 1000, "echoes the client's TSval");
	tsv = o.o.tsval;
	CHECK_EQ(w->st.synp_cookies, 1, "cookies");

	/* A flood from 64 ports: 64 cookies, no state. */
	for (uint16_t p = 0; p < 64; p++) {
		opt6_frame(&in, true, (uint16_t)(50000 + p), TCP6_PORT,
			   PB_SYN, 77u * p, 0, 65535, syn_opt, sizeof(syn_opt),
			   0);
		ph_rx(e, 0, &in);
		ph_expect_one(e, 0, 0, &got, "SYN-ACK to the flood");
	}
	CHECK_EQ(w->st.synp_cookies, 65, "a cookie each");
	CHECK_EQ(w->st.flows_created, 0, "no flow for a SYN");
	CHECK_EQ(ph_flows_in_table(w), 0, "no entry for a SYN");
	CHECK_EQ(e->w->hold_nfree, e->w->hold_cap, "nothing held");

	/* The cookie of this connection from another port: forged. */
	opt6_frame(&in, true, CPORT6 + 1, TCP6_PORT, PB_ACK, iss + 1,
		   cookie + 1, 502, NULL, 0, 0);
	ph_rx(e, 0, &in);
	/* As IPv4's: a segment of no flow, answered within rst-rate. */
	ph_expect_one(e, 0, 0, &got, "a RST for a forged cookie");
	CHECK_EQ(got.b[ETH + 40 + 13] & PB_RST, PB_RST, "a RST");
	CHECK_EQ(w->st.rst_no_flow, 1, "the RST counted");
	CHECK_EQ(w->st.synp_acks_bad, 1, "forged");
	CHECK_EQ(w->st.drop[LB_DROP_NO_FLOW], 1, "dropped as no flow");
	CHECK_EQ(ph_flows_in_table(w), 0, "no entry for it");

	/* The client's ACK, window 502 in its scale. */
	ph_ts_opt(opt, 1001, tsv);
	opt6_frame(&in, true, CPORT6, TCP6_PORT, PB_ACK, iss + 1, cookie + 1,
		   502, opt, 12, 0);
	ph_rx(e, 0, &in);
	ph_expect_one(e, 1, 0, &got, "SYN to the backend");
	seg6_read(&got, &o, "SYN to the backend");
	check_addr(o.src, A_SNAT, "from the SNAT address");
	check_addr(o.dst, A_PEER1, "to the backend");
	CHECK_EQ(o.dport, BPORT6, "backend port");
	CHECK_EQ(o.flags, PB_SYN, "a SYN");
	CHECK_EQ(o.seq, iss, "the client's ISN");
	CHECK_EQ(o.win, 502u << 6, "the client's window, unscaled");
	CHECK_EQ(o.o.mss, 1420, "the client's MSS class (1430 offered)");
	CHECK_EQ(o.o.wscale, 6, "the client's scale");
	CHECK_EQ(o.o.sack_ok, 1, "the client's SACK");
	CHECK_EQ(o.o.tsval, 1001, "the client's TSval");
	sport = o.sport;
	CHECK_EQ(w->st.synp_acks, 1, "cookie checked");
	CHECK_EQ(w->st.flows_created, 1, "the flow now");

	/* The client's request comes before the backend answers: it
	 * waits; sent again, the backend's SYN goes again. */
	ph_ts_opt(opt, 1001, tsv);
	opt6_frame(&in, true, CPORT6, TCP6_PORT, PB_ACK | PB_PSH, iss + 1,
		   cookie + 1, 502, opt, 12, 40);
	ph_rx(e, 0, &in);
	ph_expect_quiet(e, "the early request waits");
	CHECK_EQ(w->st.synp_held, 1, "held");
	ph_rx(e, 0, &in);
	ph_expect_one(e, 1, 0, &got, "the SYN again");
	seg6_read(&got, &o, "the SYN again");
	CHECK_EQ(o.flags, PB_SYN, "a SYN");
	CHECK_EQ(o.seq, iss, "the same SYN");
	CHECK_EQ(o.sport, sport, "from the same SNAT port");
	CHECK_EQ(w->st.synp_syn_again, 1, "synp_syn_again");

	/* The backend answers: its SYN-ACK completes its side only. */
	memcpy(opt, (const uint8_t[]){2, 4, 0x05, 0xa0, 4, 2, 8, 10}, 8);
	pb_put32(opt + 8, 5000);
	pb_put32(opt + 12, 1001);
	memcpy(opt + 16, (const uint8_t[]){1, 3, 3, 9}, 4);
	opt6_frame(&in, false, BPORT6, sport, PB_SYN | PB_ACK, irs, iss + 1,
		   65535, opt, 20, 0);
	ph_rx(e, 1, &in);
	assert_int_equal(ph_take(e, 1, 0, two, NELEM(two)), 2);
	ph_expect_quiet(e, "the client hears nothing of it");
	seg6_read(&two[0], &o, "ACK to the backend");
	CHECK_EQ(o.flags, PB_ACK, "an ACK");
	CHECK_EQ(o.seq, iss + 1, "after the SYN");
	CHECK_EQ(o.ack, irs + 1, "acknowledges the backend's SYN");
	CHECK_EQ(o.o.tsval, 1001, "the client's TSval");
	CHECK_EQ(o.o.tsecr, 5000, "echoes the backend's");
	CHECK_EQ(o.win, 502, "both read the client's scale");
	check_addr(o.src, A_SNAT, "from the SNAT address");
	seg6_read(&two[1], &o, "the early request");
	CHECK_EQ(o.seq, iss + 1, "the request");
	CHECK_EQ(o.ack, irs + 1, "in the backend's numbers");
	CHECK_EQ(o.o.tsecr, 5000, "echoing the backend");
	CHECK_EQ(o.plen, 40, "whole");
	CHECK_EQ(w->st.synp_handshakes, 1, "handshakes");

	/* Backend data, window 1000 in scale 9: the client reads scale 7. */
	ph_ts_opt(opt, 5001, 1001);
	opt6_frame(&in, false, BPORT6, sport, PB_ACK | PB_PSH, irs + 1,
		   iss + 41, 1000, opt, 12, 100);
	ph_rx(e, 1, &in);
	ph_expect_one(e, 0, 0, &got, "response to the client");
	seg6_read(&got, &o, "response");
	check_addr(o.src, A_VIP, "from the VIP");
	check_addr(o.dst, A_C, "to the client");
	CHECK_EQ(o.seq, cookie + 1, "in the client's numbers");
	CHECK_EQ(o.ack, iss + 41, "the client's own");
	CHECK_EQ(o.o.tsval, tsv + 1, "the TSval the client knows, moved on");
	CHECK_EQ(o.o.tsecr, 1001, "the client's echo");
	CHECK_EQ(o.win, 4000, "window in the scale offered");
	CHECK_EQ(o.plen, 100, "payload");

	/* A router on the client's side finds the response too big: the
	 * backend hears of its own segment, in its own numbers. */
	{
		uint8_t quote[72], rtr[16], vip[16];
		struct pb_dg6 err;
		const uint8_t *ip = got.b + ETH, *icmp, *q;
		uint32_t n;

		memcpy(quote, got.b + ETH, sizeof(quote));
		pb_ip6(rtr, 0x2001, 0xdb8, 1, 0xfe);
		addr(vip, A_VIP);
		too_big6(&err, rtr, vip, 1280, quote, sizeof(quote));
		pb_ipv6_frame(&in, mac_port[0], mac_c, &err);
		ph_rx(e, 0, &in);
		ph_expect_one(e, 1, 0, &got, "packet too big to the backend");
		icmp = ip + 40;
		q = icmp + 8;
		n = pb_get16(ip + 4);
		CHECK_EQ((uint16_t)~pb_fold(pb_sum(
				 icmp, n, pb_sum(ip + 8, 32, 58u + n))),
			 0, "ICMPv6 checksum");
		CHECK_EQ(icmp[0], 2, "packet too big");
		check_addr(q + 8, A_PEER1, "quote from the backend");
		check_addr(q + 24, A_SNAT, "to the SNAT address");
		CHECK_EQ(pb_get32(q + 40 + 4), irs + 1,
			 "quoted in the backend's numbers");
		CHECK_EQ(pb_get32(q + 40 + 8), iss + 41, "and the client's ack");
	}

	/* The client acknowledges it and sends: in the backend's numbers. */
	ph_ts_opt(opt, 1002, tsv + 1);
	opt6_frame(&in, true, CPORT6, TCP6_PORT, PB_ACK | PB_PSH, iss + 41,
		   cookie + 101, 502, opt, 12, 50);
	ph_rx(e, 0, &in);
	ph_expect_one(e, 1, 0, &got, "request to the backend");
	seg6_read(&got, &o, "request");
	CHECK_EQ(o.seq, iss + 41, "the client's seq");
	CHECK_EQ(o.ack, irs + 101, "the backend's numbers");
	CHECK_EQ(o.o.tsecr, 5001, "the backend's TSval echoed");
	CHECK_EQ(o.plen, 50, "whole");
	CHECK_EQ(ph_flows_in_table(w), 1, "one entry in all");

	/* The backend closes: its FIN, judged by the sequence checks in
	 * the client's numbers (a blind FIN would be dropped), reaches the
	 * client translated. */
	ph_ts_opt(opt, 5002, 1002);
	opt6_frame(&in, false, BPORT6, sport, PB_ACK | PB_FIN, irs + 101,
		   iss + 91, 1000, opt, 12, 0);
	ph_rx(e, 1, &in);
	ph_expect_one(e, 0, 0, &got, "the backend's FIN to the client");
	seg6_read(&got, &o, "FIN");
	CHECK_EQ(o.flags, PB_ACK | PB_FIN, "a FIN");
	CHECK_EQ(o.seq, cookie + 101, "in the client's numbers");
	CHECK_EQ(w->st.drop[LB_DROP_TCP_WINDOW], 0, "nothing out of window");
}

/*
 * synproxy on, a client without timestamps whose ACK carries data, two
 * backends: the first refuses (RST) and the next trial goes on from the
 * same SYN, whose SYN-ACK becomes the client's ACK followed by the data.
 * Then every backend refuses: the client, established, gets a RST at the
 * sequence number it expects, and nothing stays held.
 */
static void
test_synproxy6_refused(void **state)
{
	struct ph_env *e = env66_synp(state, LB_CONF_SYNP_ON, 20000, 2);
	const struct lb_worker *w = e->w;
	const uint32_t iss = 1000, irs = 9000;
	const uint8_t mss[4] = {2, 4, 0x05, 0xa0};
	struct pb_frame in, got[4];
	struct seg6_out o;
	uint32_t cookie;
	uint16_t sport, bport;

	cookie = synp6_cookie(e, CPORT6, iss, mss, 4, &o);
	CHECK_EQ(o.o.ts, 0, "no timestamps for a client without");
	CHECK_EQ(o.o.wscale, -1, "no scale without timestamps");
	opt6_frame(&in, true, CPORT6, TCP6_PORT, PB_ACK | PB_PSH, iss + 1,
		   cookie + 1, 65535, NULL, 0, 20);
	ph_rx(e, 0, &in);
	ph_expect_one(e, 1, 0, &got[0], "SYN to a backend");
	seg6_read(&got[0], &o, "SYN to a backend");
	CHECK_EQ(o.o.mss, 1440, "MSS class");
	sport = o.sport;
	bport = o.dport;
	opt6_frame(&in, false, bport, sport, PB_RST | PB_ACK, 0, iss + 1,
		   0, NULL, 0, 0);
	ph_rx(e, 1, &in);
	ph_expect_one(e, 1, 0, &got[0], "SYN to the other backend");
	seg6_read(&got[0], &o, "SYN to the other backend");
	CHECK_EQ(o.seq, iss, "the same SYN");
	assert_int_not_equal(o.dport, bport);
	sport = o.sport;
	bport = o.dport;
	opt6_frame(&in, false, bport, sport, PB_SYN | PB_ACK, irs, iss + 1,
		   65535, mss, 4, 0);
	ph_rx(e, 1, &in);
	assert_int_equal(ph_take(e, 1, 0, got, NELEM(got)), 2);
	ph_expect_quiet(e, "the client hears nothing of it");
	seg6_read(&got[0], &o, "the client's ACK");
	CHECK_EQ(o.flags, PB_ACK, "first the ACK");
	CHECK_EQ(o.ack, irs + 1, "in the backend's numbers");
	CHECK_EQ(o.plen, 0, "alone");
	seg6_read(&got[1], &o, "the data held");
	CHECK_EQ(o.seq, iss + 1, "then the data held");
	CHECK_EQ(o.ack, irs + 1, "in the backend's numbers too");
	CHECK_EQ(o.plen, 20, "whole");
	CHECK_EQ(w->st.synp_handshakes, 1, "handshake");

	/* Another client; every trial refused. */
	cookie = synp6_cookie(e, CPORT6 + 1, iss, mss, 4, &o);
	opt6_frame(&in, true, CPORT6 + 1, TCP6_PORT, PB_ACK, iss + 1,
		   cookie + 1, 65535, NULL, 0, 0);
	ph_rx(e, 0, &in);
	for (int t = 0; t < 8 && ph_take(e, 1, 0, got, 1) == 1; t++) {
		seg6_read(&got[0], &o, "SYN to a backend");
		CHECK_EQ(o.flags, PB_SYN, "a SYN");
		opt6_frame(&in, false, o.dport, o.sport, PB_RST | PB_ACK, 0,
			   iss + 1, 0, NULL, 0, 0);
		ph_rx(e, 1, &in);
	}
	ph_expect_one(e, 0, 0, &got[0], "RST to the client");
	seg6_read(&got[0], &o, "RST");
	CHECK_EQ(o.flags, PB_RST, "a RST");
	CHECK_EQ(o.seq, cookie + 1, "where the client expects it");
	check_addr(o.src, A_VIP, "from the VIP");
	check_addr(o.dst, A_C, "to the client");
	CHECK_EQ(o.dport, CPORT6 + 1, "its port");
	CHECK_EQ(e->w->hold_nfree, e->w->hold_cap, "nothing left held");
}

/*
 * synproxy auto on an IPv6 service: SYNs go to the backend while they
 * are few; the one that reaches synproxy-syn-rate turns cookies on,
 * counted, and is answered with one.
 */
static void
test_synproxy6_auto(void **state)
{
	struct ph_env *e = env66_synp(state, LB_CONF_SYNP_AUTO, 3, 1);
	const uint8_t mss[4] = {2, 4, 0x05, 0xa0};
	struct pb_frame in, got;
	struct seg6_out o;

	for (uint16_t p = 0; p < 2; p++) {
		opt6_frame(&in, true, (uint16_t)(CPORT6 + p), TCP6_PORT,
			   PB_SYN, 1000, 0, 65535, mss, 4, 0);
		ph_rx(e, 0, &in);
		ph_expect_one(e, 1, 0, &got, "SYN to the backend");
	}
	CHECK_EQ(e->w->st.synp_auto_on, 0, "off while few");
	CHECK_EQ(e->w->st.flows_created, 2, "plain flows");
	(void)synp6_cookie(e, CPORT6 + 2, 1000, mss, 4, &o);
	CHECK_EQ(o.flags, PB_SYN | PB_ACK, "a cookie at the threshold");
	CHECK_EQ(e->w->st.synp_auto_on, 1, "turned on");
	CHECK_EQ(e->w->st.synp_cookies, 1, "one cookie");
	CHECK_EQ(e->w->st.flows_created, 2, "no flow for it");
}

/* ---- HTTP following over fnat66 (worker_l7.c) ---- */

static struct lb_hdr_db *hdb6;

/*
 * env66() with the TCP service following HTTP (its feedback as IPv4's),
 * and, with @p ac, its requests admitted one by one by those settings
 * (refused with 429, Retry-After 7), or with @p gov by the governor
 * (503).
 */
static struct ph_env *
env66_http(void **state, const struct lb_admit_conf *ac, bool gov)
{
	struct ph_env *e = env66_build(state, NULL, ac);
	struct lb_conf_svc_opts *o = &e->dp.conf->svc[e->dp.conf->nb_svc - 2].opts;

	/* The governor answers 503, its requests of rank 3. */
	o->gov[LB_CONF_GOV_ON] = gov;
	o->gov[LB_CONF_GOV_PRIO] = 3;

	o->http = true;
	/* A scheduler that keeps count of the backend's errors. */
	snprintf(o->sched, sizeof(o->sched), "adaptive");
	o->gov[LB_CONF_GOV_STATUS] = gov ? 503 : 429;
	o->gov[LB_CONF_GOV_RETRY] = 7;
	e->dp.hdb = hdb6;
	e->dp.l7_flows = 16;
	e->dp.gov_m = e->gov_m;
	env66_go(e, 1);
	assert_non_null(e->w->l7);
	return e;
}

/* One side of a followed connection: what it sends next. */
struct http6 {
	struct ph_env *e;
	uint8_t vip[16], snat[16], c[16], be[16];
	uint16_t sport;
	uint32_t cnxt, bnxt;
};

/* The handshake through the VIP, the client's ACK carrying nothing. */
static void
http6_open(struct ph_env *e, struct http6 *h)
{
	struct pb_frame f, got;
	struct pb_dg6 in;

	memset(h, 0, sizeof(*h));
	h->e = e;
	client_syn(&in, &f, h->vip, h->snat, h->c);
	addr(h->be, A_PEER1);
	ph_rx(e, 0, &f);
	ph_expect_one(e, 1, 0, &got, "SYN to the backend");
	h->sport = pb_get16(got.b + ETH + 40);
	backend_synack(e, BPORT6, h->snat, h->sport, h->vip, h->c);
	h->cnxt = 1001;
	h->bnxt = 5001;
	seg6(&in, A_C, CPORT6, h->vip, TCP6_PORT, PB_PROTO_TCP, PB_ACK,
	     h->cnxt, h->bnxt, 64);
	in.l4.plen = 0;
	pb_ipv6_frame(&f, mac_port[0], mac_c, &in);
	ph_rx(e, 0, &f);
	ph_expect_one(e, 1, 0, &got, "ACK to the backend");
}

/* @p text from the client (@p to_be) or the backend, with its FIN when
 * @p fin; @p in gets the segment sent. */
static void
http6_send(struct http6 *h, bool to_be, const char *text, uint8_t fin,
	   struct pb_dg6 *in, struct pb_frame *f)
{
	uint16_t len = (uint16_t)strlen(text);

	if (to_be)
		seg6(in, A_C, CPORT6, h->vip, TCP6_PORT, PB_PROTO_TCP,
		     PB_ACK | PB_PSH | fin, h->cnxt, h->bnxt, 64);
	else
		seg6(in, A_PEER1, BPORT6, h->snat, h->sport, PB_PROTO_TCP,
		     PB_ACK | PB_PSH | fin, h->bnxt, h->cnxt, 64);
	in->l4.data = (const uint8_t *)text;
	in->l4.plen = len;
	if (to_be) {
		pb_ipv6_frame(f, mac_port[0], mac_c, in);
		h->cnxt += len;
	} else {
		pb_ipv6_frame(f, mac_port[1], mac_peer1, in);
		h->bnxt += len;
	}
	ph_rx(h->e, to_be ? 0 : 1, f);
}

/* @p text sent and forwarded, byte for byte, to the other side. */
static void
http6_pass(struct http6 *h, bool to_be, const char *text, const char *what)
{
	struct pb_frame f, want;
	struct pb_dg6 in, out;

	http6_send(h, to_be, text, 0, &in, &f);
	if (to_be) {
		seg6_out(&out, &in, h->snat, h->sport, h->be, BPORT6);
		pb_ipv6_frame(&want, mac_peer1, mac_port[1], &out);
	} else {
		seg6_out(&out, &in, h->vip, TCP6_PORT, h->c, CPORT6);
		pb_ipv6_frame(&want, mac_c, mac_port[0], &out);
	}
	ph_expect_frame(h->e, to_be ? 1 : 0, 0, &want, what);
}

/* The L7 records in the worker's ring (at most @p max). */
static unsigned int
fb6_take(struct ph_env *e, struct lb_fb *r, unsigned int max)
{
	struct lb_fb tmp[64];
	unsigned int n = 0, k;

	while ((k = rte_ring_sc_dequeue_burst_elem(
			e->w->fb, tmp, sizeof(tmp[0]), NELEM(tmp), NULL)) > 0)
		for (unsigned int i = 0; i < k; i++)
			if ((tmp[i].kind == LB_FB_HTTP ||
			     tmp[i].kind == LB_FB_SPL) &&
			    n < max)
				r[n++] = tmp[i];
	return n;
}

/* Each test of HTTP following runs over fnat66 and fnat64 (below, by
 * the fnat64 helpers). */
static void http_follow(void **state, bool be4);
static void http_refuse_rate(void **state, bool be4);
static void http_governor(void **state, bool be4);

/*
 * An HTTP exchange followed over fnat66: request and response go
 * through unchanged but for the addresses, the response's status and
 * the backend's X-SPL reach the feedback ring; a 503 counts as the
 * backend's error (http_follow()).
 */
static void
test_fnat66_http_follow(void **state)
{
	http_follow(state, false);
}

/*
 * Request @p text, sent by the client of @p h, is refused with
 * @p status in the server's name: an IPv6 segment from the VIP to the
 * client, answer and FIN, checksums as pktbuild.c computes them, and
 * the backend reset at the first octet of the request it never got
 * (by @p rst4 when it is IPv4, else by an IPv6 RST). Then the client's ACK of the answer and its
 * FIN are taken in the server's place and acknowledged, nothing to the
 * backend.
 */
static void
expect_refused(struct http6 *h, const char *text, uint16_t status,
	       const struct pb_frame *rst4)
{
	static struct pb_frame got[NB_PORTS][4];
	unsigned int n[NB_PORTS];
	struct pb_frame f, want, rst;
	struct pb_dg6 in, out;
	char ans[LB_L7_REJECT_HTTP_MAX];
	uint32_t req = h->cnxt, fin;
	int len;

	http6_send(h, true, text, 0, &in, &f);
	seg6(&out, A_PEER1, 0, h->be, BPORT6, PB_PROTO_TCP, PB_RST, req, 0,
	     64);
	memcpy(out.src, h->snat, 16);
	out.l4.sport = h->sport;
	out.l4.win = 0;
	out.l4.plen = 0;
	pb_ipv6_frame(&rst, mac_peer1, mac_port[1], &out);
	if (rst4 != NULL)
		rst = *rst4;

	len = lb_l7_reject_http(ans, sizeof(ans), status, 7);
	assert_true(len > 0);
	seg6(&out, A_C, TCP6_PORT, h->c, CPORT6, PB_PROTO_TCP,
	     PB_ACK | PB_PSH | PB_FIN, h->bnxt, h->cnxt, 64);
	memcpy(out.src, h->vip, 16);
	out.l4.data = (const uint8_t *)ans;
	out.l4.plen = (uint16_t)len;
	pb_ipv6_frame(&want, mac_c, mac_port[0], &out);
	/* Both leave in the poll that took the request. */
	take_all(h->e, got, n);
	CHECK_EQ(n[1], 1, "one frame to the backend");
	ph_expect_same(&got[1][0], &rst, "RST to the backend");
	CHECK_EQ(n[0], 1, "one frame to the client");
	ph_expect_same(&got[0][0], &want, "the answer to the client");

	fin = h->bnxt + (uint32_t)len + 1;
	seg6(&in, A_C, CPORT6, h->vip, TCP6_PORT, PB_PROTO_TCP,
	     PB_ACK | PB_FIN, h->cnxt, fin, 64);
	in.l4.plen = 0;
	pb_ipv6_frame(&f, mac_port[0], mac_c, &in);
	ph_rx(h->e, 0, &f);
	seg6(&out, A_C, TCP6_PORT, h->c, CPORT6, PB_PROTO_TCP, PB_ACK, fin,
	     h->cnxt + 1, 64);
	memcpy(out.src, h->vip, 16);
	out.l4.plen = 0;
	pb_ipv6_frame(&want, mac_c, mac_port[0], &out);
	ph_expect_frame(h->e, 0, 0, &want, "ACK of the client's FIN");
	ph_expect_quiet(h->e, "nothing more");
}

/* A request over the service's requests/s (admit-rate, keyed by the
 * IPv6 client) gets the 429 (http_refuse_rate()). */
static void
test_fnat66_http_refuse(void **state)
{
	http_refuse_rate(state, false);
}

/* The governor's 503 and the held halves of a request over fnat66
 * (http_governor()). */
static void
test_fnat66_http_governor(void **state)
{
	http_governor(state, false);
}

/* Client SYN @p in sent again from 2001:db8:@p net::@p host port
 * @p sport: how many frames reached the backend (none may go back to
 * the client). */
static unsigned int
syn_from(struct ph_env *e, struct pb_dg6 *in, uint16_t net, uint16_t host,
	 uint16_t sport)
{
	struct pb_frame f;

	pb_ip6(in->src, 0x2001, 0xdb8, net, host);
	in->l4.sport = sport;
	pb_ipv6_frame(&f, mac_port[0], mac_c, in);
	ph_rx(e, 0, &f);
	CHECK_EQ(ph_take(e, 0, 0, NULL, 0), 0, "frames to the client");
	return ph_take(e, 1, 0, NULL, 0);
}

/*
 * IPv6 sources have the budget of new flows IPv4 sources have, each /64
 * one source: a SYN flood from one /64 (new ports, new interface ids)
 * gets its burst and then nothing, silently, no flow and no SNAT port
 * taken; a source in another /64 still gets its flow.
 */
static void
test_fnat66_src_budget(void **state)
{
	const struct lb_src_budget_conf sb = {.rate = 1, .burst = 3,
					      .prefix = 32, .sources = 64};
	struct ph_env *e = env66_opt(state, 1, &sb, NULL);
	uint8_t vip[16], snat[16], c[16];
	unsigned int fwd = 0;
	struct pb_frame f;
	struct pb_dg6 in;

	client_syn(&in, &f, vip, snat, c);
	/* Ports and interface ids change; the /64 does not. */
	for (uint16_t i = 0; i < 8; i++)
		fwd += syn_from(e, &in, 1, (uint16_t)(7 + (i & 1) * 0x100),
				(uint16_t)(CPORT6 + i));
	CHECK_EQ(fwd, 3, "SYNs of one /64 forwarded: its burst");
	CHECK_EQ(e->w->st.src_budget.dropped, 5, "dropped over budget");
	CHECK_EQ(e->w->st.flows_created, 3, "flows created");
	CHECK_EQ(lb_snat_addr_used(e->w->snat6, lb_flow6_fold(e->w->ft, snat)),
		 3, "SNAT ports held");
	CHECK_EQ(syn_from(e, &in, 5, 7, CPORT6), 1,
		 "another /64's SYN forwarded");
	CHECK_EQ(e->w->st.src_budget.dropped, 5, "nothing more dropped");
}

/*
 * The reject records in the worker's ring: exactly one, for the IPv6 key
 * @p key of @p len bits of service @p svc, class @p cls, entering the
 * negative cache.
 */
static void
expect_reject6(struct ph_env *e, const uint8_t key[16], uint8_t len, int svc,
	       enum lb_admit_key cls)
{
	struct lb_fb r, got;
	unsigned int n = 0;

	while (rte_ring_sc_dequeue_elem(e->w->fb, &r, sizeof(r)) == 0)
		if (r.kind == LB_FB_REJECT && n++ == 0)
			got = r;
	CHECK_EQ(n, 1, "reject records: one per key and interval");
	CHECK_EQ(got.flags & LB_FB_F_REJ6, LB_FB_F_REJ6, "an IPv6 key");
	CHECK_EQ(got.flags & 0x7f, LB_ADMIT_REJ_EMPTY, "reason");
	CHECK_EQ(got.flags >> 8, cls, "key class");
	CHECK_EQ(got.svc, svc, "service slot");
	CHECK_EQ(got.be, len, "key length");
	CHECK_EQ(memcmp(got.key6, key, 16), 0, "the admitted key");
}

/*
 * Admission of new IPv6 flows, one per second per /64 (admit-key prefix,
 * admit-prefix6 left at 64): the first SYN of a /64 is forwarded, the
 * next ones from other addresses of that /64 are dropped without a flow
 * or a SNAT port (empty bucket, then the negative cache), counted for
 * the key class and the service; another /64 has its own bucket.
 */
static void
test_fnat66_admit(void **state)
{
	struct lb_admit_conf ac;
	struct ph_env *e;
	uint8_t vip[16], snat[16], c[16];
	struct pb_frame f;
	struct pb_dg6 in;
	int s;

	lb_admit_conf_default(&ac);
	ac.rate = 1;
	ac.burst = 1;
	ac.key = LB_ADMIT_KEY_PREFIX;
	e = env66_opt(state, 1, NULL, &ac);
	s = (int)e->dp.conf->nb_svc - 2;
	client_syn(&in, &f, vip, snat, c);
	for (uint16_t i = 0; i < 3; i++)
		CHECK_EQ(syn_from(e, &in, 1, (uint16_t)(7 + i * 0x100),
				  (uint16_t)(CPORT6 + i)),
			 i == 0 ? 1 : 0, "SYNs of one /64 to the backend");
	CHECK_EQ(e->w->st.admit.n[LB_ADMIT_KEY_PREFIX][LB_ADMIT_PASS], 1,
		 "admitted");
	CHECK_EQ(e->w->st.admit.n[LB_ADMIT_KEY_PREFIX][LB_ADMIT_REJ_EMPTY], 1,
		 "refused: bucket empty");
	CHECK_EQ(e->w->st.admit.n[LB_ADMIT_KEY_PREFIX][LB_ADMIT_REJ_NEG], 1,
		 "refused: negative cache");
	CHECK_EQ(e->w->st.admit_svc[s].n[LB_ADMIT_REJ_EMPTY], 1,
		 "the service's refusals");
	CHECK_EQ(e->w->st.flows_created, 1, "flows");
	CHECK_EQ(lb_snat_addr_used(e->w->snat6, lb_flow6_fold(e->w->ft, snat)),
		 1, "SNAT ports held");
	/* lb-control hears of the /64 once, not of the address. */
	{
		uint8_t key[16];

		pb_ip6(key, 0x2001, 0xdb8, 1, 0);
		expect_reject6(e, key, 64, s, LB_ADMIT_KEY_PREFIX);
	}
	/* Another /64, its own bucket. */
	CHECK_EQ(syn_from(e, &in, 5, 7, CPORT6), 1,
		 "another /64's SYN forwarded");
	CHECK_EQ(e->w->st.flows_created, 2, "flows");
	CHECK_EQ(e->w->st.admit.n[LB_ADMIT_KEY_PREFIX][LB_ADMIT_PASS], 2,
		 "admitted");
	ph_check_no_drops(e->w, "IPv6 admission");
}

/* The TCP service of @p d on Maglev over three routed IPv6 backends on
 * one port, 2001:db8:99::1..3, behind the host on port 1; backend
 * @p gone, if below 3, removed. */
static void
maglev3(struct lb_dpconf *d, int gone)
{
	struct lb_dpconf_svc *v = &d->svc[d->nb_svc - 2];

	pb_ip6(d->route6[0].net, 0x2001, 0xdb8, 0x99, 0);
	addr(d->route6[0].gw, A_PEER1);
	d->route6[0].len = 64;
	d->route6[0].port = 1;
	d->nb_route6 = 1;
	snprintf(v->opts.sched, sizeof(v->opts.sched), "maglev");
	for (int b = 0; b < 3; b++) {
		memset(&v->be[b], 0, sizeof(v->be[b]));
		v->be[b].af = LB_CONF_AF_INET6;
		pb_ip6(v->be[b].ip6, 0x2001, 0xdb8, 0x99, (uint16_t)(b + 1));
		v->be[b].port = htons(BPORT6);
		v->be[b].state = b == gone ? LB_BE_REMOVED : LB_BE_ACTIVE;
		v->be[b].weight = 1;
	}
	v->nb_be = 3;
}

/* The backend (1..3) the SYN of client port @p cport went to. */
static int
maglev_pick(struct ph_env *e, uint16_t cport)
{
	uint8_t vip[16], snat[16], c[16];
	struct pb_frame f, got;
	struct pb_dg6 in;

	client_syn(&in, &f, vip, snat, c);
	in.l4.sport = cport;
	pb_ipv6_frame(&f, mac_port[0], mac_c, &in);
	ph_rx(e, 0, &f);
	assert_int_equal(ph_take(e, 1, 0, &got, 1), 1);
	return got.b[ETH + 24 + 15];
}

/*
 * Maglev over IPv6 backends: each backend's place in the lookup table
 * comes from its whole address (all of them have IPv4 address 0), so
 * removing one moves its own clients and hardly any other's.
 */
static void
test_fnat66_maglev(void **state)
{
	struct ph_env *e = env66(state);
	struct lb_dpconf *d = ph_table_next(e);
	enum { N = 150 }; /* within the table's FLOWS */
	int before[N], moved = 0, kept = 0, by[4] = {0};

	maglev3(d, 3);
	ph_table_publish(e, d);
	for (int i = 0; i < 50; i++)
		ph_poll_all(e);
	for (int i = 0; i < N; i++) {
		before[i] = maglev_pick(e, (uint16_t)(41000 + i));
		assert_true(before[i] >= 1 && before[i] <= 3);
		by[before[i]]++;
	}
	for (int b = 1; b <= 3; b++)
		CHECK_EQ(by[b] > N / 6, 1, "each backend has a share");
	/* The flows go, their tuples come again after backend 1 left. An
	 * unanswered SYN's flow expiring is a failed trial, sent to the
	 * next backend until each had one (test_fnat66_retry). */
	for (int r = 0; r < 4; r++) {
		lb_flow_expire(e->w->ft, ph_now_ns(e) + 86400000000000ull,
			       N + 16, e->w->ft->reaper,
			       e->w->ft->reaper_ctx);
		ph_poll_all(e);
		ph_take(e, 1, 0, NULL, 0);
	}
	CHECK_EQ(e->w->hold_nfree, e->w->hold_cap, "SYN copies released");
	d = ph_table_next(e);
	maglev3(d, 0);
	ph_table_publish(e, d);
	for (int i = 0; i < 50; i++)
		ph_poll_all(e);
	for (int i = 0; i < N; i++) {
		int now = maglev_pick(e, (uint16_t)(41000 + i));

		assert_true(now == 2 || now == 3);
		if (before[i] != 1)
			now == before[i] ? kept++ : moved++;
	}
	/* Maglev's disruption is small, not zero: a few per cent. */
	CHECK_EQ(moved * 10 < kept, 1, "the other backends kept their clients");
}

/* The TCP SYN on port 1 to the backends: its backend port (host order),
 * and the SNAT port in @p sport. */
static uint16_t
syn_out(struct ph_env *e, uint16_t *sport, const char *what)
{
	struct pb_frame got;

	ph_expect_one(e, 1, 0, &got, what);
	CHECK_EQ(got.b[ETH + 40 + 13], PB_SYN, "a SYN");
	*sport = pb_get16(got.b + ETH + 40);
	return pb_get16(got.b + ETH + 40 + 2);
}

/* The RST the VIP sends client port @p cport for its SYN (sequence
 * 1000), byte for byte. */
static void
expect_client_rst(struct ph_env *e, const uint8_t c[16], uint16_t cport,
		  const char *what)
{
	struct pb_frame want;
	struct pb_dg6 out;

	seg6(&out, A_VIP, TCP6_PORT, c, cport, PB_PROTO_TCP, PB_RST | PB_ACK,
	     0, 1001, 64);
	out.l4.win = 0;
	out.l4.plen = 0;
	pb_ipv6_frame(&want, mac_c, mac_port[0], &out);
	ph_expect_frame(e, 0, 0, &want, what);
}

/* Table @p d in force on every worker. */
static void
publish(struct ph_env *e, struct lb_dpconf *d)
{
	ph_table_publish(e, d);
	for (int i = 0; i < 50; i++)
		ph_poll_all(e);
}

/* The backend on @p bport refuses the SYN from SNAT port @p sport. */
static void
backend_refuses(struct ph_env *e, uint16_t bport, const uint8_t snat[16],
		uint16_t sport)
{
	struct pb_frame f;
	struct pb_dg6 in;

	seg6(&in, A_PEER1, bport, snat, sport, PB_PROTO_TCP, PB_RST | PB_ACK,
	     0, 1001, 64);
	pb_ipv6_frame(&f, mac_port[1], mac_peer1, &in);
	ph_rx(e, 1, &f);
}

/* client_syn() from client port @p cport, arriving on port 0. */
static void
client_syn_rx(struct ph_env *e, struct pb_dg6 *in, struct pb_frame *f,
	      uint8_t vip[16], uint8_t snat[16], uint8_t c[16], uint16_t cport)
{
	client_syn(in, f, vip, snat, c);
	in->l4.sport = cport;
	pb_ipv6_frame(f, mac_port[0], mac_c, in);
	ph_rx(e, 0, f);
}

/* Worker 0's flows @p days days on: the SYN timeout of every trial under
 * way, and the retries it starts. */
static void
syn_timeout(struct ph_env *e, unsigned int days)
{
	lb_flow_expire(e->w->ft, ph_now_ns(e) + days * 86400000000000ull, 16,
		       e->w->ft->reaper, e->w->ft->reaper_ctx);
	ph_poll_all(e);
}

/* The SYN timeout fails the last trial of client port @p cport: no
 * deferred queue, so the client hears of it at once, and no retry
 * beyond the @p retries counted. */
static void
last_trial_fails(struct ph_env *e, const uint8_t c[16], uint16_t cport,
		 uint64_t retries)
{
	syn_timeout(e, 2);
	expect_client_rst(e, c, cport, "every backend had its trial");
	ph_expect_quiet(e, "nothing else");
	CHECK_EQ(e->w->st.syn_retries, retries, "no more retries");
	CHECK_EQ(e->w->hold_nfree, e->w->hold_cap, "SYN copy released");
}

/*
 * Retries over IPv6 (adaptive-request-dispatch-paper, Algorithm 2): the
 * TCP service on rr over two backends (one host, two ports). A backend
 * that refuses the SYN with a RST has the client's SYN, from its copy,
 * sent to the other one, whose SYN-ACK reaches the client: one flow, one
 * retry, one error on the refusing backend, the copy released. A SYN
 * nobody answers is retried when its flow times out, and once each
 * backend had its trial the client gets a RST (no deferred queue).
 */
static void
test_fnat66_retry(void **state)
{
	struct ph_env *e = env66(state);
	struct lb_dpconf *d = ph_table_next(e);
	struct lb_dpconf_svc *v = &d->svc[d->nb_svc - 2];
	uint8_t vip[16], snat[16], c[16];
	uint16_t p1, p2, sp1, sp2, q1, q2;
	int s = (int)d->nb_svc - 2;
	struct pb_frame f;
	struct pb_dg6 in;

	v->be[1] = v->be[0];
	v->be[1].port = htons(BPORT6 + 1);
	v->nb_be = 2;
	publish(e, d);

	client_syn(&in, &f, vip, snat, c);
	ph_rx(e, 0, &f);
	p1 = syn_out(e, &sp1, "first trial");
	backend_refuses(e, p1, snat, sp1);
	p2 = syn_out(e, &sp2, "second trial");
	CHECK_EQ(p1 != p2 && (p1 == BPORT6 || p2 == BPORT6), 1,
		 "the other backend");
	CHECK_EQ(ph_take(e, 0, 0, NULL, 0), 0, "nothing to the client yet");
	CHECK_EQ(e->w->st.syn_retries, 1, "retries");
	CHECK_EQ(e->w->bst[s][p1 - BPORT6].errors, 1, "failed trials");
	/* The other one accepts. */
	backend_synack(e, p2, snat, sp2, vip, c);
	CHECK_EQ(e->w->st.flows_created, 1, "flows created");
	CHECK_EQ(e->w->hold_nfree, e->w->hold_cap, "SYN copy released");
	CHECK_EQ(lb_snat_addr_used(e->w->snat6, lb_flow6_fold(e->w->ft, snat)),
		 1, "the refused trial's SNAT port freed");

	/* Silence: the SYN timeout fails each trial in turn. */
	client_syn_rx(e, &in, &f, vip, snat, c, CPORT6 + 1);
	q1 = syn_out(e, &sp1, "silent first trial");
	syn_timeout(e, 1);
	q2 = syn_out(e, &sp2, "after the SYN timeout");
	CHECK_EQ(q1 != q2, 1, "the other backend");
	CHECK_EQ(e->w->st.syn_retries, 2, "retries");
	last_trial_fails(e, c, CPORT6 + 1, 2);
	CHECK_EQ(lb_snat_addr_used(e->w->snat6, lb_flow6_fold(e->w->ft, snat)),
		 0, "no SNAT port held");
}

/* The TCP service's deferred queue: 16 long, a retry gap of 50 ms, an
 * expiry of 5 s. */
static void
deferq_on(struct ph_env *e)
{
	struct lb_dpconf *d = ph_table_next(e);
	struct lb_conf_svc_opts *o = &d->svc[d->nb_svc - 2].opts;

	o->deferq_len = 16;
	o->retry_gap_ns = 50000000ull;
	o->expiry_ns = 5000000000ull;
	publish(e, d);
}

/* The retry gap since @p t0 polled through, until a frame is sent to
 * the backends (copied to @p got) or 2 s have passed: how many were. */
static unsigned int
retry_gap_out(struct ph_env *e, uint64_t t0, struct pb_frame *got)
{
	unsigned int n = 0;

	while (n == 0 && ph_now_ns(e) - t0 < 2000000000ull) {
		ph_poll_all(e);
		n = ph_take(e, 1, 0, got, 1);
	}
	CHECK_EQ(ph_now_ns(e) - t0 >= 50000000ull, 1, "after the retry gap");
	return n;
}

/*
 * The deferred queue over IPv6: the TCP service's one backend refuses
 * the SYN, the copy waits (retry gap 50 ms) and is sent again, from a
 * new flow, once the gap is over; the backend accepts it this time and
 * the client gets its SYN-ACK.
 */
static void
test_fnat66_deferq(void **state)
{
	struct ph_env *e = env66(state);
	uint8_t vip[16], snat[16], c[16];
	struct pb_frame f, got;
	struct pb_dg6 in;
	uint16_t p, sp;
	uint64_t t0;
	unsigned int n;

	deferq_on(e);

	client_syn(&in, &f, vip, snat, c);
	ph_rx(e, 0, &f);
	p = syn_out(e, &sp, "first trial");
	t0 = ph_now_ns(e);
	backend_refuses(e, p, snat, sp);
	ph_expect_quiet(e, "the only backend refused");
	CHECK_EQ(e->w->st.deferred, 1, "SYNs queued");
	CHECK_EQ(e->w->hold_nfree, e->w->hold_cap - 1, "its copy kept");
	n = retry_gap_out(e, t0, &got);
	CHECK_EQ(n, 1, "the queued SYN sent again");
	CHECK_EQ(got.b[ETH + 40 + 13], PB_SYN, "a SYN");
	CHECK_EQ(e->w->st.flows_created, 2, "flows: the first trial's and "
		 "the queue's");
	backend_synack(e, p, snat, pb_get16(got.b + ETH + 40), vip, c);
	CHECK_EQ(e->w->hold_nfree, e->w->hold_cap, "SYN copy released");
	ph_check_no_drops(e->w, "deferred queue");
}

/*
 * admit-reject rst over IPv6: a client over its bucket (one connection,
 * admit-key client) has its next SYN answered with a RST from the VIP,
 * byte for byte, and no flow.
 */
static void
test_fnat66_admit_rst(void **state)
{
	const struct lb_admit_conf ac = {.rate = 1,
					 .burst = 1,
					 .key = LB_ADMIT_KEY_CLIENT,
					 .reject = LB_ADMIT_REJECT_RST};
	struct ph_env *e = env66_opt(state, 1, NULL, &ac);
	uint8_t vip[16], snat[16], c[16];
	struct pb_frame f;
	struct pb_dg6 in;

	client_syn(&in, &f, vip, snat, c);
	ph_rx(e, 0, &f);
	CHECK_EQ(ph_take(e, 1, 0, NULL, 0), 1, "the first SYN forwarded");
	in.l4.sport = CPORT6 + 1;
	pb_ipv6_frame(&f, mac_port[0], mac_c, &in);
	ph_rx(e, 0, &f);
	expect_client_rst(e, c, CPORT6 + 1, "the refused SYN's RST");
	CHECK_EQ(e->w->st.rst_sent, 1, "RSTs");
	CHECK_EQ(e->w->st.flows_created, 1, "flows");
	/* admit-key client: the record names the address */
	expect_reject6(e, c, 128, (int)e->dp.conf->nb_svc - 2,
		       LB_ADMIT_KEY_CLIENT);
}

/* A datagram through the UDP VIP and its answer, byte for byte. */
static void
test_fnat66_udp(void **state)
{
	struct ph_env *e = env66(state);
	struct pb_frame f, want, got;
	struct pb_dg6 in, out;
	uint8_t vip[16], snat[16], c[16], be[16];
	uint16_t sport;

	addr(vip, A_VIP_LAN);
	addr(snat, A_SNAT);
	addr(c, A_C);
	addr(be, A_PEER1);
	seg6(&in, A_C, CPORT6, vip, UDP6_PORT, PB_PROTO_UDP, 0, 7, 0, 64);
	pb_ipv6_frame(&f, mac_port[0], mac_c, &in);
	ph_rx(e, 0, &f);
	ph_expect_one(e, 1, 0, &got, "datagram to the backend");
	sport = pb_get16(got.b + ETH + 40);
	seg6_out(&out, &in, snat, sport, be, UBPORT6);
	pb_ipv6_frame(&want, mac_peer1, mac_port[1], &out);
	ph_expect_same(&got, &want, "datagram to the backend");

	seg6(&in, A_PEER1, UBPORT6, snat, sport, PB_PROTO_UDP, 0, 9, 0, 2);
	pb_ipv6_frame(&f, mac_port[1], mac_peer1, &in);
	ph_rx(e, 1, &f);
	seg6_out(&out, &in, vip, UDP6_PORT, c, CPORT6);
	pb_ipv6_frame(&want, mac_c, mac_port[0], &out);
	ph_expect_frame(e, 0, 0, &want, "answer to the client");

	/* A corrupted first datagram opens nothing. */
	seg6(&in, A_C, CPORT6 + 1, vip, UDP6_PORT, PB_PROTO_UDP, 0, 7, 0, 64);
	pb_ipv6_frame(&f, mac_port[0], mac_c, &in);
	f.b[f.len - 1] ^= 1;
	ph_rx(e, 0, &f);
	ph_expect_quiet(e, "corrupted datagram");
	CHECK_EQ(e->w->st.drop[LB_DROP_L4_CSUM], 1, "l4 checksum");
	CHECK_EQ(e->w->st.flows_created, 1, "flows created");
}

/* A packet too big from @p src to @p dst with MTU @p mtu, quoting the
 * @p qlen bytes at @p quote. */
static void
too_big6(struct pb_dg6 *err, const uint8_t src[16], const uint8_t dst[16],
	 uint32_t mtu, const uint8_t *quote, uint32_t qlen)
{
	memset(err, 0, sizeof(*err));
	memcpy(err->src, src, 16);
	memcpy(err->dst, dst, 16);
	err->hlim = 64;
	err->l4.proto = PB_PROTO_ICMPV6;
	err->l4.type = 2;
	err->l4.rest = mtu;
	err->l4.data = quote;
	err->l4.plen = (uint16_t)qlen;
}

/* A packet too big with MTU @p mtu from a router on the backend's path
 * to the SNAT address, quoting frame @p sent (what we sent the backend),
 * in @p in; in @p want the one the client must get for it, with MTU
 * @p mtu_out: from the VIP, quoting the client's packet @p c6 as it left
 * us, had it gone to the client (its addresses and ports, the hop limit
 * it left with). */
static void
too_big66_frames(struct pb_frame *in, struct pb_frame *want,
		 const struct pb_frame *sent, const struct pb_dg6 *c6,
		 uint32_t mtu, uint32_t mtu_out)
{
	uint8_t quote[128], snat[16], rtr[16];
	struct pb_dg6 out, err;

	assert_true(sent->len - ETH <= sizeof(quote));
	memcpy(quote, sent->b + ETH, sent->len - ETH);
	addr(snat, A_SNAT);
	pb_ip6(rtr, 0x2001, 0xdb8, 2, 0xfe);
	too_big6(&err, rtr, snat, mtu, quote, sent->len - ETH);
	pb_ipv6_frame(in, mac_port[1], mac_peer1, &err);

	out = *c6;
	out.hlim = (uint8_t)(c6->hlim - 1);
	memcpy(err.src, c6->dst, 16);
	memcpy(err.dst, c6->src, 16);
	err.hlim = 63;
	err.l4.rest = mtu_out;
	err.l4.plen = (uint16_t)pb_ipv6(quote, &out);
	pb_ipv6_frame(want, mac_c, mac_port[0], &err);
}

/*
 * A packet too big from a router on the backend's path, about the SYN
 * we sent it: translated for the client, from the VIP, quoting the SYN
 * as the client's own (its addresses and ports, the hop limit it left
 * with), byte for byte; the MTU kept.
 */
static void
test_fnat66_too_big(void **state)
{
	struct ph_env *e = env66(state);
	struct pb_frame f, want, got;
	struct pb_dg6 in;
	uint8_t vip[16], snat[16], c[16];

	client_syn(&in, &f, vip, snat, c);
	ph_rx(e, 0, &f);
	ph_expect_one(e, 1, 0, &got, "SYN to the backend");

	too_big66_frames(&f, &want, &got, &in, 1400, 1400);
	ph_rx(e, 1, &f);
	ph_expect_frame(e, 0, 0, &want, "packet too big to the client");
	CHECK_EQ(e->w->st.icmp6_translated, 1, "translated");
	CHECK_EQ(e->w->st.icmp_mtu_clamped, 0, "MTU 1400 passed on as it is");

	/* MTU 1000, which no IPv6 link has: the client hears 1280. */
	too_big66_frames(&f, &want, &got, &in, 1000, LB_IPV6_MIN_MTU);
	ph_rx(e, 1, &f);
	ph_expect_frame(e, 0, 0, &want, "packet too big of MTU 1000");
	CHECK_EQ(e->w->st.icmp6_translated, 2, "translated");
	CHECK_EQ(e->w->st.icmp_mtu_clamped, 1, "MTU raised once");
	ph_check_no_drops(e->w, "packet too big");

	/* One quoting another SNAT port: no flow, dropped. */
	got.b[ETH + 40] ^= 0x55;
	too_big66_frames(&f, &want, &got, &in, 1400, 1400);
	ph_rx(e, 1, &f);
	ph_expect_quiet(e, "error about no flow");
	CHECK_EQ(e->w->st.drop[LB_DROP_NO_FLOW], 1, "no flow");
}

/* Two workers: the backend's answer reaches the worker that does not
 * own its SNAT port, which hands it over; the owner translates it. */
static void
test_fnat66_redirect(void **state)
{
	struct ph_env *e = env66_n(state, 2);
	const struct lb_worker *w0 = e->dp.w[0], *w1 = e->dp.w[1];
	struct pb_frame f, want, got;
	struct pb_dg6 in, out;
	uint8_t vip[16], snat[16], c[16];
	uint16_t sport;

	client_syn(&in, &f, vip, snat, c);
	ph_inject(e, 0, 1, &f);
	ph_poll(e, 1);
	ph_expect_one(e, 1, 1, &got, "SYN through worker 1");
	sport = pb_get16(got.b + ETH + 40);
	CHECK_EQ(lb_snat_owner(w1->snat6, htons(sport)), 1, "worker 1's port");

	seg6(&in, A_PEER1, BPORT6, snat, sport, PB_PROTO_TCP,
	     PB_SYN | PB_ACK, 5000, 1001, 64);
	pb_ipv6_frame(&f, mac_port[1], mac_peer1, &in);
	ph_inject(e, 1, 0, &f);
	ph_poll(e, 0);
	ph_expect_quiet(e, "worker 0 with worker 1's reply");
	CHECK_EQ(w0->st.redirect_out, 1, "worker 0 handing over");
	ph_poll(e, 1);
	seg6_out(&out, &in, vip, TCP6_PORT, c, CPORT6);
	pb_ipv6_frame(&want, mac_c, mac_port[0], &out);
	ph_expect_frame(e, 0, 1, &want, "SYN-ACK through worker 1");
	CHECK_EQ(w1->st.redirect_in, 1, "worker 1 taking over");
	ph_check_no_drops(w0, "worker 0");
	ph_check_no_drops(w1, "worker 1");
}

/* ---- fnat64 ------------------------------------------------------------- */

#define IP_BE4 PB_IP(10, 1, 0, 20) /* the IPv4 backend, on port 1's side */

/* ---- TCP sequence checks, RSTs of no flow, idle probes (fnat66) ---- */

/* The state of the TCP flow of client port @p cport, or -1 when there
 * is none. */
static int
flow6_state(struct ph_env *e, uint16_t cport)
{
	struct lb_flow6_tuple t;
	enum lb_flow_dir dir;
	uint32_t idx;

	memset(&t, 0, sizeof(t));
	addr(t.src, A_C);
	addr(t.dst, A_VIP);
	t.sport = htons(cport);
	t.dport = htons(TCP6_PORT);
	t.proto = PB_PROTO_TCP;
	idx = lb_flow6_lookup(e->w->ft, e->w->f6, &t, &dir);
	return idx == LB_FLOW_NONE ? -1 : lb_flow_entries(e->w->ft)[idx].state;
}

/*
 * An fnat66 flow of client port CPORT6 open and past its first data:
 * client ISS 1000, 12 bytes sent (next 1013), backend ISS 5000 (next
 * 5001), both windows 65535 unscaled. @return the SNAT port.
 */
static uint16_t
open66(struct ph_env *e)
{
	uint8_t vip[16], snat[16], c[16];
	struct pb_frame f;
	struct pb_dg6 in;
	uint16_t sport;

	client_syn_rx(e, &in, &f, vip, snat, c, CPORT6);
	syn_out(e, &sport, "SYN to the backend");
	backend_synack(e, BPORT6, snat, sport, vip, c);
	seg6(&in, A_C, CPORT6, vip, TCP6_PORT, PB_PROTO_TCP, PB_ACK | PB_PSH,
	     1001, 5001, 64);
	pb_ipv6_frame(&f, mac_port[0], mac_c, &in);
	ph_rx(e, 0, &f);
	CHECK_EQ(ph_take(e, 1, 0, NULL, 0), 1, "data to the backend");
	CHECK_EQ(flow6_state(e, CPORT6), LB_FLOW_ESTABLISHED, "established");
	return sport;
}

/* A segment of the client (@p to_be) or of the backend on SNAT port
 * @p sport, received. */
static void
inject66(struct ph_env *e, bool to_be, uint16_t sport, uint8_t flags,
	 uint32_t seq, uint32_t ack, uint16_t plen)
{
	uint8_t a[16];
	struct pb_frame f;
	struct pb_dg6 in;

	addr(a, to_be ? A_VIP : A_SNAT);
	if (to_be)
		seg6(&in, A_C, CPORT6, a, TCP6_PORT, PB_PROTO_TCP, flags, seq,
		     ack, 64);
	else
		seg6(&in, A_PEER1, BPORT6, a, sport, PB_PROTO_TCP, flags, seq,
		     ack, 64);
	in.l4.plen = plen;
	pb_ipv6_frame(&f, to_be ? mac_port[0] : mac_port[1],
		      to_be ? mac_c : mac_peer1, &in);
	ph_rx(e, to_be ? 0 : 1, &f);
}

/* Our own TCP segment expected on @p port: from @p src:@p sport to
 * @p dst:@p dport, hop limit 64, no payload, byte for byte. */
static void
expect_own6(struct ph_env *e, uint16_t port, enum who src, uint16_t sport,
	    enum who dst, uint16_t dport, uint8_t flags, uint32_t seq,
	    uint32_t ack, uint16_t win, const char *what)
{
	struct pb_frame want;
	struct pb_dg6 out;
	uint8_t d[16];

	addr(d, dst);
	seg6(&out, src, sport, d, dport, PB_PROTO_TCP, flags, seq, ack, 64);
	out.l4.win = win;
	out.l4.plen = 0;
	pb_ipv6_frame(&want, port == 0 ? mac_c : mac_peer1, mac_port[port],
		      &out);
	ph_expect_frame(e, port, 0, &want, what);
}

/*
 * RFC 5961 on an IPv6 VIP, as test_blind_rst() on an IPv4 one: a blind
 * RST or FIN out of the receiver's window, from either side, is dropped
 * and counted and the flow goes on; blind data is the receiver's to
 * judge but does not drag the window to the sender's guess; a RST in the
 * window but not exact gets a challenge ACK in the other side's name;
 * the exact RST closes the flow.
 */
static void
test_fnat66_blind_rst(void **state)
{
	struct ph_env *e = env66(state);
	const struct {
		const char *what;
		bool to_be;
		uint8_t flags;
		uint32_t seq, ack;
		uint16_t plen;
	} blind[] = {
		{"blind client RST", true, PB_RST, 1013 + 0x40000000u, 0, 0},
		{"blind client RST one past the window", true, PB_RST,
		 1013 + 65535 + 1, 0, 0},
		{"blind client FIN with data", true, PB_FIN | PB_ACK | PB_PSH,
		 1013 + 0x80000000u, 5001, 12},
		{"blind backend RST", false, PB_RST | PB_ACK,
		 5001 - 0x30000000u, 1013, 0},
		{"blind backend FIN", false, PB_FIN | PB_ACK, 5001 + 65535 + 1,
		 1013, 0},
		{"blind client RST after blind data", true, PB_RST,
		 1013 + 0x20000000u + 12, 0, 0},
	};
	struct lb_worker_stats before;
	uint16_t sport = open66(e);

	/* Blind data: forwarded (the backend drops it), the window
	 * stays where the client really is. */
	inject66(e, true, sport, PB_ACK | PB_PSH, 1013 + 0x20000000u, 5001,
		 12);
	CHECK_EQ(ph_take(e, 1, 0, NULL, 0), 1, "blind data forwarded");
	for (unsigned int i = 0; i < NELEM(blind); i++) {
		before = e->w->st;
		inject66(e, blind[i].to_be, sport, blind[i].flags, blind[i].seq,
			 blind[i].ack, blind[i].plen);
		ph_expect_quiet(e, blind[i].what);
		ph_check_drop_delta(e->w, &before, LB_DROP_TCP_WINDOW,
				    blind[i].what);
		CHECK_EQ(flow6_state(e, CPORT6), LB_FLOW_ESTABLISHED,
			 blind[i].what);
	}
	/* The client's next segment goes through. */
	inject66(e, true, sport, PB_ACK | PB_PSH, 1013, 5001, 12);
	CHECK_EQ(ph_take(e, 1, 0, NULL, 0), 1, "the client's next segment");

	/* Near misses: the challenge ACK to the client from the VIP (the
	 * backend's next sequence number, all the client sent
	 * acknowledged, the backend's window), and to the backend from
	 * the SNAT address in the client's name. */
	before = e->w->st;
	inject66(e, true, sport, PB_RST, 1025 + 30000, 0, 0);
	expect_own6(e, 0, A_VIP, TCP6_PORT, A_C, CPORT6, PB_ACK, 5001, 1025,
		    65535, "challenge ACK to the client");
	inject66(e, false, sport, PB_RST | PB_ACK, 5001 - 200, 1025, 0);
	expect_own6(e, 1, A_SNAT, sport, A_PEER1, BPORT6, PB_ACK, 1025, 5001,
		    65535, "challenge ACK to the backend");
	CHECK_EQ(e->w->st.challenge_acks, before.challenge_acks + 2,
		 "challenge ACKs");
	ph_check_drop_delta(e->w, &before, -1, "challenges");
	CHECK_EQ(flow6_state(e, CPORT6), LB_FLOW_ESTABLISHED, "challenged");

	/* The exact RST ends the flow, and reaches the backend. */
	inject66(e, true, sport, PB_RST, 1025, 0, 0);
	CHECK_EQ(ph_take(e, 1, 0, NULL, 0), 1, "exact RST forwarded");
	CHECK_EQ(flow6_state(e, CPORT6), LB_FLOW_CLOSED, "exact RST");
}

/*
 * A burst of stray ACKs to an IPv6 VIP gets at most rst-rate RSTs, as
 * test_rst_rate() for IPv4: each at the number the ACK acknowledged,
 * from the VIP; the rest counted and dropped; rst-rate 0 answers none.
 */
static void
test_fnat66_rst_rate(void **state)
{
	struct ph_env *e = env66_build(state, NULL, NULL);
	uint32_t s = e->dp.conf->nb_svc - 2;
	struct pb_frame f, got[32];
	struct lb_dpconf *d;
	struct pb_dg6 in;
	uint8_t vip[16];
	unsigned int n;

	e->dp.conf->svc[s].opts.flow[LB_CONF_FLOW_RST_RATE] = 5;
	env66_go(e, 1);
	addr(vip, A_VIP);
	for (uint16_t i = 0; i < 20; i++) {
		seg6(&in, A_C, (uint16_t)(47000 + i), vip, TCP6_PORT,
		     PB_PROTO_TCP, PB_ACK, 1000, 7000u + i, 64);
		pb_ipv6_frame(&f, mac_port[0], mac_c, &in);
		ph_inject(e, 0, 0, &f);
	}
	ph_poll(e, 0);
	n = ph_take(e, 0, 0, got, NELEM(got));
	CHECK_EQ(n, 5, "RSTs for 20 stray ACKs at rst-rate 5");
	for (unsigned int i = 0; i < n && i < NELEM(got); i++) {
		struct pb_frame want;
		struct pb_dg6 out;
		uint8_t c[16];

		addr(c, A_C);
		seg6(&out, A_VIP, TCP6_PORT, c, (uint16_t)(47000 + i),
		     PB_PROTO_TCP, PB_RST, 7000u + i, 0, 64);
		out.l4.win = 0;
		out.l4.plen = 0;
		pb_ipv6_frame(&want, mac_c, mac_port[0], &out);
		ph_expect_same(&got[i], &want, "RST");
	}
	CHECK_EQ(e->w->st.rst_no_flow, 5, "RSTs sent");
	CHECK_EQ(e->w->st.rst_limited, 15, "RSTs suppressed");
	CHECK_EQ(e->w->st.drop[LB_DROP_NO_FLOW], 20, "dropped");

	d = ph_table_next(e);
	d->svc[s].opts.flow[LB_CONF_FLOW_RST_RATE] = 0;
	ph_table_publish(e, d);
	for (int i = 0; i < 50; i++)
		ph_poll_all(e);
	ph_take(e, 0, 0, NULL, 0);
	ph_rx(e, 0, &f);
	ph_expect_quiet(e, "stray ACK at rst-rate 0");
}

/* An idle probe on @p port: our bare ACK from @p src:@p sport to
 * @p dst:@p dport, its sequence number far from @p near. */
static void
check_probe6(const struct pb_frame *got, const uint8_t src[16],
	     uint16_t sport, const uint8_t dst[16], uint16_t dport,
	     uint32_t near, const char *what)
{
	const uint8_t *ip = got->b + ETH, *th = ip + 40;
	uint32_t seq;

	if (got->len < ETH + 60 || pb_get16(got->b + 12) != 0x86dd ||
	    ip[6] != PB_PROTO_TCP || memcmp(ip + 8, src, 16) != 0 ||
	    memcmp(ip + 24, dst, 16) != 0 || pb_get16(th) != sport ||
	    pb_get16(th + 2) != dport || th[13] != PB_ACK)
		fail_msg("%s: not our bare ACK", what);
	seq = pb_get32(th + 4);
	if (seq - near < 65536 || near - seq < 65536)
		fail_msg("%s: at %u, next to %u", what, seq, near);
}

/*
 * test_timeout_per_service()'s idle probes on an IPv6 flow: when an
 * idle established fnat66 flow expires, each end gets a bare ACK out of
 * its window; their answers, as ends that still hold the connection
 * send them, have no flow and get a RST at exactly the sequence number
 * each expects, from the VIP to the client and from the SNAT address to
 * the backend; a RST in answer gets nothing.
 */
static void
test_fnat66_idle_probe(void **state)
{
	struct ph_env *e = env66(state);
	uint8_t vip[16], snat[16], c[16], be[16];
	struct pb_frame got;
	uint16_t sport = open66(e);

	addr(vip, A_VIP);
	addr(snat, A_SNAT);
	addr(c, A_C);
	addr(be, A_PEER1);
	inject66(e, false, sport, PB_ACK | PB_PSH, 5001, 1013, 12);
	CHECK_EQ(ph_take(e, 0, 0, NULL, 0), 1, "backend data");
	CHECK_EQ(lb_flow_expire(e->w->ft, ph_now_ns(e) + 86400000000000ull,
				16, e->w->ft->reaper, e->w->ft->reaper_ctx),
		 1, "expired");
	ph_poll(e, 0);
	CHECK_EQ(flow6_state(e, CPORT6), -1, "flow gone");
	CHECK_EQ(ph_take(e, 0, 0, &got, 1), 1, "probe to the client");
	check_probe6(&got, vip, TCP6_PORT, c, CPORT6, 5013,
		     "probe to the client");
	ph_expect_one(e, 1, 0, &got, "probe to the backend");
	check_probe6(&got, snat, sport, be, BPORT6, 1013,
		     "probe to the backend");
	CHECK_EQ(e->w->st.idle_probes, 2, "probes");

	/* The ends answer with their own numbers (RFC 793 p. 69). */
	inject66(e, true, sport, PB_ACK, 1013, 5013, 0);
	expect_own6(e, 0, A_VIP, TCP6_PORT, A_C, CPORT6, PB_RST, 5013, 0, 0,
		    "RST to the client");
	inject66(e, false, sport, PB_ACK, 5013, 1013, 0);
	expect_own6(e, 1, A_SNAT, sport, A_PEER1, BPORT6, PB_RST, 1013, 0, 0,
		    "RST to the backend");
	CHECK_EQ(e->w->st.rst_no_flow, 2, "RSTs without a flow");
	inject66(e, false, sport, PB_RST, 5013, 0, 0);
	ph_expect_quiet(e, "RST without a flow");
}

static const uint8_t mac_be4[6] = {0x02, 0xbe, 0, 0, 4, 0x20};

/* Backend @p b of service slot @p s of @p d becomes the IPv4 backend
 * IP_BE4:@p bport. */
static void
be4_set(struct lb_dpconf *d, uint32_t s, uint32_t b, uint16_t bport)
{
	struct lb_dpconf_be *x = &d->svc[s].be[b];

	memset(x, 0, sizeof(*x));
	x->af = LB_CONF_AF_INET;
	x->ip = htonl(IP_BE4);
	x->port = htons(bport);
	x->state = LB_BE_ACTIVE;
	x->weight = 1;
	if (d->svc[s].nb_be <= b)
		d->svc[s].nb_be = b + 1;
}

/* The IPv4 backend announces itself on port 1. */
static void
learn4(struct ph_env *e)
{
	struct pb_frame f;

	pb_arp_frame(&f, mac_port[1], mac_be4, 2, mac_be4, IP_BE4,
		     mac_port[1], IP_LB1, PB_FRAME_MIN);
	ph_rx(e, 1, &f);
	ph_expect_quiet(e, "the IPv4 backend announcing itself");
}

/* env66_n() whose IPv6 services have the IPv4 backend instead (TCP to
 * BPORT6, UDP to UBPORT6), known to each of the @p nb workers; @p mixed
 * keeps the TCP service's IPv6 backend and adds the IPv4 one beside
 * it. */
static struct ph_env *
env64_n(void **state, uint16_t nb, bool mixed)
{
	struct ph_env *e = env66_n(state, nb);
	struct lb_dpconf *d = ph_table_next(e);

	be4_set(d, d->nb_svc - 2, mixed ? 1 : 0, BPORT6);
	be4_set(d, d->nb_svc - 1, 0, UBPORT6);
	ph_table_publish(e, d);
	for (int i = 0; i < 50; i++)
		ph_poll_all(e);
	if (nb == 1) {
		learn4(e);
		return e;
	}
	for (uint16_t q = 0; q < nb; q++) {
		struct pb_frame f;

		pb_arp_frame(&f, mac_port[1], mac_be4, 2, mac_be4, IP_BE4,
			     mac_port[1], IP_LB1, PB_FRAME_MIN);
		ph_inject(e, 1, q, &f);
	}
	ph_settle(e);
	ph_expect_quiet(e, "the IPv4 backend announcing itself");
	return e;
}

static struct ph_env *
env64_mixed(void **state, bool mixed)
{
	return env64_n(state, 1, mixed);
}

static struct ph_env *
env64(void **state)
{
	return env64_mixed(state, false);
}

/* The IPv4 packet fnat64 makes of the client's IPv6 packet @p in: from
 * the SNAT address and port @p sport to the backend's @p bport, TTL from
 * the hop limit less one, DF, identification 0 (RFC 7915 5.1). */
static void
to4(struct pb_dg *o, const struct pb_dg6 *in, uint16_t sport, uint16_t bport)
{
	*o = in->l4;
	o->src = IP_SNAT;
	o->dst = IP_BE4;
	o->sport = sport;
	o->dport = bport;
	o->ttl = (uint8_t)(in->hlim - 1);
	o->frag = PB_IP_DF;
	o->id = 0;
	o->tos = 0;
}

/* A segment or datagram of the IPv4 backend from @p bport to the SNAT
 * address's port @p sport. */
static void
from4(struct pb_dg *d, uint16_t bport, uint16_t sport, uint8_t proto,
      uint8_t flags, uint32_t seq, uint32_t ack)
{
	memset(d, 0, sizeof(*d));
	d->proto = proto;
	d->ttl = 64;
	d->src = IP_BE4;
	d->dst = IP_SNAT;
	d->sport = bport;
	d->dport = sport;
	d->flags = flags;
	d->seq = seq;
	d->ack = ack;
	d->win = 29200;
	d->plen = flags & PB_SYN ? 0 : 16;
	d->seed = (uint8_t)(seq ^ ack);
}

/* The IPv6 packet fnat64 makes of the backend's @p in: from @p vip:
 * @p vport to the client, hop limit from the TTL less one. */
static void
to6(struct pb_dg6 *o, const struct pb_dg *in, const uint8_t vip[16],
    uint16_t vport)
{
	memset(o, 0, sizeof(*o));
	o->l4 = *in;
	memcpy(o->src, vip, 16);
	addr(o->dst, A_C);
	o->l4.sport = vport;
	o->l4.dport = CPORT6;
	o->hlim = (uint8_t)(in->ttl - 1);
}

/* The client's IPv6 packet @p in on port 0; what reaches the backend is
 * @p want4 (its SNAT port learnt when @p sport is 0). */
static uint16_t
c2b(struct ph_env *e, const struct pb_dg6 *in, uint16_t sport,
    uint16_t bport, const char *what)
{
	struct pb_frame f, want, got;
	struct pb_dg o;

	pb_ipv6_frame(&f, mac_port[0], mac_c, in);
	ph_rx(e, 0, &f);
	ph_expect_one(e, 1, 0, &got, what);
	if (sport == 0)
		sport = pb_get16(got.b + ETH + 20);
	to4(&o, in, sport, bport);
	pb_ipv4_frame(&want, mac_be4, mac_port[1], &o);
	ph_expect_same(&got, &want, what);
	return sport;
}

/* The backend's IPv4 packet @p in on port 1; what reaches the client is
 * @p in translated, its SYN's MSS lowered to @p mss. */
static void
b2c(struct ph_env *e, const struct pb_dg *in, const uint8_t vip[16],
    uint16_t vport, uint16_t mss, const char *what)
{
	struct pb_frame f, want;
	struct pb_dg6 o;

	pb_ipv4_frame(&f, mac_port[1], mac_be4, in);
	ph_rx(e, 1, &f);
	to6(&o, in, vip, vport);
	o.l4.mss_val = mss;
	pb_ipv6_frame(&want, mac_c, mac_port[0], &o);
	ph_expect_frame(e, 0, 0, &want, what);
}

/*
 * A client's connection through the TCP VIP to an IPv4 backend, both
 * ways, byte for byte with the checksums pktbuild.c computes from
 * scratch: IPv4 from the SNAT address and a port of the worker's IPv4
 * slice towards the backend, IPv6 from the VIP towards the client, the
 * backend's SYN-ACK MSS 20 bytes lower; FIN both ways; the flow's end
 * gives the IPv4 port back.
 */
static void
test_fnat64_tcp(void **state)
{
	struct ph_env *e = env64(state);
	uint8_t vip[16], snat[16], c[16];
	struct pb_frame f;
	struct pb_dg6 in;
	struct pb_dg b;
	uint16_t sport;
	int s = (int)e->dp.conf->nb_svc - 2;

	client_syn(&in, &f, vip, snat, c);
	in.l4.mss = 1;
	in.l4.mss_val = 1440;
	sport = c2b(e, &in, 0, BPORT6, "SYN to the IPv4 backend");
	CHECK_EQ(lb_snat_owner(e->w->snat, htons(sport)), 0, "our slice");
	CHECK_EQ(lb_snat_addr_used(e->w->snat, htonl(IP_SNAT)), 1,
		 "IPv4 SNAT port held");
	CHECK_EQ(lb_snat_addr_used(e->w->snat6, lb_flow6_fold(e->w->ft, snat)),
		 0, "no IPv6 SNAT port");

	from4(&b, BPORT6, sport, PB_PROTO_TCP, PB_SYN | PB_ACK, 5000, 1001);
	b.mss = 1;
	b2c(e, &b, vip, TCP6_PORT, 1440, "SYN-ACK to the client, MSS 1440");
	CHECK_EQ(e->w->st.nat64_mss_adjusted, 1, "MSS adjusted");

	seg6(&in, A_C, CPORT6, vip, TCP6_PORT, PB_PROTO_TCP, PB_ACK | PB_PSH,
	     1001, 5001, 64);
	c2b(e, &in, sport, BPORT6, "data to the backend");
	from4(&b, BPORT6, sport, PB_PROTO_TCP, PB_ACK | PB_PSH, 5001, 1013);
	b2c(e, &b, vip, TCP6_PORT, 0, "data to the client");
	CHECK_EQ(e->w->bst[s][0].active, 1, "active on the backend");

	seg6(&in, A_C, CPORT6, vip, TCP6_PORT, PB_PROTO_TCP, PB_ACK | PB_FIN,
	     1013, 5017, 64);
	in.l4.plen = 0;
	c2b(e, &in, sport, BPORT6, "client's FIN");
	from4(&b, BPORT6, sport, PB_PROTO_TCP, PB_ACK | PB_FIN, 5017, 1014);
	b.plen = 0;
	b2c(e, &b, vip, TCP6_PORT, 0, "backend's FIN");
	seg6(&in, A_C, CPORT6, vip, TCP6_PORT, PB_PROTO_TCP, PB_ACK, 1014,
	     5018, 64);
	in.l4.plen = 0;
	c2b(e, &in, sport, BPORT6, "last ACK");
	CHECK_EQ(e->w->st.nat64_out, 4, "translated to IPv4");
	CHECK_EQ(e->w->st.nat64_in, 3, "translated to IPv6");
	CHECK_EQ(e->w->st.flows_created, 1, "flows created");
	ph_check_no_drops(e->w, "fnat64 TCP");

	/* An IPv4 segment to another port of ours: no flow. */
	from4(&b, BPORT6, (uint16_t)(sport + 1), PB_PROTO_TCP, PB_ACK, 1, 1);
	pb_ipv4_frame(&f, mac_port[1], mac_be4, &b);
	ph_rx(e, 1, &f);
	ph_take(e, 1, 0, NULL, 0);
	CHECK_EQ(ph_take(e, 0, 0, NULL, 0), 0, "nothing to the client");

	CHECK_EQ(lb_flow_expire(e->w->ft, ph_now_ns(e) + 86400000000000ull,
				16, e->w->ft->reaper, e->w->ft->reaper_ctx),
		 1, "expired");
	CHECK_EQ(lb_snat_addr_used(e->w->snat, htonl(IP_SNAT)), 0,
		 "IPv4 SNAT port free");
	CHECK_EQ(e->w->snat->stats.bad_free, 0, "freed where taken");
	CHECK_EQ(e->w->bst[s][0].active, 0, "nothing active");
}

/* Our bare TCP segment to the IPv4 backend: from the SNAT address and
 * port @p sport, flags @p flags, sequence number @p seq (or, with
 * @p far, one far from it) and acknowledgement @p ack. */
static void
check_own4(const struct pb_frame *got, uint16_t sport, uint8_t flags,
	   uint32_t seq, uint32_t ack, bool far, const char *what)
{
	const uint8_t *ip = got->b + ETH, *th = ip + 20;
	uint32_t sq;

	if (got->len < ETH + 40 || pb_get16(got->b + 12) != 0x0800 ||
	    ip[9] != PB_PROTO_TCP || pb_get32(ip + 12) != IP_SNAT ||
	    pb_get32(ip + 16) != IP_BE4 || pb_get16(th) != sport ||
	    pb_get16(th + 2) != BPORT6 || th[13] != flags ||
	    pb_csum(ip, 20) != 0)
		fail_msg("%s: not our segment to the IPv4 backend", what);
	sq = pb_get32(th + 4);
	if (far ? seq - sq < 65536 || sq - seq < 65536
		: sq != seq || pb_get32(th + 8) != ack)
		fail_msg("%s: seq %u ack %u", what, sq, pb_get32(th + 8));
}

/*
 * The sequence checks and idle probes of an fnat64 flow: the IPv4
 * backend's blind RST and the client's are dropped and counted, the
 * backend's RST in window but not exact gets its challenge ACK as IPv4
 * from the SNAT address; when the idle flow expires, the client gets
 * its probe as IPv6 from the VIP and the backend as IPv4.
 */
static void
test_fnat64_blind_rst(void **state)
{
	struct ph_env *e = env64(state);
	uint8_t vip[16], snat[16], c[16];
	struct lb_worker_stats before;
	struct pb_frame f, got;
	struct pb_dg6 in;
	struct pb_dg b;
	uint16_t sport;

	client_syn(&in, &f, vip, snat, c);
	sport = c2b(e, &in, 0, BPORT6, "SYN to the IPv4 backend");
	from4(&b, BPORT6, sport, PB_PROTO_TCP, PB_SYN | PB_ACK, 5000, 1001);
	b2c(e, &b, vip, TCP6_PORT, 0, "SYN-ACK to the client");
	seg6(&in, A_C, CPORT6, vip, TCP6_PORT, PB_PROTO_TCP, PB_ACK | PB_PSH,
	     1001, 5001, 64);
	c2b(e, &in, sport, BPORT6, "data to the backend");
	from4(&b, BPORT6, sport, PB_PROTO_TCP, PB_ACK | PB_PSH, 5001, 1013);
	b2c(e, &b, vip, TCP6_PORT, 0, "data to the client");

	before = e->w->st;
	from4(&b, BPORT6, sport, PB_PROTO_TCP, PB_RST | PB_ACK,
	      5017 - 0x30000000u, 1013);
	b.plen = 0;
	pb_ipv4_frame(&f, mac_port[1], mac_be4, &b);
	ph_rx(e, 1, &f);
	ph_expect_quiet(e, "blind backend RST");
	ph_check_drop_delta(e->w, &before, LB_DROP_TCP_WINDOW,
			    "blind backend RST");
	before = e->w->st;
	seg6(&in, A_C, CPORT6, vip, TCP6_PORT, PB_PROTO_TCP, PB_RST,
	     1013 + 0x40000000u, 0, 64);
	in.l4.plen = 0;
	pb_ipv6_frame(&f, mac_port[0], mac_c, &in);
	ph_rx(e, 0, &f);
	ph_expect_quiet(e, "blind client RST");
	ph_check_drop_delta(e->w, &before, LB_DROP_TCP_WINDOW,
			    "blind client RST");
	CHECK_EQ(flow6_state(e, CPORT6), LB_FLOW_ESTABLISHED, "blind RSTs");

	from4(&b, BPORT6, sport, PB_PROTO_TCP, PB_RST | PB_ACK, 5017 - 200,
	      1013);
	b.plen = 0;
	pb_ipv4_frame(&f, mac_port[1], mac_be4, &b);
	ph_rx(e, 1, &f);
	ph_expect_one(e, 1, 0, &got, "challenge ACK to the backend");
	check_own4(&got, sport, PB_ACK, 1013, 5017, false,
		   "challenge ACK to the backend");
	CHECK_EQ(e->w->st.challenge_acks, 1, "challenge ACKs");
	CHECK_EQ(flow6_state(e, CPORT6), LB_FLOW_ESTABLISHED, "challenged");

	CHECK_EQ(lb_flow_expire(e->w->ft, ph_now_ns(e) + 86400000000000ull,
				16, e->w->ft->reaper, e->w->ft->reaper_ctx),
		 1, "expired");
	ph_poll(e, 0);
	CHECK_EQ(ph_take(e, 0, 0, &got, 1), 1, "probe to the client");
	check_probe6(&got, vip, TCP6_PORT, c, CPORT6, 5017,
		     "probe to the client");
	ph_expect_one(e, 1, 0, &got, "probe to the backend");
	check_own4(&got, sport, PB_ACK, 1013, 0, true, "probe to the backend");
	CHECK_EQ(e->w->st.idle_probes, 2, "probes");
}

/* A datagram through the UDP VIP to the IPv4 backend and its answer,
 * byte for byte; the answer without a checksum gets one over IPv6. */
/* An IPv4 segment the worker sent, read back: its checksums must
 * verify; addresses and ports in host order. */
static void
seg4_read(const struct pb_frame *f, struct seg6_out *s, uint32_t *src,
	  uint32_t *dst, const char *what)
{
	struct lb_pkt pkt;
	const uint8_t *th;

	if (lb_pkt_parse(f->b, f->len, &pkt) != LB_PKT_IPV4 ||
	    pkt.proto != PB_PROTO_TCP || !lb_pkt_l4_csum_ok(f->b, &pkt) ||
	    pb_csum(f->b + pkt.l3_off, 20) != 0)
		fail_msg("%s: not an IPv4 TCP segment with good checksums",
			 what);
	th = f->b + pkt.l4_off;
	*src = ntohl(pkt.src);
	*dst = ntohl(pkt.dst);
	s->sport = ntohs(pkt.sport);
	s->dport = ntohs(pkt.dport);
	s->seq = pb_get32(th + 4);
	s->ack = pb_get32(th + 8);
	s->flags = th[13];
	s->plen = pkt.payload_len;
}

/*
 * synproxy on an IPv6 service with an IPv4 backend (fnat64): the ACK
 * that proves the cookie, with data, opens the backend's connection with
 * an IPv4 SYN from the IPv4 SNAT address; the backend's IPv4 SYN-ACK
 * goes no further and becomes the client's ACK then its data, as IPv4;
 * from then on each side sees its own numbers across the translation.
 */
static void
test_synproxy64(void **state)
{
	struct ph_env *e = env64(state);
	struct lb_dpconf *d = ph_table_next(e);
	struct lb_dpconf_svc *v = &d->svc[d->nb_svc - 2];
	const uint32_t iss = 3000, irs = 70000;
	const uint8_t mss[4] = {2, 4, 0x05, 0xa0};
	struct pb_frame in, got[3];
	struct seg6_out o;
	uint32_t cookie, src, dst;
	uint16_t sport;
	struct pb_dg b;

	v->opts.synp.mode = LB_CONF_SYNP_ON;
	v->opts.synp.mss = 1460;
	v->opts.synp.wscale = 7;
	ph_table_publish(e, d);
	for (int i = 0; i < 50; i++)
		ph_poll_all(e);

	cookie = synp6_cookie(e, CPORT6, iss, mss, 4, &o);
	CHECK_EQ(o.flags, PB_SYN | PB_ACK, "a cookie");
	opt6_frame(&in, true, CPORT6, TCP6_PORT, PB_ACK | PB_PSH, iss + 1,
		   cookie + 1, 65535, NULL, 0, 20);
	ph_rx(e, 0, &in);
	ph_expect_one(e, 1, 0, &got[0], "IPv4 SYN to the backend");
	seg4_read(&got[0], &o, &src, &dst, "IPv4 SYN");
	CHECK_EQ(src, IP_SNAT, "from the IPv4 SNAT address");
	CHECK_EQ(dst, IP_BE4, "to the IPv4 backend");
	CHECK_EQ(o.flags, PB_SYN, "a SYN");
	CHECK_EQ(o.seq, iss, "the client's ISN");
	sport = o.sport;
	CHECK_EQ(e->w->st.synp_held, 1, "the ACK's data held");

	from4(&b, BPORT6, sport, PB_PROTO_TCP, PB_SYN | PB_ACK, irs, iss + 1);
	b.mss = 1;
	pb_ipv4_frame(&in, mac_port[1], mac_be4, &b);
	ph_rx(e, 1, &in);
	assert_int_equal(ph_take(e, 1, 0, got, NELEM(got)), 2);
	ph_expect_quiet(e, "the client hears nothing of it");
	seg4_read(&got[0], &o, &src, &dst, "the client's ACK");
	CHECK_EQ(o.flags, PB_ACK, "first the ACK");
	CHECK_EQ(o.seq, iss + 1, "after the SYN");
	CHECK_EQ(o.ack, irs + 1, "in the backend's numbers");
	CHECK_EQ(o.sport, sport, "from the flow's SNAT port");
	seg4_read(&got[1], &o, &src, &dst, "the data held");
	CHECK_EQ(o.ack, irs + 1, "the data in the backend's numbers");
	CHECK_EQ(o.plen, 20, "whole");
	CHECK_EQ(e->w->st.synp_handshakes, 1, "handshake");

	from4(&b, BPORT6, sport, PB_PROTO_TCP, PB_ACK | PB_PSH, irs + 1,
	      iss + 21);
	pb_ipv4_frame(&in, mac_port[1], mac_be4, &b);
	ph_rx(e, 1, &in);
	ph_expect_one(e, 0, 0, &got[0], "response to the client");
	seg6_read(&got[0], &o, "response");
	check_addr(o.src, A_VIP, "from the VIP");
	CHECK_EQ(o.seq, cookie + 1, "in the client's numbers");
	CHECK_EQ(o.ack, iss + 21, "the client's own");
	CHECK_EQ(o.plen, 16, "payload");

	opt6_frame(&in, true, CPORT6, TCP6_PORT, PB_ACK | PB_PSH, iss + 21,
		   cookie + 17, 65535, NULL, 0, 10);
	ph_rx(e, 0, &in);
	ph_expect_one(e, 1, 0, &got[0], "request to the backend");
	seg4_read(&got[0], &o, &src, &dst, "request");
	CHECK_EQ(o.seq, iss + 21, "the client's seq");
	CHECK_EQ(o.ack, irs + 17, "the backend's numbers");
	CHECK_EQ(o.plen, 10, "whole");
	CHECK_EQ(ph_flows_in_table(e->w), 1, "one entry");

	/* The backend's FIN is judged in the client's numbers: it reaches
	 * the client, translated, instead of being dropped as blind. */
	from4(&b, BPORT6, sport, PB_PROTO_TCP, PB_ACK | PB_FIN, irs + 17,
	      iss + 31);
	b.plen = 0;
	pb_ipv4_frame(&in, mac_port[1], mac_be4, &b);
	ph_rx(e, 1, &in);
	ph_expect_one(e, 0, 0, &got[0], "the backend's FIN to the client");
	seg6_read(&got[0], &o, "FIN");
	CHECK_EQ(o.flags & PB_FIN, PB_FIN, "a FIN");
	CHECK_EQ(o.seq, cookie + 17, "in the client's numbers");
	CHECK_EQ(e->w->st.drop[LB_DROP_TCP_WINDOW], 0, "nothing out of window");
}

static void
test_fnat64_udp(void **state)
{
	struct ph_env *e = env64(state);
	uint8_t vip[16];
	struct pb_dg6 in;
	struct pb_dg b;
	uint16_t sport;

	addr(vip, A_VIP_LAN);
	seg6(&in, A_C, CPORT6, vip, UDP6_PORT, PB_PROTO_UDP, 0, 7, 0, 64);
	sport = c2b(e, &in, 0, UBPORT6, "datagram to the IPv4 backend");
	from4(&b, UBPORT6, sport, PB_PROTO_UDP, 0, 3, 0);
	b2c(e, &b, vip, UDP6_PORT, 0, "answer to the client");
	from4(&b, UBPORT6, sport, PB_PROTO_UDP, 0, 4, 0);
	b.udp_csum_zero = 1;
	{
		struct pb_frame f, want;
		struct pb_dg6 o;

		pb_ipv4_frame(&f, mac_port[1], mac_be4, &b);
		ph_rx(e, 1, &f);
		b.udp_csum_zero = 0;
		to6(&o, &b, vip, UDP6_PORT);
		pb_ipv6_frame(&want, mac_c, mac_port[0], &o);
		ph_expect_frame(e, 0, 0, &want, "answer without a checksum");
	}
	CHECK_EQ(e->w->st.flows_created, 1, "one flow");
	CHECK_EQ(e->w->st.nat64_in, 2, "answers translated");
	ph_check_no_drops(e->w, "fnat64 UDP");
}

/* An ICMP error from the IPv4 side, @p code and @p rest (bytes 4..7)
 * of destination unreachable, quoting frame @p sent (what we sent the
 * backend), in @p in; in @p want the ICMPv6 error @p type6, @p code6,
 * @p rest6 the client must get for it: from the VIP, quoting the
 * client's packet @p c6 as it left us. */
static void
err64_frames(struct pb_frame *in, struct pb_frame *want,
	     const struct pb_frame *sent, const struct pb_dg6 *c6,
	     uint8_t code, uint32_t rest, uint8_t type6, uint8_t code6,
	     uint32_t rest6)
{
	uint8_t quote[128];
	struct pb_dg6 out, err6;
	struct pb_dg err;

	assert_true(sent->len - ETH <= sizeof(quote));
	memcpy(quote, sent->b + ETH, sent->len - ETH);
	memset(&err, 0, sizeof(err));
	err.proto = PB_PROTO_ICMP;
	err.ttl = 64;
	err.src = PB_IP(10, 1, 0, 254);
	err.dst = IP_SNAT;
	err.type = 3;
	err.code = code;
	err.rest = rest;
	err.data = quote;
	err.plen = (uint16_t)(sent->len - ETH);
	pb_ipv4_frame(in, mac_port[1], mac_be4, &err);

	out = *c6;
	out.hlim = (uint8_t)(c6->hlim - 1);
	memset(&err6, 0, sizeof(err6));
	memcpy(err6.src, c6->dst, 16);
	memcpy(err6.dst, c6->src, 16);
	err6.hlim = 63;
	err6.l4.proto = PB_PROTO_ICMPV6;
	err6.l4.type = type6;
	err6.l4.code = code6;
	err6.l4.rest = rest6;
	err6.l4.data = quote;
	err6.l4.plen = (uint16_t)pb_ipv6(quote, &out);
	pb_ipv6_frame(want, mac_c, mac_port[0], &err6);
}

/*
 * Fragmentation needed from a router on the IPv4 side, about the SYN we
 * sent the backend: the client gets packet too big from the VIP with
 * the MTU 20 bytes higher, quoting its SYN as it left us (its own
 * addresses and ports), byte for byte. A port unreachable becomes the
 * ICMPv6 one.
 */
static void
test_fnat64_frag_needed(void **state)
{
	struct ph_env *e = env64(state);
	uint8_t vip[16], snat[16], c[16];
	struct pb_frame f, want, got;
	struct pb_dg6 in;

	client_syn(&in, &f, vip, snat, c);
	ph_rx(e, 0, &f);
	ph_expect_one(e, 1, 0, &got, "SYN to the backend");

	err64_frames(&f, &want, &got, &in, 4, 1400, 2, 0, 1420);
	ph_rx(e, 1, &f);
	ph_expect_frame(e, 0, 0, &want, "packet too big to the client");
	CHECK_EQ(e->w->st.icmp64_translated, 1, "translated");

	/* Port unreachable: destination unreachable, port unreachable. */
	err64_frames(&f, &want, &got, &in, 3, 0, 1, 4, 0);
	ph_rx(e, 1, &f);
	ph_expect_frame(e, 0, 0, &want, "port unreachable to the client");
	CHECK_EQ(e->w->st.icmp64_translated, 2, "translated");
	ph_check_no_drops(e->w, "fnat64 ICMP");
}

/*
 * One service, an IPv6 and an IPv4 backend, round robin: the SYNs go
 * one to each, each in its own family, and each backend's SYN-ACK finds
 * its way back to its client over IPv6.
 */
static void
test_fnat64_mixed(void **state)
{
	struct ph_env *e = env64_mixed(state, true);
	uint8_t vip[16], snat[16], c[16];
	struct pb_frame f, got;
	unsigned int v4 = 0, v6 = 0;
	int s = (int)e->dp.conf->nb_svc - 2;

	for (uint16_t i = 0; i < 4; i++) {
		struct pb_dg6 in;

		client_syn(&in, &f, vip, snat, c);
		in.l4.sport = (uint16_t)(CPORT6 + i);
		pb_ipv6_frame(&f, mac_port[0], mac_c, &in);
		ph_rx(e, 0, &f);
		ph_expect_one(e, 1, 0, &got, "SYN to a backend");
		if (pb_get16(got.b + 12) == 0x0800) {
			struct pb_dg b;

			v4++;
			from4(&b, BPORT6, pb_get16(got.b + ETH + 20),
			      PB_PROTO_TCP, PB_SYN | PB_ACK, 7, 1001);
			pb_ipv4_frame(&f, mac_port[1], mac_be4, &b);
		} else {
			struct pb_dg6 r;

			v6++;
			seg6(&r, A_PEER1, BPORT6, snat,
			     pb_get16(got.b + ETH + 40), PB_PROTO_TCP,
			     PB_SYN | PB_ACK, 7, 1001, 64);
			pb_ipv6_frame(&f, mac_port[1], mac_peer1, &r);
		}
		ph_rx(e, 1, &f);
		ph_expect_one(e, 0, 0, &got, "SYN-ACK to the client");
		CHECK_EQ(pb_get16(got.b + 12), 0x86dd, "over IPv6");
		CHECK_EQ(pb_get16(got.b + ETH + 40 + 2), CPORT6 + i,
			 "to its client");
	}
	CHECK_EQ(v4, 2, "SYNs to the IPv4 backend");
	CHECK_EQ(v6, 2, "SYNs to the IPv6 backend");
	CHECK_EQ(e->w->bst[s][0].active, 2, "active on the IPv6 backend");
	CHECK_EQ(e->w->bst[s][1].active, 2, "active on the IPv4 backend");
	ph_check_no_drops(e->w, "mixed pool");
}

/* Packet too big with MTU @p mtu from a router on the client's side to
 * @p vip, quoting frame @p sent (what we sent the client). */
static void
client_too_big(struct pb_frame *f, const struct pb_frame *sent,
		 const uint8_t vip[16], uint32_t mtu)
{
	uint8_t quote[128], rtr[16];
	struct pb_dg6 err6;

	assert_true(sent->len - ETH <= sizeof(quote));
	memcpy(quote, sent->b + ETH, sent->len - ETH);
	pb_ip6(rtr, 0x2001, 0xdb8, 1, 0xfe);
	too_big6(&err6, rtr, vip, mtu, quote, sent->len - ETH);
	pb_ipv6_frame(f, mac_port[0], mac_c, &err6);
}

/* @p got is the fragmentation needed with MTU @p mtu the IPv4 backend
 * must get for the packet too big of client_too_big(): from the SNAT
 * address, quoting its own packet to SNAT port @p sport, the checksums
 * whole. */
static void
check_frag_needed4(const struct pb_frame *got, uint16_t sport, uint16_t mtu)
{
	const uint8_t *ip = got->b + ETH, *ic = ip + 20, *q = ic + 8;

	CHECK_EQ(pb_get16(got->b + 12), 0x0800, "IPv4");
	CHECK_EQ(memcmp(got->b, mac_be4, 6), 0, "to the backend's MAC");
	CHECK_EQ(pb_get32(ip + 12), IP_SNAT, "from the SNAT address");
	CHECK_EQ(pb_get32(ip + 16), IP_BE4, "to the backend");
	CHECK_EQ(ip[8], 63, "TTL from the hop limit less one");
	CHECK_EQ(pb_csum(ip, 20), 0, "IPv4 header checksum");
	CHECK_EQ(ic[0], 3, "destination unreachable");
	CHECK_EQ(ic[1], 4, "fragmentation needed");
	CHECK_EQ(pb_get16(ic + 6), mtu, "MTU less 20");
	CHECK_EQ(pb_csum(ic, got->len - ETH - 20), 0, "ICMP checksum");
	CHECK_EQ(pb_get32(q + 12), IP_BE4, "quoting the backend's packet");
	CHECK_EQ(pb_get32(q + 16), IP_SNAT, "to the SNAT address");
	CHECK_EQ(pb_get16(q + 20), BPORT6, "from the backend's port");
	CHECK_EQ(pb_get16(q + 22), sport, "to the SNAT port");
}

/*
 * Packet too big from a router on the client's side, about the SYN-ACK
 * we sent the client: the backend gets fragmentation needed from the
 * SNAT address with the MTU 20 bytes lower, quoting its own SYN-ACK as
 * it sent it (backend -> SNAT), the checksums whole.
 */
static void
test_fnat64_client_too_big(void **state)
{
	struct ph_env *e = env64(state);
	uint8_t vip[16], snat[16], c[16];
	static const uint32_t mtus[][2] = {{1300, 1280}, {600, 1260}};
	struct pb_frame f, got, sa;
	struct pb_dg6 in;
	struct pb_dg b;
	uint16_t sport;

	client_syn(&in, &f, vip, snat, c);
	sport = c2b(e, &in, 0, BPORT6, "SYN to the backend");
	from4(&b, BPORT6, sport, PB_PROTO_TCP, PB_SYN | PB_ACK, 5000, 1001);
	pb_ipv4_frame(&f, mac_port[1], mac_be4, &b);
	ph_rx(e, 1, &f);
	ph_expect_one(e, 0, 0, &sa, "SYN-ACK to the client");

	/* MTU 600, which no IPv6 link has, is taken as 1280: 1260. */
	for (unsigned int i = 0; i < NELEM(mtus); i++) {
		client_too_big(&f, &sa, vip, mtus[i][0]);
		ph_rx(e, 0, &f);
		ph_expect_one(e, 1, 0, &got, "fragmentation needed");
		check_frag_needed4(&got, sport, (uint16_t)mtus[i][1]);
		CHECK_EQ(e->w->st.icmp64_translated, i + 1, "translated");
		CHECK_EQ(e->w->st.icmp_mtu_clamped, i, "MTU raised for 600");
	}
	ph_check_no_drops(e->w, "client's packet too big");
}

/* @p got is the SYN to an IPv4 backend that fnat64 makes of the
 * client's @p in, byte for byte: its backend port (host order), its SNAT
 * port in @p sport. */
static uint16_t
syn4_check(const struct pb_frame *got, const struct pb_dg6 *in,
	   uint16_t *sport, const char *what)
{
	struct pb_frame want;
	struct pb_dg o;
	uint16_t bport;

	CHECK_EQ(pb_get16(got->b + 12), 0x0800, "an IPv4 SYN");
	*sport = pb_get16(got->b + ETH + 20);
	bport = pb_get16(got->b + ETH + 22);
	to4(&o, in, *sport, bport);
	pb_ipv4_frame(&want, mac_be4, mac_port[1], &o);
	ph_expect_same(got, &want, what);
	return bport;
}

/* The one frame sent is syn4_check()'s SYN. */
static uint16_t
syn4_out(struct ph_env *e, const struct pb_dg6 *in, uint16_t *sport,
	 const char *what)
{
	struct pb_frame got;

	ph_expect_one(e, 1, 0, &got, what);
	return syn4_check(&got, in, sport, what);
}

/* The IPv4 backend on @p bport refuses the SYN from SNAT port @p sport. */
static void
backend4_refuses(struct ph_env *e, uint16_t bport, uint16_t sport)
{
	struct pb_frame f;
	struct pb_dg b;

	from4(&b, bport, sport, PB_PROTO_TCP, PB_RST | PB_ACK, 0, 1001);
	b.plen = 0;
	pb_ipv4_frame(&f, mac_port[1], mac_be4, &b);
	ph_rx(e, 1, &f);
}

/*
 * Retries of fnat64 flows: the TCP service on rr over two IPv4 backends
 * (one host, two ports). The one that refuses the SYN with a RST has the
 * client's SYN, from its IPv6 copy, translated again for the other one,
 * whose SYN-ACK reaches the client: one flow, one retry, one error on the
 * refusing backend, the copy released, the refused trial's port given
 * back to the IPv4 slice it came from. A SYN nobody answers is retried
 * when its flow times out, and once each backend had its trial the
 * client gets a RST from the VIP.
 */
static void
test_fnat64_retry(void **state)
{
	struct ph_env *e = env64(state);
	struct lb_dpconf *d = ph_table_next(e);
	int s = (int)d->nb_svc - 2;
	uint8_t vip[16], snat[16], c[16];
	uint16_t p1, p2, sp1, sp2, q1, q2;
	struct pb_frame f;
	struct pb_dg6 in;
	struct pb_dg b;

	be4_set(d, (uint32_t)s, 1, BPORT6 + 1);
	publish(e, d);

	client_syn(&in, &f, vip, snat, c);
	ph_rx(e, 0, &f);
	p1 = syn4_out(e, &in, &sp1, "first trial");
	backend4_refuses(e, p1, sp1);
	p2 = syn4_out(e, &in, &sp2, "second trial");
	CHECK_EQ(p1 != p2 && (p1 == BPORT6 || p2 == BPORT6), 1,
		 "the other backend");
	CHECK_EQ(ph_take(e, 0, 0, NULL, 0), 0, "nothing to the client yet");
	CHECK_EQ(e->w->st.syn_retries, 1, "retries");
	CHECK_EQ(e->w->bst[s][p1 - BPORT6].errors, 1, "failed trials");
	CHECK_EQ(e->w->st.nat64_in, 0, "the RST not passed on");
	from4(&b, p2, sp2, PB_PROTO_TCP, PB_SYN | PB_ACK, 5000, 1001);
	b2c(e, &b, vip, TCP6_PORT, 0, "SYN-ACK of the other backend");
	CHECK_EQ(e->w->st.flows_created, 1, "flows created");
	CHECK_EQ(e->w->hold_nfree, e->w->hold_cap, "SYN copy released");
	CHECK_EQ(lb_snat_addr_used(e->w->snat, htonl(IP_SNAT)), 1,
		 "the refused trial's IPv4 port freed");
	CHECK_EQ(e->w->snat->stats.bad_free, 0, "freed where taken");
	CHECK_EQ(e->w->snat6->stats.bad_free, 0, "nothing freed as IPv6");

	/* Silence: the SYN timeout fails each trial in turn. */
	client_syn_rx(e, &in, &f, vip, snat, c, CPORT6 + 1);
	q1 = syn4_out(e, &in, &sp1, "silent first trial");
	/* The client's own retransmission does not restart the timer. */
	ph_rx(e, 0, &f);
	CHECK_EQ(syn4_out(e, &in, &sp2, "retransmitted SYN"), q1,
		 "to the same backend");
	syn_timeout(e, 1);
	q2 = syn4_out(e, &in, &sp2, "after the SYN timeout");
	CHECK_EQ(q1 != q2, 1, "the other backend");
	CHECK_EQ(e->w->st.syn_retries, 2, "retries");
	last_trial_fails(e, c, CPORT6 + 1, 2);
	CHECK_EQ(e->w->snat->stats.bad_free, 0, "freed where taken");
	CHECK_EQ(e->w->snat6->stats.bad_free, 0, "nothing freed as IPv6");
}

/*
 * A mixed pool (an IPv6 and an IPv4 backend, rr): a trial refused by
 * one family goes on to the backend of the other, an fnat66 flow after
 * an fnat64 one and the other way round, each SYN-ACK reaching its
 * client over IPv6 and each refused port freed in its own slice.
 */
static void
test_fnat64_mixed_retry(void **state)
{
	struct ph_env *e = env64_mixed(state, true);
	uint8_t vip[16], snat[16], c[16];
	unsigned int to4_from6 = 0, to6_from4 = 0;
	int s = (int)e->dp.conf->nb_svc - 2;

	for (uint16_t i = 0; i < 4; i++) {
		uint16_t cport = (uint16_t)(CPORT6 + i), sport;
		struct pb_frame f, got;
		struct pb_dg6 in;
		bool first4;

		client_syn_rx(e, &in, &f, vip, snat, c, cport);
		ph_expect_one(e, 1, 0, &got, "first trial");
		first4 = pb_get16(got.b + 12) == 0x0800;
		if (first4) {
			backend4_refuses(e, BPORT6,
					 pb_get16(got.b + ETH + 20));
			ph_expect_one(e, 1, 0, &got, "second trial");
			CHECK_EQ(pb_get16(got.b + 12), 0x86dd, "over IPv6");
			to6_from4++;
		} else {
			backend_refuses(e, BPORT6, snat,
					pb_get16(got.b + ETH + 40));
			syn4_out(e, &in, &sport, "second trial, as IPv4");
			to4_from6++;
		}
		if (first4) {
			struct pb_dg6 r;

			seg6(&r, A_PEER1, BPORT6, snat,
			     pb_get16(got.b + ETH + 40), PB_PROTO_TCP,
			     PB_SYN | PB_ACK, 7, 1001, 64);
			pb_ipv6_frame(&f, mac_port[1], mac_peer1, &r);
		} else {
			struct pb_dg b;

			from4(&b, BPORT6, sport, PB_PROTO_TCP, PB_SYN | PB_ACK,
			      7, 1001);
			pb_ipv4_frame(&f, mac_port[1], mac_be4, &b);
		}
		ph_rx(e, 1, &f);
		ph_expect_one(e, 0, 0, &got, "SYN-ACK to the client");
		CHECK_EQ(pb_get16(got.b + 12), 0x86dd, "over IPv6");
		CHECK_EQ(pb_get16(got.b + ETH + 40 + 2), cport, "to its client");
	}
	CHECK_EQ(to4_from6 > 0 && to6_from4 > 0, 1, "both ways");
	CHECK_EQ(e->w->st.syn_retries, 4, "retries");
	CHECK_EQ(e->w->st.flows_created, 4, "flows created");
	CHECK_EQ(e->w->bst[s][0].errors, to4_from6, "IPv6 backend's errors");
	CHECK_EQ(e->w->bst[s][1].errors, to6_from4, "IPv4 backend's errors");
	CHECK_EQ(e->w->hold_nfree, e->w->hold_cap, "SYN copies released");
	CHECK_EQ(lb_snat_addr_used(e->w->snat, htonl(IP_SNAT)), to4_from6,
		 "IPv4 ports of the flows that stayed");
	CHECK_EQ(lb_snat_addr_used(e->w->snat6, lb_flow6_fold(e->w->ft, snat)),
		 to6_from4, "IPv6 ports of the flows that stayed");
	CHECK_EQ(e->w->snat->stats.bad_free, 0, "IPv4 frees where taken");
	CHECK_EQ(e->w->snat6->stats.bad_free, 0, "IPv6 frees where taken");
	ph_check_no_drops(e->w, "mixed retries");
}

/*
 * The deferred queue of an fnat64 flow: the one IPv4 backend refuses
 * the SYN, its copy waits (retry gap 50 ms) and is translated again from
 * a new flow once the gap is over; the backend accepts it this time and
 * the client gets its SYN-ACK.
 */
static void
test_fnat64_deferq(void **state)
{
	struct ph_env *e = env64(state);
	uint8_t vip[16], snat[16], c[16];
	struct pb_frame f, got;
	struct pb_dg6 in;
	struct pb_dg b;
	uint16_t p, sp;
	uint64_t t0;

	deferq_on(e);

	client_syn(&in, &f, vip, snat, c);
	ph_rx(e, 0, &f);
	p = syn4_out(e, &in, &sp, "first trial");
	t0 = ph_now_ns(e);
	backend4_refuses(e, p, sp);
	ph_expect_quiet(e, "the only backend refused");
	CHECK_EQ(e->w->st.deferred, 1, "SYNs queued");
	CHECK_EQ(e->w->hold_nfree, e->w->hold_cap - 1, "its copy kept");
	CHECK_EQ(lb_snat_addr_used(e->w->snat, htonl(IP_SNAT)), 0,
		 "no IPv4 port held while queued");
	CHECK_EQ(retry_gap_out(e, t0, &got), 1, "the queued SYN sent again");
	CHECK_EQ(syn4_check(&got, &in, &sp, "queued SYN, as IPv4"), p,
		 "to the backend");
	CHECK_EQ(e->w->st.flows_created, 2, "flows: the first trial's and "
		 "the queue's");
	from4(&b, p, sp, PB_PROTO_TCP, PB_SYN | PB_ACK, 5000, 1001);
	b2c(e, &b, vip, TCP6_PORT, 0, "SYN-ACK to the client");
	CHECK_EQ(e->w->hold_nfree, e->w->hold_cap, "SYN copy released");
	CHECK_EQ(e->w->snat->stats.bad_free, 0, "freed where taken");
	ph_check_no_drops(e->w, "fnat64 deferred queue");
}

/* ---- HTTP following over fnat64 ---- */

/* env66_http() whose TCP service's backend is the IPv4 one instead. */
static struct ph_env *
env64_http(void **state, const struct lb_admit_conf *ac, bool gov)
{
	struct ph_env *e = env66_http(state, ac, gov);
	struct lb_dpconf *d = ph_table_next(e);

	be4_set(d, d->nb_svc - 2, 0, BPORT6);
	publish(e, d);
	learn4(e);
	return e;
}

/* The handshake through the VIP to the IPv4 backend, byte for byte, the
 * client's ACK carrying nothing; @p h then sends over IPv6 as an fnat66
 * client does (http6_send()). */
static void
http64_open(struct ph_env *e, struct http6 *h)
{
	struct pb_frame f;
	struct pb_dg6 in;
	struct pb_dg b;

	memset(h, 0, sizeof(*h));
	h->e = e;
	client_syn(&in, &f, h->vip, h->snat, h->c);
	ph_rx(e, 0, &f);
	CHECK_EQ(syn4_out(e, &in, &h->sport, "SYN to the IPv4 backend"),
		 BPORT6, "to its port");
	from4(&b, BPORT6, h->sport, PB_PROTO_TCP, PB_SYN | PB_ACK, 5000, 1001);
	b2c(e, &b, h->vip, TCP6_PORT, 0, "SYN-ACK to the client");
	h->cnxt = 1001;
	h->bnxt = 5001;
	seg6(&in, A_C, CPORT6, h->vip, TCP6_PORT, PB_PROTO_TCP, PB_ACK,
	     h->cnxt, h->bnxt, 64);
	in.l4.plen = 0;
	c2b(e, &in, h->sport, BPORT6, "ACK to the backend");
}

/* @p text from the IPv6 client (@p to_be) or the IPv4 backend,
 * translated byte for byte for the other side. */
static void
http64_pass(struct http6 *h, bool to_be, const char *text, const char *what)
{
	uint16_t len = (uint16_t)strlen(text);
	struct pb_frame f, want;
	struct pb_dg b;

	if (to_be) {
		struct pb_dg6 in;

		http6_send(h, true, text, 0, &in, &f);
		to4(&b, &in, h->sport, BPORT6);
		pb_ipv4_frame(&want, mac_be4, mac_port[1], &b);
		ph_expect_frame(h->e, 1, 0, &want, what);
		return;
	}
	from4(&b, BPORT6, h->sport, PB_PROTO_TCP, PB_ACK | PB_PSH, h->bnxt,
	      h->cnxt);
	b.data = (const uint8_t *)text;
	b.plen = len;
	h->bnxt += len;
	b2c(h->e, &b, h->vip, TCP6_PORT, 0, what);
}

/* The RST that resets the IPv4 backend of @p h at the request it never
 * got: from the SNAT address, don't-fragment. */
static void
rst4(const struct http6 *h, struct pb_frame *rst)
{
	struct pb_dg b;

	from4(&b, h->sport, BPORT6, PB_PROTO_TCP, PB_RST, h->cnxt, 0);
	b.src = IP_SNAT;
	b.dst = IP_BE4;
	b.frag = PB_IP_DF;
	b.win = 0;
	b.plen = 0;
	pb_ipv4_frame(rst, mac_be4, mac_port[1], &b);
}

/*
 * An HTTP exchange followed over fnat66, or over fnat64 when @p be4 (an
 * IPv6 client, an IPv4 backend): request and response through byte for
 * byte, the response's status and the backend's X-SPL in the feedback
 * ring with the service and backend, a 503 counted as the backend's
 * error.
 */
static void
http_follow(void **state, bool be4)
{
	struct ph_env *e = be4 ? env64_http(state, NULL, false)
			       : env66_http(state, NULL, false);
	void (*pass)(struct http6 *, bool, const char *, const char *) =
		be4 ? http64_pass : http6_pass;
	int s = (int)e->dp.conf->nb_svc - 2;
	struct lb_fb r[8];
	struct http6 h;
	double spl;
	unsigned int n;

	if (be4)
		http64_open(e, &h);
	else
		http6_open(e, &h);
	pass(&h, true, "GET / HTTP/1.1\r\nHost: a\r\n\r\n", "request");
	pass(&h, false,
	     "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
	     "X-SPL: 0.75\r\n\r\nok",
	     "response");
	n = fb6_take(e, r, NELEM(r));
	CHECK_EQ(n, 2, "HTTP and SPL records");
	CHECK_EQ(r[0].kind, LB_FB_HTTP, "HTTP record");
	CHECK_EQ(r[0].u32, 200, "status");
	CHECK_EQ(r[0].svc, s, "its service");
	CHECK_EQ(r[0].be, 0, "its backend");
	CHECK_EQ(r[1].kind, LB_FB_SPL, "SPL record");
	memcpy(&spl, &r[1].v, sizeof(spl));
	assert_true(spl == 0.75);

	pass(&h, true, "GET /b HTTP/1.1\r\nHost: a\r\n\r\n", "second request");
	pass(&h, false,
	     "HTTP/1.1 503 Service Unavailable\r\n"
	     "Content-Length: 0\r\n\r\n",
	     "second response");
	n = fb6_take(e, r, NELEM(r));
	CHECK_EQ(n, 1, "an HTTP record, no SPL");
	CHECK_EQ(r[0].u32, 503, "status");
	CHECK_EQ(e->w->bst[s][0].http_responses, 2, "responses");
	CHECK_EQ(e->w->bst[s][0].http_5xx, 1, "5xx counted");
	CHECK_EQ(e->w->bst[s][0].sched_errors, 1, "an error to the scheduler");
	ph_check_no_drops(e->w, be4 ? "followed fnat64" : "followed fnat66");
}

static void
test_fnat64_http_follow(void **state)
{
	http_follow(state, true);
}

/*
 * A request over the service's requests/s (admit-rate 1, keyed by the
 * IPv6 client) gets the 429 over IPv6; the backend gets a RST from the
 * SNAT address, IPv4 with don't-fragment over fnat64 (@p be4).
 */
static void
http_refuse_rate(void **state, bool be4)
{
	void (*pass)(struct http6 *, bool, const char *, const char *) =
		be4 ? http64_pass : http6_pass;
	struct lb_admit_conf ac;
	struct pb_frame rst;
	struct ph_env *e;
	struct http6 h;
	int s;

	lb_admit_conf_default(&ac);
	ac.rate = 1;
	ac.burst = 1;
	e = be4 ? env64_http(state, &ac, false) : env66_http(state, &ac, false);
	s = (int)e->dp.conf->nb_svc - 2;
	if (be4)
		http64_open(e, &h);
	else
		http6_open(e, &h);
	CHECK_EQ(e->w->st.flows_created, 1, "not refused as a flow");
	pass(&h, true, "GET / HTTP/1.1\r\nHost: a\r\n\r\n", "request");
	pass(&h, false, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
	     "response");
	rst4(&h, &rst);
	expect_refused(&h, "GET /b HTTP/1.1\r\nHost: a\r\n\r\n", 429,
		       be4 ? &rst : NULL);
	CHECK_EQ(e->w->st.l7_refused[LB_L7_REJ_RATE], 1, "refused by rate");
	CHECK_EQ(e->w->st.admit_svc[s].n[LB_ADMIT_PASS], 1, "one admitted");
}

static void
test_fnat64_http_refuse(void **state)
{
	http_refuse_rate(state, true);
}

/*
 * The governor throttles an IPv6 client's request, over fnat66 or over
 * fnat64 when @p be4 (multiplier 100: every rank from 1 with certainty,
 * as lb-control would publish it under overload) with a 503; a request
 * split over two segments is held until its header block ends, then
 * goes on whole, both segments in order (translated to IPv4 over
 * fnat64).
 */
static void
http_governor(void **state, bool be4)
{
	struct ph_env *e = be4 ? env64_http(state, NULL, true)
			       : env66_http(state, NULL, true);
	int s = (int)e->dp.conf->nb_svc - 2;
	struct pb_frame f, want, got[2], rst;
	struct pb_dg6 in[2], out;
	struct http6 h;
	double m = 100.0;
	uint64_t b;

	if (be4)
		http64_open(e, &h);
	else
		http6_open(e, &h);
	/* Not throttled (M 0): held, then released. */
	http6_send(&h, true, "GET / HTTP/1.1\r\n", 0, &in[0], &f);
	ph_expect_quiet(e, "the first half held");
	http6_send(&h, true, "Host: a\r\n\r\n", 0, &in[1], &f);
	CHECK_EQ(ph_take(e, 1, 0, got, 2), 2, "both halves to the backend");
	for (int i = 0; i < 2; i++) {
		if (be4) {
			struct pb_dg o;

			to4(&o, &in[i], h.sport, BPORT6);
			pb_ipv4_frame(&want, mac_be4, mac_port[1], &o);
		} else {
			seg6_out(&out, &in[i], h.snat, h.sport, h.be, BPORT6);
			pb_ipv6_frame(&want, mac_peer1, mac_port[1], &out);
		}
		ph_expect_same(&got[i], &want, i == 0 ? "held half" : "last");
	}
	ph_expect_quiet(e, "nothing else");
	CHECK_EQ(e->w->st.l7_held, 1, "one segment held");
	(be4 ? http64_pass : http6_pass)(
		&h, false, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
		"response");
	memcpy(&b, &m, sizeof(b));
	atomic_store(&e->gov_m[s], b);
	rst4(&h, &rst);
	expect_refused(&h, "GET /b HTTP/1.1\r\nHost: a\r\n\r\n", 503,
		       be4 ? &rst : NULL);
	CHECK_EQ(e->w->st.l7_refused[LB_L7_REJ_GOVERNOR], 1, "governor");
	CHECK_EQ(e->w->st.gov[s].throttled[3], 1, "throttled rank 3");
}

static void
test_fnat64_http_governor(void **state)
{
	http_governor(state, true);
}

/* Two workers: the IPv4 reply reaches the worker that does not own its
 * IPv4 SNAT port, which hands it over; the owner translates it. */
static void
test_fnat64_redirect(void **state)
{
	struct ph_env *e = env64_n(state, 2, false);
	const struct lb_worker *w0 = e->dp.w[0], *w1 = e->dp.w[1];
	uint8_t vip[16], snat[16], c[16];
	struct pb_frame f, want, got;
	struct pb_dg6 in, out;
	struct pb_dg b;
	uint16_t sport;

	client_syn(&in, &f, vip, snat, c);
	ph_inject(e, 0, 1, &f);
	ph_poll(e, 1);
	ph_expect_one(e, 1, 1, &got, "SYN through worker 1");
	CHECK_EQ(pb_get16(got.b + 12), 0x0800, "as IPv4");
	sport = pb_get16(got.b + ETH + 20);
	CHECK_EQ(lb_snat_owner(w1->snat, htons(sport)), 1, "worker 1's port");

	from4(&b, BPORT6, sport, PB_PROTO_TCP, PB_SYN | PB_ACK, 5000, 1001);
	pb_ipv4_frame(&f, mac_port[1], mac_be4, &b);
	ph_inject(e, 1, 0, &f);
	ph_poll(e, 0);
	ph_expect_quiet(e, "worker 0 with worker 1's reply");
	CHECK_EQ(w0->st.redirect_out, 1, "worker 0 handing over");
	ph_poll(e, 1);
	to6(&out, &b, vip, TCP6_PORT);
	pb_ipv6_frame(&want, mac_c, mac_port[0], &out);
	ph_expect_frame(e, 0, 1, &want, "SYN-ACK through worker 1");
	CHECK_EQ(w1->st.nat64_in, 1, "worker 1 translated it");
	ph_check_no_drops(w0, "worker 0");
	ph_check_no_drops(w1, "worker 1");
}

/* No IPv4 SNAT address in the table: a new flow to the IPv4 backend is
 * refused and counted, nothing sent, nothing held. */
static void
test_fnat64_no_snat4(void **state)
{
	struct ph_env *e = env64(state);
	struct lb_dpconf *d = ph_table_next(e);
	uint8_t vip[16], snat[16], c[16];
	struct pb_frame f;
	struct pb_dg6 in;

	d->nb_snat = 0;
	ph_table_publish(e, d);
	for (int i = 0; i < 50; i++)
		ph_poll_all(e);
	client_syn(&in, &f, vip, snat, c);
	ph_rx(e, 0, &f);
	ph_expect_quiet(e, "SYN with no IPv4 SNAT address");
	CHECK_EQ(e->w->st.drop[LB_DROP_SNAT_FULL], 1, "snat_ports_full");
	CHECK_EQ(e->w->st.flows_created, 0, "no flow");
	CHECK_EQ(e->w->st.nat64_out, 0, "nothing translated");
}

/* ---- ICMP errors on two workers -----------------------------------------
 * The flow is worker 1's (the client's SYN came in on its queue), the
 * error arrives on worker 0's: it reaches worker 1, which translates it,
 * as IPv4's do (worker_test.c test_redirect, test_icmp_owner).
 */

/* The client's SYN to the TCP VIP through worker 1 of @p e, in @p in;
 * what it sent the backend in @p syn. */
static void
syn_w1(struct ph_env *e, struct pb_dg6 *in, struct pb_frame *syn)
{
	uint8_t vip[16], snat[16], c[16];
	struct pb_frame f;

	client_syn(in, &f, vip, snat, c);
	ph_inject(e, 0, 1, &f);
	ph_poll(e, 1);
	ph_expect_one(e, 1, 1, syn, "SYN through worker 1");
}

/* The error @p f on worker 0's queue of @p port: worker 0 hands it to
 * worker 1 (its @p nth hand-over), sending nothing itself. */
static void
err_on_w0(struct ph_env *e, uint16_t port, const struct pb_frame *f,
	  uint64_t nth)
{
	ph_inject(e, port, 0, f);
	ph_poll(e, 0);
	ph_expect_quiet(e, "worker 0 with an error about worker 1's flow");
	CHECK_EQ(e->dp.w[0]->st.redirect_out, nth, "worker 0 handing it on");
	ph_poll(e, 1);
	CHECK_EQ(e->dp.w[1]->st.redirect_in, nth, "worker 1 taking it");
}

/* The checks of a test on two workers, at its end: worker 0 translated
 * nothing, dropped nothing, made no flow. */
static void
check_w0_idle(const struct ph_env *e)
{
	const struct lb_worker *w0 = e->dp.w[0];

	CHECK_EQ(w0->st.icmp6_translated, 0, "worker 0 translating");
	CHECK_EQ(w0->st.icmp64_translated, 0, "worker 0 translating");
	CHECK_EQ(w0->st.flows_created, 0, "worker 0's flows");
	CHECK_EQ(e->dp.w[1]->st.flows_created, 1, "worker 1's flows");
	ph_check_no_drops(w0, "worker 0");
}

/*
 * Backend side: an error to a SNAT address on worker 0's queue, quoting
 * the SYN worker 1 sent with a port of its slice: the port says whose
 * flow it is, worker 1 translates it for the client. fnat66: packet too
 * big from the backend's path; fnat64 (@p v4): fragmentation needed to
 * the IPv4 SNAT address, quoting a port of worker 1's IPv4 slice, made
 * the client's packet too big.
 */
static void
backend_err_owner(struct ph_env *e, bool v4)
{
	const struct lb_worker *w1 = e->dp.w[1];
	struct pb_frame f, want, syn;
	struct pb_dg6 in;
	uint16_t sport;

	syn_w1(e, &in, &syn);
	CHECK_EQ(pb_get16(syn.b + 12), v4 ? 0x0800 : 0x86dd, "SYN's family");
	sport = pb_get16(syn.b + ETH + (v4 ? 20 : 40));
	CHECK_EQ(lb_snat_owner(v4 ? w1->snat : w1->snat6, htons(sport)), 1,
		 "worker 1's port");
	if (v4)
		err64_frames(&f, &want, &syn, &in, 4, 1400, 2, 0, 1420);
	else
		too_big66_frames(&f, &want, &syn, &in, 1400, 1400);
	err_on_w0(e, 1, &f, 1);
	ph_expect_frame(e, 0, 1, &want, "packet too big translated by worker 1");
	CHECK_EQ(v4 ? w1->st.icmp64_translated : w1->st.icmp6_translated, 1,
		 "worker 1 translating");
	check_w0_idle(e);
	ph_check_no_drops(w1, "worker 1");
}

static void
test_fnat66_too_big_owner(void **state)
{
	backend_err_owner(env66_n(state, 2), false);
}

static void
test_fnat64_frag_needed_owner(void **state)
{
	backend_err_owner(env64_n(state, 2, false), true);
}

/* Packet too big to the VIP quoting @p sent with byte @p off of its
 * IPv6 packet changed, on worker @p q's queue, both workers polled from
 * @p q on: nothing is sent. */
static void
too_big_changed(struct ph_env *e, const struct pb_frame *sent, uint32_t off,
		uint16_t q, const char *what)
{
	static struct pb_frame s, f;
	uint8_t vip[16];

	s = *sent;
	s.b[ETH + off] ^= 0x55;
	addr(vip, A_VIP);
	client_too_big(&f, &s, vip, 1280);
	ph_inject(e, 0, q, &f);
	ph_poll(e, q);
	ph_poll(e, (uint16_t)(1 - q));
	ph_expect_quiet(e, what);
}

/*
 * fnat66, client side: packet too big from a router on the client's
 * path to the VIP, quoting the SYN-ACK worker 1 sent the client. The
 * error's addresses (router, VIP) do not say whose flow it is: worker 0,
 * without it, hands it on, and worker 1 translates it for the backend,
 * from the SNAT address, quoting the SYN-ACK as the backend sent it.
 * On worker 1's own queue it stays there; one quoting a flow nobody has
 * goes round the workers once and is dropped by the last; one quoting
 * no service's VIP and port does not go round.
 */
static void
test_fnat66_client_too_big_owner(void **state)
{
	struct ph_env *e = env66_n(state, 2);
	const struct lb_worker *w0 = e->dp.w[0], *w1 = e->dp.w[1];
	static uint8_t quote[128];
	uint8_t vip[16], snat[16], be[16];
	struct pb_frame f, want, syn, sa;
	struct pb_dg6 in, sa6, err;
	uint16_t sport;

	syn_w1(e, &in, &syn);
	sport = pb_get16(syn.b + ETH + 40);
	addr(vip, A_VIP);
	addr(snat, A_SNAT);
	addr(be, A_PEER1);
	seg6(&sa6, A_PEER1, BPORT6, snat, sport, PB_PROTO_TCP,
	     PB_SYN | PB_ACK, 5000, 1001, 64);
	pb_ipv6_frame(&f, mac_port[1], mac_peer1, &sa6);
	ph_inject(e, 1, 1, &f);
	ph_poll(e, 1);
	ph_expect_one(e, 0, 1, &sa, "SYN-ACK through worker 1");

	/* The backend's SYN-ACK as it left it, had it gone to the
	 * backend: its own addresses and ports, the hop limit we sent. */
	sa6.hlim = 63;
	too_big6(&err, snat, be, 1280, quote, (uint32_t)pb_ipv6(quote, &sa6));
	err.hlim = 63;
	pb_ipv6_frame(&want, mac_peer1, mac_port[1], &err);

	client_too_big(&f, &sa, vip, 1280);
	err_on_w0(e, 0, &f, 1);
	ph_expect_frame(e, 1, 1, &want, "packet too big translated by worker 1");
	CHECK_EQ(w1->st.icmp6_translated, 1, "worker 1 translating");

	ph_inject(e, 0, 1, &f);
	ph_poll(e, 1);
	ph_expect_frame(e, 1, 1, &want, "packet too big on worker 1's queue");
	CHECK_EQ(w1->st.icmp6_translated, 2, "worker 1 translating");
	CHECK_EQ(w1->st.redirect_out, 0, "worker 1 kept its own");
	check_w0_idle(e);
	ph_check_no_drops(w1, "worker 1");

	/* Another client port: nobody's flow. */
	too_big_changed(e, &sa, 43, 1, "an error about no flow");
	CHECK_EQ(w1->st.redirect_out, 1, "worker 1 handing it on");
	CHECK_EQ(w0->st.redirect_out, 1, "worker 0 not handing it back");
	CHECK_EQ(w0->st.drop[LB_DROP_NO_FLOW], 1, "dropped by the last worker");
	CHECK_EQ(w1->st.drop[LB_DROP_NO_FLOW], 0, "worker 1");

	/* Another VIP port: no service's, not handed on. */
	too_big_changed(e, &sa, 41, 0, "an error about no service");
	CHECK_EQ(w0->st.drop[LB_DROP_NO_FLOW], 2, "dropped by worker 0");
	CHECK_EQ(w0->st.redirect_out, 1, "not handed on");
	CHECK_EQ(w1->st.icmp6_translated, 2, "nothing more translated");
}

/*
 * fnat64, client side: packet too big from the client's path to the
 * VIP on worker 0's queue, quoting the SYN-ACK worker 1 sent the client:
 * handed on, worker 1 makes the backend's fragmentation needed of it.
 */
static void
test_fnat64_client_too_big_owner(void **state)
{
	struct ph_env *e = env64_n(state, 2, false);
	const struct lb_worker *w1 = e->dp.w[1];
	uint8_t vip[16];
	struct pb_frame f, got, syn;
	struct pb_dg6 in;
	struct pb_dg b;
	uint16_t sport;

	syn_w1(e, &in, &syn);
	sport = pb_get16(syn.b + ETH + 20);
	from4(&b, BPORT6, sport, PB_PROTO_TCP, PB_SYN | PB_ACK, 5000, 1001);
	pb_ipv4_frame(&f, mac_port[1], mac_be4, &b);
	ph_inject(e, 1, 1, &f);
	ph_poll(e, 1);
	ph_expect_one(e, 0, 1, &got, "SYN-ACK through worker 1");

	addr(vip, A_VIP);
	client_too_big(&f, &got, vip, 1300);
	err_on_w0(e, 0, &f, 1);
	ph_expect_one(e, 1, 1, &got, "fragmentation needed from worker 1");
	check_frag_needed4(&got, sport, 1280);
	CHECK_EQ(w1->st.icmp64_translated, 1, "worker 1 translating");
	check_w0_idle(e);
	ph_check_no_drops(w1, "worker 1");
}

/* ---- neighbours shared between workers, and their snapshot ------------ */

/* A dataplane with the IPv6 parts and @p nb workers, what it sent at
 * start taken. */
static struct ph_env *
env6_n(void **state, uint16_t nb)
{
	struct ph_env *e = ph_env_new(state);
	const char *const *sets[1] = {conf4};
	struct pb_frame got[4];

	e->dp.conf = ph_conf_compile(e, sets, 1, NULL);
	conf6(e->dp.conf);
	e->dp.flows = FLOWS;
	ph_env_start(e, nb);
	ph_poll_all(e);
	for (uint16_t q = 0; q < nb; q++)
		for (uint16_t p = 0; p < NB_PORTS; p++)
			while (ph_take(e, p, q, got, 4) > 0)
				;
	return e;
}

/* The client's advertisement reaches worker 0 only (RSS), yet worker 1
 * answers the client's echo without soliciting it: what one worker
 * learns, the others learn, for IPv6 as for ARP. */
static void
test_nd_shared(void **state)
{
	struct ph_env *e = env6_n(state, 2);
	struct lb_worker *w1 = e->dp.w[1];
	struct lb_neigh_info info;
	struct pb_frame f, want;
	struct pb_dg6 d;
	uint8_t c[16], lb0[16];

	addr(c, A_C);
	addr(lb0, A_LB0);
	na_frame(&f, c, mac_c, false, NULL, NULL);
	ph_inject(e, 0, 0, &f);
	ph_poll(e, 0);
	assert_int_equal(lb_neigh6_get(w1->neigh6, c, ph_now_ns(e), &info),
			 -ENOENT);
	ph_settle(e);
	assert_int_equal(lb_neigh6_get(w1->neigh6, c, ph_now_ns(e), &info), 0);
	CHECK_EQ(info.state, LB_NEIGH_REACHABLE, "worker 1's entry");
	assert_memory_equal(info.mac, mac_c, 6);
	echo_in(&f, c, lb0, mac_c, &d);
	ph_inject(e, 0, 1, &f);
	ph_poll(e, 1);
	echo_out(&want, &d, mac_c);
	ph_expect_frame(e, 0, 1, &want, "reply from worker 1 at once");
	CHECK_EQ(w1->st.nd_solicits, 0, "worker 1's solicitations");
	/* What is not on a connected prefix of the port it came by is not
	 * learnt, so not shared either. */
	addr(c, A_PEER1);
	na_frame(&f, c, mac_peer1, false, NULL, NULL);
	ph_inject(e, 0, 0, &f);
	ph_settle(e);
	assert_int_equal(lb_neigh6_get(w1->neigh6, c, ph_now_ns(e), &info),
			 -ENOENT);
	assert_int_equal(lb_neigh6_get(e->dp.w[0]->neigh6, c, ph_now_ns(e),
				       &info),
			 -ENOENT);
	ph_check_no_drops(e->dp.w[0], "worker 0");
	ph_check_no_drops(w1, "worker 1");
}

/* The snapshot `lbctl neigh` reads: written only when asked, with both
 * families, their ports and counters. */
static void
test_neigh_view(void **state)
{
	struct ph_env *e = env6_n(state, 1);
	struct lb_neigh_view *v = e->w->sh.neigh;
	const struct lb_neigh_view_entry *x;
	struct pb_frame f, got;
	uint8_t c[16], peer[16];
	uint32_t ip_c = htonl(IP_C);

	assert_non_null(v);
	assert_ptr_equal(v, e->w->neigh_view);
	addr(c, A_C);
	addr(peer, A_PEER1);
	na_frame(&f, c, mac_c, false, NULL, NULL);
	ph_rx(e, 0, &f);
	na_frame(&f, peer, mac_peer1, false, NULL, NULL);
	ph_rx(e, 1, &f);
	pb_arp_frame(&f, (const uint8_t[6]){0xff, 0xff, 0xff, 0xff, 0xff,
					    0xff},
		     mac_c, 1, mac_c, IP_C, (const uint8_t[6]){0}, IP_LB0,
		     PB_FRAME_MIN);
	ph_rx(e, 0, &f);
	ph_expect_one(e, 0, 0, &got, "ARP reply");
	ph_settle(e);
	CHECK_EQ(atomic_load(&v->seq), 0, "nothing written unasked");
	atomic_fetch_add(&v->asked, 1);
	ph_settle(e);
	CHECK_EQ(atomic_load(&v->answered), 1, "answered");
	CHECK_EQ(atomic_load(&v->seq), 2, "written once");
	CHECK_EQ(v->nb[LB_NEIGH_VIEW_ARP], 1, "ARP entries");
	x = &v->e[LB_NEIGH_VIEW_ARP][0];
	assert_memory_equal(x->addr, &ip_c, 4);
	assert_memory_equal(x->mac, mac_c, 6);
	CHECK_EQ(x->state, LB_NEIGH_REACHABLE, "ARP state");
	CHECK_EQ(x->port, 0, "ARP port");
	assert_true(x->age_ns < 60ull * 1000000000ull);
	CHECK_EQ(v->nb[LB_NEIGH_VIEW_ND], 2, "ND entries");
	for (uint32_t i = 0; i < 2; i++) {
		x = &v->e[LB_NEIGH_VIEW_ND][i];
		CHECK_EQ(x->state, LB_NEIGH_REACHABLE, "ND state");
		if (memcmp(x->addr, c, 16) == 0) {
			assert_memory_equal(x->mac, mac_c, 6);
			CHECK_EQ(x->port, 0, "client's port");
		} else {
			assert_memory_equal(x->addr, peer, 16);
			assert_memory_equal(x->mac, mac_peer1, 6);
			CHECK_EQ(x->port, 1, "peer's port");
		}
	}
	CHECK_EQ(v->st[LB_NEIGH_VIEW_ND].learned, 2, "ND learned");
	CHECK_EQ(v->st[LB_NEIGH_VIEW_ND].entries, 2, "ND entries counted");
	CHECK_EQ(v->st[LB_NEIGH_VIEW_ARP].learned, 1, "ARP learned");
	CHECK_EQ(v->more[LB_NEIGH_VIEW_ND], 0, "none left out");
	/* Answered once: no more copies until asked again. */
	ph_settle(e);
	CHECK_EQ(atomic_load(&v->seq), 2, "not written again");
}

/* ---- the exception path ------------------------------------------------- */

#define EXC_RING 16

/* The frame the worker gave the kernel, which must be @p f unchanged
 * with its input port @p port. */
static void
expect_kernel6(struct ph_env *e, struct rte_ring *r, const struct pb_frame *f,
	       uint16_t port, const char *what)
{
	struct rte_mbuf *m = NULL;
	struct pb_frame got;

	if (rte_ring_sc_dequeue(r, (void **)&m) != 0 || m == NULL) {
		fail_msg("%s: nothing for the kernel", what);
		return;
	}
	CHECK_EQ(m->port, port, what);
	got.len = rte_pktmbuf_pkt_len(m);
	assert_true(got.len <= PB_FRAME_MAX);
	memcpy(got.b, rte_pktmbuf_mtod(m, void *), got.len);
	rte_pktmbuf_free(m);
	ph_expect_same(&got, f, what);
	CHECK_EQ(rte_ring_count(r), 0, what);
	ph_expect_quiet(e, what);
}

/* An ICMPv6 message of @p type from @p src to @p dst, 8 bytes of body. */
static void
icmp6_frame(struct pb_frame *f, const uint8_t src[16], const uint8_t dst[16],
	    uint8_t type, uint8_t hlim, const uint8_t *dmac)
{
	struct pb_dg6 d;

	memset(&d, 0, sizeof(d));
	memcpy(d.src, src, 16);
	memcpy(d.dst, dst, 16);
	d.hlim = hlim;
	d.l4.proto = PB_PROTO_ICMPV6;
	d.l4.type = type;
	d.l4.rest = 0x40000708;
	d.l4.plen = 8;
	pb_ipv6_frame(f, dmac, mac_c, &d);
}

/* IPv6 frames to our local addresses that the dataplane does not serve
 * go to the kernel's interface, as IPv4 ones do; those it serves and
 * those to others do not; the kernel's own frames leave as they are. */
static void
test_exception6(void **state)
{
	struct ph_env *e = env66(state);
	struct lb_worker *w = e->w;
	struct rte_ring *out, *in;
	struct pb_frame f, want;
	struct pb_dg6 d;
	uint8_t lb0[16], lb1[16], c[16], other[16], ll[16], ll_c[16], all[16];
	uint64_t exc0;

	out = rte_ring_create("pk6_exc_out", EXC_RING, SOCKET_ID_ANY,
			      RING_F_SP_ENQ | RING_F_SC_DEQ);
	in = rte_ring_create("pk6_exc_in", EXC_RING, SOCKET_ID_ANY,
			     RING_F_SP_ENQ | RING_F_SC_DEQ);
	assert_non_null(out);
	assert_non_null(in);
	w->exc_out = out;
	w->exc_in = in;
	addr(lb0, A_LB0);
	addr(lb1, A_LB1);
	addr(c, A_C);
	addr(other, A_OTHER);
	addr(all, A_ALL);
	pb_ip6(ll, 0xfe80, 0, 0, 0x99);
	ll[8] = 0x02; /* the kernel's link-local address, as any other */
	pb_ip6(ll_c, 0xfe80, 0, 0, 7);
	exc0 = w->st.exc_to_kernel;

	/* A BGP session's SYN to our address, and its peer's reply. */
	seg6(&d, A_C, 40179, lb0, 179, PB_PROTO_TCP, PB_SYN, 1, 0, 64);
	pb_ipv6_frame(&f, mac_port[0], mac_c, &d);
	ph_rx(e, 0, &f);
	expect_kernel6(e, out, &f, 0, "SYN to our port 0 address");
	seg6(&d, A_PEER1, 179, lb1, 40100, PB_PROTO_TCP, PB_ACK, 5, 6, 64);
	pb_ipv6_frame(&f, mac_port[1], mac_peer1, &d);
	ph_rx(e, 1, &f);
	expect_kernel6(e, out, &f, 1, "ACK to our port 1 address");
	seg6(&d, A_C, 5000, lb0, 53, PB_PROTO_UDP, 0, 0, 0, 64);
	pb_ipv6_frame(&f, mac_port[0], mac_c, &d);
	ph_rx(e, 0, &f);
	expect_kernel6(e, out, &f, 0, "UDP to our port 0 address");
	/* ICMPv6 the dataplane does not answer. */
	icmp6_frame(&f, c, lb0, 129, 64, mac_port[0]);
	ph_rx(e, 0, &f);
	expect_kernel6(e, out, &f, 0, "echo reply to our address");
	icmp6_frame(&f, ll_c, all, 134, 255, mac_all);
	ph_rx(e, 0, &f);
	expect_kernel6(e, out, &f, 0, "router advertisement to all nodes");
	icmp6_frame(&f, ll_c, ll, 128, 64, mac_port[0]);
	ph_rx(e, 0, &f);
	expect_kernel6(e, out, &f, 0, "echo request to a link-local address");
	/* Neighbour discovery of the kernel's own. */
	na_frame(&f, c, mac_c, true, lb0, mac_port[0]);
	ph_rx(e, 0, &f);
	expect_kernel6(e, out, &f, 0, "advertisement to our address");
	ns_frame(&f, ll_c, ll, mac_c, 0);
	ph_rx(e, 0, &f);
	expect_kernel6(e, out, &f, 0, "solicitation of a link-local address");
	CHECK_EQ(w->st.exc_to_kernel - exc0, 8, "frames given to the kernel");

	/* What the dataplane answers, or is not ours, stays out. */
	ns_frame(&f, c, lb0, mac_c, 0);
	ph_rx(e, 0, &f);
	CHECK_EQ(ph_take(e, 0, 0, &want, 1), 1, "solicitation answered");
	CHECK_EQ(rte_ring_count(out), 0, "solicitation for our address");
	seg6(&d, A_C, 40179, other, 179, PB_PROTO_TCP, PB_SYN, 1, 0, 64);
	pb_ipv6_frame(&f, mac_port[0], mac_c, &d);
	ph_rx(e, 0, &f);
	CHECK_EQ(rte_ring_count(out), 0, "SYN to a neighbour");
	CHECK_EQ(w->st.drop[LB_DROP_NOT_OURS], 1, "SYN to a neighbour dropped");
	ns_frame(&f, c, other, mac_c, 0);
	ph_rx(e, 0, &f);
	CHECK_EQ(rte_ring_count(out), 0, "solicitation for a neighbour");
	ph_expect_quiet(e, "solicitation for a neighbour");

	/* The kernel's IPv6 frame leaves its port as it is. */
	{
		struct rte_mbuf *m = rte_pktmbuf_alloc(ph_pool);

		seg6(&d, A_LB1, 40100, lb1, 179, PB_PROTO_TCP, PB_SYN, 9, 0,
		     64);
		addr(d.dst, A_PEER1);
		pb_ipv6_frame(&f, mac_peer1, mac_port[1], &d);
		assert_non_null(m);
		memcpy(rte_pktmbuf_append(m, (uint16_t)f.len), f.b, f.len);
		m->port = 1;
		assert_int_equal(rte_ring_sp_enqueue(in, m), 0);
		ph_poll(e, 0);
		ph_expect_frame(e, 1, 0, &f, "the kernel's IPv6 SYN");
	}
	CHECK_EQ(w->st.exc_from_kernel, 1, "frames from the kernel");

	/* Off: our address is not ours to forward. */
	w->exc_out = NULL;
	w->exc_in = NULL;
	seg6(&d, A_C, 40179, lb0, 179, PB_PROTO_TCP, PB_SYN, 1, 0, 64);
	pb_ipv6_frame(&f, mac_port[0], mac_c, &d);
	ph_rx(e, 0, &f);
	CHECK_EQ(w->st.drop[LB_DROP_NOT_OURS], 2,
		 "SYN to our address without an exception path");
	rte_ring_free(out);
	rte_ring_free(in);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_ipv4_beside, ph_teardown),
		cmocka_unit_test_teardown(test_table_switch, ph_teardown),
		cmocka_unit_test_teardown(test_echo_resolves, ph_teardown),
		cmocka_unit_test_teardown(test_echo_via_gateway, ph_teardown),
		cmocka_unit_test_teardown(test_na_wrong_port, ph_teardown),
		cmocka_unit_test_teardown(test_announce, ph_teardown),
		cmocka_unit_test_teardown(test_vlan, ph_teardown),
		cmocka_unit_test_teardown(test_fnat66_tcp, ph_teardown),
		cmocka_unit_test_teardown(test_fnat66_blind_rst, ph_teardown),
		cmocka_unit_test_teardown(test_fnat66_rst_rate, ph_teardown),
		cmocka_unit_test_teardown(test_fnat66_idle_probe, ph_teardown),
		cmocka_unit_test_teardown(test_synproxy6, ph_teardown),
		cmocka_unit_test_teardown(test_synproxy6_refused, ph_teardown),
		cmocka_unit_test_teardown(test_synproxy6_auto, ph_teardown),
		cmocka_unit_test_teardown(test_synproxy64, ph_teardown),
		cmocka_unit_test_teardown(test_fnat66_src_budget, ph_teardown),
		cmocka_unit_test_teardown(test_fnat66_admit, ph_teardown),
		cmocka_unit_test_teardown(test_fnat66_retry, ph_teardown),
		cmocka_unit_test_teardown(test_fnat66_deferq, ph_teardown),
		cmocka_unit_test_teardown(test_fnat66_admit_rst, ph_teardown),
		cmocka_unit_test_teardown(test_fnat66_maglev, ph_teardown),
		cmocka_unit_test_teardown(test_fnat66_udp, ph_teardown),
		cmocka_unit_test_teardown(test_fnat66_too_big, ph_teardown),
		cmocka_unit_test_teardown(test_fnat66_redirect, ph_teardown),
		cmocka_unit_test_teardown(test_fnat64_tcp, ph_teardown),
		cmocka_unit_test_teardown(test_fnat64_blind_rst, ph_teardown),
		cmocka_unit_test_teardown(test_fnat64_udp, ph_teardown),
		cmocka_unit_test_teardown(test_fnat64_frag_needed, ph_teardown),
		cmocka_unit_test_teardown(test_fnat64_mixed, ph_teardown),
		cmocka_unit_test_teardown(test_fnat64_retry, ph_teardown),
		cmocka_unit_test_teardown(test_fnat64_mixed_retry,
					  ph_teardown),
		cmocka_unit_test_teardown(test_fnat64_deferq, ph_teardown),
		cmocka_unit_test_teardown(test_fnat64_http_follow,
					  ph_teardown),
		cmocka_unit_test_teardown(test_fnat64_http_refuse,
					  ph_teardown),
		cmocka_unit_test_teardown(test_fnat64_http_governor,
					  ph_teardown),
		cmocka_unit_test_teardown(test_fnat64_client_too_big,
					  ph_teardown),
		cmocka_unit_test_teardown(test_fnat64_redirect, ph_teardown),
		cmocka_unit_test_teardown(test_fnat64_no_snat4, ph_teardown),
		cmocka_unit_test_teardown(test_fnat66_too_big_owner,
					  ph_teardown),
		cmocka_unit_test_teardown(test_fnat66_client_too_big_owner,
					  ph_teardown),
		cmocka_unit_test_teardown(test_fnat64_frag_needed_owner,
					  ph_teardown),
		cmocka_unit_test_teardown(test_fnat64_client_too_big_owner,
					  ph_teardown),
		cmocka_unit_test_teardown(test_nd_shared, ph_teardown),
		cmocka_unit_test_teardown(test_neigh_view, ph_teardown),
		cmocka_unit_test_teardown(test_exception6, ph_teardown),
		cmocka_unit_test_teardown(test_fnat66_http_follow,
					  ph_teardown),
		cmocka_unit_test_teardown(test_fnat66_http_refuse,
					  ph_teardown),
		cmocka_unit_test_teardown(test_fnat66_http_governor,
					  ph_teardown),
	};
	static const struct ph_table *const tables[] = {&table6};
	struct CMUnitTest *all;
	size_t n = 0;
	struct lb_hdr_cfg hc;
	int rc;

	(void)argc;
	lb_hdr_cfg_default(&hc);
	hdb6 = lb_hdr_db_compile(&hc);
	if (hdb6 == NULL)
		return EXIT_FAILURE;
	all = ph_tests(tests, NELEM(tests), tables, NELEM(tables), &n);
	if (all == NULL || ph_eal_init(argv[0], "lbpkt6", POOL_SIZE) != 0) {
		ph_tests_free(all, n, NELEM(tests));
		return EXIT_FAILURE;
	}
	rc = _cmocka_run_group_tests("packet6", all, n, NULL, NULL);
	ph_eal_fini();
	ph_tests_free(all, n, NELEM(tests));
	lb_hdr_db_free(hdb6);
	return rc;
}
