/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of TCP sequence tracking (dataplane/flow/tcp_track.c): the window
 * scale option, and a connection's segments one after the other with the
 * verdict each must get (RFC 5961: exact RST accepted, in-window RST
 * challenged, anything out of window dropped), around the 2^32 wrap too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lb/flow_table.h"
#include "lb/pkt_parse.h"
#include "tcp_track.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

struct opt_row {
	const char *what;
	uint8_t opt[40];
	uint32_t len;
	int want;
};

static const struct opt_row opt_rows[] = {
	{"none", {0}, 0, -1},
	{"NOP NOP WS 7", {1, 1, 3, 3, 7}, 5, 7},
	{"Linux SYN: MSS SACK-ok TS NOP WS 7",
	 {2, 4, 5, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7},
	 20,
	 7},
	{"WS 14", {3, 3, 14, 0}, 4, 14},
	{"WS 15 reads as 14", {3, 3, 15, 0}, 4, 14},
	{"WS 0", {3, 3, 0, 0}, 4, 0},
	{"after the end of options", {0, 3, 3, 7}, 4, -1},
	{"length 0", {2, 0, 3, 3, 7}, 5, -1},
	{"length past the end", {2, 9, 3, 3, 7}, 5, -1},
	{"WS cut short", {1, 3, 3}, 3, -1},
	{"WS of length 4", {3, 4, 7, 0}, 4, -1},
};

static void
test_wscale_option(void **state)
{
	(void)state;
	for (unsigned int i = 0; i < NELEM(opt_rows); i++) {
		const struct opt_row *r = &opt_rows[i];
		int got = lb_tcp_opt_wscale(r->opt, r->len);

		if (got != r->want)
			fail_msg("%s: %d, want %d", r->what, got, r->want);
	}
	assert_int_equal(lb_tcp_opt_wscale(NULL, 4), -1);
}

enum { C = LB_TCP_TRK_ORIG, B = LB_TCP_TRK_REPLY };

struct step {
	const char *what;
	unsigned int dir;
	unsigned int state; /* of the flow before the segment */
	uint8_t flags;
	uint32_t seq, ack, len; /* relative to the ISNs below */
	uint16_t win;
	int8_t wscale;
	int want;
};

#define SYN LB_TCP_SYN
#define ACK LB_TCP_ACK
#define RST LB_TCP_RST
#define FIN LB_TCP_FIN
#define PASS LB_TCP_TRK_PASS
#define KEEP LB_TCP_TRK_KEEP
#define CHAL LB_TCP_TRK_CHALLENGE
#define DROP LB_TCP_TRK_DROP
#define SS LB_FLOW_SYN_SENT
#define SR LB_FLOW_SYN_RECV
#define ES LB_FLOW_ESTABLISHED

/*
 * Client ISN i, backend ISN r (seq of a client segment is i + seq, of a
 * backend segment r + seq; ack likewise on the other side's ISN). Both
 * scale by 7, and the SYNs' windows (64240 and 65160 bytes) are kept in
 * that unit, rounded up: 502 and 510, so the backend's window bounds the
 * client's numbers to WB bytes either side.
 */
#define WB (510u << 7)
static const struct step conn_steps[] = {
	{"client FIN before any answer, not exact", C, SS, FIN | ACK, 2, 0, 0,
	 501, -1, DROP},
	{"client data before any answer, not exact", C, SS, ACK, 2, 0, 10, 501,
	 -1, KEEP},
	{"backend FIN before its SYN-ACK", B, SS, FIN | ACK, 1, 1, 0, 509, -1,
	 DROP},
	{"backend RST not acknowledging the SYN", B, SS, RST | ACK, 0, 7, 0, 0,
	 -1, DROP},
	{"backend RST without ACK during the handshake", B, SS, RST, 0, 1, 0, 0,
	 -1, DROP},
	{"SYN-ACK not acknowledging the SYN", B, SS, SYN | ACK, 0, 2, 0, 65160,
	 7, KEEP},
	{"SYN-ACK", B, SS, SYN | ACK, 0, 1, 0, 65160, 7, PASS},
	{"handshake ACK acknowledging nothing sent", C, SR, ACK, 1, 100, 0, 501,
	 -1, KEEP},
	{"handshake ACK", C, SR, ACK, 1, 1, 0, 501, -1, PASS},
	{"request", C, ES, ACK, 1, 1, 100, 501, -1, PASS},
	{"response", B, ES, ACK, 1, 101, 1000, 509, -1, PASS},
	{"blind RST far off", C, ES, RST, 0x40000000u, 0, 0, 0, -1, DROP},
	{"blind RST just past the window", C, ES, RST, 101 + WB + 1, 0, 0,
	 0, -1, DROP},
	{"RST in window, not exact", C, ES, RST, 101 + WB, 0, 0, 0, -1,
	 CHAL},
	{"RST a window behind, not exact", C, ES, RST, 101 - WB, 0, 0, 0, -1,
	 CHAL},
	{"backend RST in window, not exact", B, ES, RST, 2000, 0, 0, 0, -1,
	 CHAL},
	{"blind FIN", C, ES, FIN | ACK, 0x80000000u, 1001, 0, 501, -1, DROP},
	{"blind data: forwarded, tracks nothing", C, ES, ACK, 0x90000000u, 1001,
	 100, 501, -1, KEEP},
	{"RST at the blind data's end: still out", C, ES, RST,
	 0x90000000u + 100, 0, 0, 0, -1, DROP},
	{"retransmitted request", C, ES, ACK, 1, 1, 100, 501, -1, PASS},
	{"client FIN", C, ES, FIN | ACK, 101, 1001, 0, 501, -1, PASS},
	{"backend RST, exact", B, LB_FLOW_CLOSING, RST | ACK, 1001, 102, 0, 0,
	 -1, PASS},
	{"client RST, exact (after its FIN)", C, LB_FLOW_CLOSED, RST, 102, 0, 0,
	 0, -1, PASS},
};

static void
run_steps(uint32_t iss, uint32_t irs)
{
	struct lb_tcp_track t;
	struct lb_tcp_seg syn = {.seq = iss, .win = 64240, .flags = SYN,
				 .wscale = 7};
	uint32_t seq, ack;
	uint16_t win;

	memset(&t, 0xa5, sizeof(t));
	lb_tcp_track_init(&t, &syn);
	assert_int_equal(t.end[C], iss + 1);
	for (unsigned int i = 0; i < NELEM(conn_steps); i++) {
		const struct step *st = &conn_steps[i];
		uint32_t base = st->dir == C ? iss : irs;
		uint32_t other = st->dir == C ? irs : iss;
		struct lb_tcp_seg s = {
			.seq = base + st->seq,
			.ack = other + st->ack,
			.len = st->len,
			.win = st->win,
			.flags = st->flags,
			.wscale = st->wscale,
		};
		int got = lb_tcp_track(&t, st->dir, st->state, &s);

		if (got != st->want)
			fail_msg("ISNs %#x/%#x, %s: verdict %d, want %d", iss,
				 irs, st->what, got, st->want);
		if (st->want == CHAL) {
			lb_tcp_track_challenge(&t, st->dir, &seq, &ack, &win);
			/* What the other side would send next, and an
			 * acknowledgement of all the RST's sender sent:
			 * its RST in answer is exact. */
			assert_int_equal(seq, t.end[!st->dir]);
			assert_int_equal(ack, t.end[st->dir]);
			assert_int_equal(ack, st->dir == C ? iss + 101
							   : irs + 1001);
		}
	}
}

static void
test_connection(void **state)
{
	(void)state;
	run_steps(0x1f2e3d4cu, 0x9a000001u);
	/* Sequence numbers wrapping inside the connection. */
	run_steps(0xffffffc0u, 0xfffffff0u);
	run_steps(0, 0xffffffffu);
}

/* Exact RSTs and FINs of a connection that has not been answered yet. */
static void
test_syn_sent(void **state)
{
	struct lb_tcp_seg syn = {.seq = 500, .win = 1000, .flags = SYN,
				 .wscale = -1};
	struct lb_tcp_seg s = {0};
	struct lb_tcp_track t;

	(void)state;
	lb_tcp_track_init(&t, &syn);
	s = (struct lb_tcp_seg){.seq = 502, .flags = RST, .wscale = -1};
	assert_int_equal(lb_tcp_track(&t, C, SS, &s), DROP);
	s.seq = 501;
	assert_int_equal(lb_tcp_track(&t, C, SS, &s), PASS);
	/* The backend's RST acknowledging the SYN. */
	s = (struct lb_tcp_seg){.ack = 501, .flags = RST | ACK, .wscale = -1};
	assert_int_equal(lb_tcp_track(&t, B, SS, &s), PASS);
	s = (struct lb_tcp_seg){.seq = 501, .flags = FIN | ACK, .wscale = -1};
	assert_int_equal(lb_tcp_track(&t, C, SS, &s), PASS);
	/* A repeated SYN with another ISN keeps the first one's. */
	s = (struct lb_tcp_seg){.seq = 9000, .flags = SYN, .wscale = -1};
	assert_int_equal(lb_tcp_track(&t, C, SS, &s), PASS);
	assert_int_equal(t.end[C], 502);
	/* A new connection on the closed tuple starts over. */
	s = (struct lb_tcp_seg){.seq = 9000, .flags = SYN, .wscale = -1};
	assert_int_equal(lb_tcp_track(&t, C, LB_FLOW_CLOSED, &s), PASS);
	assert_int_equal(t.end[C], 9001);
	assert_int_equal(t.seen, LB_TCP_TRK_SEEN_ORIG);
}

/* Without a scale option on both SYNs, windows count in bytes. */
static void
test_unscaled(void **state)
{
	struct lb_tcp_seg syn = {.seq = 0, .win = 1000, .flags = SYN,
				 .wscale = 7};
	struct lb_tcp_seg s;
	struct lb_tcp_track t;

	(void)state;
	lb_tcp_track_init(&t, &syn);
	s = (struct lb_tcp_seg){.seq = 0, .ack = 1, .win = 2000,
				.flags = SYN | ACK, .wscale = -1};
	assert_int_equal(lb_tcp_track(&t, B, SS, &s), PASS);
	assert_int_equal(t.ws, 0);
	/* The backend's window of 2000 bytes bounds the client. */
	s = (struct lb_tcp_seg){.seq = 1 + 2000, .flags = RST, .wscale = -1};
	assert_int_equal(lb_tcp_track(&t, C, SR, &s), CHAL);
	s.seq = 1 + 2001;
	assert_int_equal(lb_tcp_track(&t, C, SR, &s), DROP);
	/* The client's of 1000 bounds the backend. */
	s = (struct lb_tcp_seg){.seq = 1 + 1000, .flags = RST, .wscale = -1};
	assert_int_equal(lb_tcp_track(&t, B, SR, &s), CHAL);
	s.seq = 1 + 1001;
	assert_int_equal(lb_tcp_track(&t, B, SR, &s), DROP);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wscale_option),
		cmocka_unit_test(test_connection),
		cmocka_unit_test(test_syn_sent),
		cmocka_unit_test(test_unscaled),
	};

	return cmocka_run_group_tests_name("tcp_track", tests, NULL, NULL);
}
