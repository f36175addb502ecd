/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_TCP_OPTS_H
#define LB_TCP_OPTS_H

/**
 * @file
 * The options of a handshake segment, read and written: what the SYN proxy
 * learns from a client's SYN and ACK (maximum segment size, window scale,
 * SACK permitted, timestamps) and what it offers in its SYN-ACK and its own
 * SYN to the backend.
 *
 * Reading follows the receiver (Linux's tcp_parse_options()): the walk
 * stops at the end-of-options kind and at an option whose length is below
 * 2 or runs past the end; an option of a known kind but the wrong length
 * is skipped, as the receiver ignores it. Writing uses the layouts Linux
 * sends, each option aligned on four bytes, at most LB_TCP_OPTS_SYN_MAX
 * bytes in all.
 */

#include <stdbool.h>
#include <stdint.h>

/** Longest block lb_tcp_opts_put() writes: MSS, SACK + timestamps, scale. */
#define LB_TCP_OPTS_SYN_MAX 20u

/** Options of a handshake segment, numbers in host order. */
struct lb_tcp_opts {
	uint16_t mss;	/**< maximum segment size, 0 for none */
	int8_t wscale;	/**< window scale shift (at most 14), -1 for none */
	bool sack_ok;	/**< SACK permitted (RFC 2018) */
	bool ts;	/**< timestamps (RFC 7323) */
	uint32_t tsval; /**< when @c ts */
	uint32_t tsecr;
};

/**
 * Reads the @p len bytes of options at @p opt into @p o (all absent first).
 * @return 0, or -EINVAL when the walk stopped at a malformed option (what
 * came before it is in @p o)
 */
int lb_tcp_opts_read(const uint8_t *opt, uint32_t len, struct lb_tcp_opts *o);

/**
 * Writes the options of @p o into @p buf: the MSS when not 0, SACK
 * permitted and timestamps (NOP-padded when only one of them), the window
 * scale when not -1. @return the bytes written, a multiple of 4
 */
uint32_t lb_tcp_opts_put(uint8_t buf[LB_TCP_OPTS_SYN_MAX],
			 const struct lb_tcp_opts *o);

#endif /* LB_TCP_OPTS_H */
