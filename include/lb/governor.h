/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_GOVERNOR_H
#define LB_GOVERNOR_H

/**
 * @file
 * Overload governor of a service (overload-throttling patent, US 8,392,558,
 * "System and method for determining overload state for service requests").
 *
 * Control half (lb-control, one struct lb_gov per service): completed
 * requests arrive as QoS records (expected and actual response time,
 * priority rank). Time is cut into poll intervals; at the end of each one
 * the governor computes the share of requests in its moving window (the
 * last @c window_slots intervals) that missed their expected response time.
 * The service is overloaded when that share is higher than the overload
 * threshold. The throttle multiplier M is then raised by T; after K
 * consecutive non-overloaded intervals it is lowered by R (R << T) in every
 * further non-overloaded interval, down to its initial value ("aggressive
 * throttling and slow release").
 *
 * Dataplane half (per new request, header-inline): a request of priority
 * rank P is throttled with probability min(1, M x P / 100). The patent:
 * "when the system increases the throttle multiplier from zero to T, it may
 * begin throttling (T x P) % of all incoming requests, where P is the request
 * priority rank, and high priority requests have a low priority rank".
 *
 * Ideal request rate mode (optional): besides the overload test, the
 * governor tracks the minimum difference between expected and actual
 * response time ("slack") over the window. Slack below the ideal threshold
 * means the service accepts more than it can serve on time, so M is raised
 * by a small step; slack above the ideal range means there is room, so M is
 * lowered by a small step; inside the range M is held. The admitted rate
 * observed while at the ideal rate is reported as the estimate of the
 * request rate the service can handle.
 *
 * The control half is not thread-safe: one thread owns a struct lb_gov.
 * Workers read only the published multiplier (lb_gov_multiplier()).
 */

#include <stdbool.h>
#include <stdint.h>

#include "lb/governor-t.h"
#include "lb/rng.h"

struct lb_gov;

/** Fills @p p with the defaults listed in struct lb_gov_params. */
void lb_gov_params_default(struct lb_gov_params *p);

/**
 * Checks every parameter.
 * @return 0, -EINVAL (NULL, unknown mode, NaN/inf, zero where a positive
 *   value is needed), or -ERANGE (value outside its documented bounds).
 */
int lb_gov_params_check(const struct lb_gov_params *p);

/**
 * Creates a governor whose first interval starts at @p now_ns, with M at
 * @c m_init. @p p NULL means the defaults.
 * @return the governor, or NULL with errno EINVAL/ERANGE/ENOMEM.
 */
struct lb_gov *lb_gov_create(const struct lb_gov_params *p, uint64_t now_ns);

void lb_gov_free(struct lb_gov *g);

/**
 * Replaces the parameters at run time (the patent makes every one of them
 * configurable during operation). M is clamped into [m_init, m_max]; a new
 * window_slots empties the window. Nothing is allocated.
 * @return 0, -EINVAL or -ERANGE (then nothing changed).
 */
int lb_gov_configure(struct lb_gov *g, const struct lb_gov_params *p);

/**
 * Adds the QoS record of a completed request, after closing every interval
 * that ended at or before @p now_ns. A request misses its expectation when
 * @p actual_ns > @p expected_ns. Records stamped before the open interval
 * (late feedback) count in the open interval.
 * @return 0; -EINVAL for NULL or @p expected_ns == 0; -ERANGE for a time
 *   above INT64_MAX or @p rank > LB_GOV_RANK_MAX (counted as rejected).
 */
int lb_gov_record(struct lb_gov *g, uint64_t now_ns, uint64_t expected_ns,
		  uint64_t actual_ns, unsigned int rank);

/**
 * Closes every interval that ended at or before @p now_ns and runs the
 * controller once per closed interval. An interval with fewer than
 * min_samples records is not judged overloaded (a service that completes
 * nothing must report timeouts as misses). Any number of idle intervals
 * costs O(window_slots).
 * @return the number of intervals closed (capped at INT32_MAX), or -EINVAL.
 */
int lb_gov_tick(struct lb_gov *g, uint64_t now_ns);

/** Current multiplier M, to publish to the workers; NaN if @p g is NULL. */
double lb_gov_multiplier(const struct lb_gov *g);

/** Copies the display state. @return 0 or -EINVAL. */
int lb_gov_state(const struct lb_gov *g, struct lb_gov_state *st);

/** Copies the counters. @return 0 or -EINVAL. */
int lb_gov_counters(const struct lb_gov *g, struct lb_gov_counters *c);

/** Statistics class of a priority rank. */
static inline unsigned int
lb_gov_class(unsigned int rank)
{
	return rank < LB_GOV_NB_CLASSES - 1 ? rank : LB_GOV_NB_CLASSES - 1;
}

/**
 * Throttle probability min(1, M x P / 100) of a request of rank @p rank
 * (patent: "(T x P) % of all incoming requests"). Rank 0 is never
 * throttled; a NaN or non-positive @p m throttles nothing, so a torn or
 * corrupt value can never block a service.
 */
static inline double
lb_gov_throttle_prob(double m, unsigned int rank)
{
	double p;

	if (rank == 0 || !(m > 0.0))
		return 0.0;
	p = m * (double)rank / 100.0;
	return p < 1.0 ? p : 1.0;
}

/**
 * Decides one new request. Draws from @p rng only when 0 < p < 1, so
 * p = 0 and p = 1 cost no random number. @p st may be NULL.
 */
static inline enum lb_gov_verdict
lb_gov_decide(double m, unsigned int rank, const struct lb_rng *rng,
	      struct lb_gov_lcore_stats *st)
{
	double p = lb_gov_throttle_prob(m, rank);
	enum lb_gov_verdict v;

	if (p <= 0.0)
		v = LB_GOV_ADMIT;
	else if (p >= 1.0)
		v = LB_GOV_THROTTLE;
	else
		v = lb_rng_unit(rng) < p ? LB_GOV_THROTTLE : LB_GOV_ADMIT;
	if (st != NULL) {
		if (v == LB_GOV_ADMIT)
			st->admitted[lb_gov_class(rank)]++;
		else
			st->throttled[lb_gov_class(rank)]++;
	}
	return v;
}

#endif /* LB_GOVERNOR_H */
