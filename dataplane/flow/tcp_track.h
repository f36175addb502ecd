/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_TCP_TRACK_H
#define LB_TCP_TRACK_H

/**
 * @file
 * Sequence-number tracking of a TCP flow, so that only a RST or a FIN its
 * receiver would accept changes the flow's state (RFC 5961, as Linux
 * conntrack's tcp_in_window() does for a middlebox).
 *
 * Full-NAT rewrites addresses and ports only, so both sides' sequence
 * numbers are what the load balancer sees. Per direction it keeps the
 * next sequence number of the sender (the highest seq + length seen in
 * window, as conntrack's td_end) and the largest window the sender
 * advertised (td_maxwin), in the unit of its window field with the scale
 * both SYNs agreed on (RFC 7323). A segment from side d is in window when
 *
 *     end[d] - W <= seq <= end[d] + W,   W = win[!d] << ws[!d]
 *
 * that is, within one receive window of the receiver around what d has
 * sent: a retransmission reaches back at most that far, and new data at
 * most that far ahead. Before the other side's SYN is seen (syn_sent)
 * W is 0: only the exact next sequence number is in window.
 *
 * Verdicts on one segment (lb_tcp_track()):
 * - a RST in window whose sequence number is exactly the next one is
 *   accepted; in window but not exact, it gets a challenge ACK and
 *   changes nothing (RFC 5961 section 3.2); out of window it is dropped;
 * - a FIN out of window is dropped (section 4 does the same for a SYN;
 *   a FIN closes half of the flow as surely as a RST closes it);
 * - other segments are forwarded whatever their sequence number (the
 *   receiver judges its data), but only those in window move end[] on,
 *   so that a blind sender cannot drag the window to its guess;
 * - the client's ACK that completes the handshake moves the flow to
 *   established only if it acknowledges the backend's SYN; a backend's
 *   SYN-ACK or RST during syn_sent counts only if it acknowledges the
 *   client's SYN (RFC 9293 3.10.7.3).
 *
 * The record is 16 bytes kept beside the flow table (one per flow entry,
 * four to a cache line): struct lb_flow is a full cache line, and only
 * TCP segments read this one.
 */

#include <stdint.h>

/** Which side of a flow: the same values as enum lb_flow_dir. */
#define LB_TCP_TRK_ORIG 0
#define LB_TCP_TRK_REPLY 1

/** Bits of lb_tcp_track.seen: the side's SYN was seen. */
#define LB_TCP_TRK_SEEN_ORIG 0x01
#define LB_TCP_TRK_SEEN_REPLY 0x02

/** Largest window scale (RFC 7323 section 2.3). */
#define LB_TCP_TRK_WSCALE_MAX 14
/** lb_tcp_track.ws while the client's SYN carried no scale option. */
#define LB_TCP_TRK_WS_NONE 0x0f

/** Sequence state of one TCP flow; all zero is "nothing seen". */
struct lb_tcp_track {
	uint32_t end[2]; /**< next sequence number of each side */
	uint16_t win[2]; /**< largest window field of each side */
	/** Window scale of each side: [ORIG] low nibble, [REPLY] high.
	 * Until the SYN-ACK, the low nibble is the client's offer, or
	 * LB_TCP_TRK_WS_NONE. */
	uint8_t ws;
	uint8_t seen; /**< LB_TCP_TRK_SEEN_* */
	uint16_t pad;
};

_Static_assert(sizeof(struct lb_tcp_track) == 16,
	       "four tracking records to a cache line");

/** What to do with a segment. */
enum lb_tcp_trk_verdict {
	LB_TCP_TRK_PASS = 0,  /**< forward; it may change the flow's state */
	LB_TCP_TRK_KEEP,      /**< forward; it must not change the state */
	LB_TCP_TRK_CHALLENGE, /**< RST in window, not exact: challenge ACK */
	LB_TCP_TRK_DROP,      /**< RST or FIN out of window: drop it */
};

/** One segment as lb_tcp_track() needs it, numbers in host order. */
struct lb_tcp_seg {
	uint32_t seq;
	uint32_t ack;
	uint32_t len;   /**< payload bytes */
	uint16_t win;   /**< window field */
	uint8_t flags;  /**< LB_TCP_* */
	int8_t wscale;  /**< SYN's window scale option, -1 for none */
};

/**
 * Window scale option of a TCP header's options @p opt of @p len bytes
 * (RFC 7323 section 2.2; values above 14 read as 14).
 * @return the shift, or -1 when there is none or the options are malformed
 */
int lb_tcp_opt_wscale(const uint8_t *opt, uint32_t len);

/**
 * Starts tracking a flow at its client's SYN @p s (a new flow, or a new
 * connection on the tuple of a closed one).
 */
void lb_tcp_track_init(struct lb_tcp_track *t, const struct lb_tcp_seg *s);

/**
 * Judges segment @p s from side @p dir (LB_TCP_TRK_ORIG or _REPLY) of a
 * flow in state @p state (enum lb_flow_state, before this segment) and
 * updates @p t with it.
 * @return an enum lb_tcp_trk_verdict
 */
int lb_tcp_track(struct lb_tcp_track *t, unsigned int dir, unsigned int state,
		 const struct lb_tcp_seg *s);

/**
 * Sequence and acknowledgement numbers and window of the challenge ACK
 * answering a RST from side @p dir: sent as if by the other side, with
 * that side's next sequence number, acknowledging what @p dir sent. A
 * peer whose connection is gone answers it with a RST of the exact
 * sequence number.
 */
static inline void
lb_tcp_track_challenge(const struct lb_tcp_track *t, unsigned int dir,
		       uint32_t *seq, uint32_t *ack, uint16_t *win)
{
	*seq = t->end[!dir];
	*ack = t->end[dir];
	*win = t->win[!dir];
}

#endif /* LB_TCP_TRACK_H */
