/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The exec driver: runs the operator's command with `start` or `stop` and
 * reads the instance it reports from the command's output
 * (lb_orch_parse_output).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "orch.h"

enum xstate { X_FREE = 0, X_STARTING, X_UP, X_STOPPING };

struct xinst {
	enum xstate st;
	uint32_t inst;
	char id[LB_ORCH_ID_LEN + 1];
	struct lb_orch_job job;
	unsigned int tries;
	uint64_t next_ns;
};

struct xdrv {
	char cmd[LB_AS_ARG_LEN + 1];
	char svc[LB_ORCH_UNIT_LEN];
	uint64_t timeout_ns;
	struct xinst x[LB_AS_INST_MAX];
};

static int
x_check(const struct lb_as_conf *c, struct lb_cmd_out *out)
{
	if (c->command[0] == '\0')
		return lb_cmd_error(out, -EINVAL,
				    "driver exec needs a command: its up and "
				    "down are 'COMMAND up SERVICE INSTANCE' "
				    "and 'COMMAND down SERVICE ID'");
	return 0;
}

static void *
x_create(const struct lb_as_conf *c, const char *svc, char *err, size_t len)
{
	struct xdrv *d = calloc(1, sizeof(*d));

	if (d == NULL) {
		snprintf(err, len, "out of memory");
		return NULL;
	}
	snprintf(d->cmd, sizeof(d->cmd), "%s", c->command);
	snprintf(d->svc, sizeof(d->svc), "%s", svc);
	d->timeout_ns = c->exec_timeout_ns;
	return d;
}

static struct xinst *
x_find(struct xdrv *d, uint32_t inst)
{
	for (unsigned int i = 0; i < LB_AS_INST_MAX; i++)
		if (d->x[i].st != X_FREE && d->x[i].inst == inst)
			return &d->x[i];
	return NULL;
}

static int
x_start(void *dv, uint32_t inst, uint64_t now)
{
	struct xdrv *d = dv;

	for (unsigned int i = 0; i < LB_AS_INST_MAX; i++) {
		if (d->x[i].st != X_FREE)
			continue;
		memset(&d->x[i], 0, sizeof(d->x[i]));
		d->x[i].st = X_STARTING;
		d->x[i].inst = inst;
		d->x[i].next_ns = now;
		return 0;
	}
	return -ENOSPC;
}

static int
x_stop(void *dv, uint32_t inst, const char *id, uint64_t now)
{
	struct xdrv *d = dv;
	struct xinst *x = x_find(d, inst);

	if (x == NULL)
		return -ENOENT;
	lb_orch_job_kill(&x->job);
	if (x->st == X_STARTING) {
		/* Never reported: nothing to take down. */
		x->st = X_FREE;
		return 1;
	}
	if (id != NULL && id[0] != '\0')
		snprintf(x->id, sizeof(x->id), "%s", id);
	x->st = X_STOPPING;
	x->tries = 0;
	x->next_ns = now;
	return 0;
}

/* An instance another lb-control started: up, its id known. */
static int
x_adopt(void *dv, const char *id, uint32_t inst)
{
	struct xdrv *d = dv;

	if (x_find(d, inst) != NULL)
		return 0;
	for (unsigned int i = 0; i < LB_AS_INST_MAX; i++) {
		if (d->x[i].st != X_FREE)
			continue;
		memset(&d->x[i], 0, sizeof(d->x[i]));
		d->x[i].st = X_UP;
		d->x[i].inst = inst;
		snprintf(d->x[i].id, sizeof(d->x[i].id), "%s", id);
		return 0;
	}
	return -ENOSPC;
}

/* Commands under way are cut; what they did is the next leader's to
 * find (an `up` cut short is asked again under the same name). */
static void
x_forget(void *dv)
{
	struct xdrv *d = dv;

	for (unsigned int i = 0; i < LB_AS_INST_MAX; i++)
		lb_orch_job_kill(&d->x[i].job);
	free(d);
}

static uint64_t
backoff(unsigned int tries)
{
	uint64_t b = LB_ORCH_BACKOFF_NS;

	while (tries-- > 1 && b < LB_ORCH_BACKOFF_MAX_NS)
		b *= 2;
	return b < LB_ORCH_BACKOFF_MAX_NS ? b : LB_ORCH_BACKOFF_MAX_NS;
}

/* What went wrong with a finished job, or "" when it worked. */
static void
x_outcome(const struct lb_orch_job *j, int st, const char *what, char *msg,
	  size_t len)
{
	msg[0] = '\0';
	if (j->killed)
		snprintf(msg, len, "%s: timed out (killed)", what);
	else if (WIFSIGNALED(st))
		snprintf(msg, len, "%s: killed by signal %d", what,
			 WTERMSIG(st));
	else if (WEXITSTATUS(st) != 0)
		snprintf(msg, len, "%s: exit status %d", what, WEXITSTATUS(st));
}

static unsigned int
x_step(struct xdrv *d, struct xinst *x, uint64_t now, struct lb_orch_ev *ev)
{
	char *argv[3] = {d->svc, NULL, NULL};
	char inst[16], script[LB_AS_ARG_LEN + 32];
	bool up = x->st == X_STARTING;
	int st, rc;

	if (x->job.pid == 0) {
		if (now < x->next_ns)
			return 0;
		snprintf(inst, sizeof(inst), "i%u", x->inst);
		argv[1] = up ? inst : x->id;
		snprintf(script, sizeof(script), "%s %s \"$0\" \"$1\"", d->cmd,
			 up ? "up" : "down");
		rc = lb_orch_job_start(&x->job, script, argv, NULL, false,
				       now + d->timeout_ns);
		x->tries++;
		if (rc == 0)
			return 0;
		*ev = (struct lb_orch_ev){.kind = LB_ORCH_EV_ERROR,
					  .inst = x->inst};
		snprintf(ev->msg, sizeof(ev->msg), "%s: cannot run: %s",
			 up ? "up" : "down", strerror(-rc));
		x->next_ns = now + backoff(x->tries);
		return 1;
	}
	if (lb_orch_job_poll(&x->job, now, &st) == 0)
		return 0;
	*ev = (struct lb_orch_ev){.inst = x->inst};
	x_outcome(&x->job, st, up ? "up" : "down", ev->msg, sizeof(ev->msg));
	if (ev->msg[0] == '\0' && up) {
		unsigned int bad = 0;

		rc = lb_orch_parse_output(x->job.out, x->job.len, ev->id,
					  &ev->ip, &ev->port, &bad);
		if (rc == 1 && !x->job.overflow) {
			ev->kind = LB_ORCH_EV_UP;
			snprintf(x->id, sizeof(x->id), "%s", ev->id);
			x->st = X_UP;
			return 1;
		}
		if (rc < 0)
			snprintf(ev->msg, sizeof(ev->msg),
				 "up: line %u is not 'ID ADDRESS:PORT'", bad);
		else
			snprintf(ev->msg, sizeof(ev->msg), "up: %s",
				 x->job.overflow ? "too much output"
						 : "no 'ID ADDRESS:PORT' line");
	}
	if (ev->msg[0] == '\0') { /* down worked */
		ev->kind = LB_ORCH_EV_STOPPED;
		snprintf(ev->id, sizeof(ev->id), "%s", x->id);
		x->st = X_FREE;
		return 1;
	}
	if (up && x->tries >= LB_ORCH_START_TRIES) {
		ev->kind = LB_ORCH_EV_FAILED;
		x->st = X_FREE;
		return 1;
	}
	/* A stop is retried for as long as it takes: the instance may
	 * still exist and must not be forgotten. */
	ev->kind = LB_ORCH_EV_ERROR;
	x->next_ns = now + backoff(x->tries);
	return 1;
}

static unsigned int
x_poll(void *dv, uint64_t now, struct lb_orch_ev *ev, unsigned int max)
{
	struct xdrv *d = dv;
	unsigned int n = 0;

	for (unsigned int i = 0; i < LB_AS_INST_MAX && n < max; i++) {
		struct xinst *x = &d->x[i];

		if (x->st == X_STARTING || x->st == X_STOPPING)
			n += x_step(d, x, now, &ev[n]);
	}
	return n;
}

static unsigned int
x_busy(void *dv)
{
	struct xdrv *d = dv;
	unsigned int n = 0;

	for (unsigned int i = 0; i < LB_AS_INST_MAX; i++)
		n += d->x[i].st != X_FREE;
	return n;
}

static void
x_destroy(void *dv, uint64_t wait_ns)
{
	struct xdrv *d = dv;
	uint64_t end = lb_orch_now() + wait_ns;
	struct lb_orch_ev ev;

	for (unsigned int i = 0; i < LB_AS_INST_MAX; i++) {
		struct xinst *x = &d->x[i];

		lb_orch_job_kill(&x->job);
		if (x->st != X_UP && x->st != X_STOPPING)
			continue;
		/* One try at taking each instance down. */
		x->st = X_STOPPING;
		x->next_ns = 0;
		x->tries = 0;
		while (lb_orch_now() < end) {
			if (x_step(d, x, lb_orch_now(), &ev) == 1)
				break;
			usleep(20000);
		}
		lb_orch_job_kill(&x->job);
	}
	free(d);
}

static const struct lb_orch_ops exec_ops = {
	.name = "exec",
	.check = x_check,
	.create = x_create,
	.start = x_start,
	.stop = x_stop,
	.poll = x_poll,
	.adopt = x_adopt,
	.forget = x_forget,
	.busy = x_busy,
	.destroy = x_destroy,
};

LB_ORCH_REGISTER(exec_ops);
