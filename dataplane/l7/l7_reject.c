/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Refusing an HTTP request in the server's place: the answer, the
 * segments that carry it, and the sequence numbers of the refused flow.
 * See dataplane/l7/l7_reject.h.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bytes.h"
#include "csum.h"
#include "l7_reject.h"

#define IP_HDR 20u
#define IP6_HDR 40u
#define TCP_HDR 20u
#define TTL 64u
#define PROTO_TCP 6u
#define TCP_FIN 0x01u
#define TCP_ACK 0x10u

const char *
lb_l7_reject_phrase(uint16_t status)
{
	switch (status) {
	case 503:
		return "Service Unavailable";
	case 429:
		return "Too Many Requests";
	case 421:
		return "Misdirected Request";
	default:
		return NULL;
	}
}

int
lb_l7_reject_http(char *buf, size_t cap, uint16_t status,
		  uint32_t retry_after)
{
	const char *phrase = lb_l7_reject_phrase(status);
	char body[64];
	int blen, n;

	if (buf == NULL || phrase == NULL)
		return -EINVAL;
	blen = snprintf(body, sizeof(body), "%s\n", phrase);
	/* Connection: close, since the flow ends with this answer (RFC 9112
	 * 9.6); Retry-After in delay-seconds (RFC 9110 10.2.3), but not on
	 * a 421: the client is to connect again now, not to wait. */
	if (status == 421)
		n = snprintf(buf, cap,
			     "HTTP/1.1 %u %s\r\n"
			     "Content-Type: text/plain\r\n"
			     "Content-Length: %d\r\n"
			     "Connection: close\r\n"
			     "\r\n"
			     "%s",
			     status, phrase, blen, body);
	else
		n = snprintf(buf, cap,
			     "HTTP/1.1 %u %s\r\n"
			     "Content-Type: text/plain\r\n"
			     "Content-Length: %d\r\n"
			     "Retry-After: %u\r\n"
			     "Connection: close\r\n"
			     "\r\n"
			     "%s",
			     status, phrase, blen, retry_after, body);
	if (n < 0 || (size_t)n >= cap)
		return -ENOSPC;
	return n;
}

/* The network header of @p s at @p ip; @return its length, the sum of
 * the TCP pseudo-header of @p tcp_len octets in @p sum. */
static uint32_t
seg_l3(uint8_t *ip, const struct lb_l7_rej_seg *s, uint16_t tcp_len,
       uint32_t *sum)
{
	uint8_t pseudo[40];

	if (s->src6 != NULL) {
		memset(ip, 0, IP6_HDR);
		ip[0] = 0x60;
		wr16(ip + 4, tcp_len);
		ip[6] = PROTO_TCP;
		ip[7] = TTL;
		memcpy(ip + 8, s->src6, 16);
		memcpy(ip + 24, s->dst6, 16);
		/* RFC 8200 8.1: addresses, upper-layer length, next header */
		memcpy(pseudo, ip + 8, 32);
		wr32(pseudo + 32, tcp_len);
		wr32(pseudo + 36, PROTO_TCP);
		*sum = lb_csum_partial(pseudo, 40, 0);
		return IP6_HDR;
	}
	memset(ip, 0, IP_HDR);
	ip[0] = 0x45;
	wr16(ip + 2, (uint16_t)(IP_HDR + tcp_len));
	wr16(ip + 6, 0x4000); /* DF */
	ip[8] = TTL;
	ip[9] = PROTO_TCP;
	wr32_raw(ip + 12, s->src);
	wr32_raw(ip + 16, s->dst);
	wr16_raw(ip + 10, lb_csum(ip, IP_HDR));
	memcpy(pseudo, ip + 12, 8);
	pseudo[8] = 0;
	pseudo[9] = PROTO_TCP;
	wr16(pseudo + 10, tcp_len);
	*sum = lb_csum_partial(pseudo, 12, 0);
	return IP_HDR;
}

int
lb_l7_reject_seg(uint8_t *frame, uint32_t cap, uint32_t l3_off,
		 const struct lb_l7_rej_seg *s)
{
	uint32_t total, sum, l3;
	uint8_t *th;

	if (frame == NULL || s == NULL || (s->len > 0 && s->data == NULL) ||
	    (s->src6 != NULL && s->dst6 == NULL))
		return -EINVAL;
	l3 = s->src6 != NULL ? IP6_HDR : IP_HDR;
	total = l3_off + l3 + TCP_HDR + s->len;
	if (total > cap)
		return -ENOSPC;
	th = frame + l3_off + l3;
	/* The payload may already sit where it goes: move, not copy. */
	if (s->len > 0)
		memmove(th + TCP_HDR, s->data, s->len);
	memset(th, 0, TCP_HDR);
	seg_l3(frame + l3_off, s, (uint16_t)(TCP_HDR + s->len), &sum);
	wr16_raw(th, s->sport);
	wr16_raw(th + 2, s->dport);
	wr32(th + 4, s->seq);
	wr32(th + 8, s->ack);
	th[12] = (TCP_HDR / 4) << 4;
	th[13] = s->flags;
	wr16(th + 14, s->win);
	sum = lb_csum_partial(th, TCP_HDR + s->len, sum);
	wr16_raw(th + 16, (uint16_t)~lb_csum_fold(sum));
	return (int)total;
}

void
lb_l7_rej_refuse(struct lb_l7_rej *r, enum lb_l7_rej_reason why,
		 uint16_t status, uint32_t retry_after, uint32_t srv_seq,
		 uint32_t cli_nxt, bool cli_fin, uint16_t ans_len)
{
	r->state = LB_L7_RJ_DONE;
	r->reason = (uint8_t)why;
	r->status = status;
	r->retry_after = retry_after;
	r->srv_seq = srv_seq;
	r->cli_nxt = cli_nxt + (cli_fin ? 1u : 0u);
	r->cli_fin = cli_fin;
	r->ans_len = ans_len;
}

enum lb_l7_rej_act
lb_l7_rej_client(struct lb_l7_rej *r, uint32_t seq, uint32_t len,
		 bool has_ack, uint32_t ack, bool fin)
{
	uint32_t end = seq + len + (fin ? 1u : 0u);
	/* Serial arithmetic (RFC 1982): the client has not seen our FIN. */
	bool resend = has_ack && (int32_t)(ack - lb_l7_rej_fin_end(r)) < 0;

	if (r->state != LB_L7_RJ_DONE)
		return LB_L7_RJ_NOTHING;
	/* We stand in for a server that reads and discards what the client
	 * still sends: a segment covering the next octet moves it. */
	if (!r->cli_fin && (int32_t)(seq - r->cli_nxt) <= 0 &&
	    (int32_t)(end - r->cli_nxt) > 0) {
		r->cli_nxt = end;
		r->cli_fin = fin;
		return resend ? LB_L7_RJ_RESEND : LB_L7_RJ_ACK;
	}
	if (resend)
		return LB_L7_RJ_RESEND;
	/* Anything else occupying sequence space (a repeat, a segment
	 * beyond a gap) is answered where we stand, as a TCP receiver
	 * answers an unacceptable segment (RFC 9293 3.10.7.4). */
	return len > 0 || fin ? LB_L7_RJ_ACK : LB_L7_RJ_NOTHING;
}
