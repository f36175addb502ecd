/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_log.h>

#include "port.h"

#define LOG(level, fmt, ...) \
	RTE_LOG(level, USER1, "port: " fmt "\n", ##__VA_ARGS__)

/* Multi-queue receive and checksum offloads, as far as @p di offers. */
static void
port_conf(uint16_t port_id, uint16_t nb_queues,
	  const struct rte_eth_dev_info *di, struct rte_eth_conf *conf,
	  struct lb_port_info *info)
{
	if (nb_queues > 1) {
		uint64_t hf = (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP |
			       RTE_ETH_RSS_UDP) &
			      di->flow_type_rss_offloads;

		/* Without RSS every flow would land on queue 0; the redirect
		 * rings still make that correct, only slower. */
		if (hf != 0) {
			conf->rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
			conf->rx_adv_conf.rss_conf.rss_hf = hf;
			info->rss = 1;
		} else {
			LOG(WARNING, "%u (%s): no RSS; flows are spread by "
				     "the redirect rings only",
			    port_id, di->driver_name);
		}
	}
	/* Where the port checks TCP and UDP checksums on receipt, its word
	 * spares the worker doing so for a new flow's first packet (the
	 * only packets whose checksum it verifies); elsewhere the mbufs say
	 * "unknown" and the worker checks in software. */
	conf->rxmode.offloads |=
		di->rx_offload_capa &
		(RTE_ETH_RX_OFFLOAD_TCP_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM);
	/* Checksums are updated incrementally in software, which every port
	 * supports, so no tx offload is required. */
}

/* One rx and one tx queue per worker. */
static int
port_queues(uint16_t port_id, uint16_t nb_queues, struct rte_mempool *mp,
	    uint16_t nb_rxd, uint16_t nb_txd,
	    const struct rte_eth_dev_info *di, const struct rte_eth_conf *conf)
{
	int socket = rte_eth_dev_socket_id(port_id);
	struct rte_eth_rxconf rxq;
	struct rte_eth_txconf txq;
	int rc;

	rxq = di->default_rxconf;
	rxq.offloads = conf->rxmode.offloads;
	txq = di->default_txconf;
	txq.offloads = conf->txmode.offloads;
	for (uint16_t q = 0; q < nb_queues; q++) {
		rc = rte_eth_rx_queue_setup(port_id, q, nb_rxd, socket, &rxq,
					    mp);
		if (rc != 0) {
			LOG(ERR, "%u: rx queue %u: %s", port_id, q,
			    strerror(-rc));
			return rc;
		}
		rc = rte_eth_tx_queue_setup(port_id, q, nb_txd, socket, &txq);
		if (rc != 0) {
			LOG(ERR, "%u: tx queue %u: %s", port_id, q,
			    strerror(-rc));
			return rc;
		}
	}
	return 0;
}

/* The port's MAC address and MTU into @p info. */
static int
port_addr(uint16_t port_id, struct lb_port_info *info)
{
	int rc = rte_eth_macaddr_get(port_id, &info->mac);

	if (rc != 0)
		return rc;
	if (rte_is_zero_ether_addr(&info->mac)) {
		/* Some vdevs (net_ring) have no address: take a random
		 * locally administered one, or ARP could not be answered. */
		rte_eth_random_addr(info->mac.addr_bytes);
		if (rte_eth_dev_default_mac_addr_set(port_id, &info->mac) != 0)
			LOG(INFO, "%u: has no MAC address; using "
				  RTE_ETHER_ADDR_PRT_FMT " in software",
			    port_id, RTE_ETHER_ADDR_BYTES(&info->mac));
	}
	if (rte_eth_dev_get_mtu(port_id, &info->mtu) != 0)
		info->mtu = RTE_ETHER_MTU;
	return 0;
}

int
lb_port_setup(uint16_t port_id, uint16_t nb_queues, struct rte_mempool *mp,
	      uint16_t nb_rxd, uint16_t nb_txd, struct lb_port_info *info)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info di;
	int rc;

	memset(info, 0, sizeof(*info));
	memset(&conf, 0, sizeof(conf));
	info->port_id = port_id;
	info->nb_queues = nb_queues;
	rc = rte_eth_dev_info_get(port_id, &di);
	if (rc != 0) {
		LOG(ERR, "%u: cannot read device info: %s", port_id,
		    strerror(-rc));
		return rc;
	}
	snprintf(info->driver, sizeof(info->driver), "%s", di.driver_name);
	if (nb_queues > di.max_rx_queues || nb_queues > di.max_tx_queues) {
		LOG(ERR, "%u (%s): %u workers need %u queue pairs, the port "
			 "has %u rx / %u tx",
		    port_id, di.driver_name, nb_queues, nb_queues,
		    di.max_rx_queues, di.max_tx_queues);
		return -EINVAL;
	}
	port_conf(port_id, nb_queues, &di, &conf, info);
	rc = rte_eth_dev_configure(port_id, nb_queues, nb_queues, &conf);
	if (rc != 0) {
		LOG(ERR, "%u: configure failed: %s", port_id, strerror(-rc));
		return rc;
	}
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(port_id, &nb_rxd, &nb_txd);
	if (rc != 0) {
		LOG(ERR, "%u: descriptor counts refused: %s", port_id,
		    strerror(-rc));
		return rc;
	}
	rc = port_queues(port_id, nb_queues, mp, nb_rxd, nb_txd, &di, &conf);
	if (rc != 0)
		return rc;
	rc = port_addr(port_id, info);
	if (rc != 0)
		return rc;
	rc = rte_eth_dev_start(port_id);
	if (rc != 0) {
		LOG(ERR, "%u: start failed: %s", port_id, strerror(-rc));
		return rc;
	}
	LOG(INFO, "%u (%s) up: %u queue pair(s)%s, mac " RTE_ETHER_ADDR_PRT_FMT,
	    port_id, info->driver, nb_queues, info->rss ? " with RSS" : "",
	    RTE_ETHER_ADDR_BYTES(&info->mac));
	return 0;
}

void
lb_port_close(uint16_t port_id)
{
	rte_eth_dev_stop(port_id);
	rte_eth_dev_close(port_id);
}
