/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_RTLOCK_H
#define LB_RTLOCK_H

/**
 * @file
 * Who may touch a DPDK runtime directory when: lb-dataplane (the primary)
 * while it starts, lb-control (a secondary) while it attaches.
 *
 * A secondary that initialises its EAL while a primary of the same
 * --file-prefix is still initialising reads a half-written memory
 * configuration: the config file keeps the previous runtime's contents
 * (its "complete" magic included) until the new primary overwrites them,
 * and the secondary's shared locks on the memzone list make the primary
 * fail ("Cannot allocate memzone list"). Two files in the runtime
 * directory order them:
 *
 * - LB_RT_LOCK_FILE: the dataplane holds it exclusively from before its
 *   EAL starts until it is ready; lb-control holds it shared while its
 *   EAL attaches. Neither waits for the other for long.
 * - LB_RT_READY_FILE: the dataplane's pid, written once it is ready for
 *   secondaries. It is ready when that pid is the one that holds the
 *   EAL's config lock, so a marker left by a killed dataplane says
 *   nothing about the next one.
 *
 * A dataplane killed while lb-control was attached leaves the memzone
 * list files locked, the config mapped and a multi-process socket bound
 * by lb-control until it lets go of that runtime; the next dataplane
 * removes them when no primary holds the config (its EAL then creates
 * fresh ones), so that neither process sees, or waits for, the other.
 *
 * Pure C, no EAL: the checks run before the EAL does.
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define LB_RT_LOCK_FILE "lb_start.lock"
#define LB_RT_READY_FILE "lb_ready"

/**
 * The runtime directory the EAL derives from EAL arguments @p argv
 * (--file-prefix, "rte" by default): /var/run/dpdk/PREFIX for root,
 * else under $XDG_RUNTIME_DIR or /tmp.
 * @return 0, -ENOENT if the arguments ask for no shared files
 * (--in-memory, --no-shconf), -ENAMETOOLONG
 */
int lb_rt_dir(int argc, char **argv, char *buf, size_t n);

/**
 * Pid of the primary process that holds @p dir's EAL config lock, 0 if
 * none does.
 */
pid_t lb_rt_primary(const char *dir);

/**
 * The dataplane's start lock: creates @p dir if needed, and takes the
 * lock exclusively, waiting at most @p timeout_ms for attaching
 * secondaries to let go.
 * @return the lock's descriptor (close-on-exec), or a negative errno
 * (-EWOULDBLOCK when the wait timed out)
 */
int lb_rt_start_lock(const char *dir, unsigned int timeout_ms);

/**
 * Removes the config, memzone list files (fbarray_*) and multi-process
 * sockets (mp_socket*) of a dead runtime in @p dir. Does nothing while a primary holds the config lock.
 * @return files removed, or a negative errno
 */
int lb_rt_clear_stale(const char *dir);

/** Writes the ready marker with @p pid; 0 or a negative errno. */
int lb_rt_set_ready(const char *dir, pid_t pid);

/** Removes the ready marker if it holds @p pid. */
void lb_rt_clear_ready(const char *dir, pid_t pid);

/**
 * A secondary's attach lock: the start lock taken shared without waiting,
 * granted only while a ready primary runs.
 * @return the lock's descriptor (close-on-exec), -EAGAIN while a
 * dataplane starts or none is ready, or another negative errno
 */
int lb_rt_attach_lock(const char *dir);

/** Releases a lock from lb_rt_start_lock() or lb_rt_attach_lock(). */
void lb_rt_unlock(int fd);

#endif /* LB_RTLOCK_H */
