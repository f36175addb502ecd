/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "leader.h"

#define RECONNECT_NS 500000000ull
/* Room for the largest list (every instance with a long driver id). */
#define BUF_LEN (LB_AS_INST_MAX * 128u + 128u)
/* The host set outlives its members' summaries, which expire sooner. */
#define HOSTS_TTL_MS 60000u

/* KEYS lease, term; ARGV token, TTL ms, lowest term to give. A lease
 * found with our token is ours still (we stepped down on a slow answer):
 * extended, its term kept. */
static const char acquire_lua[] =
	"local v = redis.call('GET', KEYS[1])\n"
	"if v then\n"
	"  local sp = string.find(v, ' ', 1, true)\n"
	"  if not sp then return {0, 0, ''} end\n"
	"  local t = tonumber(string.sub(v, 1, sp - 1)) or 0\n"
	"  local h = string.sub(v, sp + 1)\n"
	"  if h == ARGV[1] then\n"
	"    redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
	"    return {1, t, h}\n"
	"  end\n"
	"  return {0, t, h}\n"
	"end\n"
	"local last = tonumber(redis.call('GET', KEYS[2]) or '0') or 0\n"
	"if last < tonumber(ARGV[3]) then\n"
	"  redis.call('SET', KEYS[2], ARGV[3])\n"
	"end\n"
	"local t = redis.call('INCR', KEYS[2])\n"
	"redis.call('SET', KEYS[1], t .. ' ' .. ARGV[1], 'NX', 'PX', ARGV[2])\n"
	"return {1, t, ARGV[1]}\n";

/* KEYS lease; ARGV "TERM TOKEN", TTL ms. Only the holder extends. */
static const char renew_lua[] =
	"local v = redis.call('GET', KEYS[1])\n"
	"if v == ARGV[1] then\n"
	"  redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
	"  return {1, ''}\n"
	"end\n"
	"if not v then return {2, ''} end\n"
	"return {0, v}\n";

/* KEYS lease; ARGV "TERM TOKEN". */
static const char release_lua[] =
	"if redis.call('GET', KEYS[1]) == ARGV[1] then\n"
	"  return redis.call('DEL', KEYS[1])\n"
	"end\n"
	"return 0\n";

/* KEYS lease, list; ARGV "TERM TOKEN", payload: the fenced write. */
static const char publish_lua[] =
	"if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end\n"
	"redis.call('SET', KEYS[2], ARGV[2])\n"
	"return 1\n";

/* KEYS load, hosts; ARGV token, payload, TTL ms, hosts TTL ms. */
static const char report_lua[] =
	"redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])\n"
	"redis.call('SADD', KEYS[2], ARGV[1])\n"
	"redis.call('PEXPIRE', KEYS[2], ARGV[4])\n"
	"return 1\n";

/* KEYS hosts; ARGV the load keys' prefix. */
static const char loads_lua[] =
	"local out = {}\n"
	"for _, h in ipairs(redis.call('SMEMBERS', KEYS[1])) do\n"
	"  local v = redis.call('GET', ARGV[1] .. h)\n"
	"  if v then table.insert(out, v)\n"
	"  else redis.call('SREM', KEYS[1], h) end\n"
	"end\n"
	"return out\n";

struct lb_leader {
	char host[256];
	uint16_t port;
	char token[LB_LEADER_TOKEN_LEN + 1];
	redisContext *rc;
	uint64_t next_connect_ns;
	uint64_t errors;
	bool up;
	char *buf;
};

/* ---- the payloads ---- */

static int
put(char *buf, size_t len, size_t *off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int
put(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*off >= len)
		return -ENOSPC;
	va_start(ap, fmt);
	n = vsnprintf(buf + *off, len - *off, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len - *off)
		return -ENOSPC;
	*off += (size_t)n;
	return 0;
}

/* An address as the lists carry it: dotted quad or RFC 5952 IPv6. */
#define IP_STRLEN INET6_ADDRSTRLEN

static const char *
ip_str(const struct lb_conf_ip *ip, char *s)
{
	struct in_addr a = {.s_addr = htonl(ip->ip)};

	if (ip->af == LB_CONF_AF_INET6)
		return inet_ntop(AF_INET6, ip->ip6, s, IP_STRLEN);
	return inet_ntop(AF_INET, &a, s, IP_STRLEN);
}

static int
ip_parse(const char *s, struct lb_conf_ip *ip)
{
	struct in_addr a;

	memset(ip, 0, sizeof(*ip));
	if (strchr(s, ':') != NULL) {
		if (inet_pton(AF_INET6, s, ip->ip6) != 1)
			return -EINVAL;
		ip->af = LB_CONF_AF_INET6;
		return 0;
	}
	if (inet_pton(AF_INET, s, &a) != 1)
		return -EINVAL;
	ip->ip = ntohl(a.s_addr);
	return 0;
}

int
lb_leader_list_fmt(const struct lb_leader_list *lst, char *buf, size_t len)
{
	char ip[IP_STRLEN];
	size_t off = 0;

	if (lst->n > LB_AS_INST_MAX ||
	    put(buf, len, &off, "sluice-list 1 %" PRIu64 " %" PRIu64 " %u %u\n",
		lst->term, lst->seq, lst->next_id, lst->n) != 0)
		return -ENOSPC;
	for (unsigned int i = 0; i < lst->n; i++) {
		const struct lb_leader_inst *x = &lst->inst[i];

		if (put(buf, len, &off, "%u %s %s %u %u %s\n", x->id,
			lb_as_state_name(x->state), ip_str(&x->ip, ip), x->port,
			x->weight, x->drv_id[0] != '\0' ? x->drv_id : "-") != 0)
			return -ENOSPC;
	}
	return (int)off;
}

/* The next line of @p buf at *pos into @p line (NUL-terminated);
 * false at the end or for a line too long. */
static bool
next_line(const char *buf, size_t len, size_t *pos, char *line, size_t max)
{
	size_t s = *pos, e;

	if (s >= len)
		return false;
	for (e = s; e < len && buf[e] != '\n'; e++)
		if (buf[e] == '\0')
			return false;
	if (e - s >= max)
		return false;
	memcpy(line, buf + s, e - s);
	line[e - s] = '\0';
	*pos = e + 1;
	return true;
}

static bool
state_parse(const char *s, enum lb_as_state *st)
{
	for (int i = 0; i < LB_AS_STATE_COUNT; i++)
		if (strcmp(s, lb_as_state_name((enum lb_as_state)i)) == 0) {
			*st = (enum lb_as_state)i;
			return true;
		}
	return false;
}

int
lb_leader_list_parse(const char *buf, size_t len, struct lb_leader_list *lst)
{
	char line[256], st[16], ip[IP_STRLEN], id[65];
	size_t pos = 0;
	unsigned int n, port, w;
	int end;

	memset(lst, 0, sizeof(*lst));
	end = -1;
	if (!next_line(buf, len, &pos, line, sizeof(line)) ||
	    sscanf(line, "sluice-list 1 %" SCNu64 " %" SCNu64 " %u %u%n",
		   &lst->term, &lst->seq, &lst->next_id, &n, &end) != 4 ||
	    line[end] != '\0' || n > LB_AS_INST_MAX)
		goto bad;
	for (unsigned int i = 0; i < n; i++) {
		struct lb_leader_inst *x = &lst->inst[i];

		end = -1;
		if (!next_line(buf, len, &pos, line, sizeof(line)) ||
		    sscanf(line, "%u %15s %45s %u %u %64s%n", &x->id, st, ip,
			   &port, &w, id, &end) != 6 ||
		    line[end] != '\0' || !state_parse(st, &x->state) ||
		    ip_parse(ip, &x->ip) != 0 || port > 65535 ||
		    x->id >= lst->next_id || strlen(id) >= sizeof(x->drv_id))
			goto bad;
		x->port = (uint16_t)port;
		x->weight = w;
		if (strcmp(id, "-") != 0)
			snprintf(x->drv_id, sizeof(x->drv_id), "%s", id);
		lst->n = i + 1;
	}
	if (pos < len)
		goto bad;
	return 0;
bad:
	memset(lst, 0, sizeof(*lst));
	return -EINVAL;
}

int
lb_leader_load_fmt(const struct lb_leader_load *ld, char *buf, size_t len)
{
	char ip[IP_STRLEN];
	size_t off = 0;

	if (ld->n > LB_AS_INST_MAX || ld->host[0] == '\0' ||
	    strchr(ld->host, ' ') != NULL ||
	    put(buf, len, &off, "sluice-load 1 %s %" PRIu64 " %u\n", ld->host,
		ld->inflight, ld->n) != 0)
		return -ENOSPC;
	for (unsigned int i = 0; i < ld->n; i++) {
		const struct lb_leader_be_load *b = &ld->be[i];

		if (put(buf, len, &off,
			"%s %u %d %.17g %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
			ip_str(&b->ip, ip), b->port, b->seen ? 1 : 0,
			b->seen ? b->spl : 0.0, b->age_ns, b->responses,
			b->flows) != 0)
			return -ENOSPC;
	}
	return (int)off;
}

int
lb_leader_load_parse(const char *buf, size_t len, struct lb_leader_load *ld)
{
	char line[256], ip[IP_STRLEN];
	size_t pos = 0;
	unsigned int n, port;
	int end, seen;

	memset(ld, 0, sizeof(*ld));
	end = -1;
	if (!next_line(buf, len, &pos, line, sizeof(line)) ||
	    sscanf(line, "sluice-load 1 %127s %" SCNu64 " %u%n", ld->host,
		   &ld->inflight, &n, &end) != 3 ||
	    line[end] != '\0' || n > LB_AS_INST_MAX)
		goto bad;
	for (unsigned int i = 0; i < n; i++) {
		struct lb_leader_be_load *b = &ld->be[i];

		end = -1;
		if (!next_line(buf, len, &pos, line, sizeof(line)) ||
		    sscanf(line,
			   "%45s %u %d %lf %" SCNu64 " %" SCNu64 " %" SCNu64
			   "%n",
			   ip, &port, &seen, &b->spl, &b->age_ns, &b->responses,
			   &b->flows, &end) != 7 ||
		    line[end] != '\0' || ip_parse(ip, &b->ip) != 0 ||
		    port > 65535 || (seen != 0 && seen != 1) ||
		    !isfinite(b->spl) || b->spl < 0 ||
		    b->spl > LB_LEADER_SPL_MAX ||
		    b->age_ns > LB_LEADER_AGE_MAX_NS)
			goto bad;
		b->port = (uint16_t)port;
		b->seen = seen == 1;
		if (!b->seen)
			b->spl = 0; /* no report: no value */
		ld->n = i + 1;
	}
	if (pos < len)
		goto bad;
	return 0;
bad:
	memset(ld, 0, sizeof(*ld));
	return -EINVAL;
}

bool
lb_leader_merge_be(const struct lb_leader_load *h, unsigned int nh,
		   const struct lb_conf_ip *ip, uint16_t port,
		   struct lb_leader_be_load *out)
{
	double wsum = 0, spl = 0, age = 0;
	unsigned int seen = 0;
	bool weighted = false;

	*out = (struct lb_leader_be_load){.ip = *ip, .port = port};
	/* Weights from traffic when any host has some; else each host's
	 * report counts the same. */
	for (unsigned int i = 0; i < nh; i++)
		for (unsigned int j = 0; j < h[i].n; j++)
			if (lb_conf_ip_eq(&h[i].be[j].ip, ip) &&
			    h[i].be[j].port == port &&
			    h[i].be[j].seen && h[i].be[j].responses > 0)
				weighted = true;
	for (unsigned int i = 0; i < nh; i++)
		for (unsigned int j = 0; j < h[i].n; j++) {
			const struct lb_leader_be_load *b = &h[i].be[j];
			double w;

			if (!lb_conf_ip_eq(&b->ip, ip) || b->port != port)
				continue;
			out->flows += b->flows;
			out->responses += b->responses;
			if (!b->seen)
				continue;
			w = weighted ? (double)b->responses : 1.0;
			seen++;
			wsum += w;
			spl += w * b->spl;
			age += w * (double)b->age_ns;
		}
	if (seen == 0 || wsum <= 0)
		return false;
	out->seen = true;
	out->spl = spl / wsum;
	out->age_ns = (uint64_t)(age / wsum);
	return true;
}

/* ---- Redis ---- */

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct lb_leader *
lb_leader_create(const char *host, uint16_t port, const char *name)
{
	struct lb_leader *ld;
	uint64_t rnd = 0;

	if (host == NULL || name == NULL || (port == 0 && host[0] != '/') ||
	    name[0] == '\0' ||
	    strlen(name) > 63 || strpbrk(name, " /\t\n") != NULL ||
	    strlen(host) >= sizeof(ld->host)) {
		errno = EINVAL;
		return NULL;
	}
	ld = calloc(1, sizeof(*ld));
	if (ld == NULL || (ld->buf = malloc(BUF_LEN)) == NULL) {
		free(ld);
		errno = ENOMEM;
		return NULL;
	}
	if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
		rnd = mono_ns() ^ ((uint64_t)getpid() << 32);
	snprintf(ld->host, sizeof(ld->host), "%s", host);
	ld->port = port;
	snprintf(ld->token, sizeof(ld->token), "%s/%d-%08" PRIx64, name,
		 (int)getpid(), (uint64_t)(rnd & 0xffffffffu));
	return ld;
}

void
lb_leader_free(struct lb_leader *ld)
{
	if (ld == NULL)
		return;
	if (ld->rc != NULL)
		redisFree(ld->rc);
	free(ld->buf);
	free(ld);
}

const char *
lb_leader_token(const struct lb_leader *ld)
{
	return ld->token;
}

bool
lb_leader_up(const struct lb_leader *ld)
{
	return ld->up;
}

uint64_t
lb_leader_errors(const struct lb_leader *ld)
{
	return ld->errors;
}

static void
failed(struct lb_leader *ld)
{
	ld->errors++;
	ld->up = false;
	if (ld->rc != NULL) {
		redisFree(ld->rc);
		ld->rc = NULL;
	}
	ld->next_connect_ns = mono_ns() + RECONNECT_NS;
}

static bool
connected(struct lb_leader *ld)
{
	struct timeval tv = {0, LB_LEADER_TIMEOUT_MS * 1000};

	if (ld->rc != NULL)
		return true;
	if (mono_ns() < ld->next_connect_ns)
		return false;
	ld->rc = ld->host[0] == '/'
			 ? redisConnectUnixWithTimeout(ld->host, tv)
			 : redisConnectWithTimeout(ld->host, ld->port, tv);
	if (ld->rc == NULL || ld->rc->err != 0 ||
	    redisSetTimeout(ld->rc, tv) != REDIS_OK) {
		failed(ld);
		return false;
	}
	return true;
}

/* EVAL with @p nk keys and @p na arguments (given as argv strings).
 * @return the reply (freeReplyObject() it), or NULL (counted, down). */
static redisReply *
eval(struct lb_leader *ld, const char *script, int nk, int nargs,
     const char **args)
{
	const char *argv[10];
	size_t lens[10];
	char nkeys[8];
	redisReply *r;

	if (!connected(ld) || nargs > 7)
		return NULL;
	snprintf(nkeys, sizeof(nkeys), "%d", nk);
	argv[0] = "EVAL";
	argv[1] = script;
	argv[2] = nkeys;
	for (int i = 0; i < nargs; i++)
		argv[3 + i] = args[i];
	for (int i = 0; i < 3 + nargs; i++)
		lens[i] = strlen(argv[i]);
	r = redisCommandArgv(ld->rc, 3 + nargs, argv, lens);
	if (r == NULL || r->type == REDIS_REPLY_ERROR) {
		if (r != NULL)
			freeReplyObject(r);
		failed(ld);
		return NULL;
	}
	ld->up = true;
	return r;
}

static void
key(char *buf, size_t len, const char *svc, const char *what)
{
	snprintf(buf, len, "sluice:scale:%s:%s", svc, what);
}

/* "TERM HOLDER" into its parts. */
static bool
split_value(const char *v, uint64_t *term, char *holder, size_t hlen)
{
	const char *sp = strchr(v, ' ');
	char *end;

	if (sp == NULL || sp == v)
		return false;
	errno = 0;
	*term = strtoull(v, &end, 10);
	if (errno != 0 || end != sp)
		return false;
	if (holder != NULL)
		snprintf(holder, hlen, "%s", sp + 1);
	return true;
}

enum lb_lease_outcome
lb_leader_lease(struct lb_leader *ld, const char *svc, enum lb_lease_op op,
		uint64_t min_term, uint64_t ttl_ms, uint64_t *term,
		char *holder, size_t hlen)
{
	char klease[160], kterm[160], ttl[24], mt[24], val[160];
	enum lb_lease_outcome out = LB_LEASE_ERROR;
	const char *a[5];
	redisReply *r;

	key(klease, sizeof(klease), svc, "lease");
	key(kterm, sizeof(kterm), svc, "term");
	snprintf(ttl, sizeof(ttl), "%" PRIu64, ttl_ms);
	if (op == LB_LEASE_OP_ACQUIRE) {
		snprintf(mt, sizeof(mt), "%" PRIu64, min_term);
		a[0] = klease, a[1] = kterm, a[2] = ld->token, a[3] = ttl;
		a[4] = mt;
		r = eval(ld, acquire_lua, 2, 5, a);
		if (r == NULL)
			return LB_LEASE_ERROR;
		if (r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
		    r->element[0]->type == REDIS_REPLY_INTEGER &&
		    r->element[1]->type == REDIS_REPLY_INTEGER &&
		    r->element[2]->type == REDIS_REPLY_STRING &&
		    r->element[1]->integer > 0) {
			*term = (uint64_t)r->element[1]->integer;
			snprintf(holder, hlen, "%s", r->element[2]->str);
			out = r->element[0]->integer == 1 ? LB_LEASE_HELD
							  : LB_LEASE_TAKEN;
		}
		freeReplyObject(r);
		return out;
	}
	if (op != LB_LEASE_OP_RENEW)
		return LB_LEASE_ERROR;
	snprintf(val, sizeof(val), "%" PRIu64 " %s", *term, ld->token);
	a[0] = klease, a[1] = val, a[2] = ttl;
	r = eval(ld, renew_lua, 1, 3, a);
	if (r == NULL)
		return LB_LEASE_ERROR;
	if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
	    r->element[0]->type == REDIS_REPLY_INTEGER &&
	    r->element[1]->type == REDIS_REPLY_STRING) {
		if (r->element[0]->integer == 1) {
			snprintf(holder, hlen, "%s", ld->token);
			out = LB_LEASE_HELD;
		} else if (r->element[0]->integer == 2) {
			out = LB_LEASE_FREE;
		} else if (split_value(r->element[1]->str, term, holder,
				       hlen)) {
			out = LB_LEASE_TAKEN;
		}
	}
	freeReplyObject(r);
	return out;
}

int
lb_leader_release(struct lb_leader *ld, const char *svc, uint64_t term)
{
	char klease[160], val[160];
	const char *a[2] = {klease, val};
	redisReply *r;

	key(klease, sizeof(klease), svc, "lease");
	snprintf(val, sizeof(val), "%" PRIu64 " %s", term, ld->token);
	r = eval(ld, release_lua, 1, 2, a);
	if (r == NULL)
		return -EIO;
	freeReplyObject(r);
	return 0;
}

int
lb_leader_publish(struct lb_leader *ld, const char *svc,
		  const struct lb_leader_list *lst)
{
	char klease[160], klist[160], val[160];
	const char *a[4] = {klease, klist, val, ld->buf};
	redisReply *r;
	int rc;

	if (lb_leader_list_fmt(lst, ld->buf, BUF_LEN) < 0)
		return -ENOSPC;
	key(klease, sizeof(klease), svc, "lease");
	key(klist, sizeof(klist), svc, "list");
	snprintf(val, sizeof(val), "%" PRIu64 " %s", lst->term, ld->token);
	r = eval(ld, publish_lua, 2, 4, a);
	if (r == NULL)
		return -EIO;
	rc = r->type == REDIS_REPLY_INTEGER && r->integer == 1 ? 0 : -EPERM;
	freeReplyObject(r);
	return rc;
}

int
lb_leader_fetch(struct lb_leader *ld, const char *svc,
		struct lb_leader_list *lst)
{
	char klist[160];
	redisReply *r;
	int rc;

	if (!connected(ld))
		return -EIO;
	key(klist, sizeof(klist), svc, "list");
	r = redisCommand(ld->rc, "GET %s", klist);
	if (r == NULL || r->type == REDIS_REPLY_ERROR) {
		if (r != NULL)
			freeReplyObject(r);
		failed(ld);
		return -EIO;
	}
	ld->up = true;
	if (r->type == REDIS_REPLY_NIL)
		rc = -ENOENT;
	else if (r->type != REDIS_REPLY_STRING)
		rc = -EINVAL;
	else
		rc = lb_leader_list_parse(r->str, r->len, lst);
	freeReplyObject(r);
	return rc;
}

int
lb_leader_report(struct lb_leader *ld, const char *svc,
		 struct lb_leader_load *load, uint64_t ttl_ms)
{
	char kload[300], khosts[160], ttl[24], httl[24];
	const char *a[6] = {kload, khosts, ld->token, ld->buf, ttl, httl};
	char pre[160];
	redisReply *r;

	snprintf(load->host, sizeof(load->host), "%s", ld->token);
	if (lb_leader_load_fmt(load, ld->buf, BUF_LEN) < 0)
		return -ENOSPC;
	key(pre, sizeof(pre), svc, "load:");
	snprintf(kload, sizeof(kload), "%s%s", pre, ld->token);
	key(khosts, sizeof(khosts), svc, "hosts");
	snprintf(ttl, sizeof(ttl), "%" PRIu64, ttl_ms);
	snprintf(httl, sizeof(httl), "%u", HOSTS_TTL_MS);
	r = eval(ld, report_lua, 2, 6, a);
	if (r == NULL)
		return -EIO;
	freeReplyObject(r);
	return 0;
}

int
lb_leader_loads(struct lb_leader *ld, const char *svc,
		struct lb_leader_load *out, unsigned int max)
{
	char khosts[160], pre[160];
	const char *a[2] = {khosts, pre};
	redisReply *r;
	unsigned int n = 0;

	key(khosts, sizeof(khosts), svc, "hosts");
	key(pre, sizeof(pre), svc, "load:");
	r = eval(ld, loads_lua, 1, 2, a);
	if (r == NULL)
		return -EIO;
	if (r->type == REDIS_REPLY_ARRAY)
		for (size_t i = 0; i < r->elements && n < max; i++)
			if (r->element[i]->type == REDIS_REPLY_STRING &&
			    lb_leader_load_parse(r->element[i]->str,
						 r->element[i]->len,
						 &out[n]) == 0)
				n++;
	freeReplyObject(r);
	return (int)n;
}
