/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lbctl: the command-line client of lb-control.
 *
 * One request, one response, over lb-control's Unix stream socket
 * (protocol version 1): the request is one line of JSON carrying the
 * command's words, or the whole text of a file for `lbctl apply`, and the
 * response is one line of JSON carrying the output text, the data of a
 * listing, or one error line. Everything lbctl can do is an API call; the
 * commands, their checks and their help live in lb-control, so this
 * client knows no command but `apply`. Only the help of lb-control's
 * commands is built in (generated from its registry at build time), for
 * `lbctl help` while no lb-control answers.
 *
 * Exit status: 0 done; 1 lb-control refused the command (its error line
 * is printed) or a local input error (unreadable file); 2 usage errors and
 * trouble reaching lb-control or understanding its answer.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "lb/cmd.h"
#include "lbctl.h"

#ifndef LB_VERSION
#define LB_VERSION "unknown"
#endif

#define LBCTL_PROTO 1
#define LBCTL_SOCKET_DEFAULT "/run/sluice/lb-control.sock"
#define LBCTL_SOCKET_ENV "LBCTL_SOCKET"
/** lb-control refuses request lines longer than this, newline excluded. */
#define LBCTL_REQUEST_MAX (1u << 20)
/** Longest response line read; a listing of every backend fits easily. */
#define LBCTL_RESPONSE_MAX (256u << 20)
/** Longest file name lb-control takes with `apply`. */
#define LBCTL_NAME_MAX 255u
#define LBCTL_TIMEOUT_DEFAULT_S 30u
#define LBCTL_TIMEOUT_MAX_S 3600u
/** Widest terminal lb-control takes ("width" of the request). */
#define LBCTL_WIDTH_MAX 10000u

/* ---- messages ------------------------------------------------------------ */

void
say(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	for (char *p = buf; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	fprintf(stderr, "lbctl: %s\n", buf);
}

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: lbctl [OPTIONS] COMMAND [ARGS...]\n"
		"       lbctl [OPTIONS] apply FILE   (FILE - reads standard "
		"input)\n"
		"       lbctl [OPTIONS] save\n"
		"       lbctl [OPTIONS] help [COMMAND]\n"
		"       lbctl [OPTIONS] top [--sort KEY] [SERVICE]   (live view)\n"
		"\n"
		"Sends one command to lb-control and prints its answer; "
		"'lbctl help'\n"
		"lists the commands lb-control knows.\n"
		"\n"
		"options:\n"
		"  -s, --socket PATH   lb-control's socket (default $%s, "
		"else\n"
		"                      %s)\n"
		"  -j, --json          print the data of the answer as JSON\n"
		"  -w, --wide          every column of a table, whatever the\n"
		"                      terminal's width (also after the "
		"command)\n"
		"  -t, --timeout SEC   longest wait for the answer, 0 for none "
		"(default %u)\n"
		"  -h, --help          this text\n"
		"  -V, --version       print the version\n"
		"\n"
		"exit status: 0 done, 1 refused by lb-control (its reason is "
		"printed),\n"
		"2 bad usage or lb-control unreachable.\n",
		LBCTL_SOCKET_ENV, LBCTL_SOCKET_DEFAULT,
		LBCTL_TIMEOUT_DEFAULT_S);
}

/* ---- UTF-8 --------------------------------------------------------------- */

/*
 * Length of the valid UTF-8 sequence at @p s (at most @p n bytes), or 0.
 * JSON strings must be UTF-8, so lbctl checks its input before jansson
 * would refuse it without saying where.
 */
static size_t
utf8_seq(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and beyond U+10FFFF. */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

/* Offset of the first byte that is not valid UTF-8, or @p n. */
static size_t
utf8_check(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;

	while (i < n) {
		size_t k = utf8_seq(u + i, n - i);

		if (k == 0)
			return i;
		i += k;
	}
	return n;
}

/* ---- request ------------------------------------------------------------- */

static json_t *
request_argv(int argc, char **argv, bool json, unsigned int width)
{
	json_t *req = json_object(), *arr = json_array();

	if (req == NULL || arr == NULL)
		goto nomem;
	for (int i = 0; i < argc; i++) {
		size_t n = strlen(argv[i]);

		if (utf8_check(argv[i], n) != n) {
			char name[LB_CMD_WORD_NAME_STRLEN];

			say("%s is not valid UTF-8 text",
			    lb_cmd_word_name(name, sizeof(name),
					     (unsigned int)i + 1, argv[i], n));
			json_decref(arr);
			json_decref(req);
			return NULL;
		}
		if (json_array_append_new(arr, json_stringn(argv[i], n)) != 0)
			goto nomem;
	}
	if (json_object_set_new(req, "v", json_integer(LBCTL_PROTO)) != 0 ||
	    json_object_set_new(req, "argv", arr) != 0)
		goto nomem_req;
	arr = NULL;
	if (json_object_set_new(req, "json", json_boolean(json)) != 0)
		goto nomem_req;
	/* Only when there is one: a table then fits the terminal. */
	if (width > 0 &&
	    json_object_set_new(req, "width", json_integer(width)) != 0)
		goto nomem_req;
	return req;
nomem:
	json_decref(arr);
nomem_req:
	json_decref(req);
	say("out of memory");
	return NULL;
}

/*
 * Reads all of @p path ("-": standard input) into a NUL-terminated
 * buffer. Returns 0 or EXIT_REFUSED after saying why.
 */
static int
read_file(const char *path, char **text, size_t *len)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
	size_t cap = 0, n = 0;
	char *buf = NULL;
	int rc = 0;

	if (f == NULL) {
		say("%s: %s", path, strerror(errno));
		return EXIT_REFUSED;
	}
	for (;;) {
		size_t k;

		if (cap - n < 4096) {
			char *t;

			/* No need to hold more than lb-control accepts. */
			if (cap > LBCTL_REQUEST_MAX) {
				say("%s: larger than %u bytes, more than "
				    "lb-control accepts in one request",
				    path, LBCTL_REQUEST_MAX);
				rc = EXIT_REFUSED;
				break;
			}
			cap = cap == 0 ? 65536 : cap * 2;
			t = realloc(buf, cap + 1);
			if (t == NULL) {
				say("out of memory");
				rc = EXIT_REFUSED;
				break;
			}
			buf = t;
		}
		k = fread(buf + n, 1, cap - n, f);
		n += k;
		if (k == 0) {
			if (ferror(f)) {
				say("%s: %s", path, strerror(errno));
				rc = EXIT_REFUSED;
			}
			break;
		}
	}
	if (f != stdin)
		fclose(f);
	if (rc != 0) {
		free(buf);
		return rc;
	}
	if (buf == NULL) {
		buf = malloc(1);
		if (buf == NULL) {
			say("out of memory");
			return EXIT_REFUSED;
		}
	}
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return 0;
}

/* Line number (from 1) of offset @p off in @p s. */
static unsigned int
line_of(const char *s, size_t off)
{
	unsigned int line = 1;

	for (size_t i = 0; i < off; i++)
		line += s[i] == '\n';
	return line;
}

/*
 * The request of `lbctl apply FILE`: the whole text, so that lb-control
 * applies it as one change (all lines or none, one new table).
 */
static int
request_apply(const char *path, json_t **out)
{
	const char *name = strcmp(path, "-") == 0 ? "stdin" : path;
	size_t len, bad, nlen = strlen(name);
	json_t *req;
	char *text;
	int rc;

	rc = read_file(path, &text, &len);
	if (rc != 0)
		return rc;
	/* lb-control reads the text as a C string: a NUL would cut it. */
	bad = strlen(text);
	if (bad != len) {
		say("%s:%u: NUL byte in line", name, line_of(text, bad));
		free(text);
		return EXIT_REFUSED;
	}
	bad = utf8_check(text, len);
	if (bad != len) {
		say("%s:%u: not valid UTF-8 text", name, line_of(text, bad));
		free(text);
		return EXIT_REFUSED;
	}
	/* lb-control takes names of at most LBCTL_NAME_MAX bytes: keep the
	 * end of a longer path, where the file's own name is. */
	if (nlen > LBCTL_NAME_MAX) {
		name += nlen - LBCTL_NAME_MAX;
		while (((unsigned char)*name & 0xc0) == 0x80)
			name++;
	}
	req = json_object();
	if (req == NULL ||
	    json_object_set_new(req, "v", json_integer(LBCTL_PROTO)) != 0 ||
	    json_object_set_new(req, "apply", json_stringn(text, len)) != 0 ||
	    json_object_set_new(req, "name", json_string(name)) != 0) {
		json_decref(req);
		free(text);
		say("out of memory");
		return EXIT_REFUSED;
	}
	free(text);
	*out = req;
	return 0;
}

/* ---- connection ---------------------------------------------------------- */

struct conn {
	const char *path;
	int fd;
	unsigned int timeout_s;
	struct timespec deadline;
	bool builtin_help; /* `help`: lbctl answers if it cannot connect */
	bool unreached;	   /* it could not connect */
};

/* Says "cannot reach lb-control at PATH: why" and gives EXIT_TROUBLE. */
static int __attribute__((format(printf, 2, 3)))
trouble(const struct conn *c, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	say("cannot reach lb-control at %s: %s%s", c->path, why,
	    c->builtin_help && c->unreached
		    ? "; the help built into lbctl follows"
		    : "");
	return EXIT_TROUBLE;
}

/* Milliseconds left before the deadline (-1: no deadline), 0 if passed. */
static int
conn_wait_ms(const struct conn *c)
{
	struct timespec now;
	int64_t ms;

	if (c->timeout_s == 0)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (int64_t)(c->deadline.tv_sec - now.tv_sec) * 1000 +
	     (c->deadline.tv_nsec - now.tv_nsec) / 1000000;
	if (ms <= 0)
		return 0;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

static int
conn_open(struct conn *c)
{
	struct sockaddr_un sa;
	size_t n = strlen(c->path);

	/* Every failure below means no lb-control to answer. */
	c->unreached = true;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (n == 0 || n >= sizeof(sa.sun_path))
		return trouble(c, "socket path must be 1..%zu bytes",
			       sizeof(sa.sun_path) - 1);
	memcpy(sa.sun_path, c->path, n);
	/* The deadline covers the whole exchange, connecting included. */
	clock_gettime(CLOCK_MONOTONIC, &c->deadline);
	c->deadline.tv_sec += (time_t)c->timeout_s;
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (c->fd < 0)
		return trouble(c, "%s", strerror(errno));
	/* A Unix socket connects at once or, with its backlog full, says
	 * EAGAIN: try again until the deadline. */
	while (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		const struct timespec pause = {.tv_nsec = 10 * 1000 * 1000};

		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return trouble(c, "%s", strerror(errno));
		if (conn_wait_ms(c) == 0)
			return trouble(c,
				       "not accepting connections (backlog "
				       "full) for %u s",
				       c->timeout_s);
		nanosleep(&pause, NULL);
	}
	c->unreached = false;
	return 0;
}

/* Waits until @p events on the socket; 0, or EXIT_TROUBLE on timeout. */
static int
conn_poll(const struct conn *c, short events)
{
	struct pollfd p = {.fd = c->fd, .events = events};

	for (;;) {
		int ms = conn_wait_ms(c);
		int k;

		if (ms == 0)
			return trouble(c, "no answer within %u s",
				       c->timeout_s);
		k = poll(&p, 1, ms);
		if (k > 0)
			return 0;
		if (k < 0 && errno != EINTR)
			return trouble(c, "%s", strerror(errno));
	}
}

static int
conn_send(const struct conn *c, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t k;
		int rc = conn_poll(c, POLLOUT);

		if (rc != 0)
			return rc;
		k = send(c->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k < 0) {
			if (errno == EINTR || errno == EAGAIN ||
			    errno == EWOULDBLOCK)
				continue;
			return trouble(c, "%s", strerror(errno));
		}
		buf += k;
		len -= (size_t)k;
	}
	return 0;
}

/* Reads one line (the newline dropped) into a NUL-terminated buffer. */
static int
conn_recv_line(const struct conn *c, char **line, size_t *len)
{
	size_t cap = 0, n = 0;
	char *buf = NULL;

	for (;;) {
		char *nl;
		ssize_t k;
		int rc;

		if (cap - n < 4096) {
			char *t;

			if (cap >= LBCTL_RESPONSE_MAX) {
				free(buf);
				return trouble(c, "answer longer than %u bytes",
					       LBCTL_RESPONSE_MAX);
			}
			cap = cap == 0 ? 65536 : cap * 2;
			t = realloc(buf, cap + 1);
			if (t == NULL) {
				free(buf);
				return trouble(c, "out of memory");
			}
			buf = t;
		}
		rc = conn_poll(c, POLLIN);
		if (rc != 0) {
			free(buf);
			return rc;
		}
		k = recv(c->fd, buf + n, cap - n, MSG_DONTWAIT);
		if (k < 0) {
			if (errno == EINTR || errno == EAGAIN ||
			    errno == EWOULDBLOCK)
				continue;
			free(buf);
			return trouble(c, "%s", strerror(errno));
		}
		if (k == 0) {
			free(buf);
			return trouble(c, "connection closed %s",
				       n == 0 ? "without an answer"
					      : "in the middle of the answer");
		}
		nl = memchr(buf + n, '\n', (size_t)k);
		n += (size_t)k;
		if (nl != NULL) {
			*nl = '\0';
			*line = buf;
			*len = (size_t)(nl - buf);
			return 0;
		}
	}
}

/* ---- response ------------------------------------------------------------ */

/* Writes @p s (@p n bytes) and a newline unless it ends with one. */
static void
put_text(const char *s, size_t n)
{
	if (n == 0)
		return;
	fwrite(s, 1, n, stdout);
	if (s[n - 1] != '\n')
		fputc('\n', stdout);
}

static int
print_json(json_t *v)
{
	if (json_dumpf(v, stdout, JSON_INDENT(2) | JSON_ENCODE_ANY) != 0) {
		say("cannot print the answer as JSON");
		return EXIT_REFUSED;
	}
	fputc('\n', stdout);
	return 0;
}

/* Checks and prints one response; returns the exit status. */
static int
handle_response(const struct conn *c, const char *line, size_t len, bool json,
		json_t **data)
{
	json_t *resp, *v, *ok, *x;
	json_error_t jerr;
	int rc = 0;

	resp = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL,
			  &jerr);
	if (resp == NULL)
		return trouble(c, "malformed answer: %s (column %d)", jerr.text,
			       jerr.column);
	if (!json_is_object(resp)) {
		rc = trouble(c, "malformed answer: not a JSON object");
		goto out;
	}
	v = json_object_get(resp, "v");
	if (!json_is_integer(v)) {
		rc = trouble(c, "malformed answer: no protocol version");
		goto out;
	}
	if (json_integer_value(v) != LBCTL_PROTO) {
		rc = trouble(c,
			     "it speaks protocol version %" JSON_INTEGER_FORMAT
			     ", this lbctl speaks %d",
			     json_integer_value(v), LBCTL_PROTO);
		goto out;
	}
	ok = json_object_get(resp, "ok");
	if (!json_is_boolean(ok)) {
		rc = trouble(c, "malformed answer: no \"ok\"");
		goto out;
	}
	if (!json_is_true(ok)) {
		x = json_object_get(resp, "error");
		if (json_is_string(x) && json_string_length(x) > 0)
			say("%s", json_string_value(x));
		else
			say("lb-control refused the command without saying "
			    "why");
		rc = EXIT_REFUSED;
		goto out;
	}
	if (data != NULL) {
		x = json_object_get(resp, "data");
		*data = json_incref(x != NULL ? x : json_null());
		goto out;
	}
	if (json) {
		x = json_object_get(resp, "data");
		if (x != NULL && !json_is_null(x)) {
			rc = print_json(x);
		} else {
			json_t *o = json_pack("{s:b}", "ok", 1);

			rc = o != NULL ? print_json(o) : EXIT_REFUSED;
			json_decref(o);
		}
		goto out;
	}
	x = json_object_get(resp, "text");
	if (x != NULL && !json_is_null(x) && !json_is_string(x)) {
		rc = trouble(c, "malformed answer: \"text\" is not a string");
		goto out;
	}
	if (json_is_string(x))
		put_text(json_string_value(x), json_string_length(x));
out:
	json_decref(resp);
	return rc;
}

/*
 * Sends @p req and handles the answer; returns the exit status. With
 * @p unreached (a `help` request), *unreached says whether connecting
 * failed, and the message says that the built-in help follows.
 */
static int
call(const struct lbctl_opts *o, json_t *req, bool *unreached, json_t **data)
{
	struct conn c = {
		.path = o->socket,
		.fd = -1,
		.timeout_s = o->timeout_s,
		.builtin_help = unreached != NULL,
	};
	size_t len, rlen = 0;
	char *buf, *line = NULL;
	int rc;

	/* Compact: one line, since strings escape their newlines. */
	buf = json_dumps(req, JSON_COMPACT);
	if (buf == NULL) {
		say("out of memory");
		return EXIT_REFUSED;
	}
	len = strlen(buf);
	if (len > LBCTL_REQUEST_MAX) {
		say("request of %zu bytes is larger than the %u bytes "
		    "lb-control accepts; split the file",
		    len, LBCTL_REQUEST_MAX);
		free(buf);
		return EXIT_REFUSED;
	}
	buf[len] = '\n'; /* json_dumps' NUL becomes the line's end */
	rc = conn_open(&c);
	if (rc == 0)
		rc = conn_send(&c, buf, len + 1);
	free(buf);
	if (rc == 0)
		rc = conn_recv_line(&c, &line, &rlen);
	if (rc == 0) {
		rc = handle_response(&c, line, rlen, o->json, data);
		free(line);
	}
	if (c.fd >= 0)
		close(c.fd);
	if (unreached != NULL)
		*unreached = c.unreached;
	return rc;
}

int
lbctl_data(const struct lbctl_opts *o, int argc, char **argv, json_t **data)
{
	json_t *req = request_argv(argc, argv, true, 0);
	int rc;

	*data = NULL;
	if (req == NULL)
		return EXIT_TROUBLE;
	rc = call(o, req, NULL, data);
	json_decref(req);
	return rc;
}

/*
 * The columns tables are fitted to: $COLUMNS when it is a number, as ls
 * does, else the terminal's when the answer goes to one, else no limit
 * (a pipe or a file gets every column).
 */
static unsigned int
term_width(void)
{
	const char *c = getenv("COLUMNS");
	struct winsize w;

	if (c != NULL && c[0] != '\0') {
		char *end;
		unsigned long v = strtoul(c, &end, 10);

		if (*end == '\0' && v > 0 && v <= LBCTL_WIDTH_MAX)
			return (unsigned int)v;
	}
	if (isatty(STDOUT_FILENO) &&
	    ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 0)
		return w.ws_col;
	return 0;
}

/* ---- help without lb-control --------------------------------------------- */

#ifdef LBCTL_CMD_TABLE
/* lb-control's registry as built with this lbctl (lb-control --cmd-table). */
extern const struct lb_cmd_def lb_cmd_table[];
extern const unsigned int lb_cmd_table_n;

/* The handler of every command of the built-in registry, which only
 * answers `help`: lb-control alone runs commands. */
static int
only_lb_control(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	(void)ctx;
	(void)argc;
	(void)argv;
	return lb_cmd_error(out, -ENOTCONN, "only lb-control runs commands");
}

/* `help [COMMAND]` as lb-control would answer it; the exit status. */
static int
builtin_help(int argc, char **argv)
{
	struct lb_cmd_reg *r = lb_cmd_reg_create();
	struct lb_cmd_out out;
	int rc = r != NULL ? 0 : -ENOMEM;

	lb_cmd_out_init(&out);
	for (unsigned int i = 0; i < lb_cmd_table_n && rc == 0; i++) {
		struct lb_cmd_def d = lb_cmd_table[i];

		d.fn = only_lb_control;
		rc = lb_cmd_register(r, &d, NULL);
	}
	if (rc == 0)
		rc = lb_cmd_help(r, argc - 1, argv + 1, &out);
	if (rc == 0)
		put_text(lb_cmd_out_text(&out), out.len);
	else if (lb_cmd_out_errmsg(&out)[0] != '\0')
		say("%s", lb_cmd_out_errmsg(&out));
	else
		say("cannot build the help: %s", strerror(-rc));
	lb_cmd_out_free(&out);
	lb_cmd_reg_free(r);
	return rc == 0 ? 0 : EXIT_REFUSED;
}
#endif

/* ---- main ---------------------------------------------------------------- */

static int
parse_timeout(const char *s, unsigned int *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' ||
	    v > LBCTL_TIMEOUT_MAX_S) {
		say("--timeout: '%s' is not a number of seconds in 0..%u", s,
		    LBCTL_TIMEOUT_MAX_S);
		return -EINVAL;
	}
	*out = (unsigned int)v;
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"socket", required_argument, NULL, 's'},
		{"json", no_argument, NULL, 'j'},
		{"wide", no_argument, NULL, 'w'},
		{"timeout", required_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	struct lbctl_opts o = {.timeout_s = LBCTL_TIMEOUT_DEFAULT_S};
	json_t *req = NULL;
	bool wide = false;
	int opt, rc;

	o.socket = getenv(LBCTL_SOCKET_ENV);
	if (o.socket == NULL || o.socket[0] == '\0')
		o.socket = LBCTL_SOCKET_DEFAULT;
	/* '+': options end at the command, whose arguments are its own. */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+s:jwt:hV", longopts, NULL)) !=
	       -1) {
		switch (opt) {
		case 's':
			o.socket = optarg;
			break;
		case 'j':
			o.json = true;
			break;
		case 'w':
			wide = true;
			break;
		case 't':
			if (parse_timeout(optarg, &o.timeout_s) != 0)
				return EXIT_TROUBLE;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("lbctl %s (protocol %d)\n", LB_VERSION,
			       LBCTL_PROTO);
			return 0;
		default:
			if (optopt != 0 && strchr("st", optopt) != NULL)
				say("option -%c needs a value", optopt);
			else if (optopt != 0)
				say("unknown option -%c; try 'lbctl --help'",
				    optopt);
			else
				say("unknown option '%s'; try 'lbctl --help'",
				    argv[optind - 1]);
			return EXIT_TROUBLE;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 0) {
		usage(stderr);
		return EXIT_TROUBLE;
	}
	if (strcmp(argv[0], "top") == 0)
		return lbctl_top(&o, argc, argv);
	if (strcmp(argv[0], "apply") == 0) {
		if (argc != 2) {
			say("usage: lbctl apply FILE");
			return EXIT_TROUBLE;
		}
		rc = request_apply(argv[1], &req);
		if (rc != 0)
			return rc;
	} else {
		/* `lbctl backend list --wide` reads better than the
		 * option before the command; no command takes the word. */
		if (argc > 1 && strcmp(argv[argc - 1], "--wide") == 0) {
			wide = true;
			argc--;
		}
		req = request_argv(argc, argv, o.json,
				   wide || o.json ? 0 : term_width());
		if (req == NULL)
			return EXIT_TROUBLE;
	}
#ifdef LBCTL_CMD_TABLE
	if (strcmp(argv[0], "help") == 0) {
		bool unreached = false;

		rc = call(&o, req, &unreached, NULL);
		if (unreached)
			rc = builtin_help(argc, argv);
	} else {
		rc = call(&o, req, NULL, NULL);
	}
#else
	rc = call(&o, req, NULL, NULL);
#endif
	json_decref(req);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		say("cannot write the answer: %s", strerror(errno));
		if (rc == 0)
			rc = EXIT_REFUSED;
	}
	return rc;
}
