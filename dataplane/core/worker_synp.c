/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The SYN proxy of a service (docs/dataplane.md, "SYN proxy"). The worker
 * answers a client's SYN itself, with a SYN-ACK whose sequence number is a
 * cookie (syncookie.h): nothing is kept. Only the client's ACK that proves
 * the cookie creates the flow; the backend then gets a SYN in the
 * client's name, made from that ACK, and the SYN copy it leaves drives the
 * usual trials and deferred queue. The ACK (and one data segment after it)
 * waits with that copy until the backend's SYN-ACK, which goes no further:
 * the worker keeps its numbers (tcp_splice.h) and replays the client's ACK
 * through the client path, which completes the backend's handshake and
 * from then on translates every segment.
 *
 * Numbers are kept as the client knows them: a backend segment is
 * translated before its sequence numbers are checked or followed, a
 * client segment just before it leaves.
 */
#include "worker_priv.h"

#include "syncookie.h"
#include "tcp_opts.h"

#define NS_PER_MS 1000000ull
/* Rotate the cookie secret when a cookie made with the one before can no
 * longer be valid. */
#define REKEY_NS                                                               \
	((uint64_t)LB_SYNCOOKIE_PERIOD * LB_SYNCOOKIE_MAX_AGE * NS_PER_S)
/* The IPv4 default MSS (RFC 9293 3.7.1), for a SYN that gives none. */
#define MSS_DEFAULT 536
#define TCP_HDR 20u

static inline struct lb_syncookie_clock
clock_of(uint64_t now)
{
	return (struct lb_syncookie_clock){
		.sec = now / NS_PER_S,
		.ts = (uint32_t)(now / NS_PER_MS),
	};
}

/* Options of TCP segment @p pkt in @p fr. */
static inline void
opts_of(const uint8_t *fr, const struct lb_pkt *pkt, struct lb_tcp_opts *o)
{
	/* What precedes a malformed option is what the receiver takes too. */
	(void)lb_tcp_opts_read(fr + pkt->l4_off + TCP_HDR,
			       pkt->payload_off - pkt->l4_off - TCP_HDR, o);
}

static inline void
tuple_of(const struct lb_pkt *pkt, uint32_t cisn, struct lb_syncookie_tuple *t)
{
	t->saddr = pkt->src;
	t->daddr = pkt->dst;
	t->sport = pkt->sport;
	t->dport = pkt->dport;
	t->cisn = cisn;
}

/* Rewrites @p m (parsed in @p pkt) into the segment @p h, turned around
 * when @p reply. @return false when the mbuf cannot hold it (freed,
 * counted). */
static bool
seg_rewrite(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt *pkt,
	    bool reply, const struct lb_nat_tcp_hdr *h)
{
	int n = m->nb_segs > 1 ?
			-EINVAL :
			lb_nat_tcp_seg(frame_of(m),
				       rte_pktmbuf_data_len(m) +
					       rte_pktmbuf_tailroom(m),
				       pkt, reply, h);

	if (n < 0) {
		drop(w, m, LB_DROP_NOMBUF);
		return false;
	}
	m->data_len = (uint16_t)n;
	m->pkt_len = (uint32_t)n;
	return true;
}

void
lb_worker_synp_syn(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt *pkt,
		   int svc_idx, uint64_t now)
{
	const struct lb_conf_synp *c = &w->conf->svc[svc_idx].opts.synp;
	const struct lb_syncookie_clock clk = clock_of(now);
	uint8_t opt[LB_TCP_OPTS_SYN_MAX];
	struct lb_syncookie_tuple t;
	struct lb_syncookie_opts co;
	struct lb_tcp_opts in, out;
	struct lb_nat_tcp_hdr h;
	uint32_t tsval;

	opts_of(frame_of(m), pkt, &in);
	tuple_of(pkt, tcp_word(frame_of(m), pkt, 4), &t);
	co = (struct lb_syncookie_opts){
		.mss = in.mss != 0 ? in.mss : MSS_DEFAULT,
		.wscale = in.wscale,
		.sack = in.sack_ok,
		.ts = in.ts,
	};
	h.seq = lb_syncookie_make(&w->synp_keys, &t, &clk, &co, &tsval);
	/* Window scaling and SACK ride in the timestamps: offered only to a
	 * client that sent them (syncookie.h). */
	out = (struct lb_tcp_opts){
		.mss = c->mss,
		.wscale = in.ts && in.wscale >= 0 ? (int8_t)c->wscale : -1,
		.sack_ok = in.ts && in.sack_ok,
		.ts = in.ts,
		.tsval = tsval,
		.tsecr = in.tsval,
	};
	h.ack = t.cisn + 1;
	h.flags = LB_TCP_SYN | LB_TCP_ACK;
	h.win = UINT16_MAX;
	h.opt = opt;
	h.optlen = lb_tcp_opts_put(opt, &out);
	if (!seg_rewrite(w, m, pkt, true, &h))
		return;
	w->st.synp_cookies++;
	lb_worker_route_out(w, m, pkt->dst, now);
}

int
lb_worker_synp_check(struct lb_worker *w, struct rte_mbuf *m,
		     const struct lb_pkt *pkt, int svc_idx,
		     struct lb_syncookie_opts *so, uint64_t now)
{
	const struct lb_syncookie_clock clk = clock_of(now);
	const uint8_t *fr = frame_of(m);
	struct lb_syncookie_tuple t;
	struct lb_tcp_opts o;
	int v;

	opts_of(fr, pkt, &o);
	tuple_of(pkt, tcp_word(fr, pkt, 4) - 1, &t);
	v = lb_syncookie_check(&w->synp_keys, &t, &clk,
			       tcp_word(fr, pkt, 8) - 1, o.ts ? o.tsecr : 0,
			       so);
	switch (v) {
	case LB_SYNCOOKIE_OK:
		w->st.synp_acks++;
		w->synp_auto[svc_idx].done++;
		return 0;
	case LB_SYNCOOKIE_EXPIRED:
		w->st.synp_acks_expired++;
		return -ETIMEDOUT;
	default:
		w->st.synp_acks_bad++;
		return -EPERM;
	}
}

struct rte_mbuf *
lb_worker_synp_syn_of(struct lb_worker *w, struct rte_mbuf *ack,
		      const struct lb_pkt *pkt, const struct lb_syncookie_opts *so,
		      struct lb_pkt *spkt)
{
	const uint8_t *fr = frame_of(ack);
	const uint8_t *th = fr + pkt->l4_off;
	uint8_t opt[LB_TCP_OPTS_SYN_MAX];
	struct lb_tcp_opts in, out;
	struct lb_nat_tcp_hdr h;
	struct rte_mbuf *s;
	uint32_t win = (uint32_t)(th[14] << 8 | th[15]);

	s = rte_pktmbuf_copy(ack, w->dp->pool, 0, pkt->payload_off);
	if (s == NULL) {
		w->st.drop[LB_DROP_NOMBUF]++;
		return NULL;
	}
	opts_of(fr, pkt, &in);
	/* The ACK's window is in the client's scale; a SYN's never is. */
	if (so->ts && so->wscale > 0)
		win = win > (0xffffu >> (unsigned int)so->wscale) ? 0xffffu :
							 win << so->wscale;
	out = (struct lb_tcp_opts){
		.mss = so->mss,
		.wscale = so->ts ? so->wscale : -1,
		.sack_ok = so->ts && so->sack,
		.ts = so->ts && in.ts,
		.tsval = in.tsval,
	};
	h = (struct lb_nat_tcp_hdr){
		.seq = tcp_word(fr, pkt, 4) - 1,
		.flags = LB_TCP_SYN,
		.win = (uint16_t)win,
		.opt = opt,
		.optlen = lb_tcp_opts_put(opt, &out),
	};
	*spkt = *pkt;
	if (!seg_rewrite(w, s, spkt, false, &h))
		return NULL;
	return s;
}

void
lb_worker_synp_attach(struct lb_worker *w, uint32_t hold, struct rte_mbuf *ack,
		      const struct lb_syncookie_opts *so, int svc_idx)
{
	struct lb_synp_hold *sh = &w->synp_hold[hold];
	int8_t ws = so->ts ? so->wscale : -1;

	sh->ack = lb_worker_hold_take(w, ack);
	sh->data = LB_HOLD_NONE;
	sh->wclient = ws;
	sh->woffer = ws >= 0 ? (int8_t)w->conf->svc[svc_idx].opts.synp.wscale :
			       -1;
}

void
lb_worker_synp_release(struct lb_worker *w, uint32_t hold)
{
	struct lb_synp_hold *sh = &w->synp_hold[hold];
	uint32_t a = sh->ack, d = sh->data;

	sh->ack = LB_HOLD_NONE;
	sh->data = LB_HOLD_NONE;
	lb_worker_hold_release(w, a);
	lb_worker_hold_release(w, d);
}

/* Takes held segment @p i out of the pool. */
static struct rte_mbuf *
unhold(struct lb_worker *w, uint32_t i)
{
	struct rte_mbuf *m;

	if (i == LB_HOLD_NONE || i >= w->hold_cap || w->hold[i] == NULL)
		return NULL;
	m = w->hold[i];
	w->hold[i] = NULL;
	w->hold_since[i] = 0;
	w->hold_free[w->hold_nfree++] = i;
	return m;
}

bool
lb_worker_synp_rst(struct lb_worker *w, uint32_t hold, uint64_t now)
{
	struct lb_synp_hold *sh;
	struct rte_mbuf *a;

	if (hold >= w->hold_cap || w->synp_hold[hold].ack == LB_HOLD_NONE)
		return false;
	sh = &w->synp_hold[hold];
	a = unhold(w, sh->ack);
	sh->ack = LB_HOLD_NONE;
	lb_worker_synp_release(w, hold);
	lb_worker_hold_release(w, hold);
	/* The client is established: the RST answering its ACK carries the
	 * sequence number it expects (lb_nat_tcp_rst()). */
	if (a != NULL)
		lb_worker_rst_client(w, a, now);
	return true;
}

bool
lb_worker_synp_early(struct lb_worker *w, const struct lb_flow *f,
		     struct rte_mbuf *m, const struct lb_pkt *pkt)
{
	struct lb_synp_hold *sh = &w->synp_hold[f->l7];

	/* The client may give up: its RST goes on to the backend. */
	if (pkt->tcp_flags & LB_TCP_RST)
		return false;
	if (pkt->payload_len == 0 && !(pkt->tcp_flags & LB_TCP_FIN)) {
		rte_pktmbuf_free(m);
		return true;
	}
	if (sh->data == LB_HOLD_NONE &&
	    (sh->data = lb_worker_hold_take(w, m)) != LB_HOLD_NONE) {
		w->st.synp_held++;
		return true;
	}
	/* The client sends it again, as it would a segment lost. */
	w->st.synp_held_dropped++;
	rte_pktmbuf_free(m);
	return true;
}

/* Sends held client segment @p m of flow key @p k through the client
 * path, as if it arrived now. */
static void
replay(struct lb_worker *w, struct rte_mbuf *m, int svc_idx, uint64_t now)
{
	struct lb_flow_key k;
	struct lb_pkt pkt;

	if (m == NULL)
		return;
	if (lb_pkt_parse(frame_of(m), rte_pktmbuf_data_len(m), &pkt) !=
	    LB_PKT_IPV4) {
		rte_pktmbuf_free(m);
		return;
	}
	lb_flow_key_set(&k, pkt.src, pkt.dst, pkt.sport, pkt.dport, pkt.proto);
	lb_worker_from_client(w, m, &pkt, svc_idx,
			      lb_flow_hash(w->ft->seed, &k), now);
}

/*
 * The window shift of each side: the client's windows are in its own
 * scale when it negotiated one with the SYN-ACK, the backend reads them
 * in that scale when it answered the scale option of the SYN made from
 * the cookie; the backend's are in its own scale then, and the client
 * reads them in the one offered to it.
 */
static void
win_shifts(const struct lb_synp_hold *sh, int wbackend, int8_t shift[2])
{
	bool cs = sh->wclient >= 0, bs = cs && wbackend >= 0;

	shift[LB_FLOW_DIR_ORIG] = (int8_t)((cs ? sh->wclient : 0) -
					   (bs ? sh->wclient : 0));
	shift[LB_FLOW_DIR_REPLY] =
		(int8_t)((bs ? wbackend : 0) - (cs ? sh->woffer : 0));
}

void
lb_worker_synp_open(struct lb_worker *w, struct lb_flow *f, uint32_t idx,
		    struct rte_mbuf *m, const struct lb_pkt *pkt, uint64_t now)
{
	struct lb_synp_hold *sh = &w->synp_hold[f->l7];
	struct lb_tcp_track *trk = &w->trk[idx];
	struct lb_synp_flow *sf = &w->synp[idx];
	struct rte_mbuf *a = unhold(w, sh->ack), *d = unhold(w, sh->data);
	uint32_t isn = tcp_word(frame_of(m), pkt, 4), cookie;
	struct lb_tcp_opts bo, co;
	struct lb_pkt apkt;
	int svc = f->svc;

	sh->ack = LB_HOLD_NONE;
	sh->data = LB_HOLD_NONE;
	opts_of(frame_of(m), pkt, &bo);
	if (a == NULL || lb_pkt_parse(frame_of(a), rte_pktmbuf_data_len(a),
				      &apkt) != LB_PKT_IPV4) {
		/* Nothing to complete the handshake with: the flow fails
		 * as a trial whose backend never answered would. */
		rte_pktmbuf_free(a);
		rte_pktmbuf_free(d);
		rte_pktmbuf_free(m);
		return;
	}
	opts_of(frame_of(a), &apkt, &co);
	cookie = tcp_word(frame_of(a), &apkt, 8) - 1;
	/* The client's TSecr echoes the TSval of its SYN-ACK. */
	lb_tcp_splice_synproxy(&w->spl[idx], cookie, co.ts ? co.tsecr : 0, isn,
			       co.ts && bo.ts ? bo.tsval : 0);
	win_shifts(sh, bo.wscale, sf->wshift);
	sf->on = 1;
	w->pp_used = true;
	/* The tracking record saw the backend's SYN-ACK in its own numbers
	 * and scale; from now on it sees the client's. */
	trk->end[LB_FLOW_DIR_REPLY] += w->spl[idx].seq[LB_FLOW_DIR_REPLY];
	trk->ws = sh->wclient >= 0 ?
			  (uint8_t)(sh->wclient | sh->woffer << 4) :
			  0;
	flow_touch(w, f, idx, LB_FLOW_DIR_REPLY, LB_TCP_SYN | LB_TCP_ACK, now);
	w->st.synp_handshakes++;
	rte_pktmbuf_free(m);
	replay(w, a, svc, now);
	replay(w, d, svc, now);
}

/* ---- auto, secrets, tables ---- */

/* The secret of rotation @p epoch, derived from the worker's master key:
 * no system call in the worker's loop. */
static void
rekey(struct lb_worker *w)
{
	uint64_t k[2], e[2] = {w->synp_epoch, ~w->synp_epoch};

	k[0] = lb_siphash24(w->synp_master, &e[0], sizeof(e[0]));
	k[1] = lb_siphash24(w->synp_master, &e[1], sizeof(e[1]));
	lb_syncookie_rekey(&w->synp_keys, k);
	w->synp_epoch++;
}

int
lb_worker_synp_init(struct lb_worker *w)
{
	struct lb_syncookie_secrets m;
	int rc;

	if ((rc = lb_syncookie_init(&w->synp_keys)) != 0 ||
	    (rc = lb_syncookie_init(&m)) != 0)
		return rc;
	memcpy(w->synp_master, m.key[0], sizeof(w->synp_master));
	for (uint32_t i = 0; i < w->hold_cap; i++)
		w->synp_hold[i] = (struct lb_synp_hold){
			.ack = LB_HOLD_NONE,
			.data = LB_HOLD_NONE,
		};
	return 0;
}

/* The service slots whose SYNs get a cookie now. */
static void
synp_act_update(struct lb_worker *w)
{
	uint64_t act = 0;

	for (uint32_t s = 0; s < w->conf->nb_svc; s++) {
		uint8_t mode = w->conf->svc[s].opts.synp.mode;

		if (mode == LB_CONF_SYNP_ON ||
		    (mode == LB_CONF_SYNP_AUTO && w->synp_auto[s].on))
			act |= 1ull << s;
	}
	w->synp_act = act;
}

void
lb_worker_synp_switch(struct lb_worker *w)
{
	uint64_t svc = 0;

	for (uint32_t s = 0; s < LB_CONF_MAX_SVCS; s++) {
		uint8_t mode = s < w->conf->nb_svc ?
				       w->conf->svc[s].opts.synp.mode :
				       LB_CONF_SYNP_OFF;

		if (w->conf->svc[s].proto == LB_IPPROTO_TCP &&
		    mode != LB_CONF_SYNP_OFF && s < w->conf->nb_svc)
			svc |= 1ull << s;
		if (mode != LB_CONF_SYNP_AUTO)
			memset(&w->synp_auto[s], 0, sizeof(w->synp_auto[s]));
	}
	w->synp_svc = svc;
	synp_act_update(w);
}

/* One second of `auto` for service slot @p s over @p dt ns. */
static void
auto_step(struct lb_worker *w, uint32_t s, uint64_t dt, uint64_t now)
{
	const struct lb_dpconf_svc *v = &w->conf->svc[s];
	const struct lb_conf_synp *c = &v->opts.synp;
	struct lb_synp_auto *a = &w->synp_auto[s];
	uint64_t rate = (uint64_t)a->syns * (uint64_t)NS_PER_S / dt;
	uint64_t open = a->syns > a->done ? (uint64_t)(a->syns - a->done) *
						    (uint64_t)NS_PER_S / dt :
					    0;
	bool hot = rate >= c->syn_rate || open >= c->half_open;
	uint32_t vip = rte_be_to_cpu_32(v->vip);

	a->syns = 0;
	a->done = 0;
	if (!a->on && hot) {
		a->on = true;
		a->quiet_ns = 0;
		w->st.synp_auto_on++;
		LOG(NOTICE,
		    "worker %u: synproxy on for tcp %u.%u.%u.%u:%u (%" PRIu64
		    " SYN/s, %" PRIu64 " unfinished/s)",
		    w->wid, vip >> 24, vip >> 16 & 0xff, vip >> 8 & 0xff,
		    vip & 0xff, rte_be_to_cpu_16(v->vport), rate, open);
	} else if (a->on && hot) {
		a->quiet_ns = 0;
	} else if (a->on && a->quiet_ns == 0) {
		a->quiet_ns = now - dt;
	} else if (a->on && now - a->quiet_ns >= c->calm_ns) {
		a->on = false;
		a->quiet_ns = 0;
		w->st.synp_auto_off++;
		LOG(NOTICE,
		    "worker %u: synproxy off for tcp %u.%u.%u.%u:%u (calm "
		    "for %" PRIu64 " s)",
		    w->wid, vip >> 24, vip >> 16 & 0xff, vip >> 8 & 0xff,
		    vip & 0xff, rte_be_to_cpu_16(v->vport),
		    (uint64_t)(c->calm_ns / NS_PER_S));
	}
}

void
lb_worker_synp_house(struct lb_worker *w, uint64_t now)
{
	uint64_t dt;

	if (now < w->synp_next_ns)
		return;
	if (now >= w->synp_rekey_ns) {
		if (w->synp_rekey_ns != 0)
			rekey(w);
		w->synp_rekey_ns = now + REKEY_NS;
	}
	dt = w->synp_next_ns == 0 ? NS_PER_S : now - w->synp_next_ns + NS_PER_S;
	w->synp_next_ns = now + NS_PER_S;
	for (uint32_t s = 0; s < w->conf->nb_svc; s++)
		if (w->conf->svc[s].opts.synp.mode == LB_CONF_SYNP_AUTO)
			auto_step(w, s, dt, now);
	synp_act_update(w);
}
