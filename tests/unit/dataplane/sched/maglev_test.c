/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "maglev.h"

#define MAX_BE 64

static void
count_slots(const struct lb_maglev *m, uint32_t *cnt, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		cnt[i] = 0;
	for (uint32_t s = 0; s < m->size; s++) {
		assert_true(m->entry[s] < n);
		cnt[m->entry[s]]++;
	}
}

static void
test_prime(void **state)
{
	static const struct {
		uint32_t n;
		int prime;
	} rows[] = {
		{ 0, 0 }, { 1, 0 }, { 2, 1 }, { 3, 1 }, { 4, 0 }, { 9, 0 },
		{ 251, 1 }, { 65537, 1 }, { 65535, 0 }, { 1048573, 1 },
		{ 4294967291u, 1 }, { 4294967295u, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		assert_int_equal(lb_maglev_is_prime(rows[i].n), rows[i].prime);
}

static void
test_bad_input(void **state)
{
	static const uint32_t bad_sizes[] = { 0, 1, 2, 4, 65536, 1048583 };
	struct lb_maglev_be be[3] = { { 1, 1 }, { 2, 1 }, { 1, 1 } };
	struct lb_maglev *m;

	(void)state;
	for (size_t i = 0; i < sizeof(bad_sizes) / sizeof(bad_sizes[0]); i++) {
		errno = 0;
		assert_null(lb_maglev_create(bad_sizes[i]));
		assert_int_equal(errno, EINVAL);
	}
	m = lb_maglev_create(7);
	assert_non_null(m);
	assert_int_equal(lb_maglev_build(NULL, be, 2), -EINVAL);
	assert_int_equal(lb_maglev_build(m, NULL, 2), -EINVAL);
	/* duplicate keys would give two backends the same permutation */
	assert_int_equal(lb_maglev_build(m, be, 3), -EINVAL);
	/* more backends than slots */
	{
		struct lb_maglev_be many[7];

		for (uint32_t i = 0; i < 7; i++)
			many[i] = (struct lb_maglev_be){ i + 1, 1 };
		assert_int_equal(lb_maglev_build(m, many, 7), -EINVAL);
	}
	lb_maglev_free(m);
}

static void
test_empty_and_zero_weight(void **state)
{
	struct lb_maglev_be be[2] = { { 10, 0 }, { 20, 0 } };
	struct lb_maglev *m = lb_maglev_create(13);

	(void)state;
	assert_non_null(m);
	assert_int_equal(lb_maglev_build(m, NULL, 0), 0);
	assert_int_equal(lb_maglev_lookup(m, 12345), LB_MAGLEV_NONE);
	assert_int_equal(lb_maglev_build(m, be, 2), 0);
	for (uint64_t h = 0; h < 13; h++)
		assert_int_equal(lb_maglev_lookup(m, h), LB_MAGLEV_NONE);
	be[1].weight = 3;
	assert_int_equal(lb_maglev_build(m, be, 2), 0);
	for (uint64_t h = 0; h < 13; h++)
		assert_int_equal(lb_maglev_lookup(m, h), 1);
	lb_maglev_free(m);
}

/* Slot shares follow the weights. With M = 65537 the rounding of the
 * credit scheme is at most one slot per backend, so shares must be within
 * 0.1% of the table of weight_i / sum(weights). */
static void
test_weights(void **state)
{
	static const struct {
		uint32_t n;
		uint32_t w[8];
	} rows[] = {
		{ 3, { 1, 1, 1 } },
		{ 4, { 1, 2, 3, 4 } },
		{ 5, { 1, 1, 1, 2, 5 } },
		{ 8, { 100, 100, 100, 100, 100, 100, 100, 1 } },
		{ 2, { 1, 1000 } },
	};
	struct lb_maglev *m = lb_maglev_create(LB_MAGLEV_DEFAULT_SIZE);

	(void)state;
	assert_non_null(m);
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		struct lb_maglev_be be[8];
		uint32_t cnt[8];
		double wsum = 0;

		for (uint32_t i = 0; i < rows[r].n; i++) {
			be[i] = (struct lb_maglev_be){ 0x0a000001ULL + i * 7,
						       rows[r].w[i] };
			wsum += rows[r].w[i];
		}
		assert_int_equal(lb_maglev_build(m, be, rows[r].n), 0);
		count_slots(m, cnt, rows[r].n);
		for (uint32_t i = 0; i < rows[r].n; i++) {
			double want = rows[r].w[i] / wsum;
			double got = (double)cnt[i] / m->size;

			assert_true(got > want - 0.001 && got < want + 0.001);
		}
	}
	lb_maglev_free(m);
}

/*
 * A build in steps makes the table a build in one go makes, whatever the
 * budget of a step, and a small budget takes many steps: the table can be
 * built between a worker's bursts.
 */
static void
test_builder_steps(void **state)
{
	static const uint32_t sizes[] = { 251, LB_MAGLEV_DEFAULT_SIZE };
	static const uint32_t budgets[] = { 1, 7, 1000, 16384, UINT32_MAX };
	static const uint32_t w[5] = { 1, 3, 0, 2, 5 };
	struct lb_maglev_be be[5];

	(void)state;
	for (uint32_t i = 0; i < 5; i++)
		be[i] = (struct lb_maglev_be){ 0x0a000001ULL + i * 7, w[i] };
	for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
		struct lb_maglev *one = lb_maglev_create(sizes[z]);

		assert_non_null(one);
		assert_int_equal(lb_maglev_build(one, be, 5), 0);
		for (size_t k = 0; k < sizeof(budgets) / sizeof(budgets[0]);
		     k++) {
			struct lb_maglev *m = lb_maglev_create(sizes[z]);
			struct lb_maglev_builder *b;
			uint64_t steps = 1;

			assert_non_null(m);
			/* Left over from an earlier table: overwritten. */
			for (uint32_t e = 0; e < m->size; e++)
				m->entry[e] = 3;
			b = lb_maglev_builder_create(m, be, 5);
			assert_non_null(b);
			while (lb_maglev_builder_step(b, budgets[k]) != 0)
				steps++;
			lb_maglev_builder_free(b);
			assert_int_equal(m->nb_be, 5);
			assert_memory_equal(m->entry, one->entry,
					    m->size * sizeof(m->entry[0]));
			if (budgets[k] == UINT32_MAX)
				assert_int_equal(steps, 1);
			else if (budgets[k] <= 1000)
				assert_true(steps >= m->size / budgets[k]);
			lb_maglev_free(m);
		}
		lb_maglev_free(one);
	}
	/* Its input is checked as lb_maglev_build() checks it. */
	be[1].key = be[0].key;
	{
		struct lb_maglev *m = lb_maglev_create(251);

		errno = 0;
		assert_null(lb_maglev_builder_create(m, be, 5));
		assert_int_equal(errno, EINVAL);
		assert_null(lb_maglev_builder_create(NULL, be, 5));
		lb_maglev_free(m);
	}
}

/* Removing one of N equal backends must move close to 1/N of the slots:
 * those of the removed backend (1/N) plus a small extra share that the
 * paper measures in its figure 11. We allow up to 1.5/N of the slots to
 * change and require every slot of a surviving backend that changed to
 * have been either the removed backend's or reassigned among survivors
 * only rarely (< 0.5/N). */
static void
test_disruption(void **state)
{
	static const uint32_t ns[] = { 3, 5, 10, 20, 50 };
	struct lb_maglev *a = lb_maglev_create(LB_MAGLEV_DEFAULT_SIZE);
	struct lb_maglev *b = lb_maglev_create(LB_MAGLEV_DEFAULT_SIZE);

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	for (size_t r = 0; r < sizeof(ns) / sizeof(ns[0]); r++) {
		uint32_t n = ns[r], victim = n / 2;
		struct lb_maglev_be be[MAX_BE], rest[MAX_BE];
		uint32_t map[MAX_BE], k = 0, moved = 0, stolen = 0;

		for (uint32_t i = 0; i < n; i++)
			be[i] = (struct lb_maglev_be){ 0xc0a80000ULL + i, 1 };
		for (uint32_t i = 0; i < n; i++) {
			if (i == victim)
				continue;
			map[k] = i;
			rest[k++] = be[i];
		}
		assert_int_equal(lb_maglev_build(a, be, n), 0);
		assert_int_equal(lb_maglev_build(b, rest, n - 1), 0);
		for (uint32_t s = 0; s < a->size; s++) {
			uint32_t before = a->entry[s];
			uint32_t after = map[b->entry[s]];

			if (before != after) {
				moved++;
				if (before != victim)
					stolen++;
			}
		}
		assert_true(moved >= a->size / n - 1);
		assert_true((double)moved / a->size < 1.5 / n);
		assert_true((double)stolen / a->size < 0.5 / n);
	}
	lb_maglev_free(a);
	lb_maglev_free(b);
}

/* The table lives in shared memory: init on caller memory, same result as
 * create, and the same input always yields the same table. */
static void
test_deterministic_in_place(void **state)
{
	struct lb_maglev_be be[4] = { { 1, 1 }, { 2, 2 }, { 3, 1 }, { 4, 3 } };
	struct lb_maglev *a = lb_maglev_create(251);
	struct lb_maglev *b = malloc(lb_maglev_mem_size(251));

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(lb_maglev_init(b, 251), 0);
	assert_int_equal(lb_maglev_init(b, 250), -EINVAL);
	assert_int_equal(lb_maglev_build(a, be, 4), 0);
	assert_int_equal(lb_maglev_build(b, be, 4), 0);
	assert_memory_equal(a->entry, b->entry, 251 * sizeof(uint32_t));
	assert_int_equal(b->nb_be, 4);
	lb_maglev_free(a);
	free(b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prime),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_empty_and_zero_weight),
		cmocka_unit_test(test_weights),
		cmocka_unit_test(test_builder_steps),
		cmocka_unit_test(test_disruption),
		cmocka_unit_test(test_deterministic_in_place),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
