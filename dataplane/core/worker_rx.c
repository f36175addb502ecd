/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The first stage of a burst: prefetch, parse, and hand each frame to its
 * path: ARP, ICMP (echo, errors), client to VIP, backend to SNAT address,
 * or to the worker that owns the reply's SNAT port.
 */
#include "worker_priv.h"

static void
handle_ipv4(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt *pkt,
	    uint64_t hash, uint64_t now)
{
	const struct lb_dpconf *c = w->conf;
	int svc, sn;

	if (pkt->proto == LB_IPPROTO_ICMP) {
		uint8_t type = ((const uint8_t *)&pkt->dport)[0];

		if (type == LB_ICMP_ECHO_REQUEST &&
		    lb_dpconf_is_ours(c, pkt->dst, m->port)) {
			uint32_t peer = pkt->src;

			/* The reply would go to ourselves. */
			if (unlikely(lb_dpconf_is_own(c, peer))) {
				drop(w, m, LB_DROP_SRC_OURS);
				return;
			}
			if (lb_nat_icmp_echo_reply(frame_of(m),
						   rte_pktmbuf_data_len(m),
						   pkt) == 0) {
				w->st.echo_replies++;
				lb_worker_route_out(w, m, peer, now);
				return;
			}
		} else if (type == LB_ICMP_DEST_UNREACH ||
			   type == LB_ICMP_TIME_EXCEEDED) {
			lb_worker_icmp_error(w, m, pkt, now);
			return;
		}
		drop_or_kernel(w, m, pkt->dst, LB_DROP_ICMP);
		return;
	}
	svc = lb_dpconf_svc_find(c, pkt->proto, pkt->dst, pkt->dport);
	if (svc >= 0) {
		lb_worker_from_client(w, m, pkt, svc, hash, now);
		return;
	}
	sn = lb_dpconf_snat_find(c, pkt->dst);
	if (sn >= 0 && unlikely(c->snat[sn].port != m->port)) {
		/* Replies come back where the address lives: anything else
		 * is a spoof from a network that should not reach it. */
		drop(w, m, LB_DROP_SNAT_PORT);
		return;
	}
	if (sn >= 0 && w->snat != NULL) {
		uint32_t owner = lb_snat_owner(w->snat, pkt->dport);

		if (owner != w->wid && owner < w->dp->nb_workers) {
			redirect(w, m, owner);
			return;
		}
		lb_worker_from_backend(w, m, pkt, hash, now);
		return;
	}
	drop_or_kernel(w, m, pkt->dst, LB_DROP_NOT_OURS);
}

/* Not a parser verdict: an IPv6 frame, for lb_worker_handle_ipv6(). */
#define VERDICT_IPV6 LB_PKT_VERDICT_MAX

/* Whether a frame the IPv4 parser refused for its ethertype is IPv6
 * (untagged or behind one tag); the IPv6 parser checks the rest. */
static inline bool
is_ipv6(const struct rte_mbuf *m)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m);
	uint32_t off = 12;

	if (len >= 18 && p[12] == 0x81 && p[13] == 0x00)
		off = 16;
	return len >= off + 2 && p[off] == 0x86 && p[off + 1] == 0xdd;
}

/*
 * Bytes after the IP datagram (Ethernet padding, or a trailer a sender
 * hid there) are not part of it: they are not forwarded. Padding is
 * normal, so this is not counted.
 */
static inline void
trim_trailer(struct rte_mbuf *m, const struct lb_pkt *pkt)
{
	uint32_t end = (uint32_t)pkt->l3_off + pkt->ip_len;

	if (unlikely(rte_pktmbuf_pkt_len(m) > end))
		rte_pktmbuf_trim(m, (uint16_t)(rte_pktmbuf_pkt_len(m) - end));
}

/*
 * Prefetches what following the segment of flow @p fi (a guess from
 * lb_flow_peek(), LB_FLOW_NONE for none) will read: its L7 entry, its
 * admission state and the payload past the frame's first line, which the
 * parser did not touch. A plain flow's segment reads none of them.
 */
static inline void
l7_prefetch(const struct lb_worker *w, struct rte_mbuf *m,
	    const struct lb_pkt *pkt, uint32_t fi)
{
	const struct lb_flow *f;
	const uint8_t *p, *end;

	if (fi == LB_FLOW_NONE || w->l7 == NULL || pkt->payload_len == 0)
		return;
	f = &lb_flow_entries(w->ft)[fi];
	if (f->l7 == LB_L7_NONE || f->state == LB_FLOW_SYN_SENT ||
	    f->state == LB_FLOW_FREE)
		return;
	lb_l7_prefetch(w->l7, f->l7);
	if (w->rej != NULL && f->l7 < w->nb_rej)
		rte_prefetch0(&w->rej[f->l7]);
	p = frame_of(m);
	end = p + pkt->payload_off + pkt->payload_len;
	for (p += RTE_CACHE_LINE_SIZE; p < end; p += RTE_CACHE_LINE_SIZE)
		rte_prefetch0(p);
}

/*
 * A burst in three passes, after a prefetch of every frame's first line
 * (all at once: the frames come from another core, and one packet ahead
 * left most of each miss in the parser's way). The first pass parses
 * every frame and prefetches the flow-table slot of its 5-tuple; the
 * second prefetches the flow each slot points to; the third handles
 * them. With a large table neither is in cache: prefetching all of them
 * first overlaps those misses instead of paying them one packet after
 * the other. A followed flow's segment
 * also reads its L7 state and its payload: the third pass prefetches
 * those one packet ahead, behind the work on the packet before.
 */
void
lb_worker_handle_burst(struct lb_worker *w, struct rte_mbuf **m, unsigned int n,
		       uint64_t now)
{
	struct lb_pkt pkt[LB_BURST];
	enum lb_pkt_verdict v[LB_BURST];
	uint64_t hash[LB_BURST];
	uint32_t fi[LB_BURST];

	for (unsigned int i = 0; i < n; i++)
		rte_prefetch0(rte_pktmbuf_mtod(m[i], void *));
	for (unsigned int i = 0; i < n; i++) {
		v[i] = lb_pkt_parse(frame_of(m[i]), rte_pktmbuf_data_len(m[i]),
				    &pkt[i]);
		hash[i] = 0;
		/* IPv6 is counted by its own parser. */
		if (unlikely(v[i] == LB_PKT_DROP_ETHERTYPE) && is_ipv6(m[i])) {
			v[i] = VERDICT_IPV6;
			continue;
		}
		w->st.verdict[v[i]]++;
		if (v[i] == LB_PKT_IPV4 && pkt[i].proto != LB_IPPROTO_ICMP) {
			struct lb_flow_key k;

			lb_flow_key_set(&k, pkt[i].src, pkt[i].dst,
					pkt[i].sport, pkt[i].dport,
					pkt[i].proto);
			hash[i] = lb_flow_hash(w->ft->seed, &k);
			lb_flow_prefetch(w->ft, hash[i]);
		}
	}
	for (unsigned int i = 0; i < n; i++) {
		fi[i] = hash[i] != 0 ? lb_flow_peek(w->ft, hash[i])
				     : LB_FLOW_NONE;
		if (fi[i] != LB_FLOW_NONE)
			rte_prefetch0(&lb_flow_entries(w->ft)[fi[i]]);
		/* A TCP segment's sequence check reads its record too. */
		if (fi[i] != LB_FLOW_NONE && pkt[i].proto == LB_IPPROTO_TCP)
			rte_prefetch0(&w->trk[fi[i]]);
		/* What may open a flow is charged to its source's budget. */
		else if (fi[i] == LB_FLOW_NONE && hash[i] != 0 &&
			 (pkt[i].proto == LB_IPPROTO_UDP ||
			  (pkt[i].tcp_flags & (LB_TCP_SYN | LB_TCP_ACK)) ==
				  LB_TCP_SYN))
			lb_src_budget_prefetch(w->srcb,
					       rte_be_to_cpu_32(pkt[i].src));
	}
	if (n > 0)
		l7_prefetch(w, m[0], &pkt[0], fi[0]);
	for (unsigned int i = 0; i < n; i++) {
		if (i + 1 < n)
			l7_prefetch(w, m[i + 1], &pkt[i + 1], fi[i + 1]);
		/* A port takes its own VLAN only: the input side's tag
		 * must not pick where a frame goes. */
		if (v[i] < LB_PKT_DROP_FIRST &&
		    unlikely(pkt_vid(&pkt[i]) !=
			     w->conf->port_vlan[m[i]->port])) {
			drop(w, m[i], LB_DROP_VLAN);
			continue;
		}
		switch (v[i]) {
		case LB_PKT_IPV4:
			trim_trailer(m[i], &pkt[i]);
			handle_ipv4(w, m[i], &pkt[i], hash[i], now);
			break;
		case LB_PKT_ARP:
			lb_worker_handle_arp(w, m[i], &pkt[i], now);
			break;
		case VERDICT_IPV6:
			lb_worker_handle_ipv6(w, m[i], now);
			break;
		default:
			rte_pktmbuf_free(m[i]);
			break;
		}
	}
}
