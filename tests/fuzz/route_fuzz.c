/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What content routing reads from a client before choosing a pool: the
 * first bytes of a TLS connection (tls_sni).
 *
 * Input: a first byte choosing the part, then
 * - stream (0): the bytes as the client sent them;
 * - message (1): a record size byte, then a handshake message that is
 *   put in records of that size and in one record.
 * Invariants: a verdict, once given on a prefix, is the verdict of every
 *   longer prefix, and FOUND or NONE come with the same name; a name
 *   found is a lower-case DNS name of 1 to 253 characters that reads back
 *   as itself; the hello ends within the bytes given; the verdict and the
 *   name do not depend on how the message is cut into records. Every
 *   parse is of a buffer of the exact size: a read past it is an
 *   AddressSanitizer report.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "hostname.h"
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

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};

	switch (fuzz_take(&in) % 2) {
	case 0:
		stream(in.p, in.n);
		break;
	default:
		message(&in);
		break;
	}
	return 0;
}
