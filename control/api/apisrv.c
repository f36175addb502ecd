/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The API socket: non-blocking connections multiplexed by the caller's
 * poll loop, requests framed by lines (lb_api_rbuf) and answered by
 * lb_api_handle().
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "apisrv_priv.h"
#include "statefile.h"

#define READ_CHUNK 65536u

struct conn {
	int fd;
	bool eof;     /* the client will send nothing more */
	bool closing; /* close once the answers are written */
	struct lb_api_rbuf in;
	char *out;
	size_t out_len;
	size_t out_off;
};

struct lb_apisrv {
	int lfd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	const struct lb_api_ops *ops;
	void *ctx;
	struct lb_apisrv_stats st;
	struct conn c[LB_APISRV_CONNS];
};

static int
fail(char *err, size_t errlen, int rc, const char *fmt, const char *path)
{
	if (err != NULL && errlen > 0) {
		int n = snprintf(err, errlen, fmt, path);

		if (n >= 0 && (size_t)n < errlen)
			snprintf(err + n, errlen - (size_t)n, ": %s",
				 strerror(-rc));
	}
	errno = -rc;
	return rc;
}

/* Whether someone answers on the socket at @p sa. */
static bool
in_use(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool used;

	if (fd < 0)
		return false;
	used = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0;
	close(fd);
	return used;
}

struct lb_apisrv *
lb_apisrv_create(const char *path, mode_t mode, const struct lb_api_ops *ops,
		 void *ctx, char *err, size_t errlen)
{
	return lb_apisrv_create_gid(path, mode, (gid_t)-1, ops, ctx, err,
				    errlen);
}

struct lb_apisrv *
lb_apisrv_create_gid(const char *path, mode_t mode, gid_t gid,
		     const struct lb_api_ops *ops, void *ctx, char *err,
		     size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char dbuf[PATH_MAX];
	struct lb_apisrv *s;
	mode_t old;
	int rc;

	if (path == NULL || ops == NULL || ops->exec == NULL ||
	    ops->apply == NULL) {
		fail(err, errlen, -EINVAL, "%s", "API socket");
		return NULL;
	}
	if (strlen(path) >= sizeof(sa.sun_path)) {
		fail(err, errlen, -ENAMETOOLONG, "socket path %s", path);
		return NULL;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	snprintf(dbuf, sizeof(dbuf), "%s", path);
	rc = lb_statefile_mkdirs(dirname(dbuf));
	if (rc != 0) {
		fail(err, errlen, rc, "cannot create the directory of %s",
		     path);
		return NULL;
	}
	if (in_use(&sa)) {
		fail(err, errlen, -EADDRINUSE,
		     "%s: another lb-control answers there", path);
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		fail(err, errlen, -ENOMEM, "%s", path);
		return NULL;
	}
	for (unsigned int i = 0; i < LB_APISRV_CONNS; i++)
		s->c[i].fd = -1;
	s->ops = ops;
	s->ctx = ctx;
	snprintf(s->path, sizeof(s->path), "%s", path);
	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->lfd < 0) {
		rc = -errno;
		goto fail;
	}
	/* Nobody answered: what is there is a dead lb-control's socket. */
	unlink(path);
	/* The socket is born owner-only and gets its group, then its
	 * mode, before it listens: no window in which others connect. */
	old = umask(0177);
	rc = bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ? -errno : 0;
	umask(old);
	if (rc == 0 && gid != (gid_t)-1 && chown(path, (uid_t)-1, gid) != 0)
		rc = -errno;
	if (rc == 0 && chmod(path, mode) != 0)
		rc = -errno;
	if (rc == 0 && listen(s->lfd, 64) != 0)
		rc = -errno;
	if (rc != 0)
		goto fail;
	return s;
fail:
	fail(err, errlen, rc, "cannot listen on %s", path);
	if (s->lfd >= 0) {
		close(s->lfd);
		unlink(path);
	}
	free(s);
	errno = -rc;
	return NULL;
}

static void
conn_close(struct conn *c)
{
	if (c->fd < 0)
		return;
	close(c->fd);
	lb_api_rbuf_free(&c->in);
	free(c->out);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

void
lb_apisrv_free(struct lb_apisrv *s)
{
	if (s == NULL)
		return;
	for (unsigned int i = 0; i < LB_APISRV_CONNS; i++)
		conn_close(&s->c[i]);
	if (s->lfd >= 0) {
		close(s->lfd);
		unlink(s->path);
	}
	free(s);
}

static size_t
out_pending(const struct conn *c)
{
	return c->out_len - c->out_off;
}

/* Appends an answer; on allocation failure the connection is dropped,
 * since its answers would come out of order. */
static void
queue(struct conn *c, char *resp, size_t len)
{
	char *t;

	if (resp == NULL) {
		c->closing = true;
		c->eof = true;
		c->out_off = c->out_len;
		return;
	}
	if (c->out_off > 0) {
		memmove(c->out, c->out + c->out_off, out_pending(c));
		c->out_len -= c->out_off;
		c->out_off = 0;
	}
	t = realloc(c->out, c->out_len + len);
	if (t == NULL) {
		free(resp);
		queue(c, NULL, 0);
		return;
	}
	memcpy(t + c->out_len, resp, len);
	c->out = t;
	c->out_len += len;
	free(resp);
}

static void
answer(struct lb_apisrv *s, struct conn *c, const char *line, size_t len)
{
	size_t rlen = 0;
	int code = 0;
	char *resp = lb_api_handle(s->ops, s->ctx, line, len, &rlen, &code);

	s->st.requests++;
	if (code != 0)
		s->st.errors++;
	queue(c, resp, rlen);
}

static void
too_long(struct lb_apisrv *s, struct conn *c)
{
	char msg[96], *resp;
	size_t rlen = 0;

	snprintf(msg, sizeof(msg), "request line longer than %u bytes",
		 LB_API_LINE_MAX);
	s->st.requests++;
	s->st.errors++;
	resp = lb_api_error(-E2BIG, msg, &rlen);
	queue(c, resp, rlen);
}

/* Answers the complete lines held, while the answers are not piling up. */
static void
pump(struct lb_apisrv *s, struct conn *c)
{
	char *line;
	size_t len;
	int rc;

	while (!c->closing && out_pending(c) < LB_APISRV_OUT_HIGH) {
		rc = lb_api_rbuf_next(&c->in, &line, &len);
		if (rc == 0)
			break;
		if (rc == 1)
			answer(s, c, line, len);
		else
			too_long(s, c);
	}
	if (c->closing || !c->eof || out_pending(c) >= LB_APISRV_OUT_HIGH)
		return;
	/* The client closed its side: a last request without its newline
	 * is still a request. */
	if (lb_api_rbuf_partial(&c->in) &&
	    lb_api_rbuf_feed(&c->in, "\n", 1) == 0) {
		rc = lb_api_rbuf_next(&c->in, &line, &len);
		if (rc == 1)
			answer(s, c, line, len);
		else if (rc < 0)
			too_long(s, c);
	}
	c->closing = true;
}

static void
conn_read(struct lb_apisrv *s, struct conn *c)
{
	char buf[READ_CHUNK];
	ssize_t n;

	n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return;
		conn_close(c);
		return;
	}
	if (n == 0) {
		c->eof = true;
		pump(s, c);
		return;
	}
	if (lb_api_rbuf_feed(&c->in, buf, (size_t)n) != 0) {
		/* Out of memory: answers would come out of order. */
		conn_close(c);
		return;
	}
	pump(s, c);
}

static void
conn_write(struct lb_apisrv *s, struct conn *c)
{
	while (out_pending(c) > 0) {
		ssize_t n = send(c->fd, c->out + c->out_off, out_pending(c),
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			conn_close(c);
			return;
		}
		c->out_off += (size_t)n;
	}
	/* Room again: answer what was held back. */
	pump(s, c);
	if (out_pending(c) == 0 && c->closing)
		conn_close(c);
}

static void
accept_all(struct lb_apisrv *s)
{
	for (;;) {
		int fd = accept4(s->lfd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);
		unsigned int i;

		if (fd < 0)
			return;
		for (i = 0; i < LB_APISRV_CONNS; i++)
			if (s->c[i].fd < 0)
				break;
		if (i == LB_APISRV_CONNS) {
			size_t len = 0;
			char *r = lb_api_error(-EBUSY,
					       "too many connections to "
					       "lb-control",
					       &len);

			if (r != NULL &&
			    send(fd, r, len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
				len = 0;
			free(r);
			close(fd);
			continue;
		}
		s->c[i].fd = fd;
		lb_api_rbuf_init(&s->c[i].in);
		s->st.conns++;
	}
}

unsigned int
lb_apisrv_pollfds(struct lb_apisrv *s, struct pollfd *pfd, unsigned int max)
{
	unsigned int n = 0;

	if (s == NULL || max == 0)
		return 0;
	pfd[n++] = (struct pollfd){.fd = s->lfd, .events = POLLIN};
	for (unsigned int i = 0; i < LB_APISRV_CONNS && n < max; i++) {
		struct conn *c = &s->c[i];
		short ev = 0;

		if (c->fd < 0)
			continue;
		if (!c->eof && !c->closing &&
		    out_pending(c) < LB_APISRV_OUT_HIGH)
			ev |= POLLIN;
		if (out_pending(c) > 0)
			ev |= POLLOUT;
		pfd[n++] = (struct pollfd){.fd = c->fd, .events = ev};
	}
	return n;
}

void
lb_apisrv_process(struct lb_apisrv *s, const struct pollfd *pfd, unsigned int n)
{
	if (s == NULL)
		return;
	for (unsigned int k = 0; k < n; k++) {
		if (pfd[k].revents == 0)
			continue;
		if (pfd[k].fd == s->lfd) {
			accept_all(s);
			continue;
		}
		for (unsigned int i = 0; i < LB_APISRV_CONNS; i++) {
			struct conn *c = &s->c[i];

			if (c->fd != pfd[k].fd)
				continue;
			if (pfd[k].revents & POLLNVAL) {
				conn_close(c);
				break;
			}
			if (pfd[k].revents & (POLLIN | POLLHUP | POLLERR))
				conn_read(s, c);
			if (c->fd >= 0 && (out_pending(c) > 0 || c->closing))
				conn_write(s, c);
			break;
		}
	}
}

const struct lb_apisrv_stats *
lb_apisrv_stats(const struct lb_apisrv *s)
{
	return s != NULL ? &s->st : NULL;
}
