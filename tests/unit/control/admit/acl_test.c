/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The source ACL's policy: `acl` arguments, --acl-auto, and the automatic
 * deny table.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <arpa/inet.h>

#include <cmocka.h>

#include "acl.h"

#define S 1000000000ull
#define MS 1000000ull

enum op { DENY, ALLOW, DEL };

struct row {
	const char *desc;
	enum op op;
	const char *args; /* space separated */
	int rc;
	uint32_t prefix;
	uint8_t len;
	uint64_t ttl_ns;
	bool lb_only;
	const char *err; /* part of the message */
	const char *v6;	 /* the IPv6 prefix expected, when rc is 0 */
};

static const struct row rows[] = {
	{"address", DENY, "10.1.2.3", 0, 0x0a010203, 32, 0, false, NULL, NULL},
	{"prefix", DENY, "10.1.0.0/16", 0, 0x0a010000, 16, 0, false, NULL,
	 NULL},
	{"expiry", DENY, "10.1.2.3 expires 90s", 0, 0x0a010203, 32, 90 * S,
	 false, NULL, NULL},
	{"lb-only and expiry in any order", DENY,
	 "10.0.0.0/8 lb-only expires 500ms", 0, 0x0a000000, 8, 500 * MS,
	 true, NULL, NULL},
	{"default", DENY, "default", 0, 0, 0, 0, false, NULL, NULL},
	{"allow with expiry", ALLOW, "192.168.1.0/24 expires 1m", 0,
	 0xc0a80100, 24, 60 * S, false, NULL, NULL},
	{"del", DEL, "10.1.2.3/32", 0, 0x0a010203, 32, 0, false, NULL, NULL},
	{"no prefix", DENY, "", -EINVAL, 0, 0, 0, false, "help", NULL},
	{"host bits", DENY, "10.1.2.3/16", -EINVAL, 0, 0, 0, false,
	 "host bits", NULL},
	{"bad address", DENY, "10.1.2.300", -EINVAL, 0, 0, 0, false,
	 "invalid IPv4", NULL},
	{"length", DENY, "10.0.0.0/33", -ERANGE, 0, 0, 0, false,
	 "out of range", NULL},
	{"IPv6 prefix", DENY, "2001:db8:7::/48 lb-only", 0, 0, 48, 0, true,
	 NULL, "2001:db8:7::"},
	{"IPv6 address is a /128", ALLOW, "2001:db8::1 expires 2m", 0, 0,
	 128, 120 * S, false, NULL, "2001:db8::1"},
	{"IPv6 default", DEL, "::/0", 0, 0, 0, 0, false, NULL, "::"},
	{"IPv6 /128", DENY, "2001:db8::9/128", 0, 0, 128, 0, false, NULL,
	 "2001:db8::9"},
	{"IPv6 host bits", DENY, "2001:db8::1/64", -EINVAL, 0, 0, 0, false,
	 "host bits set; the network is 2001:db8::/64", NULL},
	{"IPv6 length", DENY, "2001:db8::/129", -ERANGE, 0, 0, 0, false,
	 "out of range 0..128", NULL},
	{"IPv6 garbage", DENY, "2001:db8::zz/64", -EINVAL, 0, 0, 0, false,
	 "invalid prefix", NULL},
	{"IPv6 address garbage", DEL, "2001:::1", -EINVAL, 0, 0, 0, false,
	 "invalid IPv6 address", NULL},
	{"IPv6 without length", DENY, "2001:db8::/", -EINVAL, 0, 0, 0, false,
	 "invalid prefix", NULL},
	{"expiry without unit", DENY, "10.1.2.3 expires 90", -EINVAL, 0, 0,
	 0, false, "expires", NULL},
	{"expiry too short", DENY, "10.1.2.3 expires 10us", -ERANGE, 0, 0, 0,
	 false, "expires", NULL},
	{"expiry too long", DENY, "10.1.2.3 expires 9000h", -ERANGE, 0, 0, 0,
	 false, "expires", NULL},
	{"expiry twice", DENY, "10.1.2.3 expires 1s expires 2s", -EINVAL, 0,
	 0, 0, false, "twice", NULL},
	{"unknown option", DENY, "10.1.2.3 forever", -EINVAL, 0, 0, 0, false,
	 "unknown option", NULL},
	{"allow has no lb-only", ALLOW, "10.1.2.3 lb-only", -EINVAL, 0, 0, 0,
	 false, "unknown option", NULL},
	{"del takes no expiry", DEL, "10.1.2.3 expires 1s", -EINVAL, 0, 0, 0,
	 false, "unexpected argument", NULL},
	{"two prefixes", DENY, "10.1.2.3 10.1.2.4", -EINVAL, 0, 0, 0, false,
	 "unknown option", NULL},
};

static void
test_parse(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *w = &rows[i];
		char buf[128], *argv[8], *save = NULL, *t;
		struct lb_acl_req r;
		struct lb_cmd_out out;
		int argc = 0, rc;

		snprintf(buf, sizeof(buf), "%s", w->args);
		for (t = strtok_r(buf, " ", &save); t != NULL && argc < 8;
		     t = strtok_r(NULL, " ", &save))
			argv[argc++] = t;
		lb_cmd_out_init(&out);
		if (w->op == DENY)
			rc = lb_acl_parse_deny(argc, argv, &r, &out);
		else if (w->op == ALLOW)
			rc = lb_acl_parse_allow(argc, argv, &r, &out);
		else
			rc = lb_acl_parse_del(argc, argv, &r, &out);
		if (rc != w->rc)
			fail_msg("%s: rc %d, want %d (%s)", w->desc, rc, w->rc,
				 lb_cmd_out_errmsg(&out));
		if (rc == 0 && w->v6 != NULL) {
			uint8_t a[16];

			assert_int_equal(inet_pton(AF_INET6, w->v6, a), 1);
			assert_int_equal(r.af, LB_CONF_AF_INET6);
			assert_memory_equal(r.prefix6, a, 16);
		} else if (rc == 0) {
			assert_int_equal(r.af, LB_CONF_AF_INET);
		}
		if (rc == 0) {
			assert_int_equal(r.prefix, w->prefix);
			assert_int_equal(r.len, w->len);
			assert_int_equal(r.ttl_ns, w->ttl_ns);
			assert_int_equal(r.lb_only, w->lb_only);
		} else if (strstr(lb_cmd_out_errmsg(&out), w->err) == NULL) {
			fail_msg("%s: message '%s' lacks '%s'", w->desc,
				 lb_cmd_out_errmsg(&out), w->err);
		}
		lb_cmd_out_free(&out);
	}
}

static void
test_auto_parse(void **state)
{
	struct lb_acl_auto_conf c;
	char err[128];

	(void)state;
	assert_int_equal(lb_acl_auto_parse("20/10s", &c, err, sizeof(err)),
			 0);
	assert_int_equal(c.rejects, 20);
	assert_int_equal(c.window_ns, 10 * S);
	assert_int_equal(c.ttl_ns, LB_ACL_AUTO_TTL_DEFAULT);
	assert_int_equal(c.max, LB_ACL_AUTO_MAX_DEFAULT);
	assert_int_equal(lb_acl_auto_parse("5/1s,ttl=5m,max=16", &c, err,
					   sizeof(err)),
			 0);
	assert_int_equal(c.rejects, 5);
	assert_int_equal(c.ttl_ns, 300 * S);
	assert_int_equal(c.max, 16);
	assert_int_equal(lb_acl_auto_parse("off", &c, err, sizeof(err)), 0);
	assert_int_equal(c.rejects, 0);

	/* refused, and @c left as it was */
	c.rejects = 7;
	static const char *const bad[] = {
		"20", "0/10s", "x/10s", "20/10", "20/0s", "20/10s,ttl=0s",
		"20/10s,max=0", "20/10s,speed=1", "20/10s,ttl=", "",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (lb_acl_auto_parse(bad[i], &c, err, sizeof(err)) == 0)
			fail_msg("'%s' accepted", bad[i]);
		assert_true(err[0] != '\0');
		assert_int_equal(c.rejects, 7);
	}
}

static struct lb_acl_auto *
mk(uint32_t rejects, uint64_t window, uint64_t ttl, uint32_t max)
{
	struct lb_acl_auto_conf c = {rejects, window, ttl, max};
	struct lb_acl_auto *a = lb_acl_auto_create(&c);

	assert_non_null(a);
	return a;
}

/* REJECTS records within the window deny; fewer, or spread wider, do
 * not; the deny ends after its ttl and counting starts afresh. */
static void
test_auto_threshold(void **state)
{
	struct lb_acl_auto *a = mk(3, 1 * S, 10 * S, 4);
	const uint32_t src = 0x0a000001;

	(void)state;
	assert_int_equal(lb_acl_auto_reject(a, src, 32, 0), LB_ACL_AUTO_COUNTED);
	assert_int_equal(lb_acl_auto_reject(a, src, 32, 500 * MS),
			 LB_ACL_AUTO_COUNTED);
	/* the window ran out: the third is the first of a new window */
	assert_int_equal(lb_acl_auto_reject(a, src, 32, 1 * S),
			 LB_ACL_AUTO_COUNTED);
	assert_int_equal(lb_acl_auto_reject(a, src, 32, 1 * S + 1),
			 LB_ACL_AUTO_COUNTED);
	assert_int_equal(lb_acl_auto_reject(a, src, 32, 1 * S + 2),
			 LB_ACL_AUTO_DENY);
	assert_int_equal(lb_acl_auto_stats(a)->active, 1);
	assert_int_equal(lb_acl_auto_reject(a, src, 32, 2 * S),
			 LB_ACL_AUTO_DENIED);
	/* another prefix of the same address is another key */
	assert_int_equal(lb_acl_auto_reject(a, src, 24, 2 * S),
			 LB_ACL_AUTO_COUNTED);
	assert_int_equal(lb_acl_auto_expire(a, 11 * S + 1), 0);
	assert_int_equal(lb_acl_auto_expire(a, 11 * S + 2), 1);
	assert_int_equal(lb_acl_auto_stats(a)->active, 0);
	assert_int_equal(lb_acl_auto_stats(a)->expired, 1);
	assert_int_equal(lb_acl_auto_reject(a, src, 32, 12 * S),
			 LB_ACL_AUTO_COUNTED);
	assert_int_equal(lb_acl_auto_stats(a)->records, 8);
	assert_int_equal(lb_acl_auto_stats(a)->denies, 1);
	lb_acl_auto_free(a);
}

/* A deny that ran out before the collection counts afresh. */
static void
test_auto_lazy_expiry(void **state)
{
	struct lb_acl_auto *a = mk(1, 1 * S, 5 * S, 4);

	(void)state;
	assert_int_equal(lb_acl_auto_reject(a, 7, 32, 0), LB_ACL_AUTO_DENY);
	assert_int_equal(lb_acl_auto_reject(a, 7, 32, 5 * S - 1),
			 LB_ACL_AUTO_DENIED);
	assert_int_equal(lb_acl_auto_reject(a, 7, 32, 5 * S), LB_ACL_AUTO_DENY);
	assert_int_equal(lb_acl_auto_stats(a)->active, 1);
	assert_int_equal(lb_acl_auto_stats(a)->expired, 1);
	lb_acl_auto_free(a);
}

/* At most max prefixes denied; a flood of new sources is bounded by the
 * table and never evicts a live deny. */
static void
test_auto_bounds(void **state)
{
	struct lb_acl_auto *a = mk(1, 1 * S, 60 * S, 8);
	const struct lb_acl_auto_stats *st = lb_acl_auto_stats(a);
	unsigned int deny = 0, full = 0, other = 0;

	(void)state;
	for (uint32_t i = 0; i < 100000; i++) {
		switch (lb_acl_auto_reject(a, 0x0b000000 + i, 32, i)) {
		case LB_ACL_AUTO_DENY:
			deny++;
			break;
		case LB_ACL_AUTO_FULL:
			full++;
			break;
		default:
			other++;
		}
	}
	assert_int_equal(deny, 8);
	assert_int_equal(st->active, 8);
	assert_int_equal(full + other, 100000 - 8);
	/* the first eight are still denied */
	for (uint32_t i = 0; i < 8; i++)
		assert_int_equal(lb_acl_auto_reject(a, 0x0b000000 + i, 32, S),
				 LB_ACL_AUTO_DENIED);
	/* forgetting one makes room */
	lb_acl_auto_forget(a, 0x0b000000, 32);
	assert_int_equal(st->active, 7);
	assert_int_equal(lb_acl_auto_reject(a, 0x0c000000, 32, S),
			 LB_ACL_AUTO_DENY);
	lb_acl_auto_forget(a, 0x0d000000, 32); /* unknown: no-op */
	assert_int_equal(st->active, 8);
	lb_acl_auto_free(a);
}

/* Candidates crowd each other out, oldest first, within a probe window;
 * with many more candidates than slots some go untracked. */
static void
test_auto_candidates(void **state)
{
	struct lb_acl_auto *a = mk(2, 10 * S, 60 * S, 1);
	const struct lb_acl_auto_stats *st = lb_acl_auto_stats(a);

	(void)state;
	for (uint32_t i = 0; i < 1000; i++)
		assert_int_equal(lb_acl_auto_reject(a, i, 32, i),
				 LB_ACL_AUTO_COUNTED);
	/* the latest source still has its first record counted */
	assert_int_equal(lb_acl_auto_reject(a, 999, 32, 1000),
			 LB_ACL_AUTO_DENY);
	assert_int_equal(st->untracked, 0);
	/* a quiet candidate goes at the collection */
	assert_int_equal(lb_acl_auto_expire(a, 20 * S), 0);
	assert_int_equal(lb_acl_auto_reject(a, 998, 32, 20 * S),
			 LB_ACL_AUTO_COUNTED);
	lb_acl_auto_free(a);
}

static void
test_auto_adopt(void **state)
{
	struct lb_acl_auto *a = mk(1, 1 * S, 60 * S, 2);

	(void)state;
	assert_int_equal(lb_acl_auto_adopt(a, 1, 32, 30 * S), 0);
	assert_int_equal(lb_acl_auto_adopt(a, 1, 32, 40 * S), 0); /* again */
	assert_int_equal(lb_acl_auto_stats(a)->active, 1);
	assert_int_equal(lb_acl_auto_adopt(a, 2, 32, 30 * S), 0);
	assert_int_equal(lb_acl_auto_adopt(a, 3, 32, 30 * S), -ENOSPC);
	assert_int_equal(lb_acl_auto_adopt(a, 3, 32, 0), -EINVAL);
	assert_int_equal(lb_acl_auto_reject(a, 1, 32, 35 * S),
			 LB_ACL_AUTO_DENIED);
	assert_int_equal(lb_acl_auto_expire(a, 40 * S), 2);
	lb_acl_auto_free(a);
}

/* 2001:db8:N::/64 (N in the third group): one IPv6 source per N. */
static const uint8_t *
net6(uint32_t n)
{
	static uint8_t a[16];

	memset(a, 0, sizeof(a));
	a[0] = 0x20;
	a[1] = 0x01;
	a[2] = 0x0d;
	a[3] = 0xb8;
	a[4] = (uint8_t)(n >> 24);
	a[5] = (uint8_t)(n >> 16);
	a[6] = (uint8_t)(n >> 8);
	a[7] = (uint8_t)n;
	return a;
}

/* IPv6 sources as IPv4's: REJECTS within the window deny, the deny ends
 * after its ttl, a lapsed deny counts afresh; another length of the same
 * prefix, or the IPv4 prefix with the same leading bytes, is another
 * source. */
static void
test_auto6_threshold(void **state)
{
	struct lb_acl_auto *a = mk(3, 1 * S, 10 * S, 4);
	uint8_t p[16], v4like[16] = {10, 0, 0, 1};

	(void)state;
	memcpy(p, net6(7), sizeof(p));
	assert_int_equal(lb_acl_auto_reject6(a, p, 64, 0), LB_ACL_AUTO_COUNTED);
	assert_int_equal(lb_acl_auto_reject6(a, p, 64, 500 * MS),
			 LB_ACL_AUTO_COUNTED);
	/* the window ran out: the third is the first of a new window */
	assert_int_equal(lb_acl_auto_reject6(a, p, 64, 1 * S),
			 LB_ACL_AUTO_COUNTED);
	assert_int_equal(lb_acl_auto_reject6(a, p, 64, 1 * S + 1),
			 LB_ACL_AUTO_COUNTED);
	/* neither the /48 nor another /64 adds to its count */
	assert_int_equal(lb_acl_auto_reject6(a, p, 48, 1 * S + 1),
			 LB_ACL_AUTO_COUNTED);
	assert_int_equal(lb_acl_auto_reject6(a, net6(8), 64, 1 * S + 1),
			 LB_ACL_AUTO_COUNTED);
	assert_int_equal(lb_acl_auto_reject6(a, p, 64, 1 * S + 2),
			 LB_ACL_AUTO_DENY);
	assert_int_equal(lb_acl_auto_reject6(a, p, 64, 2 * S),
			 LB_ACL_AUTO_DENIED);
	/* 10.0.0.1/32 and 0a00:0001::/32 are two sources */
	assert_int_equal(lb_acl_auto_reject(a, 0x0a000001, 32, 2 * S),
			 LB_ACL_AUTO_COUNTED);
	assert_int_equal(lb_acl_auto_reject6(a, v4like, 32, 2 * S),
			 LB_ACL_AUTO_COUNTED);
	assert_int_equal(lb_acl_auto_stats(a)->active, 1);
	assert_int_equal(lb_acl_auto_expire(a, 11 * S + 1), 0);
	assert_int_equal(lb_acl_auto_expire(a, 11 * S + 2), 1);
	assert_int_equal(lb_acl_auto_stats(a)->active, 0);
	assert_int_equal(lb_acl_auto_reject6(a, p, 64, 12 * S),
			 LB_ACL_AUTO_COUNTED);
	assert_int_equal(lb_acl_auto_stats(a)->denies, 1);
	assert_int_equal(lb_acl_auto_stats(a)->records, 11);
	lb_acl_auto_free(a);
}

/* One bound for both families; a flood of new IPv6 sources never evicts
 * a deny in force, of either family; forgetting one makes room. */
static void
test_auto6_bounds(void **state)
{
	struct lb_acl_auto *a = mk(1, 1 * S, 60 * S, 8);
	const struct lb_acl_auto_stats *st = lb_acl_auto_stats(a);
	unsigned int deny = 0;

	(void)state;
	assert_int_equal(lb_acl_auto_reject(a, 0x0b000000, 32, 0),
			 LB_ACL_AUTO_DENY);
	for (uint32_t i = 0; i < 100000; i++)
		if (lb_acl_auto_reject6(a, net6(i), 64, i) == LB_ACL_AUTO_DENY)
			deny++;
	assert_int_equal(deny, 7);
	assert_int_equal(st->active, 8);
	assert_int_equal(lb_acl_auto_reject(a, 0x0b000000, 32, S),
			 LB_ACL_AUTO_DENIED);
	for (uint32_t i = 0; i < 7; i++)
		assert_int_equal(lb_acl_auto_reject6(a, net6(i), 64, S),
				 LB_ACL_AUTO_DENIED);
	assert_int_equal(lb_acl_auto_reject6(a, net6(200000), 64, S),
			 LB_ACL_AUTO_FULL);
	lb_acl_auto_forget6(a, net6(0), 64);
	lb_acl_auto_forget6(a, net6(1), 48); /* not that length: no-op */
	assert_int_equal(st->active, 7);
	assert_int_equal(lb_acl_auto_reject6(a, net6(200000), 64, S),
			 LB_ACL_AUTO_DENY);
	lb_acl_auto_free(a);
}

/* Denies of a restarted lb-control's map count against the bound. */
static void
test_auto6_adopt(void **state)
{
	struct lb_acl_auto *a = mk(1, 1 * S, 60 * S, 2);

	(void)state;
	assert_int_equal(lb_acl_auto_adopt6(a, net6(1), 64, 40 * S), 0);
	assert_int_equal(lb_acl_auto_adopt(a, 1, 32, 40 * S), 0);
	assert_int_equal(lb_acl_auto_adopt6(a, net6(2), 64, 40 * S), -ENOSPC);
	assert_int_equal(lb_acl_auto_adopt6(a, net6(2), 64, 0), -EINVAL);
	assert_int_equal(lb_acl_auto_reject6(a, net6(1), 64, 35 * S),
			 LB_ACL_AUTO_DENIED);
	assert_int_equal(lb_acl_auto_expire(a, 40 * S), 2);
	lb_acl_auto_free(a);
}

static void
test_auto_create(void **state)
{
	struct lb_acl_auto_conf off = {0, S, S, 1}, nomax = {1, S, S, 0};

	(void)state;
	assert_null(lb_acl_auto_create(&off));
	assert_int_equal(errno, EINVAL);
	assert_null(lb_acl_auto_create(&nomax));
	assert_null(lb_acl_auto_create(NULL));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_auto_parse),
		cmocka_unit_test(test_auto_threshold),
		cmocka_unit_test(test_auto_lazy_expiry),
		cmocka_unit_test(test_auto_bounds),
		cmocka_unit_test(test_auto_candidates),
		cmocka_unit_test(test_auto_adopt),
		cmocka_unit_test(test_auto6_threshold),
		cmocka_unit_test(test_auto6_bounds),
		cmocka_unit_test(test_auto6_adopt),
		cmocka_unit_test(test_auto_create),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
