/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the HTTP/1.x request-head matcher
 * (dataplane/route/http_head.c): rows of request heads as curl, browsers
 * and broken or hostile clients send them, each with the verdict and what
 * is found (RFC 9112 sections cited per row), fed whole, as every prefix
 * (a split anywhere: the caller re-parses its prefix), and under a bound
 * one byte short of the head.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "http_head.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define F LB_HTTP_HEAD_FOUND
#define NOT LB_HTTP_HEAD_NOT_HTTP
#define BAD LB_HTTP_HEAD_MALFORMED
/* The rest of a row whose verdict is not FOUND. */
#define BAD_ROW BAD, NULL, NULL, NULL, 0
#define NOT_ROW NOT, NULL, NULL, NULL, 0

struct row {
	const char *what;
	const char *in;
	int want;
	const char *method, *path, *host;
	int minor;
};

static const struct row rows[] = {
	{"curl", "GET /v1/users?id=3 HTTP/1.1\r\nHost: API.example.com\r\n"
	 "User-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n",
	 F, "GET", "/v1/users", "api.example.com", 1},
	{"port dropped, trailing dot", "GET / HTTP/1.1\r\nhost: a.example.:8080"
	 "\r\n\r\n", F, "GET", "/", "a.example", 1},
	{"header name without case, value with OWS",
	 "POST /up HTTP/1.1\r\nContent-Length: 0\r\nHOST: \t b.example \t\r\n"
	 "\r\n", F, "POST", "/up", "b.example", 1},
	{"bare LF (2.2)", "GET /x HTTP/1.1\nHost: c.example\n\n", F, "GET",
	 "/x", "c.example", 1},
	{"empty lines first (2.2)",
	 "\r\n\r\nGET /y HTTP/1.1\r\nHost: d\r\n\r\n",
	 F, "GET", "/y", "d", 1},
	{"HTTP/1.0 without Host", "GET /old HTTP/1.0\r\n\r\n", F, "GET",
	 "/old", "", 0},
	{"HTTP/1.1 without Host (3.2)", "GET / HTTP/1.1\r\nAccept: */*\r\n\r\n",
	 BAD_ROW},
	{"duplicate Host (3.2)", "GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n"
	 "host: a\r\n\r\n", BAD_ROW},
	{"empty Host", "GET / HTTP/1.1\r\nHost:\r\n\r\n", F, "GET", "/", "", 1},
	{"IPv4 Host", "GET / HTTP/1.1\r\nHost: 192.0.2.10:80\r\n\r\n", F, "GET",
	 "/", "192.0.2.10", 1},
	{"IPv6 Host", "GET / HTTP/1.1\r\nHost: [2001:DB8::1]:443\r\n\r\n", F,
	 "GET", "/", "[2001:db8::1]", 1},
	{"unclosed IP literal", "GET / HTTP/1.1\r\nHost: [2001:db8::1\r\n\r\n",
	 BAD_ROW},
	{"Host with a path", "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", BAD_ROW},
	{"Host with a bad port", "GET / HTTP/1.1\r\nHost: a:8x\r\n\r\n",
	 BAD_ROW},
	{"Host with a long port", "GET / HTTP/1.1\r\nHost: a:123456\r\n\r\n",
	 BAD_ROW},
	{"Host that is no name", "GET / HTTP/1.1\r\nHost: a..b\r\n\r\n",
	 BAD_ROW},
	{"absolute-form: its host wins (3.2.2)",
	 "GET HTTP://Proxy.Example:81/p/q?x HTTP/1.1\r\nHost: other\r\n\r\n",
	 F, "GET", "/p/q", "proxy.example", 1},
	{"absolute-form without a path", "GET https://e.example HTTP/1.1\r\n"
	 "Host: e.example\r\n\r\n", F, "GET", "/", "e.example", 1},
	{"absolute-form, query only", "GET http://e.example?a=1 HTTP/1.1\r\n"
	 "Host: x\r\n\r\n", F, "GET", "/", "e.example", 1},
	{"absolute-form, Host line not parsed", "GET http://e.example/ "
	 "HTTP/1.1\r\nHost: !!\r\n\r\n", F, "GET", "/", "e.example", 1},
	{"absolute-form, duplicate Host", "GET http://e.example/ HTTP/1.1\r\n"
	 "Host: a\r\nHost: a\r\n\r\n", BAD_ROW},
	{"absolute-form with userinfo", "GET http://u@e.example/ HTTP/1.1\r\n"
	 "Host: e.example\r\n\r\n", BAD_ROW},
	{"absolute-form, other scheme", "GET ftp://e.example/ HTTP/1.1\r\n"
	 "Host: e\r\n\r\n", BAD_ROW},
	{"CONNECT authority-form (3.2.3)", "CONNECT db.example:5432 HTTP/1.1"
	 "\r\nHost: db.example:5432\r\n\r\n", F, "CONNECT", "", "db.example",
	 1},
	{"CONNECT without a port", "CONNECT db.example HTTP/1.1\r\nHost: d\r\n"
	 "\r\n", BAD_ROW},
	{"OPTIONS * (3.2.4)", "OPTIONS * HTTP/1.1\r\nHost: o\r\n\r\n", F,
	 "OPTIONS", "*", "o", 1},
	{"GET *", "GET * HTTP/1.1\r\nHost: o\r\n\r\n", BAD_ROW},
	{"relative target", "GET index.html HTTP/1.1\r\nHost: o\r\n\r\n",
	 BAD_ROW},
	{"fragment", "GET /a#b HTTP/1.1\r\nHost: o\r\n\r\n", BAD_ROW},
	{"HTTP/1.2 as 1.x", "GET / HTTP/1.2\r\nHost: v\r\n\r\n", F, "GET", "/",
	 "v", 2},
	{"extension method", "PURGE-ALL /c HTTP/1.1\r\nHost: p\r\n\r\n", F,
	 "PURGE-ALL", "/c", "p", 1},
	{"path as sent, no decoding", "GET /%41b/../c?d HTTP/1.1\r\nHost: p\r\n"
	 "\r\n", F, "GET", "/%41b/../c", "p", 1},
	/* Heads that are refused (RFC 9112 5.1, 5.2, 2.2). */
	{"space before the colon", "GET / HTTP/1.1\r\nHost : a\r\n\r\n",
	 BAD_ROW},
	{"folded line", "GET / HTTP/1.1\r\nHost: a\r\n b\r\n\r\n", BAD_ROW},
	{"no colon", "GET / HTTP/1.1\r\nHost: a\r\nnocolon\r\n\r\n", BAD_ROW},
	{"control in a value", "GET / HTTP/1.1\r\nHost: a\r\nX: a\x01z\r\n\r\n",
	 BAD_ROW},
	{"bare CR in a header", "GET / HTTP/1.1\r\nHost: a\rX: b\r\n\r\n",
	 BAD_ROW},
	{"obs-text in a value", "GET / HTTP/1.1\r\nHost: a\r\nX: \xc3\xa9\r\n"
	 "\r\n", F, "GET", "/", "a", 1},
	/* Not HTTP/1.x at all. */
	{"HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", NOT_ROW},
	{"HTTP/0.9", "GET /\r\n", NOT_ROW},
	{"lower-case version", "GET / http/1.1\r\nHost: a\r\n\r\n", NOT_ROW},
	{"two spaces", "GET  / HTTP/1.1\r\nHost: a\r\n\r\n", NOT_ROW},
	{"TLS record", "\x16\x03\x01\x02\x00\x01", NOT_ROW},
	{"SSH banner", "SSH-2.0-OpenSSH_9.2\r\n", NOT_ROW},
	{"method too long", "ABCDEFGHIJKLMNOPQRSTUVWXYZ / HTTP/1.1\r\n",
	 NOT_ROW},
	{"bare CR in the request line", "GET /\r HTTP/1.1\r\n", NOT_ROW},
	{"trailing text after the version", "GET / HTTP/1.1 x\r\n", NOT_ROW},
	{"control in the target", "GET /\x01 HTTP/1.1\r\n", NOT_ROW},
};

/* Checks @p p (@p n bytes) whole and as each prefix, under @p max. */
static void
check(const uint8_t *p, size_t n, size_t max, int want, const struct row *r)
{
	struct lb_http_req q;
	int first = -1, v;

	for (size_t i = 0; i <= n; i++) {
		memset(&q, 0x5a, sizeof(q));
		v = lb_http_head(p, i, max, &q);
		if (v != LB_HTTP_HEAD_FOUND)
			assert_int_equal(q.host_len, 0x5a5a); /* untouched */
		if (i < n && want == LB_HTTP_HEAD_FOUND)
			assert_int_equal(v, LB_HTTP_HEAD_NEED_MORE);
		if (first < 0 && v != LB_HTTP_HEAD_NEED_MORE)
			first = v;
		if (first >= 0)
			assert_int_equal(v, first);
	}
	assert_int_equal(v, want);
	if (want != LB_HTTP_HEAD_FOUND || r == NULL)
		return;
	assert_int_equal(q.method_len, strlen(r->method));
	assert_memory_equal(q.method, r->method, q.method_len);
	assert_int_equal(q.path_len, strlen(r->path));
	assert_memory_equal(q.path, r->path, q.path_len);
	assert_string_equal(q.host, r->host);
	assert_int_equal(q.host_len, strlen(r->host));
	assert_int_equal(q.minor, r->minor);
	assert_int_equal(q.head_len, n);
	assert_true(q.method >= p && q.method < p + n);
}

static void
test_rows(void **state)
{
	(void)state;
	for (unsigned int i = 0; i < NELEM(rows); i++) {
		const struct row *r = &rows[i];
		size_t n = strlen(r->in);

		print_message("%s\n", r->what);
		check((const uint8_t *)r->in, n, LB_HTTP_HEAD_MAX, r->want, r);
		/* One byte short of the head under the bound: too long,
		 * unless the verdict came sooner. */
		if (r->want == LB_HTTP_HEAD_FOUND)
			check((const uint8_t *)r->in, n, n - 1,
			      LB_HTTP_HEAD_TOO_LONG, NULL);
	}
}

/* A body after the head is not read, whatever it holds. */
static void
test_body(void **state)
{
	static const char in[] = "POST /b HTTP/1.1\r\nHost: b\r\n"
				 "Content-Length: 9\r\n\r\n\x16\r\x01\nHost: c";
	struct lb_http_req q;

	(void)state;
	assert_int_equal(lb_http_head((const uint8_t *)in, sizeof(in) - 1,
				      LB_HTTP_HEAD_MAX, &q),
			 LB_HTTP_HEAD_FOUND);
	assert_int_equal(q.head_len, strstr(in, "\r\n\r\n") - in + 4);
	assert_string_equal(q.host, "b");
}

/* Empty lines alone, forever: too long at the bound. */
static void
test_empty_lines(void **state)
{
	static uint8_t in[LB_HTTP_HEAD_MAX + 2];
	struct lb_http_req q;

	(void)state;
	for (size_t i = 0; i < sizeof(in); i += 2)
		memcpy(in + i, "\r\n", 2);
	assert_int_equal(lb_http_head(NULL, 0, LB_HTTP_HEAD_MAX, &q),
			 LB_HTTP_HEAD_NEED_MORE);
	assert_int_equal(lb_http_head(in, LB_HTTP_HEAD_MAX - 1,
				      LB_HTTP_HEAD_MAX, &q),
			 LB_HTTP_HEAD_NEED_MORE);
	assert_int_equal(lb_http_head(in, sizeof(in), LB_HTTP_HEAD_MAX, &q),
			 LB_HTTP_HEAD_TOO_LONG);
}

static void
test_names(void **state)
{
	(void)state;
	assert_string_equal(lb_http_head_verdict_name(LB_HTTP_HEAD_NOT_HTTP),
			    "not_http");
	assert_string_equal(lb_http_head_verdict_name(LB_HTTP_HEAD_VERDICTS),
			    "?");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_body),
		cmocka_unit_test(test_empty_lines),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
