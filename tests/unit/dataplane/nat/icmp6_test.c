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
#include "icmp6.h"

#define FRAME_MAX 512

static const uint8_t C6[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 7};
static const uint8_t V6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 0x10};
static const uint8_t S6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0x0a, [15] = 1};
static const uint8_t B6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0x0a, [15] = 0x11};
static const uint8_t R6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0x0a, [15] = 0xfe};

struct frame {
	uint8_t b[FRAME_MAX];
	uint32_t len;
	uint32_t q;   /* offset of the quoted IPv6 header */
	uint32_t ql4; /* offset of the quoted L4 header */
};

#define MSG(f) ((f)->b + 54)

/* The checksum of the upper layer at @p l4 of @p n bytes, by the
 * reference sum over the IPv6 header at @p ip's addresses, with the
 * field at @p co taken as zero. */
static uint16_t
ref_l4(const uint8_t *ip, const uint8_t *l4, uint32_t n, uint8_t proto,
       uint32_t co)
{
	uint32_t s = ref_sum(ip + 8, 32, 0) + (n >> 16) + (n & 0xffff) + proto;

	s = ref_sum(l4, co, s);
	s = ref_sum(l4 + co + 2, n - co - 2, s);
	return (uint16_t)~ref_fold(s);
}

static void
fix_icmp(struct frame *f)
{
	uint32_t n = f->len - 54;

	put16(MSG(f) + 2, ref_l4(f->b + 14, MSG(f), n, 58, 2));
}

/*
 * An error of @p type from R to SNAT quoting SNAT:1025 -> BE:8080, TCP
 * with @p data bytes and @p n_ext destination options headers, the quote
 * cut to @p quote bytes (0: whole).
 */
static void
build_err(struct frame *f, uint8_t type, uint8_t proto, uint32_t n_ext,
	  uint32_t data, uint32_t quote)
{
	uint8_t *ip = f->b + 14, *q, *l4, *nh;
	uint32_t l4hl = proto == LB_IPPROTO_TCP ? 20 : 8, qfull;

	memset(f, 0, sizeof(*f));
	memcpy(f->b, "\x02\0\0\0\0\x01\x02\0\0\0\0\xfe", 12);
	put16(f->b + 12, LB_ETHER_TYPE_IPV6);
	ip[0] = 0x60;
	ip[6] = LB_IPPROTO_ICMPV6;
	ip[7] = 63;
	memcpy(ip + 8, R6, 16);
	memcpy(ip + 24, S6, 16);
	MSG(f)[0] = type;
	if (type == LB_ICMP6_PKT_TOO_BIG)
		memcpy(MSG(f) + 4, "\0\0\x05\x00", 4); /* 1280 */
	f->q = 54 + 8;
	q = f->b + f->q;
	q[0] = 0x60;
	q[7] = 1;
	memcpy(q + 8, S6, 16);
	memcpy(q + 24, B6, 16);
	nh = q + 6;
	f->ql4 = f->q + 40;
	for (uint32_t i = 0; i < n_ext; i++) {
		*nh = LB_IPPROTO_DSTOPTS;
		nh = f->b + f->ql4;
		f->b[f->ql4 + 2] = 1;
		f->b[f->ql4 + 3] = 4;
		f->ql4 += 8;
	}
	*nh = proto;
	l4 = f->b + f->ql4;
	put16(l4, 1025);
	put16(l4 + 2, 8080);
	if (proto == LB_IPPROTO_TCP) {
		l4[12] = 5 << 4;
		l4[13] = LB_TCP_ACK;
	} else {
		put16(l4 + 4, (uint16_t)(8 + data));
	}
	for (uint32_t i = 0; i < data; i++)
		l4[l4hl + i] = (uint8_t)(i * 3 + 1);
	qfull = f->ql4 + l4hl + data - f->q;
	put16(q + 4, (uint16_t)(qfull - 40));
	put16(l4 + (proto == LB_IPPROTO_TCP ? 16 : 6),
	      ref_l4(q, l4, l4hl + data, proto,
		     proto == LB_IPPROTO_TCP ? 16 : 6));
	f->len = f->q + (quote ? quote : qfull);
	put16(ip + 4, (uint16_t)(f->len - 54));
	fix_icmp(f);
}

static int
parse(struct frame *f, struct lb_pkt6 *p, struct lb_icmp6_err *e)
{
	if (lb_pkt6_parse(f->b, f->len, p) != LB_PKT6_OK)
		return -1000;
	return lb_icmp6_err_parse(f->b, f->len, p, e);
}

static void
test_err_parse(void **state)
{
	struct frame f;
	struct lb_pkt6 p;
	struct lb_icmp6_err e;

	(void)state;
	build_err(&f, LB_ICMP6_PKT_TOO_BIG, LB_IPPROTO_TCP, 0, 100, 0);
	assert_int_equal(parse(&f, &p, &e), 0);
	assert_int_equal(e.type, LB_ICMP6_PKT_TOO_BIG);
	assert_int_equal(e.mtu, 1280);
	assert_int_equal(e.proto, LB_IPPROTO_TCP);
	assert_int_equal(e.l4csum, 1);
	assert_int_equal(e.inner_l3_off, f.q);
	assert_int_equal(e.inner_l4_off, f.ql4);
	assert_int_equal(e.quote_len, f.len - f.q);
	assert_memory_equal(e.inner.src, S6, 16);
	assert_memory_equal(e.inner.dst, B6, 16);
	assert_int_equal(e.inner.sport, htons(1025));
	assert_int_equal(e.inner.dport, htons(8080));

	build_err(&f, LB_ICMP6_TIME_EXCEEDED, LB_IPPROTO_UDP, 2, 5, 0);
	assert_int_equal(parse(&f, &p, &e), 0);
	assert_int_equal(e.mtu, 0);
	assert_int_equal(e.inner_l4_off, f.q + 56);
	assert_int_equal(e.proto, LB_IPPROTO_UDP);

	/* A quote cut one byte into the TCP checksum: no L4 checksum. */
	build_err(&f, LB_ICMP6_DEST_UNREACH, LB_IPPROTO_TCP, 0, 100, 40 + 17);
	assert_int_equal(parse(&f, &p, &e), 0);
	assert_int_equal(e.l4csum, 0);
	assert_int_equal(e.quote_len, 57);
}

struct row {
	const char *what;
	void (*mutate)(struct frame *f);
	int want;
};

static void
m_none(struct frame *f)
{
	(void)f;
}
static void
m_csum(struct frame *f)
{
	MSG(f)[2] ^= 0x10;
}
static void
m_echo(struct frame *f)
{
	MSG(f)[0] = LB_ICMP6_ECHO_REQUEST;
	fix_icmp(f);
}
static void
m_param_problem(struct frame *f)
{
	MSG(f)[0] = 4;
	fix_icmp(f);
}
static void
cut(struct frame *f, uint32_t quote)
{
	f->len = f->q + quote;
	put16(f->b + 14 + 4, (uint16_t)(f->len - 54));
	fix_icmp(f);
}
static void
m_quote_short(struct frame *f)
{
	cut(f, 39);
}
static void
m_quote_no_ports(struct frame *f)
{
	cut(f, 40 + 7);
}
static void
m_quote_ports(struct frame *f)
{
	cut(f, 40 + 8);
}
static void
m_quote_v4(struct frame *f)
{
	f->b[f->q] = 0x45;
	fix_icmp(f);
}
static void
m_quote_icmp(struct frame *f)
{
	f->b[f->q + 6] = LB_IPPROTO_ICMPV6;
	fix_icmp(f);
}
static void
m_quote_later_frag(struct frame *f)
{
	/* The quoted next header becomes a fragment header at offset 8. */
	uint8_t *q = f->b + f->q;

	memmove(q + 48, q + 40, f->len - f->q - 40);
	memset(q + 40, 0, 8);
	q[40] = q[6];
	q[6] = LB_IPPROTO_FRAGMENT;
	put16(q + 42, 8);
	f->len += 8;
	put16(q + 4, (uint16_t)(get16(q + 4) + 8));
	put16(f->b + 14 + 4, (uint16_t)(f->len - 54));
	fix_icmp(f);
}
static void
m_quote_ext_cut(struct frame *f)
{
	/* A quoted extension header longer than the quote. */
	uint8_t *q = f->b + f->q;

	q[6] = LB_IPPROTO_DSTOPTS;
	q[41] = 200;
	fix_icmp(f);
}
static void
m_quote_plen_short(struct frame *f)
{
	/* The quoted packet says it ends before its ports. */
	put16(f->b + f->q + 4, 4);
	fix_icmp(f);
}

static const struct row rows[] = {
	{"packet too big", m_none, 0},
	{"quote of 48 bytes", m_quote_ports, 0},
	{"bad checksum", m_csum, -EINVAL},
	{"echo request", m_echo, -EPROTONOSUPPORT},
	{"parameter problem", m_param_problem, -EPROTONOSUPPORT},
	{"quote shorter than a header", m_quote_short, -EINVAL},
	{"quote without ports", m_quote_no_ports, -EINVAL},
	{"quote of ipv4", m_quote_v4, -EINVAL},
	{"quote of icmpv6", m_quote_icmp, -EPROTONOSUPPORT},
	{"quote of a later fragment", m_quote_later_frag, -EINVAL},
	{"quoted extension past the quote", m_quote_ext_cut, -EINVAL},
	{"quoted payload length short", m_quote_plen_short, -EINVAL},
};

static void
test_err_refused(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct frame f;
		struct lb_pkt6 p;
		struct lb_icmp6_err e;
		int rc;

		build_err(&f, LB_ICMP6_PKT_TOO_BIG, LB_IPPROTO_TCP, 0, 30, 0);
		rows[i].mutate(&f);
		rc = parse(&f, &p, &e);
		if (rc != rows[i].want)
			fail_msg("%s: got %d, want %d", rows[i].what, rc,
				 rows[i].want);
	}
}

/* An error from the backend's side told to the client: everything is
 * checked by full recomputations. */
static void
test_err_rewrite(void **state)
{
	static const struct {
		uint8_t proto;
		uint32_t n_ext, data, quote;
	} cases[] = {
		{LB_IPPROTO_TCP, 0, 100, 0},
		{LB_IPPROTO_TCP, 1, 7, 0},
		{LB_IPPROTO_UDP, 0, 33, 0},
		{LB_IPPROTO_UDP, 2, 0, 0},
		{LB_IPPROTO_TCP, 0, 100, 40 + 17},
		{LB_IPPROTO_TCP, 0, 100, 40 + 18},
		{LB_IPPROTO_TCP, 0, 100, 40 + 8},
	};
	const struct lb_icmp6_tuple in = {
		{0x20, 0x01, 0x0d, 0xb8, [15] = 7},
		{0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 0x10},
		0x409c,
		0xbb01,
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct frame f, before;
		struct lb_pkt6 p, re;
		struct lb_icmp6_err e, e2;
		uint32_t qend;

		build_err(&f, LB_ICMP6_PKT_TOO_BIG, cases[i].proto,
			  cases[i].n_ext, cases[i].data, cases[i].quote);
		assert_int_equal(parse(&f, &p, &e), 0);
		before = f;
		assert_int_equal(
			lb_icmp6_err_rewrite(f.b, f.len, &p, V6, C6, &in), 0);
		assert_int_equal(parse(&f, &re, &e2), 0);
		assert_memory_equal(re.src, V6, 16);
		assert_memory_equal(re.dst, C6, 16);
		assert_memory_equal(p.src, V6, 16);
		assert_memory_equal(&e2.inner, &in, sizeof(in));
		assert_int_equal(e2.mtu, 1280);
		assert_int_equal(e2.quote_len, e.quote_len);
		/* The ICMPv6 checksum, computed whole. */
		assert_int_equal(get16(MSG(&f) + 2),
				 ref_l4(f.b + 14, MSG(&f), f.len - 54, 58, 2));
		/* The quoted L4 checksum, when whole in the quote, is the
		 * one the new tuple gives; else its bytes stay. */
		qend = f.q + e.quote_len;
		if (cases[i].quote == 0) {
			uint32_t co = cases[i].proto == LB_IPPROTO_TCP ? 16 : 6;

			assert_int_equal(get16(f.b + f.ql4 + co),
					 ref_l4(f.b + f.q, f.b + f.ql4,
						qend - f.ql4, cases[i].proto,
						co));
		} else if (!e.l4csum && qend > f.ql4 + 16) {
			assert_int_equal(f.b[f.ql4 + 16],
					 before.b[before.ql4 + 16]);
		}
		/* The rest of the quote is as it was. */
		assert_memory_equal(
			f.b + f.ql4 + 4, before.b + f.ql4 + 4,
			e.l4csum ? (cases[i].proto == LB_IPPROTO_TCP ? 12 : 2)
				 : 4);
	}
}

static void
test_err_rewrite_refused(void **state)
{
	struct frame f, before;
	struct lb_pkt6 p;
	struct lb_icmp6_tuple in;

	(void)state;
	memset(&in, 1, sizeof(in));
	build_err(&f, LB_ICMP6_PKT_TOO_BIG, LB_IPPROTO_TCP, 0, 10, 0);
	m_csum(&f);
	assert_int_equal(lb_pkt6_parse(f.b, f.len, &p), LB_PKT6_OK);
	before = f;
	assert_int_equal(lb_icmp6_err_rewrite(f.b, f.len, &p, V6, C6, &in),
			 -EINVAL);
	assert_int_equal(lb_icmp6_err_rewrite(f.b, f.len, &p, NULL, C6, &in),
			 -EINVAL);
	assert_memory_equal(f.b, before.b, sizeof(f.b));
}

static void
test_set_mtu(void **state)
{
	struct frame f;
	struct lb_pkt6 p;
	struct lb_icmp6_err e;

	(void)state;
	build_err(&f, LB_ICMP6_PKT_TOO_BIG, LB_IPPROTO_TCP, 0, 10, 0);
	assert_int_equal(parse(&f, &p, &e), 0);
	assert_int_equal(lb_icmp6_set_mtu(f.b, f.len, &p, 1480), 0);
	assert_int_equal(parse(&f, &p, &e), 0);
	assert_int_equal(e.mtu, 1480);
	assert_int_equal(lb_icmp6_set_mtu(f.b, f.len, &p, 576), 0);
	assert_int_equal(parse(&f, &p, &e), 0);
	assert_int_equal(e.mtu, LB_IPV6_MIN_MTU);
	build_err(&f, LB_ICMP6_TIME_EXCEEDED, LB_IPPROTO_TCP, 0, 10, 0);
	assert_int_equal(parse(&f, &p, &e), 0);
	assert_int_equal(lb_icmp6_set_mtu(f.b, f.len, &p, 1480), -EINVAL);
}

/* An echo request built by hand, its reply checked byte by byte. */
static void
test_echo_reply(void **state)
{
	struct frame f, before;
	struct lb_pkt6 p, re;
	uint8_t *ip = f.b + 14;

	(void)state;
	memset(&f, 0, sizeof(f));
	memcpy(f.b, "\x02\0\0\0\0\x01\x02\0\0\0\0\x02", 12);
	put16(f.b + 12, LB_ETHER_TYPE_IPV6);
	ip[0] = 0x60;
	put16(ip + 4, 8 + 5);
	ip[6] = LB_IPPROTO_ICMPV6;
	ip[7] = 51;
	memcpy(ip + 8, C6, 16);
	memcpy(ip + 24, V6, 16);
	MSG(&f)[0] = LB_ICMP6_ECHO_REQUEST;
	memcpy(MSG(&f) + 4, "\x12\x34\0\x07ping!", 9);
	f.len = 54 + 13;
	fix_icmp(&f);
	assert_int_equal(lb_pkt6_parse(f.b, f.len, &p), LB_PKT6_OK);
	before = f;
	assert_int_equal(lb_icmp6_echo_reply(f.b, f.len, &p), 0);
	assert_int_equal(lb_pkt6_parse(f.b, f.len, &re), LB_PKT6_OK);
	assert_memory_equal(f.b, before.b + 6, 6);
	assert_memory_equal(f.b + 6, before.b, 6);
	assert_memory_equal(re.src, V6, 16);
	assert_memory_equal(re.dst, C6, 16);
	assert_int_equal(re.hop_limit, LB_ICMP6_HOP_LIMIT);
	assert_int_equal(MSG(&f)[0], LB_ICMP6_ECHO_REPLY);
	assert_memory_equal(MSG(&f) + 4, before.b + 54 + 4, 9);
	assert_int_equal(get16(MSG(&f) + 2),
			 ref_l4(f.b + 14, MSG(&f), 13, 58, 2));
	assert_memory_equal(&p, &re, sizeof(p));

	/* Not again: it is a reply now. A bad checksum, code 1: refused. */
	assert_int_equal(lb_icmp6_echo_reply(f.b, f.len, &re), -EINVAL);
	f = before;
	MSG(&f)[1] = 1;
	fix_icmp(&f);
	assert_int_equal(lb_pkt6_parse(f.b, f.len, &p), LB_PKT6_OK);
	assert_int_equal(lb_icmp6_echo_reply(f.b, f.len, &p), -EINVAL);
	f = before;
	MSG(&f)[3] ^= 1;
	assert_int_equal(lb_pkt6_parse(f.b, f.len, &p), LB_PKT6_OK);
	assert_int_equal(lb_icmp6_echo_reply(f.b, f.len, &p), -EINVAL);
	assert_memory_equal(f.b + 14, before.b + 14, 40);
	p.n_ext = 1;
	f = before;
	assert_int_equal(lb_icmp6_echo_reply(f.b, f.len, &p), -EPROTONOSUPPORT);
	assert_memory_equal(f.b, before.b, sizeof(f.b));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_err_parse),
		cmocka_unit_test(test_err_refused),
		cmocka_unit_test(test_err_rewrite),
		cmocka_unit_test(test_err_rewrite_refused),
		cmocka_unit_test(test_set_mtu),
		cmocka_unit_test(test_echo_reply),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
