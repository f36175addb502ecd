/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_FB_H
#define LB_FB_H

/**
 * @file
 * Feedback records: what a worker reports to the control plane through its
 * single-producer, single-consumer ring. Fixed size (32 bytes, two per
 * cache line); a full ring drops the record and counts it, the worker never
 * waits. Types only: shared by lb-dataplane and lb-control.
 */

#include <stdint.h>

enum lb_fb_kind {
	LB_FB_TRIAL_OK = 1,  /**< a backend completed a handshake */
	LB_FB_TRIAL_FAIL,    /**< RST, ICMP unreachable or SYN timeout */
	LB_FB_FLOW_END,      /**< a flow expired; v = packets both ways */
	LB_FB_KIND_MAX,
};

struct lb_fb {
	uint64_t ts_ns;  /**< dataplane monotonic time of the event */
	uint16_t svc;    /**< service slot in the published table */
	uint16_t be;     /**< backend slot in that service */
	uint8_t kind;    /**< enum lb_fb_kind */
	uint8_t worker;  /**< worker that produced it */
	uint16_t flags;
	uint32_t u32;    /**< kind-specific: backend's error count after a
			      trial (adaptive), 0 otherwise */
	uint32_t pad;
	uint64_t v;      /**< kind-specific value */
};

#endif /* LB_FB_H */
