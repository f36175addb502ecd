/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Header-block scanning: Hyperscan's streaming mode for a block cut into
 * pieces, a walk over the line starts for a whole block (lines_scan()).
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
 *
 * This file is the fast path: the scan of each header block and the
 * capture of its values. The databases it scans with are built in
 * hdr_db.c, and the values it captures are parsed in hdr_value.c.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "hdr_scan_priv.h"

/* Bytes of "HTTP/1.d " matched at the start of the block; past it, none. */
#define SL_MATCHED 9
#define SL_FAIL 10
/* "NNN" and the byte after it are all a status code needs. */
#define STATUS_KEEP 4

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
		/* Leading blanks are not part of the value: see lb_hdr_settle. */
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

	lb_hdr_settle(s, b->cap_slot, b->cap_buf, n);
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
	lb_hdr_settle(s, slot, p, n);
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

	/* The usual case: the whole prefix in this chunk. */
	if (b->sl_pos == 0 && b->chunk_len >= SL_MATCHED &&
	    memcmp(b->chunk, want, 7) == 0 && is_digit(b->chunk[7]) &&
	    b->chunk[8] == ' ') {
		b->sl_pos = SL_MATCHED;
		b->slot[STATUS_SLOT].seen = 1;
		value_at(s, STATUS_SLOT, SL_MATCHED);
		return;
	}
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

/*
 * Block mode without Hyperscan. The patterns are plain literals anchored
 * after an LF, so what they match in a whole block is found directly:
 * each LF (sixteen bytes compared at a time), then the line it starts,
 * whose first byte rules out every name but a few, most often all of
 * them. A call to Hyperscan costs more than this whole walk over a usual
 * block. The streaming database is still what scans blocks cut into
 * pieces (lb_hdr_feed), and the fuzz target holds the two to the same
 * results.
 */

/* Whether the @p n bytes at @p p are name @p i, ASCII letters in any case
 * (what HS_FLAG_CASELESS matches); eight at a time. */
static inline bool
name_eq(const struct lb_hdr_names *nx, unsigned int i, const uint8_t *p,
	size_t n)
{
	const uint8_t *lower = nx->lower[i], *fold = nx->fold[i];
	size_t k = 0;

	for (; k + 8 <= n; k += 8) {
		uint64_t a, f, l;

		memcpy(&a, p + k, 8);
		memcpy(&f, fold + k, 8);
		memcpy(&l, lower + k, 8);
		if ((a | f) != l)
			return false;
	}
	for (; k < n; k++)
		if ((p[k] | fold[k]) != lower[k])
			return false;
	return true;
}

/* The line that starts at chunk[pos], right after an LF. */
static inline void
line_at(struct lb_hdr_stream *s, const struct lb_hdr_names *nx, size_t pos)
{
	const uint8_t *p = s->blk.chunk + pos;
	size_t room = s->blk.chunk_len - pos;
	unsigned int cand = nx->first[p[0]];

	while (cand != 0) {
		unsigned int i = (unsigned int)__builtin_ctz(cand);
		size_t len = nx->len[i];

		cand &= cand - 1;
		/* Names are tokens: none is a name of another followed by
		 * a blank or a colon, so one line matches at most one. */
		if (room > len && (p[len] == ':' || is_ows(p[len])) &&
		    name_eq(nx, i, p, len)) {
			on_match(i, 0, pos + len + 1, 0, s);
			return;
		}
	}
}

static void
lines_scan(struct lb_hdr_stream *s)
{
	const struct lb_hdr_names *nx = &s->db->names;
	const uint8_t *p = s->blk.chunk;
	size_t n = s->blk.chunk_len, i = 0;

	/* An LF in the last byte starts no line here. */
	if (n == 0)
		return;
	n--;
#ifdef __SSE2__
	const __m128i lf = _mm_set1_epi8('\n');

	for (; i + 16 <= n; i += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
		unsigned int m = (unsigned int)_mm_movemask_epi8(
			_mm_cmpeq_epi8(v, lf));

		while (m != 0) {
			line_at(s, nx, i + (size_t)__builtin_ctz(m) + 1);
			m &= m - 1;
		}
	}
#endif
	for (; i < n; i++)
		if (p[i] == '\n')
			line_at(s, nx, i + 1);
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
	lines_scan(&s);
	return block_result(db, &s.blk, &scr->stats, len, res);
}
