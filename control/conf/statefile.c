/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The state file: atomic replace (temporary file, fsync, rename, fsync of
 * the directory) and whole-file read.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "statefile.h"

static int
fail(char *err, size_t errlen, int rc, const char *what, const char *path)
{
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "%s %s: %s", what, path, strerror(-rc));
	return rc;
}

int
lb_statefile_mkdirs(const char *dir)
{
	char buf[PATH_MAX];
	size_t n = strlen(dir);

	if (n == 0 || n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, dir, n + 1);
	for (char *p = buf + 1;; p++) {
		char c = *p;

		if (c != '/' && c != '\0')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) != 0 && errno != EEXIST)
			return -errno;
		*p = c;
		if (c == '\0')
			break;
	}
	return 0;
}

/* The directory holding @p path, in @p buf. */
static const char *
dir_of(const char *path, char *buf, size_t n)
{
	snprintf(buf, n, "%s", path);
	return dirname(buf);
}

static int
write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t k = write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static int
sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) != 0)
		rc = -errno;
	close(fd);
	return rc;
}

int
lb_statefile_write(const char *path, const char *text, size_t len, char *err,
		   size_t errlen)
{
	char tmp[PATH_MAX], dbuf[PATH_MAX];
	const char *dir;
	int fd, rc;

	if (path == NULL || path[0] == '\0' || (text == NULL && len > 0))
		return fail(err, errlen, -EINVAL, "cannot write", "state");
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return fail(err, errlen, -ENAMETOOLONG, "cannot write", path);
	dir = dir_of(path, dbuf, sizeof(dbuf));
	rc = lb_statefile_mkdirs(dir);
	if (rc != 0)
		return fail(err, errlen, rc, "cannot create directory", dir);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0)
		return fail(err, errlen, -errno, "cannot create", tmp);
	rc = write_all(fd, text, len);
	/* The data must be on disk before the name points at it, or a
	 * crash could leave an empty file under the real name. */
	if (rc == 0 && fsync(fd) != 0)
		rc = -errno;
	if (close(fd) != 0 && rc == 0)
		rc = -errno;
	if (rc != 0) {
		unlink(tmp);
		return fail(err, errlen, rc, "cannot write", tmp);
	}
	if (rename(tmp, path) != 0) {
		rc = -errno;
		unlink(tmp);
		return fail(err, errlen, rc, "cannot rename over", path);
	}
	rc = sync_dir(dir);
	if (rc != 0)
		return fail(err, errlen, rc, "cannot flush directory", dir);
	return 0;
}

int
lb_statefile_read(const char *path, char **text, size_t *len, char *err,
		  size_t errlen)
{
	struct stat st;
	size_t got = 0;
	char *buf;
	int fd, rc = 0;

	if (path == NULL || text == NULL)
		return fail(err, errlen, -EINVAL, "cannot read", "state");
	*text = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		return rc == -ENOENT
			       ? rc
			       : fail(err, errlen, rc, "cannot open", path);
	}
	if (fstat(fd, &st) != 0) {
		rc = -errno;
		close(fd);
		return fail(err, errlen, rc, "cannot stat", path);
	}
	if (!S_ISREG(st.st_mode) || st.st_size > (off_t)LB_STATEFILE_MAX) {
		close(fd);
		return fail(err, errlen, S_ISREG(st.st_mode) ? -EFBIG : -EINVAL,
			    "cannot read", path);
	}
	buf = malloc((size_t)st.st_size + 1);
	if (buf == NULL) {
		close(fd);
		return fail(err, errlen, -ENOMEM, "cannot read", path);
	}
	while (got < (size_t)st.st_size) {
		ssize_t k = read(fd, buf + got, (size_t)st.st_size - got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			rc = k < 0 ? -errno : -EIO;
			break;
		}
		got += (size_t)k;
	}
	close(fd);
	buf[got] = '\0';
	if (rc == 0 && strlen(buf) != got)
		rc = -EINVAL;
	if (rc != 0) {
		free(buf);
		return fail(err, errlen, rc, "cannot read", path);
	}
	*text = buf;
	if (len != NULL)
		*len = got;
	return 0;
}
