/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ctl_fixture.h"
#include "lb/adaptive.h"

#define BE1 0x0a0c000bu /* 10.12.0.11 */
#define BE2 0x0a0c000cu
#define BE3 0x0a0c000du

static struct ctl_fx *
fx_std(void)
{
	struct ctl_fx *f = fx_new();

	fx_run(f, "addr add 10.11.0.1/24 port 0");
	fx_run(f, "addr add 10.12.0.1/24 port 1");
	fx_run(f, "snat add 10.12.0.2 port 1");
	fx_run(f, "service add tcp 10.11.0.100:80");
	fx_run(f, "backend add tcp 10.11.0.100:80 10.12.0.11:80");
	fx_run(f, "backend add tcp 10.11.0.100:80 10.12.0.12:80");
	fx_run(f, "service add udp 10.11.0.100:53 sched rr");
	fx_run(f, "backend add udp 10.11.0.100:53 10.12.0.13:53");
	fx_publish(f);
	return f;
}

/* ---- busy: flows still using a slot ---- */

static void
test_busy(void **state)
{
	struct ctl_fx *f = fx_std();

	(void)state;
	assert_false(lb_view_busy(f->shm, 0, 0));
	assert_false(lb_view_busy(f->shm, 0, UINT32_MAX));
	fx_bst(f, 1, 0, 1)->active = 2;
	assert_false(lb_view_busy(f->shm, 0, 0));
	assert_true(lb_view_busy(f->shm, 0, 1));
	assert_true(lb_view_busy(f->shm, 0, UINT32_MAX));
	assert_false(lb_view_busy(f->shm, 1, UINT32_MAX));
	/* Summed over workers: one worker's count is not the answer. */
	fx_bst(f, 0, 0, 1)->active = -2;
	assert_false(lb_view_busy(f->shm, 0, 1));
	fx_bst(f, 0, 0, 1)->active = -1;
	assert_true(lb_view_busy(f->shm, 0, 1));
	/* The last backend slot counts for the service. */
	fx_bst(f, 0, 1, LB_CONF_MAX_BES - 1)->active = 1;
	assert_true(lb_view_busy(f->shm, 1, UINT32_MAX));
	/* Out of range: nothing there, not busy. */
	assert_false(lb_view_busy(f->shm, LB_CONF_MAX_SVCS, 0));
	assert_false(lb_view_busy(f->shm, 0, LB_CONF_MAX_BES));
	assert_false(lb_view_busy(NULL, 0, 0));
	fx_free(f);
}

/* A removed backend keeps its slot while busy, loses it after. */
static void
test_busy_drives_compile(void **state)
{
	struct ctl_fx *f = fx_std();
	const struct lb_dpconf *t;

	(void)state;
	fx_bst(f, 0, 0, 0)->active = 1;
	fx_run(f, "backend del tcp 10.11.0.100:80 10.12.0.11:80");
	fx_run(f, "backend add tcp 10.11.0.100:80 10.12.0.13:80");
	fx_publish(f);
	t = fx_table(f);
	assert_int_equal(t->svc[0].be[0].state, LB_BE_REMOVED);
	assert_int_equal(fx_be_slot(f, 0, BE3, 80), 2);
	fx_bst(f, 0, 0, 0)->active = 0;
	fx_run(f, "backend add tcp 10.11.0.100:80 10.12.0.11:8080");
	fx_publish(f);
	assert_int_equal(fx_be_slot(f, 0, BE1, 8080), 0);
	fx_free(f);
}

/* ---- feedback ---- */

static struct lb_fb
rec(uint8_t kind, uint16_t svc, uint16_t be, uint32_t u32)
{
	return (struct lb_fb){.kind = kind, .svc = svc, .be = be, .u32 = u32};
}

static void
test_feed(void **state)
{
	struct ctl_fx *f = fx_std();
	struct lb_view *v = lb_view_create(f->shm);
	const struct lb_fb r0[] = {
		rec(LB_FB_TRIAL_FAIL, 0, 1, 1),
		rec(LB_FB_TRIAL_FAIL, 0, 1, 2),
		rec(LB_FB_TRIAL_OK, 0, 1, 0),
		rec(LB_FB_TRIAL_OK, 0, 0, 0),
		rec(LB_FB_FLOW_END, 0, 0, 0),
		rec(LB_FB_FLOW_END, 0, 0, 0),
		rec(LB_FB_HTTP, 0, 0, 200),
		rec(LB_FB_TRIAL_OK, LB_CONF_MAX_SVCS, 0, 0),
		rec(LB_FB_TRIAL_OK, 0, LB_CONF_MAX_BES, 0),
		rec(200, 0, 0, 0),
	};
	const struct lb_fb r1[] = {
		rec(LB_FB_TRIAL_FAIL, 0, 1, 7),
		rec(LB_FB_FLOW_END, 0, 0, 0),
	};
	const struct lb_view_fb *s0, *s1;
	struct lb_view_be b;

	(void)state;
	assert_non_null(v);
	lb_view_sync(v);
	lb_view_feed(v, 0, r0, sizeof(r0) / sizeof(r0[0]));
	lb_view_feed(v, 1, r1, 2);
	/* A worker that does not exist, and nothing at all: ignored. */
	lb_view_feed(v, FX_NW, r1, 2);
	lb_view_feed(v, 0, NULL, 0);
	s0 = lb_view_fb_stats(v, 0);
	s1 = lb_view_fb_stats(v, 1);
	assert_non_null(s0);
	assert_null(lb_view_fb_stats(v, FX_NW));
	assert_int_equal(s0->records, 10);
	assert_int_equal(s0->kind[LB_FB_TRIAL_OK], 4);
	assert_int_equal(s0->kind[LB_FB_TRIAL_FAIL], 2);
	assert_int_equal(s0->kind[LB_FB_FLOW_END], 2);
	assert_int_equal(s0->kind[LB_FB_HTTP], 1);
	assert_int_equal(s0->kind[0], 1);
	assert_int_equal(s0->invalid, 2);
	assert_int_equal(s1->records, 2);

	assert_int_equal(lb_view_be_get(v, 0, 1, &b), 0);
	assert_int_equal(b.w[0].trials_ok, 1);
	assert_int_equal(b.w[0].trials_fail, 2);
	assert_int_equal(b.w[0].fb_sched_errors, 0);
	assert_true(b.w[0].fb_seen);
	assert_int_equal(b.w[1].trials_fail, 1);
	assert_int_equal(b.w[1].fb_sched_errors, 7);
	assert_int_equal(lb_view_be_get(v, 0, 0, &b), 0);
	assert_int_equal(b.flows_ended, 3);
	assert_false(b.w[1].fb_seen);
	lb_view_free(v);
	fx_free(f);
}

/* ---- counters, baselines, retired sums ---- */

static void
count(struct ctl_fx *f, uint32_t w, uint32_t s, uint32_t b, uint64_t flows,
      uint64_t errors, uint64_t pk)
{
	struct lb_be_stats *x = fx_bst(f, w, s, b);

	x->flows += flows;
	x->errors += errors;
	x->pkts[0] += pk;
	x->pkts[1] += 2 * pk;
	x->bytes[0] += 100 * pk;
	x->bytes[1] += 200 * pk;
	x->http_responses += flows;
}

static void
test_counters_and_baselines(void **state)
{
	struct ctl_fx *f = fx_std();
	struct lb_view *v;
	struct lb_view_be b;
	struct lb_view_svc s;
	int slot;

	(void)state;
	/* Counts from before lb-control started belong to whoever holds
	 * the slot now: the first sync takes no baseline. */
	count(f, 0, 0, 0, 10, 1, 5);
	count(f, 1, 0, 0, 20, 2, 5);
	count(f, 1, 0, 1, 5, 0, 1);
	fx_bst(f, 0, 0, 0)->active = 3;
	fx_bst(f, 1, 0, 0)->active = 1;
	fx_bst(f, 1, 0, 0)->inflight = 2;
	v = lb_view_create(f->shm);
	assert_non_null(v);
	lb_view_sync(v);
	assert_int_equal(lb_view_be_get(v, 0, 0, &b), 0);
	assert_int_equal(b.state, LB_BE_ACTIVE);
	assert_int_equal(b.ip, BE1);
	assert_int_equal(b.port, 80);
	assert_int_equal(b.flows_total, 30);
	assert_int_equal(b.flows_active, 4);
	assert_int_equal(b.errors, 3);
	assert_int_equal(b.pkts[0], 10);
	assert_int_equal(b.pkts[1], 20);
	assert_int_equal(b.bytes[0], 1000);
	assert_int_equal(b.bytes[1], 2000);
	assert_int_equal(b.http_responses, 30);
	assert_int_equal(b.inflight, 2);
	assert_int_equal(b.nb_workers, FX_NW);
	assert_int_equal(lb_view_svc_get(v, 0, &s), 0);
	assert_int_equal(s.state, LB_SVC_ACTIVE);
	assert_int_equal(s.proto, 6);
	assert_int_equal(s.vip, 0x0a0b0064u);
	assert_int_equal(s.port, 80);
	assert_string_equal(s.opts->sched, "adaptive");
	assert_int_equal(s.flows_total, 35);
	assert_int_equal(s.flows_active, 4);
	assert_int_equal(s.nb_be[LB_BE_ACTIVE], 2);

	/* be1 leaves with no flows: its slot goes to be3, which starts
	 * from zero while the service keeps be1's counts. */
	fx_bst(f, 0, 0, 0)->active = 0;
	fx_bst(f, 1, 0, 0)->active = 0;
	fx_run(f, "backend del tcp 10.11.0.100:80 10.12.0.11:80");
	fx_run(f, "backend add tcp 10.11.0.100:80 10.12.0.13:80");
	fx_publish(f);
	lb_view_sync(v);
	slot = fx_be_slot(f, 0, BE3, 80);
	assert_int_equal(slot, 0);
	assert_int_equal(lb_view_be_get(v, 0, 0, &b), 0);
	assert_int_equal(b.ip, BE3);
	assert_int_equal(b.flows_total, 0);
	assert_int_equal(b.errors, 0);
	assert_int_equal(b.pkts[0], 0);
	count(f, 0, 0, 0, 4, 0, 1);
	assert_int_equal(lb_view_be_get(v, 0, 0, &b), 0);
	assert_int_equal(b.flows_total, 4);
	assert_int_equal(lb_view_svc_get(v, 0, &s), 0);
	assert_int_equal(s.flows_total, 39);
	assert_int_equal(s.errors, 3);
	assert_int_equal(s.pkts[0], 12);
	assert_int_equal(s.http_responses, 39);

	/* The service goes, and another takes its slot: nothing of the
	 * old one shows. */
	fx_run(f, "service del tcp 10.11.0.100:80");
	fx_run(f, "service add tcp 10.11.0.200:80");
	fx_run(f, "backend add tcp 10.11.0.200:80 10.12.0.12:80");
	fx_publish(f);
	lb_view_sync(v);
	assert_int_equal(lb_view_svc_get(v, 0, &s), 0);
	assert_int_equal(s.vip, 0x0a0b00c8u);
	assert_int_equal(s.flows_total, 0);
	assert_int_equal(s.pkts[1], 0);
	assert_int_equal(lb_view_be_get(v, 0, 0, &b), 0);
	assert_int_equal(b.flows_total, 0);

	/* Empty and out-of-range slots. */
	assert_int_equal(lb_view_be_get(v, 0, 5, &b), -ENOENT);
	assert_int_equal(lb_view_svc_get(v, 9, &s), -ENOENT);
	assert_int_equal(lb_view_be_get(v, LB_CONF_MAX_SVCS, 0, &b), -EINVAL);
	assert_int_equal(lb_view_svc_get(v, LB_CONF_MAX_SVCS, &s), -EINVAL);
	assert_int_equal(lb_view_be_get(NULL, 0, 0, &b), -EINVAL);
	lb_view_free(v);
	fx_free(f);
}

/* Deleted and removed slots still in the table keep their counts. */
static void
test_removed_and_deleted(void **state)
{
	struct ctl_fx *f = fx_std();
	struct lb_view *v = lb_view_create(f->shm);
	struct lb_view_be b;
	struct lb_view_svc s;

	(void)state;
	lb_view_sync(v);
	count(f, 0, 0, 0, 7, 0, 1);
	fx_bst(f, 0, 0, 0)->active = 1;
	fx_bst(f, 1, 1, 0)->active = 1;
	fx_run(f, "backend del tcp 10.11.0.100:80 10.12.0.11:80");
	fx_run(f, "service del udp 10.11.0.100:53");
	fx_publish(f);
	lb_view_sync(v);
	assert_int_equal(lb_view_be_get(v, 0, 0, &b), 0);
	assert_int_equal(b.state, LB_BE_REMOVED);
	assert_int_equal(b.flows_total, 7);
	assert_int_equal(lb_view_svc_get(v, 0, &s), 0);
	assert_int_equal(s.nb_be[LB_BE_REMOVED], 1);
	assert_int_equal(s.nb_be[LB_BE_ACTIVE], 1);
	assert_int_equal(lb_view_svc_get(v, 1, &s), 0);
	assert_int_equal(s.state, LB_SVC_DELETED);
	assert_string_equal(lb_view_svc_state_name(s.state), "deleted");
	assert_string_equal(lb_view_be_state_name(LB_BE_REMOVED), "removed");
	lb_view_free(v);
	fx_free(f);
}

/* ---- the weights each worker gives ---- */

static void
test_weights(void **state)
{
	struct ctl_fx *f = fx_std();
	struct lb_view *v;
	struct lb_view_be b0, b1;
	uint32_t err[2] = {0, 3};
	uint64_t want[2];

	(void)state;
	/* Worker 0 saw be2 fail 3 times; worker 1 saw nothing. */
	fx_bst(f, 0, 0, 1)->sched_errors = 3;
	v = lb_view_create(f->shm);
	lb_view_sync(v);
	assert_int_equal(lb_view_be_get(v, 0, 0, &b0), 0);
	assert_int_equal(lb_view_be_get(v, 0, 1, &b1), 0);
	/* Equation (6): E_m = floor((1 + 3)^1.5) = 8, w_i = ceil(E_m /
	 * (1 + e_i)): 8 and 2, as lb_adaptive_weights() says. */
	assert_int_equal(lb_adaptive_weights(err, NULL, 2, want), 0);
	assert_int_equal(want[0], 8);
	assert_int_equal(want[1], 2);
	assert_int_equal(b0.w[0].weight, 8);
	assert_int_equal(b1.w[0].weight, 2);
	assert_int_equal(b1.w[0].sched_errors, 3);
	/* Worker 1: no errors, equal weights. */
	assert_int_equal(b0.w[1].weight, b1.w[1].weight);
	assert_int_equal(b0.w[1].weight, 1);

	/* Draining: weight 0 everywhere; rr gives 1; wrr the weight. */
	fx_run(f, "backend drain tcp 10.11.0.100:80 10.12.0.12:80");
	fx_run(f, "backend add udp 10.11.0.100:53 10.12.0.11:53 weight 5");
	fx_run(f, "service add tcp 10.11.0.100:443 sched wrr");
	fx_run(f, "backend add tcp 10.11.0.100:443 10.12.0.11:443 weight 7");
	fx_publish(f);
	lb_view_sync(v);
	assert_int_equal(lb_view_be_get(v, 0, 1, &b1), 0);
	assert_int_equal(b1.state, LB_BE_DRAINING);
	assert_int_equal(b1.w[0].weight, 0);
	assert_int_equal(b1.w[1].weight, 0);
	assert_int_equal(lb_view_be_get(v, 0, 0, &b0), 0);
	assert_int_equal(b0.w[0].weight, 1);
	assert_int_equal(lb_view_be_get(v, 1, 1, &b1), 0);
	assert_int_equal(b1.weight, 5);
	assert_int_equal(b1.w[0].weight, 1);
	assert_int_equal(lb_view_be_get(v, 2, 0, &b1), 0);
	assert_int_equal(b1.w[1].weight, 7);
	lb_view_free(v);
	fx_free(f);
}

static void
test_stats_sum_and_names(void **state)
{
	struct ctl_fx *f = fx_std();
	struct lb_worker_stats sum;

	(void)state;
	f->st[0].rx = 10;
	f->st[1].rx = 5;
	f->st[1].drop[LB_DROP_NO_ROUTE] = 2;
	f->st[0].conf_switches = 1;
	f->st[1].conf_switches = 1;
	lb_view_stats_sum(f->shm, &sum);
	assert_int_equal(sum.rx, 15);
	assert_int_equal(sum.drop[LB_DROP_NO_ROUTE], 2);
	assert_int_equal(sum.conf_switches, 2);
	lb_view_stats_sum(NULL, &sum);
	assert_int_equal(sum.rx, 0);
	assert_string_equal(lb_view_fb_kind_name(LB_FB_TRIAL_OK), "trial_ok");
	assert_string_equal(lb_view_fb_kind_name(0), "unknown");
	assert_string_equal(lb_view_fb_kind_name(250), "unknown");
	assert_null(lb_view_create(NULL));
	/* A worker without its counters cannot be viewed. */
	f->w[1].be = NULL;
	assert_null(lb_view_create(f->shm));
	fx_free(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_busy),
		cmocka_unit_test(test_busy_drives_compile),
		cmocka_unit_test(test_feed),
		cmocka_unit_test(test_counters_and_baselines),
		cmocka_unit_test(test_removed_and_deleted),
		cmocka_unit_test(test_weights),
		cmocka_unit_test(test_stats_sum_and_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
