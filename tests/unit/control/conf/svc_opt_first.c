/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `first-retries`: a service option that only svc_opt_test has, one row in
 * a table of its own registering itself, to show that adding an option
 * needs nothing else: it parses, checks, copies, compares, saves and
 * appears in the reference through the registry. It keeps its value in
 * `retries` with a narrower range, as an option needs a field of
 * struct lb_conf_svc_opts to live in; production programs do not have
 * it.
 */
#include "lb/svc_opt.h"

static const struct lb_svc_opt first_opts[] = {
	{
		.name = "first-retries",
		.owner = "first",
		.type = LB_SVC_OPT_UINT,
		LB_SVC_OPT_FIELD(retries),
		.max = 8,
		.arg = "N",
		.help = "trials of the first scheduler",
	},
};

static const struct lb_svc_opt_table first_tab = {
	.name = "first",
	.rank = 1000,
	.opt = first_opts,
	.nb_opt = 1,
};
LB_SVC_OPT_REGISTER(first_tab)
