/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The client path: packets to a VIP. Looks the flow up, checks TCP
 * sequence numbers, admits and schedules new flows, and forwards with
 * full-NAT (fwd(), shared with the backend path). Segments that belong to
 * no flow are answered with a rate-limited RST.
 */
#include "worker_priv.h"

void
lb_worker_flow_forget(struct lb_worker *w, const struct lb_flow *f,
		      int free_port, int free_hold)
{
	if (f->svc < LB_CONF_MAX_SVCS && f->be < LB_CONF_MAX_BES)
		w->bst[f->svc][f->be].active--;
	fb_put(w, LB_FB_FLOW_END, f->svc, f->be, 0,
	       (uint64_t)f->pkts[0] + f->pkts[1]);
	if (free_port)
		lb_snat_port_free(w->snat, f->key[LB_FLOW_DIR_REPLY].dst,
				  f->key[LB_FLOW_DIR_REPLY].dport);
	if (free_hold && f->state == LB_FLOW_SYN_SENT)
		lb_worker_hold_release(w, f->l7);
	else if (f->state != LB_FLOW_SYN_SENT && f->l7 != LB_L7_NONE &&
		 w->l7 != NULL) {
		lb_worker_gate_end(w, NULL, f->l7, false, 0);
		lb_l7_close(w->l7, f->l7);
	}
}

/*
 * Full-NAT, either way: a packet of direction @p dir leaves with the
 * reverse of the other direction's key, so client -> VIP becomes
 * SNAT -> backend and backend -> SNAT becomes VIP -> client.
 */
void
lb_worker_fwd(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt *pkt,
	      const struct lb_flow *f, enum lb_flow_dir dir, uint64_t now)
{
	const struct lb_flow_key *k = &f->key[!dir];
	struct lb_be_stats *b = &w->bst[f->svc][f->be];

	if (unlikely(lb_nat_ttl_dec(frame_of(m), pkt) != 0)) {
		drop(w, m, LB_DROP_TTL);
		return;
	}
	b->pkts[dir]++;
	b->bytes[dir] += rte_pktmbuf_pkt_len(m);
	lb_nat_rewrite(frame_of(m), pkt, k->dst, k->dport, k->src, k->sport);
	lb_worker_route_out(w, m, k->src, now);
}

/*
 * Turns TCP segment @p m (parsed in @p pkt) into its RST as RFC 793's
 * "Reset Generation" builds it (lb_nat_tcp_rst(): never for a RST) and
 * sends it back to the sender, consuming @p m. @return 0 if sent.
 */
static int
rst_reply(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt *pkt,
	  uint64_t now)
{
	uint32_t peer = pkt->src;
	int len = lb_nat_tcp_rst(frame_of(m), rte_pktmbuf_data_len(m), pkt);

	if (len < 0) {
		rte_pktmbuf_free(m);
		return len;
	}
	rte_pktmbuf_trim(m, (uint16_t)(rte_pktmbuf_data_len(m) - len));
	lb_worker_route_out(w, m, peer, now);
	return 0;
}

/* Answers the client of a SYN (held or live) with a RST, consuming @p m. */
void
lb_worker_rst_client(struct lb_worker *w, struct rte_mbuf *m, uint64_t now)
{
	struct lb_pkt pkt;

	if (lb_pkt_parse(frame_of(m), rte_pktmbuf_data_len(m), &pkt) !=
	    LB_PKT_IPV4) {
		lb_worker_rst_client6(w, m, now);
		return;
	}
	if (rst_reply(w, m, &pkt, now) == 0)
		w->st.rst_sent++;
}

/*
 * A segment for a VIP or SNAT address that belongs to no flow: dropped,
 * and a TCP one answered with a RST if no_flow_rst() says so, from
 * bucket @p b at @p rate. Consumes @p m.
 */
void
lb_worker_no_flow(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt *pkt,
		  uint32_t b, uint64_t rate, uint64_t now)
{
	if (!no_flow_rst(w, pkt->proto, pkt->tcp_flags, b, rate, now)) {
		rte_pktmbuf_free(m);
		return;
	}
	if (rst_reply(w, m, pkt, now) == 0)
		w->st.rst_no_flow++;
}

/*
 * Keeps @p m as the SYN copy of a new flow's trials (LB_HOLD_NONE when
 * the pool is empty); a flow of the SYN proxy keeps its record @p sc with
 * it, and the client's ACK @p ack when it carries data.
 */
uint32_t
lb_worker_hold_syn(struct lb_worker *w, struct rte_mbuf *m,
		   struct rte_mbuf *ack, const struct lb_pkt *apkt,
		   const struct lb_synp_conn *sc)
{
	uint32_t h = lb_worker_hold_put(w, m);

	if (sc != NULL)
		lb_worker_synp_attach(w, h, ack, apkt, sc);
	return h;
}

/*
 * A new flow that cannot start: its first packet @p m is dropped for
 * @p why, and the client of the SYN proxy, whose handshake is complete,
 * gets a RST answering its ACK @p ack.
 */
static void
flow_refused(struct lb_worker *w, struct rte_mbuf *m, struct rte_mbuf *ack,
	     enum lb_drop why, uint64_t now)
{
	drop(w, m, why);
	if (ack != NULL)
		lb_worker_rst_client(w, ack, now);
}

/*
 * First trial of a new flow: the scheduler's pick, a SNAT port and a flow
 * entry; a TCP SYN is copied so that a refused trial can be resent to the
 * next backend without the client noticing. For the SYN proxy, @p m is
 * the SYN made from the client's ACK @p ack (@p apkt), @p sc what the
 * ACK said (worker_synp.c).
 */
static void
flow_new(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt *pkt,
	 int svc_idx, const struct lb_flow_key *orig, struct rte_mbuf *ack,
	 const struct lb_pkt *apkt, const struct lb_synp_conn *sc,
	 uint64_t now)
{
	const struct lb_dpconf_svc *svc = &w->conf->svc[svc_idx];
	struct lb_trial t = { .orig = *orig, .svc = (uint16_t)svc_idx,
			   .hold = LB_HOLD_NONE };
	uint64_t key = lb_flow_hash(w->dp->hash_seed, orig);
	struct lb_deferq *q = w->deferq[svc_idx];
	uint32_t be;
	int rc;

	/* A SYN retransmitted while its first copy waits in the queue joins
	 * that entry: it keeps the client's place. */
	if (q != NULL && lb_deferq_depth(q) > 0) {
		struct lb_deferq_entry qe;
		uint64_t old, qkey = deferq_key(w, orig);

		if (lb_deferq_lookup(q, qkey, &qe) == 0) {
			t.hold = lb_worker_hold_syn(w, m, ack, apkt, sc);
			rte_pktmbuf_free(m);
			if (t.hold == LB_HOLD_NONE)
				return;
			if (lb_deferq_push(q, qkey, t.hold, now, &old) ==
			    LB_DEFERQ_JOINED) {
				w->st.deferq_joined++;
				w->hold_since[t.hold] = w->hold_since[old];
				lb_worker_hold_release(w, (uint32_t)old);
			}
			return;
		}
	}
	rc = w->sched[svc_idx] == NULL ?
		     -ENOENT :
		     w->ops[svc_idx]->pick(w->sched[svc_idx], key, &w->rng,
					   &be);
	if (rc != 0) {
		if (svc->proto == LB_IPPROTO_TCP && q != NULL) {
			t.hold = lb_worker_hold_syn(w, m, ack, apkt, sc);
			rte_pktmbuf_free(m);
			if (t.hold != LB_HOLD_NONE)
				lb_worker_defer_or_rst(w, &t, now);
			return;
		}
		flow_refused(w, m, ack, LB_DROP_NO_BACKEND, now);
		return;
	}
	if (lb_worker_snat_take(w, &t, be, now) != 0) {
		flow_refused(w, m, ack, LB_DROP_SNAT_FULL, now);
		return;
	}
	if (svc->proto == LB_IPPROTO_TCP)
		t.hold = lb_worker_hold_syn(w, m, ack, apkt, sc);
	rc = lb_worker_flow_start(w, m, pkt, &t, be, sc, now);
	if (rc != 0) {
		/* The proxy's client, established, hears of it. */
		if (sc == NULL || !lb_worker_synp_rst(w, t.hold, now))
			lb_worker_hold_release(w, t.hold);
		lb_snat_port_free(w->snat, t.snat_ip, t.snat_port);
		drop(w, m, rc == -ENOSPC ? LB_DROP_FLOW_FULL : LB_DROP_NO_FLOW);
		return;
	}
	w->st.flows_created++;
}

/*
 * Admission of a new L4 flow (lb/admit.h); HTTP services admit per
 * request instead. Returns true when the flow is rejected and @p m gone.
 */
static bool
admit_reject(struct lb_worker *w, struct rte_mbuf *m, const struct lb_pkt *pkt,
	     int svc_idx, uint64_t now)
{
	const struct lb_dpconf_svc *svc = &w->conf->svc[svc_idx];
	const struct lb_admit_conf *a = &svc->opts.admit;
	uint32_t client = rte_be_to_cpu_32(pkt->src);
	enum lb_admit_verdict v;

	if (unlikely(svc->opts.http && w->l7 == NULL &&
		     lb_worker_l7_gated(svc)))
		return lb_worker_l7_nopool(w, m, svc_idx, client, NULL, now);
	if (a->rate == 0 || svc->opts.http || w->admit == NULL)
		return false;
	v = lb_admit_check(w->admit, (uint16_t)svc_idx, a, client, 0, now);
	if (!lb_admit_rejected(v))
		return false;
	/* Once per key and interval: the key just entered the negative
	 * cache, so lb-control may act on the source. */
	if (v == LB_ADMIT_REJ_EMPTY)
		lb_worker_fb_put_full(w, LB_FB_REJECT, (uint32_t)svc_idx, 0,
				      (uint16_t)(v | (uint16_t)a->key << 8),
				      client, 0, 0);
	if (a->reject == LB_ADMIT_REJECT_RST && svc->proto == LB_IPPROTO_TCP)
		lb_worker_rst_client(w, m, now);
	else
		rte_pktmbuf_free(m);
	return true;
}

/*
 * admit_reject() for an IPv6 service, at layer 4 as its flows are: the
 * same buckets, counters and negative cache, keyed by the client's
 * address or its /prefix6 (lb_admit_check6()), the same reject record
 * (carrying that key) and the same RST or drop.
 */
bool
lb_worker_admit6_reject(struct lb_worker *w, struct rte_mbuf *m, int svc_idx,
			const uint8_t client[16], uint64_t now)
{
	const struct lb_dpconf_svc *svc = &w->conf->svc[svc_idx];
	const struct lb_admit_conf *a = &svc->opts.admit;
	enum lb_admit_verdict v;

	/* http services admit per request (worker_l7.c), as IPv4's. */
	if (unlikely(svc->opts.http && w->l7 == NULL &&
		     lb_worker_l7_gated(svc)))
		return lb_worker_l7_nopool(w, m, svc_idx, 0, client, now);
	if (a->rate == 0 || svc->opts.http || w->admit == NULL)
		return false;
	v = lb_admit_check6(w->admit, (uint16_t)svc_idx, a, client, 0, now);
	if (!lb_admit_rejected(v))
		return false;
	/* As admit_reject(): once per key and interval. */
	if (v == LB_ADMIT_REJ_EMPTY) {
		uint8_t key[16];
		uint8_t len = lb_admit_key6(a, client, key);

		lb_worker_fb_put_reject6(w, (uint32_t)svc_idx,
					 (uint16_t)(v | (uint16_t)a->key << 8),
					 len, key);
	}
	if (a->reject == LB_ADMIT_REJECT_RST && svc->proto == LB_IPPROTO_TCP)
		lb_worker_rst_client6(w, m, now);
	else
		rte_pktmbuf_free(m);
	return true;
}

/* lb_worker_l7_open() at the client's ACK @p pkt. */
static inline bool
l7_open(struct lb_worker *w, struct lb_flow *f, const uint8_t *fr,
	const struct lb_pkt *pkt)
{
	return lb_worker_l7_open(w, f, tcp_word(fr, pkt, 4),
				 tcp_word(fr, pkt, 8));
}

/*
 * The client's ACK @p m completes the handshake of flow @p f (entry
 * @p idx): its follower entry, its PROXY header.
 * @return true when @p m was taken (a gated flow without an entry).
 */
static bool
handshake_done(struct lb_worker *w, struct lb_flow *f, uint32_t idx,
	       struct rte_mbuf *m, const struct lb_pkt *pkt, uint64_t now)
{
	if (unlikely(w->synp_svc >> f->svc & 1))
		w->synp_auto[f->svc].done++;
	if (!l7_open(w, f, frame_of(m), pkt) &&
	    lb_worker_l7_no_entry(w, f, idx, m, pkt, now))
		/* No follower entry for a gated flow: its fallback. */
		return true;
	if (w->pp_svc >> f->svc & 1)
		lb_worker_pp_open(w, f, idx, m, pkt, now);
	return false;
}

/* A pure SYN on a closed flow: a new connection on its tuple. */
static inline bool
reopens(const struct lb_flow *f, const struct lb_pkt *pkt)
{
	return pkt->proto == LB_IPPROTO_TCP &&
	       (pkt->tcp_flags & (LB_TCP_SYN | LB_TCP_ACK)) == LB_TCP_SYN &&
	       (f->state == LB_FLOW_TIME_WAIT || f->state == LB_FLOW_CLOSED);
}

/*
 * Whether the first packet of a flow may create it; counts and frees it
 * otherwise. A packet from one of our own addresses (a land attack: the
 * backend's answer would go from the VIP to the VIP) or with a checksum
 * the backend will refuse would hold a flow, a SNAT port and, for a SYN,
 * every backend's trial and a deferred queue entry, for nothing. A
 * source over its budget of new flows (src_budget.h) would take the
 * same. Only here, before any state: an established flow's packets keep
 * the incremental path and its cost.
 */
static bool
first_pkt_sane(struct lb_worker *w, struct rte_mbuf *m,
	       const struct lb_pkt *pkt)
{
	if (unlikely(pkt->src == pkt->dst ||
		     lb_dpconf_is_own(w->conf, pkt->src))) {
		drop(w, m, LB_DROP_SRC_OURS);
		return false;
	}
	if (unlikely(!l4_csum_ok(m, pkt))) {
		drop(w, m, LB_DROP_L4_CSUM);
		return false;
	}
	return true;
}

static bool
first_pkt_ok(struct lb_worker *w, struct rte_mbuf *m, const struct lb_pkt *pkt,
	     uint64_t now)
{
	if (!first_pkt_sane(w, m, pkt))
		return false;
	/* Silently: a RST would go to whoever the source claims to be,
	 * and the client's own retransmission comes once the budget has
	 * refilled. */
	if (unlikely(!lb_src_budget_take(w->srcb, rte_be_to_cpu_32(pkt->src),
					 now))) {
		rte_pktmbuf_free(m);
		return false;
	}
	return true;
}

/*
 * A client's SYN for a VIP that has no flow (or only a closed one):
 * answered with a cookie while the service's SYN proxy is on, else the
 * first trial of a new flow.
 */
static void
new_syn(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt *pkt,
	int svc_idx, const struct lb_flow_key *k, uint64_t now)
{
	if (unlikely(w->synp_svc >> svc_idx & 1)) {
		lb_worker_synp_auto_syn(w, (uint32_t)svc_idx, now);
		/* A cookie costs no state: no budget of new flows, which
		 * the ACK that proves it pays. */
		if (w->synp_act >> svc_idx & 1) {
			if (first_pkt_sane(w, m, pkt))
				lb_worker_synp_syn(w, m, pkt, svc_idx, now);
			return;
		}
	}
	if (!first_pkt_ok(w, m, pkt, now))
		return;
	if (admit_reject(w, m, pkt, svc_idx, now))
		return;
	flow_new(w, m, pkt, svc_idx, k, NULL, NULL, NULL, now);
}

/*
 * A segment without a flow for a service whose SYN proxy is on or auto
 * (cookies made while it was on stay valid after it turned off): an ACK
 * proving a cookie starts the flow with a SYN of the worker's own to the
 * backend. A segment of a connection whose SYN waits in the deferred
 * queue is dropped: the client is established, a RST would end it, and
 * it sends the segment again. @return true when @p m was taken
 */
static bool
synp_no_flow(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt *pkt,
	     int svc_idx, const struct lb_flow_key *k, uint64_t now)
{
	struct lb_deferq *q = w->deferq[svc_idx];
	struct lb_syncookie_opts so;
	struct lb_deferq_entry qe;
	struct lb_synp_conn sc;
	struct rte_mbuf *s;
	struct lb_pkt spkt;

	/* A connection that waits for the bytes that choose its pool. */
	if (unlikely(w->bind_svc >> svc_idx & 1) &&
	    lb_worker_bind_seg(w, m, pkt, k, now))
		return true;
	if (pkt->tcp_flags & (LB_TCP_RST | LB_TCP_SYN))
		return false;
	if (q != NULL && lb_deferq_depth(q) > 0 &&
	    lb_deferq_lookup(q, deferq_key(w, k), &qe) == 0) {
		w->st.synp_held_dropped++;
		rte_pktmbuf_free(m);
		return true;
	}
	if (lb_worker_synp_check(w, m, pkt, svc_idx, &sc, &so, now) != 0)
		return false;
	if (!first_pkt_ok(w, m, pkt, now))
		return true;
	if (admit_reject(w, m, pkt, svc_idx, now))
		return true;
	if (unlikely(w->bind_svc >> svc_idx & 1)) {
		/* Content routing: the backend once the first bytes say
		 * which pool (worker_bind.c). */
		lb_worker_bind_open(w, m, pkt, svc_idx, k, &sc, &so, now);
		return true;
	}
	s = lb_worker_synp_syn_of(w, m, pkt, &so, &sc, &spkt);
	if (s == NULL) {
		/* Its data, sent again, proves the cookie once more. */
		rte_pktmbuf_free(m);
		return true;
	}
	flow_new(w, s, &spkt, svc_idx, k, m, pkt, &sc, now);
	return true;
}

void
lb_worker_from_client(struct lb_worker *w, struct rte_mbuf *m,
		      struct lb_pkt *pkt, int svc_idx, uint64_t hash,
		      uint64_t now)
{
	struct lb_flow_key k;
	enum lb_flow_dir dir;
	struct lb_l7_rej *r;
	struct lb_flow *f;
	uint32_t idx;
	int v, fl;

	if (unlikely(ttl_expires(w, m, pkt)))
		return;
	idx = flow_of(w, pkt, hash, &k, &dir);
	if (idx == LB_FLOW_NONE) {
		/* Only a SYN (TCP) or any datagram (UDP) opens a flow, or
		 * an ACK that proves a cookie of the SYN proxy. */
		if (pkt->proto == LB_IPPROTO_TCP &&
		    (pkt->tcp_flags & (LB_TCP_SYN | LB_TCP_ACK)) !=
			    LB_TCP_SYN) {
			if (unlikely(w->synp_svc >> svc_idx & 1) &&
			    synp_no_flow(w, m, pkt, svc_idx, &k, now))
				return;
			lb_worker_no_flow(
				w, m, pkt, (uint32_t)svc_idx,
				w->conf->svc[svc_idx]
					.opts.flow[LB_CONF_FLOW_RST_RATE],
				now);
			return;
		}
		new_syn(w, m, pkt, svc_idx, &k, now);
		return;
	}
	f = lb_flow_get(w->ft, idx);
	/* The SYN proxy's client, established, while the backend's
	 * handshake runs: its first data waits, unchecked, since the
	 * backend has not seen it (counting it would make the backend's
	 * SYN-ACK look stale to the sequence checks). */
	if (unlikely(f->state == LB_FLOW_SYN_SENT) && synp_holds(w, f, idx) &&
	    lb_worker_synp_early(w, f, m, pkt, now))
		return;
	fl = tcp_check(w, f, idx, LB_FLOW_DIR_ORIG, m, pkt, now);
	if (fl < 0)
		return;
	if (unlikely(reopens(f, pkt))) {
		/* A new connection on the tuple of a closed flow is a new
		 * flow, checked, picked and counted like any other (as
		 * IPVS's conn_reuse_mode 1 does): kept on its old backend it
		 * would bypass the scheduler, stay on a backend that fails
		 * or is drained, and be missing from the counts. The old
		 * entry and its SNAT port go; the backend sees a new
		 * tuple. */
		if (!first_pkt_sane(w, m, pkt))
			return;
		lb_worker_flow_forget(w, f, 1, 1);
		lb_flow_delete(w->ft, idx);
		new_syn(w, m, pkt, svc_idx, &k, now);
		return;
	}
	if (f->state == LB_FLOW_SYN_SENT) {
		/* A retransmitted SYN must not refresh the trial's timer:
		 * the SYN timeout measures the backend's silence. */
		if (!(pkt->tcp_flags & LB_TCP_SYN))
			flow_touch(w, f, idx, LB_FLOW_DIR_ORIG, (uint8_t)fl,
				   now);
		lb_worker_fwd(w, m, pkt, f, LB_FLOW_DIR_ORIG, now);
		return;
	}
	if (unlikely(f->state == LB_FLOW_SYN_RECV) &&
	    pkt->proto == LB_IPPROTO_TCP &&
	    (fl & (LB_TCP_SYN | LB_TCP_RST | LB_TCP_FIN | LB_TCP_ACK)) ==
		    LB_TCP_ACK &&
	    handshake_done(w, f, idx, m, pkt, now))
		return;
	r = unlikely(f->l7 != LB_L7_NONE) && f->state != LB_FLOW_SYN_SENT ?
		    rej_of(w, f->l7) :
		    NULL;
	if (unlikely(r != NULL && r->state == LB_L7_RJ_DONE)) {
		lb_worker_rej_client(w, f, r, m, pkt, now);
		return;
	}
	/* A plain flow's packet pays no call to learn it is not followed. */
	v = likely(f->l7 == LB_L7_NONE) ?
		    LB_L7_PASS :
		    lb_worker_l7_follow(w, f, 0, frame_of(m), pkt, now);
	flow_touch(w, f, idx, LB_FLOW_DIR_ORIG, (uint8_t)fl, now);
	if (unlikely(v != LB_L7_PASS) &&
	    lb_worker_l7_admission(w, f, idx, m, pkt, v, now))
		return;
	if (unlikely(w->pp_used) && lb_worker_pp_client(w, f, idx, m, pkt))
		return;
	lb_worker_fwd(w, m, pkt, f, LB_FLOW_DIR_ORIG, now);
	l7_closed(w, f);
}
