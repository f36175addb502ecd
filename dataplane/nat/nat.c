/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Full-NAT rewrites, ICMP error translation and in-place answers: see
 * dataplane/nat/nat.h. Values read with rd*_raw() stay in network order and
 * feed the checksum helpers of dataplane/parse/csum.h unchanged; rd16()/rd32()
 * convert to host order where the code does arithmetic on a field.
 */
#include <errno.h>
#include <string.h>

#include "bytes.h"
#include "csum.h"
#include "nat.h"

#define ETHER_HDR_LEN 14
#define VLAN_HDR_LEN 4
#define ARP_LEN 28
#define IPV4_MIN_HDR 20
#define TCP_MIN_HDR 20
#define UDP_HDR_LEN 8
#define ICMP_HDR_LEN 8
#define IP_OFFMASK 0x1fff
#define IP_DF 0x4000
#define TCP_CSUM_OFF 16
#define UDP_CSUM_OFF 6

static int
mac_unicast(const uint8_t *mac)
{
	static const uint8_t zero[LB_ETHER_ADDR_LEN];

	return !(mac[0] & 1) && memcmp(mac, zero, LB_ETHER_ADDR_LEN) != 0;
}

/* A usable target for ARP: not 0.0.0.0, multicast, class E or broadcast. */
static int
ip_unicast(uint32_t be_ip)
{
	const uint8_t *b = (const uint8_t *)&be_ip;

	return b[0] != 0 && b[0] < 224;
}

static void
swap_macs(uint8_t *frame)
{
	uint8_t t[LB_ETHER_ADDR_LEN];

	memcpy(t, frame, LB_ETHER_ADDR_LEN);
	memcpy(frame, frame + LB_ETHER_ADDR_LEN, LB_ETHER_ADDR_LEN);
	memcpy(frame + LB_ETHER_ADDR_LEN, t, LB_ETHER_ADDR_LEN);
}

/*
 * The offsets of @pkt are those of a frame lb_pkt_parse() accepted as
 * IPv4 with a whole L4 header. Cheap enough to check on every call, and it
 * keeps a stale or zeroed struct from steering writes anywhere.
 */
static int
pkt_ipv4_ok(const struct lb_pkt *pkt)
{
	uint32_t end = (uint32_t)pkt->l3_off + pkt->ip_len;
	uint32_t l4min;

	switch (pkt->proto) {
	case LB_IPPROTO_TCP:
		l4min = TCP_MIN_HDR;
		break;
	case LB_IPPROTO_UDP:
		l4min = UDP_HDR_LEN;
		break;
	case LB_IPPROTO_ICMP:
		l4min = ICMP_HDR_LEN;
		break;
	default:
		return 0;
	}
	return pkt->l3_off >= ETHER_HDR_LEN &&
	       pkt->l4_off >= pkt->l3_off + IPV4_MIN_HDR &&
	       (uint32_t)pkt->l4_off + l4min <= end;
}

/*
 * Incremental update of a TCP or UDP checksum for new addresses (through
 * the pseudo-header) and ports. A zero UDP checksum is "none" and stays
 * zero; a computed zero is sent as 0xffff (RFC 768).
 */
static uint16_t
l4_csum_update(uint16_t ck, uint8_t proto, const struct lb_nat_tuple *o,
	       const struct lb_nat_tuple *n)
{
	if (proto == LB_IPPROTO_UDP && ck == 0)
		return 0;
	ck = lb_csum_update32(ck, o->src, n->src);
	ck = lb_csum_update32(ck, o->dst, n->dst);
	ck = lb_csum_update16(ck, o->sport, n->sport);
	ck = lb_csum_update16(ck, o->dport, n->dport);
	if (proto == LB_IPPROTO_UDP && ck == 0)
		ck = 0xffff;
	return ck;
}

static void
read_tuple(const uint8_t *ip, const uint8_t *l4, struct lb_nat_tuple *t)
{
	t->src = rd32_raw(ip + 12);
	t->dst = rd32_raw(ip + 16);
	t->sport = rd16_raw(l4);
	t->dport = rd16_raw(l4 + 2);
}

/* Writes the tuple's addresses into @ip and returns its new checksum. */
static uint16_t
ip_set_addrs(uint8_t *ip, uint32_t src, uint32_t dst)
{
	uint16_t ck = rd16_raw(ip + 10);

	ck = lb_csum_update32(ck, rd32_raw(ip + 12), src);
	ck = lb_csum_update32(ck, rd32_raw(ip + 16), dst);
	wr32_raw(ip + 12, src);
	wr32_raw(ip + 16, dst);
	wr16_raw(ip + 10, ck);
	return ck;
}

int
lb_nat_rewrite(uint8_t *frame, struct lb_pkt *pkt, uint32_t new_src,
	       uint16_t new_sport, uint32_t new_dst, uint16_t new_dport)
{
	const struct lb_nat_tuple n = {new_src, new_dst, new_sport, new_dport};
	struct lb_nat_tuple o;
	uint8_t *ip, *l4;
	size_t coff;

	if (frame == NULL || pkt == NULL || !pkt_ipv4_ok(pkt))
		return -EINVAL;
	if (pkt->proto == LB_IPPROTO_ICMP)
		return -EPROTONOSUPPORT;
	ip = frame + pkt->l3_off;
	l4 = frame + pkt->l4_off;
	read_tuple(ip, l4, &o);
	coff = pkt->proto == LB_IPPROTO_TCP ? TCP_CSUM_OFF : UDP_CSUM_OFF;
	wr16_raw(l4 + coff,
		 l4_csum_update(rd16_raw(l4 + coff), pkt->proto, &o, &n));
	wr16_raw(l4, new_sport);
	wr16_raw(l4 + 2, new_dport);
	ip_set_addrs(ip, new_src, new_dst);
	pkt->src = new_src;
	pkt->dst = new_dst;
	pkt->sport = new_sport;
	pkt->dport = new_dport;
	return 0;
}

int
lb_nat_ttl_dec(uint8_t *frame, struct lb_pkt *pkt)
{
	uint8_t *ip;
	uint16_t oldw;

	if (frame == NULL || pkt == NULL || !pkt_ipv4_ok(pkt))
		return -EINVAL;
	ip = frame + pkt->l3_off;
	if (ip[8] <= 1)
		return -ETIMEDOUT;
	oldw = rd16_raw(ip + 8); /* TTL and protocol share a word */
	ip[8]--;
	wr16_raw(ip + 10,
		 lb_csum_update16(rd16_raw(ip + 10), oldw, rd16_raw(ip + 8)));
	pkt->ttl = ip[8];
	return 0;
}

int
lb_nat_set_macs(uint8_t *frame, const uint8_t *src_mac, const uint8_t *dst_mac)
{
	if (frame == NULL || src_mac == NULL || dst_mac == NULL)
		return -EINVAL;
	memcpy(frame, dst_mac, LB_ETHER_ADDR_LEN);
	memcpy(frame + LB_ETHER_ADDR_LEN, src_mac, LB_ETHER_ADDR_LEN);
	return 0;
}

/* End of the IPv4 datagram of a checked @pkt within @len bytes, or 0. */
static uint32_t
ip_end(const struct lb_pkt *pkt, uint32_t len)
{
	uint32_t end = (uint32_t)pkt->l3_off + pkt->ip_len;

	return end <= len ? end : 0;
}

int
lb_nat_icmp_parse(const uint8_t *frame, uint32_t len, const struct lb_pkt *pkt,
		  struct lb_nat_icmp *out)
{
	const uint8_t *icmp, *q;
	uint32_t end, icmp_len, qlen, ihl, itot;
	uint8_t proto;

	if (frame == NULL || pkt == NULL || out == NULL ||
	    pkt->proto != LB_IPPROTO_ICMP || !pkt_ipv4_ok(pkt))
		return -EINVAL;
	end = ip_end(pkt, len);
	if (end == 0)
		return -EINVAL;
	icmp = frame + pkt->l4_off;
	icmp_len = end - pkt->l4_off;
	if (icmp[0] != LB_ICMP_DEST_UNREACH && icmp[0] != LB_ICMP_TIME_EXCEEDED)
		return -EPROTONOSUPPORT;
	if (lb_csum_fold(lb_csum_partial(icmp, icmp_len, 0)) != 0xffff)
		return -EINVAL;

	/* The quote: an IPv4 header, whole, then the start of its L4. */
	q = icmp + ICMP_HDR_LEN;
	qlen = icmp_len - ICMP_HDR_LEN;
	if (qlen < IPV4_MIN_HDR || q[0] >> 4 != 4)
		return -EINVAL;
	ihl = (uint32_t)(q[0] & 0xf) * 4;
	if (ihl < IPV4_MIN_HDR || ihl > qlen)
		return -EINVAL;
	itot = rd16(q + 2);
	/* A later fragment carries no ports; ours are never fragments. */
	if (itot < ihl + 8 || (rd16(q + 6) & IP_OFFMASK) != 0)
		return -EINVAL;
	/* Bytes past the quoted datagram's own length are not part of it. */
	if (qlen > itot)
		qlen = itot;
	if (qlen < ihl + 8)
		return -EINVAL;
	proto = q[9];
	if (proto != LB_IPPROTO_TCP && proto != LB_IPPROTO_UDP)
		return -EPROTONOSUPPORT;

	memset(out, 0, sizeof(*out));
	out->type = icmp[0];
	out->code = icmp[1];
	out->proto = proto;
	out->l4csum = proto == LB_IPPROTO_UDP || qlen >= ihl + TCP_CSUM_OFF + 2;
	if (icmp[0] == LB_ICMP_DEST_UNREACH && icmp[1] == LB_ICMP_FRAG_NEEDED)
		out->mtu = rd16(icmp + 6);
	out->inner_l3_off = (uint16_t)(pkt->l4_off + ICMP_HDR_LEN);
	out->inner_l4_off = (uint16_t)(out->inner_l3_off + ihl);
	out->quote_len = (uint16_t)qlen;
	read_tuple(q, q + ihl, &out->inner);
	return 0;
}

int
lb_nat_icmp_rewrite(uint8_t *frame, uint32_t len, struct lb_pkt *pkt,
		    uint32_t outer_src, uint32_t outer_dst,
		    const struct lb_nat_tuple *inner)
{
	struct lb_nat_icmp ie;
	uint8_t *icmp, *q, *l4;
	uint16_t ick, qck_old, qck;
	int rc;

	if (inner == NULL)
		return -EINVAL;
	rc = lb_nat_icmp_parse(frame, len, pkt, &ie);
	if (rc != 0)
		return rc;
	icmp = frame + pkt->l4_off;
	q = frame + ie.inner_l3_off;
	l4 = frame + ie.inner_l4_off;

	/*
	 * The ICMP checksum covers the quote, so every quoted word that
	 * changes enters it too. All of them sit at even offsets from the
	 * ICMP header (8 + a multiple of 4 + an even field offset), so
	 * 16-bit updates apply as they are.
	 */
	ick = rd16_raw(icmp + 2);
	qck_old = rd16_raw(q + 10);
	qck = ip_set_addrs(q, inner->src, inner->dst);
	ick = lb_csum_update32(ick, ie.inner.src, inner->src);
	ick = lb_csum_update32(ick, ie.inner.dst, inner->dst);
	ick = lb_csum_update16(ick, qck_old, qck);
	ick = lb_csum_update16(ick, ie.inner.sport, inner->sport);
	ick = lb_csum_update16(ick, ie.inner.dport, inner->dport);
	wr16_raw(l4, inner->sport);
	wr16_raw(l4 + 2, inner->dport);
	if (ie.l4csum) {
		size_t coff = ie.proto == LB_IPPROTO_TCP ? TCP_CSUM_OFF
							 : UDP_CSUM_OFF;
		uint16_t c_old = rd16_raw(l4 + coff);
		uint16_t c = l4_csum_update(c_old, ie.proto, &ie.inner, inner);

		ick = lb_csum_update16(ick, c_old, c);
		wr16_raw(l4 + coff, c);
	}
	wr16_raw(icmp + 2, ick);

	/* The outer addresses are not in the ICMP checksum. */
	ip_set_addrs(frame + pkt->l3_off, outer_src, outer_dst);
	pkt->src = outer_src;
	pkt->dst = outer_dst;
	return 0;
}

int
lb_nat_icmp_set_mtu(uint8_t *frame, uint32_t len, const struct lb_pkt *pkt,
		    uint16_t mtu)
{
	struct lb_nat_icmp ie;
	uint8_t *icmp;
	uint16_t old, new;
	int rc;

	rc = lb_nat_icmp_parse(frame, len, pkt, &ie);
	if (rc != 0)
		return rc;
	if (ie.type != LB_ICMP_DEST_UNREACH || ie.code != LB_ICMP_FRAG_NEEDED)
		return -EINVAL;
	icmp = frame + pkt->l4_off;
	old = rd16_raw(icmp + 6);
	wr16(icmp + 6, mtu);
	new = rd16_raw(icmp + 6);
	wr16_raw(icmp + 2, lb_csum_update16(rd16_raw(icmp + 2), old, new));
	return 0;
}

/* A whole Ethernet/IPv4 ARP body sits at the frame's l3_off. */
static int
arp_ok(const uint8_t *frame, uint32_t len, const struct lb_pkt *pkt)
{
	const uint8_t *a;

	if (frame == NULL || pkt == NULL || pkt->l3_off < ETHER_HDR_LEN ||
	    (uint32_t)pkt->l3_off + ARP_LEN > len ||
	    rd16(frame + pkt->l3_off - 2) != LB_ETHER_TYPE_ARP)
		return 0;
	a = frame + pkt->l3_off;
	return rd16(a) == 1 && rd16(a + 2) == LB_ETHER_TYPE_IPV4 &&
	       a[4] == LB_ETHER_ADDR_LEN && a[5] == 4;
}

int
lb_nat_arp_parse(const uint8_t *frame, uint32_t len, const struct lb_pkt *pkt,
		 struct lb_nat_arp *out)
{
	const uint8_t *a;

	if (!arp_ok(frame, len, pkt) || out == NULL)
		return -EINVAL;
	a = frame + pkt->l3_off;
	out->op = rd16(a + 6);
	memcpy(out->sha, a + 8, LB_ETHER_ADDR_LEN);
	out->spa = rd32_raw(a + 14);
	memcpy(out->tha, a + 18, LB_ETHER_ADDR_LEN);
	out->tpa = rd32_raw(a + 24);
	return 0;
}

int
lb_nat_arp_reply(uint8_t *frame, uint32_t len, const struct lb_pkt *pkt,
		 const uint8_t *our_mac)
{
	uint8_t sha[LB_ETHER_ADDR_LEN];
	uint32_t spa, tpa;
	uint8_t *a;

	if (!arp_ok(frame, len, pkt) || our_mac == NULL ||
	    !mac_unicast(our_mac))
		return -EINVAL;
	a = frame + pkt->l3_off;
	if (rd16(a + 6) != LB_ARP_REQUEST)
		return -EINVAL;
	memcpy(sha, a + 8, LB_ETHER_ADDR_LEN);
	spa = rd32_raw(a + 14);
	tpa = rd32_raw(a + 24);
	lb_nat_set_macs(frame, our_mac, sha);
	wr16(a + 6, LB_ARP_REPLY);
	memcpy(a + 8, our_mac, LB_ETHER_ADDR_LEN);
	wr32_raw(a + 14, tpa);
	memcpy(a + 18, sha, LB_ETHER_ADDR_LEN);
	wr32_raw(a + 24, spa);
	return 0;
}

int
lb_nat_arp_request(uint8_t *buf, uint32_t cap, const struct lb_nat_link *link,
		   uint32_t src_ip, uint32_t target_ip, const uint8_t *dst_mac)
{
	static const uint8_t bcast[LB_ETHER_ADDR_LEN] = {0xff, 0xff, 0xff,
							 0xff, 0xff, 0xff};
	uint32_t off = ETHER_HDR_LEN, need;
	uint8_t *a;

	if (buf == NULL || link == NULL || !mac_unicast(link->mac) ||
	    !ip_unicast(target_ip) ||
	    (dst_mac != NULL && !mac_unicast(dst_mac)))
		return -EINVAL;
	if (link->has_vlan)
		off += VLAN_HDR_LEN;
	need = off + ARP_LEN;
	if (need < LB_NAT_FRAME_MIN)
		need = LB_NAT_FRAME_MIN;
	if (cap < need)
		return -ENOSPC;
	memset(buf, 0, need);
	lb_nat_set_macs(buf, link->mac, dst_mac != NULL ? dst_mac : bcast);
	if (link->has_vlan) {
		wr16(buf + 12, LB_ETHER_TYPE_VLAN);
		wr16(buf + 14, link->vlan_tci);
	}
	wr16(buf + off - 2, LB_ETHER_TYPE_ARP);
	a = buf + off;
	wr16(a, 1); /* Ethernet */
	wr16(a + 2, LB_ETHER_TYPE_IPV4);
	a[4] = LB_ETHER_ADDR_LEN;
	a[5] = 4;
	wr16(a + 6, LB_ARP_REQUEST);
	memcpy(a + 8, link->mac, LB_ETHER_ADDR_LEN);
	wr32_raw(a + 14, src_ip);
	/* Target hardware address stays zero: it is what is asked. */
	wr32_raw(a + 24, target_ip);
	return (int)need;
}

int
lb_nat_arp_announce(uint8_t *buf, uint32_t cap, const struct lb_nat_link *link,
		    uint32_t ip)
{
	return lb_nat_arp_request(buf, cap, link, ip, ip, NULL);
}

int
lb_nat_icmp_echo_reply(uint8_t *frame, uint32_t len, struct lb_pkt *pkt)
{
	uint8_t *ip, *icmp;
	uint32_t end, t;
	uint16_t oldw;

	if (frame == NULL || pkt == NULL || pkt->proto != LB_IPPROTO_ICMP ||
	    !pkt_ipv4_ok(pkt))
		return -EINVAL;
	end = ip_end(pkt, len);
	if (end == 0)
		return -EINVAL;
	ip = frame + pkt->l3_off;
	icmp = frame + pkt->l4_off;
	if (icmp[0] != LB_ICMP_ECHO_REQUEST || icmp[1] != 0 ||
	    lb_csum_fold(lb_csum_partial(icmp, end - pkt->l4_off, 0)) != 0xffff)
		return -EINVAL;

	swap_macs(frame);
	/* Swapping two words leaves their one's complement sum as it was,
	 * so the header checksum only follows the TTL. */
	t = rd32_raw(ip + 12);
	wr32_raw(ip + 12, rd32_raw(ip + 16));
	wr32_raw(ip + 16, t);
	oldw = rd16_raw(ip + 8);
	ip[8] = LB_NAT_TTL_DEFAULT;
	wr16_raw(ip + 10,
		 lb_csum_update16(rd16_raw(ip + 10), oldw, rd16_raw(ip + 8)));
	oldw = rd16_raw(icmp);
	icmp[0] = LB_ICMP_ECHO_REPLY;
	wr16_raw(icmp + 2,
		 lb_csum_update16(rd16_raw(icmp + 2), oldw, rd16_raw(icmp)));

	pkt->src = rd32_raw(ip + 12);
	pkt->dst = rd32_raw(ip + 16);
	pkt->ttl = LB_NAT_TTL_DEFAULT;
	pkt->dport = rd16_raw(icmp);
	return 0;
}

/* A 20-byte IPv4 header and a TCP header of 20 bytes and the @p optlen
 * bytes of options at @p opt, without data, at @p ip, window @p win, both
 * checksums computed; addresses and ports in network order, @p seq,
 * @p ack and @p win in host order. */
static void
write_tcp_hdrs_opt(uint8_t *ip, uint32_t src, uint32_t dst, uint16_t sport,
		   uint16_t dport, uint32_t seq, uint32_t ack, uint8_t flags,
		   uint16_t win, const uint8_t *opt, uint32_t optlen)
{
	uint32_t tl = TCP_MIN_HDR + optlen;
	uint8_t pseudo[12];
	uint8_t *th;
	uint32_t sum;

	memset(ip, 0, IPV4_MIN_HDR + TCP_MIN_HDR);
	ip[0] = 0x45;
	wr16(ip + 2, (uint16_t)(IPV4_MIN_HDR + tl));
	wr16(ip + 6, IP_DF);
	ip[8] = LB_NAT_TTL_DEFAULT;
	ip[9] = LB_IPPROTO_TCP;
	wr32_raw(ip + 12, src);
	wr32_raw(ip + 16, dst);
	wr16_raw(ip + 10, lb_csum(ip, IPV4_MIN_HDR));

	th = ip + IPV4_MIN_HDR;
	wr16_raw(th, sport);
	wr16_raw(th + 2, dport);
	wr32(th + 4, seq);
	wr32(th + 8, ack);
	th[12] = (uint8_t)(tl / 4 << 4);
	th[13] = flags;
	wr16(th + 14, win);
	if (optlen > 0)
		memmove(th + TCP_MIN_HDR, opt, optlen);
	memcpy(pseudo, ip + 12, 8);
	pseudo[8] = 0;
	pseudo[9] = LB_IPPROTO_TCP;
	wr16(pseudo + 10, (uint16_t)tl);
	sum = lb_csum_partial(pseudo, sizeof(pseudo), 0);
	wr16_raw(th + TCP_CSUM_OFF,
		 (uint16_t)~lb_csum_fold(lb_csum_partial(th, tl, sum)));
}

static void
write_tcp_hdrs(uint8_t *ip, uint32_t src, uint32_t dst, uint16_t sport,
	       uint16_t dport, uint32_t seq, uint32_t ack, uint8_t flags)
{
	write_tcp_hdrs_opt(ip, src, dst, sport, dport, seq, ack, flags, 0,
			   NULL, 0);
}

int
lb_nat_tcp_seg(uint8_t *frame, uint32_t cap, struct lb_pkt *pkt, bool reply,
	       const struct lb_nat_tcp_hdr *h)
{
	uint8_t opt[LB_NAT_TCP_OPT_MAX];
	struct lb_nat_tuple o;
	uint32_t len;

	if (frame == NULL || pkt == NULL || h == NULL || !pkt_ipv4_ok(pkt) ||
	    pkt->proto != LB_IPPROTO_TCP || h->optlen > LB_NAT_TCP_OPT_MAX ||
	    h->optlen % 4 != 0)
		return -EINVAL;
	len = (uint32_t)pkt->l3_off + IPV4_MIN_HDR + TCP_MIN_HDR + h->optlen;
	if (cap < len)
		return -ENOSPC;
	read_tuple(frame + pkt->l3_off, frame + pkt->l4_off, &o);
	/* The options may come from the segment itself, which the new
	 * headers overwrite. */
	memcpy(opt, h->opt, h->optlen);
	if (reply) {
		swap_macs(frame);
		o = (struct lb_nat_tuple){ o.dst, o.src, o.dport, o.sport };
	}
	write_tcp_hdrs_opt(frame + pkt->l3_off, o.src, o.dst, o.sport, o.dport,
			   h->seq, h->ack, h->flags, h->win, opt, h->optlen);
	pkt->l4_off = (uint16_t)(pkt->l3_off + IPV4_MIN_HDR);
	pkt->payload_off = (uint16_t)(pkt->l4_off + TCP_MIN_HDR + h->optlen);
	pkt->payload_len = 0;
	pkt->ip_len = (uint16_t)(IPV4_MIN_HDR + TCP_MIN_HDR + h->optlen);
	pkt->tcp_flags = h->flags;
	pkt->ttl = LB_NAT_TTL_DEFAULT;
	pkt->src = o.src;
	pkt->dst = o.dst;
	pkt->sport = o.sport;
	pkt->dport = o.dport;
	return (int)len;
}

int
lb_nat_tcp_build(uint8_t *buf, uint32_t cap, uint32_t src, uint32_t dst,
		 uint16_t sport, uint16_t dport, uint32_t seq, uint32_t ack,
		 uint8_t flags)
{
	uint32_t len = ETHER_HDR_LEN + IPV4_MIN_HDR + TCP_MIN_HDR;

	if (buf == NULL)
		return -EINVAL;
	if (cap < len)
		return -ENOSPC;
	memset(buf, 0, ETHER_HDR_LEN);
	wr16(buf + 12, 0x0800);
	write_tcp_hdrs(buf + ETHER_HDR_LEN, src, dst, sport, dport, seq, ack,
		       flags);
	return (int)len;
}

int
lb_nat_tcp_rst(uint8_t *frame, uint32_t len, struct lb_pkt *pkt)
{
	uint8_t *ip, *th;
	struct lb_nat_tuple o;
	uint32_t seq, ack;
	uint8_t flags;

	if (frame == NULL || pkt == NULL || !pkt_ipv4_ok(pkt))
		return -EINVAL;
	if (pkt->proto != LB_IPPROTO_TCP)
		return -EPROTONOSUPPORT;
	if (ip_end(pkt, len) == 0)
		return -EINVAL;
	ip = frame + pkt->l3_off;
	th = frame + pkt->l4_off;
	flags = lb_nat_rst_numbers(th, pkt->payload_len, &seq, &ack);
	if (flags == 0)
		return -EINVAL;
	read_tuple(ip, th, &o);

	swap_macs(frame);
	/* Everything needed was read: the TCP header moves over any IP
	 * options, so write front to back. */
	write_tcp_hdrs(ip, o.dst, o.src, o.dport, o.sport, seq, ack, flags);

	pkt->l4_off = (uint16_t)(pkt->l3_off + IPV4_MIN_HDR);
	pkt->payload_off = (uint16_t)(pkt->l4_off + TCP_MIN_HDR);
	pkt->payload_len = 0;
	pkt->ip_len = IPV4_MIN_HDR + TCP_MIN_HDR;
	pkt->tcp_flags = flags;
	pkt->ttl = LB_NAT_TTL_DEFAULT;
	pkt->src = o.dst;
	pkt->dst = o.src;
	pkt->sport = o.dport;
	pkt->dport = o.sport;
	return pkt->payload_off;
}
