/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Options of the overload governor and of the answer to a refused request
 * (overload-throttling-patent, docs/admission.md): rows made from
 * LB_CONF_GOV_LIST, whose ids index struct lb_conf_svc_opts.gov.
 */
#include <errno.h>

#include "lb/svc_opt.h"

/* The reference's text of each option, by id. */
#define HELP_ON                                                                \
	"the overload governor of an `http` service: requests are throttled "  \
	"with probability min(1, M x P / 100) by priority rank P"
#define HELP_IDEAL "the governor's ideal request rate mode"
#define HELP_INTERVAL "length of a governor window"
#define HELP_WINDOW "windows in the moving share of QoS misses"
#define HELP_OVERLOAD                                                          \
	"share of QoS misses, in %, above which the service is overloaded"
#define HELP_T "T: how much the multiplier M rises in an overloaded window"
#define HELP_R                                                                 \
	"R: how much M falls after gov-calm calm windows; at most gov-raise"
#define HELP_K "K: calm windows before M falls"
#define HELP_MIN_SAMPLES "requests a window needs to count"
#define HELP_PRIO "rank of requests without X-Priority"
#define HELP_STATUS "status of the answer to a refused request: 503 or 429"
#define HELP_RETRY "Retry-After of the answer to a refused request, in seconds"

#define GOV_ROW(id, kw, ty, lo, hi, d)                                         \
	LB_SVC_OPT_XROW("gov", gov[LB_CONF_GOV_##id], kw, ty, lo, hi, d,       \
			HELP_##id)

static const struct lb_svc_opt gov_opts[LB_CONF_GOV_NB] = {
	LB_CONF_GOV_LIST(GOV_ROW)};

static int
gov_check(const struct lb_svc_opt_ctx *x, const struct lb_conf_svc_opts *o,
	  struct lb_cmd_out *out)
{
	const uint64_t *g = o->gov;

	(void)x;
	if (g[LB_CONF_GOV_STATUS] != 503 && g[LB_CONF_GOV_STATUS] != 429)
		return lb_cmd_error(out, -EINVAL,
				    "reject-status must be 503 or 429");
	if (g[LB_CONF_GOV_R] > g[LB_CONF_GOV_T])
		return lb_cmd_error(out, -EINVAL,
				    "gov-release must not exceed gov-raise");
	if (g[LB_CONF_GOV_ON] && !o->http)
		return lb_cmd_error(out, -EINVAL, "governor needs http");
	return 0;
}

static const struct lb_svc_opt_table gov_tab = {
	.name = "gov",
	.rank = 20,
	.opt = gov_opts,
	.nb_opt = LB_CONF_GOV_NB,
	.check = gov_check,
};
LB_SVC_OPT_REGISTER(gov_tab)
