/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Prometheus exposition of lb-control's view. Families are written
 * one after the other, each with all its samples, as the format wants;
 * backends and services are snapshot once so that every family sees the
 * same set.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autoscale.h"
#include "metrics_priv.h"
#include "route_rules.h"

/* ---- lb-control ---- */

static const struct {
	const char *name;
	const char *help;
	size_t off;
} ctl_fams[] = {
#define C(n, f, h)                                                             \
	{                                                                      \
		"lb_control_" n "_total", h,                                   \
			offsetof(struct lb_ctl_counters, f)                    \
	}
	C("publishes", publishes, "Tables published to the dataplane."),
	C("publish_errors", publish_errors,
	  "Changes refused because no table could be built from them."),
	C("gc_publishes", gc_publishes,
	  "Tables republished to free slots of removed backends."),
	C("state_writes", state_writes, "State file writes."),
	C("state_errors", state_errors, "State file writes that failed."),
	C("api_connections", api_conns, "API connections accepted."),
	C("api_requests", api_requests, "API requests answered."),
	C("api_errors", api_errors, "API requests refused."),
	C("attaches", attaches,
	  "Dataplanes attached to since lb-control first started."),
	C("http_requests", http_requests,
	  "Requests to the metrics listener (/metrics, the status page)."),
	C("http_bad_request", http_bad_request,
	  "Requests to the metrics listener with an argument it refused."),
	C("http_not_found", http_not_found,
	  "Requests to the metrics listener for a path it does not serve."),
	C("http_bad_method", http_bad_method,
	  "Requests to the metrics listener other than GET or HEAD."),
	C("http_errors", http_errors,
	  "Requests to the metrics listener whose answer could not be "
	  "built."),
	C("status_series_refused", status_refused,
	  "Services or backends the status page's history had no room "
	  "for, per sample."),
	C("cluster_borrows", cluster.borrows,
	  "Batches of admission tokens borrowed from Redis."),
	C("cluster_tokens", cluster.tokens, "Admission tokens Redis gave."),
	C("cluster_errors", cluster.errors,
	  "Failed connections or commands to Redis."),
	C("cluster_local_tokens", cluster.local,
	  "Admission tokens refilled locally while Redis was down (open)."),
#undef C
};

static int
control_fams(const struct lb_ctl *ctl, struct lb_cmd_out *o)
{
	int rc = 0;

	for (size_t i = 0;
	     i < sizeof(ctl_fams) / sizeof(ctl_fams[0]) && rc == 0; i++) {
		rc = lb_prom_family(o, ctl_fams[i].name, "counter",
				    ctl_fams[i].help);
		if (rc == 0)
			rc = lb_prom_u64(o, ctl_fams[i].name, NULL, 0,
					 u64_at(&ctl->ctr, ctl_fams[i].off));
	}
	if (rc == 0)
		rc = lb_prom_family(o, "lb_control_conf_changes_total",
				    "counter",
				    "Changes to the desired configuration.");
	if (rc == 0)
		rc = lb_prom_u64(o, "lb_control_conf_changes_total", NULL, 0,
				 lb_conf_generation(ctl->conf));
	if (rc == 0)
		rc = lb_prom_family(o, "lb_control_grace_seconds", "gauge",
				    "Length of the last RCU grace period "
				    "waited for after a publish.");
	if (rc == 0)
		rc = lb_prom_f64(o, "lb_control_grace_seconds", NULL, 0,
				 (double)ctl->ctr.grace_ns_last / 1e9);
	if (rc == 0)
		rc = lb_prom_family(o, "lb_control_grace_seconds_max", "gauge",
				    "Longest RCU grace period waited for.");
	if (rc == 0)
		rc = lb_prom_f64(o, "lb_control_grace_seconds_max", NULL, 0,
				 (double)ctl->ctr.grace_ns_max / 1e9);
	if (rc == 0)
		rc = lb_prom_family(o, "lb_dataplane_attached", "gauge",
				    "1 while lb-control is attached to a "
				    "dataplane.");
	if (rc == 0)
		rc = lb_prom_u64(o, "lb_dataplane_attached", NULL, 0,
				 ctl->view != NULL);
	return rc;
}

/* ---- per service and backend ---- */

/* u64 fields shared by struct lb_view_svc and struct lb_view_be, by
 * their offset in each. */
static const struct {
	const char *what; /* after lb_service_ / lb_backend_ */
	const char *type;
	const char *help;
	size_t svc_off;
	size_t be_off;
} num_fams[] = {
#define N(w, t, f, h)                                                          \
	{                                                                      \
		w, t, h, offsetof(struct lb_view_svc, f),                      \
			offsetof(struct lb_view_be, f)                         \
	}
	N("flows_total", "counter", flows_total, "Flows created."),
	N("flows_active", "gauge", flows_active, "Flows now."),
	N("flows_ended_total", "counter", flows_ended,
	  "Flows ended, from the workers' feedback."),
	N("errors_total", "counter", errors, "Failed connection trials."),
	N("http_responses_total", "counter", http_responses,
	  "Final HTTP responses followed."),
	N("http_5xx_total", "counter", http_5xx,
	  "Final HTTP responses with a 5xx status."),
	N("http_inflight", "gauge", inflight,
	  "HTTP requests awaiting their response."),
#undef N
};

static const char *const dir_name[2] = {"to_backend", "to_client"};

static bool
svc_http(const struct lb_metrics_svc *x)
{
	return x->v.opts != NULL && x->v.opts->http;
}

/* HTTP services: the SPL policy's reading and the in-flight average. */
static int
svc_l7_fams(const struct lb_metrics_snap *s, struct lb_cmd_out *o)
{
	static const enum lb_spl_action acts[] = {
		LB_SPL_INCREMENT, LB_SPL_DECREMENT, LB_SPL_NOOP};
	struct lb_prom_label l[2] = {{"service", NULL}, {"decision", NULL}};
	int rc;

	rc = lb_prom_family(o, "lb_service_spl_load", "gauge",
			    "Total load indicator: mean of the active "
			    "backends' latest SPL decayed by age.");
	for (unsigned int k = 0; k < s->nsvc && rc == 0; k++) {
		if (!svc_http(&s->svc[k]))
			continue;
		l[0].value = s->svc[k].svc;
		rc = lb_prom_f64(o, "lb_service_spl_load", l, 1,
				 s->svc[k].v.l7.total);
	}
	if (rc == 0)
		rc = lb_prom_family(o, "lb_service_spl_instances", "gauge",
				    "Backends the load indicator averages.");
	for (unsigned int k = 0; k < s->nsvc && rc == 0; k++) {
		if (!svc_http(&s->svc[k]))
			continue;
		l[0].value = s->svc[k].svc;
		rc = lb_prom_u64(o, "lb_service_spl_instances", l, 1,
				 s->svc[k].v.l7.nb_inst);
	}
	if (rc == 0)
		rc = lb_prom_family(o, "lb_service_spl_decision", "gauge",
				    "1 for what the SPL policy would do now "
				    "(shown only, not acted upon).");
	for (unsigned int k = 0; k < s->nsvc && rc == 0; k++) {
		if (!svc_http(&s->svc[k]))
			continue;
		l[0].value = s->svc[k].svc;
		for (size_t a = 0; a < sizeof(acts) / sizeof(acts[0]) && rc == 0;
		     a++) {
			l[1].value = lb_spl_action_str(acts[a]);
			rc = lb_prom_u64(o, "lb_service_spl_decision", l, 2,
					 s->svc[k].v.l7.action == acts[a]);
		}
	}
	if (rc == 0)
		rc = lb_prom_family(o, "lb_service_http_inflight_avg", "gauge",
				    "HTTP requests in flight, averaged over "
				    "the last ticks.");
	for (unsigned int k = 0; k < s->nsvc && rc == 0; k++) {
		if (!svc_http(&s->svc[k]))
			continue;
		l[0].value = s->svc[k].svc;
		rc = lb_prom_f64(o, "lb_service_http_inflight_avg", l, 1,
				 s->svc[k].v.l7.inflight_avg);
	}
	return rc;
}

/* Each pool of each service: its members and their weights. */
static int
pool_fams(const struct lb_metrics_snap *s, struct lb_cmd_out *o)
{
	struct lb_prom_label l[2] = {{"service", NULL}, {"pool", NULL}};
	int rc = 0;

	for (int f = 0; f < 2 && rc == 0; f++) {
		const char *fam = f == 0 ? "lb_pool_backends"
					 : "lb_pool_weight_sum";

		rc = lb_prom_family(o, fam, "gauge",
				    f == 0 ? "Backends of the pool, draining "
					     "ones included."
					   : "Sum of the weights of the pool's "
					     "backends.");
		for (unsigned int k = 0; k < s->nsvc && rc == 0; k++) {
			const struct lb_metrics_svc *x = &s->svc[k];

			l[0].value = x->svc;
			for (uint32_t p = 0; p < x->nb_pool && rc == 0; p++) {
				l[1].value = x->pool[p].name;
				rc = lb_prom_u64(o, fam, l, 2,
						 f == 0 ? x->pool[p].nb_be
							: x->pool[p].weight_sum);
			}
		}
	}
	return rc;
}

/* Each content routing rule of each service that routes: the
 * connections it sent, and those the default took. */
static int
rule_fams(const struct lb_metrics_snap *s, struct lb_cmd_out *o)
{
	struct lb_prom_label l[2] = {{"service", NULL}, {"rule", NULL}};
	char num[12];
	int rc;

	rc = lb_prom_family(o, "lb_rule_hits_total", "counter",
			    "Connections a content routing rule decided, by "
			    "its number in `rule list`, or the default.");
	for (unsigned int k = 0; k < s->nsvc && rc == 0; k++) {
		const struct lb_metrics_svc *x = &s->svc[k];

		if (!x->routes)
			continue;
		l[0].value = x->svc;
		l[1].value = num;
		for (uint32_t r = 0; r < x->nb_rule && rc == 0; r++) {
			snprintf(num, sizeof(num), "%u", r + 1);
			rc = lb_prom_u64(o, "lb_rule_hits_total", l, 2,
					 x->hits[r]);
		}
		l[1].value = "default";
		if (rc == 0)
			rc = lb_prom_u64(o, "lb_rule_hits_total", l, 2,
					 x->hits[x->nb_rule]);
	}
	return rc;
}

static int
svc_fams(const struct lb_metrics_snap *s, struct lb_cmd_out *o)
{
	struct lb_prom_label l[2] = {{"service", NULL}};
	char name[64];
	int rc = 0;

	for (size_t i = 0;
	     i < sizeof(num_fams) / sizeof(num_fams[0]) && rc == 0; i++) {
		snprintf(name, sizeof(name), "lb_service_%s", num_fams[i].what);
		rc = lb_prom_family(o, name, num_fams[i].type,
				    num_fams[i].help);
		for (unsigned int k = 0; k < s->nsvc && rc == 0; k++) {
			l[0].value = s->svc[k].svc;
			rc = lb_prom_u64(
				o, name, l, 1,
				u64_at(&s->svc[k].v, num_fams[i].svc_off));
		}
	}
	for (int b = 0; b < 2 && rc == 0; b++) {
		const char *fam = b == 0 ? "lb_service_packets_total"
					 : "lb_service_bytes_total";

		rc = lb_prom_family(o, fam, "counter",
				    b == 0 ? "Packets forwarded, by direction."
					   : "Bytes forwarded, by direction.");
		l[1].name = "direction";
		for (unsigned int k = 0; k < s->nsvc && rc == 0; k++) {
			l[0].value = s->svc[k].svc;
			for (int d = 0; d < 2 && rc == 0; d++) {
				l[1].value = dir_name[d];
				rc = lb_prom_u64(o, fam, l, 2,
						 b == 0 ? s->svc[k].v.pkts[d]
							: s->svc[k].v.bytes[d]);
			}
		}
	}
	if (rc == 0)
		rc = lb_prom_family(o, "lb_service_admissions_total", "counter",
				    "Admission decisions on new flows (L4) or "
				    "requests (HTTP), by verdict.");
	l[1].name = "verdict";
	for (unsigned int k = 0; k < s->nsvc && rc == 0; k++) {
		l[0].value = s->svc[k].svc;
		for (int v = 0; v < LB_ADMIT_VERDICT_MAX && rc == 0; v++) {
			l[1].value = lb_admit_verdict_name(v);
			rc = lb_prom_u64(o, "lb_service_admissions_total", l, 2,
					 s->svc[k].v.admit[v]);
		}
	}
	if (rc == 0)
		rc = svc_l7_fams(s, o);
	if (rc == 0)
		rc = lb_prom_family(o, "lb_service_backends", "gauge",
				    "Backend slots of the service, by state.");
	l[1].name = "state";
	for (unsigned int k = 0; k < s->nsvc && rc == 0; k++) {
		l[0].value = s->svc[k].svc;
		for (uint8_t st = LB_BE_ACTIVE; st <= LB_BE_REMOVED && rc == 0;
		     st++) {
			l[1].value = lb_view_be_state_name(st);
			rc = lb_prom_u64(o, "lb_service_backends", l, 2,
					 s->svc[k].v.nb_be[st]);
		}
	}
	if (rc == 0)
		rc = pool_fams(s, o);
	if (rc == 0)
		rc = rule_fams(s, o);
	return rc;
}

static unsigned int
be_labels(const struct lb_metrics_be *b, struct lb_prom_label *l)
{
	l[0] = (struct lb_prom_label){"service", b->svc};
	l[1] = (struct lb_prom_label){"backend", b->be};
	return 2;
}

/* What each worker's scheduler holds for the backend, and the trials its
 * feedback reported. */
static int
be_worker_fams(const struct lb_metrics_snap *s, struct lb_cmd_out *o)
{
	struct lb_prom_label l[4];
	int rc = 0;

	for (int f = 0; f < 2 && rc == 0; f++) {
		const char *fam = f == 0 ? "lb_backend_sched_errors"
					 : "lb_backend_worker_weight";

		rc = lb_prom_family(
			o, fam, "gauge",
			f == 0 ? "Error count a worker's scheduler holds for "
				 "the backend."
			       : "Weight a worker gives the backend for new "
				 "flows.");
		for (unsigned int k = 0; k < s->nbe && rc == 0; k++) {
			const struct lb_view_be *v = &s->be[k].v;
			unsigned int n = be_labels(&s->be[k], l);

			for (uint32_t w = 0; w < v->nb_workers && rc == 0;
			     w++) {
				wlabel(s, w, &l[n]);
				rc = lb_prom_u64(o, fam, l, n + 1,
						 f == 0 ? v->w[w].sched_errors
							: v->w[w].weight);
			}
		}
	}
	if (rc == 0)
		rc = lb_prom_family(o, "lb_backend_trials_total", "counter",
				    "Connection trials reported by a worker's "
				    "feedback, by result.");
	for (unsigned int k = 0; k < s->nbe && rc == 0; k++) {
		const struct lb_view_be *v = &s->be[k].v;
		unsigned int n = be_labels(&s->be[k], l);

		for (uint32_t w = 0; w < v->nb_workers && rc == 0; w++) {
			wlabel(s, w, &l[n]);
			l[n + 1].name = "result";
			l[n + 1].value = "ok";
			rc = lb_prom_u64(o, "lb_backend_trials_total", l, n + 2,
					 v->w[w].trials_ok);
			l[n + 1].value = "fail";
			if (rc == 0)
				rc = lb_prom_u64(o, "lb_backend_trials_total",
						 l, n + 2, v->w[w].trials_fail);
		}
	}
	return rc;
}

static int
be_fams(const struct lb_metrics_snap *s, struct lb_cmd_out *o)
{
	struct lb_prom_label l[4];
	char name[64];
	int rc;

	rc = lb_prom_family(o, "lb_backend_state", "gauge",
			    "1 for the backend's state: active, draining "
			    "(no new flows) or removed (flows running "
			    "out).");
	for (unsigned int k = 0; k < s->nbe && rc == 0; k++) {
		unsigned int n = be_labels(&s->be[k], l);

		l[n].name = "state";
		for (uint8_t st = LB_BE_ACTIVE; st <= LB_BE_REMOVED && rc == 0;
		     st++) {
			l[n].value = lb_view_be_state_name(st);
			rc = lb_prom_u64(o, "lb_backend_state", l, n + 1,
					 s->be[k].v.state == st);
		}
	}
	if (rc == 0)
		rc = lb_prom_family(o, "lb_backend_weight", "gauge",
				    "Configured weight.");
	for (unsigned int k = 0; k < s->nbe && rc == 0; k++)
		rc = lb_prom_u64(o, "lb_backend_weight", l,
				 be_labels(&s->be[k], l), s->be[k].v.weight);
	for (size_t i = 0;
	     i < sizeof(num_fams) / sizeof(num_fams[0]) && rc == 0; i++) {
		snprintf(name, sizeof(name), "lb_backend_%s", num_fams[i].what);
		rc = lb_prom_family(o, name, num_fams[i].type,
				    num_fams[i].help);
		for (unsigned int k = 0; k < s->nbe && rc == 0; k++)
			rc = lb_prom_u64(
				o, name, l, be_labels(&s->be[k], l),
				u64_at(&s->be[k].v, num_fams[i].be_off));
	}
	for (int b = 0; b < 2 && rc == 0; b++) {
		const char *fam = b == 0 ? "lb_backend_packets_total"
					 : "lb_backend_bytes_total";

		rc = lb_prom_family(o, fam, "counter",
				    b == 0 ? "Packets forwarded, by direction."
					   : "Bytes forwarded, by direction.");
		for (unsigned int k = 0; k < s->nbe && rc == 0; k++) {
			unsigned int n = be_labels(&s->be[k], l);

			l[n].name = "direction";
			for (int d = 0; d < 2 && rc == 0; d++) {
				l[n].value = dir_name[d];
				rc = lb_prom_u64(o, fam, l, n + 1,
						 b == 0 ? s->be[k].v.pkts[d]
							: s->be[k].v.bytes[d]);
			}
		}
	}
	if (rc == 0)
		rc = be_worker_fams(s, o);
	return rc;
}

/* HTTP backends: what their feedback says (control/feedback/l7view.h). */
enum { L7_SPL, L7_SPL_AGE, L7_SPL_DECAYED, L7_5XX, L7_QOS, L7_CPU, L7_MEM };

static const struct {
	const char *name;
	const char *help;
} l7_fams[] = {
	[L7_SPL] = {"lb_backend_spl",
		    "Latest self-perceived load the backend reported."},
	[L7_SPL_AGE] = {"lb_backend_spl_age_seconds",
			"Age of that report, from its generation time."},
	[L7_SPL_DECAYED] = {"lb_backend_spl_decayed",
			    "That report decayed by its age: its part of "
			    "the service's load indicator."},
	[L7_5XX] = {"lb_backend_http_5xx_ratio",
		    "Share of 5xx responses over the last 10 s."},
	[L7_QOS] = {"lb_backend_http_qos_miss_ratio",
		    "Share of responses late for their X-Expect-Ms over the "
		    "last 10 s."},
	[L7_CPU] = {"lb_backend_orca_cpu_utilization",
		    "Latest ORCA cpu_utilization."},
	[L7_MEM] = {"lb_backend_orca_mem_utilization",
		    "Latest ORCA mem_utilization."},
};

static bool
l7_value(const struct lb_l7view_be *x, int f, double *v)
{
	switch (f) {
	case L7_SPL:
		*v = x->spl;
		return x->spl_seen;
	case L7_SPL_AGE:
		*v = (double)x->spl_age_ns / 1e9;
		return x->spl_seen;
	case L7_SPL_DECAYED:
		*v = x->spl_decayed;
		return x->member;
	case L7_5XX:
		*v = x->rate_5xx;
		return true;
	case L7_QOS:
		*v = x->rate_qos_miss;
		return true;
	case L7_CPU:
		*v = x->orca_cpu;
		return x->orca_seen;
	default:
		*v = x->orca_mem;
		return x->orca_seen;
	}
}

static int
be_l7_fams(const struct lb_metrics_snap *s, struct lb_cmd_out *o)
{
	static const struct {
		const char *q;
		size_t off;
	} qs[] = {
		{"0.5", offsetof(struct lb_l7view_be, p50_ms)},
		{"0.9", offsetof(struct lb_l7view_be, p90_ms)},
		{"0.99", offsetof(struct lb_l7view_be, p99_ms)},
	};
	static const char *const kinds[] = {"http", "spl", "orca"};
	struct lb_prom_label l[4];
	int rc = 0;

	for (size_t f = 0; f < sizeof(l7_fams) / sizeof(l7_fams[0]) && rc == 0;
	     f++) {
		rc = lb_prom_family(o, l7_fams[f].name, "gauge",
				    l7_fams[f].help);
		for (unsigned int k = 0; k < s->nbe && rc == 0; k++) {
			double v;

			if (!s->be[k].http ||
			    !l7_value(&s->be[k].v.l7, (int)f, &v))
				continue;
			rc = lb_prom_f64(o, l7_fams[f].name, l,
					 be_labels(&s->be[k], l), v);
		}
	}
	if (rc == 0)
		rc = lb_prom_family(o, "lb_backend_http_latency_seconds",
				    "gauge",
				    "Latency percentiles over the last 10 s "
				    "(within 6.25 %), from the request's end "
				    "to the response's start.");
	for (unsigned int k = 0; k < s->nbe && rc == 0; k++) {
		unsigned int n;

		if (!s->be[k].http || s->be[k].v.l7.win_timed == 0)
			continue;
		n = be_labels(&s->be[k], l);
		l[n].name = "quantile";
		for (size_t q = 0; q < sizeof(qs) / sizeof(qs[0]) && rc == 0;
		     q++) {
			double ms;

			memcpy(&ms, (const char *)&s->be[k].v.l7 + qs[q].off,
			       sizeof(ms));
			l[n].value = qs[q].q;
			rc = lb_prom_f64(o, "lb_backend_http_latency_seconds",
					 l, n + 1, ms / 1e3);
		}
	}
	if (rc == 0)
		rc = lb_prom_family(o, "lb_backend_feedback_records_total",
				    "counter",
				    "HTTP, SPL and ORCA feedback records "
				    "merged for the backend.");
	for (unsigned int k = 0; k < s->nbe && rc == 0; k++) {
		const struct lb_l7view_be *x = &s->be[k].v.l7;
		const uint64_t c[] = {x->http_records, x->spl_records,
				      x->orca_records};
		unsigned int n;

		if (!s->be[k].http)
			continue;
		n = be_labels(&s->be[k], l);
		l[n].name = "kind";
		for (int i = 0; i < 3 && rc == 0; i++) {
			l[n].value = kinds[i];
			rc = lb_prom_u64(o, "lb_backend_feedback_records_total",
					 l, n + 1, c[i]);
		}
	}
	return rc;
}

/* ---- snapshot ---- */

/* The rules of service slot @p i and their hits, summed over the
 * workers. A service routes by content when it has rules, or a default
 * other than its own pool (as the workers decide). */
static void
rule_hits(const struct lb_metrics_snap *s, const struct lb_dpconf *c,
	  uint32_t i, struct lb_metrics_svc *x)
{
	const struct lb_route_flat *f = &c->pools[i].rules;

	x->nb_rule = f->n <= LB_ROUTE_FLAT_RULES ? f->n : 0;
	x->routes = x->nb_rule > 0 || f->def.what != LB_ROUTE_POOL ||
		    f->def.pool != 0;
	if (x->routes)
		lb_view_rule_hits(s->shm, i, x->hits, x->nb_rule);
}

static int
snap_take(const struct lb_ctl *ctl, struct lb_metrics_snap *s)
{
	const struct lb_dpconf *c = lb_view_conf(ctl->view);
	unsigned int nbe = 0;

	memset(s, 0, sizeof(*s));
	s->shm = lb_view_shm(ctl->view);
	s->nw = s->shm->nb_workers > LB_SHM_MAX_WORKERS ? LB_SHM_MAX_WORKERS
							: s->shm->nb_workers;
	for (uint32_t w = 0; w < s->nw; w++)
		snprintf(s->wname[w], sizeof(s->wname[w]), "%u", w);
	if (c == NULL)
		return 0;
	for (uint32_t i = 0; i < c->nb_svc; i++)
		nbe += c->svc[i].nb_be;
	s->svc = calloc(c->nb_svc + 1, sizeof(*s->svc));
	s->be = calloc(nbe + 1, sizeof(*s->be));
	if (s->svc == NULL || s->be == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < c->nb_svc; i++) {
		struct lb_metrics_svc *x = &s->svc[s->nsvc];
		struct lb_conf_svc_key k;

		if (lb_view_svc_get(ctl->view, i, &x->v) != 0)
			continue;
		k = lb_view_svc_key(&x->v);
		lb_ctlcmd_key_str(&k, x->svc);
		x->nb_pool = c->pools[i].nb_pool <= LB_CONF_MAX_POOLS + 1
				     ? c->pools[i].nb_pool
				     : 0;
		memcpy(x->pool, c->pools[i].pool,
		       x->nb_pool * sizeof(x->pool[0]));
		rule_hits(s, c, i, x);
		s->nsvc++;
		for (uint32_t b = 0; b < c->svc[i].nb_be && s->nbe < nbe; b++) {
			struct lb_metrics_be *y = &s->be[s->nbe];
			struct lb_conf_ip ip;

			if (lb_view_be_get(ctl->view, i, b, &y->v) != 0)
				continue;
			memcpy(y->svc, x->svc, sizeof(y->svc));
			y->http = x->v.opts != NULL && x->v.opts->http;
			ip = lb_view_be_ip(&y->v);
			y->hc = ctl->health != NULL &&
				lb_health_get_ip(ctl->health, &k, &ip,
						 y->v.port, &y->hi) == 0;
			/* "[2001:db8::1]:80": an IPv6 label bracketed. */
			lb_cmd_fmt_ip_port(&ip, y->v.port, y->be);
			s->nbe++;
		}
	}
	return 0;
}

/* What the health checks say, for the backends of checked services. */
static int
be_health_fams(const struct lb_metrics_snap *s, struct lb_cmd_out *o)
{
	struct lb_prom_label l[3];
	int rc;

	rc = lb_prom_family(o, "lb_backend_health", "gauge",
			    "1 for the backend's health: none (not checked), "
			    "pending, up or down.");
	for (unsigned int k = 0; k < s->nbe && rc == 0; k++) {
		unsigned int n = be_labels(&s->be[k], l);

		l[n].name = "health";
		for (int h = LB_HEALTH_NONE; h < LB_HEALTH_NB && rc == 0; h++) {
			l[n].value = lb_health_state_name(h);
			rc = lb_prom_u64(o, "lb_backend_health", l, n + 1,
					 (s->be[k].hc ? (int)s->be[k].hi.state
						      : LB_HEALTH_NONE) == h);
		}
	}
	if (rc == 0)
		rc = lb_prom_family(o, "lb_backend_checks_total", "counter",
				    "Health checks finished.");
	for (unsigned int k = 0; k < s->nbe && rc == 0; k++)
		if (s->be[k].hc)
			rc = lb_prom_u64(o, "lb_backend_checks_total", l,
					 be_labels(&s->be[k], l),
					 s->be[k].hi.probes);
	if (rc == 0)
		rc = lb_prom_family(o, "lb_backend_check_failures_total",
				    "counter", "Health checks that failed.");
	for (unsigned int k = 0; k < s->nbe && rc == 0; k++)
		if (s->be[k].hc)
			rc = lb_prom_u64(o, "lb_backend_check_failures_total",
					 l, be_labels(&s->be[k], l),
					 s->be[k].hi.failures);
	if (rc == 0)
		rc = lb_prom_family(o, "lb_backend_check_latency_seconds",
				    "gauge",
				    "How long the last health check took.");
	for (unsigned int k = 0; k < s->nbe && rc == 0; k++)
		if (s->be[k].hc && s->be[k].hi.has_last)
			rc = lb_prom_f64(o, "lb_backend_check_latency_seconds",
					 l, be_labels(&s->be[k], l),
					 (double)s->be[k].hi.last_latency_ns /
						 1e9);
	return rc;
}

/* ---- the sources, in the exposition's order (control/core/metrics.h) ---- */

static int
src_control(void *ctx, struct lb_cmd_out *o)
{
	return control_fams(ctx, o);
}

static int
src_workers(void *ctx, struct lb_cmd_out *o)
{
	return lb_metrics_workers(ctx, o);
}

static int
src_services(void *ctx, struct lb_cmd_out *o)
{
	return svc_fams(ctx, o);
}

static int
src_backends(void *ctx, struct lb_cmd_out *o)
{
	return be_fams(ctx, o);
}

static int
src_l7(void *ctx, struct lb_cmd_out *o)
{
	return be_l7_fams(ctx, o);
}

static int
src_health(void *ctx, struct lb_cmd_out *o)
{
	return be_health_fams(ctx, o);
}

static const struct lb_prom_src control_src = {
	"control", LB_METRICS_RANK_CONTROL, "ctl", src_control};
static const struct lb_prom_src workers_src = {
	"workers", LB_METRICS_RANK_WORKERS, "snap", src_workers};
static const struct lb_prom_src services_src = {
	"services", LB_METRICS_RANK_SERVICES, "snap", src_services};
static const struct lb_prom_src backends_src = {
	"backends", LB_METRICS_RANK_BACKENDS, "snap", src_backends};
static const struct lb_prom_src l7_src = {"l7", LB_METRICS_RANK_L7, "snap",
					  src_l7};
static const struct lb_prom_src health_src = {"health", LB_METRICS_RANK_HEALTH,
					      "snap", src_health};
LB_PROM_REGISTER(control_src);
LB_PROM_REGISTER(workers_src);
LB_PROM_REGISTER(services_src);
LB_PROM_REGISTER(backends_src);
LB_PROM_REGISTER(l7_src);
LB_PROM_REGISTER(health_src);

int
lb_metrics_format(const struct lb_ctl *ctl, struct lb_cmd_out *out)
{
	struct lb_metrics_snap s = {0};
	struct lb_cmd_bind b[5];
	unsigned int nb = 0;
	int rc;

	if (ctl == NULL || out == NULL)
		return -EINVAL;
	/* Handlers take contexts as void *; none writes to them. */
	b[nb++] = (struct lb_cmd_bind){"ctl", (void *)(uintptr_t)ctl};
	b[nb++] = (struct lb_cmd_bind){"as", ctl->as};
	if (ctl->view != NULL) {
		rc = snap_take(ctl, &s);
		if (rc != 0)
			return rc;
		s.ctl = ctl;
		b[nb++] = (struct lb_cmd_bind){"snap", &s};
		b[nb++] = (struct lb_cmd_bind){"dataplane",
					       (void *)(uintptr_t)ctl};
		if (ctl->xdp != NULL)
			b[nb++] = (struct lb_cmd_bind){"steer", ctl->xdp};
	}
	rc = lb_prom_format_all(b, nb, out);
	free(s.svc);
	free(s.be);
	return rc;
}
