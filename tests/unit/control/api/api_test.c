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

#include "api.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* Names the failing row of a table before the assertion stops the test. */
#define NOTE_IF(cond, ...)                                                     \
	do {                                                                   \
		if (cond)                                                      \
			print_message(__VA_ARGS__);                            \
	} while (0)

/* ---- requests ---- */

struct req_case {
	const char *line;
	int rc;
	const char *err;   /* substring of the error, or NULL */
	unsigned int argc; /* for successes */
	const char *w0;
};

static const struct req_case req_cases[] = {
	{"{\"v\":1,\"argv\":[\"backend\",\"list\"]}", 0, NULL, 2, "backend"},
	{"{\"v\":1,\"argv\":[],\"json\":true}", 0, NULL, 0, NULL},
	{"{\"json\":false,\"argv\":[\"stats\"],\"v\":1,\"extra\":{}}", 0, NULL,
	 1, "stats"},
	{" {\"v\":1,\"argv\":[\"a b\",\"\\t\"]} ", 0, NULL, 2, "a b"},
	{"{\"v\":1,\"argv\":[\"caf\\u00e9\"]}", 0, NULL, 1, "caf\xc3\xa9"},
	{"{\"v\":1,\"apply\":\"addr add 1.2.3.4/24 port 0\\n\","
	 "\"name\":\"f.conf\"}",
	 0, NULL, 0, NULL},
	/* version */
	{"{\"v\":2,\"argv\":[]}", -EOPNOTSUPP,
	 "protocol version 2 not supported (this lb-control speaks 1)", 0,
	 NULL},
	{"{\"v\":0,\"argv\":[]}", -EOPNOTSUPP, "protocol version 0", 0, NULL},
	{"{\"v\":-1,\"argv\":[]}", -EOPNOTSUPP, "version -1", 0, NULL},
	{"{\"v\":99999999999999999999,\"argv\":[]}", -EINVAL, NULL, 0, NULL},
	{"{\"v\":1.0,\"argv\":[]}", -EINVAL, "\"v\" must be an integer", 0,
	 NULL},
	{"{\"v\":\"1\",\"argv\":[]}", -EINVAL, "integer", 0, NULL},
	{"{\"argv\":[]}", -EINVAL, "missing \"v\"", 0, NULL},
	/* shape */
	{"", -EINVAL, "malformed JSON", 0, NULL},
	{"   ", -EINVAL, "malformed JSON", 0, NULL},
	{"not json", -EINVAL, "malformed JSON", 0, NULL},
	{"{\"v\":1,\"argv\":[]", -EINVAL, "malformed JSON", 0, NULL},
	{"{\"v\":1,\"argv\":[]}{}", -EINVAL, "malformed JSON", 0, NULL},
	{"[1,2]", -EINVAL, "not a JSON object", 0, NULL},
	{"{\"v\":1,\"v\":1,\"argv\":[]}", -EINVAL, "malformed JSON", 0, NULL},
	{"{\"v\":1}", -EINVAL, "exactly one of", 0, NULL},
	{"{\"v\":1,\"argv\":[],\"apply\":\"\"}", -EINVAL, "exactly one of", 0,
	 NULL},
	{"{\"v\":1,\"argv\":\"stats\"}", -EINVAL, "array of strings", 0, NULL},
	{"{\"v\":1,\"argv\":[1]}", -EINVAL, "word 1 is not a string", 0, NULL},
	{"{\"v\":1,\"argv\":[\"a\",null]}", -EINVAL, "word 2 is not a string",
	 0, NULL},
	{"{\"v\":1,\"argv\":[\"a\\nb\"]}", -EINVAL,
	 "word 1 (\"a\\x0ab\"): control character 0x0a", 0, NULL},
	{"{\"v\":1,\"argv\":[\"service\",\"a\\tb\",\"c\\u001bd\"]}", -EINVAL,
	 "word 3 (\"c\\x1bd\"): control character 0x1b", 0, NULL},
	{"{\"v\":1,\"argv\":[\"a\\u007f\"]}", -EINVAL, "0x7f", 0, NULL},
	{"{\"v\":1,\"argv\":[\"a\\u0000b\"]}", -EINVAL, "malformed JSON", 0,
	 NULL},
	{"{\"v\":1,\"argv\":[],\"json\":1}", -EINVAL, "\"json\"", 0, NULL},
	{"{\"v\":1,\"argv\":[],\"width\":-1}", -EINVAL, "\"width\"", 0, NULL},
	{"{\"v\":1,\"argv\":[],\"width\":\"80\"}", -EINVAL, "\"width\"", 0,
	 NULL},
	{"{\"v\":1,\"argv\":[],\"width\":10001}", -EINVAL, "0..10000", 0,
	 NULL},
	{"{\"v\":1,\"argv\":[],\"width\":80.5}", -EINVAL, "\"width\"", 0,
	 NULL},
	{"{\"v\":1,\"apply\":7}", -EINVAL, "\"apply\" must be a string", 0,
	 NULL},
	{"{\"v\":1,\"apply\":\"\",\"name\":3}", -EINVAL, "\"name\"", 0, NULL},
	{"{\"v\":1,\"apply\":\"\",\"name\":\"\"}", -EINVAL, "1..255", 0, NULL},
	{"{\"v\":1,\"apply\":\"\",\"name\":\"a\\nb\"}", -EINVAL,
	 "control character", 0, NULL},
	/* invalid UTF-8 inside a string */
	{"{\"v\":1,\"argv\":[\"\xff\"]}", -EINVAL, "malformed JSON", 0, NULL},
	{"{\"v\":1,\"argv\":[\"\xc0\xaf\"]}", -EINVAL, "malformed JSON", 0,
	 NULL},
};

static void
test_parse_table(void **state)
{
	char err[LB_CMD_ERR_MAX];

	(void)state;
	for (size_t i = 0; i < NELEM(req_cases); i++) {
		const struct req_case *c = &req_cases[i];
		struct lb_api_req r;
		int rc;

		err[0] = '\0';
		rc = lb_api_parse(c->line, strlen(c->line), &r, err,
				  sizeof(err));
		NOTE_IF(rc != c->rc, "row %zu: %s -> %d (%s)\n", i, c->line, rc,
			err);
		assert_int_equal(rc, c->rc);
		if (c->err != NULL) {
			NOTE_IF(strstr(err, c->err) == NULL,
				"row %zu: error '%s' lacks '%s'\n", i, err,
				c->err);
			assert_non_null(strstr(err, c->err));
		}
		if (rc != 0) {
			/* A refused request owns nothing. */
			assert_null(r.argv);
			assert_null(r.apply);
			continue;
		}
		if (r.kind == LB_API_ARGV) {
			assert_int_equal(r.argc, c->argc);
			assert_null(r.argv[r.argc]);
			if (c->w0 != NULL)
				assert_string_equal(r.argv[0], c->w0);
		}
		lb_api_req_free(&r);
	}
}

static void
test_parse_details(void **state)
{
	const char *line =
		"{\"v\":1,\"apply\":\"a\\nb\\n\",\"name\":\"x.conf\"}";
	char err[LB_CMD_ERR_MAX];
	struct lb_api_req r;
	char *big;
	size_t n;

	(void)state;
	assert_int_equal(lb_api_parse(line, strlen(line), &r, err, sizeof(err)),
			 0);
	assert_int_equal(r.kind, LB_API_APPLY);
	assert_int_equal(r.apply_len, 4);
	assert_string_equal(r.apply, "a\nb\n");
	assert_string_equal(r.name, "x.conf");
	assert_false(r.json);
	lb_api_req_free(&r);
	lb_api_req_free(&r);
	lb_api_req_free(NULL);

	line = "{\"v\":1,\"apply\":\"\"}";
	assert_int_equal(lb_api_parse(line, strlen(line), &r, err, sizeof(err)),
			 0);
	assert_string_equal(r.name, "-");
	lb_api_req_free(&r);

	/* The length given counts, not a NUL: the line need not end. */
	line = "{\"v\":1,\"argv\":[\"x\"]}garbage";
	assert_int_equal(lb_api_parse(line, 20, &r, err, sizeof(err)), 0);
	lb_api_req_free(&r);

	/* Word limits of the command line. */
	n = 64 + 1;
	big = malloc(16 + n * 4 + 8);
	assert_non_null(big);
	strcpy(big, "{\"v\":1,\"argv\":[");
	for (size_t i = 0; i < n; i++)
		strcat(big, i == 0 ? "\"a\"" : ",\"a\"");
	strcat(big, "]}");
	assert_int_equal(lb_api_parse(big, strlen(big), &r, err, sizeof(err)),
			 -E2BIG);
	free(big);
	big = malloc(400);
	assert_non_null(big);
	snprintf(big, 400, "{\"v\":1,\"argv\":[\"%0256d\"]}", 0);
	assert_int_equal(lb_api_parse(big, strlen(big), &r, err, sizeof(err)),
			 -E2BIG);
	assert_non_null(strstr(err, "word 1 (\"000000000000000000000000...\") "
				    "too long (more than 255 bytes)"));
	snprintf(big, 400, "{\"v\":1,\"argv\":[\"%0255d\"]}", 0);
	assert_int_equal(lb_api_parse(big, strlen(big), &r, err, sizeof(err)),
			 0);
	lb_api_req_free(&r);
	free(big);

	/* Longer than a line may be, whatever it holds. */
	n = LB_API_LINE_MAX + 1;
	big = malloc(n);
	assert_non_null(big);
	memset(big, ' ', n);
	assert_int_equal(lb_api_parse(big, n, &r, err, sizeof(err)), -E2BIG);
	free(big);
	assert_int_equal(lb_api_parse(NULL, 0, &r, err, sizeof(err)), -EINVAL);
	assert_int_equal(lb_api_parse("{}", 2, NULL, err, sizeof(err)),
			 -EINVAL);
}

/* Deep nesting and random bytes: an error answer, never a crash. */
static void
test_parse_hostile(void **state)
{
	char err[LB_CMD_ERR_MAX];
	struct lb_api_req r;
	size_t depth = 100000;
	char *deep = malloc(2 * depth + 64);
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	char buf[512];
	size_t off;

	(void)state;
	assert_non_null(deep);
	memset(deep, '[', depth);
	memset(deep + depth, ']', depth);
	assert_int_equal(lb_api_parse(deep, 2 * depth, &r, err, sizeof(err)),
			 -EINVAL);
	/* Nested inside a request that is otherwise fine. */
	strcpy(deep, "{\"v\":1,\"argv\":[],\"x\":");
	off = strlen(deep);
	memset(deep + off, '{', depth / 2);
	deep[off + depth / 2] = '\0';
	assert_int_equal(lb_api_parse(deep, strlen(deep), &r, err, sizeof(err)),
			 -EINVAL);
	free(deep);
	for (int i = 0; i < 20000; i++) {
		size_t n = (size_t)(i % (int)sizeof(buf));

		for (size_t k = 0; k < n; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[k] = (char)(x >> 24);
		}
		/* Every other one starts like a request. */
		if (i % 2 == 0 && n > 8)
			memcpy(buf, "{\"v\":1,", 7);
		if (lb_api_parse(buf, n, &r, err, sizeof(err)) == 0)
			lb_api_req_free(&r);
	}
}

/* ---- responses ---- */

static json_t *
load_line(const char *s, size_t len)
{
	json_error_t je;

	/* One line: the only newline is the last byte. */
	assert_true(len > 0);
	assert_int_equal(s[len - 1], '\n');
	assert_null(memchr(s, '\n', len - 1));
	assert_int_equal(strlen(s), len);
	return json_loadb(s, len - 1, 0, &je);
}

static void
test_responses(void **state)
{
	size_t len;
	char *s;
	json_t *j, *d;

	(void)state;
	d = json_pack("{s:i}", "n", 3);
	s = lb_api_ok("line 1\nline 2\n", d, &len);
	assert_non_null(s);
	assert_string_equal(s, "{\"v\":1,\"ok\":true,\"text\":\"line 1\\nline "
			       "2\\n\",\"data\":{\"n\":3}}\n");
	free(s);
	s = lb_api_ok(NULL, NULL, &len);
	assert_string_equal(s, "{\"v\":1,\"ok\":true,\"text\":\"\",\"data\":"
			       "null}\n");
	free(s);
	s = lb_api_error(-ENOENT, "no service tcp 1.2.3.4:80", &len);
	assert_string_equal(s, "{\"v\":1,\"ok\":false,\"code\":-2,\"error\":"
			       "\"no service tcp 1.2.3.4:80\"}\n");
	free(s);
	/* Positive codes, newlines in errors, bytes that are not UTF-8. */
	s = lb_api_error(5, "two\nlines \xff\xfe end", &len);
	j = load_line(s, len);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(j, "code")),
			 -EINVAL);
	assert_string_equal(json_string_value(json_object_get(j, "error")),
			    "two lines ?? end");
	json_decref(j);
	free(s);
	s = lb_api_ok("caf\xc3\xa9 \xe2\x82", NULL, &len);
	j = load_line(s, len);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "text")),
			    "caf\xc3\xa9 ??");
	json_decref(j);
	free(s);
	/* Nothing a terminal would act on reaches lbctl's output: escape
	 * sequences (ESC, C1 CSI), bell, carriage return, DEL. */
	s = lb_api_ok("a\x1b[2Jb\xc2\x9b" "1mc\a\r\x7f\td\n", NULL, &len);
	j = load_line(s, len);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "text")),
			    "a?[2Jb??1mc???\td\n");
	json_decref(j);
	free(s);
	s = lb_api_error(-EIO, "x\x1b]0;title\ay\xc2\x85z", &len);
	j = load_line(s, len);
	assert_string_equal(json_string_value(json_object_get(j, "error")),
			    "x ]0;title y??z");
	json_decref(j);
	free(s);
}

struct utf8_case {
	const char *in;
	const char *out;
	size_t bad;
};

static const struct utf8_case utf8_cases[] = {
	{"", "", 0},
	{"plain ascii", "plain ascii", 0},
	{"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
	 "\xc3\xa9\xe2\x82\xac"
	 "\xf0\x9f\x98\x80",
	 0},
	{"\x80", "?", 1},
	{"\xc3", "?", 1},
	{"\xc0\xaf", "??", 2},		 /* overlong '/' */
	{"\xe0\x80\xaf", "???", 3},	 /* overlong */
	{"\xed\xa0\x80", "???", 3},	 /* surrogate */
	{"\xf4\x90\x80\x80", "????", 4}, /* past U+10FFFF */
	{"\xf5\x80\x80\x80", "????", 4},
	{"a\xe2\x82z", "a??z", 2},	     /* cut sequence */
	{"\xef\xbf\xbf", "\xef\xbf\xbf", 0}, /* U+FFFF is a character */
};

static void
test_utf8_fix(void **state)
{
	char buf[32];

	(void)state;
	for (size_t i = 0; i < NELEM(utf8_cases); i++) {
		snprintf(buf, sizeof(buf), "%s", utf8_cases[i].in);
		assert_int_equal(lb_api_utf8_fix(buf), utf8_cases[i].bad);
		assert_string_equal(buf, utf8_cases[i].out);
	}
	assert_int_equal(lb_api_utf8_fix(NULL), 0);
}

/* ---- handle: parse, run, answer ---- */

static int
fake_exec(void *ctx, int argc, char **argv, struct lb_cmd_out *out,
	  json_t **data)
{
	int *calls = ctx;

	(*calls)++;
	if (argc > 0 && strcmp(argv[0], "fail") == 0)
		return lb_cmd_error(out, -ENOENT, "no such thing '%s'",
				    argc > 1 ? argv[1] : "");
	if (argc > 0 && strcmp(argv[0], "silent-fail") == 0)
		return -EBUSY;
	for (int i = 0; i < argc; i++)
		lb_cmd_printf(out, "%s%s", i > 0 ? " " : "", argv[i]);
	if (argc > 0 && strcmp(argv[0], "data") == 0)
		*data = json_pack("{s:[i,i]}", "list", 1, 2);
	if (argc > 0 && strcmp(argv[0], "width") == 0)
		lb_cmd_printf(out, " %u", out->width);
	return 0;
}

static int
fake_apply(void *ctx, const char *text, size_t len, const char *name,
	   struct lb_cmd_out *out)
{
	int *calls = ctx;

	(*calls)++;
	if (memchr(text, '!', len) != NULL)
		return lb_cmd_error(out, -EINVAL, "%s:2: refused", name);
	return lb_cmd_printf(out, "%zu bytes of %s", len, name);
}

static const struct lb_api_ops fake_ops = {fake_exec, fake_apply};

struct handle_case {
	const char *req;
	int code;
	const char *resp;
};

static const struct handle_case handle_cases[] = {
	{"{\"v\":1,\"argv\":[\"echo\",\"a b\"]}", 0,
	 "{\"v\":1,\"ok\":true,\"text\":\"echo a b\",\"data\":null}\n"},
	{"{\"v\":1,\"argv\":[\"data\"],\"json\":true}", 0,
	 "{\"v\":1,\"ok\":true,\"text\":\"data\",\"data\":{\"list\":[1,2]}}"
	 "\n"},
	/* The client's width reaches the command. */
	{"{\"v\":1,\"argv\":[\"width\"],\"width\":80}", 0,
	 "{\"v\":1,\"ok\":true,\"text\":\"width 80\",\"data\":null}\n"},
	{"{\"v\":1,\"argv\":[\"width\"]}", 0,
	 "{\"v\":1,\"ok\":true,\"text\":\"width 0\",\"data\":null}\n"},
	{"{\"v\":1,\"argv\":[\"fail\",\"x\"]}", -ENOENT,
	 "{\"v\":1,\"ok\":false,\"code\":-2,\"error\":\"no such thing "
	 "'x'\"}\n"},
	{"{\"v\":1,\"argv\":[\"silent-fail\"]}", -EBUSY,
	 "{\"v\":1,\"ok\":false,\"code\":-16,\"error\":\"Device or resource "
	 "busy\"}\n"},
	{"{\"v\":1,\"apply\":\"ok\\n\",\"name\":\"f\"}", 0,
	 "{\"v\":1,\"ok\":true,\"text\":\"3 bytes of f\",\"data\":null}\n"},
	{"{\"v\":1,\"apply\":\"a\\n!\\n\",\"name\":\"f\"}", -EINVAL,
	 "{\"v\":1,\"ok\":false,\"code\":-22,\"error\":\"f:2: refused\"}\n"},
	{"{\"v\":3,\"argv\":[]}", -EOPNOTSUPP,
	 "{\"v\":1,\"ok\":false,\"code\":-95,\"error\":\"protocol version 3 "
	 "not supported (this lb-control speaks 1)\"}\n"},
	{"}{", -EINVAL, NULL},
};

static void
test_handle(void **state)
{
	int calls = 0;

	(void)state;
	for (size_t i = 0; i < NELEM(handle_cases); i++) {
		const struct handle_case *c = &handle_cases[i];
		size_t len = 0;
		int code = 1;
		char *r = lb_api_handle(&fake_ops, &calls, c->req,
					strlen(c->req), &len, &code);

		assert_non_null(r);
		NOTE_IF(code != c->code, "row %zu: code %d\n", i, code);
		assert_int_equal(code, c->code);
		if (c->resp != NULL)
			assert_string_equal(r, c->resp);
		json_decref(load_line(r, len));
		free(r);
	}
	/* Only well-formed requests reach the handlers. */
	assert_int_equal(calls, 8);
}

/* ---- line assembly ---- */

/* Feeds @p s in pieces of the sizes @p cut gives, collecting lines. */
static unsigned int
feed_lines(const char *s, size_t n, size_t (*cut)(size_t, void *), void *arg,
	   char out[][64], unsigned int max)
{
	struct lb_api_rbuf rb;
	unsigned int k = 0;
	size_t off = 0;

	lb_api_rbuf_init(&rb);
	while (off < n) {
		size_t len = cut(n - off, arg);
		char *line;
		size_t ll;

		assert_int_equal(lb_api_rbuf_feed(&rb, s + off, len), 0);
		off += len;
		while (lb_api_rbuf_next(&rb, &line, &ll) == 1) {
			assert_true(k < max);
			assert_int_equal(strlen(line), ll);
			snprintf(out[k++], 64, "%s", line);
		}
	}
	lb_api_rbuf_free(&rb);
	return k;
}

static size_t
cut_whole(size_t left, void *arg)
{
	(void)arg;
	return left;
}

static size_t
cut_byte(size_t left, void *arg)
{
	(void)arg;
	(void)left;
	return 1;
}

static size_t
cut_random(size_t left, void *arg)
{
	uint64_t *x = arg;

	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return 1 + (size_t)(*x % (left < 7 ? left : 7));
}

static void
test_rbuf_splits(void **state)
{
	static const char in[] = "one\ntwo\r\n\nlast one\npartial";
	static const char *const want[] = {"one", "two", "", "last one"};
	char got[8][64];
	uint64_t seed = 12345;

	(void)state;
	for (int mode = 0; mode < 3; mode++) {
		for (int rep = 0; rep < (mode == 2 ? 50 : 1); rep++) {
			unsigned int n = feed_lines(in, sizeof(in) - 1,
						    mode == 0	? cut_whole
						    : mode == 1 ? cut_byte
								: cut_random,
						    &seed, got, 8);

			assert_int_equal(n, NELEM(want));
			for (unsigned int i = 0; i < n; i++)
				assert_string_equal(got[i], want[i]);
		}
	}
}

static void
test_rbuf_limit(void **state)
{
	struct lb_api_rbuf rb;
	char *big = malloc(LB_API_LINE_MAX + 8);
	char *line;
	size_t len;

	(void)state;
	assert_non_null(big);
	memset(big, 'x', LB_API_LINE_MAX + 8);
	/* Exactly the limit, with a '\r', in two pieces. */
	lb_api_rbuf_init(&rb);
	assert_int_equal(lb_api_rbuf_feed(&rb, big, LB_API_LINE_MAX / 2), 0);
	assert_int_equal(lb_api_rbuf_next(&rb, &line, &len), 0);
	assert_true(lb_api_rbuf_partial(&rb));
	assert_int_equal(lb_api_rbuf_feed(&rb, big, LB_API_LINE_MAX / 2), 0);
	assert_int_equal(lb_api_rbuf_feed(&rb, "\r\nnext", 6), 0);
	assert_int_equal(lb_api_rbuf_next(&rb, &line, &len), 1);
	assert_int_equal(len, LB_API_LINE_MAX);
	assert_int_equal(lb_api_rbuf_next(&rb, &line, &len), 0);
	/* One byte more than a line may hold: refused, and the line after
	 * it comes out as usual. */
	assert_int_equal(lb_api_rbuf_feed(&rb, "\n", 1), 0);
	assert_int_equal(lb_api_rbuf_next(&rb, &line, &len), 1);
	assert_string_equal(line, "next");
	assert_false(lb_api_rbuf_partial(&rb));
	assert_int_equal(lb_api_rbuf_feed(&rb, big, LB_API_LINE_MAX - 4), 0);
	assert_int_equal(lb_api_rbuf_feed(&rb, big, 5), 0);
	assert_int_equal(lb_api_rbuf_feed(&rb, "\nok\n", 4), 0);
	assert_int_equal(lb_api_rbuf_next(&rb, &line, &len), -E2BIG);
	assert_int_equal(lb_api_rbuf_next(&rb, &line, &len), 1);
	assert_string_equal(line, "ok");
	lb_api_rbuf_free(&rb);
	/* Far longer, in many pieces: memory stays bounded. */
	lb_api_rbuf_init(&rb);
	for (int i = 0; i < 64; i++)
		assert_int_equal(lb_api_rbuf_feed(&rb, big, LB_API_LINE_MAX),
				 0);
	assert_true(rb.cap <= 2 * ((size_t)LB_API_LINE_MAX + 2) + 1);
	assert_int_equal(lb_api_rbuf_next(&rb, &line, &len), 0);
	/* In one piece, between good lines. */
	big[3] = '\n';
	big[LB_API_LINE_MAX + 7] = '\n';
	assert_int_equal(lb_api_rbuf_feed(&rb, "\na\n", 3), 0);
	assert_int_equal(lb_api_rbuf_feed(&rb, big, LB_API_LINE_MAX + 8), 0);
	assert_int_equal(lb_api_rbuf_next(&rb, &line, &len), -E2BIG);
	assert_int_equal(lb_api_rbuf_next(&rb, &line, &len), 1);
	assert_string_equal(line, "a");
	assert_int_equal(lb_api_rbuf_next(&rb, &line, &len), 1);
	assert_string_equal(line, "xxx");
	assert_int_equal(lb_api_rbuf_next(&rb, &line, &len), -E2BIG);
	assert_int_equal(lb_api_rbuf_next(&rb, &line, &len), 0);
	lb_api_rbuf_free(&rb);
	assert_int_equal(lb_api_rbuf_feed(NULL, "x", 1), -EINVAL);
	lb_api_rbuf_init(&rb);
	assert_int_equal(lb_api_rbuf_next(&rb, &line, &len), 0);
	assert_int_equal(lb_api_rbuf_feed(&rb, NULL, 1), -EINVAL);
	assert_int_equal(lb_api_rbuf_feed(&rb, NULL, 0), 0);
	lb_api_rbuf_free(&rb);
	free(big);
}

/* Many lines fed in a stream that keeps growing and being consumed. */
static void
test_rbuf_stream(void **state)
{
	struct lb_api_rbuf rb;
	char line_in[64], *line;
	size_t len;
	unsigned int next = 0;

	(void)state;
	lb_api_rbuf_init(&rb);
	for (unsigned int i = 0; i < 10000; i++) {
		int n = snprintf(line_in, sizeof(line_in), "request %u\n", i);

		assert_int_equal(lb_api_rbuf_feed(&rb, line_in, (size_t)n), 0);
		/* Consume only every third time: lines pile up a bit. */
		if (i % 3 != 0)
			continue;
		while (lb_api_rbuf_next(&rb, &line, &len) == 1) {
			snprintf(line_in, sizeof(line_in), "request %u",
				 next++);
			assert_string_equal(line, line_in);
		}
	}
	while (lb_api_rbuf_next(&rb, &line, &len) == 1)
		next++;
	assert_int_equal(next, 10000);
	assert_true(rb.cap < 65536);
	lb_api_rbuf_free(&rb);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_table),
		cmocka_unit_test(test_parse_details),
		cmocka_unit_test(test_parse_hostile),
		cmocka_unit_test(test_responses),
		cmocka_unit_test(test_utf8_fix),
		cmocka_unit_test(test_handle),
		cmocka_unit_test(test_rbuf_splits),
		cmocka_unit_test(test_rbuf_limit),
		cmocka_unit_test(test_rbuf_stream),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
