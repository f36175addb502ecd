/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Following HTTP across table switches. The header database a published
 * table carries becomes this worker's own copy, deserialized here, at
 * switch time, with a scratch of its own; until that has worked the worker
 * goes on with the database it had. Each http service's header names then
 * become its header map in the worker's L7 pool.
 */
#include <rte_log.h>

#include "dp.h"
#include "lb/hdr_conf.h"
#include "lb/http_err.h"

#define LOG(level, fmt, ...) \
	RTE_LOG(level, USER1, "worker: " fmt "\n", ##__VA_ARGS__)

_Static_assert(LB_CONF_MAX_SVCS <= LB_L7_MAPS, "one header map per service");

/* Moves the worker to the database of @p pub; false if it cannot. */
static bool
l7_db_switch(struct lb_worker *w, const struct lb_dpconf *pub)
{
	const void *blob = lb_dpconf_hdr_blob(pub);
	struct lb_hdr_db *db = NULL;
	struct lb_hdr_scratch *scr = NULL;
	const struct lb_hdr_db *use = w->dp->hdb;

	if (blob != NULL) {
		db = lb_hdr_db_deserialize(blob, pub->hdr_len);
		use = db;
	}
	if (use != NULL)
		scr = lb_hdr_scratch_alloc(use);
	if (scr == NULL || lb_l7_set_db(w->l7, use, scr) != 0) {
		lb_hdr_scratch_free(scr);
		lb_hdr_db_free(db);
		return false;
	}
	lb_hdr_scratch_free(w->hscr);
	lb_hdr_db_free(w->hdb);
	w->hscr = scr;
	w->hdb = db;
	w->hdr_id = pub->hdr_id;
	return true;
}

void
lb_worker_l7_switch(struct lb_worker *w, const struct lb_dpconf *pub)
{
	const struct lb_hdr_cfg *cfg;

	if (w->l7 == NULL)
		return;
	if (pub->hdr_id != w->hdr_id && !l7_db_switch(w, pub)) {
		/* Header maps of the new names against the old database:
		 * names it lacks are not read until a table brings them. */
		LOG(ERR,
		    "worker %u: cannot load the header database of table "
		    "%lu; scanning with the previous one",
		    w->wid, (unsigned long)pub->gen);
		w->st.l7_db_errors++;
	}
	cfg = lb_hdr_db_cfg(w->hdb != NULL ? w->hdb : w->dp->hdb);
	for (uint32_t s = 0; s < pub->nb_svc; s++) {
		char paths[LB_HTTP_ERR_PATHS][LB_HTTP_ERR_PATH_MAX + 1];
		struct lb_hdr_map m;
		int n;

		if (pub->svc[s].state == LB_SVC_EMPTY || !pub->svc[s].opts.http)
			continue;
		lb_hdr_conf_map(cfg, &pub->svc[s].opts, &m);
		lb_l7_set_map(w->l7, s, &m);
		n = lb_http_err_paths(pub->svc[s].opts.err_exclude, paths);
		lb_l7_set_excl(w->l7, s, paths, n > 0 ? (unsigned int)n : 0);
	}
}
