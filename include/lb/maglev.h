/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_MAGLEV_H
#define LB_MAGLEV_H

/**
 * @file
 * Weighted Maglev consistent hashing (Eisenbud et al., "Maglev: A Fast and
 * Reliable Software Network Load Balancer", NSDI 2016, section 3.4).
 *
 * The lookup table holds no pointers, so it can be built by the control
 * plane directly inside shared memory and read by every worker.
 */

#include <stddef.h>
#include <stdint.h>

/** Entry value of a table that has no backend with a non-zero weight. */
#define LB_MAGLEV_NONE UINT32_MAX
/** Default table size: prime, and > 100 x a few hundred backends. */
#define LB_MAGLEV_DEFAULT_SIZE 65537u
/** Largest accepted table size (a prime; 4 MiB of entries). */
#define LB_MAGLEV_MAX_SIZE 1048573u

struct lb_maglev_be {
	/** Stable identity of the backend (e.g. address and port). */
	uint64_t key;
	/** Relative weight; 0 takes the backend out of the table. */
	uint32_t weight;
};

struct lb_maglev {
	uint32_t size;   /**< number of entries, a prime */
	uint32_t nb_be;  /**< backends the table was last built from */
	uint32_t entry[]; /**< backend index for each slot */
};

/** Bytes needed for a table of @p size entries. */
size_t lb_maglev_mem_size(uint32_t size);

/**
 * Prepares @p mem (lb_maglev_mem_size() bytes) as an empty table.
 * @return 0, or -EINVAL if @p size is not a prime in [3, LB_MAGLEV_MAX_SIZE].
 */
int lb_maglev_init(struct lb_maglev *m, uint32_t size);

/** Allocates and initialises a table; NULL with errno set on failure. */
struct lb_maglev *lb_maglev_create(uint32_t size);

void lb_maglev_free(struct lb_maglev *m);

/**
 * Fills the table from @p be[0..n-1]. Each backend claims slots in the
 * order of its own permutation; backend i takes weight_i turns for every
 * weight_max turns of the heaviest backend, so slot counts follow the
 * weights. Allocates scratch memory (configuration time only).
 * @return 0, -EINVAL on bad arguments or duplicate keys, -ENOMEM.
 */
int lb_maglev_build(struct lb_maglev *m, const struct lb_maglev_be *be,
		    uint32_t n);

/** Backend index for a flow hash, or LB_MAGLEV_NONE. */
static inline uint32_t
lb_maglev_lookup(const struct lb_maglev *m, uint64_t hash)
{
	return m->entry[hash % m->size];
}

/** 1 if @p n is prime, else 0. */
int lb_maglev_is_prime(uint32_t n);

#endif /* LB_MAGLEV_H */
