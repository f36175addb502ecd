/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <hiredis/hiredis.h>

#include "lb/admit.h"
#include "cluster.h"
#include "lb/dpconf.h"

#define TIMEOUT_MS 200
#define RECONNECT_NS 500000000ULL
#define HIST 4u
/* Keys of services nobody borrows for expire in Redis. */
#define KEY_TTL_MS 60000

/*
 * The Redis bucket, refilled lazily from Redis's own clock (so the hosts'
 * clocks do not matter) and capped at the burst: KEYS[1] the bucket,
 * ARGV rate/s, burst, tokens wanted, TTL ms. Returns the tokens given.
 */
static const char borrow_lua[] =
	"local t = redis.call('TIME')\n"
	"local now = tonumber(t[1]) * 1000000 + tonumber(t[2])\n"
	"local rate = tonumber(ARGV[1])\n"
	"local burst = tonumber(ARGV[2])\n"
	"local want = tonumber(ARGV[3])\n"
	"local b = redis.call('HMGET', KEYS[1], 'tokens', 'ts')\n"
	"local tokens = tonumber(b[1])\n"
	"local ts = tonumber(b[2])\n"
	"if tokens == nil or ts == nil then tokens = burst ts = now end\n"
	"if now > ts then tokens = tokens + (now - ts) * rate / 1000000 end\n"
	"if tokens > burst then tokens = burst end\n"
	"local give = math.floor(tokens)\n"
	"if give > want then give = want end\n"
	"tokens = tokens - give\n"
	"redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', "
	"tostring(math.max(now, ts)))\n"
	"redis.call('PEXPIRE', KEYS[1], ARGV[4])\n"
	"return give\n";

struct cl_svc {
	uint64_t key;	     /* global bucket fed, 0 = none */
	uint64_t last_ns;    /* previous tick */
	uint64_t after;	     /* tokens in the bucket after the last tick */
	uint64_t local_nt;   /* fail-open refill not yet whole tokens, in ns
				x tokens/s (nanotokens) */
	uint64_t hist[HIST]; /* demand of recent ticks, latest first */
	uint32_t nb_hist;
};

struct lb_cluster {
	char host[256];
	uint16_t port;
	redisContext *rc;
	uint64_t next_connect_ns;
	uint64_t down_since_ns;
	struct lb_cluster_stats *st;
	struct cl_svc svc[LB_CONF_MAX_SVCS];
};

int
lb_cluster_parse_addr(const char *s, char *host, unsigned int len,
		      uint16_t *port)
{
	const char *c = s != NULL ? strrchr(s, ':') : NULL;
	char *end;
	unsigned long p;

	if (c == NULL || c == s || (size_t)(c - s) >= len)
		return -EINVAL;
	errno = 0;
	p = strtoul(c + 1, &end, 10);
	if (errno != 0 || c[1] == '\0' || *end != '\0' || p == 0 || p > 65535)
		return -EINVAL;
	memcpy(host, s, (size_t)(c - s));
	host[c - s] = '\0';
	*port = (uint16_t)p;
	return 0;
}

struct lb_cluster *
lb_cluster_create(const char *host, uint16_t port, struct lb_cluster_stats *st)
{
	struct lb_cluster *cl;

	if (host == NULL || st == NULL || port == 0 ||
	    strlen(host) >= sizeof(cl->host)) {
		errno = EINVAL;
		return NULL;
	}
	cl = calloc(1, sizeof(*cl));
	if (cl == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	snprintf(cl->host, sizeof(cl->host), "%s", host);
	cl->port = port;
	cl->st = st;
	return cl;
}

void
lb_cluster_free(struct lb_cluster *cl)
{
	if (cl == NULL)
		return;
	if (cl->rc != NULL)
		redisFree(cl->rc);
	free(cl);
}

static void
went_down(struct lb_cluster *cl, uint64_t now_ns)
{
	cl->st->errors++;
	if (cl->rc != NULL) {
		redisFree(cl->rc);
		cl->rc = NULL;
	}
	if (!cl->st->down)
		cl->down_since_ns = now_ns;
	cl->st->down = 1;
	cl->next_connect_ns = now_ns + RECONNECT_NS;
}

static bool
connected(struct lb_cluster *cl, uint64_t now_ns)
{
	struct timeval tv = {0, TIMEOUT_MS * 1000};

	if (cl->rc != NULL)
		return true;
	if (now_ns < cl->next_connect_ns)
		return false;
	cl->rc = redisConnectWithTimeout(cl->host, cl->port, tv);
	if (cl->rc == NULL || cl->rc->err != 0 ||
	    redisSetTimeout(cl->rc, tv) != REDIS_OK) {
		went_down(cl, now_ns);
		return false;
	}
	return true;
}

/* One round trip: the Lua script takes up to @p want tokens from the
 * service's Redis bucket. @return tokens given, or -1 when Redis failed. */
static int64_t
borrow(struct lb_cluster *cl, const struct lb_dpconf_svc *t,
       const struct lb_admit_conf *a, uint64_t want, uint64_t now_ns)
{
	char key[96], rate[24], burst[24], w[24], ttl[16];
	struct in_addr vip = {.s_addr = t->vip};
	char ip[INET_ADDRSTRLEN];
	redisReply *r;
	int64_t got = -1;

	if (!connected(cl, now_ns))
		return -1;
	inet_ntop(AF_INET, &vip, ip, sizeof(ip));
	/* Hosts share a bucket when they serve the same service with the
	 * same limit. */
	snprintf(key, sizeof(key), "sluice:admit:%u:%s:%u:%" PRIu64 ":%" PRIu64,
		 t->proto, ip, ntohs(t->vport), a->rate, lb_admit_burst(a));
	snprintf(rate, sizeof(rate), "%" PRIu64, a->rate);
	snprintf(burst, sizeof(burst), "%" PRIu64, lb_admit_burst(a));
	snprintf(w, sizeof(w), "%" PRIu64, want);
	snprintf(ttl, sizeof(ttl), "%u", KEY_TTL_MS);
	r = redisCommand(cl->rc, "EVAL %s 1 %s %s %s %s %s", borrow_lua, key,
			 rate, burst, w, ttl);
	if (r != NULL && r->type == REDIS_REPLY_INTEGER && r->integer >= 0)
		got = r->integer;
	if (r != NULL)
		freeReplyObject(r);
	if (got < 0) {
		went_down(cl, now_ns);
		return -1;
	}
	if (cl->st->down)
		cl->st->down_ms += (now_ns - cl->down_since_ns) / 1000000;
	cl->st->down = 0;
	cl->st->borrows++;
	cl->st->tokens += (uint64_t)got;
	return got;
}

static void
svc_tick(struct lb_cluster *cl, struct lb_admit_shm *sh,
	 const struct lb_dpconf_svc *t, uint16_t slot, uint64_t now_ns)
{
	const struct lb_admit_conf *a = &t->opts.admit;
	struct cl_svc *cs = &cl->svc[slot];
	uint64_t key = lb_admit_key_of(sh, slot, a, 0, 0), avail, target, want;
	struct lb_admit_gent *e;
	int64_t got;

	e = lb_admit_shm_get(sh, key, slot, a, 0, now_ns, NULL);
	if (e == NULL)
		return;
	/* Keeps the entry from being reused for another key. */
	atomic_store_explicit(&e->used_ns, now_ns, memory_order_relaxed);
	avail = lb_tb_global_avail(&e->b, now_ns);
	if (cs->key != key) {
		memset(cs, 0, sizeof(*cs));
		cs->key = key;
		cs->last_ns = now_ns;
		cs->after = avail;
	}
	/* What the workers took since the last tick. */
	memmove(&cs->hist[1], &cs->hist[0], (HIST - 1) * sizeof(cs->hist[0]));
	cs->hist[0] = cs->after > avail ? cs->after - avail : 0;
	if (cs->nb_hist < HIST)
		cs->nb_hist++;
	/* Hold two ticks of the weighted-average demand, at least one
	 * token, at most the burst. */
	target = 2 * lb_tb_wavg(cs->hist, cs->nb_hist);
	if (target < 1)
		target = 1;
	if (target > lb_admit_burst(a))
		target = lb_admit_burst(a);
	want = target > avail ? target - avail : 0;
	got = want > 0 ? borrow(cl, t, a, want, now_ns) : 0;
	if (got > 0)
		lb_tb_global_deposit(&e->b, (uint64_t)got);
	/* Without a borrow this tick, the tier stays as it was: the local
	 * refill must go on through such ticks, or their time is lost. */
	if (got == 0 && want == 0 && cl->st->down)
		got = -1;
	if (got < 0 && a->cluster == LB_ADMIT_CLUSTER_OPEN) {
		/* Fail open: this host alone refills at the rate. */
		uint64_t n;

		cs->local_nt += (now_ns - cs->last_ns) * a->rate;
		n = cs->local_nt / 1000000000ULL;
		cs->local_nt %= 1000000000ULL;
		cl->st->local += lb_tb_global_deposit(&e->b, n);
	}
	if (got < 0 && a->cluster == LB_ADMIT_CLUSTER_CLOSED)
		atomic_fetch_or(&e->flags, LB_ADMIT_F_CLUSTER_DOWN);
	else
		atomic_fetch_and(&e->flags, ~LB_ADMIT_F_CLUSTER_DOWN);
	if (got >= 0)
		cs->local_nt = 0;
	cs->after = lb_tb_global_avail(&e->b, now_ns);
	cs->last_ns = now_ns;
}

void
lb_cluster_tick(struct lb_cluster *cl, struct lb_admit_shm *sh,
		const struct lb_dpconf *d, uint64_t now_ns)
{
	if (cl == NULL || sh == NULL || d == NULL)
		return;
	for (uint32_t s = 0; s < d->nb_svc && s < LB_CONF_MAX_SVCS; s++) {
		const struct lb_dpconf_svc *t = &d->svc[s];

		if (t->state != LB_SVC_ACTIVE || t->opts.admit.rate == 0 ||
		    t->opts.admit.cluster == LB_ADMIT_CLUSTER_OFF)
			continue;
		svc_tick(cl, sh, t, (uint16_t)s, now_ns);
	}
}
