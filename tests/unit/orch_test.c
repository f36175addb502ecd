/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests of the orchestrator drivers: the exec driver's output reader
 * (table of lines, whole outputs, every split point), the exec driver
 * against real scripts that fail, hang and succeed (errors reported and
 * retried with backoff, never taken for success), and the process driver
 * starting, supervising and stopping real local processes.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <lb/orch.h>

struct line_case {
	const char *in;
	int rc;
	const char *id;
	uint32_t ip;
	uint16_t port;
};

static const struct line_case lines[] = {
	{"i1 10.0.0.1:80", 0, "i1", 0x0a000001, 80},
	{"  pod-abc\t192.168.1.20:8080  ", 0, "pod-abc", 0xc0a80114, 8080},
	{"x 1.2.3.4:65535", 0, "x", 0x01020304, 65535},
	{"i1 10.0.0.1:0", -EINVAL, NULL, 0, 0},
	{"i1 10.0.0.1:65536", -EINVAL, NULL, 0, 0},
	{"i1 10.0.0.1", -EINVAL, NULL, 0, 0},
	{"i1 10.0.0.256:80", -EINVAL, NULL, 0, 0},
	{"i1", -EINVAL, NULL, 0, 0},
	{"", -EINVAL, NULL, 0, 0},
	{"i1 10.0.0.1:80 extra", -EINVAL, NULL, 0, 0},
	{"i\x01 10.0.0.1:80", -EINVAL, NULL, 0, 0},
	{"i\xc3\xa9 10.0.0.1:80", -EINVAL, NULL, 0, 0},
	{"0123456789012345678901234567890123456789012345678901234567890123 "
	 "1.1.1.1:1",
	 -EINVAL, NULL, 0, 0},
};

static void
test_parse_line(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		const struct line_case *c = &lines[i];
		char id[LB_ORCH_ID_LEN + 1] = "unset";
		uint32_t ip = 7;
		uint16_t port = 7;
		int rc = lb_orch_parse_line(c->in, strlen(c->in), id, &ip,
					    &port);

		assert_int_equal(rc, c->rc);
		if (rc == 0) {
			assert_string_equal(id, c->id);
			assert_int_equal(ip, c->ip);
			assert_int_equal(port, c->port);
		} else {
			assert_string_equal(id, "unset");
			assert_int_equal(ip, 7);
		}
	}
}

static void
test_parse_output(void **state)
{
	static const char good[] =
		"# started\r\n\n  \ni7 10.12.0.9:80\r\ni8 10.12.0.10:80";
	char id[LB_ORCH_ID_LEN + 1];
	unsigned int bad = 0;
	uint32_t ip;
	uint16_t port;

	(void)state;
	assert_int_equal(
		lb_orch_parse_output(good, strlen(good), id, &ip, &port, &bad),
		1);
	assert_string_equal(id, "i7");
	assert_int_equal(ip, 0x0a0c0009);
	assert_int_equal(port, 80);
	assert_int_equal(
		lb_orch_parse_output("# nothing\n\n", 11, id, &ip, &port, &bad),
		0);
	assert_int_equal(lb_orch_parse_output("", 0, id, &ip, &port, &bad), 0);
	assert_int_equal(lb_orch_parse_output("i1 1.1.1.1:1\noops\n", 18, id,
					      &ip, &port, &bad),
			 -EINVAL);
	assert_int_equal(bad, 2);
	assert_int_equal(lb_orch_parse_output("i1 1.1.1.1:1\0x\n", 15, id, &ip,
					      &port, &bad),
			 -EINVAL);
	/* Split anywhere, the prefix is either still without an instance
	 * line, malformed (a cut word) or the same answer. */
	for (size_t cut = 0; cut <= strlen(good); cut++) {
		int rc = lb_orch_parse_output(good, cut, id, &ip, &port, &bad);

		assert_true(rc == 0 || rc == 1 || rc == -EINVAL);
		if (rc == 1 && cut > strlen(good) - 14)
			assert_string_equal(id, "i7");
	}
}

struct run {
	const struct lb_orch_ops *ops;
	void *d;
	uint64_t now;
	struct lb_orch_ev ev[64];
	unsigned int n;
	unsigned int seen; /* events before this were waited for */
};

/* Polls until an event of @p kind for @p inst, at most @p ms; keeps
 * every event seen in r->ev. */
static const struct lb_orch_ev *
wait_ev(struct run *r, enum lb_orch_ev_kind kind, uint32_t inst,
	unsigned int ms)
{
	/* One poll may have brought it with the one waited for before. */
	for (unsigned int i = r->seen; i < r->n; i++)
		if (r->ev[i].kind == kind && r->ev[i].inst == inst) {
			r->seen = r->n;
			return &r->ev[i];
		}
	for (unsigned int t = 0; t < ms / 10; t++) {
		struct lb_orch_ev ev[8];
		unsigned int n;

		n = r->ops->poll(r->d, lb_orch_now(), ev, 8);
		for (unsigned int i = 0; i < n; i++) {
			if (r->n < 64)
				r->ev[r->n++] = ev[i];
			if (ev[i].kind == kind && ev[i].inst == inst) {
				const struct lb_orch_ev *e = &r->ev[r->n - 1];

				/* Later events of this poll stay to be seen. */
				r->seen = r->n;
				for (unsigned int k = i + 1; k < n && r->n < 64;
				     k++)
					r->ev[r->n++] = ev[k];
				return e;
			}
		}
		usleep(10000);
	}
	return NULL;
}

static unsigned int
count_ev(const struct run *r, enum lb_orch_ev_kind kind)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < r->n; i++)
		n += r->ev[i].kind == kind;
	return n;
}

/* A script that behaves by instance name and remembers its calls. */
static char dir[] = "/tmp/orch_test_XXXXXX";
static char script[128];

static void
write_script(void)
{
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(script, sizeof(script), "%s/orch.sh", dir);
	f = fopen(script, "w");
	assert_non_null(f);
	fprintf(f,
		"#!/bin/sh\n"
		"echo \"$1 $2 $3\" >>%s/calls\n"
		"case \"$1 $3\" in\n"
		"'up i0') echo \"# ok\"; echo \"pod-$3 10.1.2.3:8080\" ;;\n"
		"'up i1') echo 'boom' >&2; exit 3 ;;\n"
		"'up i2') exec sleep 30 ;;\n"
		"'up i3') echo 'not an instance line' ;;\n"
		"'down pod-i0') ;;\n"
		"*) exit 1 ;;\n"
		"esac\n",
		dir);
	fclose(f);
	chmod(script, 0755);
}

static unsigned int
calls(const char *what)
{
	char path[300], line[256];
	unsigned int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/calls", dir);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		n += strncmp(line, what, strlen(what)) == 0;
	fclose(f);
	return n;
}

static void
test_exec_driver(void **state)
{
	struct lb_as_conf c;
	struct lb_cmd_out out;
	struct run r = {0};
	const struct lb_orch_ev *e;
	char err[128];

	(void)state;
	write_script();
	lb_as_conf_default(&c);
	snprintf(c.driver, sizeof(c.driver), "exec");
	lb_cmd_out_init(&out);
	assert_true(lb_orch_check(&c, &out) < 0); /* no command */
	snprintf(c.command, sizeof(c.command), "%s", script);
	/* Long enough for a shell to start on a loaded host; the hanging
	 * case below waits it out. */
	c.exec_timeout_ns = 2000000000ull; /* 2 s */
	lb_cmd_out_reset(&out);
	assert_int_equal(lb_orch_check(&c, &out), 0);
	lb_cmd_out_free(&out);
	r.ops = lb_orch_find("exec");
	assert_non_null(r.ops);
	r.d = r.ops->create(&c, "tcp:10.0.0.1:80", err, sizeof(err));
	assert_non_null(r.d);

	/* Succeeds: the first instance line, after a comment. */
	assert_int_equal(r.ops->start(r.d, 0, lb_orch_now()), 0);
	e = wait_ev(&r, LB_ORCH_EV_UP, 0, 8000);
	assert_non_null(e);
	assert_string_equal(e->id, "pod-i0");
	assert_int_equal(e->ip, 0x0a010203);
	assert_int_equal(e->port, 8080);
	assert_int_equal(calls("up tcp:10.0.0.1:80 i0"), 1);

	/* Fails: reported with its status, retried with backoff (1 s, 2 s,
	 * 4 s), then given up: 4 tries in about 7 s. */
	assert_int_equal(r.ops->start(r.d, 1, lb_orch_now()), 0);
	e = wait_ev(&r, LB_ORCH_EV_ERROR, 1, 8000);
	assert_non_null(e);
	assert_non_null(strstr(e->msg, "exit status 3"));
	assert_int_equal(calls("up tcp:10.0.0.1:80 i1"), 1);
	e = wait_ev(&r, LB_ORCH_EV_FAILED, 1, 20000);
	assert_non_null(e);
	assert_int_equal(calls("up tcp:10.0.0.1:80 i1"), LB_ORCH_START_TRIES);
	for (unsigned int i = 0; i < r.n; i++)
		assert_false(r.ev[i].inst == 1 &&
			     r.ev[i].kind == LB_ORCH_EV_UP);

	/* Hangs: killed at the timeout, reported, retried. */
	assert_int_equal(r.ops->start(r.d, 2, lb_orch_now()), 0);
	e = wait_ev(&r, LB_ORCH_EV_ERROR, 2, 8000);
	assert_non_null(e);
	assert_non_null(strstr(e->msg, "timed out"));
	/* Says nothing usable: an error too, never an instance. */
	assert_int_equal(r.ops->start(r.d, 3, lb_orch_now()), 0);
	e = wait_ev(&r, LB_ORCH_EV_ERROR, 3, 8000);
	assert_non_null(e);
	assert_non_null(strstr(e->msg, "line 1"));
	assert_int_equal(count_ev(&r, LB_ORCH_EV_UP), 1);

	/* Stopping: the hanging one was never reported, so it is gone at
	 * once; the live one is taken down with its driver id. */
	assert_int_equal(r.ops->stop(r.d, 2, "", lb_orch_now()), 1);
	assert_int_equal(r.ops->stop(r.d, 0, "pod-i0", lb_orch_now()), 0);
	assert_non_null(wait_ev(&r, LB_ORCH_EV_STOPPED, 0, 8000));
	assert_int_equal(calls("down tcp:10.0.0.1:80 pod-i0"), 1);
	assert_int_equal(r.ops->stop(r.d, 3, "", lb_orch_now()), 1);
	assert_int_equal(r.ops->busy(r.d), 0);
	r.ops->destroy(r.d, 1000000000ull);
}

static void
test_process_driver(void **state)
{
	struct lb_as_conf c;
	struct lb_cmd_out out;
	struct run r = {0};
	const struct lb_orch_ev *e;
	char err[128], path[300];

	(void)state;
	lb_as_conf_default(&c);
	lb_cmd_out_init(&out);
	snprintf(c.command, sizeof(c.command), "sleep 30");
	snprintf(c.target, sizeof(c.target), "127.0.0.1:80-70");
	assert_true(lb_orch_check(&c, &out) < 0); /* empty range */
	lb_cmd_out_reset(&out);
	snprintf(c.target, sizeof(c.target), "netns 10.1.1.9-3/24 sw br");
	assert_true(lb_orch_check(&c, &out) < 0);
	/* Instance 0 lives; instance 1 exits with 4 at once. Each writes
	 * its address to a file named after its port. */
	snprintf(c.command, sizeof(c.command),
		 "echo $LB_INST_ADDR:$LB_INST_PORT >%s/p$LB_INST_PORT; "
		 "[ $LB_INST_ID = 1 ] && exit 4; exec sleep 30",
		 dir);
	snprintf(c.target, sizeof(c.target), "127.0.0.1:20000-20001");
	lb_cmd_out_reset(&out);
	assert_int_equal(lb_orch_check(&c, &out), 0);
	lb_cmd_out_free(&out);
	r.ops = lb_orch_find("process");
	r.d = r.ops->create(&c, "tcp:10.0.0.1:80", err, sizeof(err));
	assert_non_null(r.d);
	assert_int_equal(r.ops->start(r.d, 0, lb_orch_now()), 0);
	assert_int_equal(r.ops->start(r.d, 1, lb_orch_now()), 0);
	assert_int_equal(r.ops->start(r.d, 2, lb_orch_now()), -ENOSPC);
	e = wait_ev(&r, LB_ORCH_EV_UP, 0, 8000);
	assert_non_null(e);
	assert_int_equal(e->ip, 0x7f000001);
	assert_int_equal(e->port, 20000);
	e = wait_ev(&r, LB_ORCH_EV_EXITED, 1, 8000);
	assert_non_null(e);
	assert_non_null(strstr(e->msg, "status 4"));
	/* Instance 0 is up once started; its shell may run later. */
	snprintf(path, sizeof(path), "%s/p20000", dir);
	for (unsigned int t = 0; t < 800 && access(path, F_OK) != 0; t++)
		usleep(10000);
	assert_int_equal(access(path, F_OK), 0);
	/* The slot of the dead one is free again. */
	assert_int_equal(r.ops->start(r.d, 3, lb_orch_now()), 0);
	assert_non_null(wait_ev(&r, LB_ORCH_EV_UP, 3, 8000));
	assert_int_equal(r.ops->stop(r.d, 0, "", lb_orch_now()), 0);
	assert_non_null(wait_ev(&r, LB_ORCH_EV_STOPPED, 0, 8000));
	assert_int_equal(r.ops->busy(r.d), 1);
	r.ops->destroy(r.d, 2000000000ull);
}

/* Runs @p script to its end and returns its output (static buffer). */
static const char *
run_out(const char *script, char *const *argv)
{
	static struct lb_orch_job j;

	assert_int_equal(lb_orch_job_start(&j, script, argv, NULL, false,
					   lb_orch_now() + 10000000000ull),
			 0);
	lb_orch_job_wait(&j, 10000000000ull);
	return j.out;
}

/*
 * The kubernetes driver against tests/unit/k8s_api.py, a local HTTP
 * server speaking the scale subresource, EndpointSlice and Pod paths.
 */
static void
test_k8s_driver(void **state)
{
	const char *src = getenv("LB_SRC_DIR");
	char api[300], tokf[100], err[300], port[16], dbg[64];
	char *argv[] = {api, "default", "web", "web", "s3cret", NULL};
	char *dargv[] = {dbg, NULL};
	struct lb_orch_job srv;
	struct lb_as_conf c;
	struct lb_cmd_out out;
	struct run r = {0};
	const struct lb_orch_ev *e;
	const char *txt;
	FILE *f;

	(void)state;
	if (src == NULL)
		skip();
	snprintf(api, sizeof(api), "%s/tests/unit/k8s_api.py", src);
	assert_int_equal(lb_orch_job_start(&srv,
					   "exec /usr/bin/python3 \"$0\" "
					   "\"$@\"",
					   argv, NULL, false, 0),
			 0);
	for (int i = 0; i < 500 && strchr(srv.out, '\n') == NULL; i++) {
		lb_orch_job_poll(&srv, lb_orch_now(), NULL);
		usleep(10000);
	}
	assert_non_null(strchr(srv.out, '\n'));
	snprintf(port, sizeof(port), "%.*s", (int)strcspn(srv.out, "\n"),
		 srv.out);
	snprintf(dbg, sizeof(dbg), "http://127.0.0.1:%s/debug", port);
	snprintf(tokf, sizeof(tokf), "%s/token", dir);
	f = fopen(tokf, "w");
	assert_non_null(f);
	fputs("s3cret\n", f);
	fclose(f);

	lb_as_conf_default(&c);
	snprintf(c.driver, sizeof(c.driver), "kubernetes");
	lb_cmd_out_init(&out);
	snprintf(c.target, sizeof(c.target), "ftp://x default web");
	assert_true(lb_orch_check(&c, &out) < 0);
	lb_cmd_out_reset(&out);
	snprintf(c.target, sizeof(c.target), "http://x default");
	assert_true(lb_orch_check(&c, &out) < 0);
	snprintf(c.target, sizeof(c.target),
		 "http://127.0.0.1:%s default web token=%s", port, tokf);
	lb_cmd_out_reset(&out);
	assert_int_equal(lb_orch_check(&c, &out), 0);
	lb_cmd_out_free(&out);
	r.ops = lb_orch_find("kubernetes");
	assert_non_null(r.ops);
	r.d = r.ops->create(&c, "tcp:10.0.0.1:80", err, sizeof(err));
	assert_non_null(r.d);

	/* Two starts: replicas 2, then each instance gets a ready pod. */
	assert_int_equal(r.ops->start(r.d, 0, lb_orch_now()), 0);
	assert_int_equal(r.ops->start(r.d, 1, lb_orch_now()), 0);
	e = wait_ev(&r, LB_ORCH_EV_UP, 0, 5000);
	assert_non_null(e);
	assert_string_equal(e->id, "web-0");
	assert_int_equal(e->ip, 0x0a090001);
	assert_int_equal(e->port, 8080);
	e = wait_ev(&r, LB_ORCH_EV_UP, 1, 5000);
	assert_non_null(e);
	assert_string_equal(e->id, "web-1");
	/* Stopping the older one: its pod gets the lowest deletion cost,
	 * so the ReplicaSet takes it and not the newest. */
	assert_int_equal(r.ops->stop(r.d, 0, "web-0", lb_orch_now()), 0);
	e = wait_ev(&r, LB_ORCH_EV_STOPPED, 0, 8000);
	assert_non_null(e);
	txt = run_out("curl -s \"$0\"", dargv);
	assert_non_null(strstr(txt, "\"replicas\": 1"));
	assert_non_null(strstr(txt, "\"web-1\""));
	assert_null(strstr(txt, "\"name\": \"web-0\""));
	assert_non_null(strstr(txt, "pod-deletion-cost"));
	/* A start the driver never got a pod for goes at once. */
	assert_int_equal(r.ops->start(r.d, 2, lb_orch_now()), 0);
	assert_int_equal(r.ops->stop(r.d, 2, "", lb_orch_now()), 1);
	r.ops->destroy(r.d, 0);

	/* A wrong token: errors, reported, retried, never an instance. */
	f = fopen(tokf, "w");
	fputs("wrong\n", f);
	fclose(f);
	r = (struct run){.ops = r.ops};
	r.d = r.ops->create(&c, "tcp:10.0.0.1:80", err, sizeof(err));
	assert_int_equal(r.ops->start(r.d, 5, lb_orch_now()), 0);
	e = wait_ev(&r, LB_ORCH_EV_ERROR, UINT32_MAX, 5000);
	assert_non_null(e);
	assert_non_null(strstr(e->msg, "HTTP 401"));
	assert_int_equal(count_ev(&r, LB_ORCH_EV_UP), 0);
	r.ops->destroy(r.d, 0);
	lb_orch_job_kill(&srv);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_line),
		cmocka_unit_test(test_parse_output),
		cmocka_unit_test(test_exec_driver),
		cmocka_unit_test(test_process_driver),
		cmocka_unit_test(test_k8s_driver),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (dir[sizeof(dir) - 7] != 'X' && system(cmd) != 0)
		rc = 1;
	return rc;
}
