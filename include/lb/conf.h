/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_CONF_H
#define LB_CONF_H

/**
 * @file
 * The desired configuration of a load balancer: local addresses, routes,
 * SNAT addresses, virtual services and their backends, with the commands
 * that change it (registered in a struct lb_cmd_reg by lb_conf_register()).
 *
 * lb-dataplane reads its first configuration as a file of these commands;
 * lb-control keeps the desired configuration in one struct lb_conf, runs
 * lbctl's commands against it, and writes it back as commands with
 * lb_conf_save() (`lbctl save`, in the spirit of ipvsadm-save). The model
 * is plain C with fixed maximums and no dependency on the dataplane:
 * scheduler names are checked through a callback given at creation.
 *
 * Every change is checked before anything is modified: a command that
 * fails leaves the configuration exactly as it was and writes one error
 * line. Every command that changes the configuration increases the
 * generation counter by one, so a consumer (the table publisher) can tell
 * that it has something new to publish.
 *
 * Invariants kept at all times (lb_conf_validate() checks them all):
 *  - addresses of every kind are unicast (not 0/8, 127/8, 224/4, 240/4;
 *    for IPv6 not ::, ::1, ff00::/8, ::ffff:0:0/96);
 *  - a local address is not the network or broadcast address of its own
 *    subnet (for subnets of /30 and larger);
 *  - subnets of local addresses on different ports do not overlap;
 *  - every route's gateway lies in a connected subnet of the route's port
 *    and is not itself a local, SNAT or VIP address;
 *  - a SNAT address inside a connected subnet is on that subnet's port;
 *  - one address has one role, with two exceptions: a VIP may be a local
 *    address, and a SNAT address may be the local address of its own
 *    port; a SNAT address is never a VIP, a backend is never a local,
 *    SNAT or VIP address;
 *  - no duplicates: local address, SNAT address, route prefix, service
 *    (protocol, VIP, port), backend (address, port) within its service;
 *  - a service's retry gap is shorter than its expiry; `http` only on TCP.
 *
 * Not thread-safe: one thread owns a struct lb_conf. The records and
 * options it holds are declared in lb/conf-t.h, which the published table
 * (lb/dpconf-t.h) shares with the workers.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lb/cmd.h"
#include "lb/conf-t.h"
#include "lb/route_flat-t.h"

/* ---- addresses of either family ---- */

/** @p ip (host order) as a struct lb_conf_ip. */
static inline struct lb_conf_ip
lb_conf_ip4(uint32_t ip)
{
	struct lb_conf_ip a = {.af = LB_CONF_AF_INET, .ip = ip};

	return a;
}

/** The address of family @p af held in a record's fields. */
static inline struct lb_conf_ip
lb_conf_ip_of(uint8_t af, uint32_t ip, const uint8_t *ip6)
{
	struct lb_conf_ip a = {.af = af};

	if (af == LB_CONF_AF_INET6)
		memcpy(a.ip6, ip6, LB_CONF_IP6_LEN);
	else
		a.ip = ip;
	return a;
}

/** The address of a record with members af, ip and ip6 (local, SNAT
 * address, backend). */
#define LB_CONF_IP_OF(rec) lb_conf_ip_of((rec)->af, (rec)->ip, (rec)->ip6)

/** Whether @p a and @p b are the same address (family included). */
static inline bool
lb_conf_ip_eq(const struct lb_conf_ip *a, const struct lb_conf_ip *b)
{
	if (a->af != b->af)
		return false;
	return a->af == LB_CONF_AF_INET6
		       ? memcmp(a->ip6, b->ip6, LB_CONF_IP6_LEN) == 0
		       : a->ip == b->ip;
}

/** Clears the bits of IPv6 address @p ip6 past the first @p len. */
static inline void
lb_conf_ip6_mask(uint8_t *ip6, unsigned int len)
{
	for (unsigned int i = 0; i < LB_CONF_IP6_LEN; i++) {
		unsigned int keep = len > i * 8 ? len - i * 8 : 0;

		if (keep < 8)
			ip6[i] &= (uint8_t)(0xff00u >> keep);
	}
}

/** Whether IPv6 @p a and @p b agree on their first @p len bits. */
static inline bool
lb_conf_ip6_same_prefix(const uint8_t *a, const uint8_t *b, unsigned int len)
{
	uint8_t x[LB_CONF_IP6_LEN];

	for (unsigned int i = 0; i < LB_CONF_IP6_LEN; i++)
		x[i] = a[i] ^ b[i];
	lb_conf_ip6_mask(x, len);
	for (unsigned int i = 0; i < LB_CONF_IP6_LEN; i++)
		if (x[i] != 0)
			return false;
	return true;
}

/** Whether @p a and @p b name the same service (the VIP's family
 * included; the other family's field is not looked at). */
static inline bool
lb_conf_svc_key_eq(const struct lb_conf_svc_key *a,
		   const struct lb_conf_svc_key *b)
{
	struct lb_conf_ip x = lb_conf_ip_of(a->af, a->vip, a->vip6);
	struct lb_conf_ip y = lb_conf_ip_of(b->af, b->vip, b->vip6);

	return a->proto == b->proto && a->port == b->port &&
	       lb_conf_ip_eq(&x, &y);
}

/** The key of service @p proto @p vip : @p port. */
static inline struct lb_conf_svc_key
lb_conf_svc_key_of(uint8_t proto, const struct lb_conf_ip *vip, uint16_t port)
{
	struct lb_conf_svc_key k = {.proto = proto, .af = vip->af,
				    .port = port};

	if (vip->af == LB_CONF_AF_INET6)
		memcpy(k.vip6, vip->ip6, LB_CONF_IP6_LEN);
	else
		k.vip = vip->ip;
	return k;
}

/** Default name of feedback header @p h ("X-SPL", ...), NULL if none. */
const char *lb_conf_hdr_default(enum lb_conf_hdr h);
/** Option keyword of feedback header @p h ("spl-header", ...), or NULL. */
const char *lb_conf_hdr_opt(enum lb_conf_hdr h);

/**
 * Tells whether a scheduler exists; returns non-zero if @p name is known.
 * lb-control passes the dataplane's scheduler table, tests their own.
 */
typedef int lb_conf_sched_known_fn(const char *name);

/**
 * Writes the names of the known schedulers to @p buf, separated by @p sep,
 * for the error about an unknown one (lb_sched_names()).
 */
typedef int lb_conf_sched_names_fn(char *buf, size_t len, const char *sep);

struct lb_conf_svc_key;

/**
 * The hits of service @p k's content routing rules as the workers count
 * them: @p hits[r] for rule r (0-based, in list order) for r < @p n, and
 * @p hits[n] for the default (@p n + 1 counters).
 * @return 0, or a negative errno when nothing counts them (no dataplane
 * attached, a service not yet published).
 */
typedef int lb_conf_rule_hits_fn(void *arg, const struct lb_conf_svc_key *k,
				 uint64_t *hits, unsigned int n);

struct lb_conf;

/**
 * Creates an empty configuration (generation 0).
 * @param sched_known  NULL accepts every well-formed scheduler name.
 * @return the configuration, or NULL with errno ENOMEM.
 */
struct lb_conf *lb_conf_create(lb_conf_sched_known_fn *sched_known);

/**
 * Makes the error about an unknown scheduler list the known ones, from
 * @p names (NULL: it names only the unknown one). Kept by lb_conf_copy()
 * and by the configurations validation makes.
 */
void lb_conf_set_sched_names(struct lb_conf *c, lb_conf_sched_names_fn *names);

/**
 * Makes `rule list` show each rule's hits, from @p fn called with
 * @p arg (NULL: a "-" for each). Kept by lb_conf_copy() into the copy's
 * destination, as the scheduler hooks are.
 */
void lb_conf_set_rule_hits(struct lb_conf *c, lb_conf_rule_hits_fn *fn,
			   void *arg);

void lb_conf_free(struct lb_conf *c);

/**
 * Registers the configuration commands (addr, route, snat, service,
 * backend, save) in @p r with @p c as their context, for a registry of
 * these alone (lb-dataplane's). They are also a self-registered table
 * (LB_CMD_REGISTER(), table and context "conf") that lb_cmd_reg_build()
 * takes when a struct lb_conf is bound as "conf". The synopsis and
 * reference of `service add` are made from the service option rows then
 * (lb_svc_opt_synopsis(), lb_svc_opt_reference()).
 * @return as lb_cmd_register_many().
 */
int lb_conf_register(struct lb_conf *c, struct lb_cmd_reg *r);

/** Generation counter, increased by every change; 0 if @p c is NULL. */
uint64_t lb_conf_generation(const struct lb_conf *c);

/**
 * Appends commands that recreate the configuration exactly when applied
 * to an empty one: addresses, routes, SNAT addresses, then each service
 * followed by its backends, all in the order they were added, options at
 * their default left out.
 * @return 0, -EINVAL or -ENOMEM.
 */
int lb_conf_save(const struct lb_conf *c, struct lb_cmd_out *out);

/**
 * Checks every invariant listed in the file comment by rebuilding the
 * configuration in a scratch copy through the same checks as the
 * commands. @return 0, the first error (with its message), or -ENOMEM.
 */
int lb_conf_validate(const struct lb_conf *c, struct lb_cmd_out *out);

/**
 * Replaces the content of @p dst by that of @p src (the scheduler callback
 * of @p dst stays), e.g. to apply a file to a scratch copy and keep the
 * result only if every line succeeded. Increases @p dst's generation.
 * @return 0 or -EINVAL.
 */
int lb_conf_copy(struct lb_conf *dst, const struct lb_conf *src);

/* ---- read access ---- */

unsigned int lb_conf_nb_addrs(const struct lb_conf *c);
const struct lb_conf_addr *lb_conf_addr_at(const struct lb_conf *c,
					   unsigned int i);
unsigned int lb_conf_nb_routes(const struct lb_conf *c);
const struct lb_conf_route *lb_conf_route_at(const struct lb_conf *c,
					     unsigned int i);
unsigned int lb_conf_nb_snats(const struct lb_conf *c);
const struct lb_conf_snat *lb_conf_snat_at(const struct lb_conf *c,
					   unsigned int i);
unsigned int lb_conf_nb_svcs(const struct lb_conf *c);
/** The @p i th service in the order added, or NULL. */
const struct lb_conf_svc *lb_conf_svc_at(const struct lb_conf *c,
					 unsigned int i);
/** The service of @p key, or NULL. */
const struct lb_conf_svc *lb_conf_svc_find(const struct lb_conf *c,
					   const struct lb_conf_svc_key *key);

/* ---- changes ----
 *
 * The commands call these after parsing; lb-control may call them
 * directly (e.g. the orchestrator adding a backend). Each returns 0, or a
 * negative errno with one error line in @p out (which may be NULL) and no
 * change: -EINVAL (bad value or conflict), -ERANGE (value out of range),
 * -EEXIST (duplicate), -ENOENT (missing), -ENOSPC (limit reached),
 * -EBUSY (still needed by a route).
 */

int lb_conf_addr_add(struct lb_conf *c, uint32_t ip, uint8_t len, uint16_t port,
		     struct lb_cmd_out *out);
/**
 * lb_conf_addr_add() on a port whose frames carry 802.1Q tag @p vlan
 * (0: untagged). -EINVAL if another address of the port has another.
 */
int lb_conf_addr_add_vlan(struct lb_conf *c, uint32_t ip, uint8_t len,
			  uint16_t port, uint16_t vlan, struct lb_cmd_out *out);
int lb_conf_addr_del(struct lb_conf *c, uint32_t ip, struct lb_cmd_out *out);
int lb_conf_route_add(struct lb_conf *c, uint32_t net, uint8_t len, uint32_t gw,
		      uint16_t port, struct lb_cmd_out *out);
int lb_conf_route_del(struct lb_conf *c, uint32_t net, uint8_t len,
		      struct lb_cmd_out *out);
int lb_conf_snat_add(struct lb_conf *c, uint32_t ip, uint16_t port,
		     struct lb_cmd_out *out);
int lb_conf_snat_del(struct lb_conf *c, uint32_t ip, struct lb_cmd_out *out);

/*
 * The same changes for an address of either family (the functions above
 * are their IPv4 cases). A route's gateway is of its network's family;
 * subnets, gateways and SNAT addresses are matched within one family.
 * An IPv6 local address may not have an all-zero host part up to /126
 * (the subnet-router anycast address); IPv6 has no broadcast address.
 * IPv6 addresses must not be unspecified, loopback, multicast or
 * IPv4-mapped.
 */
int lb_conf_addr_add_ip(struct lb_conf *c, const struct lb_conf_ip *ip,
			uint8_t len, uint16_t port, uint16_t vlan,
			struct lb_cmd_out *out);
int lb_conf_addr_del_ip(struct lb_conf *c, const struct lb_conf_ip *ip,
			struct lb_cmd_out *out);
int lb_conf_route_add_ip(struct lb_conf *c, const struct lb_conf_ip *net,
			 uint8_t len, const struct lb_conf_ip *gw,
			 uint16_t port, struct lb_cmd_out *out);
int lb_conf_route_del_ip(struct lb_conf *c, const struct lb_conf_ip *net,
			 uint8_t len, struct lb_cmd_out *out);
int lb_conf_snat_add_ip(struct lb_conf *c, const struct lb_conf_ip *ip,
			uint16_t port, struct lb_cmd_out *out);
int lb_conf_snat_del_ip(struct lb_conf *c, const struct lb_conf_ip *ip,
			struct lb_cmd_out *out);

/**
 * Reads PROTO VIP:PORT from @p argv[0] and @p argv[1], the VIP of either
 * family ("tcp 192.0.2.10:80", "udp [2001:db8::10]:53"), as every command
 * naming a service does. @return 0, -EINVAL or -ERANGE with its message.
 */
int lb_conf_parse_key(char **argv, struct lb_conf_svc_key *k,
		      struct lb_cmd_out *out);

/** Fills @p o with the defaults documented above. */
void lb_conf_svc_opts_default(struct lb_conf_svc_opts *o);

/**
 * Appends " keyword value" for each option of LB_CONF_FLOW_LIST in @p o
 * that differs from @p def (every one if @p def is NULL), as `service
 * add` reads them. @return 0 or as lb_cmd_printf().
 */
int lb_conf_flow_opts_print(struct lb_cmd_out *out,
			    const struct lb_conf_svc_opts *o,
			    const struct lb_conf_svc_opts *def);

/**
 * Checks a service's options for protocol @p proto: scheduler known,
 * every value in range, retry gap shorter than expiry, http only on TCP.
 */
int lb_conf_svc_opts_check(const struct lb_conf *c, uint8_t proto,
			   const struct lb_conf_svc_opts *o,
			   struct lb_cmd_out *out);

/** Adds a service with no backends; @p o NULL means the defaults. */
int lb_conf_svc_add(struct lb_conf *c, const struct lb_conf_svc_key *key,
		    const struct lb_conf_svc_opts *o, struct lb_cmd_out *out);
/** Replaces a service's options, keeping its backends. */
int lb_conf_svc_set(struct lb_conf *c, const struct lb_conf_svc_key *key,
		    const struct lb_conf_svc_opts *o, struct lb_cmd_out *out);
/** Deletes a service and its backends. */
int lb_conf_svc_del(struct lb_conf *c, const struct lb_conf_svc_key *key,
		    struct lb_cmd_out *out);

int lb_conf_be_add(struct lb_conf *c, const struct lb_conf_svc_key *key,
		   uint32_t ip, uint16_t port, uint32_t weight,
		   struct lb_cmd_out *out);
int lb_conf_be_del(struct lb_conf *c, const struct lb_conf_svc_key *key,
		   uint32_t ip, uint16_t port, struct lb_cmd_out *out);
int lb_conf_be_set_weight(struct lb_conf *c, const struct lb_conf_svc_key *key,
			  uint32_t ip, uint16_t port, uint32_t weight,
			  struct lb_cmd_out *out);
/**
 * Starts (@p draining true) or ends draining a backend; asking for the
 * state it is already in is an error.
 */
int lb_conf_be_drain(struct lb_conf *c, const struct lb_conf_svc_key *key,
		     uint32_t ip, uint16_t port, bool draining,
		     struct lb_cmd_out *out);

/** Marks a backend as started by an orchestrator (or not). */
int lb_conf_be_set_orch(struct lb_conf *c, const struct lb_conf_svc_key *key,
			uint32_t ip, uint16_t port, bool orch,
			struct lb_cmd_out *out);

/*
 * The backend changes for an address of either family (those above are
 * their IPv4 cases). An IPv6 service takes IPv6 backends (fnat66) and
 * IPv4 ones (fnat64); an IPv4 service takes IPv4 backends only.
 */
int lb_conf_be_add_ip(struct lb_conf *c, const struct lb_conf_svc_key *key,
		      const struct lb_conf_ip *ip, uint16_t port,
		      uint32_t weight, struct lb_cmd_out *out);
int lb_conf_be_del_ip(struct lb_conf *c, const struct lb_conf_svc_key *key,
		      const struct lb_conf_ip *ip, uint16_t port,
		      struct lb_cmd_out *out);
int lb_conf_be_set_weight_ip(struct lb_conf *c,
			     const struct lb_conf_svc_key *key,
			     const struct lb_conf_ip *ip, uint16_t port,
			     uint32_t weight, struct lb_cmd_out *out);
int lb_conf_be_drain_ip(struct lb_conf *c, const struct lb_conf_svc_key *key,
			const struct lb_conf_ip *ip, uint16_t port,
			bool draining, struct lb_cmd_out *out);
int lb_conf_be_set_orch_ip(struct lb_conf *c,
			   const struct lb_conf_svc_key *key,
			   const struct lb_conf_ip *ip, uint16_t port,
			   bool orch, struct lb_cmd_out *out);

/* ---- pools and content routing rules (conf_pool.c) ---- */

/**
 * The index of pool @p name in @p sv: 0 for LB_CONF_POOL_DEFAULT (the
 * service's own pool), i for its named pool pool[i - 1]; -1 if none.
 */
int lb_conf_pool_index(const struct lb_conf_svc *sv, const char *name);

/** The backends of pool @p idx of @p sv (lb_conf_pool_index()) and the
 * sum of their weights. */
void lb_conf_pool_sum(const struct lb_conf_svc *sv, unsigned int idx,
		      uint32_t *nb, uint64_t *wsum);

/**
 * Adds the named pool @p name, with its scheduler @p sched (NULL: the
 * default), to service @p key.
 * Errors: the service's, "invalid pool name", "pool N already exists",
 * "unknown scheduler", "too many pools".
 */
int lb_conf_pool_add(struct lb_conf *c, const struct lb_conf_svc_key *key,
		     const char *name, const char *sched,
		     struct lb_cmd_out *out);

/**
 * Adds the named pool @p name to service @p key with its options, @p argc
 * words of "KEYWORD VALUE": `sched` and the service's health check
 * options (`check`, `check-path`, ...), read and checked as `service
 * set` reads and checks them. Until a check option is given the pool
 * follows the service's check; `check service` says so. Nothing changes
 * on error: the service's, "invalid pool name", "pool N already exists",
 * "unknown pool option", an option's own, "too many pools".
 */
int lb_conf_pool_add_opts(struct lb_conf *c, const struct lb_conf_svc_key *key,
			  const char *name, int argc, char *const *argv,
			  struct lb_cmd_out *out);

/**
 * Changes options of the named pool @p name of service @p key, as
 * lb_conf_pool_add_opts() reads them; a check option not given keeps its
 * value (the service's, for a pool that followed it). The service's own
 * pool is refused: its options are the service's.
 */
int lb_conf_pool_set(struct lb_conf *c, const struct lb_conf_svc_key *key,
		     const char *name, int argc, char *const *argv,
		     struct lb_cmd_out *out);

/**
 * The health check the backends of pool @p idx of @p sv
 * (lb_conf_pool_index()) have: the pool's own, or the service's.
 */
const struct lb_conf_check *lb_conf_pool_check(const struct lb_conf_svc *sv,
					       unsigned int idx);

/** Whether two health checks are the same (the path up to its NUL). */
bool lb_conf_check_eq(const struct lb_conf_check *a,
		      const struct lb_conf_check *b);

/**
 * The check of pool @p idx as `pool list` shows it: "none", "tcp",
 * "http PATH", or LB_CONF_POOL_CHECK_SERVICE for a named pool that
 * follows its service's. @return 0, -ENOSPC (@p len too small; at least
 * LB_CONF_POOL_CHECK_STRLEN + 1 is enough).
 */
int lb_conf_pool_check_str(const struct lb_conf_svc *sv, unsigned int idx,
			   char *buf, size_t len);

/**
 * Deletes the named pool @p name of service @p key: refused (-EBUSY)
 * while a backend is in it or a rule or the default action sends to it.
 */
int lb_conf_pool_del(struct lb_conf *c, const struct lb_conf_svc_key *key,
		     const char *name, struct lb_cmd_out *out);

/**
 * lb_conf_be_add_ip() into pool @p pool (NULL or LB_CONF_POOL_DEFAULT:
 * the service's own pool); an unknown pool is refused before anything
 * changes.
 */
int lb_conf_be_add_pool(struct lb_conf *c, const struct lb_conf_svc_key *key,
			const struct lb_conf_ip *ip, uint16_t port,
			uint32_t weight, const char *pool,
			struct lb_cmd_out *out);

/**
 * Inserts rule @p text (route_rules.h's text form, without `default`) at
 * place @p at (1-based; 0: after the last). The service must be TCP with
 * `synproxy on`, the rule must read, name known pools, and all the rules
 * must fit the published table (LB_CONF_MAX_RULES, LB_ROUTE_FLAT_STR).
 */
int lb_conf_rule_add(struct lb_conf *c, const struct lb_conf_svc_key *key,
		     unsigned int at, const char *text,
		     struct lb_cmd_out *out);

/** Deletes rule @p n (1-based) of service @p key. */
int lb_conf_rule_del(struct lb_conf *c, const struct lb_conf_svc_key *key,
		     unsigned int n, struct lb_cmd_out *out);

/**
 * Sets what happens when no rule matches: @p text is `pool NAME` or
 * `refuse rst|404|421`; `pool default` is the service's own pool, as
 * without rules.
 */
int lb_conf_rule_default(struct lb_conf *c, const struct lb_conf_svc_key *key,
			 const char *text, struct lb_cmd_out *out);

/** Whether @p sv has rules or a default action other than its pool. */
bool lb_conf_svc_routes(const struct lb_conf_svc *sv);

/**
 * Checks options @p o for service @p sv (`service set`): a service with
 * rules must keep TCP and `synproxy on`, and each pool's own check must
 * stay valid with them (`proxy-protocol` refuses an http check).
 */
int lb_conf_rules_opts_check(const struct lb_conf_svc *sv,
			     const struct lb_conf_svc_opts *o,
			     struct lb_cmd_out *out);

/**
 * Compiles the rules and default action of @p sv into @p f, for the
 * published table. Pools are numbered as lb_conf_pool_index() does.
 */
int lb_conf_rules_compile(const struct lb_conf_svc *sv,
			  struct lb_route_flat *f, struct lb_cmd_out *out);

#endif /* LB_CONF_H */
