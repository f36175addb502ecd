/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_GOVCMD_H
#define LB_GOVCMD_H

/**
 * @file
 * What lb-control shows of the overload governors and of HTTP request
 * admission (docs/admission.md): the `governor show [PROTO VIP:PORT]`
 * command (text, and JSON in ctl->data) and their /metrics families:
 *  - per service with a governor: lb_service_governor_multiplier,
 *    lb_service_governor_miss_percent, lb_service_governor_window_records,
 *    lb_service_governor_overloaded, lb_service_governor_calm_windows,
 *    lb_service_governor_requests_total{priority, result} (result
 *    "admitted" or "throttled"; priority "0".."6", "7+");
 *  - per worker: lb_http_refused_total{reason} (reason "governor",
 *    "rate"), lb_http_held_segments_total, lb_http_hold_full_total,
 *    lb_http_unrefusable_total, lb_http_refusal_resent_total.
 *
 * The command registers itself (LB_CMD_REGISTER(), table "governor",
 * context "ctl").
 */

#include "lb/cmd.h"
#include "ctlcmd.h"

/** Appends the families listed above. @return 0, -EINVAL, -ENOMEM. */
int lb_govcmd_metrics(const struct lb_ctl *ctl, struct lb_cmd_out *o);

#endif /* LB_GOVCMD_H */
