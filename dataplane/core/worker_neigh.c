/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Neighbours: ARP requests and replies, learning senders (and telling the
 * other workers), and route_out(), which picks the port and next hop of a
 * frame and parks it until the next hop answers.
 */
#include "worker_priv.h"

#define VLAN_HDR_LEN 4

/*
 * Gives frame @p m the tag of the port it leaves by (@p vid, 0: none),
 * whatever tag it came with: the output side's VLAN is ours to choose,
 * never the sender's. The priority bits start at 0 for the same reason.
 * @return 0, or -ENOSPC without headroom for a tag.
 */
static inline int
vlan_out(struct rte_mbuf *m, uint16_t vid)
{
	uint8_t *fr = frame_of(m);
	bool tagged = rd16(fr + 12) == LB_ETHER_TYPE_VLAN;

	if (likely(!tagged && vid == 0))
		return 0;
	if (tagged && vid != 0) {
		wr16(fr + 14, vid);
		return 0;
	}
	if (tagged) {
		memmove(fr + VLAN_HDR_LEN, fr, 12);
		rte_pktmbuf_adj(m, VLAN_HDR_LEN);
		return 0;
	}
	fr = (uint8_t *)rte_pktmbuf_prepend(m, VLAN_HDR_LEN);
	if (fr == NULL)
		return -ENOSPC;
	memmove(fr, fr + VLAN_HDR_LEN, 12);
	wr16(fr + 12, LB_ETHER_TYPE_VLAN);
	wr16(fr + 14, vid);
	return 0;
}

void
lb_worker_send_arp_request(struct lb_worker *w, uint16_t port, uint32_t src,
			   uint32_t target, const uint8_t *dst_mac)
{
	struct lb_dp *dp = w->dp;
	struct lb_nat_link link = { 0 };
	struct rte_mbuf *m;
	int len;

	/* The table may name any port up to LB_CONF_PORT_MAX; only those
	 * set up have a MAC and a TX buffer. */
	if (unlikely(port >= dp->nb_ports)) {
		w->st.drop[LB_DROP_PORT_UNUSED]++;
		return;
	}
	m = rte_pktmbuf_alloc(dp->pool);
	if (m == NULL) {
		w->st.drop[LB_DROP_NOMBUF]++;
		return;
	}
	memcpy(link.mac, dp->port[port].mac.addr_bytes, 6);
	link.vlan_tci = w->conf->port_vlan[port];
	link.has_vlan = link.vlan_tci != 0;
	len = lb_nat_arp_request(rte_pktmbuf_mtod(m, uint8_t *),
				 rte_pktmbuf_tailroom(m), &link, src, target,
				 dst_mac);
	if (len < 0 || rte_pktmbuf_append(m, (uint16_t)len) == NULL) {
		rte_pktmbuf_free(m);
		return;
	}
	w->st.arp_requests++;
	tx_enqueue(w, port, m);
}

void
lb_worker_neigh_release(void *ctx, uint32_t ip, uint64_t handle,
			const uint8_t *mac)
{
	struct lb_worker *w = ctx;
	struct rte_mbuf *m = (struct rte_mbuf *)(uintptr_t)handle;
	uint16_t port = m->port;

	(void)ip;
	if (mac == NULL) {
		drop(w, m, LB_DROP_NEIGH);
		return;
	}
	lb_nat_set_macs(frame_of(m), w->dp->port[port].mac.addr_bytes, mac);
	tx_enqueue(w, port, m);
}

/*
 * Sends @p m toward @p dst: picks the port and next hop, sets the MAC
 * addresses, or parks the frame until the next hop answers our ARP
 * request. m->port is reused to remember the output port while parked.
 */
void
lb_worker_route_out(struct lb_worker *w, struct rte_mbuf *m, uint32_t dst,
		    uint64_t now)
{
	struct lb_dp *dp = w->dp;
	uint16_t port;
	uint32_t nh, src;
	uint8_t mac[6];
	int rc;

	if (lb_dpconf_next_hop(w->conf, dst, &port, &nh, &src) != 0) {
		drop(w, m, LB_DROP_NO_ROUTE);
		return;
	}
	if (unlikely(port >= dp->nb_ports)) {
		drop(w, m, LB_DROP_PORT_UNUSED);
		return;
	}
	if (unlikely(vlan_out(m, w->conf->port_vlan[port]) != 0)) {
		drop(w, m, LB_DROP_NOMBUF);
		return;
	}
	rc = lb_neigh_lookup(w->neigh, nh, now, mac);
	if (likely(rc == LB_NEIGH_HIT || rc == LB_NEIGH_HIT_PROBE)) {
		lb_nat_set_macs(frame_of(m), dp->port[port].mac.addr_bytes,
				mac);
		tx_enqueue(w, port, m);
		/* A stale entry is used while a unicast request checks
		 * it, as Linux does. */
		if (rc == LB_NEIGH_HIT_PROBE)
			lb_worker_send_arp_request(w, port, src, nh, mac);
		return;
	}
	if (rc != LB_NEIGH_MISS_SEND && rc != LB_NEIGH_MISS_PENDING) {
		drop(w, m, LB_DROP_NEIGH);
		return;
	}
	m->port = port;
	if (lb_neigh_hold(w->neigh, nh, (uintptr_t)m) != 0) {
		drop(w, m, LB_DROP_NEIGH);
		return;
	}
	if (rc == LB_NEIGH_MISS_SEND)
		lb_worker_send_arp_request(w, port, src, nh, NULL);
}

void
lb_worker_neigh_learn(struct lb_worker *w, uint32_t ip, const uint8_t *mac,
		      uint16_t port, uint64_t now, int broadcast)
{
	struct lb_dp *dp = w->dp;
	uint16_t p;
	uint32_t nh, src;

	/* Only neighbours on a connected subnet of the port they spoke on;
	 * anything else is a spoof or a misconfiguration. */
	if (lb_dpconf_next_hop(w->conf, ip, &p, &nh, &src) != 0 ||
	    p != port || nh != ip)
		return;
	lb_neigh_learn(w->neigh, ip, mac, now);
	if (!broadcast)
		return;
	for (uint16_t i = 0; i < dp->nb_workers; i++) {
		struct lb_neigh_msg msg = { .ip = ip, .port = port };

		if (i == w->wid)
			continue;
		memcpy(msg.mac, mac, 6);
		/* Losing one message only costs that worker an ARP
		 * request of its own. */
		rte_ring_mp_enqueue_elem(dp->w[i]->neigh_in, &msg,
					 sizeof(msg));
	}
}

void
lb_worker_handle_arp(struct lb_worker *w, struct rte_mbuf *m,
		     struct lb_pkt *pkt, uint64_t now)
{
	struct lb_dp *dp = w->dp;
	uint16_t port = m->port;
	struct lb_nat_arp arp;
	uint8_t *fr = frame_of(m);
	uint32_t len = rte_pktmbuf_data_len(m);

	if (lb_nat_arp_parse(fr, len, pkt, &arp) != 0) {
		drop(w, m, LB_DROP_NOT_OURS);
		return;
	}
	/* Nobody else may speak for our addresses: learning such a sender
	 * would hand our own traffic (and the kernel's, through the
	 * exception path) to whoever claims it. */
	if (unlikely(arp.spa != 0 && lb_dpconf_is_own(w->conf, arp.spa))) {
		drop(w, m, LB_DROP_ARP_SPOOF);
		return;
	}
	if (arp.spa != 0)
		lb_worker_neigh_learn(w, arp.spa, arp.sha, port, now, 1);
	if (arp.op == LB_ARP_REQUEST &&
	    lb_dpconf_is_ours(w->conf, arp.tpa, port) &&
	    lb_nat_arp_reply(fr, len, pkt, dp->port[port].mac.addr_bytes) ==
		    0) {
		w->st.arp_replies++;
		tx_enqueue(w, port, m);
		return;
	}
	/* The kernel resolves its next hops with requests of its own. */
	if (arp.op == LB_ARP_REPLY && w->exc_out != NULL &&
	    lb_exc_local(w->conf, arp.tpa)) {
		lb_exc_put(w, m);
		return;
	}
	rte_pktmbuf_free(m);
}
