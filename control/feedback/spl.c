/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Self-perceived load autoscaling policy (WO 2021/086339). Paragraph and
 * claim numbers below refer to that document.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spl.h"

struct spl_inst {
	bool present;
	bool fresh;
	double spl;
	uint64_t gen_ns;
};

struct lb_spl_svc {
	unsigned int capacity;
	unsigned int nb_inst;
	double lower;
	double upper;
	double clamp;
	double spl_max;
	const struct lb_spl_decay_ops *decay;
	struct lb_spl_decay_params decay_params;
	struct lb_spl_stats st;
	struct spl_inst inst[];
};

/* The decay functions register themselves from their own files
 * (spl_decay_*.c, LB_SPL_DECAY_REGISTER). */
static struct lb_init_entry decay_entries[LB_SPL_DECAY_SLOTS];
static struct lb_init_reg decay_registry = {decay_entries, 0,
					    LB_SPL_DECAY_SLOTS};

int
lb_spl_decay_register(const struct lb_spl_decay_ops *ops)
{
	if (ops == NULL || ops->name == NULL || ops->name[0] == '\0' ||
	    ops->decay == NULL)
		return -EINVAL;
	return lb_init_reg_add(&decay_registry, ops->name, ops);
}

const struct lb_spl_decay_ops *
lb_spl_decay_find(const char *name)
{
	const struct lb_spl_decay_ops *o;

	if (name == NULL) {
		errno = EINVAL;
		return NULL;
	}
	o = lb_init_reg_find(&decay_registry, name);
	if (o == NULL)
		errno = ENOENT;
	return o;
}

int
lb_spl_decay_names(char *buf, size_t len, const char *sep)
{
	return lb_init_reg_names(&decay_registry, buf, len, sep);
}

/* Instance side. */

int
lb_spl_ratio(double exec_time, double bench_time, double *spl)
{
	double r;

	if (spl == NULL || !isfinite(exec_time) || exec_time < 0.0 ||
	    !isfinite(bench_time) || bench_time <= 0.0)
		return -EINVAL;
	r = exec_time / bench_time;
	if (!isfinite(r))
		return -ERANGE;
	*spl = r + 0.0; /* -0.0 becomes 0.0 */
	return 0;
}

int
lb_spl_ratio_ns(uint64_t first_ns, uint64_t last_ns, uint64_t bench_ns,
		double *spl)
{
	if (spl == NULL || bench_ns == 0)
		return -EINVAL;
	if (last_ns < first_ns)
		return -ERANGE;
	return lb_spl_ratio((double)(last_ns - first_ns), (double)bench_ns,
			    spl);
}

/* Control side. */

void
lb_spl_conf_init(struct lb_spl_conf *conf, unsigned int capacity)
{
	if (conf == NULL)
		return;
	memset(conf, 0, sizeof(*conf));
	conf->capacity = capacity;
	conf->lower = LB_SPL_LOWER_DEFAULT;
	conf->upper = LB_SPL_UPPER_DEFAULT;
	conf->spl_max = LB_SPL_MAX_DEFAULT;
	conf->clamp = LB_SPL_CLAMP_DEFAULT;
	conf->decay = LB_SPL_DECAY_DEFAULT;
	conf->decay_params.halflife_ns = LB_SPL_HALFLIFE_DEFAULT_NS;
	conf->decay_params.norm_span_ns = LB_SPL_NORM_SPAN_DEFAULT_NS;
}

static int
check_thresholds(double lower, double upper)
{
	if (!isfinite(lower) || !isfinite(upper) || lower < 0.0 ||
	    lower > upper)
		return -EINVAL;
	return 0;
}

static int
resolve_decay(const char *name, const struct lb_spl_decay_params *params,
	      const struct lb_spl_decay_ops **ops)
{
	const struct lb_spl_decay_ops *o;

	if (name == NULL || params == NULL)
		return -EINVAL;
	o = lb_spl_decay_find(name);
	if (o == NULL)
		return -ENOENT;
	if (o->check != NULL && o->check(params) != 0)
		return -EINVAL;
	*ops = o;
	return 0;
}

struct lb_spl_svc *
lb_spl_svc_create(const struct lb_spl_conf *conf)
{
	const struct lb_spl_decay_ops *ops = NULL;
	struct lb_spl_svc *svc;
	int rc;

	if (conf == NULL || conf->capacity == 0 ||
	    conf->capacity > LB_SPL_INST_MAX ||
	    check_thresholds(conf->lower, conf->upper) != 0 ||
	    !isfinite(conf->spl_max) || conf->spl_max <= 0.0 ||
	    !isfinite(conf->clamp) || conf->clamp < 0.0) {
		errno = EINVAL;
		return NULL;
	}
	rc = resolve_decay(conf->decay, &conf->decay_params, &ops);
	if (rc != 0) {
		errno = -rc;
		return NULL;
	}
	svc = calloc(1, sizeof(*svc) + conf->capacity * sizeof(svc->inst[0]));
	if (svc == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	svc->capacity = conf->capacity;
	svc->lower = conf->lower;
	svc->upper = conf->upper;
	svc->spl_max = conf->spl_max;
	svc->clamp = conf->clamp;
	svc->decay = ops;
	svc->decay_params = conf->decay_params;
	return svc;
}

void
lb_spl_svc_free(struct lb_spl_svc *svc)
{
	free(svc);
}

int
lb_spl_svc_set_thresholds(struct lb_spl_svc *svc, double lower, double upper)
{
	if (svc == NULL || check_thresholds(lower, upper) != 0)
		return -EINVAL;
	svc->lower = lower;
	svc->upper = upper;
	return 0;
}

int
lb_spl_svc_set_decay(struct lb_spl_svc *svc, const char *name,
		     const struct lb_spl_decay_params *params)
{
	const struct lb_spl_decay_ops *ops = NULL;
	int rc;

	if (svc == NULL)
		return -EINVAL;
	rc = resolve_decay(name, params, &ops);
	if (rc != 0)
		return rc;
	svc->decay = ops;
	svc->decay_params = *params;
	return 0;
}

int
lb_spl_inst_add(struct lb_spl_svc *svc, unsigned int id, uint64_t now_ns)
{
	struct spl_inst *in;

	if (svc == NULL || id >= svc->capacity)
		return -EINVAL;
	in = &svc->inst[id];
	if (in->present)
		return -EEXIST;
	/* Enters at 0, as 108-4 does in Table 6. */
	in->present = true;
	in->fresh = true;
	in->spl = 0.0;
	in->gen_ns = now_ns;
	svc->nb_inst++;
	return 0;
}

int
lb_spl_inst_remove(struct lb_spl_svc *svc, unsigned int id)
{
	if (svc == NULL || id >= svc->capacity)
		return -EINVAL;
	if (!svc->inst[id].present)
		return -ENOENT;
	memset(&svc->inst[id], 0, sizeof(svc->inst[id]));
	svc->nb_inst--;
	return 0;
}

int
lb_spl_report(struct lb_spl_svc *svc, unsigned int id, double spl,
	      uint64_t gen_ns, uint64_t now_ns)
{
	struct spl_inst *in;

	if (svc == NULL)
		return -EINVAL;
	svc->st.reports++;
	if (!isfinite(spl) || spl < 0.0 || spl > svc->spl_max) {
		svc->st.bad_value++;
		return -EINVAL;
	}
	if (gen_ns > now_ns) {
		svc->st.bad_time++;
		return -ERANGE;
	}
	if (id >= svc->capacity || !svc->inst[id].present) {
		svc->st.unknown_inst++;
		return -ENOENT;
	}
	in = &svc->inst[id];
	/*
	 * The repository holds the latest indicator per instance ([0066],
	 * Table 5); a report overtaken in flight must not replace a newer
	 * one. A new instance's entry time counts as its first report, so a
	 * late report of an earlier instance with the same id is dropped too.
	 */
	if (gen_ns < in->gen_ns) {
		svc->st.stale++;
		return -ESTALE;
	}
	in->fresh = false;
	in->spl = spl + 0.0;
	in->gen_ns = gen_ns;
	svc->st.accepted++;
	return 0;
}

int
lb_spl_inst_get(const struct lb_spl_svc *svc, unsigned int id, double *spl,
		uint64_t *gen_ns)
{
	if (svc == NULL || spl == NULL || gen_ns == NULL || id >= svc->capacity)
		return -EINVAL;
	if (!svc->inst[id].present)
		return -ENOENT;
	*spl = svc->inst[id].spl;
	*gen_ns = svc->inst[id].gen_ns;
	return 0;
}

unsigned int
lb_spl_inst_count(const struct lb_spl_svc *svc)
{
	return svc == NULL ? 0 : svc->nb_inst;
}

/*
 * FIG. 7 and claim 6: block 705 tests "fails to meet the lower threshold"
 * (total < lower) -> decrement (block 725); otherwise block 710 tests
 * "meets the upper threshold" (total >= upper) -> increment (block 715);
 * otherwise no-op (block 720). [0074] and [0076] name the wrong block or
 * branch in places; the claims and [0073] fix the directions used here.
 */
static void
select_action(double total, double lower, double upper,
	      struct lb_spl_decision *d)
{
	if (total < lower - LB_SPL_EPSILON) {
		d->action = LB_SPL_DECREMENT;
		d->reason = LB_SPL_R_BELOW_LOWER;
	} else if (total >= upper - LB_SPL_EPSILON) {
		d->action = LB_SPL_INCREMENT;
		d->reason = LB_SPL_R_AT_OR_ABOVE_UPPER;
	} else {
		d->action = LB_SPL_NOOP;
		d->reason = LB_SPL_R_IN_BAND;
	}
}

int
lb_spl_decide(struct lb_spl_svc *svc, uint64_t now_ns,
	      struct lb_spl_decision *d)
{
	double sum = 0.0;
	unsigned int i, n = 0;

	if (svc == NULL || d == NULL)
		return -EINVAL;
	for (i = 0; i < svc->capacity; i++) {
		if (svc->inst[i].present && svc->inst[i].gen_ns > now_ns) {
			svc->st.bad_time++;
			return -ERANGE;
		}
	}
	d->now_ns = now_ns;
	d->decay = svc->decay->name;
	d->lower = svc->lower;
	d->upper = svc->upper;
	for (i = 0; i < svc->capacity; i++) {
		const struct spl_inst *in = &svc->inst[i];
		struct lb_spl_sample *s;
		double v;

		if (!in->present)
			continue;
		s = &d->inst[n++];
		s->id = i;
		s->fresh = in->fresh;
		s->spl = in->spl;
		s->age_ns = now_ns - in->gen_ns;
		v = svc->decay->decay(&svc->decay_params, in->spl, s->age_ns);
		if (!isfinite(v) || v < 0.0) {
			svc->st.bad_decay++;
			return -EDOM;
		}
		/* One instance moves the mean by at most its share. */
		s->clamped = svc->clamp > 0.0 && v > svc->clamp * svc->upper;
		if (s->clamped) {
			v = svc->clamp * svc->upper;
			svc->st.clamped++;
		}
		s->decayed = v;
		sum += v;
	}
	d->nb_inst = n;
	svc->st.decisions++;
	if (n == 0) {
		/* No indicator at all: neither more nor less load is known. */
		d->total = 0.0;
		d->action = LB_SPL_NOOP;
		d->reason = LB_SPL_R_NO_INSTANCES;
		svc->st.noops++;
		return 0;
	}
	/* Claim 4 and [0072]: the total is the mean of the decayed values. */
	d->total = sum / n;
	select_action(d->total, svc->lower, svc->upper, d);
	if (d->action == LB_SPL_INCREMENT)
		svc->st.increments++;
	else if (d->action == LB_SPL_DECREMENT)
		svc->st.decrements++;
	else
		svc->st.noops++;
	return 0;
}

int
lb_spl_stats_get(const struct lb_spl_svc *svc, struct lb_spl_stats *st)
{
	if (svc == NULL || st == NULL)
		return -EINVAL;
	*st = svc->st;
	return 0;
}

const char *
lb_spl_action_str(enum lb_spl_action a)
{
	switch (a) {
	case LB_SPL_NOOP:
		return "noop";
	case LB_SPL_INCREMENT:
		return "increment";
	case LB_SPL_DECREMENT:
		return "decrement";
	}
	return "?";
}

const char *
lb_spl_reason_str(enum lb_spl_reason r)
{
	switch (r) {
	case LB_SPL_R_NO_INSTANCES:
		return "no instances";
	case LB_SPL_R_AT_OR_ABOVE_UPPER:
		return "total >= upper";
	case LB_SPL_R_BELOW_LOWER:
		return "total < lower";
	case LB_SPL_R_IN_BAND:
		return "lower <= total < upper";
	}
	return "?";
}
