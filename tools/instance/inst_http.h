/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_INST_HTTP_H
#define LB_INST_HTTP_H

/**
 * @file
 * HTTP/1.1 wire format of lb-instance: a request reader that frames the
 * requests of one connection (RFC 9112) and a response builder.
 *
 * The reader needs each request head contiguous in the caller's buffer,
 * but never copies it: an incomplete head is left unconsumed and looked
 * at again, from where the previous look stopped, when more bytes come.
 * Request content is consumed as it arrives and thrown away, so a request
 * of any size costs the same memory. The reader never allocates.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Default limit on a request head (request line to the empty line). */
#define LB_INST_HEAD_MAX_DEFAULT 8192u
/** Smallest and largest head limit accepted. */
#define LB_INST_HEAD_MAX_MIN 256u
#define LB_INST_HEAD_MAX_MAX (1u << 20)
/** Most field lines in one head; more is answered 431. */
#define LB_INST_FIELDS_MAX 100u
/** Longest chunk-size line (size and extensions) in a chunked body. */
#define LB_INST_CHUNK_LINE_MAX 4096u
/** Largest Content-Length or chunk size accepted (2^60 octets). */
#define LB_INST_LENGTH_MAX (1ull << 60)

/** Octets of the request-target kept (enough to match a path prefix). */
#define LB_INST_TARGET_KEEP 63u

/** A request as the server needs it: how to answer, how to frame. */
struct lb_inst_req {
	/** 0: answer normally; else the error status to answer, then close. */
	uint16_t status;
	/** Minor version of HTTP/1.x (0 or 1; 1.2 and above read as 1). */
	uint8_t minor;
	/** HEAD: the response has no content. */
	bool head;
	/** The client wants the connection closed after the response. */
	bool close;
	/** Expect: 100-continue with content to follow. */
	bool expect_continue;
	/** Content is chunked (otherwise content_length octets). */
	bool chunked;
	/** Octets of content when not chunked. */
	uint64_t content_length;
	/** Start of the request-target, NUL-terminated (may be cut short). */
	char target[LB_INST_TARGET_KEEP + 1];
};

/** Events of lb_inst_rx_feed(). */
enum lb_inst_rx_ev {
	/** Everything usable was consumed; feed more bytes. */
	LB_INST_RX_MORE = 0,
	/** A head was parsed: rx->req is valid, its content follows. */
	LB_INST_RX_HEAD,
	/** The request whose head came last is complete. */
	LB_INST_RX_DONE,
	/**
	 * The stream cannot be framed any further: answer rx->req.status
	 * (400, 414, 431, 501 or 505) and close the connection.
	 */
	LB_INST_RX_ERR,
};

/** Reader of one connection's requests. Initialise with _init(). */
struct lb_inst_rx {
	/** The current request, valid from LB_INST_RX_HEAD on. */
	struct lb_inst_req req;
	/* Private. */
	uint32_t head_max;
	uint32_t scan;	  /* head bytes already searched for its end */
	uint8_t state;	  /* enum in inst_http.c */
	uint8_t cr;	  /* a CR was seen at the end of the line so far */
	uint32_t line;	  /* octets of the current chunk or trailer line */
	uint32_t trailer; /* octets of the trailer section so far */
	uint64_t left;	  /* content or chunk octets still to discard */
	bool digits;	  /* the chunk-size line has a hex digit */
	bool ext;	  /* the chunk-size line is past its size */
};

/**
 * Prepares @p rx for a new connection.
 *
 * @param head_max longest request head accepted, within
 *   LB_INST_HEAD_MAX_MIN .. LB_INST_HEAD_MAX_MAX.
 * @return 0 or -EINVAL.
 */
int lb_inst_rx_init(struct lb_inst_rx *rx, uint32_t head_max);

/**
 * True when no byte of a request has been seen since the last request
 * was completed (empty lines between requests do not count).
 */
bool lb_inst_rx_idle(const struct lb_inst_rx *rx);

/**
 * Consumes bytes of the connection's stream and stops at the first
 * event. @p buf must start at the first byte not consumed before; an
 * incomplete head is not consumed, so the caller keeps it and passes it
 * again, with what follows, next time.
 *
 * @param used set to the octets consumed (even for LB_INST_RX_MORE).
 * @return an enum lb_inst_rx_ev. After LB_INST_RX_ERR the reader stays
 *   in error and consumes nothing.
 */
enum lb_inst_rx_ev lb_inst_rx_feed(struct lb_inst_rx *rx, const char *buf,
				   size_t len, size_t *used);

/** What one response says. */
struct lb_inst_resp {
	uint16_t status;
	/** Answer to HEAD: Content-Length is sent, the content is not. */
	bool head;
	/** Send Connection: close. */
	bool close;
	/** Send Connection: keep-alive (an HTTP/1.0 client asked for it). */
	bool keep_alive;
	/** The 29 characters of an IMF-fixdate (lb_inst_http_date()). */
	const char *date;
	/** X-Instance value, a token (NULL: no header). */
	const char *name;
	/** Send X-SPL and X-SPL-Time. */
	bool spl_on;
	/** Name of the SPL header instead of X-SPL (NULL: X-SPL). */
	const char *spl_hdr;
	/** Self-perceived load: finite and >= 0. */
	double spl;
	/** When the SPL was measured, ms since the Unix epoch. */
	uint64_t spl_time_ms;
	/** Send endpoint-load-metrics. */
	bool orca_on;
	/** ORCA cpu_utilization: finite, clamped to 0 .. 100. */
	double cpu_util;
	/** ORCA rps_fractional: finite, clamped to 0 .. 1e9. */
	double rps;
	/** Content; NULL with 0 for none. */
	const char *body;
	size_t body_len;
};

/** Room that any response with a name of up to 64 octets fits in. */
#define LB_INST_RESP_HEAD_MAX 512u

/**
 * Writes a whole response: status line, Date, Content-Type,
 * Content-Length, X-Instance, X-SPL, X-SPL-Time, endpoint-load-metrics,
 * Connection as asked, the empty line and the content (unless @p r
 * answers HEAD).
 *
 * @return the length written, or -ENOSPC when @p cap is too small
 *   (nothing usable is written), -EINVAL for a NULL argument, a status
 *   outside 100..599 or a value that is not finite.
 */
int lb_inst_resp_build(char *buf, size_t cap, const struct lb_inst_resp *r);

/** Reason phrase of a status ("" for one it does not know). */
const char *lb_inst_reason(unsigned int status);

/**
 * Formats @p unix_s as an IMF-fixdate (RFC 9110 §5.6.7), e.g.
 * "Sun, 06 Nov 1994 08:49:37 GMT", into @p out (at least 30 octets),
 * independently of the locale.
 */
void lb_inst_http_date(int64_t unix_s, char out[30]);

#endif /* LB_INST_HTTP_H */
