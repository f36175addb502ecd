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

/* ---- metric families registered by their modules ---- */

/** Most sources one program holds. */
#define LB_PROM_SRCS_MAX 32u

/**
 * Families a module writes, registered from its own file with
 * LB_PROM_REGISTER(): the exposition (lb_prom_format_all()) has no
 * central list of them.
 */
struct lb_prom_src {
	const char *name; /**< unique */
	/** Place in the exposition, lowest first (equal: by name), so that
	 * the output does not depend on the link order. */
	unsigned int rank;
	/** The context @p fn takes, as the caller binds it. */
	const char *ctx;
	/** Appends the families. @return 0 or a negative errno. */
	int (*fn)(void *ctx, struct lb_cmd_out *out);
};

/** Ranks of lb-control's sources (control/core/metrics.h), in output order. */
enum {
	LB_METRICS_RANK_CONTROL = 10,  /**< lb-control's own counters */
	LB_METRICS_RANK_SCALE = 20,    /**< the autoscaler */
	LB_METRICS_RANK_WORKERS = 30,  /**< the dataplane's workers */
	LB_METRICS_RANK_SERVICES = 40, /**< per service */
	LB_METRICS_RANK_BACKENDS = 50, /**< per backend */
	LB_METRICS_RANK_L7 = 60,       /**< backends of http services */
	LB_METRICS_RANK_GOVERNOR = 70, /**< governors, request admission */
	LB_METRICS_RANK_XDP = 80,      /**< XDP steering */
	LB_METRICS_RANK_HEALTH = 90,   /**< health checks */
};

/** Adds @p s; @return 0, -EINVAL, -EEXIST (name taken), -ENOSPC. */
int lb_prom_src_add(const struct lb_prom_src *s);

/** Registers @p s (a `static const struct lb_prom_src`) before main(). */
#define LB_PROM_REGISTER(s)                                                    \
	LB_INIT(lb_prom_init_##s)                                              \
	{                                                                      \
		lb_init_check(lb_prom_src_add(&(s)), "metric source",          \
			      (s).name);                                       \
	}

/**
 * Appends the families of every source whose context is among the @p nb
 * of @p binds, in rank order; sources whose context is not bound (a
 * dataplane's counters while none is attached) are left out.
 * @return 0 or the first source's error.
 */
int lb_prom_format_all(const struct lb_cmd_bind *binds, unsigned int nb,
		       struct lb_cmd_out *out);

#endif /* LB_PROM_H */
