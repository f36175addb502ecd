/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fnat64: an IPv6 client, an IPv6 VIP, an IPv4 backend. The client's
 * packets leave as IPv4 from an IPv4 SNAT address and a port of this
 * worker's IPv4 slice, as fnat44's do; the backend's replies come back
 * to that address through the IPv4 path, which finds the flow by its
 * plain IPv4 backend-side key (flow6.h) and hands it here, and leave as
 * IPv6 from the VIP. ICMP errors cross the same way (icmp64.h). The
 * headers are swapped in the mbuf's headroom (nat6.h): the IPv4 packet
 * is 20 bytes shorter at the front, the IPv6 one 20 bytes longer.
 */
#include "worker_priv.h"

#include "flow6.h"
#include "icmp64.h"
#include "nat6.h"

/* The frame of @p m now starts at buffer offset @p off and is @p len
 * bytes long (a translation moved its front). */
static void
mbuf_reframe(struct rte_mbuf *m, uint32_t off, uint32_t len)
{
	m->data_off = (uint16_t)off;
	m->data_len = (uint16_t)len;
	m->pkt_len = len;
}

/* Client to backend: the IPv6 packet @p m becomes the IPv4 one of flow
 * @p f's backend side. */
static void
to_backend(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt6 *pkt,
	   const struct lb_flow *f, uint64_t now)
{
	const struct lb_flow_key *k = &f->key[LB_FLOW_DIR_REPLY];
	struct lb_be_stats *b = &w->bst[f->svc][f->be];
	struct lb_pkt out;
	int off;

	if (unlikely(lb_nat6_hop_dec(frame_of(m), pkt) != 0)) {
		drop(w, m, LB_DROP_HOP_LIMIT);
		return;
	}
	b->pkts[LB_FLOW_DIR_ORIG]++;
	b->bytes[LB_FLOW_DIR_ORIG] += rte_pktmbuf_pkt_len(m);
	if (unlikely(m->nb_segs != 1)) {
		drop(w, m, LB_DROP_IP6_UNSERVED);
		return;
	}
	off = lb_nat64_xlate(m->buf_addr, m->data_off, rte_pktmbuf_data_len(m),
			     pkt, k->dst, k->dport, k->src, k->sport, &out);
	if (off < 0) {
		drop(w, m, LB_DROP_IP6_UNSERVED);
		return;
	}
	mbuf_reframe(m, (uint32_t)off, (uint32_t)out.l3_off + out.ip_len);
	w->st.nat64_out++;
	lb_worker_route_out(w, m, k->src, now);
}

void
lb_worker_fnat64_out(struct lb_worker *w, struct rte_mbuf *m,
		     struct lb_pkt6 *pkt, uint32_t idx, uint64_t now)
{
	to_backend(w, m, pkt, &lb_flow_entries(w->ft)[idx], now);
}

void
lb_worker_fnat64_fwd(struct lb_worker *w, struct rte_mbuf *m,
		     struct lb_pkt6 *pkt, uint32_t idx, uint8_t fl,
		     uint64_t now)
{
	struct lb_flow *f = &lb_flow_entries(w->ft)[idx];

	/* A retransmitted SYN leaves the trial's timer, which measures the
	 * backend's silence, alone (as fnat66's). */
	if (!(f->state == LB_FLOW_SYN_SENT && (pkt->tcp_flags & LB_TCP_SYN)))
		flow_touch(w, f, idx, LB_FLOW_DIR_ORIG, fl, now);
	to_backend(w, m, pkt, f, now);
}

int
lb_worker_fnat64_start(struct lb_worker *w, struct rte_mbuf *m,
		       struct lb_pkt6 *pkt, int s, uint32_t be,
		       const struct lb_flow6_tuple *orig, uint32_t hold,
		       uint32_t trials, uint64_t now)
{
	const struct lb_dpconf_be *b = &w->conf->svc[s].be[be];
	struct lb_trial t = {.svc = (uint16_t)s};
	struct lb_flow *f;
	int idx;

	/* The IPv4 slice, as fnat44's first trial takes it: a pair no
	 * flow of either kind holds towards this backend. */
	if (lb_worker_snat_take(w, &t, be, now) != 0)
		return -EADDRNOTAVAIL;
	idx = lb_flow64_insert(w->ft, w->f6, orig, b->ip, t.snat_ip, b->port,
			       t.snat_port, (uint16_t)s, be, now);
	if (idx < 0) {
		lb_snat_port_free(w->snat, t.snat_ip, t.snat_port);
		return idx;
	}
	f = &lb_flow_entries(w->ft)[idx];
	f->l7 = hold;
	f->flags = (uint8_t)((f->flags & ~LB_FLOW_F_USER_MASK) |
			     ((trials + 1) << TRIALS_SHIFT));
	lb_worker_track6_init(w, (uint32_t)idx, m, pkt);
	if (unlikely(w->pp_used || (w->synp_svc >> s & 1)))
		lb_worker_synp6_flow(w, (uint32_t)idx, hold);
	w->bst[s][be].flows++;
	w->bst[s][be].active++;
	lb_flow_touch(w->ft, (uint32_t)idx, LB_FLOW_DIR_ORIG, pkt->tcp_flags,
		      now);
	to_backend(w, m, pkt, f, now);
	return 0;
}

/*
 * The backend's segment @p m of followed fnat64 flow @p f (entry @p idx),
 * fed to its follower (worker_l7.c) before its headers change, as
 * lb_worker_from_backend() feeds an IPv4 flow's. @return the verdict,
 * or -1 when @p m was taken (the flow refused or reset by us). Not
 * inlined: unfollowed flows pay only the test.
 */
static __rte_noinline int
follow_reply(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt *pkt,
	     struct lb_flow *f, uint32_t idx, uint64_t now)
{
	const struct lb_l7_rej *r = rej_of(w, f->l7);
	int v;

	if (r != NULL && r->state == LB_L7_RJ_DONE) {
		/* Refused: we stand in for the server. */
		w->st.l7_rej_absorbed++;
		rte_pktmbuf_free(m);
		return -1;
	}
	v = lb_worker_l7_follow(w, f, LB_FLOW_DIR_REPLY, frame_of(m), pkt,
				now);
	if (v == L7_RESET) {
		lb_flow_touch(w->ft, idx, LB_FLOW_DIR_REPLY, LB_TCP_RST, now);
		rte_pktmbuf_free(m);
		return -1;
	}
	return v;
}

/*
 * Backend to client: the IPv4 reply @p m of fnat64 flow @p idx becomes
 * the IPv6 packet from the VIP. The backend's SYN-ACK has its MSS
 * lowered by the 20 bytes IPv6's header adds (lb_nat46_mss_adjust()).
 */
void
lb_worker_fnat64_reply(struct lb_worker *w, struct rte_mbuf *m,
		       struct lb_pkt *pkt, uint32_t idx, uint64_t now)
{
	struct lb_flow *f = &lb_flow_entries(w->ft)[idx];
	const struct lb_flow_key *k = &f->key[LB_FLOW_DIR_ORIG];
	const uint8_t(*a)[16] = w->f6[idx].a[LB_FLOW_DIR_ORIG];
	struct lb_be_stats *b = &w->bst[f->svc][f->be];
	struct lb_pkt6 out;
	int off, v = LB_L7_PASS, fl;

	/* A proxied flow's segment (worker_synp.c) into the client's
	 * numbers, which the tracking record keeps once the backend's
	 * handshake is done; its SYN-ACK is seen in its own, below. */
	if (unlikely(w->synp_svc >> f->svc & 1) &&
	    pkt->proto == LB_IPPROTO_TCP && !synp_holds(w, f, idx))
		lb_worker_synp64_reply(w, f, idx, m, pkt, now);
	/* The sequence checks first, as for an IPv4 flow's reply (the
	 * challenge ACK goes back as IPv4). */
	fl = tcp_check(w, f, idx, LB_FLOW_DIR_REPLY, m, pkt, now);
	if (fl < 0)
		return;
	/* The backend's answer to a trial (worker6.c): a RST sends the
	 * SYN copy on to the next backend, of either family. */
	if (unlikely(f->state == LB_FLOW_SYN_SENT) &&
	    pkt->proto == LB_IPPROTO_TCP &&
	    lb_worker_trial6_answer(w, f, idx, m, (uint8_t)fl, now))
		return;
	/* The SYN proxy's SYN-ACK completes the backend's handshake. */
	if (unlikely(synp_holds(w, f, idx)) && pkt->proto == LB_IPPROTO_TCP &&
	    lb_worker_synp64_reply(w, f, idx, m, pkt, now))
		return;
	/* Past SYN_SENT, l7 is the follower's entry, not the SYN copy. */
	if (unlikely(f->l7 != LB_L7_NONE) && f->state != LB_FLOW_SYN_SENT &&
	    pkt->proto == LB_IPPROTO_TCP &&
	    (v = follow_reply(w, m, pkt, f, idx, now)) < 0)
		return;
	/* Leaving SYN_SENT releases the SYN copy. */
	flow_touch(w, f, idx, LB_FLOW_DIR_REPLY, (uint8_t)fl, now);
	b->pkts[LB_FLOW_DIR_REPLY]++;
	b->bytes[LB_FLOW_DIR_REPLY] += rte_pktmbuf_pkt_len(m);
	if (unlikely(lb_nat_ttl_dec(frame_of(m), pkt) != 0)) {
		drop(w, m, LB_DROP_TTL);
		return;
	}
	if (unlikely(m->nb_segs != 1)) {
		drop(w, m, LB_DROP_IP6_UNSERVED);
		return;
	}
	off = lb_nat46_xlate(m->buf_addr, m->data_off, rte_pktmbuf_data_len(m),
			     pkt, a[1], k->dport, a[0], k->sport, &out);
	if (off < 0) {
		drop(w, m, LB_DROP_IP6_UNSERVED);
		return;
	}
	mbuf_reframe(m, (uint32_t)off, (uint32_t)out.l3_off + LB_IPV6_HDR_LEN +
					       out.ip_plen);
	if (unlikely(out.tcp_flags & LB_TCP_SYN) &&
	    lb_nat46_mss_adjust(frame_of(m), &out) > 0)
		w->st.nat64_mss_adjusted++;
	w->st.nat64_in++;
	lb_worker_route_out6(w, m, a[0], now);
	/* The last response before a refused pipelined request: the
	 * answer follows it. */
	if (unlikely(v == LB_L7_REJECT))
		lb_worker_l7_refuse_late(w, f, idx, now);
	l7_closed(w, f);
}

/*
 * An ICMP error from the IPv4 side about fnat64 flow @p idx (it quotes
 * SNAT -> backend): the ICMPv6 error the client understands, from the
 * VIP, quoting client -> VIP; fragmentation needed becomes packet too
 * big with 20 bytes more, unreachables their ICMPv6 counterparts.
 */
void
lb_worker_icmp64_error(struct lb_worker *w, struct rte_mbuf *m,
		       struct lb_pkt *pkt, uint32_t idx, enum lb_flow_dir dir,
		       uint64_t now)
{
	const struct lb_flow *f = &lb_flow_entries(w->ft)[idx];
	const struct lb_flow_key *k = &f->key[LB_FLOW_DIR_ORIG];
	const uint8_t(*a)[16] = w->f6[idx].a[LB_FLOW_DIR_ORIG];
	struct lb_icmp6_tuple in;
	struct lb_pkt6 out;
	int off;

	if (dir != LB_FLOW_DIR_REPLY || m->nb_segs != 1) {
		drop(w, m, LB_DROP_ICMP);
		return;
	}
	if (lb_nat_ttl_dec(frame_of(m), pkt) != 0) {
		drop(w, m, LB_DROP_TTL);
		return;
	}
	memcpy(in.src, a[0], 16);
	memcpy(in.dst, a[1], 16);
	in.sport = k->sport;
	in.dport = k->dport;
	off = lb_icmp_xlate46(m->buf_addr, m->data_off,
			      rte_pktmbuf_data_len(m), pkt, a[1], a[0], &in,
			      &out);
	if (off < 0) {
		drop(w, m, LB_DROP_ICMP);
		return;
	}
	mbuf_reframe(m, (uint32_t)off, (uint32_t)out.l3_off + LB_IPV6_HDR_LEN +
					       out.ip_plen);
	w->st.icmp64_translated++;
	lb_worker_route_out6(w, m, a[0], now);
}

/*
 * An ICMPv6 error from the client's side about fnat64 flow @p idx (it
 * quotes VIP -> client): the ICMP error for the backend, from the SNAT
 * address, quoting backend -> SNAT; packet too big becomes
 * fragmentation needed with 20 bytes less.
 */
void
lb_worker_icmp46_error(struct lb_worker *w, struct rte_mbuf *m,
		       struct lb_pkt6 *pkt, uint32_t idx, enum lb_flow_dir dir,
		       uint64_t now)
{
	const struct lb_flow_key *k =
		&lb_flow_entries(w->ft)[idx].key[LB_FLOW_DIR_REPLY];
	struct lb_nat_tuple in = {k->src, k->dst, k->sport, k->dport};
	struct lb_pkt out;
	int off;

	if (dir != LB_FLOW_DIR_ORIG || m->nb_segs != 1) {
		drop(w, m, LB_DROP_ICMP6);
		return;
	}
	if (lb_nat6_hop_dec(frame_of(m), pkt) != 0) {
		drop(w, m, LB_DROP_HOP_LIMIT);
		return;
	}
	lb_worker_icmp6_mtu_floor(w, m, pkt);
	off = lb_icmp_xlate64(m->buf_addr, m->data_off,
			      rte_pktmbuf_data_len(m), pkt, k->dst, k->src, &in,
			      &out);
	if (off < 0) {
		drop(w, m, LB_DROP_ICMP6);
		return;
	}
	mbuf_reframe(m, (uint32_t)off, (uint32_t)out.l3_off + out.ip_len);
	w->st.icmp64_translated++;
	lb_worker_route_out(w, m, k->src, now);
}
