/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * XDP steering for a dataplane on net_af_xdp that shares its NIC with the
 * kernel. Per frame, in the driver:
 *
 * 1. IPv4 or IPv6 from a source the ACL of its family denies is dropped
 *    (an allow entry on a longer prefix makes an exception; expired
 *    entries are looked past).
 * 2. IPv4 or IPv6 for an address or port in steer_rules or steer_rules6,
 *    and ARP or neighbour discovery for a steered address, goes to the
 *    AF_XDP socket of the receive queue (xsks_map, filled by the
 *    net_af_xdp PMD).
 * 3. Everything else passes to the kernel untouched: the host's own
 *    addresses, other ethertypes, and frames too short or too broken to
 *    judge (the kernel drops those itself and counts them).
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
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LB_STEER_RULES_DEFAULT);
	__type(key, struct lb_steer_key6);
	__type(value, struct lb_steer_val);
} steer_rules6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, LB_STEER_ACL_DEFAULT);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct lb_steer_acl_key6);
	__type(value, struct lb_steer_acl_val);
} acl_v6 SEC(".maps");

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

/* The fixed IPv6 header (RFC 8200), addresses as bytes: they are only
 * copied into map keys. */
struct ip6_hdr {
	__u8 vtc; /* version and the top of the traffic class */
	__u8 tc_flow[3];
	__be16 plen;
	__u8 nexthdr;
	__u8 hlim;
	__u8 saddr[16];
	__u8 daddr[16];
};

/* Hop-by-hop, routing and destination options start alike (RFC 8200
 * 4.3-4.6): the next header, then the length in 8-byte units past the
 * first 8. */
struct ip6_ext {
	__u8 nexthdr;
	__u8 len;
};

struct ip6_frag {
	__u8 nexthdr;
	__u8 reserved;
	__be16 off; /* offset in 8-byte units << 3, flags below */
	__be32 id;
};

/* A neighbour solicitation or advertisement (RFC 4861 4.3, 4.4); router
 * solicitations, advertisements and redirects share the first 4 bytes. */
struct nd_msg {
	__u8 type;
	__u8 code;
	__be16 csum;
	__be32 flags;
	__u8 target[16];
};

#define IP6_HOPOPTS 0
#define IP6_ROUTING 43
#define IP6_FRAGMENT 44
#define IP6_ICMP 58
#define IP6_DSTOPTS 60
#define ND_ROUTER_SOLICIT 133
#define ND_NEIGH_SOLICIT 135
#define ND_REDIRECT 137

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
 * The longest live entry of the ACL @p acl covering the source in @p k,
 * whose prefixlen (its first field in both families' keys) is the
 * address's full length @p maxlen. An expired entry is not deleted here
 * (user space collects them) but looked past: the next lookup asks for
 * prefixes shorter than the expired one, so a live /8 deny still holds
 * under an expired /24 allow or deny.
 */
static __always_inline enum acl_verdict
acl_lookup(void *acl, __u32 *k, __u32 maxlen, __u64 bytes)
{
	__u64 now = 0;

	for (int i = 0; i < LB_STEER_ACL_DEPTH; i++) {
		struct lb_steer_acl_val *v = bpf_map_lookup_elem(acl, k);

		if (v == NULL)
			return ACL_NONE;
		if (v->expires_ns != 0) {
			if (now == 0)
				now = bpf_ktime_get_ns();
			if (v->expires_ns <= now) {
				count(LB_STEER_CTR_ACL_EXPIRED, bytes);
				if (v->prefixlen == 0 || v->prefixlen > maxlen)
					return ACL_NONE;
				*k = v->prefixlen - 1;
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

static __always_inline enum acl_verdict
acl_check(__u32 saddr, __u64 bytes)
{
	struct lb_steer_acl_key k = {.prefixlen = 32, .addr = saddr};

	return acl_lookup(&acl_v4, &k.prefixlen, 32, bytes);
}

static __always_inline enum acl_verdict
acl_check6(const __u8 *saddr, __u64 bytes)
{
	struct lb_steer_acl_key6 k = {.prefixlen = 128};

	__builtin_memcpy(k.addr, saddr, sizeof(k.addr));
	return acl_lookup(&acl_v6, &k.prefixlen, 128, bytes);
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

/*
 * The narrow rule of @p rules for a packet of @p proto whose upper-layer
 * header is at @p l4, once the address entry said that narrow rules
 * exist. @p k is the key with its address set; @p kport and @p kproto are
 * its fields. NULL when none steers it; *@p bad when a port rule would
 * decide but the ports are cut off.
 */
static __always_inline struct lb_steer_val *
narrow_rule(void *rules, void *k, __u16 *kport, __u8 *kproto, __u8 proto,
	    void *l4, void *end, int *bad)
{
	struct lb_steer_val *r;
	__u16 *ports = l4;
	__u16 dport;

	*kproto = proto;
	if (proto != IPPROTO_TCP && proto != IPPROTO_UDP)
		return bpf_map_lookup_elem(rules, k);
	if ((void *)(ports + 2) > end) {
		*bad = 1;
		return NULL;
	}
	*kport = ports[1];
	r = bpf_map_lookup_elem(rules, k);
	if (r != NULL)
		return r;
	*kport = 0;
	r = bpf_map_lookup_elem(rules, k);
	if (r == NULL)
		return NULL;
	dport = bpf_ntohs(ports[1]);
	if (dport < r->port_min || dport > r->port_max)
		return NULL;
	return r;
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
	int bad = 0;

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
	r = narrow_rule(&steer_rules, &k, &k.port, &k.proto, ip->protocol,
			l3 + hlen, end, &bad);
	if (bad)
		return verdict(LB_STEER_CTR_PASS_MALFORMED, bytes, XDP_PASS);
	if (r == NULL)
		return verdict(LB_STEER_CTR_PASS, bytes, XDP_PASS);

steered:
	if (acl == ACL_DENY_LB)
		return verdict(LB_STEER_CTR_DROP_DENY_LB, bytes, XDP_DROP);
	return steer(ctx, kind_ctr(r), bytes);
}

/*
 * Neighbour discovery, IPv6's ARP. A neighbour solicitation names the
 * address it asks about in its target (it is sent to that address's
 * solicited-node multicast group, or to the address itself). The other
 * messages are for their destination when it is unicast: an
 * advertisement answering one of the dataplane's solicitations, a router
 * advertisement answering its router solicitation, a redirect. Those
 * naming a whole-address rule's address go to the dataplane; the rest
 * (the host's, multicast to all nodes or routers) stay with the kernel.
 * Like ARP, it is not judged by the ACL: a denied source's solicitation
 * still reaches its target.
 */
static __always_inline int
do_nd(struct xdp_md *ctx, struct ip6_hdr *ip, struct nd_msg *nd, void *end,
      __u64 bytes)
{
	struct lb_steer_key6 k = {};
	struct lb_steer_val *r;

	if (nd->type == ND_NEIGH_SOLICIT) {
		if ((void *)(nd + 1) > end)
			return verdict(LB_STEER_CTR_PASS_MALFORMED, bytes,
				       XDP_PASS);
		__builtin_memcpy(k.addr, nd->target, sizeof(k.addr));
	} else if (ip->daddr[0] != 0xff) {
		__builtin_memcpy(k.addr, ip->daddr, sizeof(k.addr));
	} else {
		return verdict(LB_STEER_CTR_PASS_ARP, bytes, XDP_PASS);
	}
	r = bpf_map_lookup_elem(&steer_rules6, &k);
	if (r == NULL || !(r->flags & LB_STEER_F_ADDR))
		return verdict(LB_STEER_CTR_PASS_ARP, bytes, XDP_PASS);
	return steer(ctx, LB_STEER_CTR_XSK_ARP, bytes);
}

/*
 * Past the extension headers that may precede the upper-layer header of
 * a packet (RFC 8200 4.1), at most LB_STEER_IPV6_EXT_MAX of them: the
 * upper-layer protocol in *@p proto and where its header starts, or NULL
 * and *@p later for a fragment other than the first (no port in it), or
 * NULL for a chain cut short or too long.
 */
static __always_inline void *
ip6_upper(struct ip6_hdr *ip, void *end, __u8 *proto, int *later)
{
	void *p = ip + 1;
	__u8 nh = ip->nexthdr;

	/* One more round than headers: the last one finds the protocol. */
	for (int i = 0; i <= LB_STEER_IPV6_EXT_MAX; i++) {
		if (nh == IP6_HOPOPTS || nh == IP6_ROUTING ||
		    nh == IP6_DSTOPTS) {
			struct ip6_ext *e = p;

			if ((void *)(e + 1) > end)
				return NULL;
			nh = e->nexthdr;
			p += ((__u32)e->len + 1) * 8;
		} else if (nh == IP6_FRAGMENT) {
			struct ip6_frag *f = p;

			if ((void *)(f + 1) > end)
				return NULL;
			if (f->off & bpf_htons(0xfff8)) {
				*later = 1;
				return NULL;
			}
			nh = f->nexthdr;
			p = f + 1;
		} else {
			*proto = nh;
			return p;
		}
	}
	return NULL;
}

static __always_inline int
do_ipv6(struct xdp_md *ctx, void *l3, void *end, __u64 bytes)
{
	struct ip6_hdr *ip = l3;
	struct lb_steer_key6 k = {};
	struct lb_steer_val *r;
	enum acl_verdict acl;
	int bad = 0, later = 0;
	__u8 proto = 0;
	void *l4;

	if ((void *)(ip + 1) > end || (ip->vtc >> 4) != 6)
		return verdict(LB_STEER_CTR_PASS_MALFORMED, bytes, XDP_PASS);
	/* Neighbour discovery is looked for straight after the fixed
	 * header only: it is never fragmented (RFC 6980) and comes without
	 * other extension headers in practice. Behind one it is judged as
	 * any ICMPv6, by the ACL and the destination. */
	if (ip->nexthdr == IP6_ICMP) {
		struct nd_msg *nd = (void *)(ip + 1);

		if ((void *)nd + 1 <= end &&
		    nd->type >= ND_ROUTER_SOLICIT && nd->type <= ND_REDIRECT)
			return do_nd(ctx, ip, nd, end, bytes);
	}

	/* The source is in the fixed header: a chain of extension headers
	 * cannot hide it from the ACL. */
	acl = acl_check6(ip->saddr, bytes);
	if (acl == ACL_DENY)
		return verdict(LB_STEER_CTR_DROP_DENY, bytes, XDP_DROP);

	__builtin_memcpy(k.addr, ip->daddr, sizeof(k.addr));
	r = bpf_map_lookup_elem(&steer_rules6, &k);
	if (r == NULL)
		return verdict(LB_STEER_CTR_PASS_IPV6, bytes, XDP_PASS);
	if (r->flags & LB_STEER_F_ADDR)
		goto steered;

	/* As for IPv4: a later fragment of a shared address, which carries
	 * no port, stays with the kernel, which can reassemble it. */
	l4 = ip6_upper(ip, end, &proto, &later);
	if (later)
		return verdict(LB_STEER_CTR_PASS_IPV6, bytes, XDP_PASS);
	if (l4 == NULL)
		return verdict(LB_STEER_CTR_PASS_MALFORMED, bytes, XDP_PASS);
	r = narrow_rule(&steer_rules6, &k, &k.port, &k.proto, proto, l4, end,
			&bad);
	if (bad)
		return verdict(LB_STEER_CTR_PASS_MALFORMED, bytes, XDP_PASS);
	if (r == NULL)
		return verdict(LB_STEER_CTR_PASS_IPV6, bytes, XDP_PASS);

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
		return do_ipv6(ctx, l3, end, bytes);
	return verdict(LB_STEER_CTR_PASS_OTHER, bytes, XDP_PASS);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
