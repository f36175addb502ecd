/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_HTTP_FOLLOW_LEX_H
#define LB_HTTP_FOLLOW_LEX_H

/*
 * The lexer of the HTTP/1.x follower: one byte at a time through start
 * lines, field lines (with the values that frame a message parsed on the
 * fly) and chunk framing lines (RFC 9112 sections 2-5 and 7.1). It runs
 * for every byte that the bulk runs (http_follow_bulk.h) do not take, so
 * it lives in a header, static inline, to stay in the one translation
 * unit of feed() (http_follow.c), which is its only user.
 */

#include <string.h>

#include "http_follow_priv.h"

static inline int
eol(struct lb_http_follow_dir *d, uint8_t kind);

/* c is CR or LF. */
static inline int
line_end(const struct lb_http_follow *f, struct lb_http_follow_dir *d,
	 uint8_t c, uint8_t kind)
{
	if (c == '\r') {
		d->eol = kind;
		d->state = DS_CR;
		return 0;
	}
	/* RFC 9112 2.2: a recipient MAY take a lone LF as a terminator. */
	if (f->prof->conf.reject_bare_lf)
		return -LB_HTTP_FOLLOW_R_BARE_LF;
	return eol(d, kind);
}

static inline int
cl_element(struct lb_http_follow_dir *d)
{
	/* RFC 9110 8.6: repeated values must all be the same number. */
	if ((d->flags & F_HAS_CL) && d->clen != d->acc)
		return -LB_HTTP_FOLLOW_R_FRAMING;
	d->clen = d->acc;
	d->flags |= F_HAS_CL;
	return 0;
}

static inline int
cl_byte(struct lb_http_follow_dir *d, uint8_t c)
{
	bool ws = c == ' ' || c == '\t';
	bool digit = c >= '0' && c <= '9';

	switch (d->vstate) {
	case VC_SEP:
		if (ws)
			return 0;
		/* fall through */
	case VC_START:
		if (!digit)
			return -LB_HTTP_FOLLOW_R_FRAMING;
		d->acc = (uint64_t)(c - '0');
		d->vstate = VC_DIGITS;
		return 0;
	case VC_DIGITS:
		if (digit) {
			if (d->acc > (CL_MAX - 9) / 10)
				return -LB_HTTP_FOLLOW_R_FRAMING;
			d->acc = d->acc * 10 + (uint64_t)(c - '0');
			return 0;
		}
		if (ws) {
			d->vstate = VC_TRAIL;
			return 0;
		}
		/* fall through */
	default:
		if (ws)
			return 0;
		if (c != ',')
			return -LB_HTTP_FOLLOW_R_FRAMING;
		d->vstate = VC_SEP;
		return cl_element(d);
	}
}

static inline bool
tok_is(const struct lb_http_follow_dir *d, uint8_t n, const char *s)
{
	return n == strlen(s) && memcmp(d->tok, s, n) == 0;
}

static inline int
list_element(struct lb_http_follow_dir *d)
{
	uint8_t n = d->tok_len;

	d->tok_len = 0;
	if (n == 0)
		return 0;
	if (d->fld == FLD_TE) {
		if (tok_is(d, n, "chunked")) {
			/* RFC 9112 6.1: chunked MUST NOT be applied twice. */
			if (d->flags & F_TE_CHUNKED)
				return -LB_HTTP_FOLLOW_R_FRAMING;
			d->flags |= F_TE_CHUNKED | F_TE_LAST;
		} else {
			d->flags &= ~F_TE_LAST;
		}
	} else if (tok_is(d, n, "100-continue")) {
		d->flags |= F_EXPECT;
	}
	return 0;
}

static inline int
list_byte(struct lb_http_follow_dir *d, uint8_t c)
{
	switch (d->vstate) {
	case VT_PRE:
		if (c == ' ' || c == '\t' || c == ',')
			return 0;
		if (!is_tchar(c)) {
			d->tok_len = TOK_BAD;
			d->vstate = c == '"' ? VT_QUOTE : VT_SKIP;
			return 0;
		}
		d->vstate = VT_TOK;
		/* fall through */
	case VT_TOK:
		if (is_tchar(c)) {
			if (d->tok_len < sizeof(d->tok))
				d->tok[d->tok_len++] = (char)lower(c);
			else
				d->tok_len = TOK_BAD;
			return 0;
		}
		if (c == ',') {
			d->vstate = VT_PRE;
			return list_element(d);
		}
		/* "100-continue=x" is another expectation. */
		if (c == '=')
			d->tok_len = TOK_BAD;
		d->vstate = c == '"' ? VT_QUOTE : VT_SKIP;
		return 0;
	case VT_SKIP:
		if (c == ',') {
			d->vstate = VT_PRE;
			return list_element(d);
		}
		if (c == '"')
			d->vstate = VT_QUOTE;
		return 0;
	case VT_QUOTE:
		if (c == '\\')
			d->vstate = VT_QESC;
		else if (c == '"')
			d->vstate = VT_SKIP;
		return 0;
	default:
		d->vstate = VT_QUOTE;
		return 0;
	}
}

static inline int
value_end(struct lb_http_follow_dir *d)
{
	switch (d->fld) {
	case FLD_CL:
		/* Empty value or trailing comma. */
		if (d->vstate == VC_START || d->vstate == VC_SEP)
			return -LB_HTTP_FOLLOW_R_FRAMING;
		return cl_element(d);
	case FLD_TE:
		if (d->vstate == VT_QUOTE || d->vstate == VT_QESC)
			return -LB_HTTP_FOLLOW_R_FRAMING;
		return list_element(d);
	case FLD_EXPECT:
		return list_element(d);
	default:
		return 0;
	}
}

static inline void
match_name(struct lb_http_follow_dir *d, uint8_t c)
{
	uint8_t lc = lower(c);

	for (unsigned int i = 1; d->cand != 0 && i < FLD_N; i++) {
		if (!(d->cand & (1u << i)))
			continue;
		if (d->name_pos >= fld_names[i].len ||
		    (uint8_t)fld_names[i].name[d->name_pos] != lc)
			d->cand &= (uint8_t)~(1u << i);
	}
	if (d->name_pos < UINT8_MAX)
		d->name_pos++;
}

static inline void
field_begin(struct lb_http_follow_dir *d)
{
	d->fld = FLD_OTHER;
	for (unsigned int i = 1; i < FLD_N; i++)
		if ((d->cand & (1u << i)) && fld_names[i].len == d->name_pos)
			d->fld = (uint8_t)i;
	d->vstate = 0;
	d->tok_len = 0;
	if (d->fld == FLD_TE)
		d->flags |= F_TE;
	else if (d->fld == FLD_UPGRADE)
		d->flags |= F_UPGRADE;
	d->state = DS_FLD_OWS;
}

static inline int
eol(struct lb_http_follow_dir *d, uint8_t kind)
{
	d->line_len = 0;
	switch (kind) {
	case EOL_START:
		d->state = DS_FLD_START;
		return 0;
	case EOL_FIELD:
		d->state = DS_FLD_START;
		return value_end(d);
	case EOL_EMPTY:
		return LX_SECTION_END;
	case EOL_CHK_SIZE:
		if (d->acc == 0) {
			/* last-chunk: a trailer section follows. */
			d->flags |= F_TRAILER;
			d->sec_len = 0;
			d->state = DS_FLD_START;
			return 0;
		}
		d->remaining = d->acc;
		d->state = DS_CHK_DATA;
		return 0;
	default:
		d->acc = 0;
		d->pos = 0;
		d->state = DS_CHK_SIZE;
		return 0;
	}
}

/* "HTTP/" DIGIT "." DIGIT, then CRLF (request) or SP (response). */
static inline int
lex_version(const struct lb_http_follow *f, struct lb_http_follow_dir *d,
	    bool resp, uint8_t c)
{
	static const char http[] = "HTTP/";

	switch (d->pos) {
	case 0: case 1: case 2: case 3: case 4:
		if (c != (uint8_t)http[d->pos])
			return -LB_HTTP_FOLLOW_R_SYNTAX;
		break;
	case 5:
		if (c < '0' || c > '9')
			return -LB_HTTP_FOLLOW_R_SYNTAX;
		/* "PRI * HTTP/2.0": the HTTP/2 connection preface. */
		if (c == '2' && !resp)
			return -LB_HTTP_FOLLOW_R_HTTP2;
		if (c != '1')
			return -LB_HTTP_FOLLOW_R_VERSION;
		break;
	case 6:
		if (c != '.')
			return -LB_HTTP_FOLLOW_R_SYNTAX;
		break;
	case 7:
		if (c < '0' || c > '9')
			return -LB_HTTP_FOLLOW_R_SYNTAX;
		if (c == '0')
			d->flags |= F_HTTP10;
		break;
	default:
		if (resp) {
			if (c != ' ')
				return -LB_HTTP_FOLLOW_R_SYNTAX;
			d->state = DS_SL_CODE;
			d->pos = 0;
			return 0;
		}
		if (c == '\r' || c == '\n')
			return line_end(f, d, c, EOL_START);
		return -LB_HTTP_FOLLOW_R_SYNTAX;
	}
	d->pos++;
	return 0;
}

static inline uint8_t
method_class(const struct lb_http_follow_dir *d)
{
	if (d->pos == 4 && memcmp(d->tok, "HEAD", 4) == 0)
		return LB_HTTP_FOLLOW_M_HEAD;
	if (d->pos == 7 && memcmp(d->tok, "CONNECT", 7) == 0)
		return LB_HTTP_FOLLOW_M_CONNECT;
	return LB_HTTP_FOLLOW_M_OTHER;
}

/* A byte of the method, or the SP after it. */
static inline int
lex_method(struct lb_http_follow *f, struct lb_http_follow_dir *d, uint8_t c)
{
	if (c == ' ' && d->pos > 0) {
		d->mclass = method_class(d);
		if (queued(f, d->seq))
			f->q_mclass[slot_of(d->seq)] = d->mclass;
		d->state = DS_RL_TARGET;
		d->pos = 0;
		return 0;
	}
	if (!is_tchar(c))
		return -LB_HTTP_FOLLOW_R_SYNTAX;
	if (d->pos < sizeof(d->tok))
		d->tok[d->pos] = (char)c;
	if (d->pos < UINT8_MAX)
		d->pos++;
	return 0;
}

/* A byte of the status code, or the SP or line end after it. */
static inline int
lex_status_code(const struct lb_http_follow *f, struct lb_http_follow_dir *d,
		uint8_t c, bool crlf)
{
	if (d->pos == 3) {
		if (c == ' ') {
			d->state = DS_SL_REASON;
			return 0;
		}
		if (crlf)
			return line_end(f, d, c, EOL_START);
		return -LB_HTTP_FOLLOW_R_SYNTAX;
	}
	if (c < '0' || c > '9' || (d->pos == 0 && c == '0'))
		return -LB_HTTP_FOLLOW_R_SYNTAX;
	d->status = (uint16_t)(d->status * 10 + (c - '0'));
	d->pos++;
	return 0;
}

/* A byte of a chunk size, or what ends it. */
static inline int
lex_chunk_size(const struct lb_http_follow *f, struct lb_http_follow_dir *d,
	       uint8_t c, bool crlf)
{
	int h = hexval(c);

	if (h >= 0) {
		if (d->acc >= CHUNK_SHIFT_MAX)
			return -LB_HTTP_FOLLOW_R_FRAMING;
		d->acc = (d->acc << 4) | (uint64_t)h;
		d->pos = 1;
		return 0;
	}
	if (d->pos == 0)
		return -LB_HTTP_FOLLOW_R_FRAMING;
	if (crlf)
		return line_end(f, d, c, EOL_CHK_SIZE);
	if (c == ';') {
		d->state = DS_CHK_EXT;
		return 0;
	}
	if (c == ' ' || c == '\t') {
		d->state = DS_CHK_BWS;
		return 0;
	}
	return -LB_HTTP_FOLLOW_R_FRAMING;
}

/* Blank space after a chunk size (RFC 9112 7.1.1 BWS). */
static inline int
lex_chunk_bws(const struct lb_http_follow *f, struct lb_http_follow_dir *d,
	      uint8_t c, bool crlf)
{
	if (c == ' ' || c == '\t')
		return 0;
	if (c == ';') {
		d->state = DS_CHK_EXT;
		return 0;
	}
	if (crlf)
		return line_end(f, d, c, EOL_CHK_SIZE);
	return -LB_HTTP_FOLLOW_R_FRAMING;
}

/*
 * One byte of a line (start line, field line, chunk line or the CRLF
 * after chunk data). Returns 0, LX_SECTION_END after the LF of an empty
 * line, or -reason.
 */
static inline int
lex(struct lb_http_follow *f, struct lb_http_follow_dir *d, bool resp,
    uint8_t c)
{
	const struct lb_http_follow_conf *cf = &f->prof->conf;
	bool crlf = c == '\r' || c == '\n';

	if (!crlf && ++d->line_len > cf->max_line)
		return -LB_HTTP_FOLLOW_R_LINE_TOO_LONG;
	if ((d->flags & (F_IN_HEAD | F_TRAILER)) &&
	    ++d->sec_len > cf->max_head)
		return -LB_HTTP_FOLLOW_R_HEAD_TOO_LONG;

	switch (d->state) {
	case DS_RL_METHOD:
		return lex_method(f, d, c);
	case DS_RL_TARGET:
		if (c == ' ' && d->pos > 0) {
			d->state = DS_RL_VERSION;
			d->pos = 0;
			return 0;
		}
		if (c <= 0x20 || c == 0x7f)
			return -LB_HTTP_FOLLOW_R_SYNTAX;
		d->pos = 1;
		return 0;
	case DS_RL_VERSION:
	case DS_SL_VERSION:
		return lex_version(f, d, resp, c);
	case DS_SL_CODE:
		return lex_status_code(f, d, c, crlf);
	case DS_SL_REASON:
		if (crlf)
			return line_end(f, d, c, EOL_START);
		return c == 0 ? -LB_HTTP_FOLLOW_R_SYNTAX : 0;
	case DS_FLD_START:
		if (crlf)
			return line_end(f, d, c, EOL_EMPTY);
		/* RFC 9112 5.2 obs-fold (and 2.2 whitespace after the start
		 * line): rejected rather than unfolded. */
		if (c == ' ' || c == '\t')
			return -LB_HTTP_FOLLOW_R_OBS_FOLD;
		if (!is_tchar(c))
			return -LB_HTTP_FOLLOW_R_SYNTAX;
		d->cand = (d->flags & F_TRAILER) ? 0 :
			  resp			 ? CAND_RESP :
						   CAND_REQ;
		d->name_pos = 0;
		d->state = DS_FLD_NAME;
		/* fall through */
	case DS_FLD_NAME:
		if (c == ':') {
			field_begin(d);
			return 0;
		}
		/* RFC 9112 5.1: no whitespace before the colon. */
		if (!is_tchar(c))
			return -LB_HTTP_FOLLOW_R_SYNTAX;
		match_name(d, c);
		return 0;
	case DS_FLD_OWS:
		if (c == ' ' || c == '\t')
			return 0;
		d->state = DS_FLD_VALUE;
		/* fall through */
	case DS_FLD_VALUE:
		if (crlf)
			return line_end(f, d, c, EOL_FIELD);
		/* RFC 9110 5.5: NUL in a value is invalid. */
		if (c == 0)
			return -LB_HTTP_FOLLOW_R_SYNTAX;
		if (d->fld == FLD_CL)
			return cl_byte(d, c);
		if (d->fld == FLD_TE || d->fld == FLD_EXPECT)
			return list_byte(d, c);
		return 0;
	case DS_CR:
		/* RFC 9112 2.2: a bare CR is invalid. */
		if (c != '\n')
			return -LB_HTTP_FOLLOW_R_SYNTAX;
		return eol(d, d->eol);
	case DS_CHK_SIZE:
		return lex_chunk_size(f, d, c, crlf);
	case DS_CHK_BWS:
		return lex_chunk_bws(f, d, c, crlf);
	case DS_CHK_EXT:
		/* chunk-ext never changes the framing: skipped. */
		if (crlf)
			return line_end(f, d, c, EOL_CHK_SIZE);
		return c == 0 ? -LB_HTTP_FOLLOW_R_SYNTAX : 0;
	case DS_CHK_DATA_END:
		if (crlf)
			return line_end(f, d, c, EOL_CHK_END);
		return -LB_HTTP_FOLLOW_R_FRAMING;
	default:
		return -LB_HTTP_FOLLOW_R_SYNTAX;
	}
}

#endif /* LB_HTTP_FOLLOW_LEX_H */
