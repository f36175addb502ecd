/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests of the lease's state machine: rows of {time, the op it must ask,
 * the store's answer} run against one lease, with the role, term and
 * deadline expected after each; and the two-holder property that no two
 * lease holders lead at once while the store answers late or not at all.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lease.h"

#define MS 1000000ull

#define NONE LB_LEASE_OP_NONE
#define ACQ LB_LEASE_OP_ACQUIRE
#define REN LB_LEASE_OP_RENEW
#define HELD LB_LEASE_HELD
#define TAKEN LB_LEASE_TAKEN
#define FREE LB_LEASE_FREE
#define ERR LB_LEASE_ERROR
#define L LB_LEASE_LEADER
#define F LB_LEASE_FOLLOWER
#define NO_ANSWER 99

struct row {
	uint64_t now_ms;
	enum lb_lease_op op; /* expected due */
	int out;	     /* answer (NO_ANSWER: none sent) */
	uint64_t rtt_ms;     /* answer arrives this long after the send */
	uint64_t term;	     /* the answer's term */
	const char *holder;
	enum lb_lease_role role; /* expected after */
	uint64_t term_after;
	uint64_t valid_ms; /* expected valid_until, ms */
};

/* TTL 3 s, renew 1 s, margin 300 ms. */
static const struct lb_lease_params P = {3000 * MS, 1000 * MS, 300 * MS};

static void
run(const struct row *r, size_t n, struct lb_lease *l)
{
	lb_lease_init(l, &P);
	for (size_t i = 0; i < n; i++) {
		uint64_t now = r[i].now_ms * MS;

		print_message("row %zu at %lu ms\n", i,
			      (unsigned long)r[i].now_ms);
		assert_int_equal(lb_lease_due(l, now), r[i].op);
		if (r[i].out != NO_ANSWER)
			lb_lease_answer(l, r[i].op, now,
					now + r[i].rtt_ms * MS,
					(enum lb_lease_outcome)r[i].out,
					r[i].term, r[i].holder);
		assert_int_equal(l->role, r[i].role);
		assert_int_equal(l->term, r[i].term_after);
		if (r[i].role == L)
			assert_int_equal(l->valid_until_ns, r[i].valid_ms * MS);
	}
}

static void
test_acquire_renew_lose(void **state)
{
	static const struct row r[] = {
		/* Free: taken in term 1, valid to send + TTL - margin. */
		{0, ACQ, HELD, 5, 1, "a", L, 1, 2700},
		{500, NONE, NO_ANSWER, 0, 0, NULL, L, 1, 2700},
		/* Renewed: the deadline follows the renewal's send. */
		{1005, REN, HELD, 100, 1, "a", L, 1, 3705},
		/* Another took it (a store that lost our key): follower. */
		{2105, REN, TAKEN, 1, 4, "b", F, 4, 0},
		{2500, NONE, NO_ANSWER, 0, 0, NULL, F, 4, 0},
		{3106, ACQ, TAKEN, 1, 4, "b", F, 4, 0},
		/* b's lease expired: ours in term 5. */
		{4107, ACQ, HELD, 1, 5, "a", L, 5, 6807},
		/* A renewal that finds it free: follower, retrying now. */
		{5108, REN, FREE, 1, 0, NULL, F, 5, 0},
		{5109, ACQ, HELD, 1, 6, "a", L, 6, 7809},
	};
	struct lb_lease l;

	(void)state;
	run(r, sizeof(r) / sizeof(r[0]), &l);
	assert_int_equal(l.st.acquired, 3);
	assert_int_equal(l.st.renewed, 1);
	assert_int_equal(l.st.lost, 2);
	assert_string_equal(l.leader, "a");
}

static void
test_step_down_on_timeouts(void **state)
{
	static const struct row r[] = {
		{0, ACQ, HELD, 1, 7, "a", L, 7, 2700},
		/* Renewals time out: the deadline stays where it was. */
		{1001, REN, ERR, 200, 0, NULL, L, 7, 2700},
		{2201, REN, ERR, 200, 0, NULL, L, 7, 2700},
		/* Past send + TTL - margin: stepped down, trying to take it
		 * again (not a renewal: we cannot know it is ours). */
		{2700, ACQ, NO_ANSWER, 0, 0, NULL, F, 7, 0},
	};
	struct lb_lease l;

	(void)state;
	run(r, sizeof(r) / sizeof(r[0]), &l);
	assert_int_equal(l.st.expired, 1);
	assert_int_equal(l.st.errors, 2);
	assert_false(lb_lease_leading(&l, 2700 * MS));
	/* One ns before the deadline it still led. */
	lb_lease_init(&l, &P);
	lb_lease_answer(&l, ACQ, 0, MS, HELD, 1, "a");
	assert_true(lb_lease_leading(&l, 2700 * MS - 1));
	assert_false(lb_lease_leading(&l, 2700 * MS));
}

static void
test_slow_answer(void **state)
{
	struct lb_lease l;

	(void)state;
	lb_lease_init(&l, &P);
	/* An acquisition answered after its whole TTL: the lease may be
	 * another's by then; not leading, asked again at once. */
	lb_lease_answer(&l, ACQ, 0, 3000 * MS, HELD, 1, "a");
	assert_false(lb_lease_leading(&l, 3000 * MS));
	assert_int_equal(lb_lease_due(&l, 3000 * MS), ACQ);
	/* A renewal answered late moves the deadline by the send time
	 * only. */
	lb_lease_init(&l, &P);
	lb_lease_answer(&l, ACQ, 0, MS, HELD, 1, "a");
	lb_lease_answer(&l, REN, 1000 * MS, 2500 * MS, HELD, 1, "a");
	assert_int_equal(l.valid_until_ns, 3700 * MS);
}

static void
test_term_monotonic(void **state)
{
	struct lb_lease l;

	(void)state;
	lb_lease_init(&l, &P);
	lb_lease_answer(&l, ACQ, 0, MS, TAKEN, 9, "b");
	assert_int_equal(l.term, 9);
	/* A store that forgot (restarted empty) gives term 1: not
	 * believed, not leading. */
	lb_lease_answer(&l, ACQ, 1000 * MS, 1001 * MS, HELD, 1, "a");
	assert_int_equal(l.role, F);
	assert_int_equal(l.term, 9);
	assert_int_equal(l.st.stale, 1);
	lb_lease_answer(&l, ACQ, 2000 * MS, 2001 * MS, HELD, 10, "a");
	assert_int_equal(l.role, L);
	assert_int_equal(l.term, 10);
	/* A renewal that says "held" in another term is not ours. */
	lb_lease_answer(&l, REN, 3000 * MS, 3001 * MS, HELD, 11, "a");
	assert_int_equal(l.term, 10);
	assert_int_equal(l.valid_until_ns, 4700 * MS);
	/* Renewal of a follower: nothing. */
	lb_lease_step_down(&l);
	lb_lease_answer(&l, REN, 4000 * MS, 4001 * MS, HELD, 10, "a");
	assert_int_equal(l.role, F);
}

/*
 * Two holders and a store kept by the test: the store gives the lease
 * to whoever asks when it is free, for the TTL from when it runs the
 * command; answers come up to 2 s late or are lost (the store having
 * acted). At no time do both
 * lead, and never does one lead while the store says the other holds.
 */
struct store {
	uint64_t term;
	int holder; /* -1 none */
	uint64_t expires;
};

static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void
test_no_split_brain(void **state)
{
	struct lb_lease l[2];
	struct store st = {0, -1, 0};
	uint64_t seed = 0x9e3779b97f4a7c15ull, led = 0;

	(void)state;
	lb_lease_init(&l[0], &P);
	lb_lease_init(&l[1], &P);
	for (uint64_t t = 0; t < 600000 * MS; t += 7 * MS) {
		for (int h = 0; h < 2; h++) {
			enum lb_lease_op op = lb_lease_due(&l[h], t);
			uint64_t lag = rnd(&seed) % 2000 * MS, run_at;
			enum lb_lease_outcome out;
			char name[2] = {(char)('a' + h), 0};

			if (op == NONE)
				continue;
			/* The store runs it when sent; the answer comes up
			 * to 2 s later, or is lost (a quarter of them). */
			run_at = t;
			if (st.holder >= 0 && run_at >= st.expires)
				st.holder = -1;
			if (st.holder == h) {
				st.expires = run_at + P.ttl_ns;
				out = HELD;
			} else if (st.holder < 0 && op == ACQ) {
				st.holder = h;
				st.term++;
				st.expires = run_at + P.ttl_ns;
				out = HELD;
			} else {
				out = st.holder < 0 ? FREE : TAKEN;
			}
			if (rnd(&seed) % 4 == 0) {
				lb_lease_answer(&l[h], op, t, t + 200 * MS,
						ERR, 0, NULL);
				continue;
			}
			name[0] = (char)('a' + (st.holder < 0 ? h : st.holder));
			lb_lease_answer(&l[h], op, t, t + lag, out, st.term,
					name);
		}
		for (int h = 0; h < 2; h++) {
			if (!lb_lease_leading(&l[h], t))
				continue;
			led++;
			assert_false(lb_lease_leading(&l[1 - h], t));
			/* The store agrees the lease is ours. */
			assert_int_equal(st.holder, h);
			assert_true(t < st.expires);
			assert_int_equal(l[h].term, st.term);
		}
	}
	/* The property held over time that someone led. */
	assert_true(led > 1000);
	assert_true(l[0].st.acquired + l[1].st.acquired > 2);
}

static void
test_params(void **state)
{
	struct lb_lease_params p;

	(void)state;
	lb_lease_params_default(&p);
	assert_int_equal(lb_lease_params_check(&p), 0);
	p.renew_ns = p.ttl_ns;
	assert_int_equal(lb_lease_params_check(&p), -EINVAL);
	lb_lease_params_default(&p);
	p.margin_ns = p.ttl_ns - p.renew_ns;
	assert_int_equal(lb_lease_params_check(&p), -EINVAL);
	p.margin_ns = 0;
	assert_int_equal(lb_lease_params_check(&p), -EINVAL);
	lb_lease_params_default(&p);
	p.ttl_ns = 99 * MS;
	assert_int_equal(lb_lease_params_check(&p), -EINVAL);
	assert_int_equal(lb_lease_params_check(NULL), -EINVAL);
	assert_string_equal(lb_lease_role_name(L), "leader");
	assert_string_equal(lb_lease_role_name(F), "follower");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_acquire_renew_lose),
		cmocka_unit_test(test_step_down_on_timeouts),
		cmocka_unit_test(test_slow_answer),
		cmocka_unit_test(test_term_monotonic),
		cmocka_unit_test(test_no_split_brain),
		cmocka_unit_test(test_params),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
