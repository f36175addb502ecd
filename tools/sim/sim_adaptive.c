/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The error-adaptive scheduler replaying the experiments of the
 * adaptive-request-dispatch paper on a simulated 3-node cluster: figure 6
 * (n2 down for 5000 requests) and figure 12 (n1 down from request 1001 to
 * 2000, then back up).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>

#include "lb/adaptive.h"
#include "lb/rng.h"

#define NODES 3

/* Whether node @be answers request number @req (1-based). */
typedef bool (*up_fn)(uint32_t be, uint32_t req);

struct tally {
	uint32_t first[NODES]; /* trial-1 picks */
	uint32_t retry[NODES]; /* trials 2..n landing here */
	uint32_t fail[NODES];
	uint32_t ok[NODES];
	uint32_t deferred; /* failed every trial: Algorithm 3's business */
};

/* Algorithm 2 for one request; -1 on an unexpected scheduler error. */
static int
handle_request(struct lb_adaptive *ad, const struct lb_rng *rng, up_fn up,
	       uint32_t req, struct tally *t)
{
	struct lb_adaptive_trial tr;
	int rc = lb_adaptive_trial_begin(ad, rng, &tr);

	if (rc == -ENOENT) {
		t->deferred++;
		return 0;
	}
	if (rc != 0)
		return -1;
	t->first[tr.be]++;
	for (;;) {
		if (up(tr.be, req)) {
			t->ok[tr.be]++;
			return lb_adaptive_trial_ok(ad, &tr) == 0 ? 0 : -1;
		}
		t->fail[tr.be]++;
		rc = lb_adaptive_trial_fail(ad, &tr);
		if (rc == -ENOENT) {
			t->deferred++;
			return 0;
		}
		if (rc != 0)
			return -1;
		t->retry[tr.be]++;
	}
}

static bool
fig6_up(uint32_t be, uint32_t req)
{
	(void)req;
	return be != 1;
}

static bool
fig12_up(uint32_t be, uint32_t req)
{
	return be != 0 || req <= 1000 || req > 2000;
}

static double
lp_of(struct lb_adaptive *ad, uint32_t be, uint32_t *errors)
{
	struct lb_adaptive_view v;

	if (lb_adaptive_view(ad, be, &v) != 0)
		return -1.0;
	if (errors != NULL)
		*errors = v.errors;
	return v.lp;
}

static int
fig6(FILE *out, const struct lb_rng *rng)
{
	static const uint32_t marks[] = {1, 2, 5, 10, 50};
	const size_t nmarks = sizeof(marks) / sizeof(marks[0]);
	struct lb_adaptive *ad = lb_adaptive_create(NODES, NULL);
	struct lb_adaptive_view at[sizeof(marks) / sizeof(marks[0])];
	uint32_t when[sizeof(marks) / sizeof(marks[0])] = {0};
	struct tally t = {0};
	uint32_t total_ok = 0, e = 0;
	size_t next = 0;
	int rc = 0;

	if (ad == NULL)
		return -1;
	fprintf(out, "Fig. 6: 3 nodes, n2 down, 5000 requests "
		     "(paper: n1 2529, n2 65, n3 2473)\n");
	for (uint32_t req = 1; req <= 5000 && rc == 0; req++) {
		rc = handle_request(ad, rng, fig6_up, req, &t);
		/* Note when n2's error count crosses each mark. */
		if (rc == 0 && next < nmarks &&
		    lb_adaptive_view(ad, 1, &at[next]) == 0 &&
		    at[next].errors >= marks[next])
			when[next++] = req;
	}
	fprintf(out, "  node  trial-1  retried-here  failed  succeeded  "
		     "e_i  LP_i (eq. 6)\n");
	for (uint32_t i = 0; i < NODES && rc == 0; i++) {
		double lp = lp_of(ad, i, &e);

		fprintf(out, "  n%u    %7u  %12u  %6u  %9u  %3u  %.4f\n", i + 1,
			t.first[i], t.retry[i], t.fail[i], t.ok[i], e, lp);
		total_ok += t.ok[i];
	}
	fprintf(out,
		"  succeeded %u of 5000, would be deferred %u; every "
		"n2 failure was retried on n3 (round-robin)\n",
		total_ok, t.deferred);
	/* n2 should have been starved to a few percent with nothing lost. */
	if (t.first[1] > 250 || t.deferred != 0 || total_ok != 5000 ||
	    next != nmarks)
		rc = -1;

	fprintf(out, "  n2's landing probability as its errors grew (h = 2 "
		     "healthy peers):\n"
		     "    e_n2  at request  w_n2 / sum  LP eq. 6  eq. 9 "
		     "1/((e+1)h+1)\n");
	for (size_t k = 0; k < next && rc == 0; k++)
		fprintf(out, "    %4u  %10u  %4llu / %-4llu  %.5f   %.5f\n",
			marks[k], when[k], (unsigned long long)at[k].weight,
			(unsigned long long)at[k].weight_sum, at[k].lp,
			1.0 / ((marks[k] + 1) * 2.0 + 1));
	lb_adaptive_free(ad);
	return rc;
}

static int
fig12(FILE *out, const struct lb_rng *rng)
{
	struct lb_adaptive *ad = lb_adaptive_create(NODES, NULL);
	uint32_t e = 0, down_e = 0, reset_at = 0;
	double lp = 0, down_lp = 0;
	int rc = 0;
	struct tally all = {0};

	if (ad == NULL)
		return -1;
	fprintf(out, "Fig. 12: n1 down for requests 1001-2000, then up "
		     "again\n"
		     "  requests    trial-1 n1/n2/n3   n1 failed  retried on "
		     "n2  e_n1  LP_n1\n");
	for (uint32_t w = 0; w < 12 && rc == 0; w++) {
		struct tally t = {0};

		for (uint32_t req = w * 250 + 1;
		     req <= (w + 1) * 250 && rc == 0; req++) {
			rc = handle_request(ad, rng, fig12_up, req, &t);
			if (req == 2000)
				down_lp = lp_of(ad, 0, &down_e);
			if (req > 2000 && reset_at == 0 &&
			    lp_of(ad, 0, &e) > 0 && e == 0)
				reset_at = req;
		}
		lp = lp_of(ad, 0, &e);
		fprintf(out,
			"  %4u-%-4u   %4u/%4u/%4u   %9u  %13u  %4u  %.4f\n",
			w * 250 + 1, (w + 1) * 250, t.first[0], t.first[1],
			t.first[2], t.fail[0], t.retry[1], e, lp);
		for (uint32_t i = 0; i < NODES; i++)
			all.first[i] += w >= 8 ? t.first[i] : 0;
		all.deferred += t.deferred;
	}
	fprintf(out,
		"  n1 came back with e_n1 = %u (LP %.4f); request %u "
		"landed on it, succeeded and reset e_n1 to 0\n",
		down_e, down_lp, reset_at);
	/* Recovered: n1 is picked again and its errors are gone. */
	if (rc != 0 || all.deferred != 0 || e != 0 || reset_at == 0 ||
	    all.first[0] < 200)
		rc = -1;
	lb_adaptive_free(ad);
	return rc;
}

int
lb_sim_adaptive(FILE *out)
{
	struct lb_xoshiro x;
	struct lb_rng rng = lb_rng_xoshiro(&x);
	int rc;

	lb_xoshiro_seed(&x, 2020);
	fprintf(out, "Pick by w_i = ceil(E_m/(1+e_i)), E_i = "
		     "floor((1+e_i)^1.5); a failure retries the next node.\n");
	rc = fig6(out, &rng);
	if (rc == 0)
		rc = fig12(out, &rng);
	return rc == 0 ? 0 : 1;
}
