/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Orchestrator drivers' registry, the child processes they run and the
 * exec driver's output reader (control/scale/orch.h). Each driver registers
 * itself from its own file (LB_ORCH_REGISTER); this file knows none.
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

#include "orch.h"

extern char **environ;

#define ORCH_SLOTS 8u

static struct lb_init_entry entries[ORCH_SLOTS];
static struct lb_init_reg drivers = {entries, 0, ORCH_SLOTS};

int
lb_orch_register(const struct lb_orch_ops *ops)
{
	if (ops == NULL || ops->name == NULL || ops->create == NULL ||
	    ops->start == NULL || ops->stop == NULL || ops->poll == NULL ||
	    ops->destroy == NULL || ops->busy == NULL)
		return -EINVAL;
	return lb_init_reg_add(&drivers, ops->name, ops);
}

const struct lb_orch_ops *
lb_orch_find(const char *name)
{
	return lb_init_reg_find(&drivers, name);
}

int
lb_orch_names(char *buf, size_t len, const char *sep)
{
	return lb_init_reg_names(&drivers, buf, len, sep);
}

int
lb_orch_check(const struct lb_as_conf *c, struct lb_cmd_out *out)
{
	const struct lb_orch_ops *o = lb_orch_find(c->driver);

	char names[256];

	if (o == NULL) {
		lb_orch_names(names, sizeof(names), ", ");
		return lb_cmd_error(out, -EINVAL,
				    "unknown driver '%s'; expected one of %s",
				    c->driver, names);
	}
	if (c->cluster && (o->forget == NULL || o->adopt == NULL))
		return lb_cmd_error(out, -EINVAL,
				    "driver %s cannot scale for a cluster "
				    "(cluster on): its instances cannot be "
				    "handed from one lb-control to another; "
				    "use exec",
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
lb_orch_parse_line(const char *line, size_t len, char *id,
		   struct lb_conf_ip *ip, uint16_t *port)
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
		struct lb_conf_ip a;
		uint16_t p;

		if (lb_cmd_parse_ip_port(word[1], &a, &p, NULL) != 0)
			return -EINVAL;
		memcpy(id, word[0], strlen(word[0]) + 1);
		*ip = a;
		*port = p;
	}
	return 0;
}

int
lb_orch_parse_output(const char *buf, size_t len, char *id,
		     struct lb_conf_ip *ip, uint16_t *port,
		     unsigned int *bad_line)
{
	char tid[LB_ORCH_ID_LEN + 1];
	struct lb_conf_ip tip = {0};
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
			struct lb_conf_ip xip;
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
