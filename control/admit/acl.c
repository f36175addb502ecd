/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The source ACL's policy: `acl` command arguments and the automatic deny
 * table (control/admit/acl.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl.h"

/* ---- command arguments ---- */

static int
parse_prefix(const char *s, struct lb_acl_req *r, struct lb_cmd_out *out)
{
	bool host = strchr(s, '/') == NULL && strcmp(s, "default") != 0;
	struct lb_conf_ip ip;
	int rc;

	if (host)
		rc = lb_cmd_parse_ip(s, &ip, out);
	else
		rc = lb_cmd_parse_ip_prefix(s, &ip, &r->len, out);
	if (rc != 0)
		return rc;
	r->af = ip.af;
	if (ip.af == LB_CONF_AF_INET6)
		memcpy(r->prefix6, ip.ip6, sizeof(r->prefix6));
	else
		r->prefix = ip.ip;
	/* A bare address is a host: /32 or /128. */
	if (host)
		r->len = ip.af == LB_CONF_AF_INET6 ? 128 : 32;
	return 0;
}

enum { OPT_EXPIRES, OPT_LB_ONLY, NB_OPTS };

static const struct lb_cmd_opt acl_opts[NB_OPTS] = {
	[OPT_EXPIRES] = {"expires", LB_CMD_OPT_DURATION, 1000000ull,
			 LB_ACL_TTL_MAX},
	[OPT_LB_ONLY] = {"lb-only", LB_CMD_OPT_FLAG, 0, 0},
};

/* PREFIX, then the first @p nopts of acl_opts. */
static int
parse_req(int argc, char **argv, unsigned int nopts, struct lb_acl_req *r,
	  struct lb_cmd_out *out)
{
	struct lb_cmd_optval v[NB_OPTS];
	int rc;

	memset(r, 0, sizeof(*r));
	memset(v, 0, sizeof(v));
	if (argc < 1)
		return lb_cmd_usage(out);
	rc = parse_prefix(argv[0], r, out);
	if (rc == 0)
		rc = lb_cmd_parse_opts(argc - 1, argv + 1, acl_opts, nopts, v,
				       out);
	if (rc != 0)
		return rc;
	r->ttl_ns = v[OPT_EXPIRES].set ? v[OPT_EXPIRES].u : 0;
	r->lb_only = v[OPT_LB_ONLY].set;
	return 0;
}

int
lb_acl_parse_deny(int argc, char **argv, struct lb_acl_req *r,
		  struct lb_cmd_out *out)
{
	return parse_req(argc, argv, 2, r, out);
}

int
lb_acl_parse_allow(int argc, char **argv, struct lb_acl_req *r,
		   struct lb_cmd_out *out)
{
	return parse_req(argc, argv, 1, r, out);
}

int
lb_acl_parse_del(int argc, char **argv, struct lb_acl_req *r,
		 struct lb_cmd_out *out)
{
	return parse_req(argc, argv, 0, r, out);
}

/* ---- automatic deny ---- */

#define PROBE 8u /* slots a prefix may sit in */

/* A source prefix of either family: both share the table and its bound,
 * an IPv4 prefix in the first four bytes (network order), the rest zero.
 * The family is part of the key: 10.0.0.0/8 is not 0a00::/8. */
struct src {
	uint8_t a[16];
	uint8_t len;
	uint8_t v6;
};

struct slot {
	struct src k;
	uint8_t used;
	uint32_t count;	 /* records in the window */
	uint64_t since;	 /* start of the window */
	uint64_t until;	 /* end of the deny; 0: a candidate */
};

struct lb_acl_auto {
	struct lb_acl_auto_conf c;
	struct lb_acl_auto_stats st;
	uint32_t mask;
	struct slot s[];
};

int
lb_acl_auto_parse(const char *spec, struct lb_acl_auto_conf *c, char *err,
		  size_t errlen)
{
	struct lb_acl_auto_conf n = {
		.ttl_ns = LB_ACL_AUTO_TTL_DEFAULT,
		.max = LB_ACL_AUTO_MAX_DEFAULT,
	};
	struct lb_cmd_out o;
	char buf[128], *tok, *save = NULL, *slash;
	uint64_t v;
	int rc = 0;

	if (spec == NULL || c == NULL)
		return -EINVAL;
	if (strcmp(spec, "off") == 0) {
		memset(c, 0, sizeof(*c));
		return 0;
	}
	if (strlen(spec) >= sizeof(buf)) {
		snprintf(err, errlen, "too long");
		return -EINVAL;
	}
	strcpy(buf, spec);
	lb_cmd_out_init(&o);
	tok = strtok_r(buf, ",", &save);
	slash = tok != NULL ? strchr(tok, '/') : NULL;
	if (slash == NULL) {
		rc = lb_cmd_error(&o, -EINVAL,
				  "expected REJECTS/WINDOW, e.g. 20/10s");
		goto out;
	}
	*slash = '\0';
	rc = lb_cmd_parse_u64(tok, "rejects", 1, UINT32_MAX, &v, &o);
	if (rc != 0)
		goto out;
	n.rejects = (uint32_t)v;
	rc = lb_cmd_parse_duration(slash + 1, "window", 1000000ull,
				   24ull * 3600 * 1000000000ull, &n.window_ns,
				   &o);
	while (rc == 0 && (tok = strtok_r(NULL, ",", &save)) != NULL) {
		if (strncmp(tok, "ttl=", 4) == 0) {
			rc = lb_cmd_parse_duration(tok + 4, "ttl", 1000000000ull,
						   LB_ACL_TTL_MAX, &n.ttl_ns,
						   &o);
		} else if (strncmp(tok, "max=", 4) == 0) {
			rc = lb_cmd_parse_u64(tok + 4, "max", 1,
					      LB_ACL_AUTO_MAX_MAX, &v, &o);
			n.max = (uint32_t)v;
		} else {
			rc = lb_cmd_error(&o, -EINVAL,
					  "unknown setting '%s'; expected "
					  "ttl=DURATION or max=N",
					  tok);
		}
	}
out:
	if (rc != 0)
		snprintf(err, errlen, "%s", lb_cmd_out_errmsg(&o));
	else
		*c = n;
	lb_cmd_out_free(&o);
	return rc;
}

struct lb_acl_auto *
lb_acl_auto_create(const struct lb_acl_auto_conf *c)
{
	struct lb_acl_auto *a;
	uint32_t n = 64;

	if (c == NULL || c->rejects == 0 || c->window_ns == 0 ||
	    c->ttl_ns == 0 || c->max == 0 || c->max > LB_ACL_AUTO_MAX_MAX) {
		errno = EINVAL;
		return NULL;
	}
	/* Room for every deny and three times as many candidates. */
	while (n < 4u * c->max)
		n *= 2;
	a = calloc(1, sizeof(*a) + n * sizeof(a->s[0]));
	if (a == NULL)
		return NULL;
	a->c = *c;
	a->mask = n - 1;
	return a;
}

void
lb_acl_auto_free(struct lb_acl_auto *a)
{
	free(a);
}

const struct lb_acl_auto_conf *
lb_acl_auto_conf(const struct lb_acl_auto *a)
{
	return &a->c;
}

const struct lb_acl_auto_stats *
lb_acl_auto_stats(const struct lb_acl_auto *a)
{
	return &a->st;
}

static struct src
src4(uint32_t prefix, uint8_t len)
{
	struct src k = {.len = len};

	k.a[0] = (uint8_t)(prefix >> 24);
	k.a[1] = (uint8_t)(prefix >> 16);
	k.a[2] = (uint8_t)(prefix >> 8);
	k.a[3] = (uint8_t)prefix;
	return k;
}

static struct src
src6(const uint8_t prefix[16], uint8_t len)
{
	struct src k = {.len = len, .v6 = 1};

	memcpy(k.a, prefix, sizeof(k.a));
	return k;
}

static bool
src_eq(const struct src *x, const struct src *y)
{
	return x->len == y->len && x->v6 == y->v6 &&
	       memcmp(x->a, y->a, sizeof(x->a)) == 0;
}

static uint32_t
home(const struct lb_acl_auto *a, const struct src *k)
{
	uint64_t x = (uint64_t)k->v6 << 8 | k->len;

	for (unsigned int i = 0; i < sizeof(k->a); i += 4) {
		uint32_t w = (uint32_t)k->a[i] << 24 |
			     (uint32_t)k->a[i + 1] << 16 |
			     (uint32_t)k->a[i + 2] << 8 | k->a[i + 3];

		x = (x ^ w) * 0x9e3779b97f4a7c15ull;
		x ^= x >> 29;
	}
	return (uint32_t)(x >> 32) & a->mask;
}

static struct slot *
find(struct lb_acl_auto *a, const struct src *k)
{
	uint32_t h = home(a, k);

	/* Slots are freed without tombstones, so look at the whole
	 * window rather than stop at the first free slot. */
	for (uint32_t i = 0; i < PROBE; i++) {
		struct slot *s = &a->s[(h + i) & a->mask];

		if (s->used && src_eq(&s->k, k))
			return s;
	}
	return NULL;
}

/* A slot for a new prefix: a free one, else the candidate whose window
 * started first. Live denies are never evicted. */
static struct slot *
place(struct lb_acl_auto *a, const struct src *k)
{
	uint32_t h = home(a, k);
	struct slot *victim = NULL;

	for (uint32_t i = 0; i < PROBE; i++) {
		struct slot *s = &a->s[(h + i) & a->mask];

		if (!s->used)
			return s;
		if (s->until == 0 && (victim == NULL || s->since < victim->since))
			victim = s;
	}
	return victim;
}

static void
end_deny(struct lb_acl_auto *a, struct slot *s)
{
	if (s->until != 0 && a->st.active > 0)
		a->st.active--;
	s->until = 0;
}

static enum lb_acl_auto_verdict
reject(struct lb_acl_auto *a, const struct src *k, uint64_t now_ns)
{
	struct slot *s = find(a, k);

	a->st.records++;
	if (s != NULL && s->until != 0) {
		if (s->until > now_ns)
			return LB_ACL_AUTO_DENIED;
		/* Ran out before the next collection: counts afresh. */
		end_deny(a, s);
		a->st.expired++;
		s->count = 0;
	}
	if (s == NULL) {
		s = place(a, k);
		if (s == NULL) {
			a->st.untracked++;
			return LB_ACL_AUTO_UNTRACKED;
		}
		memset(s, 0, sizeof(*s));
		s->used = 1;
		s->k = *k;
		s->since = now_ns;
	}
	if (now_ns - s->since >= a->c.window_ns) {
		s->since = now_ns;
		s->count = 0;
	}
	if (++s->count < a->c.rejects)
		return LB_ACL_AUTO_COUNTED;
	if (a->st.active >= a->c.max) {
		a->st.full++;
		return LB_ACL_AUTO_FULL;
	}
	s->until = now_ns + a->c.ttl_ns;
	a->st.active++;
	a->st.denies++;
	return LB_ACL_AUTO_DENY;
}

static int
adopt(struct lb_acl_auto *a, const struct src *k, uint64_t until_ns)
{
	struct slot *s = find(a, k);

	if (until_ns == 0)
		return -EINVAL;
	if (s == NULL || s->until == 0) {
		if (a->st.active >= a->c.max)
			return -ENOSPC;
		if (s == NULL)
			s = place(a, k);
		if (s == NULL)
			return -ENOSPC;
		memset(s, 0, sizeof(*s));
		s->used = 1;
		s->k = *k;
		a->st.active++;
	}
	s->until = until_ns;
	return 0;
}

static void
forget(struct lb_acl_auto *a, const struct src *k)
{
	struct slot *s = find(a, k);

	if (s == NULL)
		return;
	end_deny(a, s);
	s->used = 0;
}

enum lb_acl_auto_verdict
lb_acl_auto_reject(struct lb_acl_auto *a, uint32_t prefix, uint8_t len,
		   uint64_t now_ns)
{
	struct src k = src4(prefix, len);

	return reject(a, &k, now_ns);
}

enum lb_acl_auto_verdict
lb_acl_auto_reject6(struct lb_acl_auto *a, const uint8_t prefix[16],
		    uint8_t len, uint64_t now_ns)
{
	struct src k = src6(prefix, len);

	return reject(a, &k, now_ns);
}

int
lb_acl_auto_adopt(struct lb_acl_auto *a, uint32_t prefix, uint8_t len,
		  uint64_t until_ns)
{
	struct src k = src4(prefix, len);

	return adopt(a, &k, until_ns);
}

int
lb_acl_auto_adopt6(struct lb_acl_auto *a, const uint8_t prefix[16], uint8_t len,
		   uint64_t until_ns)
{
	struct src k = src6(prefix, len);

	return adopt(a, &k, until_ns);
}

void
lb_acl_auto_forget(struct lb_acl_auto *a, uint32_t prefix, uint8_t len)
{
	struct src k = src4(prefix, len);

	forget(a, &k);
}

void
lb_acl_auto_forget6(struct lb_acl_auto *a, const uint8_t prefix[16],
		    uint8_t len)
{
	struct src k = src6(prefix, len);

	forget(a, &k);
}

unsigned int
lb_acl_auto_expire(struct lb_acl_auto *a, uint64_t now_ns)
{
	unsigned int n = 0;

	for (uint32_t i = 0; i <= a->mask; i++) {
		struct slot *s = &a->s[i];

		if (!s->used)
			continue;
		if (s->until != 0 && s->until <= now_ns) {
			end_deny(a, s);
			s->used = 0;
			a->st.expired++;
			n++;
		} else if (s->until == 0 &&
			   now_ns - s->since >= a->c.window_ns) {
			s->used = 0; /* a candidate that went quiet */
		}
	}
	return n;
}
