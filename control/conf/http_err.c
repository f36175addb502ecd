/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Status code sets and excluded path prefixes of a service's error policy:
 * their text forms, checked strictly, since they come from the operator.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb/http_err.h"

static void
set_range(struct lb_http_err_codes *s, unsigned int lo, unsigned int hi)
{
	for (unsigned int c = lo; c <= hi; c++) {
		unsigned int b = c - LB_HTTP_ERR_MIN;

		s->w[b / 64] |= 1ull << (b % 64);
	}
}

void
lb_http_err_codes_default(struct lb_http_err_codes *s)
{
	memset(s, 0, sizeof(*s));
	set_range(s, 500, 599);
}

/* Three digits within 100..599 at p; *end past them. */
static int
code_at(const char *p, const char **end, unsigned int *code)
{
	if (p[0] < '1' || p[0] > '5' || p[1] < '0' || p[1] > '9' ||
	    p[2] < '0' || p[2] > '9')
		return -EINVAL;
	*code = (unsigned int)(p[0] - '0') * 100 +
		(unsigned int)(p[1] - '0') * 10 + (unsigned int)(p[2] - '0');
	*end = p + 3;
	return 0;
}

int
lb_http_err_codes_parse(const char *text, struct lb_http_err_codes *s)
{
	const char *p = text;

	if (text == NULL || s == NULL || strlen(text) > LB_HTTP_ERR_STRLEN)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	if (strcmp(text, "none") == 0)
		return 0;
	for (;;) {
		unsigned int lo, hi;

		if (p[0] >= '1' && p[0] <= '5' && p[1] == 'x' && p[2] == 'x') {
			lo = (unsigned int)(p[0] - '0') * 100;
			hi = lo + 99;
			p += 3;
		} else {
			if (code_at(p, &p, &lo) != 0)
				return -EINVAL;
			hi = lo;
			if (*p == '-' && (code_at(p + 1, &p, &hi) != 0 || hi < lo))
				return -EINVAL;
		}
		set_range(s, lo, hi);
		if (*p == '\0')
			return 0;
		if (*p++ != ',')
			return -EINVAL;
	}
}

int
lb_http_err_paths(const char *text,
		  char out[LB_HTTP_ERR_PATHS][LB_HTTP_ERR_PATH_MAX + 1])
{
	const char *p = text;
	int n = 0;

	if (text == NULL || strlen(text) > LB_HTTP_ERR_STRLEN)
		return -EINVAL;
	if (*p == '\0' || strcmp(p, "none") == 0)
		return 0;
	for (;;) {
		size_t k = strcspn(p, ",");

		if (n == (int)LB_HTTP_ERR_PATHS || k == 0 ||
		    k > LB_HTTP_ERR_PATH_MAX || p[0] != '/')
			return -EINVAL;
		for (size_t i = 0; i < k; i++)
			if ((unsigned char)p[i] <= ' ' || p[i] == '?' ||
			    p[i] == '#' || p[i] == 0x7f)
				return -EINVAL;
		memcpy(out[n], p, k);
		out[n][k] = '\0';
		n++;
		if (p[k] == '\0')
			return n;
		p += k + 1;
	}
}
