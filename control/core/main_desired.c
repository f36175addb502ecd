/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-control's desired configuration: lbctl's requests run on it (undone
 * when they fail), it is saved to the state file and published to the
 * dataplane as a table; at start-up it is read back from the state file
 * or the dataplane's --config.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autoscale.h"
#include "main_priv.h"
#include "statefile.h"

#define STATE_HEADER                                                           \
	"# lb-control state: the desired configuration, in lbctl's command\n"  \
	"# syntax (see 'lbctl save'). Written by lb-control; edit with\n"      \
	"# lbctl, or stop lb-control first.\n"

static int
save_state(struct lb_control *m, struct lb_cmd_out *out)
{
	char err[LB_CMD_ERR_MAX];
	struct lb_cmd_out t;
	int rc;

	lb_cmd_out_init(&t);
	rc = lb_cmd_printf(&t, "%s", STATE_HEADER);
	if (rc == 0)
		rc = lb_conf_save(m->ctl.conf, &t);
	if (rc == 0)
		rc = lb_as_save(m->ctl.as, &t);
	if (rc == 0)
		rc = lb_statefile_write(m->o.state, lb_cmd_out_text(&t), t.len,
					err, sizeof(err));
	else
		snprintf(err, sizeof(err), "cannot format the state: %s",
			 strerror(-rc));
	lb_cmd_out_free(&t);
	if (rc != 0) {
		m->ctl.ctr.state_errors++;
		return lb_cmd_error(out, rc, "%s; nothing changed", err);
	}
	m->ctl.ctr.state_writes++;
	return 0;
}

/*
 * Makes the desired configuration the dataplane's table, saving it first
 * when @p save is set: a change that cannot be saved is not made, and one
 * saved but not yet published is published from the state file by the
 * next lb-control.
 */
int
lb_control_publish(struct lb_control *m, bool save, struct lb_cmd_out *out)
{
	char err[LB_CMD_ERR_MAX];
	struct lb_dpconf *d = NULL;
	int64_t ns;
	int rc;

	rc = lb_pub_build(&m->pub, m->ctl.conf, &d, err, sizeof(err));
	if (rc < 0) {
		m->ctl.ctr.publish_errors++;
		return lb_cmd_error(out, rc,
				    "the dataplane cannot take this "
				    "configuration: %s",
				    err);
	}
	if (save) {
		rc = save_state(m, out);
		if (rc != 0) {
			lb_pub_discard(d);
			return rc;
		}
	}
	m->dirty = false;
	if (d == NULL)
		return 0;
	ns = lb_pub_commit(&m->pub, d);
	if (ns == -EINTR)
		return 0; /* published and saved; stopping before the grace */
	if (ns < 0) {
		/* Saved: the next dataplane gets it from the state file. */
		m->dp_gone = true;
		return 0;
	}
	m->ctl.ctr.publishes++;
	m->ctl.ctr.grace_ns_last = (uint64_t)ns;
	if ((uint64_t)ns > m->ctl.ctr.grace_ns_max)
		m->ctl.ctr.grace_ns_max = (uint64_t)ns;
	lb_view_sync(m->ctl.view);
	lb_control_steer_sync(m, d);
	return 0;
}

/* The autoscaler's settings before a request, to undo it. */
static void
as_backup(struct lb_control *m)
{
	free(m->as_backup);
	m->as_backup = lb_as_snapshot(m->ctl.as);
	m->as_gen0 = lb_as_generation(m->ctl.as);
}

/* A request changed the configuration (or failed): publish, or undo. */
static int
finish_change(struct lb_control *m, uint64_t gen0, int rc,
	      struct lb_cmd_out *out)
{
	if (rc == 0 && lb_conf_generation(m->ctl.conf) != gen0)
		rc = lb_control_publish(m, true, out);
	else if (rc == 0 && lb_as_generation(m->ctl.as) != m->as_gen0)
		rc = save_state(m, out);
	if (rc != 0 && lb_conf_generation(m->ctl.conf) != gen0)
		lb_conf_copy(m->ctl.conf, m->backup);
	if (rc != 0)
		lb_as_restore(m->ctl.as, m->as_backup);
	return rc;
}

static int
api_exec(void *ctx, int argc, char **argv, struct lb_cmd_out *out,
	 json_t **data)
{
	struct lb_control *m = ctx;
	uint64_t gen0 = lb_conf_generation(m->ctl.conf);
	int rc;

	m->ctl.ctr.api_requests++;
	lb_conf_copy(m->backup, m->ctl.conf);
	as_backup(m);
	rc = lb_cmd_exec(m->reg, argc, argv, out);
	*data = m->ctl.data;
	m->ctl.data = NULL;
	rc = finish_change(m, gen0, rc, out);
	if (rc != 0) {
		m->ctl.ctr.api_errors++;
		json_decref(*data);
		*data = NULL;
	}
	return rc;
}

static int
api_apply(void *ctx, const char *text, size_t len, const char *name,
	  struct lb_cmd_out *out)
{
	struct lb_control *m = ctx;
	uint64_t gen0 = lb_conf_generation(m->ctl.conf);
	FILE *f;
	int rc;

	m->ctl.ctr.api_requests++;
	if (len == 0)
		return 0;
	f = fmemopen((void *)(uintptr_t)text, len, "r");
	if (f == NULL) {
		m->ctl.ctr.api_errors++;
		return lb_cmd_error(out, -errno, "%s: %s", name,
				    strerror(errno));
	}
	/* Every line on the configuration, then one table for all of
	 * them; the first failing line undoes the lot. */
	lb_conf_copy(m->backup, m->ctl.conf);
	as_backup(m);
	rc = lb_cmd_apply_stream(m->reg, f, name, out, NULL);
	fclose(f);
	json_decref(m->ctl.data);
	m->ctl.data = NULL;
	rc = finish_change(m, gen0, rc, out);
	if (rc != 0)
		m->ctl.ctr.api_errors++;
	return rc;
}

const struct lb_api_ops lb_control_api_ops = {
	.exec = api_exec,
	.apply = api_apply,
};

/* The autoscaler changed the backends or its settings. */
int
lb_control_scale_commit(void *ctx)
{
	struct lb_control *m = ctx;
	struct lb_cmd_out out;
	int rc;

	lb_cmd_out_init(&out);
	rc = lb_control_publish(m, true, &out);
	if (rc != 0) {
		/* Published at the next slow tick. */
		m->dirty = true;
		lb_control_log("%s", lb_cmd_out_errmsg(&out));
	}
	lb_cmd_out_free(&out);
	return rc;
}

/* Runs a whole configuration text into the (empty) configuration. */
static int
load_text(struct lb_control *m, const char *text, size_t len, const char *name)
{
	struct lb_cmd_out out;
	FILE *f;
	int rc = 0;

	if (len == 0)
		return 0;
	f = fmemopen((void *)(uintptr_t)text, len, "r");
	if (f == NULL)
		return -errno;
	lb_cmd_out_init(&out);
	rc = lb_cmd_apply_stream(m->reg, f, name, &out, NULL);
	fclose(f);
	if (rc != 0)
		lb_control_log("%s", lb_cmd_out_errmsg(&out));
	lb_cmd_out_free(&out);
	json_decref(m->ctl.data);
	m->ctl.data = NULL;
	return rc;
}

/* The state file, or the text of the dataplane's --config. */
int
lb_control_load(struct lb_control *m)
{
	const struct lb_shm *shm = m->pub.shm;
	char err[LB_CMD_ERR_MAX];
	size_t len = 0;
	char *text;
	int rc;

	rc = lb_statefile_read(m->o.state, &text, &len, err, sizeof(err));
	if (rc == 0) {
		rc = load_text(m, text, len, m->o.state);
		free(text);
		if (rc != 0) {
			lb_control_log(
				"fix or remove %s: it is lb-control's state "
				"file",
				m->o.state);
			return rc;
		}
		lb_control_log("desired configuration from %s: %u service(s)",
			       m->o.state, lb_conf_nb_svcs(m->ctl.conf));
		return 0;
	}
	if (rc != -ENOENT) {
		lb_control_log("%s", err);
		return rc;
	}
	len = shm->boot_conf_len < sizeof(shm->boot_conf)
		      ? shm->boot_conf_len
		      : sizeof(shm->boot_conf) - 1;
	rc = load_text(m, shm->boot_conf, len, "dataplane --config");
	if (rc == 0)
		lb_control_log(
			"no state file %s: adopting the dataplane's --config "
			"(%u service(s))",
			m->o.state, lb_conf_nb_svcs(m->ctl.conf));
	return rc;
}

void
lb_control_publish_first(struct lb_control *m)
{
	struct lb_cmd_out o;

	lb_cmd_out_init(&o);
	if (lb_control_publish(m, true, &o) != 0) {
		lb_control_log("%s; retrying every second",
			       lb_cmd_out_errmsg(&o));
		m->dirty = true;
		save_state(m, NULL);
	}
	lb_cmd_out_free(&o);
}
