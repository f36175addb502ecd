/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The registry of service options and what the rows drive: defaults,
 * checks, copies, comparisons, parsing, `save` and the reference. The rows
 * themselves live with their capabilities (svc_opt_*.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lb/svc_opt.h"

static const struct lb_svc_opt_table *tabs[LB_SVC_OPT_MAX_TABLES];
static unsigned int nb_tabs, nb_opts;

const struct lb_svc_opt *
lb_svc_opt_find(const char *name)
{
	for (unsigned int t = 0; name != NULL && t < nb_tabs; t++)
		for (unsigned int i = 0; i < tabs[t]->nb_opt; i++)
			if (strcmp(tabs[t]->opt[i].name, name) == 0)
				return &tabs[t]->opt[i];
	return NULL;
}

static bool
row_ok(const struct lb_svc_opt *d)
{
	if (d->name == NULL || d->owner == NULL || d->help == NULL ||
	    d->off + d->size > sizeof(struct lb_conf_svc_opts) || d->size == 0)
		return false;
	switch (d->type) {
	case LB_SVC_OPT_UINT:
	case LB_SVC_OPT_BOOL:
	case LB_SVC_OPT_ENUM:
		if (d->type == LB_SVC_OPT_ENUM &&
		    (d->names == NULL || d->nb_names == 0))
			return false;
		if (d->flags & LB_SVC_OPT_F_FLAG && d->def != 0)
			return false;
		return d->size == 1 || d->size == 2 || d->size == 4 ||
		       d->size == 8;
	case LB_SVC_OPT_DURATION:
		return d->size == sizeof(uint64_t);
	case LB_SVC_OPT_MS:
		return d->size == sizeof(uint32_t);
	case LB_SVC_OPT_STR:
		return d->def_str != NULL && d->max < d->size;
	case LB_SVC_OPT_CUSTOM:
		return d->def_str != NULL && d->parse != NULL &&
		       d->fmt != NULL && d->max > 0;
	}
	return false;
}

int
lb_svc_opt_register(const struct lb_svc_opt_table *t)
{
	unsigned int at;

	if (t == NULL || t->name == NULL || t->opt == NULL || t->nb_opt == 0)
		return -EINVAL;
	if (nb_tabs == LB_SVC_OPT_MAX_TABLES ||
	    nb_opts + t->nb_opt > LB_SVC_OPT_MAX)
		return -ENOSPC;
	for (unsigned int i = 0; i < nb_tabs; i++)
		if (strcmp(tabs[i]->name, t->name) == 0)
			return -EEXIST;
	for (unsigned int i = 0; i < t->nb_opt; i++) {
		if (!row_ok(&t->opt[i]))
			return -EINVAL;
		if (lb_svc_opt_find(t->opt[i].name) != NULL)
			return -EEXIST;
		for (unsigned int j = 0; j < i; j++)
			if (strcmp(t->opt[i].name, t->opt[j].name) == 0)
				return -EEXIST;
	}
	/* Rank, then name: the order does not depend on the link order. */
	for (at = 0; at < nb_tabs; at++)
		if (t->rank < tabs[at]->rank ||
		    (t->rank == tabs[at]->rank &&
		     strcmp(t->name, tabs[at]->name) < 0))
			break;
	memmove(&tabs[at + 1], &tabs[at], (nb_tabs - at) * sizeof(tabs[0]));
	tabs[at] = t;
	nb_tabs++;
	nb_opts += t->nb_opt;
	return 0;
}

unsigned int
lb_svc_opt_count(void)
{
	return nb_opts;
}

unsigned int
lb_svc_opt_nb_tables(void)
{
	return nb_tabs;
}

const struct lb_svc_opt *
lb_svc_opt_at(unsigned int i)
{
	for (unsigned int t = 0; t < nb_tabs; t++) {
		if (i < tabs[t]->nb_opt)
			return &tabs[t]->opt[i];
		i -= tabs[t]->nb_opt;
	}
	return NULL;
}

/* ---- fields ---- */

static uint64_t
get_u(const struct lb_svc_opt *d, const struct lb_conf_svc_opts *o)
{
	const char *p = (const char *)o + d->off;
	uint64_t v = 0;

	switch (d->size) {
	case 1:
		v = *(const uint8_t *)p;
		break;
	case 2:
		v = *(const uint16_t *)(const void *)p;
		break;
	case 4:
		v = *(const uint32_t *)(const void *)p;
		break;
	default:
		v = *(const uint64_t *)(const void *)p;
		break;
	}
	return v;
}

static void
put_u(const struct lb_svc_opt *d, struct lb_conf_svc_opts *o, uint64_t v)
{
	char *p = (char *)o + d->off;

	switch (d->size) {
	case 1:
		*(uint8_t *)p = (uint8_t)v;
		break;
	case 2:
		*(uint16_t *)(void *)p = (uint16_t)v;
		break;
	case 4:
		*(uint32_t *)(void *)p = (uint32_t)v;
		break;
	default:
		*(uint64_t *)(void *)p = v;
		break;
	}
}

static char *
field(const struct lb_svc_opt *d, struct lb_conf_svc_opts *o)
{
	return (char *)o + d->off;
}

static const char *
cfield(const struct lb_svc_opt *d, const struct lb_conf_svc_opts *o)
{
	return (const char *)o + d->off;
}

/* "a, b or c" */
static void
names_list(const struct lb_svc_opt *d, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (unsigned int i = 0; i < d->nb_names && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s",
				      i == 0		     ? ""
				      : i + 1 == d->nb_names ? " or "
							     : ", ",
				      d->names[i]);
}

/* ---- defaults, copies, comparisons ---- */

static void
str_set(const struct lb_svc_opt *d, struct lb_conf_svc_opts *o, const char *v)
{
	memset(field(d, o), 0, d->size);
	snprintf(field(d, o), d->size, "%s", v);
}

void
lb_svc_opt_default(struct lb_conf_svc_opts *o)
{
	if (o == NULL)
		return;
	memset(o, 0, sizeof(*o));
	for (unsigned int i = 0; i < nb_opts; i++) {
		const struct lb_svc_opt *d = lb_svc_opt_at(i);

		if (d->type == LB_SVC_OPT_STR && d->parse == NULL)
			str_set(d, o, d->def_str);
		else if (d->type == LB_SVC_OPT_STR ||
			 d->type == LB_SVC_OPT_CUSTOM)
			(void)d->parse(d, d->def_str, o, NULL);
		else
			put_u(d, o, d->def);
		if (d->fix != NULL)
			d->fix(d, o);
	}
}

void
lb_svc_opt_copy(struct lb_conf_svc_opts *dst,
		const struct lb_conf_svc_opts *src)
{
	struct lb_conf_svc_opts t = *src;

	for (unsigned int i = 0; i < nb_opts; i++) {
		const struct lb_svc_opt *d = lb_svc_opt_at(i);
		char v[LB_SVC_OPT_STRLEN];

		if (d->type == LB_SVC_OPT_STR) {
			snprintf(v, sizeof(v), "%.*s", (int)d->size - 1,
				 cfield(d, src));
			str_set(d, &t, v);
		}
		if (d->fix != NULL)
			d->fix(d, &t);
	}
	*dst = t;
}

static bool
row_eq(const struct lb_svc_opt *d, const struct lb_conf_svc_opts *a,
       const struct lb_conf_svc_opts *b)
{
	if (d->eq != NULL)
		return d->eq(d, a, b);
	if (d->type == LB_SVC_OPT_STR)
		return strncmp(cfield(d, a), cfield(d, b), d->size) == 0;
	return memcmp(cfield(d, a), cfield(d, b), d->size) == 0;
}

bool
lb_svc_opt_eq(const struct lb_conf_svc_opts *a,
	      const struct lb_conf_svc_opts *b)
{
	for (unsigned int i = 0; i < nb_opts; i++)
		if (!row_eq(lb_svc_opt_at(i), a, b))
			return false;
	return true;
}

/* ---- checks ---- */

static int
range_check(const struct lb_svc_opt *d, const struct lb_conf_svc_opts *o,
	    struct lb_cmd_out *out)
{
	char a[LB_CMD_DURATION_STRLEN], b[LB_CMD_DURATION_STRLEN];
	char x[LB_CMD_DURATION_STRLEN];
	uint64_t v = get_u(d, o);

	if (d->type == LB_SVC_OPT_MS)
		v *= 1000000ull;
	if (v >= d->min && v <= d->max)
		return 0;
	if (d->type == LB_SVC_OPT_UINT)
		return lb_cmd_error(out, -ERANGE,
				    "%s %" PRIu64 " out of range %" PRIu64
				    "..%" PRIu64,
				    d->name, v, d->min, d->max);
	return lb_cmd_error(out, -ERANGE, "%s %s out of range %s..%s", d->name,
			    lb_cmd_fmt_duration(v, x),
			    lb_cmd_fmt_duration(d->min, a),
			    lb_cmd_fmt_duration(d->max, b));
}

static int
row_check(const struct lb_svc_opt *d, const struct lb_svc_opt_ctx *x,
	  const struct lb_conf_svc_opts *o, struct lb_cmd_out *out)
{
	char l[256];
	int rc = 0;

	switch (d->type) {
	case LB_SVC_OPT_UINT:
	case LB_SVC_OPT_DURATION:
	case LB_SVC_OPT_MS:
		rc = range_check(d, o, out);
		break;
	case LB_SVC_OPT_BOOL:
		if (get_u(d, o) > 1)
			rc = lb_cmd_error(out, -ERANGE,
					  "%s %" PRIu64 " is not on or off",
					  d->name, get_u(d, o));
		break;
	case LB_SVC_OPT_ENUM:
		if (get_u(d, o) < d->nb_names)
			break;
		names_list(d, l, sizeof(l));
		rc = lb_cmd_error(out, -EINVAL, "%s: expected %s", d->name, l);
		break;
	case LB_SVC_OPT_STR:
		if (memchr(cfield(d, o), '\0', d->size) == NULL)
			rc = lb_cmd_error(
				out, -ERANGE, "%s%s too long", d->name,
				d->flags & LB_SVC_OPT_F_NAME ? " name" : "");
		else if (d->flags & LB_SVC_OPT_F_NAME)
			rc = lb_cmd_parse_name(cfield(d, o), d->name, d->max,
					       out);
		break;
	case LB_SVC_OPT_CUSTOM:
		break;
	}
	if (rc == 0 && d->check != NULL)
		rc = d->check(d, x, o, out);
	return rc;
}

int
lb_svc_opt_check_all(const struct lb_svc_opt_ctx *x,
		     const struct lb_conf_svc_opts *o, struct lb_cmd_out *out)
{
	int rc = 0;

	for (unsigned int t = 0; t < nb_tabs && rc == 0; t++) {
		for (unsigned int i = 0; i < tabs[t]->nb_opt && rc == 0; i++)
			rc = row_check(&tabs[t]->opt[i], x, o, out);
		if (rc == 0 && tabs[t]->check != NULL)
			rc = tabs[t]->check(x, o, out);
	}
	return rc;
}

/* ---- parsing ---- */

static void
cmd_opt(const struct lb_svc_opt *d, bool add, struct lb_cmd_opt *c)
{
	*c = (struct lb_cmd_opt){d->name, LB_CMD_OPT_WORD, 0, d->max};
	switch (d->type) {
	case LB_SVC_OPT_UINT:
		c->type = LB_CMD_OPT_U64;
		c->min = d->min;
		break;
	case LB_SVC_OPT_DURATION:
	case LB_SVC_OPT_MS:
		c->type = LB_CMD_OPT_DURATION;
		c->min = d->min;
		break;
	case LB_SVC_OPT_BOOL:
		c->type = add && (d->flags & LB_SVC_OPT_F_FLAG)
				  ? LB_CMD_OPT_FLAG
				  : LB_CMD_OPT_BOOL;
		break;
	case LB_SVC_OPT_ENUM:
		c->type = LB_CMD_OPT_NAME;
		c->max = 16;
		break;
	case LB_SVC_OPT_STR:
		if (d->flags & LB_SVC_OPT_F_NAME)
			c->type = LB_CMD_OPT_NAME;
		break;
	case LB_SVC_OPT_CUSTOM:
		break;
	}
}

static int
apply(const struct lb_svc_opt *d, const struct lb_cmd_optval *v,
      struct lb_conf_svc_opts *o, struct lb_cmd_out *out)
{
	unsigned int w;
	char l[256];

	if (d->parse != NULL)
		return d->parse(d, v->str, o, out);
	switch (d->type) {
	case LB_SVC_OPT_MS:
		/* Whole milliseconds; a part of one rounds up. */
		put_u(d, o, (v->u + 999999) / 1000000);
		break;
	case LB_SVC_OPT_BOOL:
		put_u(d, o, v->u != 0);
		break;
	case LB_SVC_OPT_ENUM:
		for (w = 0; w < d->nb_names; w++)
			if (strcmp(v->str, d->names[w]) == 0)
				break;
		/* Kept out of range otherwise: the check names it. */
		if (w == d->nb_names && (d->flags & LB_SVC_OPT_F_UNKNOWN)) {
			names_list(d, l, sizeof(l));
			return lb_cmd_error(out, -EINVAL,
					    "unknown %s '%s': expected %s",
					    d->name, v->str, l);
		}
		put_u(d, o, w);
		break;
	case LB_SVC_OPT_STR:
		str_set(d, o, v->str);
		break;
	default:
		put_u(d, o, v->u);
		break;
	}
	return 0;
}

int
lb_svc_opt_parse(int argc, char *const *argv, bool add,
		 struct lb_conf_svc_opts *o, struct lb_cmd_out *out)
{
	struct lb_cmd_optval v[LB_SVC_OPT_MAX];
	struct lb_cmd_opt c[LB_SVC_OPT_MAX];
	int rc;

	for (unsigned int i = 0; i < nb_opts; i++)
		cmd_opt(lb_svc_opt_at(i), add, &c[i]);
	rc = lb_cmd_parse_opts(argc, argv, c, nb_opts, v, out);
	for (unsigned int i = 0; i < nb_opts && rc == 0; i++)
		if (v[i].set)
			rc = apply(lb_svc_opt_at(i), &v[i], o, out);
	return rc;
}

/* ---- output ---- */

int
lb_svc_opt_fmt(const struct lb_svc_opt *d, const struct lb_conf_svc_opts *o,
	       char *buf, size_t len)
{
	char t[LB_CMD_DURATION_STRLEN];
	uint64_t v;

	if (d->fmt != NULL)
		return d->fmt(d, o, buf, len);
	/* Strings are read as such, never as a number. */
	v = d->type != LB_SVC_OPT_STR ? get_u(d, o) : 0;
	switch (d->type) {
	case LB_SVC_OPT_DURATION:
		snprintf(buf, len, "%s", lb_cmd_fmt_duration(v, t));
		break;
	case LB_SVC_OPT_MS:
		snprintf(buf, len, "%s",
			 lb_cmd_fmt_duration(v * 1000000ull, t));
		break;
	case LB_SVC_OPT_BOOL:
		snprintf(buf, len, "%s", v ? "on" : "off");
		break;
	case LB_SVC_OPT_ENUM:
		if (v >= d->nb_names)
			return -EINVAL;
		snprintf(buf, len, "%s", d->names[v]);
		break;
	case LB_SVC_OPT_STR:
		/* As the tokenizer reads it back: a header name may start
		 * with '#', a path hold '"'. */
		if (d->flags & LB_SVC_OPT_F_NAME)
			snprintf(buf, len, "%.*s", (int)d->size, cfield(d, o));
		else if (lb_cmd_quote(cfield(d, o), buf, len) < 0)
			return -EINVAL;
		break;
	default:
		snprintf(buf, len, "%" PRIu64, v);
		break;
	}
	return 0;
}

static int
print_row(struct lb_cmd_out *out, const struct lb_svc_opt *d,
	  const struct lb_conf_svc_opts *o)
{
	char v[LB_SVC_OPT_STRLEN];

	if (d->flags & LB_SVC_OPT_F_FLAG && get_u(d, o) != 0)
		return lb_cmd_printf(out, " %s", d->name);
	if (lb_svc_opt_fmt(d, o, v, sizeof(v)) != 0)
		return lb_cmd_error(out, -EINVAL, "%s cannot be saved",
				    d->name);
	return lb_cmd_printf(out, " %s %s", d->name, v);
}

int
lb_svc_opt_print_table(struct lb_cmd_out *out, unsigned int t,
		       const struct lb_conf_svc_opts *o,
		       const struct lb_conf_svc_opts *def)
{
	int rc = 0;

	if (t >= nb_tabs)
		return -EINVAL;
	for (unsigned int i = 0; i < tabs[t]->nb_opt && rc == 0; i++)
		if (def == NULL || !row_eq(&tabs[t]->opt[i], o, def))
			rc = print_row(out, &tabs[t]->opt[i], o);
	return rc;
}

int
lb_svc_opt_save(struct lb_cmd_out *out, const char *svc,
		const struct lb_conf_svc_opts *o)
{
	struct lb_conf_svc_opts def;
	struct lb_cmd_out g;
	size_t line;
	int rc;

	lb_svc_opt_default(&def);
	rc = lb_cmd_printf(out, "service add %s", svc);
	line = strlen("service add ") + strlen(svc);
	lb_cmd_out_init(&g);
	for (unsigned int t = 0; t < nb_tabs && rc == 0; t++) {
		lb_cmd_out_reset(&g);
		rc = lb_svc_opt_print_table(&g, t, o, &def);
		if (rc != 0) {
			rc = lb_cmd_error(out, rc, "%s", lb_cmd_out_errmsg(&g));
			break;
		}
		if (g.len == 0)
			continue;
		if (line + g.len > LB_CMD_LINE_MAX) {
			rc = lb_cmd_printf(out, "\nservice set %s", svc);
			line = strlen("service set ") + strlen(svc);
		}
		if (rc == 0)
			rc = lb_cmd_printf(out, "%s", lb_cmd_out_text(&g));
		line += g.len;
	}
	lb_cmd_out_free(&g);
	return rc != 0 ? rc : lb_cmd_printf(out, "\n");
}

/* ---- reference ---- */

/* Room for every row's synopsis and help at their longest. */
#define SYN_LEN (LB_SVC_OPT_MAX * 48)
#define REF_LEN (LB_SVC_OPT_MAX * 640)

/* Appends @p s to @p buf, breaking lines before 72 columns, each line
 * after the first indented by two spaces (a list item's continuation). */
static size_t
wrap(char *buf, size_t n, size_t len, const char *s)
{
	size_t col = 0;

	while (*s != '\0' && n + 1 < len) {
		size_t w = strcspn(s, " ");

		if (col > 2 && col + 1 + w > 72) {
			n += (size_t)snprintf(buf + n, len - n, "\n  ");
			col = 2;
		} else if (col > 0) {
			n += (size_t)snprintf(buf + n, len - n, " ");
			col++;
		}
		n += (size_t)snprintf(buf + n, len - n, "%.*s", (int)w, s);
		col += w;
		s += w;
		s += strspn(s, " ");
	}
	return n < len ? n : len - 1;
}

/* The value's synopsis: the row's, or an ENUM's words. */
static const char *
row_arg(const struct lb_svc_opt *d, char *buf, size_t len)
{
	size_t n = 0;

	if (d->arg != NULL || d->type != LB_SVC_OPT_ENUM)
		return d->arg;
	buf[0] = '\0';
	for (unsigned int i = 0; i < d->nb_names && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? "|" : "",
				      d->names[i]);
	return buf;
}

const char *
lb_svc_opt_synopsis(void)
{
	static char syn[SYN_LEN];
	char a[128];
	size_t n = 0;

	for (unsigned int i = 0; i < nb_opts && n < sizeof(syn); i++) {
		const struct lb_svc_opt *d = lb_svc_opt_at(i);
		const char *arg = row_arg(d, a, sizeof(a));

		n += (size_t)snprintf(syn + n, sizeof(syn) - n, "%s[%s%s%s]",
				      i ? " " : "", d->name,
				      arg != NULL ? " " : "",
				      arg != NULL ? arg : "");
	}
	return syn;
}

/* "(1..100, default 10)" from the row itself, so that it cannot drift. */
static void
row_default(const struct lb_svc_opt *d, const struct lb_conf_svc_opts *def,
	    char *buf, size_t len)
{
	char v[LB_SVC_OPT_STRLEN], lo[LB_CMD_DURATION_STRLEN];
	char hi[LB_CMD_DURATION_STRLEN];

	if (lb_svc_opt_fmt(d, def, v, sizeof(v)) != 0)
		snprintf(v, sizeof(v), "?");
	if (d->type == LB_SVC_OPT_UINT)
		snprintf(buf, len, "%" PRIu64 "..%" PRIu64 ", default %s",
			 d->min, d->max, v);
	else if (d->type == LB_SVC_OPT_DURATION || d->type == LB_SVC_OPT_MS)
		snprintf(buf, len, "%s..%s, default %s",
			 lb_cmd_fmt_duration(d->min, lo),
			 lb_cmd_fmt_duration(d->max, hi), v);
	else
		snprintf(buf, len, "default `%s`",
			 strcmp(v, "\"\"") != 0 ? v : "none");
}

const char *
lb_svc_opt_reference(void)
{
	static char ref[REF_LEN];
	struct lb_conf_svc_opts def;
	char item[1024], a[128], dv[2 * LB_SVC_OPT_STRLEN];
	size_t n = 0;

	lb_svc_opt_default(&def);
	ref[0] = '\0';
	for (unsigned int i = 0; i < nb_opts && n + 1 < sizeof(ref); i++) {
		const struct lb_svc_opt *d = lb_svc_opt_at(i);
		const char *arg = row_arg(d, a, sizeof(a));

		row_default(d, &def, dv, sizeof(dv));
		snprintf(item, sizeof(item), "- `%s%s%s`: %s (%s).", d->name,
			 arg != NULL ? " " : "", arg != NULL ? arg : "",
			 d->help, dv);
		n = wrap(ref, n, sizeof(ref), item);
		n += (size_t)snprintf(ref + n, sizeof(ref) - n, "\n");
	}
	return ref;
}
