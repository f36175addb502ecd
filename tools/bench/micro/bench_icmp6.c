/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ICMPv6 and neighbour discovery beside ICMP and ARP, in the same run:
 * an error translated for the other side of a flow (lb_icmp6_err_rewrite()
 * of a packet too big quoting a TCP segment of 100 bytes, against
 * lb_nat_icmp_rewrite() of a frag-needed quoting the same over IPv4),
 * alternating between two tuples so that each call rewrites; a
 * solicitation parsed and answered (lb_nd_parse() and lb_nd_na_answer()
 * into a buffer, against lb_nat_arp_parse() and lb_nat_arp_reply() of a
 * copy of an ARP request); an echo request answered on a copy
 * (lb_icmp6_echo_reply() against lb_nat_icmp_echo_reply(), 56 bytes of
 * data as ping sends); the same errors carried across fnat64 on a copy
 * with headroom (lb_icmp_xlate46() of the frag-needed,
 * lb_icmp_xlate64() of the packet too big), against the copy and the
 * translation within IPv4.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "bytes.h"
#include "csum.h"
#include "icmp6.h"
#include "icmp64.h"
#include "nat.h"
#include "nd6.h"

#define BUF 256u

static const uint8_t A6[2][16] = {
	{0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 0x10},
	{0x20, 0x01, 0x0d, 0xb8, 0, 0x0a, [15] = 1},
};
static const uint8_t B6[2][16] = {
	{0x20, 0x01, 0x0d, 0xb8, [15] = 7},
	{0x20, 0x01, 0x0d, 0xb8, 0, 0x0a, [15] = 0x11},
};

struct frm {
	uint8_t b[BUF];
	uint32_t len;
	struct lb_pkt p4;
	struct lb_pkt6 p6;
};

static void
icmp6_csum(uint8_t *f, uint32_t len)
{
	uint8_t *ip = f + 14, *m = f + 54;
	uint32_t s = lb_pkt6_pseudo_sum(ip + 8, ip + 24, len - 54,
					LB_IPPROTO_ICMPV6);

	wr16_raw(m + 2, 0);
	wr16_raw(m + 2,
		 (uint16_t)~lb_csum_fold(lb_csum_partial(m, len - 54, s)));
}

/* Ethernet + IPv6 from @p src to @p dst, ICMPv6 of @p mlen bytes. */
static uint8_t *
ip6_hdr(struct frm *f, const uint8_t *src, const uint8_t *dst, uint32_t mlen,
	uint8_t hlim)
{
	uint8_t *ip = f->b + 14;

	memset(f->b, 0, BUF);
	memcpy(f->b, "\x02\0\0\0\0\x01\x02\0\0\0\0\x02", 12);
	wr16(f->b + 12, LB_ETHER_TYPE_IPV6);
	ip[0] = 0x60;
	wr16(ip + 4, (uint16_t)mlen);
	ip[6] = LB_IPPROTO_ICMPV6;
	ip[7] = hlim;
	memcpy(ip + 8, src, 16);
	memcpy(ip + 24, dst, 16);
	f->len = 54 + mlen;
	return ip + 40;
}

static void
ipv4_hdr(uint8_t *ip, uint32_t src, uint32_t dst, uint8_t proto, uint32_t tot)
{
	ip[0] = 0x45;
	wr16(ip + 2, (uint16_t)tot);
	ip[8] = 64;
	ip[9] = proto;
	wr32(ip + 12, src);
	wr32(ip + 16, dst);
	wr16_raw(ip + 10, lb_csum(ip, 20));
}

static int
build_errors(struct frm *e4, struct frm *e6)
{
	uint8_t *m, *q;

	/* Packet too big from a router, quoting SNAT -> BE, TCP. */
	m = ip6_hdr(e6, B6[0], A6[1], 8 + 40 + 120, 64);
	m[0] = LB_ICMP6_PKT_TOO_BIG;
	wr32(m + 4, 1400);
	q = m + 8;
	q[0] = 0x60;
	wr16(q + 4, 120);
	q[6] = LB_IPPROTO_TCP;
	q[7] = 64;
	memcpy(q + 8, A6[1], 16);
	memcpy(q + 24, B6[1], 16);
	wr16(q + 40, 1025);
	wr16(q + 42, 8080);
	q[52] = 5 << 4;
	q[53] = LB_TCP_ACK;
	icmp6_csum(e6->b, e6->len);

	/* The same over IPv4: frag-needed quoting SNAT -> BE. */
	memset(e4->b, 0, BUF);
	wr16(e4->b + 12, LB_ETHER_TYPE_IPV4);
	ipv4_hdr(e4->b + 14, 0x0a0a00fe, 0x0a0a0001, LB_IPPROTO_ICMP,
		 20 + 8 + 20 + 120);
	m = e4->b + 34;
	m[0] = LB_ICMP_DEST_UNREACH;
	m[1] = LB_ICMP_FRAG_NEEDED;
	wr16(m + 6, 1400);
	q = m + 8;
	ipv4_hdr(q, 0x0a0a0001, 0x0a0a0011, LB_IPPROTO_TCP, 140);
	wr16(q + 20, 1025);
	wr16(q + 22, 8080);
	q[32] = 5 << 4;
	q[33] = LB_TCP_ACK;
	wr16_raw(m + 2, lb_csum(m, 8 + 20 + 120));
	e4->len = 34 + 8 + 20 + 120;
	if (lb_pkt_parse(e4->b, e4->len, &e4->p4) != LB_PKT_IPV4 ||
	    lb_pkt6_parse(e6->b, e6->len, &e6->p6) != LB_PKT6_OK)
		return -1;
	return 0;
}

static void
run_err4(void *p, uint64_t iters)
{
	struct frm *f = p;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++) {
		const struct lb_nat_tuple in = {0x0700000au + (uint32_t)(i & 1),
						0x1000000au, 0x409c, 0xbb01};

		acc += (uint64_t)lb_nat_icmp_rewrite(
			f->b, f->len, &f->p4, 0x1000000au, 0x0700000au, &in);
		acc += f->b[36];
	}
	lb_bench_sink = acc;
}

static void
run_err6(void *p, uint64_t iters)
{
	struct frm *f = p;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++) {
		struct lb_icmp6_tuple in = {.sport = 0x409c, .dport = 0xbb01};

		memcpy(in.src, B6[i & 1], 16);
		memcpy(in.dst, A6[0], 16);
		acc += (uint64_t)lb_icmp6_err_rewrite(f->b, f->len, &f->p6,
						      A6[0], B6[0], &in);
		acc += f->b[56];
	}
	lb_bench_sink = acc;
}

/* An error and its copy with 64 bytes of headroom. */
struct xerr_arg {
	struct frm *err;
	uint8_t buf[64 + BUF];
};

static void
run_copy_err4(void *p, uint64_t iters)
{
	struct xerr_arg *a = p;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++) {
		const struct lb_nat_tuple in = {0x0700000au + (uint32_t)(i & 1),
						0x1000000au, 0x409c, 0xbb01};
		struct lb_pkt pkt = a->err->p4;

		memcpy(a->buf + 64, a->err->b, a->err->len);
		acc += (uint64_t)lb_nat_icmp_rewrite(a->buf + 64, a->err->len,
						     &pkt, 0x1000000au,
						     0x0700000au, &in);
		acc += a->buf[100];
	}
	lb_bench_sink = acc;
}

static void
run_xerr46(void *p, uint64_t iters)
{
	struct xerr_arg *a = p;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++) {
		struct lb_icmp6_tuple in = {.sport = 0x409c, .dport = 0xbb01};
		struct lb_pkt6 out;
		int no;

		memcpy(in.src, B6[i & 1], 16);
		memcpy(in.dst, A6[0], 16);
		memcpy(a->buf + 64, a->err->b, a->err->len);
		no = lb_icmp_xlate46(a->buf, 64, a->err->len, &a->err->p4,
				     A6[0], B6[0], &in, &out);
		acc += (uint64_t)no + a->buf[100];
	}
	lb_bench_sink = acc;
}

static void
run_xerr64(void *p, uint64_t iters)
{
	struct xerr_arg *a = p;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++) {
		const struct lb_nat_tuple in = {0x0700000au + (uint32_t)(i & 1),
						0x1000000au, 0x409c, 0xbb01};
		struct lb_pkt out;
		int no;

		memcpy(a->buf + 64, a->err->b, a->err->len);
		no = lb_icmp_xlate64(a->buf, 64, a->err->len, &a->err->p6,
				     0x1000000au, 0x0700000au, &in, &out);
		acc += (uint64_t)no + a->buf[140];
	}
	lb_bench_sink = acc;
}

struct nd_arg {
	struct frm req; /* the request as received */
	uint8_t out[BUF];
};

static void
run_arp(void *p, uint64_t iters)
{
	struct nd_arg *a = p;
	static const uint8_t mac[6] = {2, 0, 0, 0, 0, 1};
	uint64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++) {
		struct lb_nat_arp arp;

		memcpy(a->out, a->req.b, a->req.len);
		acc += (uint64_t)lb_nat_arp_parse(a->out, a->req.len,
						  &a->req.p4, &arp);
		acc += (uint64_t)lb_nat_arp_reply(a->out, a->req.len,
						  &a->req.p4, mac);
		acc += arp.tpa + a->out[21];
	}
	lb_bench_sink = acc;
}

static void
run_nd(void *p, uint64_t iters)
{
	struct nd_arg *a = p;
	static const struct lb_nat_link link = {{2, 0, 0, 0, 0, 1}, 0, 0};
	uint64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++) {
		struct lb_nd_msg ns;

		acc += (uint64_t)lb_nd_parse(a->req.b, a->req.len, &a->req.p6,
					     &ns);
		acc += (uint64_t)lb_nd_na_answer(a->out, BUF, &link, &ns);
		acc += a->out[57];
	}
	lb_bench_sink = acc;
}

static int
build_requests(struct nd_arg *arp, struct nd_arg *ns)
{
	static const uint8_t sn[16] = {
		0xff, 0x02, [11] = 1, [12] = 0xff, [15] = 0x10};
	struct lb_nat_link link = {{2, 0, 0, 0, 0, 2}, 0, 0};
	int n;

	n = lb_nat_arp_request(arp->req.b, BUF, &link, 0x0700000a, 0x1000000a,
			       NULL);
	if (n < 0)
		return -1;
	arp->req.len = (uint32_t)n;
	n = lb_nd_ns_build(ns->req.b, BUF, &link, B6[0], A6[0], NULL);
	if (n < 0 || memcmp(ns->req.b + 14 + 24, sn, 16) != 0)
		return -1;
	ns->req.len = (uint32_t)n;
	if (lb_pkt_parse(arp->req.b, arp->req.len, &arp->req.p4) !=
		    LB_PKT_ARP ||
	    lb_pkt6_parse(ns->req.b, ns->req.len, &ns->req.p6) != LB_PKT6_OK)
		return -1;
	return 0;
}

struct echo_arg {
	struct frm req;
	uint8_t out[BUF];
};

static void
run_echo4(void *p, uint64_t iters)
{
	struct echo_arg *a = p;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++) {
		struct lb_pkt pkt = a->req.p4;

		memcpy(a->out, a->req.b, a->req.len);
		acc += (uint64_t)lb_nat_icmp_echo_reply(a->out, a->req.len,
							&pkt);
		acc += a->out[36];
	}
	lb_bench_sink = acc;
}

static void
run_echo6(void *p, uint64_t iters)
{
	struct echo_arg *a = p;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++) {
		struct lb_pkt6 pkt = a->req.p6;

		memcpy(a->out, a->req.b, a->req.len);
		acc += (uint64_t)lb_icmp6_echo_reply(a->out, a->req.len, &pkt);
		acc += a->out[56];
	}
	lb_bench_sink = acc;
}

static int
build_echoes(struct echo_arg *e4, struct echo_arg *e6)
{
	uint8_t *m;

	m = ip6_hdr(&e6->req, B6[0], A6[0], 8 + 56, 64);
	m[0] = LB_ICMP6_ECHO_REQUEST;
	wr32(m + 4, 0x12340001);
	for (int i = 0; i < 56; i++)
		m[8 + i] = (uint8_t)i;
	icmp6_csum(e6->req.b, e6->req.len);

	memset(e4->req.b, 0, BUF);
	wr16(e4->req.b + 12, LB_ETHER_TYPE_IPV4);
	ipv4_hdr(e4->req.b + 14, 0x0700000a, 0x1000000a, LB_IPPROTO_ICMP,
		 20 + 8 + 56);
	m = e4->req.b + 34;
	m[0] = LB_ICMP_ECHO_REQUEST;
	wr32(m + 4, 0x12340001);
	for (int i = 0; i < 56; i++)
		m[8 + i] = (uint8_t)i;
	wr16_raw(m + 2, lb_csum(m, 64));
	e4->req.len = 34 + 64;
	if (lb_pkt_parse(e4->req.b, e4->req.len, &e4->req.p4) != LB_PKT_IPV4 ||
	    lb_pkt6_parse(e6->req.b, e6->req.len, &e6->req.p6) != LB_PKT6_OK)
		return -1;
	return 0;
}

void
lb_bench_icmp6(FILE *out, unsigned int rounds)
{
	static struct frm e4, e6;
	static struct nd_arg arp, ns;
	static struct echo_arg ping4, ping6;
	static struct xerr_arg x4, x6;

	if (build_errors(&e4, &e6) != 0 || build_requests(&arp, &ns) != 0 ||
	    build_echoes(&ping4, &ping6) != 0) {
		fprintf(out, "icmp6: a frame was refused\n");
		return;
	}
	/* Each case does its work, or the figures mean nothing. */
	{
		static const struct lb_nat_link l = {{2, 0, 0, 0, 0, 1}, 0, 0};
		struct lb_nd_msg m;
		struct lb_pkt6 q6 = ping6.req.p6;
		struct lb_pkt q4 = ping4.req.p4;

		memcpy(ping6.out, ping6.req.b, ping6.req.len);
		memcpy(ping4.out, ping4.req.b, ping4.req.len);
		if (lb_nd_parse(ns.req.b, ns.req.len, &ns.req.p6, &m) != 0 ||
		    lb_nd_na_answer(ns.out, BUF, &l, &m) <= 0 ||
		    lb_icmp6_echo_reply(ping6.out, ping6.req.len, &q6) != 0 ||
		    lb_nat_icmp_echo_reply(ping4.out, ping4.req.len, &q4) !=
			    0) {
			fprintf(out, "icmp6: a request was not answered\n");
			return;
		}
	}
	x4.err = &e4;
	x6.err = &e6;
	memcpy(x4.buf + 64, e4.b, e4.len);
	memcpy(x6.buf + 64, e6.b, e6.len);
	if (lb_icmp_xlate46(x4.buf, 64, e4.len, &e4.p4, A6[0], B6[0],
			    &(struct lb_icmp6_tuple){{0}, {0}, 1, 1},
			    &(struct lb_pkt6){0}) < 0 ||
	    lb_icmp_xlate64(x6.buf, 64, e6.len, &e6.p6, 1, 2,
			    &(struct lb_nat_tuple){3, 4, 1, 1},
			    &(struct lb_pkt){0}) < 0) {
		fprintf(out, "icmp6: an error did not cross versions\n");
		return;
	}
	if (lb_icmp6_err_rewrite(e6.b, e6.len, &e6.p6, A6[0], B6[0],
				 &(struct lb_icmp6_tuple){{0}, {0}, 1, 1}) !=
		    0 ||
	    lb_nat_icmp_rewrite(e4.b, e4.len, &e4.p4, 1, 2,
				&(struct lb_nat_tuple){3, 4, 1, 1}) != 0) {
		fprintf(out, "icmp6: an error was not translated\n");
		return;
	}
	{
		const struct lb_bench_case c6 = {
			"icmp6 error translated, packet too big", run_err6,
			&e6};
		const struct lb_bench_case c4 = {
			"icmp error translated, frag needed", run_err4, &e4};
		const struct lb_bench_case n6 = {"nd6 NS parsed + NA built",
						 run_nd, &ns};
		const struct lb_bench_case n4 = {
			"copy + ARP request parsed + reply", run_arp, &arp};
		const struct lb_bench_case p6 = {"copy + icmp6 echo reply",
						 run_echo6, &ping6};
		const struct lb_bench_case p4 = {"copy + icmp echo reply",
						 run_echo4, &ping4};

		lb_bench_pair(out, &c6, &c4, 1000000, rounds);
		lb_bench_pair(out, &n6, &n4, 1000000, rounds);
		const struct lb_bench_case xb = {"copy + icmp error translated",
						 run_copy_err4, &x4};
		const struct lb_bench_case x46 = {
			"copy + frag needed to packet too big", run_xerr46,
			&x4};
		const struct lb_bench_case x64 = {
			"copy + packet too big to frag needed", run_xerr64,
			&x6};

		lb_bench_pair(out, &p6, &p4, 1000000, rounds);
		lb_bench_pair(out, &x46, &xb, 1000000, rounds);
		lb_bench_pair(out, &x64, &xb, 1000000, rounds);
	}
}
