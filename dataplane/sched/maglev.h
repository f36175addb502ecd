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

/**
 * A build of a table in steps (lb_maglev_builder_step()): the same table
 * as lb_maglev_build(), made a bounded amount of work at a time, so that
 * a worker can build one between bursts.
 */
struct lb_maglev_builder;

/**
 * Prepares the build of @p m from @p be[0..n-1] (copied); @p m is not
 * touched before the first step, and must outlive the builder.
 * @return the builder, or NULL with errno EINVAL (as lb_maglev_build())
 * or ENOMEM.
 */
struct lb_maglev_builder *
lb_maglev_builder_create(struct lb_maglev *m, const struct lb_maglev_be *be,
			 uint32_t n);

/**
 * Does about @p budget units of the build (a unit is an entry cleared or
 * one probe of a permutation; the slot being claimed is always finished).
 * @return 1 while work remains, 0 once the table is complete.
 */
int lb_maglev_builder_step(struct lb_maglev_builder *b, uint32_t budget);

void lb_maglev_builder_free(struct lb_maglev_builder *b);

/** Backend index for a flow hash, or LB_MAGLEV_NONE. */
static inline uint32_t
lb_maglev_lookup(const struct lb_maglev *m, uint64_t hash)
{
	return m->entry[hash % m->size];
}

/** 1 if @p n is prime, else 0. */
int lb_maglev_is_prime(uint32_t n);

#endif /* LB_MAGLEV_H */
