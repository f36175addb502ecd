/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a client sends to a flow whose request the worker refused, and the
 * segments the worker writes back in the server's place (l7_reject).
 *
 * Input: the refusal (status, Retry-After, the server's and the client's
 * sequence numbers), then client segments of 11 bytes each (sequence
 * offset, length, acknowledgment offset, flags).
 * Invariants: the answer is a complete HTTP/1.1 503 or 429 response whose
 * Content-Length matches its body and that carries nothing of the
 * request; a written segment parses back (lb_pkt_parse) as the TCP
 * segment asked for, payload and checksums included; the client's next
 * octet only moves forward, never by more than the segment, and never
 * after the client's FIN; a client that has not acknowledged the answer's
 * FIN gets it again rather than a bare ACK.
 */
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "csum.h"
#include "l7_reject.h"
#include "lb/pkt_parse.h"

static void
check_answer(uint16_t status, uint32_t retry, char *ans, int n)
{
	const char *body;
	unsigned long clen;
	char want[64];

	FUZZ_CHECK(n > 0 && (size_t)n < LB_L7_REJECT_HTTP_MAX);
	ans[n] = '\0';
	FUZZ_CHECK(strlen(ans) == (size_t)n);
	snprintf(want, sizeof(want), "HTTP/1.1 %u %s\r\n", status,
		 lb_l7_reject_phrase(status));
	FUZZ_CHECK(!strncmp(ans, want, strlen(want)));
	snprintf(want, sizeof(want), "\r\nRetry-After: %u\r\n", retry);
	FUZZ_CHECK(strstr(ans, want) != NULL);
	FUZZ_CHECK(strstr(ans, "\r\nConnection: close\r\n") != NULL);
	body = strstr(ans, "\r\n\r\n");
	FUZZ_CHECK(body != NULL);
	body += 4;
	FUZZ_CHECK(sscanf(strstr(ans, "Content-Length: "),
			  "Content-Length: %lu", &clen) == 1);
	FUZZ_CHECK(clen == strlen(body));
}

static void
check_seg(const struct lb_l7_rej_seg *s)
{
	static uint8_t frame[14 + 40 + LB_L7_REJECT_HTTP_MAX];
	const uint8_t *b = (const uint8_t *)&s->src;
	struct lb_pkt pkt;
	enum lb_pkt_verdict v;
	uint8_t ph[4];
	uint32_t sum;
	int n;

	memset(frame, 0, 14);
	frame[12] = 0x08; /* IPv4 */
	n = lb_l7_reject_seg(frame, sizeof(frame), 14, s);
	FUZZ_CHECK(n == 14 + 40 + s->len);
	v = lb_pkt_parse(frame, (uint32_t)n, &pkt);
	if (b[0] == 0 || b[0] == 127 || b[0] >= 224) {
		FUZZ_CHECK(v == LB_PKT_DROP_IP_ADDR);
		return;
	}
	if (s->sport == 0 || s->dport == 0 || (s->flags & 0x3f) == 0 ||
	    (s->flags & 0x03) == 0x03 || (s->flags & 0x06) == 0x06) {
		FUZZ_CHECK(v != LB_PKT_IPV4);
		return;
	}
	FUZZ_CHECK(v == LB_PKT_IPV4 && pkt.proto == LB_IPPROTO_TCP);
	FUZZ_CHECK(pkt.src == s->src && pkt.dst == s->dst);
	FUZZ_CHECK(pkt.sport == s->sport && pkt.dport == s->dport);
	FUZZ_CHECK(pkt.tcp_flags == (s->flags & 0x3f));
	FUZZ_CHECK(pkt.payload_len == s->len);
	FUZZ_CHECK(!memcmp(frame + pkt.payload_off, s->data, s->len));
	ph[0] = 0;
	ph[1] = LB_IPPROTO_TCP;
	ph[2] = (uint8_t)((20 + s->len) >> 8);
	ph[3] = (uint8_t)(20 + s->len);
	sum = lb_csum_partial(&pkt.src, 4, 0);
	sum = lb_csum_partial(&pkt.dst, 4, sum);
	sum = lb_csum_partial(ph, 4, sum);
	FUZZ_CHECK(lb_csum_fold(lb_csum_partial(frame + pkt.l4_off,
						20u + s->len, sum)) == 0xffff);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char ans[LB_L7_REJECT_HTTP_MAX + 1];
	struct fuzz_in in = {data, size};
	struct lb_l7_rej r;
	struct lb_l7_rej_seg s;
	uint16_t status = (fuzz_take(&in) & 1) ? 429 : 503;
	uint32_t retry = fuzz_take32(&in) % (LB_L7_RETRY_AFTER_MAX + 1);
	uint32_t srv = fuzz_take32(&in), cli = fuzz_take32(&in);
	int n;

	n = lb_l7_reject_http(ans, sizeof(ans) - 1, status, retry);
	check_answer(status, retry, ans, n);
	memset(&r, 0, sizeof(r));
	lb_l7_rej_refuse(&r, LB_L7_REJ_RATE, status, retry, srv, cli, false,
			 (uint16_t)n);
	FUZZ_CHECK(r.state == LB_L7_RJ_DONE);

	/* The answer as the worker sends it, then client segments. */
	memset(&s, 0, sizeof(s));
	s.src = fuzz_take32(&in);
	s.dst = fuzz_take32(&in);
	s.sport = (uint16_t)fuzz_take32(&in);
	s.dport = (uint16_t)fuzz_take32(&in);
	s.seq = srv;
	s.ack = cli;
	s.flags = fuzz_take(&in);
	s.win = 65535;
	s.data = ans;
	s.len = (uint16_t)n;
	check_seg(&s);

	while (in.n >= 11) {
		uint32_t seq = cli + fuzz_take32(&in) - (1u << 31);
		uint32_t len = fuzz_take(&in) * 16u + fuzz_take(&in);
		uint32_t ack = srv + fuzz_take32(&in) - (1u << 31);
		uint8_t f = fuzz_take(&in);
		uint32_t before = r.cli_nxt;
		uint8_t fin_before = r.cli_fin;
		bool has_ack = f & 1, fin = f & 2;
		enum lb_l7_rej_act a = lb_l7_rej_client(&r, seq, len, has_ack,
							ack, fin);
		uint32_t moved = r.cli_nxt - before;

		FUZZ_CHECK(a == LB_L7_RJ_NOTHING || a == LB_L7_RJ_ACK ||
			   a == LB_L7_RJ_RESEND);
		FUZZ_CHECK(r.srv_seq == srv && r.ans_len == (uint16_t)n);
		FUZZ_CHECK(moved <= len + 1u);
		FUZZ_CHECK((int32_t)moved >= 0);
		if (fin_before)
			FUZZ_CHECK(moved == 0 && r.cli_fin);
		if (moved > 0)
			FUZZ_CHECK(r.cli_nxt == seq + len + (fin ? 1u : 0u));
		if (has_ack && (int32_t)(ack - lb_l7_rej_fin_end(&r)) < 0)
			FUZZ_CHECK(a == LB_L7_RJ_RESEND);
		if (a != LB_L7_RJ_RESEND && (len > 0 || fin))
			FUZZ_CHECK(a == LB_L7_RJ_ACK);
	}
	return 0;
}
