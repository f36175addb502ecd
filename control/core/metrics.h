/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_METRICS_H
#define LB_METRICS_H

/**
 * @file
 * Every counter lb-control holds, as a Prometheus exposition (text format
 * 0.0.4, served at /metrics). Names start with `lb_`; labels are
 * `service` ("tcp 10.0.0.1:80"), `backend` ("10.1.0.1:80"), `worker`
 * ("0"), `reason`, `kind`, `state`, `direction` ("to_backend",
 * "to_client"), `result` ("ok", "fail"), `quantile` ("0.5", "0.9",
 * "0.99") and `decision` ("increment", "decrement", "noop").
 *
 * Families (counters end in _total):
 *
 *  - lb-control: lb_control_{publishes,publish_errors,gc_publishes,
 *    state_writes,state_errors,api_connections,api_requests,api_errors,
 *    conf_changes,attaches}_total; lb_control_grace_seconds{,_max};
 *    lb_dataplane_attached.
 *  - dataplane, per worker: lb_dataplane_workers, lb_conf_generation,
 *    lb_worker_conf_generation, lb_{rx,tx}_packets_total,
 *    lb_flows_created_total, lb_syn_retries_total, lb_deferred_total,
 *    lb_deferq_joined_total, lb_rst_sent_total, lb_idle_probes_total,
 *    lb_udp_unreplied_total,
 *    lb_rst_{no_flow,limited}_total, lb_syn_hold_full_total,
 *    lb_challenge_acks_total, lb_proxy_headers_{sent,resent}_total,
 *    lb_redirect_{out,in}_total,
 *    lb_arp_{replies,requests}_total, lb_echo_replies_total,
 *    lb_icmp_translated_total, lb_icmp_mtu_clamped_total,
 *    lb_idle_sleeps_total,
 *    lb_feedback_dropped_total, lb_l7_{flows,pool_full,stopped}_total,
 *    lb_conf_switches_total, lb_exception_{to,from}_kernel_total,
 *    lb_src_budget_{dropped,evicted}_total,
 *    lb_flows_active,
 *    lb_flow_table_{inserts,refused,dup}_total,
 *    lb_dropped_packets_total{reason}, lb_malformed_packets_total{reason},
 *    lb_feedback_records_total{kind}, lb_feedback_invalid_total.
 *  - per service: lb_service_{flows,flows_ended,errors,http_responses,
 *    http_5xx}_total, lb_service_flows_active, lb_service_http_inflight,
 *    lb_service_{packets,bytes}_total{direction}, lb_service_backends{state};
 *    http services: lb_service_spl_load, lb_service_spl_instances,
 *    lb_service_spl_decision{decision}, lb_service_http_inflight_avg.
 *  - per backend: lb_backend_state{state} (1 for its state, 0 for the
 *    others), lb_backend_weight (configured), lb_backend_{flows,
 *    flows_ended,errors,http_responses,http_5xx}_total,
 *    lb_backend_flows_active, lb_backend_http_inflight,
 *    lb_backend_health{health}, lb_backend_checks_total,
 *    lb_backend_check_failures_total, lb_backend_check_latency_seconds,
 *    lb_backend_{packets,bytes}_total{direction}, and per worker
 *    lb_backend_sched_errors, lb_backend_worker_weight and
 *    lb_backend_trials_total{result}; backends of http services:
 *    lb_backend_spl, lb_backend_spl_age_seconds, lb_backend_spl_decayed
 *    (once reported), lb_backend_http_{5xx,qos_miss}_ratio,
 *    lb_backend_http_latency_seconds{quantile}, lb_backend_orca_{cpu,
 *    mem}_utilization (once reported), and
 *    lb_backend_feedback_records_total{kind}.
 *
 * Services and backends are those of the published table, including
 * those deleted or removed whose flows still run.
 *
 * Each module registers its families itself (LB_PROM_REGISTER(), see
 * control/api/prom.h) with one of the contexts lb_metrics_format() binds:
 * "ctl" (struct lb_ctl, always), "as" (the autoscaler), and while a
 * dataplane is attached "dataplane" (struct lb_ctl), "steer" (the XDP
 * steering side, when there is one) and "snap" (this module's snapshot).
 * Their ranks (LB_METRICS_RANK_*, control/api/prom.h) keep the
 * exposition in one order.
 */

#include "lb/cmd.h"
#include "ctlcmd.h"

/**
 * Appends the exposition of what @p ctl holds (dataplane families only
 * when a dataplane is attached) to @p out.
 * @return 0 or -ENOMEM.
 */
int lb_metrics_format(const struct lb_ctl *ctl, struct lb_cmd_out *out);

#endif /* LB_METRICS_H */
