/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_METRICS_PRIV_H
#define LB_METRICS_PRIV_H

/*
 * What the files of the /metrics exposition share (metrics.c: lb-control,
 * services, backends and the sources' order; metrics_worker.c: the
 * workers' counters): the snapshot every family of a scrape reads, taken
 * once so that all see the same services and backends.
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "health.h"
#include "metrics.h"
#include "prom.h"

/* Labels of one backend and its numbers. */
struct lb_metrics_be {
	char svc[LB_CTLCMD_SVC_STRLEN];
	char be[LB_CMD_IP_ADDR_STRLEN];
	bool http; /* of an http service: L7 families */
	struct lb_view_be v;
	bool hc; /* hi holds the health checker's view */
	struct lb_health_be_info hi;
};

struct lb_metrics_svc {
	char svc[LB_CTLCMD_SVC_STRLEN];
	struct lb_view_svc v;
	/** Its pools in the published table, its own first. */
	uint32_t nb_pool;
	struct lb_dpconf_pool pool[LB_CONF_MAX_POOLS + 1];
	/** Whether it routes by content: its rules in the published table
	 * and the hits of each, then the default's (hits[nb_rule]), over
	 * the workers. */
	bool routes;
	uint32_t nb_rule;
	uint64_t hits[LB_SHM_RULE_HITS];
};

struct lb_metrics_snap {
	const struct lb_ctl *ctl;
	const struct lb_shm *shm;
	uint32_t nw;
	char wname[LB_SHM_MAX_WORKERS][12];
	unsigned int nsvc, nbe;
	struct lb_metrics_svc *svc;
	struct lb_metrics_be *be;
};

/** The u64 at @p off in @p base. */
static inline uint64_t
u64_at(const void *base, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)base + off, sizeof(v));
	return v;
}

/** Sets @p l to worker @p w's label. @return 1, the labels set. */
static inline int
wlabel(const struct lb_metrics_snap *s, uint32_t w, struct lb_prom_label *l)
{
	l->name = "worker";
	l->value = s->wname[w];
	return 1;
}

/** The workers' families of @p s (source "workers"). @return 0 or -ENOMEM. */
int lb_metrics_workers(const struct lb_metrics_snap *s, struct lb_cmd_out *o);

#endif /* LB_METRICS_PRIV_H */
