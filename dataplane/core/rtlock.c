/* SPDX-License-Identifier: BSD-3-Clause */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lb/rtlock.h"

int
lb_rt_dir(int argc, char **argv, char *buf, size_t n)
{
	const char *prefix = "rte", *base = "/var/run";
	int len;

	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--in-memory") == 0 ||
		    strcmp(argv[i], "--no-shconf") == 0)
			return -ENOENT;
		if (strcmp(argv[i], "--file-prefix") == 0 && i + 1 < argc)
			prefix = argv[i + 1];
		else if (strncmp(argv[i], "--file-prefix=", 14) == 0)
			prefix = argv[i] + 14;
	}
	/* The EAL's rule (eal_create_runtime_dir()). */
	if (getuid() != 0) {
		base = getenv("XDG_RUNTIME_DIR");
		if (base == NULL)
			base = "/tmp";
	}
	len = snprintf(buf, n, "%s/dpdk/%s", base, prefix);
	return len < 0 || (size_t)len >= n ? -ENAMETOOLONG : 0;
}

static int
path_in(const char *dir, const char *name, char *buf, size_t n)
{
	int len = snprintf(buf, n, "%s/%s", dir, name);

	return len < 0 || (size_t)len >= n ? -ENAMETOOLONG : 0;
}

pid_t
lb_rt_primary(const char *dir)
{
	char path[4096];
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	pid_t pid = 0;
	int fd;

	if (path_in(dir, "config", path, sizeof(path)) != 0)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	/* The primary holds a write lock on the head of its config for its
	 * whole life (rte_eal_config_create()); a POSIX lock names its
	 * owner. */
	if (fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK)
		pid = fl.l_pid;
	close(fd);
	return pid;
}

static int
lock_open(const char *dir)
{
	char path[4096];
	int fd, rc;

	rc = path_in(dir, LB_RT_LOCK_FILE, path, sizeof(path));
	if (rc != 0)
		return rc;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	return fd < 0 ? -errno : fd;
}

/* mkdir -p of the runtime directory, as the EAL would make it. */
static int
mkdirs(const char *dir)
{
	char p[4096];
	size_t len = strlen(dir);

	if (len == 0 || len >= sizeof(p))
		return -ENAMETOOLONG;
	memcpy(p, dir, len + 1);
	for (char *s = p + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0700) != 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (mkdir(p, 0700) != 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int
lb_rt_start_lock(const char *dir, unsigned int timeout_ms)
{
	struct timespec ts = {.tv_nsec = 10 * 1000000};
	unsigned int waited = 0;
	int fd, rc;

	rc = mkdirs(dir);
	if (rc != 0)
		return rc;
	fd = lock_open(dir);
	if (fd < 0)
		return fd;
	/* Polled, not blocking: an attaching secondary holds its shared
	 * lock for a second or so, and a stuck one must not keep the
	 * dataplane from starting. */
	while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		rc = -errno;
		if (rc != -EWOULDBLOCK || waited >= timeout_ms) {
			close(fd);
			return rc;
		}
		nanosleep(&ts, NULL);
		waited += 10;
	}
	return fd;
}

/* The files of a runtime that its primary's successor must not share:
 * its config, memzone lists and multi-process sockets. */
static bool
stale_name(const char *name)
{
	return strcmp(name, "config") == 0 ||
	       strncmp(name, "fbarray_", 8) == 0 ||
	       strncmp(name, "mp_socket", 9) == 0;
}

int
lb_rt_clear_stale(const char *dir)
{
	char path[4096];
	struct dirent *e;
	int removed = 0;
	DIR *d;

	if (lb_rt_primary(dir) != 0)
		return 0;
	d = opendir(dir);
	if (d == NULL)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d)) != NULL) {
		if (!stale_name(e->d_name) ||
		    path_in(dir, e->d_name, path, sizeof(path)) != 0)
			continue;
		/* A secondary still mapping the dead runtime keeps its
		 * inodes, locked and as they were; the new primary gets
		 * files of its own instead of failing to lock them, or
		 * rewriting a configuration that secondary still reads,
		 * or waiting for its answers to memory requests. */
		if (unlink(path) == 0)
			removed++;
	}
	closedir(d);
	return removed;
}

int
lb_rt_set_ready(const char *dir, pid_t pid)
{
	char path[4096], tmp[4096 + 8];
	FILE *f;
	int rc;

	rc = path_in(dir, LB_RT_READY_FILE, path, sizeof(path));
	if (rc != 0)
		return rc;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "we");
	if (f == NULL)
		return -errno;
	fprintf(f, "%ld\n", (long)pid);
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		rc = -errno;
		unlink(tmp);
		return rc;
	}
	return 0;
}

/* The pid in the ready marker, 0 if there is none. */
static pid_t
ready_pid(const char *dir)
{
	char path[4096];
	long pid = 0;
	FILE *f;

	if (path_in(dir, LB_RT_READY_FILE, path, sizeof(path)) != 0)
		return 0;
	f = fopen(path, "re");
	if (f == NULL)
		return 0;
	if (fscanf(f, "%ld", &pid) != 1 || pid < 0)
		pid = 0;
	fclose(f);
	return (pid_t)pid;
}

void
lb_rt_clear_ready(const char *dir, pid_t pid)
{
	char path[4096];

	if (pid > 0 && ready_pid(dir) == pid &&
	    path_in(dir, LB_RT_READY_FILE, path, sizeof(path)) == 0)
		unlink(path);
}

int
lb_rt_attach_lock(const char *dir)
{
	pid_t pid;
	int fd;

	fd = lock_open(dir);
	if (fd < 0)
		return fd == -ENOENT ? -EAGAIN : fd;
	if (flock(fd, LOCK_SH | LOCK_NB) != 0) {
		int rc = -errno;

		close(fd);
		return rc == -EWOULDBLOCK ? -EAGAIN : rc;
	}
	/* Under the lock no dataplane starts: the primary seen now stays
	 * the one whose marker is read. */
	pid = lb_rt_primary(dir);
	if (pid == 0 || ready_pid(dir) != pid) {
		close(fd);
		return -EAGAIN;
	}
	return fd;
}

void
lb_rt_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}
