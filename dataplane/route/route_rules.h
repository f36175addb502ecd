/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_ROUTE_RULES_H
#define LB_ROUTE_RULES_H

/**
 * @file
 * Content routing rules: an ordered list of rules, each naming a pool,
 * matched against the SNI of a ClientHello (tls_sni.h) or the head of an
 * HTTP/1.x request (http_head.h); the first rule that matches wins, and a
 * default action applies when none does.
 *
 * A rule is one line of text, the form lbctl will pass (under a command
 * name of its own: `route` already names IP routes):
 *
 *     sni NAME pool POOL
 *     [method METHOD] [host NAME] [path PATH | path-prefix PATH] pool POOL
 *     default pool POOL
 *     default refuse rst|404|421
 *
 * - NAME is an exact host name (`api.example.com`, lower-cased when
 *   read) or `*.` and a suffix (`*.example.com`: any name ending in
 *   `.example.com`, not `example.com` itself);
 * - PATH starts with `/` and is compared byte for byte with the request's
 *   path as sent (without its query), exactly (`path`) or as a prefix
 *   (`path-prefix`);
 * - METHOD is compared with case, as HTTP methods are (RFC 9110 9.1);
 * - a rule with `sni` matches TLS connections only, a rule with any of
 *   `method`, `host`, `path`, `path-prefix` HTTP requests only;
 * - `refuse` answers with a RST, or for HTTP with a 404 or a 421
 *   (Misdirected Request, RFC 9110 15.5.20); a TLS connection refused
 *   gets a RST whatever the kind.
 */

#include <stddef.h>
#include <stdint.h>

#include "hostname.h"
#include "http_head.h"
#include "lb/route_flat-t.h"

/** Longest path of a rule. */
#define LB_ROUTE_PATH_MAX 256
/** Most rules in a table. */
#define LB_ROUTE_RULES_MAX 4096
/** Most pools a rule may name. */
#define LB_ROUTE_POOLS_MAX 256
/** lb_route_match_*() when no rule matched: the default applies. */
#define LB_ROUTE_NO_RULE (-1)

/** What a rule compares a name or a path with. */
enum lb_route_cmp {
	LB_ROUTE_ANY,	 /**< no condition */
	LB_ROUTE_EXACT,	 /**< equal */
	LB_ROUTE_SUFFIX, /**< names: ends with ".suffix" */
	LB_ROUTE_PREFIX, /**< paths: starts with */
};

/** The protocol a rule applies to. */
enum lb_route_proto {
	LB_ROUTE_TLS,
	LB_ROUTE_HTTP,
};

/** What happens to a connection. */
enum lb_route_do {
	LB_ROUTE_POOL,	    /**< to the pool */
	LB_ROUTE_RST,	    /**< refused with a RST */
	LB_ROUTE_REFUSE_404, /**< refused with a 404 (HTTP), else a RST */
	LB_ROUTE_REFUSE_421, /**< refused with a 421 (HTTP), else a RST */
};

/** One rule as read from its text. */
struct lb_route_rule {
	uint8_t proto;	   /**< enum lb_route_proto */
	uint8_t name_cmp;  /**< SNI or Host: ANY, EXACT or SUFFIX */
	uint8_t path_cmp;  /**< ANY, EXACT or PREFIX */
	uint8_t method_len; /**< 0: any method */
	uint16_t name_len; /**< for SUFFIX, with its leading dot */
	uint16_t path_len;
	uint16_t pool;
	char method[LB_HTTP_METHOD_MAX + 1];
	char name[LB_HOSTNAME_MAX + 2]; /**< ".example.com" for SUFFIX */
	char path[LB_ROUTE_PATH_MAX + 1];
};

/** What lb_route_parse() read. */
enum lb_route_line {
	LB_ROUTE_LINE_RULE,    /**< a rule */
	LB_ROUTE_LINE_DEFAULT, /**< the default action */
};

/**
 * Reads one line of the text form; @p pools names the pools, whose
 * indexes the rule and the action carry.
 * @return LB_ROUTE_LINE_RULE (@p rule written) or LB_ROUTE_LINE_DEFAULT
 * (@p def written), or -EINVAL with a message in @p err
 */
int lb_route_parse(const char *line, const char *const *pools,
		   unsigned int nb_pools, struct lb_route_rule *rule,
		   struct lb_route_action *def, char *err, size_t errlen);

/** Rules compiled for matching; immutable once made. */
struct lb_route_table;

/**
 * Compiles @p n rules (in their order) and the default action @p def.
 * @return the table, or NULL with errno (EINVAL: over
 * LB_ROUTE_RULES_MAX rules or a rule out of its bounds; ENOMEM)
 */
struct lb_route_table *lb_route_table_create(const struct lb_route_rule *r,
					     unsigned int n,
					     const struct lb_route_action *def);

void lb_route_table_free(struct lb_route_table *t);

/**
 * The first rule matching the SNI @p sni (@p len bytes, lower-cased, as
 * tls_sni gives it; 0 for a ClientHello without one).
 * @return its index, or LB_ROUTE_NO_RULE
 */
int lb_route_match_sni(const struct lb_route_table *t, const char *sni,
		       size_t len);

/**
 * The first rule matching request head @p q.
 * @return its index, or LB_ROUTE_NO_RULE
 */
int lb_route_match_http(const struct lb_route_table *t,
			const struct lb_http_req *q);

/** The action of rule @p rule, or the default for LB_ROUTE_NO_RULE. */
struct lb_route_action lb_route_action_of(const struct lb_route_table *t,
					  int rule);

/**
 * Compiles @p n rules and the default action @p def into @p f, a block
 * without pointers that may be copied or placed in shared memory (the
 * published table, lb/dpconf-t.h), and matched without allocating.
 * @return 0, -EINVAL (over LB_ROUTE_FLAT_RULES rules, a rule out of its
 * bounds) or -ENOSPC (their strings over LB_ROUTE_FLAT_STR bytes); @p f
 * is left as it was on error.
 */
int lb_route_flat_compile(const struct lb_route_rule *r, unsigned int n,
			  const struct lb_route_action *def,
			  struct lb_route_flat *f);

/** lb_route_match_sni() on a compiled block. */
int lb_route_flat_match_sni(const struct lb_route_flat *f, const char *sni,
			    size_t len);

/** lb_route_match_http() on a compiled block. */
int lb_route_flat_match_http(const struct lb_route_flat *f,
			     const struct lb_http_req *q);

/** lb_route_action_of() on a compiled block; a block whose counts are
 * inconsistent refuses with a RST. */
struct lb_route_action lb_route_flat_action_of(const struct lb_route_flat *f,
					       int rule);

#endif /* LB_ROUTE_RULES_H */
