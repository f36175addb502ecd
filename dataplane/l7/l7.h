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
 * A header block that arrives whole in one segment (the usual case) is
 * scanned in block mode, in place; only a block that a segment boundary
 * cuts takes a stream from the pool's stream set, until it ends. So a
 * followed flow holds no scanner state between header blocks, and the set
 * holds far fewer streams than the pool follows flows (one per 16 flows,
 * at least 64; a pool of 64 flows or fewer has one per flow). A cut block
 * that finds no stream free loses its fields (blocks_lost); its exchange
 * is still followed.
 *
 * Each flow reads the fields of its own header map (struct lb_hdr_map,
 * one per service), so services name their headers differently while one
 * database serves them all.
 *
 * One pool per worker: no locks, no allocation after creation except in
 * lb_l7_set_db() (the streams are opened for the new database there, and
 * only reset per header block).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lb/hdr_conf.h"
#include "lb/hdr_scan.h"
#include "lb/http_err.h"
#include "http_follow.h"

#define LB_L7_NONE UINT32_MAX
/** Header maps of one pool: one per service slot. */
#define LB_L7_MAPS 64u

/** One final response and the request it answered. */
struct lb_l7_obs {
	uint16_t status;
	bool timed;          /**< latency_ns is meaningful */
	bool has_spl;        /**< X-SPL accepted */
	bool has_spl_time;   /**< X-SPL-Time accepted */
	bool has_expect;     /**< X-Expect-Ms accepted (on the request) */
	bool has_prio;       /**< X-Priority accepted (on the request) */
	bool has_orca;       /**< endpoint-load-metrics accepted */
	/** The request's path starts with a prefix of lb_l7_set_excl(): the
	 * response never counts as an error. */
	bool err_excluded;
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
	/** Header blocks cut by a segment boundary when no stream was
	 * free, or in progress when the database changed: their fields
	 * are lost (the exchange is still followed). */
	uint64_t blocks_lost;
	uint64_t db_switches;  /**< lb_l7_set_db() calls that took */
	uint64_t active;       /**< entries in use now */
};

struct lb_l7_pool;

/**
 * A pool of @p capacity followed flows, and as many scanner streams,
 * scanning headers with @p db (the worker's own copy) and @p scratch (the
 * worker's). Every header map starts as @p db's default one (the first
 * field of each kind). @p conf NULL for the follower's defaults; @p owner
 * is passed back to the callbacks. NULL with errno on failure.
 */
struct lb_l7_pool *lb_l7_pool_create(uint32_t capacity,
				     const struct lb_hdr_db *db,
				     struct lb_hdr_scratch *scratch,
				     const struct lb_http_follow_conf *conf,
				     lb_l7_obs_fn obs,
				     lb_l7_inflight_fn inflight, void *owner);

void lb_l7_pool_free(struct lb_l7_pool *p);

/**
 * Scans with @p db and @p scratch from now on: every stream is opened
 * anew for @p db (the allocation happens here, at table-switch time), header
 * blocks cut in progress lose their fields (blocks_lost), and every header
 * map is reset to @p db's default. The previous database and scratch are
 * no longer used once this returns 0 and may be freed.
 * @return 0, -EINVAL, or -ENOMEM (the pool keeps its previous database).
 */
int lb_l7_set_db(struct lb_l7_pool *p, const struct lb_hdr_db *db,
		 struct lb_hdr_scratch *scratch);

/** Sets header map @p map (< LB_L7_MAPS), which flows opened with it
 * read from their next header block on. */
void lb_l7_set_map(struct lb_l7_pool *p, uint32_t map,
		   const struct lb_hdr_map *m);

/**
 * Request path prefixes of map @p map (@p n of them, at most
 * LB_HTTP_ERR_PATHS; 0 for none) whose responses are reported with
 * err_excluded. The request target is compared byte for byte (origin
 * form, as the request line gives it) from the next request on.
 */
void lb_l7_set_excl(struct lb_l7_pool *p, uint32_t map,
		    const char paths[][LB_HTTP_ERR_PATH_MAX + 1], unsigned int n);

/**
 * Starts following a flow whose next client byte has TCP sequence number
 * @p client_seq and next backend byte @p backend_seq (host order); @p tag
 * comes back with its observations; its fields are read through header
 * map @p map. @return the entry, or LB_L7_NONE (pool empty).
 */
uint32_t lb_l7_open(struct lb_l7_pool *p, uint32_t client_seq,
		    uint32_t backend_seq, uint32_t tag, uint32_t map);

/** Ends an entry (flow closed or expired); its requests leave in flight. */
void lb_l7_close(struct lb_l7_pool *p, uint32_t idx);

/**
 * One TCP segment of a followed flow: @p dir 0 client -> backend, 1
 * backend -> client; @p seq its sequence number, @p data/@p len its
 * payload, @p fin whether it carries FIN.
 * @return 0 (LB_L7_PASS) while the flow is followed, -EPROTO once it is
 *   not; on a gated flow's client segments, an enum lb_l7_verdict; on a
 *   backend segment, LB_L7_REJECT when it ends the last response before
 *   a refused request (forward it, then answer the refusal).
 */
int lb_l7_segment(struct lb_l7_pool *p, uint32_t idx, int dir, uint32_t seq,
		  const uint8_t *data, uint32_t len, bool fin, uint64_t now_ns);

void lb_l7_stats_get(const struct lb_l7_pool *p, struct lb_l7_stats *st);

/**
 * Bytes the pool holds: its entries, its streams (Hyperscan's state
 * included) and its bookkeeping; divided by its capacity, what one
 * followed flow costs.
 */
size_t lb_l7_pool_mem(const struct lb_l7_pool *p);

/** Streams in the pool's set: the header blocks it can follow cut. */
uint32_t lb_l7_pool_streams(const struct lb_l7_pool *p);

/**
 * Prefetches the state lb_l7_segment() reads for entry @p idx, so that a
 * caller handling a burst can overlap its cache misses with the work on
 * the segments before. A hint: does nothing for an index out of range.
 */
void lb_l7_prefetch(const struct lb_l7_pool *p, uint32_t idx);

/* ---- admission of requests -----------------------------------------------
 * On a flow whose gate is on, every request that starts a client segment
 * while no request is being sent (the first one, each keep-alive one, and
 * a pipelined one sent in a segment of its own) is admitted or refused
 * before its bytes go on: lb_l7_segment() says to hold the client segments
 * of its header block until the block is complete, then asks the pool's
 * admission callback with what the block said. A request refused behind
 * earlier ones still unanswered stays held (with whatever the client sends
 * after it) until the last of their responses has gone through:
 * lb_l7_segment() then says LB_L7_REJECT on that backend segment. A
 * request that starts inside a segment after the end of another cannot be
 * held apart from it: the callback hears of it with can_refuse false.
 */

/** lb_l7_segment() on a client segment of a gated flow. */
enum lb_l7_verdict {
	LB_L7_PASS = 0,	   /**< forward it */
	LB_L7_HOLD = 1,	   /**< hold it: a request's head is incomplete */
	LB_L7_RELEASE = 2, /**< forward the held segments, then this one */
	LB_L7_REJECT = 3,  /**< refused: drop the held segments and this one */
	/** Nothing new while holding, or no more may be held: drop it. */
	LB_L7_REPEAT = 4,
};

/** A request at its admission. */
struct lb_l7_req {
	bool has_prio;	 /**< X-Priority accepted */
	bool partial;	 /**< decided before its header block ended */
	bool can_refuse; /**< false: admitted whatever the answer */
	uint32_t prio;
	uint32_t entry; /**< the flow's entry in the pool */
};

/** Admission of one request of flow @p tag: true refuses it. */
typedef bool (*lb_l7_admit_fn)(void *owner, uint32_t tag,
			       const struct lb_l7_req *rq);

/** Sets the admission callback of the pool (NULL: no gate anywhere). */
void lb_l7_set_admit(struct lb_l7_pool *p, lb_l7_admit_fn fn);

/**
 * Receives each request head of a flow whose heads are watched
 * (lb_l7_heads()), start line to empty line, before its admission is
 * asked: @p head and @p len, valid during the call only, or NULL and 0
 * when segments cut the head (its first pieces are gone).
 */
typedef void (*lb_l7_head_fn)(void *owner, uint32_t tag, uint32_t entry,
			      const uint8_t *head, size_t len);

/** Sets the head callback of the pool (NULL: no heads given). */
void lb_l7_set_head(struct lb_l7_pool *p, lb_l7_head_fn fn);

/** Watches the request heads of entry @p idx or not (not after
 * lb_l7_open()). */
void lb_l7_heads(struct lb_l7_pool *p, uint32_t idx, bool on);

/**
 * From the admission callback: stops following entry @p idx. The segment
 * being fed returns -EPROTO, its octets do not count as sent, and no
 * later request of it is asked about.
 */
void lb_l7_stop(struct lb_l7_pool *p, uint32_t idx);

/** Turns the gate of entry @p idx on or off (off after lb_l7_open()). */
void lb_l7_gate(struct lb_l7_pool *p, uint32_t idx, bool on);

/**
 * Decides the held request now, with what is known (no header value):
 * the worker holds no more of its segments. @return LB_L7_RELEASE,
 * LB_L7_REJECT, LB_L7_REPEAT (refused behind unanswered requests: drop
 * the segment, hold nothing more), or LB_L7_PASS if nothing was held.
 */
int lb_l7_decide(struct lb_l7_pool *p, uint32_t idx);

/**
 * Sequence numbers of entry @p idx: the next client octet after what it
 * was fed, the next server octet, and the first octet of the request
 * held or refused (what the backend expects next).
 */
void lb_l7_seq(const struct lb_l7_pool *p, uint32_t idx, uint32_t *cli_nxt,
	       uint32_t *srv_nxt, uint32_t *req_seq);

/**
 * Why entry @p idx is no longer followed: what the follower gave up on
 * (LB_HTTP_FOLLOW_R_LOST for a gap), or LB_HTTP_FOLLOW_OK while it is
 * followed or when it stopped because the backend closed first. Once
 * stopped, lb_l7_seq() gives the octets before the segment that stopped
 * it: that segment's fresh octets are not counted.
 */
enum lb_http_follow_reason lb_l7_reason(const struct lb_l7_pool *p,
					uint32_t idx);

#endif /* LB_L7_H */
