/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NAT module is checked against frames this file builds on its own:
 * every expected frame comes from the builder below with checksums
 * computed from scratch by a byte-pair reference (never the module's
 * helpers), and every rewritten frame is also verified from scratch.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nat.h"
#include "lb/rng.h"

#define FRAME_MAX 1600
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* The cast of the tests, host order. */
#define IP_C 0xc6336407u      /* client 198.51.100.7 */
#define IP_VIP 0xcb00710au    /* VIP 203.0.113.10 */
#define IP_SNAT 0x0a010002u   /* SNAT 10.1.0.2 */
#define IP_BE 0x0a010014u     /* backend 10.1.0.20 */
#define IP_RTR_BE 0x0a0100feu /* router on the backend side 10.1.0.254 */
#define IP_RTR_C 0xc0000201u  /* router on the client side 192.0.2.1 */
#define PORT_C 40000
#define PORT_VIP 80
#define PORT_SNAT 61001
#define PORT_BE 8080

static const uint8_t mac_gw[6] = {0x02, 0, 0, 0, 0, 0x01};
static const uint8_t mac_lb[6] = {0x02, 0, 0, 0, 0, 0x02};
static const uint8_t mac_be[6] = {0x02, 0, 0, 0, 0, 0x03};
static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

struct frame {
	uint8_t b[FRAME_MAX];
	uint32_t len;
	uint32_t l3; /* offset of the IPv4 or ARP header */
};

/* ---- independent reference checksum (RFC 1071, byte pair by pair) ---- */

static uint32_t
ref_sum(const uint8_t *p, size_t len, uint32_t s)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	return s;
}

static uint16_t
ref_fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

static uint16_t
ref_csum(const uint8_t *p, size_t len)
{
	return (uint16_t)~ref_fold(ref_sum(p, len, 0));
}

static uint32_t
ref_pseudo(uint32_t src, uint32_t dst, uint8_t proto, uint32_t l4len)
{
	return (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) +
	       proto + l4len;
}

/* ---- byte helpers (host order in, network order out) ---- */

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/* The module's convention: network order values as they sit in memory. */
static uint32_t
n32(uint32_t host)
{
	uint8_t b[4];
	uint32_t v;

	put32(b, host);
	memcpy(&v, b, 4);
	return v;
}

static uint16_t
n16(uint16_t host)
{
	uint8_t b[2];
	uint16_t v;

	put16(b, host);
	memcpy(&v, b, 2);
	return v;
}

/* ---- the frame builder ---- */

/* An IPv4 datagram to build; host order. */
struct dg {
	uint8_t proto;
	uint8_t tos;
	uint8_t ttl;
	uint8_t opt_len; /* IP option bytes, a multiple of 4 */
	uint16_t id;
	uint16_t frag; /* flags and fragment offset */
	uint32_t src, dst;
	uint16_t sport, dport;
	uint32_t seq, ack; /* TCP */
	uint8_t flags;
	uint8_t tcp_opt_len; /* a multiple of 4 */
	uint16_t win;
	int no_udp_csum;
	uint8_t type, code;  /* ICMP */
	uint32_t rest;	     /* ICMP bytes 4..7 */
	const uint8_t *data; /* payload, or a pattern from pseed if NULL */
	uint16_t plen;
	uint8_t pseed;
};

static size_t
put_dg(uint8_t *p, const struct dg *d)
{
	uint32_t ihl = 20u + d->opt_len, hl, l4len, tot;
	uint8_t *l4 = p + ihl;
	uint16_t ck;

	memset(p, 0, ihl);
	switch (d->proto) {
	case LB_IPPROTO_TCP:
		hl = 20u + d->tcp_opt_len;
		memset(l4, 0, hl);
		put16(l4, d->sport);
		put16(l4 + 2, d->dport);
		put32(l4 + 4, d->seq);
		put32(l4 + 8, d->ack);
		l4[12] = (uint8_t)(hl / 4 << 4);
		l4[13] = d->flags;
		put16(l4 + 14, d->win);
		if (d->tcp_opt_len) {
			memset(l4 + 20, 1, d->tcp_opt_len); /* NOPs */
			l4[20] = 2;			    /* MSS 1460 */
			l4[21] = 4;
			put16(l4 + 22, 1460);
		}
		break;
	case LB_IPPROTO_UDP:
		hl = 8;
		put16(l4, d->sport);
		put16(l4 + 2, d->dport);
		put16(l4 + 4, (uint16_t)(8 + d->plen));
		put16(l4 + 6, 0);
		break;
	default: /* ICMP */
		hl = 8;
		l4[0] = d->type;
		l4[1] = d->code;
		put16(l4 + 2, 0);
		put32(l4 + 4, d->rest);
		break;
	}
	for (uint32_t i = 0; i < d->plen; i++)
		l4[hl + i] =
			d->data ? d->data[i] : (uint8_t)(d->pseed + i * 37u);
	l4len = hl + d->plen;
	tot = ihl + l4len;

	p[0] = (uint8_t)(0x40 | ihl / 4);
	p[1] = d->tos;
	put16(p + 2, (uint16_t)tot);
	put16(p + 4, d->id);
	put16(p + 6, d->frag);
	p[8] = d->ttl;
	p[9] = d->proto;
	put32(p + 12, d->src);
	put32(p + 16, d->dst);
	if (d->opt_len) {
		memset(p + 20, 1, d->opt_len); /* NOPs after a router alert */
		p[20] = 0x94;
		p[21] = 4;
	}
	put16(p + 10, ref_csum(p, ihl));

	switch (d->proto) {
	case LB_IPPROTO_TCP:
	case LB_IPPROTO_UDP:
		ck = (uint16_t)~ref_fold(
			ref_sum(l4, l4len,
				ref_pseudo(d->src, d->dst, d->proto, l4len)));
		if (d->proto == LB_IPPROTO_UDP) {
			if (d->no_udp_csum)
				ck = 0;
			else if (ck == 0)
				ck = 0xffff;
			put16(l4 + 6, ck);
		} else {
			put16(l4 + 16, ck);
		}
		break;
	default:
		put16(l4 + 2, ref_csum(l4, l4len));
		break;
	}
	return tot;
}

static uint32_t
put_eth(uint8_t *b, int vlan, const uint8_t *dst, const uint8_t *src,
	uint16_t type)
{
	uint32_t off = 14;

	memcpy(b, dst, 6);
	memcpy(b + 6, src, 6);
	if (vlan) {
		put16(b + 12, LB_ETHER_TYPE_VLAN);
		put16(b + 14, 0x2064);
		off += 4;
	}
	put16(b + off - 2, type);
	return off;
}

static void
build(struct frame *f, int vlan, const uint8_t *dst_mac, const uint8_t *src_mac,
      const struct dg *d)
{
	memset(f, 0, sizeof(*f));
	f->l3 = put_eth(f->b, vlan, dst_mac, src_mac, LB_ETHER_TYPE_IPV4);
	f->len = f->l3 + (uint32_t)put_dg(f->b + f->l3, d);
}

/*
 * Fills the lb_pkt of a frame built here, field by field as
 * include/lb/pkt_parse.h documents them. The test links only the NAT
 * module, and its frames are valid by construction.
 */
static void
parse_ok(const struct frame *f, struct lb_pkt *pkt)
{
	const uint8_t *ip, *l4;
	uint32_t ihl, hl;

	memset(pkt, 0, sizeof(*pkt));
	pkt->l3_off = 14;
	if (get16(f->b + 12) == LB_ETHER_TYPE_VLAN) {
		pkt->has_vlan = 1;
		pkt->vlan_tci = get16(f->b + 14);
		pkt->l3_off = 18;
	}
	assert_int_equal(pkt->l3_off, f->l3);
	if (get16(f->b + pkt->l3_off - 2) == LB_ETHER_TYPE_ARP)
		return;
	ip = f->b + pkt->l3_off;
	ihl = (ip[0] & 0xfu) * 4;
	pkt->ip_len = get16(ip + 2);
	pkt->ttl = ip[8];
	pkt->proto = ip[9];
	memcpy(&pkt->src, ip + 12, 4);
	memcpy(&pkt->dst, ip + 16, 4);
	pkt->l4_off = (uint16_t)(pkt->l3_off + ihl);
	l4 = ip + ihl;
	if (pkt->proto == LB_IPPROTO_TCP) {
		hl = (l4[12] >> 4) * 4u;
		pkt->tcp_flags = l4[13] & 0x3f;
		memcpy(&pkt->sport, l4, 2);
		memcpy(&pkt->dport, l4 + 2, 2);
	} else if (pkt->proto == LB_IPPROTO_UDP) {
		hl = 8;
		memcpy(&pkt->sport, l4, 2);
		memcpy(&pkt->dport, l4 + 2, 2);
	} else {
		hl = 8;
		memcpy(&pkt->dport, l4, 2);
		memcpy(&pkt->sport, l4 + 4, 2);
	}
	pkt->payload_off = (uint16_t)(pkt->l4_off + hl);
	pkt->payload_len = (uint16_t)(pkt->ip_len - ihl - hl);
	assert_true(pkt->l3_off + pkt->ip_len <= f->len);
}

/* Checks every checksum of an IPv4 frame from scratch. */
static void
verify_frame(const struct frame *f)
{
	const uint8_t *ip = f->b + f->l3, *l4;
	uint32_t ihl = (ip[0] & 0xfu) * 4, tot = get16(ip + 2), l4len;

	assert_int_equal(ref_csum(ip, ihl), 0);
	l4 = ip + ihl;
	l4len = tot - ihl;
	switch (ip[9]) {
	case LB_IPPROTO_UDP:
		if (get16(l4 + 6) == 0)
			break;
		/* fall through */
	case LB_IPPROTO_TCP:
		assert_int_equal(ref_fold(ref_sum(l4, l4len,
						  ref_pseudo(get32(ip + 12),
							     get32(ip + 16),
							     ip[9], l4len))),
				 0xffff);
		break;
	default:
		assert_int_equal(ref_csum(l4, l4len), 0);
		break;
	}
}

static void
assert_frames_equal(const char *what, const struct frame *got,
		    const struct frame *want)
{
	if (got->len != want->len)
		fail_msg("%s: length %u, want %u", what, got->len, want->len);
	for (uint32_t i = 0; i < want->len; i++)
		if (got->b[i] != want->b[i])
			fail_msg("%s: byte %u is %02x, want %02x", what, i,
				 got->b[i], want->b[i]);
}

static struct dg
flow_dg(uint8_t proto, uint32_t src, uint16_t sport, uint32_t dst,
	uint16_t dport)
{
	struct dg d = {
		.proto = proto,
		.ttl = 64,
		.id = 0x4d2,
		.frag = 0x4000,
		.src = src,
		.dst = dst,
		.sport = sport,
		.dport = dport,
		.seq = 0x01020304,
		.ack = 0xa0b0c0d0,
		.flags = LB_TCP_ACK | LB_TCP_PSH,
		.win = 502,
		.pseed = 3,
	};

	return d;
}

/* ---- lb_nat_rewrite ---- */

enum l4kind { K_TCP, K_UDP, K_UDP_NOCSUM };

static void
rewrite_case(enum l4kind k, int vlan, uint8_t opt, uint16_t plen, int reply,
	     uint8_t tcp_opt, uint8_t pseed)
{
	uint8_t proto = k == K_TCP ? LB_IPPROTO_TCP : LB_IPPROTO_UDP;
	struct dg o, n;
	struct frame f, want;
	struct lb_pkt pkt;
	char what[96];

	if (!reply) {
		o = flow_dg(proto, IP_C, PORT_C, IP_VIP, PORT_VIP);
		n = flow_dg(proto, IP_SNAT, PORT_SNAT, IP_BE, PORT_BE);
	} else {
		o = flow_dg(proto, IP_BE, PORT_BE, IP_SNAT, PORT_SNAT);
		n = flow_dg(proto, IP_VIP, PORT_VIP, IP_C, PORT_C);
	}
	o.opt_len = n.opt_len = opt;
	o.plen = n.plen = plen;
	o.pseed = n.pseed = pseed;
	o.tcp_opt_len = n.tcp_opt_len = tcp_opt;
	o.no_udp_csum = n.no_udp_csum = k == K_UDP_NOCSUM;
	build(&f, vlan, mac_lb, mac_gw, &o);
	build(&want, vlan, mac_lb, mac_gw, &n);
	snprintf(what, sizeof(what), "kind %d vlan %d opt %u plen %u %s", k,
		 vlan, opt, plen, reply ? "reply" : "orig");

	parse_ok(&f, &pkt);
	assert_int_equal(lb_nat_rewrite(f.b, &pkt, n32(n.src), n16(n.sport),
					n32(n.dst), n16(n.dport)),
			 0);
	assert_frames_equal(what, &f, &want);
	verify_frame(&f);
	if (k == K_UDP_NOCSUM)
		assert_int_equal(get16(f.b + f.l3 + 20 + opt + 6), 0);
	assert_true(pkt.src == n32(n.src) && pkt.dst == n32(n.dst));
	assert_true(pkt.sport == n16(n.sport) && pkt.dport == n16(n.dport));
	/* The updated lb_pkt still describes the frame. */
	{
		struct lb_pkt again;

		parse_ok(&f, &again);
		assert_memory_equal(&again, &pkt, sizeof(pkt));
	}
}

static void
test_rewrite_matrix(void **state)
{
	static const uint8_t opts[] = {0, 4, 12, 40};
	static const uint16_t plens[] = {0, 1, 2, 7, 64, 1001};

	(void)state;
	for (int k = K_TCP; k <= K_UDP_NOCSUM; k++)
		for (int vlan = 0; vlan <= 1; vlan++)
			for (size_t o = 0; o < NELEM(opts); o++)
				for (size_t p = 0; p < NELEM(plens); p++)
					for (int r = 0; r <= 1; r++)
						rewrite_case(
							(enum l4kind)k, vlan,
							opts[o], plens[p], r,
							k == K_TCP ? 12 : 0,
							(uint8_t)p);
}

/* Random tuples and payloads: the incremental result is always the
 * checksum a full computation gives. */
static void
test_rewrite_random(void **state)
{
	struct lb_xoshiro x;
	struct lb_rng r;
	static uint8_t data[1200];

	(void)state;
	lb_xoshiro_seed(&x, 2024);
	r = lb_rng_xoshiro(&x);
	for (int i = 0; i < 3000; i++) {
		uint8_t proto =
			lb_rng_below(&r, 2) ? LB_IPPROTO_TCP : LB_IPPROTO_UDP;
		struct dg o = flow_dg(proto, 0, 0, 0, 0), n;
		struct frame f, want;
		struct lb_pkt pkt;

		/* Unicast sources (first octet 1..223), non-zero ports. */
		o.src = (uint32_t)(1 + lb_rng_below(&r, 223)) << 24 |
			(uint32_t)lb_rng_below(&r, 1u << 24);
		o.dst = (uint32_t)lb_rng_u64(&r);
		o.sport = (uint16_t)(1 + lb_rng_below(&r, 65535));
		o.dport = (uint16_t)(1 + lb_rng_below(&r, 65535));
		o.plen = (uint16_t)lb_rng_below(&r, sizeof(data) + 1);
		o.opt_len = (uint8_t)(4 * lb_rng_below(&r, 11));
		o.seq = (uint32_t)lb_rng_u64(&r);
		for (size_t k = 0; k < o.plen; k++)
			data[k] = (uint8_t)lb_rng_u64(&r);
		o.data = data;
		n = o;
		n.src = (uint32_t)(1 + lb_rng_below(&r, 223)) << 24 |
			(uint32_t)lb_rng_below(&r, 1u << 24);
		n.dst = (uint32_t)lb_rng_u64(&r);
		n.sport = (uint16_t)(1 + lb_rng_below(&r, 65535));
		n.dport = (uint16_t)(1 + lb_rng_below(&r, 65535));
		build(&f, (int)lb_rng_below(&r, 2), mac_lb, mac_gw, &o);
		want = f;
		want.len = f.l3 + (uint32_t)put_dg(want.b + f.l3, &n);
		parse_ok(&f, &pkt);
		assert_int_equal(lb_nat_rewrite(f.b, &pkt, n32(n.src),
						n16(n.sport), n32(n.dst),
						n16(n.dport)),
				 0);
		assert_frames_equal("random", &f, &want);
		verify_frame(&f);
	}
}

/*
 * A UDP checksum that computes to zero after the rewrite must be sent as
 * 0xffff (RFC 768). The payload is chosen so that the rewritten datagram
 * sums to exactly 0xffff: adding the datagram's checksum to one of its
 * words does that.
 */
static void
test_rewrite_udp_zero(void **state)
{
	uint8_t data[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
	struct dg o = flow_dg(LB_IPPROTO_UDP, IP_C, PORT_C, IP_VIP, PORT_VIP);
	struct dg n =
		flow_dg(LB_IPPROTO_UDP, IP_SNAT, PORT_SNAT, IP_BE, PORT_BE);
	struct frame f, want;
	struct lb_pkt pkt;
	uint32_t w;
	uint16_t c;

	(void)state;
	o.data = n.data = data;
	o.plen = n.plen = sizeof(data);
	build(&want, 0, mac_lb, mac_gw, &n);
	c = get16(want.b + want.l3 + 26);
	w = (uint32_t)get16(data) + c;
	put16(data, ref_fold(w));
	build(&want, 0, mac_lb, mac_gw, &n);
	assert_int_equal(get16(want.b + want.l3 + 26), 0xffff);

	build(&f, 0, mac_lb, mac_gw, &o);
	assert_int_not_equal(get16(f.b + f.l3 + 26), 0xffff);
	parse_ok(&f, &pkt);
	assert_int_equal(lb_nat_rewrite(f.b, &pkt, n32(IP_SNAT), n16(PORT_SNAT),
					n32(IP_BE), n16(PORT_BE)),
			 0);
	assert_int_equal(get16(f.b + f.l3 + 26), 0xffff);
	assert_frames_equal("udp zero", &f, &want);
	verify_frame(&f);
}

static void
test_rewrite_bad(void **state)
{
	struct dg d = flow_dg(LB_IPPROTO_ICMP, IP_C, 0, IP_VIP, 0);
	struct frame f, copy;
	struct lb_pkt pkt, zero;

	(void)state;
	d.type = LB_ICMP_ECHO_REQUEST;
	build(&f, 0, mac_lb, mac_gw, &d);
	copy = f;
	parse_ok(&f, &pkt);
	assert_int_equal(lb_nat_rewrite(f.b, &pkt, 1, 1, 1, 1),
			 -EPROTONOSUPPORT);
	assert_int_equal(lb_nat_rewrite(NULL, &pkt, 1, 1, 1, 1), -EINVAL);
	assert_int_equal(lb_nat_rewrite(f.b, NULL, 1, 1, 1, 1), -EINVAL);
	memset(&zero, 0, sizeof(zero));
	assert_int_equal(lb_nat_rewrite(f.b, &zero, 1, 1, 1, 1), -EINVAL);
	/* An lb_pkt whose L4 header would overrun its datagram. */
	d = flow_dg(LB_IPPROTO_TCP, IP_C, PORT_C, IP_VIP, PORT_VIP);
	build(&f, 0, mac_lb, mac_gw, &d);
	copy = f;
	parse_ok(&f, &pkt);
	pkt.ip_len = 39;
	assert_int_equal(lb_nat_rewrite(f.b, &pkt, 1, 1, 1, 1), -EINVAL);
	pkt.ip_len = 40;
	pkt.l4_off = (uint16_t)(pkt.l3_off + 19);
	assert_int_equal(lb_nat_rewrite(f.b, &pkt, 1, 1, 1, 1), -EINVAL);
	assert_frames_equal("untouched", &f, &copy);
}

/* ---- TTL ---- */

static void
test_ttl(void **state)
{
	static const struct {
		uint8_t ttl;
		int rc;
	} rows[] = {
		{255, 0}, {64, 0}, {2, 0}, {1, -ETIMEDOUT}, {0, -ETIMEDOUT},
	};

	(void)state;
	for (size_t i = 0; i < NELEM(rows); i++) {
		struct dg d =
			flow_dg(LB_IPPROTO_UDP, IP_C, PORT_C, IP_VIP, PORT_VIP);
		struct frame f, want;
		struct lb_pkt pkt;

		d.ttl = rows[i].ttl;
		d.opt_len = 4;
		build(&f, 1, mac_lb, mac_gw, &d);
		if (rows[i].rc == 0)
			d.ttl--;
		build(&want, 1, mac_lb, mac_gw, &d);
		parse_ok(&f, &pkt);
		assert_int_equal(lb_nat_ttl_dec(f.b, &pkt), rows[i].rc);
		assert_frames_equal("ttl", &f, &want);
		assert_int_equal(pkt.ttl, d.ttl);
		verify_frame(&f);
	}
	assert_int_equal(lb_nat_ttl_dec(NULL, NULL), -EINVAL);
}

static void
test_set_macs(void **state)
{
	struct dg d = flow_dg(LB_IPPROTO_TCP, IP_C, PORT_C, IP_VIP, PORT_VIP);
	struct frame f, want;

	(void)state;
	build(&f, 1, mac_lb, mac_gw, &d);
	build(&want, 1, mac_be, mac_lb, &d);
	assert_int_equal(lb_nat_set_macs(f.b, mac_lb, mac_be), 0);
	assert_frames_equal("macs", &f, &want);
	assert_int_equal(lb_nat_set_macs(f.b, NULL, mac_be), -EINVAL);
	assert_int_equal(lb_nat_set_macs(f.b, mac_lb, NULL), -EINVAL);
	assert_int_equal(lb_nat_set_macs(NULL, mac_lb, mac_be), -EINVAL);
}

/* ---- ICMP errors ---- */

struct icmp_case {
	const char *what;
	int vlan;
	uint8_t outer_opt;
	uint8_t type, code;
	uint16_t mtu;
	uint8_t proto;
	uint8_t inner_opt;
	uint16_t plen;
	int quote;   /* bytes of the datagram quoted, -1 for all of it */
	uint8_t pad; /* zero bytes after the quote */
	int no_udp_csum;
	int reverse; /* a client-side error sent on to the backend */
	int l4csum;  /* expected: quoted L4 checksum present */
};

struct icmp_side {
	uint32_t outer_src, outer_dst;
	struct dg inner;
};

/* Both sides of a case: [0] as it arrives, [1] as it must leave. */
static void
icmp_sides(const struct icmp_case *c, struct icmp_side s[2])
{
	struct dg be_view =
		flow_dg(c->proto, IP_SNAT, PORT_SNAT, IP_BE, PORT_BE);
	struct dg c_view = flow_dg(c->proto, IP_C, PORT_C, IP_VIP, PORT_VIP);
	struct dg lb_to_c = flow_dg(c->proto, IP_VIP, PORT_VIP, IP_C, PORT_C);
	struct dg lb_to_be =
		flow_dg(c->proto, IP_BE, PORT_BE, IP_SNAT, PORT_SNAT);

	if (!c->reverse) {
		s[0] = (struct icmp_side){IP_RTR_BE, IP_SNAT, be_view};
		s[1] = (struct icmp_side){IP_VIP, IP_C, c_view};
	} else {
		s[0] = (struct icmp_side){IP_RTR_C, IP_VIP, lb_to_c};
		s[1] = (struct icmp_side){IP_SNAT, IP_BE, lb_to_be};
	}
	for (int i = 0; i < 2; i++) {
		s[i].inner.ttl = 63;
		s[i].inner.opt_len = c->inner_opt;
		s[i].inner.plen = c->plen;
		s[i].inner.no_udp_csum = c->no_udp_csum;
		s[i].inner.tcp_opt_len = 12;
	}
}

/* An ICMP error frame quoting @inner (possibly edited by @mutate). */
static void
build_icmp(struct frame *f, const struct icmp_case *c,
	   const struct icmp_side *s,
	   void (*mutate)(uint8_t *q, uint32_t *qlen))
{
	uint8_t q[FRAME_MAX];
	uint32_t tot = (uint32_t)put_dg(q, &s->inner), qlen;
	struct dg o =
		flow_dg(LB_IPPROTO_ICMP, s->outer_src, 0, s->outer_dst, 0);

	qlen = c->quote < 0 ? tot : (uint32_t)c->quote;
	memset(q + qlen, 0, c->pad);
	qlen += c->pad;
	if (mutate)
		mutate(q, &qlen);
	o.ttl = 250;
	o.frag = 0;
	o.opt_len = c->outer_opt;
	o.type = c->type;
	o.code = c->code;
	o.rest = c->mtu;
	o.data = q;
	o.plen = (uint16_t)qlen;
	build(f, c->vlan, mac_lb, c->reverse ? mac_gw : mac_be, &o);
}

/*
 * A quote that ends one byte into the TCP checksum keeps that byte as it
 * arrived: half of the old checksum does not give half of the new one.
 * Puts the arriving byte of @orig into @want and recomputes @want's ICMP
 * checksum from scratch.
 */
static void
keep_half_csum(struct frame *want, const struct frame *orig,
	       const struct icmp_case *c)
{
	uint32_t ihl_in = 20u + c->inner_opt;
	uint32_t icmp = want->l3 + 20u + c->outer_opt;
	uint32_t at = icmp + 8 + ihl_in + 16;

	if (c->proto != LB_IPPROTO_TCP || c->quote != (int)(ihl_in + 17))
		return;
	want->b[at] = orig->b[at];
	put16(want->b + icmp + 2, 0);
	put16(want->b + icmp + 2, ref_csum(want->b + icmp, want->len - icmp));
}

static const struct icmp_case icmp_cases[] = {
	{"port unreachable, udp, whole quote", 0, 0, 3, 3, 0, LB_IPPROTO_UDP, 0,
	 21, -1, 0, 0, 0, 1},
	{"port unreachable, udp without checksum", 0, 0, 3, 3, 0,
	 LB_IPPROTO_UDP, 0, 20, -1, 0, 1, 0, 1},
	{"host unreachable, udp, 8 bytes of l4 (RFC 792)", 1, 0, 3, 1, 0,
	 LB_IPPROTO_UDP, 0, 100, 28, 0, 0, 0, 1},
	{"frag needed, tcp, whole quote", 0, 0, 3, 4, 1400, LB_IPPROTO_TCP, 0,
	 1000, -1, 0, 0, 0, 1},
	{"frag needed, tcp, vlan and options, odd quote", 1, 8, 3, 4, 1280,
	 LB_IPPROTO_TCP, 12, 300, 12 + 20 + 32 + 33, 0, 0, 0, 1},
	{"time exceeded, tcp, 8 bytes of l4 (no l4 checksum)", 0, 0, 11, 0, 0,
	 LB_IPPROTO_TCP, 0, 50, 28, 0, 0, 0, 0},
	{"time exceeded, tcp, quote ends inside the checksum", 0, 4, 11, 0, 0,
	 LB_IPPROTO_TCP, 4, 50, 24 + 17, 0, 0, 0, 0},
	{"time exceeded, tcp, quote ends after the checksum", 0, 0, 11, 0, 0,
	 LB_IPPROTO_TCP, 0, 50, 20 + 18, 0, 0, 0, 1},
	{"admin prohibited, udp, padding after the quote", 0, 0, 3, 13, 0,
	 LB_IPPROTO_UDP, 0, 0, -1, 6, 0, 0, 1},
	{"reverse: client-side frag needed to the backend", 0, 0, 3, 4, 1400,
	 LB_IPPROTO_TCP, 0, 1200, 576 - 28, 0, 0, 1, 1},
	{"reverse: client-side port unreachable, vlan", 1, 0, 3, 3, 0,
	 LB_IPPROTO_UDP, 4, 33, -1, 0, 0, 1, 1},
};

static void
test_icmp_translate(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(icmp_cases); i++) {
		const struct icmp_case *c = &icmp_cases[i];
		struct icmp_side s[2];
		struct frame f, want;
		struct lb_pkt pkt;
		struct lb_nat_icmp ie;
		struct lb_nat_tuple nt;
		uint32_t tot;

		icmp_sides(c, s);
		build_icmp(&f, c, &s[0], NULL);
		build_icmp(&want, c, &s[1], NULL);
		keep_half_csum(&want, &f, c);
		parse_ok(&f, &pkt);

		assert_int_equal(lb_nat_icmp_parse(f.b, f.len, &pkt, &ie), 0);
		assert_int_equal(ie.type, c->type);
		assert_int_equal(ie.code, c->code);
		assert_int_equal(ie.mtu, c->mtu);
		assert_int_equal(ie.proto, c->proto);
		if (ie.l4csum != c->l4csum)
			fail_msg("%s: l4csum %u", c->what, ie.l4csum);
		assert_int_equal(ie.inner.src, n32(s[0].inner.src));
		assert_int_equal(ie.inner.dst, n32(s[0].inner.dst));
		assert_int_equal(ie.inner.sport, n16(s[0].inner.sport));
		assert_int_equal(ie.inner.dport, n16(s[0].inner.dport));
		assert_int_equal(ie.inner_l3_off, f.l3 + 20 + c->outer_opt + 8);
		assert_int_equal(ie.inner_l4_off,
				 ie.inner_l3_off + 20 + c->inner_opt);
		tot = 20u + c->inner_opt + c->plen +
		      (c->proto == LB_IPPROTO_TCP ? 32 : 8);
		assert_int_equal(ie.quote_len,
				 c->quote < 0 ? tot : (uint32_t)c->quote);

		nt.src = n32(s[1].inner.src);
		nt.dst = n32(s[1].inner.dst);
		nt.sport = n16(s[1].inner.sport);
		nt.dport = n16(s[1].inner.dport);
		assert_int_equal(lb_nat_icmp_rewrite(f.b, f.len, &pkt,
						     n32(s[1].outer_src),
						     n32(s[1].outer_dst), &nt),
				 0);
		assert_frames_equal(c->what, &f, &want);
		verify_frame(&f);
		assert_int_equal(pkt.src, n32(s[1].outer_src));
		assert_int_equal(pkt.dst, n32(s[1].outer_dst));
	}
}

/*
 * lb_nat_icmp_set_mtu() on each frag-needed case gives the frame built
 * with the new MTU (checksums from scratch); other errors are refused
 * untouched.
 */
static void
test_icmp_set_mtu(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(icmp_cases); i++) {
		struct icmp_case c = icmp_cases[i];
		struct icmp_side s[2];
		struct frame f, want;
		struct lb_pkt pkt;

		icmp_sides(&c, s);
		build_icmp(&f, &c, &s[0], NULL);
		parse_ok(&f, &pkt);
		if (c.type != 3 || c.code != 4) {
			want = f;
			assert_int_equal(lb_nat_icmp_set_mtu(f.b, f.len, &pkt,
							     LB_NAT_MTU_FLOOR),
					 -EINVAL);
			assert_frames_equal(c.what, &f, &want);
			continue;
		}
		c.mtu = LB_NAT_MTU_FLOOR;
		build_icmp(&want, &c, &s[0], NULL);
		assert_int_equal(lb_nat_icmp_set_mtu(f.b, f.len, &pkt,
						     LB_NAT_MTU_FLOOR),
				 0);
		assert_frames_equal(c.what, &f, &want);
		verify_frame(&f);
	}
}

/* Quote shapes that must be rejected, with valid outer checksums. */
static void
q_cut_to_0(uint8_t *q, uint32_t *l)
{
	(void)q;
	*l = 0;
}
static void
q_cut_to_19(uint8_t *q, uint32_t *l)
{
	(void)q;
	*l = 19;
}
static void
q_cut_in_opts(uint8_t *q, uint32_t *l)
{
	(void)q;
	*l = 23;
}
static void
q_cut_l4_7(uint8_t *q, uint32_t *l)
{
	(void)q;
	*l = 24 + 7;
}
static void
q_version6(uint8_t *q, uint32_t *l)
{
	(void)l;
	q[0] = 0x65;
}
static void
q_ihl4(uint8_t *q, uint32_t *l)
{
	(void)l;
	q[0] = 0x44;
}
static void
q_ihl_beyond(uint8_t *q, uint32_t *l)
{
	*l = 40;
	q[0] = 0x4f;
}
static void
q_totlen_small(uint8_t *q, uint32_t *l)
{
	(void)l;
	put16(q + 2, 24 + 7);
}
static void
q_later_fragment(uint8_t *q, uint32_t *l)
{
	(void)l;
	put16(q + 6, 0x2000 | 185);
}
static void
q_icmp(uint8_t *q, uint32_t *l)
{
	(void)l;
	q[9] = 1;
}
static void
q_gre(uint8_t *q, uint32_t *l)
{
	(void)l;
	q[9] = 47;
}

static void
test_icmp_reject(void **state)
{
	static const struct {
		const char *what;
		uint8_t type;
		void (*mutate)(uint8_t *q, uint32_t *qlen);
		int rc;
	} rows[] = {
		{"empty quote", 3, q_cut_to_0, -EINVAL},
		{"quote shorter than an ip header", 3, q_cut_to_19, -EINVAL},
		{"quote cut inside ip options", 3, q_cut_in_opts, -EINVAL},
		{"quote with 7 bytes of l4", 3, q_cut_l4_7, -EINVAL},
		{"quoted version 6", 3, q_version6, -EINVAL},
		{"quoted ihl 4", 3, q_ihl4, -EINVAL},
		{"quoted ihl beyond the quote", 11, q_ihl_beyond, -EINVAL},
		{"quoted total length below l4", 3, q_totlen_small, -EINVAL},
		{"quoted later fragment", 3, q_later_fragment, -EINVAL},
		{"quoted icmp", 3, q_icmp, -EPROTONOSUPPORT},
		{"quoted gre", 11, q_gre, -EPROTONOSUPPORT},
		{"redirect", 5, NULL, -EPROTONOSUPPORT},
		{"parameter problem", 12, NULL, -EPROTONOSUPPORT},
		{"echo request", 8, NULL, -EPROTONOSUPPORT},
	};

	(void)state;
	for (size_t i = 0; i < NELEM(rows); i++) {
		struct icmp_case c = icmp_cases[3];
		struct icmp_side s[2];
		struct frame f, copy;
		struct lb_pkt pkt;
		struct lb_nat_icmp ie;
		struct lb_nat_tuple nt = {1, 2, 3, 4};
		int rc;

		c.inner_opt = 4;
		c.type = rows[i].type;
		icmp_sides(&c, s);
		build_icmp(&f, &c, &s[0], rows[i].mutate);
		copy = f;
		parse_ok(&f, &pkt);
		rc = lb_nat_icmp_parse(f.b, f.len, &pkt, &ie);
		if (rc != rows[i].rc)
			fail_msg("%s: parse %d, want %d", rows[i].what, rc,
				 rows[i].rc);
		rc = lb_nat_icmp_rewrite(f.b, f.len, &pkt, 5, 6, &nt);
		if (rc != rows[i].rc)
			fail_msg("%s: rewrite %d, want %d", rows[i].what, rc,
				 rows[i].rc);
		assert_frames_equal(rows[i].what, &f, &copy);
	}
}

/* Every quote length: rejected below a whole header plus 8 bytes of L4,
 * accepted from there on, with the L4 checksum from 18 bytes of TCP. */
static void
test_icmp_quote_lengths(void **state)
{
	(void)state;
	for (int proto = 0; proto < 2; proto++) {
		struct icmp_case c = icmp_cases[3];
		struct icmp_side s[2];
		uint32_t hdr;

		c.inner_opt = 8;
		c.proto = proto ? LB_IPPROTO_UDP : LB_IPPROTO_TCP;
		c.plen = 40;
		hdr = 20u + c.inner_opt;
		icmp_sides(&c, s);
		for (int q = 0; q <= (int)hdr + 40; q++) {
			struct frame f, want;
			struct lb_pkt pkt;
			struct lb_nat_icmp ie;
			int rc;

			c.quote = q;
			build_icmp(&f, &c, &s[0], NULL);
			build_icmp(&want, &c, &s[1], NULL);
			keep_half_csum(&want, &f, &c);
			parse_ok(&f, &pkt);
			rc = lb_nat_icmp_parse(f.b, f.len, &pkt, &ie);
			if (q < (int)hdr + 8) {
				assert_int_equal(rc, -EINVAL);
				continue;
			}
			assert_int_equal(rc, 0);
			assert_int_equal(ie.l4csum, c.proto == LB_IPPROTO_UDP ||
							    q >= (int)hdr + 18);
			{
				struct lb_nat_tuple nt = {
					n32(s[1].inner.src),
					n32(s[1].inner.dst),
					n16(s[1].inner.sport),
					n16(s[1].inner.dport),
				};

				assert_int_equal(
					lb_nat_icmp_rewrite(f.b, f.len, &pkt,
							    n32(s[1].outer_src),
							    n32(s[1].outer_dst),
							    &nt),
					0);
			}
			assert_frames_equal("quote length", &f, &want);
		}
	}
}

/* Bad ICMP checksum, bad arguments, and every prefix of a valid frame
 * handed over with the lb_pkt of the whole frame (exact-size heap copies,
 * so the sanitizer build reports any read past len). */
static void
test_icmp_bounds(void **state)
{
	const struct icmp_case *c = &icmp_cases[3];
	struct icmp_side s[2];
	struct frame f;
	struct lb_pkt pkt;
	struct lb_nat_icmp ie;
	struct lb_nat_tuple nt = {1, 2, 3, 4};

	(void)state;
	icmp_sides(c, s);
	build_icmp(&f, c, &s[0], NULL);
	parse_ok(&f, &pkt);
	assert_int_equal(lb_nat_icmp_parse(NULL, f.len, &pkt, &ie), -EINVAL);
	assert_int_equal(lb_nat_icmp_parse(f.b, f.len, NULL, &ie), -EINVAL);
	assert_int_equal(lb_nat_icmp_parse(f.b, f.len, &pkt, NULL), -EINVAL);
	assert_int_equal(lb_nat_icmp_rewrite(f.b, f.len, &pkt, 1, 2, NULL),
			 -EINVAL);
	for (uint32_t len = 0; len < f.len; len++) {
		uint8_t *copy = malloc(len ? len : 1);

		assert_non_null(copy);
		memcpy(copy, f.b, len);
		assert_int_equal(lb_nat_icmp_parse(copy, len, &pkt, &ie),
				 -EINVAL);
		assert_int_equal(
			lb_nat_icmp_rewrite(copy, len, &pkt, 1, 2, &nt),
			-EINVAL);
		assert_memory_equal(copy, f.b, len);
		free(copy);
	}
	/* One flipped bit in the quote breaks the ICMP checksum. */
	f.b[f.len - 3] ^= 0x10;
	parse_ok(&f, &pkt);
	assert_int_equal(lb_nat_icmp_parse(f.b, f.len, &pkt, &ie), -EINVAL);
	/* A TCP frame is no ICMP error. */
	{
		struct dg d = flow_dg(LB_IPPROTO_TCP, IP_BE, PORT_BE, IP_SNAT,
				      PORT_SNAT);

		build(&f, 0, mac_lb, mac_be, &d);
		parse_ok(&f, &pkt);
		assert_int_equal(lb_nat_icmp_parse(f.b, f.len, &pkt, &ie),
				 -EINVAL);
	}
}

/*
 * Random damage to the quote, with the ICMP and outer checksums made
 * valid again so the structural checks are what is exercised: whatever is
 * accepted is translated into a message whose checksums verify.
 */
static void
test_icmp_fuzz(void **state)
{
	struct lb_xoshiro x;
	struct lb_rng r;

	(void)state;
	lb_xoshiro_seed(&x, 99);
	r = lb_rng_xoshiro(&x);
	for (int i = 0; i < 20000; i++) {
		const struct icmp_case *c =
			&icmp_cases[lb_rng_below(&r, NELEM(icmp_cases))];
		struct icmp_side s[2];
		struct frame f;
		struct lb_pkt pkt;
		struct lb_nat_icmp ie;
		struct lb_nat_tuple nt = {n32(IP_C), n32(IP_VIP), n16(PORT_C),
					  n16(PORT_VIP)};
		uint8_t *ip, *icmp;
		uint32_t ihl, ilen, flips = 1 + (uint32_t)lb_rng_below(&r, 3);
		int rc;

		icmp_sides(c, s);
		build_icmp(&f, c, &s[0], NULL);
		ip = f.b + f.l3;
		ihl = (ip[0] & 0xfu) * 4;
		icmp = ip + ihl;
		ilen = get16(ip + 2) - ihl;
		for (uint32_t k = 0; k < flips; k++) {
			/* Mostly the quoted IP header. */
			uint32_t at =
				8 + (uint32_t)lb_rng_below(
					    &r, lb_rng_below(&r, 2) ? 20
								    : ilen - 8);
			icmp[at] ^= (uint8_t)(1u << lb_rng_below(&r, 8));
		}
		if (lb_rng_below(&r, 4) == 0) {
			uint32_t cut = (uint32_t)lb_rng_below(&r, ilen - 8);

			put16(ip + 2, (uint16_t)(ihl + 8 + cut));
			put16(ip + 10, 0);
			put16(ip + 10, ref_csum(ip, ihl));
			f.len = f.l3 + ihl + 8 + cut;
			ilen = 8 + cut;
		}
		put16(icmp + 2, 0);
		put16(icmp + 2, ref_csum(icmp, ilen));
		parse_ok(&f, &pkt);
		rc = lb_nat_icmp_parse(f.b, f.len, &pkt, &ie);
		assert_true(rc == 0 || rc == -EINVAL || rc == -EPROTONOSUPPORT);
		if (rc != 0)
			continue;
		assert_true(ie.inner_l4_off + 8u <= f.len);
		assert_true(ie.inner_l3_off + (uint32_t)ie.quote_len <= f.len);
		assert_int_equal(lb_nat_icmp_rewrite(f.b, f.len, &pkt,
						     n32(IP_VIP), n32(IP_C),
						     &nt),
				 0);
		assert_int_equal(ref_csum(ip, ihl), 0);
		assert_int_equal(ref_csum(icmp, ilen), 0);
	}
}

/* ---- ARP ---- */

struct arp_fields {
	uint16_t op;
	const uint8_t *sha, *tha;
	uint32_t spa, tpa;
};

static void
build_arp(struct frame *f, int vlan, const uint8_t *eth_dst,
	  const uint8_t *eth_src, const struct arp_fields *a, uint32_t pad_to)
{
	uint8_t *p;

	memset(f, 0, sizeof(*f));
	f->l3 = put_eth(f->b, vlan, eth_dst, eth_src, LB_ETHER_TYPE_ARP);
	p = f->b + f->l3;
	put16(p, 1);
	put16(p + 2, 0x0800);
	p[4] = 6;
	p[5] = 4;
	put16(p + 6, a->op);
	memcpy(p + 8, a->sha, 6);
	put32(p + 14, a->spa);
	memcpy(p + 18, a->tha, 6);
	put32(p + 24, a->tpa);
	f->len = f->l3 + 28;
	if (f->len < pad_to)
		f->len = pad_to;
}

static void
test_arp_reply(void **state)
{
	static const uint8_t zero[6];
	static const struct {
		const char *what;
		int vlan;
		uint32_t spa, tpa;
		uint32_t pad_to;
	} rows[] = {
		{"who has the vip", 0, IP_RTR_C, IP_VIP, 0},
		{"who has snat, padded, vlan", 1, IP_BE, IP_SNAT, 60},
		{"probe (RFC 5227)", 0, 0, IP_VIP, 60},
	};

	(void)state;
	for (size_t i = 0; i < NELEM(rows); i++) {
		struct arp_fields req = {LB_ARP_REQUEST, mac_gw, zero,
					 rows[i].spa, rows[i].tpa};
		struct arp_fields rep = {LB_ARP_REPLY, mac_lb, mac_gw,
					 rows[i].tpa, rows[i].spa};
		struct frame f, want;
		struct lb_pkt pkt;
		struct lb_nat_arp a;

		build_arp(&f, rows[i].vlan, bcast, mac_gw, &req,
			  rows[i].pad_to);
		build_arp(&want, rows[i].vlan, mac_gw, mac_lb, &rep,
			  rows[i].pad_to);
		parse_ok(&f, &pkt);
		assert_int_equal(lb_nat_arp_parse(f.b, f.len, &pkt, &a), 0);
		assert_int_equal(a.op, LB_ARP_REQUEST);
		assert_memory_equal(a.sha, mac_gw, 6);
		assert_memory_equal(a.tha, zero, 6);
		assert_int_equal(a.spa, n32(rows[i].spa));
		assert_int_equal(a.tpa, n32(rows[i].tpa));
		assert_int_equal(lb_nat_arp_reply(f.b, f.len, &pkt, mac_lb), 0);
		assert_frames_equal(rows[i].what, &f, &want);
		/* The reply is no request: it is not answered again. */
		assert_int_equal(lb_nat_arp_reply(f.b, f.len, &pkt, mac_lb),
				 -EINVAL);
		assert_frames_equal(rows[i].what, &f, &want);
	}
}

static void
test_arp_bad(void **state)
{
	static const uint8_t zero[6];
	static const uint8_t mcast[6] = {0x01, 0, 0x5e, 0, 0, 1};
	struct arp_fields req = {LB_ARP_REQUEST, mac_gw, zero, IP_RTR_C,
				 IP_VIP};
	struct dg d = flow_dg(LB_IPPROTO_TCP, IP_C, PORT_C, IP_VIP, PORT_VIP);
	struct frame f;
	struct lb_pkt pkt;
	struct lb_nat_arp a;

	(void)state;
	build_arp(&f, 0, bcast, mac_gw, &req, 0);
	parse_ok(&f, &pkt);
	assert_int_equal(lb_nat_arp_reply(f.b, f.len, &pkt, NULL), -EINVAL);
	assert_int_equal(lb_nat_arp_reply(f.b, f.len, &pkt, mcast), -EINVAL);
	assert_int_equal(lb_nat_arp_reply(f.b, f.len, &pkt, zero), -EINVAL);
	assert_int_equal(lb_nat_arp_reply(f.b, f.len - 1, &pkt, mac_lb),
			 -EINVAL);
	assert_int_equal(lb_nat_arp_parse(f.b, f.len - 1, &pkt, &a), -EINVAL);
	assert_int_equal(lb_nat_arp_parse(f.b, f.len, &pkt, NULL), -EINVAL);
	assert_int_equal(lb_nat_arp_parse(NULL, f.len, &pkt, &a), -EINVAL);
	/* An IPv4 frame is no ARP. */
	build(&f, 0, mac_lb, mac_gw, &d);
	parse_ok(&f, &pkt);
	assert_int_equal(lb_nat_arp_reply(f.b, f.len, &pkt, mac_lb), -EINVAL);
	assert_int_equal(lb_nat_arp_parse(f.b, f.len, &pkt, &a), -EINVAL);
}

static void
test_arp_build(void **state)
{
	static const uint8_t zero[6];
	struct lb_nat_link plain = {{0x02, 0, 0, 0, 0, 0x02}, 0, 0};
	struct lb_nat_link tagged = {{0x02, 0, 0, 0, 0, 0x02}, 1, 0x2064};
	static const uint8_t mcast[6] = {0x01, 0, 0x5e, 0, 0, 1};
	struct frame want;
	uint8_t buf[128];

	(void)state;
	/* Broadcast who-has, padded to 60 bytes. */
	{
		struct arp_fields a = {LB_ARP_REQUEST, mac_lb, zero, IP_SNAT,
				       IP_BE};

		build_arp(&want, 0, bcast, mac_lb, &a, 60);
		memset(buf, 0xee, sizeof(buf));
		assert_int_equal(lb_nat_arp_request(buf, sizeof(buf), &plain,
						    n32(IP_SNAT), n32(IP_BE),
						    NULL),
				 60);
		assert_memory_equal(buf, want.b, 60);
		assert_int_equal(buf[60], 0xee);
	}
	/* Unicast revalidation in a VLAN. */
	{
		struct arp_fields a = {LB_ARP_REQUEST, mac_lb, zero, IP_SNAT,
				       IP_BE};

		build_arp(&want, 1, mac_be, mac_lb, &a, 60);
		assert_int_equal(lb_nat_arp_request(buf, 60, &tagged,
						    n32(IP_SNAT), n32(IP_BE),
						    mac_be),
				 60);
		assert_memory_equal(buf, want.b, 60);
	}
	/* Gratuitous ARP (announcement). */
	{
		struct arp_fields a = {LB_ARP_REQUEST, mac_lb, zero, IP_VIP,
				       IP_VIP};

		build_arp(&want, 1, bcast, mac_lb, &a, 60);
		assert_int_equal(lb_nat_arp_announce(buf, sizeof(buf), &tagged,
						     n32(IP_VIP)),
				 60);
		assert_memory_equal(buf, want.b, 60);
	}
	assert_int_equal(lb_nat_arp_request(buf, 59, &plain, n32(IP_SNAT),
					    n32(IP_BE), NULL),
			 -ENOSPC);
	assert_int_equal(lb_nat_arp_request(NULL, 60, &plain, n32(IP_SNAT),
					    n32(IP_BE), NULL),
			 -EINVAL);
	assert_int_equal(lb_nat_arp_request(buf, 60, NULL, n32(IP_SNAT),
					    n32(IP_BE), NULL),
			 -EINVAL);
	assert_int_equal(
		lb_nat_arp_request(buf, 60, &plain, n32(IP_SNAT), 0, NULL),
		-EINVAL);
	assert_int_equal(lb_nat_arp_request(buf, 60, &plain, n32(IP_SNAT),
					    n32(0xe0000001u), NULL),
			 -EINVAL);
	assert_int_equal(lb_nat_arp_request(buf, 60, &plain, n32(IP_SNAT),
					    n32(0xffffffffu), NULL),
			 -EINVAL);
	assert_int_equal(lb_nat_arp_request(buf, 60, &plain, n32(IP_SNAT),
					    n32(IP_BE), mcast),
			 -EINVAL);
	memcpy(plain.mac, mcast, 6);
	assert_int_equal(lb_nat_arp_announce(buf, 60, &plain, n32(IP_VIP)),
			 -EINVAL);
}

/* ---- ICMP echo ---- */

static void
test_echo(void **state)
{
	static const struct {
		const char *what;
		int vlan;
		uint8_t opt;
		uint16_t plen;
	} rows[] = {
		{"ping -s 56", 0, 0, 56},
		{"odd payload, vlan", 1, 0, 33},
		{"ip options, no payload", 0, 8, 0},
		{"large odd payload", 0, 4, 1401},
	};

	(void)state;
	for (size_t i = 0; i < NELEM(rows); i++) {
		struct dg q = flow_dg(LB_IPPROTO_ICMP, IP_C, 0, IP_VIP, 0);
		struct dg r;
		struct frame f, want;
		struct lb_pkt pkt;

		q.type = LB_ICMP_ECHO_REQUEST;
		q.rest = 0x1c2b0007; /* identifier 0x1c2b, sequence 7 */
		q.ttl = 57;
		q.tos = 0x10;
		q.opt_len = rows[i].opt;
		q.plen = rows[i].plen;
		r = q;
		r.type = LB_ICMP_ECHO_REPLY;
		r.src = IP_VIP;
		r.dst = IP_C;
		r.ttl = LB_NAT_TTL_DEFAULT;
		build(&f, rows[i].vlan, mac_lb, mac_gw, &q);
		build(&want, rows[i].vlan, mac_gw, mac_lb, &r);
		parse_ok(&f, &pkt);
		assert_int_equal(lb_nat_icmp_echo_reply(f.b, f.len, &pkt), 0);
		assert_frames_equal(rows[i].what, &f, &want);
		verify_frame(&f);
		assert_int_equal(pkt.src, n32(IP_VIP));
		assert_int_equal(pkt.dst, n32(IP_C));
		assert_int_equal(pkt.ttl, LB_NAT_TTL_DEFAULT);
		/* Now a reply: not answered again. */
		assert_int_equal(lb_nat_icmp_echo_reply(f.b, f.len, &pkt),
				 -EINVAL);
	}
}

static void
test_echo_bad(void **state)
{
	struct dg q = flow_dg(LB_IPPROTO_ICMP, IP_C, 0, IP_VIP, 0);
	struct frame f, copy;
	struct lb_pkt pkt;

	(void)state;
	q.type = LB_ICMP_ECHO_REQUEST;
	q.plen = 20;
	build(&f, 0, mac_lb, mac_gw, &q);
	f.b[f.len - 1] ^= 1; /* bad ICMP checksum */
	copy = f;
	parse_ok(&f, &pkt);
	assert_int_equal(lb_nat_icmp_echo_reply(f.b, f.len, &pkt), -EINVAL);
	assert_int_equal(lb_nat_icmp_echo_reply(f.b, f.len - 1, &pkt), -EINVAL);
	assert_frames_equal("bad csum", &f, &copy);
	q.code = 1;
	build(&f, 0, mac_lb, mac_gw, &q);
	parse_ok(&f, &pkt);
	assert_int_equal(lb_nat_icmp_echo_reply(f.b, f.len, &pkt), -EINVAL);
	q = flow_dg(LB_IPPROTO_UDP, IP_C, PORT_C, IP_VIP, PORT_VIP);
	build(&f, 0, mac_lb, mac_gw, &q);
	parse_ok(&f, &pkt);
	assert_int_equal(lb_nat_icmp_echo_reply(f.b, f.len, &pkt), -EINVAL);
	assert_int_equal(lb_nat_icmp_echo_reply(NULL, f.len, &pkt), -EINVAL);
	assert_int_equal(lb_nat_icmp_echo_reply(f.b, f.len, NULL), -EINVAL);
}

/* ---- TCP RST ---- */

static void
test_rst(void **state)
{
	static const struct {
		const char *what;
		int vlan;
		uint8_t opt, tcp_opt;
		uint8_t flags;
		uint32_t seq, ack;
		uint16_t plen;
		uint8_t want_flags;
		uint32_t want_seq, want_ack;
	} rows[] = {
		{"syn", 0, 0, 0, LB_TCP_SYN, 1000, 0, 0,
		 LB_TCP_RST | LB_TCP_ACK, 0, 1001},
		{"syn with options, ip options, vlan", 1, 8, 20, LB_TCP_SYN,
		 0x7fffffff, 0, 0, LB_TCP_RST | LB_TCP_ACK, 0, 0x80000000},
		{"syn at the end of sequence space", 0, 0, 12, LB_TCP_SYN,
		 0xffffffff, 0, 0, LB_TCP_RST | LB_TCP_ACK, 0, 0},
		{"syn with fast-open data", 0, 0, 12, LB_TCP_SYN, 5000, 0, 3,
		 LB_TCP_RST | LB_TCP_ACK, 0, 5004},
		{"fin without ack, with data", 0, 4, 0, LB_TCP_FIN, 10, 0, 7,
		 LB_TCP_RST | LB_TCP_ACK, 0, 18},
		{"ack with data", 0, 0, 0, LB_TCP_ACK | LB_TCP_PSH, 10,
		 0xdeadbeef, 100, LB_TCP_RST, 0xdeadbeef, 0},
	};

	(void)state;
	for (size_t i = 0; i < NELEM(rows); i++) {
		struct dg q =
			flow_dg(LB_IPPROTO_TCP, IP_C, PORT_C, IP_VIP, PORT_VIP);
		struct dg r =
			flow_dg(LB_IPPROTO_TCP, IP_VIP, PORT_VIP, IP_C, PORT_C);
		struct frame f, want;
		struct lb_pkt pkt;
		int rc;

		q.opt_len = rows[i].opt;
		q.tcp_opt_len = rows[i].tcp_opt;
		q.flags = rows[i].flags;
		q.seq = rows[i].seq;
		q.ack = rows[i].ack;
		q.plen = rows[i].plen;
		q.tos = 0x28;
		q.ttl = 50;
		q.id = 777;
		q.win = 64240;
		r.flags = rows[i].want_flags;
		r.seq = rows[i].want_seq;
		r.ack = rows[i].want_ack;
		r.win = 0;
		r.id = 0;
		r.ttl = LB_NAT_TTL_DEFAULT;
		build(&f, rows[i].vlan, mac_lb, mac_gw, &q);
		build(&want, rows[i].vlan, mac_gw, mac_lb, &r);
		parse_ok(&f, &pkt);
		rc = lb_nat_tcp_rst(f.b, f.len, &pkt);
		assert_int_equal(rc, want.len);
		f.len = (uint32_t)rc;
		assert_frames_equal(rows[i].what, &f, &want);
		verify_frame(&f);
		{
			struct lb_pkt again;

			parse_ok(&f, &again);
			assert_memory_equal(&again, &pkt, sizeof(pkt));
		}
		/* A RST is never answered. */
		assert_int_equal(lb_nat_tcp_rst(f.b, f.len, &pkt), -EINVAL);
	}
}

/*
 * lb_nat_tcp_seg(): a client's SYN (VLAN, IP and TCP options, data)
 * becomes the SYN-ACK that answers it, and its ACK the SYN that goes on in
 * its name; each is compared with a frame built from scratch, and parses
 * back to what @p pkt says.
 */
static void
test_tcp_seg(void **state)
{
	static const uint8_t opt[12] = {2, 4, 0x05, 0xb4, 1, 1, 1, 1, 1, 1,
					1, 1};
	const struct {
		const char *what;
		bool reply;
		uint8_t in_flags, out_flags;
	} rows[] = {
		{"SYN-ACK to the client", true, LB_TCP_SYN,
		 LB_TCP_SYN | LB_TCP_ACK},
		{"SYN in the client's name", false, LB_TCP_ACK, LB_TCP_SYN},
	};

	(void)state;
	for (size_t i = 0; i < NELEM(rows); i++) {
		struct dg q =
			flow_dg(LB_IPPROTO_TCP, IP_C, PORT_C, IP_VIP, PORT_VIP);
		struct dg r = rows[i].reply ?
				      flow_dg(LB_IPPROTO_TCP, IP_VIP, PORT_VIP,
					      IP_C, PORT_C) :
				      q;
		struct lb_nat_tcp_hdr h = {
			.seq = 0xfffffff0u,
			.ack = 77,
			.flags = rows[i].out_flags,
			.win = 29200,
			.opt = opt,
			.optlen = sizeof(opt),
		};
		struct frame f, want;
		struct lb_pkt pkt, again;

		q.opt_len = 8;
		q.tcp_opt_len = 20;
		q.flags = rows[i].in_flags;
		q.plen = 9;
		q.ttl = 3;
		r.opt_len = 0;
		r.tcp_opt_len = 12;
		r.flags = h.flags;
		r.seq = h.seq;
		r.ack = h.ack;
		r.win = h.win;
		r.plen = 0;
		r.id = 0;
		r.ttl = LB_NAT_TTL_DEFAULT;
		build(&f, 1, mac_lb, mac_gw, &q);
		if (rows[i].reply)
			build(&want, 1, mac_gw, mac_lb, &r);
		else
			build(&want, 1, mac_lb, mac_gw, &r);
		parse_ok(&f, &pkt);
		assert_int_equal(lb_nat_tcp_seg(f.b, want.len - 1, &pkt,
						rows[i].reply, &h),
				 -ENOSPC);
		assert_int_equal(
			lb_nat_tcp_seg(f.b, sizeof(f.b), &pkt, rows[i].reply, &h),
			want.len);
		f.len = want.len;
		assert_frames_equal(rows[i].what, &f, &want);
		verify_frame(&f);
		parse_ok(&f, &again);
		assert_memory_equal(&again, &pkt, sizeof(pkt));
	}
	{
		struct dg q =
			flow_dg(LB_IPPROTO_UDP, IP_C, PORT_C, IP_VIP, PORT_VIP);
		struct lb_nat_tcp_hdr h = {.opt = opt, .optlen = 3};
		struct frame f;
		struct lb_pkt pkt;

		build(&f, 0, mac_lb, mac_gw, &q);
		parse_ok(&f, &pkt);
		assert_int_equal(lb_nat_tcp_seg(f.b, sizeof(f.b), &pkt, true, &h),
				 -EINVAL);
		q = flow_dg(LB_IPPROTO_TCP, IP_C, PORT_C, IP_VIP, PORT_VIP);
		build(&f, 0, mac_lb, mac_gw, &q);
		parse_ok(&f, &pkt);
		assert_int_equal(lb_nat_tcp_seg(f.b, sizeof(f.b), &pkt, true, &h),
				 -EINVAL);
	}
}

static void
test_rst_bad(void **state)
{
	struct dg q = flow_dg(LB_IPPROTO_UDP, IP_C, PORT_C, IP_VIP, PORT_VIP);
	struct frame f;
	struct lb_pkt pkt;

	(void)state;
	build(&f, 0, mac_lb, mac_gw, &q);
	parse_ok(&f, &pkt);
	assert_int_equal(lb_nat_tcp_rst(f.b, f.len, &pkt), -EPROTONOSUPPORT);
	q = flow_dg(LB_IPPROTO_TCP, IP_C, PORT_C, IP_VIP, PORT_VIP);
	q.flags = LB_TCP_SYN;
	build(&f, 0, mac_lb, mac_gw, &q);
	parse_ok(&f, &pkt);
	assert_int_equal(lb_nat_tcp_rst(f.b, f.len - 1, &pkt), -EINVAL);
	assert_int_equal(lb_nat_tcp_rst(NULL, f.len, &pkt), -EINVAL);
	assert_int_equal(lb_nat_tcp_rst(f.b, f.len, NULL), -EINVAL);
}

/* A segment built from nothing is the same frame the test builder makes
 * (MACs zero), and one byte short of room is refused. */
static void
test_tcp_build(void **state)
{
	static const uint8_t zero[6];
	struct dg r = flow_dg(LB_IPPROTO_TCP, IP_VIP, PORT_VIP, IP_C, PORT_C);
	struct frame f, want;
	int rc;

	(void)state;
	r.flags = LB_TCP_ACK;
	r.seq = 0xfedcba98;
	r.ack = 0x01234567;
	r.win = 0;
	r.id = 0;
	r.ttl = LB_NAT_TTL_DEFAULT;
	build(&want, 0, zero, zero, &r);
	memset(&f, 0, sizeof(f));
	rc = lb_nat_tcp_build(f.b, sizeof(f.b), htonl(IP_VIP), htonl(IP_C),
			      htons(PORT_VIP), htons(PORT_C), r.seq, r.ack,
			      LB_TCP_ACK);
	assert_int_equal(rc, want.len);
	f.len = (uint32_t)rc;
	f.l3 = want.l3;
	assert_frames_equal("bare ACK", &f, &want);
	verify_frame(&f);
	assert_int_equal(lb_nat_tcp_build(f.b, want.len - 1, 1, 2, 3, 4, 5, 6,
					  LB_TCP_ACK),
			 -ENOSPC);
	assert_int_equal(
		lb_nat_tcp_build(NULL, 100, 1, 2, 3, 4, 5, 6, LB_TCP_ACK),
		-EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rewrite_matrix),
		cmocka_unit_test(test_rewrite_random),
		cmocka_unit_test(test_rewrite_udp_zero),
		cmocka_unit_test(test_rewrite_bad),
		cmocka_unit_test(test_ttl),
		cmocka_unit_test(test_set_macs),
		cmocka_unit_test(test_icmp_translate),
		cmocka_unit_test(test_icmp_set_mtu),
		cmocka_unit_test(test_icmp_reject),
		cmocka_unit_test(test_icmp_quote_lengths),
		cmocka_unit_test(test_icmp_bounds),
		cmocka_unit_test(test_icmp_fuzz),
		cmocka_unit_test(test_arp_reply),
		cmocka_unit_test(test_arp_bad),
		cmocka_unit_test(test_arp_build),
		cmocka_unit_test(test_echo),
		cmocka_unit_test(test_echo_bad),
		cmocka_unit_test(test_tcp_build),
		cmocka_unit_test(test_rst),
		cmocka_unit_test(test_rst_bad),
		cmocka_unit_test(test_tcp_seg),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
