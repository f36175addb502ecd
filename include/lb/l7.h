/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_L7_H
#define LB_L7_H

/**
 * @file
 * Following the HTTP exchanges of a worker's flows without terminating
 * TCP. A flow of an `http` service gets an entry from the worker's pool
 * when its handshake completes; every in-order TCP segment of each
 * direction goes through the HTTP/1.x follower (http_follow), whose header
 * bytes go through the Hyperscan header scanner (hdr_scan). Each final
 * response then yields one observation: status, latency, what the backend
 * said about itself (SPL, ORCA load) and what the request asked for
 * (priority, expected response time).
 *
 * A segment out of order (a gap: lost or reordered) stops the following of
 * that flow: its bytes can no longer be framed with certainty, and a wrong
 * attribution would be worse than none. Such flows are counted.
 *
 * One pool per worker: no locks, no allocation after creation (the
 * Hyperscan streams are opened then and reset per header block).
 */

#include <stdbool.h>
#include <stdint.h>

#include "lb/hdr_scan.h"
#include "lb/http_follow.h"

#define LB_L7_NONE UINT32_MAX

/** One final response and the request it answered. */
struct lb_l7_obs {
	uint16_t status;
	bool timed;          /**< latency_ns is meaningful */
	bool has_spl;        /**< X-SPL accepted */
	bool has_spl_time;   /**< X-SPL-Time accepted */
	bool has_expect;     /**< X-Expect-Ms accepted (on the request) */
	bool has_prio;       /**< X-Priority accepted (on the request) */
	bool has_orca;       /**< endpoint-load-metrics accepted */
	uint64_t latency_ns; /**< request's last byte to response's first */
	double spl;
	uint64_t spl_time_ms; /**< epoch milliseconds */
	uint32_t expect_ms;
	uint32_t prio;
	double orca_cpu;
	double orca_mem;
};

/** Receives each observation of the flow tagged @p tag. */
typedef void (*lb_l7_obs_fn)(void *owner, uint32_t tag,
			     const struct lb_l7_obs *obs);
/** A request of flow @p tag completed (+1), or was answered or
 * abandoned (-1): requests in flight toward its backend. */
typedef void (*lb_l7_inflight_fn)(void *owner, uint32_t tag, int delta);

struct lb_l7_stats {
	uint64_t flows;        /**< flows followed */
	uint64_t pool_full;    /**< http flows not followed: pool empty */
	uint64_t gaps;         /**< flows stopped by an out-of-order segment */
	uint64_t unfollowable; /**< flows the follower gave up on */
	uint64_t requests;
	uint64_t responses;    /**< final responses observed */
};

struct lb_l7_pool;

/**
 * A pool of @p capacity followed flows scanning headers with @p db (the
 * worker's own copy) and @p scratch (the worker's). @p conf NULL for the
 * follower's defaults; @p owner is passed back to the callbacks. NULL with
 * errno on failure.
 */
struct lb_l7_pool *lb_l7_pool_create(uint32_t capacity,
				     const struct lb_hdr_db *db,
				     struct lb_hdr_scratch *scratch,
				     const struct lb_http_follow_conf *conf,
				     lb_l7_obs_fn obs,
				     lb_l7_inflight_fn inflight, void *owner);

void lb_l7_pool_free(struct lb_l7_pool *p);

/**
 * Starts following a flow whose next client byte has TCP sequence number
 * @p client_seq and next backend byte @p backend_seq (host order); @p tag
 * comes back with its observations. @return the entry, or LB_L7_NONE
 * (pool empty).
 */
uint32_t lb_l7_open(struct lb_l7_pool *p, uint32_t client_seq,
		    uint32_t backend_seq, uint32_t tag);

/** Ends an entry (flow closed or expired); its requests leave in flight. */
void lb_l7_close(struct lb_l7_pool *p, uint32_t idx);

/**
 * One TCP segment of a followed flow: @p dir 0 client -> backend, 1
 * backend -> client; @p seq its sequence number, @p data/@p len its
 * payload, @p fin whether it carries FIN.
 * @return 0 while the flow is followed, -EPROTO once it is not.
 */
int lb_l7_segment(struct lb_l7_pool *p, uint32_t idx, int dir, uint32_t seq,
		  const uint8_t *data, uint32_t len, bool fin, uint64_t now_ns);

void lb_l7_stats_get(const struct lb_l7_pool *p, struct lb_l7_stats *st);

#endif /* LB_L7_H */
