/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-control: the control-plane process. A DPDK secondary process of
 * lb-dataplane: it keeps the desired configuration (state file), is the
 * only writer of the dataplane's tables, merges the workers' feedback,
 * and serves lbctl's API on a Unix socket and Prometheus' /metrics.
 *
 * One thread does everything, driven by poll(2): API requests run one at
 * a time and the merged view needs no lock.
 *
 * Fail static: when lb-control stops, the dataplane keeps forwarding with
 * the last table. When the dataplane goes away, lb-control executes
 * itself again to attach to the next one and publish its state there.
 *
 * This file is the process's life, step by step; the steps are in the
 * files main_priv.h lists.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>

#include "autoscale.h"
#include "leader.h"
#include "health.h"
#include "lb/rtlock.h"
#include "main_priv.h"
#include "scale_priv.h"

volatile sig_atomic_t lb_control_quit;

static void
on_signal(int sig)
{
	(void)sig;
	lb_control_quit = 1;
}

void
lb_control_log(const char *fmt, ...)
{
	va_list ap;

	fputs("lb-control: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Attached to the EAL: everything up to serving. @return 0 or -1. */
static int
start(struct lb_control *m)
{
	int rc;

	rc = lb_control_setup(m);
	if (rc != 0) {
		lb_control_log("cannot set up the commands: %s", strerror(-rc));
		return -1;
	}
	m->ctl.state_path = m->o.state;
	rc = lb_control_attach(m);
	/* Attached (or not): the next dataplane may start when it wants. */
	lb_rt_unlock(m->rt_lock);
	m->rt_lock = -1;
	if (rc != 0 || lb_control_load(m) != 0)
		return -1;
	lb_control_publish_first(m);
	if (lb_control_listen(m) != 0)
		return -1;
	if (!m->o.keep_all && lb_control_drop_privs(m) != 0)
		return -1;
	lb_control_log("serving %s (mode %04o)%s%s", m->o.socket,
		       m->o.sock_mode,
		       m->httpd != NULL ? ", metrics on http://" : "",
		       m->httpd != NULL ? m->o.metrics : "");
	return 0;
}

static void
release(struct lb_control *m)
{
	lb_scale_free(m->scale);
	lb_control_teardown(m);
	lb_cluster_free(m->cluster);
	lb_leader_free(m->leader);
	lb_pub_detach(&m->pub);
	lb_cmd_reg_free(m->reg);
	lb_as_free(m->ctl.as);
	lb_control_steer_free(m);
	lb_health_free(m->ctl.health);
	free(m->as_backup);
	lb_conf_free(m->ctl.conf);
	lb_conf_free(m->backup);
	json_decref(m->ctl.data);
}

int
main(int argc, char **argv)
{
	static struct lb_control m;
	char **eargv;
	int dd, eargc, rc, ret = EXIT_FAILURE;

	rc = lb_control_cmdline(&m, argc, argv, &dd);
	if (rc != 0)
		return rc;
	if (m.o.markdown || m.o.cmd_table)
		return lb_control_reference(&m);
	if (dd == 0)
		dd = 1;
	/* getopt inside the EAL permutes what it is given: a copy, so that
	 * argv stays as given for executing again. */
	eargv = lb_control_eal_args(dd, argv, &eargc);
	if (eargv == NULL)
		return 2;

	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	rc = lb_control_eal_init(&m, eargc, eargv);
	if (rc != 0)
		return rc;
	if (start(&m) == 0) {
		lb_control_serve(&m);
		if (m.dp_gone)
			lb_control_restart(&m);
		lb_control_log("stopping; the dataplane keeps forwarding with "
			       "its table");
		ret = EXIT_SUCCESS;
	}
	release(&m);
	free(eargv);
	rte_eal_cleanup();
	return ret;
}
