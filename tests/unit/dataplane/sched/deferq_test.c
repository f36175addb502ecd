/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the deferred queue (adaptive-request-dispatch-paper,
 * section 4.2, Algorithm 3). Behaviour is written as scripts of pushes,
 * polls and removals with the exact trace each poll must produce; the
 * data structure is then checked against a plain array model over many
 * thousands of random operations.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "deferq.h"
#include "lb/rng.h"

#define NS 1ull
#define SEC (1000000000ull * NS)
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---- trace recorder used as the poll callback ---- */

struct rec {
	char buf[512];
	size_t len;
	uint64_t done_mask; /* keys (< 64) answered LB_DEFERQ_DONE */
};

static void
rec_add(struct rec *r, char c, uint64_t key)
{
	int w = snprintf(r->buf + r->len, sizeof(r->buf) - r->len,
			 "%s%c%" PRIu64, r->len ? " " : "", c, key);

	assert_true(w > 0 && (size_t)w < sizeof(r->buf) - r->len);
	r->len += (size_t)w;
}

static void
rec_reset(struct rec *r, uint64_t done_mask)
{
	r->len = 0;
	r->buf[0] = '\0';
	r->done_mask = done_mask;
}

static enum lb_deferq_verdict
rec_cb(enum lb_deferq_event ev, const struct lb_deferq_entry *e, void *arg)
{
	static const char letter[] = { 'D', 'E', 'X', 'F' };
	struct rec *r = arg;

	rec_add(r, letter[ev], e->key);
	if (ev == LB_DEFERQ_DUE && e->key < 64 &&
	    (r->done_mask >> e->key & 1))
		return LB_DEFERQ_DONE;
	return LB_DEFERQ_KEEP;
}

/* ---- construction and configuration ---- */

static const struct {
	const char *desc;
	uint32_t capacity;
	struct lb_deferq_conf conf;
	int err; /* errno of lb_deferq_create, 0 for success */
} create_cases[] = {
	{ "defaults", LB_DEFERQ_CAPACITY_DEFAULT, { 0 }, 0 },
	{ "capacity 1", 1, { 0 }, 0 },
	{ "capacity 0", 0, { 0 }, EINVAL },
	{ "capacity above max", LB_DEFERQ_CAPACITY_MAX + 1, { 0 }, ERANGE },
	{ "capacity UINT32_MAX", UINT32_MAX, { 0 }, ERANGE },
	{ "gap at its max", 8,
	  { .retry_gap_ns = LB_DEFERQ_GAP_MAX_NS,
	    .max_wait_ns = LB_DEFERQ_WAIT_FOREVER }, 0 },
	{ "gap above its max", 8,
	  { .retry_gap_ns = LB_DEFERQ_GAP_MAX_NS + 1,
	    .max_wait_ns = LB_DEFERQ_WAIT_FOREVER }, ERANGE },
	{ "gap UINT64_MAX", 8, { .retry_gap_ns = UINT64_MAX }, ERANGE },
	{ "gap equal to the wait", 8,
	  { .retry_gap_ns = 5 * SEC, .max_wait_ns = 5 * SEC }, EINVAL },
	{ "gap above the wait", 8,
	  { .retry_gap_ns = 6 * SEC, .max_wait_ns = 5 * SEC }, EINVAL },
	{ "gap equal to the default wait", 8,
	  { .retry_gap_ns = LB_DEFERQ_WAIT_DEFAULT_NS }, EINVAL },
	{ "wait at its max", 8, { .max_wait_ns = LB_DEFERQ_WAIT_MAX_NS }, 0 },
	{ "wait above its max", 8,
	  { .max_wait_ns = LB_DEFERQ_WAIT_MAX_NS + 1 }, ERANGE },
	{ "wait forever", 8, { .max_wait_ns = LB_DEFERQ_WAIT_FOREVER }, 0 },
	{ "max attempts", 8, { .max_attempts = UINT32_MAX }, 0 },
};

static void
test_create(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(create_cases); i++) {
		const struct lb_deferq_conf *conf = &create_cases[i].conf;
		uint32_t cap = create_cases[i].capacity;
		int err = create_cases[i].err;
		struct lb_deferq_stats st;
		struct lb_deferq *q;
		bool bad_cap = cap == 0 || cap > LB_DEFERQ_CAPACITY_MAX;

		errno = 0;
		q = lb_deferq_create(cap, conf);
		if (err != 0) {
			if (q != NULL || errno != err)
				fail_msg("%s: q=%p errno=%d",
					 create_cases[i].desc, (void *)q,
					 errno);
			/* The same verdict without creating anything. */
			assert_int_equal(lb_deferq_conf_check(conf),
					 bad_cap ? 0 : -err);
			continue;
		}
		if (q == NULL)
			fail_msg("%s: errno=%d", create_cases[i].desc, errno);
		assert_int_equal(lb_deferq_conf_check(conf), 0);
		assert_int_equal(lb_deferq_stats(q, &st), 0);
		assert_int_equal(st.capacity, cap);
		assert_int_equal(st.depth, 0);
		assert_int_equal(lb_deferq_next_deadline(q), UINT64_MAX);
		lb_deferq_free(q);
	}
	assert_int_equal(lb_deferq_conf_check(NULL), -EINVAL);
}

/* NULL conf means the defaults: zero gap, 30 s wait, unlimited attempts. */
static void
test_defaults(void **state)
{
	struct lb_deferq *q = lb_deferq_create(4, NULL);
	struct rec r = { .len = 0 };

	(void)state;
	assert_non_null(q);
	assert_int_equal(lb_deferq_push(q, 7, 70, 1 * SEC, NULL), 0);
	assert_int_equal(lb_deferq_next_deadline(q), 1 * SEC);
	for (int i = 0; i < 50; i++)
		assert_int_equal(lb_deferq_poll(q, 1 * SEC + (uint64_t)i, 8,
						rec_cb, &r),
				 1);
	rec_reset(&r, 0);
	assert_int_equal(lb_deferq_poll(q, 31 * SEC - 1, 8, rec_cb, &r), 1);
	assert_string_equal(r.buf, "D7");
	rec_reset(&r, 0);
	assert_int_equal(lb_deferq_poll(q, 31 * SEC, 8, rec_cb, &r), 1);
	assert_string_equal(r.buf, "E7");
	lb_deferq_free(q);
}

/* ---- NULL and other bad arguments ---- */

static enum lb_deferq_verdict
nop_cb(enum lb_deferq_event ev, const struct lb_deferq_entry *e, void *arg)
{
	(void)ev;
	(void)e;
	(void)arg;
	return LB_DEFERQ_KEEP;
}

static struct lb_deferq *bad_q; /* a valid queue for the non-NULL cases */

static int
bad_push_null(void)
{
	return lb_deferq_push(NULL, 1, 1, 0, NULL);
}
static int
bad_poll_null_q(void)
{
	return lb_deferq_poll(NULL, 0, 8, nop_cb, NULL);
}
static int
bad_poll_null_cb(void)
{
	return lb_deferq_poll(bad_q, 0, 8, NULL, NULL);
}
static int
bad_poll_budget0(void)
{
	return lb_deferq_poll(bad_q, 0, 0, nop_cb, NULL);
}
static int
bad_remove_null(void)
{
	return lb_deferq_remove(NULL, 1, NULL);
}
static int
bad_remove_missing(void)
{
	return lb_deferq_remove(bad_q, 12345, NULL);
}
static int
bad_lookup_null_q(void)
{
	struct lb_deferq_entry e;

	return lb_deferq_lookup(NULL, 1, &e);
}
static int
bad_lookup_null_out(void)
{
	return lb_deferq_lookup(bad_q, 1, NULL);
}
static int
bad_lookup_missing(void)
{
	struct lb_deferq_entry e;

	return lb_deferq_lookup(bad_q, 12345, &e);
}
static int
bad_flush_null_q(void)
{
	return lb_deferq_flush(NULL, nop_cb, NULL);
}
static int
bad_flush_null_cb(void)
{
	return lb_deferq_flush(bad_q, NULL, NULL);
}
static int
bad_kick_null(void)
{
	return lb_deferq_kick(NULL);
}
static int
bad_stats_null_q(void)
{
	struct lb_deferq_stats st;

	return lb_deferq_stats(NULL, &st);
}
static int
bad_stats_null_out(void)
{
	return lb_deferq_stats(bad_q, NULL);
}

static const struct {
	const char *desc;
	int (*call)(void);
	int rc;
} bad_cases[] = {
	{ "push NULL queue", bad_push_null, -EINVAL },
	{ "poll NULL queue", bad_poll_null_q, -EINVAL },
	{ "poll NULL callback", bad_poll_null_cb, -EINVAL },
	{ "poll zero budget", bad_poll_budget0, -EINVAL },
	{ "remove NULL queue", bad_remove_null, -EINVAL },
	{ "remove missing key", bad_remove_missing, -ENOENT },
	{ "lookup NULL queue", bad_lookup_null_q, -EINVAL },
	{ "lookup NULL out", bad_lookup_null_out, -EINVAL },
	{ "lookup missing key", bad_lookup_missing, -ENOENT },
	{ "flush NULL queue", bad_flush_null_q, -EINVAL },
	{ "flush NULL callback", bad_flush_null_cb, -EINVAL },
	{ "kick NULL queue", bad_kick_null, -EINVAL },
	{ "stats NULL queue", bad_stats_null_q, -EINVAL },
	{ "stats NULL out", bad_stats_null_out, -EINVAL },
};

static void
test_bad_args(void **state)
{
	struct lb_deferq_stats st;

	(void)state;
	bad_q = lb_deferq_create(4, NULL);
	assert_non_null(bad_q);
	assert_int_equal(lb_deferq_push(bad_q, 1, 10, 0, NULL), 0);
	for (size_t i = 0; i < ARRAY_LEN(bad_cases); i++) {
		int rc = bad_cases[i].call();

		if (rc != bad_cases[i].rc)
			fail_msg("%s: rc=%d, want %d", bad_cases[i].desc, rc,
				 bad_cases[i].rc);
	}
	/* Rejected calls changed nothing. */
	assert_int_equal(lb_deferq_stats(bad_q, &st), 0);
	assert_int_equal(st.depth, 1);
	assert_int_equal(st.pushed, 1);
	assert_int_equal(st.retried + st.removed + st.expired, 0);
	assert_int_equal(lb_deferq_depth(NULL), 0);
	assert_int_equal(lb_deferq_next_deadline(NULL), UINT64_MAX);
	lb_deferq_free(bad_q);
	lb_deferq_free(NULL);
}

/* ---- behaviour scripts ---- */

enum op {
	PUSH,   /* push key at t (cookie = 100 + key); expect rc */
	POLL,   /* poll at t with budget (0 = unlimited), DONE for keys in
		 * mask; expect rc and trace */
	REMOVE, /* remove key; expect rc */
	DEPTH,  /* expect depth rc */
	NEXT,   /* expect next deadline t */
	KICK,   /* lb_deferq_kick; expect rc */
};

struct step {
	enum op op;
	uint64_t t;
	uint64_t key;
	uint32_t budget;
	uint64_t mask;
	int rc;
	const char *trace;
};

#define P(t_, k_, rc_) { .op = PUSH, .t = (t_), .key = (k_), .rc = (rc_) }
#define L(t_, b_, m_, rc_, tr_)                                              \
	{ .op = POLL, .t = (t_), .budget = (b_), .mask = (m_), .rc = (rc_),  \
	  .trace = (tr_) }
#define R(k_, rc_) { .op = REMOVE, .key = (k_), .rc = (rc_) }
#define DEPTH(n_) { .op = DEPTH, .rc = (n_) }
#define NEXT(t_) { .op = NEXT, .t = (t_) }
#define KICK() { .op = KICK }
#define STEPS(...)                                                           \
	.steps = (const struct step[]){ __VA_ARGS__ },                       \
	.n_steps = ARRAY_LEN(((const struct step[]){ __VA_ARGS__ }))
#define BIT(k) (1ull << (k))
#define ALL (~0ull)
#define J LB_DEFERQ_JOINED

struct script {
	const char *desc;
	uint32_t capacity;
	struct lb_deferq_conf conf;
	const struct step *steps;
	size_t n_steps;
};

/* Gap 10 and wait 100 (arbitrary ns) unless a case says otherwise. */
#define G10 { .retry_gap_ns = 10, .max_wait_ns = 100 }

static const struct script scripts[] = {
	{ "FCFS: due entries come back in arrival order, not key order", 8,
	  G10,
	  STEPS(P(0, 3, 0), P(0, 1, 0), P(0, 2, 0), L(10, 0, 0, 3, "D3 D1 D2"),
		L(20, 0, ALL, 3, "D3 D1 D2"), DEPTH(0)) },
	{ "retry gap: nothing due before it, due exactly at it", 8, G10,
	  STEPS(P(0, 1, 0), NEXT(10), L(9, 0, 0, 0, ""), L(10, 0, 0, 1, "D1"),
		NEXT(20), L(19, 0, 0, 0, ""), L(20, 0, 0, 1, "D1")) },
	{ "gap 0 (serviceq's default): each poll retries everyone once", 8,
	  { .retry_gap_ns = 0, .max_wait_ns = 100 },
	  STEPS(P(0, 1, 0), P(0, 2, 0), NEXT(0), L(0, 0, 0, 2, "D1 D2"),
		L(0, 0, 0, 2, "D1 D2"), L(5, 0, BIT(1), 2, "D1 D2"),
		L(5, 0, 0, 1, "D2")) },
	{ "expiry: at exactly max_wait, oldest first, before the due", 8,
	  { .retry_gap_ns = 50, .max_wait_ns = 100 },
	  STEPS(P(0, 1, 0), P(30, 2, 0), L(99, 0, 0, 2, "D1 D2"), NEXT(100),
		L(100, 0, 0, 1, "E1"), NEXT(130), L(129, 0, 0, 0, ""),
		L(130, 0, 0, 1, "E2"), DEPTH(0), NEXT(UINT64_MAX)) },
	{ "expired and due in one poll: expired first", 8, G10,
	  STEPS(P(0, 1, 0), P(50, 2, 0), L(100, 0, 0, 2, "E1 D2")) },
	{ "join: a duplicate key keeps one entry, its place and its timer", 8,
	  G10,
	  STEPS(P(0, 1, 0), P(0, 2, 0), P(5, 1, J), P(9, 1, J), DEPTH(2),
		L(10, 0, 0, 2, "D1 D2"), P(15, 2, J), L(20, 0, ALL, 2,
							 "D1 D2"),
		DEPTH(0)) },
	{ "head of line: a newer entry waits for an older one's gap", 8, G10,
	  STEPS(P(0, 1, 0), P(5, 2, 0), L(10, 0, 0, 1, "D1"),
		L(15, 0, 0, 0, ""), NEXT(20), L(20, 0, 0, 2, "D1 D2")) },
	{ "re-armed entries keep their place ahead of later arrivals", 8, G10,
	  STEPS(P(0, 1, 0), P(0, 2, 0), P(0, 3, 0), L(10, 0, 0, 3, "D1 D2 D3"),
		P(12, 4, 0), L(20, 0, BIT(2), 3, "D1 D2 D3"),
		L(22, 0, 0, 0, ""), L(30, 0, 0, 3, "D1 D3 D4")) },
	{ "remove from the middle: order still FCFS", 8, G10,
	  STEPS(P(0, 1, 0), P(0, 2, 0), P(0, 3, 0), P(0, 4, 0), P(0, 5, 0),
		R(3, 0), R(3, -ENOENT), DEPTH(4),
		L(10, 0, 0, 4, "D1 D2 D4 D5"), R(1, 0), R(5, 0),
		P(11, 3, 0), L(20, 0, 0, 2, "D2 D4"), L(21, 0, 0, 0, ""),
		L(30, 0, 0, 3, "D2 D4 D3")) },
	{ "overflow: -ENOSPC at capacity, nothing evicted, joins still ok", 2,
	  G10,
	  STEPS(P(0, 1, 0), P(0, 2, 0), P(1, 3, -ENOSPC), P(2, 1, J),
		DEPTH(2), L(10, 0, BIT(1), 2, "D1 D2"), P(11, 3, 0),
		P(12, 4, -ENOSPC), L(20, 0, 0, 1, "D2")) },
	{ "max_attempts 2: exhausted right after the last failed retry", 8,
	  { .retry_gap_ns = 10, .max_wait_ns = 100, .max_attempts = 2 },
	  STEPS(P(0, 1, 0), P(0, 2, 0), L(10, 0, 0, 2, "D1 D2"),
		L(20, 0, BIT(2), 2, "D1 X1 D2"), DEPTH(0)) },
	{ "budget splits a round and the next poll resumes it", 8, G10,
	  STEPS(P(0, 1, 0), P(0, 2, 0), P(0, 3, 0), P(0, 4, 0), P(0, 5, 0),
		L(10, 2, 0, 2, "D1 D2"), NEXT(10), L(10, 2, 0, 2, "D3 D4"),
		L(11, 2, 0, 1, "D5"), L(11, 0, 0, 0, ""), NEXT(20),
		L(20, 0, 0, 4, "D1 D2 D3 D4"), L(21, 0, 0, 0, ""),
		L(30, 0, 0, 5, "D1 D2 D3 D4 D5")) },
	{ "a due oldest entry preempts a round cut short by the budget", 8,
	  G10,
	  STEPS(P(0, 1, 0), P(0, 2, 0), P(0, 3, 0), P(0, 4, 0),
		L(10, 2, 0, 2, "D1 D2"), L(20, 2, 0, 2, "D1 D2"),
		L(20, 2, 0, 2, "D3 D4"), L(30, 3, 0, 3, "D1 D2 D3"),
		L(31, 3, 0, 1, "D4")) },
	{ "kick (a backend is up): all due at once, oldest first, once", 8,
	  G10,
	  STEPS(P(0, 1, 0), P(0, 2, 0), P(5, 3, 0), L(10, 0, 0, 2, "D1 D2"),
		KICK(), NEXT(0), L(12, 2, 0, 2, "D1 D2"), NEXT(0),
		L(12, 2, 0, 1, "D3"), NEXT(22), L(12, 0, 0, 0, ""),
		L(21, 0, 0, 0, ""), L(22, 0, 0, 3, "D1 D2 D3")) },
	{ "kick overrides a round in progress and survives a budget cut", 8,
	  G10,
	  STEPS(P(0, 1, 0), P(0, 2, 0), P(0, 3, 0), L(10, 1, 0, 1, "D1"),
		KICK(), L(11, 2, BIT(1), 2, "D1 D2"), P(11, 4, 0),
		L(11, 0, 0, 2, "D3 D4"), L(12, 0, 0, 0, ""), KICK(),
		R(2, 0), R(3, 0), R(4, 0), P(13, 5, 0), L(22, 0, 0, 0, ""),
		L(23, 0, 0, 1, "D5")) },
	{ "kick on an empty queue does nothing", 8, G10,
	  STEPS(KICK(), NEXT(UINT64_MAX), P(0, 1, 0), L(5, 0, 0, 0, ""),
		L(10, 0, 0, 1, "D1")) },
	{ "budget counts expired entries too", 8, G10,
	  STEPS(P(0, 1, 0), P(0, 2, 0), P(50, 3, 0), L(100, 1, 0, 1, "E1"),
		L(100, 1, 0, 1, "E2"), L(100, 1, 0, 1, "D3")) },
	{ "time never runs backwards", 8, G10,
	  STEPS(P(100, 1, 0), L(50, 0, 0, 0, ""), P(90, 2, 0), NEXT(110),
		L(109, 0, 0, 0, ""), L(110, 0, 0, 2, "D1 D2"),
		L(119, 0, 0, 0, ""), L(199, 0, 0, 2, "D1 D2"),
		L(200, 0, 0, 2, "E1 E2")) },
	{ "wait forever: never expires (serviceq's behaviour)", 8,
	  { .retry_gap_ns = 10, .max_wait_ns = LB_DEFERQ_WAIT_FOREVER },
	  STEPS(P(0, 1, 0), L(UINT64_MAX - 1, 0, 0, 1, "D1"),
		NEXT(UINT64_MAX), L(UINT64_MAX - 1, 0, 0, 0, ""), DEPTH(1)) },
};

static void
run_script(const struct script *s)
{
	struct lb_deferq *q = lb_deferq_create(s->capacity, &s->conf);

	if (q == NULL)
		fail_msg("%s: create errno=%d", s->desc, errno);
	for (size_t i = 0; i < s->n_steps; i++) {
		const struct step *st = &s->steps[i];
		struct rec r = { .len = 0 };
		int rc = 0;

		r.done_mask = st->mask;
		switch (st->op) {
		case PUSH:
			rc = lb_deferq_push(q, st->key, 100 + st->key, st->t,
					    NULL);
			break;
		case POLL:
			rc = lb_deferq_poll(q, st->t,
					    st->budget ? st->budget
						       : UINT32_MAX,
					    rec_cb, &r);
			if (strcmp(r.buf, st->trace) != 0)
				fail_msg("%s: step %zu: trace '%s', want '%s'",
					 s->desc, i, r.buf, st->trace);
			break;
		case REMOVE:
			rc = lb_deferq_remove(q, st->key, NULL);
			break;
		case DEPTH:
			rc = (int)lb_deferq_depth(q);
			break;
		case KICK:
			rc = lb_deferq_kick(q);
			break;
		case NEXT:
			if (lb_deferq_next_deadline(q) != st->t)
				fail_msg("%s: step %zu: deadline %" PRIu64
					 ", want %" PRIu64,
					 s->desc, i, lb_deferq_next_deadline(q),
					 st->t);
			break;
		}
		if (rc != st->rc)
			fail_msg("%s: step %zu: rc %d, want %d", s->desc, i, rc,
				 st->rc);
	}
	lb_deferq_free(q);
}

static void
test_scripts(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(scripts); i++)
		run_script(&scripts[i]);
}

/* ---- entries, joins and counters ---- */

static void
test_join_cookie(void **state)
{
	struct lb_deferq_conf c = { .retry_gap_ns = 10, .max_wait_ns = 100 };
	struct lb_deferq *q = lb_deferq_create(4, &c);
	struct lb_deferq_stats st;
	struct lb_deferq_entry e;
	uint64_t old = 0;

	(void)state;
	assert_int_equal(lb_deferq_push(q, 42, 1000, 5, &old), 0);
	assert_int_equal(old, 0); /* untouched on a new entry */
	assert_int_equal(lb_deferq_push(q, 42, 1001, 8, &old), J);
	assert_int_equal(old, 1000);
	assert_int_equal(lb_deferq_push(q, 42, 1002, 9, NULL), J);
	assert_int_equal(lb_deferq_lookup(q, 42, &e), 0);
	assert_int_equal(e.key, 42);
	assert_int_equal(e.cookie, 1002);
	assert_int_equal(e.enq_ns, 5);
	assert_int_equal(e.next_ns, 15);
	assert_int_equal(e.attempts, 0);
	assert_int_equal(e.joins, 2);
	assert_int_equal(lb_deferq_remove(q, 42, &old), 0);
	assert_int_equal(old, 1002);
	assert_int_equal(lb_deferq_lookup(q, 42, &e), -ENOENT);
	assert_int_equal(lb_deferq_stats(q, &st), 0);
	assert_int_equal(st.pushed, 1);
	assert_int_equal(st.joined, 2);
	assert_int_equal(st.removed, 1);
	assert_int_equal(st.depth, 0);
	lb_deferq_free(q);
}

/* The DUE callback sees the attempt number it is making. */
static enum lb_deferq_verdict
attempts_cb(enum lb_deferq_event ev, const struct lb_deferq_entry *e,
	    void *arg)
{
	uint32_t *seen = arg;

	assert_int_equal(ev, LB_DEFERQ_DUE);
	*seen = e->attempts;
	return LB_DEFERQ_KEEP;
}

static void
test_counters(void **state)
{
	struct lb_deferq_conf c = { .retry_gap_ns = 10, .max_wait_ns = 100,
				    .max_attempts = 3 };
	struct lb_deferq *q = lb_deferq_create(3, &c);
	struct lb_deferq_stats st;
	struct rec r = { .len = 0 };
	uint32_t seen = 0;

	(void)state;
	assert_int_equal(lb_deferq_push(q, 1, 0, 0, NULL), 0);
	for (uint32_t k = 1; k <= 2; k++) {
		assert_int_equal(lb_deferq_poll(q, 10 * k, 8, attempts_cb,
						&seen),
				 1);
		assert_int_equal(seen, k);
	}
	assert_int_equal(lb_deferq_push(q, 2, 0, 25, NULL), 0);
	assert_int_equal(lb_deferq_push(q, 3, 0, 25, NULL), 0);
	assert_int_equal(lb_deferq_push(q, 4, 0, 25, NULL), -ENOSPC);
	assert_int_equal(lb_deferq_push(q, 3, 0, 26, NULL), J);
	assert_int_equal(lb_deferq_remove(q, 2, NULL), 0);
	rec_reset(&r, BIT(3));
	/* 1 makes its 3rd and last attempt, 3 is dispatched. */
	assert_int_equal(lb_deferq_poll(q, 35, 8, rec_cb, &r), 2);
	assert_string_equal(r.buf, "D1 X1 D3");
	assert_int_equal(lb_deferq_stats(q, &st), 0);
	assert_int_equal(st.pushed, 3);
	assert_int_equal(st.joined, 1);
	assert_int_equal(st.overflowed, 1);
	assert_int_equal(st.retried, 4);
	assert_int_equal(st.dispatched, 1);
	assert_int_equal(st.exhausted, 1);
	assert_int_equal(st.expired, 0);
	assert_int_equal(st.removed, 1);
	assert_int_equal(st.depth, 0);
	lb_deferq_free(q);
}

/* ---- calls made from inside the callback ---- */

struct reentry {
	struct lb_deferq *q;
	int rc_remove, rc_poll, rc_flush, rc_kick, rc_push_new, rc_push_same;
	unsigned int calls;
};

static enum lb_deferq_verdict
reentry_cb(enum lb_deferq_event ev, const struct lb_deferq_entry *e,
	   void *arg)
{
	struct reentry *re = arg;

	(void)ev;
	re->calls++;
	if (e->key != 1)
		return LB_DEFERQ_KEEP;
	re->rc_remove = lb_deferq_remove(re->q, 2, NULL);
	re->rc_poll = lb_deferq_poll(re->q, 10, 8, nop_cb, NULL);
	re->rc_flush = lb_deferq_flush(re->q, nop_cb, NULL);
	re->rc_kick = lb_deferq_kick(re->q);
	/* Algorithm 2 pushes again on failure: a join, harmless here. */
	re->rc_push_same = lb_deferq_push(re->q, 1, 11, 10, NULL);
	re->rc_push_new = lb_deferq_push(re->q, 9, 19, 10, NULL);
	return LB_DEFERQ_KEEP;
}

static void
test_reentry(void **state)
{
	struct lb_deferq_conf c = { .retry_gap_ns = 0, .max_wait_ns = 100 };
	struct reentry re = { .calls = 0 };
	struct rec r = { .len = 0 };

	(void)state;
	re.q = lb_deferq_create(8, &c);
	assert_int_equal(lb_deferq_push(re.q, 1, 10, 0, NULL), 0);
	assert_int_equal(lb_deferq_push(re.q, 2, 20, 0, NULL), 0);
	/* Gap 0: key 9 is due at once, yet not handed back by this call. */
	assert_int_equal(lb_deferq_poll(re.q, 10, 8, reentry_cb, &re), 2);
	assert_int_equal(re.calls, 2);
	assert_int_equal(re.rc_remove, -EBUSY);
	assert_int_equal(re.rc_poll, -EBUSY);
	assert_int_equal(re.rc_flush, -EBUSY);
	assert_int_equal(re.rc_kick, -EBUSY);
	assert_int_equal(re.rc_push_same, J);
	assert_int_equal(re.rc_push_new, 0);
	assert_int_equal(lb_deferq_depth(re.q), 3);
	/* The busy flag was cleared: ordinary calls work again. */
	assert_int_equal(lb_deferq_poll(re.q, 10, 8, rec_cb, &r), 3);
	assert_string_equal(r.buf, "D1 D2 D9");
	assert_int_equal(lb_deferq_remove(re.q, 2, NULL), 0);
	lb_deferq_free(re.q);
}

static void
test_flush(void **state)
{
	struct lb_deferq_conf c = { .retry_gap_ns = 10, .max_wait_ns = 100 };
	struct lb_deferq *q = lb_deferq_create(8, &c);
	struct lb_deferq_stats st;
	struct rec r = { .len = 0 };

	(void)state;
	for (uint64_t k = 5; k >= 1; k--)
		assert_int_equal(lb_deferq_push(q, k, k, 0, NULL), 0);
	assert_int_equal(lb_deferq_remove(q, 3, NULL), 0);
	/* Leave a round in progress: the flush must clear it. */
	assert_int_equal(lb_deferq_poll(q, 10, 1, nop_cb, NULL), 1);
	assert_int_equal(lb_deferq_flush(q, rec_cb, &r), 4);
	assert_string_equal(r.buf, "F5 F4 F2 F1");
	assert_int_equal(lb_deferq_depth(q), 0);
	assert_int_equal(lb_deferq_next_deadline(q), UINT64_MAX);
	assert_int_equal(lb_deferq_stats(q, &st), 0);
	assert_int_equal(st.removed, 5);
	/* Usable again afterwards, from scratch. */
	rec_reset(&r, 0);
	assert_int_equal(lb_deferq_push(q, 7, 7, 20, NULL), 0);
	assert_int_equal(lb_deferq_poll(q, 30, 8, rec_cb, &r), 1);
	assert_string_equal(r.buf, "D7");
	lb_deferq_free(q);
}

/* ---- model check over many random operations ---- */

/*
 * The same semantics written the obvious way: an array in arrival order,
 * shifted on every removal, the round cursor kept as a push sequence
 * number. The queue under test must agree on every return value, every
 * event and every entry field, while its slots are reused (the free list
 * wraps around) thousands of times.
 */
struct m_ent {
	struct lb_deferq_entry e;
	uint64_t seq;
};

struct model {
	struct m_ent a[64];
	uint32_t n, cap, max_attempts;
	uint64_t gap, wait, last, seq;
	int64_t cursor; /* seq of the round's next entry, -1 between rounds */
	bool kick;
};

static uint64_t
m_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static int
m_find(const struct model *m, uint64_t key)
{
	for (uint32_t i = 0; i < m->n; i++)
		if (m->a[i].e.key == key)
			return (int)i;
	return -1;
}

static void
m_del(struct model *m, uint32_t i)
{
	if (m->cursor == (int64_t)m->a[i].seq)
		m->cursor = i + 1 < m->n ? (int64_t)m->a[i + 1].seq : -1;
	memmove(&m->a[i], &m->a[i + 1], (m->n - i - 1) * sizeof(m->a[0]));
	m->n--;
}

static int
m_push(struct model *m, uint64_t key, uint64_t cookie, uint64_t now)
{
	int i;

	if (now > m->last)
		m->last = now;
	i = m_find(m, key);
	if (i >= 0) {
		m->a[i].e.cookie = cookie;
		m->a[i].e.joins++;
		return J;
	}
	if (m->n == m->cap)
		return -ENOSPC;
	m->a[m->n] = (struct m_ent){
		.e = { .key = key, .cookie = cookie, .enq_ns = m->last,
		       .next_ns = m_sat(m->last, m->gap) },
		.seq = m->seq++,
	};
	m->n++;
	return 0;
}

/* Verdict both sides agree on: a fixed function of the entry and time. */
static enum lb_deferq_verdict
verdict_of(const struct lb_deferq_entry *e, uint64_t now)
{
	uint64_t s = e->key * 31 + e->attempts * 7 + now;

	return lb_splitmix64(&s) % 4 == 0 ? LB_DEFERQ_DONE : LB_DEFERQ_KEEP;
}

struct ev_log {
	uint64_t now;
	size_t n;
	struct {
		enum lb_deferq_event ev;
		struct lb_deferq_entry e;
	} v[160];
};

static void
log_ev(struct ev_log *l, enum lb_deferq_event ev,
       const struct lb_deferq_entry *e)
{
	assert_true(l->n < ARRAY_LEN(l->v));
	l->v[l->n].ev = ev;
	l->v[l->n].e = *e;
	l->n++;
}

static enum lb_deferq_verdict
log_cb(enum lb_deferq_event ev, const struct lb_deferq_entry *e, void *arg)
{
	struct ev_log *l = arg;

	log_ev(l, ev, e);
	return verdict_of(e, l->now);
}

static int
m_poll(struct model *m, uint64_t now, uint32_t budget, struct ev_log *l)
{
	uint64_t seq_end = m->seq;
	uint32_t handed = 0;

	if (now > m->last)
		m->last = now;
	now = m->last;
	l->now = now;
	while (m->n > 0 && handed < budget &&
	       now >= m_sat(m->a[0].e.enq_ns, m->wait)) {
		log_ev(l, LB_DEFERQ_EXPIRED, &m->a[0].e);
		handed++;
		m_del(m, 0);
	}
	if (m->cursor < 0)
		m->kick = false;
	if (!m->kick && m->n > 0 && m->a[0].e.next_ns <= now)
		m->cursor = (int64_t)m->a[0].seq;
	while (m->cursor >= 0 && handed < budget) {
		uint32_t i = 0;
		struct m_ent *x;

		while (m->a[i].seq != (uint64_t)m->cursor)
			i++;
		x = &m->a[i];
		if (x->seq >= seq_end)
			break;
		if (!m->kick && x->e.next_ns > now) {
			m->cursor = -1;
			break;
		}
		m->cursor = i + 1 < m->n ? (int64_t)m->a[i + 1].seq : -1;
		x->e.attempts++;
		handed++;
		log_ev(l, LB_DEFERQ_DUE, &x->e);
		if (verdict_of(&x->e, now) == LB_DEFERQ_DONE) {
			m_del(m, i);
		} else if (m->max_attempts &&
			   x->e.attempts >= m->max_attempts) {
			log_ev(l, LB_DEFERQ_EXHAUSTED, &x->e);
			m_del(m, i);
		} else {
			x->e.next_ns = m_sat(now, m->gap);
		}
	}
	if (m->cursor < 0)
		m->kick = false;
	return (int)handed;
}

static void
check_same(const struct lb_deferq *q, const struct model *m)
{
	struct lb_deferq_entry e;

	assert_int_equal(lb_deferq_depth(q), m->n);
	for (uint32_t i = 0; i < m->n; i++) {
		assert_int_equal(lb_deferq_lookup(q, m->a[i].e.key, &e), 0);
		assert_memory_equal(&e, &m->a[i].e, sizeof(e));
	}
}

static const struct {
	uint32_t capacity, max_attempts, keys, budget;
	uint64_t gap, wait, seed;
} model_cases[] = {
	/* Tiny queue, few keys: many joins, overflows, slot reuse. */
	{ 4, 0, 8, UINT32_MAX, 10, 100, 1 },
	{ 8, 0, 16, 3, 10, 100, 2 },
	{ 16, 5, 40, 5, 7, 60, 3 },
	{ 32, 0, 64, UINT32_MAX, 0, 50, 4 },
	{ 64, 2, 200, 7, 25, 400, 5 },
	{ 1, 0, 3, 1, 5, 30, 6 },
};

static void
test_model(void **state)
{
	(void)state;
	for (size_t c = 0; c < ARRAY_LEN(model_cases); c++) {
		struct lb_deferq_conf conf = {
			.retry_gap_ns = model_cases[c].gap,
			.max_wait_ns = model_cases[c].wait,
			.max_attempts = model_cases[c].max_attempts,
			.hash_seed = model_cases[c].seed * 0x9e3779b9,
		};
		struct model m = {
			.cap = model_cases[c].capacity,
			.max_attempts = model_cases[c].max_attempts,
			.gap = model_cases[c].gap,
			.wait = model_cases[c].wait,
			.cursor = -1,
		};
		struct lb_deferq *q = lb_deferq_create(m.cap, &conf);
		struct lb_deferq_stats st;
		struct lb_xoshiro x;
		struct lb_rng rng;
		uint64_t now = 0, pushes = 0;
		uint32_t budget = model_cases[c].budget;

		assert_non_null(q);
		lb_xoshiro_seed(&x, model_cases[c].seed);
		rng = lb_rng_xoshiro(&x);
		for (int step = 0; step < 40000; step++) {
			uint64_t r = lb_rng_below(&rng, 100);
			uint64_t key = lb_rng_below(&rng, model_cases[c].keys);
			uint64_t oc_q = 0, oc_m = 0;
			int rq, rm;

			/* Mostly forward, sometimes a stale clock. */
			if (lb_rng_below(&rng, 10) == 0)
				now -= now >= 3 ? 3 : now;
			else
				now += lb_rng_below(&rng, 4);
			if (r < 50) {
				uint64_t cookie = lb_rng_u64(&rng);
				int jm;

				rq = lb_deferq_push(q, key, cookie, now, &oc_q);
				jm = m_find(&m, key);
				if (jm >= 0)
					oc_m = m.a[jm].e.cookie;
				rm = m_push(&m, key, cookie, now);
				assert_int_equal(rq, rm);
				if (rq == 0)
					pushes++;
				if (rq == J)
					assert_int_equal(oc_q, oc_m);
			} else if (r < 53) {
				assert_int_equal(lb_deferq_kick(q), 0);
				m.cursor = m.n ? (int64_t)m.a[0].seq : -1;
				m.kick = m.n > 0;
			} else if (r < 60) {
				int i = m_find(&m, key);

				rq = lb_deferq_remove(q, key, &oc_q);
				if (i < 0) {
					assert_int_equal(rq, -ENOENT);
				} else {
					assert_int_equal(rq, 0);
					assert_int_equal(oc_q, m.a[i].e.cookie);
					m_del(&m, (uint32_t)i);
				}
			} else {
				struct ev_log lq, lm;

				/* Zero the padding too: compared bytewise. */
				memset(&lq, 0, sizeof(lq));
				memset(&lm, 0, sizeof(lm));
				lq.now = now > m.last ? now : m.last;
				rq = lb_deferq_poll(q, now, budget, log_cb,
						    &lq);
				rm = m_poll(&m, now, budget, &lm);
				assert_int_equal(rq, rm);
				assert_int_equal(lq.n, lm.n);
				assert_memory_equal(lq.v, lm.v,
						    lq.n * sizeof(lq.v[0]));
			}
			check_same(q, &m);
		}
		/* The slots wrapped around many times. */
		assert_true(pushes > 50 * m.cap);
		assert_int_equal(lb_deferq_stats(q, &st), 0);
		assert_int_equal(st.pushed, pushes);
		/* Every queued entry is accounted for exactly once. */
		assert_int_equal(st.pushed, st.depth + st.dispatched +
						    st.expired + st.exhausted +
						    st.removed);
		lb_deferq_free(q);
	}
}

/* ---- key index under load ---- */

static void
test_index_full(void **state)
{
	const uint32_t cap = 1024;
	struct lb_deferq *q = lb_deferq_create(cap, NULL);
	struct lb_deferq_entry e;
	struct lb_xoshiro x;
	struct lb_rng rng;
	uint64_t keys[1024];
	bool gone[1024] = { false };

	(void)state;
	lb_xoshiro_seed(&x, 77);
	rng = lb_rng_xoshiro(&x);
	/* Keys sharing their low 20 bits: a bare mask would collide all. */
	for (uint32_t i = 0; i < cap; i++) {
		keys[i] = (uint64_t)i << 20;
		assert_int_equal(lb_deferq_push(q, keys[i], i, 0, NULL), 0);
	}
	assert_int_equal(lb_deferq_push(q, 1, 0, 0, NULL), -ENOSPC);
	/* Remove in random order; every survivor stays reachable. */
	for (uint32_t n = 0; n < cap; n++) {
		uint32_t i;

		do
			i = (uint32_t)lb_rng_below(&rng, cap);
		while (gone[i]);
		assert_int_equal(lb_deferq_remove(q, keys[i], NULL), 0);
		gone[i] = true;
		if (n % 64 != 0 && n < cap - 8)
			continue;
		for (uint32_t j = 0; j < cap; j++) {
			int rc = lb_deferq_lookup(q, keys[j], &e);

			assert_int_equal(rc, gone[j] ? -ENOENT : 0);
			if (!gone[j])
				assert_int_equal(e.cookie, j);
		}
	}
	assert_int_equal(lb_deferq_depth(q), 0);
	lb_deferq_free(q);
}

/* ---- retry gap bounds under steady polling ---- */

/*
 * With an unlimited budget and a poll at every tick, each entry is handed
 * back no sooner than one gap after its push or previous retry, and
 * (head of line) less than two gaps after it.
 */
struct gap_check {
	uint64_t now, gap, last[64];
	uint64_t min_seen, max_seen;
	struct lb_xoshiro x;
};

static enum lb_deferq_verdict
gap_cb(enum lb_deferq_event ev, const struct lb_deferq_entry *e, void *arg)
{
	struct gap_check *g = arg;
	uint64_t d = g->now - g->last[e->key];
	struct lb_rng rng = lb_rng_xoshiro(&g->x);

	assert_int_equal(ev, LB_DEFERQ_DUE);
	if (d < g->min_seen)
		g->min_seen = d;
	if (d > g->max_seen)
		g->max_seen = d;
	g->last[e->key] = g->now;
	return lb_rng_below(&rng, 8) == 0 ? LB_DEFERQ_DONE : LB_DEFERQ_KEEP;
}

static void
test_gap_bounds(void **state)
{
	static const uint64_t gaps[] = { 1, 10, 37 };

	(void)state;
	for (size_t c = 0; c < ARRAY_LEN(gaps); c++) {
		struct lb_deferq_conf conf = {
			.retry_gap_ns = gaps[c],
			.max_wait_ns = LB_DEFERQ_WAIT_FOREVER,
		};
		struct lb_deferq *q = lb_deferq_create(64, &conf);
		struct gap_check g = { .gap = gaps[c], .min_seen = UINT64_MAX };
		struct lb_rng rng;

		lb_xoshiro_seed(&g.x, 1000 + c);
		rng = lb_rng_xoshiro(&g.x);
		for (g.now = 0; g.now < 20000; g.now++) {
			uint64_t key = lb_rng_below(&rng, 64);

			if (lb_rng_below(&rng, 4) == 0 &&
			    lb_deferq_push(q, key, 0, g.now, NULL) == 0)
				g.last[key] = g.now;
			assert_true(lb_deferq_poll(q, g.now, UINT32_MAX, gap_cb,
						   &g) >= 0);
		}
		assert_int_equal(g.min_seen, g.gap);
		assert_true(g.max_seen < 2 * g.gap);
		lb_deferq_free(q);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_bad_args),
		cmocka_unit_test(test_scripts),
		cmocka_unit_test(test_join_cookie),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_reentry),
		cmocka_unit_test(test_flush),
		cmocka_unit_test(test_model),
		cmocka_unit_test(test_index_full),
		cmocka_unit_test(test_gap_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
