/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "lb/flow_table.h"
#include "lb/ilist.h"

#define SLOT_EMPTY UINT64_MAX
#define CACHE_LINE 64

/* LB_TCP_* of pkt_parse.h; repeated so this module needs no other header. */
#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_ACK 0x10

_Static_assert(sizeof(struct lb_flow_key) == 16, "key is hashed as 16 B");
_Static_assert(sizeof(struct lb_flow) == CACHE_LINE, "one line per flow");
/* lb_flow_key_set_mark() writes a key as two little-endian words. */
_Static_assert(offsetof(struct lb_flow_key, dst) == 4 &&
		       offsetof(struct lb_flow_key, sport) == 8 &&
		       offsetof(struct lb_flow_key, dport) == 10 &&
		       offsetof(struct lb_flow_key, proto) == 12 &&
		       offsetof(struct lb_flow_key, pad) == 13,
	       "key layout of lb_flow_key_set_mark()");
_Static_assert(LB_FLOW_NONE == LB_ILIST_NIL, "a list's end is no flow");
_Static_assert(LB_FLOW_TIMEOUT_MAX_NS >> LB_FLOW_TICK_SHIFT < (1u << 31),
	       "timeouts must stay comparable as signed tick differences");

#define NS(s) ((uint64_t)(s) * 1000000000ULL)

static const struct lb_flow_timeouts presets[] = {
	/* net/netfilter/ipvs/ip_vs_proto_tcp.c and ip_vs_proto_udp.c:
	 * CLOSING takes FIN_WAIT and CLOSED takes CLOSE; OTHER takes the
	 * conntrack ICMP timeout (nf_conntrack_proto_icmp.c), UDP_UNREPLIED
	 * conntrack's UDP timeout before a reply (nf_conntrack_proto_udp.c),
	 * since IPVS keeps one UDP timeout whatever the backend did. */
	[LB_FLOW_TIMEOUTS_IPVS] = { {
		[LB_FLOW_SYN_SENT] = NS(120),
		[LB_FLOW_SYN_RECV] = NS(60),
		[LB_FLOW_ESTABLISHED] = NS(900),
		[LB_FLOW_CLOSING] = NS(120),
		[LB_FLOW_TIME_WAIT] = NS(120),
		[LB_FLOW_CLOSED] = NS(10),
		[LB_FLOW_UDP] = NS(300),
		[LB_FLOW_OTHER] = NS(30),
		[LB_FLOW_UDP_UNREPLIED] = NS(30),
	} },
	/* DPVS src/ipvs/ip_vs_proto_tcp.c and ip_vs_proto_udp.c; DPVS too
	 * has one UDP timeout, so UDP_UNREPLIED is conntrack's as above. */
	[LB_FLOW_TIMEOUTS_DPVS] = { {
		[LB_FLOW_SYN_SENT] = NS(3),
		[LB_FLOW_SYN_RECV] = NS(30),
		[LB_FLOW_ESTABLISHED] = NS(90),
		[LB_FLOW_CLOSING] = NS(7),
		[LB_FLOW_TIME_WAIT] = NS(7),
		[LB_FLOW_CLOSED] = NS(3),
		[LB_FLOW_UDP] = NS(300),
		[LB_FLOW_OTHER] = NS(30),
		[LB_FLOW_UDP_UNREPLIED] = NS(30),
	} },
};

static const char *const state_names[LB_FLOW_NB_STATES] = {
	[LB_FLOW_SYN_SENT] = "syn_sent",
	[LB_FLOW_SYN_RECV] = "syn_recv",
	[LB_FLOW_ESTABLISHED] = "established",
	[LB_FLOW_CLOSING] = "closing",
	[LB_FLOW_TIME_WAIT] = "time_wait",
	[LB_FLOW_CLOSED] = "closed",
	[LB_FLOW_UDP] = "udp",
	[LB_FLOW_OTHER] = "other",
	[LB_FLOW_UDP_UNREPLIED] = "udp_unreplied",
};

int
lb_flow_timeouts_preset(struct lb_flow_timeouts *to,
			enum lb_flow_timeout_preset p)
{
	if (to == NULL ||
	    (unsigned int)p >= sizeof(presets) / sizeof(presets[0]))
		return -EINVAL;
	*to = presets[p];
	return 0;
}

const char *
lb_flow_state_name(unsigned int state)
{
	if (state == LB_FLOW_FREE)
		return "free";
	return state < LB_FLOW_NB_STATES ? state_names[state] : "?";
}

static uint32_t
tick(uint64_t now_ns)
{
	return (uint32_t)(now_ns >> LB_FLOW_TICK_SHIFT);
}

static int
check_timeout(uint64_t ns)
{
	if (ns == 0)
		return -EINVAL;
	return ns > LB_FLOW_TIMEOUT_MAX_NS ? -ERANGE : 0;
}

/* Rounded up, so a flow never expires before its timeout has passed. */
static uint32_t
timeout_ticks(uint64_t ns)
{
	return (uint32_t)((ns + (1ULL << LB_FLOW_TICK_SHIFT) - 1) >>
			  LB_FLOW_TICK_SHIFT);
}

static uint32_t
nb_slots(uint32_t capacity)
{
	uint64_t want = (uint64_t)capacity * LB_FLOW_SLOTS_PER_FLOW;
	uint64_t n = 1;

	while (n < want)
		n <<= 1;
	return (uint32_t)n;
}

static size_t
header_size(void)
{
	return (sizeof(struct lb_flow_table) + CACHE_LINE - 1) &
	       ~(size_t)(CACHE_LINE - 1);
}

size_t
lb_flow_table_mem_size(uint32_t capacity)
{
	if (capacity == 0 || capacity > LB_FLOW_MAX_CAPACITY)
		return 0;
	return header_size() + (size_t)capacity * sizeof(struct lb_flow) +
	       (size_t)nb_slots(capacity) * sizeof(uint64_t);
}

static int
check_timeouts(const struct lb_flow_timeouts *to)
{
	for (unsigned int s = 0; s < LB_FLOW_NB_STATES; s++) {
		int rc = check_timeout(to->ns[s]);

		if (rc < 0)
			return rc;
	}
	return 0;
}

int
lb_flow_table_init(void *mem, uint32_t capacity,
		   const struct lb_flow_timeouts *to, uint64_t seed)
{
	struct lb_flow_table *t = mem;
	struct lb_ilist_links links;
	struct lb_flow *flows;
	uint32_t slots;
	int rc;

	if (mem == NULL || (uintptr_t)mem % CACHE_LINE != 0 ||
	    lb_flow_table_mem_size(capacity) == 0)
		return -EINVAL;
	if (to == NULL)
		to = &presets[LB_FLOW_TIMEOUTS_IPVS];
	rc = check_timeouts(to);
	if (rc < 0)
		return rc;

	slots = nb_slots(capacity);
	memset(t, 0, header_size());
	t->seed = seed;
	t->capacity = capacity;
	t->slot_mask = slots - 1;
	t->flows_off = header_size();
	t->slots_off = t->flows_off + (uint64_t)capacity * sizeof(*flows);
	t->mem_size = lb_flow_table_mem_size(capacity);
	t->magic = LB_FLOW_TABLE_MAGIC;
	t->version = LB_FLOW_TABLE_VERSION;
	/* Every class starts with the table's own timeouts. */
	for (unsigned int l = 0; l < LB_FLOW_NB_LISTS; l++) {
		t->timeout[l] = timeout_ticks(to->ns[l % LB_FLOW_NB_STATES]);
		lb_ilist_init(&t->head[l], &t->tail[l]);
	}

	/* Free list in index order, so the first flows share cache lines. */
	flows = lb_flow_entries(t);
	for (uint32_t i = 0; i < capacity; i++) {
		memset(&flows[i], 0, sizeof(flows[i]));
		flows[i].state = LB_FLOW_FREE;
		flows[i].prev = LB_FLOW_NONE;
	}
	links = LB_ILIST_LINKS(flows, prev, next);
	lb_ilist_stack_fill(&links, &t->free_head, capacity);
	memset(lb_flow_slots(t), 0xff, (size_t)slots * sizeof(uint64_t));
	return 0;
}

struct lb_flow_table *
lb_flow_table_create(uint32_t capacity, const struct lb_flow_timeouts *to,
		     uint64_t seed)
{
	size_t size = lb_flow_table_mem_size(capacity);
	struct lb_flow_table *t;
	int rc;

	if (size == 0) {
		errno = EINVAL;
		return NULL;
	}
	/* aligned_alloc wants a multiple of the alignment; size is one. */
	t = aligned_alloc(CACHE_LINE, size);
	if (t == NULL)
		return NULL;
	rc = lb_flow_table_init(t, capacity, to, seed);
	if (rc < 0) {
		free(t);
		errno = -rc;
		return NULL;
	}
	return t;
}

void
lb_flow_table_free(struct lb_flow_table *t)
{
	free(t);
}

int
lb_flow_table_check(const void *mem, size_t len)
{
	const struct lb_flow_table *t = mem;
	size_t size;

	if (mem == NULL || len < sizeof(*t))
		return -EINVAL;
	if (t->magic != LB_FLOW_TABLE_MAGIC)
		return -EINVAL;
	if (t->version != LB_FLOW_TABLE_VERSION)
		return -EPROTO;
	size = lb_flow_table_mem_size(t->capacity);
	if (size == 0 || size != t->mem_size || size > len ||
	    t->slot_mask != nb_slots(t->capacity) - 1 ||
	    t->flows_off != header_size() ||
	    t->slots_off != t->flows_off + (uint64_t)t->capacity *
						   sizeof(struct lb_flow))
		return -EINVAL;
	return 0;
}

/* A shorter timeout may make heads due earlier than next_due said: the
 * next pass looks at every head again. */
static void
due_recheck(struct lb_flow_table *t)
{
	t->due_known = 0;
}

int
lb_flow_set_timeout(struct lb_flow_table *t, enum lb_flow_state s,
		    uint64_t ns)
{
	int rc;

	if (t == NULL || (unsigned int)s >= LB_FLOW_NB_STATES)
		return -EINVAL;
	rc = check_timeout(ns);
	if (rc < 0)
		return rc;
	t->timeout[s] = timeout_ticks(ns);
	due_recheck(t);
	return 0;
}

uint64_t
lb_flow_timeout_ns(const struct lb_flow_table *t, enum lb_flow_state s)
{
	if (t == NULL || (unsigned int)s >= LB_FLOW_NB_STATES)
		return 0;
	return (uint64_t)t->timeout[s] << LB_FLOW_TICK_SHIFT;
}

uint64_t
lb_flow_svc_timeout_ns(const struct lb_flow_table *t, uint32_t svc,
		       enum lb_flow_state s)
{
	unsigned int c;

	if (t == NULL || (unsigned int)s >= LB_FLOW_NB_STATES)
		return 0;
	c = svc < LB_FLOW_MAX_SVCS ? t->svc_class[svc] : 0;
	return (uint64_t)t->timeout[c * LB_FLOW_NB_STATES + s]
	       << LB_FLOW_TICK_SHIFT;
}

/* Timeout classes of services. */

#define CLASS_NONE 0xffu

static int
class_has(const struct lb_flow_table *t, unsigned int c, const uint32_t *tk)
{
	return memcmp(&t->timeout[c * LB_FLOW_NB_STATES], tk,
		      LB_FLOW_NB_STATES * sizeof(*tk)) == 0;
}

static int
class_empty(const struct lb_flow_table *t, unsigned int c)
{
	for (unsigned int s = 0; s < LB_FLOW_NB_STATES; s++)
		if (t->head[c * LB_FLOW_NB_STATES + s] != LB_FLOW_NONE)
			return 0;
	return 1;
}

static void
class_set(struct lb_flow_table *t, unsigned int c, const uint32_t *tk)
{
	memcpy(&t->timeout[c * LB_FLOW_NB_STATES], tk,
	       LB_FLOW_NB_STATES * sizeof(*tk));
}

/* A class other than 0 with timeouts @p tk: claimed ones if @p claimed,
 * else unclaimed ones; CLASS_NONE if none. */
static unsigned int
class_find(const struct lb_flow_table *t, const uint32_t *tk,
	   const uint8_t *claimed, int want_claimed)
{
	for (unsigned int c = 1; c < LB_FLOW_CLASSES; c++)
		if (!claimed[c] == !want_claimed && class_has(t, c, tk))
			return c;
	return CLASS_NONE;
}

/* An unclaimed class for new timeouts, one without flows if any. */
static unsigned int
class_free(const struct lb_flow_table *t, const uint8_t *claimed)
{
	unsigned int any = CLASS_NONE;

	for (unsigned int c = 1; c < LB_FLOW_CLASSES; c++) {
		if (claimed[c])
			continue;
		if (class_empty(t, c))
			return c;
		if (any == CLASS_NONE)
			any = c;
	}
	return any;
}

/* The claimed class with the longest ESTABLISHED timeout, or 0. */
static unsigned int
class_longest(const struct lb_flow_table *t, const uint8_t *claimed)
{
	unsigned int best = 0;

	for (unsigned int c = 1; c < LB_FLOW_CLASSES; c++)
		if (claimed[c] &&
		    (best == 0 ||
		     t->timeout[c * LB_FLOW_NB_STATES + LB_FLOW_ESTABLISHED] >
			     t->timeout[best * LB_FLOW_NB_STATES +
					LB_FLOW_ESTABLISHED]))
			best = c;
	return best;
}

/*
 * The class for timeouts @p tk of a service in class @p own: a claimed one
 * with them; else, unless @p fresh, @p own re-valued if unclaimed; else, if
 * @p fresh, an unclaimed one with them, a free one set to them, or (one
 * more in @p *shared) the claimed one with the longest ESTABLISHED. May be
 * CLASS_NONE when not @p fresh.
 */
static unsigned int
class_for(struct lb_flow_table *t, const uint32_t *tk, const uint8_t *claimed,
	  unsigned int own, int fresh, int *shared)
{
	unsigned int c = class_find(t, tk, claimed, 1);

	if (c != CLASS_NONE)
		return c;
	if (!fresh) {
		if (own == 0 || claimed[own])
			return CLASS_NONE;
		class_set(t, own, tk);
		return own;
	}
	c = class_find(t, tk, claimed, 0);
	if (c != CLASS_NONE)
		return c;
	c = class_free(t, claimed);
	if (c != CLASS_NONE) {
		class_set(t, c, tk);
		return c;
	}
	(*shared)++;
	return class_longest(t, claimed);
}

int
lb_flow_svc_timeouts(struct lb_flow_table *t, const struct lb_flow_timeouts *to,
		     uint32_t nb_svc)
{
	static const struct lb_flow_timeouts zero;
	uint32_t tk[LB_FLOW_MAX_SVCS][LB_FLOW_NB_STATES];
	uint8_t want[LB_FLOW_MAX_SVCS], claimed[LB_FLOW_CLASSES] = {1};
	uint32_t n = nb_svc < LB_FLOW_MAX_SVCS ? nb_svc : LB_FLOW_MAX_SVCS;
	int shared = 0;

	if (t == NULL || (to == NULL && nb_svc > 0))
		return -EINVAL;
	memset(want, 0, sizeof(want));
	for (uint32_t i = 0; i < n; i++) {
		int rc;

		if (memcmp(&to[i], &zero, sizeof(zero)) == 0)
			continue;
		rc = check_timeouts(&to[i]);
		if (rc < 0)
			return rc;
		for (unsigned int s = 0; s < LB_FLOW_NB_STATES; s++)
			tk[i][s] = timeout_ticks(to[i].ns[s]);
		want[i] = CLASS_NONE;
	}
	/* Services whose timeouts did not change keep their class. */
	for (uint32_t i = 0; i < n; i++) {
		unsigned int c = t->svc_class[i];

		if (want[i] == CLASS_NONE && c != 0 && class_has(t, c, tk[i])) {
			want[i] = (uint8_t)c;
			claimed[c] = 1;
		}
	}
	/* Changed ones join a class with their timeouts, or take their own
	 * class along to the new values when nobody else keeps it; then
	 * new services and those that shared a class take a free class. */
	for (int fresh = 0; fresh < 2; fresh++) {
		for (uint32_t i = 0; i < n; i++) {
			unsigned int c;

			if (want[i] != CLASS_NONE)
				continue;
			c = class_for(t, tk[i], claimed, t->svc_class[i], fresh,
				      &shared);
			if (c != CLASS_NONE) {
				want[i] = (uint8_t)c;
				claimed[c] = 1;
			}
		}
	}
	memcpy(t->svc_class, want, sizeof(want));
	due_recheck(t);
	return shared;
}

/* Expiry lists. */

static unsigned int
svc_class(const struct lb_flow_table *t, const struct lb_flow *f)
{
	return f->svc < LB_FLOW_MAX_SVCS ? t->svc_class[f->svc] : 0;
}

/* The list flow @p f in @p state belongs to now. */
static unsigned int
list_of(const struct lb_flow_table *t, const struct lb_flow *f,
	unsigned int state)
{
	return svc_class(t, f) * LB_FLOW_NB_STATES + state;
}

/*
 * The list of @p state whose end (@p ends: heads or tails) is flow @p idx.
 * The flow's service may have changed class since it joined its list, so
 * the ends of every class are compared, not the service's class alone.
 */
static unsigned int
list_ending(const uint32_t *ends, uint32_t idx, unsigned int state)
{
	for (unsigned int c = 0; c < LB_FLOW_CLASSES; c++)
		if (ends[c * LB_FLOW_NB_STATES + state] == idx)
			return c * LB_FLOW_NB_STATES + state;
	return state; /* not reached: an end of a list is in one */
}

/* The lists' links, which also chain the free flows (next). */
static inline struct lb_ilist_links
flow_links(struct lb_flow *flows)
{
	return LB_ILIST_LINKS(flows, prev, next);
}

/* Only the ends the flow is at are looked for (list_ending()). */
static void
list_unlink(struct lb_flow_table *t, struct lb_flow *flows, uint32_t idx,
	    unsigned int state)
{
	struct lb_ilist_links l = flow_links(flows);
	const struct lb_flow *f = &flows[idx];
	uint32_t *head = NULL, *tail = NULL;

	if (f->prev == LB_FLOW_NONE)
		head = &t->head[list_ending(t->head, idx, state)];
	if (f->next == LB_FLOW_NONE)
		tail = &t->tail[list_ending(t->tail, idx, state)];
	lb_ilist_unlink(&l, head, tail, idx);
}

/* The tick from which flow @p f of list @p c is expired (expired()). */
static uint32_t
due_of(const struct lb_flow_table *t, const struct lb_flow *f, unsigned int c)
{
	return f->last_seen + t->timeout[c] + 1;
}

/*
 * Appending keeps next_due right: a flow joining a list behind others was
 * seen last, so it is due after the head; only a flow that starts a list
 * can be due before every head.
 */
static void
list_append(struct lb_flow_table *t, struct lb_flow *flows, uint32_t idx,
	    unsigned int c)
{
	struct lb_ilist_links l = flow_links(flows);

	if (t->head[c] == LB_FLOW_NONE && t->due_known) {
		uint32_t due = due_of(t, &flows[idx], c);

		if ((int32_t)(due - t->next_due) < 0)
			t->next_due = due;
	}
	lb_ilist_push_tail(&l, &t->head[c], &t->tail[c], idx);
}

/* Index slots. */

/* First slot at or after @p i that is empty or holds @p k; sets *found. */
static uint32_t
slot_find(const struct lb_flow_table *t, const struct lb_flow_key *k,
	  uint32_t sig, uint32_t i, int *found)
{
	const uint64_t *slot = lb_flow_slots(t);
	const struct lb_flow *flows = lb_flow_entries(t);

	for (;; i = (i + 1) & t->slot_mask) {
		uint64_t s = slot[i];
		uint32_t ref = (uint32_t)s;

		if (s == SLOT_EMPTY) {
			*found = 0;
			return i;
		}
		if ((uint32_t)(s >> 32) == sig &&
		    lb_flow_key_eq(&flows[ref >> 1].key[ref & 1], k)) {
			*found = 1;
			return i;
		}
	}
}

/*
 * Empties slot @p i and shifts later slots of the same cluster back into
 * the hole when their home slot allows it (deletion without tombstones for
 * linear probing): the slot at j may move to the hole at i unless its home
 * lies cyclically in (i, j].
 */
static void
slot_remove(struct lb_flow_table *t, uint32_t i)
{
	uint64_t *slot = lb_flow_slots(t);
	uint32_t mask = t->slot_mask;

	for (uint32_t j = (i + 1) & mask; slot[j] != SLOT_EMPTY;
	     j = (j + 1) & mask) {
		uint32_t home = (uint32_t)(slot[j] >> 32) & mask;

		if (((j - home) & mask) >= ((j - i) & mask)) {
			slot[i] = slot[j];
			i = j;
		}
	}
	slot[i] = SLOT_EMPTY;
}

/* Removes the slot referring to key @p dir of flow @p idx. */
static void
slot_unindex(struct lb_flow_table *t, uint32_t idx, unsigned int dir)
{
	const struct lb_flow *f = &lb_flow_entries(t)[idx];
	uint64_t *slot = lb_flow_slots(t);
	uint32_t ref = idx << 1 | dir;
	uint32_t i = lb_flow_sig(lb_flow_hash(t->seed, &f->key[dir])) &
		     t->slot_mask;

	for (; slot[i] != SLOT_EMPTY; i = (i + 1) & t->slot_mask) {
		if ((uint32_t)slot[i] == ref) {
			slot_remove(t, i);
			return;
		}
	}
}

/* Byte 0 of the padding may mark an IPv6 flow's folded key (flow6.h):
 * that keeps it apart from every IPv4 key. */
static int
key_valid(const struct lb_flow_key *k)
{
	return (k->pad[0] == 0 || k->pad[0] == 6) &&
	       (k->pad[1] | k->pad[2]) == 0;
}

static uint8_t
initial_state(uint8_t proto)
{
	switch (proto) {
	case LB_FLOW_PROTO_TCP:
		return LB_FLOW_SYN_SENT;
	case LB_FLOW_PROTO_UDP:
		return LB_FLOW_UDP_UNREPLIED;
	default:
		return LB_FLOW_OTHER;
	}
}

static unsigned int expire_pass(struct lb_flow_table *t, uint32_t now,
				unsigned int max, lb_flow_expire_fn cb,
				void *ctx);
static int reclaim(struct lb_flow_table *t, uint32_t idx, uint32_t now);

int
lb_flow_insert(struct lb_flow_table *t, const struct lb_flow_key *orig,
	       const struct lb_flow_key *reply, uint16_t svc, uint32_t be,
	       uint64_t now_ns)
{
	const struct lb_flow_key *key[2] = { orig, reply };
	uint32_t sig[2], pos[2], idx, now = tick(now_ns);
	struct lb_ilist_links links;
	uint64_t *slot;
	struct lb_flow *flows, *f;
	int found;

	if (t == NULL || orig == NULL || reply == NULL || !key_valid(orig) ||
	    !key_valid(reply) || orig->proto != reply->proto ||
	    lb_flow_key_eq(orig, reply))
		return -EINVAL;
	t->now = now;
	/* Each pass that goes round again freed a flow, and a flow can
	 * only be freed for one of the two keys or for its entry. */
again:
	for (unsigned int d = 0; d < 2; d++) {
		sig[d] = lb_flow_sig(lb_flow_hash(t->seed, key[d]));
		pos[d] = slot_find(t, key[d], sig[d], sig[d] & t->slot_mask,
				   &found);
		if (found) {
			uint32_t ref = (uint32_t)lb_flow_slots(t)[pos[d]];

			if (reclaim(t, ref >> 1, now))
				goto again;
			t->stats.dup++;
			return -EEXIST;
		}
	}
	if (t->free_head == LB_FLOW_NONE) {
		if (t->reaper != NULL &&
		    expire_pass(t, now, 1, t->reaper, t->reaper_ctx) == 1) {
			t->stats.reclaimed++;
			goto again;
		}
		t->stats.refused++;
		return -ENOSPC;
	}

	flows = lb_flow_entries(t);
	links = flow_links(flows);
	idx = lb_ilist_stack_pop(&links, &t->free_head);
	f = &flows[idx];
	memset(f, 0, sizeof(*f));
	f->key[LB_FLOW_DIR_ORIG] = *orig;
	f->key[LB_FLOW_DIR_REPLY] = *reply;
	f->svc = svc;
	f->be = be;
	f->state = initial_state(orig->proto);
	f->last_seen = tick(now_ns);
	list_append(t, flows, idx, list_of(t, f, f->state));

	slot = lb_flow_slots(t);
	slot[pos[0]] = (uint64_t)sig[0] << 32 | idx << 1;
	/* The reply key's probe stopped at the first empty slot; if the
	 * orig key just took it, the next empty one follows it. */
	while (slot[pos[1]] != SLOT_EMPTY)
		pos[1] = (pos[1] + 1) & t->slot_mask;
	slot[pos[1]] = (uint64_t)sig[1] << 32 | idx << 1 | 1;

	t->stats.inserts++;
	t->stats.flows++;
	return (int)idx;
}

static void
release(struct lb_flow_table *t, struct lb_flow *flows, uint32_t idx)
{
	struct lb_ilist_links l = flow_links(flows);
	struct lb_flow *f = &flows[idx];

	slot_unindex(t, idx, LB_FLOW_DIR_ORIG);
	slot_unindex(t, idx, LB_FLOW_DIR_REPLY);
	list_unlink(t, flows, idx, f->state);
	f->state = LB_FLOW_FREE;
	f->prev = LB_FLOW_NONE;
	lb_ilist_stack_push(&l, &t->free_head, idx);
	t->stats.flows--;
}

int
lb_flow_delete(struct lb_flow_table *t, uint32_t idx)
{
	struct lb_flow *flows;

	if (t == NULL || idx >= t->capacity)
		return -EINVAL;
	flows = lb_flow_entries(t);
	if (flows[idx].state == LB_FLOW_FREE)
		return -ENOENT;
	release(t, flows, idx);
	t->stats.deleted++;
	return 0;
}

int
lb_flow_tcp_advance(struct lb_flow *f, enum lb_flow_dir dir,
		    uint8_t tcp_flags)
{
	uint8_t fin = dir == LB_FLOW_DIR_ORIG ? LB_FLOW_F_FIN_ORIG
					      : LB_FLOW_F_FIN_REPLY;
	uint8_t both = LB_FLOW_F_FIN_ORIG | LB_FLOW_F_FIN_REPLY;
	uint8_t st;

	if (f == NULL || (unsigned int)dir > LB_FLOW_DIR_REPLY ||
	    f->state >= LB_FLOW_NB_STATES)
		return -EINVAL;
	st = f->state;
	/* The backend is there: UDP's long timeout from now on. */
	if (st == LB_FLOW_UDP_UNREPLIED && dir == LB_FLOW_DIR_REPLY)
		f->state = LB_FLOW_UDP;
	if (st > LB_FLOW_CLOSED)
		return f->state;

	if (tcp_flags & TCP_RST) {
		st = LB_FLOW_CLOSED;
	} else if (tcp_flags & TCP_SYN) {
		if (dir == LB_FLOW_DIR_ORIG && !(tcp_flags & TCP_ACK) &&
		    (st == LB_FLOW_TIME_WAIT || st == LB_FLOW_CLOSED)) {
			st = LB_FLOW_SYN_SENT;
			f->flags &= (uint8_t)~both;
		} else if (dir == LB_FLOW_DIR_REPLY && (tcp_flags & TCP_ACK) &&
			   st == LB_FLOW_SYN_SENT) {
			st = LB_FLOW_SYN_RECV;
		}
	} else if (tcp_flags & TCP_FIN) {
		if (st != LB_FLOW_TIME_WAIT && st != LB_FLOW_CLOSED) {
			f->flags |= fin;
			st = (f->flags & both) == both ? LB_FLOW_TIME_WAIT
						       : LB_FLOW_CLOSING;
		}
	} else if ((tcp_flags & TCP_ACK) && dir == LB_FLOW_DIR_ORIG &&
		   st == LB_FLOW_SYN_RECV) {
		st = LB_FLOW_ESTABLISHED;
	}
	f->state = st;
	return st;
}

int
lb_flow_touch(struct lb_flow_table *t, uint32_t idx, enum lb_flow_dir dir,
	      uint8_t tcp_flags, uint64_t now_ns)
{
	struct lb_flow *flows, *f;
	unsigned int list;
	uint8_t old;

	if (t == NULL || idx >= t->capacity ||
	    (unsigned int)dir > LB_FLOW_DIR_REPLY)
		return -EINVAL;
	flows = lb_flow_entries(t);
	f = &flows[idx];
	old = f->state;
	if (old == LB_FLOW_FREE)
		return -ENOENT;
	f->pkts[dir]++;
	f->last_seen = tick(now_ns);
	/* What can move a state (lb_flow_tcp_advance()): a SYN, FIN or
	 * RST, the ACK that ends SYN_RECV, a reply to UDP_UNREPLIED. An
	 * established flow's data and ACKs are none of them. */
	if (old == LB_FLOW_UDP_UNREPLIED ||
	    (old <= LB_FLOW_CLOSED &&
	     ((tcp_flags & (TCP_SYN | TCP_FIN | TCP_RST)) != 0 ||
	      old == LB_FLOW_SYN_RECV)))
		lb_flow_tcp_advance(f, dir, tcp_flags);
	list = list_of(t, f, f->state);
	/* Already the newest of its unchanged list: nothing to move. */
	if (f->state == old && t->tail[list] == idx)
		return old;
	list_unlink(t, flows, idx, old);
	list_append(t, flows, idx, list);
	return f->state;
}

static int
expired(const struct lb_flow_table *t, const struct lb_flow *f,
	unsigned int list, uint32_t now)
{
	/* Ticks are truncated times: a flow seen late in tick k and checked
	 * early in tick k + timeout has had less than its timeout, so only
	 * a difference above the timeout is certain to be expired. */
	return (int32_t)(now - f->last_seen) > (int32_t)t->timeout[list];
}

/* Whether flow @p f has timed out by @p now under its service's class. */
static int
overdue(const struct lb_flow_table *t, const struct lb_flow *f, uint32_t now)
{
	return f->state < LB_FLOW_NB_STATES &&
	       expired(t, f, list_of(t, f, f->state), now);
}

static void
expire_one(struct lb_flow_table *t, struct lb_flow *flows, uint32_t idx,
	   lb_flow_expire_fn cb, void *ctx)
{
	unsigned int state = flows[idx].state;

	if (cb != NULL)
		cb(idx, &flows[idx], ctx);
	release(t, flows, idx);
	t->stats.expired[state]++;
}

/* Expires flow @p idx now if it has timed out and a reaper is set. */
static int
reclaim(struct lb_flow_table *t, uint32_t idx, uint32_t now)
{
	struct lb_flow *flows = lb_flow_entries(t);

	if (t->reaper == NULL || !overdue(t, &flows[idx], now))
		return 0;
	expire_one(t, flows, idx, t->reaper, t->reaper_ctx);
	t->stats.reclaimed++;
	return 1;
}

/* Far enough to be "never" for next_due, near enough to stay comparable
 * as a signed difference. */
#define DUE_FAR (1u << 30)

static unsigned int
expire_pass(struct lb_flow_table *t, uint32_t now, unsigned int max,
	    lb_flow_expire_fn cb, void *ctx)
{
	uint32_t next = now + DUE_FAR;
	unsigned int done = 0, c;
	struct lb_flow *flows;

	if (t->due_known && (int32_t)(now - t->next_due) < 0)
		return 0;
	t->stats.expire_passes++;
	flows = lb_flow_entries(t);
	c = t->expire_from % LB_FLOW_NB_LISTS;
	for (unsigned int n = 0; n < LB_FLOW_NB_LISTS; n++) {
		uint32_t h;

		while (done < max && (h = t->head[c]) != LB_FLOW_NONE &&
		       expired(t, &flows[h], c, now)) {
			expire_one(t, flows, h, cb, ctx);
			done++;
		}
		if (done == max) {
			/* The next call starts after the list that used
			 * up this one's budget; next_due stays behind, as
			 * flows may still be due. */
			t->expire_from = (c + 1) % LB_FLOW_NB_LISTS;
			return done;
		}
		h = t->head[c];
		if (h != LB_FLOW_NONE &&
		    (int32_t)(due_of(t, &flows[h], c) - next) < 0)
			next = due_of(t, &flows[h], c);
		c = (c + 1) % LB_FLOW_NB_LISTS;
	}
	/* Every head was looked at and none is due before @p next. */
	t->next_due = next;
	t->due_known = 1;
	return done;
}

unsigned int
lb_flow_expire(struct lb_flow_table *t, uint64_t now_ns, unsigned int max,
	       lb_flow_expire_fn cb, void *ctx)
{
	if (t == NULL)
		return 0;
	t->now = tick(now_ns);
	if (max == 0)
		return 0;
	return expire_pass(t, t->now, max, cb, ctx);
}

void
lb_flow_set_reaper(struct lb_flow_table *t, lb_flow_expire_fn cb, void *ctx)
{
	if (t == NULL)
		return;
	t->reaper = cb;
	t->reaper_ctx = ctx;
}

int
lb_flow_holds(const struct lb_flow_table *t, const struct lb_flow_key *k)
{
	enum lb_flow_dir dir;
	uint32_t idx = lb_flow_lookup(t, k, &dir);

	if (idx == LB_FLOW_NONE)
		return 0;
	return !overdue(t, &lb_flow_entries(t)[idx], t->now);
}

unsigned int
lb_flow_overdue(const struct lb_flow_table *t, uint64_t now_ns,
		unsigned int max, lb_flow_expire_fn fn, void *ctx)
{
	uint32_t now = tick(now_ns);
	const struct lb_flow *flows;
	unsigned int n = 0;

	if (t == NULL || (t->due_known && (int32_t)(now - t->next_due) < 0))
		return 0;
	flows = lb_flow_entries(t);
	for (unsigned int c = 0; c < LB_FLOW_NB_LISTS && n < max; c++)
		for (uint32_t i = t->head[c];
		     i != LB_FLOW_NONE && n < max && expired(t, &flows[i], c, now);
		     i = flows[i].next) {
			if (fn != NULL)
				fn(i, &flows[i], ctx);
			n++;
		}
	return n;
}

uint32_t
lb_flow_next(const struct lb_flow_table *t, uint32_t pos)
{
	const struct lb_flow *flows;

	if (t == NULL)
		return LB_FLOW_NONE;
	flows = lb_flow_entries(t);
	for (; pos < t->capacity; pos++)
		if (flows[pos].state != LB_FLOW_FREE)
			return pos;
	return LB_FLOW_NONE;
}

void
lb_flow_stats_get(const struct lb_flow_table *t, struct lb_flow_stats *st)
{
	if (t == NULL || st == NULL)
		return;
	*st = t->stats;
}
