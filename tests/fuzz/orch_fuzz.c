/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What an orchestrator's `up` command prints, through the exec driver's
 * output reader (lb_orch_parse_output). Invariants, against a reading of
 * the lines done here with lb_orch_parse_line(): the output is accepted
 * exactly when every line that is not blank or a comment is an instance
 * line, and then the first one is returned; a refused output names the
 * first bad line; an accepted id is 1..LB_ORCH_ID_LEN printable bytes
 * without spaces; the address and port, written back as "ID A.B.C.D:PORT",
 * read back the same.
 */
#include <string.h>

#include "fuzz.h"
#include "orch.h"

static int
blank(char c)
{
	return c == ' ' || c == '\t';
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	char id[LB_ORCH_ID_LEN + 1], fid[LB_ORCH_ID_LEN + 1];
	char line[LB_ORCH_ID_LEN + 1 + LB_CMD_IP_ADDR_STRLEN + 1];
	char a[LB_CMD_IP_ADDR_STRLEN];
	struct lb_conf_ip ip = {0}, fip = {0}, rip;
	uint16_t port = 0, fport = 0, rport;
	unsigned int bad = 0, lineno = 0, want_bad = 0;
	int rc, found = 0;
	size_t i = 0;

	if (size > 8192)
		return 0;
	rc = lb_orch_parse_output(buf, size, id, &ip, &port, &bad);
	/* The reference reading, line by line. */
	while (i < size && want_bad == 0) {
		const char *nl = memchr(buf + i, '\n', size - i);
		size_t e = nl != NULL ? (size_t)(nl - buf) : size, l = e - i, k = 0;

		lineno++;
		if (l > 0 && buf[i + l - 1] == '\r')
			l--;
		while (k < l && blank(buf[i + k]))
			k++;
		if (k < l && buf[i + k] != '#') {
			char xid[LB_ORCH_ID_LEN + 1];
			struct lb_conf_ip xip;
			uint16_t xport;

			if (memchr(buf + i, '\0', l) != NULL ||
			    lb_orch_parse_line(buf + i, l, xid, &xip, &xport) !=
				    0)
				want_bad = lineno;
			else if (!found) {
				found = 1;
				memcpy(fid, xid, sizeof(fid));
				fip = xip;
				fport = xport;
			}
		}
		i = e + 1;
	}
	if (want_bad != 0) {
		FUZZ_CHECK(rc == -EINVAL && bad == want_bad);
		return 0;
	}
	if (!found) {
		FUZZ_CHECK(rc == 0);
		return 0;
	}
	FUZZ_CHECK(rc == 1);
	FUZZ_CHECK(!strcmp(id, fid) && lb_conf_ip_eq(&ip, &fip) &&
		   port == fport);
	FUZZ_CHECK(strlen(id) >= 1 && strlen(id) <= LB_ORCH_ID_LEN);
	for (const char *p = id; *p != '\0'; p++)
		FUZZ_CHECK(*p > 0x20 && *p < 0x7f);
	FUZZ_CHECK(port != 0);
	snprintf(line, sizeof(line), "%s %s", id,
		 lb_cmd_fmt_ip_port(&ip, port, a));
	FUZZ_CHECK(lb_orch_parse_line(line, strlen(line), fid, &rip, &rport) ==
		   0);
	FUZZ_CHECK(!strcmp(fid, id) && lb_conf_ip_eq(&rip, &ip) &&
		   rport == port);
	return 0;
}
