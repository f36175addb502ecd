/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_HOSTNAME_H
#define LB_HOSTNAME_H

/**
 * @file
 * Host names as content routing compares them: the SNI of a TLS
 * ClientHello and the Host of an HTTP request, checked as DNS names and
 * lower-cased, so that a rule `api.example.com` matches `API.Example.COM`
 * and a name that no rule could ever name is refused where it is read.
 *
 * A name is 1 to 253 characters of labels separated by dots; a label is
 * 1 to 63 letters, digits, hyphens or underscores (RFC 1123 2.1 names
 * plus the underscore that service names such as `_sip._udp` and many
 * internal host names carry). A name whose last label is all digits is
 * an address, not a name (RFC 3696 2: no top-level domain is numeric).
 */

#include <stddef.h>

/** Longest name, in characters, without the terminating NUL. */
#define LB_HOSTNAME_MAX 253

/** Flags of lb_hostname_norm(). */
enum {
	/** One trailing dot (the absolute form, `example.com.`) is
	 * accepted and dropped: HTTP's Host may carry it, SNI may not
	 * (RFC 6066 3). */
	LB_HOSTNAME_DOT = 1,
	/** An IPv4 address (last label all digits) is accepted as it
	 * is: HTTP's Host may be one, SNI may not (RFC 6066 3). */
	LB_HOSTNAME_NUMERIC = 2,
};

/**
 * Checks the @p len bytes at @p name as a host name and writes it
 * lower-cased and NUL-terminated into @p out (LB_HOSTNAME_MAX + 1 bytes).
 * @return its length, or -EINVAL (nothing written) when it is not a name
 */
int lb_hostname_norm(char *out, const void *name, size_t len,
		     unsigned int flags);

#endif /* LB_HOSTNAME_H */
