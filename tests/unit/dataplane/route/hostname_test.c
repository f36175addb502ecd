/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of host names (dataplane/route/hostname.c): rows of names
 * with the flags they are read under and what comes out, lower-cased, or
 * -EINVAL with the output left as it was.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "hostname.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define D LB_HOSTNAME_DOT
#define N LB_HOSTNAME_NUMERIC

struct row {
	const char *in;
	unsigned int flags;
	const char *want; /* NULL: refused */
};

static const struct row rows[] = {
	{"example.com", 0, "example.com"},
	{"API.Example.COM", 0, "api.example.com"},
	{"localhost", 0, "localhost"},
	{"_sip._tcp.example", 0, "_sip._tcp.example"},
	{"a-b.c-d", 0, "a-b.c-d"},
	{"1.example", 0, "1.example"},
	{"x.1a", 0, "x.1a"},
	{"", 0, NULL},
	{".", D, NULL},
	{".example", 0, NULL},
	{"a..b", 0, NULL},
	{"example.com.", 0, NULL},
	{"example.com.", D, "example.com"},
	{"example.com..", D, NULL},
	{"192.0.2.1", 0, NULL},
	{"192.0.2.1", N, "192.0.2.1"},
	{"12", 0, NULL},
	{"12", N, "12"},
	{"a b", 0, NULL},
	{"a*b", 0, NULL},
	{"*.example", 0, NULL},
	{"ex\xc3\xa9.com", 0, NULL}, /* a U-label: only A-labels */
	{"xn--exa-9la.com", 0, "xn--exa-9la.com"},
	{"a:80", 0, NULL},
	{"a/b", 0, NULL},
};

static void
test_rows(void **state)
{
	char out[LB_HOSTNAME_MAX + 1];

	(void)state;
	for (unsigned int i = 0; i < NELEM(rows); i++) {
		const struct row *r = &rows[i];
		int rc;

		print_message("%s\n", r->in);
		memset(out, '#', sizeof(out));
		rc = lb_hostname_norm(out, r->in, strlen(r->in), r->flags);
		if (r->want == NULL) {
			assert_int_equal(rc, -EINVAL);
			assert_int_equal(out[0], '#');
		} else {
			assert_int_equal(rc, strlen(r->want));
			assert_string_equal(out, r->want);
		}
	}
}

/* A name with a NUL inside: length, not the terminator, counts. */
static void
test_nul(void **state)
{
	char out[LB_HOSTNAME_MAX + 1];

	(void)state;
	assert_int_equal(lb_hostname_norm(out, "a\0b", 3, 0), -EINVAL);
	assert_int_equal(lb_hostname_norm(out, "ab\0", 2, 0), 2);
	assert_string_equal(out, "ab");
}

/* Labels up to 63 characters, names up to 253. */
static void
test_lengths(void **state)
{
	char in[LB_HOSTNAME_MAX + 3], out[LB_HOSTNAME_MAX + 1];

	(void)state;
	memset(in, 'a', 64);
	assert_int_equal(lb_hostname_norm(out, in, 63, 0), 63);
	assert_int_equal(lb_hostname_norm(out, in, 64, 0), -EINVAL);
	for (int i = 0; i < LB_HOSTNAME_MAX + 2; i++)
		in[i] = i % 50 == 49 ? '.' : 'B';
	in[LB_HOSTNAME_MAX] = '.';
	assert_int_equal(lb_hostname_norm(out, in, LB_HOSTNAME_MAX, 0),
			 LB_HOSTNAME_MAX);
	assert_int_equal(out[0], 'b');
	assert_int_equal(out[LB_HOSTNAME_MAX], '\0');
	/* 253 and a trailing dot. */
	assert_int_equal(lb_hostname_norm(out, in, LB_HOSTNAME_MAX + 1, D),
			 LB_HOSTNAME_MAX);
	assert_int_equal(lb_hostname_norm(out, in, LB_HOSTNAME_MAX + 1, 0),
			 -EINVAL);
	in[LB_HOSTNAME_MAX] = 'b';
	assert_int_equal(lb_hostname_norm(out, in, LB_HOSTNAME_MAX + 1, D),
			 -EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_nul),
		cmocka_unit_test(test_lengths),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
