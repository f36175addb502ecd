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
#include "ctlcmd.h"
#include "metrics.h"

/*
 * Checks the exposition's grammar: HELP then TYPE opening each family,
 * a family's samples together right after, no family twice, no series
 * twice, every value a number. Returns the number of samples.
 */
static unsigned int
check_exposition(const char *t)
{
	char fam[128] = "", typed[128] = "";
	char(*seen_fam)[128] = calloc(4096, sizeof(*seen_fam));
	char(*seen_series)[256] = calloc(65536, sizeof(*seen_series));
	unsigned int nfam = 0, nser = 0;

	assert_non_null(seen_fam);
	assert_non_null(seen_series);
	while (*t != '\0') {
		size_t n = strcspn(t, "\n");
		char line[1024];

		assert_int_equal(t[n], '\n');
		assert_true(n < sizeof(line));
		memcpy(line, t, n);
		line[n] = '\0';
		t += n + 1;
		if (strncmp(line, "# HELP ", 7) == 0) {
			sscanf(line + 7, "%127s", fam);
			for (unsigned int i = 0; i < nfam; i++)
				if (strcmp(seen_fam[i], fam) == 0)
					fail_msg("family %s twice", fam);
			snprintf(seen_fam[nfam++], 128, "%s", fam);
			typed[0] = '\0';
			continue;
		}
		if (strncmp(line, "# TYPE ", 7) == 0) {
			char name[128], type[32];

			assert_int_equal(
				sscanf(line + 7, "%127s %31s", name, type), 2);
			assert_string_equal(name, fam);
			assert_true(strcmp(type, "counter") == 0 ||
				    strcmp(type, "gauge") == 0);
			if (strcmp(type, "counter") == 0 &&
			    strstr(name, "_total") == NULL)
				fail_msg("counter %s without _total", name);
			snprintf(typed, sizeof(typed), "%s", name);
			continue;
		}
		assert_true(line[0] != '#');
		{
			size_t k = strcspn(line, "{ ");
			char *sp = strrchr(line, ' ');
			char *end;

			if (strncmp(line, typed, k) != 0 || typed[k] != '\0')
				fail_msg("sample outside its family: %s", line);
			assert_non_null(sp);
			strtod(sp + 1, &end);
			assert_int_equal(*end, '\0');
			*sp = '\0';
			for (unsigned int i = 0; i < nser; i++)
				if (strcmp(seen_series[i], line) == 0)
					fail_msg("series twice: %s", line);
			assert_true(nser < 65536);
			assert_true(strlen(line) < 256);
			memcpy(seen_series[nser++], line, strlen(line) + 1);
		}
	}
	free(seen_fam);
	free(seen_series);
	return nser;
}

static bool
has_line(const char *t, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = t; (p = strstr(p, line)) != NULL; p++)
		if ((p == t || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

#define ASSERT_LINE(t, l)                                                      \
	do {                                                                   \
		if (!has_line((t), (l)))                                       \
			fail_msg("missing line: %s", (l));                     \
	} while (0)

static void
test_detached(void **state)
{
	struct ctl_fx *f = fx_new();
	struct lb_ctl ctl = {.conf = f->conf};
	struct lb_cmd_out o;
	const char *t;

	(void)state;
	ctl.ctr.publishes = 3;
	ctl.ctr.grace_ns_last = 1500000;
	lb_cmd_out_init(&o);
	assert_int_equal(lb_metrics_format(&ctl, &o), 0);
	t = lb_cmd_out_text(&o);
	check_exposition(t);
	ASSERT_LINE(t, "lb_control_publishes_total 3");
	ASSERT_LINE(t, "lb_control_grace_seconds 0.0015");
	ASSERT_LINE(t, "lb_dataplane_attached 0");
	ASSERT_LINE(t, "# TYPE lb_control_api_requests_total counter");
	assert_null(strstr(t, "lb_rx_packets_total"));
	assert_int_equal(lb_metrics_format(NULL, &o), -EINVAL);
	lb_cmd_out_free(&o);
	fx_free(f);
}

static void
test_attached(void **state)
{
	struct ctl_fx *f = fx_new();
	struct lb_ctl ctl = {.conf = f->conf};
	const struct lb_fb r[] = {
		{.kind = LB_FB_TRIAL_OK, .svc = 0, .be = 1},
		{.kind = LB_FB_TRIAL_FAIL, .svc = 0, .be = 1, .u32 = 1},
		/* SPL 0.5 (a double's bits), generated on receipt. */
		{.kind = LB_FB_SPL, .v = 0x3fe0000000000000ull},
	};
	struct lb_cmd_out o;
	unsigned int n;
	const char *t;

	(void)state;
	fx_run(f, "addr add 10.11.0.1/24 port 0");
	fx_run(f, "addr add 10.12.0.1/24 port 1");
	fx_run(f, "service add tcp 10.11.0.100:80 http");
	fx_run(f, "backend add tcp 10.11.0.100:80 10.12.0.11:80");
	fx_run(f, "backend add tcp 10.11.0.100:80 10.12.0.12:80 weight 4");
	fx_run(f, "pool add tcp 10.11.0.100:80 api");
	fx_run(f, "service set tcp 10.11.0.100:80 synproxy on");
	fx_run(f, "rule add tcp 10.11.0.100:80 host api.example.com pool api");
	fx_run(f, "rule add tcp 10.11.0.100:80 path-prefix /v2/ pool api");
	fx_run(f, "service add udp 10.11.0.100:53 sched wrr");
	fx_run(f, "backend add udp 10.11.0.100:53 10.12.0.13:53 weight 2");
	fx_run(f, "pool add udp 10.11.0.100:53 dns");
	fx_run(f, "backend add udp 10.11.0.100:53 10.12.0.14:53 pool dns "
		  "weight 3");
	fx_publish(f);
	fx_bind_ctl(f, &ctl);
	ctl.view = lb_view_create(f->shm);
	assert_non_null(ctl.view);
	f->st[0].rx = 10;
	f->st[1].rx = 20;
	f->st[1].switch_max_ns = 2500000;
	f->st[1].flows_overdue = 6;
	f->st[1].expire_max_ns = 1500;
	f->st[0].flows_reclaimed = 11;
	f->st[1].drop[LB_DROP_NO_ROUTE] = 3;
	f->st[0].rule_hits[0][0] = 4;
	f->st[1].rule_hits[0][0] = 3;
	f->st[1].rule_hits[0][LB_ROUTE_FLAT_RULES] = 2;
	f->ft[1].stats.flows = 5;
	fx_bst(f, 0, 0, 0)->flows = 10;
	fx_bst(f, 1, 0, 0)->flows = 5;
	fx_bst(f, 1, 0, 0)->active = 2;
	fx_bst(f, 0, 0, 0)->bytes[1] = 999;
	fx_bst(f, 1, 0, 1)->sched_errors = 3;
	/* A removed backend with a flow left shows as removed. */
	fx_bst(f, 0, 1, 0)->active = 1;
	fx_run(f, "backend del udp 10.11.0.100:53 10.12.0.13:53");
	fx_publish(f);
	lb_view_sync(ctl.view);
	lb_view_feed(ctl.view, 1, r, 3);

	lb_cmd_out_init(&o);
	assert_int_equal(lb_metrics_format(&ctl, &o), 0);
	t = lb_cmd_out_text(&o);
	n = check_exposition(t);
	assert_true(n > 100);
	ASSERT_LINE(t, "lb_dataplane_attached 1");
	/* The families of each source together, sources in rank order. */
	{
		static const char *const order[] = {
			"# TYPE lb_control_publishes_total ",
			"# TYPE lb_dataplane_workers ",
			"# TYPE lb_service_flows_total ",
			"# TYPE lb_backend_flows_total ",
			"# TYPE lb_backend_spl ",
			"# TYPE lb_backend_health ",
		};
		const char *prev = t;

		for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
			const char *p = strstr(t, order[i]);

			if (p == NULL || p < prev)
				fail_msg("out of order: %s", order[i]);
			prev = p;
		}
	}
	ASSERT_LINE(t, "lb_dataplane_workers 2");
	ASSERT_LINE(t, "lb_conf_generation 2");
	ASSERT_LINE(t, "lb_worker_conf_generation{worker=\"1\"} 2");
	ASSERT_LINE(t, "lb_rx_packets_total{worker=\"0\"} 10");
	ASSERT_LINE(t, "lb_rx_packets_total{worker=\"1\"} 20");
	ASSERT_LINE(t, "lb_worker_switch_max_seconds{worker=\"1\"} 0.0025");
	ASSERT_LINE(t, "lb_worker_switch_max_seconds{worker=\"0\"} 0");
	ASSERT_LINE(t, "lb_flows_overdue{worker=\"1\"} 6");
	ASSERT_LINE(t, "lb_flows_overdue{worker=\"0\"} 0");
	ASSERT_LINE(t, "lb_expire_max_seconds{worker=\"1\"} 1.5e-06");
	ASSERT_LINE(t, "lb_flows_reclaimed_total{worker=\"0\"} 11");
	ASSERT_LINE(t, "lb_flows_active{worker=\"1\"} 5");
	ASSERT_LINE(t, "lb_dropped_packets_total{worker=\"1\","
		       "reason=\"no_route\"} 3");
	ASSERT_LINE(t, "lb_malformed_packets_total{worker=\"0\","
		       "reason=\"trunc_l2\"} 0");
	ASSERT_LINE(t, "lb_feedback_records_total{worker=\"1\","
		       "kind=\"trial_fail\"} 1");
	ASSERT_LINE(t, "lb_feedback_records_total{worker=\"1\","
		       "kind=\"spl\"} 1");
	ASSERT_LINE(t, "lb_service_flows_total{service=\"tcp "
		       "10.11.0.100:80\"} 15");
	ASSERT_LINE(t, "lb_service_bytes_total{service=\"tcp 10.11.0.100:80\","
		       "direction=\"to_client\"} 999");
	ASSERT_LINE(t, "lb_service_backends{service=\"udp 10.11.0.100:53\","
		       "state=\"removed\"} 1");
	ASSERT_LINE(t, "lb_pool_backends{service=\"tcp 10.11.0.100:80\","
		       "pool=\"default\"} 2");
	ASSERT_LINE(t, "lb_pool_weight_sum{service=\"tcp 10.11.0.100:80\","
		       "pool=\"default\"} 5");
	ASSERT_LINE(t, "lb_pool_backends{service=\"tcp 10.11.0.100:80\","
		       "pool=\"api\"} 0");
	ASSERT_LINE(t, "lb_pool_backends{service=\"udp 10.11.0.100:53\","
		       "pool=\"dns\"} 1");
	ASSERT_LINE(t, "lb_pool_weight_sum{service=\"udp 10.11.0.100:53\","
		       "pool=\"dns\"} 3");
	/* The deleted backend has left its pool, if not the table. */
	ASSERT_LINE(t, "lb_pool_backends{service=\"udp 10.11.0.100:53\","
		       "pool=\"default\"} 0");
	ASSERT_LINE(t, "lb_backend_flows_total{service=\"tcp 10.11.0.100:80\","
		       "backend=\"10.12.0.11:80\"} 15");
	ASSERT_LINE(t, "lb_backend_flows_active{service=\"tcp "
		       "10.11.0.100:80\",backend=\"10.12.0.11:80\"} 2");
	ASSERT_LINE(t, "lb_backend_weight{service=\"tcp 10.11.0.100:80\","
		       "backend=\"10.12.0.12:80\"} 4");
	ASSERT_LINE(t, "lb_backend_state{service=\"udp 10.11.0.100:53\","
		       "backend=\"10.12.0.13:53\",state=\"removed\"} 1");
	ASSERT_LINE(t, "lb_backend_state{service=\"udp 10.11.0.100:53\","
		       "backend=\"10.12.0.13:53\",state=\"active\"} 0");
	ASSERT_LINE(t, "lb_backend_sched_errors{service=\"tcp "
		       "10.11.0.100:80\",backend=\"10.12.0.12:80\","
		       "worker=\"1\"} 3");
	/* adaptive: E_m = floor(4^1.5) = 8, so 8 and ceil(8/4) = 2. */
	ASSERT_LINE(t, "lb_backend_worker_weight{service=\"tcp "
		       "10.11.0.100:80\",backend=\"10.12.0.11:80\","
		       "worker=\"1\"} 8");
	ASSERT_LINE(t, "lb_backend_worker_weight{service=\"tcp "
		       "10.11.0.100:80\",backend=\"10.12.0.12:80\","
		       "worker=\"1\"} 2");
	ASSERT_LINE(t, "lb_backend_trials_total{service=\"tcp "
		       "10.11.0.100:80\",backend=\"10.12.0.12:80\","
		       "worker=\"1\",result=\"fail\"} 1");
	/* HTTP feedback: one backend reported 0.5, the other nothing yet
	 * (0, as the seed's new instances): the load indicator is 0.25. */
	ASSERT_LINE(t, "lb_backend_spl{service=\"tcp 10.11.0.100:80\","
		       "backend=\"10.12.0.11:80\"} 0.5");
	ASSERT_LINE(t, "lb_backend_spl_decayed{service=\"tcp "
		       "10.11.0.100:80\",backend=\"10.12.0.11:80\"} 0.5");
	ASSERT_LINE(t, "lb_backend_spl_decayed{service=\"tcp "
		       "10.11.0.100:80\",backend=\"10.12.0.12:80\"} 0");
	ASSERT_LINE(t, "lb_backend_feedback_records_total{service=\"tcp "
		       "10.11.0.100:80\",backend=\"10.12.0.11:80\","
		       "kind=\"spl\"} 1");
	ASSERT_LINE(t, "lb_service_spl_load{service=\"tcp "
		       "10.11.0.100:80\"} 0.25");
	ASSERT_LINE(t, "lb_service_spl_instances{service=\"tcp "
		       "10.11.0.100:80\"} 2");
	ASSERT_LINE(t, "lb_service_spl_decision{service=\"tcp "
		       "10.11.0.100:80\",decision=\"noop\"} 1");
	ASSERT_LINE(t, "lb_service_spl_decision{service=\"tcp "
		       "10.11.0.100:80\",decision=\"increment\"} 0");
	/* Rule hits over both workers, by the numbers of `rule list`. */
	ASSERT_LINE(t, "lb_rule_hits_total{service=\"tcp 10.11.0.100:80\","
		       "rule=\"1\"} 7");
	ASSERT_LINE(t, "lb_rule_hits_total{service=\"tcp 10.11.0.100:80\","
		       "rule=\"2\"} 0");
	ASSERT_LINE(t, "lb_rule_hits_total{service=\"tcp 10.11.0.100:80\","
		       "rule=\"default\"} 2");
	/* A service without rules routes nothing: no rule lines. */
	assert_null(strstr(t, "lb_rule_hits_total{service=\"udp"));
	/* Not an http service: no L7 families. */
	assert_null(strstr(t, "lb_service_spl_load{service=\"udp"));
	lb_cmd_out_free(&o);
	lb_view_free(ctl.view);
	fx_free(f);
}

/* IPv6 in labels: an IPv6 service's label and its backends', IPv6 ones
 * bracketed before their port; the IPv4 labels beside them unchanged. */
static void
test_ip6_labels(void **state)
{
	struct ctl_fx *f = fx_new();
	struct lb_ctl ctl = {.conf = f->conf};
	struct lb_cmd_out o;
	const char *t;

	(void)state;
	fx_run(f, "addr add 10.11.0.1/24 port 0");
	fx_run(f, "addr add 2001:db8:c::1/64 port 1");
	fx_run(f, "service add tcp 10.11.0.100:80");
	fx_run(f, "backend add tcp 10.11.0.100:80 10.12.0.11:80");
	fx_run(f, "service add tcp [2001:db8:b::100]:443");
	fx_run(f, "backend add tcp [2001:db8:b::100]:443 [2001:db8:c::11]:443");
	fx_run(f, "backend add tcp [2001:db8:b::100]:443 [2001:db8:c::31]:443");
	fx_publish(f);
	fx_bind_ctl(f, &ctl);
	ctl.view = lb_view_create(f->shm);
	assert_non_null(ctl.view);
	fx_bst(f, 0, 0, 0)->flows = 3;
	fx_bst(f, 0, 1, 0)->flows = 5;
	fx_bst(f, 1, 1, 1)->flows = 2;
	lb_view_sync(ctl.view);
	lb_cmd_out_init(&o);
	assert_int_equal(lb_metrics_format(&ctl, &o), 0);
	t = lb_cmd_out_text(&o);
	check_exposition(t);
	ASSERT_LINE(t, "lb_service_flows_total{service=\"tcp "
		       "[2001:db8:b::100]:443\"} 7");
	ASSERT_LINE(t, "lb_backend_flows_total{service=\"tcp "
		       "[2001:db8:b::100]:443\",backend=\"[2001:db8:c::11]:443\"}"
		       " 5");
	ASSERT_LINE(t, "lb_backend_flows_total{service=\"tcp "
		       "[2001:db8:b::100]:443\",backend=\"[2001:db8:c::31]:443\"}"
		       " 2");
	ASSERT_LINE(t, "lb_service_flows_total{service=\"tcp "
		       "10.11.0.100:80\"} 3");
	ASSERT_LINE(t, "lb_backend_flows_total{service=\"tcp 10.11.0.100:80\","
		       "backend=\"10.12.0.11:80\"} 3");
	lb_cmd_out_free(&o);
	lb_view_free(ctl.view);
	fx_free(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_detached),
		cmocka_unit_test(test_attached),
		cmocka_unit_test(test_ip6_labels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
