/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Attach to the dataplane's memzone, build tables, publish them with one
 * pointer swap, reuse the old ones after an RCU grace period, drain the
 * feedback rings. Tables live in the dataplane's preallocated slots
 * (lb_shm.table): nothing here takes a lock of the shared heap, so a
 * SIGKILL at any point leaves nothing held for the next lb-control.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_memzone.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring_elem.h>

#include "lb/dpconf.h"
#include "lb/hdr_conf.h"
#include "publish_priv.h"

#define GRACE_WARN_NS 1000000000ull
#define DRAIN_BURST 256u

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool
pid_alive(pid_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

/* The published table is one of the slots, and every slot exists. */
static bool
tables_ok(struct lb_shm *shm)
{
	bool cur = false;

	for (unsigned int i = 0; i < LB_SHM_TABLES; i++) {
		if (shm->table[i] == NULL)
			return false;
		cur |= shm->table[i] == shm->conf;
	}
	return cur;
}

int
lb_pub_attach(struct lb_pub *p, char *err, size_t errlen)
{
	const struct rte_memzone *mz;
	struct lb_shm *shm;
	int32_t me = (int32_t)getpid(), other = 0;

	p->shm = NULL;
	mz = rte_memzone_lookup(LB_SHM_NAME);
	if (mz == NULL) {
		snprintf(err, errlen, "the dataplane has no memzone %s yet",
			 LB_SHM_NAME);
		return -EAGAIN;
	}
	shm = mz->addr;
	/* The version is written first and the magic last: a version is
	 * worth judging even before the dataplane is ready. */
	if (shm->layout_version != 0 &&
	    shm->layout_version != LB_SHM_LAYOUT_VERSION) {
		snprintf(err, errlen,
			 "dataplane shared layout version %u, this "
			 "lb-control knows %u",
			 shm->layout_version, LB_SHM_LAYOUT_VERSION);
		return -EPROTO;
	}
	if (mz->len < sizeof(*shm)) {
		snprintf(err, errlen,
			 "dataplane shared memory is %zu bytes, this "
			 "lb-control expects %zu for layout version %u: "
			 "they were built from different sources",
			 mz->len, sizeof(*shm), LB_SHM_LAYOUT_VERSION);
		return -EPROTO;
	}
	if (shm->magic != LB_SHM_MAGIC) {
		snprintf(err, errlen, "the dataplane is not ready yet");
		return -EAGAIN;
	}
	if (shm->nb_workers == 0 || shm->nb_workers > LB_SHM_MAX_WORKERS ||
	    shm->qsbr == NULL || shm->conf == NULL || !tables_ok(shm)) {
		snprintf(err, errlen,
			 "the dataplane's shared memory makes no sense "
			 "(%u workers)",
			 shm->nb_workers);
		return -EPROTO;
	}
	/* One writer of tables, one consumer of the feedback rings. A
	 * claim left by a lb-control that died is taken over; after an
	 * exec our pid is still ours. */
	while (!atomic_compare_exchange_strong(&shm->control_pid, &other, me)) {
		if (other == me)
			break;
		if (pid_alive(other)) {
			snprintf(err, errlen,
				 "another lb-control (pid %d) is attached to "
				 "this dataplane",
				 other);
			return -EBUSY;
		}
		/* Dead: try to replace exactly that pid. */
		if (atomic_compare_exchange_strong(&shm->control_pid, &other,
						   me))
			break;
	}
	p->shm = shm;
	p->dp_pid = shm->dataplane_pid;
	/* A lb-control killed between a swap and its grace period may have
	 * left a worker on the previous table. */
	p->settled = false;
	return 0;
}

void
lb_pub_detach(struct lb_pub *p)
{
	int32_t me = (int32_t)getpid();

	if (p->shm == NULL)
		return;
	atomic_compare_exchange_strong(&p->shm->control_pid, &me, 0);
	p->shm = NULL;
}

bool
lb_pub_alive(const struct lb_pub *p)
{
	return p->shm != NULL && p->shm->magic == LB_SHM_MAGIC &&
	       pid_alive(p->dp_pid);
}

static int settle(struct lb_pub *p, uint64_t gen);

/* The header database of @p conf's http services, in p->hdr_blob. */
static int
hdr_db_build(struct lb_pub *p, const struct lb_conf *conf, char *err,
	     size_t errlen)
{
	struct lb_hdr_cfg cfg;
	void *blob;
	size_t len;
	int rc;

	rc = lb_hdr_conf_build(conf, &cfg, err, errlen);
	if (rc != 0)
		return rc;
	if (p->hdr_blob != NULL && memcmp(&cfg, &p->hdr_cfg, sizeof(cfg)) == 0)
		return 0;
	rc = lb_hdr_conf_blob(&cfg, &blob, &len);
	if (rc != 0) {
		snprintf(err, errlen, "cannot compile the header patterns: %s",
			 strerror(-rc));
		return rc;
	}
	free(p->hdr_blob);
	p->hdr_blob = blob;
	p->hdr_len = len;
	p->hdr_cfg = cfg;
	return 0;
}

int
lb_pub_build(struct lb_pub *p, const struct lb_conf *conf,
	     struct lb_dpconf **out, char *err, size_t errlen)
{
	const struct lb_dpconf *cur;
	struct lb_dpconf *d;
	int rc;

	*out = NULL;
	if (p->shm == NULL) {
		snprintf(err, errlen, "no dataplane attached");
		return -ENODEV;
	}
	rc = hdr_db_build(p, conf, err, errlen);
	if (rc != 0)
		return rc;
	cur = atomic_load_explicit(&p->shm->conf, memory_order_acquire);
	if (!p->settled) {
		rc = settle(p, cur->gen);
		if (rc != 0) {
			snprintf(err, errlen, "%s",
				 rc == -EINTR ? "lb-control is stopping"
					      : "the dataplane went away");
			return rc;
		}
		p->settled = true;
	}
	/* Any slot but the published one: no worker reads it any more. */
	d = p->shm->table[0] != cur ? p->shm->table[0] : p->shm->table[1];
	rc = lb_dpconf_compile(d, conf, cur, lb_view_busy, p->shm, err, errlen);
	if (rc != 0)
		return rc;
	/* Removed SNAT addresses drain: their flows' replies stay ours. */
	lb_dpconf_snat_keep(d, cur, lb_view_snat_busy, p->shm);
	lb_dpconf_snat6_keep(d, cur, lb_view_snat6_busy, p->shm);
	if (p->hdr_len > LB_DPCONF_HDR_MAX) {
		snprintf(err, errlen,
			 "the header database takes %zu bytes, a table has "
			 "room for %u",
			 p->hdr_len, LB_DPCONF_HDR_MAX);
		return -ENOSPC;
	}
	/* The database travels with the table in its slot (see
	 * lb_dpconf_hdr_blob()). */
	memcpy(d + 1, p->hdr_blob, p->hdr_len);
	d->hdr_len = p->hdr_len;
	d->hdr_id = lb_hdr_db_blob_id(p->hdr_blob, p->hdr_len);
	if (p->mark != NULL)
		p->mark(p->mark_ctx, d);
	/* The same table under a new generation would only make every
	 * worker rebuild its schedulers for nothing. */
	if (cur != NULL && memcmp((const char *)d + sizeof(d->gen),
				  (const char *)cur + sizeof(cur->gen),
				  sizeof(*d) - sizeof(d->gen)) == 0)
		return 1;
	*out = d;
	return 0;
}

void
lb_pub_discard(struct lb_dpconf *d)
{
	/* The slot stays the dataplane's; the next build overwrites it. */
	(void)d;
}

/* Whether every worker runs table generation @p gen or a later one. */
static bool
all_took_up(const struct lb_pub *p, uint64_t gen)
{
	for (uint32_t w = 0; w < p->shm->nb_workers; w++)
		if (atomic_load_explicit(&p->shm->w[w]->conf_gen,
					 memory_order_acquire) < gen)
			return false;
	return true;
}

/*
 * Waits until no worker can read any table but the one of generation
 * @p gen, just published. @return 0, or -ENODEV if the dataplane died.
 */
static int
settle(struct lb_pub *p, uint64_t gen)
{
	uint64_t t0 = mono_ns(), next_check = t0 + 10000000ull;
	bool warned = false;
	uint64_t token;

	token = rte_rcu_qsbr_start(p->shm->qsbr);
	/*
	 * Two conditions before the old table is reused. The grace period: no
	 * reader is inside a poll that loaded it. And every worker has
	 * taken the new one up: a worker that sleeps goes offline (so that
	 * it does not hold grace periods up) yet keeps its table, which it
	 * reads once more when it moves to the next (its previous services'
	 * state is carried over from it). Freed early, that read can fault
	 * when the heap returns the page. A worker takes a table up at its
	 * next poll, so the wait is one idle sleep at most.
	 *
	 * Not rte_rcu_qsbr_synchronize(): it would spin for ever on a
	 * dataplane that died with a worker online.
	 */
	while (rte_rcu_qsbr_check(p->shm->qsbr, token, false) != 1 ||
	       !all_took_up(p, gen)) {
		uint64_t now = mono_ns();

		if (now >= next_check) {
			if (!lb_pub_alive(p))
				return -ENODEV;
			/* Stopping: the next lb-control settles at attach. */
			if (p->stop != NULL && *p->stop)
				return -EINTR;
			next_check = now + 10000000ull;
		}
		if (!warned && now - t0 > GRACE_WARN_NS) {
			fprintf(stderr,
				"lb-control: a dataplane worker has not "
				"taken up table %lu for 1 s; still waiting "
				"before reusing the old one\n",
				(unsigned long)gen);
			warned = true;
		}
		rte_delay_us_sleep(20);
	}
	return 0;
}

int64_t
lb_pub_commit(struct lb_pub *p, struct lb_dpconf *d)
{
	uint64_t t0 = mono_ns();

	int rc;

	atomic_store_explicit(&p->shm->conf, d, memory_order_release);
	rc = settle(p, d->gen);
	if (rc != 0)
		return rc;
	return (int64_t)(mono_ns() - t0);
}

bool
lb_pub_gc_due(const struct lb_pub *p)
{
	const struct lb_dpconf *c;

	if (p->shm == NULL)
		return false;
	c = atomic_load_explicit(&p->shm->conf, memory_order_acquire);
	if (lb_dpconf_snat_gc_due(c, lb_view_snat_busy, p->shm) ||
	    lb_dpconf_snat6_gc_due(c, lb_view_snat6_busy, p->shm))
		return true;
	for (uint32_t s = 0; c != NULL && s < c->nb_svc; s++) {
		const struct lb_dpconf_svc *v = &c->svc[s];

		if (v->state == LB_SVC_EMPTY)
			continue;
		if (v->state == LB_SVC_DELETED) {
			if (!lb_view_busy(p->shm, s, UINT32_MAX))
				return true;
			continue;
		}
		for (uint32_t b = 0; b < v->nb_be; b++)
			if (v->be[b].state == LB_BE_REMOVED &&
			    !lb_view_busy(p->shm, s, b))
				return true;
	}
	return false;
}

unsigned int
lb_pub_drain(struct lb_pub *p, struct lb_view *v, unsigned int budget)
{
	struct lb_fb buf[DRAIN_BURST];
	unsigned int total = 0;

	if (p->shm == NULL)
		return 0;
	for (uint32_t w = 0; w < p->shm->nb_workers; w++) {
		struct rte_ring *r = p->shm->w[w]->fb;
		unsigned int got = 0, n;

		if (r == NULL)
			continue;
		do {
			n = rte_ring_sc_dequeue_burst_elem(
				r, buf, sizeof(buf[0]), DRAIN_BURST, NULL);
			lb_view_feed(v, w, buf, n);
			if (p->fb_hook != NULL && n > 0)
				p->fb_hook(p->fb_arg, buf, n);
			got += n;
		} while (n == DRAIN_BURST && got < budget);
		total += got;
	}
	return total;
}
