/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP/1.x request heads: see dataplane/route/http_head.h.
 */
#include <string.h>

#include "http_head.h"

#define VERSION "HTTP/1."
#define VERSION_LEN 7

static const char *const root = "/";

const uint8_t lb_http_tchar[256] = {
	['0' ... '9'] = 1, ['a' ... 'z'] = 1, ['A' ... 'Z'] = 1,
	['!'] = 1, ['#'] = 1, ['$'] = 1, ['%'] = 1, ['&'] = 1, ['\''] = 1,
	['*'] = 1, ['+'] = 1, ['-'] = 1, ['.'] = 1, ['^'] = 1, ['_'] = 1,
	['`'] = 1, ['|'] = 1, ['~'] = 1,
};

static int
is_tchar(uint8_t c)
{
	return lb_http_tchar[c];
}

static uint8_t
lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? (uint8_t)(c + 32) : c;
}

/* The verdict when the bytes looked at end inside the head. */
static int
short_of(size_t len, size_t max)
{
	return len >= max ? LB_HTTP_HEAD_TOO_LONG : LB_HTTP_HEAD_NEED_MORE;
}

struct line {
	const uint8_t *s;
	size_t n;    /* without its CRLF or LF */
	size_t next; /* offset of the next line */
};

/*
 * The line at @p off of the @p n bytes at @p p: 1 when complete, 0 when
 * it runs to the end of them (@p l then holds what there is), -1 when a
 * CR stands elsewhere than before its LF (RFC 9112 2.2).
 */
static int
get_line(const uint8_t *p, size_t n, size_t off, struct line *l)
{
	const uint8_t *e, *cr;

	/* Nothing past the end, not even a pointer to it (p may be NULL
	 * when there are no bytes). */
	if (off >= n) {
		l->s = p;
		l->n = 0;
		return 0;
	}
	l->s = p + off;
	e = memchr(p + off, '\n', n - off);
	l->n = e != NULL ? (size_t)(e - l->s) : n - off;
	l->next = off + l->n + 1;
	if (e != NULL && l->n > 0 && l->s[l->n - 1] == '\r')
		l->n--;
	cr = memchr(l->s, '\r', l->n);
	/* A CR that ends the bytes given may be the first of a CRLF. */
	if (cr != NULL && !(e == NULL && cr == l->s + l->n - 1))
		return -1;
	if (e == NULL && cr != NULL)
		l->n--;
	return e != NULL;
}

/*
 * The request line @p l, complete or not: -1 when it can still be one,
 * else LB_HTTP_HEAD_NOT_HTTP. A complete one fills the method, the
 * target and the minor version.
 */
static int
request_line(const struct line *l, int complete, struct lb_http_req *r,
	     const uint8_t **target, size_t *target_len)
{
	size_t i = 0, m, t;

	while (i < l->n && is_tchar(l->s[i]))
		i++;
	m = i;
	if (m > LB_HTTP_METHOD_MAX)
		return LB_HTTP_HEAD_NOT_HTTP;
	if (i == l->n)
		return complete ? LB_HTTP_HEAD_NOT_HTTP : -1;
	if (m == 0 || l->s[i++] != ' ')
		return LB_HTTP_HEAD_NOT_HTTP;
	t = i;
	while (i < l->n && l->s[i] > ' ' && l->s[i] < 0x7f)
		i++;
	if (i == l->n)
		return complete ? LB_HTTP_HEAD_NOT_HTTP : -1;
	if (i == t || l->s[i++] != ' ')
		return LB_HTTP_HEAD_NOT_HTTP;
	for (size_t k = 0; k < VERSION_LEN + 1; k++, i++) {
		if (i == l->n)
			return complete ? LB_HTTP_HEAD_NOT_HTTP : -1;
		if (k < VERSION_LEN ? l->s[i] != VERSION[k]
				    : l->s[i] < '0' || l->s[i] > '9')
			return LB_HTTP_HEAD_NOT_HTTP;
	}
	if (i != l->n)
		return LB_HTTP_HEAD_NOT_HTTP;
	r->method = l->s;
	r->method_len = (uint16_t)m;
	r->minor = (uint8_t)(l->s[i - 1] - '0');
	*target = l->s + t;
	*target_len = i - VERSION_LEN - 2 - t;
	return -1;
}

/*
 * A Host value or an authority (RFC 3986 3.2.2, 3.2.3): host name, IPv4
 * address or IP literal, then an optional port. 0 or -1.
 */
static int
host_port(const uint8_t *s, size_t n, struct lb_http_req *r)
{
	size_t h = 0;
	int rc;

	if (n == 0) {
		r->host_len = 0;
		r->host[0] = '\0';
		return 0;
	}
	if (s[0] == '[') {
		while (h < n && s[h] != ']')
			h++;
		if (h == n || h < 3 || h + 1 > LB_HOSTNAME_MAX)
			return -1;
		for (size_t i = 1; i < h; i++) {
			uint8_t c = lower(s[i]);

			if (!((c >= '0' && c <= '9') ||
			      (c >= 'a' && c <= 'f') || c == ':' || c == '.'))
				return -1;
			r->host[i] = (char)c;
		}
		r->host[0] = '[';
		r->host[h++] = ']';
		r->host[h] = '\0';
		r->host_len = (uint16_t)h;
	} else {
		while (h < n && s[h] != ':')
			h++;
		rc = lb_hostname_norm(r->host, s, h,
				      LB_HOSTNAME_DOT | LB_HOSTNAME_NUMERIC);
		if (rc < 0)
			return -1;
		r->host_len = (uint16_t)rc;
	}
	if (h == n)
		return 0;
	if (s[h++] != ':' || n - h > 5)
		return -1;
	for (; h < n; h++)
		if (s[h] < '0' || s[h] > '9')
			return -1;
	return 0;
}

static int
prefix_nocase(const uint8_t *s, size_t n, const char *pre)
{
	size_t k = strlen(pre);

	if (n < k)
		return 0;
	for (size_t i = 0; i < k; i++)
		if (lower(s[i]) != (uint8_t)pre[i])
			return 0;
	return 1;
}

/*
 * The request target (RFC 9112 3.2): the path, and for absolute-form the
 * host that replaces the Host header's. 0, 1 when it named a host, or -1.
 */
static int
target_form(const uint8_t *t, size_t n, struct lb_http_req *r)
{
	size_t a = 0, e, q = 0;

	if (memchr(t, '#', n) != NULL)
		return -1;
	if (r->method_len == 7 && memcmp(r->method, "CONNECT", 7) == 0) {
		r->path = t;
		r->path_len = 0;
		return host_port(t, n, r) == 0 && r->host_len > 0 &&
			       memchr(t, ':', n) != NULL
		       ? 1
		       : -1;
	}
	if (n == 1 && t[0] == '*') {
		if (r->method_len != 7 || memcmp(r->method, "OPTIONS", 7) != 0)
			return -1;
		r->path = t;
		r->path_len = 1;
		return 0;
	}
	if (t[0] != '/') {
		if (prefix_nocase(t, n, "http://"))
			a = 7;
		else if (prefix_nocase(t, n, "https://"))
			a = 8;
		else
			return -1;
		for (e = a; e < n && t[e] != '/' && t[e] != '?'; e++)
			if (t[e] == '@')
				return -1; /* userinfo: RFC 9110 4.2.4 */
		if (host_port(t + a, e - a, r) != 0 || r->host_len == 0)
			return -1;
		t += e;
		n -= e;
	}
	while (q < n && t[q] != '?')
		q++;
	if (q == 0) {
		/* An absolute-form target without a path asks for "/". */
		r->path = (const uint8_t *)root;
		r->path_len = 1;
	} else {
		r->path = t;
		r->path_len = (uint16_t)q;
	}
	return a > 0;
}

/*
 * A header line: -1 when valid, else LB_HTTP_HEAD_MALFORMED; @p host
 * counts the Host lines, the first written into @p r unless @p keep.
 */
static int
header(const struct line *l, struct lb_http_req *r, int *host, int keep)
{
	size_t i = 0, v, e;

	while (i < l->n && is_tchar(l->s[i]))
		i++;
	/* No name, a folded line, whitespace before the colon. */
	if (i == 0 || i == l->n || l->s[i] != ':')
		return LB_HTTP_HEAD_MALFORMED;
	v = i + 1;
	while (v < l->n && (l->s[v] == ' ' || l->s[v] == '\t'))
		v++;
	e = l->n;
	while (e > v && (l->s[e - 1] == ' ' || l->s[e - 1] == '\t'))
		e--;
	for (size_t k = v; k < e; k++)
		if ((l->s[k] < ' ' && l->s[k] != '\t') || l->s[k] == 0x7f)
			return LB_HTTP_HEAD_MALFORMED;
	if (i != 4 || !prefix_nocase(l->s, 4, "host"))
		return -1;
	if ((*host)++ > 0)
		return LB_HTTP_HEAD_MALFORMED;
	if (keep)
		return -1;
	return host_port(l->s + v, e - v, r) == 0 ? -1
						   : LB_HTTP_HEAD_MALFORMED;
}

int
lb_http_head(const uint8_t *p, size_t len, size_t max,
	     struct lb_http_req *out)
{
	size_t n = len < max ? len : max, off = 0, tlen = 0;
	const uint8_t *target = NULL;
	struct lb_http_req r;
	struct line l;
	int c, v, hosts = 0, absolute;

	/* Empty lines before the request line. */
	while ((c = get_line(p, n, off, &l)) == 1 && l.n == 0)
		off = l.next;
	if (c < 0)
		return LB_HTTP_HEAD_NOT_HTTP;
	v = request_line(&l, c, &r, &target, &tlen);
	if (v >= 0)
		return v;
	if (c == 0)
		return short_of(len, max);
	r.host_len = 0;
	r.host[0] = '\0';
	absolute = target_form(target, tlen, &r);
	if (absolute < 0)
		return LB_HTTP_HEAD_MALFORMED;
	for (off = l.next;; off = l.next) {
		c = get_line(p, n, off, &l);
		if (c < 0)
			return LB_HTTP_HEAD_MALFORMED;
		if (c == 0)
			return short_of(len, max);
		if (l.n == 0)
			break;
		if ((v = header(&l, &r, &hosts, absolute)) >= 0)
			return v;
	}
	/* RFC 9112 3.2: a 1.1 request without Host is refused, even with
	 * an absolute-form target. */
	if (r.minor >= 1 && hosts == 0)
		return LB_HTTP_HEAD_MALFORMED;
	r.head_len = (uint32_t)l.next;
	*out = r;
	return LB_HTTP_HEAD_FOUND;
}

const char *
lb_http_head_verdict_name(int v)
{
	static const char *const names[LB_HTTP_HEAD_VERDICTS] = {
		[LB_HTTP_HEAD_NEED_MORE] = "need_more",
		[LB_HTTP_HEAD_FOUND] = "found",
		[LB_HTTP_HEAD_NOT_HTTP] = "not_http",
		[LB_HTTP_HEAD_MALFORMED] = "malformed",
		[LB_HTTP_HEAD_TOO_LONG] = "too_long",
	};

	return v >= 0 && v < LB_HTTP_HEAD_VERDICTS ? names[v] : "?";
}
