/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../parse/ref_csum.h"
#include "nd6.h"

#define FRAME_MAX 256

static const uint8_t OUR_MAC[6] = {0x02, 0, 0, 0, 0, 0x01};
static const uint8_t PEER_MAC[6] = {0x02, 0, 0, 0, 0, 0x02};
static const uint8_t OTHER_MAC[6] = {0x02, 0, 0, 0, 0, 0x03};
static const uint8_t VIP[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 0x10};
static const uint8_t PEER[16] = {0x20, 0x01,	    0x0d,	 0xb8,	     0,
				 1,    [13] = 0xab, [14] = 0xcd, [15] = 0x07};
static const uint8_t SN_VIP[16] = {0xff,
				   0x02, [11] = 1, [12] = 0xff, [15] = 0x10};
static const uint8_t ALL_NODES[16] = {0xff, 0x02, [15] = 1};

struct frame {
	uint8_t b[FRAME_MAX];
	uint32_t len;
	uint32_t l3;
};

#define IP(f) ((f)->b + (f)->l3)
#define MSG(f) ((f)->b + (f)->l3 + 40)

/* The ICMPv6 checksum by the reference sum, over the pseudo-header. */
static void
fix_csum(struct frame *f)
{
	uint32_t mlen = get16(IP(f) + 4), s;

	put16(MSG(f) + 2, 0);
	s = ref_sum(IP(f) + 8, 32, 0) + mlen + 58;
	s = ref_sum(MSG(f), mlen, s);
	put16(MSG(f) + 2, (uint16_t)~ref_fold(s));
}

static int
csum_ok(const uint8_t *frame, uint32_t l3)
{
	uint32_t mlen = get16(frame + l3 + 4), s;

	s = ref_sum(frame + l3 + 8, 32, 0) + mlen + 58;
	s = ref_sum(frame + l3 + 40, mlen, s);
	return ref_fold(s) == 0xffff;
}

/* A message from @p src to @p dst of @p type about @p target, with a
 * link-layer option of @p opt (0 for none) and @p mac. */
static void
build(struct frame *f, uint8_t type, const uint8_t *src, const uint8_t *dst,
      const uint8_t *target, uint8_t opt, const uint8_t *mac)
{
	uint32_t mlen = 24 + (opt ? 8 : 0);

	memset(f, 0, sizeof(*f));
	memcpy(f->b, OUR_MAC, 6);
	memcpy(f->b + 6, PEER_MAC, 6);
	put16(f->b + 12, LB_ETHER_TYPE_IPV6);
	f->l3 = 14;
	IP(f)[0] = 0x60;
	put16(IP(f) + 4, (uint16_t)mlen);
	IP(f)[6] = LB_IPPROTO_ICMPV6;
	IP(f)[7] = 255;
	memcpy(IP(f) + 8, src, 16);
	memcpy(IP(f) + 24, dst, 16);
	MSG(f)[0] = type;
	if (type == LB_ND_NA)
		MSG(f)[4] = LB_ND_F_SOLICITED;
	memcpy(MSG(f) + 8, target, 16);
	if (opt) {
		MSG(f)[24] = opt;
		MSG(f)[25] = 1;
		memcpy(MSG(f) + 26, mac, 6);
	}
	f->len = 14 + 40 + mlen;
	fix_csum(f);
}

static void
make_ns(struct frame *f)
{
	build(f, LB_ND_NS, PEER, SN_VIP, VIP, 1, PEER_MAC);
}

static void
make_na(struct frame *f)
{
	build(f, LB_ND_NA, PEER, VIP, PEER, 2, PEER_MAC);
}

static int
parse(struct frame *f, struct lb_nd_msg *m)
{
	struct lb_pkt6 pkt;

	if (lb_pkt6_parse(f->b, f->len, &pkt) != LB_PKT6_OK)
		return -1000;
	return lb_nd_parse(f->b, f->len, &pkt, m);
}

struct row {
	const char *what;
	void (*base)(struct frame *f);
	void (*mutate)(struct frame *f);
	int want;
};

static void
m_none(struct frame *f)
{
	(void)f;
}
static void
m_hop254(struct frame *f)
{
	IP(f)[7] = 254;
}
static void
m_code1(struct frame *f)
{
	MSG(f)[1] = 1;
	fix_csum(f);
}
static void
m_csum(struct frame *f)
{
	MSG(f)[3] ^= 1;
}
static void
m_short(struct frame *f)
{
	put16(IP(f) + 4, 23);
	f->len = 14 + 40 + 23;
	fix_csum(f);
}
static void
m_mcast_target(struct frame *f)
{
	MSG(f)[8] = 0xff;
	fix_csum(f);
}
static void
m_opt_len0(struct frame *f)
{
	MSG(f)[25] = 0;
	fix_csum(f);
}
static void
m_opt_past(struct frame *f)
{
	MSG(f)[25] = 2;
	fix_csum(f);
}
static void
m_opt_other_len(struct frame *f)
{
	/* A link-layer option of 16 bytes: not Ethernet's. */
	MSG(f)[25] = 2;
	put16(IP(f) + 4, 24 + 16);
	f->len += 8;
	fix_csum(f);
}
static void
m_opt_unknown(struct frame *f)
{
	/* A nonce option (14) before the link-layer one is skipped. */
	memmove(MSG(f) + 32, MSG(f) + 24, 8);
	memset(MSG(f) + 24, 0, 8);
	MSG(f)[24] = 14;
	MSG(f)[25] = 1;
	put16(IP(f) + 4, 24 + 16);
	f->len += 8;
	fix_csum(f);
}
static void
m_no_opt(struct frame *f)
{
	put16(IP(f) + 4, 24);
	f->len -= 8;
	fix_csum(f);
}
static void
m_dad(struct frame *f)
{
	memset(IP(f) + 8, 0, 16);
	m_no_opt(f);
}
static void
m_dad_with_lla(struct frame *f)
{
	memset(IP(f) + 8, 0, 16);
	fix_csum(f);
}
static void
m_dad_unicast(struct frame *f)
{
	memcpy(IP(f) + 24, VIP, 16);
	m_dad(f);
}
static void
m_na_mcast_solicited(struct frame *f)
{
	memcpy(IP(f) + 24, ALL_NODES, 16);
	fix_csum(f);
}
static void
m_na_mcast_unsolicited(struct frame *f)
{
	memcpy(IP(f) + 24, ALL_NODES, 16);
	MSG(f)[4] = LB_ND_F_OVERRIDE;
	fix_csum(f);
}
static void
m_echo(struct frame *f)
{
	MSG(f)[0] = 128;
	fix_csum(f);
}
static void
m_fragment(struct frame *f)
{
	/* An atomic fragment header in front of the message (RFC 6980). */
	uint32_t mlen = get16(IP(f) + 4);

	memmove(MSG(f) + 8, MSG(f), mlen);
	memset(MSG(f), 0, 8);
	MSG(f)[0] = LB_IPPROTO_ICMPV6;
	IP(f)[6] = LB_IPPROTO_FRAGMENT;
	put16(IP(f) + 4, (uint16_t)(mlen + 8));
	f->len += 8;
}

static const struct row rows[] = {
	{"ns", make_ns, m_none, 0},
	{"na", make_na, m_none, 0},
	{"ns without option", make_ns, m_no_opt, 0},
	{"ns, unknown option skipped", make_ns, m_opt_unknown, 0},
	{"ns for dad", make_ns, m_dad, 0},
	{"unsolicited na to all nodes", make_na, m_na_mcast_unsolicited, 0},
	{"ns hop limit 254", make_ns, m_hop254, -EINVAL},
	{"na hop limit 254", make_na, m_hop254, -EINVAL},
	{"ns code 1", make_ns, m_code1, -EINVAL},
	{"na bad checksum", make_na, m_csum, -EINVAL},
	{"ns bad checksum", make_ns, m_csum, -EINVAL},
	{"ns 23 bytes", make_ns, m_short, -EINVAL},
	{"ns multicast target", make_ns, m_mcast_target, -EINVAL},
	{"na multicast target", make_na, m_mcast_target, -EINVAL},
	{"option length 0", make_ns, m_opt_len0, -EINVAL},
	{"option past the message", make_na, m_opt_past, -EINVAL},
	{"link-layer option not ethernet", make_ns, m_opt_other_len, -EINVAL},
	{"dad with source link-layer option", make_ns, m_dad_with_lla, -EINVAL},
	{"dad to a unicast address", make_ns, m_dad_unicast, -EINVAL},
	{"na to multicast, solicited", make_na, m_na_mcast_solicited, -EINVAL},
	{"ns with a fragment header", make_ns, m_fragment, -EINVAL},
	{"echo request", make_ns, m_echo, -EPROTONOSUPPORT},
};

static void
test_validity(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct frame f;
		struct lb_nd_msg m;
		int rc;

		rows[i].base(&f);
		rows[i].mutate(&f);
		rc = parse(&f, &m);
		if (rc != rows[i].want)
			fail_msg("%s: got %d, want %d", rows[i].what, rc,
				 rows[i].want);
	}
}

static void
test_fields(void **state)
{
	struct frame f;
	struct lb_nd_msg m;

	(void)state;
	make_ns(&f);
	assert_int_equal(parse(&f, &m), 0);
	assert_int_equal(m.type, LB_ND_NS);
	assert_int_equal(m.has_lla, 1);
	assert_int_equal(m.dad, 0);
	assert_memory_equal(m.lla, PEER_MAC, 6);
	assert_memory_equal(m.eth_src, PEER_MAC, 6);
	assert_memory_equal(m.target, VIP, 16);
	assert_memory_equal(m.src, PEER, 16);
	assert_memory_equal(m.dst, SN_VIP, 16);

	make_na(&f);
	MSG(&f)[4] = LB_ND_F_SOLICITED | LB_ND_F_OVERRIDE | 0x1f;
	fix_csum(&f);
	assert_int_equal(parse(&f, &m), 0);
	assert_int_equal(m.type, LB_ND_NA);
	assert_int_equal(m.flags, LB_ND_F_SOLICITED | LB_ND_F_OVERRIDE);
	assert_memory_equal(m.lla, PEER_MAC, 6);
	assert_memory_equal(m.target, PEER, 16);
}

/* The answer to a solicitation for the VIP, byte for byte. */
static void
test_na_answer(void **state)
{
	static const uint8_t want[] = {
		/* to the solicitation's link-layer option, from us */
		0x02,
		0,
		0,
		0,
		0,
		0x02,
		0x02,
		0,
		0,
		0,
		0,
		0x01,
		0x86,
		0xdd,
		0x60,
		0,
		0,
		0,
		0,
		32,
		58,
		255,
		0x20,
		0x01,
		0x0d,
		0xb8,
		0,
		1,
		0,
		0,
		0,
		0,
		0,
		0,
		0,
		0,
		0,
		0x10,
		0x20,
		0x01,
		0x0d,
		0xb8,
		0,
		1,
		0,
		0,
		0,
		0,
		0,
		0,
		0,
		0xab,
		0xcd,
		0x07,
		/* NA, checksum (below), S and O, target VIP */
		136,
		0,
		0,
		0,
		0x60,
		0,
		0,
		0,
		0x20,
		0x01,
		0x0d,
		0xb8,
		0,
		1,
		0,
		0,
		0,
		0,
		0,
		0,
		0,
		0,
		0,
		0x10,
		/* target link-layer option */
		2,
		1,
		0x02,
		0,
		0,
		0,
		0,
		0x01,
	};
	const struct lb_nat_link link = {{0x02, 0, 0, 0, 0, 0x01}, 0, 0};
	struct frame f, out;
	struct lb_nd_msg ns, na;
	int n;

	(void)state;
	make_ns(&f);
	/* The frame's source differs from the option: the option wins. */
	memcpy(f.b + 6, OTHER_MAC, 6);
	assert_int_equal(parse(&f, &ns), 0);
	memset(&out, 0, sizeof(out));
	n = lb_nd_na_answer(out.b, sizeof(out.b), &link, &ns);
	assert_int_equal(n, sizeof(want));
	assert_true(csum_ok(out.b, 14));
	put16(out.b + 14 + 40 + 2, 0);
	assert_memory_equal(out.b, want, sizeof(want));

	/* Without an option, to the frame's source; and it parses back. */
	make_ns(&f);
	m_no_opt(&f);
	memcpy(f.b + 6, OTHER_MAC, 6);
	assert_int_equal(parse(&f, &ns), 0);
	out.len = (uint32_t)lb_nd_na_answer(out.b, sizeof(out.b), &link, &ns);
	out.l3 = 14;
	assert_memory_equal(out.b, OTHER_MAC, 6);
	assert_int_equal(parse(&out, &na), 0);
	assert_int_equal(na.flags, LB_ND_F_SOLICITED | LB_ND_F_OVERRIDE);
	assert_memory_equal(na.lla, OUR_MAC, 6);
	assert_memory_equal(na.target, VIP, 16);
	assert_memory_equal(na.dst, PEER, 16);
}

/* A duplicate address check is told to all nodes, unsolicited. */
static void
test_na_answer_dad(void **state)
{
	const struct lb_nat_link link = {{0x02, 0, 0, 0, 0, 0x01}, 1, 0x0064};
	static const uint8_t mac[6] = {0x33, 0x33, 0, 0, 0, 1};
	struct frame f, out;
	struct lb_nd_msg ns, na;

	(void)state;
	make_ns(&f);
	m_dad(&f);
	assert_int_equal(parse(&f, &ns), 0);
	assert_int_equal(ns.dad, 1);
	memset(&out, 0, sizeof(out));
	out.len = (uint32_t)lb_nd_na_answer(out.b, sizeof(out.b), &link, &ns);
	out.l3 = 18;
	assert_int_equal(out.len, 18 + 40 + 32);
	assert_memory_equal(out.b, mac, 6);
	assert_int_equal(get16(out.b + 12), LB_ETHER_TYPE_VLAN);
	assert_int_equal(get16(out.b + 14), 0x0064);
	assert_int_equal(parse(&out, &na), 0);
	assert_int_equal(na.flags, LB_ND_F_OVERRIDE);
	assert_memory_equal(na.dst, ALL_NODES, 16);
	assert_memory_equal(na.src, VIP, 16);
}

static void
test_ns_build(void **state)
{
	const struct lb_nat_link link = {{0x02, 0, 0, 0, 0, 0x01}, 0, 0};
	static const uint8_t mac[6] = {0x33, 0x33, 0xff, 0xab, 0xcd, 0x07};
	static const uint8_t sn[16] = {
		0xff,	     0x02,	  [11] = 1,   [12] = 0xff,
		[13] = 0xab, [14] = 0xcd, [15] = 0x07};
	struct frame out;
	struct lb_nd_msg ns;

	(void)state;
	memset(&out, 0, sizeof(out));
	out.len = (uint32_t)lb_nd_ns_build(out.b, sizeof(out.b), &link, VIP,
					   PEER, NULL);
	out.l3 = 14;
	assert_int_equal(out.len, 14 + 40 + 32);
	assert_memory_equal(out.b, mac, 6);
	assert_memory_equal(out.b + 6, OUR_MAC, 6);
	assert_true(csum_ok(out.b, 14));
	assert_int_equal(parse(&out, &ns), 0);
	assert_int_equal(ns.type, LB_ND_NS);
	assert_memory_equal(ns.dst, sn, 16);
	assert_memory_equal(ns.src, VIP, 16);
	assert_memory_equal(ns.target, PEER, 16);
	assert_int_equal(ns.has_lla, 1);
	assert_memory_equal(ns.lla, OUR_MAC, 6);

	/* Unicast revalidation: to the target, at the known MAC. */
	out.len = (uint32_t)lb_nd_ns_build(out.b, sizeof(out.b), &link, VIP,
					   PEER, PEER_MAC);
	assert_memory_equal(out.b, PEER_MAC, 6);
	assert_int_equal(parse(&out, &ns), 0);
	assert_memory_equal(ns.dst, PEER, 16);

	assert_int_equal(lb_nd_ns_build(out.b, sizeof(out.b), &link, VIP,
					ALL_NODES, NULL),
			 -EINVAL);
	assert_int_equal(lb_nd_ns_build(out.b, sizeof(out.b), &link, VIP, PEER,
					ALL_NODES + 0),
			 -EINVAL);
	assert_int_equal(lb_nd_ns_build(out.b, 85, &link, VIP, PEER, NULL),
			 -ENOSPC);
}

static void
test_na_announce(void **state)
{
	const struct lb_nat_link link = {{0x02, 0, 0, 0, 0, 0x01}, 0, 0};
	const struct lb_nat_link bad = {{0x03, 0, 0, 0, 0, 0x01}, 0, 0};
	static const uint8_t zero[16];
	struct frame out;
	struct lb_nd_msg na;

	(void)state;
	memset(&out, 0, sizeof(out));
	out.len = (uint32_t)lb_nd_na_announce(out.b, sizeof(out.b), &link, VIP);
	out.l3 = 14;
	assert_int_equal(out.len, 86);
	assert_memory_equal(out.b, "\x33\x33\0\0\0\x01", 6);
	assert_int_equal(parse(&out, &na), 0);
	assert_int_equal(na.type, LB_ND_NA);
	assert_int_equal(na.flags, LB_ND_F_OVERRIDE);
	assert_memory_equal(na.target, VIP, 16);
	assert_memory_equal(na.src, VIP, 16);
	assert_memory_equal(na.dst, ALL_NODES, 16);
	assert_memory_equal(na.lla, OUR_MAC, 6);
	assert_int_equal(lb_nd_na_announce(out.b, sizeof(out.b), &link, zero),
			 -EINVAL);
	assert_int_equal(lb_nd_na_announce(out.b, sizeof(out.b), &bad, VIP),
			 -EINVAL);
	assert_int_equal(lb_nd_na_announce(out.b, 85, &link, VIP), -ENOSPC);
}

/* Every prefix of a valid message is refused by the parsers, never read
 * past; an answer needs a solicitation. */
static void
test_truncated(void **state)
{
	const struct lb_nat_link link = {{0x02, 0, 0, 0, 0, 0x01}, 0, 0};
	struct frame f;
	struct lb_nd_msg m;

	(void)state;
	make_na(&f);
	assert_int_equal(parse(&f, &m), 0);
	assert_int_equal(lb_nd_na_answer(f.b, sizeof(f.b), &link, &m), -EINVAL);
	for (uint32_t len = 0; len < f.len; len++) {
		struct frame g = f;

		g.len = len;
		assert_int_not_equal(parse(&g, &m), 0);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_validity),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_na_answer),
		cmocka_unit_test(test_na_answer_dad),
		cmocka_unit_test(test_ns_build),
		cmocka_unit_test(test_na_announce),
		cmocka_unit_test(test_truncated),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
