/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "neigh.h"
#include "lb/rng.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define MS 1000000ull
#define S 1000000000ull

/* 10.0.0.host in network order. */
static uint32_t
host_ip(uint32_t host)
{
	uint8_t b[4] = {10, (uint8_t)(host >> 16), (uint8_t)(host >> 8),
			(uint8_t)host};
	uint32_t v;

	memcpy(&v, b, 4);
	return v;
}

static uint32_t
dotted(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	uint8_t x[4] = {a, b, c, d};
	uint32_t v;

	memcpy(&v, x, 4);
	return v;
}

static void
mac_of(uint8_t id, uint8_t mac[6])
{
	static const uint8_t base[6] = {0x02, 0, 0, 0, 0x01, 0};

	memcpy(mac, base, 6);
	mac[5] = id;
}

/* What the release callback saw. */
struct log {
	unsigned int released, dropped;
	uint32_t last_ip;
	uint64_t last_handle;
	uint8_t last_mac[6];
	uint64_t handles[128];
	unsigned int n;
	/* Re-entry attempt from the callback and its result. */
	struct lb_neigh *t;
	int reenter_rc;
};

static void
on_release(void *arg, uint32_t ip, uint64_t handle, const uint8_t *mac)
{
	struct log *l = arg;
	uint8_t m[6];

	if (mac != NULL) {
		l->released++;
		memcpy(l->last_mac, mac, 6);
	} else {
		l->dropped++;
	}
	l->last_ip = ip;
	l->last_handle = handle;
	if (l->n < NELEM(l->handles))
		l->handles[l->n++] = handle;
	if (l->t != NULL)
		l->reenter_rc = lb_neigh_lookup(l->t, ip, 0, m);
}

enum op { LOOKUP, LEARN, HOLD, POLL, STATIC, DELETE, FLUSH };

#define NO_ENTRY 255

struct step {
	uint32_t ms;
	enum op op;
	uint8_t host;
	uint8_t arg; /* MAC id (LEARN, STATIC), handle (HOLD), max (POLL) */
	int want;
	uint8_t state; /* after the step; 0 unchecked, NO_ENTRY */
	uint8_t rel;   /* handles released with a MAC during the step */
	uint8_t drop;  /* handles released with NULL during the step */
	uint8_t mac;   /* MAC id expected on a hit */
};

static void
run(const char *name, const struct lb_neigh_conf *base,
    const struct step *steps, size_t n, struct lb_neigh_stats *st_out)
{
	struct lb_neigh_conf conf = *base;
	struct log log = {0};
	struct lb_neigh *t;

	conf.release = on_release;
	conf.release_arg = &log;
	t = lb_neigh_create(&conf);
	assert_non_null(t);
	for (size_t i = 0; i < n; i++) {
		const struct step *s = &steps[i];
		uint64_t now = s->ms * MS;
		uint32_t ip = host_ip(s->host), ips[16];
		unsigned int rel0 = log.released, drop0 = log.dropped;
		uint8_t mac[6] = {0}, want_mac[6];
		int rc = 0;

		switch (s->op) {
		case LOOKUP:
			rc = lb_neigh_lookup(t, ip, now, mac);
			break;
		case LEARN:
			mac_of(s->arg, mac);
			rc = lb_neigh_learn(t, ip, mac, now);
			break;
		case HOLD:
			rc = lb_neigh_hold(t, ip, s->arg);
			break;
		case POLL:
			rc = lb_neigh_poll(t, now, ips, s->arg);
			break;
		case STATIC:
			mac_of(s->arg, mac);
			rc = lb_neigh_set_static(t, ip, mac);
			break;
		case DELETE:
			rc = lb_neigh_delete(t, ip);
			break;
		case FLUSH:
			rc = lb_neigh_flush(t);
			break;
		}
		if (rc != s->want)
			fail_msg("%s step %zu (t=%u ms): rc %d, want %d", name,
				 i, s->ms, rc, s->want);
		if (s->op == POLL && rc > 0 && ips[0] != ip)
			fail_msg("%s step %zu: poll returned another address",
				 name, i);
		if (s->mac != 0) {
			mac_of(s->mac, want_mac);
			if (memcmp(mac, want_mac, 6) != 0)
				fail_msg("%s step %zu: wrong MAC", name, i);
		}
		if (log.released - rel0 != s->rel ||
		    log.dropped - drop0 != s->drop)
			fail_msg("%s step %zu: released %u dropped %u, want "
				 "%u %u",
				 name, i, log.released - rel0,
				 log.dropped - drop0, s->rel, s->drop);
		if (s->rel > 0) {
			mac_of(s->arg, want_mac);
			if (s->op == LEARN || s->op == STATIC)
				assert_memory_equal(log.last_mac, want_mac, 6);
			assert_int_equal(log.last_ip, ip);
		}
		if (s->state != 0) {
			struct lb_neigh_info info;
			int g = lb_neigh_get(t, ip, now, &info);

			if (s->state == NO_ENTRY) {
				if (g != -ENOENT)
					fail_msg("%s step %zu: entry present",
						 name, i);
			} else if (g != 0 || info.state != s->state) {
				fail_msg("%s step %zu: state %d (rc %d), want "
					 "%d",
					 name, i, (int)info.state, g, s->state);
			}
		}
	}
	if (st_out != NULL)
		assert_int_equal(lb_neigh_stats(t, st_out), 0);
	lb_neigh_free(t);
}

static const struct lb_neigh_conf defaults; /* all zero: the defaults */

enum {
	INC = LB_NEIGH_INCOMPLETE,
	REA = LB_NEIGH_REACHABLE,
	STA = LB_NEIGH_STALE,
	FAI = LB_NEIGH_FAILED,
	STC = LB_NEIGH_STATIC,
	HIT = LB_NEIGH_HIT,
	PROBE = LB_NEIGH_HIT_PROBE,
	SEND = LB_NEIGH_MISS_SEND,
	PEND = LB_NEIGH_MISS_PENDING,
	FAILD = LB_NEIGH_MISS_FAILED,
};

/* Resolution, hold release on learn, reachable -> stale -> revalidated,
 * and a changed MAC, with the default times (30 s, 1 s, 3 probes). */
static void
test_resolve_and_age(void **state)
{
	static const struct step steps[] = {
		{0, LOOKUP, 1, 0, SEND, INC, 0, 0, 0},
		{0, HOLD, 1, 11, 0, INC, 0, 0, 0},
		{100, LOOKUP, 1, 0, PEND, INC, 0, 0, 0},
		{100, HOLD, 1, 12, 0, INC, 0, 0, 0},
		{999, LOOKUP, 1, 0, PEND, INC, 0, 0, 0},
		{1000, LOOKUP, 1, 0, SEND, INC, 0, 0, 0},
		{1200, LEARN, 1, 7, 0, REA, 2, 0, 0},
		{1300, LOOKUP, 1, 0, HIT, REA, 0, 0, 7},
		{1300, HOLD, 1, 13, -EEXIST, REA, 0, 0, 0},
		{31199, LOOKUP, 1, 0, HIT, REA, 0, 0, 7},
		/* 30 s after the learn: stale, used, revalidated. */
		{31200, LOOKUP, 1, 0, PROBE, STA, 0, 0, 7},
		{31700, LOOKUP, 1, 0, HIT, STA, 0, 0, 7},
		{32199, LOOKUP, 1, 0, HIT, STA, 0, 0, 7},
		{32200, LOOKUP, 1, 0, PROBE, STA, 0, 0, 7},
		{32300, LEARN, 1, 7, 0, REA, 0, 0, 0},
		{32400, LOOKUP, 1, 0, HIT, REA, 0, 0, 7},
		/* The neighbour moved to another MAC. */
		{33000, LEARN, 1, 9, 0, REA, 0, 0, 0},
		{33000, LOOKUP, 1, 0, HIT, REA, 0, 0, 9},
		/* Without lookups it still turns stale (checked by get). */
		{63000, POLL, 1, 4, 0, STA, 0, 0, 0},
	};
	struct lb_neigh_stats st;

	(void)state;
	run("resolve", &defaults, steps, NELEM(steps), &st);
	assert_int_equal(st.lookups, 12);
	assert_int_equal(st.hits, 8);
	assert_int_equal(st.misses, 4);
	assert_int_equal(st.requests, 4);
	assert_int_equal(st.learned, 3);
	assert_int_equal(st.resolved, 1);
	assert_int_equal(st.mac_changed, 1);
	assert_int_equal(st.held, 2);
	assert_int_equal(st.released, 2);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(st.entries, 1);
}

/* No answer: three requests one second apart (by poll or by lookup),
 * failure one retransmit interval after the last, held packets dropped,
 * 5 s hold-down, then a new round. */
static void
test_failure_and_holddown(void **state)
{
	static const struct step steps[] = {
		{0, LOOKUP, 2, 0, SEND, INC, 0, 0, 0},
		{0, HOLD, 2, 1, 0, 0, 0, 0, 0},
		{10, HOLD, 2, 2, 0, 0, 0, 0, 0},
		{20, HOLD, 2, 3, 0, 0, 0, 0, 0},
		{30, HOLD, 2, 4, 0, 0, 0, 0, 0},
		{40, HOLD, 2, 5, -ENOSPC, INC, 0, 0, 0},
		{999, POLL, 2, 4, 0, INC, 0, 0, 0},
		{1000, POLL, 2, 4, 1, INC, 0, 0, 0},
		{1500, LOOKUP, 2, 0, PEND, INC, 0, 0, 0},
		{2000, LOOKUP, 2, 0, SEND, INC, 0, 0, 0},
		{2500, POLL, 2, 4, 0, INC, 0, 0, 0},
		{2999, POLL, 2, 4, 0, INC, 0, 0, 0},
		{3000, POLL, 2, 4, 0, FAI, 0, 4, 0},
		{3100, LOOKUP, 2, 0, FAILD, FAI, 0, 0, 0},
		{3100, HOLD, 2, 6, -EHOSTUNREACH, FAI, 0, 0, 0},
		{7999, LOOKUP, 2, 0, FAILD, FAI, 0, 0, 0},
		{8000, LOOKUP, 2, 0, SEND, INC, 0, 0, 0},
		{8000, HOLD, 2, 7, 0, INC, 0, 0, 0},
		{8100, LEARN, 2, 3, 0, REA, 1, 0, 0},
		{8100, LOOKUP, 2, 0, HIT, REA, 0, 0, 3},
	};
	struct lb_neigh_stats st;

	(void)state;
	run("failure", &defaults, steps, NELEM(steps), &st);
	assert_int_equal(st.failed, 1);
	assert_int_equal(st.hold_overflow, 1);
	assert_int_equal(st.held, 5);
	assert_int_equal(st.dropped, 4);
	assert_int_equal(st.released, 1);
	assert_int_equal(st.requests, 4);
	assert_int_equal(st.resolved, 1);
}

/* The same failure found by a lookup, with no poll at all, and a
 * learn during the hold-down that ends it. */
static void
test_failure_by_lookup(void **state)
{
	static const struct step steps[] = {
		{0, LOOKUP, 3, 0, SEND, INC, 0, 0, 0},
		{0, HOLD, 3, 1, 0, 0, 0, 0, 0},
		{1000, LOOKUP, 3, 0, SEND, INC, 0, 0, 0},
		{2500, LOOKUP, 3, 0, SEND, INC, 0, 0, 0},
		{3499, LOOKUP, 3, 0, PEND, INC, 0, 0, 0},
		{3500, LOOKUP, 3, 0, FAILD, FAI, 0, 1, 0},
		{4000, LEARN, 3, 5, 0, REA, 0, 0, 0},
		{4000, LOOKUP, 3, 0, HIT, REA, 0, 0, 5},
	};

	(void)state;
	run("failure by lookup", &defaults, steps, NELEM(steps), NULL);
}

/* A stale neighbour that stops answering is used while it is probed,
 * then fails. */
static void
test_stale_probe_failure(void **state)
{
	static const struct step steps[] = {
		{0, LEARN, 4, 8, 0, REA, 0, 0, 0},
		{30000, LOOKUP, 4, 0, PROBE, STA, 0, 0, 8},
		{30999, LOOKUP, 4, 0, HIT, STA, 0, 0, 8},
		{31000, LOOKUP, 4, 0, PROBE, STA, 0, 0, 8},
		{32000, LOOKUP, 4, 0, PROBE, STA, 0, 0, 8},
		{32999, LOOKUP, 4, 0, HIT, STA, 0, 0, 8},
		{33000, LOOKUP, 4, 0, FAILD, FAI, 0, 0, 0},
		{38000, LOOKUP, 4, 0, SEND, INC, 0, 0, 0},
	};

	(void)state;
	run("stale probe failure", &defaults, steps, NELEM(steps), NULL);
}

/* Configured times: 10 s reachable, 200 ms retransmit, 2 probes, 1 s
 * hold-down, 2 handles. */
static void
test_configured_times(void **state)
{
	static const struct lb_neigh_conf conf = {
		.reachable_ns = 10 * S,
		.retrans_ns = 200 * MS,
		.max_probes = 2,
		.failed_ns = 1 * S,
		.hold_max = 2,
	};
	static const struct step steps[] = {
		{0, LOOKUP, 5, 0, SEND, INC, 0, 0, 0},
		{0, HOLD, 5, 1, 0, 0, 0, 0, 0},
		{0, HOLD, 5, 2, 0, 0, 0, 0, 0},
		{0, HOLD, 5, 3, -ENOSPC, 0, 0, 0, 0},
		{200, POLL, 5, 8, 1, INC, 0, 0, 0},
		{399, POLL, 5, 8, 0, INC, 0, 0, 0},
		{400, POLL, 5, 8, 0, FAI, 0, 2, 0},
		{1399, LOOKUP, 5, 0, FAILD, FAI, 0, 0, 0},
		{1400, LOOKUP, 5, 0, SEND, INC, 0, 0, 0},
		{1500, LEARN, 5, 1, 0, REA, 0, 0, 0},
		{11499, LOOKUP, 5, 0, HIT, REA, 0, 0, 1},
		{11500, LOOKUP, 5, 0, PROBE, STA, 0, 0, 1},
	};

	(void)state;
	run("configured", &conf, steps, NELEM(steps), NULL);
}

/* Static entries: never expire, never overwritten by learning, never
 * held on; replacing a resolving entry releases its handles. */
static void
test_static(void **state)
{
	static const struct step steps[] = {
		{0, STATIC, 6, 1, 0, STC, 0, 0, 0},
		{0, LOOKUP, 6, 0, HIT, STC, 0, 0, 1},
		{0, LEARN, 6, 2, -EPERM, STC, 0, 0, 0},
		{0, HOLD, 6, 1, -EEXIST, STC, 0, 0, 0},
		{4000000, LOOKUP, 6, 0, HIT, STC, 0, 0, 1}, /* 66 min */
		/* Configuration may change it. */
		{4000000, STATIC, 6, 3, 0, STC, 0, 0, 0},
		{4000000, LOOKUP, 6, 0, HIT, STC, 0, 0, 3},
		{4000000, DELETE, 6, 0, 0, NO_ENTRY, 0, 0, 0},
		{4000000, DELETE, 6, 0, -ENOENT, NO_ENTRY, 0, 0, 0},
		{4000000, LOOKUP, 6, 0, SEND, INC, 0, 0, 0},
		{4000000, HOLD, 6, 9, 0, INC, 0, 0, 0},
		{4000100, STATIC, 6, 4, 0, STC, 1, 0, 0},
		{4000100, LOOKUP, 6, 0, HIT, STC, 0, 0, 4},
		/* Flush keeps static entries. */
		{4000100, LOOKUP, 7, 0, SEND, INC, 0, 0, 0},
		{4000100, HOLD, 7, 1, 0, INC, 0, 0, 0},
		{4000100, FLUSH, 0, 0, 1, 0, 0, 1, 0},
		{4000100, LOOKUP, 6, 0, HIT, STC, 0, 0, 4},
		{4000100, LOOKUP, 7, 0, SEND, INC, 0, 0, 0},
	};
	struct lb_neigh_stats st;

	(void)state;
	run("static", &defaults, steps, NELEM(steps), &st);
	assert_int_equal(st.statics, 1);
	assert_int_equal(st.static_kept, 1);
	assert_int_equal(st.entries, 2);
}

/* At most one request per entry per retransmit interval, whether the
 * lookups or the poll ask, for a neighbour that never answers (32
 * probes so that it does not fail within the 10 s). */
static void
test_rate_limit(void **state)
{
	struct lb_neigh_conf conf = {.max_probes = 32};
	struct lb_neigh *t = lb_neigh_create(&conf);
	struct lb_neigh_stats st;
	unsigned int sends = 0, polled = 0;
	uint32_t ip = host_ip(9), ips[4];
	uint8_t mac[6];

	(void)state;
	assert_non_null(t);
	for (uint64_t now = 0; now < 10 * S; now += 10 * MS) {
		int rc = lb_neigh_lookup(t, ip, now, mac);

		assert_true(rc == SEND || rc == PEND);
		sends += rc == SEND;
		rc = lb_neigh_poll(t, now + 5 * MS, ips, 4);
		assert_true(rc >= 0);
		polled += (unsigned int)rc;
	}
	/* Due at 0, 1, ..., 9 s: ten requests in all, the lookups getting
	 * there first at each whole second. */
	assert_int_equal(sends + polled, 10);
	assert_int_equal(sends, 10);
	assert_int_equal(lb_neigh_stats(t, &st), 0);
	assert_int_equal(st.requests, 10);
	lb_neigh_free(t);

	/* Poll only: the timer alone keeps the same pace. */
	t = lb_neigh_create(&conf);
	assert_non_null(t);
	assert_int_equal(lb_neigh_lookup(t, ip, 0, mac), SEND);
	polled = 0;
	for (uint64_t now = 0; now < 10 * S; now += 7 * MS) {
		int rc = lb_neigh_poll(t, now, ips, 4);

		assert_true(rc >= 0);
		polled += (unsigned int)rc;
	}
	assert_int_equal(polled, 9);
	lb_neigh_free(t);
}

/* The poll hands back due entries oldest first and respects its budget. */
static void
test_poll_order(void **state)
{
	struct lb_neigh *t = lb_neigh_create(NULL);
	uint32_t ips[8];
	uint8_t mac[6];

	(void)state;
	assert_non_null(t);
	for (uint32_t k = 0; k < 5; k++)
		assert_int_equal(
			lb_neigh_lookup(t, host_ip(20 + k), k * MS, mac), SEND);
	assert_int_equal(lb_neigh_poll(t, 1003 * MS, ips, 8), 4);
	for (uint32_t k = 0; k < 4; k++)
		assert_int_equal(ips[k], host_ip(20 + k));
	assert_int_equal(lb_neigh_poll(t, 1004 * MS, ips, 0), 0);
	assert_int_equal(lb_neigh_poll(t, 1004 * MS, ips, 1), 1);
	assert_int_equal(ips[0], host_ip(24));
	assert_int_equal(lb_neigh_poll(t, 1004 * MS, ips, 8), 0);
	/* A learn takes an entry out of the middle of the order. */
	{
		uint8_t m[6];

		mac_of(1, m);
		assert_int_equal(lb_neigh_learn(t, host_ip(21), m, 1500 * MS),
				 0);
	}
	assert_int_equal(lb_neigh_poll(t, 2004 * MS, ips, 2), 2);
	assert_int_equal(ips[0], host_ip(20));
	assert_int_equal(ips[1], host_ip(22));
	assert_int_equal(lb_neigh_poll(t, 2004 * MS, ips, 8), 2);
	assert_int_equal(ips[0], host_ip(23));
	assert_int_equal(ips[1], host_ip(24));
	lb_neigh_free(t);
}

/* Full table: the least recently used non-static entry goes, its held
 * handles dropped; statics stay; unsolicited learns start cold. */
static void
test_lru_eviction(void **state)
{
	struct lb_neigh_conf conf = {.capacity = 4};
	struct log log = {0};
	struct lb_neigh *t;
	struct lb_neigh_stats st;
	struct lb_neigh_info info;
	uint8_t mac[6], m1[6];

	(void)state;
	mac_of(1, m1);
	conf.release = on_release;
	conf.release_arg = &log;
	t = lb_neigh_create(&conf);
	assert_non_null(t);
	for (uint32_t k = 1; k <= 4; k++)
		assert_int_equal(lb_neigh_lookup(t, host_ip(k), 0, mac), SEND);
	assert_int_equal(lb_neigh_hold(t, host_ip(2), 42), 0);
	/* Touch 1: now 2 is the least recently used. */
	assert_int_equal(lb_neigh_lookup(t, host_ip(1), 1, mac), PEND);
	assert_int_equal(lb_neigh_lookup(t, host_ip(5), 2, mac), SEND);
	assert_int_equal(lb_neigh_get(t, host_ip(2), 2, &info), -ENOENT);
	assert_int_equal(log.dropped, 1);
	assert_int_equal(log.last_handle, 42);
	assert_int_equal(log.last_ip, host_ip(2));
	/* Next victim: 3. */
	assert_int_equal(lb_neigh_learn(t, host_ip(6), m1, 3), 0);
	assert_int_equal(lb_neigh_get(t, host_ip(3), 3, &info), -ENOENT);
	/* 6 came unsolicited: it is the coldest and goes first. */
	assert_int_equal(lb_neigh_learn(t, host_ip(7), m1, 4), 0);
	assert_int_equal(lb_neigh_get(t, host_ip(6), 4, &info), -ENOENT);
	assert_int_equal(lb_neigh_get(t, host_ip(1), 4, &info), 0);
	assert_int_equal(lb_neigh_get(t, host_ip(4), 4, &info), 0);
	assert_int_equal(lb_neigh_get(t, host_ip(5), 4, &info), 0);
	/* Once used, a learned entry is as warm as any. */
	assert_int_equal(lb_neigh_lookup(t, host_ip(7), 5, mac), HIT);
	assert_int_equal(lb_neigh_lookup(t, host_ip(8), 6, mac), SEND);
	assert_int_equal(lb_neigh_get(t, host_ip(4), 6, &info), -ENOENT);
	assert_int_equal(lb_neigh_get(t, host_ip(7), 6, &info), 0);
	assert_int_equal(lb_neigh_stats(t, &st), 0);
	assert_int_equal(st.evicted, 4);
	assert_int_equal(st.entries, 4);

	/* Statics are never evicted; with only statics, no room. */
	for (uint32_t k = 1; k <= 3; k++)
		assert_int_equal(lb_neigh_set_static(t, host_ip(100 + k), m1),
				 0);
	assert_int_equal(lb_neigh_lookup(t, host_ip(9), 7, mac), SEND);
	assert_int_equal(lb_neigh_lookup(t, host_ip(10), 8, mac), SEND);
	assert_int_equal(lb_neigh_get(t, host_ip(9), 8, &info), -ENOENT);
	assert_int_equal(lb_neigh_set_static(t, host_ip(104), m1), 0);
	assert_int_equal(lb_neigh_lookup(t, host_ip(11), 9, mac), -ENOSPC);
	assert_int_equal(lb_neigh_learn(t, host_ip(11), m1, 9), -ENOSPC);
	assert_int_equal(lb_neigh_set_static(t, host_ip(105), m1), -ENOSPC);
	for (uint32_t k = 1; k <= 4; k++)
		assert_int_equal(lb_neigh_lookup(t, host_ip(100 + k), 10, mac),
				 HIT);
	assert_int_equal(lb_neigh_stats(t, &st), 0);
	assert_int_equal(st.full, 3);
	assert_int_equal(st.statics, 4);
	assert_int_equal(st.entries, 4);
	lb_neigh_free(t);
}

/* Time never runs backwards: an older now_ns is the newest seen. */
static void
test_time_backwards(void **state)
{
	struct lb_neigh *t = lb_neigh_create(NULL);
	uint8_t mac[6], m[6];

	(void)state;
	assert_non_null(t);
	mac_of(1, m);
	assert_int_equal(lb_neigh_learn(t, host_ip(1), m, 40 * S), 0);
	assert_int_equal(lb_neigh_lookup(t, host_ip(2), 40 * S, mac), SEND);
	/* 5 s is read as 40 s: still fresh, and no early retry. */
	assert_int_equal(lb_neigh_lookup(t, host_ip(1), 5 * S, mac), HIT);
	assert_int_equal(lb_neigh_lookup(t, host_ip(2), 5 * S, mac), PEND);
	assert_int_equal(lb_neigh_lookup(t, host_ip(1), 70 * S, mac), PROBE);
	lb_neigh_free(t);
}

static void
test_bad_input(void **state)
{
	struct lb_neigh_conf conf = {0};
	struct log log = {0};
	struct lb_neigh *t;
	uint8_t mac[6], m[6];
	static const uint8_t mcast[6] = {0x01, 0, 0x5e, 0, 0, 1};
	static const uint8_t zero[6];
	const uint32_t bad_ips[] = {
		0,
		dotted(0, 1, 2, 3),
		dotted(224, 0, 0, 1),
		dotted(240, 0, 0, 1),
		dotted(255, 255, 255, 255),
	};
	struct lb_neigh_stats st;
	struct lb_neigh_info info;

	(void)state;
	mac_of(1, m);
	assert_int_equal(lb_neigh_conf_check(NULL), -EINVAL);
	conf.capacity = LB_NEIGH_CAPACITY_MAX + 1;
	assert_int_equal(lb_neigh_conf_check(&conf), -ERANGE);
	errno = 0;
	assert_null(lb_neigh_create(&conf));
	assert_int_equal(errno, ERANGE);
	conf.capacity = 0;
	conf.max_probes = LB_NEIGH_PROBES_MAX + 1;
	assert_int_equal(lb_neigh_conf_check(&conf), -ERANGE);
	conf.max_probes = 0;
	conf.hold_max = LB_NEIGH_HOLD_MAX + 1;
	assert_int_equal(lb_neigh_conf_check(&conf), -ERANGE);
	conf.hold_max = 0;
	conf.reachable_ns = LB_NEIGH_TIME_MAX_NS + 1;
	assert_int_equal(lb_neigh_conf_check(&conf), -ERANGE);
	conf.reachable_ns = 0;
	conf.retrans_ns = UINT64_MAX;
	assert_int_equal(lb_neigh_conf_check(&conf), -ERANGE);
	conf.retrans_ns = 0;
	conf.failed_ns = LB_NEIGH_TIME_MAX_NS + 1;
	assert_int_equal(lb_neigh_conf_check(&conf), -ERANGE);
	conf.failed_ns = 0;
	assert_int_equal(lb_neigh_conf_check(&conf), 0);

	/* No release callback: nothing can be held. */
	t = lb_neigh_create(&conf);
	assert_non_null(t);
	assert_int_equal(lb_neigh_lookup(t, host_ip(1), 0, mac), SEND);
	assert_int_equal(lb_neigh_hold(t, host_ip(1), 1), -EINVAL);
	lb_neigh_free(t);

	conf.release = on_release;
	conf.release_arg = &log;
	t = lb_neigh_create(&conf);
	assert_non_null(t);
	for (size_t i = 0; i < NELEM(bad_ips); i++) {
		assert_int_equal(lb_neigh_lookup(t, bad_ips[i], 0, mac),
				 -EINVAL);
		assert_int_equal(lb_neigh_learn(t, bad_ips[i], m, 0), -EINVAL);
		assert_int_equal(lb_neigh_set_static(t, bad_ips[i], m),
				 -EINVAL);
	}
	assert_int_equal(lb_neigh_learn(t, host_ip(1), mcast, 0), -EINVAL);
	assert_int_equal(lb_neigh_learn(t, host_ip(1), zero, 0), -EINVAL);
	assert_int_equal(lb_neigh_set_static(t, host_ip(1), mcast), -EINVAL);
	assert_int_equal(lb_neigh_learn(t, host_ip(1), NULL, 0), -EINVAL);
	assert_int_equal(lb_neigh_lookup(t, host_ip(1), 0, NULL), -EINVAL);
	assert_int_equal(lb_neigh_lookup(NULL, host_ip(1), 0, mac), -EINVAL);
	assert_int_equal(lb_neigh_learn(NULL, host_ip(1), m, 0), -EINVAL);
	assert_int_equal(lb_neigh_set_static(NULL, host_ip(1), m), -EINVAL);
	assert_int_equal(lb_neigh_hold(NULL, host_ip(1), 1), -EINVAL);
	assert_int_equal(lb_neigh_hold(t, host_ip(1), 1), -ENOENT);
	assert_int_equal(lb_neigh_delete(NULL, host_ip(1)), -EINVAL);
	assert_int_equal(lb_neigh_flush(NULL), -EINVAL);
	assert_int_equal(lb_neigh_poll(NULL, 0, NULL, 0), -EINVAL);
	assert_int_equal(lb_neigh_poll(t, 0, NULL, 1), -EINVAL);
	assert_int_equal(lb_neigh_poll(t, 0, NULL, 0), 0);
	assert_int_equal(lb_neigh_get(t, host_ip(1), 0, NULL), -EINVAL);
	assert_int_equal(lb_neigh_get(NULL, host_ip(1), 0, &info), -EINVAL);
	assert_int_equal(lb_neigh_stats(t, NULL), -EINVAL);
	assert_int_equal(lb_neigh_stats(NULL, &st), -EINVAL);
	lb_neigh_free(NULL);
	/* Nothing was stored by all of that. */
	assert_int_equal(lb_neigh_stats(t, &st), 0);
	assert_int_equal(st.entries, 0);

	/* The callback cannot change the table. */
	log.t = t;
	log.reenter_rc = 0;
	assert_int_equal(lb_neigh_lookup(t, host_ip(1), 0, mac), SEND);
	assert_int_equal(lb_neigh_hold(t, host_ip(1), 77), 0);
	assert_int_equal(lb_neigh_learn(t, host_ip(1), m, 0), 0);
	assert_int_equal(log.released, 1);
	assert_int_equal(log.reenter_rc, -EBUSY);
	lb_neigh_free(t);
}

/*
 * Random operations on a small table: the counters stay consistent and
 * every handle the table accepted comes back exactly once.
 */
static void
test_random_ops(void **state)
{
	struct lb_neigh_conf conf = {.capacity = 16, .hash_seed = 5};
	static uint8_t seen[200000];
	struct log log = {0};
	struct lb_xoshiro x;
	struct lb_rng r;
	struct lb_neigh *t;
	struct lb_neigh_stats st;
	uint64_t now = 0, next_handle = 1;
	unsigned int accepted = 0;

	(void)state;
	memset(seen, 0, sizeof(seen));
	lb_xoshiro_seed(&x, 31);
	r = lb_rng_xoshiro(&x);
	conf.release = on_release;
	conf.release_arg = &log;
	t = lb_neigh_create(&conf);
	assert_non_null(t);
	for (int i = 0; i < 100000; i++) {
		uint32_t ip = host_ip(1 + (uint32_t)lb_rng_below(&r, 40));
		uint8_t mac[6], m[6];
		uint32_t ips[4];
		int rc;

		now += lb_rng_below(&r, 50 * MS);
		mac_of((uint8_t)(1 + lb_rng_below(&r, 3)), m);
		log.n = 0;
		switch (lb_rng_below(&r, 10)) {
		case 0:
		case 1:
		case 2:
			rc = lb_neigh_lookup(t, ip, now, mac);
			/* -ENOSPC: every entry happens to be static. */
			assert_true((rc >= HIT && rc <= FAILD) ||
				    rc == -ENOSPC);
			break;
		case 3:
		case 4:
			rc = lb_neigh_hold(t, ip, next_handle);
			if (rc == 0) {
				accepted++;
				assert_true(next_handle < sizeof(seen));
			}
			next_handle++;
			break;
		case 5:
			rc = lb_neigh_learn(t, ip, m, now);
			assert_true(rc == 0 || rc == -EPERM || rc == -ENOSPC);
			break;
		case 6:
			rc = lb_neigh_poll(t, now, ips, 4);
			assert_true(rc >= 0 && rc <= 4);
			break;
		case 7:
			if (lb_rng_below(&r, 20) == 0)
				lb_neigh_set_static(t, ip, m);
			else
				lb_neigh_delete(t, ip);
			break;
		case 8:
			if (lb_rng_below(&r, 100) == 0)
				lb_neigh_flush(t);
			break;
		default:
			now += lb_rng_below(&r, 10 * S);
			break;
		}
		for (unsigned int k = 0; k < log.n; k++) {
			assert_int_equal(seen[log.handles[k]], 0);
			seen[log.handles[k]] = 1;
		}
		assert_int_equal(lb_neigh_stats(t, &st), 0);
		assert_true(st.entries <= 16);
		assert_true(st.statics <= st.entries);
		assert_int_equal(st.lookups, st.hits + st.misses);
	}
	/* Empty the table: every accepted handle is back. */
	log.n = 0;
	assert_true(lb_neigh_flush(t) >= 0);
	for (unsigned int k = 0; k < log.n; k++) {
		assert_int_equal(seen[log.handles[k]], 0);
		seen[log.handles[k]] = 1;
	}
	assert_int_equal(lb_neigh_stats(t, &st), 0);
	assert_int_equal(st.held, accepted);
	assert_int_equal(st.released + st.dropped, accepted);
	assert_int_equal(log.released + log.dropped, accepted);
	{
		unsigned int back = 0;

		for (size_t k = 0; k < sizeof(seen); k++)
			back += seen[k];
		assert_int_equal(back, accepted);
	}
	lb_neigh_free(t);
}

/* ---- IPv6 tables ---- */

/* 2001:db8::<n> */
static void
ip6_of(uint16_t n, uint8_t a[16])
{
	char txt[32];

	snprintf(txt, sizeof(txt), "2001:db8::%x", n);
	assert_int_equal(inet_pton(AF_INET6, txt, a), 1);
}

static struct lb_neigh *
table6(struct log *log, uint32_t capacity)
{
	struct lb_neigh_conf c = {
		.capacity = capacity,
		.release = on_release,
		.release_arg = log,
		.hash_seed = 99,
		.ipv6 = 1,
	};
	struct lb_neigh *t = lb_neigh_create(&c);

	assert_non_null(t);
	return t;
}

static void
test_ipv6_resolve(void **state)
{
	struct log log = {0};
	struct lb_neigh *t = table6(&log, 16);
	struct lb_neigh_info info;
	uint8_t a[16], b[16], mac[6], m1[6], m2[6];

	(void)state;
	ip6_of(1, a);
	ip6_of(2, b);
	mac_of(1, m1);
	mac_of(2, m2);
	assert_int_equal(lb_neigh6_lookup(t, a, (0) * MS, mac), LB_NEIGH_MISS_SEND);
	assert_int_equal(lb_neigh6_hold(t, a, 11), 0);
	assert_int_equal(lb_neigh6_hold(t, b, 12), -ENOENT);
	assert_int_equal(lb_neigh6_lookup(t, a, (10) * MS, mac),
			 LB_NEIGH_MISS_PENDING);
	assert_int_equal(lb_neigh6_hold(t, a, 13), 0);
	/* The advertisement releases both with its MAC. */
	assert_int_equal(lb_neigh6_learn(t, a, m1, (20) * MS), 0);
	assert_int_equal(log.released, 2);
	assert_int_equal(log.handles[0], 11);
	assert_int_equal(log.handles[1], 13);
	assert_memory_equal(log.last_mac, m1, 6);
	assert_int_equal(lb_neigh6_lookup(t, a, (30) * MS, mac), LB_NEIGH_HIT);
	assert_memory_equal(mac, m1, 6);
	/* Another address is another entry. */
	assert_int_equal(lb_neigh6_learn(t, b, m2, (30) * MS), 0);
	assert_int_equal(lb_neigh6_lookup(t, b, (30) * MS, mac), LB_NEIGH_HIT);
	assert_memory_equal(mac, m2, 6);
	assert_int_equal(lb_neigh6_get(t, a, (30) * MS, &info), 0);
	assert_int_equal(info.state, LB_NEIGH_REACHABLE);
	assert_memory_equal(info.mac, m1, 6);
	/* Stale after the reachable time: hit, and a probe asked for. */
	assert_int_equal(lb_neigh6_lookup(t, a, (30) * MS + (31) * S, mac),
			 LB_NEIGH_HIT_PROBE);
	assert_int_equal(lb_neigh6_delete(t, a), 0);
	assert_int_equal(lb_neigh6_get(t, a, (40) * MS, &info), -ENOENT);
	assert_int_equal(lb_neigh6_get(t, b, (40) * MS, &info), 0);
	lb_neigh_free(t);
}

static void
test_ipv6_poll_and_failure(void **state)
{
	struct log log = {0};
	struct lb_neigh *t = table6(&log, 16);
	uint8_t a[16], due[4][16], mac[6];

	(void)state;
	ip6_of(7, a);
	assert_int_equal(lb_neigh6_lookup(t, a, 0, mac), LB_NEIGH_MISS_SEND);
	assert_int_equal(lb_neigh6_hold(t, a, 5), 0);
	assert_int_equal(lb_neigh6_poll(t, (500) * MS, due, 4), 0);
	assert_int_equal(lb_neigh6_poll(t, (1) * S, due, 4), 1);
	assert_memory_equal(due[0], a, 16);
	assert_int_equal(lb_neigh6_poll(t, (2) * S, due, 4), 1);
	assert_memory_equal(due[0], a, 16);
	/* Three solicitations unanswered and one more wait: failed, the
	 * packet dropped. */
	assert_int_equal(lb_neigh6_poll(t, (3) * S, due, 4), 0);
	assert_int_equal(log.dropped, 1);
	assert_int_equal(log.last_handle, 5);
	assert_int_equal(lb_neigh6_lookup(t, a, (4) * S, mac),
			 LB_NEIGH_MISS_FAILED);
	lb_neigh_free(t);
}

static void
test_ipv6_family_and_bad(void **state)
{
	struct log log = {0};
	struct lb_neigh *t6 = table6(&log, 4);
	struct lb_neigh *t4 = lb_neigh_create(NULL);
	struct lb_neigh_info info;
	uint8_t a[16], mac[6], m1[6], due[1][16];
	uint32_t ips[1];
	static const char *const bad[] = {"::", "::1", "ff02::1",
					  "::ffff:192.0.2.1"};

	(void)state;
	assert_non_null(t4);
	ip6_of(1, a);
	mac_of(1, m1);
	/* Each table speaks its own family only. */
	assert_int_equal(lb_neigh_lookup(t6, dotted(10, 0, 0, 1), 0, mac),
			 -EINVAL);
	assert_int_equal(lb_neigh_learn(t6, dotted(10, 0, 0, 1), m1, 0),
			 -EINVAL);
	assert_int_equal(lb_neigh_set_static(t6, dotted(10, 0, 0, 1), m1),
			 -EINVAL);
	assert_int_equal(lb_neigh_poll(t6, 0, ips, 1), -EINVAL);
	assert_int_equal(lb_neigh_get(t6, dotted(10, 0, 0, 1), 0, &info),
			 -EINVAL);
	assert_int_equal(lb_neigh6_lookup(t4, a, 0, mac), -EINVAL);
	assert_int_equal(lb_neigh6_learn(t4, a, m1, 0), -EINVAL);
	assert_int_equal(lb_neigh6_hold(t4, a, 1), -EINVAL);
	assert_int_equal(lb_neigh6_poll(t4, 0, due, 1), -EINVAL);
	assert_int_equal(lb_neigh6_delete(t4, a), -EINVAL);
	/* Addresses that are never a neighbour's, a MAC that is not one. */
	for (size_t i = 0; i < NELEM(bad); i++) {
		uint8_t b[16];

		assert_int_equal(inet_pton(AF_INET6, bad[i], b), 1);
		assert_int_equal(lb_neigh6_lookup(t6, b, 0, mac), -EINVAL);
		assert_int_equal(lb_neigh6_learn(t6, b, m1, 0), -EINVAL);
	}
	memset(m1, 0xff, 6);
	assert_int_equal(lb_neigh6_learn(t6, a, m1, 0), -EINVAL);
	assert_int_equal(lb_neigh6_lookup(t6, NULL, 0, mac), -EINVAL);
	assert_int_equal(lb_neigh6_lookup(NULL, a, 0, mac), -EINVAL);
	{
		struct lb_neigh_stats st;

		assert_int_equal(lb_neigh_stats(t6, &st), 0);
		assert_int_equal(st.entries, 0);
	}
	lb_neigh_free(t6);
	lb_neigh_free(t4);
}

/* More addresses than entries: the least recently used goes, and every
 * address kept still answers with its own MAC. */
static void
test_ipv6_eviction(void **state)
{
	struct log log = {0};
	struct lb_neigh *t = table6(&log, 8);
	uint8_t a[16], mac[6], m[6];

	(void)state;
	for (uint16_t i = 1; i <= 20; i++) {
		ip6_of(i, a);
		mac_of((uint8_t)i, m);
		assert_int_equal(lb_neigh6_lookup(t, a, (i) * MS, mac),
				 LB_NEIGH_MISS_SEND);
		assert_int_equal(lb_neigh6_learn(t, a, m, (i) * MS), 0);
	}
	for (uint16_t i = 1; i <= 20; i++) {
		struct lb_neigh_info info;

		ip6_of(i, a);
		mac_of((uint8_t)i, m);
		if (i <= 12) {
			assert_int_equal(lb_neigh6_get(t, a, (30) * MS, &info),
					 -ENOENT);
			continue;
		}
		assert_int_equal(lb_neigh6_lookup(t, a, (30) * MS, mac),
				 LB_NEIGH_HIT);
		assert_memory_equal(mac, m, 6);
	}
	lb_neigh_free(t);
}

/* What lb_neigh_walk() handed over. */
struct walked {
	unsigned int n;
	uint8_t addr[8][16];
	struct lb_neigh_info info[8];
};

static void
on_walk4(void *arg, const uint8_t *addr, const struct lb_neigh_info *info)
{
	struct walked *w = arg;

	assert_true(w->n < NELEM(w->addr));
	memset(w->addr[w->n], 0, 16);
	memcpy(w->addr[w->n], addr, 4);
	w->info[w->n++] = *info;
}

static void
on_walk6(void *arg, const uint8_t *addr, const struct lb_neigh_info *info)
{
	struct walked *w = arg;

	assert_true(w->n < NELEM(w->addr));
	memcpy(w->addr[w->n], addr, 16);
	w->info[w->n++] = *info;
}

/* The walked entry of address @p a (4 or 16 bytes), or NULL. */
static const struct lb_neigh_info *
walked_find(const struct walked *w, const void *a, size_t len)
{
	for (unsigned int i = 0; i < w->n; i++)
		if (memcmp(w->addr[i], a, len) == 0)
			return &w->info[i];
	return NULL;
}

static void
test_walk(void **state)
{
	struct log log = {0};
	struct lb_neigh_conf c = {
		.capacity = 4, .release = on_release, .release_arg = &log,
	};
	struct lb_neigh *t = lb_neigh_create(&c), *t6 = table6(&log, 4);
	struct walked w = {0};
	const struct lb_neigh_info *i;
	uint32_t a = host_ip(1), b = host_ip(2), d = host_ip(3);
	uint8_t m1[6], m2[6], mac[6], x[16], y[16];

	(void)state;
	assert_non_null(t);
	mac_of(1, m1);
	mac_of(2, m2);
	assert_int_equal(lb_neigh_walk(t, 0, on_walk4, &w), 0);
	assert_int_equal(w.n, 0);
	/* One learnt, one resolving, one static, one learnt and deleted. */
	assert_int_equal(lb_neigh_learn(t, a, m1, 1 * S), 0);
	assert_int_equal(lb_neigh_lookup(t, b, 2 * S, mac), LB_NEIGH_MISS_SEND);
	assert_int_equal(lb_neigh_set_static(t, d, m2), 0);
	assert_int_equal(lb_neigh_learn(t, host_ip(4), m2, 2 * S), 0);
	assert_int_equal(lb_neigh_delete(t, host_ip(4)), 0);
	assert_int_equal(lb_neigh_walk(t, 40 * S, on_walk4, &w), 3);
	assert_int_equal(w.n, 3);
	i = walked_find(&w, &a, 4);
	assert_non_null(i);
	/* Learnt at 1 s, seen at 40 s: past the reachable time. */
	assert_int_equal(i->state, LB_NEIGH_STALE);
	assert_int_equal(i->confirmed_ns, 1 * S);
	assert_memory_equal(i->mac, m1, 6);
	i = walked_find(&w, &b, 4);
	assert_non_null(i);
	assert_true(i->state == LB_NEIGH_INCOMPLETE ||
		    i->state == LB_NEIGH_FAILED);
	i = walked_find(&w, &d, 4);
	assert_non_null(i);
	assert_int_equal(i->state, LB_NEIGH_STATIC);
	assert_null(walked_find(&w, &(uint32_t){host_ip(4)}, 4));
	/* An IPv6 table hands whole addresses. */
	ip6_of(7, x);
	ip6_of(8, y);
	assert_int_equal(lb_neigh6_learn(t6, x, m1, 1 * S), 0);
	assert_int_equal(lb_neigh6_learn(t6, y, m2, 2 * S), 0);
	memset(&w, 0, sizeof(w));
	assert_int_equal(lb_neigh_walk(t6, 3 * S, on_walk6, &w), 2);
	i = walked_find(&w, x, 16);
	assert_non_null(i);
	assert_int_equal(i->state, LB_NEIGH_REACHABLE);
	assert_memory_equal(i->mac, m1, 6);
	i = walked_find(&w, y, 16);
	assert_non_null(i);
	assert_memory_equal(i->mac, m2, 6);
	/* A static IPv6 neighbour: a hit for ever, not relearnt. */
	assert_int_equal(lb_neigh6_set_static(t6, x, m2), 0);
	assert_int_equal(lb_neigh6_lookup(t6, x, 100 * S, mac), LB_NEIGH_HIT);
	assert_memory_equal(mac, m2, 6);
	assert_int_equal(lb_neigh6_learn(t6, x, m1, 100 * S), -EPERM);
	assert_int_equal(lb_neigh6_set_static(t, x, m2), -EINVAL);
	assert_int_equal(lb_neigh_set_static(t6, a, m2), -EINVAL);
	memset(&w, 0, sizeof(w));
	assert_int_equal(lb_neigh_walk(t6, 100 * S, on_walk6, &w), 2);
	i = walked_find(&w, x, 16);
	assert_non_null(i);
	assert_int_equal(i->state, LB_NEIGH_STATIC);
	assert_int_equal(lb_neigh_walk(NULL, 0, on_walk6, &w), -EINVAL);
	assert_int_equal(lb_neigh_walk(t6, 0, NULL, &w), -EINVAL);
	lb_neigh_free(t);
	lb_neigh_free(t6);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolve_and_age),
		cmocka_unit_test(test_failure_and_holddown),
		cmocka_unit_test(test_failure_by_lookup),
		cmocka_unit_test(test_stale_probe_failure),
		cmocka_unit_test(test_configured_times),
		cmocka_unit_test(test_static),
		cmocka_unit_test(test_rate_limit),
		cmocka_unit_test(test_poll_order),
		cmocka_unit_test(test_lru_eviction),
		cmocka_unit_test(test_time_backwards),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_random_ops),
		cmocka_unit_test(test_ipv6_resolve),
		cmocka_unit_test(test_ipv6_poll_and_failure),
		cmocka_unit_test(test_ipv6_family_and_bad),
		cmocka_unit_test(test_ipv6_eviction),
		cmocka_unit_test(test_walk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
