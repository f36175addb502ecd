/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_ORCH_H
#define LB_ORCH_H

/**
 * @file
 * Orchestrator drivers: what starts and stops a service's instances for
 * the autoscaler. Each driver is an ops table registered by name and
 * chosen per service (`scale set ... driver NAME`):
 *
 *  - `process`: starts local instances of a command, each on its own port
 *    of one address, or each in its own network namespace with a veth
 *    into a bridge and an address from a pool; supervises them and
 *    reports their exits;
 *  - `exec`: runs a user command `CMD up SERVICE INSTANCE` and `CMD down
 *    SERVICE ID`, reads `ID ADDRESS:PORT` lines back from `up`; failures
 *    and timeouts are reported and retried with exponential backoff, never
 *    taken for success;
 *  - `kubernetes`: a Deployment's scale subresource and its Service's
 *    EndpointSlices, over libcurl's multi interface; the ready pods it
 *    finds when it starts are adopted (LB_ORCH_EV_ADOPTED), so that a
 *    restarted lb-control keeps the replicas that serve.
 *
 * Nothing here blocks: work is done by child processes whose pipes are
 * read without blocking and which are reaped with WNOHANG, from
 * lb_orch_poll() on lb-control's tick. Results come back as events.
 * Not thread-safe.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "autoscale.h"
#include "lb/cmd.h"
#include "lb/init.h"

/** Bytes of a driver's unit name (ops->create()'s svc), NUL included. */
#define LB_ORCH_UNIT_LEN 112u
/** Longest driver-side instance id read from `ID ADDRESS:PORT`. */
#define LB_ORCH_ID_LEN 63u
/** First retry of a failed exec command, doubled up to the maximum. */
#define LB_ORCH_BACKOFF_NS 1000000000ull
#define LB_ORCH_BACKOFF_MAX_NS 30000000000ull
/** Attempts at starting one instance before it counts as failed. */
#define LB_ORCH_START_TRIES 4u
/** Grace between SIGTERM and SIGKILL when stopping a process. */
#define LB_ORCH_KILL_GRACE_NS 5000000000ull

enum lb_orch_ev_kind {
	/** The instance exists at ip:port (ns: its network namespace). */
	LB_ORCH_EV_UP = 0,
	/** Stopped as asked (or found gone); forget it. */
	LB_ORCH_EV_STOPPED,
	/** Could not be started; given up. */
	LB_ORCH_EV_FAILED,
	/** A running instance exited by itself. */
	LB_ORCH_EV_EXITED,
	/** A command failed or timed out; it is retried. */
	LB_ORCH_EV_ERROR,
	/**
	 * An instance that was running before the driver was created (found
	 * at ip:port, id its name; inst UINT32_MAX): the runtime makes it an
	 * instance of the service, as one that came up, and gives the driver
	 * its id with adopt().
	 */
	LB_ORCH_EV_ADOPTED,
};

struct lb_orch_ev {
	enum lb_orch_ev_kind kind;
	uint32_t inst; /**< the autoscaler's instance id; UINT32_MAX: none */
	struct lb_conf_ip ip; /**< IPv4 or IPv6, host order */
	uint16_t port;
	char id[LB_ORCH_ID_LEN + 1]; /**< the driver's name for it */
	char ns[64];		     /**< network namespace, "" for none */
	char msg[96];
};

struct lb_orch;

/** A driver. */
struct lb_orch_ops {
	const char *name;
	/** Checks the driver's settings of @p c (command, target...). */
	int (*check)(const struct lb_as_conf *c, struct lb_cmd_out *out);
	/** Private state for service @p svc (e.g. "tcp:10.0.0.1:80"), or
	 * for a named pool of it "tcp:10.0.0.1:80/NAME" (at most
	 * LB_ORCH_UNIT_LEN bytes with its NUL). */
	void *(*create)(const struct lb_as_conf *c, const char *svc, char *err,
			size_t errlen);
	/** Asks for instance @p inst. */
	int (*start)(void *d, uint32_t inst, uint64_t now_ns);
	/**
	 * Asks for instance @p inst (driver id @p id) to stop.
	 * @return 0 (a STOPPED event follows), 1 (nothing was running:
	 *   stopped now, no event), or a negative errno.
	 */
	int (*stop)(void *d, uint32_t inst, const char *id, uint64_t now_ns);
	/** Progress; up to @p max events out. */
	unsigned int (*poll)(void *d, uint64_t now_ns, struct lb_orch_ev *ev,
			     unsigned int max);
	/**
	 * Gives the instance reported by an ADOPTED event (driver id @p id)
	 * the autoscaler's id @p inst; for a driver with forget(), also an
	 * instance another lb-control of the cluster started (up, known
	 * by @p id), which it can stop from then on. NULL for drivers that
	 * adopt nothing.
	 * @return 0, -ENOENT (no such adopted instance), -ENOSPC.
	 */
	int (*adopt)(void *d, const char *id, uint32_t inst);
	/**
	 * Whether the driver knows which instances run (the kubernetes
	 * driver: once it has adopted the running pods); the autoscaler
	 * decides nothing before. NULL: from the start.
	 */
	bool (*synced)(void *d);
	/**
	 * Frees the state and leaves every instance running, for another
	 * lb-control of the cluster to adopt (this one stops leading the
	 * service). NULL for drivers whose instances cannot outlive it; a
	 * driver needs both this and adopt() for `cluster on`.
	 */
	void (*forget)(void *d);
	/** Instances it still has (running, starting or stopping). */
	unsigned int (*busy)(void *d);
	/**
	 * Stops everything, waiting at most @p wait_ns (lb-control is
	 * exiting), and frees the state.
	 */
	void (*destroy)(void *d, uint64_t wait_ns);
};

/**
 * Registers a driver; @p ops must outlive the program. Drivers call it
 * through LB_ORCH_REGISTER(). @return 0, -EINVAL, -EEXIST, -ENOSPC.
 */
int lb_orch_register(const struct lb_orch_ops *ops);

/**
 * Registers the driver @p ops (a `static const struct lb_orch_ops`) before
 * main(), from the file that defines it (`process` in orch_process.c,
 * `exec` in orch_exec.c, `kubernetes` in orch_k8s.c); a failure aborts.
 */
#define LB_ORCH_REGISTER(ops)                                                  \
	LB_INIT(lb_orch_init_##ops)                                            \
	{                                                                      \
		lb_init_check(lb_orch_register(&(ops)), "orchestrator driver", \
			      (ops).name);                                     \
	}

/** The driver called @p name, or NULL. */
const struct lb_orch_ops *lb_orch_find(const char *name);
/**
 * Writes the registered drivers' names to @p buf, in name order, separated
 * by @p sep. @return the length snprintf() would write.
 */
int lb_orch_names(char *buf, size_t len, const char *sep);
/** The autoscaler's driver check: the named driver's check. */
int lb_orch_check(const struct lb_as_conf *c, struct lb_cmd_out *out);

/* ---- the exec driver's output reader (pure) ---- */

/**
 * Reads one line `ID ADDRESS:PORT` (words separated by spaces or tabs,
 * nothing after, no NUL): ID 1..LB_ORCH_ID_LEN printable non-space
 * bytes, ADDRESS a dotted quad or an IPv6 address in brackets
 * (`[2001:db8::5]:8080`), PORT 1..65535.
 * @return 0 with the fields set; -EINVAL otherwise (nothing set).
 */
int lb_orch_parse_line(const char *line, size_t len, char *id,
		       struct lb_conf_ip *ip, uint16_t *port);

/**
 * Reads @p len bytes of output: lines ending in LF (the last may lack
 * it; CR before LF is dropped), blank lines and lines starting with '#'
 * skipped. The first instance line is returned; any malformed line is an
 * error, and so is output without an instance line.
 * @return 1 with the fields set; 0 (no instance line); -EINVAL (a
 *   malformed line, whose number is in *bad_line).
 */
int lb_orch_parse_output(const char *buf, size_t len, char *id,
			 struct lb_conf_ip *ip, uint16_t *port,
			 unsigned int *bad_line);

/* ---- child processes (shared by the drivers) ---- */

/** A child running a command, its stdout collected. */
struct lb_orch_job {
	pid_t pid; /**< 0: none */
	int fd;	   /**< read end of its stdout, -1 when closed */
	uint64_t deadline_ns;
	bool killed; /**< killed at its deadline */
	char out[4096];
	size_t len;
	bool overflow; /**< more output than out[] holds */
};

/**
 * Starts /bin/sh -c @p script with "$0".. as @p argv (NULL-terminated,
 * may be NULL) and the environment plus @p env ("NAME=VALUE" strings,
 * NULL-terminated, may be NULL), stdin /dev/null, stdout to the job's
 * pipe unless @p keep_stdout (then lb-control's stderr), in its own
 * process group, sent SIGTERM when lb-control dies.
 * @return 0 or a negative errno.
 */
int lb_orch_job_start(struct lb_orch_job *j, const char *script,
		      char *const *argv, char *const *env, bool keep_stdout,
		      uint64_t deadline_ns);

/** Runs a job to its end, waiting at most @p wait_ns (exit paths only).
 * @return its waitpid status, or -1 when it was killed. */
int lb_orch_job_wait(struct lb_orch_job *j, uint64_t wait_ns);

/** Monotonic nanoseconds (CLOCK_MONOTONIC). */
uint64_t lb_orch_now(void);

/**
 * Reads what is there and reaps the child if it has ended. At the
 * deadline the process group is killed (SIGKILL).
 * @return 1 when the job is over (*status as waitpid's), 0 while it runs.
 */
int lb_orch_job_poll(struct lb_orch_job *j, uint64_t now_ns, int *status);

/** Kills (SIGKILL) and reaps; no-op for no job. */
void lb_orch_job_kill(struct lb_orch_job *j);

#endif /* LB_ORCH_H */
