/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Content routing: which rule a request head matches, among 10, 100 and
 * 1000 rules (and which a ClientHello's name matches, among as many SNI
 * rules, half exact names, half `*.` suffixes), by the linear matcher of route_rules (the rules in order,
 * each name compared first by a hash) against a Hyperscan database of
 * the same rules (one anchored pattern per rule over "METHOD HOST PATH",
 * the lowest rule reported wins, as the order says). The rules mix
 * exact hosts with a path prefix, `*.` suffixes, exact paths with a
 * method and prefixes alone, as a service's list might. 4096 queries in
 * turn, each the head of a request that some rule anywhere in the list
 * matches, one in eight none (the whole list walked); before timing, the
 * two must give the same rule for each.
 *
 * Then the readers: lb_http_head() on a 180-byte request head and
 * lb_tls_sni() on a 517-byte ClientHello of curl, each against one pass
 * of memmem() over the same bytes for the end of the head, the least any
 * reader of them does.
 */
#include <hs/hs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "http_head.h"
#include "lb/rng.h"
#include "route_rules.h"
#include "tls_sni.h"

#define NB_Q 4096u /* a power of two */
#define SUBJECT_MAX (LB_HTTP_METHOD_MAX + LB_HOSTNAME_MAX + 64)

static const char *const pools[] = {"web", "api", "static"};

struct set {
	int tls; /* SNI rules and names, else HTTP */
	struct lb_route_rule *rule;
	unsigned int n;
	struct lb_route_table *t;
	/* The published table's form, for lists that fit it; else NULL. */
	struct lb_route_flat *flat;
	hs_database_t *db;
	hs_scratch_t *scr;
	struct lb_http_req *q;	/* NB_Q queries */
	char (*subj)[SUBJECT_MAX]; /* the same as "METHOD HOST PATH" */
	uint16_t *subj_len;
};

/* Rule @p i of a list: four kinds in turn (SNI: the first two). */
static void
rule_line(char *buf, size_t cap, unsigned int i, int tls)
{
	if (tls) {
		snprintf(buf, cap, i % 2 ? "sni *.tenant%u.example.net pool web"
					 : "sni svc%u.example.com pool api",
			 i);
		return;
	}
	switch (i % 4) {
	case 0:
		snprintf(buf, cap, "host svc%u.example.com path-prefix /v%u/ "
			 "pool api", i, i);
		break;
	case 1:
		snprintf(buf, cap, "host *.tenant%u.example.net pool web", i);
		break;
	case 2:
		snprintf(buf, cap, "method POST path /form%u pool web", i);
		break;
	default:
		snprintf(buf, cap, "path-prefix /static%u/ pool static", i);
		break;
	}
}

/* A request that rule @p i matches (or none, for i past the list). */
static void
query_for(struct lb_http_req *q, char *path, unsigned int i, int tls)
{
	const char *m = "GET";

	switch (tls ? i % 2 : i % 4) {
	case 0:
		snprintf(q->host, sizeof(q->host), "svc%u.example.com", i);
		snprintf(path, 64, "/v%u/items/42", i);
		break;
	case 1:
		snprintf(q->host, sizeof(q->host), "eu.tenant%u.example.net",
			 i);
		snprintf(path, 64, "/index.html");
		break;
	case 2:
		m = "POST";
		snprintf(q->host, sizeof(q->host), "www.example.org");
		snprintf(path, 64, "/form%u", i);
		break;
	default:
		snprintf(q->host, sizeof(q->host), "cdn.example.org");
		snprintf(path, 64, "/static%u/app.js", i);
		break;
	}
	q->host_len = (uint16_t)strlen(q->host);
	q->method = (const uint8_t *)m;
	q->method_len = (uint16_t)strlen(m);
	q->path = (const uint8_t *)path;
	q->path_len = (uint16_t)strlen(path);
}

/* Hyperscan's pattern of a rule: its conditions over "M H P". */
static void
escape(char *out, size_t *o, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		*o += (size_t)sprintf(out + *o, "\\x%02x", (uint8_t)s[i]);
}

static void
pattern(char *out, const struct lb_route_rule *r)
{
	size_t o = 0;

	out[o++] = '^';
	if (r->proto == LB_ROUTE_TLS) {
		/* A suffix unanchored at the start: the cheaper form. */
		if (r->name_cmp == LB_ROUTE_SUFFIX)
			o = 0;
		escape(out, &o, r->name, r->name_len);
		out[o++] = '$';
		out[o] = '\0';
		return;
	}
	if (r->method_len)
		escape(out, &o, r->method, r->method_len);
	else
		o += (size_t)sprintf(out + o, "[^ ]+");
	out[o++] = ' ';
	if (r->name_cmp != LB_ROUTE_EXACT)
		o += (size_t)sprintf(out + o, "[^ ]*");
	if (r->name_cmp != LB_ROUTE_ANY)
		escape(out, &o, r->name, r->name_len);
	out[o++] = ' ';
	if (r->path_cmp != LB_ROUTE_ANY)
		escape(out, &o, r->path, r->path_len);
	if (r->path_cmp == LB_ROUTE_EXACT)
		out[o++] = '$';
	out[o] = '\0';
}

static int
on_match(unsigned int id, unsigned long long from, unsigned long long to,
	 unsigned int flags, void *ctx)
{
	unsigned int *best = ctx;

	(void)from;
	(void)to;
	(void)flags;
	if (id < *best)
		*best = id;
	return 0;
}

static int
hs_rule(const struct set *s, unsigned int j)
{
	unsigned int best = ~0u;

	hs_scan(s->db, s->subj[j], s->subj_len[j], 0, s->scr, on_match, &best);
	return best == ~0u ? LB_ROUTE_NO_RULE : (int)best;
}

static int
linear_rule(const struct set *s, unsigned int j)
{
	if (s->tls)
		return lb_route_match_sni(s->t, s->q[j].host, s->q[j].host_len);
	return lb_route_match_http(s->t, &s->q[j]);
}

static void
run_linear(void *p, uint64_t iters)
{
	const struct set *s = p;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++)
		acc += (uint64_t)linear_rule(s, (unsigned int)i & (NB_Q - 1));
	lb_bench_sink = acc;
}

static int
flat_rule(const struct set *s, unsigned int j)
{
	if (s->tls)
		return lb_route_flat_match_sni(s->flat, s->q[j].host,
					       s->q[j].host_len);
	return lb_route_flat_match_http(s->flat, &s->q[j]);
}

static void
run_flat(void *p, uint64_t iters)
{
	const struct set *s = p;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++)
		acc += (uint64_t)flat_rule(s, (unsigned int)i & (NB_Q - 1));
	lb_bench_sink = acc;
}

static void
run_hs(void *p, uint64_t iters)
{
	const struct set *s = p;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++)
		acc += (uint64_t)hs_rule(s, (unsigned int)i & (NB_Q - 1));
	lb_bench_sink = acc;
}

static int
set_make(struct set *s, unsigned int n, int tls, struct lb_rng *rng)
{
	struct lb_route_action def = {LB_ROUTE_REFUSE_404, 0};
	const char **pats = calloc(n, sizeof(*pats));
	unsigned int *ids = calloc(n, sizeof(*ids));
	static char paths[NB_Q][64];
	hs_compile_error_t *cerr = NULL;
	char line[256], err[128];
	int rc = -1;

	s->n = n;
	s->tls = tls;
	s->rule = calloc(n, sizeof(*s->rule));
	s->q = calloc(NB_Q, sizeof(*s->q));
	s->subj = calloc(NB_Q, sizeof(*s->subj));
	s->subj_len = calloc(NB_Q, sizeof(*s->subj_len));
	if (pats == NULL || ids == NULL || s->rule == NULL || s->q == NULL ||
	    s->subj == NULL || s->subj_len == NULL)
		goto out;
	for (unsigned int i = 0; i < n; i++) {
		char *pat = malloc(4 * 512);

		rule_line(line, sizeof(line), i, tls);
		if (pat == NULL ||
		    lb_route_parse(line, pools, 3, &s->rule[i], &def, err,
				   sizeof(err)) != LB_ROUTE_LINE_RULE)
			goto out;
		pattern(pat, &s->rule[i]);
		pats[i] = pat;
		ids[i] = i;
	}
	s->t = lb_route_table_create(s->rule, n, &def);
	if (n <= LB_ROUTE_FLAT_RULES) {
		s->flat = malloc(sizeof(*s->flat));
		if (s->flat == NULL ||
		    lb_route_flat_compile(s->rule, n, &def, s->flat) != 0)
			goto out;
	}
	if (s->t == NULL ||
	    hs_compile_multi(pats, NULL, ids, n, HS_MODE_BLOCK, NULL, &s->db,
			     &cerr) != HS_SUCCESS ||
	    hs_alloc_scratch(s->db, &s->scr) != HS_SUCCESS)
		goto out;
	for (unsigned int j = 0; j < NB_Q; j++) {
		/* One in eight matches no rule (n * 2 is past the list). */
		unsigned int i = lb_rng_below(rng, 8) == 0
					 ? n * 2 + (unsigned int)lb_rng_below(rng, n)
					 : (unsigned int)lb_rng_below(rng, n);

		query_for(&s->q[j], paths[j], i, tls);
		if (tls)
			s->subj_len[j] = (uint16_t)snprintf(
				s->subj[j], SUBJECT_MAX, "%s", s->q[j].host);
		else
			s->subj_len[j] = (uint16_t)snprintf(
				s->subj[j], SUBJECT_MAX, "%.*s %s %s",
				(int)s->q[j].method_len, s->q[j].method,
				s->q[j].host, paths[j]);
		if (linear_rule(s, j) != hs_rule(s, j) ||
		    (s->flat != NULL && flat_rule(s, j) != linear_rule(s, j)))
			goto out;
	}
	rc = 0;
out:
	if (cerr != NULL)
		hs_free_compile_error(cerr);
	for (unsigned int i = 0; pats != NULL && i < n; i++)
		free((void *)pats[i]);
	free(pats);
	free(ids);
	return rc;
}

static void
set_free(struct set *s)
{
	lb_route_table_free(s->t);
	free(s->flat);
	hs_free_scratch(s->scr);
	hs_free_database(s->db);
	free(s->rule);
	free(s->q);
	free(s->subj);
	free(s->subj_len);
}

/* ---- the readers ---- */

static const char head[] =
	"GET /v1/users/42?fields=name,email HTTP/1.1\r\n"
	"Host: api.example.com\r\n"
	"User-Agent: curl/7.88.1\r\n"
	"Accept: application/json\r\n"
	"Authorization: Bearer 0123456789abcdef0123456789\r\n"
	"\r\n";

struct bytes {
	const uint8_t *p;
	size_t n;
};

static void
run_head(void *p, uint64_t iters)
{
	const struct bytes *b = p;
	struct lb_http_req q;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++)
		acc += (uint64_t)lb_http_head(b->p, b->n, LB_HTTP_HEAD_MAX, &q) +
		       q.path_len;
	lb_bench_sink = acc;
}

static void
run_sni(void *p, uint64_t iters)
{
	const struct bytes *b = p;
	struct lb_tls_hello h;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++)
		acc += (uint64_t)lb_tls_sni(b->p, b->n, &h) + h.sni_len;
	lb_bench_sink = acc;
}

static void
run_memmem(void *p, uint64_t iters)
{
	const struct bytes *b = p;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++) {
		const uint8_t *q = b->p;

		/* Hides that each call is the same, as memmem() is pure. */
		__asm__ volatile("" : "+r"(q));
		acc += (uintptr_t)memmem(q, b->n, "\r\n\r\n", 4);
	}
	lb_bench_sink = acc;
}

static size_t
read_hello(uint8_t *buf, size_t cap)
{
	const char *src = getenv("LB_SRC_DIR");
	char path[4096];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path),
		 "%s/tests/unit/dataplane/route/hellos/curl.bin",
		 src != NULL ? src : ".");
	f = fopen(path, "rb");
	if (f == NULL)
		return 0;
	n = fread(buf, 1, cap, f);
	fclose(f);
	return n;
}

void lb_bench_route(FILE *out, unsigned int rounds);

void
lb_bench_route(FILE *out, unsigned int rounds)
{
	static const unsigned int sizes[] = {10, 100, 1000};
	static uint8_t hello[LB_TLS_PREFIX_MAX];
	struct bytes hb = {(const uint8_t *)head, sizeof(head) - 1};
	struct bytes tb = {hello, 0};
	struct lb_tls_hello h;
	struct lb_xoshiro x;
	struct lb_rng rng;
	char name[2][64];

	lb_xoshiro_seed(&x, 18);
	rng = lb_rng_xoshiro(&x);
	/* The HTTP lists first, then the SNI ones. */
	for (unsigned int k = 0; k < 6; k++) {
		struct set s = {0};
		struct lb_bench_case lin = {name[0], run_linear, &s};
		struct lb_bench_case hs = {name[1], run_hs, &s};
		const char *what = k < 3 ? "route" : "sni route";

		if (set_make(&s, sizes[k % 3], k >= 3, &rng) != 0) {
			fprintf(out, "route: the matchers disagree or "
				     "failed to build (%u rules)\n",
				sizes[k % 3]);
			set_free(&s);
			return;
		}
		snprintf(name[0], sizeof(name[0]), "%s linear, %u rules",
			 what, sizes[k % 3]);
		snprintf(name[1], sizeof(name[1]), "%s Hyperscan, %u rules",
			 what, sizes[k % 3]);
		lb_bench_pair(out, &hs, &lin,
			      sizes[k % 3] >= 1000 ? 20000 : 100000, rounds);
		set_free(&s);
	}
	/* The flat block of the published table against the table, on as
	 * many rules as it holds. */
	for (int tls = 0; tls < 2; tls++) {
		struct set s = {0};
		struct lb_bench_case flat = {name[0], run_flat, &s};
		struct lb_bench_case lin = {name[1], run_linear, &s};
		const char *what = tls ? "sni route" : "route";

		if (set_make(&s, LB_ROUTE_FLAT_RULES, tls, &rng) != 0) {
			fprintf(out, "route: the flat block disagrees or "
				     "failed to build\n");
			set_free(&s);
			return;
		}
		snprintf(name[0], sizeof(name[0]), "%s flat, %u rules", what,
			 LB_ROUTE_FLAT_RULES);
		snprintf(name[1], sizeof(name[1]), "%s linear, %u rules", what,
			 LB_ROUTE_FLAT_RULES);
		lb_bench_pair(out, &flat, &lin, 100000, rounds);
		set_free(&s);
	}
	{
		const struct lb_bench_case a = {"http_head, 180-byte head",
						run_head, &hb};
		const struct lb_bench_case base = {"memmem CRLFCRLF, same bytes",
						   run_memmem, &hb};

		lb_bench_pair(out, &a, &base, 100000, rounds);
	}
	tb.n = read_hello(hello, sizeof(hello));
	if (tb.n == 0 || lb_tls_sni(hello, tb.n, &h) != LB_TLS_SNI_FOUND) {
		fprintf(out, "route: no ClientHello (run from the source "
			     "tree or set LB_SRC_DIR)\n");
		return;
	}
	{
		const struct lb_bench_case a = {"tls_sni, curl's 517-byte hello",
						run_sni, &tb};
		const struct lb_bench_case base = {"memmem CRLFCRLF, same bytes",
						   run_memmem, &tb};

		lb_bench_pair(out, &a, &base, 100000, rounds);
	}
}
