/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-dpbench's conn test: whole TCP connections at the highest rate the
 * generator reaches (SYN, SYN-ACK, ACK, a request, a response, a FIN
 * each way: dp_bench_conn.h), through a service whose closed
 * connections time out --conn-timeout after their last segment (those
 * under way keep the defaults), so that the worker's table
 * fills until expiry frees flows as fast as connections arrive. Rounds
 * on a fresh worker alternate with the bare forwarder fed the same
 * segments; each worker round warms up for twice the timeout, so its
 * measured part is the steady state, and samples its table's occupancy
 * from its start.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp_bench_frame.h"

int
dpb_conn_setup(struct bench *b)
{
	if (dpb_conf_build(b, 3, &b->conf_conn) != 0)
		return -EINVAL;
	b->crec = calloc(CONN_SLOTS, sizeof(*b->crec));
	if (b->crec == NULL)
		return -ENOMEM;
	b->conn_vip = htonl(IP_VIP_CONN);
	b->creq_len = sizeof(conn_req) - 1;
	dpb_l7_tmpl_init(&b->tc_syn, b->port_mac, b->gw_mac, LB_TCP_SYN, "", 0);
	dpb_l7_tmpl_init(&b->tc_ack, b->port_mac, b->gw_mac, LB_TCP_ACK, "", 0);
	dpb_l7_tmpl_init(&b->tc_req, b->port_mac, b->gw_mac,
			 LB_TCP_PSH | LB_TCP_ACK, conn_req,
			 sizeof(conn_req) - 1);
	dpb_l7_tmpl_init(&b->tc_fin, b->port_mac, b->gw_mac,
			 LB_TCP_FIN | LB_TCP_ACK, "", 0);
	for (uint32_t i = 0; i < NB_BES; i++) {
		dpb_l7_tmpl_init(&b->tc_synack[i], b->port_mac, b->be_mac[i],
				 LB_TCP_SYN | LB_TCP_ACK, "", 0);
		dpb_l7_tmpl_init(&b->tc_resp[i], b->port_mac, b->be_mac[i],
				 LB_TCP_PSH | LB_TCP_ACK, conn_resp,
				 sizeof(conn_resp) - 1);
		dpb_l7_tmpl_init(&b->tc_finb[i], b->port_mac, b->be_mac[i],
				 LB_TCP_FIN | LB_TCP_ACK, "", 0);
	}
	return 0;
}

/* The first worker round's occupancy, a sample per 1/CONN_SAMPLE_HZ s. */
static void
print_occupancy(const struct res *r, uint32_t capacity)
{
	printf("flow table over the first worker round (capacity %u; one "
	       "sample every %u ms from its start):\n ",
	       capacity, 1000 / CONN_SAMPLE_HZ);
	for (unsigned int i = 0; i < r->nb_occ; i++)
		printf(" %u", r->occ[i]);
	printf("\n");
}

/* Expiry's counters of a worker round, for the summary. */
static void
conn_expiry(const struct lb_worker *w, struct conn_row *row)
{
	if (w->st.expire_max > row->expire_max)
		row->expire_max = w->st.expire_max;
	if (w->st.flows_overdue > row->overdue_max)
		row->overdue_max = w->st.flows_overdue;
	row->reclaimed += w->ft->stats.reclaimed;
}

int
dpb_run_conn(struct bench *b)
{
	struct res rb[MAX_ROUNDS], rw[MAX_ROUNDS], warm;
	double v[6][MAX_ROUNDS];
	struct conn_row *row = &b->conn_row;
	struct gen g;
	int rc = dpb_conn_setup(b);

	if (rc != 0)
		return rc;
	memset(row, 0, sizeof(*row));
	dpb_gen_init(&g, T_CONN, 0);
	/* Twice the timeout: the table has reached its steady state. */
	g.warm_s = 2.0 * b->conn_timeout_ms / 1000.0;
	b->dp.conf = b->conf_conn;
	printf("\n== %s: %s (closed connections time out after %u ms, a fresh "
	       "worker "
	       "per round, its warm-up %.2f s; 7 segments per "
	       "connection)\n",
	       dpb_test_names[T_CONN], dpb_test_what[T_CONN],
	       b->conn_timeout_ms, g.warm_s);
	for (unsigned int r = 0; r <= b->rounds && rc == 0; r++) {
		for (unsigned int k = 0; k < 2 && rc == 0; k++) {
			int worker = (k + r) % 2;
			struct res *out = r == 0   ? &warm
					  : worker ? &rw[r - 1]
						   : &rb[r - 1];

			if (worker)
				rc = dpb_worker_new(b);
			if (rc == 0)
				rc = dpb_run_round(b, &g, worker, out);
			if (rc == 0 && worker && r > 0) {
				conn_expiry(b->w, row);
				if (r == 1)
					print_occupancy(out, b->dp.flows);
			}
		}
		if (r == 0 && rc == 0)
			printf("round |  bare conn/s  ns/pkt |    lb conn/s  "
			       "ns/pkt busy%% | lb/bare | table  overdue "
			       "expire_max\n");
		if (r == 0 || rc != 0)
			continue;
		{
			const struct res *w = &rw[r - 1], *x = &rb[r - 1];
			uint32_t occ =
				w->nb_occ > 0 ? w->occ[w->nb_occ - 1] : 0;

			v[0][r - 1] = x->cps;
			v[1][r - 1] = w->cps;
			v[2][r - 1] = x->cps > 0 ? w->cps / x->cps : 0;
			v[3][r - 1] = x->ns;
			v[4][r - 1] = w->ns;
			v[5][r - 1] = 100 * w->busy;
			for (unsigned int i = 0; i < w->nb_occ; i++)
				if (w->occ[i] > row->occ_max)
					row->occ_max = w->occ[i];
			row->occ_end = occ;
			row->problems += w->problems + x->problems;
			printf("%5u | %12.0f %7.1f | %12.0f %7.1f %5.1f | "
			       "%7.2f "
			       "| %6u %8" PRIu64 " %10" PRIu64,
			       r, x->cps, x->ns, w->cps, w->ns, v[5][r - 1],
			       v[2][r - 1], occ, b->w->st.flows_overdue,
			       b->w->st.expire_max);
			if (x->lost_ms + w->lost_ms >= 1)
				printf("  (not running: bare %.0f ms, lb %.0f "
				       "ms)",
				       x->lost_ms, w->lost_ms);
			printf("\n");
		}
	}
	b->dp.conf = b->conf_l4;
	if (rc != 0) {
		fprintf(stderr, "lb-dpbench: conn: %s\n", strerror(-rc));
		return rc;
	}
	row->bare_cps = dpb_median(v[0], b->rounds);
	row->lb_cps = dpb_median(v[1], b->rounds);
	row->ratio = dpb_median(v[2], b->rounds);
	row->bare_ns = dpb_median(v[3], b->rounds);
	row->lb_ns = dpb_median(v[4], b->rounds);
	row->lb_busy = dpb_median(v[5], b->rounds);
	b->has_conn_row = 1;
	printf("median| %12.0f %7.1f | %12.0f %7.1f %5.1f | %7.2f\n",
	       row->bare_cps, row->bare_ns, row->lb_cps, row->lb_ns,
	       row->lb_busy, row->ratio);
	printf("expiry: at most %" PRIu64 " flows expired in one poll, at "
	       "most %" PRIu64 " overdue seen, %" PRIu64 " reclaimed on "
	       "demand; checks: %s\n",
	       row->expire_max, row->overdue_max, row->reclaimed,
	       row->problems == 0 ? "every segment back, no drop, every "
				    "output a step of its connection"
				  : "FAILED (see above)");
	return 0;
}
