/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The overload governor in front of one simulated server: a FIFO queue
 * served at a fixed 1000 req/s, offered 1500 req/s of Poisson traffic in
 * three priority ranks. Runs without a governor, with the patent's damped
 * governor, and in ideal request rate mode, and prints per interval what
 * came in, what was admitted per rank, how many completions missed their
 * expected response time, and what the governor made of it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb/governor.h"

#define NS_PER_MS 1000000ULL
#define NS_PER_S 1000000000ULL
#define NB_RANKS 3
#define NB_WIN 60
#define QCAP (1u << 16)

struct job {
	uint64_t arr, fin, exp;
	unsigned int rank;
};

/* What one interval of the simulation saw. */
struct win {
	uint64_t offered;
	uint64_t admitted[NB_RANKS];
	uint64_t done, missed;
	double m;
	bool over;
	unsigned int calm;
	enum lb_gov_rate rate;
};

struct run {
	const char *title;
	bool governed;
	struct lb_gov_params p;
	struct win w[NB_WIN];
	struct lb_gov_counters c;
	struct lb_gov_state st;
};

static const double share[NB_RANKS] = {0.2, 0.3, 0.5};
static const uint64_t expect_ns[NB_RANKS] = {50 * NS_PER_MS, 100 * NS_PER_MS,
					     200 * NS_PER_MS};
static const double offered_rps = 1500.0, service_rps = 1000.0;

static int
complete(struct run *r, struct lb_gov *g, const struct job *j)
{
	struct win *w = &r->w[j->fin / NS_PER_S];

	w->done++;
	w->missed += j->fin - j->arr > j->exp;
	if (g == NULL)
		return 0;
	return lb_gov_record(g, j->fin, j->exp, j->fin - j->arr, j->rank);
}

static int
simulate(struct run *r, struct job *q)
{
	const uint64_t svc = (uint64_t)(1e9 / service_rps);
	const uint64_t end = NB_WIN * NS_PER_S;
	uint64_t t = 0, busy = 0, qh = 0, qt = 0, next_w = NS_PER_S;
	struct lb_gov *g = NULL;
	struct lb_gov_state st;
	struct lb_xoshiro x;
	struct lb_rng rng;
	int rc = 0;

	lb_xoshiro_seed(&x, 2024);
	rng = lb_rng_xoshiro(&x);
	if (r->governed) {
		g = lb_gov_create(&r->p, 0);
		if (g == NULL)
			return -1;
	}
	while (rc == 0) {
		double u = lb_rng_unit(&rng), c = lb_rng_unit(&rng);
		unsigned int k = c < share[0]		   ? 0
				 : c < share[0] + share[1] ? 1
							   : 2;
		struct win *w;

		t += (uint64_t)(-log1p(-u) / offered_rps * 1e9);
		while (next_w <= t && next_w <= end && rc == 0) {
			while (qh != qt && q[qh % QCAP].fin < next_w && rc == 0)
				rc = complete(r, g, &q[qh++ % QCAP]);
			w = &r->w[next_w / NS_PER_S - 1];
			if (g != NULL) {
				lb_gov_tick(g, next_w);
				lb_gov_state(g, &st);
				w->m = st.m;
				w->over = st.overloaded;
				w->calm = st.calm_windows;
				w->rate = st.rate;
			}
			next_w += NS_PER_S;
		}
		if (t >= end)
			break;
		while (qh != qt && q[qh % QCAP].fin <= t && rc == 0)
			rc = complete(r, g, &q[qh++ % QCAP]);
		w = &r->w[t / NS_PER_S];
		w->offered++;
		if (g != NULL && lb_gov_decide(lb_gov_multiplier(g), k + 1,
					       &rng, NULL) == LB_GOV_THROTTLE)
			continue;
		if (qt - qh >= QCAP) {
			rc = -1;
			break;
		}
		w->admitted[k]++;
		busy = (t > busy ? t : busy) + svc;
		q[qt++ % QCAP] = (struct job){t, busy, expect_ns[k], k + 1};
	}
	if (g != NULL) {
		lb_gov_counters(g, &r->c);
		lb_gov_state(g, &r->st);
		lb_gov_free(g);
	}
	return rc;
}

/* What the governor did in an interval; a printed row is a run of one. */
enum act {
	ACT_NONE,    /* no governor */
	ACT_LATE,    /* no governor, every completion late */
	ACT_RAISE,   /* overloaded: +T */
	ACT_WAIT,    /* calm, fewer than K calm intervals: M held */
	ACT_RELEASE, /* damped, K calm intervals: -R */
	ACT_DOWN,    /* ideal mode, below the ideal rate: -down */
	ACT_HOLD,    /* ideal mode, at the ideal rate: M held */
	ACT_UP,	     /* ideal mode, above the ideal rate: +up */
};

static const char *const act_text[] = {
	[ACT_NONE] = "no throttle",
	[ACT_LATE] = "no throttle, all late",
	[ACT_RAISE] = "overloaded: +T each",
	[ACT_WAIT] = "calm < K: hold M",
	[ACT_RELEASE] = "calm >= K: -R each",
	[ACT_DOWN] = "below ideal: -down each",
	[ACT_HOLD] = "at ideal rate: hold M",
	[ACT_UP] = "above ideal: +up each",
};

static enum act
act_of(const struct run *r, const struct win *w)
{
	if (!r->governed)
		return w->done > 0 && w->missed == w->done ? ACT_LATE
							   : ACT_NONE;
	if (w->over)
		return ACT_RAISE;
	if (w->rate == LB_GOV_RATE_IDEAL)
		return ACT_HOLD;
	if (w->rate == LB_GOV_RATE_ABOVE)
		return ACT_UP;
	if (w->calm < r->p.calm_k)
		return ACT_WAIT;
	return r->p.mode == LB_GOV_MODE_DAMPED ? ACT_RELEASE : ACT_DOWN;
}

/* One row: intervals [a, b), averaged per second. */
static void
print_span(FILE *out, const struct run *r, unsigned int a, unsigned int b)
{
	uint64_t off = 0, adm[NB_RANKS] = {0}, done = 0, missed = 0;
	double m0 = a > 0 ? r->w[a - 1].m : r->p.m_init, s = b - a;
	char t[16];

	for (unsigned int i = a; i < b; i++) {
		off += r->w[i].offered;
		done += r->w[i].done;
		missed += r->w[i].missed;
		for (unsigned int k = 0; k < NB_RANKS; k++)
			adm[k] += r->w[i].admitted[k];
	}
	if (b - a > 1)
		snprintf(t, sizeof(t), "%u-%u", a + 1, b);
	else
		snprintf(t, sizeof(t), "%u", b);
	fprintf(out,
		"%6s %5.0f %5.0f %4.0f %4.0f %4.0f %5.1f %4.0f->%-3.0f %s\n", t,
		off / s, (adm[0] + adm[1] + adm[2]) / s, adm[0] / s, adm[1] / s,
		adm[2] / s, done ? 100.0 * missed / done : 0.0,
		r->governed ? m0 : 0.0, r->w[b - 1].m,
		act_text[act_of(r, &r->w[a])]);
}

static void
report(FILE *out, const struct run *r)
{
	uint64_t done = 0, missed = 0, adm = 0;
	unsigned int a = 0;

	fprintf(out, "-- %s\n", r->title);
	for (unsigned int b = 1; b <= NB_WIN; b++) {
		if (b < NB_WIN && act_of(r, &r->w[b]) == act_of(r, &r->w[a]))
			continue;
		print_span(out, r, a, b);
		a = b;
	}
	for (unsigned int i = NB_WIN / 2; i < NB_WIN; i++) {
		done += r->w[i].done;
		missed += r->w[i].missed;
		for (unsigned int k = 0; k < NB_RANKS; k++)
			adm += r->w[i].admitted[k];
	}
	fprintf(out,
		"   last %us: admitted %.0f/s, %.1f %% late, "
		"%.0f/s on time",
		NB_WIN / 2, adm / (NB_WIN / 2.0),
		done ? 100.0 * missed / done : 0.0,
		(done - missed) / (NB_WIN / 2.0));
	if (r->governed)
		fprintf(out, ", %lu overload episodes",
			(unsigned long)r->c.overload_entries);
	if (r->governed && r->p.mode == LB_GOV_MODE_IDEAL_RATE)
		fprintf(out, ",\n   estimated ideal rate %.0f req/s",
			r->st.ideal_rate_rps);
	fprintf(out, "\n");
}

int
lb_sim_governor(FILE *out)
{
	struct job *q = calloc(QCAP, sizeof(*q));
	struct run *runs = calloc(3, sizeof(*runs));
	int rc = -1;

	if (q == NULL || runs == NULL)
		goto out;
	runs[0].title = "no governor: the backlog only grows";
	runs[1].title = "damped governor (patent default): +T when > 5 % "
			"late, -R after K calm";
	runs[1].governed = true;
	lb_gov_params_default(&runs[1].p);
	runs[2] = runs[1];
	runs[2].title = "ideal request rate mode: hold the minimum slack in "
			"[0, 30 ms]";
	runs[2].p.mode = LB_GOV_MODE_IDEAL_RATE;

	fprintf(out,
		"One server, FIFO, %.0f req/s; offered %.0f req/s "
		"(Poisson), ranks 1/2/3 = 20/30/50 %%\n"
		"expecting 50/100/200 ms. Throttle p = min(1, M x rank "
		"/ 100); T=%.0f R=%.0f K=%u;\n"
		"1 s intervals. Rows group intervals with the same "
		"decision; rates per second.\n",
		service_rps, offered_rps, runs[1].p.t_step, runs[1].p.r_step,
		runs[1].p.calm_k);
	fprintf(out, "     t offer admit   r1   r2   r3 late%%  M: from->to "
		     "decision\n");
	for (unsigned int i = 0; i < 3; i++) {
		memset(q, 0, QCAP * sizeof(*q));
		if (simulate(&runs[i], q) != 0)
			goto out;
		report(out, &runs[i]);
	}
	rc = 0;
out:
	free(runs);
	free(q);
	return rc;
}
