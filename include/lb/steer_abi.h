/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_STEER_ABI_H
#define LB_STEER_ABI_H

/**
 * @file
 * Layout of the maps of the XDP steering program (bpf/steer.bpf.c), shared
 * by the program, the library that fills the maps (bpf/steer.c) and
 * anything that reads them. Types only: the BPF side cannot include libc
 * headers, so this header depends on <linux/types.h> alone.
 *
 * Addresses and ports are in network byte order unless a field says
 * otherwise. A pinned map outlives the process that made it, so a change
 * of any layout here must change the map's name too (or be preceded by
 * lb_steer_unpin()), else the next load refuses the old pinned map.
 */

#include <linux/types.h>

/** Entries of xsks_map: AF_XDP sockets by receive queue of the interface. */
#define LB_STEER_MAX_QUEUES 64
/** Default entries of steer_rules (and steer_rules6) and acl_v4 (and
 * acl_v6); both can be set at load. */
#define LB_STEER_RULES_DEFAULT 16384
#define LB_STEER_ACL_DEFAULT 65536
/**
 * Expired ACL entries the program looks past for one packet before it
 * gives up and treats the source as unlisted. lb_steer_acl_gc() removes
 * expired entries, so more than this many nested expired prefixes of one
 * address only exist between two collections.
 */
#define LB_STEER_ACL_DEPTH 4
/**
 * IPv6 extension headers (hop-by-hop, routing, destination options,
 * fragment) the program walks through to reach the protocol and port
 * that a narrow rule needs. A packet with more is judged unreadable
 * (pass_malformed): the bound keeps the program's loop within what the
 * verifier accepts, and the order RFC 8200 4.1 recommends has at most 5
 * of them.
 */
#define LB_STEER_IPV6_EXT_MAX 6

/** Who owns a steered address; chooses the counter of steered packets. */
enum lb_steer_kind {
	LB_STEER_KIND_VIP = 0,	 /**< a service address */
	LB_STEER_KIND_SNAT = 1,	 /**< a SNAT source: backends' replies */
	LB_STEER_KIND_LOCAL = 2, /**< the dataplane's own interface address */
	LB_STEER_KIND_MAX
};

/**
 * Key of steer_rules. Three shapes:
 * - {addr, 0, 0}: the address entry. Every address with a rule has one.
 *   With LB_STEER_F_ADDR set it steers every IPv4 packet for addr and every
 *   ARP packet whose target is addr; without it, it only says that
 *   narrower rules exist, so that traffic for other addresses (the host's)
 *   costs one lookup.
 * - {addr, port, proto}, port != 0: TCP or UDP to exactly that port.
 * - {addr, 0, proto}: every packet of proto for addr, restricted for TCP
 *   and UDP to the destination ports port_min..port_max of the value.
 */
struct lb_steer_key {
	__u32 addr; /**< IPv4 destination */
	__u16 port; /**< destination port, or 0 */
	__u8 proto; /**< IP protocol number, or 0 */
	__u8 pad;   /**< always 0: part of the hash */
};

/** The address entry steers the whole address (and ARP for it). */
#define LB_STEER_F_ADDR 0x1u

struct lb_steer_val {
	__u8 kind;	 /**< enum lb_steer_kind */
	__u8 flags;	 /**< LB_STEER_F_* (address entry only) */
	__u16 nb_narrow; /**< address entry: narrower rules of the address */
	__u16 port_min;	 /**< {addr, 0, proto} of TCP/UDP: host order */
	__u16 port_max;
};

/** What an ACL entry does to the packets of its source prefix (IPv4 in
 * acl_v4, IPv6 in acl_v6). */
enum lb_steer_acl_action {
	/** Drop every IPv4 (or IPv6) packet, the host's traffic included. */
	LB_STEER_ACL_DENY = 1,
	/** Drop only what would be steered to the dataplane; the host still
	 * hears the source (SSH, monitoring). */
	LB_STEER_ACL_DENY_LB = 2,
	/** An exception: lifts the deny of a shorter prefix. */
	LB_STEER_ACL_ALLOW = 3,
};

/** Key of the LPM trie acl_v4, as the kernel's LPM trie expects it. */
struct lb_steer_acl_key {
	__u32 prefixlen; /**< 0..32 */
	__u32 addr;	 /**< IPv4 source prefix, host bits zero */
};

struct lb_steer_acl_val {
	/** End of the entry's life on the clock of bpf_ktime_get_ns()
	 * (CLOCK_MONOTONIC, ns); 0 never expires. */
	__u64 expires_ns;
	__u8 action; /**< enum lb_steer_acl_action */
	/** The entry's own prefix length: an expired entry hides the
	 * shorter prefixes under it from one lookup, so the program looks
	 * again with a key of this length minus one. */
	__u8 prefixlen;
	/** enum lb_steer_acl_origin: who made the entry. The program does
	 * not read it; a byte of former padding, so 0 (manual) in maps
	 * pinned before it existed. */
	__u8 origin;
	__u8 pad[5];
};

/** Who made an ACL entry. */
enum lb_steer_acl_origin {
	LB_STEER_ACL_MANUAL = 0, /**< an operator (lbctl acl, lb-steer) */
	LB_STEER_ACL_AUTO = 1,	 /**< lb-control, for a rejected source */
};

/**
 * Key of steer_rules6, the IPv6 twin of steer_rules: the same three
 * shapes, the same value (struct lb_steer_val). The address entry with
 * LB_STEER_F_ADDR steers every IPv6 packet for addr and the neighbour
 * discovery for addr (solicitations whose target it is, the other
 * messages sent to it), as the IPv4 one does with ARP.
 */
struct lb_steer_key6 {
	__u8 addr[16]; /**< IPv6 destination */
	__u16 port;    /**< destination port, or 0 */
	__u8 proto;    /**< upper-layer protocol, past extension headers */
	__u8 pad;      /**< always 0: part of the hash */
};

/** Key of the LPM trie acl_v6; its value is struct lb_steer_acl_val. */
struct lb_steer_acl_key6 {
	__u32 prefixlen; /**< 0..128 */
	__u8 addr[16];	 /**< IPv6 source prefix, host bits zero */
};

/**
 * Counters of the per-CPU array "counters". Every packet adds to exactly
 * one verdict counter (PASS_* to XSK_*, DROP_*); the ACL_* counters are
 * events that come on top of the verdict.
 */
enum lb_steer_ctr {
	LB_STEER_CTR_PASS = 0,	     /**< IPv4 not for the dataplane */
	LB_STEER_CTR_PASS_ARP,	     /**< ARP or ND not for the dataplane */
	LB_STEER_CTR_PASS_IPV6,	     /**< IPv6 not for the dataplane */
	LB_STEER_CTR_PASS_OTHER,     /**< any other ethertype */
	LB_STEER_CTR_PASS_MALFORMED, /**< too short or invalid to judge */
	LB_STEER_CTR_PASS_NO_XSK,    /**< steered, no socket on the queue */
	LB_STEER_CTR_XSK_VIP,	     /**< to the dataplane: a VIP */
	LB_STEER_CTR_XSK_SNAT,	     /**< to the dataplane: a SNAT address */
	LB_STEER_CTR_XSK_LOCAL,	     /**< to the dataplane: its own address */
	LB_STEER_CTR_XSK_ARP,	     /**< to the dataplane: ARP or ND for it */
	LB_STEER_CTR_DROP_DENY,	     /**< dropped: LB_STEER_ACL_DENY */
	LB_STEER_CTR_DROP_DENY_LB,   /**< dropped: LB_STEER_ACL_DENY_LB */
	LB_STEER_CTR_ACL_ALLOW,	     /**< event: an allow entry matched */
	LB_STEER_CTR_ACL_EXPIRED,    /**< event: an expired entry looked past */
	LB_STEER_CTR_MAX
};

struct lb_steer_ctr_val {
	__u64 packets;
	__u64 bytes; /**< whole frames, Ethernet header included */
};

#endif /* LB_STEER_ABI_H */
