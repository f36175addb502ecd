/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The output channel of a command: the growing text buffer and the one
 * error line, with the usage messages built from the command being run.
 * Apart from the registry because every handler and parser writes here,
 * whatever runs it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lb/cmd.h"

#define OUT_MIN_CAP 256u

void
lb_cmd_out_init(struct lb_cmd_out *o)
{
	if (o != NULL)
		memset(o, 0, sizeof(*o));
}

void
lb_cmd_out_reset(struct lb_cmd_out *o)
{
	if (o == NULL)
		return;
	if (o->text != NULL)
		o->text[0] = '\0';
	o->len = 0;
	o->truncated = false;
	o->err = 0;
	o->errmsg[0] = '\0';
	o->cmd = NULL;
}

void
lb_cmd_out_free(struct lb_cmd_out *o)
{
	if (o == NULL)
		return;
	free(o->text);
	lb_cmd_out_init(o);
}

static int
out_vprintf(struct lb_cmd_out *o, const char *fmt, va_list ap)
{
	va_list aq;
	size_t need;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		return -EINVAL;
	need = o->len + (size_t)n + 1;
	if (need > o->cap) {
		size_t cap = o->cap < OUT_MIN_CAP ? OUT_MIN_CAP : o->cap;
		char *t;

		while (cap < need)
			cap *= 2;
		t = realloc(o->text, cap);
		if (t == NULL) {
			o->truncated = true;
			return -ENOMEM;
		}
		o->text = t;
		o->cap = cap;
	}
	vsnprintf(o->text + o->len, o->cap - o->len, fmt, ap);
	o->len += (size_t)n;
	return 0;
}

int
lb_cmd_printf(struct lb_cmd_out *o, const char *fmt, ...)
{
	va_list ap;
	int rc;

	if (o == NULL || fmt == NULL)
		return -EINVAL;
	va_start(ap, fmt);
	rc = out_vprintf(o, fmt, ap);
	va_end(ap);
	return rc;
}

int
lb_cmd_verror(struct lb_cmd_out *o, int err, const char *fmt, va_list ap)
{
	if (err >= 0)
		err = -EINVAL;
	if (o == NULL || o->err != 0)
		return err;
	o->err = err;
	vsnprintf(o->errmsg, sizeof(o->errmsg), fmt, ap);
	/* One line whatever the user typed into the message. */
	for (char *p = o->errmsg; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	return err;
}

int
lb_cmd_error(struct lb_cmd_out *o, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err = lb_cmd_verror(o, err, fmt, ap);
	va_end(ap);
	return err;
}

static void
fmt_usage(const struct lb_cmd_def *d, char *buf, size_t n)
{
	if (d == NULL)
		snprintf(buf, n, "see 'help'");
	else
		snprintf(buf, n, "usage: %s%s%s", d->path,
			 d->synopsis[0] != '\0' ? " " : "", d->synopsis);
}

int
lb_cmd_usage(struct lb_cmd_out *o)
{
	char u[LB_CMD_ERR_MAX];

	fmt_usage(o != NULL ? o->cmd : NULL, u, sizeof(u));
	return lb_cmd_error(o, -EINVAL, "%s", u);
}

int
lb_cmd_want_args(struct lb_cmd_out *o, int argc, char **argv, int min, int max)
{
	char u[LB_CMD_ERR_MAX];

	fmt_usage(o != NULL ? o->cmd : NULL, u, sizeof(u));
	if (argc < min)
		return lb_cmd_error(o, -EINVAL, "missing argument; %s", u);
	if (max >= 0 && argc > max)
		return lb_cmd_error(o, -EINVAL, "unexpected argument '%s'; %s",
				    argv[max], u);
	return 0;
}

const char *
lb_cmd_out_text(const struct lb_cmd_out *o)
{
	return o != NULL && o->text != NULL ? o->text : "";
}

const char *
lb_cmd_out_errmsg(const struct lb_cmd_out *o)
{
	return o != NULL ? o->errmsg : "";
}
