/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_FUZZ_SCRATCH_H
#define LB_FUZZ_SCRATCH_H

/*
 * A scratch desired configuration with the command registry lb-control
 * builds over it (conf's commands and `help`), and the checks every
 * target that feeds it commands shares.
 */

#include <stddef.h>

#include "lb/cmd.h"
#include "lb/conf.h"

struct fz_conf {
	struct lb_cmd_reg *reg;
	struct lb_conf *conf;
	struct lb_conf *backup;
};

void fz_conf_open(struct fz_conf *s);
void fz_conf_close(struct fz_conf *s);

/* Empties the configuration without reallocating it: a configuration is
 * a few hundred KiB, and a fresh one per input would dominate the run. */
void fz_conf_reset(struct fz_conf *s);

/*
 * Applies @p len bytes of commands all or nothing, as lb-control does
 * (a failing line restores the configuration as it was). Checks that the
 * configuration is valid afterwards and that an error is one line
 * starting with "NAME:LINE: ".
 */
int fz_conf_apply(struct fz_conf *s, const char *text, size_t len,
		  const char *name, struct lb_cmd_out *out);

/*
 * The saved configuration, applied to an empty one, applies and saves to
 * the same text.
 */
void fz_conf_check_roundtrip(const struct fz_conf *s);

#endif /* LB_FUZZ_SCRATCH_H */
