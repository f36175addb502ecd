/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The requests of an lb-instance worker's connections: admitted against
 * --max-inflight, queued in order, waiting for a slot (--slots) or a
 * stall's end, served (--cpu-us, --delay-ms, --jitter-ms) and answered
 * with the SPL their execution time gives. Apart from the connections'
 * reading and writing in inst_conn.c.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "spl.h"

#include "inst_worker.h"

static const char CONTINUE_100[] = "HTTP/1.1 100 Continue\r\n\r\n";

/* ---- the wait list: connections whose next request waits to start ---- */

static void
wait_push(struct conn *c)
{
	struct lb_inst_worker *w = c->w;

	c->svc = SVC_WAIT;
	c->wnext = NULL;
	c->wprev = w->wait_tail;
	if (w->wait_tail != NULL)
		w->wait_tail->wnext = c;
	else
		w->wait_head = c;
	w->wait_tail = c;
}

void
inst_wait_remove(struct conn *c)
{
	struct lb_inst_worker *w = c->w;

	if (c->wprev != NULL)
		c->wprev->wnext = c->wnext;
	else
		w->wait_head = c->wnext;
	if (c->wnext != NULL)
		c->wnext->wprev = c->wprev;
	else
		w->wait_tail = c->wprev;
	c->wprev = c->wnext = NULL;
	c->svc = SVC_IDLE;
}

static bool
can_start(const struct lb_inst_worker *w)
{
	if (atomic_load_explicit(&w->srv->stall, memory_order_relaxed))
		return false;
	return w->conf->slots == 0 || w->busy < w->conf->slots;
}

void
inst_slot_release(struct conn *c)
{
	if (!c->has_slot)
		return;
	c->has_slot = false;
	c->w->busy--;
	c->w->kick = true;
}

/* Starts waiting requests while slots are free; never recursive. */
void
inst_kick_waiters(struct lb_inst_worker *w)
{
	w->kick = false;
	while (w->wait_head != NULL && can_start(w)) {
		struct conn *c = w->wait_head;

		inst_wait_remove(c);
		c->kicked = true;
		inst_conn_progress(c);
		c->kicked = false;
	}
}

/* Admission of a framed request against --max-inflight. */
static uint16_t
admit(struct lb_inst_worker *w, struct pend *p)
{
	unsigned int max = w->conf->max_inflight, cur;

	if (max == 0)
		return 0;
	cur = atomic_load_explicit(&w->srv->inflight, memory_order_relaxed);
	do {
		if (cur >= max)
			return 503;
	} while (!atomic_compare_exchange_weak_explicit(
		&w->srv->inflight, &cur, cur + 1, memory_order_relaxed,
		memory_order_relaxed));
	p->counted = true;
	return 0;
}

/* One line, one write(): lines of several threads never mix (O_APPEND). */
static void
log_request(int fd, const char *target)
{
	char line[LB_INST_TARGET_KEEP + 2];
	size_t n = strlen(target);

	memcpy(line, target, n);
	line[n++] = '\n';
	if (write(fd, line, n) < 0) {
		/* A test's log: losing a line is all that can happen. */
	}
}

static void
queue_request(struct conn *c, uint16_t status)
{
	struct pend *p = &c->q[(c->qh + c->qn) % PIPE_MAX];
	const struct lb_inst_req *r = &c->rx.req;

	memset(p, 0, sizeof(*p));
	p->t_first = c->t_first;
	p->head = r->head;
	p->close = r->close || status != 0;
	p->keep_alive = r->minor == 0 && !p->close;
	if (status == 0 && c->w->conf->error_path != NULL &&
	    strncmp(r->target, c->w->conf->error_path,
		    strlen(c->w->conf->error_path)) == 0)
		status = 500; /* answered without closing: see p->close */
	p->status = status != 0 ? status : admit(c->w, p);
	if (c->w->conf->log_fd >= 0)
		log_request(c->w->conf->log_fd, r->target);
	c->qn++;
	if (p->close)
		c->last_queued = true;
}

/* Frames what was read into queued requests. */
static void
conn_parse(struct conn *c)
{
	struct lb_inst_worker *w = c->w;
	size_t off = 0;

	while (!c->rd_err && !c->last_queued && c->qn < PIPE_MAX &&
	       !(w->draining && lb_inst_rx_idle(&c->rx))) {
		enum lb_inst_rx_ev ev;
		size_t used;

		ev = lb_inst_rx_feed(&c->rx, c->rbuf + off, c->rlen - off,
				     &used);
		off += used;
		if (ev == LB_INST_RX_MORE)
			break;
		if (ev == LB_INST_RX_HEAD) {
			/*
			 * Only when nothing is queued before it: a 100
			 * must not overtake earlier responses, and a
			 * client that pipelines behind an Expect sends
			 * its content after a timeout anyway.
			 */
			if (c->rx.req.expect_continue && c->qn == 0 &&
			    WBUF_SIZE - c->wlen >= sizeof(CONTINUE_100) - 1) {
				memcpy(c->wbuf + c->wlen, CONTINUE_100,
				       sizeof(CONTINUE_100) - 1);
				c->wlen += sizeof(CONTINUE_100) - 1;
			}
			continue;
		}
		if (ev == LB_INST_RX_DONE) {
			queue_request(c, 0);
			/*
			 * The next request's first byte is already in the
			 * buffer: it came with the latest read or before.
			 */
			c->t_first = c->t_rx;
			continue;
		}
		queue_request(c, c->rx.req.status);
		c->rd_err = true;
	}
	if (off > 0) {
		memmove(c->rbuf, c->rbuf + off, c->rlen - off);
		c->rlen -= off;
	}
}

static void
date_update(struct lb_inst_worker *w, uint64_t wall_ns)
{
	int64_t s = (int64_t)(wall_ns / 1000000000ull);

	if (s != w->date_s) {
		w->date_s = s;
		lb_inst_http_date(s, w->date);
	}
}

/* Answers the oldest queued request; the response is ready now. */
void
inst_respond(struct conn *c, uint16_t status)
{
	struct lb_inst_worker *w = c->w;
	const struct lb_inst_conf *conf = w->conf;
	struct pend *p = &c->q[c->qh];
	uint64_t now = lb_inst_mono_ns(), wall = lb_inst_wall_ns();
	struct lb_inst_resp r;
	char body[LB_INST_NAME_MAX + 64];
	double spl = 0.0;
	int n;

	/* Claim 3 of the seed: execution time / stored benchmark time. */
	if (lb_spl_ratio_ns(p->t_first, now, conf->bench_ns, &spl) != 0)
		spl = 0.0;
	date_update(w, wall);
	memset(&r, 0, sizeof(r));
	r.status = status;
	r.head = p->head;
	r.close = p->close ||
		  (c->qn == 1 && w->draining && lb_inst_rx_idle(&c->rx));
	r.keep_alive = p->keep_alive && !r.close;
	r.date = w->date;
	r.name = conf->name;
	r.spl_on = conf->spl;
	r.spl_hdr = conf->spl_hdr;
	r.spl = spl;
	r.spl_time_ms = wall / 1000000ull;
	r.orca_on = conf->orca;
	r.cpu_util = lb_inst_load_get(&w->srv->cpu_util_bits);
	r.rps = lb_inst_load_get(&w->srv->rps_bits);
	if (status == 200)
		n = snprintf(body, sizeof(body), "%s\n", conf->name);
	else
		n = snprintf(body, sizeof(body), "%u %s\n", status,
			     lb_inst_reason(status));
	r.body = body;
	r.body_len = n > 0 ? (size_t)n : 0;
	n = lb_inst_resp_build(c->wbuf + c->wlen, WBUF_SIZE - c->wlen, &r);
	if (n < 0) {
		/* Cannot happen with RESP_ROOM reserved; fail safe. */
		r.close = true;
		n = 0;
	}
	c->wlen += (size_t)n;
	inst_inflight_put(w, p);
	c->qh = (c->qh + 1) % PIPE_MAX;
	c->qn--;
	if (r.close)
		c->closing = true;
	atomic_fetch_add_explicit(&w->stats.responses, 1, memory_order_relaxed);
	if (status >= 500)
		atomic_fetch_add_explicit(&w->stats.errors_5xx, 1,
					  memory_order_relaxed);
	else if (status >= 400)
		atomic_fetch_add_explicit(&w->stats.errors_4xx, 1,
					  memory_order_relaxed);
}

static uint64_t
pick_delay(struct lb_inst_worker *w)
{
	const struct lb_inst_conf *conf = w->conf;
	double d;

	if (conf->jitter_ns == 0)
		return conf->delay_ns;
	/* Uniform in [delay - jitter, delay + jitter], not below 0. */
	d = (double)conf->delay_ns +
	    (2.0 * lb_rng_unit(&w->jitter) - 1.0) * (double)conf->jitter_ns;
	return d > 0.0 ? (uint64_t)d : 0;
}

/* Starts (and, without a delay, finishes) queued requests in order. */
static void
conn_serve(struct conn *c)
{
	struct lb_inst_worker *w = c->w;
	const struct lb_inst_conf *conf = w->conf;

	while (c->qn > 0 && c->svc == SVC_IDLE && !c->closing) {
		struct pend *p = &c->q[c->qh];
		uint64_t delay;

		if (!inst_wbuf_room(c, RESP_ROOM, lb_inst_mono_ns()))
			return;
		if (atomic_load_explicit(&w->srv->stall,
					 memory_order_relaxed)) {
			wait_push(c);
			return;
		}
		if (p->status != 0) {
			inst_respond(c, p->status);
			continue;
		}
		/* First come, first served: behind those already waiting. */
		if (!can_start(w) || (w->wait_head != NULL && !c->kicked)) {
			wait_push(c);
			return;
		}
		if (conf->error_rate > 0.0 &&
		    lb_rng_unit(&w->err) < conf->error_rate) {
			inst_respond(c, 503);
			continue;
		}
		c->has_slot = true;
		w->busy++;
		lb_inst_load_burn(conf->cpu_ns);
		delay = pick_delay(w);
		if (delay > 0) {
			c->svc = SVC_DELAY;
			c->delay_end = lb_inst_mono_ns() + delay;
			if (inst_timer_set(c, c->delay_end) != 0)
				inst_conn_close(c);
			return;
		}
		inst_respond(c, 200);
		inst_slot_release(c);
	}
}

void
inst_conn_update(struct conn *c, uint64_t now)
{
	struct lb_inst_worker *w = c->w;
	uint32_t want = 0;
	uint64_t idle;

	if (!c->rd_eof && !c->rd_err && !c->last_queued && !c->closing &&
	    c->qn < PIPE_MAX && c->rlen < c->rcap &&
	    !(w->draining && lb_inst_rx_idle(&c->rx)))
		want |= EPOLLIN;
	if (c->wlen > c->woff)
		want |= EPOLLOUT;
	if (inst_conn_events(c, want) != 0) {
		inst_conn_close(c);
		return;
	}
	/*
	 * Idle timeout while the connection waits on its client (for a
	 * request, or to read responses). Armed lazily: activity since
	 * only makes it fire early, and it is armed again then.
	 */
	if (c->svc != SVC_IDLE)
		return;
	idle = c->t_active + w->conf->idle_ns;
	if (idle <= now)
		idle = now + 1;
	if ((c->heap_idx == NO_TIMER || c->deadline > idle) &&
	    inst_timer_set(c, idle) != 0)
		inst_conn_close(c);
}

void
inst_conn_progress(struct conn *c)
{
	struct lb_inst_worker *w = c->w;
	uint64_t now;

	if (c->dead || c->lingering)
		return;
	for (;;) {
		unsigned int qn = c->qn;
		size_t rlen = c->rlen;

		conn_parse(c);
		conn_serve(c);
		if (c->dead)
			return;
		if (c->qn == qn && c->rlen == rlen)
			break;
	}
	now = lb_inst_mono_ns();
	if (inst_conn_flush(c, now) < 0)
		return;
	if (c->wlen == 0 && c->svc == SVC_IDLE && (c->qn == 0 || c->closing)) {
		if (c->closing || c->rd_err || c->last_queued ||
		    (w->draining && lb_inst_rx_idle(&c->rx))) {
			inst_conn_linger(c, now);
			return;
		}
		if (c->rd_eof) {
			inst_conn_close(c);
			return;
		}
	}
	inst_conn_update(c, now);
}

