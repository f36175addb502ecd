/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scaling across hosts through Redis: the payloads and the merge (no
 * Redis), then two lease holders in this process against a real
 * redis-server on a unix socket of the test's own (those tests skip
 * when none is installed): handover when the leader dies, fenced writes
 * of an old leader, step-down while Redis hangs, and a scaling loop
 * whose instances are each started once across a handover.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "leader.h"

/* An IPv4 address (host order) as the lists hold it. */
#define IP4(a) ((struct lb_conf_ip){.af = LB_CONF_AF_INET, .ip = (a)})

#define MS 1000000ull
#define SVC "tcp:10.0.0.1:80"

static pid_t srv_pid;
static char srv_dir[64];
static char srv_sock[96];

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 * MS + (uint64_t)ts.tv_nsec;
}

static void
nap_ms(unsigned int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * (long)MS};

	nanosleep(&ts, NULL);
}

static bool
sock_answers(void)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	bool ok;

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", srv_sock);
	ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

static int
srv_up(void **state)
{
	(void)state;
	if (access("/usr/bin/redis-server", X_OK) != 0)
		return 0;
	snprintf(srv_dir, sizeof(srv_dir), "/tmp/lb-leader-test.XXXXXX");
	if (mkdtemp(srv_dir) == NULL)
		return -1;
	snprintf(srv_sock, sizeof(srv_sock), "%s/redis.sock", srv_dir);
	srv_pid = fork();
	if (srv_pid == 0) {
		execl("/usr/bin/redis-server", "redis-server", "--port", "0",
		      "--unixsocket", srv_sock, "--save", "", "--appendonly",
		      "no", "--dir", srv_dir, "--loglevel", "warning",
		      (char *)NULL);
		_exit(127);
	}
	/* Generous: a loaded machine starts it slowly. */
	for (int i = 0; i < 1000 && !sock_answers(); i++)
		nap_ms(10);
	return sock_answers() ? 0 : -1;
}

static int
srv_down(void **state)
{
	(void)state;
	if (srv_pid > 0) {
		kill(srv_pid, SIGCONT);
		kill(srv_pid, SIGTERM);
		waitpid(srv_pid, NULL, 0);
		srv_pid = 0;
		unlink(srv_sock);
		rmdir(srv_dir);
	}
	return 0;
}

/* ---- without Redis ---- */

static void
test_list_text(void **state)
{
	struct lb_leader_list a = {.term = 3, .seq = 7, .next_id = 9, .n = 2};
	struct lb_leader_list b;
	char buf[4096];
	int n;

	(void)state;
	a.inst[0] = (struct lb_leader_inst){
		.id = 4, .state = LB_AS_ACTIVE, .ip = {.ip = 0x0a000105}, .port = 80,
		.weight = 1};
	snprintf(a.inst[0].drv_id, sizeof(a.inst[0].drv_id), "pod-4");
	a.inst[1] = (struct lb_leader_inst){.id = 8,
					    .state = LB_AS_STARTING};
	n = lb_leader_list_fmt(&a, buf, sizeof(buf));
	assert_true(n > 0);
	assert_string_equal(buf, "sluice-list 1 3 7 9 2\n"
				 "4 active 10.0.1.5 80 1 pod-4\n"
				 "8 starting 0.0.0.0 0 0 -\n");
	assert_int_equal(lb_leader_list_parse(buf, (size_t)n, &b), 0);
	assert_int_equal(b.term, 3);
	assert_int_equal(b.seq, 7);
	assert_int_equal(b.next_id, 9);
	assert_int_equal(b.n, 2);
	assert_memory_equal(&a.inst[0], &b.inst[0], sizeof(a.inst[0]));
	assert_memory_equal(&a.inst[1], &b.inst[1], sizeof(a.inst[1]));
	/* Every prefix but the whole is refused. */
	for (int k = 0; k < n - 1; k++)
		assert_int_equal(lb_leader_list_parse(buf, (size_t)k, &b),
				 -EINVAL);
	assert_int_equal(lb_leader_list_fmt(&a, buf, 20), -ENOSPC);
}

/* IPv6 instances and backends travel whole, and never match an IPv4
 * address whose value happens to equal part of them. */
static void
test_ip6_text(void **state)
{
	struct lb_leader_list a = {.term = 1, .seq = 1, .next_id = 2, .n = 1};
	struct lb_leader_list b;
	struct lb_leader_load h = {.n = 1}, r;
	struct lb_leader_be_load m;
	struct lb_conf_ip v6 = {.af = LB_CONF_AF_INET6,
				.ip6 = {0x20, 0x01, 0x0d, 0xb8, [15] = 0x11}};
	char buf[4096];
	int n;

	(void)state;
	a.inst[0] = (struct lb_leader_inst){
		.id = 1, .state = LB_AS_ACTIVE, .ip = v6, .port = 8080,
		.weight = 2};
	n = lb_leader_list_fmt(&a, buf, sizeof(buf));
	assert_true(n > 0);
	assert_string_equal(buf, "sluice-list 1 1 1 2 1\n"
				 "1 active 2001:db8::11 8080 2 -\n");
	assert_int_equal(lb_leader_list_parse(buf, (size_t)n, &b), 0);
	assert_memory_equal(&a.inst[0], &b.inst[0], sizeof(a.inst[0]));
	assert_int_equal(lb_leader_list_parse("sluice-list 1 1 1 2 1\n"
					      "1 active 2001:db8::g 80 1 -\n",
					      45, &b),
			 -EINVAL);

	snprintf(h.host, sizeof(h.host), "a/1-1");
	h.be[0] = (struct lb_leader_be_load){.ip = v6, .port = 8080,
					     .seen = true, .spl = 0.4,
					     .responses = 5, .flows = 3};
	n = lb_leader_load_fmt(&h, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(lb_leader_load_parse(buf, (size_t)n, &r), 0);
	assert_memory_equal(&r, &h, sizeof(r));
	assert_true(lb_leader_merge_be(&h, 1, &v6, 8080, &m));
	assert_int_equal(m.flows, 3);
	assert_false(lb_leader_merge_be(&h, 1, &IP4(0x11), 8080, &m));
	assert_int_equal(m.flows, 0);
}

static void
test_list_bad(void **state)
{
	static const char *const bad[] = {
		"",
		"sluice-list 2 1 1 1 0\n",
		"sluice-list 1 1 1 1 1\n",
		"sluice-list 1 1 1 5 1\n9 active 10.0.0.1 80 1 -\n",
		"sluice-list 1 1 1 5 1\n1 sleeping 10.0.0.1 80 1 -\n",
		"sluice-list 1 1 1 5 1\n1 active 10.0.0.256 80 1 -\n",
		"sluice-list 1 1 1 5 1\n1 active 10.0.0.1 65536 1 -\n",
		"sluice-list 1 1 1 5 1\n1 active 10.0.0.1 80 1 - x\n",
		"sluice-list 1 1 1 5 0\nextra\n",
		"sluice-list 1 1 1 5 0 x\n",
		"sluice-list 1 1 1 5 999999\n",
	};
	struct lb_leader_list l;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		print_message("bad %zu\n", i);
		l.n = 77;
		assert_int_equal(lb_leader_list_parse(bad[i], strlen(bad[i]),
						      &l),
				 -EINVAL);
		assert_int_equal(l.n, 0);
	}
}

static void
test_load_text_and_merge(void **state)
{
	struct lb_leader_load h[3], r;
	struct lb_leader_be_load m;
	char buf[4096];
	int n;

	(void)state;
	memset(h, 0, sizeof(h));
	/* Host 0 sends 300 responses' worth at SPL 0.9, host 1 100 at
	 * 0.1: the cluster's SPL is (300 x 0.9 + 100 x 0.1) / 400 = 0.7. */
	snprintf(h[0].host, sizeof(h[0].host), "a/1-1");
	h[0].inflight = 5;
	h[0].n = 2;
	h[0].be[0] = (struct lb_leader_be_load){{.ip = 0x0a000001}, 80, true, 0.9,
						100 * MS, 300, 4};
	h[0].be[1] = (struct lb_leader_be_load){{.ip = 0x0a000002}, 80, false, 0, 0,
						0, 1};
	snprintf(h[1].host, sizeof(h[1].host), "b/2-2");
	h[1].n = 1;
	h[1].be[0] = (struct lb_leader_be_load){{.ip = 0x0a000001}, 80, true, 0.1,
						500 * MS, 100, 2};
	n = lb_leader_load_fmt(&h[0], buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(lb_leader_load_parse(buf, (size_t)n, &r), 0);
	assert_memory_equal(&r, &h[0], sizeof(r));
	assert_true(lb_leader_merge_be(h, 2, &IP4(0x0a000001), 80, &m));
	assert_float_equal(m.spl, 0.7, 1e-12);
	assert_int_equal(m.age_ns, 200 * MS);
	assert_int_equal(m.flows, 6);
	assert_int_equal(m.responses, 400);
	/* No SPL anywhere: not seen, flows still summed. */
	assert_false(lb_leader_merge_be(h, 2, &IP4(0x0a000002), 80, &m));
	assert_int_equal(m.flows, 1);
	/* Without traffic each report counts the same. */
	h[0].be[0].responses = 0;
	h[1].be[0].responses = 0;
	assert_true(lb_leader_merge_be(h, 2, &IP4(0x0a000001), 80, &m));
	assert_float_equal(m.spl, 0.5, 1e-12);
	/* A host with traffic but no SPL weighs nothing. */
	h[2] = h[1];
	h[2].be[0].seen = false;
	h[2].be[0].responses = 1000;
	assert_true(lb_leader_merge_be(h, 3, &IP4(0x0a000001), 80, &m));
	assert_float_equal(m.spl, 0.5, 1e-12);
	/* Bad summaries. */
	assert_int_equal(lb_leader_load_parse("sluice-load 1 a 0 1\n"
					      "10.0.0.1 80 2 0 0 0 0\n",
					      40, &r),
			 -EINVAL);
	assert_int_equal(lb_leader_load_parse("sluice-load 1 a 0 1\n"
					      "10.0.0.1 80 1 nan 0 0 0\n",
					      42, &r),
			 -EINVAL);
	assert_int_equal(lb_leader_load_parse("sluice-load 1 a 0 1\n"
					      "10.0.0.1 80 1 -1 0 0 0\n",
					      41, &r),
			 -EINVAL);
	assert_int_equal(lb_leader_load_parse("sluice-load 1 a 0 1\n"
					      "10.0.0.1 80 1 2e6 0 0 0\n",
					      42, &r),
			 -EINVAL);
}

/* ---- against redis-server ---- */

struct host {
	struct lb_leader *ld;
	struct lb_lease l;
};

/* Short, but with room for a loaded machine's late steps. */
static const struct lb_lease_params TP = {1500 * MS, 300 * MS, 200 * MS};

/* One lease step of @p h on @p svc's lease at the current time. */
static void
step_on(struct host *h, const char *svc)
{
	uint64_t t = now_ns(), term = h->l.term;
	enum lb_lease_op op = lb_lease_due(&h->l, t);
	enum lb_lease_outcome out;
	char holder[LB_LEADER_TOKEN_LEN + 1] = "";

	if (op == LB_LEASE_OP_NONE)
		return;
	out = lb_leader_lease(h->ld, svc, op, h->l.term, TP.ttl_ns / MS,
			      &term, holder, sizeof(holder));
	lb_lease_answer(&h->l, op, t, now_ns(), out, term, holder);
}

static void
step(struct host *h)
{
	step_on(h, SVC);
}

static void
host_init(struct host *h, const char *name)
{
	h->ld = lb_leader_create(srv_sock, 0, name);
	assert_non_null(h->ld);
	lb_lease_init(&h->l, &TP);
}

/* Steps both (those not NULL) until @p cond or 10 s. */
static bool
run_until(struct host *a, struct host *b, bool (*cond)(void *), void *arg)
{
	uint64_t end = now_ns() + 10000 * MS;

	while (now_ns() < end) {
		if (a != NULL)
			step(a);
		if (b != NULL)
			step(b);
		if (cond(arg))
			return true;
		nap_ms(5);
	}
	return false;
}

static bool
someone_leads(void *arg)
{
	struct host *h = arg;
	uint64_t t = now_ns();

	return lb_lease_leading(&h[0].l, t) || lb_lease_leading(&h[1].l, t);
}

static bool
leads(void *arg)
{
	return lb_lease_leading(&((struct host *)arg)->l, now_ns());
}

static bool
not_leads(void *arg)
{
	return !leads(arg);
}

/* h[0] and h[1] see the same holder. */
static bool
knows_leader(void *arg)
{
	struct host *h = arg;

	return strcmp(h[0].l.leader, h[1].l.leader) == 0;
}

static void
test_handover(void **state)
{
	struct host h[2];
	struct lb_leader_list lst = {.next_id = 1}, got;
	uint64_t t0, term0;
	int a, b;

	(void)state;
	if (srv_pid <= 0)
		skip();
	host_init(&h[0], "hostA");
	host_init(&h[1], "hostB");
	assert_true(run_until(&h[0], &h[1], someone_leads, h));
	a = lb_lease_leading(&h[0].l, now_ns()) ? 0 : 1;
	b = 1 - a;
	term0 = h[a].l.term;
	/* The follower knows who leads, and in which term. */
	for (int i = 0; i < 50; i++) {
		step(&h[0]);
		step(&h[1]);
		nap_ms(10);
	}
	assert_true(lb_lease_leading(&h[a].l, now_ns()));
	assert_false(lb_lease_leading(&h[b].l, now_ns()));
	assert_string_equal(h[b].l.leader, lb_leader_token(h[a].ld));
	assert_int_equal(h[b].l.term, term0);
	/* The leader's list goes through; the follower's is fenced. */
	lst.term = term0;
	lst.seq = 1;
	assert_int_equal(lb_leader_publish(h[a].ld, SVC, &lst), 0);
	lst.seq = 2;
	assert_int_equal(lb_leader_publish(h[b].ld, SVC, &lst), -EPERM);
	assert_int_equal(lb_leader_fetch(h[b].ld, SVC, &got), 0);
	assert_int_equal(got.seq, 1);
	/* The leader dies (no more renewals, no release): the other takes
	 * over once the TTL is gone, not before, in a higher term. */
	t0 = now_ns();
	assert_true(run_until(NULL, &h[b], leads, &h[b]));
	assert_true(now_ns() - t0 >= TP.ttl_ns - TP.renew_ns - TP.margin_ns);
	assert_true(h[b].l.term > term0);
	/* The dead leader's writes are refused from then on. */
	lst.seq = 3;
	assert_int_equal(lb_leader_publish(h[a].ld, SVC, &lst), -EPERM);
	assert_true(lb_leader_up(h[a].ld));
	/* It has stepped down already (its deadline came before the TTL
	 * ran out in Redis), and hears of the new leader at its next
	 * try. */
	assert_false(lb_lease_leading(&h[a].l, now_ns()));
	assert_true(run_until(&h[a], NULL, knows_leader, h));
	assert_int_equal(h[a].l.term, h[b].l.term);
	assert_false(lb_lease_leading(&h[a].l, now_ns()));
	/* A release gives it up at once. */
	assert_int_equal(lb_leader_release(h[b].ld, SVC, h[b].l.term), 0);
	lb_lease_step_down(&h[b].l);
	assert_true(run_until(&h[a], NULL, leads, &h[a]));
	assert_true(h[a].l.term > h[b].l.term);
	lb_leader_free(h[0].ld);
	lb_leader_free(h[1].ld);
}

/* A pool's policy (the unit "SVC/POOL", as the scale runtime names it)
 * has a lease and a list of its own: one host leads the service's own
 * pool while the other leads its pool api, and neither's list is the
 * other's. */
static void
test_pool_leases(void **state)
{
	static const char pool_svc[] = SVC "/api";
	struct lb_leader_list lst = {.next_id = 5}, got;
	struct host h[2];
	uint64_t end;

	(void)state;
	if (srv_pid <= 0)
		skip();
	host_init(&h[0], "hostA");
	host_init(&h[1], "hostB");
	end = now_ns() + 10000 * MS;
	while (now_ns() < end && !(lb_lease_leading(&h[0].l, now_ns()) &&
				   lb_lease_leading(&h[1].l, now_ns()))) {
		step_on(&h[0], SVC);
		step_on(&h[1], pool_svc);
		nap_ms(5);
	}
	assert_true(lb_lease_leading(&h[0].l, now_ns()));
	assert_true(lb_lease_leading(&h[1].l, now_ns()));
	lst.term = h[0].l.term;
	lst.seq = 1;
	assert_int_equal(lb_leader_publish(h[0].ld, SVC, &lst), 0);
	/* Host A does not hold the pool's lease: fenced. */
	assert_int_equal(lb_leader_publish(h[0].ld, pool_svc, &lst), -EPERM);
	lst.term = h[1].l.term;
	lst.next_id = 9;
	assert_int_equal(lb_leader_publish(h[1].ld, pool_svc, &lst), 0);
	assert_int_equal(lb_leader_fetch(h[1].ld, SVC, &got), 0);
	assert_int_equal(got.next_id, 5);
	assert_int_equal(lb_leader_fetch(h[0].ld, pool_svc, &got), 0);
	assert_int_equal(got.next_id, 9);
	assert_int_equal(lb_leader_release(h[0].ld, SVC, h[0].l.term), 0);
	assert_int_equal(lb_leader_release(h[1].ld, pool_svc, h[1].l.term), 0);
	lb_leader_free(h[0].ld);
	lb_leader_free(h[1].ld);
}

static void
test_step_down_when_redis_hangs(void **state)
{
	struct host h;
	uint64_t t0, term;

	(void)state;
	if (srv_pid <= 0)
		skip();
	host_init(&h, "hostC");
	assert_true(run_until(&h, NULL, leads, &h));
	term = h.l.term;
	/* Redis stops answering: the leader steps down at the latest at
	 * its last renewal's send + TTL - margin, before the lease could
	 * expire in Redis. */
	kill(srv_pid, SIGSTOP);
	t0 = now_ns();
	assert_true(run_until(&h, NULL, not_leads, &h));
	/* Its last renewal was sent before the stop. */
	assert_true(h.l.valid_until_ns <= t0 + TP.ttl_ns - TP.margin_ns);
	assert_true(h.l.st.errors > 0);
	assert_int_equal(h.l.st.expired, 1);
	assert_false(lb_leader_up(h.ld));
	kill(srv_pid, SIGCONT);
	/* Back: a leader again (its own lease, or a new one), term not
	 * lower. */
	assert_true(run_until(&h, NULL, leads, &h));
	assert_true(h.l.term >= term);
	assert_int_equal(lb_leader_release(h.ld, SVC, h.l.term), 0);
	lb_leader_free(h.ld);
}

/*
 * Each host runs the same loop: while it leads, it reads the list and,
 * if fewer than `want` instances are in it, adds one, publishes the
 * list (fenced) and only then "starts" it. The instance ids started are
 * recorded. The first leader dies halfway; the second finishes the job.
 * Every id is started once, and exactly `want` in all.
 */
static unsigned int starts[64];

static void
scale_step(struct host *h, unsigned int want)
{
	struct lb_leader_list l;
	int rc;

	step(h);
	if (!lb_lease_leading(&h->l, now_ns()))
		return;
	rc = lb_leader_fetch(h->ld, SVC, &l);
	if (rc == -ENOENT)
		l = (struct lb_leader_list){.next_id = 1};
	else if (rc != 0)
		return;
	if (l.n >= want)
		return;
	l.inst[l.n] = (struct lb_leader_inst){.id = l.next_id++,
					      .state = LB_AS_STARTING};
	l.n++;
	l.term = h->l.term;
	l.seq++;
	if (lb_leader_publish(h->ld, SVC, &l) == 0)
		starts[l.inst[l.n - 1].id]++;
}

static bool
all_started(void *arg)
{
	unsigned int n = 0, want = *(unsigned int *)arg;

	for (unsigned int i = 0; i < 64; i++)
		n += starts[i];
	return n >= want;
}

static void
test_scale_once_across_handover(void **state)
{
	struct host h[2];
	unsigned int want = 3, total = 0;
	uint64_t end;
	int a;

	(void)state;
	if (srv_pid <= 0)
		skip();
	host_init(&h[0], "hostD");
	host_init(&h[1], "hostE");
	memset(starts, 0, sizeof(starts));
	/* A fresh list for this test. */
	assert_true(run_until(&h[0], &h[1], someone_leads, h));
	a = lb_lease_leading(&h[0].l, now_ns()) ? 0 : 1;
	{
		struct lb_leader_list z = {.term = h[a].l.term, .next_id = 1};

		assert_int_equal(lb_leader_publish(h[a].ld, SVC, &z), 0);
	}
	for (end = now_ns() + 10000 * MS; !all_started(&(unsigned int){2}) &&
					  now_ns() < end;) {
		scale_step(&h[0], 2);
		scale_step(&h[1], 2);
		nap_ms(5);
	}
	assert_true(all_started(&(unsigned int){2}));
	/* The leader dies; the other goes on to three, and then both run
	 * a while longer with nothing more to start. */
	for (end = now_ns() + 10000 * MS; !all_started(&want) &&
					  now_ns() < end;) {
		scale_step(&h[1 - a], want);
		nap_ms(5);
	}
	for (end = now_ns() + 1000 * MS; now_ns() < end;) {
		scale_step(&h[0], want);
		scale_step(&h[1], want);
		nap_ms(5);
	}
	for (unsigned int i = 0; i < 64; i++) {
		assert_true(starts[i] <= 1);
		total += starts[i];
	}
	assert_int_equal(total, want);
	assert_int_equal(starts[1] + starts[2] + starts[3], 3);
	lb_leader_free(h[0].ld);
	lb_leader_free(h[1].ld);
}

static void
test_loads(void **state)
{
	struct lb_leader *a, *b;
	struct lb_leader_load l = {.inflight = 3, .n = 1}, out[4];
	int n;

	(void)state;
	if (srv_pid <= 0)
		skip();
	a = lb_leader_create(srv_sock, 0, "hostF");
	b = lb_leader_create(srv_sock, 0, "hostG");
	assert_non_null(a);
	assert_non_null(b);
	l.be[0] = (struct lb_leader_be_load){{.ip = 0x0a000001}, 80, true, 0.5, 0, 10,
					     1};
	assert_int_equal(lb_leader_report(a, SVC, &l, 300), 0);
	l.inflight = 4;
	assert_int_equal(lb_leader_report(b, SVC, &l, 5000), 0);
	n = lb_leader_loads(a, SVC, out, 4);
	assert_int_equal(n, 2);
	assert_int_equal(out[0].inflight + out[1].inflight, 7);
	/* a's summary expires: only b's is left. */
	nap_ms(800);
	n = lb_leader_loads(a, SVC, out, 4);
	assert_int_equal(n, 1);
	assert_string_equal(out[0].host, lb_leader_token(b));
	lb_leader_free(a);
	lb_leader_free(b);
	/* Bad arguments. */
	assert_null(lb_leader_create(srv_sock, 0, "a b"));
	assert_null(lb_leader_create(srv_sock, 0, "a/b"));
	assert_null(lb_leader_create("127.0.0.1", 0, "a"));
	assert_null(lb_leader_create(srv_sock, 0, ""));
}

int
main(void)
{
	const struct CMUnitTest pure[] = {
		cmocka_unit_test(test_list_text),
		cmocka_unit_test(test_list_bad),
		cmocka_unit_test(test_ip6_text),
		cmocka_unit_test(test_load_text_and_merge),
	};
	const struct CMUnitTest redis[] = {
		cmocka_unit_test(test_handover),
		cmocka_unit_test(test_pool_leases),
		cmocka_unit_test(test_step_down_when_redis_hangs),
		cmocka_unit_test(test_scale_once_across_handover),
		cmocka_unit_test(test_loads),
	};
	int rc = cmocka_run_group_tests(pure, NULL, NULL);

	return rc + cmocka_run_group_tests(redis, srv_up, srv_down);
}
