/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The commands of a service's pools and content routing rules: `pool
 * add|set|del|list` and `rule add|del|default|list`. Rules are not `route`:
 * that word names the IP routes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "conf_priv.h"

/* The service key of a command's first two words, after the count of
 * its words is checked against [@p min, @p max] (-1: no bound). */
static int
key_args(int argc, char **argv, int min, int max, struct lb_conf_svc_key *k,
	 struct lb_cmd_out *out)
{
	int rc = lb_cmd_want_args(out, argc, argv, min, max);

	return rc != 0 ? rc : lb_conf_parse_key(argv, k, out);
}

static int
cmd_pool_add(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_conf_svc_key k;
	int rc = key_args(argc, argv, 3, -1, &k, out);

	return rc != 0 ? rc
		       : lb_conf_pool_add_opts(ctx, &k, argv[2], argc - 3,
					       argv + 3, out);
}

static int
cmd_pool_set(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_conf_svc_key k;
	int rc = key_args(argc, argv, 5, -1, &k, out);

	return rc != 0 ? rc
		       : lb_conf_pool_set(ctx, &k, argv[2], argc - 3, argv + 3,
					  out);
}

static int
cmd_pool_del(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_conf_svc_key k;
	int rc = key_args(argc, argv, 3, 3, &k, out);

	return rc != 0 ? rc : lb_conf_pool_del(ctx, &k, argv[2], out);
}

/* The service a list command names (its only two words), or NULL with
 * the error. */
static const struct lb_conf_svc *
svc_arg(struct lb_conf *c, int argc, char **argv, struct lb_cmd_out *out,
	int *rc)
{
	struct lb_conf_svc_key k;

	*rc = key_args(argc, argv, 2, 2, &k, out);
	return *rc == 0 ? lb_conf_svc_or_error(c, &k, out, rc) : NULL;
}

static int
cmd_pool_list(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	char chk[LB_CONF_POOL_CHECK_STRLEN + 1];
	const struct lb_conf_svc *sv;
	uint32_t nb;
	uint64_t wsum;
	int rc;

	sv = svc_arg(ctx, argc, argv, out, &rc);
	if (sv == NULL)
		return rc;
	rc = lb_cmd_printf(out, "%-32s %-12s %8s %10s  %s\n", "POOL", "SCHED",
			   "BACKENDS", "WEIGHTS", "CHECK");
	for (unsigned int i = 0; i <= sv->nb_pool && rc == 0; i++) {
		lb_conf_pool_sum(sv, i, &nb, &wsum);
		lb_conf_pool_check_str(sv, i, chk, sizeof(chk));
		rc = lb_cmd_printf(out, "%-32s %-12s %8u %10llu  %s\n",
				   i == 0 ? LB_CONF_POOL_DEFAULT
					  : sv->pool[i - 1].name,
				   i == 0 ? sv->opts.sched
					  : sv->pool[i - 1].sched,
				   nb, (unsigned long long)wsum, chk);
	}
	return rc;
}

/* The words from @p argv[@p from] on, joined by one space. */
static int
join(int argc, char **argv, int from, char *buf, size_t len,
     struct lb_cmd_out *out)
{
	size_t at = 0;

	buf[0] = '\0';
	for (int i = from; i < argc; i++) {
		int n = snprintf(buf + at, len - at, "%s%s", i > from ? " " : "",
				 argv[i]);

		if (n < 0 || (size_t)n >= len - at)
			return lb_cmd_error(out, -EINVAL, "rule too long (at "
					    "most %zu bytes)", len - 1);
		at += (size_t)n;
	}
	return 0;
}

static int
cmd_rule_add(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	char text[LB_CONF_RULE_LEN + 1];
	struct lb_conf_svc_key k;
	uint64_t at = 0;
	int rc, from = 2;

	rc = key_args(argc, argv, 3, -1, &k, out);
	if (rc == 0 && strcmp(argv[2], "at") == 0) {
		if (argc < 5)
			return lb_cmd_error(out, -EINVAL,
					    "expected at N and a rule");
		rc = lb_cmd_parse_u64(argv[3], "rule number", 1,
				      LB_CONF_MAX_RULES, &at, out);
		from = 4;
	}
	if (rc == 0)
		rc = join(argc, argv, from, text, sizeof(text), out);
	if (rc != 0)
		return rc;
	if (strncmp(text, "default", 7) == 0 &&
	    (text[7] == ' ' || text[7] == '\0'))
		return lb_cmd_error(out, -EINVAL, "a default is set with "
				    "`rule default`");
	return lb_conf_rule_add(ctx, &k, (unsigned int)at, text, out);
}

static int
cmd_rule_del(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_conf_svc_key k;
	uint64_t n;
	int rc;

	rc = key_args(argc, argv, 3, 3, &k, out);
	if (rc == 0)
		rc = lb_cmd_parse_u64(argv[2], "rule number", 1,
				      LB_CONF_MAX_RULES, &n, out);
	if (rc != 0)
		return rc;
	return lb_conf_rule_del(ctx, &k, (unsigned int)n, out);
}

static int
cmd_rule_default(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	char text[LB_CONF_RULE_DEF_LEN + 1];
	struct lb_conf_svc_key k;
	int rc;

	rc = key_args(argc, argv, 4, 4, &k, out);
	if (rc == 0)
		rc = join(argc, argv, 2, text, sizeof(text), out);
	if (rc != 0)
		return rc;
	return lb_conf_rule_default(ctx, &k, text, out);
}

static void
hits_str(bool counted, uint64_t n, char *buf, size_t len)
{
	if (counted)
		snprintf(buf, len, "%" PRIu64, n);
	else
		snprintf(buf, len, "-");
}

static int
cmd_rule_list(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	const struct lb_conf *c = ctx;
	const struct lb_conf_svc *sv;
	uint64_t hits[LB_CONF_MAX_RULES + 1];
	char h[24];
	bool counted;
	int rc;

	sv = svc_arg(ctx, argc, argv, out, &rc);
	if (sv == NULL)
		return rc;
	/* Counted by the workers; without a dataplane there is nothing to
	 * show, which a 0 would hide. */
	counted = c->rule_hits != NULL && sv->nb_rule <= LB_CONF_MAX_RULES &&
		  c->rule_hits(c->rule_hits_arg, &sv->key, hits,
			       sv->nb_rule) == 0;
	rc = lb_cmd_printf(out, "%3s  %10s  %s\n", "N", "HITS", "RULE");
	for (unsigned int i = 0; i < sv->nb_rule && rc == 0; i++) {
		hits_str(counted, hits[i], h, sizeof(h));
		rc = lb_cmd_printf(out, "%3u  %10s  %s\n", i + 1, h,
				   sv->rule[i]);
	}
	if (rc == 0) {
		hits_str(counted, hits[sv->nb_rule], h, sizeof(h));
		rc = lb_cmd_printf(out, "%3s  %10s  default %s\n", "-", h,
				   sv->rule_def[0] != '\0'
					   ? sv->rule_def
					   : "pool " LB_CONF_POOL_DEFAULT);
	}
	return rc;
}

#define SVC_ARGS "PROTO VIP:PORT"

const struct lb_cmd_def lb_conf_pool_cmds[LB_CONF_POOL_NB_CMDS] = {
	{
		.path = "pool add",
		.synopsis = SVC_ARGS " NAME [sched NAME] [check none|tcp|http|"
				     "service] [check-path PATH] "
				     "[check-status LO[-HI]] [check-port N] "
				     "[check-interval DUR] [check-timeout DUR] "
				     "[check-rise N] [check-fall N]",
		.help = "Add a named pool of backends to a service",
		.long_help =
			"A service without pools has one, its own, named "
			"`default` in rules:\nits backends and its "
			"`sched` option. A named pool has its own\n"
			"scheduler (`sched`, default adaptive) over the "
			"backends added to it\nwith `backend add ... pool "
			"NAME`, each with its weight and feedback.\n"
			"Connections go to the service's own pool unless "
			"content routing\nrules (`rule add`) send them to "
			"another by their first bytes; within\na named pool "
			"the dataplane picks a backend by weight.\n\n"
			"The backends of a named pool are health checked "
			"with the service's\ncheck until the pool is given "
			"one of its own: the `check` options take\nthe "
			"values, defaults and limits of the service's "
			"(`help service add`),\nand an option not given "
			"keeps the service's value. `check service`\n"
			"(alone) has the pool follow the service's check "
			"again.\n\n"
			"A name is a letter, then letters, digits, `-`, `_` "
			"or `.`, at most 31\nbytes. At most 15 named pools "
			"per service.\n\n"
			"Example: `pool add tcp 192.0.2.10:80 api sched rr "
			"check http check-path /healthz`",
		.fn = cmd_pool_add,
	},
	{
		.path = "pool set",
		.synopsis = SVC_ARGS " NAME OPTION VALUE [OPTION VALUE]...",
		.help = "Change the scheduler or health check of a named pool",
		.long_help =
			"OPTION is one of `pool add`'s: `sched`, `check`, "
			"`check-path`, ...\nA check option given to a pool "
			"that follows the service's check\ngives it a check "
			"of its own, the service's with that option changed;"
			"\n`check service` has it follow the service's "
			"again. A change of a\npool's check restarts the "
			"checks of that pool's backends only: their\nprobes "
			"in flight are dropped, their next one starts at "
			"once, and each\nkeeps its state (up, down, "
			"pending) until `check-rise` or `check-fall`\n"
			"results of the new check change it. The service's "
			"own pool takes its\noptions from `service set`.\n\n"
			"Example: `pool set tcp 192.0.2.10:80 api check-path "
			"/ready`",
		.fn = cmd_pool_set,
	},
	{
		.path = "pool del",
		.synopsis = SVC_ARGS " NAME",
		.help = "Delete a named pool of a service",
		.long_help = "Refused while a backend is in the pool or a "
			     "rule, or the rules'\ndefault, sends to it.",
		.fn = cmd_pool_del,
	},
	{
		.path = "pool list",
		.synopsis = SVC_ARGS,
		.help = "List a service's pools: scheduler, backends, weights, "
			"check",
		.long_help = "The service's own pool first (`default`, with "
			     "the service's scheduler\nand check), then the "
			     "named pools; WEIGHTS is the sum of the weights "
			     "of\nthe pool's backends. CHECK is the pool's "
			     "health check (`none`, `tcp`,\n`http PATH`), or "
			     "`service` for a pool that follows the service's.",
		.fn = cmd_pool_list,
	},
	{
		.path = "rule add",
		.synopsis = SVC_ARGS " [at N] RULE",
		.help = "Add a content routing rule to a service",
		.long_help =
			"RULE is one of\n\n"
			"- `sni NAME pool POOL`: the server name of a TLS "
			"ClientHello;\n"
			"- `[method M] [host NAME] [path P | path-prefix P] "
			"pool POOL`: an\nHTTP/1.x request's method, Host "
			"and path.\n\n"
			"NAME is a host name or `*.` and a suffix; P starts "
			"with `/`. Rules\nare tried in order, the first "
			"that matches chooses the pool\n(`default` is the "
			"service's own); `at N` inserts the rule at place\n"
			"N, else it goes last. At most 32 rules per service, "
			"their names,\npaths and methods 4096 bytes in all.\n\n"
			"The service must be tcp with `synproxy on`: the "
			"pool is chosen from\nthe first data, which the "
			"worker sees after its own handshake with\nthe "
			"client, and waits for (docs/dataplane.md, "
			"\"Delayed binding\").\n\n"
			"Example: `rule add tcp 192.0.2.10:443 sni "
			"api.example.com pool api`",
		.fn = cmd_rule_add,
	},
	{
		.path = "rule del",
		.synopsis = SVC_ARGS " N",
		.help = "Delete rule N (as `rule list` numbers them)",
		.long_help = NULL,
		.fn = cmd_rule_del,
	},
	{
		.path = "rule default",
		.synopsis = SVC_ARGS " pool POOL | refuse rst|404|421",
		.help = "Set what happens when no rule matches",
		.long_help =
			"`pool POOL` sends the connection to that pool "
			"(`pool default`, the\nservice's own, is what a "
			"service without rules does); `refuse`\nanswers "
			"with a RST, or an HTTP request with a 404 or a 421 "
			"(a TLS\nconnection gets a RST).",
		.fn = cmd_rule_default,
	},
	{
		.path = "rule list",
		.synopsis = SVC_ARGS,
		.help = "List a service's rules in order, and the default",
		.long_help =
			"HITS is the connections each rule, and the default, "
			"decided,\nsummed over the workers (`-` while no "
			"dataplane is attached\nor the service is not in its "
			"table yet). They are counted by\nthe rule's place: "
			"after `rule del` or `rule add ... at N` the\nrules "
			"behind it go on from the totals of their new "
			"numbers.\nThe same counts: `rule_hits` and "
			"`rule_default_hits` in the\nJSON of `service show`, "
			"`lb_rule_hits_total` in /metrics.",
		.fn = cmd_rule_list,
	},
};

static const struct lb_cmd_table pool_table = {
	.name = "pool",
	.ctx = "conf",
	.defs = lb_conf_pool_cmds,
	.n = LB_CONF_POOL_NB_CMDS,
};
LB_CMD_REGISTER(pool_table);
