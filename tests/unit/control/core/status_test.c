/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ctl_fixture.h"
#include "ctlcmd.h"
#include "status.h"

#define S 1000000000ull

struct sfx {
	struct ctl_fx *f;
	struct lb_ctl ctl;
	struct lb_status *st;
	uint32_t slot; /* the TCP service's */
	uint32_t b1, b2;
};

static struct sfx *
sfx_new(bool attached)
{
	struct sfx *c = calloc(1, sizeof(*c));
	const struct lb_dpconf *t;

	assert_non_null(c);
	c->f = fx_new();
	c->ctl.conf = c->f->conf;
	c->ctl.state_path = "/tmp/state.conf";
	fx_bind_ctl(c->f, &c->ctl);
	fx_run(c->f, "service add tcp 10.11.0.100:80 sched rr http");
	fx_run(c->f, "backend add tcp 10.11.0.100:80 10.12.0.11:80");
	fx_run(c->f, "backend add tcp 10.11.0.100:80 10.12.0.12:80");
	fx_run(c->f, "service add udp 10.11.0.100:53");
	fx_run(c->f, "backend add udp 10.11.0.100:53 10.12.0.13:53");
	json_decref(c->ctl.data);
	c->ctl.data = NULL;
	fx_publish(c->f);
	t = fx_table(c->f);
	for (uint32_t s = 0; s < t->nb_svc; s++)
		if (t->svc[s].state == LB_SVC_ACTIVE && t->svc[s].proto == 6)
			c->slot = s;
	c->b1 = (uint32_t)fx_be_slot(c->f, c->slot, 0x0a0c000b, 80);
	c->b2 = (uint32_t)fx_be_slot(c->f, c->slot, 0x0a0c000c, 80);
	if (attached) {
		c->ctl.view = lb_view_create(c->f->shm);
		assert_non_null(c->ctl.view);
		lb_view_sync(c->ctl.view);
	}
	c->st = lb_status_create(&c->ctl, c->f->reg);
	assert_non_null(c->st);
	return c;
}

static void
sfx_free(struct sfx *c)
{
	lb_status_free(c->st);
	json_decref(c->ctl.data);
	lb_view_free(c->ctl.view);
	fx_free(c->f);
	free(c);
}

/* View @p name with the samples after @p since_ms, parsed. */
static json_t *
view_since(struct sfx *c, const char *name, uint64_t since_ms)
{
	struct lb_cmd_out out;
	json_error_t e;
	json_t *j;

	lb_cmd_out_init(&out);
	assert_int_equal(lb_status_json(c->st, name, since_ms, 1234, &out), 0);
	j = json_loads(lb_cmd_out_text(&out), 0, &e);
	if (j == NULL)
		fail_msg("%s: %s", name, e.text);
	lb_cmd_out_free(&out);
	return j;
}

static json_t *
view(struct sfx *c, const char *name)
{
	return view_since(c, name, 0);
}

/* Value @p i of series @p m of a service's backend @p be (-1: the
 * service's own); NAN for null. */
static double
point(json_t *series, const char *svc, int be, const char *m, size_t i)
{
	json_t *x = NULL, *y, *v;
	size_t k;

	json_array_foreach(
		json_object_get(series, "services"), k,
		y) if (strcmp(json_string_value(json_object_get(y, "service")),
			      svc) == 0) x = y;
	assert_non_null(x);
	if (be >= 0)
		x = json_array_get(json_object_get(x, "backends"), (size_t)be);
	assert_non_null(x);
	v = json_array_get(json_object_get(x, m), i);
	assert_non_null(v);
	return json_is_null(v) ? NAN : json_number_value(v);
}

static void
flows(struct sfx *c, uint32_t b, uint64_t w0, uint64_t w1)
{
	fx_bst(c->f, 0, c->slot, b)->flows = w0;
	fx_bst(c->f, 1, c->slot, b)->flows = w1;
}

/* Shares of new flows, rates per second and gaps, sample by sample. */
static void
test_series(void **state)
{
	static const char svc[] = "tcp 10.11.0.100:80";
	struct sfx *c = sfx_new(true);
	json_t *j, *be;

	(void)state;
	assert_int_equal(lb_status_tick(c->st, 1 * S, 1000), 1);
	assert_int_equal(lb_status_tick(c->st, 1 * S + S / 2, 1500), 0);
	flows(c, c->b1, 20, 10); /* 30 */
	flows(c, c->b2, 5, 5);	 /* 10 */
	assert_int_equal(lb_status_tick(c->st, 2 * S, 2000), 1);
	/* b1 fails: no new flows, 5 failed trials; b2 takes the 20. */
	fx_bst(c->f, 0, c->slot, c->b1)->errors = 5;
	flows(c, c->b2, 15, 15);
	assert_int_equal(lb_status_tick(c->st, 4 * S, 4000), 1);
	/* Nothing new: no share to draw. */
	lb_status_sample(c->st, 5 * S, 5000);

	j = view(c, "series");
	assert_int_equal(json_integer_value(json_object_get(j, "points")),
			 LB_STATUS_POINTS);
	assert_int_equal(json_integer_value(json_object_get(j, "interval_ms")),
			 1000);
	assert_int_equal(json_array_size(json_object_get(j, "t_ms")), 4);
	assert_int_equal(json_integer_value(
				 json_array_get(json_object_get(j, "t_ms"), 3)),
			 5000);
	assert_int_equal(json_array_size(json_object_get(j, "services")), 2);
	be = json_array_get(
		json_object_get(
			json_array_get(json_object_get(j, "services"), 0),
			"backends"),
		0);
	assert_string_equal(json_string_value(json_object_get(be, "backend")),
			    "10.12.0.11:80");
	/* The first sample has no previous one to count from. */
	assert_true(isnan(point(j, svc, 0, "share", 0)));
	assert_true(point(j, svc, 0, "share", 1) == 0.75);
	assert_true(point(j, svc, 1, "share", 1) == 0.25);
	assert_true(point(j, svc, 0, "share", 2) == 0);
	assert_true(point(j, svc, 1, "share", 2) == 1);
	assert_true(isnan(point(j, svc, 0, "share", 3)));
	/* 5 failed trials over the 2 s between samples. */
	assert_true(point(j, svc, 0, "errors_per_s", 2) == 2.5);
	assert_true(point(j, svc, 1, "errors_per_s", 2) == 0);
	assert_true(point(j, svc, -1, "flows_per_s", 1) == 40);
	assert_true(point(j, svc, -1, "flows_per_s", 2) == 10);
	assert_true(point(j, svc, -1, "instances", 3) == 2);
	/* An HTTP service has its SPL thresholds; an UDP one none. */
	assert_true(point(j, svc, -1, "upper", 0) > 0);
	assert_true(isnan(point(j, "udp 10.11.0.100:53", -1, "load", 0)));
	/* No SPL reported, no latency measured: gaps, not zeros. */
	assert_true(isnan(point(j, svc, 0, "spl", 2)));
	assert_true(isnan(point(j, svc, 0, "p99_ms", 2)));
	json_decref(j);
	/* After 2000 ms: the samples of 4000 and 5000 only, every
	 * service and backend still there, their values in step. */
	j = view_since(c, "series", 2000);
	assert_int_equal(json_array_size(json_object_get(j, "t_ms")), 2);
	assert_int_equal(json_integer_value(
				 json_array_get(json_object_get(j, "t_ms"), 0)),
			 4000);
	assert_int_equal(json_array_size(json_object_get(j, "services")), 2);
	assert_true(point(j, svc, 1, "share", 0) == 1);
	assert_true(isnan(point(j, svc, 1, "share", 1)));
	assert_true(point(j, svc, -1, "instances", 1) == 2);
	json_decref(j);
	j = view_since(c, "series", 5000);
	assert_int_equal(json_array_size(json_object_get(j, "t_ms")), 0);
	assert_int_equal(
		json_array_size(json_object_get(
			json_array_get(json_object_get(j, "services"), 0),
			"flows_per_s")),
		0);
	json_decref(j);
	assert_int_equal(lb_status_refused(c->st), 0);
	sfx_free(c);
}

/* The series of an IPv6 service: named as `service list` names it, its
 * backends each under it, apart from the IPv4 service's backend whose
 * address the last 32 bits of one of them spell. */
static void
test_ip6_series(void **state)
{
	static const char svc6[] = "tcp [2001:db8:b::100]:80";
	struct sfx *c = sfx_new(true);
	const struct lb_dpconf *t;
	uint32_t s6 = 0;
	json_t *j, *x = NULL, *y;
	size_t k;

	(void)state;
	fx_run(c->f, "service add tcp [2001:db8:b::100]:80");
	fx_run(c->f, "backend add tcp [2001:db8:b::100]:80 [2001:db8:c::11]:80");
	fx_run(c->f, "backend add tcp [2001:db8:b::100]:80 "
		     "[2001:db8:c::a0c:b]:80");
	fx_publish(c->f);
	lb_view_sync(c->ctl.view);
	t = fx_table(c->f);
	for (uint32_t i = 0; i < t->nb_svc; i++)
		if (t->svc[i].af == LB_CONF_AF_INET6)
			s6 = i;
	lb_status_sample(c->st, 1 * S, 1000);
	fx_bst(c->f, 0, s6, 0)->flows = 6;
	fx_bst(c->f, 0, s6, 1)->flows = 2;
	lb_status_sample(c->st, 2 * S, 2000);
	j = view(c, "series");
	assert_int_equal(json_array_size(json_object_get(j, "services")), 3);
	json_array_foreach(json_object_get(j, "services"), k, y)
		if (strcmp(json_string_value(json_object_get(y, "service")),
			   svc6) == 0)
			x = y;
	assert_non_null(x);
	y = json_object_get(x, "backends");
	assert_int_equal(json_array_size(y), 2);
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(y, 0), "backend")),
			    "[2001:db8:c::11]:80");
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(y, 1), "backend")),
			    "[2001:db8:c::a0c:b]:80");
	assert_true(point(j, svc6, -1, "flows_per_s", 1) == 8);
	assert_true(point(j, svc6, 0, "share", 1) == 0.75);
	assert_true(point(j, svc6, 1, "share", 1) == 0.25);
	/* The IPv4 service's backend of the same address is its own. */
	assert_int_equal(json_array_size(json_object_get(
				 json_array_get(json_object_get(j, "services"),
						0),
				 "backends")),
			 2);
	json_decref(j);
	sfx_free(c);
}

/* A backend deleted and its slot given to another: its counters start
 * over, with no negative rate in between. */
static void
test_slot_reused(void **state)
{
	struct sfx *c = sfx_new(true);
	json_t *j, *bes;

	(void)state;
	flows(c, c->b1, 100, 0);
	lb_status_sample(c->st, 1 * S, 1000);
	flows(c, c->b1, 3, 0); /* went back */
	lb_status_sample(c->st, 2 * S, 2000);
	j = view(c, "series");
	bes = json_object_get(json_array_get(json_object_get(j, "services"), 0),
			      "backends");
	assert_true(
		json_is_null(json_array_get(
			json_object_get(json_array_get(bes, 0), "errors_per_s"),
			1)) ||
		json_number_value(json_array_get(
			json_object_get(json_array_get(bes, 0), "errors_per_s"),
			1)) >= 0);
	assert_true(json_is_null(json_array_get(
		json_object_get(json_array_get(bes, 0), "share"), 1)));
	json_decref(j);
	sfx_free(c);
}

static void
test_views(void **state)
{
	struct sfx *c = sfx_new(true);
	json_t *j, *x;

	(void)state;
	lb_status_sample(c->st, 1 * S, 1000);
	j = view(c, "status");
	assert_int_equal(json_integer_value(json_object_get(j, "time_ms")),
			 1234);
	for (unsigned int i = 1; lb_status_views[i] != NULL; i++)
		if (strcmp(lb_status_views[i], "series") != 0)
			assert_non_null(json_object_get(j, lb_status_views[i]));
	/* The series are asked for alone. */
	assert_null(json_object_get(j, "series"));
	x = json_object_get(json_object_get(j, "services"), "services");
	assert_int_equal(json_array_size(x), 2);
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(x, 0), "service")),
			    "tcp 10.11.0.100:80");
	x = json_object_get(json_object_get(j, "backends"), "backends");
	assert_int_equal(json_array_size(x), 3);
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(x, 0), "health")),
			    "none");
	assert_true(json_is_object(json_object_get(j, "stats")));
	/* This program links no governor nor autoscaler: their views are
	 * null rather than an error. */
	assert_true(json_is_null(json_object_get(j, "governor")));
	assert_true(json_is_null(json_object_get(j, "scale")));
	json_decref(j);
	/* Each view alone is what "status" holds under its name. */
	j = view(c, "backends");
	assert_int_equal(json_array_size(json_object_get(j, "backends")), 3);
	json_decref(j);
	sfx_free(c);
}

/* Only the views' own read-only commands run, whatever is asked. */
static void
test_unknown_view(void **state)
{
	static const char *const bad[] = {
		"",	    "nope",    "service del tcp 10.11.0.100:80",
		"status/x", "series ", "backends?x=1",
	};
	struct sfx *c = sfx_new(true);
	struct lb_cmd_out out;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		lb_cmd_out_init(&out);
		assert_int_equal(lb_status_json(c->st, bad[i], 0, 1, &out),
				 -ENOENT);
		assert_non_null(
			strstr(lb_cmd_out_errmsg(&out), "no status view"));
		lb_cmd_out_free(&out);
	}
	assert_int_equal(lb_conf_nb_svcs(c->ctl.conf), 2);
	sfx_free(c);
}

static void
test_page(void **state)
{
	static const struct {
		const char *path;
		int rc;
		const char *type;
		const char *has;
	} rows[] = {
		{"/", 0, "text/html; charset=utf-8", "<title>Sluice status"},
		{"/status.css", 0, "text/css; charset=utf-8", "svg.plot"},
		{"/status.js", 0, "text/javascript; charset=utf-8", "/api/v1/"},
		{"/api/v1/series", 0, "application/json", "\"t_ms\""},
		{"/api/v1/status", 0, "application/json", "\"backends\""},
		{"/index.html", -ENOENT, NULL, NULL},
		{"/api/v1/", -ENOENT, NULL, NULL},
		{"/api/v1/nope", -ENOENT, NULL, NULL},
		{"/api/v2/series", -ENOENT, NULL, NULL},
		{"/status.js/", -ENOENT, NULL, NULL},
	};
	struct sfx *c = sfx_new(true);

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const char *type = NULL;
		struct lb_cmd_out out;

		lb_cmd_out_init(&out);
		assert_int_equal(lb_status_page(c->st, rows[i].path, NULL, 1,
						&type, &out),
				 rows[i].rc);
		if (rows[i].rc == 0) {
			assert_string_equal(type, rows[i].type);
			assert_non_null(
				strstr(lb_cmd_out_text(&out), rows[i].has));
		}
		lb_cmd_out_free(&out);
	}
	/* "since" must be a number of ms. */
	for (size_t i = 0; i < 3; i++) {
		static const char *const since[] = {"abc", "-1", "12x"};
		const char *type = NULL;
		struct lb_cmd_out out;

		lb_cmd_out_init(&out);
		assert_int_equal(lb_status_page(c->st, "/api/v1/series",
						since[i], 1, &type, &out),
				 -EINVAL);
		assert_non_null(strstr(lb_cmd_out_errmsg(&out), "since"));
		lb_cmd_out_free(&out);
	}
	sfx_free(c);
}

/* Without a dataplane there is nothing to sample; the views answer. */
static void
test_detached(void **state)
{
	struct sfx *c = sfx_new(false);
	json_t *j;

	(void)state;
	assert_int_equal(lb_status_tick(c->st, 1 * S, 1000), 0);
	lb_status_sample(c->st, 2 * S, 2000);
	j = view(c, "series");
	assert_int_equal(json_array_size(json_object_get(j, "t_ms")), 0);
	assert_int_equal(json_array_size(json_object_get(j, "services")), 0);
	json_decref(j);
	j = view(c, "services");
	assert_int_equal(json_array_size(json_object_get(j, "services")), 2);
	json_decref(j);
	sfx_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_series),
		cmocka_unit_test(test_ip6_series),
		cmocka_unit_test(test_slot_reused),
		cmocka_unit_test(test_views),
		cmocka_unit_test(test_unknown_view),
		cmocka_unit_test(test_page),
		cmocka_unit_test(test_detached),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
