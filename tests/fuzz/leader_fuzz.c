/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What another host wrote in Redis, through the readers of the scaling
 * leader's instance list and of a host's load summary (control/scale/
 * leader.h); the first byte picks which. Invariants: a refused text
 * leaves nothing behind (no instance, no backend); an accepted one,
 * written back, reads back the same; merging a summary with itself
 * gives each backend's SPL and age as they are, its flows doubled.
 */
#include <string.h>

#include "fuzz.h"
#include "leader.h"

static struct lb_leader_list la, lb;
static struct lb_leader_load da[2], db;
static char out[LB_AS_INST_MAX * 128 + 128];

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data + 1;
	int n;

	if (size < 1 || size > 65536)
		return 0;
	size--;
	if (data[0] & 1) {
		if (lb_leader_list_parse(buf, size, &la) != 0) {
			FUZZ_CHECK(la.n == 0 && la.term == 0);
			return 0;
		}
		FUZZ_CHECK(la.n <= LB_AS_INST_MAX);
		for (unsigned int i = 0; i < la.n; i++)
			FUZZ_CHECK(la.inst[i].id < la.next_id);
		n = lb_leader_list_fmt(&la, out, sizeof(out));
		FUZZ_CHECK(n > 0);
		FUZZ_CHECK(lb_leader_list_parse(out, (size_t)n, &lb) == 0);
		FUZZ_CHECK(!memcmp(&la, &lb, sizeof(la)));
		return 0;
	}
	if (lb_leader_load_parse(buf, size, &da[0]) != 0) {
		FUZZ_CHECK(da[0].n == 0 && da[0].host[0] == '\0');
		return 0;
	}
	n = lb_leader_load_fmt(&da[0], out, sizeof(out));
	FUZZ_CHECK(n > 0);
	FUZZ_CHECK(lb_leader_load_parse(out, (size_t)n, &db) == 0);
	FUZZ_CHECK(!memcmp(&da[0], &db, sizeof(db)));
	da[1] = da[0];
	for (unsigned int i = 0; i < da[0].n; i++) {
		const struct lb_leader_be_load *b = &da[0].be[i];
		struct lb_leader_be_load m;
		bool dup = false;

		/* A backend listed twice is merged from both lines. */
		for (unsigned int j = 0; j < da[0].n; j++)
			dup |= j != i && lb_conf_ip_eq(&da[0].be[j].ip, &b->ip) &&
			       da[0].be[j].port == b->port;
		if (dup)
			continue;
		FUZZ_CHECK(lb_leader_merge_be(da, 2, &b->ip, b->port, &m) ==
			   b->seen);
		FUZZ_CHECK(m.flows == 2 * b->flows);
		if (b->seen)
			FUZZ_CHECK(m.spl >= b->spl * (1 - 1e-9) &&
				   m.spl <= b->spl * (1 + 1e-9) + 1e-300);
	}
	return 0;
}
