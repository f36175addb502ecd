/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_CMD_H
#define LB_CMD_H

/**
 * @file
 * The command language shared by lbctl, configuration files and lb-control.
 *
 * A command is a path of words ("service add") followed by arguments. Each
 * module registers its own commands, with their synopsis and help, in a
 * struct lb_cmd_reg; nothing else knows the list. The registry tokenizes a
 * line, finds the command whose path matches the most leading words, and
 * calls its handler with the remaining words. `help`, `help COMMAND` and the
 * Markdown reference (docs/lbctl.md) are generated from the registry, so
 * they cannot drift from what the code accepts.
 *
 * Syntax of one line:
 *  - words are separated by spaces or tabs;
 *  - a word that starts with `#` starts a comment up to the end of the line;
 *  - double quotes group characters, spaces and `#` included, into one
 *    word (`"a b"`, `x"y z"` is `xy z`, `""` is an empty word); inside
 *    quotes `\"` is a quote and `\\` a backslash, any other backslash
 *    sequence is an error; outside quotes a backslash is an ordinary
 *    character;
 *  - at most LB_CMD_LINE_MAX bytes, LB_CMD_ARGC_MAX words, LB_CMD_ARG_MAX
 *    bytes per word; control characters other than tab (and a trailing
 *    carriage return in files) are refused.
 *
 * Errors are one line of text in struct lb_cmd_out plus a negative errno
 * return. Handlers and the argument parsers below write that line; the
 * first error written wins, so the most precise message reaches the user.
 *
 * Not thread-safe: one thread owns a registry and the context of its
 * handlers. Nothing here runs on the packet path.
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lb/conf-t.h"
#include "lb/init.h"

/** Longest line, in bytes, without its newline. */
#define LB_CMD_LINE_MAX 1024u
/** Most words on one line (command path included). */
#define LB_CMD_ARGC_MAX 64u
/** Longest word, in bytes, after quotes are removed. */
#define LB_CMD_ARG_MAX 255u
/** Most words in a command path ("service add" has 2). */
#define LB_CMD_PATH_MAX 4u
/** Size of the error line buffer, NUL included. */
#define LB_CMD_ERR_MAX 512u
/** Buffer size for a dotted-quad address, NUL included. */
#define LB_CMD_IPV4_STRLEN 16u
/** Buffer size for "a.b.c.d:port" or "a.b.c.d/len", NUL included. */
#define LB_CMD_ADDR_STRLEN 22u
/** Buffer size for an address of either family, NUL included. */
#define LB_CMD_IP_STRLEN 46u
/** Buffer size for "[v6]:port", "v6/len" or an IPv4 form, NUL included. */
#define LB_CMD_IP_ADDR_STRLEN 56u
/** Buffer size for a duration written by lb_cmd_fmt_duration(). */
#define LB_CMD_DURATION_STRLEN 24u

struct lb_cmd_def;

/**
 * Output and error channel of one command. Text output (tables, saved
 * configuration) is appended to a growing buffer; an error is one line.
 * Initialise with lb_cmd_out_init(), release with lb_cmd_out_free().
 */
struct lb_cmd_out {
	char *text;	/**< output, NUL-terminated; NULL while empty */
	size_t len;	/**< bytes in @c text */
	size_t cap;	/**< allocated bytes */
	bool truncated; /**< an append failed for lack of memory */
	int err;	/**< negative errno of the first error, 0 if none */
	/** The first error message, one line without a newline. */
	char errmsg[LB_CMD_ERR_MAX];
	/** Command being run, set by the dispatcher for lb_cmd_usage(). */
	const struct lb_cmd_def *cmd;
	/** Columns the client shows a line in (its terminal's width), for
	 * the tables that pick their columns; 0: no limit. */
	unsigned int width;
};

/**
 * Handler of a command: @p argv holds the @p argc words after the command
 * path (argv[argc] is NULL; the words may be modified). Returns 0, or a
 * negative errno after writing one error line with lb_cmd_error().
 */
typedef int lb_cmd_fn(void *ctx, int argc, char **argv, struct lb_cmd_out *out);

/**
 * A command as a module declares it, usually in a static const table. The
 * strings are not copied: they must live as long as the registry.
 */
struct lb_cmd_def {
	/** Words separated by one space, each [a-z0-9-]: "backend drain". */
	const char *path;
	/** Arguments, e.g. "PROTO VIP:PORT [weight W]"; "" for none. */
	const char *synopsis;
	/** One line, no final period, shown by `help`. */
	const char *help;
	/**
	 * Full description shown by `help COMMAND` and in the Markdown
	 * reference, or NULL. Plain paragraphs separated by blank lines;
	 * lines starting with "- " are list items.
	 */
	const char *long_help;
	lb_cmd_fn *fn;
};

/** A tokenized line: argv points into buf. */
struct lb_cmd_line {
	char buf[LB_CMD_LINE_MAX + 1];
	char *argv[LB_CMD_ARGC_MAX + 1];
	unsigned int argc;
};

struct lb_cmd_reg;

/* ---- output channel ---- */

/** Empties @p o without allocating. */
void lb_cmd_out_init(struct lb_cmd_out *o);

/** Forgets text and error, keeps the buffer for reuse. */
void lb_cmd_out_reset(struct lb_cmd_out *o);

/** Frees the text buffer; @p o may be reused after lb_cmd_out_init(). */
void lb_cmd_out_free(struct lb_cmd_out *o);

/**
 * Appends formatted text to the output.
 * @return 0, -EINVAL (NULL), or -ENOMEM (then @c truncated is set).
 */
int lb_cmd_printf(struct lb_cmd_out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/**
 * Records the error line unless one is already recorded (the first, most
 * precise, message wins). Newlines and other control characters in the
 * message become spaces; a message longer than the buffer is cut.
 * @p o may be NULL (only the code is returned).
 * @return @p err if it is negative, -EINVAL otherwise, so that handlers
 *   can write `return lb_cmd_error(out, -ENOENT, "no service %s", s);`.
 */
int lb_cmd_error(struct lb_cmd_out *o, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** Like lb_cmd_error() with a va_list. */
int lb_cmd_verror(struct lb_cmd_out *o, int err, const char *fmt, va_list ap);

/**
 * Records "usage: PATH SYNOPSIS" of the command being run.
 * @return -EINVAL.
 */
int lb_cmd_usage(struct lb_cmd_out *o);

/**
 * Checks that @p argc is within [@p min, @p max] (@p max < 0: no upper
 * bound). Too few: "missing argument; usage: ...". Too many: "unexpected
 * argument 'X'; usage: ...".
 * @return 0 or -EINVAL.
 */
int lb_cmd_want_args(struct lb_cmd_out *o, int argc, char **argv, int min,
		     int max);

/** Output text, "" when empty; never NULL for a valid @p o. */
const char *lb_cmd_out_text(const struct lb_cmd_out *o);

/** Error line, "" when none. */
const char *lb_cmd_out_errmsg(const struct lb_cmd_out *o);

/* ---- tokenizer ---- */

/**
 * Splits one line (no newline) into words following the syntax in the file
 * comment. Errors: "line too long (more than 1024 bytes)", "too many words
 * (more than 64)", "word N ("TEXT...") too long (more than 255 bytes)" (see
 * lb_cmd_word_name()), "unterminated
 * quote starting at column C", "invalid escape '\x' at column C",
 * "control character 0xNN at column C".
 * @return 0 (argc may be 0 for a blank or comment line), -EINVAL, -E2BIG
 *   (any length limit).
 */
int lb_cmd_tokenize(const char *line, struct lb_cmd_line *tl,
		    struct lb_cmd_out *out);

/**
 * Writes @p arg so that lb_cmd_tokenize() reads it back as one word:
 * unchanged when it needs no quoting, otherwise in double quotes with `"`
 * and `\` escaped.
 * @return the length written (NUL excluded), -EINVAL, or -ENOSPC if
 *   @p dst is too small (then @p dst is an empty string).
 */
int lb_cmd_quote(const char *arg, char *dst, size_t dstsz);

/** Bytes of a word lb_cmd_word_name() shows before "...". */
#define LB_CMD_WORD_SHOWN 24u
/** Buffer size for lb_cmd_word_name(), NUL included. */
#define LB_CMD_WORD_NAME_STRLEN (24u + 4u * LB_CMD_WORD_SHOWN)

/**
 * How every message names one word of a command line, from the tokenizer
 * to lb-control's API and lbctl: `word 4 ("xyz")`, words counted from 1
 * (the command's own words included). The first LB_CMD_WORD_SHOWN bytes
 * of the @p len bytes at @p w are shown, then "..." if there are more;
 * `"` and `\` are escaped with a backslash, bytes outside printable ASCII
 * as `\xNN`. The result is cut to @p dstsz (LB_CMD_WORD_NAME_STRLEN is
 * always enough).
 * @return @p dst.
 */
const char *lb_cmd_word_name(char *dst, size_t dstsz, unsigned int idx,
			     const char *w, size_t len);

/* ---- registry and dispatch ---- */

/**
 * Creates a registry holding the built-in `help` command.
 * @return the registry, or NULL with errno ENOMEM.
 */
struct lb_cmd_reg *lb_cmd_reg_create(void);

void lb_cmd_reg_free(struct lb_cmd_reg *r);

/**
 * Registers one command; @p ctx is passed to its handler.
 * @return 0; -EINVAL for NULL fields, a malformed path (empty word, a
 *   character outside [a-z0-9-], more than LB_CMD_PATH_MAX words, double
 *   space) or a help line containing a newline; -EEXIST if the path is
 *   already registered; -ENOMEM.
 */
int lb_cmd_register(struct lb_cmd_reg *r, const struct lb_cmd_def *def,
		    void *ctx);

/**
 * Registers @p n commands sharing @p ctx, all or none.
 * @return as lb_cmd_register(); on error nothing was registered.
 */
int lb_cmd_register_many(struct lb_cmd_reg *r, const struct lb_cmd_def *defs,
			 unsigned int n, void *ctx);

/** Most extensions one command takes (lb_cmd_extend()). */
#define LB_CMD_EXT_MAX 4u

/**
 * What a module adds to a command another module defines: output after
 * the command's own (the autoscaler's settings after the configuration in
 * `save`), or the API data of a list whose text another module writes.
 * The command stays defined once, where it belongs.
 */
struct lb_cmd_ext {
	/** Path of the command extended: "save". */
	const char *path;
	/** A paragraph appended to its long help, or NULL. */
	const char *long_help;
	/** Run after the command succeeded, with its words and output. */
	lb_cmd_fn *fn;
};

/**
 * Adds @p x to the command registered at @p x->path: @p x->fn runs, with
 * context @p ctx, after that command's handler returned 0 (extensions in
 * the order they were added); its long help gains @p x->long_help.
 * @return 0; -EINVAL (NULL fields, a newline in nothing); -ENOENT if no
 *   command has that path; -ENOSPC past LB_CMD_EXT_MAX; -ENOMEM.
 */
int lb_cmd_extend(struct lb_cmd_reg *r, const struct lb_cmd_ext *x, void *ctx);

/** Number of registered commands, `help` included. */
unsigned int lb_cmd_count(const struct lb_cmd_reg *r);

/**
 * The @p i th command in help order, or NULL: commands sharing a first
 * word stay together ("service list" registered late still follows
 * "service del"), groups in the order their first command was
 * registered, commands of a group in registration order.
 */
const struct lb_cmd_def *lb_cmd_at(const struct lb_cmd_reg *r, unsigned int i);

/**
 * The command whose path matches the most leading words of @p argv, or
 * NULL. @p nwords (may be NULL) receives the length of its path.
 */
const struct lb_cmd_def *lb_cmd_lookup(const struct lb_cmd_reg *r, int argc,
				       char *const *argv, unsigned int *nwords);

/**
 * Runs the command named by the leading words of @p argv. Unknown:
 * "unknown command 'X'; try 'help'"; when the first words name a group of
 * commands but not one command: "unknown command 'service frob'; try
 * 'help service'" or "incomplete command 'service'; try 'help service'".
 * A handler failing without a message gets "COMMAND: <strerror>".
 * Output is appended to @p out; reset it between commands that are not
 * part of one file, since an error already recorded is never replaced.
 * @return 0 (also for argc 0), or the handler's negative errno.
 */
int lb_cmd_exec(struct lb_cmd_reg *r, int argc, char **argv,
		struct lb_cmd_out *out);

/** Tokenizes @p line and runs it; blank and comment lines do nothing. */
int lb_cmd_exec_line(struct lb_cmd_reg *r, const char *line,
		     struct lb_cmd_out *out);

/**
 * Runs every line of @p f, stopping at the first error, which becomes
 * "NAME:LINE: message" (LINE counts from 1). Lines end with LF or CRLF;
 * a line longer than LB_CMD_LINE_MAX or holding a NUL byte is an error.
 * @p nlines (may be NULL) receives the number of lines read, the failing
 * one included.
 * @return 0 or the first negative errno.
 */
int lb_cmd_apply_stream(struct lb_cmd_reg *r, FILE *f, const char *name,
			struct lb_cmd_out *out, unsigned int *nlines);

/**
 * Opens @p path and runs it with lb_cmd_apply_stream(). A file that cannot
 * be opened gives "PATH: <strerror>".
 */
int lb_cmd_apply_file(struct lb_cmd_reg *r, const char *path,
		      struct lb_cmd_out *out);

/**
 * What `help` prints. No words: every command, path and synopsis on one
 * line, its help line indented below. Words naming a command: its usage,
 * help and long help. Words naming a group ("service"): every command of
 * the group.
 * @return 0, or -ENOENT with "unknown command 'X'; try 'help'".
 */
int lb_cmd_help(const struct lb_cmd_reg *r, int argc, char *const *argv,
		struct lb_cmd_out *out);

/**
 * Appends the command reference in Markdown: @p title as the level-1
 * heading (NULL: "Command reference"), the line syntax, then one level-2
 * section per first word in help order (lb_cmd_at()) and one level-3 entry per
 * command with its usage, help and long help.
 * @return 0 or -ENOMEM.
 */
int lb_cmd_markdown(const struct lb_cmd_reg *r, const char *title,
		    struct lb_cmd_out *out);

/**
 * Appends C source that defines `const struct lb_cmd_def NAME[]` and
 * `const unsigned int NAME_n`: every command of @p r but the registry's
 * own `help`, in help order (lb_cmd_at()), with its path, synopsis, help and
 * long help and no handler. A program built with it knows the help of a
 * registry it cannot run (lbctl, while lb-control is not running):
 * registering the table with a handler of its own into a registry of
 * its own gives the same `help` output as @p r.
 * @return 0, -EINVAL or -ENOMEM.
 */
int lb_cmd_csource(const struct lb_cmd_reg *r, const char *name,
		   struct lb_cmd_out *out);

/* ---- self-registration ----
 *
 * A module declares its commands in a struct lb_cmd_table and registers
 * it from its own file with LB_CMD_REGISTER(): a process-wide list, which
 * a program turns into its registry with lb_cmd_reg_build(), binding each
 * context a table names to an object of its own. Adding a command is one
 * more row, adding a module one more file: no central list.
 */

/** Most tables one program holds. */
#define LB_CMD_TABLES_MAX 32u

/** One module's commands and extensions, as LB_CMD_REGISTER() takes them. */
struct lb_cmd_table {
	/** Unique; tables are registered in name order, so that the order
	 * of `help` does not depend on the link order. */
	const char *name;
	/** The context the handlers take, as the program binds it: "ctl"
	 * (struct lb_ctl), "as" (struct lb_as), "steer" ... */
	const char *ctx;
	const struct lb_cmd_def *defs;
	unsigned int n;
	const struct lb_cmd_ext *ext; /**< @p n_ext extensions, or NULL */
	unsigned int n_ext;
	/**
	 * Optional: called with the bound context and a copy of @p defs
	 * before they are registered, to write help that depends on what
	 * the program holds (the names in another registry). Strings it
	 * sets must outlive the registry. @return 0 or a negative errno.
	 */
	int (*prepare)(void *ctx, struct lb_cmd_def *defs, unsigned int n);
};

/**
 * Adds @p t to the process-wide list; LB_CMD_REGISTER() calls it.
 * @return 0, -EINVAL (NULL fields), -EEXIST (name taken), -ENOSPC.
 */
int lb_cmd_table_add(const struct lb_cmd_table *t);

/** Number of tables added, and the @p i th in name order (or NULL). */
unsigned int lb_cmd_table_count(void);
const struct lb_cmd_table *lb_cmd_table_at(unsigned int i);

/**
 * Registers @p t (a `static const struct lb_cmd_table`) before main(),
 * from the file that defines its commands; a failure aborts.
 */
#define LB_CMD_REGISTER(t)                                                     \
	LB_INIT(lb_cmd_init_##t)                                               \
	{                                                                      \
		lb_init_check(lb_cmd_table_add(&(t)), "command table",         \
			      (t).name);                                       \
	}

/** A context a program gives the tables that name it. */
struct lb_cmd_bind {
	const char *name;
	void *ctx;
};

/**
 * Registers into @p r the commands of every table whose context is among
 * the @p nb of @p binds, tables in name order, then their extensions.
 * A table whose context is not bound is left out, and @p unbound (may
 * be NULL) receives the first such table's name (NULL if none): a
 * program that must have every command treats that as an error.
 * @return 0, or the first error of lb_cmd_register(), lb_cmd_extend()
 *   or a table's prepare(); commands registered before it stay.
 */
int lb_cmd_reg_build(struct lb_cmd_reg *r, const struct lb_cmd_bind *binds,
		     unsigned int nb, const char **unbound);

/* ---- argument parsers ----
 *
 * All parsers are strict: the whole word must match, no spaces, no signs,
 * no hexadecimal. They write one error line to @p out (which may be NULL)
 * and return 0, -EINVAL (malformed) or -ERANGE (well-formed but outside
 * its bounds). @p what names the value in messages ("weight").
 * Addresses are uint32_t in host byte order (10.0.0.1 is 0x0a000001).
 */

/**
 * Dotted quad, four decimal parts 0..255 without leading zeros ("010" is
 * refused: some tools read it as octal).
 * Error: "invalid IPv4 address 'S'".
 */
int lb_cmd_parse_ipv4(const char *s, uint32_t *ip, struct lb_cmd_out *out);

/**
 * "a.b.c.d:PORT" with PORT in 1..65535.
 * Errors: "invalid address:port 'S': expected a.b.c.d:PORT", "invalid port
 * 'P' in 'S'", "port P out of range 1..65535 in 'S'".
 */
int lb_cmd_parse_ipv4_port(const char *s, uint32_t *ip, uint16_t *port,
			   struct lb_cmd_out *out);

/**
 * Network prefix "a.b.c.d/LEN" (LEN 0..32, no host bits set) or
 * "default" (0.0.0.0/0).
 * Errors: "invalid prefix 'S': expected a.b.c.d/LEN or default", "prefix
 * length L out of range 0..32 in 'S'", "prefix 'S' has host bits set;
 * the network is N/L".
 */
int lb_cmd_parse_prefix(const char *s, uint32_t *net, uint8_t *len,
			struct lb_cmd_out *out);

/**
 * Interface address with its subnet length, "a.b.c.d/LEN", LEN 1..32
 * (host bits are the point here).
 * Errors: "invalid address/length 'S': expected a.b.c.d/LEN", "prefix
 * length L out of range 1..32 in 'S'".
 */
int lb_cmd_parse_ipv4_len(const char *s, uint32_t *ip, uint8_t *len,
			  struct lb_cmd_out *out);

/*
 * Either family. A word with no ':' is read as IPv4, with exactly the
 * IPv4 parsers' errors; one with a ':' as IPv6 (RFC 4291 text, as
 * inet_pton() reads it, no zone). IPv6 in address:port is bracketed,
 * "[2001:db8::10]:443", as in URLs (RFC 3986).
 */

/**
 * An IPv4 or IPv6 address.
 * Error (IPv6): "invalid IPv6 address 'S'".
 */
int lb_cmd_parse_ip(const char *s, struct lb_conf_ip *ip,
		    struct lb_cmd_out *out);

/**
 * "a.b.c.d:PORT" or "[IPV6]:PORT", PORT in 1..65535.
 * Errors (IPv6): "invalid address:port 'S': expected [IPV6]:PORT", "IPv6
 * address:port 'S' needs brackets: [IPV6]:PORT", and the port's.
 */
int lb_cmd_parse_ip_port(const char *s, struct lb_conf_ip *ip, uint16_t *port,
			 struct lb_cmd_out *out);

/**
 * Network prefix: lb_cmd_parse_prefix()'s forms ("default" is the IPv4
 * 0.0.0.0/0), or "IPV6/LEN" with LEN 0..128 and no host bits ("::/0"
 * is the IPv6 default).
 * Errors (IPv6): "invalid prefix 'S': expected IPV6/LEN", "prefix length
 * L out of range 0..128 in 'S'", "prefix 'S' has host bits set; the
 * network is N/L".
 */
int lb_cmd_parse_ip_prefix(const char *s, struct lb_conf_ip *net,
			   uint8_t *len, struct lb_cmd_out *out);

/**
 * Interface address and subnet length: "a.b.c.d/LEN" (1..32) or
 * "IPV6/LEN" (1..128).
 * Errors (IPv6): "invalid address/length 'S': expected IPV6/LEN",
 * "prefix length L out of range 1..128 in 'S'".
 */
int lb_cmd_parse_ip_len(const char *s, struct lb_conf_ip *ip, uint8_t *len,
			struct lb_cmd_out *out);

/**
 * Unsigned decimal integer within [@p min, @p max].
 * Errors: "invalid WHAT 'S': expected an integer in MIN..MAX", "WHAT V out
 * of range MIN..MAX" (also for values that overflow 64 bits).
 */
int lb_cmd_parse_u64(const char *s, const char *what, uint64_t min,
		     uint64_t max, uint64_t *v, struct lb_cmd_out *out);

/**
 * Duration: an unsigned integer and a unit among ns, us, ms, s, m, h
 * ("500ms", "2s", "1m"); a bare "0" is zero. Fractions are refused so
 * that every value has one exact spelling. The result, in nanoseconds,
 * must be within [@p min_ns, @p max_ns].
 * Errors: "invalid WHAT 'S': expected an integer and a unit (ns, us, ms,
 * s, m, h), e.g. 500ms", "WHAT S out of range MIN..MAX".
 */
int lb_cmd_parse_duration(const char *s, const char *what, uint64_t min_ns,
			  uint64_t max_ns, uint64_t *ns,
			  struct lb_cmd_out *out);

/**
 * Boolean: on/off, yes/no, true/false, 1/0.
 * Error: "invalid WHAT 'S': expected on or off".
 */
int lb_cmd_parse_bool(const char *s, const char *what, bool *b,
		      struct lb_cmd_out *out);

/**
 * "tcp" or "udp", returned as the IP protocol number (6 or 17).
 * Error: "invalid protocol 'S': expected tcp or udp".
 */
int lb_cmd_parse_proto(const char *s, uint8_t *proto, struct lb_cmd_out *out);

/**
 * Name of a pluggable thing (scheduler, driver): 1..@p max_len bytes of
 * [a-z0-9_.-], starting with a letter or digit.
 * Errors: "invalid WHAT 'S': expected lowercase letters, digits, '-', '_'
 * or '.'", "WHAT 'S' too long (more than N bytes)" (-ERANGE).
 */
int lb_cmd_parse_name(const char *s, const char *what, size_t max_len,
		      struct lb_cmd_out *out);

/* ---- keyword/value options ---- */

enum lb_cmd_opt_type {
	LB_CMD_OPT_FLAG = 0,  /**< keyword alone, e.g. "http" */
	LB_CMD_OPT_U64,	      /**< keyword and integer in [min, max] */
	LB_CMD_OPT_DURATION,  /**< keyword and duration in [min, max] ns */
	LB_CMD_OPT_BOOL,      /**< keyword and on/off */
	LB_CMD_OPT_NAME,      /**< keyword and a name of at most max bytes */
	LB_CMD_OPT_IPV4,      /**< keyword and an address */
	LB_CMD_OPT_IPV4_PORT, /**< keyword and a.b.c.d:PORT */
	LB_CMD_OPT_WORD,      /**< keyword and any word of 1..max bytes,
			       * whose syntax the command checks */
	LB_CMD_OPT_IP,	      /**< keyword and an address of either family */
};

/** One keyword a command accepts after its positional arguments. */
struct lb_cmd_opt {
	const char *name;
	enum lb_cmd_opt_type type;
	uint64_t min; /**< U64, DURATION */
	uint64_t max; /**< U64, DURATION; NAME, WORD: longest value */
};

/** Parsed value of one option, in the slot of its struct lb_cmd_opt. */
struct lb_cmd_optval {
	bool set;
	/** U64 and DURATION value, BOOL and FLAG 0/1, IPV4 address. */
	uint64_t u;
	uint16_t port;	 /**< IPV4_PORT */
	const char *str; /**< the value word as given (NAME, WORD) */
	struct lb_conf_ip ip; /**< IP */
};

/**
 * Parses "keyword [value] keyword [value] ..." in any order, each keyword
 * at most once (e.g. "weight 3 sched maglev"). @p vals[i] answers
 * @p opts[i]; options not given keep set = false.
 * Errors: "unknown option 'K'; expected A, B or C", "option 'K' needs a
 * value", "option 'K' given twice", and the value parsers' messages with
 * the keyword as WHAT.
 * @return 0, -EINVAL or -ERANGE; on error @p vals is unspecified.
 */
int lb_cmd_parse_opts(int argc, char *const *argv,
		      const struct lb_cmd_opt *opts, unsigned int nopts,
		      struct lb_cmd_optval *vals, struct lb_cmd_out *out);

/* ---- formatting, the inverse of the parsers ---- */

/** Writes a.b.c.d into @p buf (LB_CMD_IPV4_STRLEN bytes); returns buf. */
char *lb_cmd_fmt_ipv4(uint32_t ip, char *buf);

/** Writes a.b.c.d:port (LB_CMD_ADDR_STRLEN bytes); returns buf. */
char *lb_cmd_fmt_ipv4_port(uint32_t ip, uint16_t port, char *buf);

/** Writes a.b.c.d/len, or "default" for 0.0.0.0/0 (LB_CMD_ADDR_STRLEN). */
char *lb_cmd_fmt_prefix(uint32_t net, uint8_t len, char *buf);

/**
 * Writes an address of either family (LB_CMD_IP_STRLEN bytes): IPv4 as
 * lb_cmd_fmt_ipv4(), IPv6 in the form of RFC 5952 (inet_ntop()).
 * @return buf.
 */
char *lb_cmd_fmt_ip(const struct lb_conf_ip *ip, char *buf);

/**
 * a.b.c.d:port or [IPV6]:port (LB_CMD_IP_ADDR_STRLEN bytes); returns buf.
 */
char *lb_cmd_fmt_ip_port(const struct lb_conf_ip *ip, uint16_t port,
			 char *buf);

/**
 * A prefix as lb_cmd_parse_ip_prefix() reads it: lb_cmd_fmt_prefix() for
 * IPv4, IPV6/LEN for IPv6 (LB_CMD_IP_ADDR_STRLEN bytes); returns buf.
 */
char *lb_cmd_fmt_ip_prefix(const struct lb_conf_ip *net, uint8_t len,
			   char *buf);

/**
 * Writes @p ns with the largest unit that represents it exactly ("1500ms",
 * "2s", "0s"), so that lb_cmd_parse_duration() reads back the same value
 * (LB_CMD_DURATION_STRLEN bytes); returns buf.
 */
char *lb_cmd_fmt_duration(uint64_t ns, char *buf);

/** "tcp", "udp", or NULL for another protocol number. */
const char *lb_cmd_proto_name(uint8_t proto);

#endif /* LB_CMD_H */
