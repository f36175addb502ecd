/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_L7_REJECT_T_H
#define LB_L7_REJECT_T_H

/**
 * @file
 * The types of refusing an HTTP request (dataplane/l7/l7_reject.h): the
 * reasons that index the refusal counters in shared memory, and one
 * refused flow's state.
 */

#include <stdint.h>

/** Segments of one request held at most while its admission is open. */
#define LB_L7_HOLD_MAX 8u
/** Largest answer lb_l7_reject_http() writes. */
#define LB_L7_REJECT_HTTP_MAX 256u
/** Default Retry-After, seconds. */
#define LB_L7_RETRY_AFTER_DEFAULT 1u
/** Largest Retry-After, seconds (one day). */
#define LB_L7_RETRY_AFTER_MAX 86400u

/** Why a request was refused. Stable values: they index counters. */
enum lb_l7_rej_reason {
	LB_L7_REJ_GOVERNOR = 0, /**< overload governor, by priority */
	LB_L7_REJ_RATE,		/**< requests/s token bucket */
	LB_L7_REJ_MAX,
};

/** State of one followed flow for admission. */
enum lb_l7_rej_state {
	LB_L7_RJ_OPEN = 0, /**< forwarding */
	LB_L7_RJ_HOLD,	   /**< holding a request until its decision */
	LB_L7_RJ_DONE,	   /**< refused: the worker stands in for the server */
};

/** What to send after a client segment of a refused flow. */
enum lb_l7_rej_act {
	LB_L7_RJ_NOTHING = 0,
	LB_L7_RJ_ACK,	 /**< an ACK (the client's FIN, or a repeat) */
	LB_L7_RJ_RESEND, /**< the answer again, with its FIN */
};

/** One flow: held segments, then the sequence numbers of the refusal. */
struct lb_l7_rej {
	uint8_t state;	  /**< enum lb_l7_rej_state */
	uint8_t nheld;	  /**< segments in @c held */
	uint8_t cli_fin;  /**< the client's FIN is acknowledged */
	uint8_t reason;	  /**< enum lb_l7_rej_reason, once refused */
	uint16_t status;  /**< 503 or 429 */
	uint16_t ans_len; /**< octets of the answer */
	uint32_t retry_after; /**< seconds */
	uint32_t req_seq; /**< first octet of the held request */
	uint32_t srv_seq; /**< first octet of the answer */
	uint32_t cli_nxt; /**< next client octet: what we acknowledge */
	void *held[LB_L7_HOLD_MAX]; /**< held segments, oldest first */
};

/**
 * A TCP segment to write; addresses and ports in network order. An IPv4
 * one between @p src and @p dst, or, when @p src6 is set, an IPv6 one
 * between @p src6 and @p dst6.
 */
struct lb_l7_rej_seg {
	uint32_t src, dst;
	const uint8_t *src6, *dst6;
	uint16_t sport, dport;
	uint32_t seq, ack; /**< host order */
	uint8_t flags;	   /**< TCP flags */
	uint16_t win;
	const void *data;
	uint16_t len;
};

#endif /* LB_L7_REJECT_T_H */
