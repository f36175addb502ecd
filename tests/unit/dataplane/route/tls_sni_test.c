/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the ClientHello SNI extractor (dataplane/route/tls_sni.c):
 * - real ClientHellos of openssl s_client and curl (the files of hellos/,
 *   written by capture_hellos.py), each fed whole, as every prefix, and
 *   re-recorded into records of 1 to 512 bytes;
 * - rows of hellos built here field by field (RFC 8446 4.1.2, RFC 6066
 *   3): extensions in any order among GREASE values (RFC 8701), an ECH
 *   ClientHelloOuter, every length that can lie, names that are not DNS
 *   names, records of other types, SSL 2.0 and plain text.
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

#include "tls_sni.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define BUF_MAX (LB_TLS_PREFIX_MAX * 6)

/* Builds bytes in order. */
struct out {
	uint8_t b[BUF_MAX];
	size_t n;
};

static void
put(struct out *o, const void *p, size_t n)
{
	assert_true(o->n + n <= sizeof(o->b));
	memcpy(o->b + o->n, p, n);
	o->n += n;
}

static void
put8(struct out *o, unsigned int v)
{
	uint8_t b = (uint8_t)v;

	put(o, &b, 1);
}

static void
put16(struct out *o, unsigned int v)
{
	put8(o, v >> 8);
	put8(o, v);
}

static void
put24(struct out *o, unsigned int v)
{
	put8(o, v >> 16);
	put16(o, v);
}

/* The handshake message @p msg (@p n bytes) in records of at most @p k. */
static void
records(struct out *o, const uint8_t *msg, size_t n, size_t k)
{
	for (size_t i = 0; i < n; i += k) {
		size_t m = n - i < k ? n - i : k;

		put8(o, 22);
		put16(o, 0x0301);
		put16(o, (unsigned int)m);
		put(o, msg + i, m);
	}
}

/*
 * Checks the verdict on @p p (@p n bytes) and on each of its prefixes:
 * every prefix of a hello that ends well is a need for more; a verdict
 * other than that, once given, stays.
 */
static void
check_prefixes(const uint8_t *p, size_t n, int want, const char *sni,
	       int ech)
{
	struct lb_tls_hello h;
	int first = -1;

	for (size_t i = 0; i <= n; i++) {
		int v;

		memset(&h, 0x5a, sizeof(h));
		v = lb_tls_sni(p, i, &h);
		if (v != LB_TLS_SNI_FOUND && v != LB_TLS_SNI_NONE)
			assert_int_equal(h.sni_len, 0x5a5a); /* untouched */
		if (i < n && (want == LB_TLS_SNI_FOUND ||
			      want == LB_TLS_SNI_NONE))
			assert_int_equal(v, LB_TLS_SNI_NEED_MORE);
		if (first < 0 && v != LB_TLS_SNI_NEED_MORE)
			first = v;
		if (first >= 0)
			assert_int_equal(v, first);
	}
	memset(&h, 0, sizeof(h));
	assert_int_equal(lb_tls_sni(p, n, &h), want);
	if (want == LB_TLS_SNI_FOUND) {
		assert_string_equal(h.sni, sni);
		assert_int_equal(h.sni_len, strlen(sni));
		assert_int_equal(h.ech, ech);
	}
	if (want == LB_TLS_SNI_NONE)
		assert_int_equal(h.sni_len, 0);
}

struct real_row {
	const char *file;
	int want;
	const char *sni;
};

static const struct real_row real_rows[] = {
	{"openssl_tls13", LB_TLS_SNI_FOUND, "api.example.com"},
	{"openssl_tls12", LB_TLS_SNI_FOUND, "www.example.org"},
	{"openssl_no_sni", LB_TLS_SNI_NONE, NULL},
	{"openssl_many", LB_TLS_SNI_FOUND, "many.example.com"},
	{"curl", LB_TLS_SNI_FOUND, "static.example.net"},
};

static size_t
read_hello(const char *name, uint8_t *buf, size_t cap)
{
	const char *src = getenv("LB_SRC_DIR");
	char path[4096];
	FILE *f;
	size_t n;

	assert_non_null(src);
	snprintf(path, sizeof(path),
		 "%s/tests/unit/dataplane/route/hellos/%s.bin", src, name);
	f = fopen(path, "rb");
	assert_non_null(f);
	n = fread(buf, 1, cap, f);
	fclose(f);
	return n;
}

static void
test_real(void **state)
{
	static const size_t sizes[] = {1, 2, 3, 7, 100, 512};
	static uint8_t raw[LB_TLS_PREFIX_MAX];
	static struct out re;

	(void)state;
	for (unsigned int i = 0; i < NELEM(real_rows); i++) {
		const struct real_row *r = &real_rows[i];
		size_t n = read_hello(r->file, raw, sizeof(raw)), mlen;
		struct lb_tls_hello h;

		/* One record holding one handshake message, as captured. */
		assert_true(n > 9 && raw[0] == 22);
		mlen = (size_t)raw[3] << 8 | raw[4];
		assert_int_equal(n, 5 + mlen);
		check_prefixes(raw, n, r->want, r->sni, 0);
		assert_int_equal(lb_tls_sni(raw, n, &h), r->want);
		assert_int_equal(h.used, n);
		for (unsigned int j = 0; j < NELEM(sizes); j++) {
			re.n = 0;
			records(&re, raw + 5, mlen, sizes[j]);
			check_prefixes(re.b, re.n, r->want, r->sni, 0);
		}
	}
}

/* An extension of a built hello. */
struct ext {
	uint16_t type;
	const char *data; /* its body, or NULL for the server_name below */
	uint16_t len;
};

/* A server_name body: list length, one host_name entry. */
static void
sni_body(struct out *o, const char *name)
{
	size_t n = strlen(name);

	put16(o, (unsigned int)(n + 3));
	put8(o, 0);
	put16(o, (unsigned int)n);
	put(o, name, n);
}

/* A ClientHello (its 4-byte header too) with extensions @p e. */
static void
build(struct out *o, const struct ext *e, unsigned int ne, const char *sni)
{
	struct out ext = {.n = 0};
	static const uint8_t random[32] = {1, 2, 3};

	for (unsigned int i = 0; i < ne; i++) {
		struct out body = {.n = 0};

		if (e[i].data == NULL)
			sni_body(&body, sni);
		else
			put(&body, e[i].data, e[i].len);
		put16(&ext, e[i].type);
		put16(&ext, (unsigned int)body.n);
		put(&ext, body.b, body.n);
	}
	put8(o, 1);
	put24(o, (unsigned int)(2 + 32 + 1 + 32 + 2 + 6 + 1 + 1 + 2 + ext.n));
	put16(o, 0x0303);
	put(o, random, sizeof(random));
	put8(o, 32); /* a session ID as TLS 1.3's middlebox mode sends */
	put(o, random, 32);
	put16(o, 6);
	put16(o, 0x1a1a); /* GREASE cipher suite */
	put16(o, 0x1301);
	put16(o, 0xc02f);
	put8(o, 1);
	put8(o, 0);
	put16(o, (unsigned int)ext.n);
	put(o, ext.b, ext.n);
}

#define SNI {0x0000, NULL, 0}
#define GREASE(t) {t, "", 0}
#define GREASE1(t) {t, "\0", 1}
#define VERSIONS {0x002b, "\x04\x2a\x2a\x03\x04", 5}
/* outer type, HPKE suite, config ID, enc "abc", payload "zz" */
#define ECH {0xfe0d, "\x00\x00\x01\x00\x01\x42\x00\x03" "abc\x00\x02zz", 15}

struct ext_row {
	const char *what;
	struct ext e[6];
	unsigned int ne;
	const char *name; /* the name put in */
	int want;
	const char *sni; /* the name found */
	int ech;
};

static const struct ext_row ext_rows[] = {
	{"SNI alone", {SNI}, 1, "a.example", LB_TLS_SNI_FOUND, "a.example", 0},
	{"SNI first among GREASE", {SNI, GREASE(0x0a0a), VERSIONS,
	 GREASE1(0xfafa)}, 4, "b.example", LB_TLS_SNI_FOUND, "b.example", 0},
	{"SNI last", {GREASE(0x2a2a), VERSIONS, GREASE1(0xdada), SNI}, 4,
	 "C.Example", LB_TLS_SNI_FOUND, "c.example", 0},
	{"SNI in the middle", {VERSIONS, SNI, GREASE1(0x4a4a)}, 3,
	 "d.example", LB_TLS_SNI_FOUND, "d.example", 0},
	{"ECH outer: the public name", {GREASE(0x3a3a), SNI, ECH, VERSIONS},
	 4, "public.example", LB_TLS_SNI_FOUND, "public.example", 1},
	{"ECH before SNI", {ECH, SNI}, 2, "pub.example", LB_TLS_SNI_FOUND,
	 "pub.example", 1},
	{"no server_name", {VERSIONS, GREASE(0x0a0a)}, 2, NULL,
	 LB_TLS_SNI_NONE, NULL, 0},
	{"ECH without a name", {ECH}, 1, NULL, LB_TLS_SNI_NONE, NULL, 0},
	{"two server_name extensions", {SNI, VERSIONS, SNI}, 3, "a.example",
	 LB_TLS_SNI_MALFORMED, NULL, 0},
	{"underscore and hyphen", {SNI}, 1, "_sip._tcp.my-host.example",
	 LB_TLS_SNI_FOUND, "_sip._tcp.my-host.example", 0},
	{"one label", {SNI}, 1, "localhost", LB_TLS_SNI_FOUND, "localhost", 0},
	{"trailing dot", {SNI}, 1, "a.example.", LB_TLS_SNI_MALFORMED, NULL, 0},
	{"address literal", {SNI}, 1, "192.0.2.1",
	 LB_TLS_SNI_MALFORMED, NULL, 0},
	{"empty label", {SNI}, 1, "a..example", LB_TLS_SNI_MALFORMED, NULL, 0},
	{"wildcard", {SNI}, 1, "*.example", LB_TLS_SNI_MALFORMED, NULL, 0},
	{"space", {SNI}, 1, "a example", LB_TLS_SNI_MALFORMED, NULL, 0},
	{"64-character label", {SNI}, 1,
	 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.x",
	 LB_TLS_SNI_MALFORMED, NULL, 0},
	{"63-character label", {SNI}, 1,
	 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.x",
	 LB_TLS_SNI_FOUND,
	 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.x",
	 0},
	/* Lists that lie or break RFC 6066 3. */
	{"empty list", {{0x0000, "\x00\x00", 2}}, 1, NULL,
	 LB_TLS_SNI_MALFORMED, NULL, 0},
	{"empty extension", {{0x0000, "", 0}}, 1, NULL,
	 LB_TLS_SNI_MALFORMED, NULL, 0},
	{"list longer than the extension",
	 {{0x0000, "\x00\x07\x00\x00\x03" "abc", 8}}, 1, NULL,
	 LB_TLS_SNI_MALFORMED, NULL, 0},
	{"list shorter than the extension",
	 {{0x0000, "\x00\x05\x00\x00\x02" "abc", 8}}, 1, NULL,
	 LB_TLS_SNI_MALFORMED, NULL, 0},
	{"name longer than the list",
	 {{0x0000, "\x00\x06\x00\x00\x04" "abc", 8}}, 1, NULL,
	 LB_TLS_SNI_MALFORMED, NULL, 0},
	{"empty name", {{0x0000, "\x00\x03\x00\x00\x00", 5}}, 1, NULL,
	 LB_TLS_SNI_MALFORMED, NULL, 0},
	{"two host_name entries",
	 {{0x0000, "\x00\x09\x00\x00\x02" "ab" "\x00\x00\x01" "c", 11}}, 1,
	 NULL, LB_TLS_SNI_MALFORMED, NULL, 0},
	{"another name type first",
	 {{0x0000, "\x00\x0c\x07\x00\x03xyz\x00\x00\x03" "abc", 14}}, 1,
	 NULL, LB_TLS_SNI_FOUND, "abc", 0},
	{"another name type alone", {{0x0000, "\x00\x06\x07\x00\x03xyz", 8}},
	 1, NULL, LB_TLS_SNI_NONE, NULL, 0},
};

static void
test_ext_rows(void **state)
{
	static struct out msg, rec;

	(void)state;
	for (unsigned int i = 0; i < NELEM(ext_rows); i++) {
		const struct ext_row *r = &ext_rows[i];

		print_message("%s\n", r->what);
		msg.n = 0;
		build(&msg, r->e, r->ne, r->name);
		for (size_t k = 1; k <= msg.n; k = k * 3 + 1) {
			rec.n = 0;
			records(&rec, msg.b, msg.n, k);
			check_prefixes(rec.b, rec.n, r->want, r->sni, r->ech);
		}
	}
}

/* The longest name: 253 characters; one more is refused. */
static void
test_name_len(void **state)
{
	static struct out msg, rec;
	const struct ext e = SNI;
	char name[256];

	(void)state;
	for (int i = 0; i < 253; i++)
		name[i] = i % 64 == 63 ? '.' : 'a' + i % 26;
	name[253] = '\0';
	build(&msg, &e, 1, name);
	records(&rec, msg.b, msg.n, 16384);
	check_prefixes(rec.b, rec.n, LB_TLS_SNI_FOUND, name, 0);
	name[253] = 'z';
	name[254] = '\0';
	msg.n = rec.n = 0;
	build(&msg, &e, 1, name);
	records(&rec, msg.b, msg.n, 16384);
	check_prefixes(rec.b, rec.n, LB_TLS_SNI_MALFORMED, NULL, 0);
}

/* A hello of the openssl_tls13 kind with one byte at @p off replaced. */
struct patch_row {
	const char *what;
	size_t off; /* in the message, header included */
	unsigned int len; /* 1 or 2 bytes, big-endian */
	unsigned int val;
	int want;
};

/* Offsets in build()'s message: header 0, version 4, random 6, session
 * ID length 38, suites length 71, compression length 79, extensions
 * length 81, first extension's type 83, its length 85. */
static const struct patch_row patch_rows[] = {
	{"handshake type ServerHello", 0, 1, 2, LB_TLS_SNI_MALFORMED},
	{"message length beyond 2^14", 1, 1, 1, LB_TLS_SNI_TOO_LONG},
	{"message length too short for a hello", 2, 2, 40,
	 LB_TLS_SNI_MALFORMED},
	{"version 2.0", 4, 1, 2, LB_TLS_SNI_MALFORMED},
	{"session ID of 33", 38, 1, 33, LB_TLS_SNI_MALFORMED},
	{"session ID past the message", 38, 1, 255, LB_TLS_SNI_MALFORMED},
	{"odd cipher suites", 71, 2, 5, LB_TLS_SNI_MALFORMED},
	{"no cipher suite", 71, 2, 0, LB_TLS_SNI_MALFORMED},
	{"cipher suites past the message", 71, 2, 0xfffe,
	 LB_TLS_SNI_MALFORMED},
	{"no compression method", 79, 1, 0, LB_TLS_SNI_MALFORMED},
	{"extensions past the message", 81, 2, 0x7fff, LB_TLS_SNI_MALFORMED},
	{"extensions short of the message", 81, 2, 10, LB_TLS_SNI_MALFORMED},
	{"extension past the extensions", 85, 2, 0x0100,
	 LB_TLS_SNI_MALFORMED},
};

static void
test_patch_rows(void **state)
{
	static struct out msg, rec;
	const struct ext e[2] = {VERSIONS, SNI};

	(void)state;
	msg.n = 0;
	build(&msg, e, 2, "a.example");
	/* The offsets above hold for this hello. */
	assert_int_equal(msg.b[38], 32);
	assert_int_equal(msg.b[72], 6);
	assert_int_equal(msg.b[79], 1);
	assert_int_equal(msg.b[84], 0x2b);
	for (unsigned int i = 0; i < NELEM(patch_rows); i++) {
		const struct patch_row *r = &patch_rows[i];
		static struct out m;
		size_t off = r->off;

		print_message("%s\n", r->what);
		m = msg;
		if (r->len == 2)
			m.b[off++] = (uint8_t)(r->val >> 8);
		m.b[off] = (uint8_t)r->val;
		for (size_t k = 1; k <= m.n; k *= 4) {
			rec.n = 0;
			records(&rec, m.b, m.n, k);
			check_prefixes(rec.b, rec.n, r->want, NULL, 0);
		}
	}
}

/* Records: what is and is not TLS, and records that break RFC 8446 5.1. */
static void
test_records(void **state)
{
	static struct out msg, rec;
	const struct ext e = SNI;
	struct lb_tls_hello h;
	/* An SSL 2.0-compatible CLIENT-HELLO (RFC 5246 E.2). */
	static const uint8_t v2[] = {0x80, 0x2e, 0x01, 0x03, 0x01, 0x00, 0x15,
				     0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x2f};
	size_t half;

	(void)state;
	check_prefixes(v2, sizeof(v2), LB_TLS_SNI_NOT_TLS, NULL, 0);
	check_prefixes((const uint8_t *)"GET / HTTP/1.1\r\n", 16,
		       LB_TLS_SNI_NOT_TLS, NULL, 0);
	check_prefixes((const uint8_t *)"\x16\x02\x00", 3, LB_TLS_SNI_NOT_TLS,
		       NULL, 0);
	assert_int_equal(lb_tls_sni(NULL, 0, &h), LB_TLS_SNI_NEED_MORE);
	assert_int_equal(lb_tls_sni((const uint8_t *)"\x16", 1, &h),
			 LB_TLS_SNI_NEED_MORE);

	build(&msg, &e, 1, "a.example");
	half = msg.n / 2;
	/* An alert record between two fragments of the hello. */
	rec.n = 0;
	records(&rec, msg.b, half, half);
	put(&rec, "\x15\x03\x03\x00\x02\x02\x28", 7);
	records(&rec, msg.b + half, msg.n - half, msg.n);
	check_prefixes(rec.b, rec.n, LB_TLS_SNI_MALFORMED, NULL, 0);
	/* An empty handshake record. */
	rec.n = 0;
	records(&rec, msg.b, half, half);
	put(&rec, "\x16\x03\x01\x00\x00", 5);
	records(&rec, msg.b + half, msg.n - half, msg.n);
	check_prefixes(rec.b, rec.n, LB_TLS_SNI_MALFORMED, NULL, 0);
	/* A record over 2^14. */
	rec.n = 0;
	put(&rec, "\x16\x03\x01\x40\x01", 5);
	put(&rec, msg.b, msg.n);
	check_prefixes(rec.b, rec.n, LB_TLS_SNI_MALFORMED, NULL, 0);
	/* A second record of version 2. */
	rec.n = 0;
	records(&rec, msg.b, half, half);
	put(&rec, "\x16\x02\x01", 3);
	put16(&rec, (unsigned int)(msg.n - half));
	put(&rec, msg.b + half, msg.n - half);
	check_prefixes(rec.b, rec.n, LB_TLS_SNI_MALFORMED, NULL, 0);

	/* What follows the hello is not read: a ChangeCipherSpec and
	 * early data, or the next handshake message in the same record. */
	rec.n = 0;
	records(&rec, msg.b, msg.n, msg.n);
	put(&rec, "\x14\x03\x03\x00\x01\x01\x17\x03\x03\x00\x01\xff", 12);
	for (size_t i = 5 + msg.n; i <= rec.n; i++)
		assert_int_equal(lb_tls_sni(rec.b, i, &h), LB_TLS_SNI_FOUND);
	assert_int_equal(h.used, 5 + msg.n);
	put(&msg, "\x0b\x00\x00\x00", 4);
	rec.n = 0;
	records(&rec, msg.b, msg.n, msg.n);
	assert_int_equal(lb_tls_sni(rec.b, rec.n, &h), LB_TLS_SNI_FOUND);
	assert_int_equal(h.used, rec.n - 4);
}

/* The longest hello is read; the header of a longer one is enough to
 * refuse it. */
static void
test_too_long(void **state)
{
	static struct out msg, rec;
	static char pad[LB_TLS_HELLO_MAX];
	struct ext e[2] = {SNI, {0x0015, pad, 0}};
	size_t base;

	(void)state;
	build(&msg, e, 2, "a.example");
	base = msg.n - 4;
	e[1].len = (uint16_t)(LB_TLS_HELLO_MAX - base);
	msg.n = 0;
	build(&msg, e, 2, "a.example");
	assert_int_equal(msg.n, 4 + LB_TLS_HELLO_MAX);
	records(&rec, msg.b, msg.n, 16384);
	assert_true(rec.n <= LB_TLS_PREFIX_MAX);
	check_prefixes(rec.b, rec.n, LB_TLS_SNI_FOUND, "a.example", 0);
	e[1].len++;
	msg.n = rec.n = 0;
	build(&msg, e, 2, "a.example");
	records(&rec, msg.b, msg.n, 16384);
	assert_int_equal(lb_tls_sni(rec.b, 9, NULL), LB_TLS_SNI_TOO_LONG);
	assert_int_equal(lb_tls_sni(rec.b, 8, NULL), LB_TLS_SNI_NEED_MORE);
}

static void
test_names(void **state)
{
	(void)state;
	assert_string_equal(lb_tls_sni_verdict_name(LB_TLS_SNI_NEED_MORE),
			    "need_more");
	assert_string_equal(lb_tls_sni_verdict_name(LB_TLS_SNI_TOO_LONG),
			    "too_long");
	assert_string_equal(lb_tls_sni_verdict_name(LB_TLS_SNI_VERDICTS), "?");
	assert_string_equal(lb_tls_sni_verdict_name(-1), "?");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real),
		cmocka_unit_test(test_ext_rows),
		cmocka_unit_test(test_name_len),
		cmocka_unit_test(test_patch_rows),
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_too_long),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
