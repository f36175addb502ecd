/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_HEALTH_H
#define LB_HEALTH_H

/**
 * @file
 * Active health checks of backends, run by lb-control: per service, or
 * per named pool that has a check of its own (`pool add|set ... check`,
 * lb_conf_pool_check()), a TCP connect or an HTTP GET (path, expected
 * status range) every interval, with a timeout, and rise/fall counts of
 * consecutive results before a backend changes state (struct
 * lb_conf_check, service options `check`, `check-path` ...). A change of
 * a check restarts the checks of the backends that have it only.
 *
 * A backend of a checked service takes new flows only while it is up:
 * lb_health_mark() writes the state into each table lb-control publishes
 * (struct lb_dpconf_be.health), which the schedulers' eligibility test
 * honours; flows already running are not touched. Backends configured
 * when lb-control starts (its state file) start up and need `fall`
 * failures to go down, so a restart of lb-control changes nothing;
 * backends added later start pending and need `rise` successes.
 *
 * The probes are ordinary non-blocking sockets of lb-control's poll loop
 * (lb_health_pollfds(), lb_health_process()): they go through the
 * kernel, and so through the dataplane's exception path when DPDK owns
 * the NIC. A backend is probed in its own family, IPv4 or IPv6, whatever
 * its service's (an HTTP check's Host names an IPv6 backend in brackets).
 * Time is given by the caller. No DPDK; not thread-safe.
 */

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lb/conf.h"

struct lb_dpconf;

/** Probes in flight at once; the others wait for a free one. */
#define LB_HEALTH_MAX_PROBES 128u

enum lb_health_state {
	LB_HEALTH_NONE = 0, /**< the service has no check: eligible */
	LB_HEALTH_PENDING,  /**< new, `rise` successes not seen yet */
	LB_HEALTH_UP,	    /**< eligible for new flows */
	LB_HEALTH_DOWN,	    /**< `fall` failures in a row */
	LB_HEALTH_NB,
};

/** The outcome of one probe. */
enum lb_health_why {
	LB_HC_OK = 0,
	LB_HC_REFUSED,	    /**< connection refused */
	LB_HC_TIMEOUT,	    /**< no (complete) answer within the timeout */
	LB_HC_CONN_ERROR,   /**< unreachable, reset, another socket error */
	LB_HC_STATUS,	    /**< http: a status outside the expected range */
	LB_HC_BAD_RESPONSE, /**< http: no HTTP status line */
	LB_HC_CLOSED,	    /**< http: closed before a status line */
	LB_HC_LOCAL,	    /**< no socket here (descriptors, memory) */
	LB_HC_NB,
};

/** "none", "pending", "up", "down". */
const char *lb_health_state_name(enum lb_health_state s);
/** "ok", "refused", "timeout", ... */
const char *lb_health_why_name(enum lb_health_why w);

/** Rise/fall counting of one backend; the pure core of the checker. */
struct lb_health_fsm {
	uint8_t state; /**< enum lb_health_state */
	uint32_t ok_run;
	uint32_t fail_run;
};

/**
 * Applies one probe's result to @p f: a pending or down backend goes up
 * after @p rise successes in a row, an up one goes down after @p fall
 * failures in a row; a result against the run resets it.
 * @return true when the state changed.
 */
bool lb_health_fsm_result(struct lb_health_fsm *f, bool ok, uint32_t rise,
			  uint32_t fall);

/**
 * Reads the status line at the start of an HTTP response.
 * @return 1 with *status set; 0 when more bytes are needed; -1 when it
 * is not "HTTP/d.d SSS".
 */
int lb_health_http_status(const char *buf, size_t len, unsigned int *status);

/** What the checker knows of one backend. */
struct lb_health_be_info {
	enum lb_health_state state;
	uint32_t ok_run, fail_run;
	uint64_t since_ns; /**< when it entered its state */
	uint64_t probes;   /**< probes finished */
	uint64_t failures; /**< of which failed */
	bool has_last;	   /**< a probe finished since it is known */
	enum lb_health_why last;
	unsigned int last_status; /**< http status, 0 without one */
	uint64_t last_latency_ns; /**< start to outcome */
	uint64_t last_ns;	  /**< when the last probe ended */
};

struct lb_health_stats {
	uint64_t probes;   /**< finished */
	uint64_t failures;
	uint64_t changes;  /**< state changes */
	uint64_t deferred; /**< probes that waited for a free slot */
	unsigned int inflight;
};

struct lb_health;

/**
 * Told of every state change of a backend (after it happened; the
 * configuration may not be changed from inside).
 */
typedef void lb_health_change_fn(void *ctx, const struct lb_conf_svc_key *k,
				 const struct lb_conf_ip *ip, uint16_t port,
				 enum lb_health_state from,
				 enum lb_health_state to);

/**
 * A checker following @p conf (which must outlive it).
 * @return the checker, or NULL with errno ENOMEM.
 */
struct lb_health *lb_health_create(const struct lb_conf *conf);

/** Closes every probe and frees @p h (NULL is fine). */
void lb_health_free(struct lb_health *h);

/**
 * Adds a listener of state changes (at most 4).
 * @return 0, -ENOSPC.
 */
int lb_health_listen(struct lb_health *h, lb_health_change_fn *fn,
		     void *ctx);

/**
 * Follows the configuration: backends and check settings as @p conf has
 * them now. The first call takes the backends configured at start (up);
 * later new backends of checked services start pending. Cheap when the
 * configuration's generation did not change.
 */
void lb_health_sync(struct lb_health *h, uint64_t now_ns);

/**
 * The checker's view of a backend.
 * @return 0, -ENOENT (no such backend of that service).
 */
int lb_health_get(const struct lb_health *h, const struct lb_conf_svc_key *k,
		  uint32_t ip, uint16_t port, struct lb_health_be_info *info);

/** lb_health_get() of a backend of either family. */
int lb_health_get_ip(const struct lb_health *h,
		     const struct lb_conf_svc_key *k,
		     const struct lb_conf_ip *ip, uint16_t port,
		     struct lb_health_be_info *info);

/** Whether the backend may take new flows (unknown ones may). */
bool lb_health_eligible(const struct lb_health *h,
			const struct lb_conf_svc_key *k, uint32_t ip,
			uint16_t port);

/**
 * Writes each backend's health into table @p d (after syncing with the
 * configuration at @p now_ns): pending and down backends of checked
 * services are marked down, all others up. A backend that came back up
 * (pending or down to up) since the last call gets one more up_gen.
 */
void lb_health_mark(struct lb_health *h, struct lb_dpconf *d,
		    uint64_t now_ns);

/**
 * The descriptors of the probes in flight, for poll(2); at most @p max.
 * @return how many were written.
 */
unsigned int lb_health_pollfds(const struct lb_health *h, struct pollfd *pfd,
			       unsigned int max);

/**
 * After poll(2): goes on with the probes whose descriptors are ready
 * (@p pfd as filled by lb_health_pollfds(), @p n of them, any revents),
 * fails those past their timeout, and starts the probes that are due.
 * Call it on every loop, whether poll() returned events or not.
 */
void lb_health_process(struct lb_health *h, const struct pollfd *pfd,
		       unsigned int n, uint64_t now_ns);

/** Milliseconds until lb_health_process() has work, -1 for none. */
int lb_health_timeout_ms(const struct lb_health *h, uint64_t now_ns);

const struct lb_health_stats *lb_health_stats(const struct lb_health *h);

#endif /* LB_HEALTH_H */
