/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sequence translation of spliced TCP flows: see dataplane/splice/tcp_splice.h.
 */
#include <errno.h>

#include "bytes.h"
#include "csum.h"
#include "lb/pkt_parse.h"
#include "tcp_splice.h"

#define OPT_EOL 0
#define OPT_NOP 1
#define OPT_SACK 5
#define OPT_TS 8
#define OPT_TS_LEN 10
#define SACK_BASE 2
#define SACK_BLOCK 8

/*
 * A translation in progress: the header and the one's complement sum the
 * checksum is rebuilt from (RFC 1624 equation 3, ~HC + sum of ~m + m').
 */
struct xlat {
	uint8_t *tcp;
	uint32_t sum;
};

/*
 * What a 32-bit field contributes to the one's complement sum, as a
 * 16-bit value in network order. A field at an odd offset straddles the
 * sum's words: its contribution is the byte swap of the even one (RFC
 * 1071 section 2(B)), and options can put SACK blocks and timestamps at
 * any offset.
 */
static uint16_t
contrib(uint32_t v, uint32_t off)
{
	uint16_t s = lb_csum_fold((v >> 16) + (v & 0xffff));

	return off & 1 ? (uint16_t)(s << 8 | s >> 8) : s;
}

/* Adds @p delta to the 32-bit field at offset @p off of the header. */
static void
shift(struct xlat *x, uint32_t off, uint32_t delta)
{
	uint32_t old, new;

	if (delta == 0)
		return;
	old = rd32(x->tcp + off);
	new = old + delta;
	wr32(x->tcp + off, new);
	x->sum += (uint16_t)~contrib(old, off);
	x->sum += contrib(new, off);
}

/*
 * The options of a header of @p hlen bytes, walked as the receiver walks
 * them; SACK blocks and TSecr of a segment with ACK, TSval of any.
 */
static int
options(struct xlat *x, uint32_t hlen, const struct lb_tcp_splice *sp,
	unsigned int dir, int ack)
{
	uint32_t back = -sp->seq[!dir], ts_back = -sp->ts[!dir];
	uint32_t i = LB_TCP_HDR_MIN;
	int rc = 0;

	while (i < hlen) {
		uint8_t kind = x->tcp[i];
		uint32_t olen;

		if (kind == OPT_EOL)
			break;
		if (kind == OPT_NOP) {
			i++;
			continue;
		}
		if (i + 1 >= hlen)
			return rc | LB_TCP_SPL_BAD_OPT;
		olen = x->tcp[i + 1];
		if (olen < 2 || olen > hlen - i)
			return rc | LB_TCP_SPL_BAD_OPT;
		if (kind == OPT_SACK) {
			/* At most four blocks fit in 40 bytes of options. */
			if (olen < SACK_BASE + SACK_BLOCK ||
			    (olen - SACK_BASE) % SACK_BLOCK != 0) {
				rc |= LB_TCP_SPL_BAD_OPT;
			} else if (ack) {
				for (uint32_t b = i + SACK_BASE; b < i + olen;
				     b += 4)
					shift(x, b, back);
				rc |= LB_TCP_SPL_SACK;
			}
		} else if (kind == OPT_TS) {
			if (olen != OPT_TS_LEN) {
				rc |= LB_TCP_SPL_BAD_OPT;
			} else {
				shift(x, i + 2, sp->ts[dir]);
				if (ack)
					shift(x, i + 6, ts_back);
				rc |= LB_TCP_SPL_TS;
			}
		}
		i += olen;
	}
	return rc;
}

int
lb_tcp_splice_seg(const struct lb_tcp_splice *sp, unsigned int dir,
		  uint8_t *tcp, uint32_t len)
{
	struct xlat x = {.tcp = tcp};
	uint32_t hlen;
	int ack, rc;

	if (len < LB_TCP_HDR_MIN)
		return -EINVAL;
	hlen = (uint32_t)(tcp[12] >> 4) * 4;
	if (hlen < LB_TCP_HDR_MIN || hlen > len)
		return -EINVAL;
	dir = dir != LB_TCP_SPL_ORIG;
	ack = (tcp[13] & LB_TCP_ACK) != 0;
	x.sum = (uint16_t)~rd16(tcp + 16);
	shift(&x, 4, sp->seq[dir]);
	if (ack)
		shift(&x, 8, -sp->seq[!dir]);
	rc = options(&x, hlen, sp, dir, ack);
	wr16(tcp + 16, (uint16_t)~lb_csum_fold(x.sum));
	return rc;
}

void
lb_tcp_splice_win(uint8_t *tcp, int shift)
{
	uint32_t w = rd16(tcp + 14);
	uint16_t old = (uint16_t)w;

	if (shift == 0)
		return;
	if (shift > 0)
		w = shift >= 16 || w > (0xffffu >> shift) ? 0xffffu : w << shift;
	else
		w = -shift >= 16 ? 0 : w >> -shift;
	wr16(tcp + 14, (uint16_t)w);
	/* Host order throughout, as shift() sums. */
	wr16(tcp + 16, lb_csum_update16(rd16(tcp + 16), old, (uint16_t)w));
}
