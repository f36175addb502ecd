/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_ROUTE_FLAT_T_H
#define LB_ROUTE_FLAT_T_H

/**
 * @file
 * A service's content routing rules compiled into one block without
 * pointers (dataplane/route/route_rules.h, lb_route_flat_compile()), as
 * the published table carries them (lb/dpconf-t.h): a worker matches on
 * it in shared memory, without allocating.
 */

#include <stdint.h>

/** Most rules of a service (the configuration's LB_CONF_MAX_RULES). */
#define LB_ROUTE_FLAT_RULES 32u
/** Bytes of the names, paths and methods of a service's rules. */
#define LB_ROUTE_FLAT_STR 4096u

/**
 * A rule as matched, its strings at offsets in the table's string bytes.
 * The first bytes of its path and method (up to 8, with a mask of those
 * that count) turn most comparisons into one of 64 bits.
 */
struct lb_route_crule {
	uint64_t path_head, path_mask;
	uint64_t method_head;
	uint32_t name_hash;
	uint32_t name_off;
	uint32_t path_off;
	uint32_t method_off;
	uint16_t name_len;
	uint16_t path_len;
	uint8_t name_cmp;
	uint8_t path_cmp;
	uint8_t method_len;
	uint8_t pad;
	uint16_t idx; /**< its place in the list */
	uint16_t pad2;
};

/** What happens to a connection (enum lb_route_do and a pool index). */
struct lb_route_action {
	uint8_t what;  /**< enum lb_route_do */
	uint16_t pool; /**< with LB_ROUTE_POOL */
};

/**
 * The compiled rules: the TLS rules in list order, then the HTTP ones
 * (crule[0..nb_tls) and crule[nb_tls..nb_tls + nb_http)), the action of
 * each rule by its place in the list, the default action.
 */
struct lb_route_flat {
	uint16_t n; /**< rules */
	uint16_t nb_tls, nb_http;
	struct lb_route_action def;
	struct lb_route_crule crule[LB_ROUTE_FLAT_RULES];
	struct lb_route_action act[LB_ROUTE_FLAT_RULES];
	char str[LB_ROUTE_FLAT_STR];
};

#endif /* LB_ROUTE_FLAT_T_H */
