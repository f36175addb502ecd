/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The syntax of one command line: splitting it into words, quoting a word
 * so that it reads back whole, and naming a word in messages. Apart from
 * the registry: lbctl and the state file quote words without running
 * anything.
 */
#include <errno.h>
#include <string.h>

#include "lb/cmd.h"

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
