/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_FUZZ_HDR_DB_H
#define LB_FUZZ_HDR_DB_H

#include "fuzz.h"
#include "lb/hdr_scan.h"

/* The header database of the targets that scan header blocks: the default
 * fields and one of each remaining kind, so that every value parser is
 * reached; compiled once per process. */
static inline void
fz_hdr_open(struct lb_hdr_db **db, struct lb_hdr_scratch **scr)
{
	struct lb_hdr_cfg cfg;

	if (*db != NULL)
		return;
	lb_hdr_cfg_default(&cfg);
	lb_hdr_cfg_add(&cfg, "X-Load", LB_HDR_KIND_DECIMAL);
	lb_hdr_cfg_add(&cfg, "X-Count", LB_HDR_KIND_UINT);
	*db = lb_hdr_db_compile(&cfg);
	*scr = *db != NULL ? lb_hdr_scratch_alloc(*db) : NULL;
	FUZZ_CHECK(*db != NULL && *scr != NULL);
}

#endif /* LB_FUZZ_HDR_DB_H */
