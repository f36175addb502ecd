/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Weighted Maglev: slot shares for unequal weights, and how many flows
 * move when a backend leaves or joins.
 */
#include <stdio.h>

#include "maglev.h"

#define NB_BE 5

static const char *const names[NB_BE + 1] = {
	"10.0.1.1:80", "10.0.1.2:80", "10.0.1.3:80", "10.0.1.4:80",
	"10.0.1.5:80", "10.0.1.6:80",
};

static double
moved_share(const struct lb_maglev *a, const uint32_t *map_a,
	    const struct lb_maglev *b, const uint32_t *map_b)
{
	uint32_t moved = 0;

	for (uint32_t s = 0; s < a->size; s++)
		if (map_a[a->entry[s]] != map_b[b->entry[s]])
			moved++;
	return 100.0 * moved / a->size;
}

int
lb_sim_maglev(FILE *out)
{
	struct lb_maglev_be be[NB_BE + 1];
	static const uint32_t weights[NB_BE + 1] = { 1, 1, 1, 2, 5, 1 };
	uint32_t ident[NB_BE + 1], drop[NB_BE], cnt[NB_BE + 1] = { 0 };
	struct lb_maglev *a, *b;
	uint32_t wsum = 0;
	int rc = -1;

	a = lb_maglev_create(LB_MAGLEV_DEFAULT_SIZE);
	b = lb_maglev_create(LB_MAGLEV_DEFAULT_SIZE);
	if (a == NULL || b == NULL)
		goto out;
	for (uint32_t i = 0; i <= NB_BE; i++) {
		be[i] = (struct lb_maglev_be){ 0x0a000101ULL + i, weights[i] };
		ident[i] = i;
	}
	if (lb_maglev_build(a, be, NB_BE) != 0)
		goto out;
	for (uint32_t s = 0; s < a->size; s++)
		cnt[a->entry[s]]++;
	for (uint32_t i = 0; i < NB_BE; i++)
		wsum += weights[i];
	fprintf(out, "table of %u slots, %u backends\n", a->size, NB_BE);
	fprintf(out, "  %-12s %6s %8s %8s\n", "backend", "weight", "slots",
		"share");
	for (uint32_t i = 0; i < NB_BE; i++)
		fprintf(out, "  %-12s %6u %8u %7.2f%% (weight says %.2f%%)\n",
			names[i], weights[i], cnt[i], 100.0 * cnt[i] / a->size,
			100.0 * weights[i] / wsum);

	/* Remove backend 2: the survivors keep their indexes via drop[]. */
	{
		struct lb_maglev_be rest[NB_BE - 1];
		uint32_t k = 0;

		for (uint32_t i = 0; i < NB_BE; i++) {
			if (i == 2)
				continue;
			drop[k] = i;
			rest[k++] = be[i];
		}
		if (lb_maglev_build(b, rest, NB_BE - 1) != 0)
			goto out;
		fprintf(out, "remove %s (%.2f%% of slots): %.2f%% of flows "
			     "move\n",
			names[2], 100.0 * cnt[2] / a->size,
			moved_share(a, ident, b, drop));
	}
	/* Add a sixth backend of weight 1. */
	if (lb_maglev_build(b, be, NB_BE + 1) != 0)
		goto out;
	fprintf(out, "add %s (weight 1 of %u): %.2f%% of flows move\n",
		names[NB_BE], wsum + 1, moved_share(a, ident, b, ident));
	rc = 0;
out:
	lb_maglev_free(a);
	lb_maglev_free(b);
	return rc;
}
