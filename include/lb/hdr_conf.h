/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_HDR_CONF_H
#define LB_HDR_CONF_H

/**
 * @file
 * The header scanner's configuration as the services define it. Each
 * `http` service names its feedback headers (struct lb_conf_svc_opts.hdr);
 * one database per published table looks for the names of all of them, so
 * a worker scans every header block once, whatever the service, and each
 * service reads only the fields it named (struct lb_hdr_map).
 *
 * lb-control compiles and serialises the database with every table it
 * publishes; lb-dataplane compiles one for its first table. Both go
 * through lb_hdr_conf_build() and lb_hdr_conf_blob(), so the two can never
 * disagree on what a configuration means.
 */

#include <stddef.h>
#include <stdint.h>

#include "lb/conf.h"
#include "lb/hdr_scan.h"

/** Where a service's feedback headers are in a database's fields. */
struct lb_hdr_map {
	/** Field index per enum lb_conf_hdr, -1 when the database lacks it. */
	int8_t f[LB_CONF_HDR_NB];
};

/**
 * The fields that the `http` services of @p c name, each distinct name
 * once, in the order of the services; the default fields if no service
 * follows HTTP.
 * @return 0; -EINVAL when one name stands for two kinds of value in
 *   different services, -ENOSPC beyond LB_HDR_MAX_FIELDS names; with a
 *   message in @p err.
 */
int lb_hdr_conf_build(const struct lb_conf *c, struct lb_hdr_cfg *cfg,
		      char *err, size_t errlen);

/** Where the headers named by @p o are among the fields of @p cfg. */
void lb_hdr_conf_map(const struct lb_hdr_cfg *cfg,
		     const struct lb_conf_svc_opts *o, struct lb_hdr_map *map);

/**
 * Compiles @p cfg and serialises the database into a malloc()ed blob
 * (*blob, *len) that lb_hdr_db_deserialize() reads back.
 * @return 0, -EINVAL (Hyperscan refused the patterns), -ENOMEM.
 */
int lb_hdr_conf_blob(const struct lb_hdr_cfg *cfg, void **blob, size_t *len);

#endif /* LB_HDR_CONF_H */
