/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_INFLIGHT_H
#define LB_INFLIGHT_H

/**
 * @file
 * Requests-in-flight autoscaling policy of the control plane.
 *
 * Seed: "Autoscaling Algorithm used in WSO2 Elastic Load Balancer 2.0"
 * (the "request in-flight based autoscaling" algorithm). Once per
 * autoscaling task run ("tick") and per service:
 *
 *  1. The number of requests in flight is appended to a vector of the
 *     last rounds_to_average samples; when the vector is full its oldest
 *     entry is dropped first. The vector slides; it is never cleared.
 *  2. No decision is taken until the vector holds rounds_to_average
 *     samples.
 *  3. l = sum of the vector / size of the vector (requests in flight,
 *     averaged), n = running instances, q = queue_length_per_node.
 *  4. l > n*q: scale up by one, unless the maximum instance count is
 *     reached or an instance is still pending.
 *  5. otherwise (n-1)*q > l: scale down by one, unless that would go
 *     below the minimum instance count.
 *  6. otherwise no-op.
 *
 * The two strict comparisons leave every n with
 * ceil(l/q) <= n <= floor(l/q) + 1 untouched: that band is the seed's
 * only hysteresis. Further guards (dead band, stabilization, cooldown,
 * start-up timeout) live in scale_guard.
 *
 * All arithmetic on the average is exact: l > n*q is evaluated as
 * sum > n*q*size in 64-bit integers, so 2.5 > 2 and 3 > 3 are decided
 * without rounding. The policy reads no clock: one call is one tick.
 * Allocation happens only in lb_inflight_create().
 */

#include <stdbool.h>
#include <stdint.h>

/** queue_length_per_node of the seed's example. */
#define LB_INFLIGHT_QUEUE_LENGTH_DEFAULT 3u
/** rounds_to_average of the seed's example. */
#define LB_INFLIGHT_ROUNDS_DEFAULT 2u
/** min_app_instances of the seed's example. */
#define LB_INFLIGHT_MIN_DEFAULT 0u
/** max_app_instances of the seed's example. */
#define LB_INFLIGHT_MAX_DEFAULT 5u
/**
 * Largest rounds_to_average. With samples below 2^32 the window sum stays
 * below 2^42, and n*q*size below 2^62 (see LB_INFLIGHT_INSTANCES_MAX).
 */
#define LB_INFLIGHT_ROUNDS_MAX 1024u
/** Largest instance count (running, pending, min, max, step). */
#define LB_INFLIGHT_INSTANCES_MAX (1u << 20)

/** How far one decision moves. */
enum lb_inflight_step {
	/** The seed: instances_per_scale_up / _down (1 and 1) per tick. */
	LB_INFLIGHT_STEP_FIXED = 0,
	/**
	 * Jump in one tick to the nearest count the seed would stop at:
	 * ceil(l/q) going up, floor(l/q) + 1 going down. Still clamped by
	 * min/max; the pending guard still applies.
	 */
	LB_INFLIGHT_STEP_TO_BAND,
};

/** How the average l is formed from the window. */
enum lb_inflight_avg {
	/** The seed's text and table: real division (2.5 for 0 and 5). */
	LB_INFLIGHT_AVG_EXACT = 0,
	/** Integer division, as in the load balancer's released code. */
	LB_INFLIGHT_AVG_TRUNCATE,
};

/** Configuration. Fill with lb_inflight_params_default(). */
struct lb_inflight_params {
	/** q: requests in flight one instance is meant to carry. Default 3. */
	uint32_t queue_length_per_node;
	/** Window length in ticks, 1..LB_INFLIGHT_ROUNDS_MAX. Default 2. */
	uint32_t rounds_to_average;
	/** No scale-down below this many running instances. Default 0. */
	uint32_t min_instances;
	/** No scale-up once running + pending reaches this. Default 5. */
	uint32_t max_instances;
	/** Instances added per scale-up (fixed step). Default 1. */
	uint32_t instances_per_scale_up;
	/** Instances removed per scale-down (fixed step). Default 1. */
	uint32_t instances_per_scale_down;
	/** Default LB_INFLIGHT_STEP_FIXED. */
	enum lb_inflight_step step;
	/** Default LB_INFLIGHT_AVG_EXACT. */
	enum lb_inflight_avg avg;
	/**
	 * The seed's pending guard: no scale-up while any instance is
	 * pending. Default true. Either way pending instances count
	 * against max_instances and against the jump of STEP_TO_BAND.
	 */
	bool pending_guard;
	/**
	 * When running + pending < min_instances, scale up by the
	 * difference before anything else (the load balancer's sanity
	 * check of the minimum). Default true; a no-op with the seed's
	 * min of 0.
	 */
	bool top_up_to_min;
	/**
	 * Clear the window after a scale-up or scale-down, so that the
	 * next decision waits for rounds_to_average fresh samples. Not in
	 * the seed (its window only slides). Default false.
	 */
	bool reset_after_action;
};

/** What a tick decided. */
enum lb_inflight_action {
	LB_INFLIGHT_NOOP = 0,
	LB_INFLIGHT_UP,	  /**< start `count` instances */
	LB_INFLIGHT_DOWN, /**< stop `count` running instances */
};

/** Why. */
enum lb_inflight_reason {
	/** The window is not full yet: no decision (seed, iteration 1). */
	LB_INFLIGHT_R_WINDOW_FILLING = 0,
	/** l <= n*q and (n-1)*q <= l: capacity fits the load. */
	LB_INFLIGHT_R_IN_BAND,
	/** l > n*q: scale up. */
	LB_INFLIGHT_R_OVER_CAPACITY,
	/** (n-1)*q > l: scale down. */
	LB_INFLIGHT_R_UNDER_CAPACITY,
	/** l > n*q but an instance is pending: held (iteration 4). */
	LB_INFLIGHT_R_PENDING,
	/** l > n*q but running + pending >= max_instances: held. */
	LB_INFLIGHT_R_AT_MAX,
	/** (n-1)*q > l but running <= min_instances: held. */
	LB_INFLIGHT_R_AT_MIN,
	/** running + pending < min_instances: topped up. */
	LB_INFLIGHT_R_BELOW_MIN,
	LB_INFLIGHT_R_COUNT
};

/** A decision with everything it was made from. */
struct lb_inflight_decision {
	/* Inputs of the tick. */
	uint32_t in_flight;
	uint32_t running;
	uint32_t pending;
	/* Window after the sample was added. */
	uint32_t nb_samples;
	uint64_t sum;
	/** l as used by the comparisons (exact or truncated). */
	double average;
	/** n*q: load the running instances can handle. */
	uint64_t capacity;
	/** (n-1)*q; -q when n is 0. */
	int64_t capacity_less_one;
	/** ceil(l/q): fewest instances whose capacity covers l. */
	uint32_t required;
	/* Output. */
	enum lb_inflight_action action;
	/** Instances to start or stop; 0 for a no-op. */
	uint32_t count;
	/** running + pending after the action. */
	uint32_t target;
	enum lb_inflight_reason reason;
};

/** Counters; all monotonic. */
struct lb_inflight_stats {
	uint64_t ticks;	   /**< accepted lb_inflight_tick() calls */
	uint64_t rejected; /**< calls refused for bad input */
	uint64_t ups;	   /**< scale-up decisions */
	uint64_t downs;	   /**< scale-down decisions */
	uint64_t added;	   /**< instances asked for */
	uint64_t removed;  /**< instances let go */
	uint64_t by_reason[LB_INFLIGHT_R_COUNT];
};

/** Opaque per-service state. */
struct lb_inflight;

/** Fills @p p with the seed's example configuration. */
void lb_inflight_params_default(struct lb_inflight_params *p);

/**
 * Validates a configuration.
 * @return 0, or -EINVAL for NULL, q of 0, rounds_to_average outside
 *   1..LB_INFLIGHT_ROUNDS_MAX, max_instances of 0, min > max, a step of 0,
 *   an unknown enum; -ERANGE for a count above LB_INFLIGHT_INSTANCES_MAX.
 */
int lb_inflight_params_check(const struct lb_inflight_params *p);

/**
 * Creates the state of one service with an empty window.
 * @return the state, or NULL with errno EINVAL/ERANGE (see
 *   lb_inflight_params_check()) or ENOMEM.
 */
struct lb_inflight *lb_inflight_create(const struct lb_inflight_params *p);

/** Frees the state; NULL is ignored. */
void lb_inflight_free(struct lb_inflight *ifl);

/** Empties the window (for example after the service was reconfigured). */
void lb_inflight_reset(struct lb_inflight *ifl);

/**
 * Copies the configuration in use.
 * @return 0 or -EINVAL.
 */
int lb_inflight_params_get(const struct lb_inflight *ifl,
			   struct lb_inflight_params *p);

/**
 * One autoscaling task run: records @p in_flight and decides.
 *
 * @param in_flight requests in flight now (size of the token map).
 * @param running instances serving traffic.
 * @param pending instances asked for that are not serving yet.
 * @return 0 with @p d filled; -EINVAL for NULL; -ERANGE when @p running
 *   or @p pending is above LB_INFLIGHT_INSTANCES_MAX. On error the sample
 *   is not recorded, @p d is untouched and the error is counted.
 */
int lb_inflight_tick(struct lb_inflight *ifl, uint32_t in_flight,
		     uint32_t running, uint32_t pending,
		     struct lb_inflight_decision *d);

/** Copies the counters. @return 0 or -EINVAL. */
int lb_inflight_stats_get(const struct lb_inflight *ifl,
			  struct lb_inflight_stats *st);

/** "noop", "up", "down" (or "?"). */
const char *lb_inflight_action_name(enum lb_inflight_action a);

/** Short name of a reason, for logs and lbctl (or "?"). */
const char *lb_inflight_reason_name(enum lb_inflight_reason r);

#endif /* LB_INFLIGHT_H */
