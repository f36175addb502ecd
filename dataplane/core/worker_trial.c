/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Trials and the deferred queue (adaptive-request-dispatch-paper,
 * Algorithms 2 and 3): a SYN is copied so that a backend's refusal is
 * retried on the next backend round-robin; when every trial failed the
 * copy waits in the service's deferred queue, retried every retry gap and
 * answered with a RST when it expires.
 */
#include "worker_priv.h"

uint32_t
lb_worker_hold_put(struct lb_worker *w, struct rte_mbuf *m)
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

uint32_t
lb_worker_hold_take(struct lb_worker *w, struct rte_mbuf *m)
{
	uint32_t i;

	if (w->hold_nfree == 0) {
		w->st.syn_hold_full++;
		return LB_HOLD_NONE;
	}
	i = w->hold_free[--w->hold_nfree];
	w->hold[i] = m;
	return i;
}

struct rte_mbuf *
lb_worker_hold_out(struct lb_worker *w, uint32_t i)
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

void
lb_worker_hold_release(struct lb_worker *w, uint32_t i)
{
	if (i == LB_HOLD_NONE || i >= w->hold_cap || w->hold[i] == NULL)
		return;
	/* A SYN copy of the proxy's goes with what waits with it. */
	if (unlikely(w->synp_hold[i].state != LB_SYNP_NONE))
		lb_worker_synp_release(w, i);
	rte_pktmbuf_free(lb_worker_hold_out(w, i));
}

/* A trial's outcome, with the error count the scheduler now weighs. */
void
lb_worker_trial_feedback(struct lb_worker *w, uint32_t svc, uint32_t be,
			 bool ok)
{
	const struct lb_sched_ops *ops;
	void *st = lb_worker_sched_of(w, svc, be, &ops);
	uint32_t errs = ops->errors(st, be);

	w->bst[svc][be].sched_errors = errs;
	fb_put(w, ok ? LB_FB_TRIAL_OK : LB_FB_TRIAL_FAIL, svc, be, errs, 0);
}

/* The backend a SNAT port is taken towards, and the flow table to ask. */
struct snat_dst {
	const struct lb_flow_table *ft;
	uint32_t ip;
	uint16_t port;
	uint8_t proto;
};

/*
 * lb_snat_taken_fn: a pair is taken towards the backend when a flow's
 * reply key already says backend -> (ip, port); the flow table holds
 * every flow of this worker's ports, so no other state is needed.
 */
static bool
snat_taken(void *arg, uint32_t ip, uint16_t port)
{
	const struct snat_dst *d = arg;
	struct lb_flow_key k;

	lb_flow_key_set(&k, d->ip, ip, d->port, port, d->proto);
	return lb_flow_holds(d->ft, &k);
}

static void
snat_dst_of(const struct lb_worker *w, uint32_t svc, uint32_t be,
	    struct snat_dst *d)
{
	const struct lb_dpconf_svc *s = &w->conf->svc[svc];

	d->ft = w->ft;
	d->ip = s->be[be].ip;
	d->port = s->be[be].port;
	d->proto = s->proto;
}

/* Ticks of SNAT_FULL_SHIFT ns: how long a refusal is remembered. */
#define SNAT_FULL_SHIFT 20

/*
 * A refusal costs LB_SNAT_TRIES lookups that hit per address (about 8 us
 * with a table beyond the caches), so a flood at a backend whose ports
 * ran out would buy that with every SYN: the refusal is remembered for
 * the rest of its tick (about 1 ms), and the flood's SYNs meanwhile are
 * refused at the cost of one compare.
 */
int
lb_worker_snat_take(struct lb_worker *w, struct lb_trial *t, uint32_t be,
		    uint64_t now)
{
	uint32_t tick = (uint32_t)(now >> SNAT_FULL_SHIFT), *full;
	struct snat_dst d;

	if (w->snat == NULL)
		return -ENOSPC;
	full = &w->snat_full[t->svc][be];
	if (*full != 0 && (int32_t)(*full - tick) > 0)
		return -ENOSPC;
	snat_dst_of(w, t->svc, be, &d);
	if (lb_snat_port_alloc(w->snat, snat_taken, &d, &t->snat_ip,
			       &t->snat_port) == 0) {
		struct lb_flow_key k;

		/* The slot of the flow's backend-side key, which the
		 * flow's insert probes next, is nowhere in cache for a
		 * fresh port: its line comes in while the caller copies
		 * the SYN instead of in the insert's way. */
		lb_flow_key_set(&k, d.ip, t->snat_ip, d.port, t->snat_port,
				d.proto);
		lb_flow_prefetch(w->ft, lb_flow_hash(w->ft->seed, &k));
		return 0;
	}
	*full = tick + 1 != 0 ? tick + 1 : 1;
	return -ENOSPC;
}

/*
 * Gives trial @p t a SNAT port towards backend @p be: the earlier trial's
 * when no flow holds it towards @p be, so that the client's tuple keeps
 * one identity, else a new one. @return 0, or -ENOSPC with no port held.
 */
static int
snat_retake(struct lb_worker *w, struct lb_trial *t, uint32_t be,
	    uint64_t now)
{
	struct snat_dst d;

	snat_dst_of(w, t->svc, be, &d);
	if (!snat_taken(&d, t->snat_ip, t->snat_port))
		return 0;
	lb_snat_port_free(w->snat, t->snat_ip, t->snat_port);
	if (lb_worker_snat_take(w, t, be, now) == 0)
		return 0;
	w->st.drop[LB_DROP_SNAT_FULL]++;
	return -ENOSPC;
}

/*
 * Creates the flow of trial @p t->trials + 1 toward backend @p be and sends
 * the SYN (or first datagram) @p m there, from @p t's SNAT port.
 * @return 0, or a negative errno with @p m untouched.
 */
int
lb_worker_flow_start(struct lb_worker *w, struct rte_mbuf *m,
		     struct lb_pkt *pkt, const struct lb_trial *t, uint32_t be,
		     const struct lb_synp_conn *sc, uint64_t now)
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
	/* An entry that a spliced flow left has its offsets still. */
	if (unlikely(w->pp_used)) {
		memset(&w->spl[idx], 0, sizeof(w->spl[idx]));
		memset(&w->pp[idx], 0, sizeof(w->pp[idx]));
		memset(&w->synp[idx], 0, sizeof(w->synp[idx]));
	}
	if (pkt->proto == LB_IPPROTO_TCP) {
		struct lb_tcp_seg s;

		tcp_seg(&s, frame_of(m), pkt);
		lb_tcp_track_init(&w->trk[idx], &s);
	}
	f->flags = (uint8_t)((f->flags & ~LB_FLOW_F_USER_MASK) |
			     ((t->trials + 1) << TRIALS_SHIFT));
	f->l7 = t->hold;
	if (pkt->proto == LB_IPPROTO_TCP &&
	    unlikely(sc != NULL || (t->hold < w->hold_cap &&
				    w->synp_hold[t->hold].state != 0)))
		lb_worker_synp_flow(w, (uint32_t)idx, t->hold, sc);
	w->bst[t->svc][be].flows++;
	w->bst[t->svc][be].active++;
	if (unlikely(w->pp_svc >> t->svc & 1) &&
	    pkt->proto == LB_IPPROTO_UDP &&
	    lb_worker_pp_datagram(w, f, m, pkt))
		return 0;
	lb_worker_fwd(w, m, pkt, f, LB_FLOW_DIR_ORIG, now);
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

/* An IPv6 flow's trial (worker6.c): its folded key says so. */
static inline bool
trial_is6(const struct lb_trial *t)
{
	return t->orig.pad[0] == LB_FLOW_FAM6;
}

/* An fnat64 trial's port is of the IPv4 slice, as an IPv4 flow's. */
static void
trial_port_free(struct lb_worker *w, const struct lb_trial *t)
{
	lb_snat_port_free(trial_is6(t) && !t->v4_backend ? w->snat6 : w->snat,
			  t->snat_ip, t->snat_port);
}

/*
 * The next trial of IPv6 trial @p t on backend @p next (UINT32_MAX: no
 * more trials), from a fresh SNAT port of the slice of @p next's family
 * (fnat66 or fnat64); when none can start, or every trial failed, the
 * SYN copy waits in the deferred queue as an IPv4 one does.
 */
static void
trial6_next(struct lb_worker *w, struct lb_trial *t, uint32_t next,
	    uint64_t now)
{
	trial_port_free(w, t);
	if (next != UINT32_MAX &&
	    lb_worker_trial6_next(w, t, next, now) == 0) {
		w->st.syn_retries++;
		return;
	}
	lb_worker_defer_or_rst(w, t, now);
}

/*
 * Trial t->trials failed on t->be (its flow is gone, its SNAT port and SYN
 * copy are in @p t): Algorithm 2 moves to the next backend round-robin;
 * when every trial failed the SYN waits in the deferred queue.
 */
void
lb_worker_trial_failed(struct lb_worker *w, struct lb_trial *t, uint64_t now)
{
	const struct lb_dpconf_svc *svc = &w->conf->svc[t->svc];
	const struct lb_sched_ops *ops = w->ops[t->svc];
	void *st = w->sched[t->svc];
	struct rte_mbuf *m;
	struct lb_pkt pkt;
	uint32_t next;
	int rc;

	w->bst[t->svc][t->be].errors++;
	if (st == NULL || t->be >= svc->nb_be) {
		/* The service went away with the new table: no retry. */
		lb_worker_hold_release(w, t->hold);
		trial_port_free(w, t);
		return;
	}
	{
		const struct lb_sched_ops *bops;
		void *bst = lb_worker_sched_of(w, t->svc, t->be, &bops);

		bops->result(bst, t->be, false);
	}
	lb_worker_trial_feedback(w, t->svc, t->be, false);
	if (t->hold == LB_HOLD_NONE) {
		/* Nothing to resend: the client's own retransmission will
		 * start a new flow. */
		trial_port_free(w, t);
		return;
	}
	if (unlikely(trial_is6(t))) {
		trial6_next(w, t,
			    t->trials < trial_limit(svc) &&
					    ops->next(st, t->be, &next) == 0
				    ? next
				    : UINT32_MAX,
			    now);
		return;
	}
	rc = lb_worker_bind_next(w, t->hold, t->svc, t->be, &next);
	if (rc == -ENOENT)
		rc = ops->next(st, t->be, &next);
	if (t->trials < trial_limit(svc) && rc == 0) {
		if (snat_retake(w, t, next, now) != 0) {
			lb_worker_defer_or_rst(w, t, now);
			return;
		}
		m = rte_pktmbuf_copy(w->hold[t->hold], w->dp->pool, 0,
				     UINT32_MAX);
		if (m != NULL &&
		    lb_pkt_parse(frame_of(m), rte_pktmbuf_data_len(m), &pkt) ==
			    LB_PKT_IPV4 &&
		    lb_worker_flow_start(w, m, &pkt, t, next, NULL, now) ==
			    0) {
			w->st.syn_retries++;
			return;
		}
		if (m != NULL)
			rte_pktmbuf_free(m);
		else
			w->st.drop[LB_DROP_NOMBUF]++;
	}
	lb_snat_port_free(w->snat, t->snat_ip, t->snat_port);
	lb_worker_defer_or_rst(w, t, now);
}

void
lb_worker_defer_or_rst(struct lb_worker *w, struct lb_trial *t, uint64_t now)
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
			lb_worker_hold_release(w, (uint32_t)old);
			return;
		}
		w->st.drop[LB_DROP_DEFERQ_FULL]++;
	}
	if (lb_worker_synp_rst(w, t->hold, now))
		return;
	m = lb_worker_hold_out(w, t->hold);
	if (m != NULL)
		lb_worker_rst_client(w, m, now);
}

enum lb_deferq_verdict
lb_worker_on_deferq(enum lb_deferq_event ev, const struct lb_deferq_entry *e,
		    void *arg)
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
		    LB_PKT_IPV4)
			return lb_worker_deferq6_due(w, hold, m, now);
		svc = lb_dpconf_svc_find(w->conf, pkt.proto, pkt.dst,
					 pkt.dport);
		lb_flow_key_set(&k, pkt.src, pkt.dst, pkt.sport, pkt.dport,
				pkt.proto);
		if (svc < 0 || lb_flow_lookup(w->ft, &k, &dir) != LB_FLOW_NONE) {
			/* Service gone, or the client got through already. */
			rte_pktmbuf_free(m);
			lb_worker_hold_release(w, hold);
			return LB_DEFERQ_DONE;
		}
		{
			struct lb_trial t = { .orig = k, .svc = (uint16_t)svc,
					   .hold = hold };
			uint32_t be;
			/* A connection bound by its content stays in its
			 * pool. */
			int rc = lb_worker_bind_pick(w, hold, (uint32_t)svc,
						     &be);

			if (rc == -ENOENT && w->sched[svc] != NULL)
				rc = w->ops[svc]->pick(
					w->sched[svc],
					lb_flow_hash(w->dp->hash_seed, &k),
					&w->rng, &be);
			if (w->sched[svc] == NULL || w->snat == NULL ||
			    rc != 0 ||
			    lb_worker_snat_take(w, &t, be, now) != 0) {
				rte_pktmbuf_free(m);
				return LB_DEFERQ_KEEP;
			}
			if (lb_worker_flow_start(w, m, &pkt, &t, be, NULL, now) !=
			    0) {
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
	if (lb_worker_synp_rst(w, hold, now))
		return LB_DEFERQ_DONE;
	m = lb_worker_hold_out(w, hold);
	if (m != NULL)
		lb_worker_rst_client(w, m, now);
	return LB_DEFERQ_DONE;
}
