/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "l7.h"

#define MAX_OBS 16

struct sink {
	unsigned int n;
	uint32_t tag[MAX_OBS];
	struct lb_l7_obs obs[MAX_OBS];
	int inflight;
	int inflight_max;
};

static struct lb_hdr_db *db;
static struct lb_hdr_scratch *scratch;

static void
on_obs(void *owner, uint32_t tag, const struct lb_l7_obs *o)
{
	struct sink *s = owner;

	assert_true(s->n < MAX_OBS);
	s->tag[s->n] = tag;
	s->obs[s->n++] = *o;
}

static void
on_inflight(void *owner, uint32_t tag, int delta)
{
	struct sink *s = owner;

	(void)tag;
	s->inflight += delta;
	if (s->inflight > s->inflight_max)
		s->inflight_max = s->inflight;
	assert_true(s->inflight >= 0);
}

static int
setup(void **state)
{
	struct lb_hdr_cfg cfg;

	(void)state;
	lb_hdr_cfg_default(&cfg);
	db = lb_hdr_db_compile(&cfg);
	scratch = db != NULL ? lb_hdr_scratch_alloc(db) : NULL;
	return db == NULL || scratch == NULL;
}

static int
teardown(void **state)
{
	(void)state;
	lb_hdr_scratch_free(scratch);
	lb_hdr_db_free(db);
	return 0;
}

static const char req1[] = "GET /a HTTP/1.1\r\nHost: x\r\nX-Priority: 2\r\n"
			   "X-Expect-Ms: 50\r\n\r\n";
static const char req2[] = "GET /b HTTP/1.1\r\nHost: x\r\n\r\n";
static const char resp1[] = "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n"
			    "X-SPL: 0.8\r\nX-SPL-Time: 1700000000123\r\n\r\n"
			    "X-SPL: 9\r\n\r\n";
static const char resp2[] = "HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n"
			    "X-SPL: 1.5\r\n\r\n";

/* Feeds @p s as segments of @p seg bytes from sequence number @p seq. */
static uint32_t
feed(struct lb_l7_pool *p, uint32_t idx, int dir, uint32_t seq,
     const char *s, uint32_t seg, uint64_t now)
{
	uint32_t len = (uint32_t)strlen(s);

	for (uint32_t off = 0; off < len; off += seg) {
		uint32_t n = len - off < seg ? len - off : seg;

		assert_int_equal(lb_l7_segment(p, idx, dir, seq,
					       (const uint8_t *)s + off, n,
					       false, now),
				 0);
		seq += n;
	}
	return seq;
}

/* Pipelined requests, answered in order, each split at every segment
 * size: the observations carry what each side said, and the body's
 * "X-SPL: 9" is never taken for a header. */
static void
test_pipelined(void **state)
{
	(void)state;
	for (uint32_t seg = 1; seg <= 64; seg++) {
		struct sink s = { 0 };
		struct lb_l7_pool *p = lb_l7_pool_create(4, db, scratch, NULL,
							 on_obs, on_inflight,
							 &s);
		uint32_t idx, cs = 1000, bs = 0xfffffff0u; /* wraps */
		char both[256];

		assert_non_null(p);
		idx = lb_l7_open(p, cs, bs, 0x00030002, 0);
		assert_int_not_equal(idx, LB_L7_NONE);
		snprintf(both, sizeof(both), "%s%s", req1, req2);
		cs = feed(p, idx, 0, cs, both, seg, 1000000);
		assert_int_equal(s.inflight, 2);
		bs = feed(p, idx, 1, bs, resp1, seg, 3000000);
		bs = feed(p, idx, 1, bs, resp2, seg, 4000000);
		assert_int_equal(s.n, 2);
		assert_int_equal(s.inflight, 0);
		assert_int_equal(s.tag[0], 0x00030002);

		assert_int_equal(s.obs[0].status, 200);
		assert_true(s.obs[0].timed);
		assert_int_equal(s.obs[0].latency_ns, 2000000);
		assert_true(s.obs[0].has_spl);
		assert_true(s.obs[0].spl == 0.8);
		assert_true(s.obs[0].has_spl_time);
		assert_int_equal(s.obs[0].spl_time_ms, 1700000000123ull);
		assert_true(s.obs[0].has_prio);
		assert_int_equal(s.obs[0].prio, 2);
		assert_true(s.obs[0].has_expect);
		assert_int_equal(s.obs[0].expect_ms, 50);

		assert_int_equal(s.obs[1].status, 503);
		assert_true(s.obs[1].spl == 1.5);
		assert_false(s.obs[1].has_spl_time);
		assert_false(s.obs[1].has_prio);
		assert_false(s.obs[1].has_expect);
		lb_l7_pool_free(p);
	}
}

/* A retransmitted segment is skipped where it repeats bytes already fed;
 * a gap stops the flow for good and nothing more is attributed. */
static void
test_retransmit_and_gap(void **state)
{
	struct sink s = { 0 };
	struct lb_l7_pool *p = lb_l7_pool_create(2, db, scratch, NULL, on_obs,
						 on_inflight, &s);
	const uint8_t *r = (const uint8_t *)req1;
	uint32_t len = (uint32_t)strlen(req1), idx;
	struct lb_l7_stats st;

	(void)state;
	assert_non_null(p);
	idx = lb_l7_open(p, 100, 500, 1, 0);
	assert_int_equal(lb_l7_segment(p, idx, 0, 100, r, 10, false, 0), 0);
	/* the first 10 bytes again, then overlapping 5 + 10 new */
	assert_int_equal(lb_l7_segment(p, idx, 0, 100, r, 10, false, 0), 0);
	assert_int_equal(lb_l7_segment(p, idx, 0, 105, r + 5, 15, false, 0),
			 0);
	assert_int_equal(lb_l7_segment(p, idx, 0, 120, r + 20, len - 20,
				       false, 0),
			 0);
	assert_int_equal(s.inflight, 1);
	/* the response's first bytes are lost: a gap */
	assert_int_equal(lb_l7_segment(p, idx, 1, 510,
				       (const uint8_t *)resp1 + 10, 20, false,
				       0),
			 -EPROTO);
	assert_int_equal(lb_l7_segment(p, idx, 1, 500,
				       (const uint8_t *)resp1,
				       (uint32_t)strlen(resp1), false, 0),
			 -EPROTO);
	assert_int_equal(s.n, 0);
	lb_l7_stats_get(p, &st);
	assert_int_equal(st.gaps, 1);
	/* closing gives back the request that was never answered */
	lb_l7_close(p, idx);
	assert_int_equal(s.inflight, 0);
	lb_l7_pool_free(p);
}

static void
test_pool_and_bad_input(void **state)
{
	struct sink s = { 0 };
	struct lb_l7_pool *p = lb_l7_pool_create(2, db, scratch, NULL, on_obs,
						 NULL, &s);
	struct lb_l7_stats st;
	uint32_t a, b;

	(void)state;
	assert_non_null(p);
	a = lb_l7_open(p, 1, 1, 1, 0);
	b = lb_l7_open(p, 1, 1, 2, 0);
	assert_int_not_equal(a, LB_L7_NONE);
	assert_int_not_equal(b, LB_L7_NONE);
	assert_int_equal(lb_l7_open(p, 1, 1, 3, 0), LB_L7_NONE);
	lb_l7_stats_get(p, &st);
	assert_int_equal(st.flows, 2);
	assert_int_equal(st.pool_full, 1);
	lb_l7_close(p, a);
	assert_int_equal(lb_l7_open(p, 1, 1, 4, 0), a);
	/* A prefetch is a hint: in range or not, the entries stay as they
	 * are. */
	lb_l7_stats_get(p, &st);
	lb_l7_prefetch(p, a);
	lb_l7_prefetch(p, 2);
	lb_l7_prefetch(p, LB_L7_NONE);
	{
		struct lb_l7_stats st2;

		lb_l7_stats_get(p, &st2);
		assert_memory_equal(&st, &st2, sizeof(st));
	}
	assert_int_equal(lb_l7_segment(p, 7, 0, 1, NULL, 0, false, 0),
			 -EINVAL);
	assert_int_equal(lb_l7_segment(p, a, 2, 1, NULL, 0, false, 0),
			 -EINVAL);
	/* HTTP/2 is not followed */
	assert_int_equal(lb_l7_segment(p, b, 0, 1,
				       (const uint8_t *)"PRI * HTTP/2.0\r\n\r\n"
							"SM\r\n\r\n",
				       24, false, 0),
			 -EPROTO);
	lb_l7_stats_get(p, &st);
	assert_int_equal(st.unfollowable, 1);
	lb_l7_pool_free(p);

	errno = 0;
	assert_null(lb_l7_pool_create(0, db, scratch, NULL, on_obs, NULL, &s));
	assert_int_equal(errno, EINVAL);
	assert_null(lb_l7_pool_create(1, NULL, scratch, NULL, on_obs, NULL,
				      &s));
	assert_null(lb_l7_pool_create(1, db, scratch, NULL, NULL, NULL, &s));
}

/* A response delimited by the backend closing its side ends with FIN. */
/* An ORCA report counts as load only with its cpu_utilization: one that
 * carries named metrics alone (found by fuzzing) is no report of a CPU at
 * 0, which would make the backend look idle. */
static void
test_orca_needs_cpu(void **state)
{
	static const char *const resp[2] = {
		"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n"
		"endpoint-load-metrics: TEXT named_metrics.q=3, "
		"mem_utilization=0.5\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n"
		"endpoint-load-metrics: TEXT cpu_utilization=0.25\r\n\r\n",
	};
	struct sink s = { 0 };
	struct lb_l7_pool *p = lb_l7_pool_create(1, db, scratch, NULL, on_obs,
						 on_inflight, &s);
	uint32_t idx, cs = 1, bs = 1;

	(void)state;
	assert_non_null(p);
	idx = lb_l7_open(p, cs, bs, 1, 0);
	for (int i = 0; i < 2; i++) {
		cs = feed(p, idx, 0, cs, req2, 100, 1000);
		bs = feed(p, idx, 1, bs, resp[i], 100, 2000);
	}
	assert_int_equal(s.n, 2);
	assert_false(s.obs[0].has_orca);
	assert_true(s.obs[1].has_orca);
	assert_true(s.obs[1].orca_cpu == 0.25);
	lb_l7_close(p, idx);
	lb_l7_pool_free(p);
}

static void
test_close_delimited(void **state)
{
	static const char r[] = "HTTP/1.0 200 OK\r\nX-SPL: 0.25\r\n\r\nbody";
	struct sink s = { 0 };
	struct lb_l7_pool *p = lb_l7_pool_create(1, db, scratch, NULL, on_obs,
						 on_inflight, &s);
	uint32_t idx;

	(void)state;
	assert_non_null(p);
	idx = lb_l7_open(p, 0, 0, 9, 0);
	feed(p, idx, 0, 0, "GET / HTTP/1.0\r\n\r\n", 100, 0);
	assert_int_equal(lb_l7_segment(p, idx, 1, 0, (const uint8_t *)r,
				       (uint32_t)strlen(r), false, 10),
			 0);
	assert_int_equal(s.n, 1);
	assert_true(s.obs[0].spl == 0.25);
	assert_int_equal(s.inflight, 1);
	assert_int_equal(lb_l7_segment(p, idx, 1, (uint32_t)strlen(r), NULL, 0,
				       true, 20),
			 0);
	assert_int_equal(s.inflight, 0);
	lb_l7_pool_free(p);
}

/* Sends @p str in two segments cut at @p cut. */
static uint32_t
feed_cut(struct lb_l7_pool *p, uint32_t idx, int dir, uint32_t seq,
	 const char *str, uint32_t cut)
{
	uint32_t len = (uint32_t)strlen(str);

	assert_int_equal(lb_l7_segment(p, idx, dir, seq, (const uint8_t *)str,
				       cut, false, 0),
			 0);
	assert_int_equal(lb_l7_segment(p, idx, dir, seq + cut,
				       (const uint8_t *)str + cut, len - cut,
				       false, 0),
			 0);
	return seq + len;
}

/* Cut header blocks take streams from the pool's set, as many as it
 * follows flows; one more cut block loses its fields, not its framing. */
static void
test_stream_set(void **state)
{
	struct sink s = { 0 };
	struct lb_l7_pool *p = lb_l7_pool_create(2, db, scratch, NULL, on_obs,
						 on_inflight, &s);
	uint32_t a, b, as = 0, ab = 0, bs = 0, bb = 0;
	struct lb_l7_stats st;

	(void)state;
	assert_non_null(p);
	a = lb_l7_open(p, 0, 0, 1, 0);
	b = lb_l7_open(p, 0, 0, 2, 0);
	/* a: its request and its early response both cut open: 2 streams */
	as = feed(p, a, 0, as, "GET / HTTP/1.1\r\nX-Priority: 4", 100, 0);
	ab = feed(p, a, 1, ab, "HTTP/1.1 200 OK\r\nX-SPL: 0.", 100, 0);
	/* b: its request is cut too, and no stream is left */
	bs = feed(p, b, 0, bs, "GET / HTTP/1.1\r\nX-Prio", 100, 0);
	bs = feed(p, b, 0, bs, "rity: 7\r\n\r\n", 100, 0);
	as = feed(p, a, 0, as, "\r\n\r\n", 100, 0);
	ab = feed(p, a, 1, ab, "5\r\nContent-Length: 0\r\n\r\n", 100, 0);
	bb = feed(p, b, 1, bb, resp2, 100, 0);
	assert_int_equal(s.n, 2);
	assert_true(s.obs[0].has_spl && s.obs[0].spl == 0.5);
	assert_true(s.obs[0].has_prio && s.obs[0].prio == 4);
	assert_false(s.obs[1].has_prio);
	assert_true(s.obs[1].spl == 1.5);
	lb_l7_stats_get(p, &st);
	assert_int_equal(st.blocks_lost, 1);
	/* the streams came back: b's next cut request is read */
	bs = feed_cut(p, b, 0, bs, req1, 20);
	bb = feed_cut(p, b, 1, bb, resp1, 20);
	assert_int_equal(s.n, 3);
	assert_true(s.obs[2].has_prio && s.obs[2].prio == 2);
	assert_true(s.obs[2].spl == 0.8);
	lb_l7_pool_free(p);
	(void)as;
	(void)ab;
	(void)bb;
}

static void
on_obs_count(void *owner, uint32_t tag, const struct lb_l7_obs *o)
{
	unsigned int *n = owner;

	(void)tag;
	n[0]++;
	if (o->has_prio && o->prio == 2)
		n[1]++;
}

/* A large pool shares its streams: one per 16 flows, at least 64. With
 * every stream taken by a cut block, one more cut block loses its fields
 * and is counted; its exchange is followed all the same, and the fields
 * of the others are read whole. */
static void
test_stream_share(void **state)
{
	enum { FLOWS = 1000, CUT = 65 };
	unsigned int got[2] = { 0, 0 };
	struct lb_l7_pool *p = lb_l7_pool_create(FLOWS, db, scratch, NULL,
						 on_obs_count, NULL, got);
	struct lb_l7_pool *big = lb_l7_pool_create(4000, db, scratch, NULL,
						   on_obs_count, NULL, got);
	uint32_t idx[CUT], cs[CUT], bs[CUT];
	struct lb_l7_stats st;
	size_t cut = 30;

	(void)state;
	assert_non_null(p);
	assert_non_null(big);
	assert_int_equal(lb_l7_pool_streams(p), 64);
	assert_int_equal(lb_l7_pool_streams(big), 250);
	/* What the pool holds per flow, Hyperscan's stream state included. */
	assert_true(lb_l7_pool_mem(p) / FLOWS <= 1024);
	assert_true(lb_l7_pool_mem(big) / 4000 <= 1024);
	lb_l7_pool_free(big);
	assert_true(req1[cut] != '\0' && strchr(req1 + cut, '\n') != NULL);
	for (unsigned int i = 0; i < CUT; i++) {
		idx[i] = lb_l7_open(p, 0, 0, i, 0);
		assert_int_equal(lb_l7_segment(p, idx[i], 0, 0,
					       (const uint8_t *)req1,
					       (uint32_t)cut, false, 0),
				 0);
		cs[i] = (uint32_t)cut;
		bs[i] = 0;
	}
	lb_l7_stats_get(p, &st);
	assert_int_equal(st.blocks_lost, 1);
	for (unsigned int i = 0; i < CUT; i++) {
		cs[i] = feed(p, idx[i], 0, cs[i], req1 + cut, 100, 0);
		bs[i] = feed(p, idx[i], 1, bs[i], resp2, 100, 0);
	}
	assert_int_equal(got[0], CUT);
	assert_int_equal(got[1], CUT - 1);
	lb_l7_stats_get(p, &st);
	assert_int_equal(st.blocks_lost, 1);
	assert_int_equal(st.responses, CUT);
	/* the streams came back: every flow's next cut block is read */
	for (unsigned int i = 0; i < CUT; i++)
		cs[i] = feed_cut(p, idx[i], 0, cs[i], req1, (uint32_t)cut);
	for (unsigned int i = 0; i < CUT; i++)
		bs[i] = feed(p, idx[i], 1, bs[i], resp2, 100, 0);
	assert_int_equal(got[1], 2 * CUT - 1);
	lb_l7_pool_free(p);
}

/* Another database: streams reopened for it, maps reset to its defaults;
 * a header block cut across the change loses its fields; a map says
 * which fields a flow reads. */
static void
test_set_db_and_maps(void **state)
{
	static const char both[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n"
				   "X-SPL: 0.5\r\nX-Load: 0.75\r\n\r\n";
	struct sink s = { 0 };
	struct lb_l7_pool *p = lb_l7_pool_create(2, db, scratch, NULL, on_obs,
						 on_inflight, &s);
	struct lb_hdr_cfg cfg;
	struct lb_hdr_db *db2;
	struct lb_hdr_scratch *scr2;
	struct lb_hdr_map none;
	struct lb_l7_stats st;
	uint32_t a, cs = 0, bs = 0;

	(void)state;
	assert_non_null(p);
	memset(&cfg, 0, sizeof(cfg));
	assert_int_equal(lb_hdr_cfg_add(&cfg, "X-Load", LB_HDR_KIND_SPL), 0);
	db2 = lb_hdr_db_compile(&cfg);
	scr2 = lb_hdr_scratch_alloc(db2);
	assert_non_null(scr2);
	a = lb_l7_open(p, 0, 0, 1, 5);
	cs = feed(p, a, 0, cs, req2, 100, 0);
	bs = feed(p, a, 1, bs, both, 100, 0);
	assert_true(s.n == 1 && s.obs[0].spl == 0.5);
	/* a block cut open when the database changes */
	cs = feed(p, a, 0, cs, req2, 100, 0);
	assert_int_equal(lb_l7_segment(p, a, 1, bs, (const uint8_t *)both,
				       60, false, 0),
			 0);
	bs += 60;
	assert_int_equal(lb_l7_set_db(p, NULL, scr2), -EINVAL);
	assert_int_equal(lb_l7_set_db(p, db2, scr2), 0);
	bs = feed(p, a, 1, bs, both + 60, 100, 0);
	assert_int_equal(s.n, 2);
	assert_false(s.obs[1].has_spl);
	/* whole blocks from now on: X-Load, and X-SPL no more */
	cs = feed(p, a, 0, cs, req2, 100, 0);
	bs = feed(p, a, 1, bs, both, 100, 0);
	assert_true(s.n == 3 && s.obs[2].has_spl && s.obs[2].spl == 0.75);
	cs = feed(p, a, 0, cs, req2, 100, 0);
	bs = feed_cut(p, a, 1, bs, both, 40);
	assert_true(s.n == 4 && s.obs[3].has_spl && s.obs[3].spl == 0.75);
	/* a map that reads nothing */
	memset(&none, 0xff, sizeof(none));
	lb_l7_set_map(p, 5, &none);
	cs = feed(p, a, 0, cs, req2, 100, 0);
	bs = feed(p, a, 1, bs, both, 100, 0);
	assert_true(s.n == 5 && !s.obs[4].has_spl);
	lb_l7_stats_get(p, &st);
	assert_int_equal(st.blocks_lost, 1);
	assert_int_equal(st.db_switches, 1);
	lb_l7_pool_free(p);
	lb_hdr_scratch_free(scr2);
	lb_hdr_db_free(db2);
}

/* Requests on excluded path prefixes are marked in their observation, at
 * every split of the request line; other paths, other maps are not. */
static void
test_error_exclusion(void **state)
{
	static const char paths[][LB_HTTP_ERR_PATH_MAX + 1] = {"/health",
							       "/a/b"};
	static const struct {
		const char *req;
		bool excluded;
	} cases[] = {
		{"GET /health HTTP/1.1\r\nHost: x\r\n\r\n", true},
		{"GET /healthz HTTP/1.1\r\n\r\n", true},
		{"GET /health?full=1 HTTP/1.1\r\n\r\n", true},
		{"GET /he HTTP/1.1\r\n\r\n", false},
		{"GET /a/b/c HTTP/1.1\r\n\r\n", true},
		{"OPTIONS /a/c HTTP/1.1\r\n\r\n", false},
		{"GET / HTTP/1.1\r\nX-Path: /health\r\n\r\n", false},
		{"GET /x/health HTTP/1.1\r\n\r\n", false},
	};
	static const char resp[] = "HTTP/1.1 500 No\r\nContent-Length: 0\r\n"
				   "\r\n";
	struct sink s = { 0 };
	struct lb_l7_pool *p = lb_l7_pool_create(2, db, scratch, NULL, on_obs,
						 on_inflight, &s);
	uint32_t a, b, as = 0, ab = 0, bs = 0, bb = 0;

	(void)state;
	assert_non_null(p);
	lb_l7_set_excl(p, 3, paths, 2);
	a = lb_l7_open(p, 0, 0, 1, 3);
	b = lb_l7_open(p, 0, 0, 2, 4);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t len = (uint32_t)strlen(cases[i].req);

		for (uint32_t cut = 1; cut < len; cut++) {
			s.n = 0;
			as = feed_cut(p, a, 0, as, cases[i].req, cut);
			ab = feed(p, a, 1, ab, resp, 100, 0);
			bs = feed_cut(p, b, 0, bs, cases[i].req, cut);
			bb = feed(p, b, 1, bb, resp, 100, 0);
			assert_int_equal(s.n, 2);
			if (s.obs[0].err_excluded != cases[i].excluded)
				fail_msg("'%s' cut at %u: excluded %d", cases[i].req,
					 cut, s.obs[0].err_excluded);
			assert_false(s.obs[1].err_excluded);
		}
	}
	/* the exclusions go with the next request */
	lb_l7_set_excl(p, 3, paths, 0);
	s.n = 0;
	as = feed(p, a, 0, as, cases[0].req, 100, 0);
	ab = feed(p, a, 1, ab, resp, 100, 0);
	assert_true(s.n == 1 && !s.obs[0].err_excluded);
	lb_l7_pool_free(p);
}

/* ---- admission gate -------------------------------------------------- */

/* What the admission callback heard, and what it answers. */
static struct {
	unsigned int calls;
	struct lb_l7_req last;
	bool refuse;
} gate;

static bool
on_admit(void *owner, uint32_t tag, const struct lb_l7_req *rq)
{
	(void)owner;
	assert_int_equal(tag, 7);
	gate.calls++;
	gate.last = *rq;
	return gate.refuse;
}

static int
seg(struct lb_l7_pool *p, uint32_t idx, int dir, uint32_t seq, const char *s,
    uint32_t len)
{
	return lb_l7_segment(p, idx, dir, seq, (const uint8_t *)s, len, false,
			     0);
}

/* What the head callback got. */
static struct {
	unsigned int calls, cut;
	uint32_t tag, entry;
	char last[128];
} heads;

static void
on_head(void *owner, uint32_t tag, uint32_t entry, const uint8_t *h, size_t n)
{
	(void)owner;
	heads.calls++;
	heads.tag = tag;
	heads.entry = entry;
	if (h == NULL) {
		assert_int_equal(n, 0);
		heads.cut++;
		return;
	}
	assert_true(n < sizeof(heads.last));
	memcpy(heads.last, h, n);
	heads.last[n] = '\0';
}

/* Watched request heads reach the callback whole, start line to empty
 * line, one per request, even two in one segment; a head cut by a
 * segment comes as none; unwatched entries and responses give nothing. */
static void
test_heads(void **state)
{
	struct sink s = {0};
	struct lb_l7_pool *p =
		lb_l7_pool_create(2, db, scratch, NULL, on_obs, NULL, &s);
	uint32_t l1 = (uint32_t)strlen(req1), l2 = (uint32_t)strlen(req2);
	uint32_t lr = (uint32_t)strlen(resp2), idx, c = 100, b = 900;
	char both[256];

	(void)state;
	assert_non_null(p);
	memset(&heads, 0, sizeof(heads));
	lb_l7_set_head(p, on_head);
	idx = lb_l7_open(p, c, b, 9, 0);
	c = feed(p, idx, 0, c, req2, l2, 0);
	b = feed(p, idx, 1, b, resp2, lr, 0);
	assert_int_equal(heads.calls, 0);
	lb_l7_heads(p, idx, true);
	memcpy(both, req1, l1);
	memcpy(both + l1, req2, l2);
	both[l1 + l2] = '\0';
	c = feed(p, idx, 0, c, both, l1 + l2, 0);
	assert_int_equal(heads.calls, 2);
	assert_int_equal(heads.cut, 0);
	assert_string_equal(heads.last, req2);
	assert_int_equal(heads.tag, 9);
	assert_int_equal(heads.entry, idx);
	b = feed(p, idx, 1, b, resp2, lr, 0);
	b = feed(p, idx, 1, b, resp2, lr, 0);
	assert_int_equal(heads.calls, 2);
	c = feed(p, idx, 0, c, req1, 10, 0);
	assert_int_equal(heads.calls, 3);
	assert_int_equal(heads.cut, 1);
	lb_l7_heads(p, idx, false);
	c = feed(p, idx, 0, c, req2, l2, 0);
	assert_int_equal(heads.calls, 3);
	lb_l7_pool_free(p);
}

/* The gate's verdicts: pass in one segment, hold then release, a repeat
 * while holding, a pipelined request that cannot be refused, a refusal
 * and its sequence numbers, a decision forced before the head ends. */
static void
test_gate(void **state)
{
	struct sink s = { 0 };
	struct lb_l7_pool *p = lb_l7_pool_create(2, db, scratch, NULL, on_obs,
						 on_inflight, &s);
	uint32_t l1 = (uint32_t)strlen(req1), l2 = (uint32_t)strlen(req2);
	uint32_t lr = (uint32_t)strlen(resp2), idx, c = 1000, b = 5000;
	uint32_t cn, bn, rs;
	char both[256];

	(void)state;
	assert_non_null(p);
	assert_true(l1 + l2 <= sizeof(both));
	memset(&gate, 0, sizeof(gate));
	lb_l7_set_admit(p, on_admit);
	idx = lb_l7_open(p, c, b, 7, 0);
	/* Gate off: nothing asked. */
	assert_int_equal(seg(p, idx, 0, c, req2, l2), LB_L7_PASS);
	c += l2;
	assert_int_equal(seg(p, idx, 1, b, resp2, lr), 0);
	b += lr;
	assert_int_equal(gate.calls, 0);
	lb_l7_gate(p, idx, true);
	/* A whole head in one segment: decided, passed; a request after it
	 * in the same segment is heard but cannot be refused apart. */
	memcpy(both, req1, l1);
	memcpy(both + l1, req2, l2);
	assert_int_equal(seg(p, idx, 0, c, both, l1 + l2), LB_L7_PASS);
	assert_int_equal(gate.calls, 2);
	assert_false(gate.last.can_refuse);
	c += l1 + l2;
	assert_int_equal(seg(p, idx, 1, b, resp2, lr), 0);
	assert_int_equal(seg(p, idx, 1, b + lr, resp2, lr), 0);
	b += 2 * lr;
	/* Cut in two: held, a repeat dropped, then released. */
	gate.refuse = false;
	assert_int_equal(seg(p, idx, 0, c, req1, 10), LB_L7_HOLD);
	assert_int_equal(seg(p, idx, 0, c, req1, 10), LB_L7_REPEAT);
	assert_int_equal(gate.calls, 2);
	assert_int_equal(seg(p, idx, 0, c + 10, req1 + 10, l1 - 10),
			 LB_L7_RELEASE);
	assert_int_equal(gate.calls, 3);
	c += l1;
	assert_int_equal(seg(p, idx, 1, b, resp2, lr), 0);
	b += lr;
	/* Forced before the head ends: no header known; the rest passes. */
	assert_int_equal(seg(p, idx, 0, c, req1, 10), LB_L7_HOLD);
	assert_int_equal(lb_l7_decide(p, idx), LB_L7_RELEASE);
	assert_int_equal(gate.calls, 4);
	assert_true(gate.last.partial && !gate.last.has_prio);
	assert_int_equal(seg(p, idx, 0, c + 10, req1 + 10, l1 - 10),
			 LB_L7_PASS);
	assert_int_equal(gate.calls, 4);
	assert_int_equal(lb_l7_decide(p, idx), LB_L7_PASS);
	c += l1;
	assert_int_equal(seg(p, idx, 1, b, resp2, lr), 0);
	b += lr;
	/* Pipelined in a segment of its own behind an unanswered request,
	 * refused: held until that response is through, which then says
	 * to answer. */
	assert_int_equal(seg(p, idx, 0, c, req1, l1), LB_L7_PASS);
	gate.refuse = true;
	assert_int_equal(seg(p, idx, 0, c + l1, req2, l2), LB_L7_HOLD);
	assert_true(gate.last.can_refuse);
	assert_int_equal(seg(p, idx, 0, c + l1, req2, l2), LB_L7_REPEAT);
	assert_int_equal(lb_l7_decide(p, idx), LB_L7_REPEAT);
	assert_int_equal(seg(p, idx, 1, b, resp2, lr), LB_L7_REJECT);
	lb_l7_seq(p, idx, &cn, &bn, &rs);
	assert_true(cn == c + l1 + l2 && bn == b + lr && rs == c + l1);
	assert_int_equal(s.inflight, 0);
	lb_l7_close(p, idx);
	idx = lb_l7_open(p, c, b, 7, 0);
	lb_l7_gate(p, idx, true);
	/* Refused: it is not in flight, the flow stays refused. */
	assert_int_equal(seg(p, idx, 0, c, req1, l1), LB_L7_REJECT);
	assert_int_equal(s.inflight, 0);
	lb_l7_seq(p, idx, &cn, &bn, &rs);
	assert_int_equal(cn, c + l1);
	assert_int_equal(bn, b);
	assert_int_equal(rs, c);
	assert_int_equal(seg(p, idx, 0, c + l1, req2, l2), LB_L7_REJECT);
	lb_l7_close(p, idx);
	/* Refused at the forced decision. */
	idx = lb_l7_open(p, 1, 1, 7, 0);
	lb_l7_gate(p, idx, true);
	assert_int_equal(seg(p, idx, 0, 1, req1, 10), LB_L7_HOLD);
	assert_int_equal(lb_l7_decide(p, idx), LB_L7_REJECT);
	lb_l7_seq(p, idx, &cn, &bn, &rs);
	assert_true(cn == 11 && rs == 1);
	lb_l7_close(p, idx);
	lb_l7_pool_free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pipelined),
		cmocka_unit_test(test_retransmit_and_gap),
		cmocka_unit_test(test_pool_and_bad_input),
		cmocka_unit_test(test_close_delimited),
		cmocka_unit_test(test_orca_needs_cpu),
		cmocka_unit_test(test_stream_set),
		cmocka_unit_test(test_stream_share),
		cmocka_unit_test(test_set_db_and_maps),
		cmocka_unit_test(test_error_exclusion),
		cmocka_unit_test(test_gate),
		cmocka_unit_test(test_heads),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
