/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * L7 hooks of the worker: following HTTP per flow (l7.h), the records its
 * responses give (feedback to lb-control, results to the scheduler), and
 * admission per request with the refusals it answers in the server's name
 * (l7_reject.h).
 */
#include "worker_priv.h"

#include "pkt_parse6.h"

static inline uint64_t
f64_bits(double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return u;
}

static void rej_send(struct lb_worker *w, const struct lb_flow *f,
		     struct rte_mbuf *m, uint32_t l3_off, bool to_client,
		     uint32_t seq, uint32_t ack, uint8_t flags,
		     const void *data, uint16_t len, uint64_t now);

/*
 * One final response: what it says goes to the control plane, and its
 * status to the scheduler (by default 5xx is an error, as the dispatch
 * paper counts failed requests; anything else a success).
 */
void
lb_worker_on_l7_obs(void *owner, uint32_t tag, const struct lb_l7_obs *o)
{
	struct lb_worker *w = owner;
	uint32_t svc = tag >> 16, be = tag & 0xffff;
	struct lb_be_stats *b = &w->bst[svc][be];
	const struct lb_conf_svc_opts *so = &w->conf->svc[svc].opts;
	/* The service's error policy (docs/l7-feedback.md): its statuses
	 * are errors, others successes; on excluded paths neither. */
	bool err = lb_http_err_codes_has(&so->err_codes, o->status);
	uint32_t expect_ms = o->expect_ms;
	uint16_t flags = 0;

	b->http_responses++;
	if (o->status >= 500)
		b->http_5xx++;
	if (w->sched[svc] != NULL && be < w->conf->svc[svc].nb_be &&
	    !o->err_excluded) {
		const struct lb_sched_ops *ops;
		void *st = lb_worker_sched_of(w, svc, be, &ops);

		ops->result(st, be, !err);
		b->sched_errors = ops->errors(st, be);
	}
	if (o->timed)
		flags |= LB_FB_F_TIMED;
	if (!o->has_expect && so->default_expect_ms != 0) {
		expect_ms = so->default_expect_ms;
		flags |= LB_FB_F_EXPECT_DEF;
	}
	if (o->has_expect || (flags & LB_FB_F_EXPECT_DEF)) {
		flags |= LB_FB_F_EXPECT;
		if (o->timed && o->latency_ns <= expect_ms * 1000000ull)
			flags |= LB_FB_F_QOS_MET;
	}
	if (o->has_prio)
		flags |= LB_FB_F_PRIO |
			 (uint16_t)(RTE_MIN(o->prio, 255u) << LB_FB_PRIO_SHIFT);
	else
		flags |= LB_FB_F_PRIO_DEF |
			 (uint16_t)(RTE_MIN(so->gov[LB_CONF_GOV_PRIO], 255u)
				    << LB_FB_PRIO_SHIFT);
	lb_worker_fb_put_full(w, LB_FB_HTTP, svc, be, flags, o->status,
			      expect_ms, o->latency_ns);
	if (o->has_spl) {
		uint32_t age = 0;

		if (o->has_spl_time) {
			int64_t now_ms = ((int64_t)w->now_ns +
					  w->dp->epoch_off_ns) / 1000000;
			int64_t d = now_ms - (int64_t)o->spl_time_ms;

			/* A clock ahead of ours reads as fresh. */
			age = d <= 0 ? 0 : (uint32_t)RTE_MIN(d, INT32_MAX);
		}
		lb_worker_fb_put_full(w, LB_FB_SPL, svc, be,
				      o->has_spl_time ? LB_FB_F_SPL_TIME : 0,
				      age, 0, f64_bits(o->spl));
	}
	if (o->has_orca)
		lb_worker_fb_put_full(w, LB_FB_ORCA, svc, be, 0,
				      (uint32_t)(o->orca_mem * 1e6), 0,
				      f64_bits(o->orca_cpu));
}

void
lb_worker_on_l7_inflight(void *owner, uint32_t tag, int delta)
{
	struct lb_worker *w = owner;

	w->bst[tag >> 16][tag & 0xffff].inflight += delta;
}

static inline uint32_t
flow_idx(struct lb_worker *w, const struct lb_flow *f)
{
	return (uint32_t)(f - lb_flow_entries(w->ft));
}

/*
 * Client segment @p m of flow @p f as the follower reads it: IPv4, or an
 * IPv6 one (its header in @p p6) seen through lb_worker_view6().
 */
static bool
held_parse(const struct lb_flow *f, struct rte_mbuf *m, struct lb_pkt *pkt,
	   struct lb_pkt6 *p6)
{
	if (lb_flow_is6(f))
		return lb_worker_view6(frame_of(m), rte_pktmbuf_data_len(m),
				       p6, pkt) == 0;
	return lb_pkt_parse(frame_of(m), rte_pktmbuf_data_len(m), pkt) ==
	       LB_PKT_IPV4;
}

/*
 * Ends the admission state of L7 entry @p l7: segments held for a
 * decision go on to the backend (@p flush: the flow goes on unfollowed)
 * or are dropped (the flow is gone or was reset).
 */
void
lb_worker_gate_end(struct lb_worker *w, const struct lb_flow *f, uint32_t l7,
		   bool flush, uint64_t now)
{
	struct lb_l7_rej *r = rej_of(w, l7);

	if (r == NULL)
		return;
	for (unsigned int i = 0; i < r->nheld; i++) {
		struct rte_mbuf *m = r->held[i];
		struct lb_pkt6 p6;
		struct lb_pkt pkt;

		if (!flush || f == NULL || !held_parse(f, m, &pkt, &p6))
			rte_pktmbuf_free(m);
		else if (lb_flow_is64(f))
			lb_worker_fnat64_out(w, m, &p6, flow_idx(w, f), now);
		else if (lb_flow_is6(f))
			lb_worker_fwd6(w, m, &p6, flow_idx(w, f),
				       LB_FLOW_DIR_ORIG, now);
		else
			lb_worker_fwd(w, m, &pkt, f, LB_FLOW_DIR_ORIG, now);
	}
	memset(r, 0, offsetof(struct lb_l7_rej, held));
}

void
lb_worker_l7_stop(struct lb_worker *w, struct lb_flow *f)
{
	lb_worker_gate_end(w, f, f->l7, false, 0);
	lb_l7_close(w->l7, f->l7);
	f->l7 = LB_L7_NONE;
}

/*
 * A fresh segment of flow @p f with no payload, the link header copied
 * from @p frame (@p l3 octets), sent as rej_send() does.
 */
static void
rej_send_new(struct lb_worker *w, const struct lb_flow *f, const uint8_t *frame,
	     uint32_t l3, bool to_client, uint32_t seq, uint32_t ack,
	     uint8_t flags, uint64_t now)
{
	struct rte_mbuf *m = lb_worker_seg_alloc(w, frame, l3);

	if (m != NULL)
		rej_send(w, f, m, l3, to_client, seq, ack, flags, NULL, 0, now);
}

/* The IPv6 client of flow @p f, or NULL for an IPv4 flow. */
static inline const uint8_t *
client6_of(struct lb_worker *w, const struct lb_flow *f)
{
	return lb_flow_is6(f) ? w->f6[flow_idx(w, f)].a[LB_FLOW_DIR_ORIG][0]
			      : NULL;
}

/*
 * A gated flow of service @p f->svc is not (or no longer) followed: its
 * requests would escape admission. `unfollowable admit-flow` charges it
 * as one request of the service's default rank; `refuse`, or a charge
 * refused, resets both ends: the backend at @p cli_nxt (the next octet
 * it expects) and, when it differs, at @p cli_alt too (a client that sent
 * other octets twice at one place may leave the follower ahead of the
 * backend: one of the two is exact, the other at worst draws an ACK), the
 * client at @p srv_nxt acknowledging @p cli_nxt (taken in SYN_SENT as in
 * ESTABLISHED). @return true when reset.
 */
static bool
l7_fallback(struct lb_worker *w, const struct lb_flow *f, const uint8_t *frame,
	    uint32_t l3, uint32_t cli_nxt, uint32_t cli_alt, uint32_t srv_nxt,
	    uint64_t now)
{
	const struct lb_conf_svc_opts *o = &w->conf->svc[f->svc].opts;
	uint32_t client = rte_be_to_cpu_32(f->key[LB_FLOW_DIR_ORIG].src);

	if (o->admit.unfollow == LB_ADMIT_UNF_FLOW &&
	    lb_worker_l7_decide(w, f->svc,
				(unsigned int)o->gov[LB_CONF_GOV_PRIO], client,
				client6_of(w, f), now) == LB_L7_REJ_MAX) {
		w->st.l7_unfollowed[LB_L7_UNF_ADMITTED]++;
		return false;
	}
	w->st.l7_unfollowed[LB_L7_UNF_RESET]++;
	rej_send_new(w, f, frame, l3, false, cli_nxt, 0, LB_TCP_RST, now);
	if (cli_alt != cli_nxt)
		rej_send_new(w, f, frame, l3, false, cli_alt, 0, LB_TCP_RST,
			     now);
	rej_send_new(w, f, frame, l3, true, srv_nxt, cli_nxt,
		     LB_TCP_RST | LB_TCP_ACK, now);
	return true;
}

/*
 * The follower of gated flow @p f gave up on segment @p pkt. A tunnel
 * after an admitted request (101, CONNECT) or a backend that closed first
 * leaves nothing to gate; anything else, the client may have caused (a
 * gap, too many pipelined requests, bytes it sent differently twice, a
 * throttled request pipelined in one segment behind an admitted one):
 * the service's fallback decides. @return true when the flow was reset
 * (its entry is closed, the segment must be dropped).
 */
bool
lb_worker_l7_unfollowed(struct lb_worker *w, struct lb_flow *f, int dir,
			const uint8_t *frame, const struct lb_pkt *pkt,
			uint64_t now)
{
	uint32_t cli_nxt, srv_nxt, req_seq, alt;
	bool over = w->adm_stop;

	w->adm_stop = false;
	switch (over ? LB_HTTP_FOLLOW_R_QUEUE_FULL
		     : lb_l7_reason(w->l7, f->l7)) {
	case LB_HTTP_FOLLOW_OK:
	case LB_HTTP_FOLLOW_R_UPGRADE:
	case LB_HTTP_FOLLOW_R_CONNECT:
	case LB_HTTP_FOLLOW_R_TRUNCATED:
		return false;
	default:
		break;
	}
	if (!lb_worker_l7_gated(&w->conf->svc[f->svc]))
		return false;
	lb_l7_seq(w->l7, f->l7, &cli_nxt, &srv_nxt, &req_seq);
	/* Held segments never reached the backend. */
	if (w->rej != NULL && f->l7 < w->nb_rej && w->rej[f->l7].nheld > 0)
		cli_nxt = req_seq;
	/* A client segment starting before what the follower read: the
	 * backend may not have what the follower read (never forwarded). */
	alt = cli_nxt;
	if (dir == 0 && (int32_t)(tcp_word(frame, pkt, 4) - cli_nxt) < 0)
		alt = tcp_word(frame, pkt, 4);
	if (!l7_fallback(w, f, frame, pkt->l3_off, cli_nxt, alt, srv_nxt, now))
		return false;
	lb_worker_l7_stop(w, f);
	return true;
}

/*
 * Feeds one segment of an established flow of an http service to its
 * follower. Runs before the frame is rewritten and sent (the payload and
 * sequence numbers are not changed by full-NAT).
 * @return an enum lb_l7_verdict for a client segment of a gated flow.
 */
int
lb_worker_l7_follow(struct lb_worker *w, struct lb_flow *f, int dir,
		    const uint8_t *frame, const struct lb_pkt *pkt,
		    uint64_t now)
{
	int rc;

	if (likely(f->l7 == LB_L7_NONE) || f->state == LB_FLOW_SYN_SENT ||
	    pkt->proto != LB_IPPROTO_TCP)
		return LB_L7_PASS;
	if (pkt->tcp_flags & LB_TCP_RST) {
		lb_worker_l7_stop(w, f);
		return LB_L7_PASS;
	}
	if (pkt->payload_len == 0 && !(pkt->tcp_flags & LB_TCP_FIN))
		return LB_L7_PASS;
	/* What a request's admission needs besides its header block. */
	w->adm_client = rte_be_to_cpu_32(pkt->src);
	w->adm_flow6 = lb_flow_is6(f) ? flow_idx(w, f) + 1 : 0;
	w->adm_now = now;
	rc = lb_l7_segment(w->l7, f->l7, dir, tcp_word(frame, pkt, 4),
			   frame + pkt->payload_off, pkt->payload_len,
			   (pkt->tcp_flags & LB_TCP_FIN) != 0, now);
	lb_worker_rebind_done(w);
	if (rc < 0) {
		w->st.l7_stopped++;
		if (unlikely(lb_worker_l7_unfollowed(w, f, dir, frame, pkt,
						     now)))
			return L7_RESET;
		/* Unfollowed from here: what was held goes on first. */
		lb_worker_gate_end(w, f, f->l7, true, now);
		lb_worker_l7_stop(w, f);
		return LB_L7_PASS;
	}
	return rc;
}

static double
gov_m(const struct lb_worker *w, uint32_t svc)
{
	uint64_t b;
	double m;

	if (w->dp->gov_m == NULL)
		return 0.0;
	b = atomic_load_explicit(&w->dp->gov_m[svc], memory_order_relaxed);
	memcpy(&m, &b, sizeof(m));
	return m;
}

/* Whether the requests of service @p svc are admitted one by one. */
bool
lb_worker_l7_gated(const struct lb_dpconf_svc *svc)
{
	return svc->opts.gov[LB_CONF_GOV_ON] || svc->opts.admit.rate != 0;
}

/*
 * One request of rank @p rank from @p client (host order), or from IPv6
 * client @p client6 when set: the governor by rank, then the service's
 * requests/s token buckets (a throttled request takes no token).
 * @return the refusal's enum lb_l7_rej_reason, or LB_L7_REJ_MAX when
 * admitted.
 */
int
lb_worker_l7_decide(struct lb_worker *w, uint32_t svc, unsigned int rank,
		    uint32_t client, const uint8_t *client6, uint64_t now)
{
	enum lb_admit_verdict v;

	const struct lb_conf_svc_opts *o = &w->conf->svc[svc].opts;
	const uint64_t *g = o->gov;

	if (g[LB_CONF_GOV_ON] &&
	    lb_gov_decide(gov_m(w, svc), rank, &w->rng, &w->st.gov[svc]) !=
		    LB_GOV_ADMIT)
		return LB_L7_REJ_GOVERNOR;
	if (o->admit.rate == 0 || w->admit == NULL)
		return LB_L7_REJ_MAX;
	v = client6 != NULL
		    ? lb_admit_check6(w->admit, (uint16_t)svc, &o->admit,
				      client6, (uint8_t)rank, now)
		    : lb_admit_check(w->admit, (uint16_t)svc, &o->admit, client,
				     (uint8_t)rank, now);
	return lb_admit_rejected(v) ? LB_L7_REJ_RATE : LB_L7_REJ_MAX;
}

/*
 * A new flow of gated http service @p svc_idx on a worker without a
 * follower pool (--l7-flows 0): no request of it could be admitted, as
 * when the pool is empty, so `unfollowable admit-flow` charges the flow
 * as one request of the service's default rank and anything else resets
 * the client. @return true when @p m was answered with the RST.
 */
bool
lb_worker_l7_nopool(struct lb_worker *w, struct rte_mbuf *m, int svc_idx,
		    uint32_t client, const uint8_t *client6, uint64_t now)
{
	const struct lb_conf_svc_opts *o = &w->conf->svc[svc_idx].opts;

	if (o->admit.unfollow == LB_ADMIT_UNF_FLOW &&
	    lb_worker_l7_decide(w, (uint32_t)svc_idx,
				(unsigned int)o->gov[LB_CONF_GOV_PRIO], client,
				client6, now) == LB_L7_REJ_MAX) {
		w->st.l7_unfollowed[LB_L7_UNF_ADMITTED]++;
		return false;
	}
	w->st.l7_unfollowed[LB_L7_UNF_RESET]++;
	lb_worker_rst_client(w, m, now);
	return true;
}

/*
 * The pool's admission callback: lb_worker_l7_decide() with the request's rank.
 * X-Priority counts only from the service's prio-trust prefixes: rank 0
 * is never throttled, so a client choosing its own rank would choose to
 * be exempt.
 */
/* The reason of a request refused by `rebind close`: none of the
 * admission's (enum lb_l7_rej_reason), counted in rebind_closed. */
#define REJ_REBIND LB_L7_REJ_MAX

bool
lb_worker_on_l7_admit(void *owner, uint32_t tag, const struct lb_l7_req *rq)
{
	struct lb_worker *w = owner;
	uint32_t svc = tag >> 16;
	const struct lb_conf_svc_opts *o = &w->conf->svc[svc].opts;
	/* The trusted prefixes are IPv4 ones: an IPv6 client's own rank
	 * never counts. */
	const uint8_t *client6 =
		w->adm_flow6 != 0
			? w->f6[w->adm_flow6 - 1].a[LB_FLOW_DIR_ORIG][0]
			: NULL;
	bool own = rq->has_prio && client6 == NULL &&
		   lb_admit_trusted(&o->prio_trust, w->adm_client);
	unsigned int rank = own ? RTE_MIN(rq->prio, LB_GOV_RANK_MAX)
				: (unsigned int)o->gov[LB_CONF_GOV_PRIO];
	int why;

	if (w->rebind_hit == rq->entry + 1 && rq->can_refuse &&
	    rej_of(w, rq->entry) != NULL) {
		w->rebind_hit = 0;
		w->rej[rq->entry].reason = REJ_REBIND;
		return true;
	}
	if (!lb_worker_l7_gated(&w->conf->svc[svc]))
		return false;
	why = lb_worker_l7_decide(w, svc, rank, w->adm_client, client6,
				  w->adm_now);
	if (why == LB_L7_REJ_MAX)
		return false;
	if (!rq->can_refuse) {
		w->st.l7_unrefusable++;
		/* It shares its segment with an admitted request and cannot
		 * be refused alone: admitted, one token would buy as many
		 * requests as fit in a segment. Unless the service admits
		 * flows whole, the flow is reset (lb_worker_l7_unfollowed()).
		 */
		if (o->admit.unfollow == LB_ADMIT_UNF_REFUSE) {
			w->adm_stop = true;
			lb_l7_stop(w->l7, rq->entry);
		}
		return false;
	}
	if (rej_of(w, rq->entry) == NULL)
		return false;
	w->rej[rq->entry].reason = (uint8_t)why;
	return true;
}

/*
 * Writes a segment of refused flow @p f into @p m (reused: the client's
 * segment, its link header kept) or a fresh mbuf, and sends it: toward
 * the client (@p to_client) from the VIP, else toward the backend from the
 * SNAT address.
 */
struct rte_mbuf *
lb_worker_seg_alloc(struct lb_worker *w, const uint8_t *frame, uint32_t l3)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(w->dp->pool);

	if (m == NULL) {
		w->st.drop[LB_DROP_NOMBUF]++;
		return NULL;
	}
	if (rte_pktmbuf_append(m, (uint16_t)l3) == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	rte_memcpy(frame_of(m), frame, l3);
	return m;
}

void
lb_worker_seg_send(struct lb_worker *w, const struct lb_flow *f,
		   struct rte_mbuf *m, uint32_t l3_off, bool to_client,
		   uint32_t seq, uint32_t ack, uint8_t flags, uint16_t win,
		   const void *data, uint16_t len, uint64_t now)
{
	const struct lb_flow_key *k =
		&f->key[to_client ? LB_FLOW_DIR_ORIG : LB_FLOW_DIR_REPLY];
	struct lb_l7_rej_seg sg = {
		.src = k->dst, .dst = k->src, .sport = k->dport,
		.dport = k->sport, .seq = seq, .ack = ack, .flags = flags,
		.win = win, .data = data, .len = len,
	};
	int n;

	/* fnat64: IPv6 to the client, IPv4 to the backend. */
	if (lb_flow_is6(f) && (to_client || !lb_flow_is64(f))) {
		const uint8_t(*a)[16] =
			w->f6[flow_idx(w, f)]
				.a[to_client ? LB_FLOW_DIR_ORIG
					     : LB_FLOW_DIR_REPLY];

		sg.src6 = a[1];
		sg.dst6 = a[0];
	}
	n = lb_l7_reject_seg(frame_of(m),
			     rte_pktmbuf_data_len(m) + rte_pktmbuf_tailroom(m),
			     l3_off, &sg);
	if (n < 0 || m->nb_segs > 1) {
		drop(w, m, LB_DROP_NOMBUF);
		return;
	}
	m->data_len = (uint16_t)n;
	m->pkt_len = (uint32_t)n;
	/* The link header was copied from a frame of either side. */
	if (unlikely(lb_flow_is64(f)))
		wr16(frame_of(m) + l3_off - 2, sg.dst6 != NULL
						       ? LB_ETHER_TYPE_IPV6
						       : LB_ETHER_TYPE_IPV4);
	if (sg.dst6 != NULL)
		lb_worker_route_out6(w, m, sg.dst6, now);
	else
		lb_worker_route_out(w, m, sg.dst, now);
}

/* A segment of a refused flow: the backend, reset, gets no window. */
static void
rej_send(struct lb_worker *w, const struct lb_flow *f, struct rte_mbuf *m,
	 uint32_t l3_off, bool to_client, uint32_t seq, uint32_t ack,
	 uint8_t flags, const void *data, uint16_t len, uint64_t now)
{
	lb_worker_seg_send(w, f, m, l3_off, to_client, seq, ack, flags,
			   to_client ? UINT16_MAX : 0, data, len, now);
}

/* The answer of refused flow @p r, with its FIN, into @p m. */
static void
rej_answer(struct lb_worker *w, const struct lb_flow *f, struct rte_mbuf *m,
	   uint32_t l3_off, const struct lb_l7_rej *r, uint64_t now)
{
	char ans[LB_L7_REJECT_HTTP_MAX];
	int n = lb_l7_reject_http(ans, sizeof(ans), r->status,
				  r->retry_after);

	rej_send(w, f, m, l3_off, true, r->srv_seq, r->cli_nxt,
		 LB_TCP_ACK | LB_TCP_PSH | LB_TCP_FIN, ans,
		 (uint16_t)(n > 0 ? n : 0), now);
}

/*
 * Refuses the request that client segment @p m ends or continues: the
 * held segments are dropped, the backend is reset at the first octet of
 * the request (which it never got), the client gets the answer in the
 * server's sequence space.
 */
static void
l7_refuse(struct lb_worker *w, struct lb_flow *f, uint32_t idx,
	  struct rte_mbuf *m, const struct lb_pkt *pkt, uint64_t now)
{
	struct lb_l7_rej *r = rej_of(w, f->l7);
	const uint64_t *g = w->conf->svc[f->svc].opts.gov;
	uint16_t status = (uint16_t)g[LB_CONF_GOV_STATUS];
	uint32_t retry = (uint32_t)g[LB_CONF_GOV_RETRY];
	uint32_t cli_nxt, srv_nxt, req_seq, l3 = pkt->l3_off;
	bool fin = (pkt->tcp_flags & LB_TCP_FIN) != 0;
	char ans[LB_L7_REJECT_HTTP_MAX];
	int n;

	if (r == NULL) {
		rte_pktmbuf_free(m);
		return;
	}
	lb_l7_seq(w->l7, f->l7, &cli_nxt, &srv_nxt, &req_seq);
	for (unsigned int i = 0; i < r->nheld; i++)
		rte_pktmbuf_free(r->held[i]);
	r->nheld = 0;
	if (r->reason == REJ_REBIND) {
		status = 421;
		retry = 0;
		w->st.rebind_closed++;
	} else {
		w->st.l7_refused[r->reason]++;
	}
	/* Spliced (a PROXY header): the follower counts in the client's
	 * numbers (backend segments are translated before it sees them),
	 * the RST goes out in the backend's. */
	if (unlikely(w->pp_used) && (w->pp[idx].state != LB_PP_NONE ||
				     w->synp[idx].state == LB_SYNP_ON))
		req_seq += w->spl[idx].seq[LB_FLOW_DIR_ORIG];
	n = lb_l7_reject_http(ans, sizeof(ans), status, retry);
	lb_l7_rej_refuse(r, (enum lb_l7_rej_reason)r->reason, status, retry,
			 srv_nxt, cli_nxt, fin, (uint16_t)(n > 0 ? n : 0));
	rej_send_new(w, f, frame_of(m), l3, false, req_seq, 0, LB_TCP_RST, now);
	rej_answer(w, f, m, l3, r, now);
	/* Both sides are closed as far as the table goes: the flow lives
	 * on only as long as closed flows do, to take the client's FIN. */
	lb_flow_touch(w->ft, idx, LB_FLOW_DIR_ORIG, LB_TCP_RST, now);
}

/*
 * The last response before a refused pipelined request went out: the
 * first held segment carries the answer.
 */
void
lb_worker_l7_refuse_late(struct lb_worker *w, struct lb_flow *f, uint32_t idx,
			 uint64_t now)
{
	struct lb_l7_rej *r = rej_of(w, f->l7);
	struct rte_mbuf *m;
	struct lb_pkt6 p6;
	struct lb_pkt pkt;

	if (r == NULL || r->nheld == 0)
		return;
	m = r->held[0];
	memmove(&r->held[0], &r->held[1], (r->nheld - 1u) * sizeof(r->held[0]));
	r->nheld--;
	if (!held_parse(f, m, &pkt, &p6)) {
		rte_pktmbuf_free(m);
		return;
	}
	l7_refuse(w, f, idx, m, &pkt, now);
}

/* A segment of a refused flow: we stand in for the server. */
void
lb_worker_rej_client(struct lb_worker *w, struct lb_flow *f,
		     struct lb_l7_rej *r, struct rte_mbuf *m,
		     const struct lb_pkt *pkt, uint64_t now)
{
	const uint8_t *fr = frame_of(m);
	enum lb_l7_rej_act act;

	w->st.l7_rej_absorbed++;
	if (pkt->proto != LB_IPPROTO_TCP || (pkt->tcp_flags & LB_TCP_RST)) {
		rte_pktmbuf_free(m);
		return;
	}
	act = lb_l7_rej_client(r, tcp_word(fr, pkt, 4), pkt->payload_len,
			       (pkt->tcp_flags & LB_TCP_ACK) != 0,
			       tcp_word(fr, pkt, 8),
			       (pkt->tcp_flags & LB_TCP_FIN) != 0);
	if (act == LB_L7_RJ_RESEND) {
		w->st.l7_rej_resent++;
		rej_answer(w, f, m, pkt->l3_off, r, now);
	} else if (act == LB_L7_RJ_ACK) {
		rej_send(w, f, m, pkt->l3_off, true, lb_l7_rej_fin_end(r),
			 r->cli_nxt, LB_TCP_ACK, NULL, 0, now);
	} else {
		rte_pktmbuf_free(m);
	}
}

/*
 * What the gate said about client segment @p m of flow @p f.
 * @return true if @p m was taken (held, refused or dropped), false if
 *   the caller forwards it.
 */
bool
lb_worker_l7_admission(struct lb_worker *w, struct lb_flow *f, uint32_t idx,
		       struct rte_mbuf *m, const struct lb_pkt *pkt, int v,
		       uint64_t now)
{
	struct lb_l7_rej *r;

	if (v == L7_RESET) {
		/* Reset both ways: the flow lives on only as closed flows
		 * do; nothing of it reaches the backend any more. */
		lb_flow_touch(w->ft, idx, LB_FLOW_DIR_ORIG, LB_TCP_RST, now);
		rte_pktmbuf_free(m);
		return true;
	}
	r = rej_of(w, f->l7);
	if (r == NULL)
		return false;
	if (v == LB_L7_HOLD && r->nheld >= LB_L7_HOLD_MAX) {
		/* Held as much as we may: decide with what is known; a
		 * request waiting behind unanswered ones gets no more held
		 * (the client sends it again). */
		w->st.l7_hold_full++;
		v = lb_l7_decide(w->l7, f->l7);
	}
	switch (v) {
	case LB_L7_HOLD:
		r->state = LB_L7_RJ_HOLD;
		r->held[r->nheld++] = m;
		w->st.l7_held++;
		return true;
	case LB_L7_REPEAT:
		rte_pktmbuf_free(m);
		return true;
	case LB_L7_REJECT:
		l7_refuse(w, f, idx, m, pkt, now);
		return true;
	case LB_L7_RELEASE:
		lb_worker_gate_end(w, f, f->l7, true, now);
		return false;
	default:
		return false;
	}
}

/*
 * No follower entry for flow @p f (pool empty) at the client's ACK @p m
 * that completes the handshake: on a gated service its requests would
 * escape admission, so the service's fallback applies as to a flow no
 * longer followable.
 * @return true when the flow was reset and @p m dropped.
 */
bool
lb_worker_l7_no_entry(struct lb_worker *w, struct lb_flow *f, uint32_t idx,
		      struct rte_mbuf *m, const struct lb_pkt *pkt,
		      uint64_t now)
{
	const uint8_t *fr = frame_of(m);
	/* The ACK's sequence number is the next octet the backend expects,
	 * its acknowledgement the next the client does. */
	uint32_t cli_nxt = tcp_word(fr, pkt, 4), srv_nxt = tcp_word(fr, pkt, 8);

	if (!lb_worker_l7_gated(&w->conf->svc[f->svc]))
		return false;
	if (!l7_fallback(w, f, fr, pkt->l3_off, cli_nxt, cli_nxt, srv_nxt, now))
		return false;
	lb_flow_touch(w->ft, idx, LB_FLOW_DIR_ORIG, LB_TCP_RST, now);
	rte_pktmbuf_free(m);
	return true;
}
