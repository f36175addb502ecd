/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-dpbench's tests: rounds in pairs, the order flipped every round,
 * each pair's figures printed and their medians kept for the summary.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp_bench.h"

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double
dpb_median(const double *v, unsigned int n)
{
	double s[MAX_ROUNDS];

	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

int
dpb_run_test(struct bench *b, enum test t, uint32_t nb_flows)
{
	struct res rb[MAX_ROUNDS], rw[MAX_ROUNDS], warm;
	double v[6][MAX_ROUNDS];
	struct row *row = &b->rows[b->nb_rows++];
	struct gen g;
	int rc = 0;

	dpb_gen_init(&g, t, nb_flows);
	if (is_new_test(t))
		printf("\n== %s: %s (a fresh worker per round, at most %u "
		       "SYNs per round)\n",
		       dpb_test_names[t], dpb_test_what[t], NEW_CAP);
	else
		printf("\n== %s %u: %s, %u flows\n", dpb_test_names[t], nb_flows,
		       dpb_test_what[t], nb_flows);
	/* One pair of rounds unrecorded: caches, branch predictors, TLB. */
	if (is_new_test(t))
		rc = dpb_worker_new(b);
	if (rc == 0)
		rc = dpb_run_round(b, &g, 0, &warm);
	if (rc == 0)
		rc = dpb_run_round(b, &g, 1, &warm);
	printf("round |  bare Mpps  ns/pkt busy%% |    lb Mpps  ns/pkt busy%% "
	       "| lb/bare   own ns%s\n",
	       is_new_test(t) ? " |  flows/s" : "");
	for (unsigned int r = 0; r < b->rounds && rc == 0; r++) {
		/* Alternate the order so neither side always runs first. */
		for (unsigned int k = 0; k < 2 && rc == 0; k++) {
			int worker = (k + r) % 2;

			if (worker && is_new_test(t))
				rc = dpb_worker_new(b);
			if (rc == 0)
				rc = dpb_run_round(b, &g, worker,
					       worker ? &rw[r] : &rb[r]);
		}
		if (rc != 0)
			break;
		v[0][r] = rb[r].mpps;
		v[1][r] = rw[r].mpps;
		v[2][r] = rb[r].mpps > 0 ? rw[r].mpps / rb[r].mpps : 0;
		v[3][r] = rw[r].ns - rb[r].ns;
		v[4][r] = rw[r].fps;
		v[5][r] = rb[r].gen_ns;
		printf("%5u | %10.2f %7.1f %6.1f | %10.2f %7.1f %6.1f | %7.2f "
		       "%8.1f",
		       r + 1, rb[r].mpps, rb[r].ns, 100 * rb[r].busy,
		       rw[r].mpps, rw[r].ns, 100 * rw[r].busy, v[2][r],
		       v[3][r]);
		if (is_new_test(t))
			printf(" | %8.0f", rw[r].fps);
		if (rb[r].lost_ms + rw[r].lost_ms >= 1)
			printf("  (not running: bare %.0f ms, lb %.0f ms)",
			       rb[r].lost_ms, rw[r].lost_ms);
		printf("\n");
		row->problems += rb[r].problems + rw[r].problems;
	}
	if (rc != 0) {
		fprintf(stderr, "lb-dpbench: %s: %s\n", dpb_test_names[t],
			strerror(-rc));
		return rc;
	}
	{
		double bm[MAX_ROUNDS], bn[MAX_ROUNDS], wn[MAX_ROUNDS];
		double bb[MAX_ROUNDS], wb[MAX_ROUNDS];

		for (unsigned int r = 0; r < b->rounds; r++) {
			bm[r] = rb[r].mpps;
			bn[r] = rb[r].ns;
			wn[r] = rw[r].ns;
			bb[r] = 100 * rb[r].busy;
			wb[r] = 100 * rw[r].busy;
		}
		row->test = t;
		row->flows = is_new_test(t) ? 0 : nb_flows;
		row->bare_mpps = dpb_median(bm, b->rounds);
		row->lb_mpps = dpb_median(v[1], b->rounds);
		row->ratio = dpb_median(v[2], b->rounds);
		row->bare_ns = dpb_median(bn, b->rounds);
		row->lb_ns = dpb_median(wn, b->rounds);
		row->own_ns = dpb_median(v[3], b->rounds);
		row->fps = dpb_median(v[4], b->rounds);
		row->gen_ns = dpb_median(v[5], b->rounds);
		row->bare_busy = dpb_median(bb, b->rounds);
		row->lb_busy = dpb_median(wb, b->rounds);
	}
	printf("median| %10.2f %7.1f %6.1f | %10.2f %7.1f %6.1f | %7.2f "
	       "%8.1f",
	       row->bare_mpps, row->bare_ns, row->bare_busy, row->lb_mpps,
	       row->lb_ns, row->lb_busy, row->ratio, row->own_ns);
	if (is_new_test(t))
		printf(" | %8.0f", row->fps);
	printf("\n");
	printf("generator: %.1f ns per packet (median); checks: %s\n",
	       row->gen_ns,
	       row->problems == 0 ? "every packet back, no drop, sampled "
				    "outputs correct"
				  : "FAILED (see above)");
	return 0;
}

/*
 * l7: rounds of the http service and of its plain twin alternate on the
 * same worker, the order flipped every round. Each packet is half of an
 * exchange, so requests per second are packets per second / 2.
 */
int
dpb_run_l7(struct bench *b, uint32_t nb)
{
	struct res r4[MAX_ROUNDS], r7[MAX_ROUNDS], warm;
	double v[8][MAX_ROUNDS];
	struct l7_row *row = &b->l7_rows[b->nb_l7_rows++];
	struct gen g[2];
	int rc;

	memset(row, 0, sizeof(*row));
	row->flows = nb;
	/* The pool is allocated whole for its capacity, nb flows. */
	row->pool_bytes = (double)lb_l7_pool_mem(b->w->l7) / nb;
	row->rej_bytes = (double)sizeof(*b->w->rej);
	row->streams = lb_l7_pool_streams(b->w->l7);
	printf("\n== %s %u: %s, %u flows on each service; %zu-byte request, "
	       "%zu-byte response (frames of %u and %u bytes)\n",
	       dpb_test_names[T_L7], nb, dpb_test_what[T_L7], nb, sizeof(l7_req) - 1,
	       sizeof(l7_resp) - 1, b->t7_req.len, b->t7_resp[0].len);
	for (uint32_t i = 0; i < 2; i++) {
		dpb_gen_init(&g[i], T_L7, nb);
		g[i].svc = i;
	}
	rc = dpb_run_round(b, &g[L7_SVC_PLAIN], 1, &warm);
	if (rc == 0)
		rc = dpb_run_round(b, &g[L7_SVC_HTTP], 1, &warm);
	printf("round |    L4 Mpps  ns/pkt busy%% Mreq/s |    L7 Mpps  "
	       "ns/pkt busy%% Mreq/s | L7/L4 +ns/exchange\n");
	for (unsigned int r = 0; r < b->rounds && rc == 0; r++) {
		for (unsigned int k = 0; k < 2 && rc == 0; k++) {
			int http = (k + r) % 2;

			rc = dpb_run_round(b, &g[http ? L7_SVC_HTTP : L7_SVC_PLAIN],
				       1, http ? &r7[r] : &r4[r]);
		}
		if (rc != 0)
			break;
		v[0][r] = r4[r].mpps;
		v[1][r] = r7[r].mpps;
		v[2][r] = r4[r].mpps > 0 ? r7[r].mpps / r4[r].mpps : 0;
		/* Two packets per exchange: the extra work of one. */
		v[3][r] = 2 * (r7[r].ns - r4[r].ns);
		v[4][r] = r4[r].ns;
		v[5][r] = r7[r].ns;
		v[6][r] = 100 * r4[r].busy;
		v[7][r] = 100 * r7[r].busy;
		printf("%5u | %10.2f %7.1f %5.1f %6.2f | %10.2f %7.1f %5.1f "
		       "%6.2f | %5.2f %8.1f",
		       r + 1, r4[r].mpps, r4[r].ns, v[6][r], r4[r].mpps / 2,
		       r7[r].mpps, r7[r].ns, v[7][r], r7[r].mpps / 2, v[2][r],
		       v[3][r]);
		if (r4[r].lost_ms + r7[r].lost_ms >= 1)
			printf("  (not running: L4 %.0f ms, L7 %.0f ms)",
			       r4[r].lost_ms, r7[r].lost_ms);
		if (r7[r].fb_dropped > 0)
			printf("  (%" PRIu64 " feedback records lost)",
			       r7[r].fb_dropped);
		printf("\n");
		row->problems += r4[r].problems + r7[r].problems;
	}
	if (rc != 0) {
		fprintf(stderr, "lb-dpbench: l7: %s\n", strerror(-rc));
		return rc;
	}
	row->l4_mpps = dpb_median(v[0], b->rounds);
	row->l7_mpps = dpb_median(v[1], b->rounds);
	row->ratio = dpb_median(v[2], b->rounds);
	row->extra_ns = dpb_median(v[3], b->rounds);
	row->l4_ns = dpb_median(v[4], b->rounds);
	row->l7_ns = dpb_median(v[5], b->rounds);
	row->l4_busy = dpb_median(v[6], b->rounds);
	row->l7_busy = dpb_median(v[7], b->rounds);
	printf("median| %10.2f %7.1f %5.1f %6.2f | %10.2f %7.1f %5.1f %6.2f | "
	       "%5.2f %8.1f\n",
	       row->l4_mpps, row->l4_ns, row->l4_busy, row->l4_mpps / 2,
	       row->l7_mpps, row->l7_ns, row->l7_busy, row->l7_mpps / 2,
	       row->ratio, row->extra_ns);
	printf("checks: %s\n",
	       row->problems == 0 ? "every packet back, no drop, every "
				    "response followed and reported, sampled "
				    "outputs correct"
				  : "FAILED (see above)");
	return 0;
}

/*
 * adm: new flows on the service with admission control off and on, both
 * on a fresh worker each round, the order flipped every round. The limit
 * is far above what one worker can take, so every SYN is admitted and
 * the difference is what the check costs: per key of the service (one
 * bucket) or per client (65536 clients, each seen once per 65536 SYNs).
 */
int
dpb_run_adm(struct bench *b, enum lb_admit_key key)
{
	struct res r0[MAX_ROUNDS], r1[MAX_ROUNDS], warm;
	struct adm_row *row = &b->adm_rows[b->nb_adm_rows++];
	struct lb_admit_conf on, off;
	double v[6][MAX_ROUNDS];
	struct gen g;
	int rc = 0;

	memset(row, 0, sizeof(*row));
	row->key = lb_admit_key_names[key];
	lb_admit_conf_default(&off);
	on = off;
	on.key = (uint8_t)key;
	on.rate = LB_ADMIT_RATE_MAX;
	on.burst = LB_ADMIT_BURST_MAX;
	printf("\n== %s %s: %s, admit-key %s (65536 clients; a fresh worker "
	       "per round, at most %u SYNs per round)\n",
	       dpb_test_names[T_ADM], row->key, dpb_test_what[T_ADM], row->key,
	       NEW_CAP);
	dpb_gen_init(&g, T_NEW, 0);
	/* Per client, the steady state is measured: a fresh worker's first
	 * sight of each of the 65536 clients (its first borrow) falls in
	 * the warm-up, which lasts until every client sent a SYN. */
	if (key != LB_ADMIT_KEY_SVC)
		g.warm_min = 65536;
	/* The forwarding tests' table (l7 may have run before). */
	b->dp.conf = b->conf_l4;
	b->dp.admit = b->admit_sh;
	for (unsigned int r = 0; r <= b->rounds && rc == 0; r++) {
		for (unsigned int k = 0; k < 2 && rc == 0; k++) {
			int adm = (k + r) % 2;
			struct res *res = r == 0 ? &warm
					  : adm	 ? &r1[r - 1]
						 : &r0[r - 1];
			uint64_t pass;

			b->conf_l4->svc[0].opts.admit = adm ? on : off;
			rc = dpb_worker_new(b);
			if (rc == 0)
				rc = dpb_run_round(b, &g, 1, res);
			if (rc != 0 || !adm || r == 0)
				continue;
			pass = b->w->st.admit.n[key][LB_ADMIT_PASS] +
			       b->w->st.admit.n[key][LB_ADMIT_PASS_FULL];
			v[5][r - 1] = res->adm_pass > 0
					      ? (double)res->adm_atomics /
							(double)res->adm_pass
					      : 0;
			if (pass != b->w->st.flows_created) {
				printf("  round: %" PRIu64 " admitted, %" PRIu64
				       " flows created\n",
				       pass, b->w->st.flows_created);
				res->problems++;
			}
		}
		if (r == 0 && rc == 0)
			printf("round |  off flows/s  ns/pkt |   on flows/s  "
			       "ns/pkt | on/off +ns/flow | atomics/admission"
			       "\n");
		if (r == 0 || rc != 0)
			continue;
		v[0][r - 1] = r0[r - 1].fps;
		v[1][r - 1] = r1[r - 1].fps;
		v[2][r - 1] =
			r0[r - 1].fps > 0 ? r1[r - 1].fps / r0[r - 1].fps : 0;
		v[3][r - 1] = r1[r - 1].ns - r0[r - 1].ns;
		v[4][r - 1] = r0[r - 1].ns;
		printf("%5u | %12.0f %7.1f | %12.0f %7.1f | %6.2f %7.1f | "
		       "%.4f\n",
		       r, r0[r - 1].fps, r0[r - 1].ns, r1[r - 1].fps,
		       r1[r - 1].ns, v[2][r - 1], v[3][r - 1], v[5][r - 1]);
		row->problems += r0[r - 1].problems + r1[r - 1].problems;
	}
	b->conf_l4->svc[0].opts.admit = off;
	b->dp.admit = NULL;
	if (rc != 0) {
		fprintf(stderr, "lb-dpbench: adm: %s\n", strerror(-rc));
		return rc;
	}
	{
		double on_ns[MAX_ROUNDS];

		for (unsigned int r = 0; r < b->rounds; r++)
			on_ns[r] = r1[r].ns;
		row->on_ns = dpb_median(on_ns, b->rounds);
	}
	row->off_fps = dpb_median(v[0], b->rounds);
	row->on_fps = dpb_median(v[1], b->rounds);
	row->ratio = dpb_median(v[2], b->rounds);
	row->extra_ns = dpb_median(v[3], b->rounds);
	row->off_ns = dpb_median(v[4], b->rounds);
	row->atomics = dpb_median(v[5], b->rounds);
	printf("median| %12.0f %7.1f | %12.0f %7.1f | %6.2f %7.1f | %.4f\n",
	       row->off_fps, row->off_ns, row->on_fps, row->on_ns, row->ratio,
	       row->extra_ns, row->atomics);
	printf("checks: %s\n", row->problems == 0
				       ? "every SYN admitted and forwarded, "
					 "no drop, sampled outputs correct"
				       : "FAILED (see above)");
	return 0;
}

/*
 * src: new flows with the budget of new flows per source off and on,
 * on a fresh worker each round, the order flipped every round, as adm
 * does: 65,536 clients, each far below its budget, so every SYN passes
 * and the difference is what the charge costs (a set per source in a
 * table of --src-budget-sources, 65,536 by default).
 */
int
dpb_run_src(struct bench *b)
{
	struct res r0[MAX_ROUNDS], r1[MAX_ROUNDS], warm;
	struct lb_src_budget_conf on = b->dp.src_budget;
	double off_ns[MAX_ROUNDS], on_ns[MAX_ROUNDS], d[MAX_ROUNDS];
	unsigned int problems = 0;
	struct gen g;
	int rc = 0;

	if (on.rate == 0)
		lb_src_budget_conf_default(&on);
	printf("\n== %s: %s (65536 clients; a fresh worker per round, at "
	       "most %u SYNs per round)\n",
	       dpb_test_names[T_SRC], dpb_test_what[T_SRC], NEW_CAP);
	dpb_gen_init(&g, T_NEW, 0);
	b->dp.conf = b->conf_l4;
	for (unsigned int r = 0; r <= b->rounds && rc == 0; r++) {
		for (unsigned int k = 0; k < 2 && rc == 0; k++) {
			int src = (k + r) % 2;

			b->dp.src_budget = on;
			if (!src)
				b->dp.src_budget.rate = 0;
			rc = dpb_worker_new(b);
			if (rc == 0)
				rc = dpb_run_round(b, &g, 1,
						   r == 0  ? &warm
						   : src ? &r1[r - 1]
							 : &r0[r - 1]);
		}
		if (r == 0 && rc == 0)
			printf("round |  off flows/s  ns/pkt |   on flows/s  "
			       "ns/pkt | +ns/flow\n");
		if (r == 0 || rc != 0)
			continue;
		off_ns[r - 1] = r0[r - 1].ns;
		on_ns[r - 1] = r1[r - 1].ns;
		d[r - 1] = r1[r - 1].ns - r0[r - 1].ns;
		problems += r0[r - 1].problems + r1[r - 1].problems;
		printf("%5u | %12.0f %7.1f | %12.0f %7.1f | %7.1f\n", r,
		       r0[r - 1].fps, r0[r - 1].ns, r1[r - 1].fps,
		       r1[r - 1].ns, d[r - 1]);
	}
	b->dp.src_budget = on;
	if (rc != 0) {
		fprintf(stderr, "lb-dpbench: src: %s\n", strerror(-rc));
		return rc;
	}
	printf("median|              %7.1f |              %7.1f | %7.1f\n",
	       dpb_median(off_ns, b->rounds), dpb_median(on_ns, b->rounds),
	       dpb_median(d, b->rounds));
	printf("checks: %s\n", problems == 0 ? "every SYN forwarded, no drop, "
					       "sampled outputs correct"
					     : "FAILED (see above)");
	return 0;
}

/*
 * synp: new connections with the SYN proxy, against the plain SYN path,
 * on a fresh worker each round, the order turned every round: every
 * packet a SYN the worker answers with a cookie (no state), or every
 * packet the ACK that proves one (a flow, a SNAT port and a SYN to the
 * backend made from it), beside every packet a plain SYN (a flow, a SNAT
 * port, the SYN forwarded). No backend answers, as in "new".
 */
int
dpb_run_synp(struct bench *b)
{
	static const char *const side[SYNP_SIDES] = {"plain SYN", "cookie SYN",
						     "cookie ACK"};
	struct res r[SYNP_SIDES][MAX_ROUNDS], warm;
	double ns[SYNP_SIDES][MAX_ROUNDS], d[2][MAX_ROUNDS];
	uint8_t mode = b->conf_l4->svc[0].opts.synp.mode;
	unsigned int problems = 0;
	struct gen g;
	int rc = 0;

	printf("\n== %s: %s (a fresh worker per round, at most %u per "
	       "round)\n",
	       dpb_test_names[T_SYNP], dpb_test_what[T_SYNP], NEW_CAP);
	dpb_gen_init(&g, T_NEW, 0);
	b->dp.conf = b->conf_l4;
	for (unsigned int n = 0; n <= b->rounds && rc == 0; n++) {
		for (unsigned int k = 0; k < SYNP_SIDES && rc == 0; k++) {
			int s = (int)((k + n) % SYNP_SIDES);

			b->synp = s;
			b->conf_l4->svc[0].opts.synp.mode =
				s == SYNP_PLAIN ? LB_CONF_SYNP_OFF :
						  LB_CONF_SYNP_ON;
			rc = dpb_worker_new(b);
			if (rc == 0)
				rc = dpb_run_round(b, &g, 1,
						   n == 0 ? &warm :
							    &r[s][n - 1]);
		}
		if (n == 0 && rc == 0)
			printf("round | %s ns/pkt | %s ns/pkt | %s ns/pkt | "
			       "+ns/SYN +ns/ACK\n",
			       side[0], side[1], side[2]);
		if (n == 0 || rc != 0)
			continue;
		for (int s = 0; s < SYNP_SIDES; s++) {
			ns[s][n - 1] = r[s][n - 1].ns;
			problems += r[s][n - 1].problems;
		}
		d[0][n - 1] = ns[SYNP_SYN][n - 1] - ns[SYNP_PLAIN][n - 1];
		d[1][n - 1] = ns[SYNP_ACK][n - 1] - ns[SYNP_PLAIN][n - 1];
		printf("%5u | %16.1f | %17.1f | %17.1f | %7.1f %7.1f\n", n,
		       ns[0][n - 1], ns[1][n - 1], ns[2][n - 1], d[0][n - 1],
		       d[1][n - 1]);
	}
	b->conf_l4->svc[0].opts.synp.mode = mode;
	b->synp = SYNP_PLAIN;
	if (rc != 0) {
		fprintf(stderr, "lb-dpbench: synp: %s\n", strerror(-rc));
		return rc;
	}
	printf("median| %16.1f | %17.1f | %17.1f | %7.1f %7.1f\n",
	       dpb_median(ns[0], b->rounds), dpb_median(ns[1], b->rounds),
	       dpb_median(ns[2], b->rounds), dpb_median(d[0], b->rounds),
	       dpb_median(d[1], b->rounds));
	printf("checks: %s\n",
	       problems == 0 ? "every SYN answered or forwarded, every ACK's "
			       "cookie proved, no drop, sampled outputs correct"
			     : "FAILED (see above)");
	return 0;
}
