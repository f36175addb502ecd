/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `backend list`: each backend of a service with what the dataplane does
 * with it (state, flows, errors, packets and bytes each way, the weight
 * every worker gives it), what HTTP feedback and the health checker say
 * of it. Its rows are also the second half of `service show`
 * (lb_ctlcmd_backends_of()), so they sit apart from the service views.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "autoscale.h"
#include "ctlcmd_priv.h"
#include "health.h"

struct be_row {
	char svc[LB_CTLCMD_SVC_STRLEN];
	uint32_t ip;
	uint16_t port;
	const char *state;
	const char *origin; /* the autoscaler's instance repository */
	uint32_t weight;
	int slot; /* backend index in the table, -1: not published */
	bool rt;  /* v holds runtime values */
	struct lb_view_be v;
	bool hc; /* hi holds the health checker's view */
	struct lb_health_be_info hi;
};

static int
be_slot(const struct lb_dpconf_svc *t, uint32_t ip, uint16_t port)
{
	for (uint32_t b = 0; t != NULL && b < t->nb_be; b++)
		if (t->be[b].state != LB_BE_EMPTY && t->be[b].ip == htonl(ip) &&
		    t->be[b].port == htons(port))
			return (int)b;
	return -1;
}

static void
row_runtime(const struct lb_ctl *ctl, int s, int b, struct be_row *r)
{
	r->slot = b;
	r->rt = s >= 0 && b >= 0 &&
		lb_view_be_get(ctl->view, (uint32_t)s, (uint32_t)b, &r->v) == 0;
	if (r->rt)
		r->state = lb_view_be_state_name(r->v.state);
}

/* What HTTP feedback says of a backend (control/feedback/l7view.h). */
static json_t *
l7_json(const struct lb_l7view_be *x)
{
	json_t *o = json_object();
	int bad = o == NULL;

	if (bad)
		return NULL;
	bad |= jset(o, "spl", x->spl_seen ? json_real(x->spl) : json_null());
	bad |= jset(o, "spl_age_ms",
		    x->spl_seen ? json_real((double)x->spl_age_ns / 1e6)
				: json_null());
	bad |= jset_u64(o, "spl_gen_ns", x->spl_gen_ns);
	bad |= jset_f64(o, "spl_decayed", x->spl_decayed);
	bad |= jset(o, "spl_member", json_boolean(x->member));
	bad |= jset_u64(o, "spl_records", x->spl_records);
	bad |= jset_u64(o, "http_records", x->http_records);
	bad |= jset_u64(o, "orca_records", x->orca_records);
	bad |= jset(o, "orca_cpu",
		    x->orca_seen ? json_real(x->orca_cpu) : json_null());
	bad |= jset(o, "orca_mem",
		    x->orca_seen ? json_real(x->orca_mem) : json_null());
	bad |= jset_u64(o, "window_s", LB_L7V_BUCKETS * LB_L7V_BUCKET_NS /
					       1000000000ull);
	bad |= jset_u64(o, "window_responses", x->win_responses);
	bad |= jset_u64(o, "window_5xx", x->win_5xx);
	bad |= jset_u64(o, "window_expect", x->win_expect);
	bad |= jset_u64(o, "window_qos_miss", x->win_qos_miss);
	bad |= jset_u64(o, "window_timed", x->win_timed);
	bad |= jset_f64(o, "rate_5xx", x->rate_5xx);
	bad |= jset_f64(o, "rate_qos_miss", x->rate_qos_miss);
	bad |= jset_f64(o, "p50_ms", x->p50_ms);
	bad |= jset_f64(o, "p90_ms", x->p90_ms);
	bad |= jset_f64(o, "p99_ms", x->p99_ms);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *
health_json(const struct be_row *r)
{
	const struct lb_health_be_info *i = &r->hi;
	json_t *o;
	int bad;

	if (!r->hc || i->state == LB_HEALTH_NONE)
		return json_null();
	o = json_object();
	if (o == NULL)
		return NULL;
	bad = jset_u64(o, "probes", i->probes);
	bad |= jset_u64(o, "failures", i->failures);
	bad |= jset_u64(o, "successes_in_a_row", i->ok_run);
	bad |= jset_u64(o, "failures_in_a_row", i->fail_run);
	bad |= jset(o, "last_result",
		    i->has_last ? json_string(lb_health_why_name(i->last)) :
				  json_null());
	bad |= jset(o, "last_status", i->has_last && i->last_status != 0 ?
					      json_integer(i->last_status) :
					      json_null());
	bad |= jset(o, "last_latency_ms",
		    i->has_last ? json_real((double)i->last_latency_ns / 1e6) :
				  json_null());
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *
row_json(const struct be_row *r)
{
	char a[LB_CMD_ADDR_STRLEN];
	json_t *o = json_object(), *ws;
	int bad = o == NULL;

	if (bad)
		return NULL;
	bad |= jset_str(o, "service", r->svc);
	bad |= jset_str(o, "backend", lb_cmd_fmt_ipv4_port(r->ip, r->port, a));
	bad |= jset_str(o, "state", r->state);
	bad |= jset_str(o, "origin", r->origin != NULL ? r->origin : "static");
	bad |= jset_str(o, "health", lb_health_state_name(
					     r->hc ? r->hi.state :
						     LB_HEALTH_NONE));
	bad |= jset(o, "check", health_json(r));
	bad |= jset_u64(o, "weight", r->weight);
	bad |= jset(o, "slot",
		    r->slot >= 0 ? json_integer(r->slot) : json_null());
	bad |= jset_u64(o, "flows_active", r->rt ? r->v.flows_active : 0);
	bad |= jset_u64(o, "flows_total", r->rt ? r->v.flows_total : 0);
	bad |= jset_u64(o, "flows_ended", r->rt ? r->v.flows_ended : 0);
	bad |= jset_u64(o, "errors", r->rt ? r->v.errors : 0);
	bad |= jset_u64(o, "pkts_to_backend", r->rt ? r->v.pkts[0] : 0);
	bad |= jset_u64(o, "pkts_to_client", r->rt ? r->v.pkts[1] : 0);
	bad |= jset_u64(o, "bytes_to_backend", r->rt ? r->v.bytes[0] : 0);
	bad |= jset_u64(o, "bytes_to_client", r->rt ? r->v.bytes[1] : 0);
	bad |= jset_u64(o, "http_responses", r->rt ? r->v.http_responses : 0);
	bad |= jset_u64(o, "http_5xx", r->rt ? r->v.http_5xx : 0);
	bad |= jset_u64(o, "http_inflight", r->rt ? r->v.inflight : 0);
	bad |= jset(o, "l7", r->rt ? l7_json(&r->v.l7) : json_null());
	ws = json_array();
	for (uint32_t w = 0; ws != NULL && r->rt && w < r->v.nb_workers; w++) {
		const struct lb_view_be_worker *x = &r->v.w[w];
		json_t *e = json_object();

		bad |= e == NULL;
		if (e == NULL)
			break;
		bad |= jset_u64(e, "worker", w);
		bad |= jset_u64(e, "sched_errors", x->sched_errors);
		bad |= jset_u64(e, "weight", x->weight);
		bad |= jset_u64(e, "trials_ok", x->trials_ok);
		bad |= jset_u64(e, "trials_fail", x->trials_fail);
		bad |= json_array_append_new(ws, e);
	}
	bad |= jset(o, "workers", ws);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

#define BE_HDR_FMT                                                             \
	"%-22s %-21s %-8s %-6s %-7s %-16s %6s %7s %9s %7s %-19s %-23s %6s "    \
	"%6s %-11s %5s %4s %s\n"
#define BE_ROW_FMT                                                             \
	"%-22s %-21s %-8s %-6s %-7s %-16s %6u %7s %9s %7s %-19s %-23s %6s "    \
	"%6s %-11s %5s %4s %s\n"

int
lb_ctlcmd_be_header(struct lb_cmd_out *out)
{
	return lb_cmd_printf(out, BE_HDR_FMT, "SERVICE", "BACKEND", "STATE",
			     "ORIGIN", "HEALTH", "LAST-CHECK", "WEIGHT", "ACTIVE", "FLOWS", "ERRORS",
			     "PKTS(C>B/B>C)", "BYTES(C>B/B>C)", "SPL", "AGE",
			     "P50/P99MS", "5XX%", "INFL",
			     "ERRORS/WEIGHT BY WORKER");
}

/* "850us", "12ms", "3.4s", "95s": an age in six columns. */
static void
fmt_age(uint64_t ns, char *buf, size_t len)
{
	if (ns < 1000000ull)
		snprintf(buf, len, "%uus", (unsigned int)(ns / 1000));
	else if (ns < 1000000000ull)
		snprintf(buf, len, "%ums", (unsigned int)(ns / 1000000));
	else if (ns < 10000000000ull)
		snprintf(buf, len, "%.1fs", (double)ns / 1e9);
	else if (ns < 100000000000000ull)
		snprintf(buf, len, "%us", (unsigned int)(ns / 1000000000ull));
	else
		snprintf(buf, len, "old");
}

/* A latency in ms with two or three significant digits. */
static void
fmt_ms(double ms, char *buf, size_t len)
{
	if (ms < 10.0)
		snprintf(buf, len, "%.2f", ms);
	else if (ms < 100.0)
		snprintf(buf, len, "%.1f", ms);
	else
		snprintf(buf, len, "%.0f", ms);
}

/* The L7 columns of a row: "-" where nothing was reported. */
static void
l7_cols(const struct be_row *r, char *spl, char *age, char *lat, char *e5,
	char *infl)
{
	const struct lb_l7view_be *x = &r->v.l7;
	char a[16], b[16];

	snprintf(spl, 16, "-");
	snprintf(age, 16, "-");
	snprintf(lat, 32, "-");
	snprintf(e5, 16, "-");
	snprintf(infl, 16, "-");
	if (!r->rt)
		return;
	snprintf(infl, 16, "%" PRIu64, r->v.inflight);
	if (x->spl_seen) {
		snprintf(spl, 16, "%.3f", x->spl);
		fmt_age(x->spl_age_ns, age, 16);
	}
	if (x->win_timed > 0) {
		fmt_ms(x->p50_ms, a, sizeof(a));
		fmt_ms(x->p99_ms, b, sizeof(b));
		snprintf(lat, 32, "%s/%s", a, b);
	}
	if (x->win_responses > 0)
		snprintf(e5, 16, "%.1f", 100.0 * x->rate_5xx);
}

/* The last check of a row: "ok 1.2ms", "timeout 2000ms", "-". */
static void
health_col(const struct be_row *r, char *buf, size_t len)
{
	char ms[16];

	if (!r->hc || !r->hi.has_last) {
		snprintf(buf, len, "-");
		return;
	}
	fmt_ms((double)r->hi.last_latency_ns / 1e6, ms, sizeof(ms));
	if (r->hi.last_status != 0)
		snprintf(buf, len, "%u %sms", r->hi.last_status, ms);
	else
		snprintf(buf, len, "%s %sms", lb_health_why_name(r->hi.last),
			 ms);
}

static int
row_text(const struct be_row *r, struct lb_cmd_out *out)
{
	char a[LB_CMD_ADDR_STRLEN], act[24], fl[24], er[24], pk[48], by[48];
	char wk[LB_SHM_MAX_WORKERS * 24 + 1];
	char spl[16], age[16], lat[32], e5[16], infl[16], hc[40];
	size_t len = 0;

	wk[0] = '\0';
	health_col(r, hc, sizeof(hc));
	l7_cols(r, spl, age, lat, e5, infl);
	if (!r->rt) {
		snprintf(act, sizeof(act), "-");
		snprintf(fl, sizeof(fl), "-");
		snprintf(er, sizeof(er), "-");
		snprintf(pk, sizeof(pk), "-");
		snprintf(by, sizeof(by), "-");
		snprintf(wk, sizeof(wk), "-");
	} else {
		snprintf(act, sizeof(act), "%" PRIu64, r->v.flows_active);
		snprintf(fl, sizeof(fl), "%" PRIu64, r->v.flows_total);
		snprintf(er, sizeof(er), "%" PRIu64, r->v.errors);
		snprintf(pk, sizeof(pk), "%" PRIu64 "/%" PRIu64, r->v.pkts[0],
			 r->v.pkts[1]);
		snprintf(by, sizeof(by), "%" PRIu64 "/%" PRIu64, r->v.bytes[0],
			 r->v.bytes[1]);
		for (uint32_t w = 0; w < r->v.nb_workers; w++) {
			int n = snprintf(
				wk + len, sizeof(wk) - len,
				"%s%" PRIu64 "/%" PRIu64, w > 0 ? " " : "",
				r->v.w[w].sched_errors, r->v.w[w].weight);

			if (n < 0 || (size_t)n >= sizeof(wk) - len)
				break;
			len += (size_t)n;
		}
	}
	return lb_cmd_printf(out, BE_ROW_FMT, r->svc,
			     lb_cmd_fmt_ipv4_port(r->ip, r->port, a), r->state,
			     r->origin != NULL ? r->origin : "static",
			     lb_health_state_name(r->hc ? r->hi.state
							: LB_HEALTH_NONE),
			     hc, r->weight, act, fl, er, pk, by, spl, age, lat, e5,
			     infl, wk);
}

static int
emit_row(const struct be_row *r, json_t *arr, struct lb_cmd_out *out)
{
	json_t *j = row_json(r);

	if (j == NULL || json_array_append_new(arr, j) != 0)
		return lb_cmd_error(out, -ENOMEM, "out of memory");
	return row_text(r, out);
}

/*
 * What the autoscaler's instance repository says of a backend: its
 * origin, and for an orchestrated one its state (pending, draining...),
 * which says more than the table's.
 */
static void
inst_state(const struct lb_ctl *ctl, const struct lb_conf_svc *sv,
	   struct be_row *r)
{
	struct lb_as_svc *a = lb_as_svc_find(ctl->as, &sv->key);
	struct lb_as_inst *i =
		a != NULL ? lb_as_inst_by_addr(a, r->ip, r->port) : NULL;

	if (i == NULL)
		return;
	r->origin = lb_as_origin_name(i->origin);
	if (i->origin == LB_AS_ORCH)
		r->state = lb_as_state_name(i->state);
}

/* The rows of one configured service: its backends in the order added,
 * then those removed from it whose flows still run. */
static int
svc_rows(const struct lb_ctl *ctl, const struct lb_conf_svc *sv, json_t *arr,
	 struct lb_cmd_out *out)
{
	const struct lb_dpconf *c = lb_view_conf(ctl->view);
	int s = lb_ctlcmd_svc_slot(ctl, &sv->key);
	const struct lb_dpconf_svc *t = s >= 0 ? &c->svc[s] : NULL;
	bool listed[LB_CONF_MAX_BES] = {false};
	int rc = 0;

	for (unsigned int j = 0; j < sv->nb_be && rc == 0; j++) {
		const struct lb_conf_be *be = &sv->be[j];
		struct be_row r = {
			.ip = be->ip,
			.port = be->port,
			.state = be->draining ? "draining" : "active",
			.weight = be->weight,
			.slot = -1,
		};
		int b = be_slot(t, be->ip, be->port);

		lb_ctlcmd_svc_str(sv->key.proto, sv->key.vip, sv->key.port,
				  r.svc);
		row_runtime(ctl, s, b, &r);
		inst_state(ctl, sv, &r);
		r.hc = ctl->health != NULL &&
		       lb_health_get(ctl->health, &sv->key, be->ip, be->port,
				     &r.hi) == 0;
		if (b >= 0)
			listed[b] = true;
		rc = emit_row(&r, arr, out);
	}
	for (uint32_t b = 0; t != NULL && b < t->nb_be && rc == 0; b++) {
		struct be_row r = {.slot = -1};

		if (listed[b] || t->be[b].state == LB_BE_EMPTY)
			continue;
		lb_ctlcmd_svc_str(sv->key.proto, sv->key.vip, sv->key.port,
				  r.svc);
		r.ip = ntohl(t->be[b].ip);
		r.port = ntohs(t->be[b].port);
		r.weight = t->be[b].weight;
		r.state = lb_view_be_state_name(t->be[b].state);
		row_runtime(ctl, s, (int)b, &r);
		rc = emit_row(&r, arr, out);
	}
	return rc;
}

/* Rows of services deleted from the configuration whose flows still run. */
static int
deleted_rows(const struct lb_ctl *ctl, int only, json_t *arr,
	     struct lb_cmd_out *out)
{
	const struct lb_dpconf *c = lb_view_conf(ctl->view);
	int rc = 0;

	for (uint32_t s = 0; c != NULL && s < c->nb_svc && rc == 0; s++) {
		const struct lb_dpconf_svc *t = &c->svc[s];

		if (t->state != LB_SVC_DELETED || (only >= 0 && (int)s != only))
			continue;
		for (uint32_t b = 0; b < t->nb_be && rc == 0; b++) {
			struct be_row r = {.slot = -1};

			if (t->be[b].state == LB_BE_EMPTY)
				continue;
			lb_ctlcmd_svc_str(t->proto, ntohl(t->vip),
					  ntohs(t->vport), r.svc);
			r.ip = ntohl(t->be[b].ip);
			r.port = ntohs(t->be[b].port);
			r.weight = t->be[b].weight;
			row_runtime(ctl, (int)s, (int)b, &r);
			/* Whatever they were, the service is gone. */
			r.state = "removed";
			rc = emit_row(&r, arr, out);
		}
	}
	return rc;
}
int
lb_ctlcmd_backends_of(struct lb_ctl *ctl, const struct lb_conf_svc *sv,
		      int slot, bool all, json_t *arr, struct lb_cmd_out *out)
{
	int rc = 0;

	if (all) {
		for (unsigned int i = 0;
		     i < lb_conf_nb_svcs(ctl->conf) && rc == 0; i++)
			rc = svc_rows(ctl, lb_conf_svc_at(ctl->conf, i), arr,
				      out);
		return rc == 0 ? deleted_rows(ctl, -1, arr, out) : rc;
	}
	if (sv != NULL)
		return svc_rows(ctl, sv, arr, out);
	return deleted_rows(ctl, slot, arr, out);
}

static int
cmd_be_list(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_ctl *ctl = ctx;
	const struct lb_conf_svc *sv = NULL;
	json_t *d, *arr;
	int slot = -1, rc;

	rc = lb_cmd_want_args(out, argc, argv, 0, 2);
	if (rc == 0 && argc == 1)
		rc = lb_cmd_want_args(out, argc, argv, 2, 2);
	if (rc == 0 && argc == 2)
		rc = lb_ctlcmd_find_svc(ctl, argv, true, &sv, &slot, out);
	if (rc != 0)
		return rc;
	arr = json_array();
	d = json_object();
	if (arr == NULL || d == NULL || json_object_set(d, "backends", arr)) {
		json_decref(arr);
		json_decref(d);
		return lb_cmd_error(out, -ENOMEM, "out of memory");
	}
	rc = lb_ctlcmd_be_header(out);
	if (rc == 0)
		rc = lb_ctlcmd_backends_of(ctl, sv, slot, argc == 0, arr,
					   out);
	json_decref(arr);
	if (rc != 0) {
		json_decref(d);
		return rc;
	}
	return lb_ctlcmd_give_data(ctl, d, 0, out);
}

static const struct lb_cmd_def be_cmds[] = {
	{
		.path = "backend list",
		.synopsis = "[" SVC_ARGS "]",
		.help = "List the backends of every service, or of one, with "
			"their counters",
		.long_help =
			"STATE is `active`, `draining` (no new flows), or "
			"`removed` (deleted,\nits flows running out). ACTIVE "
			"is flows now, FLOWS flows created,\nERRORS failed "
			"connection trials. The last column shows, for each\n"
			"worker in order, the error count its scheduler holds "
			"for the backend\nand the weight that gives it: the "
			"error-adaptive weight of `adaptive`,\n1 for `rr`, "
			"the configured weight for the others, 0 when it "
			"takes no\nnew flows. On `http` services: SPL is the "
			"latest self-perceived load the\nbackend reported "
			"(X-SPL) and AGE how long ago it was generated;\n"
			"P50/P99MS the median and 99th percentile latency, "
			"5XX% the share of\n5xx responses, both over the "
			"last 10 s; INFL the requests in flight.\n"
			"HEALTH is what the service's health check says: "
			"`none` (not\nchecked), `pending` (added, not yet "
			"`check-rise` successes), `up`, or\n`down` "
			"(`check-fall` failures in a row); only `none` and "
			"`up` take\nnew flows. LAST-CHECK is the last "
			"check's outcome and how long it\ntook.",
		.fn = cmd_be_list,
	},
};

static const struct lb_cmd_table be_table = {
	.name = "ctl-backends",
	.ctx = "ctl",
	.defs = be_cmds,
	.n = sizeof(be_cmds) / sizeof(be_cmds[0]),
};
LB_CMD_REGISTER(be_table);
