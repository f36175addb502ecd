/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One round of lb-dpbench: the generator on this lcore (frames of each
 * test, checks of the outputs) against the forwarder lcore running the
 * bare forwarder or the worker, and the round's figures. Apart because
 * this is the measured loop; the tests in dp_bench_tests.c only pair
 * rounds and take medians.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "dp_bench6.h"
#include "dp_bench_conn.h"


/* A frame with everything but addresses, ports and sequence number. */

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
	struct lb_worker *w_rx; /* rdr: polled before w in the same loop */
	uint64_t stall_tsc;  /* a gap this long: the lcore lost the CPU */
	uint64_t iters;	     /* loop iterations, __atomic */
	struct meter m;
	int taken;
	struct snap s[2];
	uint64_t tx_refused; /* bare forwarder: mbufs the port refused */
};

/* ---- generator ---------------------------------------------------------- */

void
dpb_gen_init(struct gen *g, enum test t, uint32_t nb_flows)
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

/*
 * The ACK of the client of SYN @p isn (host order) that proves the
 * cookie the worker's SYN-ACK carried: the generator makes the cookie as
 * the worker made it, with the worker's secret and clock.
 */
static inline void
synp_ack_write(struct bench *b, uint8_t *f, uint32_t cip, uint16_t cport,
	       uint32_t isn)
{
	const struct lb_syncookie_opts in = {.mss = 536, .wscale = -1};
	struct lb_syncookie_tuple t = {cip, b->vip, cport, b->vport, isn};
	uint64_t ns = (uint64_t)((double)rte_rdtsc() * b->dp.ns_per_tsc);
	struct lb_syncookie_clock clk = {ns / 1000000000ull,
					 (uint32_t)(ns / 1000000ull)};
	uint32_t tsval, ack, old;
	uint16_t c;

	ack = htonl(lb_syncookie_make(&b->w->synp_keys, &t, &clk, &in,
				      &tsval) + 1);
	frame_write(f, &b->t_ack, cip, b->vip, cport, b->vport, htonl(isn + 1));
	memcpy(&old, f + OFF_SEQ + 4, 4);
	memcpy(f + OFF_SEQ + 4, &ack, 4);
	memcpy(&c, f + OFF_TCP_CSUM, 2);
	c = lb_csum_update32(c, old, ack);
	memcpy(f + OFF_TCP_CSUM, &c, 2);
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
	if (g->test == T_CONN) {
		conn_fill(b, g, m);
		return;
	}
	if (g->test >= T_EST6) {
		gen6_fill(b, g, m,
			  g->test == T_EST6 ? gen_next(g, &g->cur) : 0);
		return;
	}
	f = mbuf_frame(m, b->port);
	if (g->test == T_NEW) {
		uint64_t c = b->new_ctr++;
		uint32_t cip = htonl(NET_NEW | (c & 0xffff));
		uint16_t cport = htons((uint16_t)(1024 + ((c >> 16) & 0x7fff)));

		if (b->synp == SYNP_ACK) {
			synp_ack_write(b, f, cip, cport, (uint32_t)c & ~REPLY_BIT);
			return;
		}
		frame_write(f, &b->t_syn, cip, b->vip, cport, b->vport,
			    htonl((uint32_t)c & ~REPLY_BIT));
		return;
	}
	if (g->test == T_RDR || (g->test == T_MIX && (g->odd ^= 1) == 0)) {
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

/* What every frame with a payload the worker sent must be: IPv4 with
 * both checksums right, from the port's MAC. @return NULL or what not. */
static const char *
l7_frame_check(const struct bench *b, const uint8_t *f, uint32_t len)
{
	if (f[12] != 0x08 || f[13] != 0x00)
		return "not IPv4";
	if (!dpb_l7_csums_ok(f, len))
		return "IP or TCP checksum wrong";
	if (memcmp(f + 6, b->port_mac, 6) != 0)
		return "source MAC is not the port's";
	return NULL;
}

/*
 * conn: the fields conn_fill() does not look at, of one frame the worker
 * sent. @return NULL, or what is wrong with it.
 */
static const char *
conn_check_out(const struct bench *b, const uint8_t *f, uint32_t len)
{
	const char *e = l7_frame_check(b, f, len);
	uint32_t dst, be;

	if (e != NULL)
		return e;
	memcpy(&dst, f + OFF_DST, 4);
	be = ntohl(dst) - IP_BE;
	if (be < NB_BES)
		return memcmp(f, b->be_mac[be], 6) != 0
			       ? "segment not sent to its backend's MAC"
			       : NULL;
	return memcmp(f, b->gw_mac, 6) != 0
		       ? "segment not sent to the clients' router"
		       : NULL;
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
	if (!dpb_frame_csums_ok(f))
		return "IP or TCP checksum wrong";
	if (memcmp(f + 6, b->port_mac, 6) != 0)
		return "source MAC is not the port's";
	frame_read(f, &x);
	if (t == T_NEW && b->synp == SYNP_SYN) {
		if (x.src != b->vip || x.sport != b->vport ||
		    (ntohl(x.dst) & 0xffff0000u) != NET_NEW)
			return "SYN-ACK not sent from the VIP to the client";
		if (f[OFF_TCP + 13] != (LB_TCP_SYN | LB_TCP_ACK))
			return "SYN not answered with a SYN-ACK";
		return NULL;
	}
	if ((t == T_MIX || t == T_RDR) && (x.seq & REPLY_BIT)) {
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
	const char *e = l7_frame_check(b, f, len);
	const struct l7_tmpl *t;
	struct tuple x;
	uint32_t be, i, sn;

	if (e != NULL)
		return e;
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
		/* rdr: the packets are those the owner handled, whether
		 * from its own queue or from its redirect ring; the time is
		 * both workers'. */
		if (f->w_rx != NULL) {
			unsigned int n_rx = lb_worker_poll(f->w_rx);

			n = lb_worker_poll(f->w);
			if (n + n_rx == 0)
				continue;
		} else {
			n = lb_worker_poll(f->w);
			if (n == 0)
				continue;
		}
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

/* ---- rounds ------------------------------------------------------------- */

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

/* What the generator's side of one round keeps, from launch to verdict. */
struct round {
	struct fwd f;
	struct lb_worker_stats st0, st0_rx;
	int split; /* rdr --rdr-split: the generator polls w_rx */
	uint64_t rx_busy, rx_pkts, rx_polls; /* its polls that moved some */
	uint64_t in, out, bad, left, gen_busy, gen_pkts;
	uint64_t resps0, followed0;
	uint64_t conns0, conns1, bad0; /* conn: g->conns, g->bad */
	uint64_t next_occ;	      /* conn: tsc of the next sample */
	const char *why; /* the first wrong output */
	int worker, l7;
};

static struct rte_mbuf *round_m[IN_FLIGHT];

/*
 * Fills the port's rx ring with IN_FLIGHT frames and launches the
 * forwarder lcore on them.
 */
static int
round_start(struct bench *b, struct gen *g, struct round *rd, struct res *r)
{
	struct rte_mbuf **m = round_m;
	unsigned int nf = g->in_flight ? g->in_flight : IN_FLIGHT;

	memset(r, 0, sizeof(*r));
	if (rd->worker) {
		rd->f.w = b->w;
		rd->st0 = b->w->st;
		rd->f.w_rx = b->rdr_split ? NULL : b->w_rx;
		if (b->w_rx != NULL)
			rd->st0_rx = b->w_rx->st;
		rd->split = b->w_rx != NULL && b->rdr_split;
	}
	if (rd->l7) {
		while (fb_drain(b) > 0)
			;
		rd->followed0 = l7_responses(b, g->svc);
	}
	g->made = 0;
	g->worker = rd->worker;
	rd->bad0 = g->bad;
	if (rte_pktmbuf_alloc_bulk(b->pool, m, nf) != 0)
		return -ENOMEM;
	for (unsigned int i = 0; i < nf; i++) {
		if (g->test == T_CONN)
			conn_start(b, m[i]);
		else
			gen_fill(b, g, m[i]);
	}
	rd->in = rte_ring_sp_enqueue_burst(b->rxr, (void **)m, nf, NULL);
	if (rd->in < nf)
		rte_pktmbuf_free_bulk(&m[rd->in], nf - (unsigned int)rd->in);
	if (rte_eal_remote_launch(fwd_main, &rd->f, b->fwd_lcore) != 0)
		return -EBUSY;
	return 0;
}

/*
 * bind: frees the worker's own ACKs to backends among the @p n outputs
 * in @p m (conn_own_ack()), which no input matches: what stays, as
 * counted, is one output per input. @return the outputs left.
 */
static inline unsigned int
round_own_acks(struct bench *b, struct rte_mbuf **m, unsigned int n)
{
	unsigned int k = 0;

	for (unsigned int i = 0; i < n; i++) {
		if (conn_own_ack(b, m[i]))
			rte_pktmbuf_free(m[i]);
		else
			m[k++] = m[i];
	}
	return k;
}

/* Checks every CHECK_EVERY-th of the @p n outputs in @p m. */
static inline void
round_check_outs(struct bench *b, struct gen *g, struct round *rd,
		 struct rte_mbuf **m, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		const char *e;

		if ((rd->out + i) % CHECK_EVERY != 0)
			continue;
		if (g->test == T_L7)
			e = l7_check_out(b, rte_pktmbuf_mtod(m[i], uint8_t *),
					 rte_pktmbuf_data_len(m[i]), g->svc);
		else if (g->test == T_CONN)
			e = conn_check_out(b, rte_pktmbuf_mtod(m[i], uint8_t *),
					   rte_pktmbuf_data_len(m[i]));
		else if (g->test >= T_EST6)
			e = dpb6_check_out(b, rte_pktmbuf_mtod(m[i], uint8_t *),
					   rte_pktmbuf_data_len(m[i]),
					   g->test);
		else
			e = check_out(b, rte_pktmbuf_mtod(m[i], uint8_t *),
				      g->test);
		if (e != NULL) {
			rd->bad++;
			rd->why = rd->why != NULL ? rd->why : e;
		}
	}
}

/*
 * Draining: done when every mbuf is back, or when the port's rx ring is
 * empty and the forwarder has finished two more polls since (each poll
 * ends with a flush): whatever is missing then was dropped. Progress is
 * counted in polls, not time, because the host pauses these vCPUs now
 * and then.
 * @return 1 when the round is over.
 */
static inline int
round_drained(struct bench *b, struct round *rd, unsigned int n, uint64_t t,
	      uint64_t t_drain, uint64_t *it_empty)
{
	uint64_t it = __atomic_load_n(&rd->f.iters, __ATOMIC_RELAXED);

	if (rd->out >= rd->in)
		return 1;
	/* rdr: the owner may still have replies in its redirect ring. */
	if (n > 0 || !rte_ring_empty(b->rxr) ||
	    (b->w_rx != NULL && !rte_ring_empty(b->w->redirect)))
		*it_empty = UINT64_MAX;
	else if (*it_empty == UINT64_MAX)
		*it_empty = it;
	else if (it >= *it_empty + 2)
		return 1;
	return t - t_drain > b->hz * DRAIN_MAX_S;
}

/*
 * The generator's loop: takes what the port transmitted, checks some of
 * it, writes the next frames into the same mbufs and puts them back;
 * warm-up, then --seconds measured, then every mbuf is collected back.
 */
static void
round_generate(struct bench *b, struct gen *g, struct round *rd,
	       struct res *r)
{
	struct rte_mbuf **m = round_m;
	uint64_t t, t_measure, t_drain, it_empty = UINT64_MAX;
	uint64_t cap = rd->worker && is_new_test(g->test) ? NEW_CAP
							  : UINT64_MAX;
	uint64_t made0 = g->made;
	int phase = PH_WARM;
	unsigned int n;

	t = rte_rdtsc();
	rd->next_occ = t;
	t_measure = t + (uint64_t)((g->warm_s > 0 && rd->worker
					    ? g->warm_s
					    : b->seconds * 0.1) *
				   (double)b->hz);
	t_drain = t_measure + (uint64_t)(b->seconds * (double)b->hz);
	rd->gen_pkts = 0;
	for (;;) {
		uint64_t t0 = rte_rdtsc();

		/* rdr --rdr-split: the receiving worker on this lcore, its
		 * time counted as the generator's. */
		if (rd->split) {
			unsigned int k = lb_worker_poll(b->w_rx);
			uint64_t d = rte_rdtsc() - t0;

			/* A poll the host paused is left out, as the
			 * forwarder's are (lap_end()). */
			if (k > 0 && phase == PH_MEASURE &&
			    d <= rd->f.stall_tsc) {
				rd->rx_busy += d;
				rd->rx_pkts += k;
				rd->rx_polls++;
			}
			t0 = rte_rdtsc();
		}
		n = rte_ring_sc_dequeue_burst(b->txr, (void **)m, LB_BURST,
					      NULL);
		if (b->conn_bind && g->test == T_CONN)
			n = round_own_acks(b, m, n);
		if (n > 0 && rd->worker)
			round_check_outs(b, g, rd, m, n);
		rd->out += n;
		if (rd->l7)
			r->fb += fb_drain(b);
		if (n > 0 && phase != PH_DRAIN) {
			unsigned int k;

			for (unsigned int i = 0; i < n; i++)
				gen_fill(b, g, m[i]);
			k = rte_ring_sp_enqueue_burst(b->rxr, (void **)m, n,
						      NULL);
			if (k < n)
				rte_pktmbuf_free_bulk(&m[k], n - k);
			rd->in += k;
		} else if (n > 0) {
			rte_pktmbuf_free_bulk(m, n);
		}
		t = rte_rdtsc();
		if (n > 0 && phase == PH_MEASURE) {
			rd->gen_busy += t - t0;
			rd->gen_pkts += n;
		}
		/* The worker's table over the round: the generator reads
		 * its count as lb-control would, without stopping it. */
		if (g->test == T_CONN && rd->worker && t >= rd->next_occ &&
		    phase != PH_DRAIN && r->nb_occ < CONN_SAMPLES) {
			r->occ[r->nb_occ++] = (uint32_t)__atomic_load_n(
				&b->w->ft->stats.flows, __ATOMIC_RELAXED);
			rd->next_occ = t + b->hz / CONN_SAMPLE_HZ;
		}
		if (phase == PH_WARM && t >= t_measure &&
		    g->made - made0 >= g->warm_min) {
			rd->conns0 = g->conns;
			/* A warm-up that waited for warm_min frames still
			 * measures --seconds. */
			t_drain = t + (uint64_t)(b->seconds * (double)b->hz);
			phase = PH_MEASURE;
			__atomic_store_n(&rd->f.phase, phase, __ATOMIC_RELEASE);
			if (rd->worker)
				adm_count(b->w, &r->adm_pass, &r->adm_atomics,
					  1);
		} else if (phase == PH_MEASURE &&
			   (t >= t_drain || g->made >= cap)) {
			rd->conns1 = g->conns;
			phase = PH_DRAIN;
			__atomic_store_n(&rd->f.phase, phase, __ATOMIC_RELEASE);
			t_drain = t;
		} else if (phase == PH_DRAIN &&
			   round_drained(b, rd, n, t, t_drain, &it_empty)) {
			break;
		}
	}
}

/* Stops the forwarder lcore and frees every mbuf left in the rings. */
static void
round_stop(struct bench *b, struct round *rd)
{
	struct rte_mbuf **m = round_m;
	unsigned int n;

	__atomic_store_n(&rd->f.phase, PH_STOP, __ATOMIC_RELEASE);
	rte_eal_wait_lcore(b->fwd_lcore);
	while ((n = rte_ring_sc_dequeue_burst(b->txr, (void **)m, IN_FLIGHT,
					      NULL)) > 0) {
		rd->out += n;
		rte_pktmbuf_free_bulk(m, n);
	}
	while ((n = rte_ring_sc_dequeue_burst(b->rxr, (void **)m, IN_FLIGHT,
					      NULL)) > 0) {
		rd->left += n;
		rte_pktmbuf_free_bulk(m, n);
	}
	while (b->w_rx != NULL &&
	       (n = rte_ring_sc_dequeue_burst(b->w->redirect, (void **)m,
					      IN_FLIGHT, NULL)) > 0) {
		rd->left += n;
		rte_pktmbuf_free_bulk(m, n);
	}
}

/* The round's rates, from the forwarder's snapshots and the generator's. */
static void
round_rates(struct bench *b, const struct round *rd, struct res *r)
{
	const struct meter *m0 = &rd->f.s[0].m, *m1 = &rd->f.s[1].m;
	uint64_t lost = m1->lost - m0->lost;
	uint64_t span = rd->f.s[1].tsc - rd->f.s[0].tsc;
	double pk = (double)(m1->pkts - m0->pkts);
	double dt;

	/* Rates over the time the forwarder lcore ran. */
	dt = span > lost ? (double)(span - lost) / (double)b->hz : 0;
	r->lost_ms = (double)lost * 1e3 / (double)b->hz;
	if (dt > 0 && pk > 0) {
		r->mpps = (double)(m1->tx - m0->tx) / dt / 1e6;
		r->ns = (double)(m1->busy - m0->busy) * 1e9 / (double)b->hz /
			pk;
		r->busy = (double)(m1->busy - m0->busy) / (double)(span - lost);
		r->fps = (double)(rd->f.s[1].flows - rd->f.s[0].flows) / dt;
		r->cps = (double)(rd->conns1 - rd->conns0) / dt;
	}
	if (rd->worker)
		adm_count(b->w, &r->adm_pass, &r->adm_atomics, 0);
	if (rd->rx_pkts > 0) {
		r->rx_ns = (double)rd->rx_busy * 1e9 / (double)b->hz /
			   (double)rd->rx_pkts;
		r->rx_burst = (double)rd->rx_pkts / (double)rd->rx_polls;
	}
	if (rd->gen_pkts > 0)
		r->gen_ns = (double)rd->gen_busy * 1e9 / (double)b->hz /
			    (double)rd->gen_pkts;
}

/*
 * l7: following kept up with every exchange: one response followed, an
 * HTTP and an SPL record, for each.
 */
static void
round_verify_l7(struct bench *b, struct gen *g, const struct round *rd,
		struct res *r)
{
	uint64_t want = g->svc == L7_SVC_HTTP ? g->resps - rd->resps0 : 0;
	uint64_t got = l7_responses(b, g->svc) - rd->followed0;
	unsigned int n;

	while ((n = fb_drain(b)) > 0)
		r->fb += n;
	r->fb_dropped = b->w->st.fb_dropped - rd->st0.fb_dropped;
	if (got != want || r->fb + r->fb_dropped != 2 * want ||
	    b->w->st.l7_stopped != rd->st0.l7_stopped) {
		printf("  %s round: %" PRIu64 " responses followed of "
		       "%" PRIu64 ", %" PRIu64 " feedback records, "
		       "%" PRIu64 " flows stopped\n",
		       g->svc == L7_SVC_HTTP ? "http" : "plain", got, want,
		       r->fb + r->fb_dropped,
		       b->w->st.l7_stopped - rd->st0.l7_stopped);
		r->problems++;
	}
}

/* Correctness: every packet came back, nothing dropped. */
static void
round_verify(struct bench *b, struct gen *g, const struct round *rd,
	     struct res *r)
{
	/* new6: a SYN whose folded key another live flow holds is refused
	 * (dataplane/flow/flow6.h), as rare as a 32-bit hash collision
	 * among the flows of one port pair: said, not a failure. */
	uint64_t refused = rd->worker && g->test == T_NEW6
				   ? b->w->st.drop[LB_DROP_NO_FLOW] -
					     rd->st0.drop[LB_DROP_NO_FLOW]
				   : 0;

	if (refused > 0)
		printf("  worker round: %" PRIu64 " new IPv6 flows refused "
		       "(folded key taken)\n",
		       refused);
	if (rd->out + refused != rd->in || rd->left != 0 ||
	    rd->f.tx_refused != 0) {
		printf("  %s round: %" PRIu64 " packets in, %" PRIu64
		       " out, %" PRIu64 " left in the rx ring, %" PRIu64
		       " refused by the port\n",
		       rd->worker ? "worker" : "bare", rd->in, rd->out,
		       rd->left, rd->f.tx_refused);
		r->problems++;
	}
	if (g->bad != rd->bad0) {
		printf("  %s round: %" PRIu64 " outputs no step of a "
		       "connection, first: %s\n",
		       rd->worker ? "worker" : "bare", g->bad - rd->bad0,
		       g->why);
		r->problems++;
	}
	if (rd->bad > 0) {
		printf("  worker round: %" PRIu64 " of %" PRIu64
		       " checked outputs wrong, first: %s\n",
		       rd->bad, (rd->out + CHECK_EVERY - 1) / CHECK_EVERY,
		       rd->why);
		r->problems++;
	}
	if (rd->worker)
		r->problems += dpb_worker_report(b->w, &rd->st0, g->test,
						 "round");
	if (rd->worker && b->w_rx != NULL) {
		r->problems += dpb_worker_report(b->w_rx, &rd->st0_rx, g->test,
						 "round (receiving worker)");
		r->redirected = b->w_rx->st.redirect_out -
				rd->st0_rx.redirect_out;
	}
	if (rd->l7)
		round_verify_l7(b, g, rd, r);
}

/*
 * One round: the forwarder lcore runs the worker (@p worker) or the bare
 * forwarder while this lcore generates. Warm-up, then --seconds measured,
 * then every mbuf is collected back.
 */
int
dpb_run_round(struct bench *b, struct gen *g, int worker, struct res *r)
{
	struct round rd = {
		.f = {.phase = PH_WARM,
		      .port = b->port,
		      .stall_tsc = b->hz / 1000000 * STALL_US},
		.worker = worker,
		.l7 = worker && g->test == T_L7,
		.resps0 = g->resps,
	};
	int rc = round_start(b, g, &rd, r);

	if (rc != 0)
		return rc;
	round_generate(b, g, &rd, r);
	round_stop(b, &rd);
	round_rates(b, &rd, r);
	round_verify(b, g, &rd, r);
	return 0;
}
