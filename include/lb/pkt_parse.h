/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_PKT_PARSE_H
#define LB_PKT_PARSE_H

/**
 * @file
 * Validating parser for the frames a worker receives: Ethernet (one
 * optional 802.1Q tag), ARP, IPv4, and TCP, UDP or ICMP above it.
 *
 * Every length is checked against the bytes actually present before it is
 * read, and everything the NAT path relies on is validated here, so the
 * rest of the worker can trust the offsets in struct lb_pkt. A frame that
 * fails gets a drop reason for the counters and is never forwarded.
 */

#include <stdbool.h>
#include <stdint.h>

#include "lb/pkt_parse-t.h"

/**
 * Parses and validates the @p len bytes at @p frame.
 * @return LB_PKT_IPV4 or LB_PKT_ARP with @p pkt filled in, or a drop
 * reason (>= LB_PKT_DROP_FIRST), in which case @p pkt is partially
 * filled and must not be used.
 */
enum lb_pkt_verdict lb_pkt_parse(const uint8_t *frame, uint32_t len,
				 struct lb_pkt *pkt);

/**
 * Whether the TCP or UDP checksum of a frame that lb_pkt_parse() found
 * LB_PKT_IPV4 verifies over the pseudo-header and the whole segment (a
 * UDP checksum of 0 is "none" and passes). Reads every byte of the
 * segment: for packets that create state, not for every packet.
 */
bool lb_pkt_l4_csum_ok(const uint8_t *frame, const struct lb_pkt *pkt);

/** Short stable name of a verdict for counters and logs. */
const char *lb_pkt_verdict_name(enum lb_pkt_verdict v);

#endif /* LB_PKT_PARSE_H */
