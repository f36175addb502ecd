/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_CMD_PRIV_H
#define LB_CMD_PRIV_H

/*
 * What the files of the command language share: the registry's entries,
 * which cmd.c (registry, dispatch, `help`) keeps and cmd_ref.c (the
 * Markdown reference and the C source of the help) reads.
 */

#include <stdbool.h>

#include "lb/cmd.h"

struct cmd_ext {
	lb_cmd_fn *fn;
	void *ctx;
};

struct cmd_ent {
	struct lb_cmd_def def;
	void *ctx;
	unsigned int nwords;
	char *pathbuf;
	const char *w[LB_CMD_PATH_MAX];
	struct cmd_ext ext[LB_CMD_EXT_MAX];
	unsigned int n_ext;
	char *long_help; /* def.long_help and the extensions', or NULL */
};

struct lb_cmd_reg {
	struct cmd_ent **ent;
	unsigned int n;
	unsigned int cap;
};

/** Whether @p d is a registry's built-in `help`. */
bool lb_cmd_is_help(const struct lb_cmd_def *d);

#endif /* LB_CMD_PRIV_H */
