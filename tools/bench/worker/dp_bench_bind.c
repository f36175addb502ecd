/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-dpbench's bind test: what routing a connection by its first request
 * (delayed binding, docs/dataplane.md) costs the worker, next to the
 * same connections on a plain SYN-proxy service and on a plain L4
 * service, in the same run (a fresh worker per round, the three sides in
 * turn, the order moved on every round).
 *
 * conn's connections (dp_bench_conn.h), with the client's first data in
 * its ACK: a request head naming one of BIND_HOSTS hosts, each in a
 * segment. Routed, a connection is: SYN -> the worker's cookie SYN-ACK;
 * ACK with the request, kept while the rules read it -> the worker's SYN
 * to a backend of the pool chosen; the backend's SYN-ACK -> the worker's
 * ACK to it (taken out of the round: no input matches it) and the request
 * it kept; the response; a FIN each way. The SYN-proxy side is the same
 * without rules (the service's one pool), the L4 side has no cookie: the
 * backend's SYN-ACK reaches the client. BIND_IN_FLIGHT connections at a
 * time, below the worker's waiting slots and held frames.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_malloc.h>

#include "dp_bench_frame.h"

static const char *const side_name[BIND_SIDES] = {"l4", "synproxy", "routed"};

/* The three tables and the requests; conn's frames and records. */
static int
bind_setup(struct bench *b)
{
	char req[64];
	int rc = 0, len = 0;

	if (b->crec == NULL && dpb_conn_setup(b) != 0)
		return -EINVAL;
	for (unsigned int s = 0; s < BIND_SIDES && rc == 0; s++)
		if (b->conf_bind[s] == NULL)
			rc = dpb_conf_build(b, 3 + (int)s, &b->conf_bind[s]);
	if (rc != 0)
		return -EINVAL;
	for (unsigned int h = 0; h < BIND_HOSTS; h++) {
		len = snprintf(req, sizeof(req), bind_req_fmt, h);
		dpb_l7_tmpl_init(&b->tb_req[h], b->port_mac, b->gw_mac,
				 LB_TCP_PSH | LB_TCP_ACK, req, (uint16_t)len);
	}
	b->creq_len = (uint32_t)len;
	return 0;
}

/*
 * What a routed round's worker counted that routing every connection
 * does not: a connection given up or refused, a segment it could not
 * keep. @return how many such counters.
 */
static unsigned int
bind_report(const struct lb_worker *w, enum bind_side side)
{
	const struct lb_worker_stats *st = &w->st;
	uint64_t gaveup = 0;
	unsigned int problems = 0;

	for (unsigned int i = 0; i < LB_BIND_GU_MAX; i++)
		gaveup += st->bind_gaveup[i];
	if (gaveup + st->bind_refused + st->synp_held_dropped > 0) {
		printf("  %s round: %" PRIu64 " connections given up, %" PRIu64
		       " refused, %" PRIu64 " segments not kept\n",
		       side_name[side], gaveup, st->bind_refused,
		       st->synp_held_dropped);
		problems++;
	}
	if (side == BIND_ROUTED && st->bind_routed == 0) {
		printf("  routed round: no connection routed\n");
		problems++;
	}
	if (side != BIND_ROUTED && st->bind_waits != 0) {
		printf("  %s round: %" PRIu64 " connections waited for their "
		       "content\n",
		       side_name[side], st->bind_waits);
		problems++;
	}
	return problems;
}

/* The worker's busy ns per connection: its busy share of the lcore's
 * running time over the connections completed in it. */
static double
ns_per_conn(const struct res *r)
{
	return r->cps > 0 ? r->busy * 1e9 / r->cps : 0;
}

int
dpb_run_bind(struct bench *b)
{
	static struct res res[BIND_SIDES][MAX_ROUNDS];
	double cps[BIND_SIDES][MAX_ROUNDS], ns[BIND_SIDES][MAX_ROUNDS];
	double rl4[MAX_ROUNDS], rsp[MAX_ROUNDS];
	unsigned int problems = 0;
	struct res warm;
	struct gen g;
	int rc = bind_setup(b);

	if (rc != 0) {
		fprintf(stderr, "lb-dpbench: bind: configuration failed\n");
		return rc;
	}
	b->conn_bind = 1;
	dpb_gen_init(&g, T_CONN, 0);
	g.warm_s = 2.0 * b->conn_timeout_ms / 1000.0;
	g.in_flight = BIND_IN_FLIGHT;
	printf("\n== %s: %s (%u connections in flight, %u hosts, request "
	       "%u bytes; closed connections time out after %u ms, a fresh "
	       "worker per round, its warm-up %.2f s)\n",
	       dpb_test_names[T_BIND], dpb_test_what[T_BIND], BIND_IN_FLIGHT,
	       BIND_HOSTS, b->creq_len, b->conn_timeout_ms, g.warm_s);
	for (unsigned int r = 0; r <= b->rounds && rc == 0; r++) {
		for (unsigned int k = 0; k < BIND_SIDES && rc == 0; k++) {
			enum bind_side s =
				(enum bind_side)((k + r) % BIND_SIDES);
			struct res *out = r == 0 ? &warm : &res[s][r - 1];

			b->dp.conf = b->conf_bind[s];
			rc = dpb_worker_new(b);
			if (rc == 0)
				rc = dpb_run_round(b, &g, 1, out);
			if (rc == 0 && r > 0) {
				out->problems += bind_report(b->w, s);
				if (out->problems > 0)
					printf("  (round %u, %s side)\n", r,
					       side_name[s]);
				problems += out->problems;
				cps[s][r - 1] = out->cps;
				ns[s][r - 1] = ns_per_conn(out);
			}
		}
		if (r == 0 && rc == 0)
			printf("round |      l4 conn/s ns/conn | synproxy "
			       "conn/s ns/conn |  routed conn/s ns/conn | "
			       "routed/l4 routed/synproxy (ns/conn)\n");
		if (r == 0 || rc != 0)
			continue;
		rl4[r - 1] = ns[BIND_L4][r - 1] > 0 ? ns[BIND_ROUTED][r - 1] /
							      ns[BIND_L4][r - 1]
						    : 0;
		rsp[r - 1] =
			ns[BIND_SYNP][r - 1] > 0
				? ns[BIND_ROUTED][r - 1] / ns[BIND_SYNP][r - 1]
				: 0;
		printf("%5u | %14.0f %7.0f | %15.0f %7.0f | %14.0f %7.0f | "
		       "%9.2f %15.2f\n",
		       r, cps[BIND_L4][r - 1], ns[BIND_L4][r - 1],
		       cps[BIND_SYNP][r - 1], ns[BIND_SYNP][r - 1],
		       cps[BIND_ROUTED][r - 1], ns[BIND_ROUTED][r - 1],
		       rl4[r - 1], rsp[r - 1]);
	}
	b->conn_bind = 0;
	b->creq_len = sizeof(conn_req) - 1;
	b->dp.conf = b->conf_l4;
	if (rc != 0) {
		fprintf(stderr, "lb-dpbench: bind: %s\n", strerror(-rc));
		return rc;
	}
	printf("median| %14.0f %7.0f | %15.0f %7.0f | %14.0f %7.0f | %9.2f "
	       "%15.2f\n",
	       dpb_median(cps[BIND_L4], b->rounds),
	       dpb_median(ns[BIND_L4], b->rounds),
	       dpb_median(cps[BIND_SYNP], b->rounds),
	       dpb_median(ns[BIND_SYNP], b->rounds),
	       dpb_median(cps[BIND_ROUTED], b->rounds),
	       dpb_median(ns[BIND_ROUTED], b->rounds),
	       dpb_median(rl4, b->rounds), dpb_median(rsp, b->rounds));
	printf("checks: %s\n",
	       problems == 0 ? "every segment back, no drop, every output a "
			       "step of its connection, every routed "
			       "connection routed by its rules"
			     : "FAILED (see above)");
	return 0;
}

void
dpb_bind_teardown(struct bench *b)
{
	for (unsigned int s = 0; s < BIND_SIDES; s++) {
		rte_free(b->conf_bind[s]);
		b->conf_bind[s] = NULL;
	}
}
