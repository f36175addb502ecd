/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Whole frames through the worker's parser and the classification steps
 * that read further into a frame (ARP body, ICMP error quote), then through
 * the in-place rewrites the worker applies to accepted frames. Invariants:
 * the parser is deterministic and its offsets agree with the lengths it
 * checked; every rewrite of an accepted frame yields a frame the parser
 * accepts again, with the tuple asked for and checksums that still verify.
 * The same bytes go through the IPv6 parser (pkt_parse6): at most one of
 * the two accepts a frame, and what the IPv6 parser accepts has its
 * offsets within the payload length it checked. Accepted TCP and UDP
 * frames go through nat6: fnat66 and fnat64 (IPv6 to IPv4) of an IPv6
 * frame, fnat64 back (IPv4 to IPv6) of an IPv4 one, each parsed again
 * with the tuple asked for and a checksum that verifies if it did.
 * ICMPv6 goes through the neighbour discovery parser (nd6), a valid
 * solicitation's answer being an advertisement that parser takes, and
 * through icmp6: an error's translation parses again with the quoted
 * tuple asked for and a checksum that verifies, an echo's reply too.
 * ICMP errors cross versions (icmp64) both ways and parse again as the
 * error of the other version, quoting the tuple asked for.
 */
#include <string.h>

#include "fuzz.h"
#include "csum.h"
#include "nat.h"
#include "lb/pkt_parse.h"
#include "icmp6.h"
#include "icmp64.h"
#include "nat6.h"
#include "nd6.h"
#include "pkt_parse6.h"

/* Whether the L4 checksum of an accepted TCP/UDP/ICMP frame verifies. */
static int
l4_csum_ok(const uint8_t *f, const struct lb_pkt *pkt)
{
	uint32_t l4len = pkt->ip_len - (pkt->l4_off - pkt->l3_off);
	uint8_t ph[4] = {0, pkt->proto, (uint8_t)(l4len >> 8),
			 (uint8_t)l4len};
	uint32_t sum = 0;

	if (pkt->proto != LB_IPPROTO_ICMP) {
		sum = lb_csum_partial(&pkt->src, 4, sum);
		sum = lb_csum_partial(&pkt->dst, 4, sum);
		sum = lb_csum_partial(ph, 4, sum);
	}
	return lb_csum_fold(lb_csum_partial(f + pkt->l4_off, l4len, sum)) ==
	       0xffff;
}

/* Whether the parser takes @p be as a source address (not 0/8, 127/8 or
 * 224/3): a reply to a frame sent to such an address is dropped. */
static int
src_ok(uint32_t be)
{
	const uint8_t *b = (const uint8_t *)&be;

	return b[0] != 0 && b[0] != 127 && b[0] < 224;
}

/* A first octet the parser takes in a source, from any byte @p x. */
static uint8_t
src_octet(uint8_t x)
{
	uint8_t o = (uint8_t)(1 + x % 222);

	return o >= 127 ? (uint8_t)(o + 1) : o;
}

static void
check_offsets(const struct lb_pkt *pkt, uint32_t len)
{
	uint32_t ip_end = (uint32_t)pkt->l3_off + pkt->ip_len;

	FUZZ_CHECK(pkt->l3_off == (pkt->has_vlan ? 18 : 14));
	FUZZ_CHECK(ip_end <= len);
	FUZZ_CHECK(pkt->l4_off >= pkt->l3_off + 20);
	FUZZ_CHECK(pkt->l4_off <= pkt->l3_off + 60);
	FUZZ_CHECK(pkt->payload_off >= pkt->l4_off);
	FUZZ_CHECK((uint32_t)pkt->payload_off + pkt->payload_len == ip_end);
	FUZZ_CHECK(pkt->proto == LB_IPPROTO_TCP ||
		   pkt->proto == LB_IPPROTO_UDP ||
		   pkt->proto == LB_IPPROTO_ICMP);
	if (pkt->proto != LB_IPPROTO_ICMP)
		FUZZ_CHECK(pkt->sport != 0 && pkt->dport != 0);
	if (pkt->proto == LB_IPPROTO_TCP)
		FUZZ_CHECK(pkt->tcp_flags != 0);
}

static void
check_rewrite(const uint8_t *data, uint32_t len, const struct lb_pkt *pkt0)
{
	uint8_t *f = malloc(len);
	struct lb_pkt pkt = *pkt0, re;
	/* Addresses and ports taken from the frame's own bytes, so that the
	 * fuzzer steers them too; sources stay valid ones. */
	uint32_t src = pkt.dst ^ 0x01020304u, dst = pkt.src ^ 0x05060708u;
	uint16_t sp = (uint16_t)(pkt.dport | 1), dp = (uint16_t)(pkt.sport | 2);
	int ok;

	((uint8_t *)&src)[0] = src_octet(((uint8_t *)&src)[0]);
	memcpy(f, data, len);
	ok = l4_csum_ok(f, &pkt);
	/* The worker's check of a first packet agrees with this one, a
	 * UDP checksum of 0 ("none") aside. */
	if (pkt.proto != LB_IPPROTO_ICMP)
		FUZZ_CHECK(lb_pkt_l4_csum_ok(f, &pkt) ==
			   (ok || (pkt.proto == LB_IPPROTO_UDP &&
				   !memcmp(f + pkt.l4_off + 6, "\0\0", 2))));
	if (pkt.proto == LB_IPPROTO_ICMP) {
		FUZZ_CHECK(lb_nat_rewrite(f, &pkt, src, sp, dst, dp) ==
			   -EPROTONOSUPPORT);
		free(f);
		return;
	}
	FUZZ_CHECK(lb_nat_rewrite(f, &pkt, src, sp, dst, dp) == 0);
	FUZZ_CHECK(lb_pkt_parse(f, len, &re) == LB_PKT_IPV4);
	FUZZ_CHECK(re.src == src && re.dst == dst);
	FUZZ_CHECK(re.sport == sp && re.dport == dp);
	FUZZ_CHECK(re.payload_len == pkt0->payload_len);
	/* A UDP checksum of zero means "none" and stays so. */
	if (pkt.proto == LB_IPPROTO_UDP &&
	    !memcmp(data + pkt0->l4_off + 6, "\0\0", 2))
		FUZZ_CHECK(!memcmp(f + re.l4_off + 6, "\0\0", 2));
	else if (ok)
		FUZZ_CHECK(l4_csum_ok(f, &re));
	free(f);
}

static void
check_rst(const uint8_t *data, uint32_t len, const struct lb_pkt *pkt0)
{
	uint8_t *f = malloc(len);
	struct lb_pkt pkt = *pkt0, re;
	int n;

	memcpy(f, data, len);
	n = lb_nat_tcp_rst(f, len, &pkt);
	if (pkt0->tcp_flags & LB_TCP_RST) {
		FUZZ_CHECK(n == -EINVAL);
	} else if (!src_ok(pkt0->dst)) {
		FUZZ_CHECK(n > 0 && (uint32_t)n <= len);
		FUZZ_CHECK(lb_pkt_parse(f, (uint32_t)n, &re) ==
			   LB_PKT_DROP_IP_ADDR);
	} else {
		FUZZ_CHECK(n > 0 && (uint32_t)n <= len);
		FUZZ_CHECK(lb_pkt_parse(f, (uint32_t)n, &re) == LB_PKT_IPV4);
		FUZZ_CHECK(re.proto == LB_IPPROTO_TCP);
		FUZZ_CHECK(re.tcp_flags & LB_TCP_RST);
		FUZZ_CHECK(re.payload_len == 0);
		FUZZ_CHECK(re.src == pkt0->dst && re.dst == pkt0->src);
		FUZZ_CHECK(re.sport == pkt0->dport && re.dport == pkt0->sport);
		FUZZ_CHECK(l4_csum_ok(f, &re));
	}
	free(f);
}

static void
check_icmp(const uint8_t *data, uint32_t len, const struct lb_pkt *pkt0)
{
	uint8_t *f = malloc(len);
	struct lb_pkt pkt = *pkt0, re;
	struct lb_nat_icmp ic, ic2;
	struct lb_nat_tuple in;
	uint32_t osrc = pkt0->dst ^ 0x100u;
	int rc;

	((uint8_t *)&osrc)[0] = src_octet(((uint8_t *)&osrc)[0]);

	memcpy(f, data, len);
	rc = lb_nat_icmp_parse(f, len, &pkt, &ic);
	FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -EPROTONOSUPPORT);
	if (rc == 0) {
		FUZZ_CHECK(ic.inner_l3_off >= pkt.payload_off);
		FUZZ_CHECK(ic.inner_l4_off >= ic.inner_l3_off + 20);
		FUZZ_CHECK((uint32_t)ic.inner_l3_off + ic.quote_len <= len);
		FUZZ_CHECK(ic.inner_l4_off + 8u <=
			   (uint32_t)ic.inner_l3_off + ic.quote_len);
		FUZZ_CHECK(ic.proto == LB_IPPROTO_TCP ||
			   ic.proto == LB_IPPROTO_UDP);
		in.src = ic.inner.dst ^ 0x0a0b0c0du;
		in.dst = ic.inner.src ^ 0x01010101u;
		in.sport = (uint16_t)(ic.inner.dport + 1);
		in.dport = (uint16_t)(ic.inner.sport + 3);
		FUZZ_CHECK(lb_nat_icmp_rewrite(f, len, &pkt, osrc, pkt.src,
					       &in) == 0);
		FUZZ_CHECK(lb_pkt_parse(f, len, &re) == LB_PKT_IPV4);
		FUZZ_CHECK(re.src == osrc);
		FUZZ_CHECK(re.dst == pkt0->src);
		FUZZ_CHECK(lb_nat_icmp_parse(f, len, &re, &ic2) == 0);
		FUZZ_CHECK(!memcmp(&ic2.inner, &in, sizeof(in)));
		FUZZ_CHECK(ic2.type == ic.type && ic2.code == ic.code);
		FUZZ_CHECK(ic2.quote_len == ic.quote_len);
	}
	memcpy(f, data, len);
	pkt = *pkt0;
	rc = lb_nat_icmp_echo_reply(f, len, &pkt);
	if (rc == 0 && src_ok(pkt0->dst)) {
		FUZZ_CHECK(lb_pkt_parse(f, len, &re) == LB_PKT_IPV4);
		FUZZ_CHECK(re.src == pkt0->dst && re.dst == pkt0->src);
		FUZZ_CHECK(re.dport >> 8 == LB_ICMP_ECHO_REPLY);
		FUZZ_CHECK(l4_csum_ok(f, &re));
	}
	free(f);
}

static void
check_arp(const uint8_t *data, uint32_t len, const struct lb_pkt *pkt)
{
	static const uint8_t mac[LB_ETHER_ADDR_LEN] = {2, 0, 0, 0, 0, 1};
	uint8_t *f = malloc(len);
	struct lb_nat_arp a, b;
	struct lb_pkt re;

	memcpy(f, data, len);
	FUZZ_CHECK(lb_nat_arp_parse(f, len, pkt, &a) == 0);
	FUZZ_CHECK(a.op == LB_ARP_REQUEST || a.op == LB_ARP_REPLY);
	if (lb_nat_arp_reply(f, len, pkt, mac) == 0) {
		FUZZ_CHECK(a.op == LB_ARP_REQUEST);
		FUZZ_CHECK(lb_pkt_parse(f, len, &re) == LB_PKT_ARP);
		FUZZ_CHECK(lb_nat_arp_parse(f, len, &re, &b) == 0);
		FUZZ_CHECK(b.op == LB_ARP_REPLY);
		FUZZ_CHECK(b.spa == a.tpa && !memcmp(b.sha, mac, sizeof(mac)));
		FUZZ_CHECK(!memcmp(b.tha, a.sha, sizeof(mac)));
	}
	free(f);
}

static const uint8_t fz_s6[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 1};
static const uint8_t fz_d6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 2};

static void
check_nat6(const uint8_t *data, uint32_t len, const struct lb_pkt6 *pkt0)
{
	uint8_t *f = malloc(len);
	struct lb_pkt6 pkt = *pkt0, re;
	struct lb_pkt re4, out4;
	uint16_t sp = (uint16_t)(pkt0->dport | 1);
	uint16_t dp = (uint16_t)(pkt0->sport | 2);
	int ok = lb_pkt6_l4_csum_ok(data, pkt0), rc;

	memcpy(f, data, len);
	rc = lb_nat6_rewrite(f, &pkt, fz_s6, sp, fz_d6, dp);
	if (pkt0->proto == LB_IPPROTO_ICMPV6 ||
	    (pkt0->flags & LB_PKT6_F_FRAG)) {
		FUZZ_CHECK(rc == -EPROTONOSUPPORT);
		FUZZ_CHECK(!memcmp(f, data, len));
		free(f);
		return;
	}
	FUZZ_CHECK(rc == 0);
	FUZZ_CHECK(lb_pkt6_parse(f, len, &re) == LB_PKT6_OK);
	FUZZ_CHECK(!memcmp(re.src, fz_s6, 16) && !memcmp(re.dst, fz_d6, 16));
	FUZZ_CHECK(re.sport == sp && re.dport == dp);
	FUZZ_CHECK(lb_pkt6_l4_csum_ok(f, &re) == ok);

	memcpy(f, data, len);
	rc = lb_nat64_xlate(f, 0, len, pkt0, 0x0100000au, sp, 0x0200000au,
			    dp, &out4);
	FUZZ_CHECK(rc > 0);
	FUZZ_CHECK((uint32_t)rc + out4.l3_off + out4.ip_len <= len);
	FUZZ_CHECK(lb_pkt_parse(f + rc, out4.l3_off + out4.ip_len, &re4) ==
		   LB_PKT_IPV4);
	FUZZ_CHECK(!memcmp(&re4, &out4, sizeof(re4)));
	FUZZ_CHECK(lb_pkt_l4_csum_ok(f + rc, &re4) == ok);
	free(f);
}

/* fnat64 back to the client: an IPv4 TCP/UDP frame given 40 bytes of
 * headroom becomes an IPv6 one the IPv6 parser takes. */
static void
check_nat46(const uint8_t *data, uint32_t len, const struct lb_pkt *pkt)
{
	uint8_t *b = malloc(len + 40);
	struct lb_pkt6 out, re;
	int ok = lb_pkt_l4_csum_ok(data, pkt), rc;

	memcpy(b + 40, data, len);
	rc = lb_nat46_xlate(b, 40, len, pkt, fz_s6, pkt->dport, fz_d6,
			    pkt->sport, &out);
	if (rc == -EPROTONOSUPPORT) {
		FUZZ_CHECK(pkt->l4_off - pkt->l3_off > 20);
		free(b);
		return;
	}
	FUZZ_CHECK(rc >= 0 && rc <= 60);
	FUZZ_CHECK(lb_pkt6_parse(b + rc, out.l3_off + 40u + out.ip_plen,
				 &re) == LB_PKT6_OK);
	FUZZ_CHECK(!memcmp(&re, &out, sizeof(re)));
	if (ok)
		FUZZ_CHECK(lb_pkt6_l4_csum_ok(b + rc, &re));
	/* The SYN-ACK's MSS lowered for the client: the checksum follows
	 * it wherever the option sits. */
	FUZZ_CHECK(lb_nat46_mss_adjust(b + rc, &re) >= 0);
	if (ok)
		FUZZ_CHECK(lb_pkt6_l4_csum_ok(b + rc, &re));
	free(b);
}

static void
check_nd(const uint8_t *f, uint32_t len, const struct lb_pkt6 *pkt)
{
	static const struct lb_nat_link link = {{2, 0, 0, 0, 0, 1}, 0, 0};
	uint8_t out[128];
	struct lb_nd_msg m, na;
	struct lb_pkt6 re;
	int rc = lb_nd_parse(f, len, pkt, &m), n;

	FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -EPROTONOSUPPORT);
	if (rc != 0 || m.type != LB_ND_NS)
		return;
	FUZZ_CHECK(pkt->hop_limit == LB_ND_HOP_LIMIT && m.target[0] != 0xff);
	n = lb_nd_na_answer(out, sizeof(out), &link, &m);
	FUZZ_CHECK(n > 0);
	if (lb_pkt6_parse(out, (uint32_t)n, &re) != LB_PKT6_OK) {
		/* Only a target the parser never takes as a source. */
		FUZZ_CHECK(!memcmp(m.target, "\0\0\0\0\0\0\0\0", 8));
		return;
	}
	FUZZ_CHECK(lb_nd_parse(out, (uint32_t)n, &re, &na) == 0);
	FUZZ_CHECK(na.type == LB_ND_NA && !memcmp(na.target, m.target, 16));
	FUZZ_CHECK(na.has_lla && !memcmp(na.lla, link.mac, 6));
}

static void
check_icmp64(const uint8_t *data, uint32_t len, const struct lb_pkt6 *pkt0)
{
	static const struct lb_nat_tuple in = {0x0200000au, 0x0100000au,
					       0x5000, 0x0104};
	uint8_t *f = malloc(len);
	struct lb_pkt out;
	struct lb_nat_icmp ie;
	int no;

	memcpy(f, data, len);
	no = lb_icmp_xlate64(f, 0, len, pkt0, 0x0100000au, 0x0200000au, &in,
			     &out);
	FUZZ_CHECK(no > 0 || no == -EPROTONOSUPPORT);
	if (no > 0) {
		FUZZ_CHECK(out.l3_off != 0);
		FUZZ_CHECK((uint32_t)no + out.l3_off + out.ip_len <= len);
		FUZZ_CHECK(lb_nat_icmp_parse(f + no, len - (uint32_t)no, &out,
					     &ie) == 0);
		FUZZ_CHECK(!memcmp(&ie.inner, &in, sizeof(in)));
	}
	free(f);
}

/* An ICMP error for IPv4 with 40 bytes of headroom becomes ICMPv6. */
static void
check_icmp46(const uint8_t *data, uint32_t len, const struct lb_pkt *pkt)
{
	static const struct lb_icmp6_tuple in = {
		{0x20, 0x01, 0x0d, 0xb8, [15] = 7},
		{0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 0x10}, 0x5000, 0x0104};
	uint8_t *b = malloc(len + 40);
	struct lb_pkt6 out;
	struct lb_icmp6_err e;
	int no;

	memcpy(b + 40, data, len);
	no = lb_icmp_xlate46(b, 40, len, pkt, fz_s6, fz_d6, &in, &out);
	FUZZ_CHECK(no >= 0 || no == -EPROTONOSUPPORT || no == -EINVAL);
	if (no >= 0) {
		FUZZ_CHECK(out.l3_off != 0);
		FUZZ_CHECK((uint32_t)no + out.l3_off + 40u + out.ip_plen <=
			   len + 40);
		FUZZ_CHECK(40u + out.ip_plen <= LB_IPV6_MIN_MTU);
		FUZZ_CHECK(lb_icmp6_err_parse(b + no, len + 40 - (uint32_t)no,
					      &out, &e) == 0);
		FUZZ_CHECK(!memcmp(&e.inner, &in, sizeof(in)));
	}
	free(b);
}

static void
check_icmp6(const uint8_t *data, uint32_t len, const struct lb_pkt6 *pkt0)
{
	uint8_t *f = malloc(len);
	struct lb_pkt6 pkt = *pkt0, re;
	struct lb_icmp6_err e, e2;
	struct lb_icmp6_tuple in;
	int rc;

	memcpy(f, data, len);
	rc = lb_icmp6_err_parse(f, len, &pkt, &e);
	FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -EPROTONOSUPPORT);
	if (rc == 0) {
		FUZZ_CHECK(e.inner_l3_off >= pkt.payload_off);
		FUZZ_CHECK(e.inner_l4_off >= e.inner_l3_off + 40);
		FUZZ_CHECK((uint32_t)e.inner_l3_off + e.quote_len <= len);
		FUZZ_CHECK(e.inner_l4_off + 8u <=
			   (uint32_t)e.inner_l3_off + e.quote_len);
		memcpy(in.src, e.inner.dst, 16);
		memcpy(in.dst, e.inner.src, 16);
		in.src[15] ^= 0x5a;
		in.sport = (uint16_t)(e.inner.dport + 1);
		in.dport = (uint16_t)(e.inner.sport + 3);
		FUZZ_CHECK(lb_icmp6_err_rewrite(f, len, &pkt, fz_s6, fz_d6,
						&in) == 0);
		FUZZ_CHECK(lb_pkt6_parse(f, len, &re) == LB_PKT6_OK);
		FUZZ_CHECK(lb_icmp6_err_parse(f, len, &re, &e2) == 0);
		FUZZ_CHECK(!memcmp(&e2.inner, &in, sizeof(in)));
		FUZZ_CHECK(e2.type == e.type && e2.code == e.code &&
			   e2.mtu == e.mtu && e2.quote_len == e.quote_len);
		check_icmp64(data, len, pkt0);
	}
	memcpy(f, data, len);
	pkt = *pkt0;
	if (lb_icmp6_echo_reply(f, len, &pkt) == 0 && pkt0->dst[0] != 0xff) {
		FUZZ_CHECK(lb_pkt6_parse(f, len, &re) == LB_PKT6_OK);
		FUZZ_CHECK(!memcmp(re.src, pkt0->dst, 16));
		FUZZ_CHECK(!memcmp(re.dst, pkt0->src, 16));
		FUZZ_CHECK(f[re.l4_off] == LB_ICMP6_ECHO_REPLY);
		FUZZ_CHECK(lb_pkt6_l4_csum_ok(f, &re));
	}
	free(f);
}

static void
check_ipv6(const uint8_t *f, uint32_t len, enum lb_pkt_verdict v4)
{
	struct lb_pkt6 pkt, again;
	enum lb_pkt6_verdict v;
	uint32_t end;

	v = lb_pkt6_parse(f, len, &pkt);
	FUZZ_CHECK((unsigned int)v < LB_PKT6_VERDICT_MAX);
	FUZZ_CHECK(strcmp(lb_pkt6_verdict_name(v), "unknown") != 0);
	FUZZ_CHECK(lb_pkt6_parse(f, len, &again) == v);
	FUZZ_CHECK(!memcmp(&pkt, &again, sizeof(pkt)));
	if (v != LB_PKT6_OK)
		return;
	FUZZ_CHECK(v4 >= LB_PKT_DROP_FIRST);
	end = (uint32_t)pkt.l3_off + LB_IPV6_HDR_LEN + pkt.ip_plen;
	FUZZ_CHECK(pkt.l3_off == (pkt.has_vlan ? 18 : 14));
	FUZZ_CHECK(end <= len);
	FUZZ_CHECK(pkt.l4_off >= pkt.l3_off + LB_IPV6_HDR_LEN);
	FUZZ_CHECK(pkt.l4_off <= pkt.l3_off + LB_IPV6_HDR_LEN +
					 8u * 256 * LB_PKT6_EXT_MAX);
	FUZZ_CHECK(pkt.n_ext <= LB_PKT6_EXT_MAX);
	FUZZ_CHECK(pkt.payload_off > pkt.l4_off);
	FUZZ_CHECK((uint32_t)pkt.payload_off + pkt.payload_len == end);
	FUZZ_CHECK(pkt.proto == LB_IPPROTO_TCP ||
		   pkt.proto == LB_IPPROTO_UDP ||
		   pkt.proto == LB_IPPROTO_ICMPV6);
	FUZZ_CHECK(pkt.src[0] != 0xff);
	if (pkt.proto != LB_IPPROTO_ICMPV6)
		FUZZ_CHECK(pkt.sport != 0 && pkt.dport != 0);
	if (pkt.flags & LB_PKT6_F_FRAG)
		FUZZ_CHECK(!lb_pkt6_l4_csum_ok(f, &pkt));
	if (pkt.proto == LB_IPPROTO_ICMPV6) {
		check_nd(f, len, &pkt);
		check_icmp6(f, len, &pkt);
	}
	check_nat6(f, len, &pkt);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lb_pkt pkt, again;
	enum lb_pkt_verdict v;
	uint32_t len;
	uint8_t *f;

	if (size > 65535 + 18)
		return 0;
	len = (uint32_t)size;
	/* An exact-size copy, so that ASan sees any read past the frame. */
	f = malloc(len ? len : 1);
	memcpy(f, data, len);
	v = lb_pkt_parse(f, len, &pkt);
	FUZZ_CHECK((unsigned int)v < LB_PKT_VERDICT_MAX);
	FUZZ_CHECK(strcmp(lb_pkt_verdict_name(v), "unknown") != 0);
	FUZZ_CHECK(lb_pkt_parse(f, len, &again) == v);
	FUZZ_CHECK(!memcmp(&pkt, &again, sizeof(pkt)));
	check_ipv6(f, len, v);
	if (v == LB_PKT_IPV4) {
		check_offsets(&pkt, len);
		if (pkt.proto == LB_IPPROTO_TCP)
			check_rst(f, len, &pkt);
		if (pkt.proto == LB_IPPROTO_ICMP) {
			check_icmp(f, len, &pkt);
			check_icmp46(f, len, &pkt);
		}
		check_rewrite(f, len, &pkt);
		if (pkt.proto != LB_IPPROTO_ICMP)
			check_nat46(f, len, &pkt);
	} else if (v == LB_PKT_ARP) {
		check_arp(f, len, &pkt);
	}
	free(f);
	return 0;
}
