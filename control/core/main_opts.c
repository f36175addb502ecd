/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-control's command line: its own options (after "--"), and the
 * EAL's arguments with --proc-type=secondary.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "main_priv.h"
#include "privs.h"

#define DEF_SOCKET "/run/sluice/lb-control.sock"
#define DEF_STATE "/var/lib/sluice/state.conf"
#define DEF_METRICS "127.0.0.1:9470"
#define DEF_TICK_MS 100u
#define DEF_SOCK_MODE 0600u

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: lb-control [EAL options] -- [options]\n"
		"       lb-control --markdown\n"
		"       lb-control --cmd-table\n"
		"\n"
		"Attaches to lb-dataplane as a DPDK secondary process (EAL "
		"options as the\n"
		"dataplane's: the same --file-prefix; typically "
		"--file-prefix P --no-pci -l 0).\n"
		"\n"
		"options:\n"
		"  --socket PATH       API socket (default %s)\n"
		"  --socket-mode MODE  its permissions, octal (default "
		"%04o: owner only)\n"
		"  --socket-group GROUP\n"
		"                      the socket's group, name or number "
		"(with "
		"--socket-mode 0660)\n"
		"  --keep-caps LIST|default|all\n"
		"                      capabilities kept once serving, e.g. "
		"net_admin,sys_admin\n"
		"                      (default: see docs/security.md); all "
		"drops nothing\n"
		"  --state FILE        state file (default %s)\n"
		"  --metrics ADDR:PORT|off\n"
		"                      Prometheus endpoint /metrics (default "
		"%s)\n"
		"  --tick MS           feedback and health period, 1..10000 "
		"(default %u)\n"
		"  --redis HOST:PORT   Redis of the admission cluster tier "
		"(services with\n"
		"                      admit-cluster open|closed) and of "
		"scaling leases\n"
		"                      (scale set ... cluster on)\n"
		"  --scale-id NAME     this lb-control's name in scaling "
		"leases (default:\n"
		"                      the host name)\n"
		"  --acl-auto REJECTS/WINDOW[,ttl=DURATION][,max=N]\n"
		"                      deny sources the admission control "
		"keeps rejecting\n"
		"                      in the NIC's driver (XDP; default "
		"off)\n"
		"  --markdown          print the command reference in "
		"Markdown and exit\n"
		"  --cmd-table         print the commands and their help as "
		"C source (lbctl's\n"
		"                      built-in help) and exit\n"
		"  -h, --help          this text\n",
		DEF_SOCKET, DEF_SOCK_MODE, DEF_STATE, DEF_METRICS, DEF_TICK_MS);
}

/* The options with a value to check: --socket-mode, --socket-group,
 * --keep-caps and --tick. @return 0 or -EINVAL (said). */
static int
parse_value(int c, const char *arg, struct lb_control_opts *o)
{
	char err[128];
	unsigned long v;
	char *end;

	switch (c) {
	case 'M':
		errno = 0;
		v = strtoul(arg, &end, 8);
		if (errno != 0 || *arg == '\0' || *end != '\0' || v > 0777) {
			lb_control_log("--socket-mode: '%s' is not an octal "
				       "mode 0..0777",
				       arg);
			return -EINVAL;
		}
		o->sock_mode = (mode_t)v;
		break;
	case 'G':
	case 'C':
		o->keep_all = c == 'C' && strcmp(arg, "all") == 0;
		if (o->keep_all)
			break;
		if ((c == 'G' ? lb_privs_group(arg, &o->sock_gid, err,
					       sizeof(err))
			      : lb_privs_parse(arg, &o->keep_caps, err,
					       sizeof(err))) != 0) {
			lb_control_log("--%s: %s",
				       c == 'G' ? "socket-group" : "keep-caps",
				       err);
			return -EINVAL;
		}
		break;
	case 't':
		errno = 0;
		v = strtoul(arg, &end, 10);
		if (errno != 0 || *arg == '\0' || *end != '\0' || v < 1 ||
		    v > 10000) {
			lb_control_log("--tick: '%s' is not a number of ms in "
				       "1..10000",
				       arg);
			return -EINVAL;
		}
		o->tick_ms = (unsigned int)v;
		break;
	}
	return 0;
}

static int
parse_opts(int argc, char **argv, struct lb_control_opts *o)
{
	static const struct option lo[] = {
		{"socket", required_argument, NULL, 's'},
		{"socket-mode", required_argument, NULL, 'M'},
		{"socket-group", required_argument, NULL, 'G'},
		{"keep-caps", required_argument, NULL, 'C'},
		{"state", required_argument, NULL, 'S'},
		{"metrics", required_argument, NULL, 'm'},
		{"tick", required_argument, NULL, 't'},
		{"redis", required_argument, NULL, 'R'},
		{"scale-id", required_argument, NULL, 'I'},
		{"markdown", no_argument, NULL, 'D'},
		{"cmd-table", no_argument, NULL, 'T'},
		{"acl-auto", required_argument, NULL, 'A'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	optind = 1;
	opterr = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 's':
			o->socket = optarg;
			break;
		case 'S':
			o->state = optarg;
			break;
		case 'm':
			o->metrics = strcmp(optarg, "off") == 0 ? NULL : optarg;
			break;
		case 'M':
		case 'G':
		case 'C':
		case 't':
			if (parse_value(c, optarg, o) != 0)
				return -EINVAL;
			break;
		case 'A':
			o->acl_auto = optarg;
			break;
		case 'D':
			o->markdown = true;
			break;
		case 'T':
			o->cmd_table = true;
			break;
		case 'R':
			o->redis = optarg;
			break;
		case 'I':
			o->scale_id = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_SUCCESS);
		default:
			return -EINVAL;
		}
	}
	if (optind != argc) {
		lb_control_log("unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

/*
 * The EAL's arguments: the ones given, and --proc-type=secondary unless
 * given. lb-control must never become a primary: it would start a DPDK
 * runtime of its own instead of attaching to the dataplane's.
 */
char **
lb_control_eal_args(int argc, char **argv, int *eargc)
{
	char **e = calloc((size_t)argc + 2, sizeof(*e));
	bool typed = false;
	int n = 0;

	if (e == NULL)
		return NULL;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (strncmp(a, "--proc-type", 11) == 0) {
			const char *t = a[11] == '='   ? a + 12
					: i + 1 < argc ? argv[i + 1]
						       : "";

			if (strcmp(t, "secondary") != 0) {
				lb_control_log(
					"lb-control runs as a DPDK secondary "
					"process, not --proc-type %s",
					t);
				free(e);
				return NULL;
			}
			typed = true;
		}
		e[n++] = argv[i];
	}
	if (!typed)
		e[n++] = "--proc-type=secondary";
	e[n] = NULL;
	*eargc = n;
	return e;
}

int
lb_control_cmdline(struct lb_control *m, int argc, char **argv, int *dd)
{
	int rc;

	m->o = (struct lb_control_opts){
		.socket = DEF_SOCKET,
		.state = DEF_STATE,
		.metrics = DEF_METRICS,
		.tick_ms = DEF_TICK_MS,
		.sock_mode = DEF_SOCK_MODE,
		.sock_gid = (gid_t)-1,
		.keep_caps = lb_privs_keep_default(),
	};
	m->argv0 = argv;
	m->rt_lock = -1;
	for (*dd = 1; *dd < argc && strcmp(argv[*dd], "--") != 0; (*dd)++)
		;
	/* lb-control's own options come after "--"; --markdown,
	 * --cmd-table and --help alone need no EAL. */
	if (argc == 2 &&
	    (strcmp(argv[1], "--markdown") == 0 ||
	     strcmp(argv[1], "--cmd-table") == 0 ||
	     strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		*dd = 0;
	}
	if (*dd < argc) {
		char **ours = calloc((size_t)(argc - *dd) + 1, sizeof(*ours));

		if (ours == NULL)
			return EXIT_FAILURE;
		ours[0] = argv[0];
		for (int i = *dd + 1; i < argc; i++)
			ours[i - *dd] = argv[i];
		rc = parse_opts(argc - *dd, ours, &m->o);
		free(ours);
		if (rc != 0) {
			usage(stderr);
			return 2;
		}
	}
	return 0;
}
