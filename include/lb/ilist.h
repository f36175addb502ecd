/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_ILIST_H
#define LB_ILIST_H

/**
 * @file
 * Index-linked lists over a fixed array of nodes: links are 32-bit array
 * indices, not pointers, so a list lives in memory that another process
 * maps at another address, and a node costs 8 bytes of links.
 *
 * A node's two links sit wherever its array keeps them: inside each
 * element (struct lb_flow's prev and next) or in two arrays of their own
 * (the token buckets' LRU). struct lb_ilist_links says where, and the
 * ends of a list are two indices the caller keeps where it likes (one
 * pair of fields, or two arrays of ends as the flow table's lists by
 * timeout class). Everything is static inline: with the links' places
 * known at the call, each operation compiles to the loads and stores a
 * hand-written list does.
 *
 * Two shapes over the same links:
 *  - doubly linked lists (lb_ilist_push_head(), lb_ilist_push_tail(),
 *    lb_ilist_unlink()), for LRU and expiry orders;
 *  - stacks linked through the next link alone (lb_ilist_stack_*()), for
 *    the free nodes of an array.
 *
 * No DPDK: policy modules and their unit tests use it as it is.
 */

#include <stddef.h>
#include <stdint.h>

/** The end of a list, an empty list's head and tail, an empty stack. */
#define LB_ILIST_NIL UINT32_MAX

/** Where the links of node i are: at prev and next plus i * stride. */
struct lb_ilist_links {
	uint32_t *prev; /**< node 0's link to the node before it */
	uint32_t *next; /**< node 0's link to the node after it */
	size_t stride;  /**< bytes from one node's links to the next's */
};

/**
 * The links of array @p arr whose elements hold them in the members
 * @p prev_m and @p next_m.
 */
#define LB_ILIST_LINKS(arr, prev_m, next_m)                                   \
	((struct lb_ilist_links){ &(arr)[0].prev_m, &(arr)[0].next_m,         \
				  sizeof((arr)[0]) })

/** The link of node @p i to the node before it. */
static inline uint32_t *
lb_ilist_prev(const struct lb_ilist_links *l, uint32_t i)
{
	return (uint32_t *)((char *)l->prev + (size_t)i * l->stride);
}

/** The link of node @p i to the node after it. */
static inline uint32_t *
lb_ilist_next(const struct lb_ilist_links *l, uint32_t i)
{
	return (uint32_t *)((char *)l->next + (size_t)i * l->stride);
}

/** Makes the list of ends @p head and @p tail empty. */
static inline void
lb_ilist_init(uint32_t *head, uint32_t *tail)
{
	*head = LB_ILIST_NIL;
	*tail = LB_ILIST_NIL;
}

/** Puts node @p i, in no list, first in the list @p head .. @p tail. */
static inline void
lb_ilist_push_head(const struct lb_ilist_links *l, uint32_t *head,
		   uint32_t *tail, uint32_t i)
{
	*lb_ilist_prev(l, i) = LB_ILIST_NIL;
	*lb_ilist_next(l, i) = *head;
	if (*head != LB_ILIST_NIL)
		*lb_ilist_prev(l, *head) = i;
	else
		*tail = i;
	*head = i;
}

/** Puts node @p i, in no list, last in the list @p head .. @p tail. */
static inline void
lb_ilist_push_tail(const struct lb_ilist_links *l, uint32_t *head,
		   uint32_t *tail, uint32_t i)
{
	*lb_ilist_next(l, i) = LB_ILIST_NIL;
	*lb_ilist_prev(l, i) = *tail;
	if (*tail != LB_ILIST_NIL)
		*lb_ilist_next(l, *tail) = i;
	else
		*head = i;
	*tail = i;
}

/**
 * Takes node @p i out of the list @p head .. @p tail. Its own links are
 * left as they were (a caller may still read where it was). @p head is
 * only read and written when @p i is first, @p tail when it is last: a
 * caller that finds a list's ends only then may pass NULL for the other
 * (see lb_ilist_prev() and lb_ilist_next() to tell).
 */
static inline void
lb_ilist_unlink(const struct lb_ilist_links *l, uint32_t *head,
		uint32_t *tail, uint32_t i)
{
	uint32_t p = *lb_ilist_prev(l, i), n = *lb_ilist_next(l, i);

	if (p != LB_ILIST_NIL)
		*lb_ilist_next(l, p) = n;
	else
		*head = n;
	if (n != LB_ILIST_NIL)
		*lb_ilist_prev(l, n) = p;
	else
		*tail = p;
}

/**
 * Makes nodes 0 .. @p n - 1 a stack at @p top, through their next links,
 * node 0 on top (popped first), so that an array is handed out in order.
 */
static inline void
lb_ilist_stack_fill(const struct lb_ilist_links *l, uint32_t *top, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		*lb_ilist_next(l, i) = i + 1 < n ? i + 1 : LB_ILIST_NIL;
	*top = n > 0 ? 0 : LB_ILIST_NIL;
}

/** Puts node @p i on the stack at @p top (its next link only). */
static inline void
lb_ilist_stack_push(const struct lb_ilist_links *l, uint32_t *top, uint32_t i)
{
	*lb_ilist_next(l, i) = *top;
	*top = i;
}

/** Takes the node on top of the stack @p top; LB_ILIST_NIL if empty. */
static inline uint32_t
lb_ilist_stack_pop(const struct lb_ilist_links *l, uint32_t *top)
{
	uint32_t i = *top;

	if (i != LB_ILIST_NIL)
		*top = *lb_ilist_next(l, i);
	return i;
}

#endif /* LB_ILIST_H */
