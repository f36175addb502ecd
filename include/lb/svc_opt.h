/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_SVC_OPT_H
#define LB_SVC_OPT_H

/**
 * @file
 * A service's options as descriptors: one row per option (keyword, type,
 * range, default, place in struct lb_conf_svc_opts, help, owning
 * capability) drives parsing (`service add|set`), checking, copying,
 * comparing, `save` and the option reference of `help service add`.
 *
 * Rows come in tables, each registered from the file of the capability
 * that owns it (LB_SVC_OPT_REGISTER). A table is also a group of `save`:
 * its options stay on one line, so that a check relating two of them
 * (retry-gap with expiry) never sees one without the other. Tables are
 * kept in rank order, the order in which their options are saved, listed
 * and checked. Adding an option is one row in its capability's table.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lb/cmd.h"
#include "lb/conf.h"
#include "lb/init.h"

/** How a row's value is read, kept and written. */
enum lb_svc_opt_type {
	/** Unsigned integer of 1, 2, 4 or 8 bytes in [min, max]. */
	LB_SVC_OPT_UINT = 0,
	/** Duration in ns (uint64_t) in [min, max], written as "1500ms". */
	LB_SVC_OPT_DURATION,
	/** Duration in [min, max] ns kept as whole ms (uint32_t), rounded
	 * up. */
	LB_SVC_OPT_MS,
	/** on|off, kept in an integer (bool or wider) as 0 or 1. */
	LB_SVC_OPT_BOOL,
	/** One word of names[], kept as its index in an integer. */
	LB_SVC_OPT_ENUM,
	/** A string of at most max bytes (char[]); check() says what is
	 * valid. */
	LB_SVC_OPT_STR,
	/** A value of its own: parse(), fmt() and eq() say how. */
	LB_SVC_OPT_CUSTOM,
};

/** Row flags. */
enum {
	/** `service add` takes the keyword alone for on (`http`); `save`
	 * writes it so; `service set` takes on|off. */
	LB_SVC_OPT_F_FLAG = 1u << 0,
	/** ENUM: an unknown word is "unknown KW 'W': expected ..." at once;
	 * without it the word is kept out of range and the check says
	 * "KW: expected ...". */
	LB_SVC_OPT_F_UNKNOWN = 1u << 1,
	/** STR: a name (lb_cmd_parse_name()), written as it is. */
	LB_SVC_OPT_F_NAME = 1u << 2,
};

struct lb_svc_opt;

/**
 * What checks may need beyond the options: the service's protocol and
 * the scheduler registry the configuration was created with.
 */
struct lb_svc_opt_ctx {
	uint8_t proto;			     /**< LB_CONF_PROTO_TCP or UDP */
	lb_conf_sched_known_fn *sched_known; /**< NULL: any name */
	lb_conf_sched_names_fn *sched_names; /**< NULL: not listed */
};

/** Reads value word @p v into @p o. @return 0 or a negative errno. */
typedef int lb_svc_opt_parse_fn(const struct lb_svc_opt *d, const char *v,
				struct lb_conf_svc_opts *o,
				struct lb_cmd_out *out);
/** Writes the value of @p o as the word parse() reads back. */
typedef int lb_svc_opt_fmt_fn(const struct lb_svc_opt *d,
			      const struct lb_conf_svc_opts *o, char *buf,
			      size_t len);
/** Checks what the type's range cannot say. */
typedef int lb_svc_opt_check_fn(const struct lb_svc_opt *d,
				const struct lb_svc_opt_ctx *x,
				const struct lb_conf_svc_opts *o,
				struct lb_cmd_out *out);
/** Whether @p a and @p b hold the same value. */
typedef bool lb_svc_opt_eq_fn(const struct lb_svc_opt *d,
			      const struct lb_conf_svc_opts *a,
			      const struct lb_conf_svc_opts *b);
/** Brings what derives from the value up to date (copy and default). */
typedef void lb_svc_opt_fix_fn(const struct lb_svc_opt *d,
			       struct lb_conf_svc_opts *o);

/** One service option. */
struct lb_svc_opt {
	const char *name;  /**< keyword, e.g. "retries" */
	const char *owner; /**< capability: "sched", "admit", ... */
	enum lb_svc_opt_type type;
	unsigned int flags; /**< LB_SVC_OPT_F_* */
	size_t off;	    /**< in struct lb_conf_svc_opts */
	size_t size;	    /**< of the field */
	uint64_t min, max;  /**< range; STR, CUSTOM: longest word */
	uint64_t def;	    /**< default of numeric types */
	/** Default of STR and CUSTOM, as a word parse() reads. */
	const char *def_str;
	const char *const *names; /**< ENUM: the words, by value */
	unsigned int nb_names;
	const char *arg;	    /**< synopsis of the value: "N", "DUR" */
	const char *help;	    /**< the reference's text, one paragraph */
	lb_svc_opt_parse_fn *parse; /**< CUSTOM; or instead of the type's */
	lb_svc_opt_fmt_fn *fmt;	    /**< CUSTOM */
	lb_svc_opt_eq_fn *eq;	    /**< NULL: the field's bytes (strcmp
				     * for STR) */
	lb_svc_opt_check_fn *check; /**< after the range check, or NULL */
	lb_svc_opt_fix_fn *fix;	    /**< or NULL */
};

/** A capability's options: one group of `save`. */
struct lb_svc_opt_table {
	const char *name;  /**< unique, for registration errors */
	unsigned int rank; /**< order among tables */
	const struct lb_svc_opt *opt;
	unsigned int nb_opt;
	/** Checks that relate several options (of any table), or NULL. */
	int (*check)(const struct lb_svc_opt_ctx *x,
		     const struct lb_conf_svc_opts *o, struct lb_cmd_out *out);
};

/** Field @p f of struct lb_conf_svc_opts: its offset and size. */
#define LB_SVC_OPT_FIELD(f)                                                    \
	.off = offsetof(struct lb_conf_svc_opts, f),                           \
	.size = sizeof(((struct lb_conf_svc_opts *)NULL)->f)

/** Names of an ENUM row: .names and .nb_names from array @p a. */
#define LB_SVC_OPT_NAMES(a) .names = (a), .nb_names = sizeof(a) / sizeof((a)[0])

/*
 * The option types of the X-lists of lb/conf-t.h (LB_CONF_GOV_LIST,
 * LB_CONF_FLOW_LIST), as row types and value synopses.
 */
#define LB_SVC_OPT_TYPE_LB_CMD_OPT_BOOL LB_SVC_OPT_BOOL
#define LB_SVC_OPT_TYPE_LB_CMD_OPT_U64 LB_SVC_OPT_UINT
#define LB_SVC_OPT_TYPE_LB_CMD_OPT_DURATION LB_SVC_OPT_DURATION
#define LB_SVC_OPT_ARG_LB_CMD_OPT_BOOL "on|off"
#define LB_SVC_OPT_ARG_LB_CMD_OPT_U64 "N"
#define LB_SVC_OPT_ARG_LB_CMD_OPT_DURATION "DUR"

/**
 * The row of an option of an X-list: keyword @p kw, list type @p ty
 * (LB_CMD_OPT_BOOL, _U64 or _DURATION), range @p lo..@p hi and default
 * @p d, kept in field @p fld, owned by @p own, described by @p text.
 */
#define LB_SVC_OPT_XROW(own, fld, kw, ty, lo, hi, d, text)                     \
	{                                                                      \
		.name = kw,                                                    \
		.owner = own,                                                  \
		.type = LB_SVC_OPT_TYPE_##ty,                                  \
		LB_SVC_OPT_FIELD(fld),                                         \
		.min = lo,                                                     \
		.max = hi,                                                     \
		.def = d,                                                      \
		.arg = LB_SVC_OPT_ARG_##ty,                                    \
		.help = text,                                                  \
	},

/** Most tables and rows. */
#define LB_SVC_OPT_MAX_TABLES 16u
#define LB_SVC_OPT_MAX 128u

/**
 * Adds table @p t. @return 0, -EEXIST (name or keyword taken), -EINVAL
 * (malformed row) or -ENOSPC.
 */
int lb_svc_opt_register(const struct lb_svc_opt_table *t);

/** Registers table @p tab (a struct lb_svc_opt_table) before main(). */
#define LB_SVC_OPT_REGISTER(tab)                                               \
	LB_INIT(lb_svc_opt_init_##tab)                                         \
	{                                                                      \
		lb_init_check(lb_svc_opt_register(&(tab)), "service options",  \
			      (tab).name);                                     \
	}

/** Number of registered options. */
unsigned int lb_svc_opt_count(void);
/** The @p i th option in rank order, or NULL. */
const struct lb_svc_opt *lb_svc_opt_at(unsigned int i);
/** The option called @p name, or NULL. */
const struct lb_svc_opt *lb_svc_opt_find(const char *name);

/** Fills @p o with every option's default. */
void lb_svc_opt_default(struct lb_conf_svc_opts *o);

/**
 * Checks every option of @p o: range, the row's check, then each table's.
 * @return 0 or the first error, with its message in @p out.
 */
int lb_svc_opt_check_all(const struct lb_svc_opt_ctx *x,
			 const struct lb_conf_svc_opts *o,
			 struct lb_cmd_out *out);

/** Copies @p src to @p dst, without what follows a string's NUL. */
void lb_svc_opt_copy(struct lb_conf_svc_opts *dst,
		     const struct lb_conf_svc_opts *src);

/** Whether every option of @p a equals that of @p b. */
bool lb_svc_opt_eq(const struct lb_conf_svc_opts *a,
		   const struct lb_conf_svc_opts *b);

/**
 * Parses "KEYWORD VALUE..." of `service add` (@p add, where a FLAG row is
 * a keyword alone) or `service set` over @p o; on error @p o is
 * unspecified. Messages as lb_cmd_parse_opts().
 */
int lb_svc_opt_parse(int argc, char *const *argv, bool add,
		     struct lb_conf_svc_opts *o, struct lb_cmd_out *out);

/** Writes option @p d of @p o as its value word (LB_SVC_OPT_STRLEN). */
int lb_svc_opt_fmt(const struct lb_svc_opt *d, const struct lb_conf_svc_opts *o,
		   char *buf, size_t len);
/** Longest value word lb_svc_opt_fmt() writes, quoted. */
#define LB_SVC_OPT_STRLEN (2 * LB_HTTP_ERR_STRLEN + 3)

/**
 * Appends " KEYWORD VALUE" for each option of the table at rank position
 * @p t that differs from @p def (each one if @p def is NULL).
 * @return 0, or as lb_cmd_printf().
 */
int lb_svc_opt_print_table(struct lb_cmd_out *out, unsigned int t,
			   const struct lb_conf_svc_opts *o,
			   const struct lb_conf_svc_opts *def);
/** Number of registered tables. */
unsigned int lb_svc_opt_nb_tables(void);

/**
 * One service as `service add SVC OPTIONS` lines (options at their
 * default left out), a table going on a `service set SVC` line of its own
 * when it would take the line past LB_CMD_LINE_MAX.
 */
int lb_svc_opt_save(struct lb_cmd_out *out, const char *svc,
		    const struct lb_conf_svc_opts *o);

/**
 * The synopsis of the options ("[sched NAME] [http] ...") and their
 * reference (one "- `KEYWORD ARG`: help" item each), built from the rows
 * at the first call. Both NUL-terminated, valid until exit.
 */
const char *lb_svc_opt_synopsis(void);
const char *lb_svc_opt_reference(void);

#endif /* LB_SVC_OPT_H */
