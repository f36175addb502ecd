/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The XDP program's per-CPU counters, summed, and their names.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "lb/steer.h"
#include "steer_priv.h"

static const char *const ctr_names[LB_STEER_CTR_MAX] = {
	[LB_STEER_CTR_PASS] = "pass",
	[LB_STEER_CTR_PASS_ARP] = "pass_arp",
	[LB_STEER_CTR_PASS_IPV6] = "pass_ipv6",
	[LB_STEER_CTR_PASS_OTHER] = "pass_other",
	[LB_STEER_CTR_PASS_MALFORMED] = "pass_malformed",
	[LB_STEER_CTR_PASS_NO_XSK] = "pass_no_xsk",
	[LB_STEER_CTR_XSK_VIP] = "xsk_vip",
	[LB_STEER_CTR_XSK_SNAT] = "xsk_snat",
	[LB_STEER_CTR_XSK_LOCAL] = "xsk_local",
	[LB_STEER_CTR_XSK_ARP] = "xsk_arp",
	[LB_STEER_CTR_DROP_DENY] = "drop_deny",
	[LB_STEER_CTR_DROP_DENY_LB] = "drop_deny_lb",
	[LB_STEER_CTR_ACL_ALLOW] = "acl_allow",
	[LB_STEER_CTR_ACL_EXPIRED] = "acl_expired",
};

const char *
lb_steer_ctr_name(unsigned int ctr)
{
	return ctr < LB_STEER_CTR_MAX ? ctr_names[ctr] : NULL;
}

int
lb_steer_stats_read(struct lb_steer *s, struct lb_steer_stats *st)
{
	struct lb_steer_ctr_val *pc;
	int rc = 0;

	if (s == NULL || st == NULL)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	pc = calloc((size_t)s->ncpus, sizeof(*pc));
	if (pc == NULL)
		return -ENOMEM;
	for (uint32_t c = 0; c < LB_STEER_CTR_MAX; c++) {
		rc = bpf_map_lookup_elem(s->fd_ctr, &c, pc);
		if (rc != 0)
			break;
		for (int cpu = 0; cpu < s->ncpus; cpu++) {
			st->ctr[c].packets += pc[cpu].packets;
			st->ctr[c].bytes += pc[cpu].bytes;
		}
	}
	free(pc);
	return rc;
}
