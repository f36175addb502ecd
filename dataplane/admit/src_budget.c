/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src_budget.h"

void
lb_src_budget_conf_default(struct lb_src_budget_conf *c)
{
	c->rate = LB_SRC_BUDGET_RATE_DEFAULT;
	c->burst = LB_SRC_BUDGET_BURST_DEFAULT;
	c->prefix = LB_SRC_BUDGET_PREFIX_DEFAULT;
	c->sources = LB_SRC_BUDGET_SOURCES_DEFAULT;
}

int
lb_src_budget_conf_check(const struct lb_src_budget_conf *c)
{
	if (c == NULL)
		return -EINVAL;
	if (c->rate == 0)
		return 0;
	if (c->burst == 0 || c->sources == 0 ||
	    c->prefix < LB_SRC_BUDGET_PREFIX_MIN || c->prefix > 32)
		return -EINVAL;
	if (c->rate > LB_SRC_BUDGET_RATE_MAX ||
	    c->burst > LB_SRC_BUDGET_BURST_MAX ||
	    c->sources > LB_SRC_BUDGET_SOURCES_MAX)
		return -ERANGE;
	return 0;
}

/* A decimal number in 1..max, nothing else. */
static int
parse_num(const char *s, const char **end, uint32_t max, uint32_t *out)
{
	char *e;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &e, 10);
	if (errno != 0 || v == 0 || v > max)
		return -EINVAL;
	*end = e;
	*out = (uint32_t)v;
	return 0;
}

int
lb_src_budget_parse(const char *s, struct lb_src_budget_conf *c)
{
	uint32_t rate, burst;
	const char *e;

	if (s == NULL || c == NULL)
		return -EINVAL;
	if (strcmp(s, "off") == 0) {
		c->rate = 0;
		return 0;
	}
	if (parse_num(s, &e, LB_SRC_BUDGET_RATE_MAX, &rate) != 0)
		return -EINVAL;
	if (*e == '/') {
		if (parse_num(e + 1, &e, LB_SRC_BUDGET_BURST_MAX, &burst) != 0)
			return -EINVAL;
	} else {
		burst = rate > LB_SRC_BUDGET_BURST_MAX / 2
				? LB_SRC_BUDGET_BURST_MAX
				: 2 * rate;
	}
	if (*e != '\0')
		return -EINVAL;
	c->rate = rate;
	c->burst = burst;
	return 0;
}

int
lb_src_budget_describe(const struct lb_src_budget_conf *c, char *buf,
		       size_t len)
{
	if (c->rate == 0)
		return snprintf(buf, len, "off");
	return snprintf(buf, len,
			"%" PRIu32 "/s burst %" PRIu32 " per /%" PRIu32
			", %" PRIu32 " sources per worker",
			c->rate, c->burst, c->prefix, c->sources);
}

struct lb_src_budget *
lb_src_budget_create(const struct lb_src_budget_conf *c, uint64_t k0,
		     uint64_t k1, struct lb_src_budget_stats *st)
{
	struct lb_src_budget *b;
	uint32_t nsets = 1;

	if (st == NULL || lb_src_budget_conf_check(c) != 0 || c->rate == 0) {
		errno = EINVAL;
		return NULL;
	}
	while (nsets * LB_SRC_BUDGET_WAYS < c->sources)
		nsets *= 2;
	b = calloc(1, sizeof(*b));
	if (b == NULL)
		goto nomem;
	b->set = aligned_alloc(64, sizeof(*b->set) * nsets);
	if (b->set == NULL)
		goto nomem;
	memset(b->set, 0, sizeof(*b->set) * nsets);
	b->k0 = k0;
	b->k1 = k1;
	b->conf = *c;
	b->st = st;
	b->set_mask = nsets - 1;
	b->mask = c->prefix >= 32 ? UINT32_MAX : ~(UINT32_MAX >> c->prefix);
	/* Rounded up: never more than the rate. */
	b->t_ns = (1000000000ull + c->rate - 1) / c->rate;
	b->tol_ns = (uint64_t)(c->burst - 1) * b->t_ns;
	return b;
nomem:
	lb_src_budget_free(b);
	errno = ENOMEM;
	return NULL;
}

void
lb_src_budget_free(struct lb_src_budget *b)
{
	if (b == NULL)
		return;
	free(b->set);
	free(b);
}

uint32_t
lb_src_budget_count(const struct lb_src_budget *b)
{
	uint32_t n = 0;

	if (b == NULL)
		return 0;
	for (uint32_t i = 0; i <= b->set_mask; i++)
		n += (uint32_t)__builtin_popcount(b->set[i].used);
	return n;
}

bool
lb_src_budget_take_new(struct lb_src_budget *b, struct lb_src_budget_set *s,
		       uint32_t key, uint64_t now_ns)
{
	uint32_t v = 0;

	if (s->used != (1u << LB_SRC_BUDGET_WAYS) - 1) {
		while (s->used & (1u << v))
			v++;
	} else {
		/* The fullest bucket goes: the least is forgotten. */
		for (uint32_t i = 1; i < LB_SRC_BUDGET_WAYS; i++)
			if (s->tat[i] < s->tat[v])
				v = i;
		if (s->tat[v] > now_ns)
			b->st->evicted++;
	}
	s->used |= 1u << v;
	s->key[v] = key;
	/* A new source starts full: its first flow always passes (burst
	 * >= 1). */
	s->tat[v] = now_ns + b->t_ns;
	return true;
}
