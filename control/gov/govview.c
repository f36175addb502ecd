/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-control's overload governors, one per service slot; see
 * control/gov/govview.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "govview.h"

#define NS_PER_MS 1000000ull

struct gv_slot {
	struct lb_gov *gov; /* NULL: no governor */
	struct lb_gov_params p;
	unsigned int def_rank;
};

struct lb_govview {
	struct gv_slot s[LB_CONF_MAX_SVCS];
};

struct lb_govview *
lb_govview_create(void)
{
	struct lb_govview *g = calloc(1, sizeof(*g));

	if (g == NULL)
		errno = ENOMEM;
	return g;
}

void
lb_govview_free(struct lb_govview *g)
{
	if (g == NULL)
		return;
	for (unsigned int i = 0; i < LB_CONF_MAX_SVCS; i++)
		lb_gov_free(g->s[i].gov);
	free(g);
}

int
lb_govview_params(const uint64_t gov[LB_CONF_GOV_NB], struct lb_gov_params *p)
{
	lb_gov_params_default(p);
	p->mode = gov[LB_CONF_GOV_IDEAL] ? LB_GOV_MODE_IDEAL_RATE :
					   LB_GOV_MODE_DAMPED;
	p->interval_ns = gov[LB_CONF_GOV_INTERVAL];
	p->window_slots = (unsigned int)gov[LB_CONF_GOV_WINDOW];
	p->overload_pct = (double)gov[LB_CONF_GOV_OVERLOAD];
	p->t_step = (double)gov[LB_CONF_GOV_T];
	p->r_step = (double)gov[LB_CONF_GOV_R];
	p->calm_k = (unsigned int)gov[LB_CONF_GOV_K];
	p->min_samples = (unsigned int)gov[LB_CONF_GOV_MIN_SAMPLES];
	/* The ideal-rate steps must stay within T (governor.h). */
	if (p->ideal_up > p->t_step)
		p->ideal_up = p->t_step;
	if (p->ideal_down > p->t_step)
		p->ideal_down = p->t_step;
	return lb_gov_params_check(p);
}

int
lb_govview_set(struct lb_govview *g, uint32_t slot, const uint64_t *gov,
	       bool fresh, uint64_t now_ns)
{
	struct gv_slot *x;
	struct lb_gov_params p;
	int rc;

	if (g == NULL || slot >= LB_CONF_MAX_SVCS)
		return -EINVAL;
	x = &g->s[slot];
	if (gov == NULL || !gov[LB_CONF_GOV_ON]) {
		lb_gov_free(x->gov);
		x->gov = NULL;
		return 0;
	}
	rc = lb_govview_params(gov, &p);
	if (rc != 0)
		return rc;
	x->def_rank = (unsigned int)gov[LB_CONF_GOV_PRIO];
	if (fresh) {
		lb_gov_free(x->gov);
		x->gov = NULL;
	}
	if (x->gov == NULL) {
		x->gov = lb_gov_create(&p, now_ns);
		if (x->gov == NULL)
			return -ENOMEM;
	} else if (memcmp(&p, &x->p, sizeof(p)) != 0) {
		rc = lb_gov_configure(x->gov, &p);
		if (rc != 0)
			return rc;
	}
	x->p = p;
	return 0;
}

bool
lb_govview_feed(struct lb_govview *g, const struct lb_fb *r)
{
	const struct gv_slot *x;
	uint64_t expected, actual;
	unsigned int rank;

	if (g == NULL || r == NULL || r->kind != LB_FB_HTTP ||
	    !(r->flags & LB_FB_F_EXPECT) || r->svc >= LB_CONF_MAX_SVCS)
		return false;
	x = &g->s[r->svc];
	if (x->gov == NULL || r->u32b == 0)
		return false;
	expected = (uint64_t)r->u32b * NS_PER_MS;
	/* An untimed response cannot show it was on time: a miss. */
	actual = (r->flags & LB_FB_F_TIMED) ? r->v : expected + 1;
	rank = (r->flags & LB_FB_F_PRIO) ? r->flags >> LB_FB_PRIO_SHIFT :
					   x->def_rank;
	if (rank > LB_GOV_RANK_MAX)
		rank = LB_GOV_RANK_MAX;
	return lb_gov_record(x->gov, r->ts_ns, expected, actual, rank) == 0;
}

void
lb_govview_tick(struct lb_govview *g, uint64_t now_ns)
{
	if (g == NULL)
		return;
	for (unsigned int i = 0; i < LB_CONF_MAX_SVCS; i++)
		if (g->s[i].gov != NULL)
			(void)lb_gov_tick(g->s[i].gov, now_ns);
}

double
lb_govview_m(const struct lb_govview *g, uint32_t slot)
{
	if (g == NULL || slot >= LB_CONF_MAX_SVCS || g->s[slot].gov == NULL)
		return 0.0;
	return lb_gov_multiplier(g->s[slot].gov);
}

int
lb_govview_get(const struct lb_govview *g, uint32_t slot,
	       struct lb_govview_svc *out)
{
	const struct gv_slot *x;

	if (g == NULL || out == NULL || slot >= LB_CONF_MAX_SVCS)
		return -EINVAL;
	x = &g->s[slot];
	memset(out, 0, sizeof(*out));
	if (x->gov == NULL)
		return 0;
	out->on = true;
	out->params = x->p;
	(void)lb_gov_state(x->gov, &out->st);
	(void)lb_gov_counters(x->gov, &out->cnt);
	return 0;
}
