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

#include "lb/rng.h"

/** Priority classes kept apart in statistics: ranks 0..6, then 7 and up. */
#define LB_GOV_NB_CLASSES 8
/** Largest priority rank accepted in a QoS record. */
#define LB_GOV_RANK_MAX 100u
/** Largest number of poll intervals in the moving window. */
#define LB_GOV_MAX_SLOTS 32u
/**
 * Largest multiplier: at M = 100 every request of rank >= 1 is throttled,
 * so a larger M changes nothing.
 */
#define LB_GOV_M_LIMIT 100.0

enum lb_gov_mode {
	/** Patent's damping: +T when overloaded, -R after K calm intervals. */
	LB_GOV_MODE_DAMPED = 0,
	/** Damping plus small steps that hold the ideal request rate. */
	LB_GOV_MODE_IDEAL_RATE = 1,
};

/** Where the last interval put the service relative to the ideal rate. */
enum lb_gov_rate {
	LB_GOV_RATE_UNKNOWN = 0, /**< damped mode, or overloaded */
	LB_GOV_RATE_BELOW,	 /**< slack above the range: room for more */
	LB_GOV_RATE_IDEAL,	 /**< slack inside the range: hold M */
	LB_GOV_RATE_ABOVE,	 /**< slack below the threshold: throttle */
};

/** Per-request verdict of the dataplane half. */
enum lb_gov_verdict {
	LB_GOV_ADMIT = 0,
	LB_GOV_THROTTLE = 1,
};

/**
 * Parameters. The patent names T, R, the consecutive calm intervals, the
 * overload threshold ("overload indicator value"), the window length and the
 * ideal request rate threshold but gives no numbers; the defaults of
 * lb_gov_params_default() are this project's choices (docs/policies.md).
 */
struct lb_gov_params {
	enum lb_gov_mode mode;	   /**< default LB_GOV_MODE_DAMPED */
	uint64_t interval_ns;	   /**< poll interval; default 1 s */
	unsigned int window_slots; /**< intervals per moving window; 1 */
	double overload_pct;	   /**< overloaded if miss % > this; 5 */
	double t_step;		   /**< T, raise when overloaded; 10 */
	double r_step;		   /**< R, release step, 0 < R <= T; 1 */
	unsigned int calm_k;	   /**< K calm intervals before release; 3 */
	double m_init;		   /**< initial value and floor of M; 0 */
	double m_max;		   /**< ceiling of M, <= 100; 100 */
	unsigned int min_samples;  /**< fewer records: not judged; 10 */
	int64_t ideal_slack_ns;	   /**< ideal request rate threshold; 0 */
	int64_t ideal_band_ns;	   /**< width of the ideal range; 30 ms */
	double ideal_up;	   /**< step up above ideal rate; 2 */
	double ideal_down;	   /**< step down below ideal rate; 1 */
};

/** Snapshot for display (lbctl, /metrics). */
struct lb_gov_state {
	enum lb_gov_mode mode;
	double m;		   /**< current throttle multiplier */
	double miss_pct;	   /**< miss share of the last window, % */
	bool overloaded;	   /**< verdict of the last interval */
	unsigned int calm_windows; /**< consecutive non-overloaded intervals */
	uint64_t window_records;   /**< records in the last window */
	uint64_t window_misses;	   /**< misses in the last window */
	double window_rate_rps;	   /**< completions per second in it */
	/** Minimum expected - actual response time; INT64_MAX if none. */
	int64_t min_slack_ns;
	enum lb_gov_rate rate;	    /**< ideal-rate verdict, last interval */
	double ideal_rate_rps;	    /**< EWMA (1/4) of ideal windows' rates */
	uint64_t interval_start_ns; /**< start of the open interval */
};

struct lb_gov_counters {
	uint64_t records;  /**< QoS records accepted */
	uint64_t misses;   /**< of which missed their expectation */
	uint64_t rejected; /**< QoS records refused as bad input */
	uint64_t records_by_class[LB_GOV_NB_CLASSES];
	uint64_t misses_by_class[LB_GOV_NB_CLASSES];
	uint64_t intervals;	     /**< intervals evaluated */
	uint64_t unjudged;	     /**< of which had < min_samples records */
	uint64_t overload_intervals; /**< of which judged overloaded */
	uint64_t overload_entries;   /**< not overloaded -> overloaded */
	uint64_t overload_exits;     /**< overloaded -> not overloaded */
	uint64_t m_raises;	     /**< +T steps that raised M */
	uint64_t m_releases;	     /**< -R steps that lowered M */
	uint64_t ideal_raises;	     /**< ideal mode: small steps up */
	uint64_t ideal_releases;     /**< ideal mode: small steps down */
	uint64_t ideal_holds;	     /**< ideal mode: intervals at ideal rate */
};

/** Per-lcore counters of the dataplane half; owned by one worker. */
struct lb_gov_lcore_stats {
	uint64_t admitted[LB_GOV_NB_CLASSES];
	uint64_t throttled[LB_GOV_NB_CLASSES];
};

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
