/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The workers' families of /metrics (source "workers"): each worker's
 * counters from its shared statistics, its flow table and the feedback
 * drained from its ring, labelled worker="N". Apart from metrics.c
 * because they read the dataplane's per-worker memory, not the view's
 * services and backends.
 */
#include <stddef.h>
#include <stdint.h>

#include "lb/flow_table.h"
#include "lb/pkt_parse.h"
#include "pkt_parse6.h"
#include "metrics_priv.h"

static const struct {
	const char *name;
	const char *help;
	size_t off;
} worker_fams[] = {
#define W(n, f, h)                                                             \
	{                                                                      \
		"lb_" n "_total", h, offsetof(struct lb_worker_stats, f)       \
	}
	W("rx_packets", rx, "Frames received."),
	W("tx_packets", tx, "Frames sent."),
	W("flows_created", flows_created, "Flows created."),
	W("syn_retries", syn_retries, "SYNs sent again to the next backend."),
	W("deferred", deferred,
	  "New connections queued after every trial failed."),
	W("deferq_joined", deferq_joined,
	  "Retransmitted SYNs that joined their queued connection."),
	W("rst_sent", rst_sent, "RSTs sent to clients."),
	W("idle_probes", idle_probes,
	  "Ends of expired idle connections probed for a RST."),
	W("udp_unreplied", udp_unreplied,
	  "UDP flows expired before their backend sent a datagram."),
	W("rst_no_flow", rst_no_flow,
	  "RSTs answered to TCP segments without a flow."),
	W("rst_limited", rst_limited,
	  "RSTs not sent: over the service's rst-rate."),
	W("syn_hold_full", syn_hold_full,
	  "SYNs not kept for a retry because the copy pool was empty."),
	W("challenge_acks", challenge_acks,
	  "Challenge ACKs sent for RSTs in window but not exact."),
	W("proxy_headers_sent", pp_sent,
	  "PROXY protocol headers sent to backends."),
	W("proxy_headers_resent", pp_resent,
	  "PROXY protocol headers sent again for a backend that missed one."),
	W("synproxy_cookies", synp_cookies,
	  "SYN-ACKs with a SYN cookie sent by the SYN proxy."),
	W("synproxy_acks", synp_acks,
	  "ACKs whose SYN cookie checked: flows the SYN proxy began."),
	W("synproxy_acks_forged", synp_acks_bad,
	  "ACKs to a SYN proxy service whose cookie was forged."),
	W("synproxy_acks_expired", synp_acks_expired,
	  "ACKs whose SYN cookie was too old."),
	W("synproxy_handshakes", synp_handshakes,
	  "Backend handshakes the SYN proxy completed."),
	W("synproxy_held", synp_held,
	  "Client segments held while the backend handshake ran."),
	W("synproxy_held_dropped", synp_held_dropped,
	  "Client segments dropped while the backend handshake ran."),
	W("synproxy_syn_again", synp_syn_again,
	  "SYNs sent to a backend again because the client sent again what "
	  "its handshake was to carry."),
	W("synproxy_auto_on", synp_auto_on,
	  "Times synproxy auto turned on for a service on a worker."),
	W("synproxy_auto_off", synp_auto_off,
	  "Times synproxy auto turned off again."),
	W("bind_waits", bind_waits,
	  "Connections that waited for the first bytes choosing their pool."),
	W("bind_routed", bind_routed,
	  "Connections given a pool and a backend by their first bytes."),
	W("bind_refused", bind_refused,
	  "Connections refused by a routing rule or the default (RST)."),
	W("bind_dup", bind_dup,
	  "Client segments already kept while waiting, dropped."),
	W("rebind_kept", rebind_kept,
	  "Later requests of a routed keep-alive connection that the rules "
	  "would give another pool, kept on the first."),
	W("rebind_closed", rebind_closed,
	  "Later requests of a routed connection that the rules would give "
	  "another pool, answered with a 421 and Connection: close."),
	W("rebind_unchecked", rebind_unchecked,
	  "Later request heads of a routed connection the rules could not "
	  "read again (cut by segments, invalid)."),
	{"lb_bind_gaveup_timeout_total",
	 "Connections given up while waiting: no decision within the wait.",
	 offsetof(struct lb_worker_stats, bind_gaveup) +
		 LB_BIND_GU_TIMEOUT * sizeof(uint64_t)},
	{"lb_bind_gaveup_limit_total",
	 "Connections given up while waiting: over the bytes or segments kept.",
	 offsetof(struct lb_worker_stats, bind_gaveup) +
		 LB_BIND_GU_LIMIT * sizeof(uint64_t)},
	{"lb_bind_gaveup_unknown_total",
	 "Connections given up while waiting: neither TLS nor HTTP/1.x.",
	 offsetof(struct lb_worker_stats, bind_gaveup) +
		 LB_BIND_GU_UNKNOWN * sizeof(uint64_t)},
	{"lb_bind_gaveup_malformed_total",
	 "Connections given up while waiting: a broken ClientHello or request head.",
	 offsetof(struct lb_worker_stats, bind_gaveup) +
		 LB_BIND_GU_MALFORMED * sizeof(uint64_t)},
	{"lb_bind_gaveup_closed_total",
	 "Connections given up while waiting: the client reset or closed first.",
	 offsetof(struct lb_worker_stats, bind_gaveup) +
		 LB_BIND_GU_CLOSED * sizeof(uint64_t)},
	{"lb_bind_gaveup_full_total",
	 "Connections given up while waiting: no room to wait.",
	 offsetof(struct lb_worker_stats, bind_gaveup) +
		 LB_BIND_GU_FULL * sizeof(uint64_t)},
	{"lb_bind_gaveup_no_backend_total",
	 "Connections given up while waiting: no backend in the pool chosen.",
	 offsetof(struct lb_worker_stats, bind_gaveup) +
		 LB_BIND_GU_NO_BACKEND * sizeof(uint64_t)},
	W("redirect_out", redirect_out,
	  "Replies handed to the worker that owns their flow."),
	W("redirect_in", redirect_in, "Replies received from other workers."),
	W("arp_replies", arp_replies, "ARP replies sent."),
	W("arp_requests", arp_requests, "ARP requests sent."),
	W("echo_replies", echo_replies, "ICMP echo replies sent."),
	W("icmp_translated", icmp_translated,
	  "ICMP errors translated for a flow."),
	W("icmp_mtu_clamped", icmp_mtu_clamped,
	  "Frag-needed and packet too big errors whose MTU was raised to the floor."),
	W("ipv6_echo_replies", echo6_replies, "ICMPv6 echo replies sent."),
	W("nd_adverts", nd_adverts,
	  "Neighbour solicitations for our IPv6 addresses answered."),
	W("nd_solicits", nd_solicits, "Neighbour solicitations sent."),
	W("nd_announces", nd_announces,
	  "Unsolicited neighbour advertisements sent."),
	W("icmp6_translated", icmp6_translated,
	  "ICMPv6 errors translated for an IPv6 flow."),
	W("nat64_out", nat64_out,
	  "IPv6 packets translated to IPv4 for an IPv4 backend (fnat64)."),
	W("nat64_in", nat64_in,
	  "IPv4 replies translated to IPv6 for an IPv6 client (fnat64)."),
	W("nat64_mss_adjusted", nat64_mss_adjusted,
	  "Backends' SYN-ACK MSS lowered for the IPv6 client's path (fnat64)."),
	W("icmp64_translated", icmp64_translated,
	  "ICMP errors carried between IPv4 and IPv6 for an fnat64 flow."),
	W("idle_sleeps", idle_sleeps, "Sleeps of an idle worker."),
	W("feedback_dropped", fb_dropped,
	  "Feedback records lost because the ring was full."),
	W("l7_flows", l7_flows, "Flows followed at L7."),
	W("l7_pool_full", l7_pool_full,
	  "HTTP flows not followed because the L7 pool was empty."),
	W("l7_stopped", l7_stopped, "Followed flows given up."),
	W("l7_db_errors", l7_db_errors,
	  "Header databases a worker could not load."),
	W("l7_blocks_lost", l7_blocks_lost,
	  "Header blocks whose fields were lost (no stream, table switch)."),
	W("conf_switches", conf_switches, "Published tables taken up."),
	W("exception_to_kernel", exc_to_kernel,
	  "Frames given to the kernel through the exception path."),
	W("exception_from_kernel", exc_from_kernel,
	  "Frames of the kernel sent out a data port."),
	W("admit_borrows", admit.borrows,
	  "Batches of tokens asked of the global buckets."),
	W("admit_borrowed", admit.borrowed,
	  "Tokens received from the global buckets."),
	W("admit_shm_atomics", admit.shm_atomics,
	  "Atomic operations on shared memory for admission."),
	W("admit_evictions", admit.evictions,
	  "Local token buckets replaced (least recently used)."),
	W("admit_table_full", admit.table_full,
	  "Admissions whose key found no room in the shared bucket table."),
	W("src_budget_dropped", src_budget.dropped,
	  "New flows dropped: their source was over its budget."),
	W("src_budget_evicted", src_budget.evicted,
	  "Sources' budgets forgotten before they were full again."),
	W("flows_expired", flows_expired, "Flows expired."),
	W("flows_reclaimed", flows_reclaimed,
	  "Timed-out flows expired on demand: a new flow wanted their SNAT "
	  "port, tuple or entry."),
	W("expire_polls", expire_polls, "Polls that had flows due to expire."),
#undef W
};

/* Gauges of struct lb_worker_stats, as they are. */
static const struct {
	const char *name;
	const char *help;
	size_t off;
} worker_gauges[] = {
	{"lb_flows_overdue",
	 "Flows timed out that expiry has not reached yet (counted up to "
	 "1024).",
	 offsetof(struct lb_worker_stats, flows_overdue)},
	{"lb_snat_ports_overdue",
	 "SNAT ports held by flows timed out that expiry has not reached "
	 "yet.",
	 offsetof(struct lb_worker_stats, snat_ports_overdue)},
	{"lb_expire_max_flows", "Most flows one poll expired.",
	 offsetof(struct lb_worker_stats, expire_max)},
};

/* The workers, the published table's generation and each worker's. */
static int
workers_gen(const struct lb_metrics_snap *s, struct lb_cmd_out *o)
{
	const struct lb_dpconf *c = lb_view_conf(s->ctl->view);
	struct lb_prom_label l[1];
	int rc;

	rc = lb_prom_family(o, "lb_dataplane_workers", "gauge",
			    "Worker lcores of the dataplane.");
	if (rc == 0)
		rc = lb_prom_u64(o, "lb_dataplane_workers", NULL, 0, s->nw);
	if (rc == 0)
		rc = lb_prom_family(o, "lb_conf_generation", "gauge",
				    "Generation of the published table.");
	if (rc == 0)
		rc = lb_prom_u64(o, "lb_conf_generation", NULL, 0,
				 c != NULL ? c->gen : 0);
	if (rc == 0)
		rc = lb_prom_family(o, "lb_worker_conf_generation", "gauge",
				    "Generation of the table a worker runs.");
	for (uint32_t w = 0; w < s->nw && rc == 0; w++)
		rc = lb_prom_u64(o, "lb_worker_conf_generation", l,
				 (unsigned int)wlabel(s, w, l),
				 atomic_load_explicit(&s->shm->w[w]->conf_gen,
						      memory_order_acquire));
	return rc;
}

/* One family of a uint64_t of struct lb_worker_stats at @p off, per worker. */
static int
worker_fam(const struct lb_metrics_snap *s, struct lb_cmd_out *o,
	   const char *name, const char *type, const char *help, size_t off)
{
	struct lb_prom_label l[1];
	int rc = lb_prom_family(o, name, type, help);

	for (uint32_t w = 0; w < s->nw && rc == 0; w++)
		rc = lb_prom_u64(o, name, l, (unsigned int)wlabel(s, w, l),
				 u64_at(s->shm->w[w]->st, off));
	return rc;
}

/* A gauge in seconds of a time in ns of struct lb_worker_stats. */
static int
worker_seconds(const struct lb_metrics_snap *s, struct lb_cmd_out *o,
	       const char *name, const char *help, size_t off)
{
	struct lb_prom_label l[1];
	int rc = lb_prom_family(o, name, "gauge", help);

	for (uint32_t w = 0; w < s->nw && rc == 0; w++)
		rc = lb_prom_f64(o, name, l, (unsigned int)wlabel(s, w, l),
				 (double)u64_at(s->shm->w[w]->st, off) / 1e9);
	return rc;
}

/* The counters and gauges of struct lb_worker_stats (worker_fams,
 * worker_gauges), the longest expiry and the longest table switch. */
static int
workers_counters(const struct lb_metrics_snap *s, struct lb_cmd_out *o)
{
	int rc = 0;

	for (size_t i = 0;
	     i < sizeof(worker_fams) / sizeof(worker_fams[0]) && rc == 0; i++)
		rc = worker_fam(s, o, worker_fams[i].name, "counter",
				worker_fams[i].help, worker_fams[i].off);
	for (size_t i = 0;
	     i < sizeof(worker_gauges) / sizeof(worker_gauges[0]) && rc == 0;
	     i++)
		rc = worker_fam(s, o, worker_gauges[i].name, "gauge",
				worker_gauges[i].help, worker_gauges[i].off);
	if (rc == 0)
		rc = worker_seconds(s, o, "lb_expire_max_seconds",
				    "Longest a poll spent expiring flows.",
				    offsetof(struct lb_worker_stats,
					     expire_max_ns));
	if (rc == 0)
		rc = worker_seconds(s, o, "lb_worker_switch_max_seconds",
				    "Longest a poll spent taking up a table "
				    "or building schedulers.",
				    offsetof(struct lb_worker_stats,
					     switch_max_ns));
	return rc;
}

/* Each worker's flow table. */
static int
workers_flow_table(const struct lb_metrics_snap *s, struct lb_cmd_out *o)
{
	struct lb_prom_label l[1];
	int rc = 0;

	for (int k = 0; k < 4 && rc == 0; k++) {
		static const char *const fam[][3] = {
			{"lb_flows_active", "gauge", "Flows in the table."},
			{"lb_flow_table_inserts_total", "counter",
			 "Flows inserted in the table."},
			{"lb_flow_table_refused_total", "counter",
			 "New flows refused: the table was full."},
			{"lb_flow_table_dup_total", "counter",
			 "New flows refused: one of their keys existed."},
		};

		rc = lb_prom_family(o, fam[k][0], fam[k][1], fam[k][2]);
		for (uint32_t w = 0; w < s->nw && rc == 0; w++) {
			struct lb_flow_stats fs;

			lb_flow_stats_get(s->shm->w[w]->ft, &fs);
			rc = lb_prom_u64(o, fam[k][0], l,
					 (unsigned int)wlabel(s, w, l),
					 k == 0	  ? fs.flows
					 : k == 1 ? fs.inserts
					 : k == 2 ? fs.refused
						  : fs.dup);
		}
	}
	return rc;
}

/* Frames dropped, valid (by drop reason) and malformed (by verdict). */
static int
workers_drops(const struct lb_metrics_snap *s, struct lb_cmd_out *o)
{
	struct lb_prom_label l[2];
	int rc;

	rc = lb_prom_family(o, "lb_dropped_packets_total", "counter",
			    "Valid frames dropped, by reason.");
	for (uint32_t w = 0; w < s->nw && rc == 0; w++) {
		wlabel(s, w, l);
		l[1].name = "reason";
		for (int d = 0; d < LB_DROP_MAX && rc == 0; d++) {
			l[1].value = lb_drop_name((enum lb_drop)d);
			rc = lb_prom_u64(o, "lb_dropped_packets_total", l, 2,
					 s->shm->w[w]->st->drop[d]);
		}
	}
	if (rc == 0)
		rc = lb_prom_family(o, "lb_malformed_packets_total", "counter",
				    "Malformed frames dropped, by parser "
				    "verdict.");
	for (uint32_t w = 0; w < s->nw && rc == 0; w++) {
		wlabel(s, w, l);
		l[1].name = "reason";
		for (int v = LB_PKT_DROP_FIRST;
		     v < LB_PKT_VERDICT_MAX && rc == 0; v++) {
			l[1].value =
				lb_pkt_verdict_name((enum lb_pkt_verdict)v);
			rc = lb_prom_u64(o, "lb_malformed_packets_total", l, 2,
					 s->shm->w[w]->st->verdict[v]);
		}
	}
	if (rc == 0)
		rc = lb_prom_family(o, "lb_malformed_ipv6_packets_total",
				    "counter",
				    "Malformed IPv6 frames dropped, by parser "
				    "verdict.");
	for (uint32_t w = 0; w < s->nw && rc == 0; w++) {
		wlabel(s, w, l);
		l[1].name = "reason";
		for (int v = LB_PKT6_DROP_FIRST;
		     v < LB_PKT6_VERDICT_MAX && rc == 0; v++) {
			l[1].value =
				lb_pkt6_verdict_name((enum lb_pkt6_verdict)v);
			rc = lb_prom_u64(o, "lb_malformed_ipv6_packets_total",
					 l, 2, s->shm->w[w]->st->verdict6[v]);
		}
	}
	return rc;
}

/* The feedback records lb-control drained from each worker's ring. */
static int
workers_feedback(const struct lb_metrics_snap *s, struct lb_cmd_out *o)
{
	const struct lb_ctl *ctl = s->ctl;
	struct lb_prom_label l[2];
	int rc;

	rc = lb_prom_family(o, "lb_feedback_records_total", "counter",
			    "Feedback records drained from a worker's "
			    "ring, by kind.");
	for (uint32_t w = 0; w < s->nw && rc == 0; w++) {
		const struct lb_view_fb *f = lb_view_fb_stats(ctl->view, w);

		wlabel(s, w, l);
		l[1].name = "kind";
		for (unsigned int k = 0; k < LB_FB_KIND_MAX && rc == 0; k++) {
			l[1].value = lb_view_fb_kind_name(k);
			rc = lb_prom_u64(o, "lb_feedback_records_total", l, 2,
					 f->kind[k]);
		}
	}
	if (rc == 0)
		rc = lb_prom_family(o, "lb_feedback_invalid_total", "counter",
				    "Feedback records naming no table slot.");
	for (uint32_t w = 0; w < s->nw && rc == 0; w++)
		rc = lb_prom_u64(o, "lb_feedback_invalid_total", l,
				 (unsigned int)wlabel(s, w, l),
				 lb_view_fb_stats(ctl->view, w)->invalid);
	return rc;
}

int
lb_metrics_workers(const struct lb_metrics_snap *s, struct lb_cmd_out *o)
{
	int rc;

	rc = workers_gen(s, o);
	if (rc == 0)
		rc = workers_counters(s, o);
	if (rc == 0)
		rc = workers_flow_table(s, o);
	if (rc == 0)
		rc = workers_drops(s, o);
	if (rc == 0)
		rc = workers_feedback(s, o);
	return rc;
}
