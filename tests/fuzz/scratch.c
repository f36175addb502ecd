/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "lb/sched.h"
#include "scratch.h"

static int
sched_known(const char *name)
{
	return lb_sched_find(name) != NULL;
}

void
fz_conf_open(struct fz_conf *s)
{
	s->reg = lb_cmd_reg_create();
	s->conf = lb_conf_create(sched_known);
	s->backup = lb_conf_create(sched_known);
	FUZZ_CHECK(s->reg != NULL && s->conf != NULL && s->backup != NULL);
	FUZZ_CHECK(lb_conf_register(s->conf, s->reg) == 0);
}

void
fz_conf_close(struct fz_conf *s)
{
	lb_cmd_reg_free(s->reg);
	lb_conf_free(s->conf);
	lb_conf_free(s->backup);
}

void
fz_conf_reset(struct fz_conf *s)
{
	static struct lb_conf *empty;

	if (empty == NULL)
		empty = lb_conf_create(sched_known);
	FUZZ_CHECK(empty != NULL);
	FUZZ_CHECK(lb_conf_copy(s->conf, empty) == 0);
}

static char *
save_text(const struct lb_conf *c)
{
	struct lb_cmd_out out;
	char *t;

	lb_cmd_out_init(&out);
	FUZZ_CHECK(lb_conf_save(c, &out) == 0);
	t = strdup(lb_cmd_out_text(&out));
	FUZZ_CHECK(t != NULL);
	lb_cmd_out_free(&out);
	return t;
}

int
fz_conf_apply(struct fz_conf *s, const char *text, size_t len,
	      const char *name, struct lb_cmd_out *out)
{
	struct lb_cmd_out v;
	char pfx[300];
	FILE *f;
	int rc;

	if (len == 0)
		return 0;
	f = fmemopen((void *)(uintptr_t)text, len, "r");
	FUZZ_CHECK(f != NULL);
	FUZZ_CHECK(lb_conf_copy(s->backup, s->conf) == 0);
	rc = lb_cmd_apply_stream(s->reg, f, name, out, NULL);
	fclose(f);
	if (rc != 0) {
		const char *m = lb_cmd_out_errmsg(out);

		FUZZ_CHECK(rc < 0);
		snprintf(pfx, sizeof(pfx), "%s:", name);
		FUZZ_CHECK(strncmp(m, pfx, strlen(pfx)) == 0);
		for (const char *p = m; *p != '\0'; p++)
			FUZZ_CHECK((unsigned char)*p >= 0x20 && *p != 0x7f);
		FUZZ_CHECK(lb_conf_copy(s->conf, s->backup) == 0);
	}
	lb_cmd_out_init(&v);
	FUZZ_CHECK(lb_conf_validate(s->conf, &v) == 0);
	lb_cmd_out_free(&v);
	return rc;
}

void
fz_conf_check_roundtrip(const struct fz_conf *s)
{
	static struct fz_conf t;
	struct lb_cmd_out out;
	char *a = save_text(s->conf), *b;

	if (t.reg == NULL)
		fz_conf_open(&t);
	fz_conf_reset(&t);
	lb_cmd_out_init(&out);
	if (fz_conf_apply(&t, a, strlen(a), "save", &out) != 0) {
		fprintf(stderr, "saved configuration does not apply: %s\n%s",
			lb_cmd_out_errmsg(&out), a);
		FUZZ_CHECK(!"the saved configuration applies");
	}
	lb_cmd_out_free(&out);
	b = save_text(t.conf);
	if (strcmp(a, b) != 0)
		fprintf(stderr, "first save:\n%s\nsecond save:\n%s", a, b);
	FUZZ_CHECK(strcmp(a, b) == 0);
	FUZZ_CHECK(lb_conf_nb_svcs(t.conf) == lb_conf_nb_svcs(s->conf));
	free(a);
	free(b);
}
