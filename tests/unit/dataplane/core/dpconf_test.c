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
		cmocka_unit_test(test_sched_registry),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
