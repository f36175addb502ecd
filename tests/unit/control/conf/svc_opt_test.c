/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The service options' registry and what its rows drive. This program
 * links tests/unit/svc_opt_first.c, one more option in a table of its own,
 * and shows that the row alone makes it a full option.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lb/http_err.h"
#include "lb/svc_opt.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* The production options in the order they are saved and listed, then
 * the test's own. */
static const char *const order[] = {
	"sched",
	"http",
	"retries",
	"deferq",
	"retry-gap",
	"expiry",
	"syn-timeout",
	"governor",
	"gov-ideal-rate",
	"gov-interval",
	"gov-window",
	"gov-overload",
	"gov-raise",
	"gov-release",
	"gov-calm",
	"gov-min-samples",
	"default-priority",
	"reject-status",
	"retry-after",
	"spl-header",
	"spl-time-header",
	"priority-header",
	"expect-header",
	"orca-header",
	"errors",
	"error-exclude",
	"default-expect",
	"rebind",
	"err-memory",
	"min-volume",
	"max-eject",
	"panic",
	"admit-rate",
	"admit-burst",
	"admit-key",
	"admit-prefix",
	"admit-prefix6",
	"admit-reject",
	"admit-cluster",
	"admit-full",
	"unfollowable",
	"prio-trust",
	"check",
	"check-path",
	"check-status",
	"check-port",
	"check-interval",
	"check-timeout",
	"check-rise",
	"check-fall",
	"timeout-syn-recv",
	"timeout-established",
	"timeout-closing",
	"timeout-time-wait",
	"timeout-closed",
	"timeout-udp",
	"timeout-udp-unreplied",
	"rst-rate",
	"idle-rst",
	"proxy-protocol",
	"synproxy",
	"synproxy-mss",
	"synproxy-wscale",
	"synproxy-syn-rate",
	"synproxy-half-open",
	"synproxy-calm",
	"first-retries",
};

static int
known(const char *name)
{
	return strcmp(name, "adaptive") == 0 || strcmp(name, "maglev") == 0;
}

static void
test_registry(void **state)
{
	(void)state;
	assert_int_equal(lb_svc_opt_count(), NELEM(order));
	for (unsigned int i = 0; i < NELEM(order); i++) {
		const struct lb_svc_opt *d = lb_svc_opt_at(i);

		assert_non_null(d);
		assert_string_equal(d->name, order[i]);
		assert_ptr_equal(lb_svc_opt_find(order[i]), d);
		assert_non_null(d->owner);
		assert_true(strlen(d->help) > 10);
	}
	assert_null(lb_svc_opt_at(NELEM(order)));
	assert_null(lb_svc_opt_find("bogus"));
	assert_null(lb_svc_opt_find(NULL));
	assert_string_equal(lb_svc_opt_find("admit-key")->owner, "admit");
	assert_string_equal(lb_svc_opt_find("check")->owner, "health");
	assert_string_equal(lb_svc_opt_find("first-retries")->owner, "first");
}

/* What registration refuses leaves the registry as it was. */
static void
test_register_refused(void **state)
{
	static const struct lb_svc_opt dup[] = {{
		.name = "retries",
		.owner = "x",
		.type = LB_SVC_OPT_UINT,
		LB_SVC_OPT_FIELD(retries),
		.max = 1,
		.help = "taken",
	}};
	static const struct lb_svc_opt twice[] = {
		{.name = "x-a",
		 .owner = "x",
		 .type = LB_SVC_OPT_UINT,
		 LB_SVC_OPT_FIELD(retries),
		 .max = 1,
		 .help = "a"},
		{.name = "x-a",
		 .owner = "x",
		 .type = LB_SVC_OPT_UINT,
		 LB_SVC_OPT_FIELD(retries),
		 .max = 1,
		 .help = "a"},
	};
	static const struct lb_svc_opt bad[][1] = {
		/* a duration in 32 bits */
		{{.name = "x-d",
		  .owner = "x",
		  .type = LB_SVC_OPT_DURATION,
		  LB_SVC_OPT_FIELD(retries),
		  .help = "d"}},
		/* no help */
		{{.name = "x-h",
		  .owner = "x",
		  .type = LB_SVC_OPT_UINT,
		  LB_SVC_OPT_FIELD(retries)}},
		/* an enum without words */
		{{.name = "x-e",
		  .owner = "x",
		  .type = LB_SVC_OPT_ENUM,
		  LB_SVC_OPT_FIELD(http),
		  .help = "e"}},
		/* a string longer than its field */
		{{.name = "x-s",
		  .owner = "x",
		  .type = LB_SVC_OPT_STR,
		  LB_SVC_OPT_FIELD(sched),
		  .max = LB_CONF_SCHED_LEN + 1,
		  .def_str = "",
		  .help = "s"}},
		/* a keyword alone that would be on by default */
		{{.name = "x-f",
		  .owner = "x",
		  .type = LB_SVC_OPT_BOOL,
		  .flags = LB_SVC_OPT_F_FLAG,
		  LB_SVC_OPT_FIELD(http),
		  .def = 1,
		  .help = "f"}},
		/* a custom value without its parser */
		{{.name = "x-c",
		  .owner = "x",
		  .type = LB_SVC_OPT_CUSTOM,
		  LB_SVC_OPT_FIELD(check.status_lo),
		  .max = 7,
		  .def_str = "200",
		  .help = "c"}},
	};
	struct lb_svc_opt_table t = {.name = "x", .rank = 5, .nb_opt = 1};
	unsigned int n = lb_svc_opt_count();

	(void)state;
	t.opt = dup;
	assert_int_equal(lb_svc_opt_register(&t), -EEXIST);
	t.opt = twice;
	t.nb_opt = 2;
	assert_int_equal(lb_svc_opt_register(&t), -EEXIST);
	t.nb_opt = 1;
	for (size_t i = 0; i < NELEM(bad); i++) {
		t.opt = bad[i];
		assert_int_equal(lb_svc_opt_register(&t), -EINVAL);
	}
	t.name = "core";
	t.opt = twice;
	assert_int_equal(lb_svc_opt_register(&t), -EEXIST);
	assert_int_equal(lb_svc_opt_register(NULL), -EINVAL);
	assert_int_equal(lb_svc_opt_count(), n);
	assert_string_equal(lb_svc_opt_at(0)->name, "sched");
}

/* The rows' defaults are those the headers document. */
static void
test_defaults(void **state)
{
	struct lb_conf_svc_opts o;
	struct lb_http_err_codes codes;
	struct lb_admit_conf a;

	(void)state;
	memset(&o, 0xa5, sizeof(o));
	lb_svc_opt_default(&o);
	assert_string_equal(o.sched, LB_CONF_SCHED_DEFAULT);
	assert_false(o.http);
	assert_int_equal(o.retries, LB_CONF_RETRIES_DEFAULT);
	assert_int_equal(o.deferq_len, LB_CONF_DEFERQ_DEFAULT);
	assert_int_equal(o.retry_gap_ns, LB_CONF_RETRY_GAP_DEFAULT_NS);
	assert_int_equal(o.expiry_ns, LB_CONF_EXPIRY_DEFAULT_NS);
	assert_int_equal(o.syn_timeout_ns, LB_CONF_SYN_TIMEOUT_DEFAULT_NS);
	assert_int_equal(o.err_memory, LB_CONF_ERR_MEMORY_DEFAULT);
	assert_int_equal(o.panic, LB_CONF_PANIC_DEFAULT);
	assert_int_equal(o.gov[LB_CONF_GOV_STATUS], 503);
	assert_int_equal(o.flow[LB_CONF_FLOW_ESTABLISHED], 900000000000ull);
	assert_int_equal(o.flow[LB_CONF_FLOW_IDLE_RST], 1);
	lb_admit_conf_default(&a);
	assert_true(lb_admit_conf_eq(&o.admit, &a));
	assert_int_equal(o.prio_trust.n, 0);
	assert_string_equal(o.hdr[LB_CONF_HDR_SPL], "X-SPL");
	assert_string_equal(o.hdr[LB_CONF_HDR_ORCA], "endpoint-load-metrics");
	assert_string_equal(o.errors, "5xx");
	lb_http_err_codes_default(&codes);
	assert_memory_equal(&o.err_codes, &codes, sizeof(codes));
	assert_string_equal(o.err_exclude, "");
	assert_int_equal(o.check.type, LB_CONF_CHECK_NONE);
	assert_int_equal(o.check.status_lo, 200);
	assert_int_equal(o.check.status_hi, 399);
	assert_string_equal(o.check.path, "/");
	assert_int_equal(o.check.rise, LB_CONF_CHECK_RISE_DEFAULT);
}

/*
 * Every option's default, written and read back by keyword, gives the
 * same options: fmt() and parse() are each other's inverse for every row.
 */
static void
test_fmt_parse_inverse(void **state)
{
	struct lb_svc_opt_ctx x = {LB_CONF_PROTO_TCP, known, NULL};
	struct lb_conf_svc_opts def, o;
	struct lb_cmd_out out;

	(void)state;
	lb_cmd_out_init(&out);
	lb_svc_opt_default(&def);
	assert_int_equal(lb_svc_opt_check_all(&x, &def, &out), 0);
	for (unsigned int i = 0; i < lb_svc_opt_count(); i++) {
		const struct lb_svc_opt *d = lb_svc_opt_at(i);
		char v[LB_SVC_OPT_STRLEN], *argv[2];

		/* "" is written quoted; the tokenizer would unquote it */
		assert_int_equal(lb_svc_opt_fmt(d, &def, v, sizeof(v)), 0);
		argv[0] = (char *)d->name;
		argv[1] = strcmp(v, "\"\"") == 0 ? (char *)"none" : v;
		memset(&o, 0, sizeof(o));
		lb_svc_opt_default(&o);
		assert_int_equal(lb_svc_opt_parse(2, argv, false, &o, &out), 0);
		lb_svc_opt_copy(&o, &o);
		assert_true(lb_svc_opt_eq(&o, &def));
	}
	lb_cmd_out_free(&out);
}

/* An ENUM word unknown to the row: at once, or named by the check. */
static void
test_enum_words(void **state)
{
	struct lb_svc_opt_ctx x = {LB_CONF_PROTO_TCP, NULL, NULL};
	char *unk[] = {"check", "ping"}, *late[] = {"admit-key", "host"};
	struct lb_conf_svc_opts o;
	struct lb_cmd_out out;

	(void)state;
	lb_cmd_out_init(&out);
	lb_svc_opt_default(&o);
	assert_int_equal(lb_svc_opt_parse(2, unk, true, &o, &out), -EINVAL);
	assert_string_equal(lb_cmd_out_errmsg(&out),
			    "unknown check 'ping': expected none, tcp or http");
	lb_cmd_out_reset(&out);
	assert_int_equal(lb_svc_opt_parse(2, late, true, &o, &out), 0);
	assert_int_equal(lb_svc_opt_check_all(&x, &o, &out), -EINVAL);
	assert_string_equal(lb_cmd_out_errmsg(&out),
			    "admit-key: expected svc, client, prefix, "
			    "client-svc or prio");
	lb_cmd_out_free(&out);
}

/* The reference and the synopsis list every row with its default. */
static void
test_reference(void **state)
{
	const char *ref = lb_svc_opt_reference();
	const char *syn = lb_svc_opt_synopsis();

	(void)state;
	for (unsigned int i = 0; i < lb_svc_opt_count(); i++) {
		char item[128];

		snprintf(item, sizeof(item), "- `%s", lb_svc_opt_at(i)->name);
		assert_non_null(strstr(ref, item));
		snprintf(item, sizeof(item), "[%s", lb_svc_opt_at(i)->name);
		assert_non_null(strstr(syn, item));
	}
	assert_non_null(strstr(ref, "- `retries N`: trials per new "));
	assert_non_null(strstr(ref, "(0..256, default 0)"));
	assert_non_null(strstr(ref, "(default `adaptive`)"));
	assert_non_null(strstr(ref, "- `admit-reject drop|rst`: "));
	assert_non_null(strstr(syn, "[sched NAME] [http] [retries N]"));
	/* no line of the reference is longer than 72 columns */
	for (const char *p = ref; *p != '\0';) {
		size_t n = strcspn(p, "\n");

		assert_true(n <= 72);
		p += n + (p[n] == '\n');
	}
}

struct fx {
	struct lb_cmd_reg *r;
	struct lb_conf *c;
	struct lb_cmd_out o;
};

static int
run(struct fx *f, const char *line)
{
	lb_cmd_out_reset(&f->o);
	return lb_cmd_exec_line(f->r, line, &f->o);
}

static char *
saved(struct fx *f)
{
	lb_cmd_out_reset(&f->o);
	assert_int_equal(lb_conf_save(f->c, &f->o), 0);
	return strdup(lb_cmd_out_text(&f->o));
}

#define SVC "tcp 192.0.2.10:80"

/* `first-retries`, one row in svc_opt_first.c, is a whole option. */
static void
test_one_row_option(void **state)
{
	struct fx f = {lb_cmd_reg_create(), lb_conf_create(known), {0}};
	const struct lb_conf_svc_key k = {.proto = LB_CONF_PROTO_TCP, .vip = 0xc000020a,
		.port = 80};
	struct fx g = {lb_cmd_reg_create(), lb_conf_create(known), {0}};
	struct lb_conf_svc_opts o;
	uint64_t gen;
	char *s, *t;

	(void)state;
	lb_cmd_out_init(&f.o);
	lb_cmd_out_init(&g.o);
	assert_int_equal(lb_conf_register(f.c, f.r), 0);
	assert_int_equal(lb_conf_register(g.c, g.r), 0);

	/* parses */
	assert_int_equal(run(&f, "service add " SVC " first-retries 3"), 0);
	assert_int_equal(lb_conf_svc_find(f.c, &k)->opts.retries, 3);

	/* validates: the parser and the check, with their messages */
	assert_int_equal(run(&f, "service set " SVC " first-retries 9"),
			 -ERANGE);
	assert_string_equal(f.o.errmsg, "first-retries 9 out of range 0..8");
	o = lb_conf_svc_find(f.c, &k)->opts;
	o.retries = 20;
	lb_cmd_out_reset(&f.o);
	assert_int_equal(lb_conf_svc_set(f.c, &k, &o, &f.o), -ERANGE);
	assert_string_equal(f.o.errmsg, "first-retries 20 out of range 0..8");

	/* compares and copies: the same value is no change, another is */
	gen = lb_conf_generation(f.c);
	assert_int_equal(run(&f, "service set " SVC " first-retries 3"), 0);
	assert_int_equal(lb_conf_generation(f.c), gen);
	assert_int_equal(run(&f, "service set " SVC " first-retries 5"), 0);
	assert_int_equal(lb_conf_generation(f.c), gen + 1);
	assert_int_equal(lb_conf_svc_find(f.c, &k)->opts.retries, 5);

	/* saves, and what it saved loads to the same configuration */
	s = saved(&f);
	assert_non_null(strstr(s, " first-retries 5\n"));
	for (char *line = strtok(s, "\n"); line != NULL;
	     line = strtok(NULL, "\n"))
		assert_int_equal(run(&g, line), 0);
	free(s);
	s = saved(&f);
	t = saved(&g);
	assert_string_equal(s, t);
	free(s);
	free(t);

	/* appears in the reference of `help service add` */
	assert_int_equal(run(&f, "help service add"), 0);
	assert_non_null(strstr(lb_cmd_out_text(&f.o), "[first-retries N]"));
	assert_non_null(strstr(lb_cmd_out_text(&f.o),
			       "- `first-retries N`: trials of the first "
			       "scheduler (0..8, default 0).\n"));

	lb_cmd_out_free(&f.o);
	lb_cmd_out_free(&g.o);
	lb_conf_free(f.c);
	lb_conf_free(g.c);
	lb_cmd_reg_free(f.r);
	lb_cmd_reg_free(g.r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_register_refused),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_fmt_parse_inverse),
		cmocka_unit_test(test_enum_words),
		cmocka_unit_test(test_reference),
		cmocka_unit_test(test_one_row_option),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
