/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_INIT_H
#define LB_INIT_H

/**
 * @file
 * Self-registration of pluggable parts (schedulers, orchestrator drivers,
 * decay functions): each registers its ops table from its own file with a
 * constructor, as DPDK's RTE_INIT does, so that adding one is one new file
 * and no central list. The objects holding them must be linked whole
 * (meson `link_whole`): a linker drops archive members nobody references,
 * and their constructors with them.
 */

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/** Declares @p fn as a function run before main(). */
#define LB_INIT(fn) static void __attribute__((constructor, used)) fn(void)

/**
 * Aborts when the registration of @p name, a @p kind, failed with @p rc: a
 * name taken twice or a malformed ops table is a build mistake, found at
 * the first start of any program that links it.
 */
static inline void
lb_init_check(int rc, const char *kind, const char *name)
{
	if (rc == 0)
		return;
	fprintf(stderr, "cannot register %s '%s': %s\n", kind,
		name != NULL ? name : "(null)", strerror(-rc));
	abort();
}

/** One entry of a registry: an ops table under its name. */
struct lb_init_entry {
	const char *name;
	const void *ops;
};

/** A registry of ops tables by name, kept in name order. */
struct lb_init_reg {
	struct lb_init_entry *e; /**< @p max entries */
	unsigned int n;
	unsigned int max;
};

/** The ops registered as @p name in @p r, or NULL. */
static inline const void *
lb_init_reg_find(const struct lb_init_reg *r, const char *name)
{
	for (unsigned int i = 0; name != NULL && i < r->n; i++)
		if (strcmp(r->e[i].name, name) == 0)
			return r->e[i].ops;
	return NULL;
}

/**
 * Adds @p ops as @p name, in name order, so that what lists a registry
 * does not depend on the link order that ran the constructors.
 * @return 0, -EEXIST (name taken) or -ENOSPC.
 */
static inline int
lb_init_reg_add(struct lb_init_reg *r, const char *name, const void *ops)
{
	unsigned int at;

	if (lb_init_reg_find(r, name) != NULL)
		return -EEXIST;
	if (r->n == r->max)
		return -ENOSPC;
	for (at = 0; at < r->n; at++)
		if (strcmp(name, r->e[at].name) < 0)
			break;
	memmove(&r->e[at + 1], &r->e[at], (r->n - at) * sizeof(r->e[0]));
	r->e[at] = (struct lb_init_entry){name, ops};
	r->n++;
	return 0;
}

/**
 * Writes the names in @p r to @p buf, in name order, separated by @p sep,
 * as the error about an unknown name lists them. @return the length
 * snprintf() would write.
 */
static inline int
lb_init_reg_names(const struct lb_init_reg *r, char *buf, size_t len,
		  const char *sep)
{
	size_t n = 0;

	if (len > 0)
		buf[0] = '\0';
	for (unsigned int i = 0; i < r->n; i++) {
		int w = snprintf(n < len ? buf + n : NULL,
				 n < len ? len - n : 0, "%s%s",
				 i > 0 ? sep : "", r->e[i].name);

		if (w < 0)
			return w;
		n += (size_t)w;
	}
	return (int)n;
}

#endif /* LB_INIT_H */
