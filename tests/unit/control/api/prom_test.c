/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "prom.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static void
test_names(void **state)
{
	static const struct {
		const char *name;
		int metric, label;
	} rows[] = {
		{"lb_rx_packets_total", 1, 1},
		{"_x", 1, 1},
		{"a:b", 1, 0},
		{"__reserved", 1, 0},
		{"x9", 1, 1},
		{"9x", 0, 0},
		{"", 0, 0},
		{"a-b", 0, 0},
		{"a b", 0, 0},
		{"caf\xc3\xa9", 0, 0},
	};

	(void)state;
	for (size_t i = 0; i < NELEM(rows); i++) {
		assert_int_equal(lb_prom_name_ok(rows[i].name, 0),
				 rows[i].metric);
		assert_int_equal(lb_prom_name_ok(rows[i].name, 1),
				 rows[i].label);
	}
	assert_int_equal(lb_prom_name_ok(NULL, 0), 0);
}

static void
test_family_and_samples(void **state)
{
	const struct lb_prom_label l[] = {
		{"service", "tcp 10.0.0.1:80"},
		{"backend", "10.1.0.1:80"},
		{"worker", "0"},
	};
	struct lb_cmd_out o;

	(void)state;
	lb_cmd_out_init(&o);
	assert_int_equal(lb_prom_family(&o, "lb_backend_flows_total", "counter",
					"Flows created."),
			 0);
	assert_int_equal(
		lb_prom_u64(&o, "lb_backend_flows_total", l, 2, UINT64_MAX), 0);
	assert_int_equal(
		lb_prom_family(&o, "lb_x", "gauge", "Back\\slash and\nnewline"),
		0);
	assert_int_equal(lb_prom_i64(&o, "lb_x", l + 2, 1, -5), 0);
	assert_int_equal(lb_prom_u64(&o, "lb_x", NULL, 0, 0), 0);
	assert_string_equal(
		lb_cmd_out_text(&o),
		"# HELP lb_backend_flows_total Flows created.\n"
		"# TYPE lb_backend_flows_total counter\n"
		"lb_backend_flows_total{service=\"tcp 10.0.0.1:80\","
		"backend=\"10.1.0.1:80\"} 18446744073709551615\n"
		"# HELP lb_x Back\\\\slash and\\nnewline\n"
		"# TYPE lb_x gauge\n"
		"lb_x{worker=\"0\"} -5\n"
		"lb_x 0\n");
	lb_cmd_out_free(&o);
}

static void
test_escaping(void **state)
{
	const struct lb_prom_label l[] = {
		{"a", "quote\" back\\ nl\n end"},
		{"b", ""},
		{"c", NULL},
	};
	struct lb_cmd_out o;

	(void)state;
	lb_cmd_out_init(&o);
	assert_int_equal(lb_prom_u64(&o, "m", l, 3, 1), 0);
	assert_string_equal(lb_cmd_out_text(&o),
			    "m{a=\"quote\\\" back\\\\ nl\\n end\",b=\"\","
			    "c=\"\"} 1\n");
	lb_cmd_out_free(&o);
}

static void
test_floats(void **state)
{
	static const struct {
		double v;
		const char *s;
	} rows[] = {
		{0.0, "m 0\n"},
		{0.1, "m 0.1\n"},
		{1e-9, "m 1e-09\n"},
		{123456.789, "m 123456.789\n"},
		{0.30000000000000004, "m 0.30000000000000004\n"},
		{1.0 / 3.0, "m 0.3333333333333333\n"},
		{-2.5, "m -2.5\n"},
	};
	struct lb_cmd_out o;

	(void)state;
	lb_cmd_out_init(&o);
	for (size_t i = 0; i < NELEM(rows); i++) {
		lb_cmd_out_reset(&o);
		assert_int_equal(lb_prom_f64(&o, "m", NULL, 0, rows[i].v), 0);
		assert_string_equal(lb_cmd_out_text(&o), rows[i].s);
		/* Whatever the spelling, it reads back as the same value. */
		assert_true(strtod(lb_cmd_out_text(&o) + 2, NULL) == rows[i].v);
	}
	lb_cmd_out_reset(&o);
	assert_int_equal(lb_prom_f64(&o, "m", NULL, 0, NAN), 0);
	assert_int_equal(lb_prom_f64(&o, "m", NULL, 0, INFINITY), 0);
	assert_int_equal(lb_prom_f64(&o, "m", NULL, 0, -INFINITY), 0);
	assert_string_equal(lb_cmd_out_text(&o), "m NaN\nm +Inf\nm -Inf\n");
	lb_cmd_out_free(&o);
}

static void
test_refusals(void **state)
{
	const struct lb_prom_label bad[] = {{"a-b", "x"}};
	const struct lb_prom_label many[LB_PROM_LABELS_MAX + 1] = {
		{"a", "1"},
	};
	struct lb_cmd_out o;

	(void)state;
	lb_cmd_out_init(&o);
	assert_int_equal(lb_prom_family(&o, "1x", "counter", "h"), -EINVAL);
	assert_int_equal(lb_prom_family(&o, "x", "histogram", "h"), -EINVAL);
	assert_int_equal(lb_prom_family(&o, "x", NULL, "h"), -EINVAL);
	assert_int_equal(lb_prom_family(NULL, "x", "gauge", "h"), -EINVAL);
	assert_int_equal(lb_prom_u64(&o, "x", bad, 1, 1), -EINVAL);
	assert_int_equal(lb_prom_u64(&o, "x", many, LB_PROM_LABELS_MAX + 1, 1),
			 -EINVAL);
	assert_int_equal(lb_prom_u64(&o, "x", NULL, 1, 1), -EINVAL);
	assert_int_equal(lb_prom_u64(&o, "x:y", NULL, 0, 1), 0);
	/* Nothing half-written by the refusals. */
	assert_string_equal(lb_cmd_out_text(&o), "x:y 1\n");
	lb_cmd_out_free(&o);
}

/* ---- sources registered by their files ---- */

static int
src_write(void *ctx, struct lb_cmd_out *o)
{
	return lb_cmd_printf(o, "%s;", (const char *)ctx);
}

static int
src_fail(void *ctx, struct lb_cmd_out *o)
{
	(void)ctx;
	(void)o;
	return -EIO;
}

/* Names and ranks in different orders: the rank decides. */
static const struct lb_prom_src src_b = {"test-b", 1, "first", src_write};
static const struct lb_prom_src src_a = {"test-a", 2, "second", src_write};
static const struct lb_prom_src src_c = {"test-c", 2, "third", src_write};
static const struct lb_prom_src src_f = {"test-f", 3, "fail", src_fail};
LB_PROM_REGISTER(src_a);
LB_PROM_REGISTER(src_c);
LB_PROM_REGISTER(src_b);
LB_PROM_REGISTER(src_f);

static void
test_sources(void **state)
{
	const struct lb_cmd_bind b[] = {
		{"third", "c"},
		{"second", "a"},
		{"first", "b"},
	};
	struct lb_cmd_out o;

	(void)state;
	lb_cmd_out_init(&o);
	assert_int_equal(lb_prom_format_all(b, 3, &o), 0);
	assert_string_equal(lb_cmd_out_text(&o), "b;a;c;");
	/* Unbound contexts are left out. */
	lb_cmd_out_reset(&o);
	assert_int_equal(lb_prom_format_all(b, 1, &o), 0);
	assert_string_equal(lb_cmd_out_text(&o), "c;");
	/* A source's error stops the exposition. */
	lb_cmd_out_reset(&o);
	assert_int_equal(
		lb_prom_format_all((const struct lb_cmd_bind[]){{"fail", NULL},
								{"first", "b"}},
				   2, &o),
		-EIO);
	assert_string_equal(lb_cmd_out_text(&o), "b;");
	assert_int_equal(lb_prom_format_all(NULL, 1, &o), -EINVAL);
	assert_int_equal(lb_prom_format_all(b, 3, NULL), -EINVAL);
	/* A name is taken once; a source is whole. */
	assert_int_equal(lb_prom_src_add(&src_a), -EEXIST);
	assert_int_equal(lb_prom_src_add(NULL), -EINVAL);
	assert_int_equal(
		lb_prom_src_add(&(struct lb_prom_src){"x", 1, "x", NULL}),
		-EINVAL);
	lb_cmd_out_free(&o);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_family_and_samples),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_floats),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_sources),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
