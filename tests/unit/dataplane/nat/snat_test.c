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

#include "lb/rng.h"
#include "lb/snat.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_W 16

static uint32_t
ip4(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	return htonl((uint32_t)a << 24 | (uint32_t)b << 16 |
		     (uint32_t)c << 8 | d);
}

/* 10.0.113.1 to 10.0.113.4, filled in by setup(). */
static uint32_t addrs4[4];

static int
setup(void **state)
{
	(void)state;
	for (uint8_t i = 0; i < 4; i++)
		addrs4[i] = ip4(10, 0, 113, (uint8_t)(i + 1));
	return 0;
}

static struct lb_snat *
make(const uint32_t *addrs, uint32_t nb_addrs, uint16_t lo, uint16_t hi,
     uint32_t nb_workers, uint32_t w)
{
	struct lb_snat_conf c = {
		.addrs = addrs,
		.nb_addrs = nb_addrs,
		.port_min = lo,
		.port_max = hi,
		.nb_workers = nb_workers,
		.worker_id = w,
	};
	struct lb_snat *s = lb_snat_create(&c);

	assert_non_null(s);
	return s;
}

static void
test_bad_config(void **state)
{
	static uint32_t zero_addr[2], dup_addr[3];
	static uint32_t many[LB_SNAT_MAX_ADDRS + 1];
	const struct {
		const char *why;
		struct lb_snat_conf c;
	} bad[] = {
		{ "no address list", { NULL, 1, 0, 0, 1, 0, 0, 0 } },
		{ "no address", { addrs4, 0, 0, 0, 1, 0, 0, 0 } },
		{ "too many addresses",
		  { many, LB_SNAT_MAX_ADDRS + 1, 0, 0, 1, 0, 0, 0 } },
		{ "zero address", { zero_addr, 2, 0, 0, 1, 0, 0, 0 } },
		{ "repeated address", { dup_addr, 3, 0, 0, 1, 0, 0, 0 } },
		{ "W = 0", { addrs4, 1, 0, 0, 0, 0, 0, 0 } },
		{ "W too large",
		  { addrs4, 1, 0, 0, LB_SNAT_MAX_WORKERS + 1, 0, 0, 0 } },
		{ "w = W", { addrs4, 1, 0, 0, 4, 4, 0, 0 } },
		{ "w > W", { addrs4, 1, 0, 0, 4, 9, 0, 0 } },
		{ "inverted range", { addrs4, 1, 2000, 1999, 1, 0, 0, 0 } },
		{ "port 0 in the range", { addrs4, 1, 0, 100, 1, 0, 0, 0 } },
		{ "range narrower than W", { addrs4, 1, 1000, 1002, 4, 0, 0, 0 } },
		{ "empty slice for the last worker",
		  { addrs4, 2, 65535, 65535, 2, 1, 0, 0 } },
	};
	const struct lb_snat_conf good[] = {
		{ addrs4, 1, 0, 0, 1, 0, 0, 0 },              /* defaults */
		{ addrs4, 4, 5000, 5000, 1, 0, 0, 0 },        /* one port */
		{ addrs4, 2, 1000, 1003, 4, 3, 0, 0 },        /* one port each */
		{ many, LB_SNAT_MAX_ADDRS, 60000, 60063, 64, 63, 0, 0 },
	};
	void *mem;

	(void)state;
	for (uint32_t i = 0; i < ARRAY_SIZE(many); i++)
		many[i] = htonl(0x0a000001u + i);
	zero_addr[0] = ip4(10, 0, 0, 1);
	dup_addr[0] = dup_addr[2] = ip4(10, 0, 0, 1);
	dup_addr[1] = ip4(10, 0, 0, 2);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char buf[256] __attribute__((aligned(8)));

		if (lb_snat_conf_check(&bad[i].c) != -EINVAL)
			fail_msg("accepted: %s", bad[i].why);
		assert_int_equal(lb_snat_mem_size(&bad[i].c), 0);
		assert_int_equal(lb_snat_init(buf, &bad[i].c), -EINVAL);
		errno = 0;
		assert_null(lb_snat_create(&bad[i].c));
		assert_int_equal(errno, EINVAL);
	}
	assert_int_equal(lb_snat_conf_check(NULL), -EINVAL);
	assert_int_equal(lb_snat_mem_size(NULL), 0);
	assert_null(lb_snat_create(NULL));
	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		struct lb_snat *s;

		if (lb_snat_conf_check(&good[i]) != 0)
			fail_msg("refused good config %zu", i);
		s = lb_snat_create(&good[i]);
		assert_non_null(s);
		assert_true(lb_snat_capacity(s) >= good[i].nb_addrs);
		lb_snat_free(s);
	}
	mem = malloc(lb_snat_mem_size(&good[1]) + 8);
	assert_non_null(mem);
	assert_int_equal(lb_snat_init(NULL, &good[1]), -EINVAL);
	assert_int_equal(lb_snat_init((char *)mem + 4, &good[1]), -EINVAL);
	assert_int_equal(lb_snat_init(mem, &good[1]), 0);
	assert_int_equal(lb_snat_capacity(mem), 4);
	free(mem);
}

static void
test_defaults(void **state)
{
	struct lb_snat *s = make(addrs4, 1, 0, 0, 1, 0);

	(void)state;
	assert_int_equal(s->port_min, 1024);
	assert_int_equal(s->port_max, 65535);
	assert_int_equal(lb_snat_capacity(s), 65535 - 1024 + 1);
	assert_int_equal(lb_snat_nb_free(s), 65535 - 1024 + 1);
	lb_snat_free(s);
}

/* Drains every worker's slice and checks that the slices are disjoint,
 * cover the range on every address, and agree with lb_snat_owner(). */
static void
test_slices_disjoint_and_covering(void **state)
{
	static const struct {
		uint32_t nb_addrs;
		uint16_t lo, hi;
		uint32_t w;
	} rows[] = {
		{ 2, 0, 0, 4 },         { 3, 1000, 1009, 3 },
		{ 1, 5000, 5000, 1 },   { 2, 1024, 2047, 8 },
		{ 1, 60000, 65535, 7 }, { 4, 1, 100, 16 },
		{ 1, 1, 65535, 5 },
	};
	static uint8_t seen[4][65536];

	(void)state;
	for (size_t r = 0; r < ARRAY_SIZE(rows); r++) {
		uint32_t lo = rows[r].lo ? rows[r].lo : 1024;
		uint32_t hi = rows[r].hi ? rows[r].hi : 65535;
		uint64_t total = 0;
		uint32_t min_slice = UINT32_MAX, max_slice = 0;

		memset(seen, 0, sizeof(seen));
		for (uint32_t w = 0; w < rows[r].w; w++) {
			struct lb_snat *s = make(addrs4, rows[r].nb_addrs,
						 rows[r].lo, rows[r].hi,
						 rows[r].w, w);
			uint32_t ip, n = 0;
			uint16_t port;
			struct lb_snat_stats st;

			while (lb_snat_port_alloc(s, NULL, NULL, &ip, &port) == 0) {
				int a = lb_snat_addr_index(s, ip);
				uint16_t p = ntohs(port);

				assert_true(a >= 0 &&
					    (uint32_t)a < rows[r].nb_addrs);
				assert_true(p >= lo && p <= hi);
				if (seen[a][p])
					fail_msg("row %zu: %u:%u twice", r,
						 (unsigned)a, (unsigned)p);
				seen[a][p] = 1;
				assert_int_equal(lb_snat_owner(s, port), w);
				n++;
			}
			assert_int_equal(n, lb_snat_capacity(s));
			assert_int_equal(lb_snat_nb_free(s), 0);
			assert_int_equal(lb_snat_port_alloc(s, NULL, NULL, &ip, &port),
					 -ENOSPC);
			lb_snat_stats_get(s, &st);
			assert_int_equal(st.allocs, n);
			assert_int_equal(st.exhausted, 2);
			total += n;
			n /= rows[r].nb_addrs;
			min_slice = n < min_slice ? n : min_slice;
			max_slice = n > max_slice ? n : max_slice;
			lb_snat_free(s);
		}
		assert_int_equal(total, (uint64_t)rows[r].nb_addrs *
						(hi - lo + 1));
		for (uint32_t a = 0; a < rows[r].nb_addrs; a++)
			for (uint32_t p = lo; p <= hi; p++)
				assert_int_equal(seen[a][p], 1);
		/* p mod W gives every worker the same share within one. */
		assert_true(max_slice - min_slice <= 1);
	}
}

static void
test_owner_of_every_port(void **state)
{
	static const uint32_t workers[] = { 1, 2, 3, 4, 7, 8, 16 };
	/* exact vectors for W = 4 over the default range */
	static const struct {
		uint16_t port;
		uint32_t owner;
	} vec[] = {
		{ 0, LB_SNAT_NO_OWNER }, { 80, LB_SNAT_NO_OWNER },
		{ 1023, LB_SNAT_NO_OWNER }, { 1024, 0 }, { 1025, 1 },
		{ 1027, 3 }, { 1028, 0 }, { 40001, 1 }, { 65535, 3 },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(workers); i++) {
		uint32_t nw = workers[i];
		struct lb_snat *first = make(addrs4, 1, 0, 0, nw, 0);
		struct lb_snat *last = make(addrs4, 1, 0, 0, nw, nw - 1);

		for (uint32_t p = 0; p <= 65535; p++) {
			uint32_t want = p < 1024 ? LB_SNAT_NO_OWNER : p % nw;
			uint16_t np = htons((uint16_t)p);

			assert_int_equal(lb_snat_owner(first, np), want);
			assert_int_equal(lb_snat_owner(last, np), want);
		}
		for (size_t v = 0; nw == 4 && v < ARRAY_SIZE(vec); v++) {
			uint16_t np = htons(vec[v].port);

			assert_int_equal(lb_snat_owner(first, np),
					 vec[v].owner);
		}
		lb_snat_free(first);
		lb_snat_free(last);
	}
}

static void
test_alloc_rotates_addresses(void **state)
{
	/* Worker 1 of 4 on 2000-2099 owns 2001, 2005, 2009 ... */
	struct lb_snat *s = make(addrs4, 3, 2000, 2099, 4, 1);
	static const struct {
		unsigned int addr;
		uint16_t port;
	} want[] = {
		{ 0, 2001 }, { 1, 2001 }, { 2, 2001 },
		{ 0, 2005 }, { 1, 2005 }, { 2, 2005 }, { 0, 2009 },
	};

	(void)state;
	assert_int_equal(lb_snat_capacity(s), 3 * 25);
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		uint32_t ip;
		uint16_t port;

		assert_int_equal(lb_snat_port_alloc(s, NULL, NULL, &ip, &port), 0);
		assert_int_equal(ip, addrs4[want[i].addr]);
		assert_int_equal(ntohs(port), want[i].port);
	}
	lb_snat_free(s);
}

/* A restarted dataplane starts elsewhere in its queue, so it does not hand
 * out at once the pairs its previous run left in TIME_WAIT; every pair is
 * still handed out exactly once, wrapping at the end. */
static void
test_start_offset(void **state)
{
	struct lb_snat_conf c = {
		.addrs = addrs4, .nb_addrs = 3, .port_min = 2000,
		.port_max = 2099, .nb_workers = 4, .worker_id = 1,
		.start = 3 * 25 * 7 + 4, /* modulo 75: pair 4 */
	};
	struct lb_snat *s = lb_snat_create(&c);
	uint8_t seen[3][100] = { { 0 } };
	uint32_t ip;
	uint16_t port;

	(void)state;
	assert_non_null(s);
	assert_int_equal(lb_snat_port_alloc(s, NULL, NULL, &ip, &port), 0);
	/* pair 4 = address 4 mod 3 = 1, port slot 4 / 3 = 1: 2005 */
	assert_int_equal(ip, addrs4[1]);
	assert_int_equal(ntohs(port), 2005);
	assert_int_equal(lb_snat_port_free(s, ip, port), 0);
	for (int i = 0; i < 75; i++) {
		assert_int_equal(lb_snat_port_alloc(s, NULL, NULL, &ip, &port), 0);
		for (int a = 0; a < 3; a++)
			if (ip == addrs4[a]) {
				assert_int_equal(seen[a][ntohs(port) - 2000], 0);
				seen[a][ntohs(port) - 2000] = 1;
			}
	}
	assert_int_equal(lb_snat_port_alloc(s, NULL, NULL, &ip, &port), -ENOSPC);
	lb_snat_free(s);
}

static void
test_free_and_realloc_in_turn(void **state)
{
	uint32_t ip = ip4(192, 0, 2, 7);
	struct lb_snat *s = make(&ip, 1, 2000, 2003, 1, 0);
	static const uint16_t order[] = { 2001, 2002, 2003, 2000 };
	uint32_t got_ip;
	uint16_t port;

	(void)state;
	assert_int_equal(lb_snat_port_alloc(s, NULL, NULL, &got_ip, &port), 0);
	assert_int_equal(ntohs(port), 2000);
	assert_int_equal(lb_snat_port_free(s, ip, port), 0);
	/* the released port goes to the back of the queue */
	for (size_t i = 0; i < ARRAY_SIZE(order); i++) {
		assert_int_equal(lb_snat_port_alloc(s, NULL, NULL, &got_ip, &port), 0);
		assert_int_equal(got_ip, ip);
		assert_int_equal(ntohs(port), order[i]);
	}
	assert_int_equal(lb_snat_port_alloc(s, NULL, NULL, &got_ip, &port), -ENOSPC);
	/* exhausted: freeing makes exactly those pairs available again */
	assert_int_equal(lb_snat_port_free(s, ip, htons(2002)), 0);
	assert_int_equal(lb_snat_port_free(s, ip, htons(2000)), 0);
	assert_int_equal(lb_snat_nb_free(s), 2);
	assert_int_equal(lb_snat_port_alloc(s, NULL, NULL, &got_ip, &port), 0);
	assert_int_equal(ntohs(port), 2002);
	assert_int_equal(lb_snat_port_alloc(s, NULL, NULL, &got_ip, &port), 0);
	assert_int_equal(ntohs(port), 2000);
	assert_int_equal(lb_snat_port_alloc(s, NULL, NULL, &got_ip, &port), -ENOSPC);
	lb_snat_free(s);
}

static void
test_bad_free(void **state)
{
	/* worker 1 of 2 on 3000-3009: ports 3001, 3003 ... 3009 */
	struct lb_snat *s = make(addrs4, 2, 3000, 3009, 2, 1);
	struct lb_snat_stats st;
	/* address index 9: not a SNAT address */
	static const struct {
		const char *why;
		unsigned int addr;
		uint16_t port;
	} foreign[] = {
		{ "port of worker 0", 0, 3002 },
		{ "port of worker 0, first of the range", 1, 3000 },
		{ "below the range", 0, 2999 },
		{ "above the range", 0, 3011 },
		{ "port 0", 0, 0 },
		{ "port 65535", 1, 65535 },
		{ "address not in this allocator", 2, 3001 },
		{ "not a SNAT address", 9, 3001 },
	};
	uint32_t ip;
	uint16_t port;

	(void)state;
	/* With every pair of the slice in use, a release that maps onto
	 * any of them must still be refused if it is not this slice's. */
	while (lb_snat_port_alloc(s, NULL, NULL, &ip, &port) == 0)
		;
	assert_int_equal(lb_snat_capacity(s), 10);
	for (size_t i = 0; i < ARRAY_SIZE(foreign); i++) {
		uint32_t a = foreign[i].addr < 4 ? addrs4[foreign[i].addr]
						 : ip4(10, 0, 113, 99);

		if (lb_snat_port_free(s, a, htons(foreign[i].port)) != -EINVAL)
			fail_msg("accepted: %s", foreign[i].why);
		assert_int_equal(lb_snat_nb_free(s), 0);
	}
	/* double free */
	assert_int_equal(lb_snat_port_free(s, addrs4[1], htons(3005)), 0);
	assert_int_equal(lb_snat_port_free(s, addrs4[1], htons(3005)),
			 -EINVAL);
	assert_int_equal(lb_snat_nb_free(s), 1);
	lb_snat_stats_get(s, &st);
	assert_int_equal(st.bad_free, ARRAY_SIZE(foreign) + 1);
	assert_int_equal(st.frees, 1);
	assert_int_equal(lb_snat_port_free(NULL, ip, port), -EINVAL);
	assert_int_equal(lb_snat_port_alloc(NULL, NULL, NULL, &ip, &port), -EINVAL);
	assert_int_equal(lb_snat_port_alloc(s, NULL, NULL, NULL, &port), -EINVAL);
	assert_int_equal(lb_snat_port_alloc(s, NULL, NULL, &ip, NULL), -EINVAL);
	assert_int_equal(lb_snat_nb_free(NULL), 0);
	assert_int_equal(lb_snat_capacity(NULL), 0);
	lb_snat_free(s);
}

static void
test_addr_index(void **state)
{
	static uint32_t many[LB_SNAT_MAX_ADDRS];
	struct lb_snat *s;

	(void)state;
	for (uint32_t i = 0; i < LB_SNAT_MAX_ADDRS; i++)
		many[i] = ip4(10, 20, (uint8_t)(i >> 4), (uint8_t)(i * 16));
	s = make(many, LB_SNAT_MAX_ADDRS, 1024, 1024 + 63, 64, 5);
	for (uint32_t i = 0; i < LB_SNAT_MAX_ADDRS; i++)
		assert_int_equal(lb_snat_addr_index(s, many[i]), (int)i);
	assert_int_equal(lb_snat_addr_index(s, ip4(10, 20, 0, 1)), -ENOENT);
	assert_int_equal(lb_snat_addr_index(s, 0), -ENOENT);
	assert_int_equal(lb_snat_addr_index(NULL, many[0]), -ENOENT);
	/* one port per address: the 256 allocations visit each address */
	for (uint32_t i = 0; i < LB_SNAT_MAX_ADDRS; i++) {
		uint32_t ip;
		uint16_t port;

		assert_int_equal(lb_snat_port_alloc(s, NULL, NULL, &ip, &port), 0);
		assert_int_equal(ip, many[i]);
		assert_int_equal(ntohs(port), 1024 + 5);
	}
	lb_snat_free(s);
}

static void
test_layout_check(void **state)
{
	struct lb_snat_conf c = { addrs4, 2, 4000, 4099, 3, 2, 0, 0 };
	size_t sz = lb_snat_mem_size(&c);
	struct lb_snat *s = lb_snat_create(&c), *copy;
	uint32_t ip;
	uint16_t port;

	(void)state;
	assert_non_null(s);
	assert_int_equal(lb_snat_check(s, sz), 0);
	assert_int_equal(lb_snat_check(s, sz - 1), -EINVAL);
	assert_int_equal(lb_snat_check(NULL, sz), -EINVAL);
	assert_int_equal(lb_snat_port_alloc(s, NULL, NULL, &ip, &port), 0);
	/* pointer-free: a byte copy elsewhere carries on where s was */
	copy = malloc(sz);
	assert_non_null(copy);
	memcpy(copy, s, sz);
	assert_int_equal(lb_snat_check(copy, sz), 0);
	assert_int_equal(lb_snat_port_free(copy, ip, port), 0);
	assert_int_equal(lb_snat_port_free(copy, ip, port), -EINVAL);
	assert_int_equal(lb_snat_nb_free(copy), lb_snat_capacity(copy));
	copy->version++;
	assert_int_equal(lb_snat_check(copy, sz), -EPROTO);
	copy->version--;
	copy->magic++;
	assert_int_equal(lb_snat_check(copy, sz), -EINVAL);
	free(copy);
	lb_snat_free(s);
}

static struct lb_snat_addr *
slots(const struct lb_snat *s)
{
	return (struct lb_snat_addr *)((uintptr_t)s + s->slots_off);
}

/* Host-order port of slice position @p item (taken modulo the slice). */
static uint16_t
item_port(const struct lb_snat *s, uint32_t item)
{
	return (uint16_t)(s->first_port + item % s->nb_ports * s->nb_workers);
}

static void
test_random_against_reference(void **state)
{
	/* worker 2 of 3 on 1024-1323 over 2 addresses: 200 pairs */
	struct lb_snat *s = make(addrs4, 2, 1024, 1323, 3, 2);
	static uint8_t held[2][65536];
	static uint32_t list_ip[200];
	static uint16_t list_port[200];
	uint32_t n = 0;
	struct lb_xoshiro x;
	struct lb_rng rng;
	struct lb_snat_stats st;

	(void)state;
	assert_int_equal(lb_snat_capacity(s), 200);
	memset(held, 0, sizeof(held));
	lb_xoshiro_seed(&x, 99);
	rng = lb_rng_xoshiro(&x);
	for (int op = 0; op < 20000; op++) {
		if (lb_rng_below(&rng, 2) == 0) {
			uint32_t ip;
			uint16_t port;
			uint32_t head[2];
			int rc, a;

			for (a = 0; a < 2; a++)
				head[a] = slots(s)[a].head;
			rc = lb_snat_port_alloc(s, NULL, NULL, &ip, &port);
			if (rc == -ENOSPC) {
				/* Only when the ports next in line on both
				 * addresses are all held. */
				for (a = 0; a < 2; a++)
					for (uint32_t k = 0; k < LB_SNAT_TRIES;
					     k++)
						assert_int_equal(
							held[a][item_port(
								s, head[a] + k)],
							1);
				continue;
			}
			assert_int_equal(rc, 0);
			a = lb_snat_addr_index(s, ip);
			assert_true(a >= 0);
			assert_int_equal(held[a][ntohs(port)], 0);
			assert_int_equal(lb_snat_owner(s, port), 2);
			held[a][ntohs(port)] = 1;
			list_ip[n] = ip;
			list_port[n] = port;
			n++;
		} else if (n > 0) {
			uint32_t k = (uint32_t)lb_rng_below(&rng, n);
			int a = lb_snat_addr_index(s, list_ip[k]);

			assert_int_equal(lb_snat_port_free(s, list_ip[k],
							   list_port[k]),
					 0);
			held[a][ntohs(list_port[k])] = 0;
			n--;
			list_ip[k] = list_ip[n];
			list_port[k] = list_port[n];
		}
		assert_int_equal(lb_snat_nb_free(s), 200 - n);
	}
	lb_snat_stats_get(s, &st);
	assert_int_equal(st.allocs - st.frees, n);
	assert_true(st.exhausted > 0);
	assert_int_equal(st.bad_free, 0);
	lb_snat_free(s);
}

/* A flood towards one destination and the ports of the others. */
struct dst_ref {
	uint8_t held[4][65536]; /* per destination, by port */
	uint32_t dst;		/* the destination allocating */
	uint64_t calls;
};

static bool
dst_taken(void *arg, uint32_t ip, uint16_t port)
{
	struct dst_ref *r = arg;

	(void)ip;
	r->calls++;
	return r->held[r->dst][ntohs(port)] != 0;
}

static void
test_ports_per_destination(void **state)
{
	/* one address, worker 1 of 2 on 3000-3199: 100 ports */
	struct lb_snat *s = make(addrs4, 1, 3000, 3199, 2, 1);
	static struct dst_ref r;
	struct lb_snat_stats st;
	uint32_t ip;
	uint16_t port;
	int n = 0;

	(void)state;
	memset(&r, 0, sizeof(r));
	/* A flood towards destination 0 takes every port there is... */
	r.dst = 0;
	while (lb_snat_port_alloc(s, dst_taken, &r, &ip, &port) == 0) {
		assert_int_equal(r.held[0][ntohs(port)], 0);
		r.held[0][ntohs(port)] = 1;
		n++;
	}
	assert_int_equal(n, 100);
	assert_int_equal(lb_snat_nb_free(s), 0);
	assert_int_equal(lb_snat_addr_used(s, addrs4[0]), 100);
	/* ...refused from then on at the cost of LB_SNAT_TRIES lookups. */
	r.calls = 0;
	assert_int_equal(lb_snat_port_alloc(s, dst_taken, &r, &ip, &port),
			 -ENOSPC);
	assert_int_equal(r.calls, LB_SNAT_TRIES);
	/* Without the check, one flow per port: refused as well. */
	assert_int_equal(lb_snat_port_alloc(s, NULL, NULL, &ip, &port),
			 -ENOSPC);
	/* Every other destination still gets all of its ports, each with
	 * one lookup. */
	for (uint32_t d = 1; d < 4; d++) {
		r.dst = d;
		r.calls = 0;
		for (int i = 0; i < 100; i++) {
			assert_int_equal(lb_snat_port_alloc(s, dst_taken, &r,
							    &ip, &port),
					 0);
			assert_int_equal(r.held[d][ntohs(port)], 0);
			r.held[d][ntohs(port)] = 1;
		}
		assert_int_equal(r.calls, 100);
		assert_int_equal(lb_snat_port_alloc(s, dst_taken, &r, &ip,
						    &port),
				 -ENOSPC);
	}
	assert_int_equal(lb_snat_addr_used(s, addrs4[0]), 400);
	/* A port comes back for its destination only: release 3001's flow
	 * towards destination 2 and it is the one destination 2 gets. */
	assert_int_equal(lb_snat_port_free(s, addrs4[0], htons(3001)), 0);
	r.held[2][3001] = 0;
	r.dst = 2;
	assert_int_equal(lb_snat_port_alloc(s, dst_taken, &r, &ip, &port), 0);
	assert_int_equal(ntohs(port), 3001);
	r.dst = 3;
	assert_int_equal(lb_snat_port_alloc(s, dst_taken, &r, &ip, &port),
			 -ENOSPC);
	/* Released by all four, a port is free for anyone again. */
	for (uint32_t d = 0; d < 4; d++)
		assert_int_equal(lb_snat_port_free(s, addrs4[0], htons(3199)),
				 0);
	assert_int_equal(lb_snat_port_free(s, addrs4[0], htons(3199)),
			 -EINVAL);
	assert_int_equal(lb_snat_nb_free(s), 1);
	/* The cursor reaches it within a turn of the slice. */
	for (int k = 0, rc = -ENOSPC; rc != 0; k++) {
		assert_true(k < 100 / (int)LB_SNAT_TRIES + 1);
		rc = lb_snat_port_alloc(s, NULL, NULL, &ip, &port);
	}
	assert_int_equal(ntohs(port), 3199);
	lb_snat_stats_get(s, &st);
	assert_int_equal(st.bad_free, 1);
	assert_int_equal(st.allocs - st.frees, 397);
	assert_int_equal(lb_snat_addr_used(s, addrs4[0]), 397);
	lb_snat_free(s);
}

/* A draining address waits for the flows of every destination. */
static void
test_drain_per_destination(void **state)
{
	struct lb_snat *s = make(addrs4, 1, 3000, 3003, 1, 0);
	static struct dst_ref r;
	uint32_t ip;
	uint16_t port;

	(void)state;
	memset(&r, 0, sizeof(r));
	for (r.dst = 0; r.dst < 2; r.dst++) {
		assert_int_equal(lb_snat_port_alloc(s, dst_taken, &r, &ip,
						    &port),
				 0);
		r.held[r.dst][ntohs(port)] = 1;
	}
	/* the second destination shares nothing held towards it: it got
	 * the next port in line, not the first one again */
	assert_int_equal(lb_snat_addr_used(s, addrs4[0]), 2);
	assert_int_equal(lb_snat_addr_del(s, addrs4[0]), 0);
	assert_int_equal(lb_snat_port_free(s, addrs4[0], htons(3000)), 0);
	assert_int_equal(lb_snat_addr_state(s, addrs4[0]),
			 LB_SNAT_ADDR_DRAINING);
	assert_int_equal(lb_snat_port_free(s, addrs4[0], htons(3001)), 0);
	assert_int_equal(lb_snat_addr_state(s, addrs4[0]), LB_SNAT_ADDR_FREE);
	lb_snat_free(s);
}

/* An allocator with @p max address slots and the addresses given. */
static struct lb_snat *
make_slots(const uint32_t *addrs, uint32_t nb_addrs, uint32_t max,
	   uint16_t lo, uint16_t hi)
{
	struct lb_snat_conf c = {
		.addrs = addrs,
		.nb_addrs = nb_addrs,
		.port_min = lo,
		.port_max = hi,
		.nb_workers = 1,
		.max_addrs = max,
	};
	struct lb_snat *s = lb_snat_create(&c);

	assert_non_null(s);
	return s;
}

/* Started with no address, the allocator refuses until one is added;
 * an added address hands out its whole slice, and joins the rotation. */
static void
test_addr_add(void **state)
{
	struct lb_snat *s = make_slots(NULL, 0, 2, 3000, 3003);
	uint32_t ip;
	uint16_t port;

	(void)state;
	assert_int_equal(lb_snat_capacity(s), 0);
	assert_int_equal(lb_snat_port_alloc(s, NULL, NULL, &ip, &port), -ENOSPC);
	assert_int_equal(lb_snat_addr_add(s, addrs4[0]), 0);
	assert_int_equal(lb_snat_addr_add(s, addrs4[0]), -EEXIST);
	assert_int_equal(lb_snat_addr_state(s, addrs4[0]),
			 LB_SNAT_ADDR_ACTIVE);
	assert_int_equal(lb_snat_capacity(s), 4);
	assert_int_equal(lb_snat_port_alloc(s, NULL, NULL, &ip, &port), 0);
	assert_int_equal(ip, addrs4[0]);
	/* A second address takes its turn. */
	assert_int_equal(lb_snat_addr_add(s, addrs4[1]), 0);
	assert_int_equal(lb_snat_capacity(s), 8);
	assert_int_equal(lb_snat_nb_free(s), 7);
	assert_int_equal(lb_snat_port_alloc(s, NULL, NULL, &ip, &port), 0);
	assert_int_equal(ip, addrs4[1]);
	assert_int_equal(ntohs(port), 3000);
	assert_int_equal(lb_snat_port_alloc(s, NULL, NULL, &ip, &port), 0);
	assert_int_equal(ip, addrs4[0]);
	/* Every slot taken. */
	assert_int_equal(lb_snat_addr_add(s, addrs4[2]), -ENOSPC);
	assert_int_equal(lb_snat_addr_add(s, 0), -EINVAL);
	assert_int_equal(lb_snat_addr_add(NULL, addrs4[2]), -EINVAL);
	lb_snat_free(s);
}

/* A removed address hands out nothing more; its pairs in use are given
 * back as usual; its slot is free when the last comes back. */
static void
test_addr_drain(void **state)
{
	struct lb_snat *s = make_slots(addrs4, 2, 2, 3000, 3003);
	uint32_t ip[4];
	uint16_t port[4];
	struct lb_snat_stats st;

	(void)state;
	for (int i = 0; i < 4; i++)
		assert_int_equal(lb_snat_port_alloc(s, NULL, NULL, &ip[i], &port[i]), 0);
	/* ip[0], ip[2] on address 0; ip[1], ip[3] on address 1 */
	assert_int_equal(ip[1], addrs4[1]);
	assert_int_equal(lb_snat_addr_used(s, addrs4[1]), 2);
	assert_int_equal(lb_snat_addr_del(s, addrs4[1]), 0);
	assert_int_equal(lb_snat_addr_del(s, addrs4[1]), -ENOENT);
	assert_int_equal(lb_snat_addr_state(s, addrs4[1]),
			 LB_SNAT_ADDR_DRAINING);
	assert_int_equal(lb_snat_capacity(s), 4);
	assert_int_equal(lb_snat_nb_free(s), 2);
	for (int i = 0; i < 2; i++) {
		uint32_t a;
		uint16_t p;

		assert_int_equal(lb_snat_port_alloc(s, NULL, NULL, &a, &p), 0);
		assert_int_equal(a, addrs4[0]);
	}
	assert_int_equal(lb_snat_port_alloc(s, NULL, NULL, &ip[0], &port[0]), -ENOSPC);
	/* No new address while the drained one holds its slot. */
	assert_int_equal(lb_snat_addr_add(s, addrs4[2]), -ENOSPC);
	/* Its flows end: the first release keeps the slot. */
	assert_int_equal(lb_snat_port_free(s, ip[1], port[1]), 0);
	assert_int_equal(lb_snat_addr_state(s, addrs4[1]),
			 LB_SNAT_ADDR_DRAINING);
	assert_int_equal(lb_snat_port_free(s, ip[3], port[3]), 0);
	assert_int_equal(lb_snat_addr_state(s, addrs4[1]), LB_SNAT_ADDR_FREE);
	assert_int_equal(lb_snat_addr_used(s, addrs4[1]), 0);
	assert_int_equal(lb_snat_addr_index(s, addrs4[1]), -ENOENT);
	/* Gone: a late release of it is foreign. */
	assert_int_equal(lb_snat_port_free(s, ip[3], port[3]), -EINVAL);
	lb_snat_stats_get(s, &st);
	assert_int_equal(st.bad_free, 1);
	/* The slot serves a new address with its whole slice. */
	assert_int_equal(lb_snat_addr_add(s, addrs4[2]), 0);
	assert_int_equal(lb_snat_nb_free(s), 4);
	/* Unused when removed: gone at once. */
	assert_int_equal(lb_snat_addr_del(s, addrs4[2]), 0);
	assert_int_equal(lb_snat_addr_state(s, addrs4[2]), LB_SNAT_ADDR_FREE);
	lb_snat_free(s);
}

/* Added back while it drains: active again, its pairs in use kept. */
static void
test_addr_readd_while_draining(void **state)
{
	struct lb_snat *s = make_slots(addrs4, 1, 1, 3000, 3001);
	uint32_t ip, ip2;
	uint16_t port, port2;

	(void)state;
	assert_int_equal(lb_snat_port_alloc(s, NULL, NULL, &ip, &port), 0);
	assert_int_equal(lb_snat_addr_del(s, addrs4[0]), 0);
	assert_int_equal(lb_snat_port_alloc(s, NULL, NULL, &ip2, &port2), -ENOSPC);
	assert_int_equal(lb_snat_addr_add(s, addrs4[0]), 0);
	assert_int_equal(lb_snat_addr_used(s, addrs4[0]), 1);
	assert_int_equal(lb_snat_port_alloc(s, NULL, NULL, &ip2, &port2), 0);
	assert_int_not_equal(port2, port);
	assert_int_equal(lb_snat_port_free(s, ip, port), 0);
	assert_int_equal(lb_snat_port_free(s, ip2, port2), 0);
	assert_int_equal(lb_snat_addr_state(s, addrs4[0]),
			 LB_SNAT_ADDR_ACTIVE);
	lb_snat_free(s);
}

/* lb_snat_sync() makes a table's list the active set. */
static void
test_sync(void **state)
{
	struct lb_snat *s = make_slots(addrs4, 2, 3, 3000, 3003);
	const uint32_t next[] = { addrs4[1], addrs4[2], addrs4[3] };
	uint32_t ip;
	uint16_t port;

	(void)state;
	/* a pair on address 0 stays in use */
	assert_int_equal(lb_snat_port_alloc(s, NULL, NULL, &ip, &port), 0);
	assert_int_equal(ip, addrs4[0]);
	/* address 0 drains and holds its slot: the third new one misses */
	assert_int_equal(lb_snat_sync(s, next, 3), 1);
	assert_int_equal(lb_snat_addr_state(s, addrs4[0]),
			 LB_SNAT_ADDR_DRAINING);
	assert_int_equal(lb_snat_addr_state(s, addrs4[1]),
			 LB_SNAT_ADDR_ACTIVE);
	assert_int_equal(lb_snat_addr_state(s, addrs4[2]),
			 LB_SNAT_ADDR_ACTIVE);
	assert_int_equal(lb_snat_addr_state(s, addrs4[3]), LB_SNAT_ADDR_FREE);
	assert_int_equal(lb_snat_port_free(s, ip, port), 0);
	/* the same list again: the freed slot takes the missing one */
	assert_int_equal(lb_snat_sync(s, next, 3), 0);
	assert_int_equal(lb_snat_addr_state(s, addrs4[3]),
			 LB_SNAT_ADDR_ACTIVE);
	assert_int_equal(lb_snat_capacity(s), 12);
	/* nothing: every address drains, and none is in use */
	assert_int_equal(lb_snat_sync(s, NULL, 0), 0);
	assert_int_equal(lb_snat_capacity(s), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(lb_snat_addr_state(s, addrs4[i]),
				 LB_SNAT_ADDR_FREE);
	lb_snat_free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_config),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_slices_disjoint_and_covering),
		cmocka_unit_test(test_owner_of_every_port),
		cmocka_unit_test(test_alloc_rotates_addresses),
		cmocka_unit_test(test_start_offset),
		cmocka_unit_test(test_free_and_realloc_in_turn),
		cmocka_unit_test(test_bad_free),
		cmocka_unit_test(test_addr_index),
		cmocka_unit_test(test_layout_check),
		cmocka_unit_test(test_random_against_reference),
		cmocka_unit_test(test_ports_per_destination),
		cmocka_unit_test(test_drain_per_destination),
		cmocka_unit_test(test_addr_add),
		cmocka_unit_test(test_addr_drain),
		cmocka_unit_test(test_addr_readd_while_draining),
		cmocka_unit_test(test_sync),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
