/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_BENCH_H
#define LB_BENCH_H

/*
 * Microbenchmark harness. This host's vCPUs move between physical cores
 * every few seconds, which shifts absolute rates severalfold, so every
 * figure is paired with a baseline measured in alternating short rounds of
 * the same run and reported as a ratio as well as in ns per call.
 */

#include <stdint.h>
#include <stdio.h>

/** Runs the operation under test @p iters times. */
typedef void (*lb_bench_fn)(void *arg, uint64_t iters);

struct lb_bench_case {
	const char *name;
	lb_bench_fn fn;
	void *arg;
};

/** Written by benchmark bodies so the compiler keeps their work. */
extern volatile uint64_t lb_bench_sink;

/**
 * Alternates @p a and its baseline @p base for @p rounds rounds of
 * @p iters calls each and prints one line: median ns/call of each, and
 * the median of the per-round ratios a/base.
 * @return the median ns/call of @p a, for rates derived from it
 */
double lb_bench_pair(FILE *out, const struct lb_bench_case *a,
		   const struct lb_bench_case *base, uint64_t iters,
		   unsigned int rounds);

#endif /* LB_BENCH_H */
