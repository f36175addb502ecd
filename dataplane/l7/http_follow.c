/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP/1.x framing follower: RFC 9112 sections 2-7 applied to the two
 * byte streams of a forwarded TCP flow, one byte at a time, in fixed
 * state. The lexer (lex() and its helpers, http_follow_lex.h) consumes
 * start lines, field lines and chunk framing, helped by the bulk runs of
 * http_follow_bulk.h; this file holds the exchange itself: feed() skips
 * content in bulk and turns the lexer's section ends into message
 * events, requests queue up and meet their responses, and the public API.
 */
#include <errno.h>
#include <string.h>

#include "http_follow_bulk.h"
#include "http_follow_lex.h"
#include "http_follow_priv.h"

static const char *const reason_names[LB_HTTP_FOLLOW_R_MAX] = {
	[LB_HTTP_FOLLOW_OK] = "following",
	[LB_HTTP_FOLLOW_R_SYNTAX] = "syntax",
	[LB_HTTP_FOLLOW_R_FRAMING] = "framing",
	[LB_HTTP_FOLLOW_R_OBS_FOLD] = "obs_fold",
	[LB_HTTP_FOLLOW_R_BARE_LF] = "bare_lf",
	[LB_HTTP_FOLLOW_R_LINE_TOO_LONG] = "line_too_long",
	[LB_HTTP_FOLLOW_R_HEAD_TOO_LONG] = "head_too_long",
	[LB_HTTP_FOLLOW_R_HTTP2] = "http2",
	[LB_HTTP_FOLLOW_R_VERSION] = "version",
	[LB_HTTP_FOLLOW_R_UPGRADE] = "upgrade",
	[LB_HTTP_FOLLOW_R_CONNECT] = "connect",
	[LB_HTTP_FOLLOW_R_QUEUE_FULL] = "queue_full",
	[LB_HTTP_FOLLOW_R_LOST] = "lost",
	[LB_HTTP_FOLLOW_R_TRUNCATED] = "truncated",
};

/* ---- event helpers ---- */

static void
req_info(const struct lb_http_follow *f, struct lb_http_follow_req *rq)
{
	const struct lb_http_follow_dir *d = &f->req;

	rq->seq = d->seq;
	rq->mclass = d->mclass;
	rq->flags = ((d->flags & F_EXPECT) ? LB_HTTP_FOLLOW_REQ_EXPECT_100 : 0) |
		    ((d->flags & F_UPGRADE) ? LB_HTTP_FOLLOW_REQ_UPGRADE : 0) |
		    ((d->flags & F_HTTP10) ? LB_HTTP_FOLLOW_REQ_HTTP10 : 0) |
		    ((d->flags & F_CHUNKED) ? LB_HTTP_FOLLOW_REQ_CHUNKED : 0);
	rq->head_len = (d->flags & F_IN_HEAD) ? d->sec_len : d->head_len;
	rq->body_len = d->body_len;
	rq->first_ns = d->first_ns;
	rq->done_ns = d->done_ns;
}

static void
resp_info(const struct lb_http_follow *f, struct lb_http_follow_resp *rs)
{
	const struct lb_http_follow_dir *d = &f->resp;
	bool timed = (d->flags & F_TIMED) != 0;

	rs->req_seq = d->seq;
	rs->status = (d->flags & F_IN_HEAD) ? 0 : d->status;
	rs->req_mclass = d->mclass;
	rs->flags = (timed ? LB_HTTP_FOLLOW_RESP_TIMED : 0) |
		    ((d->flags & F_INTERIM) ? LB_HTTP_FOLLOW_RESP_INTERIM : 0) |
		    ((d->flags & F_CHUNKED) ? LB_HTTP_FOLLOW_RESP_CHUNKED : 0) |
		    ((d->flags & F_CLOSE) ? LB_HTTP_FOLLOW_RESP_CLOSE : 0) |
		    ((d->flags & F_HTTP10) ? LB_HTTP_FOLLOW_RESP_HTTP10 : 0);
	rs->head_len = (d->flags & F_IN_HEAD) ? d->sec_len : d->head_len;
	rs->body_len = d->body_len;
	rs->first_ns = d->first_ns;
	rs->done_ns = d->done_ns;
	rs->req_done_ns = timed ? d->peer_ns : 0;
	/* A clock that went backwards gives 0, never a huge latency. */
	rs->latency_ns = (timed && d->first_ns > d->peer_ns) ?
				 d->first_ns - d->peer_ns : 0;
}

enum ev {
	EV_HEAD_START,
	EV_HEAD_END,
	EV_DONE,
};

static void
emit(struct lb_http_follow *f, bool resp, enum ev ev)
{
	const struct lb_http_follow_ops *ops = &f->prof->ops;
	void (*qcb)(void *, const struct lb_http_follow_req *);
	void (*scb)(void *, const struct lb_http_follow_resp *);

	if (resp) {
		struct lb_http_follow_resp rs;

		scb = ev == EV_HEAD_START ? ops->resp_head_start :
		      ev == EV_HEAD_END	  ? ops->resp_head_end :
					    ops->resp_done;
		if (scb != NULL) {
			resp_info(f, &rs);
			scb(f->ctx, &rs);
		}
	} else {
		struct lb_http_follow_req rq;

		qcb = ev == EV_HEAD_START ? ops->req_head_start :
		      ev == EV_HEAD_END	  ? ops->req_head_end :
					    ops->req_done;
		if (qcb != NULL) {
			req_info(f, &rq);
			qcb(f->ctx, &rq);
		}
	}
}

static void
flush(struct lb_http_follow *f, bool resp, const uint8_t *a,
      const uint8_t *b)
{
	const struct lb_http_follow_ops *ops = &f->prof->ops;

	if (a == NULL || b <= a)
		return;
	if (resp && ops->resp_head_bytes != NULL) {
		struct lb_http_follow_resp rs;

		resp_info(f, &rs);
		ops->resp_head_bytes(f->ctx, &rs, a, (size_t)(b - a));
	} else if (!resp && ops->req_head_bytes != NULL) {
		struct lb_http_follow_req rq;

		req_info(f, &rq);
		ops->req_head_bytes(f->ctx, &rq, a, (size_t)(b - a));
	}
}

static void
die(struct lb_http_follow *f, enum lb_http_follow_reason why)
{
	f->reason = (uint8_t)why;
	if (f->stats != NULL)
		f->stats->unfollowable[why]++;
	if (f->prof->ops.unfollowable != NULL)
		f->prof->ops.unfollowable(f->ctx, why);
}
/* ---- messages ---- */

static void
req_done(struct lb_http_follow *f, uint64_t now)
{
	struct lb_http_follow_dir *d = &f->req;

	d->done_ns = now;
	d->state = DS_IDLE;
	/* An early final response may already have retired the entry. */
	if (queued(f, d->seq)) {
		f->q_flags[slot_of(d->seq)] |= QF_DONE;
		f->q_done_ns[slot_of(d->seq)] = now;
	}
	if (f->stats != NULL)
		f->stats->requests++;
	emit(f, false, EV_DONE);
}

static void
resp_done(struct lb_http_follow *f, uint64_t now)
{
	struct lb_http_follow_dir *d = &f->resp;

	d->done_ns = now;
	d->state = DS_IDLE;
	if (f->stats != NULL) {
		if (d->flags & F_INTERIM)
			f->stats->interim++;
		else if (d->seq == 0)
			f->stats->unmatched++;
		else
			f->stats->responses++;
	}
	emit(f, true, EV_DONE);
	/* 1xx responses precede the final one for the same request. */
	if (!(d->flags & F_INTERIM) && d->seq != 0 && d->seq == f->q_head)
		f->q_head++;
}

static int
req_begin(struct lb_http_follow *f, uint64_t now)
{
	struct lb_http_follow_dir *d = &f->req;
	uint32_t s;

	/* Bytes after an Upgrade or CONNECT request, before its verdict,
	 * may already belong to the other protocol. */
	if (f->tunnel_seq != 0)
		return -(int)f->tunnel_reason;
	if (f->q_tail - f->q_head >= f->prof->conf.queue_depth)
		return -LB_HTTP_FOLLOW_R_QUEUE_FULL;
	memset(d, 0, sizeof(*d));
	d->seq = f->q_tail++;
	s = slot_of(d->seq);
	f->q_mclass[s] = LB_HTTP_FOLLOW_M_OTHER;
	f->q_flags[s] = 0;
	f->q_done_ns[s] = 0;
	d->first_ns = now;
	d->flags = F_IN_HEAD;
	d->state = DS_RL_METHOD;
	emit(f, false, EV_HEAD_START);
	return 0;
}

static void
resp_begin(struct lb_http_follow *f, uint64_t now)
{
	struct lb_http_follow_dir *d = &f->resp;

	memset(d, 0, sizeof(*d));
	d->first_ns = now;
	d->flags = F_IN_HEAD;
	d->state = DS_SL_VERSION;
	if (f->q_tail != f->q_head) {
		uint32_t s = slot_of(f->q_head);

		d->seq = f->q_head;
		d->mclass = f->q_mclass[s];
		if (f->q_flags[s] & QF_DONE) {
			d->flags |= F_TIMED;
			d->peer_ns = f->q_done_ns[s];
		}
	}
	emit(f, true, EV_HEAD_START);
}

/* RFC 9112 6.1 and 6.3 items 3-4, shared by both directions. */
static int
te_framing(const struct lb_http_follow *f, struct lb_http_follow_dir *d)
{
	/* 6.1: Transfer-Encoding in HTTP/1.0 means faulty framing. */
	if (d->flags & F_HTTP10)
		return -LB_HTTP_FOLLOW_R_FRAMING;
	if ((d->flags & F_HAS_CL) &&
	    f->prof->conf.te_with_cl == LB_HTTP_FOLLOW_TECL_REJECT)
		return -LB_HTTP_FOLLOW_R_FRAMING;
	if (d->flags & F_TE_LAST) {
		d->flags |= F_CHUNKED;
		d->acc = 0;
		d->pos = 0;
		d->state = DS_CHK_SIZE;
	}
	return 0;
}

static int
req_head_end(struct lb_http_follow *f, uint64_t now)
{
	struct lb_http_follow_dir *d = &f->req;
	bool body = false;
	int r;

	d->head_len = d->sec_len;
	d->flags &= (uint16_t)~F_IN_HEAD;
	if (d->flags & F_TE) {
		r = te_framing(f, d);
		if (r != 0)
			return r;
		/* 6.3 item 4: a request not ending in chunked is bad. */
		if (!(d->flags & F_CHUNKED))
			return -LB_HTTP_FOLLOW_R_FRAMING;
		body = true;
	} else if ((d->flags & F_HAS_CL) && d->clen != 0) {
		d->remaining = d->clen;
		d->state = DS_BODY_LEN;
		body = true;
	}
	/* RFC 9110 7.8 and 10.1.1: ignored in HTTP/1.0 requests. */
	if (d->flags & F_HTTP10)
		d->flags &= (uint16_t)~(F_EXPECT | F_UPGRADE);
	if ((d->mclass == LB_HTTP_FOLLOW_M_CONNECT || (d->flags & F_UPGRADE)) &&
	    queued(f, d->seq) && !(f->q_flags[slot_of(d->seq)] & QF_ANSWERED)) {
		f->tunnel_seq = d->seq;
		f->tunnel_reason = d->mclass == LB_HTTP_FOLLOW_M_CONNECT ?
					   LB_HTTP_FOLLOW_R_CONNECT :
					   LB_HTTP_FOLLOW_R_UPGRADE;
	}
	emit(f, false, EV_HEAD_END);
	if (!body)
		req_done(f, now);
	return 0;
}

static int
resp_head_end(struct lb_http_follow *f, uint64_t now)
{
	struct lb_http_follow_dir *d = &f->resp;
	uint16_t st = d->status;
	bool body = true;
	int r;

	d->head_len = d->sec_len;
	d->flags &= (uint16_t)~F_IN_HEAD;
	if (queued(f, d->seq))
		d->mclass = f->q_mclass[slot_of(d->seq)];
	if (st == 101) {
		emit(f, true, EV_HEAD_END);
		return -LB_HTTP_FOLLOW_R_UPGRADE;
	}
	if (st < 200) {
		/* RFC 9110 15.2: interim; the request still awaits its
		 * final response. */
		d->flags |= F_INTERIM;
		emit(f, true, EV_HEAD_END);
		resp_done(f, now);
		return 0;
	}
	if (queued(f, d->seq)) {
		f->q_flags[slot_of(d->seq)] |= QF_ANSWERED;
		if (f->tunnel_seq == d->seq)
			f->tunnel_seq = 0;
	}
	/* RFC 9112 6.3 items 1-2. */
	if (d->mclass == LB_HTTP_FOLLOW_M_CONNECT && st / 100 == 2) {
		emit(f, true, EV_HEAD_END);
		return -LB_HTTP_FOLLOW_R_CONNECT;
	}
	if (d->mclass == LB_HTTP_FOLLOW_M_HEAD || st == 204 || st == 304) {
		body = false;
	} else if (d->flags & F_TE) {
		r = te_framing(f, d);
		if (r != 0)
			return r;
		/* 6.3 item 4: not chunked last -> read until close. */
		if (!(d->flags & F_CHUNKED)) {
			d->flags |= F_CLOSE;
			d->state = DS_BODY_CLOSE;
		}
	} else if (d->flags & F_HAS_CL) {
		d->remaining = d->clen;
		d->state = DS_BODY_LEN;
		body = d->clen != 0;
	} else {
		/* 6.3 item 8. */
		d->flags |= F_CLOSE;
		d->state = DS_BODY_CLOSE;
	}
	emit(f, true, EV_HEAD_END);
	if (!body)
		resp_done(f, now);
	return 0;
}

/*
 * Content of a Content-Length body or of a chunk, up to @p avail bytes:
 * taken whole, never looked at. @return the bytes taken.
 */
static size_t
content_run(struct lb_http_follow *f, struct lb_http_follow_dir *d, bool resp,
	    size_t avail, uint64_t now)
{
	size_t n = avail;

	if (n > d->remaining)
		n = (size_t)d->remaining;
	d->remaining -= n;
	d->body_len += n;
	if (d->remaining != 0)
		return n;
	if (d->state == DS_CHK_DATA)
		d->state = DS_CHK_DATA_END;
	else if (resp)
		resp_done(f, now);
	else
		req_done(f, now);
	return n;
}

static int
feed(struct lb_http_follow *f, bool resp, const uint8_t *p, size_t len,
     uint64_t now)
{
	struct lb_http_follow_dir *d;
	const uint8_t *end, *hb;
	size_t k;
	int r;

	if (f == NULL || f->prof == NULL || (p == NULL && len != 0))
		return -EINVAL;
	if (f->reason != LB_HTTP_FOLLOW_OK)
		return -EPROTO;
	if (f->closed)
		return -EPIPE;
	if (len == 0)
		return 0;
	d = resp ? &f->resp : &f->req;
	end = p + len;
	hb = (d->flags & F_IN_HEAD) ? p : NULL;
	while (p < end) {
		/* A callback may have reported a loss. */
		if (f->reason != LB_HTTP_FOLLOW_OK)
			return -EPROTO;
		switch (d->state) {
		case DS_IDLE:
			/* RFC 9112 2.2: empty lines before a message. */
			if (*p == '\r' || *p == '\n') {
				p++;
				continue;
			}
			if (resp) {
				resp_begin(f, now);
			} else {
				r = req_begin(f, now);
				if (r != 0)
					goto dead;
			}
			hb = p;
			continue;
		case DS_BODY_LEN:
		case DS_CHK_DATA:
			p += content_run(f, d, resp, (size_t)(end - p), now);
			continue;
		case DS_BODY_CLOSE:
			d->body_len += (uint64_t)(end - p);
			p = end;
			continue;
		default:
			break;
		}
		k = bulk(f, d, resp, p, (size_t)(end - p));
		if (k > 0) {
			p += k;
			continue;
		}
		r = lex(f, d, resp, *p);
		if (r < 0)
			goto dead;
		p++;
		if (r == 0)
			continue;
		if (d->flags & F_TRAILER) {
			if (resp)
				resp_done(f, now);
			else
				req_done(f, now);
			continue;
		}
		flush(f, resp, hb, p);
		hb = NULL;
		r = resp ? resp_head_end(f, now) : req_head_end(f, now);
		if (r < 0)
			goto dead;
	}
	if (d->flags & F_IN_HEAD)
		flush(f, resp, hb, p);
	return f->reason != LB_HTTP_FOLLOW_OK ? -EPROTO : 0;
dead:
	/* Report the head up to the offending byte, so the events do not
	 * depend on where segments were cut. */
	if (d->flags & F_IN_HEAD)
		flush(f, resp, hb, p);
	die(f, (enum lb_http_follow_reason)-r);
	return -EPROTO;
}

/* ---- public API ---- */

void
lb_http_follow_conf_default(struct lb_http_follow_conf *conf)
{
	if (conf == NULL)
		return;
	memset(conf, 0, sizeof(*conf));
	conf->max_line = LB_HTTP_FOLLOW_MAX_LINE_DEFAULT;
	conf->max_head = LB_HTTP_FOLLOW_MAX_HEAD_DEFAULT;
	conf->queue_depth = LB_HTTP_FOLLOW_QUEUE_MAX;
	conf->reject_bare_lf = false;
	conf->te_with_cl = LB_HTTP_FOLLOW_TECL_REJECT;
}

int
lb_http_follow_prof_init(struct lb_http_follow_prof *prof,
			 const struct lb_http_follow_conf *conf,
			 const struct lb_http_follow_ops *ops)
{
	struct lb_http_follow_conf c;

	if (prof == NULL || ops == NULL)
		return -EINVAL;
	if (conf != NULL)
		c = *conf;
	else
		lb_http_follow_conf_default(&c);
	if (c.te_with_cl != LB_HTTP_FOLLOW_TECL_REJECT &&
	    c.te_with_cl != LB_HTTP_FOLLOW_TECL_TE_WINS)
		return -EINVAL;
	if (c.max_head > LB_HTTP_FOLLOW_MAX_HEAD_CAP ||
	    c.max_line < LB_HTTP_FOLLOW_MAX_LINE_MIN ||
	    c.max_line > c.max_head)
		return -ERANGE;
	if (c.queue_depth < 1 || c.queue_depth > LB_HTTP_FOLLOW_QUEUE_MAX)
		return -ERANGE;
	prof->conf = c;
	prof->ops = *ops;
	return 0;
}

int
lb_http_follow_init(struct lb_http_follow *f,
		    const struct lb_http_follow_prof *prof,
		    struct lb_http_follow_stats *stats, void *ctx)
{
	if (f == NULL || prof == NULL || prof->conf.queue_depth < 1 ||
	    prof->conf.queue_depth > LB_HTTP_FOLLOW_QUEUE_MAX)
		return -EINVAL;
	memset(f, 0, sizeof(*f));
	f->prof = prof;
	f->stats = stats;
	f->ctx = ctx;
	f->q_head = 1;
	f->q_tail = 1;
	return 0;
}

int
lb_http_follow_request(struct lb_http_follow *f, const uint8_t *data,
		       size_t len, uint64_t now_ns)
{
	return feed(f, false, data, len, now_ns);
}

int
lb_http_follow_response(struct lb_http_follow *f, const uint8_t *data,
			size_t len, uint64_t now_ns)
{
	return feed(f, true, data, len, now_ns);
}

int
lb_http_follow_close(struct lb_http_follow *f, uint64_t now_ns)
{
	if (f == NULL || f->prof == NULL)
		return -EINVAL;
	if (f->reason != LB_HTTP_FOLLOW_OK)
		return -EPROTO;
	if (f->closed)
		return -EPIPE;
	f->closed = 1;
	switch (f->resp.state) {
	case DS_IDLE:
		return 0;
	case DS_BODY_CLOSE:
		/* RFC 9112 6.3 item 8: the close ends the content. */
		resp_done(f, now_ns);
		return 0;
	default:
		die(f, LB_HTTP_FOLLOW_R_TRUNCATED);
		return -EPROTO;
	}
}

int
lb_http_follow_lost(struct lb_http_follow *f)
{
	if (f == NULL || f->prof == NULL)
		return -EINVAL;
	if (f->reason == LB_HTTP_FOLLOW_OK)
		die(f, LB_HTTP_FOLLOW_R_LOST);
	return 0;
}

const char *
lb_http_follow_reason_name(enum lb_http_follow_reason r)
{
	if ((unsigned int)r >= LB_HTTP_FOLLOW_R_MAX)
		return "unknown";
	return reason_names[r];
}
