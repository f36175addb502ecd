/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of `governor show` and the governors' /metrics families
 * (control/core/govcmd.c) over a dataplane's shared memory in plain memory
 * (ctl_fixture.h): the governor learns from QoS records fed to the view,
 * the per-rank decisions and refusals come from the workers' counters.
 */
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
#include "govcmd.h"
#include "govview.h"

#define SEC 1000000000ull

static uint64_t clock_ns;

static uint64_t
test_clock(void *arg)
{
	(void)arg;
	return clock_ns;
}

struct gfx {
	struct ctl_fx *f;
	struct lb_ctl ctl;
};

static struct gfx *
gfx_new(void)
{
	struct gfx *g = calloc(1, sizeof(*g));

	assert_non_null(g);
	g->f = fx_new();
	g->ctl.conf = g->f->conf;
	fx_bind_ctl(g->f, &g->ctl);
	fx_run(g->f, "addr add 10.11.0.1/24 port 0");
	fx_run(g->f, "addr add 10.12.0.1/24 port 1");
	fx_run(g->f, "snat add 10.12.0.2 port 1");
	fx_run(g->f, "service add tcp 10.11.0.100:80 http governor on "
		     "gov-raise 20");
	fx_run(g->f, "backend add tcp 10.11.0.100:80 10.12.0.11:80");
	fx_run(g->f, "service add tcp 10.11.0.101:80 http");
	fx_run(g->f, "backend add tcp 10.11.0.101:80 10.12.0.11:80");
	fx_publish(g->f);
	clock_ns = 0;
	g->ctl.view = lb_view_create(g->f->shm);
	assert_non_null(g->ctl.view);
	lb_view_set_clock(g->ctl.view, test_clock, NULL);
	lb_view_sync(g->ctl.view);
	return g;
}

static void
gfx_free(struct gfx *g)
{
	json_decref(g->ctl.data);
	lb_view_free(g->ctl.view);
	fx_free(g->f);
	free(g);
}

static const char *
run(struct gfx *g, const char *line, int want)
{
	int rc;

	json_decref(g->ctl.data);
	g->ctl.data = NULL;
	lb_cmd_out_reset(&g->f->out);
	rc = lb_cmd_exec_line(g->f->reg, line, &g->f->out);
	if (rc != want)
		fail_msg("%s: %d (%s)", line, rc,
			 lb_cmd_out_errmsg(&g->f->out));
	return lb_cmd_out_text(&g->f->out);
}

/* One interval of 20 QoS records on slot 0, @p late of them late. */
static void
interval(struct gfx *g, unsigned int late)
{
	struct lb_fb r[20];

	memset(r, 0, sizeof(r));
	for (unsigned int i = 0; i < 20; i++) {
		r[i].ts_ns = clock_ns + i;
		r[i].kind = LB_FB_HTTP;
		r[i].u32 = 200;
		r[i].u32b = 100;
		r[i].v = (i < late ? 300 : 10) * 1000000ull;
		r[i].flags = LB_FB_F_TIMED | LB_FB_F_EXPECT |
			     (uint16_t)(LB_FB_F_PRIO | 3 << LB_FB_PRIO_SHIFT);
	}
	lb_view_feed(g->ctl.view, 0, r, 20);
	clock_ns += SEC;
	lb_view_tick(g->ctl.view);
}

static void
test_show(void **state)
{
	struct gfx *g = gfx_new();
	const char *t;
	json_t *s0;

	(void)state;
	/* Two workers' decisions and refusals add up. */
	g->f->st[0].gov[0].admitted[1] = 5;
	g->f->st[1].gov[0].admitted[1] = 6;
	g->f->st[0].gov[0].throttled[7] = 4;
	g->f->st[1].gov[0].throttled[7] = 3;
	g->f->st[0].l7_refused[LB_L7_REJ_GOVERNOR] = 7;
	g->f->st[1].l7_refused[LB_L7_REJ_RATE] = 2;
	g->f->st[1].l7_held = 9;
	interval(g, 10); /* 50 % late: overloaded, M = 20 */
	assert_true(lb_govview_m(lb_view_gov(g->ctl.view), 0) == 20.0);
	assert_true(lb_govview_m(lb_view_gov(g->ctl.view), 1) == 0.0);
	t = run(g, "governor show", 0);
	assert_non_null(strstr(t, "tcp 10.11.0.100:80    damped       20.0"
				  "   50.0       20       10 yes      0"));
	assert_null(strstr(t, "10.11.0.101"));
	assert_non_null(strstr(t, "\n  1                11            0\n"));
	assert_non_null(strstr(t, "\n  7+                0            7\n"));
	assert_non_null(strstr(t, "refused: governor 7, rate 2; held "
				  "segments 9,"));
	s0 = json_array_get(json_object_get(g->ctl.data, "services"), 0);
	assert_non_null(s0);
	assert_true(json_real_value(json_object_get(s0, "m")) == 20.0);
	assert_true(json_is_true(json_object_get(s0, "overloaded")));
	assert_int_equal(json_integer_value(json_array_get(
				 json_object_get(s0, "throttled"), 7)),
			 7);
	assert_int_equal(json_integer_value(json_object_get(
				 json_object_get(g->ctl.data, "refused"),
				 "governor")),
			 7);
	/* Filtered: the other service has no governor. */
	t = run(g, "governor show tcp 10.11.0.101:80", 0);
	assert_int_equal(json_array_size(
				 json_object_get(g->ctl.data, "services")),
			 0);
	(void)run(g, "governor show tcp", -EINVAL);
	(void)run(g, "governor show tcp 10.11.0.100", -EINVAL);
	gfx_free(g);
}

static void
test_metrics(void **state)
{
	struct gfx *g = gfx_new();
	struct lb_cmd_out o;
	const char *t;

	(void)state;
	g->f->st[0].gov[0].throttled[7] = 3;
	g->f->st[1].l7_refused[LB_L7_REJ_RATE] = 2;
	interval(g, 10);
	lb_cmd_out_init(&o);
	assert_int_equal(lb_govcmd_metrics(&g->ctl, &o), 0);
	t = lb_cmd_out_text(&o);
	assert_non_null(strstr(t, "\nlb_service_governor_multiplier{service="
				  "\"tcp 10.11.0.100:80\"} 20\n"));
	assert_non_null(strstr(t, "\nlb_service_governor_overloaded{service="
				  "\"tcp 10.11.0.100:80\"} 1\n"));
	assert_non_null(strstr(t, "lb_service_governor_requests_total{"
				  "service=\"tcp 10.11.0.100:80\",priority="
				  "\"7+\",result=\"throttled\"} 3\n"));
	assert_non_null(strstr(t, "\nlb_http_refused_total{reason=\"rate\"} "
				  "2\n"));
	assert_null(strstr(t, "10.11.0.101"));
	lb_cmd_out_free(&o);
	/* Without a dataplane: nothing, no error. */
	lb_view_free(g->ctl.view);
	g->ctl.view = NULL;
	lb_cmd_out_init(&o);
	assert_int_equal(lb_govcmd_metrics(&g->ctl, &o), 0);
	assert_string_equal(lb_cmd_out_text(&o), "");
	lb_cmd_out_free(&o);
	assert_int_equal(lb_govcmd_metrics(NULL, &o), -EINVAL);
	gfx_free(g);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_show),
		cmocka_unit_test(test_metrics),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
