/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-sim http_follow: what the dataplane sees of HTTP flows it forwards
 * segment by segment. A keep-alive conversation with pipelined requests,
 * HEAD, 100-continue, chunked and 304 responses is cut into segments of
 * odd sizes that straddle message boundaries; the follower reports each
 * response's status, the header bytes handed to the scanner and the
 * request -> response latency. Three more flows show when it gives up.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "http_follow.h"

#define US 1000ull /* ns */

struct sim_ctx {
	FILE *out;
	char qline[64];    /* request line of the request being read */
	size_t qlen;
	char hdr[512];     /* response header block, for the demo only */
	size_t hlen;
	unsigned int pieces;
	bool leaked;       /* body or trailer text reached the scanner */
};

static void
req_start(void *ctx, const struct lb_http_follow_req *rq)
{
	struct sim_ctx *s = ctx;

	(void)rq;
	s->qlen = 0;
}

static void
req_bytes(void *ctx, const struct lb_http_follow_req *rq, const uint8_t *p,
	  size_t n)
{
	struct sim_ctx *s = ctx;

	(void)rq;
	for (size_t i = 0; i < n && s->qlen + 1 < sizeof(s->qline); i++) {
		if (p[i] == '\r' || p[i] == '\n' ||
		    memchr(s->qline, '\r', s->qlen) != NULL)
			break;
		s->qline[s->qlen++] = (char)p[i];
	}
	s->qline[s->qlen] = '\0';
}

static void
req_end(void *ctx, const struct lb_http_follow_req *rq)
{
	struct sim_ctx *s = ctx;
	char *sp = strrchr(s->qline, ' ');

	if (sp != NULL)
		*sp = '\0'; /* drop " HTTP/1.1" */
	fprintf(s->out, "  %8.3f  req  %" PRIu32 " %-22s head %3" PRIu32
		" B%s\n", (double)rq->first_ns / 1e6, rq->seq, s->qline, rq->head_len,
		(rq->flags & LB_HTTP_FOLLOW_REQ_EXPECT_100) ?
			", waits for 100 Continue" : "");
}

static void
req_done(void *ctx, const struct lb_http_follow_req *rq)
{
	struct sim_ctx *s = ctx;

	if (rq->body_len > 0)
		fprintf(s->out, "  %8.3f  req  %" PRIu32
			" last byte (%" PRIu64 " B of content)\n",
			(double)rq->done_ns / 1e6, rq->seq, rq->body_len);
}

static void
resp_start(void *ctx, const struct lb_http_follow_resp *rs)
{
	struct sim_ctx *s = ctx;

	(void)rs;
	s->hlen = 0;
	s->pieces = 0;
}

static void
resp_bytes(void *ctx, const struct lb_http_follow_resp *rs,
	   const uint8_t *p, size_t n)
{
	struct sim_ctx *s = ctx;
	size_t k = n < sizeof(s->hdr) - 1 - s->hlen ?
			   n : sizeof(s->hdr) - 1 - s->hlen;

	(void)rs;
	memcpy(s->hdr + s->hlen, p, k);
	s->hlen += k;
	s->hdr[s->hlen] = '\0';
	s->pieces++;
}

/* What the Hyperscan stage would extract: the X-SPL value, if any. */
static const char *
spl_of(struct sim_ctx *s, char *buf, size_t cap)
{
	const char *v = strstr(s->hdr, "\r\nX-SPL: ");
	size_t n = 0;

	if (v == NULL)
		return "-";
	v += 9;
	while (v[n] != '\r' && v[n] != '\0' && n + 1 < cap)
		n++;
	memcpy(buf, v, n);
	buf[n] = '\0';
	/* The body and trailer decoys carry 9 and 0.77. */
	if (strcmp(buf, "9") == 0 || strcmp(buf, "0.77") == 0 ||
	    strstr(v, "X-SPL: ") != NULL)
		s->leaked = true;
	return buf;
}

static void
resp_end(void *ctx, const struct lb_http_follow_resp *rs)
{
	struct sim_ctx *s = ctx;
	char spl[16], lat[24];

	if (rs->flags & LB_HTTP_FOLLOW_RESP_TIMED)
		snprintf(lat, sizeof(lat), "%.3f ms",
			 (double)rs->latency_ns / 1e6);
	else
		snprintf(lat, sizeof(lat), "(req open)");
	fprintf(s->out, "  %8.3f  resp %" PRIu32 " %3u  head %3" PRIu32
		" B in %u seg%s  latency %-11s X-SPL %s\n",
		(double)rs->first_ns / 1e6, rs->req_seq, rs->status,
		rs->head_len, s->pieces, s->pieces == 1 ? " " : "s", lat,
		spl_of(s, spl, sizeof(spl)));
}

static void
resp_done(void *ctx, const struct lb_http_follow_resp *rs)
{
	struct sim_ctx *s = ctx;

	if (rs->body_len > 0)
		fprintf(s->out, "  %8.3f  resp %" PRIu32 " body %" PRIu64
			" B (%s) passed unscanned\n",
			(double)rs->done_ns / 1e6, rs->req_seq, rs->body_len,
			(rs->flags & LB_HTTP_FOLLOW_RESP_CHUNKED) ?
				"chunked, trailer ignored" :
			(rs->flags & LB_HTTP_FOLLOW_RESP_CLOSE) ?
				"until close" : "Content-Length");
}

static void
dead(void *ctx, enum lb_http_follow_reason why)
{
	struct sim_ctx *s = ctx;

	fprintf(s->out, "            unfollowable: %s, flow ignored from here\n",
		lb_http_follow_reason_name(why));
}

static const struct lb_http_follow_ops sim_ops = {
	.req_head_start = req_start,
	.req_head_bytes = req_bytes,
	.req_head_end = req_end,
	.req_done = req_done,
	.resp_head_start = resp_start,
	.resp_head_bytes = resp_bytes,
	.resp_head_end = resp_end,
	.resp_done = resp_done,
	.unfollowable = dead,
};

struct burst {
	char dir; /* C, S, L (lost segment) */
	uint64_t t_ns;
	const char *data;
};

#define HOST "Host: shop\r\n"

static const struct burst convo[] = {
	{ 'C', 0, "GET /catalog HTTP/1.1\r\n" HOST "X-Priority: 2\r\n\r\n"
		  "GET /cart HTTP/1.1\r\n" HOST "\r\n"
		  "HEAD /img/logo.png HTTP/1.1\r\n" HOST "\r\n" },
	{ 'S', 1800 * US, "HTTP/1.1 200 OK\r\nContent-Length: 39\r\n"
			  "X-SPL: 0.42\r\n\r\n"
			  "<p>decoy in the body:\r\nX-SPL: 9\r\n</p>\r\n" },
	{ 'S', 2400 * US, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
			  "X-SPL: 0.55\r\n\r\n"
			  "a\r\nX-SPL: 9\r\n\r\n17\r\n{\"items\":[1,2,3],\"n\":3}\r\n"
			  "0\r\nX-SPL: 0.77\r\n\r\n" },
	{ 'S', 2900 * US, "HTTP/1.1 200 OK\r\nContent-Length: 48213\r\n"
			  "X-SPL: 0.40\r\n\r\n" },
	{ 'C', 6000 * US, "POST /orders HTTP/1.1\r\n" HOST
			  "Expect: 100-continue\r\nContent-Length: 24\r\n\r\n" },
	{ 'S', 6200 * US, "HTTP/1.1 100 Continue\r\n\r\n" },
	{ 'C', 6300 * US, "{\"sku\":\"A-17\",\"qty\":2}\r\n" },
	{ 'S', 7900 * US, "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n"
			  "X-SPL: 0.61\r\n\r\n" },
	{ 'C', 9000 * US, "GET /catalog HTTP/1.1\r\n" HOST
			  "If-None-Match: \"v7\"\r\n\r\n" },
	{ 'S', 9400 * US, "HTTP/1.1 304 Not Modified\r\nX-SPL: 0.38\r\n\r\n" },
};

static const struct burst lost[] = {
	{ 'C', 0, "GET /a HTTP/1.1\r\n" HOST "\r\n" },
	{ 'S', 900 * US, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-SP" },
	{ 'L', 0, NULL },
	{ 'S', 950 * US, "L: 0.9\r\n\r\nhello" },
};

static const struct burst ws[] = {
	{ 'C', 0, "GET /live HTTP/1.1\r\n" HOST "Connection: Upgrade\r\n"
		  "Upgrade: websocket\r\n\r\n" },
	{ 'S', 700 * US, "HTTP/1.1 101 Switching Protocols\r\n"
			 "Upgrade: websocket\r\n\r\n\x81\x02hi" },
};

static const struct burst h2[] = {
	{ 'C', 0, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" },
};

/* Segment sizes, cycled across the whole stream of each direction. */
static const size_t cuts[] = { 7, 61, 23, 3, 97, 13, 41, 1, 29, 53 };

static int
play(FILE *out, const struct lb_http_follow_prof *prof,
     struct lb_http_follow_stats *st, const struct burst *b, size_t nb,
     bool show_segments)
{
	struct sim_ctx s = { .out = out };
	struct lb_http_follow f;
	size_t ci[2] = { 0, 5 }, left[2] = { 0, 0 };
	unsigned int segs[2] = { 0, 0 };
	size_t bytes[2] = { 0, 0 };

	if (lb_http_follow_init(&f, prof, st, &s) != 0)
		return -1;
	for (size_t i = 0; i < nb; i++) {
		const uint8_t *p = (const uint8_t *)b[i].data;
		int k = b[i].dir == 'S';
		size_t n = p != NULL ? strlen(b[i].data) : 0;

		if (b[i].dir == 'L') {
			fprintf(out, "            segment lost (gap in the"
				     " backend's sequence numbers)\n");
			lb_http_follow_lost(&f);
			continue;
		}
		bytes[k] += n;
		while (n > 0) {
			size_t m;

			/* Segments end where the cut list says, or where
			 * the sender paused (end of the burst). */
			if (left[k] == 0) {
				left[k] = cuts[ci[k]++ % (sizeof(cuts) /
							  sizeof(cuts[0]))];
				segs[k]++;
			}
			m = n < left[k] ? n : left[k];
			if (k)
				lb_http_follow_response(&f, p, m, b[i].t_ns);
			else
				lb_http_follow_request(&f, p, m, b[i].t_ns);
			p += m;
			n -= m;
			left[k] -= m;
		}
		left[k] = 0;
	}
	if (show_segments)
		fprintf(out, "  client->backend %zu B in %u segments, "
			     "backend->client %zu B in %u segments\n",
			bytes[0], segs[0], bytes[1], segs[1]);
	return s.leaked ? -1 : 0;
}

int
lb_sim_http_follow(FILE *out)
{
	struct lb_http_follow_stats st = { 0 };
	struct lb_http_follow_prof prof;
	int rc = 0;

	if (lb_http_follow_prof_init(&prof, NULL, &sim_ops) != 0)
		return 1;
	fprintf(out, "One keep-alive flow, requests 1-3 pipelined, cut into "
		     "segments of\n7 61 23 3 97 13 41 1 29 53 ... bytes. "
		     "Decoys that must never reach the scanner:\n"
		     "'X-SPL: 9' in bodies, 'X-SPL: 0.77' in a chunked "
		     "trailer.\n"
		     "     t(ms)  event (a head's segs: segments it spanned)\n");
	rc |= play(out, &prof, &st, convo, sizeof(convo) / sizeof(convo[0]),
		   true);
	fprintf(out, "Flow with a lost backend segment:\n");
	rc |= play(out, &prof, &st, lost, sizeof(lost) / sizeof(lost[0]),
		   false);
	fprintf(out, "Flow upgraded to WebSocket:\n");
	rc |= play(out, &prof, &st, ws, sizeof(ws) / sizeof(ws[0]), false);
	fprintf(out, "Flow opening with the HTTP/2 preface:\n");
	rc |= play(out, &prof, &st, h2, sizeof(h2) / sizeof(h2[0]), false);
	fprintf(out, "Worker counters: requests %" PRIu64 ", final responses %"
		PRIu64 ", interim %" PRIu64 ";\n  unfollowable: lost %" PRIu64
		", upgrade %" PRIu64 ", http2 %" PRIu64 "\n",
		st.requests, st.responses, st.interim,
		st.unfollowable[LB_HTTP_FOLLOW_R_LOST],
		st.unfollowable[LB_HTTP_FOLLOW_R_UPGRADE],
		st.unfollowable[LB_HTTP_FOLLOW_R_HTTP2]);
	if (st.responses != 5 || st.interim != 1 || st.requests != 7)
		rc = -1;
	return rc != 0;
}
