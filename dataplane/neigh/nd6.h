/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_ND6_H
#define LB_ND6_H

/**
 * @file
 * IPv6 neighbour discovery messages (RFC 4861): reading neighbour
 * solicitations and advertisements, and building the ones the dataplane
 * sends in place of ARP: the advertisement answering a solicitation for
 * one of its addresses, a solicitation resolving a backend or gateway,
 * and an unsolicited advertisement announcing an address. Plain frames,
 * no DPDK, no allocation; the neighbour table itself stays the caller's.
 *
 * Built frames carry the hop limit 255 that receivers check (a packet
 * from off-link arrives below it), a computed ICMPv6 checksum, and the
 * link-layer address option of Ethernet (8 bytes). Addresses are 16
 * bytes as in the packet.
 */

#include <stdint.h>

#include "nat.h"
#include "pkt_parse6.h"

#define LB_ND_NS 135 /**< ICMPv6 type of a neighbour solicitation */
#define LB_ND_NA 136 /**< ICMPv6 type of a neighbour advertisement */

/** Flags of an advertisement, as in its first byte after the checksum. */
#define LB_ND_F_ROUTER 0x80
#define LB_ND_F_SOLICITED 0x40
#define LB_ND_F_OVERRIDE 0x20

/** Hop limit of every neighbour discovery message (RFC 4861 7.1). */
#define LB_ND_HOP_LIMIT 255

/** A neighbour solicitation or advertisement that passed its checks. */
struct lb_nd_msg {
	uint8_t type;	 /**< LB_ND_NS or LB_ND_NA */
	uint8_t flags;	 /**< LB_ND_F_* of an advertisement, else 0 */
	uint8_t has_lla; /**< a source (NS) or target (NA) link-layer option */
	uint8_t dad;	 /**< an NS from :: (duplicate address detection) */
	uint8_t lla[LB_ETHER_ADDR_LEN];	    /**< the option's address */
	uint8_t eth_src[LB_ETHER_ADDR_LEN]; /**< the frame's Ethernet source */
	uint8_t target[16];
	uint8_t src[16]; /**< IPv6 source */
	uint8_t dst[16]; /**< IPv6 destination */
};

/**
 * Reads and validates a neighbour solicitation (RFC 4861 7.1.1) or
 * advertisement (7.1.2) in a frame that lb_pkt6_parse() accepted: hop
 * limit 255, code 0, at least 24 bytes, the checksum, a target that is
 * not multicast, options of non-zero length within the message; for a
 * solicitation from :: a solicited-node multicast destination and no
 * source link-layer option; for an advertisement to a multicast address
 * the solicited flag clear. A message with a fragment header is refused
 * (RFC 6980), and so is a link-layer option of another length than
 * Ethernet's. Options of other types are skipped.
 *
 * @return 0 with @p out filled in; -EPROTONOSUPPORT for another ICMPv6
 *   message or not ICMPv6 at all; -EINVAL on NULL or a message that fails
 *   a check (to be dropped silently, and counted).
 */
int lb_nd_parse(const uint8_t *frame, uint32_t len, const struct lb_pkt6 *pkt,
		struct lb_nd_msg *out);

/**
 * Builds into @p buf the advertisement answering @p ns, a solicitation
 * whose target the caller has found to be one of its addresses (a local
 * address, a VIP, a SNAT address): from the target, to the solicitation's
 * source and link-layer address (its option, or its frame's source
 * without one), flags solicited and override, and the target link-layer
 * option with @p link's MAC (RFC 4861 7.2.4). A solicitation from ::
 * (another node checking the address is free) is answered to all nodes
 * (ff02::1), solicited flag clear, so that it learns the address is
 * taken.
 *
 * @return the frame length; -EINVAL on NULL, an @p ns that is not a
 *   solicitation or a @p link without a unicast MAC; -ENOSPC if @p cap
 *   is short.
 */
int lb_nd_na_answer(uint8_t *buf, uint32_t cap, const struct lb_nat_link *link,
		    const struct lb_nd_msg *ns);

/**
 * Builds into @p buf a solicitation from @p src for @p target, with the
 * source link-layer option. With @p dst_mac NULL it resolves: sent to
 * the target's solicited-node multicast address (ff02::1:ffXX:XXXX, the
 * target's last 24 bits) at 33:33:ff:XX:XX:XX; with a MAC it is sent
 * unicast to the target at that MAC, to revalidate a stale neighbour
 * (RFC 4861 7.3.3).
 *
 * @return the frame length; -EINVAL on NULL @p buf, @p link, @p src or
 *   @p target, a multicast or unspecified target, a @p link or
 *   @p dst_mac that is not unicast; -ENOSPC if @p cap is short.
 */
int lb_nd_ns_build(uint8_t *buf, uint32_t cap, const struct lb_nat_link *link,
		   const uint8_t *src, const uint8_t *target,
		   const uint8_t *dst_mac);

/**
 * Builds into @p buf an unsolicited advertisement of @p addr at
 * @p link's MAC, to all nodes (ff02::1, 33:33:00:00:00:01), override set
 * and solicited clear, so neighbours update their caches (RFC 4861
 * 7.2.6): at start and when an address moves to this host.
 *
 * @return the frame length; -EINVAL on NULL, a multicast or unspecified
 *   @p addr or a @p link that is not unicast; -ENOSPC if @p cap is short.
 */
int lb_nd_na_announce(uint8_t *buf, uint32_t cap,
		      const struct lb_nat_link *link, const uint8_t *addr);

#endif /* LB_ND6_H */
