/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The scheduler registry. Each scheduler registers itself from its own
 * file (LB_SCHED_REGISTER); this file knows none of them by name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb/sched.h"

/* Kept in name order, so listings do not depend on the link order that
 * runs the constructors. */
static const struct lb_sched_ops *reg[LB_SCHED_MAX];
static unsigned int nb_reg;

const struct lb_sched_ops *
lb_sched_find(const char *name)
{
	if (name == NULL)
		return NULL;
	for (unsigned int i = 0; i < nb_reg; i++)
		if (strcmp(reg[i]->name, name) == 0)
			return reg[i];
	return NULL;
}

int
lb_sched_register(const struct lb_sched_ops *ops)
{
	unsigned int at;

	if (ops == NULL || ops->name == NULL || ops->name[0] == '\0' ||
	    strlen(ops->name) >= LB_SCHED_NAME_MAX || ops->create == NULL ||
	    ops->destroy == NULL || ops->pick == NULL || ops->next == NULL ||
	    ops->result == NULL || ops->set_eligible == NULL ||
	    ops->errors == NULL || ops->set_errors == NULL)
		return -EINVAL;
	if (lb_sched_find(ops->name) != NULL)
		return -EEXIST;
	if (nb_reg >= LB_SCHED_MAX)
		return -ENOSPC;
	for (at = 0; at < nb_reg; at++)
		if (strcmp(ops->name, reg[at]->name) < 0)
			break;
	memmove(&reg[at + 1], &reg[at], (nb_reg - at) * sizeof(reg[0]));
	reg[at] = ops;
	nb_reg++;
	return 0;
}

unsigned int
lb_sched_list(const struct lb_sched_ops **out, unsigned int max)
{
	unsigned int k;

	for (k = 0; k < nb_reg && k < max; k++)
		out[k] = reg[k];
	return k;
}

int
lb_sched_names(char *buf, size_t len, const char *sep)
{
	size_t n = 0;

	if (len > 0)
		buf[0] = '\0';
	for (unsigned int i = 0; i < nb_reg; i++) {
		int w = snprintf(n < len ? buf + n : NULL,
				 n < len ? len - n : 0, "%s%s",
				 i > 0 ? sep : "", reg[i]->name);

		if (w < 0)
			return w;
		n += (size_t)w;
	}
	return (int)n;
}

void
lb_sched_free(void *st)
{
	free(st);
}

void
lb_sched_no_result(void *st, uint32_t be, bool ok)
{
	(void)st;
	(void)be;
	(void)ok;
}

uint32_t
lb_sched_no_errors(void *st, uint32_t be)
{
	(void)st;
	(void)be;
	return 0;
}

int
lb_sched_no_set_errors(void *st, uint32_t be, uint32_t errors)
{
	(void)st;
	(void)be;
	(void)errors;
	return 0;
}
