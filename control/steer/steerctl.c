/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-control's side of the XDP steering program: rules in step with the
 * published table, the source ACL and its commands, the automatic deny,
 * the program's counters (control/steer/steerctl.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include "lb/admit_conf.h"
#include "prom.h"
#include "lb/steer_sync.h"
#include "steerctl.h"

#define NO_MAPS_MSG                                                            \
	"no XDP steering maps: the dataplane's ports do not run the "         \
	"steering program (net_af_xdp), or could not pin its maps; see "      \
	"docs/xdp.md"

struct lb_steerctl {
	struct lb_steer *s; /* NULL: no maps */
	char pin_dir[256];
	uint32_t host[64];
	size_t nb_host;
	uint8_t host6[64][16];
	size_t nb_host6;
	struct lb_acl_auto *autod; /* NULL: off */
	json_t **data;
	/* automatic deny, beyond the table's own counters */
	uint64_t rej_ignored; /* records of keys that are not a source */
	uint64_t rej_manual;  /* an operator's entry decides already */
	uint64_t acl_errors;  /* map updates that failed */
	uint64_t sync_errors;
	uint64_t gc_removed;
};

struct lb_steerctl *
lb_steerctl_create(const struct lb_acl_auto_conf *autoc, json_t **data)
{
	struct lb_steerctl *sc = calloc(1, sizeof(*sc));

	if (sc == NULL)
		return NULL;
	sc->data = data;
	if (autoc != NULL && autoc->rejects != 0) {
		sc->autod = lb_acl_auto_create(autoc);
		if (sc->autod == NULL) {
			free(sc);
			return NULL;
		}
	}
	return sc;
}

void
lb_steerctl_free(struct lb_steerctl *sc)
{
	if (sc == NULL)
		return;
	lb_steerctl_detach(sc);
	lb_acl_auto_free(sc->autod);
	free(sc);
}

/* Automatic denies in the map count against the bound again. */
static int
adopt_auto(const struct lb_steer_acl *a, void *arg)
{
	struct lb_steerctl *sc = arg;

	if (a->origin == LB_STEER_ACL_AUTO && a->expires_ns != 0 &&
	    a->expires_ns > lb_steer_now_ns())
		lb_acl_auto_adopt(sc->autod, ntohl(a->prefix), a->prefixlen,
				  a->expires_ns);
	return 0;
}

static int
adopt_auto6(const struct lb_steer_acl6 *a, void *arg)
{
	struct lb_steerctl *sc = arg;

	if (a->origin == LB_STEER_ACL_AUTO && a->expires_ns != 0 &&
	    a->expires_ns > lb_steer_now_ns())
		lb_acl_auto_adopt6(sc->autod, a->prefix, a->prefixlen,
				   a->expires_ns);
	return 0;
}

int
lb_steerctl_attach_handle(struct lb_steerctl *sc, struct lb_steer *s,
			  const uint32_t *host, size_t nb_host)
{
	if (sc == NULL || s == NULL || nb_host > 64 ||
	    (host == NULL && nb_host > 0))
		return -EINVAL;
	lb_steerctl_detach(sc);
	sc->s = s;
	sc->nb_host = nb_host;
	if (nb_host > 0)
		memcpy(sc->host, host, nb_host * sizeof(*host));
	if (sc->autod != NULL) {
		lb_steer_acl_walk(s, adopt_auto, sc);
		/* -EOPNOTSUPP: maps pinned without IPv6, nothing to adopt */
		lb_steer_acl6_walk(s, adopt_auto6, sc);
	}
	return 0;
}

int
lb_steerctl_attach(struct lb_steerctl *sc, const char *pin_dir,
		   const uint32_t *host, size_t nb_host)
{
	struct lb_steer *s;
	int rc;

	if (sc == NULL)
		return -EINVAL;
	lb_steerctl_detach(sc);
	if (pin_dir == NULL || pin_dir[0] == '\0')
		return 0;
	rc = lb_steer_open_pinned(pin_dir, &s);
	if (rc != 0)
		return rc;
	rc = lb_steerctl_attach_handle(sc, s, host, nb_host);
	if (rc != 0) {
		lb_steer_close(s);
		return rc;
	}
	snprintf(sc->pin_dir, sizeof(sc->pin_dir), "%s", pin_dir);
	return 0;
}

void
lb_steerctl_detach(struct lb_steerctl *sc)
{
	if (sc == NULL || sc->s == NULL)
		return;
	lb_steer_close(sc->s);
	sc->s = NULL;
	sc->pin_dir[0] = '\0';
}

int
lb_steerctl_attached(const struct lb_steerctl *sc)
{
	return sc != NULL && sc->s != NULL;
}

int
lb_steerctl_set_host6(struct lb_steerctl *sc, const uint8_t (*host)[16],
		      size_t nb_host)
{
	if (sc == NULL || nb_host > 64 || (host == NULL && nb_host > 0))
		return -EINVAL;
	sc->nb_host6 = nb_host;
	if (nb_host > 0)
		memcpy(sc->host6, host, nb_host * sizeof(*host));
	return 0;
}

int
lb_steerctl_sync(struct lb_steerctl *sc, const struct lb_dpconf *c)
{
	int rc, rc6;

	if (sc == NULL || c == NULL)
		return -EINVAL;
	if (sc->s == NULL)
		return 0;
	rc = lb_steer_sync_dpconf(sc->s, c, sc->host, sc->nb_host, NULL);
	/* Maps pinned by a version without IPv6 have no steer_rules6:
	 * nothing to keep in step there. */
	rc6 = lb_steer_sync6_dpconf(sc->s, c, (const uint8_t(*)[16])sc->host6,
				    sc->nb_host6, NULL);
	if (rc6 == -EOPNOTSUPP)
		rc6 = 0;
	if (rc == 0)
		rc = rc6;
	if (rc != 0)
		sc->sync_errors++;
	return rc;
}

/* ---- automatic deny ---- */

/* The source prefix a reject record speaks of; 0 for a key that is not
 * a source (the service, a priority). */
static uint8_t
reject_len(const struct lb_fb *r, const struct lb_dpconf *c)
{
	switch (r->flags >> 8) {
	case LB_ADMIT_KEY_CLIENT:
	case LB_ADMIT_KEY_CLIENT_SVC:
		return 32;
	case LB_ADMIT_KEY_PREFIX:
		if (c == NULL || r->svc >= c->nb_svc ||
		    r->svc >= LB_CONF_MAX_SVCS)
			return 0;
		return c->svc[r->svc].opts.admit.prefix;
	default:
		return 0;
	}
}

/* Writes one entry of either ACL. */
static int
acl_write(struct lb_steerctl *sc, const struct lb_conf_ip *p, uint8_t len,
	  enum lb_steer_acl_action action, uint64_t expires,
	  enum lb_steer_acl_origin origin)
{
	if (p->af == LB_CONF_AF_INET6) {
		struct lb_steer_acl6 a = {
			.prefixlen = len,
			.action = action,
			.expires_ns = expires,
			.origin = origin,
		};

		memcpy(a.prefix, p->ip6, sizeof(a.prefix));
		return lb_steer_acl6_put(sc->s, &a);
	} else {
		struct lb_steer_acl a = {
			.prefix = htonl(p->ip),
			.prefixlen = len,
			.action = action,
			.expires_ns = expires,
			.origin = origin,
		};

		return lb_steer_acl_put(sc->s, &a);
	}
}

/* An operator decided about @p p/@p len: the automatic deny lets go. */
static void
auto_forget(struct lb_steerctl *sc, const struct lb_conf_ip *p, uint8_t len)
{
	if (sc->autod == NULL)
		return;
	if (p->af == LB_CONF_AF_INET6)
		lb_acl_auto_forget6(sc->autod, p->ip6, len);
	else
		lb_acl_auto_forget(sc->autod, p->ip, len);
}

/* The source of one reject record, either family: its prefix (host bits
 * zero) and, for IPv4, the client the ACL is matched with. */
struct rej_src {
	struct lb_conf_ip pfx;
	uint8_t len;	 /* 0: no source */
	uint32_t client; /* IPv4, host order */
};

static void
rej_src_of(const struct lb_fb *r, const struct lb_dpconf *c, struct rej_src *k)
{
	memset(k, 0, sizeof(*k));
	if (r->flags & LB_FB_F_REJ6) {
		k->pfx.af = LB_CONF_AF_INET6;
		k->len = r->be <= 128 ? (uint8_t)r->be : 0;
		/* The dataplane masked it (lb_admit_key6()); masked again
		 * so that a record never names host bits. */
		lb_admit_mask6(r->key6, k->len, k->pfx.ip6);
		return;
	}
	k->pfx.af = LB_CONF_AF_INET;
	k->client = r->u32;
	k->len = reject_len(r, c);
	if (k->len > 32)
		k->len = 0;
	k->pfx.ip =
		k->len == 32 ? k->client : k->client & ~(UINT32_MAX >> k->len);
}

static enum lb_acl_auto_verdict
rej_count(struct lb_steerctl *sc, const struct rej_src *k, uint64_t now_ns)
{
	if (k->pfx.af == LB_CONF_AF_INET6)
		return lb_acl_auto_reject6(sc->autod, k->pfx.ip6, k->len,
					   now_ns);
	return lb_acl_auto_reject(sc->autod, k->pfx.ip, k->len, now_ns);
}

/* Whether an operator's entry covers the source: an allow is a promise,
 * a deny is there already. */
static bool
rej_manual(struct lb_steerctl *sc, const struct rej_src *k, uint64_t now_ns)
{
	if (k->pfx.af == LB_CONF_AF_INET6) {
		struct lb_steer_acl6 m;

		return lb_steer_acl6_match(sc->s, k->pfx.ip6, now_ns, &m) ==
			       0 &&
		       m.origin == LB_STEER_ACL_MANUAL;
	} else {
		struct lb_steer_acl m;

		return lb_steer_acl_match(sc->s, htonl(k->client), now_ns,
					  &m) == 0 &&
		       m.origin == LB_STEER_ACL_MANUAL;
	}
}

static void
auto_deny(struct lb_steerctl *sc, const struct rej_src *k, uint64_t now_ns)
{
	const struct lb_acl_auto_conf *ac = lb_acl_auto_conf(sc->autod);

	if (rej_manual(sc, k, now_ns)) {
		sc->rej_manual++;
		auto_forget(sc, &k->pfx, k->len);
		return;
	}
	if (acl_write(sc, &k->pfx, k->len, LB_STEER_ACL_DENY_LB,
		      now_ns + ac->ttl_ns, LB_STEER_ACL_AUTO) != 0) {
		sc->acl_errors++;
		auto_forget(sc, &k->pfx, k->len);
	}
}

void
lb_steerctl_feed(struct lb_steerctl *sc, const struct lb_fb *r,
		 unsigned int n, const struct lb_dpconf *c, uint64_t now_ns)
{
	if (sc == NULL || sc->autod == NULL || sc->s == NULL)
		return;
	for (unsigned int i = 0; i < n; i++) {
		struct rej_src k;

		if (r[i].kind != LB_FB_REJECT)
			continue;
		rej_src_of(&r[i], c, &k);
		if (k.len == 0) {
			sc->rej_ignored++;
			continue;
		}
		if (rej_count(sc, &k, now_ns) == LB_ACL_AUTO_DENY)
			auto_deny(sc, &k, now_ns);
	}
}

void
lb_steerctl_tick(struct lb_steerctl *sc, uint64_t now_ns)
{
	int rc;

	if (sc == NULL || sc->s == NULL)
		return;
	rc = lb_steer_acl_gc(sc->s, now_ns);
	if (rc > 0)
		sc->gc_removed += (uint64_t)rc;
	if (sc->autod != NULL)
		lb_acl_auto_expire(sc->autod, now_ns);
}

/* ---- commands ---- */

static void
give(struct lb_steerctl *sc, json_t *d)
{
	if (sc->data == NULL) {
		json_decref(d);
		return;
	}
	json_decref(*sc->data);
	*sc->data = d;
}

static int
need_maps(struct lb_steerctl *sc, struct lb_cmd_out *out)
{
	return sc->s != NULL ? 0 : lb_cmd_error(out, -ENODEV, NO_MAPS_MSG);
}

/* The request's prefix as lb_cmd_fmt_ip_prefix() writes it. */
static char *
req_fmt(const struct lb_acl_req *r, char *buf)
{
	struct lb_conf_ip ip = lb_conf_ip_of(r->af, r->prefix, r->prefix6);

	return lb_cmd_fmt_ip_prefix(&ip, r->len, buf);
}

static int
acl_put(struct lb_steerctl *sc, const struct lb_acl_req *r,
	enum lb_steer_acl_action action, struct lb_cmd_out *out)
{
	char p[LB_CMD_IP_ADDR_STRLEN];
	uint64_t expires = r->ttl_ns != 0 ? lb_steer_now_ns() + r->ttl_ns : 0;
	struct lb_conf_ip ip = lb_conf_ip_of(r->af, r->prefix, r->prefix6);
	int rc;

	rc = acl_write(sc, &ip, r->len, action, expires, LB_STEER_ACL_MANUAL);
	if (rc == -E2BIG)
		return lb_cmd_error(out, rc, "the ACL is full; nothing changed");
	if (rc == -EOPNOTSUPP)
		return lb_cmd_error(out, rc,
				    "the pinned maps have no IPv6 ACL (a "
				    "dataplane without IPv6 steering pinned "
				    "them); nothing changed");
	if (rc != 0)
		return lb_cmd_error(out, rc, "cannot set %s: %s",
				    req_fmt(r, p), strerror(-rc));
	auto_forget(sc, &ip, r->len);
	return 0;
}

static int
cmd_deny(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_steerctl *sc = ctx;
	struct lb_acl_req r;
	int rc = lb_acl_parse_deny(argc, argv, &r, out);

	if (rc == 0)
		rc = need_maps(sc, out);
	if (rc != 0)
		return rc;
	return acl_put(sc, &r,
		       r.lb_only ? LB_STEER_ACL_DENY_LB : LB_STEER_ACL_DENY,
		       out);
}

static int
cmd_allow(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_steerctl *sc = ctx;
	struct lb_acl_req r;
	int rc = lb_acl_parse_allow(argc, argv, &r, out);

	if (rc == 0)
		rc = need_maps(sc, out);
	if (rc != 0)
		return rc;
	return acl_put(sc, &r, LB_STEER_ACL_ALLOW, out);
}

static int
cmd_del(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_steerctl *sc = ctx;
	char p[LB_CMD_IP_ADDR_STRLEN];
	struct lb_conf_ip ip;
	struct lb_acl_req r;
	int rc = lb_acl_parse_del(argc, argv, &r, out);

	if (rc == 0)
		rc = need_maps(sc, out);
	if (rc != 0)
		return rc;
	if (r.af == LB_CONF_AF_INET6)
		rc = lb_steer_acl6_del(sc->s, r.prefix6, r.len);
	else
		rc = lb_steer_acl_del(sc->s, htonl(r.prefix), r.len);
	if (rc == -ENOENT || rc == -EOPNOTSUPP)
		return lb_cmd_error(out, -ENOENT, "no ACL entry for %s",
				    req_fmt(&r, p));
	if (rc != 0)
		return lb_cmd_error(out, rc, "cannot remove %s: %s",
				    req_fmt(&r, p), strerror(-rc));
	ip = lb_conf_ip_of(r.af, r.prefix, r.prefix6);
	auto_forget(sc, &ip, r.len);
	return 0;
}

/* An entry of either ACL, for the listing. */
struct entry {
	struct lb_conf_ip ip;
	uint8_t len;
	enum lb_steer_acl_action action;
	uint64_t expires_ns;
	enum lb_steer_acl_origin origin;
};

struct entries {
	struct entry *e;
	size_t n, cap;
};

static int
push_entry(struct entries *l, struct lb_conf_ip ip, uint8_t len,
	   enum lb_steer_acl_action action, uint64_t expires_ns,
	   enum lb_steer_acl_origin origin)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		void *p = realloc(l->e, cap * sizeof(*l->e));

		if (p == NULL)
			return -ENOMEM;
		l->e = p;
		l->cap = cap;
	}
	l->e[l->n++] = (struct entry){ip, len, action, expires_ns, origin};
	return 0;
}

static int
collect(const struct lb_steer_acl *a, void *arg)
{
	return push_entry(arg, lb_conf_ip4(ntohl(a->prefix)), a->prefixlen,
			  a->action, a->expires_ns, a->origin);
}

static int
collect6(const struct lb_steer_acl6 *a, void *arg)
{
	return push_entry(arg, lb_conf_ip_of(LB_CONF_AF_INET6, 0, a->prefix),
			  a->prefixlen, a->action, a->expires_ns, a->origin);
}

/* IPv4 first, then IPv6; by address, then length. */
static int
by_prefix(const void *x, const void *y)
{
	const struct entry *a = x, *b = y;
	int c;

	if (a->ip.af != b->ip.af)
		return a->ip.af < b->ip.af ? -1 : 1;
	if (a->ip.af == LB_CONF_AF_INET6)
		c = memcmp(a->ip.ip6, b->ip.ip6, sizeof(a->ip.ip6));
	else
		c = a->ip.ip < b->ip.ip ? -1 : a->ip.ip > b->ip.ip;
	if (c != 0)
		return c;
	return (int)a->len - (int)b->len;
}

static const char *
action_name(enum lb_steer_acl_action a)
{
	switch (a) {
	case LB_STEER_ACL_DENY:
		return "deny";
	case LB_STEER_ACL_DENY_LB:
		return "deny-lb";
	case LB_STEER_ACL_ALLOW:
		return "allow";
	default:
		return "?";
	}
}

/* The automatic deny's settings and counters, as text and JSON. */
static int
auto_out(const struct lb_steerctl *sc, json_t *d, struct lb_cmd_out *out)
{
	const struct lb_acl_auto_conf *c;
	const struct lb_acl_auto_stats *st;
	char w[LB_CMD_DURATION_STRLEN], t[LB_CMD_DURATION_STRLEN];
	json_t *j;

	if (sc->autod == NULL) {
		json_object_set_new(d, "auto", json_null());
		return lb_cmd_printf(out, "automatic deny: off\n");
	}
	c = lb_acl_auto_conf(sc->autod);
	st = lb_acl_auto_stats(sc->autod);
	j = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
		      "rejects", (json_int_t)c->rejects, "window_ns",
		      (json_int_t)c->window_ns, "ttl_ns", (json_int_t)c->ttl_ns,
		      "max", (json_int_t)c->max, "active",
		      (json_int_t)st->active, "records",
		      (json_int_t)st->records, "denies", (json_int_t)st->denies,
		      "full", (json_int_t)st->full, "untracked",
		      (json_int_t)(st->untracked + sc->rej_ignored),
		      "operator_decided", (json_int_t)sc->rej_manual);
	if (j == NULL || json_object_set_new(d, "auto", j) != 0)
		return -ENOMEM;
	return lb_cmd_printf(
		out,
		"automatic deny: %u rejects within %s deny a source for %s "
		"(lb-only); %u of at most %u denied now; %" PRIu64
		" reject records, %" PRIu64 " denies, %" PRIu64
		" refused at the bound\n",
		c->rejects, lb_cmd_fmt_duration(c->window_ns, w),
		lb_cmd_fmt_duration(c->ttl_ns, t), st->active, c->max,
		st->records, st->denies, st->full);
}

static int
cmd_list(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_steerctl *sc = ctx;
	struct entries l = {NULL, 0, 0};
	uint64_t now = lb_steer_now_ns();
	json_t *d = NULL, *arr = NULL;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 0, 0);
	if (rc == 0)
		rc = need_maps(sc, out);
	if (rc != 0)
		return rc;
	rc = lb_steer_acl_walk(sc->s, collect, &l);
	if (rc == 0) {
		rc = lb_steer_acl6_walk(sc->s, collect6, &l);
		if (rc == -EOPNOTSUPP)
			rc = 0; /* maps pinned without IPv6 */
	}
	if (rc != 0) {
		free(l.e);
		return lb_cmd_error(out, rc, "cannot read the ACL: %s",
				    strerror(-rc));
	}
	qsort(l.e, l.n, sizeof(*l.e), by_prefix);
	d = json_object();
	arr = json_array();
	if (d == NULL || arr == NULL || json_object_set(d, "entries", arr))
		rc = -ENOMEM;
	if (rc == 0)
		rc = lb_cmd_printf(out, "%-18s %-8s %-7s %s\n", "PREFIX",
				   "ACTION", "ORIGIN", "EXPIRES");
	for (size_t i = 0; i < l.n && rc == 0; i++) {
		const struct entry *e = &l.e[i];
		char p[LB_CMD_IP_ADDR_STRLEN], dur[LB_CMD_DURATION_STRLEN + 4];
		json_t *je;

		lb_cmd_fmt_ip_prefix(&e->ip, e->len, p);
		if (e->expires_ns == 0)
			snprintf(dur, sizeof(dur), "never");
		else if (e->expires_ns <= now)
			snprintf(dur, sizeof(dur), "expired");
		else
			snprintf(dur, sizeof(dur), "in %" PRIu64 "s",
				 (e->expires_ns - now + 999999999u) /
					 1000000000u);
		rc = lb_cmd_printf(
			out, "%-18s %-8s %-7s %s\n", p, action_name(e->action),
			e->origin == LB_STEER_ACL_AUTO ? "auto" : "manual",
			dur);
		je = json_pack(
			"{s:s, s:s, s:s, s:o}", "prefix", p, "action",
			action_name(e->action), "origin",
			e->origin == LB_STEER_ACL_AUTO ? "auto" : "manual",
			"expires_in_ns",
			e->expires_ns == 0
				? json_null()
				: json_integer(e->expires_ns > now
						       ? (json_int_t)(e->expires_ns -
								      now)
						       : 0));
		if (je == NULL || json_array_append_new(arr, je) != 0)
			rc = -ENOMEM;
	}
	if (rc == 0)
		rc = auto_out(sc, d, out);
	free(l.e);
	json_decref(arr);
	if (rc != 0) {
		json_decref(d);
		return rc == -ENOMEM ? lb_cmd_error(out, rc, "out of memory")
				     : rc;
	}
	give(sc, d);
	return 0;
}

#define PREFIX_ARG "PREFIX"

static const struct lb_cmd_def acl_cmds[] = {
	{
		.path = "acl deny",
		.synopsis = PREFIX_ARG " [expires DURATION] [lb-only]",
		.help = "Drop a source prefix in the NIC's driver (XDP)",
		.long_help =
			"PREFIX is a.b.c.d/LEN, IPV6/LEN (up to /128) or an "
			"address (a /32 or a\n/128); host bits must be zero. "
			"Every packet from it is\ndropped by the XDP steering "
			"program before the kernel or the dataplane\nsees it, "
			"the host's own traffic included; with `lb-only`, "
			"only what would\ngo to the dataplane (VIPs, SNAT "
			"addresses): the host still hears the\nsource. The "
			"longest prefix in the ACL that covers a source "
			"decides.\n\nWith `expires`, the entry ends after "
			"DURATION (500ms, 90s, 10m, 2h; at\nmost a year). "
			"An entry of the same prefix is replaced. The ACL "
			"lives in the\npinned map: it outlives lb-control "
			"and the dataplane. Only for a dataplane\nwhose "
			"ports run the steering program (net_af_xdp, see "
			"docs/xdp.md).",
		.fn = cmd_deny,
	},
	{
		.path = "acl allow",
		.synopsis = PREFIX_ARG " [expires DURATION]",
		.help = "Exempt a source prefix from the denies that cover it",
		.long_help =
			"An allow entry lifts the deny of a shorter prefix "
			"of its family (deny\n10.0.0.0/8, allow 10.1.2.0/24; "
			"deny 2001:db8::/32, allow\n2001:db8:1::/48) and "
			"replaces a "
			"deny of the same prefix. Automatic denies\nnever "
			"override it. `acl del` removes it.",
		.fn = cmd_allow,
	},
	{
		.path = "acl del",
		.synopsis = PREFIX_ARG,
		.help = "Remove the ACL entry of a prefix",
		.fn = cmd_del,
	},
	{
		.path = "acl list",
		.synopsis = "",
		.help = "Show the source ACL and the automatic deny",
		.long_help =
			"IPv4 entries first, then IPv6. Each entry: prefix, "
			"action (deny,\ndeny-lb, allow), origin (manual: acl "
			"deny or allow; auto: a source the\nadmission control "
			"kept rejecting) and when it expires. Expired entries "
			"are\nremoved within a second. Then the automatic "
			"deny's settings (lb-control\n--acl-auto) and "
			"counters.",
		.fn = cmd_list,
	},
};

static const struct lb_cmd_table acl_table = {
	.name = "steer",
	.ctx = "steer",
	.defs = acl_cmds,
	.n = sizeof(acl_cmds) / sizeof(acl_cmds[0]),
};
LB_CMD_REGISTER(acl_table);

/* ---- counters ---- */

static const struct lb_prom_src xdp_src = {"xdp", LB_METRICS_RANK_XDP,
					   "steer", lb_steerctl_metrics};
LB_PROM_REGISTER(xdp_src);

int
lb_steerctl_stats(void *arg, json_t *d, struct lb_cmd_out *out)
{
	struct lb_steerctl *sc = arg;
	struct lb_steer_stats st;
	json_t *x, *ctr;
	int rc;

	if (sc->s == NULL) {
		json_object_set_new(d, "xdp", json_null());
		return lb_cmd_printf(out, "\nxdp: no steering maps\n");
	}
	rc = lb_steer_stats_read(sc->s, &st);
	if (rc != 0)
		return lb_cmd_printf(out, "\nxdp: cannot read the counters: "
					  "%s\n",
				     strerror(-rc));
	x = json_object();
	ctr = json_object();
	if (x == NULL || ctr == NULL || json_object_set_new(d, "xdp", x) ||
	    json_object_set_new(x, "counters", ctr) ||
	    json_object_set_new(x, "pin", json_string(sc->pin_dir))) {
		json_decref(x);
		json_decref(ctr);
		return -ENOMEM;
	}
	rc = lb_cmd_printf(out, "\nxdp (maps %s)\n%-28s %14s %14s\n",
			   sc->pin_dir[0] ? sc->pin_dir : "private",
			   "VERDICT", "PACKETS", "BYTES");
	for (unsigned int c = 0; c < LB_STEER_CTR_MAX && rc == 0; c++) {
		const char *name = lb_steer_ctr_name(c);

		rc = lb_cmd_printf(out, "%-28s %14" PRIu64 " %14" PRIu64 "\n",
				   name, (uint64_t)st.ctr[c].packets,
				   (uint64_t)st.ctr[c].bytes);
		if (rc == 0 &&
		    json_object_set_new(
			    ctr, name,
			    json_pack("{s:I, s:I}", "packets",
				      (json_int_t)st.ctr[c].packets, "bytes",
				      (json_int_t)st.ctr[c].bytes)) != 0)
			rc = -ENOMEM;
	}
	if (rc == 0)
		rc = auto_out(sc, x, out);
	return rc;
}

static int
count_rule(const struct lb_steer_rule *r, void *arg)
{
	(void)r;
	(*(uint64_t *)arg)++;
	return 0;
}

static int
count_rule6(const struct lb_steer_rule6 *r, void *arg)
{
	(void)r;
	(*(uint64_t *)arg)++;
	return 0;
}

static int
count_acl(const struct lb_steer_acl *a, void *arg)
{
	(void)a;
	(*(uint64_t *)arg)++;
	return 0;
}

static int
count_acl6(const struct lb_steer_acl6 *a, void *arg)
{
	(void)a;
	(*(uint64_t *)arg)++;
	return 0;
}

/* Rules and ACL entries of each family in the maps now; a family the
 * pins lack (maps of a version without IPv6) is left out. */
static int
family_gauges(struct lb_steerctl *sc, struct lb_cmd_out *out)
{
	uint64_t rules[2] = {0, 0}, acl[2] = {0, 0};
	bool have[2];
	struct lb_prom_label l[2] = {{"family", "ipv4"}, {"family", "ipv6"}};
	int rc;

	have[0] = lb_steer_rule_walk(sc->s, count_rule, &rules[0]) == 0 &&
		  lb_steer_acl_walk(sc->s, count_acl, &acl[0]) == 0;
	have[1] = lb_steer_rule6_walk(sc->s, count_rule6, &rules[1]) == 0 &&
		  lb_steer_acl6_walk(sc->s, count_acl6, &acl[1]) == 0;
	rc = lb_prom_family(out, "lb_xdp_rules", "gauge",
			    "Steering rules in the XDP maps, by address "
			    "family.");
	for (int f = 0; f < 2 && rc == 0; f++)
		if (have[f])
			rc = lb_prom_u64(out, "lb_xdp_rules", &l[f], 1,
					 rules[f]);
	if (rc == 0)
		rc = lb_prom_family(out, "lb_xdp_acl_entries", "gauge",
				    "Source ACL entries in the XDP maps, by "
				    "address family (expired ones until "
				    "collected).");
	for (int f = 0; f < 2 && rc == 0; f++)
		if (have[f])
			rc = lb_prom_u64(out, "lb_xdp_acl_entries", &l[f], 1,
					 acl[f]);
	return rc;
}

int
lb_steerctl_metrics(void *arg, struct lb_cmd_out *out)
{
	static const struct {
		const char *name, *help;
		int bytes;
	} fams[] = {
		{"lb_xdp_packets_total",
		 "Frames the XDP steering program judged, by verdict.", 0},
		{"lb_xdp_bytes_total",
		 "Bytes of the frames the XDP steering program judged, by "
		 "verdict.",
		 1},
	};
	struct lb_steerctl *sc = arg;
	struct lb_steer_stats st;
	int rc;

	if (sc->s == NULL || lb_steer_stats_read(sc->s, &st) != 0)
		return 0;
	rc = 0;
	for (size_t f = 0; f < 2 && rc == 0; f++) {
		rc = lb_prom_family(out, fams[f].name, "counter",
				    fams[f].help);
		for (unsigned int c = 0; c < LB_STEER_CTR_MAX && rc == 0; c++) {
			struct lb_prom_label l = {"verdict",
						  lb_steer_ctr_name(c)};

			rc = lb_prom_u64(out, fams[f].name, &l, 1,
					 fams[f].bytes ? st.ctr[c].bytes
						       : st.ctr[c].packets);
		}
	}
	if (rc == 0)
		rc = family_gauges(sc, out);
	if (rc != 0 || sc->autod == NULL)
		return rc;
	rc = lb_prom_family(out, "lb_xdp_acl_auto_denies_total", "counter",
			    "Sources denied automatically for being "
			    "rejected by the admission control.");
	if (rc == 0)
		rc = lb_prom_u64(out, "lb_xdp_acl_auto_denies_total", NULL, 0,
				 lb_acl_auto_stats(sc->autod)->denies);
	if (rc == 0)
		rc = lb_prom_family(out, "lb_xdp_acl_auto_active", "gauge",
				    "Sources denied automatically now.");
	if (rc == 0)
		rc = lb_prom_u64(out, "lb_xdp_acl_auto_active", NULL, 0,
				 lb_acl_auto_stats(sc->autod)->active);
	return rc;
}
