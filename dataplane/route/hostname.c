/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host names of content routing: see dataplane/route/hostname.h.
 */
#include <errno.h>
#include <stdint.h>

#include "hostname.h"

#define LABEL_MAX 63

static int
is_digit(uint8_t c)
{
	return c >= '0' && c <= '9';
}

static int
is_label_char(uint8_t c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z') || c == '-' || c == '_';
}

int
lb_hostname_norm(char *out, const void *name, size_t len, unsigned int flags)
{
	const uint8_t *s = name;
	size_t label = 0;
	int numeric = 1;

	if (len > 0 && s[len - 1] == '.' && (flags & LB_HOSTNAME_DOT))
		len--;
	if (len == 0 || len > LB_HOSTNAME_MAX)
		return -EINVAL;
	/* All of it is checked before a byte is written: a refused name
	 * leaves @p out as it was. */
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '.') {
			if (label == 0)
				return -EINVAL;
			label = 0;
			numeric = 1;
			continue;
		}
		if (!is_label_char(s[i]) || ++label > LABEL_MAX)
			return -EINVAL;
		numeric &= is_digit(s[i]);
	}
	if (label == 0 || (numeric && !(flags & LB_HOSTNAME_NUMERIC)))
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		out[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] + 32 : s[i]);
	out[len] = '\0';
	return (int)len;
}
