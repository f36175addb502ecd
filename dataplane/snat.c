/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
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

int
lb_snat_conf_check(const struct lb_snat_conf *c)
{
	uint16_t lo, hi;

	if (c == NULL || c->addrs == NULL || c->nb_addrs == 0 ||
	    c->nb_addrs > LB_SNAT_MAX_ADDRS || c->nb_workers == 0 ||
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
	uint32_t nb_ports, nb_items, hash_slots;
	uint16_t first;
	uint64_t addrs_off, hash_off, queue_off, used_off, size;
};

static void
plan(const struct lb_snat_conf *c, struct layout *l)
{
	uint16_t lo, hi;

	conf_range(c, &lo, &hi);
	l->nb_ports = slice(lo, hi, c->nb_workers, c->worker_id, &l->first);
	l->nb_items = l->nb_ports * c->nb_addrs;
	/* Load <= 1/2 keeps the address probe short. */
	l->hash_slots = 2;
	while (l->hash_slots < 2 * c->nb_addrs)
		l->hash_slots <<= 1;
	l->addrs_off = ALIGN8(sizeof(struct lb_snat));
	l->hash_off = ALIGN8(l->addrs_off + 4ULL * c->nb_addrs);
	l->queue_off = ALIGN8(l->hash_off + 2ULL * l->hash_slots);
	l->used_off = ALIGN8(l->queue_off + 4ULL * l->nb_items);
	l->size = l->used_off + 8ULL * ((l->nb_items + 63) / 64);
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

static uint32_t *
addrs_of(const struct lb_snat *s)
{
	return (uint32_t *)((uintptr_t)s + s->addrs_off);
}

static uint16_t *
hash_of(const struct lb_snat *s)
{
	return (uint16_t *)((uintptr_t)s + s->hash_off);
}

static uint32_t *
queue_of(const struct lb_snat *s)
{
	return (uint32_t *)((uintptr_t)s + s->queue_off);
}

static uint64_t *
used_of(const struct lb_snat *s)
{
	return (uint64_t *)((uintptr_t)s + s->used_off);
}

static uint32_t
addr_home(uint32_t ip, uint32_t mask)
{
	/* Fibonacci hashing: the high bits of the product are well mixed. */
	return (uint32_t)(((uint64_t)ip * 0x9e3779b97f4a7c15ULL) >> 40) & mask;
}

int
lb_snat_init(void *mem, const struct lb_snat_conf *c)
{
	struct lb_snat *s = mem;
	struct layout l;
	uint32_t *queue;
	uint16_t lo, hi;
	uint16_t *hash;

	if (mem == NULL || (uintptr_t)mem % 8 != 0 ||
	    lb_snat_conf_check(c) != 0)
		return -EINVAL;
	plan(c, &l);
	conf_range(c, &lo, &hi);
	memset(s, 0, (size_t)l.size);
	s->magic = LB_SNAT_MAGIC;
	s->version = LB_SNAT_VERSION;
	s->nb_addrs = c->nb_addrs;
	s->nb_workers = c->nb_workers;
	s->worker_id = c->worker_id;
	s->port_min = lo;
	s->port_max = hi;
	s->first_port = l.first;
	s->nb_ports = l.nb_ports;
	s->nb_items = l.nb_items;
	s->addr_mask = l.hash_slots - 1;
	s->mem_size = l.size;
	s->addrs_off = l.addrs_off;
	s->hash_off = l.hash_off;
	s->queue_off = l.queue_off;
	s->used_off = l.used_off;

	memcpy(addrs_of(s), c->addrs, 4ULL * c->nb_addrs);
	hash = hash_of(s);
	for (uint32_t a = 0; a < c->nb_addrs; a++) {
		uint32_t i = addr_home(c->addrs[a], s->addr_mask);

		while (hash[i] != 0)
			i = (i + 1) & s->addr_mask;
		hash[i] = (uint16_t)(a + 1);
	}
	/* Pair i is address i mod nb_addrs, port slot i / nb_addrs: in this
	 * order consecutive allocations rotate over the addresses. */
	queue = queue_of(s);
	for (uint32_t i = 0; i < l.nb_items; i++)
		queue[i] = i;
	s->head = c->start % l.nb_items;
	s->nb_free = l.nb_items;
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
	if (s->mem_size > len || s->nb_workers == 0 ||
	    s->nb_items != s->nb_addrs * s->nb_ports ||
	    s->nb_free > s->nb_items ||
	    s->used_off + 8ULL * ((s->nb_items + 63) / 64) != s->mem_size)
		return -EINVAL;
	return 0;
}

int
lb_snat_addr_index(const struct lb_snat *s, uint32_t ip)
{
	const uint16_t *hash;
	const uint32_t *addrs;

	if (s == NULL)
		return -ENOENT;
	hash = hash_of(s);
	addrs = addrs_of(s);
	for (uint32_t i = addr_home(ip, s->addr_mask); hash[i] != 0;
	     i = (i + 1) & s->addr_mask)
		if (addrs[hash[i] - 1] == ip)
			return hash[i] - 1;
	return -ENOENT;
}

int
lb_snat_port_alloc(struct lb_snat *s, uint32_t *ip, uint16_t *port)
{
	uint32_t item;
	uint64_t *used;

	if (s == NULL || ip == NULL || port == NULL)
		return -EINVAL;
	if (s->nb_free == 0) {
		s->stats.exhausted++;
		return -ENOSPC;
	}
	item = queue_of(s)[s->head];
	s->head = s->head + 1 == s->nb_items ? 0 : s->head + 1;
	s->nb_free--;
	used = used_of(s);
	used[item / 64] |= 1ULL << (item % 64);
	*ip = addrs_of(s)[item % s->nb_addrs];
	*port = htons((uint16_t)(s->first_port +
				 item / s->nb_addrs * s->nb_workers));
	s->stats.allocs++;
	return 0;
}

int
lb_snat_port_free(struct lb_snat *s, uint32_t ip, uint16_t port)
{
	uint32_t p = ntohs(port), item, tail;
	uint64_t *used, bit;
	int a;

	if (s == NULL)
		return -EINVAL;
	a = lb_snat_addr_index(s, ip);
	if (a < 0 || p < s->first_port || p > s->port_max ||
	    (p - s->first_port) % s->nb_workers != 0)
		goto bad;
	item = (p - s->first_port) / s->nb_workers * s->nb_addrs + (uint32_t)a;
	used = used_of(s);
	bit = 1ULL << (item % 64);
	if (!(used[item / 64] & bit))
		goto bad;
	used[item / 64] &= ~bit;
	tail = s->head + s->nb_free;
	if (tail >= s->nb_items)
		tail -= s->nb_items;
	queue_of(s)[tail] = item;
	s->nb_free++;
	s->stats.frees++;
	return 0;
bad:
	s->stats.bad_free++;
	return -EINVAL;
}

uint32_t
lb_snat_nb_free(const struct lb_snat *s)
{
	return s == NULL ? 0 : s->nb_free;
}

uint32_t
lb_snat_capacity(const struct lb_snat *s)
{
	return s == NULL ? 0 : s->nb_items;
}

void
lb_snat_stats_get(const struct lb_snat *s, struct lb_snat_stats *st)
{
	if (s == NULL || st == NULL)
		return;
	*st = s->stats;
}
