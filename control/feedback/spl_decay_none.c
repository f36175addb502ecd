/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The `none` decay of the SPL policy: reports count at their value
 * whatever their age.
 */
#include <stdint.h>

#include "spl.h"

static double
decay_none(const struct lb_spl_decay_params *p, double spl, uint64_t age_ns)
{
	(void)p;
	(void)age_ns;
	return spl;
}

static const struct lb_spl_decay_ops decay_ops_none = {
	.name = "none",
	.decay = decay_none,
};

LB_SPL_DECAY_REGISTER(decay_ops_none);
