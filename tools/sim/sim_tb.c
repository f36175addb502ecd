/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two worker cores with skewed, shifting demand share one global limit
 * through their local buckets (hierarchical token buckets, US 11,616,725).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include "lb/tb.h"

#define NB_CORES 2
#define NB_IV 8
#define IV_NS 100000000ULL /* 100 ms */
#define KEY 0x5e1ULL	   /* the throttle key: one service */
#define CAPACITY 200
#define RATE 1000 /* tokens/s: 100 per interval */

/* Requests per interval: core 0 is hot first, then core 1 takes over. */
static const uint64_t demand[NB_CORES][NB_IV] = {
	{ 60, 60, 120, 120, 150, 40, 20, 20 },
	{ 10, 10, 10, 60, 60, 80, 80, 80 },
};

struct core {
	struct lb_tb_table *tab;
	struct lb_tb_counters prev;
	uint64_t batch;
	uint64_t next; /* next request of this interval */
};

static uint64_t
req_time(unsigned int iv, uint64_t j, uint64_t d)
{
	return iv * IV_NS + j * IV_NS / d;
}

static void
pair(FILE *out, uint64_t a, uint64_t b)
{
	fprintf(out, " %4llu%4llu", (unsigned long long)a,
		(unsigned long long)b);
}

static uint64_t
held(const struct core *c)
{
	const struct lb_tb_local *l = lb_tb_table_lookup(c->tab, KEY);

	return l != NULL ? l->tokens : 0;
}

static void
counters(const struct core *c, struct lb_tb_counters *out)
{
	const struct lb_tb_local *l = lb_tb_table_lookup(c->tab, KEY);

	*out = l != NULL ? l->cnt : (struct lb_tb_counters){ 0 };
}

/*
 * One interval: both cores' evenly spaced requests merged in time order,
 * each taking one token.
 */
static int
run_interval(struct core *core, struct lb_tb_global *g,
	     const struct lb_tb_local_conf *lc, unsigned int iv)
{
	const struct lb_tb_local *l;
	int rc;

	for (int c = 0; c < NB_CORES; c++) {
		core[c].next = 0;
		core[c].batch = 0;
	}
	for (;;) {
		int pick = -1;
		uint64_t t = UINT64_MAX;

		for (int c = 0; c < NB_CORES; c++) {
			uint64_t d = demand[c][iv], tc;

			if (core[c].next == d)
				continue;
			tc = req_time(iv, core[c].next, d);
			if (tc < t) {
				t = tc;
				pick = c;
			}
		}
		if (pick < 0)
			break;
		rc = lb_tb_table_take(core[pick].tab, KEY, g, 1, t);
		if (rc != 0 && rc != -EAGAIN)
			return rc;
		if (core[pick].next++ == 0) {
			l = lb_tb_table_lookup(core[pick].tab, KEY);
			core[pick].batch = lb_tb_local_batch(l, lc, CAPACITY);
		}
	}
	return 0;
}

/* One row of the table: what each core did in interval @p iv. */
static void
print_interval(FILE *out, struct core *core, const struct lb_tb_global *g,
	       unsigned int iv)
{
	struct lb_tb_counters now[NB_CORES];

	for (int c = 0; c < NB_CORES; c++)
		counters(&core[c], &now[c]);
	fprintf(out, " %2u", iv);
	pair(out, demand[0][iv], demand[1][iv]);
	pair(out, now[0].admitted - core[0].prev.admitted,
	     now[1].admitted - core[1].prev.admitted);
	pair(out, core[0].batch, core[1].batch);
	pair(out, now[0].borrows - core[0].prev.borrows,
	     now[1].borrows - core[1].prev.borrows);
	pair(out, now[0].throttled - core[0].prev.throttled,
	     now[1].throttled - core[1].prev.throttled);
	pair(out, now[0].neg_hits - core[0].prev.neg_hits,
	     now[1].neg_hits - core[1].prev.neg_hits);
	pair(out, held(&core[0]), held(&core[1]));
	fprintf(out, " %7llu\n",
		(unsigned long long)lb_tb_global_avail(g, (iv + 1) * IV_NS - 1));
	for (int c = 0; c < NB_CORES; c++)
		core[c].prev = now[c];
}

int
lb_sim_tb(FILE *out)
{
	struct lb_tb_global_conf gc = { .capacity = CAPACITY, .rate = RATE };
	struct lb_tb_local_conf lc;
	struct lb_tb_global g;
	struct core core[NB_CORES] = { 0 };
	uint64_t admitted = 0, unspent = 0, bound;
	const struct lb_tb_local *l;
	int rc = 0;

	lb_tb_local_conf_default(&lc);
	if (lb_tb_global_init(&g, &gc, 0) != 0)
		return 1;
	for (int c = 0; c < NB_CORES; c++) {
		core[c].tab = lb_tb_table_create(16, &lc);
		if (core[c].tab == NULL) {
			rc = 1;
			goto out;
		}
	}
	fprintf(out,
		"One throttle key, one global bucket: %d tokens burst, %d "
		"tokens/s (%d per\n100 ms interval iv), starts full. Two "
		"cores, one request = one token.\nEach core's local bucket "
		"borrows batches = weighted average of its last %u\n"
		"intervals' served demand (claim 12); a refused core stays "
		"throttled until its\ninterval ends (negative cache).\n\n",
		CAPACITY, RATE, RATE / 10, lc.nb_intervals);
	fprintf(out, " iv    demand admitted    batch  borrows throttled "
		     "neg hits    held  global\n"
		     "      c0  c1   c0  c1   c0  c1   c0  c1   c0  c1   "
		     "c0  c1   c0  c1    left\n");
	for (unsigned int iv = 0; iv < NB_IV; iv++) {
		rc = run_interval(core, &g, &lc, iv);
		if (rc != 0)
			goto out;
		print_interval(out, core, &g, iv);
	}
	fprintf(out, "batch: what a borrow asks for in that interval; neg "
		     "hits: throttled without\nasking the global bucket; "
		     "held: borrowed, not yet spent.\n");
	/* Show one batch worked out from its history. */
	l = lb_tb_table_lookup(core[1].tab, KEY);
	fprintf(out,
		"c1's batch in iv %d = (1x%llu + 2x%llu + 3x%llu + 4x%llu) "
		"/ 10 = %llu\n(its served demand in iv %d..%d, rounded up)\n",
		NB_IV - 1, (unsigned long long)l->hist[3],
		(unsigned long long)l->hist[2],
		(unsigned long long)l->hist[1],
		(unsigned long long)l->hist[0],
		(unsigned long long)lb_tb_wavg(l->hist, 4), NB_IV - 5,
		NB_IV - 2);
	for (int c = 0; c < NB_CORES; c++) {
		l = lb_tb_table_lookup(core[c].tab, KEY);
		admitted += l->cnt.admitted;
		unspent += l->tokens;
	}
	bound = CAPACITY + (uint64_t)RATE * NB_IV * IV_NS / 1000000000ULL;
	fprintf(out,
		"Limit: admitted %llu + held %llu = %llu <= capacity + rate x "
		"elapsed = %llu: %s\n",
		(unsigned long long)admitted, (unsigned long long)unspent,
		(unsigned long long)(admitted + unspent),
		(unsigned long long)bound,
		admitted + unspent <= bound ? "holds" : "VIOLATED");
	if (admitted + unspent > bound)
		rc = 1;
out:
	for (int c = 0; c < NB_CORES; c++)
		lb_tb_table_free(core[c].tab);
	return rc;
}
