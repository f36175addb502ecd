/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `governor show` and the governors' /metrics families; see
 * control/core/govcmd.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "govcmd.h"
#include "govview.h"
#include "prom.h"
#include "lb/shm.h"
#include "view.h"

static const char *const cls_name[LB_GOV_NB_CLASSES] = {
	"0", "1", "2", "3", "4", "5", "6", "7+"};

/* One service slot with a governor, as shown. */
struct gov_row {
	char svc[LB_CTLCMD_SVC_STRLEN];
	uint32_t slot;
	struct lb_govview_svc g;
	struct lb_gov_lcore_stats dec; /* summed over the workers */
};

static uint32_t
nb_workers(const struct lb_shm *shm)
{
	return shm->nb_workers < LB_SHM_MAX_WORKERS ? shm->nb_workers :
						      LB_SHM_MAX_WORKERS;
}

/* Slot @p s of the published table, if it has a governor. */
static bool
gov_row(const struct lb_ctl *ctl, uint32_t s, struct gov_row *r)
{
	const struct lb_dpconf *c = lb_view_conf(ctl->view);
	const struct lb_shm *shm = lb_view_shm(ctl->view);
	const struct lb_dpconf_svc *t;
	struct lb_conf_svc_key k;

	if (c == NULL || shm == NULL || s >= c->nb_svc ||
	    lb_govview_get(lb_view_gov(ctl->view), s, &r->g) != 0 || !r->g.on)
		return false;
	t = &c->svc[s];
	r->slot = s;
	k = lb_dpconf_svc_key(t);
	lb_ctlcmd_key_str(&k, r->svc);
	memset(&r->dec, 0, sizeof(r->dec));
	for (uint32_t w = 0; w < nb_workers(shm); w++) {
		const struct lb_gov_lcore_stats *x;

		if (shm->w[w] == NULL || shm->w[w]->st == NULL)
			continue;
		x = &shm->w[w]->st->gov[s];
		for (unsigned int k = 0; k < LB_GOV_NB_CLASSES; k++) {
			r->dec.admitted[k] += x->admitted[k];
			r->dec.throttled[k] += x->throttled[k];
		}
	}
	return true;
}

static const char *
rate_name(enum lb_gov_rate r)
{
	static const char *const n[] = {"unknown", "below", "ideal", "above"};

	return (unsigned int)r < 4 ? n[r] : "unknown";
}

static json_t *
row_json(const struct gov_row *r)
{
	const struct lb_gov_state *st = &r->g.st;
	const struct lb_gov_params *p = &r->g.params;
	json_t *adm = json_array(), *thr = json_array();

	for (unsigned int k = 0; k < LB_GOV_NB_CLASSES; k++) {
		json_array_append_new(adm, json_integer((json_int_t)
							r->dec.admitted[k]));
		json_array_append_new(thr, json_integer((json_int_t)
							r->dec.throttled[k]));
	}
	return json_pack(
		"{s:s, s:i, s:s, s:f, s:f, s:I, s:I, s:f, s:b, s:i, s:o, s:s, "
		"s:f, s:o, s:o, s:{s:f, s:i, s:f, s:f, s:f, s:i, s:i}, "
		"s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I}}",
		"service", r->svc, "slot", (int)r->slot, "mode",
		st->mode == LB_GOV_MODE_IDEAL_RATE ? "ideal-rate" : "damped",
		"m", st->m, "miss_pct", st->miss_pct, "window_records",
		(json_int_t)st->window_records, "window_misses",
		(json_int_t)st->window_misses, "window_rate_rps",
		st->window_rate_rps, "overloaded", st->overloaded,
		"calm_windows", (int)st->calm_windows, "min_slack_ms",
		st->min_slack_ns == INT64_MAX ?
			json_null() :
			json_real((double)st->min_slack_ns / 1e6),
		"rate", rate_name(st->rate), "ideal_rate_rps",
		st->ideal_rate_rps, "admitted", adm, "throttled", thr,
		"params", "interval_s", (double)p->interval_ns / 1e9, "window",
		(int)p->window_slots, "overload_pct", p->overload_pct, "raise",
		p->t_step, "release", p->r_step, "calm", (int)p->calm_k,
		"min_samples", (int)p->min_samples, "counters", "records",
		(json_int_t)r->g.cnt.records, "misses",
		(json_int_t)r->g.cnt.misses, "intervals",
		(json_int_t)r->g.cnt.intervals, "overload_entries",
		(json_int_t)r->g.cnt.overload_entries, "overload_exits",
		(json_int_t)r->g.cnt.overload_exits, "raises",
		(json_int_t)r->g.cnt.m_raises, "releases",
		(json_int_t)r->g.cnt.m_releases);
}

static int
row_text(const struct gov_row *r, struct lb_cmd_out *out)
{
	const struct lb_gov_state *st = &r->g.st;
	char slack[24];
	int rc;

	if (st->min_slack_ns == INT64_MAX)
		snprintf(slack, sizeof(slack), "-");
	else
		snprintf(slack, sizeof(slack), "%.1f",
			 (double)st->min_slack_ns / 1e6);
	rc = lb_cmd_printf(out,
			   "%-21s %-10s %6.1f %6.1f %8" PRIu64 " %8" PRIu64
			   " %-4s %5u %9s %s\n",
			   r->svc,
			   st->mode == LB_GOV_MODE_IDEAL_RATE ? "ideal-rate" :
								"damped",
			   st->m, st->miss_pct, st->window_records,
			   st->window_misses, st->overloaded ? "yes" : "no",
			   st->calm_windows, slack, rate_name(st->rate));
	if (rc == 0)
		rc = lb_cmd_printf(out, "  %-6s %12s %12s\n", "RANK",
				   "ADMITTED", "THROTTLED");
	for (unsigned int k = 0; k < LB_GOV_NB_CLASSES && rc == 0; k++)
		rc = lb_cmd_printf(out, "  %-6s %12" PRIu64 " %12" PRIu64 "\n",
				   cls_name[k], r->dec.admitted[k],
				   r->dec.throttled[k]);
	return rc;
}

static int
cmd_gov_show(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_ctl *ctl = ctx;
	struct lb_worker_stats sum;
	char want[LB_CTLCMD_SVC_STRLEN] = "";
	struct lb_conf_svc_key k;
	json_t *arr, *d;
	int rc = 0;

	if (argc != 0 && argc != 2)
		return lb_cmd_error(out, -EINVAL,
				    "usage: governor show [PROTO VIP:PORT]");
	if (argc == 2) {
		rc = lb_conf_parse_key(argv, &k, out);
		if (rc != 0)
			return rc;
		lb_ctlcmd_key_str(&k, want);
	}
	arr = json_array();
	if (arr == NULL)
		return lb_cmd_error(out, -ENOMEM, "out of memory");
	rc = lb_cmd_printf(out, "%-21s %-10s %6s %6s %8s %8s %-4s %5s %9s %s\n",
			   "SERVICE", "MODE", "M", "MISS%", "RECORDS",
			   "MISSES", "OVER", "CALM", "SLACK-MS", "RATE");
	for (uint32_t s = 0; ctl->view != NULL && s < LB_CONF_MAX_SVCS && rc == 0;
	     s++) {
		struct gov_row r;

		if (!gov_row(ctl, s, &r) || (want[0] && strcmp(want, r.svc)))
			continue;
		rc = row_text(&r, out);
		if (rc == 0 && json_array_append_new(arr, row_json(&r)) != 0)
			rc = lb_cmd_error(out, -ENOMEM, "out of memory");
	}
	memset(&sum, 0, sizeof(sum));
	if (ctl->view != NULL)
		lb_view_stats_sum(lb_view_shm(ctl->view), &sum);
	if (rc == 0)
		rc = lb_cmd_printf(
			out,
			"refused: governor %" PRIu64 ", rate %" PRIu64
			"; held segments %" PRIu64 ", decided at the hold "
			"bound %" PRIu64 ", throttled but pipelined %" PRIu64
			"; unfollowable flows reset %" PRIu64
			", admitted %" PRIu64 "\n",
			sum.l7_refused[LB_L7_REJ_GOVERNOR],
			sum.l7_refused[LB_L7_REJ_RATE], sum.l7_held,
			sum.l7_hold_full, sum.l7_unrefusable,
			sum.l7_unfollowed[LB_L7_UNF_RESET],
			sum.l7_unfollowed[LB_L7_UNF_ADMITTED]);
	d = json_pack("{s:o, s:{s:I, s:I}, s:I, s:I, s:I, s:I, s:{s:I, s:I}}",
		      "services", arr, "refused", "governor",
		      (json_int_t)sum.l7_refused[LB_L7_REJ_GOVERNOR], "rate",
		      (json_int_t)sum.l7_refused[LB_L7_REJ_RATE], "held",
		      (json_int_t)sum.l7_held, "hold_full",
		      (json_int_t)sum.l7_hold_full, "unrefusable",
		      (json_int_t)sum.l7_unrefusable, "resent",
		      (json_int_t)sum.l7_rej_resent, "unfollowable", "reset",
		      (json_int_t)sum.l7_unfollowed[LB_L7_UNF_RESET],
		      "admitted",
		      (json_int_t)sum.l7_unfollowed[LB_L7_UNF_ADMITTED]);
	if (rc != 0 || d == NULL) {
		json_decref(d);
		return rc != 0 ? rc : lb_cmd_error(out, -ENOMEM, "out of memory");
	}
	json_decref(ctl->data);
	ctl->data = d;
	return 0;
}

static const struct lb_cmd_def gov_cmds[] = {
	{
		.path = "governor show",
		.synopsis = "[PROTO VIP:PORT]",
		.help = "Show the overload governors and refused requests",
		.long_help =
			"For each http service with `governor on`: its mode, "
			"the throttle\nmultiplier M, the share of requests "
			"that missed their expected\nresponse time in the "
			"last window (MISS%, of RECORDS), whether\nthat "
			"window was overloaded, the calm windows in a row, "
			"the smallest\nslack (expected - actual) and the "
			"ideal-rate verdict; then the\nrequests admitted and "
			"throttled per priority rank. The last line\ncounts "
			"refused requests by reason over every service "
			"(docs/admission.md).",
		.fn = cmd_gov_show,
	},
};

static const struct lb_cmd_table gov_table = {
	.name = "governor",
	.ctx = "ctl",
	.defs = gov_cmds,
	.n = sizeof(gov_cmds) / sizeof(gov_cmds[0]),
};
LB_CMD_REGISTER(gov_table);

/* One gauge per service with a governor, read by @p get. */
static int
svc_gauge(const struct lb_ctl *ctl, struct lb_cmd_out *o, const char *name,
	  const char *help, double (*get)(const struct gov_row *r))
{
	struct lb_prom_label l = {"service", NULL};
	int rc = lb_prom_family(o, name, "gauge", help);

	for (uint32_t s = 0; s < LB_CONF_MAX_SVCS && rc == 0; s++) {
		struct gov_row r;

		if (!gov_row(ctl, s, &r))
			continue;
		l.value = r.svc;
		rc = lb_prom_f64(o, name, &l, 1, get(&r));
	}
	return rc;
}

static double
get_m(const struct gov_row *r)
{
	return r->g.st.m;
}

static double
get_miss(const struct gov_row *r)
{
	return r->g.st.miss_pct;
}

static double
get_records(const struct gov_row *r)
{
	return (double)r->g.st.window_records;
}

static double
get_over(const struct gov_row *r)
{
	return r->g.st.overloaded ? 1.0 : 0.0;
}

static double
get_calm(const struct gov_row *r)
{
	return (double)r->g.st.calm_windows;
}

/* A counter summed over the workers, @p n samples labelled @p lname. */
static int
worker_counter(struct lb_cmd_out *o, const char *name, const char *help,
	       const char *lname, const char *const *lval, const uint64_t *v,
	       unsigned int n)
{
	struct lb_prom_label l = {lname, NULL};
	int rc = lb_prom_family(o, name, "counter", help);

	for (unsigned int i = 0; i < n && rc == 0; i++) {
		l.value = lval != NULL ? lval[i] : NULL;
		rc = lb_prom_u64(o, name, &l, lval != NULL ? 1 : 0, v[i]);
	}
	return rc;
}

int
lb_govcmd_metrics(const struct lb_ctl *ctl, struct lb_cmd_out *o)
{
	static const char *const reasons[LB_L7_REJ_MAX] = {"governor", "rate"};
	static const char *const unf_names[LB_L7_UNF_MAX] = {"reset",
							     "admitted"};
	struct lb_prom_label l[3] = {
		{"service", NULL}, {"priority", NULL}, {"result", NULL}};
	struct lb_worker_stats sum;
	const char *fam = "lb_service_governor_requests_total";
	int rc;

	if (ctl == NULL || o == NULL)
		return -EINVAL;
	if (ctl->view == NULL)
		return 0;
	rc = svc_gauge(ctl, o, "lb_service_governor_multiplier",
		       "Throttle multiplier M of the overload governor.", get_m);
	if (rc == 0)
		rc = svc_gauge(ctl, o, "lb_service_governor_miss_percent",
			       "Share of the last window's requests that "
			       "missed their expected time, %.",
			       get_miss);
	if (rc == 0)
		rc = svc_gauge(ctl, o, "lb_service_governor_window_records",
			       "QoS records in the last window.", get_records);
	if (rc == 0)
		rc = svc_gauge(ctl, o, "lb_service_governor_overloaded",
			       "1 if the last window was overloaded.",
			       get_over);
	if (rc == 0)
		rc = svc_gauge(ctl, o, "lb_service_governor_calm_windows",
			       "Non-overloaded windows in a row.", get_calm);
	if (rc == 0)
		rc = lb_prom_family(o, fam, "counter",
				    "Requests the governor admitted or "
				    "throttled, by priority rank.");
	for (uint32_t s = 0; s < LB_CONF_MAX_SVCS && rc == 0; s++) {
		struct gov_row r;

		if (!gov_row(ctl, s, &r))
			continue;
		l[0].value = r.svc;
		for (unsigned int k = 0; k < LB_GOV_NB_CLASSES && rc == 0;
		     k++) {
			l[1].value = cls_name[k];
			l[2].value = "admitted";
			rc = lb_prom_u64(o, fam, l, 3, r.dec.admitted[k]);
			l[2].value = "throttled";
			if (rc == 0)
				rc = lb_prom_u64(o, fam, l, 3,
						 r.dec.throttled[k]);
		}
	}
	memset(&sum, 0, sizeof(sum));
	lb_view_stats_sum(lb_view_shm(ctl->view), &sum);
	if (rc == 0)
		rc = worker_counter(o, "lb_http_refused_total",
				    "HTTP requests refused, by reason.",
				    "reason", reasons, sum.l7_refused,
				    LB_L7_REJ_MAX);
	if (rc == 0)
		rc = worker_counter(o, "lb_http_held_segments_total",
				    "Client segments held for an admission.",
				    NULL, NULL, &sum.l7_held, 1);
	if (rc == 0)
		rc = worker_counter(o, "lb_http_hold_full_total",
				    "Admissions decided at the hold bound.",
				    NULL, NULL, &sum.l7_hold_full, 1);
	if (rc == 0)
		rc = worker_counter(o, "lb_http_unrefusable_total",
				    "Throttled requests admitted: pipelined.",
				    NULL, NULL, &sum.l7_unrefusable, 1);
	if (rc == 0)
		rc = worker_counter(o, "lb_http_unfollowable_total",
				    "Gated flows no longer followed, by what "
				    "became of them.",
				    "action", unf_names, sum.l7_unfollowed,
				    LB_L7_UNF_MAX);
	if (rc == 0)
		rc = worker_counter(o, "lb_http_refusal_resent_total",
				    "Refusals sent again.", NULL, NULL,
				    &sum.l7_rej_resent, 1);
	return rc;
}

static int
gov_metrics_src(void *ctx, struct lb_cmd_out *o)
{
	return lb_govcmd_metrics(ctx, o);
}

static const struct lb_prom_src gov_src = {
	"governor", LB_METRICS_RANK_GOVERNOR, "dataplane", gov_metrics_src};
LB_PROM_REGISTER(gov_src);
