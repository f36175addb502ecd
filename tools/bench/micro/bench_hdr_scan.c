/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Header scanning: ns per ~400-byte response header block (about ten
 * headers, X-SPL and X-SPL-Time among them) through a reused stream
 * (reset + feed + end), whole and in three segments, and in block mode;
 * the baseline walks the contiguous block line by line with memchr and
 * strncasecmp for the same two headers, which only works when the block
 * is in one piece.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bench.h"
#include "lb/hdr_scan.h"

static const char block[] =
	"HTTP/1.1 200 OK\r\n"
	"Date: Tue, 14 Nov 2023 22:13:20 GMT\r\n"
	"Server: nginx/1.24.0\r\n"
	"Content-Type: application/json; charset=utf-8\r\n"
	"Content-Length: 18342\r\n"
	"Connection: keep-alive\r\n"
	"Cache-Control: private, no-store, max-age=0\r\n"
	"Vary: Accept-Encoding, Origin\r\n"
	"X-Request-Id: 5b7f0a3e-91c2-4f6b-b0d4-2a1e9c7d8f60\r\n"
	"X-SPL: 0.8\r\n"
	"X-SPL-Time: 1700000000123\r\n"
	"Strict-Transport-Security: max-age=63072000\r\n"
	"\r\n";

struct scan_arg {
	const struct lb_hdr_db *db;
	struct lb_hdr_scratch *scr;
	struct lb_hdr_stream *st;
	size_t cut[2]; /* 0, 0 = one segment */
};

static void
run_stream(void *p, uint64_t iters)
{
	struct scan_arg *a = p;
	const size_t len = sizeof(block) - 1;
	struct lb_hdr_result r;

	for (uint64_t i = 0; i < iters; i++) {
		if (a->cut[1] == 0) {
			lb_hdr_feed(a->st, a->scr, block, len);
		} else {
			lb_hdr_feed(a->st, a->scr, block, a->cut[0]);
			lb_hdr_feed(a->st, a->scr, block + a->cut[0],
				    a->cut[1] - a->cut[0]);
			lb_hdr_feed(a->st, a->scr, block + a->cut[1],
				    len - a->cut[1]);
		}
		lb_hdr_end(a->st, a->scr, &r);
		lb_bench_sink += r.valid + (uint64_t)(r.field[0].v.d * 10);
	}
}

static void
run_block(void *p, uint64_t iters)
{
	struct scan_arg *a = p;
	struct lb_hdr_result r;

	for (uint64_t i = 0; i < iters; i++) {
		lb_hdr_scan_block(a->db, a->scr, block, sizeof(block) - 1, &r);
		lb_bench_sink += r.valid + (uint64_t)(r.field[0].v.d * 10);
	}
}

/* What one would write by hand for a contiguous block. */
static void
run_baseline(void *p, uint64_t iters)
{
	const size_t len = sizeof(block) - 1;

	(void)p;
	for (uint64_t i = 0; i < iters; i++) {
		const char *s = block, *end = block + len;
		double spl = -1;
		unsigned long long t = 0;

		while (s < end) {
			const char *lf = memchr(s, '\n', (size_t)(end - s));
			size_t n = lf ? (size_t)(lf - s) : (size_t)(end - s);

			if (n > 11 && strncasecmp(s, "X-SPL-Time:", 11) == 0)
				t = strtoull(s + 11, NULL, 10);
			else if (n > 6 && strncasecmp(s, "X-SPL:", 6) == 0)
				spl = strtod(s + 6, NULL);
			s += n + 1;
		}
		lb_bench_sink += t + (uint64_t)(spl * 10);
	}
}

void
lb_bench_hdr_scan(FILE *out, unsigned int rounds)
{
	struct lb_hdr_db *db;
	struct lb_hdr_scratch *scr;
	struct lb_hdr_stream st;
	struct lb_hdr_cfg cfg;
	struct scan_arg one, three;

	lb_hdr_cfg_default(&cfg);
	db = lb_hdr_db_compile(&cfg);
	scr = db ? lb_hdr_scratch_alloc(db) : NULL;
	if (scr == NULL || lb_hdr_stream_init(&st, db) != 0) {
		fprintf(out, "hdr_scan: setup failed\n");
		lb_hdr_scratch_free(scr);
		lb_hdr_db_free(db);
		return;
	}
	one = (struct scan_arg){db, scr, &st, {0, 0}};
	/* Cuts inside "X-SPL: 0.8" and inside the X-SPL-Time value. */
	three = one;
	three.cut[0] = (size_t)(strstr(block, "X-SPL:") - block) + 8;
	three.cut[1] = (size_t)(strstr(block, "X-SPL-Time") - block) + 16;

	fprintf(out, "hdr_scan: %zu-byte response block, 11 header lines\n",
		sizeof(block) - 1);
	{
		const struct lb_bench_case a = {"stream reset+feed+end",
						run_stream, &one};
		const struct lb_bench_case b = {"stream, 3 segments",
						run_stream, &three};
		const struct lb_bench_case c = {"block mode", run_block, &one};
		const struct lb_bench_case base = {"memchr+strncasecmp",
						   run_baseline, NULL};

		lb_bench_pair(out, &a, &base, 200000, rounds);
		lb_bench_pair(out, &b, &base, 200000, rounds);
		lb_bench_pair(out, &c, &base, 200000, rounds);
	}
	lb_hdr_stream_fini(&st);
	lb_hdr_scratch_free(scr);
	lb_hdr_db_free(db);
}
