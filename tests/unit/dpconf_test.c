/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "lb/cmd.h"
#include "lb/conf.h"
#include "lb/dpconf.h"

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

static struct lb_dpconf *
build(void)
{
	struct lb_conf *c = lb_conf_create(known);
	struct lb_cmd_reg *r = lb_cmd_reg_create();
	struct lb_dpconf *d = malloc(sizeof(*d));
	struct lb_cmd_out o;
	char err[128];

	assert_non_null(c);
	assert_non_null(r);
	assert_non_null(d);
	assert_int_equal(lb_conf_register(c, r), 0);
	lb_cmd_out_init(&o);
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		if (lb_cmd_exec_line(r, lines[i], &o) != 0)
			fail_msg("%s: %s", lines[i], lb_cmd_out_errmsg(&o));
	assert_int_equal(lb_dpconf_build(d, c, err, sizeof(err)), 0);
	lb_cmd_out_free(&o);
	lb_cmd_reg_free(r);
	lb_conf_free(c);
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
	assert_string_equal(d->svc[s].sched->name, "rr");
	assert_int_equal(d->svc[s].nb_be, 2);
	assert_int_equal(d->svc[s].be[0].ip, ip("10.12.0.11"));
	assert_int_equal(d->svc[s].be[0].port, htons(80));
	assert_false(d->svc[s].be[0].draining);
	assert_int_equal(d->svc[s].be[1].port, htons(8080));
	assert_int_equal(d->svc[s].be[1].weight, 3);
	assert_true(d->svc[s].be[1].draining);

	s = lb_dpconf_svc_find(d, 17, ip("10.11.0.100"), htons(53));
	assert_true(s >= 0);
	assert_string_equal(d->svc[s].sched->name, "adaptive");
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
	assert_int_equal(lb_dpconf_snat_find(d, ip("10.12.0.2")), 1);
	assert_int_equal(lb_dpconf_snat_find(d, ip("10.12.0.3")),
			 LB_DPCONF_NONE);
	free(d);
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_services),
		cmocka_unit_test(test_addresses),
		cmocka_unit_test(test_next_hop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
