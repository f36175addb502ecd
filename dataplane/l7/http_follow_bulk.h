/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_HTTP_FOLLOW_BULK_H
#define LB_HTTP_FOLLOW_BULK_H

/*
 * The lexer's cost is per byte, and most header bytes are in runs that
 * decide nothing: the value of a field that does not frame the message, a
 * reason phrase, a request target, the rest of a field name. These are
 * taken whole here, with the same checks lex() would make byte by byte
 * (line and section limits, NUL and bare CR); the byte that ends a run
 * goes through lex(), so every error and event stays where it was.
 *
 * They sit in a header, static inline, so that feed() (http_follow.c),
 * their only user, keeps them in its translation unit.
 */

#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "http_follow_priv.h"

/* Length of the run at @p p (at most @p n bytes) with no CR, LF or NUL. */
static inline size_t
plain_run(const uint8_t *p, size_t n)
{
	size_t i = 0;

#ifdef __SSE2__
	const __m128i cr = _mm_set1_epi8('\r'), lf = _mm_set1_epi8('\n');
	const __m128i nul = _mm_setzero_si128();

	for (; i + 16 <= n; i += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
		int m = _mm_movemask_epi8(_mm_or_si128(
			_mm_or_si128(_mm_cmpeq_epi8(v, cr), _mm_cmpeq_epi8(v, lf)),
			_mm_cmpeq_epi8(v, nul)));

		if (m != 0)
			return i + (size_t)__builtin_ctz((unsigned int)m);
	}
#endif
	for (; i < n; i++)
		if (p[i] == '\r' || p[i] == '\n' || p[i] == 0)
			break;
	return i;
}

/* Length of the run of tchar (field name) bytes at @p p. */
static inline size_t
tchar_run(const uint8_t *p, size_t n)
{
	size_t i = 0;

	while (i < n && is_tchar(p[i]))
		i++;
	return i;
}

/* Length of the run of request-target bytes (RFC 9112 3.2: no SP, CTL). */
static inline size_t
target_run(const uint8_t *p, size_t n)
{
	size_t i = 0;

	while (i < n && p[i] > 0x20 && p[i] != 0x7f)
		i++;
	return i;
}

#define MIN_SZ(a, b) ((a) < (b) ? (a) : (b))

/* "HTTP/1.d" at the start of a start line's version, and for a status
 * line its " ddd" too, as lex() reads them: 0 for anything else. */
static inline size_t
version_run(struct lb_http_follow_dir *d, bool resp, const uint8_t *p,
	    size_t avail)
{
	if (avail < 8 || memcmp(p, "HTTP/1.", 7) != 0 || p[7] < '0' ||
	    p[7] > '9')
		return 0;
	if (p[7] == '0')
		d->flags |= F_HTTP10;
	d->pos = 8;
	if (!resp || avail < 12 || p[8] != ' ' || p[9] < '1' || p[9] > '9' ||
	    p[10] < '0' || p[10] > '9' || p[11] < '0' || p[11] > '9')
		return 8;
	d->status = (uint16_t)((p[9] - '0') * 100 + (p[10] - '0') * 10 +
			       (p[11] - '0'));
	d->state = DS_SL_CODE;
	d->pos = 3;
	return 12;
}

/* The name bytes b[0..n) continue the field name at name_pos: the
 * candidates they rule out go, as match_name() would for each byte. */
static inline void
match_run(struct lb_http_follow_dir *d, const uint8_t *b, size_t n)
{
	for (unsigned int i = 1; d->cand != 0 && i < FLD_N; i++) {
		size_t len = fld_names[i].len;

		if (!(d->cand & (1u << i)))
			continue;
		if (d->name_pos + n > len) {
			d->cand &= (uint8_t)~(1u << i);
			continue;
		}
		for (size_t k = 0; k < n; k++)
			if ((uint8_t)fld_names[i].name[d->name_pos + k] !=
			    lower(b[k])) {
				d->cand &= (uint8_t)~(1u << i);
				break;
			}
	}
	d->name_pos = (uint8_t)(d->name_pos + n > UINT8_MAX ?
					UINT8_MAX :
					d->name_pos + n);
}

/*
 * A whole field line from its first byte at @p p to its LF, in one step:
 * the usual case, a field that frames nothing, on a line this segment
 * holds whole. @return its length; 0 when the line is not whole here,
 * names a framing field, or meets a limit or anything lex() would reject,
 * so that lex() takes it byte by byte.
 */
static inline size_t
field_line(const struct lb_http_follow *f, const struct lb_http_follow_dir *d,
	   bool resp, const uint8_t *p, size_t avail)
{
	const struct lb_http_follow_conf *cf = &f->prof->conf;
	uint8_t cand = (d->flags & F_TRAILER) ? 0 :
		       resp			 ? CAND_RESP :
						   CAND_REQ;
	size_t nl = tchar_run(p, avail), i, e, line;

	if (nl == 0 || nl == avail || p[nl] != ':')
		return 0;
	for (unsigned int k = 1; k < FLD_N; k++) {
		size_t j = 0;

		if (!(cand & (1u << k)) || nl != fld_names[k].len)
			continue;
		while (j < nl && lower(p[j]) == (uint8_t)fld_names[k].name[j])
			j++;
		if (j == nl)
			return 0;
	}
	for (i = nl + 1; i < avail && (p[i] == ' ' || p[i] == '\t'); i++)
		;
	e = i + plain_run(p + i, avail - i);
	if (e == avail || p[e] == 0)
		return 0;
	line = e;
	if (p[e] == '\r') {
		if (e + 1 == avail || p[e + 1] != '\n')
			return 0;
		e += 2;
	} else {
		if (cf->reject_bare_lf)
			return 0;
		e += 1;
	}
	if (line > cf->max_line || e > cf->max_head - d->sec_len)
		return 0;
	return e;
}

/*
 * Takes the run at @p p that the state of @p d allows in bulk, within the
 * line and section limits. @return the bytes taken; 0 when the next byte
 * is for lex().
 */
static inline size_t
bulk(const struct lb_http_follow *f, struct lb_http_follow_dir *d, bool resp,
     const uint8_t *p, size_t avail)
{
	const struct lb_http_follow_conf *cf;
	bool head = (d->flags & (F_IN_HEAD | F_TRAILER)) != 0;
	size_t n, room;

	switch (d->state) {
	case DS_FLD_START:
		if (!head)
			return 0;
		/* A line starts here (line_len 0) and the next one will
		 * start in the same state. */
		n = field_line(f, d, resp, p, avail);
		d->sec_len += (uint32_t)n;
		return n;
	case DS_FLD_VALUE:
		if (d->fld != FLD_OTHER)
			return 0;
		break;
	case DS_SL_REASON:
	case DS_CHK_EXT:
	case DS_FLD_NAME:
	case DS_RL_TARGET:
	case DS_RL_METHOD:
		break;
	case DS_RL_VERSION:
	case DS_SL_VERSION:
		if (d->pos != 0 || avail < 8)
			return 0;
		break;
	default:
		return 0;
	}
	cf = &f->prof->conf;
	room = cf->max_line - d->line_len;
	if (head && cf->max_head - d->sec_len < room)
		room = cf->max_head - d->sec_len;
	if (avail > room)
		avail = room;
	switch (d->state) {
	case DS_FLD_NAME:
		n = tchar_run(p, avail);
		match_run(d, p, n);
		break;
	case DS_RL_TARGET:
		n = target_run(p, avail);
		if (n > 0)
			d->pos = 1;
		break;
	case DS_RL_METHOD:
		n = tchar_run(p, avail);
		if (d->pos < sizeof(d->tok))
			memcpy(d->tok + d->pos, p,
			       MIN_SZ(n, sizeof(d->tok) - d->pos));
		d->pos = (uint8_t)(d->pos + n > UINT8_MAX ? UINT8_MAX :
							    d->pos + n);
		break;
	case DS_RL_VERSION:
	case DS_SL_VERSION:
		n = version_run(d, resp, p, avail);
		break;
	default:
		n = plain_run(p, avail);
		break;
	}
	d->line_len += (uint32_t)n;
	if (head)
		d->sec_len += (uint32_t)n;
	return n;
}

#endif /* LB_HTTP_FOLLOW_BULK_H */
