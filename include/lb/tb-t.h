/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_TB_T_H
#define LB_TB_T_H

/**
 * @file
 * The token buckets' types (tb.h): the global bucket that lives in shared
 * memory, the local buckets of a worker, and their configurations.
 */

#include <stdatomic.h>
#include <stdint.h>

/** Nanotokens per token: a rate in tokens/s adds that many nanotokens/ns. */
#define LB_TB_NT_PER_TOKEN 1000000000ULL
/** Largest bucket capacity, in tokens (keeps 2 x capacity in nanotokens
 * plus one second of the largest rate well inside 64 bits). */
#define LB_TB_CAPACITY_MAX 1000000000ULL
/** Largest refill rate, in tokens per second (about 100 Gb/s in bytes). */
#define LB_TB_RATE_MAX 1000000000000ULL
/** Most demand intervals the weighted average can look back on. */
#define LB_TB_INTERVALS_MAX 16u
/** Shortest and longest accepted interval and negative-cache hold. */
#define LB_TB_INTERVAL_MIN_NS 1000ULL
#define LB_TB_INTERVAL_MAX_NS 3600000000000ULL
/** Default interval length: 100 ms. */
#define LB_TB_DEFAULT_INTERVAL_NS 100000000ULL
/** Default number of intervals x of the weighted average. */
#define LB_TB_DEFAULT_INTERVALS 4u
/** Largest per-lcore table of local buckets. */
#define LB_TB_TABLE_MAX (1u << 24)

/** When the global bucket refills (both add rate x elapsed, capped). */
enum lb_tb_refill {
	/** On every request to dispense (claim 6). Default. */
	LB_TB_REFILL_EACH = 0,
	/** Only once the bucket cannot satisfy a request (claims 7, 15). */
	LB_TB_REFILL_ON_SHORTAGE,
	/** Never by time: tokens arrive only through lb_tb_global_deposit(),
	 * for a bucket fed by an upper tier (the cluster tier). */
	LB_TB_REFILL_NONE,
};

/** How a local bucket sizes the batch it borrows. */
enum lb_tb_batch {
	/** Linearly weighted average of recent demand (claims 12, 20). */
	LB_TB_BATCH_WAVG = 0,
	/** A fixed fraction of the global capacity (claims 10, 21). */
	LB_TB_BATCH_FRACTION,
};

/** What the weighted average counts per interval. */
enum lb_tb_demand {
	/** Tokens serviced, i.e. admitted (tar_x of claim 12). Default. */
	LB_TB_DEMAND_SERVED = 0,
	/** Tokens asked for, admitted or throttled. */
	LB_TB_DEMAND_OFFERED,
};

/** How long a refused key stays throttled without asking again. */
enum lb_tb_neg {
	/** Until the current interval ends (claim 3). Default. */
	LB_TB_NEG_INTERVAL = 0,
	/** For neg_hold_ns after the refusal. */
	LB_TB_NEG_HOLD,
	/** No negative cache: every shortage asks the global bucket. */
	LB_TB_NEG_OFF,
};

/** What a local bucket does with a grant smaller than its shortage. */
enum lb_tb_partial {
	/** Accept any grant, keep it, throttle the request (claim 1). */
	LB_TB_PARTIAL_KEEP = 0,
	/** Ask for at least the shortage; smaller grants are refused. */
	LB_TB_PARTIAL_NONE,
};

/** Configuration of a global bucket. Zero fields other than capacity and
 * rate select the seed's defaults. */
struct lb_tb_global_conf {
	/** Maximum tokens held, 1..LB_TB_CAPACITY_MAX. */
	uint64_t capacity;
	/** Refill rate in tokens per second, 1..LB_TB_RATE_MAX. */
	uint64_t rate;
	/** Dispense only while more than this many tokens are available
	 * (claim 5); 0 is claim 1's "greater than zero". < capacity. */
	uint64_t threshold;
	enum lb_tb_refill refill;
};

/**
 * A global bucket. Plain data without pointers, so it may be placed in
 * memory shared by several processes (a memzone); all mutable state is two
 * lock-free 64-bit atomics.
 *
 * Design: @c last_ns is the refill clock. A refill claims the time
 * [last_ns, now) with one compare-and-swap that moves last_ns to now, so
 * every nanosecond is converted into tokens by exactly one caller. The
 * claimed nanotokens are then folded into @c tokens_nt by the same
 * compare-and-swap that takes the grant: new = min(cap, old + add) - give.
 * Hence the total dispensed never exceeds capacity + rate x elapsed, no
 * matter how callers race or how stale their now_ns is.
 */
struct lb_tb_global {
	/** Available nanotokens, <= capacity_nt. */
	_Alignas(64) _Atomic uint64_t tokens_nt;
	/** Time up to which refill has been credited. */
	_Atomic uint64_t last_ns;
	uint64_t capacity_nt;
	/** Tokens per second, i.e. nanotokens per nanosecond. */
	uint64_t rate;
	/** capacity_nt / rate + 1: an elapsed time this long fills the
	 * bucket from empty; shorter ones give rate x elapsed <= capacity_nt,
	 * so the product never overflows. */
	uint64_t fill_ns;
	uint64_t threshold;
	uint32_t refill; /**< enum lb_tb_refill */
};

/** Per local bucket counters; all count takes except @c borrowed. */
struct lb_tb_counters {
	uint64_t admitted;  /**< takes admitted */
	uint64_t throttled; /**< takes throttled, negative-cache hits too */
	uint64_t borrows;   /**< requests sent to the global bucket */
	uint64_t refused;   /**< of those, requests that fell short */
	uint64_t neg_hits;  /**< takes throttled by the negative cache */
	uint64_t borrowed;  /**< tokens received from the global bucket */
};

/** Configuration shared by the local buckets of one lcore's table. */
struct lb_tb_local_conf {
	/** Demand interval length, LB_TB_INTERVAL_MIN_NS..MAX_NS. */
	uint64_t interval_ns;
	/** x of claim 12: intervals averaged, 1..LB_TB_INTERVALS_MAX. */
	uint32_t nb_intervals;
	enum lb_tb_batch batch;
	enum lb_tb_demand demand;
	enum lb_tb_neg neg;
	enum lb_tb_partial partial;
	/** LB_TB_BATCH_FRACTION only: share of the capacity, (0, 1]. */
	double batch_fraction;
	/** Smallest batch asked for (>= 1); the shortage always counts. */
	uint64_t min_batch;
	/** Largest batch asked for, 0 for the global capacity. */
	uint64_t max_batch;
	/** LB_TB_BATCH_WAVG only: the batch is at least this share of the
	 * global capacity, [0, 1]; 0 (the default) for the seed's average
	 * alone. Claim 10's fraction as a floor under claim 12's average:
	 * a key seen less than once per interval then still borrows for
	 * many admissions instead of one token at a time. */
	double min_fraction;
	/** LB_TB_NEG_HOLD only: hold time, INTERVAL_MIN_NS..MAX_NS. */
	uint64_t neg_hold_ns;
};

/** One throttle key's local bucket on one lcore; owned by that lcore. */
struct lb_tb_local {
	/* What lb_tb_local_take()'s common case touches comes first, so it
	 * stays inside one cache line. */
	_Alignas(64) uint64_t key;
	/** Whole tokens borrowed and not yet spent. */
	uint64_t tokens;
	uint64_t interval_start;
	/** Demand of the current interval so far. */
	uint64_t cur_served;
	uint64_t cur_offered;
	/** The table's user's, zeroed by lb_tb_local_init() (admission: a
	 * key without a slot in the shared table, and since when). */
	uint32_t tag;
	/** The table's count of moves to the front at this bucket's last:
	 * in the first line, which a check of a present key reads anyway. */
	uint32_t lru_stamp;
	struct lb_tb_counters cnt;
	/** Throttled without asking the global bucket while now < this. */
	uint64_t neg_until;
	/** Size of the last batch asked for (shortage included). */
	uint64_t last_batch;
	/** Completed intervals in hist, <= nb_intervals. */
	uint32_t nb_hist;
	/** hist[0] = tar_1 (last completed interval), hist[i] = tar_(i+1). */
	uint64_t hist[LB_TB_INTERVALS_MAX];
};

#endif /* LB_TB_T_H */
