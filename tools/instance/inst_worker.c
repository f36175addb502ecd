/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A worker of lb-instance: one thread, one epoll set, the connections it
 * accepted, and the requests on them. This file holds the thread's loop,
 * its timers and the listening socket; the connections are in
 * inst_conn.c and their requests in inst_request.c.
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

#include "spl.h"

#include "inst_worker.h"

/* epoll tags of the worker's own descriptors; connections use themselves. */
static char tag_listen, tag_wake, tag_timer;

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

void
inst_timer_del(struct conn *c)
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

int
inst_timer_set(struct conn *c, uint64_t deadline)
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
		if (inst_conn_new(w, fd, now) == NULL) {
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
		inst_conn_progress(c);
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

		inst_timer_del(c);
		inst_conn_timeout(c, now);
	}
}

static void
on_conn(struct conn *c, uint32_t events, uint64_t now)
{
	if (c->dead)
		return;
	if (events & (EPOLLERR | EPOLLHUP)) {
		inst_conn_close(c);
		return;
	}
	if (events & EPOLLIN) {
		inst_conn_read(c, now);
		if (c->dead || c->lingering)
			return;
	}
	inst_conn_progress(c);
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
			inst_kick_waiters(w);
		if (w->draining && now >= w->drain_end)
			while (w->conns != NULL)
				inst_conn_close(w->conns);
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
		inst_conn_close(w->conns);
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
