/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The worker's loop and lifecycle: the poll (receive, redirect ring,
 * exception path, transmit, feedback), expiry, housekeeping (the deferred
 * queues, neighbours), the idle back-off, and creating and freeing a
 * worker. The stages a packet goes through live beside it: worker_rx.c
 * (burst and parse), worker_client.c, worker_trial.c, worker_backend.c,
 * worker_l7.c, worker_neigh.c; worker_switch.c takes up new tables.
 */
#include "worker_priv.h"

void
lb_worker_tx_flush(struct lb_worker *w, uint16_t port)
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

/* Feedback is for lb-control: with none attached, a ring nobody drains
 * would only fill up. */
static inline void
fb_push(struct lb_worker *w, const struct lb_fb *r)
{
	if (w->fb == NULL || (w->dp->shm != NULL &&
			      atomic_load_explicit(&w->dp->shm->control_pid,
						   memory_order_relaxed) == 0))
		return;
	if (unlikely(w->fb_n == LB_FB_BUF))
		fb_flush(w);
	w->fb_buf[w->fb_n++] = *r;
}

void
lb_worker_fb_put_full(struct lb_worker *w, enum lb_fb_kind kind, uint32_t svc,
		      uint32_t be, uint16_t flags, uint32_t u32, uint32_t u32b,
		      uint64_t v)
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

	fb_push(w, &r);
}

void
lb_worker_fb_put_reject6(struct lb_worker *w, uint32_t svc, uint16_t flags,
			 uint8_t len, const uint8_t key[16])
{
	struct lb_fb r = {
		.ts_ns = w->now_ns,
		.svc = (uint16_t)svc,
		.be = len,
		.kind = LB_FB_REJECT,
		.worker = (uint8_t)w->wid,
		.flags = (uint16_t)(flags | LB_FB_F_REJ6),
	};

	memcpy(r.key6, key, sizeof(r.key6));
	fb_push(w, &r);
}

/*
 * An idle ESTABLISHED flow is forgotten: both ends may still hold the
 * connection and would send into silence. The flow keeps no sequence
 * numbers (it is one cache line), so each end gets a bare ACK from where
 * it saw its peer, at sequence numbers outside its window: an end that
 * still holds the connection answers with an ACK that carries exactly the
 * sequence number it expects (RFC 793, RFC 5961 section 5), that answer
 * now has no flow, and lb_worker_no_flow() resets it with that number; an end
 * whose socket is gone answers with a RST, which is never answered. One token
 * of the service's RST bucket per flow. An IPv6 flow's probes are written
 * by lb_worker_seg_send(), which gives each side its family (fnat64's
 * backend gets IPv4).
 */
static void
idle_probe(struct lb_worker *w, const struct lb_flow *f)
{
	/* The link header of a probe of an IPv6 flow: MACs for
	 * lb_worker_route_out6(), the ethertype lb_worker_seg_send() sets
	 * again for fnat64's IPv4 side. */
	static const uint8_t link6[14] = {[12] = 0x86, [13] = 0xdd};
	const struct lb_dpconf_svc *svc;
	int v6 = lb_flow_is6(f);

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
		uint64_t r = lb_xoshiro_next(&w->xo);
		struct rte_mbuf *m;
		int len;

		if (v6) {
			m = lb_worker_seg_alloc(w, link6, sizeof(link6));
			if (m == NULL)
				return;
			w->st.idle_probes++;
			lb_worker_seg_send(w, f, m, sizeof(link6),
					   d == LB_FLOW_DIR_ORIG, (uint32_t)r,
					   (uint32_t)(r >> 32), LB_TCP_ACK, 0,
					   NULL, 0, w->now_ns);
			continue;
		}
		m = rte_pktmbuf_alloc(w->dp->pool);
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
		lb_worker_route_out(w, m, k->src, w->now_ns);
	}
}

static void
on_expire(uint32_t idx, const struct lb_flow *f, void *arg)
{
	struct lb_worker *w = arg;
	int v6 = lb_flow_is6(f), keep;

	(void)idx;
	idle_probe(w, f);
	if (!v6 && f->state == LB_FLOW_UDP_UNREPLIED)
		w->st.udp_unreplied++;
	/* A SYN the backend never answered: that trial failed. The retry
	 * waits until the table is done with the flow (an expiry pass, or
	 * the insert that reclaimed it): the end of expire(). */
	keep = f->state == LB_FLOW_SYN_SENT && f->l7 != LB_HOLD_NONE &&
	       w->nb_pending < LB_EXPIRE_PENDING;
	if (keep)
		trial_snapshot(f, &w->pending[w->nb_pending++]);
	if (v6)
		lb_worker_flow6_forget(w, f, !keep);
	else
		lb_worker_flow_forget(w, f, !keep, !keep);
}

/*
 * Expiry, every poll that has flows due: at most LB_EXPIRE_BUDGET of
 * them, so the work follows the backlog of timed-out flows and a poll's
 * share of it stays bounded; then the retries of the failed trials it
 * (or a reclaim since the last poll) left.
 */
static void
expire(struct lb_worker *w, uint64_t now)
{
	if (lb_flow_expire_due(w->ft, now)) {
		uint64_t t0 = rte_rdtsc(), ns;
		unsigned int n = lb_flow_expire(w->ft, now, LB_EXPIRE_BUDGET,
						on_expire, w);

		ns = (uint64_t)((double)(rte_rdtsc() - t0) *
				w->dp->ns_per_tsc);
		w->expire_behind = n == LB_EXPIRE_BUDGET;
		w->st.expire_polls++;
		if (n > w->st.expire_max)
			w->st.expire_max = n;
		if (ns > w->st.expire_max_ns)
			w->st.expire_max_ns = ns;
	}
	/* Retries may create flows that reclaim others: those join the
	 * list behind and are retried in this same loop. */
	for (unsigned int i = 0; i < w->nb_pending; i++)
		lb_worker_trial_failed(w, &w->pending[i], now);
	w->nb_pending = 0;
}

struct overdue_count {
	const struct lb_snat *snat;
	uint64_t snat_ports;
};

static void
on_overdue(uint32_t idx, const struct lb_flow *f, void *arg)
{
	struct overdue_count *oc = arg;

	(void)idx;
	if (lb_snat_addr_index(oc->snat, f->key[LB_FLOW_DIR_REPLY].dst) >= 0)
		oc->snat_ports++;
}

/* The expiry gauges: nothing is overdue when the last pass finished
 * under its budget, else the backlog is counted, boundedly. */
static void
expiry_stats(struct lb_worker *w, uint64_t now)
{
	struct overdue_count oc = {.snat = w->snat};
	const struct lb_flow_stats *fs = &w->ft->stats;
	uint64_t expired = 0;

	w->st.flows_overdue =
		w->expire_behind ? lb_flow_overdue(w->ft, now, LB_OVERDUE_SCAN,
						   on_overdue, &oc)
				 : 0;
	w->st.snat_ports_overdue = oc.snat_ports;
	for (unsigned int s = 0; s < LB_FLOW_NB_STATES; s++)
		expired += fs->expired[s];
	w->st.flows_expired = expired;
	w->st.flows_reclaimed = fs->reclaimed;
}

static void
housekeeping(struct lb_worker *w, uint64_t now)
{
	struct lb_neigh_msg msg;
	uint32_t nsvc = w->conf->nb_svc;

	expiry_stats(w, now);
	if (w->l7 != NULL) {
		struct lb_l7_stats ls;

		lb_l7_stats_get(w->l7, &ls);
		w->st.l7_flows = ls.flows;
		w->st.l7_pool_full = ls.pool_full;
		w->st.l7_blocks_lost = ls.blocks_lost;
	}
	lb_worker_synp_house(w, now);
	if (unlikely(w->bind_old != LB_BIND_NONE))
		lb_worker_bind_house(w, now);
	if (unlikely(w->pp_used))
		lb_worker_pp_house(w, now);
	for (uint32_t s = 0; s < nsvc; s++)
		if (w->deferq[s] != NULL && lb_deferq_depth(w->deferq[s]) > 0)
			lb_deferq_poll(w->deferq[s], now, DEFERQ_BUDGET,
				       lb_worker_on_deferq, w);
	while (rte_ring_sc_dequeue_elem(w->neigh_in, &msg, sizeof(msg)) == 0)
		lb_worker_neigh_msg(w, &msg, now);
	{
		uint32_t ips[16];
		int n = lb_neigh_poll(w->neigh, now, ips, 16);

		for (int i = 0; i < n; i++) {
			uint16_t port;
			uint32_t nh, src;

			if (lb_dpconf_next_hop(w->conf, ips[i], &port, &nh,
					       &src) == 0)
				lb_worker_send_arp_request(w, port, src, ips[i],
							   NULL);
		}
	}
	lb_worker_neigh6_poll(w, now);
	lb_worker_neigh_view(w, now);
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
	uint32_t s, p;
	struct lb_pool_sched *ps;

	if (w->sched_todo != 0) {
		s = (uint32_t)__builtin_ctzll(w->sched_todo);
		if (w->ops[s] == NULL ||
		    w->ops[s]->build(w->sched[s], budget) == 0)
			w->sched_todo &= ~(1ull << s);
		return;
	}
	s = (uint32_t)__builtin_ctzll(w->pool_todo);
	p = (uint32_t)__builtin_ctz(w->pool_todo_of[s]);
	ps = &w->psched[s][p];
	if (ps->ops == NULL || ps->ops->build(ps->st, budget) == 0)
		w->pool_todo_of[s] &= (uint16_t)~(1u << p);
	if (w->pool_todo_of[s] == 0)
		w->pool_todo &= ~(1ull << s);
}

/* The longest a poll spent on tables and builds: @p tsc this time. */
static void
switch_time(struct lb_worker *w, uint64_t tsc)
{
	uint64_t ns = (uint64_t)((double)tsc * w->dp->ns_per_tsc);

	if (ns > w->st.switch_max_ns)
		w->st.switch_max_ns = ns;
}

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
	lb_flow_clock(w->ft, now);

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
		lb_worker_handle_burst(w, pkts, n, now);
	}
	{
		unsigned int n = rte_ring_sc_dequeue_burst(
			w->redirect, (void **)pkts, LB_BURST, NULL);

		w->st.redirect_in += n;
		total += n;
		w->in_redirect = true;
		lb_worker_handle_burst(w, pkts, n, now);
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
	expire(w, now);
	if (now >= w->next_house_ns) {
		housekeeping(w, now);
		w->next_house_ns = now + HOUSE_NS;
	}
	if (w->exc_out != NULL)
		lb_exc_flush(w);
	for (uint16_t p = 0; p < dp->nb_ports; p++)
		lb_worker_tx_flush(w, p);
	fb_flush(w);
	/* Schedulers a switch left to build: a slice per poll, after the
	 * bursts, so forwarding goes on while they are built. */
	if (unlikely((w->sched_todo | w->pool_todo) != 0)) {
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
		if (lb_worker_poll(w) != 0 ||
		    (w->sched_todo | w->pool_todo) != 0) {
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

void
lb_worker_free(struct lb_worker *w)
{
	if (w == NULL)
		return;
	for (uint32_t s = 0; s < LB_CONF_MAX_SVCS; s++) {
		if (w->sched[s] != NULL)
			w->ops[s]->destroy(w->sched[s]);
		lb_deferq_free(w->deferq[s]);
		for (uint32_t p = 0; p < LB_CONF_MAX_POOLS && w->psched != NULL;
		     p++)
			if (w->psched[s][p].st != NULL)
				w->psched[s][p].ops->destroy(
					w->psched[s][p].st);
	}
	for (uint32_t i = 0; i < w->hold_cap && w->hold != NULL; i++)
		if (w->hold[i] != NULL)
			rte_pktmbuf_free(w->hold[i]);
	rte_free(w->hold);
	rte_free(w->hold_free);
	rte_free(w->hold_since);
	rte_free(w->bst);
	rte_free(w->psched);
	rte_free(w->conf_buf[0]);
	rte_free(w->conf_buf[1]);
	rte_free(w->ft);
	rte_free(w->trk);
	rte_free(w->f6);
	rte_free(w->spl);
	rte_free(w->pp);
	rte_free(w->synp);
	rte_free(w->synp_hold);
	lb_worker_bind_fini(w);
	rte_free(w->snat);
	rte_free(w->snat6);
	if (w->neigh != NULL)
		lb_neigh_flush(w->neigh);
	lb_neigh_free(w->neigh);
	if (w->neigh6 != NULL)
		lb_neigh_flush(w->neigh6);
	lb_neigh_free(w->neigh6);
	rte_ring_free(w->redirect);
	rte_ring_free(w->neigh_in);
	rte_free(w->neigh_view);
	rte_ring_free(w->fb);
	for (uint32_t i = 0; w->rej != NULL && i < w->nb_rej; i++)
		lb_worker_gate_end(w, NULL, i, false, 0);
	rte_free(w->rej);
	lb_l7_pool_free(w->l7);
	lb_hdr_scratch_free(w->hscr);
	lb_admit_lc_free(w->admit);
	lb_src_budget_free(w->srcb);
	lb_hdr_db_free(w->hdb);
	rte_free(w);
}

/* The flow table, its TCP records and the SNAT slices, on @p socket. */
static int
flows_alloc(struct lb_worker *w, const struct lb_dpconf *c, int socket)
{
	struct lb_dp *dp = w->dp;
	uint16_t wid = w->wid;
	struct lb_flow_timeouts to;
	struct lb_snat_conf sc;
	uint32_t snat_ips[LB_CONF_MAX_SNATS];
	size_t sz;

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
		return -ENOMEM;
	}
	/* Room for the addresses of IPv6 flows beside every entry: a table
	 * may bring IPv6 services at any switch. */
	w->f6 = rte_zmalloc_socket("lb_flow6", lb_flow6_mem_size(dp->flows),
				   RTE_CACHE_LINE_SIZE, socket);
	if (w->f6 == NULL) {
		LOG(ERR, "worker %u: no memory for the addresses of %u IPv6 "
		    "flows", wid, dp->flows);
		return -ENOMEM;
	}
	w->trk = rte_zmalloc_socket("lb_tcp_track",
				    (size_t)dp->flows * sizeof(*w->trk),
				    RTE_CACHE_LINE_SIZE, socket);
	/* Splice records for every entry, whatever the services: a service
	 * may take the PROXY protocol up at any table switch. */
	w->spl = rte_zmalloc_socket("lb_tcp_splice",
				    (size_t)dp->flows * sizeof(*w->spl),
				    RTE_CACHE_LINE_SIZE, socket);
	w->pp = rte_zmalloc_socket("lb_pp_flow",
				   (size_t)dp->flows * sizeof(*w->pp),
				   RTE_CACHE_LINE_SIZE, socket);
	w->synp = rte_zmalloc_socket("lb_synp_flow",
				     (size_t)dp->flows * sizeof(*w->synp),
				     RTE_CACHE_LINE_SIZE, socket);
	if (w->trk == NULL || w->spl == NULL || w->pp == NULL ||
	    w->synp == NULL) {
		LOG(ERR, "worker %u: no memory for the TCP state of %u flows",
		    wid, dp->flows);
		return -ENOMEM;
	}

	/* Room for every SNAT address a table can hold, cut into this
	 * worker's slices now: addresses come and go with the tables
	 * (snat_switch()), which must not allocate. */
	memset(&sc, 0, sizeof(sc));
	sc.addrs = snat_ips;
	sc.nb_addrs = lb_worker_snat_active(c, snat_ips);
	sc.max_addrs = LB_CONF_MAX_SNATS;
	sc.port_min = dp->snat_port_min;
	sc.port_max = dp->snat_port_max;
	sc.nb_workers = dp->nb_workers;
	sc.worker_id = wid;
	sc.start = (uint32_t)lb_xoshiro_next(&w->xo);
	w->snat = rte_zmalloc_socket("lb_snat", lb_snat_mem_size(&sc),
				     RTE_CACHE_LINE_SIZE, socket);
	if (w->snat == NULL || lb_snat_init(w->snat, &sc) != 0) {
		LOG(ERR, "worker %u: SNAT ports (--snat-ports needs a port "
		    "per worker)", wid);
		return -ENOMEM;
	}
	sc.nb_addrs = lb_worker_snat6_active(w, c, snat_ips);
	w->snat6 = rte_zmalloc_socket("lb_snat6", lb_snat_mem_size(&sc),
				      RTE_CACHE_LINE_SIZE, socket);
	if (w->snat6 == NULL || lb_snat_init(w->snat6, &sc) != 0) {
		LOG(ERR, "worker %u: no memory for IPv6 SNAT ports", wid);
		return -ENOMEM;
	}
	return 0;
}

/* The neighbour table, the rings, the counters and the SYN copies. */
static int
rings_alloc(struct lb_worker *w, int socket)
{
	uint16_t wid = w->wid;
	char name[RTE_RING_NAMESIZE];
	struct lb_neigh_conf nc = {
		.capacity = NEIGH_CAP,
		.hash_seed = lb_xoshiro_next(&w->xo),
		.release = lb_worker_neigh_release,
		.release_arg = w,
	};

	w->neigh = lb_neigh_create(&nc);
	nc.ipv6 = 1;
	nc.hash_seed = lb_xoshiro_next(&w->xo);
	w->neigh6 = lb_neigh_create(&nc);
	snprintf(name, sizeof(name), "lb_redir_%u", wid);
	w->redirect = rte_ring_create(name, REDIRECT_RING, socket,
				      RING_F_SC_DEQ);
	snprintf(name, sizeof(name), "lb_neigh_%u", wid);
	w->neigh_in = rte_ring_create_elem(name, sizeof(struct lb_neigh_msg),
					   NEIGH_RING, socket, RING_F_SC_DEQ);
	w->neigh_view = rte_zmalloc_socket("lb_neigh_view",
					   sizeof(*w->neigh_view),
					   RTE_CACHE_LINE_SIZE, socket);
	snprintf(name, sizeof(name), "lb_fb_%u", wid);
	w->fb = rte_ring_create_elem(name, sizeof(struct lb_fb),
				     LB_FB_RING_SIZE, socket,
				     RING_F_SP_ENQ | RING_F_SC_DEQ);
	w->bst = rte_zmalloc_socket(
		"lb_bst", sizeof(*w->bst) * LB_CONF_MAX_SVCS,
		RTE_CACHE_LINE_SIZE, socket);
	w->psched = rte_zmalloc_socket(
		"lb_psched", sizeof(*w->psched) * LB_CONF_MAX_SVCS,
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
	w->synp_hold = rte_malloc_socket(
		"lb_hold", HOLD_CAP * sizeof(*w->synp_hold), 0, socket);
	if (w->neigh == NULL || w->neigh6 == NULL || w->redirect == NULL ||
	    w->neigh_in == NULL || w->neigh_view == NULL ||
	    w->fb == NULL || w->bst == NULL || w->psched == NULL ||
	    w->conf_buf[0] == NULL ||
	    w->conf_buf[1] == NULL || w->hold == NULL ||
	    w->hold_free == NULL || w->hold_since == NULL ||
	    w->synp_hold == NULL) {
		LOG(ERR, "worker %u: out of memory", wid);
		return -ENOMEM;
	}
	if (lb_worker_bind_init(w, socket) != 0) {
		LOG(ERR, "worker %u: out of memory", wid);
		return -ENOMEM;
	}
	if (lb_worker_synp_init(w) != 0) {
		LOG(ERR, "worker %u: no random secret for SYN cookies", wid);
		return -EIO;
	}
	for (uint32_t i = 0; i < HOLD_CAP; i++)
		w->hold_free[i] = HOLD_CAP - 1 - i;
	w->hold_nfree = HOLD_CAP;
	return 0;
}

/* HTTP following, admission and the budget of new flows per source,
 * when the dataplane has them. */
static int
l7_alloc(struct lb_worker *w, unsigned int lcore)
{
	struct lb_dp *dp = w->dp;
	uint16_t wid = w->wid;

	/* HTTP following: each worker scans with its own scratch. */
	if (dp->hdb != NULL && dp->l7_flows > 0) {
		w->hscr = lb_hdr_scratch_alloc(dp->hdb);
		w->l7 = w->hscr == NULL
				? NULL
				: lb_l7_pool_create(
					  dp->l7_flows, dp->hdb, w->hscr, NULL,
					  lb_worker_on_l7_obs,
					  lb_worker_on_l7_inflight, w);
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
			return -ENOMEM;
		}
		lb_l7_set_admit(w->l7, lb_worker_on_l7_admit);
		lb_l7_set_head(w->l7, lb_worker_on_l7_head);
	}

	if (dp->admit != NULL) {
		w->admit = lb_admit_lc_create(dp->admit, LB_ADMIT_LOCAL_DEFAULT,
					      &w->st.admit, w->st.admit_svc,
					      LB_CONF_MAX_SVCS);
		if (w->admit == NULL) {
			LOG(ERR, "worker %u: no memory for admission", wid);
			return -ENOMEM;
		}
	}
	if (dp->src_budget.rate != 0) {
		/* Secrets of this worker's own: its table's sets cannot be
		 * aimed at from outside, nor from another worker's. */
		uint64_t k0 = lb_xoshiro_next(&w->xo);

		w->srcb = lb_src_budget_create(&dp->src_budget, k0,
					       lb_xoshiro_next(&w->xo),
					       &w->st.src_budget);
		if (w->srcb == NULL) {
			int rc = -errno;

			LOG(ERR, "worker %u: no budget table of %u sources: %s",
			    wid, dp->src_budget.sources, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

struct lb_worker *
lb_worker_create(struct lb_dp *dp, uint16_t wid, unsigned int lcore)
{
	const struct lb_dpconf *c = lb_dp_conf(dp);
	struct lb_worker *w;
	int socket = rte_lcore_to_socket_id(lcore);

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
	if (flows_alloc(w, c, socket) != 0 || rings_alloc(w, socket) != 0 ||
	    l7_alloc(w, lcore) != 0)
		goto fail;

	w->sh.wid = wid;
	w->sh.lcore = lcore;
	w->sh.ft = w->ft;
	w->sh.fb = w->fb;
	w->sh.st = &w->st;
	w->sh.be = w->bst;
	w->sh.snat = w->snat;
	w->sh.snat6 = w->snat6;
	w->sh.neigh = w->neigh_view;
	lb_worker_switch(w, c);
	/* A new flow takes over a timed-out flow's SNAT port, tuple or
	 * entry at once, with the same goodbye as expiry gives it. */
	lb_flow_set_reaper(w->ft, on_expire, w);
	/* Not yet in the packet loop: the first schedulers are complete
	 * before the first packet. */
	while ((w->sched_todo | w->pool_todo) != 0)
		sched_build_slice(w, UINT32_MAX);
	w->st.conf_switches = 0;
	return w;
fail:
	lb_worker_free(w);
	return NULL;
}
