/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the index-linked lists (lb/ilist.h). Lists are written as
 * scripts of pushes and unlinks with the exact order each must leave,
 * read forwards and backwards, over both shapes the tables use: links
 * inside each element and links in two arrays of their own. A random run
 * then checks a list against a plain array model.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lb/ilist.h"
#include "lb/rng.h"

#define NODES 8
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Links inside an element, between other fields, as in struct lb_flow. */
struct elem {
	uint64_t before;
	uint32_t prev;
	uint32_t next;
	uint16_t after;
};

/* One list over either shape, and the ends a caller keeps. */
struct fixture {
	struct elem el[NODES];
	uint32_t prev[NODES], next[NODES];
	struct lb_ilist_links l;
	uint32_t head, tail;
};

static void
fixture_init(struct fixture *f, bool embedded)
{
	memset(f, 0xa5, sizeof(*f));
	f->l = embedded ? LB_ILIST_LINKS(f->el, prev, next)
			: (struct lb_ilist_links){ f->prev, f->next,
						   sizeof(f->prev[0]) };
	lb_ilist_init(&f->head, &f->tail);
}

/* The list as digits, first to last, and checked last to first. */
static void
order(struct fixture *f, char *out, size_t size)
{
	char back[NODES + 1];
	size_t n = 0, m = 0;

	for (uint32_t i = f->head; i != LB_ILIST_NIL;
	     i = *lb_ilist_next(&f->l, i)) {
		assert_true(n + 1 < size);
		out[n++] = (char)('0' + i);
	}
	out[n] = '\0';
	for (uint32_t i = f->tail; i != LB_ILIST_NIL;
	     i = *lb_ilist_prev(&f->l, i)) {
		assert_true(m < n);
		back[m++] = (char)('0' + i);
	}
	assert_int_equal(m, n);
	for (size_t k = 0; k < n; k++)
		assert_int_equal(back[k], out[n - 1 - k]);
}

/*
 * Ops: "h3" pushes node 3 first, "t3" last, "u3" unlinks it. Unlinks pass
 * NULL for an end the node is not at: lb_ilist_unlink() must not touch it.
 */
static void
run(struct fixture *f, const char *ops)
{
	for (const char *p = ops; p[0] != '\0'; p += 2) {
		uint32_t i = (uint32_t)(p[1] - '0');
		uint32_t *head, *tail;

		switch (p[0]) {
		case 'h':
			lb_ilist_push_head(&f->l, &f->head, &f->tail, i);
			break;
		case 't':
			lb_ilist_push_tail(&f->l, &f->head, &f->tail, i);
			break;
		default:
			head = *lb_ilist_prev(&f->l, i) == LB_ILIST_NIL ?
				       &f->head :
				       NULL;
			tail = *lb_ilist_next(&f->l, i) == LB_ILIST_NIL ?
				       &f->tail :
				       NULL;
			lb_ilist_unlink(&f->l, head, tail, i);
			break;
		}
	}
}

static const struct {
	const char *desc;
	const char *ops;
	const char *want;
} scripts[] = {
	{ "empty", "", "" },
	{ "one at the tail", "t5", "5" },
	{ "one at the head", "h5", "5" },
	{ "tails keep push order", "t0t1t2t3", "0123" },
	{ "heads reverse it", "h0h1h2h3", "3210" },
	{ "both ends", "t1h0t2h3", "3012" },
	{ "the only node out", "t4u4", "" },
	{ "the head out", "t0t1t2u0", "12" },
	{ "the tail out", "t0t1t2u2", "01" },
	{ "a middle node out", "t0t1t2t3u1", "023" },
	{ "all out, any order", "t0t1t2t3u2u0u3u1", "" },
	{ "reused after it left", "t0t1t2u0t0", "120" },
	{ "moved to the head (LRU use)", "t0t1t2u2h2", "201" },
	{ "moved to the tail (expiry touch)", "t0t1t2u0t0u1t1", "201" },
	{ "refilled after empty", "t0u0h7t6", "76" },
};

static void
test_scripts(void **state)
{
	(void)state;
	for (int embedded = 0; embedded < 2; embedded++) {
		for (size_t k = 0; k < ARRAY_LEN(scripts); k++) {
			struct fixture f;
			char got[NODES + 1];

			fixture_init(&f, embedded);
			run(&f, scripts[k].ops);
			order(&f, got, sizeof(got));
			if (strcmp(got, scripts[k].want) != 0)
				fail_msg("%s (%s): got \"%s\", want \"%s\"",
					 scripts[k].desc,
					 embedded ? "embedded" : "arrays", got,
					 scripts[k].want);
		}
	}
}

/* The links of an element leave its other fields as they were. */
static void
test_embedded_neighbours(void **state)
{
	struct fixture f;

	(void)state;
	fixture_init(&f, true);
	for (unsigned int i = 0; i < NODES; i++) {
		f.el[i].before = 0x1111111111111111ull * i;
		f.el[i].after = (uint16_t)(0x2222u * i);
	}
	run(&f, "t0t1t2t3t4t5t6t7u3h3u7u0");
	for (unsigned int i = 0; i < NODES; i++) {
		assert_int_equal(f.el[i].before, 0x1111111111111111ull * i);
		assert_int_equal(f.el[i].after, (uint16_t)(0x2222u * i));
	}
}

/* An unlinked node keeps its links: a caller may read where it was. */
static void
test_unlink_keeps_own_links(void **state)
{
	struct fixture f;

	(void)state;
	fixture_init(&f, false);
	run(&f, "t0t1t2u1");
	assert_int_equal(*lb_ilist_prev(&f.l, 1), 0);
	assert_int_equal(*lb_ilist_next(&f.l, 1), 2);
	assert_int_equal(f.head, 0);
	assert_int_equal(f.tail, 2);
}

static void
test_stack(void **state)
{
	struct fixture f;
	uint32_t top;

	(void)state;
	for (int embedded = 0; embedded < 2; embedded++) {
		fixture_init(&f, embedded);
		lb_ilist_stack_fill(&f.l, &top, 4);
		/* In array order, then empty. */
		for (uint32_t i = 0; i < 4; i++)
			assert_int_equal(lb_ilist_stack_pop(&f.l, &top), i);
		assert_int_equal(lb_ilist_stack_pop(&f.l, &top), LB_ILIST_NIL);
		assert_int_equal(top, LB_ILIST_NIL);
		/* Last in, first out. */
		lb_ilist_stack_push(&f.l, &top, 2);
		lb_ilist_stack_push(&f.l, &top, 0);
		lb_ilist_stack_push(&f.l, &top, 3);
		assert_int_equal(lb_ilist_stack_pop(&f.l, &top), 3);
		assert_int_equal(lb_ilist_stack_pop(&f.l, &top), 0);
		lb_ilist_stack_push(&f.l, &top, 1);
		assert_int_equal(lb_ilist_stack_pop(&f.l, &top), 1);
		assert_int_equal(lb_ilist_stack_pop(&f.l, &top), 2);
		assert_int_equal(lb_ilist_stack_pop(&f.l, &top), LB_ILIST_NIL);
	}
	/* A stack of no nodes is empty. */
	lb_ilist_stack_fill(&f.l, &top, 0);
	assert_int_equal(top, LB_ILIST_NIL);
}

/* The stack's pushes write the next link only: prev keeps its value. */
static void
test_stack_next_only(void **state)
{
	struct fixture f;
	uint32_t top;

	(void)state;
	fixture_init(&f, false);
	for (uint32_t i = 0; i < NODES; i++)
		f.prev[i] = 1000 + i;
	lb_ilist_stack_fill(&f.l, &top, NODES);
	lb_ilist_stack_push(&f.l, &top, lb_ilist_stack_pop(&f.l, &top));
	for (uint32_t i = 0; i < NODES; i++)
		assert_int_equal(f.prev[i], 1000 + i);
}

/* Random pushes and unlinks against an array kept in list order. */
static void
test_model(void **state)
{
	uint64_t seed = 0x1157ull;
	struct fixture f;
	uint32_t model[NODES], n = 0;
	bool in[NODES] = { false };

	(void)state;
	fixture_init(&f, true);
	for (int step = 0; step < 20000; step++) {
		uint32_t i = (uint32_t)(lb_splitmix64(&seed) % NODES);
		unsigned int op = (unsigned int)(lb_splitmix64(&seed) % 2);
		char got[NODES + 1], want[NODES + 1];
		char ops[3] = { 0 };

		if (in[i]) {
			uint32_t k = 0;

			while (model[k] != i)
				k++;
			memmove(&model[k], &model[k + 1],
				(n - k - 1) * sizeof(model[0]));
			n--;
			ops[0] = 'u';
		} else if (op == 0) {
			memmove(&model[1], &model[0], n * sizeof(model[0]));
			model[0] = i;
			n++;
			ops[0] = 'h';
		} else {
			model[n++] = i;
			ops[0] = 't';
		}
		in[i] = !in[i];
		ops[1] = (char)('0' + i);
		run(&f, ops);
		for (uint32_t k = 0; k < n; k++)
			want[k] = (char)('0' + model[k]);
		want[n] = '\0';
		order(&f, got, sizeof(got));
		assert_string_equal(got, want);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scripts),
		cmocka_unit_test(test_embedded_neighbours),
		cmocka_unit_test(test_unlink_keeps_own_links),
		cmocka_unit_test(test_stack),
		cmocka_unit_test(test_stack_next_only),
		cmocka_unit_test(test_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
