/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "pktbuild.h"

#define ETHER_TYPE_IPV4 0x0800
#define ETHER_TYPE_ARP 0x0806

uint32_t
pb_sum(const uint8_t *p, size_t len, uint32_t sum)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (i < len)
		sum += (uint32_t)p[i] << 8;
	return sum;
}

uint16_t
pb_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

uint16_t
pb_csum(const uint8_t *p, size_t len)
{
	return (uint16_t)~pb_fold(pb_sum(p, len, 0));
}

void
pb_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

void
pb_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

uint16_t
pb_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

uint32_t
pb_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/* Sum of the TCP/UDP pseudo-header. */
static uint32_t
pseudo(uint32_t src, uint32_t dst, uint8_t proto, uint32_t len)
{
	return (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) +
	       proto + len;
}

static uint32_t
put_l4(uint8_t *l4, const struct pb_dg *d)
{
	uint32_t hl;

	switch (d->proto) {
	case PB_PROTO_TCP:
		hl = d->mss ? 28 : 20;
		memset(l4, 0, hl);
		pb_put16(l4, d->sport);
		pb_put16(l4 + 2, d->dport);
		pb_put32(l4 + 4, d->seq);
		pb_put32(l4 + 8, d->ack);
		l4[12] = (uint8_t)(hl / 4 << 4);
		l4[13] = d->flags;
		pb_put16(l4 + 14, d->win);
		if (d->mss) {
			l4[20] = 2; /* MSS 1460 */
			l4[21] = 4;
			pb_put16(l4 + 22, 1460);
			l4[24] = 1; /* NOP, NOP, SACK permitted */
			l4[25] = 1;
			l4[26] = 4;
			l4[27] = 2;
		}
		return hl;
	case PB_PROTO_UDP:
		pb_put16(l4, d->sport);
		pb_put16(l4 + 2, d->dport);
		pb_put16(l4 + 4, (uint16_t)(8 + d->plen));
		pb_put16(l4 + 6, 0);
		return 8;
	default:
		l4[0] = d->type;
		l4[1] = d->code;
		pb_put16(l4 + 2, 0);
		pb_put32(l4 + 4, d->rest);
		return 8;
	}
}

size_t
pb_ipv4(uint8_t *p, const struct pb_dg *d)
{
	uint8_t *l4 = p + 20;
	uint32_t hl, l4len;
	uint16_t ck;

	memset(p, 0, 20);
	hl = put_l4(l4, d);
	for (uint32_t i = 0; i < d->plen; i++)
		l4[hl + i] = d->data != NULL ? d->data[i]
					     : (uint8_t)(d->seed + i * 29u);
	l4len = hl + d->plen;

	p[0] = 0x45;
	p[1] = d->tos;
	pb_put16(p + 2, (uint16_t)(20 + l4len));
	pb_put16(p + 4, d->id);
	pb_put16(p + 6, d->frag);
	p[8] = d->ttl;
	p[9] = d->proto;
	pb_put32(p + 12, d->src);
	pb_put32(p + 16, d->dst);
	pb_put16(p + 10, pb_csum(p, 20));

	switch (d->proto) {
	case PB_PROTO_TCP:
		ck = (uint16_t)~pb_fold(pb_sum(
			l4, l4len, pseudo(d->src, d->dst, d->proto, l4len)));
		pb_put16(l4 + 16, ck);
		break;
	case PB_PROTO_UDP:
		ck = (uint16_t)~pb_fold(pb_sum(
			l4, l4len, pseudo(d->src, d->dst, d->proto, l4len)));
		if (d->udp_csum_zero)
			ck = 0;
		else if (ck == 0)
			ck = 0xffff;
		pb_put16(l4 + 6, ck);
		break;
	default:
		pb_put16(l4 + 2, pb_csum(l4, l4len));
		break;
	}
	return 20 + l4len;
}

static void
put_eth(uint8_t *b, const uint8_t *dst, const uint8_t *src, uint16_t type)
{
	memcpy(b, dst, 6);
	memcpy(b + 6, src, 6);
	pb_put16(b + 12, type);
}

void
pb_ipv4_frame(struct pb_frame *f, const uint8_t *dst_mac,
	      const uint8_t *src_mac, const struct pb_dg *d)
{
	memset(f, 0, sizeof(*f));
	put_eth(f->b, dst_mac, src_mac, ETHER_TYPE_IPV4);
	f->len = PB_ETH_LEN + (uint32_t)pb_ipv4(f->b + PB_ETH_LEN, d);
}

void
pb_arp_frame(struct pb_frame *f, const uint8_t *dst_mac, const uint8_t *src_mac,
	     uint16_t op, const uint8_t *sha, uint32_t spa, const uint8_t *tha,
	     uint32_t tpa, uint32_t pad_to)
{
	uint8_t *a = f->b + PB_ETH_LEN;

	memset(f, 0, sizeof(*f));
	put_eth(f->b, dst_mac, src_mac, ETHER_TYPE_ARP);
	pb_put16(a, 1);
	pb_put16(a + 2, ETHER_TYPE_IPV4);
	a[4] = 6;
	a[5] = 4;
	pb_put16(a + 6, op);
	memcpy(a + 8, sha, 6);
	pb_put32(a + 14, spa);
	memcpy(a + 18, tha, 6);
	pb_put32(a + 24, tpa);
	f->len = PB_ETH_LEN + 28;
	if (f->len < pad_to)
		f->len = pad_to;
}

void
pb_fix_ip_csum(struct pb_frame *f)
{
	uint8_t *ip = f->b + PB_ETH_LEN;
	uint32_t ihl = (uint32_t)(ip[0] & 0xf) * 4;

	pb_put16(ip + 10, 0);
	pb_put16(ip + 10, pb_csum(ip, ihl));
}

int
pb_diff(FILE *out, const char *what, const uint8_t *got, uint32_t glen,
	const uint8_t *want, uint32_t wlen)
{
	uint32_t n = glen < wlen ? glen : wlen, shown = 0;

	if (glen == wlen && memcmp(got, want, n) == 0)
		return 0;
	fprintf(out, "%s: frame differs (got %u bytes, want %u)\n", what, glen,
		wlen);
	for (uint32_t i = 0; i < n && shown < 24; i++) {
		if (got[i] == want[i])
			continue;
		fprintf(out, "  offset %4u: got %02x want %02x\n", i, got[i],
			want[i]);
		shown++;
	}
	return 1;
}
