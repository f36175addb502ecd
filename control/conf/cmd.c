/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Command registry, tokenizer, dispatch, generated help and the argument
 * parsers shared by every module's commands.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lb/cmd.h"

#define OUT_MIN_CAP 256u

struct cmd_ext {
	lb_cmd_fn *fn;
	void *ctx;
};

struct cmd_ent {
	struct lb_cmd_def def;
	void *ctx;
	unsigned int nwords;
	char *pathbuf;
	const char *w[LB_CMD_PATH_MAX];
	struct cmd_ext ext[LB_CMD_EXT_MAX];
	unsigned int n_ext;
	char *long_help; /* def.long_help and the extensions', or NULL */
};

struct lb_cmd_reg {
	struct cmd_ent **ent;
	unsigned int n;
	unsigned int cap;
};

/* ---- output channel ---- */

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

/* ---- tokenizer ---- */

static bool
is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool
is_ctl(unsigned char c)
{
	return (c < 0x20 && c != '\t') || c == 0x7f;
}

int
lb_cmd_tokenize(const char *line, struct lb_cmd_line *tl,
		struct lb_cmd_out *out)
{
	const char *p = line;
	char *w;

	if (tl == NULL)
		return lb_cmd_error(out, -EINVAL, "no line");
	tl->argc = 0;
	tl->argv[0] = NULL;
	if (line == NULL)
		return lb_cmd_error(out, -EINVAL, "no line");
	if (strnlen(line, LB_CMD_LINE_MAX + 1) > LB_CMD_LINE_MAX)
		return lb_cmd_error(out, -E2BIG,
				    "line too long (more than %u bytes)",
				    LB_CMD_LINE_MAX);
	/*
	 * A word never grows when its quotes are removed and each word's
	 * NUL takes the place of the blank after it, so buf cannot overflow.
	 */
	w = tl->buf;
	for (;;) {
		const char *qstart = NULL;
		char *start;

		while (is_blank(*p))
			p++;
		if (*p == '\0' || *p == '#')
			break;
		if (tl->argc == LB_CMD_ARGC_MAX)
			return lb_cmd_error(out, -E2BIG,
					    "too many words (more than %u)",
					    LB_CMD_ARGC_MAX);
		start = w;
		while (*p != '\0' && (qstart != NULL || !is_blank(*p))) {
			unsigned char c = (unsigned char)*p;
			size_t col = (size_t)(p - line) + 1;

			if (is_ctl(c))
				return lb_cmd_error(out, -EINVAL,
						    "control character 0x%02x "
						    "at column %zu",
						    c, col);
			if (c == '"') {
				qstart = qstart == NULL ? p : NULL;
				p++;
				continue;
			}
			if (qstart != NULL && c == '\\') {
				if (p[1] == '"' || p[1] == '\\') {
					*w++ = p[1];
					p += 2;
					continue;
				}
				if (p[1] != '\0' &&
				    !is_ctl((unsigned char)p[1]))
					return lb_cmd_error(out, -EINVAL,
							    "invalid escape "
							    "'\\%c' at column "
							    "%zu",
							    p[1], col);
				if (p[1] != '\0')
					return lb_cmd_error(out, -EINVAL,
							    "invalid escape at "
							    "column %zu",
							    col);
				/* a backslash ending the line: unterminated */
				p++;
				break;
			}
			*w++ = (char)c;
			p++;
		}
		if (qstart != NULL)
			return lb_cmd_error(out, -EINVAL,
					    "unterminated quote starting at "
					    "column %zu",
					    (size_t)(qstart - line) + 1);
		if ((size_t)(w - start) > LB_CMD_ARG_MAX) {
			char name[LB_CMD_WORD_NAME_STRLEN];

			return lb_cmd_error(
				out, -E2BIG, "%s too long (more than %u bytes)",
				lb_cmd_word_name(name, sizeof(name),
						 tl->argc + 1, start,
						 (size_t)(w - start)),
				LB_CMD_ARG_MAX);
		}
		*w++ = '\0';
		tl->argv[tl->argc++] = start;
	}
	tl->argv[tl->argc] = NULL;
	return 0;
}

int
lb_cmd_quote(const char *arg, char *dst, size_t dstsz)
{
	bool need = false;
	size_t n = 0;

	if (arg == NULL || dst == NULL || dstsz == 0)
		return -EINVAL;
	need = arg[0] == '\0' || arg[0] == '#';
	for (const char *p = arg; *p != '\0'; p++) {
		if (is_ctl((unsigned char)*p) && *p != '\t')
			return -EINVAL;
		if (is_blank(*p) || *p == '"')
			need = true;
	}
	if (!need) {
		n = strlen(arg);
		if (n >= dstsz)
			goto nospace;
		memcpy(dst, arg, n + 1);
		return (int)n;
	}
	if (dstsz < 3)
		goto nospace;
	dst[n++] = '"';
	for (const char *p = arg; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\') {
			if (n + 1 >= dstsz)
				goto nospace;
			dst[n++] = '\\';
		}
		if (n + 1 >= dstsz)
			goto nospace;
		dst[n++] = *p;
	}
	if (n + 2 > dstsz)
		goto nospace;
	dst[n++] = '"';
	dst[n] = '\0';
	return (int)n;
nospace:
	dst[0] = '\0';
	return -ENOSPC;
}

const char *
lb_cmd_word_name(char *dst, size_t dstsz, unsigned int idx, const char *w,
		 size_t len)
{
	size_t n, shown = len > LB_CMD_WORD_SHOWN ? LB_CMD_WORD_SHOWN : len;
	int k;

	if (dst == NULL || dstsz == 0)
		return dst;
	k = snprintf(dst, dstsz, "word %u (\"", idx);
	if (k < 0 || (size_t)k >= dstsz)
		return dst;
	n = (size_t)k;
	/* The word may be what was wrong with the line: show it so that a
	 * terminal prints it as it is, whatever bytes it holds. */
	for (size_t i = 0; w != NULL && i < shown; i++) {
		unsigned char c = (unsigned char)w[i];

		if (c == '"' || c == '\\')
			k = snprintf(dst + n, dstsz - n, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			k = snprintf(dst + n, dstsz - n, "\\x%02x", c);
		else
			k = snprintf(dst + n, dstsz - n, "%c", c);
		if (k < 0 || (size_t)k >= dstsz - n)
			return dst;
		n += (size_t)k;
	}
	snprintf(dst + n, dstsz - n, "%s\")", shown < len ? "..." : "");
	return dst;
}

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

/* ---- help and reference ---- */

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

/* GitHub's heading anchors: lowercase, spaces become dashes. */
static int
md_anchor(const char *path, struct lb_cmd_out *out)
{
	int rc = 0;

	for (const char *p = path; *p != '\0' && rc == 0; p++)
		rc = lb_cmd_printf(out, "%c", *p == ' ' ? '-' : *p);
	return rc;
}

static int
md_syntax(struct lb_cmd_out *out)
{
	return lb_cmd_printf(
		out,
		"## Syntax\n\n"
		"One command per line: the words of the command, then its "
		"arguments.\n"
		"Words are separated by spaces or tabs. A word that starts "
		"with `#`\n"
		"starts a comment that runs to the end of the line; blank "
		"lines and\n"
		"comment lines do nothing. Double quotes make one word of "
		"what they\n"
		"enclose, spaces and `#` included (`\"\"` is an empty word); "
		"inside\n"
		"quotes, `\\\"` is a quote and `\\\\` a backslash. A line "
		"holds at most\n"
		"%u bytes and %u words, a word at most %u bytes. Files may "
		"end their\n"
		"lines with LF or CRLF. Applying a file stops at the first "
		"line that\n"
		"fails, reported as `FILE:LINE: message`.\n\n"
		"Argument forms used below:\n\n"
		"| form | meaning |\n"
		"|---|---|\n"
		"| `PROTO` | `tcp` or `udp` |\n"
		"| `IP` | IPv4 address, `a.b.c.d` (no leading zeros) |\n"
		"| `IP:PORT`, `VIP:PORT` | address and port 1..65535 |\n"
		"| `IP/PREFIX` | address and the length of its subnet, "
		"1..32 |\n"
		"| `PREFIX` | network `a.b.c.d/LEN` (no host bits), or "
		"`default` |\n"
		"| `DUR` | integer and unit `ns`, `us`, `ms`, `s`, `m`, `h` "
		"(`500ms`, `2s`, `1m`); `0` alone is zero |\n"
		"| `on`/`off` | also `yes`/`no`, `true`/`false`, `1`/`0` |\n"
		"\n"
		"Keyword options (`[weight W]`) may come in any order, each "
		"once.\n\n",
		LB_CMD_LINE_MAX, LB_CMD_ARGC_MAX, LB_CMD_ARG_MAX);
}

int
lb_cmd_markdown(const struct lb_cmd_reg *r, const char *title,
		struct lb_cmd_out *out)
{
	int rc;

	if (r == NULL || out == NULL)
		return -EINVAL;
	rc = lb_cmd_printf(out,
			   "# %s\n\n"
			   "<!-- Generated from the command registry by "
			   "lb_cmd_markdown(); do not edit. -->\n\n",
			   title != NULL ? title : "Command reference");
	if (rc == 0)
		rc = md_syntax(out);
	if (rc == 0)
		rc = lb_cmd_printf(out,
				   "## Commands\n\n"
				   "| command | description |\n|---|---|\n");
	for (unsigned int i = 0; i < r->n && rc == 0; i++) {
		const struct cmd_ent *e = r->ent[i];

		rc = lb_cmd_printf(out, "| [`%s`](#", e->def.path);
		if (rc == 0)
			rc = md_anchor(e->def.path, out);
		if (rc == 0)
			rc = lb_cmd_printf(out, ") | %s |\n", e->def.help);
	}
	for (unsigned int i = 0; i < r->n && rc == 0; i++) {
		const struct cmd_ent *e = r->ent[i];
		bool first = true;

		/* One section per first word, at its first registration. */
		for (unsigned int j = 0; j < i; j++)
			if (strcmp(r->ent[j]->w[0], e->w[0]) == 0)
				first = false;
		if (!first)
			continue;
		rc = lb_cmd_printf(out, "\n## %s\n", e->w[0]);
		for (unsigned int j = i; j < r->n && rc == 0; j++) {
			const struct cmd_ent *c = r->ent[j];

			if (strcmp(c->w[0], e->w[0]) != 0)
				continue;
			rc = lb_cmd_printf(out,
					   "\n### %s\n\n```\n%s%s%s\n```\n"
					   "\n%s.\n",
					   c->def.path, c->def.path,
					   c->def.synopsis[0] != '\0' ? " "
								      : "",
					   c->def.synopsis, c->def.help);
			if (rc == 0 && c->def.long_help != NULL &&
			    c->def.long_help[0] != '\0')
				rc = lb_cmd_printf(out, "\n%s\n",
						   c->def.long_help);
		}
	}
	return rc;
}

/* A C string literal of @p s, or NULL; a newline ends a literal. */
static int
c_literal(const char *s, struct lb_cmd_out *out)
{
	int rc;

	if (s == NULL)
		return lb_cmd_printf(out, "NULL");
	rc = lb_cmd_printf(out, "\"");
	for (const char *p = s; *p != '\0' && rc == 0; p++) {
		unsigned char c = (unsigned char)*p;

		if (c == '\n')
			rc = lb_cmd_printf(out, "\\n\"\n\t\t\t\"");
		else if (c == '"' || c == '\\')
			rc = lb_cmd_printf(out, "\\%c", c);
		/* Octal escapes are three digits at most, so the next
		 * character is never read as one of them. */
		else if (c < 0x20 || c >= 0x7f || c == '?')
			rc = lb_cmd_printf(out, "\\%03o", c);
		else
			rc = lb_cmd_printf(out, "%c", c);
	}
	return rc == 0 ? lb_cmd_printf(out, "\"") : rc;
}

int
lb_cmd_csource(const struct lb_cmd_reg *r, const char *name,
	       struct lb_cmd_out *out)
{
	unsigned int n = 0;
	int rc;

	if (r == NULL || name == NULL || out == NULL)
		return -EINVAL;
	rc = lb_cmd_printf(out,
			   "/* Generated from the command registry by "
			   "lb_cmd_csource(); do not edit. */\n"
			   "#include \"lb/cmd.h\"\n\n"
			   "extern const struct lb_cmd_def %s[];\n"
			   "extern const unsigned int %s_n;\n\n"
			   "const struct lb_cmd_def %s[] = {\n",
			   name, name, name);
	for (unsigned int i = 0; i < r->n && rc == 0; i++) {
		const struct lb_cmd_def *d = &r->ent[i]->def;

		/* Every registry has its own `help`. */
		if (d->fn == cmd_help)
			continue;
		const struct {
			const char *name, *v;
		} f[] = {
			{"path", d->path},
			{"synopsis", d->synopsis},
			{"help", d->help},
			{"long_help", d->long_help},
		};

		n++;
		rc = lb_cmd_printf(out, "\t{\n");
		for (size_t k = 0; k < sizeof(f) / sizeof(f[0]) && rc == 0;
		     k++) {
			rc = lb_cmd_printf(out, "\t\t.%s = ", f[k].name);
			if (rc == 0)
				rc = c_literal(f[k].v, out);
			if (rc == 0)
				rc = lb_cmd_printf(out, ",\n");
		}
		if (rc == 0)
			rc = lb_cmd_printf(out, "\t},\n");
	}
	if (rc == 0)
		rc = lb_cmd_printf(out, "};\n\nconst unsigned int %s_n = %u;\n",
				   name, n);
	return rc;
}

/* ---- argument parsers ---- */

/* Exactly n characters of decimal digits; -ERANGE past 64 bits. */
static int
scan_u64(const char *s, size_t n, uint64_t *v)
{
	bool over = false;
	uint64_t x = 0;

	if (n == 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		unsigned int d;

		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		d = (unsigned int)(s[i] - '0');
		/* keep scanning after an overflow: a letter is EINVAL */
		if (x > (UINT64_MAX - d) / 10)
			over = true;
		else
			x = x * 10 + d;
	}
	*v = x;
	return over ? -ERANGE : 0;
}

static bool
scan_ipv4(const char *s, size_t n, uint32_t *ip)
{
	uint32_t a = 0;
	size_t i = 0;

	for (unsigned int part = 0; part < 4; part++) {
		unsigned int v = 0;
		size_t start = i;

		if (part > 0) {
			if (i >= n || s[i] != '.')
				return false;
			start = ++i;
		}
		while (i < n && s[i] >= '0' && s[i] <= '9' && i - start < 3) {
			v = v * 10 + (unsigned int)(s[i] - '0');
			i++;
		}
		if (i == start || v > 255 || (s[start] == '0' && i - start > 1))
			return false;
		a = a << 8 | v;
	}
	if (i != n)
		return false;
	*ip = a;
	return true;
}

static uint32_t
prefix_mask(unsigned int len)
{
	return len == 0 ? 0 : UINT32_MAX << (32 - len);
}

int
lb_cmd_parse_ipv4(const char *s, uint32_t *ip, struct lb_cmd_out *out)
{
	if (s == NULL || ip == NULL)
		return lb_cmd_error(out, -EINVAL, "missing IPv4 address");
	if (!scan_ipv4(s, strlen(s), ip))
		return lb_cmd_error(out, -EINVAL, "invalid IPv4 address '%s'",
				    s);
	return 0;
}

int
lb_cmd_parse_ipv4_port(const char *s, uint32_t *ip, uint16_t *port,
		       struct lb_cmd_out *out)
{
	const char *colon;
	uint64_t v;
	uint32_t a;
	int rc;

	if (s == NULL || ip == NULL || port == NULL)
		return lb_cmd_error(out, -EINVAL, "missing address:port");
	colon = strrchr(s, ':');
	if (colon == NULL || !scan_ipv4(s, (size_t)(colon - s), &a))
		return lb_cmd_error(out, -EINVAL,
				    "invalid address:port '%s': expected "
				    "a.b.c.d:PORT",
				    s);
	rc = scan_u64(colon + 1, strlen(colon + 1), &v);
	if (rc == -EINVAL)
		return lb_cmd_error(out, -EINVAL, "invalid port '%s' in '%s'",
				    colon + 1, s);
	if (rc != 0 || v < 1 || v > 65535)
		return lb_cmd_error(out, -ERANGE,
				    "port %s out of range 1..65535 in '%s'",
				    colon + 1, s);
	*ip = a;
	*port = (uint16_t)v;
	return 0;
}

static int
parse_slash(const char *s, uint32_t *ip, uint64_t *len)
{
	const char *slash = strchr(s, '/');

	if (slash == NULL || !scan_ipv4(s, (size_t)(slash - s), ip))
		return -EINVAL;
	return scan_u64(slash + 1, strlen(slash + 1), len);
}

int
lb_cmd_parse_prefix(const char *s, uint32_t *net, uint8_t *len,
		    struct lb_cmd_out *out)
{
	char nbuf[LB_CMD_ADDR_STRLEN];
	uint64_t l;
	uint32_t a;
	int rc;

	if (s == NULL || net == NULL || len == NULL)
		return lb_cmd_error(out, -EINVAL, "missing prefix");
	if (strcmp(s, "default") == 0) {
		*net = 0;
		*len = 0;
		return 0;
	}
	rc = parse_slash(s, &a, &l);
	if (rc == -EINVAL)
		return lb_cmd_error(out, -EINVAL,
				    "invalid prefix '%s': expected a.b.c.d/LEN "
				    "or default",
				    s);
	if (rc != 0 || l > 32)
		return lb_cmd_error(out, -ERANGE,
				    "prefix length %s out of range 0..32 in "
				    "'%s'",
				    strchr(s, '/') + 1, s);
	if ((a & ~prefix_mask((unsigned int)l)) != 0)
		return lb_cmd_error(
			out, -EINVAL,
			"prefix '%s' has host bits set; the network "
			"is %s",
			s,
			lb_cmd_fmt_prefix(a & prefix_mask((unsigned int)l),
					  (uint8_t)l, nbuf));
	*net = a;
	*len = (uint8_t)l;
	return 0;
}

int
lb_cmd_parse_ipv4_len(const char *s, uint32_t *ip, uint8_t *len,
		      struct lb_cmd_out *out)
{
	uint64_t l;
	uint32_t a;
	int rc;

	if (s == NULL || ip == NULL || len == NULL)
		return lb_cmd_error(out, -EINVAL, "missing address/length");
	rc = parse_slash(s, &a, &l);
	if (rc == -EINVAL)
		return lb_cmd_error(out, -EINVAL,
				    "invalid address/length '%s': expected "
				    "a.b.c.d/LEN",
				    s);
	if (rc != 0 || l < 1 || l > 32)
		return lb_cmd_error(out, -ERANGE,
				    "prefix length %s out of range 1..32 in "
				    "'%s'",
				    strchr(s, '/') + 1, s);
	*ip = a;
	*len = (uint8_t)l;
	return 0;
}

int
lb_cmd_parse_u64(const char *s, const char *what, uint64_t min, uint64_t max,
		 uint64_t *v, struct lb_cmd_out *out)
{
	uint64_t x;
	int rc;

	if (what == NULL)
		what = "value";
	if (s == NULL || v == NULL || min > max)
		return lb_cmd_error(out, -EINVAL, "missing %s", what);
	rc = scan_u64(s, strlen(s), &x);
	if (rc == -EINVAL)
		return lb_cmd_error(out, -EINVAL,
				    "invalid %s '%s': expected an integer in "
				    "%" PRIu64 "..%" PRIu64,
				    what, s, min, max);
	if (rc != 0 || x < min || x > max)
		return lb_cmd_error(out, -ERANGE,
				    "%s %s out of range %" PRIu64 "..%" PRIu64,
				    what, s, min, max);
	*v = x;
	return 0;
}

static const struct {
	const char *name;
	uint64_t ns;
} dur_units[] = {
	{"h", 3600000000000ull}, {"m", 60000000000ull}, {"s", 1000000000ull},
	{"ms", 1000000ull},	 {"us", 1000ull},	{"ns", 1ull},
};

int
lb_cmd_parse_duration(const char *s, const char *what, uint64_t min_ns,
		      uint64_t max_ns, uint64_t *ns, struct lb_cmd_out *out)
{
	char lo[LB_CMD_DURATION_STRLEN], hi[LB_CMD_DURATION_STRLEN];
	uint64_t v, unit = 0;
	size_t nd = 0;
	int rc;

	if (what == NULL)
		what = "duration";
	if (s == NULL || ns == NULL || min_ns > max_ns)
		return lb_cmd_error(out, -EINVAL, "missing %s", what);
	while (s[nd] >= '0' && s[nd] <= '9')
		nd++;
	if (strcmp(s, "0") == 0) {
		unit = 1;
	} else {
		for (size_t i = 0; i < sizeof(dur_units) / sizeof(dur_units[0]);
		     i++)
			if (strcmp(s + nd, dur_units[i].name) == 0)
				unit = dur_units[i].ns;
	}
	rc = scan_u64(s, nd, &v);
	if (unit == 0 || rc == -EINVAL)
		return lb_cmd_error(out, -EINVAL,
				    "invalid %s '%s': expected an integer and "
				    "a unit (ns, us, ms, s, m, h), e.g. 500ms",
				    what, s);
	if (rc != 0 || v > UINT64_MAX / unit || v * unit < min_ns ||
	    v * unit > max_ns)
		return lb_cmd_error(out, -ERANGE, "%s %s out of range %s..%s",
				    what, s, lb_cmd_fmt_duration(min_ns, lo),
				    lb_cmd_fmt_duration(max_ns, hi));
	*ns = v * unit;
	return 0;
}

int
lb_cmd_parse_bool(const char *s, const char *what, bool *b,
		  struct lb_cmd_out *out)
{
	static const char *const yes[] = {"on", "yes", "true", "1"};
	static const char *const no[] = {"off", "no", "false", "0"};

	if (what == NULL)
		what = "value";
	if (s == NULL || b == NULL)
		return lb_cmd_error(out, -EINVAL, "missing %s", what);
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcmp(s, yes[i]) == 0) {
			*b = true;
			return 0;
		}
		if (strcmp(s, no[i]) == 0) {
			*b = false;
			return 0;
		}
	}
	return lb_cmd_error(out, -EINVAL, "invalid %s '%s': expected on or off",
			    what, s);
}

int
lb_cmd_parse_proto(const char *s, uint8_t *proto, struct lb_cmd_out *out)
{
	if (s == NULL || proto == NULL)
		return lb_cmd_error(out, -EINVAL, "missing protocol");
	if (strcmp(s, "tcp") == 0)
		*proto = 6;
	else if (strcmp(s, "udp") == 0)
		*proto = 17;
	else
		return lb_cmd_error(out, -EINVAL,
				    "invalid protocol '%s': expected tcp or "
				    "udp",
				    s);
	return 0;
}

int
lb_cmd_parse_name(const char *s, const char *what, size_t max_len,
		  struct lb_cmd_out *out)
{
	if (what == NULL)
		what = "name";
	if (s == NULL)
		return lb_cmd_error(out, -EINVAL, "missing %s", what);
	for (const char *p = s; *p != '\0'; p++) {
		bool alnum =
			(*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9');

		if (!alnum && (p == s || (*p != '-' && *p != '_' && *p != '.')))
			goto bad;
	}
	if (s[0] == '\0')
		goto bad;
	if (strlen(s) > max_len)
		return lb_cmd_error(out, -ERANGE,
				    "%s '%s' too long (more than %zu bytes)",
				    what, s, max_len);
	return 0;
bad:
	return lb_cmd_error(out, -EINVAL,
			    "invalid %s '%s': expected lowercase letters, "
			    "digits, '-', '_' or '.'",
			    what, s);
}

static int
unknown_opt(const char *k, const struct lb_cmd_opt *opts, unsigned int nopts,
	    struct lb_cmd_out *out)
{
	/* Room for the rest of the message and a key of some length: a
	 * list too long for it ends with whole names and "...". */
	char list[LB_CMD_ERR_MAX - 128];
	size_t len = 0;

	list[0] = '\0';
	for (unsigned int i = 0; i < nopts && len < sizeof(list); i++) {
		const char *sep = i == 0 ? "" : i + 1 == nopts ? " or " : ", ";
		int n = snprintf(list + len, sizeof(list) - len, "%s%s", sep,
				 opts[i].name);

		if (n < 0)
			break;
		if ((size_t)n + 5 >= sizeof(list) - len) {
			snprintf(list + len, sizeof(list) - len, ", ...");
			break;
		}
		len += (size_t)n;
	}
	if (nopts == 0)
		return lb_cmd_error(out, -EINVAL, "unexpected argument '%s'",
				    k);
	return lb_cmd_error(out, -EINVAL, "unknown option '%s'; expected %s", k,
			    list);
}

static int
parse_opt_value(const struct lb_cmd_opt *o, const char *v,
		struct lb_cmd_optval *val, struct lb_cmd_out *out)
{
	uint32_t ip = 0;
	bool b = false;
	int rc;

	switch (o->type) {
	case LB_CMD_OPT_U64:
		return lb_cmd_parse_u64(v, o->name, o->min, o->max, &val->u,
					out);
	case LB_CMD_OPT_DURATION:
		return lb_cmd_parse_duration(v, o->name, o->min, o->max,
					     &val->u, out);
	case LB_CMD_OPT_BOOL:
		rc = lb_cmd_parse_bool(v, o->name, &b, out);
		val->u = b;
		return rc;
	case LB_CMD_OPT_NAME:
		val->str = v;
		return lb_cmd_parse_name(v, o->name, (size_t)o->max, out);
	case LB_CMD_OPT_WORD:
		val->str = v;
		if (v[0] == '\0' || strlen(v) > o->max)
			return lb_cmd_error(out, -ERANGE,
					    "%s: '%s' must be 1..%lu bytes",
					    o->name, v, (unsigned long)o->max);
		return 0;
	case LB_CMD_OPT_IPV4:
		rc = lb_cmd_parse_ipv4(v, &ip, out);
		val->u = ip;
		return rc;
	case LB_CMD_OPT_IPV4_PORT:
		rc = lb_cmd_parse_ipv4_port(v, &ip, &val->port, out);
		val->u = ip;
		return rc;
	case LB_CMD_OPT_FLAG:
	default:
		return lb_cmd_error(out, -EINVAL, "bad option table");
	}
}

int
lb_cmd_parse_opts(int argc, char *const *argv, const struct lb_cmd_opt *opts,
		  unsigned int nopts, struct lb_cmd_optval *vals,
		  struct lb_cmd_out *out)
{
	if (argc < 0 || (argv == NULL && argc > 0) ||
	    (nopts > 0 && (opts == NULL || vals == NULL)))
		return lb_cmd_error(out, -EINVAL, "bad options");
	if (nopts > 0)
		memset(vals, 0, nopts * sizeof(*vals));
	for (int i = 0; i < argc; i++) {
		const struct lb_cmd_opt *o = NULL;
		struct lb_cmd_optval *val;
		unsigned int j;
		int rc;

		for (j = 0; j < nopts; j++) {
			if (strcmp(argv[i], opts[j].name) == 0) {
				o = &opts[j];
				break;
			}
		}
		if (o == NULL)
			return unknown_opt(argv[i], opts, nopts, out);
		val = &vals[j];
		if (val->set)
			return lb_cmd_error(out, -EINVAL,
					    "option '%s' given twice", o->name);
		val->set = true;
		if (o->type == LB_CMD_OPT_FLAG) {
			val->u = 1;
			continue;
		}
		if (i + 1 >= argc)
			return lb_cmd_error(out, -EINVAL,
					    "option '%s' needs a value",
					    o->name);
		rc = parse_opt_value(o, argv[++i], val, out);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* ---- formatting ---- */

char *
lb_cmd_fmt_ipv4(uint32_t ip, char *buf)
{
	snprintf(buf, LB_CMD_IPV4_STRLEN, "%u.%u.%u.%u", ip >> 24,
		 (ip >> 16) & 0xff, (ip >> 8) & 0xff, ip & 0xff);
	return buf;
}

char *
lb_cmd_fmt_ipv4_port(uint32_t ip, uint16_t port, char *buf)
{
	char a[LB_CMD_IPV4_STRLEN];

	snprintf(buf, LB_CMD_ADDR_STRLEN, "%s:%u", lb_cmd_fmt_ipv4(ip, a),
		 port);
	return buf;
}

char *
lb_cmd_fmt_prefix(uint32_t net, uint8_t len, char *buf)
{
	char a[LB_CMD_IPV4_STRLEN];

	if (net == 0 && len == 0)
		snprintf(buf, LB_CMD_ADDR_STRLEN, "default");
	else
		snprintf(buf, LB_CMD_ADDR_STRLEN, "%s/%u",
			 lb_cmd_fmt_ipv4(net, a), len);
	return buf;
}

char *
lb_cmd_fmt_duration(uint64_t ns, char *buf)
{
	if (ns == 0) {
		snprintf(buf, LB_CMD_DURATION_STRLEN, "0s");
		return buf;
	}
	for (size_t i = 0; i < sizeof(dur_units) / sizeof(dur_units[0]); i++) {
		if (ns % dur_units[i].ns == 0) {
			snprintf(buf, LB_CMD_DURATION_STRLEN, "%" PRIu64 "%s",
				 ns / dur_units[i].ns, dur_units[i].name);
			break;
		}
	}
	return buf;
}

const char *
lb_cmd_proto_name(uint8_t proto)
{
	switch (proto) {
	case 6:
		return "tcp";
	case 17:
		return "udp";
	default:
		return NULL;
	}
}
