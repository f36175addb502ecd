/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-sim inflight: the requests-in-flight autoscaler on the seed's nine
 * task iterations, then in a closed loop with a booting cluster.
 */
#include <stdio.h>
#include <string.h>

#include "inflight.h"

/* The seed's example: token map sizes and the pool as it states it. */
static const struct {
	uint32_t in_flight, running, pending;
	enum lb_inflight_action action;
} seed[] = {
	{0, 0, 0, LB_INFLIGHT_NOOP}, {0, 0, 0, LB_INFLIGHT_NOOP},
	{5, 0, 0, LB_INFLIGHT_UP},   {7, 0, 1, LB_INFLIGHT_NOOP},
	{4, 1, 0, LB_INFLIGHT_UP},   {5, 2, 0, LB_INFLIGHT_NOOP},
	{3, 2, 0, LB_INFLIGHT_NOOP}, {1, 2, 0, LB_INFLIGHT_DOWN},
	{0, 1, 0, LB_INFLIGHT_NOOP},
};

static int
replay_seed(FILE *out)
{
	struct lb_inflight_params p;
	struct lb_inflight_decision d;
	struct lb_inflight *ifl;
	uint32_t prev = 0;
	int bad = 0;

	lb_inflight_params_default(&p);
	ifl = lb_inflight_create(&p);
	if (ifl == NULL)
		return -1;
	fprintf(out,
		"Seed example: queue_length_per_node %u, "
		"rounds_to_average %u, min %u, max %u\n",
		p.queue_length_per_node, p.rounds_to_average, p.min_instances,
		p.max_instances);
	fprintf(out, "iter samples  avg  run pend  n*q (n-1)*q  req  "
		     "decision\n");
	for (size_t i = 0; i < sizeof(seed) / sizeof(seed[0]); i++) {
		char win[16], avg[8];

		if (lb_inflight_tick(ifl, seed[i].in_flight, seed[i].running,
				     seed[i].pending, &d) != 0) {
			lb_inflight_free(ifl);
			return -1;
		}
		if (d.nb_samples == 1)
			snprintf(win, sizeof(win), "%u", d.in_flight);
		else
			snprintf(win, sizeof(win), "%u,%u", prev, d.in_flight);
		snprintf(avg, sizeof(avg), "%.1f", d.average);
		prev = d.in_flight;
		fprintf(out, "%4zu %-7s %4s %4u %4u %4llu %9lld %4u  %s", i + 1,
			win,
			d.reason == LB_INFLIGHT_R_WINDOW_FILLING ? "-" : avg,
			d.running, d.pending, (unsigned long long)d.capacity,
			(long long)d.capacity_less_one, d.required,
			lb_inflight_action_name(d.action));
		if (d.count > 0)
			fprintf(out, " %u", d.count);
		fprintf(out, " (%s)\n", lb_inflight_reason_name(d.reason));
		if (d.action != seed[i].action)
			bad = 1;
	}
	fprintf(out,
		"avg = window sum / window size; req = ceil(avg/q). "
		"%s\n",
		bad ? "MISMATCH with the seed's decisions!"
		    : "All nine decisions match the seed.");
	lb_inflight_free(ifl);
	return bad ? -1 : 0;
}

/* A pool whose new instances serve only after BOOT_TICKS ticks. */
#define BOOT_TICKS 2
#define NB_TICKS 16

struct pool {
	uint32_t running;
	uint32_t booting[BOOT_TICKS + 1]; /* by ticks left */
	uint32_t actions;
};

static uint32_t
pool_pending(const struct pool *c)
{
	uint32_t n = 0;

	for (int i = 0; i <= BOOT_TICKS; i++)
		n += c->booting[i];
	return n;
}

static void
pool_advance(struct pool *c)
{
	c->running += c->booting[0];
	memmove(&c->booting[0], &c->booting[1],
		BOOT_TICKS * sizeof(c->booting[0]));
	c->booting[BOOT_TICKS] = 0;
}

static int
pool_step(struct lb_inflight *ifl, struct pool *c, uint32_t in_flight,
	  char *buf, size_t len)
{
	struct lb_inflight_decision d;

	pool_advance(c);
	if (lb_inflight_tick(ifl, in_flight, c->running, pool_pending(c), &d) !=
	    0)
		return -1;
	if (d.action == LB_INFLIGHT_NOOP)
		snprintf(buf, len, "%u+%u", d.running, d.pending);
	else
		snprintf(buf, len, "%u+%u %c%u", d.running, d.pending,
			 d.action == LB_INFLIGHT_UP ? '+' : '-', d.count);
	if (d.action == LB_INFLIGHT_UP) {
		c->booting[BOOT_TICKS - 1] += d.count;
		c->actions++;
	} else if (d.action == LB_INFLIGHT_DOWN) {
		c->running -= d.count;
		c->actions++;
	}
	return 0;
}

static int
closed_loop(FILE *out)
{
	static const uint32_t demand[NB_TICKS] = {
		2, 4, 9, 13, 15, 15, 14, 14, 12, 8, 5, 3, 2, 1, 0, 0,
	};
	struct lb_inflight_params p;
	struct lb_inflight *fixed, *band;
	struct pool a = {.running = 1}, b = {.running = 1};
	int rc = -1;

	lb_inflight_params_default(&p);
	p.max_instances = 8;
	fixed = lb_inflight_create(&p);
	p.step = LB_INFLIGHT_STEP_TO_BAND;
	band = lb_inflight_create(&p);
	if (fixed == NULL || band == NULL)
		goto out;
	fprintf(out,
		"\nClosed loop (max %u): a new instance serves %d ticks "
		"after it is asked for.\n"
		"Cells: running+pending at the tick, then the action.\n",
		p.max_instances, BOOT_TICKS);
	fprintf(out, "tick in-flight  seed (step 1)   step to band\n");
	for (int t = 0; t < NB_TICKS; t++) {
		char ca[24], cb[24];

		if (pool_step(fixed, &a, demand[t], ca, sizeof(ca)) != 0 ||
		    pool_step(band, &b, demand[t], cb, sizeof(cb)) != 0)
			goto out;
		fprintf(out, "%4d %9u  %-14s  %s\n", t + 1, demand[t], ca, cb);
	}
	fprintf(out, "actions: seed %u, step to band %u\n", a.actions,
		b.actions);
	rc = 0;
out:
	lb_inflight_free(fixed);
	lb_inflight_free(band);
	return rc;
}

int
lb_sim_inflight(FILE *out)
{
	if (replay_seed(out) != 0)
		return 1;
	return closed_loop(out) != 0 ? 1 : 0;
}
