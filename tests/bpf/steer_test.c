/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The XDP steering program as the kernel runs it: table rows of {frame,
 * expected verdict, expected counter changes} through BPF_PROG_TEST_RUN,
 * then the library (rules, ACL, pins found again after a restart,
 * adopting a PMD's program, attaching) and live frames on a loopback
 * device with the program attached.
 *
 * Needs root for BPF and runs in a network namespace of its own, so the
 * only interface it touches is its private loopback.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/ip.h>
#include <net/if.h>
#include <netinet/in.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cmocka.h>

#include "lb/steer.h"
#include "lb/steer_sync.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif
#define BPF_FS_MAGIC_NR 0xcafe4a11

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define IP(a, b, c, d) \
	((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

/* ---- frames ---------------------------------------------------------- */

enum { T_IP4 = 0, T_ARP, T_IP6, T_OTHER };

/** A frame to build; addresses in host order. */
struct pkt {
	int type;        /**< T_* */
	uint16_t vlan;   /**< one 802.1Q tag with this VID when non-zero */
	uint32_t src;    /**< IPv4 source, or the ARP sender */
	uint32_t dst;    /**< IPv4 destination, or the ARP target */
	uint8_t proto;   /**< IPv4 protocol (TCP when 0) */
	uint16_t sport;
	uint16_t dport;
	uint8_t ihl;     /**< 0: 5 */
	uint8_t version; /**< 0: 4 */
	uint16_t frag;   /**< frag_off, host order */
	uint8_t arp_hlen; /**< 0: 6 */
	uint16_t cut;    /**< keep this many bytes when non-zero */
	/* T_IP6 only */
	const char *src6; /**< NULL: 2001:db8::1 */
	const char *dst6; /**< NULL: 2001:db8::2 */
	/** Extension headers before the upper layer, in order: h, d, r
	 * (hop-by-hop, destination options, routing, 8 bytes each), H (a
	 * 16-byte hop-by-hop), f (first fragment), F (a later one). */
	const char *ext;
	uint8_t nd;          /**< ICMPv6 type when proto is 58 (0: echo) */
	const char *target6; /**< a solicitation's or advertisement's */
};

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static uint16_t
ip_csum(const uint8_t *p, size_t len)
{
	uint32_t s = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static void
addr6(const char *s, const char *dflt, uint8_t *out)
{
	assert_int_equal(inet_pton(AF_INET6, s ? s : dflt, out), 1);
}

static uint8_t
ext_type(char c)
{
	switch (c) {
	case 'h':
	case 'H':
		return 0;
	case 'd':
		return 60;
	case 'r':
		return 43;
	default:
		return 44; /* f, F */
	}
}

/* The IPv6 part of build(), from @p n on; returns the end. */
static size_t
build6(const struct pkt *k, uint8_t *buf, size_t n)
{
	const char *ext = k->ext ? k->ext : "";
	uint8_t proto = k->proto ? k->proto : IPPROTO_UDP;
	size_t l3 = n;

	buf[n] = (uint8_t)((k->version ? k->version : 6) << 4);
	buf[n + 6] = ext[0] ? ext_type(ext[0]) : proto;
	buf[n + 7] = proto == IPPROTO_ICMPV6 && k->nd ? 255 : 64;
	addr6(k->src6, "2001:db8::1", buf + n + 8);
	addr6(k->dst6, "2001:db8::2", buf + n + 24);
	n += 40;
	for (size_t i = 0; ext[i] != '\0'; i++) {
		uint8_t next = ext[i + 1] ? ext_type(ext[i + 1]) : proto;

		buf[n] = next;
		if (ext[i] == 'f' || ext[i] == 'F') {
			/* offset 0 with more-fragments, or offset 185 */
			put16(buf + n + 2, ext[i] == 'f' ? 0x0001 : 185 << 3);
			put32(buf + n + 4, 0x1234);
			n += 8;
		} else if (ext[i] == 'H') {
			buf[n + 1] = 1;
			buf[n + 2] = 1; /* PadN of 12 */
			buf[n + 3] = 12;
			n += 16;
		} else {
			buf[n + 2] = 1; /* PadN of 4 */
			buf[n + 3] = 4;
			n += 8;
		}
	}
	if (proto == IPPROTO_ICMPV6) {
		buf[n] = k->nd ? k->nd : 128; /* echo request */
		if (k->target6 != NULL) {
			addr6(k->target6, NULL, buf + n + 8);
			n += 24;
		} else {
			n += 8;
		}
	} else {
		put16(buf + n, k->sport ? k->sport : 5353);
		put16(buf + n + 2, k->dport ? k->dport : 5353);
		if (proto == IPPROTO_TCP) {
			buf[n + 12] = 5 << 4;
			buf[n + 13] = 0x02; /* SYN */
			n += 20;
		} else {
			put16(buf + n + 4, 8);
			n += 8;
		}
	}
	put16(buf + l3 + 4, (uint16_t)(n - l3 - 40));
	return n;
}

/* Builds @p k into @p buf (at least 256 bytes); returns its length. */
static size_t
build(const struct pkt *k, uint8_t *buf)
{
	static const uint8_t dmac[6] = { 0x02, 0, 0, 0, 0, 0x01 };
	static const uint8_t smac[6] = { 0x02, 0, 0, 0, 0, 0x02 };
	uint16_t type;
	size_t n = 12, l3;

	memset(buf, 0, 256);
	memcpy(buf, dmac, 6);
	memcpy(buf + 6, smac, 6);
	switch (k->type) {
	case T_ARP:
		type = ETH_P_ARP;
		break;
	case T_IP6:
		type = ETH_P_IPV6;
		break;
	case T_OTHER:
		type = 0x88cc; /* LLDP */
		break;
	default:
		type = ETH_P_IP;
	}
	if (k->vlan != 0) {
		put16(buf + n, ETH_P_8021Q);
		put16(buf + n + 2, k->vlan);
		n += 4;
	}
	put16(buf + n, type);
	n += 2;
	l3 = n;
	if (k->type == T_ARP) {
		uint8_t hl = k->arp_hlen ? k->arp_hlen : 6;

		put16(buf + n, 1);
		put16(buf + n + 2, ETH_P_IP);
		buf[n + 4] = hl;
		buf[n + 5] = 4;
		put16(buf + n + 6, 1); /* request */
		memcpy(buf + n + 8, smac, 6);
		put32(buf + n + 14, k->src);
		put32(buf + n + 24, k->dst);
		n += 28;
	} else if (k->type == T_IP6) {
		n = build6(k, buf, n);
	} else if (k->type == T_OTHER) {
		n += 46;
	} else {
		uint8_t ihl = k->ihl ? k->ihl : 5;
		uint8_t proto = k->proto ? k->proto : IPPROTO_TCP;
		size_t hl = (size_t)ihl * 4, l4len;

		l4len = proto == IPPROTO_TCP ? 20 : 8;
		buf[n] = (uint8_t)((k->version ? k->version : 4) << 4 |
				   (ihl & 0xf));
		put16(buf + n + 2, (uint16_t)(hl + l4len));
		put16(buf + n + 6, k->frag);
		buf[n + 8] = 64;
		buf[n + 9] = proto;
		put32(buf + n + 12, k->src);
		put32(buf + n + 16, k->dst);
		if (hl > 20 && hl <= 60)
			memset(buf + n + 20, 1, hl - 20); /* NOP options */
		if (hl >= 20 && hl <= 60)
			put16(buf + n + 10, ip_csum(buf + n, hl));
		n += hl;
		if (proto == IPPROTO_ICMP) {
			buf[n] = 8; /* echo request */
		} else {
			put16(buf + n, k->sport);
			put16(buf + n + 2, k->dport);
			if (proto == IPPROTO_TCP) {
				buf[n + 12] = 5 << 4;
				buf[n + 13] = 0x02; /* SYN */
			} else {
				put16(buf + n + 4, 8);
			}
		}
		n += l4len;
	}
	(void)l3;
	if (n < 60)
		n = 60; /* what a NIC delivers at least */
	if (k->cut != 0 && k->cut < n)
		n = k->cut;
	return n;
}

/* ---- the table ------------------------------------------------------- */

/* The plan the fixture installs. */
#define VIP_PORT IP(10, 0, 0, 100)  /* tcp:80 only (narrow) */
#define VIP_ALL IP(10, 0, 0, 101)   /* whole address */
#define LOCAL IP(10, 0, 0, 1)       /* the dataplane's address */
#define SNAT IP(10, 0, 1, 2)        /* whole address, SNAT */
#define SHARED IP(10, 0, 0, 5)      /* host's address: tcp:8080 vip, udp */
				    /* 40000-40999 snat */
#define HOST IP(10, 0, 0, 6)        /* no rule at all */
#define CLIENT IP(198, 18, 0, 7)
#define BACKEND IP(10, 0, 1, 11)
#define DENIED IP(192, 0, 2, 7)     /* 192.0.2.0/24 deny */
#define DENY_LB IP(100, 64, 3, 4)   /* 100.64.0.0/16 deny-lb */
#define EXPIRED IP(198, 51, 100, 9) /* 198.51.100.0/24 deny, expired */
#define EXCEPT IP(203, 0, 113, 200) /* 203.0.113.0/24 deny, .128/25 allow */
#define NOT_EXCEPT IP(203, 0, 113, 5)
#define NESTED IP(172, 16, 5, 9)    /* /12 deny; 172.16.5.0/24 expired */
#define LAPSED IP(10, 99, 1, 1)     /* 10.99/16 deny; 10.99.1/24 allow, */
				    /* expired */

/* The IPv6 plan, mirroring the IPv4 one. */
#define V6_VIP_PORT "2001:db8:1::100" /* tcp:80 only (narrow) */
#define V6_VIP_ALL "2001:db8:1::101"  /* whole address */
#define V6_LOCAL "2001:db8:1::1"      /* the dataplane's address */
#define V6_LINK "fe80::1"             /* its link-local address */
#define V6_SNAT "2001:db8:2::2"       /* whole address, SNAT */
#define V6_SHARED "2001:db8:1::5"     /* host's: tcp:8080 vip, udp */
				      /* 40000-40999 snat */
#define V6_HOST "2001:db8:1::6"       /* no rule at all */
#define V6_CLIENT "2001:db8:ff::7"
#define V6_BACKEND "2001:db8:2::11"
#define V6_DENIED "2001:db8:dead::7"  /* 2001:db8:dead::/48 deny */
#define V6_DENY_LB "2001:db8:beef::4" /* 2001:db8:beef::/64 deny-lb */
#define V6_EXPIRED "2001:db8:e0::9"   /* 2001:db8:e0::/48 deny, expired */
#define V6_EXCEPT "2001:db8:ec:8000::1" /* 2001:db8:ec::/48 deny, */
#define V6_NOT_EXCEPT "2001:db8:ec::5"  /* 2001:db8:ec:8000::/49 allow */
#define V6_NESTED "2001:db9:5::9"     /* /32 deny; 2001:db9:5::/48 */
				      /* expired */
#define V6_LAPSED "2001:db8:99:1::1"  /* 2001:db8:99::/48 deny; */
				      /* 2001:db8:99:1::/64 allow, expired */
#define V6_ONE "2001:db8:aa::1"       /* 2001:db8:aa::1/128 deny */
#define V6_NEXT_TO_ONE "2001:db8:aa::2"
#define V6_SOLICITED "ff02::1:ff00:101" /* a solicited-node group */

#define NONE (-1)

struct row {
	const char *name;
	struct pkt pkt;
	uint32_t verdict;
	int ctr;    /**< the verdict counter that grows by one frame */
	int ev[2];  /**< event counters that grow by one, or NONE */
};

#define TCP_SP(s, d, sp, dp) .src = (s), .dst = (d), \
	.proto = IPPROTO_TCP, .sport = (sp), .dport = (dp)
#define TCP(s, d, dp) TCP_SP(s, d, 40000, dp)
#define UDP(s, d, sp, dp) .src = (s), .dst = (d), .proto = IPPROTO_UDP, \
	.sport = (sp), .dport = (dp)
#define ICMP(s, d) .src = (s), .dst = (d), .proto = IPPROTO_ICMP
#define ARP(s, t) .type = T_ARP, .src = (s), .dst = (t)
#define EV0 .ev = { NONE, NONE }
#define TCP6_SP(s, d, sp, dp) .type = T_IP6, .src6 = (s), .dst6 = (d), \
	.proto = IPPROTO_TCP, .sport = (sp), .dport = (dp)
#define TCP6(s, d, dp) TCP6_SP(s, d, 40000, dp)
#define UDP6(s, d, sp, dp) .type = T_IP6, .src6 = (s), .dst6 = (d), \
	.proto = IPPROTO_UDP, .sport = (sp), .dport = (dp)
#define PING6(s, d) .type = T_IP6, .src6 = (s), .dst6 = (d), \
	.proto = IPPROTO_ICMPV6
#define ND6(s, d, icmp, t) .type = T_IP6, .src6 = (s), .dst6 = (d), \
	.proto = IPPROTO_ICMPV6, .nd = (icmp), .target6 = (t)
#define NS6(s, t) ND6(s, V6_SOLICITED, 135, t)
#define NA6(s, d, t) ND6(s, d, 136, t)

static const struct row rows[] = {
	/* VIP traffic */
	{ "tcp SYN to VIP:80 (port rule)", { TCP(CLIENT, VIP_PORT, 80) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_VIP, EV0 },
	{ "tcp to VIP:22, not a service port", { TCP(CLIENT, VIP_PORT, 22) },
	  XDP_PASS, LB_STEER_CTR_PASS, EV0 },
	{ "udp to VIP:80, only tcp is steered",
	  { UDP(CLIENT, VIP_PORT, 5000, 80) },
	  XDP_PASS, LB_STEER_CTR_PASS, EV0 },
	{ "ping to a VIP with port rules only", { ICMP(CLIENT, VIP_PORT) },
	  XDP_PASS, LB_STEER_CTR_PASS, EV0 },
	{ "udp to a whole-address VIP", { UDP(CLIENT, VIP_ALL, 5000, 53) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_VIP, EV0 },
	{ "tcp to any port of a whole-address VIP",
	  { TCP(CLIENT, VIP_ALL, 9) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_VIP, EV0 },
	{ "ping to a whole-address VIP", { ICMP(CLIENT, VIP_ALL) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_VIP, EV0 },
	{ "tcp to VIP:80 with IP options",
	  { TCP(CLIENT, VIP_PORT, 80), .ihl = 7 },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_VIP, EV0 },
	{ "tcp to VIP:80 behind a VLAN tag",
	  { TCP(CLIENT, VIP_PORT, 80), .vlan = 12 },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_VIP, EV0 },
	{ "first fragment to VIP:80", { TCP(CLIENT, VIP_PORT, 80),
	  .frag = 0x2000 },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_VIP, EV0 },
	{ "later fragment to a port-rule VIP: no port, the kernel's",
	  { TCP(CLIENT, VIP_PORT, 80), .frag = 0x0010 },
	  XDP_PASS, LB_STEER_CTR_PASS, EV0 },
	{ "later fragment to a whole-address VIP",
	  { UDP(CLIENT, VIP_ALL, 1, 2), .frag = 0x0010 },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_VIP, EV0 },
	/* SNAT replies and the dataplane's own address */
	{ "backend's tcp reply to the SNAT address",
	  { TCP_SP(BACKEND, SNAT, 8080, 40001) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_SNAT, EV0 },
	{ "backend's udp reply to the SNAT address",
	  { UDP(BACKEND, SNAT, 53, 61000) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_SNAT, EV0 },
	{ "ICMP error to the SNAT address", { ICMP(BACKEND, SNAT) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_SNAT, EV0 },
	{ "ping to the dataplane's own address", { ICMP(CLIENT, LOCAL) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_LOCAL, EV0 },
	/* an address the host shares with the dataplane */
	{ "shared address, tcp:8080 rule", { TCP(CLIENT, SHARED, 8080) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_VIP, EV0 },
	{ "shared address, SSH stays with the host",
	  { TCP(CLIENT, SHARED, 22) },
	  XDP_PASS, LB_STEER_CTR_PASS, EV0 },
	{ "shared address, udp in the SNAT range",
	  { UDP(BACKEND, SHARED, 53, 40500) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_SNAT, EV0 },
	{ "shared address, udp first port of the range",
	  { UDP(BACKEND, SHARED, 53, 40000) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_SNAT, EV0 },
	{ "shared address, udp last port of the range",
	  { UDP(BACKEND, SHARED, 53, 40999) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_SNAT, EV0 },
	{ "shared address, udp just below the range",
	  { UDP(BACKEND, SHARED, 53, 39999) },
	  XDP_PASS, LB_STEER_CTR_PASS, EV0 },
	{ "shared address, udp just above the range",
	  { UDP(BACKEND, SHARED, 53, 41000) },
	  XDP_PASS, LB_STEER_CTR_PASS, EV0 },
	{ "shared address, ping stays with the host", { ICMP(CLIENT, SHARED) },
	  XDP_PASS, LB_STEER_CTR_PASS, EV0 },
	/* host traffic */
	{ "SSH to the host's address", { TCP(CLIENT, HOST, 22) },
	  XDP_PASS, LB_STEER_CTR_PASS, EV0 },
	{ "udp to the host, VLAN tagged", { UDP(CLIENT, HOST, 5, 161),
	  .vlan = 7 },
	  XDP_PASS, LB_STEER_CTR_PASS, EV0 },
	{ "GRE to the host", { .src = CLIENT, .dst = HOST, .proto = 47 },
	  XDP_PASS, LB_STEER_CTR_PASS, EV0 },
	/* ARP */
	{ "ARP request for a whole-address VIP", { ARP(CLIENT, VIP_ALL) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_ARP, EV0 },
	{ "ARP for the dataplane's address", { ARP(BACKEND, LOCAL) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_ARP, EV0 },
	{ "ARP for the SNAT address", { ARP(BACKEND, SNAT) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_ARP, EV0 },
	{ "ARP for the host", { ARP(CLIENT, HOST) },
	  XDP_PASS, LB_STEER_CTR_PASS_ARP, EV0 },
	{ "ARP for a shared address: the kernel answers",
	  { ARP(CLIENT, SHARED) },
	  XDP_PASS, LB_STEER_CTR_PASS_ARP, EV0 },
	{ "ARP for a port-rule VIP", { ARP(CLIENT, VIP_PORT) },
	  XDP_PASS, LB_STEER_CTR_PASS_ARP, EV0 },
	{ "ARP for a VIP from a denied sender: the ACL is IPv4 only",
	  { ARP(DENIED, VIP_ALL) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_ARP, EV0 },
	/* source ACL */
	{ "denied source to a VIP", { TCP(DENIED, VIP_PORT, 80) },
	  XDP_DROP, LB_STEER_CTR_DROP_DENY, EV0 },
	{ "denied source to the host", { TCP(DENIED, HOST, 22) },
	  XDP_DROP, LB_STEER_CTR_DROP_DENY, EV0 },
	{ "denied source, VLAN tagged", { UDP(DENIED, VIP_ALL, 1, 53),
	  .vlan = 12 },
	  XDP_DROP, LB_STEER_CTR_DROP_DENY, EV0 },
	{ "deny-lb source to a VIP", { TCP(DENY_LB, VIP_PORT, 80) },
	  XDP_DROP, LB_STEER_CTR_DROP_DENY_LB, EV0 },
	{ "deny-lb source to the host's SSH", { TCP(DENY_LB, SHARED, 22) },
	  XDP_PASS, LB_STEER_CTR_PASS, EV0 },
	{ "expired deny entry", { TCP(EXPIRED, VIP_PORT, 80) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_VIP,
	  { LB_STEER_CTR_ACL_EXPIRED, NONE } },
	{ "allow exception inside a denied prefix",
	  { TCP(EXCEPT, VIP_PORT, 80) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_VIP,
	  { LB_STEER_CTR_ACL_ALLOW, NONE } },
	{ "denied prefix outside the exception",
	  { TCP(NOT_EXCEPT, VIP_PORT, 80) },
	  XDP_DROP, LB_STEER_CTR_DROP_DENY, EV0 },
	{ "expired /24 deny under a live /12 deny",
	  { TCP(NESTED, VIP_PORT, 80) },
	  XDP_DROP, LB_STEER_CTR_DROP_DENY,
	  { LB_STEER_CTR_ACL_EXPIRED, NONE } },
	{ "expired allow no longer lifts its /16 deny",
	  { TCP(LAPSED, HOST, 22) },
	  XDP_DROP, LB_STEER_CTR_DROP_DENY,
	  { LB_STEER_CTR_ACL_EXPIRED, NONE } },
	/* truncated and malformed */
	{ "Ethernet header only, IPv4 type", { TCP(CLIENT, VIP_ALL, 80),
	  .cut = 14 },
	  XDP_PASS, LB_STEER_CTR_PASS_MALFORMED, EV0 },
	{ "VLAN tag cut short", { TCP(CLIENT, VIP_ALL, 80), .vlan = 5,
	  .cut = 16 },
	  XDP_PASS, LB_STEER_CTR_PASS_MALFORMED, EV0 },
	{ "IPv4 header cut at 19 bytes", { TCP(CLIENT, VIP_ALL, 80),
	  .cut = 14 + 19 },
	  XDP_PASS, LB_STEER_CTR_PASS_MALFORMED, EV0 },
	{ "IHL 4", { TCP(CLIENT, VIP_ALL, 80), .ihl = 4 },
	  XDP_PASS, LB_STEER_CTR_PASS_MALFORMED, EV0 },
	{ "IHL 15 past the end of the frame", { TCP(CLIENT, VIP_ALL, 80),
	  .ihl = 15, .cut = 14 + 40 },
	  XDP_PASS, LB_STEER_CTR_PASS_MALFORMED, EV0 },
	{ "version 6 under the IPv4 ethertype", { TCP(CLIENT, VIP_ALL, 80),
	  .version = 6 },
	  XDP_PASS, LB_STEER_CTR_PASS_MALFORMED, EV0 },
	{ "denied source with IHL 4: unjudged, the kernel drops it",
	  { TCP(DENIED, HOST, 22), .ihl = 4 },
	  XDP_PASS, LB_STEER_CTR_PASS_MALFORMED, EV0 },
	{ "tcp to a port rule with 2 bytes of TCP",
	  { TCP(CLIENT, VIP_PORT, 80), .cut = 14 + 20 + 2 },
	  XDP_PASS, LB_STEER_CTR_PASS_MALFORMED, EV0 },
	{ "tcp to a whole-address VIP with 2 bytes of TCP: the dataplane "
	  "counts it", { TCP(CLIENT, VIP_ALL, 80), .cut = 14 + 20 + 2 },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_VIP, EV0 },
	{ "tcp to the host with no TCP header", { TCP(CLIENT, HOST, 22),
	  .cut = 14 + 20 },
	  XDP_PASS, LB_STEER_CTR_PASS, EV0 },
	{ "ARP cut short", { ARP(CLIENT, VIP_ALL), .cut = 14 + 20 },
	  XDP_PASS, LB_STEER_CTR_PASS_MALFORMED, EV0 },
	{ "ARP with an 8-byte hardware address", { ARP(CLIENT, VIP_ALL),
	  .arp_hlen = 8 },
	  XDP_PASS, LB_STEER_CTR_PASS_MALFORMED, EV0 },
	/* IPv6 and other ethertypes */
	{ "IPv6 udp", { .type = T_IP6 },
	  XDP_PASS, LB_STEER_CTR_PASS_IPV6, EV0 },
	{ "IPv6 behind a VLAN tag", { .type = T_IP6, .vlan = 3 },
	  XDP_PASS, LB_STEER_CTR_PASS_IPV6, EV0 },
	{ "LLDP", { .type = T_OTHER },
	  XDP_PASS, LB_STEER_CTR_PASS_OTHER, EV0 },

	/* IPv6: VIP traffic */
	{ "v6 tcp SYN to VIP:80 (port rule)",
	  { TCP6(V6_CLIENT, V6_VIP_PORT, 80) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_VIP, EV0 },
	{ "v6 tcp to VIP:22, not a service port",
	  { TCP6(V6_CLIENT, V6_VIP_PORT, 22) },
	  XDP_PASS, LB_STEER_CTR_PASS_IPV6, EV0 },
	{ "v6 udp to VIP:80, only tcp is steered",
	  { UDP6(V6_CLIENT, V6_VIP_PORT, 5000, 80) },
	  XDP_PASS, LB_STEER_CTR_PASS_IPV6, EV0 },
	{ "v6 ping to a VIP with port rules only",
	  { PING6(V6_CLIENT, V6_VIP_PORT) },
	  XDP_PASS, LB_STEER_CTR_PASS_IPV6, EV0 },
	{ "v6 udp to a whole-address VIP",
	  { UDP6(V6_CLIENT, V6_VIP_ALL, 5000, 53) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_VIP, EV0 },
	{ "v6 ping to a whole-address VIP", { PING6(V6_CLIENT, V6_VIP_ALL) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_VIP, EV0 },
	{ "v6 tcp to VIP:80 behind a VLAN tag",
	  { TCP6(V6_CLIENT, V6_VIP_PORT, 80), .vlan = 12 },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_VIP, EV0 },
	{ "v6 ping to the dataplane's own address",
	  { PING6(V6_CLIENT, V6_LOCAL) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_LOCAL, EV0 },
	{ "v6 ping to the dataplane's link-local address",
	  { PING6("fe80::2", V6_LINK) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_LOCAL, EV0 },
	{ "v6 backend's tcp reply to the SNAT address",
	  { TCP6_SP(V6_BACKEND, V6_SNAT, 8080, 40001) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_SNAT, EV0 },
	{ "v6 ICMPv6 error to the SNAT address",
	  { PING6(V6_BACKEND, V6_SNAT), .nd = 2 /* packet too big */ },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_SNAT, EV0 },
	/* IPv6: an address the host shares */
	{ "v6 shared address, tcp:8080 rule",
	  { TCP6(V6_CLIENT, V6_SHARED, 8080) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_VIP, EV0 },
	{ "v6 shared address, SSH stays with the host",
	  { TCP6(V6_CLIENT, V6_SHARED, 22) },
	  XDP_PASS, LB_STEER_CTR_PASS_IPV6, EV0 },
	{ "v6 shared address, udp in the SNAT range",
	  { UDP6(V6_BACKEND, V6_SHARED, 53, 40500) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_SNAT, EV0 },
	{ "v6 shared address, udp first port of the range",
	  { UDP6(V6_BACKEND, V6_SHARED, 53, 40000) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_SNAT, EV0 },
	{ "v6 shared address, udp last port of the range",
	  { UDP6(V6_BACKEND, V6_SHARED, 53, 40999) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_SNAT, EV0 },
	{ "v6 shared address, udp just below the range",
	  { UDP6(V6_BACKEND, V6_SHARED, 53, 39999) },
	  XDP_PASS, LB_STEER_CTR_PASS_IPV6, EV0 },
	{ "v6 shared address, udp just above the range",
	  { UDP6(V6_BACKEND, V6_SHARED, 53, 41000) },
	  XDP_PASS, LB_STEER_CTR_PASS_IPV6, EV0 },
	{ "v6 shared address, ping stays with the host",
	  { PING6(V6_CLIENT, V6_SHARED) },
	  XDP_PASS, LB_STEER_CTR_PASS_IPV6, EV0 },
	/* IPv6: host traffic */
	{ "v6 SSH to the host's address", { TCP6(V6_CLIENT, V6_HOST, 22) },
	  XDP_PASS, LB_STEER_CTR_PASS_IPV6, EV0 },
	{ "v6 udp to the host, VLAN tagged",
	  { UDP6(V6_CLIENT, V6_HOST, 5, 161), .vlan = 7 },
	  XDP_PASS, LB_STEER_CTR_PASS_IPV6, EV0 },
	{ "v6 multicast to all nodes", { UDP6(V6_CLIENT, "ff02::1", 5, 5) },
	  XDP_PASS, LB_STEER_CTR_PASS_IPV6, EV0 },
	/* IPv6: extension headers */
	{ "v6 hop-by-hop, then tcp to VIP:80",
	  { TCP6(V6_CLIENT, V6_VIP_PORT, 80), .ext = "h" },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_VIP, EV0 },
	{ "v6 16-byte hop-by-hop, then tcp to VIP:80",
	  { TCP6(V6_CLIENT, V6_VIP_PORT, 80), .ext = "H" },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_VIP, EV0 },
	{ "v6 hop-by-hop, dest opts, routing, fragment, dest opts: VIP:80",
	  { TCP6(V6_CLIENT, V6_VIP_PORT, 80), .ext = "hdrfd" },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_VIP, EV0 },
	{ "v6 six extension headers, the bound: VIP:80",
	  { TCP6(V6_CLIENT, V6_VIP_PORT, 80), .ext = "hdrdHd" },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_VIP, EV0 },
	{ "v6 seven extension headers to a port rule: unjudged",
	  { TCP6(V6_CLIENT, V6_VIP_PORT, 80), .ext = "hdddddd" },
	  XDP_PASS, LB_STEER_CTR_PASS_MALFORMED, EV0 },
	{ "v6 seven extension headers to a whole-address VIP",
	  { TCP6(V6_CLIENT, V6_VIP_ALL, 80), .ext = "hdddddd" },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_VIP, EV0 },
	{ "v6 seven extension headers to the host",
	  { TCP6(V6_CLIENT, V6_HOST, 22), .ext = "hdddddd" },
	  XDP_PASS, LB_STEER_CTR_PASS_IPV6, EV0 },
	{ "v6 dest opts, then SSH to a shared address",
	  { TCP6(V6_CLIENT, V6_SHARED, 22), .ext = "d" },
	  XDP_PASS, LB_STEER_CTR_PASS_IPV6, EV0 },
	{ "v6 routing header, then udp in a shared SNAT range",
	  { UDP6(V6_BACKEND, V6_SHARED, 53, 40500), .ext = "r" },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_SNAT, EV0 },
	{ "v6 hop-by-hop cut short, to a port rule",
	  { TCP6(V6_CLIENT, V6_VIP_PORT, 80), .ext = "h",
	    .cut = 14 + 40 + 1 },
	  XDP_PASS, LB_STEER_CTR_PASS_MALFORMED, EV0 },
	{ "v6 16-byte hop-by-hop, frame ends inside it",
	  { TCP6(V6_CLIENT, V6_VIP_PORT, 80), .ext = "H",
	    .cut = 14 + 40 + 12 },
	  XDP_PASS, LB_STEER_CTR_PASS_MALFORMED, EV0 },
	/* IPv6: fragments */
	{ "v6 first fragment to VIP:80",
	  { TCP6(V6_CLIENT, V6_VIP_PORT, 80), .ext = "f" },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_VIP, EV0 },
	{ "v6 later fragment to a port-rule VIP: no port, the kernel's",
	  { TCP6(V6_CLIENT, V6_VIP_PORT, 80), .ext = "F" },
	  XDP_PASS, LB_STEER_CTR_PASS_IPV6, EV0 },
	{ "v6 later fragment behind a hop-by-hop header",
	  { UDP6(V6_BACKEND, V6_SHARED, 53, 40500), .ext = "hF" },
	  XDP_PASS, LB_STEER_CTR_PASS_IPV6, EV0 },
	{ "v6 later fragment to a whole-address VIP",
	  { UDP6(V6_CLIENT, V6_VIP_ALL, 1, 2), .ext = "F" },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_VIP, EV0 },
	{ "v6 fragment header cut short",
	  { TCP6(V6_CLIENT, V6_VIP_PORT, 80), .ext = "f",
	    .cut = 14 + 40 + 6 },
	  XDP_PASS, LB_STEER_CTR_PASS_MALFORMED, EV0 },
	/* IPv6: neighbour discovery */
	{ "NS for a whole-address VIP", { NS6(V6_CLIENT, V6_VIP_ALL) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_ARP, EV0 },
	{ "NS for the dataplane's link-local address",
	  { NS6("fe80::2", V6_LINK) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_ARP, EV0 },
	{ "NS for the SNAT address, unicast (reachability)",
	  { ND6(V6_BACKEND, V6_SNAT, 135, V6_SNAT) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_ARP, EV0 },
	{ "NS for a VIP behind a VLAN tag",
	  { NS6(V6_CLIENT, V6_VIP_ALL), .vlan = 9 },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_ARP, EV0 },
	{ "NA answering the dataplane's solicitation",
	  { NA6(V6_BACKEND, V6_LOCAL, V6_BACKEND) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_ARP, EV0 },
	{ "NS for the host", { NS6(V6_CLIENT, V6_HOST) },
	  XDP_PASS, LB_STEER_CTR_PASS_ARP, EV0 },
	{ "NS for a shared address: the kernel answers",
	  { NS6(V6_CLIENT, V6_SHARED) },
	  XDP_PASS, LB_STEER_CTR_PASS_ARP, EV0 },
	{ "NS for a port-rule VIP", { NS6(V6_CLIENT, V6_VIP_PORT) },
	  XDP_PASS, LB_STEER_CTR_PASS_ARP, EV0 },
	{ "unsolicited NA to all nodes",
	  { NA6(V6_BACKEND, "ff02::1", V6_BACKEND) },
	  XDP_PASS, LB_STEER_CTR_PASS_ARP, EV0 },
	{ "NA to the host", { NA6(V6_BACKEND, V6_HOST, V6_BACKEND) },
	  XDP_PASS, LB_STEER_CTR_PASS_ARP, EV0 },
	{ "router advertisement", { ND6("fe80::9", "ff02::1", 134, NULL) },
	  XDP_PASS, LB_STEER_CTR_PASS_ARP, EV0 },
	{ "router advertisement answering the dataplane's solicitation",
	  { ND6("fe80::9", V6_LINK, 134, NULL) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_ARP, EV0 },
	{ "redirect to the host", { ND6("fe80::9", V6_HOST, 137, NULL) },
	  XDP_PASS, LB_STEER_CTR_PASS_ARP, EV0 },
	{ "router solicitation to all routers",
	  { ND6("fe80::2", "ff02::2", 133, NULL) },
	  XDP_PASS, LB_STEER_CTR_PASS_ARP, EV0 },
	{ "NS for a VIP from a denied sender: ND skips the ACL",
	  { NS6(V6_DENIED, V6_VIP_ALL) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_ARP, EV0 },
	{ "NS without its target", { NS6(V6_CLIENT, V6_VIP_ALL),
	  .cut = 14 + 40 + 20 },
	  XDP_PASS, LB_STEER_CTR_PASS_MALFORMED, EV0 },
	{ "NS behind a hop-by-hop header is plain ICMPv6",
	  { NS6(V6_CLIENT, V6_VIP_ALL), .ext = "h" },
	  XDP_PASS, LB_STEER_CTR_PASS_IPV6, EV0 },
	/* IPv6: source ACL */
	{ "v6 denied source to a VIP", { TCP6(V6_DENIED, V6_VIP_PORT, 80) },
	  XDP_DROP, LB_STEER_CTR_DROP_DENY, EV0 },
	{ "v6 denied source to the host", { TCP6(V6_DENIED, V6_HOST, 22) },
	  XDP_DROP, LB_STEER_CTR_DROP_DENY, EV0 },
	{ "v6 denied source, VLAN tagged",
	  { UDP6(V6_DENIED, V6_VIP_ALL, 1, 53), .vlan = 12 },
	  XDP_DROP, LB_STEER_CTR_DROP_DENY, EV0 },
	{ "v6 denied source behind seven extension headers",
	  { TCP6(V6_DENIED, V6_VIP_PORT, 80), .ext = "hdddddd" },
	  XDP_DROP, LB_STEER_CTR_DROP_DENY, EV0 },
	{ "v6 denied source, later fragment",
	  { TCP6(V6_DENIED, V6_VIP_PORT, 80), .ext = "F" },
	  XDP_DROP, LB_STEER_CTR_DROP_DENY, EV0 },
	{ "v6 deny-lb source to a VIP",
	  { TCP6(V6_DENY_LB, V6_VIP_PORT, 80) },
	  XDP_DROP, LB_STEER_CTR_DROP_DENY_LB, EV0 },
	{ "v6 deny-lb source to the host's SSH",
	  { TCP6(V6_DENY_LB, V6_SHARED, 22) },
	  XDP_PASS, LB_STEER_CTR_PASS_IPV6, EV0 },
	{ "v6 expired deny entry", { TCP6(V6_EXPIRED, V6_VIP_PORT, 80) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_VIP,
	  { LB_STEER_CTR_ACL_EXPIRED, NONE } },
	{ "v6 allow exception inside a denied prefix",
	  { TCP6(V6_EXCEPT, V6_VIP_PORT, 80) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_VIP,
	  { LB_STEER_CTR_ACL_ALLOW, NONE } },
	{ "v6 denied prefix outside the exception",
	  { TCP6(V6_NOT_EXCEPT, V6_VIP_PORT, 80) },
	  XDP_DROP, LB_STEER_CTR_DROP_DENY, EV0 },
	{ "v6 expired /48 deny under a live /32 deny",
	  { TCP6(V6_NESTED, V6_VIP_PORT, 80) },
	  XDP_DROP, LB_STEER_CTR_DROP_DENY,
	  { LB_STEER_CTR_ACL_EXPIRED, NONE } },
	{ "v6 expired allow no longer lifts its /48 deny",
	  { TCP6(V6_LAPSED, V6_HOST, 22) },
	  XDP_DROP, LB_STEER_CTR_DROP_DENY,
	  { LB_STEER_CTR_ACL_EXPIRED, NONE } },
	{ "v6 /128 deny", { TCP6(V6_ONE, V6_VIP_PORT, 80) },
	  XDP_DROP, LB_STEER_CTR_DROP_DENY, EV0 },
	{ "v6 the address next to a /128 deny",
	  { TCP6(V6_NEXT_TO_ONE, V6_VIP_PORT, 80) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_VIP, EV0 },
	{ "IPv4 source in the v6 ACL's form does not match the v4 ACL",
	  { TCP6("::ffff:192.0.2.7", V6_VIP_PORT, 80) },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_VIP, EV0 },
	/* IPv6: truncated and malformed */
	{ "IPv6 ethertype with no header", { .type = T_IP6, .cut = 14 },
	  XDP_PASS, LB_STEER_CTR_PASS_MALFORMED, EV0 },
	{ "IPv6 header cut at 39 bytes",
	  { TCP6(V6_CLIENT, V6_VIP_ALL, 80), .cut = 14 + 39 },
	  XDP_PASS, LB_STEER_CTR_PASS_MALFORMED, EV0 },
	{ "IPv6 header cut short behind a VLAN tag",
	  { TCP6(V6_CLIENT, V6_VIP_ALL, 80), .vlan = 4, .cut = 18 + 20 },
	  XDP_PASS, LB_STEER_CTR_PASS_MALFORMED, EV0 },
	{ "version 4 under the IPv6 ethertype",
	  { TCP6(V6_CLIENT, V6_VIP_ALL, 80), .version = 4 },
	  XDP_PASS, LB_STEER_CTR_PASS_MALFORMED, EV0 },
	{ "v6 denied source with version 4: unjudged",
	  { TCP6(V6_DENIED, V6_HOST, 22), .version = 4 },
	  XDP_PASS, LB_STEER_CTR_PASS_MALFORMED, EV0 },
	{ "v6 tcp to a port rule with 2 bytes of TCP",
	  { TCP6(V6_CLIENT, V6_VIP_PORT, 80), .cut = 14 + 40 + 2 },
	  XDP_PASS, LB_STEER_CTR_PASS_MALFORMED, EV0 },
	{ "v6 tcp to a whole-address VIP with 2 bytes of TCP",
	  { TCP6(V6_CLIENT, V6_VIP_ALL, 80), .cut = 14 + 40 + 2 },
	  XDP_REDIRECT, LB_STEER_CTR_XSK_VIP, EV0 },
	{ "v6 tcp to the host with no TCP header",
	  { TCP6(V6_CLIENT, V6_HOST, 22), .cut = 14 + 40 },
	  XDP_PASS, LB_STEER_CTR_PASS_IPV6, EV0 },
};

/* ---- fixture --------------------------------------------------------- */

struct fix {
	struct lb_steer *s;
	int xsk; /* an AF_XDP socket in xsks_map[0] */
};

static int
add_rule(struct lb_steer *s, uint32_t addr, uint8_t proto, uint16_t lo,
	 uint16_t hi, enum lb_steer_kind kind)
{
	struct lb_steer_rule r = {
		.addr = htonl(addr),
		.proto = proto,
		.port_min = lo,
		.port_max = hi,
		.kind = kind,
	};

	return lb_steer_rule_add(s, &r);
}

static int
acl(struct lb_steer *s, uint32_t prefix, uint8_t len,
    enum lb_steer_acl_action a, uint64_t ttl_ns)
{
	return lb_steer_acl_set(s, htonl(prefix), len, a, ttl_ns);
}

static int
add_rule6(struct lb_steer *s, const char *addr, uint8_t proto, uint16_t lo,
	  uint16_t hi, enum lb_steer_kind kind)
{
	struct lb_steer_rule6 r = {
		.proto = proto,
		.port_min = lo,
		.port_max = hi,
		.kind = kind,
	};

	addr6(addr, NULL, r.addr);
	return lb_steer_rule6_add(s, &r);
}

static int
acl6(struct lb_steer *s, const char *prefix, uint8_t len,
     enum lb_steer_acl_action a, uint64_t ttl_ns)
{
	uint8_t p[16];

	addr6(prefix, NULL, p);
	return lb_steer_acl6_set(s, p, len, a, ttl_ns);
}

static void
install_plan6(struct lb_steer *s)
{
	static const struct {
		const char *addr;
		uint8_t proto;
		uint16_t lo, hi;
		enum lb_steer_kind kind;
	} rules6[] = {
		{ V6_VIP_PORT, IPPROTO_TCP, 80, 80, LB_STEER_KIND_VIP },
		{ V6_VIP_ALL, 0, 0, 0, LB_STEER_KIND_VIP },
		{ V6_LOCAL, 0, 0, 0, LB_STEER_KIND_LOCAL },
		{ V6_LINK, 0, 0, 0, LB_STEER_KIND_LOCAL },
		{ V6_SNAT, 0, 0, 0, LB_STEER_KIND_SNAT },
		{ V6_SHARED, IPPROTO_TCP, 8080, 8080, LB_STEER_KIND_VIP },
		{ V6_SHARED, IPPROTO_UDP, 40000, 40999, LB_STEER_KIND_SNAT },
	};
	static const struct {
		const char *prefix;
		uint8_t len;
		enum lb_steer_acl_action a;
		uint64_t ttl_ns;
	} acls6[] = {
		{ "2001:db8:dead::", 48, LB_STEER_ACL_DENY, 0 },
		{ "2001:db8:beef::", 64, LB_STEER_ACL_DENY_LB,
		  3600ull * 1000000000ull },
		{ "2001:db8:e0::", 48, LB_STEER_ACL_DENY, 1 },
		{ "2001:db8:ec::", 48, LB_STEER_ACL_DENY, 0 },
		{ "2001:db8:ec:8000::", 49, LB_STEER_ACL_ALLOW, 0 },
		{ "2001:db9::", 32, LB_STEER_ACL_DENY, 0 },
		{ "2001:db9:5::", 48, LB_STEER_ACL_DENY, 1 },
		{ "2001:db8:99::", 48, LB_STEER_ACL_DENY, 0 },
		{ "2001:db8:99:1::", 64, LB_STEER_ACL_ALLOW, 1 },
		{ V6_ONE, 128, LB_STEER_ACL_DENY, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(rules6); i++)
		assert_int_equal(add_rule6(s, rules6[i].addr, rules6[i].proto,
					   rules6[i].lo, rules6[i].hi,
					   rules6[i].kind), 0);
	for (size_t i = 0; i < ARRAY_SIZE(acls6); i++)
		assert_int_equal(acl6(s, acls6[i].prefix, acls6[i].len,
				      acls6[i].a, acls6[i].ttl_ns), 0);
}

/* Puts an AF_XDP socket in xsks_map at @p queue, so that a redirect finds
 * it: BPF_PROG_TEST_RUN only reports the verdict, the socket need not be
 * bound. */
static int
xsk_in_map(struct lb_steer *s, uint32_t queue)
{
	int fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(bpf_map_update_elem(lb_steer_xsks_fd(s), &queue,
					     &fd, BPF_ANY), 0);
	return fd;
}

static void
install_plan(struct lb_steer *s)
{
	const uint64_t ms = 1000000;

	assert_int_equal(add_rule(s, VIP_PORT, IPPROTO_TCP, 80, 80,
				  LB_STEER_KIND_VIP), 0);
	assert_int_equal(add_rule(s, VIP_ALL, 0, 0, 0, LB_STEER_KIND_VIP), 0);
	assert_int_equal(add_rule(s, LOCAL, 0, 0, 0, LB_STEER_KIND_LOCAL), 0);
	assert_int_equal(add_rule(s, SNAT, 0, 0, 0, LB_STEER_KIND_SNAT), 0);
	assert_int_equal(add_rule(s, SHARED, IPPROTO_TCP, 8080, 8080,
				  LB_STEER_KIND_VIP), 0);
	assert_int_equal(add_rule(s, SHARED, IPPROTO_UDP, 40000, 40999,
				  LB_STEER_KIND_SNAT), 0);
	assert_int_equal(acl(s, IP(192, 0, 2, 0), 24, LB_STEER_ACL_DENY, 0),
			 0);
	assert_int_equal(acl(s, IP(100, 64, 0, 0), 16, LB_STEER_ACL_DENY_LB,
			     3600000 * ms), 0);
	assert_int_equal(acl(s, IP(198, 51, 100, 0), 24, LB_STEER_ACL_DENY,
			     1), 0);
	assert_int_equal(acl(s, IP(203, 0, 113, 0), 24, LB_STEER_ACL_DENY, 0),
			 0);
	assert_int_equal(acl(s, IP(203, 0, 113, 128), 25, LB_STEER_ACL_ALLOW,
			     0), 0);
	assert_int_equal(acl(s, IP(172, 16, 0, 0), 12, LB_STEER_ACL_DENY, 0),
			 0);
	assert_int_equal(acl(s, IP(172, 16, 5, 0), 24, LB_STEER_ACL_DENY, 1),
			 0);
	assert_int_equal(acl(s, IP(10, 99, 0, 0), 16, LB_STEER_ACL_DENY, 0),
			 0);
	assert_int_equal(acl(s, IP(10, 99, 1, 0), 24, LB_STEER_ACL_ALLOW, 1),
			 0);
	install_plan6(s);
	/* The 1 ns entries above are expired by the time any frame runs. */
	usleep(1000);
}

static int
setup(void **state)
{
	struct lb_steer_conf conf = { 0 };
	struct fix *f = calloc(1, sizeof(*f));

	if (f == NULL || lb_steer_load(&conf, &f->s) != 0) {
		free(f);
		return -1;
	}
	install_plan(f->s);
	f->xsk = xsk_in_map(f->s, 0);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fix *f = *state;

	lb_steer_close(f->s);
	close(f->xsk);
	free(f);
	return 0;
}

static uint32_t
run(int prog_fd, const uint8_t *frame, size_t len)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame,
		    .data_size_in = (uint32_t)len, .repeat = 1);

	assert_int_equal(bpf_prog_test_run_opts(prog_fd, &o), 0);
	return o.retval;
}

static const char *
verdict_name(uint32_t v)
{
	switch (v) {
	case XDP_PASS:
		return "PASS";
	case XDP_DROP:
		return "DROP";
	case XDP_REDIRECT:
		return "REDIRECT";
	default:
		return "other";
	}
}

/* Every row: the verdict, one frame (and its bytes) on the row's verdict
 * counter and event counters, nothing anywhere else. */
static void
test_rows(void **state)
{
	struct fix *f = *state;
	int prog = lb_steer_prog_fd(f->s);
	int bad = 0;

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		const struct row *r = &rows[i];
		struct lb_steer_stats a, b;
		uint8_t frame[256];
		size_t len = build(&r->pkt, frame);
		uint32_t v;

		assert_int_equal(lb_steer_stats_read(f->s, &a), 0);
		v = run(prog, frame, len);
		assert_int_equal(lb_steer_stats_read(f->s, &b), 0);
		if (v != r->verdict) {
			print_error("row %zu \"%s\": verdict %s, expected %s\n",
				    i, r->name, verdict_name(v),
				    verdict_name(r->verdict));
			bad++;
		}
		for (int c = 0; c < LB_STEER_CTR_MAX; c++) {
			uint64_t want = c == r->ctr || c == r->ev[0] ||
						c == r->ev[1] ? 1 : 0;
			uint64_t dp = b.ctr[c].packets - a.ctr[c].packets;
			uint64_t db = b.ctr[c].bytes - a.ctr[c].bytes;

			if (dp != want || db != want * len) {
				print_error("row %zu \"%s\": %s +%llu frames "
					    "+%llu bytes, expected +%llu "
					    "+%llu\n", i, r->name,
					    lb_steer_ctr_name((unsigned)c),
					    (unsigned long long)dp,
					    (unsigned long long)db,
					    (unsigned long long)want,
					    (unsigned long long)(want * len));
				bad++;
			}
		}
	}
	assert_int_equal(bad, 0);
}

/* Sum of the verdict counters' frames (events excluded). */
static uint64_t
verdicts(const struct lb_steer_stats *st)
{
	uint64_t n = 0;

	for (int c = 0; c < LB_STEER_CTR_ACL_ALLOW; c++)
		n += st->ctr[c].packets;
	return n;
}

/* One frame: a verdict the program may give, and exactly one verdict
 * counter for it. */
static void
judge_once(struct fix *f, const uint8_t *frame, size_t len, const char *what,
	   size_t i, size_t at)
{
	struct lb_steer_stats a, b;
	uint32_t v;

	assert_int_equal(lb_steer_stats_read(f->s, &a), 0);
	v = run(lb_steer_prog_fd(f->s), frame, len);
	assert_int_equal(lb_steer_stats_read(f->s, &b), 0);
	if ((v != XDP_PASS && v != XDP_DROP && v != XDP_REDIRECT) ||
	    verdicts(&b) - verdicts(&a) != 1) {
		print_error("%s %zu at %zu bytes: verdict %u, %llu verdict "
			    "counts\n", what, i, at, v,
			    (unsigned long long)(verdicts(&b) - verdicts(&a)));
		fail();
	}
}

/* Every row's frame cut at every length the kernel accepts (an Ethernet
 * header at least): never a verdict outside pass, drop and redirect,
 * always exactly one verdict counted. */
static void
test_every_cut(void **state)
{
	struct fix *f = *state;

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		uint8_t frame[256];
		size_t len = build(&rows[i].pkt, frame);

		for (size_t cut = ETH_HLEN; cut <= len; cut++)
			judge_once(f, frame, cut, "row", i, cut);
	}
}

/* Random bytes behind the ethertypes the program parses, at random
 * lengths, with the addresses of the plan sprinkled in so that rules and
 * the ACL are hit too. */
static void
test_random_frames(void **state)
{
	static const uint16_t types[] = { ETH_P_IP, ETH_P_ARP, ETH_P_8021Q,
					  ETH_P_IPV6, 0x88cc };
	static const uint32_t addrs[] = { VIP_PORT, VIP_ALL, LOCAL, SNAT,
					  SHARED, HOST, DENIED, DENY_LB,
					  EXPIRED, NESTED };
	static const char *const addrs6[] = { V6_VIP_PORT, V6_VIP_ALL,
					      V6_LOCAL, V6_LINK, V6_SHARED,
					      V6_HOST, V6_DENIED, V6_DENY_LB,
					      V6_NESTED, V6_SOLICITED };
	struct fix *f = *state;
	uint64_t x = 0x9e3779b97f4a7c15ull;

	for (size_t i = 0; i < 3000; i++) {
		uint8_t frame[128];
		size_t len;

		for (size_t k = 0; k < sizeof(frame); k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			frame[k] = (uint8_t)x;
		}
		len = ETH_HLEN + (size_t)(x >> 8) % (sizeof(frame) - ETH_HLEN);
		put16(frame + 12, types[(x >> 32) % ARRAY_SIZE(types)]);
		if (frame[12] == 0x81) /* VLAN: IPv4 or ARP inside */
			put16(frame + 16, x & 1 ? ETH_P_IP : ETH_P_ARP);
		/* IPv4: version 4, a small IHL; ARP: Ethernet/IPv4; IPv6:
		 * version 6, a plan's addresses, a header the program walks
		 * (or ICMPv6) next, extension headers of random lengths */
		if (frame[12] == 0x86) {
			static const uint8_t next[] = { 0, 43, 44, 60, 6, 17,
							58 };

			frame[14] = 0x60;
			frame[20] = next[(x >> 41) % ARRAY_SIZE(next)];
			addr6(addrs6[(x >> 48) % ARRAY_SIZE(addrs6)], NULL,
			      frame + 22);
			addr6(addrs6[(x >> 52) % ARRAY_SIZE(addrs6)], NULL,
			      frame + 38);
			for (size_t k = 54; k + 1 < sizeof(frame); k += 8)
				if ((x >> (k % 61)) & 1)
					frame[k] = next[(x >> (k % 53)) %
							ARRAY_SIZE(next)];
		} else if ((x >> 40) & 1) {
			frame[14] = (uint8_t)(0x40 | (5 + (x >> 44) % 3));
			put32(frame + 26, addrs[(x >> 48) % ARRAY_SIZE(addrs)]);
			put32(frame + 30, addrs[(x >> 52) % ARRAY_SIZE(addrs)]);
		} else {
			put16(frame + 14, 1);
			put16(frame + 16, ETH_P_IP);
			frame[18] = 6;
			frame[19] = 4;
			put32(frame + 38, addrs[(x >> 48) % ARRAY_SIZE(addrs)]);
		}
		judge_once(f, frame, len, "random frame", i, len);
	}
}

/* Without a socket on the queue a steered frame falls back to the kernel. */
static void
test_no_socket(void **state)
{
	struct fix *f = *state;
	struct pkt k = { TCP(CLIENT, VIP_PORT, 80) };
	struct lb_steer_stats a, b;
	uint8_t frame[256];
	size_t len = build(&k, frame);
	uint32_t q = 0;

	assert_int_equal(bpf_map_delete_elem(lb_steer_xsks_fd(f->s), &q), 0);
	assert_int_equal(lb_steer_stats_read(f->s, &a), 0);
	assert_int_equal(run(lb_steer_prog_fd(f->s), frame, len), XDP_PASS);
	assert_int_equal(lb_steer_stats_read(f->s, &b), 0);
	assert_int_equal(b.ctr[LB_STEER_CTR_PASS_NO_XSK].packets -
			 a.ctr[LB_STEER_CTR_PASS_NO_XSK].packets, 1);
	assert_int_equal(b.ctr[LB_STEER_CTR_XSK_VIP].packets,
			 a.ctr[LB_STEER_CTR_XSK_VIP].packets);
	assert_int_equal(bpf_map_update_elem(lb_steer_xsks_fd(f->s), &q,
					     &f->xsk, BPF_ANY), 0);
	assert_int_equal(run(lb_steer_prog_fd(f->s), frame, len),
			 XDP_REDIRECT);
}

/* Counters are per CPU and summed: frames run many times count that many
 * times. */
static void
test_repeat_counts(void **state)
{
	struct fix *f = *state;
	struct pkt k = { TCP(DENIED, HOST, 22) };
	struct lb_steer_stats a, b;
	uint8_t frame[256];
	size_t len = build(&k, frame);
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame,
		    .data_size_in = (uint32_t)len, .repeat = 1000);

	assert_int_equal(lb_steer_stats_read(f->s, &a), 0);
	assert_int_equal(bpf_prog_test_run_opts(lb_steer_prog_fd(f->s), &o),
			 0);
	assert_int_equal(o.retval, XDP_DROP);
	assert_int_equal(lb_steer_stats_read(f->s, &b), 0);
	assert_int_equal(b.ctr[LB_STEER_CTR_DROP_DENY].packets -
			 a.ctr[LB_STEER_CTR_DROP_DENY].packets, 1000);
	assert_int_equal(b.ctr[LB_STEER_CTR_DROP_DENY].bytes -
			 a.ctr[LB_STEER_CTR_DROP_DENY].bytes, 1000 * len);
}

/* ---- rules through the library --------------------------------------- */

struct walked {
	struct lb_steer_rule r[16];
	int n;
};

static int
collect_rule(const struct lb_steer_rule *r, void *arg)
{
	struct walked *w = arg;

	if (w->n < (int)ARRAY_SIZE(w->r))
		w->r[w->n] = *r;
	w->n++;
	return 0;
}

static int
has_rule(const struct walked *w, uint32_t addr, uint8_t proto, uint16_t lo,
	 uint16_t hi, enum lb_steer_kind kind)
{
	for (int i = 0; i < w->n && i < (int)ARRAY_SIZE(w->r); i++)
		if (w->r[i].addr == htonl(addr) && w->r[i].proto == proto &&
		    w->r[i].port_min == lo && w->r[i].port_max == hi &&
		    w->r[i].kind == kind)
			return 1;
	return 0;
}

static int
map_entries(int fd, size_t key_size)
{
	uint8_t k[64], next[64];
	int n = 0;
	void *prev = NULL;

	assert_true(key_size <= sizeof(k));
	while (bpf_map_get_next_key(fd, prev, next) == 0) {
		memcpy(k, next, key_size);
		prev = k;
		n++;
	}
	return n;
}

static int
stop_at_second(const struct lb_steer_rule *r, void *arg)
{
	(void)r;
	return ++*(int *)arg == 2 ? 42 : 0;
}

static void
test_rule_api(void **state)
{
	struct lb_steer_conf conf = { .max_rules = 64 };
	struct lb_steer *s;
	struct lb_steer_rule r;
	struct walked w = { .n = 0 };
	int calls = 0;

	(void)state;
	assert_int_equal(lb_steer_load(&conf, &s), 0);
	assert_int_equal(add_rule(s, VIP_PORT, IPPROTO_TCP, 80, 80,
				  LB_STEER_KIND_VIP), 0);
	assert_int_equal(add_rule(s, VIP_PORT, IPPROTO_TCP, 443, 443,
				  LB_STEER_KIND_VIP), 0);
	assert_int_equal(add_rule(s, VIP_PORT, IPPROTO_UDP, 0, 0,
				  LB_STEER_KIND_VIP), 0);
	assert_int_equal(add_rule(s, SNAT, 0, 0, 0, LB_STEER_KIND_SNAT), 0);
	assert_int_equal(add_rule(s, SHARED, IPPROTO_UDP, 1024, 65535,
				  LB_STEER_KIND_SNAT), 0);
	assert_int_equal(add_rule(s, SHARED, IPPROTO_ICMP, 0, 0,
				  LB_STEER_KIND_LOCAL), 0);
	/* duplicates, whatever the kind */
	assert_int_equal(add_rule(s, VIP_PORT, IPPROTO_TCP, 80, 80,
				  LB_STEER_KIND_SNAT), -EEXIST);
	assert_int_equal(add_rule(s, VIP_PORT, IPPROTO_UDP, 5, 9,
				  LB_STEER_KIND_VIP), -EEXIST);
	assert_int_equal(add_rule(s, SNAT, 0, 0, 0, LB_STEER_KIND_SNAT),
			 -EEXIST);
	/* refused */
	assert_int_equal(add_rule(s, IP(0, 1, 2, 3), 0, 0, 0, 0), -EINVAL);
	assert_int_equal(add_rule(s, IP(224, 0, 0, 1), 0, 0, 0, 0), -EINVAL);
	assert_int_equal(add_rule(s, IP(255, 255, 255, 255), 0, 0, 0, 0),
			 -EINVAL);
	assert_int_equal(add_rule(s, HOST, IPPROTO_TCP, 90, 80, 0), -EINVAL);
	assert_int_equal(add_rule(s, HOST, IPPROTO_ICMP, 1, 1, 0), -EINVAL);
	assert_int_equal(add_rule(s, HOST, 0, 80, 80, 0), -EINVAL);
	assert_int_equal(add_rule(s, HOST, 0, 0, 0, LB_STEER_KIND_MAX),
			 -EINVAL);
	assert_int_equal(lb_steer_rule_add(s, NULL), -EINVAL);

	assert_int_equal(lb_steer_rule_walk(s, collect_rule, &w), 0);
	assert_int_equal(w.n, 6);
	assert_true(has_rule(&w, VIP_PORT, IPPROTO_TCP, 80, 80, 0));
	assert_true(has_rule(&w, VIP_PORT, IPPROTO_TCP, 443, 443, 0));
	assert_true(has_rule(&w, VIP_PORT, IPPROTO_UDP, 0, 0, 0));
	assert_true(has_rule(&w, SNAT, 0, 0, 0, LB_STEER_KIND_SNAT));
	assert_true(has_rule(&w, SHARED, IPPROTO_UDP, 1024, 65535,
			     LB_STEER_KIND_SNAT));
	assert_true(has_rule(&w, SHARED, IPPROTO_ICMP, 0, 0,
			     LB_STEER_KIND_LOCAL));
	assert_int_equal(lb_steer_rule_walk(s, stop_at_second, &calls), 42);
	assert_int_equal(calls, 2);

	memset(&r, 0, sizeof(r));
	r.addr = htonl(VIP_PORT);
	r.proto = IPPROTO_TCP;
	r.port_min = r.port_max = 80;
	r.kind = LB_STEER_KIND_SNAT; /* the kind is not compared */
	assert_int_equal(lb_steer_rule_del(s, &r), 0);
	assert_int_equal(lb_steer_rule_del(s, &r), -ENOENT);
	r.port_min = r.port_max = 443;
	assert_int_equal(lb_steer_rule_del(s, &r), 0);
	r.proto = IPPROTO_UDP;
	r.port_min = r.port_max = 0;
	assert_int_equal(lb_steer_rule_del(s, &r), 0);
	r.proto = 0;
	assert_int_equal(lb_steer_rule_del(s, &r), -ENOENT);
	/* a whole-address rule over narrow ones, then without it */
	assert_int_equal(add_rule(s, SHARED, 0, 0, 0, LB_STEER_KIND_LOCAL), 0);
	r.addr = htonl(SHARED);
	assert_int_equal(lb_steer_rule_del(s, &r), 0);
	assert_int_equal(lb_steer_rule_del(s, &r), -ENOENT);
	r.proto = IPPROTO_ICMP;
	assert_int_equal(lb_steer_rule_del(s, &r), 0);
	r.proto = IPPROTO_UDP;
	r.port_min = 1024;
	r.port_max = 65535;
	assert_int_equal(lb_steer_rule_del(s, &r), 0);
	r.addr = htonl(SNAT);
	r.proto = 0;
	r.port_min = r.port_max = 0;
	assert_int_equal(lb_steer_rule_del(s, &r), 0);

	w.n = 0;
	assert_int_equal(lb_steer_rule_walk(s, collect_rule, &w), 0);
	assert_int_equal(w.n, 0);
	lb_steer_close(s);
}

/* The map is empty once every rule is gone: no index entry is left. */
static void
test_rule_index_cleanup(void **state)
{
	struct lb_steer_conf conf = { 0 };
	struct lb_steer *s;
	struct bpf_map_info mi;
	uint32_t mlen = sizeof(mi);
	int fd = -1, prog;
	struct bpf_prog_info pi;
	uint32_t plen = sizeof(pi), ids[8];
	struct lb_steer_rule r = {
		.addr = htonl(SHARED), .proto = IPPROTO_TCP,
		.port_min = 8080, .port_max = 8080,
	};

	(void)state;
	assert_int_equal(lb_steer_load(&conf, &s), 0);
	prog = lb_steer_prog_fd(s);
	memset(&pi, 0, sizeof(pi));
	pi.nr_map_ids = ARRAY_SIZE(ids);
	pi.map_ids = (uint64_t)(uintptr_t)ids;
	assert_int_equal(bpf_obj_get_info_by_fd(prog, &pi, &plen), 0);
	for (uint32_t i = 0; i < pi.nr_map_ids && fd < 0; i++) {
		int m = bpf_map_get_fd_by_id(ids[i]);

		memset(&mi, 0, sizeof(mi));
		mlen = sizeof(mi);
		assert_int_equal(bpf_obj_get_info_by_fd(m, &mi, &mlen), 0);
		if (strcmp(mi.name, "steer_rules") == 0)
			fd = m;
		else
			close(m);
	}
	assert_true(fd >= 0);
	assert_int_equal(lb_steer_rule_add(s, &r), 0);
	assert_int_equal(map_entries(fd, sizeof(struct lb_steer_key)), 2);
	r.port_min = r.port_max = 8081;
	assert_int_equal(lb_steer_rule_add(s, &r), 0);
	assert_int_equal(map_entries(fd, sizeof(struct lb_steer_key)), 3);
	assert_int_equal(lb_steer_rule_del(s, &r), 0);
	r.port_min = r.port_max = 8080;
	assert_int_equal(lb_steer_rule_del(s, &r), 0);
	assert_int_equal(map_entries(fd, sizeof(struct lb_steer_key)), 0);
	close(fd);
	lb_steer_close(s);
}

/* ---- ACL through the library ----------------------------------------- */

struct acl_seen {
	int n, expired;
	uint64_t now;
};

static int
count_acl(const struct lb_steer_acl *a, void *arg)
{
	struct acl_seen *w = arg;

	w->n++;
	if (a->expires_ns != 0 && a->expires_ns <= w->now)
		w->expired++;
	return 0;
}

static void
test_acl_api(void **state)
{
	struct lb_steer_conf conf = { 0 };
	struct lb_steer *s;
	struct acl_seen w = { 0 };
	const uint64_t hour = 3600ull * 1000000000ull;

	(void)state;
	assert_int_equal(lb_steer_load(&conf, &s), 0);
	assert_int_equal(acl(s, IP(10, 0, 0, 0), 8, LB_STEER_ACL_DENY, 0), 0);
	assert_int_equal(acl(s, IP(10, 1, 0, 0), 16, LB_STEER_ACL_ALLOW, 1), 0);
	assert_int_equal(acl(s, IP(10, 2, 0, 0), 16, LB_STEER_ACL_DENY_LB, 1),
			 0);
	assert_int_equal(acl(s, IP(10, 3, 0, 0), 16, LB_STEER_ACL_DENY, hour),
			 0);
	assert_int_equal(acl(s, 0, 0, LB_STEER_ACL_DENY_LB, hour), 0);
	assert_int_equal(acl(s, IP(10, 3, 0, 1), 32, LB_STEER_ACL_DENY,
			     UINT64_MAX), 0);
	/* setting again replaces */
	assert_int_equal(acl(s, IP(10, 0, 0, 0), 8, LB_STEER_ACL_DENY_LB, 0),
			 0);
	/* refused */
	assert_int_equal(acl(s, IP(10, 0, 0, 1), 8, LB_STEER_ACL_DENY, 0),
			 -EINVAL);
	assert_int_equal(acl(s, IP(10, 0, 0, 0), 33, LB_STEER_ACL_DENY, 0),
			 -EINVAL);
	assert_int_equal(acl(s, IP(10, 0, 0, 0), 8, 0, 0), -EINVAL);
	assert_int_equal(acl(s, IP(10, 0, 0, 0), 8, 4, 0), -EINVAL);
	assert_int_equal(lb_steer_acl_del(s, htonl(IP(10, 0, 0, 1)), 8),
			 -EINVAL);
	assert_int_equal(lb_steer_acl_del(s, htonl(IP(10, 9, 0, 0)), 16),
			 -ENOENT);

	usleep(1000);
	w.now = lb_steer_now_ns();
	assert_int_equal(lb_steer_acl_walk(s, count_acl, &w), 0);
	assert_int_equal(w.n, 6);
	assert_int_equal(w.expired, 2);
	/* a clock one hour and a bit ahead sees 2 more expired; the two
	 * forever entries never are */
	assert_int_equal(lb_steer_acl_gc(s, 0), 2);
	assert_int_equal(lb_steer_acl_gc(s, 0), 0);
	assert_int_equal(lb_steer_acl_gc(s, lb_steer_now_ns() + 2 * hour), 2);
	memset(&w, 0, sizeof(w));
	w.now = lb_steer_now_ns();
	assert_int_equal(lb_steer_acl_walk(s, count_acl, &w), 0);
	assert_int_equal(w.n, 2);
	assert_int_equal(lb_steer_acl_del(s, htonl(IP(10, 0, 0, 0)), 8), 0);
	assert_int_equal(lb_steer_acl_del(s, htonl(IP(10, 3, 0, 1)), 32), 0);
	memset(&w, 0, sizeof(w));
	assert_int_equal(lb_steer_acl_walk(s, count_acl, &w), 0);
	assert_int_equal(w.n, 0);
	lb_steer_close(s);
}

/* ---- IPv6 through the library ---------------------------------------- */

/* Prefix lengths at both ends and between, each case set on top of the
 * fixture's plan and removed after: the frames are TCP to V6_VIP_PORT:80
 * (or to V6_HOST:22 where the case says host). */
static const struct {
	const char *name;
	struct {
		const char *prefix;
		uint8_t len;
		enum lb_steer_acl_action a;
	} e[2];
	struct {
		const char *src;
		int host;
		uint32_t verdict;
		int ctr;
	} probe[3];
} acl6_cases[] = {
	{ "::/0 deny-lb: every source, LB traffic only",
	  { { "::", 0, LB_STEER_ACL_DENY_LB } },
	  { { V6_CLIENT, 0, XDP_DROP, LB_STEER_CTR_DROP_DENY_LB },
	    { V6_CLIENT, 1, XDP_PASS, LB_STEER_CTR_PASS_IPV6 },
	    { V6_DENIED, 0, XDP_DROP, LB_STEER_CTR_DROP_DENY } } },
	{ "::/0 deny with a /48 allow",
	  { { "::", 0, LB_STEER_ACL_DENY },
	    { "2001:db8:ff::", 48, LB_STEER_ACL_ALLOW } },
	  { { V6_CLIENT, 0, XDP_REDIRECT, LB_STEER_CTR_XSK_VIP },
	    { "2001:db8:fe::7", 1, XDP_DROP, LB_STEER_CTR_DROP_DENY },
	    { "fe80::1", 0, XDP_DROP, LB_STEER_CTR_DROP_DENY } } },
	{ "8000::/1: only the upper half",
	  { { "8000::", 1, LB_STEER_ACL_DENY } },
	  { { "8001::1", 0, XDP_DROP, LB_STEER_CTR_DROP_DENY },
	    { "7fff:ffff::1", 0, XDP_REDIRECT, LB_STEER_CTR_XSK_VIP },
	    { V6_CLIENT, 1, XDP_PASS, LB_STEER_CTR_PASS_IPV6 } } },
	{ "/127: two addresses",
	  { { "2001:db8:ff::6", 127, LB_STEER_ACL_DENY } },
	  { { "2001:db8:ff::6", 0, XDP_DROP, LB_STEER_CTR_DROP_DENY },
	    { V6_CLIENT, 1, XDP_DROP, LB_STEER_CTR_DROP_DENY },
	    { "2001:db8:ff::8", 0, XDP_REDIRECT, LB_STEER_CTR_XSK_VIP } } },
	{ "/128 allow inside a /64 deny",
	  { { "2001:db8:ff::", 64, LB_STEER_ACL_DENY },
	    { V6_CLIENT, 128, LB_STEER_ACL_ALLOW } },
	  { { V6_CLIENT, 0, XDP_REDIRECT, LB_STEER_CTR_XSK_VIP },
	    { "2001:db8:ff::6", 0, XDP_DROP, LB_STEER_CTR_DROP_DENY },
	    { "2001:db8:ff:1::7", 1, XDP_PASS, LB_STEER_CTR_PASS_IPV6 } } },
};

static void
test_acl6_lengths(void **state)
{
	struct fix *f = *state;
	int prog = lb_steer_prog_fd(f->s);

	for (size_t i = 0; i < ARRAY_SIZE(acl6_cases); i++) {
		for (size_t j = 0; j < 2 && acl6_cases[i].e[j].prefix; j++)
			assert_int_equal(acl6(f->s, acl6_cases[i].e[j].prefix,
					      acl6_cases[i].e[j].len,
					      acl6_cases[i].e[j].a, 0), 0);
		for (size_t j = 0; j < 3; j++) {
			const char *dst = acl6_cases[i].probe[j].host
						  ? V6_HOST
						  : V6_VIP_PORT;
			struct pkt k = { TCP6(acl6_cases[i].probe[j].src, dst,
					      acl6_cases[i].probe[j].host
						      ? 22 : 80) };
			struct lb_steer_stats a, b;
			int c = acl6_cases[i].probe[j].ctr;
			uint8_t frame[256];
			size_t len = build(&k, frame);
			uint32_t v;

			assert_int_equal(lb_steer_stats_read(f->s, &a), 0);
			v = run(prog, frame, len);
			assert_int_equal(lb_steer_stats_read(f->s, &b), 0);
			if (v != acl6_cases[i].probe[j].verdict ||
			    b.ctr[c].packets - a.ctr[c].packets != 1) {
				print_error("%s, %s: verdict %s, %s +%llu\n",
					    acl6_cases[i].name,
					    acl6_cases[i].probe[j].src,
					    verdict_name(v),
					    lb_steer_ctr_name((unsigned)c),
					    (unsigned long long)(
						    b.ctr[c].packets -
						    a.ctr[c].packets));
				fail();
			}
		}
		for (size_t j = 0; j < 2 && acl6_cases[i].e[j].prefix; j++) {
			uint8_t p[16];

			addr6(acl6_cases[i].e[j].prefix, NULL, p);
			assert_int_equal(lb_steer_acl6_del(f->s, p,
					 acl6_cases[i].e[j].len), 0);
		}
	}
}

struct walked6 {
	struct lb_steer_rule6 r[16];
	int n;
};

static int
collect_rule6(const struct lb_steer_rule6 *r, void *arg)
{
	struct walked6 *w = arg;

	if (w->n < (int)ARRAY_SIZE(w->r))
		w->r[w->n] = *r;
	w->n++;
	return 0;
}

static int
has_rule6(const struct walked6 *w, const char *addr, uint8_t proto,
	  uint16_t lo, uint16_t hi, enum lb_steer_kind kind)
{
	uint8_t a[16];

	addr6(addr, NULL, a);
	for (int i = 0; i < w->n && i < (int)ARRAY_SIZE(w->r); i++)
		if (memcmp(w->r[i].addr, a, 16) == 0 &&
		    w->r[i].proto == proto && w->r[i].port_min == lo &&
		    w->r[i].port_max == hi && w->r[i].kind == kind)
			return 1;
	return 0;
}

static int
del_rule6(struct lb_steer *s, const char *addr, uint8_t proto, uint16_t lo,
	  uint16_t hi)
{
	struct lb_steer_rule6 r = {
		.proto = proto, .port_min = lo, .port_max = hi,
		.kind = LB_STEER_KIND_SNAT, /* not compared */
	};

	addr6(addr, NULL, r.addr);
	return lb_steer_rule6_del(s, &r);
}

static void
test_rule6_api(void **state)
{
	struct lb_steer_conf conf = { .max_rules = 64 };
	struct lb_steer *s;
	struct walked6 w = { .n = 0 };
	struct walked w4 = { .n = 0 };
	static const char *const refused[] = { "::", "::1", "ff02::1",
					       "ff05::1:3",
					       "::ffff:10.0.0.1" };

	(void)state;
	assert_int_equal(lb_steer_load(&conf, &s), 0);
	assert_int_equal(add_rule6(s, V6_VIP_PORT, IPPROTO_TCP, 80, 80,
				   LB_STEER_KIND_VIP), 0);
	assert_int_equal(add_rule6(s, V6_VIP_PORT, IPPROTO_UDP, 0, 0,
				   LB_STEER_KIND_VIP), 0);
	assert_int_equal(add_rule6(s, V6_SNAT, 0, 0, 0, LB_STEER_KIND_SNAT),
			 0);
	assert_int_equal(add_rule6(s, V6_SHARED, IPPROTO_UDP, 1024, 65535,
				   LB_STEER_KIND_SNAT), 0);
	assert_int_equal(add_rule6(s, V6_SHARED, IPPROTO_ICMPV6, 0, 0,
				   LB_STEER_KIND_LOCAL), 0);
	assert_int_equal(add_rule6(s, V6_LINK, 0, 0, 0, LB_STEER_KIND_LOCAL),
			 0);
	/* duplicates, whatever the kind */
	assert_int_equal(add_rule6(s, V6_VIP_PORT, IPPROTO_TCP, 80, 80,
				   LB_STEER_KIND_SNAT), -EEXIST);
	assert_int_equal(add_rule6(s, V6_VIP_PORT, IPPROTO_UDP, 5, 9,
				   LB_STEER_KIND_VIP), -EEXIST);
	assert_int_equal(add_rule6(s, V6_SNAT, 0, 0, 0, LB_STEER_KIND_SNAT),
			 -EEXIST);
	/* refused */
	for (size_t i = 0; i < ARRAY_SIZE(refused); i++)
		assert_int_equal(add_rule6(s, refused[i], 0, 0, 0, 0),
				 -EINVAL);
	assert_int_equal(add_rule6(s, V6_HOST, IPPROTO_TCP, 90, 80, 0),
			 -EINVAL);
	assert_int_equal(add_rule6(s, V6_HOST, IPPROTO_ICMPV6, 1, 1, 0),
			 -EINVAL);
	assert_int_equal(add_rule6(s, V6_HOST, 0, 80, 80, 0), -EINVAL);
	assert_int_equal(add_rule6(s, V6_HOST, 0, 0, 0, LB_STEER_KIND_MAX),
			 -EINVAL);
	assert_int_equal(lb_steer_rule6_add(s, NULL), -EINVAL);
	assert_int_equal(lb_steer_rule6_add(NULL, NULL), -EINVAL);

	assert_int_equal(lb_steer_rule6_walk(s, collect_rule6, &w), 0);
	assert_int_equal(w.n, 6);
	assert_true(has_rule6(&w, V6_VIP_PORT, IPPROTO_TCP, 80, 80, 0));
	assert_true(has_rule6(&w, V6_VIP_PORT, IPPROTO_UDP, 0, 0, 0));
	assert_true(has_rule6(&w, V6_SNAT, 0, 0, 0, LB_STEER_KIND_SNAT));
	assert_true(has_rule6(&w, V6_SHARED, IPPROTO_UDP, 1024, 65535,
			      LB_STEER_KIND_SNAT));
	assert_true(has_rule6(&w, V6_SHARED, IPPROTO_ICMPV6, 0, 0,
			      LB_STEER_KIND_LOCAL));
	assert_true(has_rule6(&w, V6_LINK, 0, 0, 0, LB_STEER_KIND_LOCAL));
	/* the families keep apart */
	assert_int_equal(lb_steer_rule_walk(s, collect_rule, &w4), 0);
	assert_int_equal(w4.n, 0);

	assert_int_equal(del_rule6(s, V6_VIP_PORT, IPPROTO_TCP, 80, 80), 0);
	assert_int_equal(del_rule6(s, V6_VIP_PORT, IPPROTO_TCP, 80, 80),
			 -ENOENT);
	assert_int_equal(del_rule6(s, V6_VIP_PORT, 0, 0, 0), -ENOENT);
	assert_int_equal(del_rule6(s, V6_VIP_PORT, IPPROTO_UDP, 0, 0), 0);
	assert_int_equal(del_rule6(s, V6_SNAT, 0, 0, 0), 0);
	assert_int_equal(del_rule6(s, V6_SHARED, IPPROTO_UDP, 1024, 65535),
			 0);
	assert_int_equal(del_rule6(s, V6_SHARED, IPPROTO_ICMPV6, 0, 0), 0);
	assert_int_equal(del_rule6(s, V6_LINK, 0, 0, 0), 0);
	w.n = 0;
	assert_int_equal(lb_steer_rule6_walk(s, collect_rule6, &w), 0);
	assert_int_equal(w.n, 0);
	lb_steer_close(s);
}

struct acl6_seen {
	int n, expired, len0, len128;
};

static int
count_acl6(const struct lb_steer_acl6 *a, void *arg)
{
	struct acl6_seen *w = arg;

	w->n++;
	if (a->expires_ns != 0 && a->expires_ns <= lb_steer_now_ns())
		w->expired++;
	w->len0 += a->prefixlen == 0;
	w->len128 += a->prefixlen == 128;
	return 0;
}

static void
test_acl6_api(void **state)
{
	struct lb_steer_conf conf = { 0 };
	struct lb_steer *s;
	struct acl6_seen w = { 0 };
	struct lb_steer_acl6 m;
	uint8_t a[16], p[16];
	const uint64_t hour = 3600ull * 1000000000ull;

	(void)state;
	assert_int_equal(lb_steer_load(&conf, &s), 0);
	assert_int_equal(acl6(s, "2001:db8::", 32, LB_STEER_ACL_DENY, 0), 0);
	assert_int_equal(acl6(s, "2001:db8:1::", 48, LB_STEER_ACL_ALLOW, 1),
			 0);
	assert_int_equal(acl6(s, "2001:db8:2::", 48, LB_STEER_ACL_DENY_LB,
			      hour), 0);
	assert_int_equal(acl6(s, "::", 0, LB_STEER_ACL_DENY_LB, 0), 0);
	assert_int_equal(acl6(s, "2001:db8:2::1", 128, LB_STEER_ACL_ALLOW,
			      0), 0);
	/* an IPv4 entry that expired too, for the collection below */
	assert_int_equal(acl(s, IP(10, 1, 0, 0), 16, LB_STEER_ACL_DENY, 1), 0);
	/* setting again replaces */
	assert_int_equal(acl6(s, "2001:db8::", 32, LB_STEER_ACL_DENY, 0), 0);
	/* refused: host bits, length, action */
	assert_int_equal(acl6(s, "2001:db8::1", 64, LB_STEER_ACL_DENY, 0),
			 -EINVAL);
	assert_int_equal(acl6(s, "2001:db8:0:0:8000::", 64,
			      LB_STEER_ACL_DENY, 0), -EINVAL);
	assert_int_equal(acl6(s, "2001:db8::", 129, LB_STEER_ACL_DENY, 0),
			 -EINVAL);
	assert_int_equal(acl6(s, "2001:db8::", 32, 0, 0), -EINVAL);
	assert_int_equal(acl6(s, "2001:db8::", 32, 4, 0), -EINVAL);
	assert_int_equal(lb_steer_acl6_set(s, NULL, 0, LB_STEER_ACL_DENY, 0),
			 -EINVAL);
	addr6("2001:db8:9::", NULL, p);
	assert_int_equal(lb_steer_acl6_del(s, p, 48), -ENOENT);

	usleep(1000);
	/* the longest live entry decides; the expired /48 allow is looked
	 * past to the /32 deny */
	addr6("2001:db8:1::5", NULL, a);
	assert_int_equal(lb_steer_acl6_match(s, a, lb_steer_now_ns(), &m), 0);
	assert_int_equal(m.prefixlen, 32);
	assert_int_equal(m.action, LB_STEER_ACL_DENY);
	addr6("2001:db8::", NULL, p);
	assert_memory_equal(m.prefix, p, 16);
	addr6("2001:db8:2::1", NULL, a);
	assert_int_equal(lb_steer_acl6_match(s, a, lb_steer_now_ns(), &m), 0);
	assert_int_equal(m.prefixlen, 128);
	assert_int_equal(m.action, LB_STEER_ACL_ALLOW);
	assert_memory_equal(m.prefix, a, 16);
	addr6("3fff::1", NULL, a);
	assert_int_equal(lb_steer_acl6_match(s, a, lb_steer_now_ns(), &m), 0);
	assert_int_equal(m.prefixlen, 0);
	assert_int_equal(m.action, LB_STEER_ACL_DENY_LB);

	assert_int_equal(lb_steer_acl6_walk(s, count_acl6, &w), 0);
	assert_int_equal(w.n, 5);
	assert_int_equal(w.expired, 1);
	assert_int_equal(w.len0, 1);
	assert_int_equal(w.len128, 1);
	/* collection covers both families: the v4 /16 and the v6 /48 */
	assert_int_equal(lb_steer_acl_gc(s, 0), 2);
	assert_int_equal(lb_steer_acl_gc(s, lb_steer_now_ns() + 2 * hour), 1);
	memset(&w, 0, sizeof(w));
	assert_int_equal(lb_steer_acl6_walk(s, count_acl6, &w), 0);
	assert_int_equal(w.n, 3);
	addr6("2001:db8::", NULL, p);
	assert_int_equal(lb_steer_acl6_del(s, p, 32), 0);
	addr6("::", NULL, p);
	assert_int_equal(lb_steer_acl6_del(s, p, 0), 0);
	addr6("2001:db8:2::1", NULL, p);
	assert_int_equal(lb_steer_acl6_del(s, p, 128), 0);
	memset(&w, 0, sizeof(w));
	assert_int_equal(lb_steer_acl6_walk(s, count_acl6, &w), 0);
	assert_int_equal(w.n, 0);
	lb_steer_close(s);
}

/* ---- pins: a restart finds the maps again ---------------------------- */

static int
have_bpffs(void)
{
	struct statfs st;

	return statfs("/sys/fs/bpf", &st) == 0 &&
	       (uint32_t)st.f_type == BPF_FS_MAGIC_NR;
}

static void
test_pin_restart(void **state)
{
	struct lb_steer_conf conf = { 0 };
	struct lb_steer *a, *b, *c;
	struct lb_steer_stats st;
	struct walked w = { .n = 0 };
	char dir[256], inst[32], path[300];
	struct pkt deny = { TCP(DENIED, HOST, 22) };
	struct pkt vip = { TCP(CLIENT, VIP_PORT, 80) };
	uint8_t f1[256], f2[256];
	size_t l1 = build(&deny, f1), l2 = build(&vip, f2);
	struct stat sb;

	(void)state;
	if (!have_bpffs())
		skip();
	snprintf(inst, sizeof(inst), "steer-test-%d", (int)getpid());
	assert_int_equal(lb_steer_pin_dir(dir, sizeof(dir), inst), 0);
	lb_steer_unpin(dir);
	conf.pin_dir = dir;

	/* first run: fills the maps */
	assert_int_equal(lb_steer_load(&conf, &a), 0);
	assert_int_equal(add_rule(a, VIP_PORT, IPPROTO_TCP, 80, 80,
				  LB_STEER_KIND_VIP), 0);
	assert_int_equal(acl(a, IP(192, 0, 2, 0), 24, LB_STEER_ACL_DENY, 0),
			 0);
	assert_int_equal(run(lb_steer_prog_fd(a), f1, l1), XDP_DROP);
	lb_steer_close(a);
	snprintf(path, sizeof(path), "%s/counters", dir);
	assert_int_equal(stat(path, &sb), 0);

	/* lb-control's view: the maps alone */
	assert_int_equal(lb_steer_open_pinned(dir, &c), 0);
	assert_int_equal(lb_steer_prog_fd(c), -1);
	assert_int_equal(lb_steer_rule_walk(c, collect_rule, &w), 0);
	assert_int_equal(w.n, 1);
	assert_int_equal(lb_steer_stats_read(c, &st), 0);
	assert_int_equal(st.ctr[LB_STEER_CTR_DROP_DENY].packets, 1);

	/* second run: the same rules, ACL and counters */
	assert_int_equal(lb_steer_load(&conf, &b), 0);
	assert_int_equal(run(lb_steer_prog_fd(b), f1, l1), XDP_DROP);
	assert_int_equal(run(lb_steer_prog_fd(b), f2, l2), XDP_PASS);
	assert_int_equal(lb_steer_stats_read(c, &st), 0);
	assert_int_equal(st.ctr[LB_STEER_CTR_DROP_DENY].packets, 2);
	/* no socket in this run's xsks_map, but steered all the same */
	assert_int_equal(st.ctr[LB_STEER_CTR_PASS_NO_XSK].packets, 1);
	/* a change through one handle is seen by the other's program */
	assert_int_equal(lb_steer_acl_del(c, htonl(IP(192, 0, 2, 0)), 24), 0);
	assert_int_equal(run(lb_steer_prog_fd(b), f1, l1), XDP_PASS);
	lb_steer_close(b);
	lb_steer_close(c);

	assert_int_equal(lb_steer_unpin(dir), 0);
	assert_int_not_equal(stat(dir, &sb), 0);
	assert_int_equal(lb_steer_open_pinned(dir, &c), -ENOENT);
	assert_int_equal(lb_steer_unpin(dir), 0);
}

/* A pinned map of another layout is refused, not silently replaced. */
static void
test_pin_incompatible(void **state)
{
	struct lb_steer_conf conf = { 0 };
	struct lb_steer *s;
	char dir[256], inst[32], path[300];
	int fd;

	(void)state;
	if (!have_bpffs())
		skip();
	snprintf(inst, sizeof(inst), "steer-test-%d-old", (int)getpid());
	assert_int_equal(lb_steer_pin_dir(dir, sizeof(dir), inst), 0);
	lb_steer_unpin(dir);
	conf.pin_dir = dir;
	/* make the directory and the other maps the normal way */
	assert_int_equal(lb_steer_load(&conf, &s), 0);
	lb_steer_close(s);
	snprintf(path, sizeof(path), "%s/counters", dir);
	assert_int_equal(unlink(path), 0);
	fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "counters", 4, 8,
			    LB_STEER_CTR_MAX, NULL);
	assert_true(fd >= 0);
	assert_int_equal(bpf_obj_pin(fd, path), 0);
	close(fd);
	assert_int_equal(lb_steer_load(&conf, &s), -EINVAL);
	assert_int_equal(lb_steer_open_pinned(dir, &s), -EINVAL);
	assert_int_equal(lb_steer_unpin(dir), 0);
}

/*
 * The pins of a version without IPv6 (no steer_rules6, no acl_v6):
 * lb-control opens them for IPv4 and is told that IPv6 is not there; the
 * next load of the program adds the IPv6 maps and keeps the rest.
 */
static void
test_pin_without_ipv6(void **state)
{
	static const char *const v6maps[] = { "steer_rules6", "acl_v6" };
	struct lb_steer_conf conf = { 0 };
	struct lb_steer *s, *c;
	struct walked w = { .n = 0 };
	struct walked6 w6 = { .n = 0 };
	char dir[256], inst[32], path[300];
	uint8_t p[16];
	struct pkt ns = { NS6(V6_CLIENT, V6_VIP_ALL) };
	uint8_t frame[256];
	size_t len = build(&ns, frame);

	(void)state;
	if (!have_bpffs())
		skip();
	snprintf(inst, sizeof(inst), "steer-test-%d-v4", (int)getpid());
	assert_int_equal(lb_steer_pin_dir(dir, sizeof(dir), inst), 0);
	lb_steer_unpin(dir);
	conf.pin_dir = dir;
	assert_int_equal(lb_steer_load(&conf, &s), 0);
	assert_int_equal(add_rule(s, VIP_ALL, 0, 0, 0, LB_STEER_KIND_VIP), 0);
	lb_steer_close(s);
	for (size_t i = 0; i < ARRAY_SIZE(v6maps); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, v6maps[i]);
		assert_int_equal(unlink(path), 0);
	}

	assert_int_equal(lb_steer_open_pinned(dir, &c), 0);
	assert_int_equal(lb_steer_rule_walk(c, collect_rule, &w), 0);
	assert_int_equal(w.n, 1);
	assert_int_equal(add_rule6(c, V6_VIP_ALL, 0, 0, 0, 0), -EOPNOTSUPP);
	assert_int_equal(lb_steer_rule6_walk(c, collect_rule6, &w6),
			 -EOPNOTSUPP);
	assert_int_equal(acl6(c, "2001:db8::", 32, LB_STEER_ACL_DENY, 0),
			 -EOPNOTSUPP);
	addr6("2001:db8::", NULL, p);
	assert_int_equal(lb_steer_acl6_del(c, p, 32), -EOPNOTSUPP);
	assert_int_equal(acl(c, IP(10, 2, 0, 0), 16, LB_STEER_ACL_DENY, 1), 0);
	usleep(1000);
	assert_int_equal(lb_steer_acl_gc(c, 0), 1);
	lb_steer_close(c);

	/* the next load pins the IPv6 maps; a rule set through the pins
	 * steers in that load's program */
	assert_int_equal(lb_steer_load(&conf, &s), 0);
	assert_int_equal(lb_steer_open_pinned(dir, &c), 0);
	assert_int_equal(add_rule6(c, V6_VIP_ALL, 0, 0, 0, 0), 0);
	assert_int_equal(run(lb_steer_prog_fd(s), frame, len), XDP_PASS);
	w.n = 0;
	assert_int_equal(lb_steer_rule_walk(c, collect_rule, &w), 0);
	assert_int_equal(w.n, 1);
	lb_steer_close(c);
	lb_steer_close(s);
	assert_int_equal(lb_steer_open_pinned(dir, &c), 0);
	assert_int_equal(lb_steer_rule6_walk(c, collect_rule6, &w6), 0);
	assert_int_equal(w6.n, 1);
	lb_steer_close(c);
	assert_int_equal(lb_steer_unpin(dir), 0);
	for (size_t i = 0; i < ARRAY_SIZE(v6maps); i++) {
		struct stat sb;

		snprintf(path, sizeof(path), "%s/%s", dir, v6maps[i]);
		assert_int_not_equal(stat(path, &sb), 0);
	}
}

static void
test_pin_dir_names(void **state)
{
	char buf[128], small[8], name[66];

	(void)state;
	assert_int_equal(lb_steer_pin_dir(buf, sizeof(buf), "lb1"), 0);
	assert_string_equal(buf, LB_STEER_PIN_ROOT "/lb1");
	assert_int_equal(lb_steer_pin_dir(buf, sizeof(buf), ""), -EINVAL);
	assert_int_equal(lb_steer_pin_dir(buf, sizeof(buf), "."), -EINVAL);
	assert_int_equal(lb_steer_pin_dir(buf, sizeof(buf), ".."), -EINVAL);
	assert_int_equal(lb_steer_pin_dir(buf, sizeof(buf), "a/b"), -EINVAL);
	memset(name, 'x', sizeof(name) - 1);
	name[65] = '\0';
	name[64] = '\0';
	assert_int_equal(lb_steer_pin_dir(buf, sizeof(buf), name), 0);
	name[64] = 'x';
	assert_int_equal(lb_steer_pin_dir(buf, sizeof(buf), name), -EINVAL);
	assert_int_equal(lb_steer_pin_dir(small, sizeof(small), "lb1"),
			 -ENOSPC);
}

/* ---- attaching and adopting on the namespace's loopback -------------- */

static int
attached_id(int ifindex, uint32_t *mode_flag)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	assert_int_equal(bpf_xdp_query(ifindex, 0, &q), 0);
	if (mode_flag != NULL)
		*mode_flag = q.skb_prog_id ? XDP_FLAGS_SKB_MODE :
			     q.drv_prog_id ? XDP_FLAGS_DRV_MODE : 0;
	return (int)(q.skb_prog_id ? q.skb_prog_id : q.drv_prog_id);
}

static uint32_t
prog_id(int fd)
{
	struct bpf_prog_info pi;
	uint32_t len = sizeof(pi);

	memset(&pi, 0, sizeof(pi));
	assert_int_equal(bpf_obj_get_info_by_fd(fd, &pi, &len), 0);
	return pi.id;
}

static uint32_t
map_id(int fd)
{
	struct bpf_map_info mi;
	uint32_t len = sizeof(mi);

	memset(&mi, 0, sizeof(mi));
	assert_int_equal(bpf_obj_get_info_by_fd(fd, &mi, &len), 0);
	return mi.id;
}

/* An XDP program that is not ours: "return XDP_PASS". */
static int
foreign_prog(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0,
		  .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "other", "GPL", insns,
			       ARRAY_SIZE(insns), NULL);

	assert_true(fd >= 0);
	return fd;
}

static void
test_attach_adopt(void **state)
{
	const int lo = (int)if_nametoindex("lo");
	struct lb_steer_conf priv = { 0 }, conf = { 0 };
	struct lb_steer *pmd, *s, *again;
	char dir[256], inst[32];
	struct pkt vip = { TCP(CLIENT, VIP_PORT, 80) };
	struct pkt ns = { NS6(V6_CLIENT, V6_VIP_ALL) };
	uint8_t frame[256], frame6[256];
	size_t len = build(&vip, frame), len6 = build(&ns, frame6);
	uint32_t mode;
	int xsk, other;

	(void)state;
	assert_true(lo > 0);
	if (!have_bpffs())
		skip();
	snprintf(inst, sizeof(inst), "steer-test-%d-adopt", (int)getpid());
	assert_int_equal(lb_steer_pin_dir(dir, sizeof(dir), inst), 0);
	lb_steer_unpin(dir);
	conf.pin_dir = dir;

	assert_int_equal(lb_steer_adopt(&conf, lo, &s), -ENOENT);
	assert_int_equal(lb_steer_detach_ifindex(lo), 0);

	/* What the PMD does: load the object with maps of its own, attach
	 * it, put its socket in xsks_map. Generic (skb) mode: lo has no
	 * driver mode. */
	assert_int_equal(lb_steer_load(&priv, &pmd), 0);
	assert_int_equal(lb_steer_attach(pmd, lo, XDP_FLAGS_SKB_MODE), 0);
	assert_int_equal(attached_id(lo, &mode),
			 (int)prog_id(lb_steer_prog_fd(pmd)));
	assert_int_equal(mode, XDP_FLAGS_SKB_MODE);
	xsk = xsk_in_map(pmd, 0);
	/* a second program is refused, not swapped in */
	assert_int_equal(lb_steer_load(&priv, &again), 0);
	assert_int_equal(lb_steer_attach(again, lo, XDP_FLAGS_SKB_MODE),
			 -EBUSY);
	lb_steer_close(again);

	/* adopt: ours is attached, in the same mode, on the PMD's xsks_map */
	assert_int_equal(lb_steer_adopt(&conf, lo, &s), 0);
	assert_int_equal(attached_id(lo, &mode),
			 (int)prog_id(lb_steer_prog_fd(s)));
	assert_int_equal(mode, XDP_FLAGS_SKB_MODE);
	assert_int_equal(map_id(lb_steer_xsks_fd(s)),
			 map_id(lb_steer_xsks_fd(pmd)));
	/* the PMD's socket is found by the adopted program, the rules come
	 * from the pinned maps */
	assert_int_equal(add_rule(s, VIP_PORT, IPPROTO_TCP, 80, 80,
				  LB_STEER_KIND_VIP), 0);
	assert_int_equal(run(lb_steer_prog_fd(s), frame, len), XDP_REDIRECT);
	assert_int_equal(run(lb_steer_prog_fd(pmd), frame, len), XDP_PASS);
	/* and so do IPv6 rules, pinned beside the IPv4 ones */
	assert_int_equal(add_rule6(s, V6_VIP_ALL, 0, 0, 0, LB_STEER_KIND_VIP),
			 0);
	assert_int_equal(run(lb_steer_prog_fd(s), frame6, len6),
			 XDP_REDIRECT);
	assert_int_equal(run(lb_steer_prog_fd(pmd), frame6, len6), XDP_PASS);
	/* the PMD's handle no longer owns the attachment: closing it
	 * leaves ours in place */
	lb_steer_close(pmd);
	assert_int_equal(attached_id(lo, NULL),
			 (int)prog_id(lb_steer_prog_fd(s)));
	/* leftovers of a crash: a process that is gone left it attached */
	lb_steer_disown(s);
	lb_steer_close(s);
	assert_true(attached_id(lo, NULL) != 0);
	assert_int_equal(lb_steer_detach_ifindex(lo), 0);
	assert_int_equal(attached_id(lo, NULL), 0);

	/* somebody else's program is left alone */
	other = foreign_prog();
	assert_int_equal(bpf_xdp_attach(lo, other, XDP_FLAGS_SKB_MODE, NULL),
			 0);
	assert_int_equal(lb_steer_adopt(&conf, lo, &s), -EBUSY);
	assert_int_equal(lb_steer_detach_ifindex(lo), -EBUSY);
	assert_int_equal(attached_id(lo, NULL), (int)prog_id(other));
	assert_int_equal(bpf_xdp_detach(lo, XDP_FLAGS_SKB_MODE, NULL), 0);
	close(other);
	close(xsk);
	assert_int_equal(lb_steer_unpin(dir), 0);
}

/* ---- live frames: the program attached, real sockets ----------------- */

/* A UDP socket bound to @p addr (IPv4 or IPv6) and @p port. */
static int
udp_socket(const char *addr, uint16_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(port) };
	struct sockaddr_in6 sa6 = { .sin6_family = AF_INET6,
				    .sin6_port = htons(port) };
	int v6 = strchr(addr, ':') != NULL;
	int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	if (v6) {
		assert_int_equal(inet_pton(AF_INET6, addr, &sa6.sin6_addr), 1);
		assert_int_equal(bind(fd, (struct sockaddr *)&sa6, sizeof(sa6)),
				 0);
	} else {
		assert_int_equal(inet_pton(AF_INET, addr, &sa.sin_addr), 1);
		assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)),
				 0);
	}
	return fd;
}

/* Sends one datagram from @p tx to where @p rx is bound (its port is
 * @p port); did @p rx get it within 200 ms? */
static int
delivered(int rx, int tx, uint16_t port)
{
	struct sockaddr_storage to;
	socklen_t tolen = sizeof(to);
	struct pollfd p = { .fd = rx, .events = POLLIN };
	char buf[16];

	assert_int_equal(getsockname(rx, (struct sockaddr *)&to, &tolen), 0);
	assert_int_equal(ntohs(((struct sockaddr_in *)&to)->sin_port), port);
	assert_int_equal(sendto(tx, "x", 1, 0, (struct sockaddr *)&to, tolen),
			 1);
	if (poll(&p, 1, 200) != 1)
		return 0;
	assert_int_equal(recv(rx, buf, sizeof(buf), 0), 1);
	return 1;
}

static void
test_live_deny(void **state)
{
	const int lo = (int)if_nametoindex("lo");
	struct lb_steer_conf conf = { 0 };
	struct lb_steer *s;
	struct lb_steer_stats a, b;
	int rx, tx_ok, tx_denied;

	(void)state;
	assert_int_equal(lb_steer_load(&conf, &s), 0);
	assert_int_equal(lb_steer_attach(s, lo, XDP_FLAGS_SKB_MODE), 0);
	assert_int_equal(acl(s, IP(127, 0, 0, 2), 32, LB_STEER_ACL_DENY, 0),
			 0);
	rx = udp_socket("127.0.0.1", 9999);
	tx_ok = udp_socket("127.0.0.1", 0);
	tx_denied = udp_socket("127.0.0.2", 0);
	assert_int_equal(lb_steer_stats_read(s, &a), 0);
	assert_true(delivered(rx, tx_ok, 9999));
	assert_false(delivered(rx, tx_denied, 9999));
	assert_int_equal(lb_steer_stats_read(s, &b), 0);
	assert_true(b.ctr[LB_STEER_CTR_DROP_DENY].packets -
		    a.ctr[LB_STEER_CTR_DROP_DENY].packets >= 1);
	assert_true(b.ctr[LB_STEER_CTR_PASS].packets -
		    a.ctr[LB_STEER_CTR_PASS].packets >= 1);
	/* lifted: the next datagram arrives */
	assert_int_equal(lb_steer_acl_del(s, htonl(IP(127, 0, 0, 2)), 32), 0);
	assert_true(delivered(rx, tx_denied, 9999));
	/* detached by close */
	lb_steer_close(s);
	assert_int_equal(attached_id(lo, NULL), 0);
	close(rx);
	close(tx_ok);
	close(tx_denied);
}

/* The IPv6 ACL on a live interface: ::1 denied, then lifted. */
static void
test_live_deny6(void **state)
{
	const int lo = (int)if_nametoindex("lo");
	struct lb_steer_conf conf = { 0 };
	struct lb_steer *s;
	struct lb_steer_stats a, b;
	int rx, tx, probe;

	(void)state;
	probe = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (probe < 0)
		skip(); /* a kernel without IPv6 */
	close(probe);
	assert_int_equal(lb_steer_load(&conf, &s), 0);
	assert_int_equal(lb_steer_attach(s, lo, XDP_FLAGS_SKB_MODE), 0);
	rx = udp_socket("::1", 9998);
	tx = udp_socket("::1", 0);
	assert_int_equal(lb_steer_stats_read(s, &a), 0);
	assert_true(delivered(rx, tx, 9998));
	assert_int_equal(acl6(s, "::1", 128, LB_STEER_ACL_DENY, 0), 0);
	assert_false(delivered(rx, tx, 9998));
	assert_int_equal(lb_steer_stats_read(s, &b), 0);
	assert_true(b.ctr[LB_STEER_CTR_DROP_DENY].packets -
		    a.ctr[LB_STEER_CTR_DROP_DENY].packets >= 1);
	assert_true(b.ctr[LB_STEER_CTR_PASS_IPV6].packets -
		    a.ctr[LB_STEER_CTR_PASS_IPV6].packets >= 1);
	assert_int_equal(acl6(s, "::", 0, LB_STEER_ACL_DENY, 0), 0);
	assert_int_equal(acl6(s, "::1", 128, LB_STEER_ACL_ALLOW, 0), 0);
	assert_true(delivered(rx, tx, 9998));
	lb_steer_close(s);
	close(rx);
	close(tx);
}

/* ---- the object for the PMD ------------------------------------------ */

static void
test_write_obj(void **state)
{
	char path[64];
	struct bpf_object *o;
	struct bpf_program *p;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/steer-test-%d.bpf.o",
		 (int)getpid());
	assert_int_equal(lb_steer_write_obj(path), 0);
	o = bpf_object__open_file(path, NULL);
	assert_non_null(o);
	/* what the PMD takes: the first program, and xsks_map by name */
	p = bpf_object__next_program(o, NULL);
	assert_non_null(p);
	assert_string_equal(bpf_program__name(p), LB_STEER_PROG_NAME);
	assert_null(bpf_object__next_program(o, p));
	assert_non_null(bpf_object__find_map_by_name(o, "xsks_map"));
	assert_int_equal(bpf_object__load(o), 0);
	bpf_object__close(o);
	unlink(path);
	assert_int_equal(lb_steer_write_obj("/nonexistent-dir/x.o"), -ENOENT);
}

/* The memfd of lb-dataplane's xdp_prog= devarg, opened by path as the
 * PMD opens it. */
static void
test_obj_memfd(void **state)
{
	char path[64];
	struct bpf_object *o;
	int fd;

	(void)state;
	fd = lb_steer_obj_memfd();
	assert_true(fd >= 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	assert_int_equal(access(path, F_OK), 0);
	o = bpf_object__open_file(path, NULL);
	assert_non_null(o);
	assert_string_equal(bpf_program__name(bpf_object__next_program(o, NULL)),
			    LB_STEER_PROG_NAME);
	assert_non_null(bpf_object__find_map_by_name(o, "xsks_map"));
	assert_int_equal(bpf_object__load(o), 0);
	bpf_object__close(o);
	close(fd);
}

/* lb_steer_sync(): the map ends up holding exactly the wanted rules. */
static void
test_sync(void **state)
{
	struct lb_steer_conf conf = { .max_rules = 64 };
	struct lb_steer_rule want[3] = {
		{ .addr = htonl(VIP_PORT), .kind = LB_STEER_KIND_VIP },
		{ .addr = htonl(SNAT), .kind = LB_STEER_KIND_SNAT },
		{ .addr = htonl(SHARED), .proto = IPPROTO_TCP, .port_min = 81,
		  .port_max = 81, .kind = LB_STEER_KIND_VIP },
	};
	struct lb_steer_sync_res res;
	struct lb_steer *s;
	struct walked w = { .n = 0 };

	(void)state;
	assert_int_equal(lb_steer_load(&conf, &s), 0);
	/* by hand: one wanted, one of another kind, one not wanted */
	assert_int_equal(add_rule(s, VIP_PORT, 0, 0, 0, LB_STEER_KIND_VIP), 0);
	assert_int_equal(add_rule(s, SNAT, 0, 0, 0, LB_STEER_KIND_LOCAL), 0);
	assert_int_equal(add_rule(s, SHARED, IPPROTO_UDP, 1024, 65535,
				  LB_STEER_KIND_SNAT), 0);
	assert_int_equal(lb_steer_sync(s, want, 3, &res), 0);
	assert_int_equal(res.kept, 1);
	assert_int_equal(res.removed, 2);
	assert_int_equal(res.added, 2);
	assert_int_equal(lb_steer_rule_walk(s, collect_rule, &w), 0);
	assert_int_equal(w.n, 3);
	assert_true(has_rule(&w, VIP_PORT, 0, 0, 0, LB_STEER_KIND_VIP));
	assert_true(has_rule(&w, SNAT, 0, 0, 0, LB_STEER_KIND_SNAT));
	assert_true(has_rule(&w, SHARED, IPPROTO_TCP, 81, 81,
			     LB_STEER_KIND_VIP));

	/* again: nothing to do */
	assert_int_equal(lb_steer_sync(s, want, 3, &res), 0);
	assert_int_equal(res.kept, 3);
	assert_int_equal(res.added + res.removed, 0);

	/* the host took the VIP's address: whole rule to a port rule */
	want[0].proto = IPPROTO_TCP;
	want[0].port_min = want[0].port_max = 80;
	assert_int_equal(lb_steer_sync(s, want, 1, &res), 0);
	assert_int_equal(res.removed, 3);
	assert_int_equal(res.added, 1);
	w.n = 0;
	assert_int_equal(lb_steer_rule_walk(s, collect_rule, &w), 0);
	assert_int_equal(w.n, 1);
	assert_true(has_rule(&w, VIP_PORT, IPPROTO_TCP, 80, 80,
			     LB_STEER_KIND_VIP));

	/* nothing wanted: empty */
	assert_int_equal(lb_steer_sync(s, NULL, 0, &res), 0);
	w.n = 0;
	assert_int_equal(lb_steer_rule_walk(s, collect_rule, &w), 0);
	assert_int_equal(w.n, 0);
	assert_int_equal(lb_steer_sync(NULL, want, 1, &res), -EINVAL);
	lb_steer_close(s);
}

/* The host's addresses, of the named interfaces only. */
static void
test_host_addrs(void **state)
{
	int lo = (int)if_nametoindex("lo"), none = 1000000;
	uint32_t a[4];

	(void)state;
	assert_true(lo > 0);
	assert_int_equal(lb_steer_host_addrs(&lo, 1, a, 4), 1);
	assert_int_equal(a[0], htonl(INADDR_LOOPBACK));
	assert_int_equal(lb_steer_host_addrs(&none, 1, a, 4), 0);
	assert_int_equal(lb_steer_host_addrs(NULL, 0, a, 4), 0);
	assert_int_equal(lb_steer_host_addrs(&lo, 1, a, 0), 0);
	assert_int_equal(lb_steer_host_addrs(NULL, 1, a, 4), -EINVAL);
}

static int
quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	if (getenv("STEER_TEST_VERBOSE") == NULL)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* The pins of the tests above, gone even when a test failed half way. */
static int
unpin_all(void **state)
{
	static const char *const sfx[] = { "", "-old", "-adopt", "-v4" };
	char dir[256], inst[64];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(sfx); i++) {
		snprintf(inst, sizeof(inst), "steer-test-%d%s", (int)getpid(),
			 sfx[i]);
		if (lb_steer_pin_dir(dir, sizeof(dir), inst) == 0)
			lb_steer_unpin(dir);
	}
	return 0;
}

static int
lo_up(void)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc = -1;

	if (fd < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP;
		rc = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	close(fd);
	return rc;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_every_cut, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_random_frames, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_no_socket, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_repeat_counts, setup,
						teardown),
		cmocka_unit_test(test_rule_api),
		cmocka_unit_test(test_rule_index_cleanup),
		cmocka_unit_test(test_acl_api),
		cmocka_unit_test_setup_teardown(test_acl6_lengths, setup,
						teardown),
		cmocka_unit_test(test_rule6_api),
		cmocka_unit_test(test_acl6_api),
		cmocka_unit_test(test_pin_without_ipv6),
		cmocka_unit_test(test_pin_dir_names),
		cmocka_unit_test(test_pin_restart),
		cmocka_unit_test(test_pin_incompatible),
		cmocka_unit_test(test_attach_adopt),
		cmocka_unit_test(test_live_deny),
		cmocka_unit_test(test_live_deny6),
		cmocka_unit_test(test_write_obj),
		cmocka_unit_test(test_obj_memfd),
		cmocka_unit_test(test_sync),
		cmocka_unit_test(test_host_addrs),
	};

	if (geteuid() != 0) {
		printf("steer_test: SKIP: needs root (BPF, a network "
		       "namespace)\n");
		return 77;
	}
	/* A private network namespace: attaching touches only its lo. */
	if (unshare(CLONE_NEWNET) != 0) {
		printf("steer_test: SKIP: no network namespace: %s\n",
		       strerror(errno));
		return 77;
	}
	if (lo_up() != 0) {
		printf("steer_test: cannot bring lo up: %s\n", strerror(errno));
		return 1;
	}
	libbpf_set_print(quiet);
	return cmocka_run_group_tests(tests, NULL, unpin_all);
}
