/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-control's commands over the running dataplane: stats, and the
 * service and backend lists with their runtime columns. Each gives text
 * for people and a JSON object for programs, built from the same rows.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "ctlcmd.h"
#include "health.h"
#include "autoscale.h"
#include "lb/flow_table.h"
#include "lb/pkt_parse.h"

#define SVC_ARGS "PROTO VIP:PORT"

char *
lb_ctlcmd_svc_str(uint8_t proto, uint32_t vip, uint16_t port, char *buf)
{
	char a[LB_CMD_ADDR_STRLEN];
	const char *p = lb_cmd_proto_name(proto);

	snprintf(buf, LB_CTLCMD_SVC_STRLEN, "%s %s", p != NULL ? p : "?",
		 lb_cmd_fmt_ipv4_port(vip, port, a));
	return buf;
}

/* ---- JSON helpers ---- */

static int
jset(json_t *o, const char *k, json_t *v)
{
	return v != NULL ? json_object_set_new(o, k, v) : -1;
}

static int
jset_u64(json_t *o, const char *k, uint64_t v)
{
	/* Counters stay far below 2^63; clamp rather than wrap. */
	return jset(o, k,
		    json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t)v));
}

/* The name of value @p i in table @p tbl, "?" for one past its end. */
#define NAME_OF(tbl, i)                                                        \
	((unsigned int)(i) < sizeof(tbl) / sizeof((tbl)[0]) ? (tbl)[i] : "?")

static int
jset_str(json_t *o, const char *k, const char *s)
{
	return jset(o, k, json_string(s));
}

static int
jset_f64(json_t *o, const char *k, double v)
{
	return jset(o, k, json_real(v));
}

/* A service's flow options (LB_CONF_FLOW_LIST) under their keywords with
 * '_' for '-': durations as lbctl spells them, rst_rate a number, idle_rst
 * a boolean. */
static int
jset_flow_opts(json_t *j, const struct lb_conf_svc_opts *o)
{
	static const struct {
		const char *kw;
		enum lb_cmd_opt_type type;
	} opt[LB_CONF_FLOW_NB] = {
#define FLOW_KW(id, kw, type, lo, hi, d) {kw, type},
		LB_CONF_FLOW_LIST(FLOW_KW)
#undef FLOW_KW
	};
	char d[LB_CMD_DURATION_STRLEN], k[32];
	int bad = 0;

	for (unsigned int i = 0; i < LB_CONF_FLOW_NB; i++) {
		snprintf(k, sizeof(k), "%s", opt[i].kw);
		for (char *p = k; *p != '\0'; p++)
			if (*p == '-')
				*p = '_';
		if (opt[i].type == LB_CMD_OPT_DURATION)
			bad |= jset_str(j, k,
					lb_cmd_fmt_duration(o->flow[i], d));
		else if (opt[i].type == LB_CMD_OPT_BOOL)
			bad |= jset(j, k, json_boolean(o->flow[i] != 0));
		else
			bad |= jset_u64(j, k, o->flow[i]);
	}
	return bad;
}

/* Sets ctl->data, or reports that memory ran out. */
static int
give_data(struct lb_ctl *ctl, json_t *d, int bad, struct lb_cmd_out *out)
{
	if (d == NULL || bad) {
		json_decref(d);
		return lb_cmd_error(out, -ENOMEM, "out of memory");
	}
	json_decref(ctl->data);
	ctl->data = d;
	return 0;
}

/* ---- rows: what the lists show ---- */

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

/* Table slot of a configured service, or -1. */
static int
svc_slot(const struct lb_ctl *ctl, const struct lb_conf_svc_key *k)
{
	const struct lb_dpconf *c = lb_view_conf(ctl->view);

	if (c == NULL)
		return -1;
	return lb_dpconf_svc_find(c, k->proto, htonl(k->vip), htons(k->port));
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

static int
be_header(struct lb_cmd_out *out)
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
	int s = svc_slot(ctl, &sv->key);
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

/*
 * PROTO VIP:PORT naming a configured service (*sv) or, when @p deleted
 * is set, a deleted one still in the table (*slot, *sv NULL).
 */
static int
find_svc(const struct lb_ctl *ctl, char **argv, bool deleted,
	 const struct lb_conf_svc **sv, int *slot, struct lb_cmd_out *out)
{
	char s[LB_CTLCMD_SVC_STRLEN];
	struct lb_conf_svc_key k;
	const struct lb_dpconf *c;
	int rc;

	memset(&k, 0, sizeof(k));
	rc = lb_cmd_parse_proto(argv[0], &k.proto, out);
	if (rc == 0)
		rc = lb_cmd_parse_ipv4_port(argv[1], &k.vip, &k.port, out);
	if (rc != 0)
		return rc;
	*sv = lb_conf_svc_find(ctl->conf, &k);
	*slot = *sv != NULL ? svc_slot(ctl, &k) : -1;
	if (*sv != NULL)
		return 0;
	c = lb_view_conf(ctl->view);
	for (uint32_t i = 0; deleted && c != NULL && i < c->nb_svc; i++) {
		const struct lb_dpconf_svc *t = &c->svc[i];

		if (t->state == LB_SVC_DELETED && t->proto == k.proto &&
		    t->vip == htonl(k.vip) && t->vport == htons(k.port)) {
			*slot = (int)i;
			return 0;
		}
	}
	return lb_cmd_error(out, -ENOENT, "no service %s",
			    lb_ctlcmd_svc_str(k.proto, k.vip, k.port, s));
}

static int
backends_of(struct lb_ctl *ctl, const struct lb_conf_svc *sv, int slot,
	    bool all, json_t *arr, struct lb_cmd_out *out)
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
		rc = find_svc(ctl, argv, true, &sv, &slot, out);
	if (rc != 0)
		return rc;
	arr = json_array();
	d = json_object();
	if (arr == NULL || d == NULL || json_object_set(d, "backends", arr)) {
		json_decref(arr);
		json_decref(d);
		return lb_cmd_error(out, -ENOMEM, "out of memory");
	}
	rc = be_header(out);
	if (rc == 0)
		rc = backends_of(ctl, sv, slot, argc == 0, arr, out);
	json_decref(arr);
	if (rc != 0) {
		json_decref(d);
		return rc;
	}
	return give_data(ctl, d, 0, out);
}

/* ---- services ---- */

struct svc_row {
	char svc[LB_CTLCMD_SVC_STRLEN];
	const struct lb_conf_svc_opts *opts;
	const char *state;
	unsigned int nb_conf;  /* configured backends */
	unsigned int nb_drain; /* of which draining */
	int slot;
	bool rt;
	struct lb_view_svc v;
};

static void
svc_row_conf(const struct lb_ctl *ctl, const struct lb_conf_svc *sv,
	     struct svc_row *r)
{
	memset(r, 0, sizeof(*r));
	lb_ctlcmd_svc_str(sv->key.proto, sv->key.vip, sv->key.port, r->svc);
	r->opts = &sv->opts;
	r->state = "active";
	r->nb_conf = sv->nb_be;
	for (unsigned int j = 0; j < sv->nb_be; j++)
		r->nb_drain += sv->be[j].draining;
	r->slot = svc_slot(ctl, &sv->key);
	r->rt = r->slot >= 0 &&
		lb_view_svc_get(ctl->view, (uint32_t)r->slot, &r->v) == 0;
	if (!r->rt && ctl->view != NULL)
		r->state = "pending";
}

static void
svc_row_deleted(const struct lb_ctl *ctl, int s, struct svc_row *r)
{
	memset(r, 0, sizeof(*r));
	r->slot = s;
	r->rt = lb_view_svc_get(ctl->view, (uint32_t)s, &r->v) == 0;
	lb_ctlcmd_svc_str(r->v.proto, r->v.vip, r->v.port, r->svc);
	r->opts = r->v.opts;
	r->state = "deleted";
}

/* The SPL policy's reading of a service: shown, not acted upon. */
static json_t *
spl_json(const struct lb_l7view_svc *x)
{
	json_t *o = json_object();
	int bad = o == NULL;

	if (bad)
		return NULL;
	bad |= jset_f64(o, "total", x->total);
	bad |= jset_str(o, "decision", lb_spl_action_str(x->action));
	bad |= jset_str(o, "reason", lb_spl_reason_str(x->reason));
	bad |= jset_u64(o, "instances", x->nb_inst);
	bad |= jset_f64(o, "lower", x->lower);
	bad |= jset_f64(o, "upper", x->upper);
	bad |= jset_str(o, "decay", x->decay);
	bad |= jset_u64(o, "rejected", x->spl_rejected);
	bad |= jset_u64(o, "clamped", x->spl_clamped);
	bad |= jset_u64(o, "untracked", x->untracked);
	bad |= jset_u64(o, "inflight_samples", x->inflight_n);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *
admit_json(const struct svc_row *r)
{
	const struct lb_admit_conf *a = r->opts != NULL ? &r->opts->admit
							: NULL;
	json_t *j = json_object(), *v = json_object();
	int bad = j == NULL || v == NULL;

	if (!bad && a != NULL) {
		bad |= jset_u64(j, "rate", a->rate);
		bad |= jset_u64(j, "burst", a->rate ? lb_admit_burst(a) : 0);
		bad |= jset_str(j, "key", NAME_OF(lb_admit_key_names, a->key));
		bad |= jset_u64(j, "prefix", a->prefix);
		bad |= jset_str(j, "reject",
				NAME_OF(lb_admit_reject_names, a->reject));
		bad |= jset_str(j, "cluster",
				NAME_OF(lb_admit_cluster_names, a->cluster));
		bad |= jset_str(j, "full",
				NAME_OF(lb_admit_full_names, a->full));
		bad |= jset_str(j, "unfollowable",
				NAME_OF(lb_admit_unfollow_names, a->unfollow));
		bad |= jset_u64(j, "table_full",
				r->rt ? r->v.admit_table_full : 0);
	}
	for (int k = 0; k < LB_ADMIT_VERDICT_MAX && !bad; k++)
		bad |= jset_u64(v, lb_admit_verdict_name(k),
				r->rt ? r->v.admit[k] : 0);
	if (!bad)
		bad |= jset(j, "verdicts", v);
	else
		json_decref(v);
	if (bad) {
		json_decref(j);
		return NULL;
	}
	return j;
}

/* A service's health check settings, null without one. */
static json_t *
check_json(const struct lb_conf_check *k)
{
	static const char *const type[] = {"none", "tcp", "http"};
	char d[LB_CMD_DURATION_STRLEN];
	json_t *o;
	int bad;

	if (k->type == LB_CONF_CHECK_NONE || k->type > LB_CONF_CHECK_HTTP)
		return json_null();
	o = json_object();
	if (o == NULL)
		return NULL;
	bad = jset_str(o, "type", type[k->type]);
	if (k->type == LB_CONF_CHECK_HTTP) {
		bad |= jset_str(o, "path", k->path);
		bad |= jset_u64(o, "status_min", k->status_lo);
		bad |= jset_u64(o, "status_max", k->status_hi);
	}
	bad |= jset_u64(o, "port", k->port);
	bad |= jset_str(o, "interval", lb_cmd_fmt_duration(k->interval_ns, d));
	bad |= jset_str(o, "timeout", lb_cmd_fmt_duration(k->timeout_ns, d));
	bad |= jset_u64(o, "rise", k->rise);
	bad |= jset_u64(o, "fall", k->fall);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *
svc_json(const struct svc_row *r)
{
	char d[LB_CMD_DURATION_STRLEN];
	const struct lb_conf_svc_opts *o = r->opts;
	json_t *j = json_object();
	int bad = j == NULL;

	if (bad)
		return NULL;
	bad |= jset_str(j, "service", r->svc);
	bad |= jset_str(j, "state", r->state);
	bad |= jset(j, "slot",
		    r->slot >= 0 ? json_integer(r->slot) : json_null());
	if (o != NULL) {
		bad |= jset_str(j, "sched", o->sched);
		bad |= jset(j, "http", json_boolean(o->http));
		bad |= jset_u64(j, "retries", o->retries);
		bad |= jset_u64(j, "deferq", o->deferq_len);
		bad |= jset_str(j, "retry_gap",
				lb_cmd_fmt_duration(o->retry_gap_ns, d));
		bad |= jset_str(j, "expiry",
				lb_cmd_fmt_duration(o->expiry_ns, d));
		bad |= jset_str(j, "syn_timeout",
				lb_cmd_fmt_duration(o->syn_timeout_ns, d));
		bad |= jset_flow_opts(j, o);
		for (int h = 0; h < LB_CONF_HDR_NB; h++)
			bad |= jset_str(j, lb_conf_hdr_opt((enum lb_conf_hdr)h),
					o->hdr[h]);
		bad |= jset_str(j, "errors", o->errors);
		bad |= jset_str(j, "error_exclude", o->err_exclude);
		bad |= jset_u64(j, "default_expect_ms", o->default_expect_ms);
		bad |= jset(j, "check", check_json(&o->check));
	}
	bad |= jset_u64(j, "backends", r->nb_conf);
	bad |= jset_u64(j, "backends_draining", r->nb_drain);
	bad |= jset_u64(j, "backends_removed",
			r->rt ? r->v.nb_be[LB_BE_REMOVED] : 0);
	bad |= jset_u64(j, "flows_active", r->rt ? r->v.flows_active : 0);
	bad |= jset_u64(j, "flows_total", r->rt ? r->v.flows_total : 0);
	bad |= jset_u64(j, "flows_ended", r->rt ? r->v.flows_ended : 0);
	bad |= jset_u64(j, "errors", r->rt ? r->v.errors : 0);
	bad |= jset_u64(j, "pkts_to_backend", r->rt ? r->v.pkts[0] : 0);
	bad |= jset_u64(j, "pkts_to_client", r->rt ? r->v.pkts[1] : 0);
	bad |= jset_u64(j, "bytes_to_backend", r->rt ? r->v.bytes[0] : 0);
	bad |= jset_u64(j, "bytes_to_client", r->rt ? r->v.bytes[1] : 0);
	bad |= jset_u64(j, "http_responses", r->rt ? r->v.http_responses : 0);
	bad |= jset_u64(j, "http_5xx", r->rt ? r->v.http_5xx : 0);
	bad |= jset_u64(j, "http_inflight", r->rt ? r->v.inflight : 0);
	bad |= jset(j, "inflight_avg",
		    r->rt ? json_real(r->v.l7.inflight_avg) : json_null());
	bad |= jset(j, "spl", r->rt ? spl_json(&r->v.l7) : json_null());
	bad |= jset(j, "admit", admit_json(r));
	if (bad) {
		json_decref(j);
		return NULL;
	}
	return j;
}

#define SVC_HDR_FMT "%-22s %-9s %-8s %-9s %7s %9s %7s %-19s %s\n"

static int
svc_text(const struct svc_row *r, struct lb_cmd_out *out)
{
	char be[32], act[24], fl[24], er[24], pk[48], by[48];
	unsigned int live = r->nb_conf - r->nb_drain;

	if (r->rt) {
		snprintf(act, sizeof(act), "%" PRIu64, r->v.flows_active);
		snprintf(fl, sizeof(fl), "%" PRIu64, r->v.flows_total);
		snprintf(er, sizeof(er), "%" PRIu64, r->v.errors);
		snprintf(pk, sizeof(pk), "%" PRIu64 "/%" PRIu64, r->v.pkts[0],
			 r->v.pkts[1]);
		snprintf(by, sizeof(by), "%" PRIu64 "/%" PRIu64, r->v.bytes[0],
			 r->v.bytes[1]);
	} else {
		snprintf(act, sizeof(act), "-");
		snprintf(fl, sizeof(fl), "-");
		snprintf(er, sizeof(er), "-");
		snprintf(pk, sizeof(pk), "-");
		snprintf(by, sizeof(by), "-");
	}
	/* Backends taking new flows / configured (+ removed, flows
	 * running out). */
	if (r->rt && r->v.nb_be[LB_BE_REMOVED] > 0)
		snprintf(be, sizeof(be), "%u/%u+%u", live, r->nb_conf,
			 r->v.nb_be[LB_BE_REMOVED]);
	else
		snprintf(be, sizeof(be), "%u/%u", live, r->nb_conf);
	return lb_cmd_printf(out, SVC_HDR_FMT, r->svc,
			     r->opts != NULL ? r->opts->sched : "-", r->state,
			     be, act, fl, er, pk, by);
}

static int
emit_svc(const struct svc_row *r, json_t *arr, struct lb_cmd_out *out)
{
	json_t *j = svc_json(r);

	if (j == NULL || json_array_append_new(arr, j) != 0)
		return lb_cmd_error(out, -ENOMEM, "out of memory");
	return svc_text(r, out);
}

static int
cmd_svc_list(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_ctl *ctl = ctx;
	const struct lb_dpconf *c = lb_view_conf(ctl->view);
	struct svc_row r;
	json_t *d, *arr;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 0, 0);
	if (rc != 0)
		return rc;
	arr = json_array();
	d = json_object();
	if (arr == NULL || d == NULL || json_object_set(d, "services", arr)) {
		json_decref(arr);
		json_decref(d);
		return lb_cmd_error(out, -ENOMEM, "out of memory");
	}
	rc = lb_cmd_printf(out, SVC_HDR_FMT, "SERVICE", "SCHED", "STATE",
			   "BACKENDS", "ACTIVE", "FLOWS", "ERRORS",
			   "PKTS(C>B/B>C)", "BYTES(C>B/B>C)");
	for (unsigned int i = 0; i < lb_conf_nb_svcs(ctl->conf) && rc == 0;
	     i++) {
		svc_row_conf(ctl, lb_conf_svc_at(ctl->conf, i), &r);
		rc = emit_svc(&r, arr, out);
	}
	for (uint32_t s = 0; c != NULL && s < c->nb_svc && rc == 0; s++) {
		if (c->svc[s].state != LB_SVC_DELETED)
			continue;
		svc_row_deleted(ctl, (int)s, &r);
		rc = emit_svc(&r, arr, out);
	}
	json_decref(arr);
	if (rc != 0) {
		json_decref(d);
		return rc;
	}
	return give_data(ctl, d, 0, out);
}

/* Admission settings and verdicts of a service (lb/admit.h). */
static int
admit_text(const struct svc_row *r, struct lb_cmd_out *out)
{
	const struct lb_admit_conf *a = &r->opts->admit;
	const uint64_t *n = r->v.admit;

	if (a->rate == 0 && n[LB_ADMIT_PASS] + n[LB_ADMIT_REJ_EMPTY] +
					n[LB_ADMIT_REJ_NEG] ==
				0)
		return 0;
	return lb_cmd_printf(
		out,
		"  admission: rate %" PRIu64 "/s, burst %" PRIu64
		", key %s/%u, reject %s, cluster %s, full %s\n"
		"    passed %" PRIu64 ", passed without bucket %" PRIu64
		"; rejected: empty %" PRIu64 ", negative-cache %" PRIu64
		", cluster-down %" PRIu64 ", table-full %" PRIu64
		"; table full %" PRIu64 " times\n",
		a->rate, a->rate != 0 ? lb_admit_burst(a) : 0,
		NAME_OF(lb_admit_key_names, a->key),
		a->prefix,
		NAME_OF(lb_admit_reject_names, a->reject),
		NAME_OF(lb_admit_cluster_names, a->cluster),
		NAME_OF(lb_admit_full_names, a->full),
		n[LB_ADMIT_PASS], n[LB_ADMIT_PASS_FULL], n[LB_ADMIT_REJ_EMPTY],
		n[LB_ADMIT_REJ_NEG], n[LB_ADMIT_REJ_CLUSTER],
		n[LB_ADMIT_REJ_FULL], r->v.admit_table_full);
}

static int
svc_show_text(const struct svc_row *r, struct lb_cmd_out *out)
{
	char g[LB_CMD_DURATION_STRLEN], e[LB_CMD_DURATION_STRLEN];
	char t[LB_CMD_DURATION_STRLEN], rt[12];
	const struct lb_conf_svc_opts *o = r->opts;
	int rc;

	if (o->retries == 0)
		snprintf(rt, sizeof(rt), "all");
	else
		snprintf(rt, sizeof(rt), "%u", o->retries);
	rc = lb_cmd_printf(out, "service %s: %s", r->svc, r->state);
	if (rc == 0 && r->slot >= 0)
		rc = lb_cmd_printf(out, " (table slot %d)", r->slot);
	if (rc == 0)
		rc = lb_cmd_printf(
			out,
			"\n  sched %s, http %s, retries %s, deferq %u, "
			"retry-gap %s, expiry %s, syn-timeout %s\n",
			o->sched, o->http ? "on" : "off", rt, o->deferq_len,
			lb_cmd_fmt_duration(o->retry_gap_ns, g),
			lb_cmd_fmt_duration(o->expiry_ns, e),
			lb_cmd_fmt_duration(o->syn_timeout_ns, t));
	if (rc == 0)
		rc = lb_cmd_printf(out, " ");
	if (rc == 0)
		rc = lb_conf_flow_opts_print(out, o, NULL);
	if (rc == 0)
		rc = lb_cmd_printf(out, "\n");
	for (int h = 0; rc == 0 && o->http && h < LB_CONF_HDR_NB; h++)
		rc = lb_cmd_printf(out, "%s%s %s%s", h ? ", " : "  ",
				   lb_conf_hdr_opt((enum lb_conf_hdr)h),
				   o->hdr[h], h + 1 < LB_CONF_HDR_NB ? "" : "\n");
	if (rc == 0 && o->http)
		rc = lb_cmd_printf(out,
				   "  errors %s, error-exclude %s, "
				   "default-expect %ums\n",
				   o->errors,
				   o->err_exclude[0] ? o->err_exclude : "none",
				   o->default_expect_ms);
	if (rc == 0)
		rc = lb_cmd_printf(out,
				   "  backends: %u configured, %u draining",
				   r->nb_conf, r->nb_drain);
	if (rc == 0 && r->rt)
		rc = lb_cmd_printf(out, ", %u removed with flows left",
				   r->v.nb_be[LB_BE_REMOVED]);
	if (rc == 0 && !r->rt)
		return lb_cmd_printf(out, "\n  (no dataplane figures)\n\n");
	if (rc == 0)
		rc = lb_cmd_printf(
			out,
			"\n  flows: %" PRIu64 " active, %" PRIu64
			" total, %" PRIu64 " ended; errors %" PRIu64
			"\n  packets: %" PRIu64 " client>backend, %" PRIu64
			" backend>client; bytes: %" PRIu64
			" client>backend, %" PRIu64 " backend>client\n",
			r->v.flows_active, r->v.flows_total, r->v.flows_ended,
			r->v.errors, r->v.pkts[0], r->v.pkts[1], r->v.bytes[0],
			r->v.bytes[1]);
	if (rc == 0 && r->opts->http)
		rc = lb_cmd_printf(out,
				   "  http: %" PRIu64 " responses, %" PRIu64
				   " 5xx, %" PRIu64 " in flight (%.1f on "
				   "average over the last %u ticks)\n",
				   r->v.http_responses, r->v.http_5xx,
				   r->v.inflight, r->v.l7.inflight_avg,
				   r->v.l7.inflight_n);
	if (rc == 0 && r->opts->http)
		rc = lb_cmd_printf(
			out,
			"  spl: total load indicator %.4f over %u "
			"instance(s), decay %s, thresholds %g/%g: "
			"would %s (%s)\n",
			r->v.l7.total, r->v.l7.nb_inst, r->v.l7.decay,
			r->v.l7.lower, r->v.l7.upper,
			lb_spl_action_str(r->v.l7.action),
			lb_spl_reason_str(r->v.l7.reason));
	if (rc == 0)
		rc = admit_text(r, out);
	return rc == 0 ? lb_cmd_printf(out, "\n") : rc;
}

static double
jnum(const json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

/* Per backend, what HTTP feedback says: from the rows' data, so that
 * text and JSON cannot disagree. */
static int
l7_detail(const json_t *arr, struct lb_cmd_out *out)
{
	size_t i;
	json_t *e;
	int rc;

	rc = lb_cmd_printf(out,
			   "\nHTTP feedback (window %llu s; latency "
			   "percentiles within 6.25%%)\n",
			   (unsigned long long)(LB_L7V_BUCKETS *
						LB_L7V_BUCKET_NS / 1000000000ull));
	json_array_foreach(arr, i, e) {
		const json_t *x = json_object_get(e, "l7");
		const char *be = json_string_value(json_object_get(e, "backend"));
		char spl[96];

		if (rc != 0)
			break;
		if (!json_is_object(x))
			continue;
		if (json_is_number(json_object_get(x, "spl")))
			snprintf(spl, sizeof(spl),
				 "spl %.3f age %.1f ms decayed %.4f%s",
				 jnum(x, "spl"), jnum(x, "spl_age_ms"),
				 jnum(x, "spl_decayed"),
				 json_is_true(json_object_get(x, "spl_member"))
					 ? ""
					 : " (not averaged)");
		else
			snprintf(spl, sizeof(spl), "spl -");
		rc = lb_cmd_printf(
			out,
			"  %-21s %s; p50/p90/p99 %.2f/%.2f/%.2f ms; 5xx "
			"%.1f%% of %.0f, qos-miss %.1f%%; in flight %.0f; "
			"records spl %.0f http %.0f",
			be != NULL ? be : "?", spl, jnum(x, "p50_ms"),
			jnum(x, "p90_ms"), jnum(x, "p99_ms"),
			100.0 * jnum(x, "rate_5xx"),
			jnum(x, "window_responses"),
			100.0 * jnum(x, "rate_qos_miss"),
			jnum(e, "http_inflight"), jnum(x, "spl_records"),
			jnum(x, "http_records"));
		if (rc == 0 && json_is_number(json_object_get(x, "orca_cpu")))
			rc = lb_cmd_printf(out, "; orca cpu %.3f mem %.3f",
					   jnum(x, "orca_cpu"),
					   jnum(x, "orca_mem"));
		if (rc == 0)
			rc = lb_cmd_printf(out, "\n");
	}
	return rc;
}

static int
cmd_svc_show(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_ctl *ctl = ctx;
	const struct lb_conf_svc *sv;
	struct svc_row r;
	json_t *j, *arr;
	int slot, rc;

	rc = lb_cmd_want_args(out, argc, argv, 2, 2);
	if (rc == 0)
		rc = find_svc(ctl, argv, true, &sv, &slot, out);
	if (rc != 0)
		return rc;
	if (sv != NULL)
		svc_row_conf(ctl, sv, &r);
	else
		svc_row_deleted(ctl, slot, &r);
	rc = svc_show_text(&r, out);
	if (rc == 0)
		rc = be_header(out);
	if (rc != 0)
		return rc;
	j = svc_json(&r);
	arr = json_array();
	if (j == NULL || arr == NULL ||
	    json_object_set(j, "backends_list", arr) != 0) {
		json_decref(j);
		json_decref(arr);
		return lb_cmd_error(out, -ENOMEM, "out of memory");
	}
	rc = backends_of(ctl, sv, slot, false, arr, out);
	if (rc == 0 && r.rt && r.opts->http)
		rc = l7_detail(arr, out);
	json_decref(arr);
	if (rc != 0) {
		json_decref(j);
		return rc;
	}
	arr = json_object();
	if (arr == NULL || json_object_set_new(arr, "service", j) != 0) {
		json_decref(arr);
		return lb_cmd_error(out, -ENOMEM, "out of memory");
	}
	return give_data(ctl, arr, 0, out);
}

/* ---- stats ---- */

/* Counters of struct lb_worker_stats shown by name; the array ones
 * (verdict, drop) are shown by reason below. */
static const struct {
	const char *name;
	size_t off;
} wstat[] = {
#define W(f)                                                                   \
	{                                                                      \
#f, offsetof(struct lb_worker_stats, f)                        \
	}
	W(rx),
	W(tx),
	W(flows_created),
	W(syn_retries),
	W(deferred),
	W(deferq_joined),
	W(rst_sent),
	W(idle_probes),
	W(rst_no_flow),
	W(rst_limited),
	W(syn_hold_full),
	W(challenge_acks),
	W(redirect_out),
	W(redirect_in),
	W(arp_replies),
	W(arp_requests),
	W(echo_replies),
	W(icmp_translated),
	W(icmp_mtu_clamped),
	W(idle_sleeps),
	W(fb_dropped),
	W(l7_flows),
	W(l7_pool_full),
	W(l7_stopped),
	{"l7_unfollowed_reset",
	 offsetof(struct lb_worker_stats, l7_unfollowed) +
		 LB_L7_UNF_RESET * sizeof(uint64_t)},
	{"l7_unfollowed_admitted",
	 offsetof(struct lb_worker_stats, l7_unfollowed) +
		 LB_L7_UNF_ADMITTED * sizeof(uint64_t)},
	W(l7_db_errors),
	W(l7_blocks_lost),
	W(conf_switches),
	W(exc_to_kernel),
	W(exc_from_kernel),
#undef W
};

static uint64_t
wfield(const struct lb_worker_stats *st, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)st + off, sizeof(v));
	return v;
}

/* One stats row: a name, the total, one value per worker. */
struct srow {
	char name[48];
	uint64_t total;
	uint64_t w[LB_SHM_MAX_WORKERS];
};

static int
srow_emit(const struct srow *r, uint32_t nw, json_t *tot, json_t *const *pw,
	  const char *group, struct lb_cmd_out *out)
{
	char label[64];
	int rc, bad = 0;

	snprintf(label, sizeof(label), "%s%s%s", group != NULL ? group : "",
		 group != NULL ? " " : "", r->name);
	rc = lb_cmd_printf(out, "%-28s %14" PRIu64, label, r->total);
	for (uint32_t w = 0; w < nw && rc == 0; w++)
		rc = lb_cmd_printf(out, " %14" PRIu64, r->w[w]);
	if (rc == 0)
		rc = lb_cmd_printf(out, "\n");
	/* JSON: flat counters at the top, reasons under their group. */
	for (uint32_t w = 0; w <= nw && !bad; w++) {
		json_t *o = w == nw ? tot : pw[w];
		uint64_t v = w == nw ? r->total : r->w[w];

		if (group != NULL) {
			json_t *g = json_object_get(o, group);

			if (g == NULL) {
				g = json_object();
				bad |= jset(o, group, g);
			}
			if (!bad)
				bad |= jset_u64(g, r->name, v);
		} else {
			bad |= jset_u64(o, r->name, v);
		}
	}
	return rc != 0 ? rc
	       : bad   ? lb_cmd_error(out, -ENOMEM, "out of memory")
		       : 0;
}

/* Admission by key class and verdict (rows of classes in use), then the
 * borrowing that served them. */
static int
admit_rows(const struct lb_shm *shm, uint32_t nw, json_t *tot,
	   json_t *const *pw, struct lb_cmd_out *out)
{
	static const char *const extra[] = {"borrows", "borrowed",
					    "shm_atomics", "evictions",
					    "table_full"};
	struct srow r;
	int rc = 0;

	for (int k = 0;
	     k < LB_ADMIT_KEY_MAX * LB_ADMIT_VERDICT_MAX + 5 && rc == 0; k++) {
		int cls = k / LB_ADMIT_VERDICT_MAX, v = k % LB_ADMIT_VERDICT_MAX;
		bool is_extra = cls >= LB_ADMIT_KEY_MAX;

		memset(&r, 0, sizeof(r));
		if (is_extra)
			snprintf(r.name, sizeof(r.name), "%s",
				 extra[k - LB_ADMIT_KEY_MAX *
						   LB_ADMIT_VERDICT_MAX]);
		else
			snprintf(r.name, sizeof(r.name), "%s_%s",
				 lb_admit_key_names[cls],
				 lb_admit_verdict_name(v));
		for (uint32_t w = 0; w < nw; w++) {
			const struct lb_admit_stats *a = &shm->w[w]->st->admit;
			const uint64_t x[] = {a->borrows, a->borrowed,
					      a->shm_atomics, a->evictions,
					      a->table_full};

			r.w[w] = is_extra ? x[k - LB_ADMIT_KEY_MAX *
						      LB_ADMIT_VERDICT_MAX]
					  : a->n[cls][v];
			r.total += r.w[w];
		}
		if (r.total != 0 || is_extra)
			rc = srow_emit(&r, nw, tot, pw, "admit", out);
	}
	return rc;
}

static int
stats_rows(const struct lb_ctl *ctl, json_t *tot, json_t *const *pw,
	   struct lb_cmd_out *out)
{
	const struct lb_shm *shm = lb_view_shm(ctl->view);
	uint32_t nw = shm->nb_workers > LB_SHM_MAX_WORKERS ? LB_SHM_MAX_WORKERS
							   : shm->nb_workers;
	struct srow r;
	int rc = 0;

	for (size_t i = 0; i < sizeof(wstat) / sizeof(wstat[0]) && rc == 0;
	     i++) {
		memset(&r, 0, sizeof(r));
		snprintf(r.name, sizeof(r.name), "%s", wstat[i].name);
		for (uint32_t w = 0; w < nw; w++) {
			r.w[w] = wfield(shm->w[w]->st, wstat[i].off);
			r.total += r.w[w];
		}
		rc = srow_emit(&r, nw, tot, pw, NULL, out);
	}
	if (rc == 0) {
		/* A longest time, not a count: its total is the largest. */
		memset(&r, 0, sizeof(r));
		snprintf(r.name, sizeof(r.name), "switch_max_ns");
		for (uint32_t w = 0; w < nw; w++) {
			r.w[w] = shm->w[w]->st->switch_max_ns;
			if (r.w[w] > r.total)
				r.total = r.w[w];
		}
		rc = srow_emit(&r, nw, tot, pw, NULL, out);
	}
	for (int k = 0; k < 4 && rc == 0; k++) {
		static const char *const names[] = {
			"flows_active",
			"flow_table_inserts",
			"flow_table_refused",
			"flow_table_dup",
		};
		memset(&r, 0, sizeof(r));
		snprintf(r.name, sizeof(r.name), "%s", names[k]);
		for (uint32_t w = 0; w < nw; w++) {
			struct lb_flow_stats fs;

			lb_flow_stats_get(shm->w[w]->ft, &fs);
			r.w[w] = k == 0	  ? fs.flows
				 : k == 1 ? fs.inserts
				 : k == 2 ? fs.refused
					  : fs.dup;
			r.total += r.w[w];
		}
		rc = srow_emit(&r, nw, tot, pw, NULL, out);
	}
	for (int d = 0; d < LB_DROP_MAX && rc == 0; d++) {
		memset(&r, 0, sizeof(r));
		snprintf(r.name, sizeof(r.name), "%s",
			 lb_drop_name((enum lb_drop)d));
		for (uint32_t w = 0; w < nw; w++) {
			r.w[w] = shm->w[w]->st->drop[d];
			r.total += r.w[w];
		}
		rc = srow_emit(&r, nw, tot, pw, "drop", out);
	}
	for (int v = LB_PKT_DROP_FIRST; v < LB_PKT_VERDICT_MAX && rc == 0;
	     v++) {
		memset(&r, 0, sizeof(r));
		snprintf(r.name, sizeof(r.name), "%s",
			 lb_pkt_verdict_name((enum lb_pkt_verdict)v));
		for (uint32_t w = 0; w < nw; w++) {
			r.w[w] = shm->w[w]->st->verdict[v];
			r.total += r.w[w];
		}
		rc = srow_emit(&r, nw, tot, pw, "malformed", out);
	}
	for (unsigned int k = 0; k < LB_FB_KIND_MAX && rc == 0; k++) {
		memset(&r, 0, sizeof(r));
		snprintf(r.name, sizeof(r.name), "%s", lb_view_fb_kind_name(k));
		for (uint32_t w = 0; w < nw; w++) {
			r.w[w] = lb_view_fb_stats(ctl->view, w)->kind[k];
			r.total += r.w[w];
		}
		rc = srow_emit(&r, nw, tot, pw, "feedback", out);
	}
	if (rc == 0)
		rc = admit_rows(shm, nw, tot, pw, out);
	if (rc == 0) {
		memset(&r, 0, sizeof(r));
		snprintf(r.name, sizeof(r.name), "invalid");
		for (uint32_t w = 0; w < nw; w++) {
			r.w[w] = lb_view_fb_stats(ctl->view, w)->invalid;
			r.total += r.w[w];
		}
		rc = srow_emit(&r, nw, tot, pw, "feedback", out);
	}
	return rc;
}

static json_t *
control_json(const struct lb_ctl *ctl)
{
	const struct lb_ctl_counters *c = &ctl->ctr;
	json_t *o = json_object();
	int bad = o == NULL;

	if (bad)
		return NULL;
	bad |= jset_u64(o, "pid", (uint64_t)getpid());
	bad |= jset(o, "attached", json_boolean(ctl->view != NULL));
	bad |= jset(o, "state_file",
		    ctl->state_path != NULL ? json_string(ctl->state_path)
					    : json_null());
	bad |= jset_u64(o, "conf_changes", lb_conf_generation(ctl->conf));
	bad |= jset_u64(o, "publishes", c->publishes);
	bad |= jset_u64(o, "publish_errors", c->publish_errors);
	bad |= jset_u64(o, "gc_publishes", c->gc_publishes);
	bad |= jset_u64(o, "state_writes", c->state_writes);
	bad |= jset_u64(o, "state_errors", c->state_errors);
	bad |= jset_u64(o, "api_connections", c->api_conns);
	bad |= jset_u64(o, "api_requests", c->api_requests);
	bad |= jset_u64(o, "api_errors", c->api_errors);
	bad |= jset_u64(o, "grace_ns_last", c->grace_ns_last);
	bad |= jset_u64(o, "grace_ns_max", c->grace_ns_max);
	bad |= jset_u64(o, "attaches", c->attaches);
	bad |= jset_u64(o, "cluster_borrows", c->cluster.borrows);
	bad |= jset_u64(o, "cluster_tokens", c->cluster.tokens);
	bad |= jset_u64(o, "cluster_errors", c->cluster.errors);
	bad |= jset_u64(o, "cluster_local_tokens", c->cluster.local);
	bad |= jset_u64(o, "cluster_down_ms", c->cluster.down_ms);
	bad |= jset_u64(o, "cluster_down", c->cluster.down);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int
stats_head(const struct lb_ctl *ctl, json_t *d, struct lb_cmd_out *out)
{
	const struct lb_shm *shm = lb_view_shm(ctl->view);
	const struct lb_dpconf *c = lb_view_conf(ctl->view);
	json_t *dp, *gens;
	int rc, bad = 0;

	rc = lb_cmd_printf(
		out,
		"lb-control: pid %d, %" PRIu64 " table(s) published, %" PRIu64
		" refused, state file %s\n",
		(int)getpid(), ctl->ctr.publishes, ctl->ctr.publish_errors,
		ctl->state_path != NULL ? ctl->state_path : "-");
	if (rc == 0 && ctl->ctr.cluster.borrows + ctl->ctr.cluster.errors > 0)
		rc = lb_cmd_printf(
			out,
			"cluster tier (Redis): %s, %" PRIu64
			" batch(es) for %" PRIu64 " token(s), %" PRIu64
			" error(s), %" PRIu64 " token(s) refilled locally\n",
			ctl->ctr.cluster.down ? "down" : "up",
			ctl->ctr.cluster.borrows, ctl->ctr.cluster.tokens,
			ctl->ctr.cluster.errors, ctl->ctr.cluster.local);
	if (rc != 0)
		return rc;
	if (shm == NULL) {
		bad |= jset(d, "dataplane", json_null());
		rc = lb_cmd_printf(out, "dataplane: not attached\n");
		return rc != 0 ? rc : bad ? -ENOMEM : 0;
	}
	rc = lb_cmd_printf(out,
			   "dataplane: pid %d, %u worker(s), %u port(s), "
			   "table generation %" PRIu64 " (workers at",
			   shm->dataplane_pid, shm->nb_workers, shm->nb_ports,
			   c != NULL ? c->gen : 0);
	dp = json_object();
	gens = json_array();
	bad |= dp == NULL || gens == NULL;
	for (uint32_t w = 0; w < shm->nb_workers && rc == 0 && !bad; w++) {
		uint64_t g = atomic_load_explicit(&shm->w[w]->conf_gen,
						  memory_order_acquire);

		rc = lb_cmd_printf(out, " %" PRIu64, g);
		bad |= json_array_append_new(gens, json_integer((json_int_t)g));
	}
	if (rc == 0)
		rc = lb_cmd_printf(out, ")\n\n%-28s %14s", "COUNTER", "TOTAL");
	for (uint32_t w = 0; w < shm->nb_workers && rc == 0; w++) {
		char h[16];

		snprintf(h, sizeof(h), "W%u", w);
		rc = lb_cmd_printf(out, " %14s", h);
	}
	if (rc == 0)
		rc = lb_cmd_printf(out, "\n");
	if (!bad) {
		bad |= jset_u64(dp, "pid", (uint64_t)shm->dataplane_pid);
		bad |= jset_u64(dp, "workers", shm->nb_workers);
		bad |= jset_u64(dp, "ports", shm->nb_ports);
		bad |= jset_u64(dp, "conf_gen", c != NULL ? c->gen : 0);
		bad |= json_object_set(dp, "worker_conf_gen", gens);
		bad |= jset(d, "dataplane", dp);
		dp = NULL;
	}
	json_decref(gens);
	json_decref(dp);
	return rc != 0 ? rc : bad ? -ENOMEM : 0;
}

static int
cmd_stats(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_ctl *ctl = ctx;
	const struct lb_shm *shm = lb_view_shm(ctl->view);
	json_t *pw[LB_SHM_MAX_WORKERS] = {NULL};
	json_t *d, *tot = NULL, *arr = NULL;
	uint32_t nw = shm != NULL ? shm->nb_workers : 0;
	int rc, bad;

	if (nw > LB_SHM_MAX_WORKERS)
		nw = LB_SHM_MAX_WORKERS;

	rc = lb_cmd_want_args(out, argc, argv, 0, 0);
	if (rc != 0)
		return rc;
	d = json_object();
	bad = d == NULL || jset(d, "control", control_json(ctl)) != 0;
	if (!bad)
		rc = stats_head(ctl, d, out);
	if (rc == -ENOMEM)
		bad = 1;
	if (rc != 0 || bad || shm == NULL)
		goto out;
	tot = json_object();
	arr = json_array();
	bad |= tot == NULL || arr == NULL;
	for (uint32_t w = 0; w < nw && !bad; w++) {
		pw[w] = json_object();
		bad |= pw[w] == NULL || jset_u64(pw[w], "worker", w) != 0 ||
		       jset_u64(pw[w], "lcore", shm->w[w]->lcore) != 0;
	}
	if (!bad)
		rc = stats_rows(ctl, tot, pw, out);
	if (!bad && rc == 0 && ctl->xdp_stats != NULL)
		rc = ctl->xdp_stats(ctl->xdp, d, out);
	for (uint32_t w = 0; w < nw && !bad; w++) {
		bad |= json_array_append_new(arr, pw[w]);
		pw[w] = NULL;
	}
	if (!bad && rc == 0) {
		bad |= json_object_set_new(d, "total", tot);
		tot = NULL;
		bad |= json_object_set_new(d, "workers", arr);
		arr = NULL;
	}
out:
	for (uint32_t w = 0; w < nw; w++)
		json_decref(pw[w]);
	json_decref(tot);
	json_decref(arr);
	if (rc != 0 && rc != -ENOMEM) {
		json_decref(d);
		return rc;
	}
	return give_data(ctl, d, bad || rc != 0, out);
}

/* ---- the API data of the conf module's lists (their extensions) ---- */

static int
data_addr_list(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_ctl *ctl = ctx;
	char a[LB_CMD_IPV4_STRLEN], p[LB_CMD_ADDR_STRLEN];
	json_t *d, *arr;
	int bad;

	(void)argc;
	(void)argv;
	arr = json_array();
	d = json_object();
	bad = arr == NULL || d == NULL;
	for (unsigned int i = 0; i < lb_conf_nb_addrs(ctl->conf) && !bad; i++) {
		const struct lb_conf_addr *x = lb_conf_addr_at(ctl->conf, i);
		json_t *e = json_object();

		snprintf(p, sizeof(p), "%s/%u", lb_cmd_fmt_ipv4(x->ip, a),
			 x->len);
		bad |= e == NULL || jset_str(e, "addr", p) ||
		       jset_u64(e, "port", x->port) ||
		       (x->vlan != 0 && jset_u64(e, "vlan", x->vlan)) ||
		       json_array_append_new(arr, e);
	}
	if (!bad) {
		bad |= jset(d, "addrs", arr);
		arr = NULL;
	}
	json_decref(arr);
	return give_data(ctl, d, bad, out);
}

static int
data_route_list(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_ctl *ctl = ctx;
	char a[LB_CMD_IPV4_STRLEN], p[LB_CMD_ADDR_STRLEN];
	json_t *d, *arr;
	int bad;

	(void)argc;
	(void)argv;
	arr = json_array();
	d = json_object();
	bad = arr == NULL || d == NULL;
	for (unsigned int i = 0; i < lb_conf_nb_routes(ctl->conf) && !bad;
	     i++) {
		const struct lb_conf_route *x = lb_conf_route_at(ctl->conf, i);
		json_t *e = json_object();

		bad |= e == NULL ||
		       jset_str(e, "prefix",
				lb_cmd_fmt_prefix(x->net, x->len, p)) ||
		       jset_str(e, "via", lb_cmd_fmt_ipv4(x->gw, a)) ||
		       jset_u64(e, "port", x->port) ||
		       json_array_append_new(arr, e);
	}
	if (!bad) {
		bad |= jset(d, "routes", arr);
		arr = NULL;
	}
	json_decref(arr);
	return give_data(ctl, d, bad, out);
}

static int
data_snat_list(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_ctl *ctl = ctx;
	char a[LB_CMD_IPV4_STRLEN];
	json_t *d, *arr;
	int bad;

	(void)argc;
	(void)argv;
	arr = json_array();
	d = json_object();
	bad = arr == NULL || d == NULL;
	for (unsigned int i = 0; i < lb_conf_nb_snats(ctl->conf) && !bad; i++) {
		const struct lb_conf_snat *x = lb_conf_snat_at(ctl->conf, i);
		json_t *e = json_object();

		bad |= e == NULL ||
		       jset_str(e, "addr", lb_cmd_fmt_ipv4(x->ip, a)) ||
		       jset_u64(e, "port", x->port) ||
		       json_array_append_new(arr, e);
	}
	if (!bad) {
		bad |= jset(d, "snats", arr);
		arr = NULL;
	}
	json_decref(arr);
	return give_data(ctl, d, bad, out);
}

/* ---- registration ---- */

static const struct lb_cmd_def ctl_cmds[] = {
	{
		.path = "service list",
		.synopsis = "",
		.help = "List the virtual services with their counters",
		.long_help =
			"BACKENDS is taking new flows / configured, then "
			"+N for backends\nremoved whose flows are running "
			"out. ACTIVE is flows now, FLOWS\nflows created; "
			"PKTS and BYTES count client>backend/backend>client."
			"\nSTATE is `deleted` for a service deleted while its "
			"flows run out and\n`pending` for one the dataplane "
			"does not have yet. `service show`\ngives every "
			"option.",
		.fn = cmd_svc_list,
	},
	{
		.path = "service show",
		.synopsis = SVC_ARGS,
		.help = "Show a virtual service, its counters and its backends",
		.long_help =
			"Its options, its state in the dataplane, flows, "
			"errors, packets and\nbytes each way, then its "
			"backends as `backend list` shows them. A\nservice "
			"deleted while its flows run out can still be shown."
			"\nFor an `http` service: requests in flight now and "
			"on average over the\nlast ticks; the SPL policy's "
			"total load indicator (the latest SPL of\neach active "
			"backend decayed by its age, averaged) and the "
			"decision it\nwould take (increment, decrement, noop; "
			"only shown); and per backend\nits latest SPL, age "
			"and decayed value, latency percentiles, 5xx and\n"
			"QoS-miss rates over the last 10 s, and the feedback "
			"records counted.",
		.fn = cmd_svc_show,
	},
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
	{
		.path = "stats",
		.synopsis = "",
		.help = "Show the dataplane's counters, summed and per worker",
		.long_help =
			"Packets received and sent, flows created and active, "
			"SYN retries, the\ndeferred queue, redirects between "
			"workers, ARP and ICMP, drops by\nreason, malformed "
			"frames by parser verdict, feedback records by kind,\n"
			"and the generation of the published table next to "
			"the one each\nworker runs. The first lines say how "
			"lb-control itself is doing.",
		.fn = cmd_stats,
	},
};

/* The conf module's lists keep its text; the API gets their data. */
static const struct lb_cmd_ext ctl_ext[] = {
	{"addr list", NULL, data_addr_list},
	{"route list", NULL, data_route_list},
	{"snat list", NULL, data_snat_list},
};

static const struct lb_cmd_table ctl_table = {
	.name = "counters",
	.ctx = "ctl",
	.defs = ctl_cmds,
	.n = sizeof(ctl_cmds) / sizeof(ctl_cmds[0]),
	.ext = ctl_ext,
	.n_ext = sizeof(ctl_ext) / sizeof(ctl_ext[0]),
};
LB_CMD_REGISTER(ctl_table);
