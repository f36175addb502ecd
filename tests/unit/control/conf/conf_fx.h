/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_TEST_CONF_FX_H
#define LB_TEST_CONF_FX_H

/*
 * The fixture of the configuration model's tests: a configuration and a
 * registry with its commands, lines run through it, the saved text.
 * Include after cmocka.h and lb/conf.h.
 */

#ifndef NOTE_IF
/* Names the failing row of a table before the assertion stops the test. */
#define NOTE_IF(cond, ...)                                                   \
	do {                                                                 \
		if (cond)                                                    \
			print_message(__VA_ARGS__);                          \
	} while (0)
#endif

struct fx {
	struct lb_cmd_reg *r;
	struct lb_conf *c;
	struct lb_cmd_out o;
};

static struct fx *
fx_new(lb_conf_sched_known_fn *fn)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->r = lb_cmd_reg_create();
	f->c = lb_conf_create(fn);
	assert_non_null(f->r);
	assert_non_null(f->c);
	assert_int_equal(lb_conf_register(f->c, f->r), 0);
	lb_cmd_out_init(&f->o);
	return f;
}

static void
fx_free(struct fx *f)
{
	lb_cmd_out_free(&f->o);
	lb_conf_free(f->c);
	lb_cmd_reg_free(f->r);
	free(f);
}

static int
run(struct fx *f, const char *line)
{
	lb_cmd_out_reset(&f->o);
	return lb_cmd_exec_line(f->r, line, &f->o);
}

static void
ok(struct fx *f, const char *line)
{
	int rc = run(f, line);

	NOTE_IF(rc != 0, "'%s' failed: %s\n", line, f->o.errmsg);
	assert_int_equal(rc, 0);
}

/* Saved text of the configuration; the caller frees it. */
static char *
saved(const struct lb_conf *c)
{
	struct lb_cmd_out o;
	char *s;

	lb_cmd_out_init(&o);
	assert_int_equal(lb_conf_save(c, &o), 0);
	s = strdup(lb_cmd_out_text(&o));
	assert_non_null(s);
	lb_cmd_out_free(&o);
	return s;
}

#endif /* LB_TEST_CONF_FX_H */
