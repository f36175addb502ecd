/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../parse/ref_csum.h"
#include "icmp64.h"

#define HEADROOM 64
#define FRAME_MAX 1600

/* An fnat64 flow: C6:40000 -> V6:443 on the client side, S4:1025 ->
 * B4:8080 on the backend side; R6 and R4 are routers on either path. */
static const uint8_t C6[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 7};
static const uint8_t V6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 0x10};
static const uint8_t R6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 2, [15] = 1};
#define S4 0x01000a0au /* 10.10.0.1 in network order */
#define B4 0x11000a0au /* 10.10.0.17 */
#define R4 0xfe000a0au /* 10.10.0.254 */

struct buf {
	uint8_t b[HEADROOM + FRAME_MAX];
	uint32_t off;
	uint32_t len;
};

static uint8_t *
fr(struct buf *x)
{
	return x->b + x->off;
}

static uint16_t
ref_csum(const uint8_t *p, size_t n, uint32_t s)
{
	return (uint16_t)~ref_fold(ref_sum(p, n, s));
}

/* The sum of an IPv6 pseudo-header, by the reference. */
static uint32_t
ph6(const uint8_t *ip, uint32_t n, uint8_t proto)
{
	return ref_sum(ip + 8, 32, 0) + (n >> 16) + (n & 0xffff) + proto;
}

static uint32_t
ph4(const uint8_t *ip, uint32_t n, uint8_t proto)
{
	return ref_sum(ip + 12, 8, 0) + n + proto;
}

/* A TCP segment of 20 + @p data bytes at @p l4 from @p sport to
 * @p dport, its checksum over @p ph. */
static void
tcp_seg(uint8_t *l4, uint16_t sport, uint16_t dport, uint32_t data, uint32_t ph)
{
	put16(l4, sport);
	put16(l4 + 2, dport);
	l4[12] = 5 << 4;
	l4[13] = LB_TCP_ACK | LB_TCP_PSH;
	for (uint32_t i = 0; i < data; i++)
		l4[20 + i] = (uint8_t)(i * 11 + 5);
	put16(l4 + 16, 0);
	put16(l4 + 16, ref_csum(l4, 20 + data, ph));
}

/* ICMPv6 error from R6 to V6 quoting V6:443 -> C6:40000, TCP with
 * @p data bytes, cut to @p quote_l4 bytes of TCP (0: whole). */
static void
build_err6(struct buf *x, uint8_t type, uint8_t code, uint32_t mtu,
	   uint32_t data, uint32_t quote_l4)
{
	uint8_t *f, *ip, *m, *q;
	uint32_t l4q = quote_l4 ? quote_l4 : 20 + data, mlen;

	memset(x, 0, sizeof(*x));
	x->off = HEADROOM;
	f = fr(x);
	memcpy(f, "\x02\0\0\0\0\x01\x02\0\0\0\0\xfe", 12);
	put16(f + 12, LB_ETHER_TYPE_IPV6);
	ip = f + 14;
	m = ip + 40;
	q = m + 8;
	q[0] = 0x60;
	put16(q + 4, (uint16_t)(20 + data));
	q[6] = LB_IPPROTO_TCP;
	q[7] = 63;
	memcpy(q + 8, V6, 16);
	memcpy(q + 24, C6, 16);
	tcp_seg(q + 40, 443, 40000, data, ph6(q, 20 + data, 6));
	mlen = 8 + 40 + l4q;
	ip[0] = 0x6b; /* traffic class 0xb8 */
	ip[1] = 0x80;
	put16(ip + 4, (uint16_t)mlen);
	ip[6] = LB_IPPROTO_ICMPV6;
	ip[7] = 60;
	memcpy(ip + 8, R6, 16);
	memcpy(ip + 24, V6, 16);
	m[0] = type;
	m[1] = code;
	put16(m + 4, (uint16_t)(mtu >> 16));
	put16(m + 6, (uint16_t)mtu);
	put16(m + 2, ref_csum(m, mlen, ph6(ip, mlen, 58)));
	x->len = 14 + 40 + mlen;
}

/* ICMP error from R4 to S4 quoting S4:1025 -> B4:8080, TCP with
 * @p data bytes, @p opt bytes of options in each IPv4 header. */
static void
build_err4(struct buf *x, uint8_t type, uint8_t code, uint16_t mtu,
	   uint32_t data, uint32_t opt)
{
	uint32_t ihl = 20 + opt, mlen = 8 + ihl + 20 + data;
	uint8_t *f, *ip, *m, *q;

	memset(x, 0, sizeof(*x));
	x->off = HEADROOM;
	f = fr(x);
	memcpy(f, "\x02\0\0\0\0\x01\x02\0\0\0\0\xfe", 12);
	put16(f + 12, LB_ETHER_TYPE_IPV4);
	ip = f + 14;
	m = ip + ihl;
	q = m + 8;
	q[0] = (uint8_t)(0x40 | ihl / 4);
	q[1] = 0x28;
	put16(q + 2, (uint16_t)(ihl + 20 + data));
	put16(q + 6, 0x4000);
	q[8] = 1;
	q[9] = LB_IPPROTO_TCP;
	memcpy(q + 12, &(uint32_t){S4}, 4);
	memcpy(q + 16, &(uint32_t){B4}, 4);
	memset(q + 20, 1, opt);
	put16(q + 10, ref_csum(q, ihl, 0));
	tcp_seg(q + ihl, 1025, 8080, data, ph4(q, 20 + data, 6));
	ip[0] = (uint8_t)(0x40 | ihl / 4);
	ip[1] = 0xc0;
	put16(ip + 2, (uint16_t)(ihl + mlen));
	ip[8] = 61;
	ip[9] = LB_IPPROTO_ICMP;
	memcpy(ip + 12, &(uint32_t){R4}, 4);
	memcpy(ip + 16, &(uint32_t){S4}, 4);
	memset(ip + 20, 1, opt);
	put16(ip + 10, ref_csum(ip, ihl, 0));
	m[0] = type;
	m[1] = code;
	put16(m + 6, mtu);
	put16(m + 2, ref_csum(m, mlen, 0));
	x->len = 14 + ihl + mlen;
}

static const struct lb_nat_tuple to_be = {B4, S4, 0x901f, 0x0104};

static void
test_xlate64_pkt_too_big(void **state)
{
	struct buf x;
	struct lb_pkt6 p;
	struct lb_pkt out, re;
	struct lb_nat_icmp ie;
	uint8_t data[200];
	uint8_t *f, *q, *l4;
	int no;

	(void)state;
	build_err6(&x, LB_ICMP6_PKT_TOO_BIG, 0, 1400, 100, 0);
	assert_int_equal(lb_pkt6_parse(fr(&x), x.len, &p), LB_PKT6_OK);
	memcpy(data, fr(&x) + 14 + 48 + 40 + 20, 100);
	no = lb_icmp_xlate64(x.b, x.off, x.len, &p, S4, B4, &to_be, &out);
	assert_int_equal(no, HEADROOM + 40);
	f = x.b + no;
	assert_int_equal(lb_pkt_parse(f, 14 + 48 + 120, &re), LB_PKT_IPV4);
	assert_memory_equal(&re, &out, sizeof(re));
	assert_int_equal(re.src, S4);
	assert_int_equal(re.dst, B4);
	assert_int_equal(re.ttl, 60);
	assert_int_equal(f[15], 0xb8);
	assert_memory_equal(f, "\x02\0\0\0\0\x01\x02\0\0\0\0\xfe", 12);
	assert_int_equal(lb_nat_icmp_parse(f, 14 + 48 + 120, &re, &ie), 0);
	assert_int_equal(ie.type, LB_ICMP_DEST_UNREACH);
	assert_int_equal(ie.code, LB_ICMP_FRAG_NEEDED);
	assert_int_equal(ie.mtu, 1380);
	assert_memory_equal(&ie.inner, &to_be, sizeof(to_be));
	/* The quoted header is the IPv4 packet the backend would have
	 * sent: its length, TTL, DF, and a checksum that verifies. */
	q = f + ie.inner_l3_off;
	assert_int_equal(get16(q + 2), 20 + 120);
	assert_int_equal(q[8], 63);
	assert_int_equal(get16(q + 6), 0x4000);
	assert_int_equal(ref_fold(ref_sum(q, 20, 0)), 0xffff);
	/* The quoted segment's checksum is the one for its new tuple. */
	l4 = f + ie.inner_l4_off;
	assert_int_equal(ref_fold(ref_sum(l4, 120, ph4(q, 120, 6))), 0xffff);
	assert_memory_equal(l4 + 20, data, 100);
}

/* Each ICMPv6 type and code, to ICMP's or refused. */
static void
test_xlate64_codes(void **state)
{
	static const struct {
		uint8_t t6, c6;
		int t4, c4; /* -1: refused */
	} rows[] = {
		{LB_ICMP6_DEST_UNREACH, 0, 3, 1},
		{LB_ICMP6_DEST_UNREACH, 1, 3, 10},
		{LB_ICMP6_DEST_UNREACH, 2, 3, 1},
		{LB_ICMP6_DEST_UNREACH, 3, 3, 1},
		{LB_ICMP6_DEST_UNREACH, 4, 3, 3},
		{LB_ICMP6_DEST_UNREACH, 5, -1, -1},
		{LB_ICMP6_TIME_EXCEEDED, 0, 11, 0},
		{LB_ICMP6_TIME_EXCEEDED, 1, 11, 1},
		{LB_ICMP6_TIME_EXCEEDED, 2, -1, -1},
		{LB_ICMP6_PKT_TOO_BIG, 0, 3, 4},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct buf x, before;
		struct lb_pkt6 p;
		struct lb_pkt out;
		struct lb_nat_icmp ie;
		int no;

		build_err6(&x, rows[i].t6, rows[i].c6, 1500, 10, 0);
		assert_int_equal(lb_pkt6_parse(fr(&x), x.len, &p), LB_PKT6_OK);
		before = x;
		no = lb_icmp_xlate64(x.b, x.off, x.len, &p, S4, B4, &to_be,
				     &out);
		if (rows[i].t4 < 0) {
			assert_int_equal(no, -EPROTONOSUPPORT);
			assert_memory_equal(x.b, before.b, sizeof(x.b));
			continue;
		}
		assert_true(no > 0);
		assert_int_equal(
			lb_nat_icmp_parse(x.b + no, 14 + 48 + 30, &out, &ie),
			0);
		assert_int_equal(ie.type, rows[i].t4);
		assert_int_equal(ie.code, rows[i].c4);
	}
}

static void
test_xlate64_refused(void **state)
{
	struct buf x, before;
	struct lb_pkt6 p;
	struct lb_pkt out;

	(void)state;
	build_err6(&x, LB_ICMP6_PKT_TOO_BIG, 0, 1400, 10, 0);
	fr(&x)[14 + 40 + 3] ^= 1;
	assert_int_equal(lb_pkt6_parse(fr(&x), x.len, &p), LB_PKT6_OK);
	before = x;
	assert_int_equal(
		lb_icmp_xlate64(x.b, x.off, x.len, &p, S4, B4, &to_be, &out),
		-EINVAL);
	assert_int_equal(
		lb_icmp_xlate64(x.b, x.off, x.len, &p, S4, B4, NULL, &out),
		-EINVAL);
	fr(&x)[14 + 40 + 3] ^= 1;
	before = x;
	/* 127.0.0.1 and 224.0.0.1 are never sources. */
	assert_int_equal(lb_icmp_xlate64(x.b, x.off, x.len, &p, 0x0100007fu, B4,
					 &to_be, &out),
			 -EINVAL);
	assert_int_equal(lb_icmp_xlate64(x.b, x.off, x.len, &p, 0x010000e0u, B4,
					 &to_be, &out),
			 -EINVAL);
	assert_memory_equal(x.b, before.b, sizeof(x.b));
}

static void
check46(struct buf *x, int no, uint32_t mtu, uint32_t data, uint32_t l4q)
{
	static const struct lb_icmp6_tuple in = {
		{0x20, 0x01, 0x0d, 0xb8, [15] = 7},
		{0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 0x10},
		0x409c,
		0xbb01,
	};
	uint8_t *f = x->b + no, *q, *l4;
	struct lb_pkt6 re;
	struct lb_icmp6_err e;
	uint32_t len = 14 + 40 + 8 + 40 + l4q;

	assert_int_equal(lb_pkt6_parse(f, len, &re), LB_PKT6_OK);
	assert_memory_equal(re.src, V6, 16);
	assert_memory_equal(re.dst, C6, 16);
	assert_int_equal(re.hop_limit, 61);
	assert_int_equal(f[14], 0x6c); /* traffic class 0xc0 */
	assert_int_equal(lb_icmp6_err_parse(f, len, &re, &e), 0);
	assert_memory_equal(&e.inner, &in, sizeof(in));
	assert_int_equal(e.mtu, mtu);
	q = f + e.inner_l3_off;
	assert_int_equal(get16(q + 4), 20 + data);
	assert_int_equal(q[7], 1);
	assert_int_equal(q[1], 0x80); /* traffic class 0x28 */
	l4 = f + e.inner_l4_off;
	if (l4q == 20 + data)
		assert_int_equal(ref_fold(ref_sum(l4, l4q, ph6(q, l4q, 6))),
				 0xffff);
}

static void
test_xlate46_frag_needed(void **state)
{
	static const struct lb_icmp6_tuple in = {
		{0x20, 0x01, 0x0d, 0xb8, [15] = 7},
		{0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 0x10},
		0x409c,
		0xbb01,
	};
	static const struct {
		uint16_t mtu;
		uint32_t want_mtu, data, opt;
	} rows[] = {
		{1400, 1420, 100, 0},
		{576, 1280, 30, 0},
		{1400, 1420, 16, 8},
		{1480, 1500, 1400, 40},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct buf x;
		struct lb_pkt p;
		struct lb_pkt6 out;
		uint32_t l4q = 20 + rows[i].data;
		int no;

		build_err4(&x, LB_ICMP_DEST_UNREACH, LB_ICMP_FRAG_NEEDED,
			   rows[i].mtu, rows[i].data, rows[i].opt);
		assert_int_equal(lb_pkt_parse(fr(&x), x.len, &p), LB_PKT_IPV4);
		no = lb_icmp_xlate46(x.b, x.off, x.len, &p, V6, C6, &in, &out);
		assert_int_equal(no, HEADROOM - (40 - 2 * (int)rows[i].opt));
		/* The error fits in IPv6's minimum MTU. */
		if (40 + 8 + 40 + l4q > LB_IPV6_MIN_MTU)
			l4q = LB_IPV6_MIN_MTU - 88;
		assert_int_equal(out.l3_off + 40u + out.ip_plen, 14 + 88 + l4q);
		check46(&x, no, rows[i].want_mtu, rows[i].data, l4q);
	}
}

static void
test_xlate46_codes(void **state)
{
	static const struct {
		uint8_t t4, c4;
		int t6, c6;
	} rows[] = {
		{3, 0, 1, 0},  {3, 1, 1, 0},	{3, 2, -1, -1}, {3, 3, 1, 4},
		{3, 5, 1, 0},  {3, 6, 1, 0},	{3, 9, 1, 1},	{3, 10, 1, 1},
		{3, 13, 1, 1}, {3, 14, -1, -1}, {3, 15, 1, 1},	{11, 0, 3, 0},
		{11, 1, 3, 1},
	};
	const struct lb_icmp6_tuple in = {{1}, {2}, 1, 2};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct buf x, before;
		struct lb_pkt p;
		struct lb_pkt6 out, re;
		struct lb_icmp6_err e;
		int no;

		build_err4(&x, rows[i].t4, rows[i].c4, 0, 8, 0);
		assert_int_equal(lb_pkt_parse(fr(&x), x.len, &p), LB_PKT_IPV4);
		before = x;
		no = lb_icmp_xlate46(x.b, x.off, x.len, &p, V6, C6, &in, &out);
		if (rows[i].t6 < 0) {
			assert_int_equal(no, -EPROTONOSUPPORT);
			assert_memory_equal(x.b, before.b, sizeof(x.b));
			continue;
		}
		assert_true(no >= 0);
		assert_int_equal(lb_pkt6_parse(x.b + no, 14 + 88 + 28, &re),
				 LB_PKT6_OK);
		assert_int_equal(
			lb_icmp6_err_parse(x.b + no, 14 + 88 + 28, &re, &e), 0);
		assert_int_equal(e.type, rows[i].t6);
		assert_int_equal(e.code, rows[i].c6);
	}
}

static void
test_xlate46_refused(void **state)
{
	const struct lb_icmp6_tuple in = {{1}, {2}, 1, 2};
	struct buf x, before;
	struct lb_pkt p;
	struct lb_pkt6 out;

	(void)state;
	build_err4(&x, LB_ICMP_DEST_UNREACH, LB_ICMP_FRAG_NEEDED, 1400, 10, 0);
	assert_int_equal(lb_pkt_parse(fr(&x), x.len, &p), LB_PKT_IPV4);
	/* 39 bytes in front: one short of the growth. */
	memmove(x.b + 39, fr(&x), x.len);
	x.off = 39;
	before = x;
	assert_int_equal(
		lb_icmp_xlate46(x.b, x.off, x.len, &p, V6, C6, &in, &out),
		-ENOSPC);
	fr(&x)[34 + 2] ^= 1; /* the ICMP checksum */
	assert_int_equal(
		lb_icmp_xlate46(x.b, x.off, x.len, &p, V6, C6, &in, &out),
		-EINVAL);
	fr(&x)[34 + 2] ^= 1;
	assert_int_equal(
		lb_icmp_xlate46(x.b, x.off, x.len, &p, V6, NULL, &in, &out),
		-EINVAL);
	{
		static const uint8_t lo[16] = {[15] = 1};
		static const uint8_t mc[16] = {0xff, 0x02, [15] = 1};

		assert_int_equal(lb_icmp_xlate46(x.b, x.off, x.len, &p, mc, C6,
						 &in, &out),
				 -EINVAL);
		assert_int_equal(lb_icmp_xlate46(x.b, x.off, x.len, &p, V6, lo,
						 &in, &out),
				 -EINVAL);
	}
	assert_memory_equal(x.b, before.b, sizeof(x.b));
}

/* An error quoting the flow goes across and back: the quoted segment
 * comes back as it was, its checksum included. */
static void
test_round_trip(void **state)
{
	static const struct lb_icmp6_tuple back = {
		{0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 0x10},
		{0x20, 0x01, 0x0d, 0xb8, [15] = 7},
		0xbb01,
		0x409c,
	};
	struct buf x;
	struct lb_pkt6 p, out6;
	struct lb_pkt out4;
	uint8_t seg[120];
	int no;

	(void)state;
	build_err6(&x, LB_ICMP6_PKT_TOO_BIG, 0, 1400, 100, 0);
	assert_int_equal(lb_pkt6_parse(fr(&x), x.len, &p), LB_PKT6_OK);
	memcpy(seg, fr(&x) + 14 + 48 + 40, 120);
	no = lb_icmp_xlate64(x.b, x.off, x.len, &p, S4, B4, &to_be, &out4);
	assert_true(no > 0);
	no = lb_icmp_xlate46(x.b, (uint32_t)no, 14 + 48 + 120, &out4, R6, V6,
			     &back, &out6);
	assert_int_equal(no, HEADROOM);
	assert_memory_equal(x.b + no + 14 + 48 + 40, seg, 120);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xlate64_pkt_too_big),
		cmocka_unit_test(test_xlate64_codes),
		cmocka_unit_test(test_xlate64_refused),
		cmocka_unit_test(test_xlate46_frag_needed),
		cmocka_unit_test(test_xlate46_codes),
		cmocka_unit_test(test_xlate46_refused),
		cmocka_unit_test(test_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
