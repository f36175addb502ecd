/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The status page's time series: one ring of samples, a fixed set of
 * entity slots, taken at creation so that the history costs the same
 * whatever happens to the configuration.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tsring.h"

struct ent {
	struct lb_tsring_key k;
	uint64_t last_seq; /* sample that last touched it; 0: free */
	uint64_t aux[2];
};

struct lb_tsring {
	uint32_t points, entities, metrics;
	uint64_t seq; /* samples opened so far; the open one is seq */
	uint64_t refused;
	uint64_t *t;   /* [points] */
	struct ent *e; /* [entities] */
	float *v;      /* [entities][metrics][points] */
};

struct lb_tsring *
lb_tsring_create(uint32_t points, uint32_t entities, uint32_t metrics)
{
	struct lb_tsring *r;

	if (points == 0 || entities == 0 || metrics == 0 ||
	    points > LB_TSRING_MAX_POINTS ||
	    entities > LB_TSRING_MAX_ENTITIES ||
	    metrics > LB_TSRING_MAX_METRICS) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return NULL;
	r->points = points;
	r->entities = entities;
	r->metrics = metrics;
	r->t = calloc(points, sizeof(*r->t));
	r->e = calloc(entities, sizeof(*r->e));
	r->v = malloc((size_t)entities * metrics * points * sizeof(*r->v));
	if (r->t == NULL || r->e == NULL || r->v == NULL) {
		lb_tsring_free(r);
		errno = ENOMEM;
		return NULL;
	}
	return r;
}

void
lb_tsring_free(struct lb_tsring *r)
{
	if (r == NULL)
		return;
	free(r->t);
	free(r->e);
	free(r->v);
	free(r);
}

uint64_t
lb_tsring_bytes(const struct lb_tsring *r)
{
	return sizeof(*r) + (uint64_t)r->points * sizeof(*r->t) +
	       (uint64_t)r->entities * sizeof(*r->e) +
	       (uint64_t)r->entities * r->metrics * r->points * sizeof(*r->v);
}

static float *
row(const struct lb_tsring *r, int e, uint32_t m)
{
	return r->v + ((size_t)e * r->metrics + m) * r->points;
}

static uint32_t
slot_of(const struct lb_tsring *r, uint64_t seq)
{
	return (uint32_t)((seq - 1) % r->points);
}

void
lb_tsring_begin(struct lb_tsring *r, uint64_t t_ms)
{
	uint32_t s;

	r->seq++;
	s = slot_of(r, r->seq);
	r->t[s] = t_ms;
	for (uint32_t i = 0; i < r->entities; i++) {
		struct ent *x = &r->e[i];

		if (x->last_seq == 0)
			continue;
		/* Nothing of it is left in the window: the slot is free. */
		if (r->seq - x->last_seq >= r->points) {
			memset(x, 0, sizeof(*x));
			continue;
		}
		for (uint32_t m = 0; m < r->metrics; m++)
			row(r, (int)i, m)[s] = NAN;
	}
}

int
lb_tsring_key_cmp(const struct lb_tsring_key *a, const struct lb_tsring_key *b)
{
	int c;

	if (a->svc != b->svc)
		return a->svc < b->svc ? -1 : 1;
	c = memcmp(a->svc6, b->svc6, sizeof(a->svc6));
	if (c != 0)
		return c;
	if (a->be != b->be)
		return a->be < b->be ? -1 : 1;
	return memcmp(a->be6, b->be6, sizeof(a->be6));
}

int
lb_tsring_entity(struct lb_tsring *r, const struct lb_tsring_key *k,
		 bool *created)
{
	int free_slot = -1, oldest = -1;

	*created = false;
	if (r->seq == 0)
		return -EINVAL;
	for (uint32_t i = 0; i < r->entities; i++) {
		struct ent *x = &r->e[i];

		if (x->last_seq == 0) {
			if (free_slot < 0)
				free_slot = (int)i;
			continue;
		}
		if (lb_tsring_key_cmp(&x->k, k) == 0) {
			x->last_seq = r->seq;
			return (int)i;
		}
		if (oldest < 0 || x->last_seq < r->e[oldest].last_seq)
			oldest = (int)i;
	}
	if (free_slot < 0) {
		/* A series still being written is worth more than a new
		 * one: the page would flicker between them. */
		if (oldest < 0 || r->e[oldest].last_seq == r->seq) {
			r->refused++;
			return -ENOSPC;
		}
		free_slot = oldest;
	}
	r->e[free_slot] = (struct ent){.k = *k, .last_seq = r->seq};
	for (uint32_t m = 0; m < r->metrics; m++) {
		float *p = row(r, free_slot, m);

		for (uint32_t i = 0; i < r->points; i++)
			p[i] = NAN;
	}
	*created = true;
	return free_slot;
}

static bool
used(const struct lb_tsring *r, int e)
{
	return e >= 0 && (uint32_t)e < r->entities && r->e[e].last_seq != 0;
}

int
lb_tsring_put(struct lb_tsring *r, int e, uint32_t m, double v)
{
	if (!used(r, e) || m >= r->metrics)
		return -EINVAL;
	row(r, e, m)[slot_of(r, r->seq)] = (float)v;
	r->e[e].last_seq = r->seq;
	return 0;
}

uint64_t *
lb_tsring_aux(struct lb_tsring *r, int e)
{
	return used(r, e) ? r->e[e].aux : NULL;
}

uint32_t
lb_tsring_count(const struct lb_tsring *r)
{
	return r->seq < r->points ? (uint32_t)r->seq : r->points;
}

/* The ring slot of sample @p i, 0 the oldest held. */
static uint32_t
slot_at(const struct lb_tsring *r, uint32_t i)
{
	return slot_of(r, r->seq - lb_tsring_count(r) + 1 + i);
}

uint64_t
lb_tsring_time(const struct lb_tsring *r, uint32_t i)
{
	return i < lb_tsring_count(r) ? r->t[slot_at(r, i)] : 0;
}

double
lb_tsring_get(const struct lb_tsring *r, int e, uint32_t m, uint32_t i)
{
	if (!used(r, e) || m >= r->metrics || i >= lb_tsring_count(r))
		return NAN;
	return row(r, e, m)[slot_at(r, i)];
}

uint32_t
lb_tsring_entities(const struct lb_tsring *r)
{
	return r->entities;
}

const struct lb_tsring_key *
lb_tsring_key(const struct lb_tsring *r, int e)
{
	return used(r, e) ? &r->e[e].k : NULL;
}

uint64_t
lb_tsring_refused(const struct lb_tsring *r)
{
	return r->refused;
}
