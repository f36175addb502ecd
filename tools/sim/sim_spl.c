/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SPL autoscaling on a simulated service: instances rate their own load as
 * execution time / benchmark time, the policy decays the ratings by age,
 * averages them and scales by one instance per decision
 * (WO 2021/086339, FIG. 3 and FIG. 7).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lb/rng.h"
#include "spl.h"

#define MS 1000000ull
#define T0 (1000000ull * MS)
#define NB_TICKS 18
#define TICK_NS (10 * MS)
#define CAP 8u
/* Per-instance capacity (req/ms), service time and SLA benchmark (ms). */
#define MU 1.25
#define SERVICE_MS 0.8
#define BENCH_MS 2.0
/* A new instance takes this long to boot before it serves and reports. */
#define BOOT_NS (20 * MS)

struct sim_inst {
	bool up;
	uint64_t ready_ns;
	double speed;
};

static void
example(FILE *out, const char *what, const char *result, const char *ref)
{
	fprintf(out, "  %-40s = %-24s %s\n", what, result, ref);
}

static int
worked_examples(FILE *out)
{
	static const double t5_spl[] = {0.95, 1.4, 1.2};
	static const uint64_t t5_age[] = {1 * MS, 1272727, 1714286};
	const struct lb_spl_decay_ops *age = lb_spl_decay_find("age");
	struct lb_spl_decision d;
	struct lb_spl_conf c;
	struct lb_spl_svc *s;
	char buf[32];
	double r, v;
	int rc;

	if (age == NULL || lb_spl_ratio(120, 150, &r) != 0)
		return -1;
	lb_spl_conf_init(&c, 4);
	v = age->decay(&c.decay_params, 0.8, 2 * MS);
	fprintf(out, "Seed's worked examples (thresholds 0.2 / 0.8, decay "
		     "\"age\"):\n");
	snprintf(buf, sizeof(buf), "%.3f", r);
	example(out, "SPL = 120 ms exec / 150 ms benchmark", buf, "([0063])");
	snprintf(buf, sizeof(buf), "%.3f", v);
	example(out, "0.8 generated 2 ms ago: 0.8 / 2", buf, "(Table 4)");

	s = lb_spl_svc_create(&c);
	if (s == NULL)
		return -1;
	rc = 0;
	for (unsigned int i = 0; i < 3 && rc == 0; i++) {
		rc = lb_spl_inst_add(s, i, T0 - 10 * MS);
		if (rc == 0)
			rc = lb_spl_report(s, i, t5_spl[i], T0 - t5_age[i], T0);
	}
	if (rc == 0)
		rc = lb_spl_decide(s, T0, &d);
	if (rc == 0) {
		snprintf(buf, sizeof(buf), "%.3f, %.3f", d.inst[1].decayed,
			 d.inst[2].decayed);
		example(out, "1.4 aged 1.27 ms, 1.2 aged 1.71 ms", buf,
			"(Table 5)");
		snprintf(buf, sizeof(buf), "%.3f >= 0.8: %s", d.total,
			 lb_spl_action_str(d.action));
		example(out, "total = avg(0.95, 1.1, 0.7)", buf,
			"([0072]-[0074])");
		if (fabs(d.total - 0.917) > 5e-4 ||
		    d.action != LB_SPL_INCREMENT)
			rc = -1;
	}
	if (rc == 0)
		rc = lb_spl_inst_add(s, 3, T0);
	if (rc == 0)
		rc = lb_spl_decide(s, T0, &d);
	if (rc == 0) {
		snprintf(buf, sizeof(buf), "%.3f: %s", d.total,
			 lb_spl_action_str(d.action));
		example(out, "4th instance enters at 0: avg(.., 0)", buf,
			"(Table 6)");
		fprintf(out, "\n");
		if (d.action != LB_SPL_NOOP)
			rc = -1;
	}
	lb_spl_svc_free(s);
	if (rc != 0 || fabs(r - 0.8) > 1e-12 || fabs(v - 0.4) > 1e-12)
		return -1;
	return 0;
}

#define CELLS_W 75

static const char *
err_name(int err)
{
	switch (err) {
	case -EINVAL:
		return "-EINVAL";
	case -ERANGE:
		return "-ERANGE";
	case -ENOENT:
		return "-ENOENT";
	case -ESTALE:
		return "-ESTALE";
	}
	return "?";
}

static void
print_row(FILE *out, int tick, double load, const struct lb_spl_decision *d)
{
	char cells[CAP * 16 + 1] = "";
	size_t len = 0;

	for (unsigned int i = 0; i < d->nb_inst && len < sizeof(cells); i++) {
		const struct lb_spl_sample *x = &d->inst[i];
		char v[8] = " new";

		if (!x->fresh)
			snprintf(v, sizeof(v), "%4.2f", x->spl);
		len += (size_t)snprintf(cells + len, sizeof(cells) - len,
					" %4s %4.1f>%4.2f", v,
					(double)x->age_ns / MS, x->decayed);
	}
	fprintf(out, "%4d %4.1f %-*s %5.3f %s\n", tick, load, CELLS_W, cells,
		d->total, lb_spl_action_str(d->action));
}

/*
 * Every ready instance reports the SPL of the load it takes at tick
 * @p t; the first two rejected reports are noted in @p notes.
 */
static int
report_tick(struct lb_spl_svc *s, struct sim_inst *inst, struct lb_rng *rng,
	    int t, double load, uint64_t now, char notes[][112],
	    unsigned int *nb_notes)
{
	unsigned int ready = 0;
	int err;

	for (unsigned int i = 0; i < CAP; i++)
		ready += inst[i].up && inst[i].ready_ns <= now;
	for (unsigned int i = 0; i < CAP && ready > 0; i++) {
		double r = load / ready; /* req/ms per instance */
		double rho, exec, spl, gap;
		uint64_t gen;

		if (!inst[i].up || inst[i].ready_ns > now)
			continue;
		rho = fmin(r / (MU * inst[i].speed), 0.9);
		exec = SERVICE_MS / (1.0 - rho);
		/* The last response left somewhere in the last gap. */
		gap = 1.0 / r;
		gen = now - (uint64_t)(gap * MS * (0.1 + 0.9 * lb_rng_unit(rng)));
		if (lb_spl_ratio(exec, BENCH_MS, &spl) != 0)
			return -1;
		/* Two broken senders, to show they are dropped. */
		if (t == 5 && i == 1) {
			spl = NAN;
		} else if (t == 12 && i == 0) {
			gen = now + 5 * MS;
		}
		err = lb_spl_report(s, i, spl, gen, now);
		if (err != 0 && *nb_notes < 2)
			snprintf(notes[(*nb_notes)++], sizeof(notes[0]),
				 "tick %2d: i%u sent SPL %.2f generated "
				 "%+.1f ms from now: rejected (%s), "
				 "its last value stays",
				 t, i, spl, ((double)gen - (double)now) / MS,
				 err_name(err));
	}
	return 0;
}

/* Boots a new instance or takes the newest away, as @p action says. */
static int
apply_action(struct lb_spl_svc *s, struct sim_inst *inst,
	     enum lb_spl_action action, uint64_t now)
{
	if (action == LB_SPL_INCREMENT) {
		unsigned int i = 0;

		while (i < CAP && inst[i].up)
			i++;
		if (i < CAP) {
			inst[i].up = true;
			inst[i].speed = 1.0;
			inst[i].ready_ns = now + BOOT_NS;
			return lb_spl_inst_add(s, i, now);
		}
	} else if (action == LB_SPL_DECREMENT && lb_spl_inst_count(s) > 1) {
		unsigned int i = CAP;

		while (i-- > 0 && !inst[i].up)
			;
		inst[i].up = false;
		return lb_spl_inst_remove(s, i);
	}
	return 0;
}

int
lb_sim_spl(FILE *out)
{
	/* Offered load of the whole service in requests per ms. */
	static const double load[NB_TICKS] = {
		1.0, 1.4, 2.0, 2.4, 2.6, 2.6, 2.6, 2.4, 2.2,
		1.8, 1.4, 1.0, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8,
	};
	struct sim_inst inst[CAP] = {{0}};
	struct lb_spl_decision d;
	struct lb_spl_stats st;
	struct lb_spl_conf c;
	struct lb_spl_svc *s;
	struct lb_xoshiro xs;
	struct lb_rng rng;
	char notes[2][112];
	unsigned int nb_notes = 0;
	int rc = 0;

	if (worked_examples(out) != 0) {
		fprintf(out, "worked examples do not match the seed\n");
		return 1;
	}
	lb_xoshiro_seed(&xs, 2019);
	rng = lb_rng_xoshiro(&xs);
	lb_spl_conf_init(&c, CAP);
	s = lb_spl_svc_create(&c);
	if (s == NULL)
		return 1;
	for (unsigned int i = 0; i < 3; i++) {
		inst[i].up = true;
		inst[i].speed = 1.0 - 0.1 * i;
		if (lb_spl_inst_add(s, i, T0) != 0)
			rc = -1;
	}

	fprintf(out,
		"Service of 3 instances (i0, i1, i2 run at 100%%, 90%%, 80%% "
		"speed), one decision\n"
		"every 10 ms; decay \"age\", lower 0.2, upper 0.8. load = "
		"offered req/ms, shared\n"
		"by the ready instances (%.2f req/ms capacity each). SPL = "
		"exec / %.1f ms benchmark,\n"
		"exec = %.1f ms / (1 - utilisation). increment: a new "
		"instance enters at SPL 0\n"
		"and boots %llu ms; decrement: the newest leaves. No guards "
		"(cooldown, min/max are\n"
		"scale_guard's); the sim just never removes the last "
		"instance.\n\n",
		MU, BENCH_MS, SERVICE_MS, (unsigned long long)(BOOT_NS / MS));
	fprintf(out, "tick load %-*s %5s %s\n", CELLS_W,
		"instances: SPL age_ms>decayed (new: entered at SPL 0)",
		"total", "action");

	for (int t = 0; t < NB_TICKS && rc == 0; t++) {
		uint64_t now = T0 + (uint64_t)(t + 1) * TICK_NS;

		rc = report_tick(s, inst, &rng, t, load[t], now, notes,
				 &nb_notes);
		if (rc != 0 || lb_spl_decide(s, now, &d) != 0) {
			rc = -1;
			break;
		}
		print_row(out, t, load[t], &d);
		rc = apply_action(s, inst, d.action, now);
	}
	fprintf(out, "\n");
	for (unsigned int k = 0; k < nb_notes; k++)
		fprintf(out, "%s\n", notes[k]);
	fprintf(out, "When requests thin out, reports get older and the "
		     "age decay shrinks them\n"
		     "(ticks 10-13): the total falls below 0.2 although "
		     "every SPL is near 0.5.\n");
	if (rc == 0)
		rc = lb_spl_stats_get(s, &st);
	if (rc == 0)
		fprintf(out,
			"\ndecisions %llu: %llu increment, %llu decrement,"
			" %llu noop; reports %llu, accepted %llu,\n"
			"rejected %llu bad value + %llu future timestamp;"
			" %u instances at the end\n",
			(unsigned long long)st.decisions,
			(unsigned long long)st.increments,
			(unsigned long long)st.decrements,
			(unsigned long long)st.noops,
			(unsigned long long)st.reports,
			(unsigned long long)st.accepted,
			(unsigned long long)st.bad_value,
			(unsigned long long)st.bad_time, lb_spl_inst_count(s));
	lb_spl_svc_free(s);
	return rc == 0 ? 0 : 1;
}
