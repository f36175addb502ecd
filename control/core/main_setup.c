/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What lb-control sets up around its configuration: the autoscaler, the
 * health checks and the command registry (also for the command
 * reference, without a dataplane), then the API socket, /metrics and
 * the Redis tier, and last the privileges it no longer needs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apisrv_priv.h"
#include "autoscale.h"
#include "health.h"
#include "httpd_priv.h"
#include "leader.h"
#include "lb/sched.h"
#include "main_priv.h"
#include "metrics.h"
#include "orch.h"
#include "privs.h"
#include "scale_priv.h"
#include "status.h"

static int
sched_known(const char *name)
{
	return lb_sched_find(name) != NULL;
}

/* The metrics listener's and the status page's counts, as they are when
 * /metrics is asked for. */
static void
http_counters(struct lb_control *m)
{
	struct lb_httpd_stats st = lb_httpd_stats(m->httpd);

	m->ctl.ctr.http_requests = lb_httpd_requests(m->httpd);
	m->ctl.ctr.http_bad_request = st.bad_request;
	m->ctl.ctr.http_not_found = st.not_found;
	m->ctl.ctr.http_bad_method = st.bad_method;
	m->ctl.ctr.http_errors = st.errors;
	if (m->status != NULL)
		m->ctl.ctr.status_refused = lb_status_refused(m->status);
}

static int
metrics_body(void *ctx, struct lb_cmd_out *out)
{
	struct lb_control *m = ctx;

	http_counters(m);
	return lb_metrics_format(&m->ctl, out);
}

static int
status_page(void *ctx, const char *path, const struct lb_httpd_query *q,
	    const char **type, struct lb_cmd_out *out)
{
	struct lb_control *m = ctx;

	return lb_status_page(m->status, path, lb_httpd_query_get(q, "since"),
			      wall_ms(), type, out);
}

static uint64_t
as_clock(void *arg)
{
	(void)arg;
	return mono_ns();
}

/* ---- health checks ---- */

/* lb_pub's hook: the health of every backend, in each table built. */
static void
health_mark(void *ctx, struct lb_dpconf *d)
{
	struct lb_control *m = ctx;

	lb_health_mark(m->ctl.health, d, mono_ns());
}

static void
on_health(void *ctx, const struct lb_conf_svc_key *k,
	  const struct lb_conf_ip *ip, uint16_t port, enum lb_health_state from,
	  enum lb_health_state to)
{
	struct lb_control *m = ctx;
	char s[LB_CTLCMD_SVC_STRLEN], a[LB_CMD_IP_ADDR_STRLEN];
	struct lb_health_be_info i;

	if (lb_health_get_ip(m->ctl.health, k, ip, port, &i) != 0)
		i.has_last = false;
	lb_control_log("health: %s %s %s -> %s%s%s",
		       lb_ctlcmd_key_str(k, s),
		       lb_cmd_fmt_ip_port(ip, port, a),
		       lb_health_state_name(from), lb_health_state_name(to),
		       i.has_last ? ", last check " : "",
		       i.has_last ? lb_health_why_name(i.last) : "");
	m->health_changed = true;
}

/*
 * The registry: every command table the modules linked in registered
 * (LB_CMD_REGISTER()), each given the context it names.
 */
static int
registry_build(struct lb_control *m)
{
	const struct lb_cmd_bind binds[] = {
		{"conf", m->ctl.conf},
		{"ctl", &m->ctl},
		{"as", m->ctl.as},
#ifdef LB_WITH_STEER
		{"steer", m->steer},
#endif
	};
	const char *unbound;
	int rc;

	rc = lb_cmd_reg_build(m->reg, binds, sizeof(binds) / sizeof(binds[0]),
			      &unbound);
	if (rc == 0 && unbound != NULL) {
		lb_control_log(
			"command table '%s' needs a context lb-control does "
			"not give",
			unbound);
		rc = -ENOENT;
	}
	return rc;
}

int
lb_control_setup(struct lb_control *m)
{
	int rc;

	m->reg = lb_cmd_reg_create();
	m->ctl.conf = lb_conf_create(sched_known);
	m->backup = lb_conf_create(sched_known);
	if (m->reg == NULL || m->ctl.conf == NULL || m->backup == NULL)
		return -ENOMEM;
	lb_conf_set_sched_names(m->ctl.conf, lb_sched_names);
	lb_conf_set_sched_names(m->backup, lb_sched_names);
	lb_conf_set_rule_hits(m->ctl.conf, lb_ctlcmd_rule_hits, &m->ctl);
	m->ctl.as = lb_as_create(m->ctl.conf);
	if (m->ctl.as == NULL)
		return -ENOMEM;
	lb_as_set_data_slot(m->ctl.as, &m->ctl.data);
	lb_as_set_clock(m->ctl.as, as_clock, NULL);
	lb_as_set_driver_names(m->ctl.as, lb_orch_names);
	m->ctl.health = lb_health_create(m->ctl.conf);
	if (m->ctl.health == NULL ||
	    lb_health_listen(m->ctl.health, on_health, m) != 0)
		return -ENOMEM;
	m->pub.mark = health_mark;
	m->pub.mark_ctx = m;
	m->scale = lb_scale_create(&m->ctl, lb_control_scale_commit, m);
	if (m->scale == NULL)
		return -ENOMEM;
	rc = lb_control_steer_setup(m);
	return rc == 0 ? registry_build(m) : rc;
}

/* The command reference, without the EAL: Markdown (docs/lbctl.md), or
 * with --cmd-table C source that lbctl is built with. */
int
lb_control_reference(struct lb_control *m)
{
	struct lb_cmd_out out;
	int rc;

	rc = lb_control_setup(m);
	lb_cmd_out_init(&out);
	if (rc == 0 && m->o.cmd_table)
		rc = lb_cmd_csource(m->reg, "lb_cmd_table", &out);
	else if (rc == 0)
		rc = lb_cmd_markdown(m->reg, "lbctl command reference", &out);
	if (rc == 0)
		fputs(lb_cmd_out_text(&out), stdout);
	else
		lb_control_log("cannot build the command reference: %s",
			       strerror(-rc));
	lb_cmd_out_free(&out);
	return rc == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* The name in scaling leases: --scale-id, or the host name. */
static int
scale_id(const char *opt, char *id, size_t len)
{
	if (opt != NULL) {
		snprintf(id, len, "%s", opt);
		return 0;
	}
	if (gethostname(id, len - 1) != 0)
		snprintf(id, len, "lb-control");
	id[len - 1] = '\0';
	return 0;
}

int
lb_control_listen(struct lb_control *m)
{
	char err[256];

	m->api =
		lb_apisrv_create_gid(m->o.socket, m->o.sock_mode, m->o.sock_gid,
				     &lb_control_api_ops, m, err, sizeof(err));
	if (m->api == NULL) {
		lb_control_log("%s", err);
		return -1;
	}
	if (m->o.metrics != NULL) {
		m->httpd = lb_httpd_start(m->o.metrics, metrics_body, m, err,
					  sizeof(err));
		if (m->httpd == NULL) {
			lb_control_log("%s", err);
			return -1;
		}
		/* The status page shares the listener, and so its access
		 * rules (docs/security.md). */
		m->status = lb_status_create(&m->ctl, m->reg);
		if (m->status == NULL) {
			lb_control_log("status page: out of memory");
			return -1;
		}
		lb_httpd_set_pages(m->httpd, status_page, m);
	}
	if (m->o.redis != NULL) {
		char host[256], id[128];
		uint16_t port;

		if (lb_cluster_parse_addr(m->o.redis, host, sizeof(host),
					  &port) != 0 ||
		    (m->cluster = lb_cluster_create(
			     host, port, &m->ctl.ctr.cluster)) == NULL) {
			lb_control_log("--redis: '%s' is not HOST:PORT",
				       m->o.redis);
			return -1;
		}
		if (scale_id(m->o.scale_id, id, sizeof(id)) != 0 ||
		    (m->leader = lb_leader_create(host, port, id)) == NULL) {
			lb_control_log("--scale-id: '%s' is not a name of 1 to "
				       "63 bytes without spaces or '/'",
				       id);
			return -1;
		}
		lb_scale_set_cluster(m->scale, m->leader);
		lb_control_log("scaling leases as %s",
			       lb_leader_token(m->leader));
	}
	return 0;
}

/*
 * Start-up is over: the EAL is attached, the sockets bound, the state
 * read. What is left to do needs far less than root (docs/security.md).
 */
int
lb_control_drop_privs(struct lb_control *m)
{
	struct lb_privs_report r;
	char err[128], kept[512];

	if (lb_privs_drop(m->o.keep_caps, true, &r, err, sizeof(err)) != 0) {
		lb_control_log("cannot drop privileges: %s", err);
		return -1;
	}
	lb_privs_format(r.after, kept, sizeof(kept));
	if (r.before != r.after || r.bset_dropped > 0)
		lb_control_log(
			"capabilities kept: %s; %u left the bounding set%s",
			kept, r.bset_dropped,
			r.bset_denied ? " (not all: no CAP_SETPCAP)" : "");
	return 0;
}
