/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_NEIGH_VIEW_H
#define LB_NEIGH_VIEW_H

/**
 * @file
 * The reader's half of a worker's neighbour snapshot (struct
 * lb_neigh_view in lb/neigh-t.h; the worker's half is
 * lb_worker_neigh_view() in dataplane/core/worker_neigh.c): ask, then
 * copy once answered, again if the worker was writing meanwhile. Used
 * by lb-control's `neigh` and by the dataplane's /lb/neigh telemetry,
 * so that several readers may ask at once.
 */

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "lb/neigh-t.h"

/** Between two looks at a worker that has not answered: 1 ms. */
#define LB_NEIGH_VIEW_POLL_NS 1000000L
/** Copies started again because the worker rewrote the snapshot. */
#define LB_NEIGH_VIEW_TRIES 8

/** The name of state @p s (enum lb_neigh_state), as lbctl shows it. */
static inline const char *
lb_neigh_state_name(uint8_t s)
{
	static const char *const name[] = {
		[LB_NEIGH_INCOMPLETE] = "incomplete",
		[LB_NEIGH_REACHABLE] = "reachable",
		[LB_NEIGH_STALE] = "stale",
		[LB_NEIGH_FAILED] = "failed",
		[LB_NEIGH_STATIC] = "static",
	};

	return s < sizeof(name) / sizeof(name[0]) && name[s] != NULL
		       ? name[s]
		       : "?";
}

/** Asks for a snapshot. @return the request to wait for. */
static inline uint64_t
lb_neigh_view_ask(struct lb_neigh_view *v)
{
	return atomic_fetch_add_explicit(&v->asked, 1, memory_order_acq_rel) +
	       1;
}

/**
 * Copies @p v into @p out once its worker answered request @p want,
 * sleeping LB_NEIGH_VIEW_POLL_NS at most *@p naps times while it has
 * not (the count is the caller's, shared by the workers it asks).
 * @return 0; -ETIMEDOUT if the worker did not answer in time or kept
 *   rewriting the snapshot.
 */
static inline int
lb_neigh_view_copy(struct lb_neigh_view *v, uint64_t want, uint32_t *naps,
		   struct lb_neigh_view *out)
{
	const struct timespec nap = {0, LB_NEIGH_VIEW_POLL_NS};

	for (int tries = 0; tries < LB_NEIGH_VIEW_TRIES;) {
		uint64_t s1, s2;

		if (atomic_load_explicit(&v->answered, memory_order_acquire) <
		    want) {
			if (*naps == 0)
				return -ETIMEDOUT;
			(*naps)--;
			nanosleep(&nap, NULL);
			continue;
		}
		s1 = atomic_load_explicit(&v->seq, memory_order_acquire);
		if (s1 & 1) {
			nanosleep(&nap, NULL);
			tries++;
			continue;
		}
		memcpy(out->st, v->st, sizeof(out->st));
		memcpy(out->nb, v->nb, sizeof(out->nb));
		memcpy(out->more, v->more, sizeof(out->more));
		for (int af = 0; af < LB_NEIGH_VIEW_AFS; af++)
			memcpy(out->e[af], v->e[af],
			       sizeof(out->e[af][0]) *
				       (v->nb[af] < LB_NEIGH_VIEW_MAX
						? v->nb[af]
						: LB_NEIGH_VIEW_MAX));
		atomic_thread_fence(memory_order_acquire);
		s2 = atomic_load_explicit(&v->seq, memory_order_relaxed);
		if (s1 == s2) {
			for (int af = 0; af < LB_NEIGH_VIEW_AFS; af++)
				if (out->nb[af] > LB_NEIGH_VIEW_MAX)
					out->nb[af] = LB_NEIGH_VIEW_MAX;
			return 0;
		}
		tries++;
	}
	return -ETIMEDOUT;
}

#endif /* LB_NEIGH_VIEW_H */
