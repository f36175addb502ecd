/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The connections of an lb-instance worker: accepted, read into the
 * request framer, written from their buffer, lingering on close, and
 * closed when idle or done. What their requests do is inst_request.c's.
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

/* ---- connections ---- */

void
inst_inflight_put(struct lb_inst_worker *w, struct pend *p)
{
	if (!p->counted)
		return;
	p->counted = false;
	atomic_fetch_sub_explicit(&w->srv->inflight, 1, memory_order_relaxed);
}

void
inst_conn_close(struct conn *c)
{
	struct lb_inst_worker *w = c->w;

	if (c->dead)
		return;
	c->dead = true;
	/* Closing the only descriptor also takes it out of the epoll set. */
	close(c->fd);
	inst_timer_del(c);
	if (c->svc == SVC_WAIT)
		inst_wait_remove(c);
	inst_slot_release(c);
	for (unsigned int i = 0; i < c->qn; i++)
		inst_inflight_put(w, &c->q[(c->qh + i) % PIPE_MAX]);
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

int
inst_conn_events(struct conn *c, uint32_t want)
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
void
inst_conn_linger(struct conn *c, uint64_t now)
{
	if (shutdown(c->fd, SHUT_WR) != 0 ||
	    inst_conn_events(c, EPOLLIN) != 0) {
		inst_conn_close(c);
		return;
	}
	c->lingering = true;
	c->rlen = 0;
	c->linger_end = now + LINGER_NS;
	if (c->svc == SVC_WAIT)
		inst_wait_remove(c);
	if (inst_timer_set(c, c->linger_end) != 0)
		inst_conn_close(c);
}

/* Writes what is pending; -1 when the connection is gone. */
int
inst_conn_flush(struct conn *c, uint64_t now)
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
		inst_conn_close(c);
		return -1;
	}
	c->woff = c->wlen = 0;
	return 0;
}

bool
inst_wbuf_room(struct conn *c, size_t need, uint64_t now)
{
	if (WBUF_SIZE - c->wlen >= need)
		return true;
	if (inst_conn_flush(c, now) < 0)
		return false;
	if (c->woff > 0) {
		memmove(c->wbuf, c->wbuf + c->woff, c->wlen - c->woff);
		c->wlen -= c->woff;
		c->woff = 0;
	}
	return WBUF_SIZE - c->wlen >= need;
}

void
inst_conn_read(struct conn *c, uint64_t now)
{
	ssize_t n;

	if (c->lingering) {
		char sink[4096];

		do {
			n = recv(c->fd, sink, sizeof(sink), 0);
		} while (n > 0);
		if (n == 0 ||
		    (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
			inst_conn_close(c);
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
		inst_conn_close(c);
	}
}

/* A connection's timer fired. */
void
inst_conn_timeout(struct conn *c, uint64_t now)
{
	if (c->lingering) {
		if (now >= c->linger_end)
			inst_conn_close(c);
		else if (inst_timer_set(c, c->linger_end) != 0)
			inst_conn_close(c);
		return;
	}
	switch (c->svc) {
	case SVC_DELAY:
		if (now < c->delay_end) {
			if (inst_timer_set(c, c->delay_end) != 0)
				inst_conn_close(c);
			return;
		}
		c->svc = SVC_IDLE;
		inst_respond(c, 200);
		inst_slot_release(c);
		inst_conn_progress(c);
		return;
	case SVC_WAIT:
		return;
	default:
		if (now >= c->t_active + c->w->conf->idle_ns)
			inst_conn_close(c);
		else
			inst_conn_update(c, now);
		return;
	}
}

struct conn *
inst_conn_new(struct lb_inst_worker *w, int fd, uint64_t now)
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
	    inst_timer_set(c, now + w->conf->idle_ns) != 0) {
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
