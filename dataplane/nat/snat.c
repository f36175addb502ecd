/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lb/snat.h"

#define ALIGN8(x) (((x) + 7) & ~(uint64_t)7)

/* Resolved port range of a valid configuration. */
static void
conf_range(const struct lb_snat_conf *c, uint16_t *lo, uint16_t *hi)
{
	if (c->port_min == 0 && c->port_max == 0) {
		*lo = LB_SNAT_PORT_MIN_DEFAULT;
		*hi = LB_SNAT_PORT_MAX_DEFAULT;
	} else {
		*lo = c->port_min;
		*hi = c->port_max;
	}
}

/* Address slots of a configuration: max_addrs, else nb_addrs. */
static uint32_t
conf_slots(const struct lb_snat_conf *c)
{
	return c->max_addrs != 0 ? c->max_addrs : c->nb_addrs;
}

int
lb_snat_conf_check(const struct lb_snat_conf *c)
{
	uint16_t lo, hi;

	if (c == NULL || (c->addrs == NULL && c->nb_addrs > 0) ||
	    conf_slots(c) == 0 || conf_slots(c) > LB_SNAT_MAX_ADDRS ||
	    c->nb_addrs > conf_slots(c) || c->nb_workers == 0 ||
	    c->nb_workers > LB_SNAT_MAX_WORKERS ||
	    c->worker_id >= c->nb_workers)
		return -EINVAL;
	conf_range(c, &lo, &hi);
	if (lo == 0 || lo > hi || (uint32_t)(hi - lo) + 1 < c->nb_workers)
		return -EINVAL;
	/* Configuration time: a quadratic scan of at most 256 addresses. */
	for (uint32_t i = 0; i < c->nb_addrs; i++) {
		if (c->addrs[i] == 0)
			return -EINVAL;
		for (uint32_t j = 0; j < i; j++)
			if (c->addrs[j] == c->addrs[i])
				return -EINVAL;
	}
	return 0;
}

/* Ports per address in worker w's slice, and the lowest of them. */
static uint32_t
slice(uint16_t lo, uint16_t hi, uint32_t nb_workers, uint32_t w,
      uint16_t *first)
{
	uint32_t p = lo + (w + nb_workers - lo % nb_workers) % nb_workers;

	*first = (uint16_t)p;
	return p > hi ? 0 : (hi - p) / nb_workers + 1;
}

struct layout {
	uint32_t nb_ports, slots;
	uint16_t first;
	uint64_t slots_off, refs_off, size;
};

static void
plan(const struct lb_snat_conf *c, struct layout *l)
{
	uint16_t lo, hi;

	conf_range(c, &lo, &hi);
	l->nb_ports = slice(lo, hi, c->nb_workers, c->worker_id, &l->first);
	l->slots = conf_slots(c);
	l->slots_off = ALIGN8(sizeof(struct lb_snat));
	l->refs_off = ALIGN8(l->slots_off +
			     sizeof(struct lb_snat_addr) * l->slots);
	l->size = ALIGN8(l->refs_off + 2ULL * l->nb_ports * l->slots);
}

size_t
lb_snat_mem_size(const struct lb_snat_conf *c)
{
	struct layout l;

	if (lb_snat_conf_check(c) != 0)
		return 0;
	plan(c, &l);
	return (size_t)l.size;
}

static struct lb_snat_addr *
slots_of(const struct lb_snat *s)
{
	return (struct lb_snat_addr *)((uintptr_t)s + s->slots_off);
}

/* Slot @p a's holder counts, one per port of the slice. */
static uint16_t *
refs_of(const struct lb_snat *s, uint32_t a)
{
	return (uint16_t *)((uintptr_t)s + s->refs_off) +
	       (uint64_t)a * s->nb_ports;
}

/* Slot @p a with all of @p ip's slice free, the cursor at @p head. */
static void
slot_fill(struct lb_snat *s, uint32_t a, uint32_t ip, uint32_t head)
{
	struct lb_snat_addr *x = &slots_of(s)[a];

	memset(refs_of(s, a), 0, 2ULL * s->nb_ports);
	x->ip = ip;
	x->state = LB_SNAT_ADDR_ACTIVE;
	x->head = head % s->nb_ports;
	x->nb_free = s->nb_ports;
	x->nb_used = 0;
}

int
lb_snat_init(void *mem, const struct lb_snat_conf *c)
{
	struct lb_snat *s = mem;
	struct layout l;
	uint16_t lo, hi;

	if (mem == NULL || (uintptr_t)mem % 8 != 0 ||
	    lb_snat_conf_check(c) != 0)
		return -EINVAL;
	plan(c, &l);
	conf_range(c, &lo, &hi);
	memset(s, 0, (size_t)l.size);
	s->magic = LB_SNAT_MAGIC;
	s->version = LB_SNAT_VERSION;
	s->max_addrs = l.slots;
	s->nb_workers = c->nb_workers;
	s->worker_id = c->worker_id;
	s->port_min = lo;
	s->port_max = hi;
	s->first_port = l.first;
	s->nb_ports = l.nb_ports;
	s->start = c->start;
	s->mem_size = l.size;
	s->slots_off = l.slots_off;
	s->refs_off = l.refs_off;
	/* Pair i of the addresses given is address i mod nb_addrs, port
	 * slot i / nb_addrs: in this order consecutive allocations rotate
	 * over the addresses, and @c start picks where it begins. */
	for (uint32_t a = 0; a < c->nb_addrs; a++)
		slot_fill(s, a, c->addrs[a], c->start / c->nb_addrs);
	s->next = c->nb_addrs > 0 ? c->start % c->nb_addrs : 0;
	return 0;
}

struct lb_snat *
lb_snat_create(const struct lb_snat_conf *c)
{
	size_t size = lb_snat_mem_size(c);
	struct lb_snat *s;

	if (size == 0) {
		errno = EINVAL;
		return NULL;
	}
	s = malloc(size);
	if (s == NULL)
		return NULL;
	lb_snat_init(s, c);
	return s;
}

void
lb_snat_free(struct lb_snat *s)
{
	free(s);
}

int
lb_snat_check(const void *mem, size_t len)
{
	const struct lb_snat *s = mem;

	if (mem == NULL || len < sizeof(*s) || s->magic != LB_SNAT_MAGIC)
		return -EINVAL;
	if (s->version != LB_SNAT_VERSION)
		return -EPROTO;
	if (s->mem_size > len || s->nb_workers == 0 || s->max_addrs == 0 ||
	    s->max_addrs > LB_SNAT_MAX_ADDRS ||
	    ALIGN8(s->refs_off + 2ULL * s->nb_ports * s->max_addrs) !=
		    s->mem_size)
		return -EINVAL;
	for (uint32_t a = 0; a < s->max_addrs; a++)
		if (slots_of(s)[a].nb_free > s->nb_ports)
			return -EINVAL;
	return 0;
}

int
lb_snat_addr_index(const struct lb_snat *s, uint32_t ip)
{
	const struct lb_snat_addr *x;

	if (s == NULL || ip == 0)
		return -ENOENT;
	x = slots_of(s);
	for (uint32_t a = 0; a < s->max_addrs; a++)
		if (x[a].ip == ip && x[a].state != LB_SNAT_ADDR_FREE)
			return (int)a;
	return -ENOENT;
}

int
lb_snat_addr_add(struct lb_snat *s, uint32_t ip)
{
	struct lb_snat_addr *x;
	int a;

	if (s == NULL || ip == 0)
		return -EINVAL;
	x = slots_of(s);
	a = lb_snat_addr_index(s, ip);
	if (a >= 0) {
		if (x[a].state == LB_SNAT_ADDR_ACTIVE)
			return -EEXIST;
		/* Back before it drained: its ports are as they were. */
		x[a].state = LB_SNAT_ADDR_ACTIVE;
		return 0;
	}
	for (uint32_t i = 0; i < s->max_addrs; i++)
		if (x[i].state == LB_SNAT_ADDR_FREE) {
			slot_fill(s, i, ip, s->start);
			return 0;
		}
	return -ENOSPC;
}

/* Frees draining slot @p a once none of its pairs is in use. */
static void
slot_settle(struct lb_snat *s, uint32_t a)
{
	struct lb_snat_addr *x = &slots_of(s)[a];

	if (x->state == LB_SNAT_ADDR_DRAINING && x->nb_used == 0) {
		x->state = LB_SNAT_ADDR_FREE;
		x->ip = 0;
	}
}

int
lb_snat_addr_del(struct lb_snat *s, uint32_t ip)
{
	int a = lb_snat_addr_index(s, ip);

	if (a < 0 || slots_of(s)[a].state != LB_SNAT_ADDR_ACTIVE)
		return -ENOENT;
	slots_of(s)[a].state = LB_SNAT_ADDR_DRAINING;
	slot_settle(s, (uint32_t)a);
	return 0;
}

int
lb_snat_sync(struct lb_snat *s, const uint32_t *addrs, uint32_t n)
{
	struct lb_snat_addr *x;
	int missed = 0;

	if (s == NULL)
		return (int)n;
	x = slots_of(s);
	/* Drain first: a slot freed now can take a new address. */
	for (uint32_t a = 0; a < s->max_addrs; a++) {
		bool keep = false;

		if (x[a].state != LB_SNAT_ADDR_ACTIVE)
			continue;
		for (uint32_t i = 0; i < n && !keep; i++)
			keep = addrs[i] == x[a].ip;
		if (!keep)
			lb_snat_addr_del(s, x[a].ip);
	}
	for (uint32_t i = 0; i < n; i++) {
		int rc = lb_snat_addr_add(s, addrs[i]);

		if (rc != 0 && rc != -EEXIST)
			missed++;
	}
	return missed;
}

enum lb_snat_addr_state
lb_snat_addr_state(const struct lb_snat *s, uint32_t ip)
{
	int a = lb_snat_addr_index(s, ip);

	return a < 0 ? LB_SNAT_ADDR_FREE
		     : (enum lb_snat_addr_state)slots_of(s)[a].state;
}

uint32_t
lb_snat_addr_used(const struct lb_snat *s, uint32_t ip)
{
	int a = lb_snat_addr_index(s, ip);

	return a < 0 ? 0 : slots_of(s)[a].nb_used;
}

/*
 * Probes up to LB_SNAT_TRIES ports of slot @p a from its cursor; the first
 * one that no flow holds, or that @p taken says is free towards the
 * caller's destination, is handed out.
 */
static int
slot_take(struct lb_snat *s, uint32_t a, lb_snat_taken_fn *taken, void *arg,
	  uint16_t *port)
{
	struct lb_snat_addr *x = &slots_of(s)[a];
	uint16_t *refs = refs_of(s, a);
	uint32_t tries = s->nb_ports < LB_SNAT_TRIES ? s->nb_ports
						     : LB_SNAT_TRIES;

	for (uint32_t k = 0; k < tries; k++) {
		uint32_t item = x->head;
		uint16_t p = htons((uint16_t)(s->first_port +
					      item * s->nb_workers));

		x->head = item + 1 == s->nb_ports ? 0 : item + 1;
		if (refs[item] != 0) {
			s->stats.probes++;
			/* Held already: shared only with another
			 * destination, and only up to the counter's width. */
			if (taken == NULL || refs[item] == UINT16_MAX ||
			    taken(arg, x->ip, p))
				continue;
		} else {
			x->nb_free--;
		}
		refs[item]++;
		x->nb_used++;
		*port = p;
		return 0;
	}
	return -ENOSPC;
}

int
lb_snat_port_alloc(struct lb_snat *s, lb_snat_taken_fn *taken, void *arg,
		   uint32_t *ip, uint16_t *port)
{
	struct lb_snat_addr *x;

	if (s == NULL || ip == NULL || port == NULL)
		return -EINVAL;
	x = slots_of(s);
	/* The addresses in turn, from the one after the last used. */
	for (uint32_t k = 0, a = s->next; k < s->max_addrs; k++) {
		if (x[a].state == LB_SNAT_ADDR_ACTIVE &&
		    slot_take(s, a, taken, arg, port) == 0) {
			s->next = a + 1 == s->max_addrs ? 0 : a + 1;
			*ip = x[a].ip;
			s->stats.allocs++;
			return 0;
		}
		a = a + 1 == s->max_addrs ? 0 : a + 1;
	}
	s->stats.exhausted++;
	return -ENOSPC;
}

int
lb_snat_port_free(struct lb_snat *s, uint32_t ip, uint16_t port)
{
	uint32_t p = ntohs(port), item;
	struct lb_snat_addr *x;
	uint16_t *refs;
	int a;

	if (s == NULL)
		return -EINVAL;
	a = lb_snat_addr_index(s, ip);
	if (a < 0 || p < s->first_port || p > s->port_max ||
	    (p - s->first_port) % s->nb_workers != 0)
		goto bad;
	item = (p - s->first_port) / s->nb_workers;
	refs = refs_of(s, (uint32_t)a);
	if (refs[item] == 0)
		goto bad;
	x = &slots_of(s)[a];
	if (--refs[item] == 0)
		x->nb_free++;
	x->nb_used--;
	s->stats.frees++;
	slot_settle(s, (uint32_t)a);
	return 0;
bad:
	s->stats.bad_free++;
	return -EINVAL;
}

uint32_t
lb_snat_nb_free(const struct lb_snat *s)
{
	uint32_t n = 0;

	for (uint32_t a = 0; s != NULL && a < s->max_addrs; a++)
		if (slots_of(s)[a].state == LB_SNAT_ADDR_ACTIVE)
			n += slots_of(s)[a].nb_free;
	return n;
}

uint32_t
lb_snat_capacity(const struct lb_snat *s)
{
	uint32_t n = 0;

	for (uint32_t a = 0; s != NULL && a < s->max_addrs; a++)
		if (slots_of(s)[a].state == LB_SNAT_ADDR_ACTIVE)
			n += s->nb_ports;
	return n;
}

void
lb_snat_stats_get(const struct lb_snat *s, struct lb_snat_stats *st)
{
	if (s == NULL || st == NULL)
		return;
	*st = s->stats;
}
