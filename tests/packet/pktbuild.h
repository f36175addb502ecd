/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_TEST_PKTBUILD_H
#define LB_TEST_PKTBUILD_H

/*
 * Frame builder of the packet tests: Ethernet, ARP, IPv4 with TCP, UDP or
 * ICMP, described in host order and written in network order, with every
 * checksum computed from scratch by a reference routine of its own (sums
 * of byte pairs, RFC 1071), never with the dataplane's helpers. Expected
 * frames come from here, so a checksum the dataplane gets wrong cannot be
 * agreed with by construction.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PB_FRAME_MAX 1600
#define PB_ETH_LEN 14
#define PB_FRAME_MIN 60

#define PB_PROTO_ICMP 1
#define PB_PROTO_TCP 6
#define PB_PROTO_UDP 17

#define PB_FIN 0x01
#define PB_SYN 0x02
#define PB_RST 0x04
#define PB_PSH 0x08
#define PB_ACK 0x10

#define PB_IP_DF 0x4000
#define PB_IP_MF 0x2000

/* Builds a host-order address from its dotted parts. */
#define PB_IP(a, b, c, d)                                                      \
	((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

struct pb_frame {
	uint8_t b[PB_FRAME_MAX];
	uint32_t len;
};

/* An IPv4 datagram, host order. Zero fields are zero in the packet. */
struct pb_dg {
	uint8_t proto;
	uint8_t tos;
	uint8_t ttl;
	uint16_t id;
	uint16_t frag; /* flags and fragment offset */
	uint32_t src, dst;
	uint16_t sport, dport; /* TCP, UDP */
	uint32_t seq, ack;     /* TCP */
	uint8_t flags;	       /* TCP */
	uint16_t win;	       /* TCP */
	uint8_t mss;	       /* TCP: add an MSS option and a SACK-ok */
	uint16_t mss_val;      /* TCP: that MSS, 0 for 1460 */
	uint8_t udp_csum_zero; /* UDP: send without checksum */
	uint8_t type, code;    /* ICMP */
	uint32_t rest;	       /* ICMP bytes 4..7 */
	const uint8_t *data;   /* payload; NULL: a pattern from seed */
	uint16_t plen;
	uint8_t seed;
};

/* Reference checksum: one's complement sum of byte pairs. */
uint32_t pb_sum(const uint8_t *p, size_t len, uint32_t sum);
uint16_t pb_fold(uint32_t sum);
uint16_t pb_csum(const uint8_t *p, size_t len);

void pb_put16(uint8_t *p, uint16_t v);
void pb_put32(uint8_t *p, uint32_t v);
uint16_t pb_get16(const uint8_t *p);
uint32_t pb_get32(const uint8_t *p);

/* Writes the IPv4 datagram @d at @p; returns its length. */
size_t pb_ipv4(uint8_t *p, const struct pb_dg *d);

/* Ethernet header and the datagram @d. */
void pb_ipv4_frame(struct pb_frame *f, const uint8_t *dst_mac,
		   const uint8_t *src_mac, const struct pb_dg *d);

/* Ethernet/IPv4 ARP, padded with zeros to @pad_to bytes (0: none). */
void pb_arp_frame(struct pb_frame *f, const uint8_t *dst_mac,
		  const uint8_t *src_mac, uint16_t op, const uint8_t *sha,
		  uint32_t spa, const uint8_t *tha, uint32_t tpa,
		  uint32_t pad_to);

/* Recomputes the IPv4 header checksum of a frame without VLAN tag. */
void pb_fix_ip_csum(struct pb_frame *f);

/*
 * An IPv6 packet, host order but for the addresses (as in the packet).
 * @l4 describes the upper layer (proto PB_PROTO_TCP, _UDP or
 * PB_PROTO_ICMPV6 with type, code, rest and data); its IPv4 fields
 * (src, dst, ttl ...) are unused.
 */
#define PB_PROTO_ICMPV6 58
struct pb_dg6 {
	struct pb_dg l4;
	uint8_t src[16], dst[16];
	uint8_t hlim;
	uint8_t tclass;
	uint8_t hbh;	  /* a hop-by-hop header (8 bytes of padding) */
	uint8_t frag_hdr; /* a fragment header with word @frag */
	uint16_t frag;	  /* offset << 3 | M */
	int16_t plen_adj; /* added to the payload length field */
	uint16_t vlan;	  /* 802.1Q TCI, 0: untagged */
};

/* Writes the IPv6 packet @d at @p; returns its length. */
size_t pb_ipv6(uint8_t *p, const struct pb_dg6 *d);
/* Ethernet header (tagged when @d->vlan) and the packet @d. */
void pb_ipv6_frame(struct pb_frame *f, const uint8_t *dst_mac,
		   const uint8_t *src_mac, const struct pb_dg6 *d);
/* The address a:b:c::d. */
void pb_ip6(uint8_t out[16], uint16_t a, uint16_t b, uint16_t c, uint16_t d);

/*
 * Compares @got with @want; on a difference prints @what, the lengths and
 * every differing byte (at most 24) to @out. Returns 0 when equal.
 */
int pb_diff(FILE *out, const char *what, const uint8_t *got, uint32_t glen,
	    const uint8_t *want, uint32_t wlen);

#endif /* LB_TEST_PKTBUILD_H */
