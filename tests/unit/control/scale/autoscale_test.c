/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests of the autoscaler: the `scale` commands (save round trip, bad
 * input changes nothing), SPL and inflight decisions through the guards,
 * the start-up timeout, manual actions, the bounded history, undo, and a
 * flapping load against the cooldown and stabilization bounds, all with
 * injected time and a simulated pool that follows every action at once.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "autoscale.h"
#include "spl.h"

#define S(x) ((uint64_t)(x)*1000000000ull)
#define SVC "tcp 10.0.0.100:80"

struct fx {
	struct lb_conf *conf;
	struct lb_cmd_reg *reg;
	struct lb_as *as;
	struct lb_cmd_out out;
	json_t *data;
};

static int
run(struct fx *f, const char *line)
{
	lb_cmd_out_reset(&f->out);
	return lb_cmd_exec_line(f->reg, line, &f->out);
}

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->conf = lb_conf_create(NULL);
	f->reg = lb_cmd_reg_create();
	f->as = lb_as_create(f->conf);
	assert_non_null(f->as);
	assert_int_equal(lb_conf_register(f->conf, f->reg), 0);
	assert_int_equal(lb_cmd_reg_build(f->reg,
					  &(struct lb_cmd_bind){"as", f->as}, 1,
					  NULL),
			 0);
	lb_as_set_data_slot(f->as, &f->data);
	lb_cmd_out_init(&f->out);
	assert_int_equal(run(f, "service add " SVC " http"), 0);
	assert_int_equal(run(f, "service add tcp 10.0.0.100:81"), 0);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	json_decref(f->data);
	lb_cmd_out_free(&f->out);
	lb_as_free(f->as);
	lb_cmd_reg_free(f->reg);
	lb_conf_free(f->conf);
	free(f);
	return 0;
}

static struct lb_as_svc *
svc(struct fx *f)
{
	struct lb_conf_svc_key k = {.proto = 6, .vip = 0x0a000064,
		.port = 80};

	return lb_as_svc_find(f->as, &k);
}

static char *
saved(struct lb_as *as)
{
	struct lb_cmd_out o;
	char *s;

	lb_cmd_out_init(&o);
	assert_int_equal(lb_as_save(as, &o), 0);
	s = strdup(lb_cmd_out_text(&o));
	lb_cmd_out_free(&o);
	return s;
}

static void
test_save_round_trip(void **state)
{
	struct fx *f = *state;
	struct fx *g;
	char *a, *b;

	assert_int_equal(run(f, "scale set " SVC " policy inflight "
				"queue-length 20 rounds 3 min 2 max 7 "
				"up-cooldown 3s down-window 10s lower 0.1 "
				"command \"lb-instance --port {port}\" "
				"pending-guard off"),
			 0);
	assert_int_equal(run(f, "scale pause " SVC), 0);
	a = saved(f->as);
	assert_non_null(strstr(a, "policy inflight"));
	assert_non_null(strstr(a, "queue-length 20"));
	assert_non_null(strstr(a, "command \"lb-instance --port {port}\""));
	assert_non_null(strstr(a, "scale pause " SVC));
	assert_null(strstr(a, "interval")); /* default left out */
	setup((void **)&g);
	{
		char *line, *save = NULL;
		char *copy = strdup(a);

		for (line = strtok_r(copy, "\n", &save); line != NULL;
		     line = strtok_r(NULL, "\n", &save))
			assert_int_equal(run(g, line), 0);
		free(copy);
	}
	b = saved(g->as);
	assert_string_equal(a, b);
	assert_true(lb_as_svc_paused(svc(g)));
	assert_int_equal(lb_as_svc_conf(svc(g))->guard.min_instances, 2);
	free(a);
	free(b);
	teardown((void **)&g);
}

static void
test_bad_input(void **state)
{
	struct fx *f = *state;
	static const char *const bad[] = {
		"scale set tcp 10.0.0.1:80 min 1",	 /* no such service */
		"scale set tcp 10.0.0.100:81 min 1",	 /* not http */
		"scale set " SVC " min 3 max 2",	 /* min > max */
		"scale set " SVC " policy magic",	 /* unknown policy */
		"scale set " SVC " lower 0.9 upper 0.5", /* lower > upper */
		"scale set " SVC " frob 1",		 /* unknown option */
		"scale set " SVC " min",		 /* no value */
		"scale set " SVC " min 1 min 2",	 /* twice */
		"scale set " SVC " decay fast",		 /* unknown decay */
		"scale set " SVC " lower -1",		 /* negative */
		"scale set " SVC " tolerance 2",	 /* above 1 */
		"scale set " SVC " interval 1ms",	 /* too short */
		"scale pause " SVC,			 /* not autoscaled */
		"scale up " SVC,			 /* not autoscaled */
	};
	uint64_t g0 = lb_as_generation(f->as);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_true(run(f, bad[i]) < 0);
		assert_true(strlen(lb_cmd_out_errmsg(&f->out)) > 0);
	}
	assert_int_equal(lb_as_generation(f->as), g0);
	assert_int_equal(lb_as_nb_svcs(f->as), 0);
	/* The decay functions the error offers come from their registry. */
	assert_true(run(f, "scale set " SVC " decay fast") < 0);
	assert_string_equal(lb_cmd_out_errmsg(&f->out),
			    "unknown decay 'fast'; expected one of age, "
			    "halflife, none, normalized");
	assert_int_equal(run(f, "scale set " SVC " max 3"), 0);
	g0 = lb_as_generation(f->as);
	assert_true(run(f, "scale set " SVC " max 2 min 5") < 0);
	assert_int_equal(lb_as_generation(f->as), g0);
	assert_int_equal(lb_as_svc_conf(svc(f))->guard.max_instances, 3);
	assert_true(run(f, "scale resume " SVC) < 0); /* not paused */
}

/* A pool that carries out every action at once: up adds active
 * instances, down removes the newest, remove-pending drops one. */
static void
apply(struct lb_as_svc *s, const struct lb_as_decision *d, uint64_t now)
{
	for (uint32_t k = 0; k < d->count; k++) {
		if (d->action == LB_SG_UP) {
			struct lb_as_inst *i = lb_as_inst_add(
				s, LB_AS_ORCH, LB_AS_STARTING, now);
			i->ip = lb_conf_ip4(0x0a0c0032 + i->id);
			i->port = 80;
			lb_as_inst_set(s, i, LB_AS_PENDING, now, NULL);
			lb_as_inst_set(s, i, LB_AS_ACTIVE, now, "healthy");
		} else if (d->action == LB_SG_DOWN) {
			struct lb_as_inst *last = NULL;

			for (unsigned int j = 0; j < lb_as_nb_inst(s); j++) {
				struct lb_as_inst *i = lb_as_inst_at(s, j);

				if (i->origin == LB_AS_ORCH &&
				    i->state == LB_AS_ACTIVE &&
				    (last == NULL || i->id > last->id))
					last = i;
			}
			assert_non_null(last);
			lb_as_inst_remove(s, last);
		}
	}
}

/* Every active instance reports @p spl, generated at @p now. */
static int
eval_spl(struct lb_as_svc *s, uint64_t now, double spl,
	 struct lb_as_decision *d)
{
	struct lb_as_spl_in in[LB_AS_INST_MAX];
	struct lb_as_input x = {.now_ns = now, .spl = in, .spl_now_ns = now};

	for (unsigned int j = 0; j < lb_as_nb_inst(s); j++) {
		struct lb_as_inst *i = lb_as_inst_at(s, j);

		if (i->state == LB_AS_ACTIVE)
			in[x.nb_spl++] =
				(struct lb_as_spl_in){i->id, true, spl, now};
	}
	return lb_as_eval(s, &x, d);
}

static void
test_spl_up_down(void **state)
{
	struct fx *f = *state;
	struct lb_as_decision d;
	struct lb_as_svc *s;

	assert_int_equal(run(f, "scale set " SVC " min 1 max 3 up-cooldown 0 "
				"down-cooldown 0 down-window 0 decay none"),
			 0);
	s = svc(f);
	/* No instance: the minimum brings one. */
	assert_int_equal(eval_spl(s, S(1), 0, &d), 0);
	assert_int_equal(d.action, LB_SG_UP);
	assert_int_equal(d.count, 1);
	assert_non_null(strstr(d.reason, "below-min"));
	apply(s, &d, S(1));
	/* The seed's example: 0.917 >= 0.8 increments. */
	assert_int_equal(eval_spl(s, S(2), 0.917, &d), 0);
	assert_int_equal(d.action, LB_SG_UP);
	assert_true(d.load > 0.9 && d.load < 0.92);
	assert_non_null(strstr(d.reason, "total >= upper"));
	apply(s, &d, S(2));
	/* In band: nothing. */
	assert_int_equal(eval_spl(s, S(3), 0.5, &d), 0);
	assert_int_equal(d.action, LB_SG_NONE);
	/* At max: held. */
	assert_int_equal(eval_spl(s, S(4), 1.5, &d), 0);
	apply(s, &d, S(4));
	assert_int_equal(eval_spl(s, S(5), 1.5, &d), 0);
	assert_int_equal(d.action, LB_SG_NONE);
	assert_int_equal(d.running, 3);
	/* Below lower: one fewer per evaluation, never below min. */
	for (int t = 6; t < 12; t++) {
		assert_int_equal(eval_spl(s, S(t), 0.05, &d), 0);
		apply(s, &d, S(t));
	}
	assert_int_equal(d.running, 1);
	assert_int_equal(d.action, LB_SG_NONE);
	assert_int_equal(lb_as_svc_stats(s)->ups, 3);
	assert_int_equal(lb_as_svc_stats(s)->downs, 2);
}

static void
test_inflight_seed(void **state)
{
	struct fx *f = *state;
	struct lb_as_decision d;
	struct lb_as_svc *s;
	struct lb_as_inst *i;
	struct lb_as_input x = {0};

	assert_int_equal(run(f, "scale set " SVC " policy inflight min 0 "
				"max 5 up-cooldown 0 down-cooldown 0 "
				"down-window 0"),
			 0);
	s = svc(f);
	i = lb_as_inst_add(s, LB_AS_STATIC, LB_AS_ACTIVE, 0);
	assert_non_null(i);
	/* WSO2's iteration 1: window filling; 2: 2.5 <= 3, no action;
	 * 3: l = 5.5 > 3 -> up. */
	x.now_ns = S(1);
	x.inflight = 0;
	assert_int_equal(lb_as_eval(s, &x, &d), 0);
	assert_int_equal(d.action, LB_SG_NONE);
	assert_non_null(strstr(d.reason, "window"));
	x.now_ns = S(2);
	x.inflight = 5;
	assert_int_equal(lb_as_eval(s, &x, &d), 0);
	assert_int_equal(d.action, LB_SG_NONE);
	x.now_ns = S(3);
	x.inflight = 6;
	assert_int_equal(lb_as_eval(s, &x, &d), 0);
	assert_int_equal(d.action, LB_SG_UP);
	assert_true(d.load == 5.5);
	/* The new instance starts: the pending guard holds the next. */
	i = lb_as_inst_add(s, LB_AS_ORCH, LB_AS_STARTING, S(3));
	x.now_ns = S(4);
	x.inflight = 12;
	assert_int_equal(lb_as_eval(s, &x, &d), 0);
	assert_int_equal(d.action, LB_SG_NONE);
	assert_non_null(strstr(d.reason, "pending"));
	assert_int_equal(d.pending, 1);
}

static void
test_startup_timeout(void **state)
{
	struct fx *f = *state;
	struct lb_as_decision d;
	struct lb_as_svc *s;

	assert_int_equal(run(f, "scale set " SVC " min 0 startup-timeout 10s "
				"decay none"),
			 0);
	s = svc(f);
	assert_non_null(lb_as_inst_add(s, LB_AS_ORCH, LB_AS_PENDING, S(1)));
	assert_int_equal(eval_spl(s, S(10), 0.5, &d), 0);
	assert_int_not_equal(d.action, LB_SG_REMOVE_PENDING);
	assert_int_equal(eval_spl(s, S(11), 0.5, &d), 0);
	assert_int_equal(d.action, LB_SG_REMOVE_PENDING);
	/* Paused: still removed, and only that is recorded. */
	assert_int_equal(run(f, "scale pause " SVC), 0);
	unsigned int n = lb_as_hist_len(s);

	assert_int_equal(eval_spl(s, S(12), 5, &d), 0);
	assert_int_equal(d.action, LB_SG_REMOVE_PENDING);
	assert_int_equal(lb_as_hist_len(s), n + 1);
	lb_as_inst_set(s, lb_as_inst_at(s, 0), LB_AS_FAILED, S(12), "timeout");
	assert_int_equal(eval_spl(s, S(13), 5, &d), 0);
	assert_int_equal(d.action, LB_SG_NONE);
	assert_int_equal(lb_as_hist_len(s), n + 1);
	assert_int_equal(lb_as_svc_stats(s)->failed, 1);
}

static void
test_manual(void **state)
{
	struct fx *f = *state;
	struct lb_as_decision d;
	struct lb_as_svc *s;

	assert_int_equal(run(f, "scale set " SVC " min 1 max 3"), 0);
	s = svc(f);
	assert_int_equal(lb_as_take_manual(s, S(1), &d), 0);
	assert_int_equal(run(f, "scale up " SVC " 5"), 0);
	assert_int_equal(lb_as_take_manual(s, S(1), &d), 1);
	assert_true(d.manual);
	assert_int_equal(d.action, LB_SG_UP);
	assert_int_equal(d.count, 3); /* bounded by max */
	assert_non_null(strstr(d.reason, "bounded"));
	apply(s, &d, S(1));
	assert_int_equal(lb_as_take_manual(s, S(2), &d), 0); /* taken */
	assert_int_equal(run(f, "scale down " SVC " 9"), 0);
	assert_int_equal(lb_as_take_manual(s, S(3), &d), 1);
	assert_int_equal(d.action, LB_SG_DOWN);
	assert_int_equal(d.count, 2); /* bounded by min */
	assert_int_equal(lb_as_hist_len(s), 2);
	assert_int_equal(run(f, "scale history " SVC), 0);
	assert_non_null(strstr(lb_cmd_out_text(&f->out), "manual up 5"));
	assert_int_equal(json_array_size(json_object_get(f->data, "decisions")),
			 2);
	assert_true(run(f, "scale down " SVC " 0") < 0);
}

/* What the cluster's runtime needs of the autoscaler: the option, the
 * leader's instances under the leader's ids, manual actions dropped on
 * a follower, the role in `scale show` and /metrics. */
static void
test_cluster(void **state)
{
	struct fx *f = *state;
	struct lb_as_cluster *cl;
	struct lb_as_inst *st, *i;
	struct lb_cmd_out o;
	struct lb_as_svc *s;
	char *a;

	assert_int_equal(run(f, "scale set " SVC " cluster on"), 0);
	s = svc(f);
	assert_true(lb_as_svc_conf(s)->cluster);
	a = saved(f->as);
	assert_non_null(strstr(a, " cluster on"));
	free(a);
	assert_true(run(f, "scale set " SVC " cluster maybe") < 0);
	assert_true(lb_as_svc_conf(s)->cluster);

	/* A static backend took id 0 here; the leader's instance 0 takes
	 * it over, the static one is renumbered past it. */
	st = lb_as_inst_add(s, LB_AS_STATIC, LB_AS_ACTIVE, S(1));
	assert_int_equal(st->id, 0);
	i = lb_as_inst_import(s, 0, LB_AS_ACTIVE, S(1));
	assert_non_null(i);
	assert_int_equal(i->origin, LB_AS_ORCH);
	assert_int_equal(lb_as_inst_find(s, 0), i);
	assert_int_equal(st->id, 1);
	assert_int_equal(lb_as_next_id(s), 2);
	assert_null(lb_as_inst_import(s, 0, LB_AS_ACTIVE, S(1)));
	i = lb_as_inst_import(s, 9, LB_AS_PENDING, S(1));
	assert_non_null(i);
	assert_int_equal(lb_as_next_id(s), 10);
	lb_as_raise_next_id(s, 7);
	assert_int_equal(lb_as_next_id(s), 10);
	lb_as_raise_next_id(s, 12);
	assert_int_equal(lb_as_next_id(s), 12);
	assert_int_equal(lb_as_svc_stats(s)->started, 0);
	assert_int_equal(lb_as_svc_stats(s)->adopted, 0);

	assert_int_equal(run(f, "scale up " SVC " 2"), 0);
	assert_int_equal(lb_as_drop_manual(s), 2);
	assert_int_equal(lb_as_drop_manual(s), 0);

	/* Not shown until the runtime says the lease is in use. */
	assert_int_equal(run(f, "scale show " SVC), 0);
	assert_non_null(strstr(lb_cmd_out_text(&f->out),
			       "cluster: on, but lb-control has no --redis"));
	assert_null(json_object_get(
		json_array_get(json_object_get(f->data, "services"), 0),
		"cluster"));
	cl = lb_as_svc_cluster(s);
	*cl = (struct lb_as_cluster){.on = true, .leader = true, .term = 3,
				     .redis_up = true, .seq = 5, .hosts = 2};
	snprintf(cl->leader_id, sizeof(cl->leader_id), "lb1/42-abc");
	assert_int_equal(run(f, "scale show " SVC), 0);
	assert_non_null(strstr(lb_cmd_out_text(&f->out),
			       "cluster: leader, term 3, leader lb1/42-abc, "
			       "list 5, 2 host(s), redis up"));
	assert_string_equal(
		json_string_value(json_object_get(
			json_object_get(json_array_get(json_object_get(
							       f->data,
							       "services"),
						       0),
					"cluster"),
			"role")),
		"leader");
	lb_cmd_out_init(&o);
	assert_int_equal(lb_as_metrics(f->as, &o), 0);
	assert_non_null(strstr(lb_cmd_out_text(&o),
			       "lb_scale_leader{service=\"tcp "
			       "10.0.0.100:80\",pool=\"default\"} 1\n"));
	assert_non_null(strstr(lb_cmd_out_text(&o),
			       "lb_scale_term{service=\"tcp "
			       "10.0.0.100:80\",pool=\"default\"} 3\n"));
	lb_cmd_out_free(&o);
}

static void
test_history_bounded(void **state)
{
	struct fx *f = *state;
	struct lb_as_decision d;
	struct lb_as_svc *s;

	assert_int_equal(run(f, "scale set " SVC " min 0 decay none"), 0);
	s = svc(f);
	for (unsigned int t = 1; t <= LB_AS_HIST + 10; t++)
		assert_int_equal(eval_spl(s, S(t), 0.5, &d), 0);
	assert_int_equal(lb_as_hist_len(s), LB_AS_HIST);
	assert_true(lb_as_hist_at(s, 0)->now_ns == S(11));
	assert_true(lb_as_hist_at(s, LB_AS_HIST - 1)->now_ns ==
		    S(LB_AS_HIST + 10));
	assert_null(lb_as_hist_at(s, LB_AS_HIST));
	assert_int_equal(run(f, "scale history " SVC " 5"), 0);
	assert_int_equal(json_array_size(json_object_get(f->data, "decisions")),
			 5);
}

static void
test_undo(void **state)
{
	struct fx *f = *state;
	void *snap;

	assert_int_equal(run(f, "scale set " SVC " max 4"), 0);
	snap = lb_as_snapshot(f->as);
	assert_int_equal(run(f, "scale set " SVC " max 9 policy inflight"), 0);
	assert_int_equal(run(f, "scale del " SVC), 0);
	assert_null(svc(f));
	lb_as_restore(f->as, snap);
	free(snap);
	assert_non_null(svc(f));
	assert_int_equal(lb_as_svc_conf(svc(f))->guard.max_instances, 4);
	assert_int_equal(lb_as_svc_conf(svc(f))->policy, LB_AS_POLICY_SPL);
}

/*
 * A load that flips between far above and far below the thresholds every
 * evaluation. Without guards every evaluation acts; with a cooldown C and
 * a scale-down window W over T seconds, ups are at most T/C + 1 and every
 * down needs W seconds of low recommendations, which a flip every second
 * never gives.
 */
static unsigned int
flap(struct fx *f, const char *settings, unsigned int secs, uint64_t *ups,
     uint64_t *downs)
{
	char line[256];
	struct lb_as_decision d;
	struct lb_as_svc *s;
	unsigned int actions = 0;

	snprintf(line, sizeof(line), "scale set " SVC " %s", settings);
	assert_int_equal(run(f, line), 0);
	s = svc(f);
	for (unsigned int t = 1; t <= secs; t++) {
		assert_int_equal(eval_spl(s, S(t), t % 2 ? 2.0 : 0.0, &d), 0);
		actions += d.action != LB_SG_NONE;
		apply(s, &d, S(t));
	}
	*ups = lb_as_svc_stats(s)->ups;
	*downs = lb_as_svc_stats(s)->downs;
	assert_int_equal(run(f, "scale del " SVC), 0);
	lb_as_svc_reap(f->as, lb_as_svc_at(f->as, 0));
	return actions;
}

static void
test_flapping(void **state)
{
	struct fx *f = *state;
	uint64_t ups, downs;
	unsigned int n;

	n = flap(f,
		 "min 1 max 10 up-cooldown 0 down-cooldown 0 "
		 "down-window 0 pending-guard off decay none",
		 120, &ups, &downs);
	assert_true(n >= 100); /* the policy alone flaps */
	n = flap(f,
		 "min 1 max 10 up-cooldown 10s down-cooldown 10s "
		 "down-window 30s decay none",
		 120, &ups, &downs);
	assert_true(n > 0);
	assert_true(ups <= 120 / 10 + 1);
	assert_int_equal(downs, 0);
	/* A load that stays low for longer than the window: downs happen,
	 * none before the window has passed. */
	{
		struct lb_as_decision d;
		struct lb_as_svc *s;

		assert_int_equal(run(f, "scale set " SVC " min 1 max 10 "
					"up-cooldown 5s down-cooldown 5s "
					"down-window 20s decay none"),
				 0);
		s = svc(f);
		for (unsigned int t = 1; t <= 30; t++) {
			assert_int_equal(eval_spl(s, S(t), 2.0, &d), 0);
			apply(s, &d, S(t));
		}
		ups = lb_as_svc_stats(s)->ups;
		assert_true(ups >= 3 && ups <= 30 / 5 + 1);
		/* Recommendations are relative (current - 1), so each
		 * down waits for the window to forget the previous
		 * count's: one down per window at most. */
		for (unsigned int t = 31; t <= 300; t++) {
			assert_int_equal(eval_spl(s, S(t), 0.0, &d), 0);
			apply(s, &d, S(t));
			if (t < 50)
				assert_int_not_equal(d.action, LB_SG_DOWN);
		}
		downs = lb_as_svc_stats(s)->downs;
		assert_true(downs >= 1 && downs <= (300 - 31) / 20 + 1);
		assert_int_equal(d.running, 1); /* back at the minimum */
	}
}

static int
two_drivers(char *buf, size_t len, const char *sep)
{
	return snprintf(buf, len, "one%stwo", sep);
}

/* `scale set`'s help names what the registries hold, and `save` says it
 * ends with the autoscaler's settings. */
static void
test_help_from_registries(void **state)
{
	struct fx *f = *state;
	struct lb_cmd_reg *r = lb_cmd_reg_create();
	char *set[] = {"scale", "set", NULL}, *save[] = {"save", NULL};
	char decay[128], want[160];
	const struct lb_cmd_def *d;

	assert_non_null(r);
	lb_spl_decay_names(decay, sizeof(decay), "|");
	snprintf(want, sizeof(want), "`decay %s`", decay);
	/* No driver names given: the help says NAME. */
	d = lb_cmd_lookup(f->reg, 2, set, NULL);
	assert_non_null(d);
	assert_non_null(strstr(d->long_help, want));
	assert_non_null(strstr(d->long_help, "`driver NAME`"));
	assert_non_null(strstr(lb_cmd_lookup(f->reg, 1, save, NULL)->long_help,
			       "Then the autoscaler's settings"));
	lb_as_set_driver_names(f->as, two_drivers);
	assert_int_equal(lb_conf_register(f->conf, r), 0);
	assert_int_equal(lb_cmd_reg_build(r, &(struct lb_cmd_bind){"as", f->as},
					  1, NULL),
			 0);
	d = lb_cmd_lookup(r, 2, set, NULL);
	assert_non_null(strstr(d->long_help, "`driver one|two`"));
	assert_non_null(strstr(d->long_help, want));
	lb_cmd_reg_free(r);
}

static const struct lb_conf_svc_key key80 = {
	.proto = 6, .vip = 0x0a000064, .port = 80};

/* Service SVC with pools api and static, a backend in each and one in
 * its own pool. */
static void
pools_setup(struct fx *f)
{
	assert_int_equal(run(f, "pool add " SVC " api"), 0);
	assert_int_equal(run(f, "pool add " SVC " static"), 0);
	assert_int_equal(run(f, "backend add " SVC " 10.0.1.1:80"), 0);
	assert_int_equal(run(f, "backend add " SVC " 10.0.2.1:80 pool api"), 0);
	assert_int_equal(run(f, "backend add " SVC " 10.0.2.2:80 pool api"), 0);
	assert_int_equal(run(f, "backend add " SVC " 10.0.3.1:80 pool static"),
			 0);
}

/* `scale ... pool NAME`: a policy of its own per pool, beside the
 * service's own; each command names the pool. */
static void
test_pool_commands(void **state)
{
	struct fx *f = *state;
	struct lb_as_svc *own, *api;
	json_t *svcs;
	char *a;
	struct fx *g;

	pools_setup(f);
	assert_int_equal(run(f, "scale set " SVC " max 3"), 0);
	assert_int_equal(run(f, "scale set " SVC " pool api policy inflight "
				"queue-length 7 max 6"),
			 0);
	own = lb_as_pool_find(f->as, &key80, NULL);
	api = lb_as_pool_find(f->as, &key80, "api");
	assert_non_null(own);
	assert_non_null(api);
	assert_ptr_not_equal(own, api);
	assert_ptr_equal(lb_as_pool_find(f->as, &key80, "default"), own);
	assert_ptr_equal(svc(f), own);
	assert_null(lb_as_pool_find(f->as, &key80, "static"));
	assert_int_equal(lb_as_svc_conf(own)->guard.max_instances, 3);
	assert_int_equal(lb_as_svc_conf(own)->policy, LB_AS_POLICY_SPL);
	assert_int_equal(lb_as_svc_conf(api)->guard.max_instances, 6);
	assert_int_equal(lb_as_svc_conf(api)->queue_length, 7);
	assert_string_equal(lb_as_svc_pool(api), "api");
	assert_string_equal(lb_as_svc_pool(own), "");
	/* A change to one pool's settings leaves the other's. */
	assert_int_equal(run(f, "scale set " SVC " pool api max 5"), 0);
	assert_int_equal(lb_as_svc_conf(api)->guard.max_instances, 5);
	assert_int_equal(lb_as_svc_conf(api)->queue_length, 7);
	assert_int_equal(lb_as_svc_conf(own)->guard.max_instances, 3);

	/* show: one pool, or all with their pools in JSON. */
	assert_int_equal(run(f, "scale show " SVC " pool api"), 0);
	assert_non_null(strstr(lb_cmd_out_text(&f->out),
			       SVC " pool api: policy inflight"));
	assert_null(strstr(lb_cmd_out_text(&f->out), SVC ": policy"));
	assert_int_equal(run(f, "scale show"), 0);
	svcs = json_object_get(f->data, "services");
	assert_int_equal(json_array_size(svcs), 2);
	for (size_t i = 0; i < 2; i++) {
		json_t *x = json_array_get(svcs, i);
		const char *p = json_string_value(json_object_get(x, "pool"));

		assert_non_null(p);
		assert_true(strcmp(p, "api") == 0 || strcmp(p, "default") == 0);
		assert_string_equal(
			json_string_value(json_object_get(
				json_object_get(x, "config"), "policy")),
			strcmp(p, "api") == 0 ? "inflight" : "spl");
	}

	/* pause, manual actions, history: the named pool alone. */
	assert_int_equal(run(f, "scale pause " SVC " pool api"), 0);
	assert_true(lb_as_svc_paused(api));
	assert_false(lb_as_svc_paused(own));
	assert_int_equal(run(f, "scale up " SVC " pool api 2"), 0);
	assert_int_equal(lb_as_drop_manual(api), 2);
	assert_int_equal(lb_as_drop_manual(own), 0);
	assert_int_equal(run(f, "scale history " SVC " pool api 5"), 0);

	/* save: both, each with its pool, and back the same. */
	a = saved(f->as);
	assert_non_null(strstr(a, "scale set " SVC " pool api policy "
				  "inflight"));
	assert_non_null(strstr(a, "scale pause " SVC " pool api\n"));
	assert_non_null(strstr(a, "scale set " SVC " max 3\n"));
	setup((void **)&g);
	pools_setup(g);
	for (char *line = strtok(a, "\n"); line != NULL;
	     line = strtok(NULL, "\n"))
		assert_int_equal(run(g, line), 0);
	assert_int_equal(lb_as_svc_conf(lb_as_pool_find(g->as, &key80, "api"))
				 ->queue_length,
			 7);
	assert_true(lb_as_svc_paused(lb_as_pool_find(g->as, &key80, "api")));
	teardown((void **)&g);
	free(a);

	/* del: the pool's policy goes, the service's stays. */
	assert_int_equal(run(f, "scale del " SVC " pool api"), 0);
	assert_null(lb_as_pool_find(f->as, &key80, "api"));
	assert_ptr_equal(lb_as_pool_find(f->as, &key80, NULL), own);
	assert_true(lb_as_svc_deleted(api));
	assert_true(run(f, "scale del " SVC " pool api") < 0);
	assert_non_null(strstr(lb_cmd_out_errmsg(&f->out),
			       "pool api is not autoscaled"));
}

/* An unknown pool, or `pool` without a name: a clear error and no
 * change. */
static void
test_pool_bad(void **state)
{
	struct fx *f = *state;
	uint64_t g0;
	char *a, *b;

	pools_setup(f);
	assert_int_equal(run(f, "scale set " SVC " pool api max 4"), 0);
	g0 = lb_as_generation(f->as);
	a = saved(f->as);
	assert_true(run(f, "scale set " SVC " pool nosuch max 2") < 0);
	assert_string_equal(lb_cmd_out_errmsg(&f->out),
			    "no pool nosuch in " SVC " (pool add first)");
	assert_true(run(f, "scale set " SVC " pool") < 0);
	assert_non_null(
		strstr(lb_cmd_out_errmsg(&f->out), "missing pool name"));
	assert_true(run(f, "scale set tcp 10.0.0.100:81 pool api max 2") < 0);
	assert_true(run(f, "scale del " SVC " pool nosuch") < 0);
	assert_string_equal(lb_cmd_out_errmsg(&f->out),
			    "no pool nosuch in " SVC);
	assert_true(run(f, "scale pause " SVC " pool nosuch") < 0);
	assert_true(run(f, "scale up " SVC " pool nosuch 1") < 0);
	assert_true(run(f, "scale show " SVC " pool nosuch") < 0);
	assert_true(run(f, "scale history " SVC " pool nosuch") < 0);
	/* A pool that exists but has no policy. */
	assert_true(run(f, "scale up " SVC " pool static") < 0);
	assert_string_equal(lb_cmd_out_errmsg(&f->out),
			    SVC " pool static is not autoscaled (see 'scale "
				"set')");
	assert_true(run(f, "scale del " SVC " pool api extra") < 0);
	assert_true(run(f, "scale up " SVC " pool api 1 2") < 0);
	assert_int_equal(lb_as_generation(f->as), g0);
	b = saved(f->as);
	assert_string_equal(a, b);
	assert_int_equal(
		lb_as_drop_manual(lb_as_pool_find(f->as, &key80, "api")), 0);
	free(a);
	free(b);
}

/* The instance repository of a unit holds its pool's backends only. */
static void
test_pool_repository(void **state)
{
	struct fx *f = *state;
	const struct lb_conf_svc *sv;
	struct lb_as_svc *own, *api;
	struct lb_cmd_out o;
	uint32_t n[LB_AS_STATE_COUNT];
	struct lb_conf_ip ip;

	pools_setup(f);
	assert_int_equal(run(f, "scale set " SVC), 0);
	assert_int_equal(run(f, "scale set " SVC " pool api"), 0);
	own = lb_as_pool_find(f->as, &key80, NULL);
	api = lb_as_pool_find(f->as, &key80, "api");
	sv = lb_conf_svc_find(f->conf, &key80);
	lb_as_inst_sync(own, sv, S(1));
	lb_as_inst_sync(api, sv, S(1));
	/* The service's own pool: 10.0.1.1 only, not the named pools'. */
	assert_int_equal(lb_as_nb_inst(own), 1);
	ip = lb_conf_ip4(0x0a000101);
	assert_non_null(lb_as_inst_by_addr(own, &ip, 80));
	assert_int_equal(lb_as_nb_inst(api), 2);
	ip = lb_conf_ip4(0x0a000201);
	assert_non_null(lb_as_inst_by_addr(api, &ip, 80));
	assert_null(lb_as_inst_by_addr(own, &ip, 80));
	ip = lb_conf_ip4(0x0a000301);
	assert_null(lb_as_inst_by_addr(api, &ip, 80));
	lb_as_inst_count(api, n);
	assert_int_equal(n[LB_AS_ACTIVE], 2);
	/* A backend drained or deleted in the pool follows. */
	assert_int_equal(run(f, "backend drain " SVC " 10.0.2.2:80"), 0);
	assert_int_equal(run(f, "backend del " SVC " 10.0.2.1:80"), 0);
	lb_as_inst_sync(api, sv, S(2));
	lb_as_inst_sync(own, sv, S(2));
	assert_int_equal(lb_as_nb_inst(api), 1);
	assert_int_equal(lb_as_inst_at(api, 0)->state, LB_AS_DRAINING);
	assert_int_equal(lb_as_nb_inst(own), 1);
	/* /metrics: the pool label, "default" for the service's own. */
	lb_cmd_out_init(&o);
	assert_int_equal(lb_as_metrics(f->as, &o), 0);
	assert_non_null(strstr(lb_cmd_out_text(&o),
			       "lb_scale_instances{service=\"" SVC "\","
			       "pool=\"api\",state=\"draining\"} 1\n"));
	assert_non_null(strstr(lb_cmd_out_text(&o),
			       "lb_scale_instances{service=\"" SVC "\","
			       "pool=\"default\",state=\"active\"} 1\n"));
	assert_non_null(strstr(lb_cmd_out_text(&o),
			       "lb_scale_evaluations_total{service=\"" SVC
			       "\",pool=\"api\"} 0\n"));
	lb_cmd_out_free(&o);
	/* A pool gone: its unit matches nothing any more. */
	assert_int_equal(run(f, "backend del " SVC " 10.0.2.2:80"), 0);
	assert_int_equal(run(f, "pool del " SVC " api"), 0);
	assert_int_equal(lb_as_svc_pool_index(api, sv), -1);
	lb_as_inst_sync(api, sv, S(3));
	assert_int_equal(lb_as_nb_inst(api), 0);
	assert_int_equal(lb_as_svc_pool_index(own, sv), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_save_round_trip, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_help_from_registries,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_input, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_spl_up_down, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_inflight_seed, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_startup_timeout, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_manual, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cluster, setup, teardown),
		cmocka_unit_test_setup_teardown(test_history_bounded, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_undo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flapping, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pool_commands, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_pool_bad, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_pool_repository, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
