/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Options of a service's flows (docs/configuration.md, "Flow timeouts"):
 * rows made from LB_CONF_FLOW_LIST, whose ids index struct
 * lb_conf_svc_opts.flow.
 */
#include <errno.h>

#include "lb/svc_opt.h"

#define IDLE "how long a flow may stay idle in the "

/* The reference's text of each option, by id. */
#define HELP_SYN_RECV IDLE "SYN_RECV state (its handshake under way)"
#define HELP_ESTABLISHED IDLE "ESTABLISHED state"
#define HELP_CLOSING IDLE "CLOSING state (a FIN seen)"
#define HELP_TIME_WAIT IDLE "TIME_WAIT state"
#define HELP_CLOSED IDLE "CLOSED state"
#define HELP_UDP "how long a flow of a UDP service may stay idle"
#define HELP_UDP_UNREPLIED                                                     \
	"how long a flow of a UDP service may stay idle before its backend "   \
	"sent a datagram"
#define HELP_RST_RATE                                                          \
	"RSTs per second and worker answered to TCP segments without a flow "  \
	"(not SYNs, not RSTs); 0: none"
#define HELP_IDLE_RST                                                          \
	"when an idle ESTABLISHED flow expires, probe both ends so that each " \
	"gets a RST (needs `rst-rate` above 0)"

#define FLOW_ROW(id, kw, ty, lo, hi, d)                                        \
	LB_SVC_OPT_XROW("flow", flow[LB_CONF_FLOW_##id], kw, ty, lo, hi, d,    \
			HELP_##id)

static const struct lb_svc_opt flow_opts[LB_CONF_FLOW_NB] = {
	LB_CONF_FLOW_LIST(FLOW_ROW)};

static const struct lb_svc_opt_table flow_tab = {
	.name = "flow",
	.rank = 70,
	.opt = flow_opts,
	.nb_opt = LB_CONF_FLOW_NB,
};
LB_SVC_OPT_REGISTER(flow_tab)

int
lb_conf_flow_opts_print(struct lb_cmd_out *out,
			const struct lb_conf_svc_opts *o,
			const struct lb_conf_svc_opts *def)
{
	int rc = 0;

	for (unsigned int i = 0; i < LB_CONF_FLOW_NB && rc == 0; i++) {
		char v[LB_SVC_OPT_STRLEN];

		if (def != NULL && o->flow[i] == def->flow[i])
			continue;
		rc = lb_svc_opt_fmt(&flow_opts[i], o, v, sizeof(v));
		if (rc == 0)
			rc = lb_cmd_printf(out, " %s %s", flow_opts[i].name, v);
	}
	return rc;
}
