/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lb/maglev.h"

/* Two independent hashes of the backend key give each backend its
 * permutation (offset, skip) as in section 3.4 of the paper; the seeds only
 * need to differ. */
#define SEED_OFFSET 0x6a09e667f3bcc908ULL
#define SEED_SKIP 0xbb67ae8584caa73bULL

static uint64_t
mix64(uint64_t x, uint64_t seed)
{
	x ^= seed;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

int
lb_maglev_is_prime(uint32_t n)
{
	if (n < 2)
		return 0;
	if (n % 2 == 0)
		return n == 2;
	for (uint32_t d = 3; (uint64_t)d * d <= n; d += 2)
		if (n % d == 0)
			return 0;
	return 1;
}

size_t
lb_maglev_mem_size(uint32_t size)
{
	return sizeof(struct lb_maglev) + (size_t)size * sizeof(uint32_t);
}

int
lb_maglev_init(struct lb_maglev *m, uint32_t size)
{
	if (m == NULL || size < 3 || size > LB_MAGLEV_MAX_SIZE ||
	    !lb_maglev_is_prime(size))
		return -EINVAL;
	m->size = size;
	m->nb_be = 0;
	for (uint32_t i = 0; i < size; i++)
		m->entry[i] = LB_MAGLEV_NONE;
	return 0;
}

struct lb_maglev *
lb_maglev_create(uint32_t size)
{
	struct lb_maglev *m;

	if (size < 3 || size > LB_MAGLEV_MAX_SIZE ||
	    !lb_maglev_is_prime(size)) {
		errno = EINVAL;
		return NULL;
	}
	m = malloc(lb_maglev_mem_size(size));
	if (m == NULL)
		return NULL;
	lb_maglev_init(m, size);
	return m;
}

void
lb_maglev_free(struct lb_maglev *m)
{
	free(m);
}

struct perm {
	uint32_t offset;
	uint32_t skip;
	uint32_t next;   /* position in this backend's permutation */
	uint64_t credit; /* accumulated weight, spent weight_max per slot */
};

static int
has_duplicate_keys(const struct lb_maglev_be *be, uint32_t n)
{
	/* Configuration-time check; backend sets are small. */
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = i + 1; j < n; j++)
			if (be[i].key == be[j].key)
				return 1;
	return 0;
}

int
lb_maglev_build(struct lb_maglev *m, const struct lb_maglev_be *be,
		uint32_t n)
{
	uint32_t size, filled = 0;
	uint64_t wmax = 0;
	struct perm *p;

	if (m == NULL || (n > 0 && be == NULL) || n >= m->size)
		return -EINVAL;
	if (has_duplicate_keys(be, n))
		return -EINVAL;
	size = m->size;
	for (uint32_t i = 0; i < size; i++)
		m->entry[i] = LB_MAGLEV_NONE;
	m->nb_be = n;
	for (uint32_t i = 0; i < n; i++)
		if (be[i].weight > wmax)
			wmax = be[i].weight;
	if (wmax == 0)
		return 0;

	p = calloc(n, sizeof(*p));
	if (p == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		p[i].offset = mix64(be[i].key, SEED_OFFSET) % size;
		p[i].skip = mix64(be[i].key, SEED_SKIP) % (size - 1) + 1;
	}

	/*
	 * The paper's population loop, weighted: every pass adds weight_i to
	 * each backend's credit and lets it claim one slot per weight_max of
	 * credit. The heaviest backend claims one slot per pass, exactly as
	 * in the unweighted algorithm; lighter ones claim proportionally
	 * fewer, so slot counts follow the weights while each backend still
	 * walks its own permutation (which keeps disruption minimal).
	 */
	while (filled < size) {
		for (uint32_t i = 0; i < n && filled < size; i++) {
			if (be[i].weight == 0)
				continue;
			p[i].credit += be[i].weight;
			while (p[i].credit >= wmax && filled < size) {
				uint32_t c;

				p[i].credit -= wmax;
				/* Since size is prime and 0 < skip < size,
				 * the permutation visits every slot, so a
				 * free one is always found. */
				do {
					c = (uint32_t)((p[i].offset +
							(uint64_t)p[i].next *
								p[i].skip) %
						       size);
					p[i].next++;
				} while (m->entry[c] != LB_MAGLEV_NONE);
				m->entry[c] = i;
				filled++;
			}
		}
	}
	free(p);
	return 0;
}
