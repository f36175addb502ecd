/* SPDX-License-Identifier: BSD-3-Clause */
/* ICMPv6 echo and errors: see dataplane/nat/icmp6.h. */
#include <errno.h>
#include <string.h>

#include "bytes.h"
#include "csum.h"
#include "icmp6.h"

#define ETHER_HDR_LEN 14
#define ETHER_ADDR_LEN 6
#define ICMP6_HDR_LEN 8
#define TCP_CSUM_OFF 16
#define UDP_CSUM_OFF 6
#define QUOTE_L4_MIN 8

/* End of the ICMPv6 message of @p pkt within @p len, or 0. */
static uint32_t
icmp6_end(const struct lb_pkt6 *pkt, uint32_t len)
{
	uint32_t end = (uint32_t)pkt->l3_off + LB_IPV6_HDR_LEN + pkt->ip_plen;

	if (pkt->proto != LB_IPPROTO_ICMPV6 || pkt->l3_off < ETHER_HDR_LEN ||
	    pkt->l4_off < pkt->l3_off + LB_IPV6_HDR_LEN || end > len ||
	    (uint32_t)pkt->l4_off + ICMP6_HDR_LEN > end)
		return 0;
	return end;
}

static int
csum_ok(const uint8_t *frame, const struct lb_pkt6 *pkt, uint32_t end)
{
	const uint8_t *ip = frame + pkt->l3_off;
	uint32_t n = end - pkt->l4_off;
	uint32_t s = lb_pkt6_pseudo_sum(ip + 8, ip + 24, n, LB_IPPROTO_ICMPV6);

	return lb_csum_fold(lb_csum_partial(frame + pkt->l4_off, n, s)) ==
	       0xffff;
}

int
lb_icmp6_echo_reply(uint8_t *frame, uint32_t len, struct lb_pkt6 *pkt)
{
	uint8_t t[16], mac[ETHER_ADDR_LEN];
	uint8_t *ip, *m;
	uint32_t end;
	uint16_t oldw;

	if (frame == NULL || pkt == NULL)
		return -EINVAL;
	end = icmp6_end(pkt, len);
	if (end == 0)
		return -EINVAL;
	ip = frame + pkt->l3_off;
	m = frame + pkt->l4_off;
	if (m[0] != LB_ICMP6_ECHO_REQUEST || m[1] != 0 ||
	    !csum_ok(frame, pkt, end))
		return -EINVAL;
	if (pkt->n_ext != 0)
		return -EPROTONOSUPPORT;

	memcpy(mac, frame, ETHER_ADDR_LEN);
	memcpy(frame, frame + ETHER_ADDR_LEN, ETHER_ADDR_LEN);
	memcpy(frame + ETHER_ADDR_LEN, mac, ETHER_ADDR_LEN);
	/* Swapped addresses sum as before: the pseudo-header's part of the
	 * checksum stays, only the type changes. */
	memcpy(t, ip + 8, 16);
	memcpy(ip + 8, ip + 24, 16);
	memcpy(ip + 24, t, 16);
	ip[7] = LB_ICMP6_HOP_LIMIT;
	oldw = rd16_raw(m);
	m[0] = LB_ICMP6_ECHO_REPLY;
	wr16_raw(m + 2, lb_csum_update16(rd16_raw(m + 2), oldw, rd16_raw(m)));

	memcpy(pkt->src, ip + 8, 16);
	memcpy(pkt->dst, ip + 24, 16);
	pkt->hop_limit = LB_ICMP6_HOP_LIMIT;
	pkt->dport = rd16_raw(m);
	return 0;
}

int
lb_icmp6_err_parse(const uint8_t *frame, uint32_t len,
		   const struct lb_pkt6 *pkt, struct lb_icmp6_err *out)
{
	const uint8_t *m, *q;
	uint32_t end, qlen, qplen;
	uint8_t proto;
	int l4;

	if (frame == NULL || pkt == NULL || out == NULL)
		return -EINVAL;
	end = icmp6_end(pkt, len);
	if (end == 0)
		return pkt->proto == LB_IPPROTO_ICMPV6 ? -EINVAL
						       : -EPROTONOSUPPORT;
	m = frame + pkt->l4_off;
	if (m[0] != LB_ICMP6_DEST_UNREACH && m[0] != LB_ICMP6_PKT_TOO_BIG &&
	    m[0] != LB_ICMP6_TIME_EXCEEDED)
		return -EPROTONOSUPPORT;
	if (!csum_ok(frame, pkt, end))
		return -EINVAL;

	q = m + ICMP6_HDR_LEN;
	qlen = end - pkt->l4_off - ICMP6_HDR_LEN;
	if (qlen < LB_IPV6_HDR_LEN || q[0] >> 4 != 6)
		return -EINVAL;
	/* Bytes past the quoted packet's own length are not part of it. */
	qplen = LB_IPV6_HDR_LEN + rd16(q + 4);
	if (qlen > qplen)
		qlen = qplen;
	l4 = lb_pkt6_skip_ext(q, qlen, &proto);
	if (l4 < 0 || (uint32_t)l4 + QUOTE_L4_MIN > qlen)
		return -EINVAL;
	if (proto != LB_IPPROTO_TCP && proto != LB_IPPROTO_UDP)
		return -EPROTONOSUPPORT;

	memset(out, 0, sizeof(*out));
	out->type = m[0];
	out->code = m[1];
	out->proto = proto;
	out->l4csum = proto == LB_IPPROTO_UDP ||
		      qlen >= (uint32_t)l4 + TCP_CSUM_OFF + 2;
	if (m[0] == LB_ICMP6_PKT_TOO_BIG)
		out->mtu = rd32(m + 4);
	out->inner_l3_off = (uint16_t)(pkt->l4_off + ICMP6_HDR_LEN);
	out->inner_l4_off = (uint16_t)(out->inner_l3_off + l4);
	out->quote_len = (uint16_t)qlen;
	memcpy(out->inner.src, q + 8, 16);
	memcpy(out->inner.dst, q + 24, 16);
	out->inner.sport = rd16_raw(q + l4);
	out->inner.dport = rd16_raw(q + l4 + 2);
	return 0;
}

static uint16_t
addr_pair_sum(const uint8_t *a, const uint8_t *b)
{
	return lb_csum_tuple6(a, b, 0, 0);
}

int
lb_icmp6_err_rewrite(uint8_t *frame, uint32_t len, struct lb_pkt6 *pkt,
		     const uint8_t *outer_src, const uint8_t *outer_dst,
		     const struct lb_icmp6_tuple *inner)
{
	struct lb_icmp6_err e;
	uint8_t *m, *ip, *q, *l4;
	uint16_t ick, old, new;
	int rc;

	if (outer_src == NULL || outer_dst == NULL || inner == NULL)
		return -EINVAL;
	rc = lb_icmp6_err_parse(frame, len, pkt, &e);
	if (rc != 0)
		return rc;
	ip = frame + pkt->l3_off;
	m = frame + pkt->l4_off;
	q = frame + e.inner_l3_off;
	l4 = frame + e.inner_l4_off;

	/*
	 * Every quoted field that changes lies at an even offset from the
	 * message's start (the quote at 8, extension headers in units of
	 * 8), so 16-bit updates apply to the ICMPv6 checksum as they are;
	 * the outer addresses enter through the pseudo-header.
	 */
	old = lb_csum_tuple6(e.inner.src, e.inner.dst, e.inner.sport,
			     e.inner.dport);
	new = lb_csum_tuple6(inner->src, inner->dst, inner->sport,
			     inner->dport);
	ick = lb_csum_update16(rd16_raw(m + 2), old, new);
	if (e.l4csum) {
		uint32_t co =
			e.proto == LB_IPPROTO_TCP ? TCP_CSUM_OFF : UDP_CSUM_OFF;
		uint16_t c_old = rd16_raw(l4 + co), c = c_old;

		/* A quoted UDP checksum of 0 would be one IPv6 never sent;
		 * it is left as it is. */
		if (!(e.proto == LB_IPPROTO_UDP && c_old == 0)) {
			c = lb_csum_update16(c_old, old, new);
			if (e.proto == LB_IPPROTO_UDP && c == 0)
				c = 0xffff;
		}
		ick = lb_csum_update16(ick, c_old, c);
		wr16_raw(l4 + co, c);
	}
	ick = lb_csum_update16(ick, addr_pair_sum(ip + 8, ip + 24),
			       addr_pair_sum(outer_src, outer_dst));
	wr16_raw(m + 2, ick);
	memcpy(q + 8, inner->src, 16);
	memcpy(q + 24, inner->dst, 16);
	wr16_raw(l4, inner->sport);
	wr16_raw(l4 + 2, inner->dport);
	memcpy(ip + 8, outer_src, 16);
	memcpy(ip + 24, outer_dst, 16);
	memcpy(pkt->src, outer_src, 16);
	memcpy(pkt->dst, outer_dst, 16);
	return 0;
}

int
lb_icmp6_set_mtu(uint8_t *frame, uint32_t len, const struct lb_pkt6 *pkt,
		 uint32_t mtu)
{
	struct lb_icmp6_err e;
	uint8_t *m;
	uint32_t old;
	int rc;

	rc = lb_icmp6_err_parse(frame, len, pkt, &e);
	if (rc != 0)
		return rc;
	if (e.type != LB_ICMP6_PKT_TOO_BIG)
		return -EINVAL;
	if (mtu < LB_IPV6_MIN_MTU)
		mtu = LB_IPV6_MIN_MTU;
	m = frame + pkt->l4_off;
	old = rd32_raw(m + 4);
	wr32(m + 4, mtu);
	wr16_raw(m + 2,
		 lb_csum_update32(rd16_raw(m + 2), old, rd32_raw(m + 4)));
	return 0;
}
