/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The SYN proxy of a service (docs/dataplane.md, "SYN proxy"). The worker
 * answers a client's SYN itself, with a SYN-ACK whose sequence number is a
 * cookie (syncookie.h): nothing is kept. Only the client's ACK that proves
 * the cookie creates the flow; the backend then gets a SYN in the
 * client's name, made from that ACK, and the SYN copy it leaves drives the
 * usual trials and deferred queue. What the ACK said is kept by flow entry
 * (and with the copy, for the next trial); a data segment of the client
 * waits with the copy. The backend's SYN-ACK goes no further: the worker
 * keeps its numbers (tcp_splice.h), turns it into the client's ACK and
 * sends that through the client path, which completes the backend's
 * handshake; from then on every segment is translated.
 *
 * Numbers are kept as the client knows them: a backend segment is
 * translated before its sequence numbers are checked or followed, a
 * client segment just before it leaves.
 */
#include <arpa/inet.h>

#include "worker_priv.h"

#include "dpconf6.h"
#include "flow6.h"
#include "nat6.h"
#include "pkt_parse6.h"
#include "syncookie.h"
#include "tcp_opts.h"

#define NS_PER_MS 1000000ull
/* Rotate the cookie secret when a cookie made with the one before can no
 * longer be valid. */
#define REKEY_NS                                                               \
	((uint64_t)LB_SYNCOOKIE_PERIOD * LB_SYNCOOKIE_MAX_AGE * NS_PER_S)
/* The IPv4 default MSS (RFC 9293 3.7.1), for a SYN that gives none. */
#define MSS_DEFAULT 536
/* IPv6's: the minimum MTU less the headers (RFC 8200 5), and what its
 * header takes more than IPv4's of the MSS the service offers. */
#define MSS6_DEFAULT 1220
#define MSS6_LESS 20
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

/* Sizes @p m to the @p n bytes of the segment written in it; @return
 * false when it could not be written (-errno: freed, counted). */
static bool
seg_fit(struct lb_worker *w, struct rte_mbuf *m, int n)
{
	if (n < 0) {
		drop(w, m, LB_DROP_NOMBUF);
		return false;
	}
	m->data_len = (uint16_t)n;
	m->pkt_len = (uint32_t)n;
	return true;
}

/* The bytes the mbuf @p m holds from its frame on. */
static inline uint32_t
seg_cap(const struct rte_mbuf *m)
{
	return rte_pktmbuf_data_len(m) + rte_pktmbuf_tailroom(m);
}

/* Rewrites @p m (parsed in @p pkt) into the segment @p h, turned around
 * when @p reply. @return false when the mbuf cannot hold it (freed,
 * counted). */
static bool
seg_rewrite(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt *pkt,
	    bool reply, const struct lb_nat_tcp_hdr *h)
{
	return seg_fit(w, m,
		       m->nb_segs > 1 ? -EINVAL :
					lb_nat_tcp_seg(frame_of(m), seg_cap(m),
						       pkt, reply, h));
}

/* seg_rewrite() for an IPv6 segment @p m (parsed in @p p6). */
static bool
seg_rewrite6(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt6 *p6,
	     bool reply, const struct lb_nat_tcp_hdr *h)
{
	return seg_fit(w, m,
		       m->nb_segs > 1 ? -EINVAL :
					lb_nat6_tcp_seg(frame_of(m), seg_cap(m),
							p6, reply, h));
}

/*
 * The SYN-ACK answering a SYN of options @p in and ISN @p cisn with
 * cookie @p cookie (TSval @p tsval), offering MSS @p mss: into @p h,
 * its options into @p opt.
 */
static void
synack_hdr(const struct lb_conf_synp *c, uint16_t mss,
	   const struct lb_tcp_opts *in, uint32_t cisn, uint32_t cookie,
	   uint32_t tsval, uint8_t *opt, struct lb_nat_tcp_hdr *h)
{
	/* Window scaling and SACK ride in the timestamps: offered only to a
	 * client that sent them (syncookie.h). */
	const struct lb_tcp_opts out = {
		.mss = mss,
		.wscale = in->ts && in->wscale >= 0 ? (int8_t)c->wscale : -1,
		.sack_ok = in->ts && in->sack_ok,
		.ts = in->ts,
		.tsval = tsval,
		.tsecr = in->tsval,
	};

	*h = (struct lb_nat_tcp_hdr){
		.seq = cookie,
		.ack = cisn + 1,
		.flags = LB_TCP_SYN | LB_TCP_ACK,
		.win = UINT16_MAX,
		.opt = opt,
		.optlen = lb_tcp_opts_put(opt, &out),
	};
}

static inline struct lb_syncookie_opts
cookie_opts(const struct lb_tcp_opts *in, uint16_t mss_default)
{
	return (struct lb_syncookie_opts){
		.mss = in->mss != 0 ? in->mss : mss_default,
		.wscale = in->wscale,
		.sack = in->sack_ok,
		.ts = in->ts,
	};
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
	struct lb_nat_tcp_hdr h;
	struct lb_tcp_opts in;
	uint32_t tsval, cookie;

	opts_of(frame_of(m), pkt, &in);
	tuple_of(pkt, tcp_word(frame_of(m), pkt, 4), &t);
	co = cookie_opts(&in, MSS_DEFAULT);
	cookie = lb_syncookie_make(&w->synp_keys, &t, &clk, &co, &tsval);
	synack_hdr(c, c->mss, &in, t.cisn, cookie, tsval, opt, &h);
	if (!seg_rewrite(w, m, pkt, true, &h))
		return;
	w->st.synp_cookies++;
	lb_worker_route_out(w, m, pkt->dst, now);
}

/*
 * What cookie check verdict @p v of ACK @p pkt (in frame @p fr) of
 * service slot @p svc_idx means: counted, and on success the record
 * @p sc of what the ACK said.
 */
static int
ack_verdict(struct lb_worker *w, const uint8_t *fr, const struct lb_pkt *pkt,
	    int svc_idx, int v, const struct lb_tcp_opts *o,
	    struct lb_synp_conn *sc, const struct lb_syncookie_opts *so)
{
	const uint8_t *th = fr + pkt->l4_off;

	if (v == LB_SYNCOOKIE_EXPIRED) {
		w->st.synp_acks_expired++;
		return -ETIMEDOUT;
	}
	if (v != LB_SYNCOOKIE_OK) {
		w->st.synp_acks_bad++;
		return -EPERM;
	}
	w->st.synp_acks++;
	w->synp_auto[svc_idx].done++;
	*sc = (struct lb_synp_conn){
		.seq = tcp_word(fr, pkt, 4),
		.cookie = tcp_word(fr, pkt, 8) - 1,
		.tsval = o->tsval,
		.tsecr = o->tsecr,
		.data = LB_HOLD_NONE,
		.win = (uint16_t)(th[14] << 8 | th[15]),
		/* Scaling and SACK ride in the timestamps (syncookie.h). */
		.wclient = so->ts ? so->wscale : -1,
		.woffer = so->ts && so->wscale >= 0 ?
				  (int8_t)w->conf->svc[svc_idx].opts.synp.wscale :
				  -1,
		.state = LB_SYNP_PEND,
		.ts = so->ts && o->ts,
	};
	return 0;
}

int
lb_worker_synp_check(struct lb_worker *w, struct rte_mbuf *m,
		     const struct lb_pkt *pkt, int svc_idx,
		     struct lb_synp_conn *sc, struct lb_syncookie_opts *so,
		     uint64_t now)
{
	const struct lb_syncookie_clock clk = clock_of(now);
	const uint8_t *fr = frame_of(m);
	struct lb_syncookie_tuple t;
	struct lb_tcp_opts o;

	opts_of(fr, pkt, &o);
	tuple_of(pkt, tcp_word(fr, pkt, 4) - 1, &t);
	return ack_verdict(w, fr, pkt, svc_idx,
			   lb_syncookie_check(&w->synp_keys, &t, &clk,
					      tcp_word(fr, pkt, 8) - 1,
					      o.ts ? o.tsecr : 0, so),
			   &o, sc, so);
}

/* The backend's SYN made from the client's ACK of record @p sc, cookie
 * options @p so: into @p h, its options into @p opt. */
static void
syn_hdr(const struct lb_syncookie_opts *so, const struct lb_synp_conn *sc,
	uint8_t *opt, struct lb_nat_tcp_hdr *h)
{
	uint32_t win = sc->win;
	const struct lb_tcp_opts out = {
		.mss = so->mss,
		.wscale = sc->wclient,
		.sack_ok = so->ts && so->sack,
		.ts = sc->ts,
		.tsval = sc->tsval,
	};

	/* The ACK's window is in the client's scale; a SYN's never is. */
	if (sc->wclient > 0)
		win = win > (0xffffu >> (unsigned int)sc->wclient) ?
			      0xffffu :
			      win << sc->wclient;
	*h = (struct lb_nat_tcp_hdr){
		.seq = sc->seq - 1,
		.flags = LB_TCP_SYN,
		.win = (uint16_t)win,
		.opt = opt,
		.optlen = lb_tcp_opts_put(opt, &out),
	};
}

struct rte_mbuf *
lb_worker_synp_syn_of(struct lb_worker *w, struct rte_mbuf *ack,
		      const struct lb_pkt *pkt, const struct lb_syncookie_opts *so,
		      const struct lb_synp_conn *sc, struct lb_pkt *spkt)
{
	uint8_t opt[LB_TCP_OPTS_SYN_MAX];
	struct lb_nat_tcp_hdr h;
	struct rte_mbuf *s;

	s = rte_pktmbuf_copy(ack, w->dp->pool, 0, pkt->payload_off);
	if (s == NULL) {
		w->st.drop[LB_DROP_NOMBUF]++;
		return NULL;
	}
	syn_hdr(so, sc, opt, &h);
	*spkt = *pkt;
	if (!seg_rewrite(w, s, spkt, false, &h))
		return NULL;
	return s;
}

/* Whether the client's segment @p m carries what must reach the backend:
 * data or a FIN. */
static inline bool
carries(const struct lb_pkt *pkt)
{
	return pkt->payload_len > 0 || (pkt->tcp_flags & LB_TCP_FIN);
}

void
lb_worker_synp_attach(struct lb_worker *w, uint32_t hold, struct rte_mbuf *ack,
		      const struct lb_pkt *pkt, const struct lb_synp_conn *sc)
{
	struct lb_synp_conn *h;

	if (hold == LB_HOLD_NONE) {
		/* No copy, no room: the client sends its data again, and
		 * its first segment proves the cookie as its ACK did. */
		if (carries(pkt))
			w->st.synp_held_dropped++;
		rte_pktmbuf_free(ack);
		return;
	}
	h = &w->synp_hold[hold];
	*h = *sc;
	h->data = LB_HOLD_NONE;
	if (!carries(pkt)) {
		rte_pktmbuf_free(ack);
		return;
	}
	h->data = lb_worker_hold_take(w, ack);
	if (h->data == LB_HOLD_NONE) {
		w->st.synp_held_dropped++;
		rte_pktmbuf_free(ack);
		return;
	}
	w->st.synp_held++;
}

void
lb_worker_synp_release(struct lb_worker *w, uint32_t hold)
{
	struct lb_synp_conn *h = &w->synp_hold[hold];
	uint32_t d = h->data;

	h->state = LB_SYNP_NONE;
	h->data = LB_HOLD_NONE;
	if (d != LB_HOLD_NONE && (d & LB_HOLD_BIND))
		lb_worker_bind_free(w, d & ~LB_HOLD_BIND);
	else
		lb_worker_hold_release(w, d);
}

void
lb_worker_synp_flow(struct lb_worker *w, uint32_t idx, uint32_t hold,
		    const struct lb_synp_conn *sc)
{
	if (sc == NULL && hold < w->hold_cap &&
	    w->synp_hold[hold].state == LB_SYNP_PEND)
		sc = &w->synp_hold[hold];
	if (sc == NULL)
		return;
	w->synp[idx] = *sc;
	w->synp[idx].data = LB_HOLD_NONE;
	w->pp_used = true;
}

bool
lb_worker_synp_rst(struct lb_worker *w, uint32_t hold, uint64_t now)
{
	struct rte_mbuf *m;
	uint32_t seq;

	if (hold >= w->hold_cap || w->synp_hold[hold].state != LB_SYNP_PEND)
		return false;
	/* The client is established: the RST carries the sequence number
	 * it expects, in the SYN copy's frame turned around. */
	seq = w->synp_hold[hold].cookie + 1;
	lb_worker_synp_release(w, hold);
	m = lb_worker_hold_out(w, hold);
	if (m != NULL)
		lb_worker_synp_rst_to(w, m, seq, now);
	return true;
}

void
lb_worker_synp_rst_to(struct lb_worker *w, struct rte_mbuf *m, uint32_t seq,
		      uint64_t now)
{
	struct lb_nat_tcp_hdr h = {.flags = LB_TCP_RST, .seq = seq};
	struct lb_pkt6 p6;
	struct lb_pkt pkt;
	uint8_t peer[16];

	if (lb_pkt_parse(frame_of(m), rte_pktmbuf_data_len(m), &pkt) ==
	    LB_PKT_IPV4) {
		if (!seg_rewrite(w, m, &pkt, true, &h))
			return;
		w->st.rst_sent++;
		lb_worker_route_out(w, m, pkt.dst, now);
		return;
	}
	if (lb_pkt6_parse(frame_of(m), rte_pktmbuf_data_len(m), &p6) !=
		    LB_PKT6_OK ||
	    p6.proto != LB_IPPROTO_TCP) {
		rte_pktmbuf_free(m);
		return;
	}
	if (!seg_rewrite6(w, m, &p6, true, &h))
		return;
	memcpy(peer, p6.dst, 16);
	w->st.rst_sent++;
	lb_worker_route_out6(w, m, peer, now);
}

/*
 * The SYN made from the cookie of flow @p f, sent to its backend again:
 * the client sent again what the backend's handshake is to carry, so
 * that SYN may be lost (a neighbour not yet resolved drops what it cannot
 * park), and a backend retransmits nothing it never got. The client's
 * retransmissions set the pace, as its own SYNs do on a plain flow; the
 * trial's timer, which measures the backend's silence, is left alone.
 */
static void
syn_again(struct lb_worker *w, const struct lb_flow *f, uint64_t now)
{
	struct rte_mbuf *s;
	struct lb_pkt6 p6;
	struct lb_pkt spkt;

	if (f->l7 >= w->hold_cap || w->hold[f->l7] == NULL)
		return;
	s = rte_pktmbuf_copy(w->hold[f->l7], w->dp->pool, 0, UINT32_MAX);
	if (s == NULL) {
		w->st.drop[LB_DROP_NOMBUF]++;
		return;
	}
	if (lb_pkt_parse(frame_of(s), rte_pktmbuf_data_len(s), &spkt) ==
	    LB_PKT_IPV4) {
		w->st.synp_syn_again++;
		lb_worker_fwd(w, s, &spkt, f, LB_FLOW_DIR_ORIG, now);
		return;
	}
	if (lb_pkt6_parse(frame_of(s), rte_pktmbuf_data_len(s), &p6) !=
	    LB_PKT6_OK) {
		rte_pktmbuf_free(s);
		return;
	}
	w->st.synp_syn_again++;
	if (lb_flow_is64(f))
		lb_worker_fnat64_out(w, s, &p6,
				     (uint32_t)(f - lb_flow_entries(w->ft)),
				     now);
	else
		lb_worker_fwd6(w, s, &p6,
			       (uint32_t)(f - lb_flow_entries(w->ft)),
			       LB_FLOW_DIR_ORIG, now);
}

/* The offset of the TCP header of frame @p fr (@p len bytes), of either
 * family; 0 when it is none. */
static uint16_t
tcp_off(const uint8_t *fr, uint32_t len)
{
	struct lb_pkt6 p6;
	struct lb_pkt p;

	if (lb_pkt_parse(fr, len, &p) == LB_PKT_IPV4)
		return p.proto == LB_IPPROTO_TCP ? p.l4_off : 0;
	if (lb_pkt6_parse(fr, len, &p6) == LB_PKT6_OK)
		return p6.proto == LB_IPPROTO_TCP ? p6.l4_off : 0;
	return 0;
}

/* Whether client segment @p pkt starts where the one held in @p h does:
 * the client sent it again. */
static bool
held_again(const struct lb_worker *w, const struct lb_synp_conn *h,
	   const struct rte_mbuf *m, const struct lb_pkt *pkt)
{
	const struct rte_mbuf *k;
	uint16_t off;

	if (h->data >= w->hold_cap || (k = w->hold[h->data]) == NULL ||
	    (off = tcp_off(rte_pktmbuf_mtod(k, const uint8_t *),
			   rte_pktmbuf_data_len(k))) == 0)
		return false;
	return memcmp(rte_pktmbuf_mtod(k, const uint8_t *) + off + 4,
		      rte_pktmbuf_mtod(m, const uint8_t *) + pkt->l4_off + 4,
		      4) == 0;
}

bool
lb_worker_synp_early(struct lb_worker *w, const struct lb_flow *f,
		     struct rte_mbuf *m, const struct lb_pkt *pkt, uint64_t now)
{
	int r;

	struct lb_synp_conn *h = f->l7 < w->hold_cap &&
						 w->synp_hold[f->l7].state ==
							 LB_SYNP_PEND ?
					 &w->synp_hold[f->l7] :
					 NULL;

	/* The client may give up: its RST goes on to the backend. */
	if (pkt->tcp_flags & LB_TCP_RST)
		return false;
	if (!carries(pkt)) {
		rte_pktmbuf_free(m);
		return true;
	}
	if (h != NULL && (r = lb_worker_bind_early(w, h->data, m, pkt)) != 0) {
		if (r == 2)
			syn_again(w, f, now);
		return true;
	}
	if (h != NULL && h->data == LB_HOLD_NONE &&
	    (h->data = lb_worker_hold_take(w, m)) != LB_HOLD_NONE) {
		w->st.synp_held++;
		return true;
	}
	if (h != NULL && held_again(w, h, m, pkt))
		syn_again(w, f, now);
	/* The client sends it again, as it would a segment lost. */
	w->st.synp_held_dropped++;
	rte_pktmbuf_free(m);
	return true;
}

/* Sends client segment @p m (parsed in @p pkt) through the client path,
 * as if it arrived now. */
static void
replay(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt *pkt,
       int svc_idx, uint64_t now)
{
	struct lb_flow_key k;

	lb_flow_key_set(&k, pkt->src, pkt->dst, pkt->sport, pkt->dport,
			pkt->proto);
	lb_worker_from_client(w, m, pkt, svc_idx,
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
win_shifts(struct lb_synp_conn *sc, int wbackend)
{
	bool cs = sc->wclient >= 0, bs = cs && wbackend >= 0;

	sc->wshift[LB_FLOW_DIR_ORIG] = (int8_t)((cs ? sc->wclient : 0) -
						(bs ? sc->wclient : 0));
	sc->wshift[LB_FLOW_DIR_REPLY] =
		(int8_t)((bs ? wbackend : 0) - (cs ? sc->woffer : 0));
}

/* The client's ACK as record @p sc keeps it: into @p h, its options into
 * @p opt. */
static void
ack_hdr(const struct lb_synp_conn *sc, uint8_t *opt, struct lb_nat_tcp_hdr *h)
{
	const struct lb_tcp_opts o = {
		.wscale = -1,
		.ts = sc->ts,
		.tsval = sc->tsval,
		.tsecr = sc->tsecr,
	};

	*h = (struct lb_nat_tcp_hdr){
		.seq = sc->seq,
		.ack = sc->cookie + 1,
		.flags = LB_TCP_ACK,
		.win = sc->win,
		.opt = opt,
		.optlen = lb_tcp_opts_put(opt, &o),
	};
}

/*
 * The client's ACK, made again in backend SYN-ACK @p m (parsed in
 * @p pkt) of flow @p f: its numbers, window and timestamps as the client
 * sent them, from the client to the VIP.
 */
static bool
ack_of(struct lb_worker *w, const struct lb_flow *f,
       const struct lb_synp_conn *sc, struct rte_mbuf *m, struct lb_pkt *pkt)
{
	const struct lb_flow_key *k = &f->key[LB_FLOW_DIR_ORIG];
	uint8_t opt[LB_TCP_OPTS_SYN_MAX];
	struct lb_nat_tcp_hdr h;

	ack_hdr(sc, opt, &h);
	return seg_rewrite(w, m, pkt, false, &h) &&
	       lb_nat_rewrite(frame_of(m), pkt, k->src, k->sport, k->dst,
			      k->dport) == 0;
}

/*
 * Backend SYN-ACK @p fr (the TCP view @p pkt) of flow @p f (entry
 * @p idx) completes the backend's handshake: the numbers of both sides
 * joined, the flow past it; the client segments that waited go into
 * @p d. @return how many
 */
static unsigned int
open_common(struct lb_worker *w, struct lb_flow *f, uint32_t idx,
	    const uint8_t *fr, const struct lb_pkt *pkt, struct rte_mbuf **d,
	    uint64_t now)
{
	struct lb_synp_conn *sc = &w->synp[idx];
	struct lb_tcp_track *trk = &w->trk[idx];
	uint32_t isn = tcp_word(fr, pkt, 4);
	struct lb_tcp_opts bo;
	unsigned int nd = 0;

	if (f->l7 < w->hold_cap && w->synp_hold[f->l7].state == LB_SYNP_PEND) {
		uint32_t data = w->synp_hold[f->l7].data;

		w->synp_hold[f->l7].data = LB_HOLD_NONE;
		/* Delayed binding kept several segments, in order. */
		if (data != LB_HOLD_NONE && (data & LB_HOLD_BIND))
			nd = lb_worker_bind_out(w, data & ~LB_HOLD_BIND, d);
		else if ((d[0] = lb_worker_hold_out(w, data)) != NULL)
			nd = 1;
	}
	opts_of(fr, pkt, &bo);
	/* The client's TSecr echoes the TSval of its SYN-ACK. */
	lb_tcp_splice_synproxy(&w->spl[idx], sc->cookie,
			       sc->ts ? sc->tsecr : 0, isn,
			       sc->ts && bo.ts ? bo.tsval : 0);
	win_shifts(sc, bo.wscale);
	sc->state = LB_SYNP_ON;
	/* The tracking record saw the backend's SYN-ACK in its own numbers
	 * and scale; from now on it sees the client's. */
	trk->end[LB_FLOW_DIR_REPLY] += w->spl[idx].seq[LB_FLOW_DIR_REPLY];
	trk->ws = sc->wclient >= 0 ?
			  (uint8_t)(sc->wclient | sc->woffer << 4) :
			  0;
	flow_touch(w, f, idx, LB_FLOW_DIR_REPLY, LB_TCP_SYN | LB_TCP_ACK, now);
	w->st.synp_handshakes++;
	return nd;
}

void
lb_worker_synp_open(struct lb_worker *w, struct lb_flow *f, uint32_t idx,
		    struct rte_mbuf *m, struct lb_pkt *pkt, uint64_t now)
{
	struct rte_mbuf *d[LB_BIND_SEGS];
	struct lb_pkt dpkt;
	unsigned int nd;
	int svc = f->svc;

	nd = open_common(w, f, idx, frame_of(m), pkt, d, now);
	/* The SYN-ACK's mbuf becomes the client's ACK, which completes the
	 * backend's handshake through the client path; then the data. */
	if (ack_of(w, f, &w->synp[idx], m, pkt))
		replay(w, m, pkt, svc, now);
	else
		rte_pktmbuf_free(m);
	for (unsigned int i = 0; i < nd; i++) {
		if (lb_pkt_parse(frame_of(d[i]), rte_pktmbuf_data_len(d[i]),
				 &dpkt) == LB_PKT_IPV4)
			replay(w, d[i], &dpkt, svc, now);
		else
			rte_pktmbuf_free(d[i]);
	}
}

/* ---- IPv6 services (fnat66) ---- */

static inline void
tuple6_of(const struct lb_pkt6 *p6, uint32_t cisn,
	  struct lb_syncookie_tuple6 *t)
{
	memcpy(t->saddr, p6->src, 16);
	memcpy(t->daddr, p6->dst, 16);
	t->sport = p6->sport;
	t->dport = p6->dport;
	t->cisn = cisn;
}

/* The MSS offered to an IPv6 client: the service's, less what IPv6's
 * header takes more, never below IPv6's minimum. */
static inline uint16_t
mss6_of(const struct lb_conf_synp *c)
{
	return c->mss > MSS6_DEFAULT + MSS6_LESS ?
		       (uint16_t)(c->mss - MSS6_LESS) :
		       MSS6_DEFAULT;
}

/* A client's SYN @p m (parsed in @p p6, viewed in @p pkt) answered with
 * a cookie over the IPv6 tuple, as lb_worker_synp_syn(). */
static void
syn6(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt6 *p6,
     const struct lb_pkt *pkt, int s, uint64_t now)
{
	const struct lb_conf_synp *c = &w->conf->svc[s].opts.synp;
	const struct lb_syncookie_clock clk = clock_of(now);
	uint8_t opt[LB_TCP_OPTS_SYN_MAX], peer[16];
	struct lb_syncookie_tuple6 t;
	struct lb_syncookie_opts co;
	struct lb_nat_tcp_hdr h;
	struct lb_tcp_opts in;
	uint32_t tsval, cookie;

	opts_of(frame_of(m), pkt, &in);
	tuple6_of(p6, tcp_word(frame_of(m), pkt, 4), &t);
	co = cookie_opts(&in, MSS6_DEFAULT);
	cookie = lb_syncookie_make6(&w->synp_keys, &t, &clk, &co, &tsval);
	synack_hdr(c, mss6_of(c), &in, t.cisn, cookie, tsval, opt, &h);
	memcpy(peer, p6->src, 16);
	if (!seg_rewrite6(w, m, p6, true, &h))
		return;
	w->st.synp_cookies++;
	lb_worker_route_out6(w, m, peer, now);
}

/* Whether the SYN of @p orig waits in the deferred queue of slot @p s. */
static bool
defer6_waits(const struct lb_worker *w, int s,
	     const struct lb_flow6_tuple *orig)
{
	struct lb_deferq *q = w->deferq[s];
	struct lb_deferq_entry qe;
	struct lb_flow_key k;

	if (q == NULL || lb_deferq_depth(q) == 0)
		return false;
	lb_flow6_key(w->ft, &k, orig);
	return lb_deferq_lookup(q, deferq_key(w, &k), &qe) == 0;
}

bool
lb_worker_synp6_client(struct lb_worker *w, struct rte_mbuf *m,
		       struct lb_pkt6 *p6, int s,
		       const struct lb_flow6_tuple *orig, uint64_t now)
{
	const struct lb_syncookie_clock clk = clock_of(now);
	const uint8_t *fr = frame_of(m);
	struct lb_syncookie_tuple6 t;
	struct lb_syncookie_opts so;
	struct lb_nat_tcp_hdr h;
	uint8_t opt[LB_TCP_OPTS_SYN_MAX];
	struct lb_synp_conn sc;
	struct lb_tcp_opts o;
	struct lb_pkt6 s6;
	struct lb_pkt pkt;
	struct rte_mbuf *syn;
	uint8_t fl = p6->tcp_flags;

	if ((fl & (LB_TCP_SYN | LB_TCP_ACK | LB_TCP_RST)) == LB_TCP_SYN) {
		lb_worker_synp_auto_syn(w, (uint32_t)s, now);
		if (!(w->synp_act >> s & 1) ||
		    lb_worker_view6(fr, rte_pktmbuf_data_len(m), p6, &pkt) != 0)
			return false;
		/* A cookie costs no state: no budget of new flows, which
		 * the ACK that proves it pays. */
		if (unlikely(lb_dpconf6_is_own(w->conf, p6->src)))
			drop(w, m, LB_DROP_SRC_OURS);
		else if (unlikely(!lb_pkt6_l4_csum_ok(fr, p6)))
			drop(w, m, LB_DROP_L4_CSUM);
		else
			syn6(w, m, p6, &pkt, s, now);
		return true;
	}
	if (fl & (LB_TCP_RST | LB_TCP_SYN) || !(fl & LB_TCP_ACK) ||
	    lb_worker_view6(fr, rte_pktmbuf_data_len(m), p6, &pkt) != 0)
		return false;
	/* A segment of a connection whose SYN waits in the deferred
	 * queue: the client sends it again. */
	if (defer6_waits(w, s, orig)) {
		w->st.synp_held_dropped++;
		rte_pktmbuf_free(m);
		return true;
	}
	opts_of(fr, &pkt, &o);
	tuple6_of(p6, tcp_word(fr, &pkt, 4) - 1, &t);
	if (ack_verdict(w, fr, &pkt, s,
			lb_syncookie_check6(&w->synp_keys, &t, &clk,
					    tcp_word(fr, &pkt, 8) - 1,
					    o.ts ? o.tsecr : 0, &so),
			&o, &sc, &so) != 0)
		return false;
	if (!lb_worker_flow6_first_ok(w, m, p6, s, orig, now))
		return true;
	syn = rte_pktmbuf_copy(m, w->dp->pool, 0, p6->payload_off);
	if (syn == NULL) {
		/* Its data, sent again, proves the cookie once more. */
		w->st.drop[LB_DROP_NOMBUF]++;
		rte_pktmbuf_free(m);
		return true;
	}
	syn_hdr(&so, &sc, opt, &h);
	s6 = *p6;
	if (!seg_rewrite6(w, syn, &s6, false, &h)) {
		rte_pktmbuf_free(m);
		return true;
	}
	lb_worker_flow6_open(w, syn, &s6, s, orig, m, &pkt, &sc, now);
	return true;
}

/* lb_nat_rewrite() of ack_of() for IPv6. */
static bool
ack_of6(struct lb_worker *w, const struct lb_flow *f, uint32_t idx,
	const struct lb_synp_conn *sc, struct rte_mbuf *m, struct lb_pkt6 *p6)
{
	const struct lb_flow_key *k = &f->key[LB_FLOW_DIR_ORIG];
	const uint8_t(*a)[16] = w->f6[idx].a[LB_FLOW_DIR_ORIG];
	uint8_t opt[LB_TCP_OPTS_SYN_MAX];
	struct lb_nat_tcp_hdr h;

	ack_hdr(sc, opt, &h);
	return seg_rewrite6(w, m, p6, false, &h) &&
	       lb_nat6_rewrite(frame_of(m), p6, a[0], k->sport, a[1],
			       k->dport) == 0;
}

void
lb_worker_synp6_open(struct lb_worker *w, struct lb_flow *f, uint32_t idx,
		     struct rte_mbuf *m, struct lb_pkt6 *p6, uint64_t now)
{
	struct rte_mbuf *d[LB_BIND_SEGS];
	struct lb_pkt pkt;
	unsigned int nd;

	if (lb_worker_view6(frame_of(m), rte_pktmbuf_data_len(m), p6, &pkt) !=
	    0) {
		drop(w, m, LB_DROP_IP6_UNSERVED);
		return;
	}
	nd = open_common(w, f, idx, frame_of(m), &pkt, d, now);
	/* As IPv4's: the client's ACK, then what waited, through the
	 * client path. */
	if (ack_of6(w, f, idx, &w->synp[idx], m, p6))
		lb_worker_handle_ipv6(w, m, now);
	else
		rte_pktmbuf_free(m);
	for (unsigned int i = 0; i < nd; i++)
		lb_worker_handle_ipv6(w, d[i], now);
}

/* Whether SYN copy @p hold is the proxy's. */
static bool
pend_hold(const struct lb_worker *w, uint32_t hold)
{
	return hold < w->hold_cap && w->synp_hold[hold].state == LB_SYNP_PEND;
}

void
lb_worker_synp6_flow(struct lb_worker *w, uint32_t idx, uint32_t hold)
{
	/* An entry that a spliced flow left has its offsets still. */
	memset(&w->spl[idx], 0, sizeof(w->spl[idx]));
	memset(&w->pp[idx], 0, sizeof(w->pp[idx]));
	memset(&w->synp[idx], 0, sizeof(w->synp[idx]));
	if (pend_hold(w, hold))
		lb_worker_synp_flow(w, idx, hold, NULL);
}

bool
lb_worker_synp6_pend(struct lb_worker *w, struct lb_flow *f, uint32_t idx,
		     struct rte_mbuf *m, struct lb_pkt6 *p6,
		     enum lb_flow_dir dir, uint64_t now)
{
	struct lb_pkt pkt;

	if (p6->proto != LB_IPPROTO_TCP)
		return false;
	if (dir == LB_FLOW_DIR_REPLY) {
		if ((p6->tcp_flags & (LB_TCP_SYN | LB_TCP_ACK)) !=
		    (LB_TCP_SYN | LB_TCP_ACK))
			return false;
		lb_worker_synp6_open(w, f, idx, m, p6, now);
		return true;
	}
	if (lb_worker_view6(frame_of(m), rte_pktmbuf_data_len(m), p6, &pkt) !=
	    0)
		return false;
	return lb_worker_synp_early(w, f, m, &pkt, now);
}

/* Segment @p m of direction @p dir of proxied flow @p idx, its TCP
 * header at @p l4_off, flags @p fl: its numbers and window translated. */
static void
synp_seg(struct lb_worker *w, uint32_t idx, struct rte_mbuf *m,
	 uint16_t l4_off, uint8_t fl, enum lb_flow_dir dir)
{
	const struct lb_synp_conn *sc = &w->synp[idx];

	lb_tcp_splice_seg(&w->spl[idx],
			  dir == LB_FLOW_DIR_ORIG ? LB_TCP_SPL_ORIG :
						    LB_TCP_SPL_REPLY,
			  frame_of(m) + l4_off, rte_pktmbuf_data_len(m) - l4_off);
	if (sc->wshift[dir] != 0 && !(fl & LB_TCP_SYN))
		lb_tcp_splice_win(frame_of(m) + l4_off, sc->wshift[dir]);
}

void
lb_worker_synp6_seg(struct lb_worker *w, struct lb_flow *f, uint32_t idx,
		    struct rte_mbuf *m, const struct lb_pkt6 *p6,
		    enum lb_flow_dir dir)
{
	uint8_t fl = p6->tcp_flags;

	/* The client's ACK that completes a plain handshake, for `auto`. */
	if (dir == LB_FLOW_DIR_ORIG && f->state == LB_FLOW_SYN_RECV &&
	    (fl & (LB_TCP_SYN | LB_TCP_ACK | LB_TCP_RST)) == LB_TCP_ACK)
		w->synp_auto[f->svc].done++;
	if (w->synp[idx].state == LB_SYNP_ON && p6->proto == LB_IPPROTO_TCP)
		synp_seg(w, idx, m, p6->l4_off, fl, dir);
}

/*
 * The IPv4 backend's SYN-ACK of proxied fnat64 flow @p f completes the
 * backend's handshake as lb_worker_synp6_open() does: the client's ACK
 * is made of the SYN copy, which is the client's IPv6 frame, and goes
 * with what waited through the client path.
 */
static void
open64(struct lb_worker *w, struct lb_flow *f, uint32_t idx,
       struct rte_mbuf *m, const struct lb_pkt *pkt, uint64_t now)
{
	struct rte_mbuf *d[LB_BIND_SEGS], *ack = NULL;
	uint8_t opt[LB_TCP_OPTS_SYN_MAX];
	struct lb_nat_tcp_hdr h;
	struct lb_pkt6 p6;
	unsigned int nd;

	/* Leaving SYN_SENT releases the copy. */
	if (f->l7 < w->hold_cap && w->hold[f->l7] != NULL &&
	    (ack = rte_pktmbuf_copy(w->hold[f->l7], w->dp->pool, 0,
				    UINT32_MAX)) == NULL)
		w->st.drop[LB_DROP_NOMBUF]++;
	nd = open_common(w, f, idx, frame_of(m), pkt, d, now);
	rte_pktmbuf_free(m);
	ack_hdr(&w->synp[idx], opt, &h);
	if (ack != NULL &&
	    lb_pkt6_parse(frame_of(ack), rte_pktmbuf_data_len(ack), &p6) ==
		    LB_PKT6_OK &&
	    p6.proto == LB_IPPROTO_TCP) {
		if (seg_rewrite6(w, ack, &p6, false, &h))
			lb_worker_handle_ipv6(w, ack, now);
	} else if (ack != NULL) {
		rte_pktmbuf_free(ack);
	}
	for (unsigned int i = 0; i < nd; i++)
		lb_worker_handle_ipv6(w, d[i], now);
}

bool
lb_worker_synp64_reply(struct lb_worker *w, struct lb_flow *f, uint32_t idx,
		       struct rte_mbuf *m, struct lb_pkt *pkt, uint64_t now)
{
	if (unlikely(synp_holds(w, f, idx)) &&
	    (pkt->tcp_flags & (LB_TCP_SYN | LB_TCP_ACK)) ==
		    (LB_TCP_SYN | LB_TCP_ACK)) {
		open64(w, f, idx, m, pkt, now);
		return true;
	}
	if (w->synp[idx].state == LB_SYNP_ON)
		synp_seg(w, idx, m, pkt->l4_off, pkt->tcp_flags,
			 LB_FLOW_DIR_REPLY);
	return false;
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
		w->synp_hold[i] = (struct lb_synp_conn){
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
		if (mode != w->synp_auto[s].mode) {
			memset(&w->synp_auto[s], 0, sizeof(w->synp_auto[s]));
			w->synp_auto[s].mode = mode;
		}
	}
	w->synp_svc = svc;
	synp_act_update(w);
}

#define VIP_STRLEN (INET6_ADDRSTRLEN + 8)

/* VIP:PORT of service slot @p v, of either family ([IPV6]:PORT), for
 * the log. */
static const char *
vip_str(const struct lb_dpconf_svc *v, char *buf, size_t n)
{
	char a[INET6_ADDRSTRLEN];
	bool v6 = v->af == LB_CONF_AF_INET6;

	if (inet_ntop(v6 ? AF_INET6 : AF_INET, v6 ? (const void *)v->vip6 :
						     (const void *)&v->vip,
		      a, sizeof(a)) == NULL)
		a[0] = '\0';
	snprintf(buf, n, v6 ? "[%s]:%u" : "%s:%u", a,
		 rte_be_to_cpu_16(v->vport));
	return buf;
}

/* Service slot @p s of `auto` turns its proxy on, after @p rate SYNs/s
 * of which @p open per second did not finish their handshake. */
static void
auto_on(struct lb_worker *w, uint32_t s, uint64_t rate, uint64_t open)
{
	const struct lb_dpconf_svc *v = &w->conf->svc[s];
	char a[VIP_STRLEN];

	w->synp_auto[s].on = true;
	w->synp_auto[s].quiet_ns = 0;
	w->synp_act |= 1ull << s;
	w->st.synp_auto_on++;
	LOG(NOTICE,
	    "worker %u: synproxy on for tcp %s (%" PRIu64
	    " SYN/s, %" PRIu64 " unfinished/s)",
	    w->wid, vip_str(v, a, sizeof(a)), rate, open);
}

void
lb_worker_synp_auto_syn(struct lb_worker *w, uint32_t s, uint64_t now)
{
	struct lb_synp_auto *a = &w->synp_auto[s];
	const struct lb_conf_synp *c = &w->conf->svc[s].opts.synp;
	uint64_t t0, dt;

	a->syns++;
	if (a->on || c->mode != LB_CONF_SYNP_AUTO)
		return;
	/* The counts cover less than a second: reaching a threshold in
	 * it is reaching the rate. Waiting for the second to end would
	 * let a flood take flow entries and SNAT ports for up to a
	 * second before the proxy answers it. */
	if (a->syns < c->syn_rate &&
	    (a->syns <= a->done || a->syns - a->done < c->half_open))
		return;
	t0 = w->synp_next_ns > NS_PER_S ? w->synp_next_ns - NS_PER_S : 0;
	dt = now > t0 ? now - t0 : 1;
	if (dt > NS_PER_S)
		dt = NS_PER_S;
	auto_on(w, s, (uint64_t)a->syns * NS_PER_S / dt,
		a->syns > a->done ?
			(uint64_t)(a->syns - a->done) * NS_PER_S / dt :
			0);
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
	char ab[VIP_STRLEN];

	a->syns = 0;
	a->done = 0;
	if (!a->on && hot) {
		auto_on(w, s, rate, open);
	} else if (a->on && hot) {
		a->quiet_ns = 0;
	} else if (a->on && a->quiet_ns == 0) {
		a->quiet_ns = now - dt;
	} else if (a->on && now - a->quiet_ns >= c->calm_ns) {
		a->on = false;
		a->quiet_ns = 0;
		w->st.synp_auto_off++;
		LOG(NOTICE,
		    "worker %u: synproxy off for tcp %s (calm for %" PRIu64
		    " s)",
		    w->wid, vip_str(v, ab, sizeof(ab)),
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
