/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-control's side of the XDP steering program (control/steer/steerctl.c) on
 * real maps: the acl commands, the automatic deny fed with reject
 * records, collection, rule sync, counters. Needs root (BPF maps);
 * reports a skip (77) otherwise.
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
#include <unistd.h>

#include <bpf/libbpf.h>
#include <cmocka.h>

#include "lb/admit_conf.h"
#include "steerctl.h"

#define S 1000000000ull

struct fx {
	struct lb_cmd_reg *reg;
	struct lb_steerctl *sc;
	struct lb_steer *s; /* the same maps, to look at them */
	json_t *data;
	struct lb_cmd_out out;
};

static int
setup(void **state)
{
	struct lb_acl_auto_conf ac = {2, 10 * S, 60 * S, 2};
	struct lb_steer_conf conf = {.max_rules = 64, .max_acl = 64};
	struct lb_steer *own;
	struct fx *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return -1;
	f->reg = lb_cmd_reg_create();
	f->sc = lb_steerctl_create(&ac, &f->data);
	if (f->reg == NULL || f->sc == NULL ||
	    lb_cmd_reg_build(f->reg,
			     &(struct lb_cmd_bind){"steer", f->sc}, 1,
			     NULL) != 0 ||
	    lb_cmd_lookup(f->reg, 2, (char *const[]){"acl", "deny", NULL},
			  NULL) == NULL)
		return -1;
	lb_cmd_out_init(&f->out);
	/* Before any maps: every acl command refuses. */
	if (lb_cmd_exec_line(f->reg, "acl deny 10.0.0.1", &f->out) != -ENODEV ||
	    strstr(lb_cmd_out_errmsg(&f->out), "no XDP steering maps") == NULL)
		return -1;
	lb_cmd_out_reset(&f->out);
	if (lb_steer_load(&conf, &own) != 0)
		return -1;
	/* The module owns the handle; the test looks at the maps through
	 * it too. */
	f->s = own;
	if (lb_steerctl_attach_handle(f->sc, own, NULL, 0) != 0)
		return -1;
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	lb_steerctl_free(f->sc); /* closes f->s */
	lb_cmd_reg_free(f->reg);
	lb_cmd_out_free(&f->out);
	json_decref(f->data);
	free(f);
	return 0;
}

static int
run(struct fx *f, const char *line)
{
	lb_cmd_out_reset(&f->out);
	return lb_cmd_exec_line(f->reg, line, &f->out);
}

/* The entry of exactly @p pfx/@p len, or -ENOENT; either family. */
struct find {
	uint32_t prefix;
	uint8_t prefix6[16];
	uint8_t len;
	struct lb_steer_acl *out;   /* may be NULL */
	struct lb_steer_acl6 *out6; /* may be NULL */
	int n, hit;
};

static int
find_cb(const struct lb_steer_acl *a, void *arg)
{
	struct find *x = arg;

	x->n++;
	if (a->prefix == x->prefix && a->prefixlen == x->len) {
		if (x->out != NULL)
			*x->out = *a;
		x->hit = 1;
	}
	return 0;
}

static int
find6_cb(const struct lb_steer_acl6 *a, void *arg)
{
	struct find *x = arg;

	x->n++;
	if (memcmp(a->prefix, x->prefix6, 16) == 0 && a->prefixlen == x->len) {
		if (x->out6 != NULL)
			*x->out6 = *a;
		x->hit = 1;
	}
	return 0;
}

static int
entry_any(struct fx *f, const char *pfx, uint8_t len, struct find *x,
	  int *total)
{
	x->len = len;
	if (strchr(pfx, ':') != NULL) {
		assert_int_equal(inet_pton(AF_INET6, pfx, x->prefix6), 1);
		assert_int_equal(lb_steer_acl6_walk(f->s, find6_cb, x), 0);
	} else {
		assert_int_equal(inet_pton(AF_INET, pfx, &x->prefix), 1);
		assert_int_equal(lb_steer_acl_walk(f->s, find_cb, x), 0);
	}
	if (total != NULL)
		*total = x->n;
	return x->hit ? 0 : -ENOENT;
}

static int
entry(struct fx *f, const char *pfx, uint8_t len, struct lb_steer_acl *a,
      int *total)
{
	struct find x = {.out = a};

	return entry_any(f, pfx, len, &x, total);
}

static int
entry6(struct fx *f, const char *pfx, uint8_t len, struct lb_steer_acl6 *a,
       int *total)
{
	struct find x = {.out6 = a};

	return entry_any(f, pfx, len, &x, total);
}

static void
test_commands(void **state)
{
	struct fx *f = *state;
	struct lb_steer_acl a;
	uint64_t now = lb_steer_now_ns();
	int n;

	assert_int_equal(run(f, "acl deny 10.1.0.0/16 expires 90s"), 0);
	assert_int_equal(entry(f, "10.1.0.0", 16, &a, NULL), 0);
	assert_int_equal(a.action, LB_STEER_ACL_DENY);
	assert_int_equal(a.origin, LB_STEER_ACL_MANUAL);
	assert_true(a.expires_ns > now + 89 * S && a.expires_ns < now + 91 * S);
	assert_int_equal(run(f, "acl deny 10.2.3.4 lb-only"), 0);
	assert_int_equal(entry(f, "10.2.3.4", 32, &a, NULL), 0);
	assert_int_equal(a.action, LB_STEER_ACL_DENY_LB);
	assert_int_equal(a.expires_ns, 0);
	assert_int_equal(run(f, "acl allow 10.1.2.0/24"), 0);
	assert_int_equal(entry(f, "10.1.2.0", 24, &a, &n), 0);
	assert_int_equal(a.action, LB_STEER_ACL_ALLOW);
	assert_int_equal(n, 3);

	/* refused, nothing changed */
	assert_int_not_equal(run(f, "acl deny 10.1.2.3/16"), 0);
	assert_non_null(strstr(lb_cmd_out_errmsg(&f->out), "host bits"));
	assert_int_not_equal(run(f, "acl deny 10.1.2.3 expires soon"), 0);
	assert_int_not_equal(run(f, "acl allow"), 0);
	assert_int_equal(run(f, "acl del 10.9.0.0/16"), -ENOENT);
	assert_non_null(strstr(lb_cmd_out_errmsg(&f->out), "no ACL entry"));
	assert_int_equal(entry(f, "10.1.0.0", 16, NULL, &n), 0);
	assert_int_equal(n, 3);

	/* list: text and JSON, sorted by prefix */
	assert_int_equal(run(f, "acl list"), 0);
	assert_non_null(strstr(lb_cmd_out_text(&f->out),
			       "10.1.0.0/16        deny     manual  in 9"));
	assert_true(strstr(lb_cmd_out_text(&f->out), "10.1.0.0/16") <
		    strstr(lb_cmd_out_text(&f->out), "10.1.2.0/24"));
	assert_non_null(f->data);
	assert_int_equal(json_array_size(json_object_get(f->data, "entries")),
			 3);

	assert_int_equal(run(f, "acl del 10.1.0.0/16"), 0);
	assert_int_equal(entry(f, "10.1.0.0", 16, NULL, &n), -ENOENT);
	assert_int_equal(n, 2);
}

static struct lb_fb
reject(const char *client, uint16_t svc, enum lb_admit_key key)
{
	struct lb_fb r;
	struct in_addr a;

	memset(&r, 0, sizeof(r));
	assert_int_equal(inet_pton(AF_INET, client, &a), 1);
	r.kind = LB_FB_REJECT;
	r.svc = svc;
	r.u32 = ntohl(a.s_addr);
	r.flags = (uint16_t)(2 | key << 8);
	return r;
}

static void
test_auto(void **state)
{
	struct fx *f = *state;
	struct lb_dpconf *c = calloc(1, sizeof(*c));
	uint64_t now = lb_steer_now_ns();
	struct lb_steer_acl a;
	struct lb_fb r[2];

	assert_non_null(c);
	c->nb_svc = 2;
	c->svc[1].state = LB_SVC_ACTIVE;
	c->svc[1].opts.admit.prefix = 24;

	/* two records of a client deny it (lb-only, auto, for the ttl) */
	r[0] = reject("192.0.2.7", 0, LB_ADMIT_KEY_CLIENT);
	lb_steerctl_feed(f->sc, r, 1, c, now);
	assert_int_equal(entry(f, "192.0.2.7", 32, NULL, NULL), -ENOENT);
	lb_steerctl_feed(f->sc, r, 1, c, now + 1);
	assert_int_equal(entry(f, "192.0.2.7", 32, &a, NULL), 0);
	assert_int_equal(a.action, LB_STEER_ACL_DENY_LB);
	assert_int_equal(a.origin, LB_STEER_ACL_AUTO);
	assert_int_equal(a.expires_ns, now + 1 + 60 * S);

	/* keys that are not a source are ignored */
	r[0] = reject("192.0.2.8", 0, LB_ADMIT_KEY_SVC);
	r[1] = reject("192.0.2.8", 0, LB_ADMIT_KEY_PRIO);
	lb_steerctl_feed(f->sc, r, 2, c, now);
	lb_steerctl_feed(f->sc, r, 2, c, now);
	assert_int_equal(entry(f, "192.0.2.8", 32, NULL, NULL), -ENOENT);

	/* a prefix key denies the service's prefix */
	r[0] = reject("198.51.100.9", 1, LB_ADMIT_KEY_PREFIX);
	r[1] = r[0];
	lb_steerctl_feed(f->sc, r, 2, c, now);
	assert_int_equal(entry(f, "198.51.100.0", 24, &a, NULL), 0);
	assert_int_equal(a.origin, LB_STEER_ACL_AUTO);

	/* at most two at once */
	r[0] = reject("203.0.113.1", 0, LB_ADMIT_KEY_CLIENT_SVC);
	r[1] = r[0];
	lb_steerctl_feed(f->sc, r, 2, c, now);
	assert_int_equal(entry(f, "203.0.113.1", 32, NULL, NULL), -ENOENT);

	/* an operator's allow is never overridden */
	assert_int_equal(run(f, "acl del 192.0.2.7"), 0);
	assert_int_equal(run(f, "acl allow 203.0.113.0/24"), 0);
	lb_steerctl_feed(f->sc, r, 2, c, now);
	assert_int_equal(entry(f, "203.0.113.1", 32, NULL, NULL), -ENOENT);

	/* the list says so */
	assert_int_equal(run(f, "acl list"), 0);
	assert_non_null(strstr(lb_cmd_out_text(&f->out),
			       "198.51.100.0/24    deny-lb  auto"));
	assert_non_null(strstr(lb_cmd_out_text(&f->out),
			       "automatic deny: 2 rejects within 10s"));

	/* expiry: collected from the map, room again in the table */
	lb_steerctl_tick(f->sc, now + 61 * S);
	assert_int_equal(entry(f, "198.51.100.0", 24, NULL, NULL), -ENOENT);
	assert_int_equal(entry(f, "203.0.113.0", 24, NULL, NULL), 0);
	run(f, "acl list");
	assert_int_equal(
		json_integer_value(json_object_get(
			json_object_get(f->data, "auto"), "active")),
		0);
	free(c);
}

static void
test_sync_stats(void **state)
{
	struct fx *f = *state;
	struct lb_dpconf *c = calloc(1, sizeof(*c));
	struct lb_cmd_out o;
	json_t *d = json_object();

	assert_non_null(c);
	c->nb_svc = 1;
	c->svc[0].state = LB_SVC_ACTIVE;
	c->svc[0].proto = 6;
	c->svc[0].vip = htonl(0xc0000264);
	c->svc[0].vport = htons(80);
	assert_int_equal(lb_steerctl_sync(f->sc, c), 0);
	lb_cmd_out_init(&o);
	assert_int_equal(lb_steerctl_stats(f->sc, d, &o), 0);
	assert_non_null(strstr(lb_cmd_out_text(&o), "xsk_vip"));
	assert_non_null(json_object_get(
		json_object_get(json_object_get(d, "xdp"), "counters"),
		"drop_deny"));
	lb_cmd_out_reset(&o);
	assert_int_equal(lb_steerctl_metrics(f->sc, &o), 0);
	assert_non_null(strstr(lb_cmd_out_text(&o),
			       "lb_xdp_packets_total{verdict=\"pass\"} 0"));
	assert_non_null(strstr(lb_cmd_out_text(&o), "lb_xdp_acl_auto_active"));
	lb_cmd_out_free(&o);
	json_decref(d);
	free(c);
}

/* ---- IPv6 ---- */

/* IPv6 prefixes go to acl_v6, IPv4 ones stay in acl_v4; bad ones change
 * nothing. */
static void
test_commands6(void **state)
{
	struct fx *f = *state;
	struct lb_steer_acl6 a;
	const char *t;
	int n;

	assert_int_equal(run(f, "acl deny 2001:db8:66::/64 expires 90s"), 0);
	assert_int_equal(entry6(f, "2001:db8:66::", 64, &a, NULL), 0);
	assert_int_equal(a.action, LB_STEER_ACL_DENY);
	assert_int_equal(a.origin, LB_STEER_ACL_MANUAL);
	assert_int_not_equal(a.expires_ns, 0);
	assert_int_equal(run(f, "acl deny 2001:db8::7 lb-only"), 0);
	assert_int_equal(entry6(f, "2001:db8::7", 128, &a, NULL), 0);
	assert_int_equal(a.action, LB_STEER_ACL_DENY_LB);
	assert_int_equal(run(f, "acl allow 2001:db8:66::1/128"), 0);
	assert_int_equal(run(f, "acl deny 10.0.0.0/8"), 0);
	assert_int_equal(entry6(f, "2001:db8:66::1", 128, &a, &n), 0);
	assert_int_equal(a.action, LB_STEER_ACL_ALLOW);
	assert_int_equal(n, 3);
	assert_int_equal(entry(f, "10.0.0.0", 8, NULL, &n), 0);
	assert_int_equal(n, 1);

	/* the longest live entry decides, as in the program */
	{
		uint8_t src[16];

		inet_pton(AF_INET6, "2001:db8:66::2", src);
		assert_int_equal(lb_steer_acl6_match(f->s, src,
						     lb_steer_now_ns(), &a),
				 0);
		assert_int_equal(a.prefixlen, 64);
	}

	/* refused, nothing changed */
	assert_int_equal(run(f, "acl deny 2001:db8:66::1/64"), -EINVAL);
	assert_non_null(strstr(lb_cmd_out_errmsg(&f->out), "host bits"));
	assert_int_equal(run(f, "acl deny 2001:db8::/129"), -ERANGE);
	assert_int_equal(run(f, "acl deny 2001:db8::g/64"), -EINVAL);
	assert_int_equal(run(f, "acl del 2001:db8:67::/64"), -ENOENT);
	assert_non_null(strstr(lb_cmd_out_errmsg(&f->out),
			       "no ACL entry for 2001:db8:67::/64"));
	assert_int_equal(entry6(f, "2001:db8::7", 128, NULL, &n), 0);
	assert_int_equal(n, 3);

	/* list: IPv4 first, then IPv6 by address */
	assert_int_equal(run(f, "acl list"), 0);
	t = lb_cmd_out_text(&f->out);
	assert_non_null(strstr(t, "2001:db8:66::/64"));
	assert_true(strstr(t, "10.0.0.0/8") < strstr(t, "2001:db8::7/128"));
	assert_true(strstr(t, "2001:db8::7/128") <
		    strstr(t, "2001:db8:66::/64"));
	assert_true(strstr(t, "2001:db8:66::/64") <
		    strstr(t, "2001:db8:66::1/128"));
	assert_int_equal(json_array_size(json_object_get(f->data, "entries")),
			 4);
	assert_string_equal(
		json_string_value(json_object_get(
			json_array_get(json_object_get(f->data, "entries"), 2),
			"prefix")),
		"2001:db8:66::/64");

	lb_cmd_out_reset(&f->out);
	assert_int_equal(lb_steerctl_metrics(f->sc, &f->out), 0);
	t = lb_cmd_out_text(&f->out);
	assert_non_null(strstr(t, "lb_xdp_acl_entries{family=\"ipv4\"} 1\n"));
	assert_non_null(strstr(t, "lb_xdp_acl_entries{family=\"ipv6\"} 3\n"));
	assert_non_null(strstr(t, "lb_xdp_rules{family=\"ipv6\"} 0\n"));

	assert_int_equal(run(f, "acl del 2001:db8:66::/64"), 0);
	assert_int_equal(entry6(f, "2001:db8:66::", 64, NULL, &n), -ENOENT);
	assert_int_equal(n, 2);
}

/* A reject record of an IPv6 client as the dataplane writes it: the
 * key (already masked) and its length. */
static struct lb_fb
reject6(const char *key, uint8_t len, uint16_t svc, enum lb_admit_key cls)
{
	struct lb_fb r;

	memset(&r, 0, sizeof(r));
	assert_int_equal(inet_pton(AF_INET6, key, r.key6), 1);
	r.kind = LB_FB_REJECT;
	r.svc = svc;
	r.be = len;
	r.flags = (uint16_t)(2 | LB_FB_F_REJ6 | cls << 8);
	return r;
}

static json_int_t
auto_ctr(struct fx *f, const char *name)
{
	assert_int_equal(run(f, "acl list"), 0);
	return json_integer_value(
		json_object_get(json_object_get(f->data, "auto"), name));
}

/* IPv6 sources are denied as IPv4's: in acl_v6, deny-lb, auto, for the
 * ttl, under the same bound; an operator's entry decides; the deny runs
 * out. */
static void
test_auto6(void **state)
{
	struct fx *f = *state;
	struct lb_dpconf *c = calloc(1, sizeof(*c));
	uint64_t now = lb_steer_now_ns();
	struct lb_steer_acl6 a;
	struct lb_fb r[2];
	int n;

	assert_non_null(c);
	c->nb_svc = 1;

	/* two records of a /64 deny it */
	r[0] = reject6("2001:db8:7::", 64, 0, LB_ADMIT_KEY_PREFIX);
	lb_steerctl_feed(f->sc, r, 1, c, now);
	assert_int_equal(entry6(f, "2001:db8:7::", 64, NULL, NULL), -ENOENT);
	lb_steerctl_feed(f->sc, r, 1, c, now + 1);
	assert_int_equal(entry6(f, "2001:db8:7::", 64, &a, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(a.action, LB_STEER_ACL_DENY_LB);
	assert_int_equal(a.origin, LB_STEER_ACL_AUTO);
	assert_int_equal(a.expires_ns, now + 1 + 60 * S);
	assert_int_equal(entry(f, "0.0.0.0", 0, NULL, &n), -ENOENT);
	assert_int_equal(n, 0); /* nothing in acl_v4 */

	/* keys that are no source are ignored; host bits never reach the
	 * map */
	r[0] = reject6("2001:db8:8::", 0, 0, LB_ADMIT_KEY_SVC);
	r[1] = reject6("2001:db8:8::", 0, 0, LB_ADMIT_KEY_PRIO);
	lb_steerctl_feed(f->sc, r, 2, c, now);
	lb_steerctl_feed(f->sc, r, 2, c, now);
	assert_int_equal(entry6(f, "2001:db8:8::", 64, NULL, &n), -ENOENT);
	assert_int_equal(n, 1);
	assert_int_equal(auto_ctr(f, "untracked"), 4);

	/* an operator's allow covering the source wins */
	assert_int_equal(run(f, "acl allow 2001:db8:9::/48"), 0);
	r[0] = reject6("2001:db8:9:1::", 64, 0, LB_ADMIT_KEY_PREFIX);
	r[1] = r[0];
	lb_steerctl_feed(f->sc, r, 2, c, now);
	assert_int_equal(entry6(f, "2001:db8:9:1::", 64, NULL, NULL), -ENOENT);
	assert_int_equal(auto_ctr(f, "operator_decided"), 1);
	assert_int_equal(auto_ctr(f, "active"), 1);

	/* an address key denies the address; that is two, the bound */
	r[0] = reject6("2001:db8:a::5", 128, 0, LB_ADMIT_KEY_CLIENT);
	r[1] = r[0];
	lb_steerctl_feed(f->sc, r, 2, c, now);
	assert_int_equal(entry6(f, "2001:db8:a::5", 128, &a, NULL), 0);
	assert_int_equal(a.origin, LB_STEER_ACL_AUTO);

	/* at the bound, a new source is refused, the denies stay */
	r[0] = reject6("2001:db8:b::", 64, 0, LB_ADMIT_KEY_PREFIX);
	r[1] = r[0];
	lb_steerctl_feed(f->sc, r, 2, c, now);
	lb_steerctl_feed(f->sc, r, 2, c, now);
	assert_int_equal(entry6(f, "2001:db8:b::", 64, NULL, NULL), -ENOENT);
	assert_int_equal(auto_ctr(f, "full"), 3);
	assert_int_equal(entry6(f, "2001:db8:7::", 64, NULL, NULL), 0);

	/* the list says auto */
	assert_int_equal(run(f, "acl list"), 0);
	assert_non_null(strstr(lb_cmd_out_text(&f->out),
			       "2001:db8:7::/64    deny-lb  auto"));

	/* the operator removes one: room again for the next source */
	assert_int_equal(run(f, "acl del 2001:db8:a::5"), 0);
	assert_int_equal(auto_ctr(f, "active"), 1);
	lb_steerctl_feed(f->sc, r, 2, c, now);
	assert_int_equal(entry6(f, "2001:db8:b::", 64, NULL, NULL), 0);

	/* expiry: collected from the map, the table's room given back */
	lb_steerctl_tick(f->sc, now + 61 * S);
	assert_int_equal(entry6(f, "2001:db8:7::", 64, NULL, NULL), -ENOENT);
	assert_int_equal(entry6(f, "2001:db8:b::", 64, NULL, NULL), -ENOENT);
	assert_int_equal(entry6(f, "2001:db8:9::", 48, NULL, NULL), 0);
	assert_int_equal(auto_ctr(f, "active"), 0);
	free(c);
}

struct count6 {
	int whole, port, range;
};

static int
count6_cb(const struct lb_steer_rule6 *r, void *arg)
{
	struct count6 *c = arg;

	if (r->proto == 0)
		c->whole++;
	else if (r->port_min == r->port_max)
		c->port++;
	else
		c->range++;
	return 0;
}

/* steer_rules6 follows the table: IPv6 VIPs, SNAT and own addresses;
 * whole unless the host has the address; gone when the table drops
 * them. */
static void
test_sync6(void **state)
{
	struct fx *f = *state;
	struct lb_dpconf *c = calloc(1, sizeof(*c));
	uint8_t host[1][16];
	struct count6 n = {0};
	struct lb_cmd_out o;

	assert_non_null(c);
	assert_int_equal(inet_pton(AF_INET6, "2001:db8::50", host[0]), 1);
	assert_int_equal(lb_steerctl_set_host6(f->sc, host, 1), 0);
	assert_int_equal(lb_steerctl_set_host6(f->sc, host, 65), -EINVAL);
	c->nb_svc = 3;
	c->svc[0].state = LB_SVC_ACTIVE;
	c->svc[0].proto = 6;
	c->svc[0].af = LB_CONF_AF_INET6;
	inet_pton(AF_INET6, "2001:db8::10", c->svc[0].vip6);
	c->svc[0].vport = htons(80);
	c->svc[1] = c->svc[0];
	inet_pton(AF_INET6, "2001:db8::50", c->svc[1].vip6);
	c->svc[1].vport = htons(443);
	c->svc[2].state = LB_SVC_ACTIVE;
	c->svc[2].proto = 6;
	c->svc[2].vip = htonl(0xc0000264);
	c->svc[2].vport = htons(80);
	c->nb_addr6 = 1;
	inet_pton(AF_INET6, "2001:db8::1", c->addr6[0].ip);
	c->nb_snat6 = 1;
	inet_pton(AF_INET6, "2001:db8::50", c->snat6[0].ip);
	assert_int_equal(lb_steerctl_sync(f->sc, c), 0);
	assert_int_equal(lb_steer_rule6_walk(f->s, count6_cb, &n), 0);
	assert_int_equal(n.whole, 2); /* ::10 and ::1 */
	assert_int_equal(n.port, 1);  /* ::50 tcp 443 */
	assert_int_equal(n.range, 2); /* ::50 SNAT tcp and udp */
	lb_cmd_out_init(&o);
	assert_int_equal(lb_steerctl_metrics(f->sc, &o), 0);
	/* the two whole-address rules, the port rule and the two ranges */
	assert_non_null(strstr(lb_cmd_out_text(&o),
			       "lb_xdp_rules{family=\"ipv6\"} 5\n"));
	assert_non_null(strstr(lb_cmd_out_text(&o),
			       "lb_xdp_rules{family=\"ipv4\"} 1\n"));
	lb_cmd_out_free(&o);

	/* the VIP on ::10 goes, the rest stays */
	c->svc[0].state = LB_SVC_EMPTY;
	assert_int_equal(lb_steerctl_sync(f->sc, c), 0);
	memset(&n, 0, sizeof(n));
	assert_int_equal(lb_steer_rule6_walk(f->s, count6_cb, &n), 0);
	assert_int_equal(n.whole, 1);
	assert_int_equal(n.port + n.range, 3);

	/* an empty table: nothing */
	memset(c, 0, sizeof(*c));
	assert_int_equal(lb_steerctl_sync(f->sc, c), 0);
	memset(&n, 0, sizeof(n));
	assert_int_equal(lb_steer_rule6_walk(f->s, count6_cb, &n), 0);
	assert_int_equal(n.whole + n.port + n.range, 0);
	free(c);
}

static int
quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_commands, setup, teardown),
		cmocka_unit_test_setup_teardown(test_auto, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_stats, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_commands6, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_sync6, setup, teardown),
		cmocka_unit_test_setup_teardown(test_auto6, setup, teardown),
	};

	if (geteuid() != 0) {
		printf("steerctl_test: SKIP: needs root (BPF maps)\n");
		return 77;
	}
	libbpf_set_print(quiet);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
