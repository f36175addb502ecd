/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_STEERCTL_H
#define LB_STEERCTL_H

/**
 * @file
 * lb-control's side of the XDP steering program (docs/xdp.md): it opens
 * the maps the dataplane pinned, keeps the steering rules in step with
 * every published table, runs the source ACL (`lbctl acl ...`, automatic
 * denies of sources the admission control keeps rejecting, collection of
 * expired entries) and shows the program's counters in `lbctl stats` and
 * /metrics. Both families: steer_rules and acl_v4 for IPv4, steer_rules6
 * and acl_v6 for IPv6.
 *
 * The ACL lives in the pinned map itself: it outlives lb-control and the
 * dataplane, and a restarted lb-control finds it there (automatic denies
 * included, which count against the bound again). Without maps (the
 * dataplane's ports are not net_af_xdp, or its maps are not pinned) the
 * acl commands say so and change nothing.
 */

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "acl.h"
#include "lb/cmd.h"
#include "lb/dpconf.h"
#include "lb/fb.h"
#include "lb/steer.h"

struct lb_steerctl;

/**
 * @param autoc automatic deny settings; NULL or rejects 0: off.
 * @param data where commands leave their JSON data (struct lb_ctl.data).
 * @return NULL with errno set.
 */
struct lb_steerctl *lb_steerctl_create(const struct lb_acl_auto_conf *autoc,
				       json_t **data);
void lb_steerctl_free(struct lb_steerctl *sc);

/*
 * `acl deny|allow|del|list` register themselves (LB_CMD_REGISTER(),
 * table "steer") with the context "steer", a struct lb_steerctl.
 */

/**
 * Opens the maps pinned in @p pin_dir ("" or NULL: the dataplane has
 * none), with the host's addresses on the steered interfaces (they
 * decide whole-address or port rules, include/lb/steer_sync.h), and
 * takes back the automatic denies found there.
 * @return 0 (also without maps), or the error of opening them.
 */
int lb_steerctl_attach(struct lb_steerctl *sc, const char *pin_dir,
		       const uint32_t *host, size_t nb_host);

/** lb_steerctl_attach() on a handle of the caller's (tests); @p s is
 * the module's from now on. */
int lb_steerctl_attach_handle(struct lb_steerctl *sc, struct lb_steer *s,
			      const uint32_t *host, size_t nb_host);

/**
 * The host's IPv6 addresses on the steered interfaces (at most 64), for
 * the IPv6 rules as @p host of lb_steerctl_attach() is for IPv4's; kept
 * across attaches.
 */
int lb_steerctl_set_host6(struct lb_steerctl *sc, const uint8_t (*host)[16],
			  size_t nb_host);

/** Lets go of the maps (the dataplane went away). */
void lb_steerctl_detach(struct lb_steerctl *sc);

/** Whether maps are attached. */
int lb_steerctl_attached(const struct lb_steerctl *sc);

/** Syncs the steering rules with table @p c (lb_steer_sync()). */
int lb_steerctl_sync(struct lb_steerctl *sc, const struct lb_dpconf *c);

/**
 * Feedback records: the LB_FB_REJECT ones count against their source for
 * the automatic deny; @p c, the table in force, gives the prefix length
 * of services keyed by prefix. Others are ignored.
 */
void lb_steerctl_feed(struct lb_steerctl *sc, const struct lb_fb *r,
		      unsigned int n, const struct lb_dpconf *c,
		      uint64_t now_ns);

/** Once a second: expired ACL entries go, automatic denies end. */
void lb_steerctl_tick(struct lb_steerctl *sc, uint64_t now_ns);

/** The `xdp` part of `lbctl stats`: text into @p out, JSON into @p d. */
int lb_steerctl_stats(void *sc, json_t *d, struct lb_cmd_out *out);

/** The lb_xdp_* families of /metrics. */
int lb_steerctl_metrics(void *sc, struct lb_cmd_out *out);

#endif /* LB_STEERCTL_H */
