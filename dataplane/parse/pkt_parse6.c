/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "bytes.h"
#include "csum.h"
#include "l4_hdr.h"
#include "pkt_parse6.h"

#define ETHER_HDR_LEN 14
#define VLAN_HDR_LEN 4
#define TCP_MIN_HDR 20
#define UDP_HDR_LEN 8
#define ICMP6_HDR_LEN 8
#define FRAG_HDR_LEN 8
#define FRAG_OFFMASK 0xfff8
#define FRAG_MF 0x0001

/* The state of a walk along the header chain. */
struct walk {
	const uint8_t *ip;
	uint32_t off; /* from the fixed header's start */
	uint32_t end; /* 40 + payload length */
	uint8_t nh;
};

static bool
addr_is(const uint8_t *a, const uint8_t *prefix, uint32_t n)
{
	return memcmp(a, prefix, n) == 0;
}

static bool
addr_zero(const uint8_t *a)
{
	static const uint8_t zero[16];

	return addr_is(a, zero, 16);
}

static bool
addr_loopback(const uint8_t *a)
{
	static const uint8_t lo[16] = {[15] = 1};

	return addr_is(a, lo, 16);
}

/*
 * Never a flow's source: multicast (RFC 4291 2.7), loopback (2.5.3, must
 * not come from a wire), IPv4-mapped (2.5.5.2, an API form, not one a
 * packet carries). The unspecified address is judged later, by protocol.
 */
static bool
bad_source(const uint8_t *a)
{
	static const uint8_t mapped[12] = {[10] = 0xff, [11] = 0xff};

	return a[0] == 0xff || addr_loopback(a) || addr_is(a, mapped, 12);
}

/*
 * Options of a hop-by-hop or destination options header, @p p its first
 * byte, @p n its length. None is acted on, so each is skipped if its type
 * says "skip if unrecognised" (high bits 00) and drops the packet
 * otherwise (RFC 8200 4.2): a router alert or a tunnel limit passes, a
 * jumbo payload or a home address does not.
 */
static bool
options_ok(const uint8_t *p, uint32_t n)
{
	uint32_t i = 2;

	while (i < n) {
		uint8_t type = p[i];

		if (type == 0) { /* Pad1 */
			i++;
			continue;
		}
		if (n - i < 2 || (uint32_t)p[i + 1] > n - i - 2)
			return false;
		if (type >> 6 != 0)
			return false;
		i += 2u + p[i + 1];
	}
	return true;
}

/* Walks the extension headers up to the upper-layer header. */
static enum lb_pkt6_verdict
walk_ext(struct walk *w, struct lb_pkt6 *pkt)
{
	for (;;) {
		const uint8_t *h = w->ip + w->off;
		uint32_t hlen;

		switch (w->nh) {
		case LB_IPPROTO_HOPOPTS:
		case LB_IPPROTO_ROUTING:
		case LB_IPPROTO_DSTOPTS:
		case LB_IPPROTO_FRAGMENT:
			break;
		default:
			return LB_PKT6_OK;
		}
		if (pkt->n_ext == LB_PKT6_EXT_MAX)
			return LB_PKT6_DROP_EXT_MANY;
		/* Hop-by-hop is only ever the first (RFC 8200 4.1). */
		if (w->nh == LB_IPPROTO_HOPOPTS && pkt->n_ext != 0)
			return LB_PKT6_DROP_EXT_ORDER;
		if (w->end - w->off < 8)
			return LB_PKT6_DROP_EXT_TRUNC;
		hlen = w->nh == LB_IPPROTO_FRAGMENT ? FRAG_HDR_LEN
						    : 8u * (h[1] + 1u);
		if (hlen > w->end - w->off)
			return LB_PKT6_DROP_EXT_TRUNC;
		switch (w->nh) {
		case LB_IPPROTO_HOPOPTS:
		case LB_IPPROTO_DSTOPTS:
			if (!options_ok(h, hlen))
				return LB_PKT6_DROP_EXT_OPT;
			break;
		case LB_IPPROTO_ROUTING:
			/* Segments left 0: this is the last hop and the
			 * header is ignored, whatever its type (4.4). */
			if (h[3] != 0)
				return LB_PKT6_DROP_ROUTING;
			break;
		case LB_IPPROTO_FRAGMENT: {
			uint16_t om = rd16(h + 2);
			uint32_t frag_len;

			if (pkt->frag_hdr != 0)
				return LB_PKT6_DROP_EXT_ORDER;
			if (om & FRAG_OFFMASK)
				return LB_PKT6_DROP_FRAG;
			pkt->frag_hdr = (uint16_t)(pkt->l3_off + w->off);
			pkt->frag_id = rd32_raw(h + 4);
			if (!(om & FRAG_MF)) {
				pkt->flags |= LB_PKT6_F_ATOMIC;
				break;
			}
			/* A fragment with more to come holds a multiple
			 * of 8 bytes after the fragment header (4.5). */
			frag_len = w->end - w->off - FRAG_HDR_LEN;
			if (frag_len % 8 != 0)
				return LB_PKT6_DROP_FRAG_BAD;
			pkt->flags |= LB_PKT6_F_FRAG;
			break;
		}
		}
		pkt->n_ext++;
		w->nh = h[0];
		w->off += hlen;
	}
}

/* An L4 header cut short is the fragment's fault in a first fragment:
 * RFC 7112 asks for the whole header chain in it. */
static enum lb_pkt6_verdict
cut_short(const struct lb_pkt6 *pkt, enum lb_pkt6_verdict v)
{
	return pkt->flags & LB_PKT6_F_FRAG ? LB_PKT6_DROP_FRAG_BAD : v;
}

static enum lb_pkt6_verdict
parse_tcp(const uint8_t *p, uint32_t l4_len, struct lb_pkt6 *pkt)
{
	uint32_t doff;
	uint8_t f;

	if (l4_len < TCP_MIN_HDR)
		return cut_short(pkt, LB_PKT6_DROP_TCP_TRUNC);
	doff = lb_tcp_doff(p, l4_len);
	if (doff == 0)
		return p[12] >> 4 < 5 ? LB_PKT6_DROP_TCP_TRUNC
				      : cut_short(pkt, LB_PKT6_DROP_TCP_TRUNC);
	f = p[13] & 0x3f;
	if (lb_tcp_flags_bad(f))
		return LB_PKT6_DROP_TCP_FLAGS;
	pkt->tcp_flags = f;
	pkt->sport = rd16_raw(p);
	pkt->dport = rd16_raw(p + 2);
	if (pkt->sport == 0 || pkt->dport == 0)
		return LB_PKT6_DROP_PORT_ZERO;
	pkt->payload_off = (uint16_t)(pkt->l4_off + doff);
	pkt->payload_len = (uint16_t)(l4_len - doff);
	return LB_PKT6_OK;
}

static enum lb_pkt6_verdict
parse_udp(const uint8_t *p, uint32_t l4_len, struct lb_pkt6 *pkt)
{
	uint32_t ulen;

	if (l4_len < UDP_HDR_LEN)
		return cut_short(pkt, LB_PKT6_DROP_UDP_TRUNC);
	ulen = rd16(p + 4);
	/* A first fragment holds part of the datagram, never all of it. */
	if (pkt->flags & LB_PKT6_F_FRAG ? ulen <= l4_len : ulen != l4_len)
		return LB_PKT6_DROP_UDP_LEN;
	/* IPv6 has no header checksum, so UDP's is mandatory (8.1). */
	if (rd16_raw(p + 6) == 0)
		return LB_PKT6_DROP_UDP_CSUM0;
	pkt->sport = rd16_raw(p);
	pkt->dport = rd16_raw(p + 2);
	if (pkt->sport == 0 || pkt->dport == 0)
		return LB_PKT6_DROP_PORT_ZERO;
	pkt->payload_off = (uint16_t)(pkt->l4_off + UDP_HDR_LEN);
	pkt->payload_len = (uint16_t)(l4_len - UDP_HDR_LEN);
	return LB_PKT6_OK;
}

static enum lb_pkt6_verdict
parse_icmp6(const uint8_t *p, uint32_t l4_len, struct lb_pkt6 *pkt)
{
	if (l4_len < ICMP6_HDR_LEN)
		return cut_short(pkt, LB_PKT6_DROP_ICMP_TRUNC);
	pkt->dport = rd16_raw(p); /* type and code, as in the packet */
	pkt->sport = rd16_raw(p + 4);
	pkt->payload_off = (uint16_t)(pkt->l4_off + ICMP6_HDR_LEN);
	pkt->payload_len = (uint16_t)(l4_len - ICMP6_HDR_LEN);
	return LB_PKT6_OK;
}

enum lb_pkt6_verdict
lb_pkt6_parse(const uint8_t *frame, uint32_t len, struct lb_pkt6 *pkt)
{
	uint32_t off = ETHER_HDR_LEN, l4_len;
	enum lb_pkt6_verdict v;
	struct walk w;
	uint16_t type;

	memset(pkt, 0, sizeof(*pkt));
	if (len < ETHER_HDR_LEN)
		return LB_PKT6_DROP_TRUNC_L2;
	type = rd16(frame + 12);
	if (type == LB_ETHER_TYPE_VLAN) {
		if (len < ETHER_HDR_LEN + VLAN_HDR_LEN)
			return LB_PKT6_DROP_TRUNC_L2;
		pkt->has_vlan = 1;
		pkt->vlan_tci = rd16(frame + 14);
		type = rd16(frame + 16);
		off += VLAN_HDR_LEN;
	}
	pkt->l3_off = (uint16_t)off;
	if (type != LB_ETHER_TYPE_IPV6)
		return LB_PKT6_DROP_ETHERTYPE;
	if (len - off < LB_IPV6_HDR_LEN)
		return LB_PKT6_DROP_TRUNC_L3;
	w.ip = frame + off;
	if (w.ip[0] >> 4 != 6)
		return LB_PKT6_DROP_VERSION;
	pkt->ip_plen = rd16(w.ip + 4);
	/* Ethernet pads short frames: the frame may be longer than the
	 * packet, never shorter. A jumbogram's 0 is caught by its option;
	 * offsets are 16 bits, so the packet ends within 64 KiB of the
	 * frame's start. */
	if (pkt->ip_plen > len - off - LB_IPV6_HDR_LEN ||
	    off + LB_IPV6_HDR_LEN + pkt->ip_plen > UINT16_MAX)
		return LB_PKT6_DROP_PLEN;
	pkt->hop_limit = w.ip[7];
	memcpy(pkt->src, w.ip + 8, 16);
	memcpy(pkt->dst, w.ip + 24, 16);
	if (bad_source(pkt->src) || addr_zero(pkt->dst) ||
	    addr_loopback(pkt->dst))
		return LB_PKT6_DROP_ADDR;

	w.off = LB_IPV6_HDR_LEN;
	w.end = LB_IPV6_HDR_LEN + pkt->ip_plen;
	w.nh = w.ip[6];
	v = walk_ext(&w, pkt);
	if (v != LB_PKT6_OK)
		return v;
	pkt->proto = w.nh;
	pkt->l4_off = (uint16_t)(off + w.off);
	l4_len = w.end - w.off;
	/* The unspecified source belongs to a node still checking its
	 * address (duplicate address detection): ICMPv6 only. */
	if (addr_zero(pkt->src) && pkt->proto != LB_IPPROTO_ICMPV6)
		return LB_PKT6_DROP_ADDR;

	switch (pkt->proto) {
	case LB_IPPROTO_TCP:
		return parse_tcp(w.ip + w.off, l4_len, pkt);
	case LB_IPPROTO_UDP:
		return parse_udp(w.ip + w.off, l4_len, pkt);
	case LB_IPPROTO_ICMPV6:
		return parse_icmp6(w.ip + w.off, l4_len, pkt);
	default:
		return LB_PKT6_DROP_PROTO;
	}
}

uint32_t
lb_pkt6_pseudo_sum(const uint8_t *src, const uint8_t *dst, uint32_t l4_len,
		   uint8_t proto)
{
	uint8_t tail[8];
	uint32_t sum;

	wr32(tail, l4_len);
	tail[4] = 0;
	tail[5] = 0;
	tail[6] = 0;
	tail[7] = proto;
	sum = lb_csum_partial(src, 16, 0);
	sum = lb_csum_partial(dst, 16, sum);
	return lb_csum_partial(tail, sizeof(tail), sum);
}

bool
lb_pkt6_l4_csum_ok(const uint8_t *frame, const struct lb_pkt6 *pkt)
{
	uint32_t end = (uint32_t)pkt->l3_off + LB_IPV6_HDR_LEN + pkt->ip_plen;
	uint32_t l4_len = end - pkt->l4_off;
	uint32_t sum;

	if (pkt->flags & LB_PKT6_F_FRAG)
		return false;
	/* Zero is no checksum at all for UDP over IPv6 (8.1). */
	if (pkt->proto == LB_IPPROTO_UDP &&
	    rd16_raw(frame + pkt->l4_off + 6) == 0)
		return false;
	sum = lb_pkt6_pseudo_sum(pkt->src, pkt->dst, l4_len, pkt->proto);
	sum = lb_csum_partial(frame + pkt->l4_off, l4_len, sum);
	return lb_csum_fold(sum) == 0xffff;
}

int
lb_pkt6_skip_ext(const uint8_t *ip, uint32_t avail, uint8_t *proto)
{
	uint32_t off = LB_IPV6_HDR_LEN;
	uint8_t nh;

	if (avail < LB_IPV6_HDR_LEN)
		return -1;
	nh = ip[6];
	for (int n = 0;; n++) {
		const uint8_t *h = ip + off;
		uint32_t hlen;

		if (nh != LB_IPPROTO_HOPOPTS && nh != LB_IPPROTO_ROUTING &&
		    nh != LB_IPPROTO_DSTOPTS && nh != LB_IPPROTO_FRAGMENT)
			break;
		if (n == LB_PKT6_EXT_MAX || avail - off < 8)
			return -1;
		hlen = nh == LB_IPPROTO_FRAGMENT ? FRAG_HDR_LEN
						 : 8u * (h[1] + 1u);
		if (hlen > avail - off ||
		    (nh == LB_IPPROTO_FRAGMENT && (rd16(h + 2) & FRAG_OFFMASK)))
			return -1;
		nh = h[0];
		off += hlen;
	}
	*proto = nh;
	return (int)off;
}

static const char *const verdict_names[LB_PKT6_VERDICT_MAX] = {
	[LB_PKT6_OK] = "ipv6",
	[LB_PKT6_DROP_TRUNC_L2] = "trunc_l2",
	[LB_PKT6_DROP_ETHERTYPE] = "ethertype",
	[LB_PKT6_DROP_TRUNC_L3] = "ip6_trunc",
	[LB_PKT6_DROP_VERSION] = "ip6_version",
	[LB_PKT6_DROP_PLEN] = "ip6_plen",
	[LB_PKT6_DROP_ADDR] = "ip6_addr",
	[LB_PKT6_DROP_EXT_TRUNC] = "ip6_ext_trunc",
	[LB_PKT6_DROP_EXT_ORDER] = "ip6_ext_order",
	[LB_PKT6_DROP_EXT_MANY] = "ip6_ext_many",
	[LB_PKT6_DROP_EXT_OPT] = "ip6_ext_opt",
	[LB_PKT6_DROP_ROUTING] = "ip6_routing",
	[LB_PKT6_DROP_FRAG] = "ip6_frag",
	[LB_PKT6_DROP_FRAG_BAD] = "ip6_frag_bad",
	[LB_PKT6_DROP_PROTO] = "ip6_proto",
	[LB_PKT6_DROP_TCP_TRUNC] = "tcp_trunc",
	[LB_PKT6_DROP_TCP_FLAGS] = "tcp_flags",
	[LB_PKT6_DROP_UDP_TRUNC] = "udp_trunc",
	[LB_PKT6_DROP_UDP_LEN] = "udp_len",
	[LB_PKT6_DROP_UDP_CSUM0] = "udp_csum0",
	[LB_PKT6_DROP_ICMP_TRUNC] = "icmp6_trunc",
	[LB_PKT6_DROP_PORT_ZERO] = "port_zero",
};

const char *
lb_pkt6_verdict_name(enum lb_pkt6_verdict v)
{
	if ((unsigned int)v >= LB_PKT6_VERDICT_MAX)
		return "unknown";
	return verdict_names[v];
}
