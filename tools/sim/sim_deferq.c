/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Total cluster shutdown (adaptive-request-dispatch-paper, section 3.2,
 * Algorithm 3): every backend is down while a burst of clients connects.
 * Their SYNs fail on every backend and wait in the deferred queue, are
 * retried every retry gap, and either drain in arrival order once a
 * backend is back or are answered with a RST when they waited too long.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

#include "deferq.h"

#define MS 1000000ull

#define N_CLIENTS 14
#define N_BE 3
#define TICK_MS 250
#define END_MS 5000
#define BUDGET 4

enum client_state { C_IDLE, C_QUEUED, C_CONNECTED, C_RESET };

struct client {
	uint64_t first_ms;
	enum client_state st;
	bool overflowed;
	bool direct;	  /* connected without waiting in the queue */
	uint64_t done_ms; /* connected or reset */
	int be;
};

/* A client's SYN and its retransmissions (Linux: RTO 1 s, doubling). */
static const uint64_t syn_offsets_ms[] = {0, 1000, 3000};

/* Backend i answers again from up_ms[i] on. */
static const uint64_t up_ms[N_BE] = {3250, 3750, 4250};

struct sim {
	struct client c[N_CLIENTS];
	uint64_t now_ms;
	unsigned int rr;
	/* Per tick. */
	unsigned int retried, ok, rst;
	/* Dispatch order out of the queue, by client number. */
	int order[N_CLIENTS];
	unsigned int n_order;
};

static bool
syn_at(const struct client *c, uint64_t t)
{
	for (size_t k = 0;
	     k < sizeof(syn_offsets_ms) / sizeof(syn_offsets_ms[0]); k++)
		if (c->first_ms + syn_offsets_ms[k] == t)
			return true;
	return false;
}

static int
pick_backend(struct sim *s)
{
	/* Algorithm 2 tries every backend once; any live one takes it. */
	for (unsigned int i = 0; i < N_BE; i++) {
		unsigned int be = (s->rr + i) % N_BE;

		if (s->now_ms >= up_ms[be]) {
			s->rr = be + 1;
			return (int)be;
		}
	}
	return -1;
}

static unsigned int
backends_up(uint64_t now_ms)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < N_BE; i++)
		n += now_ms >= up_ms[i];
	return n;
}

static enum lb_deferq_verdict
on_entry(enum lb_deferq_event ev, const struct lb_deferq_entry *e, void *arg)
{
	struct sim *s = arg;
	struct client *c = &s->c[e->key];
	int be;

	if (ev != LB_DEFERQ_DUE) {
		/* Waited max_wait: the client gets a RST. */
		c->st = C_RESET;
		c->done_ms = s->now_ms;
		s->rst++;
		return LB_DEFERQ_KEEP;
	}
	s->retried++;
	be = pick_backend(s);
	if (be < 0)
		return LB_DEFERQ_KEEP;
	c->st = C_CONNECTED;
	c->done_ms = s->now_ms;
	c->be = be;
	s->ok++;
	s->order[s->n_order++] = (int)e->key;
	return LB_DEFERQ_DONE;
}

/* What one tick's SYNs did. */
struct tick {
	unsigned int syn, fwd, queued, joined, ovf;
};

/*
 * The SYNs from @p from_ms to this tick in time order; all fall on 50 ms
 * steps. A SYN goes straight to a live backend, else into the queue.
 */
static int
tick_syns(struct lb_deferq *q, struct sim *s, uint64_t from_ms,
	  struct tick *tc)
{
	int rc = 0;

	for (uint64_t t = from_ms; t <= s->now_ms; t += 50) {
		for (int i = 0; i < N_CLIENTS; i++) {
			struct client *c = &s->c[i];
			int r;

			if (!syn_at(c, t) || c->st == C_CONNECTED ||
			    c->st == C_RESET)
				continue;
			tc->syn++;
			if (backends_up(t) > 0) {
				/* Back up: Algorithm 2 succeeds. */
				c->st = C_CONNECTED;
				c->direct = true;
				c->done_ms = t;
				tc->fwd++;
				continue;
			}
			r = lb_deferq_push(q, (uint64_t)i, t, t * MS,
					   NULL);
			if (r == 0) {
				c->st = C_QUEUED;
				tc->queued++;
			} else if (r == LB_DEFERQ_JOINED) {
				tc->joined++;
			} else if (r == -ENOSPC) {
				c->overflowed = true;
				tc->ovf++;
			} else {
				rc = -1;
			}
		}
	}
	return rc;
}

/* Prints who drained, who was reset and who overflowed; checks FCFS. */
static int
print_outcome(FILE *out, const struct sim *s)
{
	int rc = 0;

	fprintf(out, "Drained from the queue (client@time>backend):");
	for (unsigned int i = 0; i < s->n_order; i++) {
		const struct client *c = &s->c[s->order[i]];

		fprintf(out, "%s c%02d@%.2f>b%d", i % 6 == 0 ? "\n " : "",
			s->order[i] + 1, c->done_ms / 1e3, c->be + 1);
		/* FCFS: the queue hands clients back in arrival order. */
		if (i > 0 && s->order[i] < s->order[i - 1])
			rc = -1;
	}
	fprintf(out, "\nRST after waiting 3 s (oldest first):");
	for (int i = 0; i < N_CLIENTS; i++)
		if (s->c[i].st == C_RESET)
			fprintf(out, " c%02d", i + 1);
	fprintf(out, "\nOverflowed (-ENOSPC), connected later:");
	for (int i = 0; i < N_CLIENTS; i++)
		if (s->c[i].overflowed && s->c[i].direct)
			fprintf(out, " c%02d@%.2f", i + 1,
				s->c[i].done_ms / 1e3);
	fprintf(out, "\n");
	return rc;
}

int
lb_sim_deferq(FILE *out)
{
	const struct lb_deferq_conf conf = {
		.retry_gap_ns = 500 * MS,
		.max_wait_ns = 3000 * MS,
	};
	struct lb_deferq *q = lb_deferq_create(10, &conf);
	struct lb_deferq_stats st;
	struct sim s = {.n_order = 0};
	uint64_t next_ms = 0;
	int rc = 0;

	if (q == NULL) {
		fprintf(out, "deferq: create failed: errno %d\n", errno);
		return 1;
	}
	for (int i = 0; i < N_CLIENTS; i++)
		s.c[i] = (struct client){.first_ms = 150u * (unsigned)i,
					 .be = -1};

	fprintf(out,
		"Total cluster shutdown: all %d backends down until %.2f s, "
		"back "
		"at %.2f,\n%.2f, %.2f s. %d clients connect 150 ms apart from "
		"0 s and resend their SYN\nafter 1 s and 3 s. A SYN that fails "
		"on every backend waits in the queue\n(capacity 10, retry gap "
		"0.5 s, max wait 3 s; poll every %d ms, budget %d).\nA backend "
		"coming back kicks the queue: it drains oldest first.\n",
		N_BE, up_ms[0] / 1e3, up_ms[0] / 1e3, up_ms[1] / 1e3,
		up_ms[2] / 1e3, N_CLIENTS, TICK_MS, BUDGET);
	fprintf(out, "  t(s) up   syn fwd queued join ovf | depth retried "
		     "ok rst   (* = kick)\n");

	for (s.now_ms = 0; s.now_ms <= END_MS; s.now_ms += TICK_MS) {
		struct tick tc = {0};
		bool kicked;

		if (tick_syns(q, &s, next_ms, &tc) != 0)
			rc = 1;
		next_ms = s.now_ms + 50;

		/* A backend came back: re-dispatch the queue now (3.2). */
		kicked =
			s.now_ms > 0 &&
			backends_up(s.now_ms) > backends_up(s.now_ms - TICK_MS);
		if (kicked && lb_deferq_kick(q) != 0)
			rc = 1;
		s.retried = s.ok = s.rst = 0;
		if (lb_deferq_poll(q, s.now_ms * MS, BUDGET, on_entry, &s) < 0)
			rc = 1;
		fprintf(out,
			"  %4.2f  %u%c %3u %3u %6u %4u %3u | %5u %7u %2u "
			"%3u\n",
			s.now_ms / 1e3, backends_up(s.now_ms),
			kicked ? '*' : ' ', tc.syn, tc.fwd, tc.queued, tc.joined,
			tc.ovf,
			lb_deferq_depth(q), s.retried, s.ok, s.rst);
	}

	if (print_outcome(out, &s) != 0)
		rc = 1;

	if (lb_deferq_stats(q, &st) != 0 ||
	    st.pushed != st.depth + st.dispatched + st.expired + st.exhausted +
				 st.removed)
		rc = 1;
	fprintf(out,
		"Counters: pushed %" PRIu64 ", joined %" PRIu64
		", overflowed %" PRIu64 ", retried %" PRIu64
		", dispatched %" PRIu64 ", expired %" PRIu64 ", depth %u\n",
		st.pushed, st.joined, st.overflowed, st.retried, st.dispatched,
		st.expired, st.depth);
	for (int i = 0; i < N_CLIENTS; i++)
		if (s.c[i].st != C_CONNECTED && s.c[i].st != C_RESET)
			rc = 1; /* every client got an answer */
	lb_deferq_free(q);
	return rc;
}
