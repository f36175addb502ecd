/* SPDX-License-Identifier: BSD-3-Clause */
/* Neighbour solicitations and advertisements: see dataplane/neigh/nd6.h. */
#include <errno.h>
#include <string.h>

#include "bytes.h"
#include "csum.h"
#include "nd6.h"

#define ETHER_HDR_LEN 14
#define VLAN_HDR_LEN 4
#define ND_MSG_LEN 24 /* type, code, checksum, flags/reserved, target */
#define ND_OPT_SLLA 1
#define ND_OPT_TLLA 2
#define ND_LLA_OPT_LEN 8

static const uint8_t all_nodes[16] = {0xff, 0x02, [15] = 1};

static int
mac_unicast(const uint8_t *mac)
{
	static const uint8_t zero[LB_ETHER_ADDR_LEN];

	return !(mac[0] & 1) && memcmp(mac, zero, LB_ETHER_ADDR_LEN) != 0;
}

static int
addr_unspecified(const uint8_t *a)
{
	static const uint8_t zero[16];

	return memcmp(a, zero, 16) == 0;
}

/* ff02::1:ffXX:XXXX, the solicited-node group of @p a (RFC 4291 2.7.1). */
static void
solicited_node(const uint8_t *a, uint8_t *out)
{
	static const uint8_t pfx[13] = {0xff, 0x02, [11] = 1, [12] = 0xff};

	memcpy(out, pfx, 13);
	memcpy(out + 13, a + 13, 3);
}

static int
is_solicited_node(const uint8_t *a)
{
	uint8_t sn[16];

	solicited_node(a, sn);
	return memcmp(a, sn, 16) == 0;
}

/* The Ethernet address of IPv6 multicast group @p a (RFC 2464 7). */
static void
mcast_mac(const uint8_t *a, uint8_t *mac)
{
	mac[0] = 0x33;
	mac[1] = 0x33;
	memcpy(mac + 2, a + 12, 4);
}

/*
 * Walks the options after the fixed part: every option at least 8 bytes
 * and within the message (RFC 4861 4.6); the link-layer option of @p want
 * must be Ethernet's (8 bytes) and is taken, the last one if several.
 */
static int
read_options(const uint8_t *o, uint32_t n, uint8_t want, struct lb_nd_msg *out)
{
	while (n > 0) {
		uint32_t olen;

		if (n < 2 || o[1] == 0)
			return -EINVAL;
		olen = 8u * o[1];
		if (olen > n)
			return -EINVAL;
		if (o[0] == want) {
			if (olen != ND_LLA_OPT_LEN)
				return -EINVAL;
			memcpy(out->lla, o + 2, LB_ETHER_ADDR_LEN);
			out->has_lla = 1;
		}
		o += olen;
		n -= olen;
	}
	return 0;
}

int
lb_nd_parse(const uint8_t *frame, uint32_t len, const struct lb_pkt6 *pkt,
	    struct lb_nd_msg *out)
{
	const uint8_t *m;
	uint32_t end, mlen, sum;
	int rc;

	if (frame == NULL || pkt == NULL || out == NULL)
		return -EINVAL;
	if (pkt->proto != LB_IPPROTO_ICMPV6)
		return -EPROTONOSUPPORT;
	end = (uint32_t)pkt->l3_off + LB_IPV6_HDR_LEN + pkt->ip_plen;
	if (pkt->l3_off < ETHER_HDR_LEN ||
	    pkt->l4_off < pkt->l3_off + LB_IPV6_HDR_LEN || end > len ||
	    pkt->l4_off + 8u > end)
		return -EINVAL;
	m = frame + pkt->l4_off;
	if (m[0] != LB_ND_NS && m[0] != LB_ND_NA)
		return -EPROTONOSUPPORT;
	mlen = end - pkt->l4_off;
	if (frame[pkt->l3_off + 7] != LB_ND_HOP_LIMIT || m[1] != 0 ||
	    mlen < ND_MSG_LEN || pkt->frag_hdr != 0)
		return -EINVAL;
	sum = lb_pkt6_pseudo_sum(frame + pkt->l3_off + 8,
				 frame + pkt->l3_off + 24, mlen,
				 LB_IPPROTO_ICMPV6);
	if (lb_csum_fold(lb_csum_partial(m, mlen, sum)) != 0xffff)
		return -EINVAL;
	if (m[8] == 0xff) /* a multicast target */
		return -EINVAL;

	memset(out, 0, sizeof(*out));
	out->type = m[0];
	memcpy(out->target, m + 8, 16);
	memcpy(out->src, frame + pkt->l3_off + 8, 16);
	memcpy(out->dst, frame + pkt->l3_off + 24, 16);
	memcpy(out->eth_src, frame + LB_ETHER_ADDR_LEN, LB_ETHER_ADDR_LEN);
	rc = read_options(m + ND_MSG_LEN, mlen - ND_MSG_LEN,
			  m[0] == LB_ND_NS ? ND_OPT_SLLA : ND_OPT_TLLA, out);
	if (rc != 0)
		return rc;
	if (out->type == LB_ND_NS) {
		out->dad = (uint8_t)addr_unspecified(out->src);
		if (out->dad && (!is_solicited_node(out->dst) || out->has_lla))
			return -EINVAL;
	} else {
		out->flags = m[4] & (LB_ND_F_ROUTER | LB_ND_F_SOLICITED |
				     LB_ND_F_OVERRIDE);
		if (out->dst[0] == 0xff && (out->flags & LB_ND_F_SOLICITED))
			return -EINVAL;
	}
	return 0;
}

/*
 * Writes the Ethernet, IPv6 and ICMPv6 headers of an ND message with one
 * link-layer option (type @p opt, @p link's MAC), its checksum computed.
 * @p buf holds at least the returned length; @p flags is the byte after
 * the checksum.
 */
static uint32_t
write_msg(uint8_t *buf, const struct lb_nat_link *link, const uint8_t *dmac,
	  const uint8_t *src, const uint8_t *dst, uint8_t type, uint8_t flags,
	  const uint8_t *target, uint8_t opt)
{
	uint32_t l3 = ETHER_HDR_LEN + (link->has_vlan ? VLAN_HDR_LEN : 0);
	uint32_t mlen = ND_MSG_LEN + ND_LLA_OPT_LEN, sum;
	uint8_t *ip = buf + l3, *m = ip + LB_IPV6_HDR_LEN;

	memset(buf, 0, l3 + LB_IPV6_HDR_LEN + mlen);
	memcpy(buf, dmac, LB_ETHER_ADDR_LEN);
	memcpy(buf + LB_ETHER_ADDR_LEN, link->mac, LB_ETHER_ADDR_LEN);
	if (link->has_vlan) {
		wr16(buf + 12, LB_ETHER_TYPE_VLAN);
		wr16(buf + 14, link->vlan_tci);
	}
	wr16(buf + l3 - 2, LB_ETHER_TYPE_IPV6);
	ip[0] = 0x60;
	wr16(ip + 4, (uint16_t)mlen);
	ip[6] = LB_IPPROTO_ICMPV6;
	ip[7] = LB_ND_HOP_LIMIT;
	memcpy(ip + 8, src, 16);
	memcpy(ip + 24, dst, 16);
	m[0] = type;
	m[4] = flags;
	memcpy(m + 8, target, 16);
	m[ND_MSG_LEN] = opt;
	m[ND_MSG_LEN + 1] = ND_LLA_OPT_LEN / 8;
	memcpy(m + ND_MSG_LEN + 2, link->mac, LB_ETHER_ADDR_LEN);
	sum = lb_pkt6_pseudo_sum(src, dst, mlen, LB_IPPROTO_ICMPV6);
	wr16_raw(m + 2, (uint16_t)~lb_csum_fold(lb_csum_partial(m, mlen, sum)));
	return l3 + LB_IPV6_HDR_LEN + mlen;
}

static int
room(const struct lb_nat_link *link, uint32_t cap)
{
	uint32_t need = ETHER_HDR_LEN + (link->has_vlan ? VLAN_HDR_LEN : 0) +
			LB_IPV6_HDR_LEN + ND_MSG_LEN + ND_LLA_OPT_LEN;

	return cap >= need;
}

int
lb_nd_na_answer(uint8_t *buf, uint32_t cap, const struct lb_nat_link *link,
		const struct lb_nd_msg *ns)
{
	uint8_t dmac[LB_ETHER_ADDR_LEN];

	if (buf == NULL || link == NULL || ns == NULL || ns->type != LB_ND_NS ||
	    !mac_unicast(link->mac))
		return -EINVAL;
	if (!room(link, cap))
		return -ENOSPC;
	if (ns->dad) {
		mcast_mac(all_nodes, dmac);
		return (int)write_msg(buf, link, dmac, ns->target, all_nodes,
				      LB_ND_NA, LB_ND_F_OVERRIDE, ns->target,
				      ND_OPT_TLLA);
	}
	memcpy(dmac, ns->has_lla ? ns->lla : ns->eth_src, LB_ETHER_ADDR_LEN);
	return (int)write_msg(buf, link, dmac, ns->target, ns->src, LB_ND_NA,
			      LB_ND_F_SOLICITED | LB_ND_F_OVERRIDE, ns->target,
			      ND_OPT_TLLA);
}

int
lb_nd_ns_build(uint8_t *buf, uint32_t cap, const struct lb_nat_link *link,
	       const uint8_t *src, const uint8_t *target,
	       const uint8_t *dst_mac)
{
	uint8_t dst[16], dmac[LB_ETHER_ADDR_LEN];

	if (buf == NULL || link == NULL || src == NULL || target == NULL ||
	    !mac_unicast(link->mac) || target[0] == 0xff ||
	    addr_unspecified(target) ||
	    (dst_mac != NULL && !mac_unicast(dst_mac)))
		return -EINVAL;
	if (!room(link, cap))
		return -ENOSPC;
	if (dst_mac != NULL) {
		memcpy(dst, target, 16);
		memcpy(dmac, dst_mac, LB_ETHER_ADDR_LEN);
	} else {
		solicited_node(target, dst);
		mcast_mac(dst, dmac);
	}
	return (int)write_msg(buf, link, dmac, src, dst, LB_ND_NS, 0, target,
			      ND_OPT_SLLA);
}

int
lb_nd_na_announce(uint8_t *buf, uint32_t cap, const struct lb_nat_link *link,
		  const uint8_t *addr)
{
	uint8_t dmac[LB_ETHER_ADDR_LEN];

	if (buf == NULL || link == NULL || addr == NULL ||
	    !mac_unicast(link->mac) || addr[0] == 0xff ||
	    addr_unspecified(addr))
		return -EINVAL;
	if (!room(link, cap))
		return -ENOSPC;
	mcast_mac(all_nodes, dmac);
	return (int)write_msg(buf, link, dmac, addr, all_nodes, LB_ND_NA,
			      LB_ND_F_OVERRIDE, addr, ND_OPT_TLLA);
}
