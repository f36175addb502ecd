/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_APISRV_PRIV_H
#define LB_APISRV_PRIV_H

/*
 * lb-control's API socket: a Unix stream socket served from lb-control's
 * one thread through poll(2). Each connection may carry many requests,
 * answered in order; a request runs to completion before the next is
 * read, so commands never interleave. A slow reader only stalls its own
 * connection (its input is not read while its answers wait), and a
 * connection that breaks the protocol gets one error line and is closed.
 */

#include <poll.h>
#include <stdint.h>
#include <sys/types.h>

#include "api.h"

/** Most connections at once; one more is answered with an error. */
#define LB_APISRV_CONNS 64u
/** Answers waiting to be written before a connection is not read. */
#define LB_APISRV_OUT_HIGH (1u << 20)

struct lb_apisrv;

/** What the server counts, for lb-control's own counters. */
struct lb_apisrv_stats {
	uint64_t conns;
	uint64_t requests;
	uint64_t errors; /**< answered with "ok": false */
};

/**
 * Listens on @p path with file mode @p mode, creating its directory (mode
 * 0755) if needed. A stale socket file (nobody answering) is replaced; a
 * live one is an error: another lb-control serves it.
 * @return the server, or NULL with a message in @p err and errno set.
 */
struct lb_apisrv *lb_apisrv_create(const char *path, mode_t mode,
				   const struct lb_api_ops *ops, void *ctx,
				   char *err, size_t errlen);

/**
 * lb_apisrv_create() with the socket's group set to @p gid ((gid_t)-1:
 * the process's), so that @p mode 0660 opens it to that group. The socket
 * is born owner-only and gets its group and @p mode before it listens:
 * nobody else can connect in between.
 */
struct lb_apisrv *lb_apisrv_create_gid(const char *path, mode_t mode,
				       gid_t gid,
				       const struct lb_api_ops *ops, void *ctx,
				       char *err, size_t errlen);

/** Closes every connection and removes the socket file. */
void lb_apisrv_free(struct lb_apisrv *s);

/**
 * Fills at most @p max entries of @p pfd with what the server waits for.
 * @return the number of entries filled.
 */
unsigned int lb_apisrv_pollfds(struct lb_apisrv *s, struct pollfd *pfd,
			       unsigned int max);

/** Serves what poll(2) reported in the @p n entries of @p pfd. */
void lb_apisrv_process(struct lb_apisrv *s, const struct pollfd *pfd,
		       unsigned int n);

const struct lb_apisrv_stats *lb_apisrv_stats(const struct lb_apisrv *s);

#endif /* LB_APISRV_PRIV_H */
