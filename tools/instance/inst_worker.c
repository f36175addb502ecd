/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A worker of lb-instance: one thread, one epoll set, the connections it
 * accepted, and the requests on them.
 *
 * The server is a small epoll loop of its own rather than libmicrohttpd:
 * the SPL of the seed is execution time / benchmark time per request
 * (WO 2021/086339, claim 3), and here execution time starts at the first
 * byte of a request seen on the socket, queueing behind earlier
 * pipelined requests included. A library that hands over whole requests
 * hides when their bytes came, how pipelined requests wait behind each
 * other, and when a connection is kept alive; owning the loop keeps all
 * three exact and lets stall, slots and shedding act per request.
 *
 * A request's life on a connection:
 *
 *   read -> framed (lb_inst_rx) -> queued, in order -> in service:
 *   wait for a slot (--slots) unless stalled -> CPU work (--cpu-us) ->
 *   delay (--delay-ms, --jitter-ms) -> response ready: SPL measured ->
 *   written.
 *
 * Only the oldest queued request of a connection is in service, so
 * pipelined requests are answered in order and each one's execution time
 * includes its wait behind the ones before it. Requests shed by
 * --max-inflight, picked by --error-rate or refused as malformed are
 * answered without CPU work or delay, still in order.
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

#include "lb/rng.h"
#include "spl.h"

#include "inst.h"
#include "inst_http.h"

/** Requests framed and waiting for their answer, per connection. */
#define PIPE_MAX 32u
/** Responses waiting to be written, per connection. */
#define WBUF_SIZE 8192u
/** Room one response needs (head, name, status text). */
#define RESP_ROOM (LB_INST_RESP_HEAD_MAX + LB_INST_NAME_MAX + 64u)
/** Connections accepted per wake-up of the listening socket. */
#define ACCEPT_BURST 64
#define EVENTS_MAX 64
/** How long a closing connection reads what the client still sends. */
#define LINGER_NS 1000000000ull
/** Pause of accept() when descriptors run out. */
#define ACCEPT_PAUSE_NS 100000000ull
#define NO_TIMER SIZE_MAX

static const char CONTINUE_100[] = "HTTP/1.1 100 Continue\r\n\r\n";

enum svc {
	SVC_IDLE = 0, /* oldest queued request (if any) not started */
	SVC_WAIT,     /* waiting for a slot, or stalled */
	SVC_DELAY,    /* in its delay */
};

/* A request framed and not answered yet. */
struct pend {
	uint64_t t_first;
	uint16_t status;
	bool head;
	bool close;
	bool keep_alive;
	bool counted;
};

struct conn {
	struct lb_inst_worker *w;
	int fd;
	uint32_t events;
	uint8_t svc;
	bool dead;
	bool rd_eof;	  /* the client sent FIN */
	bool rd_err;	  /* the stream could not be framed */
	bool last_queued; /* a request asking for close is queued */
	bool closing;	  /* a response with Connection: close is written */
	bool lingering;	  /* write side shut, reading until the client's FIN */
	bool has_slot;
	bool kicked; /* taken off the wait list: may go before it */
	struct lb_inst_rx rx;
	uint64_t t_first;  /* first byte of the request being framed */
	uint64_t t_rx;	   /* latest read */
	uint64_t t_active; /* latest read or write, for the idle timeout */
	uint64_t delay_end;
	uint64_t linger_end;
	uint64_t deadline; /* timer heap key */
	size_t heap_idx;
	struct pend q[PIPE_MAX];
	unsigned int qh, qn;
	struct conn *wprev, *wnext; /* wait list */
	struct conn *prev, *next;   /* all connections of the worker */
	size_t woff, wlen;
	size_t rlen, rcap;
	char wbuf[WBUF_SIZE];
	char rbuf[];
};

struct lb_inst_worker {
	struct lb_inst_srv *srv;
	const struct lb_inst_conf *conf;
	unsigned int id;
	pthread_t tid;
	bool started;
	int ep;
	int wake_fd;
	int timer_fd;
	bool listening;
	uint64_t accept_resume;
	struct conn **heap;
	size_t heap_n, heap_cap;
	uint64_t armed;
	struct conn *wait_head, *wait_tail;
	bool kick;
	unsigned int busy;
	struct conn *conns;
	unsigned int nconns;
	struct conn *grave;
	/* Separate streams: the 503 pattern does not depend on jitter. */
	struct lb_xoshiro err_state;
	struct lb_xoshiro jitter_state;
	struct lb_rng err;
	struct lb_rng jitter;
	bool draining;
	uint64_t drain_end;
	int64_t date_s;
	char date[30];
	struct lb_inst_stats stats;
};

/* epoll tags of the worker's own descriptors; connections use themselves. */
static char tag_listen, tag_wake, tag_timer;

static void conn_progress(struct conn *c);

/* ---- timers: a binary min-heap of connections by deadline ---- */

static void
heap_put(struct lb_inst_worker *w, size_t i, struct conn *c)
{
	w->heap[i] = c;
	c->heap_idx = i;
}

static void
heap_up(struct lb_inst_worker *w, size_t i)
{
	struct conn *c = w->heap[i];

	while (i > 0) {
		size_t p = (i - 1) / 2;

		if (w->heap[p]->deadline <= c->deadline)
			break;
		heap_put(w, i, w->heap[p]);
		i = p;
	}
	heap_put(w, i, c);
}

static void
heap_down(struct lb_inst_worker *w, size_t i)
{
	struct conn *c = w->heap[i];

	for (;;) {
		size_t l = 2 * i + 1, m = i;
		uint64_t best = c->deadline;

		if (l < w->heap_n && w->heap[l]->deadline < best)
			m = l, best = w->heap[l]->deadline;
		if (l + 1 < w->heap_n && w->heap[l + 1]->deadline < best)
			m = l + 1;
		if (m == i)
			break;
		heap_put(w, i, w->heap[m]);
		i = m;
	}
	heap_put(w, i, c);
}

static void
timer_del(struct conn *c)
{
	struct lb_inst_worker *w = c->w;
	size_t i = c->heap_idx;

	if (i == NO_TIMER)
		return;
	c->heap_idx = NO_TIMER;
	if (--w->heap_n == i)
		return;
	heap_put(w, i, w->heap[w->heap_n]);
	heap_up(w, i);
	heap_down(w, w->heap[i]->heap_idx);
}

static int
timer_set(struct conn *c, uint64_t deadline)
{
	struct lb_inst_worker *w = c->w;

	if (c->heap_idx != NO_TIMER) {
		c->deadline = deadline;
		heap_up(w, c->heap_idx);
		heap_down(w, c->heap_idx);
		return 0;
	}
	if (w->heap_n == w->heap_cap) {
		size_t cap = w->heap_cap ? 2 * w->heap_cap : 64;
		struct conn **h = realloc(w->heap, cap * sizeof(*h));

		if (h == NULL)
			return -ENOMEM;
		w->heap = h;
		w->heap_cap = cap;
	}
	c->deadline = deadline;
	heap_put(w, w->heap_n++, c);
	heap_up(w, c->heap_idx);
	return 0;
}

/* Points the timerfd at the earliest deadline. */
static void
timer_arm(struct lb_inst_worker *w)
{
	uint64_t d = w->heap_n > 0 ? w->heap[0]->deadline : 0;
	struct itimerspec its;

	if (d == w->armed)
		return;
	memset(&its, 0, sizeof(its));
	/* A deadline of 0 would disarm; the monotonic clock is past it. */
	if (w->heap_n > 0 && d == 0)
		d = 1;
	its.it_value.tv_sec = (time_t)(d / 1000000000ull);
	its.it_value.tv_nsec = (long)(d % 1000000000ull);
	if (timerfd_settime(w->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) == 0)
		w->armed = d;
}

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

static void
wait_remove(struct conn *c)
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

static void
slot_release(struct conn *c)
{
	if (!c->has_slot)
		return;
	c->has_slot = false;
	c->w->busy--;
	c->w->kick = true;
}

/* Starts waiting requests while slots are free; never recursive. */
static void
kick_waiters(struct lb_inst_worker *w)
{
	w->kick = false;
	while (w->wait_head != NULL && can_start(w)) {
		struct conn *c = w->wait_head;

		wait_remove(c);
		c->kicked = true;
		conn_progress(c);
		c->kicked = false;
	}
}

/* ---- connections ---- */

static void
inflight_put(struct lb_inst_worker *w, struct pend *p)
{
	if (!p->counted)
		return;
	p->counted = false;
	atomic_fetch_sub_explicit(&w->srv->inflight, 1, memory_order_relaxed);
}

static void
conn_close(struct conn *c)
{
	struct lb_inst_worker *w = c->w;

	if (c->dead)
		return;
	c->dead = true;
	/* Closing the only descriptor also takes it out of the epoll set. */
	close(c->fd);
	timer_del(c);
	if (c->svc == SVC_WAIT)
		wait_remove(c);
	slot_release(c);
	for (unsigned int i = 0; i < c->qn; i++)
		inflight_put(w, &c->q[(c->qh + i) % PIPE_MAX]);
	c->qn = 0;
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		w->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	w->nconns--;
	/* Freed after the current batch of events, which may name it. */
	c->next = w->grave;
	w->grave = c;
}

static int
conn_events(struct conn *c, uint32_t want)
{
	struct epoll_event ev = {.events = want, .data.ptr = c};

	if (want == c->events)
		return 0;
	if (epoll_ctl(c->w->ep, EPOLL_CTL_MOD, c->fd, &ev) != 0)
		return -errno;
	c->events = want;
	return 0;
}

/*
 * Closes gracefully: no more writes, and what the client still sends is
 * read and dropped until its FIN or LINGER_NS, so that a reset does not
 * destroy responses it has not read yet (RFC 9112 §9.6).
 */
static void
conn_linger(struct conn *c, uint64_t now)
{
	if (shutdown(c->fd, SHUT_WR) != 0 || conn_events(c, EPOLLIN) != 0) {
		conn_close(c);
		return;
	}
	c->lingering = true;
	c->rlen = 0;
	c->linger_end = now + LINGER_NS;
	if (c->svc == SVC_WAIT)
		wait_remove(c);
	if (timer_set(c, c->linger_end) != 0)
		conn_close(c);
}

/* Writes what is pending; -1 when the connection is gone. */
static int
conn_flush(struct conn *c, uint64_t now)
{
	while (c->woff < c->wlen) {
		ssize_t n = send(c->fd, c->wbuf + c->woff, c->wlen - c->woff,
				 MSG_NOSIGNAL);

		if (n > 0) {
			c->woff += (size_t)n;
			c->t_active = now;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		conn_close(c);
		return -1;
	}
	c->woff = c->wlen = 0;
	return 0;
}

static bool
wbuf_room(struct conn *c, size_t need, uint64_t now)
{
	if (WBUF_SIZE - c->wlen >= need)
		return true;
	if (conn_flush(c, now) < 0)
		return false;
	if (c->woff > 0) {
		memmove(c->wbuf, c->wbuf + c->woff, c->wlen - c->woff);
		c->wlen -= c->woff;
		c->woff = 0;
	}
	return WBUF_SIZE - c->wlen >= need;
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
static void
respond(struct conn *c, uint16_t status)
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
	inflight_put(w, p);
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

		if (!wbuf_room(c, RESP_ROOM, lb_inst_mono_ns()))
			return;
		if (atomic_load_explicit(&w->srv->stall,
					 memory_order_relaxed)) {
			wait_push(c);
			return;
		}
		if (p->status != 0) {
			respond(c, p->status);
			continue;
		}
		/* First come, first served: behind those already waiting. */
		if (!can_start(w) || (w->wait_head != NULL && !c->kicked)) {
			wait_push(c);
			return;
		}
		if (conf->error_rate > 0.0 &&
		    lb_rng_unit(&w->err) < conf->error_rate) {
			respond(c, 503);
			continue;
		}
		c->has_slot = true;
		w->busy++;
		lb_inst_load_burn(conf->cpu_ns);
		delay = pick_delay(w);
		if (delay > 0) {
			c->svc = SVC_DELAY;
			c->delay_end = lb_inst_mono_ns() + delay;
			if (timer_set(c, c->delay_end) != 0)
				conn_close(c);
			return;
		}
		respond(c, 200);
		slot_release(c);
	}
}

static void
conn_update(struct conn *c, uint64_t now)
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
	if (conn_events(c, want) != 0) {
		conn_close(c);
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
	    timer_set(c, idle) != 0)
		conn_close(c);
}

static void
conn_progress(struct conn *c)
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
	if (conn_flush(c, now) < 0)
		return;
	if (c->wlen == 0 && c->svc == SVC_IDLE && (c->qn == 0 || c->closing)) {
		if (c->closing || c->rd_err || c->last_queued ||
		    (w->draining && lb_inst_rx_idle(&c->rx))) {
			conn_linger(c, now);
			return;
		}
		if (c->rd_eof) {
			conn_close(c);
			return;
		}
	}
	conn_update(c, now);
}

static void
conn_read(struct conn *c, uint64_t now)
{
	ssize_t n;

	if (c->lingering) {
		char sink[4096];

		do {
			n = recv(c->fd, sink, sizeof(sink), 0);
		} while (n > 0);
		if (n == 0 ||
		    (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
			conn_close(c);
		return;
	}
	if (c->rd_eof || c->rlen == c->rcap)
		return;
	n = recv(c->fd, c->rbuf + c->rlen, c->rcap - c->rlen, 0);
	if (n > 0) {
		/* The first byte of a request: its execution starts. */
		if (c->rlen == 0 && lb_inst_rx_idle(&c->rx))
			c->t_first = now;
		c->rlen += (size_t)n;
		c->t_rx = now;
		c->t_active = now;
	} else if (n == 0) {
		c->rd_eof = true;
	} else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
		conn_close(c);
	}
}

/* A connection's timer fired. */
static void
conn_timeout(struct conn *c, uint64_t now)
{
	if (c->lingering) {
		if (now >= c->linger_end)
			conn_close(c);
		else if (timer_set(c, c->linger_end) != 0)
			conn_close(c);
		return;
	}
	switch (c->svc) {
	case SVC_DELAY:
		if (now < c->delay_end) {
			if (timer_set(c, c->delay_end) != 0)
				conn_close(c);
			return;
		}
		c->svc = SVC_IDLE;
		respond(c, 200);
		slot_release(c);
		conn_progress(c);
		return;
	case SVC_WAIT:
		return;
	default:
		if (now >= c->t_active + c->w->conf->idle_ns)
			conn_close(c);
		else
			conn_update(c, now);
		return;
	}
}

static struct conn *
conn_new(struct lb_inst_worker *w, int fd, uint64_t now)
{
	size_t rcap = (size_t)w->conf->head_max + 1024;
	struct conn *c = calloc(1, sizeof(*c) + rcap);
	struct epoll_event ev = {.events = EPOLLIN};

	if (c == NULL)
		return NULL;
	c->w = w;
	c->fd = fd;
	c->rcap = rcap;
	c->heap_idx = NO_TIMER;
	c->t_active = now;
	c->t_rx = now;
	lb_inst_rx_init(&c->rx, w->conf->head_max);
	ev.data.ptr = c;
	if (epoll_ctl(w->ep, EPOLL_CTL_ADD, fd, &ev) != 0 ||
	    timer_set(c, now + w->conf->idle_ns) != 0) {
		free(c);
		return NULL;
	}
	c->events = EPOLLIN;
	c->next = w->conns;
	if (w->conns != NULL)
		w->conns->prev = c;
	w->conns = c;
	w->nconns++;
	return c;
}

/* ---- the listening socket ---- */

static int
listen_watch(struct lb_inst_worker *w, bool on)
{
	struct epoll_event ev = {
		/* One worker woken per connection, not all of them. */
		.events = EPOLLIN | EPOLLEXCLUSIVE,
		.data.ptr = &tag_listen,
	};

	if (on == w->listening)
		return 0;
	if (epoll_ctl(w->ep, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL,
		      w->srv->listen_fd, &ev) != 0)
		return -errno;
	w->listening = on;
	return 0;
}

static void
accept_burst(struct lb_inst_worker *w, uint64_t now)
{
	/* Its event may come in the batch that started the drain. */
	if (!w->listening)
		return;
	for (int i = 0; i < ACCEPT_BURST; i++) {
		int one = 1;
		int fd = accept4(w->srv->listen_fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM) {
				/* Level-triggered: would spin until one frees.
				 */
				listen_watch(w, false);
				w->accept_resume = now + ACCEPT_PAUSE_NS;
				return;
			}
			if (errno == EINTR || errno == ECONNABORTED ||
			    errno == EPROTO)
				continue;
			return; /* EAGAIN: another worker took it */
		}
		/* Small responses on kept-alive connections: no Nagle wait. */
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (conn_new(w, fd, now) == NULL) {
			close(fd);
			continue;
		}
		atomic_fetch_add_explicit(&w->stats.accepted, 1,
					  memory_order_relaxed);
	}
}

/* ---- the loop ---- */

static void
drain_start(struct lb_inst_worker *w, uint64_t now)
{
	struct conn *c, *next;

	w->draining = true;
	w->drain_end = now + w->conf->drain_ns;
	listen_watch(w, false);
	w->accept_resume = 0;
	atomic_fetch_add(&w->srv->deaf, 1);
	for (c = w->conns; c != NULL; c = next) {
		next = c->next;
		conn_progress(c);
	}
}

static void
on_wake(struct lb_inst_worker *w, uint64_t now)
{
	uint64_t v;

	if (read(w->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
	if (!w->draining && atomic_load(&w->srv->drain))
		drain_start(w, now);
	w->kick = true;
}

static void
on_timer(struct lb_inst_worker *w)
{
	uint64_t v, now;

	if (read(w->timer_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
	w->armed = 0;
	now = lb_inst_mono_ns();
	while (w->heap_n > 0 && w->heap[0]->deadline <= now) {
		struct conn *c = w->heap[0];

		timer_del(c);
		conn_timeout(c, now);
	}
}

static void
on_conn(struct conn *c, uint32_t events, uint64_t now)
{
	if (c->dead)
		return;
	if (events & (EPOLLERR | EPOLLHUP)) {
		conn_close(c);
		return;
	}
	if (events & EPOLLIN) {
		conn_read(c, now);
		if (c->dead || c->lingering)
			return;
	}
	conn_progress(c);
}

static int
epoll_timeout(const struct lb_inst_worker *w, uint64_t now)
{
	uint64_t until = 0;

	if (w->draining)
		until = w->drain_end;
	if (!w->draining && !w->listening && w->accept_resume != 0)
		until = w->accept_resume;
	if (until == 0)
		return -1;
	if (until <= now)
		return 0;
	return (int)((until - now + 999999) / 1000000);
}

static void *
worker_main(void *arg)
{
	struct lb_inst_worker *w = arg;
	struct epoll_event evs[EVENTS_MAX];

	while (!(w->draining && w->nconns == 0)) {
		uint64_t now = lb_inst_mono_ns();
		int n = epoll_wait(w->ep, evs, EVENTS_MAX,
				   epoll_timeout(w, now));

		if (n < 0 && errno != EINTR)
			break;
		now = lb_inst_mono_ns();
		for (int i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;

			if (p == &tag_listen)
				accept_burst(w, now);
			else if (p == &tag_wake)
				on_wake(w, now);
			else if (p == &tag_timer)
				on_timer(w);
			else
				on_conn(p, evs[i].events, now);
		}
		if (w->kick)
			kick_waiters(w);
		if (w->draining && now >= w->drain_end)
			while (w->conns != NULL)
				conn_close(w->conns);
		if (!w->draining && !w->listening && w->accept_resume != 0 &&
		    now >= w->accept_resume && listen_watch(w, true) == 0)
			w->accept_resume = 0;
		timer_arm(w);
		while (w->grave != NULL) {
			struct conn *c = w->grave;

			w->grave = c->next;
			free(c);
		}
	}
	return NULL;
}

/* ---- life cycle ---- */

struct lb_inst_worker *
lb_inst_worker_create(struct lb_inst_srv *srv, unsigned int id)
{
	struct lb_inst_worker *w = calloc(1, sizeof(*w));
	struct epoll_event ev = {.events = EPOLLIN};
	int err;

	if (w == NULL)
		return NULL;
	w->srv = srv;
	w->conf = srv->conf;
	w->id = id;
	w->ep = w->wake_fd = w->timer_fd = -1;
	w->date_s = -1;
	/* Worker 0 draws exactly the sequence of --seed. */
	lb_xoshiro_seed(&w->err_state, srv->conf->seed + id);
	lb_xoshiro_seed(&w->jitter_state,
			(srv->conf->seed + id) ^ 0x6a09e667f3bcc909ull);
	w->err = lb_rng_xoshiro(&w->err_state);
	w->jitter = lb_rng_xoshiro(&w->jitter_state);
	w->ep = epoll_create1(EPOLL_CLOEXEC);
	w->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	w->timer_fd =
		timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (w->ep < 0 || w->wake_fd < 0 || w->timer_fd < 0)
		goto fail;
	ev.data.ptr = &tag_wake;
	if (epoll_ctl(w->ep, EPOLL_CTL_ADD, w->wake_fd, &ev) != 0)
		goto fail;
	ev.data.ptr = &tag_timer;
	if (epoll_ctl(w->ep, EPOLL_CTL_ADD, w->timer_fd, &ev) != 0)
		goto fail;
	err = listen_watch(w, true);
	if (err != 0) {
		errno = -err;
		goto fail;
	}
	return w;
fail:
	err = errno;
	lb_inst_worker_free(w);
	errno = err;
	return NULL;
}

int
lb_inst_worker_start(struct lb_inst_worker *w)
{
	int rc = pthread_create(&w->tid, NULL, worker_main, w);

	if (rc != 0)
		return -rc;
	w->started = true;
	return 0;
}

void
lb_inst_worker_kick(struct lb_inst_worker *w)
{
	uint64_t one = 1;

	if (write(w->wake_fd, &one, sizeof(one)) < 0) {
		/* Only EAGAIN at a counter near 2^64: it is awake anyway. */
	}
}

void
lb_inst_worker_join(struct lb_inst_worker *w)
{
	if (w->started)
		pthread_join(w->tid, NULL);
	w->started = false;
}

const struct lb_inst_stats *
lb_inst_worker_stats(const struct lb_inst_worker *w)
{
	return &w->stats;
}

void
lb_inst_worker_free(struct lb_inst_worker *w)
{
	if (w == NULL)
		return;
	while (w->conns != NULL)
		conn_close(w->conns);
	while (w->grave != NULL) {
		struct conn *c = w->grave;

		w->grave = c->next;
		free(c);
	}
	if (w->ep >= 0)
		close(w->ep);
	if (w->wake_fd >= 0)
		close(w->wake_fd);
	if (w->timer_fd >= 0)
		close(w->timer_fd);
	free(w->heap);
	free(w);
}
