/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_NAT6_H
#define LB_NAT6_H

/**
 * @file
 * Full-NAT rewrites for IPv6 on plain frames: fnat66 (an IPv6 client, an
 * IPv6 backend) and the header translation of fnat64 (an IPv6 client, an
 * IPv4 backend) in both directions. No DPDK, no allocation; frames are
 * changed in place, the translations within a buffer that has room in
 * front of the frame (an mbuf's headroom).
 *
 * Frames come from lb_pkt6_parse() (IPv6) or lb_pkt_parse() (IPv4), with
 * the struct they filled in; TCP and UDP only, whole packets only (a
 * first fragment's L4 checksum covers bytes not here, so it cannot be
 * updated). Addresses are 16 bytes (IPv6) or a network-order uint32_t
 * (IPv4), ports network order, as in the packet.
 *
 * Checksums are updated incrementally (RFC 1624), as lb_nat_rewrite()
 * does, so a segment that arrived corrupted stays corrupted. IPv6 has no
 * header checksum; its pseudo-header (RFC 8200 8.1) holds the addresses,
 * so the L4 checksum follows them. Translation changes the pseudo-header
 * from one version's to the other's: the length and protocol words sum
 * the same in both (a 32-bit length below 65536 is its 16-bit value), so
 * only the addresses (and ports) enter the update. The one exception: a
 * UDP datagram over IPv4 with no checksum (0) gets one computed over the
 * whole datagram when it becomes IPv6, where a checksum is mandatory
 * (RFC 7915 4.5).
 *
 * Hop limit: lb_nat6_hop_dec() is the router's step, as lb_nat_ttl_dec()
 * is for IPv4: the worker calls it (or lb_nat_ttl_dec() on the IPv4
 * side) before a rewrite or a translation; the translations copy the hop
 * limit into the TTL and back (RFC 7915 4.1, 5.1).
 */

#include <stdbool.h>
#include <stdint.h>

#include "lb/pkt_parse.h"
#include "nat.h"
#include "pkt_parse6.h"

/**
 * Rewrites the IPv6 addresses and TCP/UDP ports of a parsed frame in
 * place and updates the L4 checksum incrementally; a UDP checksum that
 * computes to zero is written as 0xffff. The hop limit is not touched.
 * @p pkt is updated to describe the rewritten frame.
 *
 * @return 0; -EINVAL if an argument is NULL or @p pkt does not describe
 *   a parsed IPv6 frame; -EPROTONOSUPPORT for ICMPv6 or a first fragment.
 */
int lb_nat6_rewrite(uint8_t *frame, struct lb_pkt6 *pkt, const uint8_t *new_src,
		    uint16_t new_sport, const uint8_t *new_dst,
		    uint16_t new_dport);

/**
 * The router's hop limit step: decrements it; @p pkt->hop_limit follows.
 *
 * @return 0; -ETIMEDOUT if the hop limit is 0 or 1 (the frame untouched,
 *   to be dropped); -EINVAL on NULL or a @p pkt that is not IPv6.
 */
int lb_nat6_hop_dec(uint8_t *frame, struct lb_pkt6 *pkt);

/**
 * RFC 793's RST answering the TCP segment of @p pkt (never a RST), as
 * lb_nat_tcp_rst() makes it for IPv4, in place: MACs swapped, a fresh
 * IPv6 header (hop limit LB_NAT_TTL_DEFAULT, no extension header) from
 * the segment's destination back to its source, a 20-byte TCP header
 * with a computed checksum. @p pkt is updated to describe it.
 *
 * @return the length of the new frame; -EINVAL on NULL, a RST or a
 *   @p pkt that does not fit @p len; -EPROTONOSUPPORT for other than TCP.
 */
int lb_nat6_tcp_rst(uint8_t *frame, uint32_t len, struct lb_pkt6 *pkt);

/**
 * lb_nat_tcp_seg() for IPv6: turns TCP segment @p pkt in @p frame into a
 * segment of its own without data, turned around when @p reply; the IPv6
 * header loses its extension headers, the TCP header is @p h, the
 * checksum is computed afresh and @p pkt describes the new frame.
 * @return the new frame length; -EINVAL on NULL, a frame that is not TCP
 *   or options that are not whole words; -ENOSPC when @p cap is short
 */
int lb_nat6_tcp_seg(uint8_t *frame, uint32_t cap, struct lb_pkt6 *pkt,
		    bool reply, const struct lb_nat_tcp_hdr *h);

/**
 * fnat64 towards the backend: the IPv6 frame at @p buf + @p off (of
 * @p len bytes) becomes an IPv4 one from @p src:@p sport to
 * @p dst:@p dport. The Ethernet header (and 802.1Q tag) is kept with the
 * IPv4 type; the IPv6 header and its extension headers give way to a
 * 20-byte IPv4 header (RFC 7915 5.1): type of service from the traffic
 * class, identification 0 with DF set, TTL from the hop limit, the
 * protocol of the upper layer, a computed header checksum. The frame
 * shrinks from the front, so it starts later in @p buf; @p out describes
 * it as lb_pkt_parse() would, and its length is out->l3_off +
 * out->ip_len (a trailer is left behind it, to be trimmed).
 *
 * @return the new offset of the frame in @p buf; -EINVAL on NULL, a
 *   @p pkt that is not IPv6 or does not fit in @p len; -EPROTONOSUPPORT
 *   for ICMPv6 or a first fragment; -EMSGSIZE if the segment is too long
 *   for an IPv4 datagram. The frame is untouched on error.
 */
int lb_nat64_xlate(uint8_t *buf, uint32_t off, uint32_t len,
		   const struct lb_pkt6 *pkt, uint32_t src, uint16_t sport,
		   uint32_t dst, uint16_t dport, struct lb_pkt *out);

/**
 * fnat64 back towards the client: the IPv4 frame at @p buf + @p off (of
 * @p len bytes) becomes an IPv6 one from @p src:@p sport to
 * @p dst:@p dport (RFC 7915 4.1): traffic class from the type of
 * service, flow label 0, hop limit from the TTL, no extension headers;
 * IPv4 options are not translated. The frame grows at the front by
 * 40 - IHL bytes (20 without options), taken from @p off.
 *
 * @return the new offset of the frame in @p buf; -ENOSPC if @p off is
 *   short of the growth; -EINVAL on NULL or a @p pkt that is not IPv4 TCP
 *   or UDP within @p len; -EPROTONOSUPPORT for ICMP or an unexpired
 *   source route option (RFC 7915 4.1: such a packet is discarded). The
 *   frame is untouched on error.
 */
int lb_nat46_xlate(uint8_t *buf, uint32_t off, uint32_t len,
		   const struct lb_pkt *pkt, const uint8_t *src, uint16_t sport,
		   const uint8_t *dst, uint16_t dport, struct lb_pkt6 *out);

/** The smallest MSS lb_nat46_mss_adjust() leaves: IPv6's minimum MTU
 * less its header and TCP's. */
#define LB_NAT46_MSS_FLOOR 1220u

/**
 * The MSS option of a TCP SYN translated from IPv4 to IPv6 (the
 * backend's SYN-ACK of an fnat64 flow), in the IPv6 frame @p frame
 * described by @p pkt: lowered by 20 bytes, what the IPv6 header adds,
 * so that the client's segments of that size still fit on the IPv6 side
 * in the MTU the backend's IPv4 MSS was made for; never below
 * LB_NAT46_MSS_FLOOR (unless it already was), never raised. The TCP
 * checksum is updated incrementally.
 *
 * @return the MSS now in the segment; 0 if it has no MSS option (or a
 *   malformed one, left alone), or is not a TCP SYN; -EINVAL on NULL or
 *   a @p pkt that does not fit.
 */
int lb_nat46_mss_adjust(uint8_t *frame, const struct lb_pkt6 *pkt);

#endif /* LB_NAT6_H */
