/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The SYN proxy of a service (docs/configuration.md, "SYN proxy"): whether
 * the workers answer the clients' handshakes themselves with SYN cookies
 * and open the backend's connection only for a client that completed its
 * own, what they offer the client, and when `auto` turns it on and off.
 */
#include <errno.h>

#include "lb/svc_opt.h"

static const char *const synp_names[] = {
	[LB_CONF_SYNP_OFF] = "off",
	[LB_CONF_SYNP_ON] = "on",
	[LB_CONF_SYNP_AUTO] = "auto",
};

static int
synp_check(const struct lb_svc_opt_ctx *x, const struct lb_conf_svc_opts *o,
	   struct lb_cmd_out *out)
{
	if (o->synp.mode != LB_CONF_SYNP_OFF && x->proto != LB_CONF_PROTO_TCP)
		return lb_cmd_error(out, -EINVAL,
				    "synproxy needs a tcp service");
	return 0;
}

static const struct lb_svc_opt synp_opts[] = {
	{
		.name = "synproxy",
		.owner = "synproxy",
		.type = LB_SVC_OPT_ENUM,
		.flags = LB_SVC_OPT_F_UNKNOWN,
		LB_SVC_OPT_FIELD(synp.mode),
		LB_SVC_OPT_NAMES(synp_names),
		.help = "answer the clients' SYNs with SYN cookies and open the "
			"backend's connection only when the client's ACK "
			"proves the handshake, so that a SYN flood takes no "
			"flow entry and no SNAT port; `auto` turns it on per "
			"worker while its SYN rate or its unfinished handshakes "
			"pass the thresholds below, and off when both stayed "
			"below them for synproxy-calm; tcp only",
	},
	{
		.name = "synproxy-mss",
		.owner = "synproxy",
		.type = LB_SVC_OPT_UINT,
		LB_SVC_OPT_FIELD(synp.mss),
		.min = 536,
		.max = 9160,
		.def = 1460,
		.arg = "N",
		.help = "maximum segment size offered to clients in the SYN "
			"proxy's SYN-ACK: the largest payload a segment of the "
			"path from the clients to the backends carries (1460 "
			"for an MTU of 1500)",
	},
	{
		.name = "synproxy-wscale",
		.owner = "synproxy",
		.type = LB_SVC_OPT_UINT,
		LB_SVC_OPT_FIELD(synp.wscale),
		.max = 14,
		.def = 7,
		.arg = "N",
		.help = "window scale offered to clients that offer one; the "
			"backends' windows are rescaled to it when their own "
			"scale differs, so the closer it is to theirs the less "
			"precision is lost",
	},
	{
		.name = "synproxy-syn-rate",
		.owner = "synproxy",
		.type = LB_SVC_OPT_UINT,
		LB_SVC_OPT_FIELD(synp.syn_rate),
		.min = 1,
		.max = 100000000,
		.def = 20000,
		.arg = "N",
		.help = "auto: SYNs per second on one worker that turn the SYN "
			"proxy on for the service",
	},
	{
		.name = "synproxy-half-open",
		.owner = "synproxy",
		.type = LB_SVC_OPT_UINT,
		LB_SVC_OPT_FIELD(synp.half_open),
		.min = 1,
		.max = 100000000,
		.def = 1000,
		.arg = "N",
		.help = "auto: handshakes per second on one worker that began "
			"and did not complete (SYNs less completing ACKs) that "
			"turn the SYN proxy on",
	},
	{
		.name = "synproxy-calm",
		.owner = "synproxy",
		.type = LB_SVC_OPT_DURATION,
		LB_SVC_OPT_FIELD(synp.calm_ns),
		.min = 1000000000ull,
		.max = 86400000000000ull,
		.def = 10000000000ull,
		.arg = "DUR",
		.help = "auto: how long both the SYN rate and the unfinished "
			"handshakes stay below their thresholds before the SYN "
			"proxy turns off (whole seconds)",
	},
};

static const struct lb_svc_opt_table synp_tab = {
	.name = "synproxy",
	.rank = 96,
	.opt = synp_opts,
	.nb_opt = sizeof(synp_opts) / sizeof(synp_opts[0]),
	.check = synp_check,
};
LB_SVC_OPT_REGISTER(synp_tab)
