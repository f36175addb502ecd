/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of handshake options (dataplane/splice/tcp_opts.c): reading
 * rows of option bytes as a receiver does (malformed and truncated ones
 * included), and writing every combination and reading it back.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tcp_opts.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define B32(v)                                                                 \
	(uint8_t)((uint32_t)(v) >> 24), (uint8_t)((uint32_t)(v) >> 16),        \
		(uint8_t)((uint32_t)(v) >> 8), (uint8_t)(v)
#define NOP 1
#define MSS(v) 2, 4, (uint8_t)((v) >> 8), (uint8_t)(v)
#define WS(v) 3, 3, (v)
#define SACKOK 4, 2
#define TS(a, b) 8, 10, B32(a), B32(b)

struct row {
	const char *what;
	uint8_t opt[40];
	uint32_t len;
	int rc;
	struct lb_tcp_opts want;
};

static const struct row rows[] = {
	{"none", {0}, 0, 0, {0, -1, false, false, 0, 0}},
	{"Linux's SYN",
	 {MSS(1460), SACKOK, TS(0x01020304, 0), NOP, WS(7)}, 20, 0,
	 {1460, 7, true, true, 0x01020304, 0}},
	{"MSS only", {MSS(536)}, 4, 0, {536, -1, false, false, 0, 0}},
	{"scale above 14 reads as 14", {NOP, WS(15)}, 4, 0,
	 {0, 14, false, false, 0, 0}},
	{"an ACK's timestamps", {NOP, NOP, TS(7, 0xfffffff0u)}, 12, 0,
	 {0, -1, false, true, 7, 0xfffffff0u}},
	{"end of options stops the walk", {MSS(1400), 0, WS(3)}, 8, 0,
	 {1400, -1, false, false, 0, 0}},
	{"MSS of the wrong length is skipped", {2, 3, 5, MSS(1200)}, 7, 0,
	 {1200, -1, false, false, 0, 0}},
	{"timestamps of the wrong length are skipped",
	 {8, 6, 1, 2, 3, 4, SACKOK}, 8, 0, {0, -1, true, false, 0, 0}},
	{"length below 2 stops it", {MSS(1300), 30, 1, WS(2)}, 9, -EINVAL,
	 {1300, -1, false, false, 0, 0}},
	{"length past the end stops it", {SACKOK, 3, 9, 1}, 5, -EINVAL,
	 {0, -1, true, false, 0, 0}},
	{"kind without length at the end", {NOP, NOP, NOP, 2}, 4, -EINVAL,
	 {0, -1, false, false, 0, 0}},
	{"unknown kinds are stepped over", {30, 4, 9, 9, MSS(1000)}, 8, 0,
	 {1000, -1, false, false, 0, 0}},
};

static void
test_read(void **state)
{
	(void)state;
	for (unsigned int i = 0; i < NELEM(rows); i++) {
		const struct row *r = &rows[i];
		struct lb_tcp_opts o;
		int rc = lb_tcp_opts_read(r->opt, r->len, &o);

		if (rc != r->rc || o.mss != r->want.mss ||
		    o.wscale != r->want.wscale ||
		    o.sack_ok != r->want.sack_ok || o.ts != r->want.ts ||
		    o.tsval != r->want.tsval || o.tsecr != r->want.tsecr)
			fail_msg("%s: rc %d mss %u ws %d sack %d ts %d %u/%u",
				 r->what, rc, o.mss, o.wscale, o.sack_ok, o.ts,
				 o.tsval, o.tsecr);
	}
}

/* Every combination written is read back the same, in at most 20 bytes
 * and a multiple of 4, and Linux's SYN layout comes out byte for byte. */
static void
test_put(void **state)
{
	static const uint8_t linux_syn[] = {MSS(1460), SACKOK,
					    TS(0x01020304, 0), NOP, WS(7)};
	uint8_t buf[LB_TCP_OPTS_SYN_MAX];

	(void)state;
	for (unsigned int c = 0; c < 32; c++) {
		struct lb_tcp_opts in = {
			.mss = c & 1 ? 1460 : 0,
			.wscale = c & 2 ? (int8_t)(c & 4 ? 14 : 0) : -1,
			.sack_ok = (c & 8) != 0,
			.ts = (c & 16) != 0,
			.tsval = c & 16 ? 0x8000000fu : 0,
			.tsecr = c & 16 ? 77 : 0,
		}, out;
		uint32_t n = lb_tcp_opts_put(buf, &in);

		assert_true(n <= LB_TCP_OPTS_SYN_MAX && n % 4 == 0);
		assert_int_equal(lb_tcp_opts_read(buf, n, &out), 0);
		assert_int_equal(out.mss, in.mss);
		assert_int_equal(out.wscale, in.wscale);
		assert_int_equal(out.sack_ok, in.sack_ok);
		assert_int_equal(out.ts, in.ts);
		assert_int_equal(out.tsval, in.tsval);
		assert_int_equal(out.tsecr, in.tsecr);
	}
	{
		struct lb_tcp_opts o = {1460, 7, true, true, 0x01020304, 0};

		assert_int_equal(lb_tcp_opts_put(buf, &o), sizeof(linux_syn));
		assert_memory_equal(buf, linux_syn, sizeof(linux_syn));
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_put),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
