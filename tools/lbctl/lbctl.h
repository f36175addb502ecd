/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LBCTL_H
#define LBCTL_H

/*
 * What lbctl's files share: its options, its messages and one request to
 * lb-control whose data the caller reads (lbctl_top.c).
 */

#include <stdbool.h>

#include <jansson.h>

enum {
	EXIT_REFUSED = 1, /* lb-control said no, or bad local input */
	EXIT_TROUBLE = 2, /* usage, connection or protocol trouble */
};

struct lbctl_opts {
	const char *socket;
	bool json;
	unsigned int timeout_s; /* 0: wait forever */
};

/** One line on stderr, "lbctl: " first, control characters made spaces. */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * Runs command @p argv on lb-control and gives its data (*@p data, a new
 * reference; JSON null when it has none). @return 0, or the exit status
 * after saying why.
 */
int lbctl_data(const struct lbctl_opts *o, int argc, char **argv,
	       json_t **data);

/** `lbctl top ...` (@p argv[0] is "top"); @return the exit status. */
int lbctl_top(const struct lbctl_opts *o, int argc, char **argv);

#endif /* LBCTL_H */
