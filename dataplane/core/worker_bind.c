/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Delayed binding (docs/dataplane.md, "Delayed binding"): on a service
 * with content routing rules, the SYN proxy's client is not given a
 * backend when its ACK proves the cookie. Its connection waits in a
 * binding slot for the first bytes of its stream; after each new segment
 * the whole prefix is read again (tls_sni.h, http_head.h: restartable,
 * so a ClientHello or a request head may be split anywhere), and once
 * the rules can decide, the pool they name gets the connection: a
 * backend of that pool, the SYN made from the client's ACK, and the
 * segments kept sent after the backend's SYN-ACK, as the SYN proxy sends
 * its one held segment. Nothing is acknowledged to the client meanwhile:
 * what it sends again is recognised by its sequence numbers and dropped.
 *
 * The slots are bounded (LB_BIND_CAP a worker, LB_BIND_BYTES and
 * LB_BIND_SEGS a connection, dp->bind_wait_ns of waiting) and taken only
 * by clients that proved their cookie, after the source budget and
 * admission: state a spoofed packet cannot create.
 */
#include "worker_priv.h"

#include "http_head.h"
#include "route_rules.h"
#include "tls_sni.h"

#define BIND_WAIT_DEFAULT_NS 3000000000ull
/* Waiting connections one housekeeping pass times out at most. */
#define BIND_HOUSE_BUDGET 64u

static inline bool
bind_data(uint32_t d)
{
	return d != LB_HOLD_NONE && (d & LB_HOLD_BIND) != 0;
}

static inline uint32_t
bucket_of(const struct lb_worker *w, const struct lb_flow_key *k)
{
	return (uint32_t)lb_flow_hash(w->ft->seed, k) & (LB_BIND_BUCKETS - 1);
}

static uint32_t
bind_find(const struct lb_worker *w, const struct lb_flow_key *k)
{
	uint32_t i = w->bind_head[bucket_of(w, k)];

	while (i != LB_BIND_NONE && !lb_flow_key_eq(&w->bind[i].key, k))
		i = w->bind[i].hnext;
	return i;
}

/* Takes waiting slot @p i out of the index and the age list. */
static void
bind_unlink(struct lb_worker *w, uint32_t i)
{
	struct lb_bind *b = &w->bind[i];
	uint32_t *p = &w->bind_head[bucket_of(w, &b->key)];

	while (*p != LB_BIND_NONE && *p != i)
		p = &w->bind[*p].hnext;
	if (*p == i)
		*p = b->hnext;
	if (b->prev != LB_BIND_NONE)
		w->bind[b->prev].next = b->next;
	else
		w->bind_old = b->next;
	if (b->next != LB_BIND_NONE)
		w->bind[b->next].prev = b->prev;
	else
		w->bind_new = b->prev;
	b->prev = b->next = b->hnext = LB_BIND_NONE;
}

/* Slot @p i is free again; its frames are gone or the caller's. */
static void
bind_put(struct lb_worker *w, uint32_t i)
{
	struct lb_bind *b = &w->bind[i];

	w->bind_mbufs -= b->nseg + (b->ack != NULL);
	if (b->state != LB_BIND_BOUND)
		bind_unlink(w, i);
	b->state = LB_BIND_FREE;
	b->nseg = 0;
	b->ack = NULL;
	w->bind_free[w->bind_nfree++] = i;
}

void
lb_worker_bind_free(struct lb_worker *w, uint32_t i)
{
	struct lb_bind *b;

	if (i >= LB_BIND_CAP || w->bind[i].state == LB_BIND_FREE)
		return;
	b = &w->bind[i];
	for (unsigned int s = 0; s < b->nseg; s++)
		rte_pktmbuf_free(b->seg[s]);
	rte_pktmbuf_free(b->ack);
	bind_put(w, i);
}

unsigned int
lb_worker_bind_out(struct lb_worker *w, uint32_t i, struct rte_mbuf **seg)
{
	struct lb_bind *b;
	unsigned int n;

	if (i >= LB_BIND_CAP || w->bind[i].state == LB_BIND_FREE)
		return 0;
	b = &w->bind[i];
	n = b->nseg;
	memcpy(seg, b->seg, n * sizeof(*seg));
	rte_pktmbuf_free(b->ack);
	bind_put(w, i);
	return n;
}

/* The answer to a connection refused or given up: a RST at the sequence
 * number its client expects, made from any frame it sent. */
static void
bind_rst(struct lb_worker *w, uint32_t i, uint64_t now)
{
	struct lb_bind *b = &w->bind[i];
	uint32_t seq = b->sc.cookie + 1;
	struct rte_mbuf *m;

	if (b->nseg > 0) {
		m = b->seg[--b->nseg];
	} else {
		m = b->ack;
		b->ack = NULL;
	}
	if (m != NULL)
		w->bind_mbufs--;
	lb_worker_bind_free(w, i);
	if (m != NULL)
		lb_worker_synp_rst_to(w, m, seq, now);
}

/*
 * A backend of pool @p pool of service slot @p s for the client of flow
 * hash @p hash: the pool's own scheduler (the service's for its own
 * pool), or, when it has none (its build failed), a weighted random pick
 * among the pool's backends that take new flows.
 */
static int
pool_pick(struct lb_worker *w, uint32_t s, uint32_t pool, uint64_t hash,
	  uint32_t *be)
{
	const struct lb_dpconf_svc *v = &w->conf->svc[s];
	const struct lb_sched_ops *ops = w->ops[s];
	void *st = w->sched[s];
	uint64_t sum = 0, r;

	if (pool != 0 && pool <= LB_CONF_MAX_POOLS) {
		ops = w->psched[s][pool - 1].ops;
		st = w->psched[s][pool - 1].st;
	}
	if (st != NULL)
		return ops->pick(st, hash, &w->rng, be);
	for (uint32_t b = 0; b < v->nb_be; b++)
		if (lb_dpconf_be_eligible_pool(v, b, pool))
			sum += v->be[b].weight ? v->be[b].weight : 1;
	if (sum == 0)
		return -ENOENT;
	r = lb_rng_below(&w->rng, sum);
	for (uint32_t b = 0; b < v->nb_be; b++) {
		uint64_t wt;

		if (!lb_dpconf_be_eligible_pool(v, b, pool))
			continue;
		wt = v->be[b].weight ? v->be[b].weight : 1;
		if (r < wt) {
			*be = b;
			return 0;
		}
		r -= wt;
	}
	return -ENOENT;
}

/* The pool of the connection whose SYN copy is @p hold, or -1 when it
 * is not bound by its content. */
static int
hold_pool(const struct lb_worker *w, uint32_t hold)
{
	uint32_t d;

	if (hold >= w->hold_cap || w->synp_hold[hold].state != LB_SYNP_PEND)
		return -1;
	d = w->synp_hold[hold].data;
	if (!bind_data(d) || (d & ~LB_HOLD_BIND) >= LB_BIND_CAP)
		return -1;
	return w->bind[d & ~LB_HOLD_BIND].pool;
}

int
lb_worker_bind_next(struct lb_worker *w, uint32_t hold, uint32_t s,
		    uint32_t be, uint32_t *next)
{
	const struct lb_dpconf_svc *v = &w->conf->svc[s];
	int pool = hold_pool(w, hold);

	if (pool < 0)
		return -ENOENT;
	if (pool > 0 && pool <= (int)LB_CONF_MAX_POOLS &&
	    w->psched[s][pool - 1].st != NULL) {
		const struct lb_pool_sched *ps = &w->psched[s][pool - 1];

		return ps->ops->next(ps->st, be, next) == 0 ? 0 : -EAGAIN;
	}
	for (uint32_t k = 1; k <= v->nb_be; k++) {
		uint32_t b = (be + k) % v->nb_be;

		if (b != be && lb_dpconf_be_eligible_pool(v, b, (uint32_t)pool)) {
			*next = b;
			return 0;
		}
	}
	return -EAGAIN;
}

int
lb_worker_bind_pick(struct lb_worker *w, uint32_t hold, uint32_t s,
		    uint32_t *be)
{
	int pool = hold_pool(w, hold);
	const struct lb_bind *b;

	if (pool < 0)
		return -ENOENT;
	b = &w->bind[w->synp_hold[hold].data & ~LB_HOLD_BIND];
	if (pool_pick(w, s, (uint32_t)pool,
		      lb_flow_hash(w->dp->hash_seed, &b->key), be) != 0)
		return -EAGAIN;
	return 0;
}

/*
 * Connection @p i goes to pool @p pool: a backend of it, a SNAT port,
 * the SYN made from the client's ACK, a SYN copy that carries the
 * segments kept, and the flow entry (the first trial).
 */
static void
bind_connect(struct lb_worker *w, uint32_t i, uint32_t pool, uint64_t now)
{
	struct lb_bind *b = &w->bind[i];
	struct rte_mbuf *ref = b->nseg > 0 ? b->seg[0] : b->ack, *s;
	struct lb_trial t = {.orig = b->key, .svc = b->svc,
			     .hold = LB_HOLD_NONE};
	struct lb_pkt rpkt, spkt;
	enum lb_flow_dir dir;
	uint32_t be;
	int rc;

	if (lb_flow_lookup(w->ft, &b->key, &dir) != LB_FLOW_NONE) {
		/* The client got through another way meanwhile. */
		lb_worker_bind_free(w, i);
		return;
	}
	if (pool_pick(w, b->svc, pool, lb_flow_hash(w->dp->hash_seed, &b->key),
		      &be) != 0) {
		w->st.bind_gaveup[LB_BIND_GU_NO_BACKEND]++;
		w->st.drop[LB_DROP_NO_BACKEND]++;
		bind_rst(w, i, now);
		return;
	}
	if (ref == NULL ||
	    lb_pkt_parse(frame_of(ref), rte_pktmbuf_data_len(ref), &rpkt) !=
		    LB_PKT_IPV4 ||
	    (s = lb_worker_synp_syn_of(w, ref, &rpkt, &b->so, &b->sc,
				       &spkt)) == NULL) {
		bind_rst(w, i, now);
		return;
	}
	if (lb_worker_snat_take(w, &t, be, now) != 0) {
		drop(w, s, LB_DROP_SNAT_FULL);
		bind_rst(w, i, now);
		return;
	}
	t.hold = lb_worker_hold_put(w, s);
	if (t.hold == LB_HOLD_NONE) {
		rte_pktmbuf_free(s);
		lb_snat_port_free(w->snat, t.snat_ip, t.snat_port);
		bind_rst(w, i, now);
		return;
	}
	/* From now on the slot belongs to the SYN copy: later segments
	 * find the flow entry, and its trials stay in the pool. */
	bind_unlink(w, i);
	b->state = LB_BIND_BOUND;
	b->pool = (uint16_t)pool;
	w->synp_hold[t.hold] = b->sc;
	w->synp_hold[t.hold].data = LB_HOLD_BIND | i;
	rc = lb_worker_flow_start(w, s, &spkt, &t, be, &b->sc, now);
	if (rc != 0) {
		lb_worker_synp_rst(w, t.hold, now);
		lb_snat_port_free(w->snat, t.snat_ip, t.snat_port);
		drop(w, s, rc == -ENOSPC ? LB_DROP_FLOW_FULL : LB_DROP_NO_FLOW);
		return;
	}
	w->st.flows_created++;
	w->st.bind_routed++;
}

static const char ans_404[] = "HTTP/1.1 404 Not Found\r\n"
			      "Content-Type: text/plain\r\n"
			      "Content-Length: 10\r\n"
			      "Connection: close\r\n\r\n"
			      "Not Found\n";
static const char ans_421[] = "HTTP/1.1 421 Misdirected Request\r\n"
			      "Content-Type: text/plain\r\n"
			      "Content-Length: 20\r\n"
			      "Connection: close\r\n\r\n"
			      "Misdirected Request\n";

/* The window field of what the worker sends the client itself: room for
 * its last segments, in whatever scale it reads it. */
#define DONE_WIN 1024

/* Sends client frame @p m of connection @p b back to it as a segment of
 * the worker's own. */
static void
bind_reply(struct lb_worker *w, const struct lb_bind *b, struct rte_mbuf *m,
	   uint32_t seq, uint32_t ack, uint8_t flags, const void *data,
	   uint16_t len, uint64_t now)
{
	struct lb_flow f = {.key[LB_FLOW_DIR_ORIG] = b->key};
	struct lb_pkt pkt;

	if (lb_pkt_parse(frame_of(m), rte_pktmbuf_data_len(m), &pkt) !=
	    LB_PKT_IPV4) {
		rte_pktmbuf_free(m);
		return;
	}
	lb_worker_seg_send(w, &f, m, pkt.l3_off, true, seq, ack, flags,
			   DONE_WIN, data, len, now);
}

/*
 * Connection @p i, an HTTP request, refused with an answer: the answer
 * and a FIN in the server's first sequence numbers, acknowledging the
 * request. The slot stays until the wait ends, to take in the client's
 * last segments (a RST for them would race with the answer) and
 * acknowledge its FIN.
 */
static void
bind_answer(struct lb_worker *w, uint32_t i, const char *ans, uint16_t len,
	    uint64_t now)
{
	struct lb_bind *b = &w->bind[i];
	struct rte_mbuf *m = b->seg[--b->nseg];

	w->bind_mbufs--;
	for (unsigned int s = 0; s < b->nseg; s++)
		rte_pktmbuf_free(b->seg[s]);
	rte_pktmbuf_free(b->ack);
	w->bind_mbufs -= b->nseg + (b->ack != NULL);
	b->nseg = 0;
	b->ack = NULL;
	b->state = LB_BIND_DONE;
	b->fin_seq = b->sc.cookie + 1 + len + 1;
	bind_reply(w, b, m, b->sc.cookie + 1, b->sc.seq + b->len,
		   LB_TCP_ACK | LB_TCP_PSH | LB_TCP_FIN, ans, len, now);
}

/* What rule action @p a says of connection @p i, whose first bytes are
 * an HTTP request when @p http. */
static void
bind_act(struct lb_worker *w, uint32_t i, struct lb_route_action a,
	 bool http, uint64_t now)
{
	if (a.what == LB_ROUTE_POOL) {
		bind_connect(w, i, a.pool, now);
		return;
	}
	w->st.bind_refused++;
	if (http && w->bind[i].nseg > 0 && a.what == LB_ROUTE_REFUSE_404)
		bind_answer(w, i, ans_404, sizeof(ans_404) - 1, now);
	else if (http && w->bind[i].nseg > 0 &&
		 a.what == LB_ROUTE_REFUSE_421)
		bind_answer(w, i, ans_421, sizeof(ans_421) - 1, now);
	else
		bind_rst(w, i, now);
}

/* A client segment @p m of connection @p i, answered and closed: its
 * FIN is acknowledged, the rest taken in. */
static void
bind_done_seg(struct lb_worker *w, uint32_t i, struct rte_mbuf *m,
	      const struct lb_pkt *pkt, uint64_t now)
{
	struct lb_bind *b = &w->bind[i];
	uint32_t seq = tcp_word(frame_of(m), pkt, 4);

	if (pkt->tcp_flags & LB_TCP_RST) {
		rte_pktmbuf_free(m);
		lb_worker_bind_free(w, i);
		return;
	}
	if (!(pkt->tcp_flags & LB_TCP_FIN)) {
		rte_pktmbuf_free(m);
		return;
	}
	bind_reply(w, b, m, b->fin_seq, seq + pkt->payload_len + 1,
		   LB_TCP_ACK, NULL, 0, now);
	lb_worker_bind_free(w, i);
}

/* Counts what decided for connection @p i: rule @p rule or the default
 * (LB_ROUTE_NO_RULE). */
static inline void
rule_hit(struct lb_worker *w, uint32_t i, int rule)
{
	uint32_t r = rule >= 0 && (uint32_t)rule < LB_ROUTE_FLAT_RULES
			     ? (uint32_t)rule
			     : LB_ROUTE_FLAT_RULES;

	w->st.rule_hits[w->bind[i].svc][r]++;
}

/* Connection @p i given up for @p why: the default action, or a RST
 * for a stream that is broken TLS or HTTP. */
static void
bind_giveup(struct lb_worker *w, uint32_t i, enum lb_bind_giveup why,
	    uint64_t now)
{
	w->st.bind_gaveup[why]++;
	if (why == LB_BIND_GU_MALFORMED || why == LB_BIND_GU_CLOSED) {
		bind_rst(w, i, now);
		return;
	}
	rule_hit(w, i, LB_ROUTE_NO_RULE);
	bind_act(w, i,
		 lb_route_flat_action_of(&w->route[w->bind[i].svc],
					 LB_ROUTE_NO_RULE),
		 false, now);
}

/* Reads the prefix of connection @p i again; acts once it decides. */
static void
bind_decide(struct lb_worker *w, uint32_t i, uint64_t now)
{
	struct lb_bind *b = &w->bind[i];
	const struct lb_route_flat *rf = &w->route[b->svc];
	struct lb_tls_hello th;
	struct lb_http_req q;
	int v, rule;

	v = lb_tls_sni(b->buf, b->len, &th);
	switch (v) {
	case LB_TLS_SNI_NEED_MORE:
		return;
	case LB_TLS_SNI_FOUND:
	case LB_TLS_SNI_NONE:
		rule = lb_route_flat_match_sni(rf, th.sni,
					       v == LB_TLS_SNI_FOUND ?
						       th.sni_len :
						       0);
		rule_hit(w, i, rule);
		bind_act(w, i, lb_route_flat_action_of(rf, rule), false, now);
		return;
	case LB_TLS_SNI_TOO_LONG:
		bind_giveup(w, i, LB_BIND_GU_LIMIT, now);
		return;
	case LB_TLS_SNI_NOT_TLS:
		break;
	default:
		bind_giveup(w, i, LB_BIND_GU_MALFORMED, now);
		return;
	}
	switch (lb_http_head(b->buf, b->len, LB_BIND_BYTES, &q)) {
	case LB_HTTP_HEAD_NEED_MORE:
		return;
	case LB_HTTP_HEAD_FOUND:
		rule = lb_route_flat_match_http(rf, &q);
		rule_hit(w, i, rule);
		bind_act(w, i, lb_route_flat_action_of(rf, rule), true, now);
		return;
	case LB_HTTP_HEAD_NOT_HTTP:
		bind_giveup(w, i, LB_BIND_GU_UNKNOWN, now);
		return;
	case LB_HTTP_HEAD_TOO_LONG:
		bind_giveup(w, i, LB_BIND_GU_LIMIT, now);
		return;
	default:
		bind_giveup(w, i, LB_BIND_GU_MALFORMED, now);
		return;
	}
}

enum store {
	STORED,	 /* new bytes kept */
	TAKEN,	 /* nothing new: dropped, counted */
	AGAIN,	 /* bytes already kept, sent again: dropped, counted */
	OVER,	 /* over the bounds: @p m still the caller's */
};

/*
 * Keeps client segment @p m of connection @p b if it brings the next
 * bytes of its stream. One sent again (wholly before what is kept) is
 * dropped; one after a gap too, since the client sends the missing one
 * again; one that overlaps keeps its new bytes only, and goes to the
 * backend whole, which takes the overlap as any retransmission.
 */
static enum store
bind_store(struct lb_worker *w, struct lb_bind *b, struct rte_mbuf *m,
	   const struct lb_pkt *pkt)
{
	const uint8_t *fr = frame_of(m);
	uint32_t seq = tcp_word(fr, pkt, 4), next = b->sc.seq + b->len;
	uint32_t len = pkt->payload_len, off;

	if (len == 0) {
		rte_pktmbuf_free(m);
		return TAKEN;
	}
	if ((int32_t)(seq + len - next) <= 0) {
		w->st.bind_dup++;
		rte_pktmbuf_free(m);
		return AGAIN;
	}
	if ((int32_t)(seq - next) > 0) {
		w->st.synp_held_dropped++;
		rte_pktmbuf_free(m);
		return TAKEN;
	}
	/* Its bytes choose the pool: they must be the client's. */
	if (unlikely(!l4_csum_ok(m, pkt))) {
		drop(w, m, LB_DROP_L4_CSUM);
		return TAKEN;
	}
	if (w->bind_mbufs >= LB_BIND_MBUFS) {
		/* The worker keeps enough: sent again, later. */
		w->st.synp_held_dropped++;
		rte_pktmbuf_free(m);
		return TAKEN;
	}
	off = next - seq;
	if (m->nb_segs > 1 || b->nseg == LB_BIND_SEGS ||
	    b->len + (len - off) > LB_BIND_BYTES)
		return OVER;
	memcpy(b->buf + b->len, fr + pkt->payload_off + off, len - off);
	b->len += len - off;
	b->seg[b->nseg++] = m;
	w->bind_mbufs++;
	w->st.synp_held++;
	return STORED;
}

/* Client segment @p m (parsed in @p pkt) of waiting connection @p i. */
static void
bind_feed(struct lb_worker *w, uint32_t i, struct rte_mbuf *m,
	  const struct lb_pkt *pkt, uint64_t now)
{
	struct lb_bind *b = &w->bind[i];

	if (b->state == LB_BIND_DONE) {
		bind_done_seg(w, i, m, pkt, now);
		return;
	}
	if (pkt->tcp_flags & LB_TCP_RST) {
		/* No backend has heard of it: nothing to pass on. */
		rte_pktmbuf_free(m);
		w->st.bind_gaveup[LB_BIND_GU_CLOSED]++;
		lb_worker_bind_free(w, i);
		return;
	}
	switch (bind_store(w, b, m, pkt)) {
	case STORED:
		break;
	case TAKEN:
	case AGAIN:
		return;
	case OVER:
		/* Dropped; sent again, it reaches the backend chosen. */
		w->st.synp_held_dropped++;
		rte_pktmbuf_free(m);
		bind_giveup(w, i, LB_BIND_GU_LIMIT, now);
		return;
	}
	if (pkt->tcp_flags & LB_TCP_FIN) {
		/* The client says all it will say: its stream decides now
		 * or never. A FIN kept goes to the backend with it. */
		bind_decide(w, i, now);
		if (w->bind[i].state == LB_BIND_WAIT)
			bind_giveup(w, i, LB_BIND_GU_CLOSED, now);
		return;
	}
	bind_decide(w, i, now);
}

bool
lb_worker_bind_seg(struct lb_worker *w, struct rte_mbuf *m,
		   const struct lb_pkt *pkt, const struct lb_flow_key *k,
		   uint64_t now)
{
	uint32_t i;

	if (w->bind_nfree == LB_BIND_CAP || (pkt->tcp_flags & LB_TCP_SYN))
		return false;
	i = bind_find(w, k);
	if (i == LB_BIND_NONE)
		return false;
	bind_feed(w, i, m, pkt, now);
	return true;
}

void
lb_worker_bind_open(struct lb_worker *w, struct rte_mbuf *m,
		    const struct lb_pkt *pkt, int svc_idx,
		    const struct lb_flow_key *k, const struct lb_synp_conn *sc,
		    const struct lb_syncookie_opts *so, uint64_t now)
{
	struct lb_bind *b;
	uint32_t i, h;

	if (w->bind_nfree == 0) {
		/* The client's data, sent again, proves the cookie again. */
		w->st.bind_gaveup[LB_BIND_GU_FULL]++;
		rte_pktmbuf_free(m);
		return;
	}
	i = w->bind_free[--w->bind_nfree];
	b = &w->bind[i];
	b->key = *k;
	b->sc = *sc;
	b->so = *so;
	b->since = now;
	b->len = 0;
	b->svc = (uint16_t)svc_idx;
	b->pool = 0;
	b->state = LB_BIND_WAIT;
	b->nseg = 0;
	b->ack = NULL;
	h = bucket_of(w, k);
	b->hnext = w->bind_head[h];
	w->bind_head[h] = i;
	b->next = LB_BIND_NONE;
	b->prev = w->bind_new;
	if (w->bind_new != LB_BIND_NONE)
		w->bind[w->bind_new].next = i;
	else
		w->bind_old = i;
	w->bind_new = i;
	w->st.bind_waits++;
	if (pkt->payload_len == 0 && !(pkt->tcp_flags & LB_TCP_FIN)) {
		/* Kept to answer the client should nothing else come. */
		if (w->bind_mbufs < LB_BIND_MBUFS) {
			b->ack = m;
			w->bind_mbufs++;
		} else {
			rte_pktmbuf_free(m);
		}
		return;
	}
	bind_feed(w, i, m, pkt, now);
}

int
lb_worker_bind_early(struct lb_worker *w, uint32_t d, struct rte_mbuf *m,
		     const struct lb_pkt *pkt)
{
	uint32_t i = d & ~LB_HOLD_BIND;
	enum store st;

	if (!bind_data(d) || i >= LB_BIND_CAP ||
	    w->bind[i].state != LB_BIND_BOUND)
		return 0;
	st = bind_store(w, &w->bind[i], m, pkt);
	if (st == OVER) {
		w->st.synp_held_dropped++;
		rte_pktmbuf_free(m);
	}
	return st == AGAIN ? 2 : 1;
}

void
lb_worker_bind_house(struct lb_worker *w, uint64_t now)
{
	uint64_t wait = w->dp->bind_wait_ns ? w->dp->bind_wait_ns :
					      BIND_WAIT_DEFAULT_NS;

	for (unsigned int n = 0; n < BIND_HOUSE_BUDGET &&
				 w->bind_old != LB_BIND_NONE &&
				 now - w->bind[w->bind_old].since >= wait;
	     n++)
		if (w->bind[w->bind_old].state == LB_BIND_DONE)
			lb_worker_bind_free(w, w->bind_old);
		else
			bind_giveup(w, w->bind_old, LB_BIND_GU_TIMEOUT, now);
}

/*
 * A later request head of a routed keep-alive connection (l7.h): the
 * rules read it again. One that would choose another pool than the one
 * the connection's backend is in stays where it is (`rebind off`,
 * docs/dataplane.md "Delayed binding"), or is refused by the admission
 * asked right after (`rebind close`); a head the rules could not read
 * (cut by segments, or not a valid head) is counted and goes on.
 */
void
lb_worker_on_l7_head(void *owner, uint32_t tag, uint32_t entry,
		     const uint8_t *head, size_t len)
{
	struct lb_worker *w = owner;
	uint32_t s = tag >> 16, be = tag & 0xffffu;
	const struct lb_dpconf_svc *v;
	struct lb_route_action a;
	struct lb_http_req q;

	lb_worker_rebind_done(w);
	if (s >= LB_CONF_MAX_SVCS || !(w->bind_svc >> s & 1))
		return;
	v = &w->conf->svc[s];
	if (head == NULL || be >= v->nb_be ||
	    lb_http_head(head, len, len, &q) != LB_HTTP_HEAD_FOUND) {
		w->st.rebind_unchecked++;
		return;
	}
	a = lb_route_flat_action_of(&w->route[s],
				    lb_route_flat_match_http(&w->route[s], &q));
	if (a.what == LB_ROUTE_POOL && a.pool == v->be[be].pool)
		return;
	if (v->opts.rebind == LB_CONF_REBIND_CLOSE)
		w->rebind_hit = entry + 1; /* lb_worker_on_l7_admit() */
	else
		w->st.rebind_kept++;
}

/* Whether rules @p f route anything: some rule, or a default other than
 * the service's own pool. */
static bool
routes(const struct lb_route_flat *f)
{
	return f->n > 0 || f->def.what != LB_ROUTE_POOL || f->def.pool != 0;
}

void
lb_worker_bind_switch(struct lb_worker *w, const struct lb_dpconf *pub)
{
	uint64_t svc = 0;

	/* The rules live past the worker's copy of the table: those of the
	 * services that have some are copied, the others cost nothing. */
	for (uint32_t s = 0; s < pub->nb_svc && s < LB_CONF_MAX_SVCS; s++) {
		const struct lb_dpconf_svc *v = &pub->svc[s];
		const struct lb_route_flat *f = &pub->pools[s].rules;

		if (v->state == LB_SVC_EMPTY || v->proto != LB_IPPROTO_TCP ||
		    v->opts.synp.mode == LB_CONF_SYNP_OFF || !routes(f))
			continue;
		memcpy(&w->route[s], f, sizeof(*f));
		svc |= 1ull << s;
	}
	w->bind_svc = svc;
	/* Connections of a service that routes no more are let go: the
	 * client's first data, sent again, proves its cookie and starts
	 * the flow the way of the service now. */
	for (uint32_t i = w->bind_old, n; i != LB_BIND_NONE; i = n) {
		n = w->bind[i].next;
		if (!(svc >> w->bind[i].svc & 1))
			lb_worker_bind_free(w, i);
	}
}

int
lb_worker_bind_init(struct lb_worker *w, int socket)
{
	w->route = rte_zmalloc_socket(
		"lb_route", LB_CONF_MAX_SVCS * sizeof(*w->route), 0, socket);
	w->bind = rte_zmalloc_socket("lb_bind", LB_BIND_CAP * sizeof(*w->bind),
				     RTE_CACHE_LINE_SIZE, socket);
	w->bind_head = rte_malloc_socket(
		"lb_bind", LB_BIND_BUCKETS * sizeof(*w->bind_head), 0, socket);
	w->bind_free = rte_malloc_socket(
		"lb_bind", LB_BIND_CAP * sizeof(*w->bind_free), 0, socket);
	if (w->route == NULL || w->bind == NULL || w->bind_head == NULL ||
	    w->bind_free == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < LB_BIND_BUCKETS; i++)
		w->bind_head[i] = LB_BIND_NONE;
	for (uint32_t i = 0; i < LB_BIND_CAP; i++)
		w->bind_free[i] = LB_BIND_CAP - 1 - i;
	w->bind_nfree = LB_BIND_CAP;
	w->bind_old = w->bind_new = LB_BIND_NONE;
	return 0;
}

void
lb_worker_bind_fini(struct lb_worker *w)
{
	for (uint32_t i = 0; i < LB_BIND_CAP && w->bind != NULL; i++)
		lb_worker_bind_free(w, i);
	rte_free(w->route);
	rte_free(w->bind);
	rte_free(w->bind_head);
	rte_free(w->bind_free);
}
