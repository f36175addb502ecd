/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP/1.x framing follower: RFC 9112 sections 2-7 applied to the two
 * byte streams of a forwarded TCP flow, one byte at a time, in fixed
 * state. The lexer (lex() and its helpers) consumes start lines, field
 * lines and chunk framing; feed() skips content in bulk and turns the
 * lexer's section ends into message events.
 */
#include <errno.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "http_follow.h"

/* Parser states of one direction (struct lb_http_follow_dir.state). */
enum {
	DS_IDLE = 0,     /* between messages; stray CR/LF are skipped */
	DS_RL_METHOD,    /* request line */
	DS_RL_TARGET,
	DS_RL_VERSION,
	DS_SL_VERSION,   /* status line */
	DS_SL_CODE,
	DS_SL_REASON,
	DS_FLD_START,    /* first byte of a field line or of the empty line */
	DS_FLD_NAME,
	DS_FLD_OWS,
	DS_FLD_VALUE,
	DS_CR,           /* CR seen: LF must follow; eol says which line */
	DS_BODY_LEN,     /* Content-Length content */
	DS_CHK_SIZE,     /* chunk-size line */
	DS_CHK_BWS,
	DS_CHK_EXT,
	DS_CHK_DATA,
	DS_CHK_DATA_END, /* CRLF after chunk-data */
	DS_BODY_CLOSE,   /* content delimited by the connection close */
};

/* Which line a CR/LF ends. */
enum {
	EOL_START,
	EOL_FIELD,
	EOL_EMPTY,
	EOL_CHK_SIZE,
	EOL_CHK_END,
};

/* lex() result besides 0 (byte consumed) and -reason. */
#define LX_SECTION_END 1

/* struct lb_http_follow_dir.flags */
#define F_IN_HEAD 0x0001    /* inside a header block: bytes reported */
#define F_TRAILER 0x0002    /* inside a trailer section */
#define F_HAS_CL 0x0004
#define F_TE 0x0008         /* a Transfer-Encoding field was present */
#define F_TE_CHUNKED 0x0010 /* "chunked" was listed */
#define F_TE_LAST 0x0020    /* "chunked" is the last coding listed */
#define F_EXPECT 0x0040
#define F_UPGRADE 0x0080
#define F_HTTP10 0x0100
#define F_CHUNKED 0x0200    /* framing chosen: chunked */
#define F_CLOSE 0x0400      /* framing chosen: until close */
#define F_TIMED 0x0800
#define F_INTERIM 0x1000

/* Queue entry flags. */
#define QF_DONE 0x01     /* request's last byte seen */
#define QF_ANSWERED 0x02 /* its final response's head ended */

/* Framing-relevant fields; bit i of dir.cand stands for index i. */
enum {
	FLD_OTHER = 0,
	FLD_CL,
	FLD_TE,
	FLD_UPGRADE,
	FLD_EXPECT,
	FLD_N,
};

static const struct {
	const char *name;
	uint8_t len;
} fld_names[FLD_N] = {
	[FLD_CL] = { "content-length", 14 },
	[FLD_TE] = { "transfer-encoding", 17 },
	[FLD_UPGRADE] = { "upgrade", 7 },
	[FLD_EXPECT] = { "expect", 6 },
};

/* Only requests' Upgrade and Expect fields change the follower's view. */
#define CAND_REQ ((1u << FLD_CL) | (1u << FLD_TE) | (1u << FLD_UPGRADE) | \
		  (1u << FLD_EXPECT))
#define CAND_RESP ((1u << FLD_CL) | (1u << FLD_TE))

/* Content-Length value states (RFC 9110 8.6: 1*DIGIT, lists agreeing). */
enum { VC_START = 0, VC_DIGITS, VC_TRAIL, VC_SEP };
/* Token list states (RFC 9110 5.6.1), parameters and quotes skipped. */
enum { VT_PRE = 0, VT_TOK, VT_SKIP, VT_QUOTE, VT_QESC };
#define TOK_BAD 0xff

/* Bounds far above any real message, so arithmetic never wraps. */
#define CL_MAX (UINT64_C(1) << 62)
#define CHUNK_SHIFT_MAX (UINT64_C(1) << 56)

/* RFC 9110 5.6.2 tchar. */
static const uint8_t tchar_tab[256] = {
	['0' ... '9'] = 1, ['A' ... 'Z'] = 1, ['a' ... 'z'] = 1,
	['!'] = 1, ['#'] = 1, ['$'] = 1, ['%'] = 1, ['&'] = 1, ['\''] = 1,
	['*'] = 1, ['+'] = 1, ['-'] = 1, ['.'] = 1, ['^'] = 1, ['_'] = 1,
	['`'] = 1, ['|'] = 1, ['~'] = 1,
};

static const char *const reason_names[LB_HTTP_FOLLOW_R_MAX] = {
	[LB_HTTP_FOLLOW_OK] = "following",
	[LB_HTTP_FOLLOW_R_SYNTAX] = "syntax",
	[LB_HTTP_FOLLOW_R_FRAMING] = "framing",
	[LB_HTTP_FOLLOW_R_OBS_FOLD] = "obs_fold",
	[LB_HTTP_FOLLOW_R_BARE_LF] = "bare_lf",
	[LB_HTTP_FOLLOW_R_LINE_TOO_LONG] = "line_too_long",
	[LB_HTTP_FOLLOW_R_HEAD_TOO_LONG] = "head_too_long",
	[LB_HTTP_FOLLOW_R_HTTP2] = "http2",
	[LB_HTTP_FOLLOW_R_VERSION] = "version",
	[LB_HTTP_FOLLOW_R_UPGRADE] = "upgrade",
	[LB_HTTP_FOLLOW_R_CONNECT] = "connect",
	[LB_HTTP_FOLLOW_R_QUEUE_FULL] = "queue_full",
	[LB_HTTP_FOLLOW_R_LOST] = "lost",
	[LB_HTTP_FOLLOW_R_TRUNCATED] = "truncated",
};

static inline bool
is_tchar(uint8_t c)
{
	return tchar_tab[c] != 0;
}

static inline uint8_t
lower(uint8_t c)
{
	return (c >= 'A' && c <= 'Z') ? (uint8_t)(c + 32) : c;
}

static inline int
hexval(uint8_t c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = lower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static inline bool
queued(const struct lb_http_follow *f, uint32_t seq)
{
	return seq != 0 &&
	       (uint32_t)(seq - f->q_head) < (uint32_t)(f->q_tail - f->q_head);
}

static inline uint32_t
slot_of(uint32_t seq)
{
	return seq % LB_HTTP_FOLLOW_QUEUE_MAX;
}

/* ---- event helpers ---- */

static void
req_info(const struct lb_http_follow *f, struct lb_http_follow_req *rq)
{
	const struct lb_http_follow_dir *d = &f->req;

	rq->seq = d->seq;
	rq->mclass = d->mclass;
	rq->flags = ((d->flags & F_EXPECT) ? LB_HTTP_FOLLOW_REQ_EXPECT_100 : 0) |
		    ((d->flags & F_UPGRADE) ? LB_HTTP_FOLLOW_REQ_UPGRADE : 0) |
		    ((d->flags & F_HTTP10) ? LB_HTTP_FOLLOW_REQ_HTTP10 : 0) |
		    ((d->flags & F_CHUNKED) ? LB_HTTP_FOLLOW_REQ_CHUNKED : 0);
	rq->head_len = (d->flags & F_IN_HEAD) ? d->sec_len : d->head_len;
	rq->body_len = d->body_len;
	rq->first_ns = d->first_ns;
	rq->done_ns = d->done_ns;
}

static void
resp_info(const struct lb_http_follow *f, struct lb_http_follow_resp *rs)
{
	const struct lb_http_follow_dir *d = &f->resp;
	bool timed = (d->flags & F_TIMED) != 0;

	rs->req_seq = d->seq;
	rs->status = (d->flags & F_IN_HEAD) ? 0 : d->status;
	rs->req_mclass = d->mclass;
	rs->flags = (timed ? LB_HTTP_FOLLOW_RESP_TIMED : 0) |
		    ((d->flags & F_INTERIM) ? LB_HTTP_FOLLOW_RESP_INTERIM : 0) |
		    ((d->flags & F_CHUNKED) ? LB_HTTP_FOLLOW_RESP_CHUNKED : 0) |
		    ((d->flags & F_CLOSE) ? LB_HTTP_FOLLOW_RESP_CLOSE : 0) |
		    ((d->flags & F_HTTP10) ? LB_HTTP_FOLLOW_RESP_HTTP10 : 0);
	rs->head_len = (d->flags & F_IN_HEAD) ? d->sec_len : d->head_len;
	rs->body_len = d->body_len;
	rs->first_ns = d->first_ns;
	rs->done_ns = d->done_ns;
	rs->req_done_ns = timed ? d->peer_ns : 0;
	/* A clock that went backwards gives 0, never a huge latency. */
	rs->latency_ns = (timed && d->first_ns > d->peer_ns) ?
				 d->first_ns - d->peer_ns : 0;
}

enum ev {
	EV_HEAD_START,
	EV_HEAD_END,
	EV_DONE,
};

static void
emit(struct lb_http_follow *f, bool resp, enum ev ev)
{
	const struct lb_http_follow_ops *ops = &f->prof->ops;
	void (*qcb)(void *, const struct lb_http_follow_req *);
	void (*scb)(void *, const struct lb_http_follow_resp *);

	if (resp) {
		struct lb_http_follow_resp rs;

		scb = ev == EV_HEAD_START ? ops->resp_head_start :
		      ev == EV_HEAD_END	  ? ops->resp_head_end :
					    ops->resp_done;
		if (scb != NULL) {
			resp_info(f, &rs);
			scb(f->ctx, &rs);
		}
	} else {
		struct lb_http_follow_req rq;

		qcb = ev == EV_HEAD_START ? ops->req_head_start :
		      ev == EV_HEAD_END	  ? ops->req_head_end :
					    ops->req_done;
		if (qcb != NULL) {
			req_info(f, &rq);
			qcb(f->ctx, &rq);
		}
	}
}

static void
flush(struct lb_http_follow *f, bool resp, const uint8_t *a,
      const uint8_t *b)
{
	const struct lb_http_follow_ops *ops = &f->prof->ops;

	if (a == NULL || b <= a)
		return;
	if (resp && ops->resp_head_bytes != NULL) {
		struct lb_http_follow_resp rs;

		resp_info(f, &rs);
		ops->resp_head_bytes(f->ctx, &rs, a, (size_t)(b - a));
	} else if (!resp && ops->req_head_bytes != NULL) {
		struct lb_http_follow_req rq;

		req_info(f, &rq);
		ops->req_head_bytes(f->ctx, &rq, a, (size_t)(b - a));
	}
}

static void
die(struct lb_http_follow *f, enum lb_http_follow_reason why)
{
	f->reason = (uint8_t)why;
	if (f->stats != NULL)
		f->stats->unfollowable[why]++;
	if (f->prof->ops.unfollowable != NULL)
		f->prof->ops.unfollowable(f->ctx, why);
}

/* ---- lexer ---- */

static int
eol(struct lb_http_follow_dir *d, uint8_t kind);

/* c is CR or LF. */
static int
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

static int
cl_element(struct lb_http_follow_dir *d)
{
	/* RFC 9110 8.6: repeated values must all be the same number. */
	if ((d->flags & F_HAS_CL) && d->clen != d->acc)
		return -LB_HTTP_FOLLOW_R_FRAMING;
	d->clen = d->acc;
	d->flags |= F_HAS_CL;
	return 0;
}

static int
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

static bool
tok_is(const struct lb_http_follow_dir *d, uint8_t n, const char *s)
{
	return n == strlen(s) && memcmp(d->tok, s, n) == 0;
}

static int
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

static int
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

static int
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

static void
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

static void
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

static int
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
static int
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

static uint8_t
method_class(const struct lb_http_follow_dir *d)
{
	if (d->pos == 4 && memcmp(d->tok, "HEAD", 4) == 0)
		return LB_HTTP_FOLLOW_M_HEAD;
	if (d->pos == 7 && memcmp(d->tok, "CONNECT", 7) == 0)
		return LB_HTTP_FOLLOW_M_CONNECT;
	return LB_HTTP_FOLLOW_M_OTHER;
}

/*
 * One byte of a line (start line, field line, chunk line or the CRLF
 * after chunk data). Returns 0, LX_SECTION_END after the LF of an empty
 * line, or -reason.
 */
static int
lex(struct lb_http_follow *f, struct lb_http_follow_dir *d, bool resp,
    uint8_t c)
{
	const struct lb_http_follow_conf *cf = &f->prof->conf;
	bool crlf = c == '\r' || c == '\n';
	int h;

	if (!crlf && ++d->line_len > cf->max_line)
		return -LB_HTTP_FOLLOW_R_LINE_TOO_LONG;
	if ((d->flags & (F_IN_HEAD | F_TRAILER)) &&
	    ++d->sec_len > cf->max_head)
		return -LB_HTTP_FOLLOW_R_HEAD_TOO_LONG;

	switch (d->state) {
	case DS_RL_METHOD:
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
		h = hexval(c);
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
	case DS_CHK_BWS:
		if (c == ' ' || c == '\t')
			return 0;
		if (c == ';') {
			d->state = DS_CHK_EXT;
			return 0;
		}
		if (crlf)
			return line_end(f, d, c, EOL_CHK_SIZE);
		return -LB_HTTP_FOLLOW_R_FRAMING;
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

/* ---- bulk runs ---- */

/*
 * The lexer's cost is per byte, and most header bytes are in runs that
 * decide nothing: the value of a field that does not frame the message, a
 * reason phrase, a request target, the rest of a field name. These are
 * taken whole here, with the same checks lex() would make byte by byte
 * (line and section limits, NUL and bare CR); the byte that ends a run
 * goes through lex(), so every error and event stays where it was.
 */

/* Length of the run at @p p (at most @p n bytes) with no CR, LF or NUL. */
static size_t
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
static size_t
tchar_run(const uint8_t *p, size_t n)
{
	size_t i = 0;

	while (i < n && is_tchar(p[i]))
		i++;
	return i;
}

/* Length of the run of request-target bytes (RFC 9112 3.2: no SP, CTL). */
static size_t
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
static size_t
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
static void
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
static size_t
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
static size_t
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

/* ---- messages ---- */

static void
req_done(struct lb_http_follow *f, uint64_t now)
{
	struct lb_http_follow_dir *d = &f->req;

	d->done_ns = now;
	d->state = DS_IDLE;
	/* An early final response may already have retired the entry. */
	if (queued(f, d->seq)) {
		f->q_flags[slot_of(d->seq)] |= QF_DONE;
		f->q_done_ns[slot_of(d->seq)] = now;
	}
	if (f->stats != NULL)
		f->stats->requests++;
	emit(f, false, EV_DONE);
}

static void
resp_done(struct lb_http_follow *f, uint64_t now)
{
	struct lb_http_follow_dir *d = &f->resp;

	d->done_ns = now;
	d->state = DS_IDLE;
	if (f->stats != NULL) {
		if (d->flags & F_INTERIM)
			f->stats->interim++;
		else if (d->seq == 0)
			f->stats->unmatched++;
		else
			f->stats->responses++;
	}
	emit(f, true, EV_DONE);
	/* 1xx responses precede the final one for the same request. */
	if (!(d->flags & F_INTERIM) && d->seq != 0 && d->seq == f->q_head)
		f->q_head++;
}

static int
req_begin(struct lb_http_follow *f, uint64_t now)
{
	struct lb_http_follow_dir *d = &f->req;
	uint32_t s;

	/* Bytes after an Upgrade or CONNECT request, before its verdict,
	 * may already belong to the other protocol. */
	if (f->tunnel_seq != 0)
		return -(int)f->tunnel_reason;
	if (f->q_tail - f->q_head >= f->prof->conf.queue_depth)
		return -LB_HTTP_FOLLOW_R_QUEUE_FULL;
	memset(d, 0, sizeof(*d));
	d->seq = f->q_tail++;
	s = slot_of(d->seq);
	f->q_mclass[s] = LB_HTTP_FOLLOW_M_OTHER;
	f->q_flags[s] = 0;
	f->q_done_ns[s] = 0;
	d->first_ns = now;
	d->flags = F_IN_HEAD;
	d->state = DS_RL_METHOD;
	emit(f, false, EV_HEAD_START);
	return 0;
}

static void
resp_begin(struct lb_http_follow *f, uint64_t now)
{
	struct lb_http_follow_dir *d = &f->resp;

	memset(d, 0, sizeof(*d));
	d->first_ns = now;
	d->flags = F_IN_HEAD;
	d->state = DS_SL_VERSION;
	if (f->q_tail != f->q_head) {
		uint32_t s = slot_of(f->q_head);

		d->seq = f->q_head;
		d->mclass = f->q_mclass[s];
		if (f->q_flags[s] & QF_DONE) {
			d->flags |= F_TIMED;
			d->peer_ns = f->q_done_ns[s];
		}
	}
	emit(f, true, EV_HEAD_START);
}

/* RFC 9112 6.1 and 6.3 items 3-4, shared by both directions. */
static int
te_framing(const struct lb_http_follow *f, struct lb_http_follow_dir *d)
{
	/* 6.1: Transfer-Encoding in HTTP/1.0 means faulty framing. */
	if (d->flags & F_HTTP10)
		return -LB_HTTP_FOLLOW_R_FRAMING;
	if ((d->flags & F_HAS_CL) &&
	    f->prof->conf.te_with_cl == LB_HTTP_FOLLOW_TECL_REJECT)
		return -LB_HTTP_FOLLOW_R_FRAMING;
	if (d->flags & F_TE_LAST) {
		d->flags |= F_CHUNKED;
		d->acc = 0;
		d->pos = 0;
		d->state = DS_CHK_SIZE;
	}
	return 0;
}

static int
req_head_end(struct lb_http_follow *f, uint64_t now)
{
	struct lb_http_follow_dir *d = &f->req;
	bool body = false;
	int r;

	d->head_len = d->sec_len;
	d->flags &= (uint16_t)~F_IN_HEAD;
	if (d->flags & F_TE) {
		r = te_framing(f, d);
		if (r != 0)
			return r;
		/* 6.3 item 4: a request not ending in chunked is bad. */
		if (!(d->flags & F_CHUNKED))
			return -LB_HTTP_FOLLOW_R_FRAMING;
		body = true;
	} else if ((d->flags & F_HAS_CL) && d->clen != 0) {
		d->remaining = d->clen;
		d->state = DS_BODY_LEN;
		body = true;
	}
	/* RFC 9110 7.8 and 10.1.1: ignored in HTTP/1.0 requests. */
	if (d->flags & F_HTTP10)
		d->flags &= (uint16_t)~(F_EXPECT | F_UPGRADE);
	if ((d->mclass == LB_HTTP_FOLLOW_M_CONNECT || (d->flags & F_UPGRADE)) &&
	    queued(f, d->seq) && !(f->q_flags[slot_of(d->seq)] & QF_ANSWERED)) {
		f->tunnel_seq = d->seq;
		f->tunnel_reason = d->mclass == LB_HTTP_FOLLOW_M_CONNECT ?
					   LB_HTTP_FOLLOW_R_CONNECT :
					   LB_HTTP_FOLLOW_R_UPGRADE;
	}
	emit(f, false, EV_HEAD_END);
	if (!body)
		req_done(f, now);
	return 0;
}

static int
resp_head_end(struct lb_http_follow *f, uint64_t now)
{
	struct lb_http_follow_dir *d = &f->resp;
	uint16_t st = d->status;
	bool body = true;
	int r;

	d->head_len = d->sec_len;
	d->flags &= (uint16_t)~F_IN_HEAD;
	if (queued(f, d->seq))
		d->mclass = f->q_mclass[slot_of(d->seq)];
	if (st == 101) {
		emit(f, true, EV_HEAD_END);
		return -LB_HTTP_FOLLOW_R_UPGRADE;
	}
	if (st < 200) {
		/* RFC 9110 15.2: interim; the request still awaits its
		 * final response. */
		d->flags |= F_INTERIM;
		emit(f, true, EV_HEAD_END);
		resp_done(f, now);
		return 0;
	}
	if (queued(f, d->seq)) {
		f->q_flags[slot_of(d->seq)] |= QF_ANSWERED;
		if (f->tunnel_seq == d->seq)
			f->tunnel_seq = 0;
	}
	/* RFC 9112 6.3 items 1-2. */
	if (d->mclass == LB_HTTP_FOLLOW_M_CONNECT && st / 100 == 2) {
		emit(f, true, EV_HEAD_END);
		return -LB_HTTP_FOLLOW_R_CONNECT;
	}
	if (d->mclass == LB_HTTP_FOLLOW_M_HEAD || st == 204 || st == 304) {
		body = false;
	} else if (d->flags & F_TE) {
		r = te_framing(f, d);
		if (r != 0)
			return r;
		/* 6.3 item 4: not chunked last -> read until close. */
		if (!(d->flags & F_CHUNKED)) {
			d->flags |= F_CLOSE;
			d->state = DS_BODY_CLOSE;
		}
	} else if (d->flags & F_HAS_CL) {
		d->remaining = d->clen;
		d->state = DS_BODY_LEN;
		body = d->clen != 0;
	} else {
		/* 6.3 item 8. */
		d->flags |= F_CLOSE;
		d->state = DS_BODY_CLOSE;
	}
	emit(f, true, EV_HEAD_END);
	if (!body)
		resp_done(f, now);
	return 0;
}

static int
feed(struct lb_http_follow *f, bool resp, const uint8_t *p, size_t len,
     uint64_t now)
{
	struct lb_http_follow_dir *d;
	const uint8_t *end, *hb;
	size_t k;
	int r;

	if (f == NULL || f->prof == NULL || (p == NULL && len != 0))
		return -EINVAL;
	if (f->reason != LB_HTTP_FOLLOW_OK)
		return -EPROTO;
	if (f->closed)
		return -EPIPE;
	if (len == 0)
		return 0;
	d = resp ? &f->resp : &f->req;
	end = p + len;
	hb = (d->flags & F_IN_HEAD) ? p : NULL;
	while (p < end) {
		/* A callback may have reported a loss. */
		if (f->reason != LB_HTTP_FOLLOW_OK)
			return -EPROTO;
		switch (d->state) {
		case DS_IDLE:
			/* RFC 9112 2.2: empty lines before a message. */
			if (*p == '\r' || *p == '\n') {
				p++;
				continue;
			}
			if (resp) {
				resp_begin(f, now);
			} else {
				r = req_begin(f, now);
				if (r != 0)
					goto dead;
			}
			hb = p;
			continue;
		case DS_BODY_LEN:
		case DS_CHK_DATA: {
			size_t n = (size_t)(end - p);

			if (n > d->remaining)
				n = (size_t)d->remaining;
			p += n;
			d->remaining -= n;
			d->body_len += n;
			if (d->remaining != 0)
				continue;
			if (d->state == DS_CHK_DATA)
				d->state = DS_CHK_DATA_END;
			else if (resp)
				resp_done(f, now);
			else
				req_done(f, now);
			continue;
		}
		case DS_BODY_CLOSE:
			d->body_len += (uint64_t)(end - p);
			p = end;
			continue;
		default:
			break;
		}
		k = bulk(f, d, resp, p, (size_t)(end - p));
		if (k > 0) {
			p += k;
			continue;
		}
		r = lex(f, d, resp, *p);
		if (r < 0)
			goto dead;
		p++;
		if (r == 0)
			continue;
		if (d->flags & F_TRAILER) {
			if (resp)
				resp_done(f, now);
			else
				req_done(f, now);
			continue;
		}
		flush(f, resp, hb, p);
		hb = NULL;
		r = resp ? resp_head_end(f, now) : req_head_end(f, now);
		if (r < 0)
			goto dead;
	}
	if (d->flags & F_IN_HEAD)
		flush(f, resp, hb, p);
	return f->reason != LB_HTTP_FOLLOW_OK ? -EPROTO : 0;
dead:
	/* Report the head up to the offending byte, so the events do not
	 * depend on where segments were cut. */
	if (d->flags & F_IN_HEAD)
		flush(f, resp, hb, p);
	die(f, (enum lb_http_follow_reason)-r);
	return -EPROTO;
}

/* ---- public API ---- */

void
lb_http_follow_conf_default(struct lb_http_follow_conf *conf)
{
	if (conf == NULL)
		return;
	memset(conf, 0, sizeof(*conf));
	conf->max_line = LB_HTTP_FOLLOW_MAX_LINE_DEFAULT;
	conf->max_head = LB_HTTP_FOLLOW_MAX_HEAD_DEFAULT;
	conf->queue_depth = LB_HTTP_FOLLOW_QUEUE_MAX;
	conf->reject_bare_lf = false;
	conf->te_with_cl = LB_HTTP_FOLLOW_TECL_REJECT;
}

int
lb_http_follow_prof_init(struct lb_http_follow_prof *prof,
			 const struct lb_http_follow_conf *conf,
			 const struct lb_http_follow_ops *ops)
{
	struct lb_http_follow_conf c;

	if (prof == NULL || ops == NULL)
		return -EINVAL;
	if (conf != NULL)
		c = *conf;
	else
		lb_http_follow_conf_default(&c);
	if (c.te_with_cl != LB_HTTP_FOLLOW_TECL_REJECT &&
	    c.te_with_cl != LB_HTTP_FOLLOW_TECL_TE_WINS)
		return -EINVAL;
	if (c.max_head > LB_HTTP_FOLLOW_MAX_HEAD_CAP ||
	    c.max_line < LB_HTTP_FOLLOW_MAX_LINE_MIN ||
	    c.max_line > c.max_head)
		return -ERANGE;
	if (c.queue_depth < 1 || c.queue_depth > LB_HTTP_FOLLOW_QUEUE_MAX)
		return -ERANGE;
	prof->conf = c;
	prof->ops = *ops;
	return 0;
}

int
lb_http_follow_init(struct lb_http_follow *f,
		    const struct lb_http_follow_prof *prof,
		    struct lb_http_follow_stats *stats, void *ctx)
{
	if (f == NULL || prof == NULL || prof->conf.queue_depth < 1 ||
	    prof->conf.queue_depth > LB_HTTP_FOLLOW_QUEUE_MAX)
		return -EINVAL;
	memset(f, 0, sizeof(*f));
	f->prof = prof;
	f->stats = stats;
	f->ctx = ctx;
	f->q_head = 1;
	f->q_tail = 1;
	return 0;
}

int
lb_http_follow_request(struct lb_http_follow *f, const uint8_t *data,
		       size_t len, uint64_t now_ns)
{
	return feed(f, false, data, len, now_ns);
}

int
lb_http_follow_response(struct lb_http_follow *f, const uint8_t *data,
			size_t len, uint64_t now_ns)
{
	return feed(f, true, data, len, now_ns);
}

int
lb_http_follow_close(struct lb_http_follow *f, uint64_t now_ns)
{
	if (f == NULL || f->prof == NULL)
		return -EINVAL;
	if (f->reason != LB_HTTP_FOLLOW_OK)
		return -EPROTO;
	if (f->closed)
		return -EPIPE;
	f->closed = 1;
	switch (f->resp.state) {
	case DS_IDLE:
		return 0;
	case DS_BODY_CLOSE:
		/* RFC 9112 6.3 item 8: the close ends the content. */
		resp_done(f, now_ns);
		return 0;
	default:
		die(f, LB_HTTP_FOLLOW_R_TRUNCATED);
		return -EPROTO;
	}
}

int
lb_http_follow_lost(struct lb_http_follow *f)
{
	if (f == NULL || f->prof == NULL)
		return -EINVAL;
	if (f->reason == LB_HTTP_FOLLOW_OK)
		die(f, LB_HTTP_FOLLOW_R_LOST);
	return 0;
}

const char *
lb_http_follow_reason_name(enum lb_http_follow_reason r)
{
	if ((unsigned int)r >= LB_HTTP_FOLLOW_R_MAX)
		return "unknown";
	return reason_names[r];
}
