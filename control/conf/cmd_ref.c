/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What is generated from a registry for readers outside the running
 * program: the Markdown reference (docs/lbctl.md) and the C source of the
 * commands' help that lbctl is built with. Apart from the registry: it
 * only reads the entries, in help order.
 */
#include <errno.h>
#include <string.h>

#include "cmd_priv.h"

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
		"| `IP` | IPv4 address, `a.b.c.d` (no leading zeros), or "
		"IPv6 address, `2001:db8::10` |\n"
		"| `IP:PORT`, `VIP:PORT` | address and port 1..65535; IPv6 "
		"in brackets, `[2001:db8::10]:443` |\n"
		"| `IP/PREFIX` | address and the length of its subnet, "
		"1..32 (IPv6: 1..128) |\n"
		"| `PREFIX` | network `a.b.c.d/LEN` (no host bits), or "
		"`default`; IPv6 `2001:db8::/32`, `::/0` |\n"
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
		if (lb_cmd_is_help(d))
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
