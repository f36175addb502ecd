/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-control's API protocol: request parsing, response formatting and the
 * line assembly of a connection. Every input is hostile: whatever a client
 * sends gets one response line, never a crash or a hang.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"

#define RBUF_MIN_CAP 4096u

/* ---- UTF-8 ---- */

/* Length of the well-formed sequence at @p s (RFC 3629 table 3-7), or 0. */
static size_t
utf8_seq(const unsigned char *s)
{
	unsigned char c = s[0];
	size_t n;
	unsigned char lo = 0x80, hi = 0xbf;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	/* The second byte's range rules out overlong forms, surrogates and
	 * code points past U+10FFFF. */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

size_t
lb_api_utf8_fix(char *s)
{
	unsigned char *p = (unsigned char *)s;
	size_t bad = 0;

	if (s == NULL)
		return 0;
	while (*p != '\0') {
		/* A NUL inside a sequence fails the continuation test, so
		 * the scan never passes the end of the string. */
		size_t n = utf8_seq(p);

		if (n == 0) {
			*p++ = '?';
			bad++;
		} else {
			p += n;
		}
	}
	return bad;
}

/* ---- requests ---- */

static int fail(char *err, size_t errlen, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int
fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

/* A word as the tokenizer would let it through: no control character
 * other than tab, at most LB_CMD_ARG_MAX bytes. */
static int
check_word(const char *w, size_t n, unsigned int idx, char *err, size_t errlen)
{
	char name[LB_CMD_WORD_NAME_STRLEN];

	/* idx counts from 0 in "argv"; a user counts words from 1. */
	if (n > LB_CMD_ARG_MAX)
		return fail(err, errlen, -E2BIG,
			    "%s too long (more than %u bytes)",
			    lb_cmd_word_name(name, sizeof(name), idx + 1, w, n),
			    LB_CMD_ARG_MAX);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)w[i];

		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return fail(err, errlen, -EINVAL,
				    "%s: control character 0x%02x",
				    lb_cmd_word_name(name, sizeof(name),
						     idx + 1, w, n),
				    c);
	}
	return 0;
}

static int
parse_argv(json_t *a, struct lb_api_req *req, char *err, size_t errlen)
{
	size_t n;
	int rc;

	if (!json_is_array(a))
		return fail(err, errlen, -EINVAL,
			    "\"argv\" must be an array of strings");
	n = json_array_size(a);
	if (n > LB_CMD_ARGC_MAX)
		return fail(err, errlen, -E2BIG,
			    "too many words in \"argv\" (more than %u)",
			    LB_CMD_ARGC_MAX);
	req->argv = calloc(n + 1, sizeof(*req->argv));
	if (req->argv == NULL)
		return fail(err, errlen, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		json_t *w = json_array_get(a, i);
		size_t len;

		if (!json_is_string(w))
			return fail(err, errlen, -EINVAL,
				    "word %zu is not a string", i + 1);
		len = json_string_length(w);
		rc = check_word(json_string_value(w), len, (unsigned int)i, err,
				errlen);
		if (rc != 0)
			return rc;
		req->argv[i] = strndup(json_string_value(w), len);
		if (req->argv[i] == NULL)
			return fail(err, errlen, -ENOMEM, "out of memory");
		req->argc++;
	}
	return 0;
}

static int
parse_apply(json_t *t, json_t *name, struct lb_api_req *req, char *err,
	    size_t errlen)
{
	const char *nm = "-";
	size_t nlen = 1;

	if (!json_is_string(t))
		return fail(err, errlen, -EINVAL, "\"apply\" must be a string");
	if (name != NULL) {
		if (!json_is_string(name))
			return fail(err, errlen, -EINVAL,
				    "\"name\" must be a string");
		nm = json_string_value(name);
		nlen = json_string_length(name);
		if (nlen == 0 || nlen > LB_API_NAME_MAX)
			return fail(err, errlen, -EINVAL,
				    "\"name\" must have 1..%u bytes",
				    LB_API_NAME_MAX);
		for (size_t i = 0; i < nlen; i++)
			if ((unsigned char)nm[i] < 0x20 || nm[i] == 0x7f)
				return fail(err, errlen, -EINVAL,
					    "\"name\": control character");
	}
	req->apply_len = json_string_length(t);
	req->apply = malloc(req->apply_len + 1);
	req->name = strndup(nm, nlen);
	if (req->apply == NULL || req->name == NULL)
		return fail(err, errlen, -ENOMEM, "out of memory");
	memcpy(req->apply, json_string_value(t), req->apply_len + 1);
	return 0;
}

int
lb_api_parse(const char *line, size_t len, struct lb_api_req *req, char *err,
	     size_t errlen)
{
	json_t *root, *v, *js, *argv, *apply;
	json_error_t je;
	int rc;

	if (req == NULL)
		return -EINVAL;
	memset(req, 0, sizeof(*req));
	if (line == NULL)
		return fail(err, errlen, -EINVAL, "empty request");
	if (len > LB_API_LINE_MAX)
		return fail(err, errlen, -E2BIG, "request longer than %u bytes",
			    LB_API_LINE_MAX);
	root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
	if (root == NULL)
		return fail(err, errlen, -EINVAL,
			    "malformed JSON at column %d: %s", je.column,
			    je.text);
	rc = -EINVAL;
	if (!json_is_object(root)) {
		fail(err, errlen, rc, "the request is not a JSON object");
		goto out;
	}
	v = json_object_get(root, "v");
	if (v == NULL) {
		fail(err, errlen, rc, "missing \"v\" (protocol version)");
		goto out;
	}
	if (!json_is_integer(v)) {
		fail(err, errlen, rc, "\"v\" must be an integer");
		goto out;
	}
	if (json_integer_value(v) != LB_API_VERSION) {
		rc = fail(err, errlen, -EOPNOTSUPP,
			  "protocol version %" JSON_INTEGER_FORMAT
			  " not supported (this lb-control speaks %d)",
			  json_integer_value(v), LB_API_VERSION);
		goto out;
	}
	js = json_object_get(root, "json");
	if (js != NULL && !json_is_boolean(js)) {
		fail(err, errlen, rc, "\"json\" must be true or false");
		goto out;
	}
	req->json = js != NULL && json_is_true(js);
	js = json_object_get(root, "width");
	if (js != NULL && (!json_is_integer(js) || json_integer_value(js) < 0 ||
			   json_integer_value(js) > LB_API_WIDTH_MAX)) {
		fail(err, errlen, rc, "\"width\" must be an integer 0..%u",
		     LB_API_WIDTH_MAX);
		goto out;
	}
	req->width = js != NULL ? (unsigned int)json_integer_value(js) : 0;
	argv = json_object_get(root, "argv");
	apply = json_object_get(root, "apply");
	if ((argv == NULL) == (apply == NULL)) {
		fail(err, errlen, rc,
		     "the request needs exactly one of \"argv\" and "
		     "\"apply\"");
		goto out;
	}
	if (argv != NULL) {
		req->kind = LB_API_ARGV;
		rc = parse_argv(argv, req, err, errlen);
	} else {
		req->kind = LB_API_APPLY;
		rc = parse_apply(apply, json_object_get(root, "name"), req, err,
				 errlen);
	}
out:
	json_decref(root);
	if (rc != 0)
		lb_api_req_free(req);
	return rc;
}

void
lb_api_req_free(struct lb_api_req *req)
{
	if (req == NULL)
		return;
	for (unsigned int i = 0; req->argv != NULL && i < req->argc; i++)
		free(req->argv[i]);
	free(req->argv);
	free(req->apply);
	free(req->name);
	memset(req, 0, sizeof(*req));
}

/* ---- responses ---- */

/* Serialises @p o on one line with a final '\n'; consumes @p o. */
static char *
dump_line(json_t *o, size_t *len)
{
	char *s, *t;
	size_t n;

	if (o == NULL)
		return NULL;
	/* Compact: strings escape their newlines, so the whole response
	 * is one line whatever the text holds. */
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (s == NULL)
		return NULL;
	n = strlen(s);
	t = realloc(s, n + 2);
	if (t == NULL) {
		free(s);
		return NULL;
	}
	t[n] = '\n';
	t[n + 1] = '\0';
	if (len != NULL)
		*len = n + 1;
	return t;
}

/*
 * A copy of @p s jansson accepts (valid UTF-8) and a terminal can print
 * as it is: lbctl writes "text" and "error" to one, and they may quote
 * what a backend or an orchestrator said. Control characters other than
 * newline and tab (escape sequences start with ESC, or with C1 CSI
 * U+009B) become '?'; in a one-line error newline and tab become spaces.
 */
static json_t *
safe_string(const char *s, bool one_line)
{
	char *c = strdup(s != NULL ? s : "");
	json_t *j;

	if (c == NULL)
		return NULL;
	lb_api_utf8_fix(c);
	for (unsigned char *p = (unsigned char *)c; *p != '\0'; p++) {
		if (*p == '\n' || *p == '\t')
			*p = one_line ? ' ' : *p;
		else if (*p < 0x20 || *p == 0x7f)
			*p = one_line ? ' ' : '?';
		else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
			p[0] = p[1] = '?';
	}
	j = json_string(c);
	free(c);
	return j;
}

char *
lb_api_ok(const char *text, json_t *data, size_t *len)
{
	json_t *o = json_object();
	json_t *t = safe_string(text, false);

	if (o == NULL || t == NULL) {
		json_decref(o);
		json_decref(t);
		json_decref(data);
		return NULL;
	}
	if (json_object_set_new(o, "v", json_integer(LB_API_VERSION)) != 0 ||
	    json_object_set_new(o, "ok", json_true()) != 0 ||
	    json_object_set_new(o, "text", t) != 0 ||
	    json_object_set_new(o, "data", data != NULL ? data : json_null()) !=
		    0) {
		json_decref(o);
		return NULL;
	}
	return dump_line(o, len);
}

char *
lb_api_error(int code, const char *msg, size_t *len)
{
	json_t *o = json_object();
	json_t *m = safe_string(msg, true);

	if (o == NULL || m == NULL) {
		json_decref(o);
		json_decref(m);
		return NULL;
	}
	if (code >= 0)
		code = -EINVAL;
	if (json_object_set_new(o, "v", json_integer(LB_API_VERSION)) != 0 ||
	    json_object_set_new(o, "ok", json_false()) != 0 ||
	    json_object_set_new(o, "code", json_integer(code)) != 0 ||
	    json_object_set_new(o, "error", m) != 0) {
		json_decref(o);
		return NULL;
	}
	return dump_line(o, len);
}

char *
lb_api_handle(const struct lb_api_ops *ops, void *ctx, const char *line,
	      size_t len, size_t *rlen, int *code)
{
	char err[LB_CMD_ERR_MAX];
	struct lb_api_req req;
	struct lb_cmd_out out;
	json_t *data = NULL;
	char *resp;
	int rc;

	rc = lb_api_parse(line, len, &req, err, sizeof(err));
	if (code != NULL)
		*code = rc;
	if (rc != 0)
		return lb_api_error(rc, err, rlen);
	lb_cmd_out_init(&out);
	out.width = req.width;
	if (req.kind == LB_API_ARGV)
		rc = ops->exec(ctx, (int)req.argc, req.argv, &out, &data);
	else
		rc = ops->apply(ctx, req.apply, req.apply_len, req.name, &out);
	if (rc == 0 && out.truncated)
		rc = lb_cmd_error(&out, -ENOMEM,
				  "out of memory for the output");
	if (code != NULL)
		*code = rc < 0 ? rc : 0;
	if (rc < 0) {
		const char *m = lb_cmd_out_errmsg(&out);

		json_decref(data);
		resp = lb_api_error(rc, m[0] != '\0' ? m : strerror(-rc), rlen);
	} else {
		resp = lb_api_ok(lb_cmd_out_text(&out), data, rlen);
	}
	lb_cmd_out_free(&out);
	lb_api_req_free(&req);
	return resp;
}

/* ---- line assembly ---- */

void
lb_api_rbuf_init(struct lb_api_rbuf *rb)
{
	memset(rb, 0, sizeof(*rb));
}

void
lb_api_rbuf_free(struct lb_api_rbuf *rb)
{
	if (rb == NULL)
		return;
	free(rb->buf);
	lb_api_rbuf_init(rb);
}

/* Bytes of a line kept: enough to tell that it is too long, even after
 * a '\r' is taken off. */
#define RBUF_KEEP ((size_t)LB_API_LINE_MAX + 2)

static int
rbuf_append(struct lb_api_rbuf *rb, const char *src, size_t n)
{
	if (rb->len + n + 1 > rb->cap) {
		size_t cap = rb->cap < RBUF_MIN_CAP ? RBUF_MIN_CAP : rb->cap;
		char *t;

		while (cap < rb->len + n + 1)
			cap *= 2;
		t = realloc(rb->buf, cap);
		if (t == NULL)
			return -ENOMEM;
		rb->buf = t;
		rb->cap = cap;
	}
	memcpy(rb->buf + rb->len, src, n);
	rb->len += n;
	return 0;
}

int
lb_api_rbuf_feed(struct lb_api_rbuf *rb, const void *p, size_t n)
{
	const char *src = p;
	size_t off = 0;

	if (rb == NULL || (p == NULL && n > 0))
		return -EINVAL;
	/* Lines handed out already are dropped before growing. */
	if (rb->head > 0) {
		memmove(rb->buf, rb->buf + rb->head, rb->len - rb->head);
		rb->len -= rb->head;
		rb->tail -= rb->head;
		rb->head = 0;
	}
	while (off < n) {
		const char *nl = memchr(src + off, '\n', n - off);
		size_t seg = nl != NULL ? (size_t)(nl - (src + off)) : n - off;
		size_t cur = rb->len - rb->tail;
		size_t keep = cur >= RBUF_KEEP	      ? 0
			      : seg < RBUF_KEEP - cur ? seg
						      : RBUF_KEEP - cur;

		if (rbuf_append(rb, src + off, keep) != 0)
			return -ENOMEM;
		if (nl == NULL)
			break;
		if (rbuf_append(rb, "\n", 1) != 0)
			return -ENOMEM;
		rb->tail = rb->len;
		off += seg + 1;
	}
	return 0;
}

int
lb_api_rbuf_next(struct lb_api_rbuf *rb, char **line, size_t *len)
{
	char *start, *nl;
	size_t n;

	if (rb == NULL || rb->buf == NULL || rb->head >= rb->len)
		return 0;
	start = rb->buf + rb->head;
	nl = memchr(start + rb->scan, '\n', rb->len - rb->head - rb->scan);
	if (nl == NULL) {
		rb->scan = rb->len - rb->head;
		return 0;
	}
	n = (size_t)(nl - start);
	*nl = '\0';
	if (n > 0 && start[n - 1] == '\r')
		start[--n] = '\0';
	rb->head = (size_t)(nl - rb->buf) + 1;
	rb->scan = 0;
	if (n > LB_API_LINE_MAX)
		return -E2BIG;
	*line = start;
	*len = n;
	return 1;
}

int
lb_api_rbuf_partial(const struct lb_api_rbuf *rb)
{
	return rb != NULL && rb->len > rb->tail;
}
