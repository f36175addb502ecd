/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The settings of `scale set`, one descriptor row each: parsed from
 * words, written back as words (`save`) and as JSON (`scale show`). A
 * new setting is a field of struct lb_as_conf and one row here.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "autoscale_priv.h"
#include "inflight.h"

enum opt_kind { K_POLICY, K_F64, K_NAME, K_STR, K_U32, K_DUR, K_BOOL };

struct opt {
	const char *name;
	enum opt_kind kind;
	size_t off;
	uint64_t min, max; /* U32, DUR; STR/NAME: size */
};

#define OFF(f) offsetof(struct lb_as_conf, f)
#define DAY_NS (86400ull * LB_SG_NS_PER_S)
static const struct opt opts[] = {
	{"policy", K_POLICY, OFF(policy), 0, 0},
	{"lower", K_F64, OFF(lower), 0, 0},
	{"upper", K_F64, OFF(upper), 0, 0},
	{"decay", K_NAME, OFF(decay), 0,
	 sizeof(((struct lb_as_conf *)0)->decay)},
	{"decay-time", K_DUR, OFF(decay_ns), 0, DAY_NS},
	{"queue-length", K_U32, OFF(queue_length), 1, 1u << 20},
	{"rounds", K_U32, OFF(rounds), 1, LB_INFLIGHT_ROUNDS_MAX},
	{"min", K_U32, OFF(guard.min_instances), 0, LB_AS_INST_MAX},
	{"max", K_U32, OFF(guard.max_instances), 1, LB_AS_INST_MAX},
	{"tolerance", K_F64, OFF(guard.tolerance), 0, 0},
	{"up-window", K_DUR, OFF(guard.up_window_ns), 0, DAY_NS},
	{"down-window", K_DUR, OFF(guard.down_window_ns), 0, DAY_NS},
	{"up-cooldown", K_DUR, OFF(guard.up_cooldown_ns), 0, DAY_NS},
	{"down-cooldown", K_DUR, OFF(guard.down_cooldown_ns), 0, DAY_NS},
	{"max-up-step", K_U32, OFF(guard.max_up_step), 0, LB_AS_INST_MAX},
	{"pending-guard", K_BOOL, OFF(guard.pending_guard), 0, 0},
	{"startup-timeout", K_DUR, OFF(guard.startup_timeout_ns), 0, DAY_NS},
	{"drain-timeout", K_DUR, OFF(drain_timeout_ns), 0, DAY_NS},
	{"interval", K_DUR, OFF(interval_ns), 10000000ull,
	 3600 * LB_SG_NS_PER_S},
	{"driver", K_NAME, OFF(driver), 0, LB_AS_DRIVER_LEN + 1},
	{"command", K_STR, OFF(command), 0, LB_AS_ARG_LEN + 1},
	{"target", K_STR, OFF(target), 0, LB_AS_ARG_LEN + 1},
	{"inst-port", K_U32, OFF(inst_port), 1, 65535},
	{"exec-timeout", K_DUR, OFF(exec_timeout_ns), 1000000ull, DAY_NS},
	{"cluster", K_BOOL, OFF(cluster), 0, 0},
};
#define NB_OPTS (sizeof(opts) / sizeof(opts[0]))

static int
parse_f64(const char *s, const char *what, double *v, struct lb_cmd_out *out)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(s, &end);
	if (*s == '\0' || *end != '\0' || errno != 0 || !isfinite(x) || x < 0)
		return lb_cmd_error(out, -EINVAL,
				    "invalid %s '%s': expected a number >= 0",
				    what, s);
	*v = x;
	return 0;
}

static int
opt_set(struct lb_as_conf *c, const struct opt *o, const char *v,
	struct lb_cmd_out *out)
{
	char *p = (char *)c + o->off;
	uint64_t u;
	bool b;
	int rc = 0;

	switch (o->kind) {
	case K_POLICY:
		if (strcmp(v, "spl") == 0)
			c->policy = LB_AS_POLICY_SPL;
		else if (strcmp(v, "inflight") == 0)
			c->policy = LB_AS_POLICY_INFLIGHT;
		else
			rc = lb_cmd_error(out, -EINVAL,
					  "invalid policy '%s': expected spl "
					  "or inflight",
					  v);
		break;
	case K_F64:
		rc = parse_f64(v, o->name, (double *)(void *)p, out);
		break;
	case K_NAME:
		rc = lb_cmd_parse_name(v, o->name, o->max - 1, out);
		if (rc == 0)
			snprintf(p, o->max, "%s", v);
		break;
	case K_STR:
		if (strlen(v) >= o->max)
			return lb_cmd_error(out, -ERANGE,
					    "%s too long (more than %u bytes)",
					    o->name, (unsigned int)o->max - 1);
		snprintf(p, o->max, "%s", v);
		break;
	case K_U32:
		rc = lb_cmd_parse_u64(v, o->name, o->min, o->max, &u, out);
		if (rc == 0 && strcmp(o->name, "inst-port") == 0)
			*(uint16_t *)(void *)p = (uint16_t)u;
		else if (rc == 0)
			*(uint32_t *)(void *)p = (uint32_t)u;
		break;
	case K_DUR:
		rc = lb_cmd_parse_duration(v, o->name, o->min, o->max, &u, out);
		if (rc == 0)
			*(uint64_t *)(void *)p = u;
		break;
	case K_BOOL:
		rc = lb_cmd_parse_bool(v, o->name, &b, out);
		if (rc == 0)
			*(bool *)(void *)p = b;
		break;
	}
	return rc;
}

/* Writes option @p o of @p c as its value word. */
static void
opt_fmt(const struct lb_as_conf *c, const struct opt *o, char *buf, size_t n)
{
	const char *p = (const char *)c + o->off;
	char d[LB_CMD_DURATION_STRLEN];

	switch (o->kind) {
	case K_POLICY:
		snprintf(buf, n, "%s", lb_as_policy_name(c->policy));
		break;
	case K_F64:
		snprintf(buf, n, "%.17g", *(const double *)(const void *)p);
		break;
	case K_NAME:
	case K_STR:
		lb_cmd_quote(p, buf, n);
		break;
	case K_U32:
		if (strcmp(o->name, "inst-port") == 0)
			snprintf(buf, n, "%u",
				 *(const uint16_t *)(const void *)p);
		else
			snprintf(buf, n, "%u",
				 *(const uint32_t *)(const void *)p);
		break;
	case K_DUR:
		snprintf(buf, n, "%s",
			 lb_cmd_fmt_duration(*(const uint64_t *)(const void *)p,
					     d));
		break;
	case K_BOOL:
		snprintf(buf, n, "%s",
			 *(const bool *)(const void *)p ? "on" : "off");
		break;
	}
}

static size_t
opt_size(const struct opt *o)
{
	switch (o->kind) {
	case K_POLICY:
		return sizeof(enum lb_as_policy);
	case K_F64:
		return sizeof(double);
	case K_NAME:
	case K_STR:
		return o->max;
	case K_U32:
		return strcmp(o->name, "inst-port") == 0 ? 2 : 4;
	case K_DUR:
		return 8;
	case K_BOOL:
		return sizeof(bool);
	}
	return 0;
}

int
lb_as_opts_parse(struct lb_as_conf *c, int argc, char **argv,
		 struct lb_cmd_out *out)
{
	bool seen[NB_OPTS] = {false};
	int rc;

	for (int i = 0; i < argc; i += 2) {
		unsigned int j;

		for (j = 0; j < NB_OPTS; j++)
			if (strcmp(argv[i], opts[j].name) == 0)
				break;
		if (j == NB_OPTS)
			return lb_cmd_error(out, -EINVAL,
					    "unknown option '%s'; see 'help "
					    "scale set'",
					    argv[i]);
		if (seen[j])
			return lb_cmd_error(out, -EINVAL,
					    "option '%s' given twice", argv[i]);
		seen[j] = true;
		if (i + 1 >= argc)
			return lb_cmd_error(out, -EINVAL,
					    "option '%s' needs a value",
					    argv[i]);
		rc = opt_set(c, &opts[j], argv[i + 1], out);
		if (rc != 0)
			return rc;
	}
	return 0;
}

int
lb_as_opts_json(const struct lb_as_conf *c, json_t *conf)
{
	char v[LB_AS_ARG_LEN * 2 + 3];
	int bad = 0;

	for (unsigned int j = 0; j < NB_OPTS; j++) {
		const char *p = (const char *)c + opts[j].off;

		if (opts[j].kind == K_F64)
			bad |= jset(
				conf, opts[j].name,
				json_real(*(const double *)(const void *)p));
		else if (opts[j].kind == K_NAME || opts[j].kind == K_STR)
			bad |= jset(conf, opts[j].name, json_string(p));
		else {
			opt_fmt(c, &opts[j], v, sizeof(v));
			bad |= jset(conf, opts[j].name, json_string(v));
		}
	}
	return bad;
}

int
lb_as_save(const struct lb_as *as, struct lb_cmd_out *out)
{
	struct lb_as_conf def;
	char l[AS_LABEL_LEN], v[LB_AS_ARG_LEN * 2 + 3];
	int rc = 0;

	if (as == NULL || out == NULL)
		return -EINVAL;
	lb_as_conf_default(&def);
	for (unsigned int i = 0; i < as->cfg.n && rc == 0; i++) {
		const struct lb_as_cfg *x = &as->cfg.s[i];

		unit_label(&x->key, x->pool, l, sizeof(l));
		rc = lb_cmd_printf(out, "scale set %s", l);
		for (unsigned int j = 0; j < NB_OPTS && rc == 0; j++) {
			const char *a = (const char *)&x->c + opts[j].off;
			const char *b = (const char *)&def + opts[j].off;

			if (memcmp(a, b, opt_size(&opts[j])) == 0)
				continue;
			opt_fmt(&x->c, &opts[j], v, sizeof(v));
			rc = lb_cmd_printf(out, " %s %s", opts[j].name, v);
		}
		if (rc == 0)
			rc = lb_cmd_printf(out, "\n");
		if (rc == 0 && x->paused)
			rc = lb_cmd_printf(out, "scale pause %s\n", l);
	}
	return rc;
}
