/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * /lb/ commands on DPDK's telemetry socket: counters summed over the
 * workers, read without stopping them (each counter is one aligned 64-bit
 * word written by one lcore, so a read sees an old or a new value, never
 * a torn one).
 */
#include <arpa/inet.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <rte_rcu_qsbr.h>
#include <rte_spinlock.h>
#include <rte_telemetry.h>

#include "dp.h"
#include "lb/neigh_view.h"
#include "pkt_parse6.h"

static struct lb_dp *tel_dp;
/* Telemetry may answer several clients at once, each on its own thread;
 * they share one RCU reader id, so one at a time reads the table. */
static rte_spinlock_t tel_lock = RTE_SPINLOCK_INITIALIZER;

static const struct lb_dpconf *
tel_conf_enter(void)
{
	rte_spinlock_lock(&tel_lock);
	if (tel_dp->shm != NULL)
		rte_rcu_qsbr_thread_online(tel_dp->shm->qsbr,
					   tel_dp->nb_workers);
	return lb_dp_conf(tel_dp);
}

static void
tel_conf_leave(void)
{
	if (tel_dp->shm != NULL)
		rte_rcu_qsbr_thread_offline(tel_dp->shm->qsbr,
					    tel_dp->nb_workers);
	rte_spinlock_unlock(&tel_lock);
}

static void
add_u64(struct rte_tel_data *d, const char *name, uint64_t v)
{
	rte_tel_data_add_dict_u64(d, name, v);
}

/*
 * Adds worker @p w's L7 entries and kept SYN copies in use now (read
 * while the worker runs: a snapshot, exact once it is idle).
 */
static void
held_now(const struct lb_worker *w, uint64_t *l7, uint64_t *holds)
{
	struct lb_l7_stats ls;

	if (w->l7 != NULL) {
		lb_l7_stats_get(w->l7, &ls);
		*l7 += ls.active;
	}
	*holds += w->hold_cap - w->hold_nfree;
}

/* Expiry's counters and gauges, summed over the workers. */
static const struct {
	const char *name;
	size_t off;
} expiry_sums[] = {
#define E(f) {#f, offsetof(struct lb_worker_stats, f)}
	E(flows_overdue), E(snat_ports_overdue), E(flows_expired),
	E(flows_reclaimed), E(expire_polls),
#undef E
};

static int
cmd_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct lb_worker_stats sum;
	struct lb_flow_stats fs;
	uint64_t active = 0, refused = 0, l7_active = 0, holds = 0;
	uint64_t switch_max = 0, expire_max = 0, expire_max_ns = 0;
	struct rte_tel_data *drop, *parse, *parse6;

	(void)cmd;
	(void)params;
	memset(&sum, 0, sizeof(sum));
	for (uint16_t i = 0; i < tel_dp->nb_workers; i++) {
		const uint64_t *src = (const uint64_t *)&tel_dp->w[i]->st;
		uint64_t *dst = (uint64_t *)&sum;

		for (size_t k = 0; k < sizeof(sum) / sizeof(uint64_t); k++)
			dst[k] += src[k];
		lb_flow_stats_get(tel_dp->w[i]->ft, &fs);
		active += fs.flows;
		refused += fs.refused;
		held_now(tel_dp->w[i], &l7_active, &holds);
		switch_max =
			RTE_MAX(switch_max, tel_dp->w[i]->st.switch_max_ns);
		expire_max = RTE_MAX(expire_max, tel_dp->w[i]->st.expire_max);
		expire_max_ns =
			RTE_MAX(expire_max_ns, tel_dp->w[i]->st.expire_max_ns);
	}
	rte_tel_data_start_dict(d);
	add_u64(d, "workers", tel_dp->nb_workers);
	add_u64(d, "rx", sum.rx);
	add_u64(d, "tx", sum.tx);
	add_u64(d, "flows_active", active);
	add_u64(d, "flows_created", sum.flows_created);
	add_u64(d, "flows_refused", sum.drop[LB_DROP_FLOW_FULL] +
					    sum.drop[LB_DROP_SNAT_FULL]);
	add_u64(d, "flow_table_refused", refused);
	for (size_t k = 0; k < RTE_DIM(expiry_sums); k++) {
		uint64_t v;

		memcpy(&v, (const char *)&sum + expiry_sums[k].off, sizeof(v));
		add_u64(d, expiry_sums[k].name, v);
	}
	add_u64(d, "expire_max", expire_max);
	add_u64(d, "expire_max_ns", expire_max_ns);
	add_u64(d, "syn_retries", sum.syn_retries);
	add_u64(d, "deferred", sum.deferred);
	add_u64(d, "deferq_joined", sum.deferq_joined);
	add_u64(d, "rst_sent", sum.rst_sent);
	add_u64(d, "idle_probes", sum.idle_probes);
	add_u64(d, "udp_unreplied", sum.udp_unreplied);
	add_u64(d, "rst_no_flow", sum.rst_no_flow);
	add_u64(d, "rst_limited", sum.rst_limited);
	add_u64(d, "syn_hold_full", sum.syn_hold_full);
	add_u64(d, "challenge_acks", sum.challenge_acks);
	add_u64(d, "pp_sent", sum.pp_sent);
	add_u64(d, "pp_resent", sum.pp_resent);
	add_u64(d, "synp_cookies", sum.synp_cookies);
	add_u64(d, "synp_acks", sum.synp_acks);
	add_u64(d, "synp_acks_bad", sum.synp_acks_bad);
	add_u64(d, "synp_acks_expired", sum.synp_acks_expired);
	add_u64(d, "synp_handshakes", sum.synp_handshakes);
	add_u64(d, "synp_held", sum.synp_held);
	add_u64(d, "synp_held_dropped", sum.synp_held_dropped);
	add_u64(d, "synp_syn_again", sum.synp_syn_again);
	add_u64(d, "synp_auto_on", sum.synp_auto_on);
	add_u64(d, "synp_auto_off", sum.synp_auto_off);
	add_u64(d, "bind_waits", sum.bind_waits);
	add_u64(d, "bind_routed", sum.bind_routed);
	add_u64(d, "bind_refused", sum.bind_refused);
	add_u64(d, "bind_dup", sum.bind_dup);
	add_u64(d, "rebind_kept", sum.rebind_kept);
	add_u64(d, "rebind_closed", sum.rebind_closed);
	add_u64(d, "rebind_unchecked", sum.rebind_unchecked);
	add_u64(d, "bind_gaveup_timeout", sum.bind_gaveup[LB_BIND_GU_TIMEOUT]);
	add_u64(d, "bind_gaveup_limit", sum.bind_gaveup[LB_BIND_GU_LIMIT]);
	add_u64(d, "bind_gaveup_unknown", sum.bind_gaveup[LB_BIND_GU_UNKNOWN]);
	add_u64(d, "bind_gaveup_malformed", sum.bind_gaveup[LB_BIND_GU_MALFORMED]);
	add_u64(d, "bind_gaveup_closed", sum.bind_gaveup[LB_BIND_GU_CLOSED]);
	add_u64(d, "bind_gaveup_full", sum.bind_gaveup[LB_BIND_GU_FULL]);
	add_u64(d, "bind_gaveup_no_backend", sum.bind_gaveup[LB_BIND_GU_NO_BACKEND]);
	add_u64(d, "src_budget_dropped", sum.src_budget.dropped);
	add_u64(d, "src_budget_evicted", sum.src_budget.evicted);
	add_u64(d, "redirect_out", sum.redirect_out);
	add_u64(d, "redirect_in", sum.redirect_in);
	add_u64(d, "arp_replies", sum.arp_replies);
	add_u64(d, "arp_requests", sum.arp_requests);
	add_u64(d, "echo_replies", sum.echo_replies);
	add_u64(d, "icmp_translated", sum.icmp_translated);
	add_u64(d, "icmp_mtu_clamped", sum.icmp_mtu_clamped);
	add_u64(d, "ipv6_rx", sum.verdict6[LB_PKT6_OK]);
	add_u64(d, "echo6_replies", sum.echo6_replies);
	add_u64(d, "nd_adverts", sum.nd_adverts);
	add_u64(d, "nd_solicits", sum.nd_solicits);
	add_u64(d, "nd_announces", sum.nd_announces);
	add_u64(d, "icmp6_translated", sum.icmp6_translated);
	add_u64(d, "nat64_out", sum.nat64_out);
	add_u64(d, "nat64_in", sum.nat64_in);
	add_u64(d, "nat64_mss_adjusted", sum.nat64_mss_adjusted);
	add_u64(d, "icmp64_translated", sum.icmp64_translated);
	add_u64(d, "idle_sleeps", sum.idle_sleeps);
	add_u64(d, "fb_dropped", sum.fb_dropped);
	add_u64(d, "l7_flows", sum.l7_flows);
	add_u64(d, "l7_pool_full", sum.l7_pool_full);
	add_u64(d, "l7_stopped", sum.l7_stopped);
	add_u64(d, "l7_db_errors", sum.l7_db_errors);
	add_u64(d, "l7_blocks_lost", sum.l7_blocks_lost);
	/* Gauges of what faults could leak: L7 entries, kept SYNs, mbufs. */
	add_u64(d, "l7_active", l7_active);
	add_u64(d, "syn_holds", holds);
	add_u64(d, "mbufs_in_use", rte_mempool_in_use_count(tel_dp->pool));
	add_u64(d, "conf_switches", sum.conf_switches);
	add_u64(d, "switch_max_ns", switch_max);
	add_u64(d, "exc_to_kernel", sum.exc_to_kernel);
	add_u64(d, "exc_from_kernel", sum.exc_from_kernel);
	add_u64(d, "conf_gen", tel_conf_enter()->gen);
	tel_conf_leave();

	parse = rte_tel_data_alloc();
	parse6 = rte_tel_data_alloc();
	drop = rte_tel_data_alloc();
	if (parse == NULL || parse6 == NULL || drop == NULL) {
		rte_tel_data_free(parse);
		rte_tel_data_free(parse6);
		rte_tel_data_free(drop);
		return 0;
	}
	/* Malformed frames, by parser verdict (those that were dropped). */
	rte_tel_data_start_dict(parse);
	for (int v = LB_PKT_DROP_FIRST; v < LB_PKT_VERDICT_MAX; v++)
		add_u64(parse, lb_pkt_verdict_name((enum lb_pkt_verdict)v),
			sum.verdict[v]);
	rte_tel_data_start_dict(parse6);
	for (int v = LB_PKT6_DROP_FIRST; v < LB_PKT6_VERDICT_MAX; v++)
		add_u64(parse6, lb_pkt6_verdict_name((enum lb_pkt6_verdict)v),
			sum.verdict6[v]);
	rte_tel_data_start_dict(drop);
	for (int r = 0; r < LB_DROP_MAX; r++)
		add_u64(drop, lb_drop_name((enum lb_drop)r), sum.drop[r]);
	rte_tel_data_add_dict_container(d, "malformed", parse, 0);
	rte_tel_data_add_dict_container(d, "malformed6", parse6, 0);
	rte_tel_data_add_dict_container(d, "drop", drop, 0);
	return 0;
}

static void
fmt_addr(char *buf, size_t n, uint8_t af, uint32_t ip, const uint8_t *ip6,
	 uint16_t port)
{
	char a[INET6_ADDRSTRLEN];

	if (af == LB_CONF_AF_INET6) {
		inet_ntop(AF_INET6, ip6, a, sizeof(a));
		snprintf(buf, n, "[%s]:%u", a, ntohs(port));
		return;
	}
	inet_ntop(AF_INET, &ip, a, sizeof(a));
	snprintf(buf, n, "%s:%u", a, ntohs(port));
}

/*
 * One entry per backend, named s<service>_b<backend> because telemetry
 * names allow only letters, digits, '_' and '/'.
 */
static int
cmd_backends(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct lb_dpconf *c = tel_conf_enter();

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	for (uint32_t s = 0; s < c->nb_svc; s++) {
		const struct lb_dpconf_svc *v = &c->svc[s];
		char svc[64], addr[56], name[32];

		if (v->state == LB_SVC_EMPTY)
			continue;
		fmt_addr(addr, sizeof(addr), v->af, v->vip, v->vip6, v->vport);
		snprintf(svc, sizeof(svc), "%s %s",
			 v->proto == LB_IPPROTO_TCP ? "tcp" : "udp", addr);
		for (uint32_t b = 0; b < v->nb_be; b++) {
			static const char *const state[] = {
				[LB_BE_EMPTY] = "empty",
				[LB_BE_ACTIVE] = "active",
				[LB_BE_DRAINING] = "draining",
				[LB_BE_REMOVED] = "removed",
			};
			struct rte_tel_data *e;
			uint64_t flows = 0, errors = 0, serr = 0, http = 0;
			uint64_t h5xx = 0;
			int64_t active = 0, inflight = 0;

			if (v->be[b].state == LB_BE_EMPTY)
				continue;
			e = rte_tel_data_alloc();
			if (e == NULL)
				break;
			for (uint16_t i = 0; i < tel_dp->nb_workers; i++) {
				const struct lb_worker *w = tel_dp->w[i];

				flows += w->bst[s][b].flows;
				active += w->bst[s][b].active;
				errors += w->bst[s][b].errors;
				serr += w->bst[s][b].sched_errors;
				http += w->bst[s][b].http_responses;
				h5xx += w->bst[s][b].http_5xx;
				inflight += w->bst[s][b].inflight;
			}
			fmt_addr(addr, sizeof(addr), v->be[b].af, v->be[b].ip,
				 v->be[b].ip6, v->be[b].port);
			rte_tel_data_start_dict(e);
			rte_tel_data_add_dict_string(e, "service", svc);
			rte_tel_data_add_dict_string(e, "addr", addr);
			rte_tel_data_add_dict_string(e, "state",
						     state[v->be[b].state]);
			rte_tel_data_add_dict_string(
				e, "health",
				v->be[b].health == LB_BE_HEALTH_UP ? "up"
								   : "down");
			rte_tel_data_add_dict_string(e, "sched",
						     v->opts.sched);
			add_u64(e, "weight", v->be[b].weight);
			add_u64(e, "flows_total", flows);
			add_u64(e, "flows_active",
				active > 0 ? (uint64_t)active : 0);
			add_u64(e, "errors", errors);
			add_u64(e, "sched_errors", serr);
			add_u64(e, "http_responses", http);
			add_u64(e, "http_5xx", h5xx);
			add_u64(e, "inflight", inflight > 0 ?
							  (uint64_t)inflight : 0);
			snprintf(name, sizeof(name), "s%u_b%u", s, b);
			rte_tel_data_add_dict_container(d, name, e, 0);
		}
	}
	tel_conf_leave();
	return 0;
}

/* One entry per worker (w0, w1, ...): where RSS and redirects put the
 * load, and which table each worker runs. */
static int
cmd_workers(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	for (uint16_t i = 0; i < tel_dp->nb_workers; i++) {
		const struct lb_worker *w = tel_dp->w[i];
		struct rte_tel_data *e = rte_tel_data_alloc();
		struct lb_flow_stats fs;
		uint64_t drops = 0, malformed = 0;
		char name[16];

		if (e == NULL)
			break;
		for (int r = 0; r < LB_DROP_MAX; r++)
			drops += w->st.drop[r];
		for (int v = LB_PKT_DROP_FIRST; v < LB_PKT_VERDICT_MAX; v++)
			malformed += w->st.verdict[v];
		for (int v = LB_PKT6_DROP_FIRST; v < LB_PKT6_VERDICT_MAX; v++)
			malformed += w->st.verdict6[v];
		lb_flow_stats_get(w->ft, &fs);
		rte_tel_data_start_dict(e);
		add_u64(e, "lcore", w->lcore);
		add_u64(e, "rx", w->st.rx);
		add_u64(e, "tx", w->st.tx);
		add_u64(e, "dropped", drops);
		add_u64(e, "malformed", malformed);
		add_u64(e, "flows_active", fs.flows);
		add_u64(e, "flows_created", w->st.flows_created);
		add_u64(e, "redirect_in", w->st.redirect_in);
		add_u64(e, "redirect_out", w->st.redirect_out);
		add_u64(e, "idle_sleeps", w->st.idle_sleeps);
		add_u64(e, "synp_cookies", w->st.synp_cookies);
		add_u64(e, "synp_auto_on", w->st.synp_auto_on);
		add_u64(e, "synp_auto_off", w->st.synp_auto_off);
		add_u64(e, "conf_gen", atomic_load_explicit(
					       &w->sh.conf_gen,
					       memory_order_acquire));
		snprintf(name, sizeof(name), "w%u", i);
		rte_tel_data_add_dict_container(d, name, e, 0);
	}
	return 0;
}

/* Neighbours of one family listed per worker in /lb/neigh: telemetry's
 * answer is bounded (16 KiB), lbctl neigh shows them all. */
#define TEL_NEIGH_MAX 64u

/* One worker's neighbours of one family: counters, then an entry per
 * neighbour as "ADDRESS MAC STATE PORT AGE_MS" (telemetry's dictionary
 * keys take no address), at most TEL_NEIGH_MAX. */
static int
neigh_family(struct rte_tel_data *d, const struct lb_neigh_view *v, int af)
{
	const struct lb_neigh_stats *st = &v->st[af];
	struct rte_tel_data *e = rte_tel_data_alloc();

	if (e == NULL)
		return -ENOMEM;
	rte_tel_data_start_dict(d);
	add_u64(d, "lookups", st->lookups);
	add_u64(d, "hits", st->hits);
	add_u64(d, "misses", st->misses);
	add_u64(d, "requests", st->requests);
	add_u64(d, "learned", st->learned);
	add_u64(d, "resolved", st->resolved);
	add_u64(d, "failed", st->failed);
	add_u64(d, "evicted", st->evicted);
	add_u64(d, "held", st->held);
	add_u64(d, "dropped", st->dropped);
	add_u64(d, "entries", st->entries);
	add_u64(d, "left_out", v->more[af]);
	rte_tel_data_start_array(e, RTE_TEL_STRING_VAL);
	for (uint32_t i = 0; i < v->nb[af] && i < TEL_NEIGH_MAX; i++) {
		const struct lb_neigh_view_entry *x = &v->e[af][i];
		char a[INET6_ADDRSTRLEN], line[RTE_TEL_MAX_STRING_LEN];

		inet_ntop(af == LB_NEIGH_VIEW_ND ? AF_INET6 : AF_INET, x->addr,
			  a, sizeof(a));
		snprintf(line, sizeof(line),
			 "%s %02x:%02x:%02x:%02x:%02x:%02x %s %d %lld", a,
			 x->mac[0], x->mac[1], x->mac[2], x->mac[3], x->mac[4],
			 x->mac[5],
			 lb_neigh_state_name(x->state),
			 x->port == LB_NEIGH_VIEW_NO_PORT ? -1 : x->port,
			 x->age_ns == UINT64_MAX
				 ? -1LL
				 : (long long)(x->age_ns / 1000000));
		rte_tel_data_add_array_string(e, line);
	}
	rte_tel_data_add_dict_container(d, "entries", e, 0);
	return 0;
}

/*
 * Per worker (w0, w1, ...), its ARP and IPv6 neighbour tables as its
 * snapshot has them (lb/neigh_view.h): asked of every worker, each
 * answering within a millisecond while it runs.
 */
static int
cmd_neigh(const char *cmd, const char *params, struct rte_tel_data *d)
{
	static const char *const fam[] = {"arp", "nd"};
	static struct lb_neigh_view v;
	uint64_t want[LB_MAX_WORKERS];
	uint32_t naps = 1000;
	int rc = 0;

	(void)cmd;
	(void)params;
	rte_spinlock_lock(&tel_lock);
	for (uint16_t i = 0; i < tel_dp->nb_workers; i++)
		want[i] = lb_neigh_view_ask(tel_dp->w[i]->neigh_view);
	rte_tel_data_start_dict(d);
	for (uint16_t i = 0; i < tel_dp->nb_workers && rc == 0; i++) {
		struct rte_tel_data *w = rte_tel_data_alloc();
		char name[16];

		if (w == NULL)
			break;
		rc = lb_neigh_view_copy(tel_dp->w[i]->neigh_view, want[i],
					&naps, &v);
		rte_tel_data_start_dict(w);
		for (int af = 0; af < LB_NEIGH_VIEW_AFS && rc == 0; af++) {
			struct rte_tel_data *f = rte_tel_data_alloc();

			if (f == NULL || neigh_family(f, &v, af) != 0) {
				rte_tel_data_free(f);
				break;
			}
			rte_tel_data_add_dict_container(w, fam[af], f, 0);
		}
		if (rc != 0)
			rte_tel_data_add_dict_string(w, "error",
						     "no answer from the worker");
		snprintf(name, sizeof(name), "w%u", i);
		rte_tel_data_add_dict_container(d, name, w, 0);
	}
	rte_spinlock_unlock(&tel_lock);
	return 0;
}

int
lb_telemetry_init(struct lb_dp *dp)
{
	int rc;

	tel_dp = dp;
	if (dp->shm != NULL)
		rte_rcu_qsbr_thread_register(dp->shm->qsbr, dp->nb_workers);
	rc = rte_telemetry_register_cmd(
		"/lb/stats", cmd_stats,
		"Dataplane counters summed over workers. Takes no parameters");
	if (rc == 0)
		rc = rte_telemetry_register_cmd(
			"/lb/backends", cmd_backends,
			"Per backend: state, weight, flows, errors. Takes no "
			"parameters");
	if (rc == 0)
		rc = rte_telemetry_register_cmd(
			"/lb/workers", cmd_workers,
			"Per worker: packets, drops, flows, table generation. "
			"Takes no parameters");
	if (rc == 0)
		rc = rte_telemetry_register_cmd(
			"/lb/neigh", cmd_neigh,
			"Per worker: ARP and IPv6 neighbours and their "
			"counters. Takes no parameters");
	return rc;
}
