/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_DP_H
#define LB_DP_H

/*
 * State of the lb-dataplane process: what every worker reads (struct
 * lb_dp, read-only once the workers run) and what each worker owns
 * (struct lb_worker, written only by its lcore; other threads only read
 * its counters).
 */

#include <stdint.h>

#include <rte_common.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "lb/admit.h"
#include "deferq.h"
#include "lb/dpconf.h"
#include "dpconf6.h"
#include "lb/fb.h"
#include "lb/flow_table.h"
#include "flow6.h"
#include "lb/governor.h"
#include "l7.h"
#include "l7_reject.h"
#include "neigh.h"
#include "lb/pkt_parse.h"
#include "lb/route_flat-t.h"
#include "lb/rng.h"
#include "lb/shm.h"
#include "lb/snat.h"
#include "syncookie.h"
#include "tcp_splice.h"
#include "src_budget.h"
#include "tcp_track.h"
#include "port.h"

#define LB_BURST 32
/** Feedback records a worker gathers per poll before one enqueue. */
#define LB_FB_BUF 32
#define LB_MAX_PORTS LB_SHM_MAX_PORTS
#define LB_MAX_WORKERS LB_SHM_MAX_WORKERS
#define LB_HOLD_NONE UINT32_MAX

/** A learnt neighbour, broadcast to the other workers. */
struct lb_neigh_msg {
	uint32_t ip;	 /**< IPv4, when ipv6 is 0 */
	uint8_t mac[6];
	uint16_t port;
	uint8_t ipv6;	 /**< an IPv6 neighbour: its address in ip6 */
	uint8_t ip6[16];
};

/* What survives of a flow whose trial failed, to start the next trial. */
struct lb_trial {
	struct lb_flow_key orig;
	uint32_t snat_ip;
	uint16_t snat_port;
	uint16_t svc;
	uint32_t be;
	uint32_t trials;
	uint32_t hold; /**< SYN copy, or LB_HOLD_NONE */
	/** An IPv6 client's trial towards an IPv4 backend (fnat64): its
	 * SNAT port is of the IPv4 slice. */
	uint8_t v4_backend;
};

/*
 * Flows one poll expires at most. Expiry runs every poll that has flows
 * due (lb_flow_expire_due()), so it keeps up with arrivals up to this
 * many per poll (at 100,000 polls/s, 12.8 M flows/s), and a backlog is
 * worked off in slices of this size: about 15 us of a poll at ~120 ns a
 * flow, so latency stays flat while it drains.
 */
#define LB_EXPIRE_BUDGET 128u
/* Failed trials a poll may leave to the next: its own expiry's and those
 * of flows reclaimed by new flows in between. */
#define LB_EXPIRE_PENDING (2 * LB_EXPIRE_BUDGET)
/* Overdue flows housekeeping counts at most when expiry is behind. */
#define LB_OVERDUE_SCAN 1024u

struct lb_dp;
struct lb_exc;

/*
 * The PROXY header of one flow (worker_pp.c): what its segment carried,
 * to send it again while the backend has not acknowledged it.
 */
struct lb_pp_flow {
	uint32_t at;   /**< backend's sequence number of its first byte */
	uint32_t ack;  /**< acknowledgement its segment carried */
	uint16_t win;  /**< window field its segment carried */
	uint8_t len;   /**< its length */
	uint8_t state; /**< LB_PP_* */
	uint8_t ver;   /**< LB_CONF_PP_V1 or V2 */
	uint8_t pad[3];
};

_Static_assert(sizeof(struct lb_pp_flow) == 16,
	       "four PROXY records to a cache line");

/*
 * The resend timer of PROXY headers not yet acknowledged (worker_pp.c):
 * one FIFO per try, each with its own delay, so that each stays in the
 * order of its deadlines.
 */
#define LB_PP_TRIES 3
#define LB_PP_TIMER_CAP 1024u
struct lb_pp_timer {
	uint32_t idx; /**< flow entry */
	uint32_t at;  /**< its header's sequence number: the same flow */
	uint64_t due;
};

struct lb_pp_fifo {
	uint32_t head, n;
	struct lb_pp_timer e[LB_PP_TIMER_CAP];
};

/** States of struct lb_pp_flow. */
#define LB_PP_NONE 0  /**< nothing inserted: no translation */
#define LB_PP_SENT 1  /**< sent, not yet acknowledged */
#define LB_PP_ACKED 2 /**< the backend has it */

/*
 * The SYN proxy's record of one connection (worker_synp.c): what the
 * client's ACK said, kept by flow entry while the worker makes the
 * backend's handshake, and by SYN copy for the next trial; then, by flow
 * entry, the shift of each side's window field to the other's scale.
 */
struct lb_synp_conn {
	uint32_t seq;	 /**< the ACK's sequence number: the client's ISN + 1 */
	uint32_t cookie; /**< our ISN as the client knows it */
	uint32_t tsval;	 /**< the client's TSval in its ACK */
	uint32_t tsecr;	 /**< its TSecr: our SYN-ACK's TSval */
	uint32_t data;	 /**< by SYN copy: a held data segment, or none */
	uint16_t win;	 /**< the ACK's window field */
	int8_t wclient;	 /**< the client's window scale, -1: none */
	int8_t woffer;	 /**< what its SYN-ACK offered it, -1: none */
	int8_t wshift[2]; /**< by enum lb_flow_dir of the sender */
	uint8_t state;	 /**< LB_SYNP_* */
	uint8_t ts;	 /**< the client sends timestamps */
};

_Static_assert(sizeof(struct lb_synp_conn) == 28,
	       "a SYN proxy record is 28 bytes");

/** States of struct lb_synp_conn. */
#define LB_SYNP_NONE 0 /**< not the proxy's */
#define LB_SYNP_PEND 1 /**< the backend's handshake runs */
#define LB_SYNP_ON 2   /**< spliced: segments are translated */

/*
 * Delayed binding (worker_bind.c): a connection of a service with content
 * routing rules, established with the client by the SYN proxy, waits here
 * for its first bytes before a pool and a backend are chosen. Bounded:
 * LB_BIND_BYTES bytes in at most LB_BIND_SEGS segments, and a wait of
 * dp->bind_wait_ns.
 */
#define LB_BIND_BYTES 4096u
#define LB_BIND_SEGS 8u
/** Connections one worker keeps waiting at once. */
#define LB_BIND_CAP 1024u
/** Frames the waiting connections of one worker keep at most, all
 * together (lb-dataplane's mbuf pool has room for them). */
#define LB_BIND_MBUFS 2048u
/** Buckets of the waiting connections' index (a power of two). */
#define LB_BIND_BUCKETS 2048u
#define LB_BIND_NONE UINT32_MAX
/** A SYN copy's `data` naming a binding slot instead of one segment. */
#define LB_HOLD_BIND 0x80000000u

/** States of struct lb_bind. */
#define LB_BIND_FREE 0
#define LB_BIND_WAIT 1	/**< reading the first bytes */
#define LB_BIND_BOUND 2 /**< its segments wait with a SYN copy */
#define LB_BIND_DONE 3	/**< answered (404, 421) and closed: its
			 * client's last segments are taken in */

struct lb_bind {
	struct lb_flow_key key; /**< the client's tuple, to the VIP */
	struct lb_synp_conn sc;
	struct lb_syncookie_opts so;
	uint64_t since;
	uint32_t prev, next; /**< the waiting ones, oldest first */
	uint32_t hnext;	     /**< the index's chain */
	uint32_t len;	     /**< bytes of buf: the stream from its start */
	uint32_t fin_seq; /**< LB_BIND_DONE: after the answer and its FIN */
	uint16_t svc;
	uint16_t pool;
	uint8_t state;
	uint8_t nseg;
	/** The client's ACK without data, kept to answer it (a RST) when
	 * no segment is; NULL once data came. */
	struct rte_mbuf *ack;
	struct rte_mbuf *seg[LB_BIND_SEGS]; /**< in sequence order */
	uint8_t buf[LB_BIND_BYTES];
};

/* `synproxy auto` of one service slot on one worker (worker_synp.c). */
struct lb_synp_auto {
	uint32_t syns;	    /**< SYNs of the current second */
	uint32_t done;	    /**< handshakes completed in it */
	uint64_t quiet_ns;  /**< since when both stayed below; 0: not */
	bool on;
	/** The service's mode these counts were taken under: SYNs counted
	 * while it was `on` say nothing about the rate `auto` should see. */
	uint8_t mode;
};

/** A named pool's scheduler state, and what it was built for. */
struct lb_pool_sched {
	void *st;
	const struct lb_sched_ops *ops;
	char name[LB_CONF_POOL_NAME_LEN + 1];
	char sched[LB_CONF_SCHED_LEN + 1];
};

struct lb_worker {
	struct lb_dp *dp;
	uint16_t wid;
	unsigned int lcore;
	/** The table this worker runs: its own copy of the last published
	 * one, taken at the start of a poll. */
	const struct lb_dpconf *conf;
	/** The published table that copy was taken from; only compared. */
	const struct lb_dpconf *conf_pub;
	struct lb_dpconf *conf_buf[2];
	const struct lb_sched_ops *ops[LB_CONF_MAX_SVCS];
	struct lb_flow_table *ft;
	/** Addresses of the IPv6 flows, by flow index (flow6.h). */
	struct lb_flow6_addrs *f6;
	/** The IPv6 services of conf, indexed when it was taken up. */
	struct lb_dpconf6_svc_index svc6;
	struct lb_snat *snat;
	/** IPv6 SNAT ports: the same slices, its addresses known by their
	 * fold under the flow table's seed (lb_flow6_fold()), as the
	 * reply keys of IPv6 flows hold them. */
	struct lb_snat *snat6;
	struct lb_neigh *neigh;
	struct lb_neigh *neigh6; /**< IPv6 next hops (neigh.h, ipv6) */
	struct rte_ring *redirect; /**< mbufs of our flows from others */
	struct rte_ring *neigh_in; /**< struct lb_neigh_msg from others */
	/** Snapshot of neigh and neigh6 for lb-control (lb/neigh-t.h). */
	struct lb_neigh_view *neigh_view;
	/** Handling frames of the redirect ring (their user tag is ours). */
	bool in_redirect;
	struct lb_xoshiro xo;
	struct lb_rng rng;
	void *sched[LB_CONF_MAX_SVCS];
	/** Service slots whose scheduler is still being built, one bit
	 * each: a slice per poll, between bursts (sched_build_slice()). */
	uint64_t sched_todo;
	/** The schedulers of the named pools of services that route by
	 * content, [slot][pool - 1] (NULL: none); the same layout as
	 * sched[] and ops[] (worker_switch.c). */
	struct lb_pool_sched (*psched)[LB_CONF_MAX_POOLS];
	/** Service slots with a pool scheduler still being built, and of
	 * each the pools: built after the services' own, a slice a poll. */
	uint64_t pool_todo;
	uint16_t pool_todo_of[LB_CONF_MAX_SVCS];
	struct lb_deferq *deferq[LB_CONF_MAX_SVCS];
	struct lb_be_stats (*bst)[LB_CONF_MAX_BES]; /**< [svc slot][be slot] */
	struct rte_ring *fb;    /**< feedback to lb-control */
	/** Records of the current poll, enqueued in one burst at its end
	 * (or when full): one ring operation for the two or three records
	 * of a followed response instead of one each. */
	uint16_t fb_n;
	struct lb_fb fb_buf[LB_FB_BUF];
	/** Exception path (exc.h): frames for the kernel and from it; NULL
	 * when it is off. */
	struct rte_ring *exc_out, *exc_in;
	uint16_t exc_n;
	struct rte_mbuf *exc_m[LB_BURST];
	struct lb_l7_pool *l7;  /**< HTTP following; NULL if disabled */
	struct lb_hdr_scratch *hscr;  /**< for the database in use */
	struct lb_hdr_db *hdb;        /**< own copy; NULL: dp->hdb */
	uint64_t hdr_id;              /**< hdr_id of the table it came from */
	uint64_t now_ns; /**< time of the current poll (feedback records) */
	/** Admission state of followed flows, by L7 entry (l7_reject.h). */
	struct lb_l7_rej *rej;
	uint32_t nb_rej; /**< entries of @c rej: the pool size at creation */
	uint32_t adm_client; /**< client (host order) of the segment fed */
	uint64_t adm_now;    /**< and its time, for the request's buckets */
	/** The admission callback stopped the entry being fed: a throttled
	 * request it could not refuse alone (docs/admission.md). */
	bool adm_stop;
	/** The IPv6 flow (its entry + 1) of the segment fed, or 0 for an
	 * IPv4 one (in adm_stop's padding: the layout is unchanged). */
	uint32_t adm_flow6;
	struct lb_admit_lc *admit; /**< NULL: no admission control */
	/** New flows per client source (src_budget.h); NULL: off. */
	struct lb_src_budget *srcb;
	struct lb_shm_worker sh; /**< what lb-control reads */
	/** TCP sequence state of each flow entry, by flow index. */
	struct lb_tcp_track *trk;
	/** Sequence offsets (tcp_splice.h) and PROXY header of each flow
	 * entry, by flow index (worker_pp.c). */
	struct lb_tcp_splice *spl;
	struct lb_pp_flow *pp;
	/** Service slots whose backends get a PROXY header, one bit each. */
	uint64_t pp_svc;
	struct lb_pp_fifo pp_rto[LB_PP_TRIES]; /**< headers to resend */
	/** A flow was ever spliced here (a PROXY header, the SYN proxy):
	 * only then do segments of other flows look at their splice
	 * state. */
	bool pp_used;
	/* The SYN proxy (worker_synp.c): per flow, per SYN copy, the
	 * service slots whose cookies are checked (on or auto) and those
	 * whose SYNs get one now, auto's state, the secrets. */
	struct lb_synp_conn *synp;
	struct lb_synp_conn *synp_hold;
	uint64_t synp_svc;
	uint64_t synp_act;
	uint64_t synp_next_ns; /**< next second of auto, next rotation */
	uint64_t synp_rekey_ns;
	uint64_t synp_master[2]; /**< derives each rotation's secret */
	uint64_t synp_epoch;
	struct lb_synp_auto synp_auto[LB_CONF_MAX_SVCS];
	struct lb_syncookie_secrets synp_keys;
	/* Delayed binding (worker_bind.c): the service slots with rules,
	 * their rules and pools' counts (copied at each switch), the
	 * waiting connections, their index and age list. */
	uint64_t bind_svc;
	/* The entry + 1 of the request head that the rules just gave
	 * another pool under `rebind close`, for the admission that
	 * follows (lb_worker_on_l7_head()); 0: none. */
	uint32_t rebind_hit;
	struct lb_route_flat *route; /**< [LB_CONF_MAX_SVCS] */
	struct lb_bind *bind;	     /**< [LB_BIND_CAP] */
	uint32_t *bind_head;	     /**< [LB_BIND_BUCKETS] */
	uint32_t *bind_free;
	uint32_t bind_nfree;
	uint32_t bind_mbufs; /**< frames they keep (LB_BIND_MBUFS) */
	uint32_t bind_old, bind_new; /**< the age list's ends */
	/* SYN copies kept for retries, indexed by flow->l7 */
	struct rte_mbuf **hold;
	uint32_t *hold_free;
	uint64_t *hold_since; /* first deferral of a hold, 0 if never */
	uint32_t hold_cap, hold_nfree;
	uint64_t next_house_ns;
	unsigned int nb_pending;
	struct lb_trial pending[LB_EXPIRE_PENDING]; /**< SYN timeouts */
	/** The last expiry pass stopped at its budget: flows are overdue. */
	bool expire_behind;
	/** RSTs for segments without a flow: a token bucket per service
	 * slot, and one more for segments to SNAT addresses, whose rate is
	 * the highest rst-rate of the services (rst_snat_rate). */
	struct lb_rst_tb {
		uint64_t credit; /**< tokens x 1e9 */
		uint64_t last;	 /**< ns of the last refill */
	} rst_tb[LB_CONF_MAX_SVCS + 1];
	uint64_t rst_snat_rate;
	uint32_t idle_loops;
	struct {
		uint16_t n;
		struct rte_mbuf *m[LB_BURST];
	} tx[LB_MAX_PORTS];
	/** Per service slot and backend: the tick (2^20 ns) until which new
	 * flows to a backend whose SNAT ports ran out are refused without
	 * probing again (lb_worker_snat_take()); 0 when never refused. */
	uint32_t snat_full[LB_CONF_MAX_SVCS][LB_CONF_MAX_BES];
	struct lb_worker_stats st;
} __rte_cache_aligned;

struct lb_dp {
	/** The first table (from --config). Workers follow shm->conf when
	 * shm is set (lb-dataplane), dp->conf otherwise (tests, benches). */
	struct lb_dpconf *conf;
	struct lb_shm *shm;
	struct rte_mempool *pool;
	uint16_t nb_ports;
	struct lb_port_info port[LB_MAX_PORTS];
	uint16_t nb_workers;
	struct lb_worker *w[LB_MAX_WORKERS];
	double ns_per_tsc;
	/** Flow hash the schedulers pick with (maglev): a secret, the same
	 * on the hosts of an ECMP group only when given (seed.h). */
	uint64_t hash_seed;
	/** Workers' generators: per-worker table seeds, schedulers' random
	 * streams; random unless given. 0: derived from hash_seed. */
	uint64_t rng_seed;
	uint32_t idle_us;   /**< longest sleep when idle; 0 = busy poll */
	uint32_t flows;     /**< flow table capacity per worker */
	/** Header scanner database, NULL to follow no HTTP at all. */
	struct lb_hdr_db *hdb;
	uint32_t l7_flows;  /**< HTTP flows followed at once per worker */
	int64_t epoch_off_ns; /**< wall clock minus our monotonic clock */
	struct lb_exc *exc;   /**< exception path, NULL when off */
	/** Governor multipliers by service slot (shm->gov_m in
	 * lb-dataplane; a test's own array); NULL: never throttle. */
	_Atomic uint64_t *gov_m;
	/** Global buckets of admission control; NULL admits everything. */
	struct lb_admit_shm *admit;
	/** Budget of new flows per source and worker; rate 0 (a zeroed
	 * struct lb_dp, as tests and benches start) is off. */
	struct lb_src_budget_conf src_budget;
	/** First resend delay of an unacknowledged PROXY header (then
	 * twice and four times it); 0: 200 ms. */
	uint64_t pp_rto_ns;
	/** Longest a connection of a service with content routing rules
	 * waits for the bytes that choose its pool; 0: 3 s. */
	uint64_t bind_wait_ns;
	volatile int quit;
	/** Ports of each SNAT address the workers share (--snat-ports);
	 * both 0 for the default, LB_SNAT_PORT_MIN_DEFAULT..MAX_DEFAULT. */
	uint16_t snat_port_min, snat_port_max;
};

/** Allocates and initialises worker @p wid's state. */
struct lb_worker *lb_worker_create(struct lb_dp *dp, uint16_t wid,
				   unsigned int lcore);
void lb_worker_free(struct lb_worker *w);

/**
 * One iteration of a worker's loop: a burst from each port queue and the
 * redirect ring, housekeeping when due, transmit. Returns packets handled.
 */
unsigned int lb_worker_poll(struct lb_worker *w);

/**
 * Moves worker @p w to table @p c: scheduler state and deferred queues
 * are rebuilt for services that changed, kept (with their error counts)
 * for those that did not. Called by the worker itself, between bursts.
 */
void lb_worker_switch(struct lb_worker *w, const struct lb_dpconf *c);

/** Takes up the header database and header names of table @p pub
 * (l7_table.c); called by lb_worker_switch(). */
void lb_worker_l7_switch(struct lb_worker *w, const struct lb_dpconf *pub);

/** The worker loop for rte_eal_remote_launch(); runs until dp->quit. */
int lb_worker_main(void *arg);

/** The table workers currently follow. */
static inline const struct lb_dpconf *
lb_dp_conf(const struct lb_dp *dp)
{
	return dp->shm != NULL ?
		       atomic_load_explicit(&dp->shm->conf,
					    memory_order_acquire) :
		       dp->conf;
}

/** Registers the /lb/ telemetry commands. */
int lb_telemetry_init(struct lb_dp *dp);

#endif /* LB_DP_H */
