/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The worker: per burst, parse each frame, answer ARP and ping for our
 * addresses, forward client packets of services to backends and replies
 * back (full-NAT), hand replies that RSS delivered to the wrong worker to
 * their owner, retry refused connections on the next backend and queue
 * them when every backend refused.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_memcpy.h>
#include <rte_prefetch.h>
#include <rte_rcu_qsbr.h>

#include "dp.h"
#include "exc.h"
#include "lb/nat.h"

#define LOG(level, fmt, ...) \
	RTE_LOG(level, USER1, "worker: " fmt "\n", ##__VA_ARGS__)

#define HOLD_CAP 4096u
#define REDIRECT_RING 4096u
#define NEIGH_RING 256u
#define NEIGH_CAP 1024u
#define HOUSE_NS 1000000ull  /* housekeeping at most every 1 ms */
#define DEFERQ_BUDGET 64u
#define IDLE_LOOPS 64u       /* empty polls before the first sleep */
#define MAX_TRIALS 15u       /* four bits of flow->flags */
#define TRIALS_SHIFT 4

static inline uint64_t
now_ns(const struct lb_dp *dp)
{
	return (uint64_t)((double)rte_rdtsc() * dp->ns_per_tsc);
}

static inline void
drop(struct lb_worker *w, struct rte_mbuf *m, enum lb_drop why)
{
	w->st.drop[why]++;
	rte_pktmbuf_free(m);
}

static inline uint8_t *
frame_of(struct rte_mbuf *m)
{
	return rte_pktmbuf_mtod(m, uint8_t *);
}

/* What we have no use for but is addressed to a local address is the
 * kernel's, through the exception path when it is on (exc.h). */
static inline void
drop_or_kernel(struct lb_worker *w, struct rte_mbuf *m, uint32_t dst,
	       enum lb_drop why)
{
	if (w->exc_out != NULL && lb_exc_local(w->conf, dst))
		lb_exc_put(w, m);
	else
		drop(w, m, why);
}

/* ---- transmit ----------------------------------------------------------- */

static void
tx_flush(struct lb_worker *w, uint16_t port)
{
	uint16_t n = w->tx[port].n, sent;

	if (n == 0)
		return;
	sent = rte_eth_tx_burst(port, w->wid, w->tx[port].m, n);
	w->st.tx += sent;
	if (unlikely(sent < n)) {
		w->st.drop[LB_DROP_TX] += n - sent;
		rte_pktmbuf_free_bulk(&w->tx[port].m[sent], n - sent);
	}
	w->tx[port].n = 0;
}

static inline void
tx_enqueue(struct lb_worker *w, uint16_t port, struct rte_mbuf *m)
{
	w->tx[port].m[w->tx[port].n++] = m;
	if (w->tx[port].n == LB_BURST)
		tx_flush(w, port);
}

/* ---- neighbours --------------------------------------------------------- */

static void
send_arp_request(struct lb_worker *w, uint16_t port, uint32_t src,
		 uint32_t target, const uint8_t *dst_mac)
{
	struct lb_dp *dp = w->dp;
	struct lb_nat_link link = { 0 };
	struct rte_mbuf *m = rte_pktmbuf_alloc(dp->pool);
	int len;

	if (m == NULL) {
		w->st.drop[LB_DROP_NOMBUF]++;
		return;
	}
	memcpy(link.mac, dp->port[port].mac.addr_bytes, 6);
	len = lb_nat_arp_request(rte_pktmbuf_mtod(m, uint8_t *),
				 rte_pktmbuf_tailroom(m), &link, src, target,
				 dst_mac);
	if (len < 0 || rte_pktmbuf_append(m, (uint16_t)len) == NULL) {
		rte_pktmbuf_free(m);
		return;
	}
	w->st.arp_requests++;
	tx_enqueue(w, port, m);
}

static void
neigh_release(void *ctx, uint32_t ip, uint64_t handle, const uint8_t *mac)
{
	struct lb_worker *w = ctx;
	struct rte_mbuf *m = (struct rte_mbuf *)(uintptr_t)handle;
	uint16_t port = m->port;

	(void)ip;
	if (mac == NULL) {
		drop(w, m, LB_DROP_NEIGH);
		return;
	}
	lb_nat_set_macs(frame_of(m), w->dp->port[port].mac.addr_bytes, mac);
	tx_enqueue(w, port, m);
}

/*
 * Sends @p m toward @p dst: picks the port and next hop, sets the MAC
 * addresses, or parks the frame until the next hop answers our ARP
 * request. m->port is reused to remember the output port while parked.
 */
static void
route_out(struct lb_worker *w, struct rte_mbuf *m, uint32_t dst, uint64_t now)
{
	struct lb_dp *dp = w->dp;
	uint16_t port;
	uint32_t nh, src;
	uint8_t mac[6];
	int rc;

	if (lb_dpconf_next_hop(w->conf, dst, &port, &nh, &src) != 0 ||
	    port >= dp->nb_ports) {
		drop(w, m, LB_DROP_NO_ROUTE);
		return;
	}
	rc = lb_neigh_lookup(w->neigh, nh, now, mac);
	if (likely(rc == LB_NEIGH_HIT || rc == LB_NEIGH_HIT_PROBE)) {
		lb_nat_set_macs(frame_of(m), dp->port[port].mac.addr_bytes,
				mac);
		tx_enqueue(w, port, m);
		/* A stale entry is used while a unicast request checks
		 * it, as Linux does. */
		if (rc == LB_NEIGH_HIT_PROBE)
			send_arp_request(w, port, src, nh, mac);
		return;
	}
	if (rc != LB_NEIGH_MISS_SEND && rc != LB_NEIGH_MISS_PENDING) {
		drop(w, m, LB_DROP_NEIGH);
		return;
	}
	m->port = port;
	if (lb_neigh_hold(w->neigh, nh, (uintptr_t)m) != 0) {
		drop(w, m, LB_DROP_NEIGH);
		return;
	}
	if (rc == LB_NEIGH_MISS_SEND)
		send_arp_request(w, port, src, nh, NULL);
}

static void
neigh_learn(struct lb_worker *w, uint32_t ip, const uint8_t *mac,
	    uint16_t port, uint64_t now, int broadcast)
{
	struct lb_dp *dp = w->dp;
	uint16_t p;
	uint32_t nh, src;

	/* Only neighbours on a connected subnet of the port they spoke on;
	 * anything else is a spoof or a misconfiguration. */
	if (lb_dpconf_next_hop(w->conf, ip, &p, &nh, &src) != 0 ||
	    p != port || nh != ip)
		return;
	lb_neigh_learn(w->neigh, ip, mac, now);
	if (!broadcast)
		return;
	for (uint16_t i = 0; i < dp->nb_workers; i++) {
		struct lb_neigh_msg msg = { .ip = ip, .port = port };

		if (i == w->wid)
			continue;
		memcpy(msg.mac, mac, 6);
		/* Losing one message only costs that worker an ARP
		 * request of its own. */
		rte_ring_mp_enqueue_elem(dp->w[i]->neigh_in, &msg,
					 sizeof(msg));
	}
}

/* ---- SYN copies kept for retries --------------------------------------- */

static uint32_t
hold_put(struct lb_worker *w, struct rte_mbuf *m)
{
	struct rte_mbuf *c;
	uint32_t i;

	if (w->hold_nfree == 0)
		return LB_HOLD_NONE;
	c = rte_pktmbuf_copy(m, w->dp->pool, 0, UINT32_MAX);
	if (c == NULL) {
		w->st.drop[LB_DROP_NOMBUF]++;
		return LB_HOLD_NONE;
	}
	i = w->hold_free[--w->hold_nfree];
	w->hold[i] = c;
	return i;
}

static void
hold_release(struct lb_worker *w, uint32_t i)
{
	if (i == LB_HOLD_NONE || i >= w->hold_cap || w->hold[i] == NULL)
		return;
	rte_pktmbuf_free(w->hold[i]);
	w->hold[i] = NULL;
	w->hold_since[i] = 0;
	w->hold_free[w->hold_nfree++] = i;
}

/* ---- flows -------------------------------------------------------------- */


/* ---- feedback to the control plane ----------------------------------- */

/* Never wait for the control plane: what the ring has no room for is
 * lost and counted, as a record enqueued alone would be. */
static void
fb_flush(struct lb_worker *w)
{
	unsigned int k;

	if (w->fb_n == 0)
		return;
	k = rte_ring_sp_enqueue_burst_elem(w->fb, w->fb_buf,
					   sizeof(w->fb_buf[0]), w->fb_n, NULL);
	w->st.fb_dropped += w->fb_n - k;
	w->fb_n = 0;
}

static void
fb_put_full(struct lb_worker *w, enum lb_fb_kind kind, uint32_t svc,
	    uint32_t be, uint16_t flags, uint32_t u32, uint32_t u32b, uint64_t v)
{
	struct lb_fb r = {
		.ts_ns = w->now_ns,
		.svc = (uint16_t)svc,
		.be = (uint16_t)be,
		.kind = (uint8_t)kind,
		.worker = (uint8_t)w->wid,
		.flags = flags,
		.u32 = u32,
		.u32b = u32b,
		.v = v,
	};

	/* Feedback is for lb-control: with none attached, a ring nobody
	 * drains would only fill up. */
	if (w->fb == NULL ||
	    (w->dp->shm != NULL &&
	     atomic_load_explicit(&w->dp->shm->control_pid,
				  memory_order_relaxed) == 0))
		return;
	if (unlikely(w->fb_n == LB_FB_BUF))
		fb_flush(w);
	w->fb_buf[w->fb_n++] = r;
}

static inline void
fb_put(struct lb_worker *w, enum lb_fb_kind kind, uint32_t svc, uint32_t be,
       uint32_t u32, uint64_t v)
{
	fb_put_full(w, kind, svc, be, 0, u32, 0, v);
}

/* A trial's outcome, with the error count the scheduler now weighs. */
static void
trial_feedback(struct lb_worker *w, uint32_t svc, uint32_t be, bool ok)
{
	uint32_t errs = w->ops[svc]->errors(w->sched[svc], be);

	w->bst[svc][be].sched_errors = errs;
	fb_put(w, ok ? LB_FB_TRIAL_OK : LB_FB_TRIAL_FAIL, svc, be, errs, 0);
}

/* ---- HTTP following ------------------------------------------------------ */

static inline uint32_t
tcp_word(const uint8_t *frame, const struct lb_pkt *pkt, uint32_t off)
{
	uint32_t v;

	memcpy(&v, frame + pkt->l4_off + off, 4);
	return rte_be_to_cpu_32(v);
}

static inline uint64_t
f64_bits(double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return u;
}

/*
 * One final response: what it says goes to the control plane, and its
 * status to the scheduler (by default 5xx is an error, as the dispatch
 * paper counts failed requests; anything else a success).
 */
static void
on_l7_obs(void *owner, uint32_t tag, const struct lb_l7_obs *o)
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
		w->ops[svc]->result(w->sched[svc], be, !err);
		b->sched_errors = w->ops[svc]->errors(w->sched[svc], be);
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
	fb_put_full(w, LB_FB_HTTP, svc, be, flags, o->status, expect_ms,
		    o->latency_ns);
	if (o->has_spl) {
		uint32_t age = 0;

		if (o->has_spl_time) {
			int64_t now_ms = ((int64_t)w->now_ns +
					  w->dp->epoch_off_ns) / 1000000;
			int64_t d = now_ms - (int64_t)o->spl_time_ms;

			/* A clock ahead of ours reads as fresh. */
			age = d <= 0 ? 0 : (uint32_t)RTE_MIN(d, INT32_MAX);
		}
		fb_put_full(w, LB_FB_SPL, svc, be,
			    o->has_spl_time ? LB_FB_F_SPL_TIME : 0, age, 0,
			    f64_bits(o->spl));
	}
	if (o->has_orca)
		fb_put_full(w, LB_FB_ORCA, svc, be, 0,
			    (uint32_t)(o->orca_mem * 1e6), 0,
			    f64_bits(o->orca_cpu));
}

static void
on_l7_inflight(void *owner, uint32_t tag, int delta)
{
	struct lb_worker *w = owner;

	w->bst[tag >> 16][tag & 0xffff].inflight += delta;
}

static void fwd(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt *pkt,
		const struct lb_flow *f, enum lb_flow_dir dir, uint64_t now);

/*
 * Ends the admission state of L7 entry @p l7: segments held for a
 * decision go on to the backend (@p flush: the flow goes on unfollowed)
 * or are dropped (the flow is gone or was reset).
 */
static void
gate_end(struct lb_worker *w, const struct lb_flow *f, uint32_t l7, bool flush,
	 uint64_t now)
{
	struct lb_l7_rej *r;

	if (w->rej == NULL || l7 >= w->nb_rej)
		return;
	r = &w->rej[l7];
	for (unsigned int i = 0; i < r->nheld; i++) {
		struct rte_mbuf *m = r->held[i];
		struct lb_pkt pkt;

		if (flush && f != NULL &&
		    lb_pkt_parse(frame_of(m), rte_pktmbuf_data_len(m), &pkt) ==
			    LB_PKT_IPV4)
			fwd(w, m, &pkt, f, LB_FLOW_DIR_ORIG, now);
		else
			rte_pktmbuf_free(m);
	}
	memset(r, 0, offsetof(struct lb_l7_rej, held));
}

static void
l7_stop(struct lb_worker *w, struct lb_flow *f)
{
	gate_end(w, f, f->l7, false, 0);
	lb_l7_close(w->l7, f->l7);
	f->l7 = LB_L7_NONE;
}

/*
 * Both directions have sent their FIN, in order (a gap stops following
 * before): the exchange can report nothing more. Holding the entry until
 * the flow expires (TIME_WAIT lasts minutes) would let connection churn
 * empty the pool. A refused flow keeps it: the worker still answers for
 * the server.
 */
static inline void
l7_closed(struct lb_worker *w, struct lb_flow *f)
{
	if (unlikely(f->l7 != LB_L7_NONE) && f->state == LB_FLOW_TIME_WAIT &&
	    (w->rej == NULL || w->rej[f->l7].state == LB_L7_RJ_OPEN))
		l7_stop(w, f);
}

/*
 * Feeds one segment of an established flow of an http service to its
 * follower. Runs before the frame is rewritten and sent (the payload and
 * sequence numbers are not changed by full-NAT).
 * @return an enum lb_l7_verdict for a client segment of a gated flow.
 */
static inline int
l7_follow(struct lb_worker *w, struct lb_flow *f, int dir,
	  const uint8_t *frame, const struct lb_pkt *pkt, uint64_t now)
{
	int rc;

	if (likely(f->l7 == LB_L7_NONE) || f->state == LB_FLOW_SYN_SENT ||
	    pkt->proto != LB_IPPROTO_TCP)
		return LB_L7_PASS;
	if (pkt->tcp_flags & LB_TCP_RST) {
		l7_stop(w, f);
		return LB_L7_PASS;
	}
	if (pkt->payload_len == 0 && !(pkt->tcp_flags & LB_TCP_FIN))
		return LB_L7_PASS;
	/* What a request's admission needs besides its header block. */
	w->adm_client = rte_be_to_cpu_32(pkt->src);
	w->adm_now = now;
	rc = lb_l7_segment(w->l7, f->l7, dir, tcp_word(frame, pkt, 4),
			   frame + pkt->payload_off, pkt->payload_len,
			   (pkt->tcp_flags & LB_TCP_FIN) != 0, now);
	if (rc < 0) {
		w->st.l7_stopped++;
		/* Unfollowed from here: what was held goes on first. */
		gate_end(w, f, f->l7, true, now);
		l7_stop(w, f);
		return LB_L7_PASS;
	}
	return rc;
}

/* ---- HTTP request admission (docs/admission.md) ---------------------- */

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
static inline bool
l7_gated(const struct lb_dpconf_svc *svc)
{
	return svc->opts.gov[LB_CONF_GOV_ON] || svc->opts.admit.rate != 0;
}

/*
 * The pool's admission callback: the governor by priority rank, then the
 * service's requests/s token buckets (a throttled request takes no
 * token).
 */
static bool
on_l7_admit(void *owner, uint32_t tag, const struct lb_l7_req *rq)
{
	struct lb_worker *w = owner;
	uint32_t svc = tag >> 16;
	const struct lb_conf_svc_opts *o = &w->conf->svc[svc].opts;
	const uint64_t *g = o->gov;
	unsigned int rank = rq->has_prio ? RTE_MIN(rq->prio, LB_GOV_RANK_MAX) :
					   (unsigned int)g[LB_CONF_GOV_PRIO];
	enum lb_l7_rej_reason why;

	if (g[LB_CONF_GOV_ON] &&
	    lb_gov_decide(gov_m(w, svc), rank, &w->rng, &w->st.gov[svc]) !=
		    LB_GOV_ADMIT)
		why = LB_L7_REJ_GOVERNOR;
	else if (o->admit.rate != 0 && w->admit != NULL &&
		 lb_admit_rejected(lb_admit_check(w->admit, (uint16_t)svc,
						  &o->admit, w->adm_client,
						  (uint8_t)rank, w->adm_now)))
		why = LB_L7_REJ_RATE;
	else
		return false;
	if (!rq->can_refuse) {
		w->st.l7_unrefusable++;
		return false;
	}
	w->rej[rq->entry].reason = (uint8_t)why;
	return true;
}

/*
 * Writes a segment of refused flow @p f into @p m (reused: the client's
 * segment, its link header kept) or a fresh mbuf, and sends it: toward
 * the client (@p to_client) from the VIP, else toward the backend from the
 * SNAT address.
 */
static void
rej_send(struct lb_worker *w, const struct lb_flow *f, struct rte_mbuf *m,
	 uint32_t l3_off, bool to_client, uint32_t seq, uint32_t ack,
	 uint8_t flags, const void *data, uint16_t len, uint64_t now)
{
	const struct lb_flow_key *k =
		&f->key[to_client ? LB_FLOW_DIR_ORIG : LB_FLOW_DIR_REPLY];
	struct lb_l7_rej_seg sg = {
		.src = k->dst, .dst = k->src, .sport = k->dport,
		.dport = k->sport, .seq = seq, .ack = ack, .flags = flags,
		.win = to_client ? UINT16_MAX : 0, .data = data, .len = len,
	};
	int n;

	n = lb_l7_reject_seg(frame_of(m),
			     rte_pktmbuf_data_len(m) + rte_pktmbuf_tailroom(m),
			     l3_off, &sg);
	if (n < 0 || m->nb_segs > 1) {
		drop(w, m, LB_DROP_NOMBUF);
		return;
	}
	m->data_len = (uint16_t)n;
	m->pkt_len = (uint32_t)n;
	route_out(w, m, sg.dst, now);
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
	struct lb_l7_rej *r = &w->rej[f->l7];
	const uint64_t *g = w->conf->svc[f->svc].opts.gov;
	uint32_t cli_nxt, srv_nxt, req_seq, l3 = pkt->l3_off;
	bool fin = (pkt->tcp_flags & LB_TCP_FIN) != 0;
	char ans[LB_L7_REJECT_HTTP_MAX];
	struct rte_mbuf *rst;
	int n;

	lb_l7_seq(w->l7, f->l7, &cli_nxt, &srv_nxt, &req_seq);
	for (unsigned int i = 0; i < r->nheld; i++)
		rte_pktmbuf_free(r->held[i]);
	r->nheld = 0;
	n = lb_l7_reject_http(ans, sizeof(ans), (uint16_t)g[LB_CONF_GOV_STATUS],
			      (uint32_t)g[LB_CONF_GOV_RETRY]);
	lb_l7_rej_refuse(r, (enum lb_l7_rej_reason)r->reason,
			 (uint16_t)g[LB_CONF_GOV_STATUS],
			 (uint32_t)g[LB_CONF_GOV_RETRY], srv_nxt, cli_nxt, fin,
			 (uint16_t)(n > 0 ? n : 0));
	w->st.l7_refused[r->reason]++;
	rst = rte_pktmbuf_alloc(w->dp->pool);
	if (rst != NULL && rte_pktmbuf_append(rst, (uint16_t)l3) != NULL) {
		rte_memcpy(frame_of(rst), frame_of(m), l3);
		rej_send(w, f, rst, l3, false, req_seq, 0, LB_TCP_RST, NULL, 0,
			 now);
	} else if (rst != NULL) {
		rte_pktmbuf_free(rst);
	} else {
		w->st.drop[LB_DROP_NOMBUF]++;
	}
	rej_answer(w, f, m, l3, r, now);
	/* Both sides are closed as far as the table goes: the flow lives
	 * on only as long as closed flows do, to take the client's FIN. */
	lb_flow_touch(w->ft, idx, LB_FLOW_DIR_ORIG, LB_TCP_RST, now);
}

/*
 * The last response before a refused pipelined request went out: the
 * first held segment carries the answer.
 */
static void
l7_refuse_late(struct lb_worker *w, struct lb_flow *f, uint32_t idx,
	       uint64_t now)
{
	struct lb_l7_rej *r = &w->rej[f->l7];
	struct rte_mbuf *m;
	struct lb_pkt pkt;

	if (r->nheld == 0)
		return;
	m = r->held[0];
	memmove(&r->held[0], &r->held[1], (r->nheld - 1u) * sizeof(r->held[0]));
	r->nheld--;
	if (lb_pkt_parse(frame_of(m), rte_pktmbuf_data_len(m), &pkt) !=
	    LB_PKT_IPV4) {
		rte_pktmbuf_free(m);
		return;
	}
	l7_refuse(w, f, idx, m, &pkt, now);
}

/* A segment of a refused flow: we stand in for the server. */
static void
rej_client(struct lb_worker *w, struct lb_flow *f, struct rte_mbuf *m,
	   const struct lb_pkt *pkt, uint64_t now)
{
	struct lb_l7_rej *r = &w->rej[f->l7];
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
static bool
l7_admission(struct lb_worker *w, struct lb_flow *f, uint32_t idx,
	     struct rte_mbuf *m, const struct lb_pkt *pkt, int v, uint64_t now)
{
	struct lb_l7_rej *r = &w->rej[f->l7];

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
		gate_end(w, f, f->l7, true, now);
		return false;
	default:
		return false;
	}
}

static void
flow_forget(struct lb_worker *w, const struct lb_flow *f, int free_port,
	    int free_hold)
{
	if (f->svc < LB_CONF_MAX_SVCS && f->be < LB_CONF_MAX_BES)
		w->bst[f->svc][f->be].active--;
	fb_put(w, LB_FB_FLOW_END, f->svc, f->be, 0,
	       (uint64_t)f->pkts[0] + f->pkts[1]);
	if (free_port)
		lb_snat_port_free(w->snat, f->key[LB_FLOW_DIR_REPLY].dst,
				  f->key[LB_FLOW_DIR_REPLY].dport);
	if (free_hold && f->state == LB_FLOW_SYN_SENT)
		hold_release(w, f->l7);
	else if (f->state != LB_FLOW_SYN_SENT && f->l7 != LB_L7_NONE &&
		 w->l7 != NULL) {
		gate_end(w, NULL, f->l7, false, 0);
		lb_l7_close(w->l7, f->l7);
	}
}

static void
trial_snapshot(const struct lb_flow *f, struct lb_trial *t)
{
	t->orig = f->key[LB_FLOW_DIR_ORIG];
	t->snat_ip = f->key[LB_FLOW_DIR_REPLY].dst;
	t->snat_port = f->key[LB_FLOW_DIR_REPLY].dport;
	t->svc = f->svc;
	t->be = f->be;
	t->trials = f->flags >> TRIALS_SHIFT;
	t->hold = f->l7;
}

/*
 * Full-NAT, either way: a packet of direction @p dir leaves with the
 * reverse of the other direction's key, so client -> VIP becomes
 * SNAT -> backend and backend -> SNAT becomes VIP -> client.
 */
static void
fwd(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt *pkt,
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
	route_out(w, m, k->src, now);
}

/* Answers the client of a SYN (held or live) with a RST, consuming @p m. */
static void
rst_client(struct lb_worker *w, struct rte_mbuf *m, uint64_t now)
{
	struct lb_pkt pkt;
	uint32_t client;

	if (lb_pkt_parse(frame_of(m), rte_pktmbuf_data_len(m), &pkt) !=
	    LB_PKT_IPV4) {
		rte_pktmbuf_free(m);
		return;
	}
	client = pkt.src;
	{
		int len = lb_nat_tcp_rst(frame_of(m), rte_pktmbuf_data_len(m),
					 &pkt);

		if (len < 0) {
			rte_pktmbuf_free(m);
			return;
		}
		rte_pktmbuf_trim(m, (uint16_t)(rte_pktmbuf_data_len(m) - len));
	}
	w->st.rst_sent++;
	route_out(w, m, client, now);
}

/*
 * Creates the flow of trial @p t->trials + 1 toward backend @p be and sends
 * the SYN (or first datagram) @p m there. The SNAT port of an earlier trial
 * is reused so the client's tuple keeps one identity.
 * @return 0, or a negative errno with @p m untouched.
 */
static int
flow_start(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt *pkt,
	   const struct lb_trial *t, uint32_t be, uint64_t now)
{
	const struct lb_dpconf_svc *svc = &w->conf->svc[t->svc];
	struct lb_flow_key reply;
	struct lb_flow *f;
	int idx;

	lb_flow_key_set(&reply, svc->be[be].ip, t->snat_ip,
			svc->be[be].port, t->snat_port, svc->proto);
	idx = lb_flow_insert(w->ft, &t->orig, &reply, t->svc, be, now);
	if (idx < 0)
		return idx;
	lb_flow_touch(w->ft, (uint32_t)idx, LB_FLOW_DIR_ORIG, pkt->tcp_flags,
		      now);
	f = lb_flow_get(w->ft, (uint32_t)idx);
	f->flags = (uint8_t)((f->flags & ~LB_FLOW_F_USER_MASK) |
			     ((t->trials + 1) << TRIALS_SHIFT));
	f->l7 = t->hold;
	w->bst[t->svc][be].flows++;
	w->bst[t->svc][be].active++;
	fwd(w, m, pkt, f, LB_FLOW_DIR_ORIG, now);
	return 0;
}

static uint32_t
trial_limit(const struct lb_dpconf_svc *svc)
{
	uint32_t n = svc->nb_be;

	if (svc->opts.retries != 0 && svc->opts.retries < n)
		n = svc->opts.retries;
	return n < MAX_TRIALS ? n : MAX_TRIALS;
}

static void
defer_or_rst(struct lb_worker *w, struct lb_trial *t, uint64_t now);

/*
 * Trial t->trials failed on t->be (its flow is gone, its SNAT port and SYN
 * copy are in @p t): Algorithm 2 moves to the next backend round-robin;
 * when every trial failed the SYN waits in the deferred queue.
 */
static void
trial_failed(struct lb_worker *w, struct lb_trial *t, uint64_t now)
{
	const struct lb_dpconf_svc *svc = &w->conf->svc[t->svc];
	const struct lb_sched_ops *ops = w->ops[t->svc];
	void *st = w->sched[t->svc];
	struct rte_mbuf *m;
	struct lb_pkt pkt;
	uint32_t next;

	w->bst[t->svc][t->be].errors++;
	if (st == NULL || t->be >= svc->nb_be) {
		/* The service went away with the new table: no retry. */
		hold_release(w, t->hold);
		lb_snat_port_free(w->snat, t->snat_ip, t->snat_port);
		return;
	}
	ops->result(st, t->be, false);
	trial_feedback(w, t->svc, t->be, false);
	if (t->hold == LB_HOLD_NONE) {
		/* Nothing to resend: the client's own retransmission will
		 * start a new flow. */
		lb_snat_port_free(w->snat, t->snat_ip, t->snat_port);
		return;
	}
	if (t->trials < trial_limit(svc) &&
	    ops->next(st, t->be, &next) == 0) {
		m = rte_pktmbuf_copy(w->hold[t->hold], w->dp->pool, 0,
				     UINT32_MAX);
		if (m != NULL &&
		    lb_pkt_parse(frame_of(m), rte_pktmbuf_data_len(m), &pkt) ==
			    LB_PKT_IPV4 &&
		    flow_start(w, m, &pkt, t, next, now) == 0) {
			w->st.syn_retries++;
			return;
		}
		if (m != NULL)
			rte_pktmbuf_free(m);
		else
			w->st.drop[LB_DROP_NOMBUF]++;
	}
	lb_snat_port_free(w->snat, t->snat_ip, t->snat_port);
	defer_or_rst(w, t, now);
}

static void
defer_or_rst(struct lb_worker *w, struct lb_trial *t, uint64_t now)
{
	struct lb_deferq *q = w->deferq[t->svc];
	uint64_t key = lb_flow_hash(w->dp->hash_seed, &t->orig), old;
	struct rte_mbuf *m;
	int rc;

	if (q != NULL && w->hold_since[t->hold] != 0 &&
	    now - w->hold_since[t->hold] >=
		    w->conf->svc[t->svc].opts.expiry_ns)
		q = NULL; /* queued long enough already: RST */
	else if (q != NULL && w->hold_since[t->hold] == 0)
		w->hold_since[t->hold] = now;
	if (q != NULL) {
		rc = lb_deferq_push(q, key, t->hold, now, &old);
		if (rc == 0) {
			w->st.deferred++;
			return;
		}
		if (rc == LB_DEFERQ_JOINED) {
			w->st.deferq_joined++;
			w->hold_since[t->hold] = w->hold_since[old];
			hold_release(w, (uint32_t)old);
			return;
		}
		w->st.drop[LB_DROP_DEFERQ_FULL]++;
	}
	m = w->hold[t->hold];
	w->hold[t->hold] = NULL;
	w->hold_since[t->hold] = 0;
	w->hold_free[w->hold_nfree++] = t->hold;
	rst_client(w, m, now);
}

/*
 * First trial of a new flow: the scheduler's pick, a SNAT port and a flow
 * entry; a TCP SYN is copied so that a refused trial can be resent to the
 * next backend without the client noticing.
 */
static void
flow_new(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt *pkt,
	 int svc_idx, const struct lb_flow_key *orig, uint64_t now)
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
		uint64_t old;

		if (lb_deferq_lookup(q, key, &qe) == 0) {
			t.hold = hold_put(w, m);
			rte_pktmbuf_free(m);
			if (t.hold == LB_HOLD_NONE)
				return;
			if (lb_deferq_push(q, key, t.hold, now, &old) ==
			    LB_DEFERQ_JOINED) {
				w->st.deferq_joined++;
				w->hold_since[t.hold] = w->hold_since[old];
				hold_release(w, (uint32_t)old);
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
			t.hold = hold_put(w, m);
			rte_pktmbuf_free(m);
			if (t.hold != LB_HOLD_NONE)
				defer_or_rst(w, &t, now);
			return;
		}
		drop(w, m, LB_DROP_NO_BACKEND);
		return;
	}
	if (w->snat == NULL ||
	    lb_snat_port_alloc(w->snat, &t.snat_ip, &t.snat_port) != 0) {
		drop(w, m, LB_DROP_SNAT_FULL);
		return;
	}
	if (svc->proto == LB_IPPROTO_TCP)
		t.hold = hold_put(w, m);
	rc = flow_start(w, m, pkt, &t, be, now);
	if (rc != 0) {
		hold_release(w, t.hold);
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

	if (a->rate == 0 || svc->opts.http || w->admit == NULL)
		return false;
	v = lb_admit_check(w->admit, (uint16_t)svc_idx, a, client, 0, now);
	if (!lb_admit_rejected(v))
		return false;
	/* Once per key and interval: the key just entered the negative
	 * cache, so lb-control may act on the source. */
	if (v == LB_ADMIT_REJ_EMPTY)
		fb_put_full(w, LB_FB_REJECT, (uint32_t)svc_idx, 0,
			    (uint16_t)(v | (uint16_t)a->key << 8), client, 0,
			    0);
	if (a->reject == LB_ADMIT_REJECT_RST && svc->proto == LB_IPPROTO_TCP)
		rst_client(w, m, now);
	else
		rte_pktmbuf_free(m);
	return true;
}

/* A pure SYN on a closed flow: a new connection on its tuple. */
static inline bool
reopens(const struct lb_flow *f, const struct lb_pkt *pkt)
{
	return pkt->proto == LB_IPPROTO_TCP &&
	       (pkt->tcp_flags & (LB_TCP_SYN | LB_TCP_ACK)) == LB_TCP_SYN &&
	       (f->state == LB_FLOW_TIME_WAIT || f->state == LB_FLOW_CLOSED);
}

/* A new connection on a closed flow of service @p svc_idx whose backend
 * is no longer eligible. */
static inline bool
reopen_elsewhere(const struct lb_worker *w, const struct lb_flow *f,
		 int svc_idx)
{
	return f->svc == (uint16_t)svc_idx &&
	       !lb_dpconf_be_eligible(&w->conf->svc[svc_idx], f->be);
}

static void
from_client(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt *pkt,
	    int svc_idx, uint64_t hash, uint64_t now)
{
	struct lb_flow_key k;
	enum lb_flow_dir dir;
	struct lb_flow *f;
	uint32_t idx;
	bool reopen;
	int v;

	lb_flow_key_set(&k, pkt->src, pkt->dst, pkt->sport, pkt->dport,
			pkt->proto);
	idx = lb_flow_lookup_hash(w->ft, &k, hash, &dir);
	if (idx == LB_FLOW_NONE) {
		/* Only a SYN (TCP) or any datagram (UDP) opens a flow. */
		if (pkt->proto == LB_IPPROTO_TCP &&
		    (pkt->tcp_flags & (LB_TCP_SYN | LB_TCP_ACK)) !=
			    LB_TCP_SYN) {
			drop(w, m, LB_DROP_NO_FLOW);
			return;
		}
		if (admit_reject(w, m, pkt, svc_idx, now))
			return;
		flow_new(w, m, pkt, svc_idx, &k, now);
		return;
	}
	f = lb_flow_get(w->ft, idx);
	reopen = reopens(f, pkt);
	if (unlikely(reopen) && reopen_elsewhere(w, f, svc_idx)) {
		/* A new connection on the tuple of a closed flow whose
		 * backend takes no new flows any more (drained, removed: an
		 * instance the autoscaler stopped): a new flow, not a SYN
		 * into the void. */
		flow_forget(w, f, 1, 1);
		lb_flow_delete(w->ft, idx);
		if (admit_reject(w, m, pkt, svc_idx, now))
			return;
		flow_new(w, m, pkt, svc_idx, &k, now);
		return;
	}
	if (unlikely(reopen) && admit_reject(w, m, pkt, svc_idx, now))
		/* A new connection on a closed tuple: reusing a port
		 * must not get round the limit. */
		return;
	if (f->state == LB_FLOW_SYN_SENT) {
		/* A retransmitted SYN must not refresh the trial's timer:
		 * the SYN timeout measures the backend's silence. */
		if (!(pkt->tcp_flags & LB_TCP_SYN))
			lb_flow_touch(w->ft, idx, LB_FLOW_DIR_ORIG,
				      pkt->tcp_flags, now);
		fwd(w, m, pkt, f, LB_FLOW_DIR_ORIG, now);
		return;
	}
	if (unlikely(reopen) && f->l7 != LB_L7_NONE && w->l7 != NULL) {
		/* A new connection on the tuple of a closed one (the table
		 * sends it back to SYN_SENT, where l7 means a SYN copy):
		 * the old exchange ends here. Only then: a SYN the client
		 * repeats because the SYN-ACK was lost leaves the flow in
		 * its state, and its following must go on. */
		l7_stop(w, f);
	}
	if (unlikely(f->l7 != LB_L7_NONE && w->rej != NULL &&
		     f->state != LB_FLOW_SYN_SENT &&
		     w->rej[f->l7].state == LB_L7_RJ_DONE)) {
		rej_client(w, f, m, pkt, now);
		return;
	}
	v = l7_follow(w, f, 0, frame_of(m), pkt, now);
	lb_flow_touch(w->ft, idx, LB_FLOW_DIR_ORIG, pkt->tcp_flags, now);
	if (unlikely(v != LB_L7_PASS) &&
	    l7_admission(w, f, idx, m, pkt, v, now))
		return;
	fwd(w, m, pkt, f, LB_FLOW_DIR_ORIG, now);
	l7_closed(w, f);
}

static void
from_backend(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt *pkt,
	     uint64_t hash, uint64_t now)
{
	struct lb_flow_key k;
	enum lb_flow_dir dir;
	struct lb_flow *f;
	struct lb_trial t;
	uint32_t idx;

	lb_flow_key_set(&k, pkt->src, pkt->dst, pkt->sport, pkt->dport,
			pkt->proto);
	idx = lb_flow_lookup_hash(w->ft, &k, hash, &dir);
	if (idx == LB_FLOW_NONE || dir != LB_FLOW_DIR_REPLY) {
		drop(w, m, LB_DROP_NO_FLOW);
		return;
	}
	f = lb_flow_get(w->ft, idx);
	if (f->state == LB_FLOW_SYN_SENT && pkt->proto == LB_IPPROTO_TCP) {
		if (pkt->tcp_flags & LB_TCP_RST) {
			/* The backend refused the connection: next trial. */
			trial_snapshot(f, &t);
			flow_forget(w, f, 0, 0);
			lb_flow_delete(w->ft, idx);
			rte_pktmbuf_free(m);
			trial_failed(w, &t, now);
			return;
		}
		if ((pkt->tcp_flags & (LB_TCP_SYN | LB_TCP_ACK)) ==
		    (LB_TCP_SYN | LB_TCP_ACK)) {
			const struct lb_dpconf_svc *svc =
				&w->conf->svc[f->svc];

			if (w->sched[f->svc] != NULL) {
				/* On http services the responses judge the
				 * backend: counting the handshake as a
				 * success would wipe the errors its 5xx
				 * answers record. */
				if (!svc->opts.http)
					w->ops[f->svc]->result(
						w->sched[f->svc], f->be, true);
				trial_feedback(w, f->svc, f->be, true);
			}
			hold_release(w, f->l7);
			f->l7 = LB_HOLD_NONE;
			/* The handshake gives both initial sequence
			 * numbers: from here on each direction's bytes
			 * can be followed in order. */
			if (w->l7 != NULL && svc->opts.http) {
				const uint8_t *fr = frame_of(m);

				f->l7 = lb_l7_open(w->l7,
						   tcp_word(fr, pkt, 8),
						   tcp_word(fr, pkt, 4) + 1,
						   (uint32_t)f->svc << 16 |
							   f->be,
						   f->svc);
				if (f->l7 != LB_L7_NONE)
					lb_l7_gate(w->l7, f->l7,
						   l7_gated(svc));
			}
		}
	} else if (unlikely(f->l7 != LB_L7_NONE && w->rej != NULL &&
			    w->rej[f->l7].state == LB_L7_RJ_DONE)) {
		/* Reset by us: what the backend still says goes nowhere. */
		w->st.l7_rej_absorbed++;
		rte_pktmbuf_free(m);
		return;
	} else if (unlikely(l7_follow(w, f, 1, frame_of(m), pkt, now) ==
			    LB_L7_REJECT)) {
		lb_flow_touch(w->ft, idx, LB_FLOW_DIR_REPLY, pkt->tcp_flags,
			      now);
		fwd(w, m, pkt, f, LB_FLOW_DIR_REPLY, now);
		l7_refuse_late(w, f, idx, now);
		return;
	}
	lb_flow_touch(w->ft, idx, LB_FLOW_DIR_REPLY, pkt->tcp_flags, now);
	fwd(w, m, pkt, f, LB_FLOW_DIR_REPLY, now);
	l7_closed(w, f);
}

/*
 * An ICMP error about one of our flows. From a backend (quoting SNAT ->
 * backend): unreachable during the handshake fails the trial, otherwise
 * it is translated for the client. From the client side (quoting
 * VIP -> client): translated for the backend.
 */
static void
icmp_error(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt *pkt,
	   uint64_t now)
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

	if (lb_nat_icmp_parse(fr, len, pkt, &ic) != 0) {
		drop(w, m, LB_DROP_ICMP);
		return;
	}
	/* An error about SNAT -> backend traffic belongs to the worker that
	 * owns the quoted SNAT port. */
	if (w->snat != NULL && lb_dpconf_snat_find(w->conf, pkt->dst) >= 0) {
		uint32_t owner = lb_snat_owner(w->snat, ic.inner.sport);

		if (owner != w->wid && owner < w->dp->nb_workers) {
			if (rte_ring_mp_enqueue(w->dp->w[owner]->redirect,
						m) != 0)
				drop(w, m, LB_DROP_REDIRECT);
			else
				w->st.redirect_out++;
			return;
		}
	}
	/* The quoted datagram went the other way: reverse it to get the key
	 * of the packets that we see in this direction. */
	lb_flow_key_set(&k, ic.inner.dst, ic.inner.src, ic.inner.dport,
			ic.inner.sport, ic.proto);
	idx = lb_flow_lookup(w->ft, &k, &dir);
	if (idx == LB_FLOW_NONE) {
		drop_or_kernel(w, m, pkt->dst, LB_DROP_NO_FLOW);
		return;
	}
	f = lb_flow_get(w->ft, idx);
	/* A backend refusing the handshake: the trial failed. */
	if (dir == LB_FLOW_DIR_REPLY && f->state == LB_FLOW_SYN_SENT &&
	    ic.type == LB_ICMP_DEST_UNREACH && ic.code != LB_ICMP_FRAG_NEEDED) {
		struct lb_trial t;

		trial_snapshot(f, &t);
		flow_forget(w, f, 0, 0);
		lb_flow_delete(w->ft, idx);
		rte_pktmbuf_free(m);
		trial_failed(w, &t, now);
		return;
	}
	/*
	 * Translated for the other side, as fwd() does for the packets it
	 * quotes: the client sees VIP -> client quoting client -> VIP, the
	 * backend SNAT -> backend quoting backend -> SNAT.
	 */
	k2 = &f->key[!dir];
	in = (struct lb_nat_tuple){ k2->src, k2->dst, k2->sport, k2->dport };
	if (lb_nat_ttl_dec(fr, pkt) != 0) {
		drop(w, m, LB_DROP_TTL);
		return;
	}
	if (lb_nat_icmp_rewrite(fr, len, pkt, k2->dst, k2->src, &in) < 0) {
		drop(w, m, LB_DROP_ICMP);
		return;
	}
	w->st.icmp_translated++;
	route_out(w, m, k2->src, now);
}

static void
handle_arp(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt *pkt,
	   uint64_t now)
{
	struct lb_dp *dp = w->dp;
	uint16_t port = m->port;
	struct lb_nat_arp arp;
	uint8_t *fr = frame_of(m);
	uint32_t len = rte_pktmbuf_data_len(m);

	if (lb_nat_arp_parse(fr, len, pkt, &arp) != 0) {
		drop(w, m, LB_DROP_NOT_OURS);
		return;
	}
	if (arp.spa != 0)
		neigh_learn(w, arp.spa, arp.sha, port, now, 1);
	if (arp.op == LB_ARP_REQUEST &&
	    lb_dpconf_is_ours(w->conf, arp.tpa, port) &&
	    lb_nat_arp_reply(fr, len, pkt, dp->port[port].mac.addr_bytes) ==
		    0) {
		w->st.arp_replies++;
		tx_enqueue(w, port, m);
		return;
	}
	/* The kernel resolves its next hops with requests of its own. */
	if (arp.op == LB_ARP_REPLY && w->exc_out != NULL &&
	    lb_exc_local(w->conf, arp.tpa)) {
		lb_exc_put(w, m);
		return;
	}
	rte_pktmbuf_free(m);
}

static void
handle_ipv4(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt *pkt,
	    uint64_t hash, uint64_t now)
{
	const struct lb_dpconf *c = w->conf;
	int svc, sn;

	if (pkt->proto == LB_IPPROTO_ICMP) {
		uint8_t type = ((const uint8_t *)&pkt->dport)[0];

		if (type == LB_ICMP_ECHO_REQUEST &&
		    lb_dpconf_is_ours(c, pkt->dst, m->port)) {
			uint32_t peer = pkt->src;

			if (lb_nat_icmp_echo_reply(frame_of(m),
						   rte_pktmbuf_data_len(m),
						   pkt) == 0) {
				w->st.echo_replies++;
				route_out(w, m, peer, now);
				return;
			}
		} else if (type == LB_ICMP_DEST_UNREACH ||
			   type == LB_ICMP_TIME_EXCEEDED) {
			icmp_error(w, m, pkt, now);
			return;
		}
		drop_or_kernel(w, m, pkt->dst, LB_DROP_ICMP);
		return;
	}
	svc = lb_dpconf_svc_find(c, pkt->proto, pkt->dst, pkt->dport);
	if (svc >= 0) {
		from_client(w, m, pkt, svc, hash, now);
		return;
	}
	sn = lb_dpconf_snat_find(c, pkt->dst);
	if (sn >= 0 && w->snat != NULL) {
		uint32_t owner = lb_snat_owner(w->snat, pkt->dport);

		if (owner != w->wid && owner < w->dp->nb_workers) {
			if (rte_ring_mp_enqueue(w->dp->w[owner]->redirect,
						m) != 0)
				drop(w, m, LB_DROP_REDIRECT);
			else
				w->st.redirect_out++;
			return;
		}
		from_backend(w, m, pkt, hash, now);
		return;
	}
	drop_or_kernel(w, m, pkt->dst, LB_DROP_NOT_OURS);
}

/*
 * Prefetches what following the segment of flow @p fi (a guess from
 * lb_flow_peek(), LB_FLOW_NONE for none) will read: its L7 entry, its
 * admission state and the payload past the frame's first line, which the
 * parser did not touch. A plain flow's segment reads none of them.
 */
static inline void
l7_prefetch(const struct lb_worker *w, struct rte_mbuf *m,
	    const struct lb_pkt *pkt, uint32_t fi)
{
	const struct lb_flow *f;
	const uint8_t *p, *end;

	if (fi == LB_FLOW_NONE || w->l7 == NULL || pkt->payload_len == 0)
		return;
	f = &lb_flow_entries(w->ft)[fi];
	if (f->l7 == LB_L7_NONE || f->state == LB_FLOW_SYN_SENT ||
	    f->state == LB_FLOW_FREE)
		return;
	lb_l7_prefetch(w->l7, f->l7);
	if (w->rej != NULL && f->l7 < w->nb_rej)
		rte_prefetch0(&w->rej[f->l7]);
	p = frame_of(m);
	end = p + pkt->payload_off + pkt->payload_len;
	for (p += RTE_CACHE_LINE_SIZE; p < end; p += RTE_CACHE_LINE_SIZE)
		rte_prefetch0(p);
}

/*
 * A burst in three passes, after a prefetch of every frame's first line
 * (all at once: the frames come from another core, and one packet ahead
 * left most of each miss in the parser's way). The first pass parses
 * every frame and prefetches the flow-table slot of its 5-tuple; the
 * second prefetches the flow each slot points to; the third handles
 * them. With a large table neither is in cache: prefetching all of them
 * first overlaps those misses instead of paying them one packet after
 * the other. A followed flow's segment
 * also reads its L7 state and its payload: the third pass prefetches
 * those one packet ahead, behind the work on the packet before.
 */
static void
handle_burst(struct lb_worker *w, struct rte_mbuf **m, unsigned int n,
	     uint64_t now)
{
	struct lb_pkt pkt[LB_BURST];
	enum lb_pkt_verdict v[LB_BURST];
	uint64_t hash[LB_BURST];
	uint32_t fi[LB_BURST];

	for (unsigned int i = 0; i < n; i++)
		rte_prefetch0(rte_pktmbuf_mtod(m[i], void *));
	for (unsigned int i = 0; i < n; i++) {
		v[i] = lb_pkt_parse(frame_of(m[i]), rte_pktmbuf_data_len(m[i]),
				    &pkt[i]);
		w->st.verdict[v[i]]++;
		hash[i] = 0;
		if (v[i] == LB_PKT_IPV4 && pkt[i].proto != LB_IPPROTO_ICMP) {
			struct lb_flow_key k;

			lb_flow_key_set(&k, pkt[i].src, pkt[i].dst,
					pkt[i].sport, pkt[i].dport,
					pkt[i].proto);
			hash[i] = lb_flow_hash(w->ft->seed, &k);
			lb_flow_prefetch(w->ft, hash[i]);
		}
	}
	for (unsigned int i = 0; i < n; i++) {
		fi[i] = hash[i] != 0 ? lb_flow_peek(w->ft, hash[i])
				     : LB_FLOW_NONE;
		if (fi[i] != LB_FLOW_NONE)
			rte_prefetch0(&lb_flow_entries(w->ft)[fi[i]]);
	}
	if (n > 0)
		l7_prefetch(w, m[0], &pkt[0], fi[0]);
	for (unsigned int i = 0; i < n; i++) {
		if (i + 1 < n)
			l7_prefetch(w, m[i + 1], &pkt[i + 1], fi[i + 1]);
		switch (v[i]) {
		case LB_PKT_IPV4:
			handle_ipv4(w, m[i], &pkt[i], hash[i], now);
			break;
		case LB_PKT_ARP:
			handle_arp(w, m[i], &pkt[i], now);
			break;
		default:
			rte_pktmbuf_free(m[i]);
			break;
		}
	}
}

/* ---- housekeeping ------------------------------------------------------- */

static void
on_expire(uint32_t idx, const struct lb_flow *f, void *arg)
{
	struct lb_worker *w = arg;

	(void)idx;
	/* A SYN the backend never answered: that trial failed. The retry
	 * waits until expiry is done with the table. */
	if (f->state == LB_FLOW_SYN_SENT && f->l7 != LB_HOLD_NONE &&
	    w->nb_pending < LB_EXPIRE_BUDGET) {
		trial_snapshot(f, &w->pending[w->nb_pending++]);
		flow_forget(w, f, 0, 0);
		return;
	}
	flow_forget(w, f, 1, 1);
}

static enum lb_deferq_verdict
on_deferq(enum lb_deferq_event ev, const struct lb_deferq_entry *e, void *arg)
{
	struct lb_worker *w = arg;
	uint64_t now = now_ns(w->dp);
	uint32_t hold = (uint32_t)e->cookie;
	struct rte_mbuf *m;

	if (hold >= w->hold_cap || w->hold[hold] == NULL)
		return LB_DEFERQ_DONE;
	if (ev == LB_DEFERQ_DUE) {
		struct lb_flow_key k;
		enum lb_flow_dir dir;
		struct lb_pkt pkt;
		int svc;

		m = rte_pktmbuf_copy(w->hold[hold], w->dp->pool, 0,
				     UINT32_MAX);
		if (m == NULL)
			return LB_DEFERQ_KEEP;
		if (lb_pkt_parse(frame_of(m), rte_pktmbuf_data_len(m), &pkt) !=
		    LB_PKT_IPV4) {
			rte_pktmbuf_free(m);
			hold_release(w, hold);
			return LB_DEFERQ_DONE;
		}
		svc = lb_dpconf_svc_find(w->conf, pkt.proto, pkt.dst,
					 pkt.dport);
		lb_flow_key_set(&k, pkt.src, pkt.dst, pkt.sport, pkt.dport,
				pkt.proto);
		if (svc < 0 || lb_flow_lookup(w->ft, &k, &dir) != LB_FLOW_NONE) {
			/* Service gone, or the client got through already. */
			rte_pktmbuf_free(m);
			hold_release(w, hold);
			return LB_DEFERQ_DONE;
		}
		{
			struct lb_trial t = { .orig = k, .svc = (uint16_t)svc,
					   .hold = hold };
			uint32_t be;

			if (w->sched[svc] == NULL || w->snat == NULL ||
			    w->ops[svc]->pick(w->sched[svc],
					   lb_flow_hash(w->dp->hash_seed, &k),
					   &w->rng, &be) != 0 ||
			    lb_snat_port_alloc(w->snat, &t.snat_ip,
					       &t.snat_port) != 0) {
				rte_pktmbuf_free(m);
				return LB_DEFERQ_KEEP;
			}
			if (flow_start(w, m, &pkt, &t, be, now) != 0) {
				lb_snat_port_free(w->snat, t.snat_ip,
						  t.snat_port);
				rte_pktmbuf_free(m);
				return LB_DEFERQ_KEEP;
			}
			w->st.flows_created++;
			return LB_DEFERQ_DONE;
		}
	}
	/* Expired, exhausted or flushed: the client gets a RST. */
	m = w->hold[hold];
	w->hold[hold] = NULL;
	w->hold_since[hold] = 0;
	w->hold_free[w->hold_nfree++] = hold;
	rst_client(w, m, now);
	return LB_DEFERQ_DONE;
}

static void
housekeeping(struct lb_worker *w, uint64_t now)
{
	struct lb_neigh_msg msg;
	uint32_t nsvc = w->conf->nb_svc;

	w->nb_pending = 0;
	lb_flow_expire(w->ft, now, LB_EXPIRE_BUDGET, on_expire, w);
	if (w->l7 != NULL) {
		struct lb_l7_stats ls;

		lb_l7_stats_get(w->l7, &ls);
		w->st.l7_flows = ls.flows;
		w->st.l7_pool_full = ls.pool_full;
		w->st.l7_blocks_lost = ls.blocks_lost;
	}
	for (unsigned int i = 0; i < w->nb_pending; i++)
		trial_failed(w, &w->pending[i], now);

	for (uint32_t s = 0; s < nsvc; s++)
		if (w->deferq[s] != NULL && lb_deferq_depth(w->deferq[s]) > 0)
			lb_deferq_poll(w->deferq[s], now, DEFERQ_BUDGET,
				       on_deferq, w);
	while (rte_ring_sc_dequeue_elem(w->neigh_in, &msg, sizeof(msg)) == 0)
		neigh_learn(w, msg.ip, msg.mac, msg.port, now, 0);
	{
		uint32_t ips[16];
		int n = lb_neigh_poll(w->neigh, now, ips, 16);

		for (int i = 0; i < n; i++) {
			uint16_t port;
			uint32_t nh, src;

			if (lb_dpconf_next_hop(w->conf, ips[i], &port, &nh,
					       &src) == 0)
				send_arp_request(w, port, src, ips[i], NULL);
		}
	}
}

/* ---- the loop ----------------------------------------------------------- */

unsigned int
lb_worker_poll(struct lb_worker *w)
{
	struct lb_dp *dp = w->dp;
	struct rte_mbuf *pkts[LB_BURST];
	unsigned int total = 0;
	uint64_t now = now_ns(dp);
	const struct lb_dpconf *c = lb_dp_conf(dp);

	/* One clock read per poll: records and ages of the poll share it. */
	w->now_ns = now;

	if (unlikely(c != w->conf_pub))
		lb_worker_switch(w, c);
	for (uint16_t p = 0; p < dp->nb_ports; p++) {
		uint16_t n = rte_eth_rx_burst(p, w->wid, pkts, LB_BURST);

		w->st.rx += n;
		total += n;
		for (uint16_t i = 0; i < n; i++)
			pkts[i]->port = p;
		handle_burst(w, pkts, n, now);
	}
	{
		unsigned int n = rte_ring_sc_dequeue_burst(
			w->redirect, (void **)pkts, LB_BURST, NULL);

		w->st.redirect_in += n;
		total += n;
		handle_burst(w, pkts, n, now);
	}
	if (w->exc_in != NULL) {
		/* The kernel's frames leave as they are (m->port: which). */
		unsigned int n = rte_ring_sc_dequeue_burst(
			w->exc_in, (void **)pkts, LB_BURST, NULL);

		w->st.exc_from_kernel += n;
		total += n;
		for (unsigned int i = 0; i < n; i++)
			tx_enqueue(w, pkts[i]->port, pkts[i]);
	}
	if (now >= w->next_house_ns) {
		housekeeping(w, now);
		w->next_house_ns = now + HOUSE_NS;
	}
	if (w->exc_out != NULL)
		lb_exc_flush(w);
	for (uint16_t p = 0; p < dp->nb_ports; p++)
		tx_flush(w, p);
	fb_flush(w);
	/* Nothing of the table is held across polls: any older table may
	 * go once every worker has passed here. */
	if (dp->shm != NULL)
		rte_rcu_qsbr_quiescent(dp->shm->qsbr, w->wid);
	return total;
}

int
lb_worker_main(void *arg)
{
	struct lb_worker *w = arg;
	struct lb_dp *dp = w->dp;
	uint32_t sleep_us = 1;

	LOG(INFO, "worker %u on lcore %u", w->wid, rte_lcore_id());
	if (dp->shm != NULL) {
		rte_rcu_qsbr_thread_register(dp->shm->qsbr, w->wid);
		rte_rcu_qsbr_thread_online(dp->shm->qsbr, w->wid);
	}
	while (!dp->quit) {
		if (lb_worker_poll(w) != 0) {
			w->idle_loops = 0;
			sleep_us = 1;
			continue;
		}
		/* Idle: after a short spin, sleep with exponential back-off
		 * up to idle_us so an idle dataplane leaves its cores to
		 * others; the first packet of a burst wakes us within
		 * idle_us. */
		if (dp->idle_us == 0 || ++w->idle_loops < IDLE_LOOPS) {
			rte_pause();
			continue;
		}
		/* A sleeping worker holds no table: offline, it does not
		 * delay the control plane's grace periods. */
		if (dp->shm != NULL)
			rte_rcu_qsbr_thread_offline(dp->shm->qsbr, w->wid);
		rte_delay_us_sleep(sleep_us);
		if (dp->shm != NULL)
			rte_rcu_qsbr_thread_online(dp->shm->qsbr, w->wid);
		w->st.idle_sleeps++;
		if (sleep_us < dp->idle_us)
			sleep_us = RTE_MIN(sleep_us * 2, dp->idle_us);
	}
	if (dp->shm != NULL) {
		rte_rcu_qsbr_thread_offline(dp->shm->qsbr, w->wid);
		rte_rcu_qsbr_thread_unregister(dp->shm->qsbr, w->wid);
	}
	return 0;
}

/* ---- tables ------------------------------------------------------------- */

static bool
same_svc(const struct lb_dpconf_svc *a, const struct lb_dpconf_svc *b)
{
	return a->state != LB_SVC_EMPTY && b->state != LB_SVC_EMPTY &&
	       a->proto == b->proto && a->vip == b->vip && a->vport == b->vport;
}

static bool
same_deferq(const struct lb_conf_svc_opts *a, const struct lb_conf_svc_opts *b)
{
	return a->deferq_len == b->deferq_len &&
	       a->retry_gap_ns == b->retry_gap_ns &&
	       a->expiry_ns == b->expiry_ns;
}

/*
 * Scheduler state for service slot @p s of table @p c. Backends that keep
 * their slot keep the error counts this worker learnt about them.
 */
static void
svc_sched_rebuild(struct lb_worker *w, const struct lb_dpconf *c, uint32_t s,
		  const struct lb_dpconf_svc *old)
{
	const struct lb_dpconf_svc *v = &c->svc[s];
	const struct lb_sched_ops *ops = NULL;
	struct lb_sched_be be[LB_CONF_MAX_BES];
	void *st = NULL;

	if (v->state == LB_SVC_ACTIVE && v->nb_be > 0)
		ops = lb_sched_find(v->opts.sched);
	if (ops != NULL) {
		for (uint32_t b = 0; b < v->nb_be; b++)
			be[b] = (struct lb_sched_be){
				(uint64_t)v->be[b].ip << 16 | v->be[b].port,
				v->be[b].weight ? v->be[b].weight : 1,
				lb_dpconf_be_eligible(v, b)
			};
		st = ops->create(be, v->nb_be);
		if (st != NULL && ops->guard != NULL &&
		    ops->guard(st, &(struct lb_sched_guard){
					   v->opts.err_memory, v->opts.min_volume,
					   v->opts.max_eject, v->opts.panic}) != 0) {
			ops->destroy(st);
			st = NULL;
			errno = ERANGE;
		}
		if (st == NULL)
			LOG(ERR, "worker %u: scheduler %s of slot %u: %s; the "
				 "service takes no new flows",
			    w->wid, ops->name, s, strerror(errno));
	}
	if (st != NULL && old != NULL && w->sched[s] != NULL &&
	    w->ops[s] == ops) {
		for (uint32_t b = 0; b < v->nb_be && b < old->nb_be; b++)
			if (old->be[b].state != LB_BE_EMPTY &&
			    old->be[b].ip == v->be[b].ip &&
			    old->be[b].port == v->be[b].port)
				ops->set_errors(st, b,
						w->ops[s]->errors(w->sched[s],
								  b));
	}
	if (w->sched[s] != NULL)
		w->ops[s]->destroy(w->sched[s]);
	w->sched[s] = st;
	w->ops[s] = st != NULL ? ops : NULL;
}

/* The deferred queue of slot @p s: kept while its settings stay. */
static void
svc_deferq_rebuild(struct lb_worker *w, const struct lb_dpconf *c, uint32_t s,
		   const struct lb_dpconf_svc *old)
{
	const struct lb_dpconf_svc *v = &c->svc[s];
	bool want = v->state == LB_SVC_ACTIVE && v->proto == LB_IPPROTO_TCP &&
		    v->opts.deferq_len > 0;
	struct lb_deferq_conf dc;

	if (want && old != NULL && w->deferq[s] != NULL &&
	    same_deferq(&old->opts, &v->opts))
		return;
	if (w->deferq[s] != NULL) {
		/* Queued clients of a changed or deleted service get their
		 * RST now rather than a silent drop. */
		lb_deferq_flush(w->deferq[s], on_deferq, w);
		lb_deferq_free(w->deferq[s]);
		w->deferq[s] = NULL;
	}
	if (!want)
		return;
	memset(&dc, 0, sizeof(dc));
	dc.retry_gap_ns = v->opts.retry_gap_ns;
	dc.max_wait_ns = v->opts.expiry_ns;
	w->deferq[s] = lb_deferq_create(v->opts.deferq_len, &dc);
	if (w->deferq[s] == NULL)
		LOG(ERR, "worker %u: deferred queue of slot %u: %s", w->wid,
		    s, strerror(errno));
}

/* The SNAT addresses of @p c that take new flows, in @p ips; their count. */
static uint32_t
snat_active(const struct lb_dpconf *c, uint32_t *ips)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < c->nb_snat; i++)
		if (!c->snat[i].draining)
			ips[n++] = c->snat[i].ip;
	return n;
}

/*
 * The SNAT addresses of table @p c to this worker's allocator: new ones
 * get their slices, removed ones drain (their flows keep their ports, and
 * the table keeps the address for their replies until they end).
 */
static void
snat_switch(struct lb_worker *w, const struct lb_dpconf *c)
{
	uint32_t ips[LB_CONF_MAX_SNATS];
	int missed;

	missed = lb_snat_sync(w->snat, ips, snat_active(c, ips));
	if (missed > 0)
		LOG(ERR, "worker %u: no room for %d new SNAT address(es) "
			 "while old ones drain",
		    w->wid, missed);
}

void
lb_worker_switch(struct lb_worker *w, const struct lb_dpconf *pub)
{
	const struct lb_dpconf *prev = w->conf;
	struct lb_dpconf *c = w->conf_buf[prev == w->conf_buf[0] ? 1 : 0];
	uint64_t min_syn = UINT64_MAX;

	/* The worker runs on a copy of its own, taken now, while it is
	 * online: a published table may be freed once every worker has been
	 * quiescent, which includes sleeping workers, so nothing may point
	 * into it across polls. The copy of the previous table stays for
	 * comparison. The new table is in place before anything that may
	 * send (a deferred queue's RSTs route through it). */
	memcpy(c, pub, sizeof(*c));
	w->conf_pub = pub;
	w->conf = c;
	for (uint32_t s = 0; s < LB_CONF_MAX_SVCS; s++) {
		const struct lb_dpconf_svc *old = NULL;
		static const struct lb_dpconf_svc empty;
		const struct lb_dpconf_svc *v =
			s < c->nb_svc ? &c->svc[s] : &empty;

		if (prev != NULL && s < prev->nb_svc &&
		    same_svc(&prev->svc[s], v))
			old = &prev->svc[s];
		if (s >= c->nb_svc) {
			if (w->sched[s] != NULL)
				w->ops[s]->destroy(w->sched[s]);
			w->sched[s] = NULL;
			w->ops[s] = NULL;
			if (w->deferq[s] != NULL) {
				lb_deferq_flush(w->deferq[s], on_deferq, w);
				lb_deferq_free(w->deferq[s]);
				w->deferq[s] = NULL;
			}
			continue;
		}
		svc_sched_rebuild(w, c, s, old);
		svc_deferq_rebuild(w, c, s, old);
		if (v->state == LB_SVC_ACTIVE && v->proto == LB_IPPROTO_TCP &&
		    v->opts.syn_timeout_ns < min_syn)
			min_syn = v->opts.syn_timeout_ns;
	}
	/* A flow still in SYN_SENT after the shortest SYN timeout is a
	 * failed trial (see on_expire). */
	if (min_syn != UINT64_MAX)
		lb_flow_set_timeout(w->ft, LB_FLOW_SYN_SENT, min_syn);
	lb_worker_l7_switch(w, pub);
	snat_switch(w, c);
	w->st.conf_switches++;
	atomic_store_explicit(&w->sh.conf_gen, c->gen, memory_order_release);
}

/* ---- setup -------------------------------------------------------------- */

void
lb_worker_free(struct lb_worker *w)
{
	if (w == NULL)
		return;
	for (uint32_t s = 0; s < LB_CONF_MAX_SVCS; s++) {
		if (w->sched[s] != NULL)
			w->ops[s]->destroy(w->sched[s]);
		lb_deferq_free(w->deferq[s]);
	}
	for (uint32_t i = 0; i < w->hold_cap && w->hold != NULL; i++)
		if (w->hold[i] != NULL)
			rte_pktmbuf_free(w->hold[i]);
	rte_free(w->hold);
	rte_free(w->hold_free);
	rte_free(w->hold_since);
	rte_free(w->bst);
	rte_free(w->conf_buf[0]);
	rte_free(w->conf_buf[1]);
	rte_free(w->ft);
	rte_free(w->snat);
	if (w->neigh != NULL)
		lb_neigh_flush(w->neigh);
	lb_neigh_free(w->neigh);
	rte_ring_free(w->redirect);
	rte_ring_free(w->neigh_in);
	rte_ring_free(w->fb);
	for (uint32_t i = 0; w->rej != NULL && i < w->nb_rej; i++)
		gate_end(w, NULL, i, false, 0);
	rte_free(w->rej);
	lb_l7_pool_free(w->l7);
	lb_hdr_scratch_free(w->hscr);
	lb_admit_lc_free(w->admit);
	lb_hdr_db_free(w->hdb);
	rte_free(w);
}

struct lb_worker *
lb_worker_create(struct lb_dp *dp, uint16_t wid, unsigned int lcore)
{
	const struct lb_dpconf *c = lb_dp_conf(dp);
	struct lb_flow_timeouts to;
	struct lb_snat_conf sc;
	uint32_t snat_ips[LB_CONF_MAX_SNATS];
	struct lb_worker *w;
	char name[RTE_RING_NAMESIZE];
	int socket = rte_lcore_to_socket_id(lcore);
	size_t sz;

	w = rte_zmalloc_socket("lb_worker", sizeof(*w), RTE_CACHE_LINE_SIZE,
			       socket);
	if (w == NULL)
		return NULL;
	w->dp = dp;
	w->wid = wid;
	w->now_ns = now_ns(dp);
	w->lcore = lcore;
	lb_xoshiro_seed(&w->xo, (dp->rng_seed ? dp->rng_seed : dp->hash_seed) ^
					(0x9e37ULL * (wid + 1)));
	w->rng = lb_rng_xoshiro(&w->xo);

	/* Flow table in hugepage memory of the worker's socket, with the
	 * DPVS timeouts: short handshake and close states keep a SYN flood
	 * from filling it for minutes. */
	lb_flow_timeouts_preset(&to, LB_FLOW_TIMEOUTS_DPVS);
	sz = lb_flow_table_mem_size(dp->flows);
	w->ft = rte_zmalloc_socket("lb_flows", sz, RTE_CACHE_LINE_SIZE,
				   socket);
	if (w->ft == NULL ||
	    lb_flow_table_init(w->ft, dp->flows, &to,
			       lb_xoshiro_next(&w->xo)) != 0) {
		LOG(ERR, "worker %u: no memory for %u flows (%zu bytes)", wid,
		    dp->flows, sz);
		goto fail;
	}

	/* Room for every SNAT address a table can hold, cut into this
	 * worker's slices now: addresses come and go with the tables
	 * (snat_switch()), which must not allocate. */
	memset(&sc, 0, sizeof(sc));
	sc.addrs = snat_ips;
	sc.nb_addrs = snat_active(c, snat_ips);
	sc.max_addrs = LB_CONF_MAX_SNATS;
	sc.nb_workers = dp->nb_workers;
	sc.worker_id = wid;
	sc.start = (uint32_t)lb_xoshiro_next(&w->xo);
	w->snat = rte_zmalloc_socket("lb_snat", lb_snat_mem_size(&sc),
				     RTE_CACHE_LINE_SIZE, socket);
	if (w->snat == NULL || lb_snat_init(w->snat, &sc) != 0) {
		LOG(ERR, "worker %u: SNAT ports", wid);
		goto fail;
	}

	{
		struct lb_neigh_conf nc = {
			.capacity = NEIGH_CAP,
			.hash_seed = lb_xoshiro_next(&w->xo),
			.release = neigh_release,
			.release_arg = w,
		};

		w->neigh = lb_neigh_create(&nc);
	}
	snprintf(name, sizeof(name), "lb_redir_%u", wid);
	w->redirect = rte_ring_create(name, REDIRECT_RING, socket,
				      RING_F_SC_DEQ);
	snprintf(name, sizeof(name), "lb_neigh_%u", wid);
	w->neigh_in = rte_ring_create_elem(name, sizeof(struct lb_neigh_msg),
					   NEIGH_RING, socket, RING_F_SC_DEQ);
	snprintf(name, sizeof(name), "lb_fb_%u", wid);
	w->fb = rte_ring_create_elem(name, sizeof(struct lb_fb),
				     LB_FB_RING_SIZE, socket,
				     RING_F_SP_ENQ | RING_F_SC_DEQ);
	w->bst = rte_zmalloc_socket(
		"lb_bst", sizeof(*w->bst) * LB_CONF_MAX_SVCS,
		RTE_CACHE_LINE_SIZE, socket);
	for (int i = 0; i < 2; i++)
		w->conf_buf[i] = rte_zmalloc_socket(
			"lb_conf", sizeof(struct lb_dpconf),
			RTE_CACHE_LINE_SIZE, socket);
	w->hold_cap = HOLD_CAP;
	w->hold = rte_zmalloc_socket("lb_hold", HOLD_CAP * sizeof(*w->hold),
				     0, socket);
	w->hold_since = rte_zmalloc_socket(
		"lb_hold", HOLD_CAP * sizeof(*w->hold_since), 0, socket);
	w->hold_free = rte_malloc_socket(
		"lb_hold", HOLD_CAP * sizeof(*w->hold_free), 0, socket);
	if (w->neigh == NULL || w->redirect == NULL || w->neigh_in == NULL ||
	    w->fb == NULL || w->bst == NULL || w->conf_buf[0] == NULL ||
	    w->conf_buf[1] == NULL || w->hold == NULL ||
	    w->hold_free == NULL || w->hold_since == NULL) {
		LOG(ERR, "worker %u: out of memory", wid);
		goto fail;
	}
	for (uint32_t i = 0; i < HOLD_CAP; i++)
		w->hold_free[i] = HOLD_CAP - 1 - i;
	w->hold_nfree = HOLD_CAP;

	/* HTTP following: each worker scans with its own scratch. */
	if (dp->hdb != NULL && dp->l7_flows > 0) {
		w->hscr = lb_hdr_scratch_alloc(dp->hdb);
		w->l7 = w->hscr == NULL ?
				NULL :
				lb_l7_pool_create(dp->l7_flows, dp->hdb,
						  w->hscr, NULL, on_l7_obs,
						  on_l7_inflight, w);
		w->rej = rte_zmalloc_socket("lb_l7_rej",
					    sizeof(*w->rej) * dp->l7_flows,
					    RTE_CACHE_LINE_SIZE,
					    rte_lcore_to_socket_id(lcore));
		if (w->rej != NULL)
			w->nb_rej = dp->l7_flows;
		if (w->l7 == NULL || w->rej == NULL) {
			LOG(ERR, "worker %u: no memory to follow %u HTTP "
				 "flows",
			    wid, dp->l7_flows);
			goto fail;
		}
		lb_l7_set_admit(w->l7, on_l7_admit);
	}

	if (dp->admit != NULL) {
		w->admit = lb_admit_lc_create(dp->admit, LB_ADMIT_LOCAL_DEFAULT,
					      &w->st.admit, w->st.admit_svc,
					      LB_CONF_MAX_SVCS);
		if (w->admit == NULL) {
			LOG(ERR, "worker %u: no memory for admission", wid);
			goto fail;
		}
	}

	w->sh.wid = wid;
	w->sh.lcore = lcore;
	w->sh.ft = w->ft;
	w->sh.fb = w->fb;
	w->sh.st = &w->st;
	w->sh.be = w->bst;
	w->sh.snat = w->snat;
	lb_worker_switch(w, c);
	w->st.conf_switches = 0;
	return w;
fail:
	lb_worker_free(w);
	return NULL;
}
