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
	/** A final HTTP response: u32 = status, u32b = expected ms (if
	 * LB_FB_F_EXPECT), v = latency ns (if LB_FB_F_TIMED), flags. */
	LB_FB_HTTP,
	/** X-SPL: v = the value (a double's bits), u32 = its age in ms when
	 * it arrived (if LB_FB_F_SPL_TIME, else 0: generated on receipt). */
	LB_FB_SPL,
	/** ORCA load report: v = cpu_utilization (a double's bits), u32 =
	 * mem_utilization in millionths. */
	LB_FB_ORCA,
	/** A throttle key entered a worker's negative cache (at most once
	 * per key, worker and 10 ms interval): svc = service slot, flags =
	 * enum lb_admit_verdict in the low byte and the key class (enum
	 * lb_admit_key) << 8. An IPv4 client: u32 = its address in host
	 * order. An IPv6 client (LB_FB_F_REJ6): key6 = the admitted key
	 * (the address, or its admit-prefix6 prefix with host bits zero),
	 * be = its length (128 for an address; 0 for a key that is no
	 * source: the service, a priority). */
	LB_FB_REJECT,
	LB_FB_KIND_MAX,
};

#define LB_FB_F_TIMED 0x01    /**< HTTP: latency measured */
#define LB_FB_F_EXPECT 0x02   /**< HTTP: the request gave X-Expect-Ms */
#define LB_FB_F_QOS_MET 0x04  /**< HTTP: answered within the expectation */
#define LB_FB_F_PRIO 0x08     /**< HTTP: the request gave X-Priority */
#define LB_FB_F_SPL_TIME 0x10 /**< SPL: X-SPL-Time was given */
/** HTTP: no X-Expect-Ms; the expectation (LB_FB_F_EXPECT, u32b) is the
 * service's `default-expect`. */
#define LB_FB_F_EXPECT_DEF 0x20
/** HTTP: no X-Priority; the rank in flags >> 8 is the service's
 * `default-priority` (LB_FB_F_PRIO stays for a rank the request gave). */
#define LB_FB_F_PRIO_DEF 0x40
#define LB_FB_PRIO_SHIFT 8    /**< HTTP: priority rank in flags >> 8 */
/** REJECT: an IPv6 client, key6 and be hold its key (beside the verdict
 * in the low byte, whose values stay below it). */
#define LB_FB_F_REJ6 0x80

struct lb_fb {
	uint64_t ts_ns;  /**< dataplane monotonic time of the event */
	uint16_t svc;    /**< service slot in the published table */
	uint16_t be;     /**< backend slot in that service */
	uint8_t kind;    /**< enum lb_fb_kind */
	uint8_t worker;  /**< worker that produced it */
	uint16_t flags;
	union {
		struct {
			/** kind-specific: backend's error count after a
			 * trial (adaptive), HTTP status, SPL age */
			uint32_t u32;
			uint32_t u32b; /**< kind-specific */
			uint64_t v;    /**< kind-specific value */
		};
		/** REJECT of an IPv6 client: its key, network order. */
		uint8_t key6[16];
	};
};

_Static_assert(sizeof(struct lb_fb) == 32, "two records per cache line");

#endif /* LB_FB_H */
