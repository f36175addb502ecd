/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-dataplane: the DPDK primary process. Reads its initial configuration
 * (lbctl command syntax), sets up every DPDK port with one queue pair per
 * worker, and runs one worker per worker lcore until SIGINT or SIGTERM.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_memzone.h>
#include <rte_rcu_qsbr.h>

#include "dp.h"
#include "exc.h"
#include "lb/cmd.h"
#include "lb/conf.h"
#include "lb/hdr_conf.h"
#include "seed.h"
#include "lb/rtlock.h"
#include "xdp_port.h"

#define NB_RXD 1024
#define NB_TXD 1024
#define DEFAULT_FLOWS (1u << 18)
#define DEFAULT_IDLE_US 100u
#define DEFAULT_L7_FLOWS 4096u
#define MBUF_CACHE 256
/* How long a starting dataplane lets an attaching lb-control finish. */
#define RT_LOCK_WAIT_MS 10000u

static struct lb_dp dp;

static void
on_signal(int sig)
{
	(void)sig;
	dp.quit = 1;
}

static void
usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [EAL options] -- --config FILE [options]\n"
		"  -c, --config FILE  initial configuration (lbctl syntax)\n"
		"  --flows N          flow table size per worker (default %u)\n"
		"  --idle-us N        longest sleep of an idle worker in us, 0 "
		"to busy-poll (default %u)\n"
		"  --l7-flows N       HTTP flows followed at once per worker, 0 "
		"to follow none (default %u)\n"
		"  --hash-seed N      seed of the flow hash maglev picks with: "
		"the same secret on every host of an ECMP group (default "
		"random)\n"
		"  --hash-seed-file FILE  the same, read from FILE (kept off "
		"the command line)\n"
		"  --seed N           seed of the per-process secrets and "
		"random streams, to repeat a test or benchmark (default "
		"random)\n"
		"  --src-budget RATE[/BURST]|off  new flows per second (and "
		"at once, default twice RATE) per client source and worker "
		"(default %u/%u)\n"
		"  --src-budget-prefix LEN  client addresses sharing a "
		"budget: one /LEN, 8..32 (default %u)\n"
		"  --src-budget-sources N  sources each worker keeps a "
		"budget for (default %u)\n"
		"  --snat-ports MIN-MAX  ports of each SNAT address the "
		"workers share (default %u-%u)\n"
		"  --exception-ifname PREFIX  names of the kernel interfaces "
		"of the exception path: PREFIX + port (default %s)\n"
		"  --no-exception     no exception path: the kernel does not "
		"see the data ports\n"
		"  --xdp-pin DIR      bpffs directory of the XDP steering maps "
		"(default " "/sys/fs/bpf/sluice/FILE-PREFIX)\n"
		"  " LB_XDP_OPT_OFF "     net_af_xdp ports run the PMD's own "
		"XDP program\n"
		"  -h, --help         this text\n",
		prog, DEFAULT_FLOWS, DEFAULT_IDLE_US, DEFAULT_L7_FLOWS,
		LB_SRC_BUDGET_RATE_DEFAULT, LB_SRC_BUDGET_BURST_DEFAULT,
		LB_SRC_BUDGET_PREFIX_DEFAULT, LB_SRC_BUDGET_SOURCES_DEFAULT,
		LB_SNAT_PORT_MIN_DEFAULT, LB_SNAT_PORT_MAX_DEFAULT,
		LB_EXC_IFPREFIX_DEFAULT);
}

static int
parse_uint(const char *s, const char *what, unsigned long max,
	   uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || *s == '\0' || *end != '\0' || v > max) {
		fprintf(stderr, "lb-dataplane: %s: '%s' is not a number in "
				"0..%lu\n",
			what, s, max);
		return -EINVAL;
	}
	*out = (uint32_t)v;
	return 0;
}

/* --snat-ports MIN-MAX into @p dp; the workers' slices are checked when
 * they are made (each needs a port). */
static int
parse_snat_ports(const char *s, struct lb_dp *d)
{
	unsigned long lo, hi;
	char *end;

	errno = 0;
	lo = strtoul(s, &end, 10);
	if (errno == 0 && *end == '-')
		hi = strtoul(end + 1, &end, 10);
	else
		hi = 0;
	if (errno != 0 || *end != '\0' || lo == 0 || hi < lo || hi > 65535) {
		fprintf(stderr, "lb-dataplane: --snat-ports: '%s' is not "
				"MIN-MAX with 1 <= MIN <= MAX <= 65535\n",
			s);
		return -EINVAL;
	}
	d->snat_port_min = (uint16_t)lo;
	d->snat_port_max = (uint16_t)hi;
	return 0;
}

/* Takes the seed of option @p what from @p arg: the number itself, or
 * (@p file) the file holding it. */
static int
seed_opt(const char *what, const char *arg, bool file, uint64_t *out,
	 bool *set)
{
	int rc = file ? lb_seed_read_file(arg, out) : lb_seed_parse(arg, out);

	if (rc == -EINVAL)
		fprintf(stderr, "lb-dataplane: %s: '%s' %s a 64-bit number\n",
			what, arg, file ? "does not hold" : "is not");
	else if (rc != 0)
		fprintf(stderr, "lb-dataplane: %s: '%s': %s\n", what, arg,
			strerror(-rc));
	*set = rc == 0;
	return rc;
}

static int
sched_known(const char *name)
{
	return lb_sched_find(name) != NULL;
}

/* Loads the configuration file into dp.conf. */
static struct lb_hdr_cfg boot_hdr;

static int
load_config(const char *path)
{
	struct lb_cmd_reg *reg = lb_cmd_reg_create();
	struct lb_conf *conf = lb_conf_create(sched_known);
	struct lb_cmd_out out;
	char err[256];
	int rc = -ENOMEM;

	lb_cmd_out_init(&out);
	if (reg == NULL || conf == NULL || lb_conf_register(conf, reg) != 0)
		goto out;
	lb_conf_set_sched_names(conf, lb_sched_names);
	rc = lb_cmd_apply_file(reg, path, &out);
	if (rc != 0) {
		fprintf(stderr, "lb-dataplane: %s\n", lb_cmd_out_errmsg(&out));
		goto out;
	}
	dp.conf = rte_zmalloc("lb_dpconf", LB_DPCONF_SLOT_SIZE, 0);
	if (dp.conf == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	rc = lb_dpconf_build(dp.conf, conf, err, sizeof(err));
	/* The boot table's header database is compiled here, from the same
	 * names; lb-control's tables bring their own. */
	if (rc == 0)
		rc = lb_hdr_conf_build(conf, &boot_hdr, err, sizeof(err));
	if (rc != 0)
		fprintf(stderr, "lb-dataplane: %s: %s\n", path, err);
out:
	lb_cmd_out_free(&out);
	lb_conf_free(conf);
	lb_cmd_reg_free(reg);
	return rc;
}

/* Keeps the configuration text for a lb-control without a state file. */
static void
keep_boot_config(struct lb_shm *shm, const char *path)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (f == NULL)
		return;
	n = fread(shm->boot_conf, 1, sizeof(shm->boot_conf) - 1, f);
	if (!feof(f)) {
		fprintf(stderr, "lb-dataplane: warning: %s is larger than %u "
				"bytes; lb-control will not adopt it\n",
			path, LB_SHM_BOOT_CONF_MAX - 1);
		n = 0;
	}
	shm->boot_conf[n] = '\0';
	shm->boot_conf_len = (uint32_t)n;
	fclose(f);
}

/*
 * The memory lb-control attaches to: identity, RCU state, the published
 * table and each worker's counters and feedback ring.
 */
static int
shm_create(const char *config)
{
	const struct rte_memzone *mz;
	struct lb_shm *shm;
	size_t qsz;

	mz = rte_memzone_reserve(LB_SHM_NAME, sizeof(*shm), rte_socket_id(),
				 RTE_MEMZONE_SIZE_HINT_ONLY);
	if (mz == NULL) {
		fprintf(stderr, "lb-dataplane: cannot reserve memzone %s: %s\n",
			LB_SHM_NAME, rte_strerror(rte_errno));
		return -ENOMEM;
	}
	shm = mz->addr;
	memset(shm, 0, sizeof(*shm));
	shm->layout_version = LB_SHM_LAYOUT_VERSION;
	shm->dataplane_pid = getpid();
	shm->nb_workers = dp.nb_workers;
	shm->nb_ports = dp.nb_ports;
	shm->tsc_hz = rte_get_tsc_hz();
	shm->src_budget = dp.src_budget;
	/* One reader id per worker, one for telemetry, one for the
	 * exception path. */
	qsz = rte_rcu_qsbr_get_memsize(dp.nb_workers + 2);
	shm->qsbr = rte_zmalloc("lb_qsbr", qsz, RTE_CACHE_LINE_SIZE);
	if (shm->qsbr == NULL ||
	    rte_rcu_qsbr_init(shm->qsbr, dp.nb_workers + 2) != 0) {
		fprintf(stderr, "lb-dataplane: cannot set up RCU\n");
		return -ENOMEM;
	}
	/* The global token buckets, shared by the workers and lb-control. */
	mz = rte_memzone_reserve_aligned(
		LB_ADMIT_SHM_NAME, lb_admit_shm_size(LB_ADMIT_SHM_SLOTS_DEFAULT),
		rte_socket_id(), RTE_MEMZONE_SIZE_HINT_ONLY,
		RTE_CACHE_LINE_SIZE);
	if (mz == NULL) {
		fprintf(stderr, "lb-dataplane: cannot reserve memzone %s: %s\n",
			LB_ADMIT_SHM_NAME, rte_strerror(rte_errno));
		return -ENOMEM;
	}
	shm->admit = lb_admit_shm_init(mz->addr, LB_ADMIT_SHM_SLOTS_DEFAULT);
	if (shm->admit == NULL) {
		fprintf(stderr, "lb-dataplane: cannot set up %s: %s\n",
			LB_ADMIT_SHM_NAME, strerror(errno));
		return -EIO;
	}
	dp.admit = shm->admit;
	keep_boot_config(shm, config);
	shm->table[0] = dp.conf;
	for (unsigned int i = 1; i < LB_SHM_TABLES; i++) {
		shm->table[i] = rte_zmalloc("lb_dpconf", LB_DPCONF_SLOT_SIZE, 0);
		if (shm->table[i] == NULL) {
			fprintf(stderr, "lb-dataplane: no memory for %u "
					"tables\n",
				LB_SHM_TABLES);
			return -ENOMEM;
		}
	}
	atomic_store_explicit(&shm->conf, dp.conf, memory_order_release);
	dp.shm = shm;
	dp.gov_m = shm->gov_m;
	return 0;
}

/* Makes the workers visible to lb-control; the magic comes last. */
static void
shm_publish(void)
{
	struct lb_shm *shm = dp.shm;

	for (uint16_t p = 0; p < dp.nb_ports; p++) {
		shm->port[p].port_id = p;
		shm->port[p].nb_queues = dp.port[p].nb_queues;
		memcpy(shm->port[p].mac, dp.port[p].mac.addr_bytes, 6);
		shm->port[p].rss = (uint8_t)dp.port[p].rss;
		snprintf(shm->port[p].driver, sizeof(shm->port[p].driver),
			 "%s", dp.port[p].driver);
	}
	for (uint16_t i = 0; i < dp.nb_workers; i++)
		shm->w[i] = &dp.w[i]->sh;
	atomic_thread_fence(memory_order_release);
	shm->magic = LB_SHM_MAGIC;
}

/* Every port named in the configuration must exist. */
static int
check_ports(void)
{
	const struct lb_dpconf *c = dp.conf;
	uint16_t worst = 0;

	for (uint32_t i = 0; i < c->nb_addr; i++)
		worst = RTE_MAX(worst, c->addr[i].port);
	for (uint32_t i = 0; i < c->nb_snat; i++)
		worst = RTE_MAX(worst, c->snat[i].port);
	for (uint32_t i = 0; i < c->nb_route; i++)
		worst = RTE_MAX(worst, c->route[i].port);
	if (worst >= dp.nb_ports) {
		fprintf(stderr,
			"lb-dataplane: the configuration uses port %u but "
			"only %u DPDK port(s) exist (ports 0..%u)\n",
			worst, dp.nb_ports, dp.nb_ports - 1);
		return -EINVAL;
	}
	if (c->nb_addr == 0)
		fprintf(stderr, "lb-dataplane: warning: no 'addr' configured: "
				"no next hop can be resolved\n");
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "flows", required_argument, NULL, 'f' },
		{ "idle-us", required_argument, NULL, 'i' },
		{ "l7-flows", required_argument, NULL, 'l' },
		{ "hash-seed", required_argument, NULL, 's' },
		{ "hash-seed-file", required_argument, NULL, 'F' },
		{ "seed", required_argument, NULL, 'S' },
		{ "src-budget", required_argument, NULL, 'b' },
		{ "src-budget-prefix", required_argument, NULL, 'B' },
		{ "src-budget-sources", required_argument, NULL, 'N' },
		{ "snat-ports", required_argument, NULL, 'p' },
		{ "exception-ifname", required_argument, NULL, 'x' },
		{ "no-exception", no_argument, NULL, 'X' },
		{ "xdp-pin", required_argument, NULL, 'P' },
		{ LB_XDP_OPT_OFF + 2, no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config = NULL, *xdp_pin = NULL;
	char rtdir[PATH_MAX];
	int rt_lock = -1;
	char **eargv;
	const char *exc_prefix = LB_EXC_IFPREFIX_DEFAULT;
	unsigned int lcores[LB_MAX_WORKERS], lcore;
	uint16_t nw = 0;
	uint32_t nb_mbufs;
	struct lb_seeds seeds = { 0 };
	int rc, opt, ret = EXIT_FAILURE;

	/* Before the EAL probes the ports: net_af_xdp ports load the XDP
	 * steering program (docs/xdp.md). */
	eargv = lb_xdp_eal_args(argc, argv);
	if (eargv == NULL)
		return EXIT_FAILURE;
	argv = eargv;
	/* Whatever a lb-control does with the previous runtime, this one
	 * starts: no secondary attaches while its EAL comes up, and the
	 * files of a dead runtime that one may still hold go. */
	if (lb_rt_dir(argc, argv, rtdir, sizeof(rtdir)) == 0) {
		rt_lock = lb_rt_start_lock(rtdir, RT_LOCK_WAIT_MS);
		if (rt_lock < 0)
			fprintf(stderr, "lb-dataplane: warning: %s/%s: %s; "
					"starting anyway\n",
				rtdir, LB_RT_LOCK_FILE, strerror(-rt_lock));
		lb_rt_clear_stale(rtdir);
	} else {
		rtdir[0] = '\0';
	}
	rc = rte_eal_init(argc, argv);
	if (rc < 0) {
		fprintf(stderr, "lb-dataplane: EAL initialisation failed: %s\n",
			rte_strerror(rte_errno));
		return EXIT_FAILURE;
	}
	argc -= rc;
	argv += rc;
	dp.flows = DEFAULT_FLOWS;
	dp.idle_us = DEFAULT_IDLE_US;
	dp.l7_flows = DEFAULT_L7_FLOWS;
	lb_src_budget_conf_default(&dp.src_budget);
	optind = 1;
	while ((opt = getopt_long(argc, argv, "c:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			config = optarg;
			break;
		case 'f':
			if (parse_uint(optarg, "--flows", LB_FLOW_MAX_CAPACITY,
				       &dp.flows) != 0 ||
			    dp.flows == 0)
				goto out;
			break;
		case 'i':
			if (parse_uint(optarg, "--idle-us", 1000000,
				       &dp.idle_us) != 0)
				goto out;
			break;
		case 'l':
			if (parse_uint(optarg, "--l7-flows", 1u << 22,
				       &dp.l7_flows) != 0)
				goto out;
			break;
		case 's':
		case 'F':
			if (seed_opt(opt == 's' ? "--hash-seed" :
						  "--hash-seed-file",
				     optarg, opt == 'F', &seeds.hash,
				     &seeds.hash_set) != 0)
				goto out;
			break;
		case 'S':
			if (seed_opt("--seed", optarg, false, &seeds.rng,
				     &seeds.rng_set) != 0)
				goto out;
			break;
		case 'b':
			if (lb_src_budget_parse(optarg, &dp.src_budget) != 0) {
				fprintf(stderr, "lb-dataplane: --src-budget: "
						"'%s' is not 'off' or "
						"RATE[/BURST] in 1..%u\n",
					optarg, LB_SRC_BUDGET_RATE_MAX);
				goto out;
			}
			break;
		case 'B':
			if (parse_uint(optarg, "--src-budget-prefix", 32,
				       &dp.src_budget.prefix) != 0 ||
			    dp.src_budget.prefix < LB_SRC_BUDGET_PREFIX_MIN)
				goto out;
			break;
		case 'N':
			if (parse_uint(optarg, "--src-budget-sources",
				       LB_SRC_BUDGET_SOURCES_MAX,
				       &dp.src_budget.sources) != 0 ||
			    dp.src_budget.sources == 0)
				goto out;
			break;
		case 'p':
			if (parse_snat_ports(optarg, &dp) != 0)
				goto out;
			break;
		case 'x':
			exc_prefix = optarg;
			break;
		case 'X':
			exc_prefix = NULL;
			break;
		case 'P':
			xdp_pin = optarg;
			break;
		case 'n': /* seen by lb_xdp_eal_args() */
			break;
		case 'h':
			usage(stdout, "lb-dataplane");
			ret = EXIT_SUCCESS;
			goto out;
		default:
			usage(stderr, "lb-dataplane");
			goto out;
		}
	}
	if (config == NULL || optind != argc) {
		usage(stderr, "lb-dataplane");
		goto out;
	}
	if (load_config(config) != 0 || lb_xdp_init(xdp_pin) != 0)
		goto out;

	dp.nb_ports = rte_eth_dev_count_avail();
	if (dp.nb_ports == 0 || dp.nb_ports > LB_MAX_PORTS) {
		fprintf(stderr, "lb-dataplane: found %u DPDK ports, need 1..%u "
				"(bind a NIC or pass --vdev)\n",
			dp.nb_ports, LB_MAX_PORTS);
		goto out;
	}
	if (check_ports() != 0)
		goto out;

	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (nw < LB_MAX_WORKERS)
			lcores[nw++] = lcore;
	}
	if (nw == 0)
		lcores[nw++] = rte_get_main_lcore();
	dp.nb_workers = nw;
	dp.ns_per_tsc = 1e9 / (double)rte_get_tsc_hz();
	{
		struct timespec ts;

		/* Backends stamp X-SPL-Time with the wall clock; workers
		 * read only the TSC, so keep the difference. */
		clock_gettime(CLOCK_REALTIME, &ts);
		dp.epoch_off_ns = (int64_t)ts.tv_sec * 1000000000 +
				  ts.tv_nsec -
				  (int64_t)((double)rte_rdtsc() *
					    dp.ns_per_tsc);
	}
	if (dp.l7_flows > 0) {
		dp.hdb = lb_hdr_db_compile(&boot_hdr);
		if (dp.hdb == NULL) {
			fprintf(stderr, "lb-dataplane: cannot compile the "
					"header patterns: %s\n",
				strerror(errno));
			goto out;
		}
	}
	/* Both seeds are secrets (seed.h): a known flow hash lets clients
	 * choose ports that all land on one maglev backend, known table
	 * seeds let them fill one bucket. Hosts of an ECMP group share the
	 * flow hash seed through --hash-seed; nothing else needs to agree
	 * with anyone. */
	rc = lb_seeds_draw(&seeds);
	if (rc != 0) {
		fprintf(stderr, "lb-dataplane: no random seed from the "
				"kernel: %s\n",
			strerror(-rc));
		goto out;
	}
	if (seeds.rng_set)
		fprintf(stderr, "lb-dataplane: --seed given: the flow and "
				"neighbour table seeds are predictable (for "
				"tests and benchmarks only)\n");
	dp.hash_seed = seeds.hash;
	dp.rng_seed = seeds.rng;

	nb_mbufs = dp.nb_ports * nw * (NB_RXD + NB_TXD + LB_BURST) +
		   nw * (4096 + 4096 + LB_BIND_MBUFS + 2 * MBUF_CACHE) + 4096;
	if (exc_prefix != NULL) /* the taps' queues and the rings */
		nb_mbufs += dp.nb_ports * 512 + nw * 2048;
	dp.pool = rte_pktmbuf_pool_create("lb_mbufs", nb_mbufs, MBUF_CACHE, 0,
					  RTE_MBUF_DEFAULT_BUF_SIZE,
					  rte_socket_id());
	if (dp.pool == NULL) {
		fprintf(stderr, "lb-dataplane: cannot allocate %u mbufs: %s\n",
			nb_mbufs, rte_strerror(rte_errno));
		goto out;
	}
	if (shm_create(config) != 0)
		goto out;
	for (uint16_t p = 0; p < dp.nb_ports; p++) {
		lb_xdp_port_prepare(p);
		if (lb_port_setup(p, nw, dp.pool, NB_RXD, NB_TXD,
				  &dp.port[p]) != 0)
			goto out;
		lb_xdp_port_started(p);
	}
	/* The rules of the boot configuration; lb-control syncs its own
	 * on every publish. */
	lb_xdp_sync(dp.conf);
	lb_xdp_publish(dp.shm);
	for (uint16_t i = 0; i < nw; i++) {
		dp.w[i] = lb_worker_create(&dp, i, lcores[i]);
		if (dp.w[i] == NULL) {
			/* Its tables are what fails: hugepage memory taken
			 * by other DPDK processes, or too little reserved. */
			fprintf(stderr,
				"lb-dataplane: cannot create worker %u: not "
				"enough hugepage memory on socket %d for its "
				"tables (%u flows per worker, --flows); see "
				"docs/operating.md, Memory\n",
				i, (int)rte_lcore_to_socket_id(lcores[i]),
				dp.flows);
			goto out;
		}
	}
	if (exc_prefix != NULL &&
	    (lb_exc_create(&dp, exc_prefix) == NULL ||
	     lb_exc_start(dp.exc, nw + 1) != 0 ||
	     lb_exc_telemetry_init(dp.exc) != 0)) {
		fprintf(stderr, "lb-dataplane: no exception path (see the log "
				"above; --no-exception runs without)\n");
		goto out;
	}
	shm_publish();
	/* Ready for lb-control: its attach now finds everything. */
	if (rtdir[0] != '\0' && lb_rt_set_ready(rtdir, getpid()) != 0)
		fprintf(stderr, "lb-dataplane: warning: cannot write %s/%s: "
				"lb-control will not attach\n",
			rtdir, LB_RT_READY_FILE);
	lb_rt_unlock(rt_lock);
	rt_lock = -1;
	if (lb_telemetry_init(&dp) != 0)
		fprintf(stderr, "lb-dataplane: warning: telemetry commands not "
				"registered\n");

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	fprintf(stderr,
		"lb-dataplane: %u service(s), %u port(s), %u worker(s), %u "
		"flows per worker; running\n",
		dp.conf->nb_svc, dp.nb_ports, nw, dp.flows);
	if (lcores[0] == rte_get_main_lcore()) {
		lb_worker_main(dp.w[0]);
	} else {
		for (uint16_t i = 0; i < nw; i++)
			rte_eal_remote_launch(lb_worker_main, dp.w[i],
					      lcores[i]);
		while (!dp.quit)
			rte_delay_us_sleep(100000);
		rte_eal_mp_wait_lcore();
	}
	fprintf(stderr, "lb-dataplane: stopping\n");
	if (rtdir[0] != '\0')
		lb_rt_clear_ready(rtdir, getpid());
	/* A lb-control still attached sees the dataplane going away. */
	dp.shm->magic = 0;
	ret = EXIT_SUCCESS;
out:
	lb_exc_free(dp.exc);
	for (uint16_t i = 0; i < LB_MAX_WORKERS; i++)
		lb_worker_free(dp.w[i]);
	for (uint16_t p = 0; p < dp.nb_ports; p++)
		if (dp.port[p].nb_queues > 0)
			lb_port_close(p);
	rte_mempool_free(dp.pool);
	lb_hdr_db_free(dp.hdb);
	/* Once published, the tables are lb-control's to reuse; EAL
	 * cleanup takes them. */
	if (dp.shm == NULL)
		rte_free(dp.conf);
	rte_eal_cleanup();
	lb_rt_unlock(rt_lock);
	lb_xdp_close();
	return ret;
}
