/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-dpbench's worker under test: made afresh with static neighbours,
 * its unexpected counters reported, and the established flows of the
 * est, mix and l7 tests opened through it (SYN, SYN-ACK, ACK) before the
 * rounds. Not timed: apart from the measured loop in dp_bench_round.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include "dp_bench_frame.h"
#include "neigh.h"

struct lb_worker *
dpb_worker_make(struct bench *b, uint16_t wid)
{
	struct lb_worker *w = lb_worker_create(&b->dp, wid, b->fwd_lcore);
	int rc;

	if (w == NULL) {
		fprintf(stderr, "lb-dpbench: cannot create worker %u\n", wid);
		return NULL;
	}
	/* Static neighbours: the measured path never waits for ARP. */
	rc = lb_neigh_set_static(w->neigh, htonl(IP_GW), b->gw_mac);
	for (uint32_t i = 0; i < NB_BES && rc == 0; i++)
		rc = lb_neigh_set_static(w->neigh, b->be_ip[i], b->be_mac[i]);
	if (rc != 0) {
		fprintf(stderr, "lb-dpbench: static neighbour: %s\n",
			strerror(-rc));
		lb_worker_free(w);
		return NULL;
	}
	return w;
}

int
dpb_worker_new(struct bench *b)
{
	lb_worker_free(b->w);
	b->dp.w[b->wid] = NULL;
	b->w = dpb_worker_make(b, b->wid);
	if (b->w == NULL)
		return -ENOMEM;
	b->dp.w[b->wid] = b->w;
	if (b->conf6 != NULL) {
		int rc = dpb6_statics(b);

		if (rc != 0)
			fprintf(stderr, "lb-dpbench: static neighbour: %s\n",
				strerror(-rc));
		return rc;
	}
	return 0;
}

/* Prints what the worker counted since @p st0 that a clean run has not. */
unsigned int
dpb_worker_report(const struct lb_worker *w, const struct lb_worker_stats *st0,
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
		if (st->drop[d] != st0->drop[d] &&
		    !(t == T_NEW6 && d == LB_DROP_NO_FLOW)) {
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
	if (t != T_RDR)
		ODD(redirect_out, "redirected packets");
	ODD(arp_requests, "ARP requests");
	ODD(icmp_translated, "ICMP translated");
	ODD(src_budget.dropped, "new flows over their source's budget");
	if (!is_new_test(t) && t != T_CONN)
		ODD(flows_created, "flows created (a lookup missed)");
#undef ODD
	return problems;
}

/*
 * Hands @p n mbufs to the port, runs the worker on this lcore until it has
 * taken them all, and collects what it sent into @p out.
 */
unsigned int
dpb_pump(struct bench *b, struct rte_mbuf **m, unsigned int n,
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
	dpb_frame_write_ack(mbuf_frame(m, b->port), &b->t_synack[be], x.dst, x.src,
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
	dpb_frame_write_ack(mbuf_frame(m, b->port), &b->t_ack, x.dst, x.src,
			x.dport, x.sport, htonl(i + 1),
			htonl((i | REPLY_BIT) + 1));
	return 1;
}

int
dpb_handshakes(struct bench *b, uint32_t nb, const struct dpb_hs *hs,
	       uint32_t *done)
{
	static struct rte_mbuf *m[RING_SIZE], *o[RING_SIZE];

	*done = 0;
	for (uint32_t base = 0; base < nb; base += SETUP_BATCH) {
		unsigned int k = RTE_MIN(SETUP_BATCH, nb - base), n;
		int ok;

		if (rte_pktmbuf_alloc_bulk(b->pool, m, k) != 0)
			return -ENOMEM;
		for (unsigned int i = 0; i < k; i++)
			hs->syn(b, m[i], base + i);
		/* The SYNs, rewritten toward backends, become their
		 * SYN-ACKs. */
		n = dpb_pump(b, m, k, o);
		ok = n == k;
		for (unsigned int i = 0; i < n && ok; i++)
			ok = hs->synack(b, o[i], base, k);
		if (!ok) {
			rte_pktmbuf_free_bulk(o, n);
			return -EPROTO;
		}
		/* The SYN-ACKs, rewritten toward clients, become ACKs. */
		n = dpb_pump(b, o, k, m);
		ok = n == k;
		for (unsigned int i = 0; i < n && ok; i++)
			ok = hs->ack(b, m[i], base, k);
		if (!ok) {
			rte_pktmbuf_free_bulk(m, n);
			return -EPROTO;
		}
		n = dpb_pump(b, m, k, o);
		rte_pktmbuf_free_bulk(o, n);
		if (n != k)
			return -EPROTO;
		*done = base + k;
	}
	return 0;
}

static void
syn_write(struct bench *b, struct rte_mbuf *m, uint32_t i)
{
	frame_write(mbuf_frame(m, b->port), &b->t_syn, est_client_ip(i),
		    b->vip, est_client_port(i), b->vport, htonl(i));
}

/*
 * Opens @p nb flows through a fresh worker, each with a SYN, the
 * backend's SYN-ACK and the client's ACK, and records the SNAT address,
 * port and backend the worker chose for each.
 */
int
dpb_flows_open(struct bench *b, uint32_t nb)
{
	static const struct dpb_hs hs = {syn_write, syn_to_synack,
					 synack_to_ack};
	struct lb_worker_stats st0;
	struct lb_flow_stats fs;
	uint64_t t0 = rte_rdtsc();
	uint32_t est = 0, checked = 0;
	int rc;

	rc = dpb_worker_new(b);
	if (rc != 0)
		return rc;
	st0 = b->w->st;
	rc = dpb_handshakes(b, nb, &hs, &b->nb_rec);
	if (rc == -ENOMEM)
		return rc;
	if (rc != 0)
		goto lost;
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
	dpb_worker_report(b->w, &st0, T_EST, "setup");
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
int
dpb_l7_open(struct bench *b, uint32_t nb)
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
	rc = dpb_worker_new(b);
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
			n = dpb_pump(b, m, k, o);
			ok = n == k;
			for (unsigned int i = 0; i < n && ok; i++)
				ok = l7_synack(b, o[i], svc, base, k);
			if (!ok) {
				rte_pktmbuf_free_bulk(o, n);
				goto lost;
			}
			n = dpb_pump(b, o, k, m);
			ok = n == k;
			for (unsigned int i = 0; i < n && ok; i++)
				ok = l7_ack(b, m[i], svc, base, k);
			if (!ok) {
				rte_pktmbuf_free_bulk(m, n);
				goto lost;
			}
			n = dpb_pump(b, m, k, o);
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
	dpb_worker_report(b->w, &st0, T_L7, "setup");
	return -EPROTO;
}
