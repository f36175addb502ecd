/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A service's own options: its scheduler with the trials and the deferred
 * queue of the dispatch paper (adaptive-request-dispatch-paper), and the
 * bounds on error feedback (struct lb_sched_guard).
 */
#include <errno.h>

#include "lb/svc_opt.h"

static int
sched_check(const struct lb_svc_opt *d, const struct lb_svc_opt_ctx *x,
	    const struct lb_conf_svc_opts *o, struct lb_cmd_out *out)
{
	char names[256];

	(void)d;
	if (x->sched_known == NULL || x->sched_known(o->sched))
		return 0;
	if (x->sched_names == NULL)
		return lb_cmd_error(out, -EINVAL, "unknown scheduler '%s'",
				    o->sched);
	x->sched_names(names, sizeof(names), ", ");
	return lb_cmd_error(out, -EINVAL,
			    "unknown scheduler '%s'; expected one of %s",
			    o->sched, names);
}

/* What the ranges cannot see. */
static int
core_check(const struct lb_svc_opt_ctx *x, const struct lb_conf_svc_opts *o,
	   struct lb_cmd_out *out)
{
	char a[LB_CMD_DURATION_STRLEN], b[LB_CMD_DURATION_STRLEN];

	/* An entry would expire before its first retry (see deferq). */
	if (o->retry_gap_ns >= o->expiry_ns)
		return lb_cmd_error(out, -EINVAL,
				    "retry-gap %s must be shorter than expiry "
				    "%s",
				    lb_cmd_fmt_duration(o->retry_gap_ns, a),
				    lb_cmd_fmt_duration(o->expiry_ns, b));
	if (o->http && x->proto != LB_CONF_PROTO_TCP)
		return lb_cmd_error(out, -EINVAL, "http needs a tcp service");
	return 0;
}

/* `http` is saved here, before the options of other tables that need it
 * (governor), so that each line of `save` applies to a valid service. */
static const struct lb_svc_opt core_opts[] = {
	{
		.name = "sched",
		.owner = "sched",
		.type = LB_SVC_OPT_STR,
		.flags = LB_SVC_OPT_F_NAME,
		LB_SVC_OPT_FIELD(sched),
		.max = LB_CONF_SCHED_LEN,
		.def_str = LB_CONF_SCHED_DEFAULT,
		.arg = "NAME",
		.help = "scheduler that picks a backend for each new flow "
			"(`adaptive`: error-adaptive weights)",
		.check = sched_check,
	},
	{
		.name = "http",
		.owner = "l7",
		.type = LB_SVC_OPT_BOOL,
		.flags = LB_SVC_OPT_F_FLAG,
		LB_SVC_OPT_FIELD(http),
		.max = 1,
		.help = "follow HTTP/1.x on the flows and scan response "
			"headers "
			"(load reports, status); TCP only; `service add` takes "
			"the keyword alone, `service set` takes on or off",
	},
	{
		.name = "retries",
		.owner = "sched",
		.type = LB_SVC_OPT_UINT,
		LB_SVC_OPT_FIELD(retries),
		.max = LB_CONF_RETRIES_MAX,
		.def = LB_CONF_RETRIES_DEFAULT,
		.arg = "N",
		.help = "trials per new connection before it goes to the "
			"deferred queue; 0 means one per backend",
	},
	{
		.name = "deferq",
		.owner = "sched",
		.type = LB_SVC_OPT_UINT,
		LB_SVC_OPT_FIELD(deferq_len),
		.max = LB_CONF_DEFERQ_MAX,
		.def = LB_CONF_DEFERQ_DEFAULT,
		.arg = "LEN",
		.help = "deferred queue length per worker; 0 disables the "
			"queue (a connection that failed every trial is reset "
			"at once)",
	},
	{
		.name = "retry-gap",
		.owner = "sched",
		.type = LB_SVC_OPT_DURATION,
		LB_SVC_OPT_FIELD(retry_gap_ns),
		.max = LB_CONF_RETRY_GAP_MAX_NS,
		.def = LB_CONF_RETRY_GAP_DEFAULT_NS,
		.arg = "DUR",
		.help = "time between retries of a queued connection; 0 "
			"retries on every poll",
	},
	{
		.name = "expiry",
		.owner = "sched",
		.type = LB_SVC_OPT_DURATION,
		LB_SVC_OPT_FIELD(expiry_ns),
		.min = LB_CONF_EXPIRY_MIN_NS,
		.max = LB_CONF_EXPIRY_MAX_NS,
		.def = LB_CONF_EXPIRY_DEFAULT_NS,
		.arg = "DUR",
		.help = "longest wait in the deferred queue before a RST; must "
			"be longer than retry-gap",
	},
	{
		.name = "syn-timeout",
		.owner = "sched",
		.type = LB_SVC_OPT_DURATION,
		LB_SVC_OPT_FIELD(syn_timeout_ns),
		.min = LB_CONF_SYN_TIMEOUT_MIN_NS,
		.max = LB_CONF_SYN_TIMEOUT_MAX_NS,
		.def = LB_CONF_SYN_TIMEOUT_DEFAULT_NS,
		.arg = "DUR",
		.help = "a trial without an answer fails after this long",
	},
};

static const struct lb_svc_opt_table core_tab = {
	.name = "core",
	.rank = 10,
	.opt = core_opts,
	.nb_opt = sizeof(core_opts) / sizeof(core_opts[0]),
	.check = core_check,
};
LB_SVC_OPT_REGISTER(core_tab)

static const struct lb_svc_opt guard_opts[] = {
	{
		.name = "err-memory",
		.owner = "sched",
		.type = LB_SVC_OPT_UINT,
		LB_SVC_OPT_FIELD(err_memory),
		.min = 1,
		.max = LB_CONF_ERR_MEMORY_MAX,
		.def = LB_CONF_ERR_MEMORY_DEFAULT,
		.arg = "N",
		.help = "a success removes ceil(e/N) of a backend's error "
			"count e (1 forgets all, as the dispatch paper does)",
	},
	{
		.name = "min-volume",
		.owner = "sched",
		.type = LB_SVC_OPT_UINT,
		LB_SVC_OPT_FIELD(min_volume),
		.max = LB_CONF_MIN_VOLUME_MAX,
		.def = LB_CONF_MIN_VOLUME_DEFAULT,
		.arg = "N",
		.help = "answers a worker sees from a backend before its "
			"errors count",
	},
	{
		.name = "max-eject",
		.owner = "sched",
		.type = LB_SVC_OPT_UINT,
		LB_SVC_OPT_FIELD(max_eject),
		.min = 1,
		.max = 100,
		.def = LB_CONF_MAX_EJECT_DEFAULT,
		.arg = "PCT",
		.help = "at most this share of the eligible backends (rounded "
			"up) is weighted down by errors, the rest keep their "
			"fair share",
	},
	{
		.name = "panic",
		.owner = "sched",
		.type = LB_SVC_OPT_UINT,
		LB_SVC_OPT_FIELD(panic),
		.max = 100,
		.def = LB_CONF_PANIC_DEFAULT,
		.arg = "PCT",
		.help = "when fewer backends than this share are free of "
			"errors, errors are ignored and picks are even (0: "
			"never)",
	},
};

static const struct lb_svc_opt_table guard_tab = {
	.name = "guard",
	.rank = 40,
	.opt = guard_opts,
	.nb_opt = sizeof(guard_opts) / sizeof(guard_opts[0]),
};
LB_SVC_OPT_REGISTER(guard_tab)
