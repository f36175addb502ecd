/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_PKT_PARSE_T_H
#define LB_PKT_PARSE_T_H

/**
 * @file
 * The types of a parsed frame (pkt_parse.h): its offsets and fields, and
 * the verdicts that index the parser's counters in shared memory.
 */

#include <stdint.h>

#define LB_ETHER_TYPE_IPV4 0x0800
#define LB_ETHER_TYPE_ARP 0x0806
#define LB_ETHER_TYPE_VLAN 0x8100

#define LB_IPPROTO_ICMP 1
#define LB_IPPROTO_TCP 6
#define LB_IPPROTO_UDP 17

#define LB_TCP_FIN 0x01
#define LB_TCP_SYN 0x02
#define LB_TCP_RST 0x04
#define LB_TCP_PSH 0x08
#define LB_TCP_ACK 0x10
#define LB_TCP_URG 0x20

/** What the frame is, or why it must be dropped. */
enum lb_pkt_verdict {
	LB_PKT_IPV4 = 0,   /**< valid IPv4 with TCP, UDP or ICMP */
	LB_PKT_ARP,        /**< valid Ethernet/IPv4 ARP */
	LB_PKT_DROP_FIRST, /**< first drop reason; all below are drops */
	LB_PKT_DROP_TRUNC_L2 = LB_PKT_DROP_FIRST,
	LB_PKT_DROP_ETHERTYPE,   /**< neither IPv4 nor ARP (IPv6, QinQ ...) */
	LB_PKT_DROP_ARP,         /**< truncated or not Ethernet/IPv4 ARP */
	LB_PKT_DROP_TRUNC_L3,    /**< fewer bytes than an IPv4 header */
	LB_PKT_DROP_IP_VERSION,  /**< version field is not 4 */
	LB_PKT_DROP_IP_IHL,      /**< header length below 20 or beyond data */
	LB_PKT_DROP_IP_LEN,      /**< total length below IHL or beyond data */
	LB_PKT_DROP_IP_CSUM,     /**< header checksum does not verify */
	LB_PKT_DROP_IP_FRAG,     /**< a fragment (reassembly not supported) */
	LB_PKT_DROP_IP_ADDR,     /**< source zero/loopback/multicast/bcast */
	LB_PKT_DROP_IP_PROTO,    /**< not TCP, UDP or ICMP */
	LB_PKT_DROP_TCP_TRUNC,   /**< TCP header or options cut short */
	LB_PKT_DROP_TCP_FLAGS,   /**< impossible flag combinations */
	LB_PKT_DROP_UDP_TRUNC,   /**< UDP header cut short */
	LB_PKT_DROP_UDP_LEN,     /**< UDP length disagrees with IP length */
	LB_PKT_DROP_ICMP_TRUNC,  /**< ICMP header cut short */
	LB_PKT_DROP_PORT_ZERO,   /**< TCP/UDP source or destination port 0 */
	LB_PKT_VERDICT_MAX,
};

/** Offsets and fields of a parsed frame; addresses in network order. */
struct lb_pkt {
	uint16_t l3_off;      /**< start of IPv4 or ARP */
	uint16_t l4_off;      /**< start of TCP/UDP/ICMP */
	uint16_t payload_off; /**< start of the L4 payload */
	uint16_t payload_len; /**< L4 payload bytes within IP total length */
	uint16_t ip_len;      /**< IPv4 total length */
	uint16_t vlan_tci;    /**< host order; valid if has_vlan */
	uint8_t has_vlan;
	uint8_t proto;     /**< LB_IPPROTO_* */
	uint8_t tcp_flags; /**< LB_TCP_* for TCP, else 0 */
	uint8_t ttl;
	uint32_t src;   /**< IPv4 source, network order */
	uint32_t dst;   /**< IPv4 destination, network order */
	uint16_t sport; /**< network order; ICMP: echo identifier */
	uint16_t dport; /**< network order; ICMP: type << 8 | code */
};

#endif /* LB_PKT_PARSE_T_H */
