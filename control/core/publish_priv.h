/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_PUBLISH_PRIV_H
#define LB_PUBLISH_PRIV_H

/*
 * Attaching to the dataplane's shared memory and publishing tables into
 * it: lb-control's only DPDK-facing module.
 *
 * A table is built in DPDK memory from the desired configuration over the
 * published one (slots stay where they are; removed backends and deleted
 * services stay while flows use them), published with one pointer store,
 * and the old one is freed after an RCU grace period, once every worker
 * has also taken the new one up: then none can still read it. The wait
 * also guarantees that every worker runs the newest table before the next
 * one is built, so the flows counted per slot are all the flows there are.
 */

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lb/conf.h"
#include "lb/hdr_scan.h"
#include "lb/shm.h"
#include "view.h"

/**
 * Called on every table built, before it is compared with the published
 * one: lb-control's health checker marks the backends that are down.
 */
typedef void lb_pub_mark_fn(void *ctx, struct lb_dpconf *d);

struct lb_pub {
	struct lb_shm *shm; /**< NULL until attached */
	pid_t dp_pid;
	/** No worker reads a table but the published one (see settle()). */
	bool settled;
	/** Set (by a signal) when lb-control stops: waits give up. */
	const volatile sig_atomic_t *stop;
	/* The header database last compiled (malloc) and what it was
	 * compiled from: tables are published far more often than header
	 * names change. */
	struct lb_hdr_cfg hdr_cfg;
	void *hdr_blob;
	size_t hdr_len;
	/** Sees every feedback record lb_pub_drain() passes to the view
	 * (the XDP automatic deny), or NULL. */
	void (*fb_hook)(void *arg, const struct lb_fb *r, unsigned int n);
	void *fb_arg;
	lb_pub_mark_fn *mark; /**< NULL: none */
	void *mark_ctx;
};

/**
 * Looks up the dataplane's shared memory and claims it.
 * @return 0; -EAGAIN (not there yet, or not ready: try again later);
 *   -EPROTO (another layout version or size: refuse); -EBUSY (another
 *   lb-control is attached); each with one line in @p err.
 */
int lb_pub_attach(struct lb_pub *p, char *err, size_t errlen);

/** Lets go of the shared memory (forwarding goes on with its table). */
void lb_pub_detach(struct lb_pub *p);

/** Whether the attached dataplane is still there. */
bool lb_pub_alive(const struct lb_pub *p);

/**
 * Builds the table for @p conf over the published one.
 * @return 0 with *out set (DPDK memory, give it to lb_pub_commit() or
 *   lb_pub_discard()); 1 when it would be the published table again
 *   (*out NULL); a negative errno with one line in @p err.
 */
int lb_pub_build(struct lb_pub *p, const struct lb_conf *conf,
		 struct lb_dpconf **out, char *err, size_t errlen);

void lb_pub_discard(struct lb_dpconf *d);

/**
 * Publishes @p d, waits for the grace period and for every worker to
 * run it (or a later one), then frees the table it replaced.
 * @return the wait in ns, or -ENODEV if the dataplane went away while
 *   waiting (the old table is then left alone).
 */
int64_t lb_pub_commit(struct lb_pub *p, struct lb_dpconf *d);

/**
 * Whether the published table holds a removed backend or deleted service
 * whose flows are all gone, so that a rebuild would free its slot.
 */
bool lb_pub_gc_due(const struct lb_pub *p);

/**
 * Drains every worker's feedback ring into @p v, at most @p budget
 * records per worker. @return the records drained.
 */
unsigned int lb_pub_drain(struct lb_pub *p, struct lb_view *v,
			  unsigned int budget);

#endif /* LB_PUBLISH_PRIV_H */
