/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_TCP_SPLICE_H
#define LB_TCP_SPLICE_H

/**
 * @file
 * Sequence translation of a spliced TCP flow: the client's connection and
 * the backend's are two connections whose numbers differ by constant
 * offsets, so that one of them can be answered (the SYN proxy's cookie
 * handshake) or lengthened (bytes inserted by the PROXY protocol, or a
 * request held for delayed binding) by the load balancer.
 *
 * Per direction d (LB_TCP_SPL_ORIG: client to backend, LB_TCP_SPL_REPLY:
 * backend to client) the record keeps
 *
 * - @c seq[d]: added to the sequence number of a segment from d, and
 *   subtracted from every number of a segment from !d that refers to d's
 *   sequence space: its acknowledgement and its SACK blocks (RFC 2018);
 * - @c ts[d]: added to the TSval of a segment from d and subtracted from
 *   the TSecr of a segment from !d (RFC 7323), for the SYN proxy whose
 *   SYN-ACK carried a TSval of its own choosing.
 *
 * All arithmetic is modulo 2^32, so a flow that wraps is translated like
 * any other, and a segment is translated from its own numbers only: a
 * retransmission gets exactly what its first copy got.
 *
 * Options are read as the receiver reads them (Linux's
 * tcp_parse_options()): the walk stops at the end-of-options kind, and at
 * an option whose length is below 2 or runs past the header, leaving it
 * and what follows as they were; a SACK option whose length is not
 * 2 + 8n (n = 1..4) or a timestamps option whose length is not 10 is
 * ignored by the receiver and left as it is. Such segments are still
 * translated and forwarded; the result says so, for a counter.
 *
 * The record is 16 bytes, kept beside the flow table (one per flow entry,
 * four to a cache line) as struct lb_tcp_track is: struct lb_flow stays
 * one cache line, and only flows that splice read it. All zero is "no
 * translation".
 */

#include <stdint.h>

/** Which side a segment comes from: the same values as enum lb_flow_dir. */
#define LB_TCP_SPL_ORIG 0
#define LB_TCP_SPL_REPLY 1

/** Offsets of one spliced flow; all zero translates nothing. */
struct lb_tcp_splice {
	uint32_t seq[2]; /**< added to the seq of side d's segments */
	uint32_t ts[2];	 /**< added to the TSval of side d's segments */
};

_Static_assert(sizeof(struct lb_tcp_splice) == 16,
	       "four splice records to a cache line");

/** Bits of lb_tcp_splice_seg()'s result. */
#define LB_TCP_SPL_SACK 0x01	/**< SACK blocks were translated */
#define LB_TCP_SPL_TS 0x02	/**< the timestamps option was translated */
#define LB_TCP_SPL_BAD_OPT 0x04 /**< options malformed (see above) */

/** Smallest and largest TCP header (RFC 9293). */
#define LB_TCP_HDR_MIN 20
#define LB_TCP_HDR_MAX 60

/**
 * Translates the TCP header at @p tcp (@p len bytes available from it,
 * at least its data offset's worth) of a segment from side @p dir, in
 * place, and updates its checksum incrementally (RFC 1624): the sequence
 * number, and, when the ACK flag is set, the acknowledgement, the SACK
 * blocks and the timestamps' TSecr; the TSval whatever the flags. The
 * acknowledgement field of a segment without ACK means nothing (RFC 9293)
 * and is left alone.
 *
 * @return -EINVAL when the data offset is below 5 or past @p len (nothing
 * is changed), else a mask of LB_TCP_SPL_* bits (0 when the options had
 * no SACK or timestamps).
 */
int lb_tcp_splice_seg(const struct lb_tcp_splice *sp, unsigned int dir,
		      uint8_t *tcp, uint32_t len);

/**
 * Bytes inserted in side @p dir's stream in front of the segment whose
 * sequence number (before translation) is @p seq: the header of the PROXY
 * protocol put before the client's first data. Every later segment of
 * @p dir moves on by @p n, and the acknowledgements coming back move back
 * by as much.
 *
 * The segment that carries the inserted bytes is sent with the sequence
 * number returned (seq translated with the offset from before the
 * insertion), its payload the @p n bytes then its own. The inserted bytes
 * exist for the receiver only: until its acknowledgement covers them, the
 * caller sends them again with a retransmission of that segment, since
 * the sender will not.
 *
 * @return the sequence number of the segment carrying the insertion
 */
static inline uint32_t
lb_tcp_splice_insert(struct lb_tcp_splice *sp, unsigned int dir, uint32_t seq,
		     uint32_t n)
{
	uint32_t at = seq + sp->seq[dir];

	sp->seq[dir] += n;
	return at;
}

/**
 * Offsets of a flow whose client was answered with a SYN-ACK of sequence
 * number @p cookie (and TSval @p tsval, or 0) and whose backend answered
 * the load balancer's own SYN with @p isn (and TSval @p be_tsval): the
 * backend's numbers are shown to the client as the client knows them.
 */
static inline void
lb_tcp_splice_synproxy(struct lb_tcp_splice *sp, uint32_t cookie,
		       uint32_t tsval, uint32_t isn, uint32_t be_tsval)
{
	sp->seq[LB_TCP_SPL_REPLY] = cookie - isn;
	sp->ts[LB_TCP_SPL_REPLY] = tsval - be_tsval;
}

/**
 * Rescales the window field of the TCP header at @p tcp from one side's
 * window scale to the other's: multiplied by 2^@p shift (divided when
 * @p shift is negative, rounding down), at most 65535, with the checksum
 * updated. The SYN proxy needs it when the backend's scale differs from
 * the one offered to the client in its name. A SYN's window is never
 * scaled (RFC 7323 section 2.2): the caller leaves SYNs alone.
 */
void lb_tcp_splice_win(uint8_t *tcp, int shift);

#endif /* LB_TCP_SPLICE_H */
