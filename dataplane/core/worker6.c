/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv6 frames, apart from IPv4's path: the burst hands them here at the
 * ethertype, so an IPv4 frame pays nothing for them. Neighbour discovery
 * for our addresses, echo for our addresses and VIPs, and the drops with
 * their reasons.
 */
#include "worker_priv.h"

#include "dpconf6.h"
#include "icmp6.h"
#include "nd6.h"
#include "pkt_parse6.h"

_Static_assert(LB_PKT6_VERDICT_MAX <= LB_SHM_PKT6_VERDICTS,
	       "room for every IPv6 verdict in the counters");

/* The largest frame the dataplane's ND messages take: Ethernet, a tag,
 * IPv6, an advertisement or solicitation with its link-layer option. */
#define ND_FRAME_MAX 96u

static void
link_of(const struct lb_worker *w, uint16_t port, struct lb_nat_link *l)
{
	uint16_t vid = w->conf->port_vlan[port];

	memcpy(l->mac, w->dp->port[port].mac.addr_bytes, sizeof(l->mac));
	l->has_vlan = vid != 0;
	l->vlan_tci = vid;
}

/* Replaces the contents of @p m with the @p len bytes at @p buf. */
static int
mbuf_set(struct rte_mbuf *m, const uint8_t *buf, uint32_t len)
{
	if (m->nb_segs != 1 || len > (uint32_t)m->buf_len - m->data_off)
		return -ENOSPC;
	memcpy(frame_of(m), buf, len);
	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	return 0;
}

static void
handle_nd(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt6 *pkt,
	  uint64_t now)
{
	uint16_t port = m->port;
	struct lb_nd_msg nd;
	struct lb_nat_link link;
	uint8_t buf[ND_FRAME_MAX];
	int n;

	if (lb_nd_parse(frame_of(m), rte_pktmbuf_data_len(m), pkt, &nd) != 0) {
		drop(w, m, LB_DROP_ND_INVALID);
		return;
	}
	/* Nobody else may speak for our addresses, as with ARP: not a
	 * sender (duplicate address detection has none), not the target of
	 * an advertisement. */
	if (unlikely((!nd.dad && lb_dpconf6_is_own(w->conf, nd.src)) ||
		     (nd.type == LB_ND_NA &&
		      lb_dpconf6_is_own(w->conf, nd.target)))) {
		drop(w, m, LB_DROP_ND_SPOOF);
		return;
	}
	/* What an advertisement says of its target, and a solicitation
	 * for one of our addresses of its sender (RFC 4861 7.2.5, 7.2.3). */
	if (nd.type == LB_ND_NA && nd.has_lla)
		lb_worker_neigh6_learn(w, nd.target, nd.lla, port, now);
	if (nd.type == LB_ND_NS &&
	    lb_dpconf6_is_ours(w->conf, nd.target, port)) {
		if (nd.has_lla)
			lb_worker_neigh6_learn(w, nd.src, nd.lla, port, now);
		link_of(w, port, &link);
		n = lb_nd_na_answer(buf, sizeof(buf), &link, &nd);
		if (n > 0 && mbuf_set(m, buf, (uint32_t)n) == 0) {
			w->st.nd_adverts++;
			tx_enqueue(w, port, m);
			return;
		}
	}
	/* Solicitations for others and advertisements: nothing to do
	 * yet, as ARP for others. */
	rte_pktmbuf_free(m);
}

static void
handle_icmp6(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt6 *pkt,
	     uint64_t now)
{
	uint8_t type = ((const uint8_t *)&pkt->dport)[0];
	uint8_t peer[16];

	if (type == LB_ND_NS || type == LB_ND_NA) {
		handle_nd(w, m, pkt, now);
		return;
	}
	if (type == LB_ICMP6_ECHO_REQUEST &&
	    lb_dpconf6_is_ours(w->conf, pkt->dst, m->port)) {
		/* The reply would go to ourselves. */
		if (unlikely(lb_dpconf6_is_own(w->conf, pkt->src))) {
			drop(w, m, LB_DROP_SRC_OURS);
			return;
		}
		memcpy(peer, pkt->src, 16);
		if (lb_icmp6_echo_reply(frame_of(m), rte_pktmbuf_data_len(m),
					pkt) == 0) {
			w->st.echo6_replies++;
			lb_worker_route_out6(w, m, peer, now);
			return;
		}
	}
	drop(w, m, LB_DROP_ICMP6);
}

void
lb_worker_handle_ipv6(struct lb_worker *w, struct rte_mbuf *m, uint64_t now)
{
	const struct lb_dpconf *c = w->conf;
	struct lb_pkt6 pkt;
	enum lb_pkt6_verdict v;
	uint32_t end;

	v = lb_pkt6_parse(frame_of(m), rte_pktmbuf_data_len(m), &pkt);
	w->st.verdict6[v]++;
	if (v != LB_PKT6_OK) {
		rte_pktmbuf_free(m);
		return;
	}
	if (unlikely((pkt.has_vlan ? pkt.vlan_tci & VLAN_VID_MASK : 0) !=
		     c->port_vlan[m->port])) {
		drop(w, m, LB_DROP_VLAN);
		return;
	}
	/* Ethernet padding is not part of the packet. */
	end = (uint32_t)pkt.l3_off + LB_IPV6_HDR_LEN + pkt.ip_plen;
	if (unlikely(rte_pktmbuf_pkt_len(m) > end))
		rte_pktmbuf_trim(m, (uint16_t)(rte_pktmbuf_pkt_len(m) - end));
	if (pkt.proto == LB_IPPROTO_ICMPV6) {
		handle_icmp6(w, m, &pkt, now);
		return;
	}
	if (lb_dpconf6_svc_find(&w->svc6, c, pkt.proto, pkt.dst, pkt.dport) <
		    0 &&
	    lb_dpconf6_snat_find(c, pkt.dst) < 0) {
		drop(w, m, LB_DROP_NOT_OURS);
		return;
	}
	if (pkt.flags & LB_PKT6_F_FRAG) {
		drop(w, m, LB_DROP_IP6_FRAG);
		return;
	}
	/* What we would forward must have a hop left (RFC 8200 3). */
	if (pkt.hop_limit <= 1) {
		drop(w, m, LB_DROP_HOP_LIMIT);
		return;
	}
	drop(w, m, LB_DROP_IP6_UNSERVED);
}
