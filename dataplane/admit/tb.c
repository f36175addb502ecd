/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lb/ilist.h"
#include "lb/tb.h"

/* The global bucket is shared between processes: its atomics must be
 * real lock-free instructions, not a lock table private to one process. */
#if ATOMIC_LLONG_LOCK_FREE != 2 || ATOMIC_LONG_LOCK_FREE != 2
#error "64-bit atomics must be lock-free for shared global buckets"
#endif

/* ---- global bucket ---------------------------------------------------- */

int
lb_tb_global_conf_check(const struct lb_tb_global_conf *conf)
{
	if (conf == NULL || conf->capacity == 0 || conf->rate == 0)
		return -EINVAL;
	if (conf->refill != LB_TB_REFILL_EACH &&
	    conf->refill != LB_TB_REFILL_ON_SHORTAGE &&
	    conf->refill != LB_TB_REFILL_NONE)
		return -EINVAL;
	if (conf->capacity > LB_TB_CAPACITY_MAX ||
	    conf->rate > LB_TB_RATE_MAX || conf->threshold >= conf->capacity)
		return -ERANGE;
	return 0;
}

int
lb_tb_global_init(struct lb_tb_global *g, const struct lb_tb_global_conf *conf,
		  uint64_t now_ns)
{
	int rc;

	if (g == NULL)
		return -EINVAL;
	rc = lb_tb_global_conf_check(conf);
	if (rc != 0)
		return rc;
	memset(g, 0, sizeof(*g));
	g->capacity_nt = conf->capacity * LB_TB_NT_PER_TOKEN;
	g->rate = conf->rate;
	g->fill_ns = g->capacity_nt / conf->rate + 1;
	g->threshold = conf->threshold;
	g->refill = (uint32_t)conf->refill;
	atomic_init(&g->tokens_nt, g->capacity_nt);
	atomic_init(&g->last_ns, now_ns);
	/* Publish the configuration before any other thread sees tokens. */
	atomic_thread_fence(memory_order_release);
	return 0;
}

/*
 * Claims the refill time [last_ns, now_ns) for this caller and returns the
 * nanotokens it is worth. The CAS makes the claimed periods disjoint, which
 * is what bounds the total refill by rate x elapsed.
 */
static uint64_t
claim_refill(struct lb_tb_global *g, uint64_t now_ns)
{
	uint64_t last = atomic_load_explicit(&g->last_ns, memory_order_relaxed);
	uint64_t elapsed;

	do {
		if (now_ns <= last)
			return 0;
	} while (!atomic_compare_exchange_weak_explicit(
		&g->last_ns, &last, now_ns, memory_order_relaxed,
		memory_order_relaxed));
	elapsed = now_ns - last;
	return elapsed >= g->fill_ns ? g->capacity_nt : elapsed * g->rate;
}

uint64_t
lb_tb_global_take_range(struct lb_tb_global *g, uint64_t lo, uint64_t hi,
			uint64_t now_ns)
{
	int each, claimed;
	uint64_t add, old, cur, avail, give, next;

	if (g == NULL || lo == 0 || lo > hi)
		return 0;
	each = g->refill == LB_TB_REFILL_EACH;
	add = each ? claim_refill(g, now_ns) : 0;
	/* A bucket without refill behaves as one that already claimed. */
	claimed = each || g->refill == LB_TB_REFILL_NONE;
	old = atomic_load_explicit(&g->tokens_nt, memory_order_acquire);
	for (;;) {
		/* Claims 9/18: tokens = min(max, tokens + rate x elapsed).
		 * old + add <= 2 x capacity_nt, far from overflowing. */
		cur = old + add < g->capacity_nt ? old + add : g->capacity_nt;
		avail = cur / LB_TB_NT_PER_TOKEN;
		give = 0;
		/* Claim 1 (threshold 0) and claim 5: dispense up to the
		 * request while more than the threshold is available. */
		if (avail > g->threshold) {
			give = avail < hi ? avail : hi;
			if (give < lo)
				give = 0;
		}
		if (give == 0 && !claimed) {
			/* Claims 7 and 15: refill only once short. */
			claimed = 1;
			add = claim_refill(g, now_ns);
			if (add != 0)
				continue;
		}
		if (give == 0 && add == 0)
			return 0;
		next = cur - give * LB_TB_NT_PER_TOKEN;
		if (atomic_compare_exchange_weak_explicit(
			    &g->tokens_nt, &old, next, memory_order_acq_rel,
			    memory_order_acquire))
			return give;
	}
}

uint64_t
lb_tb_global_deposit(struct lb_tb_global *g, uint64_t n)
{
	uint64_t old, next, add;

	if (g == NULL || n == 0)
		return 0;
	add = n < LB_TB_CAPACITY_MAX ? n : LB_TB_CAPACITY_MAX;
	add *= LB_TB_NT_PER_TOKEN;
	old = atomic_load_explicit(&g->tokens_nt, memory_order_relaxed);
	do {
		next = old + add < g->capacity_nt ? old + add : g->capacity_nt;
		if (next <= old)
			return 0;
	} while (!atomic_compare_exchange_weak_explicit(
		&g->tokens_nt, &old, next, memory_order_release,
		memory_order_relaxed));
	return next / LB_TB_NT_PER_TOKEN - old / LB_TB_NT_PER_TOKEN;
}

uint64_t
lb_tb_global_avail(const struct lb_tb_global *g, uint64_t now_ns)
{
	uint64_t tokens, last;

	if (g == NULL)
		return 0;
	last = atomic_load_explicit(&g->last_ns, memory_order_acquire);
	tokens = atomic_load_explicit(&g->tokens_nt, memory_order_acquire);
	if (now_ns > last && g->refill != LB_TB_REFILL_NONE)
		tokens = lb_tb_refill_nt(tokens, g->capacity_nt, g->rate,
					 now_ns - last);
	return tokens / LB_TB_NT_PER_TOKEN;
}

/* ---- batch size ------------------------------------------------------ */

uint64_t
lb_tb_wavg(const uint64_t *hist, uint32_t x)
{
	unsigned __int128 sum = 0, den;

	if (hist == NULL || x == 0 || x > LB_TB_INTERVALS_MAX)
		return 0;
	/* Claim 12: tar_(i+1) = hist[i] carries weight x - i. */
	for (uint32_t i = 0; i < x; i++)
		sum += (unsigned __int128)hist[i] * (x - i);
	den = (unsigned __int128)x * (x + 1) / 2;
	return (uint64_t)((sum + den - 1) / den);
}

/* ---- local bucket ---------------------------------------------------- */

void
lb_tb_local_conf_default(struct lb_tb_local_conf *conf)
{
	if (conf == NULL)
		return;
	memset(conf, 0, sizeof(*conf));
	conf->interval_ns = LB_TB_DEFAULT_INTERVAL_NS;
	conf->nb_intervals = LB_TB_DEFAULT_INTERVALS;
	conf->batch = LB_TB_BATCH_WAVG;
	conf->demand = LB_TB_DEMAND_SERVED;
	conf->neg = LB_TB_NEG_INTERVAL;
	conf->partial = LB_TB_PARTIAL_KEEP;
	conf->batch_fraction = 0.0625;
	conf->min_batch = 1;
	conf->max_batch = 0;
	conf->neg_hold_ns = LB_TB_DEFAULT_INTERVAL_NS;
}

static int
ns_range_check(uint64_t ns)
{
	if (ns == 0)
		return -EINVAL;
	if (ns < LB_TB_INTERVAL_MIN_NS || ns > LB_TB_INTERVAL_MAX_NS)
		return -ERANGE;
	return 0;
}

int
lb_tb_local_conf_check(const struct lb_tb_local_conf *conf)
{
	int rc;

	if (conf == NULL || conf->nb_intervals == 0 || conf->min_batch == 0)
		return -EINVAL;
	if ((unsigned int)conf->batch > LB_TB_BATCH_FRACTION ||
	    (unsigned int)conf->demand > LB_TB_DEMAND_OFFERED ||
	    (unsigned int)conf->neg > LB_TB_NEG_OFF ||
	    (unsigned int)conf->partial > LB_TB_PARTIAL_NONE)
		return -EINVAL;
	rc = ns_range_check(conf->interval_ns);
	if (rc != 0)
		return rc;
	if (conf->nb_intervals > LB_TB_INTERVALS_MAX ||
	    conf->min_batch > LB_TB_CAPACITY_MAX ||
	    conf->max_batch > LB_TB_CAPACITY_MAX ||
	    (conf->max_batch != 0 && conf->max_batch < conf->min_batch))
		return -ERANGE;
	if (conf->batch == LB_TB_BATCH_FRACTION) {
		if (isnan(conf->batch_fraction))
			return -EINVAL;
		if (!(conf->batch_fraction > 0.0 &&
		      conf->batch_fraction <= 1.0))
			return -ERANGE;
	}
	if (isnan(conf->min_fraction))
		return -EINVAL;
	if (!(conf->min_fraction >= 0.0 && conf->min_fraction <= 1.0))
		return -ERANGE;
	if (conf->neg == LB_TB_NEG_HOLD)
		return ns_range_check(conf->neg_hold_ns);
	return 0;
}

int
lb_tb_local_init(struct lb_tb_local *l, uint64_t key, uint64_t now_ns)
{
	if (l == NULL)
		return -EINVAL;
	memset(l, 0, sizeof(*l));
	l->key = key;
	l->interval_start = now_ns;
	return 0;
}

static void
push_hist(struct lb_tb_local *l, uint64_t demand, uint32_t x)
{
	uint32_t keep = l->nb_hist < x ? l->nb_hist : x - 1;

	memmove(&l->hist[1], &l->hist[0], keep * sizeof(l->hist[0]));
	l->hist[0] = demand;
	l->nb_hist = keep + 1;
}

/*
 * Closes the intervals that ended before now_ns. Quiet intervals enter the
 * history as zero demand, so a key that went idle asks for small batches.
 */
static void
roll_over(struct lb_tb_local *l, const struct lb_tb_local_conf *conf,
	  uint64_t now_ns)
{
	uint64_t k;

	if (now_ns < l->interval_start)
		return;
	k = (now_ns - l->interval_start) / conf->interval_ns;
	if (k == 0)
		return;
	push_hist(l,
		  conf->demand == LB_TB_DEMAND_OFFERED ? l->cur_offered
						       : l->cur_served,
		  conf->nb_intervals);
	for (uint64_t i = 1; i < k && i <= conf->nb_intervals; i++)
		push_hist(l, 0, conf->nb_intervals);
	l->interval_start += k * conf->interval_ns;
	l->cur_served = 0;
	l->cur_offered = 0;
}

uint64_t
lb_tb_local_batch(const struct lb_tb_local *l,
		  const struct lb_tb_local_conf *conf, uint64_t capacity)
{
	uint64_t b;

	if (l == NULL || conf == NULL)
		return 0;
	if (conf->batch == LB_TB_BATCH_FRACTION)
		b = (uint64_t)ceil(conf->batch_fraction * (double)capacity);
	else
		b = lb_tb_wavg(l->hist, l->nb_hist);
	if (conf->batch == LB_TB_BATCH_WAVG && conf->min_fraction > 0.0) {
		uint64_t floor = (uint64_t)ceil(conf->min_fraction *
						(double)capacity);

		b = b > floor ? b : floor;
	}
	if (b < conf->min_batch)
		b = conf->min_batch;
	if (conf->max_batch != 0 && b > conf->max_batch)
		b = conf->max_batch;
	return b < capacity ? b : capacity;
}

static int
admit(struct lb_tb_local *l, uint64_t n)
{
	l->tokens -= n;
	l->cur_served += n;
	l->cnt.admitted++;
	return 0;
}

int
lb_tb_local_take_slow(struct lb_tb_local *l,
		      const struct lb_tb_local_conf *conf,
		      struct lb_tb_global *g, uint64_t n, uint64_t now_ns)
{
	uint64_t capacity, shortage, want, got;

	if (l == NULL || conf == NULL || g == NULL || n == 0)
		return -EINVAL;
	/* The two settings that could fault if never checked. */
	if (conf->interval_ns == 0 || conf->nb_intervals == 0 ||
	    conf->nb_intervals > LB_TB_INTERVALS_MAX)
		return -EINVAL;
	roll_over(l, conf, now_ns);
	if (l->tokens >= n) {
		l->cur_offered += n;
		return admit(l, n);
	}
	capacity = g->capacity_nt / LB_TB_NT_PER_TOKEN;
	if (n > capacity)
		return -ERANGE;
	l->cur_offered += n;
	/* Claims 2-3: a key refused earlier stays throttled locally. */
	if (now_ns < l->neg_until) {
		l->cnt.neg_hits++;
		l->cnt.throttled++;
		return -EAGAIN;
	}
	shortage = n - l->tokens;
	want = lb_tb_local_batch(l, conf, capacity);
	if (want < shortage)
		want = shortage;
	l->last_batch = want;
	got = lb_tb_global_take_range(
		g, conf->partial == LB_TB_PARTIAL_NONE ? shortage : 1, want,
		now_ns);
	l->cnt.borrows++;
	l->cnt.borrowed += got;
	l->tokens += got;
	if (l->tokens >= n)
		return admit(l, n);
	l->cnt.refused++;
	l->cnt.throttled++;
	if (conf->neg == LB_TB_NEG_INTERVAL)
		l->neg_until = l->interval_start + conf->interval_ns;
	else if (conf->neg == LB_TB_NEG_HOLD)
		l->neg_until = now_ns > UINT64_MAX - conf->neg_hold_ns
				       ? UINT64_MAX
				       : now_ns + conf->neg_hold_ns;
	return -EAGAIN;
}

/* ---- per-lcore table with LRU eviction ------------------------------- */

struct lb_tb_table {
	struct lb_tb_local_conf conf;
	uint32_t capacity;
	uint32_t count;
	uint32_t mask;	/* hash slots - 1 */
	uint32_t head;	/* most recently used entry, or LB_ILIST_NIL */
	uint32_t tail;	/* least recently used entry, or LB_ILIST_NIL */
	uint32_t pushes; /* moves to the front (wraps) */
	uint32_t slack;	 /* lb_tb_table_lru_slack() */
	uint32_t *prev; /* LRU links by entry index */
	uint32_t *next;
	uint32_t *slot; /* open addressing: entry index + 1, 0 = empty */
	struct lb_tb_local *ent;
	struct lb_tb_counters gone; /* counters of evicted buckets */
	uint64_t evictions;
};

static uint32_t
key_hash(uint64_t key)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	key *= 0xc4ceb9fe1a85ec53ULL;
	key ^= key >> 33;
	return (uint32_t)key;
}

struct lb_tb_table *
lb_tb_table_create(uint32_t capacity, const struct lb_tb_local_conf *conf)
{
	struct lb_tb_table *t;
	uint32_t nslots = 2;

	if (capacity == 0 || lb_tb_local_conf_check(conf) != 0) {
		errno = EINVAL;
		return NULL;
	}
	if (capacity > LB_TB_TABLE_MAX) {
		errno = ERANGE;
		return NULL;
	}
	/* Load factor <= 1/2 keeps linear probes short. */
	while (nslots < 2 * capacity)
		nslots *= 2;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		goto fail;
	t->conf = *conf;
	t->capacity = capacity;
	t->mask = nslots - 1;
	lb_ilist_init(&t->head, &t->tail);
	t->prev = calloc(capacity, sizeof(*t->prev));
	t->next = calloc(capacity, sizeof(*t->next));
	t->slot = calloc(nslots, sizeof(*t->slot));
	t->ent = aligned_alloc(64,
			       ((sizeof(*t->ent) * capacity + 63) / 64) * 64);
	if (t->prev == NULL || t->next == NULL || t->slot == NULL ||
	    t->ent == NULL)
		goto fail;
	return t;
fail:
	lb_tb_table_free(t);
	errno = ENOMEM;
	return NULL;
}

void
lb_tb_table_free(struct lb_tb_table *t)
{
	if (t == NULL)
		return;
	free(t->prev);
	free(t->next);
	free(t->slot);
	free(t->ent);
	free(t);
}

/* Slot holding key, or the empty slot where it would go. */
static uint32_t
find_slot(const struct lb_tb_table *t, uint64_t key)
{
	uint32_t i = key_hash(key) & t->mask;

	while (t->slot[i] != 0 && t->ent[t->slot[i] - 1].key != key)
		i = (i + 1) & t->mask;
	return i;
}

/* Deletes slot i by shifting back later members of its probe run, so that
 * lookups never need tombstones. */
static void
slot_delete(struct lb_tb_table *t, uint32_t i)
{
	uint32_t j = i, home;

	for (;;) {
		t->slot[i] = 0;
		for (;;) {
			j = (j + 1) & t->mask;
			if (t->slot[j] == 0)
				return;
			home = key_hash(t->ent[t->slot[j] - 1].key) & t->mask;
			/* Entry j may stay if its home lies in (i, j]. */
			if (i <= j ? (i < home && home <= j)
				   : (i < home || home <= j))
				continue;
			break;
		}
		t->slot[i] = t->slot[j];
		i = j;
	}
}

/* The LRU's links: two arrays by entry index. */
static inline struct lb_ilist_links
lru_links(const struct lb_tb_table *t)
{
	return (struct lb_ilist_links){ t->prev, t->next, sizeof(*t->prev) };
}

static void
lru_unlink(struct lb_tb_table *t, uint32_t e)
{
	struct lb_ilist_links l = lru_links(t);

	lb_ilist_unlink(&l, &t->head, &t->tail, e);
}

static void
lru_push_head(struct lb_tb_table *t, uint32_t e)
{
	struct lb_ilist_links l = lru_links(t);

	lb_ilist_push_head(&l, &t->head, &t->tail, e);
	t->ent[e].lru_stamp = ++t->pushes;
}

static void
add_counters(struct lb_tb_counters *to, const struct lb_tb_counters *c)
{
	to->admitted += c->admitted;
	to->throttled += c->throttled;
	to->borrows += c->borrows;
	to->refused += c->refused;
	to->neg_hits += c->neg_hits;
	to->borrowed += c->borrowed;
}

struct lb_tb_local *
lb_tb_table_lookup(struct lb_tb_table *t, uint64_t key)
{
	uint32_t i;

	if (t == NULL)
		return NULL;
	i = find_slot(t, key);
	return t->slot[i] == 0 ? NULL : &t->ent[t->slot[i] - 1];
}

struct lb_tb_local *
lb_tb_table_get(struct lb_tb_table *t, uint64_t key, uint64_t now_ns)
{
	return lb_tb_table_get_ev(t, key, now_ns, NULL);
}

struct lb_tb_local *
lb_tb_table_get_ev(struct lb_tb_table *t, uint64_t key, uint64_t now_ns,
		   struct lb_tb_evicted *ev)
{
	uint32_t i, e;

	if (ev != NULL)
		*ev = (struct lb_tb_evicted){0, 0, 0};
	if (t == NULL)
		return NULL;
	i = find_slot(t, key);
	if (t->slot[i] != 0) {
		e = t->slot[i] - 1;
		/* A bucket moved fewer than slack moves ago is still far
		 * from the tail: leaving it spares the links' cache lines. */
		if (t->head != e &&
		    t->pushes - t->ent[e].lru_stamp >= t->slack) {
			lru_unlink(t, e);
			lru_push_head(t, e);
		}
		return &t->ent[e];
	}
	if (t->count < t->capacity) {
		e = t->count++;
	} else {
		e = t->tail;
		if (ev != NULL)
			*ev = (struct lb_tb_evicted){
				t->ent[e].key, t->ent[e].tokens, 1};
		add_counters(&t->gone, &t->ent[e].cnt);
		t->evictions++;
		lru_unlink(t, e);
		slot_delete(t, find_slot(t, t->ent[e].key));
		/* The deletion may have shifted the new key's slot. */
		i = find_slot(t, key);
	}
	lb_tb_local_init(&t->ent[e], key, now_ns);
	t->slot[i] = e + 1;
	lru_push_head(t, e);
	return &t->ent[e];
}

int
lb_tb_table_take(struct lb_tb_table *t, uint64_t key, struct lb_tb_global *g,
		 uint64_t n, uint64_t now_ns)
{
	struct lb_tb_local *l = lb_tb_table_get(t, key, now_ns);

	if (l == NULL)
		return -EINVAL;
	return lb_tb_local_take(l, &t->conf, g, n, now_ns);
}

uint32_t
lb_tb_table_keys(const struct lb_tb_table *t, uint64_t *keys, uint32_t max)
{
	uint32_t n = 0;

	if (t == NULL || keys == NULL)
		return 0;
	for (uint32_t e = t->head; e != LB_ILIST_NIL && n < max;
	     e = t->next[e])
		keys[n++] = t->ent[e].key;
	return n;
}

uint32_t
lb_tb_table_count(const struct lb_tb_table *t)
{
	return t == NULL ? 0 : t->count;
}

uint64_t
lb_tb_table_counters(const struct lb_tb_table *t, struct lb_tb_counters *out)
{
	if (t == NULL || out == NULL)
		return 0;
	*out = t->gone;
	for (uint32_t e = 0; e < t->count; e++)
		add_counters(out, &t->ent[e].cnt);
	return t->evictions;
}

int
lb_tb_table_lru_slack(struct lb_tb_table *t, uint32_t slack)
{
	if (t == NULL)
		return -EINVAL;
	if (slack >= t->capacity && slack != 0)
		return -ERANGE;
	t->slack = slack;
	return 0;
}
