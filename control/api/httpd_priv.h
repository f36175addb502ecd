/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_HTTPD_PRIV_H
#define LB_HTTPD_PRIV_H

/*
 * lb-control's HTTP endpoint: GET /metrics answers with the Prometheus
 * exposition, other paths with what the page function gives (the status
 * page and its JSON), or 404; methods other than GET and HEAD get 405. libmicrohttpd runs without threads
 * of its own: lb-control polls its epoll descriptor and calls
 * lb_httpd_run(), so the exposition is built by the thread that owns the
 * view and needs no lock.
 */

#include <stdint.h>

#include "lb/cmd.h"

struct lb_httpd;

/** Writes the body of /metrics; 0 or a negative errno. */
typedef int lb_httpd_body_fn(void *ctx, struct lb_cmd_out *out);

/** The request a page is asked by, for its query arguments. */
struct lb_httpd_query;

/** The value of query argument @p name ("?since=5"), or NULL. */
const char *lb_httpd_query_get(const struct lb_httpd_query *q,
			       const char *name);

/**
 * Writes the body of @p path into @p out and sets *@p type to its
 * Content-Type. @return 0, -ENOENT (404), -EINVAL (400: a query
 * argument it cannot take, the message in @p out), or another negative
 * errno (500).
 */
typedef int lb_httpd_page_fn(void *ctx, const char *path,
			     const struct lb_httpd_query *q, const char **type,
			     struct lb_cmd_out *out);

/**
 * Listens on IPv4 "ADDR:PORT" (PORT 0: any free port).
 * @return the server, or NULL with a message in @p err.
 */
struct lb_httpd *lb_httpd_start(const char *addr_port, lb_httpd_body_fn *fn,
				void *ctx, char *err, size_t errlen);

/** Paths other than /metrics go to @p fn (NULL: 404). */
void lb_httpd_set_pages(struct lb_httpd *h, lb_httpd_page_fn *fn, void *ctx);

void lb_httpd_stop(struct lb_httpd *h);

/** The descriptor to poll for POLLIN. */
int lb_httpd_fd(const struct lb_httpd *h);

/** The port listened on. */
uint16_t lb_httpd_port(const struct lb_httpd *h);

/** Longest wait before lb_httpd_run() is due anyway, in ms; -1: none. */
int lb_httpd_timeout_ms(const struct lb_httpd *h);

/** Serves what is ready. */
void lb_httpd_run(struct lb_httpd *h);

/** Requests served (any status). */
uint64_t lb_httpd_requests(const struct lb_httpd *h);

/** What the server refused or failed, of its requests. */
struct lb_httpd_stats {
	uint64_t bad_request; /**< 400: a query argument refused */
	uint64_t not_found;  /**< 404: a path nothing serves */
	uint64_t bad_method; /**< 405: not GET or HEAD */
	uint64_t errors;     /**< 500: the body could not be built */
};

/** Its counters (zeros for NULL). */
struct lb_httpd_stats lb_httpd_stats(const struct lb_httpd *h);

#endif /* LB_HTTPD_PRIV_H */
