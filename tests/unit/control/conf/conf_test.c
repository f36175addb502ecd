/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lb/conf.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define MS 1000000ull
#define SEC 1000000000ull

/* Names the failing row of a table before the assertion stops the test. */
#define NOTE_IF(cond, ...)                                                   \
	do {                                                                 \
		if (cond)                                                    \
			print_message(__VA_ARGS__);                          \
	} while (0)

/* The schedulers a test dataplane offers. */
static int
known(const char *name)
{
	static const char *const names[] = { "adaptive", "maglev", "rr",
					     "wrr" };

	for (size_t i = 0; i < NELEM(names); i++)
		if (strcmp(name, names[i]) == 0)
			return 1;
	return 0;
}

static int
known_no_maglev(const char *name)
{
	return strcmp(name, "maglev") != 0 && known(name);
}

static int
names_no_maglev(char *buf, size_t len, const char *sep)
{
	return snprintf(buf, len, "adaptive%srr%swrr", sep, sep);
}

#include "conf_fx.h"

static int
apply_text(struct fx *f, const char *text, const char *name,
	   unsigned int *nlines)
{
	FILE *m = fmemopen((void *)text, strlen(text), "r");
	int rc;

	assert_non_null(m);
	lb_cmd_out_reset(&f->o);
	rc = lb_cmd_apply_stream(f->r, m, name, &f->o, nlines);
	fclose(m);
	return rc;
}

/*
 * A small site: two ports, a secondary address, a routed SNAT address, an
 * HTTP service with a draining backend and a UDP service. Written in the
 * order and spelling of lb_conf_save(), so saving it gives it back.
 */
static const char base_conf[] =
	"addr add 10.0.0.1/24 port 0\n"
	"addr add 10.0.0.2/24 port 0\n"
	"addr add 10.1.0.1/16 port 1\n"
	"route add default via 10.0.0.254 port 0\n"
	"route add 172.16.0.0/12 via 10.1.0.254 port 1\n"
	"snat add 10.0.0.10 port 0\n"
	"snat add 10.1.0.10 port 1\n"
	"snat add 198.51.100.10 port 0\n"
	"service add tcp 192.0.2.10:80 sched maglev http\n"
	"backend add tcp 192.0.2.10:80 10.1.0.11:8080 weight 3\n"
	"backend add tcp 192.0.2.10:80 10.1.0.12:8080\n"
	"backend add tcp 192.0.2.10:80 10.1.0.13:8080\n"
	"backend drain tcp 192.0.2.10:80 10.1.0.13:8080\n"
	"service add udp 192.0.2.10:53\n"
	"backend add udp 192.0.2.10:53 10.1.0.21:53\n";

#define BASE_LINES 15u

static struct fx *
base_fx(void)
{
	struct fx *f = fx_new(known);
	unsigned int n;

	assert_int_equal(apply_text(f, base_conf, "base", &n), 0);
	assert_int_equal(n, BASE_LINES);
	return f;
}

static void
test_base_roundtrip(void **state)
{
	struct fx *f = base_fx();
	char *s = saved(f->c);

	(void)state;
	assert_string_equal(s, base_conf);
	/* one change per line */
	assert_int_equal(lb_conf_generation(f->c), BASE_LINES);
	assert_int_equal(lb_conf_validate(f->c, &f->o), 0);
	assert_int_equal(lb_conf_nb_addrs(f->c), 3);
	assert_int_equal(lb_conf_nb_routes(f->c), 2);
	assert_int_equal(lb_conf_nb_snats(f->c), 3);
	assert_int_equal(lb_conf_nb_svcs(f->c), 2);
	free(s);
	fx_free(f);
}

/* ---- defaults ---- */

static void
test_defaults(void **state)
{
	struct lb_conf_svc_key k = {.proto = LB_CONF_PROTO_TCP, .vip = 0xc000020b,
		.port = 80};
	struct lb_conf_svc_opts o;
	const struct lb_conf_svc *sv;
	struct fx *f = fx_new(known);

	(void)state;
	lb_conf_svc_opts_default(&o);
	assert_string_equal(o.sched, "adaptive");
	assert_false(o.http);
	assert_int_equal(o.retries, 0);
	assert_int_equal(o.deferq_len, 2048);
	assert_int_equal(o.retry_gap_ns, 1 * SEC);
	assert_int_equal(o.expiry_ns, 5 * SEC);
	assert_int_equal(o.syn_timeout_ns, 1 * SEC);
	assert_int_equal(lb_conf_svc_opts_check(f->c, LB_CONF_PROTO_TCP, &o,
						NULL),
			 0);

	ok(f, "service add tcp 192.0.2.11:80");
	ok(f, "backend add tcp 192.0.2.11:80 10.9.0.1:80");
	sv = lb_conf_svc_find(f->c, &k);
	assert_non_null(sv);
	assert_string_equal(sv->opts.sched, LB_CONF_SCHED_DEFAULT);
	assert_false(sv->opts.http);
	assert_int_equal(sv->opts.retries, LB_CONF_RETRIES_DEFAULT);
	assert_int_equal(sv->opts.deferq_len, LB_CONF_DEFERQ_DEFAULT);
	assert_int_equal(sv->opts.retry_gap_ns, LB_CONF_RETRY_GAP_DEFAULT_NS);
	assert_int_equal(sv->opts.expiry_ns, LB_CONF_EXPIRY_DEFAULT_NS);
	assert_int_equal(sv->opts.syn_timeout_ns,
			 LB_CONF_SYN_TIMEOUT_DEFAULT_NS);
	assert_int_equal(sv->nb_be, 1);
	assert_int_equal(sv->be[0].ip, 0x0a090001);
	assert_int_equal(sv->be[0].port, 80);
	assert_int_equal(sv->be[0].weight, 1);
	assert_false(sv->be[0].draining);

	/* options spelled at their defaults are the same service */
	ok(f, "service add tcp 192.0.2.12:80 sched adaptive retries 0 deferq "
	      "2048 retry-gap 0 expiry 5s syn-timeout 1000ms");
	fx_free(f);
}

static void
test_options_stored(void **state)
{
	struct lb_conf_svc_key k = {.proto = LB_CONF_PROTO_TCP, .vip = 0xc000020b,
		.port = 443};
	const struct lb_conf_svc *sv;
	struct fx *f = base_fx();

	(void)state;
	ok(f, "service add tcp 192.0.2.11:443 sched rr http retries 2 deferq "
	      "64 retry-gap 100ms expiry 10s syn-timeout 500ms");
	sv = lb_conf_svc_find(f->c, &k);
	assert_non_null(sv);
	assert_ptr_equal(sv, lb_conf_svc_at(f->c, 2));
	assert_string_equal(sv->opts.sched, "rr");
	assert_true(sv->opts.http);
	assert_int_equal(sv->opts.retries, 2);
	assert_int_equal(sv->opts.deferq_len, 64);
	assert_int_equal(sv->opts.retry_gap_ns, 100 * MS);
	assert_int_equal(sv->opts.expiry_ns, 10 * SEC);
	assert_int_equal(sv->opts.syn_timeout_ns, 500 * MS);
	assert_int_equal(sv->opts.gov[LB_CONF_GOV_ON], 0);
	assert_int_equal(sv->opts.gov[LB_CONF_GOV_STATUS], 503);
	assert_int_equal(sv->opts.gov[LB_CONF_GOV_PRIO], 1);

	ok(f, "service set tcp 192.0.2.11:443 governor on gov-ideal-rate on "
	      "gov-interval 500ms gov-window 4 gov-overload 10 gov-raise 20 "
	      "gov-release 2 gov-calm 5 gov-min-samples 50 default-priority 7 "
	      "reject-status 429 retry-after 30");
	assert_int_equal(sv->opts.gov[LB_CONF_GOV_ON], 1);
	assert_int_equal(sv->opts.gov[LB_CONF_GOV_IDEAL], 1);
	assert_int_equal(sv->opts.gov[LB_CONF_GOV_INTERVAL], 500 * MS);
	assert_int_equal(sv->opts.gov[LB_CONF_GOV_WINDOW], 4);
	assert_int_equal(sv->opts.gov[LB_CONF_GOV_OVERLOAD], 10);
	assert_int_equal(sv->opts.gov[LB_CONF_GOV_T], 20);
	assert_int_equal(sv->opts.gov[LB_CONF_GOV_R], 2);
	assert_int_equal(sv->opts.gov[LB_CONF_GOV_K], 5);
	assert_int_equal(sv->opts.gov[LB_CONF_GOV_MIN_SAMPLES], 50);
	assert_int_equal(sv->opts.gov[LB_CONF_GOV_PRIO], 7);
	assert_int_equal(sv->opts.gov[LB_CONF_GOV_STATUS], 429);
	assert_int_equal(sv->opts.gov[LB_CONF_GOV_RETRY], 30);
	{
		char *txt = saved(f->c);

		assert_non_null(strstr(
			txt, " syn-timeout 500ms governor on gov-ideal-rate on "
			     "gov-interval 500ms gov-window 4 gov-overload 10 "
			     "gov-raise 20 gov-release 2 gov-calm 5 "
			     "gov-min-samples 50 default-priority 7 "
			     "reject-status 429 retry-after 30\n"));
		free(txt);
	}

	ok(f, "service set tcp 192.0.2.11:443 http off deferq 0 sched wrr "
	      "governor off");
	assert_false(sv->opts.http);
	assert_int_equal(sv->opts.deferq_len, 0);
	assert_string_equal(sv->opts.sched, "wrr");
	assert_int_equal(sv->opts.retries, 2);

	assert_int_equal(lb_conf_addr_at(f->c, 2)->ip, 0x0a010001);
	assert_int_equal(lb_conf_addr_at(f->c, 2)->len, 16);
	assert_int_equal(lb_conf_addr_at(f->c, 2)->port, 1);
	assert_null(lb_conf_addr_at(f->c, 3));
	assert_int_equal(lb_conf_route_at(f->c, 0)->net, 0);
	assert_int_equal(lb_conf_route_at(f->c, 0)->len, 0);
	assert_int_equal(lb_conf_route_at(f->c, 0)->gw, 0x0a0000fe);
	assert_int_equal(lb_conf_route_at(f->c, 1)->port, 1);
	assert_null(lb_conf_route_at(f->c, 2));
	assert_int_equal(lb_conf_snat_at(f->c, 2)->ip, 0xc633640a);
	assert_null(lb_conf_snat_at(f->c, 3));
	assert_true(lb_conf_svc_at(f->c, 0)->be[2].draining);
	assert_int_equal(lb_conf_svc_at(f->c, 0)->be[0].weight, 3);
	assert_null(lb_conf_svc_at(f->c, 3));
	fx_free(f);
}

/* ---- every command's good path ---- */

struct good_case {
	const char *line;
	unsigned int gen_delta;
	const char *present; /* in the saved text afterwards, or NULL */
	const char *absent;  /* not in it, or NULL */
};

static const struct good_case good_cases[] = {
	{ "addr add 10.2.0.1/24 port 2", 1, "addr add 10.2.0.1/24 port 2\n",
	  NULL },
	{ "addr add 10.0.0.3/32 port 0", 1, "addr add 10.0.0.3/32 port 0\n",
	  NULL },
	/* /31: both addresses usable (RFC 3021) */
	{ "addr add 10.9.0.0/31 port 3", 1, "addr add 10.9.0.0/31 port 3\n",
	  NULL },
	{ "addr add 10.9.0.1/31 port 3", 1, "addr add 10.9.0.1/31 port 3\n",
	  NULL },
	{ "addr add 10.0.0.3/16 port 0", 1, "addr add 10.0.0.3/16 port 0\n",
	  NULL },
	/* a tagged port: saved with its VLAN */
	{ "addr add 10.2.0.1/24 port 2 vlan 20", 1,
	  "addr add 10.2.0.1/24 port 2 vlan 20\n", NULL },
	{ "addr del 10.0.0.2/24 port 0", 1, NULL, "10.0.0.2/" },
	{ "addr del 10.0.0.2", 1, NULL, "10.0.0.2/" },
	/* the secondary still reaches the default gateway */
	{ "addr del 10.0.0.1", 1, "addr add 10.0.0.2/24 port 0\n",
	  "10.0.0.1/" },
	{ "route add 10.8.0.0/16 via 10.0.0.254 port 0", 1,
	  "route add 10.8.0.0/16 via 10.0.0.254 port 0\n", NULL },
	{ "route add 10.8.0.1/32 via 10.1.0.254 port 1", 1,
	  "route add 10.8.0.1/32 via 10.1.0.254 port 1\n", NULL },
	{ "route del default", 1, NULL, "route add default" },
	{ "route del 172.16.0.0/12", 1, NULL, "172.16" },
	{ "snat add 10.0.0.11 port 0", 1, "snat add 10.0.0.11 port 0\n",
	  NULL },
	/* a SNAT address may be the local address of its own port */
	{ "snat add 10.0.0.1 port 0", 1, "snat add 10.0.0.1 port 0\n", NULL },
	{ "addr add 10.0.0.10/24 port 0", 1, "addr add 10.0.0.10/24 port 0\n",
	  NULL },
	{ "snat add 203.0.113.5 port 1", 1, "snat add 203.0.113.5 port 1\n",
	  NULL },
	{ "snat del 10.1.0.10", 1, NULL, "snat add 10.1.0.10" },
	{ "service add tcp 192.0.2.11:443 sched rr retries 2 deferq 64 "
	  "retry-gap 100ms expiry 10s syn-timeout 500ms",
	  1,
	  "service add tcp 192.0.2.11:443 sched rr retries 2 deferq 64 "
	  "retry-gap 100ms expiry 10s syn-timeout 500ms\n",
	  NULL },
	{ "service add tcp 192.0.2.11:80 err-memory 1 min-volume 0 max-eject "
	  "100 panic 0",
	  1,
	  "service add tcp 192.0.2.11:80 err-memory 1 min-volume 0 max-eject "
	  "100 panic 0\n",
	  NULL },
	{ "service add tcp 192.0.2.11:80 check http check-path /healthz "
	  "check-status 200 check-port 8081 check-interval 500ms "
	  "check-timeout 250ms check-rise 1 check-fall 2",
	  1,
	  "service add tcp 192.0.2.11:80 check http check-path /healthz "
	  "check-status 200-200 check-port 8081 check-interval 500ms "
	  "check-timeout 250ms check-rise 1 check-fall 2\n",
	  NULL },
	{ "service add tcp 192.0.2.11:80 check tcp check-status 200-399 "
	  "check-interval 2s check-timeout 2s check-rise 2 check-fall 3",
	  1, "service add tcp 192.0.2.11:80 check tcp\n", NULL },
	{ "service set tcp 192.0.2.10:80 check http check-path /a/b?c=1", 1,
	  "service add tcp 192.0.2.10:80 sched maglev http check http "
	  "check-path /a/b?c=1\n",
	  NULL },
	{ "service set tcp 192.0.2.10:80 err-memory 2 panic 0", 1,
	  "service add tcp 192.0.2.10:80 sched maglev http err-memory 2 "
	  "panic 0\n",
	  NULL },
	{ "service add tcp 192.0.2.11:80 err-memory 8 min-volume 10 max-eject "
	  "10 panic 50",
	  1, "service add tcp 192.0.2.11:80\n", NULL },
	{ "service add tcp 192.0.2.11:80", 1,
	  "service add tcp 192.0.2.11:80\n", NULL },
	{ "service add tcp 192.0.2.11:80 expiry 5000ms retry-gap 1000ms", 1,
	  "service add tcp 192.0.2.11:80\n", NULL },
	{ "service add tcp 192.0.2.11:80 retry-gap 0s", 1,
	  "service add tcp 192.0.2.11:80 retry-gap 0s\n", NULL },
	{ "service add tcp 192.0.2.11:80 retry-gap 1500ms", 1,
	  "service add tcp 192.0.2.11:80 retry-gap 1500ms\n", NULL },
	/* a VIP may be a local address */
	{ "service add tcp 10.0.0.1:80", 1, "service add tcp 10.0.0.1:80\n",
	  NULL },
	/* same VIP and port, other protocol */
	{ "service add udp 192.0.2.10:80", 1,
	  "service add udp 192.0.2.10:80\n", NULL },
	{ "service set tcp 192.0.2.10:80 retries 2 expiry 10s", 1,
	  "service add tcp 192.0.2.10:80 sched maglev http retries 2 "
	  "expiry 10s\n",
	  NULL },
	{ "service set tcp 192.0.2.10:80 http off sched adaptive", 1,
	  "service add tcp 192.0.2.10:80\n", NULL },
	{ "service set udp 192.0.2.10:53 syn-timeout 1m", 1,
	  "service add udp 192.0.2.10:53 syn-timeout 1m\n", NULL },
	{ "service set udp 192.0.2.10:53 timeout-udp 2h rst-rate 0", 1,
	  "service add udp 192.0.2.10:53 timeout-udp 2h rst-rate 0\n",
	  NULL },
	{ "service set udp 192.0.2.10:53 timeout-udp 2h "
	  "timeout-udp-unreplied 500ms rst-rate 0",
	  1,
	  "service add udp 192.0.2.10:53 timeout-udp 2h "
	  "timeout-udp-unreplied 500ms rst-rate 0\n",
	  NULL },
	/* back to its default: saved no more */
	{ "service set udp 192.0.2.10:53 timeout-udp 2h "
	  "timeout-udp-unreplied 5s rst-rate 0",
	  1, "service add udp 192.0.2.10:53 timeout-udp 2h rst-rate 0\n",
	  NULL },
	{ "service add tcp 192.0.2.12:80 timeout-established 168h "
	  "timeout-syn-recv 5s timeout-closing 1m timeout-time-wait 2s "
	  "timeout-closed 1s idle-rst off",
	  1,
	  "service add tcp 192.0.2.12:80 timeout-syn-recv 5s "
	  "timeout-established 168h timeout-closing 1m timeout-time-wait 2s "
	  "timeout-closed 1s idle-rst off\n",
	  NULL },
	/* the defaults: nothing changes, nothing to save */
	{ "service set tcp 192.0.2.10:80 timeout-established 15m "
	  "timeout-syn-recv 30s timeout-closing 7s timeout-time-wait 7s "
	  "timeout-closed 3000ms timeout-udp 5m timeout-udp-unreplied 5s "
	  "rst-rate 1000 idle-rst on",
	  0, "service add tcp 192.0.2.10:80 sched maglev http\n", NULL },
	/* nothing changes, so the generation stays */
	{ "service set tcp 192.0.2.10:80 sched maglev", 0,
	  "service add tcp 192.0.2.10:80 sched maglev http\n", NULL },
	{ "service del tcp 192.0.2.10:80", 1, NULL, "192.0.2.10:80" },
	{ "backend add udp 192.0.2.10:53 10.1.0.22:53 weight 65535", 1,
	  "backend add udp 192.0.2.10:53 10.1.0.22:53 weight 65535\n", NULL },
	/* the same backend in another service */
	{ "backend add tcp 192.0.2.10:80 10.1.0.21:53", 1,
	  "backend add tcp 192.0.2.10:80 10.1.0.21:53\n", NULL },
	{ "backend add tcp 192.0.2.10:80 10.1.0.11:8081", 1,
	  "backend add tcp 192.0.2.10:80 10.1.0.11:8081\n", NULL },
	{ "backend del tcp 192.0.2.10:80 10.1.0.12:8080", 1, NULL,
	  "10.1.0.12:8080" },
	{ "backend drain tcp 192.0.2.10:80 10.1.0.11:8080", 1,
	  "backend drain tcp 192.0.2.10:80 10.1.0.11:8080\n", NULL },
	{ "backend undrain tcp 192.0.2.10:80 10.1.0.13:8080", 1, NULL,
	  "backend drain" },
	{ "backend set tcp 192.0.2.10:80 10.1.0.12:8080 weight 7", 1,
	  "backend add tcp 192.0.2.10:80 10.1.0.12:8080 weight 7\n", NULL },
	{ "backend set tcp 192.0.2.10:80 10.1.0.11:8080 weight 1", 1,
	  "backend add tcp 192.0.2.10:80 10.1.0.11:8080\n", "weight 3" },
	{ "backend set tcp 192.0.2.10:80 10.1.0.11:8080 weight 3", 0,
	  "10.1.0.11:8080 weight 3\n", NULL },
	{ "addr list", 0, NULL, NULL },
	{ "route list", 0, NULL, NULL },
	{ "snat list", 0, NULL, NULL },
	{ "service add tcp 192.0.2.12:80 admit-rate 500 admit-key prefix "
	  "admit-prefix 16 admit-reject rst",
	  1,
	  "service add tcp 192.0.2.12:80 admit-rate 500 admit-key prefix "
	  "admit-prefix 16 admit-reject rst\n",
	  NULL },
	{ "service set tcp 192.0.2.10:80 admit-rate 200 admit-burst 40 "
	  "admit-cluster closed",
	  1, "admit-rate 200 admit-burst 40 admit-cluster closed", NULL },
	{ "service set tcp 192.0.2.10:80 admit-full closed "
	  "unfollowable admit-flow prio-trust 10.0.0.0/8,192.0.2.128/25",
	  1,
	  "http admit-full closed unfollowable admit-flow "
	  "prio-trust 10.0.0.0/8,192.0.2.128/25\n",
	  NULL },
	{ "service set tcp 192.0.2.10:80 admit-full overflow "
	  "unfollowable refuse prio-trust none",
	  0, "service add tcp 192.0.2.10:80 sched maglev http\n",
	  "prio-trust" },
	{ "service add udp 192.0.2.12:53 proxy-protocol v2", 1,
	  "service add udp 192.0.2.12:53 proxy-protocol v2\n", NULL },
	{ "service add tcp 192.0.2.12:25 check tcp proxy-protocol v1", 1,
	  "service add tcp 192.0.2.12:25 check tcp proxy-protocol v1\n",
	  NULL },
	{ "service add tcp 192.0.2.12:443 synproxy auto synproxy-mss 1400 "
	  "synproxy-calm 30s synproxy-syn-rate 5000",
	  1,
	  "service add tcp 192.0.2.12:443 synproxy auto synproxy-mss 1400 "
	  "synproxy-syn-rate 5000 synproxy-calm 30s\n",
	  NULL },
	{ "save", 0, NULL, NULL },
	{ "help", 0, NULL, NULL },
	{ "# a comment", 0, NULL, NULL },
};

static void
test_good_commands(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(good_cases); i++) {
		const struct good_case *c = &good_cases[i];
		struct fx *f = base_fx();
		uint64_t gen = lb_conf_generation(f->c);
		char *s;

		ok(f, c->line);
		s = saved(f->c);
		NOTE_IF((c->present != NULL && strstr(s, c->present) == NULL) ||
				(c->absent != NULL &&
				 strstr(s, c->absent) != NULL),
			"case %zu '%s' saved:\n%s", i, c->line, s);
		assert_int_equal(lb_conf_generation(f->c), gen + c->gen_delta);
		if (c->present != NULL)
			assert_non_null(strstr(s, c->present));
		if (c->absent != NULL)
			assert_null(strstr(s, c->absent));
		if (c->gen_delta == 0)
			assert_string_equal(s, base_conf);
		assert_int_equal(lb_conf_validate(f->c, &f->o), 0);
		free(s);
		fx_free(f);
	}
}

/* ---- every bad input: one exact line, nothing changed ---- */

struct bad_case {
	const char *line;
	int rc;
	const char *err;
};

static const struct bad_case bad_cases[] = {
	/* unknown commands */
	{ "servise add tcp 192.0.2.11:80", -EINVAL,
	  "unknown command 'servise'; try 'help'" },
	{ "service frob tcp", -EINVAL,
	  "unknown command 'service frob'; try 'help service'" },
	{ "service", -EINVAL,
	  "incomplete command 'service'; try 'help service'" },
	{ "service add \"tcp", -EINVAL,
	  "unterminated quote starting at column 13" },
	/* bad addresses */
	{ "addr add 10.0.0.300/24 port 0", -EINVAL,
	  "invalid address/length '10.0.0.300/24': expected a.b.c.d/LEN" },
	{ "addr add 10.3.0.1 port 0", -EINVAL,
	  "invalid address/length '10.3.0.1': expected a.b.c.d/LEN" },
	{ "snat add 10.0.0.1.5 port 0", -EINVAL,
	  "invalid IPv4 address '10.0.0.1.5'" },
	{ "backend add tcp 192.0.2.10:80 10.1.0.x:80", -EINVAL,
	  "invalid address:port '10.1.0.x:80': expected a.b.c.d:PORT" },
	{ "service add tcp 192.0.2.11", -EINVAL,
	  "invalid address:port '192.0.2.11': expected a.b.c.d:PORT" },
	{ "route add 10.8.0.0/16 via 10.0.0 port 0", -EINVAL,
	  "invalid IPv4 address '10.0.0'" },
	{ "route add 10.8.0.1/16 via 10.0.0.254 port 0", -EINVAL,
	  "prefix '10.8.0.1/16' has host bits set; the network is "
	  "10.8.0.0/16" },
	{ "addr add 127.0.0.1/8 port 0", -EINVAL,
	  "address 127.0.0.1 is not a unicast address" },
	{ "addr add 0.1.2.3/8 port 0", -EINVAL,
	  "address 0.1.2.3 is not a unicast address" },
	{ "addr add 10.0.0.0/24 port 0", -EINVAL,
	  "address 10.0.0.0 is the network address of 10.0.0.0/24" },
	{ "addr add 10.0.0.255/24 port 0", -EINVAL,
	  "address 10.0.0.255 is the broadcast address of 10.0.0.0/24" },
	{ "addr add 10.4.0.3/30 port 2", -EINVAL,
	  "address 10.4.0.3 is the broadcast address of 10.4.0.0/30" },
	{ "addr add 10.4.0.4/30 port 2", -EINVAL,
	  "address 10.4.0.4 is the network address of 10.4.0.4/30" },
	{ "snat add 224.0.0.5 port 0", -EINVAL,
	  "SNAT address 224.0.0.5 is not a unicast address" },
	{ "service add tcp 224.0.0.1:80", -EINVAL,
	  "VIP 224.0.0.1 is not a unicast address" },
	{ "backend add tcp 192.0.2.10:80 0.1.2.3:80", -EINVAL,
	  "backend 0.1.2.3 is not a unicast address" },
	{ "route add 10.8.0.0/16 via 255.255.255.255 port 0", -EINVAL,
	  "gateway 255.255.255.255 is not a unicast address" },
	/* ports out of range */
	{ "service add tcp 192.0.2.11:65536", -ERANGE,
	  "port 65536 out of range 1..65535 in '192.0.2.11:65536'" },
	{ "backend add tcp 192.0.2.10:80 10.1.0.14:0", -ERANGE,
	  "port 0 out of range 1..65535 in '10.1.0.14:0'" },
	{ "addr add 10.3.0.1/24 port 32", -ERANGE,
	  "port 32 out of range 0..31" },
	{ "addr add 10.3.0.1/24 port 2 vlan 4095", -ERANGE,
	  "vlan 4095 out of range 1..4094" },
	{ "addr add 10.3.0.1/24 port 2 vlan 0", -ERANGE,
	  "vlan 0 out of range 1..4094" },
	/* one VLAN per port */
	{ "addr add 10.3.0.1/24 port 0 vlan 20", -EINVAL,
	  "port 0 is untagged (address 10.0.0.1)" },
	{ "route add 10.8.0.0/16 via 10.0.0.254 port 40", -ERANGE,
	  "port 40 out of range 0..31" },
	{ "snat add 10.0.0.11 port -1", -EINVAL,
	  "invalid port '-1': expected an integer in 0..31" },
	/* duplicates and missing entries */
	{ "service add tcp 192.0.2.10:80", -EEXIST,
	  "service tcp 192.0.2.10:80 already exists" },
	{ "service add tcp 192.0.2.10:80 sched rr", -EEXIST,
	  "service tcp 192.0.2.10:80 already exists" },
	{ "service del tcp 192.0.2.10:81", -ENOENT,
	  "no service tcp 192.0.2.10:81" },
	{ "service del udp 192.0.2.10:80", -ENOENT,
	  "no service udp 192.0.2.10:80" },
	{ "service set tcp 192.0.2.99:80 retries 1", -ENOENT,
	  "no service tcp 192.0.2.99:80" },
	{ "backend add tcp 192.0.2.10:80 10.1.0.12:8080", -EEXIST,
	  "backend 10.1.0.12:8080 already exists in tcp 192.0.2.10:80" },
	{ "backend add tcp 192.0.2.10:80 10.1.0.12:8080 weight 5", -EEXIST,
	  "backend 10.1.0.12:8080 already exists in tcp 192.0.2.10:80" },
	{ "backend del tcp 192.0.2.10:80 10.1.0.99:8080", -ENOENT,
	  "no backend 10.1.0.99:8080 in tcp 192.0.2.10:80" },
	{ "backend drain tcp 192.0.2.10:80 10.1.0.12:9090", -ENOENT,
	  "no backend 10.1.0.12:9090 in tcp 192.0.2.10:80" },
	{ "backend undrain tcp 192.0.2.10:80 10.1.0.99:8080", -ENOENT,
	  "no backend 10.1.0.99:8080 in tcp 192.0.2.10:80" },
	{ "backend set udp 192.0.2.10:53 10.1.0.11:8080 weight 2", -ENOENT,
	  "no backend 10.1.0.11:8080 in udp 192.0.2.10:53" },
	/* backends of a missing service */
	{ "backend add tcp 192.0.2.10:81 10.1.0.11:8080", -ENOENT,
	  "no service tcp 192.0.2.10:81" },
	{ "backend del udp 192.0.2.11:53 10.1.0.21:53", -ENOENT,
	  "no service udp 192.0.2.11:53" },
	{ "backend drain tcp 192.0.2.11:80 10.1.0.11:8080", -ENOENT,
	  "no service tcp 192.0.2.11:80" },
	{ "addr add 10.0.0.1/24 port 0", -EEXIST,
	  "address 10.0.0.1 already exists (10.0.0.1/24 port 0)" },
	{ "addr add 10.0.0.1/16 port 0", -EEXIST,
	  "address 10.0.0.1 already exists (10.0.0.1/24 port 0)" },
	{ "addr del 10.9.9.9", -ENOENT, "no address 10.9.9.9" },
	{ "route add default via 10.0.0.253 port 0", -EEXIST,
	  "route default already exists (via 10.0.0.254 port 0)" },
	{ "route del 10.9.0.0/16", -ENOENT, "no route 10.9.0.0/16" },
	{ "snat add 10.0.0.10 port 0", -EEXIST,
	  "SNAT address 10.0.0.10 already exists (port 0)" },
	{ "snat del 10.0.0.99", -ENOENT, "no SNAT address 10.0.0.99" },
	/* schedulers */
	{ "service add tcp 192.0.2.11:80 sched foo", -EINVAL,
	  "unknown scheduler 'foo'" },
	{ "service set tcp 192.0.2.10:80 sched bar", -EINVAL,
	  "unknown scheduler 'bar'" },
	{ "service add tcp 192.0.2.11:80 sched Maglev", -EINVAL,
	  "invalid sched 'Maglev': expected lowercase letters, digits, '-', "
	  "'_' or '.'" },
	{ "service add tcp 192.0.2.11:80 sched "
	  "abcdefghijklmnopqrstuvwxyz0123456",
	  -ERANGE,
	  "sched 'abcdefghijklmnopqrstuvwxyz0123456' too long (more than 31 "
	  "bytes)" },
	/* one address, one role; subnets and ports */
	{ "snat add 10.0.0.1 port 1", -EINVAL,
	  "SNAT address 10.0.0.1 is inside subnet 10.0.0.0/24 of port 0, "
	  "not port 1" },
	{ "addr add 10.1.0.10/32 port 0", -EINVAL,
	  "subnet 10.1.0.10/32 of port 0 overlaps 10.1.0.0/16 of port 1" },
	{ "snat add 10.0.0.11 port 1", -EINVAL,
	  "SNAT address 10.0.0.11 is inside subnet 10.0.0.0/24 of port 0, "
	  "not port 1" },
	{ "addr add 198.51.100.1/24 port 1", -EINVAL,
	  "SNAT address 198.51.100.10 of port 0 is inside subnet "
	  "198.51.100.0/24 of port 1" },
	{ "addr add 10.0.5.1/16 port 1", -EINVAL,
	  "subnet 10.0.0.0/16 of port 1 overlaps 10.0.0.0/24 of port 0" },
	{ "addr add 10.1.5.1/24 port 2", -EINVAL,
	  "subnet 10.1.5.0/24 of port 2 overlaps 10.1.0.0/16 of port 1" },
	{ "snat add 192.0.2.10 port 0", -EINVAL,
	  "SNAT address 192.0.2.10 is the VIP of tcp 192.0.2.10:80" },
	{ "snat add 10.1.0.11 port 1", -EINVAL,
	  "SNAT address 10.1.0.11 is a backend of tcp 192.0.2.10:80" },
	{ "snat add 10.0.0.254 port 0", -EINVAL,
	  "SNAT address 10.0.0.254 is the gateway of route default" },
	{ "service add tcp 10.0.0.10:80", -EINVAL,
	  "VIP 10.0.0.10 is a SNAT address" },
	{ "service add tcp 10.1.0.21:80", -EINVAL,
	  "VIP 10.1.0.21 is a backend of udp 192.0.2.10:53" },
	{ "service add tcp 10.0.0.254:80", -EINVAL,
	  "VIP 10.0.0.254 is the gateway of route default" },
	{ "backend add udp 192.0.2.10:53 192.0.2.10:80", -EINVAL,
	  "backend 192.0.2.10 is the VIP of tcp 192.0.2.10:80" },
	{ "backend add tcp 192.0.2.10:80 10.0.0.2:80", -EINVAL,
	  "backend 10.0.0.2 is a local address (10.0.0.2/24 port 0)" },
	{ "backend add tcp 192.0.2.10:80 198.51.100.10:80", -EINVAL,
	  "backend 198.51.100.10 is a SNAT address" },
	{ "addr add 10.1.0.11/24 port 1", -EINVAL,
	  "address 10.1.0.11 is a backend of tcp 192.0.2.10:80" },
	{ "addr add 10.0.0.254/24 port 0", -EINVAL,
	  "address 10.0.0.254 is the gateway of route default" },
	{ "route add 10.8.0.0/16 via 10.0.0.10 port 0", -EINVAL,
	  "gateway 10.0.0.10 is a SNAT address" },
	{ "route add 10.8.0.0/16 via 10.0.0.1 port 0", -EINVAL,
	  "gateway 10.0.0.1 is a local address (10.0.0.1/24 port 0)" },
	{ "route add 10.8.0.0/16 via 192.0.2.10 port 0", -EINVAL,
	  "gateway 192.0.2.10 is the VIP of tcp 192.0.2.10:80" },
	{ "route add 10.8.0.0/16 via 10.2.0.1 port 0", -EINVAL,
	  "gateway 10.2.0.1 is not in a connected subnet of port 0" },
	{ "route add 10.8.0.0/16 via 10.0.0.254 port 1", -EINVAL,
	  "gateway 10.0.0.254 is not in a connected subnet of port 1" },
	{ "addr del 10.0.0.1/16", -EINVAL,
	  "address 10.0.0.1 is configured as 10.0.0.1/24 port 0" },
	{ "addr del 10.0.0.1 port 1", -EINVAL,
	  "address 10.0.0.1 is configured as 10.0.0.1/24 port 0" },
	{ "addr del 10.1.0.1", -EBUSY,
	  "address 10.1.0.1/16 is needed by route 172.16.0.0/12 via "
	  "10.1.0.254" },
	/* argument shapes */
	{ "addr add 10.3.0.1/24", -EINVAL,
	  "missing 'port N'; usage: addr add IP/PREFIX port N [vlan V]" },
	{ "addr add", -EINVAL,
	  "missing argument; usage: addr add IP/PREFIX port N [vlan V]" },
	{ "addr add 10.3.0.1/24 port 0 port 1", -EINVAL,
	  "option 'port' given twice" },
	{ "addr add 10.3.0.1/24 port", -EINVAL,
	  "option 'port' needs a value" },
	{ "addr add 10.3.0.1/24 dev 0", -EINVAL,
	  "unknown option 'dev'; expected port or vlan" },
	{ "route add 10.8.0.0/16 port 0", -EINVAL,
	  "missing 'via GW'; usage: route add PREFIX via GW port N" },
	{ "route add 10.8.0.0/16 via 10.0.0.254", -EINVAL,
	  "missing 'port N'; usage: route add PREFIX via GW port N" },
	{ "route del", -EINVAL, "missing argument; usage: route del PREFIX" },
	{ "snat del 10.0.0.10 port 0", -EINVAL,
	  "unexpected argument 'port'; usage: snat del IP" },
	/* service options */
	{ "service add tcp 192.0.2.11:80 retries 257", -ERANGE,
	  "retries 257 out of range 0..256" },
	{ "service add tcp 192.0.2.11:80 deferq 2000000", -ERANGE,
	  "deferq 2000000 out of range 0..1048576" },
	{ "service add tcp 192.0.2.11:80 expiry 0s", -ERANGE,
	  "expiry 0s out of range 1ms..24h" },
	{ "service add tcp 192.0.2.11:80 retry-gap 2h", -ERANGE,
	  "retry-gap 2h out of range 0s..1h" },
	{ "service add tcp 192.0.2.11:80 syn-timeout 2m", -ERANGE,
	  "syn-timeout 2m out of range 1ms..1m" },
	{ "service add tcp 192.0.2.11:80 timeout-established 169h", -ERANGE,
	  "timeout-established 169h out of range 1ms..168h" },
	{ "service add tcp 192.0.2.11:80 timeout-udp 0s", -ERANGE,
	  "timeout-udp 0s out of range 1ms..168h" },
	{ "service add udp 192.0.2.11:53 timeout-udp-unreplied 0s", -ERANGE,
	  "timeout-udp-unreplied 0s out of range 1ms..168h" },
	{ "service add udp 192.0.2.11:53 timeout-udp-unreplied 169h",
	  -ERANGE, "timeout-udp-unreplied 169h out of range 1ms..168h" },
	{ "service add tcp 192.0.2.11:80 rst-rate 1000001", -ERANGE,
	  "rst-rate 1000001 out of range 0..1000000" },
	{ "service add tcp 192.0.2.11:80 idle-rst maybe", -EINVAL,
	  "invalid idle-rst 'maybe': expected on or off" },
	{ "service add tcp 192.0.2.11:80 err-memory 0", -ERANGE,
	  "err-memory 0 out of range 1..1024" },
	{ "service add tcp 192.0.2.11:80 max-eject 101", -ERANGE,
	  "max-eject 101 out of range 1..100" },
	{ "service add tcp 192.0.2.11:80 panic 101", -ERANGE,
	  "panic 101 out of range 0..100" },
	{ "service add tcp 192.0.2.11:80 min-volume 1000001", -ERANGE,
	  "min-volume 1000001 out of range 0..1000000" },
	{ "service add tcp 192.0.2.11:80 retry-gap 1s expiry 1s", -EINVAL,
	  "retry-gap 1s must be shorter than expiry 1s" },
	{ "service add tcp 192.0.2.11:80 expiry 500", -EINVAL,
	  "invalid expiry '500': expected an integer and a unit (ns, us, ms, "
	  "s, m, h), e.g. 500ms" },
	{ "service add udp 192.0.2.11:53 http", -EINVAL,
	  "http needs a tcp service" },
	{ "service add tcp 192.0.2.11:80 governor on", -EINVAL,
	  "governor needs http" },
	{ "service add tcp 192.0.2.11:80 rebind close", -EINVAL,
	  "rebind close needs http on: only a followed connection's later "
	  "requests are read" },
	{ "service add tcp 192.0.2.11:80 http rebind again", -EINVAL,
	  "rebind: expected off or close" },
	{ "service add tcp 192.0.2.11:80 http reject-status 500", -EINVAL,
	  "reject-status must be 503 or 429" },
	{ "service add tcp 192.0.2.11:80 http gov-raise 2 gov-release 3",
	  -EINVAL, "gov-release must not exceed gov-raise" },
	{ "service add tcp 192.0.2.11:80 admit-rate 100 admit-key host",
	  -EINVAL,
	  "admit-key: expected svc, client, prefix, client-svc or prio" },
	{ "service add tcp 192.0.2.11:80 admit-rate 1000 admit-burst 9",
	  -EINVAL,
	  "admit-burst: below admit-rate / 100 (10 ms of the rate), so "
	  "tokens would be lost while throttled" },
	{ "service add tcp 192.0.2.11:80 admit-burst 9", -EINVAL,
	  "admit-burst and admit-cluster need an admit-rate" },
	{ "service add tcp 192.0.2.11:80 admit-rate 10 admit-key client "
	  "admit-cluster open",
	  -EINVAL, "admit-cluster: only with admit-key svc" },
	{ "service add tcp 192.0.2.11:80 admit-full maybe", -EINVAL,
	  "admit-full: expected overflow, open or closed" },
	{ "service add tcp 192.0.2.11:80 unfollowable pass", -EINVAL,
	  "unfollowable: expected refuse or admit-flow" },
	{ "service add tcp 192.0.2.11:80 prio-trust 10.0.0.1/8", -EINVAL,
	  "prefix '10.0.0.1/8' has host bits set; the network is "
	  "10.0.0.0/8" },
	{ "service add tcp 192.0.2.11:80 prio-trust "
	  "1.0.0.0/8,2.0.0.0/8,3.0.0.0/8,4.0.0.0/8,5.0.0.0/8",
	  -EINVAL, "prio-trust: at most 4 prefixes" },
	{ "service add tcp 192.0.2.11:80 admit-rate 10 admit-reject reset",
	  -EINVAL, "admit-reject: expected drop or rst" },
	{ "service add tcp 192.0.2.11:80 admit-prefix 33", -ERANGE,
	  "admit-prefix 33 out of range 1..32" },
	{ "service add udp 192.0.2.11:53 check tcp", -EINVAL,
	  "check tcp needs a tcp service" },
	{ "service add tcp 192.0.2.11:80 check ping", -EINVAL,
	  "unknown check 'ping': expected none, tcp or http" },
	{ "service add tcp 192.0.2.11:80 check http check-path health", -EINVAL,
	  "check-path must start with '/'" },
	{ "service add tcp 192.0.2.11:80 check-status 99", -EINVAL,
	  "invalid check-status '99': expected LO or LO-HI in 100..599" },
	{ "service add tcp 192.0.2.11:80 check-status 300-200", -EINVAL,
	  "invalid check-status '300-200': expected LO or LO-HI in 100..599" },
	{ "service add tcp 192.0.2.11:80 check-status 200-3999", -ERANGE,
	  "check-status: '200-3999' must be 1..7 bytes" },
	{ "service add tcp 192.0.2.11:80 check-status 2xx", -EINVAL,
	  "invalid check-status '2xx': expected LO or LO-HI in 100..599" },
	{ "service add tcp 192.0.2.11:80 check-rise 0", -ERANGE,
	  "check-rise 0 out of range 1..100" },
	{ "service add tcp 192.0.2.11:80 check-interval 10ms", -ERANGE,
	  "check-interval 10ms out of range 100ms..1h" },
	{ "service add udp 192.0.2.11:53 proxy-protocol v1", -EINVAL,
	  "proxy-protocol v1 has no form for udp; use v2" },
	{ "service add udp 192.0.2.11:53 synproxy on", -EINVAL,
	  "synproxy needs a tcp service" },
	{ "service add tcp 192.0.2.11:80 synproxy yes", -EINVAL,
	  "unknown synproxy 'yes': expected off, on or auto" },
	{ "service add tcp 192.0.2.11:80 synproxy-wscale 15", -ERANGE,
	  "synproxy-wscale 15 out of range 0..14" },
	{ "service add tcp 192.0.2.11:80 synproxy-calm 100ms", -ERANGE,
	  "synproxy-calm 100ms out of range 1s..24h" },
	{ "service add tcp 192.0.2.11:80 proxy-protocol v3", -EINVAL,
	  "proxy-protocol: expected off, v1 or v2" },
	{ "service add tcp 192.0.2.11:80 http proxy-protocol v1", -EINVAL,
	  "proxy-protocol v1 cannot be combined with http" },
	{ "service add tcp 192.0.2.11:80 check http proxy-protocol v2",
	  -EINVAL,
	  "proxy-protocol v2 cannot be combined with check http (its "
	  "requests carry no header); use check tcp" },
	{ "service add icmp 192.0.2.11:80", -EINVAL,
	  "invalid protocol 'icmp': expected tcp or udp" },
	{ "service add tcp 192.0.2.11:80 weight 2", -EINVAL,
	  "unknown option 'weight'; expected sched, http, retries, deferq, "
	  "retry-gap, expiry, syn-timeout, governor, gov-ideal-rate, "
	  "gov-interval, gov-window, gov-overload, gov-raise, gov-release, "
	  "gov-calm, gov-min-samples, default-priority, reject-status, "
	  "retry-after, spl-header, spl-time-header, priority-header, "
	  "expect-header, orca-header, errors, error-exclude, default-expect, "
	  "rebind, err-memory, min-volume, ..." },
	{ "service add tcp 192.0.2.11:80 http on", -EINVAL,
	  "unknown option 'on'; expected sched, http, retries, deferq, "
	  "retry-gap, expiry, syn-timeout, governor, gov-ideal-rate, "
	  "gov-interval, gov-window, gov-overload, gov-raise, gov-release, "
	  "gov-calm, gov-min-samples, default-priority, reject-status, "
	  "retry-after, spl-header, spl-time-header, priority-header, "
	  "expect-header, orca-header, errors, error-exclude, default-expect, "
	  "rebind, err-memory, min-volume, ..." },
	{ "service set tcp 192.0.2.10:80", -EINVAL,
	  "missing argument; usage: service set PROTO VIP:PORT OPTION "
	  "VALUE..." },
	{ "service set tcp 192.0.2.10:80 http", -EINVAL,
	  "option 'http' needs a value" },
	{ "service set tcp 192.0.2.10:80 http maybe", -EINVAL,
	  "invalid http 'maybe': expected on or off" },
	/* all options of a set change together or not at all */
	{ "service set tcp 192.0.2.10:80 retries 2 expiry 0s", -ERANGE,
	  "expiry 0s out of range 1ms..24h" },
	{ "service set tcp 192.0.2.10:80 retries 2 retry-gap 10s", -EINVAL,
	  "retry-gap 10s must be shorter than expiry 5s" },
	{ "service set udp 192.0.2.10:53 http on", -EINVAL,
	  "http needs a tcp service" },
	{ "service set tcp 192.0.2.10:80 proxy-protocol v1 http on", -EINVAL,
	  "proxy-protocol v1 cannot be combined with http" },
	{ "service del tcp 192.0.2.10:80 extra", -EINVAL,
	  "unexpected argument 'extra'; usage: service del PROTO VIP:PORT" },
	/* backends */
	{ "backend add tcp 192.0.2.10:80 10.1.0.14:8080 weight 0", -ERANGE,
	  "weight 0 out of range 1..65535" },
	{ "backend add tcp 192.0.2.10:80 10.1.0.14:8080 weight 65536", -ERANGE,
	  "weight 65536 out of range 1..65535" },
	{ "backend add tcp 192.0.2.10:80", -EINVAL,
	  "missing argument; usage: backend add PROTO VIP:PORT IP:PORT "
	  "[weight W] [pool NAME]" },
	{ "backend set tcp 192.0.2.10:80 10.1.0.11:8080", -EINVAL,
	  "missing 'weight W'; usage: backend set PROTO VIP:PORT IP:PORT "
	  "weight W" },
	{ "backend set tcp 192.0.2.10:80 10.1.0.11:8080 weight 0", -ERANGE,
	  "weight 0 out of range 1..65535" },
	{ "backend drain tcp 192.0.2.10:80 10.1.0.13:8080", -EINVAL,
	  "backend 10.1.0.13:8080 of tcp 192.0.2.10:80 is already draining" },
	{ "backend undrain tcp 192.0.2.10:80 10.1.0.11:8080", -EINVAL,
	  "backend 10.1.0.11:8080 of tcp 192.0.2.10:80 is not draining" },
	{ "backend drain tcp 192.0.2.10:80 10.1.0.11:8080 now", -EINVAL,
	  "unexpected argument 'now'; usage: backend drain PROTO VIP:PORT "
	  "IP:PORT" },
	{ "save now", -EINVAL, "unexpected argument 'now'; usage: save" },
};

/* Runs each of @p cases on @p f, whose saved text is @p base: each fails
 * with its one line, and leaves no trace. */
static void
bad_rows(struct fx *f, const char *base, const struct bad_case *cases,
	 size_t n)
{
	uint64_t gen = lb_conf_generation(f->c);

	for (size_t i = 0; i < n; i++) {
		const struct bad_case *c = &cases[i];
		char *s;
		int rc = run(f, c->line);

		NOTE_IF(rc != c->rc || strcmp(f->o.errmsg, c->err) != 0,
			"case %zu '%s': %d '%s'\n", i, c->line, rc,
			f->o.errmsg);
		assert_int_equal(rc, c->rc);
		assert_string_equal(f->o.errmsg, c->err);
		assert_null(strchr(f->o.errmsg, '\n'));
		/* a failed command writes no output either */
		assert_string_equal(lb_cmd_out_text(&f->o), "");
		s = saved(f->c);
		assert_string_equal(s, base);
		assert_int_equal(lb_conf_generation(f->c), gen);
		free(s);
	}
	fx_free(f);
}

static void
test_bad_commands(void **state)
{
	(void)state;
	bad_rows(base_fx(), base_conf, bad_cases, NELEM(bad_cases));
}

/* ---- limits ---- */

struct limit_case {
	const char *fmt; /* one %u: the index */
	unsigned int start, count;
	const char *next;
	const char *err;
};

static const struct limit_case limit_cases[] = {
	/* base has 2 services, 3 backends in tcp :80, 3 addresses, 2
	 * routes, 3 SNAT addresses */
	{ "service add tcp 192.0.2.100:%u", 1000, LB_CONF_MAX_SVCS - 2,
	  "service add udp 192.0.2.100:1", "too many services (limit 64)" },
	{ "backend add tcp 192.0.2.10:80 10.5.%u.1:80", 0,
	  LB_CONF_MAX_BES - 3, "backend add tcp 192.0.2.10:80 10.6.0.1:80",
	  "too many backends in tcp 192.0.2.10:80 (limit 256)" },
	{ "addr add 10.%u.0.1/24 port 2", 20, LB_CONF_MAX_ADDRS - 3,
	  "addr add 10.99.0.1/24 port 2",
	  "too many local addresses (limit 16)" },
	{ "route add 10.%u.0.0/16 via 10.0.0.254 port 0", 100,
	  LB_CONF_MAX_ROUTES - 2, "route add 10.99.0.0/16 via 10.0.0.254 "
				  "port 0",
	  "too many routes (limit 16)" },
	{ "snat add 10.0.0.%u port 0", 100, LB_CONF_MAX_SNATS - 3,
	  "snat add 10.0.0.99 port 0", "too many SNAT addresses (limit 16)" },
};

static void
test_limits(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(limit_cases); i++) {
		const struct limit_case *c = &limit_cases[i];
		struct fx *f = base_fx();
		char line[128], *before, *after;
		uint64_t gen;

		for (unsigned int j = 0; j < c->count; j++) {
			snprintf(line, sizeof(line), c->fmt, c->start + j);
			ok(f, line);
		}
		before = saved(f->c);
		gen = lb_conf_generation(f->c);
		assert_int_equal(run(f, c->next), -ENOSPC);
		assert_string_equal(f->o.errmsg, c->err);
		after = saved(f->c);
		assert_string_equal(after, before);
		assert_int_equal(lb_conf_generation(f->c), gen);
		assert_int_equal(lb_conf_validate(f->c, &f->o), 0);
		free(before);
		free(after);
		fx_free(f);
	}
}

/* ---- save -> apply -> save ---- */

static void
test_save_apply_save(void **state)
{
	struct fx *a = base_fx();
	struct fx *b = fx_new(known);
	char line[128], *s1, *s2;
	unsigned int n, lines = 0;

	(void)state;
	ok(a, "service add tcp 192.0.2.11:443 sched rr http retries 3 deferq "
	      "0 retry-gap 250ms expiry 2m syn-timeout 300ms");
	ok(a, "service add udp 192.0.2.12:5353 sched wrr retry-gap 1h "
	      "expiry 24h syn-timeout 1ms");
	for (unsigned int i = 0; i < 200; i++) {
		snprintf(line, sizeof(line),
			 "backend add tcp 192.0.2.11:443 10.7.%u.%u:%u "
			 "weight %u",
			 i / 100, i % 100 + 1, 8000 + i, i % 5 + 1);
		ok(a, line);
		if (i % 7 == 0) {
			snprintf(line, sizeof(line),
				 "backend drain tcp 192.0.2.11:443 "
				 "10.7.%u.%u:%u",
				 i / 100, i % 100 + 1, 8000 + i);
			ok(a, line);
		}
	}
	/* holes in the middle keep the order of what remains */
	ok(a, "backend del tcp 192.0.2.11:443 10.7.0.50:8049");
	ok(a, "service del udp 192.0.2.10:53");
	ok(a, "addr del 10.0.0.1");
	ok(a, "snat del 10.1.0.10");
	ok(a, "route add 10.8.0.0/16 via 10.1.0.254 port 1");
	ok(a, "route del default");
	ok(a, "snat add 10.0.0.9 port 0");

	s1 = saved(a->c);
	for (const char *p = s1; *p != '\0'; p++)
		lines += *p == '\n';
	assert_int_equal(apply_text(b, s1, "saved", &n), 0);
	assert_int_equal(n, lines);
	/* an empty configuration, then one change per line */
	assert_int_equal(lb_conf_generation(b->c), lines);
	s2 = saved(b->c);
	assert_string_equal(s2, s1);
	assert_int_equal(lb_conf_validate(a->c, &a->o), 0);
	assert_int_equal(lb_conf_validate(b->c, &b->o), 0);

	/* the text really is the configuration: spot checks */
	assert_non_null(strstr(s1, "service add tcp 192.0.2.11:443 sched rr "
				   "http retries 3 deferq 0 retry-gap 250ms "
				   "expiry 2m syn-timeout 300ms\n"));
	assert_non_null(strstr(s1, "service add udp 192.0.2.12:5353 sched wrr "
				   "retry-gap 1h expiry 24h syn-timeout 1ms\n"));
	assert_non_null(strstr(s1, "backend add tcp 192.0.2.11:443 "
				   "10.7.0.1:8000\nbackend drain tcp "
				   "192.0.2.11:443 10.7.0.1:8000\n"));
	assert_null(strstr(s1, "10.7.0.50:8049"));
	assert_true(strstr(s1, "10.7.0.49:8048") < strstr(s1, "10.7.0.51:8050"));
	assert_null(strstr(s1, "192.0.2.10:53"));
	assert_int_equal(lb_conf_svc_at(b->c, 1)->nb_be, 199);

	/* applying it again to the filled configuration stops at line 1 */
	assert_int_equal(apply_text(b, s1, "saved", &n), -EEXIST);
	assert_string_equal(b->o.errmsg, "saved:1: address 10.0.0.2 already "
					 "exists (10.0.0.2/24 port 0)");
	assert_int_equal(n, 1);
	free(s1);
	free(s2);
	fx_free(a);
	fx_free(b);
}

/*
 * Values the tokenizer would misread bare (a header name starting with
 * '#', a path holding '"') are saved quoted, and a service whose options
 * all take their longest form is saved in lines the tokenizer accepts,
 * the options that overflow the `service add` line following on `service
 * set` lines; both apply back to what was saved.
 */
static void
test_save_quotes_and_long_lines(void **state)
{
	static const char *const hdr_opt[] = { "spl-header", "spl-time-header",
					       "priority-header",
					       "expect-header", "orca-header" };
	struct fx *a = fx_new(known);
	struct fx *b = fx_new(known);
	char line[LB_CMD_LINE_MAX + 1], name[80], *s1, *s2;
	unsigned int n, lines = 0;
	size_t w;

	(void)state;
	ok(a, "service add tcp 192.0.2.11:80 http spl-header \"#spl\" "
	      "error-exclude \"/a\\\"b,/c\"");
	s1 = saved(a->c);
	assert_string_equal(s1, "service add tcp 192.0.2.11:80 http spl-header "
				"\"#spl\" error-exclude \"/a\\\"b,/c\"\n");
	assert_int_equal(apply_text(b, s1, "saved", &n), 0);
	s2 = saved(b->c);
	assert_string_equal(s2, s1);
	free(s1);
	free(s2);

	ok(a, "service add tcp 192.0.2.12:80 sched maglev http retries 5 "
	      "deferq 100 retry-gap 1500ms expiry 2h syn-timeout 250ms "
	      "err-memory 3 min-volume 7 max-eject 40 panic 20");
	ok(a, "service set tcp 192.0.2.12:80 governor on gov-ideal-rate on "
	      "gov-interval 1500ms gov-window 17 gov-overload 33 gov-raise 77 "
	      "gov-release 66 gov-calm 999999 gov-min-samples 999999999 "
	      "default-priority 99 reject-status 429 retry-after 86399");
	for (size_t h = 0; h < NELEM(hdr_opt); h++) {
		/* 64 bytes, the longest name, a different one each */
		snprintf(name, sizeof(name),
			 "#%zu-abcdefghijklmnopqrstuvwxyz0123456789abcdefghijk"
			 "lmnopqrstuvwxy",
			 h);
		name[LB_CONF_HDR_NAME_MAX] = '\0';
		snprintf(line, sizeof(line),
			 "service set tcp 192.0.2.12:80 %s \"%s\"", hdr_opt[h],
			 name);
		ok(a, line);
	}
	ok(a, "service set tcp 192.0.2.12:80 errors "
	      "500,501,502,503,504,505,506,507,508,509,510,511,512,513,514,"
	      "515,516,517,518,519,520,521,522,523,524,525,526,527,528,529,"
	      "530,531");
	/* two paths of 63 bytes, 127 in all, each '"' escaped */
	w = (size_t)snprintf(line, sizeof(line),
			     "service set tcp 192.0.2.12:80 error-exclude \"");
	for (unsigned int k = 0; k < 2; k++) {
		line[w++] = k == 0 ? '/' : ',';
		if (k == 1)
			line[w++] = '/';
		for (unsigned int q = 0; q < LB_HTTP_ERR_PATH_MAX - 1; q++) {
			line[w++] = '\\';
			line[w++] = '"';
		}
	}
	snprintf(line + w, sizeof(line) - w, "\"");
	ok(a, line);
	ok(a, "service set tcp 192.0.2.12:80 http on rebind close");
	ok(a, "service set tcp 192.0.2.12:80 default-expect 1500ms "
	      "admit-rate 123456 admit-burst 23456 admit-key prefix "
	      "admit-prefix 17 admit-reject rst");
	w = (size_t)snprintf(line, sizeof(line),
			     "service set tcp 192.0.2.12:80 check http "
			     "check-path /");
	memset(line + w, 'p', LB_CONF_CHECK_PATH_LEN - 1);
	snprintf(line + w + LB_CONF_CHECK_PATH_LEN - 1,
		 sizeof(line) - w - LB_CONF_CHECK_PATH_LEN + 1,
		 " check-status 201-299 check-port 8081 check-interval 1500ms "
		 "check-timeout 1500ms check-rise 7 check-fall 9");
	ok(a, line);

	s1 = saved(a->c);
	for (const char *p = s1, *nl; *p != '\0'; p = nl + 1) {
		nl = strchr(p, '\n');
		assert_non_null(nl);
		NOTE_IF((size_t)(nl - p) > LB_CMD_LINE_MAX, "too long: %.*s\n",
			(int)(nl - p), p);
		assert_true((size_t)(nl - p) <= LB_CMD_LINE_MAX);
		lines++;
	}
	assert_non_null(strstr(s1, "\nservice set tcp 192.0.2.12:80 "));
	fx_free(b);
	b = fx_new(known);
	assert_int_equal(apply_text(b, s1, "saved", &n), 0);
	assert_int_equal(n, lines);
	s2 = saved(b->c);
	assert_string_equal(s2, s1);
	assert_int_equal(lb_conf_validate(b->c, &b->o), 0);
	free(s1);
	free(s2);
	fx_free(a);
	fx_free(b);
}

/* ---- files: the failing line is named ---- */

struct file_case {
	const char *text;
	int rc;
	const char *err;
	unsigned int gen; /* changes applied before the failure */
};

static const struct file_case file_cases[] = {
	{ "# site\n"
	  "addr add 10.0.0.1/24 port 0\n"
	  "\n"
	  "snat add 10.0.0.10 port 0\n"
	  "service add tcp 192.0.2.10:80\n"
	  "backend add tcp 192.0.2.10:80 10.0.0.20:80\n"
	  "backend add tcp 192.0.2.10:80 10.0.0.20:80   # again\n"
	  "service add tcp 192.0.2.11:80\n",
	  -EEXIST,
	  "site.conf:7: backend 10.0.0.20:80 already exists in tcp "
	  "192.0.2.10:80",
	  4 },
	{ "addr add 10.0.0.1/24 port 0\r\n"
	  "route add default via 10.0.0.254 port 0\r\n"
	  "route add default via 10.0.0.253 port 0\r\n",
	  -EEXIST,
	  "site.conf:3: route default already exists (via 10.0.0.254 port 0)",
	  2 },
	{ "servce add tcp 192.0.2.10:80\n", -EINVAL,
	  "site.conf:1: unknown command 'servce'; try 'help'", 0 },
	{ "# only comments\n\n   # and blanks\n\n"
	  "service add tcp 192.0.2.10:8o\n",
	  -EINVAL, "site.conf:5: invalid port '8o' in '192.0.2.10:8o'", 0 },
	{ "service add tcp 192.0.2.10:80\n"
	  "service set tcp 192.0.2.10:80 expiry 1s retry-gap 2s\n"
	  "service add tcp 192.0.2.11:80\n",
	  -EINVAL, "site.conf:2: retry-gap 2s must be shorter than expiry 1s",
	  1 },
	{ "service add tcp 192.0.2.10:80 sched \"maglev\"\n"
	  "service add tcp 192.0.2.11:80 sched \"mag lev\"\n",
	  -EINVAL,
	  "site.conf:2: invalid sched 'mag lev': expected lowercase letters, "
	  "digits, '-', '_' or '.'",
	  1 },
};

static void
test_apply_file_lines(void **state)
{
	char path[] = "/tmp/conf_test_XXXXXX";
	char want[160];
	struct fx *f;
	FILE *fp;
	int fd;

	(void)state;
	for (size_t i = 0; i < NELEM(file_cases); i++) {
		const struct file_case *c = &file_cases[i];
		int rc;

		f = fx_new(known);
		rc = apply_text(f, c->text, "site.conf", NULL);
		NOTE_IF(rc != c->rc || strcmp(f->o.errmsg, c->err) != 0,
			"case %zu: %d '%s'\n", i, rc, f->o.errmsg);
		assert_int_equal(rc, c->rc);
		assert_string_equal(f->o.errmsg, c->err);
		assert_int_equal(lb_conf_generation(f->c), c->gen);
		fx_free(f);
	}

	/* the same through a real file */
	f = fx_new(known);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	fp = fdopen(fd, "w");
	assert_non_null(fp);
	fputs(file_cases[0].text, fp);
	fclose(fp);
	assert_int_equal(lb_cmd_apply_file(f->r, path, &f->o), -EEXIST);
	snprintf(want, sizeof(want),
		 "%s:7: backend 10.0.0.20:80 already exists in tcp "
		 "192.0.2.10:80",
		 path);
	assert_string_equal(f->o.errmsg, want);
	assert_int_equal(lb_conf_nb_svcs(f->c), 1);
	unlink(path);
	fx_free(f);
}

/* ---- list output ---- */

struct list_case {
	const char *line;
	const char *text;
};

static const struct list_case list_cases[] = {
	{ "addr list",
	  "ADDRESS            PORT\n"
	  "10.0.0.1/24        0\n"
	  "10.0.0.2/24        0\n"
	  "10.1.0.1/16        1\n" },
	{ "route list",
	  "PREFIX             VIA             PORT\n"
	  "default            10.0.0.254      0\n"
	  "172.16.0.0/12      10.1.0.254      1\n" },
	{ "snat list",
	  "ADDRESS         PORT\n"
	  "10.0.0.10       0\n"
	  "10.1.0.10       1\n"
	  "198.51.100.10   0\n" },
	{ "save", base_conf },
};

static void
test_lists(void **state)
{
	struct fx *f = base_fx();
	struct fx *e = fx_new(known);

	(void)state;
	for (size_t i = 0; i < NELEM(list_cases); i++) {
		ok(f, list_cases[i].line);
		assert_string_equal(lb_cmd_out_text(&f->o), list_cases[i].text);
	}
	ok(e, "service add tcp 192.0.2.11:80 retries 4");
	ok(e, "save");
	assert_string_equal(lb_cmd_out_text(&e->o),
			    "service add tcp 192.0.2.11:80 retries 4\n");
	ok(e, "service del tcp 192.0.2.11:80");
	ok(e, "save");
	assert_string_equal(lb_cmd_out_text(&e->o), "");
	fx_free(e);
	fx_free(f);
}

/* ---- IPv6 beside IPv4 ---- */

/*
 * A dual-stack site in the order and spelling of lb_conf_save(): IPv6
 * subnets on both ports, an IPv6 default route, an IPv6 SNAT address, an
 * IPv6 service with two IPv6 backends (fnat66), one draining, and an
 * IPv4 service beside it.
 */
static const char dual_conf[] =
	"addr add 10.0.0.1/24 port 0\n"
	"addr add 2001:db8::1/64 port 0\n"
	"addr add 2001:db8:1::1/64 port 1\n"
	"route add default via 10.0.0.254 port 0\n"
	"route add ::/0 via 2001:db8::fe port 0\n"
	"route add 2001:db8:100::/48 via 2001:db8:1::fe port 1\n"
	"snat add 10.0.0.10 port 0\n"
	"snat add 2001:db8:1::10 port 1\n"
	"service add tcp 192.0.2.10:443\n"
	"backend add tcp 192.0.2.10:443 10.0.0.11:8443\n"
	"service add tcp [2001:db8:ff::10]:443 sched maglev\n"
	"backend add tcp [2001:db8:ff::10]:443 [2001:db8:1::11]:8443 weight 2\n"
	"backend add tcp [2001:db8:ff::10]:443 [2001:db8:1::12]:8443\n"
	"backend drain tcp [2001:db8:ff::10]:443 [2001:db8:1::12]:8443\n"
	"service add udp [2001:db8:ff::10]:53\n"
	"backend add udp [2001:db8:ff::10]:53 [2001:db8:1::21]:53\n";

#define DUAL_LINES 16u

static struct fx *
dual_fx(void)
{
	struct fx *f = fx_new(known);
	unsigned int n;
	int rc = apply_text(f, dual_conf, "dual", &n);

	NOTE_IF(rc != 0, "%s\n", f->o.errmsg);
	assert_int_equal(rc, 0);
	assert_int_equal(n, DUAL_LINES);
	return f;
}

static void
test_ip6_roundtrip(void **state)
{
	static const struct list_case lists[] = {
		{ "addr list",
		  "ADDRESS            PORT\n"
		  "10.0.0.1/24        0\n"
		  "2001:db8::1/64     0\n"
		  "2001:db8:1::1/64   1\n" },
		{ "route list",
		  "PREFIX             VIA             PORT\n"
		  "default            10.0.0.254      0\n"
		  "::/0               2001:db8::fe    0\n"
		  "2001:db8:100::/48  2001:db8:1::fe  1\n" },
		{ "snat list",
		  "ADDRESS         PORT\n"
		  "10.0.0.10       0\n"
		  "2001:db8:1::10  1\n" },
	};
	struct fx *f = dual_fx();
	struct fx *g = fx_new(known);
	const struct lb_conf_svc *sv;
	char *s = saved(f->c), *t;
	unsigned int n;

	(void)state;
	assert_string_equal(s, dual_conf);
	assert_int_equal(lb_conf_generation(f->c), DUAL_LINES);
	assert_int_equal(lb_conf_validate(f->c, &f->o), 0);
	for (size_t i = 0; i < NELEM(lists); i++) {
		ok(f, lists[i].line);
		assert_string_equal(lb_cmd_out_text(&f->o), lists[i].text);
	}
	/* The records hold the family and the address in its field only. */
	assert_int_equal(lb_conf_addr_at(f->c, 1)->af, LB_CONF_AF_INET6);
	assert_int_equal(lb_conf_addr_at(f->c, 1)->ip, 0);
	assert_int_equal(lb_conf_addr_at(f->c, 1)->ip6[15], 1);
	assert_int_equal(lb_conf_addr_at(f->c, 0)->af, LB_CONF_AF_INET);
	assert_int_equal(lb_conf_route_at(f->c, 1)->gw6[15], 0xfe);
	assert_int_equal(lb_conf_snat_at(f->c, 1)->af, LB_CONF_AF_INET6);
	sv = lb_conf_svc_at(f->c, 1);
	assert_int_equal(sv->key.af, LB_CONF_AF_INET6);
	assert_int_equal(sv->key.vip, 0);
	assert_int_equal(sv->key.vip6[0], 0x20);
	assert_int_equal(sv->be[0].af, LB_CONF_AF_INET6);
	assert_int_equal(sv->be[1].af, LB_CONF_AF_INET6);
	assert_int_equal(sv->be[1].ip, 0);
	assert_int_equal(sv->be[1].ip6[15], 0x12);
	assert_true(sv->be[1].draining);
	/* Applied to an empty configuration, the saved text gives it back. */
	assert_int_equal(apply_text(g, s, "saved", &n), 0);
	t = saved(g->c);
	assert_string_equal(t, s);
	free(t);
	free(s);
	fx_free(g);
	fx_free(f);
}

static const struct good_case good6_cases[] = {
	{ "service add tcp [2001:db8:ff::10]:80", 1,
	  "service add tcp [2001:db8:ff::10]:80\n", NULL },
	{ "service add tcp [2001:db8:ff::20]:443", 1,
	  "service add tcp [2001:db8:ff::20]:443\n", NULL },
	{ "service add udp [2001:DB8:FF:0::10]:443", 1,
	  "service add udp [2001:db8:ff::10]:443\n", NULL },
	{ "service set tcp [2001:db8:ff::10]:443 retries 2", 1,
	  "service add tcp [2001:db8:ff::10]:443 sched maglev retries 2\n",
	  NULL },
	{ "service set tcp [2001:db8:ff::10]:443 admit-rate 100 admit-key "
	  "prefix admit-prefix6 48 admit-reject rst",
	  1,
	  "service add tcp [2001:db8:ff::10]:443 sched maglev admit-rate 100 "
	  "admit-key prefix admit-prefix6 48 admit-reject rst\n",
	  NULL },
	{ "service del tcp [2001:db8:ff::10]:443", 1, NULL,
	  "[2001:db8:ff::10]:443" },
	/* fnat64: an IPv4 backend beside the IPv6 ones */
	{ "backend add tcp [2001:db8:ff::10]:443 10.0.0.12:8443 weight 3", 1,
	  "backend add tcp [2001:db8:ff::10]:443 10.0.0.12:8443 weight 3\n",
	  NULL },
	{ "backend add udp [2001:db8:ff::10]:53 [2001:db8:1::22]:53 weight 4", 1,
	  "backend add udp [2001:db8:ff::10]:53 [2001:db8:1::22]:53 weight 4\n",
	  NULL },
	{ "backend del tcp [2001:db8:ff::10]:443 [2001:db8:1::11]:8443", 1,
	  NULL, "2001:db8:1::11" },
	{ "backend set tcp [2001:db8:ff::10]:443 [2001:db8:1::11]:8443 "
	  "weight 5",
	  1,
	  "backend add tcp [2001:db8:ff::10]:443 [2001:db8:1::11]:8443 "
	  "weight 5\n",
	  NULL },
	{ "backend drain tcp [2001:db8:ff::10]:443 [2001:db8:1::11]:8443", 1,
	  "backend drain tcp [2001:db8:ff::10]:443 [2001:db8:1::11]:8443\n",
	  NULL },
	{ "backend undrain tcp [2001:db8:ff::10]:443 [2001:db8:1::12]:8443", 1, NULL,
	  "backend drain" },
	{ "route del ::/0", 1, NULL, "::/0" },
	{ "route add 2001:db8:200::/40 via 2001:db8::fd port 0", 1,
	  "route add 2001:db8:200::/40 via 2001:db8::fd port 0\n", NULL },
	{ "route add 2001:db8:300::1/128 via 2001:db8::fd port 0", 1,
	  "route add 2001:db8:300::1/128 via 2001:db8::fd port 0\n", NULL },
	{ "snat del 2001:db8:1::10", 1, NULL, "2001:db8:1::10" },
	{ "snat add 2001:db8:1::1 port 1", 1, "snat add 2001:db8:1::1 port 1\n",
	  NULL },
	{ "addr add 2001:db8:2::1/127 port 1", 1,
	  "addr add 2001:db8:2::1/127 port 1\n", NULL },
	{ "addr add 2001:db8:0:0:8000::1/65 port 0", 1,
	  "addr add 2001:db8::8000:0:0:1/65 port 0\n", NULL },
	{ "addr add 2001:db8:ff::10/128 port 0", 1,
	  "addr add 2001:db8:ff::10/128 port 0\n", NULL },
	{ "addr del 2001:db8:1::1/64 port 1", 0, NULL, NULL },
};

static void
test_ip6_good_commands(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(good6_cases); i++) {
		const struct good_case *c = &good6_cases[i];
		struct fx *f = dual_fx();
		uint64_t gen = lb_conf_generation(f->c);
		int rc = run(f, c->line);
		char *s = saved(f->c);

		NOTE_IF((rc != 0) != (c->gen_delta == 0) ||
				(c->present != NULL &&
				 strstr(s, c->present) == NULL) ||
				(c->absent != NULL &&
				 strstr(s, c->absent) != NULL),
			"case %zu '%s' (%s) saved:\n%s", i, c->line,
			f->o.errmsg, s);
		/* gen_delta 0: the row is refused (needed by a route). */
		if (c->gen_delta == 0) {
			assert_int_equal(rc, -EBUSY);
			assert_string_equal(f->o.errmsg,
					    "address 2001:db8:1::1/64 is needed "
					    "by route 2001:db8:100::/48 via "
					    "2001:db8:1::fe");
			assert_string_equal(s, dual_conf);
		} else {
			assert_int_equal(rc, 0);
		}
		assert_int_equal(lb_conf_generation(f->c), gen + c->gen_delta);
		if (c->present != NULL)
			assert_non_null(strstr(s, c->present));
		if (c->absent != NULL)
			assert_null(strstr(s, c->absent));
		assert_int_equal(lb_conf_validate(f->c, &f->o), 0);
		free(s);
		fx_free(f);
	}
}

static const struct bad_case bad6_cases[] = {
	/* syntax */
	{ "service add tcp 2001:db8:ff::10:80", -EINVAL,
	  "IPv6 address:port '2001:db8:ff::10:80' needs brackets: "
	  "[IPV6]:PORT" },
	{ "service add tcp [2001:db8:ff::10]", -EINVAL,
	  "invalid address:port '[2001:db8:ff::10]': expected [IPV6]:PORT" },
	{ "backend add tcp [2001:db8:ff::10]:443 [2001:db8:1::x]:80", -EINVAL,
	  "invalid address:port '[2001:db8:1::x]:80': expected [IPV6]:PORT" },
	{ "addr add 2001:db8:5::1 port 0", -EINVAL,
	  "invalid address/length '2001:db8:5::1': expected IPV6/LEN" },
	{ "addr add 2001:db8:5::1/129 port 0", -ERANGE,
	  "prefix length 129 out of range 1..128 in '2001:db8:5::1/129'" },
	{ "snat add 2001:db8:1::g port 1", -EINVAL,
	  "invalid IPv6 address '2001:db8:1::g'" },
	{ "route add 2001:db8:200::1/48 via 2001:db8::fd port 0", -EINVAL,
	  "prefix '2001:db8:200::1/48' has host bits set; the network is "
	  "2001:db8:200::/48" },
	{ "route add 2001:db8:200::/48 via fe80::1%eth0 port 0", -EINVAL,
	  "invalid IPv6 address 'fe80::1%eth0'" },
	/* not unicast */
	{ "addr add ::1/128 port 0", -EINVAL,
	  "address ::1 is not a unicast address" },
	{ "addr add ::/128 port 0", -EINVAL,
	  "address :: is not a unicast address" },
	{ "addr add ff02::1/64 port 0", -EINVAL,
	  "address ff02::1 is not a unicast address" },
	{ "snat add ::ffff:10.0.0.11 port 0", -EINVAL,
	  "SNAT address ::ffff:10.0.0.11 is not a unicast address" },
	{ "service add tcp [ff05::2]:80", -EINVAL,
	  "VIP ff05::2 is not a unicast address" },
	{ "backend add tcp [2001:db8:ff::10]:443 [::1]:80", -EINVAL,
	  "backend ::1 is not a unicast address" },
	{ "route add 2001:db8:200::/48 via ff02::2 port 0", -EINVAL,
	  "gateway ff02::2 is not a unicast address" },
	/* subnets */
	{ "addr add 2001:db8::/64 port 0", -EINVAL,
	  "address 2001:db8:: is the network address of 2001:db8::/64" },
	{ "addr add 2001:db8:0:0:8000::5/65 port 1", -EINVAL,
	  "subnet 2001:db8:0:0:8000::/65 of port 1 overlaps 2001:db8::/64 of "
	  "port 0" },
	{ "addr add 2001:db8::/32 port 2", -EINVAL,
	  "address 2001:db8:: is the network address of 2001:db8::/32" },
	{ "addr add 2001:db8::2/32 port 2", -EINVAL,
	  "subnet 2001:db8::/32 of port 2 overlaps 2001:db8::/64 of port 0" },
	{ "addr add 2001:db8:1::10/48 port 2", -EINVAL,
	  "subnet 2001:db8:1::/48 of port 2 overlaps 2001:db8:1::/64 of "
	  "port 1" },
	{ "snat add 2001:db8::10 port 1", -EINVAL,
	  "SNAT address 2001:db8::10 is inside subnet 2001:db8::/64 of port "
	  "0, not port 1" },
	/* routes */
	{ "route add ::/0 via 2001:db8::fd port 0", -EEXIST,
	  "route ::/0 already exists (via 2001:db8::fe port 0)" },
	{ "route add 2001:db8:200::/48 via 10.0.0.254 port 0", -EINVAL,
	  "gateway 10.0.0.254 of route 2001:db8:200::/48 is of another "
	  "address family" },
	{ "route add 10.8.0.0/16 via 2001:db8::fe port 0", -EINVAL,
	  "gateway 2001:db8::fe of route 10.8.0.0/16 is of another address "
	  "family" },
	{ "route add 2001:db8:200::/48 via 2001:db8:5::1 port 0", -EINVAL,
	  "gateway 2001:db8:5::1 is not in a connected subnet of port 0" },
	{ "route add 2001:db8:200::/48 via 2001:db8:1::fe port 0", -EINVAL,
	  "gateway 2001:db8:1::fe is not in a connected subnet of port 0" },
	{ "route add 2001:db8:200::/48 via 2001:db8::1 port 0", -EINVAL,
	  "gateway 2001:db8::1 is a local address (2001:db8::1/64 port 0)" },
	{ "route del 2001:db8:300::/48", -ENOENT,
	  "no route 2001:db8:300::/48" },
	{ "route del 2001:db8:100::/47", -ENOENT,
	  "no route 2001:db8:100::/47" },
	/* roles */
	{ "snat add 2001:db8:ff::10 port 0", -EINVAL,
	  "SNAT address 2001:db8:ff::10 is the VIP of tcp "
	  "[2001:db8:ff::10]:443" },
	{ "service add tcp [2001:db8:1::11]:80", -EINVAL,
	  "VIP 2001:db8:1::11 is a backend of tcp [2001:db8:ff::10]:443" },
	{ "service add tcp [2001:db8:1::10]:80", -EINVAL,
	  "VIP 2001:db8:1::10 is a SNAT address" },
	{ "backend add tcp [2001:db8:ff::10]:443 [2001:db8:1::10]:80", -EINVAL,
	  "backend 2001:db8:1::10 is a SNAT address" },
	{ "backend add tcp [2001:db8:ff::10]:443 [2001:db8::1]:80", -EINVAL,
	  "backend 2001:db8::1 is a local address (2001:db8::1/64 port 0)" },
	{ "addr add 2001:db8:1::fe/64 port 1", -EINVAL,
	  "address 2001:db8:1::fe is the gateway of route 2001:db8:100::/48" },
	/* families */
	{ "backend add tcp 192.0.2.10:443 [2001:db8:1::30]:443", -EINVAL,
	  "backend [2001:db8:1::30]:443 is IPv6 but tcp 192.0.2.10:443 is "
	  "IPv4: an IPv4 service takes IPv4 backends only" },
	/* what an IPv6 service does not have */
	{ "service add tcp [2001:db8:ff::30]:80 synproxy on http",
	  -EOPNOTSUPP,
	  "tcp [2001:db8:ff::30]:80: synproxy is not available on IPv6 "
	  "services with http" },
	{ "service set tcp [2001:db8:ff::10]:443 proxy-protocol v2",
	  -EOPNOTSUPP,
	  "tcp [2001:db8:ff::10]:443: proxy-protocol is not available on IPv6 "
	  "services (they are forwarded at layer 4 only)" },
	{ "service set tcp [2001:db8:ff::10]:443 admit-prefix6 129", -ERANGE,
	  "admit-prefix6 129 out of range 1..128" },
	/* duplicates and missing entries */
	{ "addr add 2001:db8::1/48 port 0", -EEXIST,
	  "address 2001:db8::1 already exists (2001:db8::1/64 port 0)" },
	{ "snat add 2001:db8:1::10 port 1", -EEXIST,
	  "SNAT address 2001:db8:1::10 already exists (port 1)" },
	{ "service add tcp [2001:db8:ff::10]:443", -EEXIST,
	  "service tcp [2001:db8:ff::10]:443 already exists" },
	{ "service del tcp [2001:db8:ff::11]:443", -ENOENT,
	  "no service tcp [2001:db8:ff::11]:443" },
	{ "service del udp [2001:db8:ff::10]:443", -ENOENT,
	  "no service udp [2001:db8:ff::10]:443" },
	{ "backend add tcp [2001:db8:ff::10]:443 [2001:db8:1::11]:8443",
	  -EEXIST,
	  "backend [2001:db8:1::11]:8443 already exists in tcp "
	  "[2001:db8:ff::10]:443" },
	{ "backend del tcp [2001:db8:ff::10]:443 [2001:db8:1::99]:8443",
	  -ENOENT,
	  "no backend [2001:db8:1::99]:8443 in tcp [2001:db8:ff::10]:443" },
	{ "backend del tcp [2001:db8:ff::10]:443 [::ffff:10.0.0.12]:8443",
	  -ENOENT,
	  "no backend [::ffff:10.0.0.12]:8443 in tcp [2001:db8:ff::10]:443" },
	{ "backend drain tcp [2001:db8:ff::10]:443 [2001:db8:1::12]:8443", -EINVAL,
	  "backend [2001:db8:1::12]:8443 of tcp [2001:db8:ff::10]:443 is already "
	  "draining" },
	{ "backend set tcp [2001:db8:ff::10]:443 [2001:db8:1::11]:8443 "
	  "weight 0",
	  -ERANGE, "weight 0 out of range 1..65535" },
	{ "addr del 2001:db8::1/48", -EINVAL,
	  "address 2001:db8::1 is configured as 2001:db8::1/64 port 0" },
	{ "addr del 2001:db8:5::1", -ENOENT, "no address 2001:db8:5::1" },
	{ "snat del 2001:db8:1::99", -ENOENT,
	  "no SNAT address 2001:db8:1::99" },
	/* an IPv6 prefix where the policy holds IPv4 only */
	{ "service set tcp 192.0.2.10:443 prio-trust 2001:db8::/32", -EINVAL,
	  "prio-trust: IPv6 prefix '2001:db8::/32' not supported: trusted "
	  "prefixes are IPv4" },
};

static void
test_ip6_bad_commands(void **state)
{
	(void)state;
	bad_rows(dual_fx(), dual_conf, bad6_cases, NELEM(bad6_cases));
}

/*
 * HTTP following and the governor on an IPv6 service: taken with IPv6
 * backends (fnat66) and with IPv4 ones (fnat64 flows are followed too),
 * either way round, and saved.
 */
static void
test_ip6_http(void **state)
{
	struct fx *f = dual_fx();
	char *after;

	(void)state;
	assert_int_equal(run(f, "service set tcp [2001:db8:ff::10]:443 "
				"http on governor on reject-status 429"),
			 0);
	assert_int_equal(run(f, "backend add tcp [2001:db8:ff::10]:443 "
				"10.0.0.12:8443"),
			 0);
	after = saved(f->c);
	NOTE_IF(strstr(after, " http") == NULL, "%s", after);
	assert_non_null(strstr(after, " http"));
	assert_non_null(strstr(after, "governor on"));
	assert_non_null(strstr(after, "backend add tcp [2001:db8:ff::10]:443 "
				      "10.0.0.12:8443"));
	free(after);
	fx_free(f);

	f = dual_fx();
	assert_int_equal(run(f, "backend add tcp [2001:db8:ff::10]:443 "
				"10.0.0.12:8443"),
			 0);
	assert_int_equal(run(f, "service set tcp [2001:db8:ff::10]:443 "
				"http on"),
			 0);
	after = saved(f->c);
	NOTE_IF(strstr(after, " http") == NULL, "%s", after);
	assert_non_null(strstr(after, " http"));
	assert_non_null(strstr(after, "10.0.0.12:8443"));
	free(after);
	fx_free(f);
}

/*
 * The SYN proxy of an IPv6 service: taken with IPv6 backends and with an
 * IPv4 one (fnat64), either way round, and saved.
 */
static void
test_ip6_synproxy(void **state)
{
	struct fx *f = dual_fx();
	char *after;

	(void)state;
	assert_int_equal(run(f, "service set tcp [2001:db8:ff::10]:443 "
				"synproxy auto synproxy-mss 1400"),
			 0);
	assert_int_equal(run(f, "backend add tcp [2001:db8:ff::10]:443 "
				"10.0.0.12:8443"),
			 0);
	after = saved(f->c);
	NOTE_IF(strstr(after, "synproxy auto") == NULL, "%s", after);
	assert_non_null(strstr(after, "service add tcp [2001:db8:ff::10]:443 "
				      "sched maglev synproxy auto "
				      "synproxy-mss 1400"));
	assert_non_null(strstr(after, "10.0.0.12:8443"));
	free(after);
	fx_free(f);

	f = dual_fx();
	assert_int_equal(run(f, "backend add tcp [2001:db8:ff::10]:443 "
				"10.0.0.12:8443"),
			 0);
	assert_int_equal(run(f, "service set tcp [2001:db8:ff::10]:443 "
				"synproxy on"),
			 0);
	after = saved(f->c);
	assert_non_null(strstr(after, "synproxy on"));
	free(after);
	fx_free(f);
}

/* The C interface: keys and backends are told apart by family. */
static void
test_ip6_c_interface(void **state)
{
	struct lb_conf_ip v6 = {.af = LB_CONF_AF_INET6};
	struct lb_conf_ip b6 = {.af = LB_CONF_AF_INET6};
	struct lb_conf_ip b4 = lb_conf_ip4(0x0a000063);
	struct lb_conf_svc_key k6, k4;
	struct fx *f = dual_fx();
	const struct lb_conf_svc *sv;
	uint64_t gen;

	(void)state;
	v6.ip6[0] = 0x20, v6.ip6[1] = 0x01, v6.ip6[2] = 0x0d;
	v6.ip6[3] = 0xb8, v6.ip6[5] = 0xff, v6.ip6[15] = 0x10;
	b6 = v6;
	b6.ip6[5] = 0x01, b6.ip6[15] = 0x99;
	k6 = lb_conf_svc_key_of(LB_CONF_PROTO_TCP, &v6, 443);
	assert_non_null(lb_conf_svc_find(f->c, &k6));
	/* An IPv4 key whose address bits happen to be zero is another. */
	k4 = (struct lb_conf_svc_key){.proto = LB_CONF_PROTO_TCP, .port = 443};
	assert_null(lb_conf_svc_find(f->c, &k4));
	/* Junk in the other family's field does not matter. */
	k6.vip = 0x01020304;
	assert_non_null(lb_conf_svc_find(f->c, &k6));
	gen = lb_conf_generation(f->c);
	assert_int_equal(lb_conf_be_add_ip(f->c, &k6, &b6, 80, 3, &f->o), 0);
	/* An IPv4 backend of the IPv6 service (fnat64). */
	assert_int_equal(lb_conf_be_add_ip(f->c, &k6, &b4, 80, 1, &f->o), 0);
	assert_int_equal(lb_conf_generation(f->c), gen + 2);
	assert_int_equal(lb_conf_be_set_orch_ip(f->c, &k6, &b6, 80, true,
						&f->o),
			 0);
	assert_int_equal(lb_conf_be_set_weight_ip(f->c, &k6, &b6, 80, 7,
						  &f->o),
			 0);
	sv = lb_conf_svc_find(f->c, &k6);
	assert_int_equal(sv->nb_be, 4);
	assert_int_equal(sv->be[2].af, LB_CONF_AF_INET6);
	assert_int_equal(sv->be[2].weight, 7);
	assert_true(sv->be[2].orch);
	assert_int_equal(sv->be[3].af, LB_CONF_AF_INET);
	assert_int_equal(sv->be[3].ip, 0x0a000063);
	assert_int_equal(lb_conf_generation(f->c), gen + 4);
	/* The IPv4 functions do not reach the IPv6 backend, only the
	 * IPv4 one. */
	lb_cmd_out_reset(&f->o);
	assert_int_equal(lb_conf_be_del(f->c, &k6, 0, 80, &f->o), -ENOENT);
	assert_int_equal(lb_conf_be_del(f->c, &k6, 0x0a000063, 80, &f->o), 0);
	assert_int_equal(lb_conf_be_del(f->c, &k6, 0x0a000063, 80, &f->o),
			 -ENOENT);
	assert_int_equal(lb_conf_be_del_ip(f->c, &k6, &b6, 80, &f->o), 0);
	assert_int_equal(lb_conf_validate(f->c, &f->o), 0);
	/* A family that is neither. */
	lb_cmd_out_reset(&f->o);
	b6.af = 7;
	assert_int_equal(lb_conf_snat_add_ip(f->c, &b6, 0, &f->o), -EINVAL);
	assert_string_equal(f->o.errmsg, "invalid address family 7");
	k6.af = 9;
	lb_cmd_out_reset(&f->o);
	assert_int_equal(lb_conf_svc_add(f->c, &k6, NULL, &f->o), -EINVAL);
	assert_string_equal(f->o.errmsg, "invalid address family 9");
	fx_free(f);
}

/* ---- generation ---- */

static void
test_generation(void **state)
{
	static const struct {
		const char *line;
		int rc;
		unsigned int gen;
	} steps[] = {
		{ "addr add 10.0.0.1/24 port 0", 0, 1 },
		{ "addr add 10.0.0.1/24 port 0", -EEXIST, 1 },
		{ "addr list", 0, 1 },
		{ "snat add 10.0.0.10 port 0", 0, 2 },
		{ "service add tcp 192.0.2.10:80", 0, 3 },
		{ "service set tcp 192.0.2.10:80 retries 2", 0, 4 },
		{ "service set tcp 192.0.2.10:80 retries 2", 0, 4 },
		{ "backend add tcp 192.0.2.10:80 10.0.0.20:80", 0, 5 },
		{ "backend set tcp 192.0.2.10:80 10.0.0.20:80 weight 1", 0, 5 },
		{ "backend set tcp 192.0.2.10:80 10.0.0.20:80 weight 2", 0, 6 },
		{ "backend drain tcp 192.0.2.10:80 10.0.0.20:80", 0, 7 },
		{ "backend drain tcp 192.0.2.10:80 10.0.0.20:80", -EINVAL, 7 },
		{ "backend del tcp 192.0.2.10:80 10.0.0.20:80", 0, 8 },
		{ "save", 0, 8 },
		{ "help service add", 0, 8 },
		{ "service del tcp 192.0.2.10:80", 0, 9 },
		{ "snat del 10.0.0.10", 0, 10 },
		{ "addr del 10.0.0.1", 0, 11 },
	};
	struct fx *f = fx_new(known);

	(void)state;
	for (size_t i = 0; i < NELEM(steps); i++) {
		assert_int_equal(run(f, steps[i].line), steps[i].rc);
		assert_int_equal(lb_conf_generation(f->c), steps[i].gen);
	}
	assert_int_equal(lb_conf_generation(NULL), 0);
	fx_free(f);
}

/* ---- help and reference cover every command ---- */

static const char *const conf_paths[] = {
	"addr add",	  "addr del",	    "addr list",     "route add",
	"route del",	  "route list",	    "snat add",	     "snat del",
	"snat list",	  "service add",    "service set",   "service del",
	"backend add",	  "backend del",    "backend drain", "backend undrain",
	"backend set",	  "save",	    "pool add",	     "pool set",
	"pool del",	  "pool list",	    "rule add",	     "rule del",
	"rule default",	  "rule list",
};

static void
test_help_and_markdown(void **state)
{
	struct fx *f = fx_new(known);
	struct lb_cmd_out md;
	const char *h;

	(void)state;
	assert_int_equal(lb_cmd_count(f->r), 1 + NELEM(conf_paths));
	for (size_t i = 0; i < NELEM(conf_paths); i++)
		assert_string_equal(lb_cmd_at(f->r, (unsigned int)i + 1)->path,
				    conf_paths[i]);
	ok(f, "help");
	h = lb_cmd_out_text(&f->o);
	lb_cmd_out_init(&md);
	assert_int_equal(lb_cmd_markdown(f->r, "lbctl commands", &md), 0);
	for (unsigned int i = 0; i < lb_cmd_count(f->r); i++) {
		const struct lb_cmd_def *d = lb_cmd_at(f->r, i);
		char s[320];

		snprintf(s, sizeof(s), "\n%s%s%s\n    %s\n", d->path,
			 d->synopsis[0] ? " " : "", d->synopsis, d->help);
		NOTE_IF(strstr(h, s) == NULL, "help lacks %s", s);
		assert_non_null(strstr(h, s));
		snprintf(s, sizeof(s), "\n### %s\n\n```\n%s%s%s\n```\n",
			 d->path, d->path, d->synopsis[0] ? " " : "",
			 d->synopsis);
		assert_non_null(strstr(lb_cmd_out_text(&md), s));
		if (d->long_help != NULL)
			assert_non_null(strstr(lb_cmd_out_text(&md),
					       d->long_help));
	}
	for (size_t i = 0; i < 5; i++) {
		static const char *const sec[] = { "\n## addr\n",
						   "\n## route\n",
						   "\n## snat\n",
						   "\n## service\n",
						   "\n## backend\n" };

		assert_non_null(strstr(lb_cmd_out_text(&md), sec[i]));
	}

	/* help of one command carries the defaults it documents */
	ok(f, "help service add");
	h = lb_cmd_out_text(&f->o);
	assert_true(strncmp(h, "usage: service add PROTO VIP:PORT [sched NAME]",
			    46) == 0);
	assert_non_null(strstr(h, "default `adaptive`"));
	assert_non_null(strstr(h, "default 2048"));
	assert_non_null(strstr(h, "default 5s"));
	assert_non_null(strstr(h, "default 1s"));
	lb_cmd_out_free(&md);
	fx_free(f);
}

/* ---- validate, copy, and the C interface ---- */

/* A copy over a larger configuration leaves nothing of it behind. */
static void
test_copy_over_larger(void **state)
{
	struct fx *a = base_fx(), *e = fx_new(known);
	char *s1, *s2;

	(void)state;
	assert_int_equal(run(e, "addr add 10.9.9.1/24 port 0"), 0);
	s1 = saved(e->c);
	assert_int_equal(lb_conf_copy(a->c, e->c), 0);
	s2 = saved(a->c);
	assert_string_equal(s1, s2);
	assert_int_equal(lb_conf_nb_svcs(a->c), 0);
	assert_int_equal(lb_conf_nb_snats(a->c), 0);
	assert_int_equal(lb_conf_nb_routes(a->c), 0);
	assert_int_equal(lb_conf_nb_addrs(a->c), 1);
	assert_int_equal(lb_conf_validate(a->c, &a->o), 0);
	/* and back: the larger one whole again */
	free(s2);
	fx_free(a);
	a = base_fx();
	assert_int_equal(lb_conf_copy(e->c, a->c), 0);
	s2 = saved(e->c);
	assert_string_equal(s2, base_conf);
	free(s1);
	free(s2);
	fx_free(a);
	fx_free(e);
}

static void
test_validate_and_copy(void **state)
{
	struct fx *a = base_fx();
	struct lb_conf *b = lb_conf_create(known_no_maglev);
	struct lb_cmd_out o;
	char *s1, *s2;

	(void)state;
	lb_cmd_out_init(&o);
	assert_non_null(b);
	assert_int_equal(lb_conf_copy(b, a->c), 0);
	assert_int_equal(lb_conf_generation(b), 1);
	s1 = saved(a->c);
	s2 = saved(b);
	assert_string_equal(s1, s2);
	/* the copy is checked against its own dataplane's schedulers */
	assert_int_equal(lb_conf_validate(b, &o), -EINVAL);
	assert_string_equal(o.errmsg, "unknown scheduler 'maglev'");
	/* with its dataplane's list, which a copy keeps */
	lb_conf_set_sched_names(b, names_no_maglev);
	assert_int_equal(lb_conf_copy(b, a->c), 0);
	lb_cmd_out_reset(&o);
	assert_int_equal(lb_conf_validate(b, &o), -EINVAL);
	assert_string_equal(o.errmsg, "unknown scheduler 'maglev'; expected "
				      "one of adaptive, rr, wrr");
	assert_int_equal(lb_conf_copy(b, b), 0);
	assert_int_equal(lb_conf_copy(NULL, b), -EINVAL);
	assert_int_equal(lb_conf_validate(NULL, NULL), -EINVAL);
	free(s1);
	free(s2);
	lb_cmd_out_free(&o);
	lb_conf_free(b);
	fx_free(a);
}

struct api_case {
	const char *what;
	int rc;
	const char *err;
};

static void
check_api(struct lb_cmd_out *o, int rc, const struct api_case *c)
{
	NOTE_IF(rc != c->rc || strcmp(o->errmsg, c->err) != 0,
		"%s: %d '%s'\n", c->what, rc, o->errmsg);
	assert_int_equal(rc, c->rc);
	assert_string_equal(o->errmsg, c->err);
	lb_cmd_out_reset(o);
}

static void
test_c_interface(void **state)
{
	static const struct api_case cases[] = {
		{ "addr len 0", -ERANGE, "prefix length 0 out of range 1..32" },
		{ "addr len 33", -ERANGE,
		  "prefix length 33 out of range 1..32" },
		{ "route len 33", -ERANGE,
		  "prefix length 33 out of range 0..32" },
		{ "route host bits", -EINVAL,
		  "prefix 10.8.0.1/16 has host bits set" },
		{ "snat port", -ERANGE, "port 99 out of range 0..31" },
		{ "svc proto", -EINVAL,
		  "invalid protocol 1: expected tcp or udp" },
		{ "svc port 0", -ERANGE, "port 0 out of range 1..65535" },
		{ "be port 0", -ERANGE, "port 0 out of range 1..65535" },
		{ "be weight 0", -ERANGE, "weight 0 out of range 1..65535" },
		{ "opts retries", -ERANGE, "retries 300 out of range 0..256" },
		{ "opts deferq", -ERANGE,
		  "deferq 2000000 out of range 0..1048576" },
		{ "opts expiry", -ERANGE, "expiry 0s out of range 1ms..24h" },
		{ "opts syn", -ERANGE, "syn-timeout 2m out of range 1ms..1m" },
		{ "opts gap", -ERANGE, "retry-gap 2h out of range 0s..1h" },
		{ "opts name", -ERANGE, "sched name too long" },
		{ "svc missing", -ENOENT, "no service tcp 192.0.2.99:80" },
	};
	struct lb_conf_svc_key k = {.proto = LB_CONF_PROTO_TCP, .vip = 0xc000020a,
		.port = 80};
	struct lb_conf_svc_key bad = k;
	struct lb_conf_svc_opts o;
	struct lb_cmd_out out;
	struct lb_conf *any = lb_conf_create(NULL);
	struct fx *f = base_fx();
	const struct api_case *c = cases;

	(void)state;
	lb_cmd_out_init(&out);
	check_api(&out, lb_conf_addr_add(f->c, 0x0a030001, 0, 0, &out), c++);
	check_api(&out, lb_conf_addr_add(f->c, 0x0a030001, 33, 0, &out), c++);
	check_api(&out, lb_conf_route_add(f->c, 0x0a080000, 33, 0x0a0000fe, 0,
					  &out),
		  c++);
	check_api(&out, lb_conf_route_add(f->c, 0x0a080001, 16, 0x0a0000fe, 0,
					  &out),
		  c++);
	check_api(&out, lb_conf_snat_add(f->c, 0x0a00000b, 99, &out), c++);
	bad.proto = 1;
	check_api(&out, lb_conf_svc_add(f->c, &bad, NULL, &out), c++);
	bad = k;
	bad.port = 0;
	check_api(&out, lb_conf_svc_add(f->c, &bad, NULL, &out), c++);
	check_api(&out, lb_conf_be_add(f->c, &k, 0x0a01000e, 0, 1, &out), c++);
	check_api(&out, lb_conf_be_add(f->c, &k, 0x0a01000e, 80, 0, &out),
		  c++);
	lb_conf_svc_opts_default(&o);
	o.retries = 300;
	check_api(&out, lb_conf_svc_opts_check(f->c, 6, &o, &out), c++);
	lb_conf_svc_opts_default(&o);
	o.deferq_len = 2000000;
	check_api(&out, lb_conf_svc_set(f->c, &k, &o, &out), c++);
	lb_conf_svc_opts_default(&o);
	o.expiry_ns = 0;
	check_api(&out, lb_conf_svc_opts_check(f->c, 6, &o, &out), c++);
	lb_conf_svc_opts_default(&o);
	o.syn_timeout_ns = 120 * SEC;
	check_api(&out, lb_conf_svc_opts_check(f->c, 6, &o, &out), c++);
	lb_conf_svc_opts_default(&o);
	o.retry_gap_ns = 7200 * SEC;
	o.expiry_ns = 86400 * SEC;
	check_api(&out, lb_conf_svc_opts_check(f->c, 6, &o, &out), c++);
	lb_conf_svc_opts_default(&o);
	memset(o.sched, 'a', sizeof(o.sched));
	check_api(&out, lb_conf_svc_opts_check(f->c, 6, &o, &out), c++);
	bad = k;
	bad.vip = 0xc0000263;
	check_api(&out, lb_conf_svc_del(f->c, &bad, &out), c++);
	assert_ptr_equal(c, cases + NELEM(cases));

	/* NULL means the defaults; a NULL callback accepts any name */
	lb_conf_svc_opts_default(&o);
	snprintf(o.sched, sizeof(o.sched), "anything-at-all");
	assert_int_equal(lb_conf_svc_add(any, &k, &o, NULL), 0);
	bad = k;
	bad.port = 81;
	assert_int_equal(lb_conf_svc_add(any, &bad, NULL, NULL), 0);
	assert_string_equal(lb_conf_svc_find(any, &bad)->opts.sched,
			    "adaptive");
	assert_int_equal(lb_conf_be_add(any, &k, 0x0a000001, 80, 9, NULL), 0);
	assert_int_equal(lb_conf_be_drain(any, &k, 0x0a000001, 80, true, NULL),
			 0);
	assert_int_equal(lb_conf_be_drain(any, &k, 0x0a000001, 80, false,
					  NULL),
			 0);
	assert_int_equal(lb_conf_generation(any), 5);

	/* NULL everywhere is refused, never followed */
	assert_int_equal(lb_conf_addr_add(NULL, 1, 1, 0, NULL), -EINVAL);
	assert_int_equal(lb_conf_addr_del(NULL, 1, NULL), -EINVAL);
	assert_int_equal(lb_conf_route_add(NULL, 0, 0, 1, 0, NULL), -EINVAL);
	assert_int_equal(lb_conf_route_del(NULL, 0, 0, NULL), -EINVAL);
	assert_int_equal(lb_conf_snat_add(NULL, 1, 0, NULL), -EINVAL);
	assert_int_equal(lb_conf_snat_del(NULL, 1, NULL), -EINVAL);
	assert_int_equal(lb_conf_svc_add(NULL, &k, NULL, NULL), -EINVAL);
	assert_int_equal(lb_conf_svc_add(any, NULL, NULL, NULL), -EINVAL);
	assert_int_equal(lb_conf_svc_set(any, &k, NULL, NULL), -EINVAL);
	assert_int_equal(lb_conf_svc_del(NULL, &k, NULL), -EINVAL);
	assert_int_equal(lb_conf_be_add(NULL, &k, 1, 1, 1, NULL), -EINVAL);
	assert_int_equal(lb_conf_be_del(NULL, &k, 1, 1, NULL), -EINVAL);
	assert_int_equal(lb_conf_be_set_weight(NULL, &k, 1, 1, 1, NULL),
			 -EINVAL);
	assert_int_equal(lb_conf_be_drain(NULL, &k, 1, 1, true, NULL),
			 -EINVAL);
	assert_int_equal(lb_conf_svc_opts_check(NULL, 6, &o, NULL), -EINVAL);
	assert_int_equal(lb_conf_save(NULL, &out), -EINVAL);
	assert_int_equal(lb_conf_register(NULL, f->r), -EINVAL);
	assert_null(lb_conf_svc_find(NULL, &k));
	assert_null(lb_conf_svc_find(any, NULL));
	assert_null(lb_conf_addr_at(NULL, 0));
	assert_int_equal(lb_conf_nb_svcs(NULL), 0);
	/* registering twice in one registry is refused whole */
	assert_int_equal(lb_conf_register(f->c, f->r), -EEXIST);
	assert_int_equal(lb_cmd_count(f->r), 1 + NELEM(conf_paths));
	lb_cmd_out_free(&out);
	lb_conf_free(any);
	lb_conf_free(NULL);
	fx_free(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_base_roundtrip),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_options_stored),
		cmocka_unit_test(test_good_commands),
		cmocka_unit_test(test_bad_commands),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_save_apply_save),
		cmocka_unit_test(test_apply_file_lines),
		cmocka_unit_test(test_lists),
		cmocka_unit_test(test_ip6_roundtrip),
		cmocka_unit_test(test_ip6_good_commands),
		cmocka_unit_test(test_ip6_bad_commands),
		cmocka_unit_test(test_ip6_http),
		cmocka_unit_test(test_ip6_synproxy),
		cmocka_unit_test(test_ip6_c_interface),
		cmocka_unit_test(test_save_quotes_and_long_lines),
		cmocka_unit_test(test_generation),
		cmocka_unit_test(test_help_and_markdown),
		cmocka_unit_test(test_validate_and_copy),
		cmocka_unit_test(test_copy_over_larger),
		cmocka_unit_test(test_c_interface),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
