/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The PROXY protocol of a service (docs/configuration.md, "PROXY
 * protocol"): whether its backends get the client's address in a header
 * before the client's bytes, and which version. A table of its own since
 * it relates to options of other tables that cannot work with it.
 */
#include <errno.h>

#include "lb/svc_opt.h"

static const char *const pp_names[] = {
	[LB_CONF_PP_OFF] = "off",
	[LB_CONF_PP_V1] = "v1",
	[LB_CONF_PP_V2] = "v2",
};

static int
proxy_check(const struct lb_svc_opt_ctx *x, const struct lb_conf_svc_opts *o,
	    struct lb_cmd_out *out)
{
	const char *v = pp_names[o->proxy_proto];

	if (o->proxy_proto == LB_CONF_PP_OFF)
		return 0;
	/* Version 1 has no form for UDP; version 2 goes in every
	 * datagram. */
	if (x->proto != LB_CONF_PROTO_TCP && o->proxy_proto == LB_CONF_PP_V1)
		return lb_cmd_error(out, -EINVAL,
				    "proxy-protocol v1 has no form for udp; use "
				    "v2");
	/* Requests refused per request are reset and answered in the
	 * client's sequence space, which the header shifts. */
	if (o->http)
		return lb_cmd_error(out, -EINVAL,
				    "proxy-protocol %s cannot be combined with "
				    "http",
				    v);
	/* An http check sends a bare request, which a backend that
	 * requires the header refuses: every backend would be down. */
	if (o->check.type == LB_CONF_CHECK_HTTP)
		return lb_cmd_error(
			out, -EINVAL,
			"proxy-protocol %s cannot be combined with "
			"check http (its requests carry no header); "
			"use check tcp",
			v);
	return 0;
}

static const struct lb_svc_opt proxy_opts[] = {
	{
		.name = "proxy-protocol",
		.owner = "proxy",
		.type = LB_SVC_OPT_ENUM,
		LB_SVC_OPT_FIELD(proxy_proto),
		LB_SVC_OPT_NAMES(pp_names),
		.help = "send the PROXY protocol header (haproxy's "
			"proxy-protocol.txt, version 1 text or version 2 "
			"binary) to the backend, so that it sees the client's "
			"address and port and the VIP's: on tcp services "
			"as soon as the client completes its handshake, on "
			"udp services (v2 only) in front of every datagram; "
			"not with `http` nor `check http`",
	},
};

static const struct lb_svc_opt_table proxy_tab = {
	.name = "proxy",
	.rank = 95,
	.opt = proxy_opts,
	.nb_opt = sizeof(proxy_opts) / sizeof(proxy_opts[0]),
	.check = proxy_check,
};
LB_SVC_OPT_REGISTER(proxy_tab)
