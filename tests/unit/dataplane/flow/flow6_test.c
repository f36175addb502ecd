/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "flow6.h"

#define SEC(s) ((uint64_t)(s) * 1000000000ULL)

/* 2001:db8::<a>:<b> */
static void
ip6(uint8_t out[16], uint16_t a, uint16_t b)
{
	memset(out, 0, 16);
	out[0] = 0x20;
	out[1] = 0x01;
	out[2] = 0x0d;
	out[3] = 0xb8;
	out[12] = (uint8_t)(a >> 8);
	out[13] = (uint8_t)a;
	out[14] = (uint8_t)(b >> 8);
	out[15] = (uint8_t)b;
}

/* Flow i: client 1:i -> vip 2:1 port 443, snat 3:1 port 1024+i -> be 4:1
 * port 8443. */
static void
nth(uint32_t i, uint8_t proto, struct lb_flow6_tuple *o,
    struct lb_flow6_tuple *r)
{
	memset(o, 0, sizeof(*o));
	memset(r, 0, sizeof(*r));
	ip6(o->src, 1, (uint16_t)i);
	ip6(o->dst, 2, 1);
	o->sport = htons((uint16_t)(40000 + i % 1000));
	o->dport = htons(443);
	o->proto = proto;
	ip6(r->src, 4, 1);
	ip6(r->dst, 3, 1);
	r->sport = htons(8443);
	r->dport = htons((uint16_t)(1024 + i));
	r->proto = proto;
}

struct tbl {
	struct lb_flow_table *t;
	struct lb_flow6_addrs *side;
};

static struct tbl
tbl(uint32_t cap)
{
	struct tbl x = {
		.t = lb_flow_table_create(cap, NULL, 7),
		.side = calloc(1, lb_flow6_mem_size(cap)),
	};

	assert_non_null(x.t);
	assert_non_null(x.side);
	return x;
}

static void
tbl_free(struct tbl *x)
{
	lb_flow_table_free(x->t);
	free(x->side);
}

static void
test_sizes(void **state)
{
	(void)state;
	/* IPv4 entries stay one cache line; the addresses take another. */
	assert_int_equal(sizeof(struct lb_flow), 64);
	assert_int_equal(sizeof(struct lb_flow6_addrs), 64);
	assert_int_equal(lb_flow6_mem_size(1000), 64000);
}

static void
test_insert_lookup_both_ways(void **state)
{
	struct tbl x = tbl(64);
	struct lb_flow6_tuple o, r, got;
	enum lb_flow_dir dir;
	int idx;

	(void)state;
	nth(5, LB_FLOW_PROTO_TCP, &o, &r);
	idx = lb_flow6_insert(x.t, x.side, &o, &r, 3, 9, SEC(1));
	assert_true(idx >= 0);
	assert_true(lb_flow_is6(lb_flow_get(x.t, (uint32_t)idx)));
	assert_int_equal(lb_flow_get(x.t, (uint32_t)idx)->svc, 3);
	assert_int_equal(lb_flow_get(x.t, (uint32_t)idx)->be, 9);
	assert_int_equal(lb_flow_get(x.t, (uint32_t)idx)->state,
			 LB_FLOW_SYN_SENT);

	assert_int_equal(lb_flow6_lookup(x.t, x.side, &o, &dir), idx);
	assert_int_equal(dir, LB_FLOW_DIR_ORIG);
	assert_int_equal(lb_flow6_lookup(x.t, x.side, &r, &dir), idx);
	assert_int_equal(dir, LB_FLOW_DIR_REPLY);

	lb_flow6_tuple_of(x.t, x.side, (uint32_t)idx, LB_FLOW_DIR_ORIG, &got);
	assert_memory_equal(&got, &o, sizeof(got));
	lb_flow6_tuple_of(x.t, x.side, (uint32_t)idx, LB_FLOW_DIR_REPLY, &got);
	assert_memory_equal(&got, &r, sizeof(got));

	/* Another client port, another address: misses. */
	nth(5, LB_FLOW_PROTO_TCP, &got, &r);
	got.sport = htons(1);
	assert_int_equal(lb_flow6_lookup(x.t, x.side, &got, &dir),
			 LB_FLOW_NONE);
	nth(6, LB_FLOW_PROTO_TCP, &got, &r);
	assert_int_equal(lb_flow6_lookup(x.t, x.side, &got, &dir),
			 LB_FLOW_NONE);
	/* The same tuple again is a duplicate. */
	nth(5, LB_FLOW_PROTO_TCP, &o, &r);
	assert_int_equal(lb_flow6_insert(x.t, x.side, &o, &r, 3, 9, SEC(1)),
			 -EEXIST);
	tbl_free(&x);
}

/* An IPv4 key made of the folded addresses is another key. */
static void
test_ipv4_key_apart(void **state)
{
	struct tbl x = tbl(64);
	struct lb_flow6_tuple o, r;
	struct lb_flow_key k4, k4r;
	enum lb_flow_dir dir;
	int idx;

	(void)state;
	nth(1, LB_FLOW_PROTO_UDP, &o, &r);
	idx = lb_flow6_insert(x.t, x.side, &o, &r, 0, 0, SEC(1));
	assert_true(idx >= 0);
	lb_flow_key_set(&k4, lb_flow6_fold(x.t, o.src),
			lb_flow6_fold(x.t, o.dst), o.sport, o.dport, o.proto);
	assert_int_equal(lb_flow_lookup(x.t, &k4, &dir), LB_FLOW_NONE);
	lb_flow_key_set(&k4r, 1, 2, 3, 4, o.proto);
	assert_true(lb_flow_insert(x.t, &k4, &k4r, 0, 0, SEC(1)) >= 0);
	assert_int_equal(lb_flow_get(x.t, (uint32_t)idx)->key[0].pad[0],
			 LB_FLOW_FAM6);
	assert_false(lb_flow_is6(lb_flow_get(
		x.t, lb_flow_lookup(x.t, &k4, &dir))));
	/* Any other padding is still refused. */
	k4.pad[0] = 4;
	k4r.sport = 9;
	assert_int_equal(lb_flow_insert(x.t, &k4, &k4r, 0, 0, SEC(1)),
			 -EINVAL);
	tbl_free(&x);
}

/* A tuple whose folded key is a flow's but whose addresses are not: a
 * miss, never that flow. */
static void
test_fold_collision_misses(void **state)
{
	struct tbl x = tbl(64);
	struct lb_flow6_tuple o, r, other;
	struct lb_flow_key k;
	enum lb_flow_dir dir;
	int idx;

	(void)state;
	nth(2, LB_FLOW_PROTO_TCP, &o, &r);
	idx = lb_flow6_insert(x.t, x.side, &o, &r, 0, 0, SEC(1));
	assert_true(idx >= 0);
	lb_flow6_key(x.t, &k, &o);
	other = o;
	other.src[8] ^= 0x80;
	assert_int_equal(lb_flow6_lookup_hash(x.t, x.side, &other, &k,
					      lb_flow_hash(x.t->seed, &k),
					      &dir),
			 LB_FLOW_NONE);
	assert_int_equal(dir, LB_FLOW_DIR_ORIG);
	assert_int_equal(lb_flow6_lookup_hash(x.t, x.side, &o, &k,
					      lb_flow_hash(x.t->seed, &k),
					      &dir),
			 idx);
	tbl_free(&x);
}

/*
 * An fnat64 flow: the client side found as an IPv6 flow's, the backend
 * side by the plain IPv4 key its replies carry; an fnat66 flow and an
 * IPv4 flow are not fnat64 ones; the IPv4 pair is then taken.
 */
static void
test_fnat64_both_ways(void **state)
{
	struct tbl x = tbl(64);
	struct lb_flow6_tuple o, r, got;
	struct lb_flow_key k4;
	enum lb_flow_dir dir;
	uint32_t be = htonl(0x0a010014), snat = htonl(0x0a010002);
	uint16_t bport = htons(8080), sport = htons(2000);
	const uint8_t mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
				    10, 1, 0, 2};
	int idx, i6;

	(void)state;
	nth(3, LB_FLOW_PROTO_TCP, &o, &r);
	idx = lb_flow64_insert(x.t, x.side, &o, be, snat, bport, sport, 2, 5,
			       SEC(1));
	assert_true(idx >= 0);
	assert_true(lb_flow_is6(lb_flow_get(x.t, (uint32_t)idx)));
	assert_true(lb_flow_is64(lb_flow_get(x.t, (uint32_t)idx)));
	assert_int_equal(lb_flow6_lookup(x.t, x.side, &o, &dir), idx);
	assert_int_equal(dir, LB_FLOW_DIR_ORIG);
	lb_flow_key_set(&k4, be, snat, bport, sport, LB_FLOW_PROTO_TCP);
	assert_int_equal(lb_flow_lookup(x.t, &k4, &dir), idx);
	assert_int_equal(dir, LB_FLOW_DIR_REPLY);
	assert_true(lb_flow_holds(x.t, &k4));
	lb_flow6_tuple_of(x.t, x.side, (uint32_t)idx, LB_FLOW_DIR_REPLY, &got);
	assert_memory_equal(got.dst, mapped, 16);
	assert_int_equal(got.dport, sport);
	/* The same IPv4 pair for another client: taken. */
	nth(4, LB_FLOW_PROTO_TCP, &o, &r);
	assert_int_equal(lb_flow64_insert(x.t, x.side, &o, be, snat, bport,
					  sport, 2, 5, SEC(1)),
			 -EEXIST);
	i6 = lb_flow6_insert(x.t, x.side, &o, &r, 0, 0, SEC(1));
	assert_true(i6 >= 0);
	assert_false(lb_flow_is64(lb_flow_get(x.t, (uint32_t)i6)));
	assert_int_equal(lb_flow64_insert(NULL, x.side, &o, be, snat, bport,
					  sport, 2, 5, SEC(1)),
			 -EINVAL);
	tbl_free(&x);
}

struct log {
	uint32_t idx[8];
	unsigned int n;
};

static void
log_expired(uint32_t idx, const struct lb_flow *f, void *ctx)
{
	struct log *l = ctx;

	assert_true(lb_flow_is6(f));
	if (l->n < 8)
		l->idx[l->n++] = idx;
}

/* Same timeouts, expiry and reclaim as IPv4 flows. */
static void
test_expiry_and_reclaim(void **state)
{
	struct tbl x = tbl(4);
	struct lb_flow6_tuple o, r;
	struct log log = { .n = 0 };
	enum lb_flow_dir dir;
	uint64_t syn = lb_flow_timeout_ns(x.t, LB_FLOW_SYN_SENT);
	int a, b;

	(void)state;
	nth(1, LB_FLOW_PROTO_TCP, &o, &r);
	a = lb_flow6_insert(x.t, x.side, &o, &r, 0, 0, SEC(1));
	assert_true(a >= 0);
	lb_flow_clock(x.t, SEC(1) + syn / 2);
	assert_true(lb_flow6_holds(x.t, &r));
	assert_int_equal(lb_flow_expire(x.t, SEC(1) + syn / 2, 8, log_expired,
					&log), 0);
	assert_int_equal(lb_flow_expire(x.t, SEC(2) + syn, 8, log_expired,
					&log), 1);
	assert_int_equal(log.n, 1);
	assert_int_equal(log.idx[0], a);
	assert_int_equal(lb_flow6_lookup(x.t, x.side, &o, &dir), LB_FLOW_NONE);
	assert_false(lb_flow6_holds(x.t, &r));

	/* A timed-out holder of the reply tuple is reclaimed by the next
	 * flow that wants it. */
	lb_flow_set_reaper(x.t, log_expired, &log);
	a = lb_flow6_insert(x.t, x.side, &o, &r, 0, 0, SEC(10));
	assert_true(a >= 0);
	o.sport = htons(9);
	lb_flow_clock(x.t, SEC(11) + syn);
	assert_false(lb_flow6_holds(x.t, &r));
	b = lb_flow6_insert(x.t, x.side, &o, &r, 0, 0, SEC(11) + syn);
	assert_true(b >= 0);
	assert_int_equal(log.n, 2);
	assert_int_equal(log.idx[1], a);
	assert_int_equal(x.t->stats.reclaimed, 1);
	assert_int_equal(lb_flow6_lookup(x.t, x.side, &o, &dir), b);
	assert_int_equal(lb_flow6_lookup(x.t, x.side, &r, &dir), b);
	assert_int_equal(dir, LB_FLOW_DIR_REPLY);
	tbl_free(&x);
}

/* Many flows at once, full table: every one found, the next refused. */
static void
test_fill(void **state)
{
	enum { CAP = 1000 };
	struct tbl x = tbl(CAP);
	struct lb_flow6_tuple o, r;
	enum lb_flow_dir dir;

	(void)state;
	for (uint32_t i = 0; i < CAP; i++) {
		nth(i, LB_FLOW_PROTO_TCP, &o, &r);
		assert_int_equal(lb_flow6_insert(x.t, x.side, &o, &r, 0, i,
						 SEC(1)) >= 0, 1);
	}
	nth(CAP, LB_FLOW_PROTO_TCP, &o, &r);
	assert_int_equal(lb_flow6_insert(x.t, x.side, &o, &r, 0, 0, SEC(1)),
			 -ENOSPC);
	for (uint32_t i = 0; i < CAP; i++) {
		uint32_t idx;

		nth(i, LB_FLOW_PROTO_TCP, &o, &r);
		idx = lb_flow6_lookup(x.t, x.side, &r, &dir);
		assert_int_not_equal(idx, LB_FLOW_NONE);
		assert_int_equal(lb_flow_get(x.t, idx)->be, i);
		assert_int_equal(lb_flow6_lookup(x.t, x.side, &o, &dir), idx);
	}
	tbl_free(&x);
}

static void
test_bad_args(void **state)
{
	struct tbl x = tbl(4);
	struct lb_flow6_tuple o, r;

	(void)state;
	nth(0, LB_FLOW_PROTO_TCP, &o, &r);
	assert_int_equal(lb_flow6_insert(NULL, x.side, &o, &r, 0, 0, 0),
			 -EINVAL);
	assert_int_equal(lb_flow6_insert(x.t, NULL, &o, &r, 0, 0, 0),
			 -EINVAL);
	assert_int_equal(lb_flow6_insert(x.t, x.side, &o, &o, 0, 0, 0),
			 -EINVAL);
	r.proto = LB_FLOW_PROTO_UDP;
	assert_int_equal(lb_flow6_insert(x.t, x.side, &o, &r, 0, 0, 0),
			 -EINVAL);
	assert_int_equal(x.t->stats.flows, 0);
	assert_false(lb_flow6_holds(NULL, &o));
	tbl_free(&x);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_insert_lookup_both_ways),
		cmocka_unit_test(test_ipv4_key_apart),
		cmocka_unit_test(test_fnat64_both_ways),
		cmocka_unit_test(test_fold_collision_misses),
		cmocka_unit_test(test_expiry_and_reclaim),
		cmocka_unit_test(test_fill),
		cmocka_unit_test(test_bad_args),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
