/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Harness of the packet tests (harness.h): the dataplane on net_ring
 * ports, frames in and out, counters, and the fixture driver.
 */
#include <arpa/inet.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "harness.h"
#include "lb/cmd.h"
#include "lb/conf.h"

#define RING_SIZE 1024
#define NB_DESC 256
#define SETTLE_NS 3000000ull /* three housekeeping periods of 1 ms */

const uint8_t mac_port[NB_PORTS][6] = {
	{0x02, 0x1b, 0, 0, 0, 0xa0},
	{0x02, 0x1b, 0, 0, 0, 0xa1},
};
const uint8_t mac_c[6] = {0x02, 0xcc, 0, 0, 0, 0x07};

struct rte_mempool *ph_pool;

/* Makes ring and port names unique: ports of closed dataplanes may not
 * be gone from the EAL's lists yet. */
static unsigned int env_gen;

/* ---- EAL --------------------------------------------------------------- */

/* "--lcores=0@(CPUS)": lcore 0 may run on any CPU this process may. */
static void
lcore_arg(char *buf, size_t n)
{
	cpu_set_t set;
	int off, cpus = 0;

	off = snprintf(buf, n, "--lcores=0@(");
	if (sched_getaffinity(0, sizeof(set), &set) == 0) {
		for (int c = 0; c < RTE_MAX_LCORE && c < CPU_SETSIZE; c++) {
			if (!CPU_ISSET(c, &set) || (size_t)off + 8 >= n)
				continue;
			off += snprintf(buf + off, n - (size_t)off, "%s%d",
					cpus++ ? "," : "", c);
		}
	}
	if (cpus == 0)
		snprintf(buf, n, "--lcores=0");
	else
		snprintf(buf + off, n - (size_t)off, ")");
}

int
ph_eal_init(const char *argv0, const char *name, unsigned int pool_size)
{
	char prefix[32], loglevel[64], lcores[256], pool_name[64];
	const char *lvl = getenv("LB_PKT_LOG_LEVEL");
	char *eal[] = {
		(char *)argv0,
		"--no-huge",
		"-m",
		"256",
		"--no-pci",
		"--no-shconf",
		"--no-telemetry",
		"--file-prefix",
		prefix,
		lcores,
		loglevel,
		NULL,
	};

	/* Unique per process: several builds may run their tests at once. */
	snprintf(prefix, sizeof(prefix), "%s%d", name, (int)getpid());
	lcore_arg(lcores, sizeof(lcores));
	snprintf(loglevel, sizeof(loglevel), "--log-level=%s",
		 lvl != NULL ? lvl : "error");
	if (rte_eal_init((int)NELEM(eal) - 1, eal) < 0) {
		fprintf(stderr, "%s: EAL initialisation failed: %s\n", name,
			rte_strerror(rte_errno));
		return -1;
	}
	snprintf(pool_name, sizeof(pool_name), "%s_mbufs", name);
	ph_pool = rte_pktmbuf_pool_create(pool_name, pool_size, 0, 0,
					  RTE_MBUF_DEFAULT_BUF_SIZE,
					  rte_socket_id());
	if (ph_pool == NULL) {
		fprintf(stderr, "%s: no mbuf pool: %s\n", name,
			rte_strerror(rte_errno));
		rte_eal_cleanup();
		return -1;
	}
	return 0;
}

void
ph_eal_fini(void)
{
	char rundir[PATH_MAX];

	rte_mempool_free(ph_pool);
	ph_pool = NULL;
	/* --no-shconf leaves the EAL's runtime directory empty: remove it
	 * rather than leave one per run behind. */
	snprintf(rundir, sizeof(rundir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	rmdir(rundir);
}

/* ---- a dataplane on ring ports ----------------------------------------- */

int
ph_sched_known(const char *name)
{
	return lb_sched_find(name) != NULL;
}

bool
ph_snat_busy(void *ctx, uint32_t ip)
{
	const struct ph_env *e = ctx;

	for (uint16_t i = 0; i < e->dp.nb_workers; i++)
		if (lb_snat_addr_used(e->dp.w[i]->snat, ip) > 0)
			return true;
	return false;
}

struct lb_dpconf *
ph_conf_compile(struct ph_env *e, const char *const *const *sets,
		unsigned int nb_sets, const struct lb_dpconf *prev)
{
	struct lb_cmd_reg *reg = lb_cmd_reg_create();
	struct lb_conf *conf = lb_conf_create(ph_sched_known);
	struct lb_cmd_out out;
	struct lb_dpconf *d;
	char err[256];

	assert_non_null(reg);
	assert_non_null(conf);
	assert_int_equal(lb_conf_register(conf, reg), 0);
	lb_cmd_out_init(&out);
	for (unsigned int s = 0; s < nb_sets; s++) {
		for (const char *const *l = sets[s]; l != NULL && *l != NULL;
		     l++) {
			lb_cmd_out_reset(&out);
			if (lb_cmd_exec_line(reg, *l, &out) != 0)
				fail_msg("'%s': %s", *l,
					 lb_cmd_out_errmsg(&out));
		}
	}
	d = rte_zmalloc("lbpkt_conf", sizeof(*d), 0);
	assert_non_null(d);
	if (lb_dpconf_compile(d, conf, prev, NULL, NULL, err, sizeof(err)) != 0)
		fail_msg("lb_dpconf_compile: %s", err);
	lb_dpconf_snat_keep(d, prev, ph_snat_busy, e);
	lb_cmd_out_free(&out);
	lb_conf_free(conf);
	lb_cmd_reg_free(reg);
	return d;
}

struct ph_env *
ph_env_new(void **state)
{
	struct ph_env *e = calloc(1, sizeof(*e));

	assert_non_null(e);
	*state = e;
	env_gen++;
	e->pool_avail = rte_mempool_avail_count(ph_pool);
	e->dp.pool = ph_pool;
	e->dp.nb_ports = NB_PORTS;
	e->dp.ns_per_tsc = 1e9 / (double)rte_get_tsc_hz();
	e->dp.hash_seed = 0x5eed0fa11ba1a2ceull;
	e->dp.idle_us = 0;
	return e;
}

static void
make_port(struct ph_env *e, uint16_t p)
{
	char name[RTE_RING_NAMESIZE];
	int id;

	for (uint16_t q = 0; q < e->nq; q++) {
		snprintf(name, sizeof(name), "pk%u_%u_rx%u", env_gen, p, q);
		e->rx[p][q] = rte_ring_create(name, RING_SIZE, SOCKET_ID_ANY,
					      RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(name, sizeof(name), "pk%u_%u_tx%u", env_gen, p, q);
		e->tx[p][q] = rte_ring_create(name, RING_SIZE, SOCKET_ID_ANY,
					      RING_F_SP_ENQ | RING_F_SC_DEQ);
		assert_non_null(e->rx[p][q]);
		assert_non_null(e->tx[p][q]);
	}
	snprintf(name, sizeof(name), "lbpkt%u_%u", env_gen, p);
	id = rte_eth_from_rings(name, e->rx[p], e->nq, e->tx[p], e->nq,
				rte_socket_id());
	/* The worker indexes its ports 0..nb_ports-1. */
	assert_int_equal(id, p);
	assert_int_equal(lb_port_setup(p, e->nq, ph_pool, NB_DESC, NB_DESC,
				       &e->dp.port[p]),
			 0);
	e->nb_up = (uint16_t)(p + 1);
	/* net_ring ports report 00:00:00:00:00:00 and cannot change it:
	 * give each the address a NIC would have. */
	memcpy(e->dp.port[p].mac.addr_bytes, mac_port[p], 6);
}

void
ph_env_start(struct ph_env *e, uint16_t nb_workers)
{
	assert_true(nb_workers >= 1 && nb_workers <= MAX_QUEUES);
	assert_non_null(e->dp.conf);
	e->nq = nb_workers;
	e->dp.nb_workers = nb_workers;
	for (uint16_t p = 0; p < NB_PORTS; p++)
		make_port(e, p);
	for (uint16_t i = 0; i < nb_workers; i++) {
		e->dp.w[i] = lb_worker_create(&e->dp, i, rte_lcore_id());
		assert_non_null(e->dp.w[i]);
	}
	e->w = e->dp.w[0];
}

void
ph_env_close(struct ph_env *e, int check)
{
	struct rte_mbuf *m;
	unsigned int avail;

	if (e == NULL || e->closed)
		return;
	e->closed = 1;
	for (uint16_t i = 0; i < LB_MAX_WORKERS; i++) {
		lb_worker_free(e->dp.w[i]);
		e->dp.w[i] = NULL;
	}
	e->w = NULL;
	for (uint16_t p = 0; p < e->nb_up; p++)
		lb_port_close(p);
	for (uint16_t p = 0; p < NB_PORTS; p++) {
		for (uint16_t q = 0; q < MAX_QUEUES; q++) {
			struct rte_ring *r[2] = {e->rx[p][q], e->tx[p][q]};

			for (int k = 0; k < 2; k++) {
				if (r[k] == NULL)
					continue;
				while (rte_ring_sc_dequeue(r[k], (void **)&m) ==
				       0)
					rte_pktmbuf_free(m);
				rte_ring_free(r[k]);
			}
		}
	}
	rte_free(e->dp.conf);
	e->dp.conf = NULL;
	rte_free(e->admit_mem);
	e->admit_mem = NULL;
	avail = rte_mempool_avail_count(ph_pool);
	if (check && avail != e->pool_avail)
		fail_msg("%d mbuf(s) not returned to the pool after "
			 "lb_worker_free()",
			 (int)e->pool_avail - (int)avail);
}

int
ph_teardown(void **state)
{
	ph_env_close(*state, 0);
	free(*state);
	*state = NULL;
	return 0;
}

uint64_t
ph_now_ns(const struct ph_env *e)
{
	return (uint64_t)((double)rte_rdtsc() * e->dp.ns_per_tsc);
}

/* ---- frames in and out ------------------------------------------------- */

void
ph_inject_mbuf(struct ph_env *e, uint16_t port, uint16_t q,
	       const struct pb_frame *f, uint16_t mbuf_port, uint64_t ol_flags)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(ph_pool);
	char *d;

	assert_non_null(m);
	d = rte_pktmbuf_append(m, (uint16_t)f->len);
	assert_non_null(d);
	memcpy(d, f->b, f->len);
	m->port = mbuf_port;
	m->ol_flags = ol_flags;
	assert_int_equal(rte_ring_sp_enqueue(e->rx[port][q], m), 0);
}

void
ph_inject(struct ph_env *e, uint16_t port, uint16_t q, const struct pb_frame *f)
{
	ph_inject_mbuf(e, port, q, f, port, 0);
}

void
ph_rx(struct ph_env *e, uint16_t port, const struct pb_frame *f)
{
	ph_inject(e, port, 0, f);
	ph_poll(e, 0);
}

void
ph_poll(struct ph_env *e, uint16_t wid)
{
	lb_worker_poll(e->dp.w[wid]);
}

void
ph_poll_all(struct ph_env *e)
{
	for (uint16_t i = 0; i < e->dp.nb_workers; i++)
		ph_poll(e, i);
}

void
ph_settle(struct ph_env *e)
{
	uint64_t end = ph_now_ns(e) + SETTLE_NS;

	while (ph_now_ns(e) < end)
		ph_poll_all(e);
	/* Once more after the deadline: a thread descheduled for longer
	 * than the loop must still poll once housekeeping is due. */
	ph_poll_all(e);
}

unsigned int
ph_take(struct ph_env *e, uint16_t port, uint16_t q, struct pb_frame *out,
	unsigned int max)
{
	struct rte_mbuf *m;
	unsigned int n = 0;

	while (rte_ring_sc_dequeue(e->tx[port][q], (void **)&m) == 0) {
		uint32_t len = rte_pktmbuf_pkt_len(m);
		uint16_t segs = m->nb_segs;

		if (n < max) {
			if (segs != 1 || len > PB_FRAME_MAX) {
				rte_pktmbuf_free(m);
				fail_msg("port %u: a frame of %u bytes in %u "
					 "segments",
					 port, len, segs);
			}
			memcpy(out[n].b, rte_pktmbuf_mtod(m, void *), len);
			out[n].len = len;
		}
		n++;
		rte_pktmbuf_free(m);
	}
	return n;
}

void
ph_expect_quiet(struct ph_env *e, const char *what)
{
	for (uint16_t p = 0; p < NB_PORTS; p++) {
		for (uint16_t q = 0; q < e->nq; q++) {
			unsigned int n = ph_take(e, p, q, NULL, 0);

			if (n != 0)
				fail_msg("%s: %u frame(s) sent on port %u "
					 "queue %u, want none",
					 what, n, p, q);
		}
	}
}

void
ph_expect_one(struct ph_env *e, uint16_t port, uint16_t q, struct pb_frame *got,
	      const char *what)
{
	unsigned int n = ph_take(e, port, q, got, 1);

	if (n != 1)
		fail_msg("%s: %u frame(s) sent on port %u queue %u, want 1",
			 what, n, port, q);
	ph_expect_quiet(e, what);
}

void
ph_expect_same(const struct pb_frame *got, const struct pb_frame *want,
	       const char *what)
{
	if (pb_diff(stderr, what, got->b, got->len, want->b, want->len))
		fail_msg("%s: not the expected frame", what);
}

void
ph_expect_frame(struct ph_env *e, uint16_t port, uint16_t q,
		const struct pb_frame *want, const char *what)
{
	static struct pb_frame got;

	ph_expect_one(e, port, q, &got, what);
	ph_expect_same(&got, want, what);
}

/* ---- counters ---------------------------------------------------------- */

void
ph_check_no_drops(const struct lb_worker *w, const char *what)
{
	for (int r = 0; r < LB_DROP_MAX; r++)
		if (w->st.drop[r] != 0)
			fail_msg("%s: %" PRIu64 " packet(s) dropped as %s",
				 what, w->st.drop[r],
				 lb_drop_name((enum lb_drop)r));
}

void
ph_check_drop_delta(const struct lb_worker *w,
		    const struct lb_worker_stats *before, int why,
		    const char *what)
{
	for (int d = 0; d < LB_DROP_MAX; d++) {
		uint64_t n = w->st.drop[d] - before->drop[d];

		if (n != (uint64_t)(d == why))
			fail_msg("%s: %" PRIu64 " more dropped as %s, want %d",
				 what, n, lb_drop_name((enum lb_drop)d),
				 d == why);
	}
}

/* ---- fixtures ---------------------------------------------------------- */

static uint64_t
stat_at(const struct lb_worker_stats *st, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)st + off, sizeof(v));
	return v;
}

static void
check_verdict(const struct lb_worker *w, const struct lb_worker_stats *before,
	      int pkt, const char *what)
{
	for (int v = 0; v < LB_PKT_VERDICT_MAX; v++)
		if (w->st.verdict[v] != before->verdict[v] + (v == pkt))
			fail_msg("%s: parser verdict %s counted %" PRIu64
				 " time(s), want %d",
				 what,
				 lb_pkt_verdict_name((enum lb_pkt_verdict)v),
				 w->st.verdict[v] - before->verdict[v],
				 v == pkt);
}

void
ph_case_init(struct ph_case *c)
{
	memset(c, 0, sizeof(*c));
	c->verdict = PH_DROPPED;
	c->drop = -1;
	c->pkt = -1;
}

void
ph_case_run(struct ph_env *e, const struct ph_case *c, const char *what)
{
	static struct pb_frame got;
	const struct lb_worker *w = e->dp.w[0];
	struct lb_worker_stats before = w->st;

	ph_rx(e, c->port, &c->in);
	if (c->verdict == PH_DROPPED) {
		ph_expect_quiet(e, what);
	} else {
		ph_expect_one(e, c->out_port, 0, &got, what);
		if (c->out.len != 0)
			ph_expect_same(&got, &c->out, what);
	}
	CHECK_EQ(w->st.rx, before.rx + 1, what);
	ph_check_drop_delta(w, &before, c->drop, what);
	if (c->pkt >= 0)
		check_verdict(w, &before, c->pkt, what);
	for (int i = 0; i < PH_COUNTS && c->count[i].name != NULL; i++) {
		const struct ph_count *k = &c->count[i];
		uint64_t rise =
			stat_at(&w->st, k->off) - stat_at(&before, k->off);

		if (rise != k->rise)
			fail_msg("%s: %s rose by %" PRIu64 ", want %" PRIu64,
				 what, k->name, rise, k->rise);
	}
}

/* What the initial state of a row's test points to. */
struct ph_ref {
	const struct ph_table *tb;
	const void *row;
};

/* The references of ph_tests()' rows, freed by ph_tests_free(). */
static struct ph_ref *refs;

static void
row_test(void **state)
{
	const struct ph_ref *ref = *state;
	const char *what = *(const char *const *)ref->row;
	struct ph_case c;
	struct ph_env *e;

	/* Until the dataplane exists, ph_teardown() has nothing to free. */
	*state = NULL;
	ph_case_init(&c);
	e = ref->tb->env(state);
	ref->tb->build(ref->row, &c);
	ph_case_run(e, &c, what);
	if (ref->tb->after != NULL)
		ref->tb->after(e, ref->row);
	ph_env_close(e, 1);
}

struct CMUnitTest *
ph_tests(const struct CMUnitTest *plain, size_t nb_plain,
	 const struct ph_table *const *tables, size_t nb_tables, size_t *n)
{
	struct CMUnitTest *t;
	size_t total = nb_plain, k = nb_plain;

	*n = 0;
	for (size_t i = 0; i < nb_tables; i++)
		total += tables[i]->nb_rows;
	t = calloc(total, sizeof(*t));
	refs = calloc(total - nb_plain + 1, sizeof(*refs));
	if (t == NULL || refs == NULL) {
		free(t);
		free(refs);
		refs = NULL;
		return NULL;
	}
	memcpy(t, plain, nb_plain * sizeof(*t));
	for (size_t i = 0; i < nb_tables; i++) {
		const struct ph_table *tb = tables[i];

		for (size_t r = 0; r < tb->nb_rows; r++, k++) {
			const void *row =
				(const char *)tb->rows + r * tb->row_size;
			char *name;

			if (asprintf(&name, "%s: %s", tb->name,
				     *(const char *const *)row) < 0)
				name = NULL;
			refs[k - nb_plain] = (struct ph_ref){tb, row};
			t[k] = (struct CMUnitTest){
				.name = name != NULL ? name : tb->name,
				.test_func = row_test,
				.teardown_func = ph_teardown,
				.initial_state = &refs[k - nb_plain],
			};
		}
	}
	*n = total;
	return t;
}

void
ph_tests_free(struct CMUnitTest *t, size_t n, size_t nb_plain)
{
	if (t == NULL)
		return;
	for (size_t k = nb_plain; k < n; k++) {
		const struct ph_ref *ref = t[k].initial_state;

		if (t[k].name != ref->tb->name)
			free((char *)t[k].name);
	}
	free(refs);
	refs = NULL;
	free(t);
}

struct lb_dpconf *
ph_table_next(const struct ph_env *e)
{
	struct lb_dpconf *d = rte_malloc("lbpkt_conf", sizeof(*d), 0);

	assert_non_null(d);
	memcpy(d, e->dp.conf, sizeof(*d));
	d->gen++;
	return d;
}

void
ph_table_publish(struct ph_env *e, struct lb_dpconf *d)
{
	struct lb_dpconf *old = e->dp.conf;

	e->dp.conf = d;
	ph_poll_all(e);
	for (uint16_t i = 0; i < e->dp.nb_workers; i++)
		assert_ptr_equal(e->dp.w[i]->conf_pub, d);
	rte_free(old);
}

uint64_t
ph_flows_in_table(const struct lb_worker *w)
{
	struct lb_flow_stats fs;

	lb_flow_stats_get(w->ft, &fs);
	return fs.flows;
}

void
ph_ts_opt(uint8_t opt[12], uint32_t val, uint32_t ecr)
{
	opt[0] = 1;
	opt[1] = 1;
	opt[2] = 8;
	opt[3] = 10;
	pb_put32(opt + 4, val);
	pb_put32(opt + 8, ecr);
}
