/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_DP_PORT_H
#define LB_DP_PORT_H

#include <stdint.h>

#include <rte_ether.h>
#include <rte_mempool.h>

/** What the dataplane learnt about a port while setting it up. */
struct lb_port_info {
	uint16_t port_id;
	uint16_t nb_queues;
	struct rte_ether_addr mac;
	char driver[32];
	int rss;     /**< RSS spreads flows over the queues */
	uint16_t mtu;
};

/**
 * Configures @p port_id with @p nb_queues RX/TX queue pairs (one per
 * worker), RSS over IP/TCP/UDP when the port offers it and more than one
 * queue is asked for, and starts it.
 * @return 0 or a negative errno; a message has been logged.
 */
int lb_port_setup(uint16_t port_id, uint16_t nb_queues,
		  struct rte_mempool *mp, uint16_t nb_rxd, uint16_t nb_txd,
		  struct lb_port_info *info);

/** Stops and closes a port set up by lb_port_setup(). */
void lb_port_close(uint16_t port_id);

#endif /* LB_DP_PORT_H */
