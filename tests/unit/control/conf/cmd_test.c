/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lb/cmd.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define MAXW 6

/* Names the failing row of a table before the assertion stops the test. */
#define NOTE_IF(cond, ...)                                                   \
	do {                                                                 \
		if (cond)                                                    \
			print_message(__VA_ARGS__);                          \
	} while (0)

/* ---- tokenizer ---- */

struct tok_case {
	const char *line;
	int rc;
	unsigned int argc;
	const char *w[MAXW];
	const char *err;
};

static const struct tok_case tok_cases[] = {
	{ "", 0, 0, { NULL }, "" },
	{ "   \t  ", 0, 0, { NULL }, "" },
	{ "# only a comment", 0, 0, { NULL }, "" },
	{ "   # indented comment", 0, 0, { NULL }, "" },
	{ "service add tcp 1.2.3.4:80", 0, 4,
	  { "service", "add", "tcp", "1.2.3.4:80" }, "" },
	{ "  a\tb   c  ", 0, 3, { "a", "b", "c" }, "" },
	{ "a#b", 0, 1, { "a#b" }, "" },
	{ "a #b c", 0, 1, { "a" }, "" },
	{ "a\t#b", 0, 1, { "a" }, "" },
	{ "\"a b\" c", 0, 2, { "a b", "c" }, "" },
	{ "x\"y z\"w", 0, 1, { "xy zw" }, "" },
	{ "\"a\"\"b\"", 0, 1, { "ab" }, "" },
	{ "\"\"", 0, 1, { "" }, "" },
	{ "a \"\" b", 0, 3, { "a", "", "b" }, "" },
	{ "\"a \\\" b\"", 0, 1, { "a \" b" }, "" },
	{ "\"a\\\\b\"", 0, 1, { "a\\b" }, "" },
	{ "a\\b", 0, 1, { "a\\b" }, "" },
	{ "\"# not a comment\"", 0, 1, { "# not a comment" }, "" },
	{ "\"a\tb\"", 0, 1, { "a\tb" }, "" },
	{ "caf\xc3\xa9", 0, 1, { "caf\xc3\xa9" }, "" },
	{ "\"abc", -EINVAL, 0, { NULL },
	  "unterminated quote starting at column 1" },
	{ "ab \"cd", -EINVAL, 0, { NULL },
	  "unterminated quote starting at column 4" },
	{ "a \"b\" \"c", -EINVAL, 0, { NULL },
	  "unterminated quote starting at column 7" },
	{ "\"a\\", -EINVAL, 0, { NULL },
	  "unterminated quote starting at column 1" },
	{ "\"a\\n\"", -EINVAL, 0, { NULL }, "invalid escape '\\n' at column 3" },
	{ "a\x01" "b", -EINVAL, 0, { NULL },
	  "control character 0x01 at column 2" },
	{ "ab\r", -EINVAL, 0, { NULL }, "control character 0x0d at column 3" },
	{ "\"a\x7f\"", -EINVAL, 0, { NULL },
	  "control character 0x7f at column 3" },
};

static void
test_tokenize_table(void **state)
{
	struct lb_cmd_line tl;
	struct lb_cmd_out o;

	(void)state;
	lb_cmd_out_init(&o);
	for (size_t i = 0; i < NELEM(tok_cases); i++) {
		const struct tok_case *c = &tok_cases[i];
		int rc;

		lb_cmd_out_reset(&o);
		rc = lb_cmd_tokenize(c->line, &tl, &o);
		NOTE_IF(rc != c->rc || strcmp(o.errmsg, c->err) != 0,
			"case %zu [%s]: %d '%s'\n", i, c->line, rc, o.errmsg);
		assert_int_equal(rc, c->rc);
		assert_string_equal(lb_cmd_out_errmsg(&o), c->err);
		if (rc != 0)
			continue;
		assert_int_equal(tl.argc, c->argc);
		for (unsigned int j = 0; j < c->argc; j++)
			assert_string_equal(tl.argv[j], c->w[j]);
		assert_null(tl.argv[tl.argc]);
	}
	lb_cmd_out_free(&o);
}

static void
test_tokenize_limits(void **state)
{
	char line[LB_CMD_LINE_MAX + 2];
	struct lb_cmd_line tl;
	struct lb_cmd_out o;
	size_t n = 0;

	(void)state;
	lb_cmd_out_init(&o);

	/* one word of exactly LB_CMD_ARG_MAX bytes, then one byte more */
	memset(line, 'w', LB_CMD_ARG_MAX);
	line[LB_CMD_ARG_MAX] = '\0';
	assert_int_equal(lb_cmd_tokenize(line, &tl, &o), 0);
	assert_int_equal(tl.argc, 1);
	assert_int_equal(strlen(tl.argv[0]), LB_CMD_ARG_MAX);
	memcpy(line, "a ", 2);
	memset(line + 2, 'w', LB_CMD_ARG_MAX + 1);
	line[LB_CMD_ARG_MAX + 3] = '\0';
	assert_int_equal(lb_cmd_tokenize(line, &tl, &o), -E2BIG);
	assert_string_equal(o.errmsg,
			    "word 2 (\"wwwwwwwwwwwwwwwwwwwwwwww...\") "
			    "too long (more than 255 bytes)");

	/* quotes do not count toward a word's length */
	lb_cmd_out_reset(&o);
	line[0] = '"';
	memset(line + 1, 'q', LB_CMD_ARG_MAX);
	line[LB_CMD_ARG_MAX + 1] = '"';
	line[LB_CMD_ARG_MAX + 2] = '\0';
	assert_int_equal(lb_cmd_tokenize(line, &tl, &o), 0);
	assert_int_equal(strlen(tl.argv[0]), LB_CMD_ARG_MAX);

	/* LB_CMD_ARGC_MAX words, then one more */
	for (unsigned int i = 0; i < LB_CMD_ARGC_MAX; i++)
		n += (size_t)sprintf(line + n, "w%u ", i);
	assert_int_equal(lb_cmd_tokenize(line, &tl, &o), 0);
	assert_int_equal(tl.argc, LB_CMD_ARGC_MAX);
	assert_string_equal(tl.argv[LB_CMD_ARGC_MAX - 1], "w63");
	sprintf(line + n, "x");
	assert_int_equal(lb_cmd_tokenize(line, &tl, &o), -E2BIG);
	assert_string_equal(o.errmsg, "too many words (more than 64)");

	/* a line of LB_CMD_LINE_MAX bytes is read, one more is refused */
	lb_cmd_out_reset(&o);
	for (size_t i = 0; i < LB_CMD_LINE_MAX; i++)
		line[i] = i % 128 == 127 ? ' ' : 'l';
	line[LB_CMD_LINE_MAX] = '\0';
	assert_int_equal(lb_cmd_tokenize(line, &tl, &o), 0);
	assert_int_equal(tl.argc, 8);
	line[LB_CMD_LINE_MAX] = 'l';
	line[LB_CMD_LINE_MAX + 1] = '\0';
	assert_int_equal(lb_cmd_tokenize(line, &tl, &o), -E2BIG);
	assert_string_equal(o.errmsg, "line too long (more than 1024 bytes)");

	/* the worst case for the word buffer: many one-byte words */
	lb_cmd_out_reset(&o);
	for (unsigned int i = 0; i < LB_CMD_ARGC_MAX; i++) {
		line[2 * i] = 'a';
		line[2 * i + 1] = ' ';
	}
	line[2 * LB_CMD_ARGC_MAX - 1] = '\0';
	assert_int_equal(lb_cmd_tokenize(line, &tl, &o), 0);
	assert_int_equal(tl.argc, LB_CMD_ARGC_MAX);

	assert_int_equal(lb_cmd_tokenize(NULL, &tl, &o), -EINVAL);
	assert_int_equal(lb_cmd_tokenize("a", NULL, NULL), -EINVAL);
	lb_cmd_out_free(&o);
}

static const char *const quote_cases[] = {
	"plain", "", "a b", "#x", "a#b", "say \"hi\"", "back\\slash",
	"q \\ \"", "tab\there", "1.2.3.4:80",
};

static void
test_quote_roundtrip(void **state)
{
	static const char *const want[] = {
		"plain", "\"\"", "\"a b\"", "\"#x\"", "a#b",
		"\"say \\\"hi\\\"\"", "back\\slash", "\"q \\\\ \\\"\"",
		"\"tab\there\"", "1.2.3.4:80",
	};
	struct lb_cmd_line tl;
	char q[64], small[4];

	(void)state;
	for (size_t i = 0; i < NELEM(quote_cases); i++) {
		int n = lb_cmd_quote(quote_cases[i], q, sizeof(q));

		assert_int_equal(n, (int)strlen(want[i]));
		assert_string_equal(q, want[i]);
		assert_int_equal(lb_cmd_tokenize(q, &tl, NULL), 0);
		assert_int_equal(tl.argc, 1);
		assert_string_equal(tl.argv[0], quote_cases[i]);
	}
	assert_int_equal(lb_cmd_quote("abcd", small, sizeof(small)), -ENOSPC);
	assert_string_equal(small, "");
	assert_int_equal(lb_cmd_quote("abc", small, sizeof(small)), 3);
	assert_int_equal(lb_cmd_quote("a b", small, sizeof(small)), -ENOSPC);
	assert_int_equal(lb_cmd_quote("", small, 3), 2);
	assert_int_equal(lb_cmd_quote("a\nb", q, sizeof(q)), -EINVAL);
	assert_int_equal(lb_cmd_quote(NULL, q, sizeof(q)), -EINVAL);
}

/* ---- naming a word in messages ---- */

struct wname_case {
	unsigned int idx;
	const char *w;
	size_t len;
	const char *want;
};

static const struct wname_case wname_cases[] = {
	{ 4, "xyz", 3, "word 4 (\"xyz\")" },
	{ 1, "", 0, "word 1 (\"\")" },
	{ 2, "say \"hi\" \\o/", 12, "word 2 (\"say \\\"hi\\\" \\\\o/\")" },
	{ 3, "a\nb\x7f\tc", 6, "word 3 (\"a\\x0ab\\x7f\\x09c\")" },
	{ 5, "\xff\xc3\xa9t\xc3\xa9", 6,
	  "word 5 (\"\\xff\\xc3\\xa9t\\xc3\\xa9\")" },
	/* only the first 24 bytes, and the length given, not the NUL */
	{ 64, "abcdefghijklmnopqrstuvwxyz", 26,
	  "word 64 (\"abcdefghijklmnopqrstuvwx...\")" },
	{ 6, "abcdef", 3, "word 6 (\"abc\")" },
};

static void
test_word_name(void **state)
{
	char buf[LB_CMD_WORD_NAME_STRLEN], small[12];
	char big[LB_CMD_ARG_MAX];

	(void)state;
	for (size_t i = 0; i < NELEM(wname_cases); i++) {
		const struct wname_case *c = &wname_cases[i];

		memset(buf, '#', sizeof(buf));
		assert_ptr_equal(lb_cmd_word_name(buf, sizeof(buf), c->idx,
						  c->w, c->len),
				 buf);
		NOTE_IF(strcmp(buf, c->want) != 0, "row %zu: '%s', not '%s'\n",
			i, buf, c->want);
		assert_string_equal(buf, c->want);
	}
	/* The longest name: every shown byte escaped, the largest index. */
	memset(big, 0x01, sizeof(big));
	lb_cmd_word_name(buf, sizeof(buf), 4294967295u, big, sizeof(big));
	assert_int_equal(strlen(buf), sizeof(buf) - 1);
	assert_string_equal(buf + strlen(buf) - 9, "\\x01...\")");
	/* A buffer too small cuts the name, NUL-terminated. */
	assert_string_equal(lb_cmd_word_name(small, sizeof(small), 7, "abcdef",
					     6),
			    "word 7 (\"ab");
	assert_null(lb_cmd_word_name(NULL, 8, 1, "a", 1));
}

/* ---- argument parsers ---- */

enum ptype { P_IPV4, P_IPPORT, P_PREFIX, P_IPLEN };

struct addr_case {
	enum ptype t;
	const char *s;
	int rc;
	uint32_t ip;
	unsigned int n; /* port or length */
	const char *err;
};

static const struct addr_case addr_cases[] = {
	{ P_IPV4, "0.0.0.0", 0, 0, 0, "" },
	{ P_IPV4, "10.0.0.1", 0, 0x0a000001, 0, "" },
	{ P_IPV4, "255.255.255.255", 0, 0xffffffff, 0, "" },
	{ P_IPV4, "192.168.1.254", 0, 0xc0a801fe, 0, "" },
	{ P_IPV4, "", -EINVAL, 0, 0, "invalid IPv4 address ''" },
	{ P_IPV4, "1.2.3", -EINVAL, 0, 0, "invalid IPv4 address '1.2.3'" },
	{ P_IPV4, "1.2.3.4.5", -EINVAL, 0, 0,
	  "invalid IPv4 address '1.2.3.4.5'" },
	{ P_IPV4, "256.1.1.1", -EINVAL, 0, 0,
	  "invalid IPv4 address '256.1.1.1'" },
	{ P_IPV4, "1.2.3.04", -EINVAL, 0, 0,
	  "invalid IPv4 address '1.2.3.04'" },
	{ P_IPV4, "01.2.3.4", -EINVAL, 0, 0,
	  "invalid IPv4 address '01.2.3.4'" },
	{ P_IPV4, "1.2.3.1000", -EINVAL, 0, 0,
	  "invalid IPv4 address '1.2.3.1000'" },
	{ P_IPV4, "1..3.4", -EINVAL, 0, 0, "invalid IPv4 address '1..3.4'" },
	{ P_IPV4, "1.2.3.4 ", -EINVAL, 0, 0,
	  "invalid IPv4 address '1.2.3.4 '" },
	{ P_IPV4, "+1.2.3.4", -EINVAL, 0, 0,
	  "invalid IPv4 address '+1.2.3.4'" },
	{ P_IPV4, "0x1.2.3.4", -EINVAL, 0, 0,
	  "invalid IPv4 address '0x1.2.3.4'" },
	{ P_IPV4, "1.2.3.4/24", -EINVAL, 0, 0,
	  "invalid IPv4 address '1.2.3.4/24'" },
	{ P_IPV4, "a.b.c.d", -EINVAL, 0, 0, "invalid IPv4 address 'a.b.c.d'" },

	{ P_IPPORT, "10.0.0.1:80", 0, 0x0a000001, 80, "" },
	{ P_IPPORT, "10.0.0.1:1", 0, 0x0a000001, 1, "" },
	{ P_IPPORT, "10.0.0.1:65535", 0, 0x0a000001, 65535, "" },
	{ P_IPPORT, "10.0.0.1", -EINVAL, 0, 0,
	  "invalid address:port '10.0.0.1': expected a.b.c.d:PORT" },
	{ P_IPPORT, "10.0.0:80", -EINVAL, 0, 0,
	  "invalid address:port '10.0.0:80': expected a.b.c.d:PORT" },
	{ P_IPPORT, "10.0.0.1:80:1", -EINVAL, 0, 0,
	  "invalid address:port '10.0.0.1:80:1': expected a.b.c.d:PORT" },
	{ P_IPPORT, "10.0.0.1:", -EINVAL, 0, 0,
	  "invalid port '' in '10.0.0.1:'" },
	{ P_IPPORT, "10.0.0.1:8o", -EINVAL, 0, 0,
	  "invalid port '8o' in '10.0.0.1:8o'" },
	{ P_IPPORT, "10.0.0.1:-1", -EINVAL, 0, 0,
	  "invalid port '-1' in '10.0.0.1:-1'" },
	{ P_IPPORT, "10.0.0.1:0", -ERANGE, 0, 0,
	  "port 0 out of range 1..65535 in '10.0.0.1:0'" },
	{ P_IPPORT, "10.0.0.1:65536", -ERANGE, 0, 0,
	  "port 65536 out of range 1..65535 in '10.0.0.1:65536'" },
	{ P_IPPORT, "10.0.0.1:99999999999999999999999", -ERANGE, 0, 0,
	  "port 99999999999999999999999 out of range 1..65535 in "
	  "'10.0.0.1:99999999999999999999999'" },

	{ P_PREFIX, "default", 0, 0, 0, "" },
	{ P_PREFIX, "0.0.0.0/0", 0, 0, 0, "" },
	{ P_PREFIX, "10.0.0.0/8", 0, 0x0a000000, 8, "" },
	{ P_PREFIX, "10.1.2.3/32", 0, 0x0a010203, 32, "" },
	{ P_PREFIX, "192.168.128.0/17", 0, 0xc0a88000, 17, "" },
	{ P_PREFIX, "10.0.0.1/8", -EINVAL, 0, 0,
	  "prefix '10.0.0.1/8' has host bits set; the network is 10.0.0.0/8" },
	{ P_PREFIX, "1.0.0.0/0", -EINVAL, 0, 0,
	  "prefix '1.0.0.0/0' has host bits set; the network is default" },
	{ P_PREFIX, "10.0.0.0/33", -ERANGE, 0, 0,
	  "prefix length 33 out of range 0..32 in '10.0.0.0/33'" },
	{ P_PREFIX, "10.0.0.0", -EINVAL, 0, 0,
	  "invalid prefix '10.0.0.0': expected a.b.c.d/LEN or default" },
	{ P_PREFIX, "10.0.0.0/", -EINVAL, 0, 0,
	  "invalid prefix '10.0.0.0/': expected a.b.c.d/LEN or default" },
	{ P_PREFIX, "10.0.0.0/-1", -EINVAL, 0, 0,
	  "invalid prefix '10.0.0.0/-1': expected a.b.c.d/LEN or default" },
	{ P_PREFIX, "Default", -EINVAL, 0, 0,
	  "invalid prefix 'Default': expected a.b.c.d/LEN or default" },

	{ P_IPLEN, "10.0.0.1/24", 0, 0x0a000001, 24, "" },
	{ P_IPLEN, "10.0.0.1/32", 0, 0x0a000001, 32, "" },
	{ P_IPLEN, "10.0.0.0/1", 0, 0x0a000000, 1, "" },
	{ P_IPLEN, "10.0.0.1/0", -ERANGE, 0, 0,
	  "prefix length 0 out of range 1..32 in '10.0.0.1/0'" },
	{ P_IPLEN, "10.0.0.1/33", -ERANGE, 0, 0,
	  "prefix length 33 out of range 1..32 in '10.0.0.1/33'" },
	{ P_IPLEN, "default", -EINVAL, 0, 0,
	  "invalid address/length 'default': expected a.b.c.d/LEN" },
	{ P_IPLEN, "10.0.0.1", -EINVAL, 0, 0,
	  "invalid address/length '10.0.0.1': expected a.b.c.d/LEN" },
};

static void
test_parse_addresses(void **state)
{
	struct lb_cmd_out o;

	(void)state;
	lb_cmd_out_init(&o);
	for (size_t i = 0; i < NELEM(addr_cases); i++) {
		const struct addr_case *c = &addr_cases[i];
		uint32_t ip = 0xdeadbeef;
		uint16_t port = 7;
		uint8_t len = 99;
		unsigned int n = 0;
		int rc = 0;

		lb_cmd_out_reset(&o);
		switch (c->t) {
		case P_IPV4:
			rc = lb_cmd_parse_ipv4(c->s, &ip, &o);
			break;
		case P_IPPORT:
			rc = lb_cmd_parse_ipv4_port(c->s, &ip, &port, &o);
			n = port;
			break;
		case P_PREFIX:
			rc = lb_cmd_parse_prefix(c->s, &ip, &len, &o);
			n = len;
			break;
		case P_IPLEN:
			rc = lb_cmd_parse_ipv4_len(c->s, &ip, &len, &o);
			n = len;
			break;
		}
		NOTE_IF(rc != c->rc || strcmp(o.errmsg, c->err) != 0,
			"case %zu [%s]: %d '%s'\n", i, c->s, rc, o.errmsg);
		assert_int_equal(rc, c->rc);
		assert_string_equal(o.errmsg, c->err);
		if (rc == 0) {
			assert_int_equal(ip, c->ip);
			assert_int_equal(n, c->n);
		} else {
			/* a refused value leaves the outputs alone */
			assert_int_equal(ip, 0xdeadbeef);
		}
	}
	lb_cmd_out_free(&o);
}

/* Either family: each parsed value formatted back, so the table also
 * holds the RFC 5952 spelling of what was read. */
enum p6type { Q_IP, Q_IPPORT, Q_PREFIX, Q_IPLEN };

struct ip_case {
	enum p6type t;
	const char *s;
	int rc;
	uint8_t af;
	const char *fmt; /* formatted back ("" on error) */
	const char *err;
};

static const struct ip_case ip_cases[] = {
	{ Q_IP, "10.0.0.1", 0, LB_CONF_AF_INET, "10.0.0.1", "" },
	{ Q_IP, "2001:db8::10", 0, LB_CONF_AF_INET6, "2001:db8::10", "" },
	{ Q_IP, "2001:0DB8:0000:0000:0000:0000:0000:0010", 0,
	  LB_CONF_AF_INET6, "2001:db8::10", "" },
	{ Q_IP, "2001:db8:0:0:1:0:0:1", 0, LB_CONF_AF_INET6,
	  "2001:db8::1:0:0:1", "" },
	{ Q_IP, "::", 0, LB_CONF_AF_INET6, "::", "" },
	{ Q_IP, "::ffff:10.0.0.1", 0, LB_CONF_AF_INET6, "::ffff:10.0.0.1",
	  "" },
	{ Q_IP, "1.2.3", -EINVAL, 0, "", "invalid IPv4 address '1.2.3'" },
	{ Q_IP, "2001:db8::g", -EINVAL, 0, "",
	  "invalid IPv6 address '2001:db8::g'" },
	{ Q_IP, "2001:db8:::1", -EINVAL, 0, "",
	  "invalid IPv6 address '2001:db8:::1'" },
	{ Q_IP, "fe80::1%eth0", -EINVAL, 0, "",
	  "invalid IPv6 address 'fe80::1%eth0'" },
	{ Q_IP, "[2001:db8::1]", -EINVAL, 0, "",
	  "invalid IPv6 address '[2001:db8::1]'" },
	{ Q_IP, "1:2:3:4:5:6:7:8:9", -EINVAL, 0, "",
	  "invalid IPv6 address '1:2:3:4:5:6:7:8:9'" },
	{ Q_IP, "2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff:1111", -EINVAL, 0, "",
	  "invalid IPv6 address '2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff:1111'" },

	{ Q_IPPORT, "10.0.0.1:80", 0, LB_CONF_AF_INET, "10.0.0.1:80", "" },
	{ Q_IPPORT, "[2001:db8::10]:443", 0, LB_CONF_AF_INET6,
	  "[2001:db8::10]:443", "" },
	{ Q_IPPORT, "[::1]:65535", 0, LB_CONF_AF_INET6, "[::1]:65535", "" },
	{ Q_IPPORT, "10.0.0.1:80:1", -EINVAL, 0, "",
	  "invalid address:port '10.0.0.1:80:1': expected a.b.c.d:PORT" },
	{ Q_IPPORT, "2001:db8::10:443", -EINVAL, 0, "",
	  "IPv6 address:port '2001:db8::10:443' needs brackets: "
	  "[IPV6]:PORT" },
	{ Q_IPPORT, "[2001:db8::10]", -EINVAL, 0, "",
	  "invalid address:port '[2001:db8::10]': expected [IPV6]:PORT" },
	{ Q_IPPORT, "[2001:db8::10]443", -EINVAL, 0, "",
	  "invalid address:port '[2001:db8::10]443': expected [IPV6]:PORT" },
	{ Q_IPPORT, "[2001:db8::10:443", -EINVAL, 0, "",
	  "invalid address:port '[2001:db8::10:443': expected [IPV6]:PORT" },
	{ Q_IPPORT, "[10.0.0.1]:80", -EINVAL, 0, "",
	  "invalid address:port '[10.0.0.1]:80': expected [IPV6]:PORT" },
	{ Q_IPPORT, "[]:80", -EINVAL, 0, "",
	  "invalid address:port '[]:80': expected [IPV6]:PORT" },
	{ Q_IPPORT, "[2001:db8::10]:", -EINVAL, 0, "",
	  "invalid port '' in '[2001:db8::10]:'" },
	{ Q_IPPORT, "[2001:db8::10]:0", -ERANGE, 0, "",
	  "port 0 out of range 1..65535 in '[2001:db8::10]:0'" },
	{ Q_IPPORT, "[2001:db8::10]:65536", -ERANGE, 0, "",
	  "port 65536 out of range 1..65535 in '[2001:db8::10]:65536'" },

	{ Q_PREFIX, "default", 0, LB_CONF_AF_INET, "default", "" },
	{ Q_PREFIX, "10.8.0.0/16", 0, LB_CONF_AF_INET, "10.8.0.0/16", "" },
	{ Q_PREFIX, "::/0", 0, LB_CONF_AF_INET6, "::/0", "" },
	{ Q_PREFIX, "2001:db8::/32", 0, LB_CONF_AF_INET6, "2001:db8::/32",
	  "" },
	{ Q_PREFIX, "2001:db8::1/128", 0, LB_CONF_AF_INET6,
	  "2001:db8::1/128", "" },
	{ Q_PREFIX, "2001:db8:8000::/33", 0, LB_CONF_AF_INET6,
	  "2001:db8:8000::/33", "" },
	{ Q_PREFIX, "2001:db8:4000::/33", -EINVAL, 0, "",
	  "prefix '2001:db8:4000::/33' has host bits set; the network is "
	  "2001:db8::/33" },
	{ Q_PREFIX, "::1/0", -EINVAL, 0, "",
	  "prefix '::1/0' has host bits set; the network is ::/0" },
	{ Q_PREFIX, "2001:db8::/129", -ERANGE, 0, "",
	  "prefix length 129 out of range 0..128 in '2001:db8::/129'" },
	{ Q_PREFIX, "2001:db8::/99999999999999999999999", -ERANGE, 0, "",
	  "prefix length 99999999999999999999999 out of range 0..128 in "
	  "'2001:db8::/99999999999999999999999'" },
	{ Q_PREFIX, "2001:db8::", -EINVAL, 0, "",
	  "invalid prefix '2001:db8::': expected IPV6/LEN" },
	{ Q_PREFIX, "2001:db8::/", -EINVAL, 0, "",
	  "invalid prefix '2001:db8::/': expected IPV6/LEN" },
	{ Q_PREFIX, "2001:db8::/x", -EINVAL, 0, "",
	  "invalid prefix '2001:db8::/x': expected IPV6/LEN" },
	{ Q_PREFIX, "10.0.0.0", -EINVAL, 0, "",
	  "invalid prefix '10.0.0.0': expected a.b.c.d/LEN or default" },

	{ Q_IPLEN, "10.0.0.1/24", 0, LB_CONF_AF_INET, "10.0.0.1/24", "" },
	{ Q_IPLEN, "2001:db8::1/64", 0, LB_CONF_AF_INET6, "2001:db8::1/64",
	  "" },
	{ Q_IPLEN, "2001:db8::1/128", 0, LB_CONF_AF_INET6,
	  "2001:db8::1/128", "" },
	{ Q_IPLEN, "2001:db8::1/0", -ERANGE, 0, "",
	  "prefix length 0 out of range 1..128 in '2001:db8::1/0'" },
	{ Q_IPLEN, "2001:db8::1/129", -ERANGE, 0, "",
	  "prefix length 129 out of range 1..128 in '2001:db8::1/129'" },
	{ Q_IPLEN, "2001:db8::1", -EINVAL, 0, "",
	  "invalid address/length '2001:db8::1': expected IPV6/LEN" },
	{ Q_IPLEN, "10.0.0.1", -EINVAL, 0, "",
	  "invalid address/length '10.0.0.1': expected a.b.c.d/LEN" },
};

static void
test_parse_ip(void **state)
{
	struct lb_cmd_out o;

	(void)state;
	lb_cmd_out_init(&o);
	for (size_t i = 0; i < NELEM(ip_cases); i++) {
		const struct ip_case *c = &ip_cases[i];
		struct lb_conf_ip ip, before;
		char buf[LB_CMD_IP_ADDR_STRLEN] = "";
		uint16_t port = 7;
		uint8_t len = 99;
		int rc = 0;

		memset(&ip, 0xa5, sizeof(ip));
		before = ip;
		lb_cmd_out_reset(&o);
		switch (c->t) {
		case Q_IP:
			rc = lb_cmd_parse_ip(c->s, &ip, &o);
			if (rc == 0)
				lb_cmd_fmt_ip(&ip, buf);
			break;
		case Q_IPPORT:
			rc = lb_cmd_parse_ip_port(c->s, &ip, &port, &o);
			if (rc == 0)
				lb_cmd_fmt_ip_port(&ip, port, buf);
			break;
		case Q_PREFIX:
			rc = lb_cmd_parse_ip_prefix(c->s, &ip, &len, &o);
			if (rc == 0)
				lb_cmd_fmt_ip_prefix(&ip, len, buf);
			break;
		case Q_IPLEN:
			rc = lb_cmd_parse_ip_len(c->s, &ip, &len, &o);
			if (rc == 0)
				snprintf(buf, sizeof(buf), "%s/%u",
					 lb_cmd_fmt_ip(&ip, (char[64]){0}),
					 len);
			break;
		}
		NOTE_IF(rc != c->rc || strcmp(o.errmsg, c->err) != 0 ||
				strcmp(buf, c->fmt) != 0,
			"case %zu [%s]: %d '%s' '%s'\n", i, c->s, rc, o.errmsg,
			buf);
		assert_int_equal(rc, c->rc);
		assert_string_equal(o.errmsg, c->err);
		assert_string_equal(buf, c->fmt);
		if (rc == 0)
			assert_int_equal(ip.af, c->af);
		else
			assert_memory_equal(&ip, &before, sizeof(ip));
	}
	lb_cmd_out_free(&o);
}

struct num_case {
	int kind; /* 0 u64, 1 duration */
	const char *s;
	uint64_t min, max;
	int rc;
	uint64_t v;
	const char *err;
};

#define MS 1000000ull
#define SEC 1000000000ull

static const struct num_case num_cases[] = {
	{ 0, "0", 0, 10, 0, 0, "" },
	{ 0, "10", 0, 10, 0, 10, "" },
	{ 0, "007", 0, 10, 0, 7, "" },
	{ 0, "18446744073709551615", 0, UINT64_MAX, 0, UINT64_MAX, "" },
	{ 0, "", 0, 10, -EINVAL, 0,
	  "invalid weight '': expected an integer in 0..10" },
	{ 0, "-1", 0, 10, -EINVAL, 0,
	  "invalid weight '-1': expected an integer in 0..10" },
	{ 0, "+1", 0, 10, -EINVAL, 0,
	  "invalid weight '+1': expected an integer in 0..10" },
	{ 0, "1.5", 0, 10, -EINVAL, 0,
	  "invalid weight '1.5': expected an integer in 0..10" },
	{ 0, "0x10", 0, 100, -EINVAL, 0,
	  "invalid weight '0x10': expected an integer in 0..100" },
	{ 0, " 1", 0, 10, -EINVAL, 0,
	  "invalid weight ' 1': expected an integer in 0..10" },
	{ 0, "11", 0, 10, -ERANGE, 0, "weight 11 out of range 0..10" },
	{ 0, "0", 1, 10, -ERANGE, 0, "weight 0 out of range 1..10" },
	{ 0, "18446744073709551616", 0, UINT64_MAX, -ERANGE, 0,
	  "weight 18446744073709551616 out of range "
	  "0..18446744073709551615" },
	{ 0, "99999999999999999999x", 0, 10, -EINVAL, 0,
	  "invalid weight '99999999999999999999x': expected an integer in "
	  "0..10" },

	{ 1, "0", 0, 3600 * SEC, 0, 0, "" },
	{ 1, "0s", 0, 3600 * SEC, 0, 0, "" },
	{ 1, "7ns", 0, 3600 * SEC, 0, 7, "" },
	{ 1, "250us", 0, 3600 * SEC, 0, 250000, "" },
	{ 1, "500ms", 0, 3600 * SEC, 0, 500 * MS, "" },
	{ 1, "2s", 0, 3600 * SEC, 0, 2 * SEC, "" },
	{ 1, "1m", 0, 3600 * SEC, 0, 60 * SEC, "" },
	{ 1, "1h", 0, 3600 * SEC, 0, 3600 * SEC, "" },
	{ 1, "90m", 0, 24 * 3600 * SEC, 0, 5400 * SEC, "" },
	{ 1, "500", 0, 3600 * SEC, -EINVAL, 0,
	  "invalid weight '500': expected an integer and a unit (ns, us, ms, "
	  "s, m, h), e.g. 500ms" },
	{ 1, "1.5s", 0, 3600 * SEC, -EINVAL, 0,
	  "invalid weight '1.5s': expected an integer and a unit (ns, us, ms, "
	  "s, m, h), e.g. 500ms" },
	{ 1, "s", 0, 3600 * SEC, -EINVAL, 0,
	  "invalid weight 's': expected an integer and a unit (ns, us, ms, "
	  "s, m, h), e.g. 500ms" },
	{ 1, "-1s", 0, 3600 * SEC, -EINVAL, 0,
	  "invalid weight '-1s': expected an integer and a unit (ns, us, ms, "
	  "s, m, h), e.g. 500ms" },
	{ 1, "1S", 0, 3600 * SEC, -EINVAL, 0,
	  "invalid weight '1S': expected an integer and a unit (ns, us, ms, "
	  "s, m, h), e.g. 500ms" },
	{ 1, "1d", 0, 3600 * SEC, -EINVAL, 0,
	  "invalid weight '1d': expected an integer and a unit (ns, us, ms, "
	  "s, m, h), e.g. 500ms" },
	{ 1, "00", 0, 3600 * SEC, -EINVAL, 0,
	  "invalid weight '00': expected an integer and a unit (ns, us, ms, "
	  "s, m, h), e.g. 500ms" },
	{ 1, "2h", 0, 3600 * SEC, -ERANGE, 0,
	  "weight 2h out of range 0s..1h" },
	{ 1, "0ms", MS, 3600 * SEC, -ERANGE, 0,
	  "weight 0ms out of range 1ms..1h" },
	{ 1, "999us", MS, 3600 * SEC, -ERANGE, 0,
	  "weight 999us out of range 1ms..1h" },
	{ 1, "99999999999999h", 0, UINT64_MAX, -ERANGE, 0,
	  "weight 99999999999999h out of range 0s..18446744073709551615ns" },
};

static void
test_parse_numbers(void **state)
{
	struct lb_cmd_out o;

	(void)state;
	lb_cmd_out_init(&o);
	for (size_t i = 0; i < NELEM(num_cases); i++) {
		const struct num_case *c = &num_cases[i];
		uint64_t v = 12345;
		int rc;

		lb_cmd_out_reset(&o);
		if (c->kind == 0)
			rc = lb_cmd_parse_u64(c->s, "weight", c->min, c->max,
					      &v, &o);
		else
			rc = lb_cmd_parse_duration(c->s, "weight", c->min,
						   c->max, &v, &o);
		NOTE_IF(rc != c->rc || strcmp(o.errmsg, c->err) != 0,
			"case %zu [%s]: %d '%s'\n", i, c->s, rc, o.errmsg);
		assert_int_equal(rc, c->rc);
		assert_string_equal(o.errmsg, c->err);
		assert_int_equal(v, rc == 0 ? c->v : 12345);
	}
	lb_cmd_out_free(&o);
}

struct word_case {
	int kind; /* 0 bool, 1 proto, 2 name (max 8) */
	const char *s;
	int rc;
	unsigned int v;
	const char *err;
};

static const struct word_case word_cases[] = {
	{ 0, "on", 0, 1, "" },
	{ 0, "off", 0, 0, "" },
	{ 0, "yes", 0, 1, "" },
	{ 0, "no", 0, 0, "" },
	{ 0, "true", 0, 1, "" },
	{ 0, "false", 0, 0, "" },
	{ 0, "1", 0, 1, "" },
	{ 0, "0", 0, 0, "" },
	{ 0, "On", -EINVAL, 0, "invalid http 'On': expected on or off" },
	{ 0, "", -EINVAL, 0, "invalid http '': expected on or off" },
	{ 0, "2", -EINVAL, 0, "invalid http '2': expected on or off" },
	{ 0, "enable", -EINVAL, 0,
	  "invalid http 'enable': expected on or off" },
	{ 1, "tcp", 0, 6, "" },
	{ 1, "udp", 0, 17, "" },
	{ 1, "TCP", -EINVAL, 0, "invalid protocol 'TCP': expected tcp or udp" },
	{ 1, "icmp", -EINVAL, 0,
	  "invalid protocol 'icmp': expected tcp or udp" },
	{ 1, "", -EINVAL, 0, "invalid protocol '': expected tcp or udp" },
	{ 2, "adaptive", 0, 0, "" },
	{ 2, "wrr-2", 0, 0, "" },
	{ 2, "a.b_c", 0, 0, "" },
	{ 2, "9x", 0, 0, "" },
	{ 2, "", -EINVAL, 0,
	  "invalid http '': expected lowercase letters, digits, '-', '_' or "
	  "'.'" },
	{ 2, "Maglev", -EINVAL, 0,
	  "invalid http 'Maglev': expected lowercase letters, digits, '-', "
	  "'_' or '.'" },
	{ 2, "-x", -EINVAL, 0,
	  "invalid http '-x': expected lowercase letters, digits, '-', '_' "
	  "or '.'" },
	{ 2, "a b", -EINVAL, 0,
	  "invalid http 'a b': expected lowercase letters, digits, '-', '_' "
	  "or '.'" },
	{ 2, "a/b", -EINVAL, 0,
	  "invalid http 'a/b': expected lowercase letters, digits, '-', '_' "
	  "or '.'" },
	{ 2, "abcdefghi", -ERANGE, 0,
	  "http 'abcdefghi' too long (more than 8 bytes)" },
};

static void
test_parse_words(void **state)
{
	struct lb_cmd_out o;

	(void)state;
	lb_cmd_out_init(&o);
	for (size_t i = 0; i < NELEM(word_cases); i++) {
		const struct word_case *c = &word_cases[i];
		unsigned int v = 77;
		uint8_t p = 77;
		bool b = true;
		int rc;

		lb_cmd_out_reset(&o);
		if (c->kind == 0) {
			b = !c->v;
			rc = lb_cmd_parse_bool(c->s, "http", &b, &o);
			v = rc == 0 ? b : 77;
		} else if (c->kind == 1) {
			rc = lb_cmd_parse_proto(c->s, &p, &o);
			v = p;
		} else {
			rc = lb_cmd_parse_name(c->s, "http", 8, &o);
			v = 0;
		}
		NOTE_IF(rc != c->rc || strcmp(o.errmsg, c->err) != 0,
			"case %zu [%s]: %d '%s'\n", i, c->s, rc, o.errmsg);
		assert_int_equal(rc, c->rc);
		assert_string_equal(o.errmsg, c->err);
		if (rc == 0)
			assert_int_equal(v, c->v);
	}
	assert_int_equal(lb_cmd_parse_bool(NULL, "x", NULL, NULL), -EINVAL);
	assert_int_equal(lb_cmd_parse_proto(NULL, NULL, NULL), -EINVAL);
	assert_int_equal(lb_cmd_parse_u64("1", "x", 5, 1, &(uint64_t){ 0 },
					  NULL),
			 -EINVAL);
	lb_cmd_out_free(&o);
}

/* ---- keyword options ---- */

static const struct lb_cmd_opt test_opts[] = {
	{ "weight", LB_CMD_OPT_U64, 1, 100 },
	{ "sched", LB_CMD_OPT_NAME, 0, 16 },
	{ "http", LB_CMD_OPT_FLAG, 0, 0 },
	{ "gap", LB_CMD_OPT_DURATION, 0, 10 * SEC },
	{ "log", LB_CMD_OPT_BOOL, 0, 0 },
	{ "via", LB_CMD_OPT_IPV4, 0, 0 },
	{ "to", LB_CMD_OPT_IPV4_PORT, 0, 0 },
};

struct opt_case {
	const char *line;
	int rc;
	const char *err;
	/* expected values, UINT64_MAX for not set */
	uint64_t weight, http, gap, log, via;
	const char *sched;
	unsigned int to_port;
};

#define NS UINT64_MAX
#define OPT_ERR(l, r, e) { .line = l, .rc = r, .err = e }

static const struct opt_case opt_cases[] = {
	{ "", 0, "", NS, NS, NS, NS, NS, NULL, 0 },
	{ "weight 3 sched maglev", 0, "", 3, NS, NS, NS, NS, "maglev", 0 },
	{ "sched maglev weight 3", 0, "", 3, NS, NS, NS, NS, "maglev", 0 },
	{ "http gap 250ms log off via 10.0.0.1 to 10.0.0.2:99", 0, "", NS, 1,
	  250 * MS, 0, 0x0a000001, NULL, 99 },
	{ "log on", 0, "", NS, NS, NS, 1, NS, NULL, 0 },
	OPT_ERR("weight", -EINVAL, "option 'weight' needs a value"),
	OPT_ERR("weight 3 weight 4", -EINVAL, "option 'weight' given twice"),
	OPT_ERR("http http", -EINVAL, "option 'http' given twice"),
	OPT_ERR("prio 3", -EINVAL,
	  "unknown option 'prio'; expected weight, sched, http, gap, log, via "
	  "or to"),
	OPT_ERR("weight 0", -ERANGE, "weight 0 out of range 1..100"),
	OPT_ERR("weight x", -EINVAL,
	  "invalid weight 'x': expected an integer in 1..100"),
	OPT_ERR("gap 11s", -ERANGE, "gap 11s out of range 0s..10s"),
	OPT_ERR("log maybe", -EINVAL, "invalid log 'maybe': expected on or off"),
	OPT_ERR("sched Bad", -EINVAL,
	  "invalid sched 'Bad': expected lowercase letters, digits, '-', '_' "
	  "or '.'"),
	OPT_ERR("via 10.0.0", -EINVAL, "invalid IPv4 address '10.0.0'"),
	OPT_ERR("to 10.0.0.2", -EINVAL,
	  "invalid address:port '10.0.0.2': expected a.b.c.d:PORT"),
	OPT_ERR("http 3", -EINVAL,
	  "unknown option '3'; expected weight, sched, http, gap, log, via or "
	  "to"),
};

static void
check_opt(const struct lb_cmd_optval *v, uint64_t want)
{
	if (want == NS) {
		assert_false(v->set);
	} else {
		assert_true(v->set);
		assert_int_equal(v->u, want);
	}
}

static void
test_parse_opts(void **state)
{
	struct lb_cmd_optval v[NELEM(test_opts)];
	struct lb_cmd_line tl;
	struct lb_cmd_out o;

	(void)state;
	lb_cmd_out_init(&o);
	for (size_t i = 0; i < NELEM(opt_cases); i++) {
		const struct opt_case *c = &opt_cases[i];
		int rc;

		lb_cmd_out_reset(&o);
		assert_int_equal(lb_cmd_tokenize(c->line, &tl, NULL), 0);
		rc = lb_cmd_parse_opts((int)tl.argc, tl.argv, test_opts,
				       NELEM(test_opts), v, &o);
		NOTE_IF(rc != c->rc || strcmp(o.errmsg, c->err) != 0,
			"case %zu [%s]: %d '%s'\n", i, c->line, rc, o.errmsg);
		assert_int_equal(rc, c->rc);
		assert_string_equal(o.errmsg, c->err);
		if (rc != 0)
			continue;
		check_opt(&v[0], c->weight);
		check_opt(&v[2], c->http);
		check_opt(&v[3], c->gap);
		check_opt(&v[4], c->log);
		check_opt(&v[5], c->via);
		if (c->sched == NULL) {
			assert_false(v[1].set);
		} else {
			assert_true(v[1].set);
			assert_string_equal(v[1].str, c->sched);
		}
		assert_int_equal(v[6].set, c->to_port != 0);
		if (c->to_port != 0)
			assert_int_equal(v[6].port, c->to_port);
	}
	/* no options accepted: any word is unexpected */
	lb_cmd_out_reset(&o);
	assert_int_equal(lb_cmd_tokenize("extra", &tl, NULL), 0);
	assert_int_equal(lb_cmd_parse_opts(1, tl.argv, NULL, 0, NULL, &o),
			 -EINVAL);
	assert_string_equal(o.errmsg, "unexpected argument 'extra'");
	lb_cmd_out_free(&o);
}

/* ---- formatting ---- */

static void
test_format(void **state)
{
	static const struct {
		uint64_t ns;
		const char *s;
	} durs[] = {
		{ 0, "0s" },		{ 1, "1ns" },
		{ 1500, "1500ns" },	{ 250000, "250us" },
		{ 1500 * MS, "1500ms" }, { 2 * SEC, "2s" },
		{ 90 * SEC, "90s" },	{ 60 * SEC, "1m" },
		{ 3600 * SEC, "1h" },	{ 86400 * SEC, "24h" },
	};
	char b[LB_CMD_DURATION_STRLEN], a[LB_CMD_ADDR_STRLEN];
	uint32_t ip;
	uint16_t port;
	uint64_t v;
	uint8_t len;

	(void)state;
	for (size_t i = 0; i < NELEM(durs); i++) {
		assert_string_equal(lb_cmd_fmt_duration(durs[i].ns, b),
				    durs[i].s);
		assert_int_equal(lb_cmd_parse_duration(b, "d", 0, UINT64_MAX,
						       &v, NULL),
				 0);
		assert_int_equal(v, durs[i].ns);
	}
	assert_string_equal(lb_cmd_fmt_duration(UINT64_MAX, b),
			    "18446744073709551615ns");
	assert_string_equal(lb_cmd_fmt_ipv4(0xffffffff, a), "255.255.255.255");
	assert_string_equal(lb_cmd_fmt_ipv4_port(0xffffffff, 65535, a),
			    "255.255.255.255:65535");
	assert_int_equal(lb_cmd_parse_ipv4_port(a, &ip, &port, NULL), 0);
	assert_int_equal(ip, 0xffffffff);
	assert_int_equal(port, 65535);
	assert_string_equal(lb_cmd_fmt_prefix(0, 0, a), "default");
	assert_string_equal(lb_cmd_fmt_prefix(0xac100000, 12, a),
			    "172.16.0.0/12");
	assert_int_equal(lb_cmd_parse_prefix(a, &ip, &len, NULL), 0);
	assert_int_equal(ip, 0xac100000);
	assert_int_equal(len, 12);
	assert_string_equal(lb_cmd_proto_name(6), "tcp");
	assert_string_equal(lb_cmd_proto_name(17), "udp");
	assert_null(lb_cmd_proto_name(1));
}

/* ---- output channel ---- */

static void
test_out(void **state)
{
	struct lb_cmd_out o;
	char big[1000];

	(void)state;
	lb_cmd_out_init(&o);
	assert_string_equal(lb_cmd_out_text(&o), "");
	assert_string_equal(lb_cmd_out_errmsg(&o), "");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	for (int i = 0; i < 20; i++)
		assert_int_equal(lb_cmd_printf(&o, "%s\n", big), 0);
	assert_int_equal(o.len, 20 * sizeof(big));
	assert_int_equal(strlen(lb_cmd_out_text(&o)), o.len);
	assert_false(o.truncated);

	/* first error wins; the return value is the code given */
	assert_int_equal(lb_cmd_error(&o, -ENOENT, "no %s", "thing"), -ENOENT);
	assert_int_equal(lb_cmd_error(&o, -EEXIST, "later"), -EEXIST);
	assert_int_equal(o.err, -ENOENT);
	assert_string_equal(o.errmsg, "no thing");

	/* reset keeps the buffer, forgets text and error */
	lb_cmd_out_reset(&o);
	assert_string_equal(lb_cmd_out_text(&o), "");
	assert_int_equal(o.err, 0);
	assert_true(o.cap > 0);

	/* one line, whatever the message holds; non-negative codes */
	assert_int_equal(lb_cmd_error(&o, 5, "a\nb\tc"), -EINVAL);
	assert_string_equal(o.errmsg, "a b c");
	lb_cmd_out_reset(&o);
	assert_int_equal(lb_cmd_error(&o, -EINVAL, "%s", big), -EINVAL);
	assert_int_equal(strlen(o.errmsg), LB_CMD_ERR_MAX - 1);
	assert_int_equal(lb_cmd_error(NULL, -ERANGE, "x"), -ERANGE);
	assert_int_equal(lb_cmd_printf(NULL, "x"), -EINVAL);

	/* usage without a running command */
	lb_cmd_out_reset(&o);
	assert_int_equal(lb_cmd_usage(&o), -EINVAL);
	assert_string_equal(o.errmsg, "see 'help'");
	lb_cmd_out_free(&o);
	lb_cmd_out_free(NULL);
}

/* ---- registry and dispatch ---- */

struct rec {
	const char *who;
	int argc;
	char args[128];
};

static struct rec last;

static void
record(const char *who, int argc, char **argv)
{
	size_t n = 0;

	last.who = who;
	last.argc = argc;
	last.args[0] = '\0';
	for (int i = 0; i < argc; i++)
		n += (size_t)snprintf(last.args + n, sizeof(last.args) - n,
				      "%s[%s]", i ? " " : "", argv[i]);
	assert_null(argv[argc]);
}

static int
h_x(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	(void)out;
	assert_ptr_equal(ctx, &last);
	record("x", argc, argv);
	return 0;
}

static int
h_xy(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	(void)ctx;
	record("x y", argc, argv);
	return lb_cmd_want_args(out, argc, argv, 1, 2);
}

static int
h_usage(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	(void)ctx;
	record("grp a", argc, argv);
	if (argc != 1)
		return lb_cmd_usage(out);
	return lb_cmd_printf(out, "got %s\n", argv[0]);
}

static int
h_silent_fail(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	(void)ctx;
	(void)out;
	record("grp b", argc, argv);
	return -ENOENT;
}

static const struct lb_cmd_def test_cmds[] = {
	{ "x", "[ARG...]", "Run x", NULL, h_x },
	{ "x y", "A [B]", "Run x y", "Long help of x y.\n\n- item one",
	  h_xy },
	{ "grp a", "ONE", "Do a", "Paragraph about a.", h_usage },
	{ "grp b", "", "Do b", NULL, h_silent_fail },
};

static struct lb_cmd_reg *
test_reg(void)
{
	struct lb_cmd_reg *r = lb_cmd_reg_create();

	assert_non_null(r);
	assert_int_equal(lb_cmd_register_many(r, test_cmds, NELEM(test_cmds),
					      &last),
			 0);
	return r;
}

struct exec_case {
	const char *line;
	int rc;
	const char *who; /* handler called, NULL for none */
	const char *args;
	const char *err;
	const char *text;
};

static const struct exec_case exec_cases[] = {
	{ "", 0, NULL, "", "", "" },
	{ "  # nothing", 0, NULL, "", "", "" },
	{ "x", 0, "x", "", "", "" },
	{ "x z w", 0, "x", "[z] [w]", "", "" },
	{ "x y 1", 0, "x y", "[1]", "", "" },
	{ "x y \"a b\" c", 0, "x y", "[a b] [c]", "", "" },
	{ "x y", -EINVAL, "x y", "", "missing argument; usage: x y A [B]",
	  "" },
	{ "x y 1 2 3", -EINVAL, "x y", "[1] [2] [3]",
	  "unexpected argument '3'; usage: x y A [B]", "" },
	{ "x yy", 0, "x", "[yy]", "", "" },
	{ "grp a one", 0, "grp a", "[one]", "", "got one\n" },
	{ "grp a", -EINVAL, "grp a", "", "usage: grp a ONE", "" },
	{ "grp b", -ENOENT, "grp b", "", "grp b: No such file or directory",
	  "" },
	{ "grp", -EINVAL, NULL, "", "incomplete command 'grp'; try 'help grp'",
	  "" },
	{ "grp c d", -EINVAL, NULL, "",
	  "unknown command 'grp c'; try 'help grp'", "" },
	{ "bogus a b", -EINVAL, NULL, "",
	  "unknown command 'bogus'; try 'help'", "" },
	{ "X", -EINVAL, NULL, "", "unknown command 'X'; try 'help'", "" },
	{ "x \"", -EINVAL, NULL, "", "unterminated quote starting at column 3",
	  "" },
};

static void
test_exec_table(void **state)
{
	struct lb_cmd_reg *r = test_reg();
	struct lb_cmd_out o;

	(void)state;
	lb_cmd_out_init(&o);
	for (size_t i = 0; i < NELEM(exec_cases); i++) {
		const struct exec_case *c = &exec_cases[i];
		int rc;

		memset(&last, 0, sizeof(last));
		lb_cmd_out_reset(&o);
		rc = lb_cmd_exec_line(r, c->line, &o);
		NOTE_IF(rc != c->rc || strcmp(o.errmsg, c->err) != 0,
			"case %zu [%s]: %d '%s'\n", i, c->line, rc, o.errmsg);
		assert_int_equal(rc, c->rc);
		assert_string_equal(o.errmsg, c->err);
		assert_string_equal(lb_cmd_out_text(&o), c->text);
		if (c->who == NULL) {
			assert_null(last.who);
		} else {
			assert_non_null(last.who);
			assert_string_equal(last.who, c->who);
			assert_string_equal(last.args, c->args);
		}
		assert_null(o.cmd);
	}
	lb_cmd_out_free(&o);
	lb_cmd_reg_free(r);
}

static void
test_lookup(void **state)
{
	struct lb_cmd_reg *r = test_reg();
	char *argv[] = { "x", "y", "z", NULL };
	const struct lb_cmd_def *d;
	unsigned int n = 0;

	(void)state;
	d = lb_cmd_lookup(r, 3, argv, &n);
	assert_non_null(d);
	assert_string_equal(d->path, "x y");
	assert_int_equal(n, 2);
	d = lb_cmd_lookup(r, 1, argv, &n);
	assert_string_equal(d->path, "x");
	assert_int_equal(n, 1);
	assert_null(lb_cmd_lookup(r, 1, argv + 1, &n));
	assert_null(lb_cmd_lookup(r, 0, argv, &n));
	assert_int_equal(lb_cmd_count(r), 1 + NELEM(test_cmds));
	assert_string_equal(lb_cmd_at(r, 0)->path, "help");
	assert_string_equal(lb_cmd_at(r, 4)->path, "grp b");
	assert_null(lb_cmd_at(r, 5));
	lb_cmd_reg_free(r);
}

static int
h_nop(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	(void)ctx;
	(void)argc;
	(void)argv;
	(void)out;
	return 0;
}

static void
test_register_errors(void **state)
{
	static const char *const bad_paths[] = {
		"", " a", "a ", "a  b", "Service add", "a_b", "a b c d e",
		"1abc", "a\tb", "-a",
	};
	struct lb_cmd_reg *r = lb_cmd_reg_create();
	struct lb_cmd_def d = { "ok", "", "Fine", NULL, h_nop };
	const struct lb_cmd_def many[] = {
		{ "m one", "", "One", NULL, h_nop },
		{ "m two", "", "Two", NULL, h_nop },
		{ "ok", "", "Duplicate of an earlier one", NULL, h_nop },
	};

	(void)state;
	assert_non_null(r);
	for (size_t i = 0; i < NELEM(bad_paths); i++) {
		d.path = bad_paths[i];
		assert_int_equal(lb_cmd_register(r, &d, NULL), -EINVAL);
	}
	d.path = "a b c d";
	assert_int_equal(lb_cmd_register(r, &d, NULL), 0);
	d.path = "ok";
	assert_int_equal(lb_cmd_register(r, &d, NULL), 0);
	assert_int_equal(lb_cmd_register(r, &d, NULL), -EEXIST);
	d.path = "help";
	assert_int_equal(lb_cmd_register(r, &d, NULL), -EEXIST);
	d.path = "new";
	d.fn = NULL;
	assert_int_equal(lb_cmd_register(r, &d, NULL), -EINVAL);
	d.fn = h_nop;
	d.help = "two\nlines";
	assert_int_equal(lb_cmd_register(r, &d, NULL), -EINVAL);
	d.help = NULL;
	assert_int_equal(lb_cmd_register(r, &d, NULL), -EINVAL);
	d.help = "x";
	d.synopsis = NULL;
	assert_int_equal(lb_cmd_register(r, &d, NULL), -EINVAL);
	assert_int_equal(lb_cmd_register(NULL, &d, NULL), -EINVAL);
	assert_int_equal(lb_cmd_register(r, NULL, NULL), -EINVAL);

	/* all or nothing */
	assert_int_equal(lb_cmd_count(r), 3);
	assert_int_equal(lb_cmd_register_many(r, many, NELEM(many), NULL),
			 -EEXIST);
	assert_int_equal(lb_cmd_count(r), 3);
	assert_int_equal(lb_cmd_register_many(r, many, 2, NULL), 0);
	assert_int_equal(lb_cmd_count(r), 5);
	lb_cmd_reg_free(r);
	lb_cmd_reg_free(NULL);
}

static int
h_tag(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	(void)argc;
	(void)argv;
	return lb_cmd_printf(out, "%s", (const char *)ctx);
}

static int
h_fail(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	(void)argc;
	(void)argv;
	return lb_cmd_error(out, -EIO, "%s failed", (const char *)ctx);
}

static void
test_extend(void **state)
{
	struct lb_cmd_reg *r = lb_cmd_reg_create();
	const struct lb_cmd_def defs[] = {
		{ "x list", "", "List", "Lists.", h_tag },
		{ "x add", "", "Add", NULL, h_tag },
		{ "x fail", "", "Fail", NULL, h_fail },
	};
	struct lb_cmd_ext x = { "x list", "And more.", h_tag };
	struct lb_cmd_out o;
	char *argv[] = { "x", "list", NULL };

	(void)state;
	assert_non_null(r);
	lb_cmd_out_init(&o);
	assert_int_equal(lb_cmd_register_many(r, defs, 3, "own"), 0);
	assert_int_equal(lb_cmd_extend(r, &x, "+a"), 0);
	x.long_help = NULL;
	assert_int_equal(lb_cmd_extend(r, &x, "+b"), 0);
	/* The command keeps its place and help; its long help grows. */
	assert_int_equal(lb_cmd_count(r), 4);
	assert_string_equal(lb_cmd_at(r, 1)->path, "x list");
	assert_string_equal(lb_cmd_at(r, 1)->help, "List");
	assert_string_equal(lb_cmd_at(r, 1)->long_help, "Lists.\n\nAnd more.");
	assert_int_equal(lb_cmd_exec(r, 2, argv, &o), 0);
	assert_string_equal(lb_cmd_out_text(&o), "own+a+b");
	/* A long help of its own for a command that had none. */
	x.path = "x add";
	x.long_help = "Added.";
	assert_int_equal(lb_cmd_extend(r, &x, "+c"), 0);
	assert_string_equal(lb_cmd_at(r, 2)->long_help, "Added.");
	/* Extensions run only after the command succeeded. */
	x.path = "x fail";
	x.long_help = NULL;
	assert_int_equal(lb_cmd_extend(r, &x, "+d"), 0);
	lb_cmd_out_reset(&o);
	assert_int_equal(lb_cmd_exec_line(r, "x fail", &o), -EIO);
	assert_string_equal(lb_cmd_out_text(&o), "");
	assert_string_equal(lb_cmd_out_errmsg(&o), "own failed");
	/* Unknown path, malformed extension, full command. */
	x.path = "x frob";
	assert_int_equal(lb_cmd_extend(r, &x, NULL), -ENOENT);
	x.path = "x  list";
	assert_int_equal(lb_cmd_extend(r, &x, NULL), -EINVAL);
	x.path = "x list";
	x.fn = NULL;
	assert_int_equal(lb_cmd_extend(r, &x, NULL), -EINVAL);
	x.fn = h_tag;
	assert_int_equal(lb_cmd_extend(NULL, &x, NULL), -EINVAL);
	assert_int_equal(lb_cmd_extend(r, NULL, NULL), -EINVAL);
	assert_int_equal(lb_cmd_extend(r, &x, "+e"), 0);
	assert_int_equal(lb_cmd_extend(r, &x, "+f"), 0);
	assert_int_equal(lb_cmd_extend(r, &x, "+g"), -ENOSPC);
	lb_cmd_out_reset(&o);
	assert_int_equal(lb_cmd_exec(r, 2, argv, &o), 0);
	assert_string_equal(lb_cmd_out_text(&o), "own+a+b+e+f");
	lb_cmd_out_free(&o);
	lb_cmd_reg_free(r);
}

/* Commands of a group registered apart are listed together. */
static void
test_group_order(void **state)
{
	struct lb_cmd_reg *r = lb_cmd_reg_create();
	static const char *const paths[] = {
		"a add", "b add", "a del", "c", "b del", "a list",
	};
	static const char *const want[] = {
		"help", "a add", "a del", "a list", "b add", "b del", "c",
	};

	(void)state;
	assert_non_null(r);
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		struct lb_cmd_def d = { paths[i], "", "X", NULL, h_tag };

		assert_int_equal(lb_cmd_register(r, &d, NULL), 0);
	}
	assert_int_equal(lb_cmd_count(r), sizeof(want) / sizeof(want[0]));
	for (unsigned int i = 0; i < lb_cmd_count(r); i++)
		assert_string_equal(lb_cmd_at(r, i)->path, want[i]);
	lb_cmd_reg_free(r);
}

/* The tables registered before main(): cmd_extra.c's `extra greet`. */
static void
test_reg_build(void **state)
{
	struct lb_cmd_reg *r = lb_cmd_reg_create();
	struct lb_cmd_out o;
	const struct lb_cmd_def *d;
	const char *unbound = "x";
	char *argv[] = { "extra", "greet", NULL };
	unsigned int n = lb_cmd_table_count();
	bool found = false;

	(void)state;
	assert_non_null(r);
	lb_cmd_out_init(&o);
	for (unsigned int i = 0; i < n; i++)
		found |= strcmp(lb_cmd_table_at(i)->name, "extra") == 0;
	assert_true(found);
	assert_null(lb_cmd_table_at(n));
	/* Its context not bound: left out, and named. */
	assert_int_equal(lb_cmd_reg_build(r, NULL, 0, &unbound), 0);
	assert_string_equal(unbound, "extra");
	assert_int_equal(lb_cmd_count(r), 1);
	assert_int_equal(lb_cmd_reg_build(
				 r, &(struct lb_cmd_bind){ "extra", "hello" },
				 1, &unbound),
			 0);
	assert_null(unbound);
	d = lb_cmd_lookup(r, 2, argv, NULL);
	assert_non_null(d);
	assert_string_equal(d->long_help, "Says 'hello'.");
	assert_int_equal(lb_cmd_exec_line(r, "extra greet you", &o), 0);
	assert_string_equal(lb_cmd_out_text(&o), "hello you\n");
	lb_cmd_out_reset(&o);
	assert_int_equal(lb_cmd_exec_line(r, "help", &o), 0);
	assert_non_null(strstr(lb_cmd_out_text(&o),
			       "extra greet [NAME]\n    Greet NAME\n"));
	/* Built twice: every command is already there. */
	assert_int_equal(lb_cmd_reg_build(
				 r, &(struct lb_cmd_bind){ "extra", "hello" },
				 1, NULL),
			 -EEXIST);
	/* A table is added once, and whole. */
	assert_int_equal(lb_cmd_table_add(lb_cmd_table_at(0)), -EEXIST);
	assert_int_equal(lb_cmd_table_add(NULL), -EINVAL);
	assert_int_equal(lb_cmd_table_add(&(struct lb_cmd_table){
				 .name = "bad", .ctx = "x", .n = 1 }),
			 -EINVAL);
	assert_int_equal(lb_cmd_reg_build(NULL, NULL, 0, NULL), -EINVAL);
	lb_cmd_out_free(&o);
	lb_cmd_reg_free(r);
}

/* ---- help and markdown ---- */

static void
test_help(void **state)
{
	struct lb_cmd_reg *r = test_reg();
	struct lb_cmd_out o;
	const char *t;

	(void)state;
	lb_cmd_out_init(&o);
	assert_int_equal(lb_cmd_exec_line(r, "help", &o), 0);
	t = lb_cmd_out_text(&o);
	assert_non_null(strstr(t, "Commands:\n"));
	for (unsigned int i = 0; i < lb_cmd_count(r); i++) {
		const struct lb_cmd_def *d = lb_cmd_at(r, i);
		char line[256];

		snprintf(line, sizeof(line), "\n%s%s%s\n    %s\n", d->path,
			 d->synopsis[0] ? " " : "", d->synopsis, d->help);
		NOTE_IF(strstr(t, line) == NULL, "missing: %s", line);
		assert_non_null(strstr(t, line));
	}

	lb_cmd_out_reset(&o);
	assert_int_equal(lb_cmd_exec_line(r, "help x y", &o), 0);
	assert_string_equal(lb_cmd_out_text(&o),
			    "usage: x y A [B]\n\nRun x y\n\n"
			    "Long help of x y.\n\n- item one\n");

	lb_cmd_out_reset(&o);
	assert_int_equal(lb_cmd_exec_line(r, "help x", &o), 0);
	assert_string_equal(lb_cmd_out_text(&o), "usage: x [ARG...]\n\nRun x\n");

	lb_cmd_out_reset(&o);
	assert_int_equal(lb_cmd_exec_line(r, "help grp", &o), 0);
	assert_string_equal(lb_cmd_out_text(&o),
			    "grp a ONE\n    Do a\ngrp b\n    Do b\n");

	/* a whole pasted line shows its command */
	lb_cmd_out_reset(&o);
	assert_int_equal(lb_cmd_exec_line(r, "help grp a one", &o), 0);
	assert_string_equal(lb_cmd_out_text(&o),
			    "usage: grp a ONE\n\nDo a\n\nParagraph about a.\n");

	lb_cmd_out_reset(&o);
	assert_int_equal(lb_cmd_exec_line(r, "help nope", &o), -EINVAL);
	assert_string_equal(o.errmsg, "unknown command 'nope'; try 'help'");
	lb_cmd_out_reset(&o);
	assert_int_equal(lb_cmd_exec_line(r, "help grp z", &o), -EINVAL);
	assert_string_equal(o.errmsg,
			    "unknown command 'grp z'; try 'help grp'");
	lb_cmd_out_free(&o);
	lb_cmd_reg_free(r);
}

static void
test_markdown(void **state)
{
	struct lb_cmd_reg *r = test_reg();
	struct lb_cmd_out o;
	const char *t;

	(void)state;
	lb_cmd_out_init(&o);
	assert_int_equal(lb_cmd_markdown(r, "lbctl", &o), 0);
	t = lb_cmd_out_text(&o);
	assert_true(strncmp(t, "# lbctl\n", 8) == 0);
	assert_non_null(strstr(t, "## Syntax\n"));
	assert_non_null(strstr(t, "at most\n1024 bytes and 64 words"));
	for (unsigned int i = 0; i < lb_cmd_count(r); i++) {
		const struct lb_cmd_def *d = lb_cmd_at(r, i);
		char s[256];

		snprintf(s, sizeof(s), "\n### %s\n\n```\n%s%s%s\n```\n\n%s.\n",
			 d->path, d->path, d->synopsis[0] ? " " : "",
			 d->synopsis, d->help);
		assert_non_null(strstr(t, s));
		snprintf(s, sizeof(s), "| [`%s`](#", d->path);
		assert_non_null(strstr(t, s));
		if (d->long_help != NULL)
			assert_non_null(strstr(t, d->long_help));
	}
	assert_non_null(strstr(t, "(#x-y) | Run x y |"));
	/* one section per first word, in registration order */
	assert_non_null(strstr(t, "\n## help\n"));
	assert_non_null(strstr(t, "\n## x\n"));
	assert_non_null(strstr(t, "\n## grp\n"));
	assert_null(strstr(strstr(t, "\n## x\n") + 1, "\n## x\n"));
	assert_true(strstr(t, "\n## x\n") < strstr(t, "\n## grp\n"));
	lb_cmd_out_free(&o);
	lb_cmd_reg_free(r);
}

static void
test_csource(void **state)
{
	static const struct lb_cmd_def odd = {
		.path = "odd one",
		.synopsis = "[A|B]",
		.help = "Say \"hi\" to C:\\ (or \xc3\xa9t\xc3\xa9)?\?=",
		.long_help = "Line one\n\nLine\tthree\n",
		.fn = h_xy,
	};
	static const char want[] =
		"/* Generated from the command registry by lb_cmd_csource(); "
		"do not edit. */\n"
		"#include \"lb/cmd.h\"\n\n"
		"extern const struct lb_cmd_def tab[];\n"
		"extern const unsigned int tab_n;\n\n"
		"const struct lb_cmd_def tab[] = {\n"
		"\t{\n"
		"\t\t.path = \"odd one\",\n"
		"\t\t.synopsis = \"[A|B]\",\n"
		"\t\t.help = \"Say \\\"hi\\\" to C:\\\\ (or "
		"\\303\\251t\\303\\251)\\077\\077=\",\n"
		"\t\t.long_help = \"Line one\\n\"\n"
		"\t\t\t\"\\n\"\n"
		"\t\t\t\"Line\\011three\\n\"\n"
		"\t\t\t\"\",\n"
		"\t},\n"
		"\t{\n"
		"\t\t.path = \"plain\",\n"
		"\t\t.synopsis = \"\",\n"
		"\t\t.help = \"Nothing\",\n"
		"\t\t.long_help = NULL,\n"
		"\t},\n"
		"};\n\n"
		"const unsigned int tab_n = 2;\n";
	struct lb_cmd_reg *r = lb_cmd_reg_create();
	struct lb_cmd_out o;

	(void)state;
	assert_non_null(r);
	lb_cmd_out_init(&o);
	assert_int_equal(lb_cmd_register(r, &odd, NULL), 0);
	assert_int_equal(lb_cmd_register(r,
					 &(struct lb_cmd_def){
						 .path = "plain",
						 .synopsis = "",
						 .help = "Nothing",
						 .fn = h_xy,
					 },
					 NULL),
			 0);
	/* The registry's own help is not in the table. */
	assert_int_equal(lb_cmd_csource(r, "tab", &o), 0);
	NOTE_IF(strcmp(lb_cmd_out_text(&o), want) != 0, "got:\n%s\n",
		lb_cmd_out_text(&o));
	assert_string_equal(lb_cmd_out_text(&o), want);
	assert_int_equal(lb_cmd_csource(NULL, "tab", &o), -EINVAL);
	assert_int_equal(lb_cmd_csource(r, NULL, &o), -EINVAL);
	lb_cmd_out_free(&o);
	lb_cmd_reg_free(r);
}

/* ---- files ---- */

static int
apply_text(struct lb_cmd_reg *r, const char *text, struct lb_cmd_out *o,
	   unsigned int *nlines)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int rc;

	assert_non_null(f);
	rc = lb_cmd_apply_stream(r, f, "test.conf", o, nlines);
	fclose(f);
	return rc;
}

static unsigned int counted;

static int
h_count(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	(void)ctx;
	(void)argv;
	counted++;
	return argc == 0 ? 0 : lb_cmd_error(out, -EINVAL, "count takes "
					    "nothing");
}

struct file_case {
	const char *text;
	int rc;
	unsigned int ran, lines;
	const char *err;
};

static const struct file_case file_cases[] = {
	{ "", 0, 0, 0, "" },
	{ "count\ncount\n", 0, 2, 2, "" },
	{ "count\r\n# comment\r\n\r\ncount", 0, 2, 4, "" },
	{ "count\n\n# c\ncount\nbogus\ncount\n", -EINVAL, 2, 5,
	  "test.conf:5: unknown command 'bogus'; try 'help'" },
	{ "count\ncount 1\n", -EINVAL, 2, 2,
	  "test.conf:2: count takes nothing" },
	{ "count\n\"open\n", -EINVAL, 1, 2,
	  "test.conf:2: unterminated quote starting at column 1" },
	{ "count\ncount\rcount\n", -EINVAL, 1, 2,
	  "test.conf:2: control character 0x0d at column 6" },
};

static void
test_apply_stream(void **state)
{
	struct lb_cmd_reg *r = lb_cmd_reg_create();
	const struct lb_cmd_def d = { "count", "", "Count", NULL, h_count };
	struct lb_cmd_out o;
	char *big;
	unsigned int n;
	int rc;

	(void)state;
	assert_int_equal(lb_cmd_register(r, &d, NULL), 0);
	lb_cmd_out_init(&o);
	for (size_t i = 0; i < NELEM(file_cases); i++) {
		const struct file_case *c = &file_cases[i];

		counted = 0;
		lb_cmd_out_reset(&o);
		rc = apply_text(r, c->text, &o, &n);
		NOTE_IF(rc != c->rc || strcmp(o.errmsg, c->err) != 0,
			"case %zu: %d '%s'\n", i, rc, o.errmsg);
		assert_int_equal(rc, c->rc);
		assert_string_equal(o.errmsg, c->err);
		assert_int_equal(counted, c->ran);
		assert_int_equal(n, c->lines);
	}

	/* a NUL byte inside a line */
	{
		static const char nul[] = "count\ncou\0nt\ncount\n";
		FILE *f = fmemopen((void *)nul, sizeof(nul) - 1, "r");

		counted = 0;
		lb_cmd_out_reset(&o);
		assert_int_equal(lb_cmd_apply_stream(r, f, "n", &o, &n),
				 -EINVAL);
		fclose(f);
		assert_string_equal(o.errmsg, "n:2: NUL byte in line");
		assert_int_equal(counted, 1);
	}

	/* an over-long line */
	big = malloc(3000);
	assert_non_null(big);
	strcpy(big, "count\n");
	memset(big + 6, 'z', 2000);
	strcpy(big + 2006, "\ncount\n");
	counted = 0;
	lb_cmd_out_reset(&o);
	assert_int_equal(apply_text(r, big, &o, &n), -E2BIG);
	assert_string_equal(o.errmsg,
			    "test.conf:2: line too long (more than 1024 bytes)");
	assert_int_equal(counted, 1);
	free(big);
	lb_cmd_out_free(&o);
	lb_cmd_reg_free(r);
}

static void
test_apply_file(void **state)
{
	char path[] = "/tmp/cmd_test_XXXXXX";
	struct lb_cmd_reg *r = lb_cmd_reg_create();
	const struct lb_cmd_def d = { "count", "", "Count", NULL, h_count };
	struct lb_cmd_out o;
	char want[128];
	FILE *f;
	int fd;

	(void)state;
	assert_int_equal(lb_cmd_register(r, &d, NULL), 0);
	lb_cmd_out_init(&o);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs("count\n# two\ncount\ncount x\n", f);
	fclose(f);
	counted = 0;
	assert_int_equal(lb_cmd_apply_file(r, path, &o), -EINVAL);
	snprintf(want, sizeof(want), "%s:4: count takes nothing", path);
	assert_string_equal(o.errmsg, want);
	assert_int_equal(counted, 3);
	unlink(path);

	lb_cmd_out_reset(&o);
	assert_int_equal(lb_cmd_apply_file(r, path, &o), -ENOENT);
	snprintf(want, sizeof(want), "%s: No such file or directory", path);
	assert_string_equal(o.errmsg, want);
	assert_int_equal(lb_cmd_apply_file(r, NULL, &o), -EINVAL);
	lb_cmd_out_free(&o);
	lb_cmd_reg_free(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tokenize_table),
		cmocka_unit_test(test_tokenize_limits),
		cmocka_unit_test(test_quote_roundtrip),
		cmocka_unit_test(test_word_name),
		cmocka_unit_test(test_parse_addresses),
		cmocka_unit_test(test_parse_ip),
		cmocka_unit_test(test_parse_numbers),
		cmocka_unit_test(test_parse_words),
		cmocka_unit_test(test_parse_opts),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_out),
		cmocka_unit_test(test_exec_table),
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_register_errors),
		cmocka_unit_test(test_extend),
		cmocka_unit_test(test_group_order),
		cmocka_unit_test(test_reg_build),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_markdown),
		cmocka_unit_test(test_csource),
		cmocka_unit_test(test_apply_stream),
		cmocka_unit_test(test_apply_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
