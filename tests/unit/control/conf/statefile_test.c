/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "statefile.h"

struct fx {
	char dir[64];
	char path[128];
};

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/lb-statefile-XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/sub/dir/state.conf", f->dir);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

static char *
read_back(const char *path, size_t *len)
{
	char err[128];
	char *t = NULL;

	assert_int_equal(lb_statefile_read(path, &t, len, err, sizeof(err)), 0);
	return t;
}

static void
test_write_read(void **state)
{
	struct fx *f = *state;
	const char *a = "addr add 10.0.0.1/24 port 0\n";
	const char *b = "service add tcp 10.0.0.100:80\n";
	char tmp[160], err[128];
	struct stat st;
	size_t len;
	char *t;

	/* No file yet: -ENOENT and no message, a first start is normal. */
	err[0] = '\0';
	t = (char *)1;
	assert_int_equal(lb_statefile_read(f->path, &t, &len, err, sizeof(err)),
			 -ENOENT);
	assert_null(t);
	assert_string_equal(err, "");
	/* Missing directories are made. */
	assert_int_equal(
		lb_statefile_write(f->path, a, strlen(a), err, sizeof(err)), 0);
	t = read_back(f->path, &len);
	assert_string_equal(t, a);
	assert_int_equal(len, strlen(a));
	free(t);
	assert_int_equal(stat(f->path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	/* Replaced whole, and no temporary left behind. */
	assert_int_equal(
		lb_statefile_write(f->path, b, strlen(b), err, sizeof(err)), 0);
	t = read_back(f->path, &len);
	assert_string_equal(t, b);
	free(t);
	snprintf(tmp, sizeof(tmp), "%s.tmp", f->path);
	assert_int_equal(access(tmp, F_OK), -1);
	/* Empty is a valid state. */
	assert_int_equal(lb_statefile_write(f->path, "", 0, err, sizeof(err)),
			 0);
	t = read_back(f->path, &len);
	assert_string_equal(t, "");
	assert_int_equal(len, 0);
	free(t);
}

/* A write that fails leaves the previous file as it was. */
static void
test_failed_write_keeps_old(void **state)
{
	struct fx *f = *state;
	const char *a = "snat add 10.0.0.2 port 0\n";
	char tmp[160], err[128];
	size_t len;
	char *t;

	assert_int_equal(
		lb_statefile_write(f->path, a, strlen(a), err, sizeof(err)), 0);
	/* The temporary name is taken by a directory: the write cannot
	 * happen. */
	snprintf(tmp, sizeof(tmp), "%s.tmp", f->path);
	assert_int_equal(mkdir(tmp, 0700), 0);
	err[0] = '\0';
	assert_true(lb_statefile_write(f->path, "x\n", 2, err, sizeof(err)) <
		    0);
	assert_non_null(strstr(err, tmp));
	t = read_back(f->path, &len);
	assert_string_equal(t, a);
	free(t);
	assert_int_equal(rmdir(tmp), 0);
	/* A leftover temporary file of a crashed write is overwritten. */
	{
		FILE *g = fopen(tmp, "w");

		assert_non_null(g);
		fputs("half a line", g);
		fclose(g);
	}
	assert_int_equal(
		lb_statefile_write(f->path, "y\n", 2, err, sizeof(err)), 0);
	t = read_back(f->path, &len);
	assert_string_equal(t, "y\n");
	free(t);
	assert_int_equal(access(tmp, F_OK), -1);
}

static void
test_read_refusals(void **state)
{
	struct fx *f = *state;
	char p[160], err[128];
	size_t len;
	char *t = NULL;
	FILE *g;
	int fd;

	/* A NUL byte: not a text of commands. */
	snprintf(p, sizeof(p), "%s/nul", f->dir);
	g = fopen(p, "w");
	assert_non_null(g);
	fwrite("a\0b\n", 1, 4, g);
	fclose(g);
	assert_int_equal(lb_statefile_read(p, &t, &len, err, sizeof(err)),
			 -EINVAL);
	assert_null(t);
	/* Too big. */
	snprintf(p, sizeof(p), "%s/big", f->dir);
	fd = open(p, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)LB_STATEFILE_MAX + 1), 0);
	close(fd);
	assert_int_equal(lb_statefile_read(p, &t, &len, err, sizeof(err)),
			 -EFBIG);
	/* A directory. */
	assert_int_equal(lb_statefile_read(f->dir, &t, &len, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(lb_statefile_read(NULL, &t, &len, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(lb_statefile_write(NULL, "", 0, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(lb_statefile_write("", "", 0, err, sizeof(err)),
			 -EINVAL);
	/* The directory cannot be made: a file is in the way. */
	snprintf(p, sizeof(p), "%s/big/state.conf", f->dir);
	assert_int_equal(lb_statefile_write(p, "x", 1, err, sizeof(err)),
			 -ENOTDIR);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_write_read, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_failed_write_keeps_old,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_refusals, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
