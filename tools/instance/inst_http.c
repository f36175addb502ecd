/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP/1.1 request framing and response writing for lb-instance.
 *
 * Choices where RFC 9112 leaves one open, all on the strict side because
 * the load balancer in front follows the same stream and must agree with
 * this server on where every message ends:
 * - empty lines before a request line are skipped (§2.2);
 * - a lone LF ends a line (§2.2); a CR anywhere but before LF is a 400;
 * - obsolete line folding and whitespace before a field's colon are 400
 *   (§5.1, §5.2);
 * - HTTP/1.1 needs exactly one Host, HTTP/1.0 at most one (§3.2);
 * - Content-Length must be digits; a list of equal values is accepted,
 *   anything else is 400 (§6.3); both it and Transfer-Encoding is 400;
 * - Transfer-Encoding in HTTP/1.0 is 400 (§6.1); a last coding other
 *   than chunked is 400 (§6.3); chunked listed twice is 400; a coding
 *   this server does not decode (gzip, ...) is 501 (RFC 9110 §6.1);
 * - chunk extensions and trailer fields are read and ignored (§7.1);
 * - CONNECT is 501: this server is no proxy and cannot follow a tunnel.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "inst_http.h"

enum {
	ST_HEAD = 0,  /* looking for the end of a head */
	ST_COMPLETE,  /* head without content: DONE next */
	ST_CL,	      /* discarding Content-Length octets */
	ST_CSIZE,     /* chunk-size line */
	ST_CDATA,     /* chunk data */
	ST_CDATA_END, /* CRLF after chunk data */
	ST_TRAILER,   /* trailer section after the last chunk */
	ST_ERR,
};

int
lb_inst_rx_init(struct lb_inst_rx *rx, uint32_t head_max)
{
	if (rx == NULL || head_max < LB_INST_HEAD_MAX_MIN ||
	    head_max > LB_INST_HEAD_MAX_MAX)
		return -EINVAL;
	memset(rx, 0, sizeof(*rx));
	rx->head_max = head_max;
	rx->state = ST_HEAD;
	return 0;
}

bool
lb_inst_rx_idle(const struct lb_inst_rx *rx)
{
	return rx->state == ST_HEAD && rx->scan == 0;
}

/* RFC 9110 §5.6.2 tchar. */
static bool
is_tchar(unsigned char c)
{
	if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	    (c >= 'A' && c <= 'Z'))
		return true;
	return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* Field value octets: VCHAR, SP, HTAB, obs-text (RFC 9110 §5.5). */
static bool
is_vchar_ws(unsigned char c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

static bool
is_ows(char c)
{
	return c == ' ' || c == '\t';
}

static bool
name_is(const char *p, size_t n, const char *name)
{
	return strlen(name) == n && strncasecmp(p, name, n) == 0;
}

/* One element of a comma-separated list, with its blanks trimmed. */
struct elem {
	const char *p;
	size_t n;
};

/*
 * Next element of the list in [*pos, end); false at the end. Empty
 * elements are returned too (n == 0); callers decide.
 */
static bool
next_elem(const char **pos, const char *end, struct elem *e)
{
	const char *p = *pos, *q;

	if (p == NULL)
		return false;
	q = memchr(p, ',', (size_t)(end - p));
	*pos = q != NULL ? q + 1 : NULL;
	if (q == NULL)
		q = end;
	while (p < q && is_ows(*p))
		p++;
	while (q > p && is_ows(q[-1]))
		q--;
	e->p = p;
	e->n = (size_t)(q - p);
	return true;
}

/* What the fields of a head said, before the checks that combine them. */
struct head_info {
	unsigned int hosts;
	bool cl_seen;
	uint64_t cl;
	bool te_seen;
	unsigned int te_chunked; /* times chunked is listed */
	bool te_last_chunked;
	bool te_other; /* a coding other than chunked */
	bool conn_close;
	bool conn_keep_alive;
	bool expect_continue;
};

/* 0, or the status to answer. */
static uint16_t
field_content_length(struct head_info *hi, const char *v, size_t n)
{
	const char *pos = v;
	struct elem e;

	while (next_elem(&pos, v + n, &e)) {
		uint64_t x = 0;

		if (e.n == 0)
			return 400;
		for (size_t i = 0; i < e.n; i++) {
			if (e.p[i] < '0' || e.p[i] > '9')
				return 400;
			x = x * 10 + (uint64_t)(e.p[i] - '0');
			if (x > LB_INST_LENGTH_MAX)
				return 413;
		}
		if (hi->cl_seen && x != hi->cl)
			return 400;
		hi->cl_seen = true;
		hi->cl = x;
	}
	return 0;
}

static uint16_t
field_transfer_encoding(struct head_info *hi, const char *v, size_t n)
{
	const char *pos = v;
	struct elem e;

	hi->te_seen = true;
	while (next_elem(&pos, v + n, &e)) {
		size_t k = 0;

		if (e.n == 0)
			continue; /* empty list elements are ignored */
		while (k < e.n && is_tchar((unsigned char)e.p[k]))
			k++;
		if (k == 0 || (k < e.n && e.p[k] != ';' && !is_ows(e.p[k])))
			return 400;
		if (k == 7 && strncasecmp(e.p, "chunked", 7) == 0) {
			hi->te_chunked++;
			hi->te_last_chunked = true;
		} else {
			hi->te_other = true;
			hi->te_last_chunked = false;
		}
	}
	return 0;
}

static void
field_connection(struct head_info *hi, const char *v, size_t n)
{
	const char *pos = v;
	struct elem e;

	while (next_elem(&pos, v + n, &e)) {
		if (name_is(e.p, e.n, "close"))
			hi->conn_close = true;
		else if (name_is(e.p, e.n, "keep-alive"))
			hi->conn_keep_alive = true;
	}
}

/* Request line: method SP request-target SP HTTP-version (§3). */
static uint16_t
parse_request_line(const char *p, size_t n, struct lb_inst_req *req,
		   bool *connect)
{
	const char *v;
	size_t m = 0, t;

	while (m < n && is_tchar((unsigned char)p[m]))
		m++;
	if (m == 0 || m >= n || p[m] != ' ')
		return 400;
	t = m + 1;
	while (t < n && p[t] > 0x20 && p[t] < 0x7f)
		t++;
	if (t == m + 1 || t >= n || p[t] != ' ')
		return 400;
	v = p + t + 1;
	if (n - t - 1 != 8 || memcmp(v, "HTTP/", 5) != 0 || v[6] != '.' ||
	    v[5] < '0' || v[5] > '9' || v[7] < '0' || v[7] > '9')
		return 400;
	if (v[5] != '1')
		return 505;
	req->minor = v[7] == '0' ? 0 : 1;
	t -= m + 1;
	if (t > LB_INST_TARGET_KEEP)
		t = LB_INST_TARGET_KEEP;
	memcpy(req->target, p + m + 1, t);
	req->target[t] = '\0';
	req->head = m == 4 && memcmp(p, "HEAD", 4) == 0;
	*connect = m == 7 && memcmp(p, "CONNECT", 7) == 0;
	return 0;
}

static uint16_t
parse_field(struct head_info *hi, const char *p, size_t n)
{
	size_t k = 0;
	const char *v, *end = p + n;

	if (n > 0 && is_ows(p[0]))
		return 400; /* obs-fold, or blanks after the start line */
	while (k < n && is_tchar((unsigned char)p[k]))
		k++;
	if (k == 0 || k == n || p[k] != ':')
		return 400;
	for (v = p + k + 1; v < end; v++)
		if (!is_vchar_ws((unsigned char)*v))
			return 400;
	v = p + k + 1;
	while (v < end && is_ows(*v))
		v++;
	while (end > v && is_ows(end[-1]))
		end--;
	if (name_is(p, k, "host")) {
		hi->hosts++;
	} else if (name_is(p, k, "content-length")) {
		return field_content_length(hi, v, (size_t)(end - v));
	} else if (name_is(p, k, "transfer-encoding")) {
		return field_transfer_encoding(hi, v, (size_t)(end - v));
	} else if (name_is(p, k, "connection")) {
		field_connection(hi, v, (size_t)(end - v));
	} else if (name_is(p, k, "expect")) {
		if (name_is(v, (size_t)(end - v), "100-continue"))
			hi->expect_continue = true;
	}
	return 0;
}

/* Parses a whole head ending with its empty line; 0 or a status. */
static uint16_t
parse_head(const char *buf, size_t n, struct lb_inst_req *req)
{
	struct head_info hi;
	unsigned int fields = 0;
	bool first = true, connect = false;
	size_t pos = 0;
	uint16_t st;

	memset(&hi, 0, sizeof(hi));
	memset(req, 0, sizeof(*req));
	while (pos < n) {
		const char *lf = memchr(buf + pos, '\n', n - pos);
		size_t len = (size_t)(lf - (buf + pos));

		if (len > 0 && buf[pos + len - 1] == '\r')
			len--;
		if (memchr(buf + pos, '\r', len) != NULL)
			return 400; /* bare CR (§2.2) */
		if (first) {
			st = parse_request_line(buf + pos, len, req, &connect);
			if (st != 0)
				return st;
			first = false;
		} else if (len == 0) {
			break;
		} else {
			if (++fields > LB_INST_FIELDS_MAX)
				return 431;
			st = parse_field(&hi, buf + pos, len);
			if (st != 0)
				return st;
		}
		pos = (size_t)(lf - buf) + 1;
	}
	if (hi.hosts > 1 || (req->minor >= 1 && hi.hosts == 0))
		return 400;
	if (hi.te_seen) {
		if (req->minor == 0 || hi.cl_seen || !hi.te_last_chunked ||
		    hi.te_chunked > 1)
			return 400;
		if (hi.te_other)
			return 501;
		req->chunked = true;
	} else {
		req->content_length = hi.cl;
	}
	if (connect)
		return 501;
	req->close = hi.conn_close || (req->minor == 0 && !hi.conn_keep_alive);
	req->expect_continue = hi.expect_continue && req->minor >= 1 &&
			       (req->chunked || req->content_length > 0);
	return 0;
}

static enum lb_inst_rx_ev
rx_error(struct lb_inst_rx *rx, uint16_t status)
{
	rx->state = ST_ERR;
	rx->req.status = status;
	rx->req.close = true;
	return LB_INST_RX_ERR;
}

/*
 * Finds the end of the head that starts at buf[0]; returns its length
 * with the final LF, 0 when more is needed, or sets *err.
 */
static size_t
head_end(struct lb_inst_rx *rx, const char *buf, size_t len, uint16_t *err)
{
	size_t lim = len < rx->head_max ? len : rx->head_max;
	size_t i = rx->scan;

	*err = 0;
	while (i < lim) {
		const char *lf = memchr(buf + i, '\n', lim - i);

		if (lf == NULL)
			break;
		i = (size_t)(lf - buf);
		/* The first line is never empty: empty lines were skipped. */
		if ((i >= 1 && buf[i - 1] == '\n') ||
		    (i >= 2 && buf[i - 1] == '\r' && buf[i - 2] == '\n'))
			return i + 1;
		i++;
	}
	if (len >= rx->head_max) {
		*err = memchr(buf, '\n', lim) == NULL ? 414 : 431;
		return 0;
	}
	rx->scan = (uint32_t)lim;
	return 0;
}

/* One octet of a chunk-size line; 0, 1 at its end, or a status. */
static int
chunk_size_octet(struct lb_inst_rx *rx, unsigned char c)
{
	if (c == '\n') {
		if (!rx->digits)
			return 400;
		return 1;
	}
	if (rx->cr || ++rx->line > LB_INST_CHUNK_LINE_MAX)
		return 400;
	if (c == '\r') {
		rx->cr = 1;
		return 0;
	}
	if (rx->ext)
		return is_vchar_ws(c) ? 0 : 400;
	if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	    (c >= 'A' && c <= 'F')) {
		unsigned int d = c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;

		if (rx->left > (LB_INST_LENGTH_MAX - d) / 16)
			return 413;
		rx->left = rx->left * 16 + d;
		rx->digits = true;
		return 0;
	}
	if (rx->digits && (c == ';' || is_ows((char)c))) {
		rx->ext = true;
		return 0;
	}
	return 400;
}

static void
chunk_line_reset(struct lb_inst_rx *rx)
{
	rx->cr = 0;
	rx->line = 0;
	rx->left = 0;
	rx->digits = false;
	rx->ext = false;
}

/* Content and framing octets after a head; stops at the request's end. */
static enum lb_inst_rx_ev
feed_content(struct lb_inst_rx *rx, const char *buf, size_t len, size_t *pos)
{
	while (*pos < len) {
		unsigned char c = (unsigned char)buf[*pos];
		size_t k;
		int r;

		switch (rx->state) {
		case ST_CL:
		case ST_CDATA:
			k = len - *pos;
			if (k > rx->left)
				k = (size_t)rx->left;
			*pos += k;
			rx->left -= k;
			if (rx->left > 0)
				break;
			if (rx->state == ST_CL)
				goto done;
			rx->state = ST_CDATA_END;
			break;
		case ST_CDATA_END:
			(*pos)++;
			if (c == '\r' && !rx->cr) {
				rx->cr = 1;
			} else if (c == '\n') {
				chunk_line_reset(rx);
				rx->state = ST_CSIZE;
			} else {
				return rx_error(rx, 400);
			}
			break;
		case ST_CSIZE:
			(*pos)++;
			r = chunk_size_octet(rx, c);
			if (r > 1)
				return rx_error(rx, (uint16_t)r);
			if (r == 1) {
				bool last = rx->left == 0;

				k = (size_t)rx->left;
				chunk_line_reset(rx);
				rx->left = k;
				rx->state = last ? ST_TRAILER : ST_CDATA;
			}
			break;
		case ST_TRAILER:
			(*pos)++;
			if (c == '\n') {
				if (rx->line == 0)
					goto done;
				rx->line = 0;
				rx->cr = 0;
			} else if (rx->cr || (!is_vchar_ws(c) && c != '\r')) {
				return rx_error(rx, 400);
			} else if (c == '\r') {
				rx->cr = 1;
			} else {
				rx->line++;
				if (++rx->trailer > rx->head_max)
					return rx_error(rx, 431);
			}
			break;
		default:
			return rx_error(rx, 400);
		}
	}
	return LB_INST_RX_MORE;
done:
	rx->state = ST_HEAD;
	rx->scan = 0;
	return LB_INST_RX_DONE;
}

enum lb_inst_rx_ev
lb_inst_rx_feed(struct lb_inst_rx *rx, const char *buf, size_t len,
		size_t *used)
{
	size_t pos = 0, n;
	uint16_t st;

	*used = 0;
	switch (rx->state) {
	case ST_ERR:
		return LB_INST_RX_ERR;
	case ST_COMPLETE:
		rx->state = ST_HEAD;
		rx->scan = 0;
		return LB_INST_RX_DONE;
	case ST_HEAD:
		break;
	default:
		st = feed_content(rx, buf, len, &pos);
		*used = pos;
		return st;
	}
	/* Empty lines before a request line are skipped (§2.2). */
	while (rx->scan == 0 && pos < len &&
	       (buf[pos] == '\n' || buf[pos] == '\r')) {
		if (buf[pos] == '\n') {
			pos++;
		} else if (pos + 1 == len) {
			break; /* a CR whose LF is still to come */
		} else if (buf[pos + 1] == '\n') {
			pos += 2;
		} else {
			*used = pos;
			return rx_error(rx, 400);
		}
	}
	*used = pos;
	if (pos == len || buf[pos] == '\r')
		return LB_INST_RX_MORE;
	n = head_end(rx, buf + pos, len - pos, &st);
	if (st != 0)
		return rx_error(rx, st);
	if (n == 0)
		return LB_INST_RX_MORE;
	*used = pos + n;
	st = parse_head(buf + pos, n, &rx->req);
	if (st != 0)
		return rx_error(rx, st);
	rx->scan = (uint32_t)n;
	chunk_line_reset(rx);
	if (rx->req.chunked) {
		rx->state = ST_CSIZE;
	} else if (rx->req.content_length > 0) {
		rx->state = ST_CL;
		rx->left = rx->req.content_length;
	} else {
		rx->state = ST_COMPLETE;
	}
	return LB_INST_RX_HEAD;
}

const char *
lb_inst_reason(unsigned int status)
{
	switch (status) {
	case 100:
		return "Continue";
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
	case 404:
		return "Not Found";
	case 408:
		return "Request Timeout";
	case 411:
		return "Length Required";
	case 413:
		return "Content Too Large";
	case 414:
		return "URI Too Long";
	case 417:
		return "Expectation Failed";
	case 431:
		return "Request Header Fields Too Large";
	case 500:
		return "Internal Server Error";
	case 501:
		return "Not Implemented";
	case 503:
		return "Service Unavailable";
	case 505:
		return "HTTP Version Not Supported";
	default:
		return "";
	}
}

/* @p n decimal digits of @p v, zero-padded. */
static void
put_digits(char *out, unsigned int v, int n)
{
	while (n-- > 0) {
		out[n] = (char)('0' + v % 10);
		v /= 10;
	}
}

void
lb_inst_http_date(int64_t unix_s, char out[30])
{
	static const char wday[7][4] = {"Sun", "Mon", "Tue", "Wed",
					"Thu", "Fri", "Sat"};
	static const char mon[12][4] = {"Jan", "Feb", "Mar", "Apr",
					"May", "Jun", "Jul", "Aug",
					"Sep", "Oct", "Nov", "Dec"};
	time_t t = (time_t)unix_s;
	struct tm tm;

	/* Years outside 0000..9999 do not fit the format: say the epoch. */
	if (gmtime_r(&t, &tm) == NULL || tm.tm_year < -1900 ||
	    tm.tm_year > 9999 - 1900) {
		t = 0;
		gmtime_r(&t, &tm);
	}
	memcpy(out, wday[tm.tm_wday % 7], 3);
	memcpy(out + 3, ", ", 2);
	put_digits(out + 5, (unsigned int)tm.tm_mday, 2);
	out[7] = ' ';
	memcpy(out + 8, mon[tm.tm_mon % 12], 3);
	out[11] = ' ';
	put_digits(out + 12, (unsigned int)(tm.tm_year + 1900), 4);
	out[16] = ' ';
	put_digits(out + 17, (unsigned int)tm.tm_hour, 2);
	out[19] = ':';
	put_digits(out + 20, (unsigned int)tm.tm_min, 2);
	out[22] = ':';
	put_digits(out + 23, (unsigned int)tm.tm_sec, 2);
	memcpy(out + 25, " GMT", 5);
}

static double
clamp(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

int
lb_inst_resp_build(char *buf, size_t cap, const struct lb_inst_resp *r)
{
	size_t len = 0, body;
	int n;

	if (buf == NULL || r == NULL || r->status < 200 || r->status > 599 ||
	    (r->body == NULL && r->body_len > 0) ||
	    (r->spl_on && (!isfinite(r->spl) || r->spl < 0.0)) ||
	    (r->orca_on && (!isfinite(r->cpu_util) || !isfinite(r->rps))))
		return -EINVAL;
	body = r->head ? 0 : r->body_len;

#define PUT(...)                                                               \
	do {                                                                   \
		n = snprintf(buf + len, cap - len, __VA_ARGS__);               \
		if (n < 0 || (size_t)n >= cap - len)                           \
			return -ENOSPC;                                        \
		len += (size_t)n;                                              \
	} while (0)

	if (cap == 0)
		return -ENOSPC;
	PUT("HTTP/1.1 %u %s\r\n", r->status, lb_inst_reason(r->status));
	if (r->date != NULL)
		PUT("Date: %s\r\n", r->date);
	PUT("Content-Type: text/plain\r\nContent-Length: %zu\r\n", r->body_len);
	if (r->name != NULL)
		PUT("X-Instance: %s\r\n", r->name);
	/*
	 * The load balancer takes 1*DIGIT ["." 1*DIGIT] for X-SPL and
	 * digits for X-SPL-Time: %.4f of a finite non-negative value and
	 * a decimal integer are exactly that.
	 */
	if (r->spl_on)
		PUT("%s: %.4f\r\nX-SPL-Time: %" PRIu64 "\r\n",
		    r->spl_hdr != NULL ? r->spl_hdr : "X-SPL", r->spl,
		    r->spl_time_ms);
	if (r->orca_on)
		PUT("endpoint-load-metrics: TEXT cpu_utilization=%.4f, "
		    "rps_fractional=%.2f\r\n",
		    clamp(r->cpu_util, 0.0, 100.0), clamp(r->rps, 0.0, 1e9));
	if (r->close)
		PUT("Connection: close\r\n");
	else if (r->keep_alive)
		PUT("Connection: keep-alive\r\n");
	PUT("\r\n");
#undef PUT
	if (body > cap - len)
		return -ENOSPC;
	if (body > 0)
		memcpy(buf + len, r->body, body);
	len += body;
	if (len > INT32_MAX)
		return -ENOSPC;
	return (int)len;
}
