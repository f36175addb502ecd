/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_CTLCMD_PRIV_H
#define LB_CTLCMD_PRIV_H

/*
 * What the files of lb-control's commands over the dataplane share: the
 * JSON setters their data is built with, the lookup of the service a
 * command names (ctlcmd.c), and the backend rows that `service show`
 * prints after its own (ctlcmd_be.c). The commands themselves are in
 * ctlcmd_svc.c, ctlcmd_be.c, ctlcmd_stats.c and ctlcmd_data.c.
 */

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "ctlcmd.h"

#define SVC_ARGS "PROTO VIP:PORT"

/* ---- JSON helpers: each returns nonzero when memory ran out ---- */

static inline int
jset(json_t *o, const char *k, json_t *v)
{
	return v != NULL ? json_object_set_new(o, k, v) : -1;
}

static inline int
jset_u64(json_t *o, const char *k, uint64_t v)
{
	/* Counters stay far below 2^63; clamp rather than wrap. */
	return jset(o, k,
		    json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t)v));
}

static inline int
jset_str(json_t *o, const char *k, const char *s)
{
	return jset(o, k, json_string(s));
}

static inline int
jset_f64(json_t *o, const char *k, double v)
{
	return jset(o, k, json_real(v));
}

/* ---- ctlcmd.c ---- */

/** Sets ctl->data to @p d, or reports that memory ran out (@p d NULL or
 * @p bad set; @p d is then released). */
int lb_ctlcmd_give_data(struct lb_ctl *ctl, json_t *d, int bad,
			struct lb_cmd_out *out);

/**
 * PROTO VIP:PORT in @p argv naming a configured service (*@p sv) or,
 * when @p deleted is set, a deleted one still in the table (*@p slot,
 * *@p sv NULL). @return 0, or a negative errno and its message.
 */
int lb_ctlcmd_find_svc(const struct lb_ctl *ctl, char **argv, bool deleted,
		       const struct lb_conf_svc **sv, int *slot,
		       struct lb_cmd_out *out);

/* ---- ctlcmd_be.c ---- */

/**
 * The backend rows, as a text table with its header into @p out (the
 * columns that fit @p out's width, all when it is 0) and as objects
 * appended to
 * @p arr: of every service (@p all), of the configured service @p sv, or
 * else of the deleted service at table slot @p slot.
 */
int lb_ctlcmd_backends_of(struct lb_ctl *ctl, const struct lb_conf_svc *sv,
			  int slot, bool all, json_t *arr,
			  struct lb_cmd_out *out);

#endif /* LB_CTLCMD_PRIV_H */
