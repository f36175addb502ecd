/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Options of HTTP feedback (docs/l7-feedback.md): the names of the
 * feedback headers, which statuses count as errors, and the expectation
 * of a request that states none.
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "lb/http_err.h"
#include "lb/svc_opt.h"

/* Option keyword and default name of each feedback header. */
static const struct {
	const char *opt;
	const char *name;
} hdr_tab[LB_CONF_HDR_NB] = {
	[LB_CONF_HDR_SPL] = {"spl-header", "X-SPL"},
	[LB_CONF_HDR_SPL_TIME] = {"spl-time-header", "X-SPL-Time"},
	[LB_CONF_HDR_PRIORITY] = {"priority-header", "X-Priority"},
	[LB_CONF_HDR_EXPECT] = {"expect-header", "X-Expect-Ms"},
	[LB_CONF_HDR_ORCA] = {"orca-header", "endpoint-load-metrics"},
};

const char *
lb_conf_hdr_default(enum lb_conf_hdr h)
{
	return (unsigned int)h < LB_CONF_HDR_NB ? hdr_tab[h].name : NULL;
}

const char *
lb_conf_hdr_opt(enum lb_conf_hdr h)
{
	return (unsigned int)h < LB_CONF_HDR_NB ? hdr_tab[h].opt : NULL;
}

/* A header name: an RFC 9110 token (tchar only). */
static int
hdr_check(const struct lb_svc_opt *d, const struct lb_svc_opt_ctx *x,
	  const struct lb_conf_svc_opts *o, struct lb_cmd_out *out)
{
	const char *n = (const char *)o + d->off;
	size_t len = strnlen(n, LB_CONF_HDR_NAME_MAX + 1);

	(void)x;
	if (len == 0 || len > LB_CONF_HDR_NAME_MAX)
		return lb_cmd_error(out, -ERANGE, "%s must be 1..%u bytes",
				    d->name, LB_CONF_HDR_NAME_MAX);
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)n[i]) &&
		    strchr("!#$%&'*+-.^_`|~", n[i]) == NULL)
			return lb_cmd_error(out, -EINVAL,
					    "%s '%s' is not a header name (RFC "
					    "9110 token)",
					    d->name, n);
	return 0;
}

static int
errors_check(const struct lb_svc_opt *d, const struct lb_svc_opt_ctx *x,
	     const struct lb_conf_svc_opts *o, struct lb_cmd_out *out)
{
	struct lb_http_err_codes set;

	(void)d;
	(void)x;
	if (lb_http_err_codes_parse(o->errors, &set) != 0)
		return lb_cmd_error(out, -EINVAL,
				    "errors: expected none or a list of "
				    "codes, ranges and classes within "
				    "100..599, such as 5xx or 500,502-504");
	return 0;
}

/* The set from its text (checked already). */
static void
errors_fix(const struct lb_svc_opt *d, struct lb_conf_svc_opts *o)
{
	(void)d;
	if (lb_http_err_codes_parse(o->errors, &o->err_codes) != 0)
		lb_http_err_codes_default(&o->err_codes);
}

static int
exclude_check(const struct lb_svc_opt *d, const struct lb_svc_opt_ctx *x,
	      const struct lb_conf_svc_opts *o, struct lb_cmd_out *out)
{
	char paths[LB_HTTP_ERR_PATHS][LB_HTTP_ERR_PATH_MAX + 1];

	(void)d;
	(void)x;
	if (lb_http_err_paths(o->err_exclude, paths) < 0)
		return lb_cmd_error(out, -EINVAL,
				    "error-exclude: expected none or up to %u "
				    "comma-separated path prefixes starting "
				    "with /, %u bytes each at most",
				    LB_HTTP_ERR_PATHS, LB_HTTP_ERR_PATH_MAX);
	return 0;
}

/* "none" is kept as no prefix at all. */
static void
exclude_fix(const struct lb_svc_opt *d, struct lb_conf_svc_opts *o)
{
	(void)d;
	if (strcmp(o->err_exclude, "none") == 0)
		memset(o->err_exclude, 0, sizeof(o->err_exclude));
}

/* Two kinds of feedback under one name would be read as one. */
static int
l7_check(const struct lb_svc_opt_ctx *x, const struct lb_conf_svc_opts *o,
	 struct lb_cmd_out *out)
{
	(void)x;
	/* Only the HTTP follower sees the requests after the first. */
	if (o->rebind != LB_CONF_REBIND_OFF && !o->http)
		return lb_cmd_error(out, -EINVAL,
				    "rebind close needs http on: only a "
				    "followed connection's later requests "
				    "are read");
	for (int h = 1; h < LB_CONF_HDR_NB; h++)
		for (int k = 0; k < h; k++)
			if (strcasecmp(o->hdr[k], o->hdr[h]) == 0)
				return lb_cmd_error(out, -EINVAL,
						    "%s and %s are both '%s'",
						    hdr_tab[k].opt,
						    hdr_tab[h].opt, o->hdr[h]);
	return 0;
}

#define HDR_ROW(id, kw, dflt, what)                                            \
	{                                                                      \
		.name = kw, .owner = "l7", .type = LB_SVC_OPT_STR,             \
		LB_SVC_OPT_FIELD(hdr[LB_CONF_HDR_##id]),                       \
		.max = LB_CONF_HDR_NAME_MAX, .def_str = dflt, .arg = "NAME",   \
		.help = "name of the header that carries " what " on `http` "  \
			"services; matched without regard to case, at most "   \
			"16 "                                                  \
			"distinct names across all services, each always "     \
			"used "                                                \
			"for the same kind of value",                          \
		.check = hdr_check,                                            \
	}

static const char *const rebind_names[LB_CONF_REBIND_MAX] = {
	[LB_CONF_REBIND_OFF] = "off",
	[LB_CONF_REBIND_CLOSE] = "close",
};

static const struct lb_svc_opt l7_opts[] = {
	HDR_ROW(SPL, "spl-header", "X-SPL",
		"the backend's self-perceived load (responses)"),
	HDR_ROW(SPL_TIME, "spl-time-header", "X-SPL-Time",
		"the time of that load (responses)"),
	HDR_ROW(PRIORITY, "priority-header", "X-Priority",
		"the request's priority rank (requests)"),
	HDR_ROW(EXPECT, "expect-header", "X-Expect-Ms",
		"the request's expected response time (requests)"),
	HDR_ROW(ORCA, "orca-header", "endpoint-load-metrics",
		"ORCA load reports (responses)"),
	{
		.name = "errors",
		.owner = "l7",
		.type = LB_SVC_OPT_STR,
		LB_SVC_OPT_FIELD(errors),
		.max = LB_HTTP_ERR_STRLEN,
		.def_str = "5xx",
		.arg = "CODES",
		.help = "response statuses that count as errors for the "
			"scheduler on `http` services: `none`, or codes, "
			"ranges and classes, such as `500,502-504` or "
			"`4xx,5xx`",
		.check = errors_check,
		.fix = errors_fix,
	},
	{
		.name = "error-exclude",
		.owner = "l7",
		.type = LB_SVC_OPT_STR,
		LB_SVC_OPT_FIELD(err_exclude),
		.max = LB_HTTP_ERR_STRLEN,
		.def_str = "",
		.arg = "PATHS",
		.help = "up to 4 comma-separated request path prefixes whose "
			"responses never count as errors (`/health,/ready`)",
		.check = exclude_check,
		.fix = exclude_fix,
	},
	{
		.name = "default-expect",
		.owner = "l7",
		.type = LB_SVC_OPT_MS,
		LB_SVC_OPT_FIELD(default_expect_ms),
		.max = 3600000000000ull,
		.arg = "DUR",
		.help = "expected response time of requests without "
			"X-Expect-Ms, in whole ms (0: none)",
	},
	{
		.name = "rebind",
		.owner = "l7",
		.type = LB_SVC_OPT_ENUM,
		LB_SVC_OPT_FIELD(rebind),
		LB_SVC_OPT_NAMES(rebind_names),
		.help = "a later request of a keep-alive connection that the "
			"rules would give another pool: `off` keeps it on the "
			"first pool, `close` answers it with a 421 and "
			"Connection: close so that the client connects again "
			"(needs `http on`)",
	},
};

static const struct lb_svc_opt_table l7_tab = {
	.name = "l7",
	.rank = 30,
	.opt = l7_opts,
	.nb_opt = sizeof(l7_opts) / sizeof(l7_opts[0]),
	.check = l7_check,
};
LB_SVC_OPT_REGISTER(l7_tab)
