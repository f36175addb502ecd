/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The SNI of a TLS ClientHello: see dataplane/route/tls_sni.h.
 */
#include <errno.h>
#include <string.h>

#include "tls_sni.h"

#define REC_HDR 5
#define REC_HANDSHAKE 22
#define REC_MAX 16384 /* 2^14, RFC 8446 5.1 */
#define HS_HDR 4
#define HS_CLIENT_HELLO 1
#define RANDOM_LEN 32
#define SESSION_ID_MAX 32
/* version, random, and the three vectors at their least. */
#define HELLO_MIN (2 + RANDOM_LEN + 1 + 2 + 2 + 1 + 1)
#define EXT_SERVER_NAME 0x0000
#define EXT_ECH 0xfe0d /* draft-ietf-tls-esni */
#define NAME_HOST 0

/*
 * A reader of the handshake message across the records that carry it.
 * @pos counts the message's bytes read, @end is its length once its
 * header is read: no length inside may reach past it.
 */
struct rd {
	const uint8_t *p;
	size_t len; /* bytes of the prefix */
	size_t off; /* the next byte of the prefix */
	size_t rec; /* bytes left in the current record */
	size_t pos;
	size_t end;
};

static int
next_record(struct rd *r)
{
	const uint8_t *h = r->p + r->off;
	size_t n;

	if (r->len - r->off < REC_HDR)
		return LB_TLS_SNI_NEED_MORE;
	n = (size_t)h[3] << 8 | h[4];
	if (h[0] != REC_HANDSHAKE || h[1] != 3 || n == 0 || n > REC_MAX)
		return LB_TLS_SNI_MALFORMED;
	r->off += REC_HDR;
	r->rec = n;
	return -1;
}

/*
 * Takes @p n bytes of the message into @p dst (NULL: skips them).
 * @return -1 when done, else the verdict that stops the parse
 */
static int
take(struct rd *r, uint8_t *dst, size_t n)
{
	if (n > r->end - r->pos)
		return LB_TLS_SNI_MALFORMED;
	while (n > 0) {
		size_t k = n;
		int v;

		if (r->rec == 0 && (v = next_record(r)) >= 0)
			return v;
		if (k > r->rec)
			k = r->rec;
		if (k > r->len - r->off)
			k = r->len - r->off;
		if (k == 0)
			return LB_TLS_SNI_NEED_MORE;
		if (dst != NULL) {
			memcpy(dst, r->p + r->off, k);
			dst += k;
		}
		r->off += k;
		r->rec -= k;
		r->pos += k;
		n -= k;
	}
	return -1;
}

/* A big-endian number of @p bytes (1 to 3) into @p val. */
static int
take_num(struct rd *r, size_t bytes, size_t *val)
{
	uint8_t b[3];
	int v;

	/* Within the record and the bytes given, as nearly always. */
	if (r->rec >= bytes && r->len - r->off >= bytes &&
	    r->end - r->pos >= bytes) {
		const uint8_t *p = r->p + r->off;

		*val = bytes == 1   ? p[0]
		       : bytes == 2 ? (size_t)p[0] << 8 | p[1]
				    : (size_t)p[0] << 16 | p[1] << 8 | p[2];
		r->off += bytes;
		r->rec -= bytes;
		r->pos += bytes;
		return -1;
	}
	v = take(r, b, bytes);

	*val = 0;
	for (size_t i = 0; v < 0 && i < bytes; i++)
		*val = *val << 8 | b[i];
	return v;
}

/*
 * The length of a vector (@p bytes wide) that must end at or before
 * message offset @p limit, into @p val.
 */
static int
take_len(struct rd *r, size_t bytes, size_t limit, size_t *val)
{
	int v = take_num(r, bytes, val);

	if (v < 0 && *val > limit - r->pos)
		return LB_TLS_SNI_MALFORMED;
	return v;
}

/* The server_name extension's body, @p elen bytes (RFC 6066 3). */
static int
server_name(struct rd *r, size_t elen, struct lb_tls_hello *h)
{
	size_t end = r->pos + elen, list, type, n;
	uint8_t name[LB_HOSTNAME_MAX];
	int v, got = 0, rc;

	if ((v = take_len(r, 2, end, &list)) >= 0)
		return v;
	/* server_name_list<1..2^16-1> fills the extension. */
	if (list == 0 || r->pos + list != end)
		return LB_TLS_SNI_MALFORMED;
	while (r->pos < end) {
		if ((v = take_num(r, 1, &type)) >= 0 ||
		    (v = take_len(r, 2, end, &n)) >= 0)
			return v;
		if (type != NAME_HOST) {
			/* Every deployed parser reads other name types
			 * with the same 16-bit length; none is defined. */
			if ((v = take(r, NULL, n)) >= 0)
				return v;
			continue;
		}
		/* One name per type (RFC 6066 3); a name past 253
		 * characters is not a DNS name. */
		if (got || n == 0 || n > sizeof(name))
			return LB_TLS_SNI_MALFORMED;
		if ((v = take(r, name, n)) >= 0)
			return v;
		rc = lb_hostname_norm(h->sni, name, n, 0);
		if (rc < 0)
			return LB_TLS_SNI_MALFORMED;
		h->sni_len = (uint16_t)rc;
		got = 1;
	}
	return -1;
}

static int
hello(struct rd *r, struct lb_tls_hello *h)
{
	size_t n, type, mlen;
	uint8_t ver[2];
	int v, seen_sni = 0;

	r->end = HS_HDR;
	if ((v = take_num(r, 1, &type)) >= 0 ||
	    (v = take_num(r, 3, &mlen)) >= 0)
		return v;
	if (type != HS_CLIENT_HELLO)
		return LB_TLS_SNI_MALFORMED;
	if (mlen > LB_TLS_HELLO_MAX)
		return LB_TLS_SNI_TOO_LONG;
	if (mlen < HELLO_MIN)
		return LB_TLS_SNI_MALFORMED;
	r->end = HS_HDR + mlen;
	if ((v = take(r, ver, 2)) >= 0)
		return v;
	if (ver[0] != 3)
		return LB_TLS_SNI_MALFORMED;
	if ((v = take(r, NULL, RANDOM_LEN)) >= 0 ||
	    (v = take_len(r, 1, r->end, &n)) >= 0)
		return v;
	if (n > SESSION_ID_MAX)
		return LB_TLS_SNI_MALFORMED;
	if ((v = take(r, NULL, n)) >= 0 ||
	    (v = take_len(r, 2, r->end, &n)) >= 0)
		return v;
	if (n < 2 || n % 2 != 0)
		return LB_TLS_SNI_MALFORMED;
	if ((v = take(r, NULL, n)) >= 0 ||
	    (v = take_len(r, 1, r->end, &n)) >= 0)
		return v;
	if (n < 1)
		return LB_TLS_SNI_MALFORMED;
	if ((v = take(r, NULL, n)) >= 0)
		return v;
	/* No extensions at all: a hello of TLS 1.0 to 1.2 may end here. */
	if (r->pos == r->end)
		return LB_TLS_SNI_NONE;
	if ((v = take_len(r, 2, r->end, &n)) >= 0)
		return v;
	if (r->pos + n != r->end)
		return LB_TLS_SNI_MALFORMED;
	while (r->pos < r->end) {
		if ((v = take_num(r, 2, &type)) >= 0 ||
		    (v = take_len(r, 2, r->end, &n)) >= 0)
			return v;
		if (type == EXT_SERVER_NAME) {
			/* RFC 8446 4.2: one extension of each type. */
			if (seen_sni)
				return LB_TLS_SNI_MALFORMED;
			seen_sni = 1;
			v = server_name(r, n, h);
		} else {
			h->ech |= type == EXT_ECH;
			v = take(r, NULL, n);
		}
		if (v >= 0)
			return v;
	}
	return h->sni_len > 0 ? LB_TLS_SNI_FOUND : LB_TLS_SNI_NONE;
}

int
lb_tls_sni(const uint8_t *p, size_t len, struct lb_tls_hello *out)
{
	struct rd r = {.p = p, .len = len};
	struct lb_tls_hello h;
	int v;

	if (len == 0)
		return LB_TLS_SNI_NEED_MORE;
	/* An SSL 2.0 record (top bit set) or anything else that is not a
	 * handshake record of version 3.x. */
	if (p[0] != REC_HANDSHAKE || (len > 1 && p[1] != 3))
		return LB_TLS_SNI_NOT_TLS;
	h.sni_len = 0;
	h.ech = 0;
	v = hello(&r, &h);
	if (v == LB_TLS_SNI_FOUND || v == LB_TLS_SNI_NONE) {
		if (v == LB_TLS_SNI_NONE)
			h.sni[0] = '\0';
		h.used = (uint32_t)r.off;
		*out = h;
	}
	return v;
}

const char *
lb_tls_sni_verdict_name(int v)
{
	static const char *const names[LB_TLS_SNI_VERDICTS] = {
		[LB_TLS_SNI_NEED_MORE] = "need_more",
		[LB_TLS_SNI_FOUND] = "found",
		[LB_TLS_SNI_NONE] = "none",
		[LB_TLS_SNI_NOT_TLS] = "not_tls",
		[LB_TLS_SNI_MALFORMED] = "malformed",
		[LB_TLS_SNI_TOO_LONG] = "too_long",
	};

	return v >= 0 && v < LB_TLS_SNI_VERDICTS ? names[v] : "?";
}
