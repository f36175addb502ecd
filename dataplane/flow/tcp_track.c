/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sequence-number tracking of TCP flows: see dataplane/flow/tcp_track.h.
 */
#include "tcp_track.h"

#include "lb/flow_table.h"
#include "lb/pkt_parse.h"

#define SEEN_BOTH (LB_TCP_TRK_SEEN_ORIG | LB_TCP_TRK_SEEN_REPLY)

int
lb_tcp_opt_wscale(const uint8_t *opt, uint32_t len)
{
	uint32_t i = 0;

	while (opt != NULL && i < len) {
		uint8_t kind = opt[i];

		if (kind == 0) /* end of options */
			break;
		if (kind == 1) { /* no-operation */
			i++;
			continue;
		}
		if (i + 1 >= len || opt[i + 1] < 2 || opt[i + 1] > len - i)
			return -1;
		if (kind == 3 && opt[i + 1] == 3)
			return opt[i + 2] > LB_TCP_TRK_WSCALE_MAX ?
				       LB_TCP_TRK_WSCALE_MAX :
				       opt[i + 2];
		i += opt[i + 1];
	}
	return -1;
}

void
lb_tcp_track_init(struct lb_tcp_track *t, const struct lb_tcp_seg *s)
{
	t->end[LB_TCP_TRK_ORIG] = s->seq + 1 + s->len;
	t->end[LB_TCP_TRK_REPLY] = 0;
	t->win[LB_TCP_TRK_ORIG] = s->win;
	t->win[LB_TCP_TRK_REPLY] = 0;
	t->ws = s->wscale >= 0 ? (uint8_t)s->wscale : LB_TCP_TRK_WS_NONE;
	t->seen = LB_TCP_TRK_SEEN_ORIG;
	t->pad = 0;
}

/* The window side @p side advertised, in bytes; 0 until its SYN. */
static uint32_t
window(const struct lb_tcp_track *t, unsigned int side)
{
	unsigned int ws = side == LB_TCP_TRK_ORIG ? t->ws & 0x0f : t->ws >> 4;

	if ((t->seen & SEEN_BOTH) != SEEN_BOTH)
		return 0;
	return (uint32_t)t->win[side] << ws;
}

/* end - w <= seq <= end + w, modulo 2^32 (w < 2^30: no overflow). */
static int
in_window(uint32_t seq, uint32_t end, uint32_t w)
{
	return (uint32_t)(seq - end + w) <= 2u * w;
}

static uint16_t
scale_down(uint32_t win, unsigned int ws)
{
	return (uint16_t)((win + (1u << ws) - 1) >> ws);
}

/*
 * The backend's SYN-ACK: its side starts; the scale applies only if both
 * SYNs offered one (RFC 7323 section 2.2), and from then on the windows
 * of both SYNs, which are never scaled, are kept in scaled units.
 */
static void
synack(struct lb_tcp_track *t, const struct lb_tcp_seg *s)
{
	unsigned int co = t->ws & 0x0f;

	t->end[LB_TCP_TRK_REPLY] = s->seq + 1;
	if (!(t->seen & LB_TCP_TRK_SEEN_REPLY)) {
		if (co != LB_TCP_TRK_WS_NONE && s->wscale >= 0) {
			unsigned int so = (unsigned int)s->wscale;

			t->ws = (uint8_t)(co | so << 4);
			t->win[LB_TCP_TRK_ORIG] =
				scale_down(t->win[LB_TCP_TRK_ORIG], co);
			t->win[LB_TCP_TRK_REPLY] = scale_down(s->win, so);
		} else {
			t->ws = 0;
			t->win[LB_TCP_TRK_REPLY] = s->win;
		}
	}
	t->seen |= LB_TCP_TRK_SEEN_REPLY;
}

int
lb_tcp_track(struct lb_tcp_track *t, unsigned int dir, unsigned int state,
	     const struct lb_tcp_seg *s)
{
	uint8_t f = s->flags;
	uint8_t mine = dir == LB_TCP_TRK_ORIG ? LB_TCP_TRK_SEEN_ORIG
					      : LB_TCP_TRK_SEEN_REPLY;
	uint32_t w, end;

	if (f & LB_TCP_SYN) {
		if (dir == LB_TCP_TRK_ORIG && !(f & LB_TCP_ACK)) {
			/* A new connection on a closed tuple starts over;
			 * a repeated SYN keeps the first one's numbers. */
			if (state == LB_FLOW_TIME_WAIT ||
			    state == LB_FLOW_CLOSED)
				lb_tcp_track_init(t, s);
			return LB_TCP_TRK_PASS;
		}
		if (dir == LB_TCP_TRK_REPLY && (f & LB_TCP_ACK) &&
		    (state == LB_FLOW_SYN_SENT || state == LB_FLOW_SYN_RECV)) {
			if (s->ack != t->end[LB_TCP_TRK_ORIG])
				return LB_TCP_TRK_KEEP;
			synack(t, s);
		}
		return LB_TCP_TRK_PASS;
	}
	if (!(t->seen & mine)) {
		/* Nothing known of the sender's numbers: a backend's RST
		 * during the handshake must acknowledge the client's SYN. */
		if (dir == LB_TCP_TRK_REPLY && (f & LB_TCP_RST) &&
		    state == LB_FLOW_SYN_SENT)
			return (f & LB_TCP_ACK) &&
					       s->ack == t->end[LB_TCP_TRK_ORIG] ?
				       LB_TCP_TRK_PASS :
				       LB_TCP_TRK_DROP;
		return f & (LB_TCP_RST | LB_TCP_FIN) ? LB_TCP_TRK_DROP
						     : LB_TCP_TRK_KEEP;
	}
	w = window(t, !dir);
	if (!in_window(s->seq, t->end[dir], w))
		return f & (LB_TCP_RST | LB_TCP_FIN) ? LB_TCP_TRK_DROP
						     : LB_TCP_TRK_KEEP;
	if (f & LB_TCP_RST) {
		if (s->seq == t->end[dir])
			return LB_TCP_TRK_PASS;
		/* A challenge ACK needs the other side's numbers. */
		return (t->seen & SEEN_BOTH) == SEEN_BOTH ? LB_TCP_TRK_CHALLENGE
							  : LB_TCP_TRK_DROP;
	}
	end = s->seq + s->len + (f & LB_TCP_FIN ? 1u : 0u);
	if ((int32_t)(end - t->end[dir]) > 0)
		t->end[dir] = end;
	if (s->win > t->win[dir])
		t->win[dir] = s->win;
	/* The handshake completes only with an ACK of the backend's SYN: at
	 * most one window of the client's behind what the backend sent. */
	if (dir == LB_TCP_TRK_ORIG && state == LB_FLOW_SYN_RECV &&
	    (f & LB_TCP_ACK) &&
	    (uint32_t)(t->end[LB_TCP_TRK_REPLY] - s->ack) >
		    window(t, LB_TCP_TRK_ORIG))
		return LB_TCP_TRK_KEEP;
	return LB_TCP_TRK_PASS;
}
