/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What content routing reads from a client before choosing a pool: the
 * first bytes of a TLS connection (tls_sni) or of an HTTP/1.x one
 * (http_head).
 *
 * Input: a first byte choosing the part, then
 * - stream (0): the bytes as the client sent them;
 * - message (1): a record size byte, then a handshake message that is
 *   put in records of that size and in one record;
 * - HTTP (2): two bytes of the bound, then the request head as sent;
 * - rules (3): lines of route rules as lbctl would pass them.
 * Invariants: a verdict, once given on a prefix, is the verdict of every
 *   longer prefix, and FOUND or NONE come with the same name; a name
 *   found is a lower-case DNS name of 1 to 253 characters that reads back
 *   as itself; the hello ends within the bytes given; the verdict and the
 *   name do not depend on how the message is cut into records. A
 *   request head found ends with an empty line within the bytes and the
 *   bound, its method and path are within it (or the path is "/"), its
 *   host a lower-case name or literal, and it is found the same from
 *   its bytes alone and under a bound of its length; not under less. A
 *   rule read has a lower-case name, a path that starts with '/', a
 *   known pool, and a request made to its measure is matched by it or
 *   by a rule before it.
 *   Every
 *   parse is of a buffer of the exact size: a read past it is an
 *   AddressSanitizer report.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "hostname.h"
#include "http_head.h"
#include "route_rules.h"
#include "tls_sni.h"

#define REC_MAX 16384

static uint8_t *
dup_exact(const uint8_t *p, size_t n)
{
	uint8_t *b = malloc(n ? n : 1);

	FUZZ_CHECK(b != NULL);
	memcpy(b, p, n);
	return b;
}

static int
sni_at(const uint8_t *p, size_t n, struct lb_tls_hello *h)
{
	uint8_t *b = dup_exact(p, n);
	int v = lb_tls_sni(b, n, h);

	free(b);
	FUZZ_CHECK(v >= 0 && v < LB_TLS_SNI_VERDICTS);
	return v;
}

static void
check_hello(int v, const struct lb_tls_hello *h, size_t n)
{
	char back[LB_HOSTNAME_MAX + 1];

	if (v != LB_TLS_SNI_FOUND && v != LB_TLS_SNI_NONE)
		return;
	FUZZ_CHECK(h->used <= n);
	if (v == LB_TLS_SNI_NONE) {
		FUZZ_CHECK(h->sni_len == 0 && h->sni[0] == '\0');
		return;
	}
	FUZZ_CHECK(h->sni_len >= 1 && h->sni_len <= LB_HOSTNAME_MAX);
	FUZZ_CHECK(strlen(h->sni) == h->sni_len);
	FUZZ_CHECK(lb_hostname_norm(back, h->sni, h->sni_len, 0) ==
		   h->sni_len);
	FUZZ_CHECK(memcmp(back, h->sni, h->sni_len) == 0);
}

static int
same(int v, const struct lb_tls_hello *a, int w,
     const struct lb_tls_hello *b)
{
	if (v != w)
		return 0;
	if (v == LB_TLS_SNI_FOUND)
		return a->ech == b->ech && strcmp(a->sni, b->sni) == 0;
	if (v == LB_TLS_SNI_NONE)
		return a->ech == b->ech;
	return 1;
}

static void
stream(const uint8_t *p, size_t n)
{
	struct lb_tls_hello all, part;
	int v = sni_at(p, n, &all), w;

	check_hello(v, &all, n);
	/* A few prefixes: whole re-parses of every one would make each
	 * input quadratic. */
	for (size_t cut = n / 3; cut < n; cut += (n - cut + 1) / 2) {
		w = sni_at(p, cut, &part);
		check_hello(w, &part, cut);
		if (w != LB_TLS_SNI_NEED_MORE)
			FUZZ_CHECK(same(w, &part, v, &all));
	}
}

/* The message @p m in records of at most @p k bytes. */
static size_t
put_records(uint8_t *out, const uint8_t *m, size_t n, size_t k)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i += k) {
		size_t len = n - i < k ? n - i : k;

		out[o++] = 22;
		out[o++] = 3;
		out[o++] = 1;
		out[o++] = (uint8_t)(len >> 8);
		out[o++] = (uint8_t)len;
		memcpy(out + o, m + i, len);
		o += len;
	}
	return o;
}

static void
message(struct fuzz_in *in)
{
	size_t k = fuzz_take(in) % 64 + 1, n = in->n, recs;
	struct lb_tls_hello one, many;
	uint8_t *a, *b;
	size_t la, lb;
	int v, w;

	if (n == 0 || n > REC_MAX)
		return;
	recs = (n + k - 1) / k;
	a = malloc(n + 5);
	b = malloc(n + 5 * recs);
	FUZZ_CHECK(a != NULL && b != NULL);
	la = put_records(a, in->p, n, n);
	lb = put_records(b, in->p, n, k);
	v = sni_at(a, la, &one);
	w = sni_at(b, lb, &many);
	check_hello(v, &one, la);
	check_hello(w, &many, lb);
	FUZZ_CHECK(same(v, &one, w, &many));
	free(a);
	free(b);
}

static int
head_at(const uint8_t *p, size_t n, size_t max, struct lb_http_req *q)
{
	uint8_t *b = dup_exact(p, n);
	int v = lb_http_head(b, n, max, q);

	/* The pointers found point into @p p, not the copy. */
	if (v == LB_HTTP_HEAD_FOUND) {
		q->method = p + (q->method - b);
		if (q->path_len != 1 || q->path[0] != '/' ||
		    (q->path >= b && q->path < b + n))
			q->path = p + (q->path - b);
	}
	free(b);
	FUZZ_CHECK(v >= 0 && v < LB_HTTP_HEAD_VERDICTS);
	return v;
}

static int
same_req(const struct lb_http_req *a, const struct lb_http_req *b)
{
	return a->method == b->method && a->method_len == b->method_len &&
	       a->path_len == b->path_len &&
	       memcmp(a->path, b->path, a->path_len) == 0 &&
	       a->minor == b->minor && a->head_len == b->head_len &&
	       strcmp(a->host, b->host) == 0;
}

static void
check_req(const uint8_t *p, size_t n, size_t max, const struct lb_http_req *q)
{
	const uint8_t *end = p + q->head_len;

	FUZZ_CHECK(q->head_len <= n && q->head_len <= max);
	FUZZ_CHECK(q->head_len >= 2 && end[-1] == '\n' &&
		   (end[-2] == '\n' || (end[-2] == '\r' && end[-3] == '\n')));
	FUZZ_CHECK(q->method >= p && q->method + q->method_len < end);
	FUZZ_CHECK(q->method_len >= 1 && q->method_len <= LB_HTTP_METHOD_MAX);
	FUZZ_CHECK((q->path >= p && q->path + q->path_len < end) ||
		   (q->path_len == 1 && q->path[0] == '/'));
	FUZZ_CHECK(memchr(q->path, '?', q->path_len) == NULL);
	FUZZ_CHECK(q->minor <= 9);
	FUZZ_CHECK(strlen(q->host) == q->host_len);
	for (size_t i = 0; i < q->host_len; i++)
		FUZZ_CHECK(!(q->host[i] >= 'A' && q->host[i] <= 'Z'));
}

static void
http(struct fuzz_in *in)
{
	size_t max = (size_t)fuzz_take(in) << 8 | fuzz_take(in), n = in->n;
	const uint8_t *p = in->p;
	struct lb_http_req all, part;
	int v = head_at(p, n, max, &all), w;

	for (size_t cut = n / 3; cut < n; cut += (n - cut + 1) / 2) {
		w = head_at(p, cut, max, &part);
		if (w != LB_HTTP_HEAD_NEED_MORE)
			FUZZ_CHECK(w == v);
		if (w == LB_HTTP_HEAD_FOUND)
			FUZZ_CHECK(same_req(&part, &all));
	}
	if (v != LB_HTTP_HEAD_FOUND)
		return;
	check_req(p, n, max, &all);
	w = head_at(p, all.head_len, all.head_len, &part);
	FUZZ_CHECK(w == LB_HTTP_HEAD_FOUND && same_req(&part, &all));
	w = head_at(p, n, all.head_len - 1, &part);
	FUZZ_CHECK(w != LB_HTTP_HEAD_FOUND && w != LB_HTTP_HEAD_NEED_MORE);
}

#define RULES_MAX 64

static const char *const pools[] = {"web", "api", "static"};

/* A request (or SNI) that rule @p r matches by its own conditions; the
 * flat block @p f, when given, must answer as the table. */
static int
own_match(const struct lb_route_table *t, const struct lb_route_flat *f,
	  const struct lb_route_rule *r)
{
	static const char tail[] = "tail";
	struct lb_http_req q = {.method = (const uint8_t *)"GET",
				.method_len = 3};
	char path[LB_ROUTE_PATH_MAX + sizeof(tail)];
	size_t n = 0;

	if (r->name_cmp == LB_ROUTE_SUFFIX)
		q.host[n++] = 'x';
	memcpy(q.host + n, r->name, r->name_len);
	q.host_len = (uint16_t)(n + r->name_len);
	q.host[q.host_len] = '\0';
	if (r->proto == LB_ROUTE_TLS) {
		int m = lb_route_match_sni(t, q.host, q.host_len);

		FUZZ_CHECK(f == NULL ||
			   lb_route_flat_match_sni(f, q.host, q.host_len) == m);
		return m;
	}
	if (r->method_len) {
		q.method = (const uint8_t *)r->method;
		q.method_len = r->method_len;
	}
	memcpy(path, r->path, r->path_len);
	q.path_len = r->path_len;
	if (r->path_cmp == LB_ROUTE_PREFIX) {
		memcpy(path + r->path_len, tail, sizeof(tail) - 1);
		q.path_len = (uint16_t)(q.path_len + sizeof(tail) - 1);
	}
	q.path = (const uint8_t *)path;
	{
		int m = lb_route_match_http(t, &q);

		FUZZ_CHECK(f == NULL || lb_route_flat_match_http(f, &q) == m);
		return m;
	}
}

static void
rules(const uint8_t *p, size_t n)
{
	static struct lb_route_rule r[RULES_MAX];
	static struct lb_route_flat flat;
	struct lb_route_action def = {LB_ROUTE_RST, 0};
	struct lb_route_table *t;
	char line[1100], err[128];
	unsigned int nr = 0;
	size_t i = 0;
	int rc;

	while (i < n && nr < RULES_MAX) {
		size_t k = 0;

		while (i < n && p[i] != '\n' && k < sizeof(line) - 1)
			line[k++] = (char)p[i++];
		line[k] = '\0';
		i++;
		rc = lb_route_parse(line, pools, 3, &r[nr], &def, err,
				    sizeof(err));
		FUZZ_CHECK(rc == LB_ROUTE_LINE_RULE ||
			   rc == LB_ROUTE_LINE_DEFAULT || rc == -EINVAL);
		FUZZ_CHECK(def.what <= LB_ROUTE_REFUSE_421 && def.pool < 3);
		if (rc != LB_ROUTE_LINE_RULE)
			continue;
		FUZZ_CHECK(r[nr].pool < 3);
		FUZZ_CHECK(strlen(r[nr].name) == r[nr].name_len);
		for (size_t j = 0; j < r[nr].name_len; j++)
			FUZZ_CHECK(!(r[nr].name[j] >= 'A' &&
				     r[nr].name[j] <= 'Z'));
		FUZZ_CHECK(r[nr].path_cmp == LB_ROUTE_ANY ||
			   r[nr].path[0] == '/');
		nr++;
	}
	t = lb_route_table_create(r, nr, &def);
	FUZZ_CHECK(t != NULL);
	/* The published table's form, where the rules fit its room. */
	rc = lb_route_flat_compile(r, nr, &def, &flat);
	FUZZ_CHECK(rc == 0 || (nr > LB_ROUTE_FLAT_RULES && rc == -EINVAL) ||
		   rc == -ENOSPC);
	for (unsigned int j = 0; j < nr; j++) {
		int m = own_match(t, rc == 0 ? &flat : NULL, &r[j]);

		FUZZ_CHECK(m >= 0 && m <= (int)j);
	}
	lb_route_table_free(t);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};

	switch (fuzz_take(&in) % 4) {
	case 0:
		stream(in.p, in.n);
		break;
	case 1:
		message(&in);
		break;
	case 2:
		http(&in);
		break;
	default:
		rules(in.p, in.n);
		break;
	}
	return 0;
}
