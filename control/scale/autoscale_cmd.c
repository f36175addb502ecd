/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The `scale` commands (table "scale", context "as"): settings, pause and
 * resume, manual actions, and what `scale show` and `scale history` say,
 * as text and as JSON data; and the autoscaler's part of `save`.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autoscale_priv.h"
#include "spl.h"

/*
 * PROTO VIP:PORT [pool NAME]: the service, and the pool of it the
 * command is about (NULL: its own pool). @return the words read (2 or
 * 4), or a negative errno.
 */
static int
parse_unit(int argc, char **argv, struct lb_conf_svc_key *k, const char **pool,
	   struct lb_cmd_out *out)
{
	int rc;

	*pool = NULL;
	if (argc < 2)
		return lb_cmd_usage(out);
	rc = lb_conf_parse_key(argv, k, out);
	if (rc != 0)
		return rc;
	if (argc < 3 || strcmp(argv[2], "pool") != 0)
		return 2;
	if (argc < 4)
		return lb_cmd_error(out, -EINVAL,
				    "missing pool name after 'pool'");
	*pool = argv[3];
	return 4;
}

/* Why pool @p pool of service @p k has no autoscaler: no such pool, or
 * none set. */
static int
no_unit(struct lb_as *as, const struct lb_conf_svc_key *k, const char *pool,
	struct lb_cmd_out *out)
{
	const struct lb_conf_svc *sv =
		as->conf != NULL ? lb_conf_svc_find(as->conf, k) : NULL;
	char l[AS_LABEL_LEN], u[AS_LABEL_LEN];

	svc_label(k, l, sizeof(l));
	if (pool != NULL && (sv == NULL || lb_conf_pool_index(sv, pool) < 0))
		return lb_cmd_error(out, -ENOENT, "no pool %s in %s", pool, l);
	unit_label(k,
		   pool == NULL || strcmp(pool, LB_CONF_POOL_DEFAULT) == 0
			   ? ""
			   : pool,
		   u, sizeof(u));
	return lb_cmd_error(out, -ENOENT,
			    "%s%s is not autoscaled (see 'scale set')",
			    strcmp(u, l) == 0 ? "service " : "", u);
}

/* The unit named by the first words and its word count in @p words;
 * NULL with @p rc set when it is not autoscaled. */
static struct lb_as_svc *
want_unit(struct lb_as *as, int argc, char **argv, int *words,
	  struct lb_cmd_out *out, int *rc)
{
	struct lb_conf_svc_key k;
	struct lb_as_svc *s;
	const char *pool;

	*words = parse_unit(argc, argv, &k, &pool, out);
	if (*words < 0) {
		*rc = *words;
		return NULL;
	}
	*rc = 0;
	s = lb_as_pool_find(as, &k, pool);
	if (s == NULL)
		*rc = no_unit(as, &k, pool, out);
	return s;
}

/* Words of a unit at the head of @p argv (2 or 4), for the checks of
 * the arguments that follow it. */
static int
unit_words(int argc, char **argv)
{
	return argc >= 3 && strcmp(argv[2], "pool") == 0 ? 4 : 2;
}

static int
cmd_set(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_as *as = ctx;
	struct lb_conf_svc_key k;
	struct lb_as_conf c;
	const struct lb_as_cfg *x;
	const char *pool;
	int n;

	n = parse_unit(argc, argv, &k, &pool, out);
	if (n < 0)
		return n;
	x = lb_as_cfg_find(&as->cfg, &k, pool);
	if (x != NULL)
		c = x->c;
	else
		lb_as_conf_default(&c);
	n = lb_as_opts_parse(&c, argc - n, argv + n, out);
	if (n != 0)
		return n;
	return lb_as_pool_set(as, &k, pool, &c, out);
}

static int
cmd_del(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_as *as = ctx;
	struct lb_as_svc *s;
	int rc, w = unit_words(argc, argv);

	rc = lb_cmd_want_args(out, argc, argv, 2, w);
	if (rc == 0 && (s = want_unit(as, argc, argv, &w, out, &rc)) != NULL)
		rc = lb_as_pool_del(as, &s->key, s->pool);
	return rc;
}

static int
pause_resume(struct lb_as *as, int argc, char **argv, bool pause,
	     struct lb_cmd_out *out)
{
	struct lb_as_svc *s;
	struct lb_as_cfg *x;
	int rc, w = unit_words(argc, argv);

	rc = lb_cmd_want_args(out, argc, argv, 2, w);
	if (rc != 0 || (s = want_unit(as, argc, argv, &w, out, &rc)) == NULL)
		return rc;
	x = lb_as_cfg_find(&as->cfg, &s->key, s->pool);
	if (x->paused == pause)
		return lb_cmd_error(out, -EINVAL, "already %s",
				    pause ? "paused" : "running");
	x->paused = pause;
	as->gen++;
	lb_as_reconcile(as);
	return 0;
}

static int
cmd_pause(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	return pause_resume(ctx, argc, argv, true, out);
}

static int
cmd_resume(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	return pause_resume(ctx, argc, argv, false, out);
}

static int
manual(struct lb_as *as, int argc, char **argv, int sign,
       struct lb_cmd_out *out)
{
	struct lb_as_svc *s;
	uint64_t n = 1;
	int rc, w = unit_words(argc, argv);

	rc = lb_cmd_want_args(out, argc, argv, 2, w + 1);
	if (rc != 0 || (s = want_unit(as, argc, argv, &w, out, &rc)) == NULL)
		return rc;
	if (argc == w + 1) {
		rc = lb_cmd_parse_u64(argv[w], "count", 1, LB_AS_INST_MAX, &n,
				      out);
		if (rc != 0)
			return rc;
	}
	s->manual += sign * (int32_t)n;
	return lb_cmd_printf(out,
			     "queued: scale %s by %" PRIu64
			     " (carried out at the next tick)\n",
			     sign > 0 ? "up" : "down", n);
}

static int
cmd_up(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	return manual(ctx, argc, argv, 1, out);
}

static int
cmd_down(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	return manual(ctx, argc, argv, -1, out);
}

static json_t *
inst_json(const struct lb_as_inst *i, uint64_t now)
{
	char a[LB_CMD_IP_ADDR_STRLEN];
	json_t *o = json_object();
	int bad = o == NULL;

	if (bad)
		return NULL;
	bad |= jset(o, "id", json_integer(i->id));
	bad |= jset(o, "backend",
		    lb_as_inst_placed(i)
			    ? json_string(lb_cmd_fmt_ip_port(&i->ip, i->port, a))
			    : json_null());
	bad |= jset(o, "origin", json_string(lb_as_origin_name(i->origin)));
	bad |= jset(o, "state", json_string(lb_as_state_name(i->state)));
	bad |= jset(o, "in_state_ms",
		    json_integer(now > i->since_ns
					 ? (json_int_t)((now - i->since_ns) /
							1000000)
					 : 0));
	bad |= jset(o, "driver_id", json_string(i->drv_id));
	bad |= jset(o, "note", json_string(i->why));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static uint64_t
as_now(const struct lb_as *as)
{
	return as->now != NULL ? as->now(as->now_arg) : 0;
}

static json_t *
cluster_json(const struct lb_as_cluster *c)
{
	return json_pack("{s:s, s:I, s:s, s:b, s:I, s:i, s:I, s:I, s:I, s:I}",
			 "role", c->leader ? "leader" : "follower", "term",
			 (json_int_t)c->term, "leader", c->leader_id,
			 "redis_up", c->redis_up, "list_seq",
			 (json_int_t)c->seq, "hosts", (int)c->hosts,
			 "acquired", (json_int_t)c->acquired, "lost",
			 (json_int_t)c->lost, "applied",
			 (json_int_t)c->applied, "fenced",
			 (json_int_t)c->fenced);
}

static json_t *
svc_json(struct lb_as *as, struct lb_as_svc *s)
{
	const struct lb_as_conf *c = &s->conf;
	uint32_t n[LB_AS_STATE_COUNT];
	char l[AS_LABEL_LEN];
	json_t *o = json_object(), *conf = json_object(), *st = json_object(),
	       *insts = json_array(), *cnt = json_object();
	uint64_t now = as_now(as);
	int bad = o == NULL || conf == NULL || st == NULL || insts == NULL ||
		  cnt == NULL;

	if (!bad) {
		svc_label(&s->key, l, sizeof(l));
		bad |= jset(o, "service", json_string(l));
		bad |= jset(o, "pool",
			    json_string(s->pool[0] != '\0'
						? s->pool
						: LB_CONF_POOL_DEFAULT));
		bad |= jset(o, "paused", json_boolean(s->paused));
		bad |= lb_as_opts_json(c, conf);
		lb_as_inst_count(s, n);
		for (unsigned int k = 0; k < LB_AS_STATE_COUNT; k++)
			bad |= jset(cnt, lb_as_state_name(k),
				    json_integer(n[k]));
		for (unsigned int j = 0; j < lb_as_nb_inst(s); j++) {
			json_t *x = inst_json(lb_as_inst_at(s, j), now);

			bad |= x == NULL || json_array_append_new(insts, x);
		}
		bad |= jset(st, "evaluations", json_integer(s->st.evals));
		bad |= jset(st, "ups", json_integer(s->st.ups));
		bad |= jset(st, "downs", json_integer(s->st.downs));
		bad |= jset(st, "manual", json_integer(s->st.manual));
		bad |= jset(st, "started", json_integer(s->st.started));
		bad |= jset(st, "joined", json_integer(s->st.joined));
		bad |= jset(st, "drained", json_integer(s->st.drained));
		bad |= jset(st, "failed", json_integer(s->st.failed));
		bad |= jset(st, "driver_errors",
			    json_integer(s->st.drv_errors));
		bad |= jset(st, "drain_timeouts",
			    json_integer(s->st.drain_timeouts));
		bad |= jset(st, "adopted", json_integer(s->st.adopted));
		if (s->cl.on)
			bad |= jset(o, "cluster", cluster_json(&s->cl));
	}
	bad |= jset(o, "config", conf);
	bad |= jset(o, "counts", cnt);
	bad |= jset(o, "instances", insts);
	bad |= jset(o, "stats", st);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int
give(struct lb_as *as, json_t *d, struct lb_cmd_out *out)
{
	if (d == NULL)
		return lb_cmd_error(out, -ENOMEM, "out of memory");
	if (as->data == NULL) {
		json_decref(d);
		return 0;
	}
	json_decref(*as->data);
	*as->data = d;
	return 0;
}

static int
show_text(struct lb_as *as, struct lb_as_svc *s, struct lb_cmd_out *out)
{
	const struct lb_as_conf *c = &s->conf;
	char l[AS_LABEL_LEN], d1[LB_CMD_DURATION_STRLEN], d2[LB_CMD_DURATION_STRLEN],
		a[LB_CMD_IP_ADDR_STRLEN];
	uint32_t n[LB_AS_STATE_COUNT];
	uint64_t now = as_now(as);
	int rc;

	unit_label(&s->key, s->pool, l, sizeof(l));
	lb_as_inst_count(s, n);
	rc = lb_cmd_printf(out, "%s: policy %s%s, driver %s, min %u max %u\n",
			   l, lb_as_policy_name(c->policy),
			   s->paused ? " (paused)" : "", c->driver,
			   c->guard.min_instances, c->guard.max_instances);
	if (rc == 0 && c->policy == LB_AS_POLICY_SPL)
		rc = lb_cmd_printf(out,
				   "  spl: lower %g upper %g decay %s %s\n",
				   c->lower, c->upper, c->decay,
				   lb_cmd_fmt_duration(c->decay_ns, d1));
	if (rc == 0 && c->policy == LB_AS_POLICY_INFLIGHT)
		rc = lb_cmd_printf(out,
				   "  inflight: queue-length %u rounds %u\n",
				   c->queue_length, c->rounds);
	if (rc == 0)
		rc = lb_cmd_printf(
			out,
			"  guard: interval %s up-cooldown %s down-cooldown ",
			lb_cmd_fmt_duration(c->interval_ns, d1),
			lb_cmd_fmt_duration(c->guard.up_cooldown_ns, d2));
	if (rc == 0)
		rc = lb_cmd_printf(
			out, "%s down-window %s ",
			lb_cmd_fmt_duration(c->guard.down_cooldown_ns, d1),
			lb_cmd_fmt_duration(c->guard.down_window_ns, d2));
	if (rc == 0)
		rc = lb_cmd_printf(
			out,
			"startup-timeout %s drain-timeout %s pending-guard "
			"%s\n",
			lb_cmd_fmt_duration(c->guard.startup_timeout_ns, d1),
			lb_cmd_fmt_duration(c->drain_timeout_ns, d2),
			c->guard.pending_guard ? "on" : "off");
	if (rc == 0 && s->cl.on)
		rc = lb_cmd_printf(out,
				   "  cluster: %s, term %llu, leader %s, "
				   "list %llu, %u host(s), redis %s\n",
				   s->cl.leader ? "leader" : "follower",
				   (unsigned long long)s->cl.term,
				   s->cl.leader_id[0] != '\0' ? s->cl.leader_id
							      : "unknown",
				   (unsigned long long)s->cl.seq, s->cl.hosts,
				   s->cl.redis_up ? "up" : "down");
	else if (rc == 0 && c->cluster)
		rc = lb_cmd_printf(out, "  cluster: on, but lb-control has "
					"no --redis: deciding alone\n");
	if (rc == 0)
		rc = lb_cmd_printf(out,
				   "  instances: %u active, %u pending, %u "
				   "starting, %u draining, %u stopping, %u "
				   "failed\n",
				   n[LB_AS_ACTIVE], n[LB_AS_PENDING],
				   n[LB_AS_STARTING], n[LB_AS_DRAINING],
				   n[LB_AS_STOPPING], n[LB_AS_FAILED]);
	if (rc == 0)
		rc = lb_cmd_printf(out, "  %-5s %-21s %-7s %-9s %8s %s\n", "ID",
				   "BACKEND", "ORIGIN", "STATE", "FOR", "NOTE");
	for (unsigned int j = 0; j < lb_as_nb_inst(s) && rc == 0; j++) {
		const struct lb_as_inst *i = lb_as_inst_at(s, j);
		double age = now > i->since_ns
				     ? (double)(now - i->since_ns) / 1e9
				     : 0;

		rc = lb_cmd_printf(
			out, "  %-5u %-21s %-7s %-9s %7.1fs %s\n", i->id,
			lb_as_inst_placed(i)
				? lb_cmd_fmt_ip_port(&i->ip, i->port, a)
				: "-",
			lb_as_origin_name(i->origin),
			lb_as_state_name(i->state), age, i->why);
	}
	return rc;
}

static int
cmd_show(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_as *as = ctx;
	struct lb_as_svc *one = NULL;
	json_t *d = json_object(), *arr = json_array();
	int rc, w = unit_words(argc, argv), bad = d == NULL || arr == NULL;

	rc = lb_cmd_want_args(out, argc, argv, 0, w);
	if (rc == 0 && argc > 0 &&
	    (one = want_unit(as, argc, argv, &w, out, &rc)) == NULL)
		rc = rc != 0 ? rc : -ENOENT;
	if (rc != 0) {
		json_decref(d);
		json_decref(arr);
		return rc;
	}
	for (unsigned int i = 0; i < as->nb_rt && rc == 0; i++) {
		struct lb_as_svc *s = as->rt[i];
		json_t *x;

		if ((one != NULL && s != one) || s->deleted)
			continue;
		x = svc_json(as, s);
		bad |= x == NULL || json_array_append_new(arr, x);
		rc = show_text(as, s, out);
	}
	if (rc == 0 && as->nb_rt == 0)
		rc = lb_cmd_printf(out, "no autoscaled service\n");
	bad |= d != NULL && json_object_set(d, "services", arr);
	json_decref(arr);
	if (rc != 0 || bad) {
		json_decref(d);
		return rc != 0 ? rc
			       : lb_cmd_error(out, -ENOMEM, "out of memory");
	}
	return give(as, d, out);
}

static int
cmd_history(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_as *as = ctx;
	struct lb_as_svc *s;
	uint64_t n = 20, now = as_now(as);
	json_t *d = NULL, *arr;
	unsigned int from;
	int rc, bad, w = unit_words(argc, argv);

	rc = lb_cmd_want_args(out, argc, argv, 2, w + 1);
	if (rc != 0 || (s = want_unit(as, argc, argv, &w, out, &rc)) == NULL)
		return rc;
	if (argc == w + 1) {
		rc = lb_cmd_parse_u64(argv[w], "count", 1, LB_AS_HIST, &n, out);
		if (rc != 0)
			return rc;
	}
	from = s->hist_len > n ? s->hist_len - (unsigned int)n : 0;
	arr = json_array();
	bad = arr == NULL;
	rc = lb_cmd_printf(out, "%9s %-6s %-8s %9s %4s %4s %7s %-14s %5s %s\n",
			   "AGO", "MODE", "POLICY", "LOAD", "RUN", "PEND",
			   "DESIRED", "ACTION", "COUNT", "REASON");
	for (unsigned int i = from; i < s->hist_len && rc == 0; i++) {
		const struct lb_as_decision *x = lb_as_hist_at(s, i);
		double ago =
			now > x->now_ns ? (double)(now - x->now_ns) / 1e9 : 0;
		json_t *e = json_object();

		bad |= e == NULL;
		if (e != NULL) {
			bad |= jset(e, "ago_s", json_real(ago));
			bad |= jset(e, "time_ns",
				    json_integer((json_int_t)x->now_ns));
			bad |= jset(e, "manual", json_boolean(x->manual));
			bad |= jset(e, "policy",
				    json_string(lb_as_policy_name(x->policy)));
			bad |= jset(e, "load", json_real(x->load));
			bad |= jset(e, "running", json_integer(x->running));
			bad |= jset(e, "pending", json_integer(x->pending));
			bad |= jset(e, "desired", json_real(x->desired));
			bad |= jset(e, "action",
				    json_string(lb_scale_guard_action_name(
					    x->action)));
			bad |= jset(e, "count", json_integer(x->count));
			bad |= jset(e, "target", json_integer(x->target));
			bad |= jset(e, "reason", json_string(x->reason));
			bad |= json_array_append_new(arr, e);
		}
		rc = lb_cmd_printf(out,
				   "%8.1fs %-6s %-8s %9.3f %4u %4u %7.2f "
				   "%-14s %5u %s\n",
				   ago, x->manual ? "manual" : "auto",
				   lb_as_policy_name(x->policy), x->load,
				   x->running, x->pending, x->desired,
				   lb_scale_guard_action_name(x->action),
				   x->count, x->reason);
	}
	if (!bad) {
		d = json_object();
		bad = d == NULL || json_object_set(d, "decisions", arr);
	}
	json_decref(arr);
	if (rc != 0 || bad) {
		json_decref(d);
		return rc != 0 ? rc
			       : lb_cmd_error(out, -ENOMEM, "out of memory");
	}
	return give(as, d, out);
}

#define SVC_ARGS "PROTO VIP:PORT [pool NAME]"
/* `scale set`'s long help; the names come from the registries of decay
 * functions and orchestrator drivers (set_help()). */
#define SET_HELP_FMT                                                           \
	"With `pool NAME` (a pool of the service, `pool add`) the "            \
	"policy scales\nthat pool alone: its inputs are that pool's "          \
	"backends, its instances\njoin it. Without it, the service's "         \
	"own pool.\n\n"                                                        \
	"Options (defaults and their sources in "                              \
	"docs/policies.md, autoscaler):\n\n"                                   \
	"- `policy spl|inflight`: the SPL patent's policy "                    \
	"(default) or WSO2's\n  requests-in-flight policy.\n"                  \
	"- `lower X`, `upper X`: SPL thresholds; default 0.2 "                 \
	"and 0.8.\n"                                                           \
	"- `decay %s`, `decay-time "                                           \
	"DUR`: SPL decay;\n  default halflife 1s.\n"                           \
	"- `queue-length N`, `rounds N`: inflight's "                          \
	"queue_length_per_node and\n  rounds_to_average; "                     \
	"default 3 and 2.\n"                                                   \
	"- `min N`, `max N`: instance bounds; default 1 and "                  \
	"5.\n"                                                                 \
	"- `tolerance X`: dead band as a fraction of the "                     \
	"count; default 0.\n"                                                  \
	"- `up-window DUR`, `down-window DUR`: stabilization "                 \
	"windows; default\n  0 and 5m.\n"                                      \
	"- `up-cooldown DUR`, `down-cooldown DUR`: no action "                 \
	"of that kind this\n  long after any action; default "                 \
	"15s.\n"                                                               \
	"- `max-up-step N`: most instances one scale-up adds; "                \
	"default 4.\n"                                                         \
	"- `pending-guard on|off`: no scale-up while an "                      \
	"instance is pending;\n  default on.\n"                                \
	"- `startup-timeout DUR`: an instance not healthy by "                 \
	"then is removed;\n  default 1m.\n"                                    \
	"- `drain-timeout DUR`: longest drain before the "                     \
	"instance is stopped;\n  default 30s.\n"                               \
	"- `interval DUR`: evaluation period; default 1s.\n"                   \
	"- `driver %s`, `command CMD`, "                                       \
	"`target T`,\n  `inst-port N`, `exec-timeout DUR`: "                   \
	"the orchestrator (see\n  docs/operating.md, "                         \
	"autoscaling).\n"                                                      \
	"- `cluster on|off`: decided once for the lb-controls "                \
	"on one Redis\n  (lb-control --redis): the holder of "                 \
	"the service's lease scales,\n  the others apply its "                 \
	"instance list (driver exec); default off.\n\n"                        \
	"Example: `scale set tcp 192.0.2.10:80 policy "                        \
	"inflight queue-length 20 min 1 max 4`"

static const struct lb_cmd_def as_cmds[] = {
	{
		.path = "scale set",
		.synopsis = SVC_ARGS " OPTION VALUE...",
		.help = "Autoscale a service or one of its pools, or change "
			"how",
		.long_help = NULL, /* set_help() */
		.fn = cmd_set,
	},
	{
		.path = "scale del",
		.synopsis = SVC_ARGS,
		.help = "Stop autoscaling a service or pool; its instances "
			"are drained and stopped",
		.long_help = NULL,
		.fn = cmd_del,
	},
	{
		.path = "scale show",
		.synopsis = "[" SVC_ARGS "]",
		.help = "Show autoscaling settings and the instance "
			"repository",
		.long_help = NULL,
		.fn = cmd_show,
	},
	{
		.path = "scale pause",
		.synopsis = SVC_ARGS,
		.help = "Take manual control: no automatic scaling actions",
		.long_help = "Instances that never become healthy are still "
			     "removed at their start-up\ntimeout, and `scale "
			     "up|down` still work.",
		.fn = cmd_pause,
	},
	{
		.path = "scale resume",
		.synopsis = SVC_ARGS,
		.help = "Give control back to the autoscaler",
		.long_help = NULL,
		.fn = cmd_resume,
	},
	{
		.path = "scale history",
		.synopsis = SVC_ARGS " [N]",
		.help = "Show the last N decisions (default 20) with their "
			"inputs and reasons",
		.long_help = NULL,
		.fn = cmd_history,
	},
	{
		.path = "scale up",
		.synopsis = SVC_ARGS " [N]",
		.help = "Start N instances (default 1), within min/max",
		.long_help = "Carried out at the next tick through the same "
			     "path as the\nautoscaler's own actions, and "
			     "recorded in the history.",
		.fn = cmd_up,
	},
	{
		.path = "scale down",
		.synopsis = SVC_ARGS " [N]",
		.help = "Drain and stop N instances (default 1), within "
			"min/max",
		.long_help = NULL,
		.fn = cmd_down,
	},
};

/* `save`: the configuration, then the autoscaler's settings, which
 * name its services and so come after them. */
static int
save_scale(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	(void)argc;
	(void)argv;
	return lb_as_save(ctx, out);
}

static const struct lb_cmd_ext as_ext[] = {
	{
		.path = "save",
		.long_help = "Then the autoscaler's settings, after the "
			     "services they name. Backends\nstarted by an "
			     "orchestrator are left out: the orchestrator "
			     "starts its\ninstances again.",
		.fn = save_scale,
	},
};

static int
set_help(void *ctx, struct lb_cmd_def *defs, unsigned int n)
{
	struct lb_as *as = ctx;
	char drv[256] = "NAME", decay[256];

	if (as->drv_names != NULL)
		as->drv_names(drv, sizeof(drv), "|");
	lb_spl_decay_names(decay, sizeof(decay), "|");
	if ((size_t)snprintf(as->set_help, sizeof(as->set_help), SET_HELP_FMT,
			     decay, drv) >= sizeof(as->set_help))
		return -ENOSPC;
	for (unsigned int i = 0; i < n; i++)
		if (defs[i].fn == cmd_set)
			defs[i].long_help = as->set_help;
	return 0;
}

const struct lb_cmd_table lb_as_cmd_table = {
	.name = "scale",
	.ctx = "as",
	.defs = as_cmds,
	.n = sizeof(as_cmds) / sizeof(as_cmds[0]),
	.ext = as_ext,
	.n_ext = sizeof(as_ext) / sizeof(as_ext[0]),
	.prepare = set_help,
};
