/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The process-wide list of command tables (LB_CMD_REGISTER()) and the
 * registry a program builds from it. Tables are added by constructors,
 * before main(), in link order; they are kept in name order so that what
 * `help` lists does not depend on it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lb/cmd.h"

static struct lb_init_entry table_e[LB_CMD_TABLES_MAX];
static struct lb_init_reg tables = {table_e, 0, LB_CMD_TABLES_MAX};

int
lb_cmd_table_add(const struct lb_cmd_table *t)
{
	if (t == NULL || t->name == NULL || t->ctx == NULL ||
	    (t->defs == NULL && t->n > 0) || (t->ext == NULL && t->n_ext > 0))
		return -EINVAL;
	return lb_init_reg_add(&tables, t->name, t);
}

unsigned int
lb_cmd_table_count(void)
{
	return tables.n;
}

const struct lb_cmd_table *
lb_cmd_table_at(unsigned int i)
{
	return i < tables.n ? tables.e[i].ops : NULL;
}

static const struct lb_cmd_bind *
bind_find(const struct lb_cmd_bind *b, unsigned int nb, const char *name)
{
	for (unsigned int i = 0; i < nb; i++)
		if (b[i].name != NULL && strcmp(b[i].name, name) == 0)
			return &b[i];
	return NULL;
}

/* The table's commands, through its prepare() when it has one. */
static int
table_register(struct lb_cmd_reg *r, const struct lb_cmd_table *t, void *ctx)
{
	struct lb_cmd_def *d;
	int rc;

	if (t->prepare == NULL)
		return lb_cmd_register_many(r, t->defs, t->n, ctx);
	d = malloc((t->n > 0 ? t->n : 1) * sizeof(*d));
	if (d == NULL)
		return -ENOMEM;
	memcpy(d, t->defs, t->n * sizeof(*d));
	rc = t->prepare(ctx, d, t->n);
	if (rc == 0)
		rc = lb_cmd_register_many(r, d, t->n, ctx);
	free(d);
	return rc;
}

int
lb_cmd_reg_build(struct lb_cmd_reg *r, const struct lb_cmd_bind *binds,
		 unsigned int nb, const char **unbound)
{
	int rc = 0;

	if (unbound != NULL)
		*unbound = NULL;
	if (r == NULL || (binds == NULL && nb > 0))
		return -EINVAL;
	for (unsigned int i = 0; i < tables.n && rc == 0; i++) {
		const struct lb_cmd_table *t = tables.e[i].ops;
		const struct lb_cmd_bind *b = bind_find(binds, nb, t->ctx);

		if (b == NULL && unbound != NULL && *unbound == NULL)
			*unbound = t->name;
		if (b != NULL)
			rc = table_register(r, t, b->ctx);
	}
	/* Extensions last: what they extend may sit in a later table. */
	for (unsigned int i = 0; i < tables.n && rc == 0; i++) {
		const struct lb_cmd_table *t = tables.e[i].ops;
		const struct lb_cmd_bind *b = bind_find(binds, nb, t->ctx);

		for (unsigned int k = 0; b != NULL && k < t->n_ext && rc == 0;
		     k++)
			rc = lb_cmd_extend(r, &t->ext[k], b->ctx);
	}
	return rc;
}
