/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_HTTP_FOLLOW_H
#define LB_HTTP_FOLLOW_H

/**
 * @file
 * HTTP/1.x message framing for a load balancer that forwards TCP segments
 * without terminating TCP.
 *
 * For each flow of an HTTP service the worker keeps one struct
 * lb_http_follow and feeds it the two byte streams in order: the
 * client -> backend requests and the backend -> client responses. The
 * follower applies the framing rules of RFC 9112 (section 6, "Message
 * Body Length"; section 7, chunked transfer coding) to find where every
 * message's header block begins and ends, hands the bytes of each header
 * block to the caller as they pass (so a scanner can look for X-SPL and
 * friends in every response, not only the first segment of a
 * connection), matches responses to requests first-in first-out, and
 * times request last byte -> response first byte.
 *
 * The state is fixed-size: nothing is allocated and no message is
 * buffered. Framing-relevant field values (Content-Length,
 * Transfer-Encoding, Expect, Upgrade) are parsed on the fly, one byte at a
 * time, with a 16-byte token buffer; every other byte of a header block
 * is only classified and passed on.
 *
 * When the follower cannot be sure of the framing any more (protocol
 * violation, HTTP/2, a protocol switch, a tunnel, too many pipelined
 * requests, a lost segment) it becomes unfollowable: it reports the
 * reason once, counts it, and from then on ignores the flow, so it never
 * attributes a header block to the wrong response.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Capacity of the queue of outstanding requests of one flow. */
#define LB_HTTP_FOLLOW_QUEUE_MAX 16

/** Default longest start line, field line or chunk-size line (octets). */
#define LB_HTTP_FOLLOW_MAX_LINE_DEFAULT 16384u
/** Default longest header block, status/request line included. */
#define LB_HTTP_FOLLOW_MAX_HEAD_DEFAULT 65536u
/** Upper bound accepted for max_head (and thus max_line). */
#define LB_HTTP_FOLLOW_MAX_HEAD_CAP (1u << 20)
/** Lower bound accepted for max_line (and thus max_head). */
#define LB_HTTP_FOLLOW_MAX_LINE_MIN 32u

/** Why a flow became unfollowable. Stable values: they index counters. */
enum lb_http_follow_reason {
	LB_HTTP_FOLLOW_OK = 0,        /**< still followed */
	LB_HTTP_FOLLOW_R_SYNTAX,      /**< malformed start or field line */
	LB_HTTP_FOLLOW_R_FRAMING,     /**< bad/conflicting CL, TE or chunk */
	LB_HTTP_FOLLOW_R_OBS_FOLD,    /**< field line starting with SP/HTAB */
	LB_HTTP_FOLLOW_R_BARE_LF,     /**< LF without CR, when rejected */
	LB_HTTP_FOLLOW_R_LINE_TOO_LONG, /**< line longer than max_line */
	LB_HTTP_FOLLOW_R_HEAD_TOO_LONG, /**< header/trailer over max_head */
	LB_HTTP_FOLLOW_R_HTTP2,       /**< HTTP/2 connection preface */
	LB_HTTP_FOLLOW_R_VERSION,     /**< HTTP major version other than 1 */
	LB_HTTP_FOLLOW_R_UPGRADE,     /**< 101 Switching Protocols */
	LB_HTTP_FOLLOW_R_CONNECT,     /**< CONNECT tunnel established */
	LB_HTTP_FOLLOW_R_QUEUE_FULL,  /**< too many pipelined requests */
	LB_HTTP_FOLLOW_R_LOST,        /**< caller reported a sequence gap */
	LB_HTTP_FOLLOW_R_TRUNCATED,   /**< closed inside a framed message */
	LB_HTTP_FOLLOW_R_MAX
};

/** Request methods whose responses are framed differently. */
enum lb_http_follow_mclass {
	LB_HTTP_FOLLOW_M_OTHER = 0,
	LB_HTTP_FOLLOW_M_HEAD,    /**< response never has content */
	LB_HTTP_FOLLOW_M_CONNECT, /**< a 2xx response opens a tunnel */
};

/** What to do with a message carrying both Transfer-Encoding and CL. */
enum lb_http_follow_tecl {
	/** Unfollowable (RFC 9112 6.3 item 3: "ought to be handled as an
	 * error"); never wrong, whatever the endpoints decide. */
	LB_HTTP_FOLLOW_TECL_REJECT = 0,
	/** Transfer-Encoding overrides Content-Length (RFC 9112 6.3 item 3
	 * processing rule). */
	LB_HTTP_FOLLOW_TECL_TE_WINS,
};

/** Per-service settings; see lb_http_follow_conf_default(). */
struct lb_http_follow_conf {
	uint32_t max_line;    /**< octets of a line, terminator excluded */
	uint32_t max_head;    /**< octets of a header or trailer section */
	uint32_t queue_depth; /**< outstanding requests, 1..QUEUE_MAX */
	bool reject_bare_lf;  /**< false: a lone LF ends a line (9112 2.2) */
	enum lb_http_follow_tecl te_with_cl;
};

/** @name Flags of struct lb_http_follow_req */
/**@{*/
#define LB_HTTP_FOLLOW_REQ_EXPECT_100 0x01 /**< Expect: 100-continue */
#define LB_HTTP_FOLLOW_REQ_UPGRADE 0x02    /**< carries an Upgrade field */
#define LB_HTTP_FOLLOW_REQ_HTTP10 0x04     /**< HTTP/1.0 request line */
#define LB_HTTP_FOLLOW_REQ_CHUNKED 0x08    /**< chunked request content */
/**@}*/

/** A request, as seen by the request callbacks. */
struct lb_http_follow_req {
	uint32_t seq;       /**< 1 for the first request of the flow */
	uint8_t mclass;     /**< enum lb_http_follow_mclass */
	uint8_t flags;      /**< LB_HTTP_FOLLOW_REQ_*, final at head end */
	uint32_t head_len;  /**< header block octets so far */
	uint64_t body_len;  /**< content octets (chunk framing excluded) */
	uint64_t first_ns;  /**< time of the first byte of the request line */
	uint64_t done_ns;   /**< time of the last byte, in req_done */
};

/** @name Flags of struct lb_http_follow_resp */
/**@{*/
#define LB_HTTP_FOLLOW_RESP_TIMED 0x01   /**< latency_ns is meaningful */
#define LB_HTTP_FOLLOW_RESP_INTERIM 0x02 /**< 1xx other than 101 */
#define LB_HTTP_FOLLOW_RESP_CHUNKED 0x04 /**< chunked content */
#define LB_HTTP_FOLLOW_RESP_CLOSE 0x08   /**< content ends at close */
#define LB_HTTP_FOLLOW_RESP_HTTP10 0x10  /**< HTTP/1.0 status line */
/**@}*/

/** A response, as seen by the response callbacks. */
struct lb_http_follow_resp {
	/** Matched request (FIFO), 0 if none was outstanding. */
	uint32_t req_seq;
	uint16_t status;     /**< status code, 0 before head end */
	uint8_t req_mclass;  /**< method class of the matched request */
	uint8_t flags;       /**< LB_HTTP_FOLLOW_RESP_* */
	uint32_t head_len;   /**< header block octets so far */
	uint64_t body_len;   /**< content octets (chunk framing excluded) */
	uint64_t first_ns;   /**< time of the first byte of the status line */
	uint64_t done_ns;    /**< time of the last byte, in resp_done */
	uint64_t req_done_ns; /**< matched request's last byte, if TIMED */
	/** first_ns - req_done_ns; only if the request was complete before
	 * this response began (TIMED), else 0. */
	uint64_t latency_ns;
};

/**
 * Callbacks, any of which may be NULL. They run synchronously inside the
 * feeding call and must not call back into the same follower. The
 * *_head_bytes callbacks receive every octet of a header block, start
 * line and final empty line included, in as many pieces as the segments
 * cut it; the pointer is only valid during the call. Content and chunked
 * trailer sections are never reported. A head that is followed by
 * unfollowable() instead of *_head_end() is incomplete and must be
 * discarded. A 101 response, or a 2xx response to CONNECT, gets its
 * resp_head_end() and is then followed by unfollowable().
 */
struct lb_http_follow_ops {
	void (*req_head_start)(void *ctx, const struct lb_http_follow_req *rq);
	void (*req_head_bytes)(void *ctx, const struct lb_http_follow_req *rq,
			       const uint8_t *p, size_t n);
	void (*req_head_end)(void *ctx, const struct lb_http_follow_req *rq);
	void (*req_done)(void *ctx, const struct lb_http_follow_req *rq);
	void (*resp_head_start)(void *ctx,
				const struct lb_http_follow_resp *rs);
	void (*resp_head_bytes)(void *ctx,
				const struct lb_http_follow_resp *rs,
				const uint8_t *p, size_t n);
	void (*resp_head_end)(void *ctx, const struct lb_http_follow_resp *rs);
	void (*resp_done)(void *ctx, const struct lb_http_follow_resp *rs);
	void (*unfollowable)(void *ctx, enum lb_http_follow_reason why);
};

/** Read-only profile shared by all flows of a service (all workers). */
struct lb_http_follow_prof {
	struct lb_http_follow_conf conf;
	struct lb_http_follow_ops ops;
};

/** Per-worker counters; one writer, never shared between workers. */
struct lb_http_follow_stats {
	uint64_t requests;  /**< requests whose last byte was seen */
	uint64_t responses; /**< final responses completed */
	uint64_t interim;   /**< 1xx responses completed */
	uint64_t unmatched; /**< final responses with no request queued */
	uint64_t unfollowable[LB_HTTP_FOLLOW_R_MAX]; /**< by reason */
};

/** Parser state of one direction. Private: use the functions. */
struct lb_http_follow_dir {
	uint64_t acc;        /* number being read: CL element, chunk size */
	uint64_t clen;       /* agreed Content-Length */
	uint64_t remaining;  /* content octets left in CL body or chunk */
	uint64_t body_len;
	uint64_t first_ns;
	uint64_t done_ns;
	uint64_t peer_ns;    /* response: matched request's last byte */
	uint32_t seq;
	uint32_t line_len;
	uint32_t sec_len;
	uint32_t head_len;
	uint16_t flags;
	uint16_t status;
	uint8_t state;
	uint8_t eol;
	uint8_t vstate;
	uint8_t fld;
	uint8_t cand;
	uint8_t name_pos;
	uint8_t pos;
	uint8_t tok_len;
	uint8_t mclass;
	char tok[16];
};

/**
 * Follower of one flow, allocated by the caller (per-worker pool) and
 * set up with lb_http_follow_init(). All fields are private.
 */
struct lb_http_follow {
	const struct lb_http_follow_prof *prof;
	struct lb_http_follow_stats *stats;
	void *ctx;
	struct lb_http_follow_dir req;
	struct lb_http_follow_dir resp;
	/* Outstanding requests: seq q_head .. q_tail-1, slot seq % MAX. */
	uint64_t q_done_ns[LB_HTTP_FOLLOW_QUEUE_MAX];
	uint8_t q_mclass[LB_HTTP_FOLLOW_QUEUE_MAX];
	uint8_t q_flags[LB_HTTP_FOLLOW_QUEUE_MAX];
	uint32_t q_head;
	uint32_t q_tail;
	uint32_t tunnel_seq; /* request awaiting its switch/tunnel verdict */
	uint8_t tunnel_reason;
	uint8_t reason;      /* enum lb_http_follow_reason */
	uint8_t closed;
};

/** Fills @p conf with the documented defaults. */
void lb_http_follow_conf_default(struct lb_http_follow_conf *conf);

/**
 * Validates @p conf (NULL: defaults) and builds a profile.
 * @return 0, -EINVAL (NULL prof/ops, unknown te_with_cl) or -ERANGE
 *   (max_line < LB_HTTP_FOLLOW_MAX_LINE_MIN, max_line > max_head,
 *   max_head > LB_HTTP_FOLLOW_MAX_HEAD_CAP, queue_depth outside
 *   1..LB_HTTP_FOLLOW_QUEUE_MAX).
 */
int lb_http_follow_prof_init(struct lb_http_follow_prof *prof,
			     const struct lb_http_follow_conf *conf,
			     const struct lb_http_follow_ops *ops);

/**
 * Starts following a new flow.
 * @param stats per-worker counters, or NULL.
 * @param ctx passed to every callback.
 * @return 0 or -EINVAL.
 */
int lb_http_follow_init(struct lb_http_follow *f,
			const struct lb_http_follow_prof *prof,
			struct lb_http_follow_stats *stats, void *ctx);

/**
 * Feeds the next in-order bytes of the client -> backend stream.
 * Requests are queued from their first byte; the response stream is
 * matched to them first-in first-out. After a request carrying Upgrade
 * or using CONNECT, a further request before that request's final
 * response makes the flow unfollowable, since its bytes may already
 * belong to the other protocol.
 * @param now_ns time the bytes were seen; all of them share it.
 * @return 0; -EPROTO once the flow is unfollowable (the caller may
 *   release the follower); -EPIPE after lb_http_follow_close();
 *   -EINVAL for NULL f, or NULL data with len > 0.
 */
int lb_http_follow_request(struct lb_http_follow *f, const uint8_t *data,
			   size_t len, uint64_t now_ns);

/** Same as lb_http_follow_request() for the backend -> client stream. */
int lb_http_follow_response(struct lb_http_follow *f, const uint8_t *data,
			    size_t len, uint64_t now_ns);

/**
 * The backend -> client stream ended (backend FIN, or a RST either way).
 * Completes a close-delimited response; a response cut inside its head,
 * its Content-Length or its chunks makes the flow unfollowable
 * (LB_HTTP_FOLLOW_R_TRUNCATED). Later feeding returns -EPIPE.
 * @return 0, -EPROTO (unfollowable), -EPIPE (already closed), -EINVAL.
 */
int lb_http_follow_close(struct lb_http_follow *f, uint64_t now_ns);

/**
 * The caller saw a sequence gap (lost or reordered segment it cannot
 * repair) in either direction: the flow becomes unfollowable
 * (LB_HTTP_FOLLOW_R_LOST) unless it already is.
 * @return 0 or -EINVAL.
 */
int lb_http_follow_lost(struct lb_http_follow *f);

/** @return LB_HTTP_FOLLOW_OK while followed, else why not. */
static inline enum lb_http_follow_reason
lb_http_follow_reason(const struct lb_http_follow *f)
{
	return (enum lb_http_follow_reason)f->reason;
}

/** @return requests started whose final response has not completed. */
static inline uint32_t
lb_http_follow_outstanding(const struct lb_http_follow *f)
{
	return f->q_tail - f->q_head;
}

/** @return a short stable name ("syntax", "http2", ...) for counters. */
const char *lb_http_follow_reason_name(enum lb_http_follow_reason r);

#endif /* LB_HTTP_FOLLOW_H */
