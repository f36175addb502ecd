/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-control and the dataplane it attaches to: waiting for one that is
 * ready for secondaries, initialising the EAL against it, attaching to
 * its shared memory, and starting over as a new process image when it
 * goes away (the EAL cannot be initialised twice).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/close_range.h>

#include <rte_eal.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_log.h>

#include "lb/rtlock.h"
#include "main_priv.h"
#include "scale_priv.h"

/* Times lb-control executed itself while waiting for a dataplane. */
#define WAITS_ENV "LB_CONTROL_WAITS"
/* Re-executions after a dataplane went away, for lb_control_attaches. */
#define ATTACHES_ENV "LB_CONTROL_ATTACHES"

/*
 * Waits until a dataplane is ready for secondaries and takes the attach
 * lock (lb/rtlock.h): initialising the EAL against a primary that is
 * gone or still starting reads a half-written runtime and holds its
 * files, so that the new dataplane cannot start. False if asked to stop
 * meanwhile.
 */
static bool
wait_primary(struct lb_control *m, const char *dir)
{
	unsigned int polls = 0;

	for (;;) {
		m->rt_lock = lb_rt_attach_lock(dir);
		if (m->rt_lock >= 0)
			return true;
		/* Once, then every minute: a dataplane may be down for
		 * long, and that is not news every second. */
		if (polls % 300 == 0)
			lb_control_log("waiting for lb-dataplane (none is "
				       "ready in %s; a dataplane started with "
				       "--no-shconf or --in-memory has no "
				       "secondaries)",
				       dir);
		if (lb_control_quit)
			return false;
		polls++;
		usleep(200000);
	}
}

static unsigned long
env_count(const char *name)
{
	const char *v = getenv(name);

	return v != NULL ? strtoul(v, NULL, 10) : 0;
}

/*
 * Starts over as a new process image with the original command line:
 * the EAL cannot be initialised twice, and a new dataplane is a new DPDK
 * runtime. Descriptors of this one (hugepage files among them) must not
 * leak into the next.
 *
 * No rte_eal_cleanup(): the runtime is gone, and its shared
 * configuration may already be a new dataplane's, half-written (the
 * EAL's memory detach divides by its page sizes). The new image drops
 * every mapping; the primary removes the multi-process socket left.
 */
static void __attribute__((noreturn))
exec_again(char **argv0, const char *counter)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%lu", env_count(counter) + 1);
	setenv(counter, buf, 1);
	fflush(NULL);
	/* Closed by the exec, not now: the EAL's threads still poll some of
	 * them (its interrupt thread panics on a closed epoll descriptor),
	 * and they only stop when the exec ends them. */
	if (close_range(3, ~0u, CLOSE_RANGE_CLOEXEC) != 0)
		for (int fd = 3; fd < 65536; fd++)
			fcntl(fd, F_SETFD, FD_CLOEXEC);
	execv("/proc/self/exe", argv0);
	lb_control_log("cannot execute again: %s", strerror(errno));
	exit(EXIT_FAILURE);
}

static void
quiet_eal_logs(bool quiet)
{
	/* While waiting for a dataplane every attempt would print the
	 * same EAL failure; the first and then one in 30 are enough. */
	rte_log_set_global_level(quiet ? RTE_LOG_EMERG : RTE_LOG_DEBUG);
}

int
lb_control_eal_init(struct lb_control *m, int eargc, char **eargv)
{
	unsigned long waits = env_count(WAITS_ENV);
	char rtdir[PATH_MAX];
	int rc;

	if (lb_rt_dir(eargc, eargv, rtdir, sizeof(rtdir)) != 0) {
		lb_control_log(
			"no DPDK runtime directory to attach to (--in-memory "
			"or --no-shconf, or a --file-prefix too long)");
		return 2;
	}
	if (!wait_primary(m, rtdir))
		return EXIT_FAILURE;
	quiet_eal_logs(waits > 0 && waits % 30 != 0);
	rc = rte_eal_init(eargc, eargv);
	if (rc < 0) {
		if (rte_errno == EINVAL) {
			lb_control_log("invalid EAL arguments");
			return 2;
		}
		if (waits % 30 == 0)
			lb_control_log(
				"cannot attach to the dataplane (EAL: %s; "
				"it must run on hugepages, not --no-huge, to "
				"have secondary processes); retrying every "
				"second",
				rte_strerror(rte_errno));
		lb_rt_unlock(m->rt_lock);
		m->rt_lock = -1;
		sleep(1);
		if (lb_control_quit)
			return EXIT_FAILURE;
		exec_again(m->argv0, WAITS_ENV);
	}
	quiet_eal_logs(false);
	unsetenv(WAITS_ENV);
	return 0;
}

/*
 * The dataplane's clock, which stamps feedback records: the TSC scaled as
 * its workers scale it (shm tsc_hz), so that SPL ages compare like with
 * like.
 */
static uint64_t
dp_clock(void *arg)
{
	const struct lb_shm *shm = arg;

	if (shm->tsc_hz == 0)
		return 0;
	return (uint64_t)((double)rte_rdtsc() * (1e9 / (double)shm->tsc_hz));
}

int
lb_control_attach(struct lb_control *m)
{
	char err[256];
	bool said = false;
	int rc;

	for (;;) {
		m->pub.stop = &lb_control_quit;
		rc = lb_pub_attach(&m->pub, err, sizeof(err));
		if (rc == 0)
			break;
		if (rc != -EAGAIN) {
			lb_control_log("%s", err);
			return rc;
		}
		if (!said)
			lb_control_log("%s; waiting", err);
		said = true;
		/* A dataplane starting meanwhile must not wait for this. */
		lb_rt_unlock(m->rt_lock);
		m->rt_lock = -1;
		if (rte_eal_primary_proc_alive(NULL) == 0) {
			lb_control_log("the dataplane went away");
			exec_again(m->argv0, WAITS_ENV);
		}
		if (lb_control_quit)
			return -EINTR;
		sleep(1);
	}
	m->ctl.ctr.attaches = env_count(ATTACHES_ENV) + 1;
	m->ctl.view = lb_view_create(m->pub.shm);
	if (m->ctl.view == NULL)
		return -ENOMEM;
	lb_view_set_clock(m->ctl.view, dp_clock, (void *)(uintptr_t)m->pub.shm);
	lb_view_sync(m->ctl.view);
	lb_control_steer_attach(m);
	lb_control_log("attached to the dataplane (pid %d, %u worker(s), table "
		       "generation %" PRIu64 ")",
		       m->pub.dp_pid, m->pub.shm->nb_workers,
		       lb_view_conf(m->ctl.view)->gen);
	return 0;
}

/*
 * Lets a dataplane that is shutting down finish, for at most 30 s, so
 * that the next attach is not to it; and lets go of its memory as soon as
 * it is gone, so that the next one can start.
 */
static void
wait_exit(pid_t pid)
{
	for (int i = 0; i < 3000 && pid > 0; i++) {
		if (kill(pid, 0) != 0 && errno == ESRCH)
			return;
		usleep(10000);
	}
}

void
lb_control_restart(struct lb_control *m)
{
	lb_control_log("the dataplane (pid %d) went away; waiting for the next "
		       "one",
		       m->pub.dp_pid);
	lb_control_teardown(m);
	/* The next image knows nothing of these instances. */
	lb_scale_free(m->scale);
	m->scale = NULL;
	wait_exit(m->pub.dp_pid);
	exec_again(m->argv0, ATTACHES_ENV);
}
