/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_PKT_PARSE6_H
#define LB_PKT_PARSE6_H

/**
 * @file
 * Validating parser for IPv6 frames: Ethernet (one optional 802.1Q tag),
 * the fixed IPv6 header, its extension headers, and TCP, UDP or ICMPv6
 * above them. The IPv6 counterpart of lb_pkt_parse(), apart from it so
 * that an IPv4 frame pays nothing for IPv6.
 *
 * Every length is checked against the bytes present before it is read.
 * Extension headers (RFC 8200 4): hop-by-hop only right after the fixed
 * header; hop-by-hop and destination options walked option by option, an
 * unknown option whose type asks for the packet to be discarded (its two
 * high bits not 00, 4.2) drops it; a routing header with segments left 0
 * is skipped (the packet is at its last hop), with segments left above 0
 * dropped (nothing here forwards along a source route); a first fragment
 * is parsed, its transport header checked as far as it goes, and flagged;
 * a later fragment is dropped (no reassembly); an atomic fragment (offset
 * 0, no more fragments: RFC 6946) is a whole packet. At most
 * LB_PKT6_EXT_MAX extension headers are walked, so the cost of a packet
 * is bounded whatever it holds.
 */

#include <stdbool.h>
#include <stdint.h>

#include "lb/pkt_parse-t.h"

#define LB_ETHER_TYPE_IPV6 0x86dd

#define LB_IPPROTO_HOPOPTS 0
#define LB_IPPROTO_ROUTING 43
#define LB_IPPROTO_FRAGMENT 44
#define LB_IPPROTO_ICMPV6 58
#define LB_IPPROTO_NONE 59
#define LB_IPPROTO_DSTOPTS 60

/** Bytes of the fixed IPv6 header. */
#define LB_IPV6_HDR_LEN 40

/** Extension headers walked before a packet is dropped as too long. */
#define LB_PKT6_EXT_MAX 8

/** lb_pkt6.flags: a first fragment, more follow; L4 beyond is unseen. */
#define LB_PKT6_F_FRAG 0x01
/** lb_pkt6.flags: an atomic fragment (offset 0, no more; RFC 6946). */
#define LB_PKT6_F_ATOMIC 0x02

/** What an IPv6 frame is, or why it must be dropped. */
enum lb_pkt6_verdict {
	LB_PKT6_OK = 0,	    /**< valid IPv6 with TCP, UDP or ICMPv6 */
	LB_PKT6_DROP_FIRST, /**< first drop reason; all below are drops */
	LB_PKT6_DROP_TRUNC_L2 = LB_PKT6_DROP_FIRST,
	LB_PKT6_DROP_ETHERTYPE,	 /**< not IPv6 (or QinQ) */
	LB_PKT6_DROP_TRUNC_L3,	 /**< fewer bytes than the fixed header */
	LB_PKT6_DROP_VERSION,	 /**< version field is not 6 */
	LB_PKT6_DROP_PLEN,	 /**< payload length beyond the frame */
	LB_PKT6_DROP_ADDR,	 /**< multicast, loopback, mapped source ... */
	LB_PKT6_DROP_EXT_TRUNC,	 /**< extension header past payload length */
	LB_PKT6_DROP_EXT_ORDER,	 /**< hop-by-hop not first */
	LB_PKT6_DROP_EXT_MANY,	 /**< more than LB_PKT6_EXT_MAX of them */
	LB_PKT6_DROP_EXT_OPT,	 /**< malformed or discard-if-unknown option */
	LB_PKT6_DROP_ROUTING,	 /**< routing header with segments left */
	LB_PKT6_DROP_FRAG,	 /**< a later fragment (no reassembly) */
	LB_PKT6_DROP_FRAG_BAD,	 /**< first fragment without its L4 header */
	LB_PKT6_DROP_PROTO,	 /**< upper layer not TCP, UDP or ICMPv6 */
	LB_PKT6_DROP_TCP_TRUNC,	 /**< TCP header or options cut short */
	LB_PKT6_DROP_TCP_FLAGS,	 /**< impossible flag combinations */
	LB_PKT6_DROP_UDP_TRUNC,	 /**< UDP header cut short */
	LB_PKT6_DROP_UDP_LEN,	 /**< UDP length disagrees with IPv6's */
	LB_PKT6_DROP_UDP_CSUM0,	 /**< UDP checksum 0 (RFC 8200 8.1) */
	LB_PKT6_DROP_ICMP_TRUNC, /**< ICMPv6 header cut short */
	LB_PKT6_DROP_PORT_ZERO,	 /**< TCP/UDP source or destination port 0 */
	LB_PKT6_VERDICT_MAX,
};

/** Offsets and fields of a parsed IPv6 frame; addresses as in the packet. */
struct lb_pkt6 {
	uint16_t l3_off;      /**< start of the fixed IPv6 header */
	uint16_t l4_off;      /**< start of TCP/UDP/ICMPv6 */
	uint16_t payload_off; /**< start of the L4 payload */
	uint16_t payload_len; /**< L4 payload bytes within payload length */
	uint16_t ip_plen;     /**< the payload length field (host order) */
	uint16_t vlan_tci;    /**< host order; valid if has_vlan */
	uint16_t frag_hdr;    /**< frame offset of the fragment header, or 0 */
	uint8_t has_vlan;
	uint8_t proto;	   /**< upper layer: LB_IPPROTO_TCP, _UDP, _ICMPV6 */
	uint8_t tcp_flags; /**< LB_TCP_* for TCP, else 0 */
	uint8_t hop_limit;
	uint8_t n_ext;	  /**< extension headers walked */
	uint8_t flags;	  /**< LB_PKT6_F_* */
	uint32_t frag_id; /**< fragment identification, network order */
	uint8_t src[16];
	uint8_t dst[16];
	uint16_t sport; /**< network order; ICMPv6: echo identifier */
	uint16_t dport; /**< network order; ICMPv6: type << 8 | code */
};

/**
 * Parses and validates the @p len bytes at @p frame as Ethernet/IPv6.
 * Bytes past the payload length are a trailer (Ethernet padding) and
 * ignored, as lb_pkt_parse() ignores them after an IPv4 datagram.
 * @return LB_PKT6_OK with @p pkt filled in, or a drop reason
 * (>= LB_PKT6_DROP_FIRST), in which case @p pkt is partially filled and
 * must not be used.
 */
enum lb_pkt6_verdict lb_pkt6_parse(const uint8_t *frame, uint32_t len,
				   struct lb_pkt6 *pkt);

/**
 * Whether the TCP, UDP or ICMPv6 checksum of a frame that lb_pkt6_parse()
 * accepted verifies over the IPv6 pseudo-header (RFC 8200 8.1: source,
 * destination, upper-layer length, next header; ICMPv6 includes it too)
 * and the whole upper-layer packet. False for a first fragment, whose
 * checksum covers bytes not here. Reads every byte of the segment: for
 * packets that create state, not for every packet.
 */
bool lb_pkt6_l4_csum_ok(const uint8_t *frame, const struct lb_pkt6 *pkt);

/**
 * The one's complement sum (not folded) of the IPv6 pseudo-header of
 * @p src, @p dst, upper-layer length @p l4_len and next header @p proto.
 */
uint32_t lb_pkt6_pseudo_sum(const uint8_t *src, const uint8_t *dst,
			    uint32_t l4_len, uint8_t proto);

/**
 * Finds the upper layer behind the IPv6 header at @p ip, of which only
 * @p avail bytes may be present (the quote in an ICMPv6 error): walks up
 * to LB_PKT6_EXT_MAX hop-by-hop, routing, destination options and
 * fragment headers, each whole within @p avail, without judging their
 * contents (the quoted packet was one of ours).
 * @return the upper layer's offset from @p ip, its protocol in
 *   @p proto; -1 if a header is cut short, there are too many, or the
 *   packet is a later fragment (no upper-layer header).
 */
int lb_pkt6_skip_ext(const uint8_t *ip, uint32_t avail, uint8_t *proto);

/** Short stable name of a verdict for counters and logs. */
const char *lb_pkt6_verdict_name(enum lb_pkt6_verdict v);

#endif /* LB_PKT_PARSE6_H */
