/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Neighbour table: see dataplane/neigh/neigh.h for the behaviour. Layout: a
 * fixed array of entries; a chained hash index (bucket heads and per-entry
 * next indices); a doubly linked LRU list of the non-static entries (head
 * most recently used); a doubly linked list of the INCOMPLETE entries in
 * the order their next request falls due (every request moves its entry
 * to the tail with now + retrans, and now never runs backwards, so the
 * list stays sorted and lb_neigh_poll() only looks at its head); unused
 * entries on a free list.
 *
 * IPv6 tables (conf.ipv6) index the same 32-bit key, a hash of the
 * address under the table's seed, and keep each entry's whole address
 * beside the entries (addr6[]): a lookup compares both, so two addresses
 * with one key are two entries, never one. The IPv4 functions never read
 * addr6[] (they take NULL for it and are specialised for that).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lb/ilist.h"
#include "neigh.h"
#include "lb/rng.h"

#define ST_FREE 0

struct entry {
	uint32_t ip;
	uint32_t hnext;
	uint32_t lprev, lnext; /* LRU list, or free list (lnext) */
	uint32_t pprev, pnext; /* INCOMPLETE list */
	uint64_t confirmed_ns;
	uint64_t next_ns;
	uint64_t hold[LB_NEIGH_HOLD_MAX];
	uint8_t mac[6];
	uint8_t state;
	uint8_t probes;
	uint8_t nhold;
};

struct lb_neigh {
	uint64_t reachable_ns;
	uint64_t retrans_ns;
	uint64_t failed_ns;
	uint64_t seed;
	uint64_t last_ns;
	uint32_t max_probes;
	uint32_t hold_max;
	lb_neigh_release_cb release;
	void *release_arg;
	uint32_t bmask;
	uint32_t lhead, ltail;
	uint32_t phead, ptail;
	uint32_t free;
	bool busy;
	struct lb_neigh_stats st;
	uint32_t *buckets;
	struct entry *e;
	uint8_t (*addr6)[16]; /* IPv6 tables: each entry's address */
};

/* Handles taken out of an entry, handed to the callback once the table
 * is consistent again. */
struct release {
	uint32_t ip;
	uint8_t n;
	bool ok;
	uint8_t mac[6];
	uint64_t h[LB_NEIGH_HOLD_MAX];
};

static uint64_t
sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t
clamp_now(struct lb_neigh *t, uint64_t now_ns)
{
	if (now_ns > t->last_ns)
		t->last_ns = now_ns;
	return t->last_ns;
}

/* Not 0.0.0.0/8, multicast, class E or broadcast: a neighbour's address
 * (RFC 1122 3.2.1.3). */
static bool
ip_ok(uint32_t be_ip)
{
	const uint8_t *b = (const uint8_t *)&be_ip;

	return b[0] != 0 && b[0] < 224;
}

static bool
mac_ok(const uint8_t *mac)
{
	static const uint8_t zero[6];

	return !(mac[0] & 1) && memcmp(mac, zero, 6) != 0;
}

/* ---- index ---- */

static uint32_t
bucket_of(const struct lb_neigh *t, uint32_t ip)
{
	uint64_t s = ip ^ t->seed;

	return (uint32_t)lb_splitmix64(&s) & t->bmask;
}

/* The entry of key @ip and, in an IPv6 table, address @a6. */
static inline uint32_t
find(const struct lb_neigh *t, uint32_t ip, const uint8_t *a6)
{
	uint32_t i = t->buckets[bucket_of(t, ip)];

	while (i != LB_ILIST_NIL &&
	       (t->e[i].ip != ip ||
		(a6 != NULL && memcmp(t->addr6[i], a6, 16) != 0)))
		i = t->e[i].hnext;
	return i;
}

/* An IPv6 address's key: 32 bits of a hash under the table's seed. */
static uint32_t
key6(const struct lb_neigh *t, const uint8_t *a6)
{
	uint64_t w[2], s;

	memcpy(w, a6, sizeof(w));
	s = w[0] ^ t->seed;
	s = lb_splitmix64(&s) ^ w[1];
	return (uint32_t)lb_splitmix64(&s);
}

/* A neighbour's IPv6 address: not unspecified, loopback, multicast or
 * IPv4-mapped (RFC 4291 2.5.2, 2.5.3, 2.7, 2.5.5.2). */
static bool
ip6_ok(const uint8_t *a6)
{
	static const uint8_t mapped[12] = {[10] = 0xff, [11] = 0xff};
	static const uint8_t zero[15];

	return a6[0] != 0xff && memcmp(a6, mapped, 12) != 0 &&
	       !(memcmp(a6, zero, 15) == 0 && a6[15] <= 1);
}

static void
hash_insert(struct lb_neigh *t, uint32_t i)
{
	uint32_t *b = &t->buckets[bucket_of(t, t->e[i].ip)];

	t->e[i].hnext = *b;
	*b = i;
}

static void
hash_remove(struct lb_neigh *t, uint32_t i)
{
	uint32_t *p = &t->buckets[bucket_of(t, t->e[i].ip)];

	while (*p != i)
		p = &t->e[*p].hnext;
	*p = t->e[i].hnext;
}

/* ---- lists ---- */

/* The LRU list's links, which also chain the free entries (lnext). */
static inline struct lb_ilist_links
lru_links(const struct lb_neigh *t)
{
	return LB_ILIST_LINKS(t->e, lprev, lnext);
}

/* The INCOMPLETE list's links. */
static inline struct lb_ilist_links
pend_links(const struct lb_neigh *t)
{
	return LB_ILIST_LINKS(t->e, pprev, pnext);
}

static void
lru_unlink(struct lb_neigh *t, uint32_t i)
{
	struct lb_ilist_links l = lru_links(t);

	lb_ilist_unlink(&l, &t->lhead, &t->ltail, i);
}

static void
lru_push_head(struct lb_neigh *t, uint32_t i)
{
	struct lb_ilist_links l = lru_links(t);

	lb_ilist_push_head(&l, &t->lhead, &t->ltail, i);
}

static void
lru_push_tail(struct lb_neigh *t, uint32_t i)
{
	struct lb_ilist_links l = lru_links(t);

	lb_ilist_push_tail(&l, &t->lhead, &t->ltail, i);
}

static void
pend_unlink(struct lb_neigh *t, uint32_t i)
{
	struct lb_ilist_links l = pend_links(t);

	lb_ilist_unlink(&l, &t->phead, &t->ptail, i);
}

static void
pend_push_tail(struct lb_neigh *t, uint32_t i)
{
	struct lb_ilist_links l = pend_links(t);

	lb_ilist_push_tail(&l, &t->phead, &t->ptail, i);
}

/* ---- releases ---- */

static void
take_holds(struct entry *e, struct release *r, const uint8_t *mac)
{
	r->ip = e->ip;
	r->n = e->nhold;
	r->ok = mac != NULL;
	if (mac != NULL)
		memcpy(r->mac, mac, 6);
	memcpy(r->h, e->hold, sizeof(r->h));
	e->nhold = 0;
}

static void
give_back(struct lb_neigh *t, struct release *r)
{
	if (r->n == 0)
		return;
	if (r->ok)
		t->st.released += r->n;
	else
		t->st.dropped += r->n;
	t->busy = true;
	for (uint8_t k = 0; k < r->n; k++)
		t->release(t->release_arg, r->ip, r->h[k],
			   r->ok ? r->mac : NULL);
	t->busy = false;
	r->n = 0;
}

/* ---- entry life ---- */

/* Takes @i out of the index and every list; its handles go to @r. */
static void
remove_entry(struct lb_neigh *t, uint32_t i, struct release *r)
{
	struct lb_ilist_links l = lru_links(t);
	struct entry *e = &t->e[i];

	take_holds(e, r, NULL);
	hash_remove(t, i);
	if (e->state == LB_NEIGH_STATIC)
		t->st.statics--;
	else
		lru_unlink(t, i);
	if (e->state == LB_NEIGH_INCOMPLETE)
		pend_unlink(t, i);
	e->state = ST_FREE;
	lb_ilist_stack_push(&l, &t->free, i);
	t->st.entries--;
}

/*
 * A fresh entry for @ip in the index but in no list, evicting the least
 * recently used non-static entry if none is free (its handles go to @r);
 * LB_ILIST_NIL if every entry is static.
 */
static uint32_t
new_entry(struct lb_neigh *t, uint32_t ip, const uint8_t *a6,
	  struct release *r)
{
	struct lb_ilist_links l = lru_links(t);
	struct entry *e;
	uint32_t i;

	if (t->free == LB_ILIST_NIL) {
		if (t->ltail == LB_ILIST_NIL) {
			t->st.full++;
			return LB_ILIST_NIL;
		}
		remove_entry(t, t->ltail, r);
		t->st.evicted++;
	}
	i = lb_ilist_stack_pop(&l, &t->free);
	e = &t->e[i];
	memset(e, 0, sizeof(*e));
	e->ip = ip;
	if (a6 != NULL)
		memcpy(t->addr6[i], a6, 16);
	e->lprev = e->lnext = e->pprev = e->pnext = LB_ILIST_NIL;
	hash_insert(t, i);
	t->st.entries++;
	return i;
}

/* REACHABLE entries turn STALE when their time is up. */
static uint8_t
state_at(const struct lb_neigh *t, const struct entry *e, uint64_t now)
{
	if (e->state == LB_NEIGH_REACHABLE &&
	    now >= sat_add(e->confirmed_ns, t->reachable_ns))
		return LB_NEIGH_STALE;
	return e->state;
}

static void
start_resolving(struct lb_neigh *t, uint32_t i, uint64_t now)
{
	struct entry *e = &t->e[i];

	e->state = LB_NEIGH_INCOMPLETE;
	memset(e->mac, 0, sizeof(e->mac));
	e->probes = 1;
	e->next_ns = sat_add(now, t->retrans_ns);
	pend_push_tail(t, i);
	t->st.requests++;
}

static void
fail(struct lb_neigh *t, uint32_t i, uint64_t now, struct release *r)
{
	struct entry *e = &t->e[i];

	take_holds(e, r, NULL);
	if (e->state == LB_NEIGH_INCOMPLETE)
		pend_unlink(t, i);
	e->state = LB_NEIGH_FAILED;
	memset(e->mac, 0, sizeof(e->mac));
	e->probes = 0;
	e->next_ns = sat_add(now, t->failed_ns);
	t->st.failed++;
}

/* ---- API ---- */

int
lb_neigh_conf_check(const struct lb_neigh_conf *conf)
{
	if (conf == NULL)
		return -EINVAL;
	if (conf->capacity > LB_NEIGH_CAPACITY_MAX ||
	    conf->max_probes > LB_NEIGH_PROBES_MAX ||
	    conf->hold_max > LB_NEIGH_HOLD_MAX ||
	    conf->reachable_ns > LB_NEIGH_TIME_MAX_NS ||
	    conf->retrans_ns > LB_NEIGH_TIME_MAX_NS ||
	    conf->failed_ns > LB_NEIGH_TIME_MAX_NS)
		return -ERANGE;
	return 0;
}

static uint64_t
or_default(uint64_t v, uint64_t def)
{
	return v != 0 ? v : def;
}

struct lb_neigh *
lb_neigh_create(const struct lb_neigh_conf *conf)
{
	static const struct lb_neigh_conf defaults;
	struct lb_ilist_links l;
	struct lb_neigh *t;
	uint32_t cap, nb = 1;
	int rc;

	if (conf == NULL)
		conf = &defaults;
	rc = lb_neigh_conf_check(conf);
	if (rc != 0) {
		errno = -rc;
		return NULL;
	}
	cap = (uint32_t)or_default(conf->capacity, LB_NEIGH_CAPACITY_DEFAULT);
	while (nb < cap)
		nb <<= 1;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		goto nomem;
	t->buckets = malloc(sizeof(*t->buckets) * nb);
	t->e = calloc(cap, sizeof(*t->e));
	if (t->buckets == NULL || t->e == NULL)
		goto nomem;
	if (conf->ipv6) {
		t->addr6 = calloc(cap, sizeof(*t->addr6));
		if (t->addr6 == NULL)
			goto nomem;
	}
	t->reachable_ns =
		or_default(conf->reachable_ns, LB_NEIGH_REACHABLE_DEFAULT_NS);
	t->retrans_ns =
		or_default(conf->retrans_ns, LB_NEIGH_RETRANS_DEFAULT_NS);
	t->failed_ns = or_default(conf->failed_ns, LB_NEIGH_FAILED_DEFAULT_NS);
	t->max_probes =
		(uint32_t)or_default(conf->max_probes, LB_NEIGH_PROBES_DEFAULT);
	t->hold_max = (uint32_t)or_default(conf->hold_max, LB_NEIGH_HOLD_MAX);
	t->seed = conf->hash_seed;
	t->release = conf->release;
	t->release_arg = conf->release_arg;
	t->bmask = nb - 1;
	for (uint32_t b = 0; b < nb; b++)
		t->buckets[b] = LB_ILIST_NIL;
	lb_ilist_init(&t->lhead, &t->ltail);
	lb_ilist_init(&t->phead, &t->ptail);
	l = lru_links(t);
	lb_ilist_stack_fill(&l, &t->free, cap);
	t->st.capacity = cap;
	return t;
nomem:
	lb_neigh_free(t);
	errno = ENOMEM;
	return NULL;
}

void
lb_neigh_free(struct lb_neigh *t)
{
	if (t == NULL)
		return;
	free(t->buckets);
	free(t->e);
	free(t->addr6);
	free(t);
}

/* The functions below by key: @a6 NULL in an IPv4 table, the address
 * of key @ip in an IPv6 one; their callers have checked both. A lookup
 * is on every forwarded packet's path: each caller gets its own copy,
 * so IPv4's compares no address. */
static inline __attribute__((always_inline)) int
lookup(struct lb_neigh *t, uint32_t ip, const uint8_t *a6, uint64_t now_ns,
       uint8_t *mac)
{
	struct release r = {.n = 0};
	struct entry *e;
	uint64_t now;
	uint32_t i;
	int res;

	if (t->busy)
		return -EBUSY;
	now = clamp_now(t, now_ns);
	t->st.lookups++;
	i = find(t, ip, a6);
	if (i == LB_ILIST_NIL) {
		i = new_entry(t, ip, a6, &r);
		if (i == LB_ILIST_NIL) {
			t->st.misses++;
			return -ENOSPC;
		}
		start_resolving(t, i, now);
		lru_push_head(t, i);
		t->st.misses++;
		give_back(t, &r);
		return LB_NEIGH_MISS_SEND;
	}

	e = &t->e[i];
	e->state = state_at(t, e, now);
	switch (e->state) {
	case LB_NEIGH_STALE:
		if (now < e->next_ns) {
			res = LB_NEIGH_HIT;
		} else if (e->probes < t->max_probes) {
			e->probes++;
			e->next_ns = sat_add(now, t->retrans_ns);
			t->st.requests++;
			res = LB_NEIGH_HIT_PROBE;
		} else {
			fail(t, i, now, &r);
			res = LB_NEIGH_MISS_FAILED;
		}
		break;
	case LB_NEIGH_INCOMPLETE:
		if (now < e->next_ns) {
			res = LB_NEIGH_MISS_PENDING;
		} else if (e->probes < t->max_probes) {
			e->probes++;
			e->next_ns = sat_add(now, t->retrans_ns);
			pend_unlink(t, i);
			pend_push_tail(t, i);
			t->st.requests++;
			res = LB_NEIGH_MISS_SEND;
		} else {
			fail(t, i, now, &r);
			res = LB_NEIGH_MISS_FAILED;
		}
		break;
	case LB_NEIGH_FAILED:
		if (now < e->next_ns) {
			res = LB_NEIGH_MISS_FAILED;
		} else {
			start_resolving(t, i, now);
			res = LB_NEIGH_MISS_SEND;
		}
		break;
	default: /* REACHABLE, STATIC */
		res = LB_NEIGH_HIT;
		break;
	}
	if (e->state != LB_NEIGH_STATIC) {
		lru_unlink(t, i);
		lru_push_head(t, i);
	}
	if (res == LB_NEIGH_HIT || res == LB_NEIGH_HIT_PROBE) {
		memcpy(mac, e->mac, 6);
		t->st.hits++;
	} else {
		t->st.misses++;
	}
	give_back(t, &r);
	return res;
}

int
lb_neigh_lookup(struct lb_neigh *t, uint32_t ip, uint64_t now_ns, uint8_t *mac)
{
	if (t == NULL || mac == NULL || !ip_ok(ip) || t->addr6 != NULL)
		return -EINVAL;
	return lookup(t, ip, NULL, now_ns, mac);
}

int
lb_neigh6_lookup(struct lb_neigh *t, const uint8_t *ip6, uint64_t now_ns,
		 uint8_t *mac)
{
	if (t == NULL || ip6 == NULL || mac == NULL || t->addr6 == NULL ||
	    !ip6_ok(ip6))
		return -EINVAL;
	return lookup(t, key6(t, ip6), ip6, now_ns, mac);
}

static inline int
hold(struct lb_neigh *t, uint32_t ip, const uint8_t *a6, uint64_t handle)
{
	struct entry *e;
	uint32_t i;

	if (t->release == NULL)
		return -EINVAL;
	if (t->busy)
		return -EBUSY;
	i = find(t, ip, a6);
	if (i == LB_ILIST_NIL)
		return -ENOENT;
	e = &t->e[i];
	switch (e->state) {
	case LB_NEIGH_INCOMPLETE:
		break;
	case LB_NEIGH_FAILED:
		return -EHOSTUNREACH;
	default:
		return -EEXIST;
	}
	if (e->nhold >= t->hold_max) {
		t->st.hold_overflow++;
		return -ENOSPC;
	}
	e->hold[e->nhold++] = handle;
	t->st.held++;
	return 0;
}

int
lb_neigh_hold(struct lb_neigh *t, uint32_t ip, uint64_t handle)
{
	if (t == NULL || t->addr6 != NULL)
		return -EINVAL;
	return hold(t, ip, NULL, handle);
}

int
lb_neigh6_hold(struct lb_neigh *t, const uint8_t *ip6, uint64_t handle)
{
	if (t == NULL || ip6 == NULL || t->addr6 == NULL)
		return -EINVAL;
	return hold(t, key6(t, ip6), ip6, handle);
}

static int
learn(struct lb_neigh *t, uint32_t ip, const uint8_t *a6, const uint8_t *mac,
      uint64_t now_ns)
{
	struct release r = {.n = 0};
	struct entry *e;
	uint64_t now;
	uint32_t i;

	if (t->busy)
		return -EBUSY;
	now = clamp_now(t, now_ns);
	i = find(t, ip, a6);
	if (i == LB_ILIST_NIL) {
		i = new_entry(t, ip, a6, &r);
		if (i == LB_ILIST_NIL)
			return -ENOSPC;
		lru_push_tail(t, i);
		e = &t->e[i];
	} else {
		e = &t->e[i];
		switch (e->state) {
		case LB_NEIGH_STATIC:
			t->st.static_kept++;
			return -EPERM;
		case LB_NEIGH_INCOMPLETE:
			pend_unlink(t, i);
			take_holds(e, &r, mac);
			t->st.resolved++;
			break;
		case LB_NEIGH_FAILED:
			t->st.resolved++;
			break;
		default:
			if (memcmp(e->mac, mac, 6) != 0)
				t->st.mac_changed++;
			break;
		}
	}
	e->state = LB_NEIGH_REACHABLE;
	memcpy(e->mac, mac, 6);
	e->confirmed_ns = now;
	e->probes = 0;
	e->next_ns = 0;
	t->st.learned++;
	give_back(t, &r);
	return 0;
}

int
lb_neigh_learn(struct lb_neigh *t, uint32_t ip, const uint8_t *mac,
	       uint64_t now_ns)
{
	if (t == NULL || mac == NULL || !ip_ok(ip) || !mac_ok(mac) ||
	    t->addr6 != NULL)
		return -EINVAL;
	return learn(t, ip, NULL, mac, now_ns);
}

int
lb_neigh6_learn(struct lb_neigh *t, const uint8_t *ip6, const uint8_t *mac,
		uint64_t now_ns)
{
	if (t == NULL || ip6 == NULL || mac == NULL || t->addr6 == NULL ||
	    !ip6_ok(ip6) || !mac_ok(mac))
		return -EINVAL;
	return learn(t, key6(t, ip6), ip6, mac, now_ns);
}

static int
set_static(struct lb_neigh *t, uint32_t ip, const uint8_t *a6,
	   const uint8_t *mac)
{
	struct release r = {.n = 0};
	struct entry *e;
	uint32_t i;

	if (t->busy)
		return -EBUSY;
	i = find(t, ip, a6);
	if (i == LB_ILIST_NIL) {
		i = new_entry(t, ip, a6, &r);
		if (i == LB_ILIST_NIL)
			return -ENOSPC;
		e = &t->e[i];
	} else {
		e = &t->e[i];
		if (e->state != LB_NEIGH_STATIC)
			lru_unlink(t, i);
		if (e->state == LB_NEIGH_INCOMPLETE) {
			pend_unlink(t, i);
			take_holds(e, &r, mac);
		}
	}
	if (e->state != LB_NEIGH_STATIC)
		t->st.statics++;
	e->state = LB_NEIGH_STATIC;
	memcpy(e->mac, mac, 6);
	e->probes = 0;
	e->next_ns = 0;
	give_back(t, &r);
	return 0;
}

int
lb_neigh_set_static(struct lb_neigh *t, uint32_t ip, const uint8_t *mac)
{
	if (t == NULL || mac == NULL || !ip_ok(ip) || !mac_ok(mac) ||
	    t->addr6 != NULL)
		return -EINVAL;
	return set_static(t, ip, NULL, mac);
}

int
lb_neigh6_set_static(struct lb_neigh *t, const uint8_t *ip6,
		     const uint8_t *mac)
{
	if (t == NULL || ip6 == NULL || mac == NULL || t->addr6 == NULL ||
	    !ip6_ok(ip6) || !mac_ok(mac))
		return -EINVAL;
	return set_static(t, key6(t, ip6), ip6, mac);
}

static int
delete(struct lb_neigh *t, uint32_t ip, const uint8_t *a6)
{
	struct release r = {.n = 0};
	uint32_t i;

	if (t->busy)
		return -EBUSY;
	i = find(t, ip, a6);
	if (i == LB_ILIST_NIL)
		return -ENOENT;
	remove_entry(t, i, &r);
	give_back(t, &r);
	return 0;
}

int
lb_neigh_delete(struct lb_neigh *t, uint32_t ip)
{
	if (t == NULL || t->addr6 != NULL)
		return -EINVAL;
	return delete(t, ip, NULL);
}

int
lb_neigh6_delete(struct lb_neigh *t, const uint8_t *ip6)
{
	if (t == NULL || ip6 == NULL || t->addr6 == NULL)
		return -EINVAL;
	return delete(t, key6(t, ip6), ip6);
}

int
lb_neigh_flush(struct lb_neigh *t)
{
	int n = 0;

	if (t == NULL)
		return -EINVAL;
	if (t->busy)
		return -EBUSY;
	while (t->lhead != LB_ILIST_NIL) {
		struct release r = {.n = 0};

		remove_entry(t, t->lhead, &r);
		give_back(t, &r);
		n++;
	}
	return n;
}

/* Writes due entry @i's address to @ips or @ips6 at @n. */
static int
poll(struct lb_neigh *t, uint64_t now_ns, uint32_t *ips, uint8_t (*ips6)[16],
     uint32_t max)
{
	uint64_t now;
	uint32_t n = 0;

	if (t->busy)
		return -EBUSY;
	now = clamp_now(t, now_ns);
	while (t->phead != LB_ILIST_NIL && t->e[t->phead].next_ns <= now) {
		uint32_t i = t->phead;
		struct entry *e = &t->e[i];

		if (e->probes < t->max_probes) {
			if (n == max)
				break;
			e->probes++;
			e->next_ns = sat_add(now, t->retrans_ns);
			pend_unlink(t, i);
			pend_push_tail(t, i);
			t->st.requests++;
			if (ips6 != NULL)
				memcpy(ips6[n++], t->addr6[i], 16);
			else
				ips[n++] = e->ip;
		} else {
			struct release r = {.n = 0};

			fail(t, i, now, &r);
			give_back(t, &r);
		}
	}
	return (int)n;
}

int
lb_neigh_poll(struct lb_neigh *t, uint64_t now_ns, uint32_t *ips, uint32_t max)
{
	if (t == NULL || (ips == NULL && max > 0) || t->addr6 != NULL)
		return -EINVAL;
	return poll(t, now_ns, ips, NULL, max);
}

int
lb_neigh6_poll(struct lb_neigh *t, uint64_t now_ns, uint8_t (*ips)[16],
	       uint32_t max)
{
	if (t == NULL || (ips == NULL && max > 0) || t->addr6 == NULL)
		return -EINVAL;
	return poll(t, now_ns, NULL, ips, max);
}

static void
info_of(const struct lb_neigh *t, const struct entry *e, uint64_t now_ns,
	struct lb_neigh_info *out)
{
	uint64_t now = now_ns > t->last_ns ? now_ns : t->last_ns;

	memset(out, 0, sizeof(*out));
	out->state = (enum lb_neigh_state)state_at(t, e, now);
	memcpy(out->mac, e->mac, 6);
	out->probes = e->probes;
	out->held = e->nhold;
	out->confirmed_ns = e->confirmed_ns;
	out->next_ns = e->next_ns;
}

static int
get(const struct lb_neigh *t, uint32_t ip, const uint8_t *a6, uint64_t now_ns,
    struct lb_neigh_info *out)
{
	uint32_t i = find(t, ip, a6);

	if (i == LB_ILIST_NIL)
		return -ENOENT;
	info_of(t, &t->e[i], now_ns, out);
	return 0;
}

int
lb_neigh_get(const struct lb_neigh *t, uint32_t ip, uint64_t now_ns,
	     struct lb_neigh_info *out)
{
	if (t == NULL || out == NULL || t->addr6 != NULL)
		return -EINVAL;
	return get(t, ip, NULL, now_ns, out);
}

int
lb_neigh6_get(const struct lb_neigh *t, const uint8_t *ip6, uint64_t now_ns,
	      struct lb_neigh_info *out)
{
	if (t == NULL || ip6 == NULL || out == NULL || t->addr6 == NULL)
		return -EINVAL;
	return get(t, key6(t, ip6), ip6, now_ns, out);
}

int
lb_neigh_stats(const struct lb_neigh *t, struct lb_neigh_stats *out)
{
	if (t == NULL || out == NULL)
		return -EINVAL;
	*out = t->st;
	return 0;
}

int
lb_neigh_walk(const struct lb_neigh *t, uint64_t now_ns, lb_neigh_walk_cb cb,
	      void *arg)
{
	struct lb_neigh_info info;
	int n = 0;

	if (t == NULL || cb == NULL)
		return -EINVAL;
	for (uint32_t i = 0; i < t->st.capacity; i++) {
		const struct entry *e = &t->e[i];

		if (e->state == ST_FREE)
			continue;
		info_of(t, e, now_ns, &info);
		cb(arg, t->addr6 != NULL ? t->addr6[i] : (const uint8_t *)&e->ip,
		   &info);
		n++;
	}
	return n;
}
