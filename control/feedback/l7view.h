/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_L7VIEW_H
#define LB_L7VIEW_H

/**
 * @file
 * lb-control's view of what HTTP services say about their backends: the
 * LB_FB_HTTP, LB_FB_SPL and LB_FB_ORCA feedback records merged per
 * backend table slot, and per service the SPL policy's reading of them.
 *
 * Per backend slot:
 *  - the latest self-perceived load (X-SPL) and its generation time, the
 *    record's time minus the age the worker measured from X-SPL-Time
 *    (no X-SPL-Time: generated when the response passed);
 *  - over a sliding window of LB_L7V_BUCKETS buckets of LB_L7V_BUCKET_NS
 *    (10 s of 1 s buckets): responses, 5xx, QoS misses (a request that
 *    gave X-Expect-Ms answered late) and the latency distribution, a
 *    fixed log-scale histogram (see LB_L7V_LAT_SUB for its resolution);
 *  - the latest ORCA cpu and memory utilization;
 *  - record counts since the slot got its backend.
 *
 * Per service, one SPL policy instance (struct lb_spl_svc, seed WO
 * 2021/086339) whose instances are the service's active backends: their
 * latest SPL decayed by age, averaged into the total load indicator and
 * compared with the thresholds. The decision is only shown; nothing here
 * scales anything. And the average of the service's requests in flight
 * over its last LB_L7V_TICKS samples (one per lb-control tick).
 *
 * Times are the dataplane's monotonic nanoseconds (struct lb_fb ts_ns),
 * passed in by the caller. Pure C; not thread-safe.
 */

#include <stdbool.h>
#include <stdint.h>

#include "lb/conf.h"
#include "lb/fb.h"
#include "spl.h"

/** Length of one window bucket. */
#define LB_L7V_BUCKET_NS 1000000000ull
/** Buckets in the sliding window: the window is their span, 10 s. */
#define LB_L7V_BUCKETS 10u
/** Samples in a service's in-flight average (ticks, 100 ms each by
 * default: the last second). */
#define LB_L7V_TICKS 10u
/**
 * Latency histogram: microseconds; values below 8 us have a bin each,
 * above that every power of two is cut into LB_L7V_LAT_SUB bins of equal
 * width, up to LB_L7V_LAT_MAX_US, with one overflow bin beyond. A
 * percentile is reported as the middle of its bin, so it is within
 * 1/(2 * LB_L7V_LAT_SUB) = 6.25 % of the exact value (an overflow is
 * reported as LB_L7V_LAT_MAX_US).
 */
#define LB_L7V_LAT_SUB 8u
/** Largest latency the histogram tells apart: 2^27 us, about 134 s. */
#define LB_L7V_LAT_MAX_US (1ull << 27)

/** What one backend slot's records say, as of a given time. */
struct lb_l7view_be {
	bool member; /**< one of the service's SPL instances (active) */
	/* SPL (X-SPL). */
	bool spl_seen;	     /**< a valid SPL arrived */
	double spl;	     /**< latest, as reported */
	uint64_t spl_gen_ns; /**< its generation time (dataplane clock) */
	uint64_t spl_age_ns; /**< now - generation time */
	/** Latest SPL after the service's decay (0 before any report):
	 * what it adds to the total load indicator. Members only. */
	double spl_decayed;
	/* ORCA (endpoint-load-metrics). */
	bool orca_seen;
	double orca_cpu;
	double orca_mem;
	/* Records since the slot got its backend. */
	uint64_t spl_records;
	uint64_t http_records;
	uint64_t orca_records;
	/* Over the window. */
	uint64_t win_responses; /**< final responses */
	uint64_t win_5xx;
	uint64_t win_expect;   /**< responses whose request gave X-Expect-Ms */
	uint64_t win_qos_miss; /**< of which answered late or untimed */
	uint64_t win_timed;    /**< responses with a latency */
	double rate_5xx;       /**< win_5xx / win_responses; 0 if none */
	double rate_qos_miss;  /**< win_qos_miss / win_expect; 0 if none */
	/** Latency percentiles in ms (0 while win_timed is 0). */
	double p50_ms;
	double p90_ms;
	double p99_ms;
};

/** What one service's backends add up to, as of a given time. */
struct lb_l7view_svc {
	unsigned int nb_inst;	  /**< SPL instances: active backends */
	double total;		  /**< total load indicator ([0072]) */
	enum lb_spl_action action; /**< what the policy would do */
	enum lb_spl_reason reason;
	double lower;
	double upper;
	const char *decay;	 /**< decay function name */
	double inflight_avg;	 /**< requests in flight, averaged */
	unsigned int inflight_n; /**< samples in that average */
	uint64_t spl_rejected;	 /**< reports the policy refused */
	uint64_t spl_clamped;	 /**< decayed values bounded to their share */
	uint64_t untracked; /**< members past LB_SPL_INST_MAX, left out */
};

struct lb_l7view;

/**
 * An empty view: SPL thresholds LB_SPL_LOWER_DEFAULT and
 * LB_SPL_UPPER_DEFAULT, decay LB_SPL_DECAY_DEFAULT ("age", [0067]).
 * @return the view, or NULL with errno ENOMEM.
 */
struct lb_l7view *lb_l7view_create(void);

void lb_l7view_free(struct lb_l7view *l);

/**
 * Merges one record. Kinds other than HTTP, SPL and ORCA, slots out of
 * range and values that are not finite and >= 0 are ignored.
 */
void lb_l7view_feed(struct lb_l7view *l, const struct lb_fb *r);

/**
 * Forgets slot (@p svc, @p be): it got another backend (or none).
 * Leaves the SPL policy if it was a member.
 */
void lb_l7view_reset(struct lb_l7view *l, uint32_t svc, uint32_t be);

/**
 * Makes the slot one of its service's SPL instances, or not. A new
 * member enters with SPL 0 at @p now_ns (the seed's new instances), then
 * its latest report, if any, replaces it.
 * @return 0, -EINVAL (out of range), -ENOSPC (LB_SPL_INST_MAX members
 *   already), -ENOMEM.
 */
int lb_l7view_member(struct lb_l7view *l, uint32_t svc, uint32_t be,
		     bool member, uint64_t now_ns);

/** One in-flight sample of service @p svc (one per tick). */
void lb_l7view_sample(struct lb_l7view *l, uint32_t svc, uint64_t inflight);

/** Forgets service @p svc's in-flight samples (the slot changed hands). */
void lb_l7view_svc_reset(struct lb_l7view *l, uint32_t svc);

/**
 * Backend slot (@p svc, @p be) as of @p now_ns.
 * @return 0 or -EINVAL.
 */
int lb_l7view_be_get(struct lb_l7view *l, uint32_t svc, uint32_t be,
		     uint64_t now_ns, struct lb_l7view_be *out);

/**
 * Service slot @p svc as of @p now_ns: the SPL decision over its members.
 * @return 0 or -EINVAL.
 */
int lb_l7view_svc_get(struct lb_l7view *l, uint32_t svc, uint64_t now_ns,
		      struct lb_l7view_svc *out);

/** Percentile @p q (0 < q <= 1) of @p n latencies in a histogram of
 * lb_l7view_lat_bins() bins, in microseconds; 0 for none. For tests. */
double lb_l7view_lat_quantile(const uint32_t *bins, uint64_t n, double q);

/** Bin of a latency of @p us microseconds. */
unsigned int lb_l7view_lat_bin(uint64_t us);

/** Number of histogram bins. */
unsigned int lb_l7view_lat_bins(void);

#endif /* LB_L7VIEW_H */
