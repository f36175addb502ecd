/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sequence translation of spliced flows: one segment's TCP header put
 * through lb_tcp_splice_seg() with no options, with timestamps, with
 * timestamps and three SACK blocks (all of the 40 bytes of options: four
 * blocks and timestamps do not fit) and with four SACK blocks alone, and
 * the last layout once more with an all-zero record (a flow that splices
 * nothing: the option walk without a rewrite). Each is paired with the
 * least any translation pays: the sequence and acknowledgement numbers
 * shifted and the checksum updated for them (RFC 1624), inline, as a NAT
 * rewrites an address. 1024 headers with random numbers, from either
 * side in turn, each with one of 64 records of random offsets, so that
 * no result can be hoisted; each header is translated again on its next
 * turn, as a retransmission would be.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "bytes.h"
#include "csum.h"
#include "lb/pkt_parse.h"
#include "lb/rng.h"
#include "tcp_splice.h"

#define NB_SEG 1024u /* a power of two */
#define NB_REC 64u   /* a power of two */
#define STRIDE 64u   /* one header of up to 60 bytes per cache line */

enum layout { NO_OPT, TS, TS_SACK3, SACK4, NB_LAYOUTS };

struct arg {
	const struct lb_tcp_splice *rec; /* NB_REC records */
	uint8_t *seg;			 /* NB_SEG headers, STRIDE apart */
};

static void
run_splice(void *p, uint64_t iters)
{
	const struct arg *a = p;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++) {
		uint8_t *tcp = a->seg + (i & (NB_SEG - 1)) * STRIDE;

		acc += (uint64_t)lb_tcp_splice_seg(&a->rec[i & (NB_REC - 1)],
						   (unsigned int)i & 1, tcp,
						   LB_TCP_HDR_MAX);
		acc += rd16(tcp + 16);
	}
	lb_bench_sink = acc;
}

/* Adds @p delta to the 32-bit field at @p off, checksum updated. */
static inline void
shift32(uint8_t *tcp, uint32_t off, uint32_t delta)
{
	uint32_t old = rd32(tcp + off), new = old + delta;

	wr32(tcp + off, new);
	wr16(tcp + 16, lb_csum_update32(rd16(tcp + 16), old, new));
}

static void
run_csum(void *p, uint64_t iters)
{
	const struct arg *a = p;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++) {
		const struct lb_tcp_splice *sp = &a->rec[i & (NB_REC - 1)];
		uint8_t *tcp = a->seg + (i & (NB_SEG - 1)) * STRIDE;
		unsigned int d = (unsigned int)i & 1;

		shift32(tcp, 4, sp->seq[d]);
		shift32(tcp, 8, -sp->seq[!d]);
		acc += rd16(tcp + 16);
	}
	lb_bench_sink = acc;
}

/* Writes the options of layout @p l at @p o; returns their length. */
static uint32_t
options(uint8_t *o, enum layout l, struct lb_rng *r)
{
	uint32_t n = 0, blocks = l == TS_SACK3 ? 3 : l == SACK4 ? 4 : 0;

	if (l == TS || l == TS_SACK3) {
		o[n++] = 1; /* NOP, NOP, then TS aligned as Linux sends it */
		o[n++] = 1;
		o[n++] = 8;
		o[n++] = 10;
		wr32(o + n, (uint32_t)lb_rng_u64(r));
		wr32(o + n + 4, (uint32_t)lb_rng_u64(r));
		n += 8;
	}
	if (blocks > 0) {
		o[n++] = 1;
		o[n++] = 1;
		o[n++] = 5;
		o[n++] = (uint8_t)(2 + 8 * blocks);
		for (uint32_t b = 0; b < 2 * blocks; b++, n += 4)
			wr32(o + n, (uint32_t)lb_rng_u64(r));
	}
	return n;
}

static void
fill(uint8_t *seg, enum layout l, struct lb_rng *r)
{
	for (uint32_t i = 0; i < NB_SEG; i++) {
		uint8_t *tcp = seg + i * STRIDE;
		uint64_t x = lb_rng_u64(r);
		uint32_t olen;

		memset(tcp, 0, STRIDE);
		wr32(tcp, (uint32_t)x); /* ports */
		wr32(tcp + 4, (uint32_t)(x >> 32));
		wr32(tcp + 8, (uint32_t)lb_rng_u64(r));
		olen = options(tcp + LB_TCP_HDR_MIN, l, r);
		tcp[12] = (uint8_t)((LB_TCP_HDR_MIN + olen) / 4 << 4);
		tcp[13] = LB_TCP_ACK;
		wr16(tcp + 14, 502);
		wr16(tcp + 16, (uint16_t)lb_rng_u64(r));
	}
}

/* Whether the headers of layout @p l take the path its name says. */
static int
check_layout(const uint8_t *seg, enum layout l, const struct lb_tcp_splice *sp)
{
	static const int want[NB_LAYOUTS] = {
		[NO_OPT] = 0,
		[TS] = LB_TCP_SPL_TS,
		[TS_SACK3] = LB_TCP_SPL_TS | LB_TCP_SPL_SACK,
		[SACK4] = LB_TCP_SPL_SACK,
	};
	uint8_t tcp[STRIDE];

	memcpy(tcp, seg, STRIDE);
	return lb_tcp_splice_seg(sp, LB_TCP_SPL_REPLY, tcp, LB_TCP_HDR_MAX) ==
		       want[l]
		       ? 0
		       : -1;
}

static void
bench_cases(FILE *out, unsigned int rounds, struct arg *a, struct arg *zero,
	    struct arg *base)
{
	static const char *const names[NB_LAYOUTS] = {
		"splice seg, no options",
		"splice seg, timestamps",
		"splice seg, timestamps+3 SACK",
		"splice seg, 4 SACK",
	};
	const struct lb_bench_case b = {
		"seq+ack shift, csum update", run_csum, base
	};
	const struct lb_bench_case z = {
		"splice seg, zero record, 4 SACK", run_splice, zero
	};

	for (int l = 0; l < NB_LAYOUTS; l++) {
		const struct lb_bench_case c = { names[l], run_splice, &a[l] };
		double ns = lb_bench_pair(out, &c, &b, 1000000, rounds);

		fprintf(out, "  = %.1f M segments/s per core\n", 1e3 / ns);
	}
	lb_bench_pair(out, &z, &b, 1000000, rounds);
}

void
lb_bench_splice(FILE *out, unsigned int rounds)
{
	static uint8_t seg[NB_LAYOUTS + 2][NB_SEG * STRIDE]
		__attribute__((aligned(64)));
	static struct lb_tcp_splice rec[NB_REC], none[NB_REC];
	struct arg a[NB_LAYOUTS], zero, base;
	struct lb_xoshiro x;
	struct lb_rng r;

	lb_xoshiro_seed(&x, 17);
	r = lb_rng_xoshiro(&x);
	/* Offsets of zero would skip a rewrite; random ones never do here. */
	for (uint32_t i = 0; i < NB_REC; i++)
		for (int d = 0; d < 2; d++) {
			rec[i].seq[d] = (uint32_t)lb_rng_u64(&r) | 1;
			rec[i].ts[d] = (uint32_t)lb_rng_u64(&r) | 1;
		}
	for (int l = 0; l < NB_LAYOUTS; l++) {
		fill(seg[l], (enum layout)l, &r);
		a[l] = (struct arg){ rec, seg[l] };
		if (check_layout(seg[l], (enum layout)l, rec) != 0) {
			fprintf(out, "splice: a header took the wrong path\n");
			return;
		}
	}
	fill(seg[NB_LAYOUTS], SACK4, &r);
	zero = (struct arg){ none, seg[NB_LAYOUTS] };
	fill(seg[NB_LAYOUTS + 1], NO_OPT, &r);
	base = (struct arg){ rec, seg[NB_LAYOUTS + 1] };
	bench_cases(out, rounds, a, &zero, &base);
}
