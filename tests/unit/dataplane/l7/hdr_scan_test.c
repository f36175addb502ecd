/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <hs/hs.h>

#include "lb/hdr_scan.h"
#include "lb/rng.h"

/* Indices of the default configuration (lb_hdr_cfg_default order). */
enum { F_SPL, F_TIME, F_PRIO, F_EXP, F_ORCA };
/* Indices of the custom configuration built in setup. */
enum { C_LOAD, C_DEPTH, C_ODD, C_DOT };

#define ST "HTTP/1.1 200 OK\r\n"
#define NB_SEEDS 48

struct exp_field {
	bool set;
	int idx;
	uint8_t reason;
	uint8_t seen;
	double d;
	uint64_t u;
	const struct lb_hdr_orca *orca;
};

#define OKD(i, x) { .set = true, .idx = (i), .seen = 1, .d = (x) }
#define OKU(i, x) { .set = true, .idx = (i), .seen = 1, .u = (x) }
#define OKO(i, o) { .set = true, .idx = (i), .seen = 1, .orca = (o) }
#define REJ(i, r) { .set = true, .idx = (i), .seen = 1, .reason = (r) }
#define DUP(i, n)                                                      \
	{ .set = true, .idx = (i), .seen = (n),                        \
	  .reason = LB_HDR_ERR_DUPLICATE }

struct fixture {
	const char *name;
	const char *text;
	size_t len; /* 0: strlen(text) */
	bool custom;
	uint8_t status_seen;
	uint16_t status;
	uint8_t status_reason;
	struct exp_field f[6];
};

static const struct lb_hdr_orca orca_basic = {
	.present = LB_HDR_ORCA_CPU | LB_HDR_ORCA_MEM | LB_HDR_ORCA_RPS,
	.nb_named = 1,
	.cpu_utilization = 0.3,
	.mem_utilization = 0.8,
	.rps_fractional = 100,
};

static const struct lb_hdr_orca orca_full = {
	.present = LB_HDR_ORCA_CPU | LB_HDR_ORCA_MEM | LB_HDR_ORCA_APP |
		   LB_HDR_ORCA_RPS | LB_HDR_ORCA_EPS,
	.nb_named = 3,
	.cpu_utilization = 0.7,
	.mem_utilization = 0.9,
	.application_utilization = 0.8,
	.rps_fractional = 1000,
	.eps = 2,
};

static const struct lb_hdr_orca orca_cpu = {
	.present = LB_HDR_ORCA_CPU,
	.cpu_utilization = 1.25,
};

static const struct fixture fixtures[] = {
	/* The SPL patent's worked example: 120 ms against a 150 ms
	 * benchmark is 0.8 ([0063]), in a response header ([0064]). */
	{ "spl example", ST "Content-Type: text/html\r\nX-SPL: 0.8\r\n"
		"X-SPL-Time: 1700000000123\r\nContent-Length: 5\r\n\r\n",
	  0, false, 1, 200, 0,
	  { OKD(F_SPL, 0.8), OKU(F_TIME, 1700000000123ULL) } },
	/* Table 5 of the patent: loads 0.95, 1.4, 1.2. */
	{ "spl 0.95", ST "X-SPL: 0.95\r\n\r\n", 0, false, 1, 200, 0,
	  { OKD(F_SPL, 0.95) } },
	{ "spl 1.4 on 503", "HTTP/1.1 503 Service Unavailable\r\n"
		"Retry-After: 1\r\nX-SPL: 1.4\r\n\r\n",
	  0, false, 1, 503, 0, { OKD(F_SPL, 1.4) } },
	{ "spl 1.2 http/1.0 no reason", "HTTP/1.0 204\r\nX-SPL: 1.2\r\n\r\n",
	  0, false, 1, 204, 0, { OKD(F_SPL, 1.2) } },
	{ "request hints", "GET /api HTTP/1.1\r\nHost: a\r\nX-Priority: 3\r\n"
		"X-Expect-Ms: 250\r\n\r\n",
	  0, false, 0, 0, 0, { OKU(F_PRIO, 3), OKU(F_EXP, 250) } },
	{ "mixed case names", ST "x-spl: 0.25\r\nX-SPL-TIME: 5\r\n"
		"x-PrIoRiTy: 7\r\nX-EXPECT-MS: 9\r\n\r\n",
	  0, false, 1, 200, 0,
	  { OKD(F_SPL, 0.25), OKU(F_TIME, 5), OKU(F_PRIO, 7),
	    OKU(F_EXP, 9) } },
	{ "spl-time alone is not spl", ST "X-SPL-Time: 42\r\n\r\n", 0, false,
	  1, 200, 0, { OKU(F_TIME, 42) } },
	{ "longer names do not match", ST "X-SPLX: 5\r\nX-SPL-Load: 3\r\n"
		"X-SPL-Time-Zone: 1\r\nX-Priority2: 1\r\n\r\n",
	  0, false, 1, 200, 0, { { 0 } } },
	{ "names as suffixes do not match", ST "Old-X-SPL: 4\r\nXX-SPL: 4\r\n"
		"A-X-Priority: 1\r\n\r\n",
	  0, false, 1, 200, 0, { { 0 } } },
	{ "names inside values do not match", ST "X-Note: X-SPL: 9\r\n"
		"Via: 1.1 x, X-SPL:3\r\nX-Trace: a\rX-SPL: 8\r\n\r\n",
	  0, false, 1, 200, 0, { { 0 } } },
	{ "name at start of a value line", ST "X-Note: a\r\nX-SPL: 0.5\r\n"
		"X-Echo: X-SPL-Time: 77\r\n\r\n",
	  0, false, 1, 200, 0, { OKD(F_SPL, 0.5) } },
	{ "bare LF line ends", "HTTP/1.1 200 OK\nX-SPL: 0.5\nX-SPL-Time: 9\n\n",
	  0, false, 1, 200, 0, { OKD(F_SPL, 0.5), OKU(F_TIME, 9) } },
	{ "blank around value", ST "X-SPL: \t 0.75 \t\r\nX-SPL-Time:11\r\n\r\n",
	  0, false, 1, 200, 0, { OKD(F_SPL, 0.75), OKU(F_TIME, 11) } },
	{ "many digits rounds correctly",
	  ST "X-SPL: 0.80000000000000004\r\n\r\n",
	  0, false, 1, 200, 0, { OKD(F_SPL, 0.8) } },
	{ "leading zeros", ST "X-SPL: 00000000000000000000000000000000.5\r\n"
		"X-Priority: 007\r\n\r\n",
	  0, false, 1, 200, 0, { OKD(F_SPL, 0.5), OKU(F_PRIO, 7) } },
	{ "nul byte in value", ST "X-SPL: 0.8\0\r\n\r\n",
	  sizeof(ST "X-SPL: 0.8\0\r\n\r\n") - 1, false, 1, 200, 0,
	  { REJ(F_SPL, LB_HDR_ERR_SYNTAX) } },
	{ "bare CR in value", ST "X-SPL: 0.\r8\r\n\r\n", 0, false, 1, 200, 0,
	  { REJ(F_SPL, LB_HDR_ERR_SYNTAX) } },

	/* Duplicates are ambiguous: all occurrences rejected, even equal. */
	{ "duplicate equal", ST "X-SPL: 0.5\r\nX-SPL: 0.5\r\n\r\n", 0, false,
	  1, 200, 0, { DUP(F_SPL, 2) } },
	{ "duplicate mixed case", ST "X-SPL: 0.5\r\nServer: x\r\nx-spl: 0.7\r\n"
		"X-SPL-Time: 3\r\n\r\n",
	  0, false, 1, 200, 0, { DUP(F_SPL, 2), OKU(F_TIME, 3) } },
	{ "triplicate with one bad", ST "X-Priority: 1\r\nX-Priority: x\r\n"
		"X-Priority: 2\r\n\r\n",
	  0, false, 1, 200, 0, { DUP(F_PRIO, 3) } },
	{ "whitespace before colon",
	  ST "X-SPL : 0.5\r\nX-SPL-Time\t: 4\r\n\r\n",
	  0, false, 1, 200, 0,
	  { REJ(F_SPL, LB_HDR_ERR_NAME_WS),
	    REJ(F_TIME, LB_HDR_ERR_NAME_WS) } },
	{ "long blank before colon", ST "X-SPL        \t   : 0.5\r\n\r\n", 0,
	  false, 1, 200, 0, { REJ(F_SPL, LB_HDR_ERR_NAME_WS) } },
	{ "name then blank, no colon", ST "X-SPL x: 1\r\nX-SPL-Time  \r\n"
		"X-Priority\t\t-: 2\r\nX-Expect-Ms: 5\r\n\r\n",
	  0, false, 1, 200, 0, { OKU(F_EXP, 5) } },
	{ "block ends in blank after name", ST "X-Priority: 1\r\nX-SPL   ", 0,
	  false, 1, 200, 0, { OKU(F_PRIO, 1) } },
	{ "whitespace variant plus proper", ST "X-SPL: 0.5\r\nX-SPL  : 0.5\r\n"
		"\r\n",
	  0, false, 1, 200, 0, { DUP(F_SPL, 2) } },
	{ "obs-fold", ST "X-SPL: 0.5\r\n 0.6\r\nX-SPL-Time: 1\r\n\t2\r\n"
		"X-Priority: 4\r\nX-Other: 1\r\n\r\n",
	  0, false, 1, 200, 0,
	  { REJ(F_SPL, LB_HDR_ERR_FOLD), REJ(F_TIME, LB_HDR_ERR_FOLD),
	    OKU(F_PRIO, 4) } },
	{ "truncated block", ST "X-Priority: 4\r\nX-SPL: 0.5", 0, false, 1,
	  200, 0,
	  { OKU(F_PRIO, 4), REJ(F_SPL, LB_HDR_ERR_TRUNCATED) } },
	{ "truncated after CR", ST "X-SPL: 0.5\r", 0, false, 1, 200, 0,
	  { REJ(F_SPL, LB_HDR_ERR_TRUNCATED) } },
	{ "value too long", ST "X-SPL: "
		"0.10000000000000000000000000000000"
		"000000000000000000000000000000000"
		"\r\n\r\n",
	  0, false, 1, 200, 0, { REJ(F_SPL, LB_HDR_ERR_TOO_LONG) } },
	{ "trailing blanks count", ST "X-SPL: 0.5"
		"                                                              "
		"\r\n\r\n",
	  0, false, 1, 200, 0, { REJ(F_SPL, LB_HDR_ERR_TOO_LONG) } },
	{ "leading blanks do not count", ST "X-SPL:"
		"                                                              "
		"                  0.5\r\n\r\n",
	  0, false, 1, 200, 0, { OKD(F_SPL, 0.5) } },

	/* Status lines. */
	{ "status 99", "HTTP/1.1 099 Odd\r\nX-SPL: 1\r\n\r\n", 0, false, 1, 0,
	  LB_HDR_ERR_RANGE, { OKD(F_SPL, 1) } },
	{ "status 600", "HTTP/1.1 600 Odd\r\n\r\n", 0, false, 1, 0,
	  LB_HDR_ERR_RANGE, { { 0 } } },
	{ "status 4 digits", "HTTP/1.1 2000 OK\r\n\r\n", 0, false, 1, 0,
	  LB_HDR_ERR_SYNTAX, { { 0 } } },
	{ "status 2 digits", "HTTP/1.1 20 OK\r\n\r\n", 0, false, 1, 0,
	  LB_HDR_ERR_SYNTAX, { { 0 } } },
	{ "status double space", "HTTP/1.1  200 OK\r\n\r\n", 0, false, 1, 0,
	  LB_HDR_ERR_SYNTAX, { { 0 } } },
	{ "status empty", "HTTP/1.1 \r\n\r\n", 0, false, 1, 0,
	  LB_HDR_ERR_EMPTY, { { 0 } } },
	{ "status long reason", "HTTP/1.1 429 Too Many Requests, and this "
		"reason phrase goes on for much longer than any value buffer "
		"would hold, which is fine because only the code is read from "
		"the status line and the rest of it is counted but never "
		"copied anywhere at all, however long it runs, really, truly, "
		"at great length\r\nX-SPL: 2\r\n\r\n",
	  0, false, 1, 429, 0, { OKD(F_SPL, 2) } },
	{ "not http/1", "HTTP/2 200\r\nX-SPL: 1\r\n\r\n", 0, false, 0, 0, 0,
	  { OKD(F_SPL, 1) } },
	{ "http/1.x", "HTTP/1.x 200 OK\r\nX-SPL: 1\r\n\r\n", 0, false, 0, 0,
	  0, { OKD(F_SPL, 1) } },
	{ "status only", "HTTP/1.1 302", 0, false, 1, 0, LB_HDR_ERR_TRUNCATED,
	  { { 0 } } },
	{ "lower-case http", "http/1.1 200 OK\r\n\r\n", 0, false, 0, 0, 0,
	  { { 0 } } },

	/* ORCA endpoint-load-metrics, TEXT form. */
	{ "orca basic", ST "endpoint-load-metrics: TEXT cpu_utilization=0.3, "
		"mem_utilization=0.8, rps_fractional=100, "
		"named_metrics.foo=0.5\r\n\r\n",
	  0, false, 1, 200, 0, { OKO(F_ORCA, &orca_basic) } },
	{ "orca full with colons", ST "Endpoint-Load-Metrics: TEXT "
		"cpu_utilization:0.7,application_utilization:0.8,"
		"mem_utilization:0.9,rps_fractional:1000,eps:2,"
		"named_metrics.foo:123,named_metrics.bar:0.2,"
		"utilization.total:0.5\r\nX-SPL: 0.4\r\n\r\n",
	  0, false, 1, 200, 0,
	  { OKO(F_ORCA, &orca_full), OKD(F_SPL, 0.4) } },
	{ "orca above one cpu", ST "endpoint-load-metrics: TEXT  "
		"cpu_utilization = 1.25 \r\n\r\n",
	  0, false, 1, 200, 0, { OKO(F_ORCA, &orca_cpu) } },
	{ "orca json", ST "endpoint-load-metrics: JSON {\"cpu_utilization\": "
		"0.3}\r\n\r\n",
	  0, false, 1, 200, 0, { REJ(F_ORCA, LB_HDR_ERR_ORCA_FORMAT) } },
	{ "orca bin", ST "endpoint-load-metrics: BIN CQAAAAAAAOA/\r\n\r\n", 0,
	  false, 1, 200, 0, { REJ(F_ORCA, LB_HDR_ERR_ORCA_FORMAT) } },
	{ "orca lower-case text", ST "endpoint-load-metrics: text "
		"cpu_utilization=0.3\r\n\r\n",
	  0, false, 1, 200, 0, { REJ(F_ORCA, LB_HDR_ERR_ORCA_FORMAT) } },
	{ "orca glued prefix", ST "endpoint-load-metrics: TEXTcpu_utilization=1"
		"\r\n\r\n",
	  0, false, 1, 200, 0, { REJ(F_ORCA, LB_HDR_ERR_ORCA_FORMAT) } },
	{ "orca empty report", ST "endpoint-load-metrics: TEXT   \r\n\r\n", 0,
	  false, 1, 200, 0, { REJ(F_ORCA, LB_HDR_ERR_ORCA_PAIR) } },
	{ "orca empty value", ST "endpoint-load-metrics:\r\n\r\n", 0, false, 1,
	  200, 0, { REJ(F_ORCA, LB_HDR_ERR_EMPTY) } },
	{ "orca trailing comma", ST "endpoint-load-metrics: TEXT "
		"cpu_utilization=0.3,\r\n\r\n",
	  0, false, 1, 200, 0, { REJ(F_ORCA, LB_HDR_ERR_ORCA_PAIR) } },
	{ "orca empty pair", ST "endpoint-load-metrics: TEXT "
		"cpu_utilization=0.3,,mem_utilization=0.1\r\n\r\n",
	  0, false, 1, 200, 0, { REJ(F_ORCA, LB_HDR_ERR_ORCA_PAIR) } },
	{ "orca no separator", ST "endpoint-load-metrics: TEXT "
		"cpu_utilization\r\n\r\n",
	  0, false, 1, 200, 0, { REJ(F_ORCA, LB_HDR_ERR_ORCA_PAIR) } },
	{ "orca no value", ST "endpoint-load-metrics: TEXT cpu_utilization="
		"\r\n\r\n",
	  0, false, 1, 200, 0, { REJ(F_ORCA, LB_HDR_ERR_ORCA_PAIR) } },
	{ "orca no key", ST "endpoint-load-metrics: TEXT =0.3\r\n\r\n", 0,
	  false, 1, 200, 0, { REJ(F_ORCA, LB_HDR_ERR_ORCA_PAIR) } },
	{ "orca repeated key", ST "endpoint-load-metrics: TEXT "
		"cpu_utilization=0.3,cpu_utilization=0.4\r\n\r\n",
	  0, false, 1, 200, 0, { REJ(F_ORCA, LB_HDR_ERR_ORCA_PAIR) } },
	{ "orca repeated named", ST "endpoint-load-metrics: TEXT "
		"named_metrics.a=1,named_metrics.a=2\r\n\r\n",
	  0, false, 1, 200, 0, { REJ(F_ORCA, LB_HDR_ERR_ORCA_PAIR) } },
	{ "orca unknown key", ST "endpoint-load-metrics: TEXT "
		"cpu_utilization=0.3,bogus=1\r\n\r\n",
	  0, false, 1, 200, 0, { REJ(F_ORCA, LB_HDR_ERR_ORCA_PAIR) } },
	{ "orca deprecated rps", ST "endpoint-load-metrics: TEXT rps=5\r\n\r\n",
	  0, false, 1, 200, 0, { REJ(F_ORCA, LB_HDR_ERR_ORCA_PAIR) } },
	{ "orca empty named key", ST "endpoint-load-metrics: TEXT "
		"named_metrics.=1\r\n\r\n",
	  0, false, 1, 200, 0, { REJ(F_ORCA, LB_HDR_ERR_ORCA_PAIR) } },
	{ "orca space in key", ST "endpoint-load-metrics: TEXT "
		"cpu utilization=1\r\n\r\n",
	  0, false, 1, 200, 0, { REJ(F_ORCA, LB_HDR_ERR_ORCA_PAIR) } },
	{ "orca nan", ST "endpoint-load-metrics: TEXT cpu_utilization=NaN"
		"\r\n\r\n",
	  0, false, 1, 200, 0, { REJ(F_ORCA, LB_HDR_ERR_SYNTAX) } },
	{ "orca negative", ST "endpoint-load-metrics: TEXT "
		"cpu_utilization=-0.1\r\n\r\n",
	  0, false, 1, 200, 0, { REJ(F_ORCA, LB_HDR_ERR_SYNTAX) } },
	{ "orca quoted", ST "endpoint-load-metrics: TEXT "
		"cpu_utilization=\"0.7\"\r\n\r\n",
	  0, false, 1, 200, 0, { REJ(F_ORCA, LB_HDR_ERR_SYNTAX) } },
	{ "orca mem above one", ST "endpoint-load-metrics: TEXT "
		"mem_utilization=1.5\r\n\r\n",
	  0, false, 1, 200, 0, { REJ(F_ORCA, LB_HDR_ERR_RANGE) } },
	{ "orca cpu above bound", ST "endpoint-load-metrics: TEXT "
		"cpu_utilization=100.5\r\n\r\n",
	  0, false, 1, 200, 0, { REJ(F_ORCA, LB_HDR_ERR_RANGE) } },
	{ "orca bad named value", ST "endpoint-load-metrics: TEXT "
		"cpu_utilization=0.3,named_metrics.q=1e3\r\n\r\n",
	  0, false, 1, 200, 0, { REJ(F_ORCA, LB_HDR_ERR_SYNTAX) } },
	{ "orca too long", ST "endpoint-load-metrics: TEXT cpu_utilization=0.1,"
		"named_metrics.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=1,"
		"named_metrics.bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb=1,"
		"named_metrics.cccccccccccccccccccccccccccccccccccccccc=1,"
		"named_metrics.dddddddddddddddddddddddddddddddddddddddd=1,"
		"named_metrics.eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee=1"
		"\r\n\r\n",
	  0, false, 1, 200, 0, { REJ(F_ORCA, LB_HDR_ERR_TOO_LONG) } },
	{ "orca twice", ST "endpoint-load-metrics: TEXT cpu_utilization=0.1\r\n"
		"endpoint-load-metrics: TEXT cpu_utilization=0.1\r\n\r\n",
	  0, false, 1, 200, 0, { DUP(F_ORCA, 2) } },

	/* Custom configuration: other names, other bounds, names holding
	 * characters that mean something in a regular expression. */
	{ "custom names", ST "Backend-Load: 2.5\r\nX-Queue-Depth: 17\r\n"
		"X-SPL: 0.8\r\nx.load~V2: 3\r\nA+B|C: 1\r\nAAB|C: 2\r\nC: 3\r\n"
		"AB: 4\r\n\r\n",
	  0, true, 1, 200, 0,
	  { OKD(C_LOAD, 2.5), OKU(C_DEPTH, 17), OKU(C_ODD, 1),
	    OKD(C_DOT, 3) } },
	{ "custom bounds", ST "Backend-Load: 10.5\r\nX-Queue-Depth: 1001\r\n"
		"A+B|C: 0\r\n\r\n",
	  0, true, 1, 200, 0,
	  { REJ(C_LOAD, LB_HDR_ERR_RANGE), REJ(C_DEPTH, LB_HDR_ERR_RANGE),
	    OKU(C_ODD, 0) } },
	{ "custom short limit", ST "X.LOAD~v2: 12345.5\r\n\r\n", 0, true, 1,
	  200, 0, { REJ(C_DOT, LB_HDR_ERR_TOO_LONG) } },
};

/* Values alone, each put in a response between other headers. */
struct val_case {
	int field;
	const char *value;
	uint8_t reason;
	double d;
	uint64_t u;
};

static char digits200[201];
static char digits40[41];

static const struct val_case values[] = {
	{ F_SPL, "0.8", LB_HDR_OK, 0.8, 0 },
	{ F_SPL, "0", LB_HDR_OK, 0, 0 },
	{ F_SPL, "1000", LB_HDR_OK, 1000, 0 },
	{ F_SPL, "0.917", LB_HDR_OK, 0.917, 0 },
	{ F_SPL, "1001", LB_HDR_ERR_RANGE, 0, 0 },
	{ F_SPL, "1000.0000001", LB_HDR_ERR_RANGE, 0, 0 },
	{ F_SPL, "NaN", LB_HDR_ERR_SYNTAX, 0, 0 },
	{ F_SPL, "nan", LB_HDR_ERR_SYNTAX, 0, 0 },
	{ F_SPL, "inf", LB_HDR_ERR_SYNTAX, 0, 0 },
	{ F_SPL, "Infinity", LB_HDR_ERR_SYNTAX, 0, 0 },
	{ F_SPL, "-inf", LB_HDR_ERR_SYNTAX, 0, 0 },
	{ F_SPL, "0x1A", LB_HDR_ERR_SYNTAX, 0, 0 },
	{ F_SPL, "0x1p-1", LB_HDR_ERR_SYNTAX, 0, 0 },
	{ F_SPL, "-0.5", LB_HDR_ERR_SYNTAX, 0, 0 },
	{ F_SPL, "-0", LB_HDR_ERR_SYNTAX, 0, 0 },
	{ F_SPL, "+0.5", LB_HDR_ERR_SYNTAX, 0, 0 },
	{ F_SPL, "", LB_HDR_ERR_EMPTY, 0, 0 },
	{ F_SPL, "   ", LB_HDR_ERR_EMPTY, 0, 0 },
	{ F_SPL, "0.8abc", LB_HDR_ERR_SYNTAX, 0, 0 },
	{ F_SPL, "0.8 0.9", LB_HDR_ERR_SYNTAX, 0, 0 },
	{ F_SPL, "0.8;q=1", LB_HDR_ERR_SYNTAX, 0, 0 },
	{ F_SPL, "0,8", LB_HDR_ERR_SYNTAX, 0, 0 },
	{ F_SPL, "1.2.3", LB_HDR_ERR_SYNTAX, 0, 0 },
	{ F_SPL, ".5", LB_HDR_ERR_SYNTAX, 0, 0 },
	{ F_SPL, "5.", LB_HDR_ERR_SYNTAX, 0, 0 },
	{ F_SPL, "1e3", LB_HDR_ERR_SYNTAX, 0, 0 },
	{ F_SPL, "1e309", LB_HDR_ERR_SYNTAX, 0, 0 },
	{ F_SPL, "1E-2", LB_HDR_ERR_SYNTAX, 0, 0 },
	{ F_SPL, "1_000", LB_HDR_ERR_SYNTAX, 0, 0 },
	{ F_SPL, "\"0.8\"", LB_HDR_ERR_SYNTAX, 0, 0 },
	{ F_SPL, "\xd9\xa0.\xd9\xa8", LB_HDR_ERR_SYNTAX, 0, 0 },
	{ F_SPL, digits40, LB_HDR_ERR_RANGE, 0, 0 },
	{ F_SPL, digits200, LB_HDR_ERR_TOO_LONG, 0, 0 },
	{ F_TIME, "0", LB_HDR_OK, 0, 0 },
	{ F_TIME, "1700000000000", LB_HDR_OK, 0, 1700000000000ULL },
	{ F_TIME, "253402300799999", LB_HDR_OK, 0, 253402300799999ULL },
	{ F_TIME, "253402300800000", LB_HDR_ERR_RANGE, 0, 0 },
	{ F_TIME, "18446744073709551616", LB_HDR_ERR_RANGE, 0, 0 },
	{ F_TIME, "99999999999999999999999", LB_HDR_ERR_RANGE, 0, 0 },
	{ F_TIME, digits40, LB_HDR_ERR_RANGE, 0, 0 },
	{ F_TIME, "1.5", LB_HDR_ERR_SYNTAX, 0, 0 },
	{ F_TIME, "-1", LB_HDR_ERR_SYNTAX, 0, 0 },
	{ F_TIME, "1700000000.5", LB_HDR_ERR_SYNTAX, 0, 0 },
	{ F_TIME, "Tue, 14 Nov 2023", LB_HDR_ERR_SYNTAX, 0, 0 },
	{ F_PRIO, "0", LB_HDR_OK, 0, 0 },
	{ F_PRIO, "100", LB_HDR_OK, 0, 100 },
	{ F_PRIO, "101", LB_HDR_ERR_RANGE, 0, 0 },
	{ F_PRIO, "3.0", LB_HDR_ERR_SYNTAX, 0, 0 },
	{ F_PRIO, "high", LB_HDR_ERR_SYNTAX, 0, 0 },
	{ F_EXP, "1", LB_HDR_OK, 0, 1 },
	{ F_EXP, "3600000", LB_HDR_OK, 0, 3600000 },
	{ F_EXP, "0", LB_HDR_ERR_RANGE, 0, 0 },
	{ F_EXP, "3600001", LB_HDR_ERR_RANGE, 0, 0 },
	{ F_EXP, "0x10", LB_HDR_ERR_SYNTAX, 0, 0 },
};

static const char *const default_names[] = {
	"X-SPL", "X-SPL-Time", "X-Priority", "X-Expect-Ms",
	"endpoint-load-metrics",
};

/* Counts Hyperscan's allocations, to show that scanning makes none. */
static unsigned long hs_allocs;

static void *
count_alloc(size_t n)
{
	hs_allocs++;
	return malloc(n);
}

struct ctx {
	struct lb_hdr_db *db;
	struct lb_hdr_db *custom;
	struct lb_hdr_scratch *scr;
	struct lb_hdr_scratch *cscr;
	struct lb_hdr_stream st;
	struct lb_hdr_stream cst;
};

static void
custom_cfg(struct lb_hdr_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	assert_int_equal(lb_hdr_cfg_add(cfg, "Backend-Load",
					LB_HDR_KIND_DECIMAL), C_LOAD);
	cfg->fields[C_LOAD].max = 10;
	assert_int_equal(lb_hdr_cfg_add(cfg, "X-Queue-Depth", LB_HDR_KIND_UINT),
			 C_DEPTH);
	cfg->fields[C_DEPTH].max = 1000;
	assert_int_equal(lb_hdr_cfg_add(cfg, "A+B|C", LB_HDR_KIND_PRIORITY),
			 C_ODD);
	assert_int_equal(lb_hdr_cfg_add(cfg, "X.load~v2", LB_HDR_KIND_DECIMAL),
			 C_DOT);
	cfg->fields[C_DOT].max_len = 4;
}

static int
setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));
	struct lb_hdr_cfg cfg;

	if (c == NULL)
		return -1;
	memset(digits200, '9', 200);
	memset(digits40, '1', 40);
	lb_hdr_cfg_default(&cfg);
	c->db = lb_hdr_db_compile(&cfg);
	custom_cfg(&cfg);
	c->custom = lb_hdr_db_compile(&cfg);
	if (c->db == NULL || c->custom == NULL)
		return -1;
	c->scr = lb_hdr_scratch_alloc(c->db);
	c->cscr = lb_hdr_scratch_alloc(c->custom);
	if (c->scr == NULL || c->cscr == NULL ||
	    lb_hdr_stream_init(&c->st, c->db) != 0 ||
	    lb_hdr_stream_init(&c->cst, c->custom) != 0)
		return -1;
	*state = c;
	return 0;
}

static int
teardown(void **state)
{
	struct ctx *c = *state;

	lb_hdr_stream_fini(&c->st);
	lb_hdr_stream_fini(&c->cst);
	lb_hdr_scratch_free(c->scr);
	lb_hdr_scratch_free(c->cscr);
	lb_hdr_db_free(c->db);
	lb_hdr_db_free(c->custom);
	free(c);
	return 0;
}

static size_t
fx_len(const struct fixture *fx)
{
	return fx->len ? fx->len : strlen(fx->text);
}

/* Feeds @p text cut at the sorted offsets @p cut[0..nc). */
static void
feed_cuts(struct lb_hdr_stream *st, struct lb_hdr_scratch *scr,
	  const char *text, size_t len, const size_t *cut, size_t nc,
	  struct lb_hdr_result *res)
{
	size_t prev = 0;

	for (size_t i = 0; i <= nc; i++) {
		size_t end = i < nc ? cut[i] : len;

		assert_int_equal(lb_hdr_feed(st, scr, text + prev, end - prev),
				 0);
		prev = end;
	}
	assert_int_equal(lb_hdr_end(st, scr, res), 0);
}

static int
cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return (x > y) - (x < y);
}

static void
check_orca(const struct lb_hdr_orca *got, const struct lb_hdr_orca *want)
{
	assert_int_equal(got->present, want->present);
	assert_int_equal(got->nb_named, want->nb_named);
	assert_true(got->cpu_utilization == want->cpu_utilization);
	assert_true(got->mem_utilization == want->mem_utilization);
	assert_true(got->application_utilization ==
		    want->application_utilization);
	assert_true(got->rps_fractional == want->rps_fractional);
	assert_true(got->eps == want->eps);
}

static void
check_fixture(const struct lb_hdr_db *db, const struct fixture *fx,
	      const struct lb_hdr_result *r)
{
	static const struct lb_hdr_value zero;
	const struct lb_hdr_cfg *cfg = lb_hdr_db_cfg(db);

	assert_int_equal(r->status_seen, fx->status_seen);
	assert_int_equal(r->status, fx->status);
	assert_int_equal(r->status_reason, fx->status_reason);
	for (unsigned int i = 0; i < LB_HDR_MAX_FIELDS; i++) {
		const struct exp_field *e = NULL;
		const struct lb_hdr_value *v = &r->field[i];

		for (size_t j = 0; j < 6 && fx->f[j].set; j++)
			if (fx->f[j].idx == (int)i)
				e = &fx->f[j];
		if (e == NULL) {
			assert_int_equal(v->seen, 0);
			assert_false(r->present & (1u << i));
			assert_false(r->valid & (1u << i));
			continue;
		}
		assert_true(i < cfg->nb_fields);
		assert_int_equal(v->seen, e->seen);
		assert_int_equal(v->reason, e->reason);
		assert_true(r->present & (1u << i));
		assert_int_equal(!!(r->valid & (1u << i)),
				 e->reason == LB_HDR_OK);
		if (e->reason != LB_HDR_OK) {
			/* A rejected value never leaks through. */
			assert_memory_equal(&v->v, &zero.v, sizeof(v->v));
			continue;
		}
		switch (cfg->fields[i].kind) {
		case LB_HDR_KIND_SPL:
		case LB_HDR_KIND_DECIMAL:
			assert_true(v->v.d == e->d);
			break;
		case LB_HDR_KIND_ORCA:
			check_orca(&v->v.orca, e->orca);
			break;
		default:
			assert_true(v->v.u == e->u);
			break;
		}
	}
}

/*
 * Runs one block every way: block mode, whole, byte by byte, cut once at
 * every offset, and cut at random offsets for NB_SEEDS seeds. Every run
 * must give the same result, byte for byte, and @p check it once.
 */
static void
run_all_ways(const struct lb_hdr_db *db, struct lb_hdr_scratch *scr,
	     struct lb_hdr_stream *st, const char *text, size_t len,
	     struct lb_hdr_result *ref)
{
	struct lb_hdr_result r;
	struct lb_xoshiro x;
	struct lb_rng rng = lb_rng_xoshiro(&x);
	size_t cut[9];

	assert_int_equal(lb_hdr_scan_block(db, scr, text, len, ref), 0);

	feed_cuts(st, scr, text, len, NULL, 0, &r);
	assert_memory_equal(&r, ref, sizeof(r));

	for (size_t i = 0; i < len; i++)
		assert_int_equal(lb_hdr_feed(st, scr, text + i, 1), 0);
	assert_int_equal(lb_hdr_end(st, scr, &r), 0);
	assert_memory_equal(&r, ref, sizeof(r));

	for (size_t i = 0; i <= len; i++) {
		cut[0] = i;
		feed_cuts(st, scr, text, len, cut, 1, &r);
		assert_memory_equal(&r, ref, sizeof(r));
	}

	for (uint64_t seed = 1; seed <= NB_SEEDS; seed++) {
		size_t nc;

		lb_xoshiro_seed(&x, seed);
		nc = 1 + lb_rng_below(&rng, 9);
		for (size_t i = 0; i < nc; i++)
			cut[i] = lb_rng_below(&rng, len + 1);
		qsort(cut, nc, sizeof(cut[0]), cmp_size);
		feed_cuts(st, scr, text, len, cut, nc, &r);
		assert_memory_equal(&r, ref, sizeof(r));
	}
}

static void
test_fixtures(void **state)
{
	struct ctx *c = *state;

	for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		const struct fixture *fx = &fixtures[i];
		struct lb_hdr_db *db = fx->custom ? c->custom : c->db;
		struct lb_hdr_result ref;

		print_message("fixture: %s\n", fx->name);
		run_all_ways(db, fx->custom ? c->cscr : c->scr,
			     fx->custom ? &c->cst : &c->st, fx->text,
			     fx_len(fx), &ref);
		check_fixture(db, fx, &ref);
	}
}

static void
test_values(void **state)
{
	struct ctx *c = *state;
	char buf[512];

	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		const struct val_case *vc = &values[i];
		struct fixture fx = { .text = buf, .status_seen = 1,
				      .status = 200 };
		struct lb_hdr_result ref;
		int n;

		n = snprintf(buf, sizeof(buf),
			     ST "Server: t\r\n%s: %s\r\nContent-Length: 0\r\n"
				"\r\n",
			     default_names[vc->field], vc->value);
		assert_true(n > 0 && (size_t)n < sizeof(buf));
		fx.name = vc->value;
		fx.f[0].set = true;
		fx.f[0].idx = vc->field;
		fx.f[0].seen = 1;
		fx.f[0].reason = vc->reason;
		fx.f[0].d = vc->d;
		fx.f[0].u = vc->u;
		print_message("value: %s = '%.40s'\n",
			      default_names[vc->field], vc->value);
		run_all_ways(c->db, c->scr, &c->st, buf, (size_t)n, &ref);
		check_fixture(c->db, &fx, &ref);
	}
}

/*
 * Random blocks built from names, separators, values and line ends chosen
 * to collide (prefix names, blank before the colon, folds, bare LF, values
 * that look like headers, truncation): whatever they mean, every way of
 * feeding them must agree with block mode.
 */
static void
test_random_blocks(void **state)
{
	static const char *const starts[] = {
		ST, "GET / HTTP/1.1\r\n", "HTTP/1.1 20 x\r\n", "HTTP/1.0 503\n",
	};
	static const char *const names[] = {
		"X-SPL", "x-spl", "X-SPL-Time", "X-Priority", "X-Expect-Ms",
		"endpoint-load-metrics", "X-Other", "X-SPLX", "Server",
	};
	static const char *const seps[] = { ":", ": ", " :", "\t:", ":\t ",
					    "  ", " x:" };
	static const char *const vals[] = {
		"0.8", "12", "", "nan", "-1", "1e309", "X-SPL: 3", "0.\r5",
		"TEXT cpu_utilization=0.3", "TEXT a=1", "7 ",
		"0.10000000000000000000000000000000"
		"00000000000000000000000000001",
	};
	static const char *const ends[] = { "\r\n", "\r\n", "\r\n", "\n",
					    "\r\n cont\r\n" };
	struct ctx *c = *state;
	struct lb_xoshiro x;
	struct lb_rng rng = lb_rng_xoshiro(&x);
	char buf[1024];

#define PICK(a) (a)[lb_rng_below(&rng, sizeof(a) / sizeof((a)[0]))]
	for (uint64_t seed = 1; seed <= 120; seed++) {
		struct lb_hdr_result ref;
		size_t n = 0;
		int lines;

		lb_xoshiro_seed(&x, 1000 + seed);
		n += (size_t)snprintf(buf, sizeof(buf), "%s", PICK(starts));
		lines = 1 + (int)lb_rng_below(&rng, 6);
		for (int l = 0; l < lines; l++)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n,
					      "%s%s%s%s", PICK(names),
					      PICK(seps), PICK(vals),
					      PICK(ends));
		if (lb_rng_below(&rng, 4) != 0)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "\r\n");
		assert_true(n < sizeof(buf));
		run_all_ways(c->db, c->scr, &c->st, buf, n, &ref);
		/* Whatever was accepted is within its configured bounds. */
		if (ref.valid & (1u << F_SPL))
			assert_true(ref.field[F_SPL].v.d >= 0 &&
				    ref.field[F_SPL].v.d <= 1000);
		assert_int_equal(ref.valid & ~ref.present, 0);
	}
#undef PICK
}

/*
 * Block mode finds the names after each LF itself, sixteen bytes at a
 * time; streaming mode is Hyperscan's. Blocks of pieces of names in
 * either case, blanks, colons and line ends, of every length around the
 * sixteen-byte steps, a name in the last bytes included: the two agree,
 * and the custom database (names of other first letters) too.
 */
static void
test_block_lines(void **state)
{
	static const char *const bits[] = {
		"\n", "\r\n", ":", " ", "\t", "x-spl", "X-SPL", "X-sPl-tImE",
		"-Time", "x-priority", "X-Expect-Ms", "ENDPOINT-load-metrics",
		"backend-load", "X-QUEUE-DEPTH", "1", "e", "X", "\nX-SPL:",
		"\nx-spl ", "\nX-Priority\t:",
	};
	struct ctx *c = *state;
	struct lb_xoshiro x;
	struct lb_rng rng = lb_rng_xoshiro(&x);
	char buf[256];

	for (uint64_t seed = 1; seed <= 3000; seed++) {
		bool custom = seed % 2 == 0;
		struct lb_hdr_db *db = custom ? c->custom : c->db;
		struct lb_hdr_scratch *scr = custom ? c->cscr : c->scr;
		struct lb_hdr_stream *st = custom ? &c->cst : &c->st;
		struct lb_hdr_result ref, r;
		size_t n = 0, want;

		lb_xoshiro_seed(&x, 5000 + seed);
		want = lb_rng_below(&rng, 80);
		while (n < want) {
			const char *b = bits[lb_rng_below(
				&rng, sizeof(bits) / sizeof(bits[0]))];
			size_t k = strlen(b);

			if (n + k >= sizeof(buf))
				break;
			memcpy(buf + n, b, k);
			n += k;
		}
		assert_int_equal(lb_hdr_scan_block(db, scr, buf, n, &ref), 0);
		for (size_t i = 0; i < n; i++)
			assert_int_equal(lb_hdr_feed(st, scr, buf + i, 1), 0);
		assert_int_equal(lb_hdr_end(st, scr, &r), 0);
		assert_memory_equal(&r, &ref, sizeof(r));
		assert_int_equal(lb_hdr_feed(st, scr, buf, n), 0);
		assert_int_equal(lb_hdr_end(st, scr, &r), 0);
		assert_memory_equal(&r, &ref, sizeof(r));
	}
}

/* Several blocks through one stream, as for pipelined responses, mixed
 * with a block abandoned half way. */
static void
test_reuse_and_reset(void **state)
{
	struct ctx *c = *state;
	struct lb_hdr_scratch *scr = lb_hdr_scratch_clone(c->scr);
	const struct lb_hdr_stats *stats = lb_hdr_scratch_stats(scr);
	static const char half[] = ST "X-SPL: 0.";
	const struct fixture *fx = &fixtures[0];
	struct lb_hdr_result ref, r;

	assert_non_null(scr);
	assert_int_equal(stats->blocks, 0);
	assert_int_equal(lb_hdr_scan_block(c->db, scr, fx->text, fx_len(fx),
					   &ref), 0);
	for (int round = 0; round < 3; round++) {
		assert_int_equal(lb_hdr_feed(&c->st, scr, half,
					     sizeof(half) - 1), 0);
		assert_int_equal(lb_hdr_stream_reset(&c->st, scr), 0);
		feed_cuts(&c->st, scr, fx->text, fx_len(fx), NULL, 0, &r);
		assert_memory_equal(&r, &ref, sizeof(r));
	}
	assert_int_equal(stats->aborted, 3);
	assert_int_equal(stats->blocks, 4);
	assert_int_equal(stats->bytes, 4 * fx_len(fx) + 3 * (sizeof(half) - 1));
	/* A reset with nothing fed is not an abort. */
	assert_int_equal(lb_hdr_stream_reset(&c->st, scr), 0);
	assert_int_equal(stats->aborted, 3);
	/* A block that is only a truncated value does not leak into the
	 * next one. */
	assert_int_equal(lb_hdr_feed(&c->st, scr, half, sizeof(half) - 1), 0);
	assert_int_equal(lb_hdr_end(&c->st, scr, &r), 0);
	assert_int_equal(r.field[F_SPL].reason, LB_HDR_ERR_TRUNCATED);
	feed_cuts(&c->st, scr, fx->text, fx_len(fx), NULL, 0, &r);
	assert_memory_equal(&r, &ref, sizeof(r));
	lb_hdr_scratch_free(scr);
}

static void
test_stats(void **state)
{
	struct ctx *c = *state;
	struct lb_hdr_scratch *scr = lb_hdr_scratch_clone(c->scr);
	const struct lb_hdr_stats *s = lb_hdr_scratch_stats(scr);
	static const char *const blocks[] = {
		ST "X-SPL: 0.8\r\nX-SPL-Time: 12\r\n\r\n",
		"HTTP/1.1 503 x\r\nX-SPL: nan\r\nX-Priority: 1\r\n"
		"X-Priority: 1\r\n\r\n",
		"HTTP/1.1 999 x\r\nX-SPL : 1\r\nX-Expect-Ms: 0\r\n\r\n",
		"GET / HTTP/1.1\r\nendpoint-load-metrics: JSON {}\r\n"
		"X-Expect-Ms: 30\r\n\r\n",
	};
	struct lb_hdr_result r;
	size_t bytes = 0;

	assert_non_null(scr);
	for (size_t i = 0; i < 4; i++) {
		bytes += strlen(blocks[i]);
		if (i % 2)
			assert_int_equal(lb_hdr_scan_block(c->db, scr,
							   blocks[i],
							   strlen(blocks[i]),
							   &r),
					 0);
		else
			feed_cuts(&c->st, scr, blocks[i], strlen(blocks[i]),
				  NULL, 0, &r);
	}
	assert_int_equal(s->blocks, 4);
	assert_int_equal(s->bytes, bytes);
	assert_int_equal(s->accepted, 3);
	assert_int_equal(s->rejected[LB_HDR_OK], 0);
	assert_int_equal(s->rejected[LB_HDR_ERR_SYNTAX], 1);
	assert_int_equal(s->rejected[LB_HDR_ERR_DUPLICATE], 2);
	assert_int_equal(s->rejected[LB_HDR_ERR_NAME_WS], 1);
	assert_int_equal(s->rejected[LB_HDR_ERR_RANGE], 1);
	assert_int_equal(s->rejected[LB_HDR_ERR_ORCA_FORMAT], 1);
	assert_int_equal(s->status_ok, 2);
	assert_int_equal(s->status_bad, 1);
	assert_int_equal(s->scan_errors, 0);
	assert_int_equal(s->aborted, 0);
	lb_hdr_scratch_free(scr);
}

static void
test_serialize(void **state)
{
	struct ctx *c = *state;
	struct lb_hdr_db *db2;
	struct lb_hdr_scratch *scr2;
	struct lb_hdr_stream st2;
	size_t len = 0, len2 = 0;
	uint64_t *buf, *copy;

	assert_int_equal(lb_hdr_db_serialize(c->db, NULL, 0, &len), -ENOSPC);
	assert_true(len > 0);
	buf = malloc(len + 8);
	copy = malloc(len + 8);
	assert_non_null(buf);
	assert_non_null(copy);
	assert_int_equal(lb_hdr_db_serialize(c->db, buf, len - 1, &len2),
			 -ENOSPC);
	assert_int_equal(lb_hdr_db_serialize(c->db, buf, len, &len2), 0);
	assert_int_equal(len2, len);

	db2 = lb_hdr_db_deserialize(buf, len);
	assert_non_null(db2);
	assert_memory_equal(lb_hdr_db_cfg(db2), lb_hdr_db_cfg(c->db),
			    sizeof(struct lb_hdr_cfg));
	scr2 = lb_hdr_scratch_alloc(db2);
	assert_non_null(scr2);
	assert_int_equal(lb_hdr_stream_init(&st2, db2), 0);
	/* The loaded database gives the same results as the compiled one,
	 * every way of feeding. */
	for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		const struct fixture *fx = &fixtures[i];
		struct lb_hdr_result a, b;

		if (fx->custom)
			continue;
		assert_int_equal(lb_hdr_scan_block(c->db, c->scr, fx->text,
						   fx_len(fx), &a), 0);
		run_all_ways(db2, scr2, &st2, fx->text, fx_len(fx), &b);
		assert_memory_equal(&a, &b, sizeof(a));
	}
	lb_hdr_stream_fini(&st2);
	lb_hdr_scratch_free(scr2);
	lb_hdr_db_free(db2);

	/* Shared memory need not be aligned. */
	{
		uint8_t *odd = (uint8_t *)copy + 3;
		struct lb_hdr_result a, b;

		assert_int_equal(lb_hdr_db_serialize(c->db, odd, len, &len2),
				 0);
		db2 = lb_hdr_db_deserialize(odd, len2);
		assert_non_null(db2);
		scr2 = lb_hdr_scratch_alloc(db2);
		assert_non_null(scr2);
		assert_int_equal(lb_hdr_scan_block(c->db, c->scr,
						   fixtures[0].text,
						   fx_len(&fixtures[0]), &a),
				 0);
		assert_int_equal(lb_hdr_scan_block(db2, scr2, fixtures[0].text,
						   fx_len(&fixtures[0]), &b),
				 0);
		assert_memory_equal(&a, &b, sizeof(a));
		lb_hdr_scratch_free(scr2);
		lb_hdr_db_free(db2);
	}

	/* Damaged copies are refused, not half-loaded. */
	static const size_t flips[] = { 0, 9, 12, 40, 100, 300 };
	for (size_t i = 0; i < sizeof(flips) / sizeof(flips[0]); i++) {
		memcpy(copy, buf, len);
		((uint8_t *)copy)[flips[i] % len] ^= 0x40;
		errno = 0;
		assert_null(lb_hdr_db_deserialize(copy, len));
		assert_int_equal(errno, EINVAL);
	}
	memcpy(copy, buf, len);
	((uint8_t *)copy)[len - 1] ^= 1;
	assert_null(lb_hdr_db_deserialize(copy, len));
	assert_null(lb_hdr_db_deserialize(buf, len - 1));
	assert_null(lb_hdr_db_deserialize(buf, 10));
	assert_null(lb_hdr_db_deserialize(NULL, len));
	assert_int_equal(lb_hdr_db_serialize(NULL, buf, len, &len2), -EINVAL);
	assert_int_equal(lb_hdr_db_serialize(c->db, buf, len, NULL), -EINVAL);
	free(buf);
	free(copy);
}

static void
test_config(void **state)
{
	struct lb_hdr_cfg cfg, bad;
	struct lb_hdr_db *db;
	char long_name[LB_HDR_NAME_MAX + 2];
	static const char *const bad_names[] = {
		"", "X SPL", "X-SPL:", "X\tSPL", "X(SPL)", "X/SPL", "X\"S",
		"X@S", "X,S", "X\xc3\xa9",
	};

	(void)state;
	lb_hdr_cfg_default(&cfg);
	assert_int_equal(cfg.nb_fields, 5);
	for (unsigned int i = 0; i < 5; i++)
		assert_string_equal(cfg.fields[i].name, default_names[i]);
	assert_true(cfg.fields[F_SPL].max == 1000);
	assert_true(cfg.fields[F_EXP].min == 1);
	assert_int_equal(cfg.fields[F_ORCA].max_len, LB_HDR_VALUE_MAX);
	assert_int_equal(lb_hdr_cfg_check(&cfg), 0);

	for (size_t i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++) {
		bad = cfg;
		assert_int_equal(lb_hdr_cfg_add(&bad, bad_names[i],
						LB_HDR_KIND_UINT), -EINVAL);
		snprintf(bad.fields[0].name, sizeof(bad.fields[0].name), "%s",
			 bad_names[i]);
		errno = 0;
		assert_null(lb_hdr_db_compile(&bad));
		assert_int_equal(errno, EINVAL);
	}
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	bad = cfg;
	assert_int_equal(lb_hdr_cfg_add(&bad, long_name, LB_HDR_KIND_UINT),
			 -EINVAL);
	long_name[LB_HDR_NAME_MAX] = '\0';
	assert_int_equal(lb_hdr_cfg_add(&bad, long_name, LB_HDR_KIND_UINT), 5);
	assert_int_equal(lb_hdr_cfg_check(&bad), 0);
	assert_int_equal(lb_hdr_cfg_add(&bad, "x-spl", LB_HDR_KIND_SPL),
			 -EEXIST);
	assert_int_equal(lb_hdr_cfg_add(&bad, "X-New", LB_HDR_KIND_MAX),
			 -EINVAL);
	assert_int_equal(lb_hdr_cfg_add(NULL, "X-New", LB_HDR_KIND_SPL),
			 -EINVAL);
	for (int i = 6; i < LB_HDR_MAX_FIELDS; i++) {
		char name[16];

		snprintf(name, sizeof(name), "X-F%d", i);
		assert_int_equal(lb_hdr_cfg_add(&bad, name, LB_HDR_KIND_UINT),
				 i);
	}
	assert_int_equal(lb_hdr_cfg_add(&bad, "X-Full", LB_HDR_KIND_UINT),
			 -ENOSPC);
	/* A full configuration compiles: 33 patterns. */
	db = lb_hdr_db_compile(&bad);
	assert_non_null(db);
	lb_hdr_db_free(db);

	static const struct {
		const char *what;
		unsigned int field;
		double min, max;
		unsigned int max_len;
		int kind;
	} rows[] = {
		{ "min above max", F_SPL, 2, 1, 64, LB_HDR_KIND_SPL },
		{ "nan max", F_SPL, 0, NAN, 64, LB_HDR_KIND_SPL },
		{ "inf max", F_SPL, 0, INFINITY, 64, LB_HDR_KIND_SPL },
		{ "negative min", F_SPL, -1, 1, 64, LB_HDR_KIND_SPL },
		{ "fractional uint max", F_PRIO, 0, 1.5, 64,
		  LB_HDR_KIND_PRIORITY },
		{ "fractional uint min", F_PRIO, 0.5, 10, 64,
		  LB_HDR_KIND_PRIORITY },
		{ "uint max past 2^53", F_TIME, 0, 1e17, 64,
		  LB_HDR_KIND_SPL_TIME },
		{ "zero max_len", F_SPL, 0, 1, 0, LB_HDR_KIND_SPL },
		{ "max_len past buffer", F_SPL, 0, 1, LB_HDR_VALUE_MAX + 1,
		  LB_HDR_KIND_SPL },
		{ "unknown kind", F_SPL, 0, 1, 64, LB_HDR_KIND_MAX },
		{ "negative kind", F_SPL, 0, 1, 64, -1 },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		bad = cfg;
		bad.fields[rows[i].field].min = rows[i].min;
		bad.fields[rows[i].field].max = rows[i].max;
		bad.fields[rows[i].field].max_len = rows[i].max_len;
		bad.fields[rows[i].field].kind = (enum lb_hdr_kind)rows[i].kind;
		print_message("config: %s\n", rows[i].what);
		assert_int_equal(lb_hdr_cfg_check(&bad), -EINVAL);
		errno = 0;
		assert_null(lb_hdr_db_compile(&bad));
		assert_int_equal(errno, EINVAL);
	}
	bad = cfg;
	snprintf(bad.fields[1].name, sizeof(bad.fields[1].name), "x-SPL");
	assert_int_equal(lb_hdr_cfg_check(&bad), -EINVAL);
	bad = cfg;
	bad.nb_fields = LB_HDR_MAX_FIELDS + 1;
	assert_int_equal(lb_hdr_cfg_check(&bad), -EINVAL);
	assert_int_equal(lb_hdr_cfg_check(NULL), -EINVAL);
	errno = 0;
	assert_null(lb_hdr_db_compile(NULL));
	assert_int_equal(errno, EINVAL);

	/* No fields at all still reads the status line. */
	memset(&bad, 0, sizeof(bad));
	db = lb_hdr_db_compile(&bad);
	assert_non_null(db);
	assert_int_equal(lb_hdr_db_field(db, LB_HDR_KIND_SPL), -ENOENT);
	{
		static const char text[] = "HTTP/1.1 204 x\r\n::\r\n: :\r\n"
					   "X-SPL: 1\r\n\r\n";
		struct lb_hdr_scratch *scr = lb_hdr_scratch_alloc(db);
		struct lb_hdr_stream st;
		struct lb_hdr_result ref;

		assert_non_null(scr);
		assert_int_equal(lb_hdr_stream_init(&st, db), 0);
		run_all_ways(db, scr, &st, text, sizeof(text) - 1, &ref);
		assert_int_equal(ref.status, 204);
		assert_int_equal(ref.present, 0);
		lb_hdr_stream_fini(&st);
		lb_hdr_scratch_free(scr);
	}
	lb_hdr_db_free(db);
}

static void
test_bad_args(void **state)
{
	struct ctx *c = *state;
	struct lb_hdr_result r;
	struct lb_hdr_stream st;

	assert_int_equal(lb_hdr_stream_init(NULL, c->db), -EINVAL);
	assert_int_equal(lb_hdr_stream_init(&st, NULL), -EINVAL);
	assert_int_equal(lb_hdr_feed(NULL, c->scr, "x", 1), -EINVAL);
	assert_int_equal(lb_hdr_feed(&c->st, NULL, "x", 1), -EINVAL);
	assert_int_equal(lb_hdr_feed(&c->st, c->scr, NULL, 1), -EINVAL);
	assert_int_equal(lb_hdr_feed(&c->st, c->scr, NULL, 0), 0);
	assert_int_equal(lb_hdr_end(&c->st, c->scr, NULL), -EINVAL);
	assert_int_equal(lb_hdr_end(NULL, c->scr, &r), -EINVAL);
	assert_int_equal(lb_hdr_end(&c->st, NULL, &r), -EINVAL);
	assert_int_equal(lb_hdr_stream_reset(NULL, c->scr), -EINVAL);
	assert_int_equal(lb_hdr_scan_block(NULL, c->scr, "x", 1, &r), -EINVAL);
	assert_int_equal(lb_hdr_scan_block(c->db, NULL, "x", 1, &r), -EINVAL);
	assert_int_equal(lb_hdr_scan_block(c->db, c->scr, NULL, 1, &r),
			 -EINVAL);
	assert_int_equal(lb_hdr_scan_block(c->db, c->scr, "x", 1, NULL),
			 -EINVAL);
	errno = 0;
	assert_null(lb_hdr_scratch_alloc(NULL));
	assert_int_equal(errno, EINVAL);
	assert_null(lb_hdr_scratch_clone(NULL));
	assert_null(lb_hdr_db_cfg(NULL));
	assert_int_equal(lb_hdr_db_field(NULL, LB_HDR_KIND_SPL), -EINVAL);
	assert_int_equal(lb_hdr_db_field(c->db, LB_HDR_KIND_ORCA), F_ORCA);
	assert_int_equal(lb_hdr_db_field(c->db, LB_HDR_KIND_UINT), -ENOENT);
	/* An empty block, in both modes, reports nothing. */
	assert_int_equal(lb_hdr_end(&c->st, c->scr, &r), 0);
	assert_int_equal(r.present | r.valid | r.status_seen, 0);
	assert_int_equal(lb_hdr_scan_block(c->db, c->scr, NULL, 0, &r), 0);
	assert_int_equal(r.present | r.valid | r.status_seen, 0);
	assert_string_equal(lb_hdr_reason_str(LB_HDR_ERR_DUPLICATE),
			    "duplicate");
	assert_string_equal(lb_hdr_reason_str(LB_HDR_ERR_MAX), "?");
	assert_string_equal(lb_hdr_kind_str(LB_HDR_KIND_SPL_TIME), "spl_time");
	assert_string_equal(lb_hdr_kind_str(LB_HDR_KIND_MAX), "?");
	/* fini twice is harmless; the stream can be set up again. */
	assert_int_equal(lb_hdr_stream_init(&st, c->db), 0);
	lb_hdr_stream_fini(&st);
	lb_hdr_stream_fini(&st);
	assert_int_equal(lb_hdr_feed(&st, c->scr, "x", 1), -EINVAL);
}

/* Scanning, ending and resetting never allocate: the memory of a stream
 * is fixed when it is set up. */
static void
test_no_alloc_when_scanning(void **state)
{
	struct ctx *c = *state;
	struct lb_hdr_result r;
	unsigned long before = hs_allocs;

	for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		const struct fixture *fx = &fixtures[i];

		if (fx->custom)
			continue;
		for (size_t k = 0; k < fx_len(fx); k += 7) {
			size_t n = fx_len(fx) - k < 7 ? fx_len(fx) - k : 7;

			assert_int_equal(lb_hdr_feed(&c->st, c->scr,
						     fx->text + k, n), 0);
		}
		assert_int_equal(lb_hdr_end(&c->st, c->scr, &r), 0);
		assert_int_equal(lb_hdr_scan_block(c->db, c->scr, fx->text,
						   fx_len(fx), &r), 0);
		assert_int_equal(lb_hdr_feed(&c->st, c->scr, fx->text, 5), 0);
		assert_int_equal(lb_hdr_stream_reset(&c->st, c->scr), 0);
	}
	assert_int_equal(hs_allocs, before);
	/* ...while setting one up does go through the allocator. */
	struct lb_hdr_stream st;

	assert_int_equal(lb_hdr_stream_init(&st, c->db), 0);
	assert_true(hs_allocs > before);
	lb_hdr_stream_fini(&st);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixtures),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_random_blocks),
		cmocka_unit_test(test_block_lines),
		cmocka_unit_test(test_reuse_and_reset),
		cmocka_unit_test(test_stats),
		cmocka_unit_test(test_serialize),
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_bad_args),
		cmocka_unit_test(test_no_alloc_when_scanning),
	};

	/* Before anything is allocated, so that every Hyperscan object is
	 * freed by the allocator that made it. */
	if (hs_set_allocator(count_alloc, free) != HS_SUCCESS)
		return 1;
	return cmocka_run_group_tests(tests, setup, teardown);
}
