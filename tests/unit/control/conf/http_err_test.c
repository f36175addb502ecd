/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lb/http_err.h"

static unsigned int
count(const struct lb_http_err_codes *s)
{
	unsigned int n = 0;

	for (unsigned int c = 0; c < 700; c++)
		n += lb_http_err_codes_has(s, c);
	return n;
}

static void
test_codes(void **state)
{
	struct lb_http_err_codes s;

	(void)state;
	lb_http_err_codes_default(&s);
	assert_int_equal(count(&s), 100);
	assert_true(lb_http_err_codes_has(&s, 500));
	assert_true(lb_http_err_codes_has(&s, 599));
	assert_false(lb_http_err_codes_has(&s, 499));
	assert_false(lb_http_err_codes_has(&s, 600));
	assert_false(lb_http_err_codes_has(&s, 0));

	assert_int_equal(lb_http_err_codes_parse("none", &s), 0);
	assert_int_equal(count(&s), 0);
	assert_int_equal(lb_http_err_codes_parse("500,502-504", &s), 0);
	assert_int_equal(count(&s), 4);
	assert_true(lb_http_err_codes_has(&s, 500));
	assert_false(lb_http_err_codes_has(&s, 501));
	assert_true(lb_http_err_codes_has(&s, 503));
	assert_true(lb_http_err_codes_has(&s, 504));
	assert_false(lb_http_err_codes_has(&s, 505));
	assert_int_equal(lb_http_err_codes_parse("4xx,5xx", &s), 0);
	assert_int_equal(count(&s), 200);
	assert_false(lb_http_err_codes_has(&s, 399));
	assert_int_equal(lb_http_err_codes_parse("429,5xx,100-101", &s), 0);
	assert_int_equal(count(&s), 103);
	assert_int_equal(lb_http_err_codes_parse("599", &s), 0);
	assert_int_equal(count(&s), 1);
}

static void
test_bad_codes(void **state)
{
	static const char *const bad[] = {
		"", "5", "50", "5000", "600", "099", "6xx", "0xx", "5XX",
		"500,", ",500", "500,,501", "504-502", "500-", "500-600",
		"500 ,501", " 500", "500x", "5x", "none,500", "-500", "+500",
		"1e3", "5xx-599",
	};
	struct lb_http_err_codes s;
	char big[200];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (lb_http_err_codes_parse(bad[i], &s) != -EINVAL)
			fail_msg("'%s' accepted", bad[i]);
	memset(big, 0, sizeof(big));
	for (size_t i = 0; i + 4 < sizeof(big); i += 4)
		memcpy(big + i, "500,", 4);
	big[sizeof(big) - 5] = '\0';
	assert_int_equal(lb_http_err_codes_parse(big, &s), -EINVAL);
	assert_int_equal(lb_http_err_codes_parse(NULL, &s), -EINVAL);
}

static void
test_paths(void **state)
{
	char p[LB_HTTP_ERR_PATHS][LB_HTTP_ERR_PATH_MAX + 1];
	char long_path[LB_HTTP_ERR_PATH_MAX + 2];
	static const char *const bad[] = {
		"health", "/a,", ",/a", "/a,,/b", "/a b", "/a?x", "/a#f",
		"/a,/b,/c,/d,/e", "/a\t",
	};

	(void)state;
	assert_int_equal(lb_http_err_paths("", p), 0);
	assert_int_equal(lb_http_err_paths("none", p), 0);
	assert_int_equal(lb_http_err_paths("/health", p), 1);
	assert_string_equal(p[0], "/health");
	assert_int_equal(lb_http_err_paths("/health,/ready,/,/x/y", p), 4);
	assert_string_equal(p[1], "/ready");
	assert_string_equal(p[2], "/");
	assert_string_equal(p[3], "/x/y");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (lb_http_err_paths(bad[i], p) != -EINVAL)
			fail_msg("'%s' accepted", bad[i]);
	memset(long_path, 'a', sizeof(long_path));
	long_path[0] = '/';
	long_path[sizeof(long_path) - 1] = '\0';
	assert_int_equal(lb_http_err_paths(long_path, p), -EINVAL);
	long_path[sizeof(long_path) - 2] = '\0';
	assert_int_equal(lb_http_err_paths(long_path, p), 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_codes),
		cmocka_unit_test(test_bad_codes),
		cmocka_unit_test(test_paths),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
