/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The `halflife` decay of the SPL policy.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>

#include "spl.h"

/* "Various other forms of decay factor may also be employed" ([0067]). */
static int
check_halflife(const struct lb_spl_decay_params *p)
{
	return p->halflife_ns > 0 ? 0 : -EINVAL;
}

static double
decay_halflife(const struct lb_spl_decay_params *p, double spl, uint64_t age_ns)
{
	return spl * exp2(-(double)age_ns / (double)p->halflife_ns);
}

static const struct lb_spl_decay_ops decay_ops_halflife = {
	.name = "halflife",
	.check = check_halflife,
	.decay = decay_halflife,
};

LB_SPL_DECAY_REGISTER(decay_ops_halflife);
