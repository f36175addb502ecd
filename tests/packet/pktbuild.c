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
			l4[20] = 2; /* MSS, 1460 unless told */
			l4[21] = 4;
			pb_put16(l4 + 22, d->mss_val ? d->mss_val : 1460);
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

/* The TCP or UDP checksum of @p l4 over a pseudo-header summing to
 * @p ph; ICMPv6's is at the ICMP place. */
static void
put_l4_csum(uint8_t *l4, uint32_t l4len, const struct pb_dg *d, uint32_t ph)
{
	uint16_t ck = (uint16_t)~pb_fold(pb_sum(l4, l4len, ph));

	switch (d->proto) {
	case PB_PROTO_TCP:
		pb_put16(l4 + 16, ck);
		break;
	case PB_PROTO_UDP:
		if (d->udp_csum_zero)
			ck = 0;
		else if (ck == 0)
			ck = 0xffff;
		pb_put16(l4 + 6, ck);
		break;
	default:
		pb_put16(l4 + 2, ck);
		break;
	}
}

size_t
pb_ipv4(uint8_t *p, const struct pb_dg *d)
{
	uint8_t *l4 = p + 20;
	uint32_t hl, l4len;

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

	if (d->proto == PB_PROTO_TCP || d->proto == PB_PROTO_UDP)
		put_l4_csum(l4, l4len, d,
			    pseudo(d->src, d->dst, d->proto, l4len));
	else
		pb_put16(l4 + 2, pb_csum(l4, l4len));
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

/* ---- IPv6 --------------------------------------------------------------- */

#define ETHER_TYPE_IPV6 0x86dd
#define ETHER_TYPE_VLAN 0x8100

static uint32_t
pseudo6(const uint8_t *src, const uint8_t *dst, uint8_t proto, uint32_t len)
{
	uint32_t sum = pb_sum(src, 16, 0);

	sum = pb_sum(dst, 16, sum);
	return sum + (len >> 16) + (len & 0xffff) + proto;
}

size_t
pb_ipv6(uint8_t *p, const struct pb_dg6 *d)
{
	uint8_t *x = p + 40;
	uint8_t next = d->l4.proto, *l4;
	uint32_t hl, l4len, ext = 0;

	memset(p, 0, 40);
	/* Extension headers in RFC 8200's order: hop-by-hop, fragment. */
	if (d->hbh) {
		memset(x, 0, 8);
		x[2] = 1; /* PadN of 4 bytes */
		x[3] = 4;
		ext += 8;
	}
	if (d->frag_hdr) {
		memset(x + ext, 0, 8);
		pb_put16(x + ext + 2, d->frag);
		pb_put32(x + ext + 4, 0x1234);
		ext += 8;
	}
	l4 = x + ext;
	hl = put_l4(l4, &d->l4);
	for (uint32_t i = 0; i < d->l4.plen; i++)
		l4[hl + i] = d->l4.data != NULL
				     ? d->l4.data[i]
				     : (uint8_t)(d->l4.seed + i * 29u);
	l4len = hl + d->l4.plen;
	/* Next-header chain. */
	if (d->frag_hdr) {
		x[d->hbh ? 8 : 0] = next;
		next = 44;
	}
	if (d->hbh) {
		x[0] = next;
		next = 0;
	}

	p[0] = (uint8_t)(0x60 | d->tclass >> 4);
	p[1] = (uint8_t)(d->tclass << 4);
	pb_put16(p + 4, (uint16_t)((int32_t)(ext + l4len) + d->plen_adj));
	p[6] = next;
	p[7] = d->hlim;
	memcpy(p + 8, d->src, 16);
	memcpy(p + 24, d->dst, 16);

	/* ICMPv6's checksum covers the pseudo-header too. */
	put_l4_csum(l4, l4len, &d->l4,
		    pseudo6(d->src, d->dst, d->l4.proto, l4len));
	return 40 + ext + l4len;
}

void
pb_ipv6_frame(struct pb_frame *f, const uint8_t *dst_mac,
	      const uint8_t *src_mac, const struct pb_dg6 *d)
{
	uint32_t l3 = PB_ETH_LEN;

	memset(f, 0, sizeof(*f));
	if (d->vlan != 0) {
		put_eth(f->b, dst_mac, src_mac, ETHER_TYPE_VLAN);
		pb_put16(f->b + 14, d->vlan);
		pb_put16(f->b + 16, ETHER_TYPE_IPV6);
		l3 += 4;
	} else {
		put_eth(f->b, dst_mac, src_mac, ETHER_TYPE_IPV6);
	}
	f->len = l3 + (uint32_t)pb_ipv6(f->b + l3, d);
}

void
pb_ip6(uint8_t out[16], uint16_t a, uint16_t b, uint16_t c, uint16_t d)
{
	memset(out, 0, 16);
	pb_put16(out, a);
	pb_put16(out + 2, b);
	pb_put16(out + 4, c);
	pb_put16(out + 14, d);
}
