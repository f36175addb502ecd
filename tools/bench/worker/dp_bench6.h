/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-dpbench's IPv6 rows (est6, new6): fnat66 through the same worker,
 * on a table of one IPv6 service with IPv6 backends and SNAT addresses.
 * The frames written on the timed path are static inline here, as the
 * IPv4 ones are in dp_bench_frame.h; the rest is in dp_bench6.c.
 */
#ifndef LB_DP_BENCH6_H
#define LB_DP_BENCH6_H

#include <string.h>

#include <rte_byteorder.h>
#include <rte_mbuf.h>

#include "dp_bench_frame.h"

/* Frame offsets: Ethernet, IPv6 without extension headers, TCP. */
#define OFF6_IP 14
#define OFF6_SRC 22
#define OFF6_DST 38
#define OFF6_TCP 54
#define OFF6_SEQ 58
#define OFF6_TCP_CSUM 70
#define FRAME6_LEN 74u /* 78 bytes on the wire with the FCS */

/* Addresses: 2001:db8::/48 on port 0 (ours ::1, the router ::fe), the
 * backends 2001:db8:0:1::1.., the SNAT addresses 2001:db8:0:2::1.., the
 * VIP 2001:db8:0:100::1, the clients of est6 2001:db8:c000:N:: (32,768
 * ports each: the flows that share a port are few, so that two of them
 * hardly ever share a folded key, dataplane/flow/flow6.h) and those of
 * new6 in 2001:db8:d000::/36, each in a /64 of its own (the budget of
 * new flows per source counts an IPv6 source by its /64), all through
 * the router. Only the 32 bits after 2001:db8: change: the frame's
 * checksum takes them into a sum made once. */
#define NET6_EST 0x20010db8c0000000ull /* the first 64 bits */
#define NET6_NEW 0x20010db8d0000000ull

/* The address @p net (first 64 bits) :: @p low (host order). */
static inline void
addr6_of(uint8_t a[16], uint64_t net, uint32_t low)
{
	rte_be64_t n = rte_cpu_to_be_64(net);
	rte_be32_t l = rte_cpu_to_be_32(low);

	memcpy(a, &n, 8);
	memset(a + 8, 0, 4);
	memcpy(a + 12, &l, 4);
}

/*
 * Fills @p f from @p t, which holds the sum of every other word: the
 * source's word that changes @p low, the ports and the sequence number,
 * all in network order.
 */
static inline void
frame6_write(uint8_t *f, const struct tmpl6 *t, uint32_t low, uint16_t sport,
	     uint16_t dport, uint32_t seq)
{
	uint16_t c;

	memcpy(f, t->f, FRAME6_LEN);
	memcpy(f + t->var, &low, 4);
	memcpy(f + OFF6_TCP, &sport, 2);
	memcpy(f + OFF6_TCP + 2, &dport, 2);
	memcpy(f + OFF6_SEQ, &seq, 4);
	c = (uint16_t)~lb_csum_fold(t->tcp_sum + sum32(low) + sport + dport +
				    sum32(seq));
	memcpy(f + OFF6_TCP_CSUM, &c, 2);
}

/* est6 client @p i: the 32 bits of its address after 2001:db8:, its
 * port. */
static inline uint32_t
est6_client_low(uint32_t i)
{
	return htonl(0xc0000000u | (i >> 15));
}

static inline uint16_t
est6_client_port(uint32_t i)
{
	return htons((uint16_t)(1024 + (i & 0x7fff)));
}

/* The next frame of test est6 or new6. */
static inline void
gen6_fill(struct bench *b, struct gen *g, struct rte_mbuf *m, uint32_t i)
{
	uint8_t *f = mbuf_frame_len(m, b->port, FRAME6_LEN);

	if (g->test == T_NEW6) {
		uint64_t c = b->new_ctr++;

		/* The port changes with every SYN too: tuples that share
		 * one spread their folded keys (flow6.h) over many. */
		frame6_write(f, &b->t6_syn,
			     htonl(0xd0000000u | ((uint32_t)c & 0x0fffffff)),
			     htons((uint16_t)(1024 + (c & 0x7fff))),
			     b->vport, htonl((uint32_t)c & ~REPLY_BIT));
		return;
	}
	frame6_write(f, &b->t6_ack, est6_client_low(i), est6_client_port(i),
		     b->vport, htonl(i));
}

#endif /* LB_DP_BENCH6_H */
