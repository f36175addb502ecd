/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_CONF_PRIV_H
#define LB_CONF_PRIV_H

/*
 * What the files of the configuration model share: the configuration
 * itself and the lookups and checks that more than one of them makes
 * (conf.c: life cycle and commands; conf_net.c: local addresses, routes,
 * SNAT addresses; conf_svc.c: services, backends, validation, copy, save).
 */

#include <stdbool.h>
#include <stdint.h>

#include "lb/conf.h"

#define ROLE_ADDR 0x1u
#define ROLE_SNAT 0x2u
#define ROLE_VIP 0x4u
#define ROLE_BE 0x8u
#define ROLE_GW 0x10u

/* "udp [ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535" */
#define SVC_STRLEN 64
#define DESC_LEN 128

struct lb_conf {
	lb_conf_sched_known_fn *sched_known;
	lb_conf_sched_names_fn *sched_names;
	lb_conf_rule_hits_fn *rule_hits; /**< for `rule list`, or NULL */
	void *rule_hits_arg;
	uint64_t gen;
	unsigned int nb_addr;
	unsigned int nb_route;
	unsigned int nb_snat;
	unsigned int nb_svc;
	struct lb_conf_addr addr[LB_CONF_MAX_ADDRS];
	struct lb_conf_route route[LB_CONF_MAX_ROUTES];
	struct lb_conf_snat snat[LB_CONF_MAX_SNATS];
	struct lb_conf_svc svc[LB_CONF_MAX_SVCS];
};

/* ---- conf_net.c ---- */

/** The address into @p buf (LB_CMD_IP_STRLEN bytes); returns buf. */
char *lb_conf_ipstr(const struct lb_conf_ip *ip, char *buf);
/** "tcp 10.0.0.1:80", "tcp [2001:db8::1]:80" into @p buf (SVC_STRLEN
 * bytes); returns buf. */
char *lb_conf_key_str(const struct lb_conf_svc_key *k, char *buf);
/** The VIP of @p k. */
struct lb_conf_ip lb_conf_key_vip(const struct lb_conf_svc_key *k);
/** Checks a service key's protocol, VIP and port. */
int lb_conf_key_check(const struct lb_conf_svc_key *k, struct lb_cmd_out *out);
/** The local address @p ip, or NULL. */
struct lb_conf_addr *lb_conf_addr_find(struct lb_conf *c,
				       const struct lb_conf_ip *ip);
/** The service of @p k, or NULL. */
struct lb_conf_svc *lb_conf_svc_get(const struct lb_conf *c,
				    const struct lb_conf_svc_key *k);
/** The backend @p ip:@p port of @p s, or NULL. */
struct lb_conf_be *lb_conf_be_find(struct lb_conf_svc *s,
				   const struct lb_conf_ip *ip, uint16_t port);
/** -EINVAL, naming it, if @p ip has one of @p roles (ROLE_*) already. */
int lb_conf_roles_check(const struct lb_conf *c, const struct lb_conf_ip *ip,
			unsigned int roles, const char *what,
			struct lb_cmd_out *out);
/** -EINVAL if @p ip is not unicast. */
int lb_conf_unicast_check(const struct lb_conf_ip *ip, const char *what,
			  struct lb_cmd_out *out);

/* ---- conf_svc.c ---- */

/** The service of @p key, or NULL with *@p rc and its message. */
struct lb_conf_svc *lb_conf_svc_or_error(const struct lb_conf *c,
					 const struct lb_conf_svc_key *key,
					 struct lb_cmd_out *out, int *rc);

/* ---- conf_pool.c, conf_pool_cmd.c ---- */

/** `pool add SVC NAME sched S` and the rest of the service's pools. */
int lb_conf_pool_save(struct lb_cmd_out *out, const char *s,
		      const struct lb_conf_svc *sv);
/** `rule add` and `rule default` lines of @p sv. */
int lb_conf_rule_save(struct lb_cmd_out *out, const char *s,
		      const struct lb_conf_svc *sv);
/** Adds the pools, backends and rules of @p sv to @p t, whose service
 * of the same key was just added (lb_conf_validate()). */
int lb_conf_pool_replay(struct lb_conf *t, const struct lb_conf_svc *sv,
			struct lb_cmd_out *out);
/** The pool and rule commands, which lb_conf_register() adds too. */
#define LB_CONF_POOL_NB_CMDS 8
extern const struct lb_cmd_def lb_conf_pool_cmds[LB_CONF_POOL_NB_CMDS];

#endif /* LB_CONF_PRIV_H */
