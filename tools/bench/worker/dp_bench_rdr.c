/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-dpbench rdr: what a reply costs when it reaches a worker that does
 * not own its flow. With W workers and RSS over the reply's tuple,
 * (W - 1) / W of the replies arrive at another worker's queue; that
 * worker parses them, finds the owner from the SNAT port and hands them
 * over through the owner's redirect ring, and the owner handles them as
 * its own. Two workers (ids 0 and 1, the port's two queues) run in the
 * same loop on the forwarder lcore; worker 1 owns every flow. Rounds of
 * replies on worker 0's queue (all redirected) alternate with rounds of
 * the same replies on worker 1's queue, and the difference of their ns
 * per packet is the hand-over's work on both sides. With --rdr-split
 * worker 0 runs on the generator's lcore instead, so that the mbufs and
 * the ring's slots cross from one core to the other as with two worker
 * cores: the forwarder lcore's difference is then the owner's part, and
 * worker 0's busy ns per packet it handed over is the receiving part.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dp_bench.h"

/* Puts the generator on queue @p q for the replies, queue 1 for what the
 * owner sends. */
static void
rdr_queue(struct bench *b, unsigned int q)
{
	b->rxr = b->rxq[q];
	b->txr = b->txq[1];
}

static int
rdr_rounds(struct bench *b, struct rdr_row *row)
{
	struct res rd[MAX_ROUNDS], rr[MAX_ROUNDS], warm;
	double v[7][MAX_ROUNDS];
	struct gen g;
	int rc;

	dpb_gen_init(&g, T_RDR, row->flows);
	/* One pair of rounds unrecorded: caches, branch predictors, TLB. */
	rdr_queue(b, 1);
	rc = dpb_run_round(b, &g, 1, &warm);
	rdr_queue(b, 0);
	if (rc == 0)
		rc = dpb_run_round(b, &g, 1, &warm);
	printf("round | own queue Mpps  ns/pkt | redirected Mpps  ns/pkt "
	       "ratio | +ns/redirected%s\n",
	       b->rdr_split ? " | receiver ns/pkt" : "");
	for (unsigned int r = 0; r < b->rounds && rc == 0; r++) {
		for (unsigned int k = 0; k < 2 && rc == 0; k++) {
			int redirect = (k + r) % 2;

			rdr_queue(b, redirect ? 0 : 1);
			rc = dpb_run_round(b, &g, 1, redirect ? &rr[r] : &rd[r]);
		}
		if (rc != 0)
			break;
		v[0][r] = rd[r].mpps;
		v[1][r] = rr[r].mpps;
		v[2][r] = rd[r].ns;
		v[3][r] = rr[r].ns;
		v[4][r] = rr[r].ns - rd[r].ns;
		v[5][r] = rd[r].mpps > 0 ? rr[r].mpps / rd[r].mpps : 0;
		v[6][r] = rr[r].rx_ns;
		/* Every reply of a redirect round goes through the ring,
		 * none of the other round's: anything else is a fault. */
		if (rd[r].redirected != 0 || rr[r].redirected == 0) {
			printf("  redirected: %lu in the own-queue round, "
			       "%lu in the other\n",
			       (unsigned long)rd[r].redirected,
			       (unsigned long)rr[r].redirected);
			row->problems++;
		}
		printf("%5u | %14.2f %7.1f | %15.2f %7.1f %5.2f | %14.1f", r + 1,
		       rd[r].mpps, rd[r].ns, rr[r].mpps, rr[r].ns, v[5][r],
		       v[4][r]);
		if (b->rdr_split)
			printf(" | %16.1f (%.1f per poll)", v[6][r],
			       rr[r].rx_burst);
		if (rd[r].lost_ms + rr[r].lost_ms >= 1)
			printf("  (not running: %.0f ms, %.0f ms)",
			       rd[r].lost_ms, rr[r].lost_ms);
		printf("\n");
		row->problems += rd[r].problems + rr[r].problems;
	}
	if (rc != 0)
		return rc;
	row->direct_mpps = dpb_median(v[0], b->rounds);
	row->rdr_mpps = dpb_median(v[1], b->rounds);
	row->direct_ns = dpb_median(v[2], b->rounds);
	row->rdr_ns = dpb_median(v[3], b->rounds);
	row->extra_ns = dpb_median(v[4], b->rounds);
	row->ratio = dpb_median(v[5], b->rounds);
	row->rx_ns = dpb_median(v[6], b->rounds);
	printf("median| %14.2f %7.1f | %15.2f %7.1f %5.2f | %14.1f",
	       row->direct_mpps, row->direct_ns, row->rdr_mpps, row->rdr_ns,
	       row->ratio, row->extra_ns);
	if (b->rdr_split)
		printf(" | %16.1f", row->rx_ns);
	printf("\n");
	return 0;
}

int
dpb_run_rdr(struct bench *b, uint32_t nb_flows)
{
	struct rdr_row *row = &b->rdr_rows[b->nb_rdr_rows];
	int rc;

	printf("\n== %s %u: %s, %u flows\n", dpb_test_names[T_RDR], nb_flows,
	       dpb_test_what[T_RDR], nb_flows);
	memset(row, 0, sizeof(*row));
	row->flows = nb_flows;
	/* Two workers share the SNAT ports by parity; worker 1 opens (and
	 * so owns) every flow, on its own queue. */
	lb_worker_free(b->w);
	b->dp.w[b->wid] = NULL;
	b->w = NULL;
	b->dp.nb_workers = 2;
	b->wid = 1;
	rdr_queue(b, 1);
	rc = dpb_flows_open(b, nb_flows);
	if (rc == 0) {
		b->w_rx = dpb_worker_make(b, 0);
		if (b->w_rx == NULL)
			rc = -ENOMEM;
		b->dp.w[0] = b->w_rx;
	}
	if (rc == 0)
		rc = rdr_rounds(b, row);
	if (rc == 0)
		b->nb_rdr_rows++;
	else
		fprintf(stderr, "lb-dpbench: rdr: %s\n", strerror(-rc));
	/* Back to one worker on queue 0 for whatever runs next. */
	lb_worker_free(b->w_rx);
	b->w_rx = NULL;
	b->dp.w[0] = NULL;
	lb_worker_free(b->w);
	b->dp.w[1] = NULL;
	b->w = NULL;
	b->dp.nb_workers = 1;
	b->wid = 0;
	b->rxr = b->rxq[0];
	b->txr = b->txq[0];
	return rc;
}
