/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_SCALE_PRIV_H
#define LB_SCALE_PRIV_H

/*
 * lb-control's scale runtime: on every tick, for each autoscaled service,
 * it keeps the instance repository in line with the configured backends,
 * collects its orchestrator driver's events (instances up, stopped,
 * exited), makes pending instances active once they are healthy, ends
 * drains, evaluates the autoscaler when due and carries out its actions
 * (and the queued manual ones) through the driver. Changes to the
 * backends go into the desired configuration; @p commit publishes and
 * saves it.
 *
 * Until a backend has a health check of its own, an instance is healthy
 * when a TCP connection to it succeeds (made from inside its network
 * namespace for the process driver's netns instances).
 */

#include <stdint.h>

#include "ctlcmd.h"

struct lb_scale;

/** Publishes and saves the desired configuration. */
typedef int lb_scale_commit_fn(void *ctx);

/** The runtime over @p ctl (its conf, view and autoscaler). */
struct lb_scale *lb_scale_create(struct lb_ctl *ctl, lb_scale_commit_fn *commit,
				 void *ctx);

struct lb_leader;

/**
 * Scales the services with `cluster on` together with the other
 * lb-controls on @p ld's Redis (control/scale/leader.h): one of them,
 * the holder of the service's lease, decides and orchestrates; the
 * others apply its instance list. Without it those services scale
 * alone. The runtime does not free @p ld.
 */
void lb_scale_set_cluster(struct lb_scale *sc, struct lb_leader *ld);

/** One tick at monotonic @p now_ns. */
void lb_scale_tick(struct lb_scale *sc, uint64_t now_ns);

/** Stops every orchestrated instance (waiting up to 10 s) and frees. */
void lb_scale_free(struct lb_scale *sc);

#endif /* LB_SCALE_PRIV_H */
