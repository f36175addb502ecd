/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lb/sched.h"

#define N 4

static struct lb_xoshiro xo;
static struct lb_rng rng;

static int
setup(void **state)
{
	(void)state;
	lb_xoshiro_seed(&xo, 1234);
	rng = lb_rng_xoshiro(&xo);
	return 0;
}

static void
backends(struct lb_sched_be *be, const uint32_t *w)
{
	for (uint32_t i = 0; i < N; i++)
		be[i] = (struct lb_sched_be){ 0x0a000001ULL << 16 | (8000 + i),
					      w[i], true };
}

/*
 * A complete state: create() and, for a scheduler that builds in slices,
 * build() until done, as a worker does between bursts.
 */
static void *
create_built(const struct lb_sched_ops *ops, const struct lb_sched_be *be,
	     uint32_t n)
{
	void *st = ops->create(be, n);

	while (st != NULL && ops->build != NULL && ops->build(st, 4096) != 0)
		;
	return st;
}

static void
count_picks(const struct lb_sched_ops *ops, void *st, unsigned int picks,
	    uint32_t *cnt)
{
	memset(cnt, 0, N * sizeof(*cnt));
	for (unsigned int k = 0; k < picks; k++) {
		uint32_t be = UINT32_MAX;

		assert_int_equal(ops->pick(st, lb_rng_u64(&rng), &rng, &be),
				 0);
		assert_true(be < N);
		cnt[be]++;
	}
}

/*
 * Every scheduler registers itself from its own file: the four of
 * dataplane/sched/ and `first`, which sched_first.c (beside this file)
 * adds to this program only. Nothing in this file names their ops, so each is here only
 * if its constructor ran.
 */
static void
test_registry(void **state)
{
	static const char *const names[] = {"adaptive", "first", "maglev", "rr",
					    "wrr"};
	const struct lb_sched_ops *all[LB_SCHED_MAX];
	/* The registry keeps the pointer: it must outlive the test. */
	static struct lb_sched_ops dup;
	char list[64];

	(void)state;
	assert_int_equal(lb_sched_list(all, LB_SCHED_MAX), 5);
	for (size_t i = 0; i < 5; i++) {
		const struct lb_sched_ops *o = lb_sched_find(names[i]);

		assert_non_null(o);
		assert_string_equal(o->name, names[i]);
		assert_non_null(o->help);
		/* Listed in name order, whatever the link order. */
		assert_ptr_equal(all[i], o);
	}
	assert_int_equal(lb_sched_names(list, sizeof(list), ", "),
			 (int)strlen("adaptive, first, maglev, rr, wrr"));
	assert_string_equal(list, "adaptive, first, maglev, rr, wrr");
	assert_int_equal(lb_sched_names(list, 5, " "),
			 (int)strlen("adaptive first maglev rr wrr"));
	assert_string_equal(list, "adap");
	assert_non_null(lb_sched_find(LB_SCHED_DEFAULT));
	assert_null(lb_sched_find("lc"));
	assert_null(lb_sched_find(""));
	assert_null(lb_sched_find(NULL));

	dup = *lb_sched_find("rr");
	assert_int_equal(lb_sched_register(&dup), -EEXIST);
	dup.name = "rr2";
	dup.pick = NULL;
	assert_int_equal(lb_sched_register(&dup), -EINVAL);
	dup.pick = lb_sched_find("rr")->pick;
	dup.name = "a-name-that-is-too-long";
	assert_int_equal(lb_sched_register(&dup), -EINVAL);
	dup.name = "rr2";
	assert_int_equal(lb_sched_register(&dup), 0);
	assert_ptr_equal(lb_sched_find("rr2"), &dup);
	assert_int_equal(lb_sched_list(all, LB_SCHED_MAX), 6);
	assert_ptr_equal(all[4], &dup);
	assert_int_equal(lb_sched_list(all, 2), 2);
}

/* The `first` scheduler, found by name like the built-in ones, picks the
 * first eligible backend and retries in index order. */
static void
test_first(void **state)
{
	static const uint32_t w[N] = {1, 1, 1, 1};
	const struct lb_sched_ops *ops = lb_sched_find("first");
	struct lb_sched_be be[N];
	uint32_t got = UINT32_MAX;
	void *st;

	(void)state;
	assert_non_null(ops);
	backends(be, w);
	be[0].eligible = false;
	st = create_built(ops, be, N);
	assert_non_null(st);
	for (int k = 0; k < 3; k++) {
		assert_int_equal(ops->pick(st, lb_rng_u64(&rng), &rng, &got),
				 0);
		assert_int_equal(got, 1);
	}
	assert_int_equal(ops->next(st, 1, &got), 0);
	assert_int_equal(got, 2);
	assert_int_equal(ops->set_eligible(st, 2, false), 0);
	assert_int_equal(ops->next(st, 1, &got), 0);
	assert_int_equal(got, 3);
	assert_int_equal(ops->next(st, 3, &got), -ENOENT);
	assert_int_equal(ops->set_eligible(st, 0, true), 0);
	assert_int_equal(ops->pick(st, 0, &rng, &got), 0);
	assert_int_equal(got, 0);
	ops->destroy(st);
}

/* Expected shares of N picks for each scheduler given the weights; rr and
 * wrr are deterministic, so their counts must be exact over a full cycle.
 * Maglev follows the weights to within the spread of random flow hashes
 * (5 sigma of a binomial over 40000 picks is under 1.2%); adaptive
 * without errors is uniform whatever the weights (the paper's E_m = 1
 * case). */
static void
test_shares(void **state)
{
	static const uint32_t w[N] = { 1, 2, 3, 4 };
	static const struct {
		const char *name;
		int exact;
		double share[N];
	} rows[] = {
		{ "rr", 1, { 0.25, 0.25, 0.25, 0.25 } },
		{ "wrr", 1, { 0.1, 0.2, 0.3, 0.4 } },
		{ "maglev", 0, { 0.1, 0.2, 0.3, 0.4 } },
		{ "adaptive", 0, { 0.25, 0.25, 0.25, 0.25 } },
	};
	struct lb_sched_be be[N];

	(void)state;
	backends(be, w);
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		const struct lb_sched_ops *ops = lb_sched_find(rows[r].name);
		unsigned int picks = rows[r].exact ? 1000 : 40000;
		uint32_t cnt[N];
		void *st = create_built(ops, be, N);

		assert_non_null(st);
		count_picks(ops, st, picks, cnt);
		for (uint32_t i = 0; i < N; i++) {
			double got = (double)cnt[i] / picks;

			if (rows[r].exact)
				assert_int_equal(cnt[i],
						 (uint32_t)(rows[r].share[i] *
							    picks + 0.5));
			else if (got < rows[r].share[i] - 0.012 ||
				 got > rows[r].share[i] + 0.012)
				fail_msg("%s backend %u: share %.3f, want %.3f",
					 rows[r].name, i, got,
					 rows[r].share[i]);
		}
		ops->destroy(st);
	}
}

/* Smooth wrr never gives the heaviest backend its whole share in a row:
 * with weights 5,1,1 the sequence is a b a c a b a ... style. */
static void
test_wrr_smooth(void **state)
{
	struct lb_sched_be be[3] = { { 1, 5, true }, { 2, 1, true },
				     { 3, 1, true } };
	const struct lb_sched_ops *ops = lb_sched_find("wrr");
	static const uint32_t want[7] = { 0, 0, 1, 0, 2, 0, 0 };
	void *st = create_built(ops, be, 3);

	(void)state;
	assert_non_null(st);
	for (int k = 0; k < 14; k++) {
		uint32_t got;

		assert_int_equal(ops->pick(st, 0, &rng, &got), 0);
		assert_int_equal(got, want[k % 7]);
	}
	ops->destroy(st);
}

static void
test_drain_and_next(void **state)
{
	static const uint32_t w[N] = { 1, 1, 1, 1 };
	static const char *const names[] = { "adaptive", "maglev", "rr",
					     "wrr" };
	struct lb_sched_be be[N];

	(void)state;
	backends(be, w);
	for (size_t r = 0; r < 4; r++) {
		const struct lb_sched_ops *ops = lb_sched_find(names[r]);
		void *st = create_built(ops, be, N);
		uint32_t cnt[N], nx;

		assert_non_null(st);
		assert_int_equal(ops->set_eligible(st, 2, false), 0);
		assert_int_equal(ops->set_eligible(st, N, false), -EINVAL);
		count_picks(ops, st, 2000, cnt);
		assert_int_equal(cnt[2], 0);
		assert_true(cnt[0] > 0 && cnt[1] > 0 && cnt[3] > 0);

		/* next() walks index order, skipping the drained one and
		 * never returning prev itself. */
		assert_int_equal(ops->next(st, 1, &nx), 0);
		assert_int_equal(nx, 3);
		assert_int_equal(ops->next(st, 3, &nx), 0);
		assert_int_equal(nx, 0);
		assert_int_equal(ops->next(st, N, &nx), -EINVAL);

		for (uint32_t i = 0; i < N; i++)
			assert_int_equal(ops->set_eligible(st, i, false), 0);
		assert_int_equal(ops->pick(st, 7, &rng, &nx), -ENOENT);
		assert_int_equal(ops->next(st, 0, &nx), -ENOENT);
		assert_int_equal(ops->set_eligible(st, 1, true), 0);
		assert_int_equal(ops->pick(st, 7, &rng, &nx), 0);
		assert_int_equal(nx, 1);
		assert_int_equal(ops->next(st, 1, &nx), -ENOENT);
		ops->destroy(st);
	}
}

/* Maglev keeps a flow on its backend as long as that backend stays. */
static void
test_maglev_consistent(void **state)
{
	static const uint32_t w[N] = { 1, 1, 1, 1 };
	const struct lb_sched_ops *ops = lb_sched_find("maglev");
	struct lb_sched_be be[N];
	uint32_t before[256], kept = 0, moved_from_live = 0;
	void *st;

	(void)state;
	backends(be, w);
	st = create_built(ops, be, N);
	assert_non_null(st);
	for (uint64_t h = 0; h < 256; h++)
		assert_int_equal(ops->pick(st, h * 0x9e3779b97f4a7c15ULL, &rng,
					   &before[h]),
				 0);
	assert_int_equal(ops->set_eligible(st, 1, false), 0);
	for (uint64_t h = 0; h < 256; h++) {
		uint32_t now;

		assert_int_equal(ops->pick(st, h * 0x9e3779b97f4a7c15ULL, &rng,
					   &now),
				 0);
		assert_int_not_equal(now, 1);
		if (before[h] != 1) {
			kept += now == before[h];
			moved_from_live += now != before[h];
		}
	}
	assert_true(kept > 0);
	/* Maglev's disruption beyond the removed backend is small. */
	assert_true(moved_from_live * 20 <= kept);
	ops->destroy(st);
}

/* Only adaptive turns failures into weights: a backend that keeps
 * failing loses most of its share, and a success restores it. */
static void
test_adaptive_feedback(void **state)
{
	static const uint32_t w[N] = { 1, 1, 1, 1 };
	const struct lb_sched_ops *ops = lb_sched_find("adaptive");
	struct lb_sched_be be[N];
	uint32_t cnt[N];
	void *st;

	(void)state;
	backends(be, w);
	st = create_built(ops, be, N);
	assert_non_null(st);
	for (int k = 0; k < 20; k++)
		ops->result(st, 3, false);
	assert_int_equal(ops->errors(st, 3), 20);
	count_picks(ops, st, 20000, cnt);
	assert_true(cnt[3] < 20000 / 20);
	ops->result(st, 3, true);
	assert_int_equal(ops->errors(st, 3), 0);
	/* A worker moving to a new table carries the counts over. */
	assert_int_equal(ops->set_errors(st, 2, 7), 0);
	assert_int_equal(ops->errors(st, 2), 7);
	assert_int_equal(ops->set_errors(st, 2, UINT32_MAX), 0);
	assert_int_equal(ops->errors(st, 2), 65535);
	assert_int_equal(ops->set_errors(st, N, 1), -EINVAL);
	ops->set_errors(st, 2, 0);
	count_picks(ops, st, 20000, cnt);
	assert_true(cnt[3] > 20000 / 5);
	ops->destroy(st);

	/* The others keep no error counts. */
	st = create_built(lb_sched_find("rr"), be, N);
	lb_sched_find("rr")->result(st, 0, false);
	assert_int_equal(lb_sched_find("rr")->errors(st, 0), 0);
	assert_int_equal(lb_sched_find("rr")->set_errors(st, 0, 5), 0);
	assert_int_equal(lb_sched_find("rr")->errors(st, 0), 0);
	lb_sched_find("rr")->destroy(st);
}

/*
 * Maglev builds its table in slices (a worker does one per poll). Every
 * state answers at once: from the table it inherited, checked against its
 * own backends, or by the flow's hash over the eligible ones; once built
 * it answers as a state built in one go.
 */
static void
test_maglev_sliced(void **state)
{
	static const uint32_t w[N] = { 1, 1, 1, 1 };
	const struct lb_sched_ops *ops = lb_sched_find("maglev");
	struct lb_sched_be be[N];
	void *prev, *st, *ref;
	unsigned int slices = 0, inherited = 0;
	int rc;

	(void)state;
	backends(be, w);
	prev = create_built(ops, be, N);
	be[1].eligible = false;
	ref = create_built(ops, be, N);
	st = ops->create(be, N);
	assert_non_null(prev);
	assert_non_null(ref);
	assert_non_null(st);
	/* Nothing inherited: eligible backends only, by the hash. */
	for (uint64_t h = 0; h < 256; h++) {
		uint32_t got;

		assert_int_equal(ops->pick(st, h * 0x9e3779b97f4a7c15ULL, &rng,
					   &got),
				 0);
		assert_true(got < N && got != 1);
	}
	ops->inherit(st, prev);
	ops->destroy(prev);
	prev = create_built(ops, (struct lb_sched_be[N]){
					 be[0], { be[1].key, 1, true }, be[2],
					 be[3] },
			    N);
	do {
		rc = ops->build(st, 1000);
		assert_true(rc == 0 || rc == 1);
		slices++;
		for (uint64_t h = 0; h < 64; h++) {
			uint64_t x = h * 0x9e3779b97f4a7c15ULL;
			uint32_t got, was;

			assert_int_equal(ops->pick(st, x, &rng, &got), 0);
			assert_true(got < N && got != 1);
			/* Flows of the backends that stay keep theirs. */
			assert_int_equal(ops->pick(prev, x, &rng, &was), 0);
			if (rc == 1 && was != 1) {
				assert_int_equal(got, was);
				inherited++;
			}
		}
	} while (rc == 1);
	assert_true(slices > 10);
	assert_true(inherited > 0);
	for (uint64_t h = 0; h < 4096; h++) {
		uint64_t x = h * 0x9e3779b97f4a7c15ULL;
		uint32_t got, want;

		assert_int_equal(ops->pick(st, x, &rng, &got), 0);
		assert_int_equal(ops->pick(ref, x, &rng, &want), 0);
		assert_int_equal(got, want);
	}
	ops->destroy(prev);
	ops->destroy(ref);
	ops->destroy(st);
}

static void
test_bad_create(void **state)
{
	static const char *const names[] = { "adaptive", "maglev", "rr",
					     "wrr" };
	struct lb_sched_be be[1] = { { 1, 1, true } };

	(void)state;
	for (size_t r = 0; r < 4; r++) {
		errno = 0;
		assert_null(lb_sched_find(names[r])->create(be, 0));
		assert_int_equal(errno, EINVAL);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_first),
		cmocka_unit_test(test_shares),
		cmocka_unit_test(test_wrr_smooth),
		cmocka_unit_test(test_drain_and_next),
		cmocka_unit_test(test_maglev_consistent),
		cmocka_unit_test(test_maglev_sliced),
		cmocka_unit_test(test_adaptive_feedback),
		cmocka_unit_test(test_bad_create),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
