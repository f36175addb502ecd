/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Header scanning: ns per ~400-byte response header block (about ten
 * headers, X-SPL and X-SPL-Time among them) through a reused stream
 * (reset + feed + end), whole and in three segments, and in block mode;
 * the baseline walks the contiguous block line by line with memchr and
 * strncasecmp for the same two headers, which only works when the block
 * is in one piece.
 *
 * Then a whole exchange as a worker follows it: lb-dpbench's l7 request
 * and response (one segment each) through an L7 pool of 1,000 flows
 * (framing, both header blocks scanned, the observation), paired with
 * the same bytes through the framing follower alone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bench.h"
#include "l7.h"
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

#define XCH_FLOWS 1000u

static const char xch_req[] = "GET /item HTTP/1.1\r\nHost: bench\r\n"
			      "X-Priority: 5\r\n\r\n";
static const char xch_resp[] = "HTTP/1.1 200 OK\r\n"
			       "Date: Sun, 22 Nov 2026 03:00:00 GMT\r\n"
			       "Content-Type: text/plain\r\n"
			       "Content-Length: 2\r\n"
			       "X-SPL: 0.42\r\n"
			       "X-SPL-Time: 1795316400000\r\n\r\nok";

struct xch_arg {
	struct lb_l7_pool *pool;
	struct lb_http_follow_prof prof;
	struct lb_http_follow *hf; /* XCH_FLOWS followers alone */
	uint32_t idx[XCH_FLOWS];
	uint32_t seq[XCH_FLOWS][2];
	uint32_t next;
};

static void
xch_obs(void *owner, uint32_t tag, const struct lb_l7_obs *o)
{
	(void)owner;
	lb_bench_sink += tag + o->status + (uint64_t)(o->spl * 100);
}

static void
run_exchange(void *p, uint64_t iters)
{
	struct xch_arg *a = p;

	for (uint64_t i = 0; i < iters; i++) {
		uint32_t k = a->next;

		a->next = (k + 1) % XCH_FLOWS;
		lb_l7_segment(a->pool, a->idx[k], 0, a->seq[k][0],
			      (const uint8_t *)xch_req, sizeof(xch_req) - 1,
			      false, i);
		lb_l7_segment(a->pool, a->idx[k], 1, a->seq[k][1],
			      (const uint8_t *)xch_resp, sizeof(xch_resp) - 1,
			      false, i + 1);
		a->seq[k][0] += sizeof(xch_req) - 1;
		a->seq[k][1] += sizeof(xch_resp) - 1;
	}
}

static void
run_framing(void *p, uint64_t iters)
{
	struct xch_arg *a = p;

	for (uint64_t i = 0; i < iters; i++) {
		struct lb_http_follow *f = &a->hf[a->next];

		a->next = (a->next + 1) % XCH_FLOWS;
		lb_http_follow_request(f, (const uint8_t *)xch_req,
				       sizeof(xch_req) - 1, i);
		lb_http_follow_response(f, (const uint8_t *)xch_resp,
					sizeof(xch_resp) - 1, i + 1);
		lb_bench_sink += lb_http_follow_outstanding(f);
	}
}

/* A followed exchange against its framing alone. */
static void
bench_exchange(FILE *out, const struct lb_hdr_db *db,
	       struct lb_hdr_scratch *scr, unsigned int rounds)
{
	static const struct lb_http_follow_ops none = { 0 };
	struct xch_arg *a = calloc(1, sizeof(*a));
	bool ok = a != NULL;

	if (ok) {
		a->pool = lb_l7_pool_create(XCH_FLOWS, db, scr, NULL, xch_obs,
					    NULL, NULL);
		a->hf = calloc(XCH_FLOWS, sizeof(*a->hf));
		ok = a->pool != NULL && a->hf != NULL &&
		     lb_http_follow_prof_init(&a->prof, NULL, &none) == 0;
	}
	for (uint32_t k = 0; ok && k < XCH_FLOWS; k++) {
		a->idx[k] = lb_l7_open(a->pool, 0, 0, k, 0);
		ok = a->idx[k] != LB_L7_NONE &&
		     lb_http_follow_init(&a->hf[k], &a->prof, NULL, NULL) == 0;
	}
	if (ok) {
		const struct lb_bench_case x = {"l7 exchange", run_exchange, a};
		const struct lb_bench_case base = {"framing alone",
						   run_framing, a};

		fprintf(out, "hdr_scan: an exchange through an L7 pool of %u "
			     "flows (%zu-byte request, %zu-byte response)\n",
			XCH_FLOWS, sizeof(xch_req) - 1, sizeof(xch_resp) - 1);
		lb_bench_pair(out, &x, &base, 100000, rounds);
	} else {
		fprintf(out, "hdr_scan: exchange setup failed\n");
	}
	if (a != NULL) {
		lb_l7_pool_free(a->pool);
		free(a->hf);
	}
	free(a);
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
	bench_exchange(out, db, scr, rounds);
	lb_hdr_stream_fini(&st);
	lb_hdr_scratch_free(scr);
	lb_hdr_db_free(db);
}
