/* SPDX-License-Identifier: BSD-3-Clause */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "seed.h"

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

static void
test_parse(void **state)
{
	static const struct {
		const char *s;
		int rc;
		uint64_t v;
	} rows[] = {
		{ "0", 0, 0 },
		{ "12345", 0, 12345 },
		{ "0x736c756963652121", 0, 0x736c756963652121ull },
		{ "18446744073709551615", 0, UINT64_MAX },
		{ "0xffffffffffffffff\n", 0, UINT64_MAX },
		{ "18446744073709551616", -EINVAL, 0 }, /* 2^64 */
		{ "", -EINVAL, 0 },
		{ "-1", -EINVAL, 0 }, /* strtoull() would wrap it */
		{ "+1", -EINVAL, 0 },
		{ " 1", -EINVAL, 0 },
		{ "1 ", -EINVAL, 0 },
		{ "1\n\n", -EINVAL, 0 },
		{ "12abc", -EINVAL, 0 },
		{ "0x", -EINVAL, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint64_t v = 7;
		int rc = lb_seed_parse(rows[i].s, &v);

		if (rc != rows[i].rc || (rc == 0 && v != rows[i].v))
			fail_msg("'%s': rc %d value %llu", rows[i].s, rc,
				 (unsigned long long)v);
		if (rc != 0 && v != 7)
			fail_msg("'%s': refused but written", rows[i].s);
	}
}

static void
test_read_file(void **state)
{
	static const struct {
		const char *text;
		int rc;
		uint64_t v;
	} rows[] = {
		{ "0x0123456789abcdef\n", 0, 0x0123456789abcdefull },
		{ "42", 0, 42 },
		{ "", -EINVAL, 0 },
		{ "42\n43\n", -EINVAL, 0 },
		{ "4\0002", -EINVAL, 0 },
		/* longer than any number, though it would parse */
		{ "00000000000000000000000000000000000000000000000000000000"
		  "000000000000000001",
		  -EINVAL, 0 },
	};
	char path[] = "/tmp/seed_test_XXXXXX";
	uint64_t v;

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		size_t len = rows[i].text[0] == '4' && rows[i].text[1] == 0 ?
				     3 :
				     strlen(rows[i].text);
		int fd = mkstemp(path);
		int rc;

		assert_true(fd >= 0);
		assert_int_equal(write(fd, rows[i].text, len), (ssize_t)len);
		close(fd);
		v = 0;
		rc = lb_seed_read_file(path, &v);
		unlink(path);
		memcpy(path + strlen(path) - 6, "XXXXXX", 6);
		if (rc != rows[i].rc || (rc == 0 && v != rows[i].v))
			fail_msg("row %zu: rc %d value %llu", i, rc,
				 (unsigned long long)v);
	}
	assert_int_equal(lb_seed_read_file("/nonexistent/seed", &v), -ENOENT);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_draws_differ),
		cmocka_unit_test(test_given_seeds_kept),
		cmocka_unit_test(test_random_fills_all_bits),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_read_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
