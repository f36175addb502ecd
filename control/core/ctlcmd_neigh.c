/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `neigh`: the dataplane's neighbours, IPv4 (ARP) and IPv6 (neighbour
 * discovery) side by side. Each worker keeps its own tables (they are
 * written on the fast path without locks) and shares what it learns with
 * the others, so one address is in several tables: the command asks every
 * worker for a snapshot (struct lb_neigh_view), then shows one row per
 * address, as the worker that heard from it last sees it, and the
 * tables' counters summed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctlcmd_priv.h"
#include "lb/neigh_view.h"

/* How long the workers have to answer: their housekeeping runs every
 * millisecond, so only a stopped dataplane takes this long. */
#define NEIGH_WAIT_NAPS 1000u

struct nrow {
	struct lb_neigh_view_entry e; /* of the worker that heard last */
	uint32_t workers;	      /* tables holding the address */
	uint32_t held;		      /* packets waiting, all workers */
};

struct nlist {
	struct nrow *r;
	uint32_t n, cap;
	uint64_t more; /* entries the snapshots had no room for */
	struct lb_neigh_stats st;
};

/* Which of two entries of one address to show: the fresher news. */
static bool
better(const struct lb_neigh_view_entry *a,
       const struct lb_neigh_view_entry *b)
{
	if ((a->state == LB_NEIGH_STATIC) != (b->state == LB_NEIGH_STATIC))
		return a->state == LB_NEIGH_STATIC;
	return a->age_ns < b->age_ns;
}

static int
list_add(struct nlist *l, const struct lb_neigh_view_entry *e, size_t alen)
{
	struct nrow *r;

	for (uint32_t i = 0; i < l->n; i++) {
		r = &l->r[i];
		if (memcmp(r->e.addr, e->addr, alen) != 0)
			continue;
		r->workers++;
		r->held += e->held;
		if (better(e, &r->e))
			r->e = *e;
		return 0;
	}
	if (l->n == l->cap) {
		uint32_t cap = l->cap != 0 ? 2 * l->cap : 64;
		struct nrow *n = realloc(l->r, cap * sizeof(*n));

		if (n == NULL)
			return -ENOMEM;
		l->r = n;
		l->cap = cap;
	}
	r = &l->r[l->n++];
	r->e = *e;
	r->workers = 1;
	r->held = e->held;
	return 0;
}

static void
stats_add(struct lb_neigh_stats *s, const struct lb_neigh_stats *a)
{
	s->lookups += a->lookups;
	s->hits += a->hits;
	s->misses += a->misses;
	s->requests += a->requests;
	s->learned += a->learned;
	s->resolved += a->resolved;
	s->mac_changed += a->mac_changed;
	s->failed += a->failed;
	s->evicted += a->evicted;
	s->full += a->full;
	s->static_kept += a->static_kept;
	s->held += a->held;
	s->hold_overflow += a->hold_overflow;
	s->released += a->released;
	s->dropped += a->dropped;
	s->entries += a->entries;
	s->statics += a->statics;
	s->capacity += a->capacity;
}

static int
cmp_row4(const void *a, const void *b)
{
	return memcmp(((const struct nrow *)a)->e.addr,
		      ((const struct nrow *)b)->e.addr, 4);
}

static int
cmp_row6(const void *a, const void *b)
{
	return memcmp(((const struct nrow *)a)->e.addr,
		      ((const struct nrow *)b)->e.addr, 16);
}

/* Asks every worker, then merges their snapshots into @p l[af]. */
static int
gather(const struct lb_shm *shm, struct nlist *l, struct lb_cmd_out *out)
{
	uint32_t nw = shm->nb_workers < LB_SHM_MAX_WORKERS
			      ? shm->nb_workers
			      : LB_SHM_MAX_WORKERS;
	uint64_t want[LB_SHM_MAX_WORKERS];
	uint32_t naps = NEIGH_WAIT_NAPS;
	struct lb_neigh_view *v = malloc(sizeof(*v));
	int rc = 0;

	if (v == NULL)
		return lb_cmd_error(out, -ENOMEM, "out of memory");
	for (uint32_t w = 0; w < nw; w++)
		if (shm->w[w]->neigh != NULL)
			want[w] = lb_neigh_view_ask(shm->w[w]->neigh);
	for (uint32_t w = 0; w < nw && rc == 0; w++) {
		if (shm->w[w]->neigh == NULL)
			continue;
		if (lb_neigh_view_copy(shm->w[w]->neigh, want[w], &naps, v) !=
		    0) {
			rc = lb_cmd_error(out, -ETIMEDOUT,
					  "worker %u did not show its "
					  "neighbours",
					  w);
			break;
		}
		for (int af = 0; af < LB_NEIGH_VIEW_AFS && rc == 0; af++) {
			uint32_t nb = v->nb[af];

			stats_add(&l[af].st, &v->st[af]);
			l[af].more += v->more[af];
			for (uint32_t i = 0; i < nb && rc == 0; i++)
				if (list_add(&l[af], &v->e[af][i],
					     af == LB_NEIGH_VIEW_ND ? 16 : 4) !=
				    0)
					rc = lb_cmd_error(out, -ENOMEM,
							  "out of memory");
		}
	}
	free(v);
	if (rc == 0) {
		qsort(l[0].r, l[0].n, sizeof(*l[0].r), cmp_row4);
		qsort(l[1].r, l[1].n, sizeof(*l[1].r), cmp_row6);
	}
	return rc;
}

static void
fmt_age(char *buf, size_t n, uint64_t age_ns)
{
	if (age_ns == UINT64_MAX)
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.1fs", (double)age_ns / 1e9);
}

static int
show(const struct nlist *l, int af, uint32_t nw, json_t *d,
     struct lb_cmd_out *out)
{
	static const char *const title[] = {"ARP (IPv4)",
					    "neighbour discovery (IPv6)"};
	static const char *const key[] = {"arp", "nd"};
	const struct lb_neigh_stats *s = &l->st;
	json_t *o = json_object(), *arr = json_array(), *c = json_object();
	int bad = o == NULL || arr == NULL || c == NULL;
	int rc;

	rc = lb_cmd_printf(
		out,
		"%s: %u address(es), lookups %" PRIu64 " hits %" PRIu64
		" misses %" PRIu64 " requests %" PRIu64 " learned %" PRIu64
		" resolved %" PRIu64 " failed %" PRIu64 " evicted %" PRIu64
		" held %" PRIu64 " dropped %" PRIu64 "\n",
		title[af], l->n, s->lookups, s->hits, s->misses, s->requests,
		s->learned, s->resolved, s->failed, s->evicted, s->held,
		s->dropped);
	if (rc == 0 && l->more != 0)
		rc = lb_cmd_printf(out,
				   "  (%" PRIu64 " entries left out: "
				   "snapshot full)\n",
				   l->more);
	if (rc == 0 && l->n != 0)
		rc = lb_cmd_printf(out, "%-39s %-17s %-10s %4s %8s %7s %4s\n",
				   "ADDRESS", "MAC", "STATE", "PORT", "AGE",
				   "WORKERS", "HELD");
	for (uint32_t i = 0; i < l->n && rc == 0 && !bad; i++) {
		const struct nrow *r = &l->r[i];
		const uint8_t *m = r->e.mac;
		char a[INET6_ADDRSTRLEN], mac[18], age[24], port[8], wk[16];
		json_t *e = json_object();

		inet_ntop(af == LB_NEIGH_VIEW_ND ? AF_INET6 : AF_INET,
			  r->e.addr, a, sizeof(a));
		snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x",
			 m[0], m[1], m[2], m[3], m[4], m[5]);
		fmt_age(age, sizeof(age), r->e.age_ns);
		if (r->e.port == LB_NEIGH_VIEW_NO_PORT)
			snprintf(port, sizeof(port), "-");
		else
			snprintf(port, sizeof(port), "%u", r->e.port);
		snprintf(wk, sizeof(wk), "%u/%u", r->workers, nw);
		rc = lb_cmd_printf(out, "%-39s %-17s %-10s %4s %8s %7s %4u\n",
				   a, mac, lb_neigh_state_name(r->e.state), port, age,
				   wk, r->held);
		bad |= e == NULL || jset_str(e, "addr", a) ||
		       jset_str(e, "mac", mac) ||
		       jset_str(e, "state", lb_neigh_state_name(r->e.state)) ||
		       (r->e.port != LB_NEIGH_VIEW_NO_PORT
				? jset_u64(e, "port", r->e.port)
				: jset(e, "port", json_null())) ||
		       (r->e.age_ns != UINT64_MAX
				? jset_f64(e, "age_s",
					   (double)r->e.age_ns / 1e9)
				: jset(e, "age_s", json_null())) ||
		       jset_u64(e, "workers", r->workers) ||
		       jset_u64(e, "held", r->held) ||
		       json_array_append_new(arr, e);
	}
	if (!bad) {
		bad |= jset_u64(c, "lookups", s->lookups) ||
		       jset_u64(c, "hits", s->hits) ||
		       jset_u64(c, "misses", s->misses) ||
		       jset_u64(c, "requests", s->requests) ||
		       jset_u64(c, "learned", s->learned) ||
		       jset_u64(c, "resolved", s->resolved) ||
		       jset_u64(c, "mac_changed", s->mac_changed) ||
		       jset_u64(c, "failed", s->failed) ||
		       jset_u64(c, "evicted", s->evicted) ||
		       jset_u64(c, "full", s->full) ||
		       jset_u64(c, "static_kept", s->static_kept) ||
		       jset_u64(c, "held", s->held) ||
		       jset_u64(c, "hold_overflow", s->hold_overflow) ||
		       jset_u64(c, "released", s->released) ||
		       jset_u64(c, "dropped", s->dropped) ||
		       jset_u64(c, "entries", s->entries) ||
		       jset_u64(c, "capacity", s->capacity) ||
		       jset_u64(c, "left_out", l->more);
		bad |= json_object_set(o, "counters", c) ||
		       json_object_set(o, "entries", arr) ||
		       json_object_set(d, key[af], o);
	}
	json_decref(c);
	json_decref(arr);
	json_decref(o);
	return rc != 0 ? rc : bad ? -ENOMEM : 0;
}

static int
cmd_neigh(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_ctl *ctl = ctx;
	const struct lb_shm *shm =
		ctl->view != NULL ? lb_view_shm(ctl->view) : NULL;
	struct nlist l[LB_NEIGH_VIEW_AFS];
	json_t *d;
	int rc;

	rc = lb_cmd_want_args(out, argc, argv, 0, 0);
	if (rc != 0)
		return rc;
	if (shm == NULL)
		return lb_cmd_error(out, -ENOTCONN, "dataplane not attached");
	memset(l, 0, sizeof(l));
	rc = gather(shm, l, out);
	d = json_object();
	if (rc == 0 && d == NULL)
		rc = lb_cmd_error(out, -ENOMEM, "out of memory");
	for (int af = 0; af < LB_NEIGH_VIEW_AFS && rc == 0; af++) {
		rc = show(&l[af], af, shm->nb_workers, d, out);
		if (rc == -ENOMEM)
			rc = lb_cmd_error(out, rc, "out of memory");
	}
	for (int af = 0; af < LB_NEIGH_VIEW_AFS; af++)
		free(l[af].r);
	if (rc != 0) {
		json_decref(d);
		return rc;
	}
	return lb_ctlcmd_give_data(ctl, d, 0, out);
}

static const struct lb_cmd_def neigh_cmds[] = {
	{
		.path = "neigh",
		.synopsis = "",
		.help = "Show the dataplane's neighbours, ARP and IPv6, with "
			"their counters",
		.long_help =
			"One row per neighbour the workers know, IPv4 ones "
			"(ARP) then IPv6 ones\n(neighbour discovery): "
			"address, MAC, state (incomplete, reachable,\nstale, "
			"failed, static), the port of its connected prefix, "
			"the time since\nit was last confirmed, the workers "
			"that hold it (each worker keeps its\nown table and "
			"tells the others what it learns) and the packets "
			"waiting\nfor it. Above each family, its tables' "
			"counters summed over the workers:\nlookups, hits, "
			"misses, requests sent, addresses learned, resolved "
			"and\nfailed, entries evicted, packets held and "
			"dropped unresolved.",
		.fn = cmd_neigh,
	},
};

static const struct lb_cmd_table neigh_table = {
	.name = "ctl-neigh",
	.ctx = "ctl",
	.defs = neigh_cmds,
	.n = sizeof(neigh_cmds) / sizeof(neigh_cmds[0]),
};
LB_CMD_REGISTER(neigh_table);
