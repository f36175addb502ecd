/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "httpd_priv.h"

static int
body(void *ctx, struct lb_cmd_out *out)
{
	int *fail = ctx;

	if (*fail)
		return -ENOMEM;
	return lb_cmd_printf(out, "# HELP lb_x X.\n# TYPE lb_x gauge\n"
				  "lb_x 1\n");
}

/* Sends @p req to the server and returns the whole response. */
static char *
http(struct lb_httpd *h, const char *req)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_non_null(buf);
	sa.sin_port = htons(lb_httpd_port(h));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(send(fd, req, strlen(req), 0), (ssize_t)strlen(req));
	for (int i = 0; i < 2000; i++) {
		struct pollfd p[2] = {
			{.fd = lb_httpd_fd(h), .events = POLLIN},
			{.fd = fd, .events = POLLIN},
		};
		ssize_t k;

		poll(p, 2, 5);
		lb_httpd_run(h);
		if (!(p[1].revents & POLLIN))
			continue;
		k = recv(fd, buf + len, cap - len - 1, 0);
		if (k <= 0)
			break;
		len += (size_t)k;
		if (len + 1 == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
	}
	buf[len] = '\0';
	close(fd);
	return buf;
}

static void
test_metrics(void **state)
{
	char err[256];
	int fail = 0;
	struct lb_httpd *h;
	char *r;

	(void)state;
	h = lb_httpd_start("127.0.0.1:0", body, &fail, err, sizeof(err));
	assert_non_null(h);
	assert_true(lb_httpd_port(h) > 0);
	assert_true(lb_httpd_fd(h) >= 0);
	r = http(h, "GET /metrics HTTP/1.0\r\n\r\n");
	assert_int_equal(strncmp(r, "HTTP/1.", 7), 0);
	assert_int_equal(strncmp(r + 8, " 200 OK\r\n", 9), 0);
	assert_non_null(strstr(r, "Content-Type: text/plain; version=0.0.4; "
				  "charset=utf-8\r\n"));
	assert_non_null(strstr(r, "\r\n\r\n# HELP lb_x X.\n# TYPE lb_x "
				  "gauge\nlb_x 1\n"));
	free(r);
	r = http(h, "GET / HTTP/1.0\r\n\r\n");
	assert_non_null(strstr(r, " 404 "));
	free(r);
	r = http(h, "GET /metricsx HTTP/1.0\r\n\r\n");
	assert_non_null(strstr(r, " 404 "));
	free(r);
	/* Read-only: nothing but GET and HEAD. */
	r = http(h, "POST /metrics HTTP/1.0\r\nContent-Length: 3\r\n\r\n"
		    "abc");
	assert_non_null(strstr(r, " 405 "));
	free(r);
	r = http(h, "HEAD /metrics HTTP/1.0\r\n\r\n");
	assert_non_null(strstr(r, " 200 "));
	assert_null(strstr(r, "lb_x 1"));
	free(r);
	fail = 1;
	r = http(h, "GET /metrics HTTP/1.0\r\n\r\n");
	assert_non_null(strstr(r, " 500 "));
	free(r);
	/* Garbage is the library's business: an error, not a crash. */
	r = http(h, "\x01\x02 nonsense\r\n\r\n");
	free(r);
	assert_true(lb_httpd_requests(h) >= 6);
	lb_httpd_stop(h);
}

static int
page(void *ctx, const char *path, const struct lb_httpd_query *q,
     const char **type, struct lb_cmd_out *out)
{
	int *calls = ctx;
	const char *x = lb_httpd_query_get(q, "x");

	(*calls)++;
	if (strcmp(path, "/echo") == 0 && x != NULL && strcmp(x, "bad") == 0)
		return lb_cmd_error(out, -EINVAL, "x: 'bad' is refused");
	if (strcmp(path, "/echo") == 0) {
		*type = "text/plain";
		return lb_cmd_printf(out, "x=%s", x != NULL ? x : "(none)");
	}
	if (strcmp(path, "/") == 0) {
		*type = "text/html; charset=utf-8";
		return lb_cmd_printf(out, "<p>hello</p>");
	}
	if (strcmp(path, "/boom") == 0)
		return -ENOMEM;
	return -ENOENT;
}

/* Paths other than /metrics: the page function's, with the headers that
 * keep a browser to this server's own files. */
static void
test_pages(void **state)
{
	static const struct page_row {
		const char *req;
		const char *status;
		const char *has;
		int asked; /* calls of the page function */
	} page_rows[] = {
		{"GET / HTTP/1.0\r\n\r\n", " 200 ",
		 "Content-Type: text/html; charset=utf-8\r\n", 1},
		{"GET / HTTP/1.0\r\n\r\n", " 200 ",
		 "Content-Security-Policy: default-src 'self'; "
		 "frame-ancestors 'none'\r\n",
		 1},
		{"GET / HTTP/1.0\r\n\r\n", " 200 ",
		 "X-Content-Type-Options: nosniff\r\n", 1},
		{"GET / HTTP/1.0\r\n\r\n", " 200 ",
		 "Cache-Control: no-store\r\n", 1},
		{"GET / HTTP/1.0\r\n\r\n", " 200 ", "\r\n\r\n<p>hello</p>", 1},
		{"GET /nothing HTTP/1.0\r\n\r\n", " 404 ", "try / or /metrics",
		 1},
		{"GET /boom HTTP/1.0\r\n\r\n", " 500 ", "cannot build", 1},
		/* Query arguments reach the page; the path comes without. */
		{"GET /echo?x=5&y=6 HTTP/1.0\r\n\r\n", " 200 ", "\r\n\r\nx=5",
		 1},
		{"GET /echo HTTP/1.0\r\n\r\n", " 200 ", "\r\n\r\nx=(none)", 1},
		{"GET /echo?x=bad HTTP/1.0\r\n\r\n", " 400 ",
		 "\r\n\r\nx: 'bad' is refused\n", 1},
		{"POST / HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc", " 405 ",
		 "read-only", 0},
		{"DELETE / HTTP/1.0\r\n\r\n", " 405 ", "read-only", 0},
		/* /metrics stays the exposition's. */
		{"GET /metrics HTTP/1.0\r\n\r\n", " 200 ", "lb_x 1", 0},
	};
	int fail = 0, calls = 0;
	char err[256];
	struct lb_httpd *h;
	char *r;

	(void)state;
	h = lb_httpd_start("127.0.0.1:0", body, &fail, err, sizeof(err));
	assert_non_null(h);
	lb_httpd_set_pages(h, page, &calls);
	for (size_t i = 0; i < sizeof(page_rows) / sizeof(page_rows[0]); i++) {
		const struct page_row *x = &page_rows[i];
		int before = calls;

		r = http(h, x->req);
		if (strstr(r, x->status) == NULL ||
		    strstr(r, x->has) == NULL)
			fail_msg("%s: %s", x->req, r);
		/* Refused methods never reach the page function, nor
		 * /metrics. */
		assert_int_equal(calls - before, x->asked);
		free(r);
	}
	/* What was refused or failed is counted, by why. */
	assert_int_equal(lb_httpd_requests(h), 13);
	assert_int_equal(lb_httpd_stats(h).bad_request, 1);
	assert_int_equal(lb_httpd_stats(h).not_found, 1);
	assert_int_equal(lb_httpd_stats(h).bad_method, 2);
	assert_int_equal(lb_httpd_stats(h).errors, 1);
	assert_int_equal(lb_httpd_stats(NULL).errors, 0);
	lb_httpd_stop(h);
}

static void
test_bad_addresses(void **state)
{
	static const char *const bad[] = {
		"",
		"127.0.0.1",
		"127.0.0.1:",
		"127.0.0.1:65536",
		"localhost:80",
		":80",
		"1.2.3.4:8x",
		"127.0.0.1:-1",
	};
	char err[256];
	int fail = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_null(
			lb_httpd_start(bad[i], body, &fail, err, sizeof(err)));
		assert_non_null(strstr(err, "invalid metrics address"));
	}
	assert_null(lb_httpd_start(NULL, body, &fail, err, sizeof(err)));
	lb_httpd_stop(NULL);
	assert_int_equal(lb_httpd_fd(NULL), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_pages),
		cmocka_unit_test(test_bad_addresses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
