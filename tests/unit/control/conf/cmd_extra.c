/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `extra greet`: a command of a module that only cmd_test has. It shows
 * that adding commands is one file registering its table, with nothing
 * else to edit; production programs do not have it. Its context, named
 * "extra", is the greeting's text; its long help names the context, as
 * help built from another registry would.
 */
#include <stdio.h>

#include "lb/cmd.h"

static int
cmd_greet(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	int rc = lb_cmd_want_args(out, argc, argv, 0, 1);

	if (rc != 0)
		return rc;
	return lb_cmd_printf(out, "%s %s\n", (const char *)ctx,
			     argc == 1 ? argv[0] : "world");
}

static const struct lb_cmd_def extra_cmds[] = {
	{
		.path = "extra greet",
		.synopsis = "[NAME]",
		.help = "Greet NAME",
		.fn = cmd_greet,
	},
};

static int
extra_help(void *ctx, struct lb_cmd_def *defs, unsigned int n)
{
	static char help[64];

	snprintf(help, sizeof(help), "Says '%s'.", (const char *)ctx);
	for (unsigned int i = 0; i < n; i++)
		defs[i].long_help = help;
	return 0;
}

static const struct lb_cmd_table extra_table = {
	.name = "extra",
	.ctx = "extra",
	.defs = extra_cmds,
	.n = sizeof(extra_cmds) / sizeof(extra_cmds[0]),
	.prepare = extra_help,
};
LB_CMD_REGISTER(extra_table);
