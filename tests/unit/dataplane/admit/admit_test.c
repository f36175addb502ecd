/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "lb/admit.h"

#define MS 1000000ULL
#define SEC 1000000000ULL
#define IP(a, b, c, d)                                                         \
	((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 |      \
	 (uint32_t)(d))

struct fx {
	struct lb_admit_shm *sh;
	struct lb_admit_stats st[4];
	struct lb_admit_svc_stats svc[4][8];
	struct lb_admit_lc *lc[4];
};

static struct lb_admit_shm *
shm_new(uint32_t slots)
{
	uint64_t sz = lb_admit_shm_size(slots);
	void *mem;

	assert_true(sz > 0);
	mem = aligned_alloc(64, (sz + 63) / 64 * 64);
	assert_non_null(mem);
	return lb_admit_shm_init(mem, slots);
}

static struct fx *
fx_new(uint32_t slots, uint32_t nb_local, int nb_lc)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->sh = shm_new(slots);
	assert_non_null(f->sh);
	for (int i = 0; i < nb_lc; i++) {
		f->lc[i] = lb_admit_lc_create(f->sh, nb_local, &f->st[i],
					      f->svc[i], 8);
		assert_non_null(f->lc[i]);
	}
	return f;
}

static void
fx_free(struct fx *f)
{
	for (int i = 0; i < 4; i++)
		lb_admit_lc_free(f->lc[i]);
	free(f->sh);
	free(f);
}

static struct lb_admit_conf
conf(enum lb_admit_key key, uint64_t rate, uint64_t burst)
{
	struct lb_admit_conf c;

	lb_admit_conf_default(&c);
	c.key = key;
	c.rate = rate;
	c.burst = burst;
	return c;
}

static void
test_conf_check(void **state)
{
	struct lb_admit_conf c;

	(void)state;
	lb_admit_conf_default(&c);
	assert_null(lb_admit_conf_error(&c)); /* off */
	c.rate = 1000;
	assert_null(lb_admit_conf_error(&c));
	assert_int_equal(lb_admit_burst(&c), 100);
	c.burst = 9; /* below 10 ms of 1000/s */
	assert_non_null(lb_admit_conf_error(&c));
	c.burst = 10;
	assert_null(lb_admit_conf_error(&c));
	c.key = LB_ADMIT_KEY_MAX;
	assert_non_null(lb_admit_conf_error(&c));
	c.key = LB_ADMIT_KEY_CLIENT;
	c.cluster = LB_ADMIT_CLUSTER_OPEN; /* cluster is per service only */
	assert_non_null(lb_admit_conf_error(&c));
	c.key = LB_ADMIT_KEY_SVC;
	assert_null(lb_admit_conf_error(&c));
	c.prefix = 33;
	assert_non_null(lb_admit_conf_error(&c));
	c.prefix = 0;
	assert_non_null(lb_admit_conf_error(&c));
	lb_admit_conf_default(&c);
	c.prefix6 = 129;
	assert_non_null(lb_admit_conf_error(&c));
	c.prefix6 = 0; /* a table of before: the default */
	assert_null(lb_admit_conf_error(&c));
	lb_admit_conf_default(&c);
	c.burst = 5; /* a burst without a rate */
	assert_non_null(lb_admit_conf_error(&c));
	c.rate = 3; /* small rates get a burst of 1 */
	c.burst = 0;
	assert_int_equal(lb_admit_burst(&c), 1);
	assert_int_equal(
		lb_admit_word("prefix", lb_admit_key_names, LB_ADMIT_KEY_MAX),
		LB_ADMIT_KEY_PREFIX);
	assert_int_equal(
		lb_admit_word("nope", lb_admit_key_names, LB_ADMIT_KEY_MAX),
		LB_ADMIT_KEY_MAX);
}

static void
test_keys(void **state)
{
	struct lb_admit_shm *sh = shm_new(16);
	struct lb_admit_conf c = conf(LB_ADMIT_KEY_SVC, 100, 0);
	struct lb_admit_conf d;
	uint64_t k;

	(void)state;
	/* svc: the client does not matter, the slot does */
	assert_int_equal(lb_admit_key_of(sh, 1, &c, IP(10, 0, 0, 1), 0),
			 lb_admit_key_of(sh, 1, &c, IP(10, 0, 0, 2), 3));
	assert_int_not_equal(lb_admit_key_of(sh, 1, &c, 0, 0),
			     lb_admit_key_of(sh, 2, &c, 0, 0));
	/* a changed rate or burst makes a new bucket */
	d = c;
	d.rate = 101;
	assert_int_not_equal(lb_admit_key_of(sh, 1, &c, 0, 0),
			     lb_admit_key_of(sh, 1, &d, 0, 0));
	d = c;
	d.burst = 50;
	assert_int_not_equal(lb_admit_key_of(sh, 1, &c, 0, 0),
			     lb_admit_key_of(sh, 1, &d, 0, 0));
	/* client: per address, shared across services of equal settings */
	c.key = LB_ADMIT_KEY_CLIENT;
	assert_int_not_equal(lb_admit_key_of(sh, 1, &c, IP(10, 0, 0, 1), 0),
			     lb_admit_key_of(sh, 1, &c, IP(10, 0, 0, 2), 0));
	assert_int_equal(lb_admit_key_of(sh, 1, &c, IP(10, 0, 0, 1), 0),
			 lb_admit_key_of(sh, 2, &c, IP(10, 0, 0, 1), 0));
	/* client-svc: per address and service */
	c.key = LB_ADMIT_KEY_CLIENT_SVC;
	assert_int_not_equal(lb_admit_key_of(sh, 1, &c, IP(10, 0, 0, 1), 0),
			     lb_admit_key_of(sh, 2, &c, IP(10, 0, 0, 1), 0));
	/* prefix: /24 by default, /16 when asked */
	c.key = LB_ADMIT_KEY_PREFIX;
	assert_int_equal(lb_admit_key_of(sh, 1, &c, IP(10, 1, 2, 3), 0),
			 lb_admit_key_of(sh, 1, &c, IP(10, 1, 2, 200), 0));
	assert_int_not_equal(lb_admit_key_of(sh, 1, &c, IP(10, 1, 2, 3), 0),
			     lb_admit_key_of(sh, 1, &c, IP(10, 1, 3, 3), 0));
	c.prefix = 16;
	assert_int_equal(lb_admit_key_of(sh, 1, &c, IP(10, 1, 2, 3), 0),
			 lb_admit_key_of(sh, 1, &c, IP(10, 1, 3, 3), 0));
	c.prefix = 32;
	assert_int_not_equal(lb_admit_key_of(sh, 1, &c, IP(10, 1, 2, 3), 0),
			     lb_admit_key_of(sh, 1, &c, IP(10, 1, 2, 4), 0));
	/* prio: per rank */
	c.key = LB_ADMIT_KEY_PRIO;
	assert_int_not_equal(lb_admit_key_of(sh, 1, &c, 0, 1),
			     lb_admit_key_of(sh, 1, &c, 0, 2));
	assert_int_equal(lb_admit_key_of(sh, 1, &c, IP(1, 2, 3, 4), 2),
			 lb_admit_key_of(sh, 1, &c, IP(5, 6, 7, 8), 2));
	for (uint32_t i = 0; i < 100000; i++) {
		k = lb_admit_key_of(sh, (uint16_t)i, &c, i, (uint8_t)i);
		assert_true(k != 0 && (k & LB_ADMIT_BUSY) == 0);
	}
	free(sh);
}

static void
test_shm_table(void **state)
{
	struct lb_admit_shm *sh = shm_new(16);
	struct lb_admit_conf c = conf(LB_ADMIT_KEY_CLIENT, 10, 5);
	struct lb_admit_gent *e[17], *x;
	uint64_t at = 0;

	(void)state;
	assert_int_equal(lb_admit_shm_size(12), 0);
	assert_null(lb_admit_shm_init(sh, 12));
	for (uint32_t i = 0; i < 16; i++) {
		uint64_t k = lb_admit_key_of(sh, 0, &c, i, 0);

		assert_null(lb_admit_shm_find(sh, k));
		e[i] = lb_admit_shm_get(sh, k, 0, &c, i, 0, &at);
		assert_non_null(e[i]);
		assert_ptr_equal(lb_admit_shm_find(sh, k), e[i]);
		assert_ptr_equal(lb_admit_shm_get(sh, k, 0, &c, i, 0, &at),
				 e[i]);
		/* a new bucket starts full */
		assert_int_equal(lb_tb_global_avail(&e[i]->b, 0), 5);
		assert_int_equal(e[i]->client, i);
	}
	assert_int_equal(at, 16); /* one claim per insertion */
	/* full, nothing idle long enough: no bucket */
	assert_null(lb_admit_shm_get(sh, lb_admit_key_of(sh, 0, &c, 99, 0), 0,
				     &c, 99, SEC, &at));
	/* 5 tokens at 10/s fill in 0.5 s, but entries stay 2 s at least */
	x = lb_admit_shm_get(sh, lb_admit_key_of(sh, 0, &c, 99, 0), 0, &c, 99,
			     2 * SEC, &at);
	assert_non_null(x);
	assert_int_equal(x->client, 99);
	assert_int_equal(lb_tb_global_avail(&x->b, 2 * SEC), 5);
	/* a cluster bucket starts empty and only fills by deposit */
	c = conf(LB_ADMIT_KEY_SVC, 10, 5);
	c.cluster = LB_ADMIT_CLUSTER_CLOSED;
	x = lb_admit_shm_get(sh, lb_admit_key_of(sh, 3, &c, 0, 0), 3, &c, 0,
			     2 * SEC, &at);
	assert_non_null(x);
	assert_int_equal(lb_tb_global_avail(&x->b, 100 * SEC), 0);
	assert_int_equal(lb_tb_global_deposit(&x->b, 3), 3);
	assert_int_equal(lb_tb_global_deposit(&x->b, 3), 2); /* capped */
	assert_int_equal(lb_tb_global_take(&x->b, 10, 200 * SEC), 5);
	assert_int_equal(lb_tb_global_take(&x->b, 10, 300 * SEC), 0);
	free(sh);
}

/* One worker against a heavier load: over 10 s of simulated time the key
 * admits its rate and burst, and no more. */
static void
test_rate_one_worker(void **state)
{
	struct fx *f = fx_new(1024, 64, 1);
	struct lb_admit_conf c = conf(LB_ADMIT_KEY_SVC, 1000, 50);
	uint64_t pass = 0, t;

	(void)state;
	/* 5000 attempts/s for 10 s */
	for (t = 0; t < 10 * SEC; t += 200000)
		pass += lb_admit_check(f->lc[0], 1, &c, IP(10, 0, 0, 1), 0,
				       t) == LB_ADMIT_PASS;
	assert_true(pass <= 1000 * 10 + 50);
	assert_true(pass >= 1000 * 10 * 95 / 100);
	assert_int_equal(f->st[0].n[LB_ADMIT_KEY_SVC][LB_ADMIT_PASS], pass);
	assert_int_equal(f->svc[0][1].n[LB_ADMIT_PASS], pass);
	assert_true(f->svc[0][1].n[LB_ADMIT_REJ_NEG] >
		    f->svc[0][1].n[LB_ADMIT_REJ_EMPTY]);
	assert_int_equal(f->svc[0][1].n[LB_ADMIT_PASS] +
				 f->svc[0][1].n[LB_ADMIT_REJ_NEG] +
				 f->svc[0][1].n[LB_ADMIT_REJ_EMPTY],
			 50000);
	fx_free(f);
}

/* The negative cache: one refusal, then throttled without asking until
 * the interval ends. */
static void
test_negative_cache(void **state)
{
	struct fx *f = fx_new(1024, 64, 1);
	struct lb_admit_conf c = conf(LB_ADMIT_KEY_CLIENT, 100, 2);
	uint64_t borrows;

	(void)state;
	assert_int_equal(lb_admit_check(f->lc[0], 0, &c, 7, 0, 0),
			 LB_ADMIT_PASS);
	assert_int_equal(lb_admit_check(f->lc[0], 0, &c, 7, 0, 1),
			 LB_ADMIT_PASS);
	assert_int_equal(lb_admit_check(f->lc[0], 0, &c, 7, 0, 2),
			 LB_ADMIT_REJ_EMPTY);
	borrows = f->st[0].borrows;
	/* 5 ms later the bucket holds half a token: still not asked */
	assert_int_equal(lb_admit_check(f->lc[0], 0, &c, 7, 0, 5 * MS),
			 LB_ADMIT_REJ_NEG);
	assert_int_equal(lb_admit_check(f->lc[0], 0, &c, 7, 0, 9 * MS),
			 LB_ADMIT_REJ_NEG);
	assert_int_equal(f->st[0].borrows, borrows);
	/* the interval (10 ms) ended: the refilled token is borrowed */
	assert_int_equal(lb_admit_check(f->lc[0], 0, &c, 7, 0, 10 * MS),
			 LB_ADMIT_PASS);
	assert_int_equal(f->st[0].borrows, borrows + 1);
	/* another client is not throttled by client 7's cache */
	assert_int_equal(lb_admit_check(f->lc[0], 0, &c, 8, 0, 10 * MS),
			 LB_ADMIT_PASS);
	assert_int_equal(f->st[0].n[LB_ADMIT_KEY_CLIENT][LB_ADMIT_REJ_EMPTY],
			 1);
	assert_int_equal(f->st[0].n[LB_ADMIT_KEY_CLIENT][LB_ADMIT_REJ_NEG], 2);
	fx_free(f);
}

/* @p a with bit @p n (0: the first of the address) flipped. */
static const uint8_t *
flip(const uint8_t a[16], unsigned int n, uint8_t out[16])
{
	memcpy(out, a, 16);
	out[n / 8] ^= (uint8_t)(0x80u >> n % 8);
	return out;
}

/*
 * IPv6 clients, one token per key and no refill in the test's instant:
 * `prefix` keeps a bucket per /admit-prefix6 (/64 by default), so an
 * address differing from a spent one only after the prefix is refused
 * and one differing in the prefix's last bit is not; `client` keeps one
 * per address. An IPv6 key is never the IPv4 key of equal settings.
 */
static void
test_ipv6_keys(void **state)
{
	static const uint8_t lens[] = {1, 8, 48, 56, 64, 100, 127, 128};
	static const uint8_t a[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 2,
				      0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc,
				      0xde, 0xf0};
	struct fx *f = fx_new(1024, 64, 1);
	struct lb_admit_conf c = conf(LB_ADMIT_KEY_PREFIX, 1, 1);
	uint8_t x[16] = {0};

	(void)state;
	assert_int_equal(c.prefix6, 64);
	/* ::/64 and the IPv4 0.0.0.0/24 each get their token */
	assert_int_equal(lb_admit_check6(f->lc[0], 0, &c, x, 0, 0),
			 LB_ADMIT_PASS);
	assert_int_equal(lb_admit_check(f->lc[0], 0, &c, 0, 0, 0),
			 LB_ADMIT_PASS);
	for (size_t i = 0; i < sizeof(lens); i++) {
		c.prefix6 = lens[i];
		assert_int_equal(lb_admit_check6(f->lc[0], 0, &c, a, 0, 0),
				 LB_ADMIT_PASS);
		if (lens[i] < 128)
			assert_int_equal(lb_admit_check6(f->lc[0], 0, &c,
							 flip(a, lens[i], x),
							 0, 0),
					 LB_ADMIT_REJ_EMPTY);
		assert_int_equal(lb_admit_check6(f->lc[0], 0, &c,
						 flip(a, lens[i] - 1u, x), 0,
						 0),
				 LB_ADMIT_PASS);
	}
	/* client: the last bit makes another client */
	c.key = LB_ADMIT_KEY_CLIENT;
	assert_int_equal(lb_admit_check6(f->lc[0], 0, &c, a, 0, 0),
			 LB_ADMIT_PASS);
	assert_int_equal(lb_admit_check6(f->lc[0], 0, &c, flip(a, 127, x), 0,
					 0),
			 LB_ADMIT_PASS);
	assert_int_equal(lb_admit_check6(f->lc[0], 0, &c, a, 0, 0),
			 LB_ADMIT_REJ_EMPTY);
	/* counted by key class, as for IPv4 */
	assert_int_equal(f->st[0].n[LB_ADMIT_KEY_PREFIX][LB_ADMIT_REJ_EMPTY],
			 sizeof(lens) - 1);
	assert_int_equal(f->st[0].n[LB_ADMIT_KEY_CLIENT][LB_ADMIT_REJ_EMPTY],
			 1);
	/* no settings, no admission */
	c.rate = 0;
	assert_int_equal(lb_admit_check6(f->lc[0], 0, &c, a, 0, 0),
			 LB_ADMIT_PASS);
	fx_free(f);
}

/*
 * The key a reject record names (lb_admit_key6()) is the one the buckets
 * are kept by: the prefix of prefix6 bits with host bits zero, the same
 * for an address differing after the prefix, another for one differing
 * in its last bit; the address for `client`; none for `svc` and `prio`.
 */
static void
test_ipv6_record_key(void **state)
{
	static const uint8_t lens[] = {1, 7, 8, 9, 48, 61, 64, 100, 127};
	static const uint8_t a[16] = {0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff,
				      0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				      0xff, 0xff, 0xff, 0xff};
	struct lb_admit_conf c = conf(LB_ADMIT_KEY_PREFIX, 1, 1);
	uint8_t k[16], k2[16], x[16];

	(void)state;
	for (size_t i = 0; i < sizeof(lens); i++) {
		c.prefix6 = lens[i];
		assert_int_equal(lb_admit_key6(&c, a, k), lens[i]);
		for (unsigned int b = 0; b < 128; b++)
			assert_int_equal(
				k[b / 8] >> (7 - b % 8) & 1,
				b < lens[i] ? a[b / 8] >> (7 - b % 8) & 1 : 0);
		assert_int_equal(lb_admit_key6(&c, flip(a, lens[i], x), k2),
				 lens[i]);
		assert_memory_equal(k, k2, 16);
		lb_admit_key6(&c, flip(a, lens[i] - 1u, x), k2);
		assert_memory_not_equal(k, k2, 16);
	}
	c.prefix6 = 0; /* a table written without it: the default */
	assert_int_equal(lb_admit_key6(&c, a, k), 64);
	c.key = LB_ADMIT_KEY_CLIENT_SVC;
	assert_int_equal(lb_admit_key6(&c, a, k), 128);
	assert_memory_equal(k, a, 16);
	c.key = LB_ADMIT_KEY_SVC;
	assert_int_equal(lb_admit_key6(&c, a, k), 0);
	c.key = LB_ADMIT_KEY_PRIO;
	assert_int_equal(lb_admit_key6(&c, a, k), 0);
}

/* Per-client keys: a noisy client exhausts its own bucket only. */
static void
test_client_isolation(void **state)
{
	struct fx *f = fx_new(1024, 64, 2);
	struct lb_admit_conf c = conf(LB_ADMIT_KEY_CLIENT, 100, 10);
	uint64_t noisy = 0, quiet = 0, tries = 0;

	(void)state;
	for (uint64_t t = 0; t < 5 * SEC; t += 100000) {
		/* the noisy client at 10000/s over both workers */
		noisy += lb_admit_check(f->lc[t / 100000 % 2], 0, &c,
					IP(10, 0, 0, 1), 0, t) == LB_ADMIT_PASS;
		/* the quiet one at 50/s */
		if (t % (20 * MS) == 0) {
			tries++;
			quiet +=
				lb_admit_check(f->lc[0], 0, &c, IP(10, 0, 0, 2),
					       0, t) == LB_ADMIT_PASS;
		}
	}
	assert_int_equal(quiet, tries);
	assert_true(noisy <= 100 * 5 + 10);
	assert_true(noisy >= 100 * 5 * 95 / 100);
	fx_free(f);
}

/* Workers alternate unevenly on one service key; the sum stays within
 * rate x time + burst, and close to it. */
static void
test_two_workers_share(void **state)
{
	struct fx *f = fx_new(1024, 64, 2);
	struct lb_admit_conf c = conf(LB_ADMIT_KEY_SVC, 2000, 40);
	uint64_t pass = 0, t = 0;
	uint32_t r = 12345;

	(void)state;
	while (t < 10 * SEC) {
		r = r * 1103515245u + 12345u;
		pass += lb_admit_check(f->lc[(r >> 16) % 3 == 0], 0, &c, r, 0,
				       t) == LB_ADMIT_PASS;
		t += 50000 + (r >> 20) % 100000;
	}
	assert_true(pass <= 2000 * 10 + 40);
	assert_true(pass >= 2000 * 10 * 95 / 100);
	fx_free(f);
}

/* At a steady rate, fewer than one atomic operation on shared memory per
 * 32 admissions: a worker borrows a batch per interval. */
static void
test_atomics_per_admission(void **state)
{
	struct fx *f = fx_new(1024, 64, 1);
	struct lb_admit_conf c = conf(LB_ADMIT_KEY_SVC, 10000000, 1000000);
	uint64_t pass = 0;

	(void)state;
	for (uint64_t t = 0; t < 2 * SEC; t += 1000) /* 1M/s */
		pass += lb_admit_check(f->lc[0], 0, &c, 1, 0, t) ==
			LB_ADMIT_PASS;
	assert_int_equal(pass, 2000000);
	assert_true(f->st[0].shm_atomics * 32 < pass);
	fx_free(f);
}

/* The cluster tier: tokens only from deposits; fail-closed reason. */
static void
test_cluster_bucket(void **state)
{
	struct fx *f = fx_new(1024, 64, 1);
	struct lb_admit_conf c = conf(LB_ADMIT_KEY_SVC, 100, 10);
	struct lb_admit_gent *e;
	uint64_t at = 0;

	(void)state;
	c.cluster = LB_ADMIT_CLUSTER_CLOSED;
	e = lb_admit_shm_get(f->sh, lb_admit_key_of(f->sh, 2, &c, 0, 0), 2, &c,
			     0, 0, &at);
	assert_non_null(e);
	assert_int_equal(lb_admit_check(f->lc[0], 2, &c, 1, 0, 0),
			 LB_ADMIT_REJ_EMPTY);
	lb_tb_global_deposit(&e->b, 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(lb_admit_check(f->lc[0], 2, &c, 1, 0,
						(uint64_t)(20 + i) * MS),
				 LB_ADMIT_PASS);
	atomic_fetch_or(&e->flags, LB_ADMIT_F_CLUSTER_DOWN);
	assert_int_equal(lb_admit_check(f->lc[0], 2, &c, 1, 0, 40 * MS),
			 LB_ADMIT_REJ_CLUSTER);
	/* however long we wait, time alone brings nothing */
	assert_int_equal(lb_admit_check(f->lc[0], 2, &c, 1, 0, 100 * SEC),
			 LB_ADMIT_REJ_CLUSTER);
	fx_free(f);
}

/* LRU: more keys than local buckets; replaced ones are counted. */
static void
test_local_lru(void **state)
{
	struct fx *f = fx_new(1024, 4, 1);
	struct lb_admit_conf c = conf(LB_ADMIT_KEY_CLIENT, 100, 10);

	(void)state;
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(lb_admit_check(f->lc[0], 0, &c, i, 0, 0),
				 LB_ADMIT_PASS);
	assert_int_equal(lb_admit_lc_keys(f->lc[0]), 4);
	assert_int_equal(f->st[0].evictions, 0);
	for (uint32_t i = 4; i < 10; i++)
		assert_int_equal(lb_admit_check(f->lc[0], 0, &c, i, 0, 0),
				 LB_ADMIT_PASS);
	assert_int_equal(lb_admit_lc_keys(f->lc[0]), 4);
	assert_int_equal(f->st[0].evictions, 6);
	/* no admission control at rate 0, nothing counted */
	c.rate = 0;
	assert_int_equal(lb_admit_check(f->lc[0], 0, &c, 1, 0, 0),
			 LB_ADMIT_PASS);
	assert_int_equal(f->st[0].n[LB_ADMIT_KEY_CLIENT][LB_ADMIT_PASS], 10);
	assert_null(lb_admit_lc_create(NULL, 4, &f->st[0], NULL, 0));
	assert_null(lb_admit_lc_create(f->sh, 0, &f->st[0], NULL, 0));
	fx_free(f);
}

/* Fills every slot of a 16-slot table with clients 1000.. at time 0; none
 * is idle long enough to be reused before 2 s. */
static void
fill_table(struct fx *f, const struct lb_admit_conf *c)
{
	for (uint32_t i = 0; i < 16; i++)
		assert_int_equal(lb_admit_check(f->lc[0], 0, c, 1000 + i, 0, 0),
				 LB_ADMIT_PASS);
	assert_int_equal(f->st[0].table_full, 0);
}

/* New clients while the table is full, 1 ms apart: how many pass. */
static uint64_t
flood(struct fx *f, const struct lb_admit_conf *c, enum lb_admit_verdict v)
{
	uint64_t pass = 0;

	for (uint32_t i = 0; i < 200; i++) {
		enum lb_admit_verdict got = lb_admit_check(
			f->lc[0], 0, c, 5000 + i, 0, SEC + i * MS);

		pass += !lb_admit_rejected(got);
		if (v != LB_ADMIT_VERDICT_MAX)
			assert_int_equal(got, v);
	}
	return pass;
}

/*
 * A flood of new keys fills the shared table. `admit-full overflow` (the
 * default) holds the keys without a slot to one key's rate and burst
 * together; `open` admits them all; `closed` none. Each check that found
 * no slot is counted, per worker and per service.
 */
static void
test_table_full(void **state)
{
	struct lb_admit_conf c = conf(LB_ADMIT_KEY_CLIENT, 10, 5);
	struct fx *f;
	uint64_t pass;

	(void)state;
	assert_int_equal(c.full, LB_ADMIT_FULL_OVERFLOW); /* the default */
	f = fx_new(16, 1024, 1);
	fill_table(f, &c);
	pass = flood(f, &c, LB_ADMIT_VERDICT_MAX);
	/* 200 ms at 10/s, and the burst of 5 */
	assert_true(pass >= 5 && pass <= 5 + 2 + 1);
	assert_int_equal(f->st[0].table_full, 200);
	assert_int_equal(f->svc[0][0].table_full, 200);
	/* the clients that have a bucket keep it */
	assert_int_equal(lb_admit_check(f->lc[0], 0, &c, 1003, 0, SEC),
			 LB_ADMIT_PASS);
	fx_free(f);

	c.full = LB_ADMIT_FULL_OPEN;
	f = fx_new(16, 1024, 1);
	fill_table(f, &c);
	assert_int_equal(flood(f, &c, LB_ADMIT_PASS_FULL), 200);
	assert_int_equal(f->st[0].table_full, 200);
	fx_free(f);

	c.full = LB_ADMIT_FULL_CLOSED;
	f = fx_new(16, 1024, 1);
	fill_table(f, &c);
	assert_int_equal(flood(f, &c, LB_ADMIT_REJ_FULL), 0);
	assert_int_equal(f->st[0].table_full, 200);
	assert_int_equal(f->st[0].n[LB_ADMIT_KEY_CLIENT][LB_ADMIT_REJ_FULL],
			 200);
	assert_int_equal(f->svc[0][0].n[LB_ADMIT_REJ_FULL], 200);
	fx_free(f);
}

/*
 * The key's mixing is secret: clients chosen to share one probe range
 * when the secret is known (here: forced to zero) crowd that range and
 * leave keys without a bucket, but spread out in a table with its own
 * random secret.
 */
static void
test_secret(void **state)
{
	enum { N = 48 };
	struct lb_admit_shm *known = shm_new(1024), *sh = shm_new(1024);
	struct lb_admit_shm *other = shm_new(1024);
	struct lb_admit_conf c = conf(LB_ADMIT_KEY_CLIENT, 10, 5);
	uint32_t cl[N], n = 0, placed = 0;

	(void)state;
	/* getrandom() gave each table its own secret */
	assert_true(sh->secret[0] != other->secret[0] ||
		    sh->secret[1] != other->secret[1]);
	assert_int_not_equal(lb_admit_key_of(sh, 0, &c, 7, 0),
			     lb_admit_key_of(other, 0, &c, 7, 0));
	memset(known->secret, 0, sizeof(known->secret));
	for (uint32_t a = 1; n < N; a++)
		if ((lb_admit_key_of(known, 0, &c, a, 0) & 1023) == 0)
			cl[n++] = a;
	for (uint32_t i = 0; i < N; i++)
		placed +=
			lb_admit_shm_get(
				known, lb_admit_key_of(known, 0, &c, cl[i], 0),
				0, &c, cl[i], 0, NULL) != NULL;
	assert_int_equal(placed, LB_ADMIT_PROBES);
	placed = 0;
	for (uint32_t i = 0; i < N; i++)
		placed += lb_admit_shm_get(sh,
					   lb_admit_key_of(sh, 0, &c, cl[i], 0),
					   0, &c, cl[i], 0, NULL) != NULL;
	assert_int_equal(placed, N);
	free(known);
	free(sh);
	free(other);
}

/* ---- threads: the global bucket never over-dispenses ----------------- */

struct thr {
	struct lb_admit_lc *lc;
	const struct lb_admit_conf *c;
	_Atomic int *go;
	uint64_t end_ns;
	uint64_t pass;
	uint64_t last_ns;
	uint32_t seed;
};

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

static void *
thr_run(void *arg)
{
	struct thr *t = arg;
	uint64_t now;

	while (!atomic_load(t->go))
		;
	do {
		now = mono_ns();
		t->seed = t->seed * 1103515245u + 12345u;
		/* a few clients share the service bucket's limit */
		t->pass += lb_admit_check(t->lc, 0, t->c, t->seed >> 24, 0,
					  now) == LB_ADMIT_PASS;
		t->last_ns = now;
	} while (now < t->end_ns);
	return NULL;
}

static void
test_threads_never_over_dispense(void **state)
{
	enum { NT = 4 };
	struct fx *f = fx_new(1024, 64, NT);
	struct lb_admit_conf c = conf(LB_ADMIT_KEY_SVC, 200000, 2000);
	struct thr t[NT];
	pthread_t tid[NT];
	_Atomic int go = 0;
	uint64_t start, last = 0, sum = 0, bound;

	(void)state;
	start = mono_ns();
	for (int i = 0; i < NT; i++) {
		t[i] = (struct thr){.lc = f->lc[i],
				    .c = &c,
				    .go = &go,
				    .end_ns = start + 300 * MS,
				    .seed = (uint32_t)i * 7919u + 1};
		assert_int_equal(pthread_create(&tid[i], NULL, thr_run, &t[i]),
				 0);
	}
	atomic_store(&go, 1);
	for (int i = 0; i < NT; i++) {
		pthread_join(tid[i], NULL);
		sum += t[i].pass;
		if (t[i].last_ns > last)
			last = t[i].last_ns;
	}
	/* The bucket was made at or after start and nothing was asked of it
	 * after last: rate x (last - start) + burst bounds every admission. */
	bound = c.rate * (last - start) / SEC + c.burst;
	print_message("threads: admitted %lu, bound %lu\n", (unsigned long)sum,
		      (unsigned long)bound);
	assert_true(sum <= bound);
	assert_true(sum > 0);
	fx_free(f);
}

/*
 * The batch floor (LB_ADMIT_BATCH_FLOOR of the burst) with four workers
 * on one client key offered 15 times its rate, spread unevenly: never
 * more than rate x time + burst, and short of it by at most what the
 * workers may hold unspent (a floor's batch each).
 */
static void
test_floor_accuracy_four_workers(void **state)
{
	struct fx *f = fx_new(1024, 64, 4);
	struct lb_admit_conf c = conf(LB_ADMIT_KEY_CLIENT, 200, 400);
	uint64_t pass = 0, t = 0, held;
	uint64_t floor = (uint64_t)(400 * LB_ADMIT_BATCH_FLOOR + 0.999);
	uint32_t r = 777;

	(void)state;
	while (t < 10 * SEC) {
		r = r * 1103515245u + 12345u;
		/* worker 0 gets about half, the others the rest */
		pass += lb_admit_check(f->lc[(r >> 16) % 6 < 3 ? 0
							       : (r >> 16) % 6 - 2],
				       0, &c, IP(10, 1, 2, 3), 0,
				       t) == LB_ADMIT_PASS;
		t += 100000 + (r >> 20) % 200000;
	}
	assert_true(pass <= 200 * 10 + 400);
	assert_true(pass + 4 * floor >= 200 * 10 + 400);
	/* every worker borrowed batches of the floor or more */
	for (int i = 0; i < 4; i++)
		assert_true(f->st[i].borrowed >= floor);
	held = 0;
	for (int i = 0; i < 4; i++)
		held += f->st[i].borrowed;
	assert_true(held >= pass);
	fx_free(f);
}

/*
 * Many keys each seen once per 2000 checks, over two workers: each
 * borrows a share of its burst the first time and then admits from it,
 * so that the workers touch shared memory far less than once per ten
 * admissions; a key whose interval ended is admitted from the tokens it
 * holds without asking the shared table.
 */
static void
test_sparse_keys_batch(void **state)
{
	struct fx *f = fx_new(8192, 4096, 2);
	struct lb_admit_conf c = conf(LB_ADMIT_KEY_CLIENT, 1000, 1000);
	uint64_t pass = 0, n = 0, atomics, borrows;

	(void)state;
	for (uint64_t t = 0; n < 100000; t += 20000, n++)
		pass += lb_admit_check(f->lc[n % 2], 0, &c, (uint32_t)n % 2000,
				       0, t) == LB_ADMIT_PASS;
	assert_int_equal(pass, n);
	atomics = f->st[0].shm_atomics + f->st[1].shm_atomics;
	assert_true(atomics * 10 < pass);
	/* A key 50 ms (five intervals) after its last check */
	borrows = f->st[0].borrows;
	atomics = f->st[0].shm_atomics;
	assert_int_equal(lb_admit_check(f->lc[0], 0, &c, 4, 0, 3 * SEC),
			 LB_ADMIT_PASS);
	assert_int_equal(f->st[0].borrows, borrows);
	assert_int_equal(f->st[0].shm_atomics, atomics);
	fx_free(f);
}

/*
 * A replaced local bucket gives its unspent tokens back: with one local
 * bucket, two clients alternating never lose the batch each borrowed,
 * and the global bucket of each is short only of what was admitted.
 */
static void
test_evict_gives_back(void **state)
{
	struct fx *f = fx_new(1024, 1, 1);
	struct lb_admit_conf c = conf(LB_ADMIT_KEY_CLIENT, 1, 160);
	struct lb_admit_gent *a, *b;
	uint64_t ka = lb_admit_key_of(f->sh, 0, &c, 1, 0);
	uint64_t kb = lb_admit_key_of(f->sh, 0, &c, 2, 0);

	(void)state;
	assert_int_equal(lb_admit_check(f->lc[0], 0, &c, 1, 0, 0),
			 LB_ADMIT_PASS);
	a = lb_admit_shm_find(f->sh, ka);
	assert_non_null(a);
	/* a floor's batch, 160 / 16 = 10, was taken */
	assert_int_equal(lb_tb_global_avail(&a->b, 0), 150);
	assert_int_equal(lb_admit_check(f->lc[0], 0, &c, 2, 0, 0),
			 LB_ADMIT_PASS);
	assert_int_equal(f->st[0].evictions, 1);
	assert_int_equal(lb_tb_global_avail(&a->b, 0), 159);
	for (int i = 0; i < 20; i++)
		assert_int_equal(lb_admit_check(f->lc[0], 0, &c,
						1 + (uint32_t)i % 2, 0, 0),
				 LB_ADMIT_PASS);
	b = lb_admit_shm_find(f->sh, kb);
	assert_non_null(b);
	/* 11 admissions each; 2 still holds 9 of its last batch */
	assert_int_equal(lb_tb_global_avail(&a->b, 0), 160 - 11);
	assert_int_equal(lb_tb_global_avail(&b->b, 0), 160 - 11 - 9);
	fx_free(f);
}

/*
 * Keys without a slot share the worker's one local bucket of the
 * overflow bucket: a flood of them borrows a batch at a time, not once
 * per key; a key without a slot looks for one again only 2.1 s later,
 * and then gets an entry that has become reusable.
 */
static void
test_no_slot_mark(void **state)
{
	struct lb_admit_conf c = conf(LB_ADMIT_KEY_CLIENT, 1000, 1600);
	struct fx *f = fx_new(16, 1024, 1);
	uint64_t pass = 0, key, at0, b0;

	(void)state;
	fill_table(f, &c);
	at0 = f->st[0].shm_atomics;
	b0 = f->st[0].borrows;
	for (uint32_t i = 0; i < 400; i++)
		pass += lb_admit_check(f->lc[0], 0, &c, 5000 + i % 200, 0,
				       SEC + i * 100000) == LB_ADMIT_PASS;
	assert_int_equal(pass, 400);
	assert_int_equal(f->st[0].table_full, 400);
	/* a 100-token batch (1600 / 16) covers the 400 in 1 s + 40 ms */
	assert_true(f->st[0].borrows - b0 <= 4);
	assert_true((f->st[0].shm_atomics - at0) * 10 < 400);
	key = lb_admit_key_of(f->sh, 0, &c, 5000, 0);
	/* At 2.5 s the table's entries are reusable, but the key's mark
	 * (1 s) is recent: still the overflow bucket. */
	assert_int_equal(lb_admit_check(f->lc[0], 0, &c, 5000, 0,
					2500 * MS),
			 LB_ADMIT_PASS);
	assert_int_equal(f->st[0].table_full, 401);
	assert_null(lb_admit_shm_find(f->sh, key));
	/* At 3.5 s it looks again and takes an idle entry. */
	assert_int_equal(lb_admit_check(f->lc[0], 0, &c, 5000, 0,
					3500 * MS),
			 LB_ADMIT_PASS);
	assert_int_equal(f->st[0].table_full, 401);
	assert_non_null(lb_admit_shm_find(f->sh, key));
	fx_free(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conf_check),
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_shm_table),
		cmocka_unit_test(test_rate_one_worker),
		cmocka_unit_test(test_negative_cache),
		cmocka_unit_test(test_client_isolation),
		cmocka_unit_test(test_ipv6_keys),
		cmocka_unit_test(test_ipv6_record_key),
		cmocka_unit_test(test_two_workers_share),
		cmocka_unit_test(test_atomics_per_admission),
		cmocka_unit_test(test_cluster_bucket),
		cmocka_unit_test(test_local_lru),
		cmocka_unit_test(test_table_full),
		cmocka_unit_test(test_secret),
		cmocka_unit_test(test_threads_never_over_dispense),
		cmocka_unit_test(test_floor_accuracy_four_workers),
		cmocka_unit_test(test_sparse_keys_batch),
		cmocka_unit_test(test_evict_gives_back),
		cmocka_unit_test(test_no_slot_mark),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
