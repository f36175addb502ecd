/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_CTLCMD_H
#define LB_CTLCMD_H

/**
 * @file
 * lb-control's own commands, those that need the running dataplane:
 *
 *  - `stats`: the dataplane's counters summed and per worker, drops and
 *    malformed frames by reason, flows, feedback, table generations;
 *  - `service list`, `service show PROTO VIP:PORT`, `backend list
 *    [PROTO VIP:PORT]`: the configuration with what the dataplane does
 *    with it (state, flows, errors, packets and bytes each way, and for
 *    each backend the error count and weight every worker gives it).
 *
 * They register themselves (LB_CMD_REGISTER()) with the context "ctl",
 * a struct lb_ctl, one table per file: ctlcmd_svc.c ("ctl-services"),
 * ctlcmd_be.c ("ctl-backends"), ctlcmd_stats.c ("ctl-stats"). The
 * `addr`, `route` and `snat` lists are the conf module's; ctlcmd_data.c
 * ("ctl-lists") extends them with their data (lb_cmd_extend()). The
 * names sort after "conf", whose `service` and `backend` groups these
 * commands join, and before the tables that open groups of their own
 * ("governor", ...): `help` lists `stats` where it always has.
 *
 * Every command leaves, besides its text, a JSON object in ctl->data for
 * the API's "data" member (NULL for commands that report nothing). The
 * commands work without a dataplane too (ctl->view NULL: lb-control
 * --markdown, or waiting to attach): runtime columns are then empty.
 */

#include <stdint.h>

#include <jansson.h>

#include "cluster.h"
#include "lb/cmd.h"
#include "lb/conf.h"
#include "view.h"

/** What lb-control counts about itself (shown by `stats` and /metrics). */
struct lb_ctl_counters {
	uint64_t publishes;	 /**< tables published */
	uint64_t publish_errors; /**< changes refused by the table compiler */
	uint64_t gc_publishes;	 /**< republished to free removed slots */
	uint64_t state_writes;	 /**< state file written */
	uint64_t state_errors;	 /**< state file writes that failed */
	uint64_t api_conns;	 /**< API connections accepted */
	uint64_t api_requests;	 /**< API requests answered */
	uint64_t api_errors;	 /**< of which refused */
	uint64_t grace_ns_last;	 /**< last RCU grace period, ns */
	uint64_t grace_ns_max;	 /**< longest RCU grace period, ns */
	uint64_t attaches; /**< dataplanes attached since the first start */
	uint64_t http_requests;	  /**< metrics listener: requests */
	uint64_t http_bad_request; /**< of which with a bad argument (400) */
	uint64_t http_not_found;  /**< of which for no path served (404) */
	uint64_t http_bad_method; /**< of which not GET or HEAD (405) */
	uint64_t http_errors;	  /**< of which failed (500) */
	uint64_t status_refused;  /**< series the status page had no room for */
	struct lb_cluster_stats cluster; /**< admission's Redis tier */
};

/** The state lb-control's commands work on. */
struct lb_ctl {
	struct lb_conf *conf; /**< desired configuration */
	struct lb_view *view; /**< NULL while no dataplane is attached */
	/** The autoscaler (its instance repository), or NULL. */
	struct lb_as *as;
	/** The health checker, or NULL. */
	struct lb_health *health;
	struct lb_ctl_counters ctr;
	/** The XDP steering part of `stats` (control/steer/steerctl.c when
	 * built), with @c xdp as its argument; NULL when none. @c xdp is
	 * also the context "steer" of its /metrics families. */
	int (*xdp_stats)(void *xdp, json_t *d, struct lb_cmd_out *out);
	void *xdp;
	const char *state_path; /**< for `stats` */
	/** What the last command reports, for the API; the caller takes
	 * the reference (and sets this back to NULL). */
	json_t *data;
};

/**
 * "tcp 10.0.0.1:80": the service label used in text, JSON and metrics
 * (@p buf of LB_CTLCMD_SVC_STRLEN bytes).
 */
#define LB_CTLCMD_SVC_STRLEN 64u
char *lb_ctlcmd_svc_str(uint8_t proto, uint32_t vip, uint16_t port, char *buf);

/** The label of service @p k of either family: "tcp [2001:db8::1]:80". */
char *lb_ctlcmd_key_str(const struct lb_conf_svc_key *k, char *buf);

/** Table slot of a configured service of either family, or -1. */
int lb_ctlcmd_svc_slot(const struct lb_ctl *ctl,
		       const struct lb_conf_svc_key *k);

/**
 * lb_conf_rule_hits_fn of lb-control (@p arg its struct lb_ctl): the
 * workers' rule_hits of the service's slot, summed. -ENOTCONN without a
 * dataplane, -ENOENT for a service not in the published table.
 */
int lb_ctlcmd_rule_hits(void *arg, const struct lb_conf_svc_key *k,
			uint64_t *hits, unsigned int n);

/** Slot of service @p k of either family in @p c in @p state, or -1
 * (IPv6 services are not in the table's IPv4 hash: a scan). */
int lb_ctlcmd_svc_slot_in(const struct lb_dpconf *c,
			  const struct lb_conf_svc_key *k, uint8_t state);

#endif /* LB_CTLCMD_H */
