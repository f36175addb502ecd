/* SPDX-License-Identifier: BSD-3-Clause */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "csum.h"
#include "lb/pkt_parse.h"
#include "lb/rng.h"

#define FRAME_MAX 256

struct frame {
	uint8_t b[FRAME_MAX];
	uint32_t len;
	uint32_t ip; /* offset of the IPv4 header */
};

/* Independent reference: RFC 1071 summed byte pair by byte pair. */
static uint16_t
ref_csum(const uint8_t *p, size_t len)
{
	uint32_t s = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
ip_fix_csum(struct frame *f)
{
	uint8_t *ip = f->b + f->ip;
	uint32_t ihl = (ip[0] & 0xf) * 4u;

	put16(ip + 10, 0);
	put16(ip + 10, ref_csum(ip, ihl));
}

/* Ethernet (+ optional 802.1Q) + IPv4 + L4 header of l4_len bytes. */
static void
build(struct frame *f, int vlan, uint8_t proto, uint32_t l4_len)
{
	static const uint8_t mac[12] = { 2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2 };
	uint32_t off = 14;
	uint8_t *ip, *l4;

	memset(f, 0, sizeof(*f));
	memcpy(f->b, mac, 12);
	if (vlan) {
		put16(f->b + 12, LB_ETHER_TYPE_VLAN);
		put16(f->b + 14, 0x2064); /* PCP 1, VID 100 */
		off += 4;
	}
	put16(f->b + off - 2, LB_ETHER_TYPE_IPV4);
	f->ip = off;
	ip = f->b + off;
	ip[0] = 0x45;
	put16(ip + 2, (uint16_t)(20 + l4_len));
	put16(ip + 6, 0x4000); /* DF */
	ip[8] = 64;
	ip[9] = proto;
	memcpy(ip + 12, (uint8_t[]){ 10, 0, 0, 1 }, 4);
	memcpy(ip + 16, (uint8_t[]){ 10, 9, 9, 9 }, 4);
	l4 = ip + 20;
	if (proto == LB_IPPROTO_TCP) {
		put16(l4, 40000);
		put16(l4 + 2, 80);
		l4[12] = 5 << 4;
		l4[13] = LB_TCP_SYN;
	} else if (proto == LB_IPPROTO_UDP) {
		put16(l4, 40000);
		put16(l4 + 2, 53);
		put16(l4 + 4, (uint16_t)l4_len);
	} else if (proto == LB_IPPROTO_ICMP) {
		l4[0] = 8; /* echo request */
		put16(l4 + 4, 0x1234);
	}
	f->len = off + 20 + l4_len;
	ip_fix_csum(f);
}

static void
build_arp(struct frame *f)
{
	memset(f, 0, sizeof(*f));
	put16(f->b + 12, LB_ETHER_TYPE_ARP);
	put16(f->b + 14, 1);
	put16(f->b + 16, LB_ETHER_TYPE_IPV4);
	f->b[18] = 6;
	f->b[19] = 4;
	put16(f->b + 20, 1);
	f->len = 14 + 28;
}

enum base { TCP, TCP_VLAN, UDP, ICMP, ARP };

struct row {
	const char *what;
	enum base base;
	void (*mutate)(struct frame *f);
	enum lb_pkt_verdict want;
};

static void m_none(struct frame *f) { (void)f; }
static void m_cut_l2(struct frame *f) { f->len = 13; }
static void m_cut_vlan(struct frame *f) { f->len = 17; }
static void m_ipv6(struct frame *f) { put16(f->b + 12, 0x86dd); }
static void m_qinq(struct frame *f) { put16(f->b + 16, 0x8100); }
static void m_cut_l3(struct frame *f) { f->len = f->ip + 19; }
static void m_version(struct frame *f) { f->b[f->ip] = 0x65; ip_fix_csum(f); }
static void m_ihl_small(struct frame *f) { f->b[f->ip] = 0x44; }
static void m_ihl_big(struct frame *f) { f->b[f->ip] = 0x4f; }
static void m_totlen_small(struct frame *f)
{
	put16(f->b + f->ip + 2, 19);
	ip_fix_csum(f);
}
static void m_totlen_big(struct frame *f)
{
	put16(f->b + f->ip + 2, (uint16_t)(f->len - f->ip + 1));
	ip_fix_csum(f);
}
static void m_csum(struct frame *f) { f->b[f->ip + 10] ^= 0x40; }
static void m_mf(struct frame *f)
{
	put16(f->b + f->ip + 6, 0x2000);
	ip_fix_csum(f);
}
static void m_fragoff(struct frame *f)
{
	put16(f->b + f->ip + 6, 0x0010);
	ip_fix_csum(f);
}
static void m_frag_cut(struct frame *f)
{
	/* A first fragment whose datagram goes on past the frame. */
	put16(f->b + f->ip + 2, 1500);
	put16(f->b + f->ip + 6, 0x2000);
	ip_fix_csum(f);
}
static void m_frag_bad_csum(struct frame *f)
{
	put16(f->b + f->ip + 6, 0x00b9);
	ip_fix_csum(f);
	f->b[f->ip + 10] ^= 0x40;
}
static void m_src_loopback(struct frame *f)
{
	memcpy(f->b + f->ip + 12, (uint8_t[]){ 127, 0, 0, 1 }, 4);
	ip_fix_csum(f);
}
static void m_src_class_e(struct frame *f)
{
	memcpy(f->b + f->ip + 12, (uint8_t[]){ 240, 0, 0, 1 }, 4);
	ip_fix_csum(f);
}
static void m_src_mcast(struct frame *f)
{
	f->b[f->ip + 12] = 239;
	ip_fix_csum(f);
}
static void m_src_bcast(struct frame *f)
{
	memset(f->b + f->ip + 12, 0xff, 4);
	ip_fix_csum(f);
}
static void m_src_zero(struct frame *f)
{
	memset(f->b + f->ip + 12, 0, 4);
	ip_fix_csum(f);
}
static void m_proto_gre(struct frame *f)
{
	f->b[f->ip + 9] = 47;
	ip_fix_csum(f);
}
static void m_tcp_cut(struct frame *f)
{
	put16(f->b + f->ip + 2, 20 + 19);
	ip_fix_csum(f);
}
static void m_tcp_doff_small(struct frame *f) { f->b[f->ip + 32] = 4 << 4; }
static void m_tcp_doff_big(struct frame *f) { f->b[f->ip + 32] = 6 << 4; }
static void m_tcp_synfin(struct frame *f) { f->b[f->ip + 33] = 0x03; }
static void m_tcp_synrst(struct frame *f) { f->b[f->ip + 33] = 0x06; }
static void m_tcp_null(struct frame *f) { f->b[f->ip + 33] = 0; }
static void m_tcp_dport0(struct frame *f) { put16(f->b + f->ip + 22, 0); }
static void m_udp_len(struct frame *f) { put16(f->b + f->ip + 24, 9); }
static void m_udp_cut(struct frame *f)
{
	put16(f->b + f->ip + 2, 27);
	ip_fix_csum(f);
}
static void m_udp_sport0(struct frame *f) { put16(f->b + f->ip + 20, 0); }
static void m_icmp_cut(struct frame *f)
{
	put16(f->b + f->ip + 2, 27);
	ip_fix_csum(f);
}
static void m_pad(struct frame *f) { f->len += 6; } /* Ethernet padding */
static void m_arp_cut(struct frame *f) { f->len = 14 + 27; }
static void m_arp_hw(struct frame *f) { put16(f->b + 14, 6); }
static void m_arp_op(struct frame *f) { put16(f->b + 20, 3); }

static const struct row rows[] = {
	{ "tcp syn", TCP, m_none, LB_PKT_IPV4 },
	{ "tcp syn in vlan", TCP_VLAN, m_none, LB_PKT_IPV4 },
	{ "udp", UDP, m_none, LB_PKT_IPV4 },
	{ "icmp echo", ICMP, m_none, LB_PKT_IPV4 },
	{ "arp request", ARP, m_none, LB_PKT_ARP },
	{ "padded frame", UDP, m_pad, LB_PKT_IPV4 },
	{ "short l2", TCP, m_cut_l2, LB_PKT_DROP_TRUNC_L2 },
	{ "short vlan tag", TCP_VLAN, m_cut_vlan, LB_PKT_DROP_TRUNC_L2 },
	{ "ipv6", TCP, m_ipv6, LB_PKT_DROP_ETHERTYPE },
	{ "qinq", TCP_VLAN, m_qinq, LB_PKT_DROP_ETHERTYPE },
	{ "short ip", TCP, m_cut_l3, LB_PKT_DROP_TRUNC_L3 },
	{ "ip version 6", TCP, m_version, LB_PKT_DROP_IP_VERSION },
	{ "ihl 4", TCP, m_ihl_small, LB_PKT_DROP_IP_IHL },
	{ "ihl 15 beyond data", UDP, m_ihl_big, LB_PKT_DROP_IP_IHL },
	{ "total length < ihl", TCP, m_totlen_small, LB_PKT_DROP_IP_LEN },
	{ "total length > frame", TCP, m_totlen_big, LB_PKT_DROP_IP_LEN },
	{ "bad ip checksum", TCP, m_csum, LB_PKT_DROP_IP_CSUM },
	{ "more fragments", UDP, m_mf, LB_PKT_DROP_IP_FRAG },
	{ "fragment offset", UDP, m_fragoff, LB_PKT_DROP_IP_FRAG },
	{ "fragment beyond the frame", UDP, m_frag_cut, LB_PKT_DROP_IP_FRAG },
	{ "fragment, bad ip checksum", UDP, m_frag_bad_csum,
	  LB_PKT_DROP_IP_FRAG },
	{ "loopback source", TCP, m_src_loopback, LB_PKT_DROP_IP_ADDR },
	{ "class e source", UDP, m_src_class_e, LB_PKT_DROP_IP_ADDR },
	{ "multicast source", TCP, m_src_mcast, LB_PKT_DROP_IP_ADDR },
	{ "broadcast source", TCP, m_src_bcast, LB_PKT_DROP_IP_ADDR },
	{ "zero source", TCP, m_src_zero, LB_PKT_DROP_IP_ADDR },
	{ "gre", TCP, m_proto_gre, LB_PKT_DROP_IP_PROTO },
	{ "tcp header cut", TCP, m_tcp_cut, LB_PKT_DROP_TCP_TRUNC },
	{ "tcp data offset 4", TCP, m_tcp_doff_small, LB_PKT_DROP_TCP_TRUNC },
	{ "tcp options beyond ip", TCP, m_tcp_doff_big, LB_PKT_DROP_TCP_TRUNC },
	{ "tcp syn+fin", TCP, m_tcp_synfin, LB_PKT_DROP_TCP_FLAGS },
	{ "tcp syn+rst", TCP, m_tcp_synrst, LB_PKT_DROP_TCP_FLAGS },
	{ "tcp null scan", TCP, m_tcp_null, LB_PKT_DROP_TCP_FLAGS },
	{ "tcp port 0", TCP, m_tcp_dport0, LB_PKT_DROP_PORT_ZERO },
	{ "udp length mismatch", UDP, m_udp_len, LB_PKT_DROP_UDP_LEN },
	{ "udp header cut", UDP, m_udp_cut, LB_PKT_DROP_UDP_TRUNC },
	{ "udp port 0", UDP, m_udp_sport0, LB_PKT_DROP_PORT_ZERO },
	{ "icmp header cut", ICMP, m_icmp_cut, LB_PKT_DROP_ICMP_TRUNC },
	{ "arp cut", ARP, m_arp_cut, LB_PKT_DROP_ARP },
	{ "arp not ethernet", ARP, m_arp_hw, LB_PKT_DROP_ARP },
	{ "arp bad op", ARP, m_arp_op, LB_PKT_DROP_ARP },
};

static void
make(struct frame *f, enum base b)
{
	switch (b) {
	case TCP:
		build(f, 0, LB_IPPROTO_TCP, 20);
		break;
	case TCP_VLAN:
		build(f, 1, LB_IPPROTO_TCP, 20);
		break;
	case UDP:
		build(f, 0, LB_IPPROTO_UDP, 8 + 12);
		break;
	case ICMP:
		build(f, 0, LB_IPPROTO_ICMP, 8 + 16);
		break;
	case ARP:
		build_arp(f);
		break;
	}
}

static void
test_verdicts(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct frame f;
		struct lb_pkt pkt;
		enum lb_pkt_verdict v;

		make(&f, rows[i].base);
		rows[i].mutate(&f);
		v = lb_pkt_parse(f.b, f.len, &pkt);
		if (v != rows[i].want)
			fail_msg("%s: got %s, want %s", rows[i].what,
				 lb_pkt_verdict_name(v),
				 lb_pkt_verdict_name(rows[i].want));
	}
}

static void
test_fields(void **state)
{
	struct frame f;
	struct lb_pkt pkt;

	(void)state;
	build(&f, 1, LB_IPPROTO_TCP, 20 + 5);
	f.b[f.ip + 33] = LB_TCP_ACK | LB_TCP_PSH;
	assert_int_equal(lb_pkt_parse(f.b, f.len, &pkt), LB_PKT_IPV4);
	assert_int_equal(pkt.has_vlan, 1);
	assert_int_equal(pkt.vlan_tci, 0x2064);
	assert_int_equal(pkt.l3_off, 18);
	assert_int_equal(pkt.l4_off, 38);
	assert_int_equal(pkt.payload_off, 58);
	assert_int_equal(pkt.payload_len, 5);
	assert_int_equal(pkt.proto, LB_IPPROTO_TCP);
	assert_int_equal(pkt.tcp_flags, LB_TCP_ACK | LB_TCP_PSH);
	assert_int_equal(pkt.ttl, 64);
	{
		static const uint8_t src[4] = { 10, 0, 0, 1 };
		static const uint8_t dst[4] = { 10, 9, 9, 9 };
		static const uint8_t sport[2] = { 0x9c, 0x40 };
		static const uint8_t dport[2] = { 0, 80 };

		assert_memory_equal(&pkt.src, src, 4);
		assert_memory_equal(&pkt.dst, dst, 4);
		assert_memory_equal(&pkt.sport, sport, 2);
		assert_memory_equal(&pkt.dport, dport, 2);
	}

	/* Padding after the datagram is not payload. */
	build(&f, 0, LB_IPPROTO_UDP, 8 + 3);
	f.len += 20;
	assert_int_equal(lb_pkt_parse(f.b, f.len, &pkt), LB_PKT_IPV4);
	assert_int_equal(pkt.payload_len, 3);
}

/* Every prefix of a valid frame is either rejected or, for Ethernet
 * padding cases, parsed within its bounds; never read past len (ASan). */
static void
test_every_truncation(void **state)
{
	(void)state;
	for (int b = TCP; b <= ARP; b++) {
		struct frame f;

		make(&f, (enum base)b);
		for (uint32_t len = 0; len < f.len; len++) {
			/* An exact-size heap copy, so that the sanitizer
			 * build reports any read past len. */
			uint8_t *copy = malloc(len ? len : 1);
			struct lb_pkt pkt;

			assert_non_null(copy);
			memcpy(copy, f.b, len);
			assert_true(lb_pkt_parse(copy, len, &pkt) >=
				    LB_PKT_DROP_FIRST);
			free(copy);
		}
	}
}

/* Random bytes never crash the parser and accepted frames keep their
 * offsets inside the frame. */
static void
test_random_frames(void **state)
{
	struct lb_xoshiro x;
	struct lb_rng r;

	(void)state;
	lb_xoshiro_seed(&x, 7);
	r = lb_rng_xoshiro(&x);
	for (int i = 0; i < 20000; i++) {
		struct frame f;
		struct lb_pkt pkt;
		uint32_t flips = (uint32_t)lb_rng_below(&r, 4);

		make(&f, (enum base)lb_rng_below(&r, 5));
		for (uint32_t k = 0; k <= flips; k++)
			f.b[lb_rng_below(&r, f.len)] ^=
				(uint8_t)(1u << lb_rng_below(&r, 8));
		if (lb_rng_below(&r, 4) == 0)
			f.len = (uint32_t)lb_rng_below(&r, f.len + 1);
		if (lb_pkt_parse(f.b, f.len, &pkt) == LB_PKT_IPV4) {
			assert_true(pkt.payload_off + pkt.payload_len <=
				    f.len);
			assert_true(pkt.l3_off < pkt.l4_off);
			assert_true(pkt.l4_off < pkt.payload_off);
			assert_true(pkt.l3_off + pkt.ip_len <= f.len);
		}
	}
}

static void
test_csum_matches_reference(void **state)
{
	struct lb_xoshiro x;
	struct lb_rng r;
	uint8_t buf[128];

	(void)state;
	lb_xoshiro_seed(&x, 11);
	r = lb_rng_xoshiro(&x);
	for (int i = 0; i < 2000; i++) {
		size_t len = (size_t)lb_rng_below(&r, sizeof(buf) + 1);

		for (size_t k = 0; k < len; k++)
			buf[k] = (uint8_t)lb_rng_u64(&r);
		/* lb_csum sums in memory order: compare byte-swapped. */
		{
			uint16_t got = lb_csum(buf, len);
			uint16_t want = ref_csum(buf, len);
			uint8_t gb[2];

			memcpy(gb, &got, 2);
			assert_int_equal((uint16_t)(gb[0] << 8 | gb[1]), want);
		}
	}
}

/* RFC 1624: incremental updates of an address and of a port-sized field
 * give a header that verifies, exactly as a full recomputation does. */
static void
test_csum_incremental(void **state)
{
	struct lb_xoshiro x;
	struct lb_rng r;

	(void)state;
	lb_xoshiro_seed(&x, 13);
	r = lb_rng_xoshiro(&x);
	for (int i = 0; i < 5000; i++) {
		struct frame f;
		uint8_t *ip;
		uint16_t check, oldw, neww;
		uint32_t olda, newa;
		size_t woff = 2 * (size_t)lb_rng_below(&r, 5); /* 0..8 */

		build(&f, 0, LB_IPPROTO_TCP, 20);
		ip = f.b + f.ip;
		memcpy(&check, ip + 10, 2);

		newa = (uint32_t)lb_rng_u64(&r);
		if (lb_rng_below(&r, 2)) {
			memcpy(&olda, ip + 16, 4);
			memcpy(ip + 16, &newa, 4);
		} else {
			memcpy(&olda, ip + 12, 4);
			memcpy(ip + 12, &newa, 4);
		}
		check = lb_csum_update32(check, olda, newa);

		memcpy(&oldw, ip + woff, 2);
		neww = (uint16_t)lb_rng_u64(&r);
		memcpy(ip + woff, &neww, 2);
		check = lb_csum_update16(check, oldw, neww);
		memcpy(ip + 10, &check, 2);

		assert_int_equal(lb_csum_fold(lb_csum_partial(ip, 20, 0)),
				 0xffff);
		assert_int_equal(ref_csum(ip, 20), 0);
	}
}

/* The L4 checksum over the pseudo-header, by the reference routine. */
static void
l4_fix_csum(struct frame *f)
{
	uint8_t *ip = f->b + f->ip, buf[12 + FRAME_MAX];
	uint32_t l4_len = (uint32_t)(ip[2] << 8 | ip[3]) - 20;
	uint32_t coff = ip[9] == LB_IPPROTO_TCP ? 16 : 6;
	uint16_t c;

	put16(ip + 20 + coff, 0);
	memcpy(buf, ip + 12, 8);
	buf[8] = 0;
	buf[9] = ip[9];
	put16(buf + 10, (uint16_t)l4_len);
	memcpy(buf + 12, ip + 20, l4_len);
	c = ref_csum(buf, 12 + l4_len);
	/* A UDP sum of 0 is sent as 0xffff (RFC 768). */
	if (c == 0 && ip[9] == LB_IPPROTO_UDP)
		c = 0xffff;
	put16(ip + 20 + coff, c);
}

/* Every checksummed bit counts: the pseudo-header's addresses, the
 * header and the payload, odd lengths included; UDP's 0 means none. */
static void
test_l4_csum(void **state)
{
	static const struct {
		uint8_t proto;
		uint32_t l4_len;
	} cases[] = {
		{ LB_IPPROTO_TCP, 20 },     { LB_IPPROTO_TCP, 20 + 7 },
		{ LB_IPPROTO_TCP, 20 + 100 }, { LB_IPPROTO_UDP, 8 },
		{ LB_IPPROTO_UDP, 8 + 13 },   { LB_IPPROTO_UDP, 8 + 64 },
	};
	struct lb_xoshiro x;
	struct lb_rng r;

	(void)state;
	lb_xoshiro_seed(&x, 17);
	r = lb_rng_xoshiro(&x);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct frame f;
		struct lb_pkt pkt;
		uint8_t *ip;
		uint32_t l4_len = cases[i].l4_len;

		build(&f, (int)(i & 1), cases[i].proto, l4_len);
		ip = f.b + f.ip;
		for (uint32_t k = cases[i].proto == LB_IPPROTO_TCP ? 20 : 8;
		     k < l4_len; k++)
			ip[20 + k] = (uint8_t)lb_rng_u64(&r);
		l4_fix_csum(&f);
		assert_int_equal(lb_pkt_parse(f.b, f.len, &pkt), LB_PKT_IPV4);
		assert_true(lb_pkt_l4_csum_ok(f.b, &pkt));
		/* Each bit of the addresses and of the segment. */
		for (uint32_t off = 12; off < 20 + l4_len; off++) {
			for (int bit = 0; bit < 8; bit++) {
				ip[off] ^= (uint8_t)(1u << bit);
				/* The parser took the addresses from here. */
				memcpy(&pkt.src, ip + 12, 4);
				memcpy(&pkt.dst, ip + 16, 4);
				/* A UDP checksum flipped to 0 means "none". */
				if (cases[i].proto == LB_IPPROTO_UDP &&
				    ip[26] == 0 && ip[27] == 0) {
					ip[off] ^= (uint8_t)(1u << bit);
					continue;
				}
				if (lb_pkt_l4_csum_ok(f.b, &pkt))
					fail_msg("case %zu: bit %d of byte %u "
						 "flipped, still verifies",
						 i, bit, off);
				ip[off] ^= (uint8_t)(1u << bit);
			}
		}
		memcpy(&pkt.src, ip + 12, 4);
		memcpy(&pkt.dst, ip + 16, 4);
		if (cases[i].proto == LB_IPPROTO_UDP) {
			put16(ip + 26, 0);
			assert_true(lb_pkt_l4_csum_ok(f.b, &pkt));
		}
	}
}

static void
test_names(void **state)
{
	(void)state;
	for (int v = 0; v < LB_PKT_VERDICT_MAX; v++) {
		assert_non_null(lb_pkt_verdict_name((enum lb_pkt_verdict)v));
		assert_string_not_equal(
			lb_pkt_verdict_name((enum lb_pkt_verdict)v), "unknown");
	}
	assert_string_equal(lb_pkt_verdict_name(LB_PKT_VERDICT_MAX),
			    "unknown");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verdicts),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_every_truncation),
		cmocka_unit_test(test_random_frames),
		cmocka_unit_test(test_csum_matches_reference),
		cmocka_unit_test(test_csum_incremental),
		cmocka_unit_test(test_l4_csum),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
