/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The autoscaler's /metrics families (source "scale", context "as"):
 * its counters per service, the instances by state and the instance
 * repository itself.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "autoscale_priv.h"
#include "prom.h"

/* The `pool` label: "default" for the service's own pool, as the rules
 * name it. */
static const char *
pool_label(const struct lb_as_svc *s)
{
	return s->pool[0] != '\0' ? s->pool : LB_CONF_POOL_DEFAULT;
}

static const struct {
	const char *name;
	size_t off;
	const char *help;
} as_fams[] = {
	{"lb_scale_evaluations_total", offsetof(struct lb_as_stats, evals),
	 "Autoscaler evaluations."},
	{"lb_scale_ups_total", offsetof(struct lb_as_stats, ups),
	 "Scale-up actions, automatic and manual."},
	{"lb_scale_downs_total", offsetof(struct lb_as_stats, downs),
	 "Scale-down actions, automatic and manual."},
	{"lb_scale_manual_total", offsetof(struct lb_as_stats, manual),
	 "Manual actions (scale up|down)."},
	{"lb_scale_instances_started_total",
	 offsetof(struct lb_as_stats, started),
	 "Instances asked of the orchestrator."},
	{"lb_scale_instances_joined_total",
	 offsetof(struct lb_as_stats, joined),
	 "Instances that became active (pending to active)."},
	{"lb_scale_instances_drained_total",
	 offsetof(struct lb_as_stats, drained),
	 "Instances stopped after a drain."},
	{"lb_scale_instances_failed_total",
	 offsetof(struct lb_as_stats, failed),
	 "Instances that failed to start, never became healthy or died."},
	{"lb_scale_driver_errors_total",
	 offsetof(struct lb_as_stats, drv_errors),
	 "Orchestrator commands that failed or timed out."},
	{"lb_scale_drain_timeouts_total",
	 offsetof(struct lb_as_stats, drain_timeouts),
	 "Drains ended by the drain timeout with flows left."},
	{"lb_scale_instances_adopted_total",
	 offsetof(struct lb_as_stats, adopted),
	 "Instances the orchestrator had running, adopted (not started)."},
};

static const struct {
	const char *name;
	const char *help;
} cl_fams[] = {
	{"lb_scale_leader", "1 while this lb-control holds the service's "
			    "scaling lease, 0 following."},
	{"lb_scale_term", "Term of the service's scaling lease last seen."},
};

int
lb_as_metrics(struct lb_as *as, struct lb_cmd_out *o)
{
	char l[AS_LABEL_LEN], a[LB_CMD_IP_ADDR_STRLEN];
	bool any = false;
	int rc = 0;

	if (as == NULL || as->nb_rt == 0)
		return 0;
	for (size_t f = 0; f < sizeof(as_fams) / sizeof(as_fams[0]) && rc == 0;
	     f++) {
		rc = lb_prom_family(o, as_fams[f].name, "counter",
				    as_fams[f].help);
		for (unsigned int i = 0; i < as->nb_rt && rc == 0; i++) {
			struct lb_prom_label lb[2] = {
				{"service", l},
				{"pool", pool_label(as->rt[i])}};
			uint64_t v;

			svc_label(&as->rt[i]->key, l, sizeof(l));
			memcpy(&v,
			       (const char *)&as->rt[i]->st + as_fams[f].off,
			       sizeof(v));
			rc = lb_prom_u64(o, as_fams[f].name, lb, 2, v);
		}
	}
	if (rc == 0)
		rc = lb_prom_family(o, "lb_scale_instances", "gauge",
				    "Instances of an autoscaled service by "
				    "state.");
	for (unsigned int i = 0; i < as->nb_rt && rc == 0; i++) {
		uint32_t n[LB_AS_STATE_COUNT];

		svc_label(&as->rt[i]->key, l, sizeof(l));
		lb_as_inst_count(as->rt[i], n);
		for (unsigned int k = 0; k < LB_AS_STATE_COUNT && rc == 0;
		     k++) {
			struct lb_prom_label lb[3] = {
				{"service", l},
				{"pool", pool_label(as->rt[i])},
				{"state", lb_as_state_name(k)}};

			rc = lb_prom_u64(o, "lb_scale_instances", lb, 3, n[k]);
		}
	}
	if (rc == 0)
		rc = lb_prom_family(o, "lb_scale_paused", "gauge",
				    "1 while automatic scaling is paused.");
	for (unsigned int i = 0; i < as->nb_rt && rc == 0; i++) {
		struct lb_prom_label lb[2] = {{"service", l},
					      {"pool", pool_label(as->rt[i])}};

		svc_label(&as->rt[i]->key, l, sizeof(l));
		rc = lb_prom_u64(o, "lb_scale_paused", lb, 2,
				 as->rt[i]->paused);
	}
	/* The cluster's leader and term, services with `cluster on`. */
	for (unsigned int i = 0; i < as->nb_rt; i++)
		any |= as->rt[i]->cl.on;
	for (size_t f = 0; f < 2 && any && rc == 0; f++) {
		rc = lb_prom_family(o, cl_fams[f].name, "gauge",
				    cl_fams[f].help);
		for (unsigned int i = 0; i < as->nb_rt && rc == 0; i++) {
			const struct lb_as_cluster *c = &as->rt[i]->cl;
			struct lb_prom_label lb[2] = {
				{"service", l},
				{"pool", pool_label(as->rt[i])}};

			svc_label(&as->rt[i]->key, l, sizeof(l));
			if (c->on)
				rc = lb_prom_u64(o, cl_fams[f].name, lb, 2,
						 f == 0 ? c->leader : c->term);
		}
	}
	/* The instance identifier repository, one sample per instance. */
	if (rc == 0)
		rc = lb_prom_family(o, "lb_scale_instance_info", "gauge",
				    "Instances with their origin and state "
				    "(value 1).");
	for (unsigned int i = 0; i < as->nb_rt && rc == 0; i++) {
		struct lb_as_svc *s = as->rt[i];

		svc_label(&s->key, l, sizeof(l));
		for (unsigned int j = 0; j < LB_AS_INST_MAX && rc == 0; j++) {
			const struct lb_as_inst *x = &s->inst[j];
			char id[12];
			struct lb_prom_label lb[6] = {
				{"service", l},
				{"pool", pool_label(s)},
				{"id", id},
				{"backend",
				 lb_as_inst_placed(x)
					 ? lb_cmd_fmt_ip_port(&x->ip, x->port,
							      a)
					 : ""},
				{"origin", lb_as_origin_name(x->origin)},
				{"state", lb_as_state_name(x->state)},
			};

			if (!s->used[j])
				continue;
			snprintf(id, sizeof(id), "%u", x->id);
			rc = lb_prom_u64(o, "lb_scale_instance_info", lb, 6, 1);
		}
	}
	return rc;
}

static int
as_metrics_src(void *ctx, struct lb_cmd_out *o)
{
	return lb_as_metrics(ctx, o);
}

const struct lb_prom_src lb_as_prom_src = {"scale", LB_METRICS_RANK_SCALE, "as",
					   as_metrics_src};
