/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_PRIVS_H
#define LB_PRIVS_H

/**
 * @file
 * lb-control's privileges after start-up.
 *
 * lb-control starts as root to attach to the dataplane's DPDK runtime,
 * bind its sockets and read its state file. Once it serves, it keeps only
 * the capabilities it, or the commands it runs, may still need, and drops
 * the rest from its effective, permitted, inheritable and ambient sets
 * and from its bounding set, so that no program it executes (an
 * orchestrator command, lb-control itself after the dataplane restarts)
 * gets them back. With no_new_privs set, no set-user-ID program or file
 * capability can raise them either.
 *
 * Capabilities are given as a bit mask, bit N for capability number N of
 * <linux/capability.h>. Only raw system calls are used (no libcap).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/** Bit of capability @p c in a mask. */
#define LB_PRIVS_BIT(c) (1ull << (c))

/** What lb_privs_drop() did. */
struct lb_privs_report {
	uint64_t before;     /**< permitted set before */
	uint64_t after;      /**< permitted set after */
	unsigned int bset_dropped; /**< capabilities removed from the bounding
				    * set */
	bool bset_denied;    /**< the bounding set could not be changed
			      * (no CAP_SETPCAP: lb-control not root) */
	bool nnp;            /**< no_new_privs is set */
};

/**
 * The capabilities lb-control keeps by default: what re-attaching to a
 * restarted dataplane (DPDK secondary start-up) and the orchestrator's
 * commands (network namespaces, instances under other users) need.
 * docs/security.md lists them and why.
 */
uint64_t lb_privs_keep_default(void);

/**
 * Parses a comma-separated list of capability names, lower case without
 * "cap_" ("net_admin,sys_admin"), "none" (empty set) or "default".
 * @return 0, or -EINVAL with a message in @p err (unknown name).
 */
int lb_privs_parse(const char *s, uint64_t *mask, char *err, size_t errlen);

/** Writes the names of the capabilities of @p mask, comma-separated. */
void lb_privs_format(uint64_t mask, char *buf, size_t len);

/**
 * Keeps only the capabilities of @p keep (those held, that is), drops the
 * others from the bounding set where permitted, clears the ambient set
 * and, if @p nnp, sets no_new_privs. Without CAP_SETPCAP the bounding set
 * stays as it is (reported, not an error): there is nothing to drop that
 * a process without capabilities could use.
 * @return 0, or a negative errno with a message in @p err.
 */
int lb_privs_drop(uint64_t keep, bool nnp, struct lb_privs_report *r,
		  char *err, size_t errlen);

/**
 * A group given by name or number (lb-control --socket-group).
 * @return 0, or -ENOENT / -EINVAL with a message in @p err.
 */
int lb_privs_group(const char *s, gid_t *gid, char *err, size_t errlen);

/** The permitted (@p which 'p'), effective ('e') or bounding ('b') set of
 * the calling thread, or 0 on failure. */
uint64_t lb_privs_current(char which);

#endif /* LB_PRIVS_H */
