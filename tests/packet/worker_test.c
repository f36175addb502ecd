/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet tests of lb-dataplane, on the harness of harness.h: the real
 * worker on two net_ring ports, port 0 facing the clients and port 1 the
 * backends, fed frames that pktbuild.c builds on its own and checked
 * byte for byte, checksums included. Single frames with a certain fate
 * are fixture rows (the tables at the end, one cmocka test per row);
 * sequences (handshakes, trials, timers) are tests of their own. Timers
 * are the worker's own TSC time: waits are bounded polling loops.
 *
 * Expectations come from the documented behaviour (dataplane/nat/nat.h,
 * docs/dataplane.md), not from what the code happens to do: a forwarded
 * packet loses one TTL, a RST built from a SYN is trimmed to its own
 * length, a SYN left in the deferred queue ends in a RST at expiry.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "harness.h"
#include "lb/hdr_conf.h"
#include "lb/hdr_scan.h"
#include "nat.h"
#include "route_rules.h"
#include "tcp_opts.h"

#define POOL_SIZE 8191
#define FLOWS 1024
#define WAIT_NS 2000000000ull	   /* longest wait for a timer of the worker */
#define QUIET_NS 60000000ull	   /* a while longer with nothing sent */
#define EXPIRY_NS 150000000ull	   /* deferred queue expiry (conf_base) */
#define SYN_TIMEOUT_NS 30000000ull /* conf_syn_timeout */

/* dataplane/nat/nat.h: forwarded packets lose one TTL (RFC 1812 5.3.1). */
#define TTL_FWD (TTL_IN - 1)
/* Packets the dataplane originates: echo replies and RSTs. */
#define TTL_OWN 64

/* ---- the cast (host order) --------------------------------------------- */

#define IP_PING PB_IP(198, 51, 100, 9)	    /* a pinger nobody introduced */
#define IP_STRANGER PB_IP(198, 51, 100, 99) /* a neighbour, not ours */
#define IP_RTR PB_IP(198, 51, 100, 254)	    /* a router on the client side */
#define IP_BE(i) PB_IP(10, 1, 0, 20 + (i)) /* TCP backends 0..3 */
#define IP_UBE PB_IP(10, 1, 0, 30)	   /* the UDP backend */
#define IP_HOST1 PB_IP(10, 1, 0, 50)	   /* hosts on the backend side */
#define IP_HOST2 PB_IP(10, 1, 0, 51)
#define IP_VIP PB_IP(203, 0, 113, 10)
#define IP_VIP2 PB_IP(203, 0, 113, 11) /* its only backend is draining */
#define UVPORT 53
#define UBPORT 5353

/* Service indexes: the order of conf_base. */
#define SVC_TCP 0
#define SVC_DRAIN 1
#define SVC_UDP 2

static const uint32_t our_ip[NB_PORTS] = {IP_LB0, IP_LB1};
static const uint8_t mac_ping[6] = {0x02, 0xcc, 0, 0, 0, 0x09};
static const uint8_t mac_stranger[6] = {0x02, 0xcc, 0, 0, 0, 0x63};
static const uint8_t mac_rtr[6] = {0x02, 0xcc, 0, 0, 0, 0xfe};
static const uint8_t mac_be[4][6] = {
	{0x02, 0xbe, 0, 0, 0, 0x20},
	{0x02, 0xbe, 0, 0, 0, 0x21},
	{0x02, 0xbe, 0, 0, 0, 0x22},
	{0x02, 0xbe, 0, 0, 0, 0x23},
};
static const uint8_t mac_ube[6] = {0x02, 0xbe, 0, 0, 0, 0x30};
static const uint8_t mac_host1[6] = {0x02, 0xbe, 0, 0, 0, 0x50};
static const uint8_t mac_host2[6] = {0x02, 0xbe, 0, 0, 0, 0x51};
static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
static const uint8_t zero_mac[6];

static const char *const conf_base[] = {
	"addr add 198.51.100.1/24 port 0",
	"addr add 10.1.0.1/24 port 1",
	"snat add 10.1.0.2 port 1",
	"service add tcp 203.0.113.10:80 sched rr deferq 16 retry-gap 50ms "
	"expiry 150ms",
	"backend add tcp 203.0.113.10:80 10.1.0.20:8080",
	"backend add tcp 203.0.113.10:80 10.1.0.21:8080",
	"backend add tcp 203.0.113.10:80 10.1.0.22:8080",
	"service add tcp 203.0.113.11:80 sched rr deferq 16 retry-gap 50ms "
	"expiry 150ms",
	"backend add tcp 203.0.113.11:80 10.1.0.23:8080",
	"backend drain tcp 203.0.113.11:80 10.1.0.23:8080",
	"service add udp 203.0.113.10:53 sched rr",
	"backend add udp 203.0.113.10:53 10.1.0.30:5353",
	NULL,
};

/* Retries far apart: nothing is re-dispatched while a test looks. */
static const char *const conf_slow_retry[] = {
	"service set tcp 203.0.113.10:80 retry-gap 1s expiry 5s",
	NULL,
};

static const char *const conf_admit[] = {
	"service set tcp 203.0.113.10:80 admit-rate 1 admit-burst 1 "
	"admit-reject rst",
	NULL,
};

static const char *const conf_syn_timeout[] = {
	"service set tcp 203.0.113.10:80 syn-timeout 30ms",
	NULL,
};

/* ---- a dataplane on ring ports ----------------------------------------- */

/*
 * The table of conf_base and @p extra, compiled after @p prev (NULL: the
 * first) as lb-control publishes it.
 */
static struct lb_dpconf *
compile_conf(struct ph_env *e, const char *const *extra,
	     const struct lb_dpconf *prev)
{
	const char *const *sets[2] = {conf_base, extra};

	return ph_conf_compile(e, sets, NELEM(sets), prev);
}

static void
load_conf(struct ph_env *e, const char *const *extra)
{
	e->dp.conf = compile_conf(e, extra, NULL);
	assert_int_equal(lb_dpconf_svc_find(e->dp.conf, PB_PROTO_TCP,
					    htonl(IP_VIP), htons(VPORT)),
			 SVC_TCP);
	assert_int_equal(lb_dpconf_svc_find(e->dp.conf, PB_PROTO_TCP,
					    htonl(IP_VIP2), htons(VPORT)),
			 SVC_DRAIN);
	assert_int_equal(lb_dpconf_svc_find(e->dp.conf, PB_PROTO_UDP,
					    htonl(IP_VIP), htons(UVPORT)),
			 SVC_UDP);
}

/* A fresh dataplane, also kept in *state for the teardown. */
static struct ph_env *
env_up(void **state, uint16_t nb_workers, uint32_t flows,
       const char *const *extra)
{
	struct ph_env *e = ph_env_new(state);

	load_conf(e, extra);
	e->dp.flows = flows;
	/* A PROXY header is sent again only when a test waits for it. */
	e->dp.pp_rto_ns = 3600000000000ull;
	ph_env_start(e, nb_workers);
	return e;
}

/* ---- neighbours -------------------------------------------------------- */

/* An unsolicited ARP reply from @ip at @mac to our address on @port. */
static void
announce(struct ph_env *e, uint16_t port, uint16_t q, uint32_t ip,
	 const uint8_t *mac)
{
	struct pb_frame f;

	pb_arp_frame(&f, mac_port[port], mac, 2, mac, ip, mac_port[port],
		     our_ip[port], PB_FRAME_MIN);
	ph_inject(e, port, q, &f);
}

/* The client and every backend introduce themselves on queue 0. */
static void
learn_all(struct ph_env *e)
{
	announce(e, 0, 0, IP_C, mac_c);
	for (int i = 0; i < 4; i++)
		announce(e, 1, 0, IP_BE(i), mac_be[i]);
	announce(e, 1, 0, IP_UBE, mac_ube);
	if (e->dp.nb_workers > 1)
		ph_settle(e);
	else
		ph_poll(e, 0);
	ph_expect_quiet(e, "neighbours announcing themselves");
}

/* A fresh dataplane, one worker, nobody known. */
static struct ph_env *
env_plain(void **state)
{
	return env_up(state, 1, FLOWS, NULL);
}

/* A fresh dataplane, one worker, the client and backends known. */
static struct ph_env *
env_learnt(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, NULL);

	learn_all(e);
	return e;
}

/* The broadcast "who has @target" the worker sends on @port. */
static void
arp_request_frame(struct pb_frame *f, uint16_t port, uint32_t target)
{
	pb_arp_frame(f, bcast, mac_port[port], 1, mac_port[port], our_ip[port],
		     zero_mac, target, PB_FRAME_MIN);
}

/* An echo request from @peer to @ours on @port and the reply it earns. */
static void
echo_frames(struct pb_frame *req, struct pb_frame *rep, uint16_t port,
	    uint32_t peer, const uint8_t *peer_mac, uint32_t ours, uint16_t seq)
{
	struct pb_dg d = {
		.proto = PB_PROTO_ICMP,
		.ttl = 61,
		.id = (uint16_t)(0x3000 + seq),
		.frag = PB_IP_DF,
		.src = peer,
		.dst = ours,
		.type = 8,
		.rest = 0x4c420000u | seq,
		.plen = 56,
		.seed = (uint8_t)seq,
	};

	pb_ipv4_frame(req, mac_port[port], peer_mac, &d);
	d.src = ours;
	d.dst = peer;
	d.ttl = TTL_OWN;
	d.type = 0;
	pb_ipv4_frame(rep, peer_mac, mac_port[port], &d);
}

/* ---- connections --------------------------------------------------------
 * A connection is seen four ways: as the client sends it (client ->
 * VIP), as the backend must get it (SNAT -> backend), as the backend
 * answers (backend -> SNAT) and as the client must get the answer
 * (VIP -> client).
 */

struct conn {
	uint8_t proto;
	uint32_t cip;
	uint16_t cport;
	const uint8_t *cmac;
	uint32_t vip;
	uint16_t vport;
	uint32_t bip;
	uint16_t bport;
	const uint8_t *bmac;
	uint16_t sport; /* SNAT port, learnt from the worker's first frame */
	uint16_t q;	/* queue, and worker, of the connection */
};

enum dir { TO_BE, TO_C };

struct seg {
	const char *what;
	enum dir dir;
	uint8_t flags;
	uint32_t seq, ack;
	uint16_t plen;
	uint8_t mss;
	uint8_t csum0; /* UDP without checksum */
	uint8_t ttl;   /* as sent; 0 for TTL_IN */
};

static struct conn
tcp_conn(uint16_t cport, int be)
{
	return (struct conn){
		.proto = PB_PROTO_TCP,
		.cip = IP_C,
		.cport = cport,
		.cmac = mac_c,
		.vip = IP_VIP,
		.vport = VPORT,
		.bip = IP_BE(be),
		.bport = BPORT,
		.bmac = mac_be[be],
	};
}

/* A datagram stream from the client to the UDP service. */
static struct conn
udp_conn(uint16_t cport)
{
	return (struct conn){
		.proto = PB_PROTO_UDP,
		.cip = IP_C,
		.cport = cport,
		.cmac = mac_c,
		.vip = IP_VIP,
		.vport = UVPORT,
		.bip = IP_UBE,
		.bport = UBPORT,
		.bmac = mac_ube,
	};
}

static void
conn_be(struct conn *c, int be)
{
	c->bip = IP_BE(be);
	c->bmac = mac_be[be];
}

/* Segment @s as sent (@fwd 0) or as the worker must forward it. */
static void
seg_dg(struct pb_dg *d, const struct conn *c, const struct seg *s, int fwd)
{
	uint8_t ttl = s->ttl != 0 ? s->ttl : TTL_IN;

	memset(d, 0, sizeof(*d));
	d->proto = c->proto;
	d->ttl = fwd ? (uint8_t)(ttl - 1) : ttl;
	d->id = (uint16_t)(s->seq * 31u + s->plen + s->flags + s->dir);
	d->frag = c->proto == PB_PROTO_TCP ? PB_IP_DF : 0;
	d->seq = s->seq;
	d->ack = s->ack;
	d->flags = s->flags;
	d->win = s->dir == TO_BE ? 64240 : 65160;
	d->mss = s->mss;
	d->udp_csum_zero = s->csum0;
	d->plen = s->plen;
	d->seed = (uint8_t)(s->seq + s->dir * 101u);
	if (s->dir == TO_BE && !fwd) {
		d->src = c->cip;
		d->dst = c->vip;
		d->sport = c->cport;
		d->dport = c->vport;
	} else if (s->dir == TO_BE) {
		d->src = IP_SNAT;
		d->dst = c->bip;
		d->sport = c->sport;
		d->dport = c->bport;
	} else if (!fwd) {
		d->src = c->bip;
		d->dst = IP_SNAT;
		d->sport = c->bport;
		d->dport = c->sport;
	} else {
		d->src = c->vip;
		d->dst = c->cip;
		d->sport = c->vport;
		d->dport = c->cport;
	}
}

static void
seg_frame(struct pb_frame *f, const struct conn *c, const struct seg *s,
	  int fwd)
{
	struct pb_dg d;

	seg_dg(&d, c, s, fwd);
	if (s->dir == TO_BE)
		pb_ipv4_frame(f, fwd ? c->bmac : mac_port[0],
			      fwd ? mac_port[1] : c->cmac, &d);
	else
		pb_ipv4_frame(f, fwd ? c->cmac : mac_port[1],
			      fwd ? mac_port[0] : c->bmac, &d);
}

static uint16_t
in_port(const struct seg *s)
{
	return s->dir == TO_BE ? 0 : 1;
}

/* Sends @s from its origin; the worker must forward it as expected. */
static void
relay(struct ph_env *e, const struct conn *c, const struct seg *s)
{
	struct pb_frame in, want;

	seg_frame(&in, c, s, 0);
	seg_frame(&want, c, s, 1);
	ph_inject(e, in_port(s), c->q, &in);
	ph_poll(e, c->q);
	ph_expect_frame(e, (uint16_t)(1 - in_port(s)), c->q, &want, s->what);
}

/*
 * The client's first packet: the SNAT port is the worker's choice, so it
 * is read from the frame sent (it must belong to the connection's worker)
 * and then the whole frame is compared.
 */
static void
relay_first(struct ph_env *e, struct conn *c, const struct seg *s)
{
	static struct pb_frame got;
	struct pb_frame in, want;
	uint16_t sport;

	seg_frame(&in, c, s, 0);
	ph_inject(e, 0, c->q, &in);
	ph_poll(e, c->q);
	ph_expect_one(e, 1, c->q, &got, s->what);
	if (got.len < ETH + 28)
		fail_msg("%s: %u bytes sent", s->what, got.len);
	sport = pb_get16(got.b + ETH + 20);
	if (sport < LB_SNAT_PORT_MIN_DEFAULT ||
	    sport % e->dp.nb_workers != c->q)
		fail_msg("%s: SNAT port %u is not one of worker %u's", s->what,
			 sport, c->q);
	c->sport = sport;
	seg_frame(&want, c, s, 1);
	ph_expect_same(&got, &want, s->what);
}

static const struct seg *
seg_syn(uint32_t iss)
{
	static struct seg s;

	s = (struct seg){.what = "client SYN",
			 .dir = TO_BE,
			 .flags = PB_SYN,
			 .seq = iss,
			 .mss = 1};
	return &s;
}

/* Three-way handshake through the worker. */
static void
open_tcp(struct ph_env *e, struct conn *c, uint32_t iss, uint32_t irs)
{
	const struct seg synack = {.what = "backend SYN-ACK",
				   .dir = TO_C,
				   .flags = PB_SYN | PB_ACK,
				   .seq = irs,
				   .ack = iss + 1,
				   .mss = 1};
	const struct seg ack = {.what = "client ACK",
				.dir = TO_BE,
				.flags = PB_ACK,
				.seq = iss + 1,
				.ack = irs + 1};

	relay_first(e, c, seg_syn(iss));
	relay(e, c, &synack);
	relay(e, c, &ack);
}

/* The RST a backend answers to the SYN of @c (whose ISS is @iss). */
static void
backend_rst(struct pb_frame *f, const struct conn *c, uint32_t iss)
{
	const struct seg rst = {.what = "backend RST",
				.dir = TO_C,
				.flags = PB_RST | PB_ACK,
				.ack = iss + 1};

	seg_frame(f, c, &rst, 0);
}

/* The RST the dataplane answers for the VIP to a SYN (RFC 793). */
static void
client_rst_frame(struct pb_frame *f, uint32_t vip, uint16_t cport, uint32_t iss)
{
	struct pb_dg d = {
		.proto = PB_PROTO_TCP,
		.ttl = TTL_OWN,
		.frag = PB_IP_DF,
		.src = vip,
		.dst = IP_C,
		.sport = VPORT,
		.dport = cport,
		.seq = 0,
		.ack = iss + 1,
		.flags = PB_RST | PB_ACK,
	};

	pb_ipv4_frame(f, mac_c, mac_port[0], &d);
}

static const struct lb_flow *
find_flow(const struct ph_env *e, uint16_t wid, const struct conn *c)
{
	struct lb_flow_key k;
	enum lb_flow_dir dir;
	uint32_t idx;

	lb_flow_key_set(&k, htonl(c->cip), htonl(c->vip), htons(c->cport),
			htons(c->vport), c->proto);
	idx = lb_flow_lookup(e->dp.w[wid]->ft, &k, &dir);
	return idx == LB_FLOW_NONE ? NULL : lb_flow_get(e->dp.w[wid]->ft, idx);
}

/* ---- ARP --------------------------------------------------------------- */

struct arp_row {
	const char *what;
	uint16_t port;
	uint32_t spa; /* who asks */
	const uint8_t *sha;
	uint32_t tpa; /* for what */
	uint32_t pad_to;
	int answered;
};

static const struct arp_row arp_rows[] = {
	{"VIP, asked by a client", 0, IP_C, mac_c, IP_VIP, 60, 1},
	{"local address of port 0", 0, IP_C, mac_c, IP_LB0, 60, 1},
	{"local address of port 1", 1, IP_BE(0), mac_be[0], IP_LB1, 60, 1},
	{"SNAT address", 1, IP_BE(0), mac_be[0], IP_SNAT, 60, 1},
	{"SNAT address, request not padded", 1, IP_BE(1), mac_be[1], IP_SNAT, 0,
	 1},
	{"VIP asked on port 1 (a routed VIP is ours everywhere)", 1, IP_BE(1),
	 mac_be[1], IP_VIP, 60, 1},
	{"VIP, ARP probe with sender 0.0.0.0", 0, 0, mac_stranger, IP_VIP, 60,
	 1},
	{"SNAT address asked on port 0", 0, IP_C, mac_c, IP_SNAT, 60, 0},
	{"port 1's local address asked on port 0", 0, IP_C, mac_c, IP_LB1, 60,
	 0},
	{"a neighbour's address", 0, IP_C, mac_c, IP_STRANGER, 60, 0},
	{"a backend's address", 1, IP_BE(0), mac_be[0], IP_BE(1), 60, 0},
	{"the asker's own address (gratuitous)", 0, IP_C, mac_c, IP_C, 60, 0},
};

static void
arp_build(const void *row, struct ph_case *c)
{
	const struct arp_row *r = row;

	c->port = r->port;
	pb_arp_frame(&c->in, bcast, r->sha, 1, r->sha, r->spa, zero_mac, r->tpa,
		     r->pad_to);
	c->count[0] = (struct ph_count)PH_COUNT(arp_replies, r->answered);
	c->count[1] = (struct ph_count)PH_COUNT(arp_requests, 0);
	if (!r->answered)
		return;
	/* "tpa is at our MAC", to the asker, padding kept. */
	c->verdict = PH_SENT;
	c->out_port = r->port;
	pb_arp_frame(&c->out, r->sha, mac_port[r->port], 2, mac_port[r->port],
		     r->tpa, r->sha, r->spa, r->pad_to);
}

static const struct ph_table arp_table = {
	.name = "ARP request",
	PH_ROWS(arp_rows),
	.env = env_plain,
	.build = arp_build,
};

static void
test_arp_learn(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, NULL);
	const struct lb_worker *w = e->dp.w[0];
	struct pb_frame req, want;

	/* A neighbour's ARP reply is learnt: its ping is answered at once,
	 * without asking who it is. */
	announce(e, 1, 0, IP_HOST1, mac_host1);
	ph_poll(e, 0);
	ph_expect_quiet(e, "unsolicited ARP reply from a backend-side host");
	echo_frames(&req, &want, 1, IP_HOST1, mac_host1, IP_LB1, 1);
	ph_inject(e, 1, 0, &req);
	ph_poll(e, 0);
	ph_expect_frame(e, 1, 0, &want, "ping from a learnt neighbour");

	/* An ARP reply on the wrong port is not learnt: the host lives
	 * behind port 1, so its ping needs an ARP request there first. */
	announce(e, 0, 0, IP_HOST2, mac_host2);
	ph_poll(e, 0);
	ph_expect_quiet(e, "ARP reply from a port 1 host arriving on port 0");
	echo_frames(&req, &want, 1, IP_HOST2, mac_host2, IP_LB1, 2);
	ph_inject(e, 1, 0, &req);
	ph_poll(e, 0);
	{
		struct pb_frame arp;

		arp_request_frame(&arp, 1, IP_HOST2);
		ph_expect_frame(e, 1, 0, &arp,
				"ping from a host announced on the wrong port");
	}
	announce(e, 1, 0, IP_HOST2, mac_host2);
	ph_poll(e, 0);
	ph_expect_frame(e, 1, 0, &want,
			"held echo reply, once the host "
			"answered on its own port");
	CHECK_EQ(w->st.arp_replies, 0, "ARP requests answered");
	CHECK_EQ(w->st.arp_requests, 1, "ARP requests sent");
	CHECK_EQ(w->st.echo_replies, 2, "echo replies");
	ph_check_no_drops(w, "ARP");
	ph_env_close(e, 1);
}

/* A VIP inside the client subnet, as a one-armed setup has it. */
#define IP_VIP_LAN PB_IP(198, 51, 100, 10)

static const char *const conf_vip_lan[] = {
	"service add tcp 198.51.100.10:80 sched rr",
	"backend add tcp 198.51.100.10:80 10.1.0.20:8080",
	NULL,
};

struct spoof_row {
	const char *what;
	uint16_t port;
	uint16_t op;  /* 1 request, 2 reply */
	uint32_t spa; /* the address claimed */
};

static const struct spoof_row spoof_rows[] = {
	{"reply claiming the VIP of the client subnet", 0, 2, IP_VIP_LAN},
	{"reply claiming a routed VIP", 0, 2, IP_VIP},
	{"reply claiming our address on that port", 0, 2, IP_LB0},
	{"reply claiming the other port's address", 1, 2, IP_LB0},
	{"reply claiming the SNAT address", 1, 2, IP_SNAT},
	{"request claiming the VIP", 0, 1, IP_VIP_LAN},
	{"request claiming the SNAT address", 1, 1, IP_SNAT},
};

static void
spoof_build(const void *row, struct ph_case *c)
{
	const struct spoof_row *r = row;

	c->port = r->port;
	pb_arp_frame(&c->in, r->op == 1 ? bcast : mac_port[r->port],
		     mac_stranger, r->op, mac_stranger, r->spa,
		     r->op == 1 ? zero_mac : mac_port[r->port], our_ip[r->port],
		     PB_FRAME_MIN);
	c->drop = LB_DROP_ARP_SPOOF;
	c->count[0] = (struct ph_count)PH_COUNT(arp_replies, 0);
}

/* The spoofer is not taken for the owner of the address it claims. */
static void
spoof_after(struct ph_env *e, const void *row)
{
	const struct spoof_row *r = row;
	struct lb_neigh_info ni;

	if (lb_neigh_get(e->w->neigh, htonl(r->spa), ph_now_ns(e), &ni) == 0 &&
	    memcmp(ni.mac, mac_stranger, 6) == 0)
		fail_msg("%s: learnt as a neighbour", r->what);
}

static struct ph_env *
env_vip_lan(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, conf_vip_lan);

	learn_all(e);
	return e;
}

static const struct ph_table spoof_table = {
	.name = "ARP spoof",
	PH_ROWS(spoof_rows),
	.env = env_vip_lan,
	.build = spoof_build,
	.after = spoof_after,
};

/* After every spoof of the table, the addresses are still ours. */
static void
test_arp_spoof(void **state)
{
	struct ph_env *e = env_vip_lan(state);
	const struct lb_worker *w = e->dp.w[0];
	struct lb_worker_stats before;
	struct pb_frame f, want;

	for (unsigned int i = 0; i < NELEM(spoof_rows); i++) {
		struct ph_case c;

		ph_case_init(&c);
		spoof_build(&spoof_rows[i], &c);
		ph_case_run(e, &c, spoof_rows[i].what);
		spoof_after(e, &spoof_rows[i]);
	}
	CHECK_EQ(w->st.arp_replies, 0, "ARP answered to a spoofer");

	/* The next packet for the VIP (here a ping's answer: the ping
	 * claims to come from it) goes nowhere, least of all to the MAC
	 * that claimed the VIP. */
	echo_frames(&f, &want, 0, IP_VIP_LAN, mac_stranger, IP_LB0, 1);
	before = w->st;
	ph_inject(e, 0, 0, &f);
	ph_poll(e, 0);
	ph_settle(e);
	ph_expect_quiet(e, "ping from the VIP after the spoof");
	ph_check_drop_delta(w, &before, LB_DROP_SRC_OURS,
			    "ping from the VIP after the spoof");

	/* Our addresses are still answered for, the VIP included. */
	pb_arp_frame(&f, bcast, mac_c, 1, mac_c, IP_C, zero_mac, IP_VIP_LAN,
		     PB_FRAME_MIN);
	ph_inject(e, 0, 0, &f);
	ph_poll(e, 0);
	pb_arp_frame(&want, mac_c, mac_port[0], 2, mac_port[0], IP_VIP_LAN,
		     mac_c, IP_C, PB_FRAME_MIN);
	ph_expect_frame(e, 0, 0, &want, "the client asking for the VIP");
	ph_env_close(e, 1);
}

/* ---- ICMP echo --------------------------------------------------------- */

static void
test_echo(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, NULL);
	const struct lb_worker *w = e->dp.w[0];
	struct pb_frame req, rep, rep2, f;

	/* The pinger is unknown: the replies wait for its MAC, and one
	 * ARP request asks for it. */
	echo_frames(&req, &rep, 0, IP_PING, mac_ping, IP_LB0, 1);
	ph_inject(e, 0, 0, &req);
	ph_poll(e, 0);
	arp_request_frame(&f, 0, IP_PING);
	ph_expect_frame(e, 0, 0, &f, "ping from an unknown host: ARP request");
	echo_frames(&req, &rep2, 0, IP_PING, mac_ping, IP_LB0, 11);
	ph_inject(e, 0, 0, &req);
	ph_poll(e, 0);
	ph_expect_quiet(e, "second ping while the ARP request is out");
	CHECK_EQ(w->st.arp_requests, 1, "ARP requests");
	pb_arp_frame(&f, mac_port[0], mac_ping, 2, mac_ping, IP_PING,
		     mac_port[0], IP_LB0, PB_FRAME_MIN);
	ph_inject(e, 0, 0, &f);
	ph_poll(e, 0);
	{
		struct pb_frame got[2];

		CHECK_EQ(ph_take(e, 0, 0, got, 2), 2,
			 "held echo replies after the ARP reply");
		ph_expect_quiet(e, "held echo replies after the ARP reply");
		ph_expect_same(&got[0], &rep, "first held echo reply");
		ph_expect_same(&got[1], &rep2, "second held echo reply");
	}

	echo_frames(&req, &rep, 0, IP_PING, mac_ping, IP_VIP, 2);
	ph_inject(e, 0, 0, &req);
	ph_poll(e, 0);
	ph_expect_frame(e, 0, 0, &rep, "ping to the VIP");

	announce(e, 1, 0, IP_BE(0), mac_be[0]);
	echo_frames(&req, &rep, 1, IP_BE(0), mac_be[0], IP_SNAT, 3);
	ph_inject(e, 1, 0, &req);
	ph_poll(e, 0);
	ph_expect_frame(e, 1, 0, &rep, "ping to the SNAT address");
	CHECK_EQ(w->st.echo_replies, 4, "echo replies");

	ph_env_close(e, 1);
}

/* Pings from known neighbours: answered for our addresses alone. */
struct echo_row {
	const char *what;
	uint16_t port;
	int peer; /* -1: the client; else that backend */
	uint32_t dst;
	int spoil;    /* the ICMP checksum no longer holds */
	int answered; /* else dropped as icmp */
};

static const struct echo_row echo_rows[] = {
	{"ping to port 0's address", 0, -1, IP_LB0, 0, 1},
	{"ping to the VIP", 0, -1, IP_VIP, 0, 1},
	{"ping to port 1's address", 1, 0, IP_LB1, 0, 1},
	{"ping to the SNAT address", 1, 0, IP_SNAT, 0, 1},
	{"ping with a bad ICMP checksum", 0, -1, IP_LB0, 1, 0},
	{"ping to port 1's address arriving on port 0", 0, -1, IP_LB1, 0, 0},
	{"ping to the SNAT address arriving on port 0", 0, -1, IP_SNAT, 0, 0},
};

static void
echo_build(const void *row, struct ph_case *c)
{
	const struct echo_row *r = row;
	uint32_t peer = r->peer < 0 ? IP_C : IP_BE(r->peer);
	const uint8_t *mac = r->peer < 0 ? mac_c : mac_be[r->peer];

	c->port = r->port;
	echo_frames(&c->in, &c->out, r->port, peer, mac, r->dst, 4);
	if (r->spoil)
		c->in.b[c->in.len - 1] ^= 0x40;
	c->count[0] = (struct ph_count)PH_COUNT(echo_replies, r->answered);
	c->count[1] = (struct ph_count)PH_COUNT(arp_requests, 0);
	if (r->answered) {
		c->verdict = PH_SENT;
		c->out_port = r->port;
	} else {
		c->drop = LB_DROP_ICMP;
	}
}

static const struct ph_table echo_table = {
	.name = "ICMP echo",
	PH_ROWS(echo_rows),
	.env = env_learnt,
	.build = echo_build,
};

/* ---- TCP full-NAT ------------------------------------------------------ */

#define ISS 0x1f2e3d4cu
#define IRS 0x9a000001u

struct tcp_step {
	struct seg s;
	enum lb_flow_state state; /* of the flow afterwards */
};

static const struct tcp_step tcp_steps[] = {
	{{"backend SYN-ACK", TO_C, PB_SYN | PB_ACK, IRS, ISS + 1, 0, 1, 0, 0},
	 LB_FLOW_SYN_RECV},
	{{"client ACK", TO_BE, PB_ACK, ISS + 1, IRS + 1, 0, 0, 0, 0},
	 LB_FLOW_ESTABLISHED},
	{{"request", TO_BE, PB_PSH | PB_ACK, ISS + 1, IRS + 1, 120, 0, 0, 0},
	 LB_FLOW_ESTABLISHED},
	{{"response, odd length", TO_C, PB_PSH | PB_ACK, IRS + 1, ISS + 121,
	  701, 0, 0, 0},
	 LB_FLOW_ESTABLISHED},
	{{"client ACK of the response", TO_BE, PB_ACK, ISS + 121, IRS + 702, 0,
	  0, 0, 0},
	 LB_FLOW_ESTABLISHED},
	{{"client FIN", TO_BE, PB_FIN | PB_ACK, ISS + 121, IRS + 702, 0, 0, 0,
	  0},
	 LB_FLOW_CLOSING},
	{{"backend FIN", TO_C, PB_FIN | PB_ACK, IRS + 702, ISS + 122, 0, 0, 0,
	  0},
	 LB_FLOW_TIME_WAIT},
	{{"client last ACK", TO_BE, PB_ACK, ISS + 122, IRS + 703, 0, 0, 0, 0},
	 LB_FLOW_TIME_WAIT},
};

static void
test_tcp(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, NULL);
	const struct lb_worker *w = e->dp.w[0];
	struct conn c = tcp_conn(40000, 0);
	const struct lb_flow *f;
	struct pb_frame req, rep;

	/* The client asks for the VIP (and is learnt), the backend
	 * announces itself: no ARP request is needed afterwards. */
	pb_arp_frame(&req, bcast, mac_c, 1, mac_c, IP_C, zero_mac, IP_VIP,
		     PB_FRAME_MIN);
	pb_arp_frame(&rep, mac_c, mac_port[0], 2, mac_port[0], IP_VIP, mac_c,
		     IP_C, PB_FRAME_MIN);
	ph_inject(e, 0, 0, &req);
	ph_poll(e, 0);
	ph_expect_frame(e, 0, 0, &rep, "client's ARP request for the VIP");
	announce(e, 1, 0, IP_BE(0), mac_be[0]);
	ph_poll(e, 0);
	ph_expect_quiet(e, "backend's ARP announcement");

	relay_first(e, &c, seg_syn(ISS));
	f = find_flow(e, 0, &c);
	assert_non_null(f);
	CHECK_EQ(f->state, LB_FLOW_SYN_SENT, "after the SYN");
	CHECK_EQ(w->st.flows_created, 1, "after the SYN");
	CHECK_EQ(w->bst[SVC_TCP][0].flows, 1, "after the SYN");
	CHECK_EQ(w->bst[SVC_TCP][0].active, 1, "after the SYN");
	/* A copy of the SYN waits for the backend's answer, no longer. */
	CHECK_EQ(e->pool_avail - rte_mempool_avail_count(ph_pool), 1,
		 "mbufs held while the backend has not answered");
	for (unsigned int i = 0; i < NELEM(tcp_steps); i++) {
		relay(e, &c, &tcp_steps[i].s);
		f = find_flow(e, 0, &c);
		assert_non_null(f);
		CHECK_EQ(f->state, tcp_steps[i].state, tcp_steps[i].s.what);
		CHECK_EQ(e->pool_avail - rte_mempool_avail_count(ph_pool), 0,
			 tcp_steps[i].s.what);
	}
	CHECK_EQ(w->st.rx, 2 + 1 + NELEM(tcp_steps), "frames received");
	CHECK_EQ(w->st.tx, 1 + 1 + NELEM(tcp_steps), "frames sent");
	CHECK_EQ(w->st.verdict[LB_PKT_ARP], 2, "ARP frames");
	CHECK_EQ(w->st.verdict[LB_PKT_IPV4], 1 + NELEM(tcp_steps),
		 "IPv4 frames");
	CHECK_EQ(w->st.flows_created, 1, "flows");
	CHECK_EQ(w->st.syn_retries, 0, "retries");
	CHECK_EQ(w->st.arp_requests, 0, "ARP requests");
	CHECK_EQ(w->bst[SVC_TCP][0].flows, 1, "backend 0");
	CHECK_EQ(w->bst[SVC_TCP][0].errors, 0, "backend 0");
	CHECK_EQ(w->bst[SVC_TCP][1].flows, 0, "backend 1");
	ph_check_no_drops(w, "TCP");
	ph_env_close(e, 1);
}

/*
 * A client port reused while its earlier flow is in TIME_WAIT: the SYN is
 * a new flow, picked by the scheduler (rr: the next backend) and counted
 * (flows created, the backend's flows) like any other; the old entry goes.
 */
static void
test_tcp_reuse_counted(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, NULL);
	struct lb_worker *w = e->dp.w[0];
	struct conn c = tcp_conn(40002, 0);
	const struct lb_flow *f;
	uint64_t flows = 0, active = 0;
	unsigned int be;

	announce(e, 0, 0, IP_C, mac_c);
	for (unsigned int i = 0; i < 3; i++)
		announce(e, 1, 0, IP_BE(i), mac_be[i]);
	ph_poll(e, 0);
	relay_first(e, &c, seg_syn(ISS));
	for (unsigned int i = 0; i < NELEM(tcp_steps); i++)
		relay(e, &c, &tcp_steps[i].s);
	f = find_flow(e, 0, &c);
	assert_non_null(f);
	CHECK_EQ(f->state, LB_FLOW_TIME_WAIT, "first connection closed");
	be = f->be;
	conn_be(&c, (int)(be + 1) % 3);
	relay_first(e, &c, seg_syn(ISS + 1000000));
	f = find_flow(e, 0, &c);
	assert_non_null(f);
	CHECK_EQ(f->state, LB_FLOW_SYN_SENT, "a new flow");
	CHECK_EQ(f->be, (be + 1) % 3, "picked by the scheduler: the next");
	CHECK_EQ(w->st.flows_created, 2, "flows created");
	for (unsigned int i = 0; i < 3; i++) {
		flows += w->bst[SVC_TCP][i].flows;
		active += w->bst[SVC_TCP][i].active;
	}
	CHECK_EQ(flows, 2, "the backends' flows");
	CHECK_EQ(active, 1, "one flow active, the old one gone");
	ph_check_no_drops(w, "reused port");
}

/*
 * A client port reused while its earlier flow is in TIME_WAIT: while that
 * flow's backend takes new flows the SYN reopens the flow; once the
 * backend is drained (an instance being scaled down, soon gone) the SYN
 * makes a new flow on an eligible backend instead.
 */
static void
test_tcp_reuse_drained(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, NULL);
	struct lb_worker *w = e->dp.w[0];
	struct conn c = tcp_conn(40001, 0);
	const struct lb_flow *f;
	struct lb_dpconf *d, *orig;

	announce(e, 0, 0, IP_C, mac_c);
	announce(e, 1, 0, IP_BE(0), mac_be[0]);
	announce(e, 1, 0, IP_BE(1), mac_be[1]);
	ph_poll(e, 0);
	relay_first(e, &c, seg_syn(ISS));
	for (unsigned int i = 0; i < NELEM(tcp_steps); i++)
		relay(e, &c, &tcp_steps[i].s);
	f = find_flow(e, 0, &c);
	assert_non_null(f);
	CHECK_EQ(f->state, LB_FLOW_TIME_WAIT, "first connection closed");

	/* Backends 0 and 2 drained: only 1 is eligible. The worker takes
	 * the new table up at its next poll. */
	orig = e->dp.conf;
	d = rte_zmalloc("lbpkt_conf2", sizeof(*d), 0);
	assert_non_null(d);
	memcpy(d, orig, sizeof(*d));
	d->gen++;
	d->svc[SVC_TCP].be[0].state = LB_BE_DRAINING;
	d->svc[SVC_TCP].be[2].state = LB_BE_DRAINING;
	e->dp.conf = d;
	ph_poll(e, 0);
	conn_be(&c, 1);
	relay_first(e, &c, seg_syn(ISS + 1000000));
	f = find_flow(e, 0, &c);
	assert_non_null(f);
	CHECK_EQ(f->be, 1, "the reused port's SYN went to an eligible backend");
	CHECK_EQ(f->state, LB_FLOW_SYN_SENT, "a new flow");
	CHECK_EQ(w->st.flows_created, 2, "flows");
	CHECK_EQ(w->bst[SVC_TCP][0].active, 0, "the old flow is gone");
	CHECK_EQ(w->bst[SVC_TCP][1].active, 1, "the new flow");
	ph_check_no_drops(w, "reused port");
	e->dp.conf = orig;
	ph_poll(e, 0);
	rte_free(d);
	ph_env_close(e, 1);
}

/*
 * A RST or a FIN changes a flow's state only with a sequence number its
 * receiver would accept (RFC 5961): a blind one, far from the window, is
 * dropped and counted, and the flow goes on; a RST in the window but not
 * exact gets a challenge ACK from the dataplane, in the other side's
 * name, and changes nothing; the exact RST closes the flow.
 */
static void
test_blind_rst(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, NULL);
	const struct lb_worker *w = e->dp.w[0];
	struct conn c = tcp_conn(48100, 0);
	struct lb_worker_stats before;
	struct pb_frame in, want;
	struct pb_dg d;
	const struct seg request = {.what = "request",
				    .dir = TO_BE,
				    .flags = PB_PSH | PB_ACK,
				    .seq = ISS + 1,
				    .ack = IRS + 1,
				    .plen = 100};
	const struct seg response = {.what = "response",
				     .dir = TO_C,
				     .flags = PB_PSH | PB_ACK,
				     .seq = IRS + 1,
				     .ack = ISS + 101,
				     .plen = 300};
	const struct seg blind[] = {
		{.what = "blind client RST",
		 .dir = TO_BE,
		 .flags = PB_RST,
		 .seq = ISS + 0x40000000u},
		{.what = "blind client RST one past the window",
		 .dir = TO_BE,
		 .flags = PB_RST,
		 .seq = ISS + 101 + 65160 + 1},
		{.what = "blind client FIN",
		 .dir = TO_BE,
		 .flags = PB_FIN | PB_ACK,
		 .seq = ISS + 0x80000000u,
		 .ack = IRS + 301},
		{.what = "blind backend RST",
		 .dir = TO_C,
		 .flags = PB_RST | PB_ACK,
		 .seq = IRS - 0x30000000u,
		 .ack = ISS + 101},
		{.what = "blind backend FIN",
		 .dir = TO_C,
		 .flags = PB_FIN | PB_ACK,
		 .seq = IRS + 301 + 64240 + 1,
		 .ack = ISS + 101},
	};
	const struct seg next = {.what = "the client's next segment",
				 .dir = TO_BE,
				 .flags = PB_PSH | PB_ACK,
				 .seq = ISS + 101,
				 .ack = IRS + 301,
				 .plen = 50};
	const struct seg near = {.what = "client RST in window, not exact",
				 .dir = TO_BE,
				 .flags = PB_RST,
				 .seq = ISS + 151 + 30000};
	const struct seg bnear = {.what = "backend RST in window, not exact",
				  .dir = TO_C,
				  .flags = PB_RST | PB_ACK,
				  .seq = IRS + 301 - 200,
				  .ack = ISS + 151};
	const struct seg exact = {.what = "client RST, exact",
				  .dir = TO_BE,
				  .flags = PB_RST,
				  .seq = ISS + 151};

	learn_all(e);
	open_tcp(e, &c, ISS, IRS);
	relay(e, &c, &request);
	relay(e, &c, &response);
	for (unsigned int i = 0; i < NELEM(blind); i++) {
		before = w->st;
		seg_frame(&in, &c, &blind[i], 0);
		ph_inject(e, in_port(&blind[i]), 0, &in);
		ph_poll(e, 0);
		ph_expect_quiet(e, blind[i].what);
		ph_check_drop_delta(w, &before, LB_DROP_TCP_WINDOW,
				    blind[i].what);
		CHECK_EQ(find_flow(e, 0, &c)->state, LB_FLOW_ESTABLISHED,
			 blind[i].what);
	}
	relay(e, &c, &next);

	/* The challenge ACK to the client, from the VIP: the backend's next
	 * sequence number, all the client sent acknowledged, the backend's
	 * window (no scaling: the SYNs carried no scale option). */
	before = w->st;
	seg_frame(&in, &c, &near, 0);
	ph_inject(e, 0, 0, &in);
	ph_poll(e, 0);
	d = (struct pb_dg){.proto = PB_PROTO_TCP, .ttl = TTL_OWN,
			   .frag = PB_IP_DF, .src = IP_VIP, .dst = IP_C,
			   .sport = VPORT, .dport = c.cport, .seq = IRS + 301,
			   .ack = ISS + 151, .flags = PB_ACK, .win = 65160};
	pb_ipv4_frame(&want, mac_c, mac_port[0], &d);
	ph_expect_frame(e, 0, 0, &want, near.what);
	CHECK_EQ(w->st.challenge_acks, before.challenge_acks + 1, near.what);
	ph_check_drop_delta(w, &before, -1, near.what);
	CHECK_EQ(find_flow(e, 0, &c)->state, LB_FLOW_ESTABLISHED, near.what);

	/* And to the backend, from the SNAT address, in the client's name. */
	seg_frame(&in, &c, &bnear, 0);
	ph_inject(e, 1, 0, &in);
	ph_poll(e, 0);
	d = (struct pb_dg){.proto = PB_PROTO_TCP, .ttl = TTL_OWN,
			   .frag = PB_IP_DF, .src = IP_SNAT, .dst = c.bip,
			   .sport = c.sport, .dport = c.bport,
			   .seq = ISS + 151, .ack = IRS + 301,
			   .flags = PB_ACK, .win = 64240};
	pb_ipv4_frame(&want, c.bmac, mac_port[1], &d);
	ph_expect_frame(e, 1, 0, &want, bnear.what);
	CHECK_EQ(w->st.challenge_acks, before.challenge_acks + 2, bnear.what);
	CHECK_EQ(find_flow(e, 0, &c)->state, LB_FLOW_ESTABLISHED, bnear.what);

	relay(e, &c, &exact);
	CHECK_EQ(find_flow(e, 0, &c)->state, LB_FLOW_CLOSED, exact.what);
	ph_env_close(e, 1);
}

/* ---- SNAT addresses changed live --------------------------------------- */

#define IP_SNAT2 PB_IP(10, 1, 0, 3)

static const char *const conf_no_snat[] = {"snat del 10.1.0.2", NULL};
static const char *const conf_snat_moved[] = {
	"snat del 10.1.0.2",
	"snat add 10.1.0.3 port 1",
	NULL,
};

/*
 * The client SYN of @p c through the worker; the source address of the
 * frame sent to the backend (host order; its port goes to c->sport).
 */
static uint32_t
syn_snat(struct ph_env *e, struct conn *c, uint32_t iss, const char *what)
{
	struct pb_frame in, got;

	seg_frame(&in, c, seg_syn(iss), 0);
	ph_inject(e, 0, c->q, &in);
	ph_poll(e, c->q);
	ph_expect_one(e, 1, c->q, &got, what);
	if (got.len < ETH + 28)
		fail_msg("%s: %u bytes sent", what, got.len);
	c->sport = pb_get16(got.b + ETH + 20);
	return pb_get32(got.b + ETH + 12);
}

/* A SYN of @p c that the worker refuses for want of a SNAT port. */
static void
syn_snat_full(struct ph_env *e, const struct conn *c, const char *what)
{
	struct lb_worker *w = e->dp.w[0];
	struct lb_worker_stats before = w->st;
	struct pb_frame in;

	seg_frame(&in, c, seg_syn(ISS), 0);
	ph_inject(e, 0, 0, &in);
	ph_poll(e, 0);
	ph_expect_quiet(e, what);
	ph_check_drop_delta(w, &before, LB_DROP_SNAT_FULL, what);
}

/* Makes @p d the published table and lets the worker take it up. */
static void
publish(struct ph_env *e, struct lb_dpconf *d)
{
	e->dp.conf = d;
	ph_poll_all(e);
}

/* A SNAT address added to the table serves the next SYN: no restart. */
static void
test_snat_add_live(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, conf_no_snat);
	struct lb_worker *w = e->dp.w[0];
	struct lb_dpconf *boot = e->dp.conf, *d;
	struct conn c = tcp_conn(40101, 0);

	/* Every backend: the scheduler's pick depends on the run's seed. */
	learn_all(e);
	syn_snat_full(e, &c, "SYN with no SNAT address");

	d = compile_conf(e, NULL, boot);
	publish(e, d);
	CHECK_EQ(syn_snat(e, &c, ISS + 7, "SYN after snat add"), IP_SNAT,
		 "the added address");
	CHECK_EQ(w->st.flows_created, 1, "flows");
	e->dp.conf = boot;
	ph_env_close(e, 1);
	rte_free(d);
}

/* A third service whose one backend a flood can aim at. */
#define IP_VIP3 PB_IP(203, 0, 113, 12)
#define SNAT_PORTS 4 /* the worker's slice in test_snat_ports_per_backend */
static const char *const conf_flooded[] = {
	"service add tcp 203.0.113.12:80 sched rr syn-timeout 30ms",
	"backend add tcp 203.0.113.12:80 10.1.0.23:8080",
	NULL,
};

/* A client of the flooded service, from port @p cport. */
static struct conn
flood_conn(uint16_t cport)
{
	struct conn c = tcp_conn(cport, 3);

	c.vip = IP_VIP3;
	return c;
}

/*
 * The flooded service's dataplane, neighbours learnt, whose worker has a
 * slice of SNAT_PORTS ports instead of 64,512: the same exhaustion after
 * four SYNs instead of 64,512.
 */
static struct ph_env *
env_flooded(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, conf_flooded);
	struct lb_worker *w = e->dp.w[0];
	uint32_t snat = htonl(IP_SNAT);
	struct lb_snat_conf sc = {
		.addrs = &snat, .nb_addrs = 1, .max_addrs = LB_CONF_MAX_SNATS,
		.port_min = 40000, .port_max = 40000 + SNAT_PORTS - 1,
		.nb_workers = 1,
	};

	assert_true(lb_snat_mem_size(&sc) <= w->snat->mem_size);
	assert_int_equal(lb_snat_init(w->snat, &sc), 0);
	learn_all(e);
	return e;
}

/*
 * A SYN flood at one backend uses up that backend's SNAT ports only: a
 * new flow to another backend of the same SNAT address gets a port (one
 * the flood holds towards the flooded backend), and the flooded backend's
 * ports come back once its half-open flows expire.
 */
static void
test_snat_ports_per_backend(void **state)
{
	struct ph_env *e = env_flooded(state);
	struct lb_worker *w = e->dp.w[0];
	uint32_t snat = htonl(IP_SNAT);
	struct lb_snat_stats st;
	struct conn c;
	uint64_t t0;
	uint32_t until;
	int svc;

	for (int i = 0; i < SNAT_PORTS; i++) {
		c = flood_conn((uint16_t)(42000 + i));
		CHECK_EQ(syn_snat(e, &c, ISS + (uint32_t)i, "flood SYN"),
			 IP_SNAT, "the flood's SNAT address");
	}
	CHECK_EQ(lb_snat_nb_free(w->snat), 0, "ports no flow holds");
	c = flood_conn(42100);
	syn_snat_full(e, &c, "SYN to the flooded backend");
	/* The refusal is remembered for its tick: the flood's next SYN is
	 * refused without probing the ports again. */
	svc = lb_dpconf_svc_find(e->dp.conf, PB_PROTO_TCP, htonl(IP_VIP3),
				 htons(VPORT));
	assert_true(svc >= 0);
	until = w->snat_full[svc][0];
	assert_true(until != 0);
	lb_snat_stats_get(w->snat, &st);
	c = flood_conn(42101);
	syn_snat_full(e, &c, "flood SYN, refused again");
	if ((int32_t)(until - (uint32_t)(ph_now_ns(e) >> 20)) > 0) {
		struct lb_snat_stats now;

		lb_snat_stats_get(w->snat, &now);
		CHECK_EQ(now.probes, st.probes, "ports probed again");
	}

	/* Another backend behind the same SNAT address: still a port. */
	c = tcp_conn(42200, 0);
	CHECK_EQ(syn_snat(e, &c, ISS, "SYN to another backend"), IP_SNAT,
		 "its SNAT address");
	if (c.sport < 40000 || c.sport >= 40000 + SNAT_PORTS)
		fail_msg("SNAT port %u outside the slice", c.sport);
	CHECK_EQ(lb_snat_addr_used(w->snat, snat), SNAT_PORTS + 1,
		 "pairs in use");

	/* The flood's half-open flows expire (syn-timeout 30ms, no other
	 * backend to retry, no deferred queue: the client gets RSTs). */
	t0 = ph_now_ns(e);
	while (lb_snat_addr_used(w->snat, snat) > 1) {
		ph_poll(e, 0);
		ph_take(e, 0, 0, NULL, 0);
		if (ph_now_ns(e) - t0 > WAIT_NS)
			fail_msg("the flood's ports never came back");
	}
	c = flood_conn(42300);
	CHECK_EQ(syn_snat(e, &c, ISS, "SYN to the flooded backend, later"),
		 IP_SNAT, "its SNAT address");
	ph_env_close(e, 1);
}

/* Lets the clock run @p ns without polling: timers pass, expiry waits. */
static void
sleep_unpolled(const struct ph_env *e, uint64_t ns)
{
	uint64_t t0 = ph_now_ns(e);

	while (ph_now_ns(e) - t0 < ns)
		;
}

/*
 * Every SNAT port of a backend held by flows that have timed out, none
 * expired yet (no poll since): the next SYN to that backend takes one of
 * their ports at once, in the poll it arrives in, and the flow that held
 * it is expired on demand and counted.
 */
static void
test_snat_reclaim_timed_out(void **state)
{
	struct ph_env *e = env_flooded(state);
	struct lb_worker *w = e->dp.w[0];
	uint32_t snat = htonl(IP_SNAT);
	struct lb_worker_stats before;
	struct pb_frame in, got;
	struct conn c;
	uint16_t sport;

	for (int i = 0; i < SNAT_PORTS; i++) {
		c = flood_conn((uint16_t)(42000 + i));
		syn_snat(e, &c, ISS + (uint32_t)i, "SYN filling the ports");
	}
	CHECK_EQ(lb_snat_nb_free(w->snat), 0, "ports no flow holds");
	CHECK_EQ(w->ft->stats.flows, SNAT_PORTS, "flows");
	/* syn-timeout 30ms, and a tick's rounding either side. */
	sleep_unpolled(e, 30000000ull + 3 * (1ull << LB_FLOW_TICK_SHIFT));
	CHECK_EQ(w->ft->stats.flows, SNAT_PORTS, "flows before the poll");

	before = w->st;
	c = flood_conn(42100);
	seg_frame(&in, &c, seg_syn(ISS), 0);
	ph_inject(e, 0, 0, &in);
	ph_poll(e, 0);
	CHECK_EQ(ph_take(e, 1, 0, &got, 1), 1, "frames to the backend");
	CHECK_EQ(pb_get32(got.b + ETH + 12), IP_SNAT, "SNAT address");
	sport = pb_get16(got.b + ETH + 20);
	if (sport < 40000 || sport >= 40000 + SNAT_PORTS)
		fail_msg("SNAT port %u outside the slice", sport);
	CHECK_EQ(w->st.drop[LB_DROP_SNAT_FULL],
		 before.drop[LB_DROP_SNAT_FULL], "snat_ports_full");
	CHECK_EQ(w->st.flows_created, before.flows_created + 1,
		 "flows created");
	CHECK_EQ(w->ft->stats.reclaimed, 1, "flows reclaimed");
	/* The same poll's expiry took the other three: only the new flow
	 * is left, on one port. */
	CHECK_EQ(w->ft->stats.flows, 1, "flows after the poll");
	CHECK_EQ(lb_snat_addr_used(w->snat, snat), 1, "pairs in use");
	ph_take(e, 0, 0, NULL, 0); /* the flood's clients' RSTs */
	ph_settle(e);
	ph_take(e, 0, 0, NULL, 0);
	ph_take(e, 1, 0, NULL, 0);
	CHECK_EQ(w->st.flows_reclaimed, 1, "flows_reclaimed");
	CHECK_EQ(w->st.flows_overdue, 0, "flows_overdue");
	ph_env_close(e, 1);
}

/*
 * A SNAT address removed from the table drains: new flows take the other
 * one, an established flow on it keeps its address and port both ways,
 * and the table keeps it while the flow lives.
 */
static void
test_snat_del_drains(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, NULL);
	struct lb_worker *w = e->dp.w[0];
	struct lb_dpconf *boot = e->dp.conf, *d;
	struct conn c = tcp_conn(40201, 0);
	int sn;

	announce(e, 0, 0, IP_C, mac_c);
	for (int b = 0; b < 3; b++)
		announce(e, 1, 0, IP_BE(b), mac_be[b]);
	ph_poll(e, 0);
	open_tcp(e, &c, ISS, IRS); /* on IP_SNAT */
	CHECK_EQ(lb_snat_addr_used(w->snat, htonl(IP_SNAT)), 1,
		 "the flow's pair");

	d = compile_conf(e, conf_snat_moved, boot);
	sn = lb_dpconf_snat_find(d, htonl(IP_SNAT));
	assert_true(sn >= 0);
	CHECK_EQ(d->snat[sn].draining, 1, "the removed address is kept");
	CHECK_EQ(lb_dpconf_snat_gc_due(d, ph_snat_busy, e), false,
		 "not collected while its flow lives");
	publish(e, d);
	CHECK_EQ(lb_snat_addr_state(w->snat, htonl(IP_SNAT)),
		 LB_SNAT_ADDR_DRAINING, "the worker drains it");

	/* New flows avoid it. */
	for (int i = 0; i < 4; i++) {
		struct conn n = tcp_conn((uint16_t)(40300 + i), (1 + i) % 3);

		CHECK_EQ(syn_snat(e, &n, ISS + 100u * (uint32_t)i,
				  "SYN after snat del"),
			 IP_SNAT2, "a new flow's SNAT address");
	}
	/* The established flow forwards both ways on its pair. */
	for (unsigned int i = 2; i < 5; i++)
		relay(e, &c, &tcp_steps[i].s);
	CHECK_EQ(lb_snat_addr_used(w->snat, htonl(IP_SNAT)), 1,
		 "the flow keeps its pair");
	e->dp.conf = boot;
	ph_env_close(e, 1);
	rte_free(d);
}

/* ---- UDP --------------------------------------------------------------- */

static void
test_udp(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, NULL);
	const struct lb_worker *w = e->dp.w[0];
	struct conn u = udp_conn(5000);
	struct conn z = u;
	const struct seg query = {
		.what = "query", .dir = TO_BE, .seq = 1, .plen = 40};
	const struct seg answer = {
		.what = "answer", .dir = TO_C, .seq = 2, .plen = 200};
	const struct seg again = {.what = "second query, odd length",
				  .dir = TO_BE,
				  .seq = 3,
				  .plen = 33};
	const struct seg query0 = {.what = "query without checksum",
				   .dir = TO_BE,
				   .seq = 4,
				   .plen = 24,
				   .csum0 = 1};
	const struct seg answer0 = {.what = "answer without checksum",
				    .dir = TO_C,
				    .seq = 5,
				    .plen = 99,
				    .csum0 = 1};
	struct pb_frame got, want, in;

	learn_all(e);
	relay_first(e, &u, &query);
	relay(e, &u, &answer);
	relay(e, &u, &again);

	z.cport = 5001;
	seg_frame(&in, &z, &query0, 0);
	ph_inject(e, 0, 0, &in);
	ph_poll(e, 0);
	ph_expect_one(e, 1, 0, &got, query0.what);
	z.sport = pb_get16(got.b + ETH + 20);
	CHECK_EQ(pb_get16(got.b + ETH + 26), 0, "UDP checksum to the backend");
	seg_frame(&want, &z, &query0, 1);
	ph_expect_same(&got, &want, query0.what);
	if (z.sport == u.sport)
		fail_msg("two flows share SNAT port %u", z.sport);
	seg_frame(&in, &z, &answer0, 0);
	ph_inject(e, 1, 0, &in);
	ph_poll(e, 0);
	ph_expect_one(e, 0, 0, &got, answer0.what);
	CHECK_EQ(pb_get16(got.b + ETH + 26), 0, "UDP checksum to the client");
	seg_frame(&want, &z, &answer0, 1);
	ph_expect_same(&got, &want, answer0.what);

	CHECK_EQ(w->st.flows_created, 2, "UDP flows");
	CHECK_EQ(w->bst[SVC_UDP][0].flows, 2, "UDP backend");
	CHECK_EQ(w->bst[SVC_UDP][0].active, 2, "UDP backend");
	ph_check_no_drops(w, "UDP");
	ph_env_close(e, 1);
}

#define UNREPLIED_NS 200000000ull /* conf_udp_unreplied */
#define ATTACK_PORTS 64

static const char *const conf_udp_unreplied[] = {
	"service set udp 203.0.113.10:53 sched rr timeout-udp 1h "
	"timeout-udp-unreplied 200ms",
	NULL,
};

/* SNAT pairs worker @w holds now. */
static uint64_t
snat_held(const struct lb_worker *w)
{
	struct lb_snat_stats st;

	lb_snat_stats_get(w->snat, &st);
	return st.allocs - st.frees;
}

/*
 * Datagrams from many new source ports that nobody answers (a spoofed or
 * scanning client) hold their flows and SNAT ports for
 * timeout-udp-unreplied, not timeout-udp: they expire after 200 ms and
 * not before, give their ports back and are counted, while a flow its
 * backend answered, idle as long, keeps timeout-udp (1 h) and its port.
 */
static void
test_udp_unreplied(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, conf_udp_unreplied);
	const struct lb_worker *w = e->dp.w[0];
	struct conn u = udp_conn(5000);
	const struct seg query = {
		.what = "query", .dir = TO_BE, .seq = 1, .plen = 40};
	const struct seg answer = {
		.what = "answer", .dir = TO_C, .seq = 2, .plen = 200};
	const struct seg again = {.what = "query after the flood",
				  .dir = TO_BE,
				  .seq = 3,
				  .plen = 20};
	const struct seg probe = {.what = "unanswered datagram",
				  .dir = TO_BE,
				  .seq = 9,
				  .plen = 12};
	const struct lb_flow *f;
	uint64_t t0, t;

	learn_all(e);
	CHECK_EQ(lb_flow_svc_timeout_ns(w->ft, SVC_UDP, LB_FLOW_UDP_UNREPLIED) /
			 1000000ull,
		 UNREPLIED_NS / 1000000ull, "unreplied timeout, ms");
	/* A service that leaves it alone gets the 5 s default. */
	CHECK_EQ(lb_flow_svc_timeout_ns(w->ft, SVC_TCP, LB_FLOW_UDP_UNREPLIED) /
			 1000000000ull,
		 5, "default unreplied timeout, s");

	relay_first(e, &u, &query);
	f = find_flow(e, 0, &u);
	assert_non_null(f);
	CHECK_EQ(f->state, LB_FLOW_UDP_UNREPLIED, "state before the answer");
	relay(e, &u, &answer);
	CHECK_EQ(f->state, LB_FLOW_UDP, "state after the answer");

	for (uint16_t i = 0; i < ATTACK_PORTS; i++) {
		struct conn a = udp_conn((uint16_t)(20000 + i));

		relay_first(e, &a, &probe);
	}
	t0 = ph_now_ns(e);
	CHECK_EQ(w->ft->stats.flows, ATTACK_PORTS + 1, "flows in the flood");
	CHECK_EQ(snat_held(w), ATTACK_PORTS + 1, "SNAT ports in the flood");

	while (w->ft->stats.flows > 1) {
		ph_poll(e, 0);
		if (ph_now_ns(e) - t0 > WAIT_NS)
			fail_msg("%" PRIu64 " unanswered flows left after %llu "
				 "ms",
				 w->ft->stats.flows - 1, WAIT_NS / 1000000);
	}
	t = ph_now_ns(e) - t0;
	if (t + (1u << LB_FLOW_TICK_SHIFT) < UNREPLIED_NS)
		fail_msg("expired after %" PRIu64 " ms, timeout is 200 ms",
			 t / 1000000);
	CHECK_EQ(w->st.udp_unreplied, ATTACK_PORTS, "expired unreplied");
	CHECK_EQ(w->ft->stats.expired[LB_FLOW_UDP_UNREPLIED], ATTACK_PORTS,
		 "expired in their state");
	CHECK_EQ(snat_held(w), 1, "SNAT ports after the flood");
	ph_expect_quiet(e, "expiry");

	/* The answered flow, idle since before the flood, is still there
	 * under its SNAT port. */
	assert_ptr_equal(find_flow(e, 0, &u), f);
	CHECK_EQ(f->state, LB_FLOW_UDP, "answered flow");
	relay(e, &u, &again);
	CHECK_EQ(w->st.flows_created, ATTACK_PORTS + 1, "flows created");
	ph_check_no_drops(w, "UDP flood");
	ph_env_close(e, 1);
}

/* ---- new flows per source ------------------------------------------------ */


/*
 * A backlog of timed-out flows larger than one poll's expiry budget (no
 * poll while they time out): each poll expires LB_EXPIRE_BUDGET of them,
 * so the backlog is gone within ceil(backlog / budget) polls, and the
 * counters say what was overdue, what held SNAT ports, and the most one
 * poll did.
 */
static void
test_expiry_backlog(void **state)
{
	enum { N = 3 * LB_EXPIRE_BUDGET + 50 };
	struct ph_env *e = env_up(state, 1, FLOWS, conf_udp_unreplied);
	struct lb_worker *w = e->dp.w[0];
	const struct seg probe = {.what = "unanswered datagram",
				  .dir = TO_BE,
				  .seq = 9,
				  .plen = 12};
	unsigned int polls = 0;

	learn_all(e);
	for (uint16_t i = 0; i < N; i++) {
		struct conn a = udp_conn((uint16_t)(20000 + i));

		relay_first(e, &a, &probe);
	}
	CHECK_EQ(w->ft->stats.flows, N, "flows");
	CHECK_EQ(snat_held(w), N, "SNAT ports held");
	sleep_unpolled(e, UNREPLIED_NS + 3 * (1ull << LB_FLOW_TICK_SHIFT));

	while (w->ft->stats.flows > 0) {
		ph_poll(e, 0);
		polls++;
		if (polls == 1) {
			/* Housekeeping was due too: it counted the rest. */
			CHECK_EQ(w->st.flows_overdue, N - LB_EXPIRE_BUDGET,
				 "flows_overdue after one poll");
			CHECK_EQ(w->st.snat_ports_overdue,
				 N - LB_EXPIRE_BUDGET,
				 "snat_ports_overdue after one poll");
		}
		if (polls > (N + LB_EXPIRE_BUDGET - 1) / LB_EXPIRE_BUDGET)
			fail_msg("%" PRIu64 " flows left after %u polls",
				 w->ft->stats.flows, polls);
	}
	CHECK_EQ(w->st.expire_max, LB_EXPIRE_BUDGET, "expire_max");
	if (w->st.expire_max_ns == 0)
		fail_msg("expire_max_ns not measured");
	CHECK_EQ(snat_held(w), 0, "SNAT ports held after");
	CHECK_EQ(w->st.udp_unreplied, N, "expired unreplied");
	ph_settle(e);
	CHECK_EQ(w->st.flows_overdue, 0, "flows_overdue once caught up");
	CHECK_EQ(w->st.snat_ports_overdue, 0, "snat_ports_overdue");
	CHECK_EQ(w->st.flows_expired, N, "flows_expired");
	CHECK_EQ(w->st.flows_reclaimed, 0, "flows_reclaimed");
	ph_expect_quiet(e, "expiry");
	ph_env_close(e, 1);
}
/* One worker whose budget of new flows per source is @p burst at once and
 * then 1 per second (none more while a test runs), for @p sources. */
static struct ph_env *
env_budget(void **state, uint32_t burst, uint32_t sources)
{
	struct ph_env *e = ph_env_new(state);

	load_conf(e, NULL);
	e->dp.flows = FLOWS;
	e->dp.src_budget = (struct lb_src_budget_conf){
		.rate = 1, .burst = burst, .prefix = 32, .sources = sources};
	ph_env_start(e, 1);
	learn_all(e);
	return e;
}

/* Sends the first packet of @p c (a SYN, or a datagram) and returns
 * whether the worker forwarded it to the backend. */
static bool
first_fwd(struct ph_env *e, const struct conn *c)
{
	static const struct seg dg = {
		.what = "datagram", .dir = TO_BE, .seq = 1, .plen = 16};
	struct pb_frame in;
	unsigned int out;

	seg_frame(&in, c, c->proto == PB_PROTO_TCP ? seg_syn(ISS) : &dg, 0);
	ph_inject(e, 0, c->q, &in);
	ph_poll(e, c->q);
	out = ph_take(e, 1, c->q, NULL, 0);
	/* Over budget is silent: no RST toward whoever the source is. */
	CHECK_EQ(ph_take(e, 0, c->q, NULL, 0), 0, "frames to the client");
	return out == 1;
}

/* @p n SYNs of the client from new ports: how many were forwarded. */
static unsigned int
syn_flood(struct ph_env *e, unsigned int n)
{
	unsigned int passed = 0;

	for (unsigned int p = 0; p < n; p++) {
		struct conn c = tcp_conn((uint16_t)(40000 + p), 0);

		passed += first_fwd(e, &c);
	}
	return passed;
}

/*
 * One source opening connections from new ports as fast as it can (a
 * SYN flood from one address, or a client's UDP from new ports) gets
 * its burst and then nothing: no flow entry, no SNAT port, no SYN copy,
 * no RST; its datagrams count against the same budget; another source
 * still gets its flows, whole and byte for byte.
 */
static void
test_src_budget(void **state)
{
	struct ph_env *e = env_budget(state, 8, 1024);
	const struct lb_worker *w = e->dp.w[0];
	struct conn c;

	CHECK_EQ(syn_flood(e, 64), 8, "the flood's SYNs forwarded");
	CHECK_EQ(w->st.src_budget.dropped, 56, "dropped over budget");
	CHECK_EQ(w->st.flows_created, 8, "flows of the flood");
	CHECK_EQ(w->ft->stats.flows, 8, "flow entries of the flood");
	CHECK_EQ(snat_held(w), 8, "SNAT ports of the flood");
	CHECK_EQ(w->hold_cap - w->hold_nfree, 8, "SYN copies of the flood");
	CHECK_EQ(w->st.rst_sent + w->st.rst_no_flow, 0, "RSTs");
	/* The same source's datagrams: the same budget, spent. */
	c = udp_conn(41000);
	CHECK_EQ(first_fwd(e, &c), false, "flooder's datagram");
	CHECK_EQ(w->st.src_budget.dropped, 57, "dropped over budget");
	/* Another address is untouched, for TCP and UDP. */
	c = tcp_conn(40000, 8 % 3); /* rr: the flood had 8 picks */
	c.cip = IP_PING;
	relay_first(e, &c, seg_syn(ISS));
	c = udp_conn(41000);
	c.cip = IP_PING;
	relay_first(e, &c, &(struct seg){.what = "other source's datagram",
					 .dir = TO_BE,
					 .seq = 1,
					 .plen = 16});
	CHECK_EQ(w->st.flows_created, 10, "flows");
	CHECK_EQ(w->st.src_budget.dropped, 57, "dropped over budget");
	CHECK_EQ(w->st.src_budget.evicted, 0, "budgets forgotten");
	ph_expect_quiet(e, "after the flood");
}

/*
 * The budget table full (one set of four sources): an attacker spraying
 * new source addresses gets one flow per address, as any new client
 * would, but cannot push the source that is over its budget out of the
 * table: its debt is the largest of its set, so never the one replaced.
 */
static void
test_src_budget_full(void **state)
{
	struct ph_env *e = env_budget(state, 2, LB_SRC_BUDGET_WAYS);
	const struct lb_worker *w = e->dp.w[0];
	unsigned int passed;
	struct conn c;

	passed = syn_flood(e, 3);
	CHECK_EQ(passed, 2, "heavy source's SYNs forwarded");
	for (uint32_t s = 0; s < 200; s++) {
		c = tcp_conn(40000, 0);
		c.cip = PB_IP(100, 64, s >> 8, s & 0xff);
		passed += first_fwd(e, &c);
		if (s % 20 == 19) {
			c = tcp_conn((uint16_t)(41000 + s), 0);
			CHECK_EQ(first_fwd(e, &c), false,
				 "heavy source during the spray");
		}
	}
	CHECK_EQ(passed, 202, "SYNs forwarded");
	CHECK_EQ(w->st.src_budget.dropped, 11, "dropped over budget");
	if (w->st.src_budget.evicted == 0)
		fail_msg("the spray replaced no source that owed");
	CHECK_EQ(lb_src_budget_count(w->srcb), LB_SRC_BUDGET_WAYS,
		 "sources remembered");
}

/* ---- retries on refusal ------------------------------------------------ */

static void
test_retry(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, conf_slow_retry);
	const struct lb_worker *w = e->dp.w[0];
	const struct lb_be_stats *b = w->bst[SVC_TCP];
	struct conn c1 = tcp_conn(41001, 0), c2 = tcp_conn(41002, 1);
	struct conn c3 = tcp_conn(41003, 2);
	const struct seg synack = {.what = "SYN-ACK of the retried backend",
				   .dir = TO_C,
				   .flags = PB_SYN | PB_ACK,
				   .seq = IRS,
				   .ack = ISS + 1,
				   .mss = 1};
	struct pb_frame in, want;

	learn_all(e);

	/* RST from backend 0: the held SYN goes to backend 1, same SNAT
	 * port, and the client sees nothing. */
	relay_first(e, &c1, seg_syn(ISS));
	backend_rst(&in, &c1, ISS);
	ph_inject(e, 1, 0, &in);
	ph_poll(e, 0);
	conn_be(&c1, 1);
	seg_frame(&want, &c1, seg_syn(ISS), 1);
	ph_expect_frame(e, 1, 0, &want, "SYN retried on backend 1 after a RST");
	CHECK_EQ(b[0].errors, 1, "backend 0 after its RST");
	CHECK_EQ(b[0].active, 0, "backend 0 after its RST");
	CHECK_EQ(b[1].flows, 1, "backend 1 after the retry");
	CHECK_EQ(b[1].active, 1, "backend 1 after the retry");
	CHECK_EQ(w->st.syn_retries, 1, "retries");
	CHECK_EQ(w->st.flows_created, 1, "a retry is no new flow");
	relay(e, &c1, &synack);

	/* ICMP port unreachable from backend 1 (rr gives it the next
	 * client), quoting our SYN as RFC 792 does: header + 8 bytes. */
	relay_first(e, &c2, seg_syn(ISS + 1000));
	{
		uint8_t quote[28];
		struct pb_dg d = {
			.proto = PB_PROTO_ICMP,
			.ttl = TTL_IN,
			.id = 0x5151,
			.src = IP_BE(1),
			.dst = IP_SNAT,
			.type = 3,
			.code = 3,
			.data = quote,
			.plen = sizeof(quote),
		};

		seg_frame(&want, &c2, seg_syn(ISS + 1000), 1);
		memcpy(quote, want.b + ETH, sizeof(quote));
		pb_ipv4_frame(&in, mac_port[1], mac_be[1], &d);
	}
	ph_inject(e, 1, 0, &in);
	ph_poll(e, 0);
	conn_be(&c2, 2);
	seg_frame(&want, &c2, seg_syn(ISS + 1000), 1);
	ph_expect_frame(e, 1, 0, &want,
			"SYN retried on backend 2 after a port unreachable");
	CHECK_EQ(b[1].errors, 1, "backend 1 after its ICMP error");
	CHECK_EQ(w->st.syn_retries, 2, "retries");

	/* Every backend refuses: the SYN is queued, the client still sees
	 * nothing. */
	relay_first(e, &c3, seg_syn(ISS + 2000));
	for (int be = 2, n = 0; n < 3; n++, be = (be + 1) % 3) {
		conn_be(&c3, be);
		backend_rst(&in, &c3, ISS + 2000);
		ph_inject(e, 1, 0, &in);
		ph_poll(e, 0);
		if (n == 2) {
			ph_expect_quiet(e, "the last backend refused too");
			break;
		}
		conn_be(&c3, (be + 1) % 3);
		seg_frame(&want, &c3, seg_syn(ISS + 2000), 1);
		ph_expect_frame(e, 1, 0, &want, "SYN retried round-robin");
	}
	CHECK_EQ(w->st.deferred, 1, "SYNs queued");
	CHECK_EQ(w->st.rst_sent, 0, "RSTs");
	CHECK_EQ(w->st.syn_retries, 4, "retries");

	/* The client retransmits its SYN: it joins the queued entry and
	 * goes to no backend. */
	seg_frame(&in, &c3, seg_syn(ISS + 2000), 0);
	ph_inject(e, 0, 0, &in);
	ph_poll(e, 0);
	ph_expect_quiet(e, "SYN retransmitted while queued");
	CHECK_EQ(w->st.deferq_joined, 1, "SYNs joining their entry");
	CHECK_EQ(w->st.deferred, 1, "SYNs queued");
	CHECK_EQ(b[0].errors, 2, "backend 0");
	CHECK_EQ(b[1].errors, 2, "backend 1");
	CHECK_EQ(b[2].errors, 1, "backend 2");
	CHECK_EQ(w->st.flows_created, 3, "flows");
	ph_check_no_drops(w, "retries");
	ph_env_close(e, 1);
}

/* A SYN the backend never answers fails after syn-timeout. */
static void
test_syn_timeout(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, conf_syn_timeout);
	const struct lb_worker *w = e->dp.w[0];
	struct conn c = tcp_conn(41100, 0);
	struct pb_frame got, want;
	uint64_t t0, t;

	learn_all(e);
	t0 = ph_now_ns(e);
	relay_first(e, &c, seg_syn(ISS));
	for (;;) {
		ph_poll(e, 0);
		if (ph_take(e, 0, 0, NULL, 0) != 0)
			fail_msg("the client got a frame during the retry");
		if (ph_take(e, 1, 0, &got, 1) != 0)
			break;
		t = ph_now_ns(e);
		if (t - t0 > WAIT_NS)
			fail_msg("no retry %" PRIu64 " ms after the SYN",
				 (t - t0) / 1000000);
	}
	/* Flow times are whole ticks of 2^20 ns: one tick of slack. */
	t = ph_now_ns(e) - t0;
	if (t + (1u << LB_FLOW_TICK_SHIFT) < SYN_TIMEOUT_NS)
		fail_msg("retried after %" PRIu64 " us, syn-timeout is 30 ms",
			 t / 1000);
	conn_be(&c, 1);
	seg_frame(&want, &c, seg_syn(ISS), 1);
	ph_expect_same(&got, &want, "SYN retried on backend 1 after a timeout");
	CHECK_EQ(w->bst[SVC_TCP][0].errors, 1, "backend 0");
	CHECK_EQ(w->st.syn_retries, 1, "retries");
	ph_check_no_drops(w, "SYN timeout");
	ph_env_close(e, 1);
}

/* ---- the deferred queue ------------------------------------------------ */

/*
 * Polls until the client gets a frame; backends answer every SYN they
 * get with a RST. Returns the number of SYNs they refused.
 */
static unsigned int
wait_client_frame(struct ph_env *e, uint64_t t0, struct pb_frame *got,
		  const char *what)
{
	struct pb_frame syn[8];
	unsigned int refused = 0;
	uint64_t t;

	for (;;) {
		unsigned int n;

		ph_poll(e, 0);
		n = ph_take(e, 1, 0, syn, NELEM(syn));
		if (n > NELEM(syn))
			fail_msg("%s: %u frames to the backends", what, n);
		for (unsigned int i = 0; i < n; i++) {
			struct conn c = tcp_conn(0, 0);
			struct pb_frame rst;
			uint32_t ip = pb_get32(syn[i].b + ETH + 16);

			if (ip < IP_BE(0) || ip > IP_BE(2))
				fail_msg("%s: a frame to %08x", what, ip);
			conn_be(&c, (int)(ip - IP_BE(0)));
			c.sport = pb_get16(syn[i].b + ETH + 20);
			/* The forwarded SYN's sequence number is the
			 * ISS its RST must acknowledge. */
			backend_rst(&rst, &c, pb_get32(syn[i].b + ETH + 24));
			ph_inject(e, 1, 0, &rst);
			refused++;
		}
		if (ph_take(e, 0, 0, got, 1) != 0)
			return refused;
		t = ph_now_ns(e);
		if (t - t0 > WAIT_NS)
			fail_msg("%s: no RST to the client %" PRIu64
				 " ms after the SYN was queued (expiry is "
				 "150 ms); the backends refused %u "
				 "re-dispatched SYNs meanwhile",
				 what, (t - t0) / 1000000, refused);
	}
}

/* No eligible backend: the SYN waits, a retransmission joins it, and
 * the client gets one RST at expiry. */
static void
test_deferq_no_backend(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, NULL);
	const struct lb_worker *w = e->dp.w[0];
	struct conn c = tcp_conn(42001, 3);
	struct pb_frame in, got, want;
	uint64_t t0, t;

	learn_all(e);
	c.vip = IP_VIP2;
	seg_frame(&in, &c, seg_syn(ISS), 0);
	t0 = ph_now_ns(e);
	ph_inject(e, 0, 0, &in);
	ph_poll(e, 0);
	ph_expect_quiet(e, "SYN to a service whose backends all drain");
	CHECK_EQ(w->st.deferred, 1, "SYNs queued");
	CHECK_EQ(w->st.flows_created, 0, "flows");

	ph_inject(e, 0, 0, &in);
	ph_poll(e, 0);
	ph_expect_quiet(e, "retransmitted SYN while queued");
	CHECK_EQ(w->st.deferq_joined, 1, "SYNs joining their entry");
	CHECK_EQ(w->st.deferred, 1, "SYNs queued");

	wait_client_frame(e, t0, &got, "queued SYN");
	t = ph_now_ns(e) - t0;
	if (t < EXPIRY_NS)
		fail_msg("RST after %" PRIu64 " ms, expiry is 150 ms",
			 t / 1000000);
	client_rst_frame(&want, IP_VIP2, c.cport, ISS);
	ph_expect_same(&got, &want, "RST at expiry");
	CHECK_EQ(w->st.rst_sent, 1, "RSTs");

	/* The joined copy was the entry's only packet: no second RST. */
	t0 = ph_now_ns(e);
	while (ph_now_ns(e) - t0 < QUIET_NS)
		ph_poll(e, 0);
	ph_expect_quiet(e, "after the RST");
	CHECK_EQ(w->st.rst_sent, 1, "RSTs");
	CHECK_EQ(w->st.flows_created, 0, "flows");
	ph_check_no_drops(w, "deferred queue");
	ph_env_close(e, 1);
}

/*
 * Admission: a service admitting 1 new connection/s with a burst of 1.
 * The client's first SYN is forwarded; the next one is answered with a
 * RST and its key enters the negative cache, which the worker reports
 * once (LB_FB_REJECT); a third SYN in the same interval gets a RST
 * without another report. No flow is created for either.
 */
static void
test_admit(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, conf_admit);
	uint64_t sz = lb_admit_shm_size(1024);
	struct lb_admit_shm *sh;
	struct pb_frame in, want;
	const struct lb_worker *w;
	struct lb_fb r;
	struct conn c;

	/* The worker borrows from global buckets only when it has some. */
	sh = lb_admit_shm_init(rte_zmalloc("lbpkt_admit", sz, 64), 1024);
	assert_non_null(sh);
	lb_worker_free(e->dp.w[0]);
	e->dp.admit = sh;
	e->dp.w[0] = lb_worker_create(&e->dp, 0, rte_lcore_id());
	assert_non_null(e->dp.w[0]);
	w = e->dp.w[0];
	learn_all(e);
	announce(e, 1, 0, IP_BE(0), mac_be[0]);
	announce(e, 1, 0, IP_BE(1), mac_be[1]);
	ph_poll(e, 0);

	c = tcp_conn(43001, 0);
	seg_frame(&in, &c, seg_syn(ISS), 0);
	ph_inject(e, 0, 0, &in);
	ph_poll(e, 0);
	CHECK_EQ(w->st.flows_created, 1, "first SYN: flows");
	for (uint16_t p = 0; p < NB_PORTS; p++)
		ph_take(e, p, 0, NULL, 0);

	for (uint16_t k = 0; k < 2; k++) {
		c = tcp_conn((uint16_t)(43002 + k), 0);
		seg_frame(&in, &c, seg_syn(ISS), 0);
		ph_inject(e, 0, 0, &in);
		ph_poll(e, 0);
		client_rst_frame(&want, IP_VIP, c.cport, ISS);
		ph_expect_frame(e, 0, 0, &want, "rejected SYN: RST");
	}
	CHECK_EQ(w->st.flows_created, 1, "flows after the rejected SYNs");
	CHECK_EQ(w->st.rst_sent, 2, "RSTs");
	/* The first connection ends with a RST; a new connection on its
	 * tuple is a new connection, admitted or not like any other:
	 * reusing a port must not get round the limit. */
	{
		static struct seg rst = {.what = "client RST",
					 .dir = TO_BE,
					 .flags = PB_RST,
					 .seq = ISS + 1};

		c = tcp_conn(43001, 0);
		seg_frame(&in, &c, &rst, 0);
		ph_inject(e, 0, 0, &in);
		ph_poll(e, 0);
		for (uint16_t p = 0; p < NB_PORTS; p++)
			ph_take(e, p, 0, NULL, 0);
		seg_frame(&in, &c, seg_syn(ISS + 100000), 0);
		ph_inject(e, 0, 0, &in);
		ph_poll(e, 0);
		client_rst_frame(&want, IP_VIP, c.cport, ISS + 100000);
		ph_expect_frame(e, 0, 0, &want, "SYN on a closed tuple: RST");
	}
	CHECK_EQ(w->st.rst_sent, 3, "RSTs");
	CHECK_EQ(w->st.admit.n[LB_ADMIT_KEY_SVC][LB_ADMIT_PASS], 1, "passed");
	CHECK_EQ(w->st.admit.n[LB_ADMIT_KEY_SVC][LB_ADMIT_REJ_EMPTY], 1,
		 "rejected: bucket empty");
	CHECK_EQ(w->st.admit.n[LB_ADMIT_KEY_SVC][LB_ADMIT_REJ_NEG], 2,
		 "rejected: negative cache");
	CHECK_EQ(w->st.admit_svc[SVC_TCP].n[LB_ADMIT_REJ_EMPTY], 1,
		 "service's rejections");
	/* One report, for the key entering the negative cache. */
	while (rte_ring_sc_dequeue_elem(w->fb, &r, sizeof(r)) == 0 &&
	       r.kind != LB_FB_REJECT)
		;
	CHECK_EQ(r.kind, LB_FB_REJECT, "feedback kind");
	CHECK_EQ(r.u32, IP_C, "rejected client, host order");
	CHECK_EQ(r.svc, SVC_TCP, "service slot");
	CHECK_EQ(r.flags & 0xff, LB_ADMIT_REJ_EMPTY, "reason");
	CHECK_EQ(r.flags >> 8, LB_ADMIT_KEY_SVC, "key class");
	while (rte_ring_sc_dequeue_elem(w->fb, &r, sizeof(r)) == 0)
		if (r.kind == LB_FB_REJECT)
			fail_msg("a second LB_FB_REJECT in the interval");
	ph_env_close(e, 1);
	rte_free(sh);
}

/* Every backend refuses, every time: the client gets a RST at expiry. */
static void
test_deferq_refused(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, NULL);
	const struct lb_worker *w = e->dp.w[0];
	struct conn c = tcp_conn(42101, 0);
	struct pb_frame in, got, want;
	uint64_t t0 = 0, t;

	learn_all(e);
	relay_first(e, &c, seg_syn(ISS));
	for (int be = 0; be < 3; be++) {
		conn_be(&c, be);
		backend_rst(&in, &c, ISS);
		ph_inject(e, 1, 0, &in);
		t0 = ph_now_ns(e);
		ph_poll(e, 0);
		if (be == 2)
			break;
		conn_be(&c, be + 1);
		seg_frame(&want, &c, seg_syn(ISS), 1);
		ph_expect_frame(e, 1, 0, &want, "SYN retried round-robin");
	}
	ph_expect_quiet(e, "every backend refused");
	CHECK_EQ(w->st.deferred, 1, "SYNs queued");

	wait_client_frame(e, t0, &got, "SYN refused by every backend");
	t = ph_now_ns(e) - t0;
	if (t < EXPIRY_NS)
		fail_msg("RST after %" PRIu64 " ms, expiry is 150 ms",
			 t / 1000000);
	client_rst_frame(&want, IP_VIP, c.cport, ISS);
	ph_expect_same(&got, &want, "RST at expiry");
	CHECK_EQ(w->st.rst_sent, 1, "RSTs");
}

/* ---- ICMP errors about established flows ------------------------------- */

static void
test_icmp_frag_needed(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, NULL);
	const struct lb_worker *w = e->dp.w[0];
	struct conn c = tcp_conn(43001, 0);
	const struct seg req = {.what = "large request",
				.dir = TO_BE,
				.flags = PB_PSH | PB_ACK,
				.seq = ISS + 1,
				.ack = IRS + 1,
				.plen = 400};
	const struct seg resp = {.what = "large response",
				 .dir = TO_C,
				 .flags = PB_ACK,
				 .seq = IRS + 1,
				 .ack = ISS + 401,
				 .plen = 1400};
	const struct seg synack = {.what = "SYN-ACK after frag-needed",
				   .dir = TO_C,
				   .flags = PB_SYN | PB_ACK,
				   .seq = IRS,
				   .ack = ISS + 1,
				   .mss = 1};
	struct conn c2;
	uint8_t dgram[PB_FRAME_MAX], quote[140];
	struct pb_frame in, want;
	struct pb_dg d, q;

	learn_all(e);
	open_tcp(e, &c, ISS, IRS);
	relay(e, &c, &req);

	/* The backend's side says "fragmentation needed, MTU 1400" about
	 * the request as it got it (SNAT -> backend, quoted in part)... */
	seg_frame(&want, &c, &req, 1);
	memcpy(quote, want.b + ETH, sizeof(quote));
	d = (struct pb_dg){.proto = PB_PROTO_ICMP,
			   .ttl = TTL_IN,
			   .id = 0x6161,
			   .src = IP_BE(0),
			   .dst = IP_SNAT,
			   .type = 3,
			   .code = 4,
			   .rest = 1400,
			   .data = quote,
			   .plen = sizeof(quote)};
	pb_ipv4_frame(&in, mac_port[1], mac_be[0], &d);
	/* ... the client must hear it from the VIP about client -> VIP,
	 * the quoted TTL as the backend saw it. */
	seg_dg(&q, &c, &req, 0);
	q.ttl = TTL_FWD;
	pb_ipv4(dgram, &q);
	memcpy(quote, dgram, sizeof(quote));
	d.src = IP_VIP;
	d.dst = IP_C;
	d.ttl = TTL_FWD;
	pb_ipv4_frame(&want, mac_c, mac_port[0], &d);
	ph_inject(e, 1, 0, &in);
	ph_poll(e, 0);
	ph_expect_frame(e, 0, 0, &want, "frag-needed from the backend side");
	CHECK_EQ(w->st.icmp_translated, 1, "ICMP errors translated");

	/* A router on the client side about the response (VIP -> client):
	 * the backend hears it from the SNAT address about itself ->
	 * SNAT. */
	relay(e, &c, &resp);
	seg_frame(&want, &c, &resp, 1);
	memcpy(quote, want.b + ETH, 48);
	d = (struct pb_dg){.proto = PB_PROTO_ICMP,
			   .ttl = TTL_IN,
			   .id = 0x7171,
			   .src = IP_RTR,
			   .dst = IP_VIP,
			   .type = 3,
			   .code = 4,
			   .rest = 1280,
			   .data = quote,
			   .plen = 48};
	pb_ipv4_frame(&in, mac_port[0], mac_rtr, &d);
	seg_dg(&q, &c, &resp, 0);
	q.ttl = TTL_FWD;
	pb_ipv4(dgram, &q);
	memcpy(quote, dgram, 48);
	d.src = IP_SNAT;
	d.dst = IP_BE(0);
	d.ttl = TTL_FWD;
	pb_ipv4_frame(&want, mac_be[0], mac_port[1], &d);
	ph_inject(e, 0, 0, &in);
	ph_poll(e, 0);
	ph_expect_frame(e, 1, 0, &want, "frag-needed from the client side");
	CHECK_EQ(w->st.icmp_translated, 2, "ICMP errors translated");

	/* Fragmentation needed during a handshake is no refusal either:
	 * the client hears of it and the trial goes on. */
	c2 = tcp_conn(43002, 1);
	relay_first(e, &c2, seg_syn(ISS));
	seg_frame(&want, &c2, seg_syn(ISS), 1);
	memcpy(quote, want.b + ETH, 48);
	d = (struct pb_dg){.proto = PB_PROTO_ICMP,
			   .ttl = TTL_IN,
			   .id = 0x7272,
			   .src = IP_BE(1),
			   .dst = IP_SNAT,
			   .type = 3,
			   .code = 4,
			   .rest = 1200,
			   .data = quote,
			   .plen = 48};
	pb_ipv4_frame(&in, mac_port[1], mac_be[1], &d);
	seg_dg(&q, &c2, seg_syn(ISS), 0);
	q.ttl = TTL_FWD;
	pb_ipv4(dgram, &q);
	memcpy(quote, dgram, 48);
	d.src = IP_VIP;
	d.dst = IP_C;
	d.ttl = TTL_FWD;
	pb_ipv4_frame(&want, mac_c, mac_port[0], &d);
	ph_inject(e, 1, 0, &in);
	ph_poll(e, 0);
	ph_expect_frame(e, 0, 0, &want, "frag-needed about a SYN");
	relay(e, &c2, &synack);
	CHECK_EQ(w->st.icmp_translated, 3, "ICMP errors translated");
	CHECK_EQ(w->st.syn_retries, 0, "ICMP errors that are no refusal");
	CHECK_EQ(w->bst[SVC_TCP][1].errors, 0, "backend 1");
	ph_check_no_drops(w, "ICMP errors");
	ph_env_close(e, 1);
}

/* ---- two workers: replies handed to the flow's owner ------------------- */

static void
test_redirect(void **state)
{
	struct ph_env *e = env_up(state, 2, FLOWS, NULL);
	const struct lb_worker *w0 = e->dp.w[0], *w1 = e->dp.w[1];
	struct conn c = tcp_conn(44001, 0);
	const struct seg synack = {.what = "SYN-ACK on worker 0's queue",
				   .dir = TO_C,
				   .flags = PB_SYN | PB_ACK,
				   .seq = IRS,
				   .ack = ISS + 1,
				   .mss = 1};
	const struct seg ack = {.what = "client ACK",
				.dir = TO_BE,
				.flags = PB_ACK,
				.seq = ISS + 1,
				.ack = IRS + 1};
	const struct seg data = {.what = "response on worker 1's queue",
				 .dir = TO_C,
				 .flags = PB_PSH | PB_ACK,
				 .seq = IRS + 1,
				 .ack = ISS + 1,
				 .plen = 64};
	uint8_t quote[40];
	struct pb_frame in, want;
	struct pb_dg d;

	/* Worker 0 learns the neighbours and tells worker 1. */
	learn_all(e);
	c.q = 1;
	relay_first(e, &c, seg_syn(ISS));

	seg_frame(&in, &c, &synack, 0);
	seg_frame(&want, &c, &synack, 1);
	ph_inject(e, 1, 0, &in);
	ph_poll(e, 0);
	ph_expect_quiet(e, "worker 0 with worker 1's reply");
	CHECK_EQ(w0->st.redirect_out, 1, "worker 0 handing over");
	ph_poll(e, 1);
	ph_expect_frame(e, 0, 1, &want, synack.what);
	CHECK_EQ(w1->st.redirect_in, 1, "worker 1 taking over");
	relay(e, &c, &ack);
	relay(e, &c, &data);

	/* An ICMP error about worker 1's flow, on worker 0's queue. */
	seg_frame(&want, &c, &ack, 1);
	memcpy(quote, want.b + ETH, sizeof(quote));
	d = (struct pb_dg){.proto = PB_PROTO_ICMP,
			   .ttl = TTL_IN,
			   .id = 0x4242,
			   .src = IP_BE(0),
			   .dst = IP_SNAT,
			   .type = 3,
			   .code = 4,
			   .rest = 1300,
			   .data = quote,
			   .plen = sizeof(quote)};
	pb_ipv4_frame(&in, mac_port[1], mac_be[0], &d);
	{
		uint8_t dgram[PB_FRAME_MAX];
		struct pb_dg q;

		seg_dg(&q, &c, &ack, 0);
		q.ttl = TTL_FWD;
		pb_ipv4(dgram, &q);
		memcpy(quote, dgram, sizeof(quote));
	}
	d.src = IP_VIP;
	d.dst = IP_C;
	d.ttl = TTL_FWD;
	pb_ipv4_frame(&want, mac_c, mac_port[0], &d);
	ph_inject(e, 1, 0, &in);
	ph_poll(e, 0);
	ph_expect_quiet(e, "worker 0 with an ICMP error about worker 1's flow");
	CHECK_EQ(w0->st.redirect_out, 2, "worker 0 handing over");
	ph_poll(e, 1);
	ph_expect_frame(e, 0, 1, &want, "ICMP error translated by worker 1");
	CHECK_EQ(w1->st.redirect_in, 2, "worker 1 taking over");
	CHECK_EQ(w1->st.icmp_translated, 1, "worker 1 translating");
	CHECK_EQ(w0->st.flows_created, 0, "worker 0's flows");
	CHECK_EQ(w1->st.flows_created, 1, "worker 1's flows");
	CHECK_EQ(w1->st.arp_requests, 0, "worker 1 knew its neighbours");
	ph_check_no_drops(w0, "worker 0");
	ph_check_no_drops(w1, "worker 1");
	ph_env_close(e, 1);
}

/*
 * A router's error about a response (VIP -> client) that the client-side
 * RSS hashed on (router, VIP) lands on any worker: @rest is the error's
 * bytes 4..7 as sent, @rest_out as the backend must get them.
 */
static void
frag_needed_frames(struct pb_frame *in, struct pb_frame *want,
		   const struct conn *c, const struct seg *s, uint32_t rest,
		   uint32_t rest_out)
{
	uint8_t dgram[PB_FRAME_MAX], quote[48];
	struct pb_frame sent;
	struct pb_dg d, q;

	seg_frame(&sent, c, s, 1);
	memcpy(quote, sent.b + ETH, sizeof(quote));
	d = (struct pb_dg){.proto = PB_PROTO_ICMP,
			   .ttl = TTL_IN,
			   .id = 0x7a7a,
			   .src = IP_RTR,
			   .dst = IP_VIP,
			   .type = 3,
			   .code = 4,
			   .rest = rest,
			   .data = quote,
			   .plen = sizeof(quote)};
	pb_ipv4_frame(in, mac_port[0], mac_rtr, &d);
	seg_dg(&q, c, s, 0);
	q.ttl = TTL_FWD;
	pb_ipv4(dgram, &q);
	memcpy(quote, dgram, sizeof(quote));
	d.src = IP_SNAT;
	d.dst = c->bip;
	d.ttl = TTL_FWD;
	d.rest = rest_out;
	pb_ipv4_frame(want, c->bmac, mac_port[1], &d);
}

/*
 * Client-side ICMP errors reach the worker that owns the quoted flow,
 * whichever worker RSS gave them to, and a frag-needed's MTU is never
 * passed on below LB_NAT_MTU_FLOOR.
 */
static void
test_icmp_owner(void **state)
{
	struct ph_env *e = env_up(state, 2, FLOWS, NULL);
	const struct lb_worker *w0 = e->dp.w[0], *w1 = e->dp.w[1];
	struct conn c = tcp_conn(44101, 0), other = tcp_conn(44102, 1);
	const struct seg resp = {.what = "response on worker 1",
				 .dir = TO_C,
				 .flags = PB_PSH | PB_ACK,
				 .seq = IRS + 1,
				 .ack = ISS + 1,
				 .plen = 1400};
	struct pb_frame in, want;

	learn_all(e);
	c.q = 1;
	open_tcp(e, &c, ISS, IRS);
	relay(e, &c, &resp);

	/* Worker 0 has no such flow: it hands the error on, and worker 1
	 * translates it for the backend. */
	frag_needed_frames(&in, &want, &c, &resp, 1280, 1280);
	ph_inject(e, 0, 0, &in);
	ph_poll(e, 0);
	ph_expect_quiet(e, "worker 0 with an error about worker 1's flow");
	CHECK_EQ(w0->st.redirect_out, 1, "worker 0 handing the error on");
	ph_poll(e, 1);
	ph_expect_frame(e, 1, 1, &want, "frag-needed translated by worker 1");
	CHECK_EQ(w1->st.icmp_translated, 1, "worker 1 translating");
	CHECK_EQ(w1->st.icmp_mtu_clamped, 0, "MTU 1280 passed on as it is");

	/* MTU 68: the backend hears 552. */
	frag_needed_frames(&in, &want, &c, &resp, 68, LB_NAT_MTU_FLOOR);
	ph_inject(e, 0, 0, &in);
	ph_poll(e, 0);
	ph_expect_quiet(e, "worker 0 with a tiny MTU");
	ph_poll(e, 1);
	ph_expect_frame(e, 1, 1, &want, "frag-needed of MTU 68 raised to 552");
	CHECK_EQ(w1->st.icmp_translated, 2, "worker 1 translating");
	CHECK_EQ(w1->st.icmp_mtu_clamped, 1, "MTU raised once");

	/* On the owner's own queue it stays there. */
	frag_needed_frames(&in, &want, &c, &resp, 1400, 1400);
	ph_inject(e, 0, 1, &in);
	ph_poll(e, 1);
	ph_expect_frame(e, 1, 1, &want, "frag-needed on the owner's queue");
	CHECK_EQ(w1->st.redirect_out, 0, "worker 1 kept its own");

	/* About a flow nobody has: once round the workers, then dropped. */
	other.sport = 40000;
	frag_needed_frames(&in, &want, &other, &resp, 1280, 1280);
	ph_inject(e, 0, 1, &in);
	ph_poll(e, 1);
	ph_expect_quiet(e, "worker 1 with an error about no flow");
	CHECK_EQ(w1->st.redirect_out, 1, "worker 1 handing it on");
	ph_poll(e, 0);
	ph_poll(e, 1);
	ph_expect_quiet(e, "an error about no flow");
	CHECK_EQ(w0->st.drop[LB_DROP_NO_FLOW], 1, "dropped by the last worker");
	CHECK_EQ(w0->st.redirect_out, 2, "worker 0 not handing it back");
	CHECK_EQ(w1->st.drop[LB_DROP_NO_FLOW], 0, "worker 1");
	CHECK_EQ(w0->st.icmp_translated, 0, "worker 0 translating");
	ph_env_close(e, 1);
}

/* ---- malformed frames -------------------------------------------------- */

enum base { B_TCP, B_UDP, B_ICMP, B_ARP };

struct patch {
	uint8_t off;
	uint8_t len;
	uint8_t v[4];
};

struct bad_row {
	const char *what;
	enum base base;
	uint32_t len; /* cut the frame to this length; 0: keep */
	int fix;      /* recompute the IP header checksum after patching */
	enum lb_pkt_verdict v;
	struct patch p;
};

#define V(reason) LB_PKT_DROP_##reason
#define P(off, len, ...)                                                       \
	{                                                                      \
		(off), (len),                                                  \
		{                                                              \
			__VA_ARGS__                                            \
		}                                                              \
	}

/* Offsets in an untagged frame: IPv4 at 14, L4 at 34. */
static const struct bad_row bad_rows[] = {
	{"runt of 12 bytes", B_TCP, 12, 0, V(TRUNC_L2), P(0, 0, 0)},
	{"802.1Q tag cut short", B_TCP, 16, 0, V(TRUNC_L2), P(12, 2, 0x81, 0)},
	{"IPX", B_TCP, 0, 0, V(ETHERTYPE), P(12, 2, 0x81, 0x37)},
	{"802.1ad outer tag", B_TCP, 0, 0, V(ETHERTYPE), P(12, 2, 0x88, 0xa8)},
	{"ARP, hardware type 6", B_ARP, 0, 0, V(ARP), P(14, 2, 0, 6)},
	{"ARP, 8-byte MAC addresses", B_ARP, 0, 0, V(ARP), P(18, 1, 8)},
	{"ARP operation 3", B_ARP, 0, 0, V(ARP), P(20, 2, 0, 3)},
	{"ARP cut at 20 bytes", B_ARP, 34, 0, V(ARP), P(0, 0, 0)},
	{"IPv4 header cut at 19 bytes", B_TCP, 33, 0, V(TRUNC_L3), P(0, 0, 0)},
	{"IP version 6", B_TCP, 0, 1, V(IP_VERSION), P(14, 1, 0x65)},
	{"header length 16", B_TCP, 0, 1, V(IP_IHL), P(14, 1, 0x44)},
	{"header past the frame", B_TCP, 50, 0, V(IP_IHL), P(14, 1, 0x4f)},
	{"total length 16", B_TCP, 0, 1, V(IP_LEN), P(16, 2, 0, 16)},
	{"total length 1500", B_TCP, 0, 1, V(IP_LEN), P(16, 2, 0x05, 0xdc)},
	{"header checksum wrong", B_TCP, 0, 0, V(IP_CSUM), P(22, 1, 63)},
	{"first fragment", B_TCP, 0, 1, V(IP_FRAG), P(20, 2, 0x20, 0)},
	{"later fragment", B_TCP, 0, 1, V(IP_FRAG), P(20, 2, 0, 0xb9)},
	{"first fragment cut short", B_UDP, 40, 1, V(IP_FRAG),
	 P(20, 2, 0x20, 0)},
	{"later fragment cut short", B_TCP, 40, 1, V(IP_FRAG),
	 P(20, 2, 0, 0xb9)},
	{"later fragment, last one", B_UDP, 0, 1, V(IP_FRAG),
	 P(20, 2, 0x01, 0x72)},
	{"source 0.0.0.0", B_TCP, 0, 1, V(IP_ADDR), P(26, 4, 0, 0, 0, 0)},
	{"multicast source", B_TCP, 0, 1, V(IP_ADDR), P(26, 4, 224, 0, 0, 5)},
	{"loopback source", B_TCP, 0, 1, V(IP_ADDR), P(26, 4, 127, 0, 0, 1)},
	{"class E source", B_UDP, 0, 1, V(IP_ADDR), P(26, 4, 240, 1, 2, 3)},
	{"broadcast source", B_UDP, 0, 1, V(IP_ADDR),
	 P(26, 4, 255, 255, 255, 255)},
	{"GRE", B_TCP, 0, 1, V(IP_PROTO), P(23, 1, 47)},
	{"TCP header cut at 12", B_TCP, 46, 1, V(TCP_TRUNC), P(16, 2, 0, 32)},
	{"TCP data offset 16", B_TCP, 0, 0, V(TCP_TRUNC), P(46, 1, 0x40)},
	{"TCP data offset 60", B_TCP, 0, 0, V(TCP_TRUNC), P(46, 1, 0xf0)},
	{"SYN and FIN", B_TCP, 0, 0, V(TCP_FLAGS), P(47, 1, 0x03)},
	{"SYN and RST", B_TCP, 0, 0, V(TCP_FLAGS), P(47, 1, 0x06)},
	{"no TCP flag", B_TCP, 0, 0, V(TCP_FLAGS), P(47, 1, 0)},
	{"SYN, FIN, PSH and URG", B_TCP, 0, 0, V(TCP_FLAGS), P(47, 1, 0x2b)},
	{"TCP source port 0", B_TCP, 0, 0, V(PORT_ZERO), P(34, 2, 0, 0)},
	{"TCP destination port 0", B_TCP, 0, 0, V(PORT_ZERO), P(36, 2, 0, 0)},
	{"UDP header cut at 4", B_UDP, 38, 1, V(UDP_TRUNC), P(16, 2, 0, 24)},
	{"UDP length 29 of 28", B_UDP, 0, 0, V(UDP_LEN), P(38, 2, 0, 29)},
	{"UDP length 27 of 28", B_UDP, 0, 0, V(UDP_LEN), P(38, 2, 0, 27)},
	{"UDP destination port 0", B_UDP, 0, 0, V(PORT_ZERO), P(36, 2, 0, 0)},
	{"UDP source port 0", B_UDP, 0, 0, V(PORT_ZERO), P(34, 2, 0, 0)},
	{"ICMP cut at 4 bytes", B_ICMP, 38, 1, V(ICMP_TRUNC), P(16, 2, 0, 24)},
};

#undef P
#undef V

/* Valid frames the rows start from: each one alone is answered. */
static void
base_frame(struct pb_frame *f, enum base b)
{
	struct pb_dg d = {.ttl = TTL_IN, .id = 0x0b0b, .src = IP_C};

	switch (b) {
	case B_TCP:
		d.proto = PB_PROTO_TCP;
		d.frag = PB_IP_DF;
		d.dst = IP_VIP;
		d.sport = 45000;
		d.dport = VPORT;
		d.seq = 0x1000;
		d.flags = PB_SYN;
		d.win = 1024;
		d.mss = 1;
		break;
	case B_UDP:
		d.proto = PB_PROTO_UDP;
		d.dst = IP_VIP;
		d.sport = 45001;
		d.dport = UVPORT;
		d.plen = 20;
		break;
	case B_ICMP:
		d.proto = PB_PROTO_ICMP;
		d.dst = IP_LB0;
		d.type = 8;
		d.rest = 0x00070001;
		d.plen = 16;
		break;
	case B_ARP:
		pb_arp_frame(f, bcast, mac_c, 1, mac_c, IP_C, zero_mac, IP_VIP,
			     PB_FRAME_MIN);
		return;
	}
	pb_ipv4_frame(f, mac_port[0], mac_c, &d);
}

/* Controls: unaltered, each base frame is forwarded or answered. */
struct base_row {
	const char *what;
	enum base base;
	uint16_t out; /* the port it leaves by */
};

static const struct base_row base_rows[] = {
	{"valid SYN", B_TCP, 1},
	{"valid UDP", B_UDP, 1},
	{"valid ping", B_ICMP, 0},
	{"valid ARP request", B_ARP, 0},
};

static void
base_build(const void *row, struct ph_case *c)
{
	const struct base_row *r = row;

	base_frame(&c->in, r->base);
	c->verdict = PH_SENT;
	c->out_port = r->out;
}

static void
bad_build(const void *row, struct ph_case *c)
{
	const struct bad_row *r = row;

	base_frame(&c->in, r->base);
	memcpy(c->in.b + r->p.off, r->p.v, r->p.len);
	if (r->fix)
		pb_fix_ip_csum(&c->in);
	if (r->len != 0)
		c->in.len = r->len;
	/* Counted by the parser, not as a drop of a valid frame. */
	c->pkt = (int)r->v;
	c->count[0] = (struct ph_count)PH_COUNT(flows_created, 0);
}

static const struct ph_table base_table = {
	.name = "malformed, control",
	PH_ROWS(base_rows),
	.env = env_learnt,
	.build = base_build,
};

static const struct ph_table bad_table = {
	.name = "malformed",
	PH_ROWS(bad_rows),
	.env = env_learnt,
	.build = bad_build,
};

/* ---- valid frames that are not ours to forward ------------------------- */

struct drop_row {
	const char *what;
	uint16_t port;
	struct pb_dg d;
	enum lb_drop why;
};

#define FROM_C(proto_, dst_, dport_, flags_)                                   \
	{                                                                      \
		.proto = (proto_), .ttl = TTL_IN, .id = 0x0d0d, .src = IP_C,   \
		.dst = (dst_), .sport = 46000, .dport = (dport_), .seq = 77,   \
		.ack = 99, .flags = (flags_), .win = 1000, .plen = 10          \
	}
#define FROM_BE(proto_, src_, sport_, dport_, flags_)                          \
	{                                                                      \
		.proto = (proto_), .ttl = TTL_IN, .id = 0x0e0e, .src = (src_), \
		.dst = IP_SNAT, .sport = (sport_), .dport = (dport_),          \
		.seq = 77, .ack = 99, .flags = (flags_), .win = 1000,          \
		.plen = 10                                                     \
	}
/* From one of our own addresses, as a land attack forges it. */
#define FROM_OURS(proto_, src_, sport_, dst_, dport_, flags_)                  \
	{                                                                      \
		.proto = (proto_), .ttl = TTL_IN, .id = 0x0c0c, .src = (src_), \
		.dst = (dst_), .sport = (sport_), .dport = (dport_),           \
		.seq = 77, .flags = (flags_), .win = 1000, .plen = 10          \
	}
#define ICMP_TO(dst_, type_)                                                   \
	{                                                                      \
		.proto = PB_PROTO_ICMP, .ttl = TTL_IN, .id = 0x0f0f,           \
		.src = IP_C, .dst = (dst_), .type = (type_),                   \
		.rest = 0x00090001, .plen = 8                                  \
	}

static const struct drop_row drop_rows[] = {
	{"ACK to the VIP, no flow", 0,
	 FROM_C(PB_PROTO_TCP, IP_VIP, VPORT, PB_ACK), LB_DROP_NO_FLOW},
	{"data to the VIP, no flow", 0,
	 FROM_C(PB_PROTO_TCP, IP_VIP, VPORT, PB_PSH | PB_ACK), LB_DROP_NO_FLOW},
	{"FIN to the VIP, no flow", 0,
	 FROM_C(PB_PROTO_TCP, IP_VIP, VPORT, PB_FIN | PB_ACK), LB_DROP_NO_FLOW},
	{"RST to the VIP, no flow", 0,
	 FROM_C(PB_PROTO_TCP, IP_VIP, VPORT, PB_RST), LB_DROP_NO_FLOW},
	{"SYN-ACK to the VIP", 0,
	 FROM_C(PB_PROTO_TCP, IP_VIP, VPORT, PB_SYN | PB_ACK), LB_DROP_NO_FLOW},
	{"backend SYN-ACK to a SNAT port, no flow", 1,
	 FROM_BE(PB_PROTO_TCP, IP_BE(0), BPORT, 20000, PB_SYN | PB_ACK),
	 LB_DROP_NO_FLOW},
	{"backend data to a SNAT port, no flow", 1,
	 FROM_BE(PB_PROTO_TCP, IP_BE(0), BPORT, 20002, PB_PSH | PB_ACK),
	 LB_DROP_NO_FLOW},
	{"SYN to a SNAT port", 1,
	 FROM_BE(PB_PROTO_TCP, IP_BE(1), BPORT, 20004, PB_SYN),
	 LB_DROP_NO_FLOW},
	{"UDP to a SNAT port, no flow", 1,
	 FROM_BE(PB_PROTO_UDP, IP_UBE, UBPORT, 20006, 0), LB_DROP_NO_FLOW},
	{"SYN to a neighbour", 0,
	 FROM_C(PB_PROTO_TCP, IP_STRANGER, VPORT, PB_SYN), LB_DROP_NOT_OURS},
	{"SYN to our local address", 0,
	 FROM_C(PB_PROTO_TCP, IP_LB0, VPORT, PB_SYN), LB_DROP_NOT_OURS},
	{"SYN to the VIP, port without service", 0,
	 FROM_C(PB_PROTO_TCP, IP_VIP, 81, PB_SYN), LB_DROP_NOT_OURS},
	{"TCP SYN to the VIP's UDP port", 0,
	 FROM_C(PB_PROTO_TCP, IP_VIP, UVPORT, PB_SYN), LB_DROP_NOT_OURS},
	{"UDP to the VIP's TCP port", 0, FROM_C(PB_PROTO_UDP, IP_VIP, VPORT, 0),
	 LB_DROP_NOT_OURS},
	{"UDP to a backend, through us", 0,
	 FROM_C(PB_PROTO_UDP, IP_UBE, UBPORT, 0), LB_DROP_NOT_OURS},
	{"echo request to a neighbour", 0, ICMP_TO(IP_STRANGER, 8),
	 LB_DROP_ICMP},
	{"echo reply to the VIP", 0, ICMP_TO(IP_VIP, 0), LB_DROP_ICMP},
	{"ICMP redirect to the VIP", 0, ICMP_TO(IP_VIP, 5), LB_DROP_ICMP},
	{"timestamp request to the VIP", 0, ICMP_TO(IP_VIP, 13), LB_DROP_ICMP},
	{"land: SYN from the VIP to itself", 0,
	 FROM_OURS(PB_PROTO_TCP, IP_VIP, VPORT, IP_VIP, VPORT, PB_SYN),
	 LB_DROP_SRC_OURS},
	{"SYN from the VIP, another port", 0,
	 FROM_OURS(PB_PROTO_TCP, IP_VIP, 40000, IP_VIP, VPORT, PB_SYN),
	 LB_DROP_SRC_OURS},
	{"SYN from the other VIP", 0,
	 FROM_OURS(PB_PROTO_TCP, IP_VIP2, VPORT, IP_VIP, VPORT, PB_SYN),
	 LB_DROP_SRC_OURS},
	{"SYN from our local address", 0,
	 FROM_OURS(PB_PROTO_TCP, IP_LB0, 40001, IP_VIP, VPORT, PB_SYN),
	 LB_DROP_SRC_OURS},
	{"SYN from port 1's address", 0,
	 FROM_OURS(PB_PROTO_TCP, IP_LB1, 40002, IP_VIP, VPORT, PB_SYN),
	 LB_DROP_SRC_OURS},
	{"SYN from the SNAT address", 0,
	 FROM_OURS(PB_PROTO_TCP, IP_SNAT, 40003, IP_VIP, VPORT, PB_SYN),
	 LB_DROP_SRC_OURS},
	{"land: UDP from the VIP to itself", 0,
	 FROM_OURS(PB_PROTO_UDP, IP_VIP, UVPORT, IP_VIP, UVPORT, 0),
	 LB_DROP_SRC_OURS},
	{"echo request from the VIP", 0,
	 {.proto = PB_PROTO_ICMP, .ttl = TTL_IN, .id = 0x0f0f, .src = IP_VIP,
	  .dst = IP_LB0, .type = 8, .rest = 0x00090001, .plen = 8},
	 LB_DROP_SRC_OURS},
};

/*
 * The RST of RFC 793's "Reset Generation" for segment @p d without a flow,
 * which carries an ACK: from where it was sent to, at the sequence number
 * it acknowledged, no ACK of its own; sent back out of @p port.
 */
static void
no_flow_rst_frame(struct pb_frame *f, uint16_t port, const struct pb_dg *d)
{
	struct pb_dg r = {
		.proto = PB_PROTO_TCP,
		.ttl = TTL_OWN,
		.frag = PB_IP_DF,
		.src = d->dst,
		.dst = d->src,
		.sport = d->dport,
		.dport = d->sport,
		.seq = d->ack,
		.ack = 0,
		.flags = PB_RST,
	};
	const uint8_t *mac = mac_c;

	for (int b = 0; b < 4; b++)
		if (d->src == IP_BE(b))
			mac = mac_be[b];
	assert_true(d->flags & PB_ACK);
	pb_ipv4_frame(f, mac, mac_port[port], &r);
}

static void
expect_no_flow_rst(struct ph_env *e, uint16_t port, const struct pb_dg *d,
		   const char *what)
{
	struct pb_frame want;

	no_flow_rst_frame(&want, port, d);
	ph_expect_frame(e, port, 0, &want, what);
}

static void
check_dropped(struct ph_env *e, const struct lb_worker_stats *before,
	      enum lb_drop why, const char *what)
{
	const struct lb_worker *w = e->dp.w[0];

	ph_expect_quiet(e, what);
	ph_check_drop_delta(w, before, (int)why, what);
	CHECK_EQ(w->st.verdict[LB_PKT_IPV4], before->verdict[LB_PKT_IPV4] + 1,
		 what);
	CHECK_EQ(w->st.flows_created, before->flows_created, what);
}

/* Sends row @r's frame from its side's neighbour and polls; @f keeps the
 * frame, @before the counters from before it. */
static void
send_row(struct ph_env *e, const struct drop_row *r, struct pb_frame *f,
	 struct lb_worker_stats *before)
{
	pb_ipv4_frame(f, mac_port[r->port], r->port == 0 ? mac_c : mac_be[0],
		      &r->d);
	*before = e->dp.w[0]->st;
	ph_inject(e, r->port, 0, f);
	ph_poll(e, 0);
}

static void
drop_build(const void *row, struct ph_case *c)
{
	const struct drop_row *r = row;
	/* RFC 793: a segment without a connection that is not a RST gets
	 * one; a SYN to a SNAT address is no client's. */
	int rst = r->why == LB_DROP_NO_FLOW && r->d.proto == PB_PROTO_TCP &&
		  (r->d.flags & PB_ACK) && !(r->d.flags & PB_RST);

	c->port = r->port;
	pb_ipv4_frame(&c->in, mac_port[r->port],
		      r->port == 0 ? mac_c : mac_be[0], &r->d);
	c->drop = (int)r->why;
	c->pkt = LB_PKT_IPV4;
	c->count[0] = (struct ph_count)PH_COUNT(flows_created, 0);
	c->count[1] = (struct ph_count)PH_COUNT(rst_no_flow, rst);
	if (rst) {
		c->verdict = PH_SENT;
		c->out_port = r->port;
		no_flow_rst_frame(&c->out, r->port, &r->d);
	}
}

static const struct ph_table drop_table = {
	.name = "not forwarded",
	PH_ROWS(drop_rows),
	.env = env_learnt,
	.build = drop_build,
};

/* ICMP errors quoting a flow nobody has, or not verifying. */
static void
test_icmp_no_flow(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, NULL);
	const struct lb_worker *w = e->dp.w[0];
	struct lb_worker_stats before;
	uint8_t dgram[PB_FRAME_MAX];
	struct pb_frame f;
	struct pb_dg d;

	learn_all(e);
	d = (struct pb_dg)FROM_BE(PB_PROTO_TCP, IP_SNAT, 20008, BPORT, PB_SYN);
	d.dst = IP_BE(0);
	pb_ipv4(dgram, &d);
	d = (struct pb_dg){.proto = PB_PROTO_ICMP,
			   .ttl = TTL_IN,
			   .id = 0x1010,
			   .src = IP_BE(0),
			   .dst = IP_SNAT,
			   .type = 3,
			   .code = 3,
			   .data = dgram,
			   .plen = 28};
	pb_ipv4_frame(&f, mac_port[1], mac_be[0], &d);
	before = w->st;
	ph_inject(e, 1, 0, &f);
	ph_poll(e, 0);
	check_dropped(e, &before, LB_DROP_NO_FLOW,
		      "port unreachable about no flow");
	f.b[f.len - 1] ^= 0x01;
	before = w->st;
	ph_inject(e, 1, 0, &f);
	ph_poll(e, 0);
	check_dropped(e, &before, LB_DROP_ICMP,
		      "port unreachable with a bad ICMP checksum");
	ph_env_close(e, 1);
}

/* ---- checksums of the packets that create a flow ---------------------- */

/* Spoils the TCP or UDP checksum of an untagged frame without options. */
static void
spoil_l4_csum(struct pb_frame *f)
{
	uint32_t off = ETH + 20 + (f->b[ETH + 9] == PB_PROTO_TCP ? 16 : 6);

	f->b[off] ^= 0x5a;
}

/* Polls past the retry gap of conf_base: nothing may be sent. */
static void
expect_silence(struct ph_env *e, const char *what)
{
	uint64_t end = ph_now_ns(e) + QUIET_NS;

	while (ph_now_ns(e) < end)
		ph_poll_all(e);
	ph_expect_quiet(e, what);
}

static void
test_l4_csum(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, NULL);
	const struct lb_worker *w = e->dp.w[0];
	struct lb_worker_stats before;
	struct conn c = tcp_conn(41000, 0), c2 = tcp_conn(41001, 0);
	struct conn u = udp_conn(5100);
	const struct seg query = {
		.what = "query", .dir = TO_BE, .seq = 1, .plen = 40};
	const struct seg query0 = {.what = "first query without checksum",
				   .dir = TO_BE,
				   .seq = 4,
				   .plen = 24,
				   .csum0 = 1};
	const struct seg data = {.what = "data, bad checksum, established",
				 .dir = TO_BE,
				 .flags = PB_PSH | PB_ACK,
				 .seq = 1001,
				 .ack = 5001,
				 .plen = 100};
	struct pb_frame f, got;

	learn_all(e);

	/* A SYN the backend would drop reaches none of them, holds no flow
	 * and no SNAT port, and is not queued. */
	seg_frame(&f, &c, seg_syn(1000), 0);
	spoil_l4_csum(&f);
	before = w->st;
	ph_inject(e, 0, 0, &f);
	ph_poll(e, 0);
	expect_silence(e, "SYN with a bad TCP checksum");
	ph_check_drop_delta(w, &before, LB_DROP_L4_CSUM,
			    "SYN with a bad TCP checksum");
	CHECK_EQ(w->st.flows_created, 0, "flows of a bad SYN");
	CHECK_EQ(w->st.deferred, 0, "bad SYNs queued");
	if (find_flow(e, 0, &c) != NULL)
		fail_msg("a SYN with a bad checksum made a flow");

	/* The client's retransmission, intact, gets through. */
	open_tcp(e, &c, 1000, 5000);
	CHECK_EQ(w->st.flows_created, 1, "flows");

	/* An established flow's segments are not checked (the backend
	 * does): forwarded as they are. */
	seg_frame(&f, &c, &data, 0);
	spoil_l4_csum(&f);
	before = w->st;
	ph_inject(e, 0, 0, &f);
	ph_poll(e, 0);
	ph_expect_one(e, 1, 0, &got, data.what);
	ph_check_drop_delta(w, &before, -1, data.what);

	/* UDP: the first datagram creates the flow, so it is checked; a
	 * checksum of 0 is "none" and valid. */
	seg_frame(&f, &u, &query, 0);
	spoil_l4_csum(&f);
	before = w->st;
	ph_inject(e, 0, 0, &f);
	ph_poll(e, 0);
	ph_expect_quiet(e, "UDP query with a bad checksum");
	ph_check_drop_delta(w, &before, LB_DROP_L4_CSUM,
			    "UDP query with a bad checksum");
	if (find_flow(e, 0, &u) != NULL)
		fail_msg("a datagram with a bad checksum made a flow");
	u.cport = 5101;
	relay_first(e, &u, &query0);
	CHECK_EQ(w->st.flows_created, 2, "flows");

	/* Where the port checked the checksum, its word is taken. */
	seg_frame(&f, &c2, seg_syn(2000), 0);
	before = w->st;
	ph_inject_mbuf(e, 0, 0, &f, 0, RTE_MBUF_F_RX_L4_CKSUM_BAD);
	ph_poll(e, 0);
	ph_expect_quiet(e, "SYN the port found bad");
	ph_check_drop_delta(w, &before, LB_DROP_L4_CSUM,
			    "SYN the port found bad");
	spoil_l4_csum(&f);
	ph_inject_mbuf(e, 0, 0, &f, 0, RTE_MBUF_F_RX_L4_CKSUM_GOOD);
	ph_poll(e, 0);
	ph_expect_one(e, 1, 0, &got, "SYN the port found good");
	CHECK_EQ(w->st.flows_created, 3, "flows");
	CHECK_EQ(w->st.drop[LB_DROP_L4_CSUM], 3, "l4_csum drops");
	ph_env_close(e, 1);
}

/* ---- flow timeouts and RSTs without a flow ----------------------------- */

#define SHORT_EST_NS 300000000ull /* conf_timeouts: 203.0.113.10:80 */

static const char *const conf_timeouts[] = {
	"service set tcp 203.0.113.10:80 timeout-established 300ms",
	"service add tcp 203.0.113.12:80 sched rr timeout-established 1h",
	"backend add tcp 203.0.113.12:80 10.1.0.21:8080",
	NULL,
};

/* The first frame sent on @port within WAIT_NS. */
static void
wait_frame(struct ph_env *e, uint16_t port, struct pb_frame *got,
	   const char *what)
{
	uint64_t t0 = ph_now_ns(e);

	for (;;) {
		ph_poll(e, 0);
		if (ph_take(e, port, 0, got, 1) != 0)
			break;
		if (ph_now_ns(e) - t0 > WAIT_NS)
			fail_msg("%s: nothing sent on port %u", what, port);
	}
}

/* Checks a frame the dataplane built itself: addresses, ports, flags. */
static void
check_own(const struct pb_frame *f, uint32_t src, uint16_t sport, uint32_t dst,
	  uint16_t dport, uint8_t flags, const char *what)
{
	const uint8_t *ip = f->b + ETH, *th = ip + 20;

	if (f->len < ETH + 40 || ip[9] != PB_PROTO_TCP ||
	    pb_get32(ip + 12) != src || pb_get32(ip + 16) != dst ||
	    pb_get16(th) != sport || pb_get16(th + 2) != dport ||
	    th[13] != flags || pb_csum(ip, 20) != 0)
		fail_msg("%s: not a TCP segment %08x:%u > %08x:%u flags %02x",
			 what, src, sport, dst, dport, flags);
}

/*
 * Two services, ESTABLISHED for 300 ms and for 1 h: the first one's idle
 * flow expires after 300 ms and not before, the other one's stays. The
 * expired flow's ends get a probe each; their answers, as a TCP end that
 * still holds the connection sends them, get a RST at exactly the
 * sequence number each end expects, from the VIP to the client and from
 * the SNAT address to the backend.
 */
static void
test_timeout_per_service(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, conf_timeouts);
	const struct lb_worker *w = e->dp.w[0];
	struct conn a = tcp_conn(41200, 0), b = tcp_conn(41201, 1);
	struct pb_frame got;
	const uint32_t ca = ISS + 1 + 5, ba = IRS + 1 + 7; /* next seqs */
	const struct seg data = {.what = "client data",
				 .dir = TO_BE,
				 .flags = PB_PSH | PB_ACK,
				 .seq = ISS + 1,
				 .ack = IRS + 1,
				 .plen = 5};
	const struct seg reply = {.what = "backend data",
				  .dir = TO_C,
				  .flags = PB_PSH | PB_ACK,
				  .seq = IRS + 1,
				  .ack = ca,
				  .plen = 7};
	struct pb_dg d;
	uint64_t t0, t;
	uint32_t probe_seq;

	b.vip = IP_VIP + 2;
	learn_all(e);
	/* The default is no longer DPVS's 90 s. */
	CHECK_EQ(lb_flow_svc_timeout_ns(w->ft, SVC_DRAIN, LB_FLOW_ESTABLISHED) /
			 1000000000ull,
		 900, "default ESTABLISHED timeout, s");
	open_tcp(e, &b, ISS, IRS);
	open_tcp(e, &a, ISS, IRS);
	relay(e, &a, &data);
	relay(e, &a, &reply);
	t0 = ph_now_ns(e);
	/* The client's probe comes first: the flow's ORIG key. */
	wait_frame(e, 0, &got, "probe to the client");
	t = ph_now_ns(e) - t0;
	if (t + (1u << LB_FLOW_TICK_SHIFT) < SHORT_EST_NS)
		fail_msg("expired after %" PRIu64 " ms, timeout is 300 ms",
			 t / 1000000);
	assert_null(find_flow(e, 0, &a));
	assert_non_null(find_flow(e, 0, &b));
	check_own(&got, IP_VIP, VPORT, IP_C, a.cport, PB_ACK,
		  "probe to the client");
	probe_seq = pb_get32(got.b + ETH + 24);
	/* Out of the client's window: not next to what it sent or got. */
	if (probe_seq - (IRS + 1 + 7) < 65536 ||
	    (IRS + 1 + 7) - probe_seq < 65536)
		fail_msg("probe at %u, next to the backend's %u", probe_seq,
			 IRS + 8);
	ph_expect_one(e, 1, 0, &got, "probe to the backend");
	check_own(&got, IP_SNAT, a.sport, a.bip, BPORT, PB_ACK,
		  "probe to the backend");
	CHECK_EQ(w->st.idle_probes, 2, "probes");

	/* The client answers an unacceptable segment with an ACK of its
	 * own numbers (RFC 793 p. 69): the RST takes its ACK number. */
	d = (struct pb_dg){.proto = PB_PROTO_TCP,
			   .ttl = TTL_IN,
			   .frag = PB_IP_DF,
			   .src = IP_C,
			   .dst = IP_VIP,
			   .sport = a.cport,
			   .dport = VPORT,
			   .seq = ca,
			   .ack = IRS + 1 + 7,
			   .flags = PB_ACK,
			   .win = 1000};
	pb_ipv4_frame(&got, mac_port[0], mac_c, &d);
	ph_inject(e, 0, 0, &got);
	ph_poll(e, 0);
	expect_no_flow_rst(e, 0, &d, "RST to the client");
	d = (struct pb_dg){.proto = PB_PROTO_TCP,
			   .ttl = TTL_IN,
			   .frag = PB_IP_DF,
			   .src = a.bip,
			   .dst = IP_SNAT,
			   .sport = BPORT,
			   .dport = a.sport,
			   .seq = ba,
			   .ack = ca,
			   .flags = PB_ACK,
			   .win = 1000};
	pb_ipv4_frame(&got, mac_port[1], a.bmac, &d);
	ph_inject(e, 1, 0, &got);
	ph_poll(e, 0);
	expect_no_flow_rst(e, 1, &d, "RST to the backend");
	CHECK_EQ(w->st.rst_no_flow, 2, "RSTs without a flow");
	/* Their RSTs in turn are never answered. */
	d.flags = PB_RST;
	pb_ipv4_frame(&got, mac_port[1], a.bmac, &d);
	ph_inject(e, 1, 0, &got);
	ph_poll(e, 0);
	ph_expect_quiet(e, "RST without a flow");
	/* The 1 h service's flow outlives the 300 ms one many times. */
	t0 = ph_now_ns(e);
	while (ph_now_ns(e) - t0 < 2 * SHORT_EST_NS)
		ph_poll(e, 0);
	assert_non_null(find_flow(e, 0, &b));
	ph_expect_quiet(e, "the 1 h flow");
	ph_env_close(e, 1);
}

/* A burst of stray ACKs gets at most rst-rate RSTs; the rest are counted
 * and dropped; rst-rate 0 answers none. */
static void
test_rst_rate(void **state)
{
	static const char *const conf[] = {
		"service set tcp 203.0.113.10:80 rst-rate 5",
		"service set tcp 203.0.113.11:80 rst-rate 0",
		NULL,
	};
	struct ph_env *e = env_up(state, 1, FLOWS, conf);
	const struct lb_worker *w = e->dp.w[0];
	struct pb_frame f, got[32];
	unsigned int n;

	learn_all(e);
	for (uint16_t i = 0; i < 20; i++) {
		struct pb_dg d = FROM_C(PB_PROTO_TCP, IP_VIP, VPORT, PB_ACK);

		d.sport = (uint16_t)(47000 + i);
		pb_ipv4_frame(&f, mac_port[0], mac_c, &d);
		ph_inject(e, 0, 0, &f);
	}
	ph_poll(e, 0);
	n = ph_take(e, 0, 0, got, NELEM(got));
	CHECK_EQ(n, 5, "RSTs for 20 stray ACKs at rst-rate 5");
	for (unsigned int i = 0; i < n; i++)
		check_own(&got[i], IP_VIP, VPORT, IP_C, (uint16_t)(47000 + i),
			  PB_RST, "RST");
	CHECK_EQ(w->st.rst_no_flow, 5, "RSTs sent");
	CHECK_EQ(w->st.rst_limited, 15, "RSTs suppressed");
	CHECK_EQ(w->st.drop[LB_DROP_NO_FLOW], 20, "dropped");
	{
		struct pb_dg d =
			FROM_C(PB_PROTO_TCP, IP_VIP + 1, VPORT, PB_ACK);

		pb_ipv4_frame(&f, mac_port[0], mac_c, &d);
		ph_inject(e, 0, 0, &f);
		ph_poll(e, 0);
		ph_expect_quiet(e, "stray ACK at rst-rate 0");
	}
	ph_env_close(e, 1);
}

/* ---- the exception path ------------------------------------------------ */

#define EXC_RING 16 /* holds 15 */

/* Takes what the worker gave the kernel; copies up to @max frames. */
static unsigned int
take_exc(struct rte_ring *r, struct pb_frame *out, uint16_t *port,
	 unsigned int max)
{
	struct rte_mbuf *m;
	unsigned int n = 0;

	while (rte_ring_sc_dequeue(r, (void **)&m) == 0) {
		if (n < max) {
			assert_int_equal(m->nb_segs, 1);
			out[n].len = rte_pktmbuf_pkt_len(m);
			assert_true(out[n].len <= PB_FRAME_MAX);
			memcpy(out[n].b, rte_pktmbuf_mtod(m, void *),
			       out[n].len);
			port[n] = m->port;
		}
		n++;
		rte_pktmbuf_free(m);
	}
	return n;
}

/* Exactly @f, unchanged, went to the kernel with its input @port. */
static void
expect_kernel(struct ph_env *e, struct rte_ring *r, const struct pb_frame *f,
	      uint16_t port, const char *what)
{
	static struct pb_frame got;
	uint16_t gport = UINT16_MAX;
	unsigned int n = take_exc(r, &got, &gport, 1);

	if (n != 1)
		fail_msg("%s: %u frame(s) for the kernel, want 1", what, n);
	CHECK_EQ(gport, port, what);
	ph_expect_same(&got, f, what);
	ph_expect_quiet(e, what);
}

/* What is addressed to a local address and unused goes to the kernel. */
static const struct drop_row kernel_rows[] = {
	{"SYN to our port 0 address", 0,
	 FROM_C(PB_PROTO_TCP, IP_LB0, VPORT, PB_SYN), LB_DROP_NOT_OURS},
	{"UDP to our port 0 address", 0, FROM_C(PB_PROTO_UDP, IP_LB0, 53, 0),
	 LB_DROP_NOT_OURS},
	{"ACK from a backend to our port 1 address", 1,
	 {.proto = PB_PROTO_TCP, .ttl = TTL_IN, .id = 0x1111, .src = IP_BE(0),
	  .dst = IP_LB1, .sport = BPORT, .dport = 41000, .seq = 5, .ack = 6,
	  .flags = PB_ACK, .win = 1000, .plen = 10},
	 LB_DROP_NOT_OURS},
	{"echo reply to our port 0 address", 0, ICMP_TO(IP_LB0, 0),
	 LB_DROP_ICMP},
	{"timestamp request to our port 0 address", 0, ICMP_TO(IP_LB0, 13),
	 LB_DROP_ICMP},
};

/* ... and what is not stays the dataplane's business. */
static const struct drop_row not_kernel_rows[] = {
	{"SYN to a neighbour", 0,
	 FROM_C(PB_PROTO_TCP, IP_STRANGER, VPORT, PB_SYN), LB_DROP_NOT_OURS},
	{"SYN to the VIP, port without service", 0,
	 FROM_C(PB_PROTO_TCP, IP_VIP, 81, PB_SYN), LB_DROP_NOT_OURS},
	{"SYN to a SNAT port", 1,
	 FROM_BE(PB_PROTO_TCP, IP_BE(1), BPORT, 20004, PB_SYN),
	 LB_DROP_NO_FLOW},
	{"echo reply to the VIP", 0, ICMP_TO(IP_VIP, 0), LB_DROP_ICMP},
};

static void
test_exception(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, NULL);
	struct lb_worker *w = e->dp.w[0];
	struct lb_worker_stats before;
	struct rte_ring *out, *in;
	struct pb_frame f, want, kf[EXC_RING];
	uint16_t kport[EXC_RING];
	uint8_t dgram[PB_FRAME_MAX];
	uint64_t to_kernel = 0;
	struct pb_dg d;

	out = rte_ring_create("pk_exc_out", EXC_RING, SOCKET_ID_ANY,
			      RING_F_SP_ENQ | RING_F_SC_DEQ);
	in = rte_ring_create("pk_exc_in", EXC_RING, SOCKET_ID_ANY,
			     RING_F_SP_ENQ | RING_F_SC_DEQ);
	assert_non_null(out);
	assert_non_null(in);
	learn_all(e);
	w->exc_out = out;
	w->exc_in = in;

	for (unsigned int i = 0; i < NELEM(kernel_rows); i++) {
		const struct drop_row *r = &kernel_rows[i];

		send_row(e, r, &f, &before);
		expect_kernel(e, out, &f, r->port, r->what);
		CHECK_EQ(w->st.drop[r->why], before.drop[r->why], r->what);
		to_kernel++;
	}
	for (unsigned int i = 0; i < NELEM(not_kernel_rows); i++) {
		const struct drop_row *r = &not_kernel_rows[i];

		send_row(e, r, &f, &before);
		check_dropped(e, &before, r->why, r->what);
		CHECK_EQ(take_exc(out, NULL, NULL, 0), 0, r->what);
	}

	/* An ICMP error about the kernel's own datagram: no flow of ours. */
	d = (struct pb_dg)FROM_C(PB_PROTO_UDP, IP_C, 33434, 0);
	d.src = IP_LB0;
	d.sport = 45000;
	pb_ipv4(dgram, &d);
	d = (struct pb_dg){.proto = PB_PROTO_ICMP, .ttl = TTL_IN, .id = 0x1212,
			   .src = IP_C, .dst = IP_LB0, .type = 3, .code = 3,
			   .data = dgram, .plen = 28};
	pb_ipv4_frame(&f, mac_port[0], mac_c, &d);
	ph_inject(e, 0, 0, &f);
	ph_poll(e, 0);
	expect_kernel(e, out, &f, 0, "port unreachable about the kernel's UDP");
	to_kernel++;

	/* Ping and ARP requests for our addresses stay the dataplane's. */
	echo_frames(&f, &want, 1, IP_BE(0), mac_be[0], IP_LB1, 7);
	ph_inject(e, 1, 0, &f);
	ph_poll(e, 0);
	ph_expect_frame(e, 1, 0, &want, "ping of our port 1 address");
	CHECK_EQ(take_exc(out, NULL, NULL, 0), 0, "ping of a local address");
	pb_arp_frame(&f, bcast, mac_host1, 1, mac_host1, IP_HOST1, zero_mac,
		     IP_LB1, PB_FRAME_MIN);
	ph_inject(e, 1, 0, &f);
	ph_poll(e, 0);
	pb_arp_frame(&want, mac_host1, mac_port[1], 2, mac_port[1], IP_LB1,
		     mac_host1, IP_HOST1, PB_FRAME_MIN);
	ph_expect_frame(e, 1, 0, &want, "ARP request for our port 1 address");
	CHECK_EQ(take_exc(out, NULL, NULL, 0), 0, "ARP request");

	/* An ARP reply to a local address: the kernel asked. The dataplane
	 * learns from it too: the host's ping is answered without asking. */
	pb_arp_frame(&f, mac_port[1], mac_host2, 2, mac_host2, IP_HOST2,
		     mac_port[1], IP_LB1, PB_FRAME_MIN);
	ph_inject(e, 1, 0, &f);
	ph_poll(e, 0);
	expect_kernel(e, out, &f, 1, "ARP reply to our port 1 address");
	to_kernel++;
	echo_frames(&f, &want, 1, IP_HOST2, mac_host2, IP_LB1, 8);
	ph_inject(e, 1, 0, &f);
	ph_poll(e, 0);
	ph_expect_frame(e, 1, 0, &want,
			"ping from the host the kernel resolved");
	pb_arp_frame(&f, mac_port[1], mac_host1, 2, mac_host1, IP_HOST1,
		     mac_host2, IP_HOST2, PB_FRAME_MIN);
	ph_inject(e, 1, 0, &f);
	ph_poll(e, 0);
	ph_expect_quiet(e, "ARP reply to another host");
	CHECK_EQ(take_exc(out, NULL, NULL, 0), 0, "ARP reply to another host");

	/* What the kernel sends leaves its port as it is. */
	for (uint16_t p = 0; p < NB_PORTS; p++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(ph_pool);

		d = (struct pb_dg){.proto = PB_PROTO_TCP, .ttl = 64,
				   .id = (uint16_t)(0x2000 + p),
				   .src = our_ip[p],
				   .dst = p == 0 ? IP_C : IP_BE(2),
				   .sport = 43000, .dport = 80, .seq = 1,
				   .flags = PB_SYN, .win = 64240, .mss = 1};
		pb_ipv4_frame(&f, p == 0 ? mac_c : mac_be[2], mac_port[p], &d);
		assert_non_null(m);
		memcpy(rte_pktmbuf_append(m, (uint16_t)f.len), f.b, f.len);
		m->port = p;
		assert_int_equal(rte_ring_sp_enqueue(in, m), 0);
		ph_poll(e, 0);
		ph_expect_frame(e, p, 0, &f, "the kernel's SYN");
	}
	CHECK_EQ(w->st.exc_from_kernel, NB_PORTS, "frames from the kernel");
	CHECK_EQ(w->st.exc_to_kernel, to_kernel, "frames to the kernel");

	/* A burst larger than the ring: the rest is counted, not kept. */
	before = w->st;
	for (unsigned int i = 0; i < EXC_RING + 4; i++) {
		d = (struct pb_dg)FROM_C(PB_PROTO_UDP, IP_LB0, 53, 0);
		d.sport = (uint16_t)(50000 + i);
		pb_ipv4_frame(&f, mac_port[0], mac_c, &d);
		ph_inject(e, 0, 0, &f);
	}
	ph_poll(e, 0);
	CHECK_EQ(take_exc(out, kf, kport, EXC_RING), EXC_RING - 1,
		 "frames the ring held");
	CHECK_EQ(w->st.drop[LB_DROP_EXC_FULL] - before.drop[LB_DROP_EXC_FULL],
		 5, "frames the full ring refused");
	CHECK_EQ(pb_get16(kf[0].b + PB_ETH_LEN + 20), 50000,
		 "the first frame queued first");

	/* Off: local addresses are not ours to forward. */
	w->exc_out = NULL;
	w->exc_in = NULL;
	send_row(e, &kernel_rows[0], &f, &before);
	check_dropped(e, &before, LB_DROP_NOT_OURS,
		      "SYN to our address without an exception path");
	rte_ring_free(out);
	rte_ring_free(in);
	ph_env_close(e, 1);
}

/* ---- a full flow table ------------------------------------------------- */

static void
test_table_full(void **state)
{
	struct ph_env *e = env_up(state, 1, 4, NULL);
	const struct lb_worker *w = e->dp.w[0];
	struct conn c[5];
	struct lb_flow_stats fs;
	struct pb_frame in;

	learn_all(e);
	for (int i = 0; i < 4; i++) {
		c[i] = tcp_conn((uint16_t)(47000 + i), i % 3);
		relay_first(e, &c[i], seg_syn(ISS + (uint32_t)i));
	}
	c[4] = tcp_conn(47004, 1);
	for (int k = 1; k <= 2; k++) {
		seg_frame(&in, &c[4], seg_syn(ISS + 4), 0);
		ph_inject(e, 0, 0, &in);
		ph_poll(e, 0);
		ph_expect_quiet(e,
				"fifth SYN with four flows in a table of four");
		CHECK_EQ(w->st.drop[LB_DROP_FLOW_FULL], k, "flows refused");
	}
	CHECK_EQ(w->st.flows_created, 4, "flows");
	lb_flow_stats_get(w->ft, &fs);
	CHECK_EQ(fs.flows, 4, "flows in the table");
	CHECK_EQ(fs.refused, 2, "inserts refused by the table");
	for (int i = 0; i < 4; i++) {
		const struct seg synack = {.what = "SYN-ACK of a flow "
						   "that fitted",
					   .dir = TO_C,
					   .flags = PB_SYN | PB_ACK,
					   .seq = IRS,
					   .ack = ISS + 1 + i};
		const struct seg ack = {.what = "ACK of a flow that fitted",
					.dir = TO_BE,
					.flags = PB_ACK,
					.seq = ISS + 1 + i,
					.ack = IRS + 1};

		relay(e, &c[i], &synack);
		relay(e, &c[i], &ack);
	}
	ph_env_close(e, 1);
}

/* ---- the port a frame came in on --------------------------------------- */

/*
 * The worker takes a frame's input port from mbuf->port. net_ring, which
 * the packet tests and the ring benchmark use, never writes it (it stays
 * RTE_MBUF_PORT_INVALID, an index far past dp->port[] and w->tx[]). An
 * in-range stale value shows the same mistake without corrupting memory:
 * a request polled from port 0 must be answered on port 0.
 */
static void
test_rx_port(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, NULL);
	struct pb_frame req, rep;

	pb_arp_frame(&req, bcast, mac_c, 1, mac_c, IP_C, zero_mac, IP_VIP,
		     PB_FRAME_MIN);
	pb_arp_frame(&rep, mac_c, mac_port[0], 2, mac_port[0], IP_VIP, mac_c,
		     IP_C, PB_FRAME_MIN);
	ph_inject_mbuf(e, 0, 0, &req, 1, 0);
	ph_poll(e, 0);
	ph_expect_frame(e, 0, 0, &rep,
			"ARP request polled from port 0, "
			"mbuf->port not set by the PMD");
	ph_env_close(e, 1);
}

/* ---- what a port accepts ------------------------------------------------ */

/* Inserts an 802.1Q tag after the MAC addresses of @f. */
static void
vlan_tag(struct pb_frame *f, uint16_t tci)
{
	assert_true(f->len + 4 <= PB_FRAME_MAX);
	memmove(f->b + 16, f->b + 12, f->len - 12);
	pb_put16(f->b + 12, 0x8100);
	pb_put16(f->b + 14, tci);
	f->len += 4;
}

/* @f, arriving on @port, is sent nowhere and dropped for @why alone. */
static void
expect_dropped(struct ph_env *e, uint16_t port, const struct pb_frame *f,
	       enum lb_drop why, const char *what)
{
	const struct lb_worker *w = e->dp.w[0];
	struct lb_worker_stats before = w->st;

	ph_inject(e, port, 0, f);
	ph_poll(e, 0);
	ph_expect_quiet(e, what);
	ph_check_drop_delta(w, &before, (int)why, what);
}

/* Port 1 (the backends) on VLAN 20, port 0 untagged. */
static const char *const conf_vlan[] = {
	"addr del 10.1.0.1",
	"addr add 10.1.0.1/24 port 1 vlan 20",
	NULL,
};

/* An ARP frame as pb_arp_frame() builds it, tagged, padded to 60. */
static void
arp_tagged(struct pb_frame *f, const uint8_t *dst, const uint8_t *src,
	   uint16_t op, const uint8_t *sha, uint32_t spa, const uint8_t *tha,
	   uint32_t tpa, uint16_t tci)
{
	pb_arp_frame(f, dst, src, op, sha, spa, tha, tpa, PB_FRAME_MIN - 4);
	vlan_tag(f, tci);
}

/* A client picking a VLAN, on a port that has none. */
static void
vlan_syn(struct pb_frame *f)
{
	struct conn c = tcp_conn(49001, 0);

	seg_frame(f, &c, seg_syn(ISS), 0);
	vlan_tag(f, 20);
}

/* The same on the backends' side: a tagged ARP request. */
static void
vlan_arp(struct pb_frame *f)
{
	pb_arp_frame(f, bcast, mac_be[0], 1, mac_be[0], IP_BE(0), zero_mac,
		     IP_SNAT, PB_FRAME_MIN - 4);
	vlan_tag(f, 7);
}

/* Frames whose fate does not depend on any flow. */
struct frame_row {
	const char *what;
	uint16_t port;
	void (*frame)(struct pb_frame *f);
	int drop; /* the reason it is dropped for */
};

/* A SYN the next hop would have to drop: RFC 1812 5.3.1. */
static void
ttl1_syn(struct pb_frame *f)
{
	struct conn c = tcp_conn(48001, 1);
	struct seg syn = *seg_syn(ISS);

	syn.ttl = 1;
	seg_frame(f, &c, &syn, 0);
}

static const struct frame_row frame_rows[] = {
	{"tagged SYN on an untagged port", 0, vlan_syn, LB_DROP_VLAN},
	{"tagged ARP request on an untagged port", 1, vlan_arp, LB_DROP_VLAN},
	{"SYN with TTL 1", 0, ttl1_syn, LB_DROP_TTL},
};

static void
frame_build(const void *row, struct ph_case *c)
{
	const struct frame_row *r = row;

	c->port = r->port;
	r->frame(&c->in);
	c->drop = r->drop;
	c->count[0] = (struct ph_count)PH_COUNT(flows_created, 0);
}

static const struct ph_table frame_table = {
	.name = "dropped",
	PH_ROWS(frame_rows),
	.env = env_learnt,
	.build = frame_build,
};

static void
test_vlan_tagged(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, conf_vlan);
	const struct lb_worker *w = e->dp.w[0];
	struct conn c = tcp_conn(49002, 0);
	const struct seg synack = {.what = "backend SYN-ACK in VLAN 20",
				   .dir = TO_C,
				   .flags = PB_SYN | PB_ACK,
				   .seq = IRS,
				   .ack = ISS + 1,
				   .mss = 1};
	struct pb_frame in, want;
	static struct pb_frame got;

	announce(e, 0, 0, IP_C, mac_c);
	for (int i = 0; i < 3; i++) {
		arp_tagged(&in, mac_port[1], mac_be[i], 2, mac_be[i], IP_BE(i),
			   mac_port[1], IP_LB1, 20);
		ph_inject(e, 1, 0, &in);
	}
	ph_poll(e, 0);
	ph_expect_quiet(e, "neighbours announcing themselves");
	ph_check_no_drops(w, "tagged announcements");

	/* The client's SYN leaves port 1 tagged 20. */
	seg_frame(&in, &c, seg_syn(ISS), 0);
	ph_inject(e, 0, 0, &in);
	ph_poll(e, 0);
	ph_expect_one(e, 1, 0, &got, "client SYN");
	if (got.len < ETH + 4 + 28)
		fail_msg("client SYN: %u bytes sent", got.len);
	c.sport = pb_get16(got.b + ETH + 4 + 20);
	seg_frame(&want, &c, seg_syn(ISS), 1);
	vlan_tag(&want, 20);
	ph_expect_same(&got, &want, "client SYN, out in VLAN 20");

	/* The reply comes tagged and leaves port 0 untagged. */
	seg_frame(&in, &c, &synack, 0);
	vlan_tag(&in, 20);
	seg_frame(&want, &c, &synack, 1);
	ph_inject(e, 1, 0, &in);
	ph_poll(e, 0);
	ph_expect_frame(e, 0, 0, &want, "SYN-ACK, out untagged");

	/* Untagged, or in another VLAN, on port 1: dropped. */
	seg_frame(&in, &c, &synack, 0);
	expect_dropped(e, 1, &in, LB_DROP_VLAN,
		       "untagged SYN-ACK on the tagged port");
	vlan_tag(&in, 30);
	expect_dropped(e, 1, &in, LB_DROP_VLAN, "SYN-ACK in VLAN 30");

	/* ARP and ping on the tagged port are answered tagged. */
	arp_tagged(&in, bcast, mac_be[0], 1, mac_be[0], IP_BE(0), zero_mac,
		   IP_SNAT, 20);
	arp_tagged(&want, mac_be[0], mac_port[1], 2, mac_port[1], IP_SNAT,
		   mac_be[0], IP_BE(0), 20);
	ph_inject(e, 1, 0, &in);
	ph_poll(e, 0);
	ph_expect_frame(e, 1, 0, &want, "ARP reply in VLAN 20");
	echo_frames(&in, &want, 1, IP_BE(1), mac_be[1], IP_LB1, 3);
	vlan_tag(&in, 20);
	vlan_tag(&want, 20);
	ph_inject(e, 1, 0, &in);
	ph_poll(e, 0);
	ph_expect_frame(e, 1, 0, &want, "echo reply in VLAN 20");

	/* Our own ARP request is tagged too: a ping from a host nobody
	 * introduced waits for it. */
	arp_tagged(&want, bcast, mac_port[1], 1, mac_port[1], IP_LB1, zero_mac,
		   IP_HOST1, 20);
	echo_frames(&in, &got, 1, IP_HOST1, mac_host1, IP_LB1, 4);
	vlan_tag(&in, 20);
	ph_inject(e, 1, 0, &in);
	ph_poll(e, 0);
	ph_expect_frame(e, 1, 0, &want, "ARP request in VLAN 20");
	CHECK_EQ(w->st.drop[LB_DROP_VLAN], 2, "frames in the wrong VLAN");
	ph_env_close(e, 1);
}

/*
 * Backend traffic to a SNAT address comes in on the SNAT address's port
 * (port 1) only: a client-side sender forging a backend's reply is
 * refused, as is an ICMP error sent to the SNAT address from there.
 */
static void
test_snat_port(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, NULL);
	const struct lb_worker *w = e->dp.w[0];
	struct conn c = tcp_conn(49101, 0);
	const struct seg data = {.what = "backend data",
				 .dir = TO_C,
				 .flags = PB_PSH | PB_ACK,
				 .seq = IRS + 1,
				 .ack = ISS + 1,
				 .plen = 100};
	uint8_t quote[48];
	struct pb_frame in, sent;
	struct pb_dg d;

	learn_all(e);
	open_tcp(e, &c, ISS, IRS);
	seg_frame(&in, &c, &data, 0);
	memcpy(in.b + 6, mac_c, 6);
	expect_dropped(e, 0, &in, LB_DROP_SNAT_PORT,
		       "a backend's reply forged on port 0");

	seg_frame(&sent, &c, &tcp_steps[1].s, 1);
	memcpy(quote, sent.b + ETH, sizeof(quote));
	d = (struct pb_dg){.proto = PB_PROTO_ICMP,
			   .ttl = TTL_IN,
			   .id = 0x5151,
			   .src = IP_BE(0),
			   .dst = IP_SNAT,
			   .type = 3,
			   .code = 3,
			   .data = quote,
			   .plen = sizeof(quote)};
	pb_ipv4_frame(&in, mac_port[0], mac_c, &d);
	expect_dropped(e, 0, &in, LB_DROP_SNAT_PORT,
		       "an ICMP error to the SNAT address on port 0");

	/* The real one, on port 1, goes through. */
	relay(e, &c, &data);
	CHECK_EQ(w->st.drop[LB_DROP_SNAT_PORT], 2, "refused on port 0");
	ph_env_close(e, 1);
}

/* Bytes past the IP datagram are not forwarded. */
static void
test_trailer(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, NULL);
	const struct lb_worker *w = e->dp.w[0];
	struct conn c = tcp_conn(49201, 0);
	const struct seg req = {.what = "request with a trailer",
				.dir = TO_BE,
				.flags = PB_PSH | PB_ACK,
				.seq = ISS + 1,
				.ack = IRS + 1,
				.plen = 100};
	const struct seg resp = {.what = "response with a trailer",
				 .dir = TO_C,
				 .flags = PB_PSH | PB_ACK,
				 .seq = IRS + 1,
				 .ack = ISS + 101,
				 .plen = 3};
	const struct seg *segs[] = {&req, &resp};
	struct pb_frame in, want;

	learn_all(e);
	open_tcp(e, &c, ISS, IRS);
	for (unsigned int i = 0; i < NELEM(segs); i++) {
		seg_frame(&in, &c, segs[i], 0);
		seg_frame(&want, &c, segs[i], 1);
		memset(in.b + in.len, 0xa5, 20);
		in.len += 20;
		ph_inject(e, in_port(segs[i]), 0, &in);
		ph_poll(e, 0);
		ph_expect_frame(e, (uint16_t)(1 - in_port(segs[i])), 0, &want,
				segs[i]->what);
	}
	ph_check_no_drops(w, "trailers");
	ph_env_close(e, 1);
}

/*
 * A table may name ports up to 31; the dataplane runs two here. Resolving
 * a next hop behind port 9 (the retransmitted ARP request, a new packet)
 * sends nothing and counts it.
 */
static void
test_port_unused(void **state)
{
	/* The SYN's own timeout (the shortest of the services') must not
	 * retry toward port 9 meanwhile. */
	static const char *const slow[] = {
		"service set tcp 203.0.113.10:80 syn-timeout 60s",
		"service set tcp 203.0.113.11:80 syn-timeout 60s",
		NULL,
	};
	struct ph_env *e = env_up(state, 1, FLOWS, slow);
	struct lb_worker *w = e->dp.w[0];
	struct conn c = tcp_conn(49301, 0);
	struct lb_dpconf *d, *orig;
	struct pb_frame in;
	uint64_t end;

	announce(e, 0, 0, IP_C, mac_c);
	ph_poll(e, 0);
	/* No backend is known: the SYN waits for an ARP answer. */
	seg_frame(&in, &c, seg_syn(ISS), 0);
	ph_inject(e, 0, 0, &in);
	ph_poll(e, 0);
	CHECK_EQ(ph_take(e, 1, 0, NULL, 0), 1, "ARP request on port 1");
	CHECK_EQ(w->st.arp_requests, 1, "ARP requests");

	orig = e->dp.conf;
	d = rte_zmalloc("lbpkt_conf_p9", sizeof(*d), 0);
	assert_non_null(d);
	memcpy(d, orig, sizeof(*d));
	d->gen++;
	for (uint32_t i = 0; i < d->nb_addr; i++)
		if (d->addr[i].port == 1)
			d->addr[i].port = 9;
	e->dp.conf = d;
	end = ph_now_ns(e) + WAIT_NS;
	while (w->st.drop[LB_DROP_PORT_UNUSED] == 0 && ph_now_ns(e) < end)
		ph_poll(e, 0);
	ph_expect_quiet(e, "ARP request retransmitted toward port 9");
	CHECK_EQ(w->st.drop[LB_DROP_PORT_UNUSED], 1, "retransmit not sent");
	CHECK_EQ(w->st.arp_requests, 1, "ARP requests");

	c.cport = 49302;
	seg_frame(&in, &c, seg_syn(ISS + 7), 0);
	ph_inject(e, 0, 0, &in);
	ph_poll(e, 0);
	ph_expect_quiet(e, "a SYN toward port 9");
	CHECK_EQ(w->st.drop[LB_DROP_PORT_UNUSED], 2, "SYN not sent");
	e->dp.conf = orig;
	ph_poll(e, 0);
	rte_free(d);
	ph_env_close(e, 1);
}

/* ---- TTL --------------------------------------------------------------- */

static void
test_ttl(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, NULL);
	struct conn c = tcp_conn(48000, 0);
	const struct seg last = {.what = "response with TTL 2",
				 .dir = TO_C,
				 .flags = PB_PSH | PB_ACK,
				 .seq = IRS + 1,
				 .ack = ISS + 1,
				 .plen = 10,
				 .ttl = 2};
	const struct seg dying[] = {
		{.what = "request with TTL 1",
		 .dir = TO_BE,
		 .flags = PB_PSH | PB_ACK,
		 .seq = ISS + 1,
		 .ack = IRS + 1,
		 .plen = 10,
		 .ttl = 1},
		{.what = "response with TTL 1",
		 .dir = TO_C,
		 .flags = PB_PSH | PB_ACK,
		 .seq = IRS + 11,
		 .ack = ISS + 1,
		 .plen = 10,
		 .ttl = 1},
		{.what = "response with TTL 0",
		 .dir = TO_C,
		 .flags = PB_PSH | PB_ACK,
		 .seq = IRS + 11,
		 .ack = ISS + 1,
		 .plen = 10,
		 .ttl = 0xff},
	};
	struct pb_frame in;

	learn_all(e);
	open_tcp(e, &c, ISS, IRS);
	relay(e, &c, &last);
	for (unsigned int i = 0; i < NELEM(dying); i++) {
		struct seg s = dying[i];

		seg_frame(&in, &c, &s, 0);
		if (s.ttl == 0xff) { /* TTL 0: patch the built frame */
			in.b[ETH + 8] = 0;
			pb_fix_ip_csum(&in);
		}
		ph_inject(e, in_port(&s), 0, &in);
		ph_poll(e, 0);
		ph_expect_quiet(e, s.what);
	}
	CHECK_EQ(e->dp.w[0]->st.drop[LB_DROP_TTL], NELEM(dying),
		 "packets dropped for their TTL");
	ph_env_close(e, 1);
}

/* ---- teardown ---------------------------------------------------------- */

/* A frame parked for an unresolved neighbour goes back to the pool when
 * the worker is freed. */
static void
test_teardown_parked(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, NULL);
	struct pb_frame req, rep, arp;

	echo_frames(&req, &rep, 0, IP_PING, mac_ping, IP_LB0, 9);
	ph_inject(e, 0, 0, &req);
	ph_poll(e, 0);
	arp_request_frame(&arp, 0, IP_PING);
	ph_expect_frame(e, 0, 0, &arp, "ping from an unknown host");
	ph_env_close(e, 1);
}

/* ---- scheduler state across table changes ----------------------------- */

#define IP_VIP_MAG PB_IP(203, 0, 113, 12)
#define IP_VIP_MAG2 PB_IP(203, 0, 113, 13)
#define SVC_MAG 3
#define SVC_MAG2 4

static const char *const conf_scheds[] = {
	"service set tcp 203.0.113.10:80 sched adaptive retry-gap 1s "
	"expiry 5s",
	"service add tcp 203.0.113.12:80 sched maglev",
	"backend add tcp 203.0.113.12:80 10.1.0.20:8080",
	"backend add tcp 203.0.113.12:80 10.1.0.21:8080",
	"backend add tcp 203.0.113.12:80 10.1.0.22:8080",
	"service add tcp 203.0.113.13:80 sched maglev",
	"backend add tcp 203.0.113.13:80 10.1.0.20:8080",
	"backend add tcp 203.0.113.13:80 10.1.0.21:8080",
	NULL,
};


/*
 * The one frame worker 0 sent toward a backend: a SYN of @c to one of the
 * TCP backends, whose index it returns (and the SNAT port in @c).
 */
static int
syn_out(struct ph_env *e, struct conn *c, const char *what)
{
	static struct pb_frame got;
	uint32_t dst;

	ph_expect_one(e, 1, 0, &got, what);
	if (got.len < ETH + 34 || got.b[ETH + 33] != PB_SYN)
		fail_msg("%s: not a SYN", what);
	dst = (uint32_t)pb_get16(got.b + ETH + 16) << 16 |
	      pb_get16(got.b + ETH + 18);
	if (dst < IP_BE(0) || dst > IP_BE(3))
		fail_msg("%s: sent to %08x, not a backend", what, dst);
	c->sport = pb_get16(got.b + ETH + 20);
	conn_be(c, (int)(dst - IP_BE(0)));
	return (int)(dst - IP_BE(0));
}

/*
 * A new connection from client port @cport to @vip: returns the backend
 * its SYN reached first. A backend in @refuse (bit per index) answers
 * with a RST, and the SYN moves on, until one answers with a SYN-ACK.
 */
static int
connect_once(struct ph_env *e, uint32_t vip, uint16_t cport,
	     unsigned int refuse)
{
	struct conn c = tcp_conn(cport, 0);
	const struct seg synack = {.what = "backend SYN-ACK",
				   .dir = TO_C,
				   .flags = PB_SYN | PB_ACK,
				   .seq = IRS,
				   .ack = ISS + 1,
				   .mss = 1};
	struct pb_frame in;
	int first, be;

	c.vip = vip;
	seg_frame(&in, &c, seg_syn(ISS), 0);
	ph_inject(e, 0, 0, &in);
	ph_poll(e, 0);
	first = be = syn_out(e, &c, "SYN of a new connection");
	while (refuse & (1u << be)) {
		backend_rst(&in, &c, ISS);
		ph_inject(e, 1, 0, &in);
		ph_poll(e, 0);
		be = syn_out(e, &c, "SYN retried after a RST");
	}
	seg_frame(&in, &c, &synack, 0);
	ph_inject(e, 1, 0, &in);
	ph_poll(e, 0);
	if (ph_take(e, 0, 0, NULL, 0) != 1)
		fail_msg("the SYN-ACK of backend %d was not forwarded", be);
	return first;
}

static uint32_t
sched_errors_of(const struct lb_worker *w, uint32_t svc, uint32_t be)
{
	return w->ops[svc]->errors(w->sched[svc], be);
}

/* Backend 0 refuses connections until the adaptive weights starve it. */
static void
starve_be0(struct ph_env *e, uint16_t *cport)
{
	const struct lb_worker *w = e->dp.w[0];

	for (int k = 0; sched_errors_of(w, SVC_TCP, 0) < 20; k++) {
		if (k == 3000)
			fail_msg("backend 0 has %u errors after %d "
				 "connections",
				 sched_errors_of(w, SVC_TCP, 0), k);
		connect_once(e, IP_VIP, (*cport)++, 1u << 0);
	}
	CHECK_EQ(w->bst[SVC_TCP][0].sched_errors,
		 sched_errors_of(w, SVC_TCP, 0), "errors shown for backend 0");
}

/*
 * A backend whose instance failed and came back: its health check marked
 * it down, then up again. The errors its failed instance earned are gone
 * (in every worker's scheduler and in what it shows), so new connections
 * reach it at its fair share at once, not after hundreds of others. A
 * worker that never took up the table marking it down learns it from
 * up_gen, which lb-control moves on at each return.
 */
static void
test_health_recovery(void **state)
{
	/* Room for the few hundred connections that starve a backend,
	 * twice, whatever the scheduler's random stream. */
	struct ph_env *e = env_up(state, 1, 8 * FLOWS, conf_scheds);
	const struct lb_worker *w = e->dp.w[0];
	uint16_t cport = 42000;
	struct lb_dpconf *d;
	unsigned int n = 90, to0 = 0;

	learn_all(e);
	starve_be0(e, &cport);
	/* Starved: its share of new connections is near nothing. */
	d = ph_table_next(e);
	d->svc[SVC_TCP].be[0].health = LB_BE_HEALTH_DOWN;
	ph_table_publish(e, d);
	for (unsigned int k = 0; k < 30; k++)
		CHECK_EQ(connect_once(e, IP_VIP, cport++, 0) != 0, 1,
			 "a backend down takes no new connection");
	d = ph_table_next(e);
	d->svc[SVC_TCP].be[0].health = LB_BE_HEALTH_UP;
	d->svc[SVC_TCP].be[0].up_gen++;
	ph_table_publish(e, d);
	CHECK_EQ(sched_errors_of(w, SVC_TCP, 0), 0, "errors once back up");
	CHECK_EQ(w->bst[SVC_TCP][0].sched_errors, 0, "errors shown");
	for (unsigned int k = 0; k < n; k++)
		to0 += connect_once(e, IP_VIP, cport++, 0) == 0;
	/* A fair share is n / 3; starved, it would get about 2 of 90. */
	if (to0 < n / 8)
		fail_msg("backend 0 back up got %u of %u new connections", to0,
			 n);

	/* Back up without a table that marked it down in between. */
	starve_be0(e, &cport);
	d = ph_table_next(e);
	d->svc[SVC_TCP].be[0].up_gen++;
	ph_table_publish(e, d);
	CHECK_EQ(sched_errors_of(w, SVC_TCP, 0), 0,
		 "errors once back up, down unseen");
	CHECK_EQ(w->bst[SVC_TCP][0].sched_errors, 0, "errors shown");
	ph_env_close(e, 1);
}

/*
 * A table change touches only the schedulers of the services it changes:
 * the others keep their state (the same object, the same error counts),
 * and a change of one Maglev service leaves the other one's table alone.
 */
static void
test_sched_kept(void **state)
{
	struct ph_env *e = env_up(state, 1, 8 * FLOWS, conf_scheds);
	struct lb_worker *w = e->dp.w[0];
	void *before[LB_CONF_MAX_SVCS];
	uint16_t cport = 43000;
	struct lb_dpconf *d;
	uint32_t errs;

	learn_all(e);
	starve_be0(e, &cport);
	errs = sched_errors_of(w, SVC_TCP, 0);
	memcpy(before, w->sched, sizeof(before));
	for (uint32_t s = 0; s <= SVC_MAG2; s++)
		assert_non_null(before[s]);

	/* The same services under a new generation: nothing rebuilt. */
	ph_table_publish(e, ph_table_next(e));
	for (uint32_t s = 0; s <= SVC_MAG2; s++)
		assert_ptr_equal(w->sched[s], before[s]);

	/* A weight of the first Maglev service: its state alone. */
	d = ph_table_next(e);
	d->svc[SVC_MAG].be[2].weight = 3;
	ph_table_publish(e, d);
	assert_ptr_not_equal(w->sched[SVC_MAG], before[SVC_MAG]);
	for (uint32_t s = 0; s <= SVC_MAG2; s++)
		if (s != SVC_MAG)
			assert_ptr_equal(w->sched[s], before[s]);
	CHECK_EQ(sched_errors_of(w, SVC_TCP, 0), errs, "adaptive errors kept");

	/* Draining a backend of the adaptive service rebuilds it, and the
	 * backends that stay keep what was learnt of them. */
	d = ph_table_next(e);
	d->svc[SVC_TCP].be[2].state = LB_BE_DRAINING;
	ph_table_publish(e, d);
	assert_ptr_not_equal(w->sched[SVC_TCP], before[SVC_TCP]);
	assert_ptr_equal(w->sched[SVC_MAG2], before[SVC_MAG2]);
	CHECK_EQ(sched_errors_of(w, SVC_TCP, 0), errs, "errors carried");
	ph_env_close(e, 1);
}

/* Backends 1 and 3 in a named pool of the TCP service, 3 weighing
 * more than all the others together. */
static const char *const conf_pools[] = {
	"pool add tcp 203.0.113.10:80 api sched rr",
	"backend del tcp 203.0.113.10:80 10.1.0.21:8080",
	"backend add tcp 203.0.113.10:80 10.1.0.21:8080 pool api",
	"backend add tcp 203.0.113.10:80 10.1.0.23:8080 pool api weight 50",
	NULL,
};

/*
 * Without rules, a service with named pools sends new connections to
 * its own pool only, scheduled at their SYN: no SYN, first or
 * retried after a RST, reaches a backend of a named pool, and with the
 * own pool empty a SYN waits in the deferred queue rather than go there.
 */
static void
test_pools_default_only(void **state)
{
	struct ph_env *e = env_up(state, 1, 8 * FLOWS, conf_pools);
	const struct lb_worker *w = e->dp.w[0];
	unsigned int seen[4] = {0, 0, 0, 0};
	struct pb_frame in;
	struct lb_dpconf *d;
	uint16_t cport = 44000;

	learn_all(e);
	for (unsigned int k = 0; k < 40; k++)
		seen[connect_once(e, IP_VIP, cport++, 0)]++;
	CHECK_EQ(seen[1] + seen[3], 0, "SYNs to the named pool");
	CHECK_EQ(seen[0] != 0 && seen[2] != 0, 1, "both own backends used");
	/* Backend 0 refuses: the retry goes to 2, the other own one. */
	for (unsigned int k = 0; k < 10; k++) {
		struct conn c = tcp_conn(cport++, 0);
		int be;

		seg_frame(&in, &c, seg_syn(ISS), 0);
		ph_inject(e, 0, 0, &in);
		ph_poll(e, 0);
		be = syn_out(e, &c, "SYN of a new connection");
		if (be == 0) {
			backend_rst(&in, &c, ISS);
			ph_inject(e, 1, 0, &in);
			ph_poll(e, 0);
			be = syn_out(e, &c, "SYN retried after a RST");
			CHECK_EQ(be, 2, "the retry's backend");
		}
		CHECK_EQ(be == 1 || be == 3, 0, "a SYN to the named pool");
		backend_rst(&in, &c, ISS);
		ph_inject(e, 1, 0, &in);
		ph_poll(e, 0);
		ph_take(e, 1, 0, NULL, 0);
		ph_take(e, 0, 0, NULL, 0);
	}

	/* The own pool drained: the named pool's backends are up and
	 * active, but a new connection waits for the own pool. */
	d = ph_table_next(e);
	for (uint32_t b = 0; b < d->svc[SVC_TCP].nb_be; b++)
		if (d->svc[SVC_TCP].be[b].pool == 0)
			d->svc[SVC_TCP].be[b].state = LB_BE_DRAINING;
	ph_table_publish(e, d);
	{
		struct conn c = tcp_conn(cport++, 1);
		uint64_t q0 = w->st.deferred;

		seg_frame(&in, &c, seg_syn(ISS), 0);
		ph_inject(e, 0, 0, &in);
		ph_poll(e, 0);
		ph_expect_quiet(e, "SYN with the own pool drained");
		CHECK_EQ(w->st.deferred, q0 + 1, "SYNs queued");
	}
	ph_env_close(e, 1);
}

/*
 * A Maglev table is built between bursts, a slice per poll: the worker
 * forwards new connections of the service while the build goes on (to
 * backends that take new flows, from the table being replaced), and once
 * built they go where Maglev says.
 */
static void
test_maglev_build_sliced(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, conf_scheds);
	struct lb_worker *w = e->dp.w[0];
	unsigned int during = 0, polls = 0;
	uint16_t cport = 44000;
	struct lb_dpconf *d;

	learn_all(e);
	CHECK_EQ(w->sched_todo, 0, "builds pending after start");
	d = ph_table_next(e);
	d->svc[SVC_MAG].be[1].state = LB_BE_DRAINING;
	d->svc[SVC_MAG2].be[0].weight = 2;
	ph_table_publish(e, d);
	while (w->sched_todo != 0) {
		if (++polls > 100000)
			fail_msg("builds still pending after %u polls", polls);
		CHECK_EQ(connect_once(e, IP_VIP_MAG, cport++, 0) != 1, 1,
			 "a drained backend takes no new connection");
		during++;
	}
	/* The build took several polls, each forwarding a connection. */
	if (during < 4)
		fail_msg("%u connections forwarded while building", during);
	CHECK_EQ(w->st.conf_switches, 1, "tables taken up");
	if (w->st.switch_max_ns == 0)
		fail_msg("switch_max_ns not measured");
	/* Built: the state answers as Maglev over the backends left. */
	for (unsigned int k = 0; k < 30; k++) {
		struct lb_flow_key key;
		uint32_t want;
		int got;

		lb_flow_key_set(&key, htonl(IP_C), htonl(IP_VIP_MAG),
				htons(cport), htons(VPORT), PB_PROTO_TCP);
		assert_int_equal(w->ops[SVC_MAG]->pick(
					 w->sched[SVC_MAG],
					 lb_flow_hash(e->dp.hash_seed, &key),
					 &w->rng, &want),
				 0);
		got = connect_once(e, IP_VIP_MAG, cport++, 0);
		CHECK_EQ(got, want, "backend of a new connection");
		CHECK_EQ(got != 1, 1, "not the drained backend");
	}
	ph_check_no_drops(w, "while building");
	ph_env_close(e, 1);
}

/*
 * "--lcores=0@(CPUS)": lcore 0 may run on any CPU this process may use.
 * Pinned to one CPU, a busy neighbour there would stall the timed tests
 * on a shared machine.
 */
/* ---- SYN proxy ----------------------------------------------------------- */

static const char *const conf_synp[] = {
	"service set tcp 203.0.113.10:80 synproxy on",
	NULL,
};

/* Every trial refused answers the client at once: no deferred queue. */
static const char *const conf_synp_noq[] = {
	"service set tcp 203.0.113.10:80 synproxy on deferq 0",
	NULL,
};

/* A segment of @c with TCP options @opt (@n bytes, whole words) before
 * @plen bytes of payload, from its origin: the options go in as payload,
 * then the data offset and checksum are made to say so. */
static void
opt_frame(struct pb_frame *f, const struct conn *c, const struct seg *s,
	  const uint8_t *opt, uint16_t n, uint16_t plen)
{
	uint8_t buf[256];
	uint8_t *ip, *th;
	struct pb_dg d;
	uint32_t sum, tl = 20u + n + plen;

	memcpy(buf, opt, n);
	for (uint16_t i = 0; i < plen; i++)
		buf[n + i] = (uint8_t)('a' + i % 26);
	seg_dg(&d, c, s, 0);
	d.mss = 0;
	d.data = buf;
	d.plen = (uint16_t)(n + plen);
	if (s->dir == TO_BE)
		pb_ipv4_frame(f, mac_port[0], c->cmac, &d);
	else
		pb_ipv4_frame(f, mac_port[1], c->bmac, &d);
	ip = f->b + ETH;
	th = ip + 20;
	th[12] = (uint8_t)((20 + n) / 4 << 4);
	pb_put16(th + 16, 0);
	sum = pb_sum(ip + 12, 8, PB_PROTO_TCP + tl);
	pb_put16(th + 16, (uint16_t)~pb_fold(pb_sum(th, tl, sum)));
}

/* A segment the worker sent, read back: its checksums must verify. */
struct seg_out {
	uint32_t src, dst;
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t win, plen;
	struct lb_tcp_opts o;
};

static void
seg_read(const struct pb_frame *f, struct seg_out *s, const char *what)
{
	struct lb_pkt pkt;
	const uint8_t *th;

	if (lb_pkt_parse(f->b, f->len, &pkt) != LB_PKT_IPV4 ||
	    pkt.proto != PB_PROTO_TCP || !lb_pkt_l4_csum_ok(f->b, &pkt) ||
	    pb_csum(f->b + pkt.l3_off, 20) != 0)
		fail_msg("%s: not a TCP segment with good checksums", what);
	th = f->b + pkt.l4_off;
	s->src = ntohl(pkt.src);
	s->dst = ntohl(pkt.dst);
	s->sport = ntohs(pkt.sport);
	s->dport = ntohs(pkt.dport);
	s->seq = pb_get32(th + 4);
	s->ack = pb_get32(th + 8);
	s->flags = th[13];
	s->win = pb_get16(th + 14);
	s->plen = pkt.payload_len;
	lb_tcp_opts_read(th + 20, pkt.payload_off - pkt.l4_off - 20u, &s->o);
}

/*
 * synproxy on, a Linux client (MSS, SACK, timestamps, scale 6) across a
 * sequence wrap and a backend with scale 9: the SYN is answered with a
 * cookie and nothing kept; the ACK that proves it opens the backend's
 * connection with the client's options; the backend's SYN-ACK goes no
 * further and the client's ACK completes its handshake; from then on both
 * sides see their own numbers, timestamps and window scales, and an ICMP
 * error quoting a segment is translated with it. A forged ACK opens
 * nothing.
 */
static void
test_synproxy(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, conf_synp);
	const struct lb_worker *w = e->dp.w[0];
	struct conn c = tcp_conn(48300, 0);
	const uint32_t iss = 0xfffffff0u, irs = 0x7ffffff0u;
	uint8_t syn_opt[20] = {2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0x03,
			       0xe8, 0, 0, 0, 0, 1, 3, 3, 6};
	uint8_t opt[20];
	struct seg s = {.what = "client SYN", .dir = TO_BE, .flags = PB_SYN,
			.seq = iss};
	struct pb_frame in, got;
	struct seg_out o;
	uint32_t cookie, tsv;

	learn_all(e);
	opt_frame(&in, &c, &s, syn_opt, sizeof(syn_opt), 0);
	ph_inject(e, 0, 0, &in);
	ph_poll(e, 0);
	ph_expect_one(e, 0, 0, &got, "SYN-ACK");
	seg_read(&got, &o, "SYN-ACK");
	CHECK_EQ(o.src, IP_VIP, "SYN-ACK from the VIP");
	CHECK_EQ(o.dst, IP_C, "to the client");
	CHECK_EQ(o.sport, VPORT, "VIP port");
	CHECK_EQ(o.dport, c.cport, "client port");
	CHECK_EQ(o.flags, PB_SYN | PB_ACK, "SYN-ACK flags");
	CHECK_EQ(o.ack, iss + 1, "acknowledges the SYN");
	CHECK_EQ(o.o.mss, 1460, "MSS offered");
	CHECK_EQ(o.o.wscale, 7, "window scale offered");
	CHECK_EQ(o.o.sack_ok, 1, "SACK offered");
	CHECK_EQ(o.o.ts, 1, "timestamps");
	CHECK_EQ(o.o.tsecr, 1000, "echoes the client's TSval");
	cookie = o.seq;
	tsv = o.o.tsval;
	CHECK_EQ(w->st.synp_cookies, 1, "cookies");
	CHECK_EQ(w->st.flows_created, 0, "no flow for a SYN");
	CHECK_EQ(ph_flows_in_table(w), 0, "no entry for a SYN");

	/* The client's ACK, window 502 in its scale. */
	s = (struct seg){.what = "client ACK", .dir = TO_BE, .flags = PB_ACK,
			 .seq = iss + 1, .ack = cookie + 1};
	ph_ts_opt(opt, 1001, tsv);
	opt_frame(&in, &c, &s, opt, 12, 0);
	pb_put16(in.b + ETH + 20 + 14, 502);
	pb_put16(in.b + ETH + 20 + 16, 0);
	pb_put16(in.b + ETH + 20 + 16,
		 (uint16_t)~pb_fold(pb_sum(in.b + ETH + 20, 32,
					   pb_sum(in.b + ETH + 12, 8,
						  PB_PROTO_TCP + 32u))));
	ph_inject(e, 0, 0, &in);
	ph_poll(e, 0);
	ph_expect_one(e, 1, 0, &got, "SYN to the backend");
	seg_read(&got, &o, "SYN to the backend");
	CHECK_EQ(o.src, IP_SNAT, "from the SNAT address");
	CHECK_EQ(o.dst, IP_BE(0), "to the backend");
	CHECK_EQ(o.flags, PB_SYN, "a SYN");
	CHECK_EQ(o.seq, iss, "the client's ISN");
	CHECK_EQ(o.win, 502u << 6, "the client's window, unscaled");
	CHECK_EQ(o.o.mss, 1460, "the client's MSS class");
	CHECK_EQ(o.o.wscale, 6, "the client's scale");
	CHECK_EQ(o.o.sack_ok, 1, "the client's SACK");
	CHECK_EQ(o.o.tsval, 1001, "the client's TSval");
	CHECK_EQ(o.o.tsecr, 0, "nothing to echo");
	c.sport = o.sport;
	CHECK_EQ(w->st.synp_acks, 1, "cookie checked");
	CHECK_EQ(w->st.flows_created, 1, "the flow now");

	/* The client's request comes before the backend answers: it
	 * waits, and the backend's SYN-ACK still acknowledges what the
	 * backend has seen. */
	s = (struct seg){.what = "early request", .dir = TO_BE,
			 .flags = PB_ACK | PB_PSH, .seq = iss + 1,
			 .ack = cookie + 1};
	ph_ts_opt(opt, 1001, tsv);
	opt_frame(&in, &c, &s, opt, 12, 40);
	ph_inject(e, 0, 0, &in);
	ph_poll(e, 0);
	ph_expect_quiet(e, "the early request waits");
	CHECK_EQ(w->st.synp_held, 1, "held");

	/* The backend answers: its SYN-ACK completes its side only. */
	s = (struct seg){.what = "backend SYN-ACK", .dir = TO_C,
			 .flags = PB_SYN | PB_ACK, .seq = irs, .ack = iss + 1};
	memcpy(opt, (const uint8_t[]){2, 4, 0x05, 0xb4, 4, 2, 8, 10}, 8);
	pb_put32(opt + 8, 5000);
	pb_put32(opt + 12, 1001);
	memcpy(opt + 16, (const uint8_t[]){1, 3, 3, 9}, 4);
	opt_frame(&in, &c, &s, opt, 20, 0);
	ph_inject(e, 1, 0, &in);
	ph_poll(e, 0);
	{
		struct pb_frame two[3];

		assert_int_equal(ph_take(e, 1, 0, two, NELEM(two)), 2);
		ph_expect_quiet(e, "the client hears nothing of it");
		seg_read(&two[0], &o, "ACK to the backend");
		CHECK_EQ(o.flags, PB_ACK, "an ACK");
		CHECK_EQ(o.seq, iss + 1, "after the SYN");
		CHECK_EQ(o.ack, irs + 1, "acknowledges the backend's SYN");
		CHECK_EQ(o.o.tsval, 1001, "the client's TSval");
		CHECK_EQ(o.o.tsecr, 5000, "echoes the backend's");
		CHECK_EQ(o.win, 502, "both read the client's scale");
		seg_read(&two[1], &o, "the early request");
		CHECK_EQ(o.seq, iss + 1, "the request");
		CHECK_EQ(o.ack, irs + 1, "in the backend's numbers");
		CHECK_EQ(o.o.tsecr, 5000, "echoing the backend");
		CHECK_EQ(o.plen, 40, "whole");
	}
	CHECK_EQ(w->st.synp_handshakes, 1, "handshakes");

	/* Backend data, window 1000 in scale 9: the client reads scale 7. */
	s = (struct seg){.what = "response", .dir = TO_C,
			 .flags = PB_ACK | PB_PSH, .seq = irs + 1,
			 .ack = iss + 41};
	ph_ts_opt(opt, 5001, 1001);
	opt_frame(&in, &c, &s, opt, 12, 100);
	pb_put16(in.b + ETH + 20 + 14, 1000);
	pb_put16(in.b + ETH + 20 + 16, 0);
	pb_put16(in.b + ETH + 20 + 16,
		 (uint16_t)~pb_fold(pb_sum(in.b + ETH + 20, 132,
					   pb_sum(in.b + ETH + 12, 8,
						  PB_PROTO_TCP + 132u))));
	ph_inject(e, 1, 0, &in);
	ph_poll(e, 0);
	ph_expect_one(e, 0, 0, &got, "response to the client");
	seg_read(&got, &o, "response");
	CHECK_EQ(o.src, IP_VIP, "from the VIP");
	CHECK_EQ(o.seq, cookie + 1, "in the client's numbers");
	CHECK_EQ(o.ack, iss + 41, "the client's own");
	CHECK_EQ(o.o.tsval, tsv + 1, "the TSval the client knows, moved on");
	CHECK_EQ(o.o.tsecr, 1001, "the client's echo");
	CHECK_EQ(o.win, 4000, "window in the scale offered");
	CHECK_EQ(o.plen, 100, "payload");

	/* A router on the client's side finds the response too big: the
	 * backend hears of its own segment, in its own numbers. */
	{
		uint8_t quote[48];
		struct pb_dg d = {.proto = PB_PROTO_ICMP, .ttl = TTL_IN,
				  .id = 0x7a7a, .src = IP_RTR, .dst = IP_VIP,
				  .type = 3, .code = 4, .rest = 1280,
				  .data = quote, .plen = sizeof(quote)};
		const uint8_t *icmp, *q;

		memcpy(quote, got.b + ETH, sizeof(quote));
		pb_ipv4_frame(&in, mac_port[0], mac_rtr, &d);
		ph_inject(e, 0, 0, &in);
		ph_poll(e, 0);
		ph_expect_one(e, 1, 0, &got, "frag-needed to the backend");
		icmp = got.b + ETH + 20;
		q = icmp + 8;
		CHECK_EQ(pb_csum(icmp, pb_get16(got.b + ETH + 2) - 20u), 0,
			 "ICMP checksum");
		CHECK_EQ(pb_get32(q + 12), IP_BE(0), "quote from the backend");
		CHECK_EQ(pb_get32(q + 16), IP_SNAT, "to the SNAT address");
		CHECK_EQ(pb_get32(q + 20 + 4), irs + 1,
			 "quoted in the backend's numbers");
		CHECK_EQ(pb_get32(q + 20 + 8), iss + 41, "and the client's ack");
	}

	/* The client acknowledges it and sends: in the backend's numbers. */
	s = (struct seg){.what = "request", .dir = TO_BE,
			 .flags = PB_ACK | PB_PSH, .seq = iss + 41,
			 .ack = cookie + 101};
	ph_ts_opt(opt, 1002, tsv + 1);
	opt_frame(&in, &c, &s, opt, 12, 50);
	ph_inject(e, 0, 0, &in);
	ph_poll(e, 0);
	ph_expect_one(e, 1, 0, &got, "request to the backend");
	seg_read(&got, &o, "request");
	CHECK_EQ(o.seq, iss + 41, "the client's seq");
	CHECK_EQ(o.ack, irs + 101, "the backend's numbers");
	CHECK_EQ(o.o.tsecr, 5001, "the backend's TSval echoed");

	/* A forged cookie from another port: no flow, counted. */
	c.cport++;
	s = (struct seg){.what = "forged ACK", .dir = TO_BE, .flags = PB_ACK,
			 .seq = 77, .ack = cookie + 1};
	seg_frame(&in, &c, &s, 0);
	ph_inject(e, 0, 0, &in);
	ph_poll(e, 0);
	CHECK_EQ(w->st.synp_acks_bad, 1, "forged");
	CHECK_EQ(w->st.flows_created, 1, "no flow for it");
	ph_take(e, 0, 0, &got, 1);
	ph_expect_quiet(e, "after the forged ACK");
}

/*
 * synproxy on, a client without timestamps whose ACK carries data: the
 * data waits; the first backend refuses (RST), the next trial goes on
 * from the same SYN, and its SYN-ACK becomes the client's ACK, followed
 * by the data. Segments beyond the one held are dropped, counted (the
 * client sends them again). Then every backend refuses: the client, which is
 * established, gets a RST at the sequence number it expects.
 */
static void
test_synproxy_trials(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, conf_synp_noq);
	const struct lb_worker *w = e->dp.w[0];
	struct conn c = tcp_conn(48400, 0);
	const uint32_t iss = 1000, irs = 9000;
	const uint8_t mss[4] = {2, 4, 0x05, 0xb4};
	struct seg s = {.what = "client SYN", .dir = TO_BE, .flags = PB_SYN,
			.seq = iss};
	struct pb_frame in, got[4];
	struct seg_out o;
	uint32_t cookie;

	learn_all(e);
	opt_frame(&in, &c, &s, mss, 4, 0);
	ph_inject(e, 0, 0, &in);
	ph_poll(e, 0);
	ph_expect_one(e, 0, 0, &got[0], "SYN-ACK");
	seg_read(&got[0], &o, "SYN-ACK");
	CHECK_EQ(o.o.ts, 0, "no timestamps for a client without");
	CHECK_EQ(o.o.wscale, -1, "no scale without timestamps");
	CHECK_EQ(o.o.sack_ok, 0, "no SACK without timestamps");
	cookie = o.seq;

	s = (struct seg){.what = "ACK with data", .dir = TO_BE,
			 .flags = PB_ACK | PB_PSH, .seq = iss + 1,
			 .ack = cookie + 1, .plen = 20};
	seg_frame(&in, &c, &s, 0);
	ph_inject(e, 0, 0, &in);
	ph_poll(e, 0);
	ph_expect_one(e, 1, 0, &got[0], "SYN to backend 0");
	seg_read(&got[0], &o, "SYN to backend 0");
	CHECK_EQ(o.dst, IP_BE(0), "backend 0 first");
	CHECK_EQ(o.o.mss, 1460, "MSS");
	CHECK_EQ(o.o.ts, 0, "no timestamps");
	c.sport = o.sport;
	s = (struct seg){.what = "more data", .dir = TO_BE,
			 .flags = PB_ACK | PB_PSH, .seq = iss + 21,
			 .ack = cookie + 1, .plen = 30};
	seg_frame(&in, &c, &s, 0);
	ph_inject(e, 0, 0, &in);
	s.seq = iss + 51;
	s.what = "data beyond the one held";
	seg_frame(&in, &c, &s, 0);
	ph_inject(e, 0, 0, &in);
	ph_poll(e, 0);
	ph_expect_quiet(e, "data held while the backend answers");
	CHECK_EQ(w->st.synp_held, 1, "the ACK's data held");
	CHECK_EQ(w->st.synp_held_dropped, 2, "segments beyond it dropped");
	/* The held data sent again: the backend may never have had the
	 * SYN, so it goes again, to the same backend. */
	s = (struct seg){.what = "the held data again", .dir = TO_BE,
			 .flags = PB_ACK | PB_PSH, .seq = iss + 1,
			 .ack = cookie + 1, .plen = 20};
	seg_frame(&in, &c, &s, 0);
	ph_inject(e, 0, 0, &in);
	ph_poll(e, 0);
	ph_expect_one(e, 1, 0, &got[0], "the SYN again");
	seg_read(&got[0], &o, "the SYN again");
	CHECK_EQ(o.dst, IP_BE(0), "to backend 0 still");
	CHECK_EQ(o.seq, iss, "the same SYN");
	CHECK_EQ(o.sport, c.sport, "from the same SNAT port");
	CHECK_EQ(w->st.synp_syn_again, 1, "synp_syn_again");
	CHECK_EQ(w->st.synp_held_dropped, 3, "the copy dropped");

	/* Backend 0 refuses: backend 1 gets the same SYN. */
	s = (struct seg){.what = "backend 0 RST", .dir = TO_C,
			 .flags = PB_RST | PB_ACK, .seq = 0, .ack = iss + 1};
	seg_frame(&in, &c, &s, 0);
	ph_inject(e, 1, 0, &in);
	ph_poll(e, 0);
	ph_expect_one(e, 1, 0, &got[0], "SYN to backend 1");
	seg_read(&got[0], &o, "SYN to backend 1");
	CHECK_EQ(o.dst, IP_BE(1), "the next backend");
	CHECK_EQ(o.seq, iss, "the same SYN");
	c.sport = o.sport;
	c.bip = IP_BE(1);
	c.bmac = mac_be[1];
	s = (struct seg){.what = "backend 1 SYN-ACK", .dir = TO_C,
			 .flags = PB_SYN | PB_ACK, .seq = irs, .ack = iss + 1};
	opt_frame(&in, &c, &s, mss, 4, 0);
	ph_inject(e, 1, 0, &in);
	ph_poll(e, 0);
	assert_int_equal(ph_take(e, 1, 0, got, NELEM(got)), 2);
	ph_expect_quiet(e, "the client hears nothing of it");
	seg_read(&got[0], &o, "the client's ACK");
	CHECK_EQ(o.flags, PB_ACK, "first the ACK");
	CHECK_EQ(o.seq, iss + 1, "after the SYN");
	CHECK_EQ(o.ack, irs + 1, "in the backend's numbers");
	CHECK_EQ(o.plen, 0, "alone");
	seg_read(&got[1], &o, "the data held");
	CHECK_EQ(o.seq, iss + 1, "then the data held");
	CHECK_EQ(o.ack, irs + 1, "in the backend's numbers too");
	CHECK_EQ(o.plen, 20, "whole");
	CHECK_EQ(w->st.synp_handshakes, 1, "handshake");

	/* Another client; every backend refuses. */
	c = tcp_conn(48401, 0);
	s = (struct seg){.what = "client SYN", .dir = TO_BE, .flags = PB_SYN,
			 .seq = iss};
	opt_frame(&in, &c, &s, mss, 4, 0);
	ph_inject(e, 0, 0, &in);
	ph_poll(e, 0);
	ph_expect_one(e, 0, 0, &got[0], "SYN-ACK");
	seg_read(&got[0], &o, "SYN-ACK");
	cookie = o.seq;
	s = (struct seg){.what = "client ACK", .dir = TO_BE, .flags = PB_ACK,
			 .seq = iss + 1, .ack = cookie + 1};
	seg_frame(&in, &c, &s, 0);
	ph_inject(e, 0, 0, &in);
	ph_poll(e, 0);
	for (int b = 0; b < 3; b++) {
		ph_expect_one(e, 1, 0, &got[0], "SYN to a backend");
		seg_read(&got[0], &o, "SYN");
		c.sport = o.sport;
		c.bip = o.dst;
		c.bmac = mac_be[o.dst - IP_BE(0)];
		s = (struct seg){.what = "backend RST", .dir = TO_C,
				 .flags = PB_RST | PB_ACK, .ack = iss + 1};
		seg_frame(&in, &c, &s, 0);
		ph_inject(e, 1, 0, &in);
		ph_poll(e, 0);
	}
	ph_expect_one(e, 0, 0, &got[0], "RST to the client");
	seg_read(&got[0], &o, "RST");
	CHECK_EQ(o.flags, PB_RST, "a RST");
	CHECK_EQ(o.seq, cookie + 1, "where the client expects it");
	CHECK_EQ(o.dst, IP_C, "to the client");
	CHECK_EQ(e->w->hold_nfree, e->w->hold_cap, "nothing left held");
}


/* auto: a low SYN rate turns it on, a second of calm off. */
static const char *const conf_synp_auto[] = {
	"service set tcp 203.0.113.10:80 synproxy auto synproxy-syn-rate 3 "
	"synproxy-calm 1s",
	NULL,
};

/* Polls worker 0, its output discarded, until @p *ctr reaches @p want
 * or 10 s pass: auto judges whole seconds of the real clock. */
static void
poll_until(struct ph_env *e, const uint64_t *ctr, uint64_t want,
	   const char *what)
{
	struct pb_frame junk[8];
	uint64_t end = ph_now_ns(e) + 10000000000ull;

	while (*ctr < want && ph_now_ns(e) < end) {
		ph_poll(e, 0);
		while (ph_take(e, 0, 0, junk, NELEM(junk)) > 0 ||
		       ph_take(e, 1, 0, junk, NELEM(junk)) > 0)
			;
		usleep(2000);
	}
	if (*ctr < want)
		fail_msg("%s: still %" PRIu64 " after 10 s", what, *ctr);
}

/* One SYN from client port @p cport: whether the worker answered it
 * itself (1) or sent it to a backend (0). */
static int
syn_answered(struct ph_env *e, uint16_t cport)
{
	struct conn c = tcp_conn(cport, 0);
	struct pb_frame in, got;

	seg_frame(&in, &c, seg_syn(7000), 0);
	ph_inject(e, 0, 0, &in);
	ph_poll(e, 0);
	if (ph_take(e, 0, 0, &got, 1) == 1)
		return 1;
	assert_int_equal(ph_take(e, 1, 0, &got, 1), 1);
	return 0;
}

/*
 * synproxy auto: SYNs go to the backends while they are few; a second
 * with more than synproxy-syn-rate of them turns cookies on, counted; a
 * calm second later they are off again, and SYNs go to the backends.
 */
static void
test_synproxy_auto(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, conf_synp_auto);
	const struct lb_worker *w = e->dp.w[0];
	uint16_t cport = 50000;

	learn_all(e);
	CHECK_EQ(syn_answered(e, cport++), 0, "off at first");
	for (int i = 0; i < 20; i++)
		syn_answered(e, cport++);
	poll_until(e, &w->st.synp_auto_on, 1, "auto on");
	CHECK_EQ(syn_answered(e, cport++), 1, "cookies while on");
	poll_until(e, &w->st.synp_auto_off, 1, "auto off");
	CHECK_EQ(syn_answered(e, cport++), 0, "off again");
	CHECK_EQ(w->st.synp_auto_on, 1, "turned on once");
}

/*
 * A flood must not get a second of flow entries and SNAT ports before
 * auto reacts: the SYN that brings the current second to the rate turns
 * the proxy on and is answered with a cookie itself. Six SYNs in a few
 * milliseconds cross at most one boundary of auto's seconds, so one of
 * them reaches the rate of 3 within its second; before, the proxy came
 * on only at the end of the second.
 */
static void
test_synproxy_auto_at_once(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, conf_synp_auto);
	const struct lb_worker *w = e->dp.w[0];
	uint16_t cport = 52000;
	int to_backend = 0;

	learn_all(e);
	while (to_backend < 6 && syn_answered(e, cport++) == 0)
		to_backend++;
	if (to_backend >= 6)
		fail_msg("no cookie within 6 SYNs: auto waits for its second");
	CHECK_EQ(w->st.synp_auto_on, 1, "turned on once");
	CHECK_EQ(syn_answered(e, cport++), 1, "and stays on");
}

/*
 * SYNs answered while the proxy was `on` are not a rate `auto` may judge:
 * a service switched from on to auto after a flood of them, with no SYN
 * since, must stay off through the seconds that follow (it turned on at
 * once, with the whole `on` period counted as its first second).
 */
static void
test_synproxy_on_then_auto(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, conf_synp);
	const struct lb_worker *w = e->dp.w[0];
	struct pb_frame junk[8];
	uint16_t cport = 51000;
	uint64_t end;

	learn_all(e);
	for (int i = 0; i < 50; i++)
		CHECK_EQ(syn_answered(e, cport++), 1, "cookies while on");
	ph_table_publish(e, compile_conf(e, conf_synp_auto, e->dp.conf));
	/* Three housekeeping seconds at least, with nothing arriving. */
	end = ph_now_ns(e) + 3200000000ull;
	while (ph_now_ns(e) < end) {
		ph_poll(e, 0);
		while (ph_take(e, 0, 0, junk, NELEM(junk)) > 0 ||
		       ph_take(e, 1, 0, junk, NELEM(junk)) > 0)
			;
		usleep(5000);
	}
	CHECK_EQ(w->st.synp_auto_on, 0, "auto stayed off");
	CHECK_EQ(syn_answered(e, cport++), 0, "the SYN goes to a backend");
	/* And auto still works: a burst above the rate turns it on. */
	for (int i = 0; i < 20; i++)
		syn_answered(e, cport++);
	poll_until(e, &w->st.synp_auto_on, 1, "auto on");
}

/* ---- delayed binding ----------------------------------------------------- */

/* Backends 1 and 3 in pool api, 0 and 2 in the service's own; requests
 * for api.example.com, and TLS for it, go to api. */
static const char *const conf_bind[] = {
	"service set tcp 203.0.113.10:80 synproxy on deferq 0",
	"pool add tcp 203.0.113.10:80 api sched rr",
	"backend del tcp 203.0.113.10:80 10.1.0.21:8080",
	"backend add tcp 203.0.113.10:80 10.1.0.21:8080 pool api",
	"backend add tcp 203.0.113.10:80 10.1.0.23:8080 pool api",
	"rule add tcp 203.0.113.10:80 host api.example.com pool api",
	"rule add tcp 203.0.113.10:80 sni api.example.com pool api",
	NULL,
};

#define BIND_ISS 5000u
#define BIND_IRS 70000u

/* A client segment of @c carrying @p len bytes of @p data. */
static void
data_frame(struct pb_frame *f, const struct conn *c, uint32_t seq,
	   uint32_t ack, const void *data, uint16_t len)
{
	const struct seg s = {.what = "client data", .dir = TO_BE,
			      .flags = PB_ACK | PB_PSH, .seq = seq,
			      .ack = ack, .plen = len};
	struct pb_dg d;

	seg_dg(&d, c, &s, 0);
	d.data = data;
	pb_ipv4_frame(f, mac_port[0], c->cmac, &d);
}

/* The SYN proxy's handshake of @p c, its ACK without data: the cookie. */
static uint32_t
bind_handshake(struct ph_env *e, const struct conn *c)
{
	const uint8_t mss[4] = {2, 4, 0x05, 0xb4};
	struct seg s = {.what = "client SYN", .dir = TO_BE, .flags = PB_SYN,
			.seq = BIND_ISS};
	struct pb_frame in, got;
	struct seg_out o;
	uint32_t cookie;

	opt_frame(&in, c, &s, mss, 4, 0);
	ph_inject(e, 0, 0, &in);
	ph_poll(e, 0);
	ph_expect_one(e, 0, 0, &got, "SYN-ACK");
	seg_read(&got, &o, "SYN-ACK");
	cookie = o.seq;
	s = (struct seg){.what = "client ACK", .dir = TO_BE, .flags = PB_ACK,
			 .seq = BIND_ISS + 1, .ack = cookie + 1};
	seg_frame(&in, c, &s, 0);
	ph_inject(e, 0, 0, &in);
	ph_poll(e, 0);
	ph_expect_quiet(e, "no backend before the first bytes");
	return cookie;
}

/* Sends @p len bytes of @p p at stream offset @p off of @p c. */
static void
bind_send(struct ph_env *e, const struct conn *c, uint32_t cookie,
	  uint32_t off, const void *p, uint16_t len)
{
	struct pb_frame in;

	data_frame(&in, c, BIND_ISS + 1 + off, cookie + 1, p, len);
	ph_inject(e, 0, 0, &in);
	ph_poll(e, 0);
}

/* The backend @p c reached answers: the client's ACK, then the @p n
 * segments kept, of @p len[i] bytes each, in order, reach it. */
static void
bind_synack(struct ph_env *e, struct conn *c, unsigned int n,
	    const uint16_t *len)
{
	const uint8_t mss[4] = {2, 4, 0x05, 0xb4};
	struct seg s = {.what = "backend SYN-ACK", .dir = TO_C,
			.flags = PB_SYN | PB_ACK, .seq = BIND_IRS,
			.ack = BIND_ISS + 1};
	struct pb_frame in, got[LB_BIND_SEGS + 2];
	uint32_t seq = BIND_ISS + 1;
	struct seg_out o;

	opt_frame(&in, c, &s, mss, 4, 0);
	ph_inject(e, 1, 0, &in);
	ph_poll(e, 0);
	assert_int_equal(ph_take(e, 1, 0, got, NELEM(got)), n + 1);
	ph_expect_quiet(e, "the client hears nothing of it");
	seg_read(&got[0], &o, "the client's ACK");
	CHECK_EQ(o.flags, PB_ACK, "first the ACK");
	CHECK_EQ(o.ack, BIND_IRS + 1, "in the backend's numbers");
	for (unsigned int i = 0; i < n; i++) {
		seg_read(&got[i + 1], &o, "a segment kept");
		CHECK_EQ(o.dst, c->bip, "to the backend");
		CHECK_EQ(o.seq, seq, "in order");
		CHECK_EQ(o.plen, len[i], "whole");
		seq += len[i];
	}
}

static const char req_api[] = "GET /v1/users HTTP/1.1\r\n"
			      "Host: api.example.com\r\n"
			      "Accept: */*\r\n\r\n";
static const char req_www[] = "GET / HTTP/1.1\r\n"
			      "Host: www.example.com\r\n\r\n";

/* conf_bind on an http service: its flows are followed. */
static const char *const conf_bind_http[] = {
	"service set tcp 203.0.113.10:80 synproxy on deferq 0 http on",
	"pool add tcp 203.0.113.10:80 api sched rr",
	"backend del tcp 203.0.113.10:80 10.1.0.21:8080",
	"backend add tcp 203.0.113.10:80 10.1.0.21:8080 pool api",
	"backend add tcp 203.0.113.10:80 10.1.0.23:8080 pool api",
	"rule add tcp 203.0.113.10:80 host api.example.com pool api",
	NULL,
};

/* A worker on conf_bind_http, following with header database @p hdb;
 * @p more, when not NULL, is one more line of configuration. */
static struct ph_env *
bind_http_up(void **state, struct lb_hdr_db **hdb, const char *more)
{
	struct ph_env *e = ph_env_new(state);
	const char *lines[NELEM(conf_bind_http) + 1];
	unsigned int n = 0;
	struct lb_hdr_cfg hc;

	for (; conf_bind_http[n] != NULL; n++)
		lines[n] = conf_bind_http[n];
	lines[n++] = more;
	lines[n] = NULL;
	lb_hdr_cfg_default(&hc);
	*hdb = lb_hdr_db_compile(&hc);
	assert_non_null(*hdb);
	load_conf(e, lines);
	e->dp.flows = FLOWS;
	e->dp.hdb = *hdb;
	e->dp.l7_flows = 16;
	e->dp.pp_rto_ns = 3600000000000ull;
	ph_env_start(e, 1);
	learn_all(e);
	return e;
}

/* Connection @p c sends req_api, routed to pool api and spliced: the
 * cookie. */
static uint32_t
bind_http_api(struct ph_env *e, struct conn *c)
{
	uint16_t len = (uint16_t)strlen(req_api);
	uint32_t cookie = bind_handshake(e, c);
	int be;

	bind_send(e, c, cookie, 0, req_api, len);
	be = syn_out(e, c, "SYN to the api pool");
	CHECK_EQ(be == 1 || be == 3, 1, "a backend of pool api");
	bind_synack(e, c, 1, &len);
	return cookie;
}

static const char resp_empty[] = "HTTP/1.1 200 OK\r\n"
				 "Content-Length: 0\r\n\r\n";

/* The backend of @p c sends resp_empty at @p seq, acknowledging @p ack:
 * it reaches the client whole. */
static void
bind_http_answer(struct ph_env *e, const struct conn *c, uint32_t seq,
		 uint32_t ack)
{
	struct seg s = {.what = "the backend's response",
			.dir = TO_C,
			.flags = PB_ACK | PB_PSH,
			.seq = seq,
			.ack = ack,
			.plen = (uint16_t)strlen(resp_empty)};
	struct pb_frame in, got;
	struct seg_out o;
	struct pb_dg d;

	seg_dg(&d, c, &s, 0);
	d.data = (const uint8_t *)resp_empty;
	pb_ipv4_frame(&in, mac_port[1], c->bmac, &d);
	ph_inject(e, 1, 0, &in);
	ph_poll(e, 0);
	assert_int_equal(ph_take(e, 0, 0, &got, 1), 1);
	seg_read(&got, &o, "the response to the client");
	CHECK_EQ(o.dst, c->cip, "to the client");
	CHECK_EQ(o.plen, s.plen, "whole");
}

/*
 * A routed connection of an http service is followed from its first
 * request: the response of the backend its pool gave reaches the
 * client and counts as that backend's, in its own numbers.
 */
static void
test_bind_followed(void **state)
{
	struct lb_hdr_db *hdb;
	struct ph_env *e = bind_http_up(state, &hdb, NULL);
	const struct lb_worker *w = e->dp.w[0];
	struct conn c = tcp_conn(48540, 0);
	uint64_t n = 0;

	bind_http_api(e, &c);
	assert_non_null(w->l7);
	CHECK_EQ(w->st.rule_hits[SVC_TCP][0], 1, "a hit of the host rule");
	bind_http_answer(e, &c, BIND_IRS + 1,
			 BIND_ISS + 1 + (uint32_t)strlen(req_api));
	for (unsigned int b = 0; b < LB_CONF_MAX_BES; b++)
		n += w->bst[SVC_TCP][b].http_responses;
	CHECK_EQ(n, 1, "a response counted");
	CHECK_EQ(w->st.l7_stopped, 0, "followed to the end");
	ph_env_close(e, 1);
	lb_hdr_db_free(hdb);
}

/*
 * Keep-alive on a routed connection: a later request whose Host the
 * rules would give another pool stays on the backend the first chose
 * (`rebind off`) and counts; one the same pool would take does not.
 */
static void
test_bind_rebind_kept(void **state)
{
	struct lb_hdr_db *hdb;
	struct ph_env *e = bind_http_up(state, &hdb, NULL);
	const struct lb_worker *w = e->dp.w[0];
	uint32_t len = (uint32_t)strlen(req_api);
	uint32_t len2 = (uint32_t)strlen(req_www);
	uint32_t rl = (uint32_t)strlen(resp_empty);
	struct conn c = tcp_conn(48545, 0);
	struct pb_frame got;
	struct seg_out o;
	uint32_t cookie;

	cookie = bind_http_api(e, &c);
	bind_http_answer(e, &c, BIND_IRS + 1, BIND_ISS + 1 + len);
	CHECK_EQ(w->st.rebind_kept, 0, "the first request chose the pool");

	/* www.example.com would go to the own pool: it stays on api. */
	bind_send(e, &c, cookie, len, req_www, (uint16_t)len2);
	ph_expect_one(e, 1, 0, &got, "the second request");
	seg_read(&got, &o, "the second request");
	CHECK_EQ(o.dst, c.bip, "to the first request's backend");
	CHECK_EQ(o.seq, BIND_ISS + 1 + len, "after the first");
	CHECK_EQ(o.plen, len2, "whole");
	CHECK_EQ(w->st.rebind_kept, 1, "a request kept on its pool");
	CHECK_EQ(w->st.rebind_unchecked, 0, "its head read whole");

	/* Its response, then api again: the same pool, nothing counted. */
	bind_http_answer(e, &c, BIND_IRS + 1 + rl, BIND_ISS + 1 + len + len2);
	bind_send(e, &c, cookie, len + len2, req_api, (uint16_t)len);
	ph_expect_one(e, 1, 0, &got, "the third request");
	seg_read(&got, &o, "the third request");
	CHECK_EQ(o.dst, c.bip, "to the same backend");
	CHECK_EQ(w->st.rebind_kept, 1, "the api pool's request not counted");
	CHECK_EQ(w->st.l7_stopped, 0, "followed to the end");
	ph_env_close(e, 1);
	lb_hdr_db_free(hdb);
}

/*
 * `rebind close`: a later request whose Host the rules would give
 * another pool, in a segment of its own, never reaches the backend,
 * which gets a RST at its first octet; the client gets a 421 with
 * Connection: close and a FIN, in its own numbers (the SYN proxy's
 * cookie, past the responses).
 */
static void
test_bind_rebind_close(void **state)
{
	static const char ans_421[] = "HTTP/1.1 421 Misdirected Request\r\n"
				      "Content-Type: text/plain\r\n"
				      "Content-Length: 20\r\n"
				      "Connection: close\r\n"
				      "\r\n"
				      "Misdirected Request\n";
	struct lb_hdr_db *hdb;
	struct ph_env *e = bind_http_up(
		state, &hdb, "service set tcp 203.0.113.10:80 rebind close");
	const struct lb_worker *w = e->dp.w[0];
	uint32_t len = (uint32_t)strlen(req_api);
	uint32_t len2 = (uint32_t)strlen(req_www);
	uint32_t rl = (uint32_t)strlen(resp_empty);
	struct conn c = tcp_conn(48546, 0);
	struct pb_frame got;
	struct seg_out o;
	struct lb_pkt pkt;
	uint32_t cookie;

	char two[256];
	uint32_t off;

	cookie = bind_http_api(e, &c);
	bind_http_answer(e, &c, BIND_IRS + 1, BIND_ISS + 1 + len);
	/* Behind api in one segment, www cannot be answered apart: it goes
	 * on to the first backend. */
	assert_true(len + len2 <= sizeof(two));
	memcpy(two, req_api, len);
	memcpy(two + len, req_www, len2);
	bind_send(e, &c, cookie, len, two, (uint16_t)(len + len2));
	ph_expect_one(e, 1, 0, &got, "the pipelined requests");
	seg_read(&got, &o, "the pipelined requests");
	CHECK_EQ(o.plen, len + len2, "both");
	CHECK_EQ(w->st.rebind_kept, 1, "www kept behind api");
	CHECK_EQ(w->st.rebind_closed, 0, "none closed");
	bind_http_answer(e, &c, BIND_IRS + 1 + rl,
			 BIND_ISS + 1 + 2 * len + len2);
	bind_http_answer(e, &c, BIND_IRS + 1 + 2 * rl,
			 BIND_ISS + 1 + 2 * len + len2);
	off = 2 * len + len2;
	/* www alone: refused. */
	bind_send(e, &c, cookie, off, req_www, (uint16_t)len2);
	assert_int_equal(ph_take(e, 1, 0, &got, 1), 1);
	seg_read(&got, &o, "the backend's RST");
	CHECK_EQ(o.dst, c.bip, "to the first request's backend");
	CHECK_EQ(o.flags & PB_RST, PB_RST, "a RST");
	CHECK_EQ(o.plen, 0, "nothing of the request");
	CHECK_EQ(o.seq, BIND_ISS + 1 + off, "at the request's first octet");
	assert_int_equal(ph_take(e, 0, 0, &got, 1), 1);
	ph_expect_quiet(e, "nothing else");
	seg_read(&got, &o, "the answer");
	CHECK_EQ(o.dst, c.cip, "to the client");
	CHECK_EQ(o.flags & PB_FIN, PB_FIN, "with a FIN");
	CHECK_EQ(o.seq, cookie + 1 + 3 * rl, "in the client's numbers");
	CHECK_EQ(o.ack, BIND_ISS + 1 + off + len2, "the request taken");
	CHECK_EQ(o.plen, strlen(ans_421), "the 421");
	assert_int_equal(lb_pkt_parse(got.b, got.len, &pkt), LB_PKT_IPV4);
	assert_memory_equal(got.b + pkt.payload_off, ans_421, strlen(ans_421));
	CHECK_EQ(w->st.rebind_closed, 1, "a request closed");
	CHECK_EQ(w->st.rebind_kept, 1, "no more kept");
	CHECK_EQ(w->st.l7_refused[LB_L7_REJ_GOVERNOR] +
			 w->st.l7_refused[LB_L7_REJ_RATE],
		 0, "no admission refusal");
	ph_env_close(e, 1);
	lb_hdr_db_free(hdb);
}

/*
 * A request in one segment goes to the pool its Host names, another
 * Host to the service's own pool; the backend of the pool that refuses
 * hands the connection to the next backend of the same pool.
 */
static void
test_bind_host(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, conf_bind);
	const struct lb_worker *w = e->dp.w[0];
	uint16_t len = (uint16_t)strlen(req_api);
	struct conn c = tcp_conn(48500, 0);
	struct pb_frame in;
	uint32_t cookie;
	int be, be2;

	learn_all(e);
	cookie = bind_handshake(e, &c);
	CHECK_EQ(w->st.bind_waits, 1, "the connection waits");
	CHECK_EQ(w->st.flows_created, 0, "no flow yet");
	bind_send(e, &c, cookie, 0, req_api, len);
	be = syn_out(e, &c, "SYN to the api pool");
	CHECK_EQ(be == 1 || be == 3, 1, "a backend of pool api");
	CHECK_EQ(w->st.bind_routed, 1, "routed");
	CHECK_EQ(w->st.rule_hits[SVC_TCP][0], 1, "a hit of the host rule");
	CHECK_EQ(w->st.rule_hits[SVC_TCP][LB_ROUTE_FLAT_RULES], 0, "none default");

	/* It refuses: the other backend of api gets the same SYN. */
	backend_rst(&in, &c, BIND_ISS);
	ph_inject(e, 1, 0, &in);
	ph_poll(e, 0);
	be2 = syn_out(e, &c, "SYN retried");
	CHECK_EQ(be2, be == 1 ? 3 : 1, "the next backend of api");
	bind_synack(e, &c, 1, &len);
	CHECK_EQ(w->st.synp_handshakes, 1, "spliced");

	/* Another Host: the service's own pool. */
	c = tcp_conn(48501, 0);
	cookie = bind_handshake(e, &c);
	len = (uint16_t)strlen(req_www);
	bind_send(e, &c, cookie, 0, req_www, len);
	be = syn_out(e, &c, "SYN to the own pool");
	CHECK_EQ(be == 0 || be == 2, 1, "a backend of the own pool");
	bind_synack(e, &c, 1, &len);
	CHECK_EQ(w->st.bind_routed, 2, "routed");
	CHECK_EQ(w->st.rule_hits[SVC_TCP][LB_ROUTE_FLAT_RULES], 1, "a default hit");
	CHECK_EQ(w->st.rule_hits[SVC_TCP][0], 1, "the host rule's hits the same");
	CHECK_EQ(w->st.rule_hits[SVC_TCP][1], 0, "the sni rule hit by none");
	CHECK_EQ(w->bind_nfree, LB_BIND_CAP, "no slot left taken");
	CHECK_EQ(w->bind_mbufs, 0, "no frame left kept");
	ph_env_close(e, 1);
}

/*
 * The SYN to the backend is lost (a neighbour not yet resolved drops
 * what it cannot park): the client's request, sent again, sends the SYN
 * again to the same backend, from the same SNAT port, and once the
 * backend answers the request reaches it once. Before, the copy was
 * dropped as a duplicate and the connection waited for the SYN timeout.
 */
static void
test_bind_syn_again(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, conf_bind);
	const struct lb_worker *w = e->dp.w[0];
	uint16_t len = (uint16_t)strlen(req_api);
	struct conn c = tcp_conn(48505, 0);
	uint32_t cookie;
	uint16_t sport;
	int be;

	learn_all(e);
	cookie = bind_handshake(e, &c);
	bind_send(e, &c, cookie, 0, req_api, len);
	be = syn_out(e, &c, "the SYN, lost on its way");
	sport = c.sport;
	bind_send(e, &c, cookie, 0, req_api, len);
	CHECK_EQ(syn_out(e, &c, "the SYN again"), be, "to the same backend");
	CHECK_EQ(c.sport, sport, "from the same SNAT port");
	CHECK_EQ(w->st.synp_syn_again, 1, "synp_syn_again");
	CHECK_EQ(w->st.bind_dup, 1, "the request's copy counted");
	CHECK_EQ(w->st.syn_retries, 0, "no trial failed");
	bind_synack(e, &c, 1, &len);
	CHECK_EQ(w->st.synp_handshakes, 1, "spliced");
	ph_env_close(e, 1);
}

/*
 * The same head in three segments, the first sent twice and the second
 * damaged once: nothing goes to a backend before its end, the copy and
 * the damaged one are dropped, and all three reach the backend after its
 * SYN-ACK.
 */
static void
test_bind_split(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, conf_bind);
	const struct lb_worker *w = e->dp.w[0];
	const uint16_t len[3] = {10, 20, (uint16_t)(strlen(req_api) - 30)};
	struct conn c = tcp_conn(48510, 0);
	uint32_t cookie;
	int be;

	learn_all(e);
	cookie = bind_handshake(e, &c);
	bind_send(e, &c, cookie, 0, req_api, len[0]);
	ph_expect_quiet(e, "a part of the request line");
	bind_send(e, &c, cookie, 0, req_api, len[0]);
	ph_expect_quiet(e, "the part sent again");
	CHECK_EQ(w->st.bind_dup, 1, "dropped as a copy");
	{
		/* The next piece, damaged on the way: not read, not kept. */
		uint64_t bad = w->st.drop[LB_DROP_L4_CSUM];
		struct pb_frame in;

		data_frame(&in, &c, BIND_ISS + 1 + len[0], cookie + 1,
			   req_api + len[0], len[1]);
		in.b[in.len - 1] ^= 0x20;
		ph_inject(e, 0, 0, &in);
		ph_poll(e, 0);
		ph_expect_quiet(e, "a damaged segment");
		CHECK_EQ(w->st.drop[LB_DROP_L4_CSUM], bad + 1, "dropped");
	}
	bind_send(e, &c, cookie, len[0], req_api + len[0], len[1]);
	ph_expect_quiet(e, "no Host yet");
	bind_send(e, &c, cookie, len[0] + len[1], req_api + len[0] + len[1],
		  len[2]);
	be = syn_out(e, &c, "SYN at the end of the head");
	CHECK_EQ(be == 1 || be == 3, 1, "a backend of pool api");
	bind_synack(e, &c, 3, len);
	CHECK_EQ(w->st.bind_routed, 1, "routed");
	ph_env_close(e, 1);
}

/* A TLS 1.3 ClientHello asking for @p name, in @p out; its length. */
static uint16_t
client_hello(uint8_t *out, const char *name)
{
	uint16_t nl = (uint16_t)strlen(name), ext = (uint16_t)(nl + 9);
	uint16_t body = (uint16_t)(2 + 32 + 1 + 4 + 2 + 2 + ext), n = 0;

	out[n++] = 22, out[n++] = 3, out[n++] = 1;
	pb_put16(out + n, (uint16_t)(body + 4)), n += 2;
	out[n++] = 1, out[n++] = 0;
	pb_put16(out + n, body), n += 2;
	out[n++] = 3, out[n++] = 3;
	memset(out + n, 0x5a, 32), n += 32;
	out[n++] = 0;			   /* session id */
	pb_put16(out + n, 2), n += 2;	   /* cipher suites */
	out[n++] = 0x13, out[n++] = 0x01;
	out[n++] = 1, out[n++] = 0;	   /* compression */
	pb_put16(out + n, ext), n += 2;	   /* extensions */
	pb_put16(out + n, 0), n += 2;	   /* server_name */
	pb_put16(out + n, (uint16_t)(nl + 5)), n += 2;
	pb_put16(out + n, (uint16_t)(nl + 3)), n += 2;
	out[n++] = 0;
	pb_put16(out + n, nl), n += 2;
	memcpy(out + n, name, nl), n += nl;
	return n;
}

/* A ClientHello is routed by its SNI, in two segments. */
static void
test_bind_sni(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, conf_bind);
	const struct lb_worker *w = e->dp.w[0];
	struct conn c = tcp_conn(48520, 0);
	uint8_t hello[256];
	uint16_t len[2];
	uint32_t cookie;
	int be;

	learn_all(e);
	len[0] = 40;
	len[1] = (uint16_t)(client_hello(hello, "API.example.com") - len[0]);
	cookie = bind_handshake(e, &c);
	bind_send(e, &c, cookie, 0, hello, len[0]);
	ph_expect_quiet(e, "a part of the ClientHello");
	bind_send(e, &c, cookie, len[0], hello + len[0], len[1]);
	be = syn_out(e, &c, "SYN at the end of the ClientHello");
	CHECK_EQ(be == 1 || be == 3, 1, "a backend of pool api");
	bind_synack(e, &c, 2, len);
	CHECK_EQ(w->st.bind_routed, 1, "routed");
	CHECK_EQ(w->st.rule_hits[SVC_TCP][1], 1, "a hit of the sni rule");
	CHECK_EQ(w->st.rule_hits[SVC_TCP][0], 0, "none of the host rule");
	ph_env_close(e, 1);
}

/*
 * A client that never sends: given up after the wait, counted, and the
 * default (the own pool) applies. One that sends more than is kept
 * without a decision: given up too, and a default that refuses answers
 * with a RST where the client expects it.
 */
static void
test_bind_giveup(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, conf_bind);
	const struct lb_worker *w = e->dp.w[0];
	struct conn c = tcp_conn(48530, 0);
	char pad[1000];
	struct pb_frame got;
	struct lb_dpconf *d;
	struct seg_out o;
	uint64_t end;
	uint32_t cookie;
	int be;

	learn_all(e);
	e->dp.bind_wait_ns = 20000000ull; /* 20 ms */
	bind_handshake(e, &c);
	end = ph_now_ns(e) + 10000000000ull;
	while (w->st.bind_gaveup[LB_BIND_GU_TIMEOUT] == 0 &&
	       ph_now_ns(e) < end) {
		ph_poll(e, 0);
		usleep(1000);
	}
	CHECK_EQ(w->st.bind_gaveup[LB_BIND_GU_TIMEOUT], 1, "timed out");
	be = syn_out(e, &c, "SYN of the default");
	CHECK_EQ(be == 0 || be == 2, 1, "a backend of the own pool");
	CHECK_EQ(w->st.rule_hits[SVC_TCP][LB_ROUTE_FLAT_RULES], 1,
		 "the default counted for the connection given up");
	bind_synack(e, &c, 0, NULL);

	/* The default refuses; a head that does not end within the bound. */
	e->dp.bind_wait_ns = 0;
	d = ph_table_next(e);
	d->pools[SVC_TCP].rules.def.what = LB_ROUTE_RST;
	ph_table_publish(e, d);
	c = tcp_conn(48531, 0);
	cookie = bind_handshake(e, &c);
	memset(pad, 'a', sizeof(pad));
	memcpy(pad, "GET / HTTP/1.1\r\nX-Pad: ", 23);
	bind_send(e, &c, cookie, 0, pad, sizeof(pad));
	memcpy(pad, "b", 1);
	for (uint32_t k = 1; k < 4; k++)
		bind_send(e, &c, cookie, k * sizeof(pad), pad, sizeof(pad));
	ph_expect_quiet(e, "4000 bytes kept, no decision");
	bind_send(e, &c, cookie, 4 * sizeof(pad), pad, sizeof(pad));
	CHECK_EQ(w->st.bind_gaveup[LB_BIND_GU_LIMIT], 1, "over the bound");
	CHECK_EQ(w->st.bind_refused, 1, "the default refuses");
	ph_expect_one(e, 0, 0, &got, "RST to the client");
	seg_read(&got, &o, "RST");
	CHECK_EQ(o.flags, PB_RST, "a RST");
	CHECK_EQ(o.seq, cookie + 1, "where the client expects it");
	CHECK_EQ(o.dst, IP_C, "to the client");
	CHECK_EQ(w->bind_nfree, LB_BIND_CAP, "no slot left taken");
	CHECK_EQ(w->bind_mbufs, 0, "no frame left kept");
	CHECK_EQ(e->w->hold_nfree, e->w->hold_cap, "nothing left held");
	ph_env_close(e, 1);
}

/*
 * The rules go while a connection waits: it is let go, and its data,
 * sent again, proves the cookie and starts a flow to the service's own
 * pool, as on a service without rules.
 */
static void
test_bind_rules_gone(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, conf_bind);
	const struct lb_worker *w = e->dp.w[0];
	uint16_t len = (uint16_t)strlen(req_api);
	struct conn c = tcp_conn(48540, 0);
	struct lb_dpconf *d;
	uint32_t cookie;
	int be;

	learn_all(e);
	cookie = bind_handshake(e, &c);
	CHECK_EQ(w->bind_nfree, LB_BIND_CAP - 1, "the connection waits");
	d = ph_table_next(e);
	d->pools[SVC_TCP].rules.n = 0;
	d->pools[SVC_TCP].rules.nb_tls = 0;
	d->pools[SVC_TCP].rules.nb_http = 0;
	ph_table_publish(e, d);
	ph_poll(e, 0);
	CHECK_EQ(w->bind_svc, 0, "no service routes");
	CHECK_EQ(w->bind_nfree, LB_BIND_CAP, "let go");
	CHECK_EQ(w->bind_mbufs, 0, "no frame kept");
	bind_send(e, &c, cookie, 0, req_api, len);
	be = syn_out(e, &c, "SYN from the data's cookie");
	CHECK_EQ(be == 0 || be == 2, 1, "a backend of the own pool");
	bind_synack(e, &c, 1, &len);
	CHECK_EQ(w->st.bind_routed, 0, "nothing routed");
	ph_env_close(e, 1);
}

/*
 * A default that refuses with 404 (then 421): a request no rule matches
 * gets the answer and a FIN in the server's first numbers, acknowledging
 * the request; the client's FIN is acknowledged and nothing is left. A
 * ClientHello refused so gets a RST.
 */
static void
test_bind_refuse_http(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, conf_bind);
	const struct lb_worker *w = e->dp.w[0];
	uint16_t len = (uint16_t)strlen(req_www);
	static const uint8_t kind[2] = {LB_ROUTE_REFUSE_404,
					LB_ROUTE_REFUSE_421};
	static const char *const line[2] = {"HTTP/1.1 404 ", "HTTP/1.1 421 "};
	struct pb_frame in, got;
	struct lb_dpconf *d;
	struct seg_out o;
	uint8_t hello[256];
	uint32_t cookie;

	learn_all(e);
	for (int k = 0; k < 2; k++) {
		struct conn c = tcp_conn((uint16_t)(48550 + k), 0);
		struct seg s;
		struct lb_pkt pkt;

		d = ph_table_next(e);
		d->pools[SVC_TCP].rules.def.what = kind[k];
		ph_table_publish(e, d);
		cookie = bind_handshake(e, &c);
		bind_send(e, &c, cookie, 0, req_www, len);
		ph_expect_one(e, 0, 0, &got, "the answer");
		seg_read(&got, &o, "the answer");
		CHECK_EQ(o.flags, PB_ACK | PB_PSH | PB_FIN, "answer and FIN");
		CHECK_EQ(o.seq, cookie + 1, "the server's first byte");
		CHECK_EQ(o.ack, BIND_ISS + 1 + len, "the request acknowledged");
		CHECK_EQ(o.src, IP_VIP, "from the VIP");
		assert_int_equal(lb_pkt_parse(got.b, got.len, &pkt),
				 LB_PKT_IPV4);
		if (memcmp(got.b + pkt.payload_off, line[k], 13) != 0)
			fail_msg("the answer starts with '%.13s'",
				 (const char *)got.b + pkt.payload_off);
		s = (struct seg){.what = "client FIN", .dir = TO_BE,
				 .flags = PB_FIN | PB_ACK,
				 .seq = BIND_ISS + 1 + len,
				 .ack = o.seq + o.plen + 1};
		seg_frame(&in, &c, &s, 0);
		ph_inject(e, 0, 0, &in);
		ph_poll(e, 0);
		ph_expect_one(e, 0, 0, &got, "ACK of the FIN");
		seg_read(&got, &o, "ACK of the FIN");
		CHECK_EQ(o.flags, PB_ACK, "an ACK");
		CHECK_EQ(o.ack, BIND_ISS + 2 + len, "acknowledges the FIN");
		CHECK_EQ(o.seq, s.ack, "after our FIN");
		CHECK_EQ(w->bind_nfree, LB_BIND_CAP, "nothing left");
		CHECK_EQ(w->bind_mbufs, 0, "no frame left");
	}
	CHECK_EQ(w->st.bind_refused, 2, "refusals");

	{
		struct conn c = tcp_conn(48560, 0);
		uint16_t n = client_hello(hello, "nope.test");

		cookie = bind_handshake(e, &c);
		bind_send(e, &c, cookie, 0, hello, n);
		ph_expect_one(e, 0, 0, &got, "RST to the TLS client");
		seg_read(&got, &o, "RST");
		CHECK_EQ(o.flags, PB_RST, "a RST");
		CHECK_EQ(o.seq, cookie + 1, "where the client expects it");
	}
	CHECK_EQ(w->st.bind_refused, 3, "refusals");
	CHECK_EQ(w->bind_nfree, LB_BIND_CAP, "nothing left");
	ph_env_close(e, 1);
}

/*
 * Every trial of a routed connection refused, with a deferred queue: its
 * SYNs go to the backends of its pool only, and the retry from the queue
 * too.
 */
static void
test_bind_deferred(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, conf_bind);
	const struct lb_worker *w = e->dp.w[0];
	uint16_t len = (uint16_t)strlen(req_api);
	struct conn c = tcp_conn(48570, 0);
	struct lb_dpconf *d;
	struct pb_frame in;
	uint64_t end;
	uint32_t cookie;
	int be, n = 0;

	learn_all(e);
	d = ph_table_next(e);
	d->svc[SVC_TCP].opts.deferq_len = 8;
	d->svc[SVC_TCP].opts.retry_gap_ns = 10000000ull; /* 10 ms */
	d->svc[SVC_TCP].opts.expiry_ns = 10000000000ull;
	ph_table_publish(e, d);
	cookie = bind_handshake(e, &c);
	bind_send(e, &c, cookie, 0, req_api, len);
	while (w->st.deferred == 0) {
		if (++n > 8)
			fail_msg("%d SYNs and not deferred", n);
		be = syn_out(e, &c, "SYN of a trial");
		CHECK_EQ(be == 1 || be == 3, 1, "a backend of pool api");
		backend_rst(&in, &c, BIND_ISS);
		ph_inject(e, 1, 0, &in);
		ph_poll(e, 0);
	}
	ph_expect_quiet(e, "deferred");
	/* The queue's retry starts a flow of its own. */
	end = ph_now_ns(e) + 10000000000ull;
	while (w->st.flows_created < 2 && ph_now_ns(e) < end) {
		usleep(1000);
		ph_poll(e, 0);
	}
	be = syn_out(e, &c, "SYN retried from the queue");
	CHECK_EQ(be == 1 || be == 3, 1, "a backend of pool api again");
	bind_synack(e, &c, 1, &len);
	ph_env_close(e, 1);
}

/* ---- pool schedulers ----------------------------------------------------- */

/* Backends 1 and 3 in pool api (scheduler @p sched), 2 in pool img
 * (rr), 0 the service's own (adaptive); Hosts choose the pools. */
#define CONF_POOL_SCHED(sched)                                               \
	{                                                                    \
		"service set tcp 203.0.113.10:80 synproxy on deferq 0 "      \
		"sched adaptive",                                            \
		"pool add tcp 203.0.113.10:80 api sched " sched,             \
		"pool add tcp 203.0.113.10:80 img sched rr",                 \
		"backend del tcp 203.0.113.10:80 10.1.0.21:8080",            \
		"backend add tcp 203.0.113.10:80 10.1.0.21:8080 pool api",   \
		"backend add tcp 203.0.113.10:80 10.1.0.23:8080 pool api",   \
		"backend del tcp 203.0.113.10:80 10.1.0.22:8080",            \
		"backend add tcp 203.0.113.10:80 10.1.0.22:8080 pool img",   \
		"rule add tcp 203.0.113.10:80 host api.example.com pool api", \
		"rule add tcp 203.0.113.10:80 host img.example.com pool img", \
		NULL,                                                        \
	}

static const char *const conf_pool_rr[] = CONF_POOL_SCHED("rr");
static const char *const conf_pool_maglev[] = CONF_POOL_SCHED("maglev");
static const char *const conf_pool_adaptive[] = CONF_POOL_SCHED("adaptive");

static const char req_img[] = "GET /logo.png HTTP/1.1\r\n"
			      "Host: img.example.com\r\n\r\n";

/* The slot of TCP backend @p i (IP_BE(i)) in the worker's table. */
static uint32_t
be_slot(const struct lb_worker *w, int i)
{
	const struct lb_dpconf_svc *v = &w->conf->svc[SVC_TCP];

	for (uint32_t b = 0; b < v->nb_be; b++)
		if (v->be[b].ip == htonl(IP_BE(i)) &&
		    v->be[b].state != LB_BE_EMPTY)
			return b;
	fail_msg("backend %d not in the table", i);
	return 0;
}

/* Request @p req on a new connection from @p cport, bound by content:
 * the backend its SYN reached, the connection left waiting for it. */
static int
pool_request(struct ph_env *e, struct conn *c, uint16_t cport,
	     const char *req)
{
	uint32_t cookie;

	*c = tcp_conn(cport, 0);
	cookie = bind_handshake(e, c);
	bind_send(e, c, cookie, 0, req, (uint16_t)strlen(req));
	return syn_out(e, c, "SYN to a pool");
}

/* The pool's scheduler state in @p w, checked to be @p name's. */
static const struct lb_pool_sched *
pool_state(const struct lb_worker *w, uint32_t pool, const char *name)
{
	const struct lb_pool_sched *ps = &w->psched[SVC_TCP][pool - 1];

	assert_non_null(ps->st);
	assert_string_equal(ps->ops->name, name);
	return ps;
}

/* A pool with `sched rr` gives its backends the connections in turn. */
static void
test_pool_sched_rr(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, conf_pool_rr);
	uint16_t len = (uint16_t)strlen(req_api);
	int prev = -1, seen[4] = {0, 0, 0, 0};
	struct conn c;

	learn_all(e);
	pool_state(e->dp.w[0], 1, "rr");
	for (uint16_t k = 0; k < 8; k++) {
		int be = pool_request(e, &c, (uint16_t)(48600 + k), req_api);

		CHECK_EQ(be == 1 || be == 3, 1, "a backend of pool api");
		if (prev >= 0)
			CHECK_EQ(be != prev, 1, "the other backend's turn");
		prev = be;
		seen[be]++;
		bind_synack(e, &c, 1, &len);
	}
	CHECK_EQ(seen[1], 4, "backend 1's turns");
	CHECK_EQ(seen[3], 4, "backend 3's turns");
	ph_env_close(e, 1);
}

/* A pool with `sched maglev` sends each client tuple where the pool's
 * Maglev table says, which is the same on every worker and host. */
static void
test_pool_sched_maglev(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, conf_pool_maglev);
	struct lb_worker *w = e->dp.w[0];
	uint16_t len = (uint16_t)strlen(req_api);
	const struct lb_pool_sched *ps;
	struct conn c;

	learn_all(e);
	ps = pool_state(w, 1, "maglev");
	CHECK_EQ(w->pool_todo, 0, "pool tables built before the start");
	for (uint16_t k = 0; k < 16; k++) {
		uint16_t cport = (uint16_t)(48700 + 7 * k);
		struct lb_flow_key key;
		uint32_t want;
		int be;

		lb_flow_key_set(&key, htonl(IP_C), htonl(IP_VIP), htons(cport),
				htons(VPORT), PB_PROTO_TCP);
		assert_int_equal(ps->ops->pick(ps->st,
					       lb_flow_hash(e->dp.hash_seed,
							    &key),
					       &w->rng, &want),
				 0);
		be = pool_request(e, &c, cport, req_api);
		CHECK_EQ(be_slot(w, be), want, "the backend Maglev names");
		bind_synack(e, &c, 1, &len);
	}
	ph_env_close(e, 1);
}

/*
 * A backend of an `adaptive` pool that refuses gets the error in its
 * pool's state (the weight it is picked with), not in the service's; a
 * table that changes only another pool keeps that state, and one that
 * changes this pool carries the errors of the backends that stay.
 */
static void
test_pool_sched_adaptive(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, conf_pool_adaptive);
	struct lb_worker *w = e->dp.w[0];
	uint16_t len = (uint16_t)strlen(req_api);
	const struct lb_pool_sched *api;
	void *api_st, *img_st;
	struct lb_dpconf *d;
	struct pb_frame in;
	uint32_t slot, errs;
	struct conn c;
	int be, be2;

	learn_all(e);
	api = pool_state(w, 1, "adaptive");
	pool_state(w, 2, "rr");
	be = pool_request(e, &c, 48800, req_api);
	slot = be_slot(w, be);
	CHECK_EQ(api->ops->errors(api->st, slot), 0, "no error yet");
	backend_rst(&in, &c, BIND_ISS);
	ph_inject(e, 1, 0, &in);
	ph_poll(e, 0);
	be2 = syn_out(e, &c, "SYN retried");
	CHECK_EQ(be2, be == 1 ? 3 : 1, "the other backend of api");
	bind_synack(e, &c, 1, &len);
	errs = api->ops->errors(api->st, slot);
	if (errs == 0)
		fail_msg("the refusal left no error in the pool's state");
	CHECK_EQ(w->bst[SVC_TCP][slot].sched_errors, errs, "errors shown");
	CHECK_EQ(sched_errors_of(w, SVC_TCP, slot), 0,
		 "nothing in the service's own state");

	/* Another pool's member weighs more: api keeps its state. */
	api_st = api->st;
	img_st = w->psched[SVC_TCP][1].st;
	d = ph_table_next(e);
	d->svc[SVC_TCP].be[be_slot(w, 2)].weight = 7;
	ph_table_publish(e, d);
	CHECK_EQ(w->psched[SVC_TCP][0].st == api_st, 1, "api state kept");
	CHECK_EQ(w->psched[SVC_TCP][1].st != img_st, 1, "img state rebuilt");
	CHECK_EQ(api->ops->errors(api->st, slot), errs, "errors kept");

	/* Its own other member weighs more: rebuilt, the errors carried. */
	d = ph_table_next(e);
	d->svc[SVC_TCP].be[be_slot(w, be2)].weight = 3;
	ph_table_publish(e, d);
	api = pool_state(w, 1, "adaptive");
	CHECK_EQ(api->st != api_st, 1, "api state rebuilt");
	CHECK_EQ(api->ops->errors(api->st, slot), errs, "errors carried");

	/* The img pool's request goes to its one backend. */
	len = (uint16_t)strlen(req_img);
	CHECK_EQ(pool_request(e, &c, 48801, req_img), 2, "img's backend");
	bind_synack(e, &c, 1, &len);
	ph_env_close(e, 1);
}


/* ---- PROXY protocol ------------------------------------------------------ */

static const char *const conf_pp_v1[] = {
	"service set tcp 203.0.113.10:80 proxy-protocol v1",
	NULL,
};

static const char *const conf_pp_v2[] = {
	"service set tcp 203.0.113.10:80 proxy-protocol v2",
	NULL,
};

/*
 * Sends @s from its origin; the worker must forward it with the client's
 * sequence numbers moved on by @n: a client segment's seq up, a backend
 * segment's ack down.
 */
static void
relay_pp(struct ph_env *e, const struct conn *c, const struct seg *s,
	 uint32_t n)
{
	struct pb_frame in, want;
	struct pb_dg d;

	seg_frame(&in, c, s, 0);
	seg_dg(&d, c, s, 1);
	if (s->dir == TO_BE) {
		d.seq += n;
		pb_ipv4_frame(&want, c->bmac, mac_port[1], &d);
	} else {
		d.ack -= n;
		pb_ipv4_frame(&want, c->cmac, mac_port[0], &d);
	}
	ph_inject(e, in_port(s), c->q, &in);
	ph_poll(e, c->q);
	ph_expect_frame(e, (uint16_t)(1 - in_port(s)), c->q, &want, s->what);
}

/* The segment carrying PROXY header @hdr (@n bytes) to the backend of
 * @c, in the client's name: its first byte at @seq. */
static void
pp_hdr_frame(struct pb_frame *f, const struct conn *c, uint32_t seq,
	     uint32_t ack, const uint8_t *hdr, uint16_t n)
{
	struct pb_dg d = {.proto = PB_PROTO_TCP, .ttl = TTL_OWN,
			  .frag = PB_IP_DF, .src = IP_SNAT, .dst = c->bip,
			  .sport = c->sport, .dport = c->bport, .seq = seq,
			  .ack = ack, .flags = PB_ACK | PB_PSH, .win = 64240,
			  .data = hdr, .plen = n};

	pb_ipv4_frame(f, c->bmac, mac_port[1], &d);
}

/*
 * A backend ACK of @c with one SACK block [@l, @r), as the backend sends
 * it (@fwd 0) or as the client must get it (@fwd 1, the numbers given
 * already translated): the options are written as payload, then the
 * data offset and the checksum made to say so.
 */
static void
sack_frame(struct pb_frame *f, const struct conn *c, uint32_t seq,
	   uint32_t ack, uint32_t l, uint32_t r, int fwd)
{
	uint8_t opt[12] = {1, 1, 5, 10};
	const struct seg s = {.what = "backend SACK", .dir = TO_C,
			      .flags = PB_ACK, .seq = seq, .ack = ack};
	uint8_t *ip, *th;
	struct pb_dg d;
	uint32_t sum;

	pb_put32(opt + 4, l);
	pb_put32(opt + 8, r);
	seg_dg(&d, c, &s, fwd);
	d.data = opt;
	d.plen = sizeof(opt);
	pb_ipv4_frame(f, fwd ? c->cmac : mac_port[1], fwd ? mac_port[0] : c->bmac,
		      &d);
	ip = f->b + ETH;
	th = ip + 20;
	th[12] = 8 << 4;
	pb_put16(th + 16, 0);
	sum = pb_sum(ip + 12, 8, PB_PROTO_TCP + 32u);
	pb_put16(th + 16, (uint16_t)~pb_fold(pb_sum(th, 32, sum)));
}

/*
 * The client's ACK that completes the handshake of @c, whose backend
 * gets PROXY header @hdr (@n bytes): the header first, in its own
 * segment at the client's first sequence number (the ACK's headers,
 * forwarded, PSH set), then the ACK moved on by @n.
 */
static void
pp_open(struct ph_env *e, const struct conn *c, uint32_t iss, uint32_t irs,
	const uint8_t *hdr, uint16_t n)
{
	const struct seg ack = {.what = "client ACK", .dir = TO_BE,
				.flags = PB_ACK, .seq = iss + 1,
				.ack = irs + 1};
	struct pb_frame in, got[3], want;
	struct pb_dg d;

	seg_frame(&in, c, &ack, 0);
	ph_inject(e, 0, c->q, &in);
	ph_poll(e, c->q);
	assert_int_equal(ph_take(e, 1, c->q, got, NELEM(got)), 2);
	ph_expect_quiet(e, "after the header and the ACK");
	seg_dg(&d, c, &ack, 1);
	d.flags |= PB_PSH;
	d.data = hdr;
	d.plen = n;
	pb_ipv4_frame(&want, c->bmac, mac_port[1], &d);
	ph_expect_same(&got[0], &want, "PROXY header segment");
	seg_dg(&d, c, &ack, 1);
	d.seq += n;
	pb_ipv4_frame(&want, c->bmac, mac_port[1], &d);
	ph_expect_same(&got[1], &want, "client ACK after the header");
}

/*
 * proxy-protocol v1 across a sequence wrap: the header's line byte for
 * byte, then every segment translated both ways (the client's seq, the
 * backend's ack and SACK), a retransmission as its first copy was.
 */
static void
test_proxy_v1(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, conf_pp_v1);
	const struct lb_worker *w = e->dp.w[0];
	struct conn c = tcp_conn(48200, 0);
	const uint32_t iss = 0xffffffc0u, irs = 0x12345678u;
	static const char line[] =
		"PROXY TCP4 198.51.100.7 203.0.113.10 48200 80\r\n";
	const uint16_t n = sizeof(line) - 1;
	const struct seg synack = {.what = "backend SYN-ACK", .dir = TO_C,
				   .flags = PB_SYN | PB_ACK, .seq = irs,
				   .ack = iss + 1, .mss = 1};
	const struct seg req = {.what = "request", .dir = TO_BE,
				.flags = PB_PSH | PB_ACK, .seq = iss + 1,
				.ack = irs + 1, .plen = 100};
	const struct seg resp = {.what = "response", .dir = TO_C,
				 .flags = PB_PSH | PB_ACK, .seq = irs + 1,
				 .ack = iss + 1 + n + 100, .plen = 300};
	const struct seg again = {.what = "request again", .dir = TO_BE,
				  .flags = PB_PSH | PB_ACK, .seq = iss + 1,
				  .ack = irs + 301, .plen = 100};
	const struct seg more = {.what = "more of the request", .dir = TO_BE,
				 .flags = PB_PSH | PB_ACK, .seq = iss + 101,
				 .ack = irs + 301, .plen = 200};
	const struct seg bnear = {.what = "backend RST in window, not exact",
				  .dir = TO_C, .flags = PB_RST | PB_ACK,
				  .seq = irs + 301 - 200,
				  .ack = iss + 1 + n + 300};
	struct pb_frame in, want;
	struct pb_dg d;

	learn_all(e);
	relay_first(e, &c, seg_syn(iss));
	relay(e, &c, &synack);
	pp_open(e, &c, iss, irs, (const uint8_t *)line, n);
	CHECK_EQ(w->st.pp_sent, 1, "header sent");
	relay_pp(e, &c, &req, n);
	relay_pp(e, &c, &resp, n);
	relay_pp(e, &c, &again, n);
	relay_pp(e, &c, &more, n);
	/* The backend got 0..100 and 200..300 of the client's bytes (after
	 * the header): the client must read them in its own numbers. */
	sack_frame(&in, &c, irs + 301, iss + 1 + n + 100, iss + 1 + n + 200,
		   iss + 1 + n + 300, 0);
	sack_frame(&want, &c, irs + 301, iss + 101, iss + 201, iss + 301, 1);
	ph_inject(e, 1, 0, &in);
	ph_poll(e, 0);
	ph_expect_frame(e, 0, 0, &want, "backend SACK");
	/* A RST in the window but not exact: the challenge ACK goes to the
	 * backend in the client's name, in the backend's numbers. */
	seg_frame(&in, &c, &bnear, 0);
	ph_inject(e, 1, 0, &in);
	ph_poll(e, 0);
	d = (struct pb_dg){.proto = PB_PROTO_TCP, .ttl = TTL_OWN,
			   .frag = PB_IP_DF, .src = IP_SNAT, .dst = c.bip,
			   .sport = c.sport, .dport = c.bport,
			   .seq = iss + 301 + n, .ack = irs + 301,
			   .flags = PB_ACK, .win = 64240};
	pb_ipv4_frame(&want, c.bmac, mac_port[1], &d);
	ph_expect_frame(e, 1, 0, &want, bnear.what);
	CHECK_EQ(w->st.challenge_acks, 1, bnear.what);
	CHECK_EQ(w->st.pp_sent, 1, "header sent once");
	CHECK_EQ(w->st.pp_resent, 0, "header never resent");
	ph_check_no_drops(w, "proxy v1");
}

/*
 * proxy-protocol v2, its header's segment lost: the backend's duplicate
 * ACK of the client's first byte (it got the request after a hole) gets
 * the header again and goes no further; once it acknowledges the header,
 * its acknowledgements reach the client translated.
 */
static void
test_proxy_v2_lost(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, conf_pp_v2);
	const struct lb_worker *w = e->dp.w[0];
	struct conn c = tcp_conn(48201, 0);
	const uint32_t iss = 0x70000000u, irs = 0xfffffff0u;
	static const uint8_t hdr[] = {
		0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49,
		0x54, 0x0a, /* signature */
		0x21,	    /* version 2, PROXY */
		0x11,	    /* AF_INET, STREAM */
		0x00, 0x0c, /* 12 bytes follow */
		198, 51, 100, 7, 203, 0, 113, 10, /* client, VIP */
		0xbc, 0x49, 0x00, 0x50, /* 48201, 80 */
	};
	const uint16_t n = sizeof(hdr);
	const struct seg synack = {.what = "backend SYN-ACK", .dir = TO_C,
				   .flags = PB_SYN | PB_ACK, .seq = irs,
				   .ack = iss + 1, .mss = 1};
	const struct seg req = {.what = "request", .dir = TO_BE,
				.flags = PB_PSH | PB_ACK, .seq = iss + 1,
				.ack = irs + 1, .plen = 100};
	const struct seg dup = {.what = "backend duplicate ACK", .dir = TO_C,
				.flags = PB_ACK, .seq = irs + 1,
				.ack = iss + 1};
	const struct seg resp = {.what = "response", .dir = TO_C,
				 .flags = PB_PSH | PB_ACK, .seq = irs + 1,
				 .ack = iss + 1 + n + 100, .plen = 300};
	struct pb_frame in, want;

	learn_all(e);
	relay_first(e, &c, seg_syn(iss));
	relay(e, &c, &synack);
	pp_open(e, &c, iss, irs, hdr, n);
	/* The backend got neither the ACK nor the header: its SYN-ACK
	 * again gets the header, whose segment completes its handshake. */
	seg_frame(&in, &c, &synack, 0);
	ph_inject(e, 1, 0, &in);
	ph_poll(e, 0);
	pp_hdr_frame(&want, &c, iss + 1, irs + 1, hdr, n);
	ph_expect_frame(e, 1, 0, &want, "header sent for a SYN-ACK again");
	relay_pp(e, &c, &req, n);
	seg_frame(&in, &c, &dup, 0);
	ph_inject(e, 1, 0, &in);
	ph_poll(e, 0);
	pp_hdr_frame(&want, &c, iss + 1, irs + 1, hdr, n);
	ph_expect_frame(e, 1, 0, &want, "header sent again");
	CHECK_EQ(w->st.pp_resent, 2, "header resent");
	relay_pp(e, &c, &resp, n);
	/* Acknowledged: a late duplicate is only translated now. */
	relay_pp(e, &c, &dup, n);
	CHECK_EQ(w->st.pp_sent, 1, "one header");
	CHECK_EQ(w->st.pp_resent, 2, "resent twice");
}

/*
 * A header lost while neither side sends: the timer sends it again,
 * after the first delay and after twice it, until the backend
 * acknowledges it; then never again.
 */
static void
test_proxy_timer(void **state)
{
	struct ph_env *e = ph_env_new(state);
	const struct lb_worker *w;
	struct conn c = tcp_conn(48203, 0);
	const uint32_t iss = 0x1000, irs = 0x2000;
	static const uint8_t hdr[] = {
		0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49,
		0x54, 0x0a, 0x21, 0x11, 0x00, 0x0c, 198, 51, 100, 7, 203, 0,
		113, 10, 0xbc, 0x4b, 0x00, 0x50, /* 48203, 80 */
	};
	const uint16_t n = sizeof(hdr);
	const struct seg synack = {.what = "backend SYN-ACK", .dir = TO_C,
				   .flags = PB_SYN | PB_ACK, .seq = irs,
				   .ack = iss + 1, .mss = 1};
	const struct seg ack = {.what = "backend ACK of the header",
				.dir = TO_C, .flags = PB_ACK, .seq = irs + 1,
				.ack = iss + 1 + n};
	struct pb_frame want, got;
	uint64_t end;

	load_conf(e, conf_pp_v2);
	e->dp.flows = FLOWS;
	e->dp.pp_rto_ns = 20000000ull; /* 20 ms */
	ph_env_start(e, 1);
	w = e->dp.w[0];
	learn_all(e);
	relay_first(e, &c, seg_syn(iss));
	relay(e, &c, &synack);
	pp_open(e, &c, iss, irs, hdr, n);
	pp_hdr_frame(&want, &c, iss + 1, irs + 1, hdr, n);
	for (unsigned int k = 1; k <= 2; k++) {
		end = ph_now_ns(e) + 10000000000ull;
		while (w->st.pp_resent < k && ph_now_ns(e) < end) {
			ph_poll(e, 0);
			usleep(1000);
		}
		CHECK_EQ(w->st.pp_resent, k, "header sent again by the timer");
		ph_expect_one(e, 1, 0, &got, "header again");
		/* Sent without a frame to copy: its TTL is the worker's. */
		ph_expect_same(&got, &want, "header again");
	}
	/* Taken before the poll's housekeeping: the try still due finds
	 * the header acknowledged. */
	relay_pp(e, &c, &ack, n);
	/* Its last try would come 80 ms after the second: wait past it. */
	end = ph_now_ns(e) + 300000000ull;
	while (ph_now_ns(e) < end) {
		ph_poll(e, 0);
		usleep(1000);
	}
	ph_expect_quiet(e, "acknowledged: no more tries");
	CHECK_EQ(w->st.pp_resent, 2, "resent twice");
	CHECK_EQ(w->st.pp_sent, 1, "one header");
}

/* Without the option nothing is inserted: the ACK goes alone. */
static void
test_proxy_off(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, NULL);
	struct conn c = tcp_conn(48202, 0);
	const struct seg req = {.what = "request", .dir = TO_BE,
				.flags = PB_PSH | PB_ACK, .seq = ISS + 1,
				.ack = IRS + 1, .plen = 100};

	learn_all(e);
	open_tcp(e, &c, ISS, IRS);
	relay(e, &c, &req);
	CHECK_EQ(e->dp.w[0]->st.pp_sent, 0, "no header");
	CHECK_EQ(e->dp.w[0]->pp_used, false, "no splicing");
}

static const char *const conf_pp_udp[] = {
	"service set udp 203.0.113.10:53 proxy-protocol v2",
	NULL,
};

/*
 * Datagram @s of @c through a UDP service with proxy-protocol v2: it
 * must reach the backend with @hdr (@n bytes) in front of its payload,
 * lengths and checksums made anew (the builder's, from scratch).
 */
static void
relay_pp_udp(struct ph_env *e, struct conn *c, const struct seg *s,
	     const uint8_t *hdr, uint16_t n)
{
	static struct pb_frame in, got, want;
	uint8_t data[PB_FRAME_MAX];
	struct pb_dg d;

	seg_frame(&in, c, s, 0);
	memcpy(data, hdr, n);
	memcpy(data + n, in.b + ETH + 28, s->plen);
	ph_inject(e, 0, c->q, &in);
	ph_poll(e, c->q);
	ph_expect_one(e, 1, c->q, &got, s->what);
	c->sport = pb_get16(got.b + ETH + 20);
	seg_dg(&d, c, s, 1);
	d.data = data;
	d.plen = (uint16_t)(n + s->plen);
	pb_ipv4_frame(&want, c->bmac, mac_port[1], &d);
	ph_expect_same(&got, &want, s->what);
}

/*
 * proxy-protocol v2 on a UDP service: every datagram of the client,
 * the first (which opens the flow) and the next, with or without a UDP
 * checksum, carries the header (family AF_INET, DGRAM); the backend's
 * answer reaches the client as it was.
 */
static void
test_proxy_udp(void **state)
{
	struct ph_env *e = env_up(state, 1, FLOWS, conf_pp_udp);
	const struct lb_worker *w = e->dp.w[0];
	struct conn u = udp_conn(5001);
	static const uint8_t hdr[] = {
		0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49,
		0x54, 0x0a, 0x21,
		0x12,	    /* AF_INET, DGRAM */
		0x00, 0x0c, 198, 51, 100, 7, 203, 0, 113, 10,
		0x13, 0x89, 0x00, 0x35, /* 5001, 53 */
	};
	const struct seg q1 = {.what = "first query", .dir = TO_BE,
			       .plen = 40, .seq = 1};
	const struct seg q2 = {.what = "query without checksum",
			       .dir = TO_BE, .plen = 333, .seq = 2,
			       .csum0 = 1};
	const struct seg q3 = {.what = "odd-sized query", .dir = TO_BE,
			       .plen = 7, .seq = 3};
	const struct seg ans = {.what = "answer", .dir = TO_C, .plen = 90,
				.seq = 4};

	learn_all(e);
	relay_pp_udp(e, &u, &q1, hdr, sizeof(hdr));
	relay_pp_udp(e, &u, &q2, hdr, sizeof(hdr));
	relay_pp_udp(e, &u, &q3, hdr, sizeof(hdr));
	relay(e, &u, &ans);
	CHECK_EQ(w->st.pp_sent, 3, "a header per datagram");
	ph_check_no_drops(w, "proxy udp");
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_arp_learn, ph_teardown),
		cmocka_unit_test_teardown(test_arp_spoof, ph_teardown),
		cmocka_unit_test_teardown(test_echo, ph_teardown),
		cmocka_unit_test_teardown(test_tcp, ph_teardown),
		cmocka_unit_test_teardown(test_tcp_reuse_counted, ph_teardown),
		cmocka_unit_test_teardown(test_tcp_reuse_drained, ph_teardown),
		cmocka_unit_test_teardown(test_blind_rst, ph_teardown),
		cmocka_unit_test_teardown(test_snat_add_live, ph_teardown),
		cmocka_unit_test_teardown(test_snat_del_drains, ph_teardown),
		cmocka_unit_test_teardown(test_udp, ph_teardown),
		cmocka_unit_test_teardown(test_udp_unreplied, ph_teardown),
		cmocka_unit_test_teardown(test_src_budget, ph_teardown),
		cmocka_unit_test_teardown(test_src_budget_full, ph_teardown),
		cmocka_unit_test_teardown(test_retry, ph_teardown),
		cmocka_unit_test_teardown(test_syn_timeout, ph_teardown),
		cmocka_unit_test_teardown(test_timeout_per_service,
					  ph_teardown),
		cmocka_unit_test_teardown(test_rst_rate, ph_teardown),
		cmocka_unit_test_teardown(test_deferq_no_backend, ph_teardown),
		cmocka_unit_test_teardown(test_deferq_refused, ph_teardown),
		cmocka_unit_test_teardown(test_icmp_frag_needed, ph_teardown),
		cmocka_unit_test_teardown(test_redirect, ph_teardown),
		cmocka_unit_test_teardown(test_icmp_no_flow, ph_teardown),
		cmocka_unit_test_teardown(test_l4_csum, ph_teardown),
		cmocka_unit_test_teardown(test_exception, ph_teardown),
		cmocka_unit_test_teardown(test_table_full, ph_teardown),
		cmocka_unit_test_teardown(test_rx_port, ph_teardown),
		cmocka_unit_test_teardown(test_admit, ph_teardown),
		cmocka_unit_test_teardown(test_ttl, ph_teardown),
		cmocka_unit_test_teardown(test_teardown_parked, ph_teardown),
		cmocka_unit_test_teardown(test_health_recovery, ph_teardown),
		cmocka_unit_test_teardown(test_sched_kept, ph_teardown),
		cmocka_unit_test_teardown(test_pools_default_only, ph_teardown),
		cmocka_unit_test_teardown(test_maglev_build_sliced,
					  ph_teardown),
		cmocka_unit_test_teardown(test_icmp_owner, ph_teardown),
		cmocka_unit_test_teardown(test_vlan_tagged, ph_teardown),
		cmocka_unit_test_teardown(test_snat_port, ph_teardown),
		cmocka_unit_test_teardown(test_snat_reclaim_timed_out,
					  ph_teardown),
		cmocka_unit_test_teardown(test_expiry_backlog, ph_teardown),
		cmocka_unit_test_teardown(test_snat_ports_per_backend,
					  ph_teardown),
		cmocka_unit_test_teardown(test_trailer, ph_teardown),
		cmocka_unit_test_teardown(test_port_unused, ph_teardown),
		cmocka_unit_test_teardown(test_proxy_v1, ph_teardown),
		cmocka_unit_test_teardown(test_proxy_v2_lost, ph_teardown),
		cmocka_unit_test_teardown(test_proxy_timer, ph_teardown),
		cmocka_unit_test_teardown(test_proxy_off, ph_teardown),
		cmocka_unit_test_teardown(test_proxy_udp, ph_teardown),
		cmocka_unit_test_teardown(test_synproxy, ph_teardown),
		cmocka_unit_test_teardown(test_synproxy_trials, ph_teardown),
		cmocka_unit_test_teardown(test_synproxy_auto, ph_teardown),
		cmocka_unit_test_teardown(test_synproxy_auto_at_once,
					  ph_teardown),
		cmocka_unit_test_teardown(test_synproxy_on_then_auto,
					  ph_teardown),
		cmocka_unit_test_teardown(test_bind_host, ph_teardown),
		cmocka_unit_test_teardown(test_bind_syn_again, ph_teardown),
		cmocka_unit_test_teardown(test_bind_split, ph_teardown),
		cmocka_unit_test_teardown(test_bind_sni, ph_teardown),
		cmocka_unit_test_teardown(test_bind_giveup, ph_teardown),
		cmocka_unit_test_teardown(test_bind_rules_gone, ph_teardown),
		cmocka_unit_test_teardown(test_bind_refuse_http, ph_teardown),
		cmocka_unit_test_teardown(test_bind_followed, ph_teardown),
		cmocka_unit_test_teardown(test_bind_rebind_kept, ph_teardown),
		cmocka_unit_test_teardown(test_bind_rebind_close, ph_teardown),
		cmocka_unit_test_teardown(test_bind_deferred, ph_teardown),
		cmocka_unit_test_teardown(test_pool_sched_rr, ph_teardown),
		cmocka_unit_test_teardown(test_pool_sched_maglev, ph_teardown),
		cmocka_unit_test_teardown(test_pool_sched_adaptive,
					  ph_teardown),
	};
	static const struct ph_table *const tables[] = {
		&arp_table,   &base_table, &bad_table,	 &drop_table,
		&spoof_table, &echo_table, &frame_table,
	};
	struct CMUnitTest *all;
	size_t n = 0;
	int rc;

	(void)argc;
	all = ph_tests(tests, NELEM(tests), tables, NELEM(tables), &n);
	if (all == NULL || ph_eal_init(argv[0], "lbpkt", POOL_SIZE) != 0) {
		ph_tests_free(all, n, NELEM(tests));
		return EXIT_FAILURE;
	}
	rc = _cmocka_run_group_tests("packet", all, n, NULL, NULL);
	ph_eal_fini();
	ph_tests_free(all, n, NELEM(tests));
	return rc;
}
