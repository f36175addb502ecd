/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PROXY protocol headers: see dataplane/splice/proxy_hdr.h.
 */
#include <errno.h>
#include <string.h>

#include "bytes.h"
#include "lb/pkt_parse.h"
#include "proxy_hdr.h"

static const uint8_t v2_sig[12] = {0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d,
				   0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a};

#define V2_VERSION 0x20
#define V2_CMD_LOCAL 0x0
#define V2_CMD_PROXY 0x1
#define V2_AF_UNSPEC 0x00
#define V2_AF_INET 0x10
#define V2_STREAM 0x1
#define V2_DGRAM 0x2
#define TLV_HDR 3
#define CRC_LEN 4

/*
 * CRC32c, reflected polynomial 0x82f63b78, four bits at a time: the
 * header is short and made once per connection, and sixteen entries stay
 * in one cache line.
 */
static const uint32_t crc_nibble[16] = {
	0x00000000, 0x105ec76f, 0x20bd8ede, 0x30e349b1, 0x417b1dbc, 0x5125dad3,
	0x61c69362, 0x7198540d, 0x82f63b78, 0x92a8fc17, 0xa24bb5a6, 0xb21572c9,
	0xc38d26c4, 0xd3d3e1ab, 0xe330a81a, 0xf36e6f75,
};

uint32_t
lb_crc32c(uint32_t crc, const void *data, size_t len)
{
	const uint8_t *p = data;

	crc = ~crc;
	while (len--) {
		crc ^= *p++;
		crc = crc >> 4 ^ crc_nibble[crc & 0x0f];
		crc = crc >> 4 ^ crc_nibble[crc & 0x0f];
	}
	return ~crc;
}

/* Decimal digits of @p v, no leading zeros (the spec forbids them). */
static char *
put_dec(char *p, unsigned int v)
{
	char tmp[5];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	while (n > 0)
		*p++ = tmp[--n];
	return p;
}

/* An IPv4 address in network order, dotted quad. */
static char *
put_ipv4(char *p, uint32_t a)
{
	const uint8_t *b = (const uint8_t *)&a;

	for (int i = 0; i < 4; i++) {
		if (i > 0)
			*p++ = '.';
		p = put_dec(p, b[i]);
	}
	return p;
}

int
lb_proxy_v1(char *buf, size_t cap, const struct lb_proxy_conn *c)
{
	char line[LB_PROXY_V1_MAX];
	char *p = line;

	if (c->proto != LB_IPPROTO_TCP)
		return -EPROTONOSUPPORT;
	memcpy(p, "PROXY TCP4 ", 11);
	p = put_ipv4(p + 11, c->src);
	*p++ = ' ';
	p = put_ipv4(p, c->dst);
	*p++ = ' ';
	p = put_dec(p, rd16((const uint8_t *)&c->sport));
	*p++ = ' ';
	p = put_dec(p, rd16((const uint8_t *)&c->dport));
	*p++ = '\r';
	*p++ = '\n';
	if ((size_t)(p - line) > cap)
		return -ENOSPC;
	memcpy(buf, line, (size_t)(p - line));
	return (int)(p - line);
}

static uint8_t *
put_tlv(uint8_t *p, uint8_t type, const void *val, uint16_t len)
{
	p[0] = type;
	wr16(p + 1, len);
	memcpy(p + TLV_HDR, val, len);
	return p + TLV_HDR + len;
}

int
lb_proxy_v2(uint8_t *buf, size_t cap, const struct lb_proxy_conn *c,
	    const struct lb_proxy_tlvs *tlv)
{
	static const uint8_t zero[CRC_LEN];
	size_t len = LB_PROXY_V2_IPV4;
	uint8_t *p, *crc = NULL;

	if (c->proto != LB_IPPROTO_TCP && c->proto != LB_IPPROTO_UDP)
		return -EPROTONOSUPPORT;
	if (tlv != NULL && tlv->unique_id != NULL) {
		if (tlv->unique_id_len == 0 ||
		    tlv->unique_id_len > LB_PROXY_UNIQUE_ID_MAX)
			return -EINVAL;
		len += TLV_HDR + tlv->unique_id_len;
	}
	if (tlv != NULL && tlv->crc32c)
		len += TLV_HDR + CRC_LEN;
	if (len > cap)
		return -ENOSPC;
	memcpy(buf, v2_sig, sizeof(v2_sig));
	buf[12] = V2_VERSION | V2_CMD_PROXY;
	buf[13] = V2_AF_INET |
		  (c->proto == LB_IPPROTO_TCP ? V2_STREAM : V2_DGRAM);
	wr16(buf + 14, (uint16_t)(len - LB_PROXY_V2_FIXED));
	/* Already in network order, as the spec's union lays them out. */
	memcpy(buf + 16, &c->src, 4);
	memcpy(buf + 20, &c->dst, 4);
	memcpy(buf + 24, &c->sport, 2);
	memcpy(buf + 26, &c->dport, 2);
	p = buf + LB_PROXY_V2_IPV4;
	if (tlv != NULL && tlv->unique_id != NULL)
		p = put_tlv(p, LB_PP2_TYPE_UNIQUE_ID, tlv->unique_id,
			    tlv->unique_id_len);
	if (tlv != NULL && tlv->crc32c) {
		crc = p + TLV_HDR;
		p = put_tlv(p, LB_PP2_TYPE_CRC32C, zero, CRC_LEN);
		/* Over the whole header with the field zero (2.2.3). */
		wr32(crc, lb_crc32c(0, buf, len));
	}
	return (int)len;
}

int
lb_proxy_v2_local(uint8_t *buf, size_t cap)
{
	if (cap < LB_PROXY_V2_FIXED)
		return -ENOSPC;
	memcpy(buf, v2_sig, sizeof(v2_sig));
	buf[12] = V2_VERSION | V2_CMD_LOCAL;
	buf[13] = V2_AF_UNSPEC;
	wr16(buf + 14, 0);
	return LB_PROXY_V2_FIXED;
}
