/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_GOVVIEW_H
#define LB_GOVVIEW_H

/**
 * @file
 * lb-control's overload governors: one struct lb_gov (governor.h) per
 * service slot of the published table whose `governor` option is on, fed
 * with the QoS records the workers produce (LB_FB_HTTP records whose
 * request gave X-Expect-Ms) and ticked by lb-control's loop. Its throttle
 * multiplier M is what lb-control publishes to the workers
 * (shm->gov_m), which throttle each new request of rank P with
 * probability min(1, M x P / 100).
 *
 * A QoS record: expected time = X-Expect-Ms; actual time = the measured
 * latency, or a miss when the response was not timed (it began before the
 * request ended: nothing says it was on time); rank = X-Priority, or the
 * service's default-priority. Times are the dataplane's monotonic
 * nanoseconds (struct lb_fb ts_ns). Pure C; not thread-safe.
 */

#include <stdbool.h>
#include <stdint.h>

#include "lb/conf.h"
#include "lb/fb.h"
#include "lb/governor.h"

struct lb_govview;

/** One service slot's governor, as of its last tick. */
struct lb_govview_svc {
	bool on; /**< the slot has a governor */
	struct lb_gov_params params;
	struct lb_gov_state st;
	struct lb_gov_counters cnt;
};

/** @return an empty view, or NULL (errno ENOMEM). */
struct lb_govview *lb_govview_create(void);

void lb_govview_free(struct lb_govview *g);

/**
 * Fills @p p from a service's options @p gov (LB_CONF_GOV_LIST ids).
 * @return 0 or what lb_gov_params_check() says.
 */
int lb_govview_params(const uint64_t gov[LB_CONF_GOV_NB],
		      struct lb_gov_params *p);

/**
 * Sets the governor of slot @p slot from its options (@p gov NULL or
 * governor off: none). @p fresh: another service now has the slot, its
 * governor starts over; otherwise a running governor only takes the new
 * parameters. @return 0, -EINVAL (slot, parameters) or -ENOMEM.
 */
int lb_govview_set(struct lb_govview *g, uint32_t slot,
		   const uint64_t *gov, bool fresh, uint64_t now_ns);

/**
 * One feedback record. Only LB_FB_HTTP records with LB_FB_F_EXPECT, of a
 * slot with a governor, count. @return true if it was a QoS record.
 */
bool lb_govview_feed(struct lb_govview *g, const struct lb_fb *r);

/** Closes the intervals that ended by @p now_ns, on every governor. */
void lb_govview_tick(struct lb_govview *g, uint64_t now_ns);

/** M of slot @p slot: 0 without a governor. */
double lb_govview_m(const struct lb_govview *g, uint32_t slot);

/** @return 0 or -EINVAL. */
int lb_govview_get(const struct lb_govview *g, uint32_t slot,
		   struct lb_govview_svc *out);

#endif /* LB_GOVVIEW_H */
