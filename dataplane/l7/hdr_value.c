/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The values of header fields: the kinds a field can carry, and the
 * strict parsers that decide each occurrence once the scan has found its
 * line (hdr_scan.c). Apart from the scan because the parsing is its own
 * grammar (decimals without strtod(), ORCA TEXT reports) and is called
 * once per occurrence, not per byte.
 */
#include <stdbool.h>
#include <string.h>

#include "hdr_scan_priv.h"

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

const struct lb_hdr_kind_info lb_hdr_kinds[LB_HDR_KIND_MAX] = {
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
	return lb_hdr_kinds[kind].name;
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

void
lb_hdr_settle(struct lb_hdr_stream *s, int slot, const uint8_t *p, size_t n)
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
	switch (lb_hdr_kinds[f->kind].as) {
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
