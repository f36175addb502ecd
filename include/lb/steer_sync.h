/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_STEER_SYNC_H
#define LB_STEER_SYNC_H

/**
 * @file
 * The steering rules a published table calls for, and bringing the
 * pinned steer_rules map in line with them. lb-dataplane does it once
 * with its boot configuration, lb-control on every publish: the map then
 * holds exactly the rules of the configuration in force, whoever wrote
 * it last.
 *
 * Which rules (docs/xdp.md): the dataplane's own addresses (`addr`), its
 * SNAT addresses and its VIPs get a whole-address rule (every IPv4 packet
 * and ARP for it), unless the host has the address too; then a VIP gets
 * one port rule per service and a SNAT address a range rule per protocol
 * over the SNAT ports, and a shared `addr` gets none (the kernel keeps it
 * and answers ARP for it). Services removed from the configuration whose
 * flows still run (LB_SVC_DELETED) keep their rules until their slot is
 * freed, so a drain finishes.
 *
 * IPv6 is the same with its own map (steer_rules6): the IPv6 `addr`
 * and `snat` addresses and the IPv6 services' VIPs, whole unless the
 * host has the address on a steered interface.
 */

#include <stddef.h>
#include <stdint.h>

#include "lb/dpconf.h"
#include "lb/steer.h"

/** Most rules a table can call for: each address, two ranges per SNAT
 * address, one rule per service. */
#define LB_STEER_SYNC_MAX \
	(LB_CONF_MAX_ADDRS + 2 * LB_CONF_MAX_SNATS + LB_CONF_MAX_SVCS)

/**
 * The rules of @p c, without duplicates, into @p out (room for
 * LB_STEER_SYNC_MAX).
 * @param host the host's own IPv4 addresses (network order), @p nb_host
 *   of them: lb_steer_host_addrs().
 * @return the number of rules.
 */
size_t lb_steer_rules_of(const struct lb_dpconf *c, const uint32_t *host,
			 size_t nb_host, struct lb_steer_rule *out);

/**
 * The IPv4 addresses the kernel has on the interfaces @p ifindex (in the
 * caller's network namespace), at most @p max: the addresses the host
 * shares with the dataplane on its NICs. Addresses of other interfaces
 * (the dataplane's exception path taps, loopback, management NICs) do not
 * count: steering them whole on these NICs takes nothing from the host.
 * @return how many, or a negative errno.
 */
int lb_steer_host_addrs(const int *ifindex, size_t nb_if, uint32_t *out,
			size_t max);

/** What lb_steer_sync() did. */
struct lb_steer_sync_res {
	uint32_t added;
	uint32_t removed;
	uint32_t kept;
};

/**
 * Makes the rules of @p s exactly @p want: removes the others (a rule of
 * another kind counts as another rule), then adds the missing ones. Rules
 * added by hand (lb-steer) are removed too: the configuration owns them.
 * @return 0, or the first error (the map then holds part of the change;
 *   the next sync finishes it).
 */
int lb_steer_sync(struct lb_steer *s, const struct lb_steer_rule *want,
		  size_t n, struct lb_steer_sync_res *res);

/** lb_steer_rules_of(), then lb_steer_sync(). */
int lb_steer_sync_dpconf(struct lb_steer *s, const struct lb_dpconf *c,
			 const uint32_t *host, size_t nb_host,
			 struct lb_steer_sync_res *res);

/* ---- IPv6 (steer_rules6) ---- */

/** lb_steer_rules_of() for IPv6: @p host are the host's IPv6 addresses
 * (lb_steer_host_addrs6()); room for LB_STEER_SYNC_MAX in @p out. */
size_t lb_steer_rules6_of(const struct lb_dpconf *c, const uint8_t (*host)[16],
			  size_t nb_host, struct lb_steer_rule6 *out);

/** lb_steer_host_addrs() for IPv6 (link-local ones included). */
int lb_steer_host_addrs6(const int *ifindex, size_t nb_if, uint8_t (*out)[16],
			 size_t max);

/** lb_steer_sync() for steer_rules6; -EOPNOTSUPP on maps pinned without
 * IPv6. */
int lb_steer_sync6(struct lb_steer *s, const struct lb_steer_rule6 *want,
		   size_t n, struct lb_steer_sync_res *res);

/** lb_steer_rules6_of(), then lb_steer_sync6(). */
int lb_steer_sync6_dpconf(struct lb_steer *s, const struct lb_dpconf *c,
			  const uint8_t (*host)[16], size_t nb_host,
			  struct lb_steer_sync_res *res);

#endif /* LB_STEER_SYNC_H */
