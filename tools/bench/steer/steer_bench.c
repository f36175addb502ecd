/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-steer-bench: what the XDP steering program costs, each figure
 * against a baseline measured in the same round (docs/performance.md).
 *
 *   testrun  ns per frame of the program on each kind of frame, run by
 *            BPF_PROG_TEST_RUN without a device, against an empty
 *            program (base_nop).
 *   deny     a flood from a denied source through a veth pair: frames
 *            per second the program drops, against the cheapest counting
 *            drop (base_drop).
 *   host     frames for the host's own address passed to the kernel (UDP
 *            to a closed port): no XDP program, the empty program, the
 *            steering program.
 *   xsk      frames for a VIP into an AF_XDP socket that a thread drains:
 *            the steering program against a redirect of every frame
 *            (base_xsk, what a PMD's default program does).
 *
 * The veth cases run in a network namespace of the bench's own: frames
 * are made in the kernel by a live-frame BPF_PROG_TEST_RUN of gen_tx on
 * one end (XDP_TX out of it), and the program under test runs in the
 * other end's NAPI poll, on the same CPU. Rounds alternate the variants,
 * flipping the order every round, because this machine's vCPUs move
 * between physical cores every 10-30 s; medians of the rates and of the
 * per-round ratios are printed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <netinet/in.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/xsk.h>

#include "bench.skel.h"
#include "lb/steer.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_ROUNDS 101
#define GEN_IF "sg0"
#define RX_IF "sr0"
#define GEN_CPU 0
#define XSK_CPU 1

static int rounds = 11;
static uint32_t veth_frames = 1000000;
static int tr_repeat = 1000000;

/* ---- frames -------------------------------------------------------- */

#define A(a, b, c, d)                                                          \
	((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))
#define VIP A(10, 0, 0, 100)
#define SHARED A(10, 0, 0, 5)
#define RX_ADDR A(10, 0, 0, 2) /* sr0's kernel address */
#define CLIENT A(10, 0, 0, 1)
#define DENIED A(192, 0, 2, 7)

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static void
eth(uint8_t *f, uint16_t type)
{
	static const uint8_t dst[6] = {2, 0, 0, 0, 0, 2};
	static const uint8_t src[6] = {2, 0, 0, 0, 0, 1};

	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	put16(f + 12, type);
}

/* A 64-byte IPv4 frame (60 without the FCS) with a valid IP checksum. */
static size_t
ip4(uint8_t *f, uint32_t src, uint32_t dst, uint8_t proto, uint16_t dport)
{
	uint8_t *ip = f + 14;
	uint32_t s = 0;

	memset(f, 0, 64);
	eth(f, ETH_P_IP);
	ip[0] = 0x45;
	put16(ip + 2, 46);
	ip[8] = 64;
	ip[9] = proto;
	put32(ip + 12, src);
	put32(ip + 16, dst);
	for (int i = 0; i < 20; i += 2)
		s += (uint32_t)ip[i] << 8 | ip[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	put16(ip + 10, (uint16_t)~s);
	put16(ip + 20, 1000);
	put16(ip + 22, dport);
	if (proto == IPPROTO_UDP) {
		put16(ip + 24, 26); /* UDP checksum 0: none */
	} else {
		ip[32] = 5 << 4;
		ip[33] = 0x02;
	}
	return 60;
}

static size_t
arp(uint8_t *f, uint32_t spa, uint32_t tpa)
{
	memset(f, 0, 64);
	eth(f, ETH_P_ARP);
	put16(f + 14, 1);
	put16(f + 16, ETH_P_IP);
	f[18] = 6;
	f[19] = 4;
	put16(f + 20, 1);
	memcpy(f + 22, f + 6, 6);
	put32(f + 28, spa);
	put32(f + 38, tpa);
	return 60;
}

static size_t
ip6(uint8_t *f)
{
	memset(f, 0, 128);
	eth(f, ETH_P_IPV6);
	f[14] = 0x60;
	put16(f + 18, 8);
	f[20] = IPPROTO_UDP;
	f[21] = 64;
	return 14 + 40 + 8;
}

/* ---- statistics ---------------------------------------------------- */

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
median(const double *v, int n)
{
	double s[MAX_ROUNDS];

	memcpy(s, v, (size_t)n * sizeof(*v));
	qsort(s, (size_t)n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* ---- the namespace ------------------------------------------------- */

static struct lb_steer *steer;
static struct bench_bpf *bench;
static int gen_ifindex, rx_ifindex;

static int
sh(const char *cmd)
{
	int rc = system(cmd);

	if (rc != 0)
		fprintf(stderr, "lb-steer-bench: '%s' failed (%d)\n", cmd, rc);
	return rc;
}

static int
netns_setup(void)
{
	if (unshare(CLONE_NEWNET) != 0) {
		perror("lb-steer-bench: unshare(CLONE_NEWNET)");
		return -1;
	}
	/* GRO on the receiving end gives it a NAPI poll without a program,
	 * which the generator's frames need to arrive at all. */
	if (sh("ip link set lo up") ||
	    sh("ip link add " GEN_IF " address 02:00:00:00:00:01 type veth "
	       "peer name " RX_IF " address 02:00:00:00:00:02") ||
	    sh("ip link set " GEN_IF " up") || sh("ip link set " RX_IF " up") ||
	    sh("ip addr add 10.0.0.2/24 dev " RX_IF) ||
	    sh("ethtool -K " RX_IF " gro on >/dev/null"))
		return -1;
	gen_ifindex = (int)if_nametoindex(GEN_IF);
	rx_ifindex = (int)if_nametoindex(RX_IF);
	return gen_ifindex > 0 && rx_ifindex > 0 ? 0 : -1;
}

/* ---- testrun ------------------------------------------------------- */

/* ns per run, as the kernel measures it: whole ns, but without the time
 * the thread spent preempted, which a wall clock would count (other
 * processes share these two vCPUs). */
static double
testrun(int prog_fd, const uint8_t *f, size_t len, uint32_t *verdict)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f,
		    .data_size_in = (uint32_t)len, .repeat = tr_repeat);

	if (bpf_prog_test_run_opts(prog_fd, &o) != 0) {
		perror("lb-steer-bench: BPF_PROG_TEST_RUN");
		exit(1);
	}
	if (verdict != NULL)
		*verdict = o.retval;
	return o.duration;
}

struct tr_case {
	const char *name;
	uint8_t frame[128];
	size_t len;
};

static void
testrun_cases(const char *title, struct tr_case *c, int n)
{
	static const char *const vn[] = {"ABORTED", "DROP", "PASS", "TX",
					 "REDIRECT"};
	int ours = lb_steer_prog_fd(steer);
	int base = bpf_program__fd(bench->progs.base_nop);

	printf("\n%s: BPF_PROG_TEST_RUN, %d runs x %d rounds, ns/frame\n",
	       title, tr_repeat, rounds);
	printf("| frame | verdict | steering | empty program | difference "
	       "| ratio |\n|---|---|---|---|---|---|\n");
	for (int i = 0; i < n; i++) {
		double t_o[MAX_ROUNDS], t_b[MAX_ROUNDS], d[MAX_ROUNDS];
		double r[MAX_ROUNDS];
		uint32_t v = 0;

		for (int k = 0; k < rounds; k++) {
			if (k % 2 == 0) {
				t_o[k] =
					testrun(ours, c[i].frame, c[i].len, &v);
				t_b[k] = testrun(base, c[i].frame, c[i].len,
						 NULL);
			} else {
				t_b[k] = testrun(base, c[i].frame, c[i].len,
						 NULL);
				t_o[k] =
					testrun(ours, c[i].frame, c[i].len, &v);
			}
			d[k] = t_o[k] - t_b[k];
			r[k] = t_b[k] > 0 ? t_o[k] / t_b[k] : 0;
		}
		printf("| %s | %s | %.1f | %.1f | %.1f | %.2f |\n", c[i].name,
		       v < ARRAY_SIZE(vn) ? vn[v] : "?", median(t_o, rounds),
		       median(t_b, rounds), median(d, rounds),
		       median(r, rounds));
	}
}

static void
bench_testrun(void)
{
	struct tr_case c[8];
	int n = 0;

	c[n].name = "udp to an address without rules (host)";
	c[n].len = ip4(c[n].frame, CLIENT, RX_ADDR, IPPROTO_UDP, 9);
	n++;
	c[n].name = "udp to a whole-address VIP";
	c[n].len = ip4(c[n].frame, CLIENT, VIP, IPPROTO_UDP, 53);
	n++;
	c[n].name = "tcp SYN to a port rule of a shared address";
	c[n].len = ip4(c[n].frame, CLIENT, SHARED, IPPROTO_TCP, 8080);
	n++;
	c[n].name = "tcp SYN to a shared address, port without rule";
	c[n].len = ip4(c[n].frame, CLIENT, SHARED, IPPROTO_TCP, 22);
	n++;
	c[n].name = "udp from a denied source";
	c[n].len = ip4(c[n].frame, DENIED, VIP, IPPROTO_UDP, 53);
	n++;
	c[n].name = "ARP request for the VIP";
	c[n].len = arp(c[n].frame, CLIENT, VIP);
	n++;
	c[n].name = "IPv6 udp";
	c[n].len = ip6(c[n].frame);
	n++;
	testrun_cases("ACL of 1 prefix", c, n);

	/* A large ACL: 10,000 random /24 and /16 prefixes the sources above
	 * are not in (10/8 and 192.0.2/24 stay out); the LPM trie gets
	 * deeper, every IPv4 frame pays one walk of it. */
	srand(1);
	for (int i = 0, added = 0; added < 10000 && i < 1000000; i++) {
		uint32_t p = (uint32_t)rand() << 8;
		uint8_t len = i % 4 == 0 ? 16 : 24;

		p &= len == 16 ? 0xffff0000u : 0xffffff00u;
		if ((p >> 24) == 10 || (p >> 24) == 192 || (p >> 24) == 0 ||
		    (p >> 24) >= 224)
			continue;
		if (lb_steer_acl_set(steer, htonl(p), len, LB_STEER_ACL_DENY,
				     0) == 0)
			added++;
	}
	testrun_cases("ACL of 10,001 prefixes", c, 5);
}

/* ---- veth ---------------------------------------------------------- */

/* Sends veth_frames copies of @p f out of GEN_IF; returns the seconds. */
static double
generate(const uint8_t *f, size_t len)
{
	struct xdp_md ctx = {
		.data_end = (uint32_t)len,
		.ingress_ifindex = (uint32_t)gen_ifindex,
	};
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f,
		    .data_size_in = (uint32_t)len, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = (int)veth_frames,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = 64);
	double t0 = now_s();

	if (bpf_prog_test_run_opts(bpf_program__fd(bench->progs.gen_tx), &o) !=
	    0) {
		perror("lb-steer-bench: live-frame BPF_PROG_TEST_RUN");
		exit(1);
	}
	return now_s() - t0;
}

/* What a variant's frames did, counted where they ended. */
enum sink { SINK_STEER_DROP, SINK_BASE_DROP, SINK_NOPORTS, SINK_XSK };

static _Atomic uint64_t xsk_rx;

static uint64_t
udp_noports(void)
{
	char line[1024], vals[1024];
	FILE *f = fopen("/proc/net/snmp", "r");
	uint64_t v = 0;

	if (f == NULL)
		return 0;
	/* "Udp: InDatagrams NoPorts ..." then the values, same order */
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "Udp: In", 7) != 0)
			continue;
		if (fgets(vals, sizeof(vals), f) != NULL)
			sscanf(vals, "Udp: %*u %" SCNu64, &v);
		break;
	}
	fclose(f);
	return v;
}

static uint64_t
sink_count(enum sink s)
{
	struct lb_steer_stats st;
	uint64_t v[256], sum = 0;
	uint32_t k = 0;
	int ncpu = libbpf_num_possible_cpus();

	switch (s) {
	case SINK_STEER_DROP:
		lb_steer_stats_read(steer, &st);
		return st.ctr[LB_STEER_CTR_DROP_DENY].packets;
	case SINK_BASE_DROP:
		if (ncpu > (int)ARRAY_SIZE(v) ||
		    bpf_map_lookup_elem(bpf_map__fd(bench->maps.drops), &k,
					v) != 0)
			return 0;
		for (int i = 0; i < ncpu; i++)
			sum += v[i];
		return sum;
	case SINK_NOPORTS:
		return udp_noports();
	default:
		return atomic_load(&xsk_rx);
	}
}

struct variant {
	const char *name;
	int prog_fd;  /* -1: no program; else attached for the run */
	int is_steer; /* attach through the library */
	enum sink sink;
};

static void
attach(const struct variant *v)
{
	int rc = 0;

	if (v->is_steer)
		rc = lb_steer_attach(steer, rx_ifindex, XDP_FLAGS_DRV_MODE);
	else if (v->prog_fd >= 0)
		rc = bpf_xdp_attach(rx_ifindex, v->prog_fd, XDP_FLAGS_DRV_MODE,
				    NULL);
	if (rc != 0) {
		fprintf(stderr, "lb-steer-bench: attach %s: %s\n", v->name,
			strerror(-rc));
		exit(1);
	}
}

static void
detach(const struct variant *v)
{
	if (v->is_steer)
		lb_steer_detach(steer);
	else if (v->prog_fd >= 0)
		bpf_xdp_detach(rx_ifindex, XDP_FLAGS_DRV_MODE, NULL);
}

/*
 * One run: Mpps through the receiving end, and in *delivered the share of
 * the frames that reached the variant's sink. Generator and NAPI poll
 * take turns on one CPU, 64 frames at a time, so the rate is that of
 * both; a frame the AF_XDP reader was too slow for was still judged and
 * redirected, and is counted in the rate but not in *delivered.
 */
static double
veth_run(const struct variant *v, const uint8_t *f, size_t len,
	 double *delivered)
{
	uint64_t c0, c1;
	double secs;

	attach(v);
	/* a few frames first: the first ones after an attach are slower */
	generate(f, len);
	c0 = sink_count(v->sink);
	secs = generate(f, len);
	usleep(20000); /* what is still in the rings */
	c1 = sink_count(v->sink);
	detach(v);
	*delivered = (double)(c1 - c0) / veth_frames;
	return veth_frames / secs / 1e6;
}

static void
veth_case(const char *title, const struct variant *v, int nv, const uint8_t *f,
	  size_t len)
{
	double mpps[4][MAX_ROUNDS], ratio[4][MAX_ROUNDS], dl[4][MAX_ROUNDS];

	for (int k = 0; k < rounds; k++) {
		for (int j = 0; j < nv; j++) {
			int i = k % 2 == 0 ? j : nv - 1 - j;

			mpps[i][k] = veth_run(&v[i], f, len, &dl[i][k]);
		}
		for (int i = 0; i < nv; i++)
			ratio[i][k] =
				mpps[0][k] > 0 ? mpps[i][k] / mpps[0][k] : 0;
	}
	printf("\n%s: %u frames x %d rounds\n", title, veth_frames, rounds);
	printf("| variant | Mpps | ns/frame | reached the sink | ratio to %s "
	       "|\n|---|---|---|---|---|\n",
	       v[0].name);
	for (int i = 0; i < nv; i++) {
		double m = median(mpps[i], rounds);

		printf("| %s | %.3f | %.0f | %.3f | %.3f |\n", v[i].name, m,
		       m > 0 ? 1e3 / m : 0, median(dl[i], rounds),
		       median(ratio[i], rounds));
	}
}

/* The AF_XDP socket of the xsk case and the thread that drains it. */
#define XSK_FRAMES 16384
#define XSK_RING 8192
#define XSK_FRAME_SIZE 2048

struct xsk_sink {
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	struct xsk_ring_prod fq;
	struct xsk_ring_cons cq;
	struct xsk_ring_cons rx;
	void *area;
	pthread_t thread;
	atomic_int stop;
};

static void *
xsk_drain(void *arg)
{
	struct xsk_sink *x = arg;

	pin_cpu(XSK_CPU);
	while (!atomic_load(&x->stop)) {
		uint32_t idx_rx, idx_fq;
		unsigned int n = xsk_ring_cons__peek(&x->rx, 64, &idx_rx);

		if (n == 0)
			continue;
		while (xsk_ring_prod__reserve(&x->fq, n, &idx_fq) != n)
			;
		for (unsigned int i = 0; i < n; i++)
			*xsk_ring_prod__fill_addr(&x->fq, idx_fq + i) =
				xsk_ring_cons__rx_desc(&x->rx, idx_rx + i)
					->addr;
		xsk_ring_prod__submit(&x->fq, n);
		xsk_ring_cons__release(&x->rx, n);
		atomic_fetch_add(&xsk_rx, n);
	}
	return NULL;
}

static int
xsk_open(struct xsk_sink *x)
{
	struct xsk_socket_config cfg = {
		.rx_size = XSK_RING,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = XDP_COPY,
	};
	struct xsk_umem_config ucfg = {
		.fill_size = XSK_RING,
		.comp_size = 64,
		.frame_size = XSK_FRAME_SIZE,
	};
	size_t size = (size_t)XSK_FRAMES * XSK_FRAME_SIZE;
	uint32_t idx, q = 0;
	int fd, rc;

	x->area = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (x->area == MAP_FAILED)
		return -errno;
	rc = xsk_umem__create(&x->umem, x->area, size, &x->fq, &x->cq, &ucfg);
	if (rc != 0)
		return rc;
	rc = xsk_socket__create(&x->xsk, RX_IF, 0, x->umem, &x->rx, NULL, &cfg);
	if (rc != 0)
		return rc;
	if (xsk_ring_prod__reserve(&x->fq, XSK_RING, &idx) != XSK_RING)
		return -ENOSPC;
	for (uint32_t i = 0; i < XSK_RING; i++)
		*xsk_ring_prod__fill_addr(&x->fq, idx + i) =
			(uint64_t)i * XSK_FRAME_SIZE;
	xsk_ring_prod__submit(&x->fq, XSK_RING);
	fd = xsk_socket__fd(x->xsk);
	/* both programs' maps get the socket */
	rc = bpf_map_update_elem(lb_steer_xsks_fd(steer), &q, &fd, BPF_ANY);
	if (rc == 0)
		rc = bpf_map_update_elem(bpf_map__fd(bench->maps.xsks_map), &q,
					 &fd, BPF_ANY);
	if (rc != 0)
		return rc;
	return pthread_create(&x->thread, NULL, xsk_drain, x) == 0 ? 0
								   : -EAGAIN;
}

static void
bench_veth(int deny, int host, int xsk)
{
	uint8_t f[64];
	size_t len;

	pin_cpu(GEN_CPU);
	if (deny) {
		const struct variant v[] = {
			{"base_drop (counting drop)",
			 bpf_program__fd(bench->progs.base_drop), 0,
			 SINK_BASE_DROP},
			{"steering, source denied", -1, 1, SINK_STEER_DROP},
		};

		len = ip4(f, DENIED, VIP, IPPROTO_UDP, 53);
		veth_case("deny: a flood from a denied source, dropped", v, 2,
			  f, len);
	}
	if (host) {
		const struct variant v[] = {
			{"no XDP program", -1, 0, SINK_NOPORTS},
			{"base_nop (empty program)",
			 bpf_program__fd(bench->progs.base_nop), 0,
			 SINK_NOPORTS},
			{"steering, passed to the kernel", -1, 1, SINK_NOPORTS},
		};

		len = ip4(f, CLIENT, RX_ADDR, IPPROTO_UDP, 9);
		veth_case("host: udp to the host's own address (closed port), "
			  "into the kernel",
			  v, 3, f, len);
	}
	if (xsk) {
		static struct xsk_sink x;
		const struct variant v[] = {
			{"base_xsk (every frame to the socket)",
			 bpf_program__fd(bench->progs.base_xsk), 0, SINK_XSK},
			{"steering, VIP steered", -1, 1, SINK_XSK},
		};
		int rc;

		rc = xsk_open(&x);
		if (rc != 0) {
			fprintf(stderr, "lb-steer-bench: AF_XDP socket: %s\n",
				strerror(-rc));
			exit(1);
		}
		len = ip4(f, CLIENT, VIP, IPPROTO_UDP, 53);
		veth_case("xsk: udp to a VIP, into an AF_XDP socket drained "
			  "on another CPU",
			  v, 2, f, len);
		atomic_store(&x.stop, 1);
		pthread_join(x.thread, NULL);
		xsk_socket__delete(x.xsk);
		xsk_umem__delete(x.umem);
	}
}

/* ---- main ---------------------------------------------------------- */

static int
quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static void
plan(void)
{
	const struct lb_steer_rule rules[] = {
		{.addr = htonl(VIP), .kind = LB_STEER_KIND_VIP},
		{.addr = htonl(SHARED),
		 .proto = IPPROTO_TCP,
		 .port_min = 8080,
		 .port_max = 8080},
		{.addr = htonl(SHARED),
		 .proto = IPPROTO_UDP,
		 .port_min = 40000,
		 .port_max = 40999,
		 .kind = LB_STEER_KIND_SNAT},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rules); i++)
		if (lb_steer_rule_add(steer, &rules[i]) != 0)
			exit(1);
	if (lb_steer_acl_set(steer, htonl(A(192, 0, 2, 0)), 24,
			     LB_STEER_ACL_DENY, 0) != 0)
		exit(1);
}

int
main(int argc, char **argv)
{
	struct lb_steer_conf conf = {.max_acl = 20000};
	int all = 1, tr = 0, deny = 0, host = 0, xsk = 0;
	int fake = -1;
	uint32_t q = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
			rounds = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--frames") == 0 && i + 1 < argc) {
			veth_frames = (uint32_t)strtoul(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
			tr_repeat = atoi(argv[++i]);
		} else if (strcmp(argv[i], "testrun") == 0) {
			tr = 1, all = 0;
		} else if (strcmp(argv[i], "deny") == 0) {
			deny = 1, all = 0;
		} else if (strcmp(argv[i], "host") == 0) {
			host = 1, all = 0;
		} else if (strcmp(argv[i], "xsk") == 0) {
			xsk = 1, all = 0;
		} else {
			fprintf(stderr, "usage: lb-steer-bench [--rounds N] "
					"[--frames N] [--repeat N] "
					"[testrun] [deny] [host] [xsk]\n");
			return 2;
		}
	}
	if (rounds < 1 || rounds > MAX_ROUNDS || veth_frames == 0 ||
	    tr_repeat < 1) {
		fprintf(stderr, "lb-steer-bench: bad --rounds, --frames or "
				"--repeat\n");
		return 2;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "lb-steer-bench: needs root\n");
		return 1;
	}
	libbpf_set_print(quiet);
	if (netns_setup() != 0)
		return 1;
	bench = bench_bpf__open_and_load();
	if (bench == NULL || lb_steer_load(&conf, &steer) != 0) {
		fprintf(stderr, "lb-steer-bench: cannot load the programs\n");
		return 1;
	}
	plan();
	printf("lb-steer-bench: %d rounds, CPUs: generator and NAPI %d, "
	       "AF_XDP reader %d\n",
	       rounds, GEN_CPU, XSK_CPU);
	if (all || deny || host || xsk)
		bench_veth(all || deny, all || host, all || xsk);
	if (all || tr) {
		/* BPF_PROG_TEST_RUN reports a redirect's verdict without
		 * doing it, but only finds a socket that is in the map. */
		fake = socket(AF_XDP, SOCK_RAW, 0);
		if (fake >= 0)
			bpf_map_update_elem(lb_steer_xsks_fd(steer), &q, &fake,
					    BPF_ANY);
		pin_cpu(GEN_CPU);
		bench_testrun();
	}
	lb_steer_close(steer);
	bench_bpf__destroy(bench);
	if (fake >= 0)
		close(fake);
	return 0;
}
