/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the PROXY protocol headers (dataplane/splice/proxy_hdr.c): each
 * row is a connection and the header byte for byte as haproxy's
 * doc/proxy-protocol.txt lays it out (version 1 section 2.1, version 2
 * section 2.2, TLVs 2.2.3 and 2.2.5); the CRC32c values were computed
 * apart from this code, bit by bit.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lb/pkt_parse.h"
#include "proxy_hdr.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static struct lb_proxy_conn
conn(const char *src, const char *dst, uint16_t sport, uint16_t dport,
     uint8_t proto)
{
	struct lb_proxy_conn c = {.sport = htons(sport),
				  .dport = htons(dport),
				  .proto = proto};

	assert_int_equal(inet_pton(AF_INET, src, &c.src), 1);
	assert_int_equal(inet_pton(AF_INET, dst, &c.dst), 1);
	return c;
}

struct v1_row {
	const char *src, *dst;
	uint16_t sport, dport;
	const char *want;
};

static const struct v1_row v1_rows[] = {
	/* The spec's own example (section 2.1). */
	{"192.168.0.1", "192.168.0.11", 56324, 443,
	 "PROXY TCP4 192.168.0.1 192.168.0.11 56324 443\r\n"},
	/* Its longest line for TCP/IPv4: 56 characters. */
	{"255.255.255.255", "255.255.255.255", 65535, 65535,
	 "PROXY TCP4 255.255.255.255 255.255.255.255 65535 65535\r\n"},
	/* No leading zeros, a lone 0 where the number is zero. */
	{"0.0.0.0", "10.0.0.100", 0, 8, "PROXY TCP4 0.0.0.0 10.0.0.100 0 8\r\n"},
	{"1.20.3.40", "100.9.200.7", 1024, 80,
	 "PROXY TCP4 1.20.3.40 100.9.200.7 1024 80\r\n"},
};

static void
test_v1(void **state)
{
	char buf[LB_PROXY_V1_MAX + 8];

	(void)state;
	for (unsigned int i = 0; i < NELEM(v1_rows); i++) {
		const struct v1_row *r = &v1_rows[i];
		struct lb_proxy_conn c = conn(r->src, r->dst, r->sport,
					      r->dport, LB_IPPROTO_TCP);
		int want = (int)strlen(r->want);

		memset(buf, '#', sizeof(buf));
		assert_int_equal(lb_proxy_v1(buf, sizeof(buf), &c), want);
		assert_memory_equal(buf, r->want, (size_t)want);
		assert_int_equal(buf[want], '#');
		/* Exactly its length is enough; one byte less is not, and
		 * nothing is written then. */
		memset(buf, '#', sizeof(buf));
		assert_int_equal(lb_proxy_v1(buf, (size_t)want - 1, &c),
				 -ENOSPC);
		assert_int_equal(buf[0], '#');
		assert_int_equal(lb_proxy_v1(buf, (size_t)want, &c), want);
	}
	assert_int_equal(strlen(v1_rows[1].want), LB_PROXY_V1_MAX);
}

static void
test_v1_udp(void **state)
{
	struct lb_proxy_conn c = conn("192.0.2.1", "198.51.100.1", 5353, 53,
				      LB_IPPROTO_UDP);
	char buf[LB_PROXY_V1_MAX];

	(void)state;
	assert_int_equal(lb_proxy_v1(buf, sizeof(buf), &c), -EPROTONOSUPPORT);
}

#define SIG 0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a
/* 192.168.0.1 -> 192.168.0.11, 56324 -> 443 (0xdc04, 0x01bb). */
#define ADDR 0xc0, 0xa8, 0, 1, 0xc0, 0xa8, 0, 11, 0xdc, 0x04, 0x01, 0xbb

struct v2_row {
	const char *what;
	uint8_t proto;
	const char *uid;
	uint8_t crc;
	uint8_t want[80];
	int want_len;
};

static const struct v2_row v2_rows[] = {
	{"TCP over IPv4", LB_IPPROTO_TCP, NULL, 0,
	 {SIG, 0x21, 0x11, 0x00, 0x0c, ADDR}, 28},
	{"UDP over IPv4", LB_IPPROTO_UDP, NULL, 0,
	 {SIG, 0x21, 0x12, 0x00, 0x0c, ADDR}, 28},
	{"unique ID", LB_IPPROTO_TCP, "abc", 0,
	 {SIG, 0x21, 0x11, 0x00, 0x12, ADDR, 0x05, 0x00, 0x03, 'a', 'b', 'c'},
	 34},
	{"CRC32c", LB_IPPROTO_TCP, NULL, 1,
	 {SIG, 0x21, 0x11, 0x00, 0x13, ADDR, 0x03, 0x00, 0x04, 0x1c, 0x1a,
	  0xe9, 0xc6},
	 35},
	{"UDP, unique ID and CRC32c", LB_IPPROTO_UDP, "abc", 1,
	 {SIG, 0x21, 0x12, 0x00, 0x19, ADDR, 0x05, 0x00, 0x03, 'a', 'b', 'c',
	  0x03, 0x00, 0x04, 0xd7, 0x1c, 0x35, 0x22},
	 41},
};

static void
test_v2(void **state)
{
	uint8_t buf[LB_PROXY_V2_MAX + 4];

	(void)state;
	for (unsigned int i = 0; i < NELEM(v2_rows); i++) {
		const struct v2_row *r = &v2_rows[i];
		struct lb_proxy_conn c = conn("192.168.0.1", "192.168.0.11",
					      56324, 443, r->proto);
		struct lb_proxy_tlvs t = {
			.unique_id = (const uint8_t *)r->uid,
			.unique_id_len = (uint8_t)(r->uid ? strlen(r->uid) : 0),
			.crc32c = r->crc,
		};
		int got;

		memset(buf, 0xee, sizeof(buf));
		got = lb_proxy_v2(buf, sizeof(buf), &c, &t);
		if (got != r->want_len)
			fail_msg("%s: length %d, want %d", r->what, got,
				 r->want_len);
		assert_memory_equal(buf, r->want, (size_t)got);
		assert_int_equal(buf[got], 0xee);
		/* The length field counts what follows the fixed part. */
		assert_int_equal(buf[14] << 8 | buf[15], got - 16);
		assert_int_equal(lb_proxy_v2(buf, (size_t)got - 1, &c, &t),
				 -ENOSPC);
		if (!r->uid && !r->crc)
			assert_int_equal(lb_proxy_v2(buf, sizeof(buf), &c,
						     NULL),
					 r->want_len);
	}
}

/* A receiver checks the CRC by zeroing the field and recomputing. */
static void
test_v2_crc_verifies(void **state)
{
	static const uint8_t id[LB_PROXY_UNIQUE_ID_MAX] = {1, 2, 3};
	struct lb_proxy_conn c = conn("203.0.113.9", "198.51.100.20", 61000,
				      8443, LB_IPPROTO_TCP);
	struct lb_proxy_tlvs t = {id, sizeof(id), 1};
	uint8_t buf[LB_PROXY_V2_MAX];
	uint32_t crc;
	int n;

	(void)state;
	n = lb_proxy_v2(buf, sizeof(buf), &c, &t);
	assert_int_equal(n, LB_PROXY_V2_MAX);
	assert_int_equal(buf[n - 7], LB_PP2_TYPE_CRC32C);
	crc = (uint32_t)buf[n - 4] << 24 | (uint32_t)buf[n - 3] << 16 |
	      (uint32_t)buf[n - 2] << 8 | buf[n - 1];
	memset(buf + n - 4, 0, 4);
	assert_int_equal(lb_crc32c(0, buf, (size_t)n), crc);
	buf[20] ^= 1;
	assert_int_not_equal(lb_crc32c(0, buf, (size_t)n), crc);
}

static void
test_v2_bad(void **state)
{
	static const uint8_t id[LB_PROXY_UNIQUE_ID_MAX + 1];
	struct lb_proxy_conn c = conn("192.0.2.1", "192.0.2.2", 1, 2,
				      LB_IPPROTO_TCP);
	struct lb_proxy_tlvs t = {id, LB_PROXY_UNIQUE_ID_MAX + 1, 0};
	uint8_t buf[LB_PROXY_V2_MAX + 16];

	(void)state;
	assert_int_equal(lb_proxy_v2(buf, sizeof(buf), &c, &t), -EINVAL);
	t.unique_id_len = 0;
	assert_int_equal(lb_proxy_v2(buf, sizeof(buf), &c, &t), -EINVAL);
	t.unique_id_len = LB_PROXY_UNIQUE_ID_MAX;
	assert_int_equal(lb_proxy_v2(buf, sizeof(buf), &c, &t),
			 LB_PROXY_V2_IPV4 + 3 + LB_PROXY_UNIQUE_ID_MAX);
	c.proto = LB_IPPROTO_ICMP;
	assert_int_equal(lb_proxy_v2(buf, sizeof(buf), &c, NULL),
			 -EPROTONOSUPPORT);
}

static void
test_v2_local(void **state)
{
	static const uint8_t want[] = {SIG, 0x20, 0x00, 0x00, 0x00};
	uint8_t buf[32];

	(void)state;
	assert_int_equal(lb_proxy_v2_local(buf, sizeof(buf)), sizeof(want));
	assert_memory_equal(buf, want, sizeof(want));
	assert_int_equal(lb_proxy_v2_local(buf, 15), -ENOSPC);
}

/* The check value of CRC-32C (of "123456789"), whole and in pieces. */
static void
test_crc32c(void **state)
{
	static const char s[] = "123456789";

	(void)state;
	assert_int_equal(lb_crc32c(0, s, 9), 0xe3069283u);
	assert_int_equal(lb_crc32c(lb_crc32c(0, s, 4), s + 4, 5), 0xe3069283u);
	assert_int_equal(lb_crc32c(0, s, 0), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v1),
		cmocka_unit_test(test_v1_udp),
		cmocka_unit_test(test_v2),
		cmocka_unit_test(test_v2_crc_verifies),
		cmocka_unit_test(test_v2_bad),
		cmocka_unit_test(test_v2_local),
		cmocka_unit_test(test_crc32c),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
