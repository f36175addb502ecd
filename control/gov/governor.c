/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Overload governor: control half. See include/lb/governor.h for the
 * formulas and the passages of the overload-throttling patent they follow.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lb/governor.h"

#define NS_PER_S 1000000000ULL
#define INTERVAL_MIN_NS 1000000ULL	     /* 1 ms */
#define INTERVAL_MAX_NS (3600ULL * NS_PER_S) /* 1 h */
#define IDEAL_NS_MAX ((int64_t)(3600LL * 1000000000LL))
#define CALM_K_MAX 1000000u
#define MIN_SAMPLES_MAX 1000000000u
/* weight 1/4 of the newest ideal window in the ideal rate estimate */
#define IDEAL_EWMA_DIV 4.0

/* One poll interval's worth of QoS records. */
struct gov_slot {
	uint64_t records;
	uint64_t misses;
	int64_t min_slack_ns;
};

struct lb_gov {
	struct lb_gov_params p;
	uint64_t start_ns;   /* start of the open interval */
	unsigned int head;   /* slot of the open interval */
	unsigned int filled; /* intervals in the window, <= window_slots */
	struct gov_slot slot[LB_GOV_MAX_SLOTS];
	double m;
	bool overloaded;
	unsigned int calm;
	struct lb_gov_state last;
	struct lb_gov_counters cnt;
};

void
lb_gov_params_default(struct lb_gov_params *p)
{
	if (p == NULL)
		return;
	memset(p, 0, sizeof(*p));
	p->mode = LB_GOV_MODE_DAMPED;
	p->interval_ns = NS_PER_S;
	p->window_slots = 1;
	p->overload_pct = 5.0;
	p->t_step = 10.0;
	p->r_step = 1.0;
	p->calm_k = 3;
	p->m_init = 0.0;
	p->m_max = LB_GOV_M_LIMIT;
	p->min_samples = 10;
	p->ideal_slack_ns = 0;
	p->ideal_band_ns = 30000000;
	p->ideal_up = 2.0;
	p->ideal_down = 1.0;
}

/* A step of M: finite, positive, and at most @max. */
static int
check_step(double v, double max)
{
	if (!isfinite(v) || v == 0.0)
		return -EINVAL;
	if (v < 0.0 || v > max)
		return -ERANGE;
	return 0;
}

int
lb_gov_params_check(const struct lb_gov_params *p)
{
	int rc;

	if (p == NULL)
		return -EINVAL;
	if (p->mode != LB_GOV_MODE_DAMPED && p->mode != LB_GOV_MODE_IDEAL_RATE)
		return -EINVAL;
	if (p->interval_ns == 0 || p->window_slots == 0 || p->min_samples == 0)
		return -EINVAL;
	if (p->interval_ns < INTERVAL_MIN_NS ||
	    p->interval_ns > INTERVAL_MAX_NS ||
	    p->window_slots > LB_GOV_MAX_SLOTS || p->calm_k > CALM_K_MAX ||
	    p->min_samples > MIN_SAMPLES_MAX)
		return -ERANGE;
	if (!isfinite(p->overload_pct) || !isfinite(p->m_init) ||
	    !isfinite(p->m_max))
		return -EINVAL;
	if (p->overload_pct < 0.0 || p->overload_pct >= 100.0)
		return -ERANGE;
	if (p->m_init < 0.0 || p->m_max > LB_GOV_M_LIMIT ||
	    p->m_max <= p->m_init)
		return -ERANGE;
	rc = check_step(p->t_step, LB_GOV_M_LIMIT);
	if (rc == 0)
		rc = check_step(p->r_step, p->t_step);
	if (rc == 0)
		rc = check_step(p->ideal_up, p->t_step);
	if (rc == 0)
		rc = check_step(p->ideal_down, p->t_step);
	if (rc != 0)
		return rc;
	if (p->ideal_slack_ns < -IDEAL_NS_MAX ||
	    p->ideal_slack_ns > IDEAL_NS_MAX || p->ideal_band_ns < 0 ||
	    p->ideal_band_ns > IDEAL_NS_MAX)
		return -ERANGE;
	return 0;
}

static void
slot_clear(struct gov_slot *s)
{
	s->records = 0;
	s->misses = 0;
	s->min_slack_ns = INT64_MAX;
}

static void
window_clear(struct lb_gov *g)
{
	for (unsigned int i = 0; i < LB_GOV_MAX_SLOTS; i++)
		slot_clear(&g->slot[i]);
	g->head = 0;
	g->filled = 1;
}

struct lb_gov *
lb_gov_create(const struct lb_gov_params *p, uint64_t now_ns)
{
	struct lb_gov_params def;
	struct lb_gov *g;
	int rc;

	if (p == NULL) {
		lb_gov_params_default(&def);
		p = &def;
	}
	rc = lb_gov_params_check(p);
	if (rc != 0) {
		errno = -rc;
		return NULL;
	}
	g = calloc(1, sizeof(*g));
	if (g == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	g->p = *p;
	g->start_ns = now_ns;
	window_clear(g);
	g->m = p->m_init;
	g->last.mode = p->mode;
	g->last.min_slack_ns = INT64_MAX;
	return g;
}

void
lb_gov_free(struct lb_gov *g)
{
	free(g);
}

int
lb_gov_configure(struct lb_gov *g, const struct lb_gov_params *p)
{
	int rc;

	if (g == NULL)
		return -EINVAL;
	rc = lb_gov_params_check(p);
	if (rc != 0)
		return rc;
	if (p->window_slots != g->p.window_slots)
		window_clear(g);
	g->p = *p;
	if (g->m < p->m_init)
		g->m = p->m_init;
	if (g->m > p->m_max)
		g->m = p->m_max;
	g->last.mode = p->mode;
	return 0;
}

/* Raises M by @step up to m_max; true if M changed. */
static bool
m_raise(struct lb_gov *g, double step)
{
	double m = g->m + step;

	if (m > g->p.m_max)
		m = g->p.m_max;
	if (m == g->m)
		return false;
	g->m = m;
	return true;
}

/* Lowers M by @step down to m_init (the patent's floor); true if changed. */
static bool
m_release(struct lb_gov *g, double step)
{
	double m = g->m - step;

	if (m < g->p.m_init)
		m = g->p.m_init;
	if (m == g->m)
		return false;
	g->m = m;
	return true;
}

/*
 * The controller, once per closed interval, on the moving window's
 * records/misses/minimum slack (patent: overloaded when the share of misses
 * "is higher than a pre-determined overload threshold"; then +T; after a
 * pre-determined number of consecutive non-overloaded poll intervals, -R in
 * every further one; ideal request rate: compare the minimum difference
 * between expected and actual QoS with the ideal threshold).
 */
static void
evaluate(struct lb_gov *g, uint64_t rec, uint64_t miss, int64_t min_slack)
{
	const struct lb_gov_params *p = &g->p;
	bool judged = rec >= p->min_samples;
	double pct = rec > 0 ? 100.0 * (double)miss / (double)rec : 0.0;
	bool over = judged && pct > p->overload_pct;
	double span_s = (double)g->filled * (double)p->interval_ns / 1e9;
	struct lb_gov_state *l = &g->last;

	g->cnt.intervals++;
	if (!judged)
		g->cnt.unjudged++;
	l->miss_pct = pct;
	l->window_records = rec;
	l->window_misses = miss;
	l->window_rate_rps = (double)rec / span_s;
	l->min_slack_ns = min_slack;
	l->rate = LB_GOV_RATE_UNKNOWN;

	if (over) {
		g->cnt.overload_intervals++;
		if (!g->overloaded)
			g->cnt.overload_entries++;
		g->overloaded = true;
		g->calm = 0;
		if (m_raise(g, p->t_step))
			g->cnt.m_raises++;
		return;
	}
	if (g->overloaded)
		g->cnt.overload_exits++;
	g->overloaded = false;
	if (g->calm < UINT32_MAX)
		g->calm++;
	if (p->mode == LB_GOV_MODE_DAMPED) {
		if (g->calm >= p->calm_k && m_release(g, p->r_step))
			g->cnt.m_releases++;
		return;
	}
	/* Ideal request rate mode: the patent's three exits. */
	if (judged && min_slack < p->ideal_slack_ns) {
		l->rate = LB_GOV_RATE_ABOVE;
		if (m_raise(g, p->ideal_up))
			g->cnt.ideal_raises++;
	} else if (judged &&
		   min_slack <= p->ideal_slack_ns + p->ideal_band_ns) {
		l->rate = LB_GOV_RATE_IDEAL;
		/* one window's rate is noisy: smooth over the ideal windows */
		if (l->ideal_rate_rps > 0.0)
			l->ideal_rate_rps +=
				(l->window_rate_rps - l->ideal_rate_rps) /
				IDEAL_EWMA_DIV;
		else
			l->ideal_rate_rps = l->window_rate_rps;
		g->cnt.ideal_holds++;
	} else {
		l->rate = LB_GOV_RATE_BELOW;
		if (g->calm >= p->calm_k && m_release(g, p->ideal_down))
			g->cnt.ideal_releases++;
	}
}

/* Closes the open interval and opens the next one. */
static void
close_one(struct lb_gov *g)
{
	uint64_t rec = 0, miss = 0;
	int64_t min_slack = INT64_MAX;

	for (unsigned int i = 0; i < g->p.window_slots; i++) {
		const struct gov_slot *s = &g->slot[i];

		rec += s->records;
		miss += s->misses;
		if (s->min_slack_ns < min_slack)
			min_slack = s->min_slack_ns;
	}
	evaluate(g, rec, miss, min_slack);
	g->head = (g->head + 1) % g->p.window_slots;
	slot_clear(&g->slot[g->head]);
	if (g->filled < g->p.window_slots)
		g->filled++;
	g->start_ns += g->p.interval_ns;
}

/*
 * @n intervals whose whole window is empty, in closed form: each is calm
 * and unjudged, and the release step applies once calm reaches K.
 */
static void
close_idle(struct lb_gov *g, uint64_t n)
{
	const struct lb_gov_params *p = &g->p;
	double step = p->mode == LB_GOV_MODE_DAMPED ? p->r_step : p->ideal_down;
	uint64_t first, steps = 0, room;
	struct lb_gov_state *l = &g->last;

	g->cnt.intervals += n;
	g->cnt.unjudged += n;
	if (g->overloaded)
		g->cnt.overload_exits++;
	g->overloaded = false;
	/* first of the n intervals at which calm >= K */
	first = p->calm_k > g->calm ? p->calm_k - g->calm : 1;
	if (n >= first)
		steps = n - first + 1;
	if ((uint64_t)g->calm + n > UINT32_MAX)
		g->calm = UINT32_MAX;
	else
		g->calm += (unsigned int)n;
	if (steps > 0 && g->m > p->m_init) {
		room = (uint64_t)ceil((g->m - p->m_init) / step);
		if (steps >= room) {
			steps = room;
			g->m = p->m_init;
		} else {
			g->m -= (double)steps * step;
		}
		if (p->mode == LB_GOV_MODE_DAMPED)
			g->cnt.m_releases += steps;
		else
			g->cnt.ideal_releases += steps;
	}
	for (unsigned int i = 0; i < p->window_slots; i++)
		slot_clear(&g->slot[i]);
	g->filled = p->window_slots;
	g->start_ns += n * p->interval_ns;
	l->miss_pct = 0.0;
	l->window_records = 0;
	l->window_misses = 0;
	l->window_rate_rps = 0.0;
	l->min_slack_ns = INT64_MAX;
	l->rate = p->mode == LB_GOV_MODE_DAMPED ? LB_GOV_RATE_UNKNOWN
						: LB_GOV_RATE_BELOW;
}

int
lb_gov_tick(struct lb_gov *g, uint64_t now_ns)
{
	uint64_t n, k;

	if (g == NULL)
		return -EINVAL;
	if (now_ns < g->start_ns || now_ns - g->start_ns < g->p.interval_ns)
		return 0;
	n = (now_ns - g->start_ns) / g->p.interval_ns;
	/* After window_slots closes the window holds no record any more. */
	k = n < g->p.window_slots ? n : g->p.window_slots;
	for (uint64_t i = 0; i < k; i++)
		close_one(g);
	if (n > k)
		close_idle(g, n - k);
	return n > INT32_MAX ? INT32_MAX : (int)n;
}

int
lb_gov_record(struct lb_gov *g, uint64_t now_ns, uint64_t expected_ns,
	      uint64_t actual_ns, unsigned int rank)
{
	struct gov_slot *s;
	int64_t slack;
	unsigned int cls;

	if (g == NULL)
		return -EINVAL;
	if (expected_ns == 0) {
		g->cnt.rejected++;
		return -EINVAL;
	}
	if (expected_ns > INT64_MAX || actual_ns > INT64_MAX ||
	    rank > LB_GOV_RANK_MAX) {
		g->cnt.rejected++;
		return -ERANGE;
	}
	lb_gov_tick(g, now_ns);
	s = &g->slot[g->head];
	cls = lb_gov_class(rank);
	slack = (int64_t)expected_ns - (int64_t)actual_ns;
	s->records++;
	g->cnt.records++;
	g->cnt.records_by_class[cls]++;
	if (actual_ns > expected_ns) {
		s->misses++;
		g->cnt.misses++;
		g->cnt.misses_by_class[cls]++;
	}
	if (slack < s->min_slack_ns)
		s->min_slack_ns = slack;
	return 0;
}

double
lb_gov_multiplier(const struct lb_gov *g)
{
	return g != NULL ? g->m : NAN;
}

int
lb_gov_state(const struct lb_gov *g, struct lb_gov_state *st)
{
	if (g == NULL || st == NULL)
		return -EINVAL;
	*st = g->last;
	st->mode = g->p.mode;
	st->m = g->m;
	st->overloaded = g->overloaded;
	st->calm_windows = g->calm;
	st->interval_start_ns = g->start_ns;
	return 0;
}

int
lb_gov_counters(const struct lb_gov *g, struct lb_gov_counters *c)
{
	if (g == NULL || c == NULL)
		return -EINVAL;
	*c = g->cnt;
	return 0;
}
