/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lb/l7.h"

#define REQ_RING LB_HTTP_FOLLOW_QUEUE_MAX

/* What a request's header block asked for, until its response comes. */
struct req_info {
	uint32_t seq;
	uint32_t expect_ms;
	uint32_t prio;
	uint8_t has_expect;
	uint8_t has_prio;
};

struct entry {
	struct lb_http_follow hf;
	struct lb_hdr_stream hs[2]; /* [0] requests, [1] responses */
	struct lb_l7_pool *pool;
	uint32_t next_seq[2];       /* next in-order byte per direction */
	uint32_t tag;
	uint32_t inflight;          /* requests complete, not yet answered */
	uint32_t last_done;         /* last request complete (they complete
				     * and are answered in order) */
	uint32_t last_answered;     /* last request finally answered */
	uint32_t next_free;
	bool used;
	bool stopped;
	uint8_t gate_on;
	uint8_t armed;    /* this segment starts at a request boundary */
	uint8_t gate;     /* enum gate */
	uint32_t arm_seq; /* first fresh octet of this segment */
	uint32_t gate_req; /* request whose admission is open or done */
	uint32_t gate_seq; /* its first octet */
	struct req_info req[REQ_RING];
};

/* Admission of the request that starts a segment (include/lb/l7.h). */
enum gate {
	G_NONE = 0,
	G_PENDING, /* head incomplete, undecided: segments are held */
	G_DECIDED, /* admitted before its head ended */
	G_REFUSED,
};

struct lb_l7_pool {
	struct lb_http_follow_prof prof;
	struct lb_http_follow_stats fstats;
	const struct lb_hdr_db *db;
	struct lb_hdr_scratch *scratch;
	lb_l7_obs_fn obs;
	lb_l7_inflight_fn inflight;
	lb_l7_admit_fn admit;
	void *owner;
	int f_spl, f_spl_time, f_prio, f_expect, f_orca;
	uint32_t capacity;
	uint32_t free_head;
	struct lb_l7_stats st;
	struct entry e[];
};

static const struct lb_hdr_value *
field(const struct lb_hdr_result *r, int idx)
{
	if (idx < 0 || !(r->valid & (1u << idx)))
		return NULL;
	return &r->field[idx];
}

/* ---- follower callbacks ------------------------------------------------ */

static void
req_head_start(void *ctx, const struct lb_http_follow_req *rq)
{
	struct entry *e = ctx;

	lb_hdr_stream_reset(&e->hs[0], e->pool->scratch);
	if (e->armed && e->gate == G_NONE) {
		e->gate = G_PENDING;
		e->gate_req = rq->seq;
		e->gate_seq = e->arm_seq;
	}
}

/* Asks the pool's admission callback about request @p rq_seq. */
static void
gate_ask(struct entry *e, uint32_t rq_seq, const struct req_info *ri,
	 bool partial)
{
	struct lb_l7_pool *p = e->pool;
	struct lb_l7_req rq = {
		.has_prio = ri != NULL && ri->has_prio,
		.prio = ri != NULL ? ri->prio : 0,
		.partial = partial,
		.can_refuse = e->gate == G_PENDING && rq_seq == e->gate_req,
	};
	bool refuse;

	if (!e->gate_on || p->admit == NULL || e->gate == G_REFUSED)
		return;
	if (e->gate == G_DECIDED && rq_seq == e->gate_req) {
		e->gate = G_NONE;
		return;
	}
	refuse = p->admit(p->owner, e->tag, &rq);
	if (!rq.can_refuse)
		return;
	if (refuse)
		e->gate = G_REFUSED;
	else
		e->gate = partial ? G_DECIDED : G_NONE;
}

static void
req_head_bytes(void *ctx, const struct lb_http_follow_req *rq,
	       const uint8_t *p, size_t n)
{
	struct entry *e = ctx;

	(void)rq;
	lb_hdr_feed(&e->hs[0], e->pool->scratch, p, n);
}

static void
req_head_end(void *ctx, const struct lb_http_follow_req *rq)
{
	struct entry *e = ctx;
	struct lb_l7_pool *p = e->pool;
	struct req_info *ri = &e->req[rq->seq % REQ_RING];
	struct lb_hdr_result r;
	const struct lb_hdr_value *v;

	memset(ri, 0, sizeof(*ri));
	ri->seq = rq->seq;
	if (lb_hdr_end(&e->hs[0], p->scratch, &r) != 0) {
		gate_ask(e, rq->seq, NULL, false);
		return;
	}
	v = field(&r, p->f_expect);
	if (v != NULL) {
		ri->has_expect = 1;
		ri->expect_ms = (uint32_t)v->v.u;
	}
	v = field(&r, p->f_prio);
	if (v != NULL) {
		ri->has_prio = 1;
		ri->prio = (uint32_t)v->v.u;
	}
	gate_ask(e, rq->seq, ri, false);
}

static void
req_done(void *ctx, const struct lb_http_follow_req *rq)
{
	struct entry *e = ctx;

	e->pool->st.requests++;
	e->last_done = rq->seq;
	/* Answered before its last byte (an early error while the client
	 * uploads): it never was in flight. */
	if ((int32_t)(rq->seq - e->last_answered) <= 0)
		return;
	e->inflight++;
	if (e->pool->inflight != NULL)
		e->pool->inflight(e->pool->owner, e->tag, +1);
}

static void
resp_head_start(void *ctx, const struct lb_http_follow_resp *rs)
{
	struct entry *e = ctx;

	(void)rs;
	lb_hdr_stream_reset(&e->hs[1], e->pool->scratch);
}

static void
resp_head_bytes(void *ctx, const struct lb_http_follow_resp *rs,
		const uint8_t *p, size_t n)
{
	struct entry *e = ctx;

	(void)rs;
	lb_hdr_feed(&e->hs[1], e->pool->scratch, p, n);
}

static void
resp_head_end(void *ctx, const struct lb_http_follow_resp *rs)
{
	struct entry *e = ctx;
	struct lb_l7_pool *p = e->pool;
	struct lb_l7_obs o;
	struct lb_hdr_result r;
	const struct lb_hdr_value *v;
	const struct req_info *ri;

	if (lb_hdr_end(&e->hs[1], p->scratch, &r) != 0)
		memset(&r, 0, sizeof(r));
	/* 1xx are interim: the request is still waiting for its answer. */
	if (rs->flags & LB_HTTP_FOLLOW_RESP_INTERIM)
		return;
	memset(&o, 0, sizeof(o));
	o.status = rs->status;
	o.timed = (rs->flags & LB_HTTP_FOLLOW_RESP_TIMED) != 0;
	o.latency_ns = rs->latency_ns;
	v = field(&r, p->f_spl);
	if (v != NULL) {
		o.has_spl = true;
		o.spl = v->v.d;
	}
	v = field(&r, p->f_spl_time);
	if (v != NULL) {
		o.has_spl_time = true;
		o.spl_time_ms = v->v.u;
	}
	v = field(&r, p->f_orca);
	/* A report without cpu_utilization (only named metrics, say) says
	 * nothing about the load the view keeps: not a CPU of 0. */
	if (v != NULL && (v->v.orca.present & LB_HDR_ORCA_CPU)) {
		o.has_orca = true;
		o.orca_cpu = v->v.orca.cpu_utilization;
		o.orca_mem = v->v.orca.mem_utilization;
	}
	ri = &e->req[rs->req_seq % REQ_RING];
	if (rs->req_seq != 0 && ri->seq == rs->req_seq) {
		o.has_expect = ri->has_expect;
		o.expect_ms = ri->expect_ms;
		o.has_prio = ri->has_prio;
		o.prio = ri->prio;
	}
	p->st.responses++;
	p->obs(p->owner, e->tag, &o);
}

static void
resp_done(void *ctx, const struct lb_http_follow_resp *rs)
{
	struct entry *e = ctx;

	if ((rs->flags & LB_HTTP_FOLLOW_RESP_INTERIM) || rs->req_seq == 0)
		return;
	e->last_answered = rs->req_seq;
	/* A request still being sent is not counted yet (see req_done). */
	if ((int32_t)(rs->req_seq - e->last_done) > 0 || e->inflight == 0)
		return;
	e->inflight--;
	if (e->pool->inflight != NULL)
		e->pool->inflight(e->pool->owner, e->tag, -1);
}

static void
unfollowable(void *ctx, enum lb_http_follow_reason why)
{
	struct entry *e = ctx;

	if (why != LB_HTTP_FOLLOW_R_LOST)
		e->pool->st.unfollowable++;
	e->stopped = true;
}

/* ---- pool --------------------------------------------------------------- */

void
lb_l7_pool_free(struct lb_l7_pool *p)
{
	if (p == NULL)
		return;
	for (uint32_t i = 0; i < p->capacity; i++) {
		lb_hdr_stream_fini(&p->e[i].hs[0]);
		lb_hdr_stream_fini(&p->e[i].hs[1]);
	}
	free(p);
}

struct lb_l7_pool *
lb_l7_pool_create(uint32_t capacity, const struct lb_hdr_db *db,
		  struct lb_hdr_scratch *scratch,
		  const struct lb_http_follow_conf *conf, lb_l7_obs_fn obs,
		  lb_l7_inflight_fn inflight, void *owner)
{
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
	struct lb_l7_pool *p;

	if (capacity == 0 || capacity > (1u << 22) || db == NULL ||
	    scratch == NULL || obs == NULL) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p) + (size_t)capacity * sizeof(p->e[0]));
	if (p == NULL)
		return NULL;
	if (lb_http_follow_prof_init(&p->prof, conf, &ops) != 0) {
		free(p);
		errno = EINVAL;
		return NULL;
	}
	p->db = db;
	p->scratch = scratch;
	p->obs = obs;
	p->inflight = inflight;
	p->owner = owner;
	p->capacity = capacity;
	p->f_spl = lb_hdr_db_field(db, LB_HDR_KIND_SPL);
	p->f_spl_time = lb_hdr_db_field(db, LB_HDR_KIND_SPL_TIME);
	p->f_prio = lb_hdr_db_field(db, LB_HDR_KIND_PRIORITY);
	p->f_expect = lb_hdr_db_field(db, LB_HDR_KIND_EXPECT_MS);
	p->f_orca = lb_hdr_db_field(db, LB_HDR_KIND_ORCA);
	for (uint32_t i = 0; i < capacity; i++) {
		struct entry *e = &p->e[i];

		e->pool = p;
		e->next_free = i + 1 < capacity ? i + 1 : LB_L7_NONE;
		/* Streams are opened once here; per header block they are
		 * only reset, so following never allocates. */
		if (lb_hdr_stream_init(&e->hs[0], db) != 0 ||
		    lb_hdr_stream_init(&e->hs[1], db) != 0) {
			lb_l7_pool_free(p);
			errno = ENOMEM;
			return NULL;
		}
	}
	p->free_head = 0;
	return p;
}

uint32_t
lb_l7_open(struct lb_l7_pool *p, uint32_t client_seq, uint32_t backend_seq,
	   uint32_t tag)
{
	struct entry *e;
	uint32_t idx = p->free_head;

	if (idx == LB_L7_NONE) {
		p->st.pool_full++;
		return LB_L7_NONE;
	}
	e = &p->e[idx];
	p->free_head = e->next_free;
	lb_http_follow_init(&e->hf, &p->prof, &p->fstats, e);
	lb_hdr_stream_reset(&e->hs[0], p->scratch);
	lb_hdr_stream_reset(&e->hs[1], p->scratch);
	e->next_seq[0] = client_seq;
	e->next_seq[1] = backend_seq;
	e->tag = tag;
	e->inflight = 0;
	e->last_done = 0;
	e->last_answered = 0;
	e->used = true;
	e->stopped = false;
	e->gate_on = 0;
	e->armed = 0;
	e->gate = G_NONE;
	memset(e->req, 0, sizeof(e->req));
	p->st.flows++;
	return idx;
}

void
lb_l7_close(struct lb_l7_pool *p, uint32_t idx)
{
	struct entry *e;

	if (idx >= p->capacity || !p->e[idx].used)
		return;
	e = &p->e[idx];
	/* Requests never answered leave the in-flight count with the flow. */
	while (e->inflight > 0) {
		e->inflight--;
		if (p->inflight != NULL)
			p->inflight(p->owner, e->tag, -1);
	}
	e->used = false;
	e->next_free = p->free_head;
	p->free_head = idx;
}

/* Feeds the octets of a segment starting @p off before the next one
 * expected that were not fed yet. */
static void
feed(struct entry *e, int dir, const uint8_t *data, uint32_t len, int32_t off,
     uint64_t now_ns)
{
	const uint8_t *fresh;
	uint32_t n;
	int rc;

	if (len == 0 || (uint32_t)-off >= len)
		return;
	/* Skip what a retransmission repeats, feed the rest. */
	fresh = data + (uint32_t)-off;
	n = len - (uint32_t)-off;
	rc = dir == 0 ? lb_http_follow_request(&e->hf, fresh, n, now_ns) :
			lb_http_follow_response(&e->hf, fresh, n, now_ns);
	e->next_seq[dir] += n;
	if (rc != 0)
		e->stopped = true;
}

int
lb_l7_segment(struct lb_l7_pool *p, uint32_t idx, int dir, uint32_t seq,
	      const uint8_t *data, uint32_t len, bool fin, uint64_t now_ns)
{
	struct entry *e;
	int32_t off;

	if (idx >= p->capacity || !p->e[idx].used || dir < 0 || dir > 1)
		return -EINVAL;
	e = &p->e[idx];
	if (e->stopped)
		return -EPROTO;
	if (e->gate == G_REFUSED)
		return dir == 0 ? LB_L7_REJECT : 0;
	/* Serial arithmetic (RFC 1982): how far this segment starts from
	 * the next byte we expect. */
	off = (int32_t)(seq - e->next_seq[dir]);
	if (off > 0) {
		/* A gap: bytes are missing, framing can no longer be
		 * trusted. */
		p->st.gaps++;
		lb_http_follow_lost(&e->hf);
		e->stopped = true;
		return -EPROTO;
	}
	if (dir == 0 && e->gate_on) {
		uint8_t was = e->gate;
		bool fresh = len > 0 && (uint32_t)-off < len;

		/* Nothing outstanding: the next octet starts a request. */
		e->armed = was == G_NONE &&
			   lb_http_follow_outstanding(&e->hf) == 0;
		e->arm_seq = e->next_seq[0];
		feed(e, dir, data, len, off, now_ns);
		e->armed = 0;
		if (e->stopped)
			return -EPROTO;
		if (e->gate == G_REFUSED)
			return LB_L7_REJECT;
		if (e->gate == G_PENDING)
			return fresh || fin ? LB_L7_HOLD : LB_L7_REPEAT;
		return was == G_PENDING ? LB_L7_RELEASE : LB_L7_PASS;
	}
	feed(e, dir, data, len, off, now_ns);
	if (fin && dir == 1 && !e->stopped)
		lb_http_follow_close(&e->hf, now_ns);
	return e->stopped ? -EPROTO : 0;
}

void
lb_l7_set_admit(struct lb_l7_pool *p, lb_l7_admit_fn fn)
{
	p->admit = fn;
}

void
lb_l7_gate(struct lb_l7_pool *p, uint32_t idx, bool on)
{
	if (idx < p->capacity && p->e[idx].used)
		p->e[idx].gate_on = on && p->admit != NULL;
}

int
lb_l7_decide(struct lb_l7_pool *p, uint32_t idx)
{
	struct entry *e;

	if (idx >= p->capacity || !p->e[idx].used ||
	    p->e[idx].gate != G_PENDING)
		return LB_L7_PASS;
	e = &p->e[idx];
	gate_ask(e, e->gate_req, NULL, true);
	return e->gate == G_REFUSED ? LB_L7_REJECT : LB_L7_RELEASE;
}

void
lb_l7_seq(const struct lb_l7_pool *p, uint32_t idx, uint32_t *cli_nxt,
	  uint32_t *srv_nxt, uint32_t *req_seq)
{
	const struct entry *e = &p->e[idx < p->capacity ? idx : 0];

	*cli_nxt = e->next_seq[0];
	*srv_nxt = e->next_seq[1];
	*req_seq = e->gate_seq;
}

void
lb_l7_stats_get(const struct lb_l7_pool *p, struct lb_l7_stats *st)
{
	*st = p->st;
}
