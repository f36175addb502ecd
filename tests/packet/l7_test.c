/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet tests of HTTP following (docs/dataplane.md, "HTTP services";
 * docs/l7-feedback.md). The real worker runs in this process on two
 * net_ring ports, port 0 facing the client and port 1 the backends, with
 * its L7 pool enabled as dataplane/core/main.c enables it (the default header
 * database, dp.l7_flows). Each test opens TCP connections through it with
 * real sequence numbers (SYN, SYN-ACK, ACK) and then carries HTTP/1.1
 * exchanges both ways, every segment checked byte for byte on the other
 * port. What the worker learnt is read where lb-control reads it: the
 * feedback records of its ring (struct lb_fb) and the per-backend
 * counters (struct lb_be_stats). Without a shared-memory segment the
 * worker produces feedback records unconditionally.
 *
 * Expectations come from the documents: one LB_FB_HTTP record per final
 * response, followed by LB_FB_SPL and LB_FB_ORCA when the response carried
 * accepted values; X-Priority and X-Expect-Ms come from the request the
 * response answers (first in, first out); bodies, chunk data and trailers
 * never count; an out-of-order segment stops the following of its flow;
 * a 5xx response is an error for the scheduler and anything else a
 * success.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "harness.h"
#include "lb/cmd.h"
#include "lb/conf.h"
#include "lb/fb.h"
#include "lb/admit.h"
#include "lb/hdr_conf.h"
#include "lb/hdr_scan.h"
#include "l7_reject.h"

#define POOL_SIZE 4095
#define FLOWS 256
#define L7_FLOWS 16
#define SEG_MAX 1400 /* payload of the segments the tests cut */
#define MSG_MAX 8192
#define FB_MAX 1024
/* ---- the cast (host order) --------------------------------------------- */

#define IP_BE_HTTP PB_IP(10, 1, 0, 20)
#define IP_BE_L4 PB_IP(10, 1, 0, 21)
#define IP_VIP_HTTP PB_IP(203, 0, 113, 10)
#define IP_VIP_L4 PB_IP(203, 0, 113, 11)
#define IP_VIP_GOV PB_IP(203, 0, 113, 12)
#define IP_BE_GOV PB_IP(10, 1, 0, 22)
#define IP_VIP_RATE PB_IP(203, 0, 113, 13)
#define IP_BE_RATE PB_IP(10, 1, 0, 23)

/* Service slots: the order of conf_lines. */
#define SVC_HTTP 0
#define SVC_L4 1
#define SVC_GOV 2 /* http with the governor: admission tests */
#define SVC_RATE 3 /* http with 2 requests of burst, 1/s */

static const uint8_t mac_be_http[6] = {0x02, 0xbe, 0, 0, 0, 0x20};
static const uint8_t mac_be_l4[6] = {0x02, 0xbe, 0, 0, 0, 0x21};
static const uint8_t mac_be_gov[6] = {0x02, 0xbe, 0, 0, 0, 0x22};
static const uint8_t mac_be_rate[6] = {0x02, 0xbe, 0, 0, 0, 0x23};

/*
 * The same service twice, once followed at L7 and once plain L4; the L7
 * one forgets its errors on a success (err-memory 1), as the dispatch
 * paper does, so that test_errors sees every count exactly.
 */
static const char *const conf_lines[] = {
	"addr add 198.51.100.1/24 port 0",
	"addr add 10.1.0.1/24 port 1",
	"snat add 10.1.0.2 port 1",
	"service add tcp 203.0.113.10:80 sched adaptive http err-memory 1",
	"backend add tcp 203.0.113.10:80 10.1.0.20:8080",
	"service add tcp 203.0.113.11:80 sched adaptive",
	"backend add tcp 203.0.113.11:80 10.1.0.21:8080",
	"service add tcp 203.0.113.12:80 http governor on default-priority 3 "
	"retry-after 7 prio-trust 198.51.100.0/24",
	"backend add tcp 203.0.113.12:80 10.1.0.22:8080",
	"service add tcp 203.0.113.13:80 http admit-rate 1 admit-burst 2 "
	"reject-status 429",
	"backend add tcp 203.0.113.13:80 10.1.0.23:8080",
	NULL,
};

/* ---- a dataplane on ring ports ----------------------------------------- */

static struct lb_hdr_db *hdb;

static void
load_conf(struct ph_env *e)
{
	const char *const *sets[] = {conf_lines};

	e->dp.conf = ph_conf_compile(e, sets, NELEM(sets), NULL);
	assert_int_equal(lb_dpconf_svc_find(e->dp.conf, PB_PROTO_TCP,
					    htonl(IP_VIP_HTTP), htons(VPORT)),
			 SVC_HTTP);
	assert_int_equal(lb_dpconf_svc_find(e->dp.conf, PB_PROTO_TCP,
					    htonl(IP_VIP_L4), htons(VPORT)),
			 SVC_L4);
	assert_true(e->dp.conf->svc[SVC_HTTP].opts.http);
	assert_false(e->dp.conf->svc[SVC_L4].opts.http);
}

/*
 * A fresh dataplane with one worker following up to @p l7_flows HTTP
 * flows, set up as dataplane/core/main.c does; also kept in *state for the
 * teardown. Neighbours are static: no ARP in the way of the exchanges.
 */
static struct ph_env *
env_up(void **state, uint32_t l7_flows)
{
	struct ph_env *e = ph_env_new(state);
	struct timespec ts;

	load_conf(e);
	e->dp.flows = FLOWS;
	e->dp.hdb = hdb;
	e->dp.l7_flows = l7_flows;
	e->dp.gov_m = e->gov_m;
	e->admit_mem = rte_zmalloc("l7pkt_admit", lb_admit_shm_size(64), 64);
	assert_non_null(e->admit_mem);
	e->dp.admit = lb_admit_shm_init(e->admit_mem, 64);
	assert_non_null(e->dp.admit);
	/* As main.c: X-SPL-Time ages are taken against the wall clock. */
	clock_gettime(CLOCK_REALTIME, &ts);
	e->dp.epoch_off_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec -
			     (int64_t)((double)rte_rdtsc() * e->dp.ns_per_tsc);
	ph_env_start(e, 1);
	if (l7_flows > 0)
		assert_non_null(e->w->l7);
	assert_int_equal(lb_neigh_set_static(e->w->neigh, htonl(IP_C), mac_c),
			 0);
	assert_int_equal(lb_neigh_set_static(e->w->neigh, htonl(IP_BE_HTTP),
					     mac_be_http),
			 0);
	assert_int_equal(
		lb_neigh_set_static(e->w->neigh, htonl(IP_BE_L4), mac_be_l4),
		0);
	assert_int_equal(
		lb_neigh_set_static(e->w->neigh, htonl(IP_BE_GOV), mac_be_gov),
		0);
	assert_int_equal(lb_neigh_set_static(e->w->neigh, htonl(IP_BE_RATE),
					     mac_be_rate),
			 0);
	return e;
}

static void
busy_wait_ns(const struct ph_env *e, uint64_t ns)
{
	uint64_t end = ph_now_ns(e) + ns;

	while (ph_now_ns(e) < end)
		;
}

/* ---- connections --------------------------------------------------------
 * A connection is seen four ways: as the client sends it (client -> VIP),
 * as the backend must get it (SNAT -> backend), as the backend answers
 * (backend -> SNAT) and as the client must get the answer (VIP ->
 * client). Payload and sequence numbers are the same in all four.
 */

enum dir { TO_BE, TO_C };

struct conn {
	uint16_t svc;
	uint32_t vip;
	uint16_t cport;
	uint32_t bip;
	const uint8_t *bmac;
	uint16_t sport;	   /* SNAT port, learnt from the forwarded SYN */
	uint32_t iss, irs; /* initial sequence numbers */
	uint32_t nxt[2];   /* next sequence number, [TO_BE] and [TO_C] */
	uint16_t ip_id[2];
};

static void
conn_init(struct conn *c, uint16_t svc, uint16_t cport, uint32_t iss,
	  uint32_t irs)
{
	memset(c, 0, sizeof(*c));
	c->svc = svc;
	static const struct {
		uint32_t vip, bip;
		const uint8_t *bmac;
	} cast[] = {
		[SVC_HTTP] = {IP_VIP_HTTP, IP_BE_HTTP, mac_be_http},
		[SVC_L4] = {IP_VIP_L4, IP_BE_L4, mac_be_l4},
		[SVC_GOV] = {IP_VIP_GOV, IP_BE_GOV, mac_be_gov},
		[SVC_RATE] = {IP_VIP_RATE, IP_BE_RATE, mac_be_rate},
	};

	c->vip = cast[svc].vip;
	c->bip = cast[svc].bip;
	c->bmac = cast[svc].bmac;
	c->cport = cport;
	c->iss = iss;
	c->irs = irs;
	c->nxt[TO_BE] = iss + 1;
	c->nxt[TO_C] = irs + 1;
	c->ip_id[TO_BE] = (uint16_t)(cport * 7u);
	c->ip_id[TO_C] = (uint16_t)(cport * 13u);
}

/* One TCP segment of @p c, as sent (@p fwd 0) or as it must leave. */
static void
seg_frame(struct pb_frame *f, const struct conn *c, enum dir d, int fwd,
	  uint8_t flags, uint32_t seq, uint32_t ack, uint16_t id,
	  const uint8_t *data, uint16_t len)
{
	struct pb_dg g = {
		.proto = PB_PROTO_TCP,
		.ttl = fwd ? TTL_IN - 1 : TTL_IN,
		.id = id,
		.frag = PB_IP_DF,
		.seq = seq,
		.ack = ack,
		.flags = flags,
		.win = d == TO_BE ? 64240 : 65160,
		.mss = (flags & PB_SYN) != 0,
		.data = data,
		.plen = len,
	};

	if (d == TO_BE && !fwd) {
		g.src = IP_C;
		g.dst = c->vip;
		g.sport = c->cport;
		g.dport = VPORT;
		pb_ipv4_frame(f, mac_port[0], mac_c, &g);
	} else if (d == TO_BE) {
		g.src = IP_SNAT;
		g.dst = c->bip;
		g.sport = c->sport;
		g.dport = BPORT;
		pb_ipv4_frame(f, c->bmac, mac_port[1], &g);
	} else if (!fwd) {
		g.src = c->bip;
		g.dst = IP_SNAT;
		g.sport = BPORT;
		g.dport = c->sport;
		pb_ipv4_frame(f, mac_port[1], c->bmac, &g);
	} else {
		g.src = c->vip;
		g.dst = IP_C;
		g.sport = VPORT;
		g.dport = c->cport;
		pb_ipv4_frame(f, mac_c, mac_port[0], &g);
	}
}

/*
 * Sends one segment and checks that the worker forwarded exactly it, byte
 * for byte, on the other port, and sent nothing else.
 */
static void
xmit(struct ph_env *e, struct conn *c, enum dir d, uint8_t flags, uint32_t seq,
     const void *data, uint16_t len, const char *what)
{
	static struct pb_frame in, want, got;
	uint32_t ack = d == TO_BE ? c->nxt[TO_C] : c->nxt[TO_BE];
	uint16_t id = c->ip_id[d]++;
	uint16_t iport = d == TO_BE ? 0 : 1;
	unsigned int n;

	if ((flags & PB_SYN) && d == TO_BE)
		ack = 0;
	seg_frame(&in, c, d, 0, flags, seq, ack, id, data, len);
	ph_rx(e, iport, &in);
	n = ph_take(e, (uint16_t)(1 - iport), 0, &got, 1);
	if (n != 1 || ph_take(e, iport, 0, NULL, 0) != 0)
		fail_msg("%s: %u frame(s) forwarded, want 1", what, n);
	if (c->sport == 0 && d == TO_BE) {
		/* The client's SYN: the worker picks the SNAT port. */
		c->sport = pb_get16(got.b + ETH + 20);
	}
	seg_frame(&want, c, d, 1, flags, seq, ack, id, data, len);
	if (pb_diff(stderr, what, got.b, got.len, want.b, want.len))
		fail_msg("%s: not forwarded byte for byte", what);
}

/* Three-way handshake through the worker. */
static void
conn_open(struct ph_env *e, struct conn *c)
{
	xmit(e, c, TO_BE, PB_SYN, c->iss, NULL, 0, "client SYN");
	xmit(e, c, TO_C, PB_SYN | PB_ACK, c->irs, NULL, 0, "backend SYN-ACK");
	xmit(e, c, TO_BE, PB_ACK, c->nxt[TO_BE], NULL, 0, "client ACK");
}

/* Sends @p len bytes in direction @p d, in segments cut at @p cuts. */
static void
send_cut(struct ph_env *e, struct conn *c, enum dir d, const void *data,
	 size_t len, const size_t *cuts, unsigned int nb_cuts, const char *what)
{
	const uint8_t *p = data;
	size_t at = 0;

	for (unsigned int i = 0; i <= nb_cuts; i++) {
		size_t end = i < nb_cuts ? cuts[i] : len;

		assert_true(end >= at && end <= len && end - at <= SEG_MAX);
		if (end == at)
			continue;
		xmit(e, c, d, PB_PSH | PB_ACK, c->nxt[d], p + at,
		     (uint16_t)(end - at), what);
		c->nxt[d] += (uint32_t)(end - at);
		at = end;
	}
}

/* Sends @p len bytes in segments of at most @p seg bytes. */
static void
send_seg(struct ph_env *e, struct conn *c, enum dir d, const void *data,
	 size_t len, size_t seg, const char *what)
{
	size_t cuts[MSG_MAX];
	unsigned int n = 0;

	for (size_t at = seg; at < len; at += seg)
		cuts[n++] = at;
	send_cut(e, c, d, data, len, cuts, n, what);
}

static void
send_str(struct ph_env *e, struct conn *c, enum dir d, const char *s,
	 const char *what)
{
	send_seg(e, c, d, s, strlen(s), SEG_MAX, what);
}

/* ---- what the worker reports ------------------------------------------- */

/* What one final response must yield. */
struct want {
	uint16_t status;
	int prio;	/* X-Priority of the request, -1: none */
	int expect;	/* X-Expect-Ms of the request, -1: none */
	int qos_met;	/* with expect: answered within it */
	double spl;	/* accepted X-SPL, -1: no SPL record */
	int spl_time;	/* the SPL record says X-SPL-Time was given */
	int64_t age_lo; /* its age in ms, within [age_lo, age_hi] */
	int64_t age_hi;
	double cpu; /* ORCA cpu_utilization, -1: no ORCA record */
	uint32_t mem_ppm;
	int untimed; /* the latency is not measured */
};

/* A plain answer: status @p st, nothing asked, nothing reported. */
static struct want
w_plain(uint16_t st)
{
	return (struct want){
		.status = st, .prio = -1, .expect = -1, .spl = -1, .cpu = -1};
}

static struct want
w_spl(uint16_t st, double spl)
{
	struct want w = w_plain(st);

	w.spl = spl;
	return w;
}

/* The L7 records (HTTP, SPL, ORCA) waiting in the worker's ring. */
static unsigned int
fb_take(struct ph_env *e, struct lb_fb *r, unsigned int max)
{
	struct lb_fb tmp[64];
	unsigned int n = 0, k;

	while ((k = rte_ring_sc_dequeue_burst_elem(
			e->w->fb, tmp, sizeof(tmp[0]), NELEM(tmp), NULL)) > 0) {
		for (unsigned int i = 0; i < k; i++) {
			if (tmp[i].kind != LB_FB_HTTP &&
			    tmp[i].kind != LB_FB_SPL &&
			    tmp[i].kind != LB_FB_ORCA)
				continue;
			if (n == max)
				fail_msg("more than %u L7 records", max);
			r[n++] = tmp[i];
		}
	}
	return n;
}

static double
f64_of(uint64_t v)
{
	double d;

	memcpy(&d, &v, sizeof(d));
	return d;
}

static const char *
kind_name(uint8_t k)
{
	switch (k) {
	case LB_FB_HTTP:
		return "HTTP";
	case LB_FB_SPL:
		return "SPL";
	case LB_FB_ORCA:
		return "ORCA";
	default:
		return "other";
	}
}

static void
want_kind(const struct lb_fb *r, unsigned int n, unsigned int i, uint8_t kind,
	  const struct conn *c, const char *what, unsigned int resp)
{
	if (i >= n)
		fail_msg("%s: response %u: no %s record (only %u L7 records)",
			 what, resp, kind_name(kind), n);
	if (r[i].kind != kind)
		fail_msg("%s: response %u: record %u is %s, want %s", what,
			 resp, i, kind_name(r[i].kind), kind_name(kind));
	if (r[i].svc != c->svc || r[i].be != 0 || r[i].worker != 0)
		fail_msg("%s: response %u: %s record of svc %u be %u worker "
			 "%u",
			 what, resp, kind_name(kind), r[i].svc, r[i].be,
			 r[i].worker);
}

/*
 * The L7 records now in the ring must be exactly those of the @p nb
 * responses @p ws, in order: HTTP, then SPL if any, then ORCA if any.
 */
static void
expect_obs(struct ph_env *e, const struct conn *c, const struct want *ws,
	   unsigned int nb, const char *what)
{
	static struct lb_fb r[FB_MAX];
	unsigned int n = fb_take(e, r, FB_MAX), i = 0;

	for (unsigned int k = 0; k < nb; k++) {
		const struct want *w = &ws[k];
		uint16_t fl;

		want_kind(r, n, i, LB_FB_HTTP, c, what, k);
		fl = r[i].flags;
		if (r[i].u32 != w->status)
			fail_msg("%s: response %u: status %u, want %u", what, k,
				 r[i].u32, w->status);
		if (!!(fl & LB_FB_F_TIMED) != !w->untimed)
			fail_msg("%s: response %u: timed flag %d", what, k,
				 !!(fl & LB_FB_F_TIMED));
		/* Every response of these tests comes within a second. */
		if (!w->untimed && (r[i].v == 0 || r[i].v > 1000000000ull))
			fail_msg("%s: response %u: latency %" PRIu64 " ns",
				 what, k, r[i].v);
		if (w->prio < 0 && (fl & LB_FB_F_PRIO))
			fail_msg("%s: response %u: priority %u reported, want "
				 "none",
				 what, k, fl >> LB_FB_PRIO_SHIFT);
		if (w->prio >= 0 &&
		    (!(fl & LB_FB_F_PRIO) ||
		     (fl >> LB_FB_PRIO_SHIFT) != (unsigned int)w->prio))
			fail_msg("%s: response %u: priority %s%u, want %d",
				 what, k, fl & LB_FB_F_PRIO ? "" : "none ",
				 fl >> LB_FB_PRIO_SHIFT, w->prio);
		if (w->expect < 0 && (fl & (LB_FB_F_EXPECT | LB_FB_F_QOS_MET)))
			fail_msg("%s: response %u: expectation %u reported, "
				 "want none",
				 what, k, r[i].u32b);
		if (w->expect >= 0 && (!(fl & LB_FB_F_EXPECT) ||
				       r[i].u32b != (uint32_t)w->expect))
			fail_msg("%s: response %u: expectation %s%u, want %d",
				 what, k, fl & LB_FB_F_EXPECT ? "" : "none ",
				 r[i].u32b, w->expect);
		if (w->expect >= 0 && !!(fl & LB_FB_F_QOS_MET) != !!w->qos_met)
			fail_msg("%s: response %u: met %d, want %d (latency "
				 "%" PRIu64 " ns)",
				 what, k, !!(fl & LB_FB_F_QOS_MET), w->qos_met,
				 r[i].v);
		i++;
		if (w->spl >= 0) {
			want_kind(r, n, i, LB_FB_SPL, c, what, k);
			if (f64_of(r[i].v) != w->spl)
				fail_msg("%s: response %u: SPL %.17g, want "
					 "%.17g",
					 what, k, f64_of(r[i].v), w->spl);
			if (!!(r[i].flags & LB_FB_F_SPL_TIME) != !!w->spl_time)
				fail_msg("%s: response %u: SPL time flag %d",
					 what, k,
					 !!(r[i].flags & LB_FB_F_SPL_TIME));
			if ((int64_t)r[i].u32 < w->age_lo ||
			    (int64_t)r[i].u32 > w->age_hi)
				fail_msg("%s: response %u: SPL age %u ms, want "
					 "%" PRId64 "..%" PRId64,
					 what, k, r[i].u32, w->age_lo,
					 w->age_hi);
			i++;
		}
		if (w->cpu >= 0) {
			want_kind(r, n, i, LB_FB_ORCA, c, what, k);
			if (f64_of(r[i].v) != w->cpu || r[i].u32 != w->mem_ppm)
				fail_msg("%s: response %u: ORCA cpu %.17g mem "
					 "%u ppm, want %.17g %u",
					 what, k, f64_of(r[i].v), r[i].u32,
					 w->cpu, w->mem_ppm);
			i++;
		}
	}
	if (i != n)
		fail_msg("%s: %u L7 record(s) more than the %u responses "
			 "give, the first %s",
			 what, n - i, nb, kind_name(r[i].kind));
}

static void
expect_one(struct ph_env *e, const struct conn *c, struct want w,
	   const char *what)
{
	expect_obs(e, c, &w, 1, what);
}

static void
expect_none(struct ph_env *e, const struct conn *c, const char *what)
{
	expect_obs(e, c, NULL, 0, what);
}

static const struct lb_be_stats *
bst(const struct ph_env *e, uint16_t svc)
{
	return &e->w->bst[svc][0];
}

/* Responses, 5xx among them, and requests in flight toward the backend. */
static void
expect_be(const struct ph_env *e, uint16_t svc, uint64_t responses,
	  uint64_t x5xx, int64_t inflight, const char *what)
{
	const struct lb_be_stats *b = bst(e, svc);

	if (b->http_responses != responses || b->http_5xx != x5xx ||
	    b->inflight != inflight)
		fail_msg("%s: backend counts %" PRIu64 " responses, %" PRIu64
			 " 5xx, %" PRId64 " in flight; want %" PRIu64
			 ", %" PRIu64 ", %" PRId64,
			 what, b->http_responses, b->http_5xx, b->inflight,
			 responses, x5xx, inflight);
}

/* One exchange: @p req from the client, @p resp from the backend. */
static void
exchange(struct ph_env *e, struct conn *c, const char *req, const char *resp,
	 const char *what)
{
	send_str(e, c, TO_BE, req, what);
	send_str(e, c, TO_C, resp, what);
}

static const char get_req[] = "GET /a HTTP/1.1\r\nHost: svc\r\n\r\n";

static uint64_t
wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- tests ------------------------------------------------------------- */

/*
 * One exchange with everything a backend and a client may say: the
 * records carry all of it; the request is in flight between its last byte
 * and the response; the same exchange on the plain L4 service yields
 * nothing.
 */
static void
test_exchange(void **state)
{
	struct ph_env *e = env_up(state, L7_FLOWS);
	char resp[512];
	struct conn c, l4;
	struct want w;
	uint64_t t;

	conn_init(&c, SVC_HTTP, 40001, 1000, 500000);
	conn_open(e, &c);
	expect_none(e, &c, "handshake");
	send_str(e, &c, TO_BE,
		 "GET /x HTTP/1.1\r\nHost: svc\r\nX-Priority: 3\r\n"
		 "X-Expect-Ms: 5000\r\n\r\n",
		 "request");
	expect_be(e, SVC_HTTP, 0, 0, 1, "request sent");
	t = wall_ms() - 250;
	snprintf(resp, sizeof(resp),
		 "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-SPL: 0.8\r\n"
		 "X-SPL-Time: %" PRIu64 "\r\n"
		 "endpoint-load-metrics: TEXT cpu_utilization=0.5, "
		 "mem_utilization=0.25\r\n\r\nhello",
		 t);
	send_str(e, &c, TO_C, resp, "response");
	w = w_spl(200, 0.8);
	w.prio = 3;
	w.expect = 5000;
	w.qos_met = 1;
	w.spl_time = 1;
	w.age_lo = 250;
	w.age_hi = 250 + 2000;
	w.cpu = 0.5;
	w.mem_ppm = 250000;
	expect_one(e, &c, w, "full exchange");
	expect_be(e, SVC_HTTP, 1, 0, 0, "response received");

	/* An expectation missed: the response comes 3 ms after a request
	 * that expected it within 1 ms. A backend clock ahead of ours
	 * reads as fresh. */
	send_str(e, &c, TO_BE, "GET /slow HTTP/1.1\r\nX-Expect-Ms: 1\r\n\r\n",
		 "request");
	busy_wait_ns(e, 3000000);
	snprintf(resp, sizeof(resp),
		 "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-SPL: 1.5\r\n"
		 "X-SPL-Time: %" PRIu64 "\r\n\r\n",
		 wall_ms() + 60000);
	send_str(e, &c, TO_C, resp, "late response");
	w = w_spl(200, 1.5);
	w.expect = 1;
	w.qos_met = 0;
	w.spl_time = 1;
	expect_one(e, &c, w, "expectation missed");
	expect_be(e, SVC_HTTP, 2, 0, 0, "late response");

	/* A plain L4 service carries the same bytes unread. */
	conn_init(&l4, SVC_L4, 40002, 7000, 9000);
	conn_open(e, &l4);
	exchange(e, &l4, "GET / HTTP/1.1\r\nX-Priority: 3\r\n\r\n",
		 "HTTP/1.1 503 No\r\nX-SPL: 0.5\r\nContent-Length: 0\r\n\r\n",
		 "plain L4 exchange");
	expect_none(e, &l4, "plain L4 service");
	expect_be(e, SVC_L4, 0, 0, 0, "plain L4 service");
	ph_settle(e);
	CHECK_EQ(e->w->st.l7_flows, 1, "flows followed");
	CHECK_EQ(e->w->st.l7_stopped, 0, "flows stopped");
	ph_env_close(e, 1);
}

/*
 * A response, and its request, cut in two at every offset, then sent a
 * byte per segment: one record each time, with the value that straddles
 * the cut read whole, on one keep-alive connection.
 */
static void
test_split_every_offset(void **state)
{
	static const char req[] = "GET /split HTTP/1.1\r\nHost: svc\r\n"
				  "X-Priority: 42\r\nX-Expect-Ms: 2500\r\n\r\n";
	/* The body is header-like text: it must never count. */
	static const char resp[] = "HTTP/1.1 200 OK\r\nServer: t\r\n"
				   "X-SPL: 0.4375\r\nX-SPL-Time: 1\r\n"
				   "Content-Length: 22\r\n\r\n"
				   "X-SPL: 9\r\nX-SPL: 9\r\n\r\n";
	struct ph_env *e = env_up(state, L7_FLOWS);
	size_t rl = strlen(req), sl = strlen(resp);
	uint64_t n = 0;
	char what[64];
	struct conn c;
	struct want w = w_spl(200, 0.4375);

	w.prio = 42;
	w.expect = 2500;
	w.qos_met = 1;
	w.spl_time = 1;
	/* X-SPL-Time: 1 is 1 ms after the epoch: as old as it gets. */
	w.age_lo = INT32_MAX;
	w.age_hi = INT32_MAX;
	conn_init(&c, SVC_HTTP, 40010, 0x10000, 0x20000);
	conn_open(e, &c);
	for (size_t k = 1; k < sl; k++) {
		size_t rk = 1 + (k - 1) % (rl - 1);

		snprintf(what, sizeof(what), "request cut at %zu", rk);
		send_cut(e, &c, TO_BE, req, rl, &rk, 1, what);
		snprintf(what, sizeof(what), "response cut at %zu", k);
		send_cut(e, &c, TO_C, resp, sl, &k, 1, what);
		expect_one(e, &c, w, what);
		expect_be(e, SVC_HTTP, ++n, 0, 0, what);
	}
	send_seg(e, &c, TO_BE, req, rl, 1, "request byte by byte");
	send_seg(e, &c, TO_C, resp, sl, 1, "response byte by byte");
	expect_one(e, &c, w, "byte by byte");
	/* Three pieces, the middle one a single byte, at every offset. */
	for (size_t k = 1; k + 1 < sl; k++) {
		size_t cuts[2] = {k, k + 1};

		snprintf(what, sizeof(what), "response cut at %zu and %zu", k,
			 k + 1);
		send_str(e, &c, TO_BE, req, what);
		send_cut(e, &c, TO_C, resp, sl, cuts, 2, what);
		expect_one(e, &c, w, what);
	}
	expect_be(e, SVC_HTTP, n + 1 + sl - 2, 0, 0, "after every cut");
	CHECK_EQ(e->w->st.l7_stopped, 0, "flows stopped");
	ph_env_close(e, 1);
}

/*
 * Chunked responses whose chunk data and trailer section look like
 * headers ("X-SPL: 9"): only the header block counts, at every cut; the
 * next response on the connection is read from its own start.
 */
static void
test_chunked(void **state)
{
	static const char resp[] =
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
		"X-SPL: 0.25\r\n\r\n"
		"c\r\nX-SPL: 9\r\n\r\n\r\n"
		"1C;ext=\"X-SPL: 9\"\r\n\r\nHTTP/1.1 500 X\r\nX-SPL: 9\r\n"
		"\r\n"
		"0\r\nX-SPL: 9\r\nX-Priority: 1\r\n\r\n";
	/* No X-SPL of its own, and a body that ends like a header line. */
	static const char plain[] =
		"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n"
		"c\r\n\r\nX-SPL: 9\r\n\r\n0\r\n\r\n";
	struct ph_env *e = env_up(state, L7_FLOWS);
	size_t sl = strlen(resp);
	const struct want ws[2] = {w_spl(200, 0.25), w_plain(404)};
	char what[64];
	struct conn c;

	conn_init(&c, SVC_HTTP, 40020, 77, 99);
	conn_open(e, &c);
	for (size_t k = 0; k < sl; k++) {
		snprintf(what, sizeof(what), "chunked response cut at %zu", k);
		send_str(e, &c, TO_BE, get_req, what);
		send_str(e, &c, TO_BE, get_req, what);
		send_cut(e, &c, TO_C, resp, sl, &k, k > 0, what);
		send_str(e, &c, TO_C, plain, what);
		expect_obs(e, &c, ws, 2, what);
	}
	/* The same bodies on a request: its chunks carry no X-Priority. */
	send_str(e, &c, TO_BE,
		 "POST /up HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
		 "f\r\nX-Priority: 5\r\n\r\n0\r\nX-Priority: 5\r\n\r\n",
		 "chunked request");
	send_str(e, &c, TO_C,
		 "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n",
		 "its response");
	expect_one(e, &c, w_plain(201), "chunked request");
	expect_be(e, SVC_HTTP, 2 * sl + 1, 0, 0, "chunked");
	CHECK_EQ(e->w->st.l7_stopped, 0, "flows stopped");
	ph_env_close(e, 1);
}

/*
 * Pipelined requests: responses are matched first in, first out, each
 * with the priority and expectation of its own request, whether they
 * come in one segment or cut across one another.
 */
static void
test_pipelined(void **state)
{
	static const char reqs[] =
		"GET /1 HTTP/1.1\r\nX-Priority: 1\r\nX-Expect-Ms: 100\r\n\r\n"
		"GET /2 HTTP/1.1\r\nX-Priority: 2\r\n\r\n"
		"POST /3 HTTP/1.1\r\nContent-Length: 4\r\n"
		"X-Expect-Ms: 300\r\n\r\nbody"
		"GET /4 HTTP/1.1\r\n\r\n";
	static const char resps[] =
		"HTTP/1.1 200 OK\r\nX-SPL: 0.1\r\nContent-Length: 3\r\n\r\nabc"
		"HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n"
		"HTTP/1.1 201 Created\r\nX-SPL: 0.3\r\nContent-Length: 0\r\n"
		"\r\n"
		"HTTP/1.1 404 Nope\r\nX-SPL: 0.4\r\nContent-Length: 0\r\n\r\n";
	struct ph_env *e = env_up(state, L7_FLOWS);
	struct want ws[4] = {w_spl(200, 0.1), w_plain(503), w_spl(201, 0.3),
			     w_spl(404, 0.4)};
	size_t rl = strlen(reqs), sl = strlen(resps);
	char what[64];
	struct conn c;

	ws[0].prio = 1;
	ws[0].expect = 100;
	ws[0].qos_met = 1;
	ws[1].prio = 2;
	ws[2].expect = 300;
	ws[2].qos_met = 1;
	conn_init(&c, SVC_HTTP, 40030, 0xabcdef, 0x123456);
	conn_open(e, &c);
	send_str(e, &c, TO_BE, reqs, "four requests in one segment");
	expect_be(e, SVC_HTTP, 0, 0, 4, "four requests");
	send_str(e, &c, TO_C, resps, "four responses in one segment");
	expect_obs(e, &c, ws, 4, "pipelined");
	expect_be(e, SVC_HTTP, 4, 1, 0, "four responses");
	/* Requests and responses cut at every offset. */
	for (size_t k = 1; k < sl; k++) {
		size_t rk = 1 + k % (rl - 1);

		snprintf(what, sizeof(what), "pipelined, cut at %zu/%zu", rk,
			 k);
		send_cut(e, &c, TO_BE, reqs, rl, &rk, 1, what);
		send_cut(e, &c, TO_C, resps, sl, &k, 1, what);
		expect_obs(e, &c, ws, 4, what);
	}
	/* Responses interleaved with later requests. */
	send_str(e, &c, TO_BE, "GET /a HTTP/1.1\r\nX-Priority: 7\r\n\r\n",
		 "request a");
	send_str(e, &c, TO_BE, "GET /b HTTP/1.1\r\nX-Priority: 8\r\n\r\n",
		 "request b");
	send_str(e, &c, TO_C, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
		 "response a");
	send_str(e, &c, TO_BE, "GET /c HTTP/1.1\r\nX-Priority: 9\r\n\r\n",
		 "request c");
	expect_be(e, SVC_HTTP, 4 * sl + 1, sl, 2, "two in flight");
	send_str(e, &c, TO_C,
		 "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
		 "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
		 "responses b and c");
	{
		struct want wi[3] = {w_plain(200), w_plain(200), w_plain(200)};

		wi[0].prio = 7;
		wi[1].prio = 8;
		wi[2].prio = 9;
		expect_obs(e, &c, wi, 3, "interleaved");
	}
	expect_be(e, SVC_HTTP, 4 * sl + 3, sl, 0, "interleaved");
	CHECK_EQ(e->w->st.l7_stopped, 0, "flows stopped");
	ph_env_close(e, 1);
}

/*
 * Responses without content whatever their fields say (HEAD, 204, 304),
 * and an interim 100 Continue: the response that follows each is read
 * from its own first byte.
 */
static void
test_no_content(void **state)
{
	struct ph_env *e = env_up(state, L7_FLOWS);
	struct want ws[3];
	struct conn c;

	conn_init(&c, SVC_HTTP, 40040, 5, 5);
	conn_open(e, &c);

	/* HEAD: Content-Length describes the GET it stands for. */
	send_str(e, &c, TO_BE,
		 "HEAD /h HTTP/1.1\r\nX-Priority: 4\r\n\r\n"
		 "GET /g HTTP/1.1\r\nX-Priority: 5\r\n\r\n",
		 "HEAD then GET");
	send_str(e, &c, TO_C,
		 "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nX-SPL: 0.5\r\n"
		 "\r\n"
		 "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-SPL: 0.6\r\n\r\nok",
		 "HEAD and GET responses");
	ws[0] = w_spl(200, 0.5);
	ws[0].prio = 4;
	ws[1] = w_spl(200, 0.6);
	ws[1].prio = 5;
	expect_obs(e, &c, ws, 2, "HEAD");

	/* 204 and 304: no content, Content-Length or not. */
	send_str(e, &c, TO_BE, get_req, "request");
	send_str(e, &c, TO_BE, get_req, "request");
	send_str(e, &c, TO_BE, get_req, "request");
	send_str(e, &c, TO_C,
		 "HTTP/1.1 204 No Content\r\nX-SPL: 0.1\r\n\r\n"
		 "HTTP/1.1 304 Not Modified\r\nContent-Length: 500\r\n"
		 "X-SPL: 0.2\r\n\r\n"
		 "HTTP/1.1 200 OK\r\nX-SPL: 0.3\r\nContent-Length: 0\r\n\r\n",
		 "204, 304, 200");
	ws[0] = w_spl(204, 0.1);
	ws[1] = w_spl(304, 0.2);
	ws[2] = w_spl(200, 0.3);
	expect_obs(e, &c, ws, 3, "204 and 304");
	expect_be(e, SVC_HTTP, 5, 0, 0, "no content");

	/* 100-continue: the interim answer reports nothing and leaves the
	 * request waiting; the body completes it; the final answer counts
	 * with the request's priority. */
	send_str(e, &c, TO_BE,
		 "POST /up HTTP/1.1\r\nExpect: 100-continue\r\n"
		 "Content-Length: 5\r\nX-Priority: 7\r\n\r\n",
		 "request head with Expect");
	expect_be(e, SVC_HTTP, 5, 0, 0, "head sent, body not");
	send_str(e, &c, TO_C, "HTTP/1.1 100 Continue\r\nX-SPL: 0.9\r\n\r\n",
		 "100 Continue");
	expect_none(e, &c, "100 Continue");
	expect_be(e, SVC_HTTP, 5, 0, 0, "100 Continue");
	send_str(e, &c, TO_BE, "hello", "request body");
	expect_be(e, SVC_HTTP, 5, 0, 1, "request body");
	send_str(e, &c, TO_C,
		 "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n"
		 "X-SPL: 0.2\r\n\r\n",
		 "final response");
	ws[0] = w_spl(201, 0.2);
	ws[0].prio = 7;
	expect_one(e, &c, ws[0], "after 100 Continue");

	/* An early final answer while the client still uploads: untimed,
	 * and the request leaves flight when it is done. */
	send_str(e, &c, TO_BE,
		 "PUT /big HTTP/1.1\r\nContent-Length: 10\r\n\r\n01234",
		 "half a request");
	send_str(e, &c, TO_C,
		 "HTTP/1.1 413 Too Large\r\nContent-Length: 0\r\n\r\n",
		 "early answer");
	ws[0] = w_plain(413);
	ws[0].untimed = 1;
	expect_one(e, &c, ws[0], "early answer");
	send_str(e, &c, TO_BE, "56789", "rest of the request");
	expect_be(e, SVC_HTTP, 7, 0, 0, "early answer");
	exchange(e, &c, get_req,
		 "HTTP/1.1 200 OK\r\nX-SPL: 0.7\r\nContent-Length: 0\r\n\r\n",
		 "next exchange");
	expect_one(e, &c, w_spl(200, 0.7), "after the early answer");
	CHECK_EQ(e->w->st.l7_stopped, 0, "flows stopped");
	ph_env_close(e, 1);
}

/*
 * Retransmissions, whole or overlapping new bytes, and keep-alive
 * probes: forwarded as they are, read once.
 */
static void
test_retransmit(void **state)
{
	static const char req[] = "GET /r HTTP/1.1\r\nX-Priority: 6\r\n\r\n";
	static const char resp[] = "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n"
				   "X-SPL: 0.75\r\n\r\nbody";
	struct ph_env *e = env_up(state, L7_FLOWS);
	size_t sl = strlen(resp), rl = strlen(req);
	struct want w = w_spl(200, 0.75);
	uint32_t r0, q0;
	struct conn c;

	w.prio = 6;
	conn_init(&c, SVC_HTTP, 40050, 3000, 4000);
	conn_open(e, &c);

	/* The request twice, the second time whole again. */
	q0 = c.nxt[TO_BE];
	send_str(e, &c, TO_BE, req, "request");
	xmit(e, &c, TO_BE, PB_PSH | PB_ACK, q0, req, (uint16_t)rl,
	     "request retransmitted");
	expect_be(e, SVC_HTTP, 0, 0, 1, "request retransmitted");
	/* The response: its first 20 bytes, those again, then bytes 10..40
	 * (overlapping), then all of it again, then the rest. */
	r0 = c.nxt[TO_C];
	xmit(e, &c, TO_C, PB_ACK, r0, resp, 20, "response 0..20");
	c.nxt[TO_C] = r0 + 20;
	xmit(e, &c, TO_C, PB_ACK, r0, resp, 20, "response 0..20 again");
	xmit(e, &c, TO_C, PB_ACK, r0 + 10, resp + 10, 30,
	     "response 10..40, overlapping");
	c.nxt[TO_C] = r0 + 40;
	xmit(e, &c, TO_C, PB_ACK, r0, resp, 40, "response 0..40 again");
	xmit(e, &c, TO_C, PB_PSH | PB_ACK, r0 + 40, resp + 40,
	     (uint16_t)(sl - 40), "response 40..end");
	c.nxt[TO_C] = r0 + (uint32_t)sl;
	expect_one(e, &c, w, "retransmitted response");
	/* The whole exchange again, after its end; a keep-alive probe (one
	 * old byte) each way. */
	xmit(e, &c, TO_C, PB_PSH | PB_ACK, r0, resp, (uint16_t)sl,
	     "whole response again");
	xmit(e, &c, TO_BE, PB_PSH | PB_ACK, q0, req, (uint16_t)rl,
	     "whole request again");
	xmit(e, &c, TO_BE, PB_ACK, c.nxt[TO_BE] - 1, req + rl - 1, 1,
	     "client keep-alive probe");
	xmit(e, &c, TO_C, PB_ACK, c.nxt[TO_C] - 1, resp + sl - 1, 1,
	     "backend keep-alive probe");
	expect_none(e, &c, "retransmissions after the end");
	expect_be(e, SVC_HTTP, 1, 0, 0, "retransmissions");
	exchange(e, &c, req, resp, "next exchange");
	expect_one(e, &c, w, "next exchange");
	expect_be(e, SVC_HTTP, 2, 0, 0, "next exchange");
	CHECK_EQ(e->w->st.l7_stopped, 0, "flows stopped");
	ph_env_close(e, 1);
}

/*
 * A segment out of order stops the following of its flow: nothing more
 * is attributed on it, its requests leave flight, every frame is still
 * forwarded, and other flows are not disturbed.
 */
static void
test_out_of_order(void **state)
{
	static const char resp[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n"
				   "X-SPL: 0.5\r\n\r\n";
	struct ph_env *e = env_up(state, L7_FLOWS);
	size_t sl = strlen(resp);
	struct conn c, d;
	uint32_t r0;

	conn_init(&c, SVC_HTTP, 40060, 100, 200);
	conn_open(e, &c);
	conn_init(&d, SVC_HTTP, 40061, 300, 400);
	conn_open(e, &d);
	exchange(e, &c, get_req, resp, "before the gap");
	expect_one(e, &c, w_spl(200, 0.5), "before the gap");

	/* Two requests, then the second half of the first response before
	 * its first half. */
	send_str(e, &c, TO_BE, get_req, "request");
	send_str(e, &c, TO_BE, get_req, "request");
	expect_be(e, SVC_HTTP, 1, 0, 2, "two in flight");
	r0 = c.nxt[TO_C];
	xmit(e, &c, TO_C, PB_ACK, r0 + 20, resp + 20, (uint16_t)(sl - 20),
	     "second half first");
	CHECK_EQ(e->w->st.l7_stopped, 1, "flows stopped after a gap");
	expect_be(e, SVC_HTTP, 1, 0, 0, "flow stopped");
	xmit(e, &c, TO_C, PB_ACK, r0, resp, 20, "first half");
	c.nxt[TO_C] = r0 + (uint32_t)sl;
	send_str(e, &c, TO_C, resp, "second response");
	exchange(e, &c, get_req, resp, "after the gap");
	expect_none(e, &c, "after the gap");
	expect_be(e, SVC_HTTP, 1, 0, 0, "after the gap");

	/* A gap in the requests, the other flow meanwhile. */
	send_str(e, &d, TO_BE, get_req, "other flow");
	xmit(e, &d, TO_BE, PB_ACK, d.nxt[TO_BE] + 5, get_req, 10,
	     "request from the future");
	CHECK_EQ(e->w->st.l7_stopped, 2, "flows stopped after a gap");
	send_str(e, &d, TO_C, resp, "response");
	expect_none(e, &d, "request gap");
	expect_be(e, SVC_HTTP, 1, 0, 0, "request gap");
	ph_settle(e);
	CHECK_EQ(e->w->st.l7_flows, 2, "flows followed");

	/* A new flow takes the pool entries back and is followed. */
	conn_init(&c, SVC_HTTP, 40062, 500, 600);
	conn_open(e, &c);
	exchange(e, &c, get_req, resp, "new flow");
	expect_one(e, &c, w_spl(200, 0.5), "new flow");
	CHECK_EQ(e->w->st.l7_stopped, 2, "flows stopped");
	ph_env_close(e, 1);
}

/* A response header block with @p lines, and what it must yield. */
struct hostile_row {
	const char *lines;
	struct want w;
};

#define NO_SPL                                                                 \
	{                                                                      \
		.status = 200, .prio = -1, .expect = -1, .spl = -1, .cpu = -1  \
	}
#define SPL(v)                                                                 \
	{                                                                      \
		.status = 200, .prio = -1, .expect = -1, .spl = (v), .cpu = -1 \
	}

static const struct hostile_row hostile_resp[] = {
	{"X-SPL: NaN\r\n", NO_SPL},
	{"X-SPL: nan\r\n", NO_SPL},
	{"X-SPL: inf\r\n", NO_SPL},
	{"X-SPL: Infinity\r\n", NO_SPL},
	{"X-SPL: -0.5\r\n", NO_SPL},
	{"X-SPL: -0\r\n", NO_SPL},
	{"X-SPL: +0.5\r\n", NO_SPL},
	{"X-SPL: 1e309\r\n", NO_SPL},
	{"X-SPL: 1e2\r\n", NO_SPL},
	{"X-SPL: 0x10\r\n", NO_SPL},
	{"X-SPL: 0,5\r\n", NO_SPL},
	{"X-SPL: .5\r\n", NO_SPL},
	{"X-SPL: 5.\r\n", NO_SPL},
	{"X-SPL: \"0.5\"\r\n", NO_SPL},
	{"X-SPL: 0.5 0.6\r\n", NO_SPL},
	{"X-SPL: 0.5;q=1\r\n", NO_SPL},
	{"X-SPL:\r\n", NO_SPL},
	{"X-SPL:    \r\n", NO_SPL},
	{"X-SPL: 1000.5\r\n", NO_SPL},
	{"X-SPL: 12345678901234567890\r\n", NO_SPL},
	{"X-SPL: 100000000000000000000000000000000000000000000000000000000"
	 "000000000000000000000000000000000000000000000000000000000000000"
	 "000000000000000000000000000000000000000000000000000000000000000"
	 "000000000000000\r\n",
	 NO_SPL},
	{"X-SPL: 0.00000000000000000000000000000000000000000000000000000000"
	 "000000000000000000000000000000000000000000000000000000000000000"
	 "000000000000000000000000000000000000000000000000000000000000000"
	 "00000000000001\r\n",
	 NO_SPL},
	{"X-SPL: 0.5\r\nX-SPL: 0.5\r\n", NO_SPL},
	{"X-SPL: 0.5\r\nx-spl: 0.7\r\n", NO_SPL},
	{"X-Debug: X-SPL: 0.1\r\n", NO_SPL},
	{"X-SPLX: 0.1\r\nOld-X-SPL: 0.2\r\n", NO_SPL},
	{"X-SPL-Time: 5\r\n", NO_SPL},
	/* Accepted: the edges of what is valid. */
	{"x-spl: 0.5\r\n", SPL(0.5)},
	{"X-SPL:0\r\n", SPL(0)},
	{"X-SPL: 1000\r\n", SPL(1000)},
	{"X-SPL: 007.5\r\n", SPL(7.5)},
	{"X-SPL: \t 0.8 \t\r\n", SPL(0.8)},
	{"X-SPL: 0.80000000000000004\r\n", SPL(0.8)},
	/* X-SPL-Time rejected: the load counts as fresh. */
	{"X-SPL: 0.5\r\nX-SPL-Time: -5\r\n", SPL(0.5)},
	{"X-SPL: 0.5\r\nX-SPL-Time: 1.5\r\n", SPL(0.5)},
	{"X-SPL: 0.5\r\nX-SPL-Time: NaN\r\n", SPL(0.5)},
	{"X-SPL: 0.5\r\nX-SPL-Time: 253402300800000\r\n", SPL(0.5)},
	{"X-SPL: 0.5\r\nX-SPL-Time: 99999999999999999999999999\r\n", SPL(0.5)},
	{"X-SPL: 0.5\r\nX-SPL-Time: 1\r\nX-SPL-Time: 1\r\n", SPL(0.5)},
	/* ORCA reports are taken whole or not at all. */
	{"endpoint-load-metrics: TEXT cpu_utilization=NaN\r\n", NO_SPL},
	{"endpoint-load-metrics: TEXT cpu_utilization=-1\r\n", NO_SPL},
	{"endpoint-load-metrics: TEXT cpu_utilization=0.5, "
	 "cpu_utilization=0.6\r\n",
	 NO_SPL},
	{"endpoint-load-metrics: TEXT cpu_utilization=0.5, "
	 "mem_utilization=1.5\r\n",
	 NO_SPL},
	{"endpoint-load-metrics: JSON {\"cpu_utilization\": 0.5}\r\n", NO_SPL},
	{"endpoint-load-metrics: TEXT cpu_utilization=0.5\r\n"
	 "endpoint-load-metrics: TEXT cpu_utilization=0.5\r\n",
	 NO_SPL},
};

/* Hostile request fields: the response's record says nothing of them. */
static const char *const hostile_req[] = {
	"X-Priority: NaN\r\nX-Expect-Ms: inf\r\n",
	"X-Priority: -1\r\nX-Expect-Ms: -1\r\n",
	"X-Priority: 101\r\nX-Expect-Ms: 0\r\n",
	"X-Priority: 1.5\r\nX-Expect-Ms: 3600001\r\n",
	"X-Priority: 1e1\r\nX-Expect-Ms: 1e3\r\n",
	"X-Priority: 1\r\nX-Priority: 1\r\nX-Expect-Ms: 5\r\n"
	"X-Expect-Ms: 5\r\n",
	"X-Priority: 99999999999999999999999\r\nX-Expect-Ms: "
	"1000000000000000000000000000000000000000000000000000000000000000"
	"0000000000000000000000000000000000000000000000000000000000000000"
	"0000000000000000000000000000000000000000000000000000000000000000"
	"00000000\r\n",
};

/*
 * Hostile values: rejected without an SPL record (or a priority, an
 * expectation, an ORCA record), while the HTTP record still comes; also
 * cut at a few offsets and in header blocks longer than a segment.
 */
static void
test_hostile(void **state)
{
	struct ph_env *e = env_up(state, L7_FLOWS);
	static char req[MSG_MAX], resp[MSG_MAX];
	uint64_t nresp = 0;
	struct conn c;
	char what[96];
	int n;

	conn_init(&c, SVC_HTTP, 40070, 0x7000, 0x8000);
	conn_open(e, &c);
	for (unsigned int i = 0; i < NELEM(hostile_resp); i++) {
		const struct hostile_row *h = &hostile_resp[i];

		n = snprintf(resp, sizeof(resp),
			     "HTTP/1.1 200 OK\r\nServer: t\r\n%s"
			     "Content-Length: 0\r\n\r\n",
			     h->lines);
		for (size_t k = 0; k < 3; k++) {
			size_t cut = k == 0 ? 0 : 20 + k * 7;

			snprintf(what, sizeof(what),
				 "row %u, cut at %zu: %.40s", i, cut, h->lines);
			send_str(e, &c, TO_BE, get_req, what);
			send_cut(e, &c, TO_C, resp, (size_t)n, &cut, cut > 0,
				 what);
			expect_one(e, &c, h->w, what);
			nresp++;
		}
	}
	for (unsigned int i = 0; i < NELEM(hostile_req); i++) {
		n = snprintf(req, sizeof(req),
			     "GET /h HTTP/1.1\r\nHost: svc\r\n%s\r\n",
			     hostile_req[i]);
		snprintf(what, sizeof(what), "request row %u: %.40s", i,
			 hostile_req[i]);
		send_seg(e, &c, TO_BE, req, (size_t)n, 30, what);
		send_str(e, &c, TO_C,
			 "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", what);
		expect_one(e, &c, w_plain(200), what);
		nresp++;
	}

	/* A header block of 4000 bytes, three segments: X-SPL after it is
	 * read. */
	n = snprintf(resp, sizeof(resp),
		     "HTTP/1.1 200 OK\r\nX-Filler: %03900d\r\nX-SPL: 0.625\r\n"
		     "Content-Length: 0\r\n\r\n",
		     7);
	send_str(e, &c, TO_BE, get_req, "long header block");
	send_seg(e, &c, TO_C, resp, (size_t)n, SEG_MAX, "long header block");
	expect_one(e, &c, w_spl(200, 0.625), "long header block");
	nresp++;
	/* An X-SPL value longer than a segment: too long, rejected. */
	n = snprintf(resp, sizeof(resp),
		     "HTTP/1.1 200 OK\r\nX-SPL: 0.%02000d\r\n"
		     "Content-Length: 0\r\n\r\n",
		     5);
	send_str(e, &c, TO_BE, get_req, "X-SPL longer than a segment");
	send_seg(e, &c, TO_C, resp, (size_t)n, SEG_MAX,
		 "X-SPL longer than a segment");
	expect_one(e, &c, w_plain(200), "X-SPL longer than a segment");
	nresp++;
	/* The same across many small segments. */
	send_str(e, &c, TO_BE, get_req, "X-SPL over 100-byte segments");
	send_seg(e, &c, TO_C, resp, (size_t)n, 100,
		 "X-SPL over 100-byte segments");
	expect_one(e, &c, w_plain(200), "X-SPL over 100-byte segments");
	nresp++;
	/* And a request whose X-Priority value spans segments. */
	n = snprintf(req, sizeof(req),
		     "GET / HTTP/1.1\r\nX-Priority: %01500d\r\n\r\n", 3);
	send_seg(e, &c, TO_BE, req, (size_t)n, 700,
		 "X-Priority longer than a segment");
	send_str(e, &c, TO_C, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
		 "X-Priority longer than a segment");
	expect_one(e, &c, w_plain(200), "X-Priority longer than a segment");
	nresp++;
	expect_be(e, SVC_HTTP, nresp, 0, 0, "hostile values");
	CHECK_EQ(e->w->st.l7_stopped, 0, "flows stopped");
	/* The following went on through all of it. */
	exchange(e, &c, get_req,
		 "HTTP/1.1 200 OK\r\nX-SPL: 0.125\r\nContent-Length: 0\r\n\r\n",
		 "last exchange");
	expect_one(e, &c, w_spl(200, 0.125), "last exchange");
	ph_env_close(e, 1);
}

/*
 * Header blocks the follower cannot frame with certainty (RFC 9112 5.1,
 * 5.2, 2.2): whitespace before the colon, obsolete folding, a bare CR.
 * Each stops its flow before anything of the block is used: no record at
 * all, not even the HTTP one, and nothing afterwards on that flow.
 */
static void
test_unframeable(void **state)
{
	static const char *const resp_lines[] = {
		"X-SPL : 0.5\r\n",
		"X-SPL: 0.5\r\nX-SPL : 0.5\r\n",
		"X-SPL: 0.5\r\n 0.6\r\n",
		"X-SPL: 0.5\r0.6\r\n",
	};
	static const char *const req_lines[] = {
		"X-Priority : 1\r\n",
		"X-Priority: 1\r\n\t2\r\n",
	};
	static const char ok[] = "HTTP/1.1 200 OK\r\nX-SPL: 0.5\r\n"
				 "Content-Length: 0\r\n\r\n";
	struct ph_env *e = env_up(state, L7_FLOWS);
	unsigned int nb = NELEM(resp_lines) + NELEM(req_lines);
	char msg[256], what[96];

	for (unsigned int i = 0; i < nb; i++) {
		int is_req = i >= NELEM(resp_lines);
		const char *l = is_req ? req_lines[i - NELEM(resp_lines)]
				       : resp_lines[i];
		struct conn c;

		snprintf(what, sizeof(what), "unframeable %s: %.30s",
			 is_req ? "request" : "response", l);
		conn_init(&c, SVC_HTTP, (uint16_t)(40110 + i), i * 77u,
			  i * 99u);
		conn_open(e, &c);
		exchange(e, &c, get_req, ok, what);
		expect_one(e, &c, w_spl(200, 0.5), what);
		if (is_req) {
			snprintf(msg, sizeof(msg), "GET / HTTP/1.1\r\n%s\r\n",
				 l);
			send_str(e, &c, TO_BE, msg, what);
			send_str(e, &c, TO_C, ok, what);
		} else {
			snprintf(msg, sizeof(msg),
				 "HTTP/1.1 200 OK\r\n%s"
				 "Content-Length: 0\r\n\r\n",
				 l);
			send_str(e, &c, TO_BE, get_req, what);
			send_str(e, &c, TO_C, msg, what);
		}
		CHECK_EQ(e->w->st.l7_stopped, i + 1, "flows stopped");
		exchange(e, &c, get_req, ok, what);
		expect_none(e, &c, what);
		expect_be(e, SVC_HTTP, i + 1, 0, 0, what);
	}
	ph_env_close(e, 1);
}

static uint32_t
sched_errors(const struct ph_env *e)
{
	return e->w->ops[SVC_HTTP]->errors(e->w->sched[SVC_HTTP], 0);
}

/*
 * 5xx answers raise the adaptive scheduler's error count of the backend,
 * 4xx do not, and a 2xx resets it (err-memory 1); the count the scheduler
 * weighs is the one shown (sched_errors). The handshake of an http flow does
 * not reset it: only responses judge the backend.
 */
static void
test_errors(void **state)
{
	static const uint16_t codes[] = {500, 502, 503, 599};
	struct ph_env *e = env_up(state, L7_FLOWS);
	char resp[128];
	struct conn c, d;
	uint32_t errs = 0;

	conn_init(&c, SVC_HTTP, 40080, 11, 22);
	conn_open(e, &c);
	CHECK_EQ(sched_errors(e), 0, "errors after the handshake");
	for (unsigned int i = 0; i < NELEM(codes); i++) {
		snprintf(resp, sizeof(resp),
			 "HTTP/1.1 %u Err\r\nContent-Length: 0\r\n\r\n",
			 codes[i]);
		exchange(e, &c, get_req, resp, "5xx");
		expect_one(e, &c, w_plain(codes[i]), "5xx");
		errs++;
		CHECK_EQ(sched_errors(e), errs, "scheduler errors");
		CHECK_EQ(bst(e, SVC_HTTP)->sched_errors, errs,
			 "sched_errors shown");
	}
	expect_be(e, SVC_HTTP, 4, 4, 0, "four 5xx");
	exchange(e, &c, get_req,
		 "HTTP/1.1 404 Nope\r\nContent-Length: 0\r\n\r\n", "404");
	expect_one(e, &c, w_plain(404), "404");
	CHECK_EQ(sched_errors(e), 0, "scheduler errors after a 404");
	send_str(e, &c, TO_BE, get_req, "two requests");
	exchange(e, &c, get_req,
		 "HTTP/1.1 500 Err\r\nContent-Length: 0\r\n\r\n"
		 "HTTP/1.1 500 Err\r\nContent-Length: 0\r\n\r\n",
		 "two 500");
	expect_obs(e, &c, (const struct want[]){w_plain(500), w_plain(500)}, 2,
		   "two 500");
	CHECK_EQ(sched_errors(e), 2, "scheduler errors after two 500");
	/* A new flow's handshake leaves them; its 200 resets them. */
	conn_init(&d, SVC_HTTP, 40081, 33, 44);
	conn_open(e, &d);
	CHECK_EQ(sched_errors(e), 2, "scheduler errors after a handshake");
	CHECK_EQ(bst(e, SVC_HTTP)->sched_errors, 2, "sched_errors shown");
	exchange(e, &d, get_req, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
		 "200");
	expect_one(e, &d, w_plain(200), "200");
	CHECK_EQ(sched_errors(e), 0, "scheduler errors after a 200");
	CHECK_EQ(bst(e, SVC_HTTP)->sched_errors, 0, "sched_errors shown");
	expect_be(e, SVC_HTTP, 8, 6, 0, "errors");
	ph_env_close(e, 1);
}

/*
 * The handshake: sequence numbers that wrap during the exchange; a SYN
 * the client repeats because the SYN-ACK was lost; a new connection on the
 * tuple of a closed one, followed from its own handshake.
 */
static void
test_handshake(void **state)
{
	static const char resp[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n"
				   "X-SPL: 0.5\r\n\r\n";
	struct ph_env *e = env_up(state, L7_FLOWS);
	struct conn c;

	/* Both streams wrap in the middle of the first message. */
	conn_init(&c, SVC_HTTP, 40090, 0xfffffff0u, 0xffffffe0u);
	conn_open(e, &c);
	send_seg(e, &c, TO_BE, get_req, strlen(get_req), 7, "wrapping request");
	send_seg(e, &c, TO_C, resp, strlen(resp), 9, "wrapping response");
	expect_one(e, &c, w_spl(200, 0.5), "sequence numbers wrap");

	/* SYN, SYN-ACK lost on its way, SYN again, SYN-ACK again. */
	conn_init(&c, SVC_HTTP, 40091, 1u << 31, 12345);
	xmit(e, &c, TO_BE, PB_SYN, c.iss, NULL, 0, "client SYN");
	xmit(e, &c, TO_C, PB_SYN | PB_ACK, c.irs, NULL, 0, "backend SYN-ACK");
	xmit(e, &c, TO_BE, PB_SYN, c.iss, NULL, 0, "client SYN again");
	xmit(e, &c, TO_C, PB_SYN | PB_ACK, c.irs, NULL, 0,
	     "backend SYN-ACK again");
	xmit(e, &c, TO_BE, PB_ACK, c.nxt[TO_BE], NULL, 0, "client ACK");
	exchange(e, &c, get_req, resp, "after a repeated SYN");
	expect_one(e, &c, w_spl(200, 0.5), "after a repeated SYN");

	/* Both sides close; the same tuple opens again with new sequence
	 * numbers and is followed from them. */
	xmit(e, &c, TO_BE, PB_FIN | PB_ACK, c.nxt[TO_BE], NULL, 0,
	     "client FIN");
	c.nxt[TO_BE]++;
	xmit(e, &c, TO_C, PB_FIN | PB_ACK, c.nxt[TO_C], NULL, 0, "backend FIN");
	c.nxt[TO_C]++;
	xmit(e, &c, TO_BE, PB_ACK, c.nxt[TO_BE], NULL, 0, "client last ACK");
	c.iss = 777777;
	c.irs = 888888;
	c.nxt[TO_BE] = c.iss + 1;
	c.nxt[TO_C] = c.irs + 1;
	c.sport = 0; /* a new flow: a SNAT port of its own */
	conn_open(e, &c);
	exchange(e, &c, get_req, resp, "same tuple, new connection");
	expect_one(e, &c, w_spl(200, 0.5), "same tuple, new connection");
	expect_be(e, SVC_HTTP, 3, 0, 0, "handshakes");
	CHECK_EQ(e->w->st.l7_stopped, 0, "flows stopped");
	ph_env_close(e, 1);
}

/*
 * A pool of two entries: a third flow is forwarded but not followed, and
 * counted; a flow's RST gives its entry back, in-flight requests
 * included, and so does a flow closed by both sides.
 */
static void
test_pool(void **state)
{
	static const char resp[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n"
				   "X-SPL: 0.5\r\n\r\n";
	struct ph_env *e = env_up(state, 2);
	struct conn c[4];

	for (int i = 0; i < 3; i++) {
		conn_init(&c[i], SVC_HTTP, (uint16_t)(40100 + i),
			  (uint32_t)i * 1000, (uint32_t)i * 5000);
		conn_open(e, &c[i]);
	}
	exchange(e, &c[2], get_req, resp, "third flow");
	expect_none(e, &c[2], "third flow, pool empty");
	exchange(e, &c[1], get_req, resp, "second flow");
	expect_one(e, &c[1], w_spl(200, 0.5), "second flow");
	send_str(e, &c[0], TO_BE, get_req, "first flow, request");
	expect_be(e, SVC_HTTP, 1, 0, 1, "one in flight");
	xmit(e, &c[0], TO_C, PB_RST | PB_ACK, c[0].nxt[TO_C], NULL, 0,
	     "backend RST");
	expect_be(e, SVC_HTTP, 1, 0, 0, "reset");
	ph_settle(e);
	CHECK_EQ(e->w->st.l7_flows, 2, "flows followed");
	CHECK_EQ(e->w->st.l7_pool_full, 1, "flows the pool had no room for");
	conn_init(&c[3], SVC_HTTP, 40103, 9, 9);
	conn_open(e, &c[3]);
	exchange(e, &c[3], get_req, resp, "fourth flow");
	expect_one(e, &c[3], w_spl(200, 0.5), "fourth flow");
	/* A flow closed by both FINs gives its entry back at once, not
	 * when its TIME_WAIT expires: connection churn must not empty the
	 * pool. */
	xmit(e, &c[1], TO_BE, PB_FIN | PB_ACK, c[1].nxt[TO_BE], NULL, 0,
	     "second flow, client FIN");
	c[1].nxt[TO_BE]++;
	xmit(e, &c[1], TO_C, PB_FIN | PB_ACK, c[1].nxt[TO_C], NULL, 0,
	     "second flow, backend FIN");
	c[1].nxt[TO_C]++;
	xmit(e, &c[1], TO_BE, PB_ACK, c[1].nxt[TO_BE], NULL, 0,
	     "second flow, last ACK");
	conn_init(&c[2], SVC_HTTP, 40104, 77, 88);
	conn_open(e, &c[2]);
	exchange(e, &c[2], get_req, resp, "fifth flow");
	expect_one(e, &c[2], w_spl(200, 0.5), "fifth flow, after a close");
	CHECK_EQ(e->w->st.l7_pool_full, 1, "flows the pool had no room for");
	CHECK_EQ(e->w->st.l7_stopped, 0, "flows stopped");
	ph_env_close(e, 1);
}

/*
 * While a flow waits for its backend (SYN_SENT) its L7 slot holds the copy
 * of the SYN kept for a retry, never an L7 entry. A client that leaves
 * SYN_SENT by a RST or a FIN gives the copy back there and then: the
 * copies do not leak, and nothing the flow does afterwards reaches an
 * entry, another flow's or one past the pool (of 2 here, copies being
 * indexed up to 4096). The followed flow opened first is still followed.
 */
static void
test_syn_copy_not_entry(void **state)
{
	static const char resp[] = "HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n"
				   "\r\n";
	struct ph_env *e = env_up(state, 2);
	struct conn a, b, d, x[3];
	uint32_t nfree;

	conn_init(&a, SVC_HTTP, 40200, 1000, 2000);
	conn_open(e, &a);
	CHECK_EQ(e->w->hold_nfree, e->w->hold_cap, "after a handshake");

	/* Any service: SYN, client RST, SYN again on the same tuple. */
	conn_init(&b, SVC_L4, 40201, 5000, 6000);
	xmit(e, &b, TO_BE, PB_SYN, b.iss, NULL, 0, "L4 SYN");
	xmit(e, &b, TO_BE, PB_RST, b.iss + 1, NULL, 0, "L4 client RST");
	CHECK_EQ(e->w->hold_nfree, e->w->hold_cap, "after the client RST");
	conn_init(&b, SVC_L4, 40201, 7000, 8000);
	b.sport = 0;
	xmit(e, &b, TO_BE, PB_SYN, b.iss, NULL, 0, "L4 SYN again");
	xmit(e, &b, TO_C, PB_SYN | PB_ACK, b.irs, NULL, 0, "L4 SYN-ACK");
	xmit(e, &b, TO_BE, PB_ACK, b.nxt[TO_BE], NULL, 0, "L4 client ACK");

	/* The same on the http service, and the FIN variant on the L4 one
	 * (the flow stays CLOSING). */
	conn_init(&d, SVC_HTTP, 40205, 15000, 16000);
	xmit(e, &d, TO_BE, PB_SYN, d.iss, NULL, 0, "http SYN");
	xmit(e, &d, TO_BE, PB_RST, d.iss + 1, NULL, 0, "http client RST");
	conn_init(&d, SVC_HTTP, 40205, 17000, 18000);
	d.sport = 0;
	xmit(e, &d, TO_BE, PB_SYN, d.iss, NULL, 0, "http SYN again");
	/* A new flow, whose copy waits for the backend's answer. */
	xmit(e, &d, TO_C, PB_SYN | PB_ACK, d.irs, NULL, 0, "http SYN-ACK");
	conn_init(&d, SVC_L4, 40206, 19000, 20000);
	xmit(e, &d, TO_BE, PB_SYN, d.iss, NULL, 0, "L4 SYN");
	xmit(e, &d, TO_BE, PB_FIN | PB_ACK, d.iss + 1, NULL, 0,
	     "L4 client FIN");
	xmit(e, &d, TO_BE, PB_PSH | PB_ACK, d.iss + 1, get_req,
	     (uint16_t)strlen(get_req), "L4 client bytes after its FIN");
	CHECK_EQ(e->w->hold_nfree, e->w->hold_cap,
		 "after the FIN, and a reopened tuple's SYN-ACK");

	/* SYN, client FIN, bytes again: the flow stays CLOSING. */
	conn_init(&d, SVC_HTTP, 40202, 9000, 10000);
	xmit(e, &d, TO_BE, PB_SYN, d.iss, NULL, 0, "http SYN");
	xmit(e, &d, TO_BE, PB_FIN | PB_ACK, d.iss + 1, NULL, 0,
	     "http client FIN");
	CHECK_EQ(e->w->hold_nfree, e->w->hold_cap, "after the client FIN");
	xmit(e, &d, TO_BE, PB_PSH | PB_ACK, d.iss + 1, get_req,
	     (uint16_t)strlen(get_req), "http client bytes after its FIN");

	/* Copies indexed past the L7 pool: three SYNs wait for their
	 * backend, a fourth flow resets and sends on. */
	for (int i = 0; i < 3; i++) {
		conn_init(&x[i], SVC_L4, (uint16_t)(40210 + i),
			  (uint32_t)i * 100000, (uint32_t)i * 100000 + 7);
		xmit(e, &x[i], TO_BE, PB_SYN, x[i].iss, NULL, 0,
		     "unanswered SYN");
	}
	CHECK_EQ(e->w->hold_nfree, e->w->hold_cap - 3, "three SYNs waiting");
	conn_init(&d, SVC_L4, 40203, 11000, 12000);
	xmit(e, &d, TO_BE, PB_SYN, d.iss, NULL, 0, "fourth SYN");
	xmit(e, &d, TO_BE, PB_RST, d.iss + 1, NULL, 0, "fourth flow's RST");
	xmit(e, &d, TO_BE, PB_FIN | PB_ACK, d.iss + 1, NULL, 0,
	     "fourth flow's FIN after its RST");
	for (int i = 0; i < 3; i++)
		xmit(e, &x[i], TO_C, PB_SYN | PB_ACK, x[i].irs, NULL, 0,
		     "late SYN-ACK");
	CHECK_EQ(e->w->hold_nfree, e->w->hold_cap, "every copy given back");

	/* The first flow's answers are still read. */
	exchange(e, &a, get_req, resp, "followed flow");
	expect_one(e, &a, w_plain(503), "followed flow, after the others");
	expect_be(e, SVC_HTTP, 1, 1, 0, "followed flow");
	CHECK_EQ(e->w->st.l7_stopped, 0, "flows stopped");

	/* A SYN the copy pool has no room for is counted. */
	nfree = e->w->hold_nfree;
	e->w->hold_nfree = 0;
	conn_init(&d, SVC_L4, 40204, 13000, 14000);
	xmit(e, &d, TO_BE, PB_SYN, d.iss, NULL, 0, "SYN, copy pool empty");
	e->w->hold_nfree = nfree;
	CHECK_EQ(e->w->st.syn_hold_full, 1, "SYNs not copied");
	ph_env_close(e, 1);
}

/* State of the flow of @p c: an enum lb_flow_state, or -1 for none. */
static int
flow_state(const struct ph_env *e, const struct conn *c)
{
	struct lb_flow_key k;
	enum lb_flow_dir dir;
	uint32_t idx;

	lb_flow_key_set(&k, htonl(IP_C), htonl(c->vip), htons(c->cport),
			htons(VPORT), PB_PROTO_TCP);
	idx = lb_flow_lookup(e->w->ft, &k, &dir);
	return idx == LB_FLOW_NONE ? -1 : lb_flow_get(e->w->ft, idx)->state;
}

/* Sends one segment with TTL 1: nothing may leave, one TTL drop. */
static void
xmit_ttl1(struct ph_env *e, struct conn *c, enum dir d, uint8_t flags,
	  uint32_t seq, const void *data, uint16_t len, const char *what)
{
	static struct pb_frame in;
	uint32_t ack = d == TO_BE ? c->nxt[TO_C] : c->nxt[TO_BE];
	uint64_t before = e->w->st.drop[LB_DROP_TTL];
	uint16_t iport = d == TO_BE ? 0 : 1;

	seg_frame(&in, c, d, 0, flags, seq, ack, c->ip_id[d]++, data, len);
	in.b[ETH + 8] = 1;
	pb_fix_ip_csum(&in);
	ph_rx(e, iport, &in);
	if (ph_take(e, 0, 0, NULL, 0) + ph_take(e, 1, 0, NULL, 0) != 0)
		fail_msg("%s: forwarded", what);
	CHECK_EQ(e->w->st.drop[LB_DROP_TTL], before + 1, what);
}

/*
 * Handshakes left half open (SYN, the backend's SYN-ACK, no ACK from the
 * client: spoofed SYNs) take no L7 entry, however many: with a pool of 2,
 * a real client that completes its handshake after six of them is still
 * followed.
 */
static void
test_half_open(void **state)
{
	static const char resp[] = "HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n"
				   "X-SPL: 0.5\r\n\r\n";
	struct ph_env *e = env_up(state, 2);
	struct conn h[6], c;

	for (int i = 0; i < 6; i++) {
		conn_init(&h[i], SVC_HTTP, (uint16_t)(40400 + i),
			  (uint32_t)i * 7000 + 1, (uint32_t)i * 9000 + 3);
		xmit(e, &h[i], TO_BE, PB_SYN, h[i].iss, NULL, 0, "spoofed SYN");
		xmit(e, &h[i], TO_C, PB_SYN | PB_ACK, h[i].irs, NULL, 0,
		     "SYN-ACK to nobody");
		CHECK_EQ(flow_state(e, &h[i]), LB_FLOW_SYN_RECV, "half open");
	}
	conn_init(&c, SVC_HTTP, 40410, 123456, 654321);
	conn_open(e, &c);
	exchange(e, &c, get_req, resp, "real client");
	expect_one(e, &c, w_spl(503, 0.5), "real client, after half opens");
	expect_be(e, SVC_HTTP, 1, 1, 0, "real client");
	ph_settle(e);
	CHECK_EQ(e->w->st.l7_pool_full, 0, "flows the pool had no room for");
	CHECK_EQ(e->w->st.l7_flows, 1, "flows followed");
	ph_env_close(e, 1);
}

/*
 * A packet that arrives with TTL 1 is dropped before it changes anything:
 * bytes the backend never gets are not read by the follower, a RST that
 * reaches neither side closes nothing, a SYN opens no flow.
 */
static void
test_ttl_first(void **state)
{
	static const char junk[] = "\x16\x03\x01 not a request\r\n\r\n";
	static const char resp[] = "HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n"
				   "\r\n";
	struct ph_env *e = env_up(state, L7_FLOWS);
	struct conn c, s;

	conn_init(&c, SVC_HTTP, 40300, 3000, 4000);
	conn_open(e, &c);
	xmit_ttl1(e, &c, TO_BE, PB_PSH | PB_ACK, c.nxt[TO_BE], junk,
		  (uint16_t)strlen(junk), "client bytes with TTL 1");
	exchange(e, &c, get_req, resp, "request after bytes with TTL 1");
	expect_one(e, &c, w_plain(503), "request after bytes with TTL 1");

	xmit_ttl1(e, &c, TO_BE, PB_RST, c.nxt[TO_BE], NULL, 0,
		  "client RST with TTL 1");
	CHECK_EQ(flow_state(e, &c), LB_FLOW_ESTABLISHED,
		 "after a client RST with TTL 1");
	xmit_ttl1(e, &c, TO_C, PB_RST | PB_ACK, c.nxt[TO_C], NULL, 0,
		  "backend RST with TTL 1");
	CHECK_EQ(flow_state(e, &c), LB_FLOW_ESTABLISHED,
		 "after a backend RST with TTL 1");
	exchange(e, &c, get_req, resp, "request after RSTs with TTL 1");
	expect_one(e, &c, w_plain(503), "request after RSTs with TTL 1");
	expect_be(e, SVC_HTTP, 2, 2, 0, "responses followed");

	conn_init(&s, SVC_L4, 40301, 5000, 6000);
	xmit_ttl1(e, &s, TO_BE, PB_SYN, s.iss, NULL, 0, "SYN with TTL 1");
	CHECK_EQ(flow_state(e, &s), -1, "after a SYN with TTL 1");
	CHECK_EQ(e->w->hold_nfree, e->w->hold_cap, "SYN copies");
	CHECK_EQ(e->w->st.l7_stopped, 0, "flows stopped");
	ph_env_close(e, 1);
}

/* ---- request admission (docs/admission.md) -------------------------------
 * The service SVC_GOV has the governor on with default-priority 3 and
 * retry-after 7; the tests publish its multiplier M themselves, where
 * lb-control would. M = 100 throttles every request of rank >= 1 with
 * probability 1 and rank 0 never, so every verdict is certain.
 */

static void
set_m(struct ph_env *e, uint16_t svc, double m)
{
	uint64_t b;

	memcpy(&b, &m, sizeof(b));
	atomic_store(&e->gov_m[svc], b);
}

/* Sends one segment and forwards nothing: what comes out is for later. */
static void
inject(struct ph_env *e, struct conn *c, enum dir d, uint8_t flags,
       uint32_t seq, uint32_t ack, const void *data, uint16_t len)
{
	static struct pb_frame in;

	seg_frame(&in, c, d, 0, flags, seq, ack, c->ip_id[d]++, data, len);
	ph_rx(e, d == TO_BE ? 0 : 1, &in);
}

/* A segment the worker writes itself: TTL 64, id 0, DF, no options. */
static void
own_frame(struct pb_frame *f, const struct conn *c, enum dir d, uint8_t flags,
	  uint32_t seq, uint32_t ack, uint16_t win, const void *data,
	  uint16_t len)
{
	struct pb_dg g = {
		.proto = PB_PROTO_TCP,
		.ttl = 64,
		.frag = PB_IP_DF,
		.seq = seq,
		.ack = ack,
		.flags = flags,
		.win = win,
		.data = data,
		.plen = len,
	};

	if (d == TO_BE) {
		g.src = IP_SNAT;
		g.dst = c->bip;
		g.sport = c->sport;
		g.dport = BPORT;
		pb_ipv4_frame(f, c->bmac, mac_port[1], &g);
	} else {
		g.src = c->vip;
		g.dst = IP_C;
		g.sport = VPORT;
		g.dport = c->cport;
		pb_ipv4_frame(f, mac_c, mac_port[0], &g);
	}
}

/* What the client must get for a refused request, byte for byte. */
static const char ans_503[] = "HTTP/1.1 503 Service Unavailable\r\n"
			      "Content-Type: text/plain\r\n"
			      "Content-Length: 20\r\n"
			      "Retry-After: 7\r\n"
			      "Connection: close\r\n"
			      "\r\n"
			      "Service Unavailable\n";

/*
 * Checks the refusal of the request that began at client octet @p req_seq
 * and whose last octet the client sent was before c->nxt[TO_BE]: exactly
 * one RST to the backend at @p req_seq and exactly the answer to the
 * client, then the client's FIN is acknowledged. @p c->nxt[TO_C] is the
 * server's next octet.
 */
static void
expect_answer(struct ph_env *e, struct conn *c, uint32_t req_seq,
	      const char *ans, const char *what)
{
	static struct pb_frame got[4], want;
	uint32_t alen = (uint32_t)strlen(ans);
	uint32_t fin_end = c->nxt[TO_C] + alen + 1;

	if (ph_take(e, 1, 0, got, 4) != 1)
		fail_msg("%s: not exactly one frame to the backend", what);
	own_frame(&want, c, TO_BE, PB_RST, req_seq, 0, 0, NULL, 0);
	ph_expect_same(&got[0], &want, what);
	if (ph_take(e, 0, 0, got, 4) != 1)
		fail_msg("%s: not exactly one frame to the client", what);
	own_frame(&want, c, TO_C, PB_ACK | PB_PSH | PB_FIN, c->nxt[TO_C],
		  c->nxt[TO_BE], 65535, ans, (uint16_t)alen);
	ph_expect_same(&got[0], &want, what);

	/* The client acknowledges the answer and its FIN: nothing to say. */
	inject(e, c, TO_BE, PB_ACK, c->nxt[TO_BE], fin_end, NULL, 0);
	CHECK_EQ(ph_take(e, 0, 0, got, 4) + ph_take(e, 1, 0, got, 4), 0,
		 "frames after the client's ACK");
	/* Its FIN is acknowledged in the server's place. */
	inject(e, c, TO_BE, PB_FIN | PB_ACK, c->nxt[TO_BE], fin_end, NULL, 0);
	CHECK_EQ(ph_take(e, 1, 0, got, 4), 0, "frames to the backend");
	if (ph_take(e, 0, 0, got, 4) != 1)
		fail_msg("%s: the client's FIN is not acknowledged", what);
	own_frame(&want, c, TO_C, PB_ACK, fin_end, c->nxt[TO_BE] + 1, 65535,
		  NULL, 0);
	ph_expect_same(&got[0], &want, what);
	/* An ACK short of our FIN: the answer went missing, again. */
	inject(e, c, TO_BE, PB_ACK, c->nxt[TO_BE] + 1, c->nxt[TO_C], NULL, 0);
	if (ph_take(e, 0, 0, got, 4) != 1)
		fail_msg("%s: the answer is not sent again", what);
	own_frame(&want, c, TO_C, PB_ACK | PB_PSH | PB_FIN, c->nxt[TO_C],
		  c->nxt[TO_BE] + 1, 65535, ans, (uint16_t)alen);
	ph_expect_same(&got[0], &want, what);
	/* The backend's late segments go nowhere. */
	inject(e, c, TO_C, PB_ACK, c->nxt[TO_C], req_seq, NULL, 0);
	CHECK_EQ(ph_take(e, 0, 0, got, 4) + ph_take(e, 1, 0, got, 4), 0,
		 "frames after the backend's late ACK");
}

static void
expect_refusal(struct ph_env *e, struct conn *c, uint32_t req_seq,
	       const char *what)
{
	expect_answer(e, c, req_seq, ans_503, what);
}

static const char req_p2[] = "GET /b HTTP/1.1\r\nHost: x\r\n"
			     "X-Priority: 2\r\n\r\n";
static const char resp_ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

/* Refused in its first segment: the backend gets no octet of it. */
static void
test_refuse(void **state)
{
	struct ph_env *e = env_up(state, L7_FLOWS);
	struct conn c;
	uint16_t len = (uint16_t)strlen(req_p2);
	uint32_t req_seq;

	set_m(e, SVC_GOV, 100.0);
	conn_init(&c, SVC_GOV, 41000, 1000, 900000);
	conn_open(e, &c);
	req_seq = c.nxt[TO_BE];
	inject(e, &c, TO_BE, PB_PSH | PB_ACK, req_seq, c.nxt[TO_C], req_p2,
	       len);
	c.nxt[TO_BE] += len;
	expect_refusal(e, &c, req_seq, "refused GET");
	CHECK_EQ(e->w->st.l7_refused[LB_L7_REJ_GOVERNOR], 1, "refused");
	CHECK_EQ(e->w->st.gov[SVC_GOV].throttled[2], 1, "throttled rank 2");
	CHECK_EQ(e->w->st.gov[SVC_GOV].admitted[2], 0, "admitted rank 2");
	CHECK_EQ(e->w->st.l7_held, 0, "held");
	/* Refused, it never was in flight toward the backend. */
	CHECK_EQ(bst(e, SVC_GOV)->inflight, 0, "in flight");
	ph_env_close(e, 1);
}

/* Rank 0 passes at any M; the keep-alive request after it is refused. */
static void
test_refuse_keepalive(void **state)
{
	static const char req_p0[] = "GET /a HTTP/1.1\r\nHost: x\r\n"
				     "X-Priority: 0\r\n\r\n";
	static const char req_none[] = "GET /c HTTP/1.1\r\nHost: x\r\n\r\n";
	struct ph_env *e = env_up(state, L7_FLOWS);
	uint16_t len = (uint16_t)strlen(req_none);
	struct conn c;
	uint32_t req_seq;

	set_m(e, SVC_GOV, 100.0);
	conn_init(&c, SVC_GOV, 41001, 5000, 777000);
	conn_open(e, &c);
	send_str(e, &c, TO_BE, req_p0, "rank 0 request");
	send_str(e, &c, TO_C, resp_ok, "its response");
	/* No X-Priority: the service's default rank 3. */
	req_seq = c.nxt[TO_BE];
	inject(e, &c, TO_BE, PB_PSH | PB_ACK, req_seq, c.nxt[TO_C], req_none,
	       len);
	c.nxt[TO_BE] += len;
	expect_refusal(e, &c, req_seq, "refused keep-alive GET");
	CHECK_EQ(e->w->st.gov[SVC_GOV].admitted[0], 1, "admitted rank 0");
	CHECK_EQ(e->w->st.gov[SVC_GOV].throttled[3], 1, "throttled rank 3");
	ph_env_close(e, 1);
}

/*
 * A header block in three segments, X-Priority in the last: the first
 * two are held (nothing leaves), a repeat of one is dropped, and the
 * third decides. Admitted (M = 0): the three go on in order. Refused
 * (M = 100): the backend is reset at the first octet of the request.
 */
static void
test_hold(void **state)
{
	static struct pb_frame got[4], want;
	struct ph_env *e = env_up(state, L7_FLOWS);
	const uint16_t cut[] = {9, 30, (uint16_t)strlen(req_p2)};
	struct conn c;

	for (int refuse = 0; refuse < 2; refuse++) {
		uint32_t req_seq, at = 0;
		uint16_t id0;

		set_m(e, SVC_GOV, refuse ? 100.0 : 0.0);
		conn_init(&c, SVC_GOV, (uint16_t)(41010 + refuse), 7000,
			  99000);
		conn_open(e, &c);
		req_seq = c.nxt[TO_BE];
		id0 = c.ip_id[TO_BE];
		for (unsigned int i = 0; i < 3; i++) {
			inject(e, &c, TO_BE, PB_PSH | PB_ACK, req_seq + at,
			       c.nxt[TO_C], req_p2 + at,
			       (uint16_t)(cut[i] - at));
			if (i == 0) {
				/* Repeated while held: dropped. */
				inject(e, &c, TO_BE, PB_PSH | PB_ACK, req_seq,
				       c.nxt[TO_C], req_p2, cut[0]);
			}
			at = cut[i];
			if (i < 2)
				CHECK_EQ(ph_take(e, 1, 0, got, 4) +
						 ph_take(e, 0, 0, got, 4),
					 0, "frames while held");
		}
		c.nxt[TO_BE] += at;
		if (refuse) {
			expect_refusal(e, &c, req_seq, "refused held GET");
			continue;
		}
		if (ph_take(e, 1, 0, got, 4) != 3)
			fail_msg("admitted held GET: not 3 frames");
		at = 0;
		for (unsigned int i = 0; i < 3; i++) {
			/* ids: segment 0, its repeat (1), then 2 and 3 */
			uint16_t id = (uint16_t)(id0 + (i == 0 ? 0 : i + 1));

			seg_frame(&want, &c, TO_BE, 1, PB_PSH | PB_ACK,
				  req_seq + at, c.nxt[TO_C], id,
				  (const uint8_t *)req_p2 + at,
				  (uint16_t)(cut[i] - at));
			ph_expect_same(&got[i], &want, "released segment");
			at = cut[i];
		}
		CHECK_EQ(ph_take(e, 0, 0, got, 4), 0, "frames to the client");
		send_str(e, &c, TO_C, resp_ok, "response to the held GET");
	}
	CHECK_EQ(e->w->st.l7_held, 4, "segments held");
	CHECK_EQ(e->w->st.l7_refused[LB_L7_REJ_GOVERNOR], 1, "refused");
	ph_env_close(e, 1);
}

/*
 * A header block cut in more segments than may be held: the decision is
 * taken with the service's default rank when the bound is reached.
 */
static void
test_hold_bound(void **state)
{
	static char req[256];
	static struct pb_frame got[LB_L7_HOLD_MAX + 4];
	struct ph_env *e = env_up(state, L7_FLOWS);
	unsigned int nseg;
	struct conn c;
	size_t len;

	snprintf(req, sizeof(req),
		 "GET /%s HTTP/1.1\r\nHost: x\r\nX-Priority: 0\r\n\r\n",
		 "0123456789");
	len = strlen(req);
	for (int refuse = 0; refuse < 2; refuse++) {
		uint32_t req_seq;

		set_m(e, SVC_GOV, refuse ? 100.0 : 0.0);
		conn_init(&c, SVC_GOV, (uint16_t)(41020 + refuse), 9000,
			  19000);
		conn_open(e, &c);
		req_seq = c.nxt[TO_BE];
		/* One octet per segment: the head ends far after the bound;
		 * refused, the one after the bound is the last sent. */
		nseg = refuse ? LB_L7_HOLD_MAX + 1 : LB_L7_HOLD_MAX + 2;
		for (unsigned int i = 0; i < nseg; i++)
			inject(e, &c, TO_BE, PB_PSH | PB_ACK, req_seq + i,
			       c.nxt[TO_C], req + i, 1);
		c.nxt[TO_BE] += nseg;
		if (refuse) {
			/* Rank 0 in the header came too late: rank 3. */
			expect_refusal(e, &c, req_seq, "refused at the bound");
			continue;
		}
		CHECK_EQ(ph_take(e, 1, 0, got, NELEM(got)), nseg,
			 "segments released at the bound");
		send_cut(e, &c, TO_BE, req + nseg, len - nseg, NULL, 0,
			 "rest of the head");
		send_str(e, &c, TO_C, resp_ok, "response");
	}
	CHECK_EQ(e->w->st.l7_hold_full, 2, "bound reached");
	CHECK_EQ(e->w->st.gov[SVC_GOV].throttled[3], 1, "throttled rank 3");
	CHECK_EQ(e->w->st.gov[SVC_GOV].admitted[3], 1, "admitted rank 3");
	ph_env_close(e, 1);
}

/*
 * Requests/s token buckets (admit-rate 1, admit-burst 2, reject-status
 * 429): two keep-alive requests take the burst, the third is refused with
 * a 429 and never reaches the backend.
 */
static void
test_rate(void **state)
{
	static const char ans_429[] = "HTTP/1.1 429 Too Many Requests\r\n"
				      "Content-Type: text/plain\r\n"
				      "Content-Length: 18\r\n"
				      "Retry-After: 1\r\n"
				      "Connection: close\r\n"
				      "\r\n"
				      "Too Many Requests\n";
	struct ph_env *e = env_up(state, L7_FLOWS);
	uint16_t len = (uint16_t)strlen(req_p2);
	struct conn c;
	uint32_t req_seq;

	conn_init(&c, SVC_RATE, 41030, 3000, 6000);
	conn_open(e, &c);
	for (int i = 0; i < 2; i++) {
		send_str(e, &c, TO_BE, req_p2, "request within the burst");
		send_str(e, &c, TO_C, resp_ok, "its response");
	}
	req_seq = c.nxt[TO_BE];
	inject(e, &c, TO_BE, PB_PSH | PB_ACK, req_seq, c.nxt[TO_C], req_p2,
	       len);
	c.nxt[TO_BE] += len;
	expect_answer(e, &c, req_seq, ans_429, "request over the rate");
	CHECK_EQ(e->w->st.l7_refused[LB_L7_REJ_RATE], 1, "refused by rate");
	CHECK_EQ(e->w->st.l7_refused[LB_L7_REJ_GOVERNOR], 0, "by governor");
	ph_env_close(e, 1);
}

/* ---- header names from the published table ------------------------------ */

/*
 * What lb-control publishes for conf_lines followed by @p extra: a table
 * compiled after the current one, with the serialized header database of
 * its services right behind it (control/core/publish.c). @p tear breaks the
 * blob's last byte, as a torn copy would be. The worker takes it up at its
 * next poll; the table it leaves is freed then.
 */
static void
publish(struct ph_env *e, const char *extra, int tear)
{
	struct lb_cmd_reg *reg = lb_cmd_reg_create();
	struct lb_conf *conf = lb_conf_create(ph_sched_known);
	struct lb_dpconf *d, *old = e->dp.conf;
	struct lb_hdr_cfg hc;
	struct lb_cmd_out out;
	char err[256];
	void *blob;
	size_t len;

	assert_non_null(reg);
	assert_non_null(conf);
	assert_int_equal(lb_conf_register(conf, reg), 0);
	lb_cmd_out_init(&out);
	for (const char *const *l = conf_lines; *l != NULL; l++)
		assert_int_equal(lb_cmd_exec_line(reg, *l, &out), 0);
	if (lb_cmd_exec_line(reg, extra, &out) != 0)
		fail_msg("'%s': %s", extra, lb_cmd_out_errmsg(&out));
	if (lb_hdr_conf_build(conf, &hc, err, sizeof(err)) != 0)
		fail_msg("lb_hdr_conf_build: %s", err);
	assert_int_equal(lb_hdr_conf_blob(&hc, &blob, &len), 0);
	d = rte_zmalloc("l7pkt_conf", sizeof(*d) + len, 0);
	assert_non_null(d);
	if (lb_dpconf_compile(d, conf, old, NULL, NULL, err, sizeof(err)) != 0)
		fail_msg("lb_dpconf_compile: %s", err);
	memcpy(d + 1, blob, len);
	d->hdr_len = len;
	d->hdr_id = lb_hdr_db_blob_id(blob, len);
	if (tear)
		((uint8_t *)(d + 1))[len - 1] ^= 0xff;
	free(blob);
	lb_cmd_out_free(&out);
	lb_conf_free(conf);
	lb_cmd_reg_free(reg);
	e->dp.conf = d;
	lb_worker_poll(e->w);
	assert_ptr_equal(e->w->conf_pub, d);
	rte_free(old);
}

/*
 * The SPL header renamed on a live service: after the table switch the
 * worker reads the new name, on connections open before the switch as on
 * new ones, and no longer the old one. A response header cut by a segment
 * boundary across the switch loses its fields rather than being read
 * with two databases; a torn database leaves the worker on its previous
 * one.
 */
static void
test_renamed_header(void **state)
{
	static const char both[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n"
				   "X-SPL: 0.5\r\nX-Load: 0.75\r\n\r\n";
	static const char req[] = "GET / HTTP/1.1\r\n\r\n";
	struct ph_env *e = env_up(state, L7_FLOWS);
	size_t cut = 30;
	struct conn c, d;

	conn_init(&c, SVC_HTTP, 40100, 1000, 500000);
	conn_open(e, &c);
	exchange(e, &c, req, both, "default names");
	expect_one(e, &c, w_spl(200, 0.5), "default names");

	/* a response cut in its header block while the table changes */
	send_str(e, &c, TO_BE, req, "request across the switch");
	send_cut(e, &c, TO_C, both, cut, NULL, 0, "first piece");
	publish(e, "service set tcp 203.0.113.10:80 spl-header X-Load", 0);
	CHECK_EQ(e->w->st.l7_db_errors, 0, "database errors");
	send_cut(e, &c, TO_C, both + cut, strlen(both) - cut, NULL, 0,
		 "rest after the switch");
	expect_one(e, &c, w_plain(200), "header block cut by the switch");

	exchange(e, &c, req, both, "renamed, same connection");
	expect_one(e, &c, w_spl(200, 0.75), "renamed, same connection");
	conn_init(&d, SVC_HTTP, 40101, 3000, 700000);
	conn_open(e, &d);
	exchange(e, &d, req, both, "renamed, new connection");
	expect_one(e, &d, w_spl(200, 0.75), "renamed, new connection");
	exchange(e, &d, req,
		 "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-SPL: 0.5\r\n\r\n",
		 "old name only");
	expect_one(e, &d, w_plain(200), "old name only");

	/* renamed again, but the database is torn: the worker keeps the one
	 * it has, which has no X-Other: nothing is read */
	publish(e, "service set tcp 203.0.113.10:80 spl-header X-Other", 1);
	CHECK_EQ(e->w->st.l7_db_errors, 1, "database errors");
	exchange(e, &d, req,
		 "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-Other: 0.25\r\n"
		 "X-Load: 0.75\r\n\r\n",
		 "torn database");
	expect_one(e, &d, w_plain(200), "torn database");
	CHECK_EQ(e->w->st.l7_stopped, 0, "flows stopped");
	ph_env_close(e, 1);
}

/* The one HTTP record in the ring, whatever it says. */
static struct lb_fb
http_record(struct ph_env *e, const char *what)
{
	struct lb_fb r[4];
	unsigned int n = fb_take(e, r, NELEM(r));

	if (n != 1 || r[0].kind != LB_FB_HTTP)
		fail_msg("%s: %u L7 records, want one HTTP record", what, n);
	return r[0];
}

/*
 * A service's error policy and defaults, changed on a live service:
 * `errors 500,502-504` makes a 501 a success and a 503 an error; a 500 on
 * an excluded path (`error-exclude /health`) is neither, so it does not
 * reset the count either; `errors none` counts nothing. A request without
 * X-Expect-Ms gets the service's `default-expect` and one without
 * X-Priority its `default-priority`, both marked as defaults in the
 * record.
 */
static void
test_error_policy(void **state)
{
	static const char r500[] = "HTTP/1.1 500 E\r\nContent-Length: 0\r\n\r\n";
	static const char r501[] = "HTTP/1.1 501 E\r\nContent-Length: 0\r\n\r\n";
	static const char r503[] = "HTTP/1.1 503 E\r\nContent-Length: 0\r\n\r\n";
	static const char r200[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
	static const char health[] = "GET /health/deep HTTP/1.1\r\n\r\n";
	struct ph_env *e = env_up(state, L7_FLOWS);
	struct conn c;
	struct lb_fb r;

	conn_init(&c, SVC_HTTP, 40200, 5000, 9000);
	conn_open(e, &c);
	/* the defaults: a request without priority gets rank 1 */
	exchange(e, &c, get_req, r500, "default policy");
	r = http_record(e, "default policy");
	CHECK_EQ(r.flags & (LB_FB_F_PRIO | LB_FB_F_PRIO_DEF), LB_FB_F_PRIO_DEF,
		 "default rank flags");
	CHECK_EQ(r.flags >> LB_FB_PRIO_SHIFT, 1, "default rank");
	CHECK_EQ(r.flags & (LB_FB_F_EXPECT | LB_FB_F_EXPECT_DEF), 0,
		 "no expectation");
	CHECK_EQ(sched_errors(e), 1, "a 500 is an error by default");
	exchange(e, &c, health, r500, "default policy, health");
	(void)http_record(e, "default policy, health");
	CHECK_EQ(sched_errors(e), 2, "and on any path");

	publish(e,
		"service set tcp 203.0.113.10:80 errors 500,502-504 "
		"error-exclude /health,/ready default-expect 5s "
		"default-priority 7",
		0);
	exchange(e, &c, get_req, r501, "501");
	r = http_record(e, "501");
	CHECK_EQ(r.flags >> LB_FB_PRIO_SHIFT, 7, "default rank after set");
	CHECK_EQ(r.flags & (LB_FB_F_EXPECT | LB_FB_F_EXPECT_DEF |
			    LB_FB_F_QOS_MET),
		 LB_FB_F_EXPECT | LB_FB_F_EXPECT_DEF | LB_FB_F_QOS_MET,
		 "default expectation met");
	CHECK_EQ(r.u32b, 5000, "default expectation");
	CHECK_EQ(sched_errors(e), 0, "a 501 is a success: count reset");
	exchange(e, &c, get_req, r503, "503");
	(void)http_record(e, "503");
	CHECK_EQ(sched_errors(e), 1, "a 503 is an error");
	exchange(e, &c, health, r500, "health 500");
	(void)http_record(e, "health 500");
	CHECK_EQ(sched_errors(e), 1, "an excluded 500 counts for nothing");
	exchange(e, &c, health, r200, "health 200");
	(void)http_record(e, "health 200");
	CHECK_EQ(sched_errors(e), 1, "nor does an excluded 200");
	exchange(e, &c,
		 "GET /x HTTP/1.1\r\nX-Expect-Ms: 9\r\nX-Priority: 2\r\n\r\n",
		 r500, "own expectation");
	r = http_record(e, "own expectation");
	CHECK_EQ(r.flags & (LB_FB_F_PRIO | LB_FB_F_PRIO_DEF), LB_FB_F_PRIO,
		 "a rank of its own");
	CHECK_EQ(r.flags >> LB_FB_PRIO_SHIFT, 2, "its rank");
	CHECK_EQ(r.flags & (LB_FB_F_EXPECT | LB_FB_F_EXPECT_DEF),
		 LB_FB_F_EXPECT, "an expectation of its own");
	CHECK_EQ(r.u32b, 9, "its expectation");
	CHECK_EQ(sched_errors(e), 2, "a 500 elsewhere is an error");

	publish(e, "service set tcp 203.0.113.10:80 errors none", 0);
	exchange(e, &c, get_req, r503, "errors none");
	(void)http_record(e, "errors none");
	CHECK_EQ(sched_errors(e), 0, "errors none: a 503 is a success");
	expect_be(e, SVC_HTTP, 8, 7, 0, "responses and 5xx");
	CHECK_EQ(e->w->st.l7_stopped, 0, "flows stopped");
	ph_env_close(e, 1);
}

/*
 * Pipelined: a rank 0 request, then before its answer a rank 2 request in
 * a segment of its own. The second is refused and held (nothing reaches
 * the backend); the backend's answer to the first goes to the client,
 * followed at once by the 503 in the sequence space after it, and the
 * backend is reset at the first octet of the refused request.
 */
static void
test_refuse_pipelined(void **state)
{
	static const char req_p0[] = "GET /a HTTP/1.1\r\nHost: x\r\n"
				     "X-Priority: 0\r\n\r\n";
	static struct pb_frame got[4], want;
	struct ph_env *e = env_up(state, L7_FLOWS);
	uint16_t len = (uint16_t)strlen(req_p2), rl = (uint16_t)strlen(resp_ok);
	uint32_t req_seq, alen = (uint32_t)strlen(ans_503);
	struct conn c;

	set_m(e, SVC_GOV, 100.0);
	conn_init(&c, SVC_GOV, 41040, 11000, 21000);
	conn_open(e, &c);
	send_str(e, &c, TO_BE, req_p0, "rank 0 request");
	req_seq = c.nxt[TO_BE];
	inject(e, &c, TO_BE, PB_PSH | PB_ACK, req_seq, c.nxt[TO_C], req_p2,
	       len);
	c.nxt[TO_BE] += len;
	CHECK_EQ(ph_take(e, 1, 0, got, 4) + ph_take(e, 0, 0, got, 4), 0,
		 "frames while the refused request waits");
	/* The answer to the first request, then the refusal after it. */
	inject(e, &c, TO_C, PB_PSH | PB_ACK, c.nxt[TO_C], req_seq, resp_ok,
	       rl);
	if (ph_take(e, 0, 0, got, 4) != 2)
		fail_msg("pipelined: not the response and the refusal");
	seg_frame(&want, &c, TO_C, 1, PB_PSH | PB_ACK, c.nxt[TO_C], req_seq,
		  (uint16_t)(c.ip_id[TO_C] - 1), (const uint8_t *)resp_ok, rl);
	ph_expect_same(&got[0], &want, "the first request's response");
	c.nxt[TO_C] += rl;
	own_frame(&want, &c, TO_C, PB_ACK | PB_PSH | PB_FIN, c.nxt[TO_C],
		  c.nxt[TO_BE], 65535, ans_503, (uint16_t)alen);
	ph_expect_same(&got[1], &want, "the refusal after it");
	if (ph_take(e, 1, 0, got, 4) != 1)
		fail_msg("pipelined: not exactly one RST to the backend");
	own_frame(&want, &c, TO_BE, PB_RST, req_seq, 0, 0, NULL, 0);
	ph_expect_same(&got[0], &want, "the RST to the backend");
	CHECK_EQ(e->w->st.l7_refused[LB_L7_REJ_GOVERNOR], 1, "refused");
	CHECK_EQ(e->w->st.l7_unrefusable, 0, "unrefusable");
	CHECK_EQ(e->w->st.l7_held, 1, "held");
	CHECK_EQ(bst(e, SVC_GOV)->inflight, 0, "in flight");
	ph_env_close(e, 1);
}

/* ---- gated flows that cannot be followed (docs/admission.md) --------------
 * A client that makes its flow unfollowable must not get round the
 * service's limit: by default (`unfollowable refuse`) the flow is reset
 * both ways at the segment that stopped the following, and nothing of
 * that segment reaches the backend.
 */

/* A client segment with IP TTL @p ttl, injected. */
static void
inject_ttl(struct ph_env *e, struct conn *c, uint8_t ttl, uint32_t seq,
	   const void *data, uint16_t len)
{
	static struct pb_frame in;
	struct pb_dg g = {
		.proto = PB_PROTO_TCP,
		.ttl = ttl,
		.id = c->ip_id[TO_BE]++,
		.frag = PB_IP_DF,
		.src = IP_C,
		.dst = c->vip,
		.sport = c->cport,
		.dport = VPORT,
		.seq = seq,
		.ack = c->nxt[TO_C],
		.flags = PB_PSH | PB_ACK,
		.win = 64240,
		.data = data,
		.plen = len,
	};

	pb_ipv4_frame(&in, mac_port[0], mac_c, &g);
	ph_rx(e, 0, &in);
}

/*
 * Exactly a RST to the backend at @p cli_nxt (then one at @p alt, unless
 * equal) and a RST+ACK to the client at @p srv_nxt acknowledging
 * @p cli_nxt, and nothing else: no octet of the segment that made the
 * flow unfollowable went on.
 */
static void
expect_reset2(struct ph_env *e, const struct conn *c, uint32_t cli_nxt,
	      uint32_t alt, uint32_t srv_nxt, const char *what)
{
	static struct pb_frame got[4], want;
	unsigned int n = alt != cli_nxt ? 2 : 1;

	if (ph_take(e, 1, 0, got, 4) != n)
		fail_msg("%s: not exactly %u frame(s) to the backend", what, n);
	own_frame(&want, c, TO_BE, PB_RST, cli_nxt, 0, 0, NULL, 0);
	ph_expect_same(&got[0], &want, what);
	if (n == 2) {
		own_frame(&want, c, TO_BE, PB_RST, alt, 0, 0, NULL, 0);
		ph_expect_same(&got[1], &want, what);
	}
	if (ph_take(e, 0, 0, got, 4) != 1)
		fail_msg("%s: not exactly one frame to the client", what);
	own_frame(&want, c, TO_C, PB_RST | PB_ACK, srv_nxt, cli_nxt, 65535,
		  NULL, 0);
	ph_expect_same(&got[0], &want, what);
}

static void
expect_reset(struct ph_env *e, const struct conn *c, uint32_t cli_nxt,
	     uint32_t srv_nxt, const char *what)
{
	expect_reset2(e, c, cli_nxt, cli_nxt, srv_nxt, what);
}

static const char req_plain[] = "GET /a HTTP/1.1\r\nHost: x\r\n\r\n";

/* The second half of a request before its first: a gap. */
static void
test_unfollowable_gap(void **state)
{
	struct ph_env *e = env_up(state, L7_FLOWS);
	uint16_t len = (uint16_t)strlen(req_plain), half = 10;
	struct conn c;

	conn_init(&c, SVC_RATE, 41100, 51000, 61000);
	conn_open(e, &c);
	inject(e, &c, TO_BE, PB_PSH | PB_ACK, c.nxt[TO_BE] + half, c.nxt[TO_C],
	       req_plain + half, (uint16_t)(len - half));
	expect_reset(e, &c, c.nxt[TO_BE], c.nxt[TO_C], "second half first");
	CHECK_EQ(e->w->st.l7_unfollowed[LB_L7_UNF_RESET], 1, "reset");
	CHECK_EQ(e->w->st.l7_stopped, 1, "stopped");
	ph_env_close(e, 1);
}

/* 17 requests pipelined in one segment: more than the follower queues. */
static void
test_unfollowable_pipelined(void **state)
{
	struct ph_env *e = env_up(state, L7_FLOWS);
	size_t one = strlen(req_plain);
	char req[17 * sizeof(req_plain)];
	struct conn c;

	for (int i = 0; i < 17; i++)
		memcpy(req + (size_t)i * one, req_plain, one);
	conn_init(&c, SVC_RATE, 41101, 52000, 62000);
	conn_open(e, &c);
	inject(e, &c, TO_BE, PB_PSH | PB_ACK, c.nxt[TO_BE], c.nxt[TO_C], req,
	       (uint16_t)(17 * one));
	expect_reset(e, &c, c.nxt[TO_BE], c.nxt[TO_C], "17 pipelined");
	CHECK_EQ(e->w->st.l7_unfollowed[LB_L7_UNF_RESET], 1, "reset");
	ph_env_close(e, 1);
}

/*
 * Two requests in one segment once one token is left: the first takes it,
 * the second cannot be refused apart from the first, so the flow is
 * reset rather than both forwarded.
 */
static void
test_unfollowable_over_rate(void **state)
{
	struct ph_env *e = env_up(state, L7_FLOWS);
	size_t one = strlen(req_plain);
	char req[2 * sizeof(req_plain)];
	struct conn c;

	memcpy(req, req_plain, one);
	memcpy(req + one, req_plain, one);
	conn_init(&c, SVC_RATE, 41105, 58000, 68000);
	conn_open(e, &c);
	exchange(e, &c, req_plain, resp_ok, "first token");
	inject(e, &c, TO_BE, PB_PSH | PB_ACK, c.nxt[TO_BE], c.nxt[TO_C], req,
	       (uint16_t)(2 * one));
	expect_reset(e, &c, c.nxt[TO_BE], c.nxt[TO_C], "two in a segment");
	CHECK_EQ(e->w->st.l7_unrefusable, 1, "unrefusable");
	CHECK_EQ(e->w->st.l7_unfollowed[LB_L7_UNF_RESET], 1, "reset");
	CHECK_EQ(bst(e, SVC_RATE)->inflight, 0, "in flight");
	ph_env_close(e, 1);
}

/*
 * A request with TTL 1 is dropped before the follower reads it. The
 * client then sends other octets at the same sequence numbers, longer:
 * the backend and the follower read the same request, which is admitted
 * and forwarded; nothing is reset.
 */
static void
test_unfollowable_ttl(void **state)
{
	static const char other[] = "GET /aaaaaaaaaaaaaaaaaaaaaaaaaaaa HTTP/1.1"
				    "\r\nHost: x\r\n\r\n";
	struct ph_env *e = env_up(state, L7_FLOWS);
	struct conn c;

	conn_init(&c, SVC_RATE, 41102, 53000, 63000);
	conn_open(e, &c);
	inject_ttl(e, &c, 1, c.nxt[TO_BE], req_plain,
		   (uint16_t)strlen(req_plain));
	CHECK_EQ(ph_take(e, 1, 0, NULL, 0), 0, "TTL 1: frames to the backend");
	ph_take(e, 0, 0, NULL, 0); /* an ICMP time exceeded, if any */
	xmit(e, &c, TO_BE, PB_PSH | PB_ACK, c.nxt[TO_BE], other,
	     (uint16_t)strlen(other), "other octets");
	CHECK_EQ(e->w->st.l7_unfollowed[LB_L7_UNF_RESET], 0, "reset");
	CHECK_EQ(e->w->st.l7_stopped, 0, "stopped");
	ph_env_close(e, 1);
}

/*
 * A pool of one entry: the second flow's handshake finds none when the
 * client's ACK completes it, so its requests could not be admitted: the
 * flow is reset there, and the ACK never reaches the backend.
 */
static void
test_unfollowable_pool_full(void **state)
{
	struct ph_env *e = env_up(state, 1);
	struct conn a, b;

	conn_init(&a, SVC_RATE, 41103, 54000, 64000);
	conn_open(e, &a);
	conn_init(&b, SVC_RATE, 41104, 55000, 65000);
	xmit(e, &b, TO_BE, PB_SYN, b.iss, NULL, 0, "client SYN");
	xmit(e, &b, TO_C, PB_SYN | PB_ACK, b.irs, NULL, 0, "backend SYN-ACK");
	inject(e, &b, TO_BE, PB_ACK, b.iss + 1, b.irs + 1, NULL, 0);
	expect_reset(e, &b, b.iss + 1, b.irs + 1, "no entry");
	ph_settle(e);
	CHECK_EQ(e->w->st.l7_pool_full, 1, "pool full");
	CHECK_EQ(e->w->st.l7_unfollowed[LB_L7_UNF_RESET], 1, "reset");
	/* The followed flow is not disturbed. */
	exchange(e, &a, req_plain, resp_ok, "first flow");
	ph_env_close(e, 1);
}

/*
 * Without a follower pool (--l7-flows 0) no request can be admitted: a
 * SYN to a gated service is answered with a RST (an ungated http service
 * is forwarded as before); with `admit-flow` each connection is charged
 * as one request.
 */
static void
test_unfollowable_no_pool(void **state)
{
	static struct pb_frame got[4];
	struct ph_env *e = env_up(state, 0);
	struct conn c;

	assert_null(e->w->l7);
	conn_init(&c, SVC_RATE, 41130, 59000, 69000);
	inject(e, &c, TO_BE, PB_SYN, c.iss, 0, NULL, 0);
	CHECK_EQ(ph_take(e, 1, 0, got, 4), 0, "frames to the backend");
	if (ph_take(e, 0, 0, got, 4) != 1)
		fail_msg("no pool: not exactly one frame to the client");
	CHECK_EQ(got[0].b[ETH + 20 + 13] & (PB_RST | PB_SYN), PB_RST,
		 "RST to the client");
	CHECK_EQ(e->w->st.l7_unfollowed[LB_L7_UNF_RESET], 1, "reset");
	conn_init(&c, SVC_HTTP, 41131, 59100, 69100);
	conn_open(e, &c);
	exchange(e, &c, req_plain, resp_ok, "ungated http service");

	publish(e, "service set tcp 203.0.113.13:80 unfollowable admit-flow",
		0);
	for (int i = 0; i < 3; i++) {
		conn_init(&c, SVC_RATE, (uint16_t)(41132 + i),
			  (uint32_t)(59200 + i), (uint32_t)(69200 + i));
		inject(e, &c, TO_BE, PB_SYN, c.iss, 0, NULL, 0);
		CHECK_EQ(ph_take(e, 1, 0, got, 4), i < 2 ? 1 : 0,
			 "SYNs forwarded: the burst of 2");
		ph_take(e, 0, 0, got, 4);
	}
	CHECK_EQ(e->w->st.l7_unfollowed[LB_L7_UNF_ADMITTED], 2, "admitted");
	CHECK_EQ(e->w->st.l7_unfollowed[LB_L7_UNF_RESET], 2, "reset");
	ph_env_close(e, 1);
}

/*
 * `unfollowable admit-flow`: such a flow costs one request. With a token
 * left it goes on unfollowed; once the bucket is empty the next one is
 * reset.
 */
static void
test_unfollowable_admit_flow(void **state)
{
	struct ph_env *e = env_up(state, L7_FLOWS);
	uint16_t len = (uint16_t)strlen(req_plain), half = 10;
	struct conn c;

	publish(e, "service set tcp 203.0.113.13:80 unfollowable admit-flow",
		0);
	for (int i = 0; i < 3; i++) {
		conn_init(&c, SVC_RATE, (uint16_t)(41110 + i),
			  (uint32_t)(56000 + i), (uint32_t)(66000 + i));
		conn_open(e, &c);
		if (i < 2) {
			/* the burst of 2: forwarded, unfollowed */
			xmit(e, &c, TO_BE, PB_PSH | PB_ACK, c.nxt[TO_BE] + half,
			     req_plain + half, (uint16_t)(len - half),
			     "gap, admitted");
			continue;
		}
		inject(e, &c, TO_BE, PB_PSH | PB_ACK, c.nxt[TO_BE] + half,
		       c.nxt[TO_C], req_plain + half, (uint16_t)(len - half));
		expect_reset(e, &c, c.nxt[TO_BE], c.nxt[TO_C],
			     "gap, over the rate");
	}
	CHECK_EQ(e->w->st.l7_unfollowed[LB_L7_UNF_ADMITTED], 2, "admitted");
	CHECK_EQ(e->w->st.l7_unfollowed[LB_L7_UNF_RESET], 1, "reset");
	ph_env_close(e, 1);
}

/*
 * X-Priority counts only from the prio-trust prefixes: rank 0 from a
 * client outside them is the default rank 3, throttled at M = 100.
 */
static void
test_prio_untrusted(void **state)
{
	static const char req_p0[] = "GET /a HTTP/1.1\r\nHost: x\r\n"
				     "X-Priority: 0\r\n\r\n";
	struct ph_env *e = env_up(state, L7_FLOWS);
	uint16_t len = (uint16_t)strlen(req_p0);
	struct conn c;
	uint32_t req_seq;

	set_m(e, SVC_GOV, 100.0);
	publish(e, "service set tcp 203.0.113.12:80 prio-trust 10.9.0.0/16", 0);
	conn_init(&c, SVC_GOV, 41120, 57000, 67000);
	conn_open(e, &c);
	req_seq = c.nxt[TO_BE];
	inject(e, &c, TO_BE, PB_PSH | PB_ACK, req_seq, c.nxt[TO_C], req_p0,
	       len);
	c.nxt[TO_BE] += len;
	expect_refusal(e, &c, req_seq, "untrusted rank 0");
	CHECK_EQ(e->w->st.gov[SVC_GOV].admitted[0], 0, "admitted rank 0");
	CHECK_EQ(e->w->st.gov[SVC_GOV].throttled[3], 1, "throttled rank 3");
	ph_env_close(e, 1);
}

/* ---- main -------------------------------------------------------------- */

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_exchange, ph_teardown),
		cmocka_unit_test_teardown(test_split_every_offset, ph_teardown),
		cmocka_unit_test_teardown(test_chunked, ph_teardown),
		cmocka_unit_test_teardown(test_pipelined, ph_teardown),
		cmocka_unit_test_teardown(test_no_content, ph_teardown),
		cmocka_unit_test_teardown(test_retransmit, ph_teardown),
		cmocka_unit_test_teardown(test_out_of_order, ph_teardown),
		cmocka_unit_test_teardown(test_hostile, ph_teardown),
		cmocka_unit_test_teardown(test_unframeable, ph_teardown),
		cmocka_unit_test_teardown(test_errors, ph_teardown),
		cmocka_unit_test_teardown(test_handshake, ph_teardown),
		cmocka_unit_test_teardown(test_pool, ph_teardown),
		cmocka_unit_test_teardown(test_syn_copy_not_entry, ph_teardown),
		cmocka_unit_test_teardown(test_ttl_first, ph_teardown),
		cmocka_unit_test_teardown(test_half_open, ph_teardown),
		cmocka_unit_test_teardown(test_refuse, ph_teardown),
		cmocka_unit_test_teardown(test_refuse_keepalive, ph_teardown),
		cmocka_unit_test_teardown(test_hold, ph_teardown),
		cmocka_unit_test_teardown(test_hold_bound, ph_teardown),
		cmocka_unit_test_teardown(test_rate, ph_teardown),
		cmocka_unit_test_teardown(test_refuse_pipelined, ph_teardown),
		cmocka_unit_test_teardown(test_renamed_header, ph_teardown),
		cmocka_unit_test_teardown(test_error_policy, ph_teardown),
		cmocka_unit_test_teardown(test_unfollowable_gap, ph_teardown),
		cmocka_unit_test_teardown(test_unfollowable_pipelined,
					  ph_teardown),
		cmocka_unit_test_teardown(test_unfollowable_over_rate,
					  ph_teardown),
		cmocka_unit_test_teardown(test_unfollowable_ttl, ph_teardown),
		cmocka_unit_test_teardown(test_unfollowable_pool_full,
					  ph_teardown),
		cmocka_unit_test_teardown(test_unfollowable_admit_flow,
					  ph_teardown),
		cmocka_unit_test_teardown(test_unfollowable_no_pool,
					  ph_teardown),
		cmocka_unit_test_teardown(test_prio_untrusted, ph_teardown),
	};
	struct lb_hdr_cfg hc;
	int rc;

	(void)argc;
	if (ph_eal_init(argv[0], "lbl7pkt", POOL_SIZE) != 0)
		return EXIT_FAILURE;
	lb_hdr_cfg_default(&hc);
	hdb = lb_hdr_db_compile(&hc);
	if (hdb == NULL) {
		fprintf(stderr, "l7_test: no header database\n");
		ph_eal_fini();
		return EXIT_FAILURE;
	}
	rc = cmocka_run_group_tests_name("packet_l7", tests, NULL, NULL);
	lb_hdr_db_free(hdb);
	ph_eal_fini();
	return rc;
}
