/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP, SPL and ORCA feedback merged per backend slot; the SPL policy's
 * reading per service.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "l7view.h"

#define NSVC LB_CONF_MAX_SVCS
#define NBE LB_CONF_MAX_BES
#define NS_PER_MS 1000000ull
#define NS_PER_US 1000ull
/* Exact bins below 8 us, then LB_L7V_LAT_SUB per octave up to 2^27 us,
 * then the overflow bin. */
#define LAT_EXACT 8u
#define LAT_OCT_LO 3u  /* log2(LAT_EXACT) */
#define LAT_OCT_HI 26u /* last octave: [2^26, 2^27) us */
#define LAT_BINS (LAT_EXACT + (LAT_OCT_HI - LAT_OCT_LO + 1) * LB_L7V_LAT_SUB + 1)
#define NO_INST (-1)

/* One second of one backend's responses. */
struct bucket {
	uint64_t epoch; /* ts_ns / LB_L7V_BUCKET_NS + 1; 0: never used */
	uint32_t responses;
	uint32_t e5xx;
	uint32_t expect;
	uint32_t qos_miss;
	uint32_t timed;
	uint32_t lat[LAT_BINS];
};

struct be_state {
	bool spl_seen;
	bool orca_seen;
	bool member;
	int16_t inst; /* SPL instance id, NO_INST */
	double spl;
	uint64_t spl_gen_ns;
	double orca_cpu;
	double orca_mem;
	uint64_t spl_records;
	uint64_t http_records;
	uint64_t orca_records;
	struct bucket *win; /* LB_L7V_BUCKETS, allocated on the first HTTP
			       record: most slots never see one */
};

struct svc_state {
	struct lb_spl_svc *spl; /* on the first member */
	int16_t owner[LB_SPL_INST_MAX]; /* instance id -> backend slot */
	uint64_t untracked;
	uint64_t ifl[LB_L7V_TICKS];
	unsigned int ifl_n;
	unsigned int ifl_next;
};

struct lb_l7view {
	struct svc_state svc[NSVC];
	struct be_state be[NSVC][NBE];
	struct lb_spl_decision d; /* scratch: too big for the stack */
};

unsigned int
lb_l7view_lat_bins(void)
{
	return LAT_BINS;
}

unsigned int
lb_l7view_lat_bin(uint64_t us)
{
	unsigned int o;

	if (us < LAT_EXACT)
		return (unsigned int)us;
	if (us >= LB_L7V_LAT_MAX_US)
		return LAT_BINS - 1;
	o = 63u - (unsigned int)__builtin_clzll(us);
	return LAT_EXACT + (o - LAT_OCT_LO) * LB_L7V_LAT_SUB +
	       (unsigned int)((us >> (o - LAT_OCT_LO)) & (LB_L7V_LAT_SUB - 1));
}

/* Middle of bin @p i in us. */
static double
bin_mid(unsigned int i)
{
	unsigned int o, sub;
	double lo, width;

	if (i < LAT_EXACT)
		return (double)i + 0.5;
	if (i >= LAT_BINS - 1)
		return (double)LB_L7V_LAT_MAX_US;
	o = (i - LAT_EXACT) / LB_L7V_LAT_SUB + LAT_OCT_LO;
	sub = (i - LAT_EXACT) % LB_L7V_LAT_SUB;
	width = ldexp(1.0, (int)(o - LAT_OCT_LO));
	lo = (double)(LB_L7V_LAT_SUB + sub) * width;
	return lo + width / 2;
}

double
lb_l7view_lat_quantile(const uint32_t *bins, uint64_t n, double q)
{
	uint64_t rank, cum = 0;

	if (bins == NULL || n == 0 || !(q > 0.0) || q > 1.0)
		return 0.0;
	/* Nearest rank: the smallest value with at least q*n at or below. */
	rank = (uint64_t)ceil(q * (double)n);
	if (rank == 0)
		rank = 1;
	for (unsigned int i = 0; i < LAT_BINS; i++) {
		cum += bins[i];
		if (cum >= rank)
			return bin_mid(i);
	}
	return bin_mid(LAT_BINS - 1);
}

struct lb_l7view *
lb_l7view_create(void)
{
	struct lb_l7view *l = calloc(1, sizeof(*l));

	if (l == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	for (uint32_t s = 0; s < NSVC; s++) {
		for (uint32_t i = 0; i < LB_SPL_INST_MAX; i++)
			l->svc[s].owner[i] = NO_INST;
		for (uint32_t b = 0; b < NBE; b++)
			l->be[s][b].inst = NO_INST;
	}
	return l;
}

void
lb_l7view_free(struct lb_l7view *l)
{
	if (l == NULL)
		return;
	for (uint32_t s = 0; s < NSVC; s++) {
		lb_spl_svc_free(l->svc[s].spl);
		for (uint32_t b = 0; b < NBE; b++)
			free(l->be[s][b].win);
	}
	free(l);
}

static bool
finite_nonneg(double x)
{
	return isfinite(x) && x >= 0.0;
}

static double
bits_f64(uint64_t v)
{
	double d;

	memcpy(&d, &v, sizeof(d));
	return d;
}

/* The window bucket of time @p ts_ns, emptied if it held an older
 * second. */
static struct bucket *
bucket_at(struct be_state *b, uint64_t ts_ns)
{
	uint64_t epoch = ts_ns / LB_L7V_BUCKET_NS + 1;
	struct bucket *k;

	if (b->win == NULL) {
		b->win = calloc(LB_L7V_BUCKETS, sizeof(*b->win));
		if (b->win == NULL)
			return NULL;
	}
	k = &b->win[epoch % LB_L7V_BUCKETS];
	if (k->epoch != epoch) {
		/* A record older than the bucket's second is outside the
		 * window that bucket now serves. */
		if (k->epoch > epoch)
			return NULL;
		memset(k, 0, sizeof(*k));
		k->epoch = epoch;
	}
	return k;
}

static void
feed_http(struct be_state *b, const struct lb_fb *r)
{
	struct bucket *k;

	b->http_records++;
	k = bucket_at(b, r->ts_ns);
	if (k == NULL)
		return;
	k->responses++;
	if (r->u32 >= 500 && r->u32 <= 599)
		k->e5xx++;
	if (r->flags & LB_FB_F_EXPECT) {
		k->expect++;
		/* A response that could not be timed did not show that it
		 * met the expectation. */
		if (!(r->flags & LB_FB_F_QOS_MET))
			k->qos_miss++;
	}
	if (r->flags & LB_FB_F_TIMED) {
		k->timed++;
		k->lat[lb_l7view_lat_bin(r->v / NS_PER_US)]++;
	}
}

static void
feed_spl(struct lb_l7view *l, uint32_t s, struct be_state *b,
	 const struct lb_fb *r)
{
	double spl = bits_f64(r->v);
	uint64_t age = (uint64_t)r->u32 * NS_PER_MS;
	uint64_t gen = r->ts_ns > age ? r->ts_ns - age : 0;

	b->spl_records++;
	if (!finite_nonneg(spl))
		return;
	/* Only the newest report counts ([0065]: the one generated last). */
	if (b->spl_seen && gen < b->spl_gen_ns)
		return;
	b->spl_seen = true;
	b->spl = spl;
	b->spl_gen_ns = gen;
	if (b->inst != NO_INST)
		(void)lb_spl_report(l->svc[s].spl, (unsigned int)b->inst, spl,
				    gen, r->ts_ns);
}

void
lb_l7view_feed(struct lb_l7view *l, const struct lb_fb *r)
{
	struct be_state *b;

	if (l == NULL || r == NULL || r->svc >= NSVC || r->be >= NBE)
		return;
	b = &l->be[r->svc][r->be];
	switch (r->kind) {
	case LB_FB_HTTP:
		feed_http(b, r);
		break;
	case LB_FB_SPL:
		feed_spl(l, r->svc, b, r);
		break;
	case LB_FB_ORCA: {
		double cpu = bits_f64(r->v);

		b->orca_records++;
		if (!finite_nonneg(cpu))
			break;
		b->orca_seen = true;
		b->orca_cpu = cpu;
		b->orca_mem = (double)r->u32 / 1e6;
		break;
	}
	default:
		break;
	}
}

static void
leave(struct lb_l7view *l, uint32_t s, struct be_state *b)
{
	if (b->inst == NO_INST)
		return;
	(void)lb_spl_inst_remove(l->svc[s].spl, (unsigned int)b->inst);
	l->svc[s].owner[b->inst] = NO_INST;
	b->inst = NO_INST;
}

void
lb_l7view_reset(struct lb_l7view *l, uint32_t svc, uint32_t be)
{
	struct be_state *b;
	struct bucket *win;

	if (l == NULL || svc >= NSVC || be >= NBE)
		return;
	b = &l->be[svc][be];
	if (b->member && b->inst == NO_INST && l->svc[svc].untracked > 0)
		l->svc[svc].untracked--;
	leave(l, svc, b);
	win = b->win;
	memset(b, 0, sizeof(*b));
	b->inst = NO_INST;
	b->win = win;
	if (win != NULL)
		memset(win, 0, LB_L7V_BUCKETS * sizeof(*win));
}

static int
svc_policy(struct svc_state *sv)
{
	struct lb_spl_conf c;

	if (sv->spl != NULL)
		return 0;
	lb_spl_conf_init(&c, LB_SPL_INST_MAX);
	sv->spl = lb_spl_svc_create(&c);
	return sv->spl != NULL ? 0 : -ENOMEM;
}

int
lb_l7view_member(struct lb_l7view *l, uint32_t svc, uint32_t be, bool member,
		 uint64_t now_ns)
{
	struct svc_state *sv;
	struct be_state *b;
	int rc, id = -1;

	if (l == NULL || svc >= NSVC || be >= NBE)
		return -EINVAL;
	sv = &l->svc[svc];
	b = &l->be[svc][be];
	if (member == b->member)
		return 0;
	if (!member) {
		if (b->inst == NO_INST && sv->untracked > 0)
			sv->untracked--;
		leave(l, svc, b);
		b->member = false;
		return 0;
	}
	rc = svc_policy(sv);
	if (rc != 0)
		return rc;
	b->member = true;
	for (unsigned int i = 0; i < LB_SPL_INST_MAX && id < 0; i++)
		if (sv->owner[i] == NO_INST)
			id = (int)i;
	if (id < 0) {
		sv->untracked++;
		return -ENOSPC;
	}
	/* The policy refuses reports generated before the instance
	 * entered: one kept from before enters with it, at its time. */
	rc = lb_spl_inst_add(sv->spl, (unsigned int)id,
			     b->spl_seen ? b->spl_gen_ns : now_ns);
	if (rc != 0) {
		b->member = false;
		return rc;
	}
	sv->owner[id] = (int16_t)be;
	b->inst = (int16_t)id;
	if (b->spl_seen)
		(void)lb_spl_report(sv->spl, (unsigned int)id, b->spl,
				    b->spl_gen_ns, b->spl_gen_ns);
	return 0;
}

void
lb_l7view_sample(struct lb_l7view *l, uint32_t svc, uint64_t inflight)
{
	struct svc_state *sv;

	if (l == NULL || svc >= NSVC)
		return;
	sv = &l->svc[svc];
	sv->ifl[sv->ifl_next] = inflight;
	sv->ifl_next = (sv->ifl_next + 1) % LB_L7V_TICKS;
	if (sv->ifl_n < LB_L7V_TICKS)
		sv->ifl_n++;
}

void
lb_l7view_svc_reset(struct lb_l7view *l, uint32_t svc)
{
	if (l == NULL || svc >= NSVC)
		return;
	l->svc[svc].ifl_n = 0;
	l->svc[svc].ifl_next = 0;
}

/* Decides over service @p s's members at @p now_ns: 0 and l->d filled. */
static int
decide(struct lb_l7view *l, uint32_t s, uint64_t now_ns)
{
	struct svc_state *sv = &l->svc[s];

	if (sv->spl == NULL)
		return -ENOENT;
	return lb_spl_decide(sv->spl, now_ns, &l->d);
}

int
lb_l7view_be_get(struct lb_l7view *l, uint32_t svc, uint32_t be,
		 uint64_t now_ns, struct lb_l7view_be *out)
{
	const struct be_state *b;
	uint32_t lat[LAT_BINS] = {0};
	uint64_t now_epoch;

	if (l == NULL || out == NULL || svc >= NSVC || be >= NBE)
		return -EINVAL;
	b = &l->be[svc][be];
	memset(out, 0, sizeof(*out));
	out->member = b->member;
	out->spl_seen = b->spl_seen;
	out->spl = b->spl;
	out->spl_gen_ns = b->spl_gen_ns;
	if (b->spl_seen)
		out->spl_age_ns =
			now_ns > b->spl_gen_ns ? now_ns - b->spl_gen_ns : 0;
	if (b->inst != NO_INST && decide(l, svc, now_ns) == 0) {
		for (unsigned int i = 0; i < l->d.nb_inst; i++)
			if (l->d.inst[i].id == (unsigned int)b->inst)
				out->spl_decayed = l->d.inst[i].decayed;
	}
	out->orca_seen = b->orca_seen;
	out->orca_cpu = b->orca_cpu;
	out->orca_mem = b->orca_mem;
	out->spl_records = b->spl_records;
	out->http_records = b->http_records;
	out->orca_records = b->orca_records;
	now_epoch = now_ns / LB_L7V_BUCKET_NS + 1;
	for (unsigned int i = 0; b->win != NULL && i < LB_L7V_BUCKETS; i++) {
		const struct bucket *k = &b->win[i];

		/* The current second and the LB_L7V_BUCKETS - 1 before. */
		if (k->epoch == 0 || k->epoch > now_epoch ||
		    k->epoch + LB_L7V_BUCKETS <= now_epoch)
			continue;
		out->win_responses += k->responses;
		out->win_5xx += k->e5xx;
		out->win_expect += k->expect;
		out->win_qos_miss += k->qos_miss;
		out->win_timed += k->timed;
		for (unsigned int j = 0; j < LAT_BINS; j++)
			lat[j] += k->lat[j];
	}
	if (out->win_responses > 0)
		out->rate_5xx =
			(double)out->win_5xx / (double)out->win_responses;
	if (out->win_expect > 0)
		out->rate_qos_miss =
			(double)out->win_qos_miss / (double)out->win_expect;
	out->p50_ms = lb_l7view_lat_quantile(lat, out->win_timed, 0.50) / 1e3;
	out->p90_ms = lb_l7view_lat_quantile(lat, out->win_timed, 0.90) / 1e3;
	out->p99_ms = lb_l7view_lat_quantile(lat, out->win_timed, 0.99) / 1e3;
	return 0;
}

int
lb_l7view_svc_get(struct lb_l7view *l, uint32_t svc, uint64_t now_ns,
		  struct lb_l7view_svc *out)
{
	const struct svc_state *sv;
	struct lb_spl_stats st;
	uint64_t sum = 0;

	if (l == NULL || out == NULL || svc >= NSVC)
		return -EINVAL;
	sv = &l->svc[svc];
	memset(out, 0, sizeof(*out));
	out->lower = LB_SPL_LOWER_DEFAULT;
	out->upper = LB_SPL_UPPER_DEFAULT;
	out->decay = LB_SPL_DECAY_DEFAULT;
	out->action = LB_SPL_NOOP;
	out->reason = LB_SPL_R_NO_INSTANCES;
	if (decide(l, svc, now_ns) == 0) {
		out->nb_inst = l->d.nb_inst;
		out->total = l->d.total;
		out->action = l->d.action;
		out->reason = l->d.reason;
		out->lower = l->d.lower;
		out->upper = l->d.upper;
		out->decay = l->d.decay;
	}
	if (sv->spl != NULL && lb_spl_stats_get(sv->spl, &st) == 0) {
		out->spl_rejected = st.reports - st.accepted;
		out->spl_clamped = st.clamped;
	}
	out->untracked = sv->untracked;
	for (unsigned int i = 0; i < sv->ifl_n; i++)
		sum += sv->ifl[i];
	out->inflight_n = sv->ifl_n;
	if (sv->ifl_n > 0)
		out->inflight_avg = (double)sum / (double)sv->ifl_n;
	return 0;
}
