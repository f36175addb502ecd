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
#include "bytes.h"
#include "nat.h"

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

/* ---- 802.1Q ------------------------------------------------------------- */

#define VLAN_HDR_LEN 4
#define VLAN_VID_MASK 0x0fff

/* The VLAN a frame arrived in: 0 untagged (or priority-tagged). */
static inline uint16_t
pkt_vid(const struct lb_pkt *pkt)
{
	return pkt->has_vlan ? (uint16_t)(pkt->vlan_tci & VLAN_VID_MASK) : 0;
}

/*
 * Gives frame @p m the tag of the port it leaves by (@p vid, 0: none),
 * whatever tag it came with: the output side's VLAN is ours to choose,
 * never the sender's. The priority bits start at 0 for the same reason.
 * @return 0, or -ENOSPC without headroom for a tag.
 */
static inline int
vlan_out(struct rte_mbuf *m, uint16_t vid)
{
	uint8_t *fr = frame_of(m);
	bool tagged = rd16(fr + 12) == LB_ETHER_TYPE_VLAN;

	if (likely(!tagged && vid == 0))
		return 0;
	if (tagged && vid != 0) {
		wr16(fr + 14, vid);
		return 0;
	}
	if (tagged) {
		memmove(fr + VLAN_HDR_LEN, fr, 12);
		rte_pktmbuf_adj(m, VLAN_HDR_LEN);
		return 0;
	}
	fr = (uint8_t *)rte_pktmbuf_prepend(m, VLAN_HDR_LEN);
	if (fr == NULL)
		return -ENOSPC;
	memmove(fr, fr + VLAN_HDR_LEN, 12);
	wr16(fr + 12, LB_ETHER_TYPE_VLAN);
	wr16(fr + 14, vid);
	return 0;
}

/* ---- neighbours --------------------------------------------------------- */

static void
send_arp_request(struct lb_worker *w, uint16_t port, uint32_t src,
		 uint32_t target, const uint8_t *dst_mac)
{
	struct lb_dp *dp = w->dp;
	struct lb_nat_link link = { 0 };
	struct rte_mbuf *m;
	int len;

	/* The table may name any port up to LB_CONF_PORT_MAX; only those
	 * set up have a MAC and a TX buffer. */
	if (unlikely(port >= dp->nb_ports)) {
		w->st.drop[LB_DROP_PORT_UNUSED]++;
		return;
	}
	m = rte_pktmbuf_alloc(dp->pool);
	if (m == NULL) {
		w->st.drop[LB_DROP_NOMBUF]++;
		return;
	}
	memcpy(link.mac, dp->port[port].mac.addr_bytes, 6);
	link.vlan_tci = w->conf->port_vlan[port];
	link.has_vlan = link.vlan_tci != 0;
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

	if (lb_dpconf_next_hop(w->conf, dst, &port, &nh, &src) != 0) {
		drop(w, m, LB_DROP_NO_ROUTE);
		return;
	}
	if (unlikely(port >= dp->nb_ports)) {
		drop(w, m, LB_DROP_PORT_UNUSED);
		return;
	}
	if (unlikely(vlan_out(m, w->conf->port_vlan[port]) != 0)) {
		drop(w, m, LB_DROP_NOMBUF);
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

	if (w->hold_nfree == 0) {
		/* No retry and no deferral for this SYN: counted, as the
		 * pool empties only when copies pile up. */
		w->st.syn_hold_full++;
		return LB_HOLD_NONE;
	}
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

/*
 * lb_flow_touch() for the worker. While a flow is in SYN_SENT its l7 slot
 * holds the SYN copy kept for retries; in every other state it holds its
 * L7 entry (or nothing). A flow leaves SYN_SENT by the backend's SYN-ACK,
 * but also by a RST or a FIN from either side: the copy is released on
 * every way out, here, so that no reader ever takes a copy's index for an
 * entry's, and no copy outlives the one state that retries with it. (A
 * flag saying what the slot holds would keep copies nobody can use and
 * leave every reader one test to forget.)
 */
static inline int
flow_touch(struct lb_worker *w, struct lb_flow *f, uint32_t idx,
	   enum lb_flow_dir dir, uint8_t tcp_flags, uint64_t now)
{
	uint8_t old = f->state;
	int st = lb_flow_touch(w->ft, idx, dir, tcp_flags, now);

	if (unlikely(old == LB_FLOW_SYN_SENT) && st != LB_FLOW_SYN_SENT) {
		hold_release(w, f->l7);
		f->l7 = LB_L7_NONE;
	}
	return st;
}


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

/* TCP segment @p pkt as lb_tcp_track() reads it. */
static inline void
tcp_seg(struct lb_tcp_seg *s, const uint8_t *fr, const struct lb_pkt *pkt)
{
	const uint8_t *th = fr + pkt->l4_off;

	s->seq = tcp_word(fr, pkt, 4);
	s->ack = tcp_word(fr, pkt, 8);
	s->len = pkt->payload_len;
	s->win = (uint16_t)(th[14] << 8 | th[15]);
	s->flags = pkt->tcp_flags;
	/* Options run from byte 20 to the payload (the parser checked the
	 * data offset); only SYNs carry the window scale. */
	s->wscale = pkt->tcp_flags & LB_TCP_SYN ?
			    (int8_t)lb_tcp_opt_wscale(th + 20,
						      pkt->payload_off -
							      pkt->l4_off - 20u) :
			    -1;
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
 * The admission state of L7 entry @p l7, or NULL when there is none: the
 * index comes from a flow, and rej[] is sized by the L7 pool, not by the
 * table, so every access is checked.
 */
static inline struct lb_l7_rej *
rej_of(const struct lb_worker *w, uint32_t l7)
{
	return w->rej != NULL && l7 < w->nb_rej ? &w->rej[l7] : NULL;
}

/*
 * Ends the admission state of L7 entry @p l7: segments held for a
 * decision go on to the backend (@p flush: the flow goes on unfollowed)
 * or are dropped (the flow is gone or was reset).
 */
static void
gate_end(struct lb_worker *w, const struct lb_flow *f, uint32_t l7, bool flush,
	 uint64_t now)
{
	struct lb_l7_rej *r = rej_of(w, l7);

	if (r == NULL)
		return;
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
	const struct lb_l7_rej *r;

	if (likely(f->l7 == LB_L7_NONE) || f->state != LB_FLOW_TIME_WAIT)
		return;
	r = rej_of(w, f->l7);
	if (r == NULL || r->state == LB_L7_RJ_OPEN)
		l7_stop(w, f);
}

/* l7_follow(): the flow was reset both ways, drop the segment. */
#define L7_RESET (LB_L7_REPEAT + 1)

static bool l7_gated(const struct lb_dpconf_svc *svc);
static void rej_send(struct lb_worker *w, const struct lb_flow *f,
		     struct rte_mbuf *m, uint32_t l3_off, bool to_client,
		     uint32_t seq, uint32_t ack, uint8_t flags,
		     const void *data, uint16_t len, uint64_t now);
static int l7_decide(struct lb_worker *w, uint32_t svc, unsigned int rank,
		     uint32_t client, uint64_t now);

/*
 * A fresh segment of flow @p f with no payload, the link header copied
 * from @p frame (@p l3 octets), sent as rej_send() does.
 */
static void
rej_send_new(struct lb_worker *w, const struct lb_flow *f, const uint8_t *frame,
	     uint32_t l3, bool to_client, uint32_t seq, uint32_t ack,
	     uint8_t flags, uint64_t now)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(w->dp->pool);

	if (m == NULL) {
		w->st.drop[LB_DROP_NOMBUF]++;
		return;
	}
	if (rte_pktmbuf_append(m, (uint16_t)l3) == NULL) {
		rte_pktmbuf_free(m);
		return;
	}
	rte_memcpy(frame_of(m), frame, l3);
	rej_send(w, f, m, l3, to_client, seq, ack, flags, NULL, 0, now);
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
	    l7_decide(w, f->svc, (unsigned int)o->gov[LB_CONF_GOV_PRIO], client,
		      now) == LB_L7_REJ_MAX) {
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
static bool
l7_unfollowed(struct lb_worker *w, struct lb_flow *f, int dir,
	      const uint8_t *frame, const struct lb_pkt *pkt, uint64_t now)
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
	if (!l7_gated(&w->conf->svc[f->svc]))
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
	l7_stop(w, f);
	return true;
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
		if (unlikely(l7_unfollowed(w, f, dir, frame, pkt, now)))
			return L7_RESET;
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
static bool
l7_gated(const struct lb_dpconf_svc *svc)
{
	return svc->opts.gov[LB_CONF_GOV_ON] || svc->opts.admit.rate != 0;
}

/*
 * One request of rank @p rank from @p client (host order): the governor
 * by rank, then the service's requests/s token buckets (a throttled
 * request takes no token). @return the refusal's enum lb_l7_rej_reason,
 * or LB_L7_REJ_MAX when admitted.
 */
static int
l7_decide(struct lb_worker *w, uint32_t svc, unsigned int rank, uint32_t client,
	  uint64_t now)
{
	const struct lb_conf_svc_opts *o = &w->conf->svc[svc].opts;
	const uint64_t *g = o->gov;

	if (g[LB_CONF_GOV_ON] &&
	    lb_gov_decide(gov_m(w, svc), rank, &w->rng, &w->st.gov[svc]) !=
		    LB_GOV_ADMIT)
		return LB_L7_REJ_GOVERNOR;
	if (o->admit.rate != 0 && w->admit != NULL &&
	    lb_admit_rejected(lb_admit_check(w->admit, (uint16_t)svc, &o->admit,
					     client, (uint8_t)rank, now)))
		return LB_L7_REJ_RATE;
	return LB_L7_REJ_MAX;
}

/*
 * The pool's admission callback: l7_decide() with the request's rank.
 * X-Priority counts only from the service's prio-trust prefixes: rank 0
 * is never throttled, so a client choosing its own rank would choose to
 * be exempt.
 */
static bool
on_l7_admit(void *owner, uint32_t tag, const struct lb_l7_req *rq)
{
	struct lb_worker *w = owner;
	uint32_t svc = tag >> 16;
	const struct lb_conf_svc_opts *o = &w->conf->svc[svc].opts;
	bool own =
		rq->has_prio && lb_admit_trusted(&o->prio_trust, w->adm_client);
	unsigned int rank = own ? RTE_MIN(rq->prio, LB_GOV_RANK_MAX)
				: (unsigned int)o->gov[LB_CONF_GOV_PRIO];
	int why = l7_decide(w, svc, rank, w->adm_client, w->adm_now);

	if (why == LB_L7_REJ_MAX)
		return false;
	if (!rq->can_refuse) {
		w->st.l7_unrefusable++;
		/* It shares its segment with an admitted request and cannot
		 * be refused alone: admitted, one token would buy as many
		 * requests as fit in a segment. Unless the service admits
		 * flows whole, the flow is reset (l7_unfollowed()). */
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
static void
seg_send(struct lb_worker *w, const struct lb_flow *f, struct rte_mbuf *m,
	 uint32_t l3_off, bool to_client, uint32_t seq, uint32_t ack,
	 uint8_t flags, uint16_t win, const void *data, uint16_t len,
	 uint64_t now)
{
	const struct lb_flow_key *k =
		&f->key[to_client ? LB_FLOW_DIR_ORIG : LB_FLOW_DIR_REPLY];
	struct lb_l7_rej_seg sg = {
		.src = k->dst, .dst = k->src, .sport = k->dport,
		.dport = k->sport, .seq = seq, .ack = ack, .flags = flags,
		.win = win, .data = data, .len = len,
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

/* A segment of a refused flow: the backend, reset, gets no window. */
static void
rej_send(struct lb_worker *w, const struct lb_flow *f, struct rte_mbuf *m,
	 uint32_t l3_off, bool to_client, uint32_t seq, uint32_t ack,
	 uint8_t flags, const void *data, uint16_t len, uint64_t now)
{
	seg_send(w, f, m, l3_off, to_client, seq, ack, flags,
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
	n = lb_l7_reject_http(ans, sizeof(ans), (uint16_t)g[LB_CONF_GOV_STATUS],
			      (uint32_t)g[LB_CONF_GOV_RETRY]);
	lb_l7_rej_refuse(r, (enum lb_l7_rej_reason)r->reason,
			 (uint16_t)g[LB_CONF_GOV_STATUS],
			 (uint32_t)g[LB_CONF_GOV_RETRY], srv_nxt, cli_nxt, fin,
			 (uint16_t)(n > 0 ? n : 0));
	w->st.l7_refused[r->reason]++;
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
static void
l7_refuse_late(struct lb_worker *w, struct lb_flow *f, uint32_t idx,
	       uint64_t now)
{
	struct lb_l7_rej *r = rej_of(w, f->l7);
	struct rte_mbuf *m;
	struct lb_pkt pkt;

	if (r == NULL || r->nheld == 0)
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
rej_client(struct lb_worker *w, struct lb_flow *f, struct lb_l7_rej *r,
	   struct rte_mbuf *m, const struct lb_pkt *pkt, uint64_t now)
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
static bool
l7_admission(struct lb_worker *w, struct lb_flow *f, uint32_t idx,
	     struct rte_mbuf *m, const struct lb_pkt *pkt, int v, uint64_t now)
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
	route_out(w, m, peer, now);
	return 0;
}

/* Answers the client of a SYN (held or live) with a RST, consuming @p m. */
static void
rst_client(struct lb_worker *w, struct rte_mbuf *m, uint64_t now)
{
	struct lb_pkt pkt;

	if (lb_pkt_parse(frame_of(m), rte_pktmbuf_data_len(m), &pkt) !=
	    LB_PKT_IPV4) {
		rte_pktmbuf_free(m);
		return;
	}
	if (rst_reply(w, m, &pkt, now) == 0)
		w->st.rst_sent++;
}

/*
 * One token of @p b at @p rate per second, holding at most one second's
 * worth; false when it is empty or @p rate is 0. Credit is kept in
 * token-nanoseconds, so any rate up to 10^6 fits 64 bits.
 */
static bool
rst_token(struct lb_rst_tb *b, uint64_t rate, uint64_t now)
{
	const uint64_t one = 1000000000ull;
	uint64_t dt = now - b->last;

	if (rate == 0)
		return false;
	b->last = now;
	b->credit += (dt < one ? dt : one) * rate;
	if (b->credit > rate * one)
		b->credit = rate * one;
	if (b->credit < one)
		return false;
	b->credit -= one;
	return true;
}

/*
 * A segment for a VIP or SNAT address that belongs to no flow: dropped,
 * and a TCP one that is not a RST is answered with a RST (RFC 793), at
 * most @p rate per second from bucket @p b, so that an end the dataplane
 * forgot (expiry, restart) learns it at its next segment instead of
 * retransmitting into silence. Consumes @p m.
 */
static void
no_flow(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt *pkt, uint32_t b,
	uint64_t rate, uint64_t now)
{
	w->st.drop[LB_DROP_NO_FLOW]++;
	/* Never a RST for a RST (RFC 793), nor for a SYN: only one to a
	 * SNAT address gets here, and its sender is no client of ours. */
	if (pkt->proto != LB_IPPROTO_TCP || (pkt->tcp_flags & LB_TCP_RST) ||
	    (pkt->tcp_flags & (LB_TCP_SYN | LB_TCP_ACK)) == LB_TCP_SYN ||
	    rate == 0) {
		rte_pktmbuf_free(m);
		return;
	}
	if (!rst_token(&w->rst_tb[b], rate, now)) {
		w->st.rst_limited++;
		rte_pktmbuf_free(m);
		return;
	}
	if (rst_reply(w, m, pkt, now) == 0)
		w->st.rst_no_flow++;
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
	if (pkt->proto == LB_IPPROTO_TCP) {
		struct lb_tcp_seg s;

		tcp_seg(&s, frame_of(m), pkt);
		lb_tcp_track_init(&w->trk[idx], &s);
	}
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

/*
 * Key of a client's SYN in the deferred queue, under which its
 * retransmissions join it. Keyed with this worker's secret flow table
 * seed, not the schedulers' hash seed, which hosts may share: a client
 * who could compute keys could make its SYN take another's place.
 */
static inline uint64_t
deferq_key(const struct lb_worker *w, const struct lb_flow_key *orig)
{
	return lb_flow_hash(w->ft->seed, orig);
}

static void
defer_or_rst(struct lb_worker *w, struct lb_trial *t, uint64_t now)
{
	struct lb_deferq *q = w->deferq[t->svc];
	uint64_t key = deferq_key(w, &t->orig), old;
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
		uint64_t old, qkey = deferq_key(w, orig);

		if (lb_deferq_lookup(q, qkey, &qe) == 0) {
			t.hold = hold_put(w, m);
			rte_pktmbuf_free(m);
			if (t.hold == LB_HOLD_NONE)
				return;
			if (lb_deferq_push(q, qkey, t.hold, now, &old) ==
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

	if (unlikely(svc->opts.http && w->l7 == NULL && l7_gated(svc))) {
		/* No follower pool (--l7-flows 0): no request of the flow
		 * can be admitted, as when the pool is empty. */
		if (a->unfollow == LB_ADMIT_UNF_FLOW &&
		    l7_decide(w, (uint32_t)svc_idx,
			      (unsigned int)svc->opts.gov[LB_CONF_GOV_PRIO],
			      client, now) == LB_L7_REJ_MAX) {
			w->st.l7_unfollowed[LB_L7_UNF_ADMITTED]++;
			return false;
		}
		w->st.l7_unfollowed[LB_L7_UNF_RESET]++;
		rst_client(w, m, now);
		return true;
	}
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

/*
 * The client's ACK completes the handshake (syn_recv to established):
 * only now does an http flow take an entry of the L7 pool. Taken at the
 * backend's SYN-ACK, entries were held for syn_recv's timeout by
 * half-open handshakes, which spoofed SYNs open at will. The ACK's
 * sequence number is the client's ISN + 1 and its acknowledgement the
 * backend's ISN + 1: where each direction's bytes start. It runs before
 * the ACK is followed, which may carry the first bytes of a request.
 */
static inline bool
l7_open(struct lb_worker *w, struct lb_flow *f, const uint8_t *fr,
	const struct lb_pkt *pkt)
{
	const struct lb_dpconf_svc *svc = &w->conf->svc[f->svc];

	if (w->l7 == NULL || !svc->opts.http || f->l7 != LB_L7_NONE)
		return true;
	f->l7 = lb_l7_open(w->l7, tcp_word(fr, pkt, 4), tcp_word(fr, pkt, 8),
			   (uint32_t)f->svc << 16 | f->be, f->svc);
	if (f->l7 == LB_L7_NONE)
		return false;
	lb_l7_gate(w->l7, f->l7, l7_gated(svc));
	return true;
}

/*
 * A packet that arrived with TTL 0 or 1 is never forwarded (fwd() drops
 * it): dropped before it can change anything, or a RST nobody receives
 * would close the flow, a SYN take a SNAT port and a copy, and data the
 * backend never gets move the follower past bytes it will see again.
 */
static inline bool
ttl_expires(struct lb_worker *w, struct rte_mbuf *m, const struct lb_pkt *pkt)
{
	if (likely(pkt->ttl > 1))
		return false;
	drop(w, m, LB_DROP_TTL);
	return true;
}

/*
 * Judges TCP segment @p m of flow @p f (entry @p idx), from side @p dir,
 * against the flow's sequence numbers before it can change anything
 * (dataplane/flow/tcp_track.h): a blind sender's RST or FIN must not close a
 * flow its peers keep open.
 * @return the TCP flags the flow's state may move on (0: none), or -1
 *   when @p m was taken: dropped out of window, or turned into the
 *   challenge ACK of a RST in window but not exact (RFC 5961 3.2).
 */
static inline int
tcp_check(struct lb_worker *w, const struct lb_flow *f, uint32_t idx,
	  enum lb_flow_dir dir, struct rte_mbuf *m, const struct lb_pkt *pkt,
	  uint64_t now)
{
	struct lb_tcp_track *t = &w->trk[idx];
	struct lb_tcp_seg s;
	uint32_t seq, ack;
	uint16_t win;

	if (pkt->proto != LB_IPPROTO_TCP)
		return pkt->tcp_flags;
	tcp_seg(&s, frame_of(m), pkt);
	switch (lb_tcp_track(t, dir, f->state, &s)) {
	case LB_TCP_TRK_PASS:
		return pkt->tcp_flags;
	case LB_TCP_TRK_KEEP:
		return 0;
	case LB_TCP_TRK_CHALLENGE:
		/* The RST's sender gets an ACK in its peer's name: a peer
		 * whose connection is gone answers with the exact RST. */
		lb_tcp_track_challenge(t, dir, &seq, &ack, &win);
		w->st.challenge_acks++;
		seg_send(w, f, m, pkt->l3_off, dir == LB_FLOW_DIR_ORIG, seq,
			 ack, LB_TCP_ACK, win, NULL, 0, now);
		return -1;
	default:
		drop(w, m, LB_DROP_TCP_WINDOW);
		return -1;
	}
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

/*
 * Whether the TCP or UDP checksum of @p m verifies: the port's word when
 * it checked (RTE_ETH_RX_OFFLOAD_*_CKSUM, lb_port_setup()), else our own.
 */
static inline bool
l4_csum_ok(struct rte_mbuf *m, const struct lb_pkt *pkt)
{
	switch (m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) {
	case RTE_MBUF_F_RX_L4_CKSUM_GOOD:
	case RTE_MBUF_F_RX_L4_CKSUM_NONE: /* data verified, field not */
		return true;
	case RTE_MBUF_F_RX_L4_CKSUM_BAD:
		return false;
	default:
		return lb_pkt_l4_csum_ok(frame_of(m), pkt);
	}
}

/*
 * Whether the first packet of a flow may create it; counts and frees it
 * otherwise. A packet from one of our own addresses (a land attack: the
 * backend's answer would go from the VIP to the VIP) or with a checksum
 * the backend will refuse would hold a flow, a SNAT port and, for a SYN,
 * every backend's trial and a deferred queue entry, for nothing. Only
 * here, before any state: an established flow's packets keep the
 * incremental path and its cost.
 */
static bool
first_pkt_ok(struct lb_worker *w, struct rte_mbuf *m, const struct lb_pkt *pkt)
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

/*
 * No follower entry for flow @p f (pool empty) at the client's ACK @p m
 * that completes the handshake: on a gated service its requests would
 * escape admission, so the service's fallback applies as to a flow no
 * longer followable.
 * @return true when the flow was reset and @p m dropped.
 */
static bool
l7_no_entry(struct lb_worker *w, struct lb_flow *f, uint32_t idx,
	    struct rte_mbuf *m, const struct lb_pkt *pkt, uint64_t now)
{
	const uint8_t *fr = frame_of(m);
	/* The ACK's sequence number is the next octet the backend expects,
	 * its acknowledgement the next the client does. */
	uint32_t cli_nxt = tcp_word(fr, pkt, 4), srv_nxt = tcp_word(fr, pkt, 8);

	if (!l7_gated(&w->conf->svc[f->svc]))
		return false;
	if (!l7_fallback(w, f, fr, pkt->l3_off, cli_nxt, cli_nxt, srv_nxt, now))
		return false;
	lb_flow_touch(w->ft, idx, LB_FLOW_DIR_ORIG, LB_TCP_RST, now);
	rte_pktmbuf_free(m);
	return true;
}

static void
from_client(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt *pkt,
	    int svc_idx, uint64_t hash, uint64_t now)
{
	struct lb_flow_key k;
	enum lb_flow_dir dir;
	struct lb_l7_rej *r;
	struct lb_flow *f;
	uint32_t idx;
	bool reopen;
	int v, fl;

	if (unlikely(ttl_expires(w, m, pkt)))
		return;
	lb_flow_key_set(&k, pkt->src, pkt->dst, pkt->sport, pkt->dport,
			pkt->proto);
	idx = lb_flow_lookup_hash(w->ft, &k, hash, &dir);
	if (idx == LB_FLOW_NONE) {
		/* Only a SYN (TCP) or any datagram (UDP) opens a flow. */
		if (pkt->proto == LB_IPPROTO_TCP &&
		    (pkt->tcp_flags & (LB_TCP_SYN | LB_TCP_ACK)) !=
			    LB_TCP_SYN) {
			no_flow(w, m, pkt, (uint32_t)svc_idx,
				w->conf->svc[svc_idx]
					.opts.flow[LB_CONF_FLOW_RST_RATE],
				now);
			return;
		}
		if (!first_pkt_ok(w, m, pkt))
			return;
		if (admit_reject(w, m, pkt, svc_idx, now))
			return;
		flow_new(w, m, pkt, svc_idx, &k, now);
		return;
	}
	f = lb_flow_get(w->ft, idx);
	fl = tcp_check(w, f, idx, LB_FLOW_DIR_ORIG, m, pkt, now);
	if (fl < 0)
		return;
	reopen = reopens(f, pkt);
	/* A SYN on a closed tuple starts a connection again (a new trial,
	 * a SYN copy): checked as a first packet. */
	if (unlikely(reopen) && !first_pkt_ok(w, m, pkt))
		return;
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
			flow_touch(w, f, idx, LB_FLOW_DIR_ORIG, (uint8_t)fl,
				   now);
		fwd(w, m, pkt, f, LB_FLOW_DIR_ORIG, now);
		return;
	}
	if (unlikely(f->state == LB_FLOW_SYN_RECV) &&
	    pkt->proto == LB_IPPROTO_TCP &&
	    (fl & (LB_TCP_SYN | LB_TCP_RST | LB_TCP_FIN | LB_TCP_ACK)) ==
		    LB_TCP_ACK &&
	    !l7_open(w, f, frame_of(m), pkt) &&
	    l7_no_entry(w, f, idx, m, pkt, now))
		/* No follower entry for a gated flow: its fallback. */
		return;
	if (unlikely(reopen) && f->l7 != LB_L7_NONE && w->l7 != NULL) {
		/* A new connection on the tuple of a closed one (the table
		 * sends it back to SYN_SENT, where l7 means a SYN copy):
		 * the old exchange ends here. Only then: a SYN the client
		 * repeats because the SYN-ACK was lost leaves the flow in
		 * its state, and its following must go on. */
		l7_stop(w, f);
	}
	r = unlikely(f->l7 != LB_L7_NONE) && f->state != LB_FLOW_SYN_SENT ?
		    rej_of(w, f->l7) :
		    NULL;
	if (unlikely(r != NULL && r->state == LB_L7_RJ_DONE)) {
		rej_client(w, f, r, m, pkt, now);
		return;
	}
	v = l7_follow(w, f, 0, frame_of(m), pkt, now);
	flow_touch(w, f, idx, LB_FLOW_DIR_ORIG, (uint8_t)fl, now);
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
	int v, fl;

	if (unlikely(ttl_expires(w, m, pkt)))
		return;
	lb_flow_key_set(&k, pkt->src, pkt->dst, pkt->sport, pkt->dport,
			pkt->proto);
	idx = lb_flow_lookup_hash(w->ft, &k, hash, &dir);
	if (idx == LB_FLOW_NONE) {
		no_flow(w, m, pkt, LB_CONF_MAX_SVCS, w->rst_snat_rate, now);
		return;
	}
	if (dir != LB_FLOW_DIR_REPLY) {
		drop(w, m, LB_DROP_NO_FLOW);
		return;
	}
	f = lb_flow_get(w->ft, idx);
	fl = tcp_check(w, f, idx, LB_FLOW_DIR_REPLY, m, pkt, now);
	if (fl < 0)
		return;
	if (f->state == LB_FLOW_SYN_SENT && pkt->proto == LB_IPPROTO_TCP) {
		if (fl & LB_TCP_RST) {
			/* The backend refused the connection: next trial. */
			trial_snapshot(f, &t);
			flow_forget(w, f, 0, 0);
			lb_flow_delete(w->ft, idx);
			rte_pktmbuf_free(m);
			trial_failed(w, &t, now);
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
				if (!svc->opts.http)
					w->ops[f->svc]->result(
						w->sched[f->svc], f->be, true);
				trial_feedback(w, f->svc, f->be, true);
			}
		}
	} else if (unlikely(f->l7 != LB_L7_NONE &&
			    rej_of(w, f->l7) != NULL &&
			    w->rej[f->l7].state == LB_L7_RJ_DONE)) {
		/* Reset by us: what the backend still says goes nowhere. */
		w->st.l7_rej_absorbed++;
		rte_pktmbuf_free(m);
		return;
	} else if (unlikely((v = l7_follow(w, f, 1, frame_of(m), pkt, now)) ==
			    L7_RESET)) {
		lb_flow_touch(w->ft, idx, LB_FLOW_DIR_REPLY, LB_TCP_RST, now);
		rte_pktmbuf_free(m);
		return;
	} else if (unlikely(v == LB_L7_REJECT)) {
		lb_flow_touch(w->ft, idx, LB_FLOW_DIR_REPLY, (uint8_t)fl, now);
		fwd(w, m, pkt, f, LB_FLOW_DIR_REPLY, now);
		l7_refuse_late(w, f, idx, now);
		return;
	}
	flow_touch(w, f, idx, LB_FLOW_DIR_REPLY, (uint8_t)fl, now);
	fwd(w, m, pkt, f, LB_FLOW_DIR_REPLY, now);
	l7_closed(w, f);
}

/*
 * An ICMP error about a client-side flow (quoting VIP -> client) that is
 * not in this worker's table. Which worker owns it depends on where the
 * client's SYN arrived (the NIC's RSS on the client's tuple with its own
 * key and table, an XDP program's choice, queue 0 without RSS), which the
 * error's own address pair (router, VIP) does not tell. So the workers
 * are asked in turn, each in its own table: the error goes on to the
 * next worker, nb_workers - 1 times at most; the count rides in the
 * mbuf's user tag while it is in a redirect ring. Only errors quoting a
 * service's VIP and port go round.
 * @return true if @p m was passed on (or dropped as redirect_full).
 */
static bool
icmp_pass_on(struct lb_worker *w, struct rte_mbuf *m,
	     const struct lb_nat_icmp *ic)
{
	struct lb_dp *dp = w->dp;
	uint64_t hops = w->in_redirect ? (uint64_t)m->hash.usr + 1 : 1;
	struct lb_worker *next;

	if (hops >= dp->nb_workers ||
	    lb_dpconf_svc_find(w->conf, ic->proto, ic->inner.src,
			       ic->inner.sport) < 0)
		return false;
	next = dp->w[(w->wid + 1u) % dp->nb_workers];
	m->hash.usr = (uint32_t)hops;
	if (rte_ring_mp_enqueue(next->redirect, m) != 0)
		drop(w, m, LB_DROP_REDIRECT);
	else
		w->st.redirect_out++;
	return true;
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
		if (sn < 0 && icmp_pass_on(w, m, &ic))
			return;
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
	if (ic.type == LB_ICMP_DEST_UNREACH && ic.code == LB_ICMP_FRAG_NEEDED &&
	    ic.mtu < LB_NAT_MTU_FLOOR &&
	    lb_nat_icmp_set_mtu(fr, len, pkt, LB_NAT_MTU_FLOOR) == 0)
		w->st.icmp_mtu_clamped++;
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
	/* Nobody else may speak for our addresses: learning such a sender
	 * would hand our own traffic (and the kernel's, through the
	 * exception path) to whoever claims it. */
	if (unlikely(arp.spa != 0 && lb_dpconf_is_own(w->conf, arp.spa))) {
		drop(w, m, LB_DROP_ARP_SPOOF);
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

			/* The reply would go to ourselves. */
			if (unlikely(lb_dpconf_is_own(c, peer))) {
				drop(w, m, LB_DROP_SRC_OURS);
				return;
			}
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
	if (sn >= 0 && unlikely(c->snat[sn].port != m->port)) {
		/* Replies come back where the address lives: anything else
		 * is a spoof from a network that should not reach it. */
		drop(w, m, LB_DROP_SNAT_PORT);
		return;
	}
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
 * Bytes after the IP datagram (Ethernet padding, or a trailer a sender
 * hid there) are not part of it: they are not forwarded. Padding is
 * normal, so this is not counted.
 */
static inline void
trim_trailer(struct rte_mbuf *m, const struct lb_pkt *pkt)
{
	uint32_t end = (uint32_t)pkt->l3_off + pkt->ip_len;

	if (unlikely(rte_pktmbuf_pkt_len(m) > end))
		rte_pktmbuf_trim(m, (uint16_t)(rte_pktmbuf_pkt_len(m) - end));
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
		/* A TCP segment's sequence check reads its record too. */
		if (fi[i] != LB_FLOW_NONE && pkt[i].proto == LB_IPPROTO_TCP)
			rte_prefetch0(&w->trk[fi[i]]);
	}
	if (n > 0)
		l7_prefetch(w, m[0], &pkt[0], fi[0]);
	for (unsigned int i = 0; i < n; i++) {
		if (i + 1 < n)
			l7_prefetch(w, m[i + 1], &pkt[i + 1], fi[i + 1]);
		/* A port takes its own VLAN only: the input side's tag
		 * must not pick where a frame goes. */
		if (v[i] < LB_PKT_DROP_FIRST &&
		    unlikely(pkt_vid(&pkt[i]) !=
			     w->conf->port_vlan[m[i]->port])) {
			drop(w, m[i], LB_DROP_VLAN);
			continue;
		}
		switch (v[i]) {
		case LB_PKT_IPV4:
			trim_trailer(m[i], &pkt[i]);
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

/*
 * An idle ESTABLISHED flow is forgotten: both ends may still hold the
 * connection and would send into silence. The flow keeps no sequence
 * numbers (it is one cache line), so each end gets a bare ACK from where
 * it saw its peer, at sequence numbers outside its window: an end that
 * still holds the connection answers with an ACK that carries exactly the
 * sequence number it expects (RFC 793, RFC 5961 section 5), that answer
 * now has no flow, and no_flow() resets it with that number; an end whose
 * socket is gone answers with a RST, which is never answered. One token of
 * the service's RST bucket per flow.
 */
static void
idle_probe(struct lb_worker *w, const struct lb_flow *f)
{
	const struct lb_dpconf_svc *svc;

	if (f->state != LB_FLOW_ESTABLISHED || f->svc >= w->conf->nb_svc)
		return;
	svc = &w->conf->svc[f->svc];
	if (!svc->opts.flow[LB_CONF_FLOW_IDLE_RST] ||
	    svc->opts.flow[LB_CONF_FLOW_RST_RATE] == 0)
		return;
	if (!rst_token(&w->rst_tb[f->svc],
		       svc->opts.flow[LB_CONF_FLOW_RST_RATE], w->now_ns)) {
		w->st.rst_limited++;
		return;
	}
	for (unsigned int d = 0; d < 2; d++) {
		const struct lb_flow_key *k = &f->key[d];
		struct rte_mbuf *m = rte_pktmbuf_alloc(w->dp->pool);
		uint64_t r = lb_xoshiro_next(&w->xo);
		int len;

		if (m == NULL) {
			w->st.drop[LB_DROP_NOMBUF]++;
			return;
		}
		len = lb_nat_tcp_build(frame_of(m), rte_pktmbuf_tailroom(m),
				       k->dst, k->src, k->dport, k->sport,
				       (uint32_t)r, (uint32_t)(r >> 32),
				       LB_TCP_ACK);
		if (len < 0 || rte_pktmbuf_append(m, (uint16_t)len) == NULL) {
			rte_pktmbuf_free(m);
			return;
		}
		w->st.idle_probes++;
		route_out(w, m, k->src, w->now_ns);
	}
}

static void
on_expire(uint32_t idx, const struct lb_flow *f, void *arg)
{
	struct lb_worker *w = arg;

	(void)idx;
	idle_probe(w, f);
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

/*
 * Work units of one build slice (maglev: entries cleared or probed). A
 * Maglev table of 65537 entries and 16 backends is about 470000 units,
 * 3.6 ms of CPU here: slices of 4096 take 15-80 us, far from what fills a
 * 1024-entry rx ring (about 100 us at 10 Mpps), and ten such tables are
 * built within about 1300 polls.
 */
#define SCHED_SLICE 4096u

_Static_assert(LB_CONF_MAX_SVCS <= 64, "sched_todo has one bit per slot");

/* One slice of the builds table switches left, lowest slot first. */
static void
sched_build_slice(struct lb_worker *w, uint32_t budget)
{
	uint32_t s = (uint32_t)__builtin_ctzll(w->sched_todo);

	if (w->ops[s] == NULL || w->ops[s]->build(w->sched[s], budget) == 0)
		w->sched_todo &= ~(1ull << s);
}

/* The longest a poll spent on tables and builds: @p tsc this time. */
static void
switch_time(struct lb_worker *w, uint64_t tsc)
{
	uint64_t ns = (uint64_t)((double)tsc * w->dp->ns_per_tsc);

	if (ns > w->st.switch_max_ns)
		w->st.switch_max_ns = ns;
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
	uint64_t sw_tsc = 0;

	/* One clock read per poll: records and ages of the poll share it. */
	w->now_ns = now;

	if (unlikely(c != w->conf_pub)) {
		sw_tsc = rte_rdtsc();
		lb_worker_switch(w, c);
		sw_tsc = rte_rdtsc() - sw_tsc;
	}
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
		w->in_redirect = true;
		handle_burst(w, pkts, n, now);
		w->in_redirect = false;
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
	/* Schedulers a switch left to build: a slice per poll, after the
	 * bursts, so forwarding goes on while they are built. */
	if (unlikely(w->sched_todo != 0)) {
		uint64_t t0 = rte_rdtsc();

		sched_build_slice(w, SCHED_SLICE);
		sw_tsc += rte_rdtsc() - t0;
	}
	if (unlikely(sw_tsc != 0))
		switch_time(w, sw_tsc);
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
		/* Pending builds keep it awake, to be done soon. */
		if (lb_worker_poll(w) != 0 || w->sched_todo != 0) {
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

/* Slot @p b of two tables holds the same backend. */
static bool
same_be(const struct lb_dpconf_be *a, const struct lb_dpconf_be *b)
{
	return a->state != LB_BE_EMPTY && a->ip == b->ip && a->port == b->port;
}

/*
 * Whether backend @p n, the same as @p o of the previous table, came back
 * up by its health check since: what was learnt of its errors was about
 * an instance that failed, and would keep the new one starved. up_gen
 * tells even a worker that never took up the table marking it down.
 */
static bool
be_recovered(const struct lb_dpconf_be *o, const struct lb_dpconf_be *n)
{
	return o->up_gen != n->up_gen ||
	       (o->health == LB_BE_HEALTH_DOWN && n->health == LB_BE_HEALTH_UP);
}

/*
 * Whether service @p b needs the scheduler state built for @p a: the same
 * scheduler and guards, and the same backends, weights, eligibility and
 * health. A Maglev table takes milliseconds to build: rebuilding every
 * scheduler at every table change would stall a worker with ten of them
 * for tens of milliseconds, and lose what adaptive states learnt.
 */
static bool
same_sched(const struct lb_dpconf_svc *a, const struct lb_dpconf_svc *b)
{
	if (a->state != b->state || a->nb_be != b->nb_be ||
	    strcmp(a->opts.sched, b->opts.sched) != 0 ||
	    a->opts.err_memory != b->opts.err_memory ||
	    a->opts.min_volume != b->opts.min_volume ||
	    a->opts.max_eject != b->opts.max_eject ||
	    a->opts.panic != b->opts.panic)
		return false;
	for (uint32_t i = 0; i < a->nb_be; i++) {
		const struct lb_dpconf_be *x = &a->be[i], *y = &b->be[i];

		if (x->ip != y->ip || x->port != y->port ||
		    x->weight != y->weight || x->health != y->health ||
		    x->up_gen != y->up_gen ||
		    lb_dpconf_be_eligible(a, i) != lb_dpconf_be_eligible(b, i))
			return false;
	}
	return true;
}

/*
 * Scheduler state for service slot @p s of table @p c. A service the
 * scheduler sees unchanged keeps its state. Otherwise backends that keep
 * their slot keep the error counts this worker learnt about them, unless
 * their health check brought them back up. A scheduler with a costly
 * build (ops->build) is built in slices between bursts, answering from
 * the lookup of the state it replaces meanwhile.
 */
static void
svc_sched_rebuild(struct lb_worker *w, const struct lb_dpconf *c, uint32_t s,
		  const struct lb_dpconf_svc *old)
{
	const struct lb_dpconf_svc *v = &c->svc[s];
	const struct lb_sched_ops *ops = NULL;
	struct lb_sched_be be[LB_CONF_MAX_BES];
	void *st = NULL;

	if (old != NULL && w->sched[s] != NULL && same_sched(old, v))
		return;
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
			if (same_be(&old->be[b], &v->be[b]) &&
			    !be_recovered(&old->be[b], &v->be[b]))
				ops->set_errors(st, b,
						w->ops[s]->errors(w->sched[s],
								  b));
		if (ops->inherit != NULL)
			ops->inherit(st, w->sched[s]);
	}
	if (w->sched[s] != NULL)
		w->ops[s]->destroy(w->sched[s]);
	w->sched[s] = st;
	w->ops[s] = st != NULL ? ops : NULL;
	/* What lb-control shows is what the new state weighs with. */
	for (uint32_t b = 0; b < v->nb_be; b++)
		w->bst[s][b].sched_errors = st != NULL ? ops->errors(st, b) : 0;
	if (st != NULL && ops->build != NULL)
		w->sched_todo |= 1ull << s;
	else
		w->sched_todo &= ~(1ull << s);
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

_Static_assert(LB_CONF_MAX_SVCS <= LB_FLOW_MAX_SVCS,
	       "every service slot has a timeout class");

/* The flow table's timeouts of a service: its options, the table's own
 * for any the options leave at 0 (a table not built by lb-control). */
static void
svc_timeouts(const struct lb_worker *w, const struct lb_conf_svc_opts *o,
	     struct lb_flow_timeouts *to)
{
	static const uint8_t state[LB_CONF_FLOW_NB] = {
		[LB_CONF_FLOW_SYN_RECV] = LB_FLOW_SYN_RECV,
		[LB_CONF_FLOW_ESTABLISHED] = LB_FLOW_ESTABLISHED,
		[LB_CONF_FLOW_CLOSING] = LB_FLOW_CLOSING,
		[LB_CONF_FLOW_TIME_WAIT] = LB_FLOW_TIME_WAIT,
		[LB_CONF_FLOW_CLOSED] = LB_FLOW_CLOSED,
		[LB_CONF_FLOW_UDP] = LB_FLOW_UDP,
		[LB_CONF_FLOW_RST_RATE] = LB_FLOW_NB_STATES,
		[LB_CONF_FLOW_IDLE_RST] = LB_FLOW_NB_STATES,
	};

	for (unsigned int s = 0; s < LB_FLOW_NB_STATES; s++)
		to->ns[s] = lb_flow_timeout_ns(w->ft, (enum lb_flow_state)s);
	if (o->syn_timeout_ns != 0)
		to->ns[LB_FLOW_SYN_SENT] = o->syn_timeout_ns;
	for (unsigned int i = 0; i < LB_CONF_FLOW_NB; i++)
		if (state[i] < LB_FLOW_NB_STATES && o->flow[i] != 0)
			to->ns[state[i]] = o->flow[i];
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
	struct lb_flow_timeouts to[LB_CONF_MAX_SVCS];
	uint64_t snat_rate = 0;
	int shared;

	/* The worker runs on a copy of its own, taken now, while it is
	 * online: a published table may be freed once every worker has been
	 * quiescent, which includes sleeping workers, so nothing may point
	 * into it across polls. The copy of the previous table stays for
	 * comparison. The new table is in place before anything that may
	 * send (a deferred queue's RSTs route through it). */
	memcpy(c, pub, sizeof(*c));
	w->conf_pub = pub;
	w->conf = c;
	memset(to, 0, sizeof(to));
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
			w->sched_todo &= ~(1ull << s);
			if (w->deferq[s] != NULL) {
				lb_deferq_flush(w->deferq[s], on_deferq, w);
				lb_deferq_free(w->deferq[s]);
				w->deferq[s] = NULL;
			}
			continue;
		}
		svc_sched_rebuild(w, c, s, old);
		svc_deferq_rebuild(w, c, s, old);
		if (v->state != LB_SVC_EMPTY)
			svc_timeouts(w, &v->opts, &to[s]);
		if (v->state == LB_SVC_ACTIVE &&
		    v->opts.flow[LB_CONF_FLOW_RST_RATE] > snat_rate)
			snat_rate = v->opts.flow[LB_CONF_FLOW_RST_RATE];
	}
	/* A flow still in SYN_SENT after its service's SYN timeout is a
	 * failed trial (see on_expire). */
	shared = lb_flow_svc_timeouts(w->ft, to, c->nb_svc);
	if (shared < 0)
		LOG(ERR, "worker %u: service timeouts: %s", w->wid,
		    strerror(-shared));
	else if (shared > 0)
		LOG(WARNING,
		    "worker %u: %d services share the timeouts of "
		    "others: more distinct sets than %u",
		    w->wid, shared, LB_FLOW_CLASSES - 1);
	w->rst_snat_rate = snat_rate;
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
	rte_free(w->trk);
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
	w->trk = rte_zmalloc_socket("lb_tcp_track",
				    (size_t)dp->flows * sizeof(*w->trk),
				    RTE_CACHE_LINE_SIZE, socket);
	if (w->trk == NULL) {
		LOG(ERR, "worker %u: no memory for the TCP state of %u flows",
		    wid, dp->flows);
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
	/* Not yet in the packet loop: the first schedulers are complete
	 * before the first packet. */
	while (w->sched_todo != 0)
		sched_build_slice(w, UINT32_MAX);
	w->st.conf_switches = 0;
	return w;
fail:
	lb_worker_free(w);
	return NULL;
}
