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

#include "lb/flow_table.h"
#include "lb/pkt_parse.h"
#include "lb/rng.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define SEC(s) ((uint64_t)(s) * 1000000000ULL)
#define MS(s) ((uint64_t)(s) * 1000000ULL)
#define TICK_NS (1ULL << LB_FLOW_TICK_SHIFT)

#define O LB_FLOW_DIR_ORIG
#define R LB_FLOW_DIR_REPLY
#define SYN LB_TCP_SYN
#define ACK LB_TCP_ACK
#define FIN LB_TCP_FIN
#define RST LB_TCP_RST
#define PSH LB_TCP_PSH

static uint32_t
ip4(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	return htonl((uint32_t)a << 24 | (uint32_t)b << 16 |
		     (uint32_t)c << 8 | d);
}

/* A full-NAT flow: client -> vip rewritten to snat -> backend. */
struct nat {
	uint32_t client, vip, snat, bip;
	uint16_t cport, vport, sport, bport;
	uint8_t proto;
};

static void
nat_keys(const struct nat *n, struct lb_flow_key *orig,
	 struct lb_flow_key *reply)
{
	lb_flow_key_set(orig, n->client, n->vip, htons(n->cport),
			htons(n->vport), n->proto);
	lb_flow_key_set(reply, n->bip, n->snat, htons(n->bport),
			htons(n->sport), n->proto);
}

static struct lb_flow_table *
table(uint32_t capacity)
{
	struct lb_flow_table *t = lb_flow_table_create(capacity, NULL, 42);

	assert_non_null(t);
	return t;
}

/* Flow number i of a simple family of distinct TCP flows. */
static void
nth_keys(uint32_t i, uint8_t proto, struct lb_flow_key *o,
	 struct lb_flow_key *r)
{
	struct nat n = {
		.client = ip4(198, 51, (uint8_t)(i >> 8), (uint8_t)i),
		.vip = ip4(192, 0, 2, 10),
		.snat = ip4(203, 0, 113, 1),
		.bip = ip4(10, 0, 0, (uint8_t)(1 + i % 8)),
		.cport = (uint16_t)(40000 + i % 1000),
		.vport = 80,
		.sport = (uint16_t)(1024 + i),
		.bport = 8080,
		.proto = proto,
	};

	nat_keys(&n, o, r);
}

static int
insert_nth(struct lb_flow_table *t, uint32_t i, uint8_t proto, uint64_t now)
{
	struct lb_flow_key o, r;

	nth_keys(i, proto, &o, &r);
	return lb_flow_insert(t, &o, &r, (uint16_t)(i % 3), i % 5, now);
}

static uint32_t
lookup_nth(const struct lb_flow_table *t, uint32_t i, uint8_t proto,
	   enum lb_flow_dir want_dir)
{
	struct lb_flow_key k[2];
	enum lb_flow_dir dir = (enum lb_flow_dir)-1;
	uint32_t idx;

	nth_keys(i, proto, &k[0], &k[1]);
	idx = lb_flow_lookup(t, &k[want_dir], &dir);
	if (idx != LB_FLOW_NONE)
		assert_int_equal(dir, want_dir);
	return idx;
}

static void
test_sizes_and_bad_init(void **state)
{
	struct lb_flow_timeouts to;
	struct lb_flow_table *t;
	void *mem;
	size_t sz;

	(void)state;
	assert_int_equal(lb_flow_table_mem_size(0), 0);
	assert_int_equal(lb_flow_table_mem_size(LB_FLOW_MAX_CAPACITY + 1), 0);
	/* 4M flows: 64 B entries plus 16M 8-byte slots (load 1/2). */
	sz = lb_flow_table_mem_size(1u << 22);
	assert_true(sz > (64u << 22) + (128u << 20));
	assert_true(sz < (64u << 22) + (128u << 20) + 4096);
	/* A capacity that is not a power of two rounds the index up. */
	assert_true(lb_flow_table_mem_size(1000) >= 1000 * 64 + 4096 * 8);

	assert_int_equal(lb_flow_table_init(NULL, 8, NULL, 1), -EINVAL);
	mem = aligned_alloc(64, lb_flow_table_mem_size(8) + 64);
	assert_non_null(mem);
	assert_int_equal(lb_flow_table_init(mem, 0, NULL, 1), -EINVAL);
	assert_int_equal(
		lb_flow_table_init(mem, LB_FLOW_MAX_CAPACITY + 1, NULL, 1),
		-EINVAL);
	assert_int_equal(lb_flow_table_init((char *)mem + 8, 8, NULL, 1),
			 -EINVAL);
	assert_int_equal(lb_flow_timeouts_preset(&to, LB_FLOW_TIMEOUTS_IPVS),
			 0);
	to.ns[LB_FLOW_UDP] = 0;
	assert_int_equal(lb_flow_table_init(mem, 8, &to, 1), -EINVAL);
	to.ns[LB_FLOW_UDP] = LB_FLOW_TIMEOUT_MAX_NS + 1;
	assert_int_equal(lb_flow_table_init(mem, 8, &to, 1), -ERANGE);
	to.ns[LB_FLOW_UDP] = LB_FLOW_TIMEOUT_MAX_NS;
	assert_int_equal(lb_flow_table_init(mem, 8, &to, 1), 0);
	free(mem);

	errno = 0;
	assert_null(lb_flow_table_create(0, NULL, 1));
	assert_int_equal(errno, EINVAL);
	to.ns[LB_FLOW_CLOSED] = UINT64_MAX;
	errno = 0;
	assert_null(lb_flow_table_create(8, &to, 1));
	assert_int_equal(errno, ERANGE);
	assert_int_equal(lb_flow_timeouts_preset(NULL, LB_FLOW_TIMEOUTS_IPVS),
			 -EINVAL);
	assert_int_equal(
		lb_flow_timeouts_preset(&to, (enum lb_flow_timeout_preset)7),
		-EINVAL);

	t = table(8);
	assert_int_equal(lb_flow_set_timeout(NULL, LB_FLOW_UDP, SEC(1)),
			 -EINVAL);
	assert_int_equal(lb_flow_set_timeout(t, LB_FLOW_NB_STATES, SEC(1)),
			 -EINVAL);
	assert_int_equal(lb_flow_set_timeout(t, LB_FLOW_UDP, 0), -EINVAL);
	assert_int_equal(lb_flow_set_timeout(t, LB_FLOW_UDP,
					     LB_FLOW_TIMEOUT_MAX_NS + 1),
			 -ERANGE);
	assert_int_equal(lb_flow_timeout_ns(t, LB_FLOW_NB_STATES), 0);
	assert_int_equal(lb_flow_timeout_ns(NULL, LB_FLOW_UDP), 0);
	assert_int_equal(lb_flow_delete(NULL, 0), -EINVAL);
	assert_int_equal(lb_flow_delete(t, 8), -EINVAL);
	assert_int_equal(lb_flow_delete(t, 0), -ENOENT);
	assert_int_equal(lb_flow_touch(NULL, 0, O, 0, 0), -EINVAL);
	assert_int_equal(lb_flow_touch(t, 8, O, 0, 0), -EINVAL);
	assert_int_equal(lb_flow_touch(t, 0, (enum lb_flow_dir)2, 0, 0),
			 -EINVAL);
	assert_int_equal(lb_flow_touch(t, 0, O, 0, 0), -ENOENT);
	assert_null(lb_flow_get(t, 0));
	assert_null(lb_flow_get(t, 8));
	assert_null(lb_flow_get(NULL, 0));
	assert_int_equal(lb_flow_next(NULL, 0), LB_FLOW_NONE);
	assert_int_equal(lb_flow_expire(NULL, SEC(1000), 10, NULL, NULL), 0);
	lb_flow_table_free(t);
}

static void
test_timeout_presets(void **state)
{
	static const struct {
		enum lb_flow_timeout_preset p;
		uint64_t s[LB_FLOW_NB_STATES];
	} rows[] = {
		/* syn_sent syn_recv est closing time_wait closed udp other
		 * udp_unreplied */
		{ LB_FLOW_TIMEOUTS_IPVS,
		  { 120, 60, 900, 120, 120, 10, 300, 30, 30 } },
		{ LB_FLOW_TIMEOUTS_DPVS, { 3, 30, 90, 7, 7, 3, 300, 30, 30 } },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct lb_flow_timeouts to;
		struct lb_flow_table *t;

		assert_int_equal(lb_flow_timeouts_preset(&to, rows[i].p), 0);
		t = lb_flow_table_create(4, rows[i].p == 0 ? NULL : &to, 1);
		assert_non_null(t);
		for (unsigned int s = 0; s < LB_FLOW_NB_STATES; s++) {
			uint64_t got = lb_flow_timeout_ns(t, s);

			assert_int_equal(to.ns[s], SEC(rows[i].s[s]));
			/* rounded up to a whole tick */
			assert_true(got >= SEC(rows[i].s[s]));
			assert_true(got < SEC(rows[i].s[s]) + TICK_NS);
		}
		lb_flow_table_free(t);
	}
}

static void
test_check_layout(void **state)
{
	struct lb_flow_table *t = table(64);
	size_t sz = lb_flow_table_mem_size(64);
	struct lb_flow_table *copy;
	struct lb_flow_key o, r;
	enum lb_flow_dir dir;

	(void)state;
	assert_int_equal(lb_flow_table_check(t, sz), 0);
	assert_int_equal(lb_flow_table_check(t, sz - 1), -EINVAL);
	assert_int_equal(lb_flow_table_check(NULL, sz), -EINVAL);
	assert_int_equal(lb_flow_table_check(t, 8), -EINVAL);
	for (uint32_t i = 0; i < 40; i++)
		assert_int_equal(insert_nth(t, i, LB_FLOW_PROTO_TCP, 0),
				 (int)i);

	/* Pointer-free: a byte copy at another address (a secondary
	 * process mapping the memzone) is a working table. */
	copy = aligned_alloc(64, sz);
	assert_non_null(copy);
	memcpy(copy, t, sz);
	assert_int_equal(lb_flow_table_check(copy, sz), 0);
	for (uint32_t i = 0; i < 40; i++) {
		nth_keys(i, LB_FLOW_PROTO_TCP, &o, &r);
		assert_int_equal(lb_flow_lookup(copy, &r, &dir), i);
		assert_int_equal(dir, R);
	}
	assert_int_equal(copy->stats.flows, 40);

	copy->version++;
	assert_int_equal(lb_flow_table_check(copy, sz), -EPROTO);
	copy->version--;
	copy->capacity++;
	assert_int_equal(lb_flow_table_check(copy, sz), -EINVAL);
	copy->capacity--;
	copy->magic = 0;
	assert_int_equal(lb_flow_table_check(copy, sz), -EINVAL);
	free(copy);
	lb_flow_table_free(t);
}

static void
test_key_helpers(void **state)
{
	struct lb_flow_key k, rev;
	uint8_t raw[16];

	(void)state;
	memset(&k, 0xa5, sizeof(k));
	lb_flow_key_set(&k, ip4(1, 2, 3, 4), ip4(5, 6, 7, 8), htons(1000),
			htons(80), LB_FLOW_PROTO_TCP);
	memcpy(raw, &k, sizeof(raw));
	assert_int_equal(raw[13] | raw[14] | raw[15], 0);
	assert_int_equal(raw[12], 6);
	assert_memory_equal(raw, "\x01\x02\x03\x04\x05\x06\x07\x08"
				 "\x03\xe8\x00\x50",
			    12);
	lb_flow_key_reverse(&rev, &k);
	assert_int_equal(rev.src, k.dst);
	assert_int_equal(rev.dst, k.src);
	assert_int_equal(rev.sport, k.dport);
	assert_int_equal(rev.dport, k.sport);
	assert_int_equal(rev.proto, k.proto);
	assert_true(lb_flow_key_eq(&k, &k));
	assert_false(lb_flow_key_eq(&k, &rev));
	/* The seed changes where a key lands. */
	assert_true(lb_flow_hash(1, &k) != lb_flow_hash(2, &k));
	assert_true(lb_flow_hash(1, &k) != lb_flow_hash(1, &rev));
	/* The mark goes to padding byte 0 and nowhere else. */
	memset(&rev, 0xa5, sizeof(rev));
	lb_flow_key_set_mark(&rev, ip4(1, 2, 3, 4), ip4(5, 6, 7, 8),
			     htons(1000), htons(80), LB_FLOW_PROTO_TCP, 6);
	memcpy(raw, &rev, sizeof(raw));
	assert_int_equal(raw[13], 6);
	assert_int_equal(raw[14] | raw[15], 0);
	assert_memory_equal(raw, &k, 13);
}

static void
test_insert_lookup_both_directions(void **state)
{
	static const struct {
		struct nat n;
		uint8_t state;
	} rows[] = {
		{ { 0, 0, 0, 0, 33000, 80, 1024, 8080, LB_FLOW_PROTO_TCP },
		  LB_FLOW_SYN_SENT },
		{ { 0, 0, 0, 0, 33001, 80, 1025, 8080, LB_FLOW_PROTO_TCP },
		  LB_FLOW_SYN_SENT },
		{ { 0, 0, 0, 0, 5353, 53, 1026, 53, LB_FLOW_PROTO_UDP },
		  LB_FLOW_UDP_UNREPLIED },
		/* same ports as the TCP flow above, other protocol */
		{ { 0, 0, 0, 0, 33000, 80, 1024, 8080, LB_FLOW_PROTO_UDP },
		  LB_FLOW_UDP_UNREPLIED },
		/* ICMP echo: identifier as port */
		{ { 0, 0, 0, 0, 77, 0, 1027, 0, LB_IPPROTO_ICMP },
		  LB_FLOW_OTHER },
	};
	struct lb_flow_table *t = table(32);
	struct lb_flow_stats st;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct nat n = rows[i].n;
		struct lb_flow_key o, r, x;
		enum lb_flow_dir dir;
		const struct lb_flow *f;
		int idx;

		n.client = ip4(198, 51, 100, 7);
		n.vip = ip4(192, 0, 2, 1);
		n.snat = ip4(203, 0, 113, 9);
		n.bip = ip4(10, 1, 2, 3);
		nat_keys(&n, &o, &r);
		idx = lb_flow_insert(t, &o, &r, (uint16_t)(10 + i), 100 + i,
				     SEC(5));
		assert_true(idx >= 0);
		assert_int_equal(lb_flow_lookup(t, &o, &dir), idx);
		assert_int_equal(dir, O);
		assert_int_equal(lb_flow_lookup(t, &r, &dir), idx);
		assert_int_equal(dir, R);
		assert_int_equal(lb_flow_lookup_hash(t, &r,
						     lb_flow_hash(t->seed, &r),
						     &dir),
				 idx);
		/* Packets the other way round are not this flow. */
		lb_flow_key_reverse(&x, &o);
		assert_int_equal(lb_flow_lookup(t, &x, &dir), LB_FLOW_NONE);
		lb_flow_key_reverse(&x, &r);
		assert_int_equal(lb_flow_lookup(t, &x, &dir), LB_FLOW_NONE);

		f = lb_flow_get(t, (uint32_t)idx);
		assert_non_null(f);
		assert_memory_equal(&f->key[O], &o, sizeof(o));
		assert_memory_equal(&f->key[R], &r, sizeof(r));
		assert_int_equal(f->svc, 10 + i);
		assert_int_equal(f->be, 100 + i);
		assert_int_equal(f->state, rows[i].state);
		assert_int_equal(f->pkts[0] | f->pkts[1] | f->l7 | f->flags,
				 0);
		assert_int_equal(f->last_seen, SEC(5) >> LB_FLOW_TICK_SHIFT);
	}
	lb_flow_stats_get(t, &st);
	assert_int_equal(st.flows, ARRAY_SIZE(rows));
	assert_int_equal(st.inserts, ARRAY_SIZE(rows));
	lb_flow_table_free(t);
}

static void
test_insert_bad_input_and_duplicates(void **state)
{
	struct lb_flow_table *t = table(8);
	struct lb_flow_key o, r, bad, o2, r2;
	struct lb_flow_stats st;
	enum lb_flow_dir dir;

	(void)state;
	nth_keys(1, LB_FLOW_PROTO_TCP, &o, &r);
	nth_keys(2, LB_FLOW_PROTO_TCP, &o2, &r2);
	assert_int_equal(lb_flow_insert(NULL, &o, &r, 0, 0, 0), -EINVAL);
	assert_int_equal(lb_flow_insert(t, NULL, &r, 0, 0, 0), -EINVAL);
	assert_int_equal(lb_flow_insert(t, &o, NULL, 0, 0, 0), -EINVAL);
	assert_int_equal(lb_flow_insert(t, &o, &o, 0, 0, 0), -EINVAL);
	bad = r;
	bad.proto = LB_FLOW_PROTO_UDP;
	assert_int_equal(lb_flow_insert(t, &o, &bad, 0, 0, 0), -EINVAL);
	bad = r;
	bad.pad[1] = 1;
	assert_int_equal(lb_flow_insert(t, &o, &bad, 0, 0, 0), -EINVAL);
	assert_int_equal(lb_flow_next(t, 0), LB_FLOW_NONE);

	assert_int_equal(lb_flow_insert(t, &o, &r, 0, 0, 0), 0);
	assert_int_equal(lb_flow_lookup(NULL, &o, &dir), LB_FLOW_NONE);
	assert_int_equal(lb_flow_lookup(t, NULL, &dir), LB_FLOW_NONE);
	assert_int_equal(lb_flow_lookup(t, &o, NULL), LB_FLOW_NONE);
	assert_int_equal(lb_flow_lookup(t, &o, &dir), 0);
	/* Either key already present refuses the whole flow. */
	assert_int_equal(lb_flow_insert(t, &o, &r2, 0, 0, 0), -EEXIST);
	assert_int_equal(lb_flow_insert(t, &o2, &r, 0, 0, 0), -EEXIST);
	/* The client key of one flow as the backend key of another. */
	assert_int_equal(lb_flow_insert(t, &o2, &o, 0, 0, 0), -EEXIST);
	assert_int_equal(lb_flow_insert(t, &o2, &r2, 0, 0, 0), 1);
	lb_flow_stats_get(t, &st);
	assert_int_equal(st.dup, 3);
	assert_int_equal(st.flows, 2);
	assert_int_equal(st.inserts, 2);
	assert_int_equal(st.refused, 0);
	lb_flow_table_free(t);
}

/* Keys whose index probe starts at slot @p home; returns how many found. */
static unsigned int
keys_at_home(const struct lb_flow_table *t, uint32_t home,
	     struct lb_flow_key *out, unsigned int want)
{
	unsigned int n = 0;

	for (uint32_t i = 0; n < want && i < 1000000; i++) {
		struct lb_flow_key k;

		lb_flow_key_set(&k, ip4(100, 64, (uint8_t)(i >> 8),
					(uint8_t)i),
				ip4(192, 0, 2, 1), htons((uint16_t)(i >> 16)),
				htons(443), LB_FLOW_PROTO_TCP);
		if ((lb_flow_sig(lb_flow_hash(t->seed, &k)) & t->slot_mask) ==
		    home)
			out[n++] = k;
	}
	return n;
}

/* lb_flow_peek() names the flow a lookup finds when no other key of the
 * run shares its hash bits, NONE on an empty run, and the first match of
 * the run (keys not compared) when one does. */
static void
test_peek(void **state)
{
	struct lb_flow_table *t = table(64);
	struct lb_flow_key o, r;
	enum lb_flow_dir dir;
	uint64_t h;

	(void)state;
	nth_keys(0, LB_FLOW_PROTO_TCP, &o, &r);
	assert_int_equal(lb_flow_peek(t, lb_flow_hash(t->seed, &o)),
			 LB_FLOW_NONE);
	for (uint32_t i = 0; i < 40; i++)
		assert_int_equal(insert_nth(t, i, LB_FLOW_PROTO_TCP, 0),
				 (int)i);
	for (uint32_t i = 0; i < 40; i++) {
		nth_keys(i, LB_FLOW_PROTO_TCP, &o, &r);
		assert_int_equal(lb_flow_peek(t, lb_flow_hash(t->seed, &o)),
				 lb_flow_lookup(t, &o, &dir));
		assert_int_equal(lb_flow_peek(t, lb_flow_hash(t->seed, &r)),
				 i);
	}
	/* Same hash bits as flow 7's reply key, another key: the guess is
	 * flow 7, the lookup finds nothing. */
	nth_keys(7, LB_FLOW_PROTO_TCP, &o, &r);
	h = lb_flow_hash(t->seed, &r);
	nth_keys(1000, LB_FLOW_PROTO_TCP, &o, &r);
	assert_int_equal(lb_flow_peek(t, h), 7);
	assert_int_equal(lb_flow_lookup_hash(t, &r, h, &dir), LB_FLOW_NONE);
	lb_flow_table_free(t);
}

static void
test_colliding_buckets(void **state)
{
	/* 32 slots; one cluster in the middle, one wrapping past the end. */
	static const uint32_t homes[] = { 5, 31 };
	enum { NB = 6 };

	(void)state;
	for (size_t h = 0; h < ARRAY_SIZE(homes); h++) {
		struct lb_flow_table *t = table(8);
		struct lb_flow_key k[2 * NB];
		enum lb_flow_dir dir;
		int idx[NB];

		assert_int_equal(t->slot_mask, 31);
		assert_int_equal(keys_at_home(t, homes[h], k, 2 * NB), 2 * NB);
		/* NB flows, all 2 NB keys probing from the same slot. */
		for (int i = 0; i < NB; i++) {
			idx[i] = lb_flow_insert(t, &k[2 * i], &k[2 * i + 1], 0,
						(uint32_t)i, 0);
			assert_true(idx[i] >= 0);
		}
		for (int i = 0; i < NB; i++) {
			assert_int_equal(lb_flow_lookup(t, &k[2 * i], &dir),
					 idx[i]);
			assert_int_equal(dir, O);
			assert_int_equal(lb_flow_lookup(t, &k[2 * i + 1], &dir),
					 idx[i]);
			assert_int_equal(dir, R);
		}
		/* Deleting from the front and middle of the cluster must
		 * leave every later key reachable. */
		assert_int_equal(lb_flow_delete(t, (uint32_t)idx[0]), 0);
		assert_int_equal(lb_flow_delete(t, (uint32_t)idx[3]), 0);
		for (int i = 0; i < NB; i++) {
			uint32_t want = (i == 0 || i == 3) ? LB_FLOW_NONE
							   : (uint32_t)idx[i];

			assert_int_equal(lb_flow_lookup(t, &k[2 * i], &dir),
					 want);
			assert_int_equal(lb_flow_lookup(t, &k[2 * i + 1], &dir),
					 want);
		}
		/* The cluster shrank: exactly 8 slots remain in use. */
		{
			const uint64_t *s = lb_flow_slots(t);
			unsigned int used = 0;

			for (uint32_t i = 0; i <= t->slot_mask; i++)
				used += s[i] != UINT64_MAX;
			assert_int_equal(used, 2 * (NB - 2));
		}
		assert_true(lb_flow_insert(t, &k[6], &k[7], 0, 0, 0) >= 0);
		assert_true(lb_flow_lookup(t, &k[7], &dir) != LB_FLOW_NONE);
		lb_flow_table_free(t);
	}
}

static void
test_cluster_with_mixed_homes(void **state)
{
	/* Slots 5, 6, 7 hold keys whose homes are 5, 6 and 5. Removing the
	 * first must pull the home-5 key back but leave the home-6 key in
	 * place ahead of its home, whatever order the keys were added. */
	static const uint32_t home[3] = { 5, 6, 5 };
	static const int del_rows[] = { 0, 1, 2 };

	(void)state;
	for (size_t d = 0; d < ARRAY_SIZE(del_rows); d++) {
		struct lb_flow_table *t = table(8);
		struct lb_flow_key k[3], far[3];
		enum lb_flow_dir dir;
		int idx[3];

		assert_int_equal(keys_at_home(t, 20, far, 3), 3);
		for (int i = 0; i < 3; i++) {
			struct lb_flow_key tmp[4];

			/* distinct keys: skip those already taken */
			assert_int_equal(keys_at_home(t, home[i], tmp, 4), 4);
			k[i] = tmp[i == 2 ? 1 : 0];
			/* a flow's other key lands far from the cluster */
			far[i].dport = htons((uint16_t)(443 + i));
			while ((lb_flow_sig(lb_flow_hash(t->seed, &far[i])) &
				t->slot_mask) < 16)
				far[i].sport++;
			idx[i] = lb_flow_insert(t, &k[i], &far[i], 0, 0, 0);
			assert_true(idx[i] >= 0);
		}
		assert_int_equal(lb_flow_delete(t, (uint32_t)idx[del_rows[d]]),
				 0);
		for (int i = 0; i < 3; i++)
			assert_int_equal(lb_flow_lookup(t, &k[i], &dir),
					 i == del_rows[d] ? LB_FLOW_NONE
							  : (uint32_t)idx[i]);
		lb_flow_table_free(t);
	}
}

static void
test_full_table_refuses(void **state)
{
	enum { CAP = 16 };
	struct lb_flow_table *t = table(CAP);
	struct lb_flow_stats st;

	(void)state;
	for (uint32_t i = 0; i < CAP; i++)
		assert_int_equal(insert_nth(t, i, LB_FLOW_PROTO_TCP, SEC(i)),
				 (int)i);
	for (uint32_t i = CAP; i < CAP + 5; i++)
		assert_int_equal(insert_nth(t, i, LB_FLOW_PROTO_TCP, SEC(99)),
				 -ENOSPC);
	lb_flow_stats_get(t, &st);
	assert_int_equal(st.refused, 5);
	assert_int_equal(st.flows, CAP);
	/* Nothing was evicted, not even the oldest flow. */
	for (uint32_t i = 0; i < CAP; i++) {
		const struct lb_flow *f = lb_flow_get(t, i);

		assert_int_equal(lookup_nth(t, i, LB_FLOW_PROTO_TCP, O), i);
		assert_int_equal(lookup_nth(t, i, LB_FLOW_PROTO_TCP, R), i);
		assert_non_null(f);
		assert_int_equal(f->be, i % 5);
		assert_int_equal(f->last_seen, SEC(i) >> LB_FLOW_TICK_SHIFT);
	}
	for (uint32_t i = CAP; i < CAP + 5; i++) {
		assert_int_equal(lookup_nth(t, i, LB_FLOW_PROTO_TCP, O),
				 LB_FLOW_NONE);
		assert_int_equal(lookup_nth(t, i, LB_FLOW_PROTO_TCP, R),
				 LB_FLOW_NONE);
	}
	/* One flow leaves, one new flow fits, in the freed entry. */
	assert_int_equal(lb_flow_delete(t, 7), 0);
	assert_int_equal(insert_nth(t, CAP, LB_FLOW_PROTO_TCP, SEC(100)), 7);
	assert_int_equal(insert_nth(t, CAP + 1, LB_FLOW_PROTO_TCP, SEC(100)),
			 -ENOSPC);
	lb_flow_table_free(t);
}

static void
test_delete_then_reinsert(void **state)
{
	struct lb_flow_table *t = table(4);
	struct lb_flow_stats st;

	(void)state;
	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(insert_nth(t, i, LB_FLOW_PROTO_UDP, 0),
				 (int)i);
	assert_int_equal(lb_flow_delete(t, 1), 0);
	assert_int_equal(lb_flow_delete(t, 1), -ENOENT);
	assert_null(lb_flow_get(t, 1));
	assert_int_equal(lookup_nth(t, 1, LB_FLOW_PROTO_UDP, O), LB_FLOW_NONE);
	assert_int_equal(lookup_nth(t, 1, LB_FLOW_PROTO_UDP, R), LB_FLOW_NONE);
	assert_int_equal(lookup_nth(t, 0, LB_FLOW_PROTO_UDP, R), 0);
	assert_int_equal(lookup_nth(t, 2, LB_FLOW_PROTO_UDP, O), 2);
	/* Deleted flows are not expired later. */
	assert_int_equal(lb_flow_expire(t, SEC(3600), 100, NULL, NULL), 2);
	assert_true(insert_nth(t, 1, LB_FLOW_PROTO_UDP, SEC(3600)) >= 0);
	assert_true(lookup_nth(t, 1, LB_FLOW_PROTO_UDP, R) != LB_FLOW_NONE);
	lb_flow_stats_get(t, &st);
	assert_int_equal(st.deleted, 1);
	assert_int_equal(st.expired[LB_FLOW_UDP_UNREPLIED], 2);
	assert_int_equal(st.flows, 1);
	assert_int_equal(st.inserts, 4);
	lb_flow_table_free(t);
}

struct step {
	enum lb_flow_dir dir;
	uint8_t flags;
	uint8_t want;
};

#define MAX_STEPS 9

static const struct {
	const char *name;
	uint8_t proto;
	struct step s[MAX_STEPS];
	unsigned int n;
} tcp_cases[] = {
	{ "handshake, client closes first", LB_FLOW_PROTO_TCP,
	  { { O, SYN, LB_FLOW_SYN_SENT },
	    { R, SYN | ACK, LB_FLOW_SYN_RECV },
	    { O, ACK, LB_FLOW_ESTABLISHED },
	    { O, PSH | ACK, LB_FLOW_ESTABLISHED },
	    { R, PSH | ACK, LB_FLOW_ESTABLISHED },
	    { O, FIN | ACK, LB_FLOW_CLOSING },
	    { R, ACK, LB_FLOW_CLOSING },
	    { R, FIN | ACK, LB_FLOW_TIME_WAIT },
	    { O, ACK, LB_FLOW_TIME_WAIT } },
	  9 },
	{ "backend closes first", LB_FLOW_PROTO_TCP,
	  { { O, SYN, LB_FLOW_SYN_SENT },
	    { R, SYN | ACK, LB_FLOW_SYN_RECV },
	    { O, ACK, LB_FLOW_ESTABLISHED },
	    { R, FIN | ACK, LB_FLOW_CLOSING },
	    { R, FIN | ACK, LB_FLOW_CLOSING }, /* retransmitted FIN */
	    { O, FIN | ACK, LB_FLOW_TIME_WAIT } },
	  6 },
	{ "backend refuses with RST", LB_FLOW_PROTO_TCP,
	  { { O, SYN, LB_FLOW_SYN_SENT },
	    { O, SYN, LB_FLOW_SYN_SENT }, /* retransmitted SYN */
	    { R, RST | ACK, LB_FLOW_CLOSED },
	    { O, ACK, LB_FLOW_CLOSED },
	    { O, FIN, LB_FLOW_CLOSED } },
	  5 },
	{ "client RST when established", LB_FLOW_PROTO_TCP,
	  { { R, SYN | ACK, LB_FLOW_SYN_RECV },
	    { O, ACK | PSH, LB_FLOW_ESTABLISHED },
	    { O, RST, LB_FLOW_CLOSED } },
	  3 },
	{ "no ACK before SYN-ACK", LB_FLOW_PROTO_TCP,
	  { { O, ACK, LB_FLOW_SYN_SENT },
	    { R, ACK, LB_FLOW_SYN_SENT },
	    { O, SYN | ACK, LB_FLOW_SYN_SENT }, /* SYN-ACK from client */
	    { R, SYN, LB_FLOW_SYN_SENT },
	    { R, SYN | ACK, LB_FLOW_SYN_RECV },
	    { R, SYN | ACK, LB_FLOW_SYN_RECV },
	    { R, ACK, LB_FLOW_SYN_RECV }, /* only the client's ACK counts */
	    { O, ACK, LB_FLOW_ESTABLISHED } },
	  8 },
	{ "FIN during the handshake", LB_FLOW_PROTO_TCP,
	  { { O, FIN, LB_FLOW_CLOSING },
	    { O, SYN, LB_FLOW_CLOSING }, /* no reuse while closing */
	    { O, FIN | ACK, LB_FLOW_CLOSING },
	    { R, SYN | ACK, LB_FLOW_CLOSING },
	    { R, RST, LB_FLOW_CLOSED } },
	  5 },
	{ "port reuse after TIME_WAIT", LB_FLOW_PROTO_TCP,
	  { { R, SYN | ACK, LB_FLOW_SYN_RECV },
	    { O, ACK, LB_FLOW_ESTABLISHED },
	    { O, FIN | ACK, LB_FLOW_CLOSING },
	    { R, FIN | ACK, LB_FLOW_TIME_WAIT },
	    { R, SYN, LB_FLOW_TIME_WAIT }, /* only the client reopens */
	    { O, SYN, LB_FLOW_SYN_SENT },
	    { R, SYN | ACK, LB_FLOW_SYN_RECV },
	    { O, ACK, LB_FLOW_ESTABLISHED },
	    /* the old FINs were forgotten: one FIN is CLOSING again */
	    { R, FIN | ACK, LB_FLOW_CLOSING } },
	  9 },
	{ "reuse after RST", LB_FLOW_PROTO_TCP,
	  { { O, RST, LB_FLOW_CLOSED },
	    { O, SYN | ACK, LB_FLOW_CLOSED },
	    { O, SYN, LB_FLOW_SYN_SENT } },
	  3 },
	{ "UDP ignores flags", LB_FLOW_PROTO_UDP,
	  { { O, 0, LB_FLOW_UDP_UNREPLIED },
	    { O, RST | FIN, LB_FLOW_UDP_UNREPLIED },
	    { R, RST, LB_FLOW_UDP } },
	  3 },
	{ "UDP answered stays answered", LB_FLOW_PROTO_UDP,
	  { { R, 0, LB_FLOW_UDP },
	    { O, 0, LB_FLOW_UDP },
	    { R, FIN, LB_FLOW_UDP } },
	  3 },
	{ "ICMP ignores flags", LB_IPPROTO_ICMP,
	  { { O, 0, LB_FLOW_OTHER }, { R, RST | FIN, LB_FLOW_OTHER } },
	  2 },
};

static void
test_tcp_state_machine(void **state)
{
	(void)state;
	for (size_t c = 0; c < ARRAY_SIZE(tcp_cases); c++) {
		struct lb_flow_table *t = table(4);
		struct lb_flow f;
		struct lb_flow_key o, r;
		int idx;

		nth_keys(0, tcp_cases[c].proto, &o, &r);
		idx = lb_flow_insert(t, &o, &r, 0, 0, 0);
		assert_int_equal(idx, 0);
		f = *lb_flow_get(t, 0);
		for (unsigned int i = 0; i < tcp_cases[c].n; i++) {
			const struct step *s = &tcp_cases[c].s[i];
			int got_pure = lb_flow_tcp_advance(&f, s->dir,
							   s->flags);
			int got = lb_flow_touch(t, 0, s->dir, s->flags, SEC(i));

			if (got != s->want || got_pure != s->want)
				fail_msg("%s, step %u: want %s, got %s/%s",
					 tcp_cases[c].name, i,
					 lb_flow_state_name(s->want),
					 lb_flow_state_name((unsigned)got),
					 lb_flow_state_name(
						 (unsigned)got_pure));
			/* The flow is on the list of its new state. */
			assert_int_equal(t->tail[s->want], 0);
			assert_int_equal(t->head[s->want], 0);
		}
		lb_flow_table_free(t);
	}
}

static void
test_tcp_advance_bad_input(void **state)
{
	struct lb_flow f;

	(void)state;
	memset(&f, 0, sizeof(f));
	f.state = LB_FLOW_ESTABLISHED;
	assert_int_equal(lb_flow_tcp_advance(NULL, O, FIN), -EINVAL);
	assert_int_equal(lb_flow_tcp_advance(&f, (enum lb_flow_dir)2, FIN),
			 -EINVAL);
	assert_int_equal(f.state, LB_FLOW_ESTABLISHED);
	f.state = LB_FLOW_FREE;
	assert_int_equal(lb_flow_tcp_advance(&f, O, SYN), -EINVAL);
	f.state = LB_FLOW_NB_STATES;
	assert_int_equal(lb_flow_tcp_advance(&f, O, SYN), -EINVAL);
}

static void
test_counters_and_flags(void **state)
{
	struct lb_flow_table *t = table(4);
	struct lb_flow *f;

	(void)state;
	assert_int_equal(insert_nth(t, 0, LB_FLOW_PROTO_TCP, 0), 0);
	f = lb_flow_get(t, 0);
	f->flags |= 0x30; /* caller's bits survive state changes */
	f->l7 = 1234;
	for (int i = 0; i < 5; i++)
		lb_flow_touch(t, 0, O, ACK, 0);
	for (int i = 0; i < 3; i++)
		lb_flow_touch(t, 0, R, ACK, 0);
	lb_flow_touch(t, 0, O, FIN | ACK, 0);
	assert_int_equal(f->pkts[O], 6);
	assert_int_equal(f->pkts[R], 3);
	assert_int_equal(f->flags, 0x30 | LB_FLOW_F_FIN_ORIG);
	assert_int_equal(f->l7, 1234);
	lb_flow_touch(t, 0, R, FIN | ACK, 0);
	assert_int_equal(f->flags,
			 0x30 | LB_FLOW_F_FIN_ORIG | LB_FLOW_F_FIN_REPLY);
	lb_flow_touch(t, 0, O, SYN, 0);
	assert_int_equal(f->flags, 0x30);
	assert_int_equal(f->state, LB_FLOW_SYN_SENT);
	lb_flow_table_free(t);
}

struct expired_log {
	uint32_t idx[64];
	uint32_t be[64];
	unsigned int n;
};

static void
log_expired(uint32_t idx, const struct lb_flow *f, void *ctx)
{
	struct expired_log *log = ctx;

	/* Still whole when the callback runs: the SNAT port is in key[R]. */
	assert_int_not_equal(f->state, LB_FLOW_FREE);
	assert_true(f->key[R].dport != 0);
	if (log->n < 64) {
		log->idx[log->n] = idx;
		log->be[log->n] = f->be;
		log->n++;
	}
}

static void
test_expiry_order_and_bounded_work(void **state)
{
	struct lb_flow_table *t = table(32);
	struct expired_log log = { .n = 0 };
	/* inserted (UDP, 300 s) at 0, 10, 20 ... 190 s */
	static const struct {
		uint64_t now;
		unsigned int max;
		unsigned int want;
		uint32_t first;
	} rows[] = {
		{ SEC(299), 100, 0, 0 },  /* nothing is 300 s old */
		{ SEC(301), 100, 1, 0 },  /* flow 0 only */
		{ SEC(355), 3, 3, 1 },    /* 1..5 due, 3 allowed */
		{ SEC(355), 3, 2, 4 },    /* the rest of them */
		{ SEC(355), 3, 0, 0 },    /* nothing left due */
		{ SEC(1000), 0, 0, 0 },   /* max 0 does nothing */
		{ SEC(1000), 100, 14, 6 } /* all the others */
	};

	(void)state;
	/* Each flow answered at once, so UDP's own timeout applies. */
	for (uint32_t i = 0; i < 20; i++) {
		assert_int_equal(
			insert_nth(t, i, LB_FLOW_PROTO_UDP, SEC(10 * i)),
			(int)i);
		assert_int_equal(lb_flow_touch(t, i, R, 0, SEC(10 * i)),
				 LB_FLOW_UDP);
	}
	for (size_t r = 0; r < ARRAY_SIZE(rows); r++) {
		unsigned int n;

		log.n = 0;
		n = lb_flow_expire(t, rows[r].now, rows[r].max, log_expired,
				   &log);
		assert_int_equal(n, rows[r].want);
		assert_int_equal(log.n, rows[r].want);
		/* Oldest first, and each one gone from the index. */
		for (unsigned int i = 0; i < n; i++) {
			assert_int_equal(log.idx[i], rows[r].first + i);
			assert_int_equal(log.be[i], (rows[r].first + i) % 5);
			assert_int_equal(lookup_nth(t, log.idx[i],
						    LB_FLOW_PROTO_UDP, O),
					 LB_FLOW_NONE);
		}
	}
	assert_int_equal(t->stats.expired[LB_FLOW_UDP], 20);
	assert_int_equal(t->stats.flows, 0);
	lb_flow_table_free(t);
}

static void
test_touch_delays_expiry(void **state)
{
	struct lb_flow_table *t = table(8);

	(void)state;
	assert_int_equal(insert_nth(t, 0, LB_FLOW_PROTO_UDP, 0), 0);
	assert_int_equal(insert_nth(t, 1, LB_FLOW_PROTO_UDP, 0), 1);
	assert_int_equal(insert_nth(t, 2, LB_FLOW_PROTO_UDP, 0), 2);
	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(lb_flow_touch(t, i, R, 0, 0), LB_FLOW_UDP);
	/* flow 0 sees a packet at 200 s, flow 2 at 250 s */
	assert_int_equal(lb_flow_touch(t, 0, R, 0, SEC(200)), LB_FLOW_UDP);
	assert_int_equal(lb_flow_touch(t, 2, O, 0, SEC(250)), LB_FLOW_UDP);
	assert_int_equal(t->head[LB_FLOW_UDP], 1);
	assert_int_equal(t->tail[LB_FLOW_UDP], 2);
	assert_int_equal(lb_flow_expire(t, SEC(301), 10, NULL, NULL), 1);
	assert_null(lb_flow_get(t, 1));
	assert_int_equal(lb_flow_expire(t, SEC(499), 10, NULL, NULL), 0);
	assert_int_equal(lb_flow_expire(t, SEC(501), 10, NULL, NULL), 1);
	assert_null(lb_flow_get(t, 0));
	assert_non_null(lb_flow_get(t, 2));
	assert_int_equal(lb_flow_expire(t, SEC(551), 10, NULL, NULL), 1);
	/* A clock that steps back does not expire anything early. */
	assert_int_equal(insert_nth(t, 3, LB_FLOW_PROTO_UDP, SEC(1000)), 2);
	assert_int_equal(lb_flow_expire(t, SEC(900), 10, NULL, NULL), 0);
	lb_flow_table_free(t);
}

/* Flags that bring a fresh TCP flow into each state. */
static const struct {
	uint8_t state;
	uint8_t proto;
	struct step s[3];
	unsigned int n;
} into_state[] = {
	{ LB_FLOW_SYN_SENT, LB_FLOW_PROTO_TCP, { { O, SYN, 0 } }, 1 },
	{ LB_FLOW_SYN_RECV, LB_FLOW_PROTO_TCP, { { R, SYN | ACK, 0 } }, 1 },
	{ LB_FLOW_ESTABLISHED, LB_FLOW_PROTO_TCP,
	  { { R, SYN | ACK, 0 }, { O, ACK, 0 } }, 2 },
	{ LB_FLOW_CLOSING, LB_FLOW_PROTO_TCP,
	  { { R, SYN | ACK, 0 }, { O, ACK, 0 }, { R, FIN, 0 } }, 3 },
	{ LB_FLOW_TIME_WAIT, LB_FLOW_PROTO_TCP,
	  { { O, ACK, 0 }, { R, FIN, 0 }, { O, FIN, 0 } }, 3 },
	{ LB_FLOW_CLOSED, LB_FLOW_PROTO_TCP, { { R, RST, 0 } }, 1 },
	{ LB_FLOW_UDP, LB_FLOW_PROTO_UDP, { { R, 0, 0 } }, 1 },
	{ LB_FLOW_UDP_UNREPLIED, LB_FLOW_PROTO_UDP, { { O, 0, 0 } }, 1 },
	{ LB_FLOW_OTHER, LB_IPPROTO_ICMP, { { O, 0, 0 } }, 1 },
};

static void
test_timeout_per_state(void **state)
{
	static const enum lb_flow_timeout_preset presets[] = {
		LB_FLOW_TIMEOUTS_IPVS, LB_FLOW_TIMEOUTS_DPVS
	};
	const size_t n = ARRAY_SIZE(into_state);
	const uint64_t t0 = SEC(1000);

	(void)state;
	for (size_t p = 0; p < ARRAY_SIZE(presets); p++) {
		struct lb_flow_timeouts to;
		struct lb_flow_table *t;
		size_t order[ARRAY_SIZE(into_state)];

		lb_flow_timeouts_preset(&to, presets[p]);
		t = lb_flow_table_create(16, &to, 7);
		assert_non_null(t);
		/* One flow per state, last seen at t0. */
		for (size_t i = 0; i < n; i++) {
			assert_int_equal(insert_nth(t, (uint32_t)i,
						    into_state[i].proto, 0),
					 (int)i);
			for (unsigned int k = 0; k < into_state[i].n; k++)
				lb_flow_touch(t, (uint32_t)i,
					      into_state[i].s[k].dir,
					      into_state[i].s[k].flags, t0);
			assert_int_equal(lb_flow_get(t, (uint32_t)i)->state,
					 into_state[i].state);
		}
		/* Visit the states by increasing timeout. */
		for (size_t i = 0; i < n; i++) {
			size_t j = i;

			while (j > 0 && to.ns[into_state[order[j - 1]].state] >
						to.ns[into_state[i].state]) {
				order[j] = order[j - 1];
				j--;
			}
			order[j] = i;
		}
		for (size_t k = 0; k < n; k++) {
			size_t i = order[k];
			uint64_t tmo = to.ns[into_state[i].state];

			/* Not 2 ms before the timeout (one tick of rounding
			 * either side), but 2 ms after it; exactly the flows
			 * with a timeout up to this one are gone. */
			lb_flow_expire(t, t0 + tmo - MS(2), 100, NULL, NULL);
			if (k == 0 || to.ns[into_state[order[k - 1]].state] <
					      tmo)
				assert_non_null(lb_flow_get(t, (uint32_t)i));
			lb_flow_expire(t, t0 + tmo + MS(2), 100, NULL, NULL);
			for (size_t j = 0; j < n; j++) {
				uint8_t sj = into_state[j].state;

				assert_int_equal(
					lb_flow_get(t, (uint32_t)j) == NULL,
					to.ns[sj] <= tmo);
				assert_int_equal(t->stats.expired[sj],
						 to.ns[sj] <= tmo);
			}
		}
		lb_flow_table_free(t);
	}
}

static void
test_set_timeout_runtime(void **state)
{
	struct lb_flow_table *t = table(4);

	(void)state;
	assert_int_equal(insert_nth(t, 0, LB_FLOW_PROTO_UDP, 0), 0);
	assert_int_equal(lb_flow_expire(t, SEC(10), 10, NULL, NULL), 0);
	assert_int_equal(lb_flow_set_timeout(t, LB_FLOW_UDP_UNREPLIED, SEC(5)), 0);
	assert_int_equal(lb_flow_timeout_ns(t, LB_FLOW_UDP_UNREPLIED),
			 ((SEC(5) + TICK_NS - 1) / TICK_NS) * TICK_NS);
	assert_int_equal(lb_flow_expire(t, SEC(10), 10, NULL, NULL), 1);
	lb_flow_table_free(t);
}

static void
test_expiry_rotates_classes(void **state)
{
	struct lb_flow_table *t = table(16);
	unsigned int total = 0;

	(void)state;
	/* 4 UDP flows and 4 RST-closed TCP flows, all long expired. */
	for (uint32_t i = 0; i < 8; i++) {
		uint8_t proto = i < 4 ? LB_FLOW_PROTO_UDP : LB_FLOW_PROTO_TCP;

		assert_int_equal(insert_nth(t, i, proto, 0), (int)i);
		if (i >= 4)
			lb_flow_touch(t, i, R, RST, 0);
	}
	/* One flow per call: the classes take turns. */
	for (unsigned int c = 0; c < 8; c++) {
		total += lb_flow_expire(t, SEC(3600), 1, NULL, NULL);
		assert_int_equal(total, c + 1);
		assert_int_equal(t->stats.expired[LB_FLOW_UDP_UNREPLIED], (c + 1) / 2);
		assert_int_equal(t->stats.expired[LB_FLOW_CLOSED], c / 2 + 1);
	}
	assert_int_equal(t->stats.flows, 0);
	lb_flow_table_free(t);
}

static void
test_iterate_per_backend(void **state)
{
	struct lb_flow_table *t = table(64);
	uint32_t per_be[5] = { 0 }, n = 0;

	(void)state;
	for (uint32_t i = 0; i < 50; i++)
		assert_int_equal(insert_nth(t, i, LB_FLOW_PROTO_TCP, 0),
				 (int)i);
	for (uint32_t i = 0; i < 50; i += 7)
		assert_int_equal(lb_flow_delete(t, i), 0);
	for (uint32_t i = lb_flow_next(t, 0); i != LB_FLOW_NONE;
	     i = lb_flow_next(t, i + 1)) {
		per_be[lb_flow_get(t, i)->be]++;
		n++;
	}
	assert_int_equal(n, 50 - 8);
	assert_int_equal(n, t->stats.flows);
	/* be = i % 5; deleted i = 0, 7, 14, 21, 28, 35, 42, 49 have
	 * backends 0, 2, 4, 1, 3, 0, 2, 4. */
	{
		static const uint32_t want[5] = { 8, 9, 8, 9, 8 };

		for (int b = 0; b < 5; b++)
			assert_int_equal(per_be[b], want[b]);
	}
	lb_flow_table_free(t);
}

/* Reference model: an array of flows scanned linearly. */
struct ref_flow {
	struct lb_flow_key k[2];
	uint64_t last;
	int live;
	int replied; /* a packet came from the backend side */
};

#define REF_CAP 64
#define REF_UNIVERSE 600

/* Timeouts of the DPVS preset with ESTABLISHED and both UDP states set to
 * @p est. */
static struct lb_flow_timeouts
svc_to(uint64_t est)
{
	struct lb_flow_timeouts to;

	lb_flow_timeouts_preset(&to, LB_FLOW_TIMEOUTS_DPVS);
	to.ns[LB_FLOW_ESTABLISHED] = est;
	to.ns[LB_FLOW_UDP] = est;
	to.ns[LB_FLOW_UDP_UNREPLIED] = est;
	return to;
}

/* Inserts flow @p i of service @p svc and brings it to ESTABLISHED. */
static uint32_t
established(struct lb_flow_table *t, uint32_t i, uint16_t svc, uint64_t now)
{
	struct lb_flow_key o, r;
	int idx;

	nth_keys(i, LB_FLOW_PROTO_TCP, &o, &r);
	idx = lb_flow_insert(t, &o, &r, svc, 0, now);
	assert_true(idx >= 0);
	lb_flow_touch(t, (uint32_t)idx, R, SYN | ACK, now);
	assert_int_equal(lb_flow_touch(t, (uint32_t)idx, O, ACK, now),
			 LB_FLOW_ESTABLISHED);
	return (uint32_t)idx;
}

/* Services with different timeouts in one table: each flow expires after
 * its own service's timeout, whatever the order the flows came in. */
static void
test_svc_timeouts(void **state)
{
	struct lb_flow_table *t = table(64);
	/* service 0: 2 s, 1: 900 s, 2: 2 s (shares 0's class), 3: 60 s,
	 * 4: the table's own (90 s) */
	struct lb_flow_timeouts to[5] = {svc_to(SEC(2)), svc_to(SEC(900)),
					 svc_to(SEC(2)), svc_to(SEC(60))};
	static const struct {
		uint64_t now;
		int alive[5]; /* flows of each service still there */
	} rows[] = {
		{SEC(2) - MS(2), {1, 1, 1, 1, 1}},
		{SEC(2) + MS(2), {0, 1, 0, 1, 1}},
		{SEC(60) + MS(2), {0, 1, 0, 0, 1}},
		{SEC(90) + MS(2), {0, 1, 0, 0, 0}},
		{SEC(900) - MS(2), {0, 1, 0, 0, 0}},
		{SEC(900) + MS(2), {0, 0, 0, 0, 0}},
	};
	uint32_t idx[20];

	(void)state;
	lb_flow_set_timeout(t, LB_FLOW_ESTABLISHED, SEC(90));
	assert_int_equal(lb_flow_svc_timeouts(t, to, 5), 0);
	assert_int_equal(t->svc_class[0], t->svc_class[2]);
	assert_int_not_equal(t->svc_class[0], t->svc_class[1]);
	assert_int_not_equal(t->svc_class[0], 0);
	assert_int_equal(t->svc_class[4], 0);
	assert_int_equal(t->svc_class[5], 0);
	assert_int_equal(lb_flow_svc_timeout_ns(t, 1, LB_FLOW_ESTABLISHED),
			 ((SEC(900) + TICK_NS - 1) / TICK_NS) * TICK_NS);
	assert_int_equal(lb_flow_svc_timeout_ns(t, 4, LB_FLOW_ESTABLISHED),
			 lb_flow_timeout_ns(t, LB_FLOW_ESTABLISHED));
	assert_int_equal(lb_flow_svc_timeout_ns(t, 1000, LB_FLOW_UDP),
			 lb_flow_timeout_ns(t, LB_FLOW_UDP));
	/* Services interleaved, the long ones first. */
	for (uint32_t i = 0; i < 20; i++)
		idx[i] = established(t, i, (uint16_t)(4 - i % 5), 0);
	for (size_t r = 0; r < ARRAY_SIZE(rows); r++) {
		lb_flow_expire(t, rows[r].now, 100, NULL, NULL);
		for (uint32_t i = 0; i < 20; i++)
			assert_int_equal(lb_flow_get(t, idx[i]) != NULL,
					 rows[r].alive[4 - i % 5]);
	}
	assert_int_equal(t->stats.expired[LB_FLOW_ESTABLISHED], 20);
	assert_int_equal(t->stats.flows, 0);
	lb_flow_table_free(t);
}

/* A service whose timeouts change takes its idle flows along when it had
 * its class alone; one that shared a class moves with its next packet. */
static void
test_svc_timeouts_change(void **state)
{
	struct lb_flow_table *t = table(64);
	struct lb_flow_timeouts to[3] = {svc_to(SEC(600)), svc_to(SEC(600)),
					 svc_to(SEC(30))};
	uint32_t a, b, b2, c;
	unsigned int cls;

	(void)state;
	assert_int_equal(lb_flow_svc_timeouts(t, to, 3), 0);
	a = established(t, 0, 0, 0);
	b = established(t, 1, 1, 0);
	b2 = established(t, 2, 1, SEC(1));
	c = established(t, 3, 2, 0);
	cls = t->svc_class[2];
	/* Service 2 alone in its class: 30 s -> 5 s applies to its flow. */
	to[2] = svc_to(SEC(5));
	assert_int_equal(lb_flow_svc_timeouts(t, to, 3), 0);
	assert_int_equal(t->svc_class[2], cls);
	assert_int_equal(lb_flow_expire(t, SEC(6), 100, NULL, NULL), 1);
	assert_null(lb_flow_get(t, c));
	/* Service 1 shared 600 s with 0: it gets a class of its own (10 s),
	 * and its flows keep 600 s until their next packet. */
	to[1] = svc_to(SEC(10));
	assert_int_equal(lb_flow_svc_timeouts(t, to, 3), 0);
	assert_int_not_equal(t->svc_class[1], t->svc_class[0]);
	assert_int_equal(lb_flow_expire(t, SEC(20), 100, NULL, NULL), 0);
	/* b2 is the tail of the 600 s list and b its middle... */
	lb_flow_touch(t, b2, O, ACK, SEC(20));
	/* ...now b heads nothing, b2 heads the 10 s list. */
	assert_int_equal(t->head[t->svc_class[1] * LB_FLOW_NB_STATES +
				 LB_FLOW_ESTABLISHED],
			 b2);
	assert_int_equal(lb_flow_expire(t, SEC(29), 100, NULL, NULL), 0);
	assert_int_equal(lb_flow_expire(t, SEC(31), 100, NULL, NULL), 1);
	assert_null(lb_flow_get(t, b2));
	assert_non_null(lb_flow_get(t, b));
	assert_int_equal(lb_flow_expire(t, SEC(601), 100, NULL, NULL), 2);
	assert_null(lb_flow_get(t, a));
	assert_null(lb_flow_get(t, b));
	assert_int_equal(t->stats.flows, 0);
	lb_flow_table_free(t);
}

/* More distinct sets than classes: the extra services share the class
 * with the longest ESTABLISHED timeout; bad sets change nothing. */
static void
test_svc_timeouts_limits(void **state)
{
	struct lb_flow_table *t = table(8);
	struct lb_flow_timeouts to[LB_FLOW_CLASSES + 4];
	uint8_t before[LB_FLOW_MAX_SVCS];
	unsigned int longest;

	(void)state;
	assert_int_equal(lb_flow_svc_timeouts(NULL, to, 1), -EINVAL);
	assert_int_equal(lb_flow_svc_timeouts(t, NULL, 1), -EINVAL);
	for (unsigned int i = 0; i < ARRAY_SIZE(to); i++)
		to[i] = svc_to(SEC(10 + i));
	/* 15 classes for 20 sets: 5 share. */
	assert_int_equal(lb_flow_svc_timeouts(t, to, ARRAY_SIZE(to)), 5);
	longest = t->svc_class[LB_FLOW_CLASSES - 2];
	for (unsigned int i = 0; i < ARRAY_SIZE(to); i++) {
		if (i < LB_FLOW_CLASSES - 1)
			assert_int_equal(lb_flow_svc_timeout_ns(
						 t, i, LB_FLOW_ESTABLISHED) >>
						 LB_FLOW_TICK_SHIFT,
					 (SEC(10 + i) + TICK_NS - 1) / TICK_NS);
		else
			assert_int_equal(t->svc_class[i], longest);
	}
	memcpy(before, t->svc_class, sizeof(before));
	to[3].ns[LB_FLOW_CLOSED] = 0;
	assert_int_equal(lb_flow_svc_timeouts(t, to, 4), -EINVAL);
	to[3].ns[LB_FLOW_CLOSED] = LB_FLOW_TIMEOUT_MAX_NS + 1;
	assert_int_equal(lb_flow_svc_timeouts(t, to, 4), -ERANGE);
	assert_memory_equal(before, t->svc_class, sizeof(before));
	/* All zero: the table's own timeouts. */
	memset(&to[0], 0, sizeof(to[0]));
	to[3] = svc_to(SEC(13));
	assert_int_equal(lb_flow_svc_timeouts(t, to, 4), 0);
	assert_int_equal(t->svc_class[0], 0);
	assert_int_equal(t->svc_class[4], 0);
	lb_flow_table_free(t);
}

/*
 * Random inserts, packets, deletes, expiries and timeout changes of six
 * services against a model: each flow expires exactly when the timeout of
 * the list it joined at its last packet has passed, so the lists stay
 * ordered and linked whatever classes come and go.
 */
static void
test_svc_timeouts_random(void **state)
{
	enum { CAP = 64, NSVC = 6 };
	struct lb_flow_table *t = table(CAP);
	struct {
		int live;
		uint64_t last;
		unsigned int list;
	} m[CAP];
	struct lb_flow_timeouts to[NSVC];
	struct lb_xoshiro x;
	struct lb_rng rng;
	uint64_t now = SEC(1);
	uint32_t next_key = 0;

	(void)state;
	memset(m, 0, sizeof(m));
	lb_xoshiro_seed(&x, 77);
	rng = lb_rng_xoshiro(&x);
	for (int op = 0; op < 40000; op++) {
		uint64_t dice = lb_rng_below(&rng, 100);
		uint32_t i = (uint32_t)lb_rng_below(&rng, CAP);

		now += lb_rng_below(&rng, MS(200));
		if (op % 500 == 0) {
			/* Four values for six services: classes are shared,
			 * split and re-valued. */
			for (unsigned int s = 0; s < NSVC; s++)
				to[s] = svc_to(SEC(1 + lb_rng_below(&rng, 4)));
			assert_int_equal(lb_flow_svc_timeouts(t, to, NSVC), 0);
		}
		if (dice < 30 && !m[i].live) {
			struct lb_flow_key o, r;
			uint16_t svc = (uint16_t)lb_rng_below(&rng, NSVC + 1);
			int idx;

			nth_keys(next_key++, LB_FLOW_PROTO_UDP, &o, &r);
			idx = lb_flow_insert(t, &o, &r, svc, 0, now);
			if (idx < 0)
				continue;
			m[idx].live = 1;
			m[idx].last = now;
			m[idx].list = (svc < NSVC ? t->svc_class[svc] : 0) *
					      LB_FLOW_NB_STATES +
				      LB_FLOW_UDP_UNREPLIED;
		} else if (dice < 70 && m[i].live) {
			const struct lb_flow *f = lb_flow_get(t, i);

			assert_int_equal(lb_flow_touch(t, i, O, 0, now),
					 LB_FLOW_UDP_UNREPLIED);
			m[i].last = now;
			m[i].list = t->svc_class[f->svc] * LB_FLOW_NB_STATES +
				    LB_FLOW_UDP_UNREPLIED;
		} else if (dice < 75 && m[i].live) {
			assert_int_equal(lb_flow_delete(t, i), 0);
			m[i].live = 0;
		} else if (dice < 90) {
			uint32_t now_t = (uint32_t)(now >> LB_FLOW_TICK_SHIFT);
			unsigned int due = 0;

			for (uint32_t k = 0; k < CAP; k++) {
				uint32_t last_t =
					(uint32_t)(m[k].last >>
						   LB_FLOW_TICK_SHIFT);

				if (m[k].live &&
				    now_t - last_t > t->timeout[m[k].list]) {
					m[k].live = 0;
					due++;
				}
			}
			assert_int_equal(
				lb_flow_expire(t, now, CAP, NULL, NULL), due);
			for (uint32_t k = 0; k < CAP; k++)
				assert_int_equal(lb_flow_get(t, k) != NULL,
						 m[k].live);
		}
	}
	assert_true(t->stats.expired[LB_FLOW_UDP_UNREPLIED] > 1000);
	lb_flow_table_free(t);
}

static void
random_keys(uint32_t u, struct lb_flow_key *o, struct lb_flow_key *r)
{
	/* A small universe of flows so that duplicates and refusals occur;
	 * flow u's backend key depends on u only, keys never repeat across
	 * flows except through the same u. */
	lb_flow_key_set(o, ip4(100, 64, 0, (uint8_t)(u % 50)),
			ip4(192, 0, 2, 1), htons((uint16_t)(1000 + u / 50)),
			htons(80), LB_FLOW_PROTO_UDP);
	lb_flow_key_set(r, ip4(10, 0, 0, 1), ip4(203, 0, 113, 1), htons(53),
			htons((uint16_t)(2000 + u)), LB_FLOW_PROTO_UDP);
}

static void
test_random_against_reference(void **state)
{
	struct lb_flow_table *t = table(REF_CAP);
	static struct ref_flow ref[REF_UNIVERSE];
	/* the table index of universe member u, while live */
	static uint32_t where[REF_UNIVERSE];
	struct lb_xoshiro x;
	struct lb_rng rng;
	uint64_t now = SEC(1);
	uint32_t timeout_ticks;
	unsigned int live = 0;

	(void)state;
	lb_xoshiro_seed(&x, 2024);
	rng = lb_rng_xoshiro(&x);
	memset(ref, 0, sizeof(ref));
	assert_int_equal(lb_flow_set_timeout(t, LB_FLOW_UDP, SEC(20)), 0);
	assert_int_equal(lb_flow_set_timeout(t, LB_FLOW_UDP_UNREPLIED,
					     SEC(20)),
			 0);
	timeout_ticks = (uint32_t)(lb_flow_timeout_ns(t, LB_FLOW_UDP) >>
				   LB_FLOW_TICK_SHIFT);

	for (int op = 0; op < 30000; op++) {
		uint32_t u = (uint32_t)lb_rng_below(&rng, REF_UNIVERSE);
		uint64_t dice = lb_rng_below(&rng, 100);
		struct lb_flow_key o, r;
		enum lb_flow_dir dir;

		random_keys(u, &o, &r);
		now += lb_rng_below(&rng, MS(50));
		if (dice < 40) {
			int rc = lb_flow_insert(t, &o, &r, 0, u, now);

			if (ref[u].live) {
				assert_int_equal(rc, -EEXIST);
			} else if (live == REF_CAP) {
				assert_int_equal(rc, -ENOSPC);
			} else {
				assert_true(rc >= 0);
				ref[u].live = 1;
				ref[u].replied = 0;
				ref[u].last = now;
				where[u] = (uint32_t)rc;
				live++;
			}
		} else if (dice < 55) {
			int rc = ref[u].live ? lb_flow_delete(t, where[u]) : 0;

			assert_int_equal(rc, 0);
			if (ref[u].live) {
				ref[u].live = 0;
				live--;
			}
		} else if (dice < 80) {
			enum lb_flow_dir d = lb_rng_below(&rng, 2) ? R : O;
			uint32_t idx = lb_flow_lookup(t, d == O ? &o : &r,
						      &dir);

			if (ref[u].live) {
				assert_int_equal(idx, where[u]);
				assert_int_equal(dir, d);
				ref[u].replied |= d == R;
				assert_int_equal(lb_flow_touch(t, idx, d, 0,
							       now),
						 ref[u].replied
							 ? LB_FLOW_UDP
							 : LB_FLOW_UDP_UNREPLIED);
				ref[u].last = now;
			} else {
				assert_int_equal(idx, LB_FLOW_NONE);
			}
		} else if (dice < 85) {
			/* Expire everything due; the model decides in
			 * ticks exactly as the table documents. */
			unsigned int due = 0;
			uint32_t now_t = (uint32_t)(now >> LB_FLOW_TICK_SHIFT);

			for (uint32_t v = 0; v < REF_UNIVERSE; v++) {
				uint32_t last_t;

				if (!ref[v].live)
					continue;
				last_t = (uint32_t)(ref[v].last >>
						    LB_FLOW_TICK_SHIFT);
				if (now_t - last_t > timeout_ticks) {
					ref[v].live = 0;
					due++;
				}
			}
			assert_int_equal(lb_flow_expire(t, now, REF_CAP, NULL,
							NULL),
					 due);
			live -= due;
		} else {
			now += lb_rng_below(&rng, SEC(3));
		}
		assert_int_equal(t->stats.flows, live);
		if (op % 100 == 0) {
			unsigned int seen = 0;

			for (uint32_t v = 0; v < REF_UNIVERSE; v++) {
				random_keys(v, &o, &r);
				assert_int_equal(lb_flow_lookup(t, &r, &dir),
						 ref[v].live ? where[v]
							     : LB_FLOW_NONE);
			}
			for (uint32_t i = lb_flow_next(t, 0); i != LB_FLOW_NONE;
			     i = lb_flow_next(t, i + 1))
				seen++;
			assert_int_equal(seen, live);
		}
	}
	assert_true(t->stats.refused > 0);
	assert_true(t->stats.dup > 0);
	assert_true(t->stats.expired[LB_FLOW_UDP] > 0);
	assert_true(t->stats.expired[LB_FLOW_UDP_UNREPLIED] > 0);
	lb_flow_table_free(t);
}

static void
test_state_names(void **state)
{
	(void)state;
	assert_string_equal(lb_flow_state_name(LB_FLOW_SYN_SENT), "syn_sent");
	assert_string_equal(lb_flow_state_name(LB_FLOW_ESTABLISHED),
			    "established");
	assert_string_equal(lb_flow_state_name(LB_FLOW_TIME_WAIT),
			    "time_wait");
	assert_string_equal(lb_flow_state_name(LB_FLOW_OTHER), "other");
	assert_string_equal(lb_flow_state_name(LB_FLOW_UDP_UNREPLIED),
			    "udp_unreplied");
	assert_string_equal(lb_flow_state_name(LB_FLOW_FREE), "free");
	assert_string_equal(lb_flow_state_name(LB_FLOW_NB_STATES), "?");
}

/*
 * A flow past its timeout holds nothing: lb_flow_holds() says so by the
 * owner's clock, and an insert that wants its reply key (the SNAT pair)
 * expires it on the spot through the reaper, counted. Without a reaper,
 * or before the timeout, the key stays taken.
 */
static void
test_reclaim_key(void **state)
{
	struct lb_flow_table *t = table(8), *bare = table(8);
	struct expired_log log = { .n = 0 };
	struct lb_flow_key o1, r1, o2, r2;
	enum lb_flow_dir dir;
	int a, b;

	(void)state;
	nth_keys(1, LB_FLOW_PROTO_UDP, &o1, &r1);
	nth_keys(2, LB_FLOW_PROTO_UDP, &o2, &r2);
	r2 = r1; /* a new client wants the same SNAT pair */
	lb_flow_set_reaper(t, log_expired, &log);
	a = lb_flow_insert(t, &o1, &r1, 0, 3, 0);
	assert_true(a >= 0);
	assert_true(lb_flow_insert(bare, &o1, &r1, 0, 3, 0) >= 0);

	/* UDP_UNREPLIED lasts 30 s (IPVS preset). */
	lb_flow_clock(t, SEC(29));
	assert_true(lb_flow_holds(t, &r1));
	assert_int_equal(lb_flow_insert(t, &o2, &r2, 0, 4, SEC(29)), -EEXIST);
	assert_int_equal(log.n, 0);

	lb_flow_clock(t, SEC(31));
	assert_false(lb_flow_holds(t, &r1));
	assert_false(lb_flow_holds(t, &o2));
	b = lb_flow_insert(t, &o2, &r2, 0, 4, SEC(31));
	assert_true(b >= 0);
	assert_int_equal(log.n, 1);
	assert_int_equal(log.idx[0], (uint32_t)a);
	assert_int_equal(log.be[0], 3);
	assert_int_equal(t->stats.reclaimed, 1);
	assert_int_equal(t->stats.expired[LB_FLOW_UDP_UNREPLIED], 1);
	assert_int_equal(t->stats.flows, 1);
	assert_int_equal(lb_flow_lookup(t, &o1, &dir), LB_FLOW_NONE);
	assert_int_equal(lb_flow_lookup(t, &r1, &dir), (uint32_t)b);
	assert_int_equal(dir, R);
	assert_true(lb_flow_holds(t, &r1));

	/* No reaper: the timed-out holder still has its key. */
	assert_int_equal(lb_flow_insert(bare, &o2, &r2, 0, 4, SEC(31)),
			 -EEXIST);
	assert_int_equal(bare->stats.reclaimed, 0);
	lb_flow_table_free(t);
	lb_flow_table_free(bare);
}

/*
 * A full table whose flows have timed out takes a new flow at once, in
 * the entry of a timed-out one (the oldest of its list); flows still
 * alive are never taken, so with none timed out the table refuses.
 */
static void
test_reclaim_full_table(void **state)
{
	struct lb_flow_table *t = table(2);
	struct expired_log log = { .n = 0 };
	struct lb_flow_key o, r;
	int a, b;

	(void)state;
	lb_flow_set_reaper(t, log_expired, &log);
	nth_keys(1, LB_FLOW_PROTO_UDP, &o, &r);
	a = lb_flow_insert(t, &o, &r, 0, 1, 0);
	nth_keys(2, LB_FLOW_PROTO_UDP, &o, &r);
	b = lb_flow_insert(t, &o, &r, 0, 2, SEC(20));
	assert_true(a >= 0 && b >= 0);

	nth_keys(3, LB_FLOW_PROTO_UDP, &o, &r);
	assert_int_equal(lb_flow_insert(t, &o, &r, 0, 3, SEC(29)), -ENOSPC);
	assert_int_equal(t->stats.refused, 1);
	assert_int_equal(lb_flow_insert(t, &o, &r, 0, 3, SEC(31)), a);
	assert_int_equal(log.n, 1);
	assert_int_equal(log.idx[0], (uint32_t)a);
	assert_int_equal(t->stats.reclaimed, 1);
	/* b (20 s old) and the new flow are alive. */
	nth_keys(4, LB_FLOW_PROTO_UDP, &o, &r);
	assert_int_equal(lb_flow_insert(t, &o, &r, 0, 4, SEC(32)), -ENOSPC);
	assert_int_equal(t->stats.refused, 2);
	assert_int_equal(t->stats.flows, 2);
	lb_flow_table_free(t);
}

/*
 * A pass that found every head not yet due remembers the earliest due
 * tick: calls before it do nothing (no pass counted); a flow that starts
 * an empty list with a shorter timeout, or a shortened timeout, brings
 * the next pass forward.
 */
static void
test_expire_next_due(void **state)
{
	struct lb_flow_table *t = table(8);
	struct lb_flow_key o, r;

	(void)state;
	nth_keys(1, LB_FLOW_PROTO_UDP, &o, &r);
	assert_true(lb_flow_insert(t, &o, &r, 0, 0, 0) >= 0);
	assert_true(lb_flow_expire_due(t, SEC(1)));
	assert_int_equal(lb_flow_expire(t, SEC(1), 10, NULL, NULL), 0);
	assert_int_equal(t->stats.expire_passes, 1);
	assert_false(lb_flow_expire_due(t, SEC(2)));
	assert_false(lb_flow_expire_due(t, SEC(30) - TICK_NS));
	assert_true(lb_flow_expire_due(t, SEC(30) + 2 * TICK_NS));
	assert_int_equal(lb_flow_expire(t, SEC(2), 10, NULL, NULL), 0);
	assert_int_equal(t->stats.expire_passes, 1);

	/* A TCP flow starts the empty SYN_SENT list, due in 1 s. */
	assert_int_equal(lb_flow_set_timeout(t, LB_FLOW_SYN_SENT, SEC(1)), 0);
	assert_true(lb_flow_expire_due(t, SEC(2)));
	assert_int_equal(lb_flow_expire(t, SEC(2), 10, NULL, NULL), 0);
	nth_keys(2, LB_FLOW_PROTO_TCP, &o, &r);
	assert_true(lb_flow_insert(t, &o, &r, 0, 0, SEC(2)) >= 0);
	assert_false(lb_flow_expire_due(t, SEC(2) + 2 * TICK_NS));
	assert_true(lb_flow_expire_due(t, SEC(3) + 2 * TICK_NS));
	assert_int_equal(lb_flow_expire(t, SEC(3) + 2 * TICK_NS, 10, NULL,
					NULL),
			 1);
	assert_int_equal(t->stats.expired[LB_FLOW_SYN_SENT], 1);

	/* A shorter UDP_UNREPLIED timeout: the next pass comes at once. */
	assert_false(lb_flow_expire_due(t, SEC(4)));
	assert_int_equal(
		lb_flow_set_timeout(t, LB_FLOW_UDP_UNREPLIED, SEC(3)), 0);
	assert_true(lb_flow_expire_due(t, SEC(4)));
	assert_int_equal(lb_flow_expire(t, SEC(4), 10, NULL, NULL), 1);
	assert_int_equal(t->stats.flows, 0);
	lb_flow_table_free(t);
}

/*
 * A backlog of timed-out flows larger than one call's budget: each call
 * expires exactly its budget until the backlog is gone, so it is worked
 * off in ceil(backlog / budget) calls; lb_flow_overdue() counts what is
 * left (up to its bound) without changing anything.
 */
static void
test_expire_backlog(void **state)
{
	enum { N = 1000, BUDGET = 128 };
	struct lb_flow_table *t = table(N);
	struct lb_flow_key o, r;
	unsigned int calls = 0, left = N;

	(void)state;
	for (uint32_t i = 0; i < N; i++) {
		nth_keys(i, LB_FLOW_PROTO_UDP, &o, &r);
		assert_true(lb_flow_insert(t, &o, &r, 0, 0, MS(i)) >= 0);
	}
	assert_int_equal(lb_flow_overdue(t, SEC(30), 5000, NULL, NULL), 0);
	assert_int_equal(lb_flow_overdue(t, SEC(32), 5000, NULL, NULL), N);
	assert_int_equal(lb_flow_overdue(t, SEC(32), 100, NULL, NULL), 100);
	assert_int_equal(t->stats.flows, N);
	while (left > 0) {
		unsigned int n = lb_flow_expire(t, SEC(33), BUDGET, NULL, NULL);

		assert_int_equal(n, left < BUDGET ? left : BUDGET);
		left -= n;
		calls++;
		assert_int_equal(lb_flow_overdue(t, SEC(33), 5000, NULL, NULL),
				 left);
		assert_true(calls <= (N + BUDGET - 1) / BUDGET);
	}
	assert_int_equal(t->stats.flows, 0);
	assert_int_equal(lb_flow_expire(t, SEC(33), BUDGET, NULL, NULL), 0);
	lb_flow_table_free(t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes_and_bad_init),
		cmocka_unit_test(test_timeout_presets),
		cmocka_unit_test(test_check_layout),
		cmocka_unit_test(test_key_helpers),
		cmocka_unit_test(test_insert_lookup_both_directions),
		cmocka_unit_test(test_insert_bad_input_and_duplicates),
		cmocka_unit_test(test_peek),
		cmocka_unit_test(test_colliding_buckets),
		cmocka_unit_test(test_cluster_with_mixed_homes),
		cmocka_unit_test(test_full_table_refuses),
		cmocka_unit_test(test_delete_then_reinsert),
		cmocka_unit_test(test_tcp_state_machine),
		cmocka_unit_test(test_tcp_advance_bad_input),
		cmocka_unit_test(test_counters_and_flags),
		cmocka_unit_test(test_expiry_order_and_bounded_work),
		cmocka_unit_test(test_touch_delays_expiry),
		cmocka_unit_test(test_timeout_per_state),
		cmocka_unit_test(test_set_timeout_runtime),
		cmocka_unit_test(test_expiry_rotates_classes),
		cmocka_unit_test(test_svc_timeouts),
		cmocka_unit_test(test_svc_timeouts_change),
		cmocka_unit_test(test_svc_timeouts_limits),
		cmocka_unit_test(test_svc_timeouts_random),
		cmocka_unit_test(test_iterate_per_backend),
		cmocka_unit_test(test_random_against_reference),
		cmocka_unit_test(test_state_names),
		cmocka_unit_test(test_reclaim_key),
		cmocka_unit_test(test_reclaim_full_table),
		cmocka_unit_test(test_expire_next_due),
		cmocka_unit_test(test_expire_backlog),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
