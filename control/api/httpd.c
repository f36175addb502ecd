/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The /metrics endpoint, and the status page's paths, over libmicrohttpd
 * in external-poll mode.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "httpd_priv.h"
#include "prom.h"

#if MHD_VERSION < 0x00097002
#define MHD_Result int
#endif

struct lb_httpd {
	struct MHD_Daemon *d;
	lb_httpd_body_fn *fn;
	void *ctx;
	lb_httpd_page_fn *page; /* every other path, or NULL */
	void *page_ctx;
	uint64_t requests;
	struct lb_httpd_stats st;
};

static enum MHD_Result
reply(struct MHD_Connection *conn, unsigned int status, const char *type,
      char *body, size_t len)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (r == NULL) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	/* The status page reads only what this server sends; what it shows
	 * changes every second. */
	MHD_add_response_header(r, "Content-Security-Policy",
				"default-src 'self'; frame-ancestors 'none'");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result
text_reply(struct MHD_Connection *conn, unsigned int status, const char *msg)
{
	char *body = strdup(msg);

	if (body == NULL)
		return MHD_NO;
	return reply(conn, status, "text/plain", body, strlen(body));
}

static enum MHD_Result
page_reply(struct lb_httpd *h, struct MHD_Connection *conn, const char *url)
{
	const char *type = "text/plain";
	struct lb_cmd_out out;
	int rc = -ENOENT;

	lb_cmd_out_init(&out);
	if (h->page != NULL)
		rc = h->page(h->page_ctx, url,
			     (const struct lb_httpd_query *)conn, &type, &out);
	if (rc == 0 && !out.truncated)
		return reply(conn, MHD_HTTP_OK, type,
			     out.text != NULL ? out.text : strdup(""),
			     out.len);
	if (rc == -EINVAL) {
		char msg[LB_CMD_ERR_MAX + 1];

		snprintf(msg, sizeof(msg), "%s\n", lb_cmd_out_errmsg(&out));
		lb_cmd_out_free(&out);
		h->st.bad_request++;
		return text_reply(conn, MHD_HTTP_BAD_REQUEST, msg);
	}
	lb_cmd_out_free(&out);
	if (rc == -ENOENT) {
		h->st.not_found++;
		return text_reply(conn, MHD_HTTP_NOT_FOUND,
				  h->page != NULL
					  ? "not found; try / or /metrics\n"
					  : "not found; try /metrics\n");
	}
	h->st.errors++;
	return text_reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
			  "cannot build the page\n");
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url,
	   const char *method, const char *version, const char *upload,
	   size_t *upload_len, void **con_cls)
{
	struct lb_httpd *h = cls;
	struct lb_cmd_out out;
	char *body;
	int rc;

	(void)version;
	(void)upload;
	/* The first call only announces the request; answering then would
	 * leave a request body, if any, unread. */
	if (*con_cls == NULL) {
		*con_cls = h;
		return MHD_YES;
	}
	if (*upload_len > 0) {
		*upload_len = 0;
		return MHD_YES;
	}
	h->requests++;
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
		h->st.bad_method++;
		return text_reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
				  "read-only: GET or HEAD\n");
	}
	if (strcmp(url, "/metrics") != 0)
		return page_reply(h, conn, url);
	lb_cmd_out_init(&out);
	rc = h->fn(h->ctx, &out);
	if (rc != 0 || out.truncated) {
		lb_cmd_out_free(&out);
		h->st.errors++;
		body = strdup("cannot build the exposition\n");
		if (body == NULL)
			return MHD_NO;
		return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain",
			     body, strlen(body));
	}
	/* The buffer goes to libmicrohttpd, which frees it. */
	body = out.text != NULL ? out.text : strdup("");
	return reply(conn, MHD_HTTP_OK, LB_PROM_CONTENT_TYPE, body, out.len);
}

static int
parse_addr(const char *s, struct sockaddr_in *sa)
{
	char buf[32];
	char *colon, *end;
	unsigned long port;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", s);
	colon = strrchr(buf, ':');
	if (colon == NULL)
		return -EINVAL;
	*colon = '\0';
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (colon[1] == '\0' || *end != '\0' || errno != 0 || port > 65535)
		return -EINVAL;
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, buf, &sa->sin_addr) != 1)
		return -EINVAL;
	return 0;
}

struct lb_httpd *
lb_httpd_start(const char *addr_port, lb_httpd_body_fn *fn, void *ctx,
	       char *err, size_t errlen)
{
	struct sockaddr_in sa;
	struct lb_httpd *h;

	if (addr_port == NULL || fn == NULL ||
	    parse_addr(addr_port, &sa) != 0) {
		snprintf(err, errlen,
			 "invalid metrics address '%s': expected "
			 "a.b.c.d:PORT",
			 addr_port != NULL ? addr_port : "");
		errno = EINVAL;
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (h == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	h->fn = fn;
	h->ctx = ctx;
	/* No thread of its own (no MHD_USE_INTERNAL_POLLING_THREAD): the
	 * caller polls the epoll descriptor. */
	h->d = MHD_start_daemon(
		MHD_USE_EPOLL, ntohs(sa.sin_port), NULL, NULL, on_request, h,
		MHD_OPTION_SOCK_ADDR, &sa, MHD_OPTION_CONNECTION_LIMIT, 32u,
		MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_END);
	if (h->d == NULL) {
		int e = errno != 0 ? errno : EADDRINUSE;

		snprintf(err, errlen, "cannot serve metrics on %s: %s",
			 addr_port, strerror(e));
		free(h);
		errno = e;
		return NULL;
	}
	return h;
}

void
lb_httpd_set_pages(struct lb_httpd *h, lb_httpd_page_fn *fn, void *ctx)
{
	h->page = fn;
	h->page_ctx = ctx;
}

void
lb_httpd_stop(struct lb_httpd *h)
{
	if (h == NULL)
		return;
	MHD_stop_daemon(h->d);
	free(h);
}

int
lb_httpd_fd(const struct lb_httpd *h)
{
	const union MHD_DaemonInfo *i;

	if (h == NULL)
		return -1;
	i = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_EPOLL_FD);
	return i != NULL ? i->epoll_fd : -1;
}

uint16_t
lb_httpd_port(const struct lb_httpd *h)
{
	const union MHD_DaemonInfo *i;

	if (h == NULL)
		return 0;
	i = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
	return i != NULL ? i->port : 0;
}

int
lb_httpd_timeout_ms(const struct lb_httpd *h)
{
	MHD_UNSIGNED_LONG_LONG t;

	if (h == NULL || MHD_get_timeout(h->d, &t) != MHD_YES)
		return -1;
	return t > 60000 ? 60000 : (int)t;
}

void
lb_httpd_run(struct lb_httpd *h)
{
	if (h != NULL)
		MHD_run(h->d);
}

uint64_t
lb_httpd_requests(const struct lb_httpd *h)
{
	return h != NULL ? h->requests : 0;
}

/* A query is the connection it came on: libmicrohttpd keeps its
 * arguments there. */
const char *
lb_httpd_query_get(const struct lb_httpd_query *q, const char *name)
{
	if (q == NULL)
		return NULL;
	return MHD_lookup_connection_value(
		(struct MHD_Connection *)(uintptr_t)q, MHD_GET_ARGUMENT_KIND,
		name);
}

struct lb_httpd_stats
lb_httpd_stats(const struct lb_httpd *h)
{
	return h != NULL ? h->st : (struct lb_httpd_stats){0};
}
