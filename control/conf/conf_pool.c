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

static int
sched_check(const struct lb_conf *c, const char *sched, struct lb_cmd_out *out)
{
	char names[256] = "";

	if (strlen(sched) <= LB_CONF_SCHED_LEN &&
	    (c->sched_known == NULL || c->sched_known(sched)))
		return 0;
	if (c->sched_names != NULL)
		c->sched_names(names, sizeof(names), ", ");
	return lb_cmd_error(out, -EINVAL,
			    "unknown scheduler '%s'%s%s", sched,
			    names[0] != '\0' ? "; expected one of " : "",
			    names);
}

int
lb_conf_pool_add(struct lb_conf *c, const struct lb_conf_svc_key *key,
		 const char *name, const char *sched, struct lb_cmd_out *out)
{
	char s[SVC_STRLEN];
	struct lb_conf_svc *sv;
	struct lb_conf_pool *p;
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
	if (sched == NULL)
		sched = LB_CONF_SCHED_DEFAULT;
	rc = sched_check(c, sched, out);
	if (rc != 0)
		return rc;
	if (sv->nb_pool == LB_CONF_MAX_POOLS)
		return lb_cmd_error(out, -ENOSPC,
				    "too many pools in %s (limit %u)", s,
				    LB_CONF_MAX_POOLS);
	p = &sv->pool[sv->nb_pool++];
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	snprintf(p->sched, sizeof(p->sched), "%s", sched);
	c->gen++;
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
	int rc, idx;

	sv = svc_of(c, key, name, out, &rc);
	if (sv == NULL)
		return rc;
	lb_conf_key_str(&sv->key, s);
	idx = lb_conf_pool_index(sv, name);
	if (idx == 0)
		return lb_cmd_error(out, -EINVAL, "pool %s of %s is the "
				    "service's own pool: it cannot be deleted",
				    name, s);
	if (idx < 0)
		return lb_cmd_error(out, -ENOENT, "no pool %s in %s", name, s);
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
	return 0;
}

int
lb_conf_rules_opts_check(const struct lb_conf_svc *sv,
			 const struct lb_conf_svc_opts *o,
			 struct lb_cmd_out *out)
{
	return lb_conf_svc_routes(sv) ? rules_need(sv, o, out) : 0;
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

int
lb_conf_pool_save(struct lb_cmd_out *out, const char *s,
		  const struct lb_conf_svc *sv)
{
	int rc = 0;

	for (unsigned int i = 0; i < sv->nb_pool && rc == 0; i++) {
		rc = lb_cmd_printf(out, "pool add %s %s", s, sv->pool[i].name);
		if (rc == 0 &&
		    strcmp(sv->pool[i].sched, LB_CONF_SCHED_DEFAULT) != 0)
			rc = lb_cmd_printf(out, " sched %s", sv->pool[i].sched);
		if (rc == 0)
			rc = lb_cmd_printf(out, "\n");
	}
	return rc;
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

/* Replays the pools, backends and rules of @p sv into @p t, where the
 * service was just added: lb_conf_validate()'s part for them. */
int
lb_conf_pool_replay(struct lb_conf *t, const struct lb_conf_svc *sv,
		    struct lb_cmd_out *out)
{
	int rc = 0;

	if (sv->nb_pool > LB_CONF_MAX_POOLS || sv->nb_rule > LB_CONF_MAX_RULES)
		return lb_cmd_error(out, -ENOSPC, "too many pools or rules");
	for (unsigned int i = 0; i < sv->nb_pool && rc == 0; i++)
		rc = lb_conf_pool_add(t, &sv->key, sv->pool[i].name,
				      sv->pool[i].sched, out);
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
