/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control side of header scanning: configurations checked and
 * defaulted, compiled into Hyperscan databases, serialized into shared
 * memory and rebuilt from it, and the per-worker scratch allocated. None
 * of it runs per packet; the scan itself is in hdr_scan.c.
 *
 * Each configured name becomes one caseless pattern, "\n<name>[ \t:]"
 * (see hdr_scan.c for why).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hdr_scan_priv.h"

/* "\n", the name with every byte escaped, "[ \t:]", NUL. */
#define PAT_MAX (2 + 2 * LB_HDR_NAME_MAX + 6 + 1)

#define BLOB_MAGIC "LBHDRDB"
#define BLOB_VERSION 1u

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
	if (lb_hdr_kinds[f->kind].as == AS_UINT &&
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
	f->min = lb_hdr_kinds[kind].min;
	f->max = lb_hdr_kinds[kind].max;
	f->max_len = lb_hdr_kinds[kind].max_len;
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

/* The names of a checked configuration, as block mode reads them. */
static void
names_index(struct lb_hdr_names *nx, const struct lb_hdr_cfg *cfg)
{
	memset(nx, 0, sizeof(*nx));
	for (unsigned int i = 0; i < cfg->nb_fields; i++) {
		const char *name = cfg->fields[i].name;
		size_t len = strnlen(name, LB_HDR_NAME_MAX);
		uint8_t c;

		for (size_t k = 0; k < len; k++) {
			nx->lower[i][k] = to_lower((uint8_t)name[k]);
			if (nx->lower[i][k] >= 'a' && nx->lower[i][k] <= 'z')
				nx->fold[i][k] = 0x20;
		}
		nx->len[i] = (uint8_t)len;
		c = nx->lower[i][0];
		nx->first[c] |= (uint16_t)(1u << i);
		if (c >= 'a' && c <= 'z')
			nx->first[c - ('a' - 'A')] |= (uint16_t)(1u << i);
	}
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
	names_index(&db->names, &db->cfg);
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
