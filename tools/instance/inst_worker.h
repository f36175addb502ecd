/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the files of an lb-instance worker share: its connections and
 * their queued requests, the worker itself, and the steps each file
 * offers the others. inst_worker.c runs the loop, the timers and the
 * listening socket; inst_conn.c reads, writes and closes connections;
 * inst_request.c takes framed requests through their service to the
 * response. Private to tools/instance.
 */
#ifndef LB_INST_WORKER_H
#define LB_INST_WORKER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lb/rng.h"

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


/* ---- inst_worker.c: timers ---- */

/** Takes @p c off the timer heap. */
void inst_timer_del(struct conn *c);
/** Puts @p c on the timer heap at @p deadline, or moves it there. */
int inst_timer_set(struct conn *c, uint64_t deadline);

/* ---- inst_conn.c: connections ---- */

struct conn *inst_conn_new(struct lb_inst_worker *w, int fd, uint64_t now);
void inst_conn_read(struct conn *c, uint64_t now);
void inst_conn_timeout(struct conn *c, uint64_t now);
int inst_conn_events(struct conn *c, uint32_t want);
int inst_conn_flush(struct conn *c, uint64_t now);
bool inst_wbuf_room(struct conn *c, size_t need, uint64_t now);
void inst_conn_linger(struct conn *c, uint64_t now);
void inst_conn_close(struct conn *c);
void inst_inflight_put(struct lb_inst_worker *w, struct pend *p);

/* ---- inst_request.c: requests ---- */

void inst_conn_progress(struct conn *c);
void inst_conn_update(struct conn *c, uint64_t now);
void inst_respond(struct conn *c, uint16_t status);
void inst_wait_remove(struct conn *c);
void inst_slot_release(struct conn *c);
void inst_kick_waiters(struct lb_inst_worker *w);

#endif /* LB_INST_WORKER_H */
