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
 * And, only when asked (--tests l7), what following HTTP costs: two
 * services identical but for `http`, --l7-flows established flows on
 * each, every flow carrying keep-alive exchanges of one request segment
 * and one response segment with X-SPL; rounds of the http service
 * alternate with rounds of the plain one, both on the worker, and the
 * generator drains the feedback ring as lb-control would.
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
 *                   [--tests est,mix,new,l7] [--l7-governor]
 * Without EAL options it runs on lcores 0-1 with hugepages when enough
 * are free (--in-memory), else with --no-huge -m 1024.
 */
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <inttypes.h>
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

#include "dp.h"
#include "lb/admit.h"
#include "lb/conf.h"
#include "csum.h"
#include "lb/dpconf.h"
#include "lb/flow_table.h"
#include "lb/hdr_scan.h"
#include "neigh.h"
#include "lb/sched.h"
#include "rundir.h"

#define RING_SIZE 2048u /* the port's rx and tx rings */
#define IN_FLIGHT 1024u /* mbufs the generator keeps circulating */
#define NB_MBUFS 16383u
#define MBUF_CACHE 256u
#define FRAME_LEN 60u /* 64 bytes on the wire with the FCS */
#define SETUP_BATCH 512u
#define NB_BES 16u
#define NB_SNATS LB_CONF_MAX_SNATS
#define SNAT_PORTS (65535u - 1024u + 1u) /* per address, one worker */
#define MAX_FLOWS (NB_SNATS * SNAT_PORTS)
#define TABLE_FLOWS (1u << 20)
#define NEW_CAP 1000000u /* SYNs per new-flow round, at most */
#define CHECK_EVERY 32u
#define MAX_ROUNDS 64u
#define MAX_SIZES 4u
#define REPLY_BIT 0x80000000u
#define STRIDE 2654435761u /* prime: visits every flow, scattered */
#define HUGE_MB_NEEDED 384u
#define DRAIN_MAX_S 60u /* the forwarder is stuck */
#define STALL_US 200u	/* a gap this long: the lcore lost the CPU */

/* Addresses in host order. */
#define IP_LOCAL 0x0a000001u	/* 10.0.0.1/16 on port 0 */
#define IP_GW 0x0a0000feu	/* 10.0.0.254: router of the clients */
#define IP_VIP 0x0a006401u	/* 10.0.100.1 */
#define IP_VIP_L7 0x0a006402u	/* 10.0.100.2: l7, followed */
#define IP_VIP_L4 0x0a006403u	/* 10.0.100.3: l7, its plain twin */
#define IP_BE 0x0a000101u	/* 10.0.1.1 .. 10.0.1.16 */
#define IP_SNAT 0x0a000201u	/* 10.0.2.1 .. 10.0.2.16 */
#define NET_CLIENTS 0xc6120000u /* 198.18.0.0/15, routed via IP_GW */
#define NET_EST 0xc6120000u	/* 198.18.0.0/16: established flows */
#define NET_NEW 0xc6130000u	/* 198.19.0.0/16: new flows */
#define VPORT 80
#define BE_PORT 8080

/* Frame offsets: Ethernet, IPv4 without options, TCP without options. */
#define OFF_IP 14
#define OFF_IP_CSUM 24
#define OFF_SRC 26
#define OFF_DST 30
#define OFF_TCP 34
#define OFF_SEQ 38
#define OFF_TCP_CSUM 50

#define L7_FRAME_MAX 512u
#define L7_SVC_HTTP 0
#define L7_SVC_PLAIN 1
#define L7_MAX_FLOWS 100000u /* per service; about 3.3 KB each */
#define FB_BURST 64u

enum test { T_EST, T_MIX, T_NEW, T_L7, T_ADM, T_MAX };

static const char *const test_names[T_MAX] = {"est", "mix", "new", "l7", "adm"};
static const char *const test_what[T_MAX] = {
	"established flows, client -> backend",
	"established flows, half client -> backend, half replies",
	"new flows, every packet a SYN of a new client tuple",
	"HTTP exchanges on established flows, http service vs plain L4",
	"new flows, admission control on vs off",
};

/*
 * The exchange every l7 flow repeats: a small request and a small
 * keep-alive response with the backend's load, one segment each.
 */
static const char l7_req[] = "GET /item HTTP/1.1\r\nHost: bench\r\n"
			     "X-Priority: 5\r\n\r\n";
static const char l7_resp[] = "HTTP/1.1 200 OK\r\n"
			      "Date: Sun, 22 Nov 2026 03:00:00 GMT\r\n"
			      "Content-Type: text/plain\r\n"
			      "Content-Length: 2\r\n"
			      "X-SPL: 0.42\r\n"
			      "X-SPL-Time: 1795316400000\r\n\r\nok";

enum phase { PH_WARM, PH_MEASURE, PH_DRAIN, PH_STOP };

/* A frame with everything but addresses, ports and sequence number. */
struct tmpl {
	uint8_t f[FRAME_LEN];
	uint32_t ip_sum;  /* IP header, addresses and checksum zero */
	uint32_t tcp_sum; /* pseudo-header and TCP header, the same */
};

/* What the worker chose for flow i while it was opened. */
struct flow_rec {
	uint32_t snat_ip;   /* network order */
	uint16_t snat_port; /* network order */
	uint16_t be;
};

/* A frame with a payload; addresses, ports, seq and ack left zero. */
struct l7_tmpl {
	uint8_t f[L7_FRAME_MAX];
	uint16_t len;
	uint32_t ip_sum;
	uint32_t tcp_sum; /* pseudo-header, TCP header and payload */
};

/* An l7 flow: what the worker chose, and where each stream is. */
struct l7_flow {
	struct flow_rec r;
	uint32_t cseq; /* next client byte, host order */
	uint32_t bseq; /* next backend byte */
};

struct gen {
	enum test test;
	uint32_t nb_flows;
	uint32_t step; /* STRIDE mod nb_flows */
	uint32_t cur;  /* next client packet's flow */
	uint32_t rcur; /* next reply's flow */
	uint32_t odd;  /* mix: the next frame is a reply; l7: a request */
	uint64_t made; /* frames written this round */

	/* l7 */
	uint32_t svc;	/* L7_SVC_HTTP or L7_SVC_PLAIN */
	uint32_t last;	/* flow of the last request */
	uint64_t resps; /* responses written, all rounds */
};

/*
 * What the forwarder lcore counts. Only that lcore writes here while it
 * runs, except iters, which the generator reads to see it make progress.
 */
struct meter {
	uint64_t last;	/* end of the last poll, or start of an empty one */
	uint64_t busy;	/* cycles in polls that moved packets */
	uint64_t polls; /* such polls */
	uint64_t pkts;	/* packets they took in */
	uint64_t tx;	/* packets transmitted */
	uint64_t lost;	/* cycles the lcore did not run (see lap_start) */
};

/* Counters at the start and at the end of the measured part. */
struct snap {
	uint64_t tsc, flows;
	struct meter m;
};

struct fwd {
	int phase; /* written by the generator, __atomic */
	uint16_t port;
	struct lb_worker *w; /* NULL: bare forwarder */
	uint64_t stall_tsc;  /* a gap this long: the lcore lost the CPU */
	uint64_t iters;	     /* loop iterations, __atomic */
	struct meter m;
	int taken;
	struct snap s[2];
	uint64_t tx_refused; /* bare forwarder: mbufs the port refused */
};

struct res {
	double mpps;	/* packets transmitted per second */
	double ns;	/* busy ns per packet on the forwarder lcore */
	double busy;	/* share of its running time in busy polls */
	double fps;	/* flows created per second */
	double gen_ns;	/* generator's busy ns per packet */
	double lost_ms; /* time the forwarder lcore did not run */

	/* l7 */
	uint64_t fb;	     /* feedback records drained */
	uint64_t fb_dropped; /* records the full ring lost */
	/* adm: admissions and atomics on shared memory while measured */
	uint64_t adm_pass, adm_atomics;
	unsigned int problems;
};

struct l7_row {
	uint32_t flows;
	double l4_mpps, l7_mpps, ratio, l4_ns, l7_ns, extra_ns;
	double l4_busy, l7_busy;
	unsigned int problems;
};

struct adm_row {
	const char *key;
	double off_fps, on_fps, ratio, off_ns, on_ns, extra_ns, atomics;
	unsigned int problems;
};

struct row {
	enum test test;
	uint32_t flows;
	double bare_mpps, lb_mpps, ratio, bare_ns, lb_ns, own_ns, fps;
	double gen_ns, bare_busy, lb_busy;
	unsigned int problems;
};

struct bench {
	double seconds;
	unsigned int rounds;
	uint32_t sizes[MAX_SIZES];
	unsigned int nb_sizes;
	uint32_t l7_sizes[MAX_SIZES];
	unsigned int nb_l7_sizes;
	unsigned int tests; /* bit per enum test */

	struct rte_mempool *pool;
	struct rte_ring *rxr, *txr;
	uint16_t port;
	unsigned int fwd_lcore;
	struct lb_dp dp;
	struct lb_worker *w;

	uint8_t port_mac[6], gw_mac[6], be_mac[NB_BES][6];
	uint32_t vip, be_ip[NB_BES]; /* network order */
	uint16_t vport, be_port;
	struct tmpl t_syn, t_ack, t_synack[NB_BES], t_reply[NB_BES];

	struct flow_rec *rec;
	uint32_t nb_rec;
	uint64_t new_ctr; /* new-flow tuples handed out so far */
	uint64_t hz;

	struct row rows[T_MAX * MAX_SIZES];
	unsigned int nb_rows;

	/* l7: its own table (two services), header database, flows */
	struct lb_dpconf *conf_l4, *conf_l7;
	int l7_gov; /* --l7-governor: the l7 service has governor on */
	struct lb_hdr_db *hdb;
	uint32_t l7_vip[2]; /* network order */
	struct l7_tmpl t7_syn, t7_ack, t7_req, t7_synack[NB_BES],
		t7_resp[NB_BES];
	struct l7_flow *l7f[2];
	uint32_t *l7_by_snat[2]; /* (SNAT address, port) -> flow */
	uint32_t nb_l7;
	struct l7_row l7_rows[MAX_SIZES];
	unsigned int nb_l7_rows;

	/* adm: the global buckets the worker borrows from */
	struct lb_admit_shm *admit_sh;
	struct adm_row adm_rows[2];
	unsigned int nb_adm_rows;
};

/* ---- frames ------------------------------------------------------------- */

static inline uint32_t
sum32(uint32_t v)
{
	return (v & 0xffff) + (v >> 16);
}

static void
tmpl_init(struct tmpl *t, const uint8_t *dmac, const uint8_t *smac,
	  uint8_t flags)
{
	uint8_t *f = t->f, ph[12 + 20];

	memset(t, 0, sizeof(*t));
	memcpy(f, dmac, 6);
	memcpy(f + 6, smac, 6);
	f[12] = 0x08; /* IPv4 */
	f[OFF_IP] = 0x45;
	f[OFF_IP + 3] = 40;   /* total length: headers only */
	f[OFF_IP + 6] = 0x40; /* DF */
	f[OFF_IP + 8] = 64;
	f[OFF_IP + 9] = LB_IPPROTO_TCP;
	if (flags & LB_TCP_ACK)
		f[OFF_TCP + 11] = 1; /* acknowledgement number */
	f[OFF_TCP + 12] = 5 << 4;
	f[OFF_TCP + 13] = flags;
	f[OFF_TCP + 14] = 0xff; /* window */
	f[OFF_TCP + 15] = 0xff;
	t->ip_sum = lb_csum_partial(f + OFF_IP, 20, 0);
	memset(ph, 0, sizeof(ph));
	ph[9] = LB_IPPROTO_TCP;
	ph[11] = 20;
	memcpy(ph + 12, f + OFF_TCP, 20);
	t->tcp_sum = lb_csum_partial(ph, sizeof(ph), 0);
}

/* Fills @p f from @p t; every argument in network order. */
static inline void
frame_write(uint8_t *f, const struct tmpl *t, uint32_t src, uint32_t dst,
	    uint16_t sport, uint16_t dport, uint32_t seq)
{
	uint32_t a = sum32(src) + sum32(dst);
	uint16_t c;

	memcpy(f, t->f, FRAME_LEN);
	memcpy(f + OFF_SRC, &src, 4);
	memcpy(f + OFF_DST, &dst, 4);
	c = (uint16_t)~lb_csum_fold(t->ip_sum + a);
	memcpy(f + OFF_IP_CSUM, &c, 2);
	memcpy(f + OFF_TCP, &sport, 2);
	memcpy(f + OFF_TCP + 2, &dport, 2);
	memcpy(f + OFF_SEQ, &seq, 4);
	c = (uint16_t)~lb_csum_fold(t->tcp_sum + a + sport + dport +
				    sum32(seq));
	memcpy(f + OFF_TCP_CSUM, &c, 2);
}

/*
 * frame_write() with an acknowledgement number, for the handshake: the
 * worker moves a flow on only when the SYN-ACK acknowledges the SYN and
 * the ACK the SYN-ACK. Not on the timed path: the checksum is summed
 * afresh.
 */
static void
frame_write_ack(uint8_t *f, const struct tmpl *t, uint32_t src, uint32_t dst,
		uint16_t sport, uint16_t dport, uint32_t seq, uint32_t ack)
{
	uint8_t ph[12] = {0};
	uint16_t c = 0;

	frame_write(f, t, src, dst, sport, dport, seq);
	memcpy(f + OFF_SEQ + 4, &ack, 4);
	memcpy(f + OFF_TCP_CSUM, &c, 2);
	memcpy(ph, f + OFF_SRC, 8);
	ph[9] = LB_IPPROTO_TCP;
	ph[11] = 20;
	c = (uint16_t)~lb_csum_fold(lb_csum_partial(
		f + OFF_TCP, 20, lb_csum_partial(ph, sizeof(ph), 0)));
	memcpy(f + OFF_TCP_CSUM, &c, 2);
}

struct tuple {
	uint32_t src, dst, seq; /* seq in host order */
	uint16_t sport, dport;
};

static inline void
frame_read(const uint8_t *f, struct tuple *t)
{
	memcpy(&t->src, f + OFF_SRC, 4);
	memcpy(&t->dst, f + OFF_DST, 4);
	memcpy(&t->sport, f + OFF_TCP, 2);
	memcpy(&t->dport, f + OFF_TCP + 2, 2);
	memcpy(&t->seq, f + OFF_SEQ, 4);
	t->seq = ntohl(t->seq);
}

static int
frame_csums_ok(const uint8_t *f)
{
	uint8_t ph[12];
	uint32_t s;

	if (lb_csum_fold(lb_csum_partial(f + OFF_IP, 20, 0)) != 0xffff)
		return 0;
	memcpy(ph, f + OFF_SRC, 8);
	ph[8] = 0;
	ph[9] = LB_IPPROTO_TCP;
	ph[10] = 0;
	ph[11] = 20;
	s = lb_csum_partial(ph, sizeof(ph), 0);
	s = lb_csum_partial(f + OFF_TCP, 20, s);
	return lb_csum_fold(s) == 0xffff;
}

static inline uint8_t *
mbuf_frame(struct rte_mbuf *m, uint16_t port)
{
	m->data_off = RTE_PKTMBUF_HEADROOM;
	m->data_len = FRAME_LEN;
	m->pkt_len = FRAME_LEN;
	m->port = port;
	return rte_pktmbuf_mtod(m, uint8_t *);
}

/* ---- l7 frames ---------------------------------------------------------- */

static void
l7_tmpl_init(struct l7_tmpl *t, const uint8_t *dmac, const uint8_t *smac,
	     uint8_t flags, const char *payload, uint16_t plen)
{
	uint8_t *f = t->f, ph[12 + 20];
	uint16_t tl = (uint16_t)(20 + plen);

	memset(t, 0, sizeof(*t));
	t->len = (uint16_t)(OFF_TCP + tl);
	memcpy(f, dmac, 6);
	memcpy(f + 6, smac, 6);
	f[12] = 0x08;
	f[OFF_IP] = 0x45;
	f[OFF_IP + 2] = (uint8_t)((20 + tl) >> 8);
	f[OFF_IP + 3] = (uint8_t)(20 + tl);
	f[OFF_IP + 6] = 0x40;
	f[OFF_IP + 8] = 64;
	f[OFF_IP + 9] = LB_IPPROTO_TCP;
	f[OFF_TCP + 12] = 5 << 4;
	f[OFF_TCP + 13] = flags;
	f[OFF_TCP + 14] = 0xff;
	f[OFF_TCP + 15] = 0xff;
	memcpy(f + OFF_TCP + 20, payload, plen);
	t->ip_sum = lb_csum_partial(f + OFF_IP, 20, 0);
	memset(ph, 0, sizeof(ph));
	ph[9] = LB_IPPROTO_TCP;
	ph[10] = (uint8_t)(tl >> 8);
	ph[11] = (uint8_t)tl;
	memcpy(ph + 12, f + OFF_TCP, 20);
	/* The payload follows 32 bytes of pseudo-header and header: an even
	 * offset, so its words line up in one running sum. */
	t->tcp_sum = lb_csum_partial(f + OFF_TCP + 20, plen,
				     lb_csum_partial(ph, sizeof(ph), 0));
}

/* Fills @p f from @p t; every argument in network order. */
static inline void
l7_frame_write(uint8_t *f, const struct l7_tmpl *t, uint32_t src, uint32_t dst,
	       uint16_t sport, uint16_t dport, uint32_t seq, uint32_t ack)
{
	uint32_t a = sum32(src) + sum32(dst);
	uint16_t c;

	memcpy(f, t->f, t->len);
	memcpy(f + OFF_SRC, &src, 4);
	memcpy(f + OFF_DST, &dst, 4);
	c = (uint16_t)~lb_csum_fold(t->ip_sum + a);
	memcpy(f + OFF_IP_CSUM, &c, 2);
	memcpy(f + OFF_TCP, &sport, 2);
	memcpy(f + OFF_TCP + 2, &dport, 2);
	memcpy(f + OFF_SEQ, &seq, 4);
	memcpy(f + OFF_SEQ + 4, &ack, 4);
	c = (uint16_t)~lb_csum_fold(t->tcp_sum + a + sport + dport +
				    sum32(seq) + sum32(ack));
	memcpy(f + OFF_TCP_CSUM, &c, 2);
}

static int
l7_csums_ok(const uint8_t *f, uint32_t len)
{
	uint32_t tl = len - OFF_TCP, s;
	uint8_t ph[12];

	if (len < OFF_TCP + 20 ||
	    lb_csum_fold(lb_csum_partial(f + OFF_IP, 20, 0)) != 0xffff)
		return 0;
	memcpy(ph, f + OFF_SRC, 8);
	ph[8] = 0;
	ph[9] = LB_IPPROTO_TCP;
	ph[10] = (uint8_t)(tl >> 8);
	ph[11] = (uint8_t)tl;
	s = lb_csum_partial(ph, sizeof(ph), 0);
	s = lb_csum_partial(f + OFF_TCP, tl, s);
	return lb_csum_fold(s) == 0xffff;
}

static inline uint8_t *
mbuf_frame_len(struct rte_mbuf *m, uint16_t port, uint16_t len)
{
	m->data_off = RTE_PKTMBUF_HEADROOM;
	m->data_len = len;
	m->pkt_len = len;
	m->port = port;
	return rte_pktmbuf_mtod(m, uint8_t *);
}

static inline uint32_t
est_client_ip(uint32_t i)
{
	return htonl(NET_EST | (i & 0xffff));
}

static inline uint16_t
est_client_port(uint32_t i)
{
	return htons((uint16_t)(10000 + (i >> 16)));
}

/* The flow of client @p ip, @p port (network order), or UINT32_MAX. */
static inline uint32_t
est_client_flow(uint32_t ip, uint16_t port)
{
	uint32_t a = ntohl(ip), p = ntohs(port);

	if ((a & 0xffff0000u) != NET_EST || p < 10000)
		return UINT32_MAX;
	return (a & 0xffff) | (p - 10000) << 16;
}

/* ---- generator ---------------------------------------------------------- */

static void
gen_init(struct gen *g, enum test t, uint32_t nb_flows)
{
	memset(g, 0, sizeof(*g));
	g->test = t;
	g->nb_flows = nb_flows;
	g->step = nb_flows > 0 ? STRIDE % nb_flows : 0;
	g->rcur = nb_flows / 2;
}

static inline uint32_t
gen_next(const struct gen *g, uint32_t *cur)
{
	uint32_t i = *cur;

	*cur += g->step;
	if (*cur >= g->nb_flows)
		*cur -= g->nb_flows;
	return i;
}

/*
 * l7: a request of the next flow, then the response of that same flow, so
 * that each stream reaches the worker in order, as TCP delivers it.
 */
static inline void
l7_fill(struct bench *b, struct gen *g, struct rte_mbuf *m)
{
	struct l7_flow *fl;
	const struct l7_tmpl *t;
	uint32_t i;

	if ((g->odd ^= 1) != 0) {
		i = gen_next(g, &g->cur);
		g->last = i;
		fl = &b->l7f[g->svc][i];
		t = &b->t7_req;
		l7_frame_write(mbuf_frame_len(m, b->port, t->len), t,
			       est_client_ip(i), b->l7_vip[g->svc],
			       est_client_port(i), b->vport, htonl(fl->cseq),
			       htonl(fl->bseq));
		fl->cseq += sizeof(l7_req) - 1;
		return;
	}
	fl = &b->l7f[g->svc][g->last];
	t = &b->t7_resp[fl->r.be];
	l7_frame_write(mbuf_frame_len(m, b->port, t->len), t,
		       b->be_ip[fl->r.be], fl->r.snat_ip, b->be_port,
		       fl->r.snat_port, htonl(fl->bseq), htonl(fl->cseq));
	fl->bseq += sizeof(l7_resp) - 1;
	g->resps++;
}

static inline void
gen_fill(struct bench *b, struct gen *g, struct rte_mbuf *m)
{
	uint8_t *f;
	uint32_t i;

	g->made++;
	if (g->test == T_L7) {
		l7_fill(b, g, m);
		return;
	}
	f = mbuf_frame(m, b->port);
	if (g->test == T_NEW) {
		uint64_t c = b->new_ctr++;

		frame_write(f, &b->t_syn, htonl(NET_NEW | (c & 0xffff)), b->vip,
			    htons((uint16_t)(1024 + ((c >> 16) & 0x7fff))),
			    b->vport, htonl((uint32_t)c & ~REPLY_BIT));
		return;
	}
	if (g->test == T_MIX && (g->odd ^= 1) == 0) {
		const struct flow_rec *r;

		i = gen_next(g, &g->rcur);
		r = &b->rec[i];
		frame_write(f, &b->t_reply[r->be], b->be_ip[r->be], r->snat_ip,
			    b->be_port, r->snat_port, htonl(i | REPLY_BIT));
		return;
	}
	i = gen_next(g, &g->cur);
	frame_write(f, &b->t_ack, est_client_ip(i), b->vip, est_client_port(i),
		    b->vport, htonl(i));
}

/*
 * Checks one frame the worker sent for test @p t.
 * @return NULL, or what is wrong with it.
 */
static const char *
check_out(const struct bench *b, const uint8_t *f, enum test t)
{
	struct tuple x;
	const struct flow_rec *r;
	uint32_t be, i;

	if (f[12] != 0x08 || f[13] != 0x00)
		return "not IPv4";
	if (!frame_csums_ok(f))
		return "IP or TCP checksum wrong";
	if (memcmp(f + 6, b->port_mac, 6) != 0)
		return "source MAC is not the port's";
	frame_read(f, &x);
	if (t == T_MIX && (x.seq & REPLY_BIT)) {
		i = x.seq & ~REPLY_BIT;
		if (i >= b->nb_rec)
			return "reply of an unknown flow";
		if (x.src != b->vip || x.sport != b->vport ||
		    x.dst != est_client_ip(i) || x.dport != est_client_port(i))
			return "reply not rewritten to VIP -> client";
		if (memcmp(f, b->gw_mac, 6) != 0)
			return "reply not sent to the clients' router";
		return NULL;
	}
	be = ntohl(x.dst) - IP_BE;
	if (be >= NB_BES || x.dport != b->be_port)
		return "client packet not sent to a backend";
	if (memcmp(f, b->be_mac[be], 6) != 0)
		return "client packet not sent to its backend's MAC";
	if (ntohl(x.src) - IP_SNAT >= NB_SNATS)
		return "client packet not from a SNAT address";
	if (t == T_NEW)
		return NULL;
	if (x.seq >= b->nb_rec)
		return "client packet of an unknown flow";
	r = &b->rec[x.seq];
	if (x.src != r->snat_ip || x.sport != r->snat_port || be != r->be)
		return "client packet not rewritten to its flow's SNAT -> "
		       "backend";
	return NULL;
}

/*
 * Checks one frame the worker sent in an l7 round of service @p svc.
 * @return NULL, or what is wrong with it.
 */
static const char *
l7_check_out(const struct bench *b, const uint8_t *f, uint32_t len,
	     uint32_t svc)
{
	const struct l7_tmpl *t;
	struct tuple x;
	uint32_t be, i, sn;

	if (f[12] != 0x08 || f[13] != 0x00)
		return "not IPv4";
	if (!l7_csums_ok(f, len))
		return "IP or TCP checksum wrong";
	if (memcmp(f + 6, b->port_mac, 6) != 0)
		return "source MAC is not the port's";
	frame_read(f, &x);
	if (x.src == b->l7_vip[svc]) {
		i = est_client_flow(x.dst, x.dport);
		if (i >= b->nb_l7 || x.sport != b->vport)
			return "response not rewritten to VIP -> its client";
		if (memcmp(f, b->gw_mac, 6) != 0)
			return "response not sent to the clients' router";
		t = &b->t7_resp[b->l7f[svc][i].r.be];
	} else {
		be = ntohl(x.dst) - IP_BE;
		sn = ntohl(x.src) - IP_SNAT;
		if (be >= NB_BES || x.dport != b->be_port || sn >= NB_SNATS)
			return "request not sent SNAT -> backend";
		if (memcmp(f, b->be_mac[be], 6) != 0)
			return "request not sent to its backend's MAC";
		i = b->l7_by_snat[svc][sn << 16 | ntohs(x.sport)];
		if (i >= b->nb_l7 || b->l7f[svc][i].r.be != be)
			return "request not sent to its flow's backend";
		t = &b->t7_req;
	}
	if (len != t->len ||
	    memcmp(f + OFF_TCP + 20, t->f + OFF_TCP + 20, len - OFF_TCP - 20))
		return "payload changed";
	return NULL;
}

/* Final responses the worker followed on service slot @p svc. */
static uint64_t
l7_responses(const struct bench *b, uint32_t svc)
{
	uint64_t n = 0;

	for (uint32_t be = 0; be < NB_BES; be++)
		n += b->w->bst[svc][be].http_responses;
	return n;
}

/*
 * Takes what the worker reported, as lb-control would: through the ring
 * pointer of the worker's shared part (w->sh), whose cache line the worker
 * does not write. w->fb shares one with the records the worker is
 * gathering, and reading it on every loop of this lcore would take that
 * line away from the worker for each record it writes.
 */
static inline unsigned int
fb_drain(struct bench *b)
{
	struct lb_fb r[FB_BURST];

	return rte_ring_sc_dequeue_burst_elem(b->w->sh.fb, r, sizeof(r[0]),
					      FB_BURST, NULL);
}

/* ---- forwarder lcore ---------------------------------------------------- */

static void
snap_take(struct fwd *f)
{
	struct snap *s = &f->s[f->taken++];

	s->tsc = rte_rdtsc();
	s->flows = f->w != NULL ? f->w->st.flows_created : 0;
	s->m = f->m;
	if (f->w != NULL)
		s->m.tx = f->w->st.tx;
}

/*
 * Start of a loop iteration. Other processes share these vCPUs and the
 * host pauses them now and then: a gap since the last iteration longer
 * than stall_tsc is time this lcore did not run. It is left out of the
 * measured time, so that rates are those of the lcore while it runs.
 */
static inline uint64_t
lap_start(struct fwd *f, int *ph)
{
	uint64_t t = rte_rdtsc();

	if (unlikely(t - f->m.last > f->stall_tsc)) {
		f->m.lost += t - f->m.last;
	}
	f->m.last = t;
	__atomic_store_n(&f->iters, f->iters + 1, __ATOMIC_RELAXED);
	*ph = __atomic_load_n(&f->phase, __ATOMIC_ACQUIRE);
	if (*ph >= PH_MEASURE && f->taken == 0)
		snap_take(f);
	if (*ph >= PH_DRAIN && f->taken == 1)
		snap_take(f);
	return f->m.last;
}

/* End of a poll, started at @p t0, that took in @p n packets. */
static inline void
lap_end(struct fwd *f, uint64_t t0, unsigned int n)
{
	uint64_t t = rte_rdtsc(), d = t - t0;

	f->m.last = t;
	if (unlikely(d > f->stall_tsc)) {
		f->m.lost += d;
		return;
	}
	f->m.busy += d;
	f->m.polls++;
	f->m.pkts += n;
}

static int
fwd_bare(struct fwd *f)
{
	struct rte_mbuf *pkts[LB_BURST];
	int ph;

	f->m.last = rte_rdtsc();
	for (;;) {
		uint64_t t0 = lap_start(f, &ph);
		uint16_t n, sent;

		if (ph == PH_STOP)
			break;
		n = rte_eth_rx_burst(f->port, 0, pkts, LB_BURST);
		if (n == 0)
			continue;
		sent = rte_eth_tx_burst(f->port, 0, pkts, n);
		if (unlikely(sent < n)) {
			f->tx_refused += n - sent;
			rte_pktmbuf_free_bulk(&pkts[sent], n - sent);
		}
		f->m.tx += sent;
		lap_end(f, t0, n);
	}
	return 0;
}

static int
fwd_worker(struct fwd *f)
{
	int ph;

	f->m.last = rte_rdtsc();
	for (;;) {
		uint64_t t0 = lap_start(f, &ph);
		unsigned int n;

		if (ph == PH_STOP)
			break;
		n = lb_worker_poll(f->w);
		if (n == 0)
			continue;
		lap_end(f, t0, n);
	}
	return 0;
}

static int
fwd_main(void *arg)
{
	struct fwd *f = arg;
	int rc = f->w != NULL ? fwd_worker(f) : fwd_bare(f);

	while (f->taken < 2)
		snap_take(f);
	return rc;
}

/* ---- the worker under test ---------------------------------------------- */

static int
worker_new(struct bench *b)
{
	int rc;

	lb_worker_free(b->w);
	b->dp.w[0] = NULL;
	b->w = lb_worker_create(&b->dp, 0, b->fwd_lcore);
	if (b->w == NULL) {
		fprintf(stderr, "lb-dpbench: cannot create the worker\n");
		return -ENOMEM;
	}
	b->dp.w[0] = b->w;
	/* Static neighbours: the measured path never waits for ARP. */
	rc = lb_neigh_set_static(b->w->neigh, htonl(IP_GW), b->gw_mac);
	for (uint32_t i = 0; i < NB_BES && rc == 0; i++)
		rc = lb_neigh_set_static(b->w->neigh, b->be_ip[i],
					 b->be_mac[i]);
	if (rc != 0)
		fprintf(stderr, "lb-dpbench: static neighbour: %s\n",
			strerror(-rc));
	return rc;
}

/* Prints what the worker counted since @p st0 that a clean run has not. */
static unsigned int
worker_report(const struct lb_worker *w, const struct lb_worker_stats *st0,
	      enum test t, const char *when)
{
	const struct lb_worker_stats *st = &w->st;
	unsigned int problems = 0;

#define ODD(field, what)                                                       \
	do {                                                                   \
		if (st->field != st0->field) {                                 \
			printf("  %s: worker %s: %" PRIu64 "\n", when, what,   \
			       st->field - st0->field);                        \
			problems++;                                            \
		}                                                              \
	} while (0)
	for (unsigned int d = 0; d < LB_DROP_MAX; d++)
		if (st->drop[d] != st0->drop[d]) {
			printf("  %s: worker drop %s: %" PRIu64 "\n", when,
			       lb_drop_name((enum lb_drop)d),
			       st->drop[d] - st0->drop[d]);
			problems++;
		}
	for (unsigned int v = LB_PKT_IPV4 + 1; v < LB_PKT_VERDICT_MAX; v++)
		if (st->verdict[v] != st0->verdict[v]) {
			printf("  %s: worker parser verdict %s: %" PRIu64 "\n",
			       when,
			       lb_pkt_verdict_name((enum lb_pkt_verdict)v),
			       st->verdict[v] - st0->verdict[v]);
			problems++;
		}
	ODD(syn_retries, "SYN retries");
	ODD(deferred, "deferred SYNs");
	ODD(rst_sent, "RSTs sent");
	ODD(idle_probes, "expired idle flows probed");
	ODD(rst_no_flow, "RSTs for segments without a flow");
	ODD(redirect_out, "redirected packets");
	ODD(arp_requests, "ARP requests");
	ODD(icmp_translated, "ICMP translated");
	if (t != T_NEW)
		ODD(flows_created, "flows created (a lookup missed)");
#undef ODD
	return problems;
}

/*
 * Hands @p n mbufs to the port, runs the worker on this lcore until it has
 * taken them all, and collects what it sent into @p out.
 */
static unsigned int
pump(struct bench *b, struct rte_mbuf **m, unsigned int n,
     struct rte_mbuf **out)
{
	unsigned int k = rte_ring_sp_enqueue_burst(b->rxr, (void **)m, n, NULL);

	if (k < n)
		rte_pktmbuf_free_bulk(&m[k], n - k);
	while (!rte_ring_empty(b->rxr))
		lb_worker_poll(b->w);
	return rte_ring_sc_dequeue_burst(b->txr, (void **)out, RING_SIZE, NULL);
}

/*
 * Turns the SYN the worker sent to a backend into that backend's SYN-ACK,
 * recording the SNAT address and port and the backend of the flow.
 * @return 1, or 0 if the SYN is not one of flows [base, base + k).
 */
static int
syn_to_synack(struct bench *b, struct rte_mbuf *m, uint32_t base,
	      unsigned int k)
{
	struct tuple x;
	struct flow_rec *r;
	uint32_t be;

	frame_read(rte_pktmbuf_mtod(m, uint8_t *), &x);
	be = ntohl(x.dst) - IP_BE;
	if (x.seq - base >= k || be >= NB_BES || x.dport != b->be_port)
		return 0;
	r = &b->rec[x.seq];
	r->snat_ip = x.src;
	r->snat_port = x.sport;
	r->be = (uint16_t)be;
	frame_write_ack(mbuf_frame(m, b->port), &b->t_synack[be], x.dst, x.src,
			x.dport, x.sport, htonl(x.seq | REPLY_BIT),
			htonl(x.seq + 1));
	return 1;
}

/* Turns the SYN-ACK the worker sent to a client into the client's ACK. */
static int
synack_to_ack(struct bench *b, struct rte_mbuf *m, uint32_t base,
	      unsigned int k)
{
	struct tuple x;
	uint32_t i;

	frame_read(rte_pktmbuf_mtod(m, uint8_t *), &x);
	i = x.seq & ~REPLY_BIT;
	if (i - base >= k || x.src != b->vip || x.sport != b->vport ||
	    x.dst != est_client_ip(i) || x.dport != est_client_port(i))
		return 0;
	frame_write_ack(mbuf_frame(m, b->port), &b->t_ack, x.dst, x.src,
			x.dport, x.sport, htonl(i + 1),
			htonl((i | REPLY_BIT) + 1));
	return 1;
}

/*
 * Opens @p nb flows through a fresh worker, each with a SYN, the
 * backend's SYN-ACK and the client's ACK, and records the SNAT address,
 * port and backend the worker chose for each.
 */
static int
flows_open(struct bench *b, uint32_t nb)
{
	static struct rte_mbuf *m[RING_SIZE], *o[RING_SIZE];
	struct lb_worker_stats st0;
	struct lb_flow_stats fs;
	uint64_t t0 = rte_rdtsc();
	uint32_t est = 0, checked = 0;
	int rc;

	rc = worker_new(b);
	if (rc != 0)
		return rc;
	st0 = b->w->st;
	b->nb_rec = 0;
	for (uint32_t base = 0; base < nb; base += SETUP_BATCH) {
		unsigned int k = RTE_MIN(SETUP_BATCH, nb - base), n;
		int ok;

		if (rte_pktmbuf_alloc_bulk(b->pool, m, k) != 0)
			return -ENOMEM;
		for (unsigned int i = 0; i < k; i++)
			frame_write(mbuf_frame(m[i], b->port), &b->t_syn,
				    est_client_ip(base + i), b->vip,
				    est_client_port(base + i), b->vport,
				    htonl(base + i));
		/* The SYNs, rewritten toward backends, become their
		 * SYN-ACKs. */
		n = pump(b, m, k, o);
		ok = n == k;
		for (unsigned int i = 0; i < n && ok; i++)
			ok = syn_to_synack(b, o[i], base, k);
		if (!ok) {
			rte_pktmbuf_free_bulk(o, n);
			goto lost;
		}
		/* The SYN-ACKs, rewritten toward clients, become ACKs. */
		n = pump(b, o, k, m);
		ok = n == k;
		for (unsigned int i = 0; i < n && ok; i++)
			ok = synack_to_ack(b, m[i], base, k);
		if (!ok) {
			rte_pktmbuf_free_bulk(m, n);
			goto lost;
		}
		n = pump(b, m, k, o);
		rte_pktmbuf_free_bulk(o, n);
		if (n != k)
			goto lost;
		b->nb_rec = base + k;
	}
	/* Every flow in the table, and a sample of them ESTABLISHED. */
	lb_flow_stats_get(b->w->ft, &fs);
	for (uint32_t i = 0; i < nb; i += RTE_MAX(1u, nb / 1000)) {
		struct lb_flow_key k;
		enum lb_flow_dir dir;
		const struct lb_flow *f;

		lb_flow_key_set(&k, est_client_ip(i), b->vip,
				est_client_port(i), b->vport, LB_IPPROTO_TCP);
		f = lb_flow_get(b->w->ft, lb_flow_lookup(b->w->ft, &k, &dir));
		checked++;
		est += f != NULL && f->state == LB_FLOW_ESTABLISHED;
	}
	if (fs.flows != nb || est != checked) {
		fprintf(stderr,
			"lb-dpbench: %" PRIu64 " flows in the table for %u "
			"opened, %u of %u sampled established\n",
			fs.flows, nb, est, checked);
		return -EPROTO;
	}
	printf("opened %u flows through the worker (SYN, SYN-ACK, ACK) in "
	       "%.2f s\n",
	       nb, (double)(rte_rdtsc() - t0) / (double)b->hz);
	return 0;
lost:
	fprintf(stderr,
		"lb-dpbench: opening flow %u: the worker did not "
		"answer every packet\n",
		b->nb_rec);
	worker_report(b->w, &st0, T_EST, "setup");
	return -EPROTO;
}

/*
 * l7: turns the SYN the worker sent to a backend into that backend's
 * SYN-ACK (initial sequence number i | REPLY_BIT), recording the flow.
 * The client's initial sequence number is the flow's index.
 */
static int
l7_synack(struct bench *b, struct rte_mbuf *m, uint32_t svc, uint32_t base,
	  unsigned int k)
{
	struct l7_flow *fl;
	struct tuple x;
	uint32_t be, sn, i;

	frame_read(rte_pktmbuf_mtod(m, uint8_t *), &x);
	be = ntohl(x.dst) - IP_BE;
	sn = ntohl(x.src) - IP_SNAT;
	i = x.seq;
	if (i - base >= k || be >= NB_BES || sn >= NB_SNATS ||
	    x.dport != b->be_port)
		return 0;
	fl = &b->l7f[svc][i];
	fl->r.snat_ip = x.src;
	fl->r.snat_port = x.sport;
	fl->r.be = (uint16_t)be;
	fl->cseq = i + 1;
	fl->bseq = (i | REPLY_BIT) + 1;
	b->l7_by_snat[svc][sn << 16 | ntohs(x.sport)] = i;
	l7_frame_write(mbuf_frame_len(m, b->port, b->t7_synack[be].len),
		       &b->t7_synack[be], x.dst, x.src, x.dport, x.sport,
		       htonl(i | REPLY_BIT), htonl(i + 1));
	return 1;
}

/* l7: turns the SYN-ACK the worker sent to a client into its ACK. */
static int
l7_ack(struct bench *b, struct rte_mbuf *m, uint32_t svc, uint32_t base,
       unsigned int k)
{
	struct tuple x;
	uint32_t i;

	frame_read(rte_pktmbuf_mtod(m, uint8_t *), &x);
	i = x.seq & ~REPLY_BIT;
	if (i - base >= k || x.src != b->l7_vip[svc] || x.sport != b->vport ||
	    x.dst != est_client_ip(i) || x.dport != est_client_port(i))
		return 0;
	l7_frame_write(mbuf_frame_len(m, b->port, b->t7_ack.len), &b->t7_ack,
		       x.dst, x.src, x.dport, x.sport, htonl(i + 1),
		       htonl((i | REPLY_BIT) + 1));
	return 1;
}

/*
 * l7: a fresh worker that follows HTTP (its pool holds @p nb flows) on the
 * table of the two l7 services, and @p nb flows opened on each through it
 * with real initial sequence numbers: SYN, the backend's SYN-ACK, the
 * client's ACK. Every http flow must have its pool entry.
 */
static int
l7_open(struct bench *b, uint32_t nb)
{
	static struct rte_mbuf *m[RING_SIZE], *o[RING_SIZE];
	struct lb_worker_stats st0;
	struct lb_flow_stats fs;
	struct lb_l7_stats ls;
	uint64_t t0 = rte_rdtsc();
	uint32_t svc = 0, base = 0;
	int rc;

	/* The running worker's L7 state was sized for the previous count:
	 * it goes before the count changes. */
	lb_worker_free(b->w);
	b->w = NULL;
	b->dp.w[0] = NULL;
	b->dp.conf = b->conf_l7;
	b->dp.hdb = b->hdb;
	b->dp.l7_flows = nb;
	rc = worker_new(b);
	if (rc != 0)
		return rc;
	st0 = b->w->st;
	b->nb_l7 = 0;
	for (svc = 0; svc < 2; svc++) {
		memset(b->l7_by_snat[svc], 0xff,
		       sizeof(uint32_t) * NB_SNATS * 65536);
		for (base = 0; base < nb; base += SETUP_BATCH) {
			unsigned int k = RTE_MIN(SETUP_BATCH, nb - base), n;
			int ok;

			if (rte_pktmbuf_alloc_bulk(b->pool, m, k) != 0)
				return -ENOMEM;
			for (unsigned int i = 0; i < k; i++)
				l7_frame_write(mbuf_frame_len(m[i], b->port,
							      b->t7_syn.len),
					       &b->t7_syn,
					       est_client_ip(base + i),
					       b->l7_vip[svc],
					       est_client_port(base + i),
					       b->vport, htonl(base + i), 0);
			n = pump(b, m, k, o);
			ok = n == k;
			for (unsigned int i = 0; i < n && ok; i++)
				ok = l7_synack(b, o[i], svc, base, k);
			if (!ok) {
				rte_pktmbuf_free_bulk(o, n);
				goto lost;
			}
			n = pump(b, o, k, m);
			ok = n == k;
			for (unsigned int i = 0; i < n && ok; i++)
				ok = l7_ack(b, m[i], svc, base, k);
			if (!ok) {
				rte_pktmbuf_free_bulk(m, n);
				goto lost;
			}
			n = pump(b, m, k, o);
			rte_pktmbuf_free_bulk(o, n);
			if (n != k)
				goto lost;
		}
	}
	b->nb_l7 = nb;
	while (fb_drain(b) > 0)
		;
	lb_flow_stats_get(b->w->ft, &fs);
	lb_l7_stats_get(b->w->l7, &ls);
	if (fs.flows != 2ull * nb || ls.flows != nb || ls.pool_full != 0) {
		fprintf(stderr,
			"lb-dpbench: %" PRIu64 " flows in the table for %u "
			"opened, %" PRIu64 " followed of %u\n",
			fs.flows, 2 * nb, ls.flows, nb);
		return -EPROTO;
	}
	printf("opened %u flows on each service through the worker (SYN, "
	       "SYN-ACK, ACK) in %.2f s\n",
	       nb, (double)(rte_rdtsc() - t0) / (double)b->hz);
	return 0;
lost:
	fprintf(stderr,
		"lb-dpbench: opening l7 flow %u of service %u: the worker did "
		"not answer every packet\n",
		base, svc);
	worker_report(b->w, &st0, T_L7, "setup");
	return -EPROTO;
}

/* ---- rounds ------------------------------------------------------------- */

/*
 * One round: the forwarder lcore runs the worker (@p worker) or the bare
 * forwarder while this lcore generates. Warm-up, then --seconds measured,
 * then every mbuf is collected back.
 */
/*
 * adm: admissions and atomic operations on shared memory, taken away at
 * the start of the measured phase (@p start) and added at its end, so
 * that the first interval of a fresh worker's buckets (which borrow one
 * token at a time until they have a demand history) is not counted. The
 * worker writes these counters meanwhile: a snapshot, as lb-control's.
 */
static void
adm_count(const struct lb_worker *w, uint64_t *pass, uint64_t *atomics,
	  int start)
{
	const volatile struct lb_admit_stats *a = &w->st.admit;
	uint64_t p = 0;

	for (unsigned int k = 0; k < LB_ADMIT_KEY_MAX; k++)
		p += a->n[k][LB_ADMIT_PASS] + a->n[k][LB_ADMIT_PASS_FULL];
	*pass = start ? -p : *pass + p;
	*atomics = start ? -a->shm_atomics : *atomics + a->shm_atomics;
}

static int
run_round(struct bench *b, struct gen *g, int worker, struct res *r)
{
	static struct rte_mbuf *m[IN_FLIGHT];
	struct fwd f = {.phase = PH_WARM,
			.port = b->port,
			.stall_tsc = b->hz / 1000000 * STALL_US};
	struct lb_worker_stats st0 = {0};
	uint64_t in = 0, out = 0, bad = 0, left = 0, gen_busy = 0, gen_pkts;
	int l7 = worker && g->test == T_L7;
	uint64_t resps0 = g->resps, followed0 = 0;
	uint64_t t, t_measure, t_drain, it_empty = UINT64_MAX;
	uint64_t cap = worker && g->test == T_NEW ? NEW_CAP : UINT64_MAX;
	const char *why = NULL;
	int phase = PH_WARM;
	unsigned int n;
	double dt;

	memset(r, 0, sizeof(*r));
	if (worker) {
		f.w = b->w;
		st0 = b->w->st;
	}
	if (l7) {
		while (fb_drain(b) > 0)
			;
		followed0 = l7_responses(b, g->svc);
	}
	g->made = 0;
	if (rte_pktmbuf_alloc_bulk(b->pool, m, IN_FLIGHT) != 0)
		return -ENOMEM;
	for (unsigned int i = 0; i < IN_FLIGHT; i++)
		gen_fill(b, g, m[i]);
	in = rte_ring_sp_enqueue_burst(b->rxr, (void **)m, IN_FLIGHT, NULL);
	if (in < IN_FLIGHT)
		rte_pktmbuf_free_bulk(&m[in], IN_FLIGHT - (unsigned int)in);
	if (rte_eal_remote_launch(fwd_main, &f, b->fwd_lcore) != 0)
		return -EBUSY;
	t = rte_rdtsc();
	t_measure = t + (uint64_t)(b->seconds * 0.1 * (double)b->hz);
	t_drain = t_measure + (uint64_t)(b->seconds * (double)b->hz);
	gen_pkts = 0;
	for (;;) {
		uint64_t t0 = rte_rdtsc();

		n = rte_ring_sc_dequeue_burst(b->txr, (void **)m, LB_BURST,
					      NULL);
		if (n > 0 && worker) {
			for (unsigned int i = 0; i < n; i++) {
				const char *e;

				if ((out + i) % CHECK_EVERY != 0)
					continue;
				if (g->test == T_L7)
					e = l7_check_out(
						b,
						rte_pktmbuf_mtod(m[i],
								 uint8_t *),
						rte_pktmbuf_data_len(m[i]),
						g->svc);
				else
					e = check_out(b,
						      rte_pktmbuf_mtod(
							      m[i], uint8_t *),
						      g->test);
				if (e != NULL) {
					bad++;
					why = why != NULL ? why : e;
				}
			}
		}
		out += n;
		if (l7)
			r->fb += fb_drain(b);
		if (n > 0 && phase != PH_DRAIN) {
			unsigned int k;

			for (unsigned int i = 0; i < n; i++)
				gen_fill(b, g, m[i]);
			k = rte_ring_sp_enqueue_burst(b->rxr, (void **)m, n,
						      NULL);
			if (k < n)
				rte_pktmbuf_free_bulk(&m[k], n - k);
			in += k;
		} else if (n > 0) {
			rte_pktmbuf_free_bulk(m, n);
		}
		t = rte_rdtsc();
		if (n > 0 && phase == PH_MEASURE) {
			gen_busy += t - t0;
			gen_pkts += n;
		}
		if (phase == PH_WARM && t >= t_measure) {
			phase = PH_MEASURE;
			__atomic_store_n(&f.phase, phase, __ATOMIC_RELEASE);
			if (worker)
				adm_count(b->w, &r->adm_pass, &r->adm_atomics,
					  1);
		} else if (phase == PH_MEASURE &&
			   (t >= t_drain || g->made >= cap)) {
			phase = PH_DRAIN;
			__atomic_store_n(&f.phase, phase, __ATOMIC_RELEASE);
			t_drain = t;
		} else if (phase == PH_DRAIN) {
			uint64_t it =
				__atomic_load_n(&f.iters, __ATOMIC_RELAXED);

			/* Done when every mbuf is back, or when the port's
			 * rx ring is empty and the forwarder has finished
			 * two more polls since (each poll ends with a
			 * flush): whatever is missing then was dropped.
			 * Progress is counted in polls, not time, because
			 * the host pauses these vCPUs now and then. */
			if (out >= in)
				break;
			if (n > 0 || !rte_ring_empty(b->rxr))
				it_empty = UINT64_MAX;
			else if (it_empty == UINT64_MAX)
				it_empty = it;
			else if (it >= it_empty + 2)
				break;
			if (t - t_drain > b->hz * DRAIN_MAX_S)
				break;
		}
	}
	__atomic_store_n(&f.phase, PH_STOP, __ATOMIC_RELEASE);
	rte_eal_wait_lcore(b->fwd_lcore);
	while ((n = rte_ring_sc_dequeue_burst(b->txr, (void **)m, IN_FLIGHT,
					      NULL)) > 0) {
		out += n;
		rte_pktmbuf_free_bulk(m, n);
	}
	while ((n = rte_ring_sc_dequeue_burst(b->rxr, (void **)m, IN_FLIGHT,
					      NULL)) > 0) {
		left += n;
		rte_pktmbuf_free_bulk(m, n);
	}

	{
		const struct meter *m0 = &f.s[0].m, *m1 = &f.s[1].m;
		uint64_t lost = m1->lost - m0->lost;
		uint64_t span = f.s[1].tsc - f.s[0].tsc;
		double pk = (double)(m1->pkts - m0->pkts);

		/* Rates over the time the forwarder lcore ran. */
		dt = span > lost ? (double)(span - lost) / (double)b->hz : 0;
		r->lost_ms = (double)lost * 1e3 / (double)b->hz;
		if (dt > 0 && pk > 0) {
			r->mpps = (double)(m1->tx - m0->tx) / dt / 1e6;
			r->ns = (double)(m1->busy - m0->busy) * 1e9 /
				(double)b->hz / pk;
			r->busy = (double)(m1->busy - m0->busy) /
				  (double)(span - lost);
			r->fps = (double)(f.s[1].flows - f.s[0].flows) / dt;
		}
	}
	if (worker)
		adm_count(b->w, &r->adm_pass, &r->adm_atomics, 0);
	if (gen_pkts > 0)
		r->gen_ns = (double)gen_busy * 1e9 / (double)b->hz /
			    (double)gen_pkts;
	/* Correctness: every packet came back, nothing dropped. */
	if (out != in || left != 0 || f.tx_refused != 0) {
		printf("  %s round: %" PRIu64 " packets in, %" PRIu64
		       " out, %" PRIu64 " left in the rx ring, %" PRIu64
		       " refused by the port\n",
		       worker ? "worker" : "bare", in, out, left, f.tx_refused);
		r->problems++;
	}
	if (bad > 0) {
		printf("  worker round: %" PRIu64 " of %" PRIu64
		       " checked outputs wrong, first: %s\n",
		       bad, (out + CHECK_EVERY - 1) / CHECK_EVERY, why);
		r->problems++;
	}
	if (worker)
		r->problems += worker_report(b->w, &st0, g->test, "round");
	if (l7) {
		uint64_t want = g->svc == L7_SVC_HTTP ? g->resps - resps0 : 0;
		uint64_t got = l7_responses(b, g->svc) - followed0;

		while ((n = fb_drain(b)) > 0)
			r->fb += n;
		r->fb_dropped = b->w->st.fb_dropped - st0.fb_dropped;
		/* Following kept up with every exchange: one response
		 * followed, an HTTP and an SPL record, for each. */
		if (got != want || r->fb + r->fb_dropped != 2 * want ||
		    b->w->st.l7_stopped != st0.l7_stopped) {
			printf("  %s round: %" PRIu64 " responses followed of "
			       "%" PRIu64 ", %" PRIu64 " feedback records, "
			       "%" PRIu64 " flows stopped\n",
			       g->svc == L7_SVC_HTTP ? "http" : "plain", got,
			       want, r->fb + r->fb_dropped,
			       b->w->st.l7_stopped - st0.l7_stopped);
			r->problems++;
		}
	}
	return 0;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
median(const double *v, unsigned int n)
{
	double s[MAX_ROUNDS];

	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static int
run_test(struct bench *b, enum test t, uint32_t nb_flows)
{
	struct res rb[MAX_ROUNDS], rw[MAX_ROUNDS], warm;
	double v[6][MAX_ROUNDS];
	struct row *row = &b->rows[b->nb_rows++];
	struct gen g;
	int rc = 0;

	gen_init(&g, t, nb_flows);
	if (t == T_NEW)
		printf("\n== %s: %s (a fresh worker per round, at most %u "
		       "SYNs per round)\n",
		       test_names[t], test_what[t], NEW_CAP);
	else
		printf("\n== %s %u: %s, %u flows\n", test_names[t], nb_flows,
		       test_what[t], nb_flows);
	/* One pair of rounds unrecorded: caches, branch predictors, TLB. */
	if (t == T_NEW)
		rc = worker_new(b);
	if (rc == 0)
		rc = run_round(b, &g, 0, &warm);
	if (rc == 0)
		rc = run_round(b, &g, 1, &warm);
	printf("round |  bare Mpps  ns/pkt busy%% |    lb Mpps  ns/pkt busy%% "
	       "| lb/bare   own ns%s\n",
	       t == T_NEW ? " |  flows/s" : "");
	for (unsigned int r = 0; r < b->rounds && rc == 0; r++) {
		/* Alternate the order so neither side always runs first. */
		for (unsigned int k = 0; k < 2 && rc == 0; k++) {
			int worker = (k + r) % 2;

			if (worker && t == T_NEW)
				rc = worker_new(b);
			if (rc == 0)
				rc = run_round(b, &g, worker,
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
		if (t == T_NEW)
			printf(" | %8.0f", rw[r].fps);
		if (rb[r].lost_ms + rw[r].lost_ms >= 1)
			printf("  (not running: bare %.0f ms, lb %.0f ms)",
			       rb[r].lost_ms, rw[r].lost_ms);
		printf("\n");
		row->problems += rb[r].problems + rw[r].problems;
	}
	if (rc != 0) {
		fprintf(stderr, "lb-dpbench: %s: %s\n", test_names[t],
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
		row->flows = t == T_NEW ? 0 : nb_flows;
		row->bare_mpps = median(bm, b->rounds);
		row->lb_mpps = median(v[1], b->rounds);
		row->ratio = median(v[2], b->rounds);
		row->bare_ns = median(bn, b->rounds);
		row->lb_ns = median(wn, b->rounds);
		row->own_ns = median(v[3], b->rounds);
		row->fps = median(v[4], b->rounds);
		row->gen_ns = median(v[5], b->rounds);
		row->bare_busy = median(bb, b->rounds);
		row->lb_busy = median(wb, b->rounds);
	}
	printf("median| %10.2f %7.1f %6.1f | %10.2f %7.1f %6.1f | %7.2f "
	       "%8.1f",
	       row->bare_mpps, row->bare_ns, row->bare_busy, row->lb_mpps,
	       row->lb_ns, row->lb_busy, row->ratio, row->own_ns);
	if (t == T_NEW)
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
static int
run_l7(struct bench *b, uint32_t nb)
{
	struct res r4[MAX_ROUNDS], r7[MAX_ROUNDS], warm;
	double v[8][MAX_ROUNDS];
	struct l7_row *row = &b->l7_rows[b->nb_l7_rows++];
	struct gen g[2];
	int rc;

	memset(row, 0, sizeof(*row));
	row->flows = nb;
	printf("\n== %s %u: %s, %u flows on each service; %zu-byte request, "
	       "%zu-byte response (frames of %u and %u bytes)\n",
	       test_names[T_L7], nb, test_what[T_L7], nb, sizeof(l7_req) - 1,
	       sizeof(l7_resp) - 1, b->t7_req.len, b->t7_resp[0].len);
	for (uint32_t i = 0; i < 2; i++) {
		gen_init(&g[i], T_L7, nb);
		g[i].svc = i;
	}
	rc = run_round(b, &g[L7_SVC_PLAIN], 1, &warm);
	if (rc == 0)
		rc = run_round(b, &g[L7_SVC_HTTP], 1, &warm);
	printf("round |    L4 Mpps  ns/pkt busy%% Mreq/s |    L7 Mpps  "
	       "ns/pkt busy%% Mreq/s | L7/L4 +ns/exchange\n");
	for (unsigned int r = 0; r < b->rounds && rc == 0; r++) {
		for (unsigned int k = 0; k < 2 && rc == 0; k++) {
			int http = (k + r) % 2;

			rc = run_round(b, &g[http ? L7_SVC_HTTP : L7_SVC_PLAIN],
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
	row->l4_mpps = median(v[0], b->rounds);
	row->l7_mpps = median(v[1], b->rounds);
	row->ratio = median(v[2], b->rounds);
	row->extra_ns = median(v[3], b->rounds);
	row->l4_ns = median(v[4], b->rounds);
	row->l7_ns = median(v[5], b->rounds);
	row->l4_busy = median(v[6], b->rounds);
	row->l7_busy = median(v[7], b->rounds);
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
 * bucket) or per client (65536 clients, more than a worker's 4096 local
 * buckets).
 */
static int
run_adm(struct bench *b, enum lb_admit_key key)
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
	       test_names[T_ADM], row->key, test_what[T_ADM], row->key,
	       NEW_CAP);
	gen_init(&g, T_NEW, 0);
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
			rc = worker_new(b);
			if (rc == 0)
				rc = run_round(b, &g, 1, res);
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
		row->on_ns = median(on_ns, b->rounds);
	}
	row->off_fps = median(v[0], b->rounds);
	row->on_fps = median(v[1], b->rounds);
	row->ratio = median(v[2], b->rounds);
	row->extra_ns = median(v[3], b->rounds);
	row->off_ns = median(v[4], b->rounds);
	row->atomics = median(v[5], b->rounds);
	printf("median| %12.0f %7.1f | %12.0f %7.1f | %6.2f %7.1f | %.4f\n",
	       row->off_fps, row->off_ns, row->on_fps, row->on_ns, row->ratio,
	       row->extra_ns, row->atomics);
	printf("checks: %s\n", row->problems == 0
				       ? "every SYN admitted and forwarded, "
					 "no drop, sampled outputs correct"
				       : "FAILED (see above)");
	return 0;
}

/* ---- setup -------------------------------------------------------------- */

static int
sched_known(const char *name)
{
	return lb_sched_find(name) != NULL;
}

/*
 * The table of the forwarding tests (one service), or with @p l7 that of
 * the l7 test: two services identical but for `http`.
 */
static int
conf_build(int l7, struct lb_dpconf **out_conf)
{
	struct lb_conf *c = lb_conf_create(sched_known);
	struct lb_conf_svc_key key = {LB_CONF_PROTO_TCP, IP_VIP, VPORT};
	struct lb_conf_svc_key key2 = {LB_CONF_PROTO_TCP, IP_VIP_L4, VPORT};
	struct lb_conf_svc_opts o;
	struct lb_cmd_out out;
	char err[256];
	int rc = -ENOMEM;

	lb_cmd_out_init(&out);
	if (c == NULL)
		goto done;
	lb_conf_svc_opts_default(&o);
	/* No SYN of a round may time out: no backend answers in "new". */
	o.syn_timeout_ns = LB_CONF_SYN_TIMEOUT_MAX_NS;
	rc = lb_conf_addr_add(c, IP_LOCAL, 16, 0, &out);
	if (rc == 0)
		rc = lb_conf_route_add(c, NET_CLIENTS, 15, IP_GW, 0, &out);
	for (uint32_t i = 0; i < NB_SNATS && rc == 0; i++)
		rc = lb_conf_snat_add(c, IP_SNAT + i, 0, &out);
	if (l7) {
		key.vip = IP_VIP_L7;
		o.http = true;
		/* l7 2: every request decided by the governor (M 0: all
		 * admitted), the cost of request admission. */
		o.gov[LB_CONF_GOV_ON] = l7 == 2;
	}
	if (rc == 0)
		rc = lb_conf_svc_add(c, &key, &o, &out);
	for (uint32_t i = 0; i < NB_BES && rc == 0; i++)
		rc = lb_conf_be_add(c, &key, IP_BE + i, BE_PORT, 1, &out);
	o.http = false;
	o.gov[LB_CONF_GOV_ON] = 0;
	if (rc == 0 && l7)
		rc = lb_conf_svc_add(c, &key2, &o, &out);
	for (uint32_t i = 0; i < NB_BES && rc == 0 && l7; i++)
		rc = lb_conf_be_add(c, &key2, IP_BE + i, BE_PORT, 1, &out);
	if (rc != 0) {
		fprintf(stderr, "lb-dpbench: configuration: %s\n",
			lb_cmd_out_errmsg(&out));
		goto done;
	}
	*out_conf = rte_zmalloc("dpb_conf", sizeof(**out_conf), 0);
	if (*out_conf == NULL) {
		rc = -ENOMEM;
		goto done;
	}
	rc = lb_dpconf_build(*out_conf, c, err, sizeof(err));
	if (rc != 0)
		fprintf(stderr, "lb-dpbench: configuration: %s\n", err);
	/* run_round and the checks know the l7 services by slot. */
	if (rc == 0 && l7 &&
	    (lb_dpconf_svc_find(*out_conf, LB_IPPROTO_TCP, htonl(IP_VIP_L7),
				htons(VPORT)) != L7_SVC_HTTP ||
	     lb_dpconf_svc_find(*out_conf, LB_IPPROTO_TCP, htonl(IP_VIP_L4),
				htons(VPORT)) != L7_SVC_PLAIN)) {
		fprintf(stderr, "lb-dpbench: l7 services not in slots 0, 1\n");
		rc = -EINVAL;
	}
done:
	lb_cmd_out_free(&out);
	lb_conf_free(c);
	return rc;
}

static int
bench_setup(struct bench *b)
{
	int socket = (int)rte_socket_id();
	int port;

	b->hz = rte_get_tsc_hz();
	b->fwd_lcore = rte_get_next_lcore(rte_get_main_lcore(), 1, 0);
	if (b->fwd_lcore >= RTE_MAX_LCORE) {
		fprintf(stderr, "lb-dpbench: needs two lcores (-l 0-1)\n");
		return -EINVAL;
	}
	if (rte_eth_dev_count_avail() != 0) {
		fprintf(stderr, "lb-dpbench: expected no other DPDK port "
				"(use --no-pci, no --vdev)\n");
		return -EINVAL;
	}
	b->pool = rte_pktmbuf_pool_create("dpb_mbufs", NB_MBUFS, MBUF_CACHE, 0,
					  RTE_MBUF_DEFAULT_BUF_SIZE, socket);
	b->rxr = rte_ring_create("dpb_rx", RING_SIZE, socket,
				 RING_F_SP_ENQ | RING_F_SC_DEQ);
	b->txr = rte_ring_create("dpb_tx", RING_SIZE, socket,
				 RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (b->pool == NULL || b->rxr == NULL || b->txr == NULL) {
		fprintf(stderr, "lb-dpbench: mbufs or rings: %s\n",
			rte_strerror(rte_errno));
		return -ENOMEM;
	}
	port = rte_eth_from_rings("dpb0", &b->rxr, 1, &b->txr, 1,
				  (unsigned int)socket);
	if (port != 0) {
		fprintf(stderr, "lb-dpbench: ring port: got %d, need 0\n",
			port);
		return -ENODEV;
	}
	b->port = (uint16_t)port;
	if (conf_build(0, &b->conf_l4) != 0)
		return -EINVAL;
	b->dp.conf = b->conf_l4;
	b->admit_sh = lb_admit_shm_init(
		rte_zmalloc("dpb_admit",
			    lb_admit_shm_size(LB_ADMIT_SHM_SLOTS_DEFAULT),
			    RTE_CACHE_LINE_SIZE),
		LB_ADMIT_SHM_SLOTS_DEFAULT);
	if (b->admit_sh == NULL)
		return -ENOMEM;
	b->dp.pool = b->pool;
	b->dp.nb_ports = 1;
	b->dp.nb_workers = 1;
	b->dp.ns_per_tsc = 1e9 / (double)b->hz;
	b->dp.hash_seed = rte_rdtsc() * 0x9e3779b97f4a7c15ULL;
	b->dp.idle_us = 0;
	b->dp.flows = TABLE_FLOWS;
	if (lb_port_setup(b->port, 1, b->pool, RING_SIZE, RING_SIZE,
			  &b->dp.port[0]) != 0)
		return -EIO;

	memcpy(b->port_mac, b->dp.port[0].mac.addr_bytes, 6);
	memcpy(b->gw_mac, (const uint8_t[6]){2, 0, 0, 0, 0, 0xfe}, 6);
	b->vip = htonl(IP_VIP);
	b->vport = htons(VPORT);
	b->be_port = htons(BE_PORT);
	tmpl_init(&b->t_syn, b->port_mac, b->gw_mac, LB_TCP_SYN);
	tmpl_init(&b->t_ack, b->port_mac, b->gw_mac, LB_TCP_ACK);
	for (uint32_t i = 0; i < NB_BES; i++) {
		memcpy(b->be_mac[i],
		       (const uint8_t[6]){2, 0, 0, 0, 1, (uint8_t)(i + 1)}, 6);
		b->be_ip[i] = htonl(IP_BE + i);
		tmpl_init(&b->t_synack[i], b->port_mac, b->be_mac[i],
			  LB_TCP_SYN | LB_TCP_ACK);
		tmpl_init(&b->t_reply[i], b->port_mac, b->be_mac[i],
			  LB_TCP_ACK);
	}
	return 0;
}

/* The l7 test's table, header database, frames and flow records. */
static int
l7_setup(struct bench *b)
{
	uint32_t most = 0;
	struct lb_hdr_cfg hc;

	for (unsigned int i = 0; i < b->nb_l7_sizes; i++)
		most = RTE_MAX(most, b->l7_sizes[i]);
	if (conf_build(b->l7_gov ? 2 : 1, &b->conf_l7) != 0)
		return -EINVAL;
	/* As lb-dataplane does: the default header fields. */
	lb_hdr_cfg_default(&hc);
	b->hdb = lb_hdr_db_compile(&hc);
	for (uint32_t s = 0; s < 2; s++) {
		b->l7f[s] = calloc(most, sizeof(*b->l7f[s]));
		b->l7_by_snat[s] = malloc(sizeof(uint32_t) * NB_SNATS * 65536);
	}
	if (b->hdb == NULL || b->l7f[0] == NULL || b->l7f[1] == NULL ||
	    b->l7_by_snat[0] == NULL || b->l7_by_snat[1] == NULL) {
		fprintf(stderr, "lb-dpbench: l7 setup: %s\n", strerror(errno));
		return -ENOMEM;
	}
	b->l7_vip[L7_SVC_HTTP] = htonl(IP_VIP_L7);
	b->l7_vip[L7_SVC_PLAIN] = htonl(IP_VIP_L4);
	l7_tmpl_init(&b->t7_syn, b->port_mac, b->gw_mac, LB_TCP_SYN, "", 0);
	l7_tmpl_init(&b->t7_ack, b->port_mac, b->gw_mac, LB_TCP_ACK, "", 0);
	l7_tmpl_init(&b->t7_req, b->port_mac, b->gw_mac,
		     LB_TCP_PSH | LB_TCP_ACK, l7_req, sizeof(l7_req) - 1);
	for (uint32_t i = 0; i < NB_BES; i++) {
		l7_tmpl_init(&b->t7_synack[i], b->port_mac, b->be_mac[i],
			     LB_TCP_SYN | LB_TCP_ACK, "", 0);
		l7_tmpl_init(&b->t7_resp[i], b->port_mac, b->be_mac[i],
			     LB_TCP_PSH | LB_TCP_ACK, l7_resp,
			     sizeof(l7_resp) - 1);
	}
	return 0;
}

static void
bench_teardown(struct bench *b)
{
	lb_worker_free(b->w);
	b->w = NULL;
	if (b->dp.port[0].nb_queues > 0)
		lb_port_close(b->port);
	rte_ring_free(b->rxr);
	rte_ring_free(b->txr);
	rte_mempool_free(b->pool);
	rte_free(b->conf_l4);
	rte_free(b->conf_l7);
	rte_free(b->admit_sh);
	lb_hdr_db_free(b->hdb);
	for (uint32_t s = 0; s < 2; s++) {
		free(b->l7f[s]);
		free(b->l7_by_snat[s]);
	}
	free(b->rec);
}

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
		"  --tests LIST      est, mix, new, l7, adm (default "
		"est,mix,new)\n"
		"  --l7-governor     the l7 service admits each request "
		"(governor on)\n"
		"Without EAL options: -l 0-1 --no-pci, hugepages when %u MB "
		"are free, else --no-huge -m 1024.\n",
		MAX_ROUNDS, MAX_FLOWS, L7_MAX_FLOWS, HUGE_MB_NEEDED);
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
			if (strcmp(tok, test_names[t]) == 0)
				break;
		if (t == T_MAX) {
			fprintf(stderr,
				"lb-dpbench: --tests: unknown '%s' "
				"(est, mix, new, l7, adm)\n",
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
	/* l7 only when asked: the forwarding run stays as documented. */
	b->tests = (1u << T_L7) - 1;
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

		if (r->test != T_NEW)
			snprintf(flows, sizeof(flows), "%u", r->flows);
		else
			snprintf(fps, sizeof(fps), "%.2fM", r->fps / 1e6);
		printf("| %s | %s | %.2f | %.2f | %.2f | %.1f | %.1f | %.1f | "
		       "%.0f%% | %s | %s |\n",
		       test_names[r->test], flows, r->bare_mpps, r->lb_mpps,
		       r->ratio, r->bare_ns, r->lb_ns, r->own_ns, r->lb_busy,
		       fps, r->problems == 0 ? "ok" : "FAILED");
	}
l7:
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
}

int
main(int argc, char **argv)
{
	static struct bench b;
	char prefix[64], *eal[16], rundir[PATH_MAX] = "";
	int neal = 0, dd = -1, rc, ret = EXIT_FAILURE;
	int napp;
	char **app;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			dd = i;
			break;
		}
	print_args("command:", argc, argv);
	if (dd > 0) {
		/* lb-dpbench EAL... -- options */
		rc = rte_eal_init(dd, argv);
		app = argv + dd;
		napp = argc - dd;
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
		app = argv;
		napp = argc;
	}
	if (rc < 0) {
		fprintf(stderr, "lb-dpbench: EAL initialisation failed: %s\n",
			rte_strerror(rte_errno));
		return EXIT_FAILURE;
	}
	/* Ours only when we chose the prefix. */
	if (dd <= 0)
		snprintf(rundir, sizeof(rundir), "%s",
			 rte_eal_get_runtime_dir());
	rc = parse_args(&b, napp, app);
	if (rc != 0) {
		ret = rc > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
		goto out;
	}
	if (bench_setup(&b) != 0)
		goto out;
	printf("memory: %s; TSC %.3f GHz; generator lcore %u, forwarder "
	       "lcore %u; %u-byte frames, %u mbufs in flight; load average "
	       "%.2f\n",
	       rte_eal_has_hugepages() ? "hugepages" : "no hugepages",
	       (double)b.hz / 1e9, rte_get_main_lcore(), b.fwd_lcore,
	       FRAME_LEN + 4, IN_FLIGHT, load_avg());
	if (b.tests & ((1u << T_EST) | (1u << T_MIX))) {
		uint32_t most = 0;

		for (unsigned int i = 0; i < b.nb_sizes; i++)
			most = RTE_MAX(most, b.sizes[i]);
		b.rec = calloc(most, sizeof(*b.rec));
		if (b.rec == NULL)
			goto out;
		for (unsigned int i = 0; i < b.nb_sizes; i++) {
			if (flows_open(&b, b.sizes[i]) != 0)
				goto out;
			for (unsigned int t = T_EST; t <= T_MIX; t++)
				if ((b.tests & (1u << t)) &&
				    run_test(&b, (enum test)t, b.sizes[i]) != 0)
					goto out;
		}
	}
	if ((b.tests & (1u << T_NEW)) && run_test(&b, T_NEW, 0) != 0)
		goto out;
	if (b.tests & (1u << T_L7)) {
		if (l7_setup(&b) != 0)
			goto out;
		for (unsigned int i = 0; i < b.nb_l7_sizes; i++)
			if (l7_open(&b, b.l7_sizes[i]) != 0 ||
			    run_l7(&b, b.l7_sizes[i]) != 0)
				goto out;
	}
	if ((b.tests & (1u << T_ADM)) &&
	    (run_adm(&b, LB_ADMIT_KEY_SVC) != 0 ||
	     run_adm(&b, LB_ADMIT_KEY_CLIENT) != 0))
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
out:
	bench_teardown(&b);
	rte_eal_cleanup();
	/* The EAL leaves its runtime directory behind even with
	 * --in-memory; the one of our own prefix goes with us. */
	if (rundir[0] != '\0')
		if (lb_dpb_rundir_remove(rundir) != 0)
			fprintf(stderr, "lb-dpbench: cannot remove %s: %s\n",
				rundir, strerror(errno));
	return ret;
}
