/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_DPB_RUNDIR_H
#define LB_DPB_RUNDIR_H

/*
 * The EAL leaves its runtime directory behind even with --in-memory or
 * --no-shconf; the benches remove the one of their own file prefix.
 */

/**
 * Removes the files of directory @p dir (the EAL's: no subdirectories),
 * then the directory. @return 0 or a negative errno of the rmdir.
 */
int lb_dpb_rundir_remove(const char *dir);

#endif /* LB_DPB_RUNDIR_H */
