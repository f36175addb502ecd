/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv6 full-NAT and the fnat64 translations: see dataplane/nat/nat6.h.
 * Checksum words stay in network order, as in nat.c.
 */
#include <errno.h>
#include <string.h>

#include "bytes.h"
#include "csum.h"
#include "nat.h"
#include "nat6.h"

#define ETHER_HDR_LEN 14
#define IPV4_MIN_HDR 20
#define TCP_MIN_HDR 20
#define UDP_HDR_LEN 8
#define TCP_CSUM_OFF 16
#define UDP_CSUM_OFF 6
#define IP_DF 0x4000
#define IPOPT_LSRR 0x83
#define IPOPT_SSRR 0x89

static uint32_t
l4_min(uint8_t proto)
{
	return proto == LB_IPPROTO_TCP	 ? TCP_MIN_HDR
	       : proto == LB_IPPROTO_UDP ? UDP_HDR_LEN
					 : 0;
}

static uint32_t
csum_off(uint8_t proto)
{
	return proto == LB_IPPROTO_TCP ? TCP_CSUM_OFF : UDP_CSUM_OFF;
}

/* End of the IPv6 packet of @p pkt, whose offsets are checked as far as
 * a rewrite needs them; 0 if they cannot be those of a parsed frame. */
static uint32_t
pkt6_end(const struct lb_pkt6 *pkt)
{
	uint32_t end = (uint32_t)pkt->l3_off + LB_IPV6_HDR_LEN + pkt->ip_plen;
	uint32_t need = l4_min(pkt->proto);

	if (pkt->l3_off < ETHER_HDR_LEN ||
	    pkt->l4_off < pkt->l3_off + LB_IPV6_HDR_LEN ||
	    (need != 0 && (uint32_t)pkt->l4_off + need > end))
		return 0;
	return end;
}

/*
 * The new L4 checksum when the words of the tuple (addresses, ports) that
 * summed to @p old now sum to @p new: RFC 1624 equation 3 over the whole
 * set at once. UDP never sends 0.
 */
static void
l4_csum_set(uint8_t *l4, uint8_t proto, uint16_t old, uint16_t new)
{
	uint32_t co = csum_off(proto);
	uint16_t ck = lb_csum_update16(rd16_raw(l4 + co), old, new);

	if (proto == LB_IPPROTO_UDP && ck == 0)
		ck = 0xffff;
	wr16_raw(l4 + co, ck);
}

int
lb_nat6_rewrite(uint8_t *frame, struct lb_pkt6 *pkt, const uint8_t *new_src,
		uint16_t new_sport, const uint8_t *new_dst, uint16_t new_dport)
{
	uint8_t *ip, *l4;
	uint16_t old, new;

	if (frame == NULL || pkt == NULL || new_src == NULL ||
	    new_dst == NULL || pkt6_end(pkt) == 0)
		return -EINVAL;
	if (l4_min(pkt->proto) == 0 || (pkt->flags & LB_PKT6_F_FRAG))
		return -EPROTONOSUPPORT;
	ip = frame + pkt->l3_off;
	l4 = frame + pkt->l4_off;
	old = lb_csum_tuple6(ip + 8, ip + 24, rd16_raw(l4), rd16_raw(l4 + 2));
	new = lb_csum_tuple6(new_src, new_dst, new_sport, new_dport);
	l4_csum_set(l4, pkt->proto, old, new);
	memcpy(ip + 8, new_src, 16);
	memcpy(ip + 24, new_dst, 16);
	wr16_raw(l4, new_sport);
	wr16_raw(l4 + 2, new_dport);
	memcpy(pkt->src, new_src, 16);
	memcpy(pkt->dst, new_dst, 16);
	pkt->sport = new_sport;
	pkt->dport = new_dport;
	return 0;
}

int
lb_nat6_hop_dec(uint8_t *frame, struct lb_pkt6 *pkt)
{
	uint8_t *ip;

	if (frame == NULL || pkt == NULL || pkt6_end(pkt) == 0)
		return -EINVAL;
	ip = frame + pkt->l3_off;
	if (ip[7] <= 1)
		return -ETIMEDOUT;
	ip[7]--;
	pkt->hop_limit = ip[7];
	return 0;
}

/*
 * Writes at @p ip an IPv6 header without extensions from @p src to
 * @p dst and a TCP header of @p h (options copied from @p opt), both
 * checksummed afresh; @p pkt describes the result. Everything the caller
 * needed from the old headers was read: these land over them.
 */
static int
write_tcp6(uint8_t *ip, struct lb_pkt6 *pkt, const uint8_t *src,
	   const uint8_t *dst, uint16_t sport, uint16_t dport,
	   const struct lb_nat_tcp_hdr *h, const uint8_t *opt)
{
	uint32_t tl = TCP_MIN_HDR + h->optlen;
	uint8_t s[16], d[16], *th = ip + LB_IPV6_HDR_LEN;

	memcpy(s, src, 16);
	memcpy(d, dst, 16);
	memset(ip, 0, LB_IPV6_HDR_LEN + TCP_MIN_HDR);
	ip[0] = 0x60;
	wr16(ip + 4, (uint16_t)tl);
	ip[6] = LB_IPPROTO_TCP;
	ip[7] = LB_NAT_TTL_DEFAULT;
	memcpy(ip + 8, s, 16);
	memcpy(ip + 24, d, 16);
	wr16_raw(th, sport);
	wr16_raw(th + 2, dport);
	wr32(th + 4, h->seq);
	wr32(th + 8, h->ack);
	th[12] = (uint8_t)((tl / 4) << 4);
	th[13] = h->flags;
	wr16(th + 14, h->win);
	if (h->optlen > 0)
		memcpy(th + TCP_MIN_HDR, opt, h->optlen);
	wr16_raw(th + TCP_CSUM_OFF,
		 (uint16_t)~lb_csum_fold(lb_csum_partial(
			 th, tl,
			 lb_pkt6_pseudo_sum(s, d, tl, LB_IPPROTO_TCP))));
	pkt->l4_off = (uint16_t)(pkt->l3_off + LB_IPV6_HDR_LEN);
	pkt->payload_off = (uint16_t)(pkt->l4_off + tl);
	pkt->payload_len = 0;
	pkt->ip_plen = (uint16_t)tl;
	pkt->frag_hdr = 0;
	pkt->n_ext = 0;
	pkt->flags = 0;
	pkt->tcp_flags = h->flags;
	pkt->hop_limit = LB_NAT_TTL_DEFAULT;
	memcpy(pkt->src, s, 16);
	memcpy(pkt->dst, d, 16);
	pkt->sport = sport;
	pkt->dport = dport;
	return pkt->payload_off;
}

static void
swap_macs(uint8_t *frame)
{
	uint8_t mac[6];

	memcpy(mac, frame, 6);
	memcpy(frame, frame + 6, 6);
	memcpy(frame + 6, mac, 6);
}

int
lb_nat6_tcp_rst(uint8_t *frame, uint32_t len, struct lb_pkt6 *pkt)
{
	struct lb_nat_tcp_hdr h = {0};
	uint8_t a[2][16], *ip, *th;
	uint16_t sport, dport;
	uint32_t end;

	if (frame == NULL || pkt == NULL)
		return -EINVAL;
	if (pkt->proto != LB_IPPROTO_TCP)
		return -EPROTONOSUPPORT;
	end = pkt6_end(pkt);
	th = frame + pkt->l4_off;
	if (end == 0 || end > len ||
	    (h.flags = lb_nat_rst_numbers(th, pkt->payload_len, &h.seq,
					  &h.ack)) == 0)
		return -EINVAL;
	ip = frame + pkt->l3_off;
	memcpy(a[0], ip + 8, 16);
	memcpy(a[1], ip + 24, 16);
	sport = rd16_raw(th);
	dport = rd16_raw(th + 2);
	swap_macs(frame);
	return write_tcp6(ip, pkt, a[1], a[0], dport, sport, &h, NULL);
}

int
lb_nat6_tcp_seg(uint8_t *frame, uint32_t cap, struct lb_pkt6 *pkt, bool reply,
		const struct lb_nat_tcp_hdr *h)
{
	uint8_t opt[LB_NAT_TCP_OPT_MAX], a[2][16], *ip, *th;
	uint16_t port[2];
	uint32_t len;

	if (frame == NULL || pkt == NULL || h == NULL ||
	    pkt->proto != LB_IPPROTO_TCP || pkt6_end(pkt) == 0 ||
	    h->optlen > LB_NAT_TCP_OPT_MAX || h->optlen % 4 != 0)
		return -EINVAL;
	len = (uint32_t)pkt->l3_off + LB_IPV6_HDR_LEN + TCP_MIN_HDR +
	      h->optlen;
	if (cap < len)
		return -ENOSPC;
	ip = frame + pkt->l3_off;
	th = frame + pkt->l4_off;
	memcpy(a[0], ip + 8, 16);
	memcpy(a[1], ip + 24, 16);
	port[0] = rd16_raw(th);
	port[1] = rd16_raw(th + 2);
	/* The options may come from the segment itself. */
	if (h->optlen > 0)
		memcpy(opt, h->opt, h->optlen);
	if (reply)
		swap_macs(frame);
	write_tcp6(ip, pkt, a[reply], a[!reply], port[reply], port[!reply], h,
		   opt);
	return (int)len;
}

int
lb_nat64_xlate(uint8_t *buf, uint32_t off, uint32_t len,
	       const struct lb_pkt6 *pkt, uint32_t src, uint16_t sport,
	       uint32_t dst, uint16_t dport, struct lb_pkt *out)
{
	uint32_t end, l4_len, shift, l3 = 0;
	uint8_t *f, *ip, *l4;
	uint16_t old, new;
	uint8_t tos, ttl;

	if (buf == NULL || pkt == NULL || out == NULL)
		return -EINVAL;
	end = pkt6_end(pkt);
	if (end == 0 || end > len)
		return -EINVAL;
	if (l4_min(pkt->proto) == 0 || (pkt->flags & LB_PKT6_F_FRAG))
		return -EPROTONOSUPPORT;
	l4_len = end - pkt->l4_off;
	if (l4_len > UINT16_MAX - IPV4_MIN_HDR)
		return -EMSGSIZE;
	f = buf + off;
	ip = f + pkt->l3_off;
	l4 = f + pkt->l4_off;
	tos = (uint8_t)((ip[0] & 0xf) << 4 | ip[1] >> 4);
	ttl = ip[7];
	old = lb_csum_tuple6(ip + 8, ip + 24, rd16_raw(l4), rd16_raw(l4 + 2));
	new = lb_csum_tuple4(src, dst, sport, dport);
	l4_csum_set(l4, pkt->proto, old, new);
	wr16_raw(l4, sport);
	wr16_raw(l4 + 2, dport);

	/* The L2 header moves up to just before the new IPv4 header, which
	 * ends where the upper layer starts. */
	shift = pkt->l4_off - pkt->l3_off - IPV4_MIN_HDR;
	memmove(f + shift, f, pkt->l3_off);
	f += shift;
	wr16(f + pkt->l3_off - 2, LB_ETHER_TYPE_IPV4);
	ip = f + pkt->l3_off;
	memset(ip, 0, IPV4_MIN_HDR);
	ip[0] = 0x45;
	ip[1] = tos;
	wr16(ip + 2, (uint16_t)(IPV4_MIN_HDR + l4_len));
	wr16(ip + 6, IP_DF);
	ip[8] = ttl;
	ip[9] = pkt->proto;
	wr32_raw(ip + 12, src);
	wr32_raw(ip + 16, dst);
	wr16_raw(ip + 10, lb_csum(ip, IPV4_MIN_HDR));

	memset(out, 0, sizeof(*out));
	l3 = pkt->l3_off;
	out->l3_off = (uint16_t)l3;
	out->l4_off = (uint16_t)(l3 + IPV4_MIN_HDR);
	out->payload_off =
		(uint16_t)(out->l4_off + (pkt->payload_off - pkt->l4_off));
	out->payload_len = pkt->payload_len;
	out->ip_len = (uint16_t)(IPV4_MIN_HDR + l4_len);
	out->vlan_tci = pkt->vlan_tci;
	out->has_vlan = pkt->has_vlan;
	out->proto = pkt->proto;
	out->tcp_flags = pkt->tcp_flags;
	out->ttl = ttl;
	out->src = src;
	out->dst = dst;
	out->sport = sport;
	out->dport = dport;
	return (int)(off + shift);
}

/* Whether IPv4 options hold a source route not yet at its end. */
static int
source_routed(const uint8_t *o, uint32_t n)
{
	uint32_t i = 0;

	while (i < n) {
		uint8_t t = o[i];

		if (t == 0)
			break;
		if (t == 1) {
			i++;
			continue;
		}
		if (n - i < 2 || o[i + 1] < 2 || o[i + 1] > n - i)
			break;
		/* The pointer is 1-based; past the length, the route is
		 * spent (RFC 791). */
		if ((t == IPOPT_LSRR || t == IPOPT_SSRR) && o[i + 1] >= 3 &&
		    o[i + 2] <= o[i + 1])
			return 1;
		i += o[i + 1];
	}
	return 0;
}

int
lb_nat46_xlate(uint8_t *buf, uint32_t off, uint32_t len,
	       const struct lb_pkt *pkt, const uint8_t *src, uint16_t sport,
	       const uint8_t *dst, uint16_t dport, struct lb_pkt6 *out)
{
	uint32_t end, ihl, l4_len, l3;
	uint8_t *f, *ip, *l4;
	uint8_t tos, ttl;
	int32_t grow;

	if (buf == NULL || pkt == NULL || src == NULL || dst == NULL ||
	    out == NULL)
		return -EINVAL;
	end = (uint32_t)pkt->l3_off + pkt->ip_len;
	if (pkt->l3_off < ETHER_HDR_LEN ||
	    pkt->l4_off < pkt->l3_off + IPV4_MIN_HDR || end > len)
		return -EINVAL;
	if (pkt->proto == LB_IPPROTO_ICMP)
		return -EPROTONOSUPPORT;
	if (l4_min(pkt->proto) == 0 ||
	    (uint32_t)pkt->l4_off + l4_min(pkt->proto) > end)
		return -EINVAL;
	f = buf + off;
	ip = f + pkt->l3_off;
	l4 = f + pkt->l4_off;
	ihl = pkt->l4_off - pkt->l3_off;
	if (ihl > IPV4_MIN_HDR &&
	    source_routed(ip + IPV4_MIN_HDR, ihl - IPV4_MIN_HDR))
		return -EPROTONOSUPPORT;
	grow = (int32_t)LB_IPV6_HDR_LEN - (int32_t)ihl;
	if (grow > 0 && off < (uint32_t)grow)
		return -ENOSPC;
	l4_len = end - pkt->l4_off;
	tos = ip[1];
	ttl = ip[8];

	if (pkt->proto == LB_IPPROTO_UDP && rd16_raw(l4 + UDP_CSUM_OFF) == 0) {
		/* None over IPv4; IPv6 needs one: computed whole. */
		uint32_t s =
			lb_pkt6_pseudo_sum(src, dst, l4_len, LB_IPPROTO_UDP);
		uint16_t ck;

		wr16_raw(l4, sport);
		wr16_raw(l4 + 2, dport);
		ck = (uint16_t)~lb_csum_fold(lb_csum_partial(l4, l4_len, s));
		wr16_raw(l4 + UDP_CSUM_OFF, ck == 0 ? 0xffff : ck);
	} else {
		uint16_t old =
			lb_csum_tuple4(rd32_raw(ip + 12), rd32_raw(ip + 16),
				       rd16_raw(l4), rd16_raw(l4 + 2));

		l4_csum_set(l4, pkt->proto, old,
			    lb_csum_tuple6(src, dst, sport, dport));
		wr16_raw(l4, sport);
		wr16_raw(l4 + 2, dport);
	}

	memmove(f - grow, f, pkt->l3_off);
	f -= grow;
	l3 = pkt->l3_off;
	wr16(f + l3 - 2, LB_ETHER_TYPE_IPV6);
	ip = f + l3;
	ip[0] = (uint8_t)(0x60 | tos >> 4);
	ip[1] = (uint8_t)(tos << 4);
	ip[2] = 0;
	ip[3] = 0;
	wr16(ip + 4, (uint16_t)l4_len);
	ip[6] = pkt->proto;
	ip[7] = ttl;
	memcpy(ip + 8, src, 16);
	memcpy(ip + 24, dst, 16);

	memset(out, 0, sizeof(*out));
	out->l3_off = (uint16_t)l3;
	out->l4_off = (uint16_t)(l3 + LB_IPV6_HDR_LEN);
	out->payload_off =
		(uint16_t)(out->l4_off + (pkt->payload_off - pkt->l4_off));
	out->payload_len = pkt->payload_len;
	out->ip_plen = (uint16_t)l4_len;
	out->vlan_tci = pkt->vlan_tci;
	out->has_vlan = pkt->has_vlan;
	out->proto = pkt->proto;
	out->tcp_flags = pkt->tcp_flags;
	out->hop_limit = ttl;
	memcpy(out->src, src, 16);
	memcpy(out->dst, dst, 16);
	out->sport = sport;
	out->dport = dport;
	return (int)((int32_t)off - grow);
}

int
lb_nat46_mss_adjust(uint8_t *frame, const struct lb_pkt6 *pkt)
{
	uint32_t i, end;
	uint8_t *th, *o;

	if (frame == NULL || pkt == NULL || pkt6_end(pkt) == 0)
		return -EINVAL;
	if (pkt->proto != LB_IPPROTO_TCP || !(pkt->tcp_flags & LB_TCP_SYN))
		return 0;
	if (pkt->payload_off < pkt->l4_off + TCP_MIN_HDR ||
	    pkt->payload_off > pkt6_end(pkt))
		return -EINVAL;
	th = frame + pkt->l4_off;
	o = th + TCP_MIN_HDR;
	end = pkt->payload_off - pkt->l4_off - TCP_MIN_HDR;
	/* The walk of the receiver: stop at the end, or at a length that
	 * cannot be. */
	for (i = 0; i < end;) {
		uint16_t mss, new, ock;

		if (o[i] == 0)
			break;
		if (o[i] == 1) {
			i++;
			continue;
		}
		if (end - i < 2 || o[i + 1] < 2 || o[i + 1] > end - i)
			break;
		if (o[i] != 2 || o[i + 1] != 4) {
			i += o[i + 1];
			continue;
		}
		mss = rd16(o + i + 2);
		new = mss > LB_NAT46_MSS_FLOOR + 20u ? (uint16_t)(mss - 20u)
		      : mss > LB_NAT46_MSS_FLOOR     ? LB_NAT46_MSS_FLOOR
						     : mss;
		if (new != mss) {
			uint16_t nw;

			ock = rd16_raw(o + i + 2);
			wr16(o + i + 2, new);
			nw = rd16_raw(o + i + 2);
			/* At an odd offset (after one NOP) the value's bytes
			 * sit in two words: the sum sees it byte-swapped. */
			if (i & 1) {
				ock = (uint16_t)(ock >> 8 | ock << 8);
				nw = (uint16_t)(nw >> 8 | nw << 8);
			}
			wr16_raw(th + TCP_CSUM_OFF,
				 lb_csum_update16(rd16_raw(th + TCP_CSUM_OFF),
						  ock, nw));
		}
		return new;
	}
	return 0;
}
