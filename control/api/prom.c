/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Prometheus text exposition 0.0.4: names checked, HELP text and label
 * values escaped, numbers in the format's spelling.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prom.h"

static int
is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

int
lb_prom_name_ok(const char *name, int label)
{
	if (name == NULL || name[0] == '\0')
		return 0;
	/* "__" names are reserved for Prometheus itself. */
	if (label && name[0] == '_' && name[1] == '_')
		return 0;
	for (const char *p = name; *p != '\0'; p++) {
		int ok = is_alpha(*p) || (!label && *p == ':') ||
			 (p != name && *p >= '0' && *p <= '9');

		if (!ok)
			return 0;
	}
	return 1;
}

/* Appends @p s with backslash and newline escaped, and '"' if @p quote. */
static int
put_escaped(struct lb_cmd_out *o, const char *s, int quote)
{
	const char *run = s;
	int rc = 0;

	for (const char *p = s; rc == 0; p++) {
		const char *esc = NULL;

		if (*p == '\\')
			esc = "\\\\";
		else if (*p == '\n')
			esc = "\\n";
		else if (quote && *p == '"')
			esc = "\\\"";
		else if (*p != '\0')
			continue;
		if (p > run)
			rc = lb_cmd_printf(o, "%.*s", (int)(p - run), run);
		if (rc == 0 && esc != NULL)
			rc = lb_cmd_printf(o, "%s", esc);
		if (*p == '\0')
			break;
		run = p + 1;
	}
	return rc;
}

int
lb_prom_family(struct lb_cmd_out *o, const char *name, const char *type,
	       const char *help)
{
	int rc;

	if (o == NULL || !lb_prom_name_ok(name, 0) || type == NULL ||
	    (strcmp(type, "counter") != 0 && strcmp(type, "gauge") != 0 &&
	     strcmp(type, "untyped") != 0))
		return -EINVAL;
	rc = lb_cmd_printf(o, "# HELP %s ", name);
	if (rc == 0)
		rc = put_escaped(o, help != NULL ? help : "", 0);
	if (rc == 0)
		rc = lb_cmd_printf(o, "\n# TYPE %s %s\n", name, type);
	return rc;
}

static int
put_head(struct lb_cmd_out *o, const char *name, const struct lb_prom_label *l,
	 unsigned int n)
{
	int rc;

	if (o == NULL || !lb_prom_name_ok(name, 0) || n > LB_PROM_LABELS_MAX ||
	    (n > 0 && l == NULL))
		return -EINVAL;
	for (unsigned int i = 0; i < n; i++)
		if (!lb_prom_name_ok(l[i].name, 1))
			return -EINVAL;
	rc = lb_cmd_printf(o, "%s", name);
	for (unsigned int i = 0; i < n && rc == 0; i++) {
		rc = lb_cmd_printf(o, "%s%s=\"", i == 0 ? "{" : ",", l[i].name);
		if (rc == 0)
			rc = put_escaped(
				o, l[i].value != NULL ? l[i].value : "", 1);
		if (rc == 0)
			rc = lb_cmd_printf(o, "\"");
	}
	if (rc == 0 && n > 0)
		rc = lb_cmd_printf(o, "}");
	return rc;
}

int
lb_prom_u64(struct lb_cmd_out *o, const char *name,
	    const struct lb_prom_label *l, unsigned int n, uint64_t v)
{
	int rc = put_head(o, name, l, n);

	return rc != 0 ? rc : lb_cmd_printf(o, " %" PRIu64 "\n", v);
}

int
lb_prom_i64(struct lb_cmd_out *o, const char *name,
	    const struct lb_prom_label *l, unsigned int n, int64_t v)
{
	int rc = put_head(o, name, l, n);

	return rc != 0 ? rc : lb_cmd_printf(o, " %" PRId64 "\n", v);
}

int
lb_prom_f64(struct lb_cmd_out *o, const char *name,
	    const struct lb_prom_label *l, unsigned int n, double v)
{
	int rc = put_head(o, name, l, n);

	if (rc != 0)
		return rc;
	if (isnan(v))
		return lb_cmd_printf(o, " NaN\n");
	if (isinf(v))
		return lb_cmd_printf(o, " %sInf\n", v > 0 ? "+" : "-");
	/* The shortest of 15..17 significant digits that reads back as the
	 * same double: 0.1 stays "0.1", nothing is lost. */
	for (int prec = 15; prec < 17; prec++) {
		char buf[32];

		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return lb_cmd_printf(o, " %s\n", buf);
	}
	return lb_cmd_printf(o, " %.17g\n", v);
}

/* ---- metric sources ---- */

static struct lb_init_entry src_e[LB_PROM_SRCS_MAX];
static struct lb_init_reg srcs = {src_e, 0, LB_PROM_SRCS_MAX};

int
lb_prom_src_add(const struct lb_prom_src *s)
{
	if (s == NULL || s->name == NULL || s->ctx == NULL || s->fn == NULL)
		return -EINVAL;
	return lb_init_reg_add(&srcs, s->name, s);
}

int
lb_prom_format_all(const struct lb_cmd_bind *binds, unsigned int nb,
		   struct lb_cmd_out *out)
{
	const struct lb_prom_src *order[LB_PROM_SRCS_MAX];
	int rc = 0;

	if (out == NULL || (binds == NULL && nb > 0))
		return -EINVAL;
	/* By rank; the registry is in name order and the sort stable. */
	for (unsigned int i = 0; i < srcs.n; i++) {
		const struct lb_prom_src *s = srcs.e[i].ops;
		unsigned int at = i;

		while (at > 0 && order[at - 1]->rank > s->rank) {
			order[at] = order[at - 1];
			at--;
		}
		order[at] = s;
	}
	for (unsigned int i = 0; i < srcs.n && rc == 0; i++) {
		for (unsigned int k = 0; k < nb; k++) {
			if (binds[k].name == NULL ||
			    strcmp(binds[k].name, order[i]->ctx) != 0)
				continue;
			rc = order[i]->fn(binds[k].ctx, out);
			break;
		}
	}
	return rc;
}
