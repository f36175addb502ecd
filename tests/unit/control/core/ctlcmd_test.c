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
#include <pthread.h>
#include <time.h>

#include "ctl_fixture.h"
#include "ctlcmd.h"

struct cfx {
	struct ctl_fx *f;
	struct lb_ctl ctl;
};

static struct cfx *
cfx_new(bool attached)
{
	struct cfx *c = calloc(1, sizeof(*c));

	assert_non_null(c);
	c->f = fx_new();
	c->ctl.conf = c->f->conf;
	c->ctl.state_path = "/tmp/state.conf";
	fx_bind_ctl(c->f, &c->ctl);
	fx_run(c->f, "addr add 10.11.0.1/24 port 0");
	fx_run(c->f, "addr add 10.12.0.1/24 port 1");
	fx_run(c->f, "route add 192.168.0.0/16 via 10.12.0.254 port 1");
	fx_run(c->f, "snat add 10.12.0.2 port 1");
	fx_run(c->f, "service add tcp 10.11.0.100:80 sched rr");
	fx_run(c->f, "backend add tcp 10.11.0.100:80 10.12.0.11:80");
	fx_run(c->f, "backend add tcp 10.11.0.100:80 10.12.0.12:80 weight 3");
	fx_run(c->f, "service add udp 10.11.0.100:53");
	fx_run(c->f, "backend add udp 10.11.0.100:53 10.12.0.13:53");
	json_decref(c->ctl.data);
	c->ctl.data = NULL;
	fx_publish(c->f);
	if (attached) {
		c->ctl.view = lb_view_create(c->f->shm);
		assert_non_null(c->ctl.view);
		lb_view_sync(c->ctl.view);
	}
	return c;
}

static void
cfx_free(struct cfx *c)
{
	json_decref(c->ctl.data);
	lb_view_free(c->ctl.view);
	fx_free(c->f);
	free(c);
}

/* Runs @p line; returns its text; c->ctl.data holds its data. */
static const char *
run(struct cfx *c, const char *line, int want)
{
	int rc;

	json_decref(c->ctl.data);
	c->ctl.data = NULL;
	lb_cmd_out_reset(&c->f->out);
	rc = lb_cmd_exec_line(c->f->reg, line, &c->f->out);
	if (rc != want)
		fail_msg("%s: %d (%s)", line, rc,
			 lb_cmd_out_errmsg(&c->f->out));
	return lb_cmd_out_text(&c->f->out);
}

/* Line @p n (from 0) of @p text, into @p buf. */
static const char *
line_of(const char *text, int n, char *buf, size_t len)
{
	const char *p = text;

	while (n-- > 0 && p != NULL) {
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	if (p == NULL || *p == '\0')
		return NULL;
	snprintf(buf, len, "%.*s", (int)strcspn(p, "\n"), p);
	return buf;
}

static int
nb_lines(const char *t)
{
	int n = 0;

	for (; *t != '\0'; t++)
		n += *t == '\n';
	return n;
}

/* Words of a text line, one space between them. */
static void
squeeze(const char *in, char *out)
{
	size_t n = 0;
	bool sp = false;

	for (; *in != '\0'; in++) {
		if (*in == ' ') {
			sp = true;
			continue;
		}
		if (sp && n > 0)
			out[n++] = ' ';
		sp = false;
		out[n++] = *in;
	}
	out[n] = '\0';
}

static const char *
row(const char *text, int n, char *buf)
{
	char tmp[512];

	if (line_of(text, n, tmp, sizeof(tmp)) == NULL)
		return NULL;
	squeeze(tmp, buf);
	return buf;
}

static json_t *
dget(json_t *o, const char *path)
{
	char key[64];
	const char *p = path;

	while (o != NULL && *p != '\0') {
		size_t n = strcspn(p, ".");

		snprintf(key, sizeof(key), "%.*s", (int)n, p);
		if (json_is_array(o))
			o = json_array_get(o, strtoul(key, NULL, 10));
		else
			o = json_object_get(o, key);
		p += n + (p[n] == '.');
	}
	return o;
}

static json_int_t
dint(json_t *o, const char *path)
{
	json_t *x = dget(o, path);

	if (!json_is_integer(x))
		fail_msg("%s is not an integer", path);
	return json_integer_value(x);
}

static const char *
dstr(json_t *o, const char *path)
{
	json_t *x = dget(o, path);

	if (!json_is_string(x))
		fail_msg("%s is not a string", path);
	return json_string_value(x);
}

static void
test_backend_list(void **state)
{
	struct cfx *c = cfx_new(true);
	struct ctl_fx *f = c->f;
	char buf[512];
	const char *t;

	(void)state;
	fx_bst(f, 0, 0, 0)->flows = 10;
	fx_bst(f, 1, 0, 0)->flows = 5;
	fx_bst(f, 1, 0, 0)->active = 2;
	fx_bst(f, 0, 0, 0)->pkts[0] = 30;
	fx_bst(f, 0, 0, 0)->pkts[1] = 20;
	fx_bst(f, 0, 0, 0)->bytes[0] = 3000;
	fx_bst(f, 0, 0, 0)->bytes[1] = 2000;
	fx_bst(f, 1, 0, 1)->errors = 4;
	fx_bst(f, 1, 0, 1)->sched_errors = 4;
	t = run(c, "backend list", 0);
	assert_int_equal(nb_lines(t), 4);
	assert_string_equal(row(t, 0, buf),
			    "SERVICE BACKEND STATE ORIGIN HEALTH LAST-CHECK WEIGHT ACTIVE FLOWS ERRORS "
			    "PKTS(C>B/B>C) BYTES(C>B/B>C) SPL AGE P50/P99MS "
			    "5XX% INFL ERRORS/WEIGHT BY WORKER");
	assert_string_equal(row(t, 1, buf),
			    "tcp 10.11.0.100:80 10.12.0.11:80 active static none - 1 2 15 0 "
			    "30/20 3000/2000 - - - - 0 0/1 0/1");
	/* rr gives 1 to every backend that takes new flows, errors or
	 * not; the weight column is the configured one. */
	assert_string_equal(row(t, 2, buf),
			    "tcp 10.11.0.100:80 10.12.0.12:80 active static none - 3 0 0 4 "
			    "0/0 0/0 - - - - 0 0/1 4/1");
	assert_string_equal(row(t, 3, buf),
			    "udp 10.11.0.100:53 10.12.0.13:53 active static none - 1 0 0 0 "
			    "0/0 0/0 - - - - 0 0/1 0/1");
	assert_int_equal(json_array_size(dget(c->ctl.data, "backends")), 3);
	assert_string_equal(dstr(c->ctl.data, "backends.0.service"),
			    "tcp 10.11.0.100:80");
	assert_string_equal(dstr(c->ctl.data, "backends.0.backend"),
			    "10.12.0.11:80");
	assert_string_equal(dstr(c->ctl.data, "backends.0.state"), "active");
	assert_int_equal(dint(c->ctl.data, "backends.0.flows_total"), 15);
	assert_int_equal(dint(c->ctl.data, "backends.0.flows_active"), 2);
	assert_int_equal(dint(c->ctl.data, "backends.0.pkts_to_backend"), 30);
	assert_int_equal(dint(c->ctl.data, "backends.0.bytes_to_client"), 2000);
	assert_int_equal(dint(c->ctl.data, "backends.0.slot"), 0);
	assert_int_equal(dint(c->ctl.data, "backends.1.weight"), 3);
	assert_int_equal(dint(c->ctl.data, "backends.1.workers.1.sched_errors"),
			 4);
	assert_int_equal(dint(c->ctl.data, "backends.1.workers.1.weight"), 1);
	assert_int_equal(dint(c->ctl.data, "backends.1.workers.1.worker"), 1);

	/* One service; a drained backend; a removed one with flows. */
	fx_run(f, "backend drain tcp 10.11.0.100:80 10.12.0.12:80");
	fx_run(f, "backend del tcp 10.11.0.100:80 10.12.0.11:80");
	fx_publish(f);
	lb_view_sync(c->ctl.view);
	t = run(c, "backend list tcp 10.11.0.100:80", 0);
	assert_int_equal(nb_lines(t), 3);
	assert_string_equal(row(t, 1, buf),
			    "tcp 10.11.0.100:80 10.12.0.12:80 draining static none - 3 0 0 4 "
			    "0/0 0/0 - - - - 0 0/0 4/0");
	assert_string_equal(row(t, 2, buf),
			    "tcp 10.11.0.100:80 10.12.0.11:80 removed static none - 1 2 15 0 "
			    "30/20 3000/2000 - - - - 0 0/0 0/0");
	assert_string_equal(dstr(c->ctl.data, "backends.1.state"), "removed");

	/* A deleted service with flows is still listed, and can be named. */
	fx_bst(f, 0, 1, 0)->active = 1;
	fx_run(f, "service del udp 10.11.0.100:53");
	fx_publish(f);
	lb_view_sync(c->ctl.view);
	t = run(c, "backend list", 0);
	assert_string_equal(row(t, 3, buf),
			    "udp 10.11.0.100:53 10.12.0.13:53 removed static none - 1 1 0 0 "
			    "0/0 0/0 - - - - 0 0/0 0/0");
	t = run(c, "backend list udp 10.11.0.100:53", 0);
	assert_int_equal(nb_lines(t), 2);

	/* Errors. */
	run(c, "backend list tcp 10.11.0.100:81", -ENOENT);
	assert_string_equal(lb_cmd_out_errmsg(&f->out),
			    "no service tcp 10.11.0.100:81");
	assert_null(c->ctl.data);
	run(c, "backend list tcp", -EINVAL);
	assert_non_null(strstr(lb_cmd_out_errmsg(&f->out), "missing argument"));
	run(c, "backend list sctp 1.2.3.4:5", -EINVAL);
	run(c, "backend list tcp 1.2.3.4:5 x", -EINVAL);
	cfx_free(c);
}

static void
test_detached(void **state)
{
	struct cfx *c = cfx_new(false);
	char buf[512];
	const char *t;

	(void)state;
	t = run(c, "backend list", 0);
	assert_string_equal(row(t, 1, buf),
			    "tcp 10.11.0.100:80 10.12.0.11:80 active static none - 1 - - - - "
			    "- - - - - - -");
	assert_true(json_is_null(dget(c->ctl.data, "backends.0.slot")));
	t = run(c, "service list", 0);
	assert_string_equal(row(t, 1, buf),
			    "tcp 10.11.0.100:80 rr active 2/2 - - - - -");
	t = run(c, "stats", 0);
	assert_non_null(strstr(t, "dataplane: not attached\n"));
	assert_true(json_is_null(dget(c->ctl.data, "dataplane")));
	assert_false(json_is_true(dget(c->ctl.data, "control.attached")));
	assert_null(dget(c->ctl.data, "total"));
	cfx_free(c);
}

/* HTTP feedback in the lists: SPL, age, latency, 5xx, the policy. */
static void
test_l7(void **state)
{
	struct cfx *c = cfx_new(true);
	struct ctl_fx *f = c->f;
	struct lb_fb r[4];
	double spl = 0.8;
	char buf[512];
	const char *t;
	json_int_t s;

	(void)state;
	fx_run(f, "service add tcp 10.11.0.100:8080 sched rr http");
	fx_run(f, "backend add tcp 10.11.0.100:8080 10.12.0.21:80");
	fx_publish(f);
	lb_view_sync(c->ctl.view);
	run(c, "service show tcp 10.11.0.100:8080", 0);
	s = dint(c->ctl.data, "service.slot");
	/* Two responses at 1 s: 4 ms and 503; SPL 0.8 aged 2 ms. */
	memset(r, 0, sizeof(r));
	for (int i = 0; i < 3; i++) {
		r[i].svc = (uint16_t)s;
		r[i].ts_ns = 1000000000ull;
	}
	r[0].kind = LB_FB_HTTP;
	r[0].u32 = 200;
	r[0].flags = LB_FB_F_TIMED;
	r[0].v = 4000000;
	r[1] = r[0];
	r[1].u32 = 503;
	r[2].kind = LB_FB_SPL;
	r[2].flags = LB_FB_F_SPL_TIME;
	r[2].u32 = 2;
	memcpy(&r[2].v, &spl, sizeof(spl));
	lb_view_feed(c->ctl.view, 0, r, 3);
	fx_bst(f, 1, (uint32_t)s, 0)->inflight = 3;
	lb_view_tick(c->ctl.view);
	t = run(c, "backend list tcp 10.11.0.100:8080", 0);
	/* Read at the last record's time (no clock set): age 2 ms. */
	assert_string_equal(row(t, 1, buf),
			    "tcp 10.11.0.100:8080 10.12.0.21:80 active static none - 1 0 0 0 "
			    "0/0 0/0 0.800 2ms 3.97/3.97 50.0 3 0/1 0/1");
	assert_true(json_real_value(dget(c->ctl.data, "backends.0.l7.spl")) ==
		    0.8);
	assert_true(json_real_value(
			    dget(c->ctl.data, "backends.0.l7.spl_decayed")) ==
		    0.4);
	assert_int_equal(dint(c->ctl.data, "backends.0.l7.spl_records"), 1);
	assert_int_equal(dint(c->ctl.data, "backends.0.l7.http_records"), 2);
	t = run(c, "service show tcp 10.11.0.100:8080", 0);
	assert_non_null(strstr(t, "in flight (3.0 on average over the last "
				  "1 ticks)"));
	assert_non_null(strstr(t, "spl: total load indicator 0.4000 over 1 "
				  "instance(s), decay age, thresholds "
				  "0.2/0.8: would noop"));
	assert_non_null(strstr(t, "10.12.0.21:80         spl 0.800 age 2.0 ms "
				  "decayed 0.4000;"));
	assert_string_equal(dstr(c->ctl.data, "service.spl.decision"), "noop");
	assert_int_equal(dint(c->ctl.data, "service.spl.instances"), 1);
	assert_true(json_real_value(dget(c->ctl.data,
					 "service.inflight_avg")) == 3.0);
	/* The tcp service of the fixture is no http one: no SPL section. */
	t = run(c, "service show tcp 10.11.0.100:80", 0);
	assert_null(strstr(t, "spl:"));
	cfx_free(c);
}

static void
test_service_list_show(void **state)
{
	struct cfx *c = cfx_new(true);
	struct ctl_fx *f = c->f;
	char buf[512];
	const char *t;
	long long slot;

	(void)state;
	fx_bst(f, 0, 0, 0)->flows = 3;
	fx_bst(f, 1, 0, 1)->flows = 4;
	fx_bst(f, 1, 0, 1)->active = 1;
	fx_bst(f, 1, 0, 1)->errors = 2;
	fx_bst(f, 1, 0, 1)->pkts[0] = 9;
	fx_run(f, "backend drain tcp 10.11.0.100:80 10.12.0.12:80");
	fx_run(f, "service add tcp 10.11.0.100:443");
	fx_publish(f);
	/* Configured after the last publish: the dataplane lacks it. */
	fx_run(f, "service add tcp 10.11.0.100:8080");
	lb_view_sync(c->ctl.view);
	t = run(c, "service list", 0);
	assert_int_equal(nb_lines(t), 5);
	assert_string_equal(row(t, 0, buf),
			    "SERVICE SCHED STATE BACKENDS ACTIVE FLOWS ERRORS "
			    "PKTS(C>B/B>C) BYTES(C>B/B>C)");
	assert_string_equal(row(t, 1, buf),
			    "tcp 10.11.0.100:80 rr active 1/2 1 7 2 9/0 0/0");
	assert_string_equal(row(t, 3, buf),
			    "tcp 10.11.0.100:443 adaptive active 0/0 0 0 0 0/0 "
			    "0/0");
	assert_string_equal(row(t, 4, buf),
			    "tcp 10.11.0.100:8080 adaptive pending 0/0 - - - - "
			    "-");
	assert_string_equal(dstr(c->ctl.data, "services.0.sched"), "rr");
	assert_int_equal(dint(c->ctl.data, "services.0.flows_total"), 7);
	assert_int_equal(dint(c->ctl.data, "services.0.backends"), 2);
	assert_int_equal(dint(c->ctl.data, "services.0.backends_draining"), 1);
	assert_string_equal(dstr(c->ctl.data, "services.0.expiry"), "5s");
	assert_string_equal(dstr(c->ctl.data, "services.3.state"), "pending");

	t = run(c, "service show tcp 10.11.0.100:80", 0);
	assert_non_null(strstr(t, "service tcp 10.11.0.100:80: active (table "
				  "slot 0)\n"));
	assert_non_null(strstr(t, "  sched rr, http off, retries all, deferq "
				  "2048, retry-gap 1s, expiry 5s, "
				  "syn-timeout 1s\n"));
	assert_non_null(strstr(t, "flows: 1 active, 7 total, 0 ended; errors "
				  "2\n"));
	assert_non_null(strstr(t, "10.12.0.12:80"));
	assert_string_equal(dstr(c->ctl.data, "service.service"),
			    "tcp 10.11.0.100:80");
	assert_int_equal(
		json_array_size(dget(c->ctl.data, "service.backends_list")), 2);
	assert_string_equal(dstr(c->ctl.data, "service.backends_list.1.state"),
			    "draining");
	assert_true(json_is_null(dget(c->ctl.data, "service.check")));
	/* Without pools or rules: no pools line, the own pool in JSON. */
	assert_null(strstr(t, "pools:"));
	assert_int_equal(json_array_size(dget(c->ctl.data, "service.pools")),
			 1);
	assert_string_equal(dstr(c->ctl.data, "service.pools.0.name"),
			    "default");
	assert_int_equal(dint(c->ctl.data, "service.pools.0.weight_sum"), 4);
	assert_string_equal(dstr(c->ctl.data, "service.rule_default"),
			    "pool default");
	assert_string_equal(dstr(c->ctl.data, "service.rebind"), "off");
	run(c, "service set tcp 10.11.0.100:443 synproxy on", 0);
	run(c, "pool add tcp 10.11.0.100:443 api sched rr", 0);
	run(c, "backend add tcp 10.11.0.100:443 10.12.0.31:443 pool api "
	       "weight 5",
	    0);
	run(c, "rule add tcp 10.11.0.100:443 sni a.example pool api", 0);
	run(c, "rule default tcp 10.11.0.100:443 refuse rst", 0);
	t = run(c, "service show tcp 10.11.0.100:443", 0);
	assert_non_null(strstr(t, "  pools: default (adaptive, 0 backends), "
				  "api (rr, 1 backend); 1 rule, default "
				  "refuse rst\n"));
	assert_string_equal(dstr(c->ctl.data, "service.pools.1.name"), "api");
	assert_int_equal(dint(c->ctl.data, "service.pools.1.weight_sum"), 5);
	assert_true(json_is_null(dget(c->ctl.data, "service.pools.1.check")));
	assert_true(json_is_false(dget(c->ctl.data,
				       "service.pools.1.check_own")));
	assert_string_equal(dstr(c->ctl.data, "service.rules.0"),
			    "sni a.example pool api");
	assert_string_equal(dstr(c->ctl.data, "service.rule_default"),
			    "refuse rst");
	/* A pool's own check, and the service's for its own pool. */
	run(c, "service set tcp 10.11.0.100:443 check tcp", 0);
	run(c, "pool set tcp 10.11.0.100:443 api check http check-path /hz",
	    0);
	t = run(c, "service show tcp 10.11.0.100:443", 0);
	assert_non_null(strstr(t, "  pools: default (adaptive, 0 backends), "
				  "api (rr, 1 backend, check http /hz); "));
	assert_string_equal(dstr(c->ctl.data, "service.pools.0.check.type"),
			    "tcp");
	assert_true(json_is_false(dget(c->ctl.data,
				       "service.pools.0.check_own")));
	assert_string_equal(dstr(c->ctl.data, "service.pools.1.check.type"),
			    "http");
	assert_string_equal(dstr(c->ctl.data, "service.pools.1.check.path"),
			    "/hz");
	assert_true(json_is_true(dget(c->ctl.data,
				      "service.pools.1.check_own")));
	run(c, "pool set tcp 10.11.0.100:443 api check service", 0);
	run(c, "service set tcp 10.11.0.100:443 check none", 0);
	run(c, "service set tcp 10.11.0.100:443 http on rebind close", 0);
	t = run(c, "service show tcp 10.11.0.100:443", 0);
	assert_non_null(strstr(t, "1 rule, default refuse rst; rebind "
				  "close\n"));
	assert_string_equal(dstr(c->ctl.data, "service.rebind"), "close");
	/* The hits of its rule and default, summed over the workers, in
	 * JSON and in `rule list`; those of another slot not. */
	slot = dint(c->ctl.data, "service.slot");
	assert_int_equal(dint(c->ctl.data, "service.rule_hits.0"), 0);
	f->st[0].rule_hits[slot][0] = 5;
	f->st[1].rule_hits[slot][0] = 1;
	f->st[1].rule_hits[slot][LB_ROUTE_FLAT_RULES] = 2;
	f->st[1].rule_hits[slot == 0 ? 1 : 0][0] = 100;
	t = run(c, "service show tcp 10.11.0.100:443", 0);
	assert_int_equal(dint(c->ctl.data, "service.rule_hits.0"), 6);
	assert_int_equal(dint(c->ctl.data, "service.rule_default_hits"), 2);
	lb_conf_set_rule_hits(f->conf, lb_ctlcmd_rule_hits, &c->ctl);
	t = run(c, "rule list tcp 10.11.0.100:443", 0);
	assert_string_equal(t, "  N        HITS  RULE\n"
			       "  1           6  sni a.example pool api\n"
			       "  -           2  default refuse rst\n");
	lb_conf_set_rule_hits(f->conf, NULL, NULL);
	t = run(c, "rule list tcp 10.11.0.100:443", 0);
	assert_string_equal(t, "  N        HITS  RULE\n"
			       "  1           -  sni a.example pool api\n"
			       "  -           -  default refuse rst\n");
	run(c, "backend list tcp 10.11.0.100:443", 0);
	assert_string_equal(dstr(c->ctl.data, "backends.0.pool"), "api");
	/* Its backend takes no new flow: 0 of 1 in `service list`. */
	t = run(c, "service list", 0);
	assert_non_null(strstr(t, "tcp 10.11.0.100:443"));
	assert_string_equal(row(t, 3, buf),
			    "tcp 10.11.0.100:443 adaptive active 0/1 0 0 0 0/0 "
			    "0/0");
	run(c, "service set tcp 10.11.0.100:80 check http check-path /hz "
	       "check-rise 3",
	    0);
	run(c, "service show tcp 10.11.0.100:80", 0);
	assert_string_equal(dstr(c->ctl.data, "service.check.type"), "http");
	assert_string_equal(dstr(c->ctl.data, "service.check.path"), "/hz");
	assert_string_equal(dstr(c->ctl.data, "service.check.interval"), "2s");
	assert_int_equal(dint(c->ctl.data, "service.check.rise"), 3);
	assert_int_equal(dint(c->ctl.data, "service.check.status_max"), 399);
	run(c, "service show tcp 10.11.0.100:1", -ENOENT);
	run(c, "service show tcp", -EINVAL);
	cfx_free(c);
}

static void
test_stats(void **state)
{
	struct cfx *c = cfx_new(true);
	struct ctl_fx *f = c->f;
	const struct lb_fb r[] = {
		{.kind = LB_FB_TRIAL_OK},
		{.kind = LB_FB_FLOW_END},
	};
	char buf[512];
	const char *t;

	(void)state;
	f->st[0].rx = 100;
	f->st[1].rx = 50;
	f->st[1].drop[LB_DROP_NO_ROUTE] = 3;
	f->st[0].verdict[LB_PKT_DROP_FIRST] = 2;
	f->ft[0].stats.flows = 7;
	f->st[0].switch_max_ns = 900;
	f->st[1].switch_max_ns = 1200;
	f->st[0].expire_max = 128;
	f->st[1].expire_max = 40;
	f->st[0].flows_overdue = 5;
	f->st[1].flows_overdue = 7;
	f->st[1].src_budget.dropped = 9;
	f->shm->src_budget = (struct lb_src_budget_conf){
		.rate = 1000, .burst = 2000, .prefix = 24, .sources = 4096};
	lb_view_feed(c->ctl.view, 1, r, 2);
	c->ctl.ctr.publishes = 4;
	t = run(c, "stats", 0);
	assert_non_null(strstr(t, "lb-control: pid "));
	assert_non_null(strstr(t, "4 table(s) published, 0 refused, state "
				  "file /tmp/state.conf\n"));
	assert_non_null(strstr(t, "dataplane: pid 4242, 2 worker(s), 2 "
				  "port(s), table generation 1 (workers at 1 "
				  "1)\n"));
	assert_non_null(strstr(t, "1)\nsrc-budget: 1000 new flows/s, burst "
				  "2000, per /24, 4096 sources per worker\n"
				  "\nCOUNTER"));
	assert_string_equal(row(strstr(t, "\nsrc_budget_dropped") + 1, 0, buf),
			    "src_budget_dropped 9 0 9");
	assert_int_equal(dint(c->ctl.data, "dataplane.src_budget.rate"), 1000);
	assert_int_equal(dint(c->ctl.data, "dataplane.src_budget.prefix"), 24);
	assert_int_equal(dint(c->ctl.data, "total.src_budget_dropped"), 9);
	assert_non_null(strstr(t, "\nrx "));
	assert_string_equal(row(strstr(t, "\nrx ") + 1, 0, buf),
			    "rx 150 100 50");
	assert_string_equal(row(strstr(t, "\ndrop no_route") + 1, 0, buf),
			    "drop no_route 3 0 3");
	assert_string_equal(row(strstr(t, "\nflows_active") + 1, 0, buf),
			    "flows_active 7 7 0");
	/* A longest time: the total is the largest, not a sum. */
	assert_string_equal(row(strstr(t, "\nswitch_max_ns") + 1, 0, buf),
			    "switch_max_ns 1200 900 1200");
	assert_string_equal(row(strstr(t, "\nexpire_max ") + 1, 0, buf),
			    "expire_max 128 128 40");
	assert_string_equal(row(strstr(t, "\nflows_overdue") + 1, 0, buf),
			    "flows_overdue 12 5 7");
	assert_string_equal(row(strstr(t, "\nfeedback trial_ok") + 1, 0, buf),
			    "feedback trial_ok 1 0 1");
	assert_int_equal(dint(c->ctl.data, "total.rx"), 150);
	assert_int_equal(dint(c->ctl.data, "workers.1.rx"), 50);
	assert_int_equal(dint(c->ctl.data, "workers.1.lcore"), 2);
	assert_int_equal(dint(c->ctl.data, "total.drop.no_route"), 3);
	assert_int_equal(dint(c->ctl.data, "total.feedback.flow_end"), 1);
	assert_int_equal(dint(c->ctl.data, "total.flows_active"), 7);
	assert_int_equal(dint(c->ctl.data, "dataplane.conf_gen"), 1);
	assert_int_equal(dint(c->ctl.data, "dataplane.worker_conf_gen.1"), 1);
	assert_int_equal(dint(c->ctl.data, "dataplane.pid"), 4242);
	assert_int_equal(dint(c->ctl.data, "control.publishes"), 4);
	assert_true(json_is_true(dget(c->ctl.data, "control.attached")));
	assert_non_null(dget(c->ctl.data, "total.malformed"));
	f->shm->src_budget.rate = 0;
	t = run(c, "stats", 0);
	assert_non_null(strstr(t, "1)\nsrc-budget: off\n"));
	run(c, "stats now", -EINVAL);
	cfx_free(c);
}

static void
test_conf_lists_and_help(void **state)
{
	struct cfx *c = cfx_new(true);
	const char *t, *p;
	int n = 0;

	(void)state;
	t = run(c, "addr list", 0);
	assert_non_null(strstr(t, "10.11.0.1/24"));
	assert_string_equal(dstr(c->ctl.data, "addrs.1.addr"), "10.12.0.1/24");
	assert_int_equal(dint(c->ctl.data, "addrs.1.port"), 1);
	run(c, "route list", 0);
	assert_string_equal(dstr(c->ctl.data, "routes.0.prefix"),
			    "192.168.0.0/16");
	assert_string_equal(dstr(c->ctl.data, "routes.0.via"), "10.12.0.254");
	run(c, "snat list", 0);
	assert_string_equal(dstr(c->ctl.data, "snats.0.addr"), "10.12.0.2");
	run(c, "addr list extra", -EINVAL);
	/* One of each in help, with the new help line. */
	t = run(c, "help", 0);
	for (p = t; (p = strstr(p, "backend list")) != NULL; p++)
		n++;
	assert_int_equal(n, 1);
	assert_non_null(strstr(t, "with their counters"));
	assert_non_null(strstr(t, "stats"));
	assert_non_null(strstr(t, "service show PROTO VIP:PORT"));
	/* The conf module's help stays for the lists that only gain data. */
	assert_non_null(strstr(t, "List the local addresses"));
	assert_null(c->ctl.data);
	/* Registering twice collides. */
	assert_int_equal(lb_cmd_reg_build(c->f->reg,
					  &(struct lb_cmd_bind){"ctl", &c->ctl},
					  1, NULL),
			 -EEXIST);
	cfx_free(c);
}

/* lb-control's way: the conf module's table bound like the others, and
 * the lists it owns extended once. */
static void
test_conf_table(void **state)
{
	struct lb_conf *conf = lb_conf_create(NULL);
	struct lb_cmd_reg *r = lb_cmd_reg_create();
	struct lb_ctl ctl = {.conf = conf};
	const struct lb_cmd_bind b[] = {{"conf", conf}, {"ctl", &ctl}};
	struct lb_cmd_out o;

	(void)state;
	assert_non_null(conf);
	assert_non_null(r);
	lb_cmd_out_init(&o);
	assert_int_equal(lb_cmd_reg_build(r, b, 2, NULL), 0);
	assert_int_equal(lb_cmd_exec_line(r, "addr add 10.0.0.1/24 port 0", &o),
			 0);
	assert_int_equal(lb_cmd_exec_line(r, "addr list", &o), 0);
	assert_non_null(strstr(lb_cmd_out_text(&o), "10.0.0.1/24"));
	assert_non_null(ctl.data);
	assert_int_equal(lb_cmd_exec_line(r, "service list", &o), 0);
	assert_non_null(lb_cmd_lookup(r, 1, (char *const[]){"save", NULL},
				      NULL));
	json_decref(ctl.data);
	lb_cmd_out_free(&o);
	lb_cmd_reg_free(r);
	lb_conf_free(conf);
}

/* The service label of text, JSON and metrics. */
static void
test_svc_str(void **state)
{
	char b[LB_CTLCMD_SVC_STRLEN];

	(void)state;
	assert_string_equal(lb_ctlcmd_svc_str(6, 0x0a000001, 80, b),
			    "tcp 10.0.0.1:80");
	assert_string_equal(lb_ctlcmd_svc_str(17, 0xffffffff, 65535, b),
			    "udp 255.255.255.255:65535");
}

static void
test_needs_conf_commands(void **state)
{
	struct lb_cmd_reg *r = lb_cmd_reg_create();
	struct lb_ctl ctl = {0};

	(void)state;
	/* The lists it gives data to are the conf module's. */
	assert_int_equal(lb_cmd_reg_build(r, &(struct lb_cmd_bind){"ctl", &ctl},
					  1, NULL),
			 -ENOENT);
	lb_cmd_reg_free(r);
}

/* `backend list` fits the client's width: the columns that fit, the
 * most telling first, each as wide as its widest cell; all without one. */
static void
test_backend_list_width(void **state)
{
	static const struct {
		unsigned int width;
		const char *header;
	} rows[] = {
		{40, "SERVICE BACKEND STATE"},
		{60, "SERVICE BACKEND STATE HEALTH WEIGHT ACTIVE"},
		/* P50/P99MS would not fit; FLOWS, ranked after it, does. */
		{80, "SERVICE BACKEND STATE HEALTH WEIGHT ACTIVE FLOWS ERRORS "
		     "SPL"},
		/* Too narrow for anything: a row is still named. */
		{10, "SERVICE BACKEND"},
		{0, "SERVICE BACKEND STATE ORIGIN HEALTH LAST-CHECK WEIGHT "
		    "ACTIVE FLOWS ERRORS PKTS(C>B/B>C) BYTES(C>B/B>C) SPL AGE "
		    "P50/P99MS 5XX% INFL ERRORS/WEIGHT BY WORKER"},
	};
	struct cfx *c = cfx_new(true);
	char buf[512];

	(void)state;
	fx_bst(c->f, 0, 0, 0)->flows = 123456;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const char *t, *p;

		c->f->out.width = rows[i].width;
		t = run(c, "backend list", 0);
		assert_string_equal(row(t, 0, buf), rows[i].header);
		assert_int_equal(nb_lines(t), 4);
		for (p = t; rows[i].width > 10 && *p != '\0';
		     p += strcspn(p, "\n") + 1)
			assert_true(strcspn(p, "\n") <= rows[i].width);
		/* Columns line up: every row's second cell starts where
		 * the header's does, at the widest service name + 1. */
		for (int l = 1; l < 4; l++) {
			line_of(t, l, buf, sizeof(buf));
			assert_int_equal(buf[strlen("tcp 10.11.0.100:80")], ' ');
			assert_int_not_equal(buf[strlen("tcp 10.11.0.100:80") + 1],
					     ' ');
		}
		/* Numbers are aligned right, under the end of their header. */
		line_of(t, 0, buf, sizeof(buf));
		if (rows[i].width == 0 || rows[i].width >= 60) {
			const char *h = strstr(buf, "WEIGHT");
			size_t end = (size_t)(h - buf) + strlen("WEIGHT");

			line_of(t, 2, buf, sizeof(buf));
			assert_int_equal(buf[end - 1], '3');
			assert_int_equal(buf[end - 2], ' ');
		}
		json_decref(c->ctl.data);
		c->ctl.data = NULL;
	}
	/* The data is whole whatever the width. */
	c->f->out.width = 40;
	run(c, "backend list", 0);
	assert_int_equal(dint(c->ctl.data, "backends.0.flows_total"), 123456);
	assert_int_equal(dint(c->ctl.data, "backends.0.pkts_to_backend"), 0);
	c->f->out.width = 0;
	cfx_free(c);
}

/* An IPv6 service beside the IPv4 ones: `service list`, `service show`,
 * `backend list` and the conf lists, in text and data, with IPv6
 * addresses in RFC 5952 form, bracketed where a port follows; a deleted
 * IPv6 service with flows can still be named. */
static void
test_ip6_lists(void **state)
{
	struct cfx *c = cfx_new(true);
	struct ctl_fx *f = c->f;
	char buf[512];
	const char *t;
	int s;

	(void)state;
	fx_run(f, "addr add 2001:db8:c::1/64 port 1");
	fx_run(f, "route add ::/0 via 2001:db8:c::fe port 1");
	fx_run(f, "snat add 2001:db8:c::2 port 1");
	fx_run(f, "service add tcp [2001:db8:b::100]:80 sched rr");
	fx_run(f, "backend add tcp [2001:db8:b::100]:80 [2001:db8:c::11]:80");
	fx_run(f, "backend add tcp [2001:db8:b::100]:80 [2001:db8:c::31]:8080 "
		  "weight 2");
	fx_publish(f);
	lb_view_sync(c->ctl.view);
	s = 2; /* the third service's slot */
	assert_int_equal(fx_table(f)->svc[s].af, LB_CONF_AF_INET6);
	fx_bst(f, 0, (uint32_t)s, 0)->flows = 7;
	fx_bst(f, 1, (uint32_t)s, 1)->flows = 4;
	fx_bst(f, 1, (uint32_t)s, 1)->active = 1;

	t = run(c, "backend list tcp [2001:db8:b::100]:80", 0);
	assert_int_equal(nb_lines(t), 3);
	assert_string_equal(row(t, 1, buf),
			    "tcp [2001:db8:b::100]:80 [2001:db8:c::11]:80 active "
			    "static none - 1 0 7 0 0/0 0/0 - - - - 0 0/1 0/1");
	assert_string_equal(row(t, 2, buf),
			    "tcp [2001:db8:b::100]:80 [2001:db8:c::31]:8080 active "
			    "static none - 2 1 4 0 0/0 0/0 - - - - 0 0/1 0/1");
	assert_string_equal(dstr(c->ctl.data, "backends.0.service"),
			    "tcp [2001:db8:b::100]:80");
	assert_string_equal(dstr(c->ctl.data, "backends.0.backend"),
			    "[2001:db8:c::11]:80");
	assert_int_equal(dint(c->ctl.data, "backends.0.slot"), 0);
	assert_string_equal(dstr(c->ctl.data, "backends.1.backend"),
			    "[2001:db8:c::31]:8080");
	assert_int_equal(dint(c->ctl.data, "backends.1.flows_active"), 1);
	/* The IPv4 rows are as they were. */
	t = run(c, "backend list tcp 10.11.0.100:80", 0);
	assert_string_equal(dstr(c->ctl.data, "backends.0.backend"),
			    "10.12.0.11:80");

	t = run(c, "service list", 0);
	assert_non_null(strstr(t, "\ntcp [2001:db8:b::100]:80 "));
	t = run(c, "service show tcp [2001:DB8:B:0::100]:80", 0);
	assert_non_null(strstr(t, "[2001:db8:c::11]:80"));

	t = run(c, "addr list", 0);
	assert_string_equal(dstr(c->ctl.data, "addrs.2.addr"),
			    "2001:db8:c::1/64");
	t = run(c, "route list", 0);
	assert_string_equal(dstr(c->ctl.data, "routes.1.prefix"), "::/0");
	assert_string_equal(dstr(c->ctl.data, "routes.1.via"), "2001:db8:c::fe");
	assert_string_equal(dstr(c->ctl.data, "routes.0.prefix"),
			    "192.168.0.0/16");
	t = run(c, "snat list", 0);
	assert_string_equal(dstr(c->ctl.data, "snats.1.addr"), "2001:db8:c::2");

	/* Deleted with a flow left: still listed, still named. */
	fx_run(f, "service del tcp [2001:db8:b::100]:80");
	fx_publish(f);
	lb_view_sync(c->ctl.view);
	t = run(c, "backend list tcp [2001:db8:b::100]:80", 0);
	assert_int_equal(nb_lines(t), 3);
	assert_string_equal(dstr(c->ctl.data, "backends.0.state"), "removed");
	assert_string_equal(dstr(c->ctl.data, "backends.0.service"),
			    "tcp [2001:db8:b::100]:80");

	/* Errors name the service as written back. */
	run(c, "backend list tcp [2001:db8:b::101]:80", -ENOENT);
	assert_string_equal(lb_cmd_out_errmsg(&f->out),
			    "no service tcp [2001:db8:b::101]:80");
	run(c, "backend list tcp 2001:db8:b::101:80", -EINVAL);
	assert_string_equal(lb_cmd_out_errmsg(&f->out),
			    "IPv6 address:port '2001:db8:b::101:80' needs "
			    "brackets: [IPV6]:PORT");
	cfx_free(c);
}

/* A worker answering `neigh`: the snapshot it writes when asked. */
struct nworker {
	struct lb_neigh_view *v;
	struct lb_neigh_view_entry e4, e6;
	uint64_t lookups;
	_Atomic int stop;
	pthread_t th;
};

static void *
nworker_run(void *arg)
{
	struct nworker *n = arg;
	struct lb_neigh_view *v = n->v;

	while (!atomic_load(&n->stop)) {
		uint64_t asked = atomic_load(&v->asked);
		struct timespec ts = {0, 100000};

		if (asked != atomic_load(&v->answered)) {
			atomic_fetch_add(&v->seq, 1);
			memset(v->st, 0, sizeof(v->st));
			v->st[LB_NEIGH_VIEW_ARP].lookups = n->lookups;
			v->st[LB_NEIGH_VIEW_ND].lookups = 2 * n->lookups;
			v->nb[LB_NEIGH_VIEW_ARP] = 1;
			v->nb[LB_NEIGH_VIEW_ND] = 1;
			v->e[LB_NEIGH_VIEW_ARP][0] = n->e4;
			v->e[LB_NEIGH_VIEW_ND][0] = n->e6;
			atomic_fetch_add(&v->seq, 1);
			atomic_store(&v->answered, asked);
		}
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void
nentry(struct lb_neigh_view_entry *e, int af, const char *a, uint8_t mac5,
       uint8_t state, uint16_t port, uint64_t age_ns)
{
	memset(e, 0, sizeof(*e));
	assert_int_equal(inet_pton(af, a, e->addr), 1);
	e->mac[0] = 0x02;
	e->mac[5] = mac5;
	e->state = state;
	e->port = port;
	e->age_ns = age_ns;
}

static void
test_neigh(void **state)
{
	struct cfx *c = cfx_new(true);
	struct nworker n[FX_NW];
	char buf[256];
	const char *t;
	json_t *e;

	(void)state;
	memset(n, 0, sizeof(n));
	for (uint32_t i = 0; i < FX_NW; i++) {
		n[i].v = calloc(1, sizeof(*n[i].v));
		assert_non_null(n[i].v);
		n[i].lookups = 10 * (i + 1);
		c->f->w[i].neigh = n[i].v;
	}
	/* Both workers know the backend 10.12.0.11; the second heard of
	 * it last, with another MAC. Each has an IPv6 neighbour of its
	 * own, one resolving. */
	nentry(&n[0].e4, AF_INET, "10.12.0.11", 1, LB_NEIGH_STALE, 1,
	       40000000000ull);
	nentry(&n[1].e4, AF_INET, "10.12.0.11", 2, LB_NEIGH_REACHABLE, 1,
	       1500000000ull);
	nentry(&n[0].e6, AF_INET6, "2001:db8:12::11", 3, LB_NEIGH_REACHABLE,
	       1, 2000000000ull);
	nentry(&n[1].e6, AF_INET6, "2001:db8:12::12", 0, LB_NEIGH_INCOMPLETE,
	       LB_NEIGH_VIEW_NO_PORT, UINT64_MAX);
	n[1].e6.held = 2;
	/* Nobody answers: an error, after the wait. */
	run(c, "neigh", -ETIMEDOUT);
	assert_non_null(strstr(lb_cmd_out_errmsg(&c->f->out),
			       "did not show its neighbours"));
	for (uint32_t i = 0; i < FX_NW; i++)
		assert_int_equal(pthread_create(&n[i].th, NULL, nworker_run,
						&n[i]),
				 0);
	t = run(c, "neigh", 0);
	squeeze(line_of(t, 0, buf, sizeof(buf)), buf);
	assert_non_null(strstr(buf, "ARP (IPv4): 1 address(es), lookups 30 "));
	squeeze(line_of(t, 2, buf, sizeof(buf)), buf);
	assert_string_equal(buf, "10.12.0.11 02:00:00:00:00:02 reachable 1 "
				 "1.5s 2/2 0");
	squeeze(line_of(t, 3, buf, sizeof(buf)), buf);
	assert_non_null(strstr(buf, "neighbour discovery (IPv6): 2 "
				    "address(es), lookups 60 "));
	squeeze(line_of(t, 5, buf, sizeof(buf)), buf);
	assert_string_equal(buf, "2001:db8:12::11 02:00:00:00:00:03 "
				 "reachable 1 2.0s 1/2 0");
	squeeze(line_of(t, 6, buf, sizeof(buf)), buf);
	assert_string_equal(buf, "2001:db8:12::12 02:00:00:00:00:00 "
				 "incomplete - - 1/2 2");
	assert_int_equal(dint(c->ctl.data, "arp.counters.lookups"), 30);
	assert_int_equal(dint(c->ctl.data, "nd.counters.lookups"), 60);
	e = json_array_get(dget(c->ctl.data, "nd.entries"), 0);
	assert_string_equal(json_string_value(json_object_get(e, "addr")),
			    "2001:db8:12::11");
	assert_string_equal(json_string_value(json_object_get(e, "state")),
			    "reachable");
	assert_int_equal(json_integer_value(json_object_get(e, "port")), 1);
	e = json_array_get(dget(c->ctl.data, "nd.entries"), 1);
	assert_true(json_is_null(json_object_get(e, "port")));
	assert_true(json_is_null(json_object_get(e, "age_s")));
	run(c, "neigh arp", -EINVAL);
	for (uint32_t i = 0; i < FX_NW; i++) {
		atomic_store(&n[i].stop, 1);
		pthread_join(n[i].th, NULL);
		free(n[i].v);
	}
	cfx_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_backend_list),
		cmocka_unit_test(test_neigh),
		cmocka_unit_test(test_ip6_lists),
		cmocka_unit_test(test_backend_list_width),
		cmocka_unit_test(test_detached),
		cmocka_unit_test(test_service_list_show),
		cmocka_unit_test(test_l7),
		cmocka_unit_test(test_stats),
		cmocka_unit_test(test_conf_lists_and_help),
		cmocka_unit_test(test_svc_str),
		cmocka_unit_test(test_conf_table),
		cmocka_unit_test(test_needs_conf_commands),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
