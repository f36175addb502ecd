/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Deferred queue of the total cluster shutdown state: see dataplane/sched/deferq.h
 * for the semantics. Layout: a fixed array of nodes threaded on a doubly
 * linked arrival list (O(1) removal from the middle keeps everyone else's
 * place) with the unused nodes on a free list, plus an open-addressing
 * index from key to node (linear probing, load at most 1/2, deletion by
 * backward shift so that no tombstones accumulate on a long-lived queue).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "deferq.h"
#include "lb/ilist.h"
#include "lb/rng.h"

struct node {
	struct lb_deferq_entry e;
	uint32_t prev;
	uint32_t next;
	/* Push order; bounds a poll to the entries queued before it. */
	uint64_t seq;
};

struct lb_deferq {
	uint64_t gap_ns;
	uint64_t wait_ns;
	uint32_t max_attempts;
	uint64_t seed;
	uint32_t mask; /* index slots - 1 */
	uint32_t depth;
	uint32_t head;
	uint32_t tail;
	uint32_t free;
	/* Next entry of the retry round in progress, LB_ILIST_NIL between
	 * rounds. */
	uint32_t cursor;
	/* The round in progress ignores retry times (lb_deferq_kick). */
	bool kick;
	bool busy;
	uint64_t last_ns;
	uint64_t seq;
	struct lb_deferq_stats st;
	struct node *nodes;
	uint32_t *index;
};

/* The arrival list's links, and the free list's (next only). */
static inline struct lb_ilist_links
links(const struct lb_deferq *q)
{
	return LB_ILIST_LINKS(q->nodes, prev, next);
}

static uint64_t
sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t
clamp_now(struct lb_deferq *q, uint64_t now_ns)
{
	if (now_ns > q->last_ns)
		q->last_ns = now_ns;
	return q->last_ns;
}

static uint32_t
slot_of(const struct lb_deferq *q, uint64_t key)
{
	uint64_t s = key ^ q->seed;

	return (uint32_t)lb_splitmix64(&s) & q->mask;
}

/* Index slot holding @key, or LB_ILIST_NIL. */
static uint32_t
index_find(const struct lb_deferq *q, uint64_t key)
{
	uint32_t i = slot_of(q, key);

	while (q->index[i] != LB_ILIST_NIL) {
		if (q->nodes[q->index[i]].e.key == key)
			return i;
		i = (i + 1) & q->mask;
	}
	return LB_ILIST_NIL;
}

static void
index_insert(struct lb_deferq *q, uint64_t key, uint32_t n)
{
	uint32_t i = slot_of(q, key);

	while (q->index[i] != LB_ILIST_NIL)
		i = (i + 1) & q->mask;
	q->index[i] = n;
}

/*
 * Backward-shift deletion: walk the cluster after the hole and move back
 * every entry whose home slot does not lie cyclically in (hole, j], so
 * that each remaining key is still reachable from its home slot.
 */
static void
index_erase(struct lb_deferq *q, uint32_t hole)
{
	uint32_t j = hole;

	for (;;) {
		uint32_t home;

		j = (j + 1) & q->mask;
		if (q->index[j] == LB_ILIST_NIL)
			break;
		home = slot_of(q, q->nodes[q->index[j]].e.key);
		if (((j - home) & q->mask) >= ((j - hole) & q->mask)) {
			q->index[hole] = q->index[j];
			hole = j;
		}
	}
	q->index[hole] = LB_ILIST_NIL;
}

static void
unlink_node(struct lb_deferq *q, uint32_t n)
{
	struct node *nd = &q->nodes[n];

	struct lb_ilist_links l = links(q);

	if (q->cursor == n)
		q->cursor = nd->next;
	lb_ilist_unlink(&l, &q->head, &q->tail, n);
	lb_ilist_stack_push(&l, &q->free, n);
	q->depth--;
}

static void
drop(struct lb_deferq *q, uint32_t n)
{
	uint32_t slot = index_find(q, q->nodes[n].e.key);

	if (slot != LB_ILIST_NIL)
		index_erase(q, slot);
	unlink_node(q, n);
}

int
lb_deferq_conf_check(const struct lb_deferq_conf *conf)
{
	uint64_t wait;

	if (conf == NULL)
		return -EINVAL;
	if (conf->retry_gap_ns > LB_DEFERQ_GAP_MAX_NS)
		return -ERANGE;
	wait = conf->max_wait_ns == 0 ? LB_DEFERQ_WAIT_DEFAULT_NS
				      : conf->max_wait_ns;
	if (wait != LB_DEFERQ_WAIT_FOREVER && wait > LB_DEFERQ_WAIT_MAX_NS)
		return -ERANGE;
	/* An entry would expire before its first retry. */
	if (conf->retry_gap_ns >= wait)
		return -EINVAL;
	return 0;
}

struct lb_deferq *
lb_deferq_create(uint32_t capacity, const struct lb_deferq_conf *conf)
{
	static const struct lb_deferq_conf defaults;
	struct lb_deferq *q = NULL;
	struct lb_ilist_links l;
	uint32_t slots = 2;
	int rc;

	if (conf == NULL)
		conf = &defaults;
	if (capacity == 0) {
		rc = EINVAL;
		goto fail;
	}
	if (capacity > LB_DEFERQ_CAPACITY_MAX) {
		rc = ERANGE;
		goto fail;
	}
	rc = -lb_deferq_conf_check(conf);
	if (rc != 0)
		goto fail;

	/* Load factor at most 1/2 keeps probe sequences short. */
	while (slots < 2 * (uint64_t)capacity)
		slots <<= 1;

	rc = ENOMEM;
	q = calloc(1, sizeof(*q));
	if (q == NULL)
		goto fail;
	q->nodes = calloc(capacity, sizeof(*q->nodes));
	q->index = malloc(slots * sizeof(*q->index));
	if (q->nodes == NULL || q->index == NULL)
		goto fail;
	memset(q->index, 0xff, slots * sizeof(*q->index));

	q->gap_ns = conf->retry_gap_ns;
	q->wait_ns = conf->max_wait_ns == 0 ? LB_DEFERQ_WAIT_DEFAULT_NS
					    : conf->max_wait_ns;
	q->max_attempts = conf->max_attempts;
	q->seed = conf->hash_seed;
	q->mask = slots - 1;
	lb_ilist_init(&q->head, &q->tail);
	q->cursor = LB_ILIST_NIL;
	l = links(q);
	lb_ilist_stack_fill(&l, &q->free, capacity);
	q->st.capacity = capacity;
	return q;

fail:
	lb_deferq_free(q);
	errno = rc;
	return NULL;
}

void
lb_deferq_free(struct lb_deferq *q)
{
	if (q == NULL)
		return;
	free(q->index);
	free(q->nodes);
	free(q);
}

int
lb_deferq_push(struct lb_deferq *q, uint64_t key, uint64_t cookie,
	       uint64_t now_ns, uint64_t *old_cookie)
{
	struct lb_ilist_links l;
	struct node *nd;
	uint32_t slot, n;

	if (q == NULL)
		return -EINVAL;
	now_ns = clamp_now(q, now_ns);

	slot = index_find(q, key);
	if (slot != LB_ILIST_NIL) {
		nd = &q->nodes[q->index[slot]];
		if (old_cookie != NULL)
			*old_cookie = nd->e.cookie;
		nd->e.cookie = cookie;
		nd->e.joins++;
		q->st.joined++;
		return LB_DEFERQ_JOINED;
	}
	if (q->free == LB_ILIST_NIL) {
		q->st.overflowed++;
		return -ENOSPC;
	}

	l = links(q);
	n = lb_ilist_stack_pop(&l, &q->free);
	nd = &q->nodes[n];
	nd->e = (struct lb_deferq_entry){
		.key = key,
		.cookie = cookie,
		.enq_ns = now_ns,
		.next_ns = sat_add(now_ns, q->gap_ns),
	};
	nd->seq = q->seq++;
	lb_ilist_push_tail(&l, &q->head, &q->tail, n);
	index_insert(q, key, n);
	q->depth++;
	q->st.pushed++;
	return 0;
}

static bool
expired(const struct lb_deferq *q, const struct node *nd, uint64_t now_ns)
{
	return now_ns >= sat_add(nd->e.enq_ns, q->wait_ns);
}

int
lb_deferq_poll(struct lb_deferq *q, uint64_t now_ns, uint32_t budget,
	       lb_deferq_cb cb, void *arg)
{
	uint32_t handed = 0;
	uint64_t seq_end;

	if (q == NULL || cb == NULL || budget == 0)
		return -EINVAL;
	if (q->busy)
		return -EBUSY;
	now_ns = clamp_now(q, now_ns);
	q->busy = true;
	seq_end = q->seq;

	/*
	 * Expiry counts from the first push and every entry has the same
	 * wait, so the expired entries are a prefix of the arrival list.
	 */
	while (q->head != LB_ILIST_NIL && handed < budget &&
	       expired(q, &q->nodes[q->head], now_ns)) {
		uint32_t n = q->head;

		cb(LB_DEFERQ_EXPIRED, &q->nodes[n].e, arg);
		q->st.expired++;
		handed++;
		drop(q, n);
	}

	/*
	 * The oldest entry being due starts a new round, even over one in
	 * progress: retries go to the oldest entries first when the budget
	 * is short. Otherwise a round cut by the budget (or started by
	 * lb_deferq_kick) resumes where it stopped. Walking only forward, one
	 * call hands no entry back twice, even with a zero gap.
	 */
	if (q->cursor == LB_ILIST_NIL)
		q->kick = false;
	if (!q->kick && q->head != LB_ILIST_NIL &&
	    q->nodes[q->head].e.next_ns <= now_ns)
		q->cursor = q->head;
	while (q->cursor != LB_ILIST_NIL && handed < budget) {
		uint32_t n = q->cursor;
		struct node *nd = &q->nodes[n];
		enum lb_deferq_verdict v;

		/* Queued by a callback of this call: left for the next. */
		if (nd->seq >= seq_end)
			break;
		if (!q->kick && nd->e.next_ns > now_ns) {
			/* Head of line: the round ends here. */
			q->cursor = LB_ILIST_NIL;
			break;
		}
		q->cursor = nd->next;
		nd->e.attempts++;
		q->st.retried++;
		handed++;
		v = cb(LB_DEFERQ_DUE, &nd->e, arg);
		if (v == LB_DEFERQ_DONE) {
			q->st.dispatched++;
			drop(q, n);
		} else if (q->max_attempts != 0 &&
			   nd->e.attempts >= q->max_attempts) {
			cb(LB_DEFERQ_EXHAUSTED, &nd->e, arg);
			q->st.exhausted++;
			drop(q, n);
		} else {
			nd->e.next_ns = sat_add(now_ns, q->gap_ns);
		}
	}
	if (q->cursor == LB_ILIST_NIL)
		q->kick = false;

	q->busy = false;
	return (int)handed;
}

int
lb_deferq_kick(struct lb_deferq *q)
{
	if (q == NULL)
		return -EINVAL;
	if (q->busy)
		return -EBUSY;
	q->cursor = q->head;
	q->kick = q->head != LB_ILIST_NIL;
	return 0;
}

int
lb_deferq_remove(struct lb_deferq *q, uint64_t key, uint64_t *cookie)
{
	uint32_t slot, n;

	if (q == NULL)
		return -EINVAL;
	if (q->busy)
		return -EBUSY;
	slot = index_find(q, key);
	if (slot == LB_ILIST_NIL)
		return -ENOENT;
	n = q->index[slot];
	if (cookie != NULL)
		*cookie = q->nodes[n].e.cookie;
	index_erase(q, slot);
	unlink_node(q, n);
	q->st.removed++;
	return 0;
}

int
lb_deferq_lookup(const struct lb_deferq *q, uint64_t key,
		 struct lb_deferq_entry *out)
{
	uint32_t slot;

	if (q == NULL || out == NULL)
		return -EINVAL;
	slot = index_find(q, key);
	if (slot == LB_ILIST_NIL)
		return -ENOENT;
	*out = q->nodes[q->index[slot]].e;
	return 0;
}

int
lb_deferq_flush(struct lb_deferq *q, lb_deferq_cb cb, void *arg)
{
	int flushed = 0;

	if (q == NULL || cb == NULL)
		return -EINVAL;
	if (q->busy)
		return -EBUSY;
	q->busy = true;
	while (q->head != LB_ILIST_NIL) {
		uint32_t n = q->head;

		cb(LB_DEFERQ_FLUSHED, &q->nodes[n].e, arg);
		q->st.removed++;
		flushed++;
		drop(q, n);
	}
	q->busy = false;
	return flushed;
}

uint64_t
lb_deferq_next_deadline(const struct lb_deferq *q)
{
	uint64_t t;

	if (q == NULL || q->head == LB_ILIST_NIL)
		return UINT64_MAX;
	if (q->kick && q->cursor != LB_ILIST_NIL)
		return 0;
	t = sat_add(q->nodes[q->head].e.enq_ns, q->wait_ns);
	if (q->nodes[q->head].e.next_ns < t)
		t = q->nodes[q->head].e.next_ns;
	/* A round in progress resumes at the cursor. */
	if (q->cursor != LB_ILIST_NIL && q->nodes[q->cursor].e.next_ns < t)
		t = q->nodes[q->cursor].e.next_ns;
	return t;
}

uint32_t
lb_deferq_depth(const struct lb_deferq *q)
{
	return q == NULL ? 0 : q->depth;
}

int
lb_deferq_stats(const struct lb_deferq *q, struct lb_deferq_stats *out)
{
	if (q == NULL || out == NULL)
		return -EINVAL;
	*out = q->st;
	out->depth = q->depth;
	return 0;
}
