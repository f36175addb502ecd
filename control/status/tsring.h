/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_TSRING_H
#define LB_TSRING_H

/**
 * @file
 * The last minutes of time series, in memory taken once.
 *
 * A ring of @c points samples on one time axis, shared by up to
 * @c entities entities (a service, a backend), each with @c metrics
 * values per sample. The writer opens a sample with lb_tsring_begin(),
 * then finds each entity by its key (created on first sight) and puts
 * its values; a value not put in a sample reads as NaN (a gap). An
 * entity that got no value for a whole window is forgotten; when every
 * entity is taken, a new key takes the place of the one least recently
 * written, unless that one was written in this very sample (then the
 * new key is refused and counted).
 *
 * Each entity also keeps two words for its writer (lb_tsring_aux()):
 * the counters of the previous sample, from which rates are made.
 *
 * Pure C, no allocation after lb_tsring_create(); not thread-safe.
 */

#include <stdbool.h>
#include <stdint.h>

/** What names an entity: its service and, for a backend, the backend
 * (0 for the service itself). An address too long for those words (an
 * IPv6 one) is in svc6 or be6, zero otherwise. */
struct lb_tsring_key {
	uint64_t svc;
	uint64_t be;
	uint8_t svc6[16];
	uint8_t be6[16];
};

/** Orders keys by svc, svc6, be, be6: a service's backends follow it.
 * @return <0, 0, >0. */
int lb_tsring_key_cmp(const struct lb_tsring_key *a,
		      const struct lb_tsring_key *b);

struct lb_tsring;

/** Largest sizes lb_tsring_create() accepts. */
#define LB_TSRING_MAX_POINTS 3600u
#define LB_TSRING_MAX_ENTITIES 4096u
#define LB_TSRING_MAX_METRICS 16u

/**
 * A ring of @p points samples for @p entities entities of @p metrics
 * values. @return the ring, or NULL with errno EINVAL (a size 0 or
 * beyond the maxima) or ENOMEM.
 */
struct lb_tsring *lb_tsring_create(uint32_t points, uint32_t entities,
				   uint32_t metrics);

void lb_tsring_free(struct lb_tsring *r);

/** Bytes the ring holds, all taken by lb_tsring_create(). */
uint64_t lb_tsring_bytes(const struct lb_tsring *r);

/**
 * Opens a new sample taken at @p t_ms (any clock in ms; kept for the
 * reader), overwriting the oldest when the ring is full, and forgets
 * the entities no sample of the window has a value for.
 */
void lb_tsring_begin(struct lb_tsring *r, uint64_t t_ms);

/**
 * The entity named @p k: its index, found or created (*@p created then
 * set, its aux words zero). @return the index, -ENOSPC when no entity
 * can be given (counted, lb_tsring_refused()), -EINVAL before any
 * lb_tsring_begin().
 */
int lb_tsring_entity(struct lb_tsring *r, const struct lb_tsring_key *k,
		     bool *created);

/** Puts @p v as metric @p m of entity @p e in the open sample; -EINVAL
 * for an index out of range or a free entity. */
int lb_tsring_put(struct lb_tsring *r, int e, uint32_t m, double v);

/** The writer's two words of entity @p e, or NULL. */
uint64_t *lb_tsring_aux(struct lb_tsring *r, int e);

/** Samples held, at most the ring's points. */
uint32_t lb_tsring_count(const struct lb_tsring *r);

/** Time of sample @p i, 0 the oldest held; 0 out of range. */
uint64_t lb_tsring_time(const struct lb_tsring *r, uint32_t i);

/** Metric @p m of entity @p e in sample @p i (0 the oldest); NaN for a
 * gap or out of range. */
double lb_tsring_get(const struct lb_tsring *r, int e, uint32_t m, uint32_t i);

/** Entity slots (used or not): indexes are 0 .. this - 1. */
uint32_t lb_tsring_entities(const struct lb_tsring *r);

/** The key of entity @p e, or NULL when the slot is free. */
const struct lb_tsring_key *lb_tsring_key(const struct lb_tsring *r, int e);

/** New keys refused because every entity was written this sample. */
uint64_t lb_tsring_refused(const struct lb_tsring *r);

#endif /* LB_TSRING_H */
