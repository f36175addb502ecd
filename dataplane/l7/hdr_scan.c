/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Header-block scanning with Hyperscan.
 *
 * Each configured name becomes one caseless pattern, "\n<name>[ \t:]": the
 * leading LF anchors the name at the start of a line, so a name inside
 * another header's value, or a name that is a prefix or suffix of another,
 * never matches; the last byte says whether the colon follows at once (a
 * field to read) or after blank space, which RFC 9112 section 5.1 forbids
 * (a field to reject and count, once the colon is found). Every pattern is
 * thus a handful of plain literals, which Hyperscan scans about twice as
 * fast as the same set with a "[ \t]+:" repeat. The status line needs no
 * pattern: it is the first line, and a nine-byte prefix check finds it.
 *
 * Hyperscan reports a match's end offset only and does not promise to report
 * matches of one scan in order. So nothing here depends on order: a match
 * whose value line ends inside the chunk being scanned is parsed on the spot,
 * straight from the chunk; only the last line of a chunk can run past its
 * end, and only that value is copied into the capture buffer and completed
 * from the next chunk before that chunk is scanned (a later match needs an
 * LF that ends the pending line first). A header seen twice is rejected
 * whatever its values, so which occurrence was parsed last does not matter.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hs/hs.h>

#include "lb/hdr_scan.h"

#define STATUS_SLOT LB_HDR_MAX_FIELDS
/* Bytes of "HTTP/1.d " matched at the start of the block; past it, none. */
#define SL_MATCHED 9
#define SL_FAIL 10
/* "NNN" and the byte after it are all a status code needs. */
#define STATUS_KEEP 4
/* "\n", the name with every byte escaped, "[ \t:]", NUL. */
#define PAT_MAX (2 + 2 * LB_HDR_NAME_MAX + 6 + 1)
/* 15 significant integer digits keep every accepted decimal below 2^53. */
#define DEC_INT_DIGITS 15
/* Fraction digits are folded in while the mantissa stays below 2^53. */
#define DEC_MANT_LIMIT 900000000000000ULL
#define DEC_FRAC_MAX 22
/* Latest instant RFC 3339 can write: 9999-12-31T23:59:59.999Z in ms. */
#define SPL_TIME_MAX 253402300799999.0
/* A rank that already gives throttle probability 1 for any multiplier >= 1
 * in min(1, M x P / 100) of the overload throttling patent. */
#define PRIORITY_MAX 100.0
#define EXPECT_MS_MAX 3600000.0
#define SPL_MAX 1000.0
#define ORCA_UTIL_MAX 100.0
/* A TEXT pair is at least "k=0," so a 256-byte value holds at most 64. */
#define ORCA_PAIRS_MAX (LB_HDR_VALUE_MAX / 4)

#define BLOB_MAGIC "LBHDRDB"
#define BLOB_VERSION 1u

struct lb_hdr_db {
	hs_database_t *stream_db;
	hs_database_t *block_db;
	struct lb_hdr_cfg cfg;
};

struct lb_hdr_scratch {
	hs_scratch_t *hs;
	struct lb_hdr_stats stats;
};

enum parse_as { AS_DECIMAL, AS_UINT, AS_ORCA };

static const struct kind_info {
	const char *name;
	enum parse_as as;
	double min;
	double max;
	unsigned int max_len;
} kinds[LB_HDR_KIND_MAX] = {
	[LB_HDR_KIND_SPL] = {"spl", AS_DECIMAL, 0, SPL_MAX,
			     LB_HDR_NUM_LEN_DEFAULT},
	[LB_HDR_KIND_SPL_TIME] = {"spl_time", AS_UINT, 0, SPL_TIME_MAX,
				  LB_HDR_NUM_LEN_DEFAULT},
	[LB_HDR_KIND_PRIORITY] = {"priority", AS_UINT, 0, PRIORITY_MAX,
				  LB_HDR_NUM_LEN_DEFAULT},
	[LB_HDR_KIND_EXPECT_MS] = {"expect_ms", AS_UINT, 1, EXPECT_MS_MAX,
				   LB_HDR_NUM_LEN_DEFAULT},
	[LB_HDR_KIND_ORCA] = {"orca", AS_ORCA, 0, ORCA_UTIL_MAX,
			      LB_HDR_VALUE_MAX},
	[LB_HDR_KIND_DECIMAL] = {"decimal", AS_DECIMAL, 0, 1e15,
				 LB_HDR_NUM_LEN_DEFAULT},
	[LB_HDR_KIND_UINT] = {"uint", AS_UINT, 0, LB_HDR_UINT_LIMIT,
			      LB_HDR_NUM_LEN_DEFAULT},
};

static const char *const reason_names[LB_HDR_ERR_MAX] = {
	[LB_HDR_OK] = "ok",
	[LB_HDR_ERR_EMPTY] = "empty",
	[LB_HDR_ERR_SYNTAX] = "syntax",
	[LB_HDR_ERR_RANGE] = "range",
	[LB_HDR_ERR_TOO_LONG] = "too_long",
	[LB_HDR_ERR_DUPLICATE] = "duplicate",
	[LB_HDR_ERR_NAME_WS] = "name_ws",
	[LB_HDR_ERR_FOLD] = "fold",
	[LB_HDR_ERR_TRUNCATED] = "truncated",
	[LB_HDR_ERR_ORCA_FORMAT] = "orca_format",
	[LB_HDR_ERR_ORCA_PAIR] = "orca_pair",
};

const char *
lb_hdr_reason_str(enum lb_hdr_reason reason)
{
	if ((unsigned int)reason >= LB_HDR_ERR_MAX)
		return "?";
	return reason_names[reason];
}

const char *
lb_hdr_kind_str(enum lb_hdr_kind kind)
{
	if ((unsigned int)kind >= LB_HDR_KIND_MAX)
		return "?";
	return kinds[kind].name;
}

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
static bool
is_tchar(uint8_t c)
{
	return is_alnum(c) || (c != '\0' && strchr("!#$%&'*+-.^_`|~", c));
}

static inline uint8_t
to_lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

static bool
same_name(const char *a, const char *b)
{
	for (; *a != '\0' && *b != '\0'; a++, b++)
		if (to_lower(*a) != to_lower(*b))
			return false;
	return *a == *b;
}

/* ---- Configuration ---------------------------------------------------- */

static bool
name_ok(const char *name)
{
	size_t n = strnlen(name, LB_HDR_NAME_MAX + 1);

	if (n == 0 || n > LB_HDR_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_tchar((uint8_t)name[i]))
			return false;
	return true;
}

static bool
field_ok(const struct lb_hdr_field_cfg *f)
{
	if (!name_ok(f->name) || (unsigned int)f->kind >= LB_HDR_KIND_MAX)
		return false;
	if (!isfinite(f->min) || !isfinite(f->max) || f->min < 0 ||
	    f->min > f->max)
		return false;
	if (f->max_len == 0 || f->max_len > LB_HDR_VALUE_MAX)
		return false;
	if (kinds[f->kind].as == AS_UINT &&
	    (f->max > LB_HDR_UINT_LIMIT || floor(f->min) != f->min ||
	     floor(f->max) != f->max))
		return false;
	return true;
}

int
lb_hdr_cfg_check(const struct lb_hdr_cfg *cfg)
{
	if (cfg == NULL || cfg->nb_fields > LB_HDR_MAX_FIELDS)
		return -EINVAL;
	for (unsigned int i = 0; i < cfg->nb_fields; i++) {
		if (!field_ok(&cfg->fields[i]))
			return -EINVAL;
		for (unsigned int j = 0; j < i; j++)
			if (same_name(cfg->fields[i].name, cfg->fields[j].name))
				return -EINVAL;
	}
	return 0;
}

int
lb_hdr_cfg_add(struct lb_hdr_cfg *cfg, const char *name, enum lb_hdr_kind kind)
{
	struct lb_hdr_field_cfg *f;

	if (cfg == NULL || name == NULL || !name_ok(name) ||
	    (unsigned int)kind >= LB_HDR_KIND_MAX ||
	    cfg->nb_fields > LB_HDR_MAX_FIELDS)
		return -EINVAL;
	for (unsigned int i = 0; i < cfg->nb_fields; i++)
		if (same_name(cfg->fields[i].name, name))
			return -EEXIST;
	if (cfg->nb_fields == LB_HDR_MAX_FIELDS)
		return -ENOSPC;
	f = &cfg->fields[cfg->nb_fields];
	memset(f, 0, sizeof(*f));
	memcpy(f->name, name, strlen(name));
	f->kind = kind;
	f->min = kinds[kind].min;
	f->max = kinds[kind].max;
	f->max_len = kinds[kind].max_len;
	return (int)cfg->nb_fields++;
}

void
lb_hdr_cfg_default(struct lb_hdr_cfg *cfg)
{
	if (cfg == NULL)
		return;
	memset(cfg, 0, sizeof(*cfg));
	lb_hdr_cfg_add(cfg, "X-SPL", LB_HDR_KIND_SPL);
	lb_hdr_cfg_add(cfg, "X-SPL-Time", LB_HDR_KIND_SPL_TIME);
	lb_hdr_cfg_add(cfg, "X-Priority", LB_HDR_KIND_PRIORITY);
	lb_hdr_cfg_add(cfg, "X-Expect-Ms", LB_HDR_KIND_EXPECT_MS);
	lb_hdr_cfg_add(cfg, "endpoint-load-metrics", LB_HDR_KIND_ORCA);
}

/* A copy with every padding byte zero, so that it serializes stably. */
static void
cfg_copy(struct lb_hdr_cfg *dst, const struct lb_hdr_cfg *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->nb_fields = src->nb_fields;
	for (unsigned int i = 0; i < src->nb_fields; i++) {
		const struct lb_hdr_field_cfg *s = &src->fields[i];
		struct lb_hdr_field_cfg *d = &dst->fields[i];

		memcpy(d->name, s->name, strnlen(s->name, LB_HDR_NAME_MAX));
		d->kind = s->kind;
		d->min = s->min;
		d->max = s->max;
		d->max_len = s->max_len;
	}
}

/* ---- Database --------------------------------------------------------- */

static void
escape_name(char *out, const char *name)
{
	for (; *name != '\0'; name++) {
		/* Escaping a non-alphanumeric byte always means the byte
		 * itself in PCRE syntax. */
		if (!is_alnum((uint8_t)*name))
			*out++ = '\\';
		*out++ = *name;
	}
	*out = '\0';
}

static hs_database_t *
compile_mode(const struct lb_hdr_cfg *cfg, unsigned int mode)
{
	char pat[LB_HDR_MAX_FIELDS][PAT_MAX];
	const char *expr[LB_HDR_MAX_FIELDS];
	unsigned int flags[LB_HDR_MAX_FIELDS];
	unsigned int ids[LB_HDR_MAX_FIELDS];
	char esc[2 * LB_HDR_NAME_MAX + 1];
	hs_compile_error_t *err = NULL;
	hs_database_t *db = NULL;
	unsigned int n = cfg->nb_fields;

	/* Hyperscan refuses an empty set; a name no line can hold (it has
	 * a colon) stands in, so that a database always exists. */
	if (n == 0) {
		snprintf(pat[0], PAT_MAX, "\\n:[ \\t:]");
		flags[0] = 0;
		ids[0] = LB_HDR_MAX_FIELDS;
		expr[0] = pat[0];
		n = 1;
	}
	for (unsigned int i = 0; i < cfg->nb_fields; i++) {
		escape_name(esc, cfg->fields[i].name);
		snprintf(pat[i], PAT_MAX, "\\n%s[ \\t:]", esc);
		flags[i] = HS_FLAG_CASELESS;
		ids[i] = i;
		expr[i] = pat[i];
	}
	if (hs_compile_multi(expr, flags, ids, n, mode, NULL, &db, &err) !=
	    HS_SUCCESS) {
		hs_free_compile_error(err);
		return NULL;
	}
	return db;
}

static struct lb_hdr_db *
db_new(const struct lb_hdr_cfg *cfg)
{
	struct lb_hdr_db *db = calloc(1, sizeof(*db));

	if (db == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	cfg_copy(&db->cfg, cfg);
	return db;
}

struct lb_hdr_db *
lb_hdr_db_compile(const struct lb_hdr_cfg *cfg)
{
	struct lb_hdr_db *db;

	if (lb_hdr_cfg_check(cfg) != 0) {
		errno = EINVAL;
		return NULL;
	}
	db = db_new(cfg);
	if (db == NULL)
		return NULL;
	db->stream_db = compile_mode(&db->cfg, HS_MODE_STREAM);
	if (db->stream_db == NULL)
		goto fail;
	db->block_db = compile_mode(&db->cfg, HS_MODE_BLOCK);
	if (db->block_db == NULL)
		goto fail;
	return db;
fail:
	lb_hdr_db_free(db);
	errno = EINVAL;
	return NULL;
}

void
lb_hdr_db_free(struct lb_hdr_db *db)
{
	if (db == NULL)
		return;
	hs_free_database(db->stream_db);
	hs_free_database(db->block_db);
	free(db);
}

const struct lb_hdr_cfg *
lb_hdr_db_cfg(const struct lb_hdr_db *db)
{
	return db == NULL ? NULL : &db->cfg;
}

size_t
lb_hdr_db_stream_size(const struct lb_hdr_db *db)
{
	size_t n = 0;

	if (db == NULL || hs_stream_size(db->stream_db, &n) != HS_SUCCESS)
		return 0;
	return n;
}

int
lb_hdr_db_field(const struct lb_hdr_db *db, enum lb_hdr_kind kind)
{
	if (db == NULL)
		return -EINVAL;
	for (unsigned int i = 0; i < db->cfg.nb_fields; i++)
		if (db->cfg.fields[i].kind == kind)
			return (int)i;
	return -ENOENT;
}

/*
 * Serialized form: a head, the field configurations as laid out in memory
 * (same host, same build), then the streaming and block Hyperscan
 * databases, each padded to 8 bytes so they stay aligned in an aligned
 * buffer. The checksum covers everything after the head, so a torn or
 * stale copy in shared memory is refused rather than half-trusted.
 */
struct blob_head {
	char magic[8];
	uint32_t version;
	uint32_t nb_fields;
	uint64_t stream_len;
	uint64_t block_len;
	uint64_t sum;
};

static inline size_t
pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* FNV-1a, 64 bits. */
static uint64_t
checksum(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

int
lb_hdr_db_serialize(const struct lb_hdr_db *db, void *buf, size_t size,
		    size_t *len)
{
	char *sb = NULL, *bb = NULL;
	size_t sl = 0, bl = 0, fl, need;
	struct blob_head h;
	uint8_t *out = buf;
	int rc = 0;

	if (db == NULL || len == NULL)
		return -EINVAL;
	if (hs_serialize_database(db->stream_db, &sb, &sl) != HS_SUCCESS ||
	    hs_serialize_database(db->block_db, &bb, &bl) != HS_SUCCESS) {
		rc = -ENOMEM;
		goto out;
	}
	fl = db->cfg.nb_fields * sizeof(db->cfg.fields[0]);
	need = sizeof(h) + fl + pad8(sl) + pad8(bl);
	*len = need;
	if (buf == NULL || size < need) {
		rc = -ENOSPC;
		goto out;
	}
	memset(out, 0, need);
	memcpy(out + sizeof(h), db->cfg.fields, fl);
	memcpy(out + sizeof(h) + fl, sb, sl);
	memcpy(out + sizeof(h) + fl + pad8(sl), bb, bl);
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, BLOB_MAGIC, sizeof(h.magic));
	h.version = BLOB_VERSION;
	h.nb_fields = db->cfg.nb_fields;
	h.stream_len = sl;
	h.block_len = bl;
	h.sum = checksum(out + sizeof(h), need - sizeof(h));
	memcpy(out, &h, sizeof(h));
out:
	free(sb);
	free(bb);
	return rc;
}

struct lb_hdr_db *
lb_hdr_db_deserialize(const void *buf, size_t len)
{
	const uint8_t *in = buf;
	struct lb_hdr_cfg cfg;
	struct lb_hdr_db *db;
	struct blob_head h;
	size_t fl, size;

	if (buf == NULL || len < sizeof(h))
		goto inval;
	memcpy(&h, in, sizeof(h));
	if (memcmp(h.magic, BLOB_MAGIC, sizeof(h.magic)) != 0 ||
	    h.version != BLOB_VERSION || h.nb_fields > LB_HDR_MAX_FIELDS ||
	    h.stream_len > len || h.block_len > len)
		goto inval;
	fl = h.nb_fields * sizeof(cfg.fields[0]);
	if (len != sizeof(h) + fl + pad8(h.stream_len) + pad8(h.block_len) ||
	    checksum(in + sizeof(h), len - sizeof(h)) != h.sum)
		goto inval;
	memset(&cfg, 0, sizeof(cfg));
	cfg.nb_fields = h.nb_fields;
	memcpy(cfg.fields, in + sizeof(h), fl);
	for (unsigned int i = 0; i < cfg.nb_fields; i++)
		cfg.fields[i].name[LB_HDR_NAME_MAX] = '\0';
	if (lb_hdr_cfg_check(&cfg) != 0)
		goto inval;
	db = db_new(&cfg);
	if (db == NULL)
		return NULL;
	in += sizeof(h) + fl;
	if (hs_deserialize_database((const char *)in, h.stream_len,
				    &db->stream_db) != HS_SUCCESS ||
	    hs_deserialize_database((const char *)in + pad8(h.stream_len),
				    h.block_len, &db->block_db) != HS_SUCCESS)
		goto fail;
	/* Only a streaming database has a stream size: this catches the two
	 * halves swapped or replaced. */
	if (hs_stream_size(db->stream_db, &size) != HS_SUCCESS ||
	    hs_stream_size(db->block_db, &size) == HS_SUCCESS)
		goto fail;
	return db;
fail:
	lb_hdr_db_free(db);
inval:
	errno = EINVAL;
	return NULL;
}

uint64_t
lb_hdr_db_blob_id(const void *buf, size_t len)
{
	struct blob_head h;

	if (buf == NULL || len < sizeof(h))
		return 0;
	memcpy(&h, buf, sizeof(h));
	return h.sum ^ len;
}

/* ---- Scratch ---------------------------------------------------------- */

struct lb_hdr_scratch *
lb_hdr_scratch_alloc(const struct lb_hdr_db *db)
{
	struct lb_hdr_scratch *scr;

	if (db == NULL) {
		errno = EINVAL;
		return NULL;
	}
	scr = calloc(1, sizeof(*scr));
	if (scr == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	/* One scratch serves both databases: the second call grows it. */
	if (hs_alloc_scratch(db->stream_db, &scr->hs) != HS_SUCCESS ||
	    hs_alloc_scratch(db->block_db, &scr->hs) != HS_SUCCESS) {
		lb_hdr_scratch_free(scr);
		errno = ENOMEM;
		return NULL;
	}
	return scr;
}

struct lb_hdr_scratch *
lb_hdr_scratch_clone(const struct lb_hdr_scratch *src)
{
	struct lb_hdr_scratch *scr;

	if (src == NULL) {
		errno = EINVAL;
		return NULL;
	}
	scr = calloc(1, sizeof(*scr));
	if (scr == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if (hs_clone_scratch(src->hs, &scr->hs) != HS_SUCCESS) {
		free(scr);
		errno = ENOMEM;
		return NULL;
	}
	return scr;
}

void
lb_hdr_scratch_free(struct lb_hdr_scratch *scr)
{
	if (scr == NULL)
		return;
	hs_free_scratch(scr->hs);
	free(scr);
}

const struct lb_hdr_stats *
lb_hdr_scratch_stats(const struct lb_hdr_scratch *scr)
{
	return scr == NULL ? NULL : &scr->stats;
}

/* ---- Value parsers ---------------------------------------------------- */

static const double pow10_tab[DEC_FRAC_MAX + 1] = {
	1e0,  1e1,  1e2,  1e3,	1e4,  1e5,  1e6,  1e7,	1e8,  1e9,  1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/*
 * 1*DIGIT [ "." 1*DIGIT ], nothing else: no sign, exponent, hex, "inf" or
 * "nan", so that strtod()'s generosity and locale never reach a value. The
 * mantissa stays below 2^53 and the divisor is an exact power of ten, so
 * the one division rounds correctly (fraction digits beyond double
 * precision are dropped).
 */
static enum lb_hdr_reason
parse_decimal(const uint8_t *p, size_t n, double min, double max, double *out)
{
	uint64_t mant = 0;
	unsigned int sig = 0, frac = 0;
	bool big = false;
	size_t i = 0;
	double v;

	if (n == 0)
		return LB_HDR_ERR_EMPTY;
	if (!is_digit(p[0]))
		return LB_HDR_ERR_SYNTAX;
	for (; i < n && is_digit(p[i]); i++) {
		if (sig == 0 && p[i] == '0')
			continue;
		if (++sig > DEC_INT_DIGITS)
			big = true;
		else
			mant = mant * 10 + (p[i] - '0');
	}
	if (i < n) {
		if (p[i++] != '.' || i == n || !is_digit(p[i]))
			return LB_HDR_ERR_SYNTAX;
		for (; i < n && is_digit(p[i]); i++) {
			if (mant < DEC_MANT_LIMIT && frac < DEC_FRAC_MAX) {
				mant = mant * 10 + (p[i] - '0');
				frac++;
			}
		}
		if (i < n)
			return LB_HDR_ERR_SYNTAX;
	}
	if (big)
		return LB_HDR_ERR_RANGE;
	v = (double)mant / pow10_tab[frac];
	if (v < min || v > max)
		return LB_HDR_ERR_RANGE;
	*out = v;
	return LB_HDR_OK;
}

static enum lb_hdr_reason
parse_uint(const uint8_t *p, size_t n, double min, double max, uint64_t *out)
{
	uint64_t v = 0;
	bool big = false;

	if (n == 0)
		return LB_HDR_ERR_EMPTY;
	for (size_t i = 0; i < n; i++) {
		if (!is_digit(p[i]))
			return LB_HDR_ERR_SYNTAX;
		if (!big && (__builtin_mul_overflow(v, 10, &v) ||
			     __builtin_add_overflow(v, p[i] - '0', &v)))
			big = true;
	}
	/* min and max are whole numbers below 2^53: the casts are exact. */
	if (big || v < (uint64_t)min || v > (uint64_t)max)
		return LB_HDR_ERR_RANGE;
	*out = v;
	return LB_HDR_OK;
}

/* status-code SP reason-phrase (RFC 9112 4); a missing SP before an empty
 * reason is tolerated. 100..599 per RFC 9110 15. */
static enum lb_hdr_reason
parse_status(const uint8_t *p, size_t n, uint64_t *out)
{
	unsigned int code;

	if (n == 0)
		return LB_HDR_ERR_EMPTY;
	if (n < 3 || !is_digit(p[0]) || !is_digit(p[1]) || !is_digit(p[2]) ||
	    (n > 3 && p[3] != ' '))
		return LB_HDR_ERR_SYNTAX;
	code = (p[0] - '0') * 100u + (p[1] - '0') * 10u + (p[2] - '0');
	if (code < 100 || code > 599)
		return LB_HDR_ERR_RANGE;
	*out = code;
	return LB_HDR_OK;
}

static void
trim(const uint8_t **p, size_t *n)
{
	while (*n > 0 && is_ows((*p)[0])) {
		(*p)++;
		(*n)--;
	}
	while (*n > 0 && is_ows((*p)[*n - 1]))
		(*n)--;
}

static bool
key_is(const uint8_t *k, size_t kn, const char *name)
{
	return kn == strlen(name) && memcmp(k, name, kn) == 0;
}

static bool
key_has_prefix(const uint8_t *k, size_t kn, const char *prefix)
{
	size_t pn = strlen(prefix);

	/* The map key after the prefix must not be empty. */
	return kn > pn && memcmp(k, prefix, pn) == 0;
}

/*
 * ORCA TEXT: "TEXT" OWS, then comma-separated key=value pairs (':' is
 * accepted for '=' as well). All or nothing: one bad pair rejects the
 * whole report, so a half-read report never becomes load feedback.
 */
static enum lb_hdr_reason
parse_orca(const uint8_t *p, size_t n, const struct lb_hdr_field_cfg *f,
	   struct lb_hdr_orca *out)
{
	struct {
		const uint8_t *k;
		size_t n;
	} seen[ORCA_PAIRS_MAX];
	unsigned int nb_seen = 0;
	struct lb_hdr_orca o;
	size_t i;

	if (n < 4 || memcmp(p, "TEXT", 4) != 0 || (n > 4 && !is_ows(p[4])))
		return LB_HDR_ERR_ORCA_FORMAT;
	memset(&o, 0, sizeof(o));
	for (i = 4; i < n && is_ows(p[i]);)
		i++;
	if (i == n)
		return LB_HDR_ERR_ORCA_PAIR;
	while (i <= n) {
		const uint8_t *seg = p + i, *comma, *k, *v, *sep;
		size_t sn, kn, vn;
		enum lb_hdr_reason r;
		uint32_t bit = 0;
		double lo = 0, hi = 0, d = 0, *dst = NULL;

		comma = memchr(seg, ',', n - i);
		sn = comma ? (size_t)(comma - seg) : n - i;
		i += sn + 1;
		trim(&seg, &sn);
		if (sn == 0)
			return LB_HDR_ERR_ORCA_PAIR;
		sep = seg;
		while (sep < seg + sn && *sep != '=' && *sep != ':')
			sep++;
		if (sep == seg + sn)
			return LB_HDR_ERR_ORCA_PAIR;
		k = seg;
		kn = (size_t)(sep - seg);
		v = sep + 1;
		vn = sn - kn - 1;
		trim(&k, &kn);
		trim(&v, &vn);
		if (kn == 0 || vn == 0)
			return LB_HDR_ERR_ORCA_PAIR;
		for (size_t j = 0; j < kn; j++)
			if (!is_tchar(k[j]))
				return LB_HDR_ERR_ORCA_PAIR;
		for (unsigned int j = 0; j < nb_seen; j++)
			if (seen[j].n == kn && memcmp(seen[j].k, k, kn) == 0)
				return LB_HDR_ERR_ORCA_PAIR;
		if (nb_seen == ORCA_PAIRS_MAX)
			return LB_HDR_ERR_ORCA_PAIR;
		seen[nb_seen].k = k;
		seen[nb_seen].n = kn;
		nb_seen++;

		if (key_is(k, kn, "cpu_utilization")) {
			bit = LB_HDR_ORCA_CPU;
			dst = &o.cpu_utilization;
			lo = f->min;
			hi = f->max;
		} else if (key_is(k, kn, "mem_utilization")) {
			/* A fraction of memory, at most 1 per the ORCA
			 * load report definition. */
			bit = LB_HDR_ORCA_MEM;
			dst = &o.mem_utilization;
			hi = 1;
		} else if (key_is(k, kn, "application_utilization")) {
			bit = LB_HDR_ORCA_APP;
			dst = &o.application_utilization;
			lo = f->min;
			hi = f->max;
		} else if (key_is(k, kn, "rps_fractional")) {
			bit = LB_HDR_ORCA_RPS;
			dst = &o.rps_fractional;
			hi = LB_HDR_ORCA_RATE_MAX;
		} else if (key_is(k, kn, "eps")) {
			bit = LB_HDR_ORCA_EPS;
			dst = &o.eps;
			hi = LB_HDR_ORCA_RATE_MAX;
		} else if (key_has_prefix(k, kn, "named_metrics.") ||
			   key_has_prefix(k, kn, "utilization.") ||
			   key_has_prefix(k, kn, "request_cost.")) {
			dst = &d;
			hi = LB_HDR_ORCA_NAMED_MAX;
		} else {
			return LB_HDR_ERR_ORCA_PAIR;
		}
		r = parse_decimal(v, vn, lo, hi, dst);
		if (r != LB_HDR_OK)
			return r;
		o.present |= bit;
		if (bit == 0)
			o.nb_named++;
	}
	*out = o;
	return LB_HDR_OK;
}

/* ---- Capture ---------------------------------------------------------- */

static void
block_clear(struct lb_hdr_block *b, unsigned int nb_fields)
{
	b->base = 0;
	b->chunk = NULL;
	b->chunk_len = 0;
	b->cap_slot = -1;
	b->fold_slot = -1;
	b->ws_slot = -1;
	b->sl_pos = 0;
	b->cap_total = 0;
	b->cap_len = 0;
	b->cap_last = 0;
	b->failed = 0;
	memset(b->slot, 0, nb_fields * sizeof(b->slot[0]));
	memset(&b->slot[STATUS_SLOT], 0, sizeof(b->slot[0]));
}

static void
reject(struct lb_hdr_value *v, enum lb_hdr_reason r)
{
	v->reason = (uint8_t)r;
	memset(&v->v, 0, sizeof(v->v));
}

/*
 * Decides one occurrence. @p p holds the value from its first non-blank
 * byte; @p n is its length up to the end of the line, CR excluded. When n
 * exceeds the limit, only the stored prefix is readable, and it is not
 * read.
 */
static void
settle(struct lb_hdr_stream *s, int slot, const uint8_t *p, size_t n)
{
	struct lb_hdr_value *v = &s->blk.slot[slot];
	const struct lb_hdr_field_cfg *f;
	enum lb_hdr_reason r = LB_HDR_ERR_SYNTAX;

	memset(&v->v, 0, sizeof(v->v));
	if (slot == STATUS_SLOT) {
		v->reason = (uint8_t)parse_status(p, n, &v->v.u);
		return;
	}
	f = &s->db->cfg.fields[slot];
	if (n > f->max_len) {
		reject(v, LB_HDR_ERR_TOO_LONG);
		return;
	}
	trim(&p, &n);
	switch (kinds[f->kind].as) {
	case AS_DECIMAL:
		r = parse_decimal(p, n, f->min, f->max, &v->v.d);
		break;
	case AS_UINT:
		r = parse_uint(p, n, f->min, f->max, &v->v.u);
		break;
	case AS_ORCA:
		r = n == 0 ? LB_HDR_ERR_EMPTY : parse_orca(p, n, f, &v->v.orca);
		break;
	}
	if (r != LB_HDR_OK)
		reject(v, r);
	else
		v->reason = LB_HDR_OK;
}

/*
 * After a field's line ended at chunk[next - 1]: a following line that
 * starts with blank space continues it (obs-fold, RFC 9112 5.2), which a
 * recipient may not take as a new field; the value is then unreliable.
 */
static void
fold_check(struct lb_hdr_stream *s, int slot, size_t next)
{
	struct lb_hdr_block *b = &s->blk;

	if (slot == STATUS_SLOT)
		return;
	if (next < b->chunk_len) {
		if (is_ows(b->chunk[next]))
			reject(&b->slot[slot], LB_HDR_ERR_FOLD);
	} else {
		b->fold_slot = (int16_t)slot;
	}
}

static void
cap_append(struct lb_hdr_stream *s, const uint8_t *p, size_t n)
{
	struct lb_hdr_block *b = &s->blk;
	int slot = b->cap_slot;
	size_t limit, k;

	if (slot != STATUS_SLOT) {
		/* Leading blanks are not part of the value; see settle(). */
		while (b->cap_total == 0 && n > 0 && is_ows(p[0])) {
			p++;
			n--;
		}
		limit = s->db->cfg.fields[slot].max_len + 1;
	} else {
		limit = STATUS_KEEP + 1;
	}
	if (n == 0)
		return;
	if (b->cap_len < limit) {
		k = limit - b->cap_len < n ? limit - b->cap_len : n;
		memcpy(b->cap_buf + b->cap_len, p, k);
		b->cap_len += (uint16_t)k;
	}
	b->cap_total = n > UINT32_MAX - b->cap_total
			       ? UINT32_MAX
			       : b->cap_total + (uint32_t)n;
	b->cap_last = p[n - 1];
}

static void
cap_finish(struct lb_hdr_stream *s)
{
	struct lb_hdr_block *b = &s->blk;
	size_t n = b->cap_total - (b->cap_last == '\r');

	settle(s, b->cap_slot, b->cap_buf, n);
	b->cap_slot = -1;
}

/* The value of @p slot begins at chunk[pos]. */
static void
value_at(struct lb_hdr_stream *s, int slot, size_t pos)
{
	struct lb_hdr_block *b = &s->blk;
	const uint8_t *p = b->chunk + pos, *lf;
	size_t n = b->chunk_len - pos;

	lf = memchr(p, '\n', n);
	if (lf == NULL) {
		b->cap_slot = (int16_t)slot;
		b->cap_total = 0;
		b->cap_len = 0;
		b->cap_last = 0;
		cap_append(s, p, n);
		return;
	}
	n = (size_t)(lf - p);
	if (slot != STATUS_SLOT)
		while (n > 0 && is_ows(p[0])) {
			p++;
			n--;
		}
	if (n > 0 && p[n - 1] == '\r')
		n--;
	settle(s, slot, p, n);
	fold_check(s, slot, (size_t)(lf - b->chunk) + 1);
}

/* One more line for @p slot; its value begins at chunk[pos] unless the
 * line had blank space before the colon. */
static void
occurrence(struct lb_hdr_stream *s, int slot, size_t pos, bool name_ws)
{
	struct lb_hdr_value *v = &s->blk.slot[slot];

	if (v->seen < UINT8_MAX)
		v->seen++;
	/* A repeated header is rejected whatever it says. */
	if (v->seen > 1)
		return;
	if (name_ws)
		reject(v, LB_HDR_ERR_NAME_WS);
	else
		value_at(s, slot, pos);
}

/* The name of @p slot is followed by blank space from chunk[pos]: it is
 * that field (to be rejected) if a colon comes next, else the line is not
 * a field of ours at all. */
static void
ws_probe(struct lb_hdr_stream *s, int slot, size_t pos)
{
	struct lb_hdr_block *b = &s->blk;

	while (pos < b->chunk_len && is_ows(b->chunk[pos]))
		pos++;
	if (pos == b->chunk_len)
		b->ws_slot = (int16_t)slot;
	else if (b->chunk[pos] == ':')
		occurrence(s, slot, 0, true);
}

static int HS_CDECL
on_match(unsigned int id, unsigned long long from, unsigned long long to,
	 unsigned int flags, void *ctx)
{
	struct lb_hdr_stream *s = ctx;
	struct lb_hdr_block *b = &s->blk;
	size_t pos;

	(void)from;
	(void)flags;
	/* Matches always end inside the data of the current scan. */
	if (id >= s->db->cfg.nb_fields || to <= b->base ||
	    to - b->base > b->chunk_len)
		return 0;
	pos = (size_t)(to - b->base);
	if (b->chunk[pos - 1] == ':')
		occurrence(s, (int)id, pos, false);
	else
		ws_probe(s, (int)id, pos);
	return 0;
}

/* The status line is the first line of a response: "HTTP/1.d " and the
 * status code right after (RFC 9112 4; the HTTP-name is case-sensitive). */
static void
status_prefix(struct lb_hdr_stream *s)
{
	static const char want[SL_MATCHED] = "HTTP/1.? ";
	struct lb_hdr_block *b = &s->blk;

	for (size_t i = 0; i < b->chunk_len && b->sl_pos < SL_MATCHED; i++) {
		uint8_t c = b->chunk[i], w = (uint8_t)want[b->sl_pos];

		if (w == '?' ? !is_digit(c) : c != w) {
			b->sl_pos = SL_FAIL;
			return;
		}
		if (++b->sl_pos == SL_MATCHED) {
			b->slot[STATUS_SLOT].seen = 1;
			value_at(s, STATUS_SLOT, i + 1);
		}
	}
}

/* ---- Streams ---------------------------------------------------------- */

int
lb_hdr_stream_init(struct lb_hdr_stream *s, const struct lb_hdr_db *db)
{
	hs_stream_t *hs = NULL;

	if (s == NULL || db == NULL)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	if (hs_open_stream(db->stream_db, 0, &hs) != HS_SUCCESS)
		return -ENOMEM;
	s->hs = hs;
	s->db = db;
	block_clear(&s->blk, db->cfg.nb_fields);
	return 0;
}

void
lb_hdr_stream_fini(struct lb_hdr_stream *s)
{
	if (s == NULL || s->hs == NULL)
		return;
	/* No callback: the patterns have no end-of-data anchors anyway. */
	hs_close_stream(s->hs, NULL, NULL, NULL);
	s->hs = NULL;
	s->db = NULL;
}

static void
stream_restart(struct lb_hdr_stream *s)
{
	block_clear(&s->blk, s->db->cfg.nb_fields);
	s->fed = 0;
	/* Cannot fail on an open stream when no callback is given. */
	hs_reset_stream(s->hs, 0, NULL, NULL, NULL);
}

int
lb_hdr_stream_reset(struct lb_hdr_stream *s, struct lb_hdr_scratch *scr)
{
	if (s == NULL || s->hs == NULL)
		return -EINVAL;
	if (scr != NULL && s->fed > 0) {
		scr->stats.aborted++;
		scr->stats.bytes += s->fed;
	}
	stream_restart(s);
	return 0;
}

static int
feed_piece(struct lb_hdr_stream *s, struct lb_hdr_scratch *scr,
	   const uint8_t *p, unsigned int n)
{
	struct lb_hdr_block *b = &s->blk;
	hs_error_t rc;

	b->chunk = p;
	b->chunk_len = n;
	if (b->fold_slot >= 0) {
		if (is_ows(p[0]))
			reject(&b->slot[b->fold_slot], LB_HDR_ERR_FOLD);
		b->fold_slot = -1;
	}
	if (b->cap_slot >= 0) {
		const uint8_t *lf = memchr(p, '\n', n);

		if (lf == NULL) {
			cap_append(s, p, n);
		} else {
			int slot = b->cap_slot;

			cap_append(s, p, (size_t)(lf - p));
			cap_finish(s);
			fold_check(s, slot, (size_t)(lf - p) + 1);
		}
	}
	if (b->ws_slot >= 0) {
		int slot = b->ws_slot;

		b->ws_slot = -1;
		ws_probe(s, slot, 0);
	}
	if (b->sl_pos < SL_MATCHED)
		status_prefix(s);
	rc = hs_scan_stream(s->hs, (const char *)p, n, 0, scr->hs, on_match, s);
	b->base += n;
	b->chunk = NULL;
	b->chunk_len = 0;
	if (rc != HS_SUCCESS) {
		b->failed = 1;
		return -EIO;
	}
	return 0;
}

int
lb_hdr_feed(struct lb_hdr_stream *s, struct lb_hdr_scratch *scr,
	    const void *data, size_t len)
{
	const uint8_t *p = data;

	if (s == NULL || s->hs == NULL || scr == NULL ||
	    (data == NULL && len > 0))
		return -EINVAL;
	s->fed += len;
	if (s->blk.failed)
		return -EIO;
	while (len > 0) {
		unsigned int n = len > UINT_MAX ? UINT_MAX : (unsigned int)len;
		int rc = feed_piece(s, scr, p, n);

		if (rc != 0)
			return rc;
		p += n;
		len -= n;
	}
	return 0;
}

/* Turns the per-slot outcomes of a finished block into the result and the
 * counters. */
static int
block_result(const struct lb_hdr_db *db, struct lb_hdr_block *b,
	     struct lb_hdr_stats *st, uint64_t bytes, struct lb_hdr_result *res)
{
	struct lb_hdr_value *sv = &b->slot[STATUS_SLOT];

	memset(res, 0, sizeof(*res));
	st->blocks++;
	st->bytes += bytes;
	if (b->failed) {
		st->scan_errors++;
		return -EIO;
	}
	if (b->cap_slot >= 0)
		reject(&b->slot[b->cap_slot], LB_HDR_ERR_TRUNCATED);
	for (unsigned int i = 0; i < db->cfg.nb_fields; i++) {
		const struct lb_hdr_value *v = &b->slot[i];
		struct lb_hdr_value *out = &res->field[i];

		if (v->seen == 0)
			continue;
		res->present |= 1u << i;
		out->seen = v->seen;
		if (v->seen > 1) {
			out->reason = LB_HDR_ERR_DUPLICATE;
			st->rejected[LB_HDR_ERR_DUPLICATE] += v->seen;
		} else if (v->reason != LB_HDR_OK) {
			out->reason = v->reason;
			st->rejected[v->reason]++;
		} else {
			out->reason = LB_HDR_OK;
			out->v = v->v;
			res->valid |= 1u << i;
			st->accepted++;
		}
	}
	if (sv->seen > 0) {
		res->status_seen = 1;
		res->status_reason = sv->reason;
		if (sv->reason == LB_HDR_OK) {
			res->status = (uint16_t)sv->v.u;
			st->status_ok++;
		} else {
			st->status_bad++;
		}
	}
	return 0;
}

int
lb_hdr_end(struct lb_hdr_stream *s, struct lb_hdr_scratch *scr,
	   struct lb_hdr_result *res)
{
	int rc;

	if (s == NULL || s->hs == NULL || scr == NULL || res == NULL)
		return -EINVAL;
	rc = block_result(s->db, &s->blk, &scr->stats, s->fed, res);
	stream_restart(s);
	return rc;
}

int
lb_hdr_scan_block(const struct lb_hdr_db *db, struct lb_hdr_scratch *scr,
		  const void *block, size_t len, struct lb_hdr_result *res)
{
	struct lb_hdr_stream s;

	if (db == NULL || scr == NULL || res == NULL ||
	    (block == NULL && len > 0) || len > UINT_MAX)
		return -EINVAL;
	s.hs = NULL;
	s.db = db;
	s.fed = len;
	block_clear(&s.blk, db->cfg.nb_fields);
	s.blk.chunk = block;
	s.blk.chunk_len = (uint32_t)len;
	status_prefix(&s);
	if (len > 0 && hs_scan(db->block_db, block, (unsigned int)len, 0,
			       scr->hs, on_match, &s) != HS_SUCCESS)
		s.blk.failed = 1;
	return block_result(db, &s.blk, &scr->stats, len, res);
}
