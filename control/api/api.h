/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_API_H
#define LB_API_H

/**
 * @file
 * lb-control's API protocol, version 1: one JSON object per line each way
 * over a stream socket.
 *
 * Request, either a command:
 *
 *     {"v": 1, "argv": ["backend", "add", "tcp", "10.0.0.1:80",
 *      "10.1.0.1:80"], "json": false}
 *
 * or a whole file of commands applied all or nothing (`lbctl apply FILE`):
 *
 *     {"v": 1, "apply": "<file text>", "name": "FILE"}
 *
 * Response, one line:
 *
 *     {"v": 1, "ok": true, "text": "...", "data": {...} or null}
 *     {"v": 1, "ok": false, "code": -22, "error": "one line"}
 *
 * "json" is optional (default false) and only tells the client what to
 * print; the server always sends both text and data. "width" is
 * optional too: the columns of the client's terminal, which tables that
 * pick their columns fit (`backend list`); absent or 0, no limit. Unknown members are
 * ignored, so that a later version may add optional ones. The words of
 * "argv" obey the limits of the command line (LB_CMD_ARGC_MAX words of at
 * most LB_CMD_ARG_MAX bytes, no control character but tab), since they
 * reach the same handlers as a tokenized line.
 *
 * Nothing here does I/O or keeps state beyond a struct lb_api_rbuf:
 * lb-control's socket server feeds bytes in and writes responses out.
 */

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "lb/cmd.h"

/** The protocol version this code speaks. */
#define LB_API_VERSION 1
/** Longest request line, newline excluded. */
#define LB_API_LINE_MAX (1u << 20)
/** Largest "width" taken. */
#define LB_API_WIDTH_MAX 10000u
/** Longest "name" of an applied file, in bytes. */
#define LB_API_NAME_MAX 255u

enum lb_api_kind {
	LB_API_ARGV = 1, /**< run one command */
	LB_API_APPLY,	 /**< apply a file of commands, all or nothing */
};

/** A parsed request; every pointer is owned by it. */
struct lb_api_req {
	enum lb_api_kind kind;
	bool json; /**< the client wants data rather than text */
	unsigned int width; /**< the client's columns, 0: no limit */
	unsigned int argc;
	char **argv; /**< argc words and a NULL (LB_API_ARGV) */
	char *apply; /**< the file's text (LB_API_APPLY) */
	size_t apply_len;
	char *name; /**< the file's name, "-" if not given */
};

/**
 * Parses one request line of @p len bytes (no newline; need not be
 * NUL-terminated). On error @p err receives one line for the client and
 * @p req holds nothing to free.
 * @return 0; -EINVAL (not JSON, not an object, a member of the wrong
 *   type, both or neither of "argv" and "apply", a word breaking the
 *   command-line limits); -EOPNOTSUPP (-95) for another "v"; -E2BIG for
 *   a line longer than LB_API_LINE_MAX; -ENOMEM.
 */
int lb_api_parse(const char *line, size_t len, struct lb_api_req *req,
		 char *err, size_t errlen);

/** Frees what @p req owns and empties it; NULL is accepted. */
void lb_api_req_free(struct lb_api_req *req);

/**
 * A success response: @p text (NULL is "") and @p data (NULL is null;
 * the reference is stolen), as one line ending with '\n'. Bytes of
 * @p text that are not UTF-8 become '?'.
 * @return a malloc'd string (its length in @p len), or NULL (ENOMEM).
 */
char *lb_api_ok(const char *text, json_t *data, size_t *len);

/**
 * An error response for negative errno @p code (positive or zero becomes
 * -EINVAL) and message @p msg, as one line ending with '\n'.
 * @return a malloc'd string (its length in @p len), or NULL (ENOMEM).
 */
char *lb_api_error(int code, const char *msg, size_t *len);

/** What the server does with a parsed request. */
struct lb_api_ops {
	/**
	 * Runs one command; output and error go to @p out. @p data may be
	 * set to a new reference that becomes the response's "data".
	 * @return 0 or a negative errno.
	 */
	int (*exec)(void *ctx, int argc, char **argv, struct lb_cmd_out *out,
		    json_t **data);
	/**
	 * Applies @p len bytes of commands, all or nothing, the error line
	 * as "NAME:LINE: message".
	 * @return 0 or a negative errno.
	 */
	int (*apply)(void *ctx, const char *text, size_t len, const char *name,
		     struct lb_cmd_out *out);
};

/**
 * Parses a request line, runs it through @p ops and formats the
 * response. Never fails to answer unless memory runs out. @p code (may
 * be NULL) receives 0 for a success response, else the error's code.
 * @return the response line (malloc'd, '\n'-terminated, its length in
 *   @p rlen), or NULL (ENOMEM).
 */
char *lb_api_handle(const struct lb_api_ops *ops, void *ctx, const char *line,
		    size_t len, size_t *rlen, int *code);

/**
 * Replaces every byte of @p s that is not part of a well-formed UTF-8
 * sequence (overlong forms, surrogates and code points past U+10FFFF
 * included) by '?', in place, so that jansson accepts the string.
 * @return the number of bytes replaced.
 */
size_t lb_api_utf8_fix(char *s);

/**
 * Line assembly for one connection. Bytes go in with lb_api_rbuf_feed();
 * lb_api_rbuf_next() hands out complete lines one at a time, in order. A
 * line longer than LB_API_LINE_MAX is not kept: only its first bytes are
 * held, and it comes out as -E2BIG, so that the client gets an error for
 * it and the lines after it are read as usual. Memory per connection is
 * thus bounded by what the caller leaves unread plus one line.
 */
struct lb_api_rbuf {
	char *buf;
	size_t len; /**< bytes held */
	size_t cap;
	size_t head; /**< start of the next line */
	size_t scan; /**< bytes from head already known to hold no '\n' */
	size_t tail; /**< start of the last, unfinished line */
};

void lb_api_rbuf_init(struct lb_api_rbuf *rb);
void lb_api_rbuf_free(struct lb_api_rbuf *rb);

/**
 * Appends @p n bytes; of a line past the limit, only the first
 * LB_API_LINE_MAX + 2 bytes are kept.
 * @return 0, -EINVAL, -ENOMEM.
 */
int lb_api_rbuf_feed(struct lb_api_rbuf *rb, const void *p, size_t n);

/**
 * The next complete line, without its '\n' (and without a '\r' before
 * it), NUL-terminated in place; valid until the next call.
 * @return 1 with @p line and @p len set; 0 when no complete line is held;
 *   -E2BIG for a line longer than LB_API_LINE_MAX (consumed).
 */
int lb_api_rbuf_next(struct lb_api_rbuf *rb, char **line, size_t *len);

/** Whether bytes of an unfinished line are held. */
int lb_api_rbuf_partial(const struct lb_api_rbuf *rb);

#endif /* LB_API_H */
