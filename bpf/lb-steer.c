/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-steer: the XDP steering program of one instance from the command
 * line. It writes the object for the PMD's xdp_prog= devarg, adopts the
 * program a net_af_xdp port attached, and reads and writes the pinned
 * maps: what lb-control and lbctl will do through include/lb/steer.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <netinet/in.h>

#include "lb/steer.h"

static const char usage[] =
	"usage: lb-steer (-d DIR | -i INSTANCE) COMMAND [ARGS]\n"
	"  -d DIR        bpffs directory of the instance's maps\n"
	"  -i INSTANCE   the same as -d " LB_STEER_PIN_ROOT "/INSTANCE\n"
	"commands:\n"
	"  obj PATH                    write the program's object, for the\n"
	"                              net_af_xdp devarg xdp_prog=PATH\n"
	"  adopt IFACE                 swap the instance's maps into the\n"
	"                              program the PMD attached to IFACE\n"
	"  attach IFACE [drv|skb]      load and attach without a dataplane\n"
	"  detach IFACE                remove a steering program from IFACE\n"
	"  rule add|del ADDR [PROTO [PORT|LO-HI]] [vip|snat|local]\n"
	"                              ADDR: IPv4 or IPv6; PROTO: tcp, udp,\n"
	"                              icmp, icmp6 or a number; without it,\n"
	"                              the whole address and ARP (IPv6: ND)\n"
	"  rules                       list the rules of both families\n"
	"  acl deny|deny-lb|allow PREFIX[/LEN] [ttl SECONDS]\n"
	"                              IPv4 or IPv6 prefix; LEN 32 or 128\n"
	"                              when left out\n"
	"  acl del PREFIX[/LEN]\n"
	"  acl list | acl gc\n"
	"  stats                       counters, summed over the CPUs\n"
	"  unpin                       remove the instance's pinned maps\n";

static int
fail(const char *what, int rc)
{
	fprintf(stderr, "lb-steer: %s: %s\n", what, strerror(-rc));
	return 1;
}

static int
bad_usage(const char *why)
{
	fprintf(stderr, "lb-steer: %s\n%s", why, usage);
	return 2;
}

static int
ifindex_of(const char *name)
{
	unsigned int i = if_nametoindex(name);

	if (i == 0 || i > INT_MAX) {
		fprintf(stderr, "lb-steer: no interface %s\n", name);
		return -1;
	}
	return (int)i;
}

static int
parse_u32(const char *s, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v > max)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static int
parse_proto(const char *s, uint8_t *proto)
{
	uint32_t v;

	if (strcmp(s, "tcp") == 0)
		*proto = IPPROTO_TCP;
	else if (strcmp(s, "udp") == 0)
		*proto = IPPROTO_UDP;
	else if (strcmp(s, "icmp") == 0)
		*proto = IPPROTO_ICMP;
	else if (strcmp(s, "icmp6") == 0)
		*proto = IPPROTO_ICMPV6;
	else if (parse_u32(s, 255, &v) == 0 && v != 0)
		*proto = (uint8_t)v;
	else
		return -EINVAL;
	return 0;
}

static int
parse_kind(const char *s, enum lb_steer_kind *kind)
{
	if (strcmp(s, "vip") == 0)
		*kind = LB_STEER_KIND_VIP;
	else if (strcmp(s, "snat") == 0)
		*kind = LB_STEER_KIND_SNAT;
	else if (strcmp(s, "local") == 0)
		*kind = LB_STEER_KIND_LOCAL;
	else
		return -EINVAL;
	return 0;
}

static const char *const kind_names[] = {"vip", "snat", "local"};

/* A rule of either family: the address in @p a6 (IPv6) or in
 * r->addr (IPv4), and *@p v6 says which. */
static int
parse_rule(int argc, char **argv, struct lb_steer_rule *r, uint8_t *a6,
	   int *v6)
{
	int i = 0;
	struct in_addr a;

	memset(r, 0, sizeof(*r));
	r->kind = LB_STEER_KIND_VIP;
	if (argc < 1)
		return -EINVAL;
	*v6 = strchr(argv[0], ':') != NULL;
	if (*v6 ? inet_pton(AF_INET6, argv[0], a6) != 1
		: inet_pton(AF_INET, argv[0], &a) != 1)
		return -EINVAL;
	if (!*v6)
		r->addr = a.s_addr;
	i = 1;
	if (i < argc && parse_kind(argv[i], &r->kind) != 0) {
		uint32_t lo, hi;
		char *dash;

		if (parse_proto(argv[i++], &r->proto) != 0)
			return -EINVAL;
		if (i < argc && parse_kind(argv[i], &r->kind) != 0) {
			dash = strchr(argv[i], '-');
			if (dash != NULL)
				*dash = '\0';
			if (parse_u32(argv[i], UINT16_MAX, &lo) != 0)
				return -EINVAL;
			hi = lo;
			if (dash != NULL &&
			    parse_u32(dash + 1, UINT16_MAX, &hi) != 0)
				return -EINVAL;
			r->port_min = (uint16_t)lo;
			r->port_max = (uint16_t)hi;
			i++;
		}
	}
	if (i < argc && parse_kind(argv[i++], &r->kind) != 0)
		return -EINVAL;
	return i == argc ? 0 : -EINVAL;
}

/* Prints a rule whose address is @p a, of either family. */
static int
print_rule_of(const char *a, const struct lb_steer_rule *r, int v6)
{
	char proto[8], ports[16] = "";

	if (r->proto == 0)
		snprintf(proto, sizeof(proto), v6 ? "all+nd" : "all+arp");
	else if (r->proto == IPPROTO_TCP)
		snprintf(proto, sizeof(proto), "tcp");
	else if (r->proto == IPPROTO_UDP)
		snprintf(proto, sizeof(proto), "udp");
	else if (r->proto == IPPROTO_ICMP)
		snprintf(proto, sizeof(proto), "icmp");
	else if (r->proto == IPPROTO_ICMPV6 && v6)
		snprintf(proto, sizeof(proto), "icmp6");
	else
		snprintf(proto, sizeof(proto), "%u", r->proto);
	if (r->proto == IPPROTO_TCP || r->proto == IPPROTO_UDP) {
		if (r->port_min == 0 && r->port_max == 0)
			snprintf(ports, sizeof(ports), "*");
		else if (r->port_min == r->port_max)
			snprintf(ports, sizeof(ports), "%u", r->port_min);
		else
			snprintf(ports, sizeof(ports), "%u-%u", r->port_min,
				 r->port_max);
	}
	printf("%-15s %-7s %-11s %s\n", a, proto, ports,
	       (unsigned int)r->kind < 3 ? kind_names[r->kind] : "?");
	return 0;
}

static int
print_rule(const struct lb_steer_rule *r, void *arg)
{
	char a[INET_ADDRSTRLEN];
	struct in_addr in = {.s_addr = r->addr};

	(void)arg;
	inet_ntop(AF_INET, &in, a, sizeof(a));
	return print_rule_of(a, r, 0);
}

static int
print_rule6(const struct lb_steer_rule6 *r6, void *arg)
{
	char a[INET6_ADDRSTRLEN];
	struct lb_steer_rule r = {
		.proto = r6->proto,
		.port_min = r6->port_min,
		.port_max = r6->port_max,
		.kind = r6->kind,
	};

	(void)arg;
	inet_ntop(AF_INET6, r6->addr, a, sizeof(a));
	return print_rule_of(a, &r, 1);
}

/* An IPv4 prefix into *@p prefix or an IPv6 one into @p p6 (*@p v6 says
 * which); the full length when none is given. */
static int
parse_prefix(const char *s, uint32_t *prefix, uint8_t *p6, int *v6,
	     uint8_t *len)
{
	char buf[INET6_ADDRSTRLEN + 5];
	char *slash;
	struct in_addr a;
	uint32_t l;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	*v6 = strchr(buf, ':') != NULL;
	l = *v6 ? 128 : 32;
	slash = strchr(buf, '/');
	if (slash != NULL) {
		*slash = '\0';
		if (parse_u32(slash + 1, l, &l) != 0)
			return -EINVAL;
	}
	if (*v6 ? inet_pton(AF_INET6, buf, p6) != 1
		: inet_pton(AF_INET, buf, &a) != 1)
		return -EINVAL;
	if (!*v6)
		*prefix = a.s_addr;
	*len = (uint8_t)l;
	return 0;
}

/* Prints an entry whose prefix is @p a, of either family. */
static int
print_acl_of(const char *a, const struct lb_steer_acl *e, uint64_t now)
{
	static const char *const names[] = {"?", "deny", "deny-lb", "allow"};

	printf("%s/%u %s ", a, e->prefixlen,
	       e->action <= 3 ? names[e->action] : "?");
	if (e->expires_ns == 0)
		printf("forever");
	else if (e->expires_ns <= now)
		printf("expired");
	else
		printf("ttl %.3f", (double)(e->expires_ns - now) / 1e9);
	printf("%s\n", e->origin == LB_STEER_ACL_AUTO ? " auto" : "");
	return 0;
}

static int
print_acl(const struct lb_steer_acl *e, void *arg)
{
	char a[INET_ADDRSTRLEN];
	struct in_addr in = {.s_addr = e->prefix};

	inet_ntop(AF_INET, &in, a, sizeof(a));
	return print_acl_of(a, e, *(const uint64_t *)arg);
}

static int
print_acl6(const struct lb_steer_acl6 *e6, void *arg)
{
	char a[INET6_ADDRSTRLEN];
	struct lb_steer_acl e = {
		.prefixlen = e6->prefixlen,
		.action = e6->action,
		.expires_ns = e6->expires_ns,
		.origin = e6->origin,
	};

	inet_ntop(AF_INET6, e6->prefix, a, sizeof(a));
	return print_acl_of(a, &e, *(const uint64_t *)arg);
}

static int
cmd_acl(struct lb_steer *s, int argc, char **argv)
{
	enum lb_steer_acl_action act;
	uint32_t prefix = 0, secs = 0;
	uint8_t len, p6[16];
	int rc, v6 = 0;

	if (argc < 1)
		return bad_usage("acl: what?");
	if (strcmp(argv[0], "list") == 0) {
		uint64_t now = lb_steer_now_ns();

		rc = lb_steer_acl_walk(s, print_acl, &now);
		if (rc == 0)
			rc = lb_steer_acl6_walk(s, print_acl6, &now);
		/* Pins of a version without IPv6: its IPv4 entries are all. */
		if (rc == -EOPNOTSUPP)
			rc = 0;
		return rc != 0 ? fail("acl list", rc) : 0;
	}
	if (strcmp(argv[0], "gc") == 0) {
		rc = lb_steer_acl_gc(s, 0);
		if (rc < 0)
			return fail("acl gc", rc);
		printf("%d expired entr%s removed\n", rc,
		       rc == 1 ? "y" : "ies");
		return 0;
	}
	if (argc < 2 || parse_prefix(argv[1], &prefix, p6, &v6, &len) != 0)
		return bad_usage("acl: expected PREFIX[/LEN]");
	if (strcmp(argv[0], "del") == 0) {
		rc = v6 ? lb_steer_acl6_del(s, p6, len)
			: lb_steer_acl_del(s, prefix, len);
		return rc != 0 ? fail("acl del", rc) : 0;
	}
	if (strcmp(argv[0], "deny") == 0)
		act = LB_STEER_ACL_DENY;
	else if (strcmp(argv[0], "deny-lb") == 0)
		act = LB_STEER_ACL_DENY_LB;
	else if (strcmp(argv[0], "allow") == 0)
		act = LB_STEER_ACL_ALLOW;
	else
		return bad_usage("acl: unknown action");
	if (argc == 4 && strcmp(argv[2], "ttl") == 0) {
		if (parse_u32(argv[3], UINT32_MAX, &secs) != 0 || secs == 0)
			return bad_usage("acl: bad ttl");
	} else if (argc != 2) {
		return bad_usage("acl: expected [ttl SECONDS]");
	}
	rc = v6 ? lb_steer_acl6_set(s, p6, len, act, secs * 1000000000ull)
		: lb_steer_acl_set(s, prefix, len, act, secs * 1000000000ull);
	return rc != 0 ? fail("acl", rc) : 0;
}

static int
cmd_rule(struct lb_steer *s, int argc, char **argv)
{
	struct lb_steer_rule r;
	struct lb_steer_rule6 r6;
	int add, v6, rc;

	if (strcmp(argv[0], "add") == 0)
		add = 1;
	else if (strcmp(argv[0], "del") == 0)
		add = 0;
	else
		return bad_usage("rule: add or del");
	if (parse_rule(argc - 1, argv + 1, &r, r6.addr, &v6) != 0)
		return bad_usage("rule: bad rule");
	if (v6) {
		r6.proto = r.proto;
		r6.port_min = r.port_min;
		r6.port_max = r.port_max;
		r6.kind = r.kind;
		rc = add ? lb_steer_rule6_add(s, &r6)
			 : lb_steer_rule6_del(s, &r6);
	} else {
		rc = add ? lb_steer_rule_add(s, &r) : lb_steer_rule_del(s, &r);
	}
	return rc != 0 ? fail(add ? "rule add" : "rule del", rc) : 0;
}

static int
cmd_stats(struct lb_steer *s)
{
	struct lb_steer_stats st;
	int rc = lb_steer_stats_read(s, &st);

	if (rc != 0)
		return fail("stats", rc);
	for (unsigned int c = 0; c < LB_STEER_CTR_MAX; c++)
		printf("%-15s %llu packets %llu bytes\n", lb_steer_ctr_name(c),
		       (unsigned long long)st.ctr[c].packets,
		       (unsigned long long)st.ctr[c].bytes);
	return 0;
}

/* Commands that load a program: obj needs no directory, attach and adopt
 * pin into it. */
static int
cmd_prog(const char *dir, int argc, char **argv)
{
	struct lb_steer_conf conf = {.pin_dir = dir};
	struct lb_steer *s = NULL;
	uint32_t mode = 0;
	int ifindex, rc;

	if (strcmp(argv[0], "obj") == 0) {
		if (argc != 2)
			return bad_usage("obj: expected PATH");
		rc = lb_steer_write_obj(argv[1]);
		return rc != 0 ? fail(argv[1], rc) : 0;
	}
	if (argc < 2)
		return bad_usage("expected IFACE");
	ifindex = ifindex_of(argv[1]);
	if (ifindex < 0)
		return 1;
	if (strcmp(argv[0], "detach") == 0) {
		rc = lb_steer_detach_ifindex(ifindex);
		return rc != 0 ? fail("detach", rc) : 0;
	}
	if (strcmp(argv[0], "adopt") == 0) {
		if (argc != 2)
			return bad_usage("adopt: expected IFACE");
		rc = lb_steer_adopt(&conf, ifindex, &s);
		if (rc != 0)
			return fail("adopt", rc);
	} else {
		if (argc == 3 && strcmp(argv[2], "drv") == 0)
			mode = XDP_FLAGS_DRV_MODE;
		else if (argc == 3 && strcmp(argv[2], "skb") == 0)
			mode = XDP_FLAGS_SKB_MODE;
		else if (argc != 2)
			return bad_usage("attach: expected IFACE [drv|skb]");
		rc = lb_steer_load(&conf, &s);
		if (rc == 0)
			rc = lb_steer_attach(s, ifindex, mode);
		if (rc != 0) {
			lb_steer_close(s);
			return fail("attach", rc);
		}
	}
	/* The attachment outlives us: it is the interface's now, and
	 * "detach" or the PMD's close removes it. Only the handle goes. */
	lb_steer_disown(s);
	lb_steer_close(s);
	return 0;
}

int
main(int argc, char **argv)
{
	char dirbuf[PATH_MAX];
	const char *dir = NULL;
	struct lb_steer *s;
	int rc, i = 1;

	while (i < argc && argv[i][0] == '-') {
		if (strcmp(argv[i], "-h") == 0 ||
		    strcmp(argv[i], "--help") == 0) {
			fputs(usage, stdout);
			return 0;
		}
		if (i + 1 >= argc)
			return bad_usage("option without its value");
		if (strcmp(argv[i], "-d") == 0) {
			dir = argv[i + 1];
		} else if (strcmp(argv[i], "-i") == 0) {
			rc = lb_steer_pin_dir(dirbuf, sizeof(dirbuf),
					      argv[i + 1]);
			if (rc != 0)
				return bad_usage("bad instance name");
			dir = dirbuf;
		} else {
			return bad_usage("unknown option");
		}
		i += 2;
	}
	argc -= i;
	argv += i;
	if (argc < 1)
		return bad_usage("no command");
	if (strcmp(argv[0], "obj") == 0)
		return cmd_prog(dir, argc, argv);
	if (dir == NULL)
		return bad_usage("-d DIR or -i INSTANCE is needed");
	if (strcmp(argv[0], "adopt") == 0 || strcmp(argv[0], "attach") == 0 ||
	    strcmp(argv[0], "detach") == 0)
		return cmd_prog(dir, argc, argv);
	if (strcmp(argv[0], "unpin") == 0) {
		rc = lb_steer_unpin(dir);
		return rc != 0 ? fail(dir, rc) : 0;
	}

	rc = lb_steer_open_pinned(dir, &s);
	if (rc != 0)
		return fail(dir, rc);
	if (strcmp(argv[0], "rule") == 0 && argc >= 3) {
		rc = cmd_rule(s, argc - 1, argv + 1);
	} else if (strcmp(argv[0], "rules") == 0) {
		rc = lb_steer_rule_walk(s, print_rule, NULL);
		if (rc == 0)
			rc = lb_steer_rule6_walk(s, print_rule6, NULL);
		if (rc == -EOPNOTSUPP)
			rc = 0; /* pins of a version without IPv6 */
		rc = rc != 0 ? fail("rules", rc) : 0;
	} else if (strcmp(argv[0], "acl") == 0) {
		rc = cmd_acl(s, argc - 1, argv + 1);
	} else if (strcmp(argv[0], "stats") == 0) {
		rc = cmd_stats(s);
	} else {
		rc = bad_usage("unknown command");
	}
	lb_steer_close(s);
	return rc;
}
