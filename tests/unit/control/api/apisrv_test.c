/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "apisrv_priv.h"

struct fx {
	char dir[64];
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct lb_apisrv *s;
	int calls;
};

static int
echo_exec(void *ctx, int argc, char **argv, struct lb_cmd_out *out,
	  json_t **data)
{
	struct fx *f = ctx;

	(void)data;
	f->calls++;
	if (argc > 0 && strcmp(argv[0], "big") == 0) {
		/* An answer far larger than a socket buffer. */
		for (int i = 0; i < 200000; i++)
			lb_cmd_printf(out, "line %d of a long answer\n", i);
		return 0;
	}
	for (int i = 0; i < argc; i++)
		lb_cmd_printf(out, "%s%s", i > 0 ? " " : "", argv[i]);
	return 0;
}

static int
echo_apply(void *ctx, const char *text, size_t len, const char *name,
	   struct lb_cmd_out *out)
{
	(void)ctx;
	(void)text;
	return lb_cmd_printf(out, "%s %zu", name, len);
}

static const struct lb_api_ops ops = {echo_exec, echo_apply};

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char err[256];

	if (f == NULL)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/lb-apisrv-XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/run/ctl.sock", f->dir);
	f->s = lb_apisrv_create(f->path, 0600, &ops, f, err, sizeof(err));
	if (f->s == NULL) {
		print_error("%s\n", err);
		return -1;
	}
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	lb_apisrv_free(f->s);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

/* Serves for up to @p ms, or until @p fd (if >= 0) is readable. */
static void
serve(struct fx *f, int ms, int fd)
{
	struct pollfd p[LB_APISRV_CONNS + 2];

	for (int i = 0; i < ms; i++) {
		unsigned int n =
			lb_apisrv_pollfds(f->s, p, LB_APISRV_CONNS + 1);
		struct pollfd c = {.fd = fd, .events = POLLIN};

		if (poll(p, n, 1) > 0)
			lb_apisrv_process(f->s, p, n);
		if (fd >= 0 && poll(&c, 1, 0) == 1)
			return;
	}
}

/* Bytes read past the last line returned, per descriptor. */
static char *pending[1024];

static int
client(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fd >= 0 && fd < 1024);
	free(pending[fd]);
	pending[fd] = NULL;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

static void
send_all(struct fx *f, int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t k = send(fd, s, n, MSG_DONTWAIT);

		if (k < 0 && errno == EAGAIN) {
			serve(f, 1, -1);
			continue;
		}
		assert_true(k > 0);
		s += k;
		n -= (size_t)k;
	}
}

/* Reads one line (the server's answer), serving while waiting; "" when
 * the server closed first. */
static char *
read_line(struct fx *f, int fd)
{
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap), *nl;

	assert_non_null(buf);
	assert_true(fd < 1024);
	buf[0] = '\0';
	if (pending[fd] != NULL) {
		len = strlen(pending[fd]);
		while (len + 1 >= cap)
			cap *= 2;
		buf = realloc(buf, cap);
		memcpy(buf, pending[fd], len + 1);
		free(pending[fd]);
		pending[fd] = NULL;
	}
	for (int tries = 0; tries < 20000; tries++) {
		ssize_t k;

		nl = memchr(buf, '\n', len);
		if (nl != NULL) {
			if (nl[1] != '\0')
				pending[fd] = strdup(nl + 1);
			nl[1] = '\0';
			return buf;
		}
		serve(f, 5, fd);
		k = recv(fd, buf + len, cap - len - 1, MSG_DONTWAIT);
		if (k == 0)
			break;
		if (k < 0) {
			assert_int_equal(errno, EAGAIN);
			continue;
		}
		len += (size_t)k;
		buf[len] = '\0';
		if (len + 1 == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
	}
	buf[len] = '\0';
	return buf;
}

/* Whether the server closed @p fd (after serving a while). */
static bool
closed_by_server(struct fx *f, int fd)
{
	char c;

	for (int i = 0; i < 200; i++) {
		ssize_t k;

		serve(f, 5, fd);
		k = recv(fd, &c, 1, MSG_DONTWAIT);
		if (k == 0)
			return true;
		if (k > 0)
			return false;
	}
	return false;
}

static void
test_socket_file(void **state)
{
	struct fx *f = *state;
	struct stat st;
	char err[256];
	struct lb_apisrv *s2;

	assert_int_equal(stat(f->path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
	/* The socket answers: a second server is refused. */
	s2 = lb_apisrv_create(f->path, 0600, &ops, f, err, sizeof(err));
	assert_null(s2);
	assert_int_equal(errno, EADDRINUSE);
	assert_non_null(strstr(err, "another lb-control"));
	/* Gone with its server. */
	lb_apisrv_free(f->s);
	assert_int_equal(access(f->path, F_OK), -1);
	/* A dead server's socket file is replaced; the mode is ours. */
	{
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);

		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->path);
		assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)),
				 0);
		close(fd);
	}
	f->s = lb_apisrv_create(f->path, 0660, &ops, f, err, sizeof(err));
	assert_non_null(f->s);
	assert_int_equal(stat(f->path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0660);
	assert_null(lb_apisrv_create(NULL, 0600, &ops, f, err, sizeof(err)));
}

/* connect(2) to @p path as uid @p uid, gid @p gid and no supplementary
 * groups, in a child: 0 or the errno. */
static int
connect_as(const char *path, uid_t uid, gid_t gid)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		int fd;

		if (setgroups(0, NULL) != 0 || setgid(gid) != 0 ||
		    setuid(uid) != 0)
			_exit(255);
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
		_exit(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0
			      ? 0
			      : errno);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* Owner-only by default; --socket-group opens it to one group and to
 * nobody else. */
static void
test_group_access(void **state)
{
	struct fx *f = *state;
	struct stat st;
	char err[256];

	if (geteuid() != 0) {
		skip();
		return;
	}
	assert_int_equal(chmod(f->dir, 0755), 0);
	assert_int_equal(connect_as(f->path, 4343, 4242), EACCES);
	lb_apisrv_free(f->s);
	f->s = lb_apisrv_create_gid(f->path, 0660, 4242, &ops, f, err,
				    sizeof(err));
	assert_non_null(f->s);
	assert_int_equal(stat(f->path, &st), 0);
	assert_int_equal(st.st_gid, 4242);
	assert_int_equal(st.st_mode & 0777, 0660);
	assert_int_equal(connect_as(f->path, 4343, 4242), 0);
	assert_int_equal(connect_as(f->path, 4343, 4343), EACCES);
}

static void
test_requests(void **state)
{
	struct fx *f = *state;
	const char *two = "{\"v\":1,\"argv\":[\"a\"]}\n"
			  "{\"v\":1,\"apply\":\"x\\n\",\"name\":\"f\"}\n";
	const char *split = "{\"v\":1,\"argv\":[\"b\",\"c\"]}\n";
	int fd = client(f->path);
	char *r;

	/* Two requests in one write: two answers, in order. */
	send_all(f, fd, two, strlen(two));
	r = read_line(f, fd);
	assert_string_equal(r, "{\"v\":1,\"ok\":true,\"text\":\"a\",\"data\":"
			       "null}\n");
	free(r);
	r = read_line(f, fd);
	assert_string_equal(r, "{\"v\":1,\"ok\":true,\"text\":\"f 2\","
			       "\"data\":null}\n");
	free(r);
	/* One byte at a time. */
	for (size_t i = 0; i < strlen(split); i++) {
		send_all(f, fd, split + i, 1);
		serve(f, 1, -1);
	}
	r = read_line(f, fd);
	assert_string_equal(r, "{\"v\":1,\"ok\":true,\"text\":\"b c\","
			       "\"data\":null}\n");
	free(r);
	/* Garbage gets an answer and the connection stays. */
	send_all(f, fd, "nonsense\n", 9);
	r = read_line(f, fd);
	assert_non_null(strstr(r, "\"ok\":false,\"code\":-22,\"error\":"
				  "\"malformed JSON"));
	free(r);
	send_all(f, fd, split, strlen(split));
	r = read_line(f, fd);
	assert_non_null(strstr(r, "\"text\":\"b c\""));
	free(r);
	assert_int_equal(lb_apisrv_stats(f->s)->requests, 5);
	assert_int_equal(lb_apisrv_stats(f->s)->errors, 1);
	assert_int_equal(lb_apisrv_stats(f->s)->conns, 1);
	close(fd);
}

/* A client that closes its side after a request without a newline
 * still gets its answer, then the end of the stream. */
static void
test_half_close(void **state)
{
	struct fx *f = *state;
	const char *req = "{\"v\":1,\"argv\":[\"last\"]}";
	int fd = client(f->path);
	char *r;

	send_all(f, fd, req, strlen(req));
	shutdown(fd, SHUT_WR);
	r = read_line(f, fd);
	assert_non_null(strstr(r, "\"text\":\"last\""));
	free(r);
	assert_true(closed_by_server(f, fd));
	close(fd);
}

static void
test_too_long(void **state)
{
	struct fx *f = *state;
	size_t n = LB_API_LINE_MAX + 16;
	char *big = malloc(n);
	int fd = client(f->path);
	char *r;

	assert_non_null(big);
	memset(big, 'x', n);
	send_all(f, fd, big, n);
	serve(f, 20, -1);
	assert_int_equal(f->calls, 0);
	/* The line ends: it is refused, and the next one is served. */
	send_all(f, fd, "\n{\"v\":1,\"argv\":[\"y\"]}\n", 22);
	r = read_line(f, fd);
	assert_string_equal(r, "{\"v\":1,\"ok\":false,\"code\":-7,\"error\":"
			       "\"request line longer than 1048576 bytes\"}"
			       "\n");
	free(r);
	r = read_line(f, fd);
	assert_non_null(strstr(r, "\"text\":\"y\""));
	free(r);
	assert_int_equal(f->calls, 1);
	/* A client that ends on an endless line gets the error too. */
	send_all(f, fd, big, n);
	shutdown(fd, SHUT_WR);
	r = read_line(f, fd);
	assert_non_null(strstr(r, "\"code\":-7"));
	free(r);
	assert_true(closed_by_server(f, fd));
	close(fd);
	free(big);
}

/* A large answer to a client that reads slowly is written whole, and
 * the server keeps serving others meanwhile. */
static void
test_big_answer(void **state)
{
	struct fx *f = *state;
	const char *big = "{\"v\":1,\"argv\":[\"big\"]}\n";
	const char *small = "{\"v\":1,\"argv\":[\"small\"]}\n";
	int a = client(f->path), b = client(f->path);
	char *r;

	send_all(f, a, big, strlen(big));
	serve(f, 20, -1);
	send_all(f, b, small, strlen(small));
	r = read_line(f, b);
	assert_non_null(strstr(r, "\"text\":\"small\""));
	free(r);
	r = read_line(f, a);
	assert_true(strlen(r) > 5000000);
	assert_non_null(strstr(r, "line 199999 of a long answer\\n\""));
	assert_int_equal(r[strlen(r) - 1], '\n');
	free(r);
	close(a);
	close(b);
}

static void
test_too_many(void **state)
{
	struct fx *f = *state;
	int fds[LB_APISRV_CONNS + 1];
	char *r;

	for (unsigned int i = 0; i < LB_APISRV_CONNS; i++) {
		fds[i] = client(f->path);
		serve(f, 2, -1);
	}
	fds[LB_APISRV_CONNS] = client(f->path);
	r = read_line(f, fds[LB_APISRV_CONNS]);
	assert_non_null(strstr(r, "too many connections"));
	free(r);
	/* One leaves: room again. */
	close(fds[0]);
	serve(f, 20, -1);
	fds[0] = client(f->path);
	send_all(f, fds[0], "{\"v\":1,\"argv\":[\"x\"]}\n", 21);
	r = read_line(f, fds[0]);
	assert_non_null(strstr(r, "\"ok\":true"));
	free(r);
	for (unsigned int i = 0; i <= LB_APISRV_CONNS; i++)
		close(fds[i]);
	serve(f, 20, -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_socket_file, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_group_access, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_requests, setup, teardown),
		cmocka_unit_test_setup_teardown(test_half_close, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_too_long, setup, teardown),
		cmocka_unit_test_setup_teardown(test_big_answer, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_too_many, setup, teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
