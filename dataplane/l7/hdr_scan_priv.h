/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_HDR_SCAN_PRIV_H
#define LB_HDR_SCAN_PRIV_H

/*
 * What the three parts of the header scanner share: the database and
 * scratch behind the public handles, the table of kinds, the character
 * classes, and the value parser that the scan calls for each occurrence.
 * The database is built and serialized in hdr_db.c (control side), values
 * are parsed in hdr_value.c, header blocks are scanned in hdr_scan.c.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <hs/hs.h>

#include "lb/hdr_scan.h"

/* The slot of struct lb_hdr_block that holds the status line. */
#define STATUS_SLOT LB_HDR_MAX_FIELDS

/*
 * The names again, for block mode (hdr_scan.c): a line whose first byte
 * is in first[] is compared with the names of the bits it holds, so
 * that most lines cost one table load.
 */
struct lb_hdr_names {
	uint16_t first[256]; /* bit i: name i begins with this byte, any case */
	uint8_t len[LB_HDR_MAX_FIELDS];
	uint8_t lower[LB_HDR_MAX_FIELDS][LB_HDR_NAME_MAX]; /* lower case */
	/* 0x20 where lower[] has a letter: a byte ORed with it is lower[]'s
	 * exactly when it is that letter in either case. */
	uint8_t fold[LB_HDR_MAX_FIELDS][LB_HDR_NAME_MAX];
};

_Static_assert(LB_HDR_MAX_FIELDS <= 16, "one bit per field in first[]");

struct lb_hdr_db {
	hs_database_t *stream_db;
	hs_database_t *block_db;
	struct lb_hdr_cfg cfg;
	struct lb_hdr_names names;
};

struct lb_hdr_scratch {
	hs_scratch_t *hs;
	struct lb_hdr_stats stats;
};

enum parse_as { AS_DECIMAL, AS_UINT, AS_ORCA };

/* What each kind defaults to and how its values are parsed. */
struct lb_hdr_kind_info {
	const char *name;
	enum parse_as as;
	double min;
	double max;
	unsigned int max_len;
};

/** The kinds, indexed by enum lb_hdr_kind (hdr_value.c). */
extern const struct lb_hdr_kind_info lb_hdr_kinds[LB_HDR_KIND_MAX];

static inline bool
is_digit(uint8_t c)
{
	return c >= '0' && c <= '9';
}

static inline bool
is_ows(uint8_t c)
{
	return c == ' ' || c == '\t';
}

static inline bool
is_alnum(uint8_t c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
/* RFC 9110 5.6.2 tchar. */
static inline bool
is_tchar(uint8_t c)
{
	return is_alnum(c) || (c != '\0' && strchr("!#$%&'*+-.^_`|~", c));
}

static inline uint8_t
to_lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

static inline void
reject(struct lb_hdr_value *v, enum lb_hdr_reason r)
{
	v->reason = (uint8_t)r;
	memset(&v->v, 0, sizeof(v->v));
}

/**
 * Decides one occurrence of field @p slot (or STATUS_SLOT) of the block
 * being scanned by @p s. @p p holds the value from its first non-blank
 * byte; @p n is its length up to the end of the line, CR excluded. When
 * n exceeds the limit, only the stored prefix is readable, and it is not
 * read.
 */
void lb_hdr_settle(struct lb_hdr_stream *s, int slot, const uint8_t *p,
		   size_t n);

#endif /* LB_HDR_SCAN_PRIV_H */
