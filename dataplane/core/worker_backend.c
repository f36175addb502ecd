/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The backend path: replies to a SNAT address, un-NATed back to the
 * client; a RST or an ICMP unreachable during the handshake fails the
 * trial. ICMP errors about a flow are translated for the other side, and
 * passed on to the worker that owns the flow.
 */
#include "worker_priv.h"

#include "csum.h"

/*
 * The backend refused flow @p f (entry @p idx) in its handshake, by a RST
 * or an ICMP unreachable, which is @p m: the flow goes, its SNAT port and
 * SYN copy go on to the next trial.
 */
static void
trial_refused(struct lb_worker *w, const struct lb_flow *f, uint32_t idx,
	      struct rte_mbuf *m, uint64_t now)
{
	struct lb_trial t;

	trial_snapshot(f, &t);
	lb_worker_flow_forget(w, f, 0, 0);
	lb_flow_delete(w->ft, idx);
	rte_pktmbuf_free(m);
	lb_worker_trial_failed(w, &t, now);
}

void
lb_worker_from_backend(struct lb_worker *w, struct rte_mbuf *m,
		       struct lb_pkt *pkt, uint64_t hash, uint64_t now)
{
	struct lb_flow_key k;
	enum lb_flow_dir dir;
	struct lb_flow *f;
	uint32_t idx;
	int v = LB_L7_PASS, fl;

	if (unlikely(ttl_expires(w, m, pkt)))
		return;
	idx = flow_of(w, pkt, hash, &k, &dir);
	if (idx == LB_FLOW_NONE) {
		lb_worker_no_flow(w, m, pkt, LB_CONF_MAX_SVCS, w->rst_snat_rate,
				  now);
		return;
	}
	if (dir != LB_FLOW_DIR_REPLY) {
		drop(w, m, LB_DROP_NO_FLOW);
		return;
	}
	f = lb_flow_get(w->ft, idx);
	/* An IPv6 client's (fnat64, worker64.c). */
	if (unlikely(lb_flow_is6(f))) {
		lb_worker_fnat64_reply(w, m, pkt, idx, now);
		return;
	}
	if (unlikely(w->pp_used) && pkt->proto == LB_IPPROTO_TCP &&
	    lb_worker_pp_backend(w, f, idx, m, pkt, now))
		return;
	fl = tcp_check(w, f, idx, LB_FLOW_DIR_REPLY, m, pkt, now);
	if (fl < 0)
		return;
	if (f->state == LB_FLOW_SYN_SENT && pkt->proto == LB_IPPROTO_TCP) {
		if (fl & LB_TCP_RST) {
			/* The backend refused the connection: next trial. */
			trial_refused(w, f, idx, m, now);
			return;
		}
		if ((fl & (LB_TCP_SYN | LB_TCP_ACK)) ==
		    (LB_TCP_SYN | LB_TCP_ACK)) {
			const struct lb_dpconf_svc *svc =
				&w->conf->svc[f->svc];

			if (w->sched[f->svc] != NULL) {
				/* On http services the responses judge the
				 * backend: counting the handshake as a
				 * success would wipe the errors its 5xx
				 * answers record. */
				if (!svc->opts.http) {
					const struct lb_sched_ops *ops;
					void *st = lb_worker_sched_of(
						w, f->svc, f->be, &ops);

					ops->result(st, f->be, true);
				}
				lb_worker_trial_feedback(w, f->svc, f->be,
							 true);
			}
			/* The SYN proxy's: the client has its answer. */
			if (synp_holds(w, f, idx)) {
				lb_worker_synp_open(w, f, idx, m, pkt, now);
				return;
			}
		}
	} else if (unlikely(f->l7 != LB_L7_NONE &&
			    rej_of(w, f->l7) != NULL &&
			    w->rej[f->l7].state == LB_L7_RJ_DONE)) {
		/* Reset by us: what the backend still says goes nowhere. */
		w->st.l7_rej_absorbed++;
		rte_pktmbuf_free(m);
		return;
	} else if (unlikely(f->l7 != LB_L7_NONE &&
			    (v = lb_worker_l7_follow(w, f, 1, frame_of(m), pkt,
						     now)) == L7_RESET)) {
		lb_flow_touch(w->ft, idx, LB_FLOW_DIR_REPLY, LB_TCP_RST, now);
		rte_pktmbuf_free(m);
		return;
	} else if (unlikely(v == LB_L7_REJECT)) {
		lb_flow_touch(w->ft, idx, LB_FLOW_DIR_REPLY, (uint8_t)fl, now);
		lb_worker_fwd(w, m, pkt, f, LB_FLOW_DIR_REPLY, now);
		lb_worker_l7_refuse_late(w, f, idx, now);
		return;
	}
	flow_touch(w, f, idx, LB_FLOW_DIR_REPLY, (uint8_t)fl, now);
	lb_worker_fwd(w, m, pkt, f, LB_FLOW_DIR_REPLY, now);
	l7_closed(w, f);
}

/*
 * An ICMP error about a client-side flow (quoting VIP -> client) that is
 * not in this worker's table goes round the workers (icmp_pass_next());
 * only errors quoting a service's VIP and port do.
 * @return true if @p m was passed on (or dropped as redirect_full).
 */
static bool
icmp_pass_on(struct lb_worker *w, struct rte_mbuf *m,
	     const struct lb_nat_icmp *ic)
{
	return lb_dpconf_svc_find(w->conf, ic->proto, ic->inner.src,
				  ic->inner.sport) >= 0 &&
	       icmp_pass_next(w, m);
}

/*
 * The sequence number quoted by an ICMP error about spliced flow @p idx,
 * taken into the numbers of the side that gets the error: a stack
 * ignores an error quoting a sequence number it never sent (Linux's
 * tcp_v4_err() and tcp_v6_err() for packet too big among them), which
 * would break path MTU discovery through the SYN proxy or a PROXY
 * header. The quote went the other way than @p dir, so it carries the
 * offset of !dir. The quoted TCP checksum, when quoted (@p l4csum), and
 * the ICMP or ICMPv6 checksum of @p icmp follow.
 */
void
lb_worker_quote_seq(struct lb_worker *w, uint32_t idx, uint8_t *th,
		    uint8_t *icmp, bool l4csum, enum lb_flow_dir dir)
{
	uint32_t d = w->spl[idx].seq[!dir], old, new;
	uint16_t ck, ock;

	if (d == 0 || (w->pp[idx].state == LB_PP_NONE &&
		       w->synp[idx].state != LB_SYNP_ON))
		return;
	old = rd32(th + 4);
	new = old - d;
	wr32(th + 4, new);
	ck = lb_csum_update32(rd16(icmp + 2), old, new);
	if (l4csum) {
		ock = rd16(th + 16);
		wr16(th + 16, lb_csum_update32(ock, old, new));
		ck = lb_csum_update16(ck, ock, rd16(th + 16));
	}
	wr16(icmp + 2, ck);
}

static void
icmp_quote_seq(struct lb_worker *w, uint32_t idx, uint8_t *fr,
	       const struct lb_pkt *pkt, const struct lb_nat_icmp *ic,
	       enum lb_flow_dir dir)
{
	if (ic->inner_l4_off + 8u <= (uint32_t)ic->inner_l3_off + ic->quote_len)
		lb_worker_quote_seq(w, idx, fr + ic->inner_l4_off,
				    fr + pkt->l4_off, ic->l4csum, dir);
}

/*
 * An ICMP error about one of our flows. From a backend (quoting SNAT ->
 * backend): unreachable during the handshake fails the trial, otherwise
 * it is translated for the client. From the client side (quoting
 * VIP -> client): translated for the backend.
 */
void
lb_worker_icmp_error(struct lb_worker *w, struct rte_mbuf *m,
		     struct lb_pkt *pkt, uint64_t now)
{
	uint8_t *fr = frame_of(m);
	uint32_t len = rte_pktmbuf_data_len(m);
	struct lb_nat_icmp ic;
	struct lb_flow_key k;
	const struct lb_flow_key *k2;
	struct lb_nat_tuple in;
	enum lb_flow_dir dir;
	struct lb_flow *f;
	uint32_t idx;
	int sn;

	if (lb_nat_icmp_parse(fr, len, pkt, &ic) != 0) {
		drop(w, m, LB_DROP_ICMP);
		return;
	}
	sn = lb_dpconf_snat_find(w->conf, pkt->dst);
	if (sn >= 0 && unlikely(w->conf->snat[sn].port != m->port)) {
		drop(w, m, LB_DROP_SNAT_PORT);
		return;
	}
	/* An error about SNAT -> backend traffic belongs to the worker that
	 * owns the quoted SNAT port. */
	if (w->snat != NULL && sn >= 0) {
		uint32_t owner = lb_snat_owner(w->snat, ic.inner.sport);

		if (owner != w->wid && owner < w->dp->nb_workers) {
			redirect(w, m, owner);
			return;
		}
	}
	/* The quoted datagram went the other way: reverse it to get the key
	 * of the packets that we see in this direction. */
	lb_flow_key_set(&k, ic.inner.dst, ic.inner.src, ic.inner.dport,
			ic.inner.sport, ic.proto);
	idx = lb_flow_lookup(w->ft, &k, &dir);
	if (idx == LB_FLOW_NONE) {
		if (sn < 0 && icmp_pass_on(w, m, &ic))
			return;
		drop_or_kernel(w, m, pkt->dst, LB_DROP_NO_FLOW);
		return;
	}
	f = lb_flow_get(w->ft, idx);
	/* An IPv6 client's (fnat64, worker64.c). */
	if (unlikely(lb_flow_is6(f))) {
		lb_worker_icmp64_error(w, m, pkt, idx, dir, now);
		return;
	}
	/* A backend refusing the handshake: the trial failed. */
	if (dir == LB_FLOW_DIR_REPLY && f->state == LB_FLOW_SYN_SENT &&
	    ic.type == LB_ICMP_DEST_UNREACH && ic.code != LB_ICMP_FRAG_NEEDED) {
		trial_refused(w, f, idx, m, now);
		return;
	}
	/*
	 * Translated for the other side, as lb_worker_fwd() does for the
	 * packets it quotes: the client sees VIP -> client quoting client ->
	 * VIP, the backend SNAT -> backend quoting backend -> SNAT.
	 */
	k2 = &f->key[!dir];
	in = (struct lb_nat_tuple){ k2->src, k2->dst, k2->sport, k2->dport };
	if (lb_nat_ttl_dec(fr, pkt) != 0) {
		drop(w, m, LB_DROP_TTL);
		return;
	}
	if (ic.type == LB_ICMP_DEST_UNREACH && ic.code == LB_ICMP_FRAG_NEEDED &&
	    ic.mtu < LB_NAT_MTU_FLOOR &&
	    lb_nat_icmp_set_mtu(fr, len, pkt, LB_NAT_MTU_FLOOR) == 0)
		w->st.icmp_mtu_clamped++;
	if (lb_nat_icmp_rewrite(fr, len, pkt, k2->dst, k2->src, &in) < 0) {
		drop(w, m, LB_DROP_ICMP);
		return;
	}
	if (unlikely(w->pp_used) && ic.proto == LB_IPPROTO_TCP)
		icmp_quote_seq(w, idx, fr, pkt, &ic, dir);
	w->st.icmp_translated++;
	lb_worker_route_out(w, m, k2->src, now);
}
