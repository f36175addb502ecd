/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_SCALE_GUARD_H
#define LB_SCALE_GUARD_H

/**
 * @file
 * Guards between a scaling policy's raw recommendation and the
 * orchestrator.
 *
 * A policy (spl, inflight, ...) says how many instances it would like;
 * production autoscalers do not act on that number directly. Each tick
 * the guard takes the raw desired count and the pool's state and returns
 * the action to perform, after these stages, in this order:
 *
 *  1. start-up timeout: a pending instance requested at least
 *     startup_timeout_ns ago is to be removed (WSO2 load balancer's
 *     server_startup_delay); this pre-empts everything else;
 *  2. dead band: if |desired - current| <= tolerance * current the
 *     recommendation is the current count (Kubernetes HPA tolerance),
 *     otherwise it is ceil(desired);
 *  3. stabilization: the recommendation is limited to the lowest one of
 *     the last up_window_ns and to the highest one of the last
 *     down_window_ns (HPA behavior.*.stabilizationWindowSeconds);
 *  4. rate limit: at most max(max_*_step, ceil(current * max_*_pct/100))
 *     instances per action (HPA scaling policies, selectPolicy Max);
 *  5. bounds: clamp to [min_instances, max_instances];
 *  6. pending guard: no scale-up while an instance is pending (WSO2);
 *  7. cooldown: no scale-up within up_cooldown_ns and no scale-down
 *     within down_cooldown_ns of the previous action (AWS EC2 Auto
 *     Scaling cooldown).
 *
 * Bounds are hard: a pool outside [min, max] is brought back inside even
 * while a pending guard or a cooldown holds other actions.
 *
 * lb_scale_guard_params_default() gives the seed's behaviour: every guard
 * off except min/max (the seed policies take their decision raw).
 * lb_scale_guard_params_recommended() gives HPA's and WSO2's values.
 *
 * "current" is running + pending: instances the pool has or has asked
 * for. Time is passed in as monotonic nanoseconds; nothing here reads a
 * clock. Allocation happens only in lb_scale_guard_create().
 */

#include <stdbool.h>
#include <stdint.h>

/** Largest instance count accepted anywhere (desired, running, bounds). */
#define LB_SG_INSTANCES_MAX (1u << 20)
/** Largest history ring. */
#define LB_SG_HISTORY_MAX (1u << 20)
/** Largest rate-limit percentage (HPA allows any; 100x is plenty). */
#define LB_SG_PCT_MAX 10000u

#define LB_SG_NS_PER_S 1000000000ull

/** Seed bounds: min_app_instances and max_app_instances of the WSO2
 * example. */
#define LB_SG_MIN_DEFAULT 0u
#define LB_SG_MAX_DEFAULT 5u
/** Default history ring: 1024 ticks covers 300 s at 3.4 ticks/s. */
#define LB_SG_HISTORY_DEFAULT 1024u

/* Recommended values (lb_scale_guard_params_recommended()). */
/** HPA --horizontal-pod-autoscaler-tolerance. */
#define LB_SG_REC_TOLERANCE 0.1
/** HPA behavior.scaleUp.stabilizationWindowSeconds. */
#define LB_SG_REC_UP_WINDOW_NS 0ull
/** HPA behavior.scaleDown.stabilizationWindowSeconds. */
#define LB_SG_REC_DOWN_WINDOW_NS (300 * LB_SG_NS_PER_S)
/** HPA default scale-up policies' periodSeconds. */
#define LB_SG_REC_UP_COOLDOWN_NS (15 * LB_SG_NS_PER_S)
/**
 * HPA default scale-down policy's periodSeconds. AWS EC2 Auto Scaling's
 * DefaultCooldown (300 s) is the alternative for pools without a down
 * window; both together compound into 600 s of hold.
 */
#define LB_SG_REC_DOWN_COOLDOWN_NS (15 * LB_SG_NS_PER_S)
/** HPA default scale-up policy: 4 pods ... */
#define LB_SG_REC_MAX_UP_STEP 4u
/** ... or 100 % (selectPolicy Max). */
#define LB_SG_REC_MAX_UP_PCT 100u
/** HPA default scale-down policy: 100 %. */
#define LB_SG_REC_MAX_DOWN_PCT 100u
/** WSO2 load balancer autoscaler's server_startup_delay. */
#define LB_SG_REC_STARTUP_TIMEOUT_NS (15 * LB_SG_NS_PER_S)
/** HPA minReplicas default. */
#define LB_SG_REC_MIN 1u

/** Configuration. A zero duration, step or percentage turns its guard
 * off. */
struct lb_scale_guard_params {
	/** Lower bound; default 0. */
	uint32_t min_instances;
	/** Upper bound, >= 1; default 5. */
	uint32_t max_instances;
	/** Dead band as a fraction of current, 0..1; default 0 (off). */
	double tolerance;
	/** Scale up only to the lowest recommendation of this window. */
	uint64_t up_window_ns;
	/** Scale down only to the highest recommendation of this window. */
	uint64_t down_window_ns;
	/** No scale-up for this long after any action. */
	uint64_t up_cooldown_ns;
	/** No scale-down for this long after any action. */
	uint64_t down_cooldown_ns;
	/** Instances one scale-up may add (absolute). */
	uint32_t max_up_step;
	/** ... or as a percentage of current; the larger limit wins. */
	uint32_t max_up_pct;
	/** Instances one scale-down may remove (absolute). */
	uint32_t max_down_step;
	/** ... or as a percentage of current, 0..100. */
	uint32_t max_down_pct;
	/** Hold scale-ups while pending > 0. Default false. */
	bool pending_guard;
	/** Remove a pending instance older than this. Default 0 (off). */
	uint64_t startup_timeout_ns;
	/** Recommendations kept for the windows, 1..LB_SG_HISTORY_MAX. */
	uint32_t history_len;
};

enum lb_scale_guard_action {
	LB_SG_NONE = 0,
	LB_SG_UP,   /**< start `count` instances */
	LB_SG_DOWN, /**< stop `count` instances */
	/** Remove the oldest pending instance (the one whose request time
	 * was passed as oldest_pending_ns); repeated while it stays. */
	LB_SG_REMOVE_PENDING,
};

/** The stage that decided the outcome. */
enum lb_scale_guard_reason {
	/** The recommendation is the current count. */
	LB_SG_R_STEADY = 0,
	/** Acted on the recommendation unchanged. */
	LB_SG_R_RECOMMENDED,
	/** Held: the change was within the tolerance. */
	LB_SG_R_TOLERANCE,
	/** The stabilization window held or shortened the change. */
	LB_SG_R_STABILIZED,
	/** The change was cut to the rate limit. */
	LB_SG_R_RATE_LIMITED,
	/** Raised to (or held at) min_instances. */
	LB_SG_R_BELOW_MIN,
	/** Lowered to (or held at) max_instances. */
	LB_SG_R_ABOVE_MAX,
	/** Scale-up held: an instance is pending. */
	LB_SG_R_PENDING,
	/** Held: within the cooldown of the previous action. */
	LB_SG_R_COOLDOWN,
	/** A pending instance exceeded startup_timeout_ns. */
	LB_SG_R_STARTUP_TIMEOUT,
	LB_SG_R_COUNT
};

/** One tick's inputs. */
struct lb_scale_guard_input {
	/** Monotonic time; never less than the previous call's. */
	uint64_t now_ns;
	/**
	 * The policy's raw desired instance count, may be fractional
	 * (HPA: current * metric / target; inflight: l / q or the
	 * decision's target; spl: current +/- 1). Finite, >= 0.
	 */
	double desired;
	/** Instances serving traffic. */
	uint32_t running;
	/** Instances asked for that are not healthy yet. */
	uint32_t pending;
	/** When the oldest pending instance was asked for; read only if
	 * pending > 0. */
	uint64_t oldest_pending_ns;
};

/** A tick's outcome with its intermediate values. */
struct lb_scale_guard_decision {
	/** running + pending. */
	uint32_t current;
	/** ceil(desired). */
	uint32_t raw;
	/** After the dead band: raw, or current within the tolerance. */
	uint32_t recommended;
	/** After the stabilization windows. */
	uint32_t stabilized;
	/** running + pending after the action. */
	uint32_t target;
	enum lb_scale_guard_action action;
	/** Instances to start/stop/remove; 0 for LB_SG_NONE. */
	uint32_t count;
	enum lb_scale_guard_reason reason;
};

/** Counters; all monotonic. */
struct lb_scale_guard_stats {
	uint64_t decisions; /**< accepted calls */
	uint64_t rejected;  /**< calls refused for bad input */
	uint64_t ups;
	uint64_t downs;
	uint64_t removals; /**< LB_SG_REMOVE_PENDING outcomes */
	uint64_t added;	   /**< instances asked for */
	uint64_t removed;  /**< instances stopped (not removals) */
	/** Recommendations dropped from a full history ring while still
	 * inside a window: history_len is too small for the tick rate. */
	uint64_t history_overflows;
	uint64_t by_reason[LB_SG_R_COUNT];
};

/** Opaque guard state of one pool. */
struct lb_scale_guard;

/** Seed behaviour: min 0, max 5, every other guard off. */
void lb_scale_guard_params_default(struct lb_scale_guard_params *p);

/**
 * Production values: min 1 (HPA), max 5, tolerance 0.1 (HPA), down
 * window 300 s (HPA), up window 0 (HPA), rate limit 4 instances or 100 %
 * up and 100 % down (HPA), up and down cooldown 15 s (HPA policy period),
 * pending guard on and start-up timeout 15 s (WSO2).
 */
void lb_scale_guard_params_recommended(struct lb_scale_guard_params *p);

/**
 * Validates a configuration.
 * @return 0; -EINVAL for NULL, max of 0, min > max, tolerance NaN or
 *   outside 0..1, max_down_pct above 100, history_len of 0; -ERANGE for
 *   a count above LB_SG_INSTANCES_MAX, max_up_pct above LB_SG_PCT_MAX or
 *   history_len above LB_SG_HISTORY_MAX.
 */
int lb_scale_guard_params_check(const struct lb_scale_guard_params *p);

/**
 * Creates a guard with no history and no previous action.
 * @return the guard, or NULL with errno EINVAL/ERANGE (see
 *   lb_scale_guard_params_check()) or ENOMEM.
 */
struct lb_scale_guard *
lb_scale_guard_create(const struct lb_scale_guard_params *p);

/** Frees a guard; NULL is ignored. */
void lb_scale_guard_free(struct lb_scale_guard *g);

/** Forgets the history, the previous action and the last time seen. */
void lb_scale_guard_reset(struct lb_scale_guard *g);

/** Copies the configuration in use. @return 0 or -EINVAL. */
int lb_scale_guard_params_get(const struct lb_scale_guard *g,
			      struct lb_scale_guard_params *p);

/**
 * One tick: records the recommendation and decides.
 *
 * The caller is expected to carry out LB_SG_UP and LB_SG_DOWN; the guard
 * starts its cooldowns from them.
 *
 * @return 0 with @p out filled; -EINVAL for NULL or a desired count that
 *   is NaN, infinite or negative; -ERANGE for a desired count, running or
 *   pending above LB_SG_INSTANCES_MAX, @p now_ns before the previous
 *   call's, or oldest_pending_ns after now_ns. On error nothing is
 *   recorded, @p out is untouched and the error is counted.
 */
int lb_scale_guard_decide(struct lb_scale_guard *g,
			  const struct lb_scale_guard_input *in,
			  struct lb_scale_guard_decision *out);

/**
 * Records @p count as the recommendation at @p now_ns without deciding:
 * for a pool taken over as it is (a restarted lb-control adopting the
 * instances it had), whose earlier recommendations are not known, so
 * that the stabilization windows hold it as if it had been decided.
 * @return 0; -EINVAL for NULL; -ERANGE for a count above
 *   LB_SG_INSTANCES_MAX or @p now_ns before the previous call's.
 */
int lb_scale_guard_note(struct lb_scale_guard *g, uint64_t now_ns,
			uint32_t count);

/** Copies the counters. @return 0 or -EINVAL. */
int lb_scale_guard_stats_get(const struct lb_scale_guard *g,
			     struct lb_scale_guard_stats *st);

/** "none", "up", "down", "remove-pending" (or "?"). */
const char *lb_scale_guard_action_name(enum lb_scale_guard_action a);

/** Short name of a reason for logs and lbctl ("cooldown", ...; or "?"). */
const char *lb_scale_guard_reason_name(enum lb_scale_guard_reason r);

#endif /* LB_SCALE_GUARD_H */
