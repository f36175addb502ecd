/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The command registry: registering and extending commands, finding the
 * one a line names and running it, applying files of lines, and the
 * built-in `help`. The output channel, the tokenizer, the argument
 * parsers and the generated reference are files of their own (cmd_out.c,
 * cmd_token.c, cmd_parse.c, cmd_ref.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_priv.h"

/* ---- registry ---- */

static int cmd_help(void *ctx, int argc, char **argv, struct lb_cmd_out *out);

static const struct lb_cmd_def help_def = {
	.path = "help",
	.synopsis = "[COMMAND]",
	.help = "Show the commands, or the usage and description of one",
	.long_help =
		"Without an argument, lists every command with its arguments "
		"and a\none-line description. With the words of a command, "
		"shows its usage\nand full description; with the first words "
		"of several commands\n(`help service`), lists those commands.",
	.fn = cmd_help,
};

struct lb_cmd_reg *
lb_cmd_reg_create(void)
{
	struct lb_cmd_reg *r = calloc(1, sizeof(*r));

	if (r == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if (lb_cmd_register(r, &help_def, r) != 0) {
		lb_cmd_reg_free(r);
		errno = ENOMEM;
		return NULL;
	}
	return r;
}

static void
ent_free(struct cmd_ent *e)
{
	if (e == NULL)
		return;
	free(e->pathbuf);
	free(e->long_help);
	free(e);
}

void
lb_cmd_reg_free(struct lb_cmd_reg *r)
{
	if (r == NULL)
		return;
	for (unsigned int i = 0; i < r->n; i++)
		ent_free(r->ent[i]);
	free(r->ent);
	free(r);
}

static bool
path_word_ok(const char *w)
{
	if (!(w[0] >= 'a' && w[0] <= 'z'))
		return false;
	for (const char *p = w; *p != '\0'; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
		      *p == '-'))
			return false;
	return true;
}

static bool
same_path(const struct cmd_ent *a, const struct cmd_ent *b)
{
	if (a->nwords != b->nwords)
		return false;
	for (unsigned int i = 0; i < a->nwords; i++)
		if (strcmp(a->w[i], b->w[i]) != 0)
			return false;
	return true;
}

/* A registry entry for @p def, its path split into words and checked. */
static int
ent_make(const struct lb_cmd_def *def, void *ctx, struct cmd_ent **out)
{
	struct cmd_ent *e;
	char *p;

	if (def == NULL || def->path == NULL || def->synopsis == NULL ||
	    def->help == NULL || def->fn == NULL ||
	    strchr(def->help, '\n') != NULL ||
	    strchr(def->synopsis, '\n') != NULL)
		return -EINVAL;
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return -ENOMEM;
	e->def = *def;
	e->ctx = ctx;
	e->pathbuf = strdup(def->path);
	if (e->pathbuf == NULL) {
		ent_free(e);
		return -ENOMEM;
	}
	p = e->pathbuf;
	for (;;) {
		char *sp = strchr(p, ' ');

		if (e->nwords == LB_CMD_PATH_MAX)
			goto inval;
		if (sp != NULL)
			*sp = '\0';
		if (!path_word_ok(p))
			goto inval;
		e->w[e->nwords++] = p;
		if (sp == NULL)
			break;
		p = sp + 1;
	}
	*out = e;
	return 0;
inval:
	ent_free(e);
	return -EINVAL;
}

int
lb_cmd_register(struct lb_cmd_reg *r, const struct lb_cmd_def *def, void *ctx)
{
	struct cmd_ent *e;
	unsigned int at;
	int rc;

	if (r == NULL)
		return -EINVAL;
	rc = ent_make(def, ctx, &e);
	if (rc != 0)
		return rc;
	for (unsigned int i = 0; i < r->n; i++) {
		if (same_path(r->ent[i], e)) {
			ent_free(e);
			return -EEXIST;
		}
	}
	if (r->n == r->cap) {
		unsigned int cap = r->cap == 0 ? 16 : r->cap * 2;
		struct cmd_ent **t = realloc(r->ent, cap * sizeof(*t));

		if (t == NULL) {
			ent_free(e);
			return -ENOMEM;
		}
		r->ent = t;
		r->cap = cap;
	}
	/* After the last command of its group: modules registered in any
	 * order still give `help` one block per first word. */
	at = r->n;
	for (unsigned int i = r->n; i-- > 0;) {
		if (strcmp(r->ent[i]->w[0], e->w[0]) == 0) {
			at = i + 1;
			break;
		}
	}
	memmove(&r->ent[at + 1], &r->ent[at], (r->n - at) * sizeof(r->ent[0]));
	r->ent[at] = e;
	r->n++;
	return 0;
}

static int
ent_find(const struct lb_cmd_reg *r, const char *path, struct cmd_ent **out)
{
	struct cmd_ent *e;
	unsigned int i;
	int rc;

	rc = ent_make(&(struct lb_cmd_def){path, "", "", NULL, cmd_help}, NULL,
		      &e);
	if (rc != 0)
		return rc;
	for (i = 0; i < r->n; i++)
		if (same_path(r->ent[i], e))
			break;
	ent_free(e);
	if (i == r->n)
		return -ENOENT;
	*out = r->ent[i];
	return 0;
}

int
lb_cmd_extend(struct lb_cmd_reg *r, const struct lb_cmd_ext *x, void *ctx)
{
	struct cmd_ent *e;
	char *h = NULL;
	int rc;

	if (r == NULL || x == NULL || x->path == NULL || x->fn == NULL)
		return -EINVAL;
	rc = ent_find(r, x->path, &e);
	if (rc != 0)
		return rc;
	if (e->n_ext == LB_CMD_EXT_MAX)
		return -ENOSPC;
	if (x->long_help != NULL) {
		const char *l = e->def.long_help;

		const char *sep = l != NULL && l[0] != '\0' ? "\n\n" : "";
		size_t n;

		l = l != NULL ? l : "";
		n = strlen(l) + strlen(sep) + strlen(x->long_help) + 1;
		h = malloc(n);
		if (h == NULL)
			return -ENOMEM;
		snprintf(h, n, "%s%s%s", l, sep, x->long_help);
		free(e->long_help);
		e->long_help = h;
		e->def.long_help = h;
	}
	e->ext[e->n_ext++] = (struct cmd_ext){x->fn, ctx};
	return 0;
}

int
lb_cmd_register_many(struct lb_cmd_reg *r, const struct lb_cmd_def *defs,
		     unsigned int n, void *ctx)
{
	unsigned int before;

	if (r == NULL || (defs == NULL && n > 0))
		return -EINVAL;
	before = r->n;
	for (unsigned int i = 0; i < n; i++) {
		int rc = lb_cmd_register(r, &defs[i], ctx);

		if (rc != 0) {
			while (r->n > before)
				ent_free(r->ent[--r->n]);
			return rc;
		}
	}
	return 0;
}

unsigned int
lb_cmd_count(const struct lb_cmd_reg *r)
{
	return r != NULL ? r->n : 0;
}

const struct lb_cmd_def *
lb_cmd_at(const struct lb_cmd_reg *r, unsigned int i)
{
	return r != NULL && i < r->n ? &r->ent[i]->def : NULL;
}

/* Number of leading words of argv equal to the first words of e's path. */
static unsigned int
prefix_match(const struct cmd_ent *e, int argc, char *const *argv)
{
	unsigned int k = 0;

	while (k < e->nwords && (int)k < argc && strcmp(e->w[k], argv[k]) == 0)
		k++;
	return k;
}

static const struct cmd_ent *
lookup_ent(const struct lb_cmd_reg *r, int argc, char *const *argv)
{
	const struct cmd_ent *best = NULL;

	for (unsigned int i = 0; i < r->n; i++) {
		const struct cmd_ent *e = r->ent[i];

		if (prefix_match(e, argc, argv) == e->nwords &&
		    (best == NULL || e->nwords > best->nwords))
			best = e;
	}
	return best;
}

const struct lb_cmd_def *
lb_cmd_lookup(const struct lb_cmd_reg *r, int argc, char *const *argv,
	      unsigned int *nwords)
{
	const struct cmd_ent *e;

	if (r == NULL || argv == NULL || argc <= 0)
		return NULL;
	e = lookup_ent(r, argc, argv);
	if (e != NULL && nwords != NULL)
		*nwords = e->nwords;
	return e != NULL ? &e->def : NULL;
}

static void
join_words(char *buf, size_t n, int argc, char *const *argv)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < argc && len < n; i++) {
		int k = snprintf(buf + len, n - len, "%s%s", i > 0 ? " " : "",
				 argv[i]);

		if (k < 0)
			break;
		len += (size_t)k;
	}
}

/* Longest run of leading words that starts some command's path. */
static unsigned int
group_match(const struct lb_cmd_reg *r, int argc, char *const *argv)
{
	unsigned int m = 0;

	for (unsigned int i = 0; i < r->n; i++) {
		unsigned int k = prefix_match(r->ent[i], argc, argv);

		if (k > m)
			m = k;
	}
	return m;
}

static int
unknown_cmd(const struct lb_cmd_reg *r, int argc, char *const *argv,
	    struct lb_cmd_out *out)
{
	char cmd[LB_CMD_ERR_MAX];
	char grp[LB_CMD_ERR_MAX];
	unsigned int m = group_match(r, argc, argv);

	if (m == 0)
		return lb_cmd_error(out, -EINVAL,
				    "unknown command '%s'; try 'help'",
				    argv[0]);
	join_words(grp, sizeof(grp), (int)m, argv);
	if ((int)m == argc)
		return lb_cmd_error(out, -EINVAL,
				    "incomplete command '%s'; try 'help %s'",
				    grp, grp);
	join_words(cmd, sizeof(cmd), (int)m + 1, argv);
	return lb_cmd_error(out, -EINVAL, "unknown command '%s'; try 'help %s'",
			    cmd, grp);
}

int
lb_cmd_exec(struct lb_cmd_reg *r, int argc, char **argv, struct lb_cmd_out *out)
{
	const struct lb_cmd_def *prev;
	const struct cmd_ent *e;
	int rc;

	if (r == NULL || out == NULL || argc < 0 || (argv == NULL && argc > 0))
		return lb_cmd_error(out, -EINVAL, "no command");
	if (argc == 0)
		return 0;
	e = lookup_ent(r, argc, argv);
	if (e == NULL)
		return unknown_cmd(r, argc, argv, out);
	prev = out->cmd;
	out->cmd = &e->def;
	rc = e->def.fn(e->ctx, argc - (int)e->nwords, argv + e->nwords, out);
	for (unsigned int i = 0; i < e->n_ext && rc >= 0; i++)
		rc = e->ext[i].fn(e->ext[i].ctx, argc - (int)e->nwords,
				  argv + e->nwords, out);
	out->cmd = prev;
	if (rc > 0)
		rc = 0;
	if (rc < 0 && out->err == 0)
		lb_cmd_error(out, rc, "%s: %s", e->def.path, strerror(-rc));
	return rc;
}

int
lb_cmd_exec_line(struct lb_cmd_reg *r, const char *line, struct lb_cmd_out *out)
{
	struct lb_cmd_line *tl;
	int rc;

	if (r == NULL || out == NULL)
		return lb_cmd_error(out, -EINVAL, "no command");
	/* Handlers may nest (a command running lines); keep stacks small. */
	tl = malloc(sizeof(*tl));
	if (tl == NULL)
		return lb_cmd_error(out, -ENOMEM, "out of memory");
	rc = lb_cmd_tokenize(line, tl, out);
	if (rc == 0)
		rc = lb_cmd_exec(r, (int)tl->argc, tl->argv, out);
	free(tl);
	return rc;
}

static void
prefix_error(struct lb_cmd_out *out, const char *name, unsigned int lineno)
{
	char msg[LB_CMD_ERR_MAX];

	memcpy(msg, out->errmsg, sizeof(msg));
	/* A cut message is still one line; the location comes first. */
	if (snprintf(out->errmsg, sizeof(out->errmsg), "%s:%u: %s", name,
		     lineno, msg) >= (int)sizeof(out->errmsg))
		out->errmsg[sizeof(out->errmsg) - 1] = '\0';
}

int
lb_cmd_apply_stream(struct lb_cmd_reg *r, FILE *f, const char *name,
		    struct lb_cmd_out *out, unsigned int *nlines)
{
	unsigned int lineno = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = 0;

	if (nlines != NULL)
		*nlines = 0;
	if (r == NULL || f == NULL || out == NULL)
		return lb_cmd_error(out, -EINVAL, "no input");
	if (name == NULL)
		name = "-";
	while ((n = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (n > 0 && line[n - 1] == '\n')
			line[--n] = '\0';
		if (n > 0 && line[n - 1] == '\r')
			line[--n] = '\0';
		if (strlen(line) != (size_t)n)
			rc = lb_cmd_error(out, -EINVAL, "NUL byte in line");
		else
			rc = lb_cmd_exec_line(r, line, out);
		if (rc < 0) {
			prefix_error(out, name, lineno);
			break;
		}
	}
	if (rc == 0 && ferror(f)) {
		rc = lb_cmd_error(out, -EIO, "%s: read error", name);
	}
	free(line);
	if (nlines != NULL)
		*nlines = lineno;
	return rc;
}

int
lb_cmd_apply_file(struct lb_cmd_reg *r, const char *path,
		  struct lb_cmd_out *out)
{
	FILE *f;
	int rc;

	if (r == NULL || path == NULL || out == NULL)
		return lb_cmd_error(out, -EINVAL, "no file");
	f = fopen(path, "r");
	if (f == NULL) {
		rc = -errno;
		return lb_cmd_error(out, rc, "%s: %s", path, strerror(-rc));
	}
	rc = lb_cmd_apply_stream(r, f, path, out, NULL);
	fclose(f);
	return rc;
}

/* ---- help ---- */

static bool
ent_in_group(const struct cmd_ent *e, int argc, char *const *argv)
{
	return (int)e->nwords > argc &&
	       prefix_match(e, argc, argv) == (unsigned int)argc;
}

static int
help_line(const struct cmd_ent *e, struct lb_cmd_out *out)
{
	return lb_cmd_printf(out, "%s%s%s\n    %s\n", e->def.path,
			     e->def.synopsis[0] != '\0' ? " " : "",
			     e->def.synopsis, e->def.help);
}

static int
help_detail(const struct cmd_ent *e, struct lb_cmd_out *out)
{
	int rc;

	rc = lb_cmd_printf(out, "usage: %s%s%s\n\n%s\n", e->def.path,
			   e->def.synopsis[0] != '\0' ? " " : "",
			   e->def.synopsis, e->def.help);
	if (rc == 0 && e->def.long_help != NULL && e->def.long_help[0] != '\0')
		rc = lb_cmd_printf(out, "\n%s\n", e->def.long_help);
	return rc;
}

int
lb_cmd_help(const struct lb_cmd_reg *r, int argc, char *const *argv,
	    struct lb_cmd_out *out)
{
	const struct cmd_ent *e;
	bool group = false;
	int rc = 0;

	if (r == NULL || out == NULL || argc < 0 || (argv == NULL && argc > 0))
		return lb_cmd_error(out, -EINVAL, "no registry");
	if (argc == 0) {
		rc = lb_cmd_printf(out, "Commands:\n");
		for (unsigned int i = 0; i < r->n && rc == 0; i++)
			rc = help_line(r->ent[i], out);
		if (rc == 0)
			rc = lb_cmd_printf(out, "Type 'help COMMAND' for the "
						"details of one command.\n");
		return rc;
	}
	for (unsigned int i = 0; i < r->n; i++) {
		e = r->ent[i];
		if ((int)e->nwords == argc &&
		    prefix_match(e, argc, argv) == e->nwords)
			return help_detail(e, out);
	}
	for (unsigned int i = 0; i < r->n && rc == 0; i++) {
		if (ent_in_group(r->ent[i], argc, argv)) {
			group = true;
			rc = help_line(r->ent[i], out);
		}
	}
	if (group)
		return rc;
	/* A whole command line pasted after `help`. */
	e = lookup_ent(r, argc, argv);
	if (e != NULL)
		return help_detail(e, out);
	return unknown_cmd(r, argc, argv, out);
}

static int
cmd_help(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	return lb_cmd_help(ctx, argc, argv, out);
}

bool
lb_cmd_is_help(const struct lb_cmd_def *d)
{
	return d != NULL && d->fn == cmd_help;
}
