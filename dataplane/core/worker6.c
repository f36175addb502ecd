/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv6 frames, apart from IPv4's path: the burst hands them here at the
 * ethertype, so an IPv4 frame pays nothing for them. Neighbour discovery
 * for our addresses, echo for our addresses and VIPs, fnat66 for TCP and
 * UDP with the ICMPv6 errors about its flows, and the drops with their
 * reasons. New flows are admitted and their TCP trials retried and
 * deferred by IPv4's code (worker_client.c, worker_trial.c), which asks
 * this file only for what depends on the family.
 */
#include "worker_priv.h"

#include "dpconf6.h"
#include "icmp6.h"
#include "nat6.h"
#include "nd6.h"
#include "pkt_parse6.h"

_Static_assert(LB_PKT6_VERDICT_MAX <= LB_SHM_PKT6_VERDICTS,
	       "room for every IPv6 verdict in the counters");

/* The largest frame the dataplane's ND messages take: Ethernet, a tag,
 * IPv6, an advertisement or solicitation with its link-layer option. */
#define ND_FRAME_MAX 96u

static void
link_of(const struct lb_worker *w, uint16_t port, struct lb_nat_link *l)
{
	uint16_t vid = w->conf->port_vlan[port];

	memcpy(l->mac, w->dp->port[port].mac.addr_bytes, sizeof(l->mac));
	l->has_vlan = vid != 0;
	l->vlan_tci = vid;
}

/* Replaces the contents of @p m with the @p len bytes at @p buf. */
static int
mbuf_set(struct rte_mbuf *m, const uint8_t *buf, uint32_t len)
{
	if (m->nb_segs != 1 || len > (uint32_t)m->buf_len - m->data_off)
		return -ENOSPC;
	memcpy(frame_of(m), buf, len);
	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	return 0;
}

static void
handle_nd(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt6 *pkt,
	  uint64_t now)
{
	uint16_t port = m->port;
	struct lb_nd_msg nd;
	struct lb_nat_link link;
	uint8_t buf[ND_FRAME_MAX];
	int n;

	if (lb_nd_parse(frame_of(m), rte_pktmbuf_data_len(m), pkt, &nd) != 0) {
		drop(w, m, LB_DROP_ND_INVALID);
		return;
	}
	/* Nobody else may speak for our addresses, as with ARP: not a
	 * sender (duplicate address detection has none), not the target of
	 * an advertisement. */
	if (unlikely((!nd.dad && lb_dpconf6_is_own(w->conf, nd.src)) ||
		     (nd.type == LB_ND_NA &&
		      lb_dpconf6_is_own(w->conf, nd.target)))) {
		drop(w, m, LB_DROP_ND_SPOOF);
		return;
	}
	/* What an advertisement says of its target, and a solicitation
	 * for one of our addresses of its sender (RFC 4861 7.2.5, 7.2.3). */
	if (nd.type == LB_ND_NA && nd.has_lla)
		lb_worker_neigh6_learn(w, nd.target, nd.lla, port, now);
	if (nd.type == LB_ND_NS &&
	    lb_dpconf6_is_ours(w->conf, nd.target, port)) {
		if (nd.has_lla)
			lb_worker_neigh6_learn(w, nd.src, nd.lla, port, now);
		link_of(w, port, &link);
		n = lb_nd_na_answer(buf, sizeof(buf), &link, &nd);
		if (n > 0 && mbuf_set(m, buf, (uint32_t)n) == 0) {
			w->st.nd_adverts++;
			tx_enqueue(w, port, m);
			return;
		}
	}
	/* The kernel resolves its own next hops, and answers for its
	 * link-local address, through the exception path (as ARP replies
	 * to a local address go there); solicitations for others and
	 * other advertisements are nobody's. */
	if (w->exc_out != NULL &&
	    ((nd.type == LB_ND_NA && lb_exc_local6(w->conf, nd.dst)) ||
	     (nd.type == LB_ND_NS && nd.target[0] == 0xfe &&
	      (nd.target[1] & 0xc0) == 0x80))) {
		lb_exc_put(w, m);
		return;
	}
	rte_pktmbuf_free(m);
}

static void icmp6_error(struct lb_worker *w, struct rte_mbuf *m,
			struct lb_pkt6 *pkt, uint64_t now);

static void
handle_icmp6(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt6 *pkt,
	     uint64_t now)
{
	uint8_t type = ((const uint8_t *)&pkt->dport)[0];
	uint8_t peer[16];

	if (type == LB_ND_NS || type == LB_ND_NA) {
		handle_nd(w, m, pkt, now);
		return;
	}
	if (type == LB_ICMP6_DEST_UNREACH || type == LB_ICMP6_PKT_TOO_BIG ||
	    type == LB_ICMP6_TIME_EXCEEDED) {
		icmp6_error(w, m, pkt, now);
		return;
	}
	if (type == LB_ICMP6_ECHO_REQUEST &&
	    lb_dpconf6_is_ours(w->conf, pkt->dst, m->port)) {
		/* The reply would go to ourselves. */
		if (unlikely(lb_dpconf6_is_own(w->conf, pkt->src))) {
			drop(w, m, LB_DROP_SRC_OURS);
			return;
		}
		memcpy(peer, pkt->src, 16);
		if (lb_icmp6_echo_reply(frame_of(m), rte_pktmbuf_data_len(m),
					pkt) == 0) {
			w->st.echo6_replies++;
			lb_worker_route_out6(w, m, peer, now);
			return;
		}
	}
	drop_or_kernel6(w, m, pkt->dst, LB_DROP_ICMP6);
}

/* ---- fnat66 -------------------------------------------------------------- */

uint32_t
lb_worker_snat6_active(const struct lb_worker *w, const struct lb_dpconf *c,
		       uint32_t *keys)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < c->nb_snat6 && i < LB_CONF_MAX_SNATS; i++)
		if (!c->snat6[i].draining)
			keys[n++] = lb_flow6_fold(w->ft, c->snat6[i].ip);
	return n;
}

/* The IPv6 SNAT address whose fold is @p key, or NULL. */
static const uint8_t *
snat6_addr(const struct lb_worker *w, uint32_t key)
{
	const struct lb_dpconf *c = w->conf;

	for (uint32_t i = 0; i < c->nb_snat6 && i < LB_CONF_MAX_SNATS; i++)
		if (lb_flow6_fold(w->ft, c->snat6[i].ip) == key)
			return c->snat6[i].ip;
	return NULL;
}

struct snat6_dst {
	const struct lb_worker *w;
	const struct lb_dpconf_be *be;
	uint8_t proto;
};

/* lb_snat_taken_fn: as IPv4's, a live flow's reply tuple says so. */
static bool
snat6_taken(void *arg, uint32_t key, uint16_t port)
{
	const struct snat6_dst *d = arg;
	const uint8_t *ip = snat6_addr(d->w, key);
	struct lb_flow6_tuple t;

	if (ip == NULL)
		return true;
	memset(&t, 0, sizeof(t));
	memcpy(t.src, d->be->ip6, 16);
	memcpy(t.dst, ip, 16);
	t.sport = d->be->port;
	t.dport = port;
	t.proto = d->proto;
	return lb_flow6_holds(d->w->ft, &t);
}

void
lb_worker_flow6_forget(struct lb_worker *w, const struct lb_flow *f,
		       int release)
{
	if (f->svc < LB_CONF_MAX_SVCS && f->be < LB_CONF_MAX_BES)
		w->bst[f->svc][f->be].active--;
	fb_put(w, LB_FB_FLOW_END, f->svc, f->be, 0,
	       (uint64_t)f->pkts[0] + f->pkts[1]);
	if (f->state == LB_FLOW_UDP_UNREPLIED)
		w->st.udp_unreplied++;
	if (!release)
		return;
	if (f->state == LB_FLOW_SYN_SENT) {
		lb_worker_hold_release(w, f->l7);
	} else if (f->l7 != LB_L7_NONE && w->l7 != NULL) {
		lb_worker_gate_end(w, NULL, f->l7, false, 0);
		lb_l7_close(w->l7, f->l7);
	}
	/* fnat64's port is of the IPv4 slice. */
	lb_snat_port_free(lb_flow_is64(f) ? w->snat : w->snat6,
			  f->key[LB_FLOW_DIR_REPLY].dst,
			  f->key[LB_FLOW_DIR_REPLY].dport);
}

/*
 * Full-NAT either way, as lb_worker_fwd(): a packet of direction @p dir
 * leaves with the reverse of the other direction's tuple, whose whole
 * addresses the flow's side record holds.
 */
static inline void
fwd6(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt6 *pkt,
     uint32_t idx, enum lb_flow_dir dir, uint64_t now)
{
	const struct lb_flow *f = &lb_flow_entries(w->ft)[idx];
	const struct lb_flow_key *k = &f->key[!dir];
	const uint8_t(*a)[16] = w->f6[idx].a[!dir];
	struct lb_be_stats *b = &w->bst[f->svc][f->be];
	uint8_t to[16];

	if (unlikely(lb_nat6_hop_dec(frame_of(m), pkt) != 0)) {
		drop(w, m, LB_DROP_HOP_LIMIT);
		return;
	}
	b->pkts[dir]++;
	b->bytes[dir] += rte_pktmbuf_pkt_len(m);
	memcpy(to, a[0], 16);
	if (lb_nat6_rewrite(frame_of(m), pkt, a[1], k->dport, a[0],
			    k->sport) != 0) {
		drop(w, m, LB_DROP_IP6_UNSERVED);
		return;
	}
	lb_worker_route_out6(w, m, to, now);
}

/* fwd6() for the L7 hooks (worker_l7.c): held segments going on. */
void
lb_worker_fwd6(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt6 *pkt,
	       uint32_t idx, enum lb_flow_dir dir, uint64_t now)
{
	fwd6(w, m, pkt, idx, dir, now);
}

/* The budget key of an IPv6 source: its /64, folded under the flow
 * table's seed (nobody outside can aim two prefixes at one key). */
static inline uint32_t
src64_key(const struct lb_worker *w, const uint8_t *src)
{
	uint8_t p[16] = {0};

	memcpy(p, src, 8);
	return lb_flow6_fold(w->ft, p);
}

/*
 * Turns TCP segment @p m (parsed in @p pkt) into its RST
 * (lb_nat6_tcp_rst(): never for a RST) and sends it back to the sender,
 * consuming @p m, as IPv4's rst_reply(). @return 0 if sent.
 */
static int
rst6_reply(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt6 *pkt,
	   uint64_t now)
{
	uint8_t peer[16];
	int len;

	memcpy(peer, pkt->src, 16);
	len = lb_nat6_tcp_rst(frame_of(m), rte_pktmbuf_data_len(m), pkt);
	if (len < 0) {
		rte_pktmbuf_free(m);
		return len;
	}
	rte_pktmbuf_trim(m, (uint16_t)(rte_pktmbuf_data_len(m) - len));
	lb_worker_route_out6(w, m, peer, now);
	return 0;
}

void
lb_worker_rst_client6(struct lb_worker *w, struct rte_mbuf *m, uint64_t now)
{
	struct lb_pkt6 pkt;

	if (lb_pkt6_parse(frame_of(m), rte_pktmbuf_data_len(m), &pkt) !=
	    LB_PKT6_OK) {
		rte_pktmbuf_free(m);
		return;
	}
	if (rst6_reply(w, m, &pkt, now) == 0)
		w->st.rst_sent++;
}

/* lb_worker_no_flow() for IPv6 segment @p m: the same verdict
 * (no_flow_rst()), the same bucket @p b and counters. */
static void
no_flow6(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt6 *pkt,
	 uint32_t b, uint64_t rate, uint64_t now)
{
	if (!no_flow_rst(w, pkt->proto, pkt->tcp_flags, b, rate, now)) {
		rte_pktmbuf_free(m);
		return;
	}
	if (rst6_reply(w, m, pkt, now) == 0)
		w->st.rst_no_flow++;
}

/* tcp_judge() of IPv6 TCP segment @p m (parsed in @p pkt). */
static inline int
tcp_check6(struct lb_worker *w, const struct lb_flow *f, uint32_t idx,
	   enum lb_flow_dir dir, struct rte_mbuf *m,
	   const struct lb_pkt6 *pkt, uint64_t now)
{
	struct lb_tcp_seg s;

	tcp_seg_at(&s, frame_of(m), pkt->l4_off, pkt->payload_off,
		   pkt->payload_len, pkt->tcp_flags);
	return tcp_judge(w, f, idx, dir, m, pkt->l3_off, &s, now);
}

/* Starts the sequence tracking of new TCP flow @p idx at its client's
 * SYN @p m (parsed in @p pkt), as IPv4's first trial does. */
void
lb_worker_track6_init(struct lb_worker *w, uint32_t idx,
		      const struct rte_mbuf *m, const struct lb_pkt6 *pkt)
{
	struct lb_tcp_seg s;

	if (pkt->proto != LB_IPPROTO_TCP)
		return;
	tcp_seg_at(&s, rte_pktmbuf_mtod(m, const uint8_t *), pkt->l4_off,
		   pkt->payload_off, pkt->payload_len, pkt->tcp_flags);
	lb_tcp_track_init(&w->trk[idx], &s);
}

/* ---- trials: retries on the next backend (worker_trial.c) ---- */

/*
 * Trial @p trials + 1 of a new flow of IPv6 service @p s: a SNAT port
 * towards backend @p be, the flow with its SYN copy @p hold, and @p m
 * sent there; an IPv4 backend's flow is fnat64's (worker64.c).
 * @return 0, or a negative errno (-EADDRNOTAVAIL: no SNAT port) with
 * @p m untouched.
 */
static int
flow6_start(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt6 *pkt,
	    int s, const struct lb_flow6_tuple *orig, uint32_t be,
	    uint32_t hold, uint32_t trials, uint64_t now)
{
	const struct lb_dpconf_svc *svc = &w->conf->svc[s];
	struct lb_flow6_tuple reply;
	struct snat6_dst d = {.w = w, .be = &svc->be[be], .proto = pkt->proto};
	struct lb_flow *f;
	const uint8_t *ip;
	uint32_t key;
	uint16_t port;
	int idx;

	if (svc->be[be].af != LB_CONF_AF_INET6)
		return lb_worker_fnat64_start(w, m, pkt, s, be, orig, hold,
					      trials, now);
	if (lb_snat_port_alloc(w->snat6, snat6_taken, &d, &key, &port) != 0)
		return -EADDRNOTAVAIL;
	ip = snat6_addr(w, key);
	if (ip == NULL) {
		lb_snat_port_free(w->snat6, key, port);
		return -EADDRNOTAVAIL;
	}
	memset(&reply, 0, sizeof(reply));
	memcpy(reply.src, svc->be[be].ip6, 16);
	memcpy(reply.dst, ip, 16);
	reply.sport = svc->be[be].port;
	reply.dport = port;
	reply.proto = pkt->proto;
	idx = lb_flow6_insert(w->ft, w->f6, orig, &reply, (uint16_t)s, be,
			      now);
	if (idx < 0) {
		lb_snat_port_free(w->snat6, key, port);
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
	fwd6(w, m, pkt, (uint32_t)idx, LB_FLOW_DIR_ORIG, now);
	return 0;
}

static void
tuple6_of(const struct lb_pkt6 *pkt, struct lb_flow6_tuple *t)
{
	memset(t, 0, sizeof(*t));
	memcpy(t->src, pkt->src, 16);
	memcpy(t->dst, pkt->dst, 16);
	t->sport = pkt->sport;
	t->dport = pkt->dport;
	t->proto = pkt->proto;
}

int
lb_worker_trial6_next(struct lb_worker *w, const struct lb_trial *t,
		      uint32_t be, uint64_t now)
{
	struct lb_flow6_tuple o;
	struct rte_mbuf *m;
	struct lb_pkt6 pkt;

	m = rte_pktmbuf_copy(w->hold[t->hold], w->dp->pool, 0, UINT32_MAX);
	if (m == NULL) {
		w->st.drop[LB_DROP_NOMBUF]++;
		return -ENOMEM;
	}
	if (lb_pkt6_parse(frame_of(m), rte_pktmbuf_data_len(m), &pkt) !=
	    LB_PKT6_OK) {
		rte_pktmbuf_free(m);
		return -EINVAL;
	}
	tuple6_of(&pkt, &o);
	if (flow6_start(w, m, &pkt, t->svc, &o, be, t->hold, t->trials,
			now) != 0) {
		rte_pktmbuf_free(m);
		return -EAGAIN;
	}
	return 0;
}

enum lb_deferq_verdict
lb_worker_deferq6_due(struct lb_worker *w, uint32_t hold, struct rte_mbuf *m,
		      uint64_t now)
{
	struct lb_flow6_tuple o;
	struct lb_flow_key k;
	enum lb_flow_dir dir;
	struct lb_pkt6 pkt;
	uint32_t be;
	int s = -1;

	if (lb_pkt6_parse(frame_of(m), rte_pktmbuf_data_len(m), &pkt) ==
	    LB_PKT6_OK) {
		tuple6_of(&pkt, &o);
		s = lb_dpconf6_svc_find(&w->svc6, w->conf, pkt.proto, pkt.dst,
					pkt.dport);
	}
	if (s < 0 || lb_flow6_lookup(w->ft, w->f6, &o, &dir) != LB_FLOW_NONE) {
		/* Service gone, or the client got through already. */
		rte_pktmbuf_free(m);
		lb_worker_hold_release(w, hold);
		return LB_DEFERQ_DONE;
	}
	lb_flow6_key(w->ft, &k, &o);
	if (w->sched[s] == NULL ||
	    w->ops[s]->pick(w->sched[s], lb_flow_hash(w->dp->hash_seed, &k),
			    &w->rng, &be) != 0 ||
	    flow6_start(w, m, &pkt, s, &o, be, hold, 0, now) != 0) {
		rte_pktmbuf_free(m);
		return LB_DEFERQ_KEEP;
	}
	w->st.flows_created++;
	return LB_DEFERQ_DONE;
}

bool
lb_worker_trial6_answer(struct lb_worker *w, struct lb_flow *f, uint32_t idx,
			struct rte_mbuf *m, uint8_t flags, uint64_t now)
{
	struct lb_trial t;

	if (flags & LB_TCP_RST) {
		trial_snapshot(f, &t);
		lb_worker_flow6_forget(w, f, 0);
		lb_flow_delete(w->ft, idx);
		rte_pktmbuf_free(m);
		lb_worker_trial_failed(w, &t, now);
		return true;
	}
	if ((flags & (LB_TCP_SYN | LB_TCP_ACK)) == (LB_TCP_SYN | LB_TCP_ACK) &&
	    w->sched[f->svc] != NULL) {
		/* On http services the responses judge the backend, as
		 * IPv4's (worker_backend.c). */
		if (!w->conf->svc[f->svc].opts.http)
			w->ops[f->svc]->result(w->sched[f->svc], f->be, true);
		lb_worker_trial_feedback(w, f->svc, f->be, true);
	}
	return false;
}

/* ---- HTTP following (worker_l7.c) ---- */

int
lb_worker_view6(const uint8_t *frame, uint32_t len, struct lb_pkt6 *p6,
		struct lb_pkt *pkt)
{
	if (lb_pkt6_parse(frame, len, p6) != LB_PKT6_OK)
		return -EINVAL;
	*pkt = (struct lb_pkt){.l3_off = p6->l3_off, .l4_off = p6->l4_off,
			       .payload_off = p6->payload_off,
			       .payload_len = p6->payload_len,
			       .proto = p6->proto, .tcp_flags = p6->tcp_flags,
			       .sport = p6->sport, .dport = p6->dport};
	return 0;
}

/*
 * A TCP segment of fnat66 flow @p f (entry @p idx) past SYN_SENT, or a
 * client's one of an fnat64 flow, as
 * lb_worker_from_client() and lb_worker_from_backend() take an IPv4 one
 * when the flow is followed: the follower entry at the client's ACK that
 * completes the handshake, then each segment fed to it (through an
 * IPv4-shaped view of its offsets, lb_worker_view6()), with the
 * admission of each request; the table is touched here (the caller
 * did not), with the flags @p fl that tcp_check6() let count. Not
 * inlined: fnat66()'s plain flows pay only the test.
 */
static __rte_noinline void
follow6(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt6 *p6,
	struct lb_flow *f, uint32_t idx, enum lb_flow_dir dir, uint8_t fl,
	uint64_t now)
{
	uint8_t *fr = frame_of(m);
	struct lb_l7_rej *r;
	struct lb_pkt pkt;
	int v;

	if (lb_worker_view6(fr, rte_pktmbuf_data_len(m), p6, &pkt) != 0) {
		drop(w, m, LB_DROP_IP6_UNSERVED);
		return;
	}
	if (f->state == LB_FLOW_SYN_RECV && dir == LB_FLOW_DIR_ORIG &&
	    (fl & (LB_TCP_SYN | LB_TCP_RST | LB_TCP_FIN | LB_TCP_ACK)) ==
		    LB_TCP_ACK &&
	    !lb_worker_l7_open(w, f, tcp_word(fr, &pkt, 4),
			       tcp_word(fr, &pkt, 8)) &&
	    lb_worker_l7_no_entry(w, f, idx, m, &pkt, now))
		return;
	r = f->l7 != LB_L7_NONE ? rej_of(w, f->l7) : NULL;
	if (r != NULL && r->state == LB_L7_RJ_DONE) {
		/* Refused: we stand in for the server; what the backend
		 * still says goes nowhere. */
		if (dir == LB_FLOW_DIR_ORIG) {
			lb_worker_rej_client(w, f, r, m, &pkt, now);
		} else {
			w->st.l7_rej_absorbed++;
			rte_pktmbuf_free(m);
		}
		return;
	}
	v = f->l7 == LB_L7_NONE
		    ? LB_L7_PASS
		    : lb_worker_l7_follow(w, f, dir, fr, &pkt, now);
	if (dir == LB_FLOW_DIR_REPLY && v == L7_RESET) {
		lb_flow_touch(w->ft, idx, dir, LB_TCP_RST, now);
		rte_pktmbuf_free(m);
		return;
	}
	flow_touch(w, f, idx, dir, fl, now);
	if (dir == LB_FLOW_DIR_ORIG && v != LB_L7_PASS &&
	    lb_worker_l7_admission(w, f, idx, m, &pkt, v, now))
		return;
	/* An fnat64 flow's client segments leave as IPv4 (its backend's
	 * come through worker64.c, never here). */
	if (lb_flow_is64(f))
		lb_worker_fnat64_out(w, m, p6, idx, now);
	else
		fwd6(w, m, p6, idx, dir, now);
	/* The last response before a refused pipelined request: the
	 * answer follows it. */
	if (dir == LB_FLOW_DIR_REPLY && v == LB_L7_REJECT)
		lb_worker_l7_refuse_late(w, f, idx, now);
	l7_closed(w, f);
}

/* ---- new flows ---- */

bool
lb_worker_flow6_first_ok(struct lb_worker *w, struct rte_mbuf *m,
			 struct lb_pkt6 *pkt, int s,
			 const struct lb_flow6_tuple *orig, uint64_t now)
{
	if (unlikely(lb_dpconf6_is_own(w->conf, orig->src))) {
		drop(w, m, LB_DROP_SRC_OURS);
		return false;
	}
	if (unlikely(!lb_pkt6_l4_csum_ok(frame_of(m), pkt))) {
		drop(w, m, LB_DROP_L4_CSUM);
		return false;
	}
	/* The per-source budget of new flows, as for IPv4 and before any
	 * state: a source is its /64 (a host is handed one, and an
	 * attacker its whole range), folded into the budget's 32-bit
	 * keys. Silently, as for IPv4. */
	if (unlikely(!lb_src_budget_take(w->srcb, src64_key(w, orig->src),
					 now))) {
		rte_pktmbuf_free(m);
		return false;
	}
	/* admission (admit-rate), as IPv4's L4 services */
	return !lb_worker_admit6_reject(w, m, s, orig->src, now);
}

void
lb_worker_flow6_open(struct lb_worker *w, struct rte_mbuf *m,
		     struct lb_pkt6 *pkt, int s,
		     const struct lb_flow6_tuple *orig, struct rte_mbuf *ack,
		     const struct lb_pkt *apkt, const struct lb_synp_conn *sc,
		     uint64_t now)
{
	uint32_t be, hold = LB_HOLD_NONE;
	struct lb_flow_key k;
	int rc;

	lb_flow6_key(w->ft, &k, orig);
	if (w->sched[s] == NULL ||
	    w->ops[s]->pick(w->sched[s], lb_flow_hash(w->dp->hash_seed, &k),
			    &w->rng, &be) != 0) {
		/* No backend to try: the SYN waits, as an IPv4 one. */
		if (pkt->proto == LB_IPPROTO_TCP && w->deferq[s] != NULL) {
			struct lb_trial t = {.orig = k, .svc = (uint16_t)s,
					     .hold = lb_worker_hold_syn(
						     w, m, ack, apkt, sc)};

			rte_pktmbuf_free(m);
			if (t.hold != LB_HOLD_NONE)
				lb_worker_defer_or_rst(w, &t, now);
			return;
		}
		drop(w, m, LB_DROP_NO_BACKEND);
		/* The proxy's client, established, hears of it. */
		if (ack != NULL)
			lb_worker_rst_client6(w, ack, now);
		return;
	}
	if (pkt->proto == LB_IPPROTO_TCP)
		hold = lb_worker_hold_syn(w, m, ack, apkt, sc);
	rc = flow6_start(w, m, pkt, s, orig, be, hold, 0, now);
	if (rc != 0) {
		if (sc == NULL || !lb_worker_synp_rst(w, hold, now))
			lb_worker_hold_release(w, hold);
		drop(w, m, rc == -EADDRNOTAVAIL ? LB_DROP_SNAT_FULL
			   : rc == -ENOSPC	 ? LB_DROP_FLOW_FULL
						 : LB_DROP_NO_FLOW);
		return;
	}
	w->st.flows_created++;
}

/* A new flow of IPv6 service @p s to a backend of either family
 * (fnat66, or fnat64 for an IPv4 one): its first trial, a TCP SYN
 * copied for the next ones. */
static void
flow6_new(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt6 *pkt,
	  int s, const struct lb_flow6_tuple *orig, uint64_t now)
{
	/* Only what opens a connection opens a flow; the rest gets a
	 * RST at the service's rst-rate, as IPv4's. */
	if (pkt->proto == LB_IPPROTO_TCP &&
	    (pkt->tcp_flags & (LB_TCP_SYN | LB_TCP_ACK | LB_TCP_RST)) !=
		    LB_TCP_SYN) {
		no_flow6(w, m, pkt, (uint32_t)s,
			 w->conf->svc[s].opts.flow[LB_CONF_FLOW_RST_RATE],
			 now);
		return;
	}
	if (lb_worker_flow6_first_ok(w, m, pkt, s, orig, now))
		lb_worker_flow6_open(w, m, pkt, s, orig, NULL, NULL, NULL,
				     now);
}

/* A packet to an IPv6 VIP (client side) or SNAT address (backend side):
 * its flow, or a new one. */
static void
fnat66(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt6 *pkt, int s,
       uint64_t now)
{
	struct lb_flow6_tuple t;
	enum lb_flow_dir dir;
	struct lb_flow *f;
	uint32_t idx;
	bool synp;
	int fl;

	tuple6_of(pkt, &t);
	idx = lb_flow6_lookup(w->ft, w->f6, &t, &dir);
	if (idx != LB_FLOW_NONE) {
		/* A packet of the side it did not come from is a spoof. */
		if ((s >= 0) != (dir == LB_FLOW_DIR_ORIG)) {
			drop(w, m, LB_DROP_NO_FLOW);
			return;
		}
		f = &lb_flow_entries(w->ft)[idx];
		synp = unlikely(w->synp_svc >> f->svc & 1) &&
		       pkt->proto == LB_IPPROTO_TCP;
		/* The SYN proxy's client, established, while the backend's
		 * handshake runs (worker_synp.c): its first data waits,
		 * unchecked, as IPv4's, since the backend has not seen it. */
		if (unlikely(f->state == LB_FLOW_SYN_SENT) &&
		    dir == LB_FLOW_DIR_ORIG && synp_holds(w, f, idx) &&
		    lb_worker_synp6_pend(w, f, idx, m, pkt, dir, now))
			return;
		/* A proxied backend's segment is checked in the client's
		 * numbers, which the tracking record keeps once the
		 * handshake is done; a client's is checked before it is
		 * translated, below. */
		if (synp && dir == LB_FLOW_DIR_REPLY)
			lb_worker_synp6_seg(w, f, idx, m, pkt, dir);
		/* The sequence checks first, as IPv4's: what they keep
		 * from the flow's state is kept from the trial's too. */
		fl = pkt->tcp_flags;
		if (pkt->proto == LB_IPPROTO_TCP &&
		    (fl = tcp_check6(w, f, idx, dir, m, pkt, now)) < 0)
			return;
		if (unlikely(f->state == LB_FLOW_SYN_SENT) &&
		    dir == LB_FLOW_DIR_REPLY && pkt->proto == LB_IPPROTO_TCP &&
		    lb_worker_trial6_answer(w, f, idx, m, (uint8_t)fl, now))
			return;
		/* The backend's SYN-ACK of a proxied flow completes its
		 * handshake, seen by the checks in its own numbers. */
		if (unlikely(synp_holds(w, f, idx)) &&
		    dir == LB_FLOW_DIR_REPLY &&
		    lb_worker_synp6_pend(w, f, idx, m, pkt, dir, now))
			return;
		/* An http flow past its trial (worker_l7.c), fnat66 or
		 * fnat64. */
		if (unlikely(f->l7 != LB_L7_NONE ||
			     f->state == LB_FLOW_SYN_RECV) &&
		    f->state != LB_FLOW_SYN_SENT &&
		    pkt->proto == LB_IPPROTO_TCP &&
		    w->conf->svc[f->svc].opts.http) {
			follow6(w, m, pkt, f, idx, dir, (uint8_t)fl, now);
			return;
		}
		if (synp && dir == LB_FLOW_DIR_ORIG)
			lb_worker_synp6_seg(w, f, idx, m, pkt, dir);
		/* fnat64 (worker64.c): its replies come as IPv4. */
		if (lb_flow_is64(f)) {
			lb_worker_fnat64_fwd(w, m, pkt, idx, (uint8_t)fl, now);
			return;
		}
		/* The SYN copy goes as the flow leaves SYN_SENT; a
		 * retransmitted SYN leaves the trial's timer, which measures
		 * the backend's silence, alone. */
		if (!(f->state == LB_FLOW_SYN_SENT &&
		      dir == LB_FLOW_DIR_ORIG &&
		      (pkt->tcp_flags & LB_TCP_SYN)))
			flow_touch(w, f, idx, dir, (uint8_t)fl, now);
		fwd6(w, m, pkt, idx, dir, now);
		return;
	}
	/* To a SNAT address: the bucket shared by them all, as IPv4's. */
	if (s < 0) {
		no_flow6(w, m, pkt, LB_CONF_MAX_SVCS, w->rst_snat_rate, now);
		return;
	}
	if (unlikely(w->synp_svc >> s & 1) && pkt->proto == LB_IPPROTO_TCP &&
	    lb_worker_synp6_client(w, m, pkt, s, &t, now))
		return;
	flow6_new(w, m, pkt, s, &t, now);
}

/*
 * A client-side ICMPv6 error (quoting VIP -> client, of fnat66 or
 * fnat64) whose flow this worker does not have goes round the workers
 * as IPv4's does (icmp_pass_next()), if it quotes an IPv6 service's VIP
 * and port: packet too big from a router on the client's path reaches
 * the worker whose queue the client's SYN came in on.
 */
static bool
icmp6_pass_on(struct lb_worker *w, struct rte_mbuf *m,
	      const struct lb_icmp6_err *ic)
{
	return lb_dpconf6_svc_find(&w->svc6, w->conf, ic->proto, ic->inner.src,
				   ic->inner.sport) >= 0 &&
	       icmp_pass_next(w, m);
}

/*
 * A packet too big below IPv6's minimum MTU has its MTU raised to it
 * before it is translated, counted as IPv4's frag-needed below
 * LB_NAT_MTU_FLOOR is (icmp_mtu_clamped): no IPv6 link is narrower
 * (RFC 8200 5), so only a forged error says less, and across fnat64 a
 * forged MTU of 100 would reach the IPv4 backend as 80, which it would
 * honour down to its own floor. Other errors are left as they are.
 */
void
lb_worker_icmp6_mtu_floor(struct lb_worker *w, struct rte_mbuf *m,
			  const struct lb_pkt6 *pkt)
{
	uint8_t *fr = frame_of(m);
	const uint8_t *icmp = fr + pkt->l4_off;

	if (icmp[0] == LB_ICMP6_PKT_TOO_BIG &&
	    rd32(icmp + 4) < LB_IPV6_MIN_MTU &&
	    lb_icmp6_set_mtu(fr, rte_pktmbuf_data_len(m), pkt,
			     LB_IPV6_MIN_MTU) == 0)
		w->st.icmp_mtu_clamped++;
}

/*
 * An ICMPv6 error quoting a packet of an IPv6 flow, translated for the
 * flow's other side as lb_worker_icmp_error() does for IPv4: above all
 * packet too big from the backend's path, for the client's path MTU
 * discovery. It goes to the worker that owns the quoted SNAT port, or
 * from the client's side round the workers (icmp6_pass_on()).
 */
static void
icmp6_error(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt6 *pkt,
	    uint64_t now)
{
	uint8_t *fr = frame_of(m);
	uint32_t len = rte_pktmbuf_data_len(m);
	struct lb_icmp6_tuple in;
	struct lb_icmp6_err ic;
	struct lb_flow6_tuple t;
	const struct lb_flow_key *k2;
	const uint8_t(*a)[16];
	enum lb_flow_dir dir;
	uint8_t to[16];
	uint32_t idx;
	int sn;

	if (lb_icmp6_err_parse(fr, len, pkt, &ic) != 0) {
		drop(w, m, LB_DROP_ICMP6);
		return;
	}
	sn = lb_dpconf6_snat_find(w->conf, pkt->dst);
	if (sn >= 0 && unlikely(w->conf->snat6[sn].port != m->port)) {
		drop(w, m, LB_DROP_SNAT_PORT);
		return;
	}
	if (sn >= 0) {
		uint32_t owner = lb_snat_owner(w->snat6, ic.inner.sport);

		if (owner != w->wid && owner < w->dp->nb_workers) {
			redirect(w, m, owner);
			return;
		}
	}
	/* The quoted packet went the other way. */
	memset(&t, 0, sizeof(t));
	memcpy(t.src, ic.inner.dst, 16);
	memcpy(t.dst, ic.inner.src, 16);
	t.sport = ic.inner.dport;
	t.dport = ic.inner.sport;
	t.proto = ic.proto;
	idx = lb_flow6_lookup(w->ft, w->f6, &t, &dir);
	if (idx == LB_FLOW_NONE) {
		if (sn < 0 && icmp6_pass_on(w, m, &ic))
			return;
		/* An error about one of the kernel's own connections. */
		drop_or_kernel6(w, m, pkt->dst, LB_DROP_NO_FLOW);
		return;
	}
	/* fnat64 (worker64.c): an ICMP error for the IPv4 backend. */
	if (lb_flow_is64(&lb_flow_entries(w->ft)[idx])) {
		lb_worker_icmp46_error(w, m, pkt, idx, dir, now);
		return;
	}
	/* The client sees VIP -> client quoting client -> VIP, the backend
	 * SNAT -> backend quoting backend -> SNAT. */
	k2 = &lb_flow_entries(w->ft)[idx].key[!dir];
	a = w->f6[idx].a[!dir];
	memcpy(in.src, a[0], 16);
	memcpy(in.dst, a[1], 16);
	in.sport = k2->sport;
	in.dport = k2->dport;
	memcpy(to, a[0], 16);
	if (lb_nat6_hop_dec(fr, pkt) != 0) {
		drop(w, m, LB_DROP_HOP_LIMIT);
		return;
	}
	lb_worker_icmp6_mtu_floor(w, m, pkt);
	if (lb_icmp6_err_rewrite(fr, len, pkt, a[1], a[0], &in) != 0) {
		drop(w, m, LB_DROP_ICMP6);
		return;
	}
	/* The SYN proxy's numbers (worker_backend.c). */
	if (unlikely(w->pp_used) && ic.proto == LB_IPPROTO_TCP &&
	    ic.inner_l4_off + 8u <= (uint32_t)ic.inner_l3_off + ic.quote_len)
		lb_worker_quote_seq(w, idx, fr + ic.inner_l4_off,
				    fr + pkt->l4_off, ic.l4csum, dir);
	w->st.icmp6_translated++;
	lb_worker_route_out6(w, m, to, now);
}

void
lb_worker_handle_ipv6(struct lb_worker *w, struct rte_mbuf *m, uint64_t now)
{
	const struct lb_dpconf *c = w->conf;
	struct lb_pkt6 pkt;
	enum lb_pkt6_verdict v;
	uint32_t end;
	int svc, sn;

	v = lb_pkt6_parse(frame_of(m), rte_pktmbuf_data_len(m), &pkt);
	w->st.verdict6[v]++;
	if (v != LB_PKT6_OK) {
		rte_pktmbuf_free(m);
		return;
	}
	if (unlikely((pkt.has_vlan ? pkt.vlan_tci & VLAN_VID_MASK : 0) !=
		     c->port_vlan[m->port])) {
		drop(w, m, LB_DROP_VLAN);
		return;
	}
	/* Ethernet padding is not part of the packet. */
	end = (uint32_t)pkt.l3_off + LB_IPV6_HDR_LEN + pkt.ip_plen;
	if (unlikely(rte_pktmbuf_pkt_len(m) > end))
		rte_pktmbuf_trim(m, (uint16_t)(rte_pktmbuf_pkt_len(m) - end));
	if (pkt.proto == LB_IPPROTO_ICMPV6) {
		handle_icmp6(w, m, &pkt, now);
		return;
	}
	svc = lb_dpconf6_svc_find(&w->svc6, c, pkt.proto, pkt.dst, pkt.dport);
	sn = svc < 0 ? lb_dpconf6_snat_find(c, pkt.dst) : -1;
	if (svc < 0 && sn < 0) {
		drop_or_kernel6(w, m, pkt.dst, LB_DROP_NOT_OURS);
		return;
	}
	if (sn >= 0 && unlikely(c->snat6[sn].port != m->port)) {
		drop(w, m, LB_DROP_SNAT_PORT);
		return;
	}
	if (pkt.flags & LB_PKT6_F_FRAG) {
		drop(w, m, LB_DROP_IP6_FRAG);
		return;
	}
	/* What we would forward must have a hop left (RFC 8200 3). */
	if (pkt.hop_limit <= 1) {
		drop(w, m, LB_DROP_HOP_LIMIT);
		return;
	}
	if (sn >= 0) {
		uint32_t owner = lb_snat_owner(w->snat6, pkt.dport);

		if (owner != w->wid && owner < w->dp->nb_workers) {
			redirect(w, m, owner);
			return;
		}
	}
	fnat66(w, m, &pkt, svc, now);
}
