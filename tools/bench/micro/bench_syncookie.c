/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SYN cookies: a cookie made for a SYN (with and without timestamps) and
 * the cookie of an ACK checked (one of the current secret, a forged one,
 * one of the previous secret), over 4096 random tuples taken in turn so
 * that nothing can be hoisted out of the loop. Each is paired with what
 * a SYN costs without the SYN proxy, the state the cookie replaces: a
 * SNAT pair taken (one flow table lookup that misses) and a flow inserted
 * under both keys in a table of 1M holding 512k flows, then both given
 * back so that the table stays as it is (a flood's flows are reaped
 * later anyway, at about the same cost).
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "lb/flow_table.h"
#include "lb/rng.h"
#include "lb/snat.h"
#include "syncookie.h"

#define NB_TUPLES 4096u /* a power of two */
#define FLOWS (1u << 20)
#define FILL (FLOWS / 2)
#define SNAT_IP 0x0a000002u /* host order */
#define BE_IP 0x0a000114u
#define BE_PORT 8080

/* The ACKs to check: cookie and TSecr per tuple, and the verdict due. */
struct acks {
	const struct lb_syncookie_secrets *s;
	const struct lb_syncookie_tuple *tup;
	const struct lb_syncookie_clock *now;
	uint32_t cookie[NB_TUPLES];
	uint32_t tsecr[NB_TUPLES];
};

struct make {
	const struct lb_syncookie_secrets *s;
	const struct lb_syncookie_tuple *tup;
	const struct lb_syncookie_clock *now;
	struct lb_syncookie_opts in;
};

/* The per-SYN state of the plain path. */
struct plain {
	struct lb_flow_table *t;
	struct lb_snat *snat;
	struct lb_flow_key *orig; /* NB_TUPLES client keys */
	uint64_t now;
};

static void
run_make(void *p, uint64_t iters)
{
	const struct make *m = p;
	uint64_t acc = 0;
	uint32_t tsval;

	for (uint64_t i = 0; i < iters; i++) {
		acc += lb_syncookie_make(m->s, &m->tup[i & (NB_TUPLES - 1)],
					 m->now, &m->in, &tsval);
		acc += tsval;
	}
	lb_bench_sink = acc;
}

static void
run_check(void *p, uint64_t iters)
{
	const struct acks *a = p;
	struct lb_syncookie_opts out = { 0 };
	uint64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++) {
		uint32_t j = (uint32_t)i & (NB_TUPLES - 1);

		acc += (uint64_t)lb_syncookie_check(a->s, &a->tup[j], a->now,
						    a->cookie[j], a->tsecr[j],
						    &out);
		acc += out.mss;
	}
	lb_bench_sink = acc;
}

static bool
taken(void *p, uint32_t ip, uint16_t port)
{
	const struct lb_flow_table *t = p;
	struct lb_flow_key k;
	enum lb_flow_dir dir;

	lb_flow_key_set(&k, htonl(BE_IP), ip, htons(BE_PORT), port, 6);
	return lb_flow_lookup(t, &k, &dir) != LB_FLOW_NONE;
}

static void
run_plain(void *p, uint64_t iters)
{
	struct plain *pl = p;
	struct lb_flow_key back;
	uint64_t acc = 0;
	uint32_t ip;
	uint16_t port;

	for (uint64_t i = 0; i < iters; i++) {
		const struct lb_flow_key *o = &pl->orig[i & (NB_TUPLES - 1)];
		int idx;

		if (lb_snat_port_alloc(pl->snat, taken, pl->t, &ip, &port) != 0)
			continue;
		lb_flow_key_set(&back, htonl(BE_IP), ip, htons(BE_PORT), port,
				6);
		idx = lb_flow_insert(pl->t, o, &back, 0, 0, pl->now + i);
		if (idx >= 0)
			lb_flow_delete(pl->t, (uint32_t)idx);
		lb_snat_port_free(pl->snat, ip, port);
		acc += (uint64_t)idx + port;
	}
	pl->now += iters;
	lb_bench_sink = acc;
}

static void
random_tuples(struct lb_syncookie_tuple *tup, struct lb_flow_key *orig,
	      struct lb_rng *r)
{
	for (uint32_t i = 0; i < NB_TUPLES; i++) {
		uint64_t x = lb_rng_u64(r), y = lb_rng_u64(r);

		tup[i] = (struct lb_syncookie_tuple){
			.saddr = (uint32_t)x,
			.daddr = htonl(0xcb00710a),
			.sport = (uint16_t)(x >> 32),
			.dport = htons(80),
			.cisn = (uint32_t)y,
		};
		lb_flow_key_set(&orig[i], tup[i].saddr, tup[i].daddr,
				tup[i].sport, tup[i].dport, 6);
	}
}

/*
 * The ACKs answering cookies made by @p maker, checked with @p checker;
 * @p forge flips a MAC bit. Says whether each gets @p want, so that a
 * figure is never that of a path other than the one named.
 */
static int
acks_fill(struct acks *a, const struct lb_syncookie_secrets *maker,
	  const struct lb_syncookie_opts *in, uint32_t forge, int want)
{
	struct lb_syncookie_opts out;

	for (uint32_t i = 0; i < NB_TUPLES; i++) {
		a->cookie[i] = lb_syncookie_make(maker, &a->tup[i], a->now, in,
						 &a->tsecr[i]) ^ forge;
		if (lb_syncookie_check(a->s, &a->tup[i], a->now, a->cookie[i],
				       a->tsecr[i], &out) != want)
			return -1;
	}
	return 0;
}

static int
plain_setup(struct plain *pl, struct lb_rng *r)
{
	uint32_t addr = htonl(SNAT_IP);
	struct lb_snat_conf c = { .addrs = &addr, .nb_addrs = 1,
				  .nb_workers = 1 };
	struct lb_flow_key o, b;
	uint32_t done = 0;

	pl->t = lb_flow_table_create(FLOWS, NULL, lb_rng_u64(r));
	pl->snat = lb_snat_create(&c);
	if (pl->t == NULL || pl->snat == NULL)
		return -1;
	while (done < FILL) {
		uint64_t x = lb_rng_u64(r), y = lb_rng_u64(r);

		lb_flow_key_set(&o, (uint32_t)x, 0x0a000001u,
				(uint16_t)(x >> 32), (uint16_t)(x >> 48), 6);
		lb_flow_key_set(&b, (uint32_t)y, 0x0a000003u,
				(uint16_t)(y >> 32), (uint16_t)(y >> 48), 6);
		if (lb_flow_insert(pl->t, &o, &b, 0, 0, 0) >= 0)
			done++;
	}
	return 0;
}

static void
pair_rate(FILE *out, const struct lb_bench_case *a,
	  const struct lb_bench_case *base, uint64_t iters,
	  unsigned int rounds, const char *what)
{
	double ns = lb_bench_pair(out, a, base, iters, rounds);

	fprintf(out, "  = %.2f M %s/s per core\n", 1e3 / ns, what);
}

static void
bench_cases(FILE *out, unsigned int rounds, struct make *mk,
	    struct acks *ack, struct plain *pl)
{
	const struct lb_bench_case base = {
		"SYN state: snat+flow insert", run_plain, pl
	};
	const struct lb_bench_case make_plain = {
		"syncookie make, no timestamps", run_make, &mk[0]
	};
	const struct lb_bench_case make_ts = {
		"syncookie make, timestamps", run_make, &mk[1]
	};
	const struct lb_bench_case valid = {
		"syncookie check, valid", run_check, &ack[0]
	};
	const struct lb_bench_case forged = {
		"syncookie check, forged", run_check, &ack[1]
	};
	const struct lb_bench_case prev = {
		"syncookie check, previous secret", run_check, &ack[2]
	};

	pair_rate(out, &make_plain, &base, 1000000, rounds, "cookies");
	pair_rate(out, &make_ts, &base, 1000000, rounds, "cookies");
	pair_rate(out, &valid, &base, 1000000, rounds, "ACKs checked");
	pair_rate(out, &forged, &base, 1000000, rounds, "ACKs checked");
	pair_rate(out, &prev, &base, 1000000, rounds, "ACKs checked");
}

void
lb_bench_syncookie(FILE *out, unsigned int rounds)
{
	static struct lb_syncookie_tuple tup[NB_TUPLES];
	static struct lb_flow_key orig[NB_TUPLES];
	static struct acks ack[3];
	const struct lb_syncookie_clock now = { 1u << 20, 123456789u };
	const struct lb_syncookie_opts no_ts = { .mss = 1460, .wscale = -1 };
	const struct lb_syncookie_opts ts = {
		.mss = 1460, .wscale = 7, .sack = true, .ts = true
	};
	struct lb_syncookie_secrets s = { 0 }, old;
	struct plain pl = { 0 };
	struct make mk[2];
	struct lb_xoshiro x;
	struct lb_rng r;
	uint64_t key[2];

	lb_xoshiro_seed(&x, 16);
	r = lb_rng_xoshiro(&x);
	for (int i = 0; i < 2; i++) {
		key[0] = lb_rng_u64(&r);
		key[1] = lb_rng_u64(&r);
		lb_syncookie_rekey(&s, key);
		if (i == 0)
			old = s;
	}
	random_tuples(tup, orig, &r);
	mk[0] = (struct make){ &s, tup, &now, no_ts };
	mk[1] = (struct make){ &s, tup, &now, ts };
	for (int i = 0; i < 3; i++)
		ack[i] = (struct acks){ .s = &s, .tup = tup, .now = &now };
	pl.orig = orig;
	if (acks_fill(&ack[0], &s, &ts, 0, LB_SYNCOOKIE_OK) != 0 ||
	    acks_fill(&ack[1], &s, &ts, 1u << 31, LB_SYNCOOKIE_FORGED) != 0 ||
	    acks_fill(&ack[2], &old, &ts, 0, LB_SYNCOOKIE_OK) != 0) {
		fprintf(out, "syncookie: a check gave the wrong verdict\n");
		return;
	}
	if (plain_setup(&pl, &r) != 0)
		fprintf(out, "syncookie: out of memory\n");
	else
		bench_cases(out, rounds, mk, ack, &pl);
	lb_snat_free(pl.snat);
	lb_flow_table_free(pl.t);
}
