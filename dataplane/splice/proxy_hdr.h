/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_PROXY_HDR_H
#define LB_PROXY_HDR_H

/**
 * @file
 * Headers of the PROXY protocol (haproxy's doc/proxy-protocol.txt,
 * versions 1 and 2) that tell a backend behind full-NAT the client's
 * address and port and the address and port the client reached.
 *
 * - Version 1 is one line of text, "PROXY TCP4 <src> <dst> <sport>
 *   <dport>\r\n", at most LB_PROXY_V1_MAX bytes for IPv4; it has no form
 *   for UDP.
 * - Version 2 is binary: the 12-byte signature, version 2 with the PROXY
 *   command, family AF_INET with STREAM (TCP) or DGRAM (UDP), the length
 *   of what follows, then the addresses and ports in network order (12
 *   bytes), then type-length-value records. Of the registered TLVs, two
 *   apply to a load balancer that does not terminate TLS, and both are
 *   optional: PP2_TYPE_UNIQUE_ID (an opaque identifier of up to 128 bytes
 *   that the backend can log beside the load balancer's own records) and
 *   PP2_TYPE_CRC32C (the CRC32c of the whole header, RFC 4960 appendix B,
 *   computed with the field zero and stored in network order, last).
 *   ALPN, AUTHORITY and the SSL records need the TLS session; NOOP is
 *   padding nobody needs; NETNS names a namespace of the sender's.
 * - The LOCAL command of version 2 (16 bytes, family UNSPEC, no address)
 *   is for connections the load balancer makes on its own behalf, such
 *   as health checks of a backend that requires the header.
 *
 * Each builder writes into the caller's buffer and returns the length.
 */

#include <stddef.h>
#include <stdint.h>

/** Longest version 1 line for IPv4, CRLF included (the spec's 56). */
#define LB_PROXY_V1_MAX 56
/** Fixed part of a version 2 header: signature, command, family, len. */
#define LB_PROXY_V2_FIXED 16
/** A version 2 header for IPv4 without TLVs. */
#define LB_PROXY_V2_IPV4 (LB_PROXY_V2_FIXED + 12)
/** Longest PP2_TYPE_UNIQUE_ID value (section 2.2.5). */
#define LB_PROXY_UNIQUE_ID_MAX 128
/** Longest version 2 header this module writes. */
#define LB_PROXY_V2_MAX (LB_PROXY_V2_IPV4 + 3 + LB_PROXY_UNIQUE_ID_MAX + 3 + 4)

/** TLV types (section 2.2). */
#define LB_PP2_TYPE_CRC32C 0x03
#define LB_PP2_TYPE_UNIQUE_ID 0x05

/** The connection a header describes, as the client made it. */
struct lb_proxy_conn {
	uint32_t src;	/**< the client's address, network order */
	uint32_t dst;	/**< the address it reached (VIP), network order */
	uint16_t sport; /**< network order */
	uint16_t dport; /**< network order */
	uint8_t proto;	/**< LB_IPPROTO_TCP or LB_IPPROTO_UDP */
};

/** Optional TLVs of a version 2 header. */
struct lb_proxy_tlvs {
	const uint8_t *unique_id; /**< PP2_TYPE_UNIQUE_ID value, or NULL */
	uint8_t unique_id_len;	  /**< 1..LB_PROXY_UNIQUE_ID_MAX */
	uint8_t crc32c;		  /**< nonzero: add PP2_TYPE_CRC32C */
};

/**
 * CRC32c (Castagnoli, RFC 4960 appendix B) of @p len bytes at @p data,
 * continuing @p crc (0 to start).
 */
uint32_t lb_crc32c(uint32_t crc, const void *data, size_t len);

/**
 * Writes the version 1 line for TCP connection @p c into @p buf.
 * @return its length (no terminating NUL is written), -EPROTONOSUPPORT
 * for UDP (version 1 has no form for it) or another protocol, -ENOSPC
 * when @p cap is too small
 */
int lb_proxy_v1(char *buf, size_t cap, const struct lb_proxy_conn *c);

/**
 * Writes the version 2 header for connection @p c into @p buf, with the
 * TLVs @p tlv asks for (NULL: none).
 * @return its length, -EPROTONOSUPPORT for a protocol other than TCP or
 * UDP, -EINVAL for a unique ID longer than LB_PROXY_UNIQUE_ID_MAX or of
 * length 0, -ENOSPC when @p cap is too small
 */
int lb_proxy_v2(uint8_t *buf, size_t cap, const struct lb_proxy_conn *c,
		const struct lb_proxy_tlvs *tlv);

/**
 * Writes the 16-byte version 2 header of the LOCAL command.
 * @return its length, or -ENOSPC
 */
int lb_proxy_v2_local(uint8_t *buf, size_t cap);

#endif /* LB_PROXY_HDR_H */
