/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv6's building blocks beside IPv4's, in the same run: parsing a TCP
 * segment's frame (lb_pkt6_parse() without extension headers and with a
 * hop-by-hop and a destination options header, against lb_pkt_parse()
 * of the same segment over IPv4), the full-NAT rewrite (lb_nat6_rewrite()
 * against lb_nat_rewrite()), and the fnat64 translations (lb_nat64_xlate()
 * and lb_nat46_xlate(), against the IPv4 rewrite, each on a fresh copy of
 * the frame since a translation moves it). 1024 frames of random
 * addresses and ports, 128 bytes apart, one per call in turn, so that no
 * result can be hoisted.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "bytes.h"
#include "csum.h"
#include "lb/rng.h"
#include "nat.h"
#include "nat6.h"

#define NB_FRAMES 1024u /* a power of two */
#define STRIDE 128u
#define HEADROOM 40u
#define DATA_LEN 20u

struct arg {
	uint8_t *frames; /* NB_FRAMES frames, STRIDE apart */
	uint32_t len[NB_FRAMES];
	union {
		struct lb_pkt p4[NB_FRAMES];
		struct lb_pkt6 p6[NB_FRAMES];
	};
	uint8_t addr6[2][16];
};

static void
run_parse4(void *p, uint64_t iters)
{
	struct arg *a = p;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++) {
		uint32_t k = i & (NB_FRAMES - 1);
		struct lb_pkt pkt;

		acc += lb_pkt_parse(a->frames + k * STRIDE, a->len[k], &pkt);
		acc += pkt.sport;
	}
	lb_bench_sink = acc;
}

static void
run_parse6(void *p, uint64_t iters)
{
	struct arg *a = p;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++) {
		uint32_t k = i & (NB_FRAMES - 1);
		struct lb_pkt6 pkt;

		acc += lb_pkt6_parse(a->frames + k * STRIDE, a->len[k], &pkt);
		acc += pkt.sport;
	}
	lb_bench_sink = acc;
}

static void
run_nat4(void *p, uint64_t iters)
{
	struct arg *a = p;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++) {
		uint32_t k = i & (NB_FRAMES - 1);
		struct lb_pkt *pkt = &a->p4[k];

		acc += (uint64_t)lb_nat_rewrite(a->frames + k * STRIDE, pkt,
						pkt->dst, pkt->dport, pkt->src,
						pkt->sport);
	}
	lb_bench_sink = acc;
}

static void
run_nat66(void *p, uint64_t iters)
{
	struct arg *a = p;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++) {
		uint32_t k = i & (NB_FRAMES - 1);
		struct lb_pkt6 *pkt = &a->p6[k];

		acc += (uint64_t)lb_nat6_rewrite(
			a->frames + k * STRIDE, pkt, a->addr6[i & 1],
			pkt->dport, a->addr6[!(i & 1)], pkt->sport);
	}
	lb_bench_sink = acc;
}

/* The IPv4 rewrite on a fresh copy, the baseline of the translations. */
static void
run_copy_nat4(void *p, uint64_t iters)
{
	struct arg *a = p;
	uint8_t buf[STRIDE];
	uint64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++) {
		uint32_t k = i & (NB_FRAMES - 1);
		struct lb_pkt pkt = a->p4[k];

		memcpy(buf, a->frames + k * STRIDE, a->len[k]);
		acc += (uint64_t)lb_nat_rewrite(buf, &pkt, pkt.dst, pkt.dport,
						pkt.src, pkt.sport);
		acc += buf[30];
	}
	lb_bench_sink = acc;
}

static void
run_xlate64(void *p, uint64_t iters)
{
	struct arg *a = p;
	uint8_t buf[STRIDE];
	uint64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++) {
		uint32_t k = i & (NB_FRAMES - 1);
		const struct lb_pkt6 *pkt = &a->p6[k];
		struct lb_pkt out;
		int off;

		memcpy(buf, a->frames + k * STRIDE, a->len[k]);
		off = lb_nat64_xlate(buf, 0, a->len[k], pkt, 0x0b00000au,
				     pkt->dport, 0x0100000au + (uint32_t)k,
				     pkt->sport, &out);
		acc += (uint64_t)off + buf[off + 30];
	}
	lb_bench_sink = acc;
}

static void
run_xlate46(void *p, uint64_t iters)
{
	struct arg *a = p;
	uint8_t buf[HEADROOM + STRIDE];
	uint64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++) {
		uint32_t k = i & (NB_FRAMES - 1);
		const struct lb_pkt *pkt = &a->p4[k];
		struct lb_pkt6 out;
		int off;

		memcpy(buf + HEADROOM, a->frames + k * STRIDE, a->len[k]);
		off = lb_nat46_xlate(buf, HEADROOM, a->len[k], pkt, a->addr6[0],
				     pkt->dport, a->addr6[1], pkt->sport, &out);
		acc += (uint64_t)off + buf[off + 30];
	}
	lb_bench_sink = acc;
}

/* A TCP ACK with DATA_LEN bytes, over IPv4 or IPv6 (with @p n_ext
 * 8-byte destination options headers, the first of them hop-by-hop). */
static uint32_t
frame(uint8_t *f, int v6, uint32_t n_ext, struct lb_rng *r)
{
	uint32_t l3 = 14, l4, n;
	uint8_t *ip, *th, *nh;
	uint64_t x = lb_rng_u64(r);

	memset(f, 0, STRIDE);
	wr16(f + 12, v6 ? LB_ETHER_TYPE_IPV6 : LB_ETHER_TYPE_IPV4);
	ip = f + l3;
	if (v6) {
		ip[0] = 0x60;
		ip[7] = 64;
		wr32(ip + 8, 0x20010db8);
		wr32(ip + 24, 0x20010db8);
		wr32(ip + 20, (uint32_t)x | 1);
		wr32(ip + 36, (uint32_t)(x >> 32) | 1);
		nh = ip + 6;
		l4 = l3 + LB_IPV6_HDR_LEN;
		for (uint32_t i = 0; i < n_ext; i++) {
			*nh = i == 0 ? LB_IPPROTO_HOPOPTS : LB_IPPROTO_DSTOPTS;
			nh = f + l4;
			f[l4 + 2] = 1; /* PadN */
			f[l4 + 3] = 4;
			l4 += 8;
		}
		*nh = LB_IPPROTO_TCP;
	} else {
		ip[0] = 0x45;
		wr16(ip + 6, 0x4000);
		ip[8] = 64;
		ip[9] = LB_IPPROTO_TCP;
		wr32(ip + 12, 0x0a000000 | ((uint32_t)x & 0xffffff));
		wr32(ip + 16, 0xc0000200 | (uint32_t)(x >> 56));
		l4 = l3 + 20;
	}
	th = f + l4;
	wr16(th, (uint16_t)(x >> 16) | 1);
	wr16(th + 2, 443);
	wr32(th + 4, (uint32_t)lb_rng_u64(r));
	th[12] = 5 << 4;
	th[13] = LB_TCP_ACK | LB_TCP_PSH;
	wr16(th + 14, 502);
	n = l4 + 20 + DATA_LEN;
	if (v6) {
		wr16(ip + 4, (uint16_t)(n - l3 - LB_IPV6_HDR_LEN));
	} else {
		wr16(ip + 2, (uint16_t)(n - l3));
		wr16_raw(ip + 10, lb_csum(ip, 20));
	}
	return n;
}

/* Fills @p a with frames of one kind; -1 if a parser refuses one. */
static int
fill(struct arg *a, uint8_t *frames, int v6, uint32_t n_ext, struct lb_rng *r)
{
	a->frames = frames;
	for (uint32_t k = 0; k < NB_FRAMES; k++) {
		uint8_t *f = frames + k * STRIDE;

		a->len[k] = frame(f, v6, n_ext, r);
		if (v6 ? lb_pkt6_parse(f, a->len[k], &a->p6[k]) != LB_PKT6_OK
		       : lb_pkt_parse(f, a->len[k], &a->p4[k]) != LB_PKT_IPV4)
			return -1;
	}
	for (int i = 0; i < 2; i++) {
		wr32(a->addr6[i], 0x20010db8);
		wr32(a->addr6[i] + 12, (uint32_t)lb_rng_u64(r) | 1);
	}
	return 0;
}

void
lb_bench_pkt6(FILE *out, unsigned int rounds)
{
	static uint8_t frames[4][NB_FRAMES * STRIDE]
		__attribute__((aligned(64)));
	static struct arg a4, a6, a6x, a4x;
	struct lb_xoshiro x;
	struct lb_rng r;

	lb_xoshiro_seed(&x, 23);
	r = lb_rng_xoshiro(&x);
	if (fill(&a4, frames[0], 0, 0, &r) != 0 ||
	    fill(&a6, frames[1], 1, 0, &r) != 0 ||
	    fill(&a6x, frames[2], 1, 2, &r) != 0 ||
	    fill(&a4x, frames[3], 0, 0, &r) != 0) {
		fprintf(out, "pkt6: a frame was refused\n");
		return;
	}
	{
		const struct lb_bench_case p4 = {"pkt parse, ipv4 tcp",
						 run_parse4, &a4};
		const struct lb_bench_case p6 = {"pkt6 parse, tcp", run_parse6,
						 &a6};
		const struct lb_bench_case p6x = {
			"pkt6 parse, hop-by-hop+dstopts+tcp", run_parse6, &a6x};
		const struct lb_bench_case n4 = {"nat rewrite, ipv4 tcp",
						 run_nat4, &a4};
		const struct lb_bench_case n6 = {"nat6 rewrite (fnat66), tcp",
						 run_nat66, &a6};
		const struct lb_bench_case c4 = {"copy + nat rewrite, ipv4",
						 run_copy_nat4, &a4x};
		const struct lb_bench_case x64 = {"copy + nat64 xlate, tcp",
						  run_xlate64, &a6x};
		const struct lb_bench_case x46 = {"copy + nat46 xlate, tcp",
						  run_xlate46, &a4x};

		lb_bench_pair(out, &p6, &p4, 1000000, rounds);
		lb_bench_pair(out, &p6x, &p4, 1000000, rounds);
		lb_bench_pair(out, &n6, &n4, 1000000, rounds);
		lb_bench_pair(out, &x64, &c4, 1000000, rounds);
		lb_bench_pair(out, &x46, &c4, 1000000, rounds);
	}
}
