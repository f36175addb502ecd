/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_PROM_H
#define LB_PROM_H

/**
 * @file
 * Prometheus text exposition format 0.0.4: metric families with their
 * HELP and TYPE lines and samples with escaped label values, appended to
 * a struct lb_cmd_out. The caller writes each family's samples right
 * after its header, as the format requires.
 */

#include <stdint.h>

#include "lb/cmd.h"

/** Content-Type of the exposition. */
#define LB_PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/** Most labels on one sample. */
#define LB_PROM_LABELS_MAX 8u

/** One label: its name ([a-zA-Z_][a-zA-Z0-9_]*) and any value. */
struct lb_prom_label {
	const char *name;
	const char *value;
};

/**
 * Whether @p name is a valid metric name ([a-zA-Z_:][a-zA-Z0-9_:]*) or,
 * with @p label set, a valid label name (no ':', no "__" prefix).
 */
int lb_prom_name_ok(const char *name, int label);

/**
 * Writes "# HELP name help" and "# TYPE name type"; @p type is
 * "counter", "gauge" or "untyped". Backslashes and newlines of @p help
 * are escaped.
 * @return 0, -EINVAL (bad name or type), -ENOMEM.
 */
int lb_prom_family(struct lb_cmd_out *o, const char *name, const char *type,
		   const char *help);

/**
 * Writes one sample `name{l1="v1",...} value` with @p n labels (values
 * escaped: backslash, double quote, newline).
 * @return 0, -EINVAL (bad name, label name, too many labels), -ENOMEM.
 */
int lb_prom_u64(struct lb_cmd_out *o, const char *name,
		const struct lb_prom_label *l, unsigned int n, uint64_t v);

/** lb_prom_u64() for a signed value. */
int lb_prom_i64(struct lb_cmd_out *o, const char *name,
		const struct lb_prom_label *l, unsigned int n, int64_t v);

/** lb_prom_u64() for a float: NaN, +Inf and -Inf as the format spells them. */
int lb_prom_f64(struct lb_cmd_out *o, const char *name,
		const struct lb_prom_label *l, unsigned int n, double v);

#endif /* LB_PROM_H */
