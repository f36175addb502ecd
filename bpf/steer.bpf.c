/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * XDP steering for a dataplane on net_af_xdp that shares its NIC with the
 * kernel. Per frame, in the driver:
 *
 * 1. IPv4 from a source the ACL denies is dropped (an allow entry on a
 *    longer prefix makes an exception; expired entries are looked past).
 * 2. IPv4 for an address or port in steer_rules, and ARP whose target is
 *    a steered address, goes to the AF_XDP socket of the receive queue
 *    (xsks_map, filled by the net_af_xdp PMD).
 * 3. Everything else passes to the kernel untouched: the host's own
 *    addresses, IPv6, other ethertypes, and frames too short or too broken
 *    to judge (the kernel drops those itself and counts them).
 *
 * The program never writes to the frame and never drops anything but
 * denied sources. Map layouts are in include/lb/steer_abi.h.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "lb/steer_abi.h"

/* The PMD looks this map up by name and puts the socket of each queue it
 * drives at the index of that queue. */
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, LB_STEER_MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} xsks_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LB_STEER_RULES_DEFAULT);
	__type(key, struct lb_steer_key);
	__type(value, struct lb_steer_val);
} steer_rules SEC(".maps");

/* The kernel requires BPF_F_NO_PREALLOC of an LPM trie. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, LB_STEER_ACL_DEFAULT);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct lb_steer_acl_key);
	__type(value, struct lb_steer_acl_val);
} acl_v4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LB_STEER_CTR_MAX);
	__type(key, __u32);
	__type(value, struct lb_steer_ctr_val);
} counters SEC(".maps");

struct vlan_hdr {
	__be16 tci;
	__be16 proto;
};

/* ARP for IPv4 over Ethernet (RFC 826), the only kind we steer. */
struct arp_eth_ip {
	__be16 htype;
	__be16 ptype;
	__u8 hlen;
	__u8 plen;
	__be16 op;
	__u8 sha[ETH_ALEN];
	__be32 spa;
	__u8 tha[ETH_ALEN];
	__be32 tpa;
} __attribute__((packed));

/* What the ACL says about a source. */
enum acl_verdict {
	ACL_NONE = 0,
	ACL_DENY = LB_STEER_ACL_DENY,
	ACL_DENY_LB = LB_STEER_ACL_DENY_LB,
};

static __always_inline void
count(__u32 ctr, __u64 bytes)
{
	struct lb_steer_ctr_val *v = bpf_map_lookup_elem(&counters, &ctr);

	/* Per-CPU: no other CPU writes this slot, plain adds suffice. */
	if (v != NULL) {
		v->packets++;
		v->bytes += bytes;
	}
}

static __always_inline int
verdict(__u32 ctr, __u64 bytes, int action)
{
	count(ctr, bytes);
	return action;
}

/*
 * The longest live ACL entry covering saddr. An expired entry is not
 * deleted here (user space collects them) but looked past: the next
 * lookup asks for prefixes shorter than the expired one, so a live /8
 * deny still holds under an expired /24 allow or deny.
 */
static __always_inline enum acl_verdict
acl_check(__u32 saddr, __u64 bytes)
{
	struct lb_steer_acl_key k = {.prefixlen = 32, .addr = saddr};
	__u64 now = 0;

	for (int i = 0; i < LB_STEER_ACL_DEPTH; i++) {
		struct lb_steer_acl_val *v = bpf_map_lookup_elem(&acl_v4, &k);

		if (v == NULL)
			return ACL_NONE;
		if (v->expires_ns != 0) {
			if (now == 0)
				now = bpf_ktime_get_ns();
			if (v->expires_ns <= now) {
				count(LB_STEER_CTR_ACL_EXPIRED, bytes);
				if (v->prefixlen == 0 || v->prefixlen > 32)
					return ACL_NONE;
				k.prefixlen = v->prefixlen - 1;
				continue;
			}
		}
		if (v->action == LB_STEER_ACL_DENY)
			return ACL_DENY;
		if (v->action == LB_STEER_ACL_DENY_LB)
			return ACL_DENY_LB;
		count(LB_STEER_CTR_ACL_ALLOW, bytes);
		return ACL_NONE;
	}
	return ACL_NONE;
}

/* Hands the frame to the dataplane's socket of this queue. With no socket
 * there (the dataplane is down, or drives other queues) the frame falls
 * back to the kernel rather than vanishing. */
static __always_inline int
steer(struct xdp_md *ctx, __u32 ctr, __u64 bytes)
{
	int rc = bpf_redirect_map(&xsks_map, ctx->rx_queue_index, XDP_PASS);

	count(rc == XDP_REDIRECT ? ctr : LB_STEER_CTR_PASS_NO_XSK, bytes);
	return rc;
}

static __always_inline __u32
kind_ctr(const struct lb_steer_val *r)
{
	if (r->kind >= LB_STEER_KIND_MAX)
		return LB_STEER_CTR_XSK_LOCAL;
	return LB_STEER_CTR_XSK_VIP + r->kind;
}

static __always_inline int
do_arp(struct xdp_md *ctx, void *l3, void *end, __u64 bytes)
{
	struct arp_eth_ip *a = l3;
	struct lb_steer_key k = {};
	struct lb_steer_val *r;

	if ((void *)(a + 1) > end || a->htype != bpf_htons(1) ||
	    a->ptype != bpf_htons(ETH_P_IP) || a->hlen != ETH_ALEN ||
	    a->plen != 4)
		return verdict(LB_STEER_CTR_PASS_MALFORMED, bytes, XDP_PASS);
	/* Requests for our addresses and replies to our own requests both
	 * carry one of our addresses as the target. */
	k.addr = a->tpa;
	r = bpf_map_lookup_elem(&steer_rules, &k);
	if (r == NULL || !(r->flags & LB_STEER_F_ADDR))
		return verdict(LB_STEER_CTR_PASS_ARP, bytes, XDP_PASS);
	return steer(ctx, LB_STEER_CTR_XSK_ARP, bytes);
}

static __always_inline int
do_ipv4(struct xdp_md *ctx, void *l3, void *end, __u64 bytes)
{
	struct iphdr *ip = l3;
	struct lb_steer_key k = {};
	struct lb_steer_val *r;
	enum acl_verdict acl;
	__u32 hlen;
	__u16 *ports;

	if ((void *)(ip + 1) > end || ip->version != 4 || ip->ihl < 5)
		return verdict(LB_STEER_CTR_PASS_MALFORMED, bytes, XDP_PASS);
	hlen = ip->ihl * 4;
	if (l3 + hlen > end)
		return verdict(LB_STEER_CTR_PASS_MALFORMED, bytes, XDP_PASS);

	acl = acl_check(ip->saddr, bytes);
	if (acl == ACL_DENY)
		return verdict(LB_STEER_CTR_DROP_DENY, bytes, XDP_DROP);

	/* The address entry: one lookup decides for the host's traffic. */
	k.addr = ip->daddr;
	r = bpf_map_lookup_elem(&steer_rules, &k);
	if (r == NULL)
		return verdict(LB_STEER_CTR_PASS, bytes, XDP_PASS);
	if (r->flags & LB_STEER_F_ADDR)
		goto steered;

	/* Narrower rules need the protocol, and for TCP and UDP the port,
	 * which a later fragment does not carry: fragments of a shared
	 * address stay with the kernel, which can reassemble them. */
	if (ip->frag_off & bpf_htons(0x1fff))
		return verdict(LB_STEER_CTR_PASS, bytes, XDP_PASS);
	k.proto = ip->protocol;
	if (k.proto == IPPROTO_TCP || k.proto == IPPROTO_UDP) {
		__u16 dport;

		ports = l3 + hlen;
		if ((void *)(ports + 2) > end)
			return verdict(LB_STEER_CTR_PASS_MALFORMED, bytes,
				       XDP_PASS);
		k.port = ports[1];
		r = bpf_map_lookup_elem(&steer_rules, &k);
		if (r != NULL)
			goto steered;
		k.port = 0;
		r = bpf_map_lookup_elem(&steer_rules, &k);
		if (r == NULL)
			return verdict(LB_STEER_CTR_PASS, bytes, XDP_PASS);
		dport = bpf_ntohs(ports[1]);
		if (dport < r->port_min || dport > r->port_max)
			return verdict(LB_STEER_CTR_PASS, bytes, XDP_PASS);
		goto steered;
	}
	r = bpf_map_lookup_elem(&steer_rules, &k);
	if (r == NULL)
		return verdict(LB_STEER_CTR_PASS, bytes, XDP_PASS);

steered:
	if (acl == ACL_DENY_LB)
		return verdict(LB_STEER_CTR_DROP_DENY_LB, bytes, XDP_DROP);
	return steer(ctx, kind_ctr(r), bytes);
}

SEC("xdp")
int
lb_steer(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u64 bytes = end - data;
	struct ethhdr *eth = data;
	void *l3 = eth + 1;
	__be16 proto;

	if (l3 > end)
		return verdict(LB_STEER_CTR_PASS_MALFORMED, bytes, XDP_PASS);
	proto = eth->h_proto;
	/* One VLAN tag, as the dataplane's parser allows. */
	if (proto == bpf_htons(ETH_P_8021Q) ||
	    proto == bpf_htons(ETH_P_8021AD)) {
		struct vlan_hdr *vh = l3;

		if ((void *)(vh + 1) > end)
			return verdict(LB_STEER_CTR_PASS_MALFORMED, bytes,
				       XDP_PASS);
		proto = vh->proto;
		l3 = vh + 1;
	}
	if (proto == bpf_htons(ETH_P_IP))
		return do_ipv4(ctx, l3, end, bytes);
	if (proto == bpf_htons(ETH_P_ARP))
		return do_arp(ctx, l3, end, bytes);
	if (proto == bpf_htons(ETH_P_IPV6))
		return verdict(LB_STEER_CTR_PASS_IPV6, bytes, XDP_PASS);
	return verdict(LB_STEER_CTR_PASS_OTHER, bytes, XDP_PASS);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
