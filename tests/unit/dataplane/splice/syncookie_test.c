/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of SYN cookies (dataplane/splice/syncookie.c): SipHash-2-4 against
 * the reference vectors of its paper, a cookie against a value computed
 * apart from this code, then rows of {the client's SYN, what happens
 * before its ACK, the ACK's verdict and the options decoded}: each MSS
 * class, timestamps on and off, expired, forged (every bit flipped), for
 * another tuple, and across secret rotations.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "syncookie.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* The paper's key 00 01 .. 0f, read little-endian. */
static const uint64_t ref_key[2] = {0x0706050403020100ull,
				    0x0f0e0d0c0b0a0908ull};

/* SipHash-2-4 of the messages 00 01 .. n-1, n = 0..20 (the reference
 * implementation's vectors). */
static const uint64_t ref_vec[] = {
	0x726fdb47dd0e0e31ull, 0x74f839c593dc67fdull, 0x0d6c8009d9a94f5aull,
	0x85676696d7fb7e2dull, 0xcf2794e0277187b7ull, 0x18765564cd99a68dull,
	0xcbc9466e58fee3ceull, 0xab0200f58b01d137ull, 0x93f5f5799a932462ull,
	0x9e0082df0ba9e4b0ull, 0x7a5dbbc594ddb9f3ull, 0xf4b32f46226bada7ull,
	0x751e8fbc860ee5fbull, 0x14ea5627c0843d90ull, 0xf723ca908e7af2eeull,
	0xa129ca6149be45e5ull, 0x3f2acc7f57c29bdbull, 0x699ae9f52cbe4794ull,
	0x4bc1b3f0968dd39cull, 0xbb6dc91da77961bdull, 0xbed65cf21aa2ee98ull,
};

static void
test_siphash_vectors(void **state)
{
	uint8_t msg[NELEM(ref_vec)];

	(void)state;
	for (unsigned int i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)i;
	for (unsigned int n = 0; n < NELEM(ref_vec); n++)
		if (lb_siphash24(ref_key, msg, n) != ref_vec[n])
			fail_msg("%u bytes: %016llx", n,
				 (unsigned long long)lb_siphash24(ref_key, msg,
								  n));
}

static const uint64_t key_a[2] = {0x0123456789abcdefull,
				  0xfedcba9876543210ull};
static const uint64_t key_b[2] = {0x1111111122222222ull,
				  0x3333333344444444ull};
static const uint64_t key_c[2] = {0x5555555566666666ull,
				  0x7777777788888888ull};

/* key_a current, in slot 1 (one rekey from nothing). */
static void
secrets(struct lb_syncookie_secrets *s)
{
	memset(s, 0, sizeof(*s));
	lb_syncookie_rekey(s, key_a);
}

static struct lb_syncookie_tuple
tuple(void)
{
	struct lb_syncookie_tuple t = {
		.sport = htons(40000),
		.dport = htons(443),
		.cisn = 0x12345678,
	};
	static const uint8_t sa[4] = {192, 0, 2, 7}, da[4] = {198, 51, 100, 1};

	memcpy(&t.saddr, sa, 4);
	memcpy(&t.daddr, da, 4);
	return t;
}

/*
 * The cookie's layout, frozen: this value comes from a separate
 * implementation of the layout in dataplane/splice/syncookie.h (SipHash-2-4 of
 * 192.0.2.7, 198.51.100.1, ports 40000 and 443, ISN 0x12345678, counter
 * 1000000 / 64 = 15625 << 2 | class 3, little-endian), so a change of
 * format shows here.
 */
static void
test_known_cookie(void **state)
{
	struct lb_syncookie_secrets s;
	struct lb_syncookie_tuple t = tuple();
	struct lb_syncookie_clock now = {.sec = 1000000, .ts = 5};
	struct lb_syncookie_opts in = {.mss = 1460, .wscale = -1};
	uint32_t tsval = 1;

	(void)state;
	secrets(&s);
	assert_int_equal(lb_syncookie_make(&s, &t, &now, &in, &tsval),
			 0xebe46117u);
	assert_int_equal(tsval, 0);
	in.mss = 1300;
	assert_int_equal(lb_syncookie_make(&s, &t, &now, &in, &tsval),
			 0xc2c2a795u);
}

enum change {
	NONE,
	ROTATE,  /* one new secret between the SYN and the ACK */
	ROTATE2, /* two: the cookie's secret is gone */
	SADDR,
	DADDR,
	SPORT,
	DPORT,
	CISN,
	NO_TS, /* the ACK carries no timestamps */
};

struct row {
	const char *what;
	struct lb_syncookie_opts in;
	uint64_t sec;      /* of the SYN */
	uint32_t later;    /* seconds until the ACK */
	uint32_t ts, ts_ack; /* timestamp clock at the SYN, at the ACK */
	enum change change;
	int want;
	struct lb_syncookie_opts out;
};

#define T0 6400000 /* the start of a counter period */
#define NOOPT(m) {.mss = (m), .wscale = -1}
#define OK LB_SYNCOOKIE_OK
#define EXPIRED LB_SYNCOOKIE_EXPIRED
#define FORGED LB_SYNCOOKIE_FORGED
#define BAD_TS LB_SYNCOOKIE_BAD_TS

static const struct row rows[] = {
	{"MSS 1460", NOOPT(1460), T0, 1, 0, 0, NONE, OK, NOOPT(1460)},
	{"MSS 9000: largest class", NOOPT(9000), T0, 1, 0, 0, NONE, OK,
	 NOOPT(1460)},
	{"MSS 1459", NOOPT(1459), T0, 1, 0, 0, NONE, OK, NOOPT(1440)},
	{"MSS 1440", NOOPT(1440), T0, 1, 0, 0, NONE, OK, NOOPT(1440)},
	{"MSS 1439", NOOPT(1439), T0, 1, 0, 0, NONE, OK, NOOPT(1300)},
	{"MSS 1300", NOOPT(1300), T0, 1, 0, 0, NONE, OK, NOOPT(1300)},
	{"MSS 1299", NOOPT(1299), T0, 1, 0, 0, NONE, OK, NOOPT(536)},
	{"MSS 536", NOOPT(536), T0, 1, 0, 0, NONE, OK, NOOPT(536)},
	{"MSS 88: smallest class", NOOPT(88), T0, 1, 0, 0, NONE, OK,
	 NOOPT(536)},
	{"no timestamps: window scale and SACK lost",
	 {1460, 7, true, false, false}, T0, 1, 0, 0, NONE, OK, NOOPT(1460)},
	{"timestamps, scale 7, SACK", {1460, 7, true, false, true}, T0, 1,
	 100000, 100500, NONE, OK, {1460, 7, true, false, true}},
	{"timestamps, scale 0, no SACK", {1440, 0, false, false, true}, T0, 1,
	 100000, 100500, NONE, OK, {1440, 0, false, false, true}},
	{"timestamps, scale 14, ECN", {1300, 14, false, true, true}, T0, 1,
	 100000, 100500, NONE, OK, {1300, 14, false, true, true}},
	{"timestamps, scale 15 read as 14", {536, 15, true, true, true}, T0,
	 1, 100000, 100500, NONE, OK, {536, 14, true, true, true}},
	{"timestamps, no scale, SACK, ECN", {1460, -1, true, true, true}, T0,
	 1, 100000, 100500, NONE, OK, {1460, -1, true, true, true}},
	{"timestamps at the clock's wrap", {1460, 7, true, true, true}, T0, 1,
	 0x10, 0x30, NONE, OK, {1460, 7, true, true, true}},
	{"timestamps: a TSval of 0 moved a step back", {536, 0, false, false,
	 true}, T0, 1, 0x20, 0x30, NONE, OK, {536, 0, false, false, true}},
	{"timestamps, but none on the ACK", {1460, 7, true, false, true}, T0,
	 1, 100000, 100500, NO_TS, OK, NOOPT(1460)},
	{"TSecr from the future", {1460, 7, true, false, true}, T0, 1, 100000,
	 99000, NONE, BAD_TS, {0}},
	{"end of one period, ACK in the next", NOOPT(1460), T0 + 63, 1, 0, 0,
	 NONE, OK, NOOPT(1460)},
	{"127 s: one period later", NOOPT(1460), T0, 127, 0, 0, NONE, OK,
	 NOOPT(1460)},
	{"128 s: expired", NOOPT(1460), T0, 128, 0, 0, NONE, EXPIRED, {0}},
	{"3 periods: expired", NOOPT(1300), T0, 3 * 64, 0, 0, NONE, EXPIRED,
	 {0}},
	{"4 periods: no longer told from forged", NOOPT(1300), T0, 4 * 64, 0,
	 0, NONE, FORGED, {0}},
	{"after a rotation: the previous secret", {1460, 7, true, false, true},
	 T0, 30, 100000, 100500, ROTATE, OK, {1460, 7, true, false, true}},
	{"after two rotations", NOOPT(1460), T0, 30, 0, 0, ROTATE2, FORGED,
	 {0}},
	{"another client address", NOOPT(1460), T0, 1, 0, 0, SADDR, FORGED,
	 {0}},
	{"another VIP", NOOPT(1460), T0, 1, 0, 0, DADDR, FORGED, {0}},
	{"another client port", NOOPT(1460), T0, 1, 0, 0, SPORT, FORGED, {0}},
	{"another service port", NOOPT(1460), T0, 1, 0, 0, DPORT, FORGED, {0}},
	{"another client ISN", NOOPT(1460), T0, 1, 0, 0, CISN, FORGED, {0}},
};

static void
apply(const struct row *r, struct lb_syncookie_secrets *s,
      struct lb_syncookie_tuple *t)
{
	switch (r->change) {
	case ROTATE2:
		lb_syncookie_rekey(s, key_c);
		/* fall through */
	case ROTATE:
		lb_syncookie_rekey(s, key_b);
		break;
	case SADDR:
		t->saddr ^= htonl(1);
		break;
	case DADDR:
		t->daddr ^= htonl(0x100);
		break;
	case SPORT:
		t->sport = htons(40001);
		break;
	case DPORT:
		t->dport = htons(80);
		break;
	case CISN:
		t->cisn++;
		break;
	default:
		break;
	}
}

static void
check_row(const struct row *r)
{
	struct lb_syncookie_secrets s;
	struct lb_syncookie_tuple t = tuple();
	struct lb_syncookie_clock now = {r->sec, r->ts};
	struct lb_syncookie_opts out;
	uint32_t cookie, tsval;
	int got;

	secrets(&s);
	cookie = lb_syncookie_make(&s, &t, &now, &r->in, &tsval);
	if (r->in.ts) {
		/* Not later than the clock, and the options in its low bits. */
		assert_true((int32_t)(tsval - r->ts) <= 0);
		assert_true((int32_t)(r->ts - tsval) < 128);
		assert_int_not_equal(tsval, 0);
	} else {
		assert_int_equal(tsval, 0);
	}
	apply(r, &s, &t);
	now.sec += r->later;
	now.ts = r->ts_ack;
	memset(&out, 0x5a, sizeof(out));
	got = lb_syncookie_check(&s, &t, &now, cookie,
				 r->change == NO_TS ? 0 : tsval, &out);
	if (got != r->want)
		fail_msg("%s: verdict %d, want %d", r->what, got, r->want);
	if (got != OK)
		return;
	if (out.mss != r->out.mss || out.wscale != r->out.wscale ||
	    out.sack != r->out.sack || out.ecn != r->out.ecn ||
	    out.ts != r->out.ts)
		fail_msg("%s: mss %u wscale %d sack %d ecn %d ts %d", r->what,
			 out.mss, out.wscale, out.sack, out.ecn, out.ts);
}

static void
test_rows(void **state)
{
	(void)state;
	for (unsigned int i = 0; i < NELEM(rows); i++)
		check_row(&rows[i]);
}

/* Any one bit of a valid cookie flipped: counter, key, MSS class or MAC. */
static void
test_bit_flips(void **state)
{
	struct lb_syncookie_secrets s;
	struct lb_syncookie_tuple t = tuple();
	struct lb_syncookie_clock now = {T0 + 70, 1000};
	struct lb_syncookie_opts in = {1440, 7, true, false, true}, out;
	uint32_t tsval, cookie;

	(void)state;
	secrets(&s);
	cookie = lb_syncookie_make(&s, &t, &now, &in, &tsval);
	assert_int_equal(lb_syncookie_check(&s, &t, &now, cookie, tsval, &out),
			 OK);
	for (unsigned int b = 0; b < 32; b++) {
		int got = lb_syncookie_check(&s, &t, &now, cookie ^ 1u << b,
					     tsval, &out);

		if (got != FORGED)
			fail_msg("bit %u flipped: verdict %d", b, got);
	}
}

/* Cookies made after a rotation use the new secret, and both check. */
static void
test_rotation(void **state)
{
	struct lb_syncookie_secrets s;
	struct lb_syncookie_tuple t = tuple();
	struct lb_syncookie_clock now = {T0, 0};
	struct lb_syncookie_opts in = NOOPT(1460), out;
	uint32_t tsval, before, after;

	(void)state;
	secrets(&s);
	before = lb_syncookie_make(&s, &t, &now, &in, &tsval);
	lb_syncookie_rekey(&s, key_b);
	after = lb_syncookie_make(&s, &t, &now, &in, &tsval);
	assert_int_not_equal(before >> 4 & 1, after >> 4 & 1);
	assert_int_equal(lb_syncookie_check(&s, &t, &now, before, 0, &out),
			 OK);
	assert_int_equal(lb_syncookie_check(&s, &t, &now, after, 0, &out), OK);
	lb_syncookie_rekey(&s, key_c);
	assert_int_equal(lb_syncookie_check(&s, &t, &now, before, 0, &out),
			 FORGED);
	assert_int_equal(lb_syncookie_check(&s, &t, &now, after, 0, &out), OK);
}

/* The secrets from getrandom(): drawn, and rotated with the previous
 * one kept. */
static void
test_random_secrets(void **state)
{
	struct lb_syncookie_secrets s, was;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(lb_syncookie_init(&s), 0);
	assert_true(s.key[0][0] != 0 || s.key[0][1] != 0);
	assert_memory_not_equal(s.key[0], s.key[1], sizeof(s.key[0]));
	was = s;
	assert_int_equal(lb_syncookie_rotate(&s), 0);
	assert_int_equal(s.cur, !was.cur);
	assert_memory_equal(s.key[was.cur], was.key[was.cur],
			    sizeof(s.key[0]));
	assert_memory_not_equal(s.key[s.cur], was.key[s.cur],
				sizeof(s.key[0]));
}

static struct lb_syncookie_tuple6
tuple6(void)
{
	static const uint8_t sa[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 7};
	static const uint8_t da[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 1,
				       [15] = 0x10};
	struct lb_syncookie_tuple6 t = {
		.sport = htons(40000),
		.dport = htons(443),
		.cisn = 0x12345678,
	};

	memcpy(t.saddr, sa, 16);
	memcpy(t.daddr, da, 16);
	return t;
}

/*
 * The IPv6 cookie's layout, frozen as the IPv4 one: a separate
 * implementation of the layout over 2001:db8::7, 2001:db8:1::10, ports
 * 40000 and 443, ISN 0x12345678 and counter 15625 (44 bytes) gives these
 * values; the MSS classes are IPv6's (1440 is class 2, 1300 class 0).
 */
static void
test_known_cookie6(void **state)
{
	struct lb_syncookie_secrets s;
	struct lb_syncookie_tuple6 t = tuple6();
	struct lb_syncookie_clock now = {.sec = 1000000, .ts = 5};
	struct lb_syncookie_opts in = {.mss = 1440, .wscale = -1}, out;
	uint32_t tsval = 1;

	(void)state;
	secrets(&s);
	assert_int_equal(lb_syncookie_make6(&s, &t, &now, &in, &tsval),
			 0x28e86ed6u);
	in.mss = 1300;
	assert_int_equal(lb_syncookie_make6(&s, &t, &now, &in, &tsval),
			 0x999649b4u);
	assert_int_equal(lb_syncookie_check6(&s, &t, &now, 0x999649b4u, 0,
					     &out),
			 OK);
	assert_int_equal(out.mss, 1220);
}

/* Each MSS a client offers comes back as the largest IPv6 class not
 * above it; below the minimum, the minimum. */
static void
test_mss6_classes(void **state)
{
	static const struct {
		uint16_t in, out;
	} rows[] = {{536, 1220},  {1220, 1220}, {1419, 1220}, {1420, 1420},
		    {1440, 1440}, {1460, 1440}, {8939, 1440}, {8940, 8940},
		    {65535, 8940}};
	struct lb_syncookie_secrets s;
	struct lb_syncookie_tuple6 t = tuple6();
	struct lb_syncookie_clock now = {T0, 0};
	struct lb_syncookie_opts in = NOOPT(0), out;
	uint32_t tsval, c;

	(void)state;
	secrets(&s);
	for (unsigned int i = 0; i < NELEM(rows); i++) {
		in.mss = rows[i].in;
		c = lb_syncookie_make6(&s, &t, &now, &in, &tsval);
		assert_int_equal(lb_syncookie_check6(&s, &t, &now, c, 0, &out),
				 OK);
		if (out.mss != rows[i].out)
			fail_msg("MSS %u: class %u, want %u", rows[i].in,
				 out.mss, rows[i].out);
	}
}

/* The MAC covers every byte of both IPv6 addresses, the ports and the
 * ISN: any one changed, the cookie is forged; an IPv4 tuple does not
 * check an IPv6 cookie. Options ride in the TSecr, the age counts. */
static void
test_tuple6_covered(void **state)
{
	struct lb_syncookie_secrets s;
	struct lb_syncookie_tuple6 t = tuple6(), u;
	struct lb_syncookie_tuple t4 = tuple();
	struct lb_syncookie_clock now = {T0 + 70, 1000}, later;
	struct lb_syncookie_opts in = {1440, 7, true, false, true}, out;
	uint32_t tsval, cookie;

	(void)state;
	secrets(&s);
	cookie = lb_syncookie_make6(&s, &t, &now, &in, &tsval);
	assert_int_equal(lb_syncookie_check6(&s, &t, &now, cookie, tsval,
					     &out),
			 OK);
	assert_int_equal(out.mss, 1440);
	assert_int_equal(out.wscale, 7);
	assert_true(out.sack);
	assert_true(out.ts);
	for (unsigned int i = 0; i < 32; i++) {
		u = t;
		if (i < 16)
			u.saddr[i] ^= 0x80;
		else
			u.daddr[i - 16] ^= 0x01;
		if (lb_syncookie_check6(&s, &u, &now, cookie, tsval, &out) !=
		    FORGED)
			fail_msg("address byte %u changed: not forged", i);
	}
	u = t;
	u.sport ^= 1;
	assert_int_equal(lb_syncookie_check6(&s, &u, &now, cookie, tsval, &out),
			 FORGED);
	u = t;
	u.dport ^= 1;
	assert_int_equal(lb_syncookie_check6(&s, &u, &now, cookie, tsval, &out),
			 FORGED);
	u = t;
	u.cisn++;
	assert_int_equal(lb_syncookie_check6(&s, &u, &now, cookie, tsval, &out),
			 FORGED);
	assert_int_equal(lb_syncookie_check(&s, &t4, &now, cookie, tsval, &out),
			 FORGED);
	later = (struct lb_syncookie_clock){T0 + 64 * 3, 200000};
	assert_int_equal(lb_syncookie_check6(&s, &t, &later, cookie, tsval,
					     &out),
			 EXPIRED);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_siphash_vectors),
		cmocka_unit_test(test_known_cookie),
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_bit_flips),
		cmocka_unit_test(test_rotation),
		cmocka_unit_test(test_random_secrets),
		cmocka_unit_test(test_known_cookie6),
		cmocka_unit_test(test_mss6_classes),
		cmocka_unit_test(test_tuple6_covered),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
