/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Header scanning: the control process compiles the header database and
 * publishes it serialized; a worker loads it and follows response header
 * blocks that arrive split into odd TCP segments, extracting what the
 * backends say about their load and rejecting what cannot be trusted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb/hdr_scan.h"
#include "lb/rng.h"

#define MAX_CUTS 6

static const struct {
	const char *who;
	const char *in;
	const char *text;
} blocks[] = {
	{"be1 normal response",
	 "X-SPL: 0.8 and X-SPL-Time: 1700000000123 among 9 headers",
	 "HTTP/1.1 200 OK\r\nDate: Tue, 14 Nov 2023 22:13:20 GMT\r\n"
	 "Server: app/2.1\r\nContent-Type: application/json\r\n"
	 "Content-Length: 1834\r\nCache-Control: no-store\r\n"
	 "X-SPL: 0.8\r\nX-SPL-Time: 1700000000123\r\n"
	 "X-Request-Id: 7f1c2a9e\r\n\r\n"},
	{"be2 hostile values",
	 "X-SPL: 1e309, X-SPL-Time: 23 nines, \"endpoint-load-metrics :\", "
	 "X-Debug: X-SPL: 0.1",
	 "HTTP/1.1 200 OK\r\nX-SPL: 1e309\r\n"
	 "X-SPL-Time: 99999999999999999999999\r\n"
	 "X-Debug: X-SPL: 0.1\r\n"
	 "endpoint-load-metrics : TEXT cpu_utilization=0.1\r\n\r\n"},
	{"be3 repeated and folded",
	 "X-SPL: 0.3 then X-Spl: 0.9, X-SPL-Time folded onto a 2nd line",
	 "HTTP/1.1 200 OK\r\nX-SPL: 0.3\r\nX-Spl: 0.9\r\n"
	 "X-SPL-Time: 1700000000123\r\n 456\r\n\r\n"},
	{"be4 ORCA report",
	 "endpoint-load-metrics: TEXT cpu_utilization=0.3, "
	 "mem_utilization=0.8, ...",
	 "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 2\r\n"
	 "endpoint-load-metrics: TEXT cpu_utilization=0.3, "
	 "mem_utilization=0.8, rps_fractional=100, named_metrics.foo=0.5\r\n"
	 "\r\n"},
	{"client request", "X-Priority: 2, X-Expect-Ms: 250",
	 "POST /api/orders HTTP/1.1\r\nHost: shop\r\nX-Priority: 2\r\n"
	 "X-Expect-Ms: 250\r\nContent-Length: 42\r\n\r\n"},
};

#define NB_BLOCKS (sizeof(blocks) / sizeof(blocks[0]))

static int
cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return (x > y) - (x < y);
}

static void
print_field(FILE *out, const struct lb_hdr_field_cfg *f,
	    const struct lb_hdr_value *v)
{
	const struct lb_hdr_orca *o = &v->v.orca;

	if (v->reason != LB_HDR_OK) {
		fprintf(out, " | %s REJECTED %s", f->name,
			lb_hdr_reason_str(v->reason));
		if (v->seen > 1)
			fprintf(out, " (%ux)", v->seen);
		return;
	}
	switch (f->kind) {
	case LB_HDR_KIND_SPL:
	case LB_HDR_KIND_DECIMAL:
		fprintf(out, " | %s %g", f->name, v->v.d);
		break;
	case LB_HDR_KIND_ORCA:
		fprintf(out, " | ORCA cpu %g mem %g rps %g (+%u named)",
			o->cpu_utilization, o->mem_utilization,
			o->rps_fractional, o->nb_named);
		break;
	default:
		fprintf(out, " | %s %llu", f->name, (unsigned long long)v->v.u);
		break;
	}
}

static void
print_result(FILE *out, const struct lb_hdr_cfg *cfg,
	     const struct lb_hdr_result *r)
{
	if (r->status_seen && r->status_reason == LB_HDR_OK)
		fprintf(out, "    out: status %u", r->status);
	else if (r->status_seen)
		fprintf(out, "    out: status REJECTED %s",
			lb_hdr_reason_str(r->status_reason));
	else
		fprintf(out, "    out: (request)");
	for (unsigned int i = 0; i < cfg->nb_fields; i++)
		if (r->present & (1u << i))
			print_field(out, &cfg->fields[i], &r->field[i]);
	fprintf(out, "\n");
}

/*
 * Feeds block @p b to @p stream in 3 to MAX_CUTS + 1 segments cut at
 * random points, printing their sizes.
 */
static int
feed_cut(FILE *out, struct lb_rng *rng, struct lb_hdr_stream *stream,
	 struct lb_hdr_scratch *scr, size_t b)
{
	const char *t = blocks[b].text;
	size_t n = strlen(t), cut[MAX_CUTS], nc, prev = 0;

	nc = 2 + lb_rng_below(rng, MAX_CUTS - 1);
	for (size_t i = 0; i < nc; i++)
		cut[i] = 1 + lb_rng_below(rng, n - 1);
	qsort(cut, nc, sizeof(cut[0]), cmp_size);
	fprintf(out, "[%zu] %s: %zu B in segments ", b + 1, blocks[b].who, n);
	for (size_t i = 0; i <= nc; i++) {
		size_t end = i < nc ? cut[i] : n;

		fprintf(out, "%s%zu", i ? "+" : "", end - prev);
		if (lb_hdr_feed(stream, scr, t + prev, end - prev))
			return -1;
		prev = end;
	}
	fprintf(out, "\n    in:  %s\n", blocks[b].in);
	return 0;
}

static void
print_counters(FILE *out, const struct lb_hdr_stats *st)
{
	fprintf(out,
		"counters: blocks %llu, bytes %llu, accepted %llu, "
		"status ok %llu\n  rejected:",
		(unsigned long long)st->blocks, (unsigned long long)st->bytes,
		(unsigned long long)st->accepted,
		(unsigned long long)st->status_ok);
	for (unsigned int r = 1; r < LB_HDR_ERR_MAX; r++)
		if (st->rejected[r])
			fprintf(out, " %s %llu", lb_hdr_reason_str(r),
				(unsigned long long)st->rejected[r]);
	fprintf(out, "\nonly accepted values become feedback records; "
		     "\"X-Debug: X-SPL: 0.1\" was never a match\n");
}

int
lb_sim_hdr_scan(FILE *out)
{
	struct lb_hdr_result res[NB_BLOCKS], check;
	struct lb_hdr_db *ctl_db = NULL, *wk_db = NULL;
	struct lb_hdr_scratch *scr = NULL, *scr2 = NULL;
	const struct lb_hdr_stats *st;
	struct lb_hdr_stream stream;
	const struct lb_hdr_cfg *cfg;
	struct lb_hdr_cfg c;
	struct lb_xoshiro x;
	struct lb_rng rng = lb_rng_xoshiro(&x);
	unsigned int agree = 0;
	void *shm = NULL;
	size_t len = 0;
	int rc = -1, sinit = 0;

	/* Control process: compile, then publish the bytes. */
	lb_hdr_cfg_default(&c);
	ctl_db = lb_hdr_db_compile(&c);
	if (ctl_db == NULL ||
	    lb_hdr_db_serialize(ctl_db, NULL, 0, &len) != -ENOSPC)
		goto out;
	shm = aligned_alloc(64, (len + 63) & ~(size_t)63);
	if (shm == NULL || lb_hdr_db_serialize(ctl_db, shm, len, &len) != 0)
		goto out;
	/* Worker: load from the published bytes, one scratch per core. */
	wk_db = lb_hdr_db_deserialize(shm, len);
	if (wk_db == NULL)
		goto out;
	scr = lb_hdr_scratch_alloc(wk_db);
	scr2 = scr ? lb_hdr_scratch_clone(scr) : NULL;
	if (scr2 == NULL || lb_hdr_stream_init(&stream, wk_db) != 0)
		goto out;
	sinit = 1;
	cfg = lb_hdr_db_cfg(wk_db);
	fprintf(out, "fields:");
	for (unsigned int i = 0; i < cfg->nb_fields; i++)
		fprintf(out, " %s (%s)", cfg->fields[i].name,
			lb_hdr_kind_str(cfg->fields[i].kind));
	fprintf(out,
		"\ncontrol compiled one pattern per name, published %zu "
		"bytes; the worker loaded them\n",
		len);
	fprintf(out,
		"per exchange: %zu B stream struct + %zu B Hyperscan "
		"state, fixed, reused for every block\n\n",
		sizeof(stream), lb_hdr_db_stream_size(wk_db));

	lb_xoshiro_seed(&x, 7);
	for (size_t b = 0; b < NB_BLOCKS; b++) {
		const char *t = blocks[b].text;
		size_t n = strlen(t);

		if (feed_cut(out, &rng, &stream, scr, b) != 0)
			goto out;
		if (lb_hdr_end(&stream, scr, &res[b]) != 0)
			goto out;
		print_result(out, cfg, &res[b]);
		/* A second core, whole-block mode, must read the same. */
		if (lb_hdr_scan_block(wk_db, scr2, t, n, &check) != 0)
			goto out;
		agree += memcmp(&check, &res[b], sizeof(check)) == 0;
	}
	st = lb_hdr_scratch_stats(scr);
	fprintf(out,
		"\nsecond core, whole blocks in block mode: %u of %zu "
		"results identical\n",
		agree, NB_BLOCKS);
	print_counters(out, st);
	rc = agree == NB_BLOCKS ? 0 : -1;
out:
	if (sinit)
		lb_hdr_stream_fini(&stream);
	lb_hdr_scratch_free(scr2);
	lb_hdr_scratch_free(scr);
	lb_hdr_db_free(wk_db);
	lb_hdr_db_free(ctl_db);
	free(shm);
	return rc;
}
