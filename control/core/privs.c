/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Capability sets through capget/capset and prctl directly: the version 3
 * interface (two 32-bit words per set) covers capabilities 0..63.
 */
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "privs.h"

static const char *const names[] = {
	"chown", "dac_override", "dac_read_search", "fowner", "fsetid",
	"kill", "setgid", "setuid", "setpcap", "linux_immutable",
	"net_bind_service", "net_broadcast", "net_admin", "net_raw",
	"ipc_lock", "ipc_owner", "sys_module", "sys_rawio", "sys_chroot",
	"sys_ptrace", "sys_pacct", "sys_admin", "sys_boot", "sys_nice",
	"sys_resource", "sys_time", "sys_tty_config", "mknod", "lease",
	"audit_write", "audit_control", "setfcap", "mac_override",
	"mac_admin", "syslog", "wake_alarm", "block_suspend", "audit_read",
	"perfmon", "bpf", "checkpoint_restore",
};
#define NB_NAMES (sizeof(names) / sizeof(names[0]))

uint64_t
lb_privs_keep_default(void)
{
	return LB_PRIVS_BIT(CAP_SYS_ADMIN) | LB_PRIVS_BIT(CAP_NET_ADMIN) |
	       LB_PRIVS_BIT(CAP_NET_BIND_SERVICE) | LB_PRIVS_BIT(CAP_IPC_LOCK) |
	       LB_PRIVS_BIT(CAP_SYS_RESOURCE) | LB_PRIVS_BIT(CAP_KILL) |
	       LB_PRIVS_BIT(CAP_SETUID) | LB_PRIVS_BIT(CAP_SETGID);
}

static int
fail(char *err, size_t errlen, int rc, const char *what, const char *arg)
{
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "%s%s%s", what, arg != NULL ? arg : "",
			 arg != NULL ? "'" : "");
	return rc;
}

int
lb_privs_parse(const char *s, uint64_t *mask, char *err, size_t errlen)
{
	uint64_t m = 0;

	if (s == NULL || mask == NULL)
		return fail(err, errlen, -EINVAL, "no capability list", NULL);
	if (strcmp(s, "default") == 0) {
		*mask = lb_privs_keep_default();
		return 0;
	}
	if (strcmp(s, "none") == 0) {
		*mask = 0;
		return 0;
	}
	while (*s != '\0') {
		size_t n = strcspn(s, ",");
		unsigned int i;

		for (i = 0; i < NB_NAMES; i++)
			if (strlen(names[i]) == n && !strncmp(s, names[i], n))
				break;
		if (i == NB_NAMES) {
			char w[32];

			snprintf(w, sizeof(w), "%.*s", n < 31 ? (int)n : 31, s);
			return fail(err, errlen, -EINVAL,
				    "unknown capability '", w);
		}
		m |= LB_PRIVS_BIT(i);
		s += n;
		if (*s == ',' && *++s == '\0')
			return fail(err, errlen, -EINVAL,
				    "empty capability name", NULL);
	}
	*mask = m;
	return 0;
}

void
lb_privs_format(uint64_t mask, char *buf, size_t len)
{
	size_t off = 0;

	if (len == 0)
		return;
	buf[0] = '\0';
	for (unsigned int i = 0; i < NB_NAMES && off < len; i++) {
		int n;

		if (!(mask & LB_PRIVS_BIT(i)))
			continue;
		n = snprintf(buf + off, len - off, "%s%s", off ? "," : "",
			     names[i]);
		if (n < 0)
			break;
		off += (size_t)n;
	}
	if (off == 0)
		snprintf(buf, len, "none");
}

int
lb_privs_group(const char *s, gid_t *gid, char *err, size_t errlen)
{
	struct group gr, *res = NULL;
	char buf[4096], *end;
	unsigned long v;

	if (s == NULL || *s == '\0' || gid == NULL)
		return fail(err, errlen, -EINVAL, "no group", NULL);
	errno = 0;
	v = strtoul(s, &end, 10);
	if (*end == '\0' && errno == 0 && s[0] >= '0' && s[0] <= '9') {
		if (v >= (unsigned long)(gid_t)-1)
			return fail(err, errlen, -EINVAL, "invalid group '",
				    s);
		*gid = (gid_t)v;
		return 0;
	}
	if (getgrnam_r(s, &gr, buf, sizeof(buf), &res) != 0 || res == NULL)
		return fail(err, errlen, -ENOENT, "no group '", s);
	*gid = gr.gr_gid;
	return 0;
}

static int
get_sets(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};

	return syscall(SYS_capget, &h, d) == 0 ? 0 : -errno;
}

static uint64_t
join(uint32_t lo, uint32_t hi)
{
	return (uint64_t)hi << 32 | lo;
}

uint64_t
lb_privs_current(char which)
{
	struct __user_cap_data_struct d[2];
	uint64_t b = 0;

	if (which == 'b') {
		for (unsigned int c = 0; c < 64; c++) {
			int r = prctl(PR_CAPBSET_READ, c, 0, 0, 0);

			if (r < 0)
				break;
			if (r == 1)
				b |= LB_PRIVS_BIT(c);
		}
		return b;
	}
	if (get_sets(d) != 0)
		return 0;
	if (which == 'e')
		return join(d[0].effective, d[1].effective);
	return join(d[0].permitted, d[1].permitted);
}

int
lb_privs_drop(uint64_t keep, bool nnp, struct lb_privs_report *r,
	      char *err, size_t errlen)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct d[2];
	struct lb_privs_report rep;
	int rc;

	memset(&rep, 0, sizeof(rep));
	rc = get_sets(d);
	if (rc != 0)
		return fail(err, errlen, rc, "capget failed", NULL);
	rep.before = join(d[0].permitted, d[1].permitted);
	/* The bounding set first: dropping from it needs CAP_SETPCAP,
	 * which the capset below takes away unless kept. */
	for (unsigned int c = 0; c < 64; c++) {
		int in = prctl(PR_CAPBSET_READ, c, 0, 0, 0);

		if (in < 0)
			break; /* past the kernel's last capability */
		if (in == 0 || (keep & LB_PRIVS_BIT(c)))
			continue;
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) == 0) {
			rep.bset_dropped++;
		} else if (errno == EPERM) {
			rep.bset_denied = true;
			break;
		} else {
			return fail(err, errlen, -errno,
				    "cannot drop from the bounding set", NULL);
		}
	}
	/* Ambient capabilities would survive execve of plain programs. */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 &&
	    errno != EINVAL)
		return fail(err, errlen, -errno,
			    "cannot clear the ambient set", NULL);
	for (int i = 0; i < 2; i++) {
		uint32_t k = (uint32_t)(keep >> (32 * i));

		d[i].effective &= k;
		d[i].permitted &= k;
		d[i].inheritable &= k;
	}
	if (syscall(SYS_capset, &h, d) != 0)
		return fail(err, errlen, -errno, "capset failed", NULL);
	if (nnp) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
			return fail(err, errlen, -errno,
				    "cannot set no_new_privs", NULL);
		rep.nnp = true;
	}
	rep.after = lb_privs_current('p');
	if (r != NULL)
		*r = rep;
	return 0;
}
