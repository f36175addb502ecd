/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A service's named pools and content routing rules: the commands, their
 * refusals (each leaves the saved configuration as it was), the saved
 * form and its round trip, validation, and the compiled rules.
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

#include "lb/conf.h"
#include "route_rules.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static int
known(const char *name)
{
	return strcmp(name, "adaptive") == 0 || strcmp(name, "rr") == 0 ||
	       strcmp(name, "maglev") == 0;
}

#include "conf_fx.h"

#define SVC "tcp 192.0.2.10:443"

static const char *const setup[] = {
	"addr add 10.0.0.1/24 port 0",
	"service add " SVC " synproxy on",
	"service add udp 192.0.2.10:53",
	"service add tcp 192.0.2.11:80",
	"service add tcp [2001:db8::10]:443 synproxy on",
	"pool add " SVC " api sched rr check http check-path /healthz "
	"check-fall 2",
	"pool add " SVC " static",
	"pool add " SVC " tls-a check tcp sched maglev",
	"backend add " SVC " 10.0.0.11:8443",
	"backend add " SVC " 10.0.0.21:8080 pool api weight 3",
	"backend add " SVC " 10.0.0.22:8080 pool api",
	"backend add " SVC " 10.0.0.31:8080 weight 2 pool static",
	"backend add " SVC " 10.0.0.41:8443 pool tls-a",
	"backend drain " SVC " 10.0.0.41:8443",
	"rule add " SVC " sni api.example.com pool tls-a",
	"rule add " SVC " host api.example.com path-prefix /v1/ pool api",
	"rule add " SVC " at 2 path-prefix /static/ pool static",
	"rule default " SVC " refuse 421",
};

static const char saved_text[] =
	"addr add 10.0.0.1/24 port 0\n"
	"service add " SVC " synproxy on\n"
	"pool add " SVC " api sched rr check http check-path /healthz "
	"check-fall 2\n"
	"pool add " SVC " static\n"
	"pool add " SVC " tls-a sched maglev check tcp\n"
	"backend add " SVC " 10.0.0.11:8443\n"
	"backend add " SVC " 10.0.0.21:8080 weight 3 pool api\n"
	"backend add " SVC " 10.0.0.22:8080 pool api\n"
	"backend add " SVC " 10.0.0.31:8080 weight 2 pool static\n"
	"backend add " SVC " 10.0.0.41:8443 pool tls-a\n"
	"backend drain " SVC " 10.0.0.41:8443\n"
	"rule add " SVC " sni api.example.com pool tls-a\n"
	"rule add " SVC " path-prefix /static/ pool static\n"
	"rule add " SVC " host api.example.com path-prefix /v1/ pool api\n"
	"rule default " SVC " refuse 421\n"
	"service add udp 192.0.2.10:53\n"
	"service add tcp 192.0.2.11:80\n"
	"service add tcp [2001:db8::10]:443 synproxy on\n";

static struct fx *
fx_setup(void)
{
	struct fx *f = fx_new(known);

	for (size_t i = 0; i < NELEM(setup); i++)
		ok(f, setup[i]);
	return f;
}

static const struct lb_conf_svc *
svc(const struct fx *f)
{
	struct lb_conf_svc_key k = {.proto = 6, .vip = 0xc000020a,
				    .port = 443};

	return lb_conf_svc_find(f->c, &k);
}

/* lb_conf_validate() accepts @p f's configuration, and its saved text,
 * applied to the empty @p g and saved again, is the same; returned, for
 * the caller to free. */
static char *
roundtrip(struct fx *f, struct fx *g)
{
	char *a = saved(f->c), *b, *line, *save = NULL;

	assert_int_equal(lb_conf_validate(f->c, &f->o), 0);
	b = strdup(a);
	for (line = strtok_r(b, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save))
		ok(g, line);
	free(b);
	b = saved(g->c);
	assert_string_equal(a, b);
	free(b);
	return a;
}

/* Saved, applied to an empty configuration, saved again: the same text;
 * and lb_conf_validate() accepts it. */
static void
test_save_roundtrip(void **state)
{
	struct fx *f = fx_setup(), *g = fx_new(known);
	char *a = roundtrip(f, g);

	(void)state;
	assert_string_equal(a, saved_text);
	free(a);
	/* The pools' members: by name, whatever the order. */
	assert_int_equal(svc(g)->nb_pool, 3);
	assert_int_equal(svc(g)->be[0].pool, 0);
	assert_int_equal(svc(g)->be[1].pool, 1);
	assert_int_equal(svc(g)->be[3].pool, 2);
	assert_int_equal(svc(g)->be[4].pool, 3);
	assert_true(svc(g)->be[4].draining);
	fx_free(f);
	fx_free(g);
}

/* A service without pools or rules saves as it always did: no new
 * lines, and `rule default ... pool default` leaves it so. */
static void
test_plain_service_unchanged(void **state)
{
	struct fx *f = fx_new(known);
	char *a, *b;

	(void)state;
	ok(f, "service add tcp 192.0.2.10:80 synproxy on");
	ok(f, "backend add tcp 192.0.2.10:80 10.0.0.2:80 weight 2");
	a = saved(f->c);
	assert_string_equal(a, "service add tcp 192.0.2.10:80 synproxy on\n"
			       "backend add tcp 192.0.2.10:80 10.0.0.2:80 "
			       "weight 2\n");
	ok(f, "rule default tcp 192.0.2.10:80 pool default");
	ok(f, "backend add tcp 192.0.2.10:80 10.0.0.3:80 pool default");
	ok(f, "backend del tcp 192.0.2.10:80 10.0.0.3:80");
	b = saved(f->c);
	assert_string_equal(a, b);
	assert_false(lb_conf_svc_routes(lb_conf_svc_at(f->c, 0)));
	free(a);
	free(b);
	fx_free(f);
}

struct bad_row {
	const char *line;
	int rc;
	const char *msg; /* a part of the message */
};

static const struct bad_row bad_rows[] = {
	{"pool add " SVC " api", -EEXIST, "pool api already exists in"},
	{"pool add " SVC " default", -EEXIST, "the service's own pool"},
	{"pool add " SVC " 1x", -EINVAL, "invalid pool name '1x'"},
	{"pool add " SVC " a/b", -EINVAL, "invalid pool name"},
	{"pool add " SVC " abcdefghijabcdefghijabcdefghijabc", -EINVAL,
	 "at most 31 bytes"},
	{"pool add " SVC " x sched fancy", -EINVAL,
	 "unknown scheduler 'fancy'"},
	{"pool add tcp 192.0.2.99:1 x", -ENOENT, "no service"},
	/* A pool's check options read and refuse as the service's. */
	{"pool add " SVC " x check ping", -EINVAL, "unknown check 'ping'"},
	{"pool add " SVC " x check http check-path healthz", -EINVAL,
	 "check-path must start with '/'"},
	{"pool add " SVC " x check-status 700", -EINVAL,
	 "invalid check-status '700'"},
	{"pool add " SVC " x check-status 400-200", -EINVAL,
	 "invalid check-status"},
	{"pool add " SVC " x check-rise 0", -ERANGE, "check-rise"},
	{"pool add " SVC " x check-fall 101", -ERANGE, "check-fall"},
	{"pool add " SVC " x check-port 65536", -ERANGE, "check-port"},
	{"pool add " SVC " x check-interval 1us", -ERANGE, "check-interval"},
	{"pool add " SVC " x check-timeout soon", -EINVAL, "check-timeout"},
	{"pool add " SVC " x check-path", -EINVAL, "missing value for "
	 "'check-path'"},
	{"pool add " SVC " x retries 3", -EINVAL,
	 "unknown pool option 'retries': expected sched, check, check-path"},
	{"pool add " SVC " x check service check-path /x", -EINVAL,
	 "check service takes no other check option"},
	{"pool add udp 192.0.2.10:53 x check tcp", -EINVAL,
	 "check tcp needs a tcp service"},
	{"pool set " SVC " default check tcp", -EINVAL,
	 "the service's own pool"},
	{"pool set " SVC " nope check tcp", -ENOENT, "no pool nope in"},
	{"pool set " SVC " api", -EINVAL, "missing argument"},
	{"pool set " SVC " api check-path", -EINVAL, "missing argument"},
	{"pool set " SVC " api check-path /a check-path /b", -EINVAL,
	 "check-path"},
	{"pool set " SVC " api sched fancy", -EINVAL,
	 "unknown scheduler 'fancy'"},
	{"pool set " SVC " static check-path /x y", -EINVAL, "missing value"},
	/* The service may not take what a pool's own check refuses. */
	{"service set " SVC " proxy-protocol v2", -EINVAL,
	 "pool api, which has a check of its own: proxy-protocol v2 cannot "
	 "be combined with check http"},
	{"pool del " SVC " nope", -ENOENT, "no pool nope in"},
	{"pool del " SVC " default", -EINVAL, "cannot be deleted"},
	{"pool del " SVC " api", -EBUSY, "used by rule 3"},
	{"pool del " SVC " tls-a", -EBUSY, "used by rule 1"},
	{"backend add " SVC " 10.0.0.99:80 pool nope", -ENOENT,
	 "no pool nope in " SVC " (pool add first)"},
	{"backend add " SVC " 10.0.0.21:8080 pool static", -EEXIST,
	 "already exists"},
	{"rule add " SVC " sni api.example.com pool nope", -EINVAL,
	 "no pool nope"},
	{"rule add " SVC " sni bad..name pool api", -EINVAL,
	 "not a host name"},
	{"rule add " SVC " sni a.example path /x pool api", -EINVAL,
	 "sni cannot go with"},
	{"rule add " SVC " host a.example", -EINVAL, "needs pool POOL"},
	{"rule add " SVC " default pool api", -EINVAL, "rule default"},
	{"rule add " SVC " at 9 sni x.example pool api", -ERANGE,
	 "at 9 out of range 1..4"},
	{"rule add " SVC " at 0 sni x.example pool api", -ERANGE,
	 "rule number 0 out of range"},
	{"rule add udp 192.0.2.10:53 sni x.example pool default", -EINVAL,
	 "rules route tcp services only"},
	{"rule add tcp 192.0.2.11:80 host x.example pool default", -EINVAL,
	 "rules need `synproxy on`"},
	{"rule default tcp 192.0.2.11:80 refuse rst", -EINVAL,
	 "rules need `synproxy on`"},
	{"rule add tcp [2001:db8::10]:443 host x.example pool default",
	 -EOPNOTSUPP, "rules route IPv4 services only"},
	{"rule default tcp [2001:db8::10]:443 refuse rst", -EOPNOTSUPP,
	 "rules route IPv4 services only"},
	{"rule default " SVC " pool nope", -EINVAL, "no pool nope"},
	{"rule default " SVC " refuse 500", -EINVAL, "refuse rst|404|421"},
	{"rule del " SVC " 4", -ENOENT, "no rule 4 in " SVC " (3 rules)"},
	{"service set " SVC " synproxy auto", -EINVAL,
	 "rules need `synproxy on`"},
	{"service set " SVC " synproxy off", -EINVAL,
	 "rules need `synproxy on`"},
};

static void
test_bad_input(void **state)
{
	struct fx *f = fx_setup();
	char *before = saved(f->c), *after;
	uint64_t gen = lb_conf_generation(f->c);

	(void)state;
	for (size_t i = 0; i < NELEM(bad_rows); i++) {
		const struct bad_row *b = &bad_rows[i];
		int rc = run(f, b->line);

		if (rc != b->rc || strstr(f->o.errmsg, b->msg) == NULL)
			print_message("'%s': %d '%s'\n", b->line, rc,
				      f->o.errmsg);
		assert_int_equal(rc, b->rc);
		assert_non_null(strstr(f->o.errmsg, b->msg));
		after = saved(f->c);
		assert_string_equal(before, after);
		free(after);
	}
	assert_int_equal(lb_conf_generation(f->c), gen);
	free(before);
	fx_free(f);
}

/* Deleting in the order the refusals ask for works, and moves the later
 * pools' backends down with their pool. */
static void
test_pool_del(void **state)
{
	struct fx *f = fx_setup();

	(void)state;
	assert_int_equal(run(f, "pool del " SVC " static"), -EBUSY);
	assert_non_null(strstr(f->o.errmsg, "used by rule 2"));
	ok(f, "rule del " SVC " 2");
	assert_int_equal(run(f, "pool del " SVC " static"), -EBUSY);
	assert_non_null(strstr(f->o.errmsg, "has 1 backend: delete it"));
	ok(f, "backend del " SVC " 10.0.0.31:8080");
	ok(f, "pool del " SVC " static");
	assert_int_equal(svc(f)->nb_pool, 2);
	assert_string_equal(svc(f)->pool[1].name, "tls-a");
	/* 10.0.0.41 was in pool 3, tls-a, now pool 2: still tls-a. */
	assert_int_equal(svc(f)->be[3].pool, 2);
	assert_int_equal(lb_conf_pool_index(svc(f), "tls-a"), 2);
	ok(f, "rule default " SVC " pool api");
	ok(f, "rule del " SVC " 2");
	assert_int_equal(run(f, "pool del " SVC " api"), -EBUSY);
	assert_non_null(strstr(f->o.errmsg, "the rules' default"));
	/* The rules' text still reads after the shift: tls-a by name. */
	assert_int_equal(lb_conf_validate(f->c, &f->o), 0);
	fx_free(f);
}

/* Limits: pools and rules per service, and the compiled rules' room. */
static void
test_limits(void **state)
{
	struct fx *f = fx_new(known);
	char line[512], path[240];

	(void)state;
	ok(f, "service add " SVC " synproxy on");
	for (unsigned int i = 0; i < LB_CONF_MAX_POOLS; i++) {
		snprintf(line, sizeof(line), "pool add " SVC " p%u", i);
		ok(f, line);
	}
	assert_int_equal(run(f, "pool add " SVC " one-more"), -ENOSPC);
	assert_non_null(strstr(f->o.errmsg, "too many pools"));
	for (unsigned int i = 0; i < LB_CONF_MAX_RULES; i++) {
		snprintf(line, sizeof(line),
			 "rule add " SVC " sni h%u.example pool p%u", i,
			 i % LB_CONF_MAX_POOLS);
		ok(f, line);
	}
	assert_int_equal(run(f, "rule add " SVC " sni x.example pool p0"),
			 -ENOSPC);
	assert_non_null(strstr(f->o.errmsg, "too many rules (limit 32)"));
	/* Room for the strings: 32 paths of 200 bytes do not fit. */
	for (unsigned int i = 0; i < LB_CONF_MAX_RULES; i++)
		ok(f, "rule del " SVC " 1");
	memset(path, 'a', sizeof(path));
	path[0] = '/';
	path[200] = '\0';
	for (unsigned int i = 0; i < LB_CONF_MAX_RULES; i++) {
		int rc;

		path[1] = (char)('a' + i % 26);
		snprintf(line, sizeof(line),
			 "rule add " SVC " path-prefix %s pool p0", path);
		rc = run(f, line);
		if (i < LB_ROUTE_FLAT_STR / 200) {
			assert_int_equal(rc, 0);
		} else {
			assert_int_equal(rc, -ENOSPC);
			assert_non_null(strstr(f->o.errmsg, "4096 bytes"));
			break;
		}
	}
	fx_free(f);
}

/* The compiled rules route as the text says, pools by their index. */
static void
test_compile(void **state)
{
	struct fx *f = fx_setup();
	struct lb_route_flat fl;
	struct lb_route_action a;
	struct lb_http_req q;
	static const char req[] =
		"GET /v1/users HTTP/1.1\r\nHost: api.example.com\r\n\r\n";
	static const char req2[] =
		"GET /static/x.css HTTP/1.1\r\nHost: api.example.com\r\n\r\n";

	(void)state;
	assert_int_equal(lb_conf_rules_compile(svc(f), &fl, &f->o), 0);
	assert_int_equal(fl.n, 3);
	a = lb_route_flat_action_of(
		&fl, lb_route_flat_match_sni(&fl, "api.example.com", 15));
	assert_int_equal(a.what, LB_ROUTE_POOL);
	assert_int_equal(a.pool, lb_conf_pool_index(svc(f), "tls-a"));
	assert_int_equal(lb_http_head((const uint8_t *)req, strlen(req),
				      LB_HTTP_HEAD_MAX, &q),
			 LB_HTTP_HEAD_FOUND);
	a = lb_route_flat_action_of(&fl, lb_route_flat_match_http(&fl, &q));
	assert_int_equal(a.pool, lb_conf_pool_index(svc(f), "api"));
	/* Rule 2 (`at 2`) comes before the api one. */
	assert_int_equal(lb_http_head((const uint8_t *)req2, strlen(req2),
				      LB_HTTP_HEAD_MAX, &q),
			 LB_HTTP_HEAD_FOUND);
	assert_int_equal(lb_route_flat_match_http(&fl, &q), 1);
	a = lb_route_flat_action_of(&fl, LB_ROUTE_NO_RULE);
	assert_int_equal(a.what, LB_ROUTE_REFUSE_421);
	fx_free(f);
}

static void
test_lists(void **state)
{
	struct fx *f = fx_setup();

	(void)state;
	ok(f, "pool list " SVC);
	assert_string_equal(
		f->o.text,
		"POOL                             SCHED        BACKENDS    "
		"WEIGHTS  CHECK\n"
		"default                          adaptive            1       "
		"   1  none\n"
		"api                              rr                  2       "
		"   4  http /healthz\n"
		"static                           adaptive            1       "
		"   2  service\n"
		"tls-a                            maglev              1       "
		"   1  tcp\n");
	ok(f, "rule list " SVC);
	assert_string_equal(f->o.text,
			    "  N        HITS  RULE\n"
			    "  1           -  sni api.example.com pool tls-a\n"
			    "  2           -  path-prefix /static/ pool static\n"
			    "  3           -  host api.example.com path-prefix "
			    "/v1/ pool api\n"
			    "  -           -  default refuse 421\n");
	fx_free(f);
}

static const char *
list_check(struct fx *f, const char *pool)
{
	static char chk[LB_CONF_POOL_CHECK_STRLEN + 1];
	int idx = lb_conf_pool_index(svc(f), pool);

	assert_true(idx >= 0);
	assert_int_equal(lb_conf_pool_check_str(svc(f), (unsigned int)idx,
						chk, sizeof(chk)),
			 0);
	return chk;
}

/* `pool set`: a pool that follows the service's check gets one of its
 * own from the first check option, the service's with that option
 * changed; `check service` gives it back; the configuration's generation
 * moves only on a change; the saved form reads back the same. */
static void
test_pool_set(void **state)
{
	struct fx *f = fx_setup(), *g = fx_new(known);
	const struct lb_conf_check *k;
	uint64_t gen;
	char *a;

	(void)state;
	assert_false(svc(f)->pool[1].own_check);
	/* Following: the service's, whatever the service's becomes. */
	k = lb_conf_pool_check(svc(f), 2);
	assert_ptr_equal(k, &svc(f)->opts.check);
	ok(f, "service set " SVC " check tcp check-interval 5s");
	assert_string_equal(list_check(f, "static"), "service");
	assert_int_equal(lb_conf_pool_check(svc(f), 2)->type,
			 LB_CONF_CHECK_TCP);
	assert_string_equal(list_check(f, "default"), "tcp");
	/* Its own, from the service's: tcp every 5s, on another path. */
	ok(f, "pool set " SVC " static check-path /ready");
	assert_true(svc(f)->pool[1].own_check);
	k = lb_conf_pool_check(svc(f), 2);
	assert_ptr_equal(k, &svc(f)->pool[1].check);
	assert_int_equal(k->type, LB_CONF_CHECK_TCP);
	assert_int_equal(k->interval_ns, 5000000000ull);
	assert_string_equal(k->path, "/ready");
	ok(f, "pool set " SVC " static check http check-status 200");
	assert_string_equal(list_check(f, "static"), "http /ready");
	assert_int_equal(k->status_lo, 200);
	assert_int_equal(k->status_hi, 200);
	/* The service's change no longer reaches it. */
	ok(f, "service set " SVC " check-interval 3s");
	assert_int_equal(k->interval_ns, 5000000000ull);
	/* The same values again: no change. */
	gen = lb_conf_generation(f->c);
	ok(f, "pool set " SVC " static check http check-path /ready");
	ok(f, "pool set " SVC " api sched rr");
	assert_int_equal(lb_conf_generation(f->c), gen);
	ok(f, "pool set " SVC " api check-rise 3 sched adaptive");
	assert_true(lb_conf_generation(f->c) > gen);
	assert_string_equal(svc(f)->pool[0].sched, "adaptive");
	assert_int_equal(svc(f)->pool[0].check.rise, 3);
	assert_string_equal(svc(f)->pool[0].check.path, "/healthz");
	/* A path the tokenizer must read back quoted. */
	ok(f, "pool set " SVC " tls-a check http check-path \"/a#b\"");
	assert_string_equal(list_check(f, "tls-a"), "http /a#b");
	a = saved(f->c);
	assert_non_null(strstr(a, "pool add " SVC " static check http "
				  "check-path /ready check-status 200-200 "
				  "check-interval 5s\n"));
	/* Options are saved where they differ from the service's, from
	 * which `pool add` starts: api's interval is still the default. */
	assert_non_null(strstr(a, "pool add " SVC " api check http "
				  "check-path /healthz check-interval 2s "
				  "check-rise 3 check-fall 2\n"));
	free(a);
	free(roundtrip(f, g));
	assert_string_equal(list_check(g, "tls-a"), "http /a#b");
	/* Back to the service's: saved as a pool without a check. */
	ok(f, "pool set " SVC " static check service sched rr");
	assert_false(svc(f)->pool[1].own_check);
	assert_string_equal(list_check(f, "static"), "service");
	a = saved(f->c);
	assert_non_null(strstr(a, "pool add " SVC " static sched rr\n"));
	free(a);
	/* `check none` of its own is not the service's check. */
	ok(f, "pool set " SVC " static check none");
	assert_string_equal(list_check(f, "static"), "none");
	a = saved(f->c);
	assert_non_null(strstr(a, "pool add " SVC " static sched rr check "
				  "none\n"));
	free(a);
	fx_free(f);
	fx_free(g);
}

/* A service deleted and added again starts without pools or rules. */
static void
test_svc_readd(void **state)
{
	struct fx *f = fx_setup();

	(void)state;
	ok(f, "service del " SVC);
	ok(f, "service add " SVC);
	assert_int_equal(svc(f)->nb_pool, 0);
	assert_int_equal(svc(f)->nb_rule, 0);
	assert_string_equal(svc(f)->rule_def, "");
	ok(f, "service set " SVC " synproxy off");
	fx_free(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_save_roundtrip),
		cmocka_unit_test(test_plain_service_unchanged),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_pool_del),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_compile),
		cmocka_unit_test(test_lists),
		cmocka_unit_test(test_svc_readd),
		cmocka_unit_test(test_pool_set),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
