/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_MAIN_PRIV_H
#define LB_MAIN_PRIV_H

/*
 * What the files of lb-control's main program share: the process's
 * state (struct lb_control) and the steps main() takes. main.c: the
 * process's life; main_opts.c: the command line; main_attach.c: waiting
 * for a dataplane and attaching to it, executing again; main_setup.c:
 * the objects, the registry and the servers; main_desired.c: the
 * desired configuration (requests, state file, publishing);
 * main_loop.c: the event loop; main_steer.c: the XDP steering side.
 */

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "api.h"
#include "ctlcmd.h"
#include "publish_priv.h"

/* What the command line says. */
struct lb_control_opts {
	const char *socket;
	const char *state;
	const char *metrics; /* NULL: off */
	const char *redis;   /* cluster tier HOST:PORT, NULL: none */
	const char *scale_id; /* name in scaling leases, NULL: host name */
	unsigned int tick_ms;
	mode_t sock_mode;
	gid_t sock_gid;	    /* (gid_t)-1: lb-control's own */
	uint64_t keep_caps; /* capabilities kept after start-up */
	bool keep_all;	    /* --keep-caps all: drop nothing */
	bool markdown;
	bool cmd_table;	      /* --cmd-table: the registry as C source */
	const char *acl_auto; /* --acl-auto, NULL: off */
};

/* The process. */
struct lb_control {
	struct lb_control_opts o;
	char **argv0; /* the command line as given, for executing again */
	struct lb_ctl ctl;
	struct lb_cmd_reg *reg;
	struct lb_conf *backup; /* the configuration before a request */
	void *as_backup;	/* the autoscaler's, likewise */
	uint64_t as_gen0;
	struct lb_pub pub;
	struct lb_scale *scale; /* the autoscaler's runtime */
	struct lb_apisrv *api;
	struct lb_httpd *httpd;
	struct lb_status *status; /* the status page's data, with httpd */
	struct lb_cluster *cluster; /* admission's Redis tier, or NULL */
	struct lb_leader *leader;   /* scaling leases' Redis, or NULL */
	struct lb_steerctl *steer;  /* the XDP steering maps' side */
	int rt_lock;  /* the runtime's attach lock while attaching, or -1 */
	bool dirty;   /* desired configuration not published yet */
	bool dp_gone; /* the dataplane went away: start again */
	bool health_changed; /* a backend's health changed: publish */
	uint64_t next_slow_ns;
};

/** Set by SIGINT and SIGTERM: lb-control stops. */
extern volatile sig_atomic_t lb_control_quit;

/** Writes "lb-control: " and the message on a line of stderr. */
void lb_control_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** The wall clock in ms, the time the status page shows. */
static inline uint64_t
wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000ull + (uint64_t)ts.tv_nsec / 1000000;
}

/** The monotonic clock in ns. */
static inline uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- main_opts.c ---- */

/**
 * Sets @p m up from the command line: defaults, then lb-control's own
 * options (after "--"); *@p dd is the index of "--" (argc when none, 0
 * when the EAL is not needed). @return 0, or the status to exit with.
 */
int lb_control_cmdline(struct lb_control *m, int argc, char **argv, int *dd);
/** The EAL's arguments (@p argc of @p argv), or NULL. */
char **lb_control_eal_args(int argc, char **argv, int *eargc);

/* ---- main_attach.c ---- */

/**
 * Initialises the EAL as a secondary of the dataplane, waiting for one
 * (and executing again while none takes it). @return 0, or the status
 * to exit with.
 */
int lb_control_eal_init(struct lb_control *m, int eargc, char **eargv);
/** Attaches to the dataplane's shared memory and builds the view. */
int lb_control_attach(struct lb_control *m);
/** The dataplane went away: waits for it and starts over. */
void lb_control_restart(struct lb_control *m) __attribute__((noreturn));

/* ---- main_setup.c ---- */

/** The configuration, the autoscaler, health checks and the registry. */
int lb_control_setup(struct lb_control *m);
/** Prints the command reference (--markdown, --cmd-table). @return the
 * status to exit with. */
int lb_control_reference(struct lb_control *m);
/** The API socket, /metrics and the Redis tier. @return 0 or -1. */
int lb_control_listen(struct lb_control *m);
/** Drops the privileges start-up needed. @return 0 or -1. */
int lb_control_drop_privs(struct lb_control *m);

/* ---- main_desired.c ---- */

/** lbctl's requests: each run on the configuration, then published. */
extern const struct lb_api_ops lb_control_api_ops;
/**
 * Makes the desired configuration the dataplane's table, saving it first
 * when @p save is set. @return 0 or a negative errno (message in @p out).
 */
int lb_control_publish(struct lb_control *m, bool save, struct lb_cmd_out *out);
/** Reads the desired configuration (state file or the dataplane's). */
int lb_control_load(struct lb_control *m);
/** The first publish after attaching; retried by the loop if it fails. */
void lb_control_publish_first(struct lb_control *m);
/** The scale runtime's commit (lb_scale_commit_fn). */
int lb_control_scale_commit(void *ctx);

/* ---- main_loop.c ---- */

/** Serves until stopped or the dataplane goes away. @return 0 or -errno. */
int lb_control_serve(struct lb_control *m);
/** Stops the servers and frees the view. */
void lb_control_teardown(struct lb_control *m);

/* ---- main_steer.c ---- */

int lb_control_steer_setup(struct lb_control *m);
void lb_control_steer_attach(struct lb_control *m);
void lb_control_steer_sync(struct lb_control *m, const struct lb_dpconf *d);
void lb_control_steer_tick(struct lb_control *m);
void lb_control_steer_free(struct lb_control *m);

#endif /* LB_MAIN_PRIV_H */
