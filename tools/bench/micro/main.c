/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-bench: microbenchmarks of the policy core (ns per call), each against
 * a baseline measured in alternating rounds of the same run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_list.h"

#define LB_BENCH(n) void lb_bench_##n(FILE *out, unsigned int rounds);
LB_BENCH_LIST
#undef LB_BENCH

static const struct {
	const char *name;
	void (*run)(FILE *out, unsigned int rounds);
} benches[] = {
#define LB_BENCH(n) { #n, lb_bench_##n },
	LB_BENCH_LIST
#undef LB_BENCH
};

static const size_t nb_benches = sizeof(benches) / sizeof(benches[0]);

int
main(int argc, char **argv)
{
	unsigned int rounds = 11;
	int first = 1, ran = 0;

	if (argc > 2 && strcmp(argv[1], "--rounds") == 0) {
		char *end;
		long v = strtol(argv[2], &end, 10);

		if (*end != '\0' || v < 1 || v > 64) {
			fprintf(stderr, "lb-bench: --rounds takes 1..64\n");
			return 2;
		}
		rounds = (unsigned int)v;
		first = 3;
	}
	for (size_t i = 0; i < nb_benches; i++) {
		int wanted = first >= argc;

		for (int j = first; j < argc; j++)
			wanted |= strcmp(argv[j], benches[i].name) == 0;
		if (!wanted)
			continue;
		benches[i].run(stdout, rounds);
		ran++;
	}
	if (ran == 0) {
		fprintf(stderr, "usage: lb-bench [--rounds N] [NAME...]; "
				"available:");
		for (size_t i = 0; i < nb_benches; i++)
			fprintf(stderr, " %s", benches[i].name);
		fprintf(stderr, "\n");
		return 2;
	}
	return 0;
}
