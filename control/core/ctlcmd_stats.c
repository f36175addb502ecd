/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `stats`: how lb-control itself is doing, then the dataplane's counters
 * summed and per worker (drops and malformed frames by reason, flows,
 * feedback records by kind, admission by key class and verdict) and the
 * table generation each worker runs.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "ctlcmd_priv.h"
#include "lb/flow_table.h"
#include "lb/pkt_parse.h"

/* Counters of struct lb_worker_stats shown by name; the array ones
 * (verdict, drop) are shown by reason below. */
static const struct {
	const char *name;
	size_t off;
} wstat[] = {
#define W(f)                                                                   \
	{                                                                      \
#f, offsetof(struct lb_worker_stats, f)                        \
	}
	W(rx),
	W(tx),
	W(flows_created),
	W(syn_retries),
	W(deferred),
	W(deferq_joined),
	W(rst_sent),
	W(idle_probes),
	W(udp_unreplied),
	W(rst_no_flow),
	W(rst_limited),
	W(syn_hold_full),
	W(challenge_acks),
	W(pp_sent),
	W(pp_resent),
	W(synp_cookies),
	W(synp_acks),
	W(synp_acks_bad),
	W(synp_acks_expired),
	W(synp_handshakes),
	W(synp_held),
	W(synp_held_dropped),
	W(synp_syn_again),
	W(synp_auto_on),
	W(synp_auto_off),
	W(bind_waits),
	W(bind_routed),
	W(bind_refused),
	W(bind_dup),
	W(rebind_kept),
	W(rebind_closed),
	W(rebind_unchecked),
	{"bind_gaveup_timeout",
	 offsetof(struct lb_worker_stats, bind_gaveup) +
		 LB_BIND_GU_TIMEOUT * sizeof(uint64_t)},
	{"bind_gaveup_limit",
	 offsetof(struct lb_worker_stats, bind_gaveup) +
		 LB_BIND_GU_LIMIT * sizeof(uint64_t)},
	{"bind_gaveup_unknown",
	 offsetof(struct lb_worker_stats, bind_gaveup) +
		 LB_BIND_GU_UNKNOWN * sizeof(uint64_t)},
	{"bind_gaveup_malformed",
	 offsetof(struct lb_worker_stats, bind_gaveup) +
		 LB_BIND_GU_MALFORMED * sizeof(uint64_t)},
	{"bind_gaveup_closed",
	 offsetof(struct lb_worker_stats, bind_gaveup) +
		 LB_BIND_GU_CLOSED * sizeof(uint64_t)},
	{"bind_gaveup_full",
	 offsetof(struct lb_worker_stats, bind_gaveup) +
		 LB_BIND_GU_FULL * sizeof(uint64_t)},
	{"bind_gaveup_no_backend",
	 offsetof(struct lb_worker_stats, bind_gaveup) +
		 LB_BIND_GU_NO_BACKEND * sizeof(uint64_t)},
	W(redirect_out),
	W(redirect_in),
	W(arp_replies),
	W(arp_requests),
	W(echo_replies),
	W(icmp_translated),
	W(icmp_mtu_clamped),
	W(idle_sleeps),
	W(fb_dropped),
	W(l7_flows),
	W(l7_pool_full),
	W(l7_stopped),
	{"l7_unfollowed_reset",
	 offsetof(struct lb_worker_stats, l7_unfollowed) +
		 LB_L7_UNF_RESET * sizeof(uint64_t)},
	{"l7_unfollowed_admitted",
	 offsetof(struct lb_worker_stats, l7_unfollowed) +
		 LB_L7_UNF_ADMITTED * sizeof(uint64_t)},
	W(l7_db_errors),
	W(l7_blocks_lost),
	W(conf_switches),
	W(exc_to_kernel),
	W(exc_from_kernel),
	{"src_budget_dropped",
	 offsetof(struct lb_worker_stats, src_budget.dropped)},
	{"src_budget_evicted",
	 offsetof(struct lb_worker_stats, src_budget.evicted)},
	W(echo6_replies),
	W(nd_adverts),
	W(nd_solicits),
	W(nd_announces),
	W(icmp6_translated),
	W(nat64_out),
	W(nat64_in),
	W(nat64_mss_adjusted),
	W(icmp64_translated),
	W(flows_overdue),
	W(snat_ports_overdue),
	W(flows_expired),
	W(flows_reclaimed),
	W(expire_polls),
#undef W
};

/* Largest values, not counts: their total is the largest of the workers'. */
static const struct {
	const char *name;
	size_t off;
} wmax[] = {
	{"switch_max_ns", offsetof(struct lb_worker_stats, switch_max_ns)},
	{"expire_max", offsetof(struct lb_worker_stats, expire_max)},
	{"expire_max_ns", offsetof(struct lb_worker_stats, expire_max_ns)},
};

static uint64_t
wfield(const struct lb_worker_stats *st, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)st + off, sizeof(v));
	return v;
}

/* The budget of new flows per source the workers keep (lb-dataplane
 * --src-budget), on the line that ends the header and in @p dp. */
static int
src_budget_show(const struct lb_src_budget_conf *c, json_t *dp,
		struct lb_cmd_out *out)
{
	json_t *o = dp != NULL ? json_object() : NULL;
	int bad = dp != NULL && o == NULL;

	if (o != NULL) {
		bad |= jset_u64(o, "rate", c->rate);
		bad |= jset_u64(o, "burst", c->burst);
		bad |= jset_u64(o, "prefix", c->prefix);
		bad |= jset_u64(o, "sources", c->sources);
		bad |= jset(dp, "src_budget", o);
	}
	if (bad)
		return lb_cmd_error(out, -ENOMEM, "out of memory");
	if (c->rate == 0)
		return lb_cmd_printf(out, ")\nsrc-budget: off\n");
	return lb_cmd_printf(out,
			     ")\nsrc-budget: %" PRIu32 " new flows/s, burst %"
			     PRIu32 ", per /%" PRIu32 ", %" PRIu32
			     " sources per worker\n",
			     c->rate, c->burst, c->prefix, c->sources);
}

/* One stats row: a name, the total, one value per worker. */
struct srow {
	char name[48];
	uint64_t total;
	uint64_t w[LB_SHM_MAX_WORKERS];
};

static int
srow_emit(const struct srow *r, uint32_t nw, json_t *tot, json_t *const *pw,
	  const char *group, struct lb_cmd_out *out)
{
	char label[64];
	int rc, bad = 0;

	snprintf(label, sizeof(label), "%s%s%s", group != NULL ? group : "",
		 group != NULL ? " " : "", r->name);
	rc = lb_cmd_printf(out, "%-28s %14" PRIu64, label, r->total);
	for (uint32_t w = 0; w < nw && rc == 0; w++)
		rc = lb_cmd_printf(out, " %14" PRIu64, r->w[w]);
	if (rc == 0)
		rc = lb_cmd_printf(out, "\n");
	/* JSON: flat counters at the top, reasons under their group. */
	for (uint32_t w = 0; w <= nw && !bad; w++) {
		json_t *o = w == nw ? tot : pw[w];
		uint64_t v = w == nw ? r->total : r->w[w];

		if (group != NULL) {
			json_t *g = json_object_get(o, group);

			if (g == NULL) {
				g = json_object();
				bad |= jset(o, group, g);
			}
			if (!bad)
				bad |= jset_u64(g, r->name, v);
		} else {
			bad |= jset_u64(o, r->name, v);
		}
	}
	return rc != 0 ? rc
	       : bad   ? lb_cmd_error(out, -ENOMEM, "out of memory")
		       : 0;
}

/* Admission by key class and verdict (rows of classes in use), then the
 * borrowing that served them. */
static int
admit_rows(const struct lb_shm *shm, uint32_t nw, json_t *tot,
	   json_t *const *pw, struct lb_cmd_out *out)
{
	static const char *const extra[] = {"borrows", "borrowed",
					    "shm_atomics", "evictions",
					    "table_full"};
	struct srow r;
	int rc = 0;

	for (int k = 0;
	     k < LB_ADMIT_KEY_MAX * LB_ADMIT_VERDICT_MAX + 5 && rc == 0; k++) {
		int cls = k / LB_ADMIT_VERDICT_MAX, v = k % LB_ADMIT_VERDICT_MAX;
		bool is_extra = cls >= LB_ADMIT_KEY_MAX;

		memset(&r, 0, sizeof(r));
		if (is_extra)
			snprintf(r.name, sizeof(r.name), "%s",
				 extra[k - LB_ADMIT_KEY_MAX *
						   LB_ADMIT_VERDICT_MAX]);
		else
			snprintf(r.name, sizeof(r.name), "%s_%s",
				 lb_admit_key_names[cls],
				 lb_admit_verdict_name(v));
		for (uint32_t w = 0; w < nw; w++) {
			const struct lb_admit_stats *a = &shm->w[w]->st->admit;
			const uint64_t x[] = {a->borrows, a->borrowed,
					      a->shm_atomics, a->evictions,
					      a->table_full};

			r.w[w] = is_extra ? x[k - LB_ADMIT_KEY_MAX *
						      LB_ADMIT_VERDICT_MAX]
					  : a->n[cls][v];
			r.total += r.w[w];
		}
		if (r.total != 0 || is_extra)
			rc = srow_emit(&r, nw, tot, pw, "admit", out);
	}
	return rc;
}

static int
stats_rows(const struct lb_ctl *ctl, json_t *tot, json_t *const *pw,
	   struct lb_cmd_out *out)
{
	const struct lb_shm *shm = lb_view_shm(ctl->view);
	uint32_t nw = shm->nb_workers > LB_SHM_MAX_WORKERS ? LB_SHM_MAX_WORKERS
							   : shm->nb_workers;
	struct srow r;
	int rc = 0;

	for (size_t i = 0; i < sizeof(wstat) / sizeof(wstat[0]) && rc == 0;
	     i++) {
		memset(&r, 0, sizeof(r));
		snprintf(r.name, sizeof(r.name), "%s", wstat[i].name);
		for (uint32_t w = 0; w < nw; w++) {
			r.w[w] = wfield(shm->w[w]->st, wstat[i].off);
			r.total += r.w[w];
		}
		rc = srow_emit(&r, nw, tot, pw, NULL, out);
	}
	for (size_t i = 0; i < sizeof(wmax) / sizeof(wmax[0]) && rc == 0;
	     i++) {
		memset(&r, 0, sizeof(r));
		snprintf(r.name, sizeof(r.name), "%s", wmax[i].name);
		for (uint32_t w = 0; w < nw; w++) {
			r.w[w] = wfield(shm->w[w]->st, wmax[i].off);
			if (r.w[w] > r.total)
				r.total = r.w[w];
		}
		rc = srow_emit(&r, nw, tot, pw, NULL, out);
	}
	for (int k = 0; k < 4 && rc == 0; k++) {
		static const char *const names[] = {
			"flows_active",
			"flow_table_inserts",
			"flow_table_refused",
			"flow_table_dup",
		};
		memset(&r, 0, sizeof(r));
		snprintf(r.name, sizeof(r.name), "%s", names[k]);
		for (uint32_t w = 0; w < nw; w++) {
			struct lb_flow_stats fs;

			lb_flow_stats_get(shm->w[w]->ft, &fs);
			r.w[w] = k == 0	  ? fs.flows
				 : k == 1 ? fs.inserts
				 : k == 2 ? fs.refused
					  : fs.dup;
			r.total += r.w[w];
		}
		rc = srow_emit(&r, nw, tot, pw, NULL, out);
	}
	for (int d = 0; d < LB_DROP_MAX && rc == 0; d++) {
		memset(&r, 0, sizeof(r));
		snprintf(r.name, sizeof(r.name), "%s",
			 lb_drop_name((enum lb_drop)d));
		for (uint32_t w = 0; w < nw; w++) {
			r.w[w] = shm->w[w]->st->drop[d];
			r.total += r.w[w];
		}
		rc = srow_emit(&r, nw, tot, pw, "drop", out);
	}
	for (int v = LB_PKT_DROP_FIRST; v < LB_PKT_VERDICT_MAX && rc == 0;
	     v++) {
		memset(&r, 0, sizeof(r));
		snprintf(r.name, sizeof(r.name), "%s",
			 lb_pkt_verdict_name((enum lb_pkt_verdict)v));
		for (uint32_t w = 0; w < nw; w++) {
			r.w[w] = shm->w[w]->st->verdict[v];
			r.total += r.w[w];
		}
		rc = srow_emit(&r, nw, tot, pw, "malformed", out);
	}
	for (unsigned int k = 0; k < LB_FB_KIND_MAX && rc == 0; k++) {
		memset(&r, 0, sizeof(r));
		snprintf(r.name, sizeof(r.name), "%s", lb_view_fb_kind_name(k));
		for (uint32_t w = 0; w < nw; w++) {
			r.w[w] = lb_view_fb_stats(ctl->view, w)->kind[k];
			r.total += r.w[w];
		}
		rc = srow_emit(&r, nw, tot, pw, "feedback", out);
	}
	if (rc == 0)
		rc = admit_rows(shm, nw, tot, pw, out);
	if (rc == 0) {
		memset(&r, 0, sizeof(r));
		snprintf(r.name, sizeof(r.name), "invalid");
		for (uint32_t w = 0; w < nw; w++) {
			r.w[w] = lb_view_fb_stats(ctl->view, w)->invalid;
			r.total += r.w[w];
		}
		rc = srow_emit(&r, nw, tot, pw, "feedback", out);
	}
	return rc;
}

static json_t *
control_json(const struct lb_ctl *ctl)
{
	const struct lb_ctl_counters *c = &ctl->ctr;
	json_t *o = json_object();
	int bad = o == NULL;

	if (bad)
		return NULL;
	bad |= jset_u64(o, "pid", (uint64_t)getpid());
	bad |= jset(o, "attached", json_boolean(ctl->view != NULL));
	bad |= jset(o, "state_file",
		    ctl->state_path != NULL ? json_string(ctl->state_path)
					    : json_null());
	bad |= jset_u64(o, "conf_changes", lb_conf_generation(ctl->conf));
	bad |= jset_u64(o, "publishes", c->publishes);
	bad |= jset_u64(o, "publish_errors", c->publish_errors);
	bad |= jset_u64(o, "gc_publishes", c->gc_publishes);
	bad |= jset_u64(o, "state_writes", c->state_writes);
	bad |= jset_u64(o, "state_errors", c->state_errors);
	bad |= jset_u64(o, "api_connections", c->api_conns);
	bad |= jset_u64(o, "api_requests", c->api_requests);
	bad |= jset_u64(o, "api_errors", c->api_errors);
	bad |= jset_u64(o, "grace_ns_last", c->grace_ns_last);
	bad |= jset_u64(o, "grace_ns_max", c->grace_ns_max);
	bad |= jset_u64(o, "attaches", c->attaches);
	bad |= jset_u64(o, "cluster_borrows", c->cluster.borrows);
	bad |= jset_u64(o, "cluster_tokens", c->cluster.tokens);
	bad |= jset_u64(o, "cluster_errors", c->cluster.errors);
	bad |= jset_u64(o, "cluster_local_tokens", c->cluster.local);
	bad |= jset_u64(o, "cluster_down_ms", c->cluster.down_ms);
	bad |= jset_u64(o, "cluster_down", c->cluster.down);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int
stats_head(const struct lb_ctl *ctl, json_t *d, struct lb_cmd_out *out)
{
	const struct lb_shm *shm = lb_view_shm(ctl->view);
	const struct lb_dpconf *c = lb_view_conf(ctl->view);
	json_t *dp, *gens;
	int rc, bad = 0;

	rc = lb_cmd_printf(
		out,
		"lb-control: pid %d, %" PRIu64 " table(s) published, %" PRIu64
		" refused, state file %s\n",
		(int)getpid(), ctl->ctr.publishes, ctl->ctr.publish_errors,
		ctl->state_path != NULL ? ctl->state_path : "-");
	if (rc == 0 && ctl->ctr.cluster.borrows + ctl->ctr.cluster.errors > 0)
		rc = lb_cmd_printf(
			out,
			"cluster tier (Redis): %s, %" PRIu64
			" batch(es) for %" PRIu64 " token(s), %" PRIu64
			" error(s), %" PRIu64 " token(s) refilled locally\n",
			ctl->ctr.cluster.down ? "down" : "up",
			ctl->ctr.cluster.borrows, ctl->ctr.cluster.tokens,
			ctl->ctr.cluster.errors, ctl->ctr.cluster.local);
	if (rc != 0)
		return rc;
	if (shm == NULL) {
		bad |= jset(d, "dataplane", json_null());
		rc = lb_cmd_printf(out, "dataplane: not attached\n");
		return rc != 0 ? rc : bad ? -ENOMEM : 0;
	}
	rc = lb_cmd_printf(out,
			   "dataplane: pid %d, %u worker(s), %u port(s), "
			   "table generation %" PRIu64 " (workers at",
			   shm->dataplane_pid, shm->nb_workers, shm->nb_ports,
			   c != NULL ? c->gen : 0);
	dp = json_object();
	gens = json_array();
	bad |= dp == NULL || gens == NULL;
	for (uint32_t w = 0; w < shm->nb_workers && rc == 0 && !bad; w++) {
		uint64_t g = atomic_load_explicit(&shm->w[w]->conf_gen,
						  memory_order_acquire);

		rc = lb_cmd_printf(out, " %" PRIu64, g);
		bad |= json_array_append_new(gens, json_integer((json_int_t)g));
	}
	if (rc == 0)
		rc = src_budget_show(&shm->src_budget, dp, out);
	if (rc == 0)
		rc = lb_cmd_printf(out, "\n%-28s %14s", "COUNTER", "TOTAL");
	for (uint32_t w = 0; w < shm->nb_workers && rc == 0; w++) {
		char h[16];

		snprintf(h, sizeof(h), "W%u", w);
		rc = lb_cmd_printf(out, " %14s", h);
	}
	if (rc == 0)
		rc = lb_cmd_printf(out, "\n");
	if (!bad) {
		bad |= jset_u64(dp, "pid", (uint64_t)shm->dataplane_pid);
		bad |= jset_u64(dp, "workers", shm->nb_workers);
		bad |= jset_u64(dp, "ports", shm->nb_ports);
		bad |= jset_u64(dp, "conf_gen", c != NULL ? c->gen : 0);
		bad |= json_object_set(dp, "worker_conf_gen", gens);
		bad |= jset(d, "dataplane", dp);
		dp = NULL;
	}
	json_decref(gens);
	json_decref(dp);
	return rc != 0 ? rc : bad ? -ENOMEM : 0;
}

static int
cmd_stats(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_ctl *ctl = ctx;
	const struct lb_shm *shm = lb_view_shm(ctl->view);
	json_t *pw[LB_SHM_MAX_WORKERS] = {NULL};
	json_t *d, *tot = NULL, *arr = NULL;
	uint32_t nw = shm != NULL ? shm->nb_workers : 0;
	int rc, bad;

	if (nw > LB_SHM_MAX_WORKERS)
		nw = LB_SHM_MAX_WORKERS;

	rc = lb_cmd_want_args(out, argc, argv, 0, 0);
	if (rc != 0)
		return rc;
	d = json_object();
	bad = d == NULL || jset(d, "control", control_json(ctl)) != 0;
	if (!bad)
		rc = stats_head(ctl, d, out);
	if (rc == -ENOMEM)
		bad = 1;
	if (rc != 0 || bad || shm == NULL)
		goto out;
	tot = json_object();
	arr = json_array();
	bad |= tot == NULL || arr == NULL;
	for (uint32_t w = 0; w < nw && !bad; w++) {
		pw[w] = json_object();
		bad |= pw[w] == NULL || jset_u64(pw[w], "worker", w) != 0 ||
		       jset_u64(pw[w], "lcore", shm->w[w]->lcore) != 0;
	}
	if (!bad)
		rc = stats_rows(ctl, tot, pw, out);
	if (!bad && rc == 0 && ctl->xdp_stats != NULL)
		rc = ctl->xdp_stats(ctl->xdp, d, out);
	for (uint32_t w = 0; w < nw && !bad; w++) {
		bad |= json_array_append_new(arr, pw[w]);
		pw[w] = NULL;
	}
	if (!bad && rc == 0) {
		bad |= json_object_set_new(d, "total", tot);
		tot = NULL;
		bad |= json_object_set_new(d, "workers", arr);
		arr = NULL;
	}
out:
	for (uint32_t w = 0; w < nw; w++)
		json_decref(pw[w]);
	json_decref(tot);
	json_decref(arr);
	if (rc != 0 && rc != -ENOMEM) {
		json_decref(d);
		return rc;
	}
	return lb_ctlcmd_give_data(ctl, d, bad || rc != 0, out);
}

static const struct lb_cmd_def stats_cmds[] = {
	{
		.path = "stats",
		.synopsis = "",
		.help = "Show the dataplane's counters, summed and per worker",
		.long_help =
			"Packets received and sent, flows created and active, "
			"expiry (flows\ntimed out and not yet expired, the "
			"SNAT ports they hold, flows\nexpired and reclaimed, "
			"the most one poll expired), SYN retries, the\n"
			"deferred queue, redirects between "
			"workers, ARP and ICMP, drops by\nreason, malformed "
			"frames by parser verdict, feedback records by kind,\n"
			"and the generation of the published table next to "
			"the one each\nworker runs, and the budget of new "
			"flows per source the workers keep\n(lb-dataplane "
			"--src-budget) with what it dropped. The first lines "
			"say how\nlb-control itself is doing.",
		.fn = cmd_stats,
	},
};

static const struct lb_cmd_table stats_table = {
	.name = "ctl-stats",
	.ctx = "ctl",
	.defs = stats_cmds,
	.n = sizeof(stats_cmds) / sizeof(stats_cmds[0]),
};
LB_CMD_REGISTER(stats_table);
