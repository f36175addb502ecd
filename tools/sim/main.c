/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-sim: runs the policy core against simulated clusters and prints the
 * decisions it made, so a user can see each policy act without hardware.
 */
#include <stdio.h>
#include <string.h>

#include "sim_list.h"

#define LB_SIM(n) int lb_sim_##n(FILE *out);
LB_SIM_LIST
#undef LB_SIM

static const struct {
	const char *name;
	int (*run)(FILE *out);
} sims[] = {
#define LB_SIM(n) { #n, lb_sim_##n },
	LB_SIM_LIST
#undef LB_SIM
};

static const size_t nb_sims = sizeof(sims) / sizeof(sims[0]);

static void
usage(FILE *f)
{
	fprintf(f, "usage: lb-sim [--list] [SIMULATION...]\n"
		   "Runs the named simulations, or all of them:");
	for (size_t i = 0; i < nb_sims; i++)
		fprintf(f, " %s", sims[i].name);
	fprintf(f, "\n");
}

static int
run_one(const char *name)
{
	for (size_t i = 0; i < nb_sims; i++) {
		if (strcmp(sims[i].name, name) != 0)
			continue;
		printf("==== %s ====\n", name);
		if (sims[i].run(stdout) != 0) {
			fprintf(stderr, "lb-sim: simulation '%s' failed\n",
				name);
			return 1;
		}
		printf("\n");
		return 0;
	}
	fprintf(stderr, "lb-sim: unknown simulation '%s'\n", name);
	usage(stderr);
	return 2;
}

int
main(int argc, char **argv)
{
	int rc = 0;

	if (argc > 1 && (strcmp(argv[1], "-h") == 0 ||
			 strcmp(argv[1], "--help") == 0)) {
		usage(stdout);
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "--list") == 0) {
		for (size_t i = 0; i < nb_sims; i++)
			printf("%s\n", sims[i].name);
		return 0;
	}
	if (argc == 1) {
		for (size_t i = 0; i < nb_sims && rc == 0; i++)
			rc = run_one(sims[i].name);
		return rc;
	}
	for (int i = 1; i < argc && rc == 0; i++)
		rc = run_one(argv[i]);
	return rc;
}
