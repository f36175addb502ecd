/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-dpbench's own header: the constants of the bench, the test kinds,
 * the state one run shares between its parts (struct bench) and the
 * functions those parts offer each other. Private to tools/bench/worker.
 */
#ifndef LB_DP_BENCH_H
#define LB_DP_BENCH_H

#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "dp.h"
#include "lb/admit.h"
#include "lb/dpconf.h"
#include "lb/hdr_scan.h"

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
#define IP_VIP_CONN 0x0a006404u /* 10.0.100.4: conn, short timeouts */
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
#define L7_MAX_FLOWS 100000u /* per service; under 1 KB each (printed) */
#define FB_BURST 64u

enum test {
	T_EST, T_MIX, T_NEW, T_L7, T_ADM, T_SRC, T_SYNP, T_CONN, T_RDR,
	T_BIND, /* dp_bench_bind.c */
	T_EST6, T_NEW6, /* IPv6: dp_bench6.c */
	T_MAX
};

/* A new-flow test: a fresh worker per round, at most NEW_CAP SYNs. */
static inline int
is_new_test(enum test t)
{
	return t == T_NEW || t == T_NEW6;
}

/* conn: connections in flight are at most IN_FLIGHT, far below this. */
#define CONN_SLOTS 65536u
#define CONN_SAMPLES 64u      /* occupancy samples per round */
#define CONN_SAMPLE_HZ 20u    /* samples per second */
/* Default --conn-timeout: long next to the stalls of a shared host, and
 * 2 M connections/s would fill the table of TABLE_FLOWS. */
#define CONN_TIMEOUT_MS 500u
static const char conn_req[] = "GET /\n";
static const char conn_resp[] = "200 ok";

/* bind: the hosts its requests name, BIND_HOSTS of them, all of one
 * length; h0 matches no rule (the service's own pool), hN pool pN. */
#define BIND_HOSTS 4u
#define BIND_IN_FLIGHT 512u /* half the worker's waiting slots */
static const char bind_req_fmt[] = "GET / HTTP/1.1\r\nHost: h%u.example.com"
				   "\r\n\r\n";
/* The three services of bind, one table each. */
enum bind_side { BIND_L4, BIND_SYNP, BIND_ROUTED, BIND_SIDES };

extern const char *const dpb_test_names[T_MAX];
extern const char *const dpb_test_what[T_MAX];

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

/* The sides of the synp test. */
enum synp_side { SYNP_PLAIN, SYNP_SYN, SYNP_ACK, SYNP_SIDES };

enum phase { PH_WARM, PH_MEASURE, PH_DRAIN, PH_STOP };
/* A frame with everything but addresses, ports and sequence number. */
struct tmpl {
	uint8_t f[FRAME_LEN];
	uint32_t ip_sum;  /* IP header, addresses and checksum zero */
	uint32_t tcp_sum; /* pseudo-header and TCP header, the same */
};

/* An IPv6 frame with everything but 32 bits of the source, ports and
 * sequence number (dp_bench6.h). */
struct tmpl6 {
	uint8_t f[80];
	uint32_t tcp_sum; /* pseudo-header and TCP header, those zero */
	uint8_t var;	  /* offset of the source's word that changes */
};

/* What the worker chose for IPv6 flow i while it was opened. */
struct flow_rec6 {
	uint16_t snat_port; /* network order */
	uint8_t snat;	    /* index of the SNAT address */
	uint8_t be;
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

	/* conn */
	int worker;	  /* the round runs the worker (else bare) */
	double warm_s;	  /* worker's warm-up; 0: a tenth of --seconds */
	uint64_t warm_min; /* adm: and at least this many frames made */
	uint64_t conns;	  /* connections completed (both FINs through) */
	uint64_t bad;	  /* outputs that are no step of a connection */
	const char *why;  /* the first of them */
	uint32_t in_flight; /* mbufs circulating; 0: IN_FLIGHT */
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
	/* conn: connections completed per second; the worker's table
	 * every 1/CONN_SAMPLE_HZ s from the round's start */
	double cps;
	/* rdr: packets the receiving worker handed to the owner */
	uint64_t redirected;
	/* rdr --rdr-split: the receiving worker's busy ns per packet */
	double rx_ns, rx_burst; /* and its packets per such poll */
	uint32_t occ[CONN_SAMPLES];
	unsigned int nb_occ;
	unsigned int problems;
};

/* What the worker chose for connection c & (CONN_SLOTS - 1). */
struct conn_rec {
	uint32_t snat_ip;   /* network order */
	uint16_t snat_port; /* network order */
	uint16_t be;
	uint32_t cy; /* bind: the client's SYN-ACK's seq, host order */
};

struct conn_row {
	double bare_cps, lb_cps, ratio, bare_ns, lb_ns, lb_busy;
	uint32_t occ_max, occ_end;
	uint64_t expire_max, overdue_max, reclaimed;
	unsigned int problems;
};

struct l7_row {
	uint32_t flows;
	double l4_mpps, l7_mpps, ratio, l4_ns, l7_ns, extra_ns;
	double l4_busy, l7_busy;
	/* What one followed flow holds: its share of the L7 pool (entry,
	 * streams), its admission state; and the pool's streams. */
	double pool_bytes, rej_bytes;
	uint32_t streams;
	unsigned int problems;
};

struct adm_row {
	const char *key;
	double off_fps, on_fps, ratio, off_ns, on_ns, extra_ns, atomics;
	unsigned int problems;
};

/* rdr: the owner's replies from its own queue vs through the ring. */
struct rdr_row {
	uint32_t flows;
	double direct_mpps, rdr_mpps, direct_ns, rdr_ns, extra_ns, ratio;
	double rx_ns; /* --rdr-split: the receiving worker's, on its lcore */
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
	struct rte_ring *rxr, *txr; /* the queue the worker polls */
	struct rte_ring *rxq[2], *txq[2]; /* the port's two queues */
	uint16_t port;
	unsigned int fwd_lcore;
	struct lb_dp dp;
	struct lb_worker *w;
	uint16_t wid; /* the worker under test's id (queue) */
	/* rdr: the worker whose queue the redirected replies arrive at,
	 * polled in the same loop as w, which owns their flows */
	struct lb_worker *w_rx;
	int rdr_split; /* --rdr-split: w_rx polled by the generator's loop */

	uint8_t port_mac[6], gw_mac[6], be_mac[NB_BES][6];
	uint32_t vip, be_ip[NB_BES]; /* network order */
	uint16_t vport, be_port;
	struct tmpl t_syn, t_ack, t_synack[NB_BES], t_reply[NB_BES];

	struct flow_rec *rec;
	uint32_t nb_rec;
	uint64_t new_ctr; /* new-flow tuples handed out so far */
	/* synp: what new flows are (enum synp_side): SYNs of the plain
	 * path, SYNs the proxy answers, or ACKs proving their cookies. */
	int synp;
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

	/* rdr */
	struct rdr_row rdr_rows[MAX_SIZES];
	unsigned int nb_rdr_rows;

	/* conn: its table (one service, short timeouts), frames, records */
	struct lb_dpconf *conf_conn;
	uint32_t conn_timeout_ms;
	uint32_t conn_vip; /* network order */
	struct l7_tmpl tc_syn, tc_ack, tc_req, tc_fin;
	struct l7_tmpl tc_synack[NB_BES], tc_resp[NB_BES], tc_finb[NB_BES];
	struct conn_rec *crec;
	uint64_t conn_ctr; /* connections started, all rounds */
	/* bind: the client's ACK carries its request (one of tb_req, of
	 * creq_len bytes), the SYN-ACK it answers is recorded, and the
	 * worker's own ACKs to backends are taken out of the round. */
	int conn_bind;
	uint32_t creq_len;
	struct l7_tmpl tb_req[BIND_HOSTS];
	struct lb_dpconf *conf_bind[BIND_SIDES];
	struct conn_row conn_row;
	int has_conn_row;

	/* est6, new6: the IPv6 table, addresses, frames and records */
	struct lb_dpconf *conf6;
	uint8_t vip6[16], gw6[16], be6[NB_BES][16], snat6[NB_SNATS][16];
	struct tmpl6 t6_syn_est, t6_syn, t6_ack;
	struct flow_rec6 *rec6;
	uint32_t nb_rec6;
};


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

/* ---- frames: dp_bench_frame.c ---- */

void dpb_tmpl_init(struct tmpl *t, const uint8_t *dmac, const uint8_t *smac,
		   uint8_t flags);
void dpb_frame_write_ack(uint8_t *f, const struct tmpl *t, uint32_t src,
			 uint32_t dst, uint16_t sport, uint16_t dport,
			 uint32_t seq, uint32_t ack);
int dpb_frame_csums_ok(const uint8_t *f);
void dpb_l7_tmpl_init(struct l7_tmpl *t, const uint8_t *dmac,
		      const uint8_t *smac, uint8_t flags, const char *payload,
		      uint16_t plen);
int dpb_l7_csums_ok(const uint8_t *f, uint32_t len);

/* ---- the worker under test and its flows: dp_bench_open.c ---- */

/** Replaces the worker with a fresh one with static neighbours. */
int dpb_worker_new(struct bench *b);
/** A worker of id @p wid with static neighbours, or NULL. */
struct lb_worker *dpb_worker_make(struct bench *b, uint16_t wid);
/** Prints what the worker counted since @p st0 that a clean run has not.
 * @return how many such counters. */
unsigned int dpb_worker_report(const struct lb_worker *w,
			       const struct lb_worker_stats *st0, enum test t,
			       const char *when);
/** A flow's handshake in frames: its SYN written into @p m, the SYN the
 * worker sent turned into the backend's SYN-ACK, the SYN-ACK it sent
 * into the client's ACK (those two: 1, or 0 if the frame is not one of
 * flows [base, base + k)). */
struct dpb_hs {
	void (*syn)(struct bench *b, struct rte_mbuf *m, uint32_t i);
	int (*synack)(struct bench *b, struct rte_mbuf *m, uint32_t base,
		      unsigned int k);
	int (*ack)(struct bench *b, struct rte_mbuf *m, uint32_t base,
		   unsigned int k);
};
/** Opens flows 0 .. @p nb - 1 through the worker by batches of
 * handshakes; *@p done: the flows opened. @return 0, -ENOMEM, or
 * -EPROTO when the worker did not answer every packet. */
int dpb_handshakes(struct bench *b, uint32_t nb, const struct dpb_hs *hs,
		   uint32_t *done);
/** Opens @p nb established flows through a fresh worker. */
int dpb_flows_open(struct bench *b, uint32_t nb);
/** Opens @p nb flows on each l7 service through a fresh worker. */
int dpb_l7_open(struct bench *b, uint32_t nb);

/* ---- one round: dp_bench_round.c ---- */

/** Prepares @p g to generate the frames of test @p t over @p nb_flows. */
void dpb_gen_init(struct gen *g, enum test t, uint32_t nb_flows);
/** One round of the worker (@p worker) or of the bare forwarder. */
int dpb_run_round(struct bench *b, struct gen *g, int worker, struct res *r);

/* ---- the tests, rounds in pairs: dp_bench_tests.c ---- */

/** The median of @p n values (at most MAX_ROUNDS). */
double dpb_median(const double *v, unsigned int n);
int dpb_run_test(struct bench *b, enum test t, uint32_t nb_flows);
int dpb_run_l7(struct bench *b, uint32_t nb);
int dpb_run_adm(struct bench *b, enum lb_admit_key key);
/** src: new flows with the budget per source off and on. */
int dpb_run_src(struct bench *b);
int dpb_run_synp(struct bench *b);
/** rdr: replies on the queue of a worker that does not own their flow
 * (handed over through the redirect ring) vs on the owner's own queue. */
int dpb_run_rdr(struct bench *b, uint32_t nb_flows);

/* ---- conn: dp_bench_conn.c ---- */

/** conn's table, frames and records. */
int dpb_conn_setup(struct bench *b);
/** conn: whole connections at steady state, worker vs bare forwarder. */
int dpb_run_conn(struct bench *b);

/* ---- bind: dp_bench_bind.c ---- */

/** bind: connections routed by their Host vs the same connections on a
 * plain SYN-proxy service and on a plain L4 service. */
int dpb_run_bind(struct bench *b);
/** Frees bind's tables. */
void dpb_bind_teardown(struct bench *b);

/* ---- IPv6: dp_bench6.c ---- */

/** The IPv6 table and frames. */
int dpb6_setup(struct bench *b);
/** The worker's static IPv6 neighbours, once dpb6_setup() ran. */
int dpb6_statics(struct bench *b);
/** Opens @p nb IPv6 flows through a fresh worker on the IPv6 table. */
int dpb6_flows_open(struct bench *b, uint32_t nb);
/** Checks one frame the worker sent in an est6 or new6 round. */
const char *dpb6_check_out(const struct bench *b, const uint8_t *f,
			   uint32_t len, enum test t);

/** Hands @p n mbufs to the port, runs the worker until it took them all,
 * and collects what it sent into @p out. */
unsigned int dpb_pump(struct bench *b, struct rte_mbuf **m, unsigned int n,
		      struct rte_mbuf **out);

/* ---- setup: dp_bench_setup.c ---- */

int dpb_bench_setup(struct bench *b);
/** Compiles @p c into a table of DPDK memory, *@p out_conf; @p what
 * names it in an error. */
int dpb_conf_compile(const struct lb_conf *c, struct lb_dpconf **out_conf,
		     const char *what);
/** The table of the forwarding tests (@p kind 0), l7 (1: plain http, 2:
 * http with governor), conn (3), or bind's SYN-proxy service without (4)
 * and with (5) content routing rules. */
int dpb_conf_build(const struct bench *b, int kind,
		   struct lb_dpconf **out_conf);
int dpb_l7_setup(struct bench *b);
void dpb_bench_teardown(struct bench *b);

#endif /* LB_DP_BENCH_H */
