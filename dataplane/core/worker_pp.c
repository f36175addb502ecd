/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The PROXY protocol of a service (docs/dataplane.md, "PROXY protocol"),
 * and the translation of every spliced flow's segments (the SYN proxy's
 * too, worker_synp.c):
 * when the client's ACK completes the handshake, the backend gets the
 * header (proxy_hdr.h) as a segment of its own, in the client's name, in
 * front of the client's first byte; from then on the client's sequence
 * numbers are shifted by its length and the backend's acknowledgements
 * and SACK blocks shifted back (tcp_splice.h). On UDP, every datagram of
 * the client carries the header in front of its payload. Apart from the
 * stages since only flows of such services come here.
 */
#include "worker_priv.h"

#include "csum.h"

#include "proxy_hdr.h"

/* The header of flow @p f in version @p ver into @p hdr; its length. */
static int
pp_build(const struct lb_flow *f, uint8_t ver,
	 uint8_t hdr[static LB_PROXY_V2_MAX])
{
	const struct lb_flow_key *k = &f->key[LB_FLOW_DIR_ORIG];
	struct lb_proxy_conn c = {
		.src = k->src,
		.dst = k->dst,
		.sport = k->sport,
		.dport = k->dport,
		.proto = k->proto,
	};

	if (ver == LB_CONF_PP_V1)
		return lb_proxy_v1((char *)hdr, LB_PROXY_V2_MAX, &c);
	return lb_proxy_v2(hdr, LB_PROXY_V2_MAX, &c, NULL);
}

/* Sends the header of flow @p f (record @p p) to its backend, with the
 * link header of @p frame. */
static void
pp_send(struct lb_worker *w, const struct lb_flow *f,
	const struct lb_pp_flow *p, const uint8_t *frame, uint32_t l3,
	uint64_t now)
{
	uint8_t hdr[LB_PROXY_V2_MAX];
	struct rte_mbuf *m;
	int n = pp_build(f, p->ver, hdr);

	if (n != p->len)
		return;
	m = lb_worker_seg_alloc(w, frame, l3);
	if (m == NULL)
		return;
	lb_worker_seg_send(w, f, m, l3, false, p->at, p->ack,
			   LB_TCP_ACK | LB_TCP_PSH, p->win, hdr, (uint16_t)n,
			   now);
}

/* A new connection on the tuple: no offsets of any kind. */
#define LB_PP_ETH 14

/* The first resend delay: Linux's minimum RTO; each try doubles it. */
#define PP_RTO_NS 200000000ull

/* Arms try @p try of the header of flow entry @p idx; none when its FIFO
 * is full (the backend's duplicate ACKs still get it again). */
static void
pp_arm(struct lb_worker *w, uint32_t idx, uint32_t at, unsigned int try,
       uint64_t now)
{
	struct lb_pp_fifo *q = &w->pp_rto[try];

	if (q->n == LB_PP_TIMER_CAP)
		return;
	q->e[(q->head + q->n++) % LB_PP_TIMER_CAP] =
		(struct lb_pp_timer){
			idx, at,
			now + ((w->dp->pp_rto_ns != 0 ? w->dp->pp_rto_ns :
							  PP_RTO_NS)
			       << try)};
}

static inline void
pp_reset(struct lb_worker *w, uint32_t idx)
{
	memset(&w->spl[idx], 0, sizeof(w->spl[idx]));
	memset(&w->pp[idx], 0, sizeof(w->pp[idx]));
	memset(&w->synp[idx], 0, sizeof(w->synp[idx]));
}

/* Whether segments of flow entry @p idx are translated. */
static inline bool
spliced(const struct lb_worker *w, uint32_t idx)
{
	return w->pp[idx].state != LB_PP_NONE ||
	       w->synp[idx].state == LB_SYNP_ON;
}

/*
 * The client's segment @p m (parsed in @p pkt) without its payload and
 * with the @p n bytes of @p hdr instead, PSH set, in a new mbuf parsed in
 * @p out: the header's segment carries the client's own options, its
 * timestamps among them, which a stack that enforces RFC 7323 section
 * 3.2 requires on every segment of a connection that negotiated them.
 * Checksums are computed whole (the NAT rewrite then updates them).
 * @return the mbuf, or NULL (counted) when the pool is empty
 */
static struct rte_mbuf *
pp_seg_copy(struct lb_worker *w, const struct rte_mbuf *m,
	    const struct lb_pkt *pkt, const uint8_t *hdr, uint16_t n,
	    struct lb_pkt *out)
{
	uint32_t hl = pkt->payload_off, tl = hl - pkt->l4_off + n;
	struct rte_mbuf *c = rte_pktmbuf_alloc(w->dp->pool);
	uint8_t pseudo[12], *ip, *th;
	uint32_t sum;

	if (c == NULL || rte_pktmbuf_append(c, (uint16_t)(hl + n)) == NULL) {
		rte_pktmbuf_free(c);
		w->st.drop[LB_DROP_NOMBUF]++;
		return NULL;
	}
	memcpy(frame_of(c), rte_pktmbuf_mtod(m, const uint8_t *), hl);
	memcpy(frame_of(c) + hl, hdr, n);
	*out = *pkt;
	out->payload_len = n;
	out->ip_len = (uint16_t)(pkt->l4_off - pkt->l3_off + tl);
	out->tcp_flags |= LB_TCP_PSH;
	ip = frame_of(c) + pkt->l3_off;
	th = frame_of(c) + pkt->l4_off;
	wr16(ip + 2, out->ip_len);
	wr16_raw(ip + 10, 0);
	wr16_raw(ip + 10, lb_csum(ip, pkt->l4_off - pkt->l3_off));
	th[13] |= LB_TCP_PSH;
	wr16_raw(th + 16, 0);
	memcpy(pseudo, ip + 12, 8);
	pseudo[8] = 0;
	pseudo[9] = LB_IPPROTO_TCP;
	wr16(pseudo + 10, (uint16_t)tl);
	sum = lb_csum_partial(pseudo, sizeof(pseudo), 0);
	wr16_raw(th + 16,
		 (uint16_t)~lb_csum_fold(lb_csum_partial(th, tl, sum)));
	return c;
}

/*
 * Segment @p m is the client's ACK that completes the handshake of flow
 * @p f (entry @p idx), of a service whose backends get the header: the
 * header goes now, as haproxy's send-proxy does, so that a backend that
 * speaks first, or closes before the client says anything, has it too;
 * @p m follows it, shifted. The header's segment is a copy of @p m's
 * headers, forwarded as @p m is.
 */
void
lb_worker_pp_open(struct lb_worker *w, const struct lb_flow *f, uint32_t idx,
		  struct rte_mbuf *m, const struct lb_pkt *pkt, uint64_t now)
{
	const uint8_t *fr = frame_of(m);
	const uint8_t *th = fr + pkt->l4_off;
	struct lb_pp_flow *p = &w->pp[idx];
	uint8_t hdr[LB_PROXY_V2_MAX];
	struct rte_mbuf *c;
	struct lb_pkt cp;
	int n;

	/* The SYN proxy's offsets stay: the header goes in its numbers. */
	memset(p, 0, sizeof(*p));
	if (w->synp[idx].state != LB_SYNP_ON)
		memset(&w->spl[idx], 0, sizeof(w->spl[idx]));
	p->ver = w->conf->svc[f->svc].opts.proxy_proto;
	n = pp_build(f, p->ver, hdr);
	if (n <= 0)
		return;
	p->at = tcp_word(fr, pkt, 4);
	p->ack = tcp_word(fr, pkt, 8) - w->spl[idx].seq[LB_TCP_SPL_REPLY];
	p->win = (uint16_t)(th[14] << 8 | th[15]);
	p->len = (uint8_t)n;
	p->state = LB_PP_SENT;
	w->pp_used = true;
	w->st.pp_sent++;
	/* Lost with the pool empty, it goes again as any lost header. The
	 * copy is translated as the client's segments were before it. */
	pp_arm(w, idx, p->at, 0, now);
	c = pp_seg_copy(w, m, pkt, hdr, (uint16_t)n, &cp);
	if (c != NULL && w->synp[idx].state == LB_SYNP_ON) {
		lb_tcp_splice_seg(&w->spl[idx], LB_TCP_SPL_ORIG,
				  frame_of(c) + cp.l4_off,
				  rte_pktmbuf_data_len(c) - cp.l4_off);
		lb_tcp_splice_win(frame_of(c) + cp.l4_off,
				  w->synp[idx].wshift[LB_FLOW_DIR_ORIG]);
	}
	lb_tcp_splice_insert(&w->spl[idx], LB_TCP_SPL_ORIG, p->at, (uint32_t)n);
	if (c != NULL)
		lb_worker_fwd(w, c, &cp, f, LB_FLOW_DIR_ORIG, now);
}

/*
 * Client datagram @p m of flow @p f with the version 2 header in front of
 * its payload: the link, IP and UDP headers move towards the mbuf's
 * headroom by the header's length and the header goes in the room they
 * leave. The IP checksum is computed again, the UDP one updated (RFC
 * 1624): the header's words, at an even offset, and the length counted
 * twice (the field and the pseudo-header). @return false when @p m has
 * no room for it.
 */
static bool
pp_udp(const struct lb_flow *f, struct rte_mbuf *m, struct lb_pkt *pkt)
{
	uint8_t hdr[LB_PROXY_V2_MAX], *fr, *ip, *uh;
	uint32_t hl = pkt->payload_off, ihl = pkt->l4_off - pkt->l3_off;
	uint16_t old;
	uint32_t sum;
	int n = pp_build(f, LB_CONF_PP_V2, hdr);

	if (n <= 0 || m->nb_segs > 1 || rte_pktmbuf_headroom(m) < (uint32_t)n ||
	    pkt->ip_len + (uint32_t)n > UINT16_MAX)
		return false;
	fr = (uint8_t *)rte_pktmbuf_prepend(m, (uint16_t)n);
	memmove(fr, fr + n, hl);
	memcpy(fr + hl, hdr, (size_t)n);
	ip = fr + pkt->l3_off;
	uh = fr + pkt->l4_off;
	pkt->ip_len = (uint16_t)(pkt->ip_len + n);
	pkt->payload_len = (uint16_t)(pkt->payload_len + n);
	wr16(ip + 2, pkt->ip_len);
	wr16_raw(ip + 10, 0);
	wr16_raw(ip + 10, lb_csum(ip, ihl));
	wr16(uh + 4, (uint16_t)(rd16(uh + 4) + n));
	old = rd16_raw(uh + 6);
	if (old == 0) /* sent without a checksum: none to keep */
		return true;
	sum = (uint16_t)~old + lb_csum_partial(hdr, (size_t)n, 0) +
	      2u * rte_cpu_to_be_16((uint16_t)n);
	old = (uint16_t)~lb_csum_fold(sum);
	wr16_raw(uh + 6, old == 0 ? 0xffff : old);
	return true;
}

/*
 * Client datagram @p m of flow @p f, of a service whose backends get the
 * header: with it, counted; dropped when it cannot take it.
 * @return true when @p m was taken
 */
bool
lb_worker_pp_datagram(struct lb_worker *w, const struct lb_flow *f,
		      struct rte_mbuf *m, struct lb_pkt *pkt)
{
	if (unlikely(!pp_udp(f, m, pkt))) {
		drop(w, m, LB_DROP_NOMBUF);
		return true;
	}
	w->st.pp_sent++;
	return false;
}

/*
 * Client segment @p m of flow @p f (entry @p idx), checked, before it
 * leaves: shifted past the header. A SYN starts a connection again on
 * the tuple, which has no header yet. A datagram gets the header when
 * its service says so.
 * @return true when @p m was taken
 */
bool
lb_worker_pp_client(struct lb_worker *w, const struct lb_flow *f, uint32_t idx,
		    struct rte_mbuf *m, struct lb_pkt *pkt)
{
	if (pkt->proto == LB_IPPROTO_UDP)
		return (w->pp_svc >> f->svc & 1) &&
		       lb_worker_pp_datagram(w, f, m, pkt);
	if (pkt->proto != LB_IPPROTO_TCP || likely(!spliced(w, idx)))
		return false;
	if (pkt->tcp_flags & LB_TCP_SYN) {
		pp_reset(w, idx);
		return false;
	}
	lb_tcp_splice_seg(&w->spl[idx], LB_TCP_SPL_ORIG,
			  frame_of(m) + pkt->l4_off,
			  rte_pktmbuf_data_len(m) - pkt->l4_off);
	if (w->synp[idx].wshift[LB_FLOW_DIR_ORIG] != 0)
		lb_tcp_splice_win(frame_of(m) + pkt->l4_off,
				  w->synp[idx].wshift[LB_FLOW_DIR_ORIG]);
	return false;
}

/*
 * Backend segment @p m of flow @p f (entry @p idx), before its sequence
 * numbers are checked: its acknowledgement and SACK blocks are taken back
 * into the client's numbers, which the tracking record and the client
 * know. Until the backend acknowledges the header, a segment that says
 * it is missing, an ACK of its first byte with nothing else (the
 * duplicate ACK of the client's bytes that came after it, or its
 * SYN-ACK sent again: the header's segment also completed its
 * handshake), gets it again and goes no further: the client never sent
 * those bytes and would not resend them.
 * @return true when @p m was taken
 */
bool
lb_worker_pp_backend(struct lb_worker *w, const struct lb_flow *f, uint32_t idx,
		     struct rte_mbuf *m, const struct lb_pkt *pkt, uint64_t now)
{
	struct lb_pp_flow *p = &w->pp[idx];
	uint32_t ack;

	if (likely(!spliced(w, idx)))
		return false;
	if (f->state == LB_FLOW_SYN_SENT) {
		/* A new connection on the tuple: nothing inserted yet. */
		pp_reset(w, idx);
		return false;
	}
	if (p->state == LB_PP_SENT && (pkt->tcp_flags & LB_TCP_ACK)) {
		ack = tcp_word(frame_of(m), pkt, 8);
		if ((int32_t)(ack - (p->at + p->len)) >= 0) {
			p->state = LB_PP_ACKED;
		} else if (ack == p->at && pkt->payload_len == 0 &&
			   !(pkt->tcp_flags & (LB_TCP_RST | LB_TCP_FIN))) {
			w->st.pp_resent++;
			pp_send(w, f, p, frame_of(m), pkt->l3_off, now);
			rte_pktmbuf_free(m);
			return true;
		}
	}
	lb_tcp_splice_seg(&w->spl[idx], LB_TCP_SPL_REPLY,
			  frame_of(m) + pkt->l4_off,
			  rte_pktmbuf_data_len(m) - pkt->l4_off);
	if (w->synp[idx].wshift[LB_FLOW_DIR_REPLY] != 0 &&
	    !(pkt->tcp_flags & LB_TCP_SYN))
		lb_tcp_splice_win(frame_of(m) + pkt->l4_off,
				  w->synp[idx].wshift[LB_FLOW_DIR_REPLY]);
	return false;
}

/*
 * Headers whose time is up and that the backend has still not
 * acknowledged are sent again: a backend that speaks first waits for the
 * header before it says anything, and the client, which never sent it,
 * will not send it again, so without the timer a lost header would hold
 * the connection until one side gives up. A flow whose entry went, or
 * was taken by another connection, has another header or none.
 */
void
lb_worker_pp_house(struct lb_worker *w, uint64_t now)
{
	/* The link header is the way out's to write (route_out()). */
	static const uint8_t eth[LB_PP_ETH] = {[12] = 0x08, [13] = 0x00};

	for (unsigned int t = 0; t < LB_PP_TRIES; t++) {
		struct lb_pp_fifo *q = &w->pp_rto[t];

		while (q->n > 0 && q->e[q->head].due <= now) {
			struct lb_pp_timer e = q->e[q->head];
			const struct lb_pp_flow *p = &w->pp[e.idx];

			q->head = (q->head + 1) % LB_PP_TIMER_CAP;
			q->n--;
			if (p->state != LB_PP_SENT || p->at != e.at)
				continue;
			w->st.pp_resent++;
			pp_send(w, lb_flow_get(w->ft, e.idx), p, eth,
				LB_PP_ETH, now);
			if (t + 1 < LB_PP_TRIES)
				pp_arm(w, e.idx, e.at, t + 1, now);
		}
	}
}
