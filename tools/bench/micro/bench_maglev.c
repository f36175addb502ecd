/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Maglev lookup against the cheapest possible spread (hash modulo the
 * backend count), both over the same pseudo-random flow hashes.
 */
#include <stdio.h>

#include "bench.h"
#include "maglev.h"
#include "lb/rng.h"

#define NB_BE 16
#define NB_HASH 4096

struct arg {
	const struct lb_maglev *m;
	uint64_t hash[NB_HASH];
};

static void
run_lookup(void *p, uint64_t iters)
{
	struct arg *a = p;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++)
		acc += lb_maglev_lookup(a->m, a->hash[i % NB_HASH]);
	lb_bench_sink = acc;
}

static void
run_modulo(void *p, uint64_t iters)
{
	struct arg *a = p;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++)
		acc += a->hash[i % NB_HASH] % NB_BE;
	lb_bench_sink = acc;
}

void
lb_bench_maglev(FILE *out, unsigned int rounds)
{
	static struct arg arg;
	struct lb_maglev_be be[NB_BE];
	struct lb_xoshiro x;
	struct lb_maglev *m = lb_maglev_create(LB_MAGLEV_DEFAULT_SIZE);

	if (m == NULL)
		return;
	for (uint32_t i = 0; i < NB_BE; i++)
		be[i] = (struct lb_maglev_be){ 0x0a000001ULL + i, 1 + i % 3 };
	if (lb_maglev_build(m, be, NB_BE) != 0)
		goto out;
	lb_xoshiro_seed(&x, 42);
	for (int i = 0; i < NB_HASH; i++)
		arg.hash[i] = lb_xoshiro_next(&x);
	arg.m = m;
	{
		const struct lb_bench_case lookup = {
			"maglev lookup (65537, 16 be)", run_lookup, &arg
		};
		const struct lb_bench_case modulo = { "hash % n", run_modulo,
						      &arg };

		lb_bench_pair(out, &lookup, &modulo, 2000000, rounds);
	}
out:
	lb_maglev_free(m);
}
