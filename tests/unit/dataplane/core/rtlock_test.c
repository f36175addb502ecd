/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "lb/rtlock.h"

/* A runtime directory of its own for each test, under /tmp. */
static char dir[PATH_MAX];

static int
setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/lb-rtlock-XXXXXX");
	return mkdtemp(dir) == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void
touch(const char *name)
{
	char p[PATH_MAX + 64];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_RDWR | O_CREAT, 0600);
	assert_true(fd >= 0);
	close(fd);
}

static bool
exists(const char *name)
{
	char p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return access(p, F_OK) == 0;
}

/*
 * A child that holds the config's write lock as a DPDK primary does, on
 * the head of the file; it waits to be killed. Returns its pid.
 */
static pid_t
fake_primary(void)
{
	int ready[2];
	char c;
	pid_t pid;

	assert_int_equal(pipe(ready), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char p[PATH_MAX + 16];
		struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET,
				   .l_start = 0, .l_len = 4096};
		int fd;

		/* Not the parent's locks (flock follows the descriptor),
		 * and not alive without it. */
		if (dup2(ready[1], 3) != 3)
			_exit(1);
		close_range(4, ~0u, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		snprintf(p, sizeof(p), "%s/config", dir);
		fd = open(p, O_RDWR | O_CREAT, 0600);
		if (fd < 0 || fcntl(fd, F_SETLK, &fl) != 0)
			_exit(1);
		if (write(3, "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	return pid;
}

static void
stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void
test_dir(void **state)
{
	char *plain[] = {"x", "-l", "0", NULL};
	char *named[] = {"x", "--file-prefix", "sl1", "--", "--file-prefix",
			 "no", NULL};
	char *joined[] = {"x", "--file-prefix=sl2", NULL};
	char *mem[] = {"x", "--in-memory", NULL};
	char *noshconf[] = {"x", "--no-shconf", "--file-prefix=a", NULL};
	char buf[PATH_MAX], tiny[8];
	const char *suffix;

	(void)state;
	assert_int_equal(lb_rt_dir(3, plain, buf, sizeof(buf)), 0);
	assert_non_null(strstr(buf, "/dpdk/rte"));
	assert_int_equal(lb_rt_dir(6, named, buf, sizeof(buf)), 0);
	suffix = buf + strlen(buf) - strlen("/dpdk/sl1");
	assert_string_equal(suffix, "/dpdk/sl1");
	assert_int_equal(lb_rt_dir(2, joined, buf, sizeof(buf)), 0);
	suffix = buf + strlen(buf) - strlen("/dpdk/sl2");
	assert_string_equal(suffix, "/dpdk/sl2");
	assert_int_equal(lb_rt_dir(2, mem, buf, sizeof(buf)), -ENOENT);
	assert_int_equal(lb_rt_dir(3, noshconf, buf, sizeof(buf)), -ENOENT);
	assert_int_equal(lb_rt_dir(2, joined, tiny, sizeof(tiny)),
			 -ENAMETOOLONG);
}

/* The primary is whoever holds the config lock, alive; nobody after. */
static void
test_primary(void **state)
{
	pid_t pid;

	(void)state;
	assert_int_equal(lb_rt_primary(dir), 0);
	touch("config");
	assert_int_equal(lb_rt_primary(dir), 0);
	pid = fake_primary();
	assert_int_equal(lb_rt_primary(dir), pid);
	stop(pid);
	assert_int_equal(lb_rt_primary(dir), 0);
}

/* A secondary attaches only to a primary that said it is ready, and never
 * while a dataplane starts; a marker of a dead one counts for nothing. */
static void
test_attach_needs_ready_primary(void **state)
{
	pid_t pid, next;
	int start, fd;

	(void)state;
	assert_int_equal(lb_rt_attach_lock(dir), -EAGAIN);
	start = lb_rt_start_lock(dir, 0);
	assert_true(start >= 0);
	pid = fake_primary();
	assert_int_equal(lb_rt_attach_lock(dir), -EAGAIN); /* not ready */
	assert_int_equal(lb_rt_set_ready(dir, pid), 0);
	assert_int_equal(lb_rt_attach_lock(dir), -EAGAIN); /* starting */
	lb_rt_unlock(start);
	fd = lb_rt_attach_lock(dir);
	assert_true(fd >= 0);
	/* A dataplane waits for the attach, then gives up when told. */
	assert_int_equal(lb_rt_start_lock(dir, 50), -EWOULDBLOCK);
	lb_rt_unlock(fd);
	/* Killed: its marker stays but names a dead primary. */
	stop(pid);
	assert_int_equal(lb_rt_attach_lock(dir), -EAGAIN);
	next = fake_primary();
	assert_int_equal(lb_rt_attach_lock(dir), -EAGAIN);
	assert_int_equal(lb_rt_set_ready(dir, next), 0);
	fd = lb_rt_attach_lock(dir);
	assert_true(fd >= 0);
	lb_rt_unlock(fd);
	/* A clean stop takes its own marker only. */
	lb_rt_clear_ready(dir, pid);
	assert_true(exists(LB_RT_READY_FILE));
	lb_rt_clear_ready(dir, next);
	assert_false(exists(LB_RT_READY_FILE));
	assert_int_equal(lb_rt_attach_lock(dir), -EAGAIN);
	stop(next);
}

/* A dead runtime's shared files go; a live one's, and others, stay. */
static void
test_clear_stale(void **state)
{
	static const char *const stale[] = {
		"config", "fbarray_memzone", "fbarray_memseg-2048k-0-0",
		"mp_socket", "mp_socket_123_abc",
	};
	pid_t pid;

	(void)state;
	for (size_t i = 0; i < sizeof(stale) / sizeof(stale[0]); i++)
		touch(stale[i]);
	touch("hugepage_info");
	touch(LB_RT_LOCK_FILE);
	pid = fake_primary();
	assert_int_equal(lb_rt_clear_stale(dir), 0);
	for (size_t i = 0; i < sizeof(stale) / sizeof(stale[0]); i++)
		assert_true(exists(stale[i]));
	stop(pid);
	assert_int_equal(lb_rt_clear_stale(dir), 5);
	for (size_t i = 0; i < sizeof(stale) / sizeof(stale[0]); i++)
		assert_false(exists(stale[i]));
	assert_true(exists("hugepage_info"));
	assert_true(exists(LB_RT_LOCK_FILE));
}

/* The start lock makes the runtime directory, as the EAL would. */
static void
test_start_lock_makes_dir(void **state)
{
	char sub[PATH_MAX + 16];
	struct stat st;
	int fd;

	(void)state;
	snprintf(sub, sizeof(sub), "%s/dpdk/pfx", dir);
	fd = lb_rt_start_lock(sub, 0);
	assert_true(fd >= 0);
	assert_int_equal(stat(sub, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	/* Exclusive: a second dataplane of the prefix waits. */
	assert_int_equal(lb_rt_start_lock(sub, 20), -EWOULDBLOCK);
	lb_rt_unlock(fd);
	fd = lb_rt_start_lock(sub, 0);
	assert_true(fd >= 0);
	lb_rt_unlock(fd);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dir),
		cmocka_unit_test_setup_teardown(test_primary, setup, teardown),
		cmocka_unit_test_setup_teardown(test_attach_needs_ready_primary,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_clear_stale, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_start_lock_makes_dir,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
