/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `lbctl top`: a live view of the services and their backends in a
 * terminal, redrawn every second with plain ANSI sequences, sized for 80
 * columns. It reads what `service list`, `backend list`, `governor show`
 * and `scale show` give as data (and the last `scale history` decision
 * of each autoscaled service shown), and makes rates of their counters
 * between two reads: new flows a second, each backend's share of its service's
 * new flows, errors (failed trials and 5xx responses) a second.
 *
 * Keys: q quits, s changes the order, f shows one service after another
 * (then all again).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "lbctl.h"

#define TOP_REFRESH_MS 1000
#define TOP_COLS_DEFAULT 80u
#define TOP_ROWS_DEFAULT 24u
#define TOP_LINE_MAX 256u

enum top_sort { SORT_NAME, SORT_FLOWS, SORT_ERRORS, SORT_SHARE, SORT_NB };
static const char *const sort_names[SORT_NB] = {"name", "flows", "errors",
						"share"};

struct row {
	const char *name;
	json_t *j;
	double rate;  /* new flows a second; NaN: not known yet */
	double err;   /* errors a second */
	double share; /* of its service's new flows */
};

struct top {
	const struct lbctl_opts *o;
	enum top_sort sort;
	const char *filter; /* substring of the service's name, or NULL */
	int pick;	    /* f: the service shown alone, -1: all */
	json_t *prev; /* "SERVICE|BACKEND" -> {f: flows, e: errors}, last read
		       */
	struct timespec prev_t;
	bool have_prev;
	unsigned int cols, rows;
	bool ansi; /* redraw in place; else plain lines (--once) */
};

static volatile sig_atomic_t top_stop;

static void
on_signal(int sig)
{
	(void)sig;
	top_stop = 1;
}

static uint64_t
ju(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
}

static double
jf(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *
js(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s != NULL ? s : "-";
}

/* The rates of @p key since the last read, and its counters noted for
 * the next one (in @p next). */
static void
rates(struct top *t, json_t *next, const char *key, uint64_t flows,
      uint64_t errs, double dt, struct row *r)
{
	json_t *p = json_object_get(t->prev, key);
	uint64_t f0 = ju(p, "f"), e0 = ju(p, "e");

	r->rate = r->err = NAN;
	if (p != NULL && dt > 0 && flows >= f0 && errs >= e0) {
		r->rate = (double)(flows - f0) / dt;
		r->err = (double)(errs - e0) / dt;
	}
	json_object_set_new(next, key,
			    json_pack("{s:I,s:I}", "f", (json_int_t)flows, "e",
				      (json_int_t)errs));
}

/* What cmp_rows() orders by: qsort() takes no argument (lbctl has one
 * thread). */
static enum top_sort cmp_sort;

static int
cmp_rows(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	double u = 0, v = 0;

	switch (cmp_sort) {
	case SORT_FLOWS:
		u = x->rate, v = y->rate;
		break;
	case SORT_ERRORS:
		u = x->err, v = y->err;
		break;
	case SORT_SHARE:
		u = x->share, v = y->share;
		break;
	default:
		return strcmp(x->name, y->name);
	}
	u = isnan(u) ? -1 : u;
	v = isnan(v) ? -1 : v;
	if (u != v)
		return u > v ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* "-" for nothing; no decimals from 1000 up, to keep the columns. */
static void
fmt_num(char *buf, size_t len, double v, int prec)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.*f", v >= 1000 ? 0 : prec, v);
}

/* Appends one line to @p f, cut to the terminal's width; on a terminal,
 * no more than fit above its last line (a line there would scroll the
 * screen). */
static void put(struct top *t, FILE *f, unsigned int *lines, const char *fmt,
		...) __attribute__((format(printf, 4, 5)));

static void
put(struct top *t, FILE *f, unsigned int *lines, const char *fmt, ...)
{
	char line[TOP_LINE_MAX];
	va_list ap;
	size_t k;

	if (t->ansi && *lines + 1 >= t->rows)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	k = strlen(line);
	if (t->ansi && k > t->cols)
		k = t->cols;
	fprintf(f, "%.*s%s\n", (int)k, line, t->ansi ? "\033[K" : "");
	(*lines)++;
}

static void
term_size(struct top *t)
{
	struct winsize w;

	t->cols = TOP_COLS_DEFAULT;
	t->rows = TOP_ROWS_DEFAULT;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 0) {
		t->cols = w.ws_col < TOP_LINE_MAX - 1 ? w.ws_col
						      : TOP_LINE_MAX - 1;
		t->rows = w.ws_row > 0 ? w.ws_row : TOP_ROWS_DEFAULT;
	}
}

/* The rows of what lb-control gives under @p member of @p d (services or
 * backends), with their rates; their counters go to @p next. */
static struct row *
rows_of(struct top *t, json_t *d, const char *member, json_t *next, double dt,
	size_t *n)
{
	json_t *arr = json_object_get(d, member), *x;
	struct row *r = calloc(json_array_size(arr) + 1, sizeof(*r));
	size_t i;

	*n = 0;
	if (r == NULL)
		return NULL;
	json_array_foreach(arr, i, x)
	{
		char key[128];
		bool be = json_object_get(x, "backend") != NULL;

		r[i].j = x;
		r[i].name = js(x, be ? "backend" : "service");
		r[i].share = NAN;
		snprintf(key, sizeof(key), "%s|%s", js(x, "service"),
			 be ? r[i].name : "");
		rates(t, next, key, ju(x, "flows_total"),
		      ju(x, "errors") + ju(x, "http_5xx"),
		      t->have_prev ? dt : 0, &r[i]);
	}
	*n = i;
	return r;
}

/* Each backend's share of the new flows of its service's backends. */
static void
shares(struct row *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *svc = js(b[i].j, "service");
		double sum = 0;

		for (size_t k = 0; k < n; k++)
			if (!isnan(b[k].rate) &&
			    strcmp(js(b[k].j, "service"), svc) == 0)
				sum += b[k].rate;
		if (sum > 0 && !isnan(b[i].rate))
			b[i].share = b[i].rate / sum;
	}
}

static double
gov_m(json_t *gov, const char *svc)
{
	json_t *x;
	size_t i;

	json_array_foreach(json_object_get(gov, "services"), i,
			   x) if (strcmp(js(x, "service"), svc) ==
				  0) return jf(x, "m");
	return NAN;
}

static bool
shown(const struct top *t, const char *svc, size_t idx)
{
	if (t->filter != NULL && strstr(svc, t->filter) == NULL)
		return false;
	return t->pick < 0 || (size_t)t->pick == idx;
}

/* " 2" for an action on 2 instances; nothing for none. */
static const char *
count_str(json_int_t n, char *buf, size_t len)
{
	if (n > 0)
		snprintf(buf, len, " %" JSON_INTEGER_FORMAT, n);
	else
		buf[0] = '\0';
	return buf;
}

/* The pool an autoscaler entry scales, NULL for the service's own. */
static const char *
scale_pool(json_t *sc)
{
	const char *p = json_string_value(json_object_get(sc, "pool"));

	return p == NULL || strcmp(p, "default") == 0 ? NULL : p;
}

/* An autoscaler's line: its instances by state and its last decision
 * with what it was made on; a named pool's policy says which pool. */
static void
scale_line(struct top *t, FILE *f, unsigned int *lines, json_t *sc)
{
	json_t *c = json_object_get(sc, "counts"),
	       *x = json_object_get(sc, "last");
	char buf[TOP_LINE_MAX], cnt[24], who[80];
	const char *pool = scale_pool(sc);
	size_t n = 0;
	const char *k;
	json_t *v;

	buf[0] = '\0';
	json_object_foreach(c, k, v)
	{
		if (json_integer_value(v) == 0 || n >= sizeof(buf))
			continue;
		n += (size_t)snprintf(buf + n, sizeof(buf) - n,
				      "%s%" JSON_INTEGER_FORMAT " %s",
				      n > 0 ? ", " : "", json_integer_value(v),
				      k);
	}
	snprintf(who, sizeof(who), "scale%s%s%s", pool != NULL ? " pool " : "",
		 pool != NULL ? pool : "",
		 json_is_true(json_object_get(sc, "paused")) ? " (paused)"
							     : "");
	if (x == NULL)
		put(t, f, lines, "  %s: %s", who, n > 0 ? buf : "no instances");
	else
		put(t, f, lines,
		    "  %s: %s; last %s%s at load %.3f, %.0fs ago: %s", who,
		    n > 0 ? buf : "no instances", js(x, "action"),
		    count_str(json_integer_value(json_object_get(x, "count")),
			      cnt, sizeof(cnt)),
		    jf(x, "load"), jf(x, "ago_s"), js(x, "reason"));
}

/* The next autoscaler entry of service @p svc from *@p i on: the
 * service's own pool's policy and its named pools' (`scale set ... pool
 * NAME`), in the order `scale show` gives them; NULL after the last. */
static json_t *
scale_next(json_t *scale, const char *svc, size_t *i)
{
	json_t *all = json_object_get(scale, "services"), *x;

	while ((x = json_array_get(all, *i)) != NULL) {
		(*i)++;
		if (strcmp(js(x, "service"), svc) == 0)
			return x;
	}
	return NULL;
}

static void
render(struct top *t, struct row *sr, size_t nsv, struct row *br, size_t nbe,
       json_t *gov, json_t *scale, FILE *f)
{
	unsigned int lines = 0;
	char when[16], r[16], e[16], l[16], m[16], sh[16], spl[16], p99[16];
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	put(t, f, &lines,
	    "sluice top %s  %zu services, %zu backends  "
	    "sort %s",
	    when, nsv, nbe, sort_names[t->sort]);
	put(t, f, &lines, "service: %s%s%s%s",
	    t->pick >= 0 && nsv > 0 ? sr[0].name : "all",
	    t->filter != NULL ? " matching " : "",
	    t->filter != NULL ? t->filter : "",
	    t->ansi ? "  (q quit, s sort, f next service)" : "");
	put(t, f, &lines, "%-22s %8s %7s %9s %7s %6s %6s", "SERVICE", "NEW/S",
	    "ACTIVE", "FLOWS", "ERR/S", "LOAD", "GOV-M");
	for (size_t i = 0; i < nsv; i++) {
		json_t *spl_o = json_object_get(sr[i].j, "spl"), *x;

		fmt_num(r, sizeof(r), sr[i].rate, 1);
		fmt_num(e, sizeof(e), sr[i].err, 1);
		fmt_num(l, sizeof(l),
			json_is_true(json_object_get(sr[i].j, "http"))
				? jf(spl_o, "total")
				: NAN,
			3);
		fmt_num(m, sizeof(m), gov_m(gov, sr[i].name), 2);
		put(t, f, &lines,
		    "%-22s %8s %7" PRIu64 " %9" PRIu64 " %7s %6s %6s",
		    sr[i].name, r, ju(sr[i].j, "flows_active"),
		    ju(sr[i].j, "flows_total"), e, l, m);
		for (size_t j = 0; (x = scale_next(scale, sr[i].name, &j));)
			scale_line(t, f, &lines, x);
		put(t, f, &lines, "  %-21s %-8s %-7s %6s %6s %6s %5s %6s",
		    "BACKEND", "STATE", "HEALTH", "SHARE", "ACTIVE", "ERR/S",
		    "SPL", "P99MS");
		for (size_t k = 0; k < nbe; k++) {
			json_t *l7 = json_object_get(br[k].j, "l7");

			if (strcmp(js(br[k].j, "service"), sr[i].name) != 0)
				continue;
			if (isnan(br[k].share))
				snprintf(sh, sizeof(sh), "-");
			else
				snprintf(sh, sizeof(sh), "%.1f%%",
					 100 * br[k].share);
			fmt_num(e, sizeof(e), br[k].err, 1);
			fmt_num(spl, sizeof(spl), jf(l7, "spl"), 3);
			fmt_num(p99, sizeof(p99),
				ju(l7, "window_timed") > 0 ? jf(l7, "p99_ms")
							   : NAN,
				1);
			put(t, f, &lines,
			    "  %-21s %-8s %-7s %6s %6" PRIu64 " %6s %5s %6s",
			    br[k].name, js(br[k].j, "state"),
			    js(br[k].j, "health"), sh,
			    ju(br[k].j, "flows_active"), e, spl, p99);
		}
	}
}

/* Sets "last" of autoscaler entry @p sc of service @p svc to its last
 * decision (`scale history SVC [pool NAME] 1`). */
static int
last_decision(struct top *t, const char *svc, json_t *sc)
{
	char name[128], *words[7] = {"scale", "history", name, NULL};
	const char *pool = scale_pool(sc);
	json_t *h = NULL;
	int n = 4, rc;

	snprintf(name, sizeof(name), "%s", svc);
	words[3] = strchr(name, ' ');
	if (words[3] == NULL)
		return 0;
	*words[3]++ = '\0';
	if (pool != NULL) {
		words[n++] = "pool";
		words[n++] = (char *)pool;
	}
	words[n++] = "1";
	rc = lbctl_data(t->o, n, words, &h);
	json_object_set(sc, "last",
			json_array_get(json_object_get(h, "decisions"), 0));
	json_decref(h);
	return rc;
}

/* Reads lb-control and, when @p show, draws one screen; @return 0 or the
 * exit status. */
static int
draw(struct top *t, bool show)
{
	char *argv[4][2] = {{"service", "list"},
			    {"backend", "list"},
			    {"governor", "show"},
			    {"scale", "show"}};
	json_t *d[4] = {NULL, NULL, NULL, NULL}, *next = json_object();
	struct row *sr = NULL, *br = NULL;
	size_t nsv = 0, nbe = 0, len = 0, keep = 0;
	char *screen = NULL;
	struct timespec now;
	FILE *f = NULL;
	double dt;
	int rc = next != NULL ? 0 : EXIT_TROUBLE;

	for (int i = 0; i < 4 && rc == 0; i++)
		rc = lbctl_data(t->o, 2, argv[i], &d[i]);
	if (rc != 0)
		goto out;
	clock_gettime(CLOCK_MONOTONIC, &now);
	dt = (double)(now.tv_sec - t->prev_t.tv_sec) +
	     (double)(now.tv_nsec - t->prev_t.tv_nsec) / 1e9;
	sr = rows_of(t, d[0], "services", next, dt, &nsv);
	br = rows_of(t, d[1], "backends", next, dt, &nbe);
	if (sr == NULL || br == NULL) {
		rc = EXIT_TROUBLE;
		goto out;
	}
	shares(br, nbe);
	/* The services shown, in the order asked for. */
	if (t->pick >= 0 && (size_t)t->pick >= nsv)
		t->pick = -1;
	for (size_t i = 0; i < nsv; i++)
		if (shown(t, sr[i].name, i))
			sr[keep++] = sr[i];
	cmp_sort = t->sort == SORT_SHARE ? SORT_FLOWS : t->sort;
	qsort(sr, keep, sizeof(*sr), cmp_rows);
	cmp_sort = t->sort;
	qsort(br, nbe, sizeof(*br), cmp_rows);
	/* The last decision of each autoscaler of the services shown. */
	for (size_t i = 0; i < keep && rc == 0; i++) {
		json_t *sc;

		for (size_t j = 0;
		     rc == 0 && (sc = scale_next(d[3], sr[i].name, &j));)
			rc = last_decision(t, sr[i].name, sc);
	}
	if (rc != 0)
		goto out;
	term_size(t);
	/* The screen is written at once, so that it never shows half. */
	f = open_memstream(&screen, &len);
	if (f == NULL) {
		rc = EXIT_TROUBLE;
		goto out;
	}
	render(t, sr, keep, br, nbe, d[2], d[3], f);
	if (fclose(f) != 0 || screen == NULL) {
		rc = EXIT_TROUBLE;
		goto out;
	}
	if (show && t->ansi)
		printf("\033[H%s\033[J", screen);
	else if (show)
		fputs(screen, stdout);
	fflush(stdout);
	json_decref(t->prev);
	t->prev = next;
	next = NULL;
	t->prev_t = now;
	t->have_prev = true;
out:
	free(screen);
	free(sr);
	free(br);
	json_decref(next);
	for (int i = 0; i < 4; i++)
		json_decref(d[i]);
	return rc;
}

/* Waits for a key until @p ms passed; @return the key, 0 for none. */
static int
key_wait(int ms)
{
	struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
	char c;

	if (poll(&p, 1, ms) <= 0)
		return 0;
	if (read(STDIN_FILENO, &c, 1) != 1)
		return 'q'; /* the terminal went away */
	return (unsigned char)c;
}

static void
top_usage(void)
{
	say("usage: lbctl top [--sort name|flows|errors|share] [--once] "
	    "[SERVICE]");
}

int
lbctl_top(const struct lbctl_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"sort", required_argument, NULL, 'S'},
		{"once", no_argument, NULL, '1'},
		{NULL, 0, NULL, 0},
	};
	struct top t = {.o = o, .pick = -1};
	struct termios saved, raw;
	struct sigaction sa = {.sa_handler = on_signal};
	bool once = false, tty;
	char filter[256] = "";
	int opt, rc;

	optind = 0; /* a new scan: main() used getopt already */
	while ((opt = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		if (opt == '1') {
			once = true;
			continue;
		}
		if (opt != 'S') {
			top_usage();
			return EXIT_TROUBLE;
		}
		for (t.sort = 0; t.sort < SORT_NB; t.sort++)
			if (strcmp(optarg, sort_names[t.sort]) == 0)
				break;
		if (t.sort == SORT_NB) {
			say("--sort: '%s' is not name, flows, errors or share",
			    optarg);
			return EXIT_TROUBLE;
		}
	}
	/* "tcp 10.0.0.1:80" may come as one word or two. */
	for (int i = optind; i < argc; i++) {
		size_t k = strlen(filter);

		snprintf(filter + k, sizeof(filter) - k, "%s%s",
			 k > 0 ? " " : "", argv[i]);
	}
	t.filter = filter[0] != '\0' ? filter : NULL;
	if (once) {
		/* Two reads a refresh apart: rates need both. */
		rc = draw(&t, false);
		if (rc == 0) {
			nanosleep(&(struct timespec){.tv_sec = 1}, NULL);
			rc = draw(&t, true);
		}
		json_decref(t.prev);
		return rc;
	}
	tty = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0;
	if (!tty || !isatty(STDOUT_FILENO)) {
		say("lbctl top needs a terminal; --once prints one screen");
		return EXIT_TROUBLE;
	}
	raw = saved;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	t.ansi = true;
	/* The alternate screen, without a cursor: the shell's screen comes
	 * back as it was. */
	fputs("\033[?1049h\033[?25l\033[2J", stdout);
	rc = 0;
	while (!top_stop && rc == 0) {
		struct timespec a, b;
		int k = 0, left = TOP_REFRESH_MS;

		rc = draw(&t, true);
		/* lb-control restarting, or gone a while: say so over the
		 * last screen and try again, rather than leave. */
		if (rc == EXIT_TROUBLE) {
			printf("\033[H\033[7mlb-control does not answer at %s;"
			       " trying again every second (q quits)\033[0m"
			       "\033[K\r\n\033[K",
			       o->socket);
			fflush(stdout);
			t.have_prev = false;
			rc = 0;
		}
		clock_gettime(CLOCK_MONOTONIC, &a);
		while (rc == 0 && !top_stop && left > 0) {
			k = key_wait(left);
			if (k == 'q' || k == 'Q')
				top_stop = 1;
			else if (k == 's')
				t.sort = (t.sort + 1) % SORT_NB;
			else if (k == 'f')
				t.pick++;
			if (k == 's' || k == 'f')
				break;
			clock_gettime(CLOCK_MONOTONIC, &b);
			left = TOP_REFRESH_MS -
			       (int)((b.tv_sec - a.tv_sec) * 1000 +
				     (b.tv_nsec - a.tv_nsec) / 1000000);
		}
	}
	fputs("\033[?25h\033[?1049l", stdout);
	fflush(stdout);
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved);
	json_decref(t.prev);
	return rc;
}
