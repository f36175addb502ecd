/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_CSUM_H
#define LB_CSUM_H

/**
 * @file
 * Internet checksum helpers (RFC 1071) and incremental updates (RFC 1624)
 * for the NAT rewrites. Values are in network byte order as they sit in
 * the packet; the one's complement sum is byte-order independent as long
 * as both sides of an update use the same order.
 */

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/** Adds @p len bytes at @p data to a 32-bit partial sum. */
static inline uint32_t
lb_csum_partial(const void *data, size_t len, uint32_t sum)
{
	const uint8_t *p = data;
	uint64_t acc = sum;

	while (len >= 8) {
		uint32_t a, b;

		memcpy(&a, p, 4);
		memcpy(&b, p + 4, 4);
		acc += (uint64_t)a + b;
		p += 8;
		len -= 8;
	}
	while (len >= 2) {
		uint16_t w;

		memcpy(&w, p, 2);
		acc += w;
		p += 2;
		len -= 2;
	}
	if (len) {
		/* The odd byte is the high-order byte of a 16-bit word in
		 * network order, i.e. the first byte in memory. */
		uint16_t w = 0;

		memcpy(&w, p, 1);
		acc += w;
	}
	acc = (acc & 0xffffffffu) + (acc >> 32);
	acc = (acc & 0xffffffffu) + (acc >> 32);
	return (uint32_t)acc;
}

/** Folds a partial sum to 16 bits (not complemented). */
static inline uint16_t
lb_csum_fold(uint32_t sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/** The checksum field value for @p len bytes (complemented fold). */
static inline uint16_t
lb_csum(const void *data, size_t len)
{
	return (uint16_t)~lb_csum_fold(lb_csum_partial(data, len, 0));
}

/**
 * RFC 1624 equation 3: HC' = ~(~HC + ~m + m'), for a 16-bit field that
 * changed from @p old to @p new.
 */
static inline uint16_t
lb_csum_update16(uint16_t check, uint16_t old, uint16_t new)
{
	uint32_t sum = (uint16_t)~check;

	sum += (uint16_t)~old;
	sum += new;
	return (uint16_t)~lb_csum_fold(sum);
}

/** Same for a 32-bit field (an IPv4 address), as two 16-bit words. */
static inline uint16_t
lb_csum_update32(uint16_t check, uint32_t old, uint32_t new)
{
	uint32_t sum = (uint16_t)~check;

	sum += (uint16_t)~(old >> 16);
	sum += (uint16_t)~(old & 0xffff);
	sum += new >> 16;
	sum += new & 0xffff;
	return (uint16_t)~lb_csum_fold(sum);
}

/**
 * The folded sum of two IPv6 addresses (16 bytes each, as in the packet)
 * and two ports (network order): the words of a TCP/UDP tuple that sit
 * in its checksum, for an update of them all at once with
 * lb_csum_update16(check, old_sum, new_sum).
 */
static inline uint16_t
lb_csum_tuple6(const uint8_t *src, const uint8_t *dst, uint16_t sport,
	       uint16_t dport)
{
	uint32_t s = lb_csum_partial(src, 16, 0);

	s = lb_csum_partial(dst, 16, s);
	return lb_csum_fold(lb_csum_fold(s) + (uint32_t)sport + dport);
}

/** The same for two IPv4 addresses (network order) and two ports. */
static inline uint16_t
lb_csum_tuple4(uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport)
{
	uint32_t s = lb_csum_partial(&src, 4, 0);

	s = lb_csum_partial(&dst, 4, s);
	return lb_csum_fold(lb_csum_fold(s) + (uint32_t)sport + dport);
}

#endif /* LB_CSUM_H */
