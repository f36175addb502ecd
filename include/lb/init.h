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

#endif /* LB_INIT_H */
