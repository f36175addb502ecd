/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flow lookups that hit, in a table of 1M flows (about 100 MB: index slots
 * and entries far beyond the caches, so each lookup pays for memory) against
 * the same lookups in a table of 1k flows that stays in the L1/L2 caches.
 * The keys are random and probed in random order, so neither the index nor
 * the entries are walked sequentially. A second pair adds lb_flow_touch(),
 * the rest of the per-packet work on a flow.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "lb/flow_table.h"
#include "lb/rng.h"

#define BIG (1u << 20)
#define SMALL 1024u
/* Probe sequence: 16 MB of keys read in order (the prefetcher hides
 * them), pointing at random flows. */
#define NB_PROBE (1u << 20)

struct arg {
	struct lb_flow_table *t;
	struct lb_flow_key *probe; /* NB_PROBE keys */
	uint64_t now;
};

static void
run_lookup(void *p, uint64_t iters)
{
	struct arg *a = p;
	uint64_t acc = 0;
	enum lb_flow_dir dir;

	for (uint64_t i = 0; i < iters; i++)
		acc += lb_flow_lookup(a->t, &a->probe[i % NB_PROBE], &dir) +
		       dir;
	lb_bench_sink = acc;
}

static void
run_lookup_touch(void *p, uint64_t iters)
{
	struct arg *a = p;
	uint64_t acc = 0;
	enum lb_flow_dir dir;

	for (uint64_t i = 0; i < iters; i++) {
		uint32_t idx = lb_flow_lookup(a->t, &a->probe[i % NB_PROBE],
					      &dir);

		acc += (uint64_t)lb_flow_touch(a->t, idx, dir, 0x10,
					       a->now + i);
	}
	a->now += iters;
	lb_bench_sink = acc;
}

static void
random_key(struct lb_rng *r, struct lb_flow_key *k)
{
	uint64_t x = lb_rng_u64(r);

	lb_flow_key_set(k, (uint32_t)x, 0x0a000001u, (uint16_t)(x >> 32),
			(uint16_t)(x >> 48), 6);
}

/* Fills @p t with @p n random flows; @p probe gets NB_PROBE of their keys,
 * client or backend side, in random order. */
static int
fill(struct lb_flow_table *t, uint32_t n, struct lb_flow_key *probe,
     struct lb_rng *r)
{
	struct lb_flow_key o, b;
	uint32_t done = 0;

	while (done < n) {
		random_key(r, &o);
		random_key(r, &b);
		if (lb_flow_insert(t, &o, &b, 0, done, 0) >= 0)
			done++;
	}
	for (uint32_t i = 0; i < NB_PROBE; i++) {
		uint32_t idx = (uint32_t)lb_rng_below(r, n);

		probe[i] = lb_flow_entries(t)[idx].key[lb_rng_u64(r) & 1];
	}
	return 0;
}

void
lb_bench_flow_table(FILE *out, unsigned int rounds)
{
	struct lb_xoshiro x;
	struct lb_rng r;
	struct arg big = { 0 }, small = { 0 };

	lb_xoshiro_seed(&x, 7);
	r = lb_rng_xoshiro(&x);
	big.t = lb_flow_table_create(BIG, NULL, lb_rng_u64(&r));
	small.t = lb_flow_table_create(SMALL, NULL, lb_rng_u64(&r));
	big.probe = malloc(NB_PROBE * sizeof(*big.probe));
	small.probe = malloc(NB_PROBE * sizeof(*small.probe));
	if (big.t == NULL || small.t == NULL || big.probe == NULL ||
	    small.probe == NULL) {
		fprintf(out, "flow_table: out of memory\n");
		goto out;
	}
	fill(big.t, BIG, big.probe, &r);
	fill(small.t, SMALL, small.probe, &r);
	{
		const struct lb_bench_case hit_big = {
			"flow lookup hit (1M flows)", run_lookup, &big
		};
		const struct lb_bench_case hit_small = {
			"lookup hit (1k flows)", run_lookup, &small
		};
		const struct lb_bench_case touch_big = {
			"flow lookup+touch (1M flows)", run_lookup_touch, &big
		};
		const struct lb_bench_case touch_small = {
			"lookup+touch (1k flows)", run_lookup_touch, &small
		};

		lb_bench_pair(out, &hit_big, &hit_small, 1000000, rounds);
		lb_bench_pair(out, &touch_big, &touch_small, 1000000, rounds);
	}
out:
	free(big.probe);
	free(small.probe);
	lb_flow_table_free(big.t);
	lb_flow_table_free(small.t);
}
