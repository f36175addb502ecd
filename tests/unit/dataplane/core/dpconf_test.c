/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lb/cmd.h"
#include "lb/conf.h"
#include "lb/dpconf.h"
#include "lb/sched.h"
#include "route_rules.h"

static const char *const lines[] = {
	"addr add 10.11.0.1/24 port 0",
	"addr add 10.12.0.1/24 port 1",
	"snat add 10.12.0.1 port 1",
	"snat add 10.12.0.2 port 1",
	"route add default via 10.11.0.254 port 0",
	"route add 172.16.0.0/12 via 10.12.0.254 port 1",
	"route add 172.16.5.0/24 via 10.11.0.253 port 0",
	"service add tcp 10.11.0.100:80 sched rr",
	"backend add tcp 10.11.0.100:80 10.12.0.11:80",
	"backend add tcp 10.11.0.100:80 10.12.0.12:8080 weight 3",
	"backend drain tcp 10.11.0.100:80 10.12.0.12:8080",
	"service add udp 10.11.0.100:53",
	"backend add udp 10.11.0.100:53 10.12.0.21:53",
	"service add tcp 192.0.2.1:443 sched maglev",
};

static uint32_t
ip(const char *s)
{
	struct in_addr a;

	assert_int_equal(inet_pton(AF_INET, s, &a), 1);
	return a.s_addr;
}

static int
known(const char *name)
{
	return lb_sched_find(name) != NULL;
}

/* A configuration being edited, and the tables compiled from it. */
struct fx {
	struct lb_conf *c;
	struct lb_cmd_reg *r;
	struct lb_cmd_out o;
	/* busy[svc][be]; be LB_CONF_MAX_BES stands for the service */
	bool busy[LB_CONF_MAX_SVCS][LB_CONF_MAX_BES + 1];
};

static void
run(struct fx *f, const char *line)
{
	if (lb_cmd_exec_line(f->r, line, &f->o) != 0)
		fail_msg("%s: %s", line, lb_cmd_out_errmsg(&f->o));
}

static struct fx *
fx_new(void)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->c = lb_conf_create(known);
	f->r = lb_cmd_reg_create();
	assert_non_null(f->c);
	assert_non_null(f->r);
	assert_int_equal(lb_conf_register(f->c, f->r), 0);
	lb_cmd_out_init(&f->o);
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		run(f, lines[i]);
	return f;
}

static void
fx_free(struct fx *f)
{
	lb_cmd_out_free(&f->o);
	lb_cmd_reg_free(f->r);
	lb_conf_free(f->c);
	free(f);
}

static bool
busy(void *ctx, uint32_t svc, uint32_t be)
{
	struct fx *f = ctx;

	return f->busy[svc][be == UINT32_MAX ? LB_CONF_MAX_BES : be];
}

static struct lb_dpconf *
compile(struct fx *f, const struct lb_dpconf *prev)
{
	struct lb_dpconf *d = malloc(sizeof(*d));
	char err[128];

	assert_non_null(d);
	if (lb_dpconf_compile(d, f->c, prev, busy, f, err, sizeof(err)) != 0)
		fail_msg("compile: %s", err);
	return d;
}

static struct lb_dpconf *
build(void)
{
	struct fx *f = fx_new();
	struct lb_dpconf *d = compile(f, NULL);

	fx_free(f);
	return d;
}

static void
test_services(void **state)
{
	struct lb_dpconf *d = build();
	int s;

	(void)state;
	assert_int_equal(d->nb_svc, 3);
	s = lb_dpconf_svc_find(d, 6, ip("10.11.0.100"), htons(80));
	assert_true(s >= 0);
	assert_string_equal(d->svc[s].opts.sched, "rr");
	assert_int_equal(d->svc[s].state, LB_SVC_ACTIVE);
	assert_int_equal(d->svc[s].nb_be, 2);
	assert_int_equal(d->svc[s].be[0].ip, ip("10.12.0.11"));
	assert_int_equal(d->svc[s].be[0].port, htons(80));
	assert_int_equal(d->svc[s].be[0].state, LB_BE_ACTIVE);
	assert_true(lb_dpconf_be_eligible(&d->svc[s], 0));
	assert_int_equal(d->svc[s].be[1].port, htons(8080));
	assert_int_equal(d->svc[s].be[1].weight, 3);
	assert_int_equal(d->svc[s].be[1].state, LB_BE_DRAINING);
	assert_false(lb_dpconf_be_eligible(&d->svc[s], 1));
	assert_false(lb_dpconf_be_eligible(&d->svc[s], 2));
	assert_int_equal(d->gen, 1);

	s = lb_dpconf_svc_find(d, 17, ip("10.11.0.100"), htons(53));
	assert_true(s >= 0);
	assert_string_equal(d->svc[s].opts.sched, "adaptive");
	assert_true(lb_dpconf_svc_find(d, 6, ip("192.0.2.1"), htons(443)) >=
		    0);
	/* protocol, address and port must all match */
	assert_int_equal(lb_dpconf_svc_find(d, 17, ip("10.11.0.100"),
					    htons(80)),
			 LB_DPCONF_NONE);
	assert_int_equal(lb_dpconf_svc_find(d, 6, ip("10.11.0.101"),
					    htons(80)),
			 LB_DPCONF_NONE);
	assert_int_equal(lb_dpconf_svc_find(d, 6, ip("10.11.0.100"),
					    htons(81)),
			 LB_DPCONF_NONE);
	free(d);
}

static void
test_addresses(void **state)
{
	struct lb_dpconf *d = build();
	static const struct {
		const char *ip;
		uint16_t port;
		bool ours;
	} rows[] = {
		{ "10.11.0.1", 0, true },    /* local address, its port */
		{ "10.11.0.1", 1, false },   /* ... not on the other port */
		{ "10.12.0.2", 1, true },    /* SNAT address */
		{ "10.12.0.1", 1, true },    /* local and SNAT */
		{ "10.11.0.100", 0, true },  /* VIP in port 0's subnet */
		{ "10.11.0.100", 1, false }, /* ... not answered on port 1 */
		{ "192.0.2.1", 0, true },    /* routed VIP: any port */
		{ "192.0.2.1", 1, true },
		{ "10.11.0.7", 0, false },
		{ "10.12.0.11", 1, false },  /* a backend */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (lb_dpconf_is_ours(d, ip(rows[i].ip), rows[i].port) !=
		    rows[i].ours)
			fail_msg("%s port %u", rows[i].ip, rows[i].port);
	/* Own on any port: what no packet from outside may come from. */
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		bool own = lb_dpconf_is_own(d, ip(rows[i].ip));
		bool want = strcmp(rows[i].ip, "10.11.0.7") != 0 &&
			    strcmp(rows[i].ip, "10.12.0.11") != 0;

		if (own != want)
			fail_msg("%s: own %d, want %d", rows[i].ip, own, want);
	}
	assert_false(lb_dpconf_is_own(d, ip("10.12.0.3")));
	assert_int_equal(lb_dpconf_snat_find(d, ip("10.12.0.2")), 1);
	assert_int_equal(lb_dpconf_snat_find(d, ip("10.12.0.3")),
			 LB_DPCONF_NONE);
	free(d);
}

/* Each port's VLAN comes from its addresses; ports without any are
 * untagged. */
static void
test_port_vlan(void **state)
{
	struct fx *f = fx_new();
	struct lb_dpconf *d;

	(void)state;
	run(f, "addr add 10.13.0.1/24 port 2 vlan 20");
	run(f, "addr add 10.13.1.1/24 port 2 vlan 20");
	run(f, "addr add 10.14.0.1/24 port 31 vlan 4094");
	d = compile(f, NULL);
	for (uint32_t p = 0; p <= LB_CONF_PORT_MAX; p++) {
		uint16_t want = p == 2 ? 20 : p == 31 ? 4094 : 0;

		if (d->port_vlan[p] != want)
			fail_msg("port %u: vlan %u, want %u", p,
				 d->port_vlan[p], want);
	}
	free(d);
	fx_free(f);
}

static void
test_next_hop(void **state)
{
	struct lb_dpconf *d = build();
	static const struct {
		const char *dst;
		int rc;
		uint16_t port;
		const char *nh;
		const char *src;
	} rows[] = {
		{ "10.11.0.2", 0, 0, "10.11.0.2", "10.11.0.1" },
		{ "10.12.0.11", 0, 1, "10.12.0.11", "10.12.0.1" },
		{ "8.8.8.8", 0, 0, "10.11.0.254", "10.11.0.1" },
		{ "172.20.0.1", 0, 1, "10.12.0.254", "10.12.0.1" },
		/* the longer prefix wins over the /12 */
		{ "172.16.5.9", 0, 0, "10.11.0.253", "10.11.0.1" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint16_t port = 99;
		uint32_t nh = 0, src = 0;

		assert_int_equal(lb_dpconf_next_hop(d, ip(rows[i].dst), &port,
						    &nh, &src),
				 rows[i].rc);
		assert_int_equal(port, rows[i].port);
		assert_int_equal(nh, ip(rows[i].nh));
		assert_int_equal(src, ip(rows[i].src));
	}
	/* Without a default route, an address outside every subnet and
	 * route is unreachable. */
	d->nb_route = 0;
	{
		uint16_t port;
		uint32_t nh, src;

		assert_int_equal(lb_dpconf_next_hop(d, ip("8.8.8.8"), &port,
						    &nh, &src),
				 -ENETUNREACH);
	}
	free(d);
}

static int
slot_of(const struct lb_dpconf *d, const char *vip, uint16_t port)
{
	return lb_dpconf_svc_find(d, 6, ip(vip), htons(port));
}

/* Flow entries and counters refer to slots: a service and a backend keep
 * theirs across tables, and a deleted one keeps it while flows use it. */
static void
test_stable_slots(void **state)
{
	struct fx *f = fx_new();
	struct lb_dpconf *d1, *d2, *d3, *d4;
	int web, web2;

	(void)state;
	d1 = compile(f, NULL);
	web = slot_of(d1, "10.11.0.100", 80);
	assert_true(web >= 0);

	/* up_gen (lb-control's count of health returns) goes from table
	 * to table with its backend, and not to one taking its slot */
	d1->svc[web].be[0].up_gen = 5;
	d1->svc[web].be[1].up_gen = 7;

	/* backend 0 deleted while it still has flows; a new one added */
	f->busy[web][0] = true;
	run(f, "backend del tcp 10.11.0.100:80 10.12.0.11:80");
	run(f, "backend add tcp 10.11.0.100:80 10.12.0.13:80");
	d2 = compile(f, d1);
	assert_int_equal(d2->gen, 2);
	assert_int_equal(slot_of(d2, "10.11.0.100", 80), web);
	assert_int_equal(d2->svc[web].be[0].state, LB_BE_REMOVED);
	assert_false(lb_dpconf_be_eligible(&d2->svc[web], 0));
	assert_int_equal(d2->svc[web].be[1].port, htons(8080));
	assert_int_equal(d2->svc[web].be[2].ip, ip("10.12.0.13"));
	assert_int_equal(d2->svc[web].be[2].state, LB_BE_ACTIVE);
	assert_int_equal(d2->svc[web].nb_be, 3);
	assert_int_equal(d2->svc[web].be[1].up_gen, 7);
	assert_int_equal(d2->svc[web].be[2].up_gen, 0);

	/* flows gone: the slot is free for the next newcomer */
	f->busy[web][0] = false;
	run(f, "backend add tcp 10.11.0.100:80 10.12.0.14:80");
	d3 = compile(f, d2);
	assert_int_equal(d3->svc[web].be[0].ip, ip("10.12.0.14"));
	assert_int_equal(d3->svc[web].be[0].state, LB_BE_ACTIVE);
	assert_int_equal(d3->svc[web].be[0].up_gen, 0);
	assert_int_equal(d3->svc[web].be[1].up_gen, 7);
	assert_int_equal(d3->svc[web].be[2].ip, ip("10.12.0.13"));

	/* a deleted service with flows leaves the lookup, keeps its slot;
	 * a new service takes another one */
	f->busy[web][LB_CONF_MAX_BES] = true;
	run(f, "service del tcp 10.11.0.100:80");
	run(f, "service add tcp 10.11.0.100:8080");
	d4 = compile(f, d3);
	assert_int_equal(slot_of(d4, "10.11.0.100", 80), LB_DPCONF_NONE);
	assert_int_equal(d4->svc[web].state, LB_SVC_DELETED);
	assert_int_equal(d4->svc[web].be[0].ip, ip("10.12.0.14"));
	web2 = slot_of(d4, "10.11.0.100", 8080);
	assert_true(web2 >= 0 && web2 != web);
	/* its VIP no longer counts as ours for the deleted service alone,
	 * but the new service on the same VIP keeps it */
	assert_true(lb_dpconf_is_ours(d4, ip("10.11.0.100"), 0));
	free(d1);
	free(d2);
	free(d3);
	free(d4);
	fx_free(f);
}

/* The SNAT addresses still in use, for lb_dpconf_snat_keep(). */
static uint32_t snat_inuse[2];

static bool
snat_busy(void *ctx, uint32_t a)
{
	(void)ctx;
	return a != 0 && (a == snat_inuse[0] || a == snat_inuse[1]);
}

/* A removed SNAT address stays, draining, while flows use it; then it is
 * collected; added back, it is active again. */
static void
test_snat_drain(void **state)
{
	struct fx *f = fx_new();
	struct lb_dpconf *d1, *d2, *d3, *d4;
	int i;

	(void)state;
	d1 = compile(f, NULL);
	assert_int_equal(lb_dpconf_snat_keep(d1, NULL, snat_busy, NULL), 0);
	snat_inuse[0] = ip("10.12.0.2");
	run(f, "snat del 10.12.0.2");
	run(f, "snat add 10.12.0.3 port 1");
	d2 = compile(f, d1);
	assert_int_equal(lb_dpconf_snat_keep(d2, d1, snat_busy, NULL), 1);
	assert_int_equal(d2->nb_snat, 3);
	i = lb_dpconf_snat_find(d2, ip("10.12.0.2"));
	assert_true(i >= 0);
	assert_int_equal(d2->snat[i].draining, 1);
	assert_int_equal(d2->snat[i].port, 1);
	assert_int_equal(d2->snat[lb_dpconf_snat_find(d2, ip("10.12.0.3"))]
				 .draining,
			 0);
	/* still ours for ARP on its port while it drains */
	assert_true(lb_dpconf_is_ours(d2, ip("10.12.0.2"), 1));
	assert_false(lb_dpconf_snat_gc_due(d2, snat_busy, NULL));
	/* kept across the next tables while busy */
	d3 = compile(f, d2);
	assert_int_equal(lb_dpconf_snat_keep(d3, d2, snat_busy, NULL), 1);
	/* flows gone: due for collection, and the next table drops it */
	snat_inuse[0] = 0;
	assert_true(lb_dpconf_snat_gc_due(d3, snat_busy, NULL));
	free(d2);
	d2 = compile(f, d3);
	assert_int_equal(lb_dpconf_snat_keep(d2, d3, snat_busy, NULL), 0);
	assert_int_equal(lb_dpconf_snat_find(d2, ip("10.12.0.2")),
			 LB_DPCONF_NONE);
	assert_false(lb_dpconf_snat_gc_due(d2, snat_busy, NULL));
	/* removed and added back at once: active, not kept twice */
	snat_inuse[0] = ip("10.12.0.3");
	run(f, "snat del 10.12.0.3");
	run(f, "snat add 10.12.0.3 port 1");
	d4 = compile(f, d2);
	assert_int_equal(lb_dpconf_snat_keep(d4, d2, snat_busy, NULL), 0);
	assert_int_equal(d4->snat[lb_dpconf_snat_find(d4, ip("10.12.0.3"))]
				 .draining,
			 0);
	snat_inuse[0] = 0;
	free(d1);
	free(d2);
	free(d3);
	free(d4);
	fx_free(f);
}

/* ---- IPv6 beside IPv4 ---- */

/* The lines of an IPv6 half, added to the IPv4 site of lines[]. */
static const char *const lines6[] = {
	"addr add 2001:db8:b::1/64 port 0",
	"addr add 2001:db8:c::1/64 port 1",
	"snat add 2001:db8:c::1 port 1",
	"snat add 2001:db8:c::2 port 1",
	"route add ::/0 via 2001:db8:b::fe port 0",
	"route add 2001:db8:100::/40 via 2001:db8:c::fe port 1",
	"route add 2001:db8:100:5::/64 via 2001:db8:b::fd port 0",
	"service add tcp [2001:db8:b::100]:80 sched rr",
	"backend add tcp [2001:db8:b::100]:80 [2001:db8:c::11]:80",
	"backend add tcp [2001:db8:b::100]:80 [2001:db8:c::31]:8080 weight 3",
	"backend drain tcp [2001:db8:b::100]:80 [2001:db8:c::31]:8080",
	"service add udp [2001:db8:b::100]:53",
	"backend add udp [2001:db8:b::100]:53 [2001:db8:c::21]:53",
};

static void
ip6(const char *s, uint8_t *out)
{
	assert_int_equal(inet_pton(AF_INET6, s, out), 1);
}

static struct fx *
fx_dual(void)
{
	struct fx *f = fx_new();

	for (size_t i = 0; i < sizeof(lines6) / sizeof(lines6[0]); i++)
		run(f, lines6[i]);
	return f;
}

/* The slot of IPv6 service @p proto [@p vip]:@p port in svc[], or -1. */
static int
slot6_of(const struct lb_dpconf *d, uint8_t proto, const char *vip,
	 uint16_t port)
{
	uint8_t a[16];

	ip6(vip, a);
	for (uint32_t i = 0; i < d->nb_svc; i++)
		if (d->svc[i].state == LB_SVC_ACTIVE &&
		    d->svc[i].af == LB_CONF_AF_INET6 &&
		    d->svc[i].proto == proto &&
		    d->svc[i].vport == htons(port) &&
		    memcmp(d->svc[i].vip6, a, 16) == 0)
			return (int)i;
	return -1;
}

/*
 * An IPv6 half beside the IPv4 site: IPv4's arrays and lookup exactly
 * as without it, IPv6 addresses, SNAT addresses and routes (longest
 * first) in their own arrays, IPv6 services in svc[] but not in slot[],
 * backends of either family.
 */
static void
test_ip6_compile(void **state)
{
	struct fx *f4 = fx_new(), *f = fx_dual();
	struct lb_dpconf *d4 = compile(f4, NULL), *d = compile(f, NULL);
	uint8_t a[16];
	uint32_t in_slot = 0;
	int s, u;

	(void)state;
	/* IPv4 as it was. */
	assert_int_equal(d->nb_addr, d4->nb_addr);
	assert_memory_equal(d->addr, d4->addr, sizeof(d->addr));
	assert_int_equal(d->nb_snat, d4->nb_snat);
	assert_memory_equal(d->snat, d4->snat, sizeof(d->snat));
	assert_int_equal(d->nb_route, d4->nb_route);
	assert_memory_equal(d->route, d4->route, sizeof(d->route));
	assert_memory_equal(d->port_vlan, d4->port_vlan,
			    sizeof(d->port_vlan));
	for (uint32_t i = 0; i < d4->nb_svc; i++) {
		const struct lb_dpconf_svc *v = &d4->svc[i];
		int k = lb_dpconf_svc_find(d, v->proto, v->vip, v->vport);

		assert_true(k >= 0);
		assert_int_equal(d->svc[k].af, LB_CONF_AF_INET);
		assert_int_equal(d->svc[k].nb_be, v->nb_be);
		assert_memory_equal(d->svc[k].be, v->be,
				    v->nb_be * sizeof(v->be[0]));
	}
	assert_int_equal(d4->nb_addr6 + d4->nb_snat6 + d4->nb_route6, 0);

	/* IPv6 addresses. */
	assert_int_equal(d->nb_addr6, 2);
	ip6("2001:db8:b::1", a);
	assert_memory_equal(d->addr6[0].ip, a, 16);
	assert_int_equal(d->addr6[0].len, 64);
	assert_int_equal(d->addr6[0].port, 0);
	assert_int_equal(d->addr6[0].draining, 0);
	assert_int_equal(d->addr6[1].port, 1);
	assert_int_equal(d->nb_snat6, 2);
	ip6("2001:db8:c::2", a);
	assert_memory_equal(d->snat6[1].ip, a, 16);
	assert_int_equal(d->snat6[1].len, 128);
	assert_int_equal(d->snat6[1].port, 1);
	assert_int_equal(d->snat6[1].draining, 0);
	/* Longest prefix first: /64, /40, /0. */
	assert_int_equal(d->nb_route6, 3);
	assert_int_equal(d->route6[0].len, 64);
	ip6("2001:db8:100:5::", a);
	assert_memory_equal(d->route6[0].net, a, 16);
	ip6("2001:db8:b::fd", a);
	assert_memory_equal(d->route6[0].gw, a, 16);
	assert_int_equal(d->route6[0].port, 0);
	assert_int_equal(d->route6[1].len, 40);
	assert_int_equal(d->route6[1].port, 1);
	assert_int_equal(d->route6[2].len, 0);
	ip6("::", a);
	assert_memory_equal(d->route6[2].net, a, 16);
	ip6("2001:db8:b::fe", a);
	assert_memory_equal(d->route6[2].gw, a, 16);

	/* IPv6 services: in svc[], vip 0, out of the IPv4 lookup. */
	assert_int_equal(d->nb_svc, 5);
	s = slot6_of(d, 6, "2001:db8:b::100", 80);
	u = slot6_of(d, 17, "2001:db8:b::100", 53);
	assert_true(s >= 0 && u >= 0 && s != u);
	assert_int_equal(d->svc[s].vip, 0);
	assert_int_equal(d->svc[s].state, LB_SVC_ACTIVE);
	assert_string_equal(d->svc[s].opts.sched, "rr");
	for (uint32_t i = 0; i < LB_DPCONF_SVC_SLOTS; i++) {
		if (d->slot[i] < 0)
			continue;
		assert_int_not_equal(d->slot[i], s);
		assert_int_not_equal(d->slot[i], u);
		in_slot++;
	}
	assert_int_equal(in_slot, 3);
	assert_int_equal(lb_dpconf_svc_find(d, 6, 0, htons(80)),
			 LB_DPCONF_NONE);
	assert_false(lb_dpconf_is_own(d, 0));
	assert_false(lb_dpconf_is_ours(d, 0, 0));
	assert_int_equal(lb_dpconf_svc_find(d, 17, 0, htons(53)),
			 LB_DPCONF_NONE);
	/* Two fnat66 backends, one draining. */
	assert_int_equal(d->svc[s].nb_be, 2);
	assert_int_equal(d->svc[s].be[0].af, LB_CONF_AF_INET6);
	ip6("2001:db8:c::11", a);
	assert_memory_equal(d->svc[s].be[0].ip6, a, 16);
	assert_int_equal(d->svc[s].be[0].ip, 0);
	assert_int_equal(d->svc[s].be[0].port, htons(80));
	assert_true(lb_dpconf_be_eligible(&d->svc[s], 0));
	assert_int_equal(d->svc[s].be[1].af, LB_CONF_AF_INET6);
	assert_int_equal(d->svc[s].be[1].ip, 0);
	ip6("2001:db8:c::31", a);
	assert_memory_equal(d->svc[s].be[1].ip6, a, 16);
	assert_int_equal(d->svc[s].be[1].port, htons(8080));
	assert_int_equal(d->svc[s].be[1].weight, 3);
	assert_int_equal(d->svc[s].be[1].state, LB_BE_DRAINING);
	free(d4);
	free(d);
	fx_free(f4);
	fx_free(f);
}

/*
 * Slots and indexes kept across tables match by family and address: a
 * deleted IPv6 service that still has flows keeps its slot from a new
 * one on another address, and a new backend does not take the index of
 * an IPv6 one removed with flows, whose last 32 bits spell an IPv4
 * address.
 */
static void
test_ip6_stable_slots(void **state)
{
	struct fx *f = fx_dual();
	struct lb_dpconf *d1, *d2, *d3;
	int web, dns, web2;

	(void)state;
	run(f, "backend add tcp [2001:db8:b::100]:80 [::a0c:29]:80");
	d1 = compile(f, NULL);
	web = slot6_of(d1, 6, "2001:db8:b::100", 80);
	dns = slot6_of(d1, 17, "2001:db8:b::100", 53);
	assert_true(web >= 0 && dns >= 0);
	assert_int_equal(d1->svc[web].be[2].af, LB_CONF_AF_INET6);
	d1->svc[web].be[0].up_gen = 4;

	/* [::a0c:29]:80 leaves with flows, [2001:db8:c::41]:80 comes. */
	f->busy[web][2] = true;
	run(f, "backend del tcp [2001:db8:b::100]:80 [::a0c:29]:80");
	run(f, "backend add tcp [2001:db8:b::100]:80 [2001:db8:c::41]:80");
	d2 = compile(f, d1);
	assert_int_equal(slot6_of(d2, 6, "2001:db8:b::100", 80), web);
	assert_int_equal(slot6_of(d2, 17, "2001:db8:b::100", 53), dns);
	assert_int_equal(d2->svc[web].be[0].up_gen, 4);
	assert_int_equal(d2->svc[web].be[2].state, LB_BE_REMOVED);
	assert_int_equal(d2->svc[web].be[2].af, LB_CONF_AF_INET6);
	assert_int_equal(d2->svc[web].be[3].af, LB_CONF_AF_INET6);
	assert_int_equal(d2->svc[web].be[3].ip, 0);
	assert_int_equal(d2->svc[web].be[3].ip6[15], 0x41);
	assert_int_equal(d2->svc[web].nb_be, 4);

	/* The IPv6 service deleted with flows, one on another address. */
	f->busy[web][LB_CONF_MAX_BES] = true;
	run(f, "service del tcp [2001:db8:b::100]:80");
	run(f, "service add tcp [2001:db8:b::101]:80");
	d3 = compile(f, d2);
	assert_int_equal(d3->svc[web].state, LB_SVC_DELETED);
	assert_int_equal(d3->svc[web].af, LB_CONF_AF_INET6);
	assert_int_equal(slot6_of(d3, 6, "2001:db8:b::100", 80), -1);
	web2 = slot6_of(d3, 6, "2001:db8:b::101", 80);
	assert_true(web2 >= 0 && web2 != web);
	assert_int_equal(slot6_of(d3, 17, "2001:db8:b::100", 53), dns);
	for (uint32_t i = 0; i < LB_DPCONF_SVC_SLOTS; i++)
		assert_true(d3->slot[i] != web2 && d3->slot[i] != dns);
	free(d1);
	free(d2);
	free(d3);
	fx_free(f);
}

static uint8_t snat6_inuse[16];

static bool
snat6_busy(void *ctx, const uint8_t *a)
{
	static const uint8_t zero[16];

	(void)ctx;
	return memcmp(snat6_inuse, zero, 16) != 0 &&
	       memcmp(a, snat6_inuse, 16) == 0;
}

/* IPv6 SNAT addresses drain as IPv4 ones do, in snat6[]. */
static void
test_ip6_snat_drain(void **state)
{
	struct fx *f = fx_dual();
	struct lb_dpconf *d1, *d2, *d3;
	uint8_t a[16];
	uint32_t nb4;

	(void)state;
	d1 = compile(f, NULL);
	nb4 = d1->nb_snat;
	assert_int_equal(lb_dpconf_snat6_keep(d1, NULL, snat6_busy, NULL), 0);
	ip6("2001:db8:c::2", snat6_inuse);
	run(f, "snat del 2001:db8:c::2");
	run(f, "snat add 2001:db8:c::3 port 1");
	d2 = compile(f, d1);
	assert_int_equal(lb_dpconf_snat6_keep(d2, d1, snat6_busy, NULL), 1);
	assert_int_equal(d2->nb_snat6, 3);
	assert_int_equal(d2->nb_snat, nb4);
	memcpy(a, snat6_inuse, 16);
	assert_memory_equal(d2->snat6[2].ip, a, 16);
	assert_int_equal(d2->snat6[2].draining, 1);
	assert_int_equal(d2->snat6[2].port, 1);
	assert_int_equal(d2->snat6[2].len, 128);
	assert_int_equal(d2->snat6[1].draining, 0);
	assert_false(lb_dpconf_snat6_gc_due(d2, snat6_busy, NULL));
	/* The IPv4 keep leaves snat6[] alone. */
	assert_int_equal(lb_dpconf_snat_keep(d2, d1, snat_busy, NULL), 0);
	assert_int_equal(d2->nb_snat6, 3);
	memset(snat6_inuse, 0, 16);
	assert_true(lb_dpconf_snat6_gc_due(d2, snat6_busy, NULL));
	d3 = compile(f, d2);
	assert_int_equal(lb_dpconf_snat6_keep(d3, d2, snat6_busy, NULL), 0);
	assert_int_equal(d3->nb_snat6, 2);
	assert_false(lb_dpconf_snat6_gc_due(d3, snat6_busy, NULL));
	free(d1);
	free(d2);
	free(d3);
	fx_free(f);
}

/*
 * The dataplane's schedulers are the ones dataplane/sched/ registers, no
 * more: `first`, which only sched_test links, is unknown here, and the
 * error lists the registry. docs/policies.md documents the same set.
 */
static void
test_sched_registry(void **state)
{
	const struct lb_sched_ops *all[LB_SCHED_MAX];
	unsigned int n = lb_sched_list(all, LB_SCHED_MAX);
	struct lb_conf *c = lb_conf_create(NULL);
	struct lb_cmd_reg *r = lb_cmd_reg_create();
	struct lb_dpconf *d = malloc(sizeof(*d));
	char path[512], line[512], err[160];
	unsigned int rows = 0;
	struct lb_cmd_out o;
	const char *src = getenv("LB_SRC_DIR");
	bool in_table = false;
	FILE *f;

	(void)state;
	assert_non_null(c);
	assert_non_null(r);
	assert_non_null(d);
	assert_int_equal(n, 4);
	assert_null(lb_sched_find("first"));
	lb_cmd_out_init(&o);
	assert_int_equal(lb_conf_register(c, r), 0);
	assert_int_equal(lb_cmd_exec_line(r,
					  "service add tcp 10.0.0.1:80 "
					  "sched first",
					  &o),
			 0);
	assert_int_equal(lb_dpconf_build(d, c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "unknown scheduler 'first'; expected one of "
				 "adaptive, maglev, rr, wrr");

	/* Rows of the schedulers' table: "| `name` ...". */
	assert_non_null(src);
	snprintf(path, sizeof(path), "%s/docs/policies.md", src);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		char name[LB_SCHED_NAME_MAX + 1];

		if (strncmp(line, "## Schedulers (`sched`)", 23) == 0)
			in_table = true;
		else if (in_table && strncmp(line, "## ", 3) == 0)
			break;
		if (!in_table || sscanf(line, "| `%16[a-z0-9_-]`", name) != 1)
			continue;
		if (lb_sched_find(name) == NULL)
			fail_msg("docs/policies.md: `%s` is not registered",
				 name);
		rows++;
	}
	fclose(f);
	assert_int_equal(rows, n);

	lb_cmd_out_free(&o);
	lb_cmd_reg_free(r);
	lb_conf_free(c);
	free(d);
}

/*
 * Pools in the table: each backend carries its pool, each pool its name,
 * scheduler, members and weights, the rules are compiled; only the
 * service's own pool takes new flows. A service without pools has one
 * pool, all its backends in it, and no rules.
 */
static void
test_pools(void **state)
{
	static const char *const more[] = {
		"service add tcp 10.11.0.101:443 synproxy on",
		"pool add tcp 10.11.0.101:443 api sched rr",
		"pool add tcp 10.11.0.101:443 tls",
		"backend add tcp 10.11.0.101:443 10.12.0.31:443",
		"backend add tcp 10.11.0.101:443 10.12.0.32:443 pool api "
		"weight 4",
		"backend add tcp 10.11.0.101:443 10.12.0.33:443 pool api",
		"backend add tcp 10.11.0.101:443 10.12.0.34:443 pool tls",
		"rule add tcp 10.11.0.101:443 sni a.example pool tls",
		"rule add tcp 10.11.0.101:443 host a.example pool api",
		"rule default tcp 10.11.0.101:443 refuse 404",
	};
	struct fx *f = fx_new();
	struct lb_dpconf *d, *d2;
	const struct lb_dpconf_svc *v;
	const struct lb_dpconf_pools *rt;
	int s;

	(void)state;
	for (size_t i = 0; i < sizeof(more) / sizeof(more[0]); i++)
		run(f, more[i]);
	d = compile(f, NULL);
	s = lb_dpconf_svc_find(d, 6, ip("10.11.0.100"), htons(80));
	v = &d->svc[s];
	rt = &d->pools[s];
	assert_int_equal(rt->nb_pool, 1);
	assert_string_equal(rt->pool[0].name, "default");
	assert_string_equal(rt->pool[0].sched, "rr");
	assert_int_equal(rt->pool[0].nb_be, 2);
	assert_int_equal(rt->pool[0].weight_sum, 4);
	assert_int_equal(rt->rules.n, 0);
	assert_int_equal(rt->rules.def.what, LB_ROUTE_POOL);
	assert_int_equal(rt->rules.def.pool, 0);

	s = lb_dpconf_svc_find(d, 6, ip("10.11.0.101"), htons(443));
	assert_true(s >= 0);
	v = &d->svc[s];
	rt = &d->pools[s];
	assert_int_equal(rt->nb_pool, 3);
	assert_string_equal(rt->pool[0].sched, "adaptive");
	assert_string_equal(rt->pool[1].name, "api");
	assert_string_equal(rt->pool[1].sched, "rr");
	assert_string_equal(rt->pool[2].name, "tls");
	assert_int_equal(rt->pool[1].nb_be, 2);
	assert_int_equal(rt->pool[1].weight_sum, 5);
	assert_int_equal(rt->pool[2].nb_be, 1);
	assert_int_equal(v->be[0].pool, 0);
	assert_int_equal(v->be[1].pool, 1);
	assert_int_equal(v->be[2].pool, 1);
	assert_int_equal(v->be[3].pool, 2);
	assert_true(lb_dpconf_be_eligible(v, 0));
	for (uint32_t b = 1; b < 4; b++)
		assert_false(lb_dpconf_be_eligible(v, b));
	/* A connection delayed binding sends to a pool may take its
	 * backends, and those only. */
	for (uint32_t b = 0; b < 4; b++)
		for (uint32_t p = 0; p < 3; p++)
			assert_int_equal(lb_dpconf_be_eligible_pool(v, b, p),
					 v->be[b].pool == p);
	assert_false(lb_dpconf_be_eligible_pool(v, 4, 0));
	assert_int_equal(rt->rules.n, 2);
	assert_int_equal(rt->rules.nb_tls, 1);
	assert_int_equal(rt->rules.act[0].pool, 2);
	assert_int_equal(rt->rules.act[1].pool, 1);
	assert_int_equal(rt->rules.def.what, LB_ROUTE_REFUSE_404);

	/* A worker's copy holds the backends' pools and the header
	 * database's fields, not the pools' names nor the rules. */
	assert_true(LB_DPCONF_WORKER_COPY >=
		    offsetof(struct lb_dpconf, hdr_len) + sizeof(d->hdr_len));
	assert_int_equal(LB_DPCONF_WORKER_COPY + sizeof(d->pools),
			 sizeof(struct lb_dpconf));

	/* Deleting a pool moves the later ones down; the backends keep
	 * their slots and follow their pool. */
	run(f, "rule del tcp 10.11.0.101:443 2");
	run(f, "backend del tcp 10.11.0.101:443 10.12.0.32:443");
	run(f, "backend del tcp 10.11.0.101:443 10.12.0.33:443");
	run(f, "pool del tcp 10.11.0.101:443 api");
	d2 = compile(f, d);
	v = &d2->svc[s];
	rt = &d2->pools[s];
	assert_int_equal(rt->nb_pool, 2);
	assert_string_equal(rt->pool[1].name, "tls");
	assert_int_equal(v->be[3].pool, 1);
	assert_int_equal(rt->rules.act[0].pool, 1);
	assert_false(lb_dpconf_be_eligible(v, 3));
	free(d);
	free(d2);
	fx_free(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_services),
		cmocka_unit_test(test_addresses),
		cmocka_unit_test(test_port_vlan),
		cmocka_unit_test(test_next_hop),
		cmocka_unit_test(test_stable_slots),
		cmocka_unit_test(test_snat_drain),
		cmocka_unit_test(test_ip6_compile),
		cmocka_unit_test(test_ip6_stable_slots),
		cmocka_unit_test(test_ip6_snat_drain),
		cmocka_unit_test(test_sched_registry),
		cmocka_unit_test(test_pools),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
