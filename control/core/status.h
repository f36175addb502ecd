/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_STATUS_H
#define LB_STATUS_H

/**
 * @file
 * What the status page shows, as JSON: lb-control's views of the
 * dataplane (the data of its read-only commands: `service list`,
 * `backend list`, `governor show`, `scale show` and `scale history`,
 * `stats`) and the last minutes of time series it samples once a
 * second into a ring taken at start (control/status/tsring.h): for each
 * service its new flows per second, its SPL load and thresholds, the
 * backends taking new flows and the governor's multiplier; for each
 * backend its share of the service's new flows, its SPL, its p99
 * latency and its errors per second.
 *
 * Read-only: the views run only the commands above, whatever is asked.
 * Not thread-safe; lb-control's one thread calls it.
 */

#include <stdint.h>

#include "ctlcmd.h"
#include "lb/cmd.h"

/** Samples kept: five minutes at one a second. */
#define LB_STATUS_POINTS 300u
/** Services and backends with a history; beyond, the least recently
 * seen give their place. */
#define LB_STATUS_ENTITIES 512u
/** Time between two samples, ns. */
#define LB_STATUS_INTERVAL_NS 1000000000ull

/** The metrics of a service's series, in their JSON order. */
enum lb_status_svc_metric {
	LB_STATUS_SVC_FLOWS, /**< "flows_per_s": new flows a second */
	LB_STATUS_SVC_LOAD,  /**< "load": SPL total load indicator */
	LB_STATUS_SVC_LOWER, /**< "lower": its scale-in threshold */
	LB_STATUS_SVC_UPPER, /**< "upper": its scale-out threshold */
	LB_STATUS_SVC_INST,  /**< "instances": backends taking new flows */
	LB_STATUS_SVC_GOV_M, /**< "gov_m": the governor's multiplier */
	LB_STATUS_SVC_NB,
};

/** The metrics of a backend's series, in their JSON order. */
enum lb_status_be_metric {
	LB_STATUS_BE_SHARE,  /**< "share": of the service's new flows */
	LB_STATUS_BE_SPL,    /**< "spl": latest reported SPL */
	LB_STATUS_BE_P99,    /**< "p99_ms": 99th percentile latency */
	LB_STATUS_BE_ERRORS, /**< "errors_per_s": failed trials and 5xx */
	LB_STATUS_BE_NB,
};

struct lb_status;

/**
 * The status of @p ctl, whose commands run through @p reg (built with
 * @p ctl bound as "ctl"). @return it, or NULL with errno ENOMEM.
 */
struct lb_status *lb_status_create(struct lb_ctl *ctl, struct lb_cmd_reg *reg);

void lb_status_free(struct lb_status *s);

/**
 * Takes a sample when LB_STATUS_INTERVAL_NS passed since the last one
 * (@p now_ns monotonic; @p wall_ms the time shown). Does nothing while
 * no dataplane is attached. @return 1 when it sampled, else 0.
 */
int lb_status_tick(struct lb_status *s, uint64_t now_ns, uint64_t wall_ms);

/** Samples one now, whatever the time of the last one. */
void lb_status_sample(struct lb_status *s, uint64_t now_ns, uint64_t wall_ms);

/**
 * View @p name as JSON text into @p out: "services", "backends",
 * "governor", "scale", "stats", "series", or "status" (all of them but
 * "series" in one object under their names, and "time_ms"). "series"
 * holds the samples taken after @p since_ms (0: all). A view whose
 * command is not there (or fails) is null. @return 0, -ENOENT for an
 * unknown view, -ENOMEM.
 */
int lb_status_json(struct lb_status *s, const char *name, uint64_t since_ms,
		   uint64_t wall_ms, struct lb_cmd_out *out);

/**
 * What the metrics listener serves at @p path besides /metrics: the
 * page's files ("/", "/status.css", "/status.js") and the views at
 * "/api/v1/NAME", @p since the query argument "since" (or NULL); *@p type
 * is set to the Content-Type. @return 0, -ENOENT for any other path,
 * -EINVAL for a @p since that is not a number of ms (the message in
 * @p out), -ENOMEM.
 */
int lb_status_page(struct lb_status *s, const char *path, const char *since,
		   uint64_t wall_ms, const char **type, struct lb_cmd_out *out);

/** The names lb_status_json() knows, NULL-terminated. */
extern const char *const lb_status_views[];

/** Samples refused for want of an entity slot. */
uint64_t lb_status_refused(const struct lb_status *s);

#endif /* LB_STATUS_H */
