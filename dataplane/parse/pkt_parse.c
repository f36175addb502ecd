/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "bytes.h"
#include "csum.h"
#include "l4_hdr.h"
#include "lb/pkt_parse.h"

#define ETHER_HDR_LEN 14
#define VLAN_HDR_LEN 4
#define ARP_LEN 28
#define IPV4_MIN_HDR 20
#define TCP_MIN_HDR 20
#define UDP_HDR_LEN 8
#define ICMP_HDR_LEN 8
#define IP_MF 0x2000
#define IP_OFFMASK 0x1fff

static enum lb_pkt_verdict
parse_arp(const uint8_t *p, uint32_t avail)
{
	/* Only Ethernet hardware (1), IPv4 protocol, 6- and 4-byte
	 * addresses, request (1) or reply (2) are ever answered. */
	if (avail < ARP_LEN || rd16(p) != 1 ||
	    rd16(p + 2) != LB_ETHER_TYPE_IPV4 || p[4] != 6 || p[5] != 4 ||
	    (rd16(p + 6) != 1 && rd16(p + 6) != 2))
		return LB_PKT_DROP_ARP;
	return LB_PKT_ARP;
}

static int
bad_source(uint32_t be_src)
{
	const uint8_t *b = (const uint8_t *)&be_src;

	/* 0.0.0.0/8, loopback 127.0.0.0/8, multicast 224.0.0.0/4, reserved
	 * 240.0.0.0/4 and limited broadcast are never valid sources for a
	 * flow (RFC 1122 3.2.1.3, RFC 1812 5.3.7). */
	return b[0] == 0 || b[0] == 127 || b[0] >= 224;
}

static enum lb_pkt_verdict
parse_tcp(const uint8_t *p, uint32_t l4_len, struct lb_pkt *pkt)
{
	uint32_t doff;
	uint8_t f;

	if (l4_len < TCP_MIN_HDR)
		return LB_PKT_DROP_TCP_TRUNC;
	doff = lb_tcp_doff(p, l4_len);
	if (doff == 0)
		return LB_PKT_DROP_TCP_TRUNC;
	f = p[13] & 0x3f;
	if (lb_tcp_flags_bad(f))
		return LB_PKT_DROP_TCP_FLAGS;
	pkt->tcp_flags = f;
	pkt->sport = rd16_raw(p);
	pkt->dport = rd16_raw(p + 2);
	if (pkt->sport == 0 || pkt->dport == 0)
		return LB_PKT_DROP_PORT_ZERO;
	pkt->payload_off = (uint16_t)(pkt->l4_off + doff);
	pkt->payload_len = (uint16_t)(l4_len - doff);
	return LB_PKT_IPV4;
}

static enum lb_pkt_verdict
parse_udp(const uint8_t *p, uint32_t l4_len, struct lb_pkt *pkt)
{
	if (l4_len < UDP_HDR_LEN)
		return LB_PKT_DROP_UDP_TRUNC;
	if (rd16(p + 4) != l4_len)
		return LB_PKT_DROP_UDP_LEN;
	pkt->sport = rd16_raw(p);
	pkt->dport = rd16_raw(p + 2);
	if (pkt->sport == 0 || pkt->dport == 0)
		return LB_PKT_DROP_PORT_ZERO;
	pkt->payload_off = (uint16_t)(pkt->l4_off + UDP_HDR_LEN);
	pkt->payload_len = (uint16_t)(l4_len - UDP_HDR_LEN);
	return LB_PKT_IPV4;
}

static enum lb_pkt_verdict
parse_icmp(const uint8_t *p, uint32_t l4_len, struct lb_pkt *pkt)
{
	if (l4_len < ICMP_HDR_LEN)
		return LB_PKT_DROP_ICMP_TRUNC;
	pkt->dport = rd16_raw(p); /* type and code, as in the packet */
	pkt->sport = rd16_raw(p + 4);
	pkt->payload_off = (uint16_t)(pkt->l4_off + ICMP_HDR_LEN);
	pkt->payload_len = (uint16_t)(l4_len - ICMP_HDR_LEN);
	return LB_PKT_IPV4;
}

enum lb_pkt_verdict
lb_pkt_parse(const uint8_t *frame, uint32_t len, struct lb_pkt *pkt)
{
	uint32_t off = ETHER_HDR_LEN, ihl, tot;
	uint16_t type;
	const uint8_t *ip;

	memset(pkt, 0, sizeof(*pkt));
	if (len < ETHER_HDR_LEN)
		return LB_PKT_DROP_TRUNC_L2;
	type = rd16(frame + 12);
	if (type == LB_ETHER_TYPE_VLAN) {
		if (len < ETHER_HDR_LEN + VLAN_HDR_LEN)
			return LB_PKT_DROP_TRUNC_L2;
		pkt->has_vlan = 1;
		pkt->vlan_tci = rd16(frame + 14);
		type = rd16(frame + 16);
		off += VLAN_HDR_LEN;
	}
	pkt->l3_off = (uint16_t)off;
	if (type == LB_ETHER_TYPE_ARP)
		return parse_arp(frame + off, len - off);
	if (type != LB_ETHER_TYPE_IPV4)
		return LB_PKT_DROP_ETHERTYPE;

	if (len - off < IPV4_MIN_HDR)
		return LB_PKT_DROP_TRUNC_L3;
	ip = frame + off;
	if (ip[0] >> 4 != 4)
		return LB_PKT_DROP_IP_VERSION;
	ihl = (uint32_t)(ip[0] & 0xf) * 4;
	if (ihl < IPV4_MIN_HDR || ihl > len - off)
		return LB_PKT_DROP_IP_IHL;
	/* Any fragment is dropped, so it is classified as one before its
	 * length is judged: a first fragment cut short, or a later one, is
	 * still counted where an operator looks for fragments. The flags
	 * and offset lie within the 20 bytes checked above. */
	if (rd16(ip + 6) & (IP_MF | IP_OFFMASK))
		return LB_PKT_DROP_IP_FRAG;
	tot = rd16(ip + 2);
	/* Ethernet pads short frames, so the frame may be longer than the
	 * IP datagram; it may never be shorter. */
	if (tot < ihl || tot > len - off)
		return LB_PKT_DROP_IP_LEN;
	if (lb_csum_fold(lb_csum_partial(ip, ihl, 0)) != 0xffff)
		return LB_PKT_DROP_IP_CSUM;
	pkt->ip_len = (uint16_t)tot;
	pkt->ttl = ip[8];
	pkt->proto = ip[9];
	pkt->src = rd32_raw(ip + 12);
	pkt->dst = rd32_raw(ip + 16);
	if (bad_source(pkt->src))
		return LB_PKT_DROP_IP_ADDR;
	pkt->l4_off = (uint16_t)(off + ihl);

	switch (pkt->proto) {
	case LB_IPPROTO_TCP:
		return parse_tcp(ip + ihl, tot - ihl, pkt);
	case LB_IPPROTO_UDP:
		return parse_udp(ip + ihl, tot - ihl, pkt);
	case LB_IPPROTO_ICMP:
		return parse_icmp(ip + ihl, tot - ihl, pkt);
	default:
		return LB_PKT_DROP_IP_PROTO;
	}
}

bool
lb_pkt_l4_csum_ok(const uint8_t *frame, const struct lb_pkt *pkt)
{
	const uint8_t *l4 = frame + pkt->l4_off;
	uint32_t l4_len = pkt->ip_len - (uint32_t)(pkt->l4_off - pkt->l3_off);
	uint8_t pseudo[12];
	uint32_t sum;

	/* A UDP checksum of 0 means the sender computed none (RFC 768). */
	if (pkt->proto == LB_IPPROTO_UDP && rd16_raw(l4 + 6) == 0)
		return true;
	memcpy(pseudo, &pkt->src, 4);
	memcpy(pseudo + 4, &pkt->dst, 4);
	pseudo[8] = 0;
	pseudo[9] = pkt->proto;
	wr16(pseudo + 10, (uint16_t)l4_len);
	sum = lb_csum_partial(pseudo, sizeof(pseudo), 0);
	sum = lb_csum_partial(l4, l4_len, sum);
	return lb_csum_fold(sum) == 0xffff;
}

static const char *const verdict_names[LB_PKT_VERDICT_MAX] = {
	[LB_PKT_IPV4] = "ipv4",
	[LB_PKT_ARP] = "arp",
	[LB_PKT_DROP_TRUNC_L2] = "trunc_l2",
	[LB_PKT_DROP_ETHERTYPE] = "ethertype",
	[LB_PKT_DROP_ARP] = "bad_arp",
	[LB_PKT_DROP_TRUNC_L3] = "trunc_l3",
	[LB_PKT_DROP_IP_VERSION] = "ip_version",
	[LB_PKT_DROP_IP_IHL] = "ip_ihl",
	[LB_PKT_DROP_IP_LEN] = "ip_len",
	[LB_PKT_DROP_IP_CSUM] = "ip_csum",
	[LB_PKT_DROP_IP_FRAG] = "ip_frag",
	[LB_PKT_DROP_IP_ADDR] = "ip_src",
	[LB_PKT_DROP_IP_PROTO] = "ip_proto",
	[LB_PKT_DROP_TCP_TRUNC] = "tcp_trunc",
	[LB_PKT_DROP_TCP_FLAGS] = "tcp_flags",
	[LB_PKT_DROP_UDP_TRUNC] = "udp_trunc",
	[LB_PKT_DROP_UDP_LEN] = "udp_len",
	[LB_PKT_DROP_ICMP_TRUNC] = "icmp_trunc",
	[LB_PKT_DROP_PORT_ZERO] = "port_zero",
};

const char *
lb_pkt_verdict_name(enum lb_pkt_verdict v)
{
	if ((unsigned int)v >= LB_PKT_VERDICT_MAX)
		return "unknown";
	return verdict_names[v];
}
