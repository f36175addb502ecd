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
 * - HTTP (2): two bytes of the bound, then the request head as sent.
 * Invariants: a verdict, once given on a prefix, is the verdict of every
 *   longer prefix, and FOUND or NONE come with the same name; a name
 *   found is a lower-case DNS name of 1 to 253 characters that reads back
 *   as itself; the hello ends within the bytes given; the verdict and the
 *   name do not depend on how the message is cut into records. A
 *   request head found ends with an empty line within the bytes and the
 *   bound, its method and path are within it (or the path is "/"), its
 *   host a lower-case name or literal, and it is found the same from
 *   its bytes alone and under a bound of its length; not under less.
 *   Every
 *   parse is of a buffer of the exact size: a read past it is an
 *   AddressSanitizer report.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "hostname.h"
#include "http_head.h"
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

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};

	switch (fuzz_take(&in) % 3) {
	case 0:
		stream(in.p, in.n);
		break;
	case 1:
		message(&in);
		break;
	default:
		http(&in);
		break;
	}
	return 0;
}
