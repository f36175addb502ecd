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
	struct lb_conf_ip ip; /* host order */
	uint16_t port;
	const char *state;
	const char *origin; /* the autoscaler's instance repository */
	const char *pool;   /* its pool's name; NULL: the service's own */
	uint32_t weight;
	int slot; /* backend index in the table, -1: not published */
	bool rt;  /* v holds runtime values */
	struct lb_view_be v;
	bool hc; /* hi holds the health checker's view */
	struct lb_health_be_info hi;
};

static int
be_slot(const struct lb_dpconf_svc *t, const struct lb_conf_ip *ip,
	uint16_t port)
{
	for (uint32_t b = 0; t != NULL && b < t->nb_be; b++) {
		struct lb_conf_ip x = lb_dpconf_be_addr(&t->be[b]);

		if (t->be[b].state != LB_BE_EMPTY &&
		    t->be[b].port == htons(port) && lb_conf_ip_eq(&x, ip))
			return (int)b;
	}
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
	char a[LB_CMD_IP_ADDR_STRLEN];
	json_t *o = json_object(), *ws;
	int bad = o == NULL;

	if (bad)
		return NULL;
	bad |= jset_str(o, "service", r->svc);
	bad |= jset_str(o, "backend", lb_cmd_fmt_ip_port(&r->ip, r->port, a));
	bad |= jset_str(o, "state", r->state);
	bad |= jset_str(o, "origin", r->origin != NULL ? r->origin : "static");
	bad |= jset_str(o, "health", lb_health_state_name(
					     r->hc ? r->hi.state :
						     LB_HEALTH_NONE));
	bad |= jset(o, "check", health_json(r));
	bad |= jset_u64(o, "weight", r->weight);
	bad |= jset_str(o, "pool",
			r->pool != NULL ? r->pool : LB_CONF_POOL_DEFAULT);
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

/*
 * The text is a table whose columns are as wide as their widest cell.
 * When the client gives its terminal's width (struct lb_cmd_out width),
 * the columns that fit are shown, the most telling first; the others
 * (traffic in packets and bytes, per-worker weights...) wait for a wider
 * terminal or `lbctl --wide`.
 */
enum be_col {
	C_SVC, C_BE, C_STATE, C_ORIGIN, C_HEALTH, C_CHECK, C_WEIGHT, C_ACTIVE,
	C_FLOWS, C_ERRORS, C_PKTS, C_BYTES, C_SPL, C_AGE, C_LAT, C_5XX,
	C_INFL, C_WORKERS, C_NB,
};

static const struct {
	const char *hdr;
	bool right;	   /* numbers are aligned right */
	unsigned int rank; /* shown first when the width is short: lowest */
} be_cols[C_NB] = {
	[C_SVC] = {"SERVICE", false, 0},
	[C_BE] = {"BACKEND", false, 0},
	[C_STATE] = {"STATE", false, 1},
	[C_ORIGIN] = {"ORIGIN", false, 13},
	[C_HEALTH] = {"HEALTH", false, 2},
	[C_CHECK] = {"LAST-CHECK", false, 12},
	[C_WEIGHT] = {"WEIGHT", true, 3},
	[C_ACTIVE] = {"ACTIVE", true, 4},
	[C_FLOWS] = {"FLOWS", true, 8},
	[C_ERRORS] = {"ERRORS", true, 5},
	[C_PKTS] = {"PKTS(C>B/B>C)", false, 14},
	[C_BYTES] = {"BYTES(C>B/B>C)", false, 15},
	[C_SPL] = {"SPL", true, 6},
	[C_AGE] = {"AGE", true, 11},
	[C_LAT] = {"P50/P99MS", false, 7},
	[C_5XX] = {"5XX%", true, 9},
	[C_INFL] = {"INFL", true, 10},
	[C_WORKERS] = {"ERRORS/WEIGHT BY WORKER", false, 16},
};

/* The rows' cells until the table is printed. */
struct be_table {
	unsigned int n, cap;
	char *(*cell)[C_NB];
};

static void
table_free(struct be_table *t)
{
	for (unsigned int i = 0; i < t->n; i++)
		for (unsigned int c = 0; c < C_NB; c++)
			free(t->cell[i][c]);
	free(t->cell);
	memset(t, 0, sizeof(*t));
}

static int
table_add(struct be_table *t, const char *const cells[C_NB])
{
	if (t->n == t->cap) {
		unsigned int cap = t->cap == 0 ? 16 : 2 * t->cap;
		void *p = realloc(t->cell, cap * sizeof(*t->cell));

		if (p == NULL)
			return -ENOMEM;
		t->cell = p;
		t->cap = cap;
	}
	for (unsigned int c = 0; c < C_NB; c++) {
		t->cell[t->n][c] = strdup(cells[c]);
		if (t->cell[t->n][c] == NULL) {
			while (c-- > 0)
				free(t->cell[t->n][c]);
			return -ENOMEM;
		}
	}
	t->n++;
	return 0;
}

/* Which columns fit in @p width (0: all) with widths @p w, in @p show:
 * by rank, each that still fits. */
static void
table_fit(unsigned int width, const size_t *w, bool *show)
{
	size_t used = 0;

	for (unsigned int c = 0; c < C_NB; c++)
		show[c] = width == 0;
	for (unsigned int rank = 0; rank < C_NB && width != 0; rank++)
		for (unsigned int c = 0; c < C_NB; c++) {
			size_t need = w[c] + (used > 0);

			if (be_cols[c].rank != rank)
				continue;
			/* Service and backend name a row: always there. */
			if (rank > 0 && used + need > width)
				continue;
			show[c] = true;
			used += need;
		}
}

/* One line of the table: row @p row, or the header for -1. */
static int
table_line(const struct be_table *t, int row, const size_t *w,
	   const bool *show, struct lb_cmd_out *out)
{
	char line[2048];
	size_t len = 0;

	for (unsigned int c = 0; c < C_NB; c++) {
		const char *v = row < 0 ? be_cols[c].hdr : t->cell[row][c];
		int k;

		if (!show[c])
			continue;
		k = snprintf(line + len, sizeof(line) - len, "%s%*s",
			     len > 0 ? " " : "",
			     be_cols[c].right ? (int)w[c] : -(int)w[c], v);
		if (k < 0 || (size_t)k >= sizeof(line) - len)
			break;
		len += (size_t)k;
	}
	while (len > 0 && line[len - 1] == ' ')
		len--;
	return lb_cmd_printf(out, "%.*s\n", (int)len, line);
}

static int
table_print(const struct be_table *t, struct lb_cmd_out *out)
{
	size_t w[C_NB];
	bool show[C_NB];
	int rc;

	for (unsigned int c = 0; c < C_NB; c++) {
		w[c] = strlen(be_cols[c].hdr);
		for (unsigned int i = 0; i < t->n; i++)
			if (strlen(t->cell[i][c]) > w[c])
				w[c] = strlen(t->cell[i][c]);
	}
	table_fit(out->width, w, show);
	rc = table_line(t, -1, w, show, out);
	for (unsigned int i = 0; i < t->n && rc == 0; i++)
		rc = table_line(t, (int)i, w, show, out);
	return rc;
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
row_text(const struct be_row *r, struct be_table *t)
{
	char a[LB_CMD_IP_ADDR_STRLEN], act[24], fl[24], er[24], pk[48];
	char by[48];
	char wk[LB_SHM_MAX_WORKERS * 24 + 1], wt[16];
	char spl[16], age[16], lat[32], e5[16], infl[16], hc[40];
	const char *cells[C_NB];
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
	snprintf(wt, sizeof(wt), "%u", r->weight);
	cells[C_SVC] = r->svc;
	cells[C_BE] = lb_cmd_fmt_ip_port(&r->ip, r->port, a);
	cells[C_STATE] = r->state;
	cells[C_ORIGIN] = r->origin != NULL ? r->origin : "static";
	cells[C_HEALTH] =
		lb_health_state_name(r->hc ? r->hi.state : LB_HEALTH_NONE);
	cells[C_CHECK] = hc;
	cells[C_WEIGHT] = wt;
	cells[C_ACTIVE] = act;
	cells[C_FLOWS] = fl;
	cells[C_ERRORS] = er;
	cells[C_PKTS] = pk;
	cells[C_BYTES] = by;
	cells[C_SPL] = spl;
	cells[C_AGE] = age;
	cells[C_LAT] = lat;
	cells[C_5XX] = e5;
	cells[C_INFL] = infl;
	cells[C_WORKERS] = wk;
	return table_add(t, cells);
}

static int
emit_row(const struct be_row *r, json_t *arr, struct be_table *t,
	 struct lb_cmd_out *out)
{
	json_t *j = row_json(r);

	if (j == NULL || json_array_append_new(arr, j) != 0 ||
	    row_text(r, t) != 0)
		return lb_cmd_error(out, -ENOMEM, "out of memory");
	return 0;
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
	struct lb_as_svc *a = lb_as_pool_find(ctl->as, &sv->key, r->pool);
	struct lb_as_inst *i =
		a != NULL ? lb_as_inst_by_addr(a, &r->ip, r->port) : NULL;

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
	 struct be_table *tb, struct lb_cmd_out *out)
{
	const struct lb_dpconf *c = lb_view_conf(ctl->view);
	int s = lb_ctlcmd_svc_slot(ctl, &sv->key);
	const struct lb_dpconf_svc *t = s >= 0 ? &c->svc[s] : NULL;
	bool listed[LB_CONF_MAX_BES] = {false};
	int rc = 0;

	for (unsigned int j = 0; j < sv->nb_be && rc == 0; j++) {
		const struct lb_conf_be *be = &sv->be[j];
		struct be_row r = {
			.ip = LB_CONF_IP_OF(be),
			.port = be->port,
			.state = be->draining ? "draining" : "active",
			.weight = be->weight,
			.slot = -1,
			.pool = be->pool != 0 && be->pool <= sv->nb_pool
					? sv->pool[be->pool - 1].name
					: NULL,
		};
		int b = be_slot(t, &r.ip, be->port);

		lb_ctlcmd_key_str(&sv->key, r.svc);
		row_runtime(ctl, s, b, &r);
		inst_state(ctl, sv, &r);
		r.hc = ctl->health != NULL &&
		       lb_health_get_ip(ctl->health, &sv->key, &r.ip, be->port,
					&r.hi) == 0;
		if (b >= 0)
			listed[b] = true;
		rc = emit_row(&r, arr, tb, out);
	}
	for (uint32_t b = 0; t != NULL && b < t->nb_be && rc == 0; b++) {
		struct be_row r = {.slot = -1};

		if (listed[b] || t->be[b].state == LB_BE_EMPTY)
			continue;
		lb_ctlcmd_key_str(&sv->key, r.svc);
		r.ip = lb_dpconf_be_addr(&t->be[b]);
		r.port = ntohs(t->be[b].port);
		r.weight = t->be[b].weight;
		r.state = lb_view_be_state_name(t->be[b].state);
		row_runtime(ctl, s, (int)b, &r);
		rc = emit_row(&r, arr, tb, out);
	}
	return rc;
}

/* Rows of services deleted from the configuration whose flows still run. */
static int
deleted_rows(const struct lb_ctl *ctl, int only, json_t *arr,
	     struct be_table *tb, struct lb_cmd_out *out)
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
			struct lb_conf_svc_key k = lb_dpconf_svc_key(t);

			lb_ctlcmd_key_str(&k, r.svc);
			r.ip = lb_dpconf_be_addr(&t->be[b]);
			r.port = ntohs(t->be[b].port);
			r.weight = t->be[b].weight;
			row_runtime(ctl, (int)s, (int)b, &r);
			/* Whatever they were, the service is gone. */
			r.state = "removed";
			rc = emit_row(&r, arr, tb, out);
		}
	}
	return rc;
}
static int
rows_of(struct lb_ctl *ctl, const struct lb_conf_svc *sv, int slot, bool all,
	json_t *arr, struct be_table *tb, struct lb_cmd_out *out)
{
	int rc = 0;

	if (all) {
		for (unsigned int i = 0;
		     i < lb_conf_nb_svcs(ctl->conf) && rc == 0; i++)
			rc = svc_rows(ctl, lb_conf_svc_at(ctl->conf, i), arr,
				      tb, out);
		return rc == 0 ? deleted_rows(ctl, -1, arr, tb, out) : rc;
	}
	if (sv != NULL)
		return svc_rows(ctl, sv, arr, tb, out);
	return deleted_rows(ctl, slot, arr, tb, out);
}

int
lb_ctlcmd_backends_of(struct lb_ctl *ctl, const struct lb_conf_svc *sv,
		      int slot, bool all, json_t *arr, struct lb_cmd_out *out)
{
	struct be_table tb = {0};
	int rc;

	rc = rows_of(ctl, sv, slot, all, arr, &tb, out);
	if (rc == 0)
		rc = table_print(&tb, out);
	table_free(&tb);
	return rc;
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
	rc = lb_ctlcmd_backends_of(ctl, sv, slot, argc == 0, arr, out);
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
			"HEALTH is what the backend's health check (its "
			"pool's own, else\nthe service's) says: `none` (not "
			"checked), `pending` (added, not yet\n"
			"`check-rise` successes), `up`, or `down` "
			"(`check-fall` failures in a\nrow); only `none` and "
			"`up` take new flows. LAST-CHECK is the last "
			"check's\noutcome and how long it took.\n"
			"On a terminal, lbctl shows the columns that fit its "
			"width, in this\norder: SERVICE and BACKEND, STATE, "
			"HEALTH, WEIGHT, ACTIVE, ERRORS,\nSPL, P50/P99MS, "
			"FLOWS, 5XX%, INFL, AGE, LAST-CHECK, ORIGIN, PKTS,\n"
			"BYTES, the workers' column; `lbctl --wide` (or "
			"`--wide` after the\ncommand) shows them all, as does "
			"output to a pipe or a file.",
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
