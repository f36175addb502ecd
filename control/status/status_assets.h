/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_STATUS_ASSETS_H
#define LB_STATUS_ASSETS_H

/*
 * The status page's files, built into lb-control (embed.py writes
 * status_assets.c from index.html, status.css and status.js): served
 * as they are, nothing fetched from elsewhere.
 */

#include <stddef.h>

struct lb_status_asset {
	const char *path; /**< "/" for index.html, else "/NAME" */
	const char *type; /**< its Content-Type */
	const char *data; /**< its bytes, NUL-terminated */
	size_t len;
};

extern const struct lb_status_asset lb_status_assets[];
extern const unsigned int lb_status_nb_assets;

/** The file served at @p path, or NULL. */
const struct lb_status_asset *lb_status_asset_find(const char *path);

#endif /* LB_STATUS_ASSETS_H */
