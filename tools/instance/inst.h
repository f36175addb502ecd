/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_INST_H
#define LB_INST_H

/**
 * @file
 * lb-instance internals: its configuration, the state its threads share,
 * the workers that serve connections and the load it measures.
 */

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/** Longest --name. */
#define LB_INST_NAME_MAX 64u
/** Most --threads. */
#define LB_INST_THREADS_MAX 64u

/** Options of the program; see usage() in instance.c. */
struct lb_inst_conf {
	char name[LB_INST_NAME_MAX + 1];
	uint64_t bench_ns;
	uint64_t delay_ns;
	uint64_t jitter_ns;
	uint64_t cpu_ns;
	double error_rate;
	/** Requests whose target starts with this are answered 500. */
	const char *error_path;
	uint64_t seed;
	bool stall;
	bool spl;
	/** Name of the SPL header (a token); X-SPL by default. */
	char spl_hdr[LB_INST_NAME_MAX + 1];
	bool orca;
	unsigned int threads;
	/** Requests in flight in the process; 0: no limit. */
	unsigned int max_inflight;
	/** Requests in service at once per thread; 0: no limit. */
	unsigned int slots;
	uint32_t head_max;
	uint64_t idle_ns;
	uint64_t drain_ns;
	/** --access-log: one line per request framed (its target); -1. */
	int log_fd;
};

/** Counters of one worker; written by it, read by the main thread. */
struct lb_inst_stats {
	_Atomic uint64_t accepted;
	_Atomic uint64_t responses;
	_Atomic uint64_t errors_5xx;
	_Atomic uint64_t errors_4xx;
};

/** State shared by the main thread and the workers. */
struct lb_inst_srv {
	const struct lb_inst_conf *conf;
	int listen_fd;
	/** Requests admitted and not answered, all workers together. */
	_Atomic unsigned int inflight;
	/** Requests are not served while set (--stall, SIGUSR1). */
	atomic_bool stall;
	/** SIGTERM: stop accepting, finish what is in flight, leave. */
	atomic_bool drain;
	/** Workers that have stopped watching the listening socket. */
	_Atomic unsigned int deaf;
	/** Latest ORCA figures, doubles as bits (lb_inst_load_*). */
	_Atomic uint64_t cpu_util_bits;
	_Atomic uint64_t rps_bits;
};

struct lb_inst_worker;

/**
 * Creates a worker: its epoll set, wake-up and timer descriptors.
 * @return the worker, or NULL with errno set.
 */
struct lb_inst_worker *lb_inst_worker_create(struct lb_inst_srv *srv,
					     unsigned int id);

/** Runs the worker's loop in a new thread. @return 0 or -errno. */
int lb_inst_worker_start(struct lb_inst_worker *w);

/** Wakes the worker to look at the stall and drain flags again. */
void lb_inst_worker_kick(struct lb_inst_worker *w);

/** Waits for the worker's thread to end. */
void lb_inst_worker_join(struct lb_inst_worker *w);

/** Its counters. */
const struct lb_inst_stats *
lb_inst_worker_stats(const struct lb_inst_worker *w);

/** Frees a worker whose thread has ended (or never started). */
void lb_inst_worker_free(struct lb_inst_worker *w);

/** CLOCK_MONOTONIC in ns. */
uint64_t lb_inst_mono_ns(void);

/** CLOCK_REALTIME in ns since the Unix epoch. */
uint64_t lb_inst_wall_ns(void);

/** Burns @p ns of this thread's CPU time (CLOCK_THREAD_CPUTIME_ID). */
void lb_inst_load_burn(uint64_t ns);

/** Samples the process's CPU use and answer rate for ORCA. */
struct lb_inst_load_sampler;

/**
 * Creates a sampler reporting over a window of @p window_ns; CPU use is
 * a fraction of @p threads CPUs.
 */
struct lb_inst_load_sampler *lb_inst_load_sampler_create(uint64_t window_ns,
							 unsigned int threads);

/**
 * Takes a sample: @p responses is the process's answer count so far.
 * Publishes cpu_utilization and rps_fractional in @p srv.
 */
void lb_inst_load_sample(struct lb_inst_load_sampler *s,
			 struct lb_inst_srv *srv, uint64_t responses);

void lb_inst_load_sampler_free(struct lb_inst_load_sampler *s);

/** Reads a double published with lb_inst_load_sample(). */
double lb_inst_load_get(const _Atomic uint64_t *bits);

#endif /* LB_INST_H */
