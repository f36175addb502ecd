/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of content routing rules (dataplane/route/route_rules.c):
 * rows of rule lines as lbctl would pass them, read or refused with the
 * reason; then a rule list compiled and rows of ClientHello names and
 * request heads (read by the real http_head) with the rule that must win
 * and its action. The same rows are checked against a plain reference
 * matcher written here from the rules' definition, on a list of a
 * thousand random rules too.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "http_head.h"
#include "lb/rng.h"
#include "route_rules.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *const pools[] = {"web", "api", "static", "tls-a",
				     "tls-b"};

struct parse_row {
	const char *line;
	int want; /* LB_ROUTE_LINE_* or -EINVAL */
	const char *err; /* a part of the message */
	uint8_t proto, name_cmp, path_cmp;
	const char *name, *path, *method;
	uint16_t pool;
};

#define R LB_ROUTE_LINE_RULE
#define TLS LB_ROUTE_TLS
#define HTTP LB_ROUTE_HTTP
#define ANY LB_ROUTE_ANY
#define EX LB_ROUTE_EXACT
#define SUF LB_ROUTE_SUFFIX
#define PRE LB_ROUTE_PREFIX
#define BAD(line, err) {line, -EINVAL, err, 0, 0, 0, NULL, NULL, NULL, 0}

static const struct parse_row parse_rows[] = {
	{"sni Api.Example.com pool tls-a", R, NULL, TLS, EX, ANY,
	 "api.example.com", "", "", 3},
	{"pool tls-b sni *.Example.COM", R, NULL, TLS, SUF, ANY,
	 ".example.com", "", "", 4},
	{"host api.example.com path-prefix /v1/ pool api", R, NULL, HTTP, EX,
	 PRE, "api.example.com", "/v1/", "", 1},
	{"  host\t*.example.com path /exact method GET pool web\n", R, NULL,
	 HTTP, SUF, EX, ".example.com", "/exact", "GET", 0},
	{"path-prefix /static/ pool static", R, NULL, HTTP, ANY, PRE, "",
	 "/static/", "", 2},
	{"method PURGE pool web", R, NULL, HTTP, ANY, ANY, "", "", "PURGE", 0},
	{"host 192.0.2.1 pool web", R, NULL, HTTP, EX, ANY, "192.0.2.1", "",
	 "", 0},
	{"host a.example. pool web", R, NULL, HTTP, EX, ANY, "a.example", "",
	 "", 0},
	BAD("sni 192.0.2.1 pool tls-a", "not a host name"),
	BAD("sni a.example. pool tls-a", "not a host name"),
	BAD("sni *. pool tls-a", "not a host name"),
	BAD("sni *example.com pool tls-a", "not a host name"),
	/* Up to 251 characters after "*.": no name of 253 can end with
	 * more. */
	BAD("sni *.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aa.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aa.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aa.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aa"
	    " pool tls-a", "not a host name"),
	{"sni *.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	 "a.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	 "a.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	 "a.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	 "a"
	 " pool tls-a", R, NULL, TLS, SUF, ANY,
	 ".aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.aaa"
	 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.aaa"
	 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.aaa"
	 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	 "", "", 3},
	BAD("sni a.*.example pool tls-a", "not a host name"),
	BAD("host a_b..c pool web", "not a host name"),
	BAD("sni a.example host b.example pool web", "sni cannot go"),
	BAD("sni a.example path /x pool web", "sni cannot go"),
	BAD("sni a.example sni b.example pool web", "given twice"),
	BAD("host a pool web pool api", "given twice"),
	BAD("path /a path-prefix /b pool web", "one path only"),
	BAD("path a pool web", "not a path"),
	BAD("path /a?b pool web", "not a path"),
	BAD("method G@T pool web", "not a method"),
	BAD("method ABCDEFGHIJKLMNOPQRSTUVWXYZ pool web", "not a method"),
	BAD("host a.example", "needs pool"),
	BAD("pool web", "needs sni, host"),
	BAD("host a.example pool nosuch", "no pool nosuch"),
	BAD("host a.example pool", "has no value"),
	BAD("hots a.example pool web", "unknown word hots"),
	BAD("", "empty rule"),
	BAD("default", "default takes"),
	BAD("default pool nosuch", "no pool nosuch"),
	BAD("default refuse 403", "default takes"),
	BAD("default refuse rst now", "default takes"),
};

static void
test_parse(void **state)
{
	struct lb_route_rule r;
	struct lb_route_action d;
	char err[128];

	(void)state;
	for (unsigned int i = 0; i < NELEM(parse_rows); i++) {
		const struct parse_row *p = &parse_rows[i];
		int rc;

		print_message("%s\n", p->line);
		memset(&r, 0x5a, sizeof(r));
		err[0] = '\0';
		rc = lb_route_parse(p->line, pools, NELEM(pools), &r, &d, err,
				    sizeof(err));
		assert_int_equal(rc, p->want);
		if (rc < 0) {
			assert_non_null(strstr(err, p->err));
			assert_int_equal(r.pool, 0x5a5a); /* untouched */
			continue;
		}
		assert_int_equal(r.proto, p->proto);
		assert_int_equal(r.name_cmp, p->name_cmp);
		assert_int_equal(r.path_cmp, p->path_cmp);
		assert_int_equal(r.name_len, strlen(p->name));
		assert_memory_equal(r.name, p->name, r.name_len);
		assert_int_equal(r.path_len, strlen(p->path));
		assert_memory_equal(r.path, p->path, r.path_len);
		assert_int_equal(r.method_len, strlen(p->method));
		assert_memory_equal(r.method, p->method, r.method_len);
		assert_int_equal(r.pool, p->pool);
	}
}

static void
test_parse_default(void **state)
{
	static const struct {
		const char *line;
		struct lb_route_action want;
	} rows[] = {
		{"default pool static", {LB_ROUTE_POOL, 2}},
		{"default refuse rst", {LB_ROUTE_RST, 0}},
		{"default refuse 404", {LB_ROUTE_REFUSE_404, 0}},
		{"default refuse 421", {LB_ROUTE_REFUSE_421, 0}},
	};
	struct lb_route_rule r;
	struct lb_route_action d;
	char err[128];

	(void)state;
	for (unsigned int i = 0; i < NELEM(rows); i++) {
		assert_int_equal(lb_route_parse(rows[i].line, pools,
						NELEM(pools), &r, &d, err,
						sizeof(err)),
				 LB_ROUTE_LINE_DEFAULT);
		assert_int_equal(d.what, rows[i].want.what);
		if (d.what == LB_ROUTE_POOL)
			assert_int_equal(d.pool, rows[i].want.pool);
	}
}

/* The example of docs/dataplane.md, in its order. */
static const char *const rules_text[] = {
	"sni api.example.com pool tls-a",	      /* 0 */
	"sni *.example.com pool tls-b",		      /* 1 */
	"host api.example.com path-prefix /v1/ pool api", /* 2 */
	"host api.example.com path /health method GET pool web", /* 3 */
	"host *.example.com path-prefix /static/ pool static", /* 4 */
	"path-prefix /static/ pool static",	      /* 5 */
	"method PURGE pool web",		      /* 6 */
	"host www.example.com pool web",	      /* 7 */
	/* Past the 8 bytes compared at once. */
	"path-prefix /assets/img/ pool static",	      /* 8 */
	"method VERSION-CONTROL pool web",	      /* 9 */
	"path /assets/exactly-this pool api",	      /* 10 */
};

static struct lb_route_table *
compile(const char *const *lines, unsigned int n, const char *def,
	struct lb_route_rule *r)
{
	struct lb_route_action d;
	char err[128];

	for (unsigned int i = 0; i < n; i++)
		assert_int_equal(lb_route_parse(lines[i], pools, NELEM(pools),
						&r[i], &d, err, sizeof(err)),
				 LB_ROUTE_LINE_RULE);
	assert_int_equal(lb_route_parse(def, pools, NELEM(pools), &r[n], &d,
					err, sizeof(err)),
			 LB_ROUTE_LINE_DEFAULT);
	return lb_route_table_create(r, n, &d);
}

/*
 * The rules' definition, written out plainly: a name compared as a
 * string (a suffix "*.x" is any name that ends with ".x"), then the
 * method, then the path.
 */
static int
ref_match(const struct lb_route_rule *r, unsigned int n, int tls,
	  const char *name, const char *method, const char *path,
	  size_t path_len)
{
	size_t nl = strlen(name);

	for (unsigned int i = 0; i < n; i++) {
		const struct lb_route_rule *x = &r[i];

		if ((x->proto == LB_ROUTE_TLS) != tls)
			continue;
		if (x->name_cmp == LB_ROUTE_EXACT &&
		    (nl != x->name_len || memcmp(name, x->name, nl) != 0))
			continue;
		if (x->name_cmp == LB_ROUTE_SUFFIX &&
		    (nl < x->name_len ||
		     strcmp(name + nl - x->name_len, x->name) != 0))
			continue;
		if (x->method_len != 0 && strcmp(method, x->method) != 0)
			continue;
		if (x->path_cmp == LB_ROUTE_EXACT &&
		    (path_len != x->path_len ||
		     memcmp(path, x->path, path_len) != 0))
			continue;
		if (x->path_cmp == LB_ROUTE_PREFIX &&
		    (path_len < x->path_len ||
		     memcmp(path, x->path, x->path_len) != 0))
			continue;
		return (int)i;
	}
	return LB_ROUTE_NO_RULE;
}

struct sni_row {
	const char *sni;
	int rule;
};

static const struct sni_row sni_rows[] = {
	{"api.example.com", 0},
	{"www.example.com", 1},
	{"a.b.example.com", 1},
	{"example.com", -1}, /* "*." needs a label before the suffix */
	{"xexample.com", -1},
	{"api.example.org", -1},
	{"", -1}, /* a ClientHello without SNI */
};

struct http_row {
	const char *req;
	int rule;
};

static const struct http_row http_rows[] = {
	{"GET /v1/users?x=1 HTTP/1.1\r\nHost: API.example.com:8443\r\n\r\n",
	 2},
	{"GET /v1 HTTP/1.1\r\nHost: api.example.com\r\n\r\n", -1},
	{"GET /health HTTP/1.1\r\nHost: api.example.com\r\n\r\n", 3},
	{"HEAD /health HTTP/1.1\r\nHost: api.example.com\r\n\r\n", -1},
	{"GET /health/x HTTP/1.1\r\nHost: api.example.com\r\n\r\n", -1},
	{"get /health HTTP/1.1\r\nHost: api.example.com\r\n\r\n", -1},
	{"GET /static/a.css HTTP/1.1\r\nHost: cdn.example.com\r\n\r\n", 4},
	{"GET /static/a.css HTTP/1.1\r\nHost: example.com\r\n\r\n", 5},
	{"GET /static/a.css HTTP/1.0\r\n\r\n", 5},
	{"GET /Static/a.css HTTP/1.1\r\nHost: other\r\n\r\n", -1},
	{"PURGE /x HTTP/1.1\r\nHost: other\r\n\r\n", 6},
	{"POST /form HTTP/1.1\r\nHost: www.example.com.\r\n\r\n", 7},
	{"GET http://www.example.com/ HTTP/1.1\r\nHost: nope\r\n\r\n", 7},
	{"GET / HTTP/1.1\r\nHost: www.example.com.evil\r\n\r\n", -1},
	{"GET /assets/img/a.png HTTP/1.1\r\nHost: o\r\n\r\n", 8},
	{"GET /assets/imx/a.png HTTP/1.1\r\nHost: o\r\n\r\n", -1},
	{"GET /assets/img HTTP/1.1\r\nHost: o\r\n\r\n", -1},
	{"VERSION-CONTROL /x HTTP/1.1\r\nHost: o\r\n\r\n", 9},
	{"VERSION-CONTROM /x HTTP/1.1\r\nHost: o\r\n\r\n", -1},
	{"VERSION /x HTTP/1.1\r\nHost: o\r\n\r\n", -1},
	{"GET /assets/exactly-this HTTP/1.1\r\nHost: o\r\n\r\n", 10},
	{"GET /assets/exactly-thiz HTTP/1.1\r\nHost: o\r\n\r\n", -1},
	{"GET /assets/exactly-this/ HTTP/1.1\r\nHost: o\r\n\r\n", -1},
};

static void
test_match(void **state)
{
	struct lb_route_rule r[NELEM(rules_text) + 1];
	struct lb_route_table *t;
	struct lb_http_req q;
	struct lb_route_action a;

	(void)state;
	t = compile(rules_text, NELEM(rules_text), "default refuse 421", r);
	assert_non_null(t);
	for (unsigned int i = 0; i < NELEM(sni_rows); i++) {
		const struct sni_row *s = &sni_rows[i];
		int got = lb_route_match_sni(t, s->sni, strlen(s->sni));

		print_message("sni %s\n", s->sni);
		assert_int_equal(got, s->rule);
		assert_int_equal(got, ref_match(r, NELEM(rules_text), 1,
						s->sni, "", "", 0));
	}
	for (unsigned int i = 0; i < NELEM(http_rows); i++) {
		const struct http_row *h = &http_rows[i];
		char method[LB_HTTP_METHOD_MAX + 1] = "";
		int got;

		print_message("%s", h->req);
		assert_int_equal(lb_http_head((const uint8_t *)h->req,
					      strlen(h->req), LB_HTTP_HEAD_MAX,
					      &q),
				 LB_HTTP_HEAD_FOUND);
		got = lb_route_match_http(t, &q);
		assert_int_equal(got, h->rule);
		memcpy(method, q.method, q.method_len);
		assert_int_equal(got,
				 ref_match(r, NELEM(rules_text), 0, q.host,
					   method, (const char *)q.path,
					   q.path_len));
	}
	a = lb_route_action_of(t, 2);
	assert_int_equal(a.what, LB_ROUTE_POOL);
	assert_int_equal(a.pool, 1);
	a = lb_route_action_of(t, 0);
	assert_int_equal(a.pool, 3);
	a = lb_route_action_of(t, LB_ROUTE_NO_RULE);
	assert_int_equal(a.what, LB_ROUTE_REFUSE_421);
	lb_route_table_free(t);

	/* No rules: the default for all. */
	t = compile(rules_text, 0, "default pool web", r);
	assert_non_null(t);
	assert_int_equal(lb_route_match_sni(t, "a.example", 9),
			 LB_ROUTE_NO_RULE);
	a = lb_route_action_of(t, LB_ROUTE_NO_RULE);
	assert_int_equal(a.what, LB_ROUTE_POOL);
	assert_int_equal(a.pool, 0);
	lb_route_table_free(t);
}

static void
test_create_bounds(void **state)
{
	struct lb_route_rule r[2];
	struct lb_route_action d = {LB_ROUTE_RST, 0};
	char err[64];

	(void)state;
	assert_int_equal(lb_route_parse("sni a.example pool web", pools,
					NELEM(pools), &r[0], &d, err,
					sizeof(err)),
			 LB_ROUTE_LINE_RULE);
	errno = 0;
	assert_null(lb_route_table_create(r, LB_ROUTE_RULES_MAX + 1, &d));
	assert_int_equal(errno, EINVAL);
	r[1] = r[0];
	r[1].path_cmp = LB_ROUTE_PREFIX; /* a TLS rule cannot have a path */
	assert_null(lb_route_table_create(r, 2, &d));
	r[1] = r[0];
	r[1].name_len = LB_HOSTNAME_MAX + 2;
	assert_null(lb_route_table_create(r, 2, &d));
	d.what = 9;
	assert_null(lb_route_table_create(r, 1, &d));
}

/*
 * A thousand random rules over a small alphabet of names and paths, so
 * that many overlap: the table and the reference agree on the winner of
 * random queries.
 */
static void
test_random(void **state)
{
	static const char *const labels[] = {"a", "b", "api", "www", "x-1"};
	/* The rules' paths are the first six (two alike in their first 8
	 * bytes): every rule has one, so a query for "/" or "/z" matches
	 * none. */
	static const char *const paths[] = {"/a", "/a/", "/a/b", "/b",
					    "/aaaaaaa/b", "/aaaaaaa/c", "/",
					    "/z"};
	static const char *const methods[] = {"GET", "POST", "PUT"};
	static struct lb_route_rule r[1001];
	struct lb_xoshiro x;
	struct lb_rng rng;
	struct lb_route_action d = {LB_ROUTE_RST, 0};
	struct lb_route_table *t;
	char line[256], name[64], err[128];
	unsigned int n = 0, hits = 0;

	(void)state;
	lb_xoshiro_seed(&x, 42);
	rng = lb_rng_xoshiro(&x);
	while (n < 1000) {
		int sni = lb_rng_below(&rng, 4) == 0, len;

		snprintf(name, sizeof(name), "%s%s.%s",
			 lb_rng_below(&rng, 3) == 0 ? "*." : "",
			 labels[lb_rng_below(&rng, 5)],
			 labels[lb_rng_below(&rng, 5)]);
		if (sni)
			len = snprintf(line, sizeof(line), "sni %s", name);
		else
			len = snprintf(line, sizeof(line), "%s%s %s %s%s",
				       lb_rng_below(&rng, 2) ? "host " : "",
				       lb_rng_below(&rng, 2) ? name : "",
				       lb_rng_below(&rng, 2) ? "path" :
							       "path-prefix",
				       paths[lb_rng_below(&rng, 6)],
				       lb_rng_below(&rng, 3) == 0 ?
					       " method GET" : "");
		snprintf(line + len, sizeof(line) - (size_t)len, " pool %s",
			 pools[lb_rng_below(&rng, 5)]);
		if (lb_route_parse(line, pools, NELEM(pools), &r[n], &d, err,
				   sizeof(err)) == LB_ROUTE_LINE_RULE)
			n++;
	}
	t = lb_route_table_create(r, n, &d);
	assert_non_null(t);
	for (int i = 0; i < 20000; i++) {
		const char *m = methods[lb_rng_below(&rng, 3)];
		const char *p = paths[lb_rng_below(&rng, 8)];
		struct lb_http_req q = {.method = (const uint8_t *)m,
					.method_len = (uint16_t)strlen(m),
					.path = (const uint8_t *)p,
					.path_len = (uint16_t)strlen(p)};
		int hl = snprintf(q.host, sizeof(q.host), "%s%s.%s",
				  lb_rng_below(&rng, 2) ? "" : "c.",
				  labels[lb_rng_below(&rng, 5)],
				  labels[lb_rng_below(&rng, 5)]);

		int got;

		q.host_len = (uint16_t)hl;
		assert_int_equal(lb_route_match_sni(t, q.host, q.host_len),
				 ref_match(r, n, 1, q.host, "", "", 0));
		got = lb_route_match_http(t, &q);
		assert_int_equal(got,
				 ref_match(r, n, 0, q.host, m, p, q.path_len));
		hits += got > 0;
	}
	/* Most queries are matched by some rule past the first, some by
	 * none: the rows above exercise both ways. */
	assert_in_range(hits, 10000, 19990);
	lb_route_table_free(t);
}

/*
 * The flat block gives the table's answers, from a copy of itself (it
 * holds no pointer), and refuses what does not fit its fixed room.
 */
static void
test_flat(void **state)
{
	static struct lb_route_flat f, g;
	struct lb_route_rule r[LB_ROUTE_FLAT_RULES + 1];
	struct lb_route_action d = {LB_ROUTE_REFUSE_404, 0}, a;
	struct lb_route_table *t;
	struct lb_http_req q;
	char err[128];

	(void)state;
	t = compile(rules_text, NELEM(rules_text), "default refuse 404", r);
	assert_non_null(t);
	assert_int_equal(lb_route_flat_compile(r, NELEM(rules_text), &d, &f),
			 0);
	memcpy(&g, &f, sizeof(g));
	memset(&f, 0xa5, sizeof(f));
	for (unsigned int i = 0; i < NELEM(sni_rows); i++)
		assert_int_equal(lb_route_flat_match_sni(&g, sni_rows[i].sni,
							 strlen(sni_rows[i].sni)),
				 sni_rows[i].rule);
	for (unsigned int i = 0; i < NELEM(http_rows); i++) {
		const char *h = http_rows[i].req;

		assert_int_equal(lb_http_head((const uint8_t *)h, strlen(h),
					      LB_HTTP_HEAD_MAX, &q),
				 LB_HTTP_HEAD_FOUND);
		assert_int_equal(lb_route_flat_match_http(&g, &q),
				 http_rows[i].rule);
		a = lb_route_flat_action_of(&g, http_rows[i].rule);
		assert_int_equal(a.what,
				 lb_route_action_of(t, http_rows[i].rule).what);
		assert_int_equal(a.pool,
				 lb_route_action_of(t, http_rows[i].rule).pool);
	}
	lb_route_table_free(t);
	/* A block with counts that do not add up (torn, never compiled)
	 * matches nothing and refuses. */
	g.nb_http++;
	assert_int_equal(lb_route_flat_match_sni(&g, "api.example.com", 15),
			 LB_ROUTE_NO_RULE);
	assert_int_equal(lb_route_flat_action_of(&g, 0).what, LB_ROUTE_RST);

	/* Room: LB_ROUTE_FLAT_RULES rules fit, one more does not, and a
	 * refused compile leaves the block as it was. */
	for (unsigned int i = 0; i <= LB_ROUTE_FLAT_RULES; i++)
		assert_int_equal(lb_route_parse("sni a.example pool web", pools,
						NELEM(pools), &r[i], &d, err,
						sizeof(err)),
				 LB_ROUTE_LINE_RULE);
	d = (struct lb_route_action){LB_ROUTE_RST, 0};
	assert_int_equal(lb_route_flat_compile(r, LB_ROUTE_FLAT_RULES, &d, &f),
			 0);
	assert_int_equal(f.n, LB_ROUTE_FLAT_RULES);
	memcpy(&g, &f, sizeof(g));
	assert_int_equal(lb_route_flat_compile(r, LB_ROUTE_FLAT_RULES + 1, &d,
					       &f),
			 -EINVAL);
	assert_memory_equal(&g, &f, sizeof(f));
	/* Strings over the room: 32 paths of 200 bytes. */
	memset(err, 0, sizeof(err));
	for (unsigned int i = 0; i < LB_ROUTE_FLAT_RULES; i++) {
		r[i].proto = LB_ROUTE_HTTP;
		r[i].name_cmp = LB_ROUTE_ANY;
		r[i].name_len = 0;
		r[i].path_cmp = LB_ROUTE_PREFIX;
		memset(r[i].path, 'a', 200);
		r[i].path[0] = '/';
		r[i].path[200] = '\0';
		r[i].path_len = 200;
	}
	assert_int_equal(lb_route_flat_compile(r, LB_ROUTE_FLAT_RULES, &d, &f),
			 -ENOSPC);
	assert_memory_equal(&g, &f, sizeof(f));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_default),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_create_bounds),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_flat),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
