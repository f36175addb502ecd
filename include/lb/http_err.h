/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_HTTP_ERR_H
#define LB_HTTP_ERR_H

/**
 * @file
 * Which HTTP responses of a service count as errors for its scheduler:
 * a set of status codes (`errors 5xx`, `errors 500,502-504`, `errors
 * none`) and request path prefixes whose responses never count (`error-
 * exclude /health,/ready`), such as a health URL known to fail. Parsed
 * and printed for the configuration (control/conf/conf.c), read by the workers
 * when a response is followed.
 */

#include "lb/http_err-t.h"

/** The default set: 500..599 (5xx, as the dispatch paper counts failed
 * requests). */
void lb_http_err_codes_default(struct lb_http_err_codes *s);

/**
 * Reads "none", or a comma-separated list of codes ("502"), ranges
 * ("502-504") and classes ("5xx") within 100..599, into @p s.
 * @return 0 or -EINVAL (@p s unspecified).
 */
int lb_http_err_codes_parse(const char *text, struct lb_http_err_codes *s);

/**
 * Splits a comma-separated list of path prefixes ("/health,/ready"; the
 * empty text or "none" for no prefix) into @p out. Each prefix starts
 * with '/', holds no blank, comma, '?' or '#', and is at most
 * LB_HTTP_ERR_PATH_MAX bytes; at most LB_HTTP_ERR_PATHS of them.
 * @return how many, or -EINVAL.
 */
int lb_http_err_paths(const char *text,
		      char out[LB_HTTP_ERR_PATHS][LB_HTTP_ERR_PATH_MAX + 1]);

#endif /* LB_HTTP_ERR_H */
