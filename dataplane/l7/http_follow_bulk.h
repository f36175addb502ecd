/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_HTTP_FOLLOW_BULK_H
#define LB_HTTP_FOLLOW_BULK_H

/*
 * The lexer's cost is per byte, and most header bytes are in runs that
 * decide nothing: the value of a field that does not frame the message, a
 * reason phrase, a request target, the rest of a field name. These are
 * taken whole here, with the same checks lex() would make byte by byte
 * (line and section limits, NUL and bare CR); the byte that ends a run
 * goes through lex(), so every error and event stays where it was. When
 * a segment holds whole lines, as it mostly does, a start line, a
 * Content-Length of one number and every field line that frames nothing
 * are taken a line at a time, the field lines in one loop; anything else
 * on such a line (another framing field, a limit, an error) leaves the
 * line to lex() from its first byte, which decides it as always.
 *
 * They sit in a header, static inline, so that feed() (http_follow.c),
 * their only user, keeps them in its translation unit.
 */

#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "http_follow_lex.h"
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
 * The line end at @p p[e] (@p avail bytes from the line's start): its
 * length with CRLF (or a lone LF, when taken), or 0 when the line is not
 * whole here or lex() is to decide. @p e is the line's length without it.
 */
static inline size_t
line_crlf(const struct lb_http_follow_conf *cf, const uint8_t *p, size_t e,
	  size_t avail)
{
	if (e >= avail)
		return 0;
	if (p[e] == '\r')
		return e + 1 < avail && p[e + 1] == '\n' ? e + 2 : 0;
	return p[e] == '\n' && !cf->reject_bare_lf ? e + 1 : 0;
}

/*
 * A Content-Length value at @p p (@p n bytes, up to its line end) that is
 * one number, blank space around it: into @p acc. The value lex() would
 * parse otherwise (a list, a digit too many), or reject, gives false.
 * @p trail says whether blank space followed the digits.
 */
static inline bool
cl_value(const uint8_t *p, size_t n, uint64_t *acc, bool *trail)
{
	size_t i = 0;
	uint64_t v = 0;

	if (n == 0 || p[0] < '0' || p[0] > '9')
		return false;
	for (; i < n && p[i] >= '0' && p[i] <= '9'; i++) {
		if (v > (CL_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(p[i] - '0');
	}
	*trail = i < n;
	for (; i < n; i++)
		if (p[i] != ' ' && p[i] != '\t')
			return false;
	*acc = v;
	return true;
}

/*
 * A whole field line from its first byte at @p p to its LF, in one step:
 * the usual case, a field that frames nothing or a Content-Length of one
 * number, on a line this segment holds whole. @return its length; 0 when
 * the line is not whole here, names another framing field, or meets a
 * limit or anything lex() would reject, so that lex() takes it byte by
 * byte. A Content-Length leaves @p d as lex() would.
 */
static inline size_t
field_line(const struct lb_http_follow *f, struct lb_http_follow_dir *d,
	   bool resp, const uint8_t *p, size_t avail)
{
	const struct lb_http_follow_conf *cf = &f->prof->conf;
	uint8_t cand = (d->flags & F_TRAILER) ? 0 :
		       resp			 ? CAND_RESP :
						   CAND_REQ;
	size_t nl = tchar_run(p, avail), i, e, line;
	unsigned int fld = FLD_OTHER;
	uint64_t acc = 0;
	bool trail = false;

	if (nl == 0 || nl == avail || p[nl] != ':')
		return 0;
	if (cand != 0 && nl < 32 && ((FLD_LENS >> nl) & 1u)) {
		for (unsigned int k = 1; k < FLD_N; k++) {
			size_t j = 0;

			if (!(cand & (1u << k)) || nl != fld_names[k].len)
				continue;
			while (j < nl &&
			       lower(p[j]) == (uint8_t)fld_names[k].name[j])
				j++;
			if (j == nl) {
				if (k != FLD_CL)
					return 0;
				fld = k;
			}
			break;
		}
	}
	for (i = nl + 1; i < avail && (p[i] == ' ' || p[i] == '\t'); i++)
		;
	e = i + plain_run(p + i, avail - i);
	if (e == avail || p[e] == 0)
		return 0;
	line = e;
	if (fld == FLD_CL) {
		/* RFC 9110 8.6: repeated values must all be the same. */
		if (!cl_value(p + i, e - i, &acc, &trail) ||
		    ((d->flags & F_HAS_CL) && d->clen != acc))
			return 0;
	}
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
	if (fld == FLD_CL) {
		d->fld = FLD_CL;
		d->cand = 1u << FLD_CL;
		d->name_pos = (uint8_t)nl;
		d->vstate = trail ? VC_TRAIL : VC_DIGITS;
		d->tok_len = 0;
		d->acc = acc;
		d->clen = acc;
		d->flags |= F_HAS_CL;
	}
	return e;
}

/* A whole start line of @p e octets taken: on to the field lines. */
static inline size_t
start_line_end(struct lb_http_follow_dir *d, size_t e)
{
	d->eol = EOL_START;
	d->line_len = 0;
	d->state = DS_FLD_START;
	d->sec_len += (uint32_t)e;
	return e;
}

/*
 * A whole request line in one step: method SP target SP "HTTP/1.d" and
 * its end, left in @p d as lex() leaves it. @return its length; 0 when
 * it is not whole here or is anything else (HTTP/2's preface, another
 * version, a limit met, a syntax error): lex() and the runs below take
 * it then.
 */
static inline size_t
request_line(struct lb_http_follow *f, struct lb_http_follow_dir *d,
	     const uint8_t *p, size_t avail)
{
	const struct lb_http_follow_conf *cf = &f->prof->conf;
	size_t m = tchar_run(p, avail), t, v, e;

	if (m == 0 || m + 1 >= avail || p[m] != ' ')
		return 0;
	t = target_run(p + m + 1, avail - m - 1);
	v = m + 1 + t;
	if (t == 0 || v + 9 > avail || p[v] != ' ' ||
	    memcmp(p + v + 1, "HTTP/1.", 7) != 0 || p[v + 8] < '0' ||
	    p[v + 8] > '9')
		return 0;
	e = line_crlf(cf, p, v + 9, avail);
	if (e == 0 || v + 9 > cf->max_line || e > cf->max_head - d->sec_len)
		return 0;
	memcpy(d->tok, p, MIN_SZ(m, sizeof(d->tok)));
	d->pos = (uint8_t)(m > UINT8_MAX ? UINT8_MAX : m);
	d->mclass = method_class(d);
	if (queued(f, d->seq))
		f->q_mclass[slot_of(d->seq)] = d->mclass;
	if (p[v + 8] == '0')
		d->flags |= F_HTTP10;
	d->pos = 8;
	return start_line_end(d, e);
}

/*
 * A whole status line in one step: "HTTP/1.d" SP 3DIGIT, then SP and a
 * reason or nothing, and its end, left in @p d as lex() leaves it.
 * @return its length, or 0 as request_line().
 */
static inline size_t
status_line(const struct lb_http_follow *f, struct lb_http_follow_dir *d,
	    const uint8_t *p, size_t avail)
{
	const struct lb_http_follow_conf *cf = &f->prof->conf;
	size_t r = 12, e;

	if (avail < 14 || memcmp(p, "HTTP/1.", 7) != 0 || p[7] < '0' ||
	    p[7] > '9' || p[8] != ' ' || p[9] < '1' || p[9] > '9' ||
	    p[10] < '0' || p[10] > '9' || p[11] < '0' || p[11] > '9')
		return 0;
	if (p[12] == ' ') {
		r = 13 + plain_run(p + 13, avail - 13);
		if (r < avail && p[r] == 0)
			return 0;
	}
	e = line_crlf(cf, p, r, avail);
	if (e == 0 || r > cf->max_line || e > cf->max_head - d->sec_len)
		return 0;
	if (p[7] == '0')
		d->flags |= F_HTTP10;
	d->status = (uint16_t)((p[9] - '0') * 100 + (p[10] - '0') * 10 +
			       (p[11] - '0'));
	d->pos = 3;
	return start_line_end(d, e);
}

/*
 * Takes the run at @p p that the state of @p d allows in bulk, within the
 * line and section limits. @return the bytes taken; 0 when the next byte
 * is for lex().
 */
static inline size_t
bulk(struct lb_http_follow *f, struct lb_http_follow_dir *d, bool resp,
     const uint8_t *p, size_t avail)
{
	const struct lb_http_follow_conf *cf;
	bool head = (d->flags & (F_IN_HEAD | F_TRAILER)) != 0;
	size_t n, room, k;

	switch (d->state) {
	case DS_FLD_START:
		if (!head)
			return 0;
		/* A line starts here (line_len 0) and the next one will
		 * start in the same state: as many as are whole. */
		for (n = 0; n < avail; n += k) {
			k = field_line(f, d, resp, p + n, avail - n);
			if (k == 0)
				break;
			d->sec_len += (uint32_t)k;
		}
		return n;
	case DS_RL_METHOD:
		if (d->pos == 0) {
			n = request_line(f, d, p, avail);
			if (n > 0)
				return n;
		}
		break;
	case DS_SL_VERSION:
		if (d->pos == 0) {
			n = status_line(f, d, p, avail);
			if (n > 0)
				return n;
		}
		if (d->pos != 0 || avail < 8)
			return 0;
		break;
	case DS_FLD_VALUE:
		if (d->fld != FLD_OTHER)
			return 0;
		break;
	case DS_SL_REASON:
	case DS_CHK_EXT:
	case DS_FLD_NAME:
	case DS_RL_TARGET:
		break;
	case DS_RL_VERSION:
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
