/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdlib.h>
#include <time.h>

#include "bench.h"

volatile uint64_t lb_bench_sink;

#define MAX_ROUNDS 64

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static double
time_per_call(const struct lb_bench_case *c, uint64_t iters)
{
	uint64_t t0 = now_ns();

	c->fn(c->arg, iters);
	return (double)(now_ns() - t0) / (double)iters;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
median(double *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double
lb_bench_pair(FILE *out, const struct lb_bench_case *a,
	      const struct lb_bench_case *base, uint64_t iters,
	      unsigned int rounds)
{
	double med_a, ta[MAX_ROUNDS], tb[MAX_ROUNDS], ratio[MAX_ROUNDS];

	if (rounds > MAX_ROUNDS)
		rounds = MAX_ROUNDS;
	if (rounds == 0)
		rounds = 1;
	/* Warm caches and branch predictors before the first timed round. */
	a->fn(a->arg, iters / 10 + 1);
	base->fn(base->arg, iters / 10 + 1);
	for (unsigned int r = 0; r < rounds; r++) {
		/* Alternate the order so neither side always runs first. */
		if (r % 2) {
			tb[r] = time_per_call(base, iters);
			ta[r] = time_per_call(a, iters);
		} else {
			ta[r] = time_per_call(a, iters);
			tb[r] = time_per_call(base, iters);
		}
		ratio[r] = ta[r] / tb[r];
	}
	med_a = median(ta, rounds);
	fprintf(out, "%-34s %8.1f ns/call | baseline %-28s %8.1f ns/call | "
		     "ratio %.2f\n",
		a->name, med_a, base->name, median(tb, rounds),
		median(ratio, rounds));
	return med_a;
}
