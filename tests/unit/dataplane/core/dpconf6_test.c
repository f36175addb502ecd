/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dpconf6.h"

static void
ip6(uint8_t out[16], const char *s)
{
	assert_int_equal(inet_pton(AF_INET6, s, out), 1);
}

static struct lb_dpconf *
table(void)
{
	struct lb_dpconf *d = calloc(1, sizeof(*d));

	assert_non_null(d);
	memset(d->slot, 0xff, sizeof(d->slot));
	/* 2001:db8:1::1/64 on port 0, 2001:db8:2::1/64 on port 1. */
	ip6(d->addr6[0].ip, "2001:db8:1::1");
	d->addr6[0].len = 64;
	ip6(d->addr6[1].ip, "2001:db8:2::1");
	d->addr6[1].len = 64;
	d->addr6[1].port = 1;
	d->nb_addr6 = 2;
	ip6(d->snat6[0].ip, "2001:db8:2::5");
	d->snat6[0].port = 1;
	d->nb_snat6 = 1;
	/* Longest first: 2001:db8:99::/48 via port 1's gateway, default
	 * via port 0's. */
	ip6(d->route6[0].net, "2001:db8:99::");
	d->route6[0].len = 48;
	ip6(d->route6[0].gw, "2001:db8:2::fe");
	d->route6[0].port = 1;
	ip6(d->route6[1].gw, "2001:db8:1::fe");
	d->nb_route6 = 2;
	/* Services: TCP and UDP on one VIP in port 0's prefix, TCP on a
	 * routed VIP, an IPv4 one, a deleted IPv6 one. */
	for (int i = 0; i < 5; i++) {
		d->svc[i].state = LB_SVC_ACTIVE;
		d->svc[i].af = LB_CONF_AF_INET6;
		d->svc[i].proto = 6;
		d->svc[i].vport = htons(443);
	}
	ip6(d->svc[0].vip6, "2001:db8:1::10");
	ip6(d->svc[1].vip6, "2001:db8:1::10");
	d->svc[1].proto = 17;
	ip6(d->svc[2].vip6, "2001:db8:77::1");
	d->svc[3].af = LB_CONF_AF_INET;
	d->svc[3].vip = htonl(0x0a000001);
	ip6(d->svc[4].vip6, "2001:db8:1::20");
	d->svc[4].state = LB_SVC_DELETED;
	d->nb_svc = 5;
	return d;
}

static void
test_svc_index(void **state)
{
	struct lb_dpconf *d = table();
	struct lb_dpconf6_svc_index ix;
	uint8_t a[16], zero[16] = { 0 };

	(void)state;
	lb_dpconf6_svc_index_build(&ix, d);
	assert_int_equal(ix.nb, 3);
	ip6(a, "2001:db8:1::10");
	assert_int_equal(lb_dpconf6_svc_find(&ix, d, 6, a, htons(443)), 0);
	assert_int_equal(lb_dpconf6_svc_find(&ix, d, 17, a, htons(443)), 1);
	assert_int_equal(lb_dpconf6_svc_find(&ix, d, 6, a, htons(80)), -1);
	ip6(a, "2001:db8:77::1");
	assert_int_equal(lb_dpconf6_svc_find(&ix, d, 6, a, htons(443)), 2);
	/* Deleted and IPv4 services are not in it. */
	ip6(a, "2001:db8:1::20");
	assert_int_equal(lb_dpconf6_svc_find(&ix, d, 6, a, htons(443)), -1);
	assert_int_equal(lb_dpconf6_svc_find(&ix, d, 6, zero, htons(443)),
			 -1);

	/* Every slot of a full table of services found. */
	for (uint32_t i = 0; i < LB_CONF_MAX_SVCS; i++) {
		d->svc[i].state = LB_SVC_ACTIVE;
		d->svc[i].af = LB_CONF_AF_INET6;
		d->svc[i].proto = 6;
		d->svc[i].vport = htons(443);
		ip6(d->svc[i].vip6, "2001:db8:5::");
		d->svc[i].vip6[15] = (uint8_t)i;
	}
	d->nb_svc = LB_CONF_MAX_SVCS;
	lb_dpconf6_svc_index_build(&ix, d);
	assert_int_equal(ix.nb, LB_CONF_MAX_SVCS);
	for (uint32_t i = 0; i < LB_CONF_MAX_SVCS; i++)
		assert_int_equal(lb_dpconf6_svc_find(&ix, d, 6, d->svc[i].vip6,
						     htons(443)),
				 (int)i);
	/* Empty table: nothing. */
	memset(d, 0, sizeof(*d));
	lb_dpconf6_svc_index_build(&ix, d);
	assert_int_equal(ix.nb, 0);
	assert_int_equal(lb_dpconf6_svc_find(&ix, d, 6, zero, 0), -1);
	free(d);
}

static void
test_ours_and_own(void **state)
{
	struct lb_dpconf *d = table();
	uint8_t a[16];

	(void)state;
	ip6(a, "2001:db8:1::1");
	assert_true(lb_dpconf6_is_ours(d, a, 0));
	assert_false(lb_dpconf6_is_ours(d, a, 1));
	ip6(a, "2001:db8:2::5");
	assert_true(lb_dpconf6_is_ours(d, a, 1));
	assert_false(lb_dpconf6_is_ours(d, a, 0));
	assert_int_equal(lb_dpconf6_snat_find(d, a), 0);
	/* A VIP on port 0's prefix is answered there only; a routed VIP
	 * on every port. */
	ip6(a, "2001:db8:1::10");
	assert_true(lb_dpconf6_is_ours(d, a, 0));
	assert_false(lb_dpconf6_is_ours(d, a, 1));
	ip6(a, "2001:db8:77::1");
	assert_true(lb_dpconf6_is_ours(d, a, 0));
	assert_true(lb_dpconf6_is_ours(d, a, 1));
	/* A deleted service's VIP: not answered, still our own. */
	ip6(a, "2001:db8:1::20");
	assert_false(lb_dpconf6_is_ours(d, a, 0));
	assert_true(lb_dpconf6_is_own(d, a));
	ip6(a, "2001:db8:1::99");
	assert_false(lb_dpconf6_is_ours(d, a, 0));
	assert_false(lb_dpconf6_is_own(d, a));
	assert_int_equal(lb_dpconf6_snat_find(d, a), -1);
	free(d);
}

static void
test_next_hop(void **state)
{
	struct lb_dpconf *d = table();
	uint8_t a[16], nh[16], src[16], want[16];
	uint16_t port = 99;

	(void)state;
	ip6(a, "2001:db8:2::33");
	assert_int_equal(lb_dpconf6_next_hop(d, a, &port, nh, src), 0);
	assert_int_equal(port, 1);
	assert_memory_equal(nh, a, 16);
	ip6(want, "2001:db8:2::1");
	assert_memory_equal(src, want, 16);

	ip6(a, "2001:db8:99:1::1");
	assert_int_equal(lb_dpconf6_next_hop(d, a, &port, nh, src), 0);
	assert_int_equal(port, 1);
	ip6(want, "2001:db8:2::fe");
	assert_memory_equal(nh, want, 16);

	ip6(a, "2001:db8:98::1");
	assert_int_equal(lb_dpconf6_next_hop(d, a, &port, nh, src), 0);
	assert_int_equal(port, 0);
	ip6(want, "2001:db8:1::fe");
	assert_memory_equal(nh, want, 16);

	/* No default route: unreachable. */
	d->nb_route6 = 1;
	assert_int_equal(lb_dpconf6_next_hop(d, a, &port, nh, src),
			 -ENETUNREACH);
	/* A gateway off every prefix: unreachable. */
	ip6(d->route6[0].gw, "2001:db8:3::fe");
	ip6(a, "2001:db8:99:1::1");
	assert_int_equal(lb_dpconf6_next_hop(d, a, &port, nh, src),
			 -ENETUNREACH);
	free(d);
}

static void
test_prefix(void **state)
{
	uint8_t a[16], b[16];

	(void)state;
	ip6(a, "2001:db8::1");
	ip6(b, "2001:db8::ff");
	assert_true(lb_dpconf6_prefix_eq(a, b, 120));
	assert_false(lb_dpconf6_prefix_eq(a, b, 121));
	assert_false(lb_dpconf6_prefix_eq(a, b, 128));
	assert_true(lb_dpconf6_prefix_eq(a, a, 128));
	assert_true(lb_dpconf6_prefix_eq(a, a, 200));
	assert_true(lb_dpconf6_prefix_eq(a, b, 0));
	ip6(b, "2001:db9::1");
	assert_true(lb_dpconf6_prefix_eq(a, b, 31));
	assert_false(lb_dpconf6_prefix_eq(a, b, 32));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_svc_index),
		cmocka_unit_test(test_ours_and_own),
		cmocka_unit_test(test_next_hop),
		cmocka_unit_test(test_prefix),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
