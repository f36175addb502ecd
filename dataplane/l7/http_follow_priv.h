/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_HTTP_FOLLOW_PRIV_H
#define LB_HTTP_FOLLOW_PRIV_H

/*
 * What the parts of the HTTP/1.x follower share: the parser states of one
 * direction, its flags, the framing-relevant field names, and the small
 * character and queue helpers. The lexer (http_follow_lex.h), its bulk
 * runs (http_follow_bulk.h) and the exchange state machine
 * (http_follow.c) all read and write struct lb_http_follow_dir through
 * these names; they are private to the follower.
 */

#include <stdbool.h>
#include <stdint.h>

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

#define NAME_CL "content-length"
#define NAME_TE "transfer-encoding"
#define NAME_UPGRADE "upgrade"
#define NAME_EXPECT "expect"
#define NAME_LEN(n) (sizeof(n) - 1)

static const struct {
	const char *name;
	uint8_t len;
} fld_names[FLD_N] = {
	[FLD_CL] = { NAME_CL, NAME_LEN(NAME_CL) },
	[FLD_TE] = { NAME_TE, NAME_LEN(NAME_TE) },
	[FLD_UPGRADE] = { NAME_UPGRADE, NAME_LEN(NAME_UPGRADE) },
	[FLD_EXPECT] = { NAME_EXPECT, NAME_LEN(NAME_EXPECT) },
};

/* Bit n: one of the names is n octets long. Their lengths differ, so a
 * name's length picks the one it may be. */
#define FLD_LENS ((1u << NAME_LEN(NAME_CL)) | (1u << NAME_LEN(NAME_TE)) | \
		  (1u << NAME_LEN(NAME_UPGRADE)) | \
		  (1u << NAME_LEN(NAME_EXPECT)))
_Static_assert(__builtin_popcount(FLD_LENS) == FLD_N - 1,
	       "framing names of distinct lengths");

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

#endif /* LB_HTTP_FOLLOW_PRIV_H */
