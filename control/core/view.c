/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The merged view: shared-memory counters read in place, feedback records
 * merged as drained, baselines for table slots that change hands.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lb/adaptive.h"
#include "govview.h"
#include "l7view.h"
#include "flow6.h"
#include "lb/snat.h"
#include "view.h"

#define NSVC LB_CONF_MAX_SVCS
#define NBE LB_CONF_MAX_BES

/* Counters kept per backend slot by the workers, in struct lb_be_stats
 * order of meaning: what a baseline subtracts. */
enum {
	C_FLOWS,
	C_ERRORS,
	C_PKTS0,
	C_PKTS1,
	C_BYTES0,
	C_BYTES1,
	C_HTTP,
	C_HTTP5,
	C_NB
};

/* Who holds a slot; used = 0 is an empty slot. */
struct slot_id {
	uint8_t used;
	uint8_t proto;
	uint16_t vport;
	uint32_t vip;
	uint32_t ip;
	uint16_t port;
	uint8_t af, be_af; /* the families of vip (vip6), ip (ip6) */
	uint8_t vip6[LB_CONF_IP6_LEN];
	uint8_t ip6[LB_CONF_IP6_LEN];
};

struct be_slot {
	struct slot_id id;
	uint64_t base[C_NB];
	uint64_t flows_ended;
};

struct svc_slot {
	struct slot_id id; /* ip and port unused */
	uint64_t retired[C_NB];
	uint64_t retired_ended;
};

/* What one worker's feedback said about one backend slot. */
struct fb_slot {
	uint64_t ok;
	uint64_t fail;
	uint32_t err;
	uint8_t seen;
};

struct lb_view {
	const struct lb_shm *shm;
	uint32_t nw;
	bool synced;
	struct svc_slot svc[NSVC];
	struct be_slot be[NSVC][NBE];
	struct lb_view_fb fbst[LB_SHM_MAX_WORKERS];
	/* [worker][svc][be], nw of them */
	struct fb_slot (*fb)[NSVC][NBE];
	struct lb_l7view *l7;
	struct lb_govview *gov; /* overload governors, by service slot */
	uint64_t (*clock)(void *arg);
	void *clock_arg;
	uint64_t last_ts; /* newest record time seen */
};

static const struct lb_be_stats *
bst(const struct lb_shm *shm, uint32_t w, uint32_t s, uint32_t b)
{
	return &shm->w[w]->be[s][b];
}

/* The counters of slot (s, b) summed over the workers. */
static void
slot_sum(const struct lb_shm *shm, uint32_t nw, uint32_t s, uint32_t b,
	 uint64_t c[C_NB])
{
	memset(c, 0, C_NB * sizeof(*c));
	for (uint32_t w = 0; w < nw; w++) {
		const struct lb_be_stats *x = bst(shm, w, s, b);

		c[C_FLOWS] += x->flows;
		c[C_ERRORS] += x->errors;
		c[C_PKTS0] += x->pkts[0];
		c[C_PKTS1] += x->pkts[1];
		c[C_BYTES0] += x->bytes[0];
		c[C_BYTES1] += x->bytes[1];
		c[C_HTTP] += x->http_responses;
		c[C_HTTP5] += x->http_5xx;
	}
}

static uint32_t
nb_workers(const struct lb_shm *shm)
{
	uint32_t n = shm->nb_workers;

	return n > LB_SHM_MAX_WORKERS ? LB_SHM_MAX_WORKERS : n;
}

struct lb_view *
lb_view_create(const struct lb_shm *shm)
{
	struct lb_view *v;
	uint32_t nw;

	if (shm == NULL) {
		errno = EINVAL;
		return NULL;
	}
	nw = nb_workers(shm);
	for (uint32_t w = 0; w < nw; w++) {
		if (shm->w[w] == NULL || shm->w[w]->be == NULL ||
		    shm->w[w]->st == NULL) {
			errno = EINVAL;
			return NULL;
		}
	}
	v = calloc(1, sizeof(*v));
	if (v == NULL)
		return NULL;
	v->shm = shm;
	v->nw = nw;
	v->l7 = lb_l7view_create();
	v->gov = lb_govview_create();
	if (v->l7 == NULL || v->gov == NULL) {
		lb_view_free(v);
		errno = ENOMEM;
		return NULL;
	}
	if (nw > 0) {
		v->fb = calloc(nw, sizeof(*v->fb));
		if (v->fb == NULL) {
			lb_view_free(v);
			errno = ENOMEM;
			return NULL;
		}
	}
	return v;
}

void
lb_view_free(struct lb_view *v)
{
	if (v == NULL)
		return;
	lb_l7view_free(v->l7);
	lb_govview_free(v->gov);
	free(v->fb);
	free(v);
}

const struct lb_shm *
lb_view_shm(const struct lb_view *v)
{
	return v != NULL ? v->shm : NULL;
}

const struct lb_dpconf *
lb_view_conf(const struct lb_view *v)
{
	if (v == NULL)
		return NULL;
	return atomic_load_explicit(&((struct lb_shm *)(uintptr_t)v->shm)->conf,
				    memory_order_acquire);
}

void
lb_view_feed(struct lb_view *v, uint32_t wid, const struct lb_fb *r,
	     unsigned int n)
{
	struct lb_view_fb *st;

	if (v == NULL || wid >= v->nw || (r == NULL && n > 0))
		return;
	st = &v->fbst[wid];
	for (unsigned int i = 0; i < n; i++) {
		const struct lb_fb *x = &r[i];
		struct fb_slot *f;

		st->records++;
		st->kind[x->kind < LB_FB_KIND_MAX ? x->kind : 0]++;
		if (x->svc >= NSVC || x->be >= NBE) {
			st->invalid++;
			continue;
		}
		f = &v->fb[wid][x->svc][x->be];
		switch (x->kind) {
		case LB_FB_TRIAL_OK:
		case LB_FB_TRIAL_FAIL:
			if (x->kind == LB_FB_TRIAL_OK)
				f->ok++;
			else
				f->fail++;
			f->err = x->u32;
			f->seen = 1;
			break;
		case LB_FB_FLOW_END:
			v->be[x->svc][x->be].flows_ended++;
			break;
		case LB_FB_HTTP:
		case LB_FB_SPL:
		case LB_FB_ORCA:
			if (x->ts_ns > v->last_ts)
				v->last_ts = x->ts_ns;
			lb_l7view_feed(v->l7, x);
			lb_govview_feed(v->gov, x);
			break;
		default:
			break;
		}
	}
}

static bool
id_eq(const struct slot_id *a, const struct slot_id *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

static void
svc_id_of(const struct lb_dpconf *c, uint32_t s, struct slot_id *id)
{
	memset(id, 0, sizeof(*id));
	if (c == NULL || s >= c->nb_svc || c->svc[s].state == LB_SVC_EMPTY)
		return;
	id->used = 1;
	id->proto = c->svc[s].proto;
	id->vip = c->svc[s].vip;
	id->vport = c->svc[s].vport;
	id->af = c->svc[s].af;
	if (id->af == LB_CONF_AF_INET6)
		memcpy(id->vip6, c->svc[s].vip6, LB_CONF_IP6_LEN);
}

/* Whether @p a and @p b name the same service (ip and port aside). */
static bool
svc_id_eq(const struct slot_id *a, const struct slot_id *b)
{
	return a->used && b->used && a->proto == b->proto &&
	       a->vip == b->vip && a->vport == b->vport && a->af == b->af &&
	       memcmp(a->vip6, b->vip6, LB_CONF_IP6_LEN) == 0;
}

static void
be_id_of(const struct lb_dpconf *c, const struct slot_id *sid, uint32_t s,
	 uint32_t b, struct slot_id *id)
{
	memset(id, 0, sizeof(*id));
	if (!sid->used || b >= c->svc[s].nb_be ||
	    c->svc[s].be[b].state == LB_BE_EMPTY)
		return;
	*id = *sid;
	id->ip = c->svc[s].be[b].ip;
	id->port = c->svc[s].be[b].port;
	id->be_af = c->svc[s].be[b].af;
	if (id->be_af == LB_CONF_AF_INET6)
		memcpy(id->ip6, c->svc[s].be[b].ip6, LB_CONF_IP6_LEN);
}

/* Slot (s, b) is now @p id: a new holder starts from the current counts,
 * and what the old holder did stays with its service. */
static void
be_rebase(struct lb_view *v, uint32_t s, uint32_t b, const struct slot_id *id)
{
	struct be_slot *x = &v->be[s][b];
	struct svc_slot *sv = &v->svc[s];
	uint64_t cur[C_NB];

	slot_sum(v->shm, v->nw, s, b, cur);
	if (svc_id_eq(&x->id, &sv->id)) {
		for (int k = 0; k < C_NB; k++)
			sv->retired[k] += cur[k] - x->base[k];
		sv->retired_ended += x->flows_ended;
	}
	memcpy(x->base, cur, sizeof(cur));
	x->flows_ended = 0;
	x->id = *id;
	lb_l7view_reset(v->l7, s, b);
	for (uint32_t w = 0; w < v->nw; w++)
		memset(&v->fb[w][s][b], 0, sizeof(v->fb[w][s][b]));
}

static bool
eligible(const struct lb_dpconf_svc *t, uint32_t b)
{
	return t->state == LB_SVC_ACTIVE && lb_dpconf_be_eligible(t, b);
}

/*
 * The weight worker @p w gives backend @p be of service slot @p s, from
 * the error counts it holds now. `adaptive` weighs by equation (6) over
 * every backend's errors (the configured weight plays no part in it),
 * `rr` gives every eligible backend 1, the others their weight.
 */
static uint64_t
be_weight(const struct lb_view *v, const struct lb_dpconf_svc *t, uint32_t s,
	  uint32_t be, uint32_t w)
{
	uint32_t n = t->nb_be > NBE ? NBE : t->nb_be;
	uint32_t err[NBE];
	uint64_t wt[NBE];
	bool el[NBE];

	if (!eligible(t, be))
		return 0;
	if (strcmp(t->opts.sched, "rr") == 0)
		return 1;
	if (strcmp(t->opts.sched, "adaptive") != 0)
		return t->be[be].weight;
	for (uint32_t b = 0; b < n; b++) {
		uint64_t e = bst(v->shm, w, s, b)->sched_errors;

		err[b] = e > LB_ADAPTIVE_ERR_CAP_MAX ? LB_ADAPTIVE_ERR_CAP_MAX
						     : (uint32_t)e;
		el[b] = eligible(t, b);
	}
	/* The workers' guards, but for min-volume (they alone see it). */
	return lb_adaptive_weights_conf(
		       err, el, n,
		       &(struct lb_adaptive_conf){
			       .max_eject_pct = t->opts.max_eject,
			       .panic_pct = t->opts.panic,
		       },
		       wt) == 0
		       ? wt[be]
		       : 0;
}

static void l7_members(struct lb_view *v, const struct lb_dpconf *c);

void
lb_view_sync(struct lb_view *v)
{
	const struct lb_dpconf *c;

	if (v == NULL)
		return;
	c = lb_view_conf(v);
	for (uint32_t s = 0; s < NSVC; s++) {
		struct slot_id sid;
		bool changed;

		svc_id_of(c, s, &sid);
		changed = v->synced && !id_eq(&sid, &v->svc[s].id);
		for (uint32_t b = 0; b < NBE; b++) {
			struct slot_id bid;

			be_id_of(c, &sid, s, b, &bid);
			if (!v->synced)
				v->be[s][b].id = bid;
			else if (!id_eq(&bid, &v->be[s][b].id))
				be_rebase(v, s, b, &bid);
		}
		/* Rebased first, so that backends leaving with their
		 * service were credited to the old one; then it goes. */
		if (changed || !v->synced) {
			if (changed) {
				memset(v->svc[s].retired, 0,
				       sizeof(v->svc[s].retired));
				v->svc[s].retired_ended = 0;
				lb_l7view_svc_reset(v->l7, s);
			}
			v->svc[s].id = sid;
		}
		/* A service's governor starts over with a new service. */
		(void)lb_govview_set(
			v->gov, s,
			c != NULL && s < c->nb_svc &&
					c->svc[s].state == LB_SVC_ACTIVE &&
					c->svc[s].opts.http ?
				c->svc[s].opts.gov :
				NULL,
			changed, lb_view_now(v));
	}
	v->synced = true;
	l7_members(v, c);
}

/* The SPL instances of each HTTP service are its active backends. */
static void
l7_members(struct lb_view *v, const struct lb_dpconf *c)
{
	uint64_t now = lb_view_now(v);

	for (uint32_t s = 0; s < NSVC; s++) {
		const struct lb_dpconf_svc *t =
			c != NULL && s < c->nb_svc ? &c->svc[s] : NULL;
		bool http = t != NULL && t->state == LB_SVC_ACTIVE &&
			    t->opts.http;

		for (uint32_t b = 0; b < NBE; b++)
			(void)lb_l7view_member(
				v->l7, s, b,
				http && b < t->nb_be &&
					t->be[b].state == LB_BE_ACTIVE,
				now);
	}
}

void
lb_view_set_clock(struct lb_view *v, uint64_t (*clock)(void *arg), void *arg)
{
	if (v == NULL)
		return;
	v->clock = clock;
	v->clock_arg = arg;
}

uint64_t
lb_view_now(const struct lb_view *v)
{
	uint64_t t;

	if (v == NULL)
		return 0;
	t = v->clock != NULL ? v->clock(v->clock_arg) : 0;
	/* Never before a record already merged: ages stay >= 0. */
	return t > v->last_ts ? t : v->last_ts;
}

void
lb_view_tick(struct lb_view *v)
{
	const struct lb_dpconf *c;

	if (v == NULL)
		return;
	c = lb_view_conf(v);
	lb_govview_tick(v->gov, lb_view_now(v));
	for (uint32_t s = 0; c != NULL && s < c->nb_svc && s < NSVC; s++) {
		const struct lb_dpconf_svc *t = &c->svc[s];
		int64_t sum = 0;

		if (t->state != LB_SVC_ACTIVE || !t->opts.http)
			continue;
		for (uint32_t b = 0; b < t->nb_be && b < NBE; b++)
			for (uint32_t w = 0; w < v->nw; w++)
				sum += bst(v->shm, w, s, b)->inflight;
		lb_l7view_sample(v->l7, s, sum > 0 ? (uint64_t)sum : 0);
	}
}

int
lb_view_be_get(const struct lb_view *v, uint32_t svc, uint32_t be,
	       struct lb_view_be *out)
{
	const struct lb_dpconf *c;
	const struct lb_dpconf_be *t;
	const struct be_slot *x;
	uint64_t cur[C_NB];
	int64_t active = 0, inflight = 0;

	if (v == NULL || out == NULL || svc >= NSVC || be >= NBE)
		return -EINVAL;
	c = lb_view_conf(v);
	if (c == NULL || svc >= c->nb_svc ||
	    c->svc[svc].state == LB_SVC_EMPTY || be >= c->svc[svc].nb_be ||
	    c->svc[svc].be[be].state == LB_BE_EMPTY)
		return -ENOENT;
	t = &c->svc[svc].be[be];
	x = &v->be[svc][be];
	memset(out, 0, sizeof(*out));
	out->state = t->state;
	out->ip = ntohl(t->ip);
	out->af = t->af;
	if (t->af == LB_CONF_AF_INET6)
		memcpy(out->ip6, t->ip6, LB_CONF_IP6_LEN);
	out->port = ntohs(t->port);
	out->weight = t->weight;
	slot_sum(v->shm, v->nw, svc, be, cur);
	/* Before the first sync (or right after a change) the baseline
	 * may be ahead of nothing: never show a negative count. */
	for (int k = 0; k < C_NB; k++)
		cur[k] = cur[k] >= x->base[k] ? cur[k] - x->base[k] : 0;
	out->flows_total = cur[C_FLOWS];
	out->errors = cur[C_ERRORS];
	out->pkts[0] = cur[C_PKTS0];
	out->pkts[1] = cur[C_PKTS1];
	out->bytes[0] = cur[C_BYTES0];
	out->bytes[1] = cur[C_BYTES1];
	out->http_responses = cur[C_HTTP];
	out->http_5xx = cur[C_HTTP5];
	out->flows_ended = x->flows_ended;
	out->nb_workers = v->nw;
	for (uint32_t w = 0; w < v->nw; w++) {
		const struct lb_be_stats *s = bst(v->shm, w, svc, be);
		const struct fb_slot *f = &v->fb[w][svc][be];

		active += s->active;
		inflight += s->inflight;
		out->w[w].sched_errors = s->sched_errors;
		out->w[w].weight = be_weight(v, &c->svc[svc], svc, be, w);
		out->w[w].trials_ok = f->ok;
		out->w[w].trials_fail = f->fail;
		out->w[w].fb_sched_errors = f->err;
		out->w[w].fb_seen = f->seen != 0;
	}
	/* Gauges read word by word while workers move them: never show a
	 * negative count. */
	out->flows_active = active > 0 ? (uint64_t)active : 0;
	out->inflight = inflight > 0 ? (uint64_t)inflight : 0;
	(void)lb_l7view_be_get(v->l7, svc, be, lb_view_now(v), &out->l7);
	return 0;
}

int
lb_view_svc_get(const struct lb_view *v, uint32_t svc, struct lb_view_svc *out)
{
	const struct lb_dpconf *c;
	const struct lb_dpconf_svc *t;
	const struct svc_slot *sv;
	struct slot_id tid;

	if (v == NULL || out == NULL || svc >= NSVC)
		return -EINVAL;
	c = lb_view_conf(v);
	if (c == NULL || svc >= c->nb_svc || c->svc[svc].state == LB_SVC_EMPTY)
		return -ENOENT;
	t = &c->svc[svc];
	sv = &v->svc[svc];
	memset(out, 0, sizeof(*out));
	out->state = t->state;
	out->proto = t->proto;
	out->vip = ntohl(t->vip);
	out->af = t->af;
	if (t->af == LB_CONF_AF_INET6)
		memcpy(out->vip6, t->vip6, LB_CONF_IP6_LEN);
	out->port = ntohs(t->vport);
	out->opts = &t->opts;
	/* What backends that left this service did stays counted, so the
	 * service's counters never go down. */
	svc_id_of(c, svc, &tid);
	if (svc_id_eq(&sv->id, &tid)) {
		out->flows_total = sv->retired[C_FLOWS];
		out->errors = sv->retired[C_ERRORS];
		out->pkts[0] = sv->retired[C_PKTS0];
		out->pkts[1] = sv->retired[C_PKTS1];
		out->bytes[0] = sv->retired[C_BYTES0];
		out->bytes[1] = sv->retired[C_BYTES1];
		out->http_responses = sv->retired[C_HTTP];
		out->http_5xx = sv->retired[C_HTTP5];
		out->flows_ended = sv->retired_ended;
	}
	(void)lb_l7view_svc_get(v->l7, svc, lb_view_now(v), &out->l7);
	for (uint32_t b = 0; b < t->nb_be && b < NBE; b++) {
		struct lb_view_be x;

		if (lb_view_be_get(v, svc, b, &x) != 0)
			continue;
		if (x.state <= LB_BE_REMOVED)
			out->nb_be[x.state]++;
		out->flows_total += x.flows_total;
		out->flows_active += x.flows_active;
		out->errors += x.errors;
		out->pkts[0] += x.pkts[0];
		out->pkts[1] += x.pkts[1];
		out->bytes[0] += x.bytes[0];
		out->bytes[1] += x.bytes[1];
		out->flows_ended += x.flows_ended;
		out->http_responses += x.http_responses;
		out->http_5xx += x.http_5xx;
		out->inflight += x.inflight;
	}
	for (uint32_t w = 0; w < v->nw; w++)
		for (int k = 0; k < LB_ADMIT_VERDICT_MAX; k++)
			out->admit[k] += v->shm->w[w]->st->admit_svc[svc].n[k];
	for (uint32_t w = 0; w < v->nw; w++)
		out->admit_table_full +=
			v->shm->w[w]->st->admit_svc[svc].table_full;
	return 0;
}

const struct lb_view_fb *
lb_view_fb_stats(const struct lb_view *v, uint32_t wid)
{
	return v != NULL && wid < v->nw ? &v->fbst[wid] : NULL;
}

void
lb_view_stats_sum(const struct lb_shm *shm, struct lb_worker_stats *sum)
{
	uint32_t nw;

	if (sum == NULL)
		return;
	memset(sum, 0, sizeof(*sum));
	if (shm == NULL)
		return;
	nw = nb_workers(shm);
	/* Every field is a 64-bit counter (shm.h says so), so the sum is
	 * word by word and covers fields added later. */
	for (uint32_t w = 0; w < nw; w++) {
		const uint64_t *src = (const uint64_t *)shm->w[w]->st;
		uint64_t *dst = (uint64_t *)sum;

		for (size_t k = 0; k < sizeof(*sum) / sizeof(uint64_t); k++)
			dst[k] += src[k];
	}
}

void
lb_view_rule_hits(const struct lb_shm *shm, uint32_t slot, uint64_t *hits,
		  unsigned int n)
{
	uint32_t nw = nb_workers(shm);

	if (n > LB_ROUTE_FLAT_RULES)
		n = LB_ROUTE_FLAT_RULES;
	memset(hits, 0, (n + 1) * sizeof(hits[0]));
	if (slot >= LB_CONF_MAX_SVCS)
		return;
	for (uint32_t w = 0; w < nw; w++) {
		const uint64_t *h = shm->w[w]->st->rule_hits[slot];

		for (unsigned int r = 0; r < n; r++)
			hits[r] += h[r];
		hits[n] += h[LB_ROUTE_FLAT_RULES];
	}
}

bool
lb_view_busy(void *ctx, uint32_t svc, uint32_t be)
{
	const struct lb_shm *shm = ctx;
	uint32_t lo = be, hi = be + 1, nw;
	int64_t active = 0;

	if (shm == NULL || svc >= NSVC)
		return false;
	if (be == UINT32_MAX) {
		lo = 0;
		hi = NBE;
	} else if (be >= NBE) {
		return false;
	}
	nw = nb_workers(shm);
	for (uint32_t w = 0; w < nw; w++)
		for (uint32_t b = lo; b < hi; b++)
			active += bst(shm, w, svc, b)->active;
	return active > 0;
}

bool
lb_view_snat_busy(void *ctx, uint32_t ip)
{
	const struct lb_shm *shm = ctx;
	uint32_t nw;

	if (shm == NULL)
		return false;
	nw = nb_workers(shm);
	for (uint32_t w = 0; w < nw; w++)
		if (shm->w[w] != NULL &&
		    lb_snat_addr_used(shm->w[w]->snat, ip) > 0)
			return true;
	return false;
}

bool
lb_view_snat6_busy(void *ctx, const uint8_t *ip)
{
	const struct lb_shm *shm = ctx;
	uint32_t nw;

	if (shm == NULL)
		return false;
	nw = nb_workers(shm);
	/* Each worker knows an IPv6 SNAT address by its fold under that
	 * worker's flow table seed. */
	for (uint32_t w = 0; w < nw; w++)
		if (shm->w[w] != NULL && shm->w[w]->snat6 != NULL &&
		    shm->w[w]->ft != NULL &&
		    lb_snat_addr_used(shm->w[w]->snat6,
				      lb_flow6_fold(shm->w[w]->ft, ip)) > 0)
			return true;
	return false;
}

const char *
lb_view_fb_kind_name(unsigned int k)
{
	switch (k) {
	case LB_FB_TRIAL_OK:
		return "trial_ok";
	case LB_FB_TRIAL_FAIL:
		return "trial_fail";
	case LB_FB_FLOW_END:
		return "flow_end";
	case LB_FB_HTTP:
		return "http";
	case LB_FB_SPL:
		return "spl";
	case LB_FB_ORCA:
		return "orca";
	case LB_FB_REJECT:
		return "reject";
	default:
		return "unknown";
	}
}

const char *
lb_view_be_state_name(uint8_t state)
{
	switch (state) {
	case LB_BE_ACTIVE:
		return "active";
	case LB_BE_DRAINING:
		return "draining";
	case LB_BE_REMOVED:
		return "removed";
	default:
		return "empty";
	}
}

const char *
lb_view_svc_state_name(uint8_t state)
{
	switch (state) {
	case LB_SVC_ACTIVE:
		return "active";
	case LB_SVC_DELETED:
		return "deleted";
	default:
		return "empty";
	}
}

const struct lb_govview *
lb_view_gov(const struct lb_view *v)
{
	return v != NULL ? v->gov : NULL;
}
