/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "seed.h"

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
lb_seed_parse(const char *s, uint64_t *out)
{
	char *end;
	uint64_t v;

	/* strtoull() takes a sign and wraps it: a seed has none. */
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || (*end != '\0' && strcmp(end, "\n") != 0))
		return -EINVAL;
	*out = v;
	return 0;
}

int
lb_seed_read_file(const char *path, uint64_t *out)
{
	char buf[64];
	size_t n;
	FILE *f = fopen(path, "re");
	int rc;

	if (f == NULL)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	rc = ferror(f) ? -EIO : 0;
	if (rc == 0 && !feof(f))
		rc = -EINVAL; /* longer than any number */
	fclose(f);
	if (rc != 0)
		return rc;
	buf[n] = '\0';
	if (strlen(buf) != n)
		return -EINVAL;
	return lb_seed_parse(buf, out);
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
