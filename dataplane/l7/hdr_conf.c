/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The header database of a configuration: the names its http services
 * give their feedback headers, compiled and serialised for the workers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lb/hdr_conf.h"

/* The service option and the scanner kind of each header are one list. */
_Static_assert((int)LB_CONF_HDR_SPL == (int)LB_HDR_KIND_SPL &&
		       (int)LB_CONF_HDR_SPL_TIME == (int)LB_HDR_KIND_SPL_TIME &&
		       (int)LB_CONF_HDR_PRIORITY ==
			       (int)LB_HDR_KIND_PRIORITY &&
		       (int)LB_CONF_HDR_EXPECT == (int)LB_HDR_KIND_EXPECT_MS &&
		       (int)LB_CONF_HDR_ORCA == (int)LB_HDR_KIND_ORCA,
	       "enum lb_conf_hdr follows enum lb_hdr_kind");
_Static_assert(LB_CONF_HDR_NAME_MAX == LB_HDR_NAME_MAX,
	       "one longest header name");

static int
find(const struct lb_hdr_cfg *cfg, const char *name)
{
	for (unsigned int i = 0; i < cfg->nb_fields; i++)
		if (strcasecmp(cfg->fields[i].name, name) == 0)
			return (int)i;
	return -1;
}

int
lb_hdr_conf_build(const struct lb_conf *c, struct lb_hdr_cfg *cfg, char *err,
		  size_t errlen)
{
	unsigned int nhttp = 0;

	memset(cfg, 0, sizeof(*cfg));
	for (unsigned int s = 0; s < lb_conf_nb_svcs(c); s++) {
		const struct lb_conf_svc_opts *o = &lb_conf_svc_at(c, s)->opts;

		if (!o->http)
			continue;
		nhttp++;
		for (int h = 0; h < LB_CONF_HDR_NB; h++) {
			int i = find(cfg, o->hdr[h]);
			int rc;

			if (i >= 0 && cfg->fields[i].kind == (enum lb_hdr_kind)h)
				continue;
			if (i >= 0) {
				snprintf(err, errlen,
					 "header %s carries %s values for one "
					 "service and %s for another",
					 o->hdr[h],
					 lb_hdr_kind_str(cfg->fields[i].kind),
					 lb_hdr_kind_str((enum lb_hdr_kind)h));
				return -EINVAL;
			}
			rc = lb_hdr_cfg_add(cfg, o->hdr[h], (enum lb_hdr_kind)h);
			if (rc == -ENOSPC) {
				snprintf(err, errlen,
					 "more than %u distinct feedback "
					 "header names across the services",
					 LB_HDR_MAX_FIELDS);
				return rc;
			}
			if (rc < 0) {
				snprintf(err, errlen, "bad header name %s",
					 o->hdr[h]);
				return rc;
			}
		}
	}
	if (nhttp == 0)
		lb_hdr_cfg_default(cfg);
	return 0;
}

void
lb_hdr_conf_map(const struct lb_hdr_cfg *cfg, const struct lb_conf_svc_opts *o,
		struct lb_hdr_map *map)
{
	for (int h = 0; h < LB_CONF_HDR_NB; h++) {
		int i = find(cfg, o->hdr[h]);

		map->f[h] = (int8_t)(i >= 0 && cfg->fields[i].kind ==
							(enum lb_hdr_kind)h ?
					     i :
					     -1);
	}
}

int
lb_hdr_conf_blob(const struct lb_hdr_cfg *cfg, void **blob, size_t *len)
{
	struct lb_hdr_db *db = lb_hdr_db_compile(cfg);
	size_t need = 0;
	void *buf;
	int rc;

	*blob = NULL;
	*len = 0;
	if (db == NULL)
		return errno == ENOMEM ? -ENOMEM : -EINVAL;
	rc = lb_hdr_db_serialize(db, NULL, 0, &need);
	if (rc != -ENOSPC) {
		lb_hdr_db_free(db);
		return rc == 0 ? -EINVAL : rc;
	}
	buf = malloc(need);
	if (buf == NULL) {
		lb_hdr_db_free(db);
		return -ENOMEM;
	}
	rc = lb_hdr_db_serialize(db, buf, need, len);
	lb_hdr_db_free(db);
	if (rc != 0) {
		free(buf);
		return rc;
	}
	*blob = buf;
	return 0;
}
