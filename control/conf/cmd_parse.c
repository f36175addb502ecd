/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The argument parsers every module's commands share, the keyword/value
 * options built on them, and the formatters that write what the parsers
 * read back (one table of duration units serves both ways).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "lb/cmd.h"
#include "lb/conf.h"

/* ---- argument parsers ---- */

/* Exactly n characters of decimal digits; -ERANGE past 64 bits. */
static int
scan_u64(const char *s, size_t n, uint64_t *v)
{
	bool over = false;
	uint64_t x = 0;

	if (n == 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		unsigned int d;

		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		d = (unsigned int)(s[i] - '0');
		/* keep scanning after an overflow: a letter is EINVAL */
		if (x > (UINT64_MAX - d) / 10)
			over = true;
		else
			x = x * 10 + d;
	}
	*v = x;
	return over ? -ERANGE : 0;
}

static bool
scan_ipv4(const char *s, size_t n, uint32_t *ip)
{
	uint32_t a = 0;
	size_t i = 0;

	for (unsigned int part = 0; part < 4; part++) {
		unsigned int v = 0;
		size_t start = i;

		if (part > 0) {
			if (i >= n || s[i] != '.')
				return false;
			start = ++i;
		}
		while (i < n && s[i] >= '0' && s[i] <= '9' && i - start < 3) {
			v = v * 10 + (unsigned int)(s[i] - '0');
			i++;
		}
		if (i == start || v > 255 || (s[start] == '0' && i - start > 1))
			return false;
		a = a << 8 | v;
	}
	if (i != n)
		return false;
	*ip = a;
	return true;
}

static uint32_t
prefix_mask(unsigned int len)
{
	return len == 0 ? 0 : UINT32_MAX << (32 - len);
}

int
lb_cmd_parse_ipv4(const char *s, uint32_t *ip, struct lb_cmd_out *out)
{
	if (s == NULL || ip == NULL)
		return lb_cmd_error(out, -EINVAL, "missing IPv4 address");
	if (!scan_ipv4(s, strlen(s), ip))
		return lb_cmd_error(out, -EINVAL, "invalid IPv4 address '%s'",
				    s);
	return 0;
}

static int
port_of(const char *p, const char *s, uint16_t *port, struct lb_cmd_out *out)
{
	uint64_t v;
	int rc = scan_u64(p, strlen(p), &v);

	if (rc == -EINVAL)
		return lb_cmd_error(out, -EINVAL, "invalid port '%s' in '%s'",
				    p, s);
	if (rc != 0 || v < 1 || v > 65535)
		return lb_cmd_error(out, -ERANGE,
				    "port %s out of range 1..65535 in '%s'", p,
				    s);
	*port = (uint16_t)v;
	return 0;
}

int
lb_cmd_parse_ipv4_port(const char *s, uint32_t *ip, uint16_t *port,
		       struct lb_cmd_out *out)
{
	const char *colon;
	uint16_t p;
	uint32_t a;
	int rc;

	if (s == NULL || ip == NULL || port == NULL)
		return lb_cmd_error(out, -EINVAL, "missing address:port");
	colon = strrchr(s, ':');
	if (colon == NULL || !scan_ipv4(s, (size_t)(colon - s), &a))
		return lb_cmd_error(out, -EINVAL,
				    "invalid address:port '%s': expected "
				    "a.b.c.d:PORT",
				    s);
	rc = port_of(colon + 1, s, &p, out);
	if (rc == 0) {
		*ip = a;
		*port = p;
	}
	return rc;
}

static int
parse_slash(const char *s, uint32_t *ip, uint64_t *len)
{
	const char *slash = strchr(s, '/');

	if (slash == NULL || !scan_ipv4(s, (size_t)(slash - s), ip))
		return -EINVAL;
	return scan_u64(slash + 1, strlen(slash + 1), len);
}

int
lb_cmd_parse_prefix(const char *s, uint32_t *net, uint8_t *len,
		    struct lb_cmd_out *out)
{
	char nbuf[LB_CMD_ADDR_STRLEN];
	uint64_t l;
	uint32_t a;
	int rc;

	if (s == NULL || net == NULL || len == NULL)
		return lb_cmd_error(out, -EINVAL, "missing prefix");
	if (strcmp(s, "default") == 0) {
		*net = 0;
		*len = 0;
		return 0;
	}
	rc = parse_slash(s, &a, &l);
	if (rc == -EINVAL)
		return lb_cmd_error(out, -EINVAL,
				    "invalid prefix '%s': expected a.b.c.d/LEN "
				    "or default",
				    s);
	if (rc != 0 || l > 32)
		return lb_cmd_error(out, -ERANGE,
				    "prefix length %s out of range 0..32 in "
				    "'%s'",
				    strchr(s, '/') + 1, s);
	if ((a & ~prefix_mask((unsigned int)l)) != 0)
		return lb_cmd_error(
			out, -EINVAL,
			"prefix '%s' has host bits set; the network "
			"is %s",
			s,
			lb_cmd_fmt_prefix(a & prefix_mask((unsigned int)l),
					  (uint8_t)l, nbuf));
	*net = a;
	*len = (uint8_t)l;
	return 0;
}

int
lb_cmd_parse_ipv4_len(const char *s, uint32_t *ip, uint8_t *len,
		      struct lb_cmd_out *out)
{
	uint64_t l;
	uint32_t a;
	int rc;

	if (s == NULL || ip == NULL || len == NULL)
		return lb_cmd_error(out, -EINVAL, "missing address/length");
	rc = parse_slash(s, &a, &l);
	if (rc == -EINVAL)
		return lb_cmd_error(out, -EINVAL,
				    "invalid address/length '%s': expected "
				    "a.b.c.d/LEN",
				    s);
	if (rc != 0 || l < 1 || l > 32)
		return lb_cmd_error(out, -ERANGE,
				    "prefix length %s out of range 1..32 in "
				    "'%s'",
				    strchr(s, '/') + 1, s);
	*ip = a;
	*len = (uint8_t)l;
	return 0;
}

/* ---- either family ---- */

/* The n bytes at s as IPv6 text, NUL-terminated for inet_pton(). */
static bool
scan_ipv6(const char *s, size_t n, uint8_t *ip6)
{
	char b[LB_CMD_IP_STRLEN];

	if (n == 0 || n >= sizeof(b))
		return false;
	memcpy(b, s, n);
	b[n] = '\0';
	return inet_pton(AF_INET6, b, ip6) == 1;
}

static bool
is_v6(const char *s)
{
	return strchr(s, ':') != NULL;
}

int
lb_cmd_parse_ip(const char *s, struct lb_conf_ip *ip, struct lb_cmd_out *out)
{
	struct lb_conf_ip a = {.af = LB_CONF_AF_INET6};
	int rc;

	if (s == NULL || ip == NULL)
		return lb_cmd_error(out, -EINVAL, "missing address");
	if (!is_v6(s)) {
		rc = lb_cmd_parse_ipv4(s, &a.ip, out);
		if (rc == 0)
			*ip = lb_conf_ip4(a.ip);
		return rc;
	}
	if (!scan_ipv6(s, strlen(s), a.ip6))
		return lb_cmd_error(out, -EINVAL, "invalid IPv6 address '%s'",
				    s);
	*ip = a;
	return 0;
}

int
lb_cmd_parse_ip_port(const char *s, struct lb_conf_ip *ip, uint16_t *port,
		     struct lb_cmd_out *out)
{
	struct lb_conf_ip a = {.af = LB_CONF_AF_INET6};
	const char *close;
	int rc;

	if (s == NULL || ip == NULL || port == NULL)
		return lb_cmd_error(out, -EINVAL, "missing address:port");
	if (s[0] != '[') {
		const char *colon = strrchr(s, ':');

		/* "2001:db8::1:80" reads two ways: brackets say which. */
		if (colon != NULL && scan_ipv6(s, (size_t)(colon - s), a.ip6))
			return lb_cmd_error(out, -EINVAL,
					    "IPv6 address:port '%s' needs "
					    "brackets: [IPV6]:PORT",
					    s);
		rc = lb_cmd_parse_ipv4_port(s, &a.ip, port, out);
		if (rc == 0)
			*ip = lb_conf_ip4(a.ip);
		return rc;
	}
	close = strchr(s, ']');
	if (close == NULL || close[1] != ':' ||
	    !scan_ipv6(s + 1, (size_t)(close - s - 1), a.ip6))
		return lb_cmd_error(out, -EINVAL,
				    "invalid address:port '%s': expected "
				    "[IPV6]:PORT",
				    s);
	rc = port_of(close + 2, s, port, out);
	if (rc == 0)
		*ip = a;
	return rc;
}

/* "IPV6/LEN": -EINVAL malformed, -ERANGE for a length past 128. */
static int
parse_slash6(const char *s, uint8_t *ip6, uint64_t *len)
{
	const char *slash = strchr(s, '/');
	int rc;

	if (slash == NULL || !scan_ipv6(s, (size_t)(slash - s), ip6))
		return -EINVAL;
	rc = scan_u64(slash + 1, strlen(slash + 1), len);
	return rc == 0 && *len > 128 ? -ERANGE : rc;
}

int
lb_cmd_parse_ip_prefix(const char *s, struct lb_conf_ip *net, uint8_t *len,
		       struct lb_cmd_out *out)
{
	struct lb_conf_ip a = {.af = LB_CONF_AF_INET6}, m;
	char nbuf[LB_CMD_IP_ADDR_STRLEN];
	uint64_t l;
	int rc;

	if (s == NULL || net == NULL || len == NULL)
		return lb_cmd_error(out, -EINVAL, "missing prefix");
	if (!is_v6(s)) {
		rc = lb_cmd_parse_prefix(s, &a.ip, len, out);
		if (rc == 0)
			*net = lb_conf_ip4(a.ip);
		return rc;
	}
	rc = parse_slash6(s, a.ip6, &l);
	if (rc == -EINVAL)
		return lb_cmd_error(out, -EINVAL,
				    "invalid prefix '%s': expected IPV6/LEN",
				    s);
	if (rc != 0)
		return lb_cmd_error(out, -ERANGE,
				    "prefix length %s out of range 0..128 in "
				    "'%s'",
				    strchr(s, '/') + 1, s);
	m = a;
	lb_conf_ip6_mask(m.ip6, (unsigned int)l);
	if (memcmp(m.ip6, a.ip6, LB_CONF_IP6_LEN) != 0)
		return lb_cmd_error(out, -EINVAL,
				    "prefix '%s' has host bits set; the network "
				    "is %s",
				    s, lb_cmd_fmt_ip_prefix(&m, (uint8_t)l, nbuf));
	*net = a;
	*len = (uint8_t)l;
	return 0;
}

int
lb_cmd_parse_ip_len(const char *s, struct lb_conf_ip *ip, uint8_t *len,
		    struct lb_cmd_out *out)
{
	struct lb_conf_ip a = {.af = LB_CONF_AF_INET6};
	uint64_t l;
	int rc;

	if (s == NULL || ip == NULL || len == NULL)
		return lb_cmd_error(out, -EINVAL, "missing address/length");
	if (!is_v6(s)) {
		rc = lb_cmd_parse_ipv4_len(s, &a.ip, len, out);
		if (rc == 0)
			*ip = lb_conf_ip4(a.ip);
		return rc;
	}
	rc = parse_slash6(s, a.ip6, &l);
	if (rc == -EINVAL)
		return lb_cmd_error(out, -EINVAL,
				    "invalid address/length '%s': expected "
				    "IPV6/LEN",
				    s);
	if (rc != 0 || l < 1)
		return lb_cmd_error(out, -ERANGE,
				    "prefix length %s out of range 1..128 in "
				    "'%s'",
				    strchr(s, '/') + 1, s);
	*ip = a;
	*len = (uint8_t)l;
	return 0;
}

int
lb_cmd_parse_u64(const char *s, const char *what, uint64_t min, uint64_t max,
		 uint64_t *v, struct lb_cmd_out *out)
{
	uint64_t x;
	int rc;

	if (what == NULL)
		what = "value";
	if (s == NULL || v == NULL || min > max)
		return lb_cmd_error(out, -EINVAL, "missing %s", what);
	rc = scan_u64(s, strlen(s), &x);
	if (rc == -EINVAL)
		return lb_cmd_error(out, -EINVAL,
				    "invalid %s '%s': expected an integer in "
				    "%" PRIu64 "..%" PRIu64,
				    what, s, min, max);
	if (rc != 0 || x < min || x > max)
		return lb_cmd_error(out, -ERANGE,
				    "%s %s out of range %" PRIu64 "..%" PRIu64,
				    what, s, min, max);
	*v = x;
	return 0;
}

static const struct {
	const char *name;
	uint64_t ns;
} dur_units[] = {
	{"h", 3600000000000ull}, {"m", 60000000000ull}, {"s", 1000000000ull},
	{"ms", 1000000ull},	 {"us", 1000ull},	{"ns", 1ull},
};

int
lb_cmd_parse_duration(const char *s, const char *what, uint64_t min_ns,
		      uint64_t max_ns, uint64_t *ns, struct lb_cmd_out *out)
{
	char lo[LB_CMD_DURATION_STRLEN], hi[LB_CMD_DURATION_STRLEN];
	uint64_t v, unit = 0;
	size_t nd = 0;
	int rc;

	if (what == NULL)
		what = "duration";
	if (s == NULL || ns == NULL || min_ns > max_ns)
		return lb_cmd_error(out, -EINVAL, "missing %s", what);
	while (s[nd] >= '0' && s[nd] <= '9')
		nd++;
	if (strcmp(s, "0") == 0) {
		unit = 1;
	} else {
		for (size_t i = 0; i < sizeof(dur_units) / sizeof(dur_units[0]);
		     i++)
			if (strcmp(s + nd, dur_units[i].name) == 0)
				unit = dur_units[i].ns;
	}
	rc = scan_u64(s, nd, &v);
	if (unit == 0 || rc == -EINVAL)
		return lb_cmd_error(out, -EINVAL,
				    "invalid %s '%s': expected an integer and "
				    "a unit (ns, us, ms, s, m, h), e.g. 500ms",
				    what, s);
	if (rc != 0 || v > UINT64_MAX / unit || v * unit < min_ns ||
	    v * unit > max_ns)
		return lb_cmd_error(out, -ERANGE, "%s %s out of range %s..%s",
				    what, s, lb_cmd_fmt_duration(min_ns, lo),
				    lb_cmd_fmt_duration(max_ns, hi));
	*ns = v * unit;
	return 0;
}

int
lb_cmd_parse_bool(const char *s, const char *what, bool *b,
		  struct lb_cmd_out *out)
{
	static const char *const yes[] = {"on", "yes", "true", "1"};
	static const char *const no[] = {"off", "no", "false", "0"};

	if (what == NULL)
		what = "value";
	if (s == NULL || b == NULL)
		return lb_cmd_error(out, -EINVAL, "missing %s", what);
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcmp(s, yes[i]) == 0) {
			*b = true;
			return 0;
		}
		if (strcmp(s, no[i]) == 0) {
			*b = false;
			return 0;
		}
	}
	return lb_cmd_error(out, -EINVAL, "invalid %s '%s': expected on or off",
			    what, s);
}

int
lb_cmd_parse_proto(const char *s, uint8_t *proto, struct lb_cmd_out *out)
{
	if (s == NULL || proto == NULL)
		return lb_cmd_error(out, -EINVAL, "missing protocol");
	if (strcmp(s, "tcp") == 0)
		*proto = 6;
	else if (strcmp(s, "udp") == 0)
		*proto = 17;
	else
		return lb_cmd_error(out, -EINVAL,
				    "invalid protocol '%s': expected tcp or "
				    "udp",
				    s);
	return 0;
}

int
lb_cmd_parse_name(const char *s, const char *what, size_t max_len,
		  struct lb_cmd_out *out)
{
	if (what == NULL)
		what = "name";
	if (s == NULL)
		return lb_cmd_error(out, -EINVAL, "missing %s", what);
	for (const char *p = s; *p != '\0'; p++) {
		bool alnum =
			(*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9');

		if (!alnum && (p == s || (*p != '-' && *p != '_' && *p != '.')))
			goto bad;
	}
	if (s[0] == '\0')
		goto bad;
	if (strlen(s) > max_len)
		return lb_cmd_error(out, -ERANGE,
				    "%s '%s' too long (more than %zu bytes)",
				    what, s, max_len);
	return 0;
bad:
	return lb_cmd_error(out, -EINVAL,
			    "invalid %s '%s': expected lowercase letters, "
			    "digits, '-', '_' or '.'",
			    what, s);
}

static int
unknown_opt(const char *k, const struct lb_cmd_opt *opts, unsigned int nopts,
	    struct lb_cmd_out *out)
{
	/* Room for the rest of the message and a key of some length: a
	 * list too long for it ends with whole names and "...". */
	char list[LB_CMD_ERR_MAX - 128];
	size_t len = 0;

	list[0] = '\0';
	for (unsigned int i = 0; i < nopts && len < sizeof(list); i++) {
		const char *sep = i == 0 ? "" : i + 1 == nopts ? " or " : ", ";
		int n = snprintf(list + len, sizeof(list) - len, "%s%s", sep,
				 opts[i].name);

		if (n < 0)
			break;
		if ((size_t)n + 5 >= sizeof(list) - len) {
			snprintf(list + len, sizeof(list) - len, ", ...");
			break;
		}
		len += (size_t)n;
	}
	if (nopts == 0)
		return lb_cmd_error(out, -EINVAL, "unexpected argument '%s'",
				    k);
	return lb_cmd_error(out, -EINVAL, "unknown option '%s'; expected %s", k,
			    list);
}

static int
parse_opt_value(const struct lb_cmd_opt *o, const char *v,
		struct lb_cmd_optval *val, struct lb_cmd_out *out)
{
	uint32_t ip = 0;
	bool b = false;
	int rc;

	switch (o->type) {
	case LB_CMD_OPT_U64:
		return lb_cmd_parse_u64(v, o->name, o->min, o->max, &val->u,
					out);
	case LB_CMD_OPT_DURATION:
		return lb_cmd_parse_duration(v, o->name, o->min, o->max,
					     &val->u, out);
	case LB_CMD_OPT_BOOL:
		rc = lb_cmd_parse_bool(v, o->name, &b, out);
		val->u = b;
		return rc;
	case LB_CMD_OPT_NAME:
		val->str = v;
		return lb_cmd_parse_name(v, o->name, (size_t)o->max, out);
	case LB_CMD_OPT_WORD:
		val->str = v;
		if (v[0] == '\0' || strlen(v) > o->max)
			return lb_cmd_error(out, -ERANGE,
					    "%s: '%s' must be 1..%lu bytes",
					    o->name, v, (unsigned long)o->max);
		return 0;
	case LB_CMD_OPT_IPV4:
		rc = lb_cmd_parse_ipv4(v, &ip, out);
		val->u = ip;
		return rc;
	case LB_CMD_OPT_IPV4_PORT:
		rc = lb_cmd_parse_ipv4_port(v, &ip, &val->port, out);
		val->u = ip;
		return rc;
	case LB_CMD_OPT_IP:
		return lb_cmd_parse_ip(v, &val->ip, out);
	case LB_CMD_OPT_FLAG:
	default:
		return lb_cmd_error(out, -EINVAL, "bad option table");
	}
}

int
lb_cmd_parse_opts(int argc, char *const *argv, const struct lb_cmd_opt *opts,
		  unsigned int nopts, struct lb_cmd_optval *vals,
		  struct lb_cmd_out *out)
{
	if (argc < 0 || (argv == NULL && argc > 0) ||
	    (nopts > 0 && (opts == NULL || vals == NULL)))
		return lb_cmd_error(out, -EINVAL, "bad options");
	if (nopts > 0)
		memset(vals, 0, nopts * sizeof(*vals));
	for (int i = 0; i < argc; i++) {
		const struct lb_cmd_opt *o = NULL;
		struct lb_cmd_optval *val;
		unsigned int j;
		int rc;

		for (j = 0; j < nopts; j++) {
			if (strcmp(argv[i], opts[j].name) == 0) {
				o = &opts[j];
				break;
			}
		}
		if (o == NULL)
			return unknown_opt(argv[i], opts, nopts, out);
		val = &vals[j];
		if (val->set)
			return lb_cmd_error(out, -EINVAL,
					    "option '%s' given twice", o->name);
		val->set = true;
		if (o->type == LB_CMD_OPT_FLAG) {
			val->u = 1;
			continue;
		}
		if (i + 1 >= argc)
			return lb_cmd_error(out, -EINVAL,
					    "option '%s' needs a value",
					    o->name);
		rc = parse_opt_value(o, argv[++i], val, out);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* ---- formatting ---- */

char *
lb_cmd_fmt_ipv4(uint32_t ip, char *buf)
{
	snprintf(buf, LB_CMD_IPV4_STRLEN, "%u.%u.%u.%u", ip >> 24,
		 (ip >> 16) & 0xff, (ip >> 8) & 0xff, ip & 0xff);
	return buf;
}

char *
lb_cmd_fmt_ipv4_port(uint32_t ip, uint16_t port, char *buf)
{
	char a[LB_CMD_IPV4_STRLEN];

	snprintf(buf, LB_CMD_ADDR_STRLEN, "%s:%u", lb_cmd_fmt_ipv4(ip, a),
		 port);
	return buf;
}

char *
lb_cmd_fmt_prefix(uint32_t net, uint8_t len, char *buf)
{
	char a[LB_CMD_IPV4_STRLEN];

	if (net == 0 && len == 0)
		snprintf(buf, LB_CMD_ADDR_STRLEN, "default");
	else
		snprintf(buf, LB_CMD_ADDR_STRLEN, "%s/%u",
			 lb_cmd_fmt_ipv4(net, a), len);
	return buf;
}

char *
lb_cmd_fmt_ip(const struct lb_conf_ip *ip, char *buf)
{
	if (ip->af != LB_CONF_AF_INET6)
		return lb_cmd_fmt_ipv4(ip->ip, buf);
	if (inet_ntop(AF_INET6, ip->ip6, buf, LB_CMD_IP_STRLEN) == NULL)
		snprintf(buf, LB_CMD_IP_STRLEN, "?");
	return buf;
}

char *
lb_cmd_fmt_ip_port(const struct lb_conf_ip *ip, uint16_t port, char *buf)
{
	char a[LB_CMD_IP_STRLEN];

	if (ip->af != LB_CONF_AF_INET6)
		return lb_cmd_fmt_ipv4_port(ip->ip, port, buf);
	snprintf(buf, LB_CMD_IP_ADDR_STRLEN, "[%s]:%u", lb_cmd_fmt_ip(ip, a),
		 port);
	return buf;
}

char *
lb_cmd_fmt_ip_prefix(const struct lb_conf_ip *net, uint8_t len, char *buf)
{
	char a[LB_CMD_IP_STRLEN];

	if (net->af != LB_CONF_AF_INET6)
		return lb_cmd_fmt_prefix(net->ip, len, buf);
	snprintf(buf, LB_CMD_IP_ADDR_STRLEN, "%s/%u", lb_cmd_fmt_ip(net, a),
		 len);
	return buf;
}

char *
lb_cmd_fmt_duration(uint64_t ns, char *buf)
{
	if (ns == 0) {
		snprintf(buf, LB_CMD_DURATION_STRLEN, "0s");
		return buf;
	}
	for (size_t i = 0; i < sizeof(dur_units) / sizeof(dur_units[0]); i++) {
		if (ns % dur_units[i].ns == 0) {
			snprintf(buf, LB_CMD_DURATION_STRLEN, "%" PRIu64 "%s",
				 ns / dur_units[i].ns, dur_units[i].name);
			break;
		}
	}
	return buf;
}

const char *
lb_cmd_proto_name(uint8_t proto)
{
	switch (proto) {
	case 6:
		return "tcp";
	case 17:
		return "udp";
	default:
		return NULL;
	}
}
