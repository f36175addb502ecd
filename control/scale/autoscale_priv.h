/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_AUTOSCALE_PRIV_H
#define LB_AUTOSCALE_PRIV_H

/*
 * What the files of the autoscaler share: its state and the helpers more
 * than one of them needs (autoscale.c: the services' settings and runtime
 * state; autoscale_inst.c: the instance repository; autoscale_eval.c:
 * decisions and their history; autoscale_opt.c: the settings' table;
 * autoscale_cmd.c: the `scale` commands; autoscale_metrics.c: /metrics).
 *
 * The configuration of every service lives in one flat struct (struct
 * lb_as_cfgset) that lb-control copies before a request and puts back
 * when the request fails; the runtime state of a service (policies,
 * guard, instances, history) follows it lazily (lb_as_reconcile()).
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "autoscale.h"

struct lb_as_cfg {
	struct lb_conf_svc_key key;
	/** The pool it scales: a named pool of the service, "" its own. */
	char pool[LB_CONF_POOL_NAME_LEN + 1];
	struct lb_as_conf c;
	bool paused;
};

struct lb_as_cfgset {
	unsigned int n;
	struct lb_as_cfg s[LB_AS_UNITS_MAX];
};

struct lb_as_svc {
	struct lb_conf_svc_key key;
	char pool[LB_CONF_POOL_NAME_LEN + 1]; /* "" the service's own */
	struct lb_as_conf conf; /* what the policies were built from */
	bool paused;
	bool deleted;
	uint64_t conf_gen;
	struct lb_spl_svc *spl;
	struct lb_inflight *ifl;
	struct lb_scale_guard *guard;
	int32_t manual; /* queued: > 0 up, < 0 down */
	uint64_t last_eval_ns;
	bool evaluated;
	bool adopted; /* instances adopted since the last evaluation */
	uint32_t next_id;
	bool used[LB_AS_INST_MAX];
	bool spl_member[LB_AS_INST_MAX];
	struct lb_as_inst inst[LB_AS_INST_MAX];
	unsigned int hist_head, hist_len;
	struct lb_as_decision hist[LB_AS_HIST];
	struct lb_as_stats st;
	struct lb_as_cluster cl;
};

struct lb_as {
	const struct lb_conf *conf;
	struct lb_as_cfgset cfg;
	uint64_t gen;
	struct lb_as_svc *rt[LB_AS_UNITS_MAX];
	unsigned int nb_rt;
	lb_as_driver_check_fn *drv_check;
	uint64_t (*now)(void *);
	void *now_arg;
	json_t **data;
	lb_as_names_fn *drv_names;
	/* `scale set`'s long help, with the names of the drivers and decay
	 * functions this program has. */
	char set_help[2560];
};

/* ---- autoscale.c ---- */

/** The configuration of pool @p pool ("" the service's own) of service
 * @p k in @p cs, or NULL. */
struct lb_as_cfg *lb_as_cfg_find(struct lb_as_cfgset *cs,
				 const struct lb_conf_svc_key *k,
				 const char *pool);
/** Brings the runtime states in line with the configuration. */
void lb_as_reconcile(struct lb_as *as);

/* ---- autoscale_cmd.c, autoscale_metrics.c ---- */

/** The `scale` commands (registered by autoscale.c). */
extern const struct lb_cmd_table lb_as_cmd_table;
struct lb_prom_src;
/** The /metrics source "scale" (registered by autoscale.c). */
extern const struct lb_prom_src lb_as_prom_src;

/* ---- autoscale_opt.c ---- */

/**
 * Applies the OPTION VALUE pairs of `scale set` (@p argc words of
 * @p argv) to @p c. @return 0, or a negative errno with its message in
 * @p out (@p c then half changed).
 */
int lb_as_opts_parse(struct lb_as_conf *c, int argc, char **argv,
		     struct lb_cmd_out *out);
/** Sets every option of @p c in @p conf. @return nonzero on failure. */
int lb_as_opts_json(const struct lb_as_conf *c, json_t *conf);

/* ---- helpers ---- */

/** Bytes of a service label, NUL included (with " pool NAME"). */
#define AS_LABEL_LEN 104

/** "tcp 10.0.0.1:80", "tcp [2001:db8::1]:80" into @p buf. */
static inline void
svc_label(const struct lb_conf_svc_key *k, char *buf, size_t n)
{
	struct lb_conf_ip vip = lb_conf_ip_of(k->af, k->vip, k->vip6);
	char a[LB_CMD_IP_ADDR_STRLEN];

	snprintf(buf, n, "%s %s", lb_cmd_proto_name(k->proto),
		 lb_cmd_fmt_ip_port(&vip, k->port, a));
}

/** svc_label() and, for a named pool, " pool NAME". */
static inline void
unit_label(const struct lb_conf_svc_key *k, const char *pool, char *buf,
	   size_t n)
{
	char l[64];

	svc_label(k, l, sizeof(l));
	if (pool[0] != '\0')
		snprintf(buf, n, "%.63s pool %.31s", l, pool);
	else
		snprintf(buf, n, "%s", l);
}

/** Sets @p k of @p o to @p v (taken). @return nonzero on failure. */
static inline int
jset(json_t *o, const char *k, json_t *v)
{
	return json_object_set_new(o, k, v) != 0;
}

#endif /* LB_AUTOSCALE_PRIV_H */
