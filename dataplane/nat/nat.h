/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_NAT_H
#define LB_NAT_H

/**
 * @file
 * Full-NAT rewrites and in-place answers of the packet path, on plain
 * frames: no DPDK, no allocation, the caller's bytes changed in place.
 *
 * A function that takes a struct lb_pkt expects a frame that
 * lb_pkt_parse() accepted and the lb_pkt it filled in; offsets in the
 * lb_pkt are trusted because the parser checked them against the frame.
 * Functions that read beyond the headers the parser validated (ICMP
 * quotes, ARP bodies, echo payloads) also take the frame length and check
 * every access against it.
 * Addresses and ports are in network byte order, as in the packet.
 *
 * Full-NAT: the client's C:cp -> VIP:vp becomes SNAT:sp -> BE:bp towards
 * the backend, and the backend's BE:bp -> SNAT:sp becomes VIP:vp -> C:cp
 * towards the client. Both directions are lb_nat_rewrite() with the new
 * tuple.
 *
 * Checksums. All rewrites update checksums incrementally (RFC 1624,
 * dataplane/parse/csum.h), so a checksum that was wrong on arrival stays wrong
 * and the receiver still drops the packet: the load balancer never turns a
 * corrupted packet into a valid one. Only frames the module builds from
 * nothing (TCP RST, ARP request) get freshly computed checksums. This is
 * the software path. A worker that hands checksums to the NIC (tx
 * offload) calls the same functions and then overwrites the checksum
 * fields the way its NIC wants them (IP 0, L4 the pseudo-header sum); a
 * variant that skips the incremental updates can be added beside them
 * without changing these signatures.
 *
 * TTL. In full-NAT the load balancer forwards packets between two networks
 * like a router, so it decrements the TTL of every forwarded packet
 * (RFC 1812 5.3.1) and drops a packet that arrives with TTL 0 or 1: that
 * is what stops a routing loop through the load balancer (for example a
 * backend whose default route points back at the VIP). lb_nat_ttl_dec()
 * is that step; the worker calls it before lb_nat_rewrite() on every
 * forwarded packet in both directions unless configured to keep the TTL.
 * No ICMP time exceeded is sent for the drop (a traceroute shows no hop
 * for the load balancer, as with most load balancers).
 */

#include <stdbool.h>
#include <stdint.h>

#include "lb/pkt_parse.h"

/** Bytes of an Ethernet (MAC) address. */
#define LB_ETHER_ADDR_LEN 6

/** TTL of the packets the module originates (Linux ip_default_ttl). */
#define LB_NAT_TTL_DEFAULT 64

/** A 32-bit field of a header at @p p, host order. */
static inline uint32_t
lb_nat_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/**
 * RFC 793's "Reset Generation" for the segment of TCP header @p th with
 * @p data_len bytes of data, for either IP version: the RST's sequence
 * and acknowledgement numbers (host order) in @p seq and @p ack.
 * @return its flags; 0 for a RST, which gets none.
 */
static inline uint8_t
lb_nat_rst_numbers(const uint8_t *th, uint32_t data_len, uint32_t *seq,
		   uint32_t *ack)
{
	uint8_t flags = th[13];

	if (flags & LB_TCP_RST)
		return 0;
	if (flags & LB_TCP_ACK) {
		*seq = lb_nat_be32(th + 8);
		*ack = 0;
		return LB_TCP_RST;
	}
	/* SEG.LEN: the data, plus one for SYN and one for FIN. */
	*ack = lb_nat_be32(th + 4) + data_len + !!(flags & LB_TCP_SYN) +
	       !!(flags & LB_TCP_FIN);
	*seq = 0;
	return LB_TCP_RST | LB_TCP_ACK;
}

/** Smallest Ethernet frame without FCS; built ARP frames are padded. */
#define LB_NAT_FRAME_MIN 60

/** ICMP types the translation handles. */
#define LB_ICMP_ECHO_REPLY 0
#define LB_ICMP_DEST_UNREACH 3
#define LB_ICMP_ECHO_REQUEST 8
#define LB_ICMP_TIME_EXCEEDED 11
/** Destination unreachable code "fragmentation needed and DF set". */
#define LB_ICMP_FRAG_NEEDED 4

/**
 * Smallest next-hop MTU a frag-needed error is passed on with: Linux's
 * default min_pmtu (512 bytes of data and 40 of headers). A router's
 * lower value, or a forger's (68 would make a backend cut every response
 * into 28-byte segments), is raised to it; a stack told this much stops
 * setting DF, so routers fragment on a real path that narrow.
 */
#define LB_NAT_MTU_FLOOR 552

/** ARP operations (host order). */
#define LB_ARP_REQUEST 1
#define LB_ARP_REPLY 2

/** One side of a link: our MAC there and its 802.1Q tag, if any. */
struct lb_nat_link {
	uint8_t mac[LB_ETHER_ADDR_LEN];
	uint8_t has_vlan;
	uint16_t vlan_tci; /**< host order; PCP, DEI and VID */
};

/** An IPv4 TCP/UDP 4-tuple, network order. */
struct lb_nat_tuple {
	uint32_t src;
	uint32_t dst;
	uint16_t sport;
	uint16_t dport;
};

/** Fields of an Ethernet/IPv4 ARP packet. */
struct lb_nat_arp {
	uint16_t op; /**< host order: LB_ARP_REQUEST or LB_ARP_REPLY */
	uint8_t sha[LB_ETHER_ADDR_LEN]; /**< sender hardware address */
	uint8_t tha[LB_ETHER_ADDR_LEN]; /**< target hardware address */
	uint32_t spa; /**< sender protocol address, network order */
	uint32_t tpa; /**< target protocol address, network order */
};

/**
 * An ICMP error and the datagram it quotes (which is one of ours: the
 * packet the load balancer sent, as the erring router saw it).
 */
struct lb_nat_icmp {
	uint8_t type; /**< LB_ICMP_DEST_UNREACH or LB_ICMP_TIME_EXCEEDED */
	uint8_t code;
	uint8_t proto;	/**< quoted datagram's protocol: TCP or UDP */
	uint8_t l4csum; /**< 1 if the quoted L4 checksum is within the quote */
	uint16_t mtu;	/**< host order; next-hop MTU of frag-needed, else 0 */
	uint16_t inner_l3_off; /**< frame offset of the quoted IPv4 header */
	uint16_t inner_l4_off; /**< frame offset of the quoted L4 header */
	uint16_t quote_len;    /**< quoted bytes from inner_l3_off on */
	struct lb_nat_tuple inner; /**< the quoted datagram's own tuple */
};

/**
 * Rewrites the IPv4 addresses and TCP/UDP ports of a parsed frame in place
 * and updates the IP header checksum and the L4 checksum (its
 * pseudo-header included) incrementally. A UDP checksum of zero means
 * "none" (RFC 768) and stays zero; a UDP checksum that computes to zero is
 * written as 0xffff. The TTL is not touched (see lb_nat_ttl_dec()).
 * @p pkt is updated to describe the rewritten frame.
 *
 * @return 0; -EINVAL if an argument is NULL or @p pkt does not describe a
 *   parsed IPv4 frame; -EPROTONOSUPPORT for ICMP (errors go through
 *   lb_nat_icmp_rewrite(), echoes to our addresses are answered).
 */
int lb_nat_rewrite(uint8_t *frame, struct lb_pkt *pkt, uint32_t new_src,
		   uint16_t new_sport, uint32_t new_dst, uint16_t new_dport);

/**
 * The router's TTL step (see the file comment): decrements the IPv4 TTL
 * and updates the header checksum; @p pkt->ttl follows.
 *
 * @return 0; -ETIMEDOUT if the TTL is 0 or 1 (the frame is untouched and
 *   must be dropped); -EINVAL on NULL or a non-IPv4 @p pkt.
 */
int lb_nat_ttl_dec(uint8_t *frame, struct lb_pkt *pkt);

/**
 * Writes the Ethernet source and destination addresses (the next hop's
 * MAC from the neighbour table, ours as source).
 *
 * @return 0, or -EINVAL if an argument is NULL.
 */
int lb_nat_set_macs(uint8_t *frame, const uint8_t *src_mac,
		    const uint8_t *dst_mac);

/**
 * Reads an ICMP error (destination unreachable, any code, or time
 * exceeded) and the TCP or UDP datagram it quotes, so the worker can find
 * the flow: the quoted tuple is the packet the load balancer sent, so for
 * an error from the backend side it is SNAT:sp -> BE:bp (the flow's
 * backend-side key with source and destination swapped).
 *
 * Everything is checked against @p len: the quote must hold a whole IPv4
 * header (options included) of version 4, not a later fragment, and at
 * least the first 8 bytes of its L4 header (RFC 792); the quoted total
 * length must cover that much; the ICMP checksum over the message must
 * verify. The quote may be cut anywhere after that (RFC 1812 4.3.2.3
 * routers quote up to 576 bytes of the whole packet).
 *
 * @return 0 with @p out filled in; -EINVAL if an argument is NULL or
 *   anything is truncated, malformed or fails its checksum;
 *   -EPROTONOSUPPORT for a valid ICMP message of another type (echo,
 *   redirect, ...) or a quote of another protocol than TCP or UDP.
 */
int lb_nat_icmp_parse(const uint8_t *frame, uint32_t len,
		      const struct lb_pkt *pkt, struct lb_nat_icmp *out);

/**
 * Translates an ICMP error about one side of a flow into the same error
 * for the other side, in place: the outer addresses become @p outer_src
 * and @p outer_dst, the quoted header's tuple becomes @p inner. The
 * quoted IP checksum, the quoted L4 checksum (if present in the quote,
 * pseudo-header included; a quoted UDP checksum of zero stays zero), the
 * ICMP checksum and the outer IP checksum are updated incrementally; type,
 * code, the next-hop MTU of frag-needed and the quoted TTL are kept. A
 * quote that ends one byte into the TCP checksum keeps that byte as it
 * was (half of the old checksum does not give half of the new one, and
 * no stack verifies a quoted L4 checksum). The
 * outer TTL is not touched: the translated error is forwarded like any
 * other packet (lb_nat_ttl_dec()).
 *
 * From a backend (outer destination SNAT, quote SNAT:sp -> BE:bp) to the
 * client: @p outer_src = VIP, @p outer_dst = C, @p inner = {C, VIP, cp,
 * vp}. The source is the VIP rather than the erring router or backend:
 * the client knows no other address of the service, the backend network's
 * addresses are private and often unroutable or filtered towards clients
 * (BCP 38), and the client's stack matches the error to its socket by the
 * quote alone, so path MTU discovery works the same.
 *
 * From the client side (outer destination VIP, quote VIP:vp -> C:cp) to
 * the backend: @p outer_src = SNAT, @p outer_dst = BE, @p inner = {BE,
 * SNAT, bp, sp}.
 *
 * @return 0; the errors of lb_nat_icmp_parse(), the frame untouched.
 */
int lb_nat_icmp_rewrite(uint8_t *frame, uint32_t len, struct lb_pkt *pkt,
			uint32_t outer_src, uint32_t outer_dst,
			const struct lb_nat_tuple *inner);

/**
 * Sets the next-hop MTU of a frag-needed error in place to @p mtu and
 * updates the ICMP checksum incrementally.
 *
 * @return 0; the errors of lb_nat_icmp_parse(); -EINVAL for an error
 *   that is not frag-needed, the frame untouched.
 */
int lb_nat_icmp_set_mtu(uint8_t *frame, uint32_t len, const struct lb_pkt *pkt,
			uint16_t mtu);

/**
 * Reads the fields of an ARP packet that lb_pkt_parse() accepted.
 *
 * @return 0; -EINVAL on NULL, a non-ARP @p pkt or a body beyond @p len.
 */
int lb_nat_arp_parse(const uint8_t *frame, uint32_t len,
		     const struct lb_pkt *pkt, struct lb_nat_arp *out);

/**
 * Turns an ARP request into its reply in place: "target address is at
 * @p our_mac", sent to the requester's hardware address. The caller has
 * checked that the target address is one of ours. The 802.1Q tag and the
 * frame length (with any padding) are kept; an ARP probe (sender address
 * 0.0.0.0, RFC 5227) gets its reply with target address 0.0.0.0.
 *
 * @return 0; -EINVAL on NULL, a non-ARP @p pkt, a body beyond @p len or
 *   an operation other than request.
 */
int lb_nat_arp_reply(uint8_t *frame, uint32_t len, const struct lb_pkt *pkt,
		     const uint8_t *our_mac);

/**
 * Builds an ARP request "who has @p target_ip, tell @p src_ip" from
 * @p link into @p buf, padded with zeros to LB_NAT_FRAME_MIN bytes.
 *
 * @param dst_mac  NULL to broadcast (resolution); a known MAC to send the
 *   request unicast (revalidating a stale neighbour, as Linux does).
 * @return the frame length; -EINVAL on NULL @p buf / @p link, a zero or
 *   multicast @p target_ip; -ENOSPC if @p cap is below the frame length.
 */
int lb_nat_arp_request(uint8_t *buf, uint32_t cap,
		       const struct lb_nat_link *link, uint32_t src_ip,
		       uint32_t target_ip, const uint8_t *dst_mac);

/**
 * Builds a gratuitous ARP for @p ip: a broadcast request whose sender and
 * target addresses are both @p ip and whose target hardware address is
 * zero (the ARP announcement of RFC 5227 2.3), so that neighbours and
 * switches learn where a VIP or SNAT address now lives (at start and
 * after a fail-over).
 *
 * @return the frame length, or the errors of lb_nat_arp_request().
 */
int lb_nat_arp_announce(uint8_t *buf, uint32_t cap,
			const struct lb_nat_link *link, uint32_t ip);

/**
 * Turns an ICMP echo request to one of our addresses into the echo reply
 * in place: Ethernet and IP addresses swapped, type 0, TTL
 * LB_NAT_TTL_DEFAULT (the reply is ours, not forwarded), identifier,
 * sequence, data and IP options kept; IP and ICMP checksums updated. The
 * caller has checked that the destination is ours.
 *
 * @return 0; -EINVAL on NULL, a non-ICMP @p pkt, a type other than echo
 *   request (code 0) or an ICMP checksum that does not verify (RFC 1122
 *   3.2.2: such messages are discarded silently).
 */
int lb_nat_icmp_echo_reply(uint8_t *frame, uint32_t len, struct lb_pkt *pkt);

/**
 * Turns a TCP segment into the RST that answers it in place (RFC 793,
 * "Reset Generation", for a connection that does not exist): to a segment
 * with ACK, <SEQ=SEG.ACK><CTL=RST>; otherwise (a SYN) <SEQ=0>
 * <ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>, SEG.LEN counting the data, SYN and
 * FIN. Used when a queued connection expires or a new flow is refused.
 *
 * Ethernet addresses, IP addresses and ports are swapped; the IP header
 * becomes 20 bytes (options dropped: ID 0, DF, TTL LB_NAT_TTL_DEFAULT),
 * the TCP header 20 bytes with window 0 and no data; both checksums are
 * computed afresh. The frame shrinks: the caller trims it to the returned
 * length (the NIC pads frames shorter than LB_NAT_FRAME_MIN). @p pkt is
 * updated to describe the new frame.
 *
 * @return the new frame length; -EINVAL on NULL, a non-TCP @p pkt or a
 *   segment that is itself a RST (never answered, RFC 793);
 *   -EPROTONOSUPPORT for UDP or ICMP.
 */
int lb_nat_tcp_rst(uint8_t *frame, uint32_t len, struct lb_pkt *pkt);

/** Longest options lb_nat_tcp_seg() writes. */
#define LB_NAT_TCP_OPT_MAX 40u

/** The TCP header lb_nat_tcp_seg() writes; numbers in host order. */
struct lb_nat_tcp_hdr {
	uint32_t seq, ack;
	uint8_t flags; /**< LB_TCP_* */
	uint16_t win;
	const uint8_t *opt; /**< @c optlen bytes, a multiple of 4 */
	uint32_t optlen;
};

/**
 * Turns TCP segment @p pkt in @p frame into a segment of its own without
 * data: the SYN proxy's SYN-ACK to a client when @p reply (Ethernet
 * addresses, IP addresses and ports swapped), its SYN to a backend in the
 * client's name otherwise. The link header stays; the IP header becomes
 * 20 bytes as lb_nat_tcp_rst() writes it, the TCP header is @p h; both
 * checksums are computed afresh. The caller sizes the frame to the
 * returned length, which @p cap (the bytes the buffer holds from
 * @p frame) must cover. @p pkt is updated to describe the new frame.
 *
 * @return the new frame length; -EINVAL on NULL, a frame that is not TCP
 *   over IPv4 or options that are not whole words; -ENOSPC when @p cap is
 *   too short
 */
int lb_nat_tcp_seg(uint8_t *frame, uint32_t cap, struct lb_pkt *pkt,
		   bool reply, const struct lb_nat_tcp_hdr *h);

/**
 * Writes into @p buf an Ethernet frame (MAC addresses zero, for
 * lb_nat_set_macs()) holding a TCP segment without data or options from
 * @p src:@p sport to @p dst:@p dport (network order) with @p seq, @p ack
 * (host order) and @p flags (LB_TCP_*), headers as lb_nat_tcp_rst()
 * writes them.
 * @return the frame length, -EINVAL on NULL, -ENOSPC if @p cap is short.
 */
int lb_nat_tcp_build(uint8_t *buf, uint32_t cap, uint32_t src, uint32_t dst,
		     uint16_t sport, uint16_t dport, uint32_t seq, uint32_t ack,
		     uint8_t flags);

#endif /* LB_NAT_H */
