/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Orchestrator drivers' registry, the child processes they run, the exec
 * driver's output reader and the exec driver itself (include/lb/orch.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lb/orch.h"

extern char **environ;

#define ORCH_SLOTS 8u

static const struct lb_orch_ops *drivers[ORCH_SLOTS];
static unsigned int nb_drivers;
static const struct lb_orch_ops exec_ops;

/* The built-in drivers, registered on first use. */
static void
builtins(void)
{
	static bool done;

	if (done)
		return;
	done = true;
	drivers[nb_drivers++] = &lb_orch_process_ops;
	drivers[nb_drivers++] = &exec_ops;
	drivers[nb_drivers++] = &lb_orch_k8s_ops;
}

int
lb_orch_register(const struct lb_orch_ops *ops)
{
	builtins();
	if (ops == NULL || ops->name == NULL || ops->create == NULL ||
	    ops->start == NULL || ops->stop == NULL || ops->poll == NULL ||
	    ops->destroy == NULL || ops->busy == NULL)
		return -EINVAL;
	if (lb_orch_find(ops->name) != NULL)
		return -EEXIST;
	if (nb_drivers == ORCH_SLOTS)
		return -ENOSPC;
	drivers[nb_drivers++] = ops;
	return 0;
}

const struct lb_orch_ops *
lb_orch_find(const char *name)
{
	builtins();
	for (unsigned int i = 0; name != NULL && i < nb_drivers; i++)
		if (strcmp(drivers[i]->name, name) == 0)
			return drivers[i];
	return NULL;
}

int
lb_orch_check(const struct lb_as_conf *c, struct lb_cmd_out *out)
{
	const struct lb_orch_ops *o = lb_orch_find(c->driver);

	if (o == NULL)
		return lb_cmd_error(out, -EINVAL,
				    "unknown driver '%s'; expected process, "
				    "exec or kubernetes",
				    c->driver);
	return o->check != NULL ? o->check(c, out) : 0;
}

uint64_t
lb_orch_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- output reader ---- */

static bool
is_blank(char c)
{
	return c == ' ' || c == '\t';
}

int
lb_orch_parse_line(const char *line, size_t len, char *id, uint32_t *ip,
		   uint16_t *port)
{
	char word[2][LB_ORCH_ID_LEN + 1];
	size_t i = 0;
	int n = 0;

	while (n < 3) {
		size_t b, w;

		while (i < len && is_blank(line[i]))
			i++;
		if (i == len)
			break;
		if (n == 2)
			return -EINVAL; /* a third word */
		b = i;
		while (i < len && !is_blank(line[i])) {
			unsigned char c = (unsigned char)line[i];

			if (c < 0x21 || c > 0x7e)
				return -EINVAL;
			i++;
		}
		w = i - b;
		if (w > LB_ORCH_ID_LEN)
			return -EINVAL;
		memcpy(word[n], line + b, w);
		word[n][w] = '\0';
		n++;
	}
	if (n != 2)
		return -EINVAL;
	{
		uint32_t a;
		uint16_t p;

		if (lb_cmd_parse_ipv4_port(word[1], &a, &p, NULL) != 0)
			return -EINVAL;
		memcpy(id, word[0], strlen(word[0]) + 1);
		*ip = a;
		*port = p;
	}
	return 0;
}

int
lb_orch_parse_output(const char *buf, size_t len, char *id, uint32_t *ip,
		     uint16_t *port, unsigned int *bad_line)
{
	char tid[LB_ORCH_ID_LEN + 1];
	uint32_t tip = 0;
	uint16_t tport = 0;
	unsigned int line = 0;
	bool found = false;
	size_t i = 0;

	while (i < len) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t e = nl != NULL ? (size_t)(nl - buf) : len, l = e - i;
		size_t k = 0;

		line++;
		if (l > 0 && buf[i + l - 1] == '\r')
			l--;
		while (k < l && is_blank(buf[i + k]))
			k++;
		if (k < l && buf[i + k] != '#') {
			char xid[LB_ORCH_ID_LEN + 1];
			uint32_t xip;
			uint16_t xport;

			if (memchr(buf + i, '\0', l) != NULL ||
			    lb_orch_parse_line(buf + i, l, xid, &xip, &xport) !=
				    0) {
				if (bad_line != NULL)
					*bad_line = line;
				return -EINVAL;
			}
			if (!found) {
				memcpy(tid, xid, sizeof(tid));
				tip = xip;
				tport = xport;
				found = true;
			}
		}
		i = e + 1;
	}
	if (!found)
		return 0;
	memcpy(id, tid, strlen(tid) + 1);
	*ip = tip;
	*port = tport;
	return 1;
}

/* ---- child processes ---- */

int
lb_orch_job_start(struct lb_orch_job *j, const char *script, char *const *argv,
		  char *const *env, bool keep_stdout, uint64_t deadline_ns)
{
	size_t na = 0, ne = 0, nenv = 0;
	char **args, **envp;
	int pfd[2];
	pid_t pid;

	while (argv != NULL && argv[na] != NULL)
		na++;
	while (env != NULL && env[ne] != NULL)
		ne++;
	while (environ != NULL && environ[nenv] != NULL)
		nenv++;
	args = calloc(na + 4, sizeof(*args));
	envp = calloc(nenv + ne + 1, sizeof(*envp));
	if (args == NULL || envp == NULL) {
		free(args);
		free(envp);
		return -ENOMEM;
	}
	args[0] = "sh";
	args[1] = "-c";
	args[2] = (char *)(uintptr_t)script;
	for (size_t i = 0; i < na; i++)
		args[3 + i] = argv[i];
	for (size_t i = 0; i < nenv; i++)
		envp[i] = environ[i];
	for (size_t i = 0; i < ne; i++)
		envp[nenv + i] = env[i];
	if (pipe2(pfd, O_CLOEXEC) != 0) {
		free(args);
		free(envp);
		return -errno;
	}
	pid = fork();
	if (pid == 0) {
		struct sigaction sa = {.sa_handler = SIG_DFL};
		sigset_t none;
		int nul = open("/dev/null", O_RDONLY);

		/* Its own group, so that a stop reaches the shell and what it
		 * started; dead with lb-control, so nothing outlives it. */
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		sigaction(SIGPIPE, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (nul >= 0)
			dup2(nul, 0);
		dup2(keep_stdout ? 2 : pfd[1], 1);
		close_range(3, ~0u, 0);
		execve("/bin/sh", args, envp);
		_exit(127);
	}
	free(args);
	free(envp);
	close(pfd[1]);
	if (pid < 0) {
		close(pfd[0]);
		return -errno;
	}
	fcntl(pfd[0], F_SETFL, fcntl(pfd[0], F_GETFL) | O_NONBLOCK);
	memset(j, 0, sizeof(*j));
	j->pid = pid;
	j->fd = pfd[0];
	j->deadline_ns = deadline_ns;
	return 0;
}

static void
job_read(struct lb_orch_job *j)
{
	char junk[512];

	while (j->fd >= 0) {
		ssize_t n;

		if (j->len < sizeof(j->out) - 1)
			n = read(j->fd, j->out + j->len,
				 sizeof(j->out) - 1 - j->len);
		else
			n = read(j->fd, junk, sizeof(junk));
		if (n > 0) {
			if (j->len < sizeof(j->out) - 1)
				j->len += (size_t)n;
			else
				j->overflow = true;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		close(j->fd); /* EOF or error */
		j->fd = -1;
	}
}

int
lb_orch_job_poll(struct lb_orch_job *j, uint64_t now_ns, int *status)
{
	pid_t r;
	int st;

	if (j->pid <= 0)
		return 0;
	job_read(j);
	r = waitpid(j->pid, &st, WNOHANG);
	if (r == j->pid) {
		job_read(j);
		if (j->fd >= 0)
			close(j->fd);
		j->fd = -1;
		j->pid = 0;
		j->out[j->len] = '\0';
		if (status != NULL)
			*status = st;
		return 1;
	}
	if (!j->killed && j->deadline_ns != 0 && now_ns >= j->deadline_ns) {
		kill(-j->pid, SIGKILL);
		j->killed = true;
	}
	return 0;
}

void
lb_orch_job_kill(struct lb_orch_job *j)
{
	if (j->pid <= 0)
		return;
	kill(-j->pid, SIGKILL);
	waitpid(j->pid, NULL, 0);
	if (j->fd >= 0)
		close(j->fd);
	j->fd = -1;
	j->pid = 0;
}

int
lb_orch_job_wait(struct lb_orch_job *j, uint64_t wait_ns)
{
	uint64_t end = lb_orch_now() + wait_ns;
	int st = 0;

	while (j->pid > 0) {
		if (lb_orch_job_poll(j, lb_orch_now(), &st) == 1)
			return j->killed ? -1 : st;
		if (lb_orch_now() >= end) {
			lb_orch_job_kill(j);
			return -1;
		}
		usleep(20000);
	}
	return st;
}

/* ---- the exec driver ---- */

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
	char svc[64];
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
	.busy = x_busy,
	.destroy = x_destroy,
};
