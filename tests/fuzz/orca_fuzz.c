/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The value of an ORCA `endpoint-load-metrics` header, as a backend sends
 * it, in a response header block scanned by hdr_scan.
 *
 * Input: one byte giving where to cut the block in two for the streaming
 * scan, then the value.
 * Invariants: streaming (cut anywhere) and block mode agree; an accepted
 * report is in TEXT form, not empty, and every metric it sets lies within
 * its bounds (CPU and application utilisation within the configured range,
 * memory within [0, 1], rates within [0, LB_HDR_ORCA_RATE_MAX]); a refused
 * one sets nothing.
 */
#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "hdr_db.h"

static struct lb_hdr_db *db;
static struct lb_hdr_scratch *scr;
static struct lb_hdr_stream st;
static int orca;

static void
init_once(void)
{
	if (db != NULL)
		return;
	fz_hdr_open(&db, &scr);
	FUZZ_CHECK(lb_hdr_stream_init(&st, db) == 0);
	orca = lb_hdr_db_field(db, LB_HDR_KIND_ORCA);
	FUZZ_CHECK(orca >= 0);
}

static void
in_range(double v, double lo, double hi)
{
	FUZZ_CHECK(isfinite(v) && v >= lo && v <= hi);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char pre[] = "HTTP/1.1 200 OK\r\nendpoint-load-metrics:";
	static uint8_t blk[sizeof(pre) + 1024 + 4];
	const struct lb_hdr_field_cfg *f;
	struct lb_hdr_result a, b;
	const struct lb_hdr_orca *o;
	size_t n, cut;

	if (size < 1 || size > 1024)
		return 0;
	init_once();
	f = &lb_hdr_db_cfg(db)->fields[orca];
	n = sizeof(pre) - 1;
	memcpy(blk, pre, n);
	memcpy(blk + n, data + 1, size - 1);
	n += size - 1;
	memcpy(blk + n, "\r\n\r\n", 4);
	n += 4;
	cut = (size_t)data[0] * n / 255;

	FUZZ_CHECK(lb_hdr_scan_block(db, scr, blk, n, &a) == 0);
	FUZZ_CHECK(lb_hdr_feed(&st, scr, blk, cut) == 0);
	FUZZ_CHECK(lb_hdr_feed(&st, scr, blk + cut, n - cut) == 0);
	FUZZ_CHECK(lb_hdr_end(&st, scr, &b) == 0);
	FUZZ_CHECK(a.present == b.present && a.valid == b.valid);
	FUZZ_CHECK(!memcmp(&a.field[orca], &b.field[orca],
			   sizeof(a.field[orca])));
	FUZZ_CHECK(a.status == 200);

	o = &a.field[orca].v.orca;
	if (!(a.valid & (1u << orca))) {
		static const struct lb_hdr_orca zero;

		FUZZ_CHECK(!memcmp(o, &zero, sizeof(zero)));
		return 0;
	}
	FUZZ_CHECK(a.field[orca].reason == LB_HDR_OK);
	FUZZ_CHECK(o->present != 0 || o->nb_named != 0);
	in_range(o->cpu_utilization, f->min, f->max);
	in_range(o->application_utilization, f->min, f->max);
	in_range(o->mem_utilization, 0, 1);
	in_range(o->rps_fractional, 0, LB_HDR_ORCA_RATE_MAX);
	in_range(o->eps, 0, LB_HDR_ORCA_RATE_MAX);
	/* Accepted only in TEXT form, leading whitespace aside. */
	for (n = 1; n < size && (data[n] == ' ' || data[n] == '\t');)
		n++;
	FUZZ_CHECK(size - n >= 4 && !memcmp(data + n, "TEXT", 4));
	return 0;
}
