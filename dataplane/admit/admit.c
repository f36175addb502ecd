/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "lb/admit.h"

/* used_ns is refreshed at most this often, so that a steady key does not
 * write to the entry's second cache line on every borrow. */
#define USED_REFRESH_NS (1000000000ULL / 8)
/* Borrowers wait this many polls for an entry another thread is setting
 * up (a few stores) before they give up and admit without a bucket. */
#define BUSY_SPINS 100000u

struct lb_admit_lc {
	struct lb_admit_shm *sh;
	struct lb_tb_table *tbl;
	struct lb_tb_local_conf lconf;
	uint32_t nb_local;
	struct lb_admit_stats *st;
	struct lb_admit_svc_stats *svc_st;
	uint32_t nb_svc;
	/* The last check's service part of the key and its bucket: a
	 * steady key skips the mixing and the table's lookup. The bucket
	 * of the last key is the table's most recently used one, so no
	 * other check can have replaced it in between. */
	struct lb_admit_conf last_c;
	uint16_t last_svc;
	uint64_t last_base;
	uint64_t last_key;
	struct lb_tb_local *last_l;
	/* The key of the service's overflow bucket (last_base's). */
	uint64_t last_ovf;
	/* Stands in for the global bucket when the negative cache answers:
	 * lb_tb_local_take() decides before it would ever ask this one. */
	struct lb_tb_global neg_only;
};

/* ---- keys ------------------------------------------------------------- */

static uint64_t
mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/* Key material no client, prefix or rank can have: the overflow bucket. */
#define OVF_MATERIAL (1ULL << 32)

/* The key's part that depends on the table's secret, the service and its
 * settings only. */
static uint64_t
key_base(const uint64_t secret[2], uint16_t svc, const struct lb_admit_conf *c)
{
	uint64_t scope = (uint64_t)svc + 1, x;

	/* client and prefix keys are shared by every service with the same
	 * settings; the others belong to one service (scope = slot + 1). */
	if (c->key == LB_ADMIT_KEY_CLIENT || c->key == LB_ADMIT_KEY_PREFIX)
		scope = 0;
	x = mix(secret[0] ^ c->rate);
	x = mix(x ^ c->burst);
	return mix(x ^ ((uint64_t)c->key | (uint64_t)c->prefix << 8 |
			(uint64_t)c->cluster << 16 | scope << 24 |
			(uint64_t)c->prefix6 << 48));
}

/* The key material of a check: client, its prefix, or the rank. */
static inline uint64_t
key_material(const struct lb_admit_conf *c, uint32_t client, uint8_t prio)
{
	switch (c->key) {
	case LB_ADMIT_KEY_CLIENT:
	case LB_ADMIT_KEY_CLIENT_SVC:
		return client;
	case LB_ADMIT_KEY_PREFIX:
		return c->prefix >= 32 ? client
				       : client & ~(UINT32_MAX >> c->prefix);
	case LB_ADMIT_KEY_PRIO:
		return prio;
	default:
		return 0;
	}
}

/*
 * The key material of an IPv6 client, or of its prefix of prefix6 bits
 * (default /64): both halves keyed with the table's secret, so nobody
 * can pick an address whose material equals another's, and the top bit
 * set, so it is never an IPv4 client's, prefix's or rank's material
 * (below 2^32) nor the overflow bucket's. Client and prefix buckets are
 * shared between services of either family with the same settings.
 */
static inline uint64_t
key_material6(const uint64_t secret[2], const struct lb_admit_conf *c,
	      const uint8_t ip[16], uint8_t prio)
{
	uint64_t h = 0, l = 0;
	uint8_t k[16];

	/* The key a reject record names (lb/fb.h) is this one. */
	if (lb_admit_key6(c, ip, k) == 0)
		return c->key == LB_ADMIT_KEY_PRIO ? prio : 0;
	for (unsigned int i = 0; i < 8; i++) {
		h = h << 8 | k[i];
		l = l << 8 | k[8 + i];
	}
	return mix(mix(secret[1] ^ h) ^ l) | 1ULL << 63;
}

/* Two rounds, each keyed (the base carries secret[0]; @p k1 is
 * secret[1]): a client who knows the mixer but not the secret cannot pick
 * addresses whose keys share slots. */
static inline uint64_t
key_final(uint64_t base, uint64_t k1, uint64_t m)
{
	uint64_t x = mix(mix(base ^ m) ^ k1) & ~LB_ADMIT_BUSY;

	return x != 0 ? x : 1;
}

uint64_t
lb_admit_key_of(const struct lb_admit_shm *sh, uint16_t svc,
		const struct lb_admit_conf *c, uint32_t client, uint8_t prio)
{
	static const uint64_t none[2];
	const uint64_t *sec = sh != NULL ? sh->secret : none;

	return key_final(key_base(sec, svc, c), sec[1],
			 key_material(c, client, prio));
}

/* ---- shared table ----------------------------------------------------- */

uint64_t
lb_admit_shm_size(uint32_t nb_slots)
{
	if (nb_slots == 0 || (nb_slots & (nb_slots - 1)) != 0 ||
	    nb_slots > (1u << 24))
		return 0;
	return sizeof(struct lb_admit_shm) +
	       ((uint64_t)nb_slots + LB_ADMIT_OVF_SLOTS) *
		       sizeof(struct lb_admit_gent);
}

struct lb_admit_shm *
lb_admit_shm_init(void *mem, uint32_t nb_slots)
{
	uint64_t sz = lb_admit_shm_size(nb_slots);
	struct lb_admit_shm *sh = mem;

	if (mem == NULL || sz == 0) {
		errno = EINVAL;
		return NULL;
	}
	memset(mem, 0, sz);
	sh->nb_slots = nb_slots;
	/* A constant would let anyone compute which clients collide. */
	if (getrandom(sh->secret, sizeof(sh->secret), 0) !=
	    (ssize_t)sizeof(sh->secret)) {
		if (errno == 0)
			errno = EIO;
		return NULL;
	}
	atomic_thread_fence(memory_order_release);
	return sh;
}

struct lb_admit_gent *
lb_admit_shm_find(struct lb_admit_shm *sh, uint64_t key)
{
	uint32_t mask, home;

	if (sh == NULL || key == 0)
		return NULL;
	mask = sh->nb_slots - 1;
	home = (uint32_t)key & mask;
	for (uint32_t i = 0; i < LB_ADMIT_PROBES && i <= mask; i++) {
		struct lb_admit_gent *e = &sh->ent[(home + i) & mask];
		uint64_t k =
			atomic_load_explicit(&e->key, memory_order_acquire);

		if (k == key)
			return e;
		if (k == 0)
			return NULL;
	}
	return NULL;
}

/* An entry may be given to another key once its bucket would have filled
 * up again since its last borrow: the old key then starts from a full
 * bucket wherever it lands, exactly as if it had kept the slot. */
static int
reusable(const struct lb_admit_gent *e, uint64_t now_ns)
{
	uint64_t used = atomic_load_explicit(&e->used_ns, memory_order_relaxed);
	uint64_t idle = e->b.fill_ns > LB_ADMIT_IDLE_MIN_NS
				? e->b.fill_ns
				: LB_ADMIT_IDLE_MIN_NS;

	return now_ns > used && now_ns - used >= idle;
}

/* @p local: refilled here at the rate even on a cluster service (the
 * overflow bucket, which lb-control does not feed). */
static void
setup(struct lb_admit_gent *e, uint64_t key, uint16_t svc,
      const struct lb_admit_conf *c, uint32_t client, uint64_t now_ns,
      bool local)
{
	struct lb_tb_global_conf gc = {
		.capacity = lb_admit_burst(c),
		.rate = c->rate,
		.threshold = 0,
		.refill = c->cluster != LB_ADMIT_CLUSTER_OFF && !local
				  ? LB_TB_REFILL_NONE
				  : LB_TB_REFILL_EACH,
	};

	/* The settings were checked when configured; an invalid one leaves
	 * a bucket that never dispenses rather than a wild one. */
	if (lb_tb_global_init(&e->b, &gc, now_ns) != 0)
		memset(&e->b, 0, sizeof(e->b));
	/* A cluster bucket holds only what lb-control borrowed for it. */
	if (gc.refill == LB_TB_REFILL_NONE)
		atomic_store_explicit(&e->b.tokens_nt, 0, memory_order_relaxed);
	e->client = client;
	e->svc = svc;
	e->cls = c->key;
	e->cluster = local ? LB_ADMIT_CLUSTER_OFF : c->cluster;
	atomic_store_explicit(&e->flags, 0, memory_order_relaxed);
	atomic_store_explicit(&e->used_ns, now_ns, memory_order_relaxed);
	atomic_store_explicit(&e->key, key, memory_order_release);
}

/* Waits out another thread's set-up of slot e; returns the key it got. */
static uint64_t
wait_ready(struct lb_admit_gent *e, uint64_t k)
{
	for (uint32_t n = 0; (k & LB_ADMIT_BUSY) != 0 && n < BUSY_SPINS; n++)
		k = atomic_load_explicit(&e->key, memory_order_acquire);
	return k;
}

struct lb_admit_gent *
lb_admit_shm_get(struct lb_admit_shm *sh, uint64_t key, uint16_t svc,
		 const struct lb_admit_conf *c, uint32_t client,
		 uint64_t now_ns, uint64_t *atomics)
{
	struct lb_admit_gent *e;
	uint32_t mask, home;
	uint64_t k;

	if (sh == NULL || c == NULL || key == 0 || (key & LB_ADMIT_BUSY))
		return NULL;
	mask = sh->nb_slots - 1;
	home = (uint32_t)key & mask;
	/* First look for the key along its whole probe range, so that an
	 * idle slot before it is not taken for a second copy of it. */
	for (uint32_t i = 0; i < LB_ADMIT_PROBES && i <= mask; i++) {
		e = &sh->ent[(home + i) & mask];
		k = atomic_load_explicit(&e->key, memory_order_acquire);
		if (k == (key | LB_ADMIT_BUSY))
			k = wait_ready(e, k);
		if (k == key)
			return e;
		if (k == 0)
			break;
	}
	for (uint32_t i = 0; i < LB_ADMIT_PROBES && i <= mask; i++) {
		e = &sh->ent[(home + i) & mask];
		k = atomic_load_explicit(&e->key, memory_order_acquire);
		for (;;) {
			if ((k & LB_ADMIT_BUSY) != 0)
				k = wait_ready(e, k);
			if (k == key)
				return e;
			if ((k & LB_ADMIT_BUSY) != 0 ||
			    (k != 0 && !reusable(e, now_ns)))
				break;
			/* Empty or idle: claim it for set-up. */
			if (atomics != NULL)
				(*atomics)++;
			if (atomic_compare_exchange_strong_explicit(
				    &e->key, &k, key | LB_ADMIT_BUSY,
				    memory_order_acq_rel,
				    memory_order_acquire)) {
				setup(e, key, svc, c, client, now_ns, false);
				return e;
			}
		}
	}
	return NULL;
}

struct lb_admit_gent *
lb_admit_shm_overflow(struct lb_admit_shm *sh, uint16_t svc,
		      const struct lb_admit_conf *c, uint64_t now_ns,
		      uint64_t *atomics)
{
	struct lb_admit_gent *e;
	uint64_t key, k;

	if (sh == NULL || c == NULL)
		return NULL;
	key = key_final(key_base(sh->secret, svc, c), sh->secret[1],
			OVF_MATERIAL);
	e = &sh->ent[sh->nb_slots + svc % LB_ADMIT_OVF_SLOTS];
	k = atomic_load_explicit(&e->key, memory_order_acquire);
	if ((k & LB_ADMIT_BUSY) != 0)
		k = wait_ready(e, k);
	if (k == key)
		return e;
	if ((k & LB_ADMIT_BUSY) != 0)
		return NULL;
	/* Empty, or made for the service's former settings: start over. */
	if (atomics != NULL)
		(*atomics)++;
	if (!atomic_compare_exchange_strong_explicit(
		    &e->key, &k, key | LB_ADMIT_BUSY, memory_order_acq_rel,
		    memory_order_acquire))
		return k == key ? e : NULL;
	setup(e, key, svc, c, 0, now_ns, true);
	return e;
}

/* ---- one worker ------------------------------------------------------- */

struct lb_admit_lc *
lb_admit_lc_create(struct lb_admit_shm *sh, uint32_t nb_local,
		   struct lb_admit_stats *st, struct lb_admit_svc_stats *svc_st,
		   uint32_t nb_svc)
{
	struct lb_tb_global_conf gc = {.capacity = 1, .rate = 1};
	struct lb_admit_lc *lc;

	if (sh == NULL || st == NULL || nb_local == 0 ||
	    (svc_st == NULL && nb_svc != 0)) {
		errno = EINVAL;
		return NULL;
	}
	lc = calloc(1, sizeof(*lc));
	if (lc == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	lb_tb_local_conf_default(&lc->lconf);
	/* The seed's batch and negative cache over a short interval: a
	 * refused key waits at most 10 ms before it asks again. */
	lc->lconf.interval_ns = LB_ADMIT_INTERVAL_NS;
	lc->lconf.min_fraction = LB_ADMIT_BATCH_FLOOR;
	lc->tbl = lb_tb_table_create(nb_local, &lc->lconf);
	if (lc->tbl == NULL) {
		int err = errno;

		free(lc);
		errno = err;
		return NULL;
	}
	/* Approximately LRU: a bucket moves to the front at most once per
	 * quarter of the table's moves, so that a worker seeing each of
	 * many keys now and then does not rewrite three links per check. */
	lb_tb_table_lru_slack(lc->tbl, nb_local / 4);
	lb_tb_global_init(&lc->neg_only, &gc, 0);
	lc->sh = sh;
	lc->nb_local = nb_local;
	lc->st = st;
	lc->svc_st = svc_st;
	lc->nb_svc = nb_svc;
	return lc;
}

void
lb_admit_lc_free(struct lb_admit_lc *lc)
{
	if (lc == NULL)
		return;
	lb_tb_table_free(lc->tbl);
	free(lc);
}

uint32_t
lb_admit_lc_keys(const struct lb_admit_lc *lc)
{
	return lc == NULL ? 0 : lb_tb_table_count(lc->tbl);
}

/*
 * A replaced local bucket's unspent tokens go back to its global bucket:
 * batches are a share of the burst, and dropping them would lower the
 * rate of a key that an eviction hits often (a flood of new sources). The
 * entry may meanwhile serve another key only after it filled up again,
 * when the deposit is capped away.
 */
static void
give_back(struct lb_admit_lc *lc, const struct lb_tb_evicted *ev)
{
	struct lb_admit_gent *e = lb_admit_shm_find(lc->sh, ev->key);

	if (e == NULL)
		return;
	lb_tb_global_deposit(&e->b, ev->tokens);
	lc->st->shm_atomics++;
}

/* A local bucket's borrow from global bucket @p e and its accounting. */
static enum lb_admit_verdict
take_from(struct lb_admit_lc *lc, struct lb_tb_local *l,
	  struct lb_admit_gent *e, uint64_t now_ns)
{
	uint64_t borrows = l->cnt.borrows, got = l->cnt.borrowed, used;
	int rc;

	rc = lb_tb_local_take(l, &lc->lconf, &e->b, 1, now_ns);
	if (l->cnt.borrows != borrows) {
		lc->st->borrows++;
		lc->st->borrowed += l->cnt.borrowed - got;
		/* One compare-and-swap on the tokens, and one on the refill
		 * clock when the bucket refills itself. */
		lc->st->shm_atomics += e->cluster ? 1 : 2;
		used = atomic_load_explicit(&e->used_ns, memory_order_relaxed);
		if (now_ns > used + USED_REFRESH_NS)
			atomic_store_explicit(&e->used_ns, now_ns,
					      memory_order_relaxed);
	}
	if (rc == 0)
		return LB_ADMIT_PASS;
	if (atomic_load_explicit(&e->flags, memory_order_relaxed) &
	    LB_ADMIT_F_CLUSTER_DOWN)
		return LB_ADMIT_REJ_CLUSTER;
	return LB_ADMIT_REJ_EMPTY;
}

/* What lb_tb_table_get_ev() replaced: counted, its tokens given back. */
static void
replaced(struct lb_admit_lc *lc, const struct lb_tb_evicted *ev)
{
	if (!ev->replaced)
		return;
	lc->st->evictions++;
	if (ev->tokens != 0)
		give_back(lc, ev);
}

/*
 * A check whose key has no slot in the shared table: the service says
 * what that means. With `overflow`, the worker keeps one local bucket for
 * the service's overflow bucket, as for any other key: every key without
 * a slot takes from it, and borrows, negative cache included, are the
 * overflow bucket's, not one per key.
 */
static enum lb_admit_verdict
no_slot(struct lb_admit_lc *lc, uint16_t svc, const struct lb_admit_conf *c,
	uint64_t now_ns)
{
	struct lb_admit_gent *e;
	struct lb_tb_evicted ev;
	struct lb_tb_local *lo;

	lc->st->table_full++;
	if (svc < lc->nb_svc)
		lc->svc_st[svc].table_full++;
	if (c->full == LB_ADMIT_FULL_OPEN)
		return LB_ADMIT_PASS_FULL;
	if (c->full != LB_ADMIT_FULL_OVERFLOW)
		return LB_ADMIT_REJ_FULL;
	lo = lb_tb_table_get_ev(lc->tbl, lc->last_ovf, now_ns, &ev);
	replaced(lc, &ev);
	/* lo may have taken the place of the checked key's bucket. */
	lc->last_key = 0;
	if (lo->tokens >= 1) {
		lb_tb_local_take(lo, &lc->lconf, &lc->neg_only, 1, now_ns);
		return LB_ADMIT_PASS;
	}
	if (now_ns < lo->neg_until) {
		lb_tb_local_take(lo, &lc->lconf, &lc->neg_only, 1, now_ns);
		return LB_ADMIT_REJ_NEG;
	}
	e = lb_admit_shm_overflow(lc->sh, svc, c, now_ns,
				  &lc->st->shm_atomics);
	if (e == NULL)
		return LB_ADMIT_REJ_FULL;
	return take_from(lc, lo, e, now_ns);
}

/* No-slot marks (lb_tb_local.tag): coarse time, 2^24 ns units, odd so
 * never 0. A marked key looks for a slot again after SLOT_RETRY units
 * (2.1 s), when idle entries may have become reusable. */
#define SLOT_SHIFT 24
#define SLOT_RETRY 128u

static inline uint32_t
slot_mark(uint64_t now_ns)
{
	return (uint32_t)(now_ns >> SLOT_SHIFT) | 1u;
}

/* The shortage path: ask the key's global bucket for a batch. */
static enum lb_admit_verdict
borrow(struct lb_admit_lc *lc, struct lb_tb_local *l, uint16_t svc,
       const struct lb_admit_conf *c, uint32_t client, uint64_t key,
       uint64_t now_ns)
{
	struct lb_admit_gent *e;

	e = lb_admit_shm_get(lc->sh, key, svc, c, client, now_ns,
			     &lc->st->shm_atomics);
	if (e == NULL) {
		/* Every slot of the key's probe range is busy (a flood of
		 * new keys): remembered, so that the next checks of the
		 * key do not probe the shared table again. */
		l->tag = slot_mark(now_ns);
		return no_slot(lc, svc, c, now_ns);
	}
	return take_from(lc, l, e, now_ns);
}

/* The service's key base, kept while checks come for the same service
 * and settings (a burst's flows mostly do). */
static inline void
base_of(struct lb_admit_lc *lc, uint16_t svc, const struct lb_admit_conf *c)
{
	if (svc != lc->last_svc || !lb_admit_conf_eq(c, &lc->last_c)) {
		lc->last_svc = svc;
		lc->last_c = *c;
		lc->last_base = key_base(lc->sh->secret, svc, c);
		lc->last_ovf = key_final(lc->last_base, lc->sh->secret[1],
					 OVF_MATERIAL);
		lc->last_key = 0;
	}
}

/* A check whose key material @p m is known; @p client is what the
 * shared entry records of it. */
static inline enum lb_admit_verdict
check(struct lb_admit_lc *lc, uint16_t svc, const struct lb_admit_conf *c,
      uint64_t m, uint32_t client, uint64_t now_ns)
{
	enum lb_admit_verdict v;
	struct lb_tb_local *l;
	struct lb_tb_evicted ev;
	uint64_t key;
	uint8_t cls;

	cls = c->key < LB_ADMIT_KEY_MAX ? c->key : LB_ADMIT_KEY_SVC;
	key = key_final(lc->last_base, lc->sh->secret[1], m);
	if (key == lc->last_key) {
		l = lc->last_l;
	} else {
		l = lb_tb_table_get_ev(lc->tbl, key, now_ns, &ev);
		replaced(lc, &ev);
		lc->last_key = key;
		lc->last_l = l;
	}
	if (l->tag != 0 && (uint32_t)(slot_mark(now_ns) - l->tag) <
				   SLOT_RETRY) {
		v = no_slot(lc, svc, c, now_ns);
	} else if (l->tokens >= 1) {
		/* Tokens at hand: no shared memory touched, even when the
		 * interval ended (the slow path closes it and admits from
		 * the tokens before it would ask neg_only). */
		lb_tb_local_take(l, &lc->lconf, &lc->neg_only, 1, now_ns);
		v = LB_ADMIT_PASS;
	} else if (now_ns < l->neg_until) {
		/* Claims 2-3: still throttled; the global bucket is not
		 * asked (neg_only is never reached). */
		lb_tb_local_take(l, &lc->lconf, &lc->neg_only, 1, now_ns);
		v = LB_ADMIT_REJ_NEG;
	} else {
		l->tag = 0;
		v = borrow(lc, l, svc, c, client, key, now_ns);
	}
	lc->st->n[cls][v]++;
	if (svc < lc->nb_svc)
		lc->svc_st[svc].n[v]++;
	return v;
}

enum lb_admit_verdict
lb_admit_check(struct lb_admit_lc *lc, uint16_t svc,
	       const struct lb_admit_conf *c, uint32_t client, uint8_t prio,
	       uint64_t now_ns)
{
	if (lc == NULL || c == NULL || c->rate == 0)
		return LB_ADMIT_PASS;
	base_of(lc, svc, c);
	return check(lc, svc, c, key_material(c, client, prio), client,
		     now_ns);
}

enum lb_admit_verdict
lb_admit_check6(struct lb_admit_lc *lc, uint16_t svc,
		const struct lb_admit_conf *c, const uint8_t client[16],
		uint8_t prio, uint64_t now_ns)
{
	uint64_t m;

	if (lc == NULL || c == NULL || c->rate == 0 || client == NULL)
		return LB_ADMIT_PASS;
	base_of(lc, svc, c);
	m = key_material6(lc->sh->secret, c, client, prio);
	return check(lc, svc, c, m, (uint32_t)m, now_ns);
}
