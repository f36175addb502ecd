/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>

#include "flow6.h"

int
lb_flow6_insert(struct lb_flow_table *t, struct lb_flow6_addrs *side,
		const struct lb_flow6_tuple *orig,
		const struct lb_flow6_tuple *reply, uint16_t svc, uint32_t be,
		uint64_t now_ns)
{
	struct lb_flow_key k[2];
	int idx;

	if (t == NULL || side == NULL || orig == NULL || reply == NULL)
		return -EINVAL;
	lb_flow6_key(t, &k[0], orig);
	lb_flow6_key(t, &k[1], reply);
	idx = lb_flow_insert(t, &k[0], &k[1], svc, be, now_ns);
	if (idx < 0)
		return idx;
	memcpy(side[idx].a[LB_FLOW_DIR_ORIG][0], orig->src, 16);
	memcpy(side[idx].a[LB_FLOW_DIR_ORIG][1], orig->dst, 16);
	memcpy(side[idx].a[LB_FLOW_DIR_REPLY][0], reply->src, 16);
	memcpy(side[idx].a[LB_FLOW_DIR_REPLY][1], reply->dst, 16);
	return idx;
}

int
lb_flow64_insert(struct lb_flow_table *t, struct lb_flow6_addrs *side,
		 const struct lb_flow6_tuple *orig, uint32_t src, uint32_t dst,
		 uint16_t sport, uint16_t dport, uint16_t svc, uint32_t be,
		 uint64_t now_ns)
{
	struct lb_flow_key k[2];
	int idx;

	if (t == NULL || side == NULL || orig == NULL)
		return -EINVAL;
	lb_flow6_key(t, &k[0], orig);
	lb_flow_key_set(&k[1], src, dst, sport, dport, orig->proto);
	idx = lb_flow_insert(t, &k[0], &k[1], svc, be, now_ns);
	if (idx < 0)
		return idx;
	memcpy(side[idx].a[LB_FLOW_DIR_ORIG][0], orig->src, 16);
	memcpy(side[idx].a[LB_FLOW_DIR_ORIG][1], orig->dst, 16);
	lb_flow6_mapped(side[idx].a[LB_FLOW_DIR_REPLY][0], src);
	lb_flow6_mapped(side[idx].a[LB_FLOW_DIR_REPLY][1], dst);
	return idx;
}

int
lb_flow6_holds(const struct lb_flow_table *t, const struct lb_flow6_tuple *tu)
{
	struct lb_flow_key k;

	if (t == NULL || tu == NULL)
		return 0;
	lb_flow6_key(t, &k, tu);
	return lb_flow_holds(t, &k);
}

void
lb_flow6_tuple_of(const struct lb_flow_table *t,
		  const struct lb_flow6_addrs *side, uint32_t idx,
		  enum lb_flow_dir dir, struct lb_flow6_tuple *tu)
{
	const struct lb_flow_key *k = &lb_flow_entries(t)[idx].key[dir];

	memset(tu, 0, sizeof(*tu));
	memcpy(tu->src, side[idx].a[dir][0], 16);
	memcpy(tu->dst, side[idx].a[dir][1], 16);
	tu->sport = k->sport;
	tu->dport = k->dport;
	tu->proto = k->proto;
}
