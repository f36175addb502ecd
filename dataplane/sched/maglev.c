/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "maglev.h"

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

struct lb_maglev_builder {
	struct lb_maglev *m;
	uint32_t n;
	uint32_t cleared; /* entries set to LB_MAGLEV_NONE so far */
	uint32_t filled;  /* entries claimed */
	uint32_t cur;	  /* backend whose turn it is */
	bool credited;	  /* cur has had its weight for this turn */
	uint64_t wmax;
	uint32_t *weight;
	struct perm p[];
};

struct lb_maglev_builder *
lb_maglev_builder_create(struct lb_maglev *m, const struct lb_maglev_be *be,
			 uint32_t n)
{
	struct lb_maglev_builder *b;
	uint32_t size;

	if (m == NULL || (n > 0 && be == NULL) || n >= m->size ||
	    has_duplicate_keys(be, n)) {
		errno = EINVAL;
		return NULL;
	}
	size = m->size;
	b = calloc(1, sizeof(*b) +
			      (size_t)n * (sizeof(b->p[0]) + sizeof(uint32_t)));
	if (b == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	b->m = m;
	b->n = n;
	b->weight = (uint32_t *)&b->p[n];
	for (uint32_t i = 0; i < n; i++) {
		b->weight[i] = be[i].weight;
		if (be[i].weight > b->wmax)
			b->wmax = be[i].weight;
		b->p[i].offset = mix64(be[i].key, SEED_OFFSET) % size;
		b->p[i].skip = mix64(be[i].key, SEED_SKIP) % (size - 1) + 1;
	}
	return b;
}

void
lb_maglev_builder_free(struct lb_maglev_builder *b)
{
	free(b);
}

int
lb_maglev_builder_step(struct lb_maglev_builder *b, uint32_t budget)
{
	struct lb_maglev *m = b->m;
	uint32_t size = m->size;
	uint64_t work = 0;

	while (b->cleared < size) {
		if (work >= budget)
			return 1;
		m->entry[b->cleared++] = LB_MAGLEV_NONE;
		work++;
	}
	m->nb_be = b->n;
	if (b->wmax == 0)
		return 0;
	/*
	 * The paper's population loop, weighted: every pass adds weight_i to
	 * each backend's credit and lets it claim one slot per weight_max of
	 * credit. The heaviest backend claims one slot per pass, exactly as
	 * in the unweighted algorithm; lighter ones claim proportionally
	 * fewer, so slot counts follow the weights while each backend still
	 * walks its own permutation (which keeps disruption minimal). Where
	 * the loop stands (cur, credited) lives in @p b, so that it can stop
	 * after any claim and go on at the next step.
	 */
	while (b->filled < size) {
		struct perm *p = &b->p[b->cur];
		uint32_t c;

		if (work >= budget)
			return 1;
		if (!b->credited) {
			p->credit += b->weight[b->cur];
			b->credited = true;
		}
		if (p->credit < b->wmax) {
			b->cur = b->cur + 1 == b->n ? 0 : b->cur + 1;
			b->credited = false;
			continue;
		}
		p->credit -= b->wmax;
		/* Since size is prime and 0 < skip < size, the permutation
		 * visits every slot, so a free one is always found. */
		do {
			c = (uint32_t)((p->offset +
					(uint64_t)p->next * p->skip) %
				       size);
			p->next++;
			work++;
		} while (m->entry[c] != LB_MAGLEV_NONE);
		m->entry[c] = b->cur;
		b->filled++;
	}
	return 0;
}

int
lb_maglev_build(struct lb_maglev *m, const struct lb_maglev_be *be,
		uint32_t n)
{
	struct lb_maglev_builder *b = lb_maglev_builder_create(m, be, n);

	if (b == NULL)
		return -errno;
	while (lb_maglev_builder_step(b, UINT32_MAX) != 0)
		;
	lb_maglev_builder_free(b);
	return 0;
}
