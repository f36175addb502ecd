/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_STEER_H
#define LB_STEER_H

/**
 * @file
 * The XDP steering program of a dataplane on net_af_xdp (bpf/steer.bpf.c,
 * described in docs/xdp.md): loading and attaching it, pinning its maps
 * per instance in bpffs, and filling them.
 *
 * Three users, three ways in:
 * - lb-dataplane starts its net_af_xdp ports with the program's object
 *   (lb_steer_write_obj(), then the PMD's xdp_prog= devarg), and once a
 *   port is up swaps in a copy whose maps are the instance's pinned ones
 *   (lb_steer_adopt()). A restart finds the rules, the ACL and the
 *   counters where the last run left them.
 * - lb-control and lbctl open the pinned maps alone
 *   (lb_steer_open_pinned()) to add steering rules and ACL entries and to
 *   read the counters; they never load a program.
 * - Tests and hosts without a dataplane load and attach it themselves
 *   (lb_steer_load(), lb_steer_attach()).
 *
 * Every map is written by one process at a time: an address entry counts
 * its narrower rules with a read-modify-write. Functions return 0 or a
 * negative errno unless they say otherwise. Addresses are in network byte
 * order (IPv4 as a uint32_t, IPv6 as 16 bytes); ports are in host order.
 * Each family has its own rules and ACL (the lb_steer_rule6_* and
 * lb_steer_acl6_* calls for IPv6); the counters are shared. The IPv6
 * calls return -EOPNOTSUPP on a handle of lb_steer_open_pinned() whose
 * directory a version without IPv6 pinned (until the dataplane's next
 * load adds the IPv6 maps).
 */

#include <stddef.h>
#include <stdint.h>

#include "lb/steer_abi.h"

/** Where the instances' directories live in bpffs. */
#define LB_STEER_PIN_ROOT "/sys/fs/bpf/sluice"
/** Name of the program (and of its function in the object). */
#define LB_STEER_PROG_NAME "lb_steer"

struct lb_steer;

struct lb_steer_conf {
	/** bpffs directory of the maps steer_rules, acl_v4, steer_rules6,
	 * acl_v6 and counters (made when missing): maps pinned there are
	 * used, missing ones are created and pinned. NULL keeps the maps
	 * private to the handle. */
	const char *pin_dir;
	/** Entries of steer_rules and acl_v4 when they are created (and of
	 * steer_rules6 and acl_v6 each); 0 for LB_STEER_RULES_DEFAULT and
	 * LB_STEER_ACL_DEFAULT. Maps found pinned keep their size. */
	uint32_t max_rules;
	uint32_t max_acl;
};

/**
 * Writes LB_STEER_PIN_ROOT "/" @p inst into @p buf.
 * @return 0, -EINVAL when @p inst is empty, ".", "..", longer than 64
 *   bytes or holds a '/', -ENOSPC when @p buf is too small.
 */
int lb_steer_pin_dir(char *buf, size_t len, const char *inst);

/**
 * Opens and loads the program; does not attach it.
 * @return 0 and *@p out; -EINVAL for a pinned map of another layout (an
 *   older version: lb_steer_unpin() it), -EPERM without CAP_BPF, or what
 *   the kernel says.
 */
int lb_steer_load(const struct lb_steer_conf *conf, struct lb_steer **out);

/**
 * Attaches a loaded program to @p ifindex. @p xdp_flags picks the mode
 * (XDP_FLAGS_DRV_MODE, XDP_FLAGS_SKB_MODE, or 0 for the driver's mode
 * when it has one); an interface that already has a program is refused
 * (-EBUSY), never replaced.
 */
int lb_steer_attach(struct lb_steer *s, int ifindex, uint32_t xdp_flags);

/**
 * Takes over the steering program that the net_af_xdp PMD attached to
 * @p ifindex from the object of lb_steer_write_obj(): loads a copy that
 * shares the PMD's xsks_map (so its sockets stay registered) and the
 * maps of @p conf, and swaps it in atomically. The PMD's copy kept empty
 * maps of its own, so until the swap the interface behaved as without a
 * program. The PMD detaches the program when it closes the port.
 * @return 0 and *@p out; -ENOENT when no program is attached, -EBUSY when
 *   the attached program is not a steering program, -EEXIST when it
 *   changed during the swap, or an error of lb_steer_load().
 */
int lb_steer_adopt(const struct lb_steer_conf *conf, int ifindex,
		   struct lb_steer **out);

/**
 * Detaches the program from the interface it was attached to by
 * lb_steer_attach() or lb_steer_adopt(), unless another program has
 * replaced it since. 0 when nothing of ours is attached.
 */
int lb_steer_detach(struct lb_steer *s);

/**
 * Forgets the attachment, so that lb_steer_close() leaves the program on
 * the interface: for a command that attaches and exits. The interface
 * keeps the program until lb_steer_detach_ifindex() or the PMD's close
 * removes it.
 */
void lb_steer_disown(struct lb_steer *s);

/**
 * Removes a steering program that a process which is gone (a crashed
 * dataplane) left attached to @p ifindex, so that the PMD can attach
 * again. It cannot tell a live dataplane's program from a dead one's:
 * call it only before starting the port. 0 when none is attached;
 * -EBUSY when the attached program is not a steering program (it is left
 * alone).
 */
int lb_steer_detach_ifindex(int ifindex);

/**
 * Opens the maps pinned in @p pin_dir without any program: what lb-control
 * and lbctl use.
 * @return 0 and *@p out, -ENOENT when a map is not pinned there, -EINVAL
 *   when one has another layout.
 */
int lb_steer_open_pinned(const char *pin_dir, struct lb_steer **out);

/** Detaches (lb_steer_detach()) and frees; pinned maps stay. NULL is a
 * no-op. */
void lb_steer_close(struct lb_steer *s);

/** Removes the pinned maps of @p pin_dir and the directory; maps still
 * used by a program live on until it goes. Missing ones are no error. */
int lb_steer_unpin(const char *pin_dir);

/**
 * Writes the program's ELF object (the one built into the library) to
 * @p path, for the PMD's xdp_prog= devarg; replaces @p path atomically.
 */
int lb_steer_write_obj(const char *path);

/**
 * The program's ELF object in an anonymous file (memfd, close-on-exec):
 * "/proc/self/fd/N" names it for xdp_prog= without leaving a file behind.
 * @return the descriptor (the caller closes it once the ports are up),
 *   or a negative errno.
 */
int lb_steer_obj_memfd(void);

/** Descriptors of the loaded program and its xsks_map; -1 for a handle of
 * lb_steer_open_pinned(). Owned by the handle. */
int lb_steer_prog_fd(const struct lb_steer *s);
int lb_steer_xsks_fd(const struct lb_steer *s);

/** A steering rule. */
struct lb_steer_rule {
	uint32_t addr; /**< IPv4 destination, network order */
	/**
	 * 0: every IPv4 packet for @p addr and ARP whose target is @p addr
	 * (ports must be 0); for an address the host does not have.
	 * IPPROTO_TCP, IPPROTO_UDP: the destination ports
	 * port_min..port_max; one port when they are equal, every port when
	 * both are 0. One range per address and protocol, any number of
	 * single ports. Any other protocol: all of it (ports must be 0).
	 * Narrow rules leave ARP and everything else for @p addr to the
	 * kernel: they are for an address the host shares.
	 */
	uint8_t proto;
	uint16_t port_min;
	uint16_t port_max;
	enum lb_steer_kind kind;
};

/**
 * Adds a rule. Packets a rule steers go to the dataplane's socket of the
 * queue they arrived on. A packet that several rules match goes by the
 * most specific: whole address, then single port, then range.
 * @return 0, -EINVAL for a bad rule or an address that cannot be a
 *   destination (0.0.0.0/8, multicast, class E, broadcast), -EEXIST when
 *   the same rule (same address, protocol and port, or range of that
 *   address and protocol) exists, -E2BIG when the map is full.
 */
int lb_steer_rule_add(struct lb_steer *s, const struct lb_steer_rule *r);

/** Removes the rule of the same address, protocol and ports (the kind is
 * not compared). -ENOENT when there is none. */
int lb_steer_rule_del(struct lb_steer *s, const struct lb_steer_rule *r);

/**
 * Calls @p cb for every rule, in no particular order; stops at the first
 * non-zero return of @p cb and returns it.
 */
int lb_steer_rule_walk(struct lb_steer *s,
		       int (*cb)(const struct lb_steer_rule *r, void *arg),
		       void *arg);

/** An entry of the source ACL. */
struct lb_steer_acl {
	uint32_t prefix; /**< network order, host bits zero */
	uint8_t prefixlen;
	enum lb_steer_acl_action action;
	uint64_t expires_ns; /**< lb_steer_now_ns() clock; 0: never */
	enum lb_steer_acl_origin origin;
};

/**
 * Sets the entry of @p prefix/@p prefixlen, replacing one that is there.
 * The longest live prefix covering a packet's source decides.
 * @param ttl_ns life from now, in ns; 0 for ever.
 * @return 0, -EINVAL (host bits set, length > 32, unknown action), -E2BIG
 *   when the ACL is full.
 */
int lb_steer_acl_set(struct lb_steer *s, uint32_t prefix, uint8_t prefixlen,
		     enum lb_steer_acl_action action, uint64_t ttl_ns);

/**
 * Sets the entry @p a (its expiry absolute, 0 for ever; its origin
 * kept), replacing one that is there. Errors as lb_steer_acl_set().
 */
int lb_steer_acl_put(struct lb_steer *s, const struct lb_steer_acl *a);

/**
 * The entry that decides for source @p addr (network order) at
 * @p now_ns, as the program finds it: the longest live prefix covering
 * it. -ENOENT when none does.
 */
int lb_steer_acl_match(struct lb_steer *s, uint32_t addr, uint64_t now_ns,
		       struct lb_steer_acl *out);

/** Removes an entry; -ENOENT when there is none. */
int lb_steer_acl_del(struct lb_steer *s, uint32_t prefix, uint8_t prefixlen);

/** Calls @p cb for every entry, expired ones included, like
 * lb_steer_rule_walk(). */
int lb_steer_acl_walk(struct lb_steer *s,
		      int (*cb)(const struct lb_steer_acl *a, void *arg),
		      void *arg);

/**
 * Removes the entries of both ACLs (IPv4 and IPv6) expired at @p now_ns
 * (lb_steer_now_ns() when 0). The program already ignores them; this
 * gives their room back and saves it the extra lookups.
 * @return the number removed, or a negative errno.
 */
int lb_steer_acl_gc(struct lb_steer *s, uint64_t now_ns);

/** A steering rule for an IPv6 destination, as struct lb_steer_rule for
 * IPv4. A whole-address rule (proto 0) also steers the neighbour
 * discovery for @p addr (solicitations whose target it is, the other
 * messages sent to it), as the IPv4 one steers ARP. */
struct lb_steer_rule6 {
	uint8_t addr[16]; /**< IPv6 destination */
	uint8_t proto;	  /**< upper-layer protocol (58 for ICMPv6) */
	uint16_t port_min;
	uint16_t port_max;
	enum lb_steer_kind kind;
};

/**
 * lb_steer_rule_add() for IPv6. -EINVAL also for an address that cannot
 * be a destination (::, ::1, multicast ff00::/8, IPv4-mapped
 * ::ffff:0:0/96); link-local addresses are allowed.
 */
int lb_steer_rule6_add(struct lb_steer *s, const struct lb_steer_rule6 *r);

/** lb_steer_rule_del() for IPv6. */
int lb_steer_rule6_del(struct lb_steer *s, const struct lb_steer_rule6 *r);

/** lb_steer_rule_walk() for IPv6. */
int lb_steer_rule6_walk(struct lb_steer *s,
			int (*cb)(const struct lb_steer_rule6 *r, void *arg),
			void *arg);

/** An entry of the IPv6 source ACL. */
struct lb_steer_acl6 {
	uint8_t prefix[16]; /**< host bits zero */
	uint8_t prefixlen;  /**< 0..128 */
	enum lb_steer_acl_action action;
	uint64_t expires_ns; /**< lb_steer_now_ns() clock; 0: never */
	enum lb_steer_acl_origin origin;
};

/** lb_steer_acl_set() for IPv6 (-EINVAL for a length > 128). */
int lb_steer_acl6_set(struct lb_steer *s, const uint8_t prefix[16],
		      uint8_t prefixlen, enum lb_steer_acl_action action,
		      uint64_t ttl_ns);

/** lb_steer_acl_put() for IPv6. */
int lb_steer_acl6_put(struct lb_steer *s, const struct lb_steer_acl6 *a);

/** lb_steer_acl_match() for IPv6. */
int lb_steer_acl6_match(struct lb_steer *s, const uint8_t addr[16],
			uint64_t now_ns, struct lb_steer_acl6 *out);

/** lb_steer_acl_del() for IPv6. */
int lb_steer_acl6_del(struct lb_steer *s, const uint8_t prefix[16],
		      uint8_t prefixlen);

/** lb_steer_acl_walk() for IPv6. */
int lb_steer_acl6_walk(struct lb_steer *s,
		       int (*cb)(const struct lb_steer_acl6 *a, void *arg),
		       void *arg);

/** The program's clock, bpf_ktime_get_ns(): CLOCK_MONOTONIC in ns. */
uint64_t lb_steer_now_ns(void);

/** Counters summed over the CPUs, indexed by enum lb_steer_ctr. */
struct lb_steer_stats {
	struct lb_steer_ctr_val ctr[LB_STEER_CTR_MAX];
};

int lb_steer_stats_read(struct lb_steer *s, struct lb_steer_stats *st);

/** Name of a counter ("pass", "xsk_vip", ...), NULL past the last. */
const char *lb_steer_ctr_name(unsigned int ctr);

#endif /* LB_STEER_H */
