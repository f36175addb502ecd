/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The scheduler registry. Each scheduler registers itself from its own
 * file (LB_SCHED_REGISTER); this file knows none of them by name.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lb/sched.h"

static struct lb_init_entry entries[LB_SCHED_MAX];
static struct lb_init_reg reg = {entries, 0, LB_SCHED_MAX};

const struct lb_sched_ops *
lb_sched_find(const char *name)
{
	return lb_init_reg_find(&reg, name);
}

int
lb_sched_register(const struct lb_sched_ops *ops)
{
	if (ops == NULL || ops->name == NULL || ops->name[0] == '\0' ||
	    strlen(ops->name) >= LB_SCHED_NAME_MAX || ops->create == NULL ||
	    ops->destroy == NULL || ops->pick == NULL || ops->next == NULL ||
	    ops->result == NULL || ops->set_eligible == NULL ||
	    ops->errors == NULL || ops->set_errors == NULL)
		return -EINVAL;
	return lb_init_reg_add(&reg, ops->name, ops);
}

unsigned int
lb_sched_list(const struct lb_sched_ops **out, unsigned int max)
{
	unsigned int k;

	for (k = 0; k < reg.n && k < max; k++)
		out[k] = reg.e[k].ops;
	return k;
}

int
lb_sched_names(char *buf, size_t len, const char *sep)
{
	return lb_init_reg_names(&reg, buf, len, sep);
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
