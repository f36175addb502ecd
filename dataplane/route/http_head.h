/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_HTTP_HEAD_H
#define LB_HTTP_HEAD_H

/**
 * @file
 * The request head of an HTTP/1.x connection (RFC 9112), read from the
 * first bytes a client sends for routing it by method, path and Host.
 *
 * Like the SNI extractor, the caller keeps the prefix of the client's
 * stream and calls lb_http_head() on all of it after each segment: the
 * parse starts over each time, so the request line and the headers may be
 * split anywhere. Nothing is found before the head's empty line, so that
 * a second Host anywhere in it is seen.
 *
 * What it accepts and refuses:
 * - empty lines before the request line are skipped (RFC 9112 2.2); a
 *   line ends with CRLF or a bare LF (2.2), a CR elsewhere is refused;
 * - the request line is `method SP request-target SP HTTP/1.DIGIT`
 *   (3): a stream that cannot begin one (a TLS record, the HTTP/2
 *   preface, HTTP/0.9, a method of over LB_HTTP_METHOD_MAX characters) is
 *   not HTTP, decided as early as its bytes allow;
 * - the request target is origin-form (`/path?query`), absolute-form
 *   (`http://host/path`, whose host then replaces the Host header's:
 *   3.2.2), authority-form for CONNECT, or `*` for OPTIONS; the path is
 *   the target up to `?`, as sent (no decoding), and a `#` is refused;
 * - header names are tokens, matched without case; whitespace before the
 *   colon is refused (5.1), so is a folded line (5.2) and a control
 *   character in a value; a second Host is refused (3.2), so is an
 *   HTTP/1.1 request without one; an HTTP/1.0 request may have none;
 * - the Host (or the target's authority) is a host name, an IPv4
 *   address or a bracketed IP literal, with an optional port that is
 *   dropped; it is lower-cased, a trailing dot dropped.
 */

#include <stddef.h>
#include <stdint.h>

#include "hostname.h"

/** Longest method accepted. */
#define LB_HTTP_METHOD_MAX 24
/** Longest head the caller would usually wait for. */
#define LB_HTTP_HEAD_MAX 8192

/** 1 for the bytes of a token (tchar, RFC 9110 5.6.2): methods and
 * header names. */
extern const uint8_t lb_http_tchar[256];

/** Verdicts of lb_http_head(), LB_HTTP_HEAD_NEED_MORE first. */
enum lb_http_head_verdict {
	LB_HTTP_HEAD_NEED_MORE, /**< a request head so far */
	LB_HTTP_HEAD_FOUND,	/**< a complete, valid request head */
	LB_HTTP_HEAD_NOT_HTTP,	/**< the stream cannot start a request */
	LB_HTTP_HEAD_MALFORMED, /**< a request line, but an invalid head */
	LB_HTTP_HEAD_TOO_LONG,	/**< no end of head within the bound */
	LB_HTTP_HEAD_VERDICTS,
};

/** What lb_http_head() found. */
struct lb_http_req {
	const uint8_t *method; /**< in the caller's bytes */
	const uint8_t *path;   /**< in the caller's bytes, query left out */
	uint16_t method_len;
	uint16_t path_len; /**< 0 for CONNECT's authority-form */
	uint16_t host_len; /**< 0: no Host (HTTP/1.0) or an empty one */
	uint8_t minor;	   /**< HTTP/1.minor */
	char host[LB_HOSTNAME_MAX + 1]; /**< lower-cased, no port, NUL */
	uint32_t head_len; /**< bytes up to the empty line's end */
};

/**
 * Reads the request head at the start of the @p len bytes at @p p; only
 * the first @p max bytes are looked at, and a head that does not end in
 * them is too long. @p out is written only on LB_HTTP_HEAD_FOUND.
 * @return an enum lb_http_head_verdict
 */
int lb_http_head(const uint8_t *p, size_t len, size_t max,
		 struct lb_http_req *out);

/** The verdict's name for counters and logs ("need_more", "found"...). */
const char *lb_http_head_verdict_name(int v);

#endif /* LB_HTTP_HEAD_H */
