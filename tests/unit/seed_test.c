/* SPDX-License-Identifier: BSD-3-Clause */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "lb/seed.h"

/* Two processes, or two starts of one, get seeds of their own: a seed
 * that repeated (the TSC at start, a constant) could be guessed. The
 * odds of a false failure are 2^-64 per comparison. */
static void
test_draws_differ(void **state)
{
	struct lb_seeds a = { 0 }, b = { 0 }, c;
	int fd[2], st;
	pid_t pid;

	(void)state;
	assert_int_equal(lb_seeds_draw(&a), 0);
	assert_int_equal(lb_seeds_draw(&b), 0);
	assert_true(a.hash != b.hash);
	assert_true(a.rng != b.rng);
	assert_true(a.hash != a.rng);

	/* A child process: nothing of the parent's state leaks into it. */
	assert_int_equal(pipe(fd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct lb_seeds k = { 0 };

		close(fd[0]);
		_exit(lb_seeds_draw(&k) != 0 ||
		      write(fd[1], &k, sizeof(k)) != (ssize_t)sizeof(k));
	}
	close(fd[1]);
	assert_int_equal(read(fd[0], &c, sizeof(c)), (ssize_t)sizeof(c));
	close(fd[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_true(c.hash != a.hash && c.hash != b.hash);
	assert_true(c.rng != a.rng && c.rng != b.rng);
}

/* Given seeds are kept as given (hosts of an ECMP group, a benchmark
 * that must repeat itself); only the other one is drawn. */
static void
test_given_seeds_kept(void **state)
{
	struct lb_seeds a = { .hash = 42, .hash_set = true };
	struct lb_seeds b = { .hash = 42, .hash_set = true };
	struct lb_seeds c = { .hash = 7, .rng = 9, .hash_set = true,
			      .rng_set = true };

	(void)state;
	assert_int_equal(lb_seeds_draw(&a), 0);
	assert_int_equal(lb_seeds_draw(&b), 0);
	assert_true(a.hash == 42 && b.hash == 42);
	assert_true(a.rng != b.rng);
	assert_int_equal(lb_seeds_draw(&c), 0);
	assert_true(c.hash == 7 && c.rng == 9);
}

static void
test_random_fills_all_bits(void **state)
{
	uint64_t or = 0, and = ~0ull;

	(void)state;
	/* Each of the 64 bits is set in some draw and clear in another
	 * (a bit stuck by chance: odds of 64 * 2^-31). */
	for (int i = 0; i < 32; i++) {
		uint64_t v;

		assert_int_equal(lb_seed_random(&v), 0);
		or |= v;
		and &= v;
	}
	assert_true(or == ~0ull);
	assert_true(and == 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_draws_differ),
		cmocka_unit_test(test_given_seeds_kept),
		cmocka_unit_test(test_random_fills_all_bits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
