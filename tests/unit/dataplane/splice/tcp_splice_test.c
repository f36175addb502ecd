/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of TCP sequence translation (dataplane/splice/tcp_splice.c): rows
 * of {offsets, segment, expected segment}, around the 2^32 wrap too, with
 * SACK blocks and timestamps at even and odd offsets and malformed or
 * truncated options; each row's checksum is checked against a full
 * recomputation, and translating back restores the segment byte for byte.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "bytes.h"
#include "csum.h"
#include "lb/pkt_parse.h"
#include "tcp_splice.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* A 32-bit number as four option bytes. */
#define B32(v)                                                                 \
	(uint8_t)((uint32_t)(v) >> 24), (uint8_t)((uint32_t)(v) >> 16),        \
		(uint8_t)((uint32_t)(v) >> 8), (uint8_t)(v)
#define NOP 1
#define SACK(n) 5, (uint8_t)(2 + 8 * (n))
#define TS 8, 10

enum { O = LB_TCP_SPL_ORIG, R = LB_TCP_SPL_REPLY };
#define ACK LB_TCP_ACK
#define SYN LB_TCP_SYN
#define S_SACK LB_TCP_SPL_SACK
#define S_TS LB_TCP_SPL_TS
#define S_BAD LB_TCP_SPL_BAD_OPT

struct row {
	const char *what;
	struct lb_tcp_splice sp;
	unsigned int dir;
	uint8_t flags;
	uint32_t seq, ack;
	uint8_t opt[40];
	uint8_t optlen; /* a multiple of 4 */
	int want;
	uint32_t want_seq, want_ack;
	uint8_t want_opt[40]; /* options after translation */
};

/* Client data 16 bytes ahead (a PROXY header), the backend's 1000. */
#define SP_BOTH {.seq = {16, 1000}}
/* The SYN proxy's shift of the backend's numbers, across 2^32. */
#define SP_WRAP {.seq = {0, 0x30}, .ts = {0, 0x200}}

static const struct row rows[] = {
	{"client data, no options", SP_BOTH, O, ACK, 1000, 5000, {0}, 0, 0,
	 1016, 4000, {0}},
	{"backend data, no options", SP_BOTH, R, ACK, 5000, 1000, {0}, 0, 0,
	 6000, 984, {0}},
	{"SYN: no ACK, the ack field is left alone", SP_BOTH, O, SYN, 999,
	 0xdeadbeef, {0}, 0, 0, 1015, 0xdeadbeef, {0}},
	{"seq wraps forward", SP_WRAP, R, ACK, 0xffffffe0u, 1, {0}, 0, 0,
	 0x10, 1, {0}},
	{"ack wraps back", SP_WRAP, O, ACK, 1, 0x10, {0}, 0, 0, 1,
	 0xffffffe0u, {0}},
	{"no offset, options kept", {{0, 0}, {0, 0}}, O, ACK, 7, 8,
	 {NOP, NOP, SACK(1), B32(100), B32(200)}, 12, S_SACK, 7, 8,
	 {NOP, NOP, SACK(1), B32(100), B32(200)}},
	{"SACK, 1 block", SP_BOTH, O, ACK, 1000, 5000,
	 {NOP, NOP, SACK(1), B32(6000), B32(7000)}, 12, S_SACK, 1016, 4000,
	 {NOP, NOP, SACK(1), B32(5000), B32(6000)}},
	{"SACK, 2 blocks", SP_BOTH, R, ACK, 5000, 1000,
	 {NOP, NOP, SACK(2), B32(2000), B32(2100), B32(3000), B32(3100)}, 20,
	 S_SACK, 6000, 984,
	 {NOP, NOP, SACK(2), B32(1984), B32(2084), B32(2984), B32(3084)}},
	{"SACK, 3 blocks", SP_BOTH, O, ACK, 1000, 5000,
	 {NOP, NOP, SACK(3), B32(6000), B32(6100), B32(7000), B32(7100),
	  B32(8000), B32(8100)},
	 28, S_SACK, 1016, 4000,
	 {NOP, NOP, SACK(3), B32(5000), B32(5100), B32(6000), B32(6100),
	  B32(7000), B32(7100)}},
	{"SACK, 4 blocks, across the wrap", SP_WRAP, O, ACK, 1, 0x10,
	 {NOP, NOP, SACK(4), B32(0x20), B32(0x28), B32(0x30), B32(0x38),
	  B32(0x10), B32(0x18), B32(0x40), B32(0x48)},
	 36, S_SACK, 1, 0xffffffe0u,
	 {NOP, NOP, SACK(4), B32(0xfffffff0u), B32(0xfffffff8u), B32(0),
	  B32(8), B32(0xffffffe0u), B32(0xffffffe8u), B32(0x10), B32(0x18)}},
	{"SACK at an odd offset", SP_BOTH, O, ACK, 1000, 5000,
	 {NOP, SACK(1), B32(0x00ff12ff), B32(0x0100ffff), NOP}, 12, S_SACK,
	 1016, 4000,
	 {NOP, SACK(1), B32(0x00ff12ff - 1000), B32(0x0100ffff - 1000),
	  NOP}},
	{"SACK on a segment without ACK: left alone", SP_BOTH, O, SYN, 1000,
	 0, {NOP, NOP, SACK(1), B32(6000), B32(7000)}, 12, 0, 1016, 0,
	 {NOP, NOP, SACK(1), B32(6000), B32(7000)}},
	{"timestamps, backend to client", SP_WRAP, R, ACK, 0xffffffe0u, 1,
	 {NOP, NOP, TS, B32(0xfffffe00u), B32(77)}, 12, S_TS, 0x10, 1,
	 {NOP, NOP, TS, B32(0), B32(77)}},
	{"timestamps, client to backend", SP_WRAP, O, ACK, 1, 0x10,
	 {NOP, NOP, TS, B32(78), B32(0x100)}, 12, S_TS, 1, 0xffffffe0u,
	 {NOP, NOP, TS, B32(78), B32(0xffffff00u)}},
	{"timestamps at an odd offset, then SACK", SP_WRAP, O, ACK, 1, 0x10,
	 {NOP, TS, B32(0x1234), B32(0xff00ff), NOP, SACK(1), B32(0x40),
	  B32(0x50)},
	 22 + 2, S_TS | S_SACK, 1, 0xffffffe0u,
	 {NOP, TS, B32(0x1234), B32(0xff00ff - 0x200), NOP, SACK(1),
	  B32(0x10), B32(0x20)}},
	{"SYN's timestamps: TSval only", SP_WRAP, R, SYN, 0xffffffe0u, 0,
	 {NOP, NOP, TS, B32(5), B32(0)}, 12, S_TS, 0x10, 0,
	 {NOP, NOP, TS, B32(0x205), B32(0)}},
	{"SACK cut by the header's end", SP_BOTH, O, ACK, 1000, 5000,
	 {NOP, NOP, SACK(1), B32(6000)}, 8, S_BAD, 1016, 4000,
	 {NOP, NOP, SACK(1), B32(6000)}},
	{"SACK of 11 bytes ignored, TS after it kept", SP_BOTH, O, ACK, 1000,
	 5000,
	 {5, 11, B32(6000), B32(7000), 0, TS, B32(1), B32(2), NOP, NOP, NOP},
	 24, S_BAD | S_TS, 1016, 4000,
	 {5, 11, B32(6000), B32(7000), 0, TS, B32(1), B32(2), NOP, NOP, NOP}},
	{"SACK with no block", SP_BOTH, O, ACK, 1000, 5000,
	 {NOP, NOP, SACK(0)}, 4, S_BAD, 1016, 4000, {NOP, NOP, SACK(0)}},
	{"timestamps of 8 bytes", SP_WRAP, R, ACK, 0, 1,
	 {8, 8, B32(1), 0, 0}, 8, S_BAD, 0x30, 1, {8, 8, B32(1), 0, 0}},
	{"option of length 0 stops the walk", SP_BOTH, O, ACK, 1000, 5000,
	 {2, 0, SACK(1), B32(6000), B32(7000), NOP, NOP}, 14 + 2, S_BAD, 1016,
	 4000, {2, 0, SACK(1), B32(6000), B32(7000), NOP, NOP}},
	{"kind without its length byte", SP_BOTH, O, ACK, 1000, 5000,
	 {NOP, NOP, NOP, 3}, 4, S_BAD, 1016, 4000, {NOP, NOP, NOP, 3}},
	{"SACK kept, then a length past the end", SP_BOTH, O, ACK, 1000, 5000,
	 {NOP, NOP, SACK(1), B32(6000), B32(7000), 2, 9, 0, 0}, 16,
	 S_SACK | S_BAD, 1016, 4000,
	 {NOP, NOP, SACK(1), B32(5000), B32(6000), 2, 9, 0, 0}},
	{"after the end of options", SP_BOTH, O, ACK, 1000, 5000,
	 {0, NOP, SACK(1), B32(6000), B32(7000), 0}, 12, 0, 1016, 4000,
	 {0, NOP, SACK(1), B32(6000), B32(7000), 0}},
	{"MSS, SACK-permitted, window scale untouched", SP_BOTH, R,
	 SYN | ACK, 0, 1000, {2, 4, 5, 0xb4, 4, 2, 3, 3, 7, 0, 0, 0}, 12, 0,
	 1000, 984, {2, 4, 5, 0xb4, 4, 2, 3, 3, 7, 0, 0, 0}},
};

static const uint8_t payload[] = "GET / HTTP/1.1\r\n\r\n!";

/* The pseudo-header's share of the sum (RFC 9293 3.1), fixed addresses. */
static uint32_t
pseudo(uint32_t tcp_len)
{
	static const uint8_t ph[] = {10, 0, 0, 1, 192, 168, 7, 9, 0, 6};
	uint8_t len[2] = {(uint8_t)(tcp_len >> 8), (uint8_t)tcp_len};

	return lb_csum_partial(len, 2, lb_csum_partial(ph, sizeof(ph), 0));
}

/* The checksum field a full computation gives. */
static uint16_t
full_csum(uint8_t *seg, uint32_t n)
{
	uint8_t save[2];
	uint16_t c;

	memcpy(save, seg + 16, 2);
	memset(seg + 16, 0, 2);
	c = (uint16_t)~lb_csum_fold(lb_csum_partial(seg, n, pseudo(n)));
	memcpy(seg + 16, save, 2);
	return c;
}

/* Header, options and payload of a row, its checksum right. */
static uint32_t
build(uint8_t *seg, uint8_t flags, uint32_t seq, uint32_t ack,
      const uint8_t *opt, uint32_t optlen)
{
	uint32_t hlen = LB_TCP_HDR_MIN + optlen;
	uint32_t n = hlen + (uint32_t)sizeof(payload);

	memset(seg, 0, LB_TCP_HDR_MIN);
	wr16(seg, 40000);
	wr16(seg + 2, 80);
	wr32(seg + 4, seq);
	wr32(seg + 8, ack);
	seg[12] = (uint8_t)(hlen / 4 << 4);
	seg[13] = flags;
	wr16(seg + 14, 502);
	memcpy(seg + LB_TCP_HDR_MIN, opt, optlen);
	memcpy(seg + hlen, payload, sizeof(payload));
	wr16_raw(seg + 16, full_csum(seg, n));
	return n;
}

static void
test_rows(void **state)
{
	(void)state;
	for (unsigned int i = 0; i < NELEM(rows); i++) {
		const struct row *r = &rows[i];
		struct lb_tcp_splice back = {
			.seq = {-r->sp.seq[0], -r->sp.seq[1]},
			.ts = {-r->sp.ts[0], -r->sp.ts[1]},
		};
		uint8_t seg[LB_TCP_HDR_MAX + sizeof(payload)];
		uint8_t want[sizeof(seg)], orig[sizeof(seg)];
		uint32_t n =
			build(seg, r->flags, r->seq, r->ack, r->opt, r->optlen);
		int got;

		assert_true(r->optlen % 4 == 0);
		build(want, r->flags, r->want_seq, r->want_ack, r->want_opt,
		      r->optlen);
		memcpy(orig, seg, n);
		got = lb_tcp_splice_seg(&r->sp, r->dir, seg, n);
		if (got != r->want)
			fail_msg("%s: result %d, want %d", r->what, got,
				 r->want);
		if (rd16_raw(seg + 16) != full_csum(seg, n))
			fail_msg("%s: checksum %04x, recomputed %04x", r->what,
				 rd16_raw(seg + 16), full_csum(seg, n));
		if (memcmp(seg, want, n) != 0)
			fail_msg("%s: segment differs (seq %08x ack %08x)",
				 r->what, rd32(seg + 4), rd32(seg + 8));
		/* The same segment again (a retransmission) translates the
		 * same; the opposite offsets restore it. */
		memcpy(seg, orig, n);
		assert_int_equal(lb_tcp_splice_seg(&r->sp, r->dir, seg, n),
				 r->want);
		assert_memory_equal(seg, want, n);
		lb_tcp_splice_seg(&back, r->dir, seg, n);
		if (memcmp(seg, orig, n) != 0)
			fail_msg("%s: not restored by the opposite offsets",
				 r->what);
	}
}

static void
test_malformed_header(void **state)
{
	static const struct lb_tcp_splice sp = SP_BOTH;
	uint8_t seg[LB_TCP_HDR_MAX + sizeof(payload)];
	uint8_t orig[sizeof(seg)];
	uint8_t opt[4] = {NOP, NOP, NOP, NOP};
	uint32_t n = build(seg, ACK, 1, 2, opt, sizeof(opt));

	(void)state;
	memcpy(orig, seg, n);
	/* Data offset past what the caller has: 24 bytes, 23 given. */
	assert_int_equal(lb_tcp_splice_seg(&sp, O, seg, 23), -EINVAL);
	assert_int_equal(lb_tcp_splice_seg(&sp, O, seg, 19), -EINVAL);
	seg[12] = 4 << 4;
	assert_int_equal(lb_tcp_splice_seg(&sp, O, seg, n), -EINVAL);
	seg[12] = 15 << 4; /* 60 bytes of header, 44 in the segment */
	assert_int_equal(lb_tcp_splice_seg(&sp, O, seg, 59), -EINVAL);
	seg[12] = orig[12];
	assert_memory_equal(seg, orig, n);
	/* The options end where the data offset says, not at the buffer's:
	 * the bytes after the header are payload, never read as options. */
	seg[12] = 5 << 4;
	seg[20] = 5;
	seg[21] = 10;
	assert_int_equal(lb_tcp_splice_seg(&sp, O, seg, n), 0);
	assert_int_equal(rd32(seg + 22), rd32(orig + 22));
}

/*
 * A PROXY header inserted before the client's first data: the segment
 * carrying it starts where the client's data did; the client's later
 * segments and retransmissions of them move on by its length, and the
 * backend's acknowledgements and SACK blocks move back, across 2^32.
 */
static void
test_insert(void **state)
{
	struct lb_tcp_splice sp = {{0, 0}, {0, 0}};
	uint32_t c = 0xffffffc0u; /* client's next sequence number */
	uint8_t opt[12] = {NOP, NOP, SACK(1), B32(c + 107 + 200),
			   B32(c + 107 + 300)};
	uint8_t seg[LB_TCP_HDR_MAX + sizeof(payload)];
	uint32_t n;

	(void)state;
	assert_int_equal(lb_tcp_splice_insert(&sp, O, c, 107), c);
	assert_int_equal(sp.seq[O], 107);
	n = build(seg, ACK, c + 100, 1, opt, 0);
	lb_tcp_splice_seg(&sp, O, seg, n);
	assert_int_equal(rd32(seg + 4), c + 207);
	n = build(seg, ACK, c + 100, 1, opt, 0); /* retransmitted */
	lb_tcp_splice_seg(&sp, O, seg, n);
	assert_int_equal(rd32(seg + 4), c + 207);
	n = build(seg, ACK, 1, c + 107 + 100, opt, sizeof(opt));
	assert_int_equal(lb_tcp_splice_seg(&sp, R, seg, n), S_SACK);
	assert_int_equal(rd32(seg + 8), c + 100);
	assert_int_equal(rd32(seg + 24), c + 200);
	assert_int_equal(rd32(seg + 28), c + 300);
	assert_int_equal(rd16_raw(seg + 16), full_csum(seg, n));
	/* A second insertion adds to the first. */
	assert_int_equal(lb_tcp_splice_insert(&sp, O, c + 500, 10), c + 607);
	assert_int_equal(sp.seq[O], 117);
}

/*
 * The SYN proxy: the client got cookie K and TSval T in its SYN-ACK; the
 * backend answered the worker's SYN with ISN b and TSval u. The client
 * sees the backend's data as if from K, and the backend sees the
 * client's acknowledgements of its own numbers.
 */
static void
test_synproxy(void **state)
{
	struct lb_tcp_splice sp = {{0, 0}, {0, 0}};
	uint32_t k = 0xfffffff0u, t = 0x7fffffc5u, b = 0x1234, u = 0xfffffe00u;
	uint8_t opt[12] = {NOP, NOP, TS, B32(u + 9), B32(333)};
	uint8_t copt[12] = {NOP, NOP, TS, B32(334), B32(t + 9)};
	uint8_t seg[LB_TCP_HDR_MAX + sizeof(payload)];
	uint32_t n;

	(void)state;
	lb_tcp_splice_synproxy(&sp, k, t, b, u);
	n = build(seg, ACK, b + 1, 1000, opt, sizeof(opt));
	assert_int_equal(lb_tcp_splice_seg(&sp, R, seg, n), S_TS);
	assert_int_equal(rd32(seg + 4), k + 1);
	assert_int_equal(rd32(seg + 8), 1000);
	assert_int_equal(rd32(seg + 24), t + 9);
	assert_int_equal(rd32(seg + 28), 333);
	n = build(seg, ACK, 1000, k + 1 + 20, copt, sizeof(copt));
	assert_int_equal(lb_tcp_splice_seg(&sp, O, seg, n), S_TS);
	assert_int_equal(rd32(seg + 4), 1000);
	assert_int_equal(rd32(seg + 8), b + 1 + 20);
	assert_int_equal(rd32(seg + 24), 334);
	assert_int_equal(rd32(seg + 28), u + 9);
	assert_int_equal(rd16_raw(seg + 16), full_csum(seg, n));
}

/*
 * Window rescaling: rows of {window, shift, expected}, clamped at 65535
 * going up and rounded down going down; the checksum stays right.
 */
static void
test_win(void **state)
{
	static const struct {
		uint16_t win;
		int shift;
		uint16_t want;
	} w[] = {
		{502, 0, 502},	   {502, 2, 2008},     {502, -2, 125},
		{0x4000, 2, 0xffff}, {0x3fff, 2, 0xfffc}, {1, 14, 0x4000},
		{0xffff, 15, 0xffff}, {0xffff, -14, 3},  {3, -2, 0},
		{7, -16, 0},	   {7, 16, 0xffff},
	};
	uint8_t seg[LB_TCP_HDR_MAX + sizeof(payload)];

	(void)state;
	for (unsigned int i = 0; i < NELEM(w); i++) {
		uint32_t n = build(seg, ACK, 1, 2, (const uint8_t[1]){0}, 0);

		wr16(seg + 14, w[i].win);
		wr16_raw(seg + 16, full_csum(seg, n));
		lb_tcp_splice_win(seg, w[i].shift);
		if (rd16(seg + 14) != w[i].want ||
		    rd16_raw(seg + 16) != full_csum(seg, n))
			fail_msg("row %u: window %u shift %d: got %u, checksum "
				 "%s",
				 i, w[i].win, w[i].shift, rd16(seg + 14),
				 rd16_raw(seg + 16) == full_csum(seg, n) ?
					 "right" :
					 "wrong");
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_malformed_header),
		cmocka_unit_test(test_insert),
		cmocka_unit_test(test_synproxy),
		cmocka_unit_test(test_win),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
