/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Neighbours: ARP requests and replies, learning senders (and telling the
 * other workers), and route_out(), which picks the port and next hop of a
 * frame and parks it until the next hop answers.
 */
#include "worker_priv.h"

#include "dpconf6.h"
#include "nd6.h"

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

/* A buffer for a request of ours out of @p port, and the port's link in
 * @p link; NULL (counted) when there is none. */
static struct rte_mbuf *
req_alloc(struct lb_worker *w, uint16_t port, struct lb_nat_link *link)
{
	struct lb_dp *dp = w->dp;
	struct rte_mbuf *m;

	/* The table may name any port up to LB_CONF_PORT_MAX; only those
	 * set up have a MAC and a TX buffer. */
	if (unlikely(port >= dp->nb_ports)) {
		w->st.drop[LB_DROP_PORT_UNUSED]++;
		return NULL;
	}
	m = rte_pktmbuf_alloc(dp->pool);
	if (m == NULL) {
		w->st.drop[LB_DROP_NOMBUF]++;
		return NULL;
	}
	memset(link, 0, sizeof(*link));
	memcpy(link->mac, dp->port[port].mac.addr_bytes, 6);
	link->vlan_tci = w->conf->port_vlan[port];
	link->has_vlan = link->vlan_tci != 0;
	return m;
}

/* Sends the @p len bytes built in @p m; false (freed) if it failed. */
static bool
req_send(struct lb_worker *w, uint16_t port, struct rte_mbuf *m, int len)
{
	if (len < 0 || rte_pktmbuf_append(m, (uint16_t)len) == NULL) {
		rte_pktmbuf_free(m);
		return false;
	}
	tx_enqueue(w, port, m);
	return true;
}

void
lb_worker_send_arp_request(struct lb_worker *w, uint16_t port, uint32_t src,
			   uint32_t target, const uint8_t *dst_mac)
{
	struct lb_nat_link link;
	struct rte_mbuf *m = req_alloc(w, port, &link);

	if (m != NULL &&
	    req_send(w, port, m,
		     lb_nat_arp_request(rte_pktmbuf_mtod(m, uint8_t *),
					rte_pktmbuf_tailroom(m), &link, src,
					target, dst_mac)))
		w->st.arp_requests++;
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

/* Whether @p m may leave by @p port, its tag set for it; dropped and
 * counted if not. */
static inline bool
out_ready(struct lb_worker *w, struct rte_mbuf *m, uint16_t port)
{
	if (unlikely(port >= w->dp->nb_ports)) {
		drop(w, m, LB_DROP_PORT_UNUSED);
		return false;
	}
	if (unlikely(vlan_out(m, w->conf->port_vlan[port]) != 0)) {
		drop(w, m, LB_DROP_NOMBUF);
		return false;
	}
	return true;
}

/*
 * Acts on neighbour lookup @p rc for @p m out of @p port: sent to
 * @p mac on a hit, dropped when the next hop failed. false when the
 * frame is to be parked (m->port then holds the output port).
 */
static inline bool
out_done(struct lb_worker *w, struct rte_mbuf *m, uint16_t port, int rc,
	 const uint8_t *mac)
{
	if (likely(rc == LB_NEIGH_HIT || rc == LB_NEIGH_HIT_PROBE)) {
		lb_nat_set_macs(frame_of(m), w->dp->port[port].mac.addr_bytes,
				mac);
		tx_enqueue(w, port, m);
		return true;
	}
	if (rc != LB_NEIGH_MISS_SEND && rc != LB_NEIGH_MISS_PENDING) {
		drop(w, m, LB_DROP_NEIGH);
		return true;
	}
	m->port = port;
	return false;
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
	uint16_t port;
	uint32_t nh, src;
	uint8_t mac[6];
	int rc;

	if (lb_dpconf_next_hop(w->conf, dst, &port, &nh, &src) != 0) {
		drop(w, m, LB_DROP_NO_ROUTE);
		return;
	}
	if (!out_ready(w, m, port))
		return;
	rc = lb_neigh_lookup(w->neigh, nh, now, mac);
	if (out_done(w, m, port, rc, mac)) {
		/* A stale entry is used while a unicast request checks
		 * it, as Linux does. */
		if (rc == LB_NEIGH_HIT_PROBE)
			lb_worker_send_arp_request(w, port, src, nh, mac);
		return;
	}
	if (lb_neigh_hold(w->neigh, nh, (uintptr_t)m) != 0) {
		drop(w, m, LB_DROP_NEIGH);
		return;
	}
	if (rc == LB_NEIGH_MISS_SEND)
		lb_worker_send_arp_request(w, port, src, nh, NULL);
}

/* Tells the other workers of a neighbour learnt: the answer to one
 * worker's request reaches whichever worker RSS picks, and the others
 * would ask again. */
static void
neigh_share(struct lb_worker *w, struct lb_neigh_msg *msg)
{
	struct lb_dp *dp = w->dp;

	for (uint16_t i = 0; i < dp->nb_workers; i++) {
		if (i == w->wid)
			continue;
		/* Losing one message only costs that worker a request of
		 * its own. */
		rte_ring_mp_enqueue_elem(dp->w[i]->neigh_in, msg,
					 sizeof(*msg));
	}
}

void
lb_worker_neigh_learn(struct lb_worker *w, uint32_t ip, const uint8_t *mac,
		      uint16_t port, uint64_t now, int broadcast)
{
	struct lb_neigh_msg msg = { .ip = ip, .port = port };
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
	memcpy(msg.mac, mac, 6);
	neigh_share(w, &msg);
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

/* ---- IPv6 ---------------------------------------------------------------- */

void
lb_worker_send_na_announce(struct lb_worker *w, uint16_t port,
			   const uint8_t *addr)
{
	struct lb_nat_link link;
	struct rte_mbuf *m = req_alloc(w, port, &link);

	if (m != NULL &&
	    req_send(w, port, m,
		     lb_nd_na_announce(rte_pktmbuf_mtod(m, uint8_t *),
				       rte_pktmbuf_tailroom(m), &link, addr)))
		w->st.nd_announces++;
}

void
lb_worker_send_ns(struct lb_worker *w, uint16_t port, const uint8_t *src,
		  const uint8_t *target, const uint8_t *dst_mac)
{
	struct lb_nat_link link;
	struct rte_mbuf *m = req_alloc(w, port, &link);

	if (m != NULL &&
	    req_send(w, port, m,
		     lb_nd_ns_build(rte_pktmbuf_mtod(m, uint8_t *),
				    rte_pktmbuf_tailroom(m), &link, src,
				    target, dst_mac)))
		w->st.nd_solicits++;
}

/*
 * lb_worker_route_out() for an IPv6 frame: the port and next hop of
 * @p dst from the table's IPv6 prefixes and routes, its MAC from the
 * IPv6 neighbour table, or the frame parked while a solicitation asks.
 */
void
lb_worker_route_out6(struct lb_worker *w, struct rte_mbuf *m,
		     const uint8_t *dst, uint64_t now)
{
	uint16_t port;
	uint8_t nh[16], src[16], mac[6];
	int rc;

	if (lb_dpconf6_next_hop(w->conf, dst, &port, nh, src) != 0) {
		drop(w, m, LB_DROP_NO_ROUTE);
		return;
	}
	if (!out_ready(w, m, port))
		return;
	rc = lb_neigh6_lookup(w->neigh6, nh, now, mac);
	if (out_done(w, m, port, rc, mac)) {
		if (rc == LB_NEIGH_HIT_PROBE)
			lb_worker_send_ns(w, port, src, nh, mac);
		return;
	}
	if (lb_neigh6_hold(w->neigh6, nh, (uintptr_t)m) != 0) {
		drop(w, m, LB_DROP_NEIGH);
		return;
	}
	if (rc == LB_NEIGH_MISS_SEND)
		lb_worker_send_ns(w, port, src, nh, NULL);
}

static bool
neigh6_learn(struct lb_worker *w, const uint8_t *ip, const uint8_t *mac,
	     uint16_t port, uint64_t now)
{
	uint16_t p;
	uint8_t nh[16], src[16];

	/* Only neighbours on a connected prefix of the port they spoke
	 * on, as for ARP. */
	if (lb_dpconf6_next_hop(w->conf, ip, &p, nh, src) != 0 || p != port ||
	    memcmp(nh, ip, 16) != 0)
		return false;
	return lb_neigh6_learn(w->neigh6, ip, mac, now) == 0;
}

void
lb_worker_neigh6_learn(struct lb_worker *w, const uint8_t *ip,
		       const uint8_t *mac, uint16_t port, uint64_t now)
{
	struct lb_neigh_msg msg = { .port = port, .ipv6 = 1 };

	/* Shared as ARP's are: the advertisement answering one worker's
	 * solicitation comes to the worker the NIC hashes it to, which is
	 * the same one for every worker's solicitation of that address. */
	if (!neigh6_learn(w, ip, mac, port, now))
		return;
	memcpy(msg.mac, mac, 6);
	memcpy(msg.ip6, ip, 16);
	neigh_share(w, &msg);
}

void
lb_worker_neigh_msg(struct lb_worker *w, const struct lb_neigh_msg *msg,
		    uint64_t now)
{
	if (msg->ipv6)
		neigh6_learn(w, msg->ip6, msg->mac, msg->port, now);
	else
		lb_worker_neigh_learn(w, msg->ip, msg->mac, msg->port, now, 0);
}

void
lb_worker_neigh6_poll(struct lb_worker *w, uint64_t now)
{
	uint8_t due[16][16];
	int n = lb_neigh6_poll(w->neigh6, now, due, 16);

	for (int i = 0; i < n; i++) {
		uint16_t port;
		uint8_t nh[16], src[16];

		if (lb_dpconf6_next_hop(w->conf, due[i], &port, nh, src) == 0)
			lb_worker_send_ns(w, port, src, due[i], NULL);
	}
}

/* ---- the snapshot lb-control asks for ------------------------------------ */

struct view_fill {
	struct lb_worker *w;
	struct lb_neigh_view *v;
	enum lb_neigh_view_af af;
	uint64_t now;
};

static void
view_entry(void *arg, const uint8_t *addr, const struct lb_neigh_info *info)
{
	struct view_fill *f = arg;
	struct lb_neigh_view *v = f->v;
	struct lb_neigh_view_entry *e;
	uint16_t port = LB_NEIGH_VIEW_NO_PORT;

	if (v->nb[f->af] >= LB_NEIGH_VIEW_MAX) {
		v->more[f->af]++;
		return;
	}
	e = &v->e[f->af][v->nb[f->af]++];
	memset(e, 0, sizeof(*e));
	if (f->af == LB_NEIGH_VIEW_ND) {
		uint8_t nh[16], src[16];

		memcpy(e->addr, addr, 16);
		if (lb_dpconf6_next_hop(f->w->conf, addr, &port, nh, src) != 0)
			port = LB_NEIGH_VIEW_NO_PORT;
	} else {
		uint32_t ip, nh, src;

		memcpy(&ip, addr, 4);
		memcpy(e->addr, addr, 4);
		if (lb_dpconf_next_hop(f->w->conf, ip, &port, &nh, &src) != 0)
			port = LB_NEIGH_VIEW_NO_PORT;
	}
	memcpy(e->mac, info->mac, 6);
	e->port = port;
	e->state = (uint8_t)info->state;
	e->probes = info->probes;
	e->held = info->held;
	e->age_ns = info->confirmed_ns == 0 ? UINT64_MAX
		    : f->now > info->confirmed_ns ? f->now - info->confirmed_ns
						  : 0;
}

void
lb_worker_neigh_view(struct lb_worker *w, uint64_t now)
{
	struct lb_neigh_view *v = w->neigh_view;
	uint64_t asked = atomic_load_explicit(&v->asked, memory_order_acquire);
	struct view_fill f = {.w = w, .v = v, .now = now};
	uint64_t seq;

	if (likely(asked == atomic_load_explicit(&v->answered,
						 memory_order_relaxed)))
		return;
	seq = atomic_load_explicit(&v->seq, memory_order_relaxed);
	atomic_store_explicit(&v->seq, seq + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	for (int af = 0; af < LB_NEIGH_VIEW_AFS; af++) {
		struct lb_neigh *t = af == LB_NEIGH_VIEW_ND ? w->neigh6
							    : w->neigh;

		f.af = (enum lb_neigh_view_af)af;
		v->nb[af] = 0;
		v->more[af] = 0;
		lb_neigh_stats(t, &v->st[af]);
		lb_neigh_walk(t, now, view_entry, &f);
	}
	atomic_store_explicit(&v->seq, seq + 2, memory_order_release);
	atomic_store_explicit(&v->answered, asked, memory_order_release);
}
