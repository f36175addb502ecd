/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_DEFERQ_H
#define LB_DEFERQ_H

/**
 * @file
 * Deferred queue of the total cluster shutdown state
 * (adaptive-request-dispatch-paper, sections 3.2 and 4.2, Algorithm 3).
 *
 * When every trial of Algorithm 2 failed, the request (here: the TCP SYN
 * of a new connection) is pushed to a bounded first-come first-served
 * queue and re-dispatched periodically, "as a new client", until a backend
 * takes it. One struct lb_deferq is what a worker lcore keeps per virtual
 * service. It never locks and never allocates after lb_deferq_create().
 *
 * Entries are identified by a 64-bit key, the client's flow identity, so
 * that a retransmitted SYN joins the entry of its first transmission
 * instead of taking a second place. The caller keeps the packet; the queue
 * stores an opaque 64-bit cookie for it (for example an mbuf index).
 *
 * Order (the paper: "the order of execution is also to be maintained at
 * all times in the queue"):
 *  - An entry's place is fixed by its first push. Joins and re-arms never
 *    move it; removals keep the relative order of the others.
 *  - Expiry is by age (time since the first push), so the expired entries
 *    are always the oldest ones; they are handed back first.
 *  - Retries proceed in rounds. A round starts at the oldest entry when
 *    its retry time has come, and walks towards the newest, handing back
 *    each entry in turn. It ends at the newest entry or at the first one
 *    whose retry time has not come yet: a newer entry is never retried
 *    ahead of an older one that is waiting out its retry gap (head of
 *    line). Newer entries thus join the rhythm of the older ones.
 *  - Within one lb_deferq_poll() call, entries are handed back in strictly
 *    increasing arrival order, each at most once (an LB_DEFERQ_EXHAUSTED
 *    call directly follows the LB_DEFERQ_DUE call of the same entry).
 *  - With an unlimited budget a round fits in one call: a call hands back
 *    exactly the longest run of due entries from the oldest one. A budget
 *    cuts a round; the next call resumes it, unless the oldest entry is
 *    due again, which starts a new round from it. Retries thus go to the
 *    oldest entries first; when the budget cannot cover the queue within
 *    one gap, the newest entries are retried less often (they all share
 *    one fate: in the total cluster shutdown state every backend is down
 *    for all of them).
 *  - Per entry, the retry gap is a lower bound: an entry is handed back no
 *    earlier than retry_gap_ns after its push or its previous retry. With
 *    an unlimited budget, head of line delays it by less than one more
 *    gap: it is handed back by the first poll at or after a time less
 *    than two gaps after its push or previous retry.
 *  - lb_deferq_kick() (a backend is back: "once one or more nodes are up,
 *    the queued requests must be re-dispatched", section 3.2) starts a
 *    round that ignores retry times once, so every entry is retried from
 *    the oldest on, at once.
 *
 * Time is the caller's monotonic now_ns; a value older than one already
 * seen is taken as the newest seen (time never runs backwards here).
 *
 * Not thread-safe: one owner (an lcore) per struct lb_deferq.
 */

#include <stdint.h>

/**
 * Default capacity: serviceq's queue_length of the paper's experiment
 * (section 6: retry_gap = 0, queue_length = 2048).
 */
#define LB_DEFERQ_CAPACITY_DEFAULT 2048u

/** Largest capacity accepted (entries are indexed with 32 bits). */
#define LB_DEFERQ_CAPACITY_MAX (1u << 20)

/**
 * Default retry gap: 0 ns, serviceq's default RETRY_GAP ("recommended 0"),
 * used in the paper's experiment. Every poll then retries every entry
 * once. A dataplane whose re-dispatch is an asynchronous SYN to a backend
 * should set a gap of at least the backend connect timeout.
 */
#define LB_DEFERQ_GAP_DEFAULT_NS 0ull

/** Largest retry gap accepted: one hour (larger is a unit mistake). */
#define LB_DEFERQ_GAP_MAX_NS (3600ull * 1000000000ull)

/**
 * Default longest wait in the queue: 30 s. The seed has no expiry; a
 * bounded queue without one fills up for good during a long outage. 30 s
 * covers a client's SYN retransmissions at 1, 3, 7 and 15 s (Linux initial
 * RTO 1 s, doubling) and answers the RST well before the client gives up
 * by itself (about 127 s with Linux's default tcp_syn_retries = 6).
 */
#define LB_DEFERQ_WAIT_DEFAULT_NS (30ull * 1000000000ull)

/** Largest finite wait accepted: one day. */
#define LB_DEFERQ_WAIT_MAX_NS (86400ull * 1000000000ull)

/** max_wait_ns meaning "never expire" (serviceq's behaviour). */
#define LB_DEFERQ_WAIT_FOREVER UINT64_MAX

/** Returned by lb_deferq_push() when the key was already queued. */
#define LB_DEFERQ_JOINED 1

/** Configuration; all-zero (or NULL) means the defaults above. */
struct lb_deferq_conf {
	/**
	 * Least time between two retries of an entry, and between its push
	 * and its first retry; 0 (the default) retries at every poll.
	 * At most LB_DEFERQ_GAP_MAX_NS and below the wait.
	 */
	uint64_t retry_gap_ns;
	/**
	 * Longest time an entry stays queued, from its first push; 0 means
	 * LB_DEFERQ_WAIT_DEFAULT_NS, LB_DEFERQ_WAIT_FOREVER never expires,
	 * otherwise at most LB_DEFERQ_WAIT_MAX_NS.
	 */
	uint64_t max_wait_ns;
	/**
	 * Most retries of an entry; 0 (the default, the paper's) retries
	 * until the entry is dispatched or expires.
	 */
	uint32_t max_attempts;
	/**
	 * Seed of the key index hash, so clients cannot choose flows that
	 * collide; the dataplane passes a random value per queue.
	 */
	uint64_t hash_seed;
};

/** One queued request, as handed to the caller. */
struct lb_deferq_entry {
	uint64_t key;	   /**< client flow identity */
	uint64_t cookie;   /**< caller's handle of the newest packet */
	uint64_t enq_ns;   /**< time of the first push */
	uint64_t next_ns;  /**< earliest time of the next retry */
	uint32_t attempts; /**< retries handed back so far */
	uint32_t joins;	   /**< duplicate pushes merged into this entry */
};

/** Why an entry is handed to the poll callback. */
enum lb_deferq_event {
	/** Its retry time came: re-run dispatch (Algorithm 3). */
	LB_DEFERQ_DUE = 0,
	/** It waited max_wait_ns: answer a RST. Removed after the call. */
	LB_DEFERQ_EXPIRED,
	/**
	 * Its last allowed retry (max_attempts) was answered KEEP: answer a
	 * RST. Follows that DUE call directly; removed after the call.
	 */
	LB_DEFERQ_EXHAUSTED,
	/** lb_deferq_flush(): the queue is being emptied. Removed after. */
	LB_DEFERQ_FLUSHED,
};

/** The caller's answer to an LB_DEFERQ_DUE event. */
enum lb_deferq_verdict {
	/** Still no backend: keep the place, retry after the gap. */
	LB_DEFERQ_KEEP = 0,
	/** Dispatched: remove the entry. */
	LB_DEFERQ_DONE,
};

/**
 * Called for each entry handed back. The entry is read-only and valid
 * during the call only. For events other than LB_DEFERQ_DUE the return
 * value is ignored. The callback may call lb_deferq_push() on the same
 * queue (a new key is queued at the tail and not handed back by the
 * current call; a join of the entry being handed back only swaps its
 * cookie); lb_deferq_remove(), lb_deferq_flush(), lb_deferq_kick() and
 * lb_deferq_poll() answer -EBUSY meanwhile.
 */
typedef enum lb_deferq_verdict (*lb_deferq_cb)(enum lb_deferq_event ev,
					       const struct lb_deferq_entry *e,
					       void *arg);

/** Counters since creation. */
struct lb_deferq_stats {
	uint64_t pushed;     /**< new entries queued */
	uint64_t joined;     /**< pushes merged into a queued key */
	uint64_t overflowed; /**< pushes refused with -ENOSPC */
	uint64_t retried;    /**< LB_DEFERQ_DUE events */
	uint64_t dispatched; /**< LB_DEFERQ_DONE verdicts */
	uint64_t expired;    /**< LB_DEFERQ_EXPIRED events */
	uint64_t exhausted;  /**< LB_DEFERQ_EXHAUSTED events */
	uint64_t removed;    /**< lb_deferq_remove() and flushed entries */
	uint32_t depth;	     /**< entries queued now */
	uint32_t capacity;   /**< fixed at creation */
};

/** Per-service deferred queue of one lcore (opaque). */
struct lb_deferq;

/**
 * Checks a configuration without creating anything (for the control
 * plane, before it publishes one).
 *
 * @return 0; -EINVAL if @p conf is NULL or the gap is not below the wait;
 *   -ERANGE if the gap exceeds LB_DEFERQ_GAP_MAX_NS or a finite wait
 *   exceeds LB_DEFERQ_WAIT_MAX_NS.
 */
int lb_deferq_conf_check(const struct lb_deferq_conf *conf);

/**
 * Creates an empty queue of @p capacity entries. This is the only
 * function that allocates.
 *
 * @param conf  NULL for the defaults.
 * @return the queue, or NULL with errno EINVAL (capacity 0, bad @p conf),
 *   ERANGE (capacity > LB_DEFERQ_CAPACITY_MAX, out-of-range @p conf) or
 *   ENOMEM.
 */
struct lb_deferq *lb_deferq_create(uint32_t capacity,
				   const struct lb_deferq_conf *conf);

/**
 * Frees @p q; NULL is accepted. Cookies still queued are not released:
 * call lb_deferq_flush() first if they own resources.
 */
void lb_deferq_free(struct lb_deferq *q);

/**
 * Queues the request of flow @p key (PushToDeferredQueue, Algorithm 3).
 * O(1) expected.
 *
 * If @p key is already queued, the push joins that entry: it keeps its
 * place, first-push time, retry time and attempts, and takes @p cookie
 * (the newest packet, e.g. a SYN with a fresher timestamp option); the
 * replaced cookie is written to @p old_cookie for the caller to release.
 * A join needs no room, so it succeeds on a full queue.
 *
 * @param old_cookie  NULL, or receives the replaced cookie on a join.
 * @return 0 when queued as a new entry, LB_DEFERQ_JOINED when joined,
 *   -ENOSPC when full (counted in overflowed; nothing is evicted),
 *   -EINVAL if @p q is NULL.
 */
int lb_deferq_push(struct lb_deferq *q, uint64_t key, uint64_t cookie,
		   uint64_t now_ns, uint64_t *old_cookie);

/**
 * Hands back, in the order described in the file comment, the entries
 * that expired and then those whose retry time has come, calling @p cb
 * once for each (plus an LB_DEFERQ_EXHAUSTED call right after a DUE call
 * that used the last allowed attempt and was answered KEEP).
 *
 * An entry whose age reached max_wait_ns is handed as LB_DEFERQ_EXPIRED
 * and removed. A due entry is handed as LB_DEFERQ_DUE with its attempts
 * already counted; on LB_DEFERQ_DONE it is removed, on LB_DEFERQ_KEEP its
 * next retry is set to now_ns + retry_gap_ns.
 *
 * Costs O(1) plus O(1) per entry handed back.
 *
 * @param budget  most entries handed back by this call, at least 1;
 *   UINT32_MAX for no limit.
 * @return the number of entries handed back, or -EINVAL (@p q or @p cb
 *   NULL, budget 0), -EBUSY (called from a callback of @p q).
 */
int lb_deferq_poll(struct lb_deferq *q, uint64_t now_ns, uint32_t budget,
		   lb_deferq_cb cb, void *arg);

/**
 * Makes every queued entry due now: the next lb_deferq_poll() calls walk
 * the whole queue from the oldest entry, ignoring retry times, up to their
 * budgets. For the dataplane to call when a backend of the service comes
 * back up, so queued requests are re-dispatched in order without waiting
 * out their gaps (section 3.2).
 *
 * @return 0, -EINVAL if @p q is NULL, -EBUSY from a callback of @p q.
 */
int lb_deferq_kick(struct lb_deferq *q);

/**
 * Removes the entry of @p key, e.g. when its connection was established
 * by other means. O(1) expected.
 *
 * @param cookie  NULL, or receives the entry's cookie.
 * @return 0, -ENOENT if not queued, -EINVAL if @p q is NULL, -EBUSY from
 *   a callback of @p q.
 */
int lb_deferq_remove(struct lb_deferq *q, uint64_t key, uint64_t *cookie);

/**
 * Copies the entry of @p key to @p out. O(1) expected.
 *
 * @return 0, -ENOENT if not queued, -EINVAL if @p q or @p out is NULL.
 */
int lb_deferq_lookup(const struct lb_deferq *q, uint64_t key,
		     struct lb_deferq_entry *out);

/**
 * Empties the queue, handing every entry to @p cb as LB_DEFERQ_FLUSHED in
 * arrival order (for example when the service is deleted, so the caller
 * can answer RSTs and release its packets). Counted in removed.
 *
 * @return the number of entries flushed, or -EINVAL (@p q or @p cb NULL),
 *   -EBUSY from a callback of @p q.
 */
int lb_deferq_flush(struct lb_deferq *q, lb_deferq_cb cb, void *arg);

/**
 * Earliest time at which lb_deferq_poll() has something to hand back:
 * the soonest of the oldest entry's expiry, its retry time and the retry
 * time of the entry a round in progress resumes at (0 after
 * lb_deferq_kick()). Lets a worker skip polling until then.
 *
 * @return that time (possibly in the past), or UINT64_MAX if @p q is
 *   empty or NULL.
 */
uint64_t lb_deferq_next_deadline(const struct lb_deferq *q);

/** Entries queued now; 0 if @p q is NULL. */
uint32_t lb_deferq_depth(const struct lb_deferq *q);

/**
 * Copies the counters and the depth.
 *
 * @return 0, or -EINVAL if @p q or @p out is NULL.
 */
int lb_deferq_stats(const struct lb_deferq *q, struct lb_deferq_stats *out);

#endif /* LB_DEFERQ_H */
