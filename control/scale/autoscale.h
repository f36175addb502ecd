/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_AUTOSCALE_H
#define LB_AUTOSCALE_H

/**
 * @file
 * The autoscaler of lb-control: per service a scaling policy (`spl`, the
 * SPL patent WO 2021/086339, or `inflight`, the WSO2 autoscaler) behind
 * the guards of scale_guard, the instance identifier repository (the SPL
 * patent's table 6: every backend of the service with its origin and
 * state), a bounded history of decisions and the `scale` commands.
 *
 * This module decides and remembers; it starts nothing. lb-control's
 * scale runtime (control/core/scale.c) feeds it the inputs of each evaluation
 * (SPL reports and requests in flight from its view of the dataplane),
 * carries the actions out through the service's orchestrator driver and
 * tells it how instances change state. Manual actions (`scale up|down`)
 * are queued here and taken by the runtime through the same path.
 *
 * Pure C, time injected as monotonic nanoseconds; not thread-safe.
 */

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "lb/cmd.h"
#include "lb/conf.h"
#include "scale_guard.h"

/** Autoscaled units: a service's own pool or one of its named pools
 * (project choice: room for every service and as many pools again). */
#define LB_AS_UNITS_MAX (2u * LB_CONF_MAX_SVCS)
/** Decisions kept per service by the history. */
#define LB_AS_HIST 256u
/** Most instances (static and orchestrated) per service. */
#define LB_AS_INST_MAX LB_CONF_MAX_BES
/** Longest driver name. */
#define LB_AS_DRIVER_LEN 15u
/** Longest driver argument (command line, pool, URL). */
#define LB_AS_ARG_LEN 200u
/** Default evaluation period: 1 s (project choice: SPL reports are
 * decayed over seconds, scale_guard's windows are in seconds). */
#define LB_AS_INTERVAL_DEFAULT_NS 1000000000ull
/** Default drain timeout: 30 s (project choice, as HAProxy's and Envoy's
 * typical graceful drain). */
#define LB_AS_DRAIN_DEFAULT_NS 30000000000ull
/** Default decay of the autoscaler's SPL policy (see docs/policies.md:
 * the seed's `age` works on a millisecond scale, the evaluation on a
 * second scale). */
#define LB_AS_DECAY_DEFAULT "halflife"
/** Default start-up timeout: WSO2's server_startup_delay (15 s) is too
 * short for the first start of a container image; 60 s is this
 * project's choice. */
#define LB_AS_STARTUP_DEFAULT_NS 60000000000ull
/** Default exec driver timeout per command. */
#define LB_AS_EXEC_TIMEOUT_DEFAULT_NS 30000000000ull

enum lb_as_policy {
	LB_AS_POLICY_SPL = 0,
	LB_AS_POLICY_INFLIGHT,
};

/** Where an instance came from. */
enum lb_as_origin {
	LB_AS_STATIC = 0, /**< configured with `backend add` */
	LB_AS_ORCH,	  /**< started by the service's orchestrator */
};

/** Life of an instance (the SPL patent's table 6 with its states). */
enum lb_as_state {
	LB_AS_STARTING = 0, /**< asked of the driver, no address yet */
	LB_AS_PENDING,	    /**< a backend, not eligible until healthy */
	LB_AS_ACTIVE,	    /**< takes new flows */
	LB_AS_DRAINING,	    /**< no new flows; stopped once idle */
	LB_AS_STOPPING,	    /**< the driver is stopping it */
	LB_AS_FAILED,	    /**< never became healthy, or died */
	LB_AS_STATE_COUNT
};

/** Configuration of one service's autoscaler. */
struct lb_as_conf {
	enum lb_as_policy policy;
	/* spl */
	double lower;	   /**< default 0.2 ([0073]) */
	double upper;	   /**< default 0.8 ([0074]) */
	char decay[16];	   /**< default LB_AS_DECAY_DEFAULT */
	uint64_t decay_ns; /**< halflife / normalized span; default 1 s */
	/* inflight */
	uint32_t queue_length; /**< default 3 (WSO2 example) */
	uint32_t rounds;       /**< default 2 (WSO2 example) */
	/** min/max, tolerance, windows, cooldowns, pending guard, start-up
	 * timeout: lb_scale_guard_params_recommended() except as noted. */
	struct lb_scale_guard_params guard;
	uint64_t interval_ns;		   /**< evaluation period */
	uint64_t drain_timeout_ns;	   /**< longest drain before the stop */
	char driver[LB_AS_DRIVER_LEN + 1]; /**< "process" (default) ... */
	char command[LB_AS_ARG_LEN + 1];   /**< process / exec command */
	/** process: "PORT-PORT" on one address, or netns pool "A.B.C.D-E/LEN
	 * via NS:BRIDGE". kubernetes: "URL NAMESPACE DEPLOYMENT". */
	char target[LB_AS_ARG_LEN + 1];
	uint16_t inst_port;	  /**< port of netns instances */
	uint64_t exec_timeout_ns; /**< exec: one command's limit */
	/** Decided once for the cluster: the lb-control holding the
	 * service's lease in lb-control's Redis (--redis) scales, the
	 * others follow its instance list (control/scale/leader.h). */
	bool cluster;
};

/** Fills @p c with the defaults (see docs/policies.md, autoscaler). */
void lb_as_conf_default(struct lb_as_conf *c);

/** One instance in the repository. */
struct lb_as_inst {
	uint32_t id;   /**< per service, never reused */
	struct lb_conf_ip ip; /**< IPv4 0.0.0.0 while starting */
	uint16_t port; /**< 0 while starting */
	enum lb_as_origin origin;
	enum lb_as_state state;
	uint64_t since_ns;     /**< entered its state */
	uint64_t requested_ns; /**< asked of the driver */
	char drv_id[64];       /**< the driver's name for it */
	char why[64];	       /**< last event, for lbctl */
};

/** One evaluation's record. */
struct lb_as_decision {
	uint64_t now_ns;
	bool manual;
	enum lb_as_policy policy;
	/** spl: total load indicator; inflight: requests in flight. */
	double load;
	uint32_t running;
	uint32_t pending;
	double desired; /**< the policy's raw desired count */
	enum lb_scale_guard_action action;
	uint32_t count;
	uint32_t target;
	char reason[48];
};

/** Counters of one service; monotonic. */
struct lb_as_stats {
	uint64_t evals;
	uint64_t ups;
	uint64_t downs;
	uint64_t manual;
	uint64_t started;    /**< instances asked of the driver */
	uint64_t joined;     /**< pending -> active */
	uint64_t drained;    /**< draining -> stopped */
	uint64_t failed;     /**< start-up timeout, start failure, death */
	uint64_t drv_errors; /**< driver commands that failed or timed out */
	uint64_t drain_timeouts; /**< drains cut by the drain timeout */
	uint64_t adopted; /**< found running by the driver, not started */
};

/** Per-instance SPL input of an evaluation. */
struct lb_as_spl_in {
	uint32_t inst; /**< instance id */
	bool seen;     /**< an SPL arrived */
	double spl;
	uint64_t gen_ns; /**< generation, same clock as now_ns */
};

/** Inputs of an evaluation. */
struct lb_as_input {
	uint64_t now_ns;
	/** Requests in flight (inflight policy). */
	uint64_t inflight;
	/** Active instances' latest SPL (spl policy). */
	unsigned int nb_spl;
	const struct lb_as_spl_in *spl;
	/** The SPL clock's now (the dataplane's), for the ages. */
	uint64_t spl_now_ns;
};

struct lb_as;
struct lb_as_svc;

/**
 * An autoscaler over configuration @p conf, which it reads to check that
 * services exist. @return it, or NULL (errno ENOMEM).
 */
struct lb_as *lb_as_create(const struct lb_conf *conf);
void lb_as_free(struct lb_as *as);

/*
 * The `scale` commands register themselves (LB_CMD_REGISTER(), table
 * "scale") with the context "as", a struct lb_as, and extend `save`.
 */

/** Increases with every configuration change (for the state file). */
uint64_t lb_as_generation(const struct lb_as *as);

/** Appends "scale set ..." lines recreating the configuration. */
int lb_as_save(const struct lb_as *as, struct lb_cmd_out *out);

/**
 * A copy of the configuration (services, settings, paused), for undo:
 * lb-control takes one before each request and restores it when the
 * request fails. Runtime state (instances, history) is not part of it.
 * @return the copy (free() it), or NULL.
 */
void *lb_as_snapshot(const struct lb_as *as);
/** Puts a snapshot's configuration back. */
void lb_as_restore(struct lb_as *as, const void *snap);

/**
 * Number of autoscaled services (a service's own pool, or a named pool
 * of it: one unit each) and the @p i th of them. A unit whose
 * autoscaler was deleted (`scale del`, or the service or pool itself) stays
 * listed, lb_as_svc_deleted() true, until the runtime has stopped its
 * instances and calls lb_as_svc_reap().
 */
unsigned int lb_as_nb_svcs(const struct lb_as *as);
struct lb_as_svc *lb_as_svc_at(struct lb_as *as, unsigned int i);
struct lb_as_svc *lb_as_svc_find(struct lb_as *as,
				 const struct lb_conf_svc_key *k);

/**
 * Creates or reconfigures a service's autoscaler (what `scale set` does).
 * @return 0, -ENOENT (no such service), -EINVAL/-ERANGE (bad value,
 *   message in @p out), -ENOSPC, -ENOMEM. Nothing changes on error.
 */
int lb_as_svc_set(struct lb_as *as, const struct lb_conf_svc_key *k,
		  const struct lb_as_conf *c, struct lb_cmd_out *out);
/** Deletes a service's autoscaler. @return 0 or -ENOENT. */
int lb_as_svc_del(struct lb_as *as, const struct lb_conf_svc_key *k);

/*
 * The same for pool @p pool of service @p k: a named pool (`pool add`)
 * scaled by a policy of its own, or, for NULL, "" or "default", the
 * service's own pool (what the lb_as_svc_ functions mean). An unknown
 * pool is refused (-ENOENT) before anything changes.
 */
int lb_as_pool_set(struct lb_as *as, const struct lb_conf_svc_key *k,
		   const char *pool, const struct lb_as_conf *c,
		   struct lb_cmd_out *out);
int lb_as_pool_del(struct lb_as *as, const struct lb_conf_svc_key *k,
		   const char *pool);
struct lb_as_svc *lb_as_pool_find(struct lb_as *as,
				  const struct lb_conf_svc_key *k,
				  const char *pool);
/** The pool an autoscaled unit scales: its name, "" the service's own. */
const char *lb_as_svc_pool(const struct lb_as_svc *s);
/**
 * The index of @p s's pool in @p sv (lb_conf_pool_index()), -1 when the
 * service has no such pool any more.
 */
int lb_as_svc_pool_index(const struct lb_as_svc *s,
			 const struct lb_conf_svc *sv);

bool lb_as_svc_deleted(const struct lb_as_svc *s);
/** Frees a deleted service's state. */
void lb_as_svc_reap(struct lb_as *as, struct lb_as_svc *s);
/** Checks a driver's settings; set by the runtime (NULL: any). */
typedef int lb_as_driver_check_fn(const struct lb_as_conf *c,
				  struct lb_cmd_out *out);
void lb_as_set_driver_check(struct lb_as *as, lb_as_driver_check_fn *fn);
/** Writes names to @p buf separated by @p sep (lb_orch_names()). */
typedef int lb_as_names_fn(char *buf, size_t len, const char *sep);
/** The drivers named in `scale set`'s help; set by the runtime (NULL:
 * the help says NAME). Takes effect when a registry is built. */
void lb_as_set_driver_names(struct lb_as *as, lb_as_names_fn *fn);
const struct lb_conf_svc_key *lb_as_svc_key(const struct lb_as_svc *s);
const struct lb_as_conf *lb_as_svc_conf(const struct lb_as_svc *s);
bool lb_as_svc_paused(const struct lb_as_svc *s);
const struct lb_as_stats *lb_as_svc_stats(const struct lb_as_svc *s);
/** Bumped when the runtime must rebuild the service's driver. */
uint64_t lb_as_svc_conf_gen(const struct lb_as_svc *s);

/** A service's place among the lb-controls sharing it (`cluster on`),
 * kept by the runtime, shown by `scale show` and /metrics. */
struct lb_as_cluster {
	bool on;     /**< the lease is in use (`cluster on` and --redis) */
	bool leader; /**< this lb-control decides */
	bool redis_up;
	uint64_t term;	     /**< the lease's term last seen */
	char leader_id[128]; /**< its holder's token, "" when unknown */
	uint64_t seq;	     /**< the instance list's, published or applied */
	uint32_t hosts;	     /**< hosts whose load the leader merged last */
	uint64_t acquired;   /**< times this lb-control became leader */
	uint64_t lost;	     /**< times it stopped leading */
	uint64_t applied;    /**< lists applied as a follower */
	uint64_t fenced;     /**< publications Redis refused (not leader) */
};

/** The service's cluster state, for the runtime to keep. */
struct lb_as_cluster *lb_as_svc_cluster(struct lb_as_svc *s);

/* ---- the instance repository ---- */

unsigned int lb_as_nb_inst(const struct lb_as_svc *s);
struct lb_as_inst *lb_as_inst_at(struct lb_as_svc *s, unsigned int i);
struct lb_as_inst *lb_as_inst_find(struct lb_as_svc *s, uint32_t id);
/** The instance at backend @p ip : @p port, or NULL. */
struct lb_as_inst *lb_as_inst_by_addr(struct lb_as_svc *s,
				      const struct lb_conf_ip *ip,
				      uint16_t port);

/** Whether instance @p i has its address yet (not while starting). */
static inline bool
lb_as_inst_placed(const struct lb_as_inst *i)
{
	return i->ip.af == LB_CONF_AF_INET6 || i->ip.ip != 0;
}
/**
 * Adds an instance in @p state (static ones ACTIVE or DRAINING,
 * orchestrated ones STARTING). @return it, or NULL when full.
 */
struct lb_as_inst *lb_as_inst_add(struct lb_as_svc *s, enum lb_as_origin o,
				  enum lb_as_state state, uint64_t now_ns);
/**
 * Adds an orchestrated instance the driver found running (it was not
 * asked for: a restarted lb-control meets the instances it had), in
 * STARTING like a start, to come up through the same path. Counted as
 * adopted, not started. @return it, or NULL when full.
 */
struct lb_as_inst *lb_as_inst_adopt(struct lb_as_svc *s, uint64_t now_ns);
/**
 * Adds orchestrated instance @p id in @p state, known from the cluster's
 * list (another lb-control started it): counted neither as started nor
 * as adopted; later ids go past it. A static backend that has @p id
 * (its id is this host's own) gets another. @return it, or NULL (full,
 * or an orchestrated instance has @p id).
 */
struct lb_as_inst *lb_as_inst_import(struct lb_as_svc *s, uint32_t id,
				     enum lb_as_state state, uint64_t now_ns);
/** The id the next instance gets. */
uint32_t lb_as_next_id(const struct lb_as_svc *s);
/** Makes the next ids @p id or above (the cluster's list says ids below
 * are taken). */
void lb_as_raise_next_id(struct lb_as_svc *s, uint32_t id);
/**
 * Brings the static instances in line with the backends `backend add`
 * configured in @p s's pool of service @p sv (NULL: none): a backend of
 * another pool of the service is another unit's, not counted here.
 */
void lb_as_inst_sync(struct lb_as_svc *s, const struct lb_conf_svc *sv,
		     uint64_t now);
/** Moves an instance to @p state, noting @p why (may be NULL). */
void lb_as_inst_set(struct lb_as_svc *s, struct lb_as_inst *i,
		    enum lb_as_state state, uint64_t now_ns, const char *why);
/** Forgets an instance (stopped, or a static backend deleted). */
void lb_as_inst_remove(struct lb_as_svc *s, struct lb_as_inst *i);
/** Counts a driver error of the service. */
void lb_as_note_driver_error(struct lb_as_svc *s);
/** Counts a drain cut by the drain timeout. */
void lb_as_note_drain_timeout(struct lb_as_svc *s);
/** Instances in each state. */
void lb_as_inst_count(const struct lb_as_svc *s, uint32_t n[LB_AS_STATE_COUNT]);

/* ---- decisions ---- */

/** Whether an evaluation is due at @p now_ns (interval elapsed). */
bool lb_as_due(const struct lb_as_svc *s, uint64_t now_ns);

/**
 * One evaluation: the policy's recommendation from @p in, through the
 * guards, recorded in the history and counted. While paused only a
 * start-up timeout acts (the guard's stage 1), and nothing is recorded
 * unless it does.
 * @return 0 with @p d filled, or a negative errno (bad input; counted,
 *   nothing recorded).
 */
int lb_as_eval(struct lb_as_svc *s, const struct lb_as_input *in,
	       struct lb_as_decision *d);

/**
 * Takes the manual action queued by `scale up|down` (if any) at
 * @p now_ns: clamped to min/max, recorded in the history and counted.
 * @return 1 with @p d filled, 0 when none is queued.
 */
int lb_as_take_manual(struct lb_as_svc *s, uint64_t now_ns,
		      struct lb_as_decision *d);

/**
 * Drops the manual action queued (an lb-control that follows the
 * cluster's leader decides nothing). @return the instances it asked
 * for: > 0 up, < 0 down, 0 none.
 */
int32_t lb_as_drop_manual(struct lb_as_svc *s);

/** Number of decisions in the history (at most LB_AS_HIST). */
unsigned int lb_as_hist_len(const struct lb_as_svc *s);
/** The @p i th decision, oldest first, or NULL. */
const struct lb_as_decision *lb_as_hist_at(const struct lb_as_svc *s,
					   unsigned int i);

/** Appends the autoscaler's /metrics families (nothing without an
 * autoscaled service). @return 0 or a negative errno. */
int lb_as_metrics(struct lb_as *as, struct lb_cmd_out *o);

/** Names for lbctl, JSON and metrics. */
const char *lb_as_state_name(enum lb_as_state st);
const char *lb_as_origin_name(enum lb_as_origin o);
const char *lb_as_policy_name(enum lb_as_policy p);

/** Sets the clock `scale history` shows ages against (NULL: none). */
void lb_as_set_clock(struct lb_as *as, uint64_t (*now)(void *), void *arg);

/** Where the commands leave their JSON data (lb_ctl's data member). */
void lb_as_set_data_slot(struct lb_as *as, json_t **slot);

#endif /* LB_AUTOSCALE_H */
