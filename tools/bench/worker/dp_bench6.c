/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-dpbench's IPv6 rows: the table of one IPv6 service (fnat66: IPv6
 * backends behind IPv6 SNAT addresses), its frames, the flows of est6
 * opened through the worker (SYN, SYN-ACK, ACK), and the checks of what
 * the worker sends. The rounds themselves are the IPv4 rows' own
 * (dp_bench_round.c, dp_bench_tests.c), with IPv6 frames.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>

#include "dp_bench6.h"
#include "lb/conf.h"
#include "lb/flow_table.h"
#include "lb/sched.h"
#include "neigh.h"

#define NET6_LAN 0x20010db800000000ull	/* 2001:db8::/48, port 0 */
#define NET6_BE 0x20010db800000001ull	/* 2001:db8:0:1::/64 */
#define NET6_SNAT 0x20010db800000002ull /* 2001:db8:0:2::/64 */
#define NET6_VIP 0x20010db800000100ull	/* 2001:db8:0:100::/64 */

static int
sched_known(const char *name)
{
	return lb_sched_find(name) != NULL;
}

static struct lb_conf_ip
ip6_conf(const uint8_t *a)
{
	struct lb_conf_ip ip = {.af = LB_CONF_AF_INET6};

	memcpy(ip.ip6, a, 16);
	return ip;
}

/* The IPv6 table: 2001:db8::1/48 on port 0, the clients routed through
 * 2001:db8::fe, the SNAT addresses, one service and its backends. */
static int
conf6_build(struct bench *b, struct lb_dpconf **out_conf)
{
	struct lb_conf *c = lb_conf_create(sched_known);
	struct lb_conf_svc_key key = {.proto = LB_CONF_PROTO_TCP,
				      .af = LB_CONF_AF_INET6, .port = VPORT};
	struct lb_conf_ip ip, gw;
	struct lb_conf_svc_opts o;
	struct lb_cmd_out out;
	uint8_t a[16];
	int rc = -ENOMEM;

	lb_cmd_out_init(&out);
	if (c == NULL)
		goto done;
	lb_conf_svc_opts_default(&o);
	/* As for IPv4: no SYN of a round may time out. */
	o.syn_timeout_ns = LB_CONF_SYN_TIMEOUT_MAX_NS;
	addr6_of(a, NET6_LAN, 1);
	ip = ip6_conf(a);
	rc = lb_conf_addr_add_ip(c, &ip, 48, 0, 0, &out);
	gw = ip6_conf(b->gw6);
	addr6_of(a, NET6_EST, 0);
	ip = ip6_conf(a);
	/* 2001:db8:c000::/34: the clients of est6 and of new6. */
	if (rc == 0)
		rc = lb_conf_route_add_ip(c, &ip, 34, &gw, 0, &out);
	for (uint32_t i = 0; i < NB_SNATS && rc == 0; i++) {
		ip = ip6_conf(b->snat6[i]);
		rc = lb_conf_snat_add_ip(c, &ip, 0, &out);
	}
	memcpy(key.vip6, b->vip6, 16);
	if (rc == 0)
		rc = lb_conf_svc_add(c, &key, &o, &out);
	for (uint32_t i = 0; i < NB_BES && rc == 0; i++) {
		ip = ip6_conf(b->be6[i]);
		rc = lb_conf_be_add_ip(c, &key, &ip, BE_PORT, 1, &out);
	}
	if (rc != 0) {
		fprintf(stderr, "lb-dpbench: IPv6 configuration: %s\n",
			lb_cmd_out_errmsg(&out));
		goto done;
	}
	rc = dpb_conf_compile(c, out_conf, "IPv6 configuration");
done:
	lb_cmd_out_free(&out);
	lb_conf_free(c);
	return rc;
}

/* A frame from a client of prefix @p net to the VIP with TCP @p flags:
 * everything but the source's word at @p var, ports and sequence number,
 * whose sum the template keeps. */
static void
tmpl6_init(struct bench *b, struct tmpl6 *t, uint64_t net, uint8_t var,
	   uint8_t flags)
{
	uint8_t *f = t->f, ph[40];

	memset(t, 0, sizeof(*t));
	memcpy(f, b->port_mac, 6);
	memcpy(f + 6, b->gw_mac, 6);
	f[12] = 0x86;
	f[13] = 0xdd;
	f[OFF6_IP] = 0x60;
	f[OFF6_IP + 5] = 20; /* payload length: the TCP header */
	f[OFF6_IP + 6] = LB_IPPROTO_TCP;
	f[OFF6_IP + 7] = 64;
	addr6_of(f + OFF6_SRC, net, 0);
	memset(f + var, 0, 4);
	t->var = var;
	memcpy(f + OFF6_DST, b->vip6, 16);
	if (flags & LB_TCP_ACK)
		f[OFF6_TCP + 11] = 1;
	f[OFF6_TCP + 12] = 5 << 4;
	f[OFF6_TCP + 13] = flags;
	f[OFF6_TCP + 14] = 0xff;
	f[OFF6_TCP + 15] = 0xff;
	memcpy(ph, f + OFF6_SRC, 32);
	memset(ph + 32, 0, 8);
	ph[35] = 20;
	ph[39] = LB_IPPROTO_TCP;
	t->tcp_sum = lb_csum_partial(f + OFF6_TCP, 20,
				     lb_csum_partial(ph, sizeof(ph), 0));
}

/* The TCP checksum of an IPv6 frame without extension headers, summed
 * afresh: 0xffff when right. */
static uint16_t
tcp6_sum(const uint8_t *f, uint32_t tl)
{
	uint8_t ph[8] = {0};

	ph[2] = (uint8_t)(tl >> 8);
	ph[3] = (uint8_t)tl;
	ph[7] = LB_IPPROTO_TCP;
	return lb_csum_fold(lb_csum_partial(
		f + OFF6_TCP, tl,
		lb_csum_partial(ph, sizeof(ph),
				lb_csum_partial(f + OFF6_SRC, 32, 0))));
}

/* Rewrites @p f, a TCP frame of the worker's, into its peer's answer:
 * addresses, ports and MACs swapped, @p flags, @p seq and @p ack (network
 * order), the checksum summed afresh. Not on the timed path. */
static void
frame6_answer(uint8_t *f, uint8_t flags, uint32_t seq, uint32_t ack)
{
	uint8_t t[16];
	uint16_t p, c = 0;

	memcpy(t, f, 6);
	memcpy(f, f + 6, 6);
	memcpy(f + 6, t, 6);
	memcpy(t, f + OFF6_SRC, 16);
	memcpy(f + OFF6_SRC, f + OFF6_DST, 16);
	memcpy(f + OFF6_DST, t, 16);
	memcpy(&p, f + OFF6_TCP, 2);
	memcpy(f + OFF6_TCP, f + OFF6_TCP + 2, 2);
	memcpy(f + OFF6_TCP + 2, &p, 2);
	memcpy(f + OFF6_SEQ, &seq, 4);
	memcpy(f + OFF6_SEQ + 4, &ack, 4);
	f[OFF6_TCP + 13] = flags;
	memcpy(f + OFF6_TCP_CSUM, &c, 2);
	c = (uint16_t)~tcp6_sum(f, 20);
	memcpy(f + OFF6_TCP_CSUM, &c, 2);
}

int
dpb6_setup(struct bench *b)
{
	addr6_of(b->vip6, NET6_VIP, 1);
	addr6_of(b->gw6, NET6_LAN, 0xfe);
	for (uint32_t i = 0; i < NB_BES; i++)
		addr6_of(b->be6[i], NET6_BE, i + 1);
	for (uint32_t i = 0; i < NB_SNATS; i++)
		addr6_of(b->snat6[i], NET6_SNAT, i + 1);
	if (conf6_build(b, &b->conf6) != 0)
		return -EINVAL;
	tmpl6_init(b, &b->t6_syn_est, NET6_EST, OFF6_SRC + 4, LB_TCP_SYN);
	tmpl6_init(b, &b->t6_syn, NET6_NEW, OFF6_SRC + 4, LB_TCP_SYN);
	tmpl6_init(b, &b->t6_ack, NET6_EST, OFF6_SRC + 4, LB_TCP_ACK);
	return 0;
}

int
dpb6_statics(struct bench *b)
{
	struct rte_mbuf *m[RING_SIZE];
	unsigned int n;
	int rc = lb_neigh6_set_static(b->w->neigh6, b->gw6, b->gw_mac);

	for (uint32_t i = 0; i < NB_BES && rc == 0; i++)
		rc = lb_neigh6_set_static(b->w->neigh6, b->be6[i],
					  b->be_mac[i]);
	if (rc != 0 || b->dp.conf != b->conf6)
		return rc;
	/* A worker on an IPv6 table announces its addresses at its first
	 * poll (unsolicited advertisements): not the round's packets. */
	lb_worker_poll(b->w);
	while ((n = rte_ring_sc_dequeue_burst(b->txr, (void **)m, RING_SIZE,
					      NULL)) > 0)
		rte_pktmbuf_free_bulk(m, n);
	return 0;
}

/* The index of the last 32 bits of @p a among addresses @p net::1.. of
 * @p n, or UINT32_MAX. */
static uint32_t
index6(const uint8_t *a, uint64_t net, uint32_t n)
{
	uint8_t w[16];
	uint32_t low;

	addr6_of(w, net, 0);
	if (memcmp(a, w, 12) != 0)
		return UINT32_MAX;
	memcpy(&low, a + 12, 4);
	low = ntohl(low);
	return low >= 1 && low <= n ? low - 1 : UINT32_MAX;
}

/* The SYN the worker sent to a backend becomes that backend's SYN-ACK;
 * the flow's SNAT address, port and backend are recorded. */
static int
syn6_to_synack(struct bench *b, struct rte_mbuf *m, uint32_t base,
	       unsigned int k)
{
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t seq, be, sn;
	uint16_t dport;

	memcpy(&seq, f + OFF6_SEQ, 4);
	seq = ntohl(seq);
	memcpy(&dport, f + OFF6_TCP + 2, 2);
	be = index6(f + OFF6_DST, NET6_BE, NB_BES);
	sn = index6(f + OFF6_SRC, NET6_SNAT, NB_SNATS);
	if (rte_pktmbuf_data_len(m) != FRAME6_LEN || seq - base >= k ||
	    be >= NB_BES || sn >= NB_SNATS || dport != b->be_port)
		return 0;
	memcpy(&b->rec6[seq].snat_port, f + OFF6_TCP, 2);
	b->rec6[seq].snat = (uint8_t)sn;
	b->rec6[seq].be = (uint8_t)be;
	m->port = b->port;
	frame6_answer(f, LB_TCP_SYN | LB_TCP_ACK, htonl(seq | REPLY_BIT),
		      htonl(seq + 1));
	return 1;
}

/* The SYN-ACK the worker sent to a client becomes the client's ACK. */
static int
synack6_to_ack(struct bench *b, struct rte_mbuf *m, uint32_t base,
	       unsigned int k)
{
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
	uint8_t want[16];
	uint32_t seq, i, low;
	uint16_t sport, dport;

	memcpy(&seq, f + OFF6_SEQ, 4);
	i = ntohl(seq) & ~REPLY_BIT;
	memcpy(&sport, f + OFF6_TCP, 2);
	memcpy(&dport, f + OFF6_TCP + 2, 2);
	low = est6_client_low(i);
	addr6_of(want, NET6_EST, 0);
	memcpy(want + 4, &low, 4);
	if (i - base >= k || memcmp(f + OFF6_SRC, b->vip6, 16) != 0 ||
	    sport != b->vport || memcmp(f + OFF6_DST, want, 16) != 0 ||
	    dport != est6_client_port(i))
		return 0;
	m->port = b->port;
	frame6_answer(f, LB_TCP_ACK, htonl(i + 1),
		      htonl((i | REPLY_BIT) + 1));
	return 1;
}

static void
syn6_write(struct bench *b, struct rte_mbuf *m, uint32_t i)
{
	frame6_write(mbuf_frame_len(m, b->port, FRAME6_LEN), &b->t6_syn_est,
		     est6_client_low(i), est6_client_port(i), b->vport,
		     htonl(i));
}

int
dpb6_flows_open(struct bench *b, uint32_t nb)
{
	static const struct dpb_hs hs = {syn6_write, syn6_to_synack,
					 synack6_to_ack};
	struct lb_worker_stats st0;
	struct lb_src_budget_conf sb;
	struct lb_flow_stats fs;
	uint64_t t0 = rte_rdtsc();
	int rc;

	if (b->rec6 == NULL)
		b->rec6 = calloc(MAX_FLOWS, sizeof(*b->rec6));
	if (b->rec6 == NULL)
		return -ENOMEM;
	b->dp.conf = b->conf6;
	/* Many flows per source /64: without the budget of new flows per
	 * source, which new6 measures and est6 does not reach. */
	sb = b->dp.src_budget;
	b->dp.src_budget.rate = 0;
	rc = dpb_worker_new(b);
	b->dp.src_budget = sb;
	if (rc != 0)
		return rc;
	st0 = b->w->st;
	rc = dpb_handshakes(b, nb, &hs, &b->nb_rec6);
	if (rc == -EPROTO) {
		fprintf(stderr,
			"lb-dpbench: opening IPv6 flow %u: the worker did not "
			"answer every packet\n",
			b->nb_rec6);
		dpb_worker_report(b->w, &st0, T_EST6, "setup");
	}
	if (rc != 0)
		return rc;
	lb_flow_stats_get(b->w->ft, &fs);
	if (fs.flows != nb) {
		fprintf(stderr,
			"lb-dpbench: %" PRIu64 " IPv6 flows in the table for "
			"%u opened\n",
			fs.flows, nb);
		return -EPROTO;
	}
	printf("opened %u IPv6 flows through the worker (SYN, SYN-ACK, ACK) "
	       "in %.2f s\n",
	       nb, (double)(rte_rdtsc() - t0) / (double)b->hz);
	return 0;
}

const char *
dpb6_check_out(const struct bench *b, const uint8_t *f, uint32_t len,
	       enum test t)
{
	const struct flow_rec6 *r;
	uint32_t be, sn, seq;
	uint16_t sport, dport;

	if (len != FRAME6_LEN || f[12] != 0x86 || f[13] != 0xdd)
		return "not IPv6 of the frame's length";
	if (tcp6_sum(f, 20) != 0xffff)
		return "TCP checksum wrong";
	if (memcmp(f + 6, b->port_mac, 6) != 0)
		return "source MAC is not the port's";
	if (f[OFF6_IP + 7] != 63)
		return "hop limit not decremented";
	be = index6(f + OFF6_DST, NET6_BE, NB_BES);
	sn = index6(f + OFF6_SRC, NET6_SNAT, NB_SNATS);
	memcpy(&sport, f + OFF6_TCP, 2);
	memcpy(&dport, f + OFF6_TCP + 2, 2);
	if (be >= NB_BES || dport != b->be_port)
		return "client packet not sent to a backend";
	if (memcmp(f, b->be_mac[be], 6) != 0)
		return "client packet not sent to its backend's MAC";
	if (sn >= NB_SNATS)
		return "client packet not from a SNAT address";
	if (t == T_NEW6)
		return NULL;
	memcpy(&seq, f + OFF6_SEQ, 4);
	seq = ntohl(seq);
	if (seq >= b->nb_rec6)
		return "client packet of an unknown flow";
	r = &b->rec6[seq];
	if (r->snat != sn || r->snat_port != sport || r->be != be)
		return "client packet not rewritten to its flow's SNAT -> "
		       "backend";
	return NULL;
}
