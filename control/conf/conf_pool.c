/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A service's named backend pools and its content routing rules
 * (docs/configuration.md, "Content routing"): the model's changes, their
 * checks, their lines in the saved configuration, and the commands.
 *
 * Rules are kept as their text and read again (lb_route_parse()) each
 * time they are checked or compiled: a rule names its pool, and the
 * index a name has moves when an earlier pool is deleted.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "conf_priv.h"
#include "lb/svc_opt.h"
#include "route_rules.h"

/* ---- pools ---- */

int
lb_conf_pool_index(const struct lb_conf_svc *sv, const char *name)
{
	if (strcmp(name, LB_CONF_POOL_DEFAULT) == 0)
		return 0;
	for (unsigned int i = 0; i < sv->nb_pool; i++)
		if (strcmp(sv->pool[i].name, name) == 0)
			return (int)i + 1;
	return -1;
}

void
lb_conf_pool_sum(const struct lb_conf_svc *sv, unsigned int idx,
		 uint32_t *nb, uint64_t *wsum)
{
	*nb = 0;
	*wsum = 0;
	for (unsigned int i = 0; i < sv->nb_be; i++)
		if (sv->be[i].pool == idx) {
			(*nb)++;
			*wsum += sv->be[i].weight;
		}
}

/* The pool names as lb_route_parse() takes them: index 0 the default. */
static unsigned int
pool_names(const struct lb_conf_svc *sv,
	   const char *names[LB_CONF_MAX_POOLS + 1])
{
	names[0] = LB_CONF_POOL_DEFAULT;
	for (unsigned int i = 0; i < sv->nb_pool; i++)
		names[i + 1] = sv->pool[i].name;
	return sv->nb_pool + 1;
}

/* The service of @p key, or NULL with the error in @p out and *@p rc
 * (@p arg: the command's argument, which must be there). */
static struct lb_conf_svc *
svc_of(struct lb_conf *c, const struct lb_conf_svc_key *key, const void *arg,
       struct lb_cmd_out *out, int *rc)
{
	if (c == NULL || arg == NULL) {
		*rc = lb_cmd_error(out, -EINVAL, "no configuration");
		return NULL;
	}
	return lb_conf_svc_or_error(c, key, out, rc);
}

static int
pool_name_check(const char *name, struct lb_cmd_out *out)
{
	size_t n = strlen(name);

	/* A word of the rules' text: no blank, nothing a shell quotes. */
	for (size_t i = 0; i < n; i++) {
		char ch = name[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' ||
		      ch == '.'))
			n = 0;
	}
	if (n == 0 || n > LB_CONF_POOL_NAME_LEN ||
	    !((name[0] >= 'a' && name[0] <= 'z') ||
	      (name[0] >= 'A' && name[0] <= 'Z')))
		return lb_cmd_error(out, -EINVAL,
				    "invalid pool name '%s': a letter, then "
				    "letters, digits, '-', '_' or '.', at most "
				    "%u bytes",
				    name, LB_CONF_POOL_NAME_LEN);
	return 0;
}

const struct lb_conf_check *
lb_conf_pool_check(const struct lb_conf_svc *sv, unsigned int idx)
{
	if (idx == 0 || idx > sv->nb_pool || !sv->pool[idx - 1].own_check)
		return &sv->opts.check;
	return &sv->pool[idx - 1].check;
}

/* The service's options with pool @p p's scheduler and check in them:
 * what the service option rows parse, check and write for a pool. */
static void
pool_as_opts(const struct lb_conf_svc *sv, const struct lb_conf_pool *p,
	     struct lb_conf_svc_opts *o)
{
	lb_svc_opt_copy(o, &sv->opts);
	snprintf(o->sched, sizeof(o->sched), "%s", p->sched);
	if (p->own_check)
		o->check = p->check;
}

/* Whether option @p kw is one a pool has of its own. */
static bool
pool_opt(const char *kw)
{
	const struct lb_svc_opt *d = lb_svc_opt_find(kw);

	return d != NULL && (strcmp(kw, "sched") == 0 ||
			     strcmp(d->owner, "health") == 0);
}

static int
pool_opt_unknown(const char *kw, struct lb_cmd_out *out)
{
	char names[256] = "sched";
	size_t at = strlen(names);

	for (unsigned int i = 0; i < lb_svc_opt_count(); i++) {
		const struct lb_svc_opt *d = lb_svc_opt_at(i);
		int n;

		if (strcmp(d->owner, "health") != 0)
			continue;
		n = snprintf(names + at, sizeof(names) - at, ", %s", d->name);
		if (n > 0 && (size_t)n < sizeof(names) - at)
			at += (size_t)n;
	}
	return lb_cmd_error(out, -EINVAL, "unknown pool option '%s': expected "
			    "%s", kw, names);
}

/* Sets pool @p p of @p sv from "KEYWORD VALUE" words: sched, and the
 * service's check options, read and checked by the service option rows
 * as a service's are. `check service` gives the pool back the service's
 * check. @p p changes only when all is well. */
static int
pool_opts_apply(const struct lb_conf *c, const struct lb_conf_svc *sv,
		struct lb_conf_pool *p, int argc, char *const *argv,
		struct lb_cmd_out *out)
{
	char *words[2 * LB_SVC_OPT_MAX];
	bool follow = false, check = false, sched = false;
	struct lb_conf_svc_opts o;
	int n = 0, rc;

	if (argc % 2 != 0)
		return lb_cmd_error(out, -EINVAL, "missing value for '%s'",
				    argv[argc - 1]);
	if (argc > (int)(sizeof(words) / sizeof(words[0])))
		return lb_cmd_error(out, -E2BIG, "too many options");
	for (int i = 0; i < argc; i += 2) {
		if (!pool_opt(argv[i]))
			return pool_opt_unknown(argv[i], out);
		if (strcmp(argv[i], "sched") == 0)
			sched = true;
		else
			check = true;
		if (strcmp(argv[i], "check") == 0 &&
		    strcmp(argv[i + 1], LB_CONF_POOL_CHECK_SERVICE) == 0) {
			follow = true;
			continue;
		}
		words[n++] = argv[i];
		words[n++] = argv[i + 1];
	}
	if (follow && n != (sched ? 2 : 0))
		return lb_cmd_error(out, -EINVAL, "check service takes no "
				    "other check option: the pool follows the "
				    "service's check as it is");
	pool_as_opts(sv, p, &o);
	rc = lb_svc_opt_parse(n, words, false, &o, out);
	if (rc == 0)
		rc = lb_conf_svc_opts_check(c, sv->key.proto, &o, out);
	if (rc != 0)
		return rc;
	snprintf(p->sched, sizeof(p->sched), "%s", o.sched);
	if (follow) {
		p->own_check = false;
		memset(&p->check, 0, sizeof(p->check));
	} else if (check) {
		p->own_check = true;
		p->check = o.check;
	}
	return 0;
}

bool
lb_conf_check_eq(const struct lb_conf_check *a, const struct lb_conf_check *b)
{
	return a->type == b->type && a->port == b->port &&
	       a->status_lo == b->status_lo && a->status_hi == b->status_hi &&
	       a->rise == b->rise && a->fall == b->fall &&
	       a->interval_ns == b->interval_ns &&
	       a->timeout_ns == b->timeout_ns &&
	       strncmp(a->path, b->path, sizeof(a->path)) == 0;
}

static bool
pool_eq(const struct lb_conf_pool *a, const struct lb_conf_pool *b)
{
	return strcmp(a->sched, b->sched) == 0 &&
	       a->own_check == b->own_check &&
	       (!a->own_check || lb_conf_check_eq(&a->check, &b->check));
}

int
lb_conf_pool_add_opts(struct lb_conf *c, const struct lb_conf_svc_key *key,
		      const char *name, int argc, char *const *argv,
		      struct lb_cmd_out *out)
{
	char s[SVC_STRLEN];
	struct lb_conf_svc *sv;
	struct lb_conf_pool p;
	int rc;

	sv = svc_of(c, key, name, out, &rc);
	if (sv == NULL)
		return rc;
	lb_conf_key_str(&sv->key, s);
	rc = pool_name_check(name, out);
	if (rc != 0)
		return rc;
	if (lb_conf_pool_index(sv, name) >= 0)
		return lb_cmd_error(out, -EEXIST, "pool %s already exists in %s"
				    "%s", name, s,
				    strcmp(name, LB_CONF_POOL_DEFAULT) == 0
					    ? " (the service's own pool)"
					    : "");
	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "%s", name);
	snprintf(p.sched, sizeof(p.sched), "%s", LB_CONF_SCHED_DEFAULT);
	rc = pool_opts_apply(c, sv, &p, argc, argv, out);
	if (rc != 0)
		return rc;
	if (sv->nb_pool == LB_CONF_MAX_POOLS)
		return lb_cmd_error(out, -ENOSPC,
				    "too many pools in %s (limit %u)", s,
				    LB_CONF_MAX_POOLS);
	sv->pool[sv->nb_pool++] = p;
	c->gen++;
	return 0;
}

int
lb_conf_pool_add(struct lb_conf *c, const struct lb_conf_svc_key *key,
		 const char *name, const char *sched, struct lb_cmd_out *out)
{
	char kw[] = "sched", val[LB_CONF_SCHED_LEN + 2];
	char *argv[2] = {kw, val};

	/* One byte over the limit, so that a longer name is refused. */
	snprintf(val, sizeof(val), "%s", sched != NULL ? sched : "");
	return lb_conf_pool_add_opts(c, key, name, sched != NULL ? 2 : 0,
				     argv, out);
}

/* The index (> 0) of the named pool @p name of service @p key, with the
 * service in *@p svp; or a negative errno, the service's own pool
 * refused with @p why. */
static int
named_pool(struct lb_conf *c, const struct lb_conf_svc_key *key,
	   const char *name, const char *why, struct lb_conf_svc **svp,
	   struct lb_cmd_out *out)
{
	char s[SVC_STRLEN];
	int rc, idx;

	*svp = svc_of(c, key, name, out, &rc);
	if (*svp == NULL)
		return rc;
	lb_conf_key_str(&(*svp)->key, s);
	idx = lb_conf_pool_index(*svp, name);
	if (idx == 0)
		return lb_cmd_error(out, -EINVAL, "pool %s of %s is the "
				    "service's own pool: %s", name, s, why);
	if (idx < 0)
		return lb_cmd_error(out, -ENOENT, "no pool %s in %s", name, s);
	return idx;
}

int
lb_conf_pool_set(struct lb_conf *c, const struct lb_conf_svc_key *key,
		 const char *name, int argc, char *const *argv,
		 struct lb_cmd_out *out)
{
	struct lb_conf_svc *sv;
	struct lb_conf_pool p;
	int rc, idx;

	idx = named_pool(c, key, name, "its scheduler and check are the "
			 "service's (`service set`)", &sv, out);
	if (idx < 0)
		return idx;
	if (argc == 0)
		return lb_cmd_error(out, -EINVAL, "expected an option: sched, "
				    "check, check-path, ...");
	p = sv->pool[idx - 1];
	rc = pool_opts_apply(c, sv, &p, argc, argv, out);
	if (rc != 0)
		return rc;
	if (!pool_eq(&p, &sv->pool[idx - 1])) {
		sv->pool[idx - 1] = p;
		c->gen++;
	}
	return 0;
}

/* Whether a rule, or the default action, of @p sv sends to pool @p idx:
 * its 1-based number, or LB_CONF_MAX_RULES + 1 for the default, or 0. */
static unsigned int
pool_used_by(const struct lb_conf_svc *sv, int idx)
{
	const char *names[LB_CONF_MAX_POOLS + 1];
	unsigned int np = pool_names(sv, names);
	struct lb_route_rule r;
	struct lb_route_action d;
	char line[LB_CONF_RULE_DEF_LEN + 16];

	for (unsigned int i = 0; i < sv->nb_rule; i++)
		if (lb_route_parse(sv->rule[i], names, np, &r, &d, NULL, 0) ==
			    LB_ROUTE_LINE_RULE &&
		    r.pool == idx)
			return i + 1;
	if (sv->rule_def[0] == '\0')
		return 0;
	snprintf(line, sizeof(line), "default %s", sv->rule_def);
	if (lb_route_parse(line, names, np, &r, &d, NULL, 0) ==
		    LB_ROUTE_LINE_DEFAULT &&
	    d.what == LB_ROUTE_POOL && d.pool == idx)
		return LB_CONF_MAX_RULES + 1;
	return 0;
}

int
lb_conf_pool_del(struct lb_conf *c, const struct lb_conf_svc_key *key,
		 const char *name, struct lb_cmd_out *out)
{
	char s[SVC_STRLEN];
	struct lb_conf_svc *sv;
	unsigned int nb = 0, used;
	int idx;

	idx = named_pool(c, key, name, "it cannot be deleted", &sv, out);
	if (idx < 0)
		return idx;
	lb_conf_key_str(&sv->key, s);
	used = pool_used_by(sv, idx);
	if (used == LB_CONF_MAX_RULES + 1)
		return lb_cmd_error(out, -EBUSY, "pool %s of %s is the rules' "
				    "default: change it with `rule default` "
				    "first", name, s);
	if (used != 0)
		return lb_cmd_error(out, -EBUSY, "pool %s of %s is used by "
				    "rule %u: delete that rule first", name, s,
				    used);
	for (unsigned int i = 0; i < sv->nb_be; i++)
		nb += sv->be[i].pool == idx;
	if (nb != 0)
		return lb_cmd_error(out, -EBUSY, "pool %s of %s has %u "
				    "backend%s: delete %s first", name, s, nb,
				    nb == 1 ? "" : "s",
				    nb == 1 ? "it" : "them");
	memmove(&sv->pool[idx - 1], &sv->pool[idx],
		(sv->nb_pool - (unsigned int)idx) * sizeof(sv->pool[0]));
	sv->nb_pool--;
	for (unsigned int i = 0; i < sv->nb_be; i++)
		if (sv->be[i].pool > idx)
			sv->be[i].pool--;
	c->gen++;
	return 0;
}

int
lb_conf_be_add_pool(struct lb_conf *c, const struct lb_conf_svc_key *key,
		    const struct lb_conf_ip *ip, uint16_t port,
		    uint32_t weight, const char *pool, struct lb_cmd_out *out)
{
	char s[SVC_STRLEN];
	struct lb_conf_svc *sv;
	struct lb_conf_be *be;
	int rc, idx = 0;

	if (c == NULL)
		return lb_cmd_error(out, -EINVAL, "no configuration");
	if (pool != NULL) {
		sv = svc_of(c, key, pool, out, &rc);
		if (sv == NULL)
			return rc;
		idx = lb_conf_pool_index(sv, pool);
		if (idx < 0)
			return lb_cmd_error(out, -ENOENT,
					    "no pool %s in %s (pool add "
					    "first)", pool,
					    lb_conf_key_str(&sv->key, s));
	}
	rc = lb_conf_be_add_ip(c, key, ip, port, weight, out);
	if (rc != 0 || idx == 0)
		return rc;
	sv = lb_conf_svc_get(c, key);
	be = lb_conf_be_find(sv, ip, port);
	be->pool = (uint8_t)idx;
	return 0;
}

/* ---- rules ---- */

/* Compiles the rules of @p sv, with @p rule (a new text, or NULL)
 * inserted at place @p at (0-based), and the default text @p def, into
 * @p f. */
static int
rules_build(const struct lb_conf_svc *sv, const char *rule, unsigned int at,
	    const char *def, struct lb_route_flat *f, struct lb_cmd_out *out)
{
	struct lb_route_rule r[LB_CONF_MAX_RULES + 1];
	const char *texts[LB_CONF_MAX_RULES + 1];
	const char *names[LB_CONF_MAX_POOLS + 1];
	unsigned int np = pool_names(sv, names), n = 0, nt = 0;
	struct lb_route_action d = {LB_ROUTE_POOL, 0}, unused;
	char err[128], line[LB_CONF_RULE_DEF_LEN + 16];
	int rc;

	for (unsigned int i = 0; i < sv->nb_rule; i++) {
		if (rule != NULL && i == at)
			texts[nt++] = rule;
		texts[nt++] = sv->rule[i];
	}
	if (rule != NULL && at >= sv->nb_rule)
		texts[nt++] = rule;
	if (nt > LB_CONF_MAX_RULES)
		return lb_cmd_error(out, -ENOSPC, "too many rules (limit %u)",
				    LB_CONF_MAX_RULES);
	for (unsigned int i = 0; i < nt; i++) {
		rc = lb_route_parse(texts[i], names, np, &r[n], &unused, err,
				    sizeof(err));
		if (rc == LB_ROUTE_LINE_DEFAULT)
			return lb_cmd_error(out, -EINVAL, "a default is "
					    "set with `rule default`");
		if (rc != LB_ROUTE_LINE_RULE)
			return lb_cmd_error(out, -EINVAL, "rule '%s': %s",
					    texts[i], err);
		n++;
	}
	if (def != NULL && def[0] != '\0') {
		snprintf(line, sizeof(line), "default %s", def);
		rc = lb_route_parse(line, names, np, &r[n], &d, err,
				    sizeof(err));
		if (rc != LB_ROUTE_LINE_DEFAULT)
			return lb_cmd_error(out, -EINVAL, "rule default: %s",
					    rc < 0 ? err : "not a default");
	}
	rc = lb_route_flat_compile(r, n, &d, f);
	if (rc == -ENOSPC)
		return lb_cmd_error(out, -ENOSPC,
				    "the rules' names, paths and methods "
				    "take over %u bytes", LB_ROUTE_FLAT_STR);
	if (rc != 0)
		return lb_cmd_error(out, rc, "rules refused (%s)",
				    strerror(-rc));
	return 0;
}

int
lb_conf_rules_compile(const struct lb_conf_svc *sv, struct lb_route_flat *f,
		      struct lb_cmd_out *out)
{
	return rules_build(sv, NULL, 0, sv->rule_def, f, out);
}

bool
lb_conf_svc_routes(const struct lb_conf_svc *sv)
{
	return sv->nb_rule != 0 || sv->rule_def[0] != '\0';
}

/*
 * Rules choose a pool from the first bytes of a connection, which the
 * worker sees before it opens the backend's connection only when it
 * answered the handshake itself: the SYN proxy, always on (`auto` is
 * off most of the time).
 */
static int
rules_need(const struct lb_conf_svc *sv, const struct lb_conf_svc_opts *o,
	   struct lb_cmd_out *out)
{
	char s[SVC_STRLEN];

	lb_conf_key_str(&sv->key, s);
	if (sv->key.proto != LB_CONF_PROTO_TCP)
		return lb_cmd_error(out, -EINVAL, "%s: rules route tcp "
				    "services only", s);
	if (o->synp.mode != LB_CONF_SYNP_ON)
		return lb_cmd_error(out, -EINVAL,
				    "%s: rules need `synproxy on` (the pool "
				    "is chosen from the first data, after "
				    "the worker's own handshake)", s);
	/* The IPv6 SYN proxy opens the backend's connection at the
	 * client's ACK, before any data. */
	if (sv->key.af == LB_CONF_AF_INET6)
		return lb_cmd_error(out, -EOPNOTSUPP,
				    "%s: rules route IPv4 services only", s);
	return 0;
}

/* Whether the pools' own checks stay valid with the service's new
 * options @p o (`proxy-protocol` refuses an http check). */
static int
pool_checks_need(const struct lb_conf_svc *sv, const struct lb_conf_svc_opts *o,
		 struct lb_cmd_out *out)
{
	struct lb_svc_opt_ctx x = {.proto = sv->key.proto};
	struct lb_conf_svc_opts t;
	struct lb_cmd_out e;
	int rc;

	for (unsigned int i = 0; i < sv->nb_pool; i++) {
		if (!sv->pool[i].own_check)
			continue;
		lb_svc_opt_copy(&t, o);
		t.check = sv->pool[i].check;
		lb_cmd_out_init(&e);
		rc = lb_svc_opt_check_all(&x, &t, &e);
		if (rc != 0)
			rc = lb_cmd_error(out, rc, "pool %s, which has a check "
					  "of its own: %s", sv->pool[i].name,
					  e.errmsg);
		lb_cmd_out_free(&e);
		if (rc != 0)
			return rc;
	}
	return 0;
}

int
lb_conf_rules_opts_check(const struct lb_conf_svc *sv,
			 const struct lb_conf_svc_opts *o,
			 struct lb_cmd_out *out)
{
	int rc = lb_conf_svc_routes(sv) ? rules_need(sv, o, out) : 0;

	return rc != 0 ? rc : pool_checks_need(sv, o, out);
}

/* The service of @p key for a rule @p text of at most @p max bytes. */
static struct lb_conf_svc *
rule_svc(struct lb_conf *c, const struct lb_conf_svc_key *key,
	 const char *text, size_t max, struct lb_cmd_out *out, int *rc)
{
	struct lb_conf_svc *sv = svc_of(c, key, text, out, rc);

	if (sv == NULL)
		return NULL;
	*rc = rules_need(sv, &sv->opts, out);
	if (*rc == 0 && strlen(text) > max)
		*rc = lb_cmd_error(out, -EINVAL, "rule too long (at most %zu "
				   "bytes)", max);
	return *rc == 0 ? sv : NULL;
}

int
lb_conf_rule_add(struct lb_conf *c, const struct lb_conf_svc_key *key,
		 unsigned int at, const char *text, struct lb_cmd_out *out)
{
	struct lb_route_flat f;
	struct lb_conf_svc *sv;
	unsigned int i;
	int rc;

	sv = rule_svc(c, key, text, LB_CONF_RULE_LEN, out, &rc);
	if (sv == NULL)
		return rc;
	/* at: 1-based place, 0 the end. */
	if (at > sv->nb_rule + 1)
		return lb_cmd_error(out, -ERANGE, "at %u out of range 1..%u",
				    at, sv->nb_rule + 1);
	i = at == 0 ? sv->nb_rule : at - 1;
	rc = rules_build(sv, text, i, sv->rule_def, &f, out);
	if (rc != 0)
		return rc;
	memmove(sv->rule[i + 1], sv->rule[i],
		(sv->nb_rule - i) * sizeof(sv->rule[0]));
	snprintf(sv->rule[i], sizeof(sv->rule[i]), "%s", text);
	sv->nb_rule++;
	c->gen++;
	return 0;
}

int
lb_conf_rule_del(struct lb_conf *c, const struct lb_conf_svc_key *key,
		 unsigned int n, struct lb_cmd_out *out)
{
	char s[SVC_STRLEN];
	struct lb_conf_svc *sv;
	int rc;

	sv = svc_of(c, key, c, out, &rc);
	if (sv == NULL)
		return rc;
	if (n < 1 || n > sv->nb_rule)
		return lb_cmd_error(out, -ENOENT, "no rule %u in %s (%u "
				    "rule%s)", n, lb_conf_key_str(&sv->key, s),
				    sv->nb_rule, sv->nb_rule == 1 ? "" : "s");
	memmove(sv->rule[n - 1], sv->rule[n],
		(sv->nb_rule - n) * sizeof(sv->rule[0]));
	sv->nb_rule--;
	c->gen++;
	return 0;
}

int
lb_conf_rule_default(struct lb_conf *c, const struct lb_conf_svc_key *key,
		     const char *text, struct lb_cmd_out *out)
{
	struct lb_route_flat f;
	struct lb_conf_svc *sv;
	int rc;

	sv = rule_svc(c, key, text, LB_CONF_RULE_DEF_LEN, out, &rc);
	if (sv == NULL)
		return rc;
	rc = rules_build(sv, NULL, 0, text, &f, out);
	if (rc != 0)
		return rc;
	/* "pool default" is what no default says: kept empty, so that a
	 * service back to its one pool saves as before. */
	if (strcmp(text, "pool " LB_CONF_POOL_DEFAULT) == 0)
		text = "";
	if (strcmp(sv->rule_def, text) != 0) {
		snprintf(sv->rule_def, sizeof(sv->rule_def), "%s", text);
		c->gen++;
	}
	return 0;
}

/* ---- saved form ---- */

/* " check ..." of a pool's own check: `check` always (`check none` is
 * not the service's check), the others where they differ from the
 * service's, from which `pool add` starts (the service's line comes
 * first). */
static int
check_save(struct lb_cmd_out *out, const struct lb_conf_svc *sv,
	   const struct lb_conf_pool *p)
{
	char v[LB_SVC_OPT_STRLEN], dv[LB_SVC_OPT_STRLEN];
	const struct lb_conf_svc_opts *def = &sv->opts;
	struct lb_conf_svc_opts o;
	int rc = 0;

	pool_as_opts(sv, p, &o);
	for (unsigned int i = 0; i < lb_svc_opt_count() && rc == 0; i++) {
		const struct lb_svc_opt *d = lb_svc_opt_at(i);

		if (strcmp(d->owner, "health") != 0 ||
		    lb_svc_opt_fmt(d, &o, v, sizeof(v)) != 0 ||
		    lb_svc_opt_fmt(d, def, dv, sizeof(dv)) != 0)
			continue;
		if (strcmp(d->name, "check") == 0 || strcmp(v, dv) != 0)
			rc = lb_cmd_printf(out, " %s %s", d->name, v);
	}
	return rc;
}

int
lb_conf_pool_save(struct lb_cmd_out *out, const char *s,
		  const struct lb_conf_svc *sv)
{
	int rc = 0;

	for (unsigned int i = 0; i < sv->nb_pool && rc == 0; i++) {
		const struct lb_conf_pool *p = &sv->pool[i];

		rc = lb_cmd_printf(out, "pool add %s %s", s, p->name);
		if (rc == 0 && strcmp(p->sched, LB_CONF_SCHED_DEFAULT) != 0)
			rc = lb_cmd_printf(out, " sched %s", p->sched);
		if (rc == 0 && p->own_check)
			rc = check_save(out, sv, p);
		if (rc == 0)
			rc = lb_cmd_printf(out, "\n");
	}
	return rc;
}

int
lb_conf_pool_check_str(const struct lb_conf_svc *sv, unsigned int idx,
		       char *buf, size_t len)
{
	const struct lb_conf_check *k = lb_conf_pool_check(sv, idx);
	static const char *const types[] = {
		[LB_CONF_CHECK_NONE] = "none",
		[LB_CONF_CHECK_TCP] = "tcp",
		[LB_CONF_CHECK_HTTP] = "http",
	};
	int n;

	if (idx != 0 && idx <= sv->nb_pool && !sv->pool[idx - 1].own_check)
		n = snprintf(buf, len, "%s", LB_CONF_POOL_CHECK_SERVICE);
	else if (k->type == LB_CONF_CHECK_HTTP)
		n = snprintf(buf, len, "http %.*s", (int)sizeof(k->path),
			     k->path);
	else
		n = snprintf(buf, len, "%s",
			     k->type < sizeof(types) / sizeof(types[0])
				     ? types[k->type]
				     : "?");
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

int
lb_conf_rule_save(struct lb_cmd_out *out, const char *s,
		  const struct lb_conf_svc *sv)
{
	int rc = 0;

	for (unsigned int i = 0; i < sv->nb_rule && rc == 0; i++)
		rc = lb_cmd_printf(out, "rule add %s %s\n", s, sv->rule[i]);
	if (rc == 0 && sv->rule_def[0] != '\0')
		rc = lb_cmd_printf(out, "rule default %s %s\n", s,
				   sv->rule_def);
	return rc;
}

/* Gives pool @p i of @p t's service the check of pool @p i of @p sv,
 * checked as `pool set` checks it. */
static int
pool_check_replay(struct lb_conf *t, const struct lb_conf_svc *sv,
		  unsigned int i, struct lb_cmd_out *out)
{
	struct lb_conf_svc *ts = lb_conf_svc_get(t, &sv->key);
	struct lb_conf_pool *p = &ts->pool[i];
	struct lb_conf_svc_opts o;
	int rc;

	if (memchr(sv->pool[i].check.path, '\0',
		   sizeof(sv->pool[i].check.path)) == NULL)
		return lb_cmd_error(out, -EINVAL, "check-path too long");
	p->own_check = true;
	p->check = sv->pool[i].check;
	pool_as_opts(ts, p, &o);
	rc = lb_conf_svc_opts_check(t, sv->key.proto, &o, out);
	if (rc == 0)
		t->gen++;
	return rc;
}

/* Replays the pools, backends and rules of @p sv into @p t, where the
 * service was just added: lb_conf_validate()'s part for them. */
int
lb_conf_pool_replay(struct lb_conf *t, const struct lb_conf_svc *sv,
		    struct lb_cmd_out *out)
{
	int rc = 0;

	if (sv->nb_pool > LB_CONF_MAX_POOLS || sv->nb_rule > LB_CONF_MAX_RULES)
		return lb_cmd_error(out, -ENOSPC, "too many pools or rules");
	for (unsigned int i = 0; i < sv->nb_pool && rc == 0; i++) {
		rc = lb_conf_pool_add(t, &sv->key, sv->pool[i].name,
				      sv->pool[i].sched, out);
		if (rc == 0 && sv->pool[i].own_check)
			rc = pool_check_replay(t, sv, i, out);
	}
	for (unsigned int j = 0; j < sv->nb_be && rc == 0; j++) {
		const struct lb_conf_be *be = &sv->be[j];
		struct lb_conf_ip a = LB_CONF_IP_OF(be);

		if (be->pool > sv->nb_pool)
			return lb_cmd_error(out, -EINVAL, "backend in no pool");
		rc = lb_conf_be_add_pool(t, &sv->key, &a, be->port,
					 be->weight,
					 be->pool == 0
						 ? NULL
						 : sv->pool[be->pool - 1].name,
					 out);
		if (rc == 0 && be->draining)
			rc = lb_conf_be_drain_ip(t, &sv->key, &a, be->port,
						 true, out);
	}
	for (unsigned int i = 0; i < sv->nb_rule && rc == 0; i++) {
		if (memchr(sv->rule[i], '\0', sizeof(sv->rule[i])) == NULL)
			return lb_cmd_error(out, -EINVAL, "rule too long");
		rc = lb_conf_rule_add(t, &sv->key, 0, sv->rule[i], out);
	}
	if (rc == 0 && sv->rule_def[0] != '\0') {
		if (memchr(sv->rule_def, '\0', sizeof(sv->rule_def)) == NULL)
			return lb_cmd_error(out, -EINVAL, "default too long");
		rc = lb_conf_rule_default(t, &sv->key, sv->rule_def, out);
	}
	return rc;
}
