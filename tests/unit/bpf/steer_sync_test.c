/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The steering rules a published table calls for (lb_steer_rules_of()).
 * Reconciling them with a map needs BPF: tests/bpf/steer_test.c.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lb/snat.h"
#include "lb/steer_sync.h"

#define A(a, b, c, d) htonl(((a) << 24) | ((b) << 16) | ((c) << 8) | (d))

#define LOCAL A(10, 0, 0, 1)
#define SNAT A(10, 0, 1, 2)
#define VIP A(10, 0, 0, 100)
#define HOSTIP A(10, 0, 0, 50)

static struct lb_dpconf *
conf_new(void)
{
	struct lb_dpconf *c = calloc(1, sizeof(*c));

	assert_non_null(c);
	return c;
}

static void
add_svc(struct lb_dpconf *c, uint8_t state, uint8_t proto, uint32_t vip,
	uint16_t port)
{
	struct lb_dpconf_svc *s = &c->svc[c->nb_svc++];

	s->state = state;
	s->proto = proto;
	s->vip = vip;
	s->vport = htons(port);
}

struct want {
	uint32_t addr;
	uint8_t proto;
	uint16_t lo, hi;
	enum lb_steer_kind kind;
};

/* The rules are @p w, in any order, and nothing else. */
static void
expect(const struct lb_steer_rule *got, size_t n, const struct want *w,
       size_t nw)
{
	assert_int_equal(n, nw);
	for (size_t i = 0; i < nw; i++) {
		int found = 0;

		for (size_t j = 0; j < n; j++)
			found += got[j].addr == w[i].addr &&
				 got[j].proto == w[i].proto &&
				 got[j].port_min == w[i].lo &&
				 got[j].port_max == w[i].hi &&
				 got[j].kind == w[i].kind;
		assert_int_equal(found, 1);
	}
}

static void
test_empty(void **state)
{
	struct lb_dpconf *c = conf_new();
	struct lb_steer_rule r[LB_STEER_SYNC_MAX];

	(void)state;
	assert_int_equal(lb_steer_rules_of(c, NULL, 0, r), 0);
	free(c);
}

/* Addresses the host does not have: one whole-address rule each; a VIP
 * of several services, or one that is also our address, only once. */
static void
test_whole(void **state)
{
	struct lb_dpconf *c = conf_new();
	struct lb_steer_rule r[LB_STEER_SYNC_MAX];
	const struct want w[] = {
		{ LOCAL, 0, 0, 0, LB_STEER_KIND_LOCAL },
		{ SNAT, 0, 0, 0, LB_STEER_KIND_SNAT },
		{ VIP, 0, 0, 0, LB_STEER_KIND_VIP },
	};
	uint32_t host[] = { HOSTIP };

	(void)state;
	c->addr[c->nb_addr++].ip = LOCAL;
	c->snat[c->nb_snat++].ip = SNAT;
	add_svc(c, LB_SVC_ACTIVE, IPPROTO_TCP, VIP, 80);
	add_svc(c, LB_SVC_ACTIVE, IPPROTO_UDP, VIP, 53);
	add_svc(c, LB_SVC_ACTIVE, IPPROTO_TCP, LOCAL, 8080);
	/* An IPv6 service (vip 0, its VIP in vip6) makes no IPv4 rule. */
	add_svc(c, LB_SVC_ACTIVE, IPPROTO_TCP, 0, 443);
	c->svc[c->nb_svc - 1].af = LB_CONF_AF_INET6;
	c->svc[c->nb_svc - 1].vip6[0] = 0x20;
	expect(r, lb_steer_rules_of(c, host, 1, r), w, 3);
	/* Not even when the host has the address 0. */
	host[0] = 0;
	expect(r, lb_steer_rules_of(c, host, 1, r), w, 3);
	free(c);
}

/* Addresses the host has: the services' ports, the SNAT ports, and
 * nothing for our own address (the kernel keeps it). */
static void
test_shared(void **state)
{
	struct lb_dpconf *c = conf_new();
	struct lb_steer_rule r[LB_STEER_SYNC_MAX];
	const struct want w[] = {
		{ HOSTIP, IPPROTO_TCP, 81, 81, LB_STEER_KIND_VIP },
		{ HOSTIP, IPPROTO_UDP, 53, 53, LB_STEER_KIND_VIP },
		{ SNAT, IPPROTO_TCP, LB_SNAT_PORT_MIN_DEFAULT,
		  LB_SNAT_PORT_MAX_DEFAULT, LB_STEER_KIND_SNAT },
		{ SNAT, IPPROTO_UDP, LB_SNAT_PORT_MIN_DEFAULT,
		  LB_SNAT_PORT_MAX_DEFAULT, LB_STEER_KIND_SNAT },
		{ VIP, 0, 0, 0, LB_STEER_KIND_VIP },
	};
	uint32_t host[] = { A(127, 0, 0, 1), HOSTIP, SNAT, LOCAL };

	(void)state;
	c->addr[c->nb_addr++].ip = LOCAL;
	c->snat[c->nb_snat++].ip = SNAT;
	add_svc(c, LB_SVC_ACTIVE, IPPROTO_TCP, HOSTIP, 81);
	add_svc(c, LB_SVC_ACTIVE, IPPROTO_UDP, HOSTIP, 53);
	add_svc(c, LB_SVC_ACTIVE, IPPROTO_TCP, HOSTIP, 81); /* twice */
	add_svc(c, LB_SVC_ACTIVE, IPPROTO_TCP, VIP, 80);
	expect(r, lb_steer_rules_of(c, host, 4, r), w, 5);
	free(c);
}

/* A removed service whose flows still run keeps its rule until its slot
 * is free: the drain finishes. */
static void
test_states(void **state)
{
	struct lb_dpconf *c = conf_new();
	struct lb_steer_rule r[LB_STEER_SYNC_MAX];
	const struct want w[] = {
		{ VIP, 0, 0, 0, LB_STEER_KIND_VIP },
		{ HOSTIP, IPPROTO_TCP, 81, 81, LB_STEER_KIND_VIP },
	};
	uint32_t host[] = { HOSTIP };

	(void)state;
	add_svc(c, LB_SVC_DELETED, IPPROTO_TCP, VIP, 80);
	add_svc(c, LB_SVC_EMPTY, IPPROTO_TCP, A(10, 0, 0, 101), 80);
	add_svc(c, LB_SVC_DELETED, IPPROTO_TCP, HOSTIP, 81);
	add_svc(c, LB_SVC_EMPTY, IPPROTO_TCP, HOSTIP, 82);
	expect(r, lb_steer_rules_of(c, host, 1, r), w, 2);
	free(c);
}

/* The largest table fits the room the header promises. */
static void
test_full(void **state)
{
	struct lb_dpconf *c = conf_new();
	struct lb_steer_rule r[LB_STEER_SYNC_MAX];
	uint32_t host[LB_CONF_MAX_SNATS];

	(void)state;
	for (uint32_t i = 0; i < LB_CONF_MAX_ADDRS; i++)
		c->addr[c->nb_addr++].ip = A(10, 1, 0, i + 1);
	for (uint32_t i = 0; i < LB_CONF_MAX_SNATS; i++) {
		c->snat[c->nb_snat++].ip = A(10, 2, 0, i + 1);
		host[i] = A(10, 2, 0, i + 1);
	}
	for (uint32_t i = 0; i < LB_CONF_MAX_SVCS; i++)
		add_svc(c, LB_SVC_ACTIVE, IPPROTO_TCP, A(10, 3, 0, i + 1), 80);
	assert_int_equal(lb_steer_rules_of(c, host, LB_CONF_MAX_SNATS, r),
			 LB_STEER_SYNC_MAX);
	free(c);
}

/* ---- IPv6 ---- */

static void
ip6(uint8_t *a, uint8_t last)
{
	static const uint8_t db8[16] = {0x20, 0x01, 0x0d, 0xb8};

	memcpy(a, db8, 16);
	a[15] = last;
}

static void
add_svc6(struct lb_dpconf *c, uint8_t state, uint8_t proto, uint8_t last,
	 uint16_t port)
{
	add_svc(c, state, proto, 0, port);
	c->svc[c->nb_svc - 1].af = LB_CONF_AF_INET6;
	ip6(c->svc[c->nb_svc - 1].vip6, last);
}

/* expect() for IPv6 rules of 2001:db8::/120: each address is its last
 * byte in @p w's addr, any other address none of them. */
static void
expect6(const struct lb_steer_rule6 *got, size_t n, const struct want *w,
	size_t nw)
{
	struct lb_steer_rule g[LB_STEER_SYNC_MAX];
	uint8_t base[16];

	ip6(base, 0);
	assert_true(n <= LB_STEER_SYNC_MAX);
	for (size_t j = 0; j < n; j++) {
		g[j] = (struct lb_steer_rule){
			.addr = memcmp(got[j].addr, base, 15) == 0
					? got[j].addr[15]
					: UINT32_MAX,
			.proto = got[j].proto,
			.port_min = got[j].port_min,
			.port_max = got[j].port_max,
			.kind = got[j].kind,
		};
	}
	expect(g, n, w, nw);
}

/* IPv6 addresses the host does not have: whole; IPv4 services and
 * addresses make no IPv6 rule, removed services keep theirs, empty
 * slots none. */
static void
test_whole6(void **state)
{
	struct lb_dpconf *c = conf_new();
	struct lb_steer_rule6 r[LB_STEER_SYNC_MAX];
	const struct want w[] = {
		{ 1, 0, 0, 0, LB_STEER_KIND_LOCAL },
		{ 2, 0, 0, 0, LB_STEER_KIND_SNAT },
		{ 0x10, 0, 0, 0, LB_STEER_KIND_VIP },
		{ 0x11, 0, 0, 0, LB_STEER_KIND_VIP },
	};
	uint8_t host[1][16];

	(void)state;
	ip6(host[0], 0x50);
	assert_int_equal(lb_steer_rules6_of(c, host, 1, r), 0);
	ip6(c->addr6[c->nb_addr6++].ip, 1);
	ip6(c->snat6[c->nb_snat6++].ip, 2);
	c->addr[c->nb_addr++].ip = LOCAL;
	add_svc(c, LB_SVC_ACTIVE, IPPROTO_TCP, VIP, 80);
	add_svc6(c, LB_SVC_ACTIVE, IPPROTO_TCP, 0x10, 80);
	add_svc6(c, LB_SVC_ACTIVE, IPPROTO_UDP, 0x10, 53);
	add_svc6(c, LB_SVC_DELETED, IPPROTO_TCP, 0x11, 443);
	add_svc6(c, LB_SVC_EMPTY, IPPROTO_TCP, 0x12, 443);
	add_svc6(c, LB_SVC_ACTIVE, IPPROTO_TCP, 1, 8080); /* our addr */
	expect6(r, lb_steer_rules6_of(c, host, 1, r), w, 4);
	free(c);
}

/* IPv6 addresses the host has: services' ports and SNAT ranges. */
static void
test_shared6(void **state)
{
	struct lb_dpconf *c = conf_new();
	struct lb_steer_rule6 r[LB_STEER_SYNC_MAX];
	const struct want w[] = {
		{ 0x50, IPPROTO_TCP, 443, 443, LB_STEER_KIND_VIP },
		{ 2, IPPROTO_TCP, LB_SNAT_PORT_MIN_DEFAULT,
		  LB_SNAT_PORT_MAX_DEFAULT, LB_STEER_KIND_SNAT },
		{ 2, IPPROTO_UDP, LB_SNAT_PORT_MIN_DEFAULT,
		  LB_SNAT_PORT_MAX_DEFAULT, LB_STEER_KIND_SNAT },
		{ 0x10, 0, 0, 0, LB_STEER_KIND_VIP },
	};
	uint8_t host[3][16];

	(void)state;
	ip6(host[0], 0x50);
	ip6(host[1], 2);
	ip6(host[2], 1);
	ip6(c->addr6[c->nb_addr6++].ip, 1);
	ip6(c->snat6[c->nb_snat6++].ip, 2);
	add_svc6(c, LB_SVC_ACTIVE, IPPROTO_TCP, 0x50, 443);
	add_svc6(c, LB_SVC_ACTIVE, IPPROTO_TCP, 0x50, 443); /* twice */
	add_svc6(c, LB_SVC_ACTIVE, IPPROTO_TCP, 0x10, 80);
	expect6(r, lb_steer_rules6_of(c, host, 3, r), w, 4);
	free(c);
}

/* The largest IPv6 table fits too. */
static void
test_full6(void **state)
{
	struct lb_dpconf *c = conf_new();
	struct lb_steer_rule6 r[LB_STEER_SYNC_MAX];
	uint8_t host[LB_CONF_MAX_SNATS][16];

	(void)state;
	for (uint32_t i = 0; i < LB_CONF_MAX_ADDRS; i++) {
		ip6(c->addr6[c->nb_addr6++].ip, 0);
		c->addr6[i].ip[13] = 1;
		c->addr6[i].ip[14] = (uint8_t)(i >> 8);
		c->addr6[i].ip[15] = (uint8_t)i;
	}
	for (uint32_t i = 0; i < LB_CONF_MAX_SNATS; i++) {
		ip6(c->snat6[c->nb_snat6++].ip, 0);
		c->snat6[i].ip[13] = 2;
		c->snat6[i].ip[14] = (uint8_t)(i >> 8);
		c->snat6[i].ip[15] = (uint8_t)i;
		memcpy(host[i], c->snat6[i].ip, 16);
	}
	for (uint32_t i = 0; i < LB_CONF_MAX_SVCS; i++) {
		add_svc6(c, LB_SVC_ACTIVE, IPPROTO_TCP, 0, 80);
		c->svc[i].vip6[13] = 3;
		c->svc[i].vip6[14] = (uint8_t)(i >> 8);
		c->svc[i].vip6[15] = (uint8_t)i;
	}
	assert_int_equal(lb_steer_rules6_of(c, host, LB_CONF_MAX_SNATS, r),
			 LB_STEER_SYNC_MAX);
	free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_whole),
		cmocka_unit_test(test_shared),
		cmocka_unit_test(test_states),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_whole6),
		cmocka_unit_test(test_shared6),
		cmocka_unit_test(test_full6),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
