/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_HTTP_ERR_T_H
#define LB_HTTP_ERR_T_H

/**
 * @file
 * The types of http_err.h: a service's set of error statuses and its
 * limits, with the membership test the workers run on each followed
 * response. Apart from http_err.h because a service's options (lb/conf-t.h)
 * carry the set into shared memory; parsing it is the configuration's.
 */

#include <stdbool.h>
#include <stdint.h>

/** Lowest and highest status code a set holds (RFC 9110 15). */
#define LB_HTTP_ERR_MIN 100u
#define LB_HTTP_ERR_MAX 599u
/** Longest text of a set or of a prefix list, in bytes. */
#define LB_HTTP_ERR_STRLEN 127u
/** Most excluded prefixes per service, and the longest one. */
#define LB_HTTP_ERR_PATHS 4u
#define LB_HTTP_ERR_PATH_MAX 63u

/** A set of status codes: bit (code - 100) of w. */
struct lb_http_err_codes {
	uint64_t w[8];
};

static inline bool
lb_http_err_codes_has(const struct lb_http_err_codes *s, unsigned int code)
{
	unsigned int b = code - LB_HTTP_ERR_MIN;

	return code >= LB_HTTP_ERR_MIN && code <= LB_HTTP_ERR_MAX &&
	       (s->w[b / 64] >> (b % 64)) & 1;
}

#endif /* LB_HTTP_ERR_T_H */
