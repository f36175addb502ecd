/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "tsring.h"

static const struct lb_tsring_key ka = {.svc = 1}, kb = {.svc = 1, .be = 7},
				  kc = {.svc = 2};

static void
test_sizes(void **state)
{
	struct lb_tsring *r;

	(void)state;
	assert_null(lb_tsring_create(0, 4, 2));
	assert_int_equal(errno, EINVAL);
	assert_null(lb_tsring_create(4, 0, 2));
	assert_null(lb_tsring_create(4, 4, 0));
	assert_null(lb_tsring_create(LB_TSRING_MAX_POINTS + 1, 4, 2));
	assert_null(lb_tsring_create(4, LB_TSRING_MAX_ENTITIES + 1, 2));
	assert_null(lb_tsring_create(4, 4, LB_TSRING_MAX_METRICS + 1));
	r = lb_tsring_create(300, 512, 6);
	assert_non_null(r);
	/* The values dominate: 512 x 6 x 300 floats, nothing grows later. */
	assert_true(lb_tsring_bytes(r) >= 512ull * 6 * 300 * 4);
	assert_true(lb_tsring_bytes(r) < 512ull * 6 * 300 * 4 + 64 * 1024);
	lb_tsring_free(r);
	lb_tsring_free(NULL);
}

static void
test_before_begin(void **state)
{
	struct lb_tsring *r = lb_tsring_create(4, 2, 1);
	bool created;

	(void)state;
	assert_int_equal(lb_tsring_count(r), 0);
	assert_int_equal(lb_tsring_entity(r, &ka, &created), -EINVAL);
	assert_false(created);
	assert_true(isnan(lb_tsring_get(r, 0, 0, 0)));
	assert_int_equal(lb_tsring_time(r, 0), 0);
	lb_tsring_free(r);
}

/* Rows: samples put, then what reads back oldest first (NaN: a gap). */
static void
test_wrap(void **state)
{
	static const struct {
		unsigned int samples;
		unsigned int count;
		double first, last;
	} rows[] = {
		{1, 1, 10, 10}, {3, 3, 10, 30}, {4, 4, 10, 40},
		{5, 4, 20, 50}, {9, 4, 60, 90}, {12, 4, 90, 120},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct lb_tsring *r = lb_tsring_create(4, 2, 2);
		bool created;
		int e = -1;

		for (unsigned int n = 1; n <= rows[i].samples; n++) {
			lb_tsring_begin(r, 1000 * n);
			e = lb_tsring_entity(r, &ka, &created);
			assert_int_equal(created, n == 1);
			assert_int_equal(lb_tsring_put(r, e, 0, 10.0 * n), 0);
		}
		assert_int_equal(lb_tsring_count(r), rows[i].count);
		assert_true(lb_tsring_get(r, e, 0, 0) == rows[i].first);
		assert_true(lb_tsring_get(r, e, 0, rows[i].count - 1) ==
			    rows[i].last);
		assert_int_equal(lb_tsring_time(r, rows[i].count - 1),
				 1000 * rows[i].samples);
		assert_int_equal(lb_tsring_time(r, 0),
				 1000 * (rows[i].samples - rows[i].count + 1));
		/* Metric 1 was never put: gaps all along. */
		for (unsigned int k = 0; k < rows[i].count; k++)
			assert_true(isnan(lb_tsring_get(r, e, 1, k)));
		assert_true(isnan(lb_tsring_get(r, e, 0, rows[i].count)));
		lb_tsring_free(r);
	}
}

static void
test_gaps_and_bad_input(void **state)
{
	struct lb_tsring *r = lb_tsring_create(8, 2, 2);
	bool created;
	int e;

	(void)state;
	lb_tsring_begin(r, 1);
	e = lb_tsring_entity(r, &ka, &created);
	assert_int_equal(lb_tsring_put(r, e, 0, 1.5), 0);
	lb_tsring_begin(r, 2); /* not put: a gap */
	lb_tsring_begin(r, 3);
	assert_int_equal(lb_tsring_put(r, e, 0, 3.5), 0);
	assert_true(lb_tsring_get(r, e, 0, 0) == 1.5);
	assert_true(isnan(lb_tsring_get(r, e, 0, 1)));
	assert_true(lb_tsring_get(r, e, 0, 2) == 3.5);
	/* Out of range: refused, nothing written. */
	assert_int_equal(lb_tsring_put(r, e, 2, 9), -EINVAL);
	assert_int_equal(lb_tsring_put(r, 1, 0, 9), -EINVAL); /* free */
	assert_int_equal(lb_tsring_put(r, -1, 0, 9), -EINVAL);
	assert_int_equal(lb_tsring_put(r, 2, 0, 9), -EINVAL);
	assert_null(lb_tsring_aux(r, 1));
	assert_null(lb_tsring_key(r, 1));
	assert_true(lb_tsring_get(r, e, 0, 2) == 3.5);
	lb_tsring_free(r);
}

static void
test_entities(void **state)
{
	struct lb_tsring *r = lb_tsring_create(3, 2, 1);
	bool created;
	int a, b, c;

	(void)state;
	lb_tsring_begin(r, 1);
	a = lb_tsring_entity(r, &ka, &created);
	assert_true(created);
	b = lb_tsring_entity(r, &kb, &created);
	assert_true(created);
	assert_int_not_equal(a, b);
	assert_int_equal(lb_tsring_entity(r, &ka, &created), a);
	assert_false(created);
	lb_tsring_aux(r, a)[0] = 42;
	/* Both written this sample: a third key is refused, and counted. */
	assert_int_equal(lb_tsring_entity(r, &kc, &created), -ENOSPC);
	assert_int_equal(lb_tsring_refused(r), 1);
	lb_tsring_put(r, a, 0, 1);
	lb_tsring_put(r, b, 0, 2);

	/* Next sample: only a is written; c takes b's place, empty. */
	lb_tsring_begin(r, 2);
	lb_tsring_put(r, a, 0, 1);
	c = lb_tsring_entity(r, &kc, &created);
	assert_true(created);
	assert_int_equal(c, b);
	assert_int_equal(lb_tsring_key(r, c)->svc, kc.svc);
	assert_int_equal(lb_tsring_aux(r, c)[0], 0);
	assert_true(isnan(lb_tsring_get(r, c, 0, 0)));
	assert_int_equal(lb_tsring_aux(r, a)[0], 42);

	/* c is never written again: after a window it is forgotten. */
	lb_tsring_begin(r, 3);
	lb_tsring_put(r, a, 0, 1);
	lb_tsring_begin(r, 4);
	lb_tsring_put(r, a, 0, 1);
	assert_non_null(lb_tsring_key(r, c));
	lb_tsring_begin(r, 5);
	assert_null(lb_tsring_key(r, c));
	assert_non_null(lb_tsring_key(r, a));
	assert_int_equal(lb_tsring_entities(r), 2);
	lb_tsring_free(r);
}

/* Keys with an IPv6 address: the address tells entities apart where the
 * words are the same, and the order keeps a service's backends after it. */
static void
test_ip6_keys(void **state)
{
	struct lb_tsring_key s6a = {.svc = 6ull << 48 | 80, .svc6 = {0x20, 1}};
	struct lb_tsring_key s6b = s6a, b6 = s6a, b4 = s6a;
	struct lb_tsring *r = lb_tsring_create(4, 8, 1);
	bool created;
	int e[4];

	(void)state;
	s6b.svc6[15] = 1;
	b6.be = 8080;
	b6.be6[0] = 0x20;
	b4.be = 0x0a000001ull << 16 | 8080;
	lb_tsring_begin(r, 1000);
	e[0] = lb_tsring_entity(r, &s6a, &created);
	assert_true(created);
	e[1] = lb_tsring_entity(r, &s6b, &created);
	assert_true(created);
	e[2] = lb_tsring_entity(r, &b6, &created);
	assert_true(created);
	e[3] = lb_tsring_entity(r, &b4, &created);
	assert_true(created);
	assert_true(e[0] != e[1] && e[2] != e[3] && e[0] != e[2]);
	assert_int_equal(lb_tsring_entity(r, &s6b, &created), e[1]);
	assert_false(created);
	assert_int_equal(lb_tsring_key_cmp(&s6a, &s6a), 0);
	assert_true(lb_tsring_key_cmp(&s6a, &s6b) < 0);
	assert_true(lb_tsring_key_cmp(&s6a, &b6) < 0);
	assert_true(lb_tsring_key_cmp(&b6, &s6b) < 0);
	assert_true(lb_tsring_key_cmp(&ka, &s6a) < 0);
	lb_tsring_free(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_before_begin),
		cmocka_unit_test(test_wrap),
		cmocka_unit_test(test_gaps_and_bad_input),
		cmocka_unit_test(test_entities),
		cmocka_unit_test(test_ip6_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
