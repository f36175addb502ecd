/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-dpbench's frames written on the timed path: static inline, so that
 * the generator's loop and the flow opener write a frame without a call.
 * The templates they start from are made in dp_bench_frame.c.
 */
#ifndef LB_DP_BENCH_FRAME_H
#define LB_DP_BENCH_FRAME_H

#include <string.h>

#include <rte_byteorder.h>
#include <rte_mbuf.h>

#include "csum.h"
#include "dp_bench.h"

static inline uint32_t
sum32(uint32_t v)
{
	return (v & 0xffff) + (v >> 16);
}

/* Fills @p f from @p t; every argument in network order. */
static inline void
frame_write(uint8_t *f, const struct tmpl *t, uint32_t src, uint32_t dst,
	    uint16_t sport, uint16_t dport, uint32_t seq)
{
	uint32_t a = sum32(src) + sum32(dst);
	uint16_t c;

	memcpy(f, t->f, FRAME_LEN);
	memcpy(f + OFF_SRC, &src, 4);
	memcpy(f + OFF_DST, &dst, 4);
	c = (uint16_t)~lb_csum_fold(t->ip_sum + a);
	memcpy(f + OFF_IP_CSUM, &c, 2);
	memcpy(f + OFF_TCP, &sport, 2);
	memcpy(f + OFF_TCP + 2, &dport, 2);
	memcpy(f + OFF_SEQ, &seq, 4);
	c = (uint16_t)~lb_csum_fold(t->tcp_sum + a + sport + dport +
				    sum32(seq));
	memcpy(f + OFF_TCP_CSUM, &c, 2);
}

struct tuple {
	uint32_t src, dst, seq; /* seq in host order */
	uint16_t sport, dport;
};

static inline void
frame_read(const uint8_t *f, struct tuple *t)
{
	memcpy(&t->src, f + OFF_SRC, 4);
	memcpy(&t->dst, f + OFF_DST, 4);
	memcpy(&t->sport, f + OFF_TCP, 2);
	memcpy(&t->dport, f + OFF_TCP + 2, 2);
	memcpy(&t->seq, f + OFF_SEQ, 4);
	t->seq = ntohl(t->seq);
}

static inline uint8_t *
mbuf_frame(struct rte_mbuf *m, uint16_t port)
{
	m->data_off = RTE_PKTMBUF_HEADROOM;
	m->data_len = FRAME_LEN;
	m->pkt_len = FRAME_LEN;
	m->port = port;
	return rte_pktmbuf_mtod(m, uint8_t *);
}

/* Fills @p f from @p t; every argument in network order. */
static inline void
l7_frame_write(uint8_t *f, const struct l7_tmpl *t, uint32_t src, uint32_t dst,
	       uint16_t sport, uint16_t dport, uint32_t seq, uint32_t ack)
{
	uint32_t a = sum32(src) + sum32(dst);
	uint16_t c;

	memcpy(f, t->f, t->len);
	memcpy(f + OFF_SRC, &src, 4);
	memcpy(f + OFF_DST, &dst, 4);
	c = (uint16_t)~lb_csum_fold(t->ip_sum + a);
	memcpy(f + OFF_IP_CSUM, &c, 2);
	memcpy(f + OFF_TCP, &sport, 2);
	memcpy(f + OFF_TCP + 2, &dport, 2);
	memcpy(f + OFF_SEQ, &seq, 4);
	memcpy(f + OFF_SEQ + 4, &ack, 4);
	c = (uint16_t)~lb_csum_fold(t->tcp_sum + a + sport + dport +
				    sum32(seq) + sum32(ack));
	memcpy(f + OFF_TCP_CSUM, &c, 2);
}

static inline uint8_t *
mbuf_frame_len(struct rte_mbuf *m, uint16_t port, uint16_t len)
{
	m->data_off = RTE_PKTMBUF_HEADROOM;
	m->data_len = len;
	m->pkt_len = len;
	m->port = port;
	return rte_pktmbuf_mtod(m, uint8_t *);
}

static inline uint32_t
est_client_ip(uint32_t i)
{
	return htonl(NET_EST | (i & 0xffff));
}

static inline uint16_t
est_client_port(uint32_t i)
{
	return htons((uint16_t)(10000 + (i >> 16)));
}

/* The flow of client @p ip, @p port (network order), or UINT32_MAX. */
static inline uint32_t
est_client_flow(uint32_t ip, uint16_t port)
{
	uint32_t a = ntohl(ip), p = ntohs(port);

	if ((a & 0xffff0000u) != NET_EST || p < 10000)
		return UINT32_MAX;
	return (a & 0xffff) | (p - 10000) << 16;
}

#endif /* LB_DP_BENCH_FRAME_H */
