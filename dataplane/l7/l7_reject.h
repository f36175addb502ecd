/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_L7_REJECT_H
#define LB_L7_REJECT_H

/**
 * @file
 * Refusing an HTTP request without terminating TCP.
 *
 * The worker forwards the segments of a followed flow as they come, but it
 * holds back the segments of a request whose admission is not decided yet
 * (its header block is incomplete; at most LB_L7_HOLD_MAX of them per
 * flow). A refused request never reaches the backend: the worker answers
 * the client itself, in the server's sequence space, with a complete
 * `HTTP/1.1 503` (or 429) carrying `Retry-After` and `Connection: close`
 * and a FIN in the same segment; it resets the backend side at the
 * sequence number the backend expects next (the first byte of the refused
 * request, which it never got); and it then stands in for the server until
 * the flow expires: the client's FIN is acknowledged, a segment that shows
 * the client did not get the answer gets it again.
 *
 * This module is pure: it writes the answer, writes IPv4 or IPv6 TCP segments into
 * a frame buffer, and keeps the sequence numbers of one refused flow. The
 * worker owns the mbufs.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lb/l7_reject-t.h"

/** Reason phrase of @p status (503, 429, 421), or NULL for another
 * status. */
const char *lb_l7_reject_phrase(uint16_t status);

/**
 * Writes the answer to a refused request into @p buf: status line,
 * Content-Type, Content-Length, Retry-After @p retry_after (none on a
 * 421), Connection: close, then a one-line body.
 * @return its length, or -EINVAL (NULL, status other than 503/429/421) or
 *   -ENOSPC (@p cap too small).
 */
int lb_l7_reject_http(char *buf, size_t cap, uint16_t status,
		      uint32_t retry_after);

/**
 * Writes an IPv4 header (no options, DF, TTL 64, id 0), or with
 * @p s->src6 an IPv6 one (no extension header, hop limit 64), and a TCP
 * header (no options) at @p frame + @p l3_off, followed by the payload,
 * with the checksums. What precedes @p l3_off (the Ethernet header) is
 * left alone: the caller's frame names the family in its ethertype.
 * @return the frame length (@p l3_off + 40 or 60 + payload), -EINVAL or
 *   -ENOSPC.
 */
int lb_l7_reject_seg(uint8_t *frame, uint32_t cap, uint32_t l3_off,
		     const struct lb_l7_rej_seg *s);

/**
 * Marks @p r refused. @p srv_seq is the server's next octet toward the
 * client, @p cli_nxt the client's next octet after everything it sent
 * (with one more for a FIN, @p cli_fin).
 */
void lb_l7_rej_refuse(struct lb_l7_rej *r, enum lb_l7_rej_reason why,
		      uint16_t status, uint32_t retry_after, uint32_t srv_seq,
		      uint32_t cli_nxt, bool cli_fin, uint16_t ans_len);

/**
 * A client segment of a refused flow (@p seq, @p len octets, @p ack its
 * acknowledgment if @p has_ack, @p fin): what to answer. Data and a FIN
 * covering the next octet are taken (read and discarded, as a closing
 * server would) and acknowledged; anything else occupying sequence space
 * is acknowledged where we stand; an acknowledgment short of our FIN gets
 * the answer again.
 */
enum lb_l7_rej_act lb_l7_rej_client(struct lb_l7_rej *r, uint32_t seq,
				    uint32_t len, bool has_ack, uint32_t ack,
				    bool fin);

/** Sequence number after our FIN: the answer, plus one. */
static inline uint32_t
lb_l7_rej_fin_end(const struct lb_l7_rej *r)
{
	return r->srv_seq + r->ans_len + 1u;
}

#endif /* LB_L7_REJECT_H */
