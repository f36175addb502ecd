/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_ICMP6_H
#define LB_ICMP6_H

/**
 * @file
 * ICMPv6 for the packet path (RFC 4443), beside nat.h's ICMP: the echo
 * reply for our addresses, and the errors that quote a packet of a flow
 * (destination unreachable, packet too big, time exceeded) read down to
 * the quoted tuple and translated for the other side of the flow, as
 * lb_nat_icmp_parse() and lb_nat_icmp_rewrite() do for IPv4. Frames come
 * from lb_pkt6_parse() with the struct it filled in; every byte past the
 * headers it checked is checked against the frame length here.
 *
 * Unlike ICMP for IPv4, ICMPv6's checksum covers the IPv6 pseudo-header,
 * so the outer addresses are in it too; updates are incremental (RFC
 * 1624): an error that arrived corrupted stays corrupted.
 */

#include <stdint.h>

#include "pkt_parse6.h"

#define LB_ICMP6_DEST_UNREACH 1
#define LB_ICMP6_PKT_TOO_BIG 2
#define LB_ICMP6_TIME_EXCEEDED 3
#define LB_ICMP6_ECHO_REQUEST 128
#define LB_ICMP6_ECHO_REPLY 129

/** Hop limit of the messages the module originates (Linux's default). */
#define LB_ICMP6_HOP_LIMIT 64

/** The smallest MTU of an IPv6 link (RFC 8200 5). */
#define LB_IPV6_MIN_MTU 1280

/** A TCP/UDP tuple over IPv6; addresses and ports as in the packet. */
struct lb_icmp6_tuple {
	uint8_t src[16];
	uint8_t dst[16];
	uint16_t sport;
	uint16_t dport;
};

/** An ICMPv6 error and the packet it quotes (one the load balancer sent). */
struct lb_icmp6_err {
	uint8_t type; /**< LB_ICMP6_DEST_UNREACH, _PKT_TOO_BIG, _TIME_EXCEEDED
		       */
	uint8_t code;
	uint8_t proto;	/**< quoted upper layer: TCP or UDP */
	uint8_t l4csum; /**< 1 if the quoted L4 checksum is within the quote */
	uint32_t mtu;	/**< host order; packet too big's MTU, else 0 */
	uint16_t inner_l3_off; /**< frame offset of the quoted IPv6 header */
	uint16_t inner_l4_off; /**< frame offset of the quoted L4 header */
	uint16_t quote_len;    /**< quoted bytes from inner_l3_off on */
	struct lb_icmp6_tuple inner; /**< the quoted packet's own tuple */
};

/**
 * Turns an echo request to one of our addresses into its reply in place:
 * Ethernet and IPv6 addresses swapped, type 129, hop limit
 * LB_ICMP6_HOP_LIMIT, identifier, sequence and data kept, checksum
 * updated. The caller has checked that the destination is ours (and not
 * multicast). A request with extension headers is refused rather than
 * answered with them (a routing header would not read backwards).
 *
 * @return 0; -EINVAL on NULL, a @p pkt that is not ICMPv6 within @p len,
 *   not an echo request of code 0, or a checksum that does not verify;
 *   -EPROTONOSUPPORT with extension headers; the frame untouched.
 */
int lb_icmp6_echo_reply(uint8_t *frame, uint32_t len, struct lb_pkt6 *pkt);

/**
 * Reads an ICMPv6 error and the TCP or UDP packet it quotes, so the
 * worker can find the flow: the quote is the packet the load balancer
 * sent, so for an error from the backend side it is SNAT:sp -> BE:bp.
 * The quote holds a whole IPv6 header of version 6, its extension headers
 * (as many as lb_pkt6_parse() walks, not a later fragment) and at least 8
 * bytes of the L4 header; it may be cut anywhere after that (RFC 4443
 * 2.4: as much as fits in the minimum MTU). The checksum must verify.
 *
 * @return 0 with @p out filled in; -EINVAL on NULL or anything truncated,
 *   malformed or failing its checksum; -EPROTONOSUPPORT for another ICMPv6
 *   message (echo, neighbour discovery ...) or a quote of another
 *   protocol than TCP or UDP.
 */
int lb_icmp6_err_parse(const uint8_t *frame, uint32_t len,
		       const struct lb_pkt6 *pkt, struct lb_icmp6_err *out);

/**
 * Translates an ICMPv6 error about one side of a flow into the same error
 * for the other side, in place: outer addresses @p outer_src and
 * @p outer_dst, the quoted tuple @p inner; the quoted L4 checksum (if
 * whole in the quote) and the ICMPv6 checksum updated incrementally;
 * type, code, MTU and the rest of the quote kept. The outer hop limit is
 * not touched (lb_nat6_hop_dec()). For the choice of addresses, see
 * lb_nat_icmp_rewrite(): from a backend to the client, @p outer_src =
 * VIP, @p outer_dst = C, @p inner = {C, VIP, cp, vp}.
 *
 * @return 0; the errors of lb_icmp6_err_parse(), the frame untouched.
 */
int lb_icmp6_err_rewrite(uint8_t *frame, uint32_t len, struct lb_pkt6 *pkt,
			 const uint8_t *outer_src, const uint8_t *outer_dst,
			 const struct lb_icmp6_tuple *inner);

/**
 * Sets the MTU of a packet too big error to @p mtu (at least
 * LB_IPV6_MIN_MTU, below which no IPv6 link goes: a lower value is
 * raised to it) and updates the checksum.
 *
 * @return 0; the errors of lb_icmp6_err_parse(); -EINVAL for another
 *   error than packet too big; the frame untouched on error.
 */
int lb_icmp6_set_mtu(uint8_t *frame, uint32_t len, const struct lb_pkt6 *pkt,
		     uint32_t mtu);

#endif /* LB_ICMP6_H */
