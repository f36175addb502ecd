/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `service list` and `service show`: the configured services, and those
 * deleted whose flows still run, with what the dataplane does with them
 * (flows, errors, packets and bytes each way, HTTP figures, the SPL
 * policy's reading, admission verdicts). `service show` ends with the
 * service's backends as `backend list` prints them (ctlcmd_be.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "ctlcmd_priv.h"

/* The name of value @p i in table @p tbl, "?" for one past its end. */
#define NAME_OF(tbl, i)                                                        \
	((unsigned int)(i) < sizeof(tbl) / sizeof((tbl)[0]) ? (tbl)[i] : "?")

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


struct svc_row {
	char svc[LB_CTLCMD_SVC_STRLEN];
	/* its rules' hits, then the default's, when hits_ok */
	bool hits_ok;
	uint64_t hits[LB_CONF_MAX_RULES + 1];
	const struct lb_conf_svc_opts *opts;
	const struct lb_conf_svc *cs; /* configured: its pools and rules */
	const char *state;
	unsigned int nb_conf;  /* configured backends */
	unsigned int nb_drain; /* of which draining */
	unsigned int nb_named; /* of which not draining, in named pools */
	int slot;
	bool rt;
	bool v6; /* an IPv6 service: its clients' prefix is admit-prefix6 */
	struct lb_view_svc v;
};

static void
svc_row_conf(const struct lb_ctl *ctl, const struct lb_conf_svc *sv,
	     struct svc_row *r)
{
	memset(r, 0, sizeof(*r));
	lb_ctlcmd_key_str(&sv->key, r->svc);
	r->opts = &sv->opts;
	r->cs = sv;
	r->v6 = sv->key.af == LB_CONF_AF_INET6;
	r->state = "active";
	r->nb_conf = sv->nb_be;
	for (unsigned int j = 0; j < sv->nb_be; j++) {
		r->nb_drain += sv->be[j].draining;
		r->nb_named += !sv->be[j].draining && sv->be[j].pool != 0;
	}
	r->slot = lb_ctlcmd_svc_slot(ctl, &sv->key);
	r->rt = r->slot >= 0 &&
		lb_view_svc_get(ctl->view, (uint32_t)r->slot, &r->v) == 0;
	if (!r->rt && ctl->view != NULL)
		r->state = "pending";
	r->hits_ok = sv->nb_rule <= LB_CONF_MAX_RULES &&
		     lb_ctlcmd_rule_hits((void *)(uintptr_t)ctl, &sv->key,
					 r->hits, sv->nb_rule) == 0;
}

int
lb_ctlcmd_rule_hits(void *arg, const struct lb_conf_svc_key *k,
		    uint64_t *hits, unsigned int n)
{
	const struct lb_ctl *ctl = arg;
	const struct lb_shm *shm;
	int s;

	if (ctl == NULL || ctl->view == NULL)
		return -ENOTCONN;
	shm = lb_view_shm(ctl->view);
	s = lb_ctlcmd_svc_slot(ctl, k);
	if (shm == NULL || s < 0 || (uint32_t)s >= LB_CONF_MAX_SVCS ||
	    n > LB_ROUTE_FLAT_RULES)
		return -ENOENT;
	lb_view_rule_hits(shm, (uint32_t)s, hits, n);
	return 0;
}

static void
svc_row_deleted(const struct lb_ctl *ctl, int s, struct svc_row *r)
{
	struct lb_conf_svc_key k;

	memset(r, 0, sizeof(*r));
	r->slot = s;
	r->rt = lb_view_svc_get(ctl->view, (uint32_t)s, &r->v) == 0;
	k = lb_view_svc_key(&r->v);
	lb_ctlcmd_key_str(&k, r->svc);
	r->opts = r->v.opts;
	r->v6 = k.af == LB_CONF_AF_INET6;
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
		bad |= jset_u64(j, "prefix6", a->prefix6);
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

/* The hits of the rules, in their order, and of the default; null
 * without a dataplane that counts them. */
static int
jset_hits(json_t *j, const struct svc_row *r)
{
	unsigned int n = r->cs->nb_rule;
	json_t *a;
	int bad = 0;

	if (!r->hits_ok)
		return jset(j, "rule_hits", json_null()) |
		       jset(j, "rule_default_hits", json_null());
	a = json_array();
	if (a == NULL)
		return -1;
	for (unsigned int i = 0; i < n && !bad; i++)
		bad |= json_array_append_new(a, json_integer((json_int_t)
							     r->hits[i])) != 0;
	if (bad) {
		json_decref(a);
		return -1;
	}
	return jset(j, "rule_hits", a) | jset_u64(j, "rule_default_hits",
						  r->hits[n]);
}

/* The pools of a service, its own first, and its rules: each pool's
 * scheduler, members, weight sum and check; the rules' text in order. */
static int
jset_pools(json_t *j, const struct svc_row *r)
{
	const struct lb_conf_svc *cs = r->cs;
	json_t *pools = json_array(), *rules = json_array();
	int bad = pools == NULL || rules == NULL;

	for (unsigned int p = 0; !bad && p <= cs->nb_pool; p++) {
		json_t *o = json_object();
		uint64_t w;
		uint32_t n;

		lb_conf_pool_sum(cs, p, &n, &w);
		if (o == NULL || json_array_append_new(pools, o) != 0) {
			bad = 1;
			break;
		}
		bad |= jset_str(o, "name", p == 0 ? LB_CONF_POOL_DEFAULT
						  : cs->pool[p - 1].name);
		bad |= jset_str(o, "sched", p == 0 ? cs->opts.sched
						   : cs->pool[p - 1].sched);
		bad |= jset_u64(o, "backends", n);
		bad |= jset_u64(o, "weight_sum", w);
		/* The check its backends have (null: none), and whether it
		 * is the pool's own or the service's. */
		bad |= jset(o, "check", check_json(lb_conf_pool_check(cs, p)));
		bad |= jset(o, "check_own",
			    json_boolean(p != 0 && cs->pool[p - 1].own_check));
	}
	for (unsigned int i = 0; !bad && i < cs->nb_rule; i++)
		bad |= json_array_append_new(rules,
					     json_string(cs->rule[i])) != 0;
	if (bad) {
		json_decref(pools);
		json_decref(rules);
		return -1;
	}
	bad |= jset(j, "pools", pools);
	bad |= jset(j, "rules", rules);
	bad |= jset_str(j, "rule_default",
			cs->rule_def[0] != '\0' ? cs->rule_def
						: "pool " LB_CONF_POOL_DEFAULT);
	return bad | jset_hits(j, r);
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
		bad |= jset_str(j, "rebind",
				o->rebind == LB_CONF_REBIND_CLOSE ? "close"
								  : "off");
		bad |= jset(j, "check", check_json(&o->check));
	}
	if (r->cs != NULL)
		bad |= jset_pools(j, r);
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
	/* A backend of a named pool takes no new flow until rules route
	 * to its pool. */
	unsigned int live = r->nb_conf - r->nb_drain - r->nb_named;

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
	return lb_ctlcmd_give_data(ctl, d, 0, out);
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
		r->v6 ? a->prefix6 : a->prefix,
		NAME_OF(lb_admit_reject_names, a->reject),
		NAME_OF(lb_admit_cluster_names, a->cluster),
		NAME_OF(lb_admit_full_names, a->full),
		n[LB_ADMIT_PASS], n[LB_ADMIT_PASS_FULL], n[LB_ADMIT_REJ_EMPTY],
		n[LB_ADMIT_REJ_NEG], n[LB_ADMIT_REJ_CLUSTER],
		n[LB_ADMIT_REJ_FULL], r->v.admit_table_full);
}

/* "  pools: default (rr, 1 backend), api (rr, 2 backends, check http
 * /hz); 3 rules, default refuse 404": only for a service with pools or
 * rules. A pool that follows its service's check says nothing of it. */
static int
pools_text(const struct lb_conf_svc *cs, struct lb_cmd_out *out)
{
	int rc = 0;

	for (unsigned int p = 0; p <= cs->nb_pool && rc == 0; p++) {
		char chk[LB_CONF_POOL_CHECK_STRLEN + 1] = "";
		bool own = p > 0 && cs->pool[p - 1].own_check;
		uint64_t w;
		uint32_t n;

		lb_conf_pool_sum(cs, p, &n, &w);
		if (own)
			lb_conf_pool_check_str(cs, p, chk, sizeof(chk));
		rc = lb_cmd_printf(out, "%s%s (%s, %u backend%s%s%s)",
				   p == 0 ? "  pools: " : ", ",
				   p == 0 ? LB_CONF_POOL_DEFAULT
					  : cs->pool[p - 1].name,
				   p == 0 ? cs->opts.sched
					  : cs->pool[p - 1].sched,
				   n, n == 1 ? "" : "s", own ? ", check " : "",
				   chk);
	}
	if (rc == 0)
		rc = lb_cmd_printf(out, "; %u rule%s, default %s%s\n",
				   cs->nb_rule, cs->nb_rule == 1 ? "" : "s",
				   cs->rule_def[0] != '\0'
					   ? cs->rule_def
					   : "pool " LB_CONF_POOL_DEFAULT,
				   cs->opts.rebind == LB_CONF_REBIND_CLOSE
					   ? "; rebind close"
					   : "");
	return rc;
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
	if (rc == 0 && r->cs != NULL && (r->cs->nb_pool > 0 ||
					 lb_conf_svc_routes(r->cs)))
		rc = pools_text(r->cs, out);
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
		rc = lb_ctlcmd_find_svc(ctl, argv, true, &sv, &slot, out);
	if (rc != 0)
		return rc;
	if (sv != NULL)
		svc_row_conf(ctl, sv, &r);
	else
		svc_row_deleted(ctl, slot, &r);
	rc = svc_show_text(&r, out);
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
	rc = lb_ctlcmd_backends_of(ctl, sv, slot, false, arr, out);
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
	return lb_ctlcmd_give_data(ctl, arr, 0, out);
}

static const struct lb_cmd_def svc_cmds[] = {
	{
		.path = "service list",
		.synopsis = "",
		.help = "List the virtual services with their counters",
		.long_help =
			"BACKENDS is taking new flows / configured (a backend "
			"of a named\npool takes none yet), then +N for "
			"backends removed whose flows\nare running out. "
			"ACTIVE is flows now, FLOWS flows created; PKTS\nand "
			"BYTES count client>backend/backend>client."
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
};

static const struct lb_cmd_table svc_table = {
	.name = "ctl-services",
	.ctx = "ctl",
	.defs = svc_cmds,
	.n = sizeof(svc_cmds) / sizeof(svc_cmds[0]),
};
LB_CMD_REGISTER(svc_table);
