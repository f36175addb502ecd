/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP/1.x follower: conversations (rows of client/server segments with
 * their times) and the exact event sequence each must produce. Every row
 * is fed whole, byte by byte, and cut at random points under many seeds;
 * header-byte events are concatenated per message by the recorder, so all
 * feeding modes must yield the same list.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_follow.h"
#include "lb/rng.h"

#define MAX_EV 64
#define NB_SEEDS 200

/* ---- recorder ---- */

struct rec {
	char *ev[MAX_EV];
	size_t len[MAX_EV];
	unsigned int n;
	bool last_hdr; /* last event is a header-bytes one, may grow */
	bool overflow;
};

static void
rec_clear(struct rec *r)
{
	for (unsigned int i = 0; i < r->n; i++)
		free(r->ev[i]);
	memset(r, 0, sizeof(*r));
}

static void
rec_add(struct rec *r, const char *s, size_t n, bool hdr)
{
	if (r->n == MAX_EV) {
		r->overflow = true;
		return;
	}
	r->ev[r->n] = malloc(n + 1);
	assert_non_null(r->ev[r->n]);
	memcpy(r->ev[r->n], s, n);
	r->ev[r->n][n] = '\0';
	r->len[r->n] = n;
	r->n++;
	r->last_hdr = hdr;
}

static void
rec_printf(struct rec *r, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	assert_true(n > 0 && (size_t)n < sizeof(buf));
	rec_add(r, buf, (size_t)n, false);
}

/* Appends bytes to the previous event when it is the same header block. */
static void
rec_hdr(struct rec *r, char dir, uint32_t seq, const uint8_t *p, size_t n)
{
	char pre[32];
	int k = snprintf(pre, sizeof(pre), "%c%" PRIu32 " hdr ", dir, seq);
	size_t pl = (size_t)k;

	assert_true(n > 0);
	if (r->last_hdr && r->n > 0 && r->len[r->n - 1] >= pl &&
	    memcmp(r->ev[r->n - 1], pre, pl) == 0) {
		char *e = realloc(r->ev[r->n - 1], r->len[r->n - 1] + n + 1);

		assert_non_null(e);
		memcpy(e + r->len[r->n - 1], p, n);
		r->len[r->n - 1] += n;
		e[r->len[r->n - 1]] = '\0';
		r->ev[r->n - 1] = e;
		return;
	}
	rec_add(r, pre, pl, true);
	rec_hdr(r, dir, seq, p, n);
}

static const char *
mclass_name(uint8_t m)
{
	return m == LB_HTTP_FOLLOW_M_HEAD	 ? "HEAD" :
	       m == LB_HTTP_FOLLOW_M_CONNECT ? "CONNECT" :
					       "OTHER";
}

static void
on_req_start(void *ctx, const struct lb_http_follow_req *rq)
{
	rec_printf(ctx, "Q%u start", rq->seq);
}

static void
on_req_bytes(void *ctx, const struct lb_http_follow_req *rq,
	     const uint8_t *p, size_t n)
{
	rec_hdr(ctx, 'Q', rq->seq, p, n);
}

static void
on_req_end(void *ctx, const struct lb_http_follow_req *rq)
{
	rec_printf(ctx, "Q%u end %s%s%s%s%s", rq->seq,
		   mclass_name(rq->mclass),
		   (rq->flags & LB_HTTP_FOLLOW_REQ_EXPECT_100) ? " expect" : "",
		   (rq->flags & LB_HTTP_FOLLOW_REQ_UPGRADE) ? " upgrade" : "",
		   (rq->flags & LB_HTTP_FOLLOW_REQ_HTTP10) ? " http10" : "",
		   (rq->flags & LB_HTTP_FOLLOW_REQ_CHUNKED) ? " chunked" : "");
}

static void
on_req_done(void *ctx, const struct lb_http_follow_req *rq)
{
	rec_printf(ctx, "Q%u done t=%" PRIu64 " body=%" PRIu64, rq->seq,
		   rq->done_ns, rq->body_len);
}

static void
on_resp_start(void *ctx, const struct lb_http_follow_resp *rs)
{
	if (rs->flags & LB_HTTP_FOLLOW_RESP_TIMED)
		rec_printf(ctx, "R%u start lat=%" PRIu64, rs->req_seq,
			   rs->latency_ns);
	else
		rec_printf(ctx, "R%u start untimed", rs->req_seq);
}

static void
on_resp_bytes(void *ctx, const struct lb_http_follow_resp *rs,
	      const uint8_t *p, size_t n)
{
	rec_hdr(ctx, 'R', rs->req_seq, p, n);
}

static void
on_resp_end(void *ctx, const struct lb_http_follow_resp *rs)
{
	rec_printf(ctx, "R%u end %u%s%s%s%s", rs->req_seq, rs->status,
		   (rs->flags & LB_HTTP_FOLLOW_RESP_INTERIM) ? " interim" : "",
		   (rs->flags & LB_HTTP_FOLLOW_RESP_CHUNKED) ? " chunked" : "",
		   (rs->flags & LB_HTTP_FOLLOW_RESP_CLOSE) ? " close" : "",
		   (rs->flags & LB_HTTP_FOLLOW_RESP_HTTP10) ? " http10" : "");
}

static void
on_resp_done(void *ctx, const struct lb_http_follow_resp *rs)
{
	rec_printf(ctx, "R%u done t=%" PRIu64 " body=%" PRIu64, rs->req_seq,
		   rs->done_ns, rs->body_len);
}

static void
on_dead(void *ctx, enum lb_http_follow_reason why)
{
	rec_printf(ctx, "dead %s", lb_http_follow_reason_name(why));
}

static const struct lb_http_follow_ops rec_ops = {
	.req_head_start = on_req_start,
	.req_head_bytes = on_req_bytes,
	.req_head_end = on_req_end,
	.req_done = on_req_done,
	.resp_head_start = on_resp_start,
	.resp_head_bytes = on_resp_bytes,
	.resp_head_end = on_resp_end,
	.resp_done = on_resp_done,
	.unfollowable = on_dead,
};

/* ---- conversations ---- */

struct step {
	char op; /* C client bytes, S server bytes, X close, L lost */
	const char *data;
	uint64_t t;
	size_t len;
};

#define C(s, t) { 'C', s, t, sizeof(s) - 1 }
#define S(s, t) { 'S', s, t, sizeof(s) - 1 }
#define CLOSE(t) { 'X', NULL, t, 0 }
#define LOST { 'L', NULL, 0, 0 }

struct tcase {
	const char *name;
	const struct lb_http_follow_conf *conf; /* NULL: defaults */
	struct step steps[10];
	const char *ev[MAX_EV];
	enum lb_http_follow_reason reason;
};

static const struct lb_http_follow_conf conf_line32 = {
	.max_line = 32, .max_head = 4096, .queue_depth = 16,
};
static const struct lb_http_follow_conf conf_head64 = {
	.max_line = 32, .max_head = 64, .queue_depth = 16,
};
static const struct lb_http_follow_conf conf_strict_lf = {
	.max_line = 8192, .max_head = 65536, .queue_depth = 16,
	.reject_bare_lf = true,
};
static const struct lb_http_follow_conf conf_q2 = {
	.max_line = 8192, .max_head = 65536, .queue_depth = 2,
};
static const struct lb_http_follow_conf conf_te_wins = {
	.max_line = 8192, .max_head = 65536, .queue_depth = 16,
	.te_with_cl = LB_HTTP_FOLLOW_TECL_TE_WINS,
};

#define GET_A "GET /a HTTP/1.1\r\nHost: svc\r\n\r\n"
#define GET_B "GET /b HTTP/1.1\r\nHost: svc\r\n\r\n"
#define HEAD_C "HEAD /c HTTP/1.1\r\nHost: svc\r\n\r\n"
#define OK5 "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-SPL: 0.42\r\n\r\n"
#define OK0 "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
#define REQ_A(t) "Q1 start", "Q1 hdr " GET_A, "Q1 end OTHER", \
	"Q1 done t=" #t " body=0"

static const struct tcase cases[] = {
{
	.name = "whole lines: HTTP/1.0, a code without reason, CL in blanks",
	.steps = {
		C("GET /x HTTP/1.0\r\n\r\n", 10),
		S("HTTP/1.0 204\r\nContent-Length:\t7 \r\n\r\n", 20),
		C("GET /y HTTP/1.1\r\n\r\n", 30),
		S("HTTP/1.1 200 \r\ncontent-LENGTH: 2\r\n"
		  "Content-Length: 2\t\r\n\r\nok", 40),
	},
	.ev = {
		"Q1 start", "Q1 hdr GET /x HTTP/1.0\r\n\r\n",
		"Q1 end OTHER http10", "Q1 done t=10 body=0",
		"R1 start lat=10",
		"R1 hdr HTTP/1.0 204\r\nContent-Length:\t7 \r\n\r\n",
		"R1 end 204 http10", "R1 done t=20 body=0",
		"Q2 start", "Q2 hdr GET /y HTTP/1.1\r\n\r\n", "Q2 end OTHER",
		"Q2 done t=30 body=0",
		"R2 start lat=10",
		"R2 hdr HTTP/1.1 200 \r\ncontent-LENGTH: 2\r\n"
		"Content-Length: 2\t\r\n\r\n",
		"R2 end 200", "R2 done t=40 body=2",
	},
},
{
	.name = "Content-Length of more digits than the bound",
	.steps = {
		C(GET_A, 10),
		S("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999"
		  "\r\n\r\n", 20),
	},
	.ev = {
		REQ_A(10),
		"R1 start lat=10",
		"R1 hdr HTTP/1.1 200 OK\r\nContent-Length: "
		"999999999999999999",
		"dead framing",
	},
	.reason = LB_HTTP_FOLLOW_R_FRAMING,
},
{
	.name = "request lines of max_line (32) octets, then one more",
	.conf = &conf_line32,
	.steps = {
		C("GET /abcdefghijklmnopqr HTTP/1.1\r\n\r\n"
		  "GET /abcdefghijklmnopqrs HTTP/1.1\r\n\r\n", 10),
	},
	.ev = {
		"Q1 start", "Q1 hdr GET /abcdefghijklmnopqr HTTP/1.1\r\n\r\n",
		"Q1 end OTHER", "Q1 done t=10 body=0",
		"Q2 start", "Q2 hdr GET /abcdefghijklmnopqrs HTTP/1.",
		"dead line_too_long",
	},
	.reason = LB_HTTP_FOLLOW_R_LINE_TOO_LONG,
},
{
	.name = "keep-alive: two requests, one after the other",
	.steps = {
		C(GET_A, 100), S(OK5 "hello", 150),
		C(GET_B, 200), S(OK5 "world", 260),
	},
	.ev = {
		REQ_A(100),
		"R1 start lat=50", "R1 hdr " OK5, "R1 end 200",
		"R1 done t=150 body=5",
		"Q2 start", "Q2 hdr " GET_B, "Q2 end OTHER",
		"Q2 done t=200 body=0",
		"R2 start lat=60", "R2 hdr " OK5, "R2 end 200",
		"R2 done t=260 body=5",
	},
},
{
	.name = "pipelined: three requests in one segment, FIFO matching",
	.steps = {
		C(GET_A GET_B HEAD_C, 100),
		S(OK5 "hello" OK5 "wo", 130),
		S("rld" "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", 170),
	},
	.ev = {
		REQ_A(100),
		"Q2 start", "Q2 hdr " GET_B, "Q2 end OTHER",
		"Q2 done t=100 body=0",
		"Q3 start", "Q3 hdr " HEAD_C, "Q3 end HEAD",
		"Q3 done t=100 body=0",
		"R1 start lat=30", "R1 hdr " OK5, "R1 end 200",
		"R1 done t=130 body=5",
		"R2 start lat=30", "R2 hdr " OK5, "R2 end 200",
		"R2 done t=170 body=5",
		"R3 start lat=70",
		"R3 hdr HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n",
		"R3 end 200", "R3 done t=170 body=0",
	},
},
{
	.name = "HEAD: Content-Length of the response is not content",
	.steps = {
		C(HEAD_C GET_A, 10),
		S("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" OK5
		  "hello", 20),
	},
	.ev = {
		"Q1 start", "Q1 hdr " HEAD_C, "Q1 end HEAD",
		"Q1 done t=10 body=0",
		"Q2 start", "Q2 hdr " GET_A, "Q2 end OTHER",
		"Q2 done t=10 body=0",
		"R1 start lat=10",
		"R1 hdr HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n",
		"R1 end 200", "R1 done t=20 body=0",
		"R2 start lat=10", "R2 hdr " OK5, "R2 end 200",
		"R2 done t=20 body=5",
	},
},
{
	.name = "Expect: 100-continue, interim then final response",
	.steps = {
		C("POST /up HTTP/1.1\r\nExpect: 100-continue\r\n"
		  "Content-Length: 11\r\n\r\n", 10),
		S("HTTP/1.1 100 Continue\r\n\r\n", 12),
		C("hello world", 20),
		S("HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n", 25),
	},
	.ev = {
		"Q1 start",
		"Q1 hdr POST /up HTTP/1.1\r\nExpect: 100-continue\r\n"
		"Content-Length: 11\r\n\r\n",
		"Q1 end OTHER expect",
		"R1 start untimed", "R1 hdr HTTP/1.1 100 Continue\r\n\r\n",
		"R1 end 100 interim", "R1 done t=12 body=0",
		"Q1 done t=20 body=11",
		"R1 start lat=5",
		"R1 hdr HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n",
		"R1 end 201", "R1 done t=25 body=0",
	},
},
{
	.name = "103 Early Hints before the final response",
	.steps = {
		C(GET_A, 10),
		S("HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n"
		  OK5 "hello", 14),
	},
	.ev = {
		REQ_A(10),
		"R1 start lat=4",
		"R1 hdr HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n",
		"R1 end 103 interim", "R1 done t=14 body=0",
		"R1 start lat=4", "R1 hdr " OK5, "R1 end 200",
		"R1 done t=14 body=5",
	},
},
{
	.name = "204 and 304 carry no content, whatever CL says",
	.steps = {
		C(GET_A GET_B, 10),
		S("HTTP/1.1 204 No Content\r\n\r\n"
		  "HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\n\r\n",
		  15),
		C(GET_A, 20), S(OK5 "hello", 30),
	},
	.ev = {
		REQ_A(10),
		"Q2 start", "Q2 hdr " GET_B, "Q2 end OTHER",
		"Q2 done t=10 body=0",
		"R1 start lat=5", "R1 hdr HTTP/1.1 204 No Content\r\n\r\n",
		"R1 end 204", "R1 done t=15 body=0",
		"R2 start lat=5",
		"R2 hdr HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\n"
		"\r\n",
		"R2 end 304", "R2 done t=15 body=0",
		"Q3 start", "Q3 hdr " GET_A, "Q3 end OTHER",
		"Q3 done t=20 body=0",
		"R3 start lat=10", "R3 hdr " OK5, "R3 end 200",
		"R3 done t=30 body=5",
	},
},
{
	.name = "chunked: header-like body, extensions and trailers unseen",
	.steps = {
		C(GET_A, 10),
		S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
		  "X-SPL: 0.5\r\n\r\n"
		  "a;name=\"v;x\"\r\nX-SPL: 9\r\n\r\n"
		  "8 ; q\r\nHTTP/1.1\r\n"
		  "000\r\nX-SPL: 7\r\nX-Trailer: y\r\n\r\n", 20),
		C(GET_B, 30), S(OK5 "hello", 40),
	},
	.ev = {
		REQ_A(10),
		"R1 start lat=10",
		"R1 hdr HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
		"X-SPL: 0.5\r\n\r\n",
		"R1 end 200 chunked", "R1 done t=20 body=18",
		"Q2 start", "Q2 hdr " GET_B, "Q2 end OTHER",
		"Q2 done t=30 body=0",
		"R2 start lat=10", "R2 hdr " OK5, "R2 end 200",
		"R2 done t=40 body=5",
	},
},
{
	.name = "chunked request content, gzip then chunked response",
	.steps = {
		C("POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
		  "5\r\nhello\r\n0\r\n\r\n", 10),
		S("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n"
		  "3\r\nabc\r\n0\r\n\r\n", 20),
	},
	.ev = {
		"Q1 start",
		"Q1 hdr POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
		"Q1 end OTHER chunked", "Q1 done t=10 body=5",
		"R1 start lat=10",
		"R1 hdr HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, Chunked"
		"\r\n\r\n",
		"R1 end 200 chunked", "R1 done t=20 body=3",
	},
},
{
	.name = "close-delimited HTTP/1.0 response ends at close",
	.steps = {
		C(GET_A, 10),
		S("HTTP/1.0 200 OK\r\nX-SPL: 0.3\r\n\r\n"
		  "HTTP/1.1 200 OK\r\nX-SPL: 9\r\n\r\n", 20),
		S("tail", 25), CLOSE(30),
	},
	.ev = {
		REQ_A(10),
		"R1 start lat=10", "R1 hdr HTTP/1.0 200 OK\r\nX-SPL: 0.3\r\n\r\n",
		"R1 end 200 close http10", "R1 done t=30 body=33",
	},
},
{
	.name = "chunked not last in a response: read until close",
	.steps = {
		C(GET_A, 10),
		S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n"
		  "0\r\n\r\n", 20),
		CLOSE(40),
	},
	.ev = {
		REQ_A(10),
		"R1 start lat=10",
		"R1 hdr HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip"
		"\r\n\r\n",
		"R1 end 200 close", "R1 done t=40 body=5",
	},
},
{
	.name = "identical Content-Length values agree",
	.steps = {
		C(GET_A, 10),
		S("HTTP/1.1 200 OK\r\nContent-Length: 3, 3\r\n"
		  "content-length:3 \r\n\r\nabc", 20),
	},
	.ev = {
		REQ_A(10),
		"R1 start lat=10",
		"R1 hdr HTTP/1.1 200 OK\r\nContent-Length: 3, 3\r\n"
		"content-length:3 \r\n\r\n",
		"R1 end 200", "R1 done t=20 body=3",
	},
},
{
	.name = "conflicting Content-Length fields",
	.steps = {
		C(GET_A, 10),
		S("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"
		  "Content-Length: 6\r\n\r\nhello!", 20),
		C(GET_B, 30),
	},
	.ev = {
		REQ_A(10),
		"R1 start lat=10",
		"R1 hdr HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"
		"Content-Length: 6\r",
		"dead framing",
	},
	.reason = LB_HTTP_FOLLOW_R_FRAMING,
},
{
	.name = "conflicting Content-Length list in a request",
	.steps = {
		C("POST /p HTTP/1.1\r\nContent-Length: 5, 6\r\n\r\n", 10),
	},
	.ev = {
		"Q1 start", "Q1 hdr POST /p HTTP/1.1\r\nContent-Length: 5, 6\r",
		"dead framing",
	},
	.reason = LB_HTTP_FOLLOW_R_FRAMING,
},
{
	.name = "Content-Length with a sign is not digits",
	.steps = {
		C(GET_A, 10),
		S("HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\nhello", 20),
	},
	.ev = {
		REQ_A(10),
		"R1 start lat=10",
		"R1 hdr HTTP/1.1 200 OK\r\nContent-Length: ",
		"dead framing",
	},
	.reason = LB_HTTP_FOLLOW_R_FRAMING,
},
{
	.name = "empty Content-Length",
	.steps = {
		C("PUT /p HTTP/1.1\r\nContent-Length:\r\n\r\n", 10),
	},
	.ev = {
		"Q1 start", "Q1 hdr PUT /p HTTP/1.1\r\nContent-Length:\r",
		"dead framing",
	},
	.reason = LB_HTTP_FOLLOW_R_FRAMING,
},
{
	.name = "Transfer-Encoding with Content-Length rejected by default",
	.steps = {
		C(GET_A, 10),
		S("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n"
		  "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", 20),
	},
	.ev = {
		REQ_A(10),
		"R1 start lat=10",
		"R1 hdr HTTP/1.1 200 OK\r\nContent-Length: 3\r\n"
		"Transfer-Encoding: chunked\r\n\r\n",
		"dead framing",
	},
	.reason = LB_HTTP_FOLLOW_R_FRAMING,
},
{
	.name = "Transfer-Encoding overrides Content-Length when configured",
	.conf = &conf_te_wins,
	.steps = {
		C(GET_A, 10),
		S("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n"
		  "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", 20),
	},
	.ev = {
		REQ_A(10),
		"R1 start lat=10",
		"R1 hdr HTTP/1.1 200 OK\r\nContent-Length: 3\r\n"
		"Transfer-Encoding: chunked\r\n\r\n",
		"R1 end 200 chunked", "R1 done t=20 body=3",
	},
},
{
	.name = "Transfer-Encoding in an HTTP/1.0 response is faulty framing",
	.steps = {
		C(GET_A, 10),
		S("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", 20),
	},
	.ev = {
		REQ_A(10),
		"R1 start lat=10",
		"R1 hdr HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
		"dead framing",
	},
	.reason = LB_HTTP_FOLLOW_R_FRAMING,
},
{
	.name = "request whose final coding is not chunked",
	.steps = {
		C("POST /g HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 10),
	},
	.ev = {
		"Q1 start",
		"Q1 hdr POST /g HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
		"dead framing",
	},
	.reason = LB_HTTP_FOLLOW_R_FRAMING,
},
{
	.name = "chunked applied twice",
	.steps = {
		C(GET_A, 10),
		S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
		  "Transfer-Encoding: chunked\r\n\r\n", 20),
	},
	.ev = {
		REQ_A(10),
		"R1 start lat=10",
		"R1 hdr HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
		"Transfer-Encoding: chunked\r",
		"dead framing",
	},
	.reason = LB_HTTP_FOLLOW_R_FRAMING,
},
{
	.name = "chunk data not followed by CRLF",
	.steps = {
		C(GET_A, 10),
		S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		  "3\r\nabcd\r\n0\r\n\r\n", 20),
	},
	.ev = {
		REQ_A(10),
		"R1 start lat=10",
		"R1 hdr HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
		"R1 end 200 chunked",
		"dead framing",
	},
	.reason = LB_HTTP_FOLLOW_R_FRAMING,
},
{
	.name = "chunk size beyond 60 bits",
	.steps = {
		C(GET_A, 10),
		S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		  "10000000000000000\r\n", 20),
	},
	.ev = {
		REQ_A(10),
		"R1 start lat=10",
		"R1 hdr HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
		"R1 end 200 chunked",
		"dead framing",
	},
	.reason = LB_HTTP_FOLLOW_R_FRAMING,
},
{
	.name = "line longer than max_line (32)",
	.conf = &conf_line32,
	.steps = {
		C(GET_A, 10),
		S("HTTP/1.1 200 OK\r\nX-Long: 0123456789012345678901234\r\n"
		  "\r\n", 20),
	},
	.ev = {
		REQ_A(10),
		"R1 start lat=10",
		"R1 hdr HTTP/1.1 200 OK\r\nX-Long: 012345678901234567890123",
		"dead line_too_long",
	},
	.reason = LB_HTTP_FOLLOW_R_LINE_TOO_LONG,
},
{
	.name = "line of exactly max_line (32) is accepted",
	.conf = &conf_line32,
	.steps = {
		C(GET_A, 10),
		S("HTTP/1.1 200 OK\r\nX-Long: 012345678901234567890123\r\n"
		  "Content-Length: 0\r\n\r\n", 20),
	},
	.ev = {
		REQ_A(10),
		"R1 start lat=10",
		"R1 hdr HTTP/1.1 200 OK\r\nX-Long: 012345678901234567890123\r\n"
		"Content-Length: 0\r\n\r\n",
		"R1 end 200", "R1 done t=20 body=0",
	},
},
{
	.name = "header block longer than max_head (64)",
	.conf = &conf_head64,
	.steps = {
		C(GET_A, 10),
		S("HTTP/1.1 200 OK\r\nX-A: 1\r\nX-B: 2\r\nX-C: 3\r\nX-D: 4\r\n"
		  "Content-Length: 0\r\n\r\n", 20),
	},
	.ev = {
		REQ_A(10),
		"R1 start lat=10",
		"R1 hdr HTTP/1.1 200 OK\r\nX-A: 1\r\nX-B: 2\r\nX-C: 3\r\nX-D: 4\r\n"
		"Content-Length:",
		"dead head_too_long",
	},
	.reason = LB_HTTP_FOLLOW_R_HEAD_TOO_LONG,
},
{
	.name = "HTTP/2 connection preface",
	.steps = {
		C("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 10),
		S("\x00\x00\x12\x04\x00\x00\x00\x00\x00", 20),
	},
	.ev = {
		"Q1 start", "Q1 hdr PRI * HTTP/", "dead http2",
	},
	.reason = LB_HTTP_FOLLOW_R_HTTP2,
},
{
	.name = "Upgrade accepted with 101",
	.steps = {
		C("GET /ws HTTP/1.1\r\nConnection: Upgrade\r\n"
		  "Upgrade: websocket\r\n\r\n", 10),
		S("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
		  "\r\n\x81\x05hello", 20),
		C("\x81\x85\x00\x00\x00\x00hello", 30),
	},
	.ev = {
		"Q1 start",
		"Q1 hdr GET /ws HTTP/1.1\r\nConnection: Upgrade\r\n"
		"Upgrade: websocket\r\n\r\n",
		"Q1 end OTHER upgrade", "Q1 done t=10 body=0",
		"R1 start lat=10",
		"R1 hdr HTTP/1.1 101 Switching Protocols\r\n"
		"Upgrade: websocket\r\n\r\n",
		"R1 end 101", "dead upgrade",
	},
	.reason = LB_HTTP_FOLLOW_R_UPGRADE,
},
{
	.name = "Upgrade ignored by the server, flow goes on",
	.steps = {
		C("GET /x HTTP/1.1\r\nUpgrade: h2c\r\n"
		  "Connection: Upgrade, HTTP2-Settings\r\n\r\n", 10),
		S(OK5 "hello", 20),
		C(GET_B, 30), S(OK5 "world", 40),
	},
	.ev = {
		"Q1 start",
		"Q1 hdr GET /x HTTP/1.1\r\nUpgrade: h2c\r\n"
		"Connection: Upgrade, HTTP2-Settings\r\n\r\n",
		"Q1 end OTHER upgrade", "Q1 done t=10 body=0",
		"R1 start lat=10", "R1 hdr " OK5, "R1 end 200",
		"R1 done t=20 body=5",
		"Q2 start", "Q2 hdr " GET_B, "Q2 end OTHER",
		"Q2 done t=30 body=0",
		"R2 start lat=10", "R2 hdr " OK5, "R2 end 200",
		"R2 done t=40 body=5",
	},
},
{
	.name = "request pipelined behind an Upgrade before its verdict",
	.steps = {
		C("GET /x HTTP/1.1\r\nUpgrade: h2c\r\n\r\n" GET_B, 10),
	},
	.ev = {
		"Q1 start", "Q1 hdr GET /x HTTP/1.1\r\nUpgrade: h2c\r\n\r\n",
		"Q1 end OTHER upgrade", "Q1 done t=10 body=0",
		"dead upgrade",
	},
	.reason = LB_HTTP_FOLLOW_R_UPGRADE,
},
{
	.name = "CONNECT tunnel established",
	.steps = {
		C("CONNECT db:5432 HTTP/1.1\r\nHost: db:5432\r\n\r\n", 10),
		S("HTTP/1.1 200 Connection Established\r\n\r\nR\x00\x00", 20),
	},
	.ev = {
		"Q1 start",
		"Q1 hdr CONNECT db:5432 HTTP/1.1\r\nHost: db:5432\r\n\r\n",
		"Q1 end CONNECT", "Q1 done t=10 body=0",
		"R1 start lat=10",
		"R1 hdr HTTP/1.1 200 Connection Established\r\n\r\n",
		"R1 end 200", "dead connect",
	},
	.reason = LB_HTTP_FOLLOW_R_CONNECT,
},
{
	.name = "CONNECT refused, flow goes on",
	.steps = {
		C("CONNECT db:5432 HTTP/1.1\r\n\r\n", 10),
		S("HTTP/1.1 407 Proxy Authentication Required\r\n"
		  "Content-Length: 0\r\n\r\n", 20),
		C(GET_B, 30), S(OK5 "hello", 35),
	},
	.ev = {
		"Q1 start", "Q1 hdr CONNECT db:5432 HTTP/1.1\r\n\r\n",
		"Q1 end CONNECT", "Q1 done t=10 body=0",
		"R1 start lat=10",
		"R1 hdr HTTP/1.1 407 Proxy Authentication Required\r\n"
		"Content-Length: 0\r\n\r\n",
		"R1 end 407", "R1 done t=20 body=0",
		"Q2 start", "Q2 hdr " GET_B, "Q2 end OTHER",
		"Q2 done t=30 body=0",
		"R2 start lat=5", "R2 hdr " OK5, "R2 end 200",
		"R2 done t=35 body=5",
	},
},
{
	.name = "lost segment in a header block",
	.steps = {
		C(GET_A, 10), S("HTTP/1.1 200 OK\r\nX-S", 20), LOST,
		S("PL: 0.9\r\n\r\n", 30), C(GET_B, 40),
	},
	.ev = {
		REQ_A(10),
		"R1 start lat=10", "R1 hdr HTTP/1.1 200 OK\r\nX-S",
		"dead lost",
	},
	.reason = LB_HTTP_FOLLOW_R_LOST,
},
{
	.name = "obsolete line folding",
	.steps = {
		C(GET_A, 10),
		S("HTTP/1.1 200 OK\r\nX-A: 1\r\n  folded\r\n\r\n", 20),
	},
	.ev = {
		REQ_A(10),
		"R1 start lat=10", "R1 hdr HTTP/1.1 200 OK\r\nX-A: 1\r\n",
		"dead obs_fold",
	},
	.reason = LB_HTTP_FOLLOW_R_OBS_FOLD,
},
{
	.name = "whitespace between field name and colon",
	.steps = {
		C("GET /a HTTP/1.1\r\nContent-Length : 5\r\n\r\n", 10),
	},
	.ev = {
		"Q1 start", "Q1 hdr GET /a HTTP/1.1\r\nContent-Length",
		"dead syntax",
	},
	.reason = LB_HTTP_FOLLOW_R_SYNTAX,
},
{
	/* Names longer than 16 bytes, odd tchars past the 16th, a colon
	 * right after the 16th: names are skipped 16 bytes at a time. */
	.name = "long field names with every kind of tchar",
	.steps = {
		C("GET /a HTTP/1.1\r\nX-Very-Long-Field-Name_with.odd~chars!#$%&'*+^`|: v\r\nAbcdefghijklmnop: 1\r\nX-0123456789-abcdef-Content-Length: 7\r\n\r\n", 10),
	},
	.ev = {
		"Q1 start", "Q1 hdr GET /a HTTP/1.1\r\nX-Very-Long-Field-Name_with.odd~chars!#$%&'*+^`|: v\r\nAbcdefghijklmnop: 1\r\nX-0123456789-abcdef-Content-Length: 7\r\n\r\n",
		"Q1 end OTHER", "Q1 done t=10 body=0",
	},
},
{
	.name = "byte from 0x80 in a long field name",
	.steps = {
		C("GET /a HTTP/1.1\r\nX-Very-Long-Field\x80Name: v\r\n\r\n", 10),
	},
	.ev = {
		"Q1 start", "Q1 hdr GET /a HTTP/1.1\r\nX-Very-Long-Field",
		"dead syntax",
	},
	.reason = LB_HTTP_FOLLOW_R_SYNTAX,
},
{
	.name = "whitespace after a long field name",
	.steps = {
		C("GET /a HTTP/1.1\r\nX-Very-Long-Field-Name-Here : v\r\n\r\n", 10),
	},
	.ev = {
		"Q1 start", "Q1 hdr GET /a HTTP/1.1\r\nX-Very-Long-Field-Name-Here",
		"dead syntax",
	},
	.reason = LB_HTTP_FOLLOW_R_SYNTAX,
},
{
	.name = "bare LF accepted by default",
	.steps = {
		C("GET /a HTTP/1.1\nHost: svc\n\n", 10),
		S("HTTP/1.1 200 OK\nContent-Length: 2\n\nok", 20),
	},
	.ev = {
		"Q1 start", "Q1 hdr GET /a HTTP/1.1\nHost: svc\n\n",
		"Q1 end OTHER", "Q1 done t=10 body=0",
		"R1 start lat=10",
		"R1 hdr HTTP/1.1 200 OK\nContent-Length: 2\n\n",
		"R1 end 200", "R1 done t=20 body=2",
	},
},
{
	.name = "bare LF rejected when configured",
	.conf = &conf_strict_lf,
	.steps = {
		C("GET /a HTTP/1.1\r\nHost: svc\n\r\n", 10),
	},
	.ev = {
		"Q1 start", "Q1 hdr GET /a HTTP/1.1\r\nHost: svc",
		"dead bare_lf",
	},
	.reason = LB_HTTP_FOLLOW_R_BARE_LF,
},
{
	.name = "bare CR is invalid",
	.steps = {
		C("GET /a HTTP/1.1\r\nHost: s\rvc\r\n\r\n", 10),
	},
	.ev = {
		"Q1 start", "Q1 hdr GET /a HTTP/1.1\r\nHost: s\r",
		"dead syntax",
	},
	.reason = LB_HTTP_FOLLOW_R_SYNTAX,
},
{
	.name = "more pipelined requests than the queue holds (2)",
	.conf = &conf_q2,
	.steps = {
		C(GET_A GET_B GET_A, 10),
	},
	.ev = {
		REQ_A(10),
		"Q2 start", "Q2 hdr " GET_B, "Q2 end OTHER",
		"Q2 done t=10 body=0",
		"dead queue_full",
	},
	.reason = LB_HTTP_FOLLOW_R_QUEUE_FULL,
},
{
	.name = "queue slot freed by a completed response",
	.conf = &conf_q2,
	.steps = {
		C(GET_A GET_B, 10), S(OK0, 20), C(GET_A, 30),
		S(OK0 OK0, 40),
	},
	.ev = {
		REQ_A(10),
		"Q2 start", "Q2 hdr " GET_B, "Q2 end OTHER",
		"Q2 done t=10 body=0",
		"R1 start lat=10", "R1 hdr " OK0, "R1 end 200",
		"R1 done t=20 body=0",
		"Q3 start", "Q3 hdr " GET_A, "Q3 end OTHER",
		"Q3 done t=30 body=0",
		"R2 start lat=30", "R2 hdr " OK0, "R2 end 200",
		"R2 done t=40 body=0",
		"R3 start lat=10", "R3 hdr " OK0, "R3 end 200",
		"R3 done t=40 body=0",
	},
},
{
	.name = "close inside Content-Length content",
	.steps = {
		C(GET_A, 10), S(OK5 "hel", 20), CLOSE(30),
	},
	.ev = {
		REQ_A(10),
		"R1 start lat=10", "R1 hdr " OK5, "R1 end 200", "dead truncated",
	},
	.reason = LB_HTTP_FOLLOW_R_TRUNCATED,
},
{
	.name = "unsolicited 408 before any request",
	.steps = {
		S("HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n"
		  "Connection: close\r\n\r\n", 10),
		CLOSE(11),
	},
	.ev = {
		"R0 start untimed",
		"R0 hdr HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n"
		"Connection: close\r\n\r\n",
		"R0 end 408", "R0 done t=10 body=0",
	},
},
{
	.name = "early final response while the request content flows",
	.steps = {
		C("POST /big HTTP/1.1\r\nContent-Length: 10\r\n\r\n01234", 10),
		S("HTTP/1.1 413 Content Too Large\r\nContent-Length: 0\r\n\r\n",
		  12),
		C("56789" GET_B, 20), S(OK5 "hello", 25),
	},
	.ev = {
		"Q1 start",
		"Q1 hdr POST /big HTTP/1.1\r\nContent-Length: 10\r\n\r\n",
		"Q1 end OTHER",
		"R1 start untimed",
		"R1 hdr HTTP/1.1 413 Content Too Large\r\nContent-Length: 0\r\n"
		"\r\n",
		"R1 end 413", "R1 done t=12 body=0",
		"Q1 done t=20 body=10",
		"Q2 start", "Q2 hdr " GET_B, "Q2 end OTHER",
		"Q2 done t=20 body=0",
		"R2 start lat=5", "R2 hdr " OK5, "R2 end 200",
		"R2 done t=25 body=5",
	},
},
{
	.name = "empty lines before messages are skipped",
	.steps = {
		C("\r\n\r\n" GET_A, 10), S("\r\n" OK0, 20),
	},
	.ev = {
		REQ_A(10),
		"R1 start lat=10", "R1 hdr " OK0, "R1 end 200",
		"R1 done t=20 body=0",
	},
},
{
	.name = "HTTP/1.0 request: Expect and Upgrade are ignored",
	.steps = {
		C("GET /a HTTP/1.0\r\nExpect: 100-continue\r\n"
		  "Upgrade: websocket\r\n\r\n", 10),
		S("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", 20),
	},
	.ev = {
		"Q1 start",
		"Q1 hdr GET /a HTTP/1.0\r\nExpect: 100-continue\r\n"
		"Upgrade: websocket\r\n\r\n",
		"Q1 end OTHER http10", "Q1 done t=10 body=0",
		"R1 start lat=10",
		"R1 hdr HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n",
		"R1 end 200 http10", "R1 done t=20 body=0",
	},
},
{
	.name = "status line without reason phrase",
	.steps = {
		C(GET_A, 10), S("HTTP/1.1 200\r\nContent-Length: 1\r\n\r\nx", 20),
	},
	.ev = {
		REQ_A(10),
		"R1 start lat=10", "R1 hdr HTTP/1.1 200\r\nContent-Length: 1\r\n\r\n",
		"R1 end 200", "R1 done t=20 body=1",
	},
},
{
	.name = "not HTTP from the server",
	.steps = {
		C(GET_A, 10), S("SSH-2.0-OpenSSH_9.6\r\n", 20),
	},
	.ev = {
		REQ_A(10), "R1 start lat=10", "dead syntax",
	},
	.reason = LB_HTTP_FOLLOW_R_SYNTAX,
},
{
	.name = "HTTP major version 2 in a status line",
	.steps = {
		C(GET_A, 10), S("HTTP/2 200\r\n\r\n", 20),
	},
	.ev = {
		REQ_A(10), "R1 start lat=10", "R1 hdr HTTP/", "dead version",
	},
	.reason = LB_HTTP_FOLLOW_R_VERSION,
},
{
	.name = "HTTP/0.9 style request line",
	.steps = {
		C("GET /index.html\r\n", 10),
	},
	.ev = {
		"Q1 start", "Q1 hdr GET /index.html", "dead syntax",
	},
	.reason = LB_HTTP_FOLLOW_R_SYNTAX,
},
};

/* ---- driver ---- */

enum mode { M_WHOLE, M_BYTES, M_RANDOM };

static void
feed_piece(struct lb_http_follow *f, char op, const uint8_t *p, size_t n,
	   uint64_t t, bool closed)
{
	int rc = op == 'C' ? lb_http_follow_request(f, p, n, t) :
			     lb_http_follow_response(f, p, n, t);

	/* Once unfollowable, every call says so and nothing else happens. */
	if (lb_http_follow_reason(f) != LB_HTTP_FOLLOW_OK)
		assert_int_equal(rc, -EPROTO);
	else
		assert_int_equal(rc, closed ? -EPIPE : 0);
}

static enum lb_http_follow_reason
run(const struct tcase *tc, enum mode mode, uint64_t seed, struct rec *rec,
    struct lb_http_follow_stats *st)
{
	struct lb_http_follow_prof prof;
	struct lb_http_follow f;
	struct lb_xoshiro xs;
	struct lb_rng rng;
	bool closed = false;

	lb_xoshiro_seed(&xs, seed);
	rng = lb_rng_xoshiro(&xs);
	assert_int_equal(lb_http_follow_prof_init(&prof, tc->conf, &rec_ops),
			 0);
	assert_int_equal(lb_http_follow_init(&f, &prof, st, rec), 0);
	for (const struct step *s = tc->steps; s->op != 0; s++) {
		const uint8_t *p = (const uint8_t *)s->data;
		size_t left = s->len;

		if (s->op == 'X') {
			(void)lb_http_follow_close(&f, s->t);
			closed = true;
			continue;
		}
		if (s->op == 'L') {
			assert_int_equal(lb_http_follow_lost(&f), 0);
			continue;
		}
		while (left > 0) {
			size_t n = left;

			if (mode == M_BYTES)
				n = 1;
			else if (mode == M_RANDOM)
				/* Half the cuts are within 8 bytes, so
				 * every state sees a boundary. */
				n = 1 + (size_t)lb_rng_below(&rng,
					lb_rng_below(&rng, 2) ? left :
					(left < 8 ? left : 8));
			feed_piece(&f, s->op, p, n, s->t, closed);
			p += n;
			left -= n;
		}
	}
	return lb_http_follow_reason(&f);
}

static void
print_escaped(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\r')
			fputs("\\r", stderr);
		else if (c == '\n')
			fputs("\\n", stderr);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(stderr, "\\x%02x", c);
		else
			fputc(c, stderr);
	}
}

static bool
same(const struct tcase *tc, const struct rec *r, const char *how)
{
	unsigned int n = 0;
	bool ok;

	while (tc->ev[n] != NULL)
		n++;
	ok = !r->overflow && r->n == n;
	for (unsigned int i = 0; ok && i < n; i++)
		ok = r->len[i] == strlen(tc->ev[i]) &&
		     memcmp(r->ev[i], tc->ev[i], r->len[i]) == 0;
	if (ok)
		return true;
	fprintf(stderr, "case '%s' (%s): events differ\n", tc->name, how);
	for (unsigned int i = 0; i < n || i < r->n; i++) {
		fprintf(stderr, "  %2u want ", i);
		if (i < n)
			print_escaped(tc->ev[i], strlen(tc->ev[i]));
		fprintf(stderr, "\n     got  ");
		if (i < r->n)
			print_escaped(r->ev[i], r->len[i]);
		fprintf(stderr, "\n");
	}
	return false;
}

static void
test_conversations(void **state)
{
	size_t nb = sizeof(cases) / sizeof(cases[0]);
	unsigned int bad = 0;
	struct rec rec = { 0 };
	char how[64];

	(void)state;
	for (size_t i = 0; i < nb; i++) {
		for (uint64_t seed = 0; seed < 2 + NB_SEEDS; seed++) {
			enum mode m = seed == 0 ? M_WHOLE :
				      seed == 1 ? M_BYTES :
						  M_RANDOM;

			snprintf(how, sizeof(how), "%s seed %" PRIu64,
				 m == M_WHOLE ? "whole" :
				 m == M_BYTES ? "byte by byte" : "random",
				 seed);
			assert_int_equal(run(&cases[i], m, seed, &rec, NULL),
					 cases[i].reason);
			if (!same(&cases[i], &rec, how)) {
				bad++;
				seed = 2 + NB_SEEDS; /* one report a case */
			}
			rec_clear(&rec);
		}
	}
	assert_int_equal(bad, 0);
}

static bool
same_rec(const struct rec *a, const struct rec *b)
{
	if (a->overflow || b->overflow || a->n != b->n)
		return false;
	for (unsigned int i = 0; i < a->n; i++)
		if (a->len[i] != b->len[i] ||
		    memcmp(a->ev[i], b->ev[i], a->len[i]) != 0)
			return false;
	return true;
}

/*
 * Property: whatever the bytes, the events do not depend on the cuts.
 * Each row is mutated (bytes replaced or inserted from the characters the
 * grammar cares about) and fed whole, byte by byte and at random cuts.
 */
#define NB_MUTANTS 100
#define MUT_CAP 640

static void
test_mutants_split_invariant(void **state)
{
	static const char alphabet[] = "\r\n\t :;,=\"\\019aAfFxH/.-";
	static char bufs[10][MUT_CAP];
	size_t nb = sizeof(cases) / sizeof(cases[0]);
	struct rec ra = { 0 }, rb = { 0 }, rc = { 0 };
	struct lb_xoshiro xs;
	struct lb_rng rng;
	unsigned int bad = 0, died = 0, total = 0;

	(void)state;
	for (size_t i = 0; i < nb; i++) {
		for (uint64_t m = 0; m < NB_MUTANTS; m++) {
			struct tcase tc = cases[i];
			enum lb_http_follow_reason r0;
			int nsteps = 0;

			lb_xoshiro_seed(&xs, i * 1000 + m);
			rng = lb_rng_xoshiro(&xs);
			for (; tc.steps[nsteps].op != 0; nsteps++) {
				struct step *s = &tc.steps[nsteps];

				if (s->data == NULL)
					continue;
				assert_true(s->len < MUT_CAP);
				memcpy(bufs[nsteps], s->data, s->len);
				s->data = bufs[nsteps];
			}
			/* One or two edits: most mutants still parse deep. */
			for (uint64_t e = 0; e < 1 + lb_rng_below(&rng, 2); e++) {
				struct step *s =
					&tc.steps[lb_rng_below(&rng, nsteps)];
				char *buf = (char *)s->data;
				size_t at;

				if (buf == NULL || s->len == 0)
					continue;
				at = lb_rng_below(&rng, s->len);
				if (lb_rng_below(&rng, 2) && s->len + 1 < MUT_CAP) {
					memmove(buf + at + 1, buf + at,
						s->len - at);
					s->len++;
				}
				buf[at] = alphabet[lb_rng_below(
					&rng, sizeof(alphabet) - 1)];
			}
			r0 = run(&tc, M_WHOLE, 0, &ra, NULL);
			assert_int_equal(run(&tc, M_BYTES, 0, &rb, NULL), r0);
			assert_int_equal(run(&tc, M_RANDOM, m + 7, &rc, NULL),
					 r0);
			if (!same_rec(&ra, &rb) || !same_rec(&ra, &rc)) {
				fprintf(stderr, "mutant %" PRIu64
					" of '%s' depends on the cuts\n",
					m, tc.name);
				bad++;
			}
			died += r0 != LB_HTTP_FOLLOW_OK;
			total++;
			rec_clear(&ra);
			rec_clear(&rb);
			rec_clear(&rc);
		}
	}
	assert_int_equal(bad, 0);
	/* The mutations do reach the parser: many flows die of them. */
	assert_true(died > total / 4 && died < total);
}

/* ---- counters, limits, info fields, bad input ---- */

static void
test_stats_by_reason(void **state)
{
	struct lb_http_follow_stats st = { 0 };
	struct rec rec = { 0 };
	size_t nb = sizeof(cases) / sizeof(cases[0]);
	uint64_t want[LB_HTTP_FOLLOW_R_MAX] = { 0 };

	(void)state;
	for (size_t i = 0; i < nb; i++) {
		assert_int_equal(run(&cases[i], M_WHOLE, 0, &rec, &st),
				 cases[i].reason);
		rec_clear(&rec);
		want[cases[i].reason]++;
	}
	want[LB_HTTP_FOLLOW_OK] = 0;
	for (int r = 0; r < LB_HTTP_FOLLOW_R_MAX; r++)
		assert_int_equal(st.unfollowable[r], want[r]);
	/* Every reason but OK is exercised by some row. */
	for (int r = 1; r < LB_HTTP_FOLLOW_R_MAX; r++)
		assert_true(want[r] > 0);

	/* One conversation in detail: 103 + 200, then an unsolicited 408. */
	static const struct tcase tc = {
		.name = "stats",
		.steps = {
			C(GET_A GET_B, 1),
			S("HTTP/1.1 103 Early Hints\r\n\r\n" OK0 OK0, 2),
			S("HTTP/1.1 408 Request Timeout\r\n"
			  "Content-Length: 0\r\n\r\n", 3),
		},
	};
	memset(&st, 0, sizeof(st));
	assert_int_equal(run(&tc, M_WHOLE, 0, &rec, &st), LB_HTTP_FOLLOW_OK);
	rec_clear(&rec);
	assert_int_equal(st.requests, 2);
	assert_int_equal(st.responses, 2);
	assert_int_equal(st.interim, 1);
	assert_int_equal(st.unmatched, 1);
}

struct info_ctx {
	struct lb_http_follow_req rq;
	struct lb_http_follow_resp rs_end, rs_done;
	size_t hdr_bytes;
	unsigned int dead;
};

static void
info_req_done(void *ctx, const struct lb_http_follow_req *rq)
{
	((struct info_ctx *)ctx)->rq = *rq;
}

static void
info_resp_bytes(void *ctx, const struct lb_http_follow_resp *rs,
		const uint8_t *p, size_t n)
{
	(void)rs;
	(void)p;
	((struct info_ctx *)ctx)->hdr_bytes += n;
}

static void
info_resp_end(void *ctx, const struct lb_http_follow_resp *rs)
{
	((struct info_ctx *)ctx)->rs_end = *rs;
}

static void
info_resp_done(void *ctx, const struct lb_http_follow_resp *rs)
{
	((struct info_ctx *)ctx)->rs_done = *rs;
}

static void
info_dead(void *ctx, enum lb_http_follow_reason why)
{
	(void)why;
	((struct info_ctx *)ctx)->dead++;
}

static const struct lb_http_follow_ops info_ops = {
	.req_done = info_req_done,
	.resp_head_bytes = info_resp_bytes,
	.resp_head_end = info_resp_end,
	.resp_done = info_resp_done,
	.unfollowable = info_dead,
};

static void
test_info_fields(void **state)
{
	static const char req[] = "HEAD /x HTTP/1.1\r\nHost: a\r\n\r\n";
	static const char resp[] = "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n";
	struct lb_http_follow_prof prof;
	struct lb_http_follow f;
	struct info_ctx ic = { 0 };

	(void)state;
	assert_int_equal(lb_http_follow_prof_init(&prof, NULL, &info_ops), 0);
	assert_int_equal(lb_http_follow_init(&f, &prof, NULL, &ic), 0);
	assert_int_equal(lb_http_follow_request(&f, (const uint8_t *)req,
						sizeof(req) - 1, 1000),
			 0);
	assert_int_equal(lb_http_follow_outstanding(&f), 1);
	assert_int_equal(ic.rq.seq, 1);
	assert_int_equal(ic.rq.mclass, LB_HTTP_FOLLOW_M_HEAD);
	assert_int_equal(ic.rq.head_len, sizeof(req) - 1);
	assert_int_equal(ic.rq.first_ns, 1000);
	assert_int_equal(ic.rq.done_ns, 1000);
	assert_int_equal(lb_http_follow_response(&f, (const uint8_t *)resp,
						 sizeof(resp) - 1, 1750),
			 0);
	assert_int_equal(lb_http_follow_outstanding(&f), 0);
	assert_int_equal(ic.hdr_bytes, sizeof(resp) - 1);
	assert_int_equal(ic.rs_end.head_len, sizeof(resp) - 1);
	assert_int_equal(ic.rs_end.status, 200);
	assert_int_equal(ic.rs_end.req_seq, 1);
	assert_int_equal(ic.rs_end.req_mclass, LB_HTTP_FOLLOW_M_HEAD);
	assert_int_equal(ic.rs_done.first_ns, 1750);
	assert_int_equal(ic.rs_done.req_done_ns, 1000);
	assert_int_equal(ic.rs_done.latency_ns, 750);
	assert_int_equal(ic.rs_done.done_ns, 1750);
	assert_int_equal(ic.rs_done.body_len, 0);
	assert_true(ic.rs_done.flags & LB_HTTP_FOLLOW_RESP_TIMED);
	/* A clock going backwards yields 0, not a wrapped latency. */
	assert_int_equal(lb_http_follow_request(&f, (const uint8_t *)req,
						sizeof(req) - 1, 5000),
			 0);
	assert_int_equal(lb_http_follow_response(&f, (const uint8_t *)resp,
						 sizeof(resp) - 1, 4000),
			 0);
	assert_int_equal(ic.rs_done.latency_ns, 0);
	assert_int_equal(ic.rs_done.req_seq, 2);
	assert_int_equal(ic.dead, 0);
}

/* Feeds a response head whose one field line has @p vlen value octets
 * (or whose block has @p nlines lines) under the default limits. */
static enum lb_http_follow_reason
feed_big_head(size_t vlen, size_t nlines, size_t *hdr_bytes)
{
	struct lb_http_follow_prof prof;
	struct lb_http_follow f;
	struct info_ctx ic = { 0 };
	static const char get[] = "GET / HTTP/1.1\r\n\r\n";
	static const char sl[] = "HTTP/1.1 200 OK\r\n";
	size_t cap = vlen + 64 * nlines + 128, n = 0;
	char *buf = malloc(cap);

	assert_non_null(buf);
	n += (size_t)snprintf(buf + n, cap - n, "%s", sl);
	if (vlen > 0) {
		memcpy(buf + n, "X-Big: ", 7);
		n += 7;
		memset(buf + n, 'v', vlen);
		n += vlen;
		memcpy(buf + n, "\r\n", 2);
		n += 2;
	}
	for (size_t i = 0; i < nlines; i++)
		n += (size_t)snprintf(buf + n, cap - n, "X-%05zu: 0123456\r\n",
				      i);
	n += (size_t)snprintf(buf + n, cap - n, "Content-Length: 0\r\n\r\n");
	assert_int_equal(lb_http_follow_prof_init(&prof, NULL, &info_ops), 0);
	assert_int_equal(lb_http_follow_init(&f, &prof, NULL, &ic), 0);
	assert_int_equal(lb_http_follow_request(&f, (const uint8_t *)get,
						sizeof(get) - 1, 1),
			 0);
	/* Segments of a typical 1448-octet MSS. */
	for (size_t off = 0; off < n; off += 1448)
		(void)lb_http_follow_response(
			&f, (const uint8_t *)buf + off,
			n - off < 1448 ? n - off : 1448, 2);
	*hdr_bytes = (lb_http_follow_reason(&f) == LB_HTTP_FOLLOW_OK) ?
			     ic.rs_end.head_len : 0;
	assert_true(ic.hdr_bytes <= n);
	if (lb_http_follow_reason(&f) == LB_HTTP_FOLLOW_OK)
		assert_int_equal(ic.hdr_bytes, n);
	free(buf);
	return lb_http_follow_reason(&f);
}

static void
test_default_limits(void **state)
{
	size_t hb;
	/* "X-Big: " and its value make a line of exactly max_line. */
	size_t line_fit = LB_HTTP_FOLLOW_MAX_LINE_DEFAULT - 7;

	(void)state;
	assert_int_equal(feed_big_head(line_fit, 0, &hb), LB_HTTP_FOLLOW_OK);
	assert_int_equal(feed_big_head(line_fit + 1, 0, &hb),
			 LB_HTTP_FOLLOW_R_LINE_TOO_LONG);
	/* Status line 17 + Content-Length line 19 + empty line 2 = 38,
	 * filler lines of 18, "X-Big: " line of 9 + v:
	 * 38 + 18 * 3637 + 9 + 23 = 65536, the default max_head. */
	assert_int_equal(feed_big_head(23, 3637, &hb), LB_HTTP_FOLLOW_OK);
	assert_int_equal(hb, LB_HTTP_FOLLOW_MAX_HEAD_DEFAULT);
	assert_int_equal(feed_big_head(24, 3637, &hb),
			 LB_HTTP_FOLLOW_R_HEAD_TOO_LONG);
}

/* 40 keep-alive exchanges and one burst of exactly QUEUE_MAX pipelined
 * requests: ring slots wrap, matching and latency stay exact. */
static void
test_queue_wrap(void **state)
{
	struct lb_http_follow_prof prof;
	struct lb_http_follow f;
	struct info_ctx ic = { 0 };
	static const char get[] = "GET / HTTP/1.1\r\n\r\n";
	static const char ok[] = "HTTP/1.1 204 No Content\r\n\r\n";
	uint64_t t = 0;

	(void)state;
	assert_int_equal(lb_http_follow_prof_init(&prof, NULL, &info_ops), 0);
	assert_int_equal(lb_http_follow_init(&f, &prof, NULL, &ic), 0);
	for (uint32_t i = 1; i <= 40; i++) {
		t += 100;
		assert_int_equal(lb_http_follow_request(
					 &f, (const uint8_t *)get,
					 sizeof(get) - 1, t),
				 0);
		assert_int_equal(lb_http_follow_response(
					 &f, (const uint8_t *)ok,
					 sizeof(ok) - 1, t + i),
				 0);
		assert_int_equal(ic.rs_done.req_seq, i);
		assert_int_equal(ic.rs_done.latency_ns, i);
	}
	for (uint32_t i = 0; i < LB_HTTP_FOLLOW_QUEUE_MAX; i++)
		assert_int_equal(lb_http_follow_request(
					 &f, (const uint8_t *)get,
					 sizeof(get) - 1, 10000 + i),
				 0);
	assert_int_equal(lb_http_follow_outstanding(&f),
			 LB_HTTP_FOLLOW_QUEUE_MAX);
	for (uint32_t i = 0; i < LB_HTTP_FOLLOW_QUEUE_MAX; i++) {
		assert_int_equal(lb_http_follow_response(
					 &f, (const uint8_t *)ok,
					 sizeof(ok) - 1, 20000),
				 0);
		assert_int_equal(ic.rs_done.req_seq, 41 + i);
		assert_int_equal(ic.rs_done.latency_ns, 10000 - i);
	}
	/* One more than the queue holds. */
	for (uint32_t i = 0; i <= LB_HTTP_FOLLOW_QUEUE_MAX; i++)
		(void)lb_http_follow_request(&f, (const uint8_t *)get,
					     sizeof(get) - 1, 30000);
	assert_int_equal(lb_http_follow_reason(&f),
			 LB_HTTP_FOLLOW_R_QUEUE_FULL);
	assert_int_equal(ic.dead, 1);
}

static void
test_bad_input(void **state)
{
	struct lb_http_follow_conf c;
	struct lb_http_follow_prof prof;
	struct lb_http_follow f;
	struct info_ctx ic = { 0 };
	static const uint8_t x[] = "GET / HTTP/1.1\r\n\r\n";
	static const struct {
		uint32_t max_line, max_head, depth;
		int tecl;
		int rc;
	} rows[] = {
		{ 16384, 65536, 16, 0, 0 },
		{ 32, 32, 1, 1, 0 },
		{ 31, 65536, 16, 0, -ERANGE },      /* line too small */
		{ 0, 65536, 16, 0, -ERANGE },
		{ 70000, 65536, 16, 0, -ERANGE },   /* line > head */
		{ 8192, (1u << 20) + 1, 16, 0, -ERANGE },
		{ 8192, UINT32_MAX, 16, 0, -ERANGE },
		{ 8192, 65536, 0, 0, -ERANGE },
		{ 8192, 65536, 17, 0, -ERANGE },
		{ 8192, 65536, 16, 2, -EINVAL },
		{ 8192, 65536, 16, -1, -EINVAL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		lb_http_follow_conf_default(&c);
		c.max_line = rows[i].max_line;
		c.max_head = rows[i].max_head;
		c.queue_depth = rows[i].depth;
		c.te_with_cl = (enum lb_http_follow_tecl)rows[i].tecl;
		assert_int_equal(lb_http_follow_prof_init(&prof, &c, &info_ops),
				 rows[i].rc);
	}
	assert_int_equal(lb_http_follow_prof_init(NULL, NULL, &info_ops),
			 -EINVAL);
	assert_int_equal(lb_http_follow_prof_init(&prof, NULL, NULL), -EINVAL);
	assert_int_equal(lb_http_follow_prof_init(&prof, NULL, &info_ops), 0);
	assert_int_equal(prof.conf.max_line, LB_HTTP_FOLLOW_MAX_LINE_DEFAULT);
	assert_int_equal(prof.conf.max_head, LB_HTTP_FOLLOW_MAX_HEAD_DEFAULT);
	assert_int_equal(prof.conf.queue_depth, LB_HTTP_FOLLOW_QUEUE_MAX);
	assert_false(prof.conf.reject_bare_lf);
	assert_int_equal(prof.conf.te_with_cl, LB_HTTP_FOLLOW_TECL_REJECT);

	assert_int_equal(lb_http_follow_init(NULL, &prof, NULL, NULL), -EINVAL);
	assert_int_equal(lb_http_follow_init(&f, NULL, NULL, NULL), -EINVAL);
	assert_int_equal(lb_http_follow_init(&f, &prof, NULL, &ic), 0);
	assert_int_equal(lb_http_follow_request(NULL, x, 1, 0), -EINVAL);
	assert_int_equal(lb_http_follow_response(NULL, x, 1, 0), -EINVAL);
	assert_int_equal(lb_http_follow_request(&f, NULL, 1, 0), -EINVAL);
	assert_int_equal(lb_http_follow_request(&f, NULL, 0, 0), 0);
	assert_int_equal(lb_http_follow_response(&f, x, 0, 0), 0);
	assert_int_equal(lb_http_follow_close(NULL, 0), -EINVAL);
	assert_int_equal(lb_http_follow_lost(NULL), -EINVAL);
	assert_int_equal(lb_http_follow_reason(&f), LB_HTTP_FOLLOW_OK);

	/* Close, then everything says the stream ended. */
	assert_int_equal(lb_http_follow_request(&f, x, sizeof(x) - 1, 1), 0);
	assert_int_equal(lb_http_follow_close(&f, 2), 0);
	assert_int_equal(lb_http_follow_close(&f, 3), -EPIPE);
	assert_int_equal(lb_http_follow_response(&f, x, 1, 4), -EPIPE);
	assert_int_equal(lb_http_follow_reason(&f), LB_HTTP_FOLLOW_OK);

	/* Lost: reported once, counted once. */
	struct lb_http_follow_stats st = { 0 };
	assert_int_equal(lb_http_follow_init(&f, &prof, &st, &ic), 0);
	assert_int_equal(lb_http_follow_lost(&f), 0);
	assert_int_equal(lb_http_follow_lost(&f), 0);
	assert_int_equal(ic.dead, 1);
	assert_int_equal(st.unfollowable[LB_HTTP_FOLLOW_R_LOST], 1);
	assert_int_equal(lb_http_follow_request(&f, x, sizeof(x) - 1, 1),
			 -EPROTO);
	assert_int_equal(lb_http_follow_close(&f, 2), -EPROTO);

	assert_string_equal(lb_http_follow_reason_name(LB_HTTP_FOLLOW_R_HTTP2),
			    "http2");
	assert_string_equal(lb_http_follow_reason_name(LB_HTTP_FOLLOW_OK),
			    "following");
	assert_string_equal(
		lb_http_follow_reason_name((enum lb_http_follow_reason)99),
		"unknown");
	for (int r = 0; r < LB_HTTP_FOLLOW_R_MAX; r++)
		assert_non_null(lb_http_follow_reason_name(
			(enum lb_http_follow_reason)r));
}

/* The follower is pool-allocated per flow: keep it small and fixed. */
static void
test_state_size(void **state)
{
	(void)state;
	assert_true(sizeof(struct lb_http_follow) <= 512);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conversations),
		cmocka_unit_test(test_mutants_split_invariant),
		cmocka_unit_test(test_stats_by_reason),
		cmocka_unit_test(test_info_fields),
		cmocka_unit_test(test_default_limits),
		cmocka_unit_test(test_queue_wrap),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_state_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
