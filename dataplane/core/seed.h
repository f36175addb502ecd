/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_SEED_H
#define LB_SEED_H

/**
 * @file
 * The two seeds of an lb-dataplane process, drawn from the kernel's
 * random pool (getrandom(2)) unless given.
 *
 * - @c hash keys the flow hash the schedulers pick with (`maglev` maps
 *   it to a backend). Every host of an ECMP group must use the same one
 *   for `maglev` to send a flow to the same backend whichever host gets
 *   it: the operator gives it to all of them (`--hash-seed`), as a
 *   shared secret. Without it each process draws its own, and clients
 *   cannot aim their flows at one backend by choosing their ports.
 * - @c rng seeds each worker's generator, from which come the per-worker
 *   secrets (flow table, neighbour table, deferred queue and source
 *   budget hash seeds, the SNAT port cursor) and the schedulers' random streams. They never
 *   need to agree with anyone; given (`--seed`) only to make a test or a
 *   benchmark repeat itself.
 */

#include <stdbool.h>
#include <stdint.h>

struct lb_seeds {
	uint64_t hash;
	uint64_t rng;
	bool hash_set; /**< @c hash was given: keep it */
	bool rng_set;  /**< @c rng was given: keep it */
};

/**
 * Fills 64 bits from the kernel's random pool, blocking until the pool
 * is initialised (early boot).
 * @return 0, or a negative errno (ENOSYS: no getrandom(2)).
 */
int lb_seed_random(uint64_t *out);

/**
 * Parses @p s as a 64-bit number (decimal, 0x hexadecimal or 0 octal, as
 * strtoull() with base 0), with nothing after it but one newline.
 * @return 0, or -EINVAL.
 */
int lb_seed_parse(const char *s, uint64_t *out);

/**
 * Reads a seed from the file @p path: its one line, as lb_seed_parse()
 * takes it. A file readable by root only keeps a shared seed off the
 * command line, which any local user can read.
 * @return 0, -EINVAL (not a number, or more than one line), or the
 * negative errno of opening or reading it.
 */
int lb_seed_read_file(const char *path, uint64_t *out);

/**
 * Draws the seeds of @p s that were not given.
 * @return 0, or the negative errno of lb_seed_random().
 */
int lb_seeds_draw(struct lb_seeds *s);

#endif /* LB_SEED_H */
