/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The `normalized` decay of the SPL policy (WO 2021/086339 [0067]).
 */
#include <errno.h>
#include <stdint.h>

#include "spl.h"

/*
 * [0067]: "the age ..., normalized to a scale between the values 1 and 5"
 * is the decay factor. Ages 0 .. span map linearly onto 1 .. 5 and older
 * ages stay at 5, so a stale report keeps at least a fifth of its value.
 */
static int
check_normalized(const struct lb_spl_decay_params *p)
{
	return p->norm_span_ns > 0 ? 0 : -EINVAL;
}

static double
decay_normalized(const struct lb_spl_decay_params *p, double spl,
		 uint64_t age_ns)
{
	double x = age_ns >= p->norm_span_ns
			   ? 1.0
			   : (double)age_ns / (double)p->norm_span_ns;

	return spl / (1.0 + 4.0 * x);
}

static const struct lb_spl_decay_ops decay_ops_normalized = {
	.name = "normalized",
	.check = check_normalized,
	.decay = decay_normalized,
};

LB_SPL_DECAY_REGISTER(decay_ops_normalized);
