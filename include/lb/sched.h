/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_SCHED_H
#define LB_SCHED_H

/**
 * @file
 * Schedulers: how a worker picks the backend of a new flow. Each is an ops
 * table in its own file that registers itself by name with
 * LB_SCHED_REGISTER() (`adaptive`, `maglev`, `rr`, `wrr` in
 * dataplane/sched/), and owns per-worker state for one service's backend
 * set, so picks take no lock. Workers look the ops up when they switch to
 * a new table, never per packet.
 *
 * A new flow is dispatched in trials (Algorithm 2 of the adaptive dispatch
 * paper): trial 1 is pick(); when the backend refuses the connection
 * (RST, ICMP unreachable, no SYN-ACK in time) the worker reports
 * result(be, false) and asks next(prev) for trial 2..n; a completed
 * handshake is result(be, true). Every scheduler gets these signals;
 * `adaptive` turns them into weights, the others only skip the failed
 * backend for the retry.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lb/init.h"
#include "lb/rng.h"

#define LB_SCHED_NAME_MAX 16
#define LB_SCHED_MAX 16

/** One backend as a scheduler sees it. */
struct lb_sched_be {
	uint64_t key;    /**< stable identity (address << 16 | port) */
	uint32_t weight; /**< relative weight, >= 1 */
	bool eligible;   /**< false while drained: no new flows */
};

/**
 * Bounds on what error feedback may do (see lb/adaptive.h): a success
 * removes ceil(e / err_memory) errors; errors count after min_volume
 * outcomes; at most max_eject_pct % of the eligible backends keep their
 * errors; below panic_pct % error-free backends the draw is uniform.
 */
struct lb_sched_guard {
	uint32_t err_memory;
	uint32_t min_volume;
	uint32_t max_eject_pct;
	uint32_t panic_pct;
};

struct lb_sched_ops {
	const char *name;
	const char *help; /**< one line for `lbctl help` */
	/** Per-worker state for @p n backends; NULL with errno set. */
	void *(*create)(const struct lb_sched_be *be, uint32_t n);
	void (*destroy)(void *st);
	/**
	 * Trial 1 for a new flow with hash @p flow_hash.
	 * @return 0 with *be set, -ENOENT if no backend is eligible.
	 */
	int (*pick)(void *st, uint64_t flow_hash, const struct lb_rng *rng,
		    uint32_t *be);
	/**
	 * The next eligible backend after @p prev, round-robin in index
	 * order (trials 2..n). @return 0, -ENOENT if there is none.
	 */
	int (*next)(void *st, uint32_t prev, uint32_t *be);
	/** Outcome of a trial on @p be. */
	void (*result)(void *st, uint32_t be, bool ok);
	/** Drain (false) or undrain (true) @p be. @return 0 or -EINVAL. */
	int (*set_eligible)(void *st, uint32_t be, bool eligible);
	/** Error count the scheduler holds for @p be (0 if it keeps none). */
	uint32_t (*errors)(void *st, uint32_t be);
	/**
	 * Sets the error count of @p be, so that a worker moving to a new
	 * table keeps what it learnt about backends that stayed (no-op for
	 * schedulers that keep none). @return 0 or -EINVAL.
	 */
	int (*set_errors)(void *st, uint32_t be, uint32_t errors);
	/**
	 * Applies @p g, right after create (NULL for schedulers that keep
	 * no errors). @return 0, -EINVAL or -ERANGE.
	 */
	int (*guard)(void *st, const struct lb_sched_guard *g);
	/**
	 * For schedulers whose state is costly to build (maglev's lookup
	 * table takes milliseconds): create() only prepares the work, and
	 * build() does at most about @p budget units of it. A worker calls
	 * it between bursts, so a table change never stalls forwarding.
	 * Until the build is done, pick() and next() answer from what
	 * inherit() handed over, else by a hash of the flow over the
	 * eligible backends. @return 1 while work remains, 0 once the
	 * state is complete. NULL: create() does all the work.
	 */
	int (*build)(void *st, uint32_t budget);
	/**
	 * Hands the lookup of @p old, the previous state of the same
	 * service and scheduler, to @p st, which answers from it until
	 * its own build is done; @p old is destroyed right after. NULL:
	 * nothing worth carrying.
	 */
	void (*inherit)(void *st, void *old);
};

/**
 * Registers @p ops under ops->name; @p ops must outlive the program.
 * Schedulers call it through LB_SCHED_REGISTER().
 * @return 0, -EEXIST (name taken), -ENOSPC, -EINVAL.
 */
int lb_sched_register(const struct lb_sched_ops *ops);

/**
 * Registers the scheduler @p ops (a `static const struct lb_sched_ops`)
 * before main(), from the file that defines it; a failure aborts.
 */
#define LB_SCHED_REGISTER(ops)                                                 \
	LB_INIT(lb_sched_init_##ops)                                           \
	{                                                                      \
		lb_init_check(lb_sched_register(&(ops)), "scheduler",          \
			      (ops).name);                                     \
	}

/** The scheduler called @p name, or NULL. */
const struct lb_sched_ops *lb_sched_find(const char *name);

/**
 * Fills @p out with up to @p max registered schedulers, in name order;
 * returns the count.
 */
unsigned int lb_sched_list(const struct lb_sched_ops **out, unsigned int max);

/**
 * Writes the registered schedulers' names to @p buf, in name order and
 * separated by @p sep, as user-facing messages list them. @return the
 * length snprintf() would write.
 */
int lb_sched_names(char *buf, size_t len, const char *sep);

/* For schedulers that keep no error counts and free their state whole. */
void lb_sched_free(void *st);
void lb_sched_no_result(void *st, uint32_t be, bool ok);
uint32_t lb_sched_no_errors(void *st, uint32_t be);
int lb_sched_no_set_errors(void *st, uint32_t be, uint32_t errors);

/** The scheduler used when a service names none. */
#define LB_SCHED_DEFAULT "adaptive"

#endif /* LB_SCHED_H */
