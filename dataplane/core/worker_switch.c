/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Taking up a new table (RCU): the worker copies what lb-control
 * published, keeps the scheduler state and deferred queues of services
 * that did not change, rebuilds the others in slices, and moves its SNAT
 * slices to the addresses of the new table.
 */
#include "worker_priv.h"

/*
 * A backend's identity for the schedulers (Maglev's permutation is made
 * from it): its address and port, the same on every worker and every
 * host. An IPv6 address is folded by a fixed function, no secret, so
 * that hosts agree; its 47 bits keep backends apart as IPv4's 32 do, and
 * the top bit keeps it apart from every IPv4 one in a mixed pool.
 */
static uint64_t
be_id(const struct lb_dpconf_be *b)
{
	uint64_t h[2];

	if (b->af != LB_CONF_AF_INET6)
		return (uint64_t)b->ip << 16 | b->port;
	memcpy(h, b->ip6, sizeof(h));
	h[0] ^= h[1] * 0x9e3779b97f4a7c15ull;
	h[0] ^= h[0] >> 31;
	h[0] *= 0xbf58476d1ce4e5b9ull;
	h[0] ^= h[0] >> 29;
	return 1ull << 63 | (h[0] & 0x7fffffffffffull) << 16 | b->port;
}

static bool
same_svc(const struct lb_dpconf_svc *a, const struct lb_dpconf_svc *b)
{
	return a->state != LB_SVC_EMPTY && b->state != LB_SVC_EMPTY &&
	       a->proto == b->proto && a->vip == b->vip &&
	       a->vport == b->vport && a->af == b->af &&
	       (a->af != LB_CONF_AF_INET6 ||
		memcmp(a->vip6, b->vip6, sizeof(a->vip6)) == 0);
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
	/* IPv6 backends have ip 0: their whole address tells them apart. */
	return a->state != LB_BE_EMPTY && a->ip == b->ip &&
	       a->port == b->port && a->af == b->af &&
	       (a->af != LB_CONF_AF_INET6 ||
		memcmp(a->ip6, b->ip6, sizeof(a->ip6)) == 0);
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

/* Whether backend @p b of @p v takes new flows of pool @p pool, as the
 * schedulers see it: for the service's own (0), at their SYN. */
static bool
be_eligible(const struct lb_dpconf_svc *v, uint32_t b, uint32_t pool)
{
	return pool == 0 ? lb_dpconf_be_eligible(v, b) :
			   lb_dpconf_be_eligible_pool(v, b, pool);
}

/*
 * Whether pool @p p of service @p b (0: the service's own) needs the
 * scheduler state built for it in @p a: the same guards, and the same
 * backends (for a named pool, members), weights, eligibility and
 * health. A Maglev table takes milliseconds to build: rebuilding every
 * scheduler at every table change would stall a worker with ten of them
 * for tens of milliseconds, and lose what adaptive states learnt.
 */
static bool
same_sched(const struct lb_dpconf_svc *a, const struct lb_dpconf_svc *b,
	   uint32_t p)
{
	if (a->state != b->state || a->nb_be != b->nb_be ||
	    a->opts.err_memory != b->opts.err_memory ||
	    a->opts.min_volume != b->opts.min_volume ||
	    a->opts.max_eject != b->opts.max_eject ||
	    a->opts.panic != b->opts.panic)
		return false;
	for (uint32_t i = 0; i < a->nb_be; i++) {
		const struct lb_dpconf_be *x = &a->be[i], *y = &b->be[i];

		if (p != 0 && x->pool != p && y->pool != p)
			continue;
		if (x->ip != y->ip || x->af != y->af ||
		    memcmp(x->ip6, y->ip6, sizeof(x->ip6)) != 0 ||
		    x->port != y->port ||
		    x->weight != y->weight || x->health != y->health ||
		    x->up_gen != y->up_gen ||
		    (p != 0 && x->pool != y->pool) ||
		    be_eligible(a, i, p) != be_eligible(b, i, p))
			return false;
	}
	return true;
}

/*
 * A scheduler named @p name for pool @p pool of service @p v (slot
 * @p s), over all its backend slots, those of other pools not eligible,
 * so that backend indexes are slots everywhere. @p *st and @p *ops hold
 * the state it replaces (of @p old, the same service in the previous
 * table, or NULL): backends that keep their slot and pool keep the error
 * counts this worker learnt about them, unless their health check
 * brought them back up. NULL in both when the service takes no flows.
 */
static void
sched_remake(struct lb_worker *w, const struct lb_dpconf_svc *v,
	     const struct lb_dpconf_svc *old, uint32_t s, uint32_t pool,
	     const char *name, void **st, const struct lb_sched_ops **ops)
{
	const struct lb_sched_ops *nops = NULL;
	struct lb_sched_be be[LB_CONF_MAX_BES];
	void *nst = NULL;

	if (v->state == LB_SVC_ACTIVE && v->nb_be > 0)
		nops = lb_sched_find(name);
	if (nops != NULL) {
		for (uint32_t b = 0; b < v->nb_be; b++)
			be[b] = (struct lb_sched_be){
				be_id(&v->be[b]),
				v->be[b].weight ? v->be[b].weight : 1,
				be_eligible(v, b, pool)
			};
		nst = nops->create(be, v->nb_be);
		if (nst != NULL && nops->guard != NULL &&
		    nops->guard(nst, &(struct lb_sched_guard){
					     v->opts.err_memory,
					     v->opts.min_volume,
					     v->opts.max_eject,
					     v->opts.panic}) != 0) {
			nops->destroy(nst);
			nst = NULL;
			errno = ERANGE;
		}
		if (nst == NULL)
			LOG(ERR, "worker %u: scheduler %s of slot %u pool %u: "
				 "%s; the pool takes no new flows",
			    w->wid, nops->name, s, pool, strerror(errno));
	}
	if (nst != NULL && old != NULL && *st != NULL && *ops == nops) {
		for (uint32_t b = 0; b < v->nb_be && b < old->nb_be; b++)
			if (same_be(&old->be[b], &v->be[b]) &&
			    old->be[b].pool == v->be[b].pool &&
			    !be_recovered(&old->be[b], &v->be[b]))
				nops->set_errors(nst, b,
						 (*ops)->errors(*st, b));
		if (nops->inherit != NULL)
			nops->inherit(nst, *st);
	}
	if (*st != NULL)
		(*ops)->destroy(*st);
	*st = nst;
	*ops = nst != NULL ? nops : NULL;
}

/*
 * Scheduler state for service slot @p s of table @p c. A service the
 * scheduler sees unchanged keeps its state, else sched_remake(). A
 * scheduler with a costly build (ops->build) is built in slices between
 * bursts, answering from the lookup of the state it replaces meanwhile.
 */
static void
svc_sched_rebuild(struct lb_worker *w, const struct lb_dpconf *c, uint32_t s,
		  const struct lb_dpconf_svc *old)
{
	const struct lb_dpconf_svc *v = &c->svc[s];

	if (old != NULL && w->sched[s] != NULL &&
	    strcmp(old->opts.sched, v->opts.sched) == 0 && same_sched(old, v, 0))
		return;
	sched_remake(w, v, old, s, 0, v->opts.sched, &w->sched[s], &w->ops[s]);
	/* What lb-control shows is what the new state weighs with. */
	for (uint32_t b = 0; b < v->nb_be; b++)
		w->bst[s][b].sched_errors =
			w->sched[s] != NULL ? w->ops[s]->errors(w->sched[s], b)
					    : 0;
	if (w->sched[s] != NULL && w->ops[s]->build != NULL)
		w->sched_todo |= 1ull << s;
	else
		w->sched_todo &= ~(1ull << s);
}

/*
 * The schedulers of the named pools of slot @p s (table @p c, pools and
 * rules in @p pub), for a service that routes by content (w->bind_svc):
 * each over its members, with its own scheduler name. A pool whose name,
 * scheduler and members stayed keeps its state, whatever other pools of
 * the service did; one that came to another index is another pool.
 */
static void
svc_pools_rebuild(struct lb_worker *w, const struct lb_dpconf *c,
		  const struct lb_dpconf *pub, uint32_t s,
		  const struct lb_dpconf_svc *old)
{
	const struct lb_dpconf_svc *v = &c->svc[s];
	const struct lb_dpconf_pools *pp = &pub->pools[s];
	uint32_t nb = 0;

	if (s < c->nb_svc && (w->bind_svc >> s & 1) && pp->nb_pool > 1)
		nb = RTE_MIN(pp->nb_pool - 1, LB_CONF_MAX_POOLS);
	for (uint32_t p = 0; p < LB_CONF_MAX_POOLS; p++) {
		struct lb_pool_sched *ps = &w->psched[s][p];
		const struct lb_dpconf_pool *dp = &pp->pool[p + 1];
		bool named = p < nb &&
			     strcmp(ps->name, dp->name) == 0 &&
			     strcmp(ps->sched, dp->sched) == 0;

		if (p >= nb) {
			if (ps->st != NULL)
				ps->ops->destroy(ps->st);
			memset(ps, 0, sizeof(*ps));
			w->pool_todo_of[s] &= (uint16_t)~(1u << p);
			continue;
		}
		if (named && old != NULL && ps->st != NULL &&
		    same_sched(old, v, p + 1))
			continue;
		sched_remake(w, v, named ? old : NULL, s, p + 1, dp->sched,
			     &ps->st, &ps->ops);
		snprintf(ps->name, sizeof(ps->name), "%s", dp->name);
		snprintf(ps->sched, sizeof(ps->sched), "%s", dp->sched);
		if (ps->st != NULL && ps->ops->build != NULL)
			w->pool_todo_of[s] |= (uint16_t)(1u << p);
		else
			w->pool_todo_of[s] &= (uint16_t)~(1u << p);
	}
	if (w->pool_todo_of[s] != 0)
		w->pool_todo |= 1ull << s;
	else
		w->pool_todo &= ~(1ull << s);
	/* What lb-control shows of a pool's member is what its pool's
	 * scheduler weighs with. */
	for (uint32_t b = 0; nb > 0 && b < v->nb_be; b++) {
		uint32_t p = v->be[b].pool;

		if (p != 0 && p <= nb && w->psched[s][p - 1].st != NULL)
			w->bst[s][b].sched_errors =
				w->psched[s][p - 1].ops->errors(
					w->psched[s][p - 1].st, b);
	}
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
		lb_deferq_flush(w->deferq[s], lb_worker_on_deferq, w);
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
		[LB_CONF_FLOW_UDP_UNREPLIED] = LB_FLOW_UDP_UNREPLIED,
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
uint32_t
lb_worker_snat_active(const struct lb_dpconf *c, uint32_t *ips)
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

	missed = lb_snat_sync(w->snat, ips, lb_worker_snat_active(c, ips));
	if (missed > 0)
		LOG(ERR, "worker %u: no room for %d new SNAT address(es) "
			 "while old ones drain",
		    w->wid, missed);
	missed = lb_snat_sync(w->snat6, ips,
			      lb_worker_snat6_active(w, c, ips));
	if (missed > 0)
		LOG(ERR, "worker %u: no room for %d new IPv6 SNAT "
			 "address(es) while old ones drain",
		    w->wid, missed);
}

/* Whether table @p d announces IPv6 address @p ip on port @p port: a
 * local address or an active SNAT address of it, or an active VIP in one
 * of its prefixes (announce6_new()). */
static bool
has6(const struct lb_dpconf *d, const uint8_t *ip, uint16_t port)
{
	for (uint32_t i = 0; i < d->nb_addr6 && i < LB_CONF_MAX_ADDRS; i++)
		if (d->addr6[i].port == port &&
		    memcmp(d->addr6[i].ip, ip, 16) == 0)
			return true;
	for (uint32_t i = 0; i < d->nb_snat6 && i < LB_CONF_MAX_SNATS; i++)
		if (d->snat6[i].port == port && !d->snat6[i].draining &&
		    memcmp(d->snat6[i].ip, ip, 16) == 0)
			return true;
	for (uint32_t s = 0; s < d->nb_svc && s < LB_CONF_MAX_SVCS; s++) {
		const struct lb_dpconf_svc *v = &d->svc[s];

		if (v->state != LB_SVC_ACTIVE || v->af != LB_CONF_AF_INET6 ||
		    memcmp(v->vip6, ip, 16) != 0)
			continue;
		for (uint32_t i = 0; i < d->nb_addr6 && i < LB_CONF_MAX_ADDRS;
		     i++)
			if (d->addr6[i].port == port &&
			    lb_dpconf6_prefix_eq(ip, d->addr6[i].ip,
						 d->addr6[i].len))
				return true;
	}
	return false;
}

/* Announces one address on one port unless the previous table had it
 * there already. */
static void
announce6(struct lb_worker *w, const struct lb_dpconf *prev,
	  const uint8_t *ip, uint16_t port)
{
	if (port < w->dp->nb_ports && (prev == NULL || !has6(prev, ip, port)))
		lb_worker_send_na_announce(w, port, ip);
}

/*
 * Unsolicited advertisements (RFC 4861 7.2.6) of the IPv6 addresses a
 * new table brings, each on its port, so neighbours that cached another
 * MAC for them (the host before a fail-over) update at once. One worker
 * speaks for the host. VIPs are announced on the ports whose prefix
 * holds them; a VIP routed to us needs none.
 */
static void
announce6_new(struct lb_worker *w, const struct lb_dpconf *prev,
	      const struct lb_dpconf *c)
{
	for (uint32_t i = 0; i < c->nb_addr6 && i < LB_CONF_MAX_ADDRS; i++)
		announce6(w, prev, c->addr6[i].ip, c->addr6[i].port);
	for (uint32_t i = 0; i < c->nb_snat6 && i < LB_CONF_MAX_SNATS; i++)
		if (!c->snat6[i].draining)
			announce6(w, prev, c->snat6[i].ip, c->snat6[i].port);
	for (uint32_t s = 0; s < c->nb_svc && s < LB_CONF_MAX_SVCS; s++) {
		const struct lb_dpconf_svc *v = &c->svc[s];

		if (v->state != LB_SVC_ACTIVE || v->af != LB_CONF_AF_INET6)
			continue;
		for (uint32_t i = 0; i < c->nb_addr6 && i < LB_CONF_MAX_ADDRS;
		     i++)
			if (lb_dpconf6_prefix_eq(v->vip6, c->addr6[i].ip,
						 c->addr6[i].len))
				announce6(w, prev, v->vip6, c->addr6[i].port);
	}
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
	 * send (a deferred queue's RSTs route through it). Not the pools'
	 * and rules' part: lb_worker_bind_switch() copies the rules of the
	 * services that have some. */
	memcpy(c, pub, LB_DPCONF_WORKER_COPY);
	w->conf_pub = pub;
	w->conf = c;
	lb_dpconf6_svc_index_build(&w->svc6, c);
	if (w->wid == 0)
		announce6_new(w, prev, c);
	memset(to, 0, sizeof(to));
	w->pp_svc = 0;
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
				lb_deferq_flush(w->deferq[s],
						lb_worker_on_deferq, w);
				lb_deferq_free(w->deferq[s]);
				w->deferq[s] = NULL;
			}
			continue;
		}
		if (v->opts.proxy_proto != LB_CONF_PP_OFF)
			w->pp_svc |= 1ull << s;
		/* Every datagram of such a service takes the hook. */
		if (v->opts.proxy_proto != LB_CONF_PP_OFF &&
		    v->proto == LB_IPPROTO_UDP)
			w->pp_used = true;
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
	lb_worker_synp_switch(w);
	lb_worker_bind_switch(w, pub);
	/* After the rules: which services route decides which pools get a
	 * scheduler of their own. */
	for (uint32_t s = 0; s < LB_CONF_MAX_SVCS; s++) {
		const struct lb_dpconf_svc *old = NULL;

		if (prev != NULL && s < prev->nb_svc && s < c->nb_svc &&
		    same_svc(&prev->svc[s], &c->svc[s]))
			old = &prev->svc[s];
		svc_pools_rebuild(w, c, pub, s, old);
	}
	w->st.conf_switches++;
	atomic_store_explicit(&w->sh.conf_gen, c->gen, memory_order_release);
}
