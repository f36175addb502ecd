/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a SYN proxy meets from outside: ACKs carrying forged, stale or
 * truncated cookies (syncookie), any options in its SYNs and ACKs
 * (tcp_opts), and TCP headers with any options through the sequence
 * translation of a spliced flow (tcp_splice).
 *
 * Input: a first byte choosing the part, then
 * - cookies: the tuple, the time, the SYN's options, then ACKs of 16
 *   bytes each (seconds later, timestamp clock, acknowledgement and TSecr,
 *   each either the genuine one or taken from the input);
 * - translation: the four offsets, the direction, then the TCP header
 *   and payload.
 * Invariants: the genuine ACK of a cookie checks within its life, with the
 *   MSS class and options the SYN gave; any ACK that checks (or reads as
 *   expired) is one this tuple got from make() at the counter step the
 *   verdict implies; decoded options are within their ranges. A header is
 *   refused, untouched, exactly when its data offset is below 5 or past
 *   the bytes given; otherwise nothing past the header changes, the
 *   checksum still verifies, and the opposite offsets restore the bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "csum.h"
#include "syncookie.h"
#include "tcp_opts.h"
#include "tcp_splice.h"

static const uint64_t keys[2][2] = {
	{0x0123456789abcdefull, 0xfedcba9876543210ull},
	{0x0f1e2d3c4b5a6978ull, 0x8796a5b4c3d2e1f0ull},
};

/* Whether make() gives @p cookie for counter step @p step with the key
 * slot and MSS class the cookie names. */
static int
made_at(const struct lb_syncookie_secrets *s,
	const struct lb_syncookie_tuple *t, uint64_t step, uint32_t cookie,
	uint16_t mss)
{
	struct lb_syncookie_secrets k = *s;
	struct lb_syncookie_clock c = {step * LB_SYNCOOKIE_PERIOD, 0};
	struct lb_syncookie_opts in = {.mss = mss, .wscale = -1};
	uint32_t tsval;

	k.cur = cookie >> 4 & 1;
	return lb_syncookie_make(&k, t, &c, &in, &tsval) == cookie;
}

static void
check_decoded(const struct lb_syncookie_opts *o)
{
	int known = 0;

	for (int i = 0; i < LB_SYNCOOKIE_MSS_CLASSES; i++)
		known |= o->mss == lb_syncookie_mss_tab[i];
	FUZZ_CHECK(known);
	FUZZ_CHECK(o->wscale >= -1 && o->wscale <= 14);
	if (!o->ts)
		FUZZ_CHECK(o->wscale == -1 && !o->sack && !o->ecn);
}

static void
cookies(struct fuzz_in *in)
{
	struct lb_syncookie_secrets s = {.cur = 0};
	struct lb_syncookie_tuple t;
	struct lb_syncookie_clock now;
	struct lb_syncookie_opts syn, out;
	uint32_t cookie, tsval;
	int8_t ws;
	uint8_t f;

	memcpy(s.key, keys, sizeof(keys));
	s.cur = fuzz_take(in) & 1;
	t.saddr = fuzz_take32(in);
	t.daddr = fuzz_take32(in);
	t.sport = (uint16_t)fuzz_take32(in);
	t.dport = (uint16_t)(t.sport * 31 + fuzz_take(in));
	t.cisn = fuzz_take32(in);
	now.sec = (uint64_t)fuzz_take32(in) << 8 | fuzz_take(in);
	now.ts = fuzz_take32(in);
	syn.mss = (uint16_t)(fuzz_take(in) << 8 | fuzz_take(in));
	f = fuzz_take(in);
	syn.wscale = (int8_t)((f & 0x1f) > 15 ? -1 : (f & 0x0f));
	syn.sack = f & 0x20;
	syn.ecn = f & 0x40;
	syn.ts = f & 0x80;
	ws = syn.wscale > 14 ? 14 : syn.wscale; /* RFC 7323 2.3 */
	cookie = lb_syncookie_make(&s, &t, &now, &syn, &tsval);
	FUZZ_CHECK(syn.ts ? (int32_t)(tsval - now.ts) <= 0 && tsval != 0
			  : tsval == 0);

	while (in->n >= 16) {
		struct lb_syncookie_clock then = now;
		uint32_t later = fuzz_take32(in);
		uint32_t ts_later = fuzz_take32(in);
		uint32_t ack = fuzz_take32(in), tsecr = fuzz_take32(in);
		int genuine = (later & 1) == 0, v;
		uint64_t step;

		then.sec += later >> 1;
		then.ts += ts_later >> 1;
		if (genuine) {
			ack = cookie;
			tsecr = tsval;
			then.ts = now.ts + (ts_later >> 2);
		}
		v = lb_syncookie_check(&s, &t, &then, ack, tsecr, &out);
		FUZZ_CHECK(v >= LB_SYNCOOKIE_OK && v <= LB_SYNCOOKIE_BAD_TS);
		step = then.sec / LB_SYNCOOKIE_PERIOD;
		if (genuine && step - now.sec / LB_SYNCOOKIE_PERIOD <
				       LB_SYNCOOKIE_MAX_AGE) {
			FUZZ_CHECK(v == LB_SYNCOOKIE_OK);
			FUZZ_CHECK(out.ts == (syn.ts && tsval != 0));
			FUZZ_CHECK(out.mss <= (syn.mss > 536 ? syn.mss : 536));
			if (out.ts)
				FUZZ_CHECK(out.sack == syn.sack &&
					   out.ecn == syn.ecn &&
					   out.wscale == ws);
		}
		if (v == LB_SYNCOOKIE_OK) {
			check_decoded(&out);
			FUZZ_CHECK(made_at(&s, &t, step, ack, out.mss) ||
				   made_at(&s, &t, step - 1, ack, out.mss));
		}
		if (v == LB_SYNCOOKIE_EXPIRED) {
			uint16_t mss = lb_syncookie_mss_tab[ack & 3];

			FUZZ_CHECK(made_at(&s, &t, step - 2, ack, mss) ||
				   made_at(&s, &t, step - 3, ack, mss));
		}
	}
}

/* The pseudo-header's share of the checksum: any nonzero sum stands for
 * it, since the translation never reads it. */
#define PSEUDO_SUM 0x9a17u

static int
csum_ok(const uint8_t *seg, uint32_t len)
{
	return lb_csum_fold(lb_csum_partial(seg, len, PSEUDO_SUM)) == 0xffff;
}

static void
translate(struct fuzz_in *in)
{
	struct lb_tcp_splice sp, back;
	unsigned int dir;
	uint32_t len, hlen;
	uint8_t *seg, *orig, *xl, *hdr;
	uint16_t c;
	int rc;

	for (int i = 0; i < 2; i++) {
		sp.seq[i] = fuzz_take32(in);
		sp.ts[i] = fuzz_take32(in);
		back.seq[i] = -sp.seq[i];
		back.ts[i] = -sp.ts[i];
	}
	dir = fuzz_take(in) & 1;
	/* The segment in a buffer of its exact size: a read past it is
	 * an AddressSanitizer report. */
	len = (uint32_t)in->n;
	seg = malloc(len ? len : 1);
	orig = malloc(len ? len : 1);
	xl = malloc(len ? len : 1);
	FUZZ_CHECK(seg != NULL && orig != NULL && xl != NULL);
	memcpy(seg, in->p, len);
	if (len >= 18) {
		memset(seg + 16, 0, 2);
		c = (uint16_t)~lb_csum_fold(
			lb_csum_partial(seg, len, PSEUDO_SUM));
		memcpy(seg + 16, &c, 2);
	}
	memcpy(orig, seg, len);
	hlen = len >= 13 ? (uint32_t)(seg[12] >> 4) * 4 : 0;
	rc = lb_tcp_splice_seg(&sp, dir, seg, len);
	if (len < LB_TCP_HDR_MIN || hlen < LB_TCP_HDR_MIN || hlen > len) {
		FUZZ_CHECK(rc == -EINVAL);
		FUZZ_CHECK(memcmp(seg, orig, len) == 0);
	} else {
		FUZZ_CHECK(rc >= 0 && (rc & ~(LB_TCP_SPL_SACK | LB_TCP_SPL_TS |
					      LB_TCP_SPL_BAD_OPT)) == 0);
		FUZZ_CHECK(memcmp(seg + hlen, orig + hlen, len - hlen) == 0);
		FUZZ_CHECK(memcmp(seg, orig, 4) == 0); /* ports */
		FUZZ_CHECK(memcmp(seg + 12, orig + 12, 4) == 0);
		FUZZ_CHECK(csum_ok(seg, len));
		memcpy(xl, seg, len);
		FUZZ_CHECK(lb_tcp_splice_seg(&back, dir, seg, len) == rc);
		FUZZ_CHECK(memcmp(seg, orig, len) == 0);
		/* The header alone, in a buffer of its size: the options
		 * end with it, and the checksum's update needs no payload. */
		hdr = malloc(hlen);
		FUZZ_CHECK(hdr != NULL);
		memcpy(hdr, orig, hlen);
		FUZZ_CHECK(lb_tcp_splice_seg(&sp, dir, hdr, hlen) == rc);
		FUZZ_CHECK(memcmp(hdr, xl, hlen) == 0);
		free(hdr);
	}
	free(seg);
	free(orig);
	free(xl);
}

/*
 * Options as a SYN or an ACK brings them to the SYN proxy: read from a
 * buffer of their exact size, values in their ranges, and what it writes
 * back from them reads back the same.
 */
static void
options(struct fuzz_in *in)
{
	uint8_t buf[LB_TCP_OPTS_SYN_MAX];
	struct lb_tcp_opts o, again;
	uint32_t len = (uint32_t)in->n, n;
	uint8_t *opt = malloc(len ? len : 1);
	int rc;

	FUZZ_CHECK(opt != NULL);
	memcpy(opt, in->p, len);
	rc = lb_tcp_opts_read(opt, len, &o);
	FUZZ_CHECK(rc == 0 || rc == -EINVAL);
	FUZZ_CHECK(o.wscale >= -1 && o.wscale <= 14);
	if (!o.ts)
		FUZZ_CHECK(o.tsval == 0 && o.tsecr == 0);
	n = lb_tcp_opts_put(buf, &o);
	FUZZ_CHECK(n <= sizeof(buf) && n % 4 == 0);
	FUZZ_CHECK(lb_tcp_opts_read(buf, n, &again) == 0);
	FUZZ_CHECK(memcmp(&again, &o, sizeof(o)) == 0);
	free(opt);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	uint8_t part = fuzz_take(&in);

	if (part & 1)
		cookies(&in);
	else if (part & 2)
		options(&in);
	else
		translate(&in);
	return 0;
}
