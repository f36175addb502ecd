/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_BYTES_H
#define LB_BYTES_H

/**
 * @file
 * Reading and writing packet fields at any alignment. rd16()/rd32() and
 * wr16()/wr32() convert between network and host order; the _raw forms
 * move the bytes as they are, for values kept in network order (addresses,
 * ports, checksum words).
 */

#include <stdint.h>
#include <string.h>

static inline uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static inline void
wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
wr32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline uint16_t
rd16_raw(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

static inline uint32_t
rd32_raw(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static inline void
wr16_raw(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, 2);
}

static inline void
wr32_raw(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

#endif /* LB_BYTES_H */
