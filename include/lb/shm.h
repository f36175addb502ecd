/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_SHM_H
#define LB_SHM_H

/**
 * @file
 * The memory that lb-dataplane (DPDK primary) shares with lb-control (DPDK
 * secondary). Types only. DPDK maps its memory at the same virtual
 * addresses in both processes, so pointers to DPDK memory (rte_malloc,
 * memzones, rings) are valid in both; pointers into a process's own heap
 * or code (function pointers, ops tables) never appear here.
 *
 * Who writes what:
 *  - the dataplane creates the memzone LB_SHM_NAME, fills the identity and
 *    the worker blocks, and publishes its first table from --config;
 *  - each worker writes only its own struct lb_shm_worker (counters,
 *    conf_gen) and produces into its feedback ring;
 *  - lb-control is the only writer of @c conf: it builds a new table in
 *    the slot of @c table that is not published, stores the pointer
 *    (release) and waits for an RCU grace period on @c qsbr before that
 *    slot is built into again.
 *
 * Any change to these structures, struct lb_dpconf, struct lb_fb or the
 * counter enums bumps LB_SHM_LAYOUT_VERSION; lb-control refuses to attach
 * to a dataplane with another version.
 */

#include <stdatomic.h>
#include <stdint.h>

#include "lb/admit-t.h"
#include "lb/dpconf-t.h"
#include "lb/drop.h"
#include "lb/fb.h"
#include "lb/governor-t.h"
#include "lb/l7_reject-t.h"
#include "lb/neigh-t.h"
#include "lb/pkt_parse-t.h"
#include "lb/route_flat-t.h"
#include "lb/src_budget-t.h"

#define LB_SHM_NAME "lb_shm"
#define LB_ADMIT_SHM_NAME "lb_admit"
#define LB_SHM_MAGIC 0x534c5543u /* "SLUC" */
#define LB_SHM_LAYOUT_VERSION 23u
#define LB_SHM_STEER_PIN_MAX 256
#define LB_SHM_STEER_HOST_MAX 32u
#define LB_SHM_MAX_WORKERS 16u
/** Counters of struct lb_worker_stats.rule_hits per service: its rules
 * and the default. */
#define LB_SHM_RULE_HITS (LB_ROUTE_FLAT_RULES + 1u)
#define LB_SHM_MAX_PORTS 4u
/** Room for the IPv6 parser's verdicts (LB_PKT6_VERDICT_MAX, checked
 * where both are seen). */
#define LB_SHM_PKT6_VERDICTS 24u
#define LB_SHM_BOOT_CONF_MAX (64u * 1024u)
#define LB_FB_RING_SIZE 16384u

/**
 * Why delayed binding gave up reading a connection's first bytes
 * (lb_worker_stats.bind_gaveup; docs/dataplane.md, "Delayed binding").
 */
enum lb_bind_giveup {
	LB_BIND_GU_TIMEOUT,    /**< no decision within the wait */
	LB_BIND_GU_LIMIT,      /**< over the bytes or segments kept */
	LB_BIND_GU_UNKNOWN,    /**< neither TLS nor HTTP/1.x */
	LB_BIND_GU_MALFORMED,  /**< a broken ClientHello or request head */
	LB_BIND_GU_CLOSED,     /**< the client reset or closed first */
	LB_BIND_GU_FULL,       /**< no room to wait: dropped, sent again */
	LB_BIND_GU_NO_BACKEND, /**< the chosen pool had no backend to take it */
	LB_BIND_GU_MAX,
};

struct rte_rcu_qsbr;
struct rte_ring;
struct lb_flow_table;
struct lb_snat;

/** What became of a gated flow no longer followed (lb_worker_stats). */
enum lb_l7_unf {
	LB_L7_UNF_RESET = 0,
	LB_L7_UNF_ADMITTED,
	LB_L7_UNF_MAX,
};

/** Counters of one worker; one writer (the worker), 64-bit words only. */
struct lb_worker_stats {
	uint64_t rx;
	uint64_t tx;
	uint64_t verdict[LB_PKT_VERDICT_MAX]; /**< parser outcomes */
	uint64_t drop[LB_DROP_MAX];           /**< valid frames dropped */
	uint64_t flows_created;
	uint64_t syn_retries;   /**< SYNs re-sent to the next backend */
	uint64_t deferred;      /**< SYNs queued after every trial failed */
	uint64_t deferq_joined; /**< retransmitted SYNs joining their entry */
	uint64_t rst_sent;      /**< RSTs answered to clients */
	uint64_t idle_probes;   /**< ends of expired idle flows probed */
	uint64_t udp_unreplied; /**< UDP flows expired before any reply */
	uint64_t rst_no_flow;   /**< RSTs answered to segments without flow */
	uint64_t rst_limited;   /**< of those, not sent: over rst-rate */
	uint64_t redirect_out;  /**< replies handed to their owning worker */
	uint64_t redirect_in;
	uint64_t arp_replies;
	uint64_t arp_requests;
	uint64_t echo_replies;
	uint64_t icmp_translated;
	uint64_t idle_sleeps;
	uint64_t fb_dropped;    /**< feedback records lost: ring full */
	uint64_t l7_flows;      /**< flows followed at L7 */
	uint64_t l7_pool_full;  /**< http flows not followed: pool empty */
	uint64_t l7_stopped;    /**< followed flows given up (gap, syntax) */
	uint64_t conf_switches; /**< published tables taken up */
	/** Longest a poll spent taking up a table or building schedulers. */
	uint64_t switch_max_ns;
	uint64_t exc_to_kernel;   /**< frames given to the exception path */
	uint64_t exc_from_kernel; /**< frames the kernel sent out a port */
	/* HTTP request admission (docs/admission.md) */
	uint64_t l7_refused[LB_L7_REJ_MAX]; /**< requests refused, by reason */
	uint64_t l7_held;	 /**< client segments held for a decision */
	uint64_t l7_hold_full;	 /**< decided early: hold bound reached */
	uint64_t l7_unrefusable; /**< throttled while pipelined in a segment */
	uint64_t l7_rej_resent;	 /**< refusals sent again */
	uint64_t l7_rej_absorbed; /**< segments of refused flows taken in */
	/** Governor decisions per service slot and priority class. */
	struct lb_gov_lcore_stats gov[LB_CONF_MAX_SVCS];
	struct lb_admit_stats admit; /**< admission, by key class */
	struct lb_admit_svc_stats admit_svc[LB_CONF_MAX_SVCS]; /**< by slot */
	uint64_t l7_db_errors;  /**< header databases that failed to load */
	uint64_t l7_blocks_lost; /**< header blocks whose fields were lost */
	/** Frag-needed errors whose MTU was raised to LB_NAT_MTU_FLOOR, packet
	 * too big ones raised to LB_IPV6_MIN_MTU. */
	uint64_t icmp_mtu_clamped;
	/** Gated HTTP flows that could no longer be followed, or got no
	 * follower entry (docs/admission.md), by what became of them:
	 * [LB_L7_UNF_RESET] reset both ways, [LB_L7_UNF_ADMITTED] admitted
	 * as one request and forwarded unfollowed. */
	uint64_t l7_unfollowed[LB_L7_UNF_MAX];
	uint64_t syn_hold_full; /**< SYNs not copied: the copy pool was empty */
	uint64_t challenge_acks; /**< ACKs answering RSTs in window, not exact */
	uint64_t pp_sent;   /**< PROXY protocol headers sent to backends */
	uint64_t pp_resent; /**< of those, sent again: a backend missed one */
	/** New flows dropped over their source's budget, budgets lost. */
	struct lb_src_budget_stats src_budget;
	/* The SYN proxy (docs/dataplane.md, "SYN proxy") */
	uint64_t synp_cookies;	    /**< SYN-ACKs with a cookie sent */
	uint64_t synp_acks;	    /**< cookies checked: flows begun */
	uint64_t synp_acks_bad;	    /**< ACKs whose cookie is forged */
	uint64_t synp_acks_expired; /**< ACKs whose cookie is too old */
	uint64_t synp_handshakes;   /**< backend handshakes completed */
	uint64_t synp_held;	    /**< client segments held meanwhile */
	uint64_t synp_held_dropped; /**< client segments dropped meanwhile */
	/** SYNs sent to the backend again: the client sent again what the
	 * backend's handshake was to carry. */
	uint64_t synp_syn_again;
	uint64_t synp_auto_on;	    /**< `auto` turned on for a service */
	uint64_t synp_auto_off;	    /**< and off again */
	/* Delayed binding (docs/dataplane.md, "Delayed binding") */
	uint64_t bind_waits;   /**< connections that waited for first bytes */
	uint64_t bind_routed;  /**< given a pool and a backend */
	uint64_t bind_refused; /**< refused by a rule or the default (RST) */
	uint64_t bind_dup;     /**< client segments already kept, dropped */
	uint64_t bind_gaveup[LB_BIND_GU_MAX]; /**< by enum lb_bind_giveup */
	/** Later requests of a routed keep-alive connection that the rules
	 * would give another pool: kept on the first (`rebind off`). */
	uint64_t rebind_kept;
	/** Later request heads the rules could not read again (cut by
	 * segments, invalid): kept on the first pool unchecked. */
	uint64_t rebind_unchecked;
	/** Of those the rules would give another pool, answered with a 421
	 * and Connection: close (`rebind close`). */
	uint64_t rebind_closed;
	/* Expiry (docs/dataplane.md#flow-expiry). Gauges, refreshed by
	 * housekeeping: flows timed out that expiry has not reached yet
	 * (counted up to LB_OVERDUE_SCAN), and of them those holding a SNAT
	 * port. */
	uint64_t flows_overdue;
	uint64_t snat_ports_overdue;
	/** Flows expired (the flow table's count, refreshed likewise). */
	uint64_t flows_expired;
	/** Of them, expired on demand: a new flow wanted their SNAT port,
	 * their client tuple or their entry (refreshed likewise). */
	uint64_t flows_reclaimed;
	uint64_t expire_polls;  /**< polls that had flows due to expire */
	uint64_t expire_max;    /**< most flows one poll expired */
	uint64_t expire_max_ns; /**< longest a poll spent expiring */
	/* IPv6 (docs/dataplane.md, "IPv6 in the worker") */
	/** IPv6 parser outcomes, by enum lb_pkt6_verdict (pkt_parse6.h):
	 * [0] frames accepted, the others dropped as malformed. */
	uint64_t verdict6[LB_SHM_PKT6_VERDICTS];
	uint64_t echo6_replies;	 /**< ICMPv6 echo requests answered */
	uint64_t nd_adverts;	 /**< neighbour solicitations answered */
	uint64_t nd_solicits;	 /**< neighbour solicitations sent */
	uint64_t nd_announces;	 /**< unsolicited advertisements sent */
	uint64_t icmp6_translated; /**< ICMPv6 errors translated */
	/* fnat64 (docs/dataplane.md, "fnat64") */
	uint64_t nat64_out; /**< IPv6 packets translated to IPv4 backends */
	uint64_t nat64_in;  /**< IPv4 replies translated to IPv6 clients */
	uint64_t nat64_mss_adjusted; /**< backends' SYN MSS lowered by 20 */
	uint64_t icmp64_translated;  /**< ICMP errors carried across versions */
	/** Content routing decisions per service slot: [r] those rule r
	 * (0-based, in the published order) made, [LB_ROUTE_FLAT_RULES]
	 * those the default made. Last: the hot counters above keep their
	 * cache lines. */
	uint64_t rule_hits[LB_CONF_MAX_SVCS][LB_SHM_RULE_HITS];
};

/** One backend slot as one worker saw it. */
struct lb_be_stats {
	uint64_t flows;        /**< flows created toward this backend */
	int64_t active;        /**< flows in this worker's table now */
	uint64_t errors;       /**< failed trials */
	uint64_t sched_errors; /**< error count the scheduler weighs with */
	uint64_t pkts[2];      /**< [0] client->backend, [1] backend->client */
	uint64_t bytes[2];
	int64_t inflight;      /**< HTTP requests awaiting their response */
	uint64_t http_responses; /**< final responses followed */
	uint64_t http_5xx;     /**< of which 5xx (errors for `adaptive`) */
};

/** What a worker shows the other process; the pointers are DPDK memory. */
struct lb_shm_worker {
	uint32_t wid;
	uint32_t lcore;
	/** Generation of the table this worker runs (it switched to it). */
	_Atomic uint64_t conf_gen;
	struct lb_flow_table *ft; /**< read-only for others */
	struct rte_ring *fb;      /**< struct lb_fb records, SP/SC */
	const struct lb_worker_stats *st;
	/** [LB_CONF_MAX_SVCS][LB_CONF_MAX_BES], by table slot. */
	const struct lb_be_stats (*be)[LB_CONF_MAX_BES];
	/** The worker's SNAT port allocator: its pairs in use per address
	 * say when a removed address has drained. Read-only for others. */
	const struct lb_snat *snat;
	/** The same for the IPv6 SNAT addresses, each known by its fold
	 * under the flow table's seed: lb_snat_addr_used(snat6,
	 * lb_flow6_fold(ft, ip6)) (dataplane/flow/flow6.h). */
	const struct lb_snat *snat6;
	/** Snapshot of the worker's ARP and IPv6 neighbour tables, written
	 * when a reader asks (see struct lb_neigh_view). */
	struct lb_neigh_view *neigh;
};

struct lb_shm_port {
	uint16_t port_id;
	uint16_t nb_queues;
	uint8_t mac[6];
	uint8_t rss;
	char driver[32];
};

/** Tables the dataplane allocates: the published one and the next. */
#define LB_SHM_TABLES 2u

struct lb_shm {
	uint32_t magic;          /**< LB_SHM_MAGIC once ready */
	uint32_t layout_version; /**< LB_SHM_LAYOUT_VERSION */
	int32_t dataplane_pid;
	uint32_t nb_workers;
	uint32_t nb_ports;
	uint64_t tsc_hz;
	struct lb_shm_port port[LB_SHM_MAX_PORTS];
	/** RCU: thread ids 0..nb_workers-1 are the workers, nb_workers the
	 * dataplane's telemetry reader, nb_workers + 1 its exception path. */
	struct rte_rcu_qsbr *qsbr;
	/** The published table; lb-control is its only writer. */
	struct lb_dpconf *_Atomic conf;
	/**
	 * Every table there will ever be, allocated by the dataplane at start
	 * (table[0] is its --config): conf is one of them, and lb-control
	 * builds the next in another. It never allocates in the shared heap,
	 * whose lock a lb-control killed inside rte_malloc() would leave
	 * taken for every process of the dataplane.
	 */
	struct lb_dpconf *table[LB_SHM_TABLES];
	/** lb-control's pid while attached, 0 otherwise. Workers produce
	 * feedback records only while it is set. */
	_Atomic int32_t control_pid;
	/** bpffs directory of the XDP steering maps of net_af_xdp ports
	 * (docs/xdp.md), "" when no port runs on pinned maps. */
	char steer_pin[LB_SHM_STEER_PIN_MAX];
	/** The kernel's addresses on those ports' interfaces when the
	 * dataplane started: shared with the host, steered by port only
	 * (include/lb/steer_sync.h). */
	uint32_t steer_nb_host;
	uint32_t steer_host[LB_SHM_STEER_HOST_MAX];
	/** The same for IPv6 (link-local addresses included). */
	uint32_t steer_nb_host6;
	uint8_t steer_host6[LB_SHM_STEER_HOST_MAX][16];
	struct lb_shm_worker *w[LB_SHM_MAX_WORKERS];
	/** Governor multiplier M per service slot of the published table
	 * (a double's bits; lb-control writes, workers read, relaxed). */
	_Atomic uint64_t gov_m[LB_CONF_MAX_SVCS];
	/** Global token buckets of admission control (memzone
	 * LB_ADMIT_SHM_NAME); lb-control feeds the cluster tier's. */
	struct lb_admit_shm *admit;
	/** The text of --config the dataplane started with, for a
	 * lb-control that has no state file of its own yet. */
	uint32_t boot_conf_len;
	char boot_conf[LB_SHM_BOOT_CONF_MAX];
	/** The budget of new flows per source the workers keep. */
	struct lb_src_budget_conf src_budget;
};

#endif /* LB_SHM_H */
