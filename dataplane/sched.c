/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lb/adaptive.h"
#include "lb/maglev.h"
#include "lb/sched.h"

/* ---- rr: plain round robin over eligible backends ---------------------- */

struct rr {
	uint32_t n;
	uint32_t cursor;
	bool eligible[];
};

static void *
rr_create(const struct lb_sched_be *be, uint32_t n)
{
	struct rr *r;

	if (n == 0) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r) + n * sizeof(bool));
	if (r == NULL)
		return NULL;
	r->n = n;
	for (uint32_t i = 0; i < n; i++)
		r->eligible[i] = be[i].eligible;
	return r;
}

static int
rr_next_from(const struct rr *r, uint32_t start, uint32_t skip, uint32_t *be)
{
	for (uint32_t k = 0; k < r->n; k++) {
		uint32_t i = (start + k) % r->n;

		if (i != skip && r->eligible[i]) {
			*be = i;
			return 0;
		}
	}
	return -ENOENT;
}

static int
rr_pick(void *st, uint64_t flow_hash, const struct lb_rng *rng, uint32_t *be)
{
	struct rr *r = st;
	int rc;

	(void)flow_hash;
	(void)rng;
	rc = rr_next_from(r, r->cursor, UINT32_MAX, be);
	if (rc == 0)
		r->cursor = (*be + 1) % r->n;
	return rc;
}

static int
rr_next(void *st, uint32_t prev, uint32_t *be)
{
	struct rr *r = st;

	if (prev >= r->n)
		return -EINVAL;
	return rr_next_from(r, prev + 1, prev, be);
}

static int
rr_set_eligible(void *st, uint32_t be, bool eligible)
{
	struct rr *r = st;

	if (be >= r->n)
		return -EINVAL;
	r->eligible[be] = eligible;
	return 0;
}

static void
sched_free(void *st)
{
	free(st);
}

static void
no_result(void *st, uint32_t be, bool ok)
{
	(void)st;
	(void)be;
	(void)ok;
}

static uint32_t
no_errors(void *st, uint32_t be)
{
	(void)st;
	(void)be;
	return 0;
}

static int
no_set_errors(void *st, uint32_t be, uint32_t errors)
{
	(void)st;
	(void)be;
	(void)errors;
	return 0;
}

/* ---- wrr: smooth weighted round robin ----------------------------------
 * Each pick adds every eligible backend's weight to its running score and
 * takes the highest, which then pays back the total: picks follow the
 * weights and never come in bursts for one backend. */

struct wrr_be {
	int64_t score;
	uint32_t weight;
	bool eligible;
};

struct wrr {
	uint32_t n;
	struct wrr_be be[];
};

static void *
wrr_create(const struct lb_sched_be *be, uint32_t n)
{
	struct wrr *w;

	if (n == 0) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w) + n * sizeof(w->be[0]));
	if (w == NULL)
		return NULL;
	w->n = n;
	for (uint32_t i = 0; i < n; i++) {
		w->be[i].weight = be[i].weight ? be[i].weight : 1;
		w->be[i].eligible = be[i].eligible;
	}
	return w;
}

static int
wrr_pick(void *st, uint64_t flow_hash, const struct lb_rng *rng, uint32_t *be)
{
	struct wrr *w = st;
	int64_t total = 0;
	uint32_t best = UINT32_MAX;

	(void)flow_hash;
	(void)rng;
	for (uint32_t i = 0; i < w->n; i++) {
		if (!w->be[i].eligible)
			continue;
		w->be[i].score += w->be[i].weight;
		total += w->be[i].weight;
		if (best == UINT32_MAX || w->be[i].score > w->be[best].score)
			best = i;
	}
	if (best == UINT32_MAX)
		return -ENOENT;
	w->be[best].score -= total;
	*be = best;
	return 0;
}

static int
wrr_next(void *st, uint32_t prev, uint32_t *be)
{
	struct wrr *w = st;

	if (prev >= w->n)
		return -EINVAL;
	for (uint32_t k = 1; k < w->n; k++) {
		uint32_t i = (prev + k) % w->n;

		if (w->be[i].eligible) {
			*be = i;
			return 0;
		}
	}
	return -ENOENT;
}

static int
wrr_set_eligible(void *st, uint32_t be, bool eligible)
{
	struct wrr *w = st;

	if (be >= w->n)
		return -EINVAL;
	w->be[be].eligible = eligible;
	w->be[be].score = 0;
	return 0;
}

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

/* ---- adaptive: the paper's error-adaptive weights ---------------------- */

static void *
ad_create(const struct lb_sched_be *be, uint32_t n)
{
	struct lb_adaptive *ad = lb_adaptive_create(n, NULL);

	if (ad == NULL)
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		if (!be[i].eligible)
			lb_adaptive_set_eligible(ad, i, false);
	return ad;
}

static void
ad_destroy(void *st)
{
	lb_adaptive_free(st);
}

static int
ad_pick(void *st, uint64_t flow_hash, const struct lb_rng *rng, uint32_t *be)
{
	(void)flow_hash;
	return lb_adaptive_pick(st, rng, be);
}

static int
ad_next(void *st, uint32_t prev, uint32_t *be)
{
	return lb_adaptive_next(st, prev, be);
}

static void
ad_result(void *st, uint32_t be, bool ok)
{
	if (ok)
		lb_adaptive_ok(st, be);
	else
		lb_adaptive_fail(st, be);
}

static int
ad_set_eligible(void *st, uint32_t be, bool eligible)
{
	return lb_adaptive_set_eligible(st, be, eligible);
}

static int
ad_set_errors(void *st, uint32_t be, uint32_t errors)
{
	/* States are created with the default cap; above it the count
	 * saturates, as failures would have made it. */
	if (errors > LB_ADAPTIVE_ERR_CAP_DEFAULT)
		errors = LB_ADAPTIVE_ERR_CAP_DEFAULT;
	return lb_adaptive_set_errors(st, be, errors);
}

static int
ad_guard(void *st, const struct lb_sched_guard *g)
{
	return lb_adaptive_guard(st, &(struct lb_adaptive_conf){
					     .err_memory = g->err_memory,
					     .min_volume = g->min_volume,
					     .max_eject_pct = g->max_eject_pct,
					     .panic_pct = g->panic_pct,
				     });
}

static uint32_t
ad_errors(void *st, uint32_t be)
{
	struct lb_adaptive_view v;

	if (lb_adaptive_view(st, be, &v) != 0)
		return 0;
	return v.errors;
}

/* ---- registry ---------------------------------------------------------- */

static const struct lb_sched_ops builtin[] = {
	{
		.name = "adaptive",
		.help = "weighted random with weights from recent errors "
			"(default)",
		.create = ad_create,
		.destroy = ad_destroy,
		.pick = ad_pick,
		.next = ad_next,
		.result = ad_result,
		.set_eligible = ad_set_eligible,
		.errors = ad_errors,
		.set_errors = ad_set_errors,
		.guard = ad_guard,
	},
	{
		.name = "maglev",
		.help = "weighted Maglev consistent hashing of the flow",
		.create = mag_create,
		.destroy = mag_destroy,
		.pick = mag_pick,
		.next = mag_next,
		.result = no_result,
		.set_eligible = mag_set_eligible,
		.errors = no_errors,
		.set_errors = no_set_errors,
		.build = mag_build,
		.inherit = mag_inherit,
	},
	{
		.name = "rr",
		.help = "round robin, weights ignored",
		.create = rr_create,
		.destroy = sched_free,
		.pick = rr_pick,
		.next = rr_next,
		.result = no_result,
		.set_eligible = rr_set_eligible,
		.errors = no_errors,
		.set_errors = no_set_errors,
	},
	{
		.name = "wrr",
		.help = "smooth weighted round robin",
		.create = wrr_create,
		.destroy = sched_free,
		.pick = wrr_pick,
		.next = wrr_next,
		.result = no_result,
		.set_eligible = wrr_set_eligible,
		.errors = no_errors,
		.set_errors = no_set_errors,
	},
};

#define NB_BUILTIN (sizeof(builtin) / sizeof(builtin[0]))

static const struct lb_sched_ops *extra[LB_SCHED_MAX - NB_BUILTIN];
static unsigned int nb_extra;

const struct lb_sched_ops *
lb_sched_find(const char *name)
{
	if (name == NULL)
		return NULL;
	for (unsigned int i = 0; i < NB_BUILTIN; i++)
		if (strcmp(builtin[i].name, name) == 0)
			return &builtin[i];
	for (unsigned int i = 0; i < nb_extra; i++)
		if (strcmp(extra[i]->name, name) == 0)
			return extra[i];
	return NULL;
}

int
lb_sched_register(const struct lb_sched_ops *ops)
{
	if (ops == NULL || ops->name == NULL || ops->name[0] == '\0' ||
	    strlen(ops->name) >= LB_SCHED_NAME_MAX || ops->create == NULL ||
	    ops->destroy == NULL || ops->pick == NULL || ops->next == NULL ||
	    ops->result == NULL || ops->set_eligible == NULL ||
	    ops->errors == NULL || ops->set_errors == NULL)
		return -EINVAL;
	if (lb_sched_find(ops->name) != NULL)
		return -EEXIST;
	if (nb_extra >= sizeof(extra) / sizeof(extra[0]))
		return -ENOSPC;
	extra[nb_extra++] = ops;
	return 0;
}

unsigned int
lb_sched_list(const struct lb_sched_ops **out, unsigned int max)
{
	unsigned int k = 0;

	for (unsigned int i = 0; i < NB_BUILTIN && k < max; i++)
		out[k++] = &builtin[i];
	for (unsigned int i = 0; i < nb_extra && k < max; i++)
		out[k++] = extra[i];
	return k;
}
