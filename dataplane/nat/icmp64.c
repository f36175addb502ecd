/* SPDX-License-Identifier: BSD-3-Clause */
/* ICMP errors across fnat64: see dataplane/nat/icmp64.h. */
#include <errno.h>
#include <string.h>

#include "bytes.h"
#include "csum.h"
#include "icmp64.h"

#define IPV4_HDR_LEN 20
#define ICMP_HDR_LEN 8
#define TCP_CSUM_OFF 16
#define UDP_CSUM_OFF 6
#define IP_DF 0x4000

/* ICMP for IPv4 codes of destination unreachable (RFC 792, 1812). */
#define UNREACH_NET 0
#define UNREACH_HOST 1
#define UNREACH_PROTO 2
#define UNREACH_PORT 3
#define UNREACH_SRC_ROUTE 5
#define UNREACH_NET_PROHIB 9
#define UNREACH_HOST_PROHIB 10
#define UNREACH_ADMIN 13
#define UNREACH_PREC_CUTOFF 15

/* ICMPv6 codes of destination unreachable (RFC 4443 3.1). */
#define UNREACH6_NOROUTE 0
#define UNREACH6_ADMIN 1
#define UNREACH6_SCOPE 2
#define UNREACH6_ADDR 3
#define UNREACH6_PORT 4

/* RFC 7915 5.2: ICMPv6 type and code to ICMP's; -1 if none. */
static int
map64(uint8_t type, uint8_t code, uint8_t *t4, uint8_t *c4)
{
	switch (type) {
	case LB_ICMP6_DEST_UNREACH:
		*t4 = LB_ICMP_DEST_UNREACH;
		switch (code) {
		case UNREACH6_NOROUTE:
		case UNREACH6_SCOPE:
		case UNREACH6_ADDR:
			*c4 = UNREACH_HOST;
			return 0;
		case UNREACH6_ADMIN:
			*c4 = UNREACH_HOST_PROHIB;
			return 0;
		case UNREACH6_PORT:
			*c4 = UNREACH_PORT;
			return 0;
		default:
			return -1;
		}
	case LB_ICMP6_PKT_TOO_BIG:
		*t4 = LB_ICMP_DEST_UNREACH;
		*c4 = LB_ICMP_FRAG_NEEDED;
		return 0;
	case LB_ICMP6_TIME_EXCEEDED:
		*t4 = LB_ICMP_TIME_EXCEEDED;
		*c4 = code;
		return code <= 1 ? 0 : -1;
	default:
		return -1;
	}
}

/* RFC 7915 4.2: ICMP type and code to ICMPv6's; -1 if none. */
static int
map46(uint8_t type, uint8_t code, uint8_t *t6, uint8_t *c6)
{
	if (type == LB_ICMP_TIME_EXCEEDED) {
		*t6 = LB_ICMP6_TIME_EXCEEDED;
		*c6 = code;
		return code <= 1 ? 0 : -1;
	}
	if (type != LB_ICMP_DEST_UNREACH)
		return -1;
	*t6 = LB_ICMP6_DEST_UNREACH;
	switch (code) {
	case UNREACH_PROTO: /* a parameter problem in IPv6: not ours */
		return -1;
	case UNREACH_PORT:
		*c6 = UNREACH6_PORT;
		return 0;
	case LB_ICMP_FRAG_NEEDED:
		*t6 = LB_ICMP6_PKT_TOO_BIG;
		*c6 = 0;
		return 0;
	case UNREACH_NET_PROHIB:
	case UNREACH_HOST_PROHIB:
	case UNREACH_ADMIN:
	case UNREACH_PREC_CUTOFF:
		*c6 = UNREACH6_ADMIN;
		return 0;
	case 14: /* host precedence violation */
		return -1;
	default:
		/* Net and host unreachable, source route failed, unknown
		 * or isolated networks and hosts, type of service. */
		*c6 = UNREACH6_NOROUTE;
		return code <= 12 ? 0 : -1;
	}
}

/* Outer addresses the parsers take, so that the result parses. */
static int
src4_ok(uint32_t be)
{
	const uint8_t *b = (const uint8_t *)&be;

	return b[0] != 0 && b[0] != 127 && b[0] < 224;
}

static int
addr6_ok(const uint8_t *a, int as_src)
{
	static const uint8_t zero[16];
	static const uint8_t mapped[12] = {[10] = 0xff, [11] = 0xff};

	if (memcmp(a, zero, 15) == 0 && a[15] <= 1)
		return 0; /* unspecified or loopback */
	return !as_src || (a[0] != 0xff && memcmp(a, mapped, 12) != 0);
}

/* The quoted L4 checksum's update for the tuple's new sum. */
static void
quote_l4_csum(uint8_t *l4, uint8_t proto, uint16_t old, uint16_t new)
{
	uint32_t co = proto == LB_IPPROTO_TCP ? TCP_CSUM_OFF : UDP_CSUM_OFF;
	uint16_t c = rd16_raw(l4 + co);

	/* A quoted UDP checksum of 0 is "none" over IPv4; left so. */
	if (proto == LB_IPPROTO_UDP && c == 0)
		return;
	c = lb_csum_update16(c, old, new);
	wr16_raw(l4 + co, proto == LB_IPPROTO_UDP && c == 0 ? 0xffff : c);
}

static void
ipv4_hdr(uint8_t *ip, uint8_t tos, uint32_t tot, uint16_t frag, uint8_t ttl,
	 uint8_t proto, uint32_t src, uint32_t dst)
{
	memset(ip, 0, IPV4_HDR_LEN);
	ip[0] = 0x45;
	ip[1] = tos;
	wr16(ip + 2, (uint16_t)tot);
	wr16(ip + 6, frag);
	ip[8] = ttl;
	ip[9] = proto;
	wr32_raw(ip + 12, src);
	wr32_raw(ip + 16, dst);
	wr16_raw(ip + 10, lb_csum(ip, IPV4_HDR_LEN));
}

static void
ipv6_hdr(uint8_t *ip, uint8_t tc, uint32_t plen, uint8_t nh, uint8_t hlim,
	 const uint8_t *src, const uint8_t *dst)
{
	ip[0] = (uint8_t)(0x60 | tc >> 4);
	ip[1] = (uint8_t)(tc << 4);
	ip[2] = 0;
	ip[3] = 0;
	wr16(ip + 4, (uint16_t)plen);
	ip[6] = nh;
	ip[7] = hlim;
	memcpy(ip + 8, src, 16);
	memcpy(ip + 24, dst, 16);
}

int
lb_icmp_xlate64(uint8_t *buf, uint32_t off, uint32_t len,
		const struct lb_pkt6 *pkt, uint32_t outer_src,
		uint32_t outer_dst, const struct lb_nat_tuple *inner,
		struct lb_pkt *out)
{
	struct lb_icmp6_err e;
	uint8_t *f, *ip, *q, *m, *l4;
	uint32_t l3, l4q, qplen, new_l3, shift, mtu = 0;
	uint8_t t4, c4, tos, hlim, qtos, qhlim;
	int rc;

	if (buf == NULL || inner == NULL || out == NULL || !src4_ok(outer_src))
		return -EINVAL;
	f = buf + off;
	rc = lb_icmp6_err_parse(f, len, pkt, &e);
	if (rc != 0)
		return rc;
	if (map64(e.type, e.code, &t4, &c4) != 0)
		return -EPROTONOSUPPORT;
	l3 = pkt->l3_off;
	ip = f + l3;
	q = f + e.inner_l3_off;
	l4 = f + e.inner_l4_off;
	l4q = e.inner_l3_off + (uint32_t)e.quote_len - e.inner_l4_off;
	tos = (uint8_t)((ip[0] & 0xf) << 4 | ip[1] >> 4);
	hlim = ip[7];
	qtos = (uint8_t)((q[0] & 0xf) << 4 | q[1] >> 4);
	qhlim = q[7];
	/* The quoted packet's length as IPv4 would have carried it. */
	qplen = LB_IPV6_HDR_LEN + rd16(q + 4) -
		(e.inner_l4_off - e.inner_l3_off) + IPV4_HDR_LEN;
	if (qplen > UINT16_MAX)
		qplen = UINT16_MAX;
	if (e.type == LB_ICMP6_PKT_TOO_BIG && e.mtu > IPV4_HDR_LEN)
		mtu = e.mtu - IPV4_HDR_LEN > UINT16_MAX ? UINT16_MAX
							: e.mtu - IPV4_HDR_LEN;

	if (e.l4csum)
		quote_l4_csum(l4, e.proto,
			      lb_csum_tuple6(e.inner.src, e.inner.dst,
					     e.inner.sport, e.inner.dport),
			      lb_csum_tuple4(inner->src, inner->dst,
					     inner->sport, inner->dport));
	wr16_raw(l4, inner->sport);
	wr16_raw(l4 + 2, inner->dport);

	/* Everything needed is read: the new headers end where the quoted
	 * L4 header starts, written back to front, the L2 header before. */
	new_l3 = e.inner_l4_off - IPV4_HDR_LEN - ICMP_HDR_LEN - IPV4_HDR_LEN;
	shift = new_l3 - l3;
	ipv4_hdr(l4 - IPV4_HDR_LEN, qtos, qplen, IP_DF, qhlim, e.proto,
		 inner->src, inner->dst);
	m = l4 - IPV4_HDR_LEN - ICMP_HDR_LEN;
	memset(m, 0, ICMP_HDR_LEN);
	m[0] = t4;
	m[1] = c4;
	if (t4 == LB_ICMP_DEST_UNREACH && c4 == LB_ICMP_FRAG_NEEDED)
		wr16(m + 6, (uint16_t)mtu);
	wr16_raw(m + 2, lb_csum(m, ICMP_HDR_LEN + IPV4_HDR_LEN + l4q));
	ipv4_hdr(f + new_l3, tos,
		 IPV4_HDR_LEN + ICMP_HDR_LEN + IPV4_HDR_LEN + l4q, 0, hlim,
		 LB_IPPROTO_ICMP, outer_src, outer_dst);
	memmove(f + shift, f, l3);
	wr16(f + new_l3 - 2, LB_ETHER_TYPE_IPV4);
	f += shift;
	/* It parses: its parts were checked, its source too. */
	(void)lb_pkt_parse(f, l3 + 2 * IPV4_HDR_LEN + ICMP_HDR_LEN + l4q, out);
	return (int)(off + shift);
}

int
lb_icmp_xlate46(uint8_t *buf, uint32_t off, uint32_t len,
		const struct lb_pkt *pkt, const uint8_t *outer_src,
		const uint8_t *outer_dst, const struct lb_icmp6_tuple *inner,
		struct lb_pkt6 *out)
{
	struct lb_nat_icmp ie;
	uint8_t *f, *ip, *q, *m, *l4, *nip;
	uint32_t l3, l4q, ihl_o, ihl_q, qplen, mtu = 0, mlen, s;
	int32_t grow;
	uint8_t t6, c6, tos, ttl, qtos, qttl;
	int rc;

	if (buf == NULL || outer_src == NULL || outer_dst == NULL ||
	    inner == NULL || out == NULL || !addr6_ok(outer_src, 1) ||
	    !addr6_ok(outer_dst, 0))
		return -EINVAL;
	f = buf + off;
	rc = lb_nat_icmp_parse(f, len, pkt, &ie);
	if (rc != 0)
		return rc;
	if (map46(ie.type, ie.code, &t6, &c6) != 0)
		return -EPROTONOSUPPORT;
	l3 = pkt->l3_off;
	ihl_o = pkt->l4_off - l3;
	ihl_q = ie.inner_l4_off - ie.inner_l3_off;
	grow = (int32_t)(2 * LB_IPV6_HDR_LEN) - (int32_t)(ihl_o + ihl_q);
	if (grow > 0 && off < (uint32_t)grow)
		return -ENOSPC;
	ip = f + l3;
	q = f + ie.inner_l3_off;
	l4 = f + ie.inner_l4_off;
	l4q = ie.inner_l3_off + (uint32_t)ie.quote_len - ie.inner_l4_off;
	/* As much of the quote as fits in IPv6's minimum MTU. */
	if (2 * LB_IPV6_HDR_LEN + ICMP_HDR_LEN + l4q > LB_IPV6_MIN_MTU)
		l4q = LB_IPV6_MIN_MTU - 2 * LB_IPV6_HDR_LEN - ICMP_HDR_LEN;
	tos = ip[1];
	ttl = ip[8];
	qtos = q[1];
	qttl = q[8];
	qplen = rd16(q + 2) - ihl_q;
	if (t6 == LB_ICMP6_PKT_TOO_BIG) {
		mtu = (uint32_t)ie.mtu + IPV4_HDR_LEN;
		if (mtu < LB_IPV6_MIN_MTU)
			mtu = LB_IPV6_MIN_MTU;
	}

	if (ie.l4csum)
		quote_l4_csum(l4, ie.proto,
			      lb_csum_tuple4(ie.inner.src, ie.inner.dst,
					     ie.inner.sport, ie.inner.dport),
			      lb_csum_tuple6(inner->src, inner->dst,
					     inner->sport, inner->dport));
	wr16_raw(l4, inner->sport);
	wr16_raw(l4 + 2, inner->dport);

	/* The L2 header first: the new outer header may start where it
	 * was. It never reaches the ICMP header, so nothing still needed is
	 * overwritten; then the headers back to front. */
	memmove(f - grow, f, l3);
	wr16(f - grow + l3 - 2, LB_ETHER_TYPE_IPV6);
	nip = l4 - LB_IPV6_HDR_LEN;
	ipv6_hdr(nip, qtos, qplen, ie.proto, qttl, inner->src, inner->dst);
	m = nip - ICMP_HDR_LEN;
	memset(m, 0, ICMP_HDR_LEN);
	m[0] = t6;
	m[1] = c6;
	if (t6 == LB_ICMP6_PKT_TOO_BIG)
		wr32(m + 4, mtu);
	mlen = ICMP_HDR_LEN + LB_IPV6_HDR_LEN + l4q;
	ipv6_hdr(m - LB_IPV6_HDR_LEN, tos, mlen, LB_IPPROTO_ICMPV6, ttl,
		 outer_src, outer_dst);
	s = lb_pkt6_pseudo_sum(outer_src, outer_dst, mlen, LB_IPPROTO_ICMPV6);
	wr16_raw(m + 2, (uint16_t)~lb_csum_fold(lb_csum_partial(m, mlen, s)));
	f -= grow;
	(void)lb_pkt6_parse(f, l3 + LB_IPV6_HDR_LEN + mlen, out);
	return (int)((int32_t)off - grow);
}
