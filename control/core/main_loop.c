/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-control's event loop: one thread, driven by poll(2), serves the API
 * socket, /metrics and the health probes, and on every tick drains the
 * workers' feedback, runs the autoscaler and republishes when due.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "apisrv_priv.h"
#include "govview.h"
#include "health.h"
#include "httpd_priv.h"
#include "main_priv.h"
#include "scale_priv.h"
#include "status.h"

#define SLOW_NS 1000000000ull /* retries and slot collection: every 1 s */

/* The probes' turn in the loop; a change of health is published now
 * (not saved: health is not configuration). */
static void
health_run(struct lb_control *m, const struct pollfd *pfd, unsigned int n)
{
	struct lb_cmd_out out;

	lb_health_process(m->ctl.health, pfd, n, mono_ns());
	if (!m->health_changed)
		return;
	m->health_changed = false;
	lb_cmd_out_init(&out);
	if (lb_control_publish(m, false, &out) != 0) {
		lb_control_log("health: %s; retrying", lb_cmd_out_errmsg(&out));
		m->dirty = true;
	}
	lb_cmd_out_free(&out);
}

/* The governors' multipliers to the workers: no table is republished. */
static void
gov_publish(struct lb_control *m)
{
	for (uint32_t s = 0; s < LB_CONF_MAX_SVCS; s++) {
		double x = lb_govview_m(lb_view_gov(m->ctl.view), s);
		uint64_t b;

		memcpy(&b, &x, sizeof(b));
		atomic_store_explicit(&m->pub.shm->gov_m[s], b,
				      memory_order_relaxed);
	}
}

static void
tick(struct lb_control *m)
{
	struct lb_cmd_out out;
	uint64_t now = mono_ns();

	if (!lb_pub_alive(&m->pub)) {
		m->dp_gone = true;
		return;
	}
	lb_pub_drain(&m->pub, m->ctl.view, LB_FB_RING_SIZE);
	lb_view_sync(m->ctl.view);
	lb_view_tick(m->ctl.view);
	lb_scale_tick(m->scale, now);
	gov_publish(m);
	if (m->status != NULL)
		lb_status_tick(m->status, now, wall_ms());
	if (now < m->next_slow_ns)
		return;
	m->next_slow_ns = now + SLOW_NS;
	lb_control_steer_tick(m);
	lb_cmd_out_init(&out);
	if (m->dirty) {
		if (lb_control_publish(m, false, &out) == 0)
			lb_control_log(
				"configuration published (generation %" PRIu64
				")",
				lb_view_conf(m->ctl.view)->gen);
	} else if (lb_pub_gc_due(&m->pub)) {
		/* Flows of removed backends ran out: their slots can be
		 * given to new ones. */
		uint64_t before = m->ctl.ctr.publishes;

		if (lb_control_publish(m, false, &out) == 0 &&
		    m->ctl.ctr.publishes != before)
			m->ctl.ctr.gc_publishes++;
	}
	lb_cmd_out_free(&out);
}

int
lb_control_serve(struct lb_control *m)
{
	struct pollfd pfd[LB_APISRV_CONNS + 2 + LB_HEALTH_MAX_PROBES];
	uint64_t next_tick = mono_ns(), next_cl = next_tick;

	while (!lb_control_quit && !m->dp_gone) {
		uint64_t now = mono_ns();
		unsigned int n, hn;
		int timeout, rc, ht;

		if (now >= next_tick) {
			tick(m);
			next_tick = now + (uint64_t)m->o.tick_ms * 1000000ull;
			continue;
		}
		if (m->cluster != NULL && now >= next_cl) {
			lb_cluster_tick(m->cluster,
					lb_view_shm(m->ctl.view)->admit,
					lb_view_conf(m->ctl.view), now);
			next_cl = now + LB_CLUSTER_TICK_NS;
		}
		timeout = (int)((next_tick - now + 999999) / 1000000);
		if (m->cluster != NULL && next_cl > now &&
		    (int)((next_cl - now + 999999) / 1000000) < timeout)
			timeout = (int)((next_cl - now + 999999) / 1000000);
		n = lb_apisrv_pollfds(m->api, pfd, LB_APISRV_CONNS + 1);
		if (m->httpd != NULL) {
			int t = lb_httpd_timeout_ms(m->httpd);

			pfd[n++] = (struct pollfd){.fd = lb_httpd_fd(m->httpd),
						   .events = POLLIN};
			if (t >= 0 && t < timeout)
				timeout = t;
		}
		hn = lb_health_pollfds(m->ctl.health, pfd + n,
				       LB_HEALTH_MAX_PROBES);
		ht = lb_health_timeout_ms(m->ctl.health, now);
		if (ht >= 0 && ht < timeout)
			timeout = ht;
		rc = poll(pfd, n + hn, timeout);
		if (rc < 0 && errno != EINTR) {
			lb_control_log("poll: %s", strerror(errno));
			return -errno;
		}
		health_run(m, pfd + n, hn);
		if (rc <= 0 && m->httpd == NULL)
			continue;
		lb_apisrv_process(m->api, pfd, m->httpd != NULL ? n - 1 : n);
		if (m->httpd != NULL)
			lb_httpd_run(m->httpd);
		m->ctl.ctr.api_conns = lb_apisrv_stats(m->api)->conns;
	}
	return 0;
}

void
lb_control_teardown(struct lb_control *m)
{
	lb_httpd_stop(m->httpd);
	m->httpd = NULL;
	lb_status_free(m->status);
	m->status = NULL;
	lb_apisrv_free(m->api);
	m->api = NULL;
	lb_view_free(m->ctl.view);
	m->ctl.view = NULL;
}
