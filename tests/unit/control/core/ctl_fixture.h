/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_CTL_FIXTURE_H
#define LB_CTL_FIXTURE_H

/*
 * A dataplane's shared memory in plain memory, for the tests of
 * lb-control's view, commands and metrics: workers with their counters,
 * flow table headers and per-slot backend stats, and tables compiled from
 * a configuration edited with the real commands, published as lb-control
 * publishes them (slots kept, busy ones held).
 */

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "lb/cmd.h"
#include "lb/conf.h"
#include "lb/dpconf.h"
#include "lb/flow_table.h"
#include "lb/sched.h"
#include "lb/shm.h"
#include "view.h"

#define FX_NW 2u

struct ctl_fx {
	struct lb_shm *shm;
	struct lb_shm_worker w[FX_NW];
	struct lb_worker_stats st[FX_NW];
	struct lb_be_stats (*be[FX_NW])[LB_CONF_MAX_BES];
	struct lb_flow_table ft[FX_NW];
	struct lb_conf *conf;
	struct lb_cmd_reg *reg;
	struct lb_cmd_out out;
};

static inline int
fx_sched_known(const char *name)
{
	return lb_sched_find(name) != NULL;
}

static inline struct ctl_fx *
fx_new(void)
{
	struct ctl_fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->shm = calloc(1, sizeof(*f->shm));
	assert_non_null(f->shm);
	f->shm->magic = LB_SHM_MAGIC;
	f->shm->layout_version = LB_SHM_LAYOUT_VERSION;
	f->shm->dataplane_pid = 4242;
	f->shm->nb_workers = FX_NW;
	f->shm->nb_ports = 2;
	for (uint32_t i = 0; i < FX_NW; i++) {
		f->be[i] = calloc(LB_CONF_MAX_SVCS, sizeof(*f->be[i]));
		assert_non_null(f->be[i]);
		f->w[i].wid = i;
		f->w[i].lcore = i + 1;
		f->w[i].st = &f->st[i];
		f->w[i].be = f->be[i];
		f->w[i].ft = &f->ft[i];
		f->shm->w[i] = &f->w[i];
	}
	f->conf = lb_conf_create(fx_sched_known);
	f->reg = lb_cmd_reg_create();
	assert_non_null(f->conf);
	assert_non_null(f->reg);
	assert_int_equal(lb_conf_register(f->conf, f->reg), 0);
	lb_cmd_out_init(&f->out);
	return f;
}

/* The self-registered tables (LB_CMD_REGISTER()) that take a struct
 * lb_ctl, @p ctl, into the fixture's registry. */
static inline void
fx_bind_ctl(struct ctl_fx *f, void *ctl)
{
	assert_int_equal(lb_cmd_reg_build(f->reg,
					  &(struct lb_cmd_bind){"ctl", ctl}, 1,
					  NULL),
			 0);
}

static inline void
fx_free(struct ctl_fx *f)
{
	free(atomic_load(&f->shm->conf));
	for (uint32_t i = 0; i < FX_NW; i++)
		free(f->be[i]);
	free(f->shm);
	lb_cmd_out_free(&f->out);
	lb_cmd_reg_free(f->reg);
	lb_conf_free(f->conf);
	free(f);
}

/* Runs a configuration command, which must succeed. */
static inline void
fx_run(struct ctl_fx *f, const char *line)
{
	lb_cmd_out_reset(&f->out);
	if (lb_cmd_exec_line(f->reg, line, &f->out) != 0)
		fail_msg("%s: %s", line, lb_cmd_out_errmsg(&f->out));
}

/* Compiles the configuration over the published table and publishes it;
 * workers take it up at once. */
static inline void
fx_publish(struct ctl_fx *f)
{
	struct lb_dpconf *d = calloc(1, sizeof(*d));
	struct lb_dpconf *old = atomic_load(&f->shm->conf);
	char err[128];

	assert_non_null(d);
	if (lb_dpconf_compile(d, f->conf, old, lb_view_busy, f->shm, err,
			      sizeof(err)) != 0)
		fail_msg("compile: %s", err);
	atomic_store(&f->shm->conf, d);
	for (uint32_t i = 0; i < FX_NW; i++)
		atomic_store(&f->w[i].conf_gen, d->gen);
	free(old);
}

static inline const struct lb_dpconf *
fx_table(const struct ctl_fx *f)
{
	return atomic_load(&f->shm->conf);
}

/* Slot of backend a.b.c.d:port ("10.0.0.1", 80) in service slot @p s. */
static inline int
fx_be_slot(const struct ctl_fx *f, uint32_t s, uint32_t ip, uint16_t port)
{
	const struct lb_dpconf_svc *v = &fx_table(f)->svc[s];

	for (uint32_t b = 0; b < v->nb_be; b++)
		if (v->be[b].state != LB_BE_EMPTY && v->be[b].ip == htonl(ip) &&
		    v->be[b].port == htons(port))
			return (int)b;
	return -1;
}

static inline struct lb_be_stats *
fx_bst(struct ctl_fx *f, uint32_t w, uint32_t s, uint32_t b)
{
	return &f->be[w][s][b];
}

#endif /* LB_CTL_FIXTURE_H */
