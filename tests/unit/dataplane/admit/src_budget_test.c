/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "src_budget.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define MS 1000000ULL
#define SEC 1000000000ULL
#define T0 (1000 * SEC) /* any clock, far from 0 */
#define K0 0x0123456789abcdefULL
#define K1 0xfedcba9876543210ULL

static struct lb_src_budget *
mk(uint32_t rate, uint32_t burst, uint32_t prefix, uint32_t sources,
   struct lb_src_budget_stats *st)
{
	struct lb_src_budget_conf c = {
		.rate = rate, .burst = burst, .prefix = prefix,
		.sources = sources,
	};
	struct lb_src_budget *b;

	memset(st, 0, sizeof(*st));
	b = lb_src_budget_create(&c, K0, K1, st);
	assert_non_null(b);
	return b;
}

/* Flows of @p src passed out of @p n offered at @p now. */
static unsigned int
offer(struct lb_src_budget *b, uint32_t src, unsigned int n, uint64_t now)
{
	unsigned int ok = 0;

	for (unsigned int i = 0; i < n; i++)
		ok += lb_src_budget_take(b, src, now);
	return ok;
}

static void
test_parse(void **state)
{
	static const struct {
		const char *in;
		int rc;
		uint32_t rate, burst;
	} rows[] = {
		{ "off", 0, 0, 0 },
		{ "1000", 0, 1000, 2000 },
		{ "1000/50", 0, 1000, 50 },
		{ "1/1", 0, 1, 1 },
		{ "1000000", 0, 1000000, 1000000 }, /* 2 x rate capped */
		{ "1000001", -EINVAL, 0, 0 },
		{ "0", -EINVAL, 0, 0 },
		{ "10/0", -EINVAL, 0, 0 },
		{ "10/", -EINVAL, 0, 0 },
		{ "/10", -EINVAL, 0, 0 },
		{ "-5", -EINVAL, 0, 0 },
		{ "+5", -EINVAL, 0, 0 },
		{ "5x", -EINVAL, 0, 0 },
		{ "5/5/5", -EINVAL, 0, 0 },
		{ "", -EINVAL, 0, 0 },
		{ "Off", -EINVAL, 0, 0 },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(rows); i++) {
		struct lb_src_budget_conf c;

		lb_src_budget_conf_default(&c);
		assert_int_equal(lb_src_budget_parse(rows[i].in, &c),
				 rows[i].rc);
		if (rows[i].rc != 0) {
			/* Untouched on error. */
			assert_int_equal(c.rate, LB_SRC_BUDGET_RATE_DEFAULT);
			assert_int_equal(c.burst, LB_SRC_BUDGET_BURST_DEFAULT);
			continue;
		}
		assert_int_equal(c.rate, rows[i].rate);
		if (rows[i].rate != 0)
			assert_int_equal(c.burst, rows[i].burst);
		assert_int_equal(lb_src_budget_conf_check(&c), 0);
	}
	assert_int_equal(lb_src_budget_parse(NULL, NULL), -EINVAL);
}

static void
test_conf_check(void **state)
{
	struct lb_src_budget_conf c;
	char buf[128];

	(void)state;
	lb_src_budget_conf_default(&c);
	assert_int_equal(lb_src_budget_conf_check(&c), 0);
	assert_int_equal(c.rate, 10000);
	assert_int_equal(c.burst, 20000);
	assert_int_equal(c.prefix, 32);
	lb_src_budget_describe(&c, buf, sizeof(buf));
	assert_string_equal(buf,
			    "10000/s burst 20000 per /32, 65536 sources per "
			    "worker");
	c.prefix = 7;
	assert_int_equal(lb_src_budget_conf_check(&c), -EINVAL);
	c.prefix = 33;
	assert_int_equal(lb_src_budget_conf_check(&c), -EINVAL);
	c.prefix = 24;
	c.sources = 0;
	assert_int_equal(lb_src_budget_conf_check(&c), -EINVAL);
	c.sources = LB_SRC_BUDGET_SOURCES_MAX + 1;
	assert_int_equal(lb_src_budget_conf_check(&c), -ERANGE);
	c.sources = 4;
	c.burst = 0;
	assert_int_equal(lb_src_budget_conf_check(&c), -EINVAL);
	/* Off: the rest does not matter, and no table is made. */
	c.rate = 0;
	assert_int_equal(lb_src_budget_conf_check(&c), 0);
	lb_src_budget_describe(&c, buf, sizeof(buf));
	assert_string_equal(buf, "off");
	errno = 0;
	assert_null(lb_src_budget_create(&c, K0, K1,
					 &(struct lb_src_budget_stats){ 0 }));
	assert_int_equal(errno, EINVAL);
	lb_src_budget_conf_default(&c);
	assert_null(lb_src_budget_create(&c, K0, K1, NULL));
	assert_int_equal(errno, EINVAL);
	/* Off is a NULL table: everything passes. */
	assert_true(lb_src_budget_take(NULL, 1, T0));
}

/* One source's SYN flood: the burst passes, then exactly the rate. */
static void
test_burst_then_rate(void **state)
{
	struct lb_src_budget_stats st;
	struct lb_src_budget *b = mk(1000, 2000, 32, 1024, &st);
	uint64_t now = T0;
	unsigned int ok;

	(void)state;
	assert_int_equal(offer(b, 0x0a000001, 5000, now), 2000);
	assert_int_equal(st.dropped, 3000);
	/* 1 ms later: one more flow's worth. */
	now += MS;
	assert_int_equal(offer(b, 0x0a000001, 10, now), 1);
	/* 10 s of 10,000 attempts per ms: 1000/s, not one more. */
	ok = 0;
	for (int i = 0; i < 10000; i++) {
		now += MS;
		ok += offer(b, 0x0a000001, 10, now);
	}
	assert_int_equal(ok, 10000);
	/* Quiet for twice burst / rate: the whole burst again, no more. */
	now += 2 * SEC + MS;
	assert_int_equal(offer(b, 0x0a000001, 3000, now), 2000);
	/* Another source never noticed. */
	assert_int_equal(offer(b, 0x0a000002, 2000, now), 2000);
	assert_int_equal(st.evicted, 0);
	lb_src_budget_free(b);
}

/* A rate that does not divide a second: rounded toward fewer flows. */
static void
test_odd_rate(void **state)
{
	struct lb_src_budget_stats st;
	struct lb_src_budget *b = mk(3, 1, 32, 4, &st);
	uint64_t now = T0;
	unsigned int ok = 0;

	(void)state;
	for (int i = 0; i < 3000; i++, now += MS)
		ok += offer(b, 7, 1, now);
	assert_true(ok >= 8 && ok <= 9);
	lb_src_budget_free(b);
}

/* /24: spoofing inside one prefix shares one budget. */
static void
test_prefix(void **state)
{
	struct lb_src_budget_stats st;
	struct lb_src_budget *b = mk(10, 20, 24, 1024, &st);
	unsigned int ok = 0;

	(void)state;
	for (uint32_t h = 0; h < 256; h++)
		ok += offer(b, 0xc0a80100 | h, 1, T0);
	assert_int_equal(ok, 20);
	assert_int_equal(offer(b, 0xc0a80200, 20, T0), 20);
	assert_int_equal(lb_src_budget_count(b), 2);
	lb_src_budget_free(b);
	b = mk(10, 20, 32, 1024, &st);
	ok = 0;
	for (uint32_t h = 0; h < 256; h++)
		ok += offer(b, 0xc0a80100 | h, 1, T0);
	assert_int_equal(ok, 256);
	lb_src_budget_free(b);
}

/*
 * A full table under a spray of new sources: every sprayed source gets
 * its first flow (a new source starts full), the source over its
 * budget keeps its debt (its bucket is the emptiest of its set, never
 * the one replaced), and a quiet client loses nothing.
 */
static void
test_full_table(void **state)
{
	struct lb_src_budget_stats st;
	struct lb_src_budget *b = mk(1000, 100, 32, 4, &st); /* one set */
	const uint32_t heavy = 0x0a000001, quiet = 0x0a000002;
	uint64_t now = T0;
	unsigned int sprayed = 0;

	(void)state;
	assert_int_equal(offer(b, heavy, 1000, now), 100);
	assert_int_equal(offer(b, quiet, 1, now), 1);
	for (uint32_t s = 0; s < 100000; s++) {
		if (s % 100 == 0)
			now += MS / 10;
		sprayed += offer(b, 0x14000000 + s, 1, now);
		/* Every 100 sprayed sources the heavy one tries again:
		 * still at the rate, 1 per ms, not 100 at once. */
		if (s % 1000 == 999)
			assert_true(offer(b, heavy, 100, now) <= 1);
	}
	assert_int_equal(sprayed, 100000);
	assert_int_equal(lb_src_budget_count(b), 4);
	/* The spray replaced buckets that owed a flow (one each), never
	 * the heavy one: it is still owed. */
	assert_true(st.evicted > 0);
	assert_true(offer(b, heavy, 100, now) <= 1);
	/* The quiet client was forgotten with a full bucket: its burst. */
	assert_int_equal(offer(b, quiet, 100, now), 100);
	lb_src_budget_free(b);
}

/* The sets depend on the secrets: another worker's table (other keys)
 * puts the same sources elsewhere. */
static void
test_secret(void **state)
{
	struct lb_src_budget_conf c;
	struct lb_src_budget_stats st = { 0 };
	struct lb_src_budget *a, *b;
	unsigned int same = 0;

	(void)state;
	lb_src_budget_conf_default(&c);
	a = lb_src_budget_create(&c, K0, K1, &st);
	b = lb_src_budget_create(&c, K0 ^ 1, K1, &st);
	assert_non_null(a);
	assert_non_null(b);
	for (uint32_t s = 0; s < 1000; s++)
		same += lb_src_budget_set_of(a, s) - a->set ==
			lb_src_budget_set_of(b, s) - b->set;
	/* 16384 sets: a few coincide by chance, not most. */
	assert_true(same < 20);
	/* Consecutive addresses spread over the sets. */
	same = 0;
	for (uint32_t s = 1; s < 1000; s++)
		same += lb_src_budget_set_of(a, s) ==
			lb_src_budget_set_of(a, s - 1);
	assert_true(same < 20);
	lb_src_budget_free(a);
	lb_src_budget_free(b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_conf_check),
		cmocka_unit_test(test_burst_then_rate),
		cmocka_unit_test(test_odd_rate),
		cmocka_unit_test(test_prefix),
		cmocka_unit_test(test_full_table),
		cmocka_unit_test(test_secret),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
