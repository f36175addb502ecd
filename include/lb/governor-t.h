/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_GOVERNOR_T_H
#define LB_GOVERNOR_T_H

/**
 * @file
 * The overload governor's types (governor.h): its parameters, snapshots and
 * the per-lcore counters the dataplane half keeps in shared memory.
 */

#include <stdbool.h>
#include <stdint.h>

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

#endif /* LB_GOVERNOR_T_H */
