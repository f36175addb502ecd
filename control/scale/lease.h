/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_LEASE_H
#define LB_LEASE_H

/**
 * @file
 * The scaling leader's lease, as a state machine over the answers of the
 * store that keeps it (control/scale/leader.h does the Redis part): who
 * asks what when, who leads, until when it may act.
 *
 * The lease lives in the store with a time to live (SET NX PX); its
 * holder renews it every `renew` and no one else can. A leader acts only
 * before `valid_until`: the send time of its last successful acquire or
 * renewal plus the TTL less a margin. The store counts the TTL from when
 * it ran the command, which is after the send, so when a leader can no
 * longer renew (the store slow, unreachable, or the lease taken) it has
 * stepped down before anyone else can hold the lease: no two leaders at
 * once, whatever the round trips take, as long as the clocks' rates agree
 * within the margin.
 *
 * Each acquisition gets a term one above every term seen before; a
 * leader's writes are fenced by its term (leader.h), so that what an old
 * leader decided is never applied again once another holds the lease.
 *
 * Pure C, time injected as monotonic nanoseconds; not thread-safe.
 */

#include <stdbool.h>
#include <stdint.h>

/** Longest holder name (the display part of a holder token). */
#define LB_LEASE_ID_LEN 63u
/** Default TTL of the lease: 3 s (project choice: a dead leader's
 * services are handed over within seconds, and a renewal every second
 * survives two lost round trips). */
#define LB_LEASE_TTL_DEFAULT_NS 3000000000ull
/** Default renewal period (TTL / 3). */
#define LB_LEASE_RENEW_DEFAULT_NS 1000000000ull
/** Default margin kept against the clocks' rates and a late tick: 300 ms
 * (10% of the default TTL). */
#define LB_LEASE_MARGIN_DEFAULT_NS 300000000ull

struct lb_lease_params {
	uint64_t ttl_ns;    /**< the lease's TTL in the store */
	uint64_t renew_ns;  /**< leader: period of renewals; follower: of
				 tries at taking the lease */
	uint64_t margin_ns; /**< kept off the end of the TTL */
};

enum lb_lease_role {
	LB_LEASE_FOLLOWER = 0,
	LB_LEASE_LEADER,
};

/** What the caller must ask the store now. */
enum lb_lease_op {
	LB_LEASE_OP_NONE = 0,
	LB_LEASE_OP_ACQUIRE, /**< take the lease if free (term + 1) */
	LB_LEASE_OP_RENEW,   /**< extend it if still ours */
};

/** The store's answer to an op. */
enum lb_lease_outcome {
	LB_LEASE_HELD = 0, /**< ours, with the term given */
	LB_LEASE_TAKEN,	   /**< someone else's (term and holder given) */
	LB_LEASE_FREE,	   /**< nobody's (a renewal found it expired) */
	LB_LEASE_ERROR,	   /**< no answer in time, or a bad one */
};

/** Counters; monotonic. */
struct lb_lease_stats {
	uint64_t acquired;  /**< became leader */
	uint64_t renewed;   /**< renewals that held */
	uint64_t lost;	    /**< renewals that found the lease gone */
	uint64_t expired;   /**< stepped down at valid_until, unrenewed */
	uint64_t errors;    /**< ops without an answer */
	uint64_t stale;	    /**< answers with a term below one seen */
};

struct lb_lease {
	struct lb_lease_params p;
	enum lb_lease_role role;
	uint64_t term;		 /**< highest term seen (held, if leader) */
	uint64_t valid_until_ns; /**< leader: acts strictly before this */
	uint64_t next_ns;	 /**< next op due */
	char leader[LB_LEASE_ID_LEN + 1]; /**< the holder last seen, "" */
	struct lb_lease_stats st;
};

/** Fills @p p with the defaults. */
void lb_lease_params_default(struct lb_lease_params *p);

/**
 * Checks @p p: TTL at least 100 ms, renewal and margin nonzero, renewal
 * plus margin below the TTL. @return 0 or -EINVAL.
 */
int lb_lease_params_check(const struct lb_lease_params *p);

/** A follower that has seen no term; @p p must pass the check. */
void lb_lease_init(struct lb_lease *l, const struct lb_lease_params *p);

/**
 * The op due at @p now_ns (steps down first when valid_until has come).
 */
enum lb_lease_op lb_lease_due(struct lb_lease *l, uint64_t now_ns);

/**
 * The store answered @p op, sent at @p sent_ns, with @p out at @p now_ns:
 * @p term and @p holder (may be NULL) say who holds the lease for HELD
 * and TAKEN. An answer whose term is below the highest seen is a store
 * that lost its data: not believed, counted, treated as an error.
 */
void lb_lease_answer(struct lb_lease *l, enum lb_lease_op op,
		     uint64_t sent_ns, uint64_t now_ns,
		     enum lb_lease_outcome out, uint64_t term,
		     const char *holder);

/**
 * Whether this holder leads at @p now_ns: it does from an acquisition
 * until valid_until, each renewal moving valid_until on. Steps down (a
 * follower from then on, counted as expired) once valid_until is past.
 */
bool lb_lease_leading(struct lb_lease *l, uint64_t now_ns);

/** Steps down at once (lb-control stops, or gives the lease up). */
void lb_lease_step_down(struct lb_lease *l);

/** "leader" or "follower". */
const char *lb_lease_role_name(enum lb_lease_role r);

#endif /* LB_LEASE_H */
