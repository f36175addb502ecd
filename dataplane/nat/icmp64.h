/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_ICMP64_H
#define LB_ICMP64_H

/**
 * @file
 * ICMP errors of fnat64 flows (an IPv6 client, an IPv4 backend) carried
 * across the two versions (RFC 7915 4.2 and 5.2): an ICMP error from the
 * backend's side becomes the ICMPv6 error the client understands, and
 * the other way round, quote included, so that path MTU discovery works
 * through the translation. In place in a buffer with room in front, as
 * lb_nat64_xlate() and lb_nat46_xlate() do for the packets themselves.
 *
 * The message's checksum is verified before anything is changed, then
 * computed afresh (the type, the pseudo-header and the quoted header all
 * change): a corrupted error is refused, never made valid. The quoted L4
 * checksum, when whole in the quote, is updated incrementally for its
 * new tuple. The types and codes that have no counterpart (parameter
 * problem, protocol unreachable ...) are refused, to be dropped.
 */

#include <stdint.h>

#include "icmp6.h"
#include "nat.h"

/**
 * An ICMPv6 error (destination unreachable, packet too big, time
 * exceeded) at @p buf + @p off becomes the ICMP error for IPv4 with outer
 * addresses @p outer_src, @p outer_dst and quoted tuple @p inner: the
 * quoted IPv6 header and its extension headers give way to a 20-byte
 * IPv4 header; packet too big becomes fragmentation needed with the MTU
 * less 20 bytes; destination unreachable codes map as RFC 7915 5.2 says
 * (no route, beyond scope, address unreachable: host unreachable;
 * administratively prohibited: host administratively prohibited; port
 * unreachable: port unreachable). TTLs come from the hop limits.
 *
 * @return the new offset of the frame in @p buf, described by @p out;
 *   the errors of lb_icmp6_err_parse(); -EINVAL for an @p outer_src that
 *   is never a source (0/8, 127/8, multicast and above);
 *   -EPROTONOSUPPORT for a code with no counterpart. The frame is
 *   untouched on error.
 */
int lb_icmp_xlate64(uint8_t *buf, uint32_t off, uint32_t len,
		    const struct lb_pkt6 *pkt, uint32_t outer_src,
		    uint32_t outer_dst, const struct lb_nat_tuple *inner,
		    struct lb_pkt *out);

/**
 * An ICMP error for IPv4 (destination unreachable, time exceeded) at
 * @p buf + @p off becomes the ICMPv6 error with outer addresses
 * @p outer_src, @p outer_dst and quoted tuple @p inner: fragmentation
 * needed becomes packet too big with the MTU plus 20 bytes (never below
 * LB_IPV6_MIN_MTU); host, network and most other unreachables become no
 * route, the administratively prohibited ones administratively
 * prohibited, port unreachable stays so (RFC 7915 4.2). The quote is cut
 * so that the error fits in IPv6's minimum MTU (RFC 4443 2.4). The frame
 * grows at the front by up to 40 bytes, taken from @p off.
 *
 * @return the new offset of the frame in @p buf, described by @p out;
 *   the errors of lb_nat_icmp_parse(); -EINVAL for outer addresses the
 *   IPv6 parser refuses (unspecified, loopback; a multicast or
 *   IPv4-mapped source); -EPROTONOSUPPORT for a code with no
 *   counterpart; -ENOSPC if @p off is short of the growth. The frame is
 *   untouched on error.
 */
int lb_icmp_xlate46(uint8_t *buf, uint32_t off, uint32_t len,
		    const struct lb_pkt *pkt, const uint8_t *outer_src,
		    const uint8_t *outer_dst,
		    const struct lb_icmp6_tuple *inner, struct lb_pkt6 *out);

#endif /* LB_ICMP64_H */
