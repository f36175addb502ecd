/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Options of admission control (hierarchical-token-buckets-patent,
 * docs/admission.md): the token buckets of a service and whose request
 * priorities count.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lb/svc_opt.h"

/* "a.b.c.d/nn," each */
#define TRUST_LEN (LB_ADMIT_TRUST_MAX * 19)

/* `prio-trust none` or up to LB_ADMIT_TRUST_MAX comma-separated
 * prefixes (a.b.c.d/LEN, no host bits). */
static int
trust_parse(const struct lb_svc_opt *d, const char *v,
	    struct lb_conf_svc_opts *o, struct lb_cmd_out *out)
{
	struct lb_admit_trust n = {.n = 0};
	char buf[TRUST_LEN + 1], *p, *save = NULL;
	int rc;

	(void)d;
	snprintf(buf, sizeof(buf), "%s", v);
	if (strcmp(buf, "none") == 0) {
		o->prio_trust = n;
		return 0;
	}
	for (p = strtok_r(buf, ",", &save); p != NULL;
	     p = strtok_r(NULL, ",", &save)) {
		if (n.n == LB_ADMIT_TRUST_MAX)
			return lb_cmd_error(out, -EINVAL,
					    "prio-trust: at most %u prefixes",
					    LB_ADMIT_TRUST_MAX);
		/* struct lb_admit_trust holds IPv4 prefixes. */
		if (strchr(p, ':') != NULL)
			return lb_cmd_error(out, -EINVAL,
					    "prio-trust: IPv6 prefix '%s' not "
					    "supported: trusted prefixes are "
					    "IPv4",
					    p);
		rc = lb_cmd_parse_prefix(p, &n.net[n.n], &n.len[n.n], out);
		if (rc != 0)
			return rc;
		n.n++;
	}
	o->prio_trust = n;
	return 0;
}

/* As trust_parse() reads it back. */
static int
trust_fmt(const struct lb_svc_opt *d, const struct lb_conf_svc_opts *o,
	  char *buf, size_t len)
{
	const struct lb_admit_trust *t = &o->prio_trust;
	char a[LB_CMD_IPV4_STRLEN];
	size_t n = 0;

	(void)d;
	if (t->n == 0) {
		snprintf(buf, len, "none");
		return 0;
	}
	buf[0] = '\0';
	for (unsigned int i = 0; i < t->n && i < LB_ADMIT_TRUST_MAX && n < len;
	     i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s/%u", i ? "," : "",
				      lb_cmd_fmt_ipv4(t->net[i], a), t->len[i]);
	return n < len ? 0 : -ENOSPC;
}

static bool
trust_eq(const struct lb_svc_opt *d, const struct lb_conf_svc_opts *a,
	 const struct lb_conf_svc_opts *b)
{
	(void)d;
	return lb_admit_trust_eq(&a->prio_trust, &b->prio_trust);
}

/* What relates the admit-* options (burst with rate, cluster with key). */
static int
admit_check(const struct lb_svc_opt_ctx *x, const struct lb_conf_svc_opts *o,
	    struct lb_cmd_out *out)
{
	(void)x;
	if (lb_admit_conf_error(&o->admit) != NULL)
		return lb_cmd_error(out, -EINVAL, "%s",
				    lb_admit_conf_error(&o->admit));
	return 0;
}

#define ENUM_ROW(kw, f, words, text)                                           \
	{                                                                      \
		.name = kw, .owner = "admit", .type = LB_SVC_OPT_ENUM,         \
		LB_SVC_OPT_FIELD(admit.f), LB_SVC_OPT_NAMES(words),            \
		.help = text,                                                  \
	}

/* A client prefix length, of one family's addresses. */
#define PREFIX_ROW(kw, f, hi, dflt, text)                                      \
	{                                                                      \
		.name = kw, .owner = "admit", .type = LB_SVC_OPT_UINT,         \
		LB_SVC_OPT_FIELD(admit.f), .min = 1, .max = hi, .def = dflt,   \
		.arg = "N", .help = text,                                      \
	}

static const struct lb_svc_opt admit_opts[] = {
	{
		.name = "admit-rate",
		.owner = "admit",
		.type = LB_SVC_OPT_UINT,
		LB_SVC_OPT_FIELD(admit.rate),
		.max = LB_ADMIT_RATE_MAX,
		.arg = "N",
		.help = "admission control: new connections per second "
			"(requests per second on `http` services) per throttle "
			"key; 0: off",
	},
	{
		.name = "admit-burst",
		.owner = "admit",
		.type = LB_SVC_OPT_UINT,
		LB_SVC_OPT_FIELD(admit.burst),
		.max = LB_ADMIT_BURST_MAX,
		.arg = "N",
		.help = "tokens a key may save up; 0: rate/10; at least "
			"rate/100",
	},
	ENUM_ROW("admit-key", key, lb_admit_key_names,
		 "what a bucket is kept for; `client` and `prefix` buckets "
		 "are shared by services with the same admit settings"),
	PREFIX_ROW("admit-prefix", prefix, 32, LB_ADMIT_PREFIX_DEFAULT,
		   "prefix length for `admit-key prefix` on IPv4 services"),
	PREFIX_ROW("admit-prefix6", prefix6, 128, LB_ADMIT_PREFIX6_DEFAULT,
		   "prefix length for `admit-key prefix` on IPv6 services"),
	ENUM_ROW("admit-reject", reject, lb_admit_reject_names,
		 "a rejected SYN is dropped or answered with a RST"),
	ENUM_ROW("admit-cluster", cluster, lb_admit_cluster_names,
		 "share the limit between hosts through Redis (lb-control "
		 "`--redis`); when Redis is unreachable `open` refills "
		 "locally at the rate, `closed` admits no more than was "
		 "borrowed; only with `admit-key svc`"),
	ENUM_ROW("admit-full", full, lb_admit_full_names,
		 "a key that finds no room in the shared bucket table is "
		 "charged to the service's overflow bucket (one key's rate "
		 "and burst for all such keys), admitted, or refused"),
	ENUM_ROW("unfollowable", unfollow, lb_admit_unfollow_names,
		 "a flow of a service with request admission that can no "
		 "longer be followed, or gets no follower entry, is reset "
		 "both ways, or charged as one request and forwarded "
		 "unfollowed (reset if refused)"),
	{
		.name = "prio-trust",
		.owner = "admit",
		.type = LB_SVC_OPT_CUSTOM,
		LB_SVC_OPT_FIELD(prio_trust),
		.max = TRUST_LEN,
		.def_str = "none",
		.arg = "none|PREFIX[,PREFIX...]",
		.help = "up to 4 IPv4 client prefixes whose X-Priority "
			"counts; other clients get `default-priority`",
		.parse = trust_parse,
		.fmt = trust_fmt,
		.eq = trust_eq,
	},
};

static const struct lb_svc_opt_table admit_tab = {
	.name = "admit",
	.rank = 50,
	.opt = admit_opts,
	.nb_opt = sizeof(admit_opts) / sizeof(admit_opts[0]),
	.check = admit_check,
};
LB_SVC_OPT_REGISTER(admit_tab)
