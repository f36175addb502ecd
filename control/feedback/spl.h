/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_SPL_H
#define LB_SPL_H

/**
 * @file
 * Self-perceived load (SPL) autoscaling policy of the control plane.
 *
 * Seed: "Scaling of distributed software applications using self-perceived
 * load indicators" (WO 2021/086339). Each instance of a service rates its
 * own load as execution time / benchmark time (claim 3, [0062]-[0063]);
 * the control plane keeps the latest rating per instance, decays it by its
 * age (claim 5, [0066]-[0067]), averages the decayed values into a total
 * load indicator (claim 4, [0072]) and compares the total with a lower and
 * an upper threshold to pick one of three actions (claim 6, FIG. 7):
 *
 *   total >= upper          -> increment (one more instance)
 *   total <  lower          -> decrement (one instance fewer)
 *   lower <= total < upper  -> no-op
 *
 * Guards such as cooldowns, minimum/maximum instance counts or dead bands
 * are not part of the seed's policy and live in scale_guard.
 *
 * Time is passed in as monotonic nanoseconds. A service is configured and
 * resized (instance add/remove) by one control thread; nothing here takes
 * a lock. No operation allocates after lb_spl_svc_create().
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lb/init.h"

/** Largest instance capacity of one service (size of a decision record). */
#define LB_SPL_INST_MAX 128u
/** Lower threshold of the seed's example, [0073]. */
#define LB_SPL_LOWER_DEFAULT 0.2
/** Upper threshold of the seed's example, [0074]. */
#define LB_SPL_UPPER_DEFAULT 0.8
/**
 * Largest SPL accepted from an instance. Not from the seed: a request that
 * took 1000 times its benchmark (150 s for the seed's 150 ms example) is
 * beyond any HTTP timeout, so a larger value is a broken sender.
 */
#define LB_SPL_MAX_DEFAULT 1000.0
/**
 * Default bound of one instance's decayed value, as a multiple of the upper
 * threshold. Not from the seed: the total is a mean, so one instance that
 * reports 1000 (or never stops reporting its worst value) could hold the
 * service above the upper threshold on its own. Bounded at twice the upper
 * threshold, one instance of n moves the total by at most 2 * upper / n:
 * its share. 0 turns the bound off.
 */
#define LB_SPL_CLAMP_DEFAULT 2.0
/** Decay of the seed's worked example (divide by age in ms, [0067]). */
#define LB_SPL_DECAY_DEFAULT "age"
/** Default half-life of the "halflife" decay (not from the seed). */
#define LB_SPL_HALFLIFE_DEFAULT_NS 1000000000ull
/** Default age that "normalized" maps to 5 (not from the seed). */
#define LB_SPL_NORM_SPAN_DEFAULT_NS 1000000000ull
/**
 * Totals within this distance of a threshold count as meeting it, so a
 * total that is exactly the threshold on paper (0.7 and 0.9 average to
 * 0.8) is not lost to the rounding of the sum.
 */
#define LB_SPL_EPSILON 1e-9
/** Registry size for decay functions (built-ins included). */
#define LB_SPL_DECAY_SLOTS 16u

/** Parameters of the decay functions; each reads only its own field. */
struct lb_spl_decay_params {
	/** "halflife": age at which a value has lost half its weight. */
	uint64_t halflife_ns;
	/** "normalized": age mapped to factor 5; older ages stay at 5. */
	uint64_t norm_span_ns;
};

/**
 * A decay function (claim 5: "modify each self-perceived load indicator
 * according to a decay factor based on an age"). Registered by name.
 */
struct lb_spl_decay_ops {
	/** Name used in configuration ("age", "halflife", ...). */
	const char *name;
	/**
	 * Checks the parameters this function reads; NULL when it reads
	 * none. Returns 0 or -EINVAL.
	 */
	int (*check)(const struct lb_spl_decay_params *p);
	/**
	 * Returns the decayed value of @p spl (finite, >= 0) generated
	 * @p age_ns ago. The result must be finite and >= 0; the service
	 * rejects the decision otherwise.
	 */
	double (*decay)(const struct lb_spl_decay_params *p, double spl,
			uint64_t age_ns);
};

/**
 * Registers a decay function. The ops and its name must outlive every
 * service. Registration is for start-up, before services are created;
 * it is not thread-safe.
 *
 * @return 0, -EINVAL (NULL ops, empty name, no decay callback), -EEXIST
 *   (name taken), -ENOSPC (registry full).
 */
int lb_spl_decay_register(const struct lb_spl_decay_ops *ops);

/**
 * Registers the decay function @p ops (a `static const struct
 * lb_spl_decay_ops`) before main(), from the file that defines it
 * (control/feedback/spl_decay_*.c); a failure aborts.
 */
#define LB_SPL_DECAY_REGISTER(ops)                                             \
	LB_INIT(lb_spl_decay_init_##ops)                                       \
	{                                                                      \
		lb_init_check(lb_spl_decay_register(&(ops)), "decay function", \
			      (ops).name);                                     \
	}

/**
 * Looks up a decay function by name (case-sensitive): "none", "age",
 * "normalized", "halflife", and any other registered.
 *
 * @return the ops, or NULL (errno ENOENT; EINVAL for a NULL name).
 */
const struct lb_spl_decay_ops *lb_spl_decay_find(const char *name);

/**
 * Writes the registered decay functions' names to @p buf, in name order,
 * separated by @p sep. @return the length snprintf() would write.
 */
int lb_spl_decay_names(char *buf, size_t len, const char *sep);

/**
 * Instance side (claim 3, [0063]): SPL = execution time / benchmark time,
 * both in the same unit. 120 ms against a 150 ms benchmark gives 0.8.
 *
 * @return 0 with *spl set; -EINVAL for NULL, NaN, infinite or negative
 *   execution time, or a benchmark that is not finite and > 0; -ERANGE
 *   when the quotient overflows.
 */
int lb_spl_ratio(double exec_time, double bench_time, double *spl);

/**
 * Instance side from execution timestamps ([0061]: execution time is the
 * time between the first and the last execution location marker).
 *
 * @return 0 with *spl set; -EINVAL for NULL or a zero benchmark; -ERANGE
 *   when @p last_ns precedes @p first_ns.
 */
int lb_spl_ratio_ns(uint64_t first_ns, uint64_t last_ns, uint64_t bench_ns,
		    double *spl);

/** Configuration of one service. Fill with lb_spl_conf_init(). */
struct lb_spl_conf {
	/** Instance ids are 0 .. capacity-1; 1 .. LB_SPL_INST_MAX. */
	unsigned int capacity;
	/** Total below this -> decrement. Default 0.2 ([0073]). */
	double lower;
	/** Total at or above this -> increment. Default 0.8 ([0074]). */
	double upper;
	/** Reports above this are rejected. Default LB_SPL_MAX_DEFAULT. */
	double spl_max;
	/**
	 * A decayed value counts at most clamp * upper in the total; 0 = no
	 * bound. Default LB_SPL_CLAMP_DEFAULT.
	 */
	double clamp;
	/** Decay function name. Default "age" ([0067], Table 4). */
	const char *decay;
	/** Parameters for the decay function. */
	struct lb_spl_decay_params decay_params;
};

/** Fills @p conf with the defaults above and the given @p capacity. */
void lb_spl_conf_init(struct lb_spl_conf *conf, unsigned int capacity);

/** Opaque per-service state. */
struct lb_spl_svc;

/**
 * Creates a service with no instances.
 *
 * @return the service, or NULL with errno EINVAL (bad configuration:
 *   capacity 0 or above LB_SPL_INST_MAX, thresholds not finite, negative
 *   or lower > upper, spl_max not finite and > 0, clamp not finite and
 *   >= 0, decay parameters
 *   refused by the decay's check), ENOENT (unknown decay name) or ENOMEM.
 */
struct lb_spl_svc *lb_spl_svc_create(const struct lb_spl_conf *conf);

/** Frees a service; NULL is ignored. */
void lb_spl_svc_free(struct lb_spl_svc *svc);

/**
 * Replaces the thresholds. On error nothing changes.
 * @return 0 or -EINVAL (see lb_spl_svc_create()).
 */
int lb_spl_svc_set_thresholds(struct lb_spl_svc *svc, double lower,
			      double upper);

/**
 * Replaces the decay function and its parameters. On error nothing
 * changes.
 * @return 0, -EINVAL (NULL, parameters refused) or -ENOENT (unknown name).
 */
int lb_spl_svc_set_decay(struct lb_spl_svc *svc, const char *name,
			 const struct lb_spl_decay_params *params);

/**
 * Adds an instance. It enters with SPL 0 generated at @p now_ns, as the
 * seed's repositories show new instances (Table 1, Table 6), so a fresh
 * instance pulls the average down until it reports.
 *
 * @return 0, -EINVAL (NULL, id >= capacity) or -EEXIST.
 */
int lb_spl_inst_add(struct lb_spl_svc *svc, unsigned int id, uint64_t now_ns);

/**
 * Removes an instance; its value leaves the average at once.
 * @return 0, -EINVAL (NULL, id >= capacity) or -ENOENT.
 */
int lb_spl_inst_remove(struct lb_spl_svc *svc, unsigned int id);

/**
 * Records a report: @p spl from instance @p id, generated at @p gen_ns
 * (the instance's timestamp, [0065]; pass @p now_ns when the response
 * carried none), received at @p now_ns. Only the newest report of an
 * instance is kept. Rejections are counted in struct lb_spl_stats and
 * leave the state untouched.
 *
 * @return 0; -EINVAL for NULL or an spl that is NaN, infinite, negative or
 *   above spl_max; -ERANGE for @p gen_ns after @p now_ns; -ENOENT for an
 *   unknown instance; -ESTALE for a report generated before the one kept
 *   (or before the instance was added).
 */
int lb_spl_report(struct lb_spl_svc *svc, unsigned int id, double spl,
		  uint64_t gen_ns, uint64_t now_ns);

/**
 * Reads an instance's latest SPL and its generation time.
 * @return 0, -EINVAL or -ENOENT.
 */
int lb_spl_inst_get(const struct lb_spl_svc *svc, unsigned int id, double *spl,
		    uint64_t *gen_ns);

/** Number of instances currently in the service (0 for NULL). */
unsigned int lb_spl_inst_count(const struct lb_spl_svc *svc);

/** Adjustment actions of claim 6. */
enum lb_spl_action {
	LB_SPL_NOOP = 0,
	LB_SPL_INCREMENT,
	LB_SPL_DECREMENT,
};

/** Why an action was chosen. */
enum lb_spl_reason {
	/** No instances: no indicator to average, nothing to decide on. */
	LB_SPL_R_NO_INSTANCES = 0,
	/** total >= upper ("meets an upper threshold", claim 6). */
	LB_SPL_R_AT_OR_ABOVE_UPPER,
	/** total < lower ("does not meet a lower threshold", claim 6). */
	LB_SPL_R_BELOW_LOWER,
	/** lower <= total < upper. */
	LB_SPL_R_IN_BAND,
};

/** One instance's contribution to a decision. */
struct lb_spl_sample {
	unsigned int id;
	/** Instance has not reported since it was added (SPL 0). */
	bool fresh;
	/** Latest SPL as reported. */
	double spl;
	/** now_ns - generation time. */
	uint64_t age_ns;
	/** SPL after decay, bounded by clamp * upper: what the average is
	 *  made of. */
	double decayed;
	/** The decayed value was above clamp * upper and counts as that. */
	bool clamped;
};

/**
 * A decision with everything it was made from, so that the control plane
 * can log it in its decision history as is.
 */
struct lb_spl_decision {
	uint64_t now_ns;
	/** Name of the decay function used. */
	const char *decay;
	double lower;
	double upper;
	/** Instances in ascending id order. */
	unsigned int nb_inst;
	struct lb_spl_sample inst[LB_SPL_INST_MAX];
	/** Total load indicator: mean of inst[].decayed (0 if none). */
	double total;
	enum lb_spl_action action;
	enum lb_spl_reason reason;
};

/**
 * Decays every instance's latest SPL to @p now_ns, averages them and
 * selects the action (FIG. 7, blocks 705-725).
 *
 * @return 0 with @p d filled; -EINVAL for NULL; -ERANGE when @p now_ns
 *   precedes a kept report (clock went backwards); -EDOM when the decay
 *   function returned a value that is not finite and >= 0. On error @p d
 *   is undefined and the error is counted.
 */
int lb_spl_decide(struct lb_spl_svc *svc, uint64_t now_ns,
		  struct lb_spl_decision *d);

/** Counters of a service; all monotonic. */
struct lb_spl_stats {
	uint64_t reports;      /**< lb_spl_report() calls on the service */
	uint64_t accepted;     /**< reports kept */
	uint64_t bad_value;    /**< NaN, inf, negative, above spl_max */
	uint64_t bad_time;     /**< future gen time; decide clock backwards */
	uint64_t unknown_inst; /**< reports for an id not in the service */
	uint64_t stale;	       /**< reports older than the kept one */
	uint64_t bad_decay;    /**< decay returned non-finite or negative */
	uint64_t clamped;      /**< decayed values bounded by clamp * upper */
	uint64_t decisions;    /**< successful lb_spl_decide() calls */
	uint64_t increments;
	uint64_t decrements;
	uint64_t noops;
};

/** Copies the counters. @return 0 or -EINVAL. */
int lb_spl_stats_get(const struct lb_spl_svc *svc, struct lb_spl_stats *st);

/** "noop", "increment", "decrement" (or "?"). */
const char *lb_spl_action_str(enum lb_spl_action a);

/** Short text of a reason, for logs (or "?"). */
const char *lb_spl_reason_str(enum lb_spl_reason r);

#endif /* LB_SPL_H */
