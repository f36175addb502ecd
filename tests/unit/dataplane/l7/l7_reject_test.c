/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the refusal of an HTTP request (dataplane/l7/l7_reject.c):
 * the exact answer, the segments that carry it (checksums verified the
 * way a receiver does), and the sequence numbers kept for a refused flow.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "csum.h"
#include "l7_reject.h"

static void
test_answer_503(void **state)
{
	static const char want[] = "HTTP/1.1 503 Service Unavailable\r\n"
				   "Content-Type: text/plain\r\n"
				   "Content-Length: 20\r\n"
				   "Retry-After: 7\r\n"
				   "Connection: close\r\n"
				   "\r\n"
				   "Service Unavailable\n";
	char buf[LB_L7_REJECT_HTTP_MAX];
	int n;

	(void)state;
	n = lb_l7_reject_http(buf, sizeof(buf), 503, 7);
	assert_int_equal(n, (int)strlen(want));
	assert_memory_equal(buf, want, strlen(want));
}

static void
test_answer_429(void **state)
{
	static const char want[] = "HTTP/1.1 429 Too Many Requests\r\n"
				   "Content-Type: text/plain\r\n"
				   "Content-Length: 18\r\n"
				   "Retry-After: 86400\r\n"
				   "Connection: close\r\n"
				   "\r\n"
				   "Too Many Requests\n";
	char buf[LB_L7_REJECT_HTTP_MAX];

	(void)state;
	assert_int_equal(lb_l7_reject_http(buf, sizeof(buf), 429, 86400),
			 (int)strlen(want));
	assert_memory_equal(buf, want, strlen(want));
	/* The largest answer fits the documented bound. */
	assert_true(strlen(want) < LB_L7_REJECT_HTTP_MAX);
}

/* `rebind close`: the client is to connect again at once, so no
 * Retry-After whatever is passed. */
static void
test_answer_421(void **state)
{
	static const char want[] = "HTTP/1.1 421 Misdirected Request\r\n"
				   "Content-Type: text/plain\r\n"
				   "Content-Length: 20\r\n"
				   "Connection: close\r\n"
				   "\r\n"
				   "Misdirected Request\n";
	char buf[LB_L7_REJECT_HTTP_MAX];

	(void)state;
	assert_int_equal(lb_l7_reject_http(buf, sizeof(buf), 421, 5),
			 (int)strlen(want));
	assert_memory_equal(buf, want, strlen(want));
	assert_int_equal(lb_l7_reject_http(buf, 60, 421, 0), -ENOSPC);
}

static void
test_answer_errors(void **state)
{
	char buf[LB_L7_REJECT_HTTP_MAX];

	(void)state;
	assert_int_equal(lb_l7_reject_http(buf, sizeof(buf), 500, 1), -EINVAL);
	assert_int_equal(lb_l7_reject_http(NULL, 10, 503, 1), -EINVAL);
	assert_int_equal(lb_l7_reject_http(buf, 40, 503, 1), -ENOSPC);
	assert_null(lb_l7_reject_phrase(200));
	assert_string_equal(lb_l7_reject_phrase(503), "Service Unavailable");
}

static uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/* A segment from port 80 to 40000 carrying @p pay, its addresses unset. */
static struct lb_l7_rej_seg
seg_of(const char *pay)
{
	return (struct lb_l7_rej_seg){
		.sport = __builtin_bswap16(80),
		.dport = __builtin_bswap16(40000),
		.seq = 0x89abcdef,
		.ack = 0x01020304,
		.flags = 0x19,
		.win = 65535,
		.data = pay,
		.len = (uint16_t)strlen(pay),
	};
}

/* The TCP header and payload seg_of() gave at @p th, and its checksum
 * with the pseudo-header @p pseudo as a receiver checks it. */
static void
check_tcp(const uint8_t *th, const uint8_t *pseudo, size_t plen)
{
	assert_int_equal(rd16(th), 80);
	assert_int_equal(rd16(th + 2), 40000);
	assert_int_equal(rd32(th + 4), 0x89abcdef);
	assert_int_equal(rd32(th + 8), 0x01020304);
	assert_int_equal(th[12], 0x50);
	assert_int_equal(th[13], 0x19);
	assert_int_equal(rd16(th + 14), 65535);
	assert_memory_equal(th + 20, "hello", 5);
	assert_int_equal(lb_csum_fold(lb_csum_partial(
				 th, 25, lb_csum_partial(pseudo, plen, 0))),
			 0xffff);
}

/* @p s written after link header @p eth into @p f (filled with 0xee
 * first), which it leaves alone. @return lb_l7_reject_seg()'s length. */
static int
write_seg(uint8_t *f, size_t cap, const uint8_t eth[14],
	  const struct lb_l7_rej_seg *s)
{
	int n;

	memset(f, 0xee, cap);
	memcpy(f, eth, 14);
	n = lb_l7_reject_seg(f, (uint32_t)cap, 14, s);
	assert_memory_equal(f, eth, 14);
	return n;
}

static void
test_segment(void **state)
{
	uint8_t f[256];
	uint8_t pseudo[12];
	const uint8_t eth[14] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 8, 0};
	struct lb_l7_rej_seg s = seg_of("hello");
	const char *pay = "hello";
	int n;

	(void)state;
	/* 192.0.2.1:80 -> 198.51.100.7:40000, network order */
	s.src = __builtin_bswap32(0xc0000201);
	s.dst = __builtin_bswap32(0xc6336407);
	n = write_seg(f, sizeof(f), eth, &s);
	assert_int_equal(n, 14 + 20 + 20 + 5);
	assert_int_equal(f[14], 0x45);
	assert_int_equal(rd16(f + 16), 45);
	assert_int_equal(rd16(f + 20), 0x4000);
	assert_int_equal(f[22], 64);
	assert_int_equal(f[23], 6);
	assert_int_equal(rd32(f + 26), 0xc0000201);
	assert_int_equal(rd32(f + 30), 0xc6336407);
	/* A receiver's check: the header sums to 0xffff. */
	assert_int_equal(lb_csum(f + 14, 20), 0);
	assert_int_equal(rd16(f + 52), 0);
	memcpy(pseudo, f + 26, 8);
	pseudo[8] = 0;
	pseudo[9] = 6;
	pseudo[10] = 0;
	pseudo[11] = 25;
	check_tcp(f + 34, pseudo, sizeof(pseudo));
	/* Too small a frame, missing payload. */
	assert_int_equal(lb_l7_reject_seg(f, 58, 14, &s), -ENOSPC);
	s.data = NULL;
	assert_int_equal(lb_l7_reject_seg(f, sizeof(f), 14, &s), -EINVAL);
	/* The payload may already be where it goes. */
	s.data = f + 54;
	assert_int_equal(lb_l7_reject_seg(f, sizeof(f), 14, &s), n);
	assert_memory_equal(f + 54, pay, 5);
}

/* An IPv6 segment: the header a receiver takes, the checksum over the
 * IPv6 pseudo-header (RFC 8200 8.1). */
static void
test_segment6(void **state)
{
	uint8_t f[256], pseudo[40];
	const uint8_t eth[14] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
				 0x86, 0xdd};
	const uint8_t vip[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 1};
	const uint8_t cli[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 7};
	struct lb_l7_rej_seg s = seg_of("hello");
	int n;

	(void)state;
	s.src6 = vip;
	s.dst6 = cli;
	n = write_seg(f, sizeof(f), eth, &s);
	assert_int_equal(n, 14 + 40 + 20 + 5);
	assert_int_equal(f[14], 0x60);
	assert_int_equal(rd16(f + 18), 25);
	assert_int_equal(f[20], 6);
	assert_int_equal(f[21], 64);
	assert_memory_equal(f + 22, vip, 16);
	assert_memory_equal(f + 38, cli, 16);
	/* Refused before a byte is written: one octet short, no
	 * destination. */
	assert_int_equal(lb_l7_reject_seg(f, 78, 14, &s), -ENOSPC);
	s.dst6 = NULL;
	assert_int_equal(lb_l7_reject_seg(f, sizeof(f), 14, &s), -EINVAL);
	memcpy(pseudo, f + 22, 32);
	memcpy(pseudo + 32, (const uint8_t[8]){0, 0, 0, 25, 0, 0, 0, 6}, 8);
	check_tcp(f + 54, pseudo, sizeof(pseudo));
}

static void
refused(struct lb_l7_rej *r, bool fin)
{
	memset(r, 0, sizeof(*r));
	/* server next 5000, client next 1100, answer 100 octets */
	lb_l7_rej_refuse(r, LB_L7_REJ_GOVERNOR, 503, 1, 5000, 1100, fin, 100);
}

static void
test_refuse_seq(void **state)
{
	struct lb_l7_rej r;

	(void)state;
	refused(&r, false);
	assert_int_equal(r.state, LB_L7_RJ_DONE);
	assert_int_equal(r.cli_nxt, 1100);
	assert_int_equal(lb_l7_rej_fin_end(&r), 5101);
	refused(&r, true);
	assert_int_equal(r.cli_nxt, 1101);
	assert_true(r.cli_fin);
}

static void
test_client_fin(void **state)
{
	struct lb_l7_rej r;

	(void)state;
	refused(&r, false);
	/* The client acknowledges our FIN: nothing to say. */
	assert_int_equal(lb_l7_rej_client(&r, 1100, 0, true, 5101, false),
			 LB_L7_RJ_NOTHING);
	/* Its FIN at the next octet is taken and acknowledged. */
	assert_int_equal(lb_l7_rej_client(&r, 1100, 0, true, 5101, true),
			 LB_L7_RJ_ACK);
	assert_int_equal(r.cli_nxt, 1101);
	/* The same FIN again: acknowledged where we stand. */
	assert_int_equal(lb_l7_rej_client(&r, 1100, 0, true, 5101, true),
			 LB_L7_RJ_ACK);
	assert_int_equal(r.cli_nxt, 1101);
}

static void
test_client_data_and_loss(void **state)
{
	struct lb_l7_rej r;

	(void)state;
	refused(&r, false);
	/* More data (a pipelined request) with its FIN: read, discarded,
	 * acknowledged. */
	assert_int_equal(lb_l7_rej_client(&r, 1100, 50, true, 5101, true),
			 LB_L7_RJ_ACK);
	assert_int_equal(r.cli_nxt, 1151);
	/* A segment that shows the answer was lost: sent again. */
	refused(&r, false);
	assert_int_equal(lb_l7_rej_client(&r, 1000, 100, true, 5000, false),
			 LB_L7_RJ_RESEND);
	assert_int_equal(r.cli_nxt, 1100);
	/* Beyond a gap: not taken, acknowledged where we stand. */
	assert_int_equal(lb_l7_rej_client(&r, 1200, 10, true, 5101, false),
			 LB_L7_RJ_ACK);
	assert_int_equal(r.cli_nxt, 1100);
	/* Across the sequence wrap. */
	memset(&r, 0, sizeof(r));
	lb_l7_rej_refuse(&r, LB_L7_REJ_RATE, 429, 1, UINT32_MAX - 10,
			 UINT32_MAX, false, 100);
	assert_int_equal(lb_l7_rej_fin_end(&r), 90);
	assert_int_equal(lb_l7_rej_client(&r, UINT32_MAX, 0, true, 90, true),
			 LB_L7_RJ_ACK);
	assert_int_equal(r.cli_nxt, 0);
	assert_int_equal(lb_l7_rej_client(&r, 0, 0, true, 80, false),
			 LB_L7_RJ_RESEND);
	/* Not refused: nothing. */
	memset(&r, 0, sizeof(r));
	assert_int_equal(lb_l7_rej_client(&r, 0, 10, true, 0, true),
			 LB_L7_RJ_NOTHING);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_answer_503),
		cmocka_unit_test(test_answer_429),
		cmocka_unit_test(test_answer_421),
		cmocka_unit_test(test_answer_errors),
		cmocka_unit_test(test_segment),
		cmocka_unit_test(test_segment6),
		cmocka_unit_test(test_refuse_seq),
		cmocka_unit_test(test_client_fin),
		cmocka_unit_test(test_client_data_and_loss),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
