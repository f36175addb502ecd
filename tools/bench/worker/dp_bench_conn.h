/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn's generator step, on the timed path (static inline, as the other
 * tests' frames in dp_bench_frame.h): each mbuf carries one connection
 * through its seven segments, the next one written from what the
 * forwarder sent, and a new connection when the backend's FIN got
 * through.
 *
 * Connection c (its low 24 bits) is client 198.19.(c & 0xffff) port
 * 1024 + (c >> 16) to the conn VIP. Its client numbers its bytes from
 * X = c << 8, its backend from Y = X ^ 0x80000000, so every segment
 * names its connection: a client segment in its sequence number, a
 * backend segment in its acknowledgment (both within 256 of X).
 *
 *   client SYN            seq X                     -> backend
 *   backend SYN-ACK       seq Y,         ack X + 1  -> client
 *   client ACK            seq X + 1,     ack Y + 1  -> backend
 *   client request (L)    seq X + 1,     ack Y + 1  -> backend
 *   backend response (R)  seq Y + 1,     ack X+1+L  -> client
 *   client FIN            seq X + 1 + L, ack Y+1+R  -> backend
 *   backend FIN           seq Y + 1 + R, ack X+2+L  -> client
 *
 * Through the worker a segment towards the backend leaves from a SNAT
 * address and port, which the SYN's output records for the backend's
 * segments; through the bare forwarder every segment comes back as it
 * went, and the backend side gets a made-up SNAT pair.
 */
#ifndef LB_DP_BENCH_CONN_H
#define LB_DP_BENCH_CONN_H

#include "dp_bench_frame.h"

#define CONN_REQ_LEN (b->creq_len)
#define CONN_RESP_LEN ((uint32_t)sizeof(conn_resp) - 1)
#define CONN_Y_FLIP 0x80000000u

static inline uint32_t
conn_x(uint32_t c)
{
	return c << 8;
}

static inline uint32_t
conn_y(uint32_t c)
{
	return (c << 8) ^ CONN_Y_FLIP;
}

static inline uint32_t
conn_client_ip(uint32_t c)
{
	return htonl(NET_NEW | (c & 0xffff));
}

static inline uint16_t
conn_client_port(uint32_t c)
{
	return htons((uint16_t)(1024 + ((c >> 16) & 0xff)));
}

/* A client segment of connection @p c. */
static inline void
conn_client(struct bench *b, struct rte_mbuf *m, const struct l7_tmpl *t,
	    uint32_t c, uint32_t seq, uint32_t ack)
{
	l7_frame_write(mbuf_frame_len(m, b->port, t->len), t, conn_client_ip(c),
		       b->conn_vip, conn_client_port(c), b->vport, htonl(seq),
		       htonl(ack));
}

/* A backend segment of connection @p c, to its SNAT pair. */
static inline void
conn_backend(struct bench *b, struct rte_mbuf *m, const struct l7_tmpl *t,
	     const struct conn_rec *r, uint32_t seq, uint32_t ack)
{
	l7_frame_write(mbuf_frame_len(m, b->port, t->len), t, b->be_ip[r->be],
		       r->snat_ip, b->be_port, r->snat_port, htonl(seq),
		       htonl(ack));
}

static inline void
conn_start(struct bench *b, struct rte_mbuf *m)
{
	uint32_t c = (uint32_t)(b->conn_ctr++ & 0xffffff);

	conn_client(b, m, &b->tc_syn, c, conn_x(c), 0);
}

static inline void
conn_bad(struct gen *g, const char *why)
{
	g->bad++;
	if (g->why == NULL)
		g->why = why;
}

/*
 * The SYN of connection @p c went through, from @p src:@p sport to
 * @p dst: records the SNAT pair and backend the worker chose (the bare
 * forwarder's: made up). @return the record, or NULL if the SYN is wrong.
 */
static inline struct conn_rec *
conn_syn_out(struct bench *b, struct gen *g, uint32_t c, uint32_t src,
	     uint16_t sport, uint32_t dst)
{
	struct conn_rec *r = &b->crec[c & (CONN_SLOTS - 1)];
	uint32_t be = ntohl(dst) - IP_BE;

	if (!g->worker) {
		r->snat_ip = htonl(IP_SNAT + c % NB_SNATS);
		r->snat_port = htons((uint16_t)(1024 + (c >> 4) % 60000));
		r->be = (uint16_t)(c % NB_BES);
		return r;
	}
	if (be >= NB_BES || ntohl(src) - IP_SNAT >= NB_SNATS) {
		conn_bad(g, "SYN not sent SNAT -> backend");
		return NULL;
	}
	r->snat_ip = src;
	r->snat_port = sport;
	r->be = (uint16_t)be;
	return r;
}

/*
 * The next segment for mbuf @p m, which the forwarder sent: the step of
 * its connection that follows, or a new connection's SYN.
 */
static inline void
conn_fill(struct bench *b, struct gen *g, struct rte_mbuf *m)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t src, dst, seq, ack, c, s;
	uint16_t sport, dport, iplen;
	const struct conn_rec *r;
	uint8_t fl;

	memcpy(&src, f + OFF_SRC, 4);
	memcpy(&dst, f + OFF_DST, 4);
	memcpy(&sport, f + OFF_TCP, 2);
	memcpy(&seq, f + OFF_SEQ, 4);
	memcpy(&ack, f + OFF_SEQ + 4, 4);
	memcpy(&iplen, f + OFF_IP + 2, 2);
	seq = ntohl(seq);
	ack = ntohl(ack);
	fl = f[OFF_TCP + 13];
	s = ntohl(src);
	if ((s & 0xffff0000u) == NET_NEW || s - IP_SNAT < NB_SNATS) {
		/* A client segment went through towards the backend. */
		c = seq >> 8;
		if (fl & LB_TCP_SYN) {
			r = conn_syn_out(b, g, c, src, sport, dst);
			if (r == NULL)
				goto restart;
			conn_backend(b, m, &b->tc_synack[r->be], r, conn_y(c),
				     conn_x(c) + 1);
			return;
		}
		r = &b->crec[c & (CONN_SLOTS - 1)];
		if (g->worker && (src != r->snat_ip || sport != r->snat_port)) {
			conn_bad(g, "client segment not from its SNAT pair");
			goto restart;
		}
		if (fl & LB_TCP_FIN)
			conn_backend(b, m, &b->tc_finb[r->be], r,
				     conn_y(c) + 1 + CONN_RESP_LEN,
				     conn_x(c) + 2 + CONN_REQ_LEN);
		else if (ntohs(iplen) > 40)
			conn_backend(b, m, &b->tc_resp[r->be], r, conn_y(c) + 1,
				     conn_x(c) + 1 + CONN_REQ_LEN);
		else
			conn_client(b, m, &b->tc_req, c, conn_x(c) + 1,
				    conn_y(c) + 1);
		return;
	}
	/* A backend segment went through towards the client. */
	c = ack >> 8;
	memcpy(&dport, f + OFF_TCP + 2, 2);
	if (g->worker &&
	    (src != b->conn_vip || sport != b->vport ||
	     dst != conn_client_ip(c) || dport != conn_client_port(c))) {
		conn_bad(g, "backend segment not sent VIP -> its client");
		goto restart;
	}
	if (fl & LB_TCP_SYN) {
		if (b->conn_bind) {
			/* The cookie's (or the backend's) first number. */
			b->crec[c & (CONN_SLOTS - 1)].cy = seq;
			conn_client(b, m, &b->tb_req[c % BIND_HOSTS], c,
				    conn_x(c) + 1, seq + 1);
		} else {
			conn_client(b, m, &b->tc_ack, c, conn_x(c) + 1,
				    conn_y(c) + 1);
		}
	} else if (fl & LB_TCP_FIN) {
		g->conns++;
		conn_start(b, m);
	} else if (ntohs(iplen) > 40) {
		conn_client(b, m, &b->tc_fin, c, conn_x(c) + 1 + CONN_REQ_LEN,
			    (b->conn_bind ? b->crec[c & (CONN_SLOTS - 1)].cy
					  : conn_y(c)) +
				    1 + CONN_RESP_LEN);
	} else {
		conn_bad(g, "backend segment of no step");
		goto restart;
	}
	return;
restart:
	conn_start(b, m);
}

/*
 * bind: whether frame @p m is the worker's own ACK of a backend's
 * SYN-ACK (the SYN proxy completing the backend's handshake before it
 * sends what it held), the one output per connection no input matches.
 */
static inline int
conn_own_ack(const struct bench *b, const struct rte_mbuf *m)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t src, pl;
	uint16_t iplen;

	if (!b->conn_bind)
		return 0;
	memcpy(&src, f + OFF_SRC, 4);
	memcpy(&iplen, f + OFF_IP + 2, 2);
	pl = ntohs(iplen) - (uint32_t)(f[OFF_IP] & 0xf) * 4 -
	     (uint32_t)(f[OFF_TCP + 12] >> 4) * 4;
	return ntohl(src) - IP_SNAT < NB_SNATS &&
	       f[OFF_TCP + 13] == LB_TCP_ACK && pl == 0;
}

#endif /* LB_DP_BENCH_CONN_H */
