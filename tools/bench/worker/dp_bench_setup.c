/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-dpbench's setup: the tables of the tests, the ring port, the pool
 * and the templates, and their teardown.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "dp_bench.h"
#include "lb/conf.h"
#include "lb/flow_table.h"
#include "lb/sched.h"

static int
sched_known(const char *name)
{
	return lb_sched_find(name) != NULL;
}

int
dpb_conf_compile(const struct lb_conf *c, struct lb_dpconf **out_conf,
		 const char *what)
{
	char err[256];
	int rc;

	*out_conf = rte_zmalloc("dpb_conf", sizeof(**out_conf), 0);
	if (*out_conf == NULL)
		return -ENOMEM;
	rc = lb_dpconf_build(*out_conf, c, err, sizeof(err));
	if (rc != 0)
		fprintf(stderr, "lb-dpbench: %s: %s\n", what, err);
	return rc;
}

/*
 * The table of the forwarding tests (one service), with @p l7 1 or 2 that
 * of the l7 test: two services identical but for `http`, with @p l7 3
 * that of conn: one service whose closed connections time out after
 * --conn-timeout.
 */
/*
 * bind's routed service: the NB_BES backends split among BIND_HOSTS
 * pools, the service's own and pN for host hN (N >= 1), a rule each; h0
 * falls through every rule to the service's own pool.
 */
static int
bind_pools(struct lb_conf *c, const struct lb_conf_svc_key *key,
	   struct lb_cmd_out *out)
{
	const uint32_t per = NB_BES / BIND_HOSTS;
	char pool[16], rule[64];
	int rc = 0;

	for (uint32_t h = 0; h < BIND_HOSTS && rc == 0; h++) {
		snprintf(pool, sizeof(pool), "p%u", h);
		if (h > 0)
			rc = lb_conf_pool_add(c, key, pool, NULL, out);
		for (uint32_t i = h * per; i < (h + 1) * per && rc == 0; i++) {
			struct lb_conf_ip ip = lb_conf_ip4(IP_BE + i);

			rc = lb_conf_be_add_pool(c, key, &ip, BE_PORT, 1,
						 h > 0 ? pool : NULL, out);
		}
		snprintf(rule, sizeof(rule), "host h%u.example.com pool %s", h,
			 pool);
		if (h > 0 && rc == 0)
			rc = lb_conf_rule_add(c, key, 0, rule, out);
	}
	return rc;
}

int
dpb_conf_build(const struct bench *b, int l7, struct lb_dpconf **out_conf)
{
	struct lb_conf *c = lb_conf_create(sched_known);
	struct lb_conf_svc_key key = {.proto = LB_CONF_PROTO_TCP, .vip = IP_VIP,
		.port = VPORT};
	struct lb_conf_svc_key key2 = {.proto = LB_CONF_PROTO_TCP,
		.vip = IP_VIP_L4, .port = VPORT};
	struct lb_conf_svc_opts o;
	struct lb_cmd_out out;
	bool routed = false;
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
	if (l7 >= 3) {
		/* The states of a closed connection: what fills the table.
		 * A connection under way keeps the defaults, so that the
		 * host pausing this process never times it out. */
		static const enum lb_conf_flow_opt st[] = {
			LB_CONF_FLOW_CLOSING, LB_CONF_FLOW_TIME_WAIT,
			LB_CONF_FLOW_CLOSED,
		};

		key.vip = IP_VIP_CONN;
		for (size_t i = 0; i < RTE_DIM(st); i++)
			o.flow[st[i]] = (uint64_t)b->conn_timeout_ms * 1000000;
		if (l7 >= 4)
			o.synp.mode = LB_CONF_SYNP_ON;
		routed = l7 == 5;
		l7 = 0;
	} else if (l7) {
		key.vip = IP_VIP_L7;
		o.http = true;
		/* l7 2: every request decided by the governor (M 0: all
		 * admitted), the cost of request admission. */
		o.gov[LB_CONF_GOV_ON] = l7 == 2;
	}
	if (rc == 0)
		rc = lb_conf_svc_add(c, &key, &o, &out);
	for (uint32_t i = 0; i < NB_BES && rc == 0 && !routed; i++)
		rc = lb_conf_be_add(c, &key, IP_BE + i, BE_PORT, 1, &out);
	if (rc == 0 && routed)
		rc = bind_pools(c, &key, &out);
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
	rc = dpb_conf_compile(c, out_conf, "configuration");
	/* dpb_run_round and the checks know the l7 services by slot. */
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

int
dpb_bench_setup(struct bench *b)
{
	int socket = (int)rte_socket_id();
	unsigned int nb_q;
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
	/* The tests run one worker on queue 0; rdr adds a second worker, on
	 * queue 1. The port has the second queue only when rdr runs, so
	 * that the other tests' rig is the one they were recorded on. */
	for (unsigned int q = 0; q < 2; q++) {
		char name[RTE_RING_NAMESIZE];

		snprintf(name, sizeof(name), "dpb_rx%u", q);
		b->rxq[q] = rte_ring_create(name, RING_SIZE, socket,
					    RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(name, sizeof(name), "dpb_tx%u", q);
		b->txq[q] = rte_ring_create(name, RING_SIZE, socket,
					    RING_F_SP_ENQ | RING_F_SC_DEQ);
	}
	b->rxr = b->rxq[0];
	b->txr = b->txq[0];
	if (b->pool == NULL || b->rxq[0] == NULL || b->rxq[1] == NULL ||
	    b->txq[0] == NULL || b->txq[1] == NULL) {
		fprintf(stderr, "lb-dpbench: mbufs or rings: %s\n",
			rte_strerror(rte_errno));
		return -ENOMEM;
	}
	nb_q = b->tests & (1u << T_RDR) ? 2 : 1;
	port = rte_eth_from_rings("dpb0", b->rxq, nb_q, b->txq, nb_q,
				  (unsigned int)socket);
	if (port != 0) {
		fprintf(stderr, "lb-dpbench: ring port: got %d, need 0\n",
			port);
		return -ENODEV;
	}
	b->port = (uint16_t)port;
	if (dpb_conf_build(b, 0, &b->conf_l4) != 0)
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
	if (lb_port_setup(b->port, nb_q, b->pool, RING_SIZE, RING_SIZE,
			  &b->dp.port[0]) != 0)
		return -EIO;

	memcpy(b->port_mac, b->dp.port[0].mac.addr_bytes, 6);
	memcpy(b->gw_mac, (const uint8_t[6]){2, 0, 0, 0, 0, 0xfe}, 6);
	b->vip = htonl(IP_VIP);
	b->vport = htons(VPORT);
	b->be_port = htons(BE_PORT);
	dpb_tmpl_init(&b->t_syn, b->port_mac, b->gw_mac, LB_TCP_SYN);
	dpb_tmpl_init(&b->t_ack, b->port_mac, b->gw_mac, LB_TCP_ACK);
	for (uint32_t i = 0; i < NB_BES; i++) {
		memcpy(b->be_mac[i],
		       (const uint8_t[6]){2, 0, 0, 0, 1, (uint8_t)(i + 1)}, 6);
		b->be_ip[i] = htonl(IP_BE + i);
		dpb_tmpl_init(&b->t_synack[i], b->port_mac, b->be_mac[i],
			  LB_TCP_SYN | LB_TCP_ACK);
		dpb_tmpl_init(&b->t_reply[i], b->port_mac, b->be_mac[i],
			  LB_TCP_ACK);
	}
	return 0;
}

/* The l7 test's table, header database, frames and flow records. */
int
dpb_l7_setup(struct bench *b)
{
	uint32_t most = 0;
	struct lb_hdr_cfg hc;

	for (unsigned int i = 0; i < b->nb_l7_sizes; i++)
		most = RTE_MAX(most, b->l7_sizes[i]);
	if (dpb_conf_build(b, b->l7_gov ? 2 : 1, &b->conf_l7) != 0)
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
	dpb_l7_tmpl_init(&b->t7_syn, b->port_mac, b->gw_mac, LB_TCP_SYN, "", 0);
	dpb_l7_tmpl_init(&b->t7_ack, b->port_mac, b->gw_mac, LB_TCP_ACK, "", 0);
	dpb_l7_tmpl_init(&b->t7_req, b->port_mac, b->gw_mac,
		     LB_TCP_PSH | LB_TCP_ACK, l7_req, sizeof(l7_req) - 1);
	for (uint32_t i = 0; i < NB_BES; i++) {
		dpb_l7_tmpl_init(&b->t7_synack[i], b->port_mac, b->be_mac[i],
			     LB_TCP_SYN | LB_TCP_ACK, "", 0);
		dpb_l7_tmpl_init(&b->t7_resp[i], b->port_mac, b->be_mac[i],
			     LB_TCP_PSH | LB_TCP_ACK, l7_resp,
			     sizeof(l7_resp) - 1);
	}
	return 0;
}

void
dpb_bench_teardown(struct bench *b)
{
	lb_worker_free(b->w);
	b->w = NULL;
	if (b->dp.port[0].nb_queues > 0)
		lb_port_close(b->port);
	for (unsigned int q = 0; q < 2; q++) {
		rte_ring_free(b->rxq[q]);
		rte_ring_free(b->txq[q]);
	}
	rte_mempool_free(b->pool);
	rte_free(b->conf_l4);
	rte_free(b->conf_l7);
	rte_free(b->conf_conn);
	dpb_bind_teardown(b);
	rte_free(b->conf6);
	free(b->rec6);
	free(b->crec);
	rte_free(b->admit_sh);
	lb_hdr_db_free(b->hdb);
	for (uint32_t s = 0; s < 2; s++) {
		free(b->l7f[s]);
		free(b->l7_by_snat[s]);
	}
	free(b->rec);
}
