/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <sys/random.h>

#include "lb/seed.h"

int
lb_seed_random(uint64_t *out)
{
	uint8_t *p = (uint8_t *)out;
	size_t got = 0;

	/* Up to 256 bytes come whole once the pool is ready; a signal can
	 * still cut the call short. */
	while (got < sizeof(*out)) {
		ssize_t n = getrandom(p + got, sizeof(*out) - got, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		got += (size_t)n;
	}
	return 0;
}

int
lb_seeds_draw(struct lb_seeds *s)
{
	int rc;

	if (!s->hash_set) {
		rc = lb_seed_random(&s->hash);
		if (rc != 0)
			return rc;
	}
	if (!s->rng_set) {
		rc = lb_seed_random(&s->rng);
		if (rc != 0)
			return rc;
	}
	return 0;
}
