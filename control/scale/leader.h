/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_LEADER_H
#define LB_LEADER_H

/**
 * @file
 * Scaling across hosts through Redis: per autoscaled service, a lease
 * (lease.h decides, this module asks Redis), the instance list the
 * leader publishes for its followers, and the load summary each host
 * publishes for the leader.
 *
 * Keys, for service "tcp:10.0.0.1:80" (SVC):
 *  - `sluice:scale:SVC:lease`: "TERM TOKEN", with the lease's TTL; taken
 *    with SET NX PX, renewed only by the script that finds TOKEN in it;
 *  - `sluice:scale:SVC:term`: the last term given (no TTL);
 *  - `sluice:scale:SVC:list`: the leader's instance list, written only by
 *    a script that finds the writer's "TERM TOKEN" in the lease (fencing:
 *    a leader that lost its lease writes nothing more);
 *  - `sluice:scale:SVC:load:TOKEN` and the set `sluice:scale:SVC:hosts`:
 *    each host's load summary, with a short TTL.
 *
 * A token names one lb-control's life: its name (`--scale-id`, the host
 * name by default), its pid and random bits, so that a restarted
 * lb-control never mistakes its former self's lease for its own.
 *
 * Every command waits at most LB_LEADER_TIMEOUT_MS; after a failure the
 * connection is dropped and made again at most twice a second, every op
 * failing at once meanwhile. Not thread-safe.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "autoscale.h"
#include "lease.h"

/** Longest wait for one Redis command. */
#define LB_LEADER_TIMEOUT_MS 200u
/** Longest token. */
#define LB_LEADER_TOKEN_LEN 127u
/** Hosts whose load the leader reads at most. */
#define LB_LEADER_HOSTS_MAX 16u
/** Largest SPL a load summary carries (a host clamps to it, a reader
 * refuses more): the merge's weighted sums stay finite. */
#define LB_LEADER_SPL_MAX 1e6
/** Oldest SPL age a summary carries (likewise): an hour. */
#define LB_LEADER_AGE_MAX_NS 3600000000000ull
/** Default TTL of a host's load summary: 3 s. */
#define LB_LEADER_LOAD_TTL_MS 3000u

/** One instance of a published list. */
struct lb_leader_inst {
	uint32_t id;
	enum lb_as_state state;
	/** IPv4 in host order or IPv6; IPv4 0 while starting. */
	struct lb_conf_ip ip;
	uint16_t port; /**< host order */
	uint32_t weight;
	char drv_id[64]; /**< the driver's name for it; "" none */
};

/** The leader's instance list of a service. */
struct lb_leader_list {
	uint64_t term;	  /**< the writer's term */
	uint64_t seq;	  /**< bumped by each publication in a term */
	uint32_t next_id; /**< instance ids below it are taken */
	unsigned int n;
	struct lb_leader_inst inst[LB_AS_INST_MAX];
};

/** One backend in a host's load summary. */
struct lb_leader_be_load {
	struct lb_conf_ip ip; /**< IPv4 in host order, or IPv6 */
	uint16_t port; /**< host order */
	bool seen;     /**< an SPL arrived */
	double spl;
	uint64_t age_ns;    /**< of the SPL, at the host's publication */
	uint64_t responses; /**< the host's traffic to it: the weight */
	uint64_t flows;	    /**< flows active on the host */
};

/** A host's load summary of a service. */
struct lb_leader_load {
	char host[LB_LEADER_TOKEN_LEN + 1]; /**< token of the host */
	uint64_t inflight;		    /**< requests in flight */
	unsigned int n;
	struct lb_leader_be_load be[LB_AS_INST_MAX];
};

/* ---- pure: the payloads and the merge ---- */

/** Writes @p lst as text into @p buf. @return its length, or -ENOSPC. */
int lb_leader_list_fmt(const struct lb_leader_list *lst, char *buf,
		       size_t len);
/** Reads a list's text. @return 0, or -EINVAL (nothing trusted). */
int lb_leader_list_parse(const char *buf, size_t len,
			 struct lb_leader_list *lst);
/** Writes @p ld as text. @return its length, or -ENOSPC. */
int lb_leader_load_fmt(const struct lb_leader_load *ld, char *buf,
		       size_t len);
/** Reads a load summary's text. @return 0, or -EINVAL. */
int lb_leader_load_parse(const char *buf, size_t len,
			 struct lb_leader_load *ld);

/**
 * The cluster's view of backend @p ip : @p port from @p nh hosts'
 * summaries: its SPL and age averaged over the hosts that saw one,
 * weighted by each host's responses from it (equal weights when none
 * has any), its flows summed. @return true when a host saw an SPL.
 */
bool lb_leader_merge_be(const struct lb_leader_load *h, unsigned int nh,
			const struct lb_conf_ip *ip, uint16_t port,
			struct lb_leader_be_load *out);

/* ---- Redis ---- */

struct lb_leader;

/**
 * A client of Redis at @p host : @p port, or on the unix socket @p host
 * when it starts with '/' (@p port then unused), connected lazily, for
 * an lb-control named @p name (1..63 bytes, no space or '/').
 * @return it, or NULL (errno EINVAL or ENOMEM).
 */
struct lb_leader *lb_leader_create(const char *host, uint16_t port,
				   const char *name);
void lb_leader_free(struct lb_leader *ld);

/** This lb-control's token. */
const char *lb_leader_token(const struct lb_leader *ld);
/** Whether the last command was answered (false once one failed). */
bool lb_leader_up(const struct lb_leader *ld);
/** Commands that failed or timed out. */
uint64_t lb_leader_errors(const struct lb_leader *ld);

/**
 * Asks Redis @p op on service @p svc's lease with TTL @p ttl_ms; an
 * acquisition gives a term above @p min_term and above every term Redis
 * gave. @return the outcome, @p term and @p holder (of @p hlen bytes)
 * set for HELD and TAKEN.
 */
enum lb_lease_outcome lb_leader_lease(struct lb_leader *ld, const char *svc,
				      enum lb_lease_op op, uint64_t min_term,
				      uint64_t ttl_ms, uint64_t *term,
				      char *holder, size_t hlen);

/** Gives the lease of term @p term up if still ours. @return 0 or -EIO. */
int lb_leader_release(struct lb_leader *ld, const char *svc, uint64_t term);

/**
 * Publishes @p lst (its term ours) as the service's list, only if the
 * lease is still "TERM TOKEN" of ours. @return 0, -EPERM (fenced: the
 * lease is not ours in that term), -ENOSPC or -EIO.
 */
int lb_leader_publish(struct lb_leader *ld, const char *svc,
		      const struct lb_leader_list *lst);

/** Reads the service's list. @return 0, -ENOENT (none), -EINVAL, -EIO. */
int lb_leader_fetch(struct lb_leader *ld, const char *svc,
		    struct lb_leader_list *lst);

/** Publishes this host's load summary (its host field set to the token)
 * for @p ttl_ms. @return 0, -ENOSPC or -EIO. */
int lb_leader_report(struct lb_leader *ld, const char *svc,
		     struct lb_leader_load *load, uint64_t ttl_ms);

/**
 * Reads the live hosts' summaries (expired ones are dropped from the
 * host set). @return how many (at most @p max), or -EIO.
 */
int lb_leader_loads(struct lb_leader *ld, const char *svc,
		    struct lb_leader_load *out, unsigned int max);

#endif /* LB_LEADER_H */
