/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Content routing rules: see dataplane/route/route_rules.h.
 *
 * Matching walks the rules in order, TLS and HTTP rules apart. Each
 * name condition is first compared by a hash: the query's name is hashed
 * once from its end, giving the hash of each of its suffixes, so that an
 * exact name or a `*.` suffix costs one comparison of 32 bits before
 * the bytes are compared. The choice of a linear walk over an automaton
 * (Hyperscan) is measured in docs/performance.md.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "route_rules.h"

#define FNV_SEED 2166136261u
#define FNV_PRIME 16777619u

/* Rules ready for matching, wherever they lie: a table of its own
 * (lb_route_table_create()) or a flat block (lb_route_flat_compile()). */
struct view {
	const struct lb_route_crule *tls, *http;
	unsigned int nb_tls, nb_http;
	const struct lb_route_action *act; /* per rule, in list order */
	unsigned int n;
	struct lb_route_action def;
	const char *str;
};

struct lb_route_table {
	struct view v;
	struct lb_route_crule *crule; /* TLS rules, then HTTP ones */
	struct lb_route_action *act;
	char *str;
};

static uint32_t
hash_step(uint32_t h, uint8_t c)
{
	return (h ^ c) * FNV_PRIME;
}

/* The hash of @p s, taken from its last byte to its first. */
static uint32_t
hash_back(const char *s, size_t n)
{
	uint32_t h = FNV_SEED;

	while (n > 0)
		h = hash_step(h, (uint8_t)s[--n]);
	return h;
}

/* ---- the text form ---- */

static int __attribute__((format(printf, 3, 4)))
fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* A name of a rule: exact, or `*.` and a suffix kept with its dot. */
static int
rule_name(const char *v, unsigned int flags, struct lb_route_rule *r)
{
	int rc;

	if (v[0] == '*' && v[1] == '.') {
		rc = lb_hostname_norm(r->name + 1, v + 2, strlen(v + 2),
				      flags & ~LB_HOSTNAME_NUMERIC);
		/* A name that ends with it has a label and a dot more. */
		if (rc < 0 || rc + 2 > LB_HOSTNAME_MAX)
			return -EINVAL;
		r->name[0] = '.';
		r->name_len = (uint16_t)(rc + 1);
		r->name_cmp = LB_ROUTE_SUFFIX;
		return 0;
	}
	rc = lb_hostname_norm(r->name, v, strlen(v), flags);
	if (rc < 0)
		return rc;
	r->name_len = (uint16_t)rc;
	r->name_cmp = LB_ROUTE_EXACT;
	return 0;
}

static int
rule_path(const char *v, struct lb_route_rule *r)
{
	size_t n = strlen(v);

	if (v[0] != '/' || n > LB_ROUTE_PATH_MAX)
		return -EINVAL;
	/* As a request target carries it: visible ASCII, no query. */
	for (size_t i = 0; i < n; i++)
		if (v[i] <= ' ' || v[i] >= 0x7f || v[i] == '?' || v[i] == '#')
			return -EINVAL;
	memcpy(r->path, v, n + 1);
	r->path_len = (uint16_t)n;
	return 0;
}

static int
pool_of(const char *v, const char *const *pools, unsigned int nb_pools)
{
	for (unsigned int i = 0; i < nb_pools && i < LB_ROUTE_POOLS_MAX; i++)
		if (strcmp(pools[i], v) == 0)
			return (int)i;
	return -1;
}

static int
parse_default(char **tok, int nt, const char *const *pools,
	      unsigned int nb_pools, struct lb_route_action *def, char *err,
	      size_t errlen)
{
	static const struct {
		const char *word;
		uint8_t what;
	} refusals[] = {
		{"rst", LB_ROUTE_RST},
		{"404", LB_ROUTE_REFUSE_404},
		{"421", LB_ROUTE_REFUSE_421},
	};
	int p;

	if (nt != 3)
		return fail(err, errlen, "default takes pool POOL or "
			    "refuse rst|404|421");
	if (strcmp(tok[1], "pool") == 0) {
		if ((p = pool_of(tok[2], pools, nb_pools)) < 0)
			return fail(err, errlen, "no pool %s", tok[2]);
		*def = (struct lb_route_action){LB_ROUTE_POOL, (uint16_t)p};
		return LB_ROUTE_LINE_DEFAULT;
	}
	if (strcmp(tok[1], "refuse") == 0)
		for (unsigned int i = 0; i < 3; i++)
			if (strcmp(tok[2], refusals[i].word) == 0) {
				*def = (struct lb_route_action){
					refusals[i].what, 0};
				return LB_ROUTE_LINE_DEFAULT;
			}
	return fail(err, errlen, "default takes pool POOL or "
		    "refuse rst|404|421");
}

#define MAX_TOKENS 16
#define MIXED "sni cannot go with host, path, path-prefix or method"
#define LINE_MAX_LEN 1024

static int
parse_rule(char **tok, int nt, const char *const *pools,
	   unsigned int nb_pools, struct lb_route_rule *r, char *err,
	   size_t errlen)
{
	int pool = -1, sni = 0, http = 0;

	memset(r, 0, sizeof(*r));
	if (nt % 2 != 0)
		return fail(err, errlen, "%s has no value", tok[nt - 1]);
	for (int i = 0; i < nt; i += 2) {
		const char *k = tok[i], *v = tok[i + 1];

		if (strcmp(k, "pool") == 0) {
			if (pool >= 0)
				return fail(err, errlen, "%s given twice", k);
			if ((pool = pool_of(v, pools, nb_pools)) < 0)
				return fail(err, errlen, "no pool %s", v);
		} else if (strcmp(k, "sni") == 0 || strcmp(k, "host") == 0) {
			unsigned int fl = k[0] == 's' ? 0 :
				LB_HOSTNAME_DOT | LB_HOSTNAME_NUMERIC;

			if (k[0] == 's' ? http : sni)
				return fail(err, errlen, MIXED);
			if (r->name_cmp != LB_ROUTE_ANY)
				return fail(err, errlen, "%s given twice", k);
			if (rule_name(v, fl, r) < 0)
				return fail(err, errlen, "not a host name "
					    "or *.suffix: %s", v);
			sni |= k[0] == 's';
			http |= k[0] == 'h';
		} else if (strcmp(k, "path") == 0 ||
			   strcmp(k, "path-prefix") == 0) {
			if (r->path_cmp != LB_ROUTE_ANY)
				return fail(err, errlen, "%s: one path only",
					    k);
			if (rule_path(v, r) < 0)
				return fail(err, errlen, "not a path (/..., "
					    "no query): %s", v);
			r->path_cmp = k[4] == '-' ? LB_ROUTE_PREFIX
						  : LB_ROUTE_EXACT;
			http = 1;
		} else if (strcmp(k, "method") == 0) {
			size_t n = strlen(v);

			if (r->method_len != 0)
				return fail(err, errlen, "%s given twice", k);
			for (size_t j = 0; j < n; j++)
				if (!lb_http_tchar[(uint8_t)v[j]])
					n = 0;
			if (n == 0 || n > LB_HTTP_METHOD_MAX)
				return fail(err, errlen, "not a method: %s",
					    v);
			memcpy(r->method, v, n + 1);
			r->method_len = (uint8_t)n;
			http = 1;
		} else {
			return fail(err, errlen, "unknown word %s", k);
		}
	}
	if (sni && http)
		return fail(err, errlen, MIXED);
	if (!sni && !http)
		return fail(err, errlen, "a rule needs sni, host, path, "
			    "path-prefix or method");
	if (pool < 0)
		return fail(err, errlen, "a rule needs pool POOL");
	r->proto = sni ? LB_ROUTE_TLS : LB_ROUTE_HTTP;
	r->pool = (uint16_t)pool;
	return LB_ROUTE_LINE_RULE;
}

int
lb_route_parse(const char *line, const char *const *pools,
	       unsigned int nb_pools, struct lb_route_rule *rule,
	       struct lb_route_action *def, char *err, size_t errlen)
{
	char buf[LINE_MAX_LEN], *tok[MAX_TOKENS], *save = NULL, *t;
	struct lb_route_rule r;
	int nt = 0, rc;

	if (strlen(line) >= sizeof(buf))
		return fail(err, errlen, "line too long");
	strcpy(buf, line);
	for (t = strtok_r(buf, " \t\r\n", &save); t != NULL;
	     t = strtok_r(NULL, " \t\r\n", &save)) {
		if (nt == MAX_TOKENS)
			return fail(err, errlen, "too many words");
		tok[nt++] = t;
	}
	if (nt == 0)
		return fail(err, errlen, "empty rule");
	if (strcmp(tok[0], "default") == 0)
		return parse_default(tok, nt, pools, nb_pools, def, err,
				     errlen);
	/* Into a copy: a refused line leaves @p rule as it was. */
	rc = parse_rule(tok, nt, pools, nb_pools, &r, err, errlen);
	if (rc == LB_ROUTE_LINE_RULE)
		*rule = r;
	return rc;
}

/* ---- the table ---- */

static int
rule_ok(const struct lb_route_rule *r)
{
	return r->proto <= LB_ROUTE_HTTP && r->name_cmp <= LB_ROUTE_SUFFIX &&
	       (r->path_cmp == LB_ROUTE_ANY || r->path_cmp == LB_ROUTE_EXACT ||
		r->path_cmp == LB_ROUTE_PREFIX) &&
	       r->name_len <= LB_HOSTNAME_MAX + 1 &&
	       r->path_len <= LB_ROUTE_PATH_MAX &&
	       r->method_len <= LB_HTTP_METHOD_MAX &&
	       (r->proto == LB_ROUTE_HTTP ||
		(r->name_cmp != LB_ROUTE_ANY && r->path_cmp == LB_ROUTE_ANY &&
		 r->method_len == 0));
}

/* The first (up to) 8 bytes of @p s, zeros after its end. */
static uint64_t
head8(const void *s, size_t n)
{
	uint64_t h = 0;

	memcpy(&h, s, n < 8 ? n : 8);
	return h;
}

static uint64_t
mask8(size_t n)
{
	return n >= 8 ? ~0ull : (1ull << (8 * n)) - 1;
}

static uint32_t
put_str(char *str, uint32_t *off, const char *s, size_t n)
{
	uint32_t at = *off;

	memcpy(str + at, s, n);
	*off += (uint32_t)n;
	return at;
}

/* Checks @p n rules and @p def; the bytes of their strings in *@p bytes. */
static int
rules_ok(const struct lb_route_rule *r, unsigned int n,
	 const struct lb_route_action *def, size_t *bytes)
{
	*bytes = 0;
	if (def == NULL || def->what > LB_ROUTE_REFUSE_421)
		return -EINVAL;
	for (unsigned int i = 0; i < n; i++) {
		if (!rule_ok(&r[i]))
			return -EINVAL;
		*bytes += r[i].name_len + r[i].path_len + r[i].method_len;
	}
	return 0;
}

/* Writes the compiled rules into room made for them: @p crule and
 * @p act for @p n each, @p str for their strings. */
static void
compile(const struct lb_route_rule *r, unsigned int n,
	struct lb_route_crule *crule, struct lb_route_action *act, char *str,
	unsigned int *nb_tls)
{
	unsigned int tls = 0, at_tls = 0, at_http;
	uint32_t off = 0;

	for (unsigned int i = 0; i < n; i++)
		tls += r[i].proto == LB_ROUTE_TLS;
	at_http = tls;
	for (unsigned int i = 0; i < n; i++) {
		struct lb_route_crule *c = r[i].proto == LB_ROUTE_TLS
						   ? &crule[at_tls++]
						   : &crule[at_http++];

		memset(c, 0, sizeof(*c));
		c->idx = (uint16_t)i;
		c->name_cmp = r[i].name_cmp;
		c->name_len = r[i].name_len;
		c->name_hash = hash_back(r[i].name, r[i].name_len);
		c->name_off = put_str(str, &off, r[i].name, r[i].name_len);
		c->path_cmp = r[i].path_cmp;
		c->path_len = r[i].path_len;
		c->path_mask = mask8(r[i].path_len);
		c->path_head = head8(r[i].path, r[i].path_len);
		c->method_head = head8(r[i].method, r[i].method_len);
		c->path_off = put_str(str, &off, r[i].path, r[i].path_len);
		c->method_len = r[i].method_len;
		c->method_off = put_str(str, &off, r[i].method,
					r[i].method_len);
		act[i] = (struct lb_route_action){LB_ROUTE_POOL, r[i].pool};
	}
	*nb_tls = tls;
}

static void
view_of(struct view *v, const struct lb_route_crule *crule,
	unsigned int nb_tls, const struct lb_route_action *act,
	unsigned int n, const struct lb_route_action *def, const char *str)
{
	v->tls = crule;
	v->nb_tls = nb_tls;
	v->http = crule + nb_tls;
	v->nb_http = n - nb_tls;
	v->act = act;
	v->n = n;
	v->def = *def;
	v->str = str;
}

struct lb_route_table *
lb_route_table_create(const struct lb_route_rule *r, unsigned int n,
		      const struct lb_route_action *def)
{
	struct lb_route_table *t;
	unsigned int nb_tls;
	size_t bytes;

	if (n > LB_ROUTE_RULES_MAX || rules_ok(r, n, def, &bytes) != 0) {
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	t->crule = calloc(n + 1, sizeof(*t->crule));
	t->act = calloc(n + 1, sizeof(*t->act));
	t->str = malloc(bytes + 1);
	if (t->crule == NULL || t->act == NULL || t->str == NULL) {
		lb_route_table_free(t);
		errno = ENOMEM;
		return NULL;
	}
	compile(r, n, t->crule, t->act, t->str, &nb_tls);
	view_of(&t->v, t->crule, nb_tls, t->act, n, def, t->str);
	return t;
}

void
lb_route_table_free(struct lb_route_table *t)
{
	if (t == NULL)
		return;
	free(t->crule);
	free(t->act);
	free(t->str);
	free(t);
}

int
lb_route_flat_compile(const struct lb_route_rule *r, unsigned int n,
		      const struct lb_route_action *def,
		      struct lb_route_flat *f)
{
	unsigned int nb_tls;
	size_t bytes;

	if (f == NULL || n > LB_ROUTE_FLAT_RULES ||
	    rules_ok(r, n, def, &bytes) != 0)
		return -EINVAL;
	if (bytes > LB_ROUTE_FLAT_STR)
		return -ENOSPC;
	memset(f, 0, sizeof(*f));
	compile(r, n, f->crule, f->act, f->str, &nb_tls);
	f->n = (uint16_t)n;
	f->nb_tls = (uint16_t)nb_tls;
	f->nb_http = (uint16_t)(n - nb_tls);
	f->def = *def;
	return 0;
}

/* The view of a flat block. Its counts are checked, so that a block
 * that was never compiled (zeroed, or torn) reads as no rules; the
 * offsets are lb_route_flat_compile()'s. */
static int
flat_view(struct view *v, const struct lb_route_flat *f)
{
	if (f->n > LB_ROUTE_FLAT_RULES || f->nb_tls > f->n ||
	    f->nb_tls + f->nb_http != f->n)
		return -EINVAL;
	view_of(v, f->crule, f->nb_tls, f->act, f->n, &f->def, f->str);
	return 0;
}

/* A query: the name with the hash of each of its suffixes. */
struct query {
	const char *name;
	size_t len;
	uint32_t hs[LB_HOSTNAME_MAX + 2]; /* hs[i]: of name[i..len) */
	const uint8_t *method, *path;
	size_t method_len, path_len;
	uint64_t method_head, path_head;
};

static void
query_name(struct query *q, const char *name, size_t len)
{
	q->name = name;
	q->len = len > LB_HOSTNAME_MAX ? 0 : len;
	q->hs[q->len] = FNV_SEED;
	for (size_t i = q->len; i > 0; i--)
		q->hs[i - 1] = hash_step(q->hs[i], (uint8_t)name[i - 1]);
}

static int
name_matches(const struct view *t, const struct lb_route_crule *c,
	     const struct query *q)
{
	size_t at;

	if (c->name_cmp == LB_ROUTE_ANY)
		return 1;
	/* A suffix keeps its dot: ".example.com" is never all of a name. */
	if (c->name_len > q->len ||
	    (c->name_cmp == LB_ROUTE_EXACT && c->name_len != q->len))
		return 0;
	at = q->len - c->name_len;
	return q->hs[at] == c->name_hash &&
	       memcmp(q->name + at, t->str + c->name_off, c->name_len) == 0;
}

static int
rest_matches(const struct view *t, const struct lb_route_crule *c,
	     const struct query *q)
{
	if (c->method_len != 0 &&
	    (c->method_len != q->method_len ||
	     c->method_head != q->method_head ||
	     (c->method_len > 8 &&
	      memcmp(q->method, t->str + c->method_off, c->method_len) != 0)))
		return 0;
	if (c->path_cmp == LB_ROUTE_ANY)
		return 1;
	if (c->path_len > q->path_len ||
	    (c->path_cmp == LB_ROUTE_EXACT && c->path_len != q->path_len) ||
	    (q->path_head & c->path_mask) != c->path_head)
		return 0;
	return c->path_len <= 8 ||
	       memcmp(q->path + 8, t->str + c->path_off + 8,
		      c->path_len - 8) == 0;
}

static int
match_sni(const struct view *t, const char *sni, size_t len)
{
	struct query q;

	query_name(&q, sni, len);
	for (unsigned int i = 0; i < t->nb_tls; i++)
		if (name_matches(t, &t->tls[i], &q))
			return t->tls[i].idx;
	return LB_ROUTE_NO_RULE;
}

static int
match_http(const struct view *t, const struct lb_http_req *r)
{
	struct query q;

	query_name(&q, r->host, r->host_len);
	q.method = r->method;
	q.method_len = r->method_len;
	q.path = r->path;
	q.path_len = r->path_len;
	q.method_head = head8(r->method, r->method_len);
	q.path_head = head8(r->path, r->path_len);
	for (unsigned int i = 0; i < t->nb_http; i++)
		if (name_matches(t, &t->http[i], &q) &&
		    rest_matches(t, &t->http[i], &q))
			return t->http[i].idx;
	return LB_ROUTE_NO_RULE;
}

static struct lb_route_action
action_of(const struct view *t, int rule)
{
	if (rule < 0 || (unsigned int)rule >= t->n)
		return t->def;
	return t->act[rule];
}

int
lb_route_match_sni(const struct lb_route_table *t, const char *sni,
		   size_t len)
{
	return match_sni(&t->v, sni, len);
}

int
lb_route_match_http(const struct lb_route_table *t,
		    const struct lb_http_req *r)
{
	return match_http(&t->v, r);
}

struct lb_route_action
lb_route_action_of(const struct lb_route_table *t, int rule)
{
	return action_of(&t->v, rule);
}

int
lb_route_flat_match_sni(const struct lb_route_flat *f, const char *sni,
			size_t len)
{
	struct view v;

	return flat_view(&v, f) == 0 ? match_sni(&v, sni, len)
				     : LB_ROUTE_NO_RULE;
}

int
lb_route_flat_match_http(const struct lb_route_flat *f,
			 const struct lb_http_req *r)
{
	struct view v;

	return flat_view(&v, f) == 0 ? match_http(&v, r) : LB_ROUTE_NO_RULE;
}

struct lb_route_action
lb_route_flat_action_of(const struct lb_route_flat *f, int rule)
{
	struct view v;

	if (flat_view(&v, f) != 0)
		return (struct lb_route_action){LB_ROUTE_RST, 0};
	return action_of(&v, rule);
}
