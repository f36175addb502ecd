/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_DROP_H
#define LB_DROP_H

/**
 * @file
 * Why the dataplane dropped a frame that parsed correctly. Shared by
 * lb-dataplane (counters) and lb-control (metrics), so the names live here.
 */

enum lb_drop {
	LB_DROP_NOT_OURS,    /**< not for a service, SNAT or local address */
	LB_DROP_NO_FLOW,     /**< TCP without SYN, or a reply, with no flow */
	LB_DROP_NO_BACKEND,  /**< service has no eligible backend, no queue */
	LB_DROP_FLOW_FULL,   /**< flow table full: new flow refused */
	LB_DROP_SNAT_FULL,   /**< no SNAT port left: new flow refused */
	LB_DROP_NO_ROUTE,    /**< no connected subnet or route to the peer */
	LB_DROP_NEIGH,       /**< next hop unresolved and its queue full */
	LB_DROP_REDIRECT,    /**< redirect ring to the owning worker full */
	LB_DROP_DEFERQ_FULL, /**< deferred queue full: SYN refused */
	LB_DROP_ICMP,        /**< ICMP we neither answer nor translate */
	LB_DROP_TX,          /**< the port did not take the packet */
	LB_DROP_NOMBUF,      /**< no mbuf for a copy or an ARP request */
	LB_DROP_TTL,         /**< arrived with TTL 0 or 1: would loop */
	LB_DROP_EXC_FULL,    /**< for the kernel, but its ring was full */
	LB_DROP_ARP_SPOOF,   /**< ARP sender claims one of our addresses */
	LB_DROP_SRC_OURS,    /**< new flow or ping from one of our addresses */
	LB_DROP_L4_CSUM,     /**< new flow's TCP/UDP checksum is wrong */
	LB_DROP_VLAN,        /**< 802.1Q tag other than the port's own */
	LB_DROP_SNAT_PORT,   /**< to a SNAT address, on another port */
	LB_DROP_PORT_UNUSED, /**< the table names a port not in use */
	LB_DROP_TCP_WINDOW,  /**< RST or FIN out of its flow's window */
	/* IPv6 (docs/dataplane.md, "IPv6 in the worker") */
	LB_DROP_HOP_LIMIT,   /**< IPv6 to forward with hop limit 0 or 1 */
	LB_DROP_ICMP6,       /**< ICMPv6 we neither answer nor translate */
	LB_DROP_ND_INVALID,  /**< neighbour discovery failing RFC 4861 7.1 */
	LB_DROP_ND_SPOOF,    /**< NS or NA whose sender claims our address */
	LB_DROP_IP6_FRAG,    /**< an IPv6 first fragment (no reassembly) */
	LB_DROP_IP6_UNSERVED, /**< IPv6 VIP whose backend is IPv4: no
				*  fnat64 yet */
	LB_DROP_MAX,
};

/** Stable snake_case name of @p d for counters and metrics. */
static inline const char *
lb_drop_name(enum lb_drop d)
{
	static const char *const names[LB_DROP_MAX] = {
		[LB_DROP_NOT_OURS] = "not_ours",
		[LB_DROP_NO_FLOW] = "no_flow",
		[LB_DROP_NO_BACKEND] = "no_backend",
		[LB_DROP_FLOW_FULL] = "flow_table_full",
		[LB_DROP_SNAT_FULL] = "snat_ports_full",
		[LB_DROP_NO_ROUTE] = "no_route",
		[LB_DROP_NEIGH] = "neigh_unresolved",
		[LB_DROP_REDIRECT] = "redirect_full",
		[LB_DROP_DEFERQ_FULL] = "deferq_full",
		[LB_DROP_ICMP] = "icmp_ignored",
		[LB_DROP_TX] = "tx_full",
		[LB_DROP_NOMBUF] = "no_mbuf",
		[LB_DROP_TTL] = "ttl_expired",
		[LB_DROP_EXC_FULL] = "exception_full",
		[LB_DROP_ARP_SPOOF] = "arp_spoof",
		[LB_DROP_SRC_OURS] = "src_ours",
		[LB_DROP_L4_CSUM] = "l4_csum",
		[LB_DROP_VLAN] = "vlan_mismatch",
		[LB_DROP_SNAT_PORT] = "snat_wrong_port",
		[LB_DROP_PORT_UNUSED] = "port_unused",
		[LB_DROP_TCP_WINDOW] = "tcp_out_of_window",
		[LB_DROP_HOP_LIMIT] = "hop_limit_expired",
		[LB_DROP_ICMP6] = "icmp6_ignored",
		[LB_DROP_ND_INVALID] = "nd_invalid",
		[LB_DROP_ND_SPOOF] = "nd_spoof",
		[LB_DROP_IP6_FRAG] = "ip6_fragment",
		[LB_DROP_IP6_UNSERVED] = "ip6_unserved",
	};

	return (unsigned int)d < LB_DROP_MAX ? names[d] : "unknown";
}

#endif /* LB_DROP_H */
