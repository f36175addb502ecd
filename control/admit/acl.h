/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_ACL_H
#define LB_ACL_H

/**
 * @file
 * The source ACL's policy in lb-control, without BPF: the arguments of
 * `lbctl acl deny|allow|del`, and the automatic deny of sources that the
 * admission control keeps rejecting (docs/xdp.md). control/steer/steerctl.c
 * applies both to the XDP program's acl_v4 and acl_v6 maps.
 *
 * Automatic deny: each LB_FB_REJECT record (a source's throttle key
 * entering a worker's negative cache) counts against its source prefix,
 * IPv4 or IPv6: both families share the table, its settings and bound.
 * @c rejects records within @c window_ns deny the prefix for @c ttl_ns.
 * At most @c max prefixes are denied at once, and a bounded table (4 x
 * max slots) tracks the candidates: a flood of new sources evicts the
 * oldest candidates, never a live deny. Pure: time is passed in.
 */

#include <stdbool.h>
#include <stdint.h>

#include "lb/cmd.h"

/** What `acl deny|allow|del` asks for. */
struct lb_acl_req {
	uint8_t af;	     /**< enum lb_conf_af: prefix or prefix6 */
	uint32_t prefix;     /**< IPv4, host order, host bits zero */
	uint8_t prefix6[16]; /**< IPv6, host bits zero */
	uint8_t len;	     /**< 0..32, IPv6 0..128 */
	uint64_t ttl_ns; /**< 0: for ever */
	bool lb_only;	 /**< deny only what the dataplane would get */
};

/** Longest expiry `acl deny|allow` take: a year. */
#define LB_ACL_TTL_MAX (365ull * 24 * 3600 * 1000000000ull)

/**
 * Arguments of `acl deny`: PREFIX [expires DURATION] [lb-only]. PREFIX
 * is a.b.c.d/LEN, IPV6/LEN (LEN up to 128), or a bare address (/32,
 * /128); host bits must be zero.
 * @return 0, or -EINVAL / -ERANGE with the message in @p out.
 */
int lb_acl_parse_deny(int argc, char **argv, struct lb_acl_req *r,
		      struct lb_cmd_out *out);

/** Arguments of `acl allow`: PREFIX [expires DURATION]. */
int lb_acl_parse_allow(int argc, char **argv, struct lb_acl_req *r,
		       struct lb_cmd_out *out);

/** Arguments of `acl del`: PREFIX. */
int lb_acl_parse_del(int argc, char **argv, struct lb_acl_req *r,
		     struct lb_cmd_out *out);

/* ---- automatic deny ---- */

struct lb_acl_auto_conf {
	uint32_t rejects;   /**< records that deny; 0: off */
	uint64_t window_ns; /**< within this long */
	uint64_t ttl_ns;    /**< how long the deny lasts */
	uint32_t max;	    /**< prefixes denied at once */
};

#define LB_ACL_AUTO_TTL_DEFAULT (60ull * 1000000000ull)
#define LB_ACL_AUTO_MAX_DEFAULT 1024u
#define LB_ACL_AUTO_MAX_MAX (1u << 20)

/**
 * Parses lb-control's --acl-auto REJECTS/WINDOW[,ttl=DURATION][,max=N]
 * ("20/10s", "5/1s,ttl=5m,max=4096") into @p c; "off" turns it off.
 * @return 0, or -EINVAL with a message in @p err.
 */
int lb_acl_auto_parse(const char *spec, struct lb_acl_auto_conf *c,
		      char *err, size_t errlen);

/** What one reject record did. */
enum lb_acl_auto_verdict {
	LB_ACL_AUTO_COUNTED = 0, /**< counted; not enough yet */
	LB_ACL_AUTO_DENY,	 /**< deny the prefix now, for ttl_ns */
	LB_ACL_AUTO_DENIED,	 /**< already denied */
	LB_ACL_AUTO_FULL,	 /**< max prefixes denied: not this one */
	LB_ACL_AUTO_UNTRACKED,	 /**< no room to count it */
};

struct lb_acl_auto_stats {
	uint64_t records;   /**< reject records counted */
	uint64_t denies;    /**< prefixes denied */
	uint64_t full;	    /**< denies refused: max reached */
	uint64_t untracked; /**< records without room to count them */
	uint64_t expired;   /**< denies that ran out */
	uint32_t active;    /**< prefixes denied now */
};

struct lb_acl_auto;

/** @return the table, or NULL (errno EINVAL for a conf that is off or
 *   out of range, ENOMEM). */
struct lb_acl_auto *lb_acl_auto_create(const struct lb_acl_auto_conf *c);
void lb_acl_auto_free(struct lb_acl_auto *a);
const struct lb_acl_auto_conf *lb_acl_auto_conf(const struct lb_acl_auto *a);

/**
 * One reject of @p prefix/@p len (host order) at @p now_ns. On
 * LB_ACL_AUTO_DENY the prefix counts as denied until now + ttl_ns; the
 * caller installs the deny (or calls lb_acl_auto_forget() if it won't).
 */
enum lb_acl_auto_verdict lb_acl_auto_reject(struct lb_acl_auto *a,
					    uint32_t prefix, uint8_t len,
					    uint64_t now_ns);

/** lb_acl_auto_reject() of IPv6 prefix @p prefix/@p len (host bits
 * zero, network order). */
enum lb_acl_auto_verdict lb_acl_auto_reject6(struct lb_acl_auto *a,
					     const uint8_t prefix[16],
					     uint8_t len, uint64_t now_ns);

/** Takes back a deny found in the map (after a restart of lb-control),
 * so that it counts against max. -ENOSPC when there is no room. */
int lb_acl_auto_adopt(struct lb_acl_auto *a, uint32_t prefix, uint8_t len,
		      uint64_t until_ns);

/** lb_acl_auto_adopt() for IPv6. */
int lb_acl_auto_adopt6(struct lb_acl_auto *a, const uint8_t prefix[16],
		       uint8_t len, uint64_t until_ns);

/** Forgets @p prefix/@p len: an operator decided about it. */
void lb_acl_auto_forget(struct lb_acl_auto *a, uint32_t prefix, uint8_t len);

/** lb_acl_auto_forget() for IPv6. */
void lb_acl_auto_forget6(struct lb_acl_auto *a, const uint8_t prefix[16],
			 uint8_t len);

/** Ends the denies that ran out by @p now_ns; returns how many. */
unsigned int lb_acl_auto_expire(struct lb_acl_auto *a, uint64_t now_ns);

const struct lb_acl_auto_stats *lb_acl_auto_stats(const struct lb_acl_auto *a);

#endif /* LB_ACL_H */
