/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_VIEW_H
#define LB_VIEW_H

/**
 * @file
 * lb-control's merged view of the dataplane: what every worker counts and
 * reports, summed per backend and per service, and what each worker
 * thinks of each backend (its scheduler's error count and the weight that
 * gives it).
 *
 * Two sources. The counters that workers keep in shared memory (struct
 * lb_shm: worker stats, per-backend-slot stats) are read in place when
 * asked. The feedback records that workers push through their rings are
 * merged as they are drained (lb_view_feed()): trial outcomes per worker,
 * the latest scheduler error count each trial reported, flows ended;
 * HTTP, SPL and ORCA records go to an l7view (control/feedback/l7view.h), whose
 * per-backend and per-service reading lb_view_be_get() and
 * lb_view_svc_get() include.
 *
 * Counters of the dataplane are kept by table slot, and a slot freed by a
 * removed backend may later be given to another one. So that a backend's
 * counters start at zero and a service's never go down, lb_view_sync()
 * watches which backend holds each slot: when that changes, it takes the
 * slot's counts as the new backend's baseline and adds what the old one
 * did to its service's retired sums. (A restarted lb-control cannot know
 * the history: for slots it finds in use, the baseline is zero.)
 *
 * Pure C over plain memory: the unit tests build a struct lb_shm of their
 * own. Not thread-safe; lb-control's one thread owns the view.
 */

#include <stdbool.h>
#include <stdint.h>

#include "lb/admit.h"
#include "lb/dpconf.h"
#include "lb/fb.h"
#include "l7view.h"
#include "lb/shm.h"

/** What one worker makes of one backend. */
struct lb_view_be_worker {
	/** The error count its scheduler weighs with (from shared memory). */
	uint64_t sched_errors;
	/**
	 * The weight it gives the backend: `adaptive`, equation (6) of the
	 * dispatch paper over this worker's error counts; `rr`, 1; other
	 * schedulers, the configured weight; 0 when not eligible.
	 */
	uint64_t weight;
	uint64_t trials_ok;	  /**< from feedback, since the baseline */
	uint64_t trials_fail;	  /**< from feedback, since the baseline */
	uint32_t fb_sched_errors; /**< error count of the latest trial record */
	bool fb_seen;		  /**< a trial record arrived */
};

/** One backend slot, summed over the workers since its baseline. */
struct lb_view_be {
	uint8_t state;	 /**< enum lb_dpconf_be_state */
	uint32_t ip;	 /**< host order */
	uint16_t port;	 /**< host order */
	uint8_t af;	 /**< enum lb_conf_af: which of ip and ip6 */
	uint8_t ip6[LB_CONF_IP6_LEN];
	uint32_t weight; /**< configured */
	uint64_t flows_total;
	uint64_t flows_active;
	uint64_t errors;  /**< failed trials */
	uint64_t pkts[2]; /**< [0] client->backend, [1] backend->client */
	uint64_t bytes[2];
	uint64_t flows_ended;	 /**< from feedback */
	uint64_t http_responses; /**< final HTTP responses followed */
	uint64_t http_5xx;	 /**< of which 5xx */
	uint64_t inflight;	 /**< HTTP requests awaiting a response */
	uint32_t nb_workers;
	struct lb_view_be_worker w[LB_SHM_MAX_WORKERS];
	/** HTTP, SPL and ORCA feedback (HTTP services), at lb_view_now(). */
	struct lb_l7view_be l7;
};

/** One service slot: its backends summed, retired ones included. */
struct lb_view_svc {
	uint8_t state; /**< enum lb_dpconf_svc_state */
	uint8_t proto;
	uint32_t vip;			     /**< host order */
	uint16_t port;			     /**< host order */
	uint8_t af; /**< enum lb_conf_af: which of vip and vip6 */
	uint8_t vip6[LB_CONF_IP6_LEN];
	const struct lb_conf_svc_opts *opts; /**< in the published table */
	uint32_t nb_be[LB_BE_REMOVED + 1];   /**< backend slots by state */
	uint64_t flows_total;
	uint64_t flows_active;
	uint64_t errors;
	uint64_t pkts[2];
	uint64_t bytes[2];
	uint64_t flows_ended;
	uint64_t http_responses;
	uint64_t http_5xx;
	uint64_t inflight;
	/** Admission verdicts (enum lb_admit_verdict) over the workers. */
	uint64_t admit[LB_ADMIT_VERDICT_MAX];
	uint64_t admit_table_full; /**< keys without a shared bucket */
	/** SPL policy reading and in-flight average, at lb_view_now(). */
	struct lb_l7view_svc l7;
};

/** Feedback drained from one worker's ring. */
struct lb_view_fb {
	uint64_t records;	       /**< every record */
	uint64_t kind[LB_FB_KIND_MAX]; /**< by kind; [0]: unknown kinds */
	uint64_t invalid;	       /**< slot out of range: ignored */
};

struct lb_view;

/**
 * A view of the dataplane described by @p shm, which must stay mapped and
 * have its workers set (nb_workers, w[]).
 * @return the view, or NULL with errno EINVAL or ENOMEM.
 */
struct lb_view *lb_view_create(const struct lb_shm *shm);

void lb_view_free(struct lb_view *v);

const struct lb_shm *lb_view_shm(const struct lb_view *v);

/** The published table (lb-control is its only writer, so it stays). */
const struct lb_dpconf *lb_view_conf(const struct lb_view *v);

/**
 * Merges @p n records drained from worker @p wid's ring. Records naming a
 * slot out of range are counted as invalid and ignored.
 */
void lb_view_feed(struct lb_view *v, uint32_t wid, const struct lb_fb *r,
		  unsigned int n);

/**
 * Takes note of the published table: new baselines for slots that
 * changed hands. Call after every publish and on every tick, after
 * lb_view_feed().
 */
void lb_view_sync(struct lb_view *v);

/**
 * Sets the clock the L7 figures are read at: the dataplane's monotonic
 * nanoseconds (the time base of struct lb_fb ts_ns). Without one, the
 * time of the newest record merged.
 */
void lb_view_set_clock(struct lb_view *v, uint64_t (*clock)(void *arg),
		       void *arg);

/** Now by that clock, never before a record already merged. */
uint64_t lb_view_now(const struct lb_view *v);

/**
 * One tick of lb-control: samples every HTTP service's requests in
 * flight (summed over its backends and the workers) for its average.
 * Call once per tick, after lb_view_sync().
 */
void lb_view_tick(struct lb_view *v);

/**
 * Backend @p be of service slot @p svc: state, counters and weights as
 * they are now, counters from the baseline of the last lb_view_sync().
 * @return 0, -EINVAL (out of range), -ENOENT (empty slot).
 */
int lb_view_be_get(const struct lb_view *v, uint32_t svc, uint32_t be,
		   struct lb_view_be *out);

/**
 * Service slot @p svc.
 * @return 0, -EINVAL (out of range), -ENOENT (empty slot).
 */
int lb_view_svc_get(const struct lb_view *v, uint32_t svc,
		    struct lb_view_svc *out);

/** Feedback counters of worker @p wid, or NULL. */
const struct lb_view_fb *lb_view_fb_stats(const struct lb_view *v,
					  uint32_t wid);

/** Sums every worker's struct lb_worker_stats of @p shm into @p sum. */
void lb_view_stats_sum(const struct lb_shm *shm, struct lb_worker_stats *sum);

/**
 * The content routing hits of table slot @p slot summed over the
 * workers: @p hits[r] for its first @p n rules (at most
 * LB_ROUTE_FLAT_RULES), @p hits[n] for its default.
 */
void lb_view_rule_hits(const struct lb_shm *shm, uint32_t slot,
		       uint64_t *hits, unsigned int n);

/**
 * Whether flows still use backend @p be of service slot @p svc (any of
 * its backends when @p be is UINT32_MAX): the sum over the workers of
 * their active flows there. @p ctx is the const struct lb_shm; the
 * signature is lb_dpconf_busy_fn's, for lb_dpconf_compile().
 */
bool lb_view_busy(void *ctx, uint32_t svc, uint32_t be);

/**
 * Whether flows still use SNAT address @p ip (network order): a worker's
 * allocator has pairs of it handed out. @p ctx is the const struct
 * lb_shm; the signature is lb_dpconf_snat_busy_fn's.
 */
bool lb_view_snat_busy(void *ctx, uint32_t ip);

/** lb_view_snat_busy() for an IPv6 SNAT address (lb_dpconf_snat6_busy_fn). */
bool lb_view_snat6_busy(void *ctx, const uint8_t *ip);

/** The address of backend @p b (host order). */
static inline struct lb_conf_ip
lb_view_be_ip(const struct lb_view_be *b)
{
	return lb_conf_ip_of(b->af, b->ip, b->ip6);
}

/** The key of service @p s (host order). */
static inline struct lb_conf_svc_key
lb_view_svc_key(const struct lb_view_svc *s)
{
	struct lb_conf_ip vip = lb_conf_ip_of(s->af, s->vip, s->vip6);

	return lb_conf_svc_key_of(s->proto, &vip, s->port);
}

/** Stable name of feedback kind @p k ("trial_ok", ...; "unknown"). */
const char *lb_view_fb_kind_name(unsigned int k);

struct lb_govview;
/** The services' overload governors (control/gov/govview.h), fed and ticked by
 * lb_view_feed(), lb_view_sync() and lb_view_tick(). */
const struct lb_govview *lb_view_gov(const struct lb_view *v);

/** "active", "draining", "removed" or "empty". */
const char *lb_view_be_state_name(uint8_t state);

/** "active", "deleted" or "empty". */
const char *lb_view_svc_state_name(uint8_t state);

#endif /* LB_VIEW_H */
