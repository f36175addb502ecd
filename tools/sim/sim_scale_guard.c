/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-sim scale_guard: one noisy stream of raw recommendations drives two
 * pools, one through the seed's guards (bounds only), one through the
 * recommended guards, to show how the dead band, stabilization and
 * cooldowns stop flapping and how a stuck instance is removed.
 */
#include <stdio.h>
#include <string.h>

#include "lb/rng.h"
#include "scale_guard.h"

#define TICK_NS (5 * LB_SG_NS_PER_S)
#define NB_MIN 16
#define TICKS_PER_MIN 12
#define NB_TICKS (NB_MIN * TICKS_PER_MIN)
#define BOOT_NS (10 * LB_SG_NS_PER_S)
/* Every STUCK_EVERY-th instance asked for never becomes healthy. */
#define STUCK_EVERY 4
#define POOL_MAX 64
#define NEVER UINT64_MAX

struct pool {
	struct lb_scale_guard *g;
	uint32_t running;
	uint32_t nb_pending;
	uint64_t asked_ns[POOL_MAX]; /* oldest first */
	uint64_t ready_ns[POOL_MAX];
	uint32_t launched;
	uint32_t short_ticks; /* running below the true need */
	uint64_t inst_ticks;  /* running + pending, summed over ticks */
	uint32_t ups, downs, stuck_removed;
};

static void
pool_promote(struct pool *c, uint64_t now_ns)
{
	uint32_t j = 0;

	for (uint32_t i = 0; i < c->nb_pending; i++) {
		if (c->ready_ns[i] <= now_ns) {
			c->running++;
			continue;
		}
		c->asked_ns[j] = c->asked_ns[i];
		c->ready_ns[j] = c->ready_ns[i];
		j++;
	}
	c->nb_pending = j;
}

static void
pool_apply(struct pool *c, const struct lb_scale_guard_decision *d,
	   uint64_t now_ns)
{
	uint32_t k = d->count;

	switch (d->action) {
	case LB_SG_UP:
		c->ups++;
		while (k-- > 0 && c->nb_pending < POOL_MAX) {
			c->launched++;
			c->asked_ns[c->nb_pending] = now_ns;
			c->ready_ns[c->nb_pending] =
				c->launched % STUCK_EVERY == 0
					? NEVER
					: now_ns + BOOT_NS;
			c->nb_pending++;
		}
		break;
	case LB_SG_DOWN:
		/* Cancel the newest launches first, then drain running. */
		c->downs++;
		for (; k > 0 && c->nb_pending > 0; k--)
			c->nb_pending--;
		c->running -= k < c->running ? k : c->running;
		break;
	case LB_SG_REMOVE_PENDING:
		c->stuck_removed++;
		memmove(&c->asked_ns[0], &c->asked_ns[1],
			(c->nb_pending - 1) * sizeof(c->asked_ns[0]));
		memmove(&c->ready_ns[0], &c->ready_ns[1],
			(c->nb_pending - 1) * sizeof(c->ready_ns[0]));
		c->nb_pending--;
		break;
	case LB_SG_NONE:
		break;
	}
}

static uint32_t
pool_stuck(const struct pool *c)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < c->nb_pending; i++)
		n += c->ready_ns[i] == NEVER;
	return n;
}

static int
pool_tick(struct pool *c, uint64_t now_ns, double desired, double need,
	  struct lb_scale_guard_decision *d)
{
	struct lb_scale_guard_input in = {
		.now_ns = now_ns,
		.desired = desired,
	};

	pool_promote(c, now_ns);
	in.running = c->running;
	in.pending = c->nb_pending;
	in.oldest_pending_ns = c->nb_pending > 0 ? c->asked_ns[0] : 0;
	if (lb_scale_guard_decide(c->g, &in, d) != 0)
		return -1;
	pool_apply(c, d, now_ns);
	if ((double)c->running < need)
		c->short_ticks++;
	c->inst_ticks += c->running + c->nb_pending;
	return 0;
}

/* True instance need per minute: a surge in the middle. */
static double
need_at(int minute)
{
	return minute < 5 ? 4.0 : minute < 10 ? 8.0 : 3.0;
}

int
lb_sim_scale_guard(FILE *out)
{
	struct lb_scale_guard_params ps, pg;
	struct pool s = {.running = 4}, g = {.running = 4};
	struct lb_xoshiro x;
	struct lb_rng rng;
	int rc = 1;

	lb_xoshiro_seed(&x, 2012);
	rng = lb_rng_xoshiro(&x);
	lb_scale_guard_params_default(&ps);
	ps.min_instances = 1;
	ps.max_instances = 10;
	lb_scale_guard_params_recommended(&pg);
	pg.max_instances = 10;
	s.g = lb_scale_guard_create(&ps);
	g.g = lb_scale_guard_create(&pg);
	if (s.g == NULL || g.g == NULL)
		goto out;

	fprintf(out,
		"Raw desired = need x (1 +/- 15%% noise) every 5 s for "
		"%d min; min 1, max 10.\n"
		"Instances boot in %llu s, but one in %d never becomes "
		"healthy.\n"
		"seed: bounds only. guarded: "
		"lb_scale_guard_params_recommended().\n"
		"Per minute: instances at its end (running+pending), "
		"actions, guarded's top reason.\n",
		NB_MIN, (unsigned long long)(BOOT_NS / LB_SG_NS_PER_S),
		STUCK_EVERY);
	fprintf(out, "min need raw-range | seed: inst  up dn | guarded: inst "
		     " up dn  mostly\n");
	for (int m = 0; m < NB_MIN; m++) {
		uint32_t su = s.ups, sd = s.downs, gu = g.ups, gd = g.downs;
		uint32_t why[LB_SG_R_COUNT] = {0};
		double lo = 1e9, hi = 0.0, need = need_at(m);
		int top = 0;

		for (int t = 0; t < TICKS_PER_MIN; t++) {
			uint64_t now =
				(uint64_t)(m * TICKS_PER_MIN + t) * TICK_NS;
			double raw = need * (0.85 + 0.3 * lb_rng_unit(&rng));
			struct lb_scale_guard_decision d;

			lo = raw < lo ? raw : lo;
			hi = raw > hi ? raw : hi;
			if (pool_tick(&s, now, raw, need, &d) != 0 ||
			    pool_tick(&g, now, raw, need, &d) != 0)
				goto out;
			why[d.reason]++;
		}
		for (int r = 1; r < LB_SG_R_COUNT; r++)
			if (why[r] > why[top])
				top = r;
		fprintf(out,
			"%3d %4.0f %4.1f-%-4.1f | %5u+%u %3u %2u | "
			"%8u+%u %3u %2u  %s\n",
			m, need, lo, hi, s.running, s.nb_pending, s.ups - su,
			s.downs - sd, g.running, g.nb_pending, g.ups - gu,
			g.downs - gd, lb_scale_guard_reason_name(top));
	}
	fprintf(out,
		"total actions     seed: %u up, %u down; guarded: %u "
		"up, %u down\n",
		s.ups, s.downs, g.ups, g.downs);
	fprintf(out, "instances asked   seed: %u; guarded: %u\n", s.launched,
		g.launched);
	fprintf(out,
		"never healthy     seed: %u (%u left pending); "
		"guarded: %u, %u removed after %llu s\n",
		s.launched / STUCK_EVERY, pool_stuck(&s),
		g.launched / STUCK_EVERY, g.stuck_removed,
		(unsigned long long)(pg.startup_timeout_ns / LB_SG_NS_PER_S));
	fprintf(out,
		"instance-minutes  seed: %.0f; guarded: %.0f (the cost "
		"of the 300 s down window)\n",
		s.inst_ticks / (double)TICKS_PER_MIN,
		g.inst_ticks / (double)TICKS_PER_MIN);
	fprintf(out, "running < need    seed: %u s; guarded: %u s\n",
		s.short_ticks * 5, g.short_ticks * 5);
	rc = 0;
out:
	lb_scale_guard_free(s.g);
	lb_scale_guard_free(g.g);
	return rc;
}
