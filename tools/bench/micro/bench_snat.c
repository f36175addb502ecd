/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SNAT port allocation while a SYN flood holds every port of the address
 * towards one backend A (65,512 flows in a table of 1M, the flood's
 * reply keys A -> snat:port): a new flow to another backend B (each port
 * it probes is held, one flow table lookup that misses), and a flood SYN
 * to A itself (LB_SNAT_TRIES lookups that hit, then refused). Both are
 * paired with the allocation of normal operation, where the port next in
 * line is held by no flow and no lookup is made. Each allocation that
 * succeeds is released at once, so the flood's state stays as it is.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "lb/flow_table.h"
#include "lb/rng.h"
#include "lb/snat.h"

#define FLOWS (1u << 20)
#define SNAT_IP 0x0a000002u /* host order */
#define BE_A 0x0a000114u
#define BE_B 0x0a000115u
#define BE_PORT 8080

struct dst {
	const struct lb_flow_table *t;
	uint32_t ip; /* network order */
};

struct arg {
	struct lb_snat *s;
	struct dst d;
};

static bool
taken(void *p, uint32_t ip, uint16_t port)
{
	const struct dst *d = p;
	struct lb_flow_key k;
	enum lb_flow_dir dir;

	lb_flow_key_set(&k, d->ip, ip, htons(BE_PORT), port, 6);
	return lb_flow_lookup(d->t, &k, &dir) != LB_FLOW_NONE;
}

static void
run_alloc(void *p, uint64_t iters)
{
	struct arg *a = p;
	uint64_t acc = 0;
	uint32_t ip;
	uint16_t port;

	for (uint64_t i = 0; i < iters; i++) {
		if (lb_snat_port_alloc(a->s, taken, &a->d, &ip, &port) == 0) {
			lb_snat_port_free(a->s, ip, port);
			acc += port;
		}
	}
	lb_bench_sink = acc;
}

/* Holds every port of @p s towards backend A, as a flood would. */
static int
flood(struct lb_snat *s, struct lb_flow_table *t, struct lb_rng *r)
{
	struct dst d = { t, htonl(BE_A) };
	struct lb_flow_key o, b;
	uint32_t ip;
	uint16_t port;

	while (lb_snat_port_alloc(s, taken, &d, &ip, &port) == 0) {
		uint64_t x = lb_rng_u64(r);

		lb_flow_key_set(&o, (uint32_t)x, htonl(0xcb00710a),
				(uint16_t)(x >> 32), htons(80), 6);
		lb_flow_key_set(&b, d.ip, ip, htons(BE_PORT), port, 6);
		if (lb_flow_insert(t, &o, &b, 0, 0, 0) < 0)
			return -1;
	}
	return 0;
}

void
lb_bench_snat(FILE *out, unsigned int rounds)
{
	uint32_t snat = htonl(SNAT_IP);
	struct lb_snat_conf c = { .addrs = &snat, .nb_addrs = 1,
				  .nb_workers = 1 };
	struct lb_flow_table *t = NULL;
	struct arg to_b = { 0 }, to_a = { 0 }, calm = { 0 };
	struct lb_xoshiro x;
	struct lb_rng r;

	lb_xoshiro_seed(&x, 11);
	r = lb_rng_xoshiro(&x);
	t = lb_flow_table_create(FLOWS, NULL, lb_rng_u64(&r));
	to_b.s = lb_snat_create(&c);
	calm.s = lb_snat_create(&c);
	if (t == NULL || to_b.s == NULL || calm.s == NULL ||
	    flood(to_b.s, t, &r) != 0) {
		fprintf(out, "snat: out of memory\n");
		goto out;
	}
	to_b.d = (struct dst){ t, htonl(BE_B) };
	to_a.s = to_b.s;
	to_a.d = (struct dst){ t, htonl(BE_A) };
	calm.d = to_b.d;
	{
		const struct lb_bench_case b = {
			"snat alloc to B, A flooded", run_alloc, &to_b
		};
		const struct lb_bench_case a = {
			"snat alloc to A, refused", run_alloc, &to_a
		};
		const struct lb_bench_case base = {
			"snat alloc, no port held", run_alloc, &calm
		};

		lb_bench_pair(out, &b, &base, 1000000, rounds);
		lb_bench_pair(out, &a, &base, 100000, rounds);
	}
out:
	lb_snat_free(to_b.s);
	lb_snat_free(calm.s);
	lb_flow_table_free(t);
}
