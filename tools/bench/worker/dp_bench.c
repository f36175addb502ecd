/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-dpbench: packets per second of the dataplane worker (lb_worker_poll())
 * next to a bare forwarder (rte_eth_rx_burst() then rte_eth_tx_burst() of
 * the same mbufs, nothing else), both measured in the same run.
 *
 * One port built with rte_eth_from_rings() stands for the NIC. The
 * generator runs on the main lcore and keeps IN_FLIGHT mbufs circulating:
 * it writes the next frame into every mbuf the port transmitted and puts
 * it back on the port's rx ring, so nobody allocates per packet and the
 * forwarder finds a full ring whenever it is the slower side. The
 * forwarder lcore runs either the bare forwarder or the worker. The two
 * alternate in short rounds, the order flipped every round, because this
 * host's vCPUs move between physical cores every 10-30 s and absolute
 * rates move about threefold: only the per-round pairs compare.
 *
 * Tests, each against the bare forwarder fed the same frames:
 *  - est: established TCP flows, client -> VIP, for each --flows size;
 *  - mix: the same flows, half of the packets backend -> SNAT replies;
 *  - new: every packet the SYN of a new client tuple (flows/s). A round
 *    stops after NEW_CAP SYNs and the worker is rebuilt before the next
 *    one, so the flow table and the SNAT ports never run out.
 * And, only when asked (--tests conn), whole connections: SYN, SYN-ACK,
 * ACK, a request, a response and a FIN each way per connection, through a
 * service whose closed connections time out after --conn-timeout,
 * at the generator's highest rate: connections per second per worker at
 * steady state, with expiry freeing flows as fast as they come, and the
 * table's occupancy over a round.
 * And, only when asked (--tests l7), what following HTTP costs: two
 * services identical but for `http`, --l7-flows established flows on
 * each, every flow carrying keep-alive exchanges of one request segment
 * and one response segment with X-SPL; rounds of the http service
 * alternate with rounds of the plain one, both on the worker, and the
 * generator drains the feedback ring as lb-control would.
 * And, only when asked (--tests rdr), the redirect ring between two
 * workers: replies of flows worker 1 owns, on its own queue or on worker
 * 0's, which hands them over (dp_bench_rdr.c); both workers on the
 * forwarder lcore, or with --rdr-split worker 0 on the generator's.
 * Flows of est and mix are opened through the worker itself (SYN,
 * SYN-ACK, ACK) before the rounds; neighbours are static, so every round
 * measures the steady state. Every round checks that each packet sent
 * came back and that the worker counted no drop; every 32nd output is
 * checked field by field (addresses, ports, MACs, both checksums).
 *
 * "Mpps" counts the packets the forwarder lcore transmitted. "ns/pkt" is
 * its time in polls that moved packets divided by those packets: its own
 * cost per packet, even when the generator is the slower side. "own" is
 * the worker's ns/pkt minus the bare forwarder's of the same round.
 * Other processes share these vCPUs and the host pauses them now and
 * then: a gap of more than STALL_US in the forwarder's loop is time it
 * did not run, left out of both figures and printed with the round.
 *
 * usage: lb-dpbench [EAL options --] [--seconds S] [--rounds N]
 *                   [--flows N[,N...]] [--l7-flows N[,N...]]
 *                   [--tests est,mix,new,l7,adm,src,conn,rdr]
 *                   [--l7-governor] [--rdr-split]
 *                   [--src-budget off|RATE[/BURST]] [--conn-timeout MS]
 * Without EAL options it runs on lcores 0-1 with hugepages when enough
 * are free (--in-memory), else with --no-huge -m 1024.
 */
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
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
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "dp_bench.h"
#include "lb/flow_table.h"
#include "rundir.h"

const char *const dpb_test_names[T_MAX] = {"est", "mix", "new", "l7",
					   "adm", "src", "synp",
					   "conn", "rdr", "bind", "est6",
					   "new6"};
const char *const dpb_test_what[T_MAX] = {
	"established flows, client -> backend",
	"established flows, half client -> backend, half replies",
	"new flows, every packet a SYN of a new client tuple",
	"HTTP exchanges on established flows, http service vs plain L4",
	"new flows, admission control on vs off",
	"new flows, budget of new flows per source on vs off",
	"new connections through the SYN proxy: a cookie per SYN, a flow "
	"per ACK proving one, vs the plain SYN path",
	"whole connections at steady state, a full table expiring",
	"replies through another worker's queue and the redirect ring, vs "
	"on the owner's own queue",
	"whole connections routed by their request's Host (delayed "
	"binding), vs the same on a plain SYN-proxy service and on a plain "
	"L4 service",
	"IPv6 established flows (fnat66), client -> backend",
	"IPv6 new flows (fnat66), every packet a SYN of a new client tuple",
};

/* ---- command line ------------------------------------------------------- */

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: lb-dpbench [EAL options --] [options]\n"
		"  --seconds S       measured time per round (default 0.5)\n"
		"  --rounds N        rounds of each side, 1..%u (default 7)\n"
		"  --flows N[,N...]  established flow counts, 1..%u each "
		"(default 1000,1000000)\n"
		"  --l7-flows N[,N...] flows on each l7 service, 1..%u each "
		"(default 1000,10000)\n"
		"  --tests LIST      est, mix, new, l7, adm, src, synp, conn, "
		"rdr, bind, est6, new6\n"
		"                    (default est,mix,new)\n"
		"  --l7-governor     the l7 service admits each request "
		"(governor on)\n"
		"  --rdr-split       rdr: the receiving worker runs on the "
		"generator's lcore, the owner alone on the forwarder's\n"
		"  --src-budget off|RATE[/BURST]  the workers' budget of new "
		"flows per source (default lb-dataplane's)\n"
		"  --conn-timeout MS conn: timeout of a closed connection "
		"(closing, time-wait, closed), 1..10000 (default %u)\n"
		"Without EAL options: -l 0-1 --no-pci, hugepages when %u MB "
		"are free, else --no-huge -m 1024.\n",
		MAX_ROUNDS, MAX_FLOWS, L7_MAX_FLOWS, CONN_TIMEOUT_MS,
		HUGE_MB_NEEDED);
}

static int
parse_flows(const char *opt, const char *arg, uint32_t max, uint32_t *sizes,
	    unsigned int *nb_sizes)
{
	char buf[128], *save = NULL, *tok;

	snprintf(buf, sizeof(buf), "%s", arg);
	*nb_sizes = 0;
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(tok, &end, 10);
		if (errno != 0 || *end != '\0' || v == 0 || v > max ||
		    *nb_sizes == MAX_SIZES) {
			fprintf(stderr,
				"lb-dpbench: %s: '%s': up to %u "
				"counts of 1..%u\n",
				opt, arg, MAX_SIZES, max);
			return -EINVAL;
		}
		sizes[(*nb_sizes)++] = (uint32_t)v;
	}
	return *nb_sizes > 0 ? 0 : -EINVAL;
}

static int
parse_tests(struct bench *b, const char *arg)
{
	char buf[64], *save = NULL, *tok;

	snprintf(buf, sizeof(buf), "%s", arg);
	b->tests = 0;
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		unsigned int t;

		for (t = 0; t < T_MAX; t++)
			if (strcmp(tok, dpb_test_names[t]) == 0)
				break;
		if (t == T_MAX) {
			fprintf(stderr,
				"lb-dpbench: --tests: unknown '%s' "
				"(est, mix, new, l7, adm, src, synp, conn, "
				"rdr, bind, est6, new6)\n",
				tok);
			return -EINVAL;
		}
		b->tests |= 1u << t;
	}
	return b->tests != 0 ? 0 : -EINVAL;
}

static int
parse_args(struct bench *b, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"seconds", required_argument, NULL, 's'},
		{"rounds", required_argument, NULL, 'r'},
		{"flows", required_argument, NULL, 'f'},
		{"l7-flows", required_argument, NULL, 'l'},
		{"tests", required_argument, NULL, 't'},
		{"l7-governor", no_argument, NULL, 'g'},
		{"rdr-split", no_argument, NULL, 'R'},
		{"src-budget", required_argument, NULL, 'b'},
		{"conn-timeout", required_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int opt;

	b->seconds = 0.5;
	b->rounds = 7;
	b->sizes[0] = 1000;
	b->sizes[1] = 1000000;
	b->nb_sizes = 2;
	b->l7_sizes[0] = 1000;
	b->l7_sizes[1] = 10000;
	b->nb_l7_sizes = 2;
	b->conn_timeout_ms = CONN_TIMEOUT_MS;
	/* l7 only when asked: the forwarding run stays as documented. */
	b->tests = (1u << T_L7) - 1;
	/* As lb-dataplane runs: the budget of new flows per source on at
	 * its default (new's 65,536 sources stay far below it). */
	lb_src_budget_conf_default(&b->dp.src_budget);
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		char *end;

		switch (opt) {
		case 's':
			b->seconds = strtod(optarg, &end);
			if (*end != '\0' || !(b->seconds >= 0.01) ||
			    b->seconds > 60) {
				fprintf(stderr, "lb-dpbench: --seconds takes "
						"0.01..60\n");
				return -EINVAL;
			}
			break;
		case 'r':
			b->rounds = (unsigned int)strtoul(optarg, &end, 10);
			if (*end != '\0' || b->rounds < 1 ||
			    b->rounds > MAX_ROUNDS) {
				fprintf(stderr,
					"lb-dpbench: --rounds takes "
					"1..%u\n",
					MAX_ROUNDS);
				return -EINVAL;
			}
			break;
		case 'f':
			if (parse_flows("--flows", optarg, MAX_FLOWS, b->sizes,
					&b->nb_sizes) != 0)
				return -EINVAL;
			break;
		case 'l':
			if (parse_flows("--l7-flows", optarg, L7_MAX_FLOWS,
					b->l7_sizes, &b->nb_l7_sizes) != 0)
				return -EINVAL;
			break;
		case 't':
			if (parse_tests(b, optarg) != 0)
				return -EINVAL;
			break;
		case 'g':
			b->l7_gov = 1;
			break;
		case 'R':
			b->rdr_split = 1;
			break;
		case 'b':
			if (lb_src_budget_parse(optarg, &b->dp.src_budget) !=
			    0) {
				fprintf(stderr, "lb-dpbench: --src-budget takes "
						"off or RATE[/BURST]\n");
				return -EINVAL;
			}
			break;
		case 'c': {
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end != '\0' || v < 1 || v > 10000) {
				fprintf(stderr, "lb-dpbench: --conn-timeout "
						"takes 1..10000 (ms)\n");
				return -EINVAL;
			}
			b->conn_timeout_ms = (uint32_t)v;
			break;
		}
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return -EINVAL;
	}
	return 0;
}

/* Free hugepage memory in MB, from /proc/meminfo. */
static unsigned long
huge_free_mb(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	unsigned long nfree = 0, kb = 0, v;
	char line[128];

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "HugePages_Free: %lu", &v) == 1)
			nfree = v;
		else if (sscanf(line, "Hugepagesize: %lu kB", &v) == 1)
			kb = v;
	}
	fclose(f);
	return nfree * kb / 1024;
}

/* The 1-minute load average: how many others want these vCPUs. */
static double
load_avg(void)
{
	FILE *f = fopen("/proc/loadavg", "r");
	double v = -1;

	if (f != NULL) {
		if (fscanf(f, "%lf", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static void
print_args(const char *what, int argc, char **argv)
{
	printf("%s", what);
	for (int i = 0; i < argc; i++)
		printf(" %s", argv[i]);
	printf("\n");
}

/*
 * rdr: what a reply handed from the worker whose queue it reached to the
 * worker that owns its flow costs, both workers' work together.
 */
static void
rdr_print(const struct bench *b)
{
	if (b->nb_rdr_rows == 0)
		return;
	printf("\nrdr: replies of flows that worker 1 owns, arriving at its "
	       "own queue or at worker 0's (handed over through the "
	       "redirect ring); %s (+ns/redirected and redirected/own Mpps: "
	       "medians of the per-round pairs)\n\n",
	       b->rdr_split ? "worker 0 on the generator's lcore, worker 1 "
			      "alone on the forwarder's (+ns: worker 1's "
			      "part; receiver: worker 0's)"
			    : "both workers on the forwarder lcore");
	printf("| flows | own queue Mpps | redirected Mpps | redirected/own "
	       "| own queue ns/pkt | redirected ns/pkt | +ns/redirected | "
	       "receiver ns/pkt | checks |\n");
	printf("|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
	for (unsigned int i = 0; i < b->nb_rdr_rows; i++) {
		const struct rdr_row *r = &b->rdr_rows[i];
		char rx[16] = "-";

		if (b->rdr_split)
			snprintf(rx, sizeof(rx), "%.1f", r->rx_ns);
		printf("| %u | %.2f | %.2f | %.2f | %.1f | %.1f | %.1f | %s | "
		       "%s |\n",
		       r->flows, r->direct_mpps, r->rdr_mpps, r->ratio,
		       r->direct_ns, r->rdr_ns, r->extra_ns, rx,
		       r->problems == 0 ? "ok" : "FAILED");
	}
}

/*
 * What a throttle key costs: its slot in the shared table (one per key
 * for every worker) and its bucket in a worker's local table, measured
 * as the heap a local table of the default size takes.
 */
static void
adm_mem_print(const struct bench *b)
{
	static struct lb_admit_stats st;
	struct mallinfo2 m0, m1;
	struct lb_admit_lc *lc;
	size_t local;

	m0 = mallinfo2();
	lc = lb_admit_lc_create(b->admit_sh, LB_ADMIT_LOCAL_DEFAULT, &st, NULL,
				0);
	m1 = mallinfo2();
	if (lc == NULL)
		return;
	local = (m1.uordblks + m1.hblkhd) - (m0.uordblks + m0.hblkhd);
	lb_admit_lc_free(lc);
	printf("admission key: %.1f bytes per key in the shared table (%u "
	       "slots), %.1f bytes per key in a worker's local table (%u "
	       "keys, heap measured)\n",
	       (double)lb_admit_shm_size(LB_ADMIT_SHM_SLOTS_DEFAULT) /
		       LB_ADMIT_SHM_SLOTS_DEFAULT,
	       LB_ADMIT_SHM_SLOTS_DEFAULT, (double)local / LB_ADMIT_LOCAL_DEFAULT,
	       LB_ADMIT_LOCAL_DEFAULT);
}
static void
print_summary(const struct bench *b)
{
	time_t now = time(NULL);
	char day[32];

	strftime(day, sizeof(day), "%Y-%m-%d", localtime(&now));
	/* The table is allocated whole for its capacity: this is what a
	 * flow costs, whether 1k or 1M of them are in it. */
	printf("\nflow table: %zu bytes for %u flows, %.1f bytes per flow\n",
	       lb_flow_table_mem_size(TABLE_FLOWS), TABLE_FLOWS,
	       (double)lb_flow_table_mem_size(TABLE_FLOWS) / TABLE_FLOWS);
	adm_mem_print(b);
	printf("\nSummary (%s; medians over %u rounds of %.2f s; lb/bare and "
	       "own ns/pkt are medians of the per-round pairs; lb busy: "
	       "share of the worker's time in polls that moved packets)\n\n",
	       day, b->rounds, b->seconds);
	if (b->nb_rows == 0)
		goto l7;
	printf("| test | flows | bare Mpps | lb Mpps | lb/bare | bare "
	       "ns/pkt | lb ns/pkt | own ns/pkt | lb busy | new flows/s | "
	       "checks |\n");
	printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
	for (unsigned int i = 0; i < b->nb_rows; i++) {
		const struct row *r = &b->rows[i];
		char flows[16] = "-", fps[16] = "-";

		if (!is_new_test(r->test))
			snprintf(flows, sizeof(flows), "%u", r->flows);
		else
			snprintf(fps, sizeof(fps), "%.2fM", r->fps / 1e6);
		printf("| %s | %s | %.2f | %.2f | %.2f | %.1f | %.1f | %.1f | "
		       "%.0f%% | %s | %s |\n",
		       dpb_test_names[r->test], flows, r->bare_mpps, r->lb_mpps,
		       r->ratio, r->bare_ns, r->lb_ns, r->own_ns, r->lb_busy,
		       fps, r->problems == 0 ? "ok" : "FAILED");
	}
l7:
	if (b->has_conn_row) {
		const struct conn_row *r = &b->conn_row;

		printf("\nconn: whole connections (7 segments each) at steady "
		       "state, closed connections timing out after %u ms, a table of %u "
		       "flows (lb/bare: median of the per-round pairs)\n\n",
		       b->conn_timeout_ms, b->dp.flows);
		printf("| bare conn/s | lb conn/s per worker | lb/bare | bare "
		       "ns/pkt | lb ns/pkt | lb busy | table at the end | "
		       "table at most | most expired in a poll | checks |\n");
		printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
		printf("| %.2fM | %.2fM | %.2f | %.1f | %.1f | %.0f%% | %u | %u "
		       "| %" PRIu64 " | %s |\n",
		       r->bare_cps / 1e6, r->lb_cps / 1e6, r->ratio,
		       r->bare_ns, r->lb_ns, r->lb_busy, r->occ_end,
		       r->occ_max, r->expire_max,
		       r->problems == 0 ? "ok" : "FAILED");
	}
	if (b->nb_adm_rows > 0) {
		printf("\nadm: new flows with admission control off and on, "
		       "all admitted (on/off and +ns/flow: medians of the "
		       "per-round pairs)\n\n");
		printf("| admit-key | off flows/s | on flows/s | on/off | off "
		       "ns/pkt | on ns/pkt | +ns/new flow | shm atomics per "
		       "admission | checks |\n");
		printf("|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
	}
	for (unsigned int i = 0; i < b->nb_adm_rows; i++) {
		const struct adm_row *r = &b->adm_rows[i];

		printf("| %s | %.2fM | %.2fM | %.2f | %.1f | %.1f | %.1f | "
		       "%.4f | %s |\n",
		       r->key, r->off_fps / 1e6, r->on_fps / 1e6, r->ratio,
		       r->off_ns, r->on_ns, r->extra_ns, r->atomics,
		       r->problems == 0 ? "ok" : "FAILED");
	}
	rdr_print(b);
	if (b->nb_l7_rows == 0)
		return;
	printf("\nl7: the same worker and exchanges, service `http` vs plain "
	       "L4 (L7/L4 and +ns/exchange: medians of the per-round pairs; "
	       "requests/s per worker = Mpps / 2)\n\n");
	printf("| flows per service | L4 Mpps | L4 Mreq/s | L7 Mpps | L7 "
	       "Mreq/s | L7/L4 | L4 ns/pkt | L7 ns/pkt | +ns/exchange | L4 "
	       "busy | L7 busy | checks |\n");
	printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
	       "\n");
	for (unsigned int i = 0; i < b->nb_l7_rows; i++) {
		const struct l7_row *r = &b->l7_rows[i];

		printf("| %u | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f | "
		       "%.1f | %.0f | %.0f%% | %.0f%% | %s |\n",
		       r->flows, r->l4_mpps, r->l4_mpps / 2, r->l7_mpps,
		       r->l7_mpps / 2, r->ratio, r->l4_ns, r->l7_ns,
		       r->extra_ns, r->l4_busy, r->l7_busy,
		       r->problems == 0 ? "ok" : "FAILED");
	}
	/* Allocated whole for the pool's capacity, as the flow table is. */
	printf("\n");
	for (unsigned int i = 0; i < b->nb_l7_rows; i++) {
		const struct l7_row *r = &b->l7_rows[i];

		printf("followed flow: %.1f bytes per flow for %u (L7 pool "
		       "%.1f: entries and %u shared header streams; admission "
		       "state %.0f)\n",
		       r->pool_bytes + r->rej_bytes, r->flows, r->pool_bytes,
		       r->streams, r->rej_bytes);
	}
}

/*
 * Starts the EAL: with the options before "--" when there are, else on
 * lcores 0-1 with a prefix of our own (its runtime directory is then
 * written to @p rundir, for main() to remove). Sets @p app and @p napp to
 * the bench's own options.
 */
static int
eal_start(int argc, char **argv, char ***app, int *napp, char *rundir,
	  size_t rundir_len)
{
	static char prefix[64];
	static char *eal[16];
	int neal = 0, dd = -1, rc;

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			dd = i;
			break;
		}
	print_args("command:", argc, argv);
	if (dd > 0) {
		/* lb-dpbench EAL... -- options */
		rc = rte_eal_init(dd, argv);
		*app = argv + dd;
		*napp = argc - dd;
	} else {
		snprintf(prefix, sizeof(prefix), "lb-dpbench-%d",
			 (int)getpid());
		eal[neal++] = argv[0];
		eal[neal++] = (char *)"-l";
		eal[neal++] = (char *)"0-1";
		eal[neal++] = (char *)"--no-pci";
		eal[neal++] = (char *)"--file-prefix";
		eal[neal++] = prefix;
		eal[neal++] = (char *)"--log-level=lib.eal:warning";
		if (huge_free_mb() >= HUGE_MB_NEEDED) {
			eal[neal++] = (char *)"--in-memory";
		} else {
			eal[neal++] = (char *)"--no-huge";
			eal[neal++] = (char *)"-m";
			eal[neal++] = (char *)"1024";
			eal[neal++] = (char *)"--no-shconf";
		}
		print_args("EAL:", neal - 1, eal + 1);
		rc = rte_eal_init(neal, eal);
		*app = argv;
		*napp = argc;
	}
	if (rc < 0) {
		fprintf(stderr, "lb-dpbench: EAL initialisation failed: %s\n",
			rte_strerror(rte_errno));
		return -1;
	}
	/* Ours only when we chose the prefix. */
	if (dd <= 0)
		snprintf(rundir, rundir_len, "%s", rte_eal_get_runtime_dir());
	return 0;
}

/* est6 and new6 on the IPv6 table, beside IPv4's est and new; the IPv4
 * table is back for the tests after them. */
static int
run_tests6(struct bench *b)
{
	struct lb_dpconf *c4 = b->dp.conf;
	int rc = dpb6_setup(b);

	for (unsigned int i = 0;
	     i < b->nb_sizes && rc == 0 && (b->tests & (1u << T_EST6)); i++) {
		rc = dpb6_flows_open(b, b->sizes[i]);
		if (rc == 0)
			rc = dpb_run_test(b, T_EST6, b->sizes[i]);
	}
	b->dp.conf = b->conf6;
	if (rc == 0 && (b->tests & (1u << T_NEW6)))
		rc = dpb_run_test(b, T_NEW6, 0);
	b->dp.conf = c4;
	if (rc == 0)
		rc = dpb_worker_new(b);
	return rc;
}

/* Runs the tests asked for, in the order of the summary. */
static int
run_tests(struct bench *b)
{
	if (b->tests & ((1u << T_EST) | (1u << T_MIX) | (1u << T_RDR))) {
		uint32_t most = 0;

		for (unsigned int i = 0; i < b->nb_sizes; i++)
			most = RTE_MAX(most, b->sizes[i]);
		b->rec = calloc(most, sizeof(*b->rec));
		if (b->rec == NULL)
			return -ENOMEM;
	}
	if (b->tests & ((1u << T_EST) | (1u << T_MIX))) {
		for (unsigned int i = 0; i < b->nb_sizes; i++) {
			if (dpb_flows_open(b, b->sizes[i]) != 0)
				return -1;
			for (unsigned int t = T_EST; t <= T_MIX; t++)
				if ((b->tests & (1u << t)) &&
				    dpb_run_test(b, (enum test)t,
						 b->sizes[i]) != 0)
					return -1;
		}
	}
	if ((b->tests & (1u << T_NEW)) && dpb_run_test(b, T_NEW, 0) != 0)
		return -1;
	if ((b->tests & ((1u << T_EST6) | (1u << T_NEW6))) &&
	    run_tests6(b) != 0)
		return -1;
	if (b->tests & (1u << T_L7)) {
		if (dpb_l7_setup(b) != 0)
			return -1;
		for (unsigned int i = 0; i < b->nb_l7_sizes; i++)
			if (dpb_l7_open(b, b->l7_sizes[i]) != 0 ||
			    dpb_run_l7(b, b->l7_sizes[i]) != 0)
				return -1;
	}
	if ((b->tests & (1u << T_ADM)) &&
	    (dpb_run_adm(b, LB_ADMIT_KEY_SVC) != 0 ||
	     dpb_run_adm(b, LB_ADMIT_KEY_CLIENT) != 0))
		return -1;
	if ((b->tests & (1u << T_SRC)) && dpb_run_src(b) != 0)
		return -1;
	if ((b->tests & (1u << T_SYNP)) && dpb_run_synp(b) != 0)
		return -1;
	if ((b->tests & (1u << T_CONN)) && dpb_run_conn(b) != 0)
		return -1;
	if ((b->tests & (1u << T_BIND)) && dpb_run_bind(b) != 0)
		return -1;
	/* Last: it leaves no worker behind. */
	for (unsigned int i = 0; i < b->nb_sizes; i++)
		if ((b->tests & (1u << T_RDR)) &&
		    dpb_run_rdr(b, b->sizes[i]) != 0)
			return -1;
	return 0;
}

int
main(int argc, char **argv)
{
	static struct bench b;
	char rundir[PATH_MAX] = "";
	int napp, rc, ret = EXIT_FAILURE;
	char **app;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (eal_start(argc, argv, &app, &napp, rundir, sizeof(rundir)) != 0)
		return EXIT_FAILURE;
	rc = parse_args(&b, napp, app);
	if (rc != 0) {
		ret = rc > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
		goto out;
	}
	if (dpb_bench_setup(&b) != 0)
		goto out;
	printf("memory: %s; TSC %.3f GHz; generator lcore %u, forwarder "
	       "lcore %u; %u-byte frames, %u mbufs in flight; load average "
	       "%.2f\n",
	       rte_eal_has_hugepages() ? "hugepages" : "no hugepages",
	       (double)b.hz / 1e9, rte_get_main_lcore(), b.fwd_lcore,
	       FRAME_LEN + 4, IN_FLIGHT, load_avg());
	if (run_tests(&b) != 0)
		goto out;
	print_summary(&b);
	printf("\nload average at the end: %.2f\n", load_avg());
	ret = EXIT_SUCCESS;
	for (unsigned int i = 0; i < b.nb_rows; i++)
		if (b.rows[i].problems != 0)
			ret = EXIT_FAILURE;
	for (unsigned int i = 0; i < b.nb_l7_rows; i++)
		if (b.l7_rows[i].problems != 0)
			ret = EXIT_FAILURE;
	for (unsigned int i = 0; i < b.nb_adm_rows; i++)
		if (b.adm_rows[i].problems != 0)
			ret = EXIT_FAILURE;
	if (b.has_conn_row && b.conn_row.problems != 0)
		ret = EXIT_FAILURE;
	for (unsigned int i = 0; i < b.nb_rdr_rows; i++)
		if (b.rdr_rows[i].problems != 0)
			ret = EXIT_FAILURE;
out:
	dpb_bench_teardown(&b);
	rte_eal_cleanup();
	/* The EAL leaves its runtime directory behind even with
	 * --in-memory; the one of our own prefix goes with us. */
	if (rundir[0] != '\0')
		if (lb_dpb_rundir_remove(rundir) != 0)
			fprintf(stderr, "lb-dpbench: cannot remove %s: %s\n",
				rundir, strerror(errno));
	return ret;
}

