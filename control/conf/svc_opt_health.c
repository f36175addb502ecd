/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Options of the health checks of a service's backends
 * (control/health/health.h); defaults are HAProxy's (see lb/conf-t.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lb/svc_opt.h"

static const char *const check_types[] = {
	[LB_CONF_CHECK_NONE] = "none",
	[LB_CONF_CHECK_TCP] = "tcp",
	[LB_CONF_CHECK_HTTP] = "http",
};

/* "200" or "200-399", each in 100..599. */
static int
status_parse(const struct lb_svc_opt *d, const char *s,
	     struct lb_conf_svc_opts *o, struct lb_cmd_out *out)
{
	unsigned int lo, hi;
	int n = 0;

	(void)d;
	if (sscanf(s, "%3u%n", &lo, &n) != 1 || n != 3)
		goto bad;
	hi = lo;
	if (s[3] == '-' &&
	    (sscanf(s + 4, "%3u%n", &hi, &n) != 1 || n != 3 || s[7] != '\0'))
		goto bad;
	if ((s[3] != '-' && s[3] != '\0') || lo < 100 || hi > 599 || lo > hi)
		goto bad;
	o->check.status_lo = (uint16_t)lo;
	o->check.status_hi = (uint16_t)hi;
	return 0;
bad:
	return lb_cmd_error(out, -EINVAL,
			    "invalid check-status '%s': expected LO or LO-HI "
			    "in 100..599",
			    s);
}

static int
status_fmt(const struct lb_svc_opt *d, const struct lb_conf_svc_opts *o,
	   char *buf, size_t len)
{
	(void)d;
	snprintf(buf, len, "%u-%u", o->check.status_lo, o->check.status_hi);
	return 0;
}

static bool
status_eq(const struct lb_svc_opt *d, const struct lb_conf_svc_opts *a,
	  const struct lb_conf_svc_opts *b)
{
	(void)d;
	return a->check.status_lo == b->check.status_lo &&
	       a->check.status_hi == b->check.status_hi;
}

static int
status_check(const struct lb_svc_opt *d, const struct lb_svc_opt_ctx *x,
	     const struct lb_conf_svc_opts *o, struct lb_cmd_out *out)
{
	const struct lb_conf_check *k = &o->check;

	(void)d;
	(void)x;
	if (k->status_lo < 100 || k->status_hi > 599 ||
	    k->status_lo > k->status_hi)
		return lb_cmd_error(out, -ERANGE,
				    "check-status %u-%u out of 100..599",
				    k->status_lo, k->status_hi);
	return 0;
}

static int
path_check(const struct lb_svc_opt *d, const struct lb_svc_opt_ctx *x,
	   const struct lb_conf_svc_opts *o, struct lb_cmd_out *out)
{
	const char *path = o->check.path;

	(void)d;
	(void)x;
	if (path[0] != '/')
		return lb_cmd_error(out, -EINVAL,
				    "check-path must start with '/'");
	/* It goes on the request line as it is. */
	for (const char *p = path; *p != '\0'; p++)
		if (*p <= ' ' || *p >= 0x7f)
			return lb_cmd_error(out, -EINVAL,
					    "check-path '%s' holds a space or "
					    "control character",
					    path);
	return 0;
}

static int
health_check(const struct lb_svc_opt_ctx *x, const struct lb_conf_svc_opts *o,
	     struct lb_cmd_out *out)
{
	if (o->check.type != LB_CONF_CHECK_NONE &&
	    x->proto != LB_CONF_PROTO_TCP)
		return lb_cmd_error(out, -EINVAL,
				    "check %s needs a tcp service",
				    check_types[o->check.type]);
	return 0;
}

#define COUNT_ROW(kw, f, d, text)                                              \
	{                                                                      \
		.name = kw, .owner = "health", .type = LB_SVC_OPT_UINT,        \
		LB_SVC_OPT_FIELD(check.f), .min = 1,                           \
		.max = LB_CONF_CHECK_COUNT_MAX, .def = d, .arg = "N",          \
		.help = text,                                                  \
	}

static const struct lb_svc_opt health_opts[] = {
	{
		.name = "check",
		.owner = "health",
		.type = LB_SVC_OPT_ENUM,
		.flags = LB_SVC_OPT_F_UNKNOWN,
		LB_SVC_OPT_FIELD(check.type),
		LB_SVC_OPT_NAMES(check_types),
		.help = "health check of the backends; a checked backend takes "
			"new flows only while up, one added later starts "
			"pending; tcp and http need a tcp service",
	},
	{
		.name = "check-path",
		.owner = "health",
		.type = LB_SVC_OPT_STR,
		LB_SVC_OPT_FIELD(check.path),
		.max = LB_CONF_CHECK_PATH_LEN,
		.def_str = "/",
		.arg = "PATH",
		.help = "what http checks GET",
		.check = path_check,
	},
	{
		.name = "check-status",
		.owner = "health",
		.type = LB_SVC_OPT_CUSTOM,
		LB_SVC_OPT_FIELD(check.status_lo),
		.max = 7,
		.def_str = "200-399",
		.arg = "LO[-HI]",
		.help = "status range that passes an http check",
		.parse = status_parse,
		.fmt = status_fmt,
		.eq = status_eq,
		.check = status_check,
	},
	{
		.name = "check-port",
		.owner = "health",
		.type = LB_SVC_OPT_UINT,
		LB_SVC_OPT_FIELD(check.port),
		.max = 65535,
		.arg = "N",
		.help = "port the checks connect to; 0: the backend's own",
	},
	{
		.name = "check-interval",
		.owner = "health",
		.type = LB_SVC_OPT_DURATION,
		LB_SVC_OPT_FIELD(check.interval_ns),
		.min = LB_CONF_CHECK_INTERVAL_MIN_NS,
		.max = LB_CONF_CHECK_INTERVAL_MAX_NS,
		.def = LB_CONF_CHECK_INTERVAL_DEFAULT_NS,
		.arg = "DUR",
		.help = "time between checks of a backend",
	},
	{
		.name = "check-timeout",
		.owner = "health",
		.type = LB_SVC_OPT_DURATION,
		LB_SVC_OPT_FIELD(check.timeout_ns),
		.min = LB_CONF_CHECK_TIMEOUT_MIN_NS,
		.max = LB_CONF_CHECK_TIMEOUT_MAX_NS,
		.def = LB_CONF_CHECK_TIMEOUT_DEFAULT_NS,
		.arg = "DUR",
		.help = "a check without its answer fails after this long",
	},
	COUNT_ROW("check-rise", rise, LB_CONF_CHECK_RISE_DEFAULT,
		  "successes in a row to go up"),
	COUNT_ROW("check-fall", fall, LB_CONF_CHECK_FALL_DEFAULT,
		  "failures in a row to go down"),
};

static const struct lb_svc_opt_table health_tab = {
	.name = "health",
	.rank = 60,
	.opt = health_opts,
	.nb_opt = sizeof(health_opts) / sizeof(health_opts[0]),
	.check = health_check,
};
LB_SVC_OPT_REGISTER(health_tab)
