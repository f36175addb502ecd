/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-control's side of the XDP steering (control/steer/steerctl.c): the
 * maps the dataplane pinned, their rules synced with each table, and
 * the sources --acl-auto denies; no-ops in a build without bpf/.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>

#include "main_priv.h"
#ifdef LB_WITH_STEER
#include "steerctl.h"
#endif

#ifdef LB_WITH_STEER
static void
steer_feed(void *arg, const struct lb_fb *r, unsigned int n)
{
	struct lb_control *m = arg;

	lb_steerctl_feed(m->steer, r, n, lb_view_conf(m->ctl.view),
			 lb_steer_now_ns());
}

int
lb_control_steer_setup(struct lb_control *m)
{
	struct lb_acl_auto_conf ac = {0};
	char err[LB_CMD_ERR_MAX];

	if (m->o.acl_auto != NULL &&
	    lb_acl_auto_parse(m->o.acl_auto, &ac, err, sizeof(err)) != 0) {
		lb_control_log("--acl-auto: %s", err);
		return -EINVAL;
	}
	m->steer = lb_steerctl_create(&ac, &m->ctl.data);
	if (m->steer == NULL)
		return -errno;
	m->ctl.xdp_stats = lb_steerctl_stats;
	m->ctl.xdp = m->steer;
	m->pub.fb_hook = steer_feed;
	m->pub.fb_arg = m;
	return 0;
}

/* The maps the dataplane pinned, and their rules for the table in
 * force: a restarted lb-control may have nothing new to publish. */
void
lb_control_steer_attach(struct lb_control *m)
{
	const struct lb_shm *shm = m->pub.shm;
	int rc;

	lb_steerctl_set_host6(m->steer, (const uint8_t(*)[16])shm->steer_host6,
			      RTE_MIN(shm->steer_nb_host6,
				      LB_SHM_STEER_HOST_MAX));
	rc = lb_steerctl_attach(
		m->steer, shm->steer_pin, shm->steer_host,
		RTE_MIN(shm->steer_nb_host, LB_SHM_STEER_HOST_MAX));
	if (rc != 0)
		lb_control_log("cannot open the XDP steering maps in %s: %s",
			       shm->steer_pin, strerror(-rc));
	else if (lb_steerctl_attached(m->steer))
		lb_control_log("XDP steering maps in %s", shm->steer_pin);
	if (lb_steerctl_sync(m->steer, lb_view_conf(m->ctl.view)) != 0)
		lb_control_log("cannot sync the XDP steering rules");
}

void
lb_control_steer_sync(struct lb_control *m, const struct lb_dpconf *d)
{
	if (lb_steerctl_sync(m->steer, d) != 0)
		lb_control_log("cannot sync the XDP steering rules");
}

void
lb_control_steer_tick(struct lb_control *m)
{
	lb_steerctl_tick(m->steer, lb_steer_now_ns());
}

void
lb_control_steer_free(struct lb_control *m)
{
	lb_steerctl_free(m->steer);
	m->steer = NULL;
}
#else
int
lb_control_steer_setup(struct lb_control *m)
{
	if (m->o.acl_auto == NULL)
		return 0;
	lb_control_log("--acl-auto: built without XDP steering (bpf/)");
	return -ENOTSUP;
}

void
lb_control_steer_attach(struct lb_control *m)
{
	(void)m;
}

void
lb_control_steer_sync(struct lb_control *m, const struct lb_dpconf *d)
{
	(void)m;
	(void)d;
}

void
lb_control_steer_tick(struct lb_control *m)
{
	(void)m;
}

void
lb_control_steer_free(struct lb_control *m)
{
	(void)m;
}
#endif
