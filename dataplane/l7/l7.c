/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "l7.h"

#define REQ_RING LB_HTTP_FOLLOW_QUEUE_MAX

/*
 * A stream is held only while a header block is cut by a segment
 * boundary, from that segment to the one that ends the block: a short
 * time, and rare, since most blocks arrive whole. So a pool keeps one
 * stream per STRM_SHARE flows (a small pool one per flow, at least
 * STRM_MIN), not one per flow: a stream (its capture buffer, the
 * outcome of every field, Hyperscan's state) is larger than all the
 * rest a followed flow holds. When none is free, the cut block's fields
 * are lost and counted (blocks_lost); its exchange is still followed.
 */
#define STRM_MIN 64u
#define STRM_SHARE 16u

/* What a request's header block asked for, until its response comes. */
struct req_info {
	uint32_t seq;
	uint32_t expect_ms;
	uint16_t prio;
	uint8_t has_expect;
	uint8_t has_prio;
	uint8_t excluded; /* its path has an excluded prefix */
};

/* Excluded path prefixes of one header map. */
struct l7_excl {
	uint8_t n;
	uint8_t len[LB_HTTP_ERR_PATHS];
	char s[LB_HTTP_ERR_PATHS][LB_HTTP_ERR_PATH_MAX + 1];
};

/* Where the request line's target is being compared with the prefixes. */
enum { RL_METHOD = 0, RL_TARGET, RL_DONE };

struct entry {
	struct lb_http_follow hf;
	struct lb_l7_pool *pool;
	uint32_t next_seq[2];       /* next in-order byte per direction */
	uint32_t tag;
	uint32_t inflight;          /* requests complete, not yet answered */
	uint32_t last_done;         /* last request complete (they complete
				     * and are answered in order) */
	uint32_t last_answered;     /* last request finally answered */
	uint32_t next_free;
	/* Stream of the header block in progress per direction ([0]
	 * requests, [1] responses), LB_L7_NONE when none is cut. */
	uint32_t strm[2];
	uint8_t lost[2];            /* that block's fields are lost */
	uint8_t map;
	uint8_t rl_state;           /* RL_*, for the request head */
	uint8_t rl_pos;             /* target bytes compared */
	uint8_t ex_cand;            /* prefixes still matching */
	bool used;
	bool stopped;
	uint8_t heads; /* each request head goes to the head callback */
	uint8_t gate_on;
	uint8_t armed;    /* this segment starts at a request boundary */
	uint8_t gate;     /* enum gate */
	uint32_t arm_seq; /* first fresh octet of this segment */
	uint32_t gate_req; /* request whose admission is open or done */
	uint32_t gate_seq; /* its first octet */
	uint32_t started;  /* last request whose head started */
	uint8_t refuse_now; /* G_WAIT ended: the answer goes out now */
	struct req_info req[REQ_RING];
};

/* Admission of the request that starts a segment (dataplane/l7/l7.h). */
enum gate {
	G_NONE = 0,
	G_PENDING, /* head incomplete, undecided: segments are held */
	G_DECIDED, /* admitted before its head ended */
	G_REFUSED,
	/* refused behind earlier requests still unanswered: held until
	 * their responses are through, then answered */
	G_WAIT,
};

struct lb_l7_pool {
	struct lb_http_follow_prof prof;
	struct lb_http_follow_stats fstats;
	const struct lb_hdr_db *db;
	struct lb_hdr_scratch *scratch;
	lb_l7_obs_fn obs;
	lb_l7_inflight_fn inflight;
	lb_l7_admit_fn admit;
	lb_l7_head_fn head;
	void *owner;
	/* The piece of a header block that the segment being fed holds, not
	 * yet scanned: scanned whole in block mode if the block ends in the
	 * segment, else fed to a stream at the segment's end. */
	const uint8_t *pend;
	size_t pend_len;
	uint32_t capacity;
	uint32_t free_head;
	uint32_t nb_strm;
	struct lb_hdr_stream *strm; /* nb_strm streams */
	uint32_t *strm_free;
	uint32_t strm_nfree;
	struct lb_l7_stats st;
	struct lb_hdr_map map[LB_L7_MAPS];
	struct l7_excl excl[LB_L7_MAPS];
	struct entry e[];
};

static const struct lb_hdr_value *
field(const struct lb_hdr_result *r, int idx)
{
	if (idx < 0 || !(r->valid & (1u << idx)))
		return NULL;
	return &r->field[idx];
}

/* ---- header blocks ----------------------------------------------------- */

static void
strm_put(struct lb_l7_pool *p, struct entry *e, int dir)
{
	if (e->strm[dir] == LB_L7_NONE)
		return;
	lb_hdr_stream_reset(&p->strm[e->strm[dir]], p->scratch);
	p->strm_free[p->strm_nfree++] = e->strm[dir];
	e->strm[dir] = LB_L7_NONE;
}

/* Feeds bytes of a cut block to its stream, taking one first if needed;
 * without a free stream the block's fields are lost. */
static void
strm_feed(struct lb_l7_pool *p, struct entry *e, int dir, const uint8_t *b,
	  size_t n)
{
	if (e->lost[dir])
		return;
	if (e->strm[dir] == LB_L7_NONE) {
		if (p->strm_nfree == 0) {
			e->lost[dir] = 1;
			p->st.blocks_lost++;
			return;
		}
		e->strm[dir] = p->strm_free[--p->strm_nfree];
	}
	lb_hdr_feed(&p->strm[e->strm[dir]], p->scratch, b, n);
}

static void
head_start(struct entry *e, int dir)
{
	struct lb_l7_pool *p = e->pool;

	strm_put(p, e, dir);
	e->lost[dir] = 0;
	p->pend = NULL;
	/* Requests of a map without exclusions skip the comparison. */
	if (dir == 0) {
		e->rl_state = p->excl[e->map].n > 0 ? RL_METHOD : RL_DONE;
		e->ex_cand = 0;
	}
	p->pend_len = 0;
}

/* Compares the request target in @p b with the excluded prefixes, until
 * its end or until none can match any more. */
static void
target_scan(struct entry *e, const struct l7_excl *x, const uint8_t *b,
	    size_t n)
{
	for (size_t i = 0; i < n && e->rl_state != RL_DONE; i++) {
		uint8_t c = b[i];

		if (e->rl_state == RL_METHOD) {
			if (c == ' ') {
				e->rl_state = RL_TARGET;
				e->rl_pos = 0;
				e->ex_cand = (uint8_t)((1u << x->n) - 1);
			}
			continue;
		}
		if (c == ' ' || c == '\r' || c == '\n') {
			e->rl_state = RL_DONE;
			break;
		}
		for (unsigned int k = 0; k < x->n; k++)
			if (e->rl_pos < x->len[k] &&
			    (uint8_t)x->s[k][e->rl_pos] != c)
				e->ex_cand &= (uint8_t)~(1u << k);
		e->rl_pos++;
		if (e->ex_cand == 0 || e->rl_pos > LB_HTTP_ERR_PATH_MAX)
			e->rl_state = RL_DONE;
	}
}

/* Whether the target had a whole excluded prefix. */
static bool
target_excluded(const struct entry *e, const struct l7_excl *x)
{
	for (unsigned int k = 0; k < x->n; k++)
		if ((e->ex_cand & (1u << k)) && e->rl_pos >= x->len[k])
			return true;
	return false;
}

static void
head_bytes(struct entry *e, int dir, const uint8_t *b, size_t n)
{
	struct lb_l7_pool *p = e->pool;

	if (dir == 0 && e->rl_state != RL_DONE)
		target_scan(e, &p->excl[e->map], b, n);
	if (e->strm[dir] == LB_L7_NONE && p->pend == NULL) {
		p->pend = b;
		p->pend_len = n;
		return;
	}
	if (p->pend != NULL) {
		strm_feed(p, e, dir, p->pend, p->pend_len);
		p->pend = NULL;
	}
	strm_feed(p, e, dir, b, n);
}

/* The block's outcome; false when its fields are lost. */
static bool
head_end(struct entry *e, int dir, struct lb_hdr_result *r)
{
	struct lb_l7_pool *p = e->pool;
	const uint8_t *b = p->pend;
	int rc;

	p->pend = NULL;
	if (e->lost[dir]) {
		e->lost[dir] = 0;
		return false;
	}
	if (e->strm[dir] != LB_L7_NONE) {
		rc = lb_hdr_end(&p->strm[e->strm[dir]], p->scratch, r);
		strm_put(p, e, dir);
	} else {
		rc = lb_hdr_scan_block(p->db, p->scratch, b,
				       b != NULL ? p->pend_len : 0, r);
	}
	return rc == 0;
}

/* ---- follower callbacks ------------------------------------------------ */

static void
req_head_start(void *ctx, const struct lb_http_follow_req *rq)
{
	struct entry *e = ctx;

	head_start(e, 0);
	e->started = rq->seq;
	/* Only the request that starts the segment can be held apart. */
	if (e->armed && e->gate == G_NONE) {
		e->gate = G_PENDING;
		e->gate_req = rq->seq;
		e->gate_seq = e->arm_seq;
	}
	e->armed = 0;
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
		.entry = (uint32_t)(e - p->e),
	};
	bool refuse;

	if (!e->gate_on || p->admit == NULL || e->gate == G_REFUSED ||
	    e->gate == G_WAIT || e->stopped)
		return;
	if (e->gate == G_DECIDED && rq_seq == e->gate_req) {
		e->gate = G_NONE;
		return;
	}
	refuse = p->admit(p->owner, e->tag, &rq);
	if (!rq.can_refuse)
		return;
	/* Requests before it still await their responses: the answer
	 * must come after them. */
	if (refuse)
		e->gate = lb_http_follow_outstanding(&e->hf) > 1 ? G_WAIT :
								  G_REFUSED;
	else
		e->gate = partial ? G_DECIDED : G_NONE;
}

static void
req_head_bytes(void *ctx, const struct lb_http_follow_req *rq,
	       const uint8_t *b, size_t n)
{
	(void)rq;
	head_bytes(ctx, 0, b, n);
}

/* The request head that just ended, to the head callback: whole when one
 * segment held it, else (cut, its bytes gone with earlier segments)
 * none. */
static void
head_give(struct entry *e)
{
	struct lb_l7_pool *p = e->pool;
	bool whole = e->strm[0] == LB_L7_NONE && !e->lost[0] && p->pend != NULL;

	if (p->head == NULL)
		return;
	p->head(p->owner, e->tag, (uint32_t)(e - p->e), whole ? p->pend : NULL,
		whole ? p->pend_len : 0);
}

static void
req_head_end(void *ctx, const struct lb_http_follow_req *rq)
{
	struct entry *e = ctx;
	const struct lb_hdr_map *m = &e->pool->map[e->map];
	struct req_info *ri = &e->req[rq->seq % REQ_RING];
	struct lb_hdr_result r;
	const struct lb_hdr_value *v;

	memset(ri, 0, sizeof(*ri));
	ri->seq = rq->seq;
	ri->excluded = target_excluded(e, &e->pool->excl[e->map]);
	if (e->heads)
		head_give(e);
	if (!head_end(e, 0, &r)) {
		gate_ask(e, rq->seq, NULL, false);
		return;
	}
	v = field(&r, m->f[LB_CONF_HDR_EXPECT]);
	if (v != NULL) {
		ri->has_expect = 1;
		ri->expect_ms = (uint32_t)v->v.u;
	}
	v = field(&r, m->f[LB_CONF_HDR_PRIORITY]);
	if (v != NULL) {
		ri->has_prio = 1;
		ri->prio = (uint16_t)(v->v.u > UINT16_MAX ? UINT16_MAX :
							    v->v.u);
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
	(void)rs;
	head_start(ctx, 1);
}

static void
resp_head_bytes(void *ctx, const struct lb_http_follow_resp *rs,
		const uint8_t *b, size_t n)
{
	(void)rs;
	head_bytes(ctx, 1, b, n);
}

static void
resp_head_end(void *ctx, const struct lb_http_follow_resp *rs)
{
	struct entry *e = ctx;
	struct lb_l7_pool *p = e->pool;
	const struct lb_hdr_map *m = &p->map[e->map];
	struct lb_l7_obs o;
	struct lb_hdr_result r;
	const struct lb_hdr_value *v;
	const struct req_info *ri;

	if (!head_end(e, 1, &r))
		r.valid = 0;
	/* 1xx are interim: the request is still waiting for its answer. */
	if (rs->flags & LB_HTTP_FOLLOW_RESP_INTERIM)
		return;
	memset(&o, 0, sizeof(o));
	o.status = rs->status;
	o.timed = (rs->flags & LB_HTTP_FOLLOW_RESP_TIMED) != 0;
	o.latency_ns = rs->latency_ns;
	v = field(&r, m->f[LB_CONF_HDR_SPL]);
	if (v != NULL) {
		o.has_spl = true;
		o.spl = v->v.d;
	}
	v = field(&r, m->f[LB_CONF_HDR_SPL_TIME]);
	if (v != NULL) {
		o.has_spl_time = true;
		o.spl_time_ms = v->v.u;
	}
	v = field(&r, m->f[LB_CONF_HDR_ORCA]);
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
		o.err_excluded = ri->excluded;
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
	if (e->gate == G_WAIT && rs->req_seq + 1 == e->gate_req) {
		/* The last response before the refused request. */
		e->gate = G_REFUSED;
		e->refuse_now = 1;
	}
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

static void
streams_free(struct lb_hdr_stream *st, uint32_t n)
{
	if (st == NULL)
		return;
	for (uint32_t i = 0; i < n; i++)
		lb_hdr_stream_fini(&st[i]);
	free(st);
}

/* @p n streams opened for @p db; NULL if one cannot be. */
static struct lb_hdr_stream *
streams_open(const struct lb_hdr_db *db, uint32_t n)
{
	struct lb_hdr_stream *st = calloc(n, sizeof(*st));

	if (st == NULL)
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		if (lb_hdr_stream_init(&st[i], db) != 0) {
			streams_free(st, i);
			return NULL;
		}
	return st;
}

static uint32_t
strm_count(uint32_t capacity)
{
	if (capacity <= STRM_MIN)
		return capacity;
	return capacity / STRM_SHARE > STRM_MIN ? capacity / STRM_SHARE :
						   STRM_MIN;
}

/* Every stream free, the first one on top. */
static void
strm_free_all(struct lb_l7_pool *p)
{
	for (uint32_t i = 0; i < p->nb_strm; i++)
		p->strm_free[i] = p->nb_strm - 1 - i;
	p->strm_nfree = p->nb_strm;
}

static void
maps_default(struct lb_l7_pool *p)
{
	for (uint32_t m = 0; m < LB_L7_MAPS; m++)
		for (int h = 0; h < LB_CONF_HDR_NB; h++) {
			int f = lb_hdr_db_field(p->db, (enum lb_hdr_kind)h);

			p->map[m].f[h] = (int8_t)(f < 0 ? -1 : f);
		}
}

void
lb_l7_pool_free(struct lb_l7_pool *p)
{
	if (p == NULL)
		return;
	streams_free(p->strm, p->nb_strm);
	free(p->strm_free);
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
	p->nb_strm = strm_count(capacity);
	p->strm = streams_open(db, p->nb_strm);
	p->strm_free = malloc(p->nb_strm * sizeof(*p->strm_free));
	if (p->strm == NULL || p->strm_free == NULL) {
		lb_l7_pool_free(p);
		errno = ENOMEM;
		return NULL;
	}
	for (uint32_t i = 0; i < capacity; i++) {
		struct entry *e = &p->e[i];

		e->pool = p;
		e->next_free = i + 1 < capacity ? i + 1 : LB_L7_NONE;
	}
	strm_free_all(p);
	p->free_head = 0;
	maps_default(p);
	return p;
}

int
lb_l7_set_db(struct lb_l7_pool *p, const struct lb_hdr_db *db,
	     struct lb_hdr_scratch *scratch)
{
	struct lb_hdr_stream *st;

	if (p == NULL || db == NULL || scratch == NULL)
		return -EINVAL;
	st = streams_open(db, p->nb_strm);
	if (st == NULL)
		return -ENOMEM;
	/* Blocks cut in progress were scanned with the old database: their
	 * fields are given up, the exchanges go on. */
	for (uint32_t i = 0; i < p->capacity; i++) {
		struct entry *e = &p->e[i];

		for (int d = 0; d < 2; d++) {
			if (!e->used || e->strm[d] == LB_L7_NONE)
				continue;
			e->strm[d] = LB_L7_NONE;
			e->lost[d] = 1;
			p->st.blocks_lost++;
		}
	}
	streams_free(p->strm, p->nb_strm);
	p->strm = st;
	strm_free_all(p);
	p->db = db;
	p->scratch = scratch;
	maps_default(p);
	p->st.db_switches++;
	return 0;
}

void
lb_l7_set_map(struct lb_l7_pool *p, uint32_t map, const struct lb_hdr_map *m)
{
	if (p != NULL && m != NULL && map < LB_L7_MAPS)
		p->map[map] = *m;
}

void
lb_l7_set_excl(struct lb_l7_pool *p, uint32_t map,
	       const char paths[][LB_HTTP_ERR_PATH_MAX + 1], unsigned int n)
{
	struct l7_excl *x;

	if (p == NULL || map >= LB_L7_MAPS)
		return;
	x = &p->excl[map];
	memset(x, 0, sizeof(*x));
	for (unsigned int k = 0; k < n && k < LB_HTTP_ERR_PATHS; k++) {
		size_t len = strnlen(paths[k], LB_HTTP_ERR_PATH_MAX);

		memcpy(x->s[k], paths[k], len);
		x->len[k] = (uint8_t)len;
		x->n++;
	}
}

uint32_t
lb_l7_open(struct lb_l7_pool *p, uint32_t client_seq, uint32_t backend_seq,
	   uint32_t tag, uint32_t map)
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
	e->next_seq[0] = client_seq;
	e->next_seq[1] = backend_seq;
	e->tag = tag;
	e->inflight = 0;
	e->last_done = 0;
	e->last_answered = 0;
	e->strm[0] = e->strm[1] = LB_L7_NONE;
	e->lost[0] = e->lost[1] = 0;
	e->map = (uint8_t)(map < LB_L7_MAPS ? map : 0);
	e->rl_state = RL_DONE;
	e->ex_cand = 0;
	e->used = true;
	e->stopped = false;
	e->heads = 0;
	e->gate_on = 0;
	e->armed = 0;
	e->gate = G_NONE;
	e->started = 0;
	e->refuse_now = 0;
	memset(e->req, 0, sizeof(e->req));
	p->st.flows++;
	p->st.active++;
	return idx;
}

/* Requests never answered leave the in-flight count. */
static void
inflight_drain(struct entry *e)
{
	while (e->inflight > 0) {
		e->inflight--;
		if (e->pool->inflight != NULL)
			e->pool->inflight(e->pool->owner, e->tag, -1);
	}
}

void
lb_l7_close(struct lb_l7_pool *p, uint32_t idx)
{
	struct entry *e;

	if (idx >= p->capacity || !p->e[idx].used)
		return;
	e = &p->e[idx];
	inflight_drain(e);
	strm_put(p, e, 0);
	strm_put(p, e, 1);
	e->used = false;
	p->st.active--;
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
	/* A segment that stops the following may be dropped rather than
	 * forwarded (docs/admission.md): its octets do not count as sent. */
	if (rc != 0)
		e->stopped = true;
	else if (!e->stopped)
		e->next_seq[dir] += n;
	/* A header block goes on in the next segment: what this one held
	 * goes to a stream before the segment is gone. */
	if (e->pool->pend != NULL && !e->stopped)
		strm_feed(e->pool, e, dir, e->pool->pend, e->pool->pend_len);
	e->pool->pend = NULL;
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

		/* Every request started is complete: the next octet
		 * starts a request. */
		e->armed = was == G_NONE && e->started == e->last_done;
		e->arm_seq = e->next_seq[0];
		feed(e, dir, data, len, off, now_ns);
		e->armed = 0;
		if (e->stopped)
			return -EPROTO;
		if (e->gate == G_REFUSED) {
			/* Refused: nothing of the flow reaches the backend
			 * any more, nothing is in flight there. */
			inflight_drain(e);
			return LB_L7_REJECT;
		}
		if (e->gate == G_PENDING || e->gate == G_WAIT)
			return fresh || fin ? LB_L7_HOLD : LB_L7_REPEAT;
		return was == G_PENDING ? LB_L7_RELEASE : LB_L7_PASS;
	}
	feed(e, dir, data, len, off, now_ns);
	if (fin && dir == 1 && !e->stopped)
		lb_http_follow_close(&e->hf, now_ns);
	if (e->refuse_now && dir == 1) {
		e->refuse_now = 0;
		if (fin) {
			/* The backend closed first: no answer can follow
			 * its FIN; what was held goes on. */
			e->stopped = true;
			return -EPROTO;
		}
		inflight_drain(e);
		return LB_L7_REJECT;
	}
	return e->stopped ? -EPROTO : 0;
}

void
lb_l7_set_admit(struct lb_l7_pool *p, lb_l7_admit_fn fn)
{
	p->admit = fn;
}

void
lb_l7_set_head(struct lb_l7_pool *p, lb_l7_head_fn fn)
{
	p->head = fn;
}

void
lb_l7_heads(struct lb_l7_pool *p, uint32_t idx, bool on)
{
	if (idx < p->capacity && p->e[idx].used)
		p->e[idx].heads = on;
}

void
lb_l7_stop(struct lb_l7_pool *p, uint32_t idx)
{
	if (idx < p->capacity && p->e[idx].used)
		p->e[idx].stopped = true;
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

	if (idx >= p->capacity || !p->e[idx].used)
		return LB_L7_PASS;
	e = &p->e[idx];
	if (e->gate == G_WAIT)
		return LB_L7_REPEAT;
	if (e->gate != G_PENDING)
		return LB_L7_PASS;
	gate_ask(e, e->gate_req, NULL, true);
	if (e->gate == G_WAIT)
		return LB_L7_REPEAT;
	if (e->gate != G_REFUSED)
		return LB_L7_RELEASE;
	inflight_drain(e);
	return LB_L7_REJECT;
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

enum lb_http_follow_reason
lb_l7_reason(const struct lb_l7_pool *p, uint32_t idx)
{
	if (idx >= p->capacity || !p->e[idx].used)
		return LB_HTTP_FOLLOW_OK;
	return lb_http_follow_reason(&p->e[idx].hf);
}

void
lb_l7_prefetch(const struct lb_l7_pool *p, uint32_t idx)
{
	const char *b, *end;

	if (idx >= p->capacity)
		return;
	/* An exchange touches nearly every line of its entry (both
	 * directions' lexer state, the request ring): all of them. */
	b = (const char *)&p->e[idx];
	end = b + sizeof(p->e[idx]);
	for (b = (const char *)((uintptr_t)b & ~(uintptr_t)63); b < end;
	     b += 64)
		__builtin_prefetch(b);
}

size_t
lb_l7_pool_mem(const struct lb_l7_pool *p)
{
	if (p == NULL)
		return 0;
	return sizeof(*p) + (size_t)p->capacity * sizeof(p->e[0]) +
	       (size_t)p->nb_strm *
		       (sizeof(p->strm[0]) + lb_hdr_db_stream_size(p->db) +
			sizeof(p->strm_free[0]));
}

uint32_t
lb_l7_pool_streams(const struct lb_l7_pool *p)
{
	return p != NULL ? p->nb_strm : 0;
}

void
lb_l7_stats_get(const struct lb_l7_pool *p, struct lb_l7_stats *st)
{
	*st = p->st;
}
