/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The `age` decay of the SPL policy (WO 2021/086339 [0067]), the
 * seed's worked example and the default.
 */
#include <stdint.h>

#include "spl.h"

#define NS_PER_MS 1e6

/*
 * [0067]: divide the indicator by its age in milliseconds; Table 4 ([0069])
 * turns 0.8 aged 2 ms into 0.4. Ages under 1 ms divide by 1: a divisor
 * below 1 would multiply the value (0.8 at 0.5 ms would become 1.6 and at
 * 0 ms infinity), so the freshest reports would weigh the most instead of
 * simply not having decayed yet. Table 5 agrees: 108-1 keeps 0.95
 * unmodified, which is what this rule gives any report up to 1 ms old.
 */
static double
decay_age(const struct lb_spl_decay_params *p, double spl, uint64_t age_ns)
{
	double age_ms = (double)age_ns / NS_PER_MS;

	(void)p;
	return age_ms > 1.0 ? spl / age_ms : spl;
}

static const struct lb_spl_decay_ops decay_ops_age = {
	.name = "age",
	.decay = decay_age,
};

LB_SPL_DECAY_REGISTER(decay_ops_age);
