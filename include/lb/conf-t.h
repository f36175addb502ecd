/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_CONF_T_H
#define LB_CONF_T_H

/**
 * @file
 * The configuration model's types (conf.h): limits and defaults, the
 * service options (struct lb_conf_svc_opts) and the X-lists their rows
 * are made from, and the records of addresses, routes, services and
 * backends. Apart from conf.h because the published table (lb/dpconf-t.h)
 * carries a service's options into shared memory: the workers need the
 * layout, not the commands that change the model.
 *
 * The option type column of the X-lists names enum lb_cmd_opt_type
 * (lb/cmd.h); a file that expands that column includes lb/cmd.h.
 */

#include <stdbool.h>
#include <stdint.h>

#include "lb/admit_conf.h"
#include "lb/http_err-t.h"

/** Most virtual services. */
#define LB_CONF_MAX_SVCS 64u
/** Most backends per service. */
#define LB_CONF_MAX_BES 256u
/** Most local addresses (`addr`). */
#define LB_CONF_MAX_ADDRS 16u
/** Most SNAT addresses. */
#define LB_CONF_MAX_SNATS 16u
/** Most routes. */
#define LB_CONF_MAX_ROUTES 16u
/** Largest DPDK port id: DPDK's default RTE_MAX_ETHPORTS is 32. */
#define LB_CONF_PORT_MAX 31u
/** Longest scheduler name, in bytes. */
#define LB_CONF_SCHED_LEN 31u
/** Most named pools of a service, besides its default pool. */
#define LB_CONF_MAX_POOLS 15u
/** Longest pool name, in bytes. */
#define LB_CONF_POOL_NAME_LEN 31u
/** The name rules give a service's default pool. */
#define LB_CONF_POOL_DEFAULT "default"
/** The value of a pool's `check` that has it follow its service's check,
 * and what `pool list` shows for such a pool. */
#define LB_CONF_POOL_CHECK_SERVICE "service"
/** Longest text of lb_conf_pool_check_str(). */
#define LB_CONF_POOL_CHECK_STRLEN (LB_CONF_CHECK_PATH_LEN + 8)
/** Most content routing rules of a service (LB_ROUTE_FLAT_RULES). */
#define LB_CONF_MAX_RULES 32u
/** Longest text of a rule, in bytes. */
#define LB_CONF_RULE_LEN 383u
/** Longest text of a service's default action ("pool NAME", "refuse
 * 421"). */
#define LB_CONF_RULE_DEF_LEN 47u

/** Default scheduler: the error-adaptive weights of the dispatch paper. */
#define LB_CONF_SCHED_DEFAULT "adaptive"
/** Default backend weight. */
#define LB_CONF_WEIGHT_DEFAULT 1u
/** Largest backend weight (draining, not weight 0, stops new flows). */
#define LB_CONF_WEIGHT_MAX 65535u
/**
 * Default retries: 0 means as many trials as the service has backends,
 * Algorithm 2 of the dispatch paper ("Number of trials is equal to number
 * of nodes").
 */
#define LB_CONF_RETRIES_DEFAULT 0u
/** Largest explicit number of trials. */
#define LB_CONF_RETRIES_MAX LB_CONF_MAX_BES
/*
 * Error-feedback guards. err-memory 8 (the paper's reset is 1): a backend
 * answering half its requests with 5xx keeps about 8 errors and a third
 * of its fair share, one failing 1 in 10 keeps 90 % of it. max-eject 10
 * and panic 50 are Envoy's outlier-ejection and healthy-panic defaults.
 */
#define LB_CONF_ERR_MEMORY_DEFAULT 8u
#define LB_CONF_ERR_MEMORY_MAX 1024u
#define LB_CONF_MIN_VOLUME_DEFAULT 10u
#define LB_CONF_MIN_VOLUME_MAX 1000000u
#define LB_CONF_MAX_EJECT_DEFAULT 10u
#define LB_CONF_PANIC_DEFAULT 50u
/**
 * Default deferred queue length per service and worker: 2048, the queue
 * length of serviceq, the paper's reference gateway (its default
 * CONCURRENCY_PEAK, and `queue_length = 2048` in the paper's section 6).
 * 0 disables the deferred queue: the paper recommends it only for
 * operations that may be executed late (section 4.2).
 */
#define LB_CONF_DEFERQ_DEFAULT 2048u
/** Largest deferred queue length. */
#define LB_CONF_DEFERQ_MAX (1u << 20)
/**
 * Default retry gap of the deferred queue: 1 s. The paper and serviceq use
 * 0 (section 6: retry_gap = 0), but there a retry is a request inside the
 * gateway; here it is a SYN on the wire to every backend in turn, and with
 * gap 0 a dead cluster would receive one SYN per queued client on every
 * housekeeping pass. 1 s is TCP's initial retransmission timeout (RFC 6298),
 * the pace at which the client itself would try again. `retry-gap 0`
 * restores the paper's behaviour.
 */
#define LB_CONF_RETRY_GAP_DEFAULT_NS 1000000000ull
/** Largest retry gap: one hour (more is a unit mistake). */
#define LB_CONF_RETRY_GAP_MAX_NS 3600000000000ull
/**
 * Default expiry: a new connection waits at most 5 s in the deferred
 * queue before it is answered with a RST. The paper sets no expiry; 5 s
 * lets a client's SYN retransmissions at 1 s and 3 s join its entry and
 * still fails the connection long before the client gives up by itself.
 */
#define LB_CONF_EXPIRY_DEFAULT_NS 5000000000ull
#define LB_CONF_EXPIRY_MIN_NS 1000000ull	/**< 1 ms */
#define LB_CONF_EXPIRY_MAX_NS 86400000000000ull /**< 24 h */
/**
 * Default SYN timeout: a backend that has not answered a forwarded SYN
 * within 1 s counts as failed and the next trial starts; 1 s is TCP's
 * initial retransmission timeout (RFC 6298).
 */
#define LB_CONF_SYN_TIMEOUT_DEFAULT_NS 1000000000ull
#define LB_CONF_SYN_TIMEOUT_MIN_NS 1000000ull	  /**< 1 ms */
#define LB_CONF_SYN_TIMEOUT_MAX_NS 60000000000ull /**< 1 min */

/**
 * Options of a service's flows (docs/configuration.md, "Flow timeouts"):
 * how long a flow may stay idle in each state after the handshake
 * started, and the RSTs that tell both ends when the dataplane forgot a
 * connection. X(id, keyword, option type, min, max, default); durations in
 * ns, longest 7 days (the flow table's LB_FLOW_TIMEOUT_MAX_NS). The state
 * timeouts default to DPVS's (short: a SYN flood or a close does not hold
 * a flow for minutes), except ESTABLISHED: IPVS's 15 min, longer than the
 * 5 min browsers keep idle keep-alive connections, where DPVS's 90 s cut
 * them. `rst-rate` bounds, per worker, the RSTs answered to segments
 * without a flow (0: none); `idle-rst` sends both ends of an idle
 * ESTABLISHED flow that expires a probe that gets them a RST. A UDP
 * flow that has had no datagram from its backend yet is held only
 * `timeout-udp-unreplied` (5 s: longer than the first retry interval of
 * DNS and NTP clients, so a backend that answers at all moves the flow
 * to `timeout-udp` in time, and short enough that datagrams from new
 * source ports cost a SNAT port for seconds, not minutes). The rows
 * of control/conf/svc_opt_flow.c are made from it (lb/svc_opt.h).
 */
#define LB_CONF_FLOW_LIST(X)                                                   \
	X(SYN_RECV, "timeout-syn-recv", LB_CMD_OPT_DURATION, 1000000ull,       \
	  604800000000000ull, 30000000000ull)                                  \
	X(ESTABLISHED, "timeout-established", LB_CMD_OPT_DURATION, 1000000ull, \
	  604800000000000ull, 900000000000ull)                                 \
	X(CLOSING, "timeout-closing", LB_CMD_OPT_DURATION, 1000000ull,         \
	  604800000000000ull, 7000000000ull)                                   \
	X(TIME_WAIT, "timeout-time-wait", LB_CMD_OPT_DURATION, 1000000ull,     \
	  604800000000000ull, 7000000000ull)                                   \
	X(CLOSED, "timeout-closed", LB_CMD_OPT_DURATION, 1000000ull,           \
	  604800000000000ull, 3000000000ull)                                   \
	X(UDP, "timeout-udp", LB_CMD_OPT_DURATION, 1000000ull,                 \
	  604800000000000ull, 300000000000ull)                                 \
	X(UDP_UNREPLIED, "timeout-udp-unreplied", LB_CMD_OPT_DURATION,         \
	  1000000ull, 604800000000000ull, 5000000000ull)                       \
	X(RST_RATE, "rst-rate", LB_CMD_OPT_U64, 0, 1000000, 1000)              \
	X(IDLE_RST, "idle-rst", LB_CMD_OPT_BOOL, 0, 1, 1)

#define LB_CONF_FLOW_ENUM(id, kw, type, lo, hi, def) LB_CONF_FLOW_##id,
enum lb_conf_flow_opt { LB_CONF_FLOW_LIST(LB_CONF_FLOW_ENUM) LB_CONF_FLOW_NB };
#undef LB_CONF_FLOW_ENUM

/**
 * Feedback headers whose names a service configures, in the order of the
 * first kinds of enum lb_hdr_kind (lb/hdr_scan.h); docs/l7-feedback.md
 * says where each default comes from.
 */
enum lb_conf_hdr {
	LB_CONF_HDR_SPL = 0,   /**< `spl-header`, default X-SPL */
	LB_CONF_HDR_SPL_TIME,  /**< `spl-time-header`, default X-SPL-Time */
	LB_CONF_HDR_PRIORITY,  /**< `priority-header`, default X-Priority */
	LB_CONF_HDR_EXPECT,    /**< `expect-header`, default X-Expect-Ms */
	LB_CONF_HDR_ORCA,      /**< `orca-header`, endpoint-load-metrics */
	LB_CONF_HDR_NB
};
/** Longest header name (LB_HDR_NAME_MAX of the scanner). */
#define LB_CONF_HDR_NAME_MAX 64u
/** Health checks of a service's backends (lb-control,
 * control/health/health.h). */
enum lb_conf_check_type {
	LB_CONF_CHECK_NONE = 0, /**< none: every backend is eligible */
	LB_CONF_CHECK_TCP,	/**< a TCP connection is accepted */
	LB_CONF_CHECK_HTTP,	/**< GET check-path answers check-status */
};
/** Longest check path, in bytes. */
#define LB_CONF_CHECK_PATH_LEN 127u
/*
 * Check defaults are HAProxy's (configuration manual, section 5.2 server
 * options and `timeout check`): a check every 2 s ("inter 2000"), 2
 * successes to go up ("rise 2"), 3 failures to go down ("fall 3"), and
 * without `timeout check` a check may take the interval. `option httpchk`
 * asks for "/" and takes 2xx and 3xx as success.
 */
#define LB_CONF_CHECK_INTERVAL_DEFAULT_NS 2000000000ull
#define LB_CONF_CHECK_INTERVAL_MIN_NS 100000000ull    /**< 100 ms */
#define LB_CONF_CHECK_INTERVAL_MAX_NS 3600000000000ull /**< 1 h */
#define LB_CONF_CHECK_TIMEOUT_DEFAULT_NS 2000000000ull
#define LB_CONF_CHECK_TIMEOUT_MIN_NS 10000000ull    /**< 10 ms */
#define LB_CONF_CHECK_TIMEOUT_MAX_NS 60000000000ull /**< 1 min */
#define LB_CONF_CHECK_RISE_DEFAULT 2u
#define LB_CONF_CHECK_FALL_DEFAULT 3u
#define LB_CONF_CHECK_COUNT_MAX 100u
#define LB_CONF_CHECK_STATUS_LO_DEFAULT 200u
#define LB_CONF_CHECK_STATUS_HI_DEFAULT 399u

/** A service's health check; lb_conf_svc_opts_default() fills it. */
/** PROXY protocol version a service's backends get (`proxy-protocol`). */
enum lb_conf_pp {
	LB_CONF_PP_OFF = 0,
	LB_CONF_PP_V1, /**< the text line */
	LB_CONF_PP_V2, /**< the binary header */
};

/** Whether the worker answers a service's handshakes (`synproxy`). */
enum lb_conf_synp_mode {
	LB_CONF_SYNP_OFF = 0,
	LB_CONF_SYNP_ON,   /**< every SYN gets a cookie */
	LB_CONF_SYNP_AUTO, /**< cookies while a worker sees a flood */
};

/** The SYN proxy of a service (docs/configuration.md, "SYN proxy"). */
struct lb_conf_synp {
	uint8_t mode;	    /**< enum lb_conf_synp_mode */
	uint8_t wscale;	    /**< window scale offered to clients */
	uint16_t mss;	    /**< MSS offered to clients */
	uint32_t syn_rate;  /**< auto: SYNs/s per worker that turn it on */
	uint32_t half_open; /**< auto: unfinished handshakes per second */
	uint64_t calm_ns;   /**< auto: quiet this long to turn it off */
};

struct lb_conf_check {
	uint8_t type;	/**< enum lb_conf_check_type */
	uint16_t port;	/**< 0: the backend's own port */
	uint16_t status_lo, status_hi; /**< http: expected status range */
	uint32_t rise, fall; /**< results in a row to go up, down */
	uint64_t interval_ns, timeout_ns;
	char path[LB_CONF_CHECK_PATH_LEN + 1]; /**< http: absolute path */
};

/** IP protocol numbers of the services. */
#define LB_CONF_PROTO_TCP 6u
#define LB_CONF_PROTO_UDP 17u

/* IPv4 addresses are uint32_t in host byte order (10.0.0.1 is
 * 0x0a000001); IPv6 ones are 16 bytes as on the wire. */

/** The family of a configured address. IPv4 is 0, so that a zeroed entry
 * is the IPv4 one every configuration without IPv6 has. */
enum lb_conf_af {
	LB_CONF_AF_INET = 0,
	LB_CONF_AF_INET6 = 1,
};

/** Bytes of an IPv6 address. */
#define LB_CONF_IP6_LEN 16u

/**
 * An address of either family, as the command parsers return it and the
 * configuration's changes take it: @c ip for IPv4, @c ip6 for IPv6, the
 * other left zero. The records below hold the same three fields inline.
 */
struct lb_conf_ip {
	uint8_t af; /**< enum lb_conf_af */
	uint32_t ip;
	uint8_t ip6[LB_CONF_IP6_LEN];
};

/** A local address: answered for ARP and ICMP, defines a subnet. */
struct lb_conf_addr {
	uint8_t af;    /**< enum lb_conf_af: which of ip and ip6 */
	uint32_t ip;
	uint8_t ip6[LB_CONF_IP6_LEN];
	uint8_t len;   /**< subnet length, 1..32 (IPv6: 1..128) */
	uint16_t port; /**< DPDK port id */
	/** 802.1Q VLAN id of the port, 1..LB_CONF_VLAN_MAX; 0: untagged.
	 * Every address of one port has the same. */
	uint16_t vlan;
};

/** Largest 802.1Q VLAN id (4095 is reserved). */
#define LB_CONF_VLAN_MAX 4094u

/** Next hop for destinations outside the connected subnets. */
struct lb_conf_route {
	uint8_t af;    /**< enum lb_conf_af of the network and gateway */
	uint32_t net;  /**< network, no host bits; 0/0 is the default */
	uint8_t net6[LB_CONF_IP6_LEN];
	uint8_t len;   /**< 0..32 (IPv6: 0..128) */
	uint32_t gw;   /**< in a connected subnet of @c port */
	uint8_t gw6[LB_CONF_IP6_LEN];
	uint16_t port; /**< DPDK port id */
};

/** A SNAT (local) address used as source toward backends. */
struct lb_conf_snat {
	uint8_t af; /**< enum lb_conf_af: which of ip and ip6 */
	uint32_t ip;
	uint8_t ip6[LB_CONF_IP6_LEN];
	uint16_t port; /**< DPDK port id */
};

/** What identifies a service. */
struct lb_conf_svc_key {
	uint8_t proto; /**< LB_CONF_PROTO_TCP or LB_CONF_PROTO_UDP */
	uint8_t af;    /**< enum lb_conf_af: which of vip and vip6 */
	uint32_t vip;
	uint8_t vip6[LB_CONF_IP6_LEN];
	uint16_t port; /**< 1..65535 */
};

/**
 * Options of the overload governor and of HTTP request admission
 * (docs/admission.md, docs/policies.md): X(id, keyword, option type, min,
 * max, default). Durations in ns, the rest plain integers; the rows of
 * control/conf/svc_opt_gov.c are made from it (lb/svc_opt.h).
 */
#define LB_CONF_GOV_LIST(X)                                                    \
	X(ON, "governor", LB_CMD_OPT_BOOL, 0, 1, 0)                           \
	X(IDEAL, "gov-ideal-rate", LB_CMD_OPT_BOOL, 0, 1, 0)                  \
	X(INTERVAL, "gov-interval", LB_CMD_OPT_DURATION, 1000000ull,           \
	  3600000000000ull, 1000000000ull)                                     \
	X(WINDOW, "gov-window", LB_CMD_OPT_U64, 1, 32, 1)                     \
	X(OVERLOAD, "gov-overload", LB_CMD_OPT_U64, 0, 99, 5)                 \
	X(T, "gov-raise", LB_CMD_OPT_U64, 1, 100, 10)                         \
	X(R, "gov-release", LB_CMD_OPT_U64, 1, 100, 1)                        \
	X(K, "gov-calm", LB_CMD_OPT_U64, 0, 1000000, 3)                       \
	X(MIN_SAMPLES, "gov-min-samples", LB_CMD_OPT_U64, 1, 1000000000, 10)  \
	X(PRIO, "default-priority", LB_CMD_OPT_U64, 0, 100, 1)                \
	X(STATUS, "reject-status", LB_CMD_OPT_U64, 429, 503, 503)             \
	X(RETRY, "retry-after", LB_CMD_OPT_U64, 0, 86400, 1)

#define LB_CONF_GOV_ENUM(id, kw, type, lo, hi, def) LB_CONF_GOV_##id,
enum lb_conf_gov_opt { LB_CONF_GOV_LIST(LB_CONF_GOV_ENUM) LB_CONF_GOV_NB };
#undef LB_CONF_GOV_ENUM

/** `rebind`: a later request of a routed keep-alive connection that the
 * rules would give another pool (docs/dataplane.md "Delayed binding"). */
enum lb_conf_rebind {
	LB_CONF_REBIND_OFF = 0, /**< it stays on the first pool */
	LB_CONF_REBIND_CLOSE,	/**< a 421 with Connection: close answers it */
	LB_CONF_REBIND_MAX,
};

/**
 * A service's options; lb_conf_svc_opts_default() gives the defaults.
 * Each member is described by a row of lb/svc_opt.h (its keyword, range,
 * default and help), which parses, checks, copies, compares and saves it.
 */
struct lb_conf_svc_opts {
	char sched[LB_CONF_SCHED_LEN + 1]; /**< scheduler name */
	bool http;	       /**< follow HTTP/1.x and scan headers (TCP) */
	uint32_t retries;      /**< trials per new flow; 0 = one per backend */
	uint32_t deferq_len;   /**< deferred queue length; 0 = no queue */
	uint64_t retry_gap_ns; /**< deferred queue retry gap */
	uint64_t expiry_ns;    /**< longest wait in the deferred queue */
	uint64_t syn_timeout_ns; /**< a trial fails after this long */
	uint64_t flow[LB_CONF_FLOW_NB]; /**< LB_CONF_FLOW_LIST, by id */
	/* Bounds on error feedback (struct lb_sched_guard). */
	uint32_t err_memory; /**< a success removes ceil(e / err_memory) */
	uint32_t min_volume; /**< outcomes before a backend's errors count */
	uint32_t max_eject;  /**< % of backends whose errors may count */
	uint32_t panic;	     /**< % error-free below which picks are even */
	uint64_t gov[LB_CONF_GOV_NB]; /**< LB_CONF_GOV_LIST, by id */
	struct lb_admit_conf admit; /**< admission control, rate 0 = off */
	/** Clients whose X-Priority counts (`prio-trust`); none by default. */
	struct lb_admit_trust prio_trust;
	/** Names of the feedback headers (RFC 9110 tokens, caseless). */
	char hdr[LB_CONF_HDR_NB][LB_CONF_HDR_NAME_MAX + 1];
	/** Statuses that count as errors for the scheduler, as given
	 * (`errors`, lb/http_err.h), and as a set. */
	char errors[LB_HTTP_ERR_STRLEN + 1];
	struct lb_http_err_codes err_codes;
	/** Request path prefixes whose responses never count as errors
	 * (`error-exclude`), comma-separated; empty for none. */
	char err_exclude[LB_HTTP_ERR_STRLEN + 1];
	/** Expected response time of a request without one, ms; 0: none. */
	uint32_t default_expect_ms;
	struct lb_conf_check check; /**< health check of the backends */
	/** PROXY protocol header to the backends: enum lb_conf_pp. */
	uint8_t proxy_proto;
	struct lb_conf_synp synp; /**< the SYN proxy */
	uint8_t rebind;		  /**< enum lb_conf_rebind */
};

struct lb_conf_be {
	/** enum lb_conf_af: which of ip and ip6. An IPv6 service may have
	 * IPv4 backends (fnat64); an IPv4 service only IPv4 ones. */
	uint8_t af;
	uint32_t ip;
	uint8_t ip6[LB_CONF_IP6_LEN];
	uint16_t port;
	uint32_t weight; /**< 1..LB_CONF_WEIGHT_MAX */
	bool draining;	 /**< no new flows; existing flows continue */
	/** Started by the service's orchestrator: not saved, since the
	 * orchestrator starts its instances again (lb_conf_be_set_orch()). */
	bool orch;
	/** The pool it belongs to: 0 the service's default pool, i the
	 * named pool pool[i - 1] of its service. */
	uint8_t pool;
};

/** A named pool of backends of a service (`pool add`). */
struct lb_conf_pool {
	char name[LB_CONF_POOL_NAME_LEN + 1];
	char sched[LB_CONF_SCHED_LEN + 1]; /**< its own scheduler */
	/** Whether @c check is the pool's own (`pool add|set ... check`);
	 * false: its backends follow the service's (`check service`). */
	bool own_check;
	struct lb_conf_check check; /**< when own_check */
};

struct lb_conf_svc {
	struct lb_conf_svc_key key;
	struct lb_conf_svc_opts opts;
	unsigned int nb_pool;
	struct lb_conf_pool pool[LB_CONF_MAX_POOLS]; /**< in the order added */
	/** Content routing rules, in order, as their text (`rule add`):
	 * kept as written, they name pools, not pool indexes that a
	 * `pool del` would shift. */
	unsigned int nb_rule;
	char rule[LB_CONF_MAX_RULES][LB_CONF_RULE_LEN + 1];
	/** The action when no rule matches (`rule default`), without the
	 * word `default`; empty: the default pool. */
	char rule_def[LB_CONF_RULE_DEF_LEN + 1];
	unsigned int nb_be;
	struct lb_conf_be be[LB_CONF_MAX_BES]; /**< in the order added */
};

#endif /* LB_CONF_T_H */
