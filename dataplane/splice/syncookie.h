/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_SYNCOOKIE_H
#define LB_SYNCOOKIE_H

/**
 * @file
 * SYN cookies: the sequence number of a SYN-ACK that carries, keyed with a
 * secret, what the handshake needs later, so that a SYN costs no state
 * and the client's ACK (acknowledging cookie + 1) proves the client is
 * there. The idea is Linux's (net/ipv4/syncookies.c) and FreeBSD's
 * (tcp_syncache.c); the layout is this module's own:
 *
 *     bit 31            5   4     3 2      1 0
 *        [ MAC, 27 bits ] [key] [count] [mss]
 *
 * - @c mss: index of the largest class of lb_syncookie_mss_tab[] not above
 *   the MSS the client offered (Linux's IPv4 classes);
 * - @c count: low two bits of the time counter (seconds /
 *   LB_SYNCOOKIE_PERIOD) when the cookie was made; a cookie is valid while
 *   the counter is at most LB_SYNCOOKIE_MAX_AGE - 1 steps later (64 to
 *   128 s), as Linux's MAX_SYNCOOKIE_AGE;
 * - @c key: which of the two secrets made it, so that cookies made before
 *   a rotation still check, with one MAC either way;
 * - MAC: the top 27 bits of SipHash-2-4 (Aumasson and Bernstein), keyed
 *   with the 128-bit secret, over the client's address and port, ours,
 *   the client's ISN, the full counter and the MSS index. A blind guess
 *   is right with a probability of about 2^-28.
 *
 * When the client's SYN carried timestamps (RFC 7323), our SYN-ACK's TSval
 * carries in its low LB_SYNCOOKIE_TS_BITS bits what does not fit in the
 * sequence number, as Linux does (cookie_init_timestamp()): the client's
 * window scale (4 bits, 0xf for none), SACK permitted (bit 4) and ECN
 * (bit 5), and the client echoes them in the TSecr of its ACK. These bits
 * are not covered by the MAC: a client that forges them only harms its
 * own connection. Without timestamps, the connection goes on without
 * window scaling, SACK or ECN.
 *
 * Nothing here reads a clock: the caller gives the time. The secrets are
 * read-only on the fast path; rotation builds a new copy for the workers.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Seconds per step of the time counter (Linux: 60 s of jiffies). */
#define LB_SYNCOOKIE_PERIOD 64
/** Steps a cookie stays valid (Linux's MAX_SYNCOOKIE_AGE). */
#define LB_SYNCOOKIE_MAX_AGE 2
/** Low bits of our TSval that carry the client's options. */
#define LB_SYNCOOKIE_TS_BITS 6
/** Number of MSS classes. */
#define LB_SYNCOOKIE_MSS_CLASSES 4

/** MSS classes, ascending: 536 is the default MSS of IPv4 (RFC 9293). */
extern const uint16_t lb_syncookie_mss_tab[LB_SYNCOOKIE_MSS_CLASSES];

/** IPv6's MSS classes, ascending: 1220 is IPv6's minimum (an MTU of
 * 1280, RFC 8200 5). */
extern const uint16_t lb_syncookie_mss6_tab[LB_SYNCOOKIE_MSS_CLASSES];

/** The two secrets: key[cur] makes cookies, both check them. */
struct lb_syncookie_secrets {
	uint64_t key[2][2];
	unsigned int cur; /**< 0 or 1 */
};

/**
 * The connection a cookie is for: addresses and ports as in the packet
 * (network order), the client's initial sequence number in host order
 * (the SYN's seq; on the ACK, its seq - 1).
 */
struct lb_syncookie_tuple {
	uint32_t saddr; /**< the client's */
	uint32_t daddr; /**< ours (the VIP) */
	uint16_t sport;
	uint16_t dport;
	uint32_t cisn;
};

/** lb_syncookie_tuple of an IPv6 connection: the MAC covers both whole
 * addresses. */
struct lb_syncookie_tuple6 {
	uint8_t saddr[16]; /**< the client's */
	uint8_t daddr[16]; /**< ours (the VIP) */
	uint16_t sport;
	uint16_t dport;
	uint32_t cisn;
};

/** The client's options: offered in its SYN, or decoded from its ACK. */
struct lb_syncookie_opts {
	uint16_t mss;  /**< offered MSS (536 if none); decoded: its class */
	int8_t wscale; /**< window scale shift, -1 for none */
	bool sack;     /**< SACK permitted */
	bool ecn;      /**< ECN set up (RFC 3168) */
	bool ts;       /**< timestamps */
};

/** The time, as the caller's clocks show it. */
struct lb_syncookie_clock {
	uint64_t sec; /**< seconds of a monotonic clock */
	uint32_t ts;  /**< our TCP timestamp clock (RFC 7323), e.g. in ms */
};

/** What lb_syncookie_check() found. */
enum lb_syncookie_verdict {
	LB_SYNCOOKIE_OK = 0,
	LB_SYNCOOKIE_EXPIRED, /**< a cookie of ours, too old */
	LB_SYNCOOKIE_FORGED,  /**< not made by either secret for this tuple */
	LB_SYNCOOKIE_BAD_TS,  /**< TSecr later than any TSval we sent */
};

/**
 * SipHash-2-4 of @p len bytes at @p data with the 128-bit @p key (its
 * first 8 bytes read little-endian as key[0], the next 8 as key[1]).
 */
uint64_t lb_siphash24(const uint64_t key[2], const void *data, size_t len);

/** Makes @p key the current secret, the current one the previous. */
void lb_syncookie_rekey(struct lb_syncookie_secrets *s, const uint64_t key[2]);

/**
 * Draws both secrets from the kernel's random pool (getrandom(2)).
 * @return 0, or a negative errno
 */
int lb_syncookie_init(struct lb_syncookie_secrets *s);

/**
 * Draws a new current secret; cookies of the one before keep checking
 * until the next rotation, so rotate no more often than a cookie lives
 * (LB_SYNCOOKIE_PERIOD * LB_SYNCOOKIE_MAX_AGE seconds).
 * @return 0, or a negative errno (the secrets are then unchanged)
 */
int lb_syncookie_rotate(struct lb_syncookie_secrets *s);

/**
 * The cookie answering a SYN of tuple @p t with options @p in at time
 * @p now. When @p in asks for timestamps, @p tsval gets our SYN-ACK's
 * TSval (not later than now->ts), else 0.
 * @return the SYN-ACK's sequence number
 */
uint32_t lb_syncookie_make(const struct lb_syncookie_secrets *s,
			   const struct lb_syncookie_tuple *t,
			   const struct lb_syncookie_clock *now,
			   const struct lb_syncookie_opts *in, uint32_t *tsval);

/**
 * Checks the cookie of an ACK: @p cookie is its acknowledgement - 1;
 * @p tsecr its TSecr, or 0 when it has no timestamps option.
 * @return an enum lb_syncookie_verdict; on LB_SYNCOOKIE_OK, @p out holds
 * the MSS class and what the TSecr carried
 */
int lb_syncookie_check(const struct lb_syncookie_secrets *s,
		       const struct lb_syncookie_tuple *t,
		       const struct lb_syncookie_clock *now, uint32_t cookie,
		       uint32_t tsecr, struct lb_syncookie_opts *out);

/** lb_syncookie_make() for an IPv6 tuple, with lb_syncookie_mss6_tab[]. */
uint32_t lb_syncookie_make6(const struct lb_syncookie_secrets *s,
			    const struct lb_syncookie_tuple6 *t,
			    const struct lb_syncookie_clock *now,
			    const struct lb_syncookie_opts *in,
			    uint32_t *tsval);

/** lb_syncookie_check() for an IPv6 tuple, with lb_syncookie_mss6_tab[]. */
int lb_syncookie_check6(const struct lb_syncookie_secrets *s,
			const struct lb_syncookie_tuple6 *t,
			const struct lb_syncookie_clock *now, uint32_t cookie,
			uint32_t tsecr, struct lb_syncookie_opts *out);

#endif /* LB_SYNCOOKIE_H */
