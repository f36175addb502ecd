/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Admission (lb_admit_check()) per new flow: one key with tokens at hand,
 * 1000 keys, 65536 keys each seen once per 65536 checks, more keys than
 * the local table holds (every check replaces a local bucket and
 * borrows), and one key shared with a second
 * thread borrowing from the same global bucket at the same time; each
 * against a local token-bucket take, the cheapest thing admission could
 * be. Then the atomic operations on shared memory per admission.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "lb/admit.h"

#define STEP_NS 20 /* simulated time per check: 50M checks/s */
#define MANY_KEYS 65536u	/* lb-dpbench's adm client row */
#define FLOOD_KEYS 300000u	/* more than a worker's local buckets */
#define FIT_KEYS 1000u

struct adm_arg {
	struct lb_admit_lc *lc;
	struct lb_admit_stats st;
	struct lb_admit_svc_stats svc[1];
	struct lb_admit_conf c;
	uint32_t nb_keys;
	uint32_t next;
	uint64_t now;
};

struct base_arg {
	struct lb_tb_global g;
	struct lb_tb_local_conf conf;
	struct lb_tb_local l;
	uint64_t now;
};

static void
run_admit(void *arg, uint64_t iters)
{
	struct adm_arg *a = arg;
	uint64_t ok = 0;

	for (uint64_t i = 0; i < iters; i++) {
		a->now += STEP_NS;
		if (++a->next == a->nb_keys)
			a->next = 0;
		ok += lb_admit_check(a->lc, 0, &a->c, a->next, 0, a->now) ==
		      LB_ADMIT_PASS;
	}
	lb_bench_sink += ok;
}

static void
run_base(void *arg, uint64_t iters)
{
	struct base_arg *a = arg;
	uint64_t ok = 0;

	for (uint64_t i = 0; i < iters; i++) {
		a->now += STEP_NS;
		ok += lb_tb_local_take(&a->l, &a->conf, &a->g, 1, a->now) == 0;
	}
	lb_bench_sink += ok;
}

static int
adm_setup(struct adm_arg *a, struct lb_admit_shm *sh, enum lb_admit_key key,
	  uint32_t nb_keys)
{
	lb_admit_conf_default(&a->c);
	a->c.key = (uint8_t)key;
	a->c.rate = LB_ADMIT_RATE_MAX;
	a->c.burst = LB_ADMIT_BURST_MAX;
	a->nb_keys = nb_keys;
	a->lc = lb_admit_lc_create(sh, LB_ADMIT_LOCAL_DEFAULT, &a->st, a->svc,
				   1);
	if (a->lc == NULL)
		return -1;
	/* Steady state: two intervals give every key its demand history
	 * (a new key borrows one token at a time until its first interval
	 * ends); the counters start after them. */
	run_admit(a, 2 * LB_ADMIT_INTERVAL_NS / STEP_NS);
	memset(&a->st, 0, sizeof(a->st));
	return 0;
}

/* The second thread of the contention case: checks on the same key,
 * borrowing from the same global bucket, until told to stop. */
struct rival {
	struct adm_arg a;
	_Atomic int stop;
	uint64_t checks;
};

static void *
rival_run(void *arg)
{
	struct rival *r = arg;

	while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		run_admit(&r->a, 64);
		r->checks += 64;
	}
	return NULL;
}

static void
atomics_line(FILE *out, const char *what, const struct lb_admit_stats *st)
{
	uint64_t pass = st->n[0][LB_ADMIT_PASS] + st->n[1][LB_ADMIT_PASS];

	fprintf(out,
		"  %-46s %10.4f atomics/admission (%lu admissions, %lu "
		"borrows)\n",
		what, pass ? (double)st->shm_atomics / (double)pass : 0.0,
		(unsigned long)pass, (unsigned long)st->borrows);
}

void
lb_bench_admit(FILE *out, unsigned int rounds)
{
	static struct adm_arg one, fit, many, flood, shared;
	static struct rival rival;
	struct lb_tb_global_conf gc = {.capacity = LB_TB_CAPACITY_MAX,
				       .rate = LB_TB_RATE_MAX};
	struct base_arg base = {0};
	uint64_t sz = lb_admit_shm_size(LB_ADMIT_SHM_SLOTS_DEFAULT);
	struct lb_admit_shm *sh = lb_admit_shm_init(aligned_alloc(64, sz),
						    LB_ADMIT_SHM_SLOTS_DEFAULT);
	const struct lb_bench_case c_base = {"tb local take, tokens at hand",
					     run_base, &base};
	const struct lb_bench_case c_one = {"admit check, one service key",
					    run_admit, &one};
	const struct lb_bench_case c_fit = {"admit check, 1000 client keys",
					    run_admit, &fit};
	const struct lb_bench_case c_many = {
		"admit check, 65536 client keys", run_admit, &many};
	const struct lb_bench_case c_flood = {
		"admit check, 300000 client keys (LRU)", run_admit, &flood};
	const struct lb_bench_case c_shared = {
		"admit check, one key, 2 threads", run_admit, &shared};
	pthread_t tid;

	lb_tb_local_conf_default(&base.conf);
	base.conf.min_batch = LB_TB_CAPACITY_MAX;
	if (sh == NULL || lb_tb_global_init(&base.g, &gc, 0) != 0 ||
	    lb_tb_local_init(&base.l, 1, 0) != 0 ||
	    adm_setup(&one, sh, LB_ADMIT_KEY_SVC, 1) != 0 ||
	    adm_setup(&fit, sh, LB_ADMIT_KEY_CLIENT, FIT_KEYS) != 0 ||
	    adm_setup(&many, sh, LB_ADMIT_KEY_CLIENT, MANY_KEYS) != 0 ||
	    adm_setup(&flood, sh, LB_ADMIT_KEY_CLIENT, FLOOD_KEYS) != 0 ||
	    adm_setup(&shared, sh, LB_ADMIT_KEY_SVC, 1) != 0 ||
	    adm_setup(&rival.a, sh, LB_ADMIT_KEY_SVC, 1) != 0) {
		fprintf(out, "admit: setup failed\n");
		return;
	}
	/* Each thread of the shared case keeps its own simulated clock: the
	 * bucket credits refill up to the later one, and its rate is more
	 * than both together take, so the case measures contention. */
	lb_bench_pair(out, &c_one, &c_base, 2000000, rounds);
	lb_bench_pair(out, &c_fit, &c_base, 2000000, rounds);
	lb_bench_pair(out, &c_many, &c_base, 1000000, rounds);
	lb_bench_pair(out, &c_flood, &c_base, 500000, rounds);
	if (pthread_create(&tid, NULL, rival_run, &rival) == 0) {
		lb_bench_pair(out, &c_shared, &c_base, 1000000, rounds);
		atomic_store(&rival.stop, 1);
		pthread_join(tid, NULL);
	}
	fprintf(out, "admit: atomic operations on shared memory\n");
	atomics_line(out, "one service key, steady", &one.st);
	atomics_line(out, "1000 client keys", &fit.st);
	atomics_line(out, "65536 client keys", &many.st);
	atomics_line(out, "300000 client keys (every check a new bucket)",
		     &flood.st);
	atomics_line(out, "one key, 2 threads (this thread)", &shared.st);
	atomics_line(out, "one key, 2 threads (the other)", &rival.a.st);
	for (struct adm_arg *a = &one; a != NULL; a = a == &one	   ? &fit
						      : a == &fit   ? &many
						      : a == &many  ? &flood
						      : a == &flood ? &shared
								    : NULL)
		lb_admit_lc_free(a->lc);
	lb_admit_lc_free(rival.a.lc);
	free(sh);
}
