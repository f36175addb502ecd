/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "privs.h"

static void
test_parse_format(void **state)
{
	char err[128], buf[256];
	uint64_t m;

	(void)state;
	assert_int_equal(lb_privs_parse("net_admin,sys_admin", &m, err,
					sizeof(err)),
			 0);
	assert_true(m == (LB_PRIVS_BIT(CAP_NET_ADMIN) |
			  LB_PRIVS_BIT(CAP_SYS_ADMIN)));
	lb_privs_format(m, buf, sizeof(buf));
	assert_string_equal(buf, "net_admin,sys_admin");
	assert_int_equal(lb_privs_parse("none", &m, err, sizeof(err)), 0);
	assert_true(m == 0);
	lb_privs_format(m, buf, sizeof(buf));
	assert_string_equal(buf, "none");
	assert_int_equal(lb_privs_parse("default", &m, err, sizeof(err)), 0);
	assert_true(m == lb_privs_keep_default());
	/* What is dropped by default: module loading, raw I/O, reading
	 * anybody's files. */
	assert_false(m & LB_PRIVS_BIT(CAP_SYS_MODULE));
	assert_false(m & LB_PRIVS_BIT(CAP_SYS_RAWIO));
	assert_false(m & LB_PRIVS_BIT(CAP_DAC_OVERRIDE));
	assert_false(m & LB_PRIVS_BIT(CAP_SETPCAP));

	m = 7;
	assert_int_equal(lb_privs_parse("net_admin,bogus", &m, err,
					sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "unknown capability 'bogus'");
	assert_true(m == 7);
	assert_int_equal(lb_privs_parse("net_admin,", &m, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(lb_privs_parse("", &m, err, sizeof(err)), 0);
	assert_true(m == 0);
	assert_int_equal(lb_privs_parse("Net_Admin", &m, err, sizeof(err)),
			 -EINVAL);
}

static void
test_group(void **state)
{
	char err[128];
	gid_t g = 1;

	(void)state;
	assert_int_equal(lb_privs_group("root", &g, err, sizeof(err)), 0);
	assert_int_equal(g, 0);
	assert_int_equal(lb_privs_group("4242", &g, err, sizeof(err)), 0);
	assert_int_equal(g, 4242);
	assert_int_equal(lb_privs_group("no-such-group-x", &g, err,
					sizeof(err)),
			 -ENOENT);
	assert_string_equal(err, "no group 'no-such-group-x'");
	assert_int_equal(lb_privs_group("", &g, err, sizeof(err)), -EINVAL);
	assert_int_equal(lb_privs_group("4294967295", &g, err, sizeof(err)),
			 -EINVAL);
}

/* CapPrm of a program executed after the drop, read from its own
 * /proc/self/status: what a command lb-control runs would hold. */
static uint64_t
child_cap_prm(void)
{
	int p[2];
	pid_t pid;
	char buf[8192];
	size_t got = 0;
	ssize_t n;
	char *l;

	if (pipe(p) != 0)
		return UINT64_MAX;
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		execl("/bin/cat", "cat", "/proc/self/status", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	while (got < sizeof(buf) - 1 &&
	       (n = read(p[0], buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	close(p[0]);
	waitpid(pid, NULL, 0);
	l = strstr(buf, "CapPrm:");
	return l != NULL ? strtoull(l + 7, NULL, 16) : UINT64_MAX;
}

/* In a child process, since the drop cannot be undone. */
static int
drop_and_check(void)
{
	const uint64_t keep = LB_PRIVS_BIT(CAP_NET_ADMIN) |
			      LB_PRIVS_BIT(CAP_KILL);
	struct lb_privs_report r;
	char err[128];
	uint64_t before = lb_privs_current('p');
	int fd;

	if (lb_privs_drop(keep, true, &r, err, sizeof(err)) != 0)
		return 1;
	if (r.before != before || r.after != (before & keep) || !r.nnp ||
	    r.bset_denied || r.bset_dropped == 0)
		return 2;
	if (lb_privs_current('e') != (before & keep) ||
	    (lb_privs_current('b') & ~keep) != 0)
		return 3;
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		return 4;
	/* A root process executing a program gets its bounding set:
	 * nothing beyond what was kept. */
	if (child_cap_prm() != (before & keep))
		return 5;
	/* CAP_CHOWN is gone: giving a file away is refused. */
	fd = open("/tmp", O_TMPFILE | O_RDWR, 0600);
	if (fd >= 0 && fchown(fd, 12345, 12345) == 0)
		return 6;
	if (fd >= 0)
		close(fd);
	/* Dropping again, to fewer, still works (lb-control executing
	 * itself again does it at every start). */
	if (lb_privs_drop(LB_PRIVS_BIT(CAP_KILL), true, &r, err,
			  sizeof(err)) != 0 ||
	    lb_privs_current('p') != (before & LB_PRIVS_BIT(CAP_KILL)))
		return 7;
	return 0;
}

static void
test_drop(void **state)
{
	int st;
	pid_t pid;

	(void)state;
	if (geteuid() != 0 ||
	    !(lb_privs_current('e') & LB_PRIVS_BIT(CAP_SETPCAP))) {
		skip();
		return;
	}
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(drop_and_check());
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	/* The parent kept everything. */
	assert_true(lb_privs_current('e') & LB_PRIVS_BIT(CAP_SETPCAP));
}

/* Without CAP_SETPCAP (an unprivileged lb-control) the bounding set is
 * left alone and reported so; the rest still happens. */
static void
test_drop_unprivileged(void **state)
{
	int st;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct lb_privs_report r;
		char err[128];

		/* First give up CAP_SETPCAP alone (no-op for non-root). */
		if (lb_privs_drop(~LB_PRIVS_BIT(CAP_SETPCAP), false, NULL, err,
				  sizeof(err)) != 0)
			_exit(1);
		if (lb_privs_drop(0, true, &r, err, sizeof(err)) != 0)
			_exit(2);
		if (r.after != 0 || !r.nnp ||
		    (r.before != 0 && !r.bset_denied))
			_exit(3);
		_exit(lb_privs_current('e') == 0 ? 0 : 4);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_format),
		cmocka_unit_test(test_group),
		cmocka_unit_test(test_drop),
		cmocka_unit_test(test_drop_unprivileged),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
