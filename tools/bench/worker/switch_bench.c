/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-switchbench: how long one poll of a worker (lb_worker_poll()) takes
 * while the worker takes up a new table, with ten Maglev services of 16
 * backends each. A poll that takes milliseconds is time the rx rings
 * fill without being read: at 10 Mpps a 1024-entry ring is full in about
 * 100 us.
 *
 * The worker runs on the main lcore on one ring port with no traffic, so
 * a poll's time is its own work: reading empty queues, housekeeping, and
 * whatever the table switch costs it. Each round publishes two tables, as
 * lb-control would (the previous one, edited, one generation on):
 *  - one: one backend weight of one service changed (a scaling step);
 *  - all: one backend weight of every service changed;
 * and polls for --window milliseconds after each, timing every poll in
 * CPU time of this thread (cpu_ns()). A round also times a window with no
 * table change (idle), the noise of this host. Reported per case: the
 * longest poll (us) and the number of polls longer than 1 ms.
 *
 * With --pools N (1..15) each service routes by content to N named
 * Maglev pools besides its own: the worker then builds a Maglev table per
 * pool too, and a weight change rebuilds only the pool it is in.
 *
 * usage: lb-switchbench [--rounds N] [--window MS] [--pools N]
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "dp.h"
#include "lb/cmd.h"
#include "lb/conf.h"
#include "lb/dpconf.h"
#include "lb/sched.h"
#include "rundir.h"

#define NB_SVCS 10u
#define NB_BES 16u
#define RING_SIZE 1024u
#define NB_MBUFS 4095u
#define SLOW_NS 1000000ull /* a poll that let a 1024-entry ring overflow */
#define MAX_ROUNDS 64u

enum { C_IDLE, C_ONE, C_ALL, C_MAX };
static const char *const case_names[C_MAX] = {"idle", "one", "all"};

struct res {
	double max_us;	   /* longest poll */
	unsigned int slow; /* polls longer than SLOW_NS */
};

/*
 * This thread's CPU time: a poll's own work, without the time the host
 * gave the CPU to others (other processes share these vCPUs, and wall
 * time maxima here are their time slices, whatever the worker does).
 */
static uint64_t
cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int
sched_known(const char *name)
{
	return lb_sched_find(name) != NULL;
}

/* Named pools of each service (--pools): 0, none. */
static unsigned int nb_pools;

/* One lb-control command line, formatted; 0 or its error, printed. */
static int
cmd(struct lb_cmd_reg *reg, struct lb_cmd_out *out, const char *fmt, ...)
{
	char line[160];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	lb_cmd_out_reset(out);
	rc = lb_cmd_exec_line(reg, line, out);
	if (rc != 0)
		fprintf(stderr, "lb-switchbench: '%s': %s\n", line,
			lb_cmd_out_errmsg(out));
	return rc;
}

/*
 * Ten Maglev services with 16 backends each, the first table. With
 * --pools N, each routes by content (SYN proxy, one Host rule a pool)
 * to N named Maglev pools, backend b in pool b % (N + 1) (0: its own).
 */
static struct lb_dpconf *
conf_first(void)
{
	struct lb_cmd_reg *reg = lb_cmd_reg_create();
	struct lb_conf *conf = lb_conf_create(sched_known);
	struct lb_dpconf *d = rte_zmalloc("swb_conf", sizeof(*d), 0);
	struct lb_cmd_out out;
	char err[256];
	int rc = reg != NULL && conf != NULL && d != NULL ? 0 : -ENOMEM;

	if (rc == 0)
		rc = lb_conf_register(conf, reg);
	lb_cmd_out_init(&out);
	if (rc == 0)
		rc = cmd(reg, &out, "addr add 10.0.0.1/16 port 0");
	if (rc == 0)
		rc = cmd(reg, &out, "snat add 10.0.2.1 port 0");
	for (unsigned int s = 0; rc == 0 && s < NB_SVCS; s++) {
		unsigned int v = 10 + s;

		rc = cmd(reg, &out, "service add tcp 10.0.100.%u:80 sched maglev",
			 v);
		if (rc == 0 && nb_pools > 0)
			rc = cmd(reg, &out,
				 "service set tcp 10.0.100.%u:80 synproxy on", v);
		for (unsigned int p = 1; rc == 0 && p <= nb_pools; p++)
			rc = cmd(reg, &out,
				 "pool add tcp 10.0.100.%u:80 p%u sched maglev",
				 v, p);
		for (unsigned int b = 1; rc == 0 && b <= NB_BES; b++) {
			unsigned int p = nb_pools > 0 ? b % (nb_pools + 1) : 0;

			if (p == 0)
				rc = cmd(reg, &out,
					 "backend add tcp 10.0.100.%u:80 "
					 "10.0.1.%u:8080",
					 v, b);
			else
				rc = cmd(reg, &out,
					 "backend add tcp 10.0.100.%u:80 "
					 "10.0.1.%u:8080 pool p%u",
					 v, b, p);
		}
		for (unsigned int p = 1; rc == 0 && p <= nb_pools; p++)
			rc = cmd(reg, &out,
				 "rule add tcp 10.0.100.%u:80 host "
				 "p%u.example.com pool p%u",
				 v, p, p);
	}
	if (rc == 0) {
		rc = lb_dpconf_build(d, conf, err, sizeof(err));
		if (rc != 0)
			fprintf(stderr, "lb-switchbench: %s\n", err);
	}
	lb_cmd_out_free(&out);
	lb_conf_free(conf);
	lb_cmd_reg_free(reg);
	if (rc != 0) {
		rte_free(d);
		return NULL;
	}
	return d;
}

/*
 * Publishes the next table for case @p c of round @p r (none for idle),
 * then polls for @p window_ns and times each poll.
 */
static int
run_case(struct lb_dp *dp, int c, unsigned int r, uint64_t window_ns,
	 struct res *out)
{
	double ns_per_tsc = dp->ns_per_tsc;
	uint64_t t0, end, max = 0;

	if (c != C_IDLE) {
		struct lb_dpconf *d = rte_malloc("swb_conf", sizeof(*d), 0);

		if (d == NULL)
			return -ENOMEM;
		memcpy(d, dp->conf, sizeof(*d));
		d->gen++;
		for (unsigned int s = 0; s < NB_SVCS; s++) {
			struct lb_dpconf_be *be;

			if (c == C_ONE && s != r % NB_SVCS)
				continue;
			be = &d->svc[s].be[r % NB_BES];
			be->weight = be->weight == 1 ? 2 : 1;
		}
		/* The worker copies the table at its next poll and keeps
		 * nothing of the old one (see lb_worker_switch()). */
		rte_free(dp->conf);
		dp->conf = d;
	}
	out->slow = 0;
	t0 = rte_rdtsc();
	end = t0 + (uint64_t)((double)window_ns / ns_per_tsc);
	for (;;) {
		uint64_t a = rte_rdtsc(), ca, cb;

		if (a >= end)
			break;
		ca = cpu_ns();
		lb_worker_poll(dp->w[0]);
		cb = cpu_ns();
		if (cb - ca > max)
			max = cb - ca;
		out->slow += cb - ca > SLOW_NS;
	}
	out->max_us = (double)max / 1e3;
	return 0;
}

static int
cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * The pool, a ring port and the worker the rounds measure; dp->conf is
 * the first table.
 */
static int
dp_setup(struct lb_dp *dp)
{
	struct rte_ring *rxr, *txr;
	struct rte_mempool *pool;

	pool = rte_pktmbuf_pool_create("swb_mbufs", NB_MBUFS, 0, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE,
				       (int)rte_socket_id());
	rxr = rte_ring_create("swb_rx", RING_SIZE, (int)rte_socket_id(),
			      RING_F_SP_ENQ | RING_F_SC_DEQ);
	txr = rte_ring_create("swb_tx", RING_SIZE, (int)rte_socket_id(),
			      RING_F_SP_ENQ | RING_F_SC_DEQ);
	dp->conf = conf_first();
	if (pool == NULL || rxr == NULL || txr == NULL || dp->conf == NULL ||
	    rte_eth_from_rings("swb0", &rxr, 1, &txr, 1, rte_socket_id()) !=
		    0) {
		fprintf(stderr, "lb-switchbench: setup failed\n");
		return -1;
	}
	dp->pool = pool;
	dp->nb_ports = 1;
	dp->nb_workers = 1;
	dp->ns_per_tsc = 1e9 / (double)rte_get_tsc_hz();
	/* A fixed seed: every round builds the same Maglev tables. */
	dp->hash_seed = 0x5eed5eed5eed5eedULL;
	dp->flows = 4096;
	if (lb_port_setup(0, 1, pool, RING_SIZE, RING_SIZE, &dp->port[0]) !=
	    0) {
		fprintf(stderr, "lb-switchbench: port setup failed\n");
		return -1;
	}
	dp->w[0] = lb_worker_create(dp, 0, rte_lcore_id());
	if (dp->w[0] == NULL) {
		fprintf(stderr, "lb-switchbench: no worker\n");
		return -1;
	}
	return 0;
}

/* Per case, the median and the worst of the rounds' longest polls. */
static void
print_medians(struct res res[][C_MAX], unsigned int rounds)
{
	for (int c = 0; c < C_MAX; c++) {
		double v[MAX_ROUNDS];

		for (unsigned int r = 0; r < rounds; r++)
			v[r] = res[r][c].max_us;
		qsort(v, rounds, sizeof(v[0]), cmp_dbl);
		printf("%-4s longest poll: median %.1f us, max %.1f us\n",
		       case_names[c], v[rounds / 2], v[rounds - 1]);
	}
}

int
main(int argc, char **argv)
{
	static struct lb_dp dp;
	static struct res res[MAX_ROUNDS][C_MAX];
	static const struct option opts[] = {
		{"rounds", required_argument, NULL, 'r'},
		{"window", required_argument, NULL, 'w'},
		{"pools", required_argument, NULL, 'p'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	char prefix[64], rundir[PATH_MAX] = "";
	char *eal[] = {argv[0],
		       (char *)"-l",
		       (char *)"0",
		       (char *)"--no-pci",
		       (char *)"--no-huge",
		       (char *)"-m",
		       (char *)"512",
		       (char *)"--no-shconf",
		       (char *)"--file-prefix",
		       prefix,
		       (char *)"--log-level=lib.eal:warning",
		       NULL};
	unsigned int rounds = 9, window_ms = 200;
	int o, rc, ret = EXIT_FAILURE;

	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (o == 'r')
			rounds = (unsigned int)strtoul(optarg, NULL, 10);
		else if (o == 'w')
			window_ms = (unsigned int)strtoul(optarg, NULL, 10);
		else if (o == 'p')
			nb_pools = (unsigned int)strtoul(optarg, NULL, 10);
		else {
			printf("usage: lb-switchbench [--rounds N (1..%u)] "
			       "[--window MS] [--pools N (0..%u)]\n",
			       MAX_ROUNDS, LB_CONF_MAX_POOLS);
			return o == 'h' ? EXIT_SUCCESS : EXIT_FAILURE;
		}
	}
	if (rounds == 0 || rounds > MAX_ROUNDS || window_ms == 0 ||
	    nb_pools > LB_CONF_MAX_POOLS) {
		fprintf(stderr,
			"lb-switchbench: bad --rounds, --window or --pools\n");
		return EXIT_FAILURE;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(prefix, sizeof(prefix), "lb-switchbench-%d", (int)getpid());
	if (rte_eal_init((int)(sizeof(eal) / sizeof(eal[0])) - 1, eal) < 0) {
		fprintf(stderr, "lb-switchbench: EAL: %s\n",
			rte_strerror(rte_errno));
		return EXIT_FAILURE;
	}
	snprintf(rundir, sizeof(rundir), "%s", rte_eal_get_runtime_dir());
	if (dp_setup(&dp) != 0)
		goto out;
	printf("%u Maglev services x %u backends, %u Maglev pools each, "
	       "window %u ms, %u rounds\n",
	       NB_SVCS, NB_BES, nb_pools, window_ms, rounds);
	printf("round  idle_max_us idle_slow  one_max_us one_slow  all_max_us "
	       "all_slow\n");
	for (unsigned int r = 0; r < rounds; r++) {
		for (int c = 0; c < C_MAX; c++) {
			rc = run_case(&dp, c, r, window_ms * 1000000ull,
				      &res[r][c]);
			if (rc != 0)
				goto out;
		}
		printf("%5u %12.1f %9u %11.1f %8u %11.1f %8u\n", r,
		       res[r][C_IDLE].max_us, res[r][C_IDLE].slow,
		       res[r][C_ONE].max_us, res[r][C_ONE].slow,
		       res[r][C_ALL].max_us, res[r][C_ALL].slow);
	}
	print_medians(res, rounds);
	ret = EXIT_SUCCESS;
out:
	lb_worker_free(dp.w[0]);
	rte_free(dp.conf);
	rte_eal_cleanup();
	if (rundir[0] != '\0')
		lb_dpb_rundir_remove(rundir);
	return ret;
}
