/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_L4_HDR_H
#define LB_L4_HDR_H

/**
 * @file
 * The checks of a TCP header that do not depend on the IP version below
 * it, shared by the IPv4 and IPv6 parsers.
 */

#include <stdbool.h>
#include <stdint.h>

#include "lb/pkt_parse-t.h"

/**
 * The data offset of the TCP header at @p p in bytes, if it is at least
 * 20 and within @p l4_len bytes; 0 otherwise. @p l4_len is at least 20.
 */
static inline uint32_t
lb_tcp_doff(const uint8_t *p, uint32_t l4_len)
{
	uint32_t doff = (uint32_t)(p[12] >> 4) * 4;

	return doff >= 20 && doff <= l4_len ? doff : 0;
}

/**
 * Whether TCP flags @p f (LB_TCP_*) are a combination no real connection
 * sends: SYN+FIN, SYN+RST, or none at all (scans or garbage).
 */
static inline bool
lb_tcp_flags_bad(uint8_t f)
{
	return (f & (LB_TCP_SYN | LB_TCP_FIN)) == (LB_TCP_SYN | LB_TCP_FIN) ||
	       (f & (LB_TCP_SYN | LB_TCP_RST)) == (LB_TCP_SYN | LB_TCP_RST) ||
	       f == 0;
}

#endif /* LB_L4_HDR_H */
