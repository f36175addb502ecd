/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "maglev.h"
#include "lb/sched.h"

/* ---- maglev: consistent hashing on the flow hash -----------------------
 * Building a lookup table takes milliseconds, so create() only prepares it
 * and build() fills it in slices (see struct lb_sched_ops). Until it is
 * complete, picks come from the table of the previous state (inherit()),
 * whose backend indexes are the same table slots, checked against the new
 * eligibility. */

struct mag {
	struct lb_maglev *table; /* answers picks; NULL: none yet */
	struct lb_maglev *next;	 /* being built, NULL when none */
	struct lb_maglev_builder *bld;
	uint32_t n;
	struct lb_sched_be be[];
};

/* Starts a build of m->next from the backends as they are now. */
static int
mag_start(struct mag *m)
{
	struct lb_maglev_be *mb = malloc(m->n * sizeof(*mb));
	int rc;

	if (mb == NULL)
		return -ENOMEM;
	if (m->next == NULL) {
		m->next = malloc(lb_maglev_mem_size(LB_MAGLEV_DEFAULT_SIZE));
		if (m->next == NULL) {
			free(mb);
			return -ENOMEM;
		}
		/* The builder writes every entry before the table is used. */
		m->next->size = LB_MAGLEV_DEFAULT_SIZE;
		m->next->nb_be = 0;
	}
	/* Drained backends leave the table (weight 0) but keep their
	 * index, so the flows of the others mostly stay where they are. */
	for (uint32_t i = 0; i < m->n; i++) {
		mb[i].key = m->be[i].key;
		mb[i].weight = m->be[i].eligible ? m->be[i].weight : 0;
	}
	lb_maglev_builder_free(m->bld);
	m->bld = lb_maglev_builder_create(m->next, mb, m->n);
	rc = m->bld == NULL ? -errno : 0;
	free(mb);
	return rc;
}

static int
mag_build(void *st, uint32_t budget)
{
	struct mag *m = st;

	if (m->bld == NULL)
		return 0;
	if (lb_maglev_builder_step(m->bld, budget) != 0)
		return 1;
	lb_maglev_builder_free(m->bld);
	m->bld = NULL;
	lb_maglev_free(m->table);
	m->table = m->next;
	m->next = NULL;
	return 0;
}

static void
mag_inherit(void *st, void *old)
{
	struct mag *m = st, *o = old;

	if (m->bld == NULL || m->table != NULL)
		return;
	m->table = o->table;
	o->table = NULL;
}

static void
mag_destroy(void *st)
{
	struct mag *m = st;

	if (m == NULL)
		return;
	lb_maglev_builder_free(m->bld);
	lb_maglev_free(m->table);
	lb_maglev_free(m->next);
	free(m);
}

static void *
mag_create(const struct lb_sched_be *be, uint32_t n)
{
	struct mag *m;
	int rc;

	if (n == 0 || n >= LB_MAGLEV_DEFAULT_SIZE) {
		errno = EINVAL;
		return NULL;
	}
	m = calloc(1, sizeof(*m) + n * sizeof(m->be[0]));
	if (m == NULL)
		return NULL;
	m->n = n;
	memcpy(m->be, be, n * sizeof(*be));
	for (uint32_t i = 0; i < n; i++)
		if (m->be[i].weight == 0)
			m->be[i].weight = 1;
	rc = mag_start(m);
	if (rc != 0) {
		mag_destroy(m);
		errno = -rc;
		return NULL;
	}
	return m;
}

static int
mag_next(void *st, uint32_t prev, uint32_t *be)
{
	struct mag *m = st;

	if (prev >= m->n)
		return -EINVAL;
	for (uint32_t k = 1; k < m->n; k++) {
		uint32_t i = (prev + k) % m->n;

		if (m->be[i].eligible) {
			*be = i;
			return 0;
		}
	}
	return -ENOENT;
}

static int
mag_pick(void *st, uint64_t flow_hash, const struct lb_rng *rng, uint32_t *be)
{
	struct mag *m = st;
	uint32_t i = m->table != NULL ? lb_maglev_lookup(m->table, flow_hash)
				      : LB_MAGLEV_NONE;

	(void)rng;
	if (i < m->n && m->be[i].eligible) {
		*be = i;
		return 0;
	}
	/* A complete table of our own names only eligible backends. */
	if (m->bld == NULL)
		return -ENOENT;
	/* Still building: the inherited table may name a backend that
	 * takes no new flows now, or none; the next eligible one after it
	 * (after the flow's hash without a table) is what every worker
	 * picks alike. */
	if (i >= m->n)
		i = (uint32_t)(flow_hash % m->n);
	if (m->be[i].eligible) {
		*be = i;
		return 0;
	}
	return mag_next(m, i, be);
}

static int
mag_set_eligible(void *st, uint32_t be, bool eligible)
{
	struct mag *m = st;
	int rc;

	if (be >= m->n)
		return -EINVAL;
	if (m->be[be].eligible == eligible)
		return 0;
	m->be[be].eligible = eligible;
	/* Outside a worker (tests, tools): built at once. */
	rc = mag_start(m);
	if (rc == 0)
		mag_build(m, UINT32_MAX);
	return rc;
}

static const struct lb_sched_ops maglev_ops = {
	.name = "maglev",
	.help = "weighted Maglev consistent hashing of the flow",
	.create = mag_create,
	.destroy = mag_destroy,
	.pick = mag_pick,
	.next = mag_next,
	.result = lb_sched_no_result,
	.set_eligible = mag_set_eligible,
	.errors = lb_sched_no_errors,
	.set_errors = lb_sched_no_set_errors,
	.build = mag_build,
	.inherit = mag_inherit,
};

LB_SCHED_REGISTER(maglev_ops);
