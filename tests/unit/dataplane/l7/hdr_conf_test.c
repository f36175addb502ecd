/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lb/cmd.h"
#include "lb/hdr_conf.h"

struct fx {
	struct lb_conf *c;
	struct lb_cmd_reg *r;
	struct lb_cmd_out o;
};

static int
fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return -1;
	f->c = lb_conf_create(NULL);
	f->r = lb_cmd_reg_create();
	if (f->c == NULL || f->r == NULL || lb_conf_register(f->c, f->r) != 0)
		return -1;
	lb_cmd_out_init(&f->o);
	*state = f;
	return 0;
}

static int
fx_teardown(void **state)
{
	struct fx *f = *state;

	lb_cmd_out_free(&f->o);
	lb_cmd_reg_free(f->r);
	lb_conf_free(f->c);
	free(f);
	return 0;
}

static int
run(struct fx *f, const char *line)
{
	lb_cmd_out_free(&f->o);
	lb_cmd_out_init(&f->o);
	return lb_cmd_exec_line(f->r, line, &f->o);
}

static void
must(struct fx *f, const char *line)
{
	if (run(f, line) != 0)
		fail_msg("%s: %s", line, lb_cmd_out_errmsg(&f->o));
}

static const struct lb_conf_svc_opts *
opts(struct fx *f, unsigned int i)
{
	return &lb_conf_svc_at(f->c, i)->opts;
}

static void
build_ok(struct fx *f, struct lb_hdr_cfg *cfg)
{
	char err[160] = "";

	if (lb_hdr_conf_build(f->c, cfg, err, sizeof(err)) != 0)
		fail_msg("build: %s", err);
}

/* No http service, or http services with the default names: exactly the
 * scanner's default fields, in its order. */
static void
test_defaults(void **state)
{
	struct fx *f = *state;
	struct lb_hdr_cfg cfg, def;
	struct lb_hdr_map m;

	lb_hdr_cfg_default(&def);
	build_ok(f, &cfg);
	assert_memory_equal(&cfg, &def, sizeof(cfg));
	must(f, "service add tcp 10.0.0.1:80 http");
	must(f, "service add tcp 10.0.0.2:80 http");
	must(f, "service add tcp 10.0.0.3:80");
	build_ok(f, &cfg);
	assert_memory_equal(&cfg, &def, sizeof(cfg));
	lb_hdr_conf_map(&cfg, opts(f, 0), &m);
	for (int h = 0; h < LB_CONF_HDR_NB; h++)
		assert_int_equal(m.f[h], h);
	assert_string_equal(lb_conf_hdr_default(LB_CONF_HDR_SPL), "X-SPL");
	assert_null(lb_conf_hdr_default(LB_CONF_HDR_NB));
}

/* Names per service: one database holds them all, each service reads its
 * own, a name shared by two services for the same kind is one field. */
static void
test_per_service_names(void **state)
{
	struct fx *f = *state;
	struct lb_hdr_cfg cfg;
	struct lb_hdr_map a, b, c;

	must(f, "service add tcp 10.0.0.1:80 http spl-header X-Load "
		"priority-header x-rank");
	must(f, "service add tcp 10.0.0.2:80 http");
	must(f, "service add tcp 10.0.0.3:80 http spl-header x-load");
	/* not http: its names are not looked for */
	must(f, "service add tcp 10.0.0.4:80 spl-header X-Unused");
	build_ok(f, &cfg);
	assert_int_equal(cfg.nb_fields, 7);
	assert_string_equal(cfg.fields[0].name, "X-Load");
	assert_int_equal(cfg.fields[0].kind, LB_HDR_KIND_SPL);
	assert_string_equal(cfg.fields[2].name, "x-rank");
	assert_int_equal(cfg.fields[2].kind, LB_HDR_KIND_PRIORITY);
	lb_hdr_conf_map(&cfg, opts(f, 0), &a);
	lb_hdr_conf_map(&cfg, opts(f, 1), &b);
	lb_hdr_conf_map(&cfg, opts(f, 2), &c);
	assert_int_equal(a.f[LB_CONF_HDR_SPL], 0);
	assert_int_equal(c.f[LB_CONF_HDR_SPL], 0);
	assert_int_equal(a.f[LB_CONF_HDR_PRIORITY], 2);
	assert_string_equal(cfg.fields[b.f[LB_CONF_HDR_SPL]].name, "X-SPL");
	assert_string_equal(cfg.fields[b.f[LB_CONF_HDR_PRIORITY]].name,
			    "X-Priority");
	assert_int_equal(a.f[LB_CONF_HDR_SPL_TIME], b.f[LB_CONF_HDR_SPL_TIME]);
	/* a map against a database without the name: not read */
	lb_hdr_conf_map(&cfg, opts(f, 3), &a);
	assert_int_equal(a.f[LB_CONF_HDR_SPL], -1);
}

static void
test_conflicts_and_limits(void **state)
{
	struct fx *f = *state;
	struct lb_hdr_cfg cfg;
	char err[160] = "", line[256];

	must(f, "service add tcp 10.0.0.1:80 http spl-header X-Foo");
	must(f, "service add tcp 10.0.0.2:80 http priority-header X-Foo");
	assert_int_equal(lb_hdr_conf_build(f->c, &cfg, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "X-Foo"));
	must(f, "service set tcp 10.0.0.2:80 priority-header X-Bar");
	build_ok(f, &cfg);
	/* 2 services bring 7 names; 2 more with 5 new names each pass 16 */
	for (int s = 3; s <= 4; s++) {
		snprintf(line, sizeof(line),
			 "service add tcp 10.0.0.%d:80 http spl-header a%d "
			 "spl-time-header b%d priority-header c%d "
			 "expect-header d%d orca-header e%d",
			 s, s, s, s, s, s);
		must(f, line);
	}
	assert_int_equal(lb_hdr_conf_build(f->c, &cfg, err, sizeof(err)),
			 -ENOSPC);
	assert_non_null(strstr(err, "16"));
}

/* The options: token names only, distinct within a service, saved when
 * not the default, refused without a trace. */
static void
test_options(void **state)
{
	struct fx *f = *state;
	uint64_t gen;

	must(f, "service add tcp 10.0.0.1:80 http expect-header X-Deadline");
	gen = lb_conf_generation(f->c);
	assert_int_not_equal(run(f, "service set tcp 10.0.0.1:80 "
				    "spl-header X:Y"),
			     0);
	assert_non_null(strstr(lb_cmd_out_errmsg(&f->o), "spl-header"));
	assert_int_not_equal(run(f, "service set tcp 10.0.0.1:80 "
				    "spl-header x-spl spl-time-header X-SPL"),
			     0);
	assert_int_not_equal(
		run(f, "service set tcp 10.0.0.1:80 orca-header "
		       "A123456789012345678901234567890123456789012345678901"
		       "23456789012345"),
		0);
	assert_int_equal(lb_conf_generation(f->c), gen);
	assert_string_equal(opts(f, 0)->hdr[LB_CONF_HDR_SPL], "X-SPL");
	must(f, "service set tcp 10.0.0.1:80 spl-header X-Load");
	assert_int_equal(lb_conf_generation(f->c), gen + 1);
	must(f, "service set tcp 10.0.0.1:80 spl-header X-Load");
	assert_int_equal(lb_conf_generation(f->c), gen + 1);
	must(f, "save");
	assert_non_null(strstr(lb_cmd_out_text(&f->o),
			       "service add tcp 10.0.0.1:80 http "
			       "spl-header X-Load expect-header X-Deadline\n"));
	assert_null(strstr(lb_cmd_out_text(&f->o), "priority-header"));
}

/* The error policy and default expectation: saved when not the default,
 * the set derived from the text, refused without a trace when bad. */
static void
test_error_options(void **state)
{
	static const char *const bad[] = {
		"errors 600", "errors 5XX", "errors 500,", "errors",
		"error-exclude health", "error-exclude /a,/b,/c,/d,/e",
		"error-exclude /a?b", "default-expect 2h", "default-expect x",
	};
	struct fx *f = *state;
	char line[160];
	uint64_t gen;

	must(f, "service add tcp 10.0.0.1:80 http");
	assert_string_equal(opts(f, 0)->errors, "5xx");
	assert_true(lb_http_err_codes_has(&opts(f, 0)->err_codes, 503));
	assert_false(lb_http_err_codes_has(&opts(f, 0)->err_codes, 404));
	gen = lb_conf_generation(f->c);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(line, sizeof(line), "service set tcp 10.0.0.1:80 %s",
			 bad[i]);
		if (run(f, line) == 0)
			fail_msg("'%s' accepted", line);
	}
	assert_int_equal(lb_conf_generation(f->c), gen);
	must(f, "save");
	assert_null(strstr(lb_cmd_out_text(&f->o), "error"));
	assert_null(strstr(lb_cmd_out_text(&f->o), "default-expect"));
	must(f, "service set tcp 10.0.0.1:80 errors 4xx,500,502-504 "
		"error-exclude /health,/ready default-expect 1500us");
	assert_true(lb_http_err_codes_has(&opts(f, 0)->err_codes, 404));
	assert_true(lb_http_err_codes_has(&opts(f, 0)->err_codes, 503));
	assert_false(lb_http_err_codes_has(&opts(f, 0)->err_codes, 501));
	/* whole milliseconds, rounded up */
	assert_int_equal(opts(f, 0)->default_expect_ms, 2);
	must(f, "save");
	assert_non_null(strstr(lb_cmd_out_text(&f->o),
			       " errors 4xx,500,502-504 error-exclude "
			       "/health,/ready default-expect 2ms\n"));
	must(f, "service set tcp 10.0.0.1:80 errors none error-exclude none "
		"default-expect 0s");
	assert_false(lb_http_err_codes_has(&opts(f, 0)->err_codes, 503));
	must(f, "save");
	assert_non_null(strstr(lb_cmd_out_text(&f->o), " errors none\n"));
	assert_null(strstr(lb_cmd_out_text(&f->o), "error-exclude"));
}

/* Compile, serialise, deserialise: the copy scans like the original and
 * the blob's identity follows its content. */
static void
test_blob_round_trip(void **state)
{
	static const char blk[] = "HTTP/1.1 200 OK\r\nX-SPL: 0.9\r\n"
				  "x-load: 0.25\r\n\r\n";
	struct fx *f = *state;
	struct lb_hdr_cfg cfg, cfg2;
	void *blob, *blob2;
	size_t len, len2;
	struct lb_hdr_db *db;
	struct lb_hdr_scratch *scr;
	struct lb_hdr_result r;
	struct lb_hdr_map m;
	uint8_t *bad;

	must(f, "service add tcp 10.0.0.1:80 http spl-header X-Load");
	build_ok(f, &cfg);
	assert_int_equal(lb_hdr_conf_blob(&cfg, &blob, &len), 0);
	assert_int_equal(lb_hdr_conf_blob(&cfg, &blob2, &len2), 0);
	assert_int_equal(len, len2);
	assert_int_equal(lb_hdr_db_blob_id(blob, len),
			 lb_hdr_db_blob_id(blob2, len2));
	free(blob2);
	db = lb_hdr_db_deserialize(blob, len);
	assert_non_null(db);
	assert_memory_equal(lb_hdr_db_cfg(db), &cfg, sizeof(cfg));
	scr = lb_hdr_scratch_alloc(db);
	assert_non_null(scr);
	lb_hdr_conf_map(lb_hdr_db_cfg(db), opts(f, 0), &m);
	assert_int_equal(lb_hdr_scan_block(db, scr, blk, strlen(blk), &r), 0);
	assert_true(r.valid & (1u << m.f[LB_CONF_HDR_SPL]));
	assert_true(r.field[m.f[LB_CONF_HDR_SPL]].v.d == 0.25);
	/* X-SPL is no field of this database any more */
	assert_int_equal(r.valid, 1u << m.f[LB_CONF_HDR_SPL]);
	lb_hdr_scratch_free(scr);
	lb_hdr_db_free(db);

	/* another name, another blob */
	must(f, "service set tcp 10.0.0.1:80 spl-header X-Other");
	build_ok(f, &cfg2);
	assert_int_equal(lb_hdr_conf_blob(&cfg2, &blob2, &len2), 0);
	assert_int_not_equal(lb_hdr_db_blob_id(blob, len),
			     lb_hdr_db_blob_id(blob2, len2));
	free(blob2);
	/* a torn copy is refused */
	bad = malloc(len);
	assert_non_null(bad);
	memcpy(bad, blob, len);
	bad[len - 1] ^= 0x55;
	assert_null(lb_hdr_db_deserialize(bad, len));
	assert_null(lb_hdr_db_deserialize(blob, len - 8));
	assert_int_equal(lb_hdr_db_blob_id(NULL, 0), 0);
	free(bad);
	free(blob);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_defaults, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_per_service_names,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_conflicts_and_limits,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_options, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_blob_round_trip, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_error_options, fx_setup,
						fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
