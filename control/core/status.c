/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The status page's data: lb-control's read-only views as JSON, and the
 * time series it samples from its merged view of the dataplane.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ctlcmd_priv.h"
#include "govview.h"
#include "status.h"
#include "status_assets.h"
#include "tsring.h"

struct lb_status {
	struct lb_ctl *ctl;
	struct lb_cmd_reg *reg;
	struct lb_tsring *ring;
	uint64_t last_ns; /* monotonic time of the last sample; 0: none */
	/* Per backend slot of the service being sampled: new flows and
	 * errors since the last sample, its ring entity. */
	double d_flows[LB_CONF_MAX_BES];
	double d_err[LB_CONF_MAX_BES];
	int ent[LB_CONF_MAX_BES];
};

static const char *const svc_metric[LB_STATUS_SVC_NB] = {
	[LB_STATUS_SVC_FLOWS] = "flows_per_s",
	[LB_STATUS_SVC_LOAD] = "load",
	[LB_STATUS_SVC_LOWER] = "lower",
	[LB_STATUS_SVC_UPPER] = "upper",
	[LB_STATUS_SVC_INST] = "instances",
	[LB_STATUS_SVC_GOV_M] = "gov_m",
};

static const char *const be_metric[LB_STATUS_BE_NB] = {
	[LB_STATUS_BE_SHARE] = "share",
	[LB_STATUS_BE_SPL] = "spl",
	[LB_STATUS_BE_P99] = "p99_ms",
	[LB_STATUS_BE_ERRORS] = "errors_per_s",
};

const char *const lb_status_views[] = {
	"status", "services", "backends", "governor",
	"scale",  "stats",    "series",   NULL,
};

#define METRICS_MAX                                                            \
	((unsigned int)LB_STATUS_SVC_NB > (unsigned int)LB_STATUS_BE_NB        \
		 ? (unsigned int)LB_STATUS_SVC_NB                              \
		 : (unsigned int)LB_STATUS_BE_NB)

struct lb_status *
lb_status_create(struct lb_ctl *ctl, struct lb_cmd_reg *reg)
{
	struct lb_status *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->ctl = ctl;
	s->reg = reg;
	s->ring = lb_tsring_create(LB_STATUS_POINTS, LB_STATUS_ENTITIES,
				   METRICS_MAX);
	if (s->ring == NULL) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

void
lb_status_free(struct lb_status *s)
{
	if (s == NULL)
		return;
	lb_tsring_free(s->ring);
	free(s);
}

uint64_t
lb_status_refused(const struct lb_status *s)
{
	return lb_tsring_refused(s->ring);
}

/* ---- sampling ---- */

/* IPv4: protocol, VIP and port in one word; IPv6: the VIP in svc6 and
 * no address bits in the word, which no IPv4 VIP (never 0) has. */
static struct lb_tsring_key
svc_key(const struct lb_view_svc *v)
{
	struct lb_tsring_key k = {.svc = (uint64_t)v->proto << 48 | v->port};

	if (v->af == LB_CONF_AF_INET6)
		memcpy(k.svc6, v->vip6, sizeof(k.svc6));
	else
		k.svc |= (uint64_t)v->vip << 16;
	return k;
}

/* The service of a key, and its backend's address (be != 0). */
static struct lb_conf_svc_key
key_svc(const struct lb_tsring_key *k)
{
	static const uint8_t zero[16];
	struct lb_conf_ip vip = lb_conf_ip4((uint32_t)(k->svc >> 16));

	if (memcmp(k->svc6, zero, sizeof(zero)) != 0)
		vip = lb_conf_ip_of(LB_CONF_AF_INET6, 0, k->svc6);
	return lb_conf_svc_key_of((uint8_t)(k->svc >> 48), &vip,
				  (uint16_t)k->svc);
}

static struct lb_conf_ip
key_be(const struct lb_tsring_key *k)
{
	static const uint8_t zero[16];

	if (memcmp(k->be6, zero, sizeof(zero)) != 0)
		return lb_conf_ip_of(LB_CONF_AF_INET6, 0, k->be6);
	return lb_conf_ip4((uint32_t)(k->be >> 16));
}

/* How much counter @p now grew since *@p prev (which it becomes); NaN
 * the first time, or when it went back (a slot given to another). */
static double
grew(uint64_t now, uint64_t *prev, bool first)
{
	double d = first || now < *prev ? NAN : (double)(now - *prev);

	*prev = now;
	return d;
}

static void
sample_backends(struct lb_status *s, uint32_t slot,
		const struct lb_tsring_key *svc, const struct lb_dpconf_svc *t,
		double dt)
{
	struct lb_tsring *r = s->ring;
	double sum = 0;

	for (uint32_t b = 0; b < t->nb_be; b++) {
		struct lb_tsring_key k = *svc;
		struct lb_view_be v;
		uint64_t *aux;
		bool created;

		s->ent[b] = -1;
		if (t->be[b].state == LB_BE_EMPTY ||
		    lb_view_be_get(s->ctl->view, slot, b, &v) != 0)
			continue;
		if (v.af == LB_CONF_AF_INET6) {
			k.be = v.port;
			memcpy(k.be6, v.ip6, sizeof(k.be6));
		} else {
			k.be = (uint64_t)v.ip << 16 | v.port;
		}
		s->ent[b] = lb_tsring_entity(r, &k, &created);
		if (s->ent[b] < 0)
			continue;
		aux = lb_tsring_aux(r, s->ent[b]);
		s->d_flows[b] = grew(v.flows_total, &aux[0], created);
		s->d_err[b] = grew(v.errors + v.http_5xx, &aux[1], created);
		if (!isnan(s->d_flows[b]))
			sum += s->d_flows[b];
		if (v.l7.spl_seen)
			lb_tsring_put(r, s->ent[b], LB_STATUS_BE_SPL, v.l7.spl);
		if (v.l7.win_timed > 0)
			lb_tsring_put(r, s->ent[b], LB_STATUS_BE_P99,
				      v.l7.p99_ms);
		lb_tsring_put(r, s->ent[b], LB_STATUS_BE_ERRORS,
			      s->d_err[b] / dt);
	}
	/* A share needs new flows to share: none, no point (a gap). */
	for (uint32_t b = 0; b < t->nb_be && sum > 0; b++)
		if (s->ent[b] >= 0 && !isnan(s->d_flows[b]))
			lb_tsring_put(r, s->ent[b], LB_STATUS_BE_SHARE,
				      s->d_flows[b] / sum);
}

void
lb_status_sample(struct lb_status *s, uint64_t now_ns, uint64_t wall_ms)
{
	const struct lb_dpconf *c;
	double dt;

	if (s->ctl->view == NULL)
		return;
	c = lb_view_conf(s->ctl->view);
	dt = s->last_ns != 0 && now_ns > s->last_ns
		     ? (double)(now_ns - s->last_ns) / 1e9
		     : (double)LB_STATUS_INTERVAL_NS / 1e9;
	s->last_ns = now_ns;
	lb_tsring_begin(s->ring, wall_ms);
	for (uint32_t i = 0; c != NULL && i < c->nb_svc; i++) {
		const struct lb_dpconf_svc *t = &c->svc[i];
		struct lb_tsring_key k;
		struct lb_view_svc v;
		uint32_t inst = 0;
		bool created;
		uint64_t *aux;
		int e;

		if (t->state != LB_SVC_ACTIVE ||
		    lb_view_svc_get(s->ctl->view, i, &v) != 0)
			continue;
		k = svc_key(&v);
		e = lb_tsring_entity(s->ring, &k, &created);
		if (e < 0)
			continue;
		aux = lb_tsring_aux(s->ring, e);
		lb_tsring_put(s->ring, e, LB_STATUS_SVC_FLOWS,
			      grew(v.flows_total, &aux[0], created) / dt);
		if (v.opts != NULL && v.opts->http) {
			lb_tsring_put(s->ring, e, LB_STATUS_SVC_LOAD,
				      v.l7.total);
			lb_tsring_put(s->ring, e, LB_STATUS_SVC_LOWER,
				      v.l7.lower);
			lb_tsring_put(s->ring, e, LB_STATUS_SVC_UPPER,
				      v.l7.upper);
			lb_tsring_put(
				s->ring, e, LB_STATUS_SVC_GOV_M,
				lb_govview_m(lb_view_gov(s->ctl->view), i));
		}
		for (uint32_t b = 0; b < t->nb_be; b++)
			inst += t->be[b].state == LB_BE_ACTIVE &&
				t->be[b].health == LB_BE_HEALTH_UP;
		lb_tsring_put(s->ring, e, LB_STATUS_SVC_INST, inst);
		sample_backends(s, i, &k, t, dt);
	}
}

int
lb_status_tick(struct lb_status *s, uint64_t now_ns, uint64_t wall_ms)
{
	if (s->ctl->view == NULL ||
	    (s->last_ns != 0 && now_ns - s->last_ns < LB_STATUS_INTERVAL_NS))
		return 0;
	lb_status_sample(s, now_ns, wall_ms);
	return 1;
}

/* ---- JSON ---- */

/* The data of read-only command @p line, or null. */
static json_t *
cmd_data(struct lb_status *s, const char *line)
{
	struct lb_cmd_out out;
	json_t *d;
	int rc;

	lb_cmd_out_init(&out);
	json_decref(s->ctl->data);
	s->ctl->data = NULL;
	rc = lb_cmd_exec_line(s->reg, line, &out);
	lb_cmd_out_free(&out);
	d = s->ctl->data;
	s->ctl->data = NULL;
	if (rc != 0 || d == NULL) {
		json_decref(d);
		return json_null();
	}
	return d;
}

/* `scale show`, each service with its `scale history`. */
static json_t *
scale_json(struct lb_status *s)
{
	json_t *d = cmd_data(s, "scale show"), *arr, *x;
	size_t i;

	arr = json_object_get(d, "services");
	json_array_foreach(arr, i, x)
	{
		const char *name =
			json_string_value(json_object_get(x, "service"));
		const char *pool =
			json_string_value(json_object_get(x, "pool"));
		char line[LB_CTLCMD_SVC_STRLEN + LB_CONF_POOL_NAME_LEN + 24];

		if (name == NULL)
			continue;
		/* A pool's own policy has its own history. */
		if (pool != NULL && strcmp(pool, LB_CONF_POOL_DEFAULT) != 0)
			snprintf(line, sizeof(line), "scale history %s pool %s",
				 name, pool);
		else
			snprintf(line, sizeof(line), "scale history %s", name);
		if (json_object_set_new(x, "history", cmd_data(s, line)) != 0)
			break;
	}
	return d;
}

/* Samples @p from .. the newest of metric @p m of entity @p e. */
static json_t *
values(const struct lb_tsring *r, int e, uint32_t m, uint32_t from)
{
	json_t *a = json_array();
	uint32_t n = lb_tsring_count(r);

	for (uint32_t i = from; a != NULL && i < n; i++) {
		double v = lb_tsring_get(r, e, m, i);

		if (json_array_append_new(a, isfinite(v) ? json_real(v)
							 : json_null()) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static int
by_key(const void *a, const void *b, void *r)
{
	return lb_tsring_key_cmp(lb_tsring_key(r, *(const int *)a),
				 lb_tsring_key(r, *(const int *)b));
}

static json_t *
series_entity(const struct lb_tsring *r, int e, uint32_t from)
{
	const struct lb_tsring_key *k = lb_tsring_key(r, e);
	struct lb_conf_svc_key sk = key_svc(k);
	struct lb_conf_ip be = key_be(k);
	char name[LB_CTLCMD_SVC_STRLEN];
	json_t *o = json_object();
	int bad = o == NULL;

	if (k->be == 0) {
		lb_ctlcmd_key_str(&sk, name);
		bad |= jset_str(o, "service", name);
		for (uint32_t m = 0; m < LB_STATUS_SVC_NB && !bad; m++)
			bad |= jset(o, svc_metric[m], values(r, e, m, from));
		bad |= jset(o, "backends", json_array());
	} else {
		bad |= jset_str(o, "backend",
				lb_cmd_fmt_ip_port(&be, (uint16_t)k->be, name));
		for (uint32_t m = 0; m < LB_STATUS_BE_NB && !bad; m++)
			bad |= jset(o, be_metric[m], values(r, e, m, from));
	}
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The series, services in key order each with its backends: the samples
 * taken after @p since_ms (0: all held), so that a page that has the
 * others asks for one sample a second. */
static json_t *
series_json(const struct lb_status *s, uint64_t since_ms)
{
	const struct lb_tsring *r = s->ring;
	uint32_t n = 0, cnt = lb_tsring_count(r), from = 0;
	json_t *d = json_object(), *svcs = json_array(), *t = json_array();
	json_t *cur = NULL;
	struct lb_tsring_key cur_svc = {0};
	int idx[LB_STATUS_ENTITIES];
	int bad = d == NULL || svcs == NULL || t == NULL;

	for (uint32_t e = 0; e < lb_tsring_entities(r); e++)
		if (lb_tsring_key(r, (int)e) != NULL)
			idx[n++] = (int)e;
	qsort_r(idx, n, sizeof(idx[0]), by_key, (void *)(uintptr_t)r);
	while (from < cnt && lb_tsring_time(r, from) <= since_ms)
		from++;
	for (uint32_t i = from; i < cnt && !bad; i++)
		bad |= json_array_append_new(
			t, json_integer((json_int_t)lb_tsring_time(r, i)));
	for (uint32_t i = 0; i < n && !bad; i++) {
		const struct lb_tsring_key *k = lb_tsring_key(r, idx[i]);
		json_t *o;

		/* A backend whose service has no series of its own is
		 * left out: the page draws backends under services. */
		if (k->be != 0 && (cur == NULL || k->svc != cur_svc.svc ||
				   memcmp(k->svc6, cur_svc.svc6,
					  sizeof(k->svc6)) != 0))
			continue;
		o = series_entity(r, idx[i], from);
		bad |= o == NULL;
		if (bad)
			break;
		if (k->be == 0) {
			cur = o;
			cur_svc = *k;
			bad |= json_array_append_new(svcs, o);
		} else {
			bad |= json_array_append_new(
				json_object_get(cur, "backends"), o);
		}
	}
	bad |= jset_u64(d, "interval_ms", LB_STATUS_INTERVAL_NS / 1000000);
	bad |= jset_u64(d, "points", LB_STATUS_POINTS);
	bad |= jset(d, "t_ms", t);
	bad |= jset(d, "services", svcs);
	if (bad) {
		json_decref(d);
		return NULL;
	}
	return d;
}

static json_t *
view_json(struct lb_status *s, const char *name, uint64_t since_ms)
{
	if (strcmp(name, "services") == 0)
		return cmd_data(s, "service list");
	if (strcmp(name, "backends") == 0)
		return cmd_data(s, "backend list");
	if (strcmp(name, "governor") == 0)
		return cmd_data(s, "governor show");
	if (strcmp(name, "scale") == 0)
		return scale_json(s);
	if (strcmp(name, "stats") == 0)
		return cmd_data(s, "stats");
	if (strcmp(name, "series") == 0)
		return series_json(s, since_ms);
	return NULL;
}

int
lb_status_json(struct lb_status *s, const char *name, uint64_t since_ms,
	       uint64_t wall_ms, struct lb_cmd_out *out)
{
	json_t *d = NULL;
	char *text;
	int rc, bad = 0;
	bool known = false;

	for (unsigned int i = 0; lb_status_views[i] != NULL; i++)
		known |= strcmp(name, lb_status_views[i]) == 0;
	if (!known)
		return lb_cmd_error(out, -ENOENT, "no status view '%s'", name);
	if (strcmp(name, "status") == 0) {
		d = json_object();
		bad = d == NULL;
		bad |= d != NULL && jset_u64(d, "time_ms", wall_ms);
		/* The series are their own request: the page fetches
		 * both, and they are most of the bytes. */
		for (unsigned int i = 1; lb_status_views[i] != NULL && !bad;
		     i++)
			if (strcmp(lb_status_views[i], "series") != 0)
				bad |= jset(
					d, lb_status_views[i],
					view_json(s, lb_status_views[i], 0));
	} else {
		d = view_json(s, name, since_ms);
		bad = d == NULL;
	}
	/* Six digits are more than a plot or a person can tell apart, and
	 * keep the series a third of their full length. */
	text = bad ? NULL
		   : json_dumps(d, JSON_COMPACT | JSON_REAL_PRECISION(6));
	json_decref(d);
	if (text == NULL)
		return lb_cmd_error(out, -ENOMEM, "out of memory");
	rc = lb_cmd_printf(out, "%s\n", text);
	free(text);
	return rc;
}

#define API_PREFIX "/api/v1/"

int
lb_status_page(struct lb_status *s, const char *path, const char *since,
	       uint64_t wall_ms, const char **type, struct lb_cmd_out *out)
{
	const struct lb_status_asset *a = lb_status_asset_find(path);
	uint64_t since_ms = 0;

	if (a != NULL) {
		*type = a->type;
		return lb_cmd_printf(out, "%s", a->data);
	}
	if (strncmp(path, API_PREFIX, strlen(API_PREFIX)) != 0)
		return -ENOENT;
	if (since != NULL && lb_cmd_parse_u64(since, "since (ms)", 0,
					      UINT64_MAX, &since_ms, out) != 0)
		return -EINVAL;
	*type = "application/json";
	return lb_status_json(s, path + strlen(API_PREFIX), since_ms, wall_ms,
			      out);
}
