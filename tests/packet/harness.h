/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_TEST_HARNESS_H
#define LB_TEST_HARNESS_H

/*
 * Harness of the packet tests: the real worker (dataplane/core/worker.c) in
 * this process on two net_ring ports whose rings the test holds, port 0
 * facing the clients and port 1 the backends. A test builds a dataplane
 * the way dataplane/core/main.c does (configuration lines compiled into a
 * published table, lb_port_setup() per port, lb_worker_create() per
 * worker), puts frames built with pktbuild.c in a port's RX ring, polls
 * the worker and compares what it put in the TX rings byte for byte.
 *
 * Stateless cases are fixture rows (struct ph_table): a frame in, the
 * verdict (dropped, or sent out of which port, which frame), the
 * counters that must rise. main() turns every row into a cmocka test of
 * its own with ph_tests(), so a failing row names itself.
 */

#include <inttypes.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>

#include <cmocka.h>

#include "dp.h"
#include "pktbuild.h"

#define NB_PORTS 2
#define MAX_QUEUES 2
#define ETH 14
#define TTL_IN 64
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

#define CHECK_EQ(got, want, what)                                              \
	do {                                                                   \
		uint64_t got_ = (uint64_t)(got), want_ = (uint64_t)(want);     \
		if (got_ != want_)                                             \
			fail_msg("%s: %s is %" PRIu64 ", want %" PRIu64,       \
				 (what), #got, got_, want_);                   \
	} while (0)

/* The cast every packet test shares (host order). */
#define IP_LB0 PB_IP(198, 51, 100, 1) /* our address on port 0 */
#define IP_C PB_IP(198, 51, 100, 7)   /* the client */
#define IP_LB1 PB_IP(10, 1, 0, 1)     /* our address on port 1 */
#define IP_SNAT PB_IP(10, 1, 0, 2)
#define VPORT 80
#define BPORT 8080

extern const uint8_t mac_port[NB_PORTS][6];
extern const uint8_t mac_c[6];

/* The mbuf pool of every dataplane, without per-lcore cache so that its
 * free count is exact for leak checks. */
extern struct rte_mempool *ph_pool;

/* A dataplane on ring ports. */
struct ph_env {
	struct lb_dp dp;
	struct lb_worker *w;	 /* worker 0, the only one in most tests */
	uint16_t nq;		 /* queues per port = workers */
	uint16_t nb_up;		 /* ports set up */
	unsigned int pool_avail; /* free mbufs before this dataplane */
	int closed;
	struct rte_ring *rx[NB_PORTS][MAX_QUEUES];
	struct rte_ring *tx[NB_PORTS][MAX_QUEUES];
	_Atomic uint64_t gov_m[LB_CONF_MAX_SVCS]; /* as lb-control's */
	void *admit_mem; /* the global buckets, as lb-dataplane's */
};

/*
 * EAL without hugepages, PCI or shared files, on the CPUs this process
 * may use, and ph_pool of @pool_size mbufs. The log level comes from
 * LB_PKT_LOG_LEVEL (default "error"). Returns 0 or -1 (said on stderr).
 */
int ph_eal_init(const char *argv0, const char *name, unsigned int pool_size);

/* Frees ph_pool and the EAL, and removes its runtime directory. */
void ph_eal_fini(void);

/* Whether @name is a known scheduler: lb_conf's check of names. */
int ph_sched_known(const char *name);

/* Whether a worker of @ctx (struct ph_env) has pairs of SNAT address @ip
 * in use: lb-control's view of it (lb_view_snat_busy()). */
bool ph_snat_busy(void *ctx, uint32_t ip);

/*
 * The table lb-control would publish for the configuration lines of each
 * of the @nb_sets NULL-terminated lists in @sets (NULL lists are
 * skipped), compiled after @prev (NULL: the first). SNAT addresses that
 * @prev had and the workers of @e still use are kept, draining.
 */
struct lb_dpconf *ph_conf_compile(struct ph_env *e,
				  const char *const *const *sets,
				  unsigned int nb_sets,
				  const struct lb_dpconf *prev);

/*
 * A new dataplane, not started, kept in *state for ph_teardown(): the
 * pool and clock are set; the caller sets dp.conf, dp.flows and any
 * optional part (L7 pool, governor) before ph_env_start().
 */
struct ph_env *ph_env_new(void **state);

/* Both ports with @nb_workers queues each, and the workers. */
void ph_env_start(struct ph_env *e, uint16_t nb_workers);

/*
 * Frees the dataplane; with @check every mbuf must be back in the pool
 * (what the workers hold is released by lb_worker_free()).
 */
void ph_env_close(struct ph_env *e, int check);

/* cmocka teardown of a test whose *state is a struct ph_env. */
int ph_teardown(void **state);

uint64_t ph_now_ns(const struct ph_env *e);

/*
 * A copy of the published table, one generation on, for the caller to
 * edit and then ph_table_publish() (the IPv6 parts of a table are set
 * this way while lbctl has no IPv6 syntax).
 */
struct lb_dpconf *ph_table_next(const struct ph_env *e);
/* Publishes @d: every worker takes it up now; the old table is freed. */
void ph_table_publish(struct ph_env *e, struct lb_dpconf *d);

/* ---- frames in and out ------------------------------------------------- */

/*
 * Frame @f in the RX ring of @port/@q, with @mbuf_port in mbuf->port and
 * @ol_flags in mbuf->ol_flags (what a PMD would write there).
 */
void ph_inject_mbuf(struct ph_env *e, uint16_t port, uint16_t q,
		    const struct pb_frame *f, uint16_t mbuf_port,
		    uint64_t ol_flags);

/*
 * A frame arriving on @port, queue @q. Most PMDs write the input port in
 * mbuf->port and the worker relies on it; net_ring does not, so the
 * harness does what a PMD would.
 */
void ph_inject(struct ph_env *e, uint16_t port, uint16_t q,
	       const struct pb_frame *f);

/* Frame @f arrives on @port, queue 0; worker 0 polls once. */
void ph_rx(struct ph_env *e, uint16_t port, const struct pb_frame *f);

void ph_poll(struct ph_env *e, uint16_t wid);
void ph_poll_all(struct ph_env *e);

/* Polls every worker long enough for each to run its housekeeping. */
void ph_settle(struct ph_env *e);

/*
 * Takes every frame the workers sent on @port/@q; copies up to @max of
 * them to @out, in order. Returns how many there were.
 */
unsigned int ph_take(struct ph_env *e, uint16_t port, uint16_t q,
		     struct pb_frame *out, unsigned int max);

/* Nothing was sent on any port or queue. */
void ph_expect_quiet(struct ph_env *e, const char *what);

/* Exactly one frame on @port/@q, copied to @got, and nothing elsewhere. */
void ph_expect_one(struct ph_env *e, uint16_t port, uint16_t q,
		   struct pb_frame *got, const char *what);

void ph_expect_same(const struct pb_frame *got, const struct pb_frame *want,
		    const char *what);

/* Exactly @want on @port/@q, and nothing elsewhere. */
void ph_expect_frame(struct ph_env *e, uint16_t port, uint16_t q,
		     const struct pb_frame *want, const char *what);

/* ---- counters ---------------------------------------------------------- */

/* No drop counter of @w has moved from zero. */
void ph_check_no_drops(const struct lb_worker *w, const char *what);

/* Every drop counter moved by one for reason @why (-1: none), no other. */
void ph_check_drop_delta(const struct lb_worker *w,
			 const struct lb_worker_stats *before, int why,
			 const char *what);

/* ---- fixtures ---------------------------------------------------------- */

enum ph_verdict {
	PH_DROPPED, /* nothing sent anywhere */
	PH_SENT,    /* one frame sent, out of ph_case.out_port */
};

/* A uint64_t counter of struct lb_worker_stats and how much it rises. */
struct ph_count {
	const char *name; /* NULL ends a list */
	size_t off;
	uint64_t rise;
};

/* clang-format off */
#define PH_COUNT(field, n)                                                     \
	{#field, offsetof(struct lb_worker_stats, field), (n)}
/* clang-format on */

#define PH_COUNTS 4

/* One frame in and what the worker must make of it. */
struct ph_case {
	uint16_t port; /* where the frame arrives; queue and worker 0 */
	struct pb_frame in;
	enum ph_verdict verdict;
	uint16_t out_port;   /* PH_SENT: the port it leaves by */
	struct pb_frame out; /* PH_SENT: the frame, byte for byte; len 0: any */
	int drop;	     /* LB_DROP_ reason counted once, -1: none */
	int pkt;	     /* LB_PKT_ verdict counted once, -1: unchecked */
	struct ph_count count[PH_COUNTS]; /* more counters and their rise */
};

/*
 * A table of fixture rows. Each row is the test file's own struct whose
 * first member is its description (const char *); @build turns it into
 * a struct ph_case.
 */
struct ph_table {
	const char *name; /* prefix of the rows' test names */
	const void *rows;
	size_t row_size, nb_rows;
	/* The dataplane the row's frame meets, kept in *state. */
	struct ph_env *(*env)(void **state);
	/* Writes row @row's frame and expectations into @c (empty). */
	void (*build)(const void *row, struct ph_case *c);
	/* Optional checks of the row's own after the case passed. */
	void (*after)(struct ph_env *e, const void *row);
};

#define PH_ROWS(a) (a), sizeof((a)[0]), NELEM(a)

/* An empty case: dropped, no drop reason, parser verdict unchecked. */
void ph_case_init(struct ph_case *c);

/*
 * Injects @c's frame, polls worker 0 once and checks the verdict, the
 * frame sent, rx up by one, the drop reason and parser verdict counted
 * once and no other, and every counter of @c->count.
 */
void ph_case_run(struct ph_env *e, const struct ph_case *c, const char *what);

/*
 * The tests of @plain followed by one test per row of each of @tables,
 * named "TABLE: description", each with ph_teardown. Stores the count in
 * *@n; free with ph_tests_free().
 */
struct CMUnitTest *ph_tests(const struct CMUnitTest *plain, size_t nb_plain,
			    const struct ph_table *const *tables,
			    size_t nb_tables, size_t *n);
void ph_tests_free(struct CMUnitTest *t, size_t n, size_t nb_plain);

/* The entries of worker @p w's flow table. */
uint64_t ph_flows_in_table(const struct lb_worker *w);
/* A timestamps option alone (NOP NOP TS TSval @p val TSecr @p ecr). */
void ph_ts_opt(uint8_t opt[12], uint32_t val, uint32_t ecr);

#endif /* LB_TEST_HARNESS_H */
