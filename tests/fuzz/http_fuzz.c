/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Both byte streams of an HTTP/1.x flow, cut into segments by the input,
 * through the follower (http_follow), the header scanner (hdr_scan) and
 * the worker's glue of the two (l7).
 *
 * Input: one byte of settings, then records: a byte whose bit 0 is the
 * direction (0 client -> backend) and whose other bits give the segment
 * length minus one (1..128), followed by that many bytes.
 *
 * Invariants:
 * - the follower's events (heads, ends, sequence numbers, status, body
 *   lengths, latency, the unfollowable reason) do not depend on how each
 *   segment is cut: the same input fed byte by byte gives the same trace;
 * - a head's reported length is the number of head bytes handed out;
 * - a header block scanned in streaming mode, in the pieces the follower
 *   handed out, gives the same result as the whole block in block mode;
 *   accepted values lie within their configured bounds;
 * - requests outstanding never exceed the queue depth; l7 reports one
 *   observation per final response head and never a negative in-flight
 *   count.
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "hdr_db.h"
#include "http_follow.h"
#include "l7.h"

#define MAX_EV 512
#define HEAD_MAX 4096

enum { EV_REQ_START = 1, EV_REQ_END, EV_REQ_DONE, EV_RESP_START, EV_RESP_END,
       EV_RESP_DONE, EV_UNFOLLOW };

struct ev {
	uint8_t type;
	uint8_t flags;
	uint16_t status;
	uint32_t seq;
	uint32_t head_len;
	uint64_t body_len;
	uint64_t latency_ns;
	uint32_t present;
	uint32_t valid;
};

struct run {
	struct ev ev[MAX_EV];
	unsigned int n;
	struct lb_hdr_stream hs[2];
	uint32_t fed[2]; /* head bytes handed out for the current head */
	uint8_t head[2][HEAD_MAX];
	bool overflow[2];
	unsigned int final_heads;
};

static struct lb_hdr_db *db;
static struct lb_hdr_scratch *scr;

static struct ev *
push(struct run *r, uint8_t type)
{
	static struct ev sink;

	if (r->n == MAX_EV)
		return memset(&sink, 0, sizeof(sink));
	r->ev[r->n].type = type;
	return &r->ev[r->n++];
}

static void
check_result(const struct lb_hdr_result *res)
{
	const struct lb_hdr_cfg *cfg = lb_hdr_db_cfg(db);

	for (unsigned int i = 0; i < cfg->nb_fields; i++) {
		const struct lb_hdr_field_cfg *f = &cfg->fields[i];
		const struct lb_hdr_value *v = &res->field[i];

		if (!(res->valid & (1u << i)))
			continue;
		FUZZ_CHECK(res->present & (1u << i));
		FUZZ_CHECK(v->reason == LB_HDR_OK && v->seen == 1);
		switch (f->kind) {
		case LB_HDR_KIND_SPL:
		case LB_HDR_KIND_DECIMAL:
			FUZZ_CHECK(isfinite(v->v.d));
			FUZZ_CHECK(v->v.d >= f->min && v->v.d <= f->max);
			break;
		case LB_HDR_KIND_ORCA:
			/* Not empty: a metric or a named entry. */
			FUZZ_CHECK(v->v.orca.present != 0 ||
				   v->v.orca.nb_named != 0);
			FUZZ_CHECK(v->v.orca.cpu_utilization >= f->min &&
				   v->v.orca.cpu_utilization <= f->max);
			break;
		default:
			FUZZ_CHECK((double)v->v.u >= f->min &&
				   (double)v->v.u <= f->max);
		}
	}
	if (res->status != 0)
		FUZZ_CHECK(res->status >= 100 && res->status <= 599);
}

/* Ends the head of direction @p d: streaming result against block mode. */
static void
head_end(struct run *r, int d, struct ev *e)
{
	struct lb_hdr_result s, b;

	FUZZ_CHECK(e->head_len == r->fed[d]);
	FUZZ_CHECK(lb_hdr_end(&r->hs[d], scr, &s) == 0);
	check_result(&s);
	if (!r->overflow[d]) {
		FUZZ_CHECK(lb_hdr_scan_block(db, scr, r->head[d], r->fed[d],
					     &b) == 0);
		FUZZ_CHECK(s.present == b.present && s.valid == b.valid);
		FUZZ_CHECK(s.status == b.status &&
			   s.status_seen == b.status_seen &&
			   s.status_reason == b.status_reason);
		for (unsigned int i = 0; i < LB_HDR_MAX_FIELDS; i++) {
			FUZZ_CHECK(s.field[i].seen == b.field[i].seen);
			FUZZ_CHECK(s.field[i].reason == b.field[i].reason);
			FUZZ_CHECK(!memcmp(&s.field[i].v, &b.field[i].v,
					   sizeof(b.field[i].v)));
		}
	}
	e->present = s.present;
	e->valid = s.valid;
}

static void
head_start(struct run *r, int d)
{
	FUZZ_CHECK(lb_hdr_stream_reset(&r->hs[d], scr) == 0);
	r->fed[d] = 0;
	r->overflow[d] = false;
}

static void
head_bytes(struct run *r, int d, const uint8_t *p, size_t n)
{
	FUZZ_CHECK(n > 0);
	FUZZ_CHECK(lb_hdr_feed(&r->hs[d], scr, p, n) == 0);
	if (r->fed[d] + n <= HEAD_MAX)
		memcpy(r->head[d] + r->fed[d], p, n);
	else
		r->overflow[d] = true;
	r->fed[d] += (uint32_t)n;
}

static void
req_head_start(void *ctx, const struct lb_http_follow_req *rq)
{
	push(ctx, EV_REQ_START)->seq = rq->seq;
	head_start(ctx, 0);
}

static void
req_head_bytes(void *ctx, const struct lb_http_follow_req *rq,
	       const uint8_t *p, size_t n)
{
	(void)rq;
	head_bytes(ctx, 0, p, n);
}

static void
req_head_end(void *ctx, const struct lb_http_follow_req *rq)
{
	struct ev *e = push(ctx, EV_REQ_END);

	e->seq = rq->seq;
	e->head_len = rq->head_len;
	head_end(ctx, 0, e);
}

static void
req_done(void *ctx, const struct lb_http_follow_req *rq)
{
	struct ev *e = push(ctx, EV_REQ_DONE);

	e->seq = rq->seq;
	e->flags = rq->flags;
	e->body_len = rq->body_len;
}

static void
resp_head_start(void *ctx, const struct lb_http_follow_resp *rs)
{
	push(ctx, EV_RESP_START)->seq = rs->req_seq;
	head_start(ctx, 1);
}

static void
resp_head_bytes(void *ctx, const struct lb_http_follow_resp *rs,
		const uint8_t *p, size_t n)
{
	(void)rs;
	head_bytes(ctx, 1, p, n);
}

static void
resp_head_end(void *ctx, const struct lb_http_follow_resp *rs)
{
	struct run *r = ctx;
	struct ev *e = push(r, EV_RESP_END);

	e->seq = rs->req_seq;
	e->status = rs->status;
	e->flags = rs->flags;
	e->head_len = rs->head_len;
	e->latency_ns = rs->latency_ns;
	/* RFC 9110 15: 600..999 are invalid but framed as final responses
	 * (a client treats them as 5xx). */
	FUZZ_CHECK(rs->status >= 100 && rs->status <= 999);
	if (!(rs->flags & LB_HTTP_FOLLOW_RESP_INTERIM))
		r->final_heads++;
	head_end(r, 1, e);
}

static void
resp_done(void *ctx, const struct lb_http_follow_resp *rs)
{
	struct ev *e = push(ctx, EV_RESP_DONE);

	e->seq = rs->req_seq;
	e->status = rs->status;
	e->flags = rs->flags;
	e->body_len = rs->body_len;
}

static void
unfollowable(void *ctx, enum lb_http_follow_reason why)
{
	FUZZ_CHECK(why > LB_HTTP_FOLLOW_OK && why < LB_HTTP_FOLLOW_R_MAX);
	push(ctx, EV_UNFOLLOW)->status = (uint16_t)why;
}

static const struct lb_http_follow_ops ops = {
	.req_head_start = req_head_start,
	.req_head_bytes = req_head_bytes,
	.req_head_end = req_head_end,
	.req_done = req_done,
	.resp_head_start = resp_head_start,
	.resp_head_bytes = resp_head_bytes,
	.resp_head_end = resp_head_end,
	.resp_done = resp_done,
	.unfollowable = unfollowable,
};

/* Feeds the records; @p bytewise cuts every segment into single bytes. */
static void
follow(const struct lb_http_follow_prof *prof, struct run *r,
       const uint8_t *data, size_t size, bool bytewise, bool close)
{
	struct lb_http_follow f;
	struct fuzz_in in = {data, size};
	uint64_t now = 1000;

	FUZZ_CHECK(lb_hdr_stream_init(&r->hs[0], db) == 0);
	FUZZ_CHECK(lb_hdr_stream_init(&r->hs[1], db) == 0);
	FUZZ_CHECK(lb_http_follow_init(&f, prof, NULL, r) == 0);
	while (in.n > 0) {
		uint8_t b = fuzz_take(&in);
		size_t len = (size_t)(b >> 1) + 1;

		if (len > in.n)
			len = in.n;
		now += 1000;
		for (size_t off = 0; off < len;) {
			size_t k = bytewise ? 1 : len;
			int rc = (b & 1) ? lb_http_follow_response(&f,
						   in.p + off, k, now)
					 : lb_http_follow_request(&f,
						   in.p + off, k, now);

			FUZZ_CHECK(rc == 0 || rc == -EPROTO);
			FUZZ_CHECK(lb_http_follow_outstanding(&f) <=
				   prof->conf.queue_depth);
			off += k;
		}
		in.p += len;
		in.n -= len;
	}
	if (close)
		lb_http_follow_close(&f, now + 1000);
	lb_hdr_stream_fini(&r->hs[0]);
	lb_hdr_stream_fini(&r->hs[1]);
}

struct l7_sink {
	unsigned int obs;
	int inflight;
};

static void
on_obs(void *owner, uint32_t tag, const struct lb_l7_obs *o)
{
	struct l7_sink *s = owner;

	(void)tag;
	FUZZ_CHECK(o->status >= 100 && o->status <= 999);
	if (o->has_spl)
		FUZZ_CHECK(isfinite(o->spl) && o->spl >= 0);
	s->obs++;
}

static void
on_inflight(void *owner, uint32_t tag, int delta)
{
	struct l7_sink *s = owner;

	(void)tag;
	FUZZ_CHECK(delta == 1 || delta == -1);
	s->inflight += delta;
	FUZZ_CHECK(s->inflight >= 0);
	FUZZ_CHECK(s->inflight <= LB_HTTP_FOLLOW_QUEUE_MAX);
}

/* The same segments through the worker's l7 glue, sequence numbers and
 * all. */
static unsigned int
follow_l7(const struct lb_http_follow_conf *conf, const uint8_t *data,
	  size_t size)
{
	struct l7_sink s = {0, 0};
	struct lb_l7_pool *p = lb_l7_pool_create(1, db, scr, conf, on_obs,
						 on_inflight, &s);
	struct fuzz_in in = {data, size};
	uint32_t seq[2] = {1000, 0xfffffff0u}; /* the second one wraps */
	uint64_t now = 1000;
	uint32_t idx;

	FUZZ_CHECK(p != NULL);
	idx = lb_l7_open(p, seq[0], seq[1], 7, 0);
	FUZZ_CHECK(idx != LB_L7_NONE);
	while (in.n > 0) {
		uint8_t b = fuzz_take(&in);
		uint32_t len = (uint32_t)(b >> 1) + 1;

		if (len > in.n)
			len = (uint32_t)in.n;
		now += 1000;
		lb_l7_segment(p, idx, b & 1, seq[b & 1], in.p, len, false,
			      now);
		seq[b & 1] += len;
		in.p += len;
		in.n -= len;
	}
	lb_l7_close(p, idx);
	FUZZ_CHECK(s.inflight == 0);
	lb_l7_pool_free(p);
	return s.obs;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct run a, b;
	struct lb_http_follow_conf conf;
	struct lb_http_follow_prof prof;
	uint8_t set;
	unsigned int obs;

	fz_hdr_open(&db, &scr);
	if (size < 1 || size > 16384)
		return 0;
	set = data[0];
	lb_http_follow_conf_default(&conf);
	conf.reject_bare_lf = set & 1;
	conf.te_with_cl = (set & 2) ? LB_HTTP_FOLLOW_TECL_TE_WINS
				    : LB_HTTP_FOLLOW_TECL_REJECT;
	if (set & 4) {
		conf.max_line = LB_HTTP_FOLLOW_MAX_LINE_MIN;
		conf.max_head = 256;
	}
	conf.queue_depth = 1 + ((set >> 3) & 15);
	FUZZ_CHECK(lb_http_follow_prof_init(&prof, &conf, &ops) == 0);

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	follow(&prof, &a, data + 1, size - 1, false, set & 0x80);
	follow(&prof, &b, data + 1, size - 1, true, set & 0x80);
	FUZZ_CHECK(a.n == b.n);
	FUZZ_CHECK(!memcmp(a.ev, b.ev, a.n * sizeof(a.ev[0])));

	obs = follow_l7(&conf, data + 1, size - 1);
	FUZZ_CHECK(obs == a.final_heads || a.n == MAX_EV);
	return 0;
}
