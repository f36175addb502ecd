/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `static`: instances that exist as soon as they are asked for, instance i
 * at 127.0.0.1:(10000 + i). Linked only into orch_test, it shows that a
 * driver is one file registering itself, with nothing else to edit;
 * lb-control does not have it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orch.h"

#define ST_PORT 10000u
#define ST_QUEUE 16u

struct st {
	struct lb_orch_ev q[ST_QUEUE]; /* events not yet polled */
	unsigned int nq;
	unsigned int running;
};

static void *
st_create(const struct lb_as_conf *c, const char *svc, char *err, size_t errlen)
{
	struct st *d = calloc(1, sizeof(*d));

	(void)c;
	(void)svc;
	if (d == NULL)
		snprintf(err, errlen, "no memory");
	return d;
}

static int
st_push(struct st *d, enum lb_orch_ev_kind kind, uint32_t inst)
{
	struct lb_orch_ev *e;

	if (d->nq == ST_QUEUE)
		return -ENOSPC;
	e = &d->q[d->nq++];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->inst = inst;
	e->ip = lb_conf_ip4(0x7f000001);
	e->port = (uint16_t)(ST_PORT + inst);
	snprintf(e->id, sizeof(e->id), "static-%u", inst);
	return 0;
}

static int
st_start(void *dv, uint32_t inst, uint64_t now)
{
	struct st *d = dv;
	int rc;

	(void)now;
	rc = st_push(d, LB_ORCH_EV_UP, inst);
	if (rc == 0)
		d->running++;
	return rc;
}

static int
st_stop(void *dv, uint32_t inst, const char *id, uint64_t now)
{
	struct st *d = dv;
	int rc;

	(void)id;
	(void)now;
	if (d->running == 0)
		return 1;
	rc = st_push(d, LB_ORCH_EV_STOPPED, inst);
	if (rc == 0)
		d->running--;
	return rc;
}

static unsigned int
st_poll(void *dv, uint64_t now, struct lb_orch_ev *ev, unsigned int max)
{
	struct st *d = dv;
	unsigned int n = d->nq < max ? d->nq : max;

	(void)now;
	memcpy(ev, d->q, n * sizeof(*ev));
	memmove(d->q, d->q + n, (d->nq - n) * sizeof(*ev));
	d->nq -= n;
	return n;
}

static unsigned int
st_busy(void *dv)
{
	return ((struct st *)dv)->running;
}

static void
st_destroy(void *dv, uint64_t wait_ns)
{
	(void)wait_ns;
	free(dv);
}

static const struct lb_orch_ops static_ops = {
	.name = "static",
	.create = st_create,
	.start = st_start,
	.stop = st_stop,
	.poll = st_poll,
	.busy = st_busy,
	.destroy = st_destroy,
};

LB_ORCH_REGISTER(static_ops);
