/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_TEST_REF_CSUM_H
#define LB_TEST_REF_CSUM_H

/*
 * What the IPv6 tests check checksums against: RFC 1071 summed byte pair
 * by byte pair in host order, apart from dataplane/parse/csum.h, and the
 * big-endian field helpers of the frame builders.
 */

#include <stddef.h>
#include <stdint.h>

static inline void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Adds @p len bytes at @p p to the sum @p s, unfolded. */
static inline uint32_t
ref_sum(const uint8_t *p, size_t len, uint32_t s)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	return s;
}

static inline uint16_t
ref_fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

#endif /* LB_TEST_REF_CSUM_H */
