/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lb/rng.h"
#include "../parse/ref_csum.h"
#include "nat6.h"

#define HEADROOM 64
#define FRAME_MAX 256

static const uint8_t C6[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 7};
static const uint8_t V6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 0x10};
static const uint8_t S6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0x0a, [15] = 1};
static const uint8_t B6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0x0a, [15] = 0x11};

struct buf {
	uint8_t b[HEADROOM + FRAME_MAX];
	uint32_t off; /* where the frame starts */
	uint32_t len;
};

static uint32_t
be32(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	uint32_t v;
	uint8_t x[4] = {a, b, c, d};

	memcpy(&v, x, 4);
	return v;
}

/*
 * The L4 checksum recomputed from nothing over the frame's own
 * pseudo-header, IPv4 or IPv6 by its ethertype, with the checksum field
 * taken as zero; what a correct incremental update must have written.
 * @p proto is the upper layer's (past any IPv6 extension headers).
 */
static uint16_t
full_l4_csum(const uint8_t *f, uint32_t l3, uint32_t l4, uint32_t end,
	     uint8_t proto)
{
	int v6 = get16(f + l3 - 2) == LB_ETHER_TYPE_IPV6;
	uint32_t co = proto == LB_IPPROTO_TCP ? 16 : 6;
	uint32_t n = end - l4, s;
	uint16_t c;

	s = v6 ? ref_sum(f + l3 + 8, 32, 0) : ref_sum(f + l3 + 12, 8, 0);
	s += (n >> 16) + (n & 0xffff) + proto;
	s = ref_sum(f + l4, co, s);
	s = ref_sum(f + l4 + co + 2, n - co - 2, s);
	c = (uint16_t)~ref_fold(s);
	if (c == 0 && proto == LB_IPPROTO_UDP)
		c = 0xffff;
	return c;
}

/* Ethernet (+802.1Q), IPv6 (with @p n_ext 8-byte destination options
 * headers), TCP or UDP with @p data_len bytes of data, checksummed. */
static void
build6(struct buf *x, int vlan, uint32_t n_ext, uint8_t proto,
       uint32_t data_len)
{
	uint32_t l3 = vlan ? 18 : 14, l4hl = proto == LB_IPPROTO_TCP ? 20 : 8;
	uint8_t *f, *ip, *l4, *nh;
	uint32_t l4off;

	memset(x, 0, sizeof(*x));
	x->off = HEADROOM;
	f = x->b + x->off;
	memcpy(f, "\x02\0\0\0\0\x02\x02\0\0\0\0\x01", 12);
	if (vlan) {
		put16(f + 12, LB_ETHER_TYPE_VLAN);
		put16(f + 14, 0x2064);
	}
	put16(f + l3 - 2, LB_ETHER_TYPE_IPV6);
	ip = f + l3;
	ip[0] = 0x6b; /* traffic class 0xb8: DSCP EF */
	ip[1] = 0x80;
	ip[7] = 57;
	memcpy(ip + 8, C6, 16);
	memcpy(ip + 24, V6, 16);
	nh = ip + 6;
	l4off = l3 + 40;
	for (uint32_t i = 0; i < n_ext; i++) {
		*nh = LB_IPPROTO_DSTOPTS;
		nh = f + l4off;
		f[l4off + 2] = 1;
		f[l4off + 3] = 4;
		l4off += 8;
	}
	*nh = proto;
	l4 = f + l4off;
	put16(l4, 40000);
	put16(l4 + 2, 443);
	if (proto == LB_IPPROTO_TCP) {
		l4[12] = 5 << 4;
		l4[13] = LB_TCP_ACK | LB_TCP_PSH;
	} else {
		put16(l4 + 4, (uint16_t)(8 + data_len));
	}
	for (uint32_t i = 0; i < data_len; i++)
		l4[l4hl + i] = (uint8_t)(i * 13 + 1);
	x->len = l4off + l4hl + data_len;
	put16(ip + 4, (uint16_t)(x->len - l3 - 40));
	put16(l4 + (proto == LB_IPPROTO_TCP ? 16 : 6),
	      full_l4_csum(f, l3, l4off, x->len, proto));
}

static void
put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

/*
 * The RST answering a segment, as RFC 793 builds it: a SYN of 0 bytes
 * (behind two extension headers, tagged) gets RST|ACK acknowledging
 * ISN + 1 from sequence 0; a data segment with ACK gets a bare RST at
 * its acknowledgement number. Either way a 40 + 20 byte packet back to the
 * sender, no extension header, hop limit 64, a checksum that verifies,
 * and a frame the parser takes. A RST and a datagram get none.
 */
static void
test_tcp_rst6(void **state)
{
	static const struct {
		int vlan;
		uint32_t n_ext, data;
		uint8_t flags, want;
		uint32_t want_seq, want_ack;
	} cs[] = {
		{1, 2, 0, LB_TCP_SYN, LB_TCP_RST | LB_TCP_ACK, 0, 1001},
		{0, 0, 7, LB_TCP_ACK | LB_TCP_PSH, LB_TCP_RST, 5000, 0},
	};
	struct lb_pkt6 p;
	struct buf x;

	(void)state;
	for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++) {
		uint32_t l3 = cs[i].vlan ? 18 : 14;
		uint8_t *f, *th;
		int n;

		build6(&x, cs[i].vlan, cs[i].n_ext, LB_IPPROTO_TCP,
		       cs[i].data);
		f = x.b + x.off;
		th = f + l3 + 40 + cs[i].n_ext * 8;
		th[13] = cs[i].flags;
		put32(th + 4, 1000);
		put32(th + 8, 5000);
		put16(th + 16, 0);
		put16(th + 16, full_l4_csum(f, l3, (uint32_t)(th - f), x.len,
					    LB_IPPROTO_TCP));
		assert_int_equal(lb_pkt6_parse(f, x.len, &p), LB_PKT6_OK);
		n = lb_nat6_tcp_rst(f, x.len, &p);
		assert_int_equal(n, l3 + 40 + 20);
		assert_memory_equal(f, "\x02\0\0\0\0\x01\x02\0\0\0\0\x02", 12);
		assert_int_equal(f[l3], 0x60);
		assert_int_equal(get16(f + l3 + 4), 20);
		assert_int_equal(f[l3 + 6], LB_IPPROTO_TCP);
		assert_int_equal(f[l3 + 7], 64);
		assert_memory_equal(f + l3 + 8, V6, 16);
		assert_memory_equal(f + l3 + 24, C6, 16);
		th = f + l3 + 40;
		assert_int_equal(get16(th), 443);
		assert_int_equal(get16(th + 2), 40000);
		assert_int_equal(get32(th + 4), cs[i].want_seq);
		assert_int_equal(get32(th + 8), cs[i].want_ack);
		assert_int_equal(th[12], 5 << 4);
		assert_int_equal(th[13], cs[i].want);
		assert_int_equal(get16(th + 16),
				 full_l4_csum(f, l3, l3 + 40, (uint32_t)n,
					      LB_IPPROTO_TCP));
		assert_int_equal(p.tcp_flags, cs[i].want);
		assert_int_equal(p.l4_off, l3 + 40);
		assert_memory_equal(p.src, V6, 16);
		assert_int_equal(lb_pkt6_parse(f, (uint32_t)n, &p), LB_PKT6_OK);
		assert_true(lb_pkt6_l4_csum_ok(f, &p));
		/* Never a RST for a RST. */
		assert_int_equal(lb_nat6_tcp_rst(f, (uint32_t)n, &p), -EINVAL);
	}
	build6(&x, 0, 0, LB_IPPROTO_UDP, 4);
	assert_int_equal(lb_pkt6_parse(x.b + x.off, x.len, &p), LB_PKT6_OK);
	assert_int_equal(lb_nat6_tcp_rst(x.b + x.off, x.len, &p),
			 -EPROTONOSUPPORT);
}

static void
ip4_fix_csum(uint8_t *ip)
{
	uint32_t ihl = (ip[0] & 0xfu) * 4;

	put16(ip + 10, 0);
	put16(ip + 10, (uint16_t)~ref_fold(ref_sum(ip, ihl, 0)));
}

/* Ethernet, IPv4 with @p opt_len bytes of options, TCP or UDP. */
static void
build4(struct buf *x, uint32_t opt_len, uint8_t proto, uint32_t data_len,
       int udp_nocsum)
{
	uint32_t ihl = 20 + opt_len, l4hl = proto == LB_IPPROTO_TCP ? 20 : 8;
	uint8_t *f, *ip, *l4;

	memset(x, 0, sizeof(*x));
	x->off = HEADROOM;
	f = x->b + x->off;
	put16(f + 12, LB_ETHER_TYPE_IPV4);
	ip = f + 14;
	ip[0] = (uint8_t)(0x40 | ihl / 4);
	ip[1] = 0xb8;
	put16(ip + 6, 0x4000);
	ip[8] = 61;
	ip[9] = proto;
	memcpy(ip + 12, "\x0a\x01\0\x0b", 4);
	memcpy(ip + 16, "\x0a\x01\0\x01", 4);
	for (uint32_t i = 0; i < opt_len; i++)
		ip[20 + i] = 1; /* NOP */
	l4 = ip + ihl;
	put16(l4, 8080);
	put16(l4 + 2, 1025);
	if (proto == LB_IPPROTO_TCP) {
		l4[12] = 5 << 4;
		l4[13] = LB_TCP_SYN | LB_TCP_ACK;
	} else {
		put16(l4 + 4, (uint16_t)(8 + data_len));
	}
	for (uint32_t i = 0; i < data_len; i++)
		l4[l4hl + i] = (uint8_t)(i * 5 + 3);
	x->len = 14 + ihl + l4hl + data_len;
	put16(ip + 2, (uint16_t)(x->len - 14));
	ip4_fix_csum(ip);
	if (!udp_nocsum)
		put16(l4 + (proto == LB_IPPROTO_TCP ? 16 : 6),
		      full_l4_csum(f, 14, 14 + ihl, x->len, proto));
}

static uint8_t *
fr(struct buf *x)
{
	return x->b + x->off;
}

/* The frame's L4 checksum field equals a full recomputation. */
static void
assert_l4_csum6(struct buf *x, const struct lb_pkt6 *p)
{
	uint8_t *f = fr(x);
	uint32_t end = p->l3_off + 40u + p->ip_plen;
	uint32_t co = p->proto == LB_IPPROTO_TCP ? 16 : 6;

	assert_int_equal(get16(f + p->l4_off + co),
			 full_l4_csum(f, p->l3_off, p->l4_off, end, p->proto));
	assert_true(lb_pkt6_l4_csum_ok(f, p));
}

static void
test_rewrite66(void **state)
{
	static const struct {
		int vlan;
		uint32_t n_ext;
		uint8_t proto;
		uint32_t data;
	} rows[] = {
		{0, 0, LB_IPPROTO_TCP, 0},   {1, 0, LB_IPPROTO_TCP, 7},
		{0, 2, LB_IPPROTO_TCP, 100}, {0, 0, LB_IPPROTO_UDP, 12},
		{1, 1, LB_IPPROTO_UDP, 3},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct buf x;
		struct lb_pkt6 p, re;
		uint8_t before[FRAME_MAX];

		build6(&x, rows[i].vlan, rows[i].n_ext, rows[i].proto,
		       rows[i].data);
		assert_int_equal(lb_pkt6_parse(fr(&x), x.len, &p), LB_PKT6_OK);
		memcpy(before, fr(&x), x.len);
		assert_int_equal(lb_nat6_rewrite(fr(&x), &p, S6, htons(1025),
						 B6, htons(8080)),
				 0);
		assert_int_equal(lb_pkt6_parse(fr(&x), x.len, &re), LB_PKT6_OK);
		assert_memory_equal(re.src, S6, 16);
		assert_memory_equal(re.dst, B6, 16);
		assert_int_equal(re.sport, htons(1025));
		assert_int_equal(re.dport, htons(8080));
		assert_memory_equal(&p, &re, sizeof(p));
		assert_l4_csum6(&x, &re);
		/* Nothing but addresses, ports and the checksum moved. */
		assert_memory_equal(fr(&x), before, p.l3_off + 8u);
		assert_memory_equal(fr(&x) + p.l3_off + 40,
				    before + p.l3_off + 40,
				    p.l4_off - p.l3_off - 40u);
		assert_memory_equal(fr(&x) + p.l4_off + 4,
				    before + p.l4_off + 4, 2);
	}
}

/* Random tuples, each rewrite checked against a full recomputation. */
static void
test_rewrite66_random(void **state)
{
	struct lb_xoshiro xs;
	struct lb_rng r;

	(void)state;
	lb_xoshiro_seed(&xs, 41);
	r = lb_rng_xoshiro(&xs);
	for (int i = 0; i < 3000; i++) {
		struct buf x;
		struct lb_pkt6 p;
		uint8_t s[16], d[16];
		uint8_t proto =
			lb_rng_below(&r, 2) ? LB_IPPROTO_TCP : LB_IPPROTO_UDP;

		build6(&x, (int)lb_rng_below(&r, 2),
		       (uint32_t)lb_rng_below(&r, 3), proto,
		       (uint32_t)lb_rng_below(&r, 60));
		assert_int_equal(lb_pkt6_parse(fr(&x), x.len, &p), LB_PKT6_OK);
		for (int k = 0; k < 16; k++) {
			s[k] = (uint8_t)lb_rng_u64(&r);
			d[k] = (uint8_t)lb_rng_u64(&r);
		}
		s[0] = 0x20;
		d[0] = 0x20;
		assert_int_equal(
			lb_nat6_rewrite(fr(&x), &p, s,
					(uint16_t)(lb_rng_u64(&r) | 1), d,
					(uint16_t)(lb_rng_u64(&r) | 1)),
			0);
		assert_l4_csum6(&x, &p);
	}
}

static void
test_rewrite66_refused(void **state)
{
	struct buf x;
	struct lb_pkt6 p, zero;
	uint8_t before[FRAME_MAX];

	(void)state;
	memset(&zero, 0, sizeof(zero));
	build6(&x, 0, 0, LB_IPPROTO_TCP, 0);
	assert_int_equal(lb_pkt6_parse(fr(&x), x.len, &p), LB_PKT6_OK);
	memcpy(before, fr(&x), x.len);
	assert_int_equal(lb_nat6_rewrite(NULL, &p, S6, 1, B6, 1), -EINVAL);
	assert_int_equal(lb_nat6_rewrite(fr(&x), &p, NULL, 1, B6, 1), -EINVAL);
	assert_int_equal(lb_nat6_rewrite(fr(&x), &zero, S6, 1, B6, 1), -EINVAL);
	p.flags |= LB_PKT6_F_FRAG;
	assert_int_equal(lb_nat6_rewrite(fr(&x), &p, S6, 1, B6, 1),
			 -EPROTONOSUPPORT);
	p.flags = 0;
	p.proto = LB_IPPROTO_ICMPV6;
	assert_int_equal(lb_nat6_rewrite(fr(&x), &p, S6, 1, B6, 1),
			 -EPROTONOSUPPORT);
	assert_memory_equal(fr(&x), before, x.len);
}

static void
test_hop_dec(void **state)
{
	struct buf x;
	struct lb_pkt6 p;
	uint8_t before[FRAME_MAX];

	(void)state;
	build6(&x, 0, 0, LB_IPPROTO_UDP, 4);
	assert_int_equal(lb_pkt6_parse(fr(&x), x.len, &p), LB_PKT6_OK);
	assert_int_equal(lb_nat6_hop_dec(fr(&x), &p), 0);
	assert_int_equal(p.hop_limit, 56);
	assert_int_equal(fr(&x)[14 + 7], 56);
	/* No header checksum, and the hop limit is not in the L4's. */
	assert_l4_csum6(&x, &p);
	for (uint8_t h = 0; h <= 1; h++) {
		fr(&x)[14 + 7] = h;
		assert_int_equal(lb_pkt6_parse(fr(&x), x.len, &p), LB_PKT6_OK);
		memcpy(before, fr(&x), x.len);
		assert_int_equal(lb_nat6_hop_dec(fr(&x), &p), -ETIMEDOUT);
		assert_memory_equal(fr(&x), before, x.len);
	}
	fr(&x)[14 + 7] = 2;
	assert_int_equal(lb_pkt6_parse(fr(&x), x.len, &p), LB_PKT6_OK);
	assert_int_equal(lb_nat6_hop_dec(fr(&x), &p), 0);
	assert_int_equal(p.hop_limit, 1);
	assert_int_equal(lb_nat6_hop_dec(NULL, &p), -EINVAL);
}

static void
test_xlate64(void **state)
{
	static const struct {
		int vlan;
		uint32_t n_ext;
		uint8_t proto;
		uint32_t data;
	} rows[] = {
		{0, 0, LB_IPPROTO_TCP, 0},  {1, 0, LB_IPPROTO_TCP, 9},
		{0, 3, LB_IPPROTO_TCP, 40}, {0, 0, LB_IPPROTO_UDP, 11},
		{1, 2, LB_IPPROTO_UDP, 0},
	};
	const uint32_t s4 = be32(10, 1, 0, 1), b4 = be32(10, 1, 0, 11);

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct buf x;
		struct lb_pkt6 p;
		struct lb_pkt out, re;
		uint8_t data[FRAME_MAX];
		uint32_t seg;
		uint8_t *f, *ip;
		int no;

		build6(&x, rows[i].vlan, rows[i].n_ext, rows[i].proto,
		       rows[i].data);
		assert_int_equal(lb_pkt6_parse(fr(&x), x.len, &p), LB_PKT6_OK);
		memcpy(data, fr(&x) + p.payload_off, p.payload_len);
		seg = p.l3_off + 40u + p.ip_plen - p.l4_off;
		no = lb_nat64_xlate(x.b, x.off, x.len, &p, s4, htons(1025), b4,
				    htons(8080), &out);
		assert_int_equal(no, HEADROOM + (p.l4_off - p.l3_off - 20));
		f = x.b + no;
		assert_int_equal(out.l3_off + out.ip_len,
				 x.len - (no - HEADROOM));
		assert_int_equal(lb_pkt_parse(f, out.l3_off + out.ip_len, &re),
				 LB_PKT_IPV4);
		assert_memory_equal(&re, &out, sizeof(re));
		assert_int_equal(re.src, s4);
		assert_int_equal(re.dst, b4);
		assert_int_equal(re.sport, htons(1025));
		assert_int_equal(re.dport, htons(8080));
		assert_int_equal(re.ip_len, 20 + seg);
		assert_int_equal(re.has_vlan, rows[i].vlan);
		assert_memory_equal(f, "\x02\0\0\0\0\x02\x02\0\0\0\0\x01", 12);
		ip = f + re.l3_off;
		assert_int_equal(ip[1], 0xb8); /* traffic class */
		assert_int_equal(ip[8], 57);   /* hop limit */
		assert_int_equal(get16(ip + 6), 0x4000);
		assert_int_equal(get16(ip + 4), 0);
		assert_true(lb_pkt_l4_csum_ok(f, &re));
		assert_int_equal(get16(f + re.l4_off +
				       (re.proto == LB_IPPROTO_TCP ? 16 : 6)),
				 full_l4_csum(f, re.l3_off, re.l4_off,
					      re.l3_off + re.ip_len, re.proto));
		assert_memory_equal(f + re.payload_off, data, re.payload_len);
	}
}

static void
test_xlate64_refused(void **state)
{
	struct buf x;
	struct lb_pkt6 p;
	struct lb_pkt out;
	uint8_t before[sizeof(x.b)];

	(void)state;
	build6(&x, 0, 0, LB_IPPROTO_TCP, 10);
	assert_int_equal(lb_pkt6_parse(fr(&x), x.len, &p), LB_PKT6_OK);
	memcpy(before, x.b, sizeof(x.b));
	assert_int_equal(
		lb_nat64_xlate(x.b, x.off, x.len - 1, &p, 1, 1, 2, 2, &out),
		-EINVAL);
	assert_int_equal(
		lb_nat64_xlate(x.b, x.off, x.len, &p, 1, 1, 2, 2, NULL),
		-EINVAL);
	p.flags = LB_PKT6_F_FRAG;
	assert_int_equal(
		lb_nat64_xlate(x.b, x.off, x.len, &p, 1, 1, 2, 2, &out),
		-EPROTONOSUPPORT);
	p.flags = 0;
	p.proto = LB_IPPROTO_ICMPV6;
	assert_int_equal(
		lb_nat64_xlate(x.b, x.off, x.len, &p, 1, 1, 2, 2, &out),
		-EPROTONOSUPPORT);
	assert_memory_equal(x.b, before, sizeof(x.b));
}

static void
test_xlate46(void **state)
{
	static const struct {
		uint32_t opt;
		uint8_t proto;
		uint32_t data;
		int nocsum;
	} rows[] = {
		{0, LB_IPPROTO_TCP, 0, 0},  {0, LB_IPPROTO_TCP, 33, 0},
		{8, LB_IPPROTO_TCP, 5, 0},  {40, LB_IPPROTO_TCP, 5, 0},
		{0, LB_IPPROTO_UDP, 10, 0}, {0, LB_IPPROTO_UDP, 9, 1},
		{4, LB_IPPROTO_UDP, 0, 1},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct buf x;
		struct lb_pkt p;
		struct lb_pkt6 out, re;
		uint8_t data[FRAME_MAX];
		uint8_t *f, *ip;
		int no;

		build4(&x, rows[i].opt, rows[i].proto, rows[i].data,
		       rows[i].nocsum);
		assert_int_equal(lb_pkt_parse(fr(&x), x.len, &p), LB_PKT_IPV4);
		memcpy(data, fr(&x) + p.payload_off, p.payload_len);
		no = lb_nat46_xlate(x.b, x.off, x.len, &p, V6, htons(443), C6,
				    htons(40000), &out);
		assert_int_equal(no, HEADROOM - (40 - (20 + (int)rows[i].opt)));
		f = x.b + no;
		assert_int_equal(
			lb_pkt6_parse(f, out.l3_off + 40u + out.ip_plen, &re),
			LB_PKT6_OK);
		assert_memory_equal(&re, &out, sizeof(re));
		assert_memory_equal(re.src, V6, 16);
		assert_memory_equal(re.dst, C6, 16);
		assert_int_equal(re.sport, htons(443));
		assert_int_equal(re.dport, htons(40000));
		assert_int_equal(re.hop_limit, 61);
		ip = f + re.l3_off;
		assert_int_equal(ip[0], 0x6b);
		assert_int_equal(ip[1], 0x80);
		x.off = (uint32_t)no; /* assert_l4_csum6 reads from x.off */
		assert_l4_csum6(&x, &re);
		assert_memory_equal(f + re.payload_off, data, re.payload_len);
	}
}

static void
test_xlate46_refused(void **state)
{
	struct buf x;
	struct lb_pkt p;
	struct lb_pkt6 out;
	uint8_t before[sizeof(x.b)];
	uint8_t *ip;

	(void)state;
	build4(&x, 0, LB_IPPROTO_TCP, 4, 0);
	assert_int_equal(lb_pkt_parse(fr(&x), x.len, &p), LB_PKT_IPV4);
	memcpy(before, x.b, sizeof(x.b));
	assert_int_equal(lb_nat46_xlate(x.b, 19, x.len, &p, V6, 1, C6, 1, &out),
			 -ENOSPC);
	assert_int_equal(
		lb_nat46_xlate(x.b, x.off, x.len - 1, &p, V6, 1, C6, 1, &out),
		-EINVAL);
	p.proto = LB_IPPROTO_ICMP;
	assert_int_equal(
		lb_nat46_xlate(x.b, x.off, x.len, &p, V6, 1, C6, 1, &out),
		-EPROTONOSUPPORT);
	assert_memory_equal(x.b, before, sizeof(x.b));

	/* A loose source route with hops left is discarded; a spent one
	 * (pointer past its length) is translated. */
	build4(&x, 8, LB_IPPROTO_TCP, 4, 0);
	ip = fr(&x) + 14;
	memcpy(ip + 20, "\x83\x07\x04\x0a\0\0\x01\0", 8);
	ip4_fix_csum(ip);
	assert_int_equal(lb_pkt_parse(fr(&x), x.len, &p), LB_PKT_IPV4);
	assert_int_equal(
		lb_nat46_xlate(x.b, x.off, x.len, &p, V6, 1, C6, 1, &out),
		-EPROTONOSUPPORT);
	ip[22] = 8;
	ip4_fix_csum(ip);
	assert_int_equal(lb_pkt_parse(fr(&x), x.len, &p), LB_PKT_IPV4);
	assert_true(lb_nat46_xlate(x.b, x.off, x.len, &p, V6, 1, C6, 1, &out) >
		    0);
}

/* fnat64 both ways: to the backend and back, the client's segment
 * comes back as it was sent but for the tuple the two rewrites chose. */
static void
test_round_trip(void **state)
{
	const uint32_t s4 = be32(10, 1, 0, 1), b4 = be32(10, 1, 0, 11);
	struct buf x;
	struct lb_pkt6 p, back;
	struct lb_pkt mid;
	uint8_t orig[FRAME_MAX];
	uint32_t olen;
	int no;

	(void)state;
	build6(&x, 1, 0, LB_IPPROTO_TCP, 21);
	assert_int_equal(lb_pkt6_parse(fr(&x), x.len, &p), LB_PKT6_OK);
	memcpy(orig, fr(&x), x.len);
	olen = x.len;
	no = lb_nat64_xlate(x.b, x.off, x.len, &p, s4, htons(1025), b4,
			    htons(8080), &mid);
	assert_true(no > 0);
	no = lb_nat46_xlate(x.b, (uint32_t)no, mid.l3_off + mid.ip_len, &mid,
			    C6, htons(40000), V6, htons(443), &back);
	assert_int_equal(no, HEADROOM);
	/* Flow label and hop limit are not carried: all else is. */
	orig[18 + 1] &= 0xf0;
	assert_memory_equal(x.b + no, orig, 18 + 2);
	assert_memory_equal(x.b + no + 18 + 4, orig + 18 + 4, 3);
	assert_memory_equal(x.b + no + 18 + 8, orig + 18 + 8, olen - 26);
}

/*
 * The backend's SYN-ACK as fnat64 hands it to the client: its MSS 20
 * bytes lower, floored at 1220, never raised; wherever the option sits
 * (an odd offset behind one NOP among them), the checksum as a full
 * recomputation gives it; no MSS, a malformed walk, or no SYN: nothing.
 */
static void
test_mss_adjust(void **state)
{
	static const struct {
		const char *what;
		uint8_t opt[12];
		uint32_t len;  /* options' bytes, a multiple of 4 */
		uint8_t flags;
		int want;      /* the return */
		uint32_t at;   /* where the MSS value is, when want > 0 */
	} rows[] = {
		{"1460 first", {2, 4, 0x05, 0xb4, 1, 1, 4, 2}, 8,
		 LB_TCP_SYN | LB_TCP_ACK, 1440, 2},
		{"behind one NOP", {1, 2, 4, 0x05, 0xb4, 1, 1, 1}, 8,
		 LB_TCP_SYN | LB_TCP_ACK, 1440, 3},
		{"behind SACK permitted", {4, 2, 2, 4, 0x23, 0x28, 0, 0}, 8,
		 LB_TCP_SYN, 8980, 4},
		{"1230 to the floor", {2, 4, 0x04, 0xce}, 4,
		 LB_TCP_SYN | LB_TCP_ACK, 1220, 2},
		{"536 kept", {2, 4, 0x02, 0x18}, 4, LB_TCP_SYN | LB_TCP_ACK,
		 536, 2},
		{"no MSS", {1, 1, 4, 2}, 4, LB_TCP_SYN | LB_TCP_ACK, 0, 0},
		{"length 1 stops the walk", {3, 1, 2, 4, 0x05, 0xb4, 0, 0}, 8,
		 LB_TCP_SYN | LB_TCP_ACK, 0, 0},
		{"not a SYN", {2, 4, 0x05, 0xb4}, 4, LB_TCP_ACK, 0, 0},
	};

	(void)state;
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		struct buf x, before;
		struct lb_pkt6 p;
		uint8_t *l4;

		build6(&x, (int)(r & 1), 0, LB_IPPROTO_TCP, rows[r].len);
		l4 = fr(&x) + x.len - 20 - rows[r].len;
		l4[12] = (uint8_t)((5 + rows[r].len / 4) << 4);
		l4[13] = rows[r].flags;
		memcpy(l4 + 20, rows[r].opt, rows[r].len);
		put16(l4 + 16, full_l4_csum(fr(&x), l4 - fr(&x) - 40,
					    (uint32_t)(l4 - fr(&x)), x.len,
					    LB_IPPROTO_TCP));
		assert_int_equal(lb_pkt6_parse(fr(&x), x.len, &p), LB_PKT6_OK);
		before = x;
		assert_int_equal(lb_nat46_mss_adjust(fr(&x), &p),
				 rows[r].want);
		if (rows[r].want > 0)
			assert_int_equal(get16(l4 + 20 + rows[r].at),
					 rows[r].want);
		else
			assert_memory_equal(x.b, before.b, sizeof(x.b));
		assert_l4_csum6(&x, &p);
	}
	assert_int_equal(lb_nat46_mss_adjust(NULL, NULL), -EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rewrite66),
		cmocka_unit_test(test_tcp_rst6),
		cmocka_unit_test(test_rewrite66_random),
		cmocka_unit_test(test_rewrite66_refused),
		cmocka_unit_test(test_hop_dec),
		cmocka_unit_test(test_xlate64),
		cmocka_unit_test(test_xlate64_refused),
		cmocka_unit_test(test_xlate46),
		cmocka_unit_test(test_xlate46_refused),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_mss_adjust),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
