/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_STATEFILE_H
#define LB_STATEFILE_H

/**
 * @file
 * lb-control's state file: the desired configuration as commands, kept so
 * that a restarted lb-control, or a restarted dataplane, gets it back.
 *
 * A write never leaves a torn file behind: the text goes to PATH.tmp in
 * the same directory, which is flushed to disk and then renamed over
 * PATH, and the directory is flushed so that the rename itself survives
 * a power cut. A reader sees the old file or the new one, whole.
 *
 * One writer per path (lb-control refuses to run twice on one dataplane),
 * so the temporary name is fixed and a crashed write's leftover is simply
 * overwritten by the next one.
 */

#include <stddef.h>

/** Largest state file read back. */
#define LB_STATEFILE_MAX (16u << 20)

/**
 * Replaces @p path by @p len bytes of @p text, atomically and durably;
 * creates missing parent directories (mode 0755). The file gets mode
 * 0600. On error @p err receives one line and @p path is untouched.
 * @return 0 or a negative errno.
 */
int lb_statefile_write(const char *path, const char *text, size_t len,
		       char *err, size_t errlen);

/**
 * Reads @p path whole into a malloc'd, NUL-terminated @p text.
 * @return 0; -ENOENT when there is no file (not an error for a first
 *   start, so no message); -EFBIG past LB_STATEFILE_MAX; -EINVAL if it
 *   holds a NUL byte; another negative errno, with a message in @p err.
 */
int lb_statefile_read(const char *path, char **text, size_t *len, char *err,
		      size_t errlen);

/**
 * Creates @p dir and its missing parents, each new level 0755 (mkdir -p).
 * @return 0 or a negative errno.
 */
int lb_statefile_mkdirs(const char *dir);

#endif /* LB_STATEFILE_H */
