/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * net_af_xdp ports on the XDP steering program: the devarg, the adoption
 * onto the instance's pinned maps and the boot configuration's rules.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_log.h>

#include "lb/steer.h"
#include "lb/steer_sync.h"
#include "xdp_port.h"

#define LOG(level, fmt, ...) \
	RTE_LOG(level, USER1, "xdp: " fmt "\n", ##__VA_ARGS__)

#define AF_XDP_DRIVER "net_af_xdp"

static struct {
	bool on;		/* not LB_XDP_OPT_OFF */
	int obj_fd;		/* memfd of the object, -1 when none */
	char **argv;		/* what lb_xdp_eal_args() returned */
	char **owned;		/* the strings of argv we made */
	int nb_owned;
	char pin_dir[LB_SHM_STEER_PIN_MAX];
	bool pinned;		/* some port runs on the pinned maps */
	struct lb_steer *s[RTE_MAX_ETHPORTS];
	int ifindex[RTE_MAX_ETHPORTS]; /* of the adopted ports */
	uint32_t nb_if;
	uint32_t host[LB_SHM_STEER_HOST_MAX]; /* the kernel's addresses there */
	uint32_t nb_host;
	uint8_t host6[LB_SHM_STEER_HOST_MAX][16];
	uint32_t nb_host6;
} xp = {.obj_fd = -1};

/* The devargs of a --vdev of net_af_xdp (its alias eth_af_xdp too) that
 * names no program of its own. */
static bool
wants_prog(const char *devargs)
{
	if (strncmp(devargs, "net_af_xdp", 10) != 0 &&
	    strncmp(devargs, "eth_af_xdp", 10) != 0)
		return false;
	return strstr(devargs, "xdp_prog=") == NULL;
}

static char *
with_prog(const char *opt, const char *devargs)
{
	char *s;

	if (asprintf(&s, "%s%s,xdp_prog=/proc/self/fd/%d", opt, devargs,
		     xp.obj_fd) < 0)
		return NULL;
	return s;
}

char **
lb_xdp_eal_args(int argc, char **argv)
{
	char **out;
	int i;

	for (i = 0; i < argc && strcmp(argv[i], "--") != 0; i++)
		;
	for (; i < argc; i++)
		if (strcmp(argv[i], LB_XDP_OPT_OFF) == 0)
			return argv;
	xp.on = true;
	out = calloc((size_t)argc + 1, sizeof(*out));
	xp.owned = calloc((size_t)argc + 1, sizeof(*xp.owned));
	if (out == NULL || xp.owned == NULL)
		goto nomem;
	for (i = 0; i < argc; i++) {
		const char *da = NULL, *opt = "";
		char *s;

		out[i] = argv[i];
		if (strcmp(argv[i], "--") == 0) {
			for (i++; i < argc; i++)
				out[i] = argv[i];
			break;
		}
		if (strncmp(argv[i], "--vdev=", 7) == 0) {
			da = argv[i] + 7;
			opt = "--vdev=";
		} else if (strcmp(argv[i], "--vdev") == 0 && i + 1 < argc) {
			out[i] = argv[i];
			i++;
			out[i] = argv[i];
			da = argv[i];
		}
		if (da == NULL || !wants_prog(da))
			continue;
		if (xp.obj_fd < 0) {
			xp.obj_fd = lb_steer_obj_memfd();
			if (xp.obj_fd < 0) {
				fprintf(stderr, "lb-dataplane: cannot hold the "
						"XDP steering program: %s\n",
					strerror(-xp.obj_fd));
				goto fail;
			}
		}
		s = with_prog(opt, da);
		if (s == NULL)
			goto nomem;
		xp.owned[xp.nb_owned++] = s;
		out[i] = s;
	}
	if (xp.nb_owned == 0) {
		free(out);
		return argv;
	}
	xp.argv = out;
	return out;
nomem:
	fprintf(stderr, "lb-dataplane: out of memory\n");
fail:
	free(out);
	return NULL;
}

int
lb_xdp_init(const char *pin_dir)
{
	char rt[PATH_MAX];
	int rc;

	if (pin_dir != NULL) {
		if (pin_dir[0] != '/' ||
		    strlen(pin_dir) >= sizeof(xp.pin_dir)) {
			fprintf(stderr, "lb-dataplane: --xdp-pin: '%s' is not "
					"an absolute path shorter than %zu bytes\n",
				pin_dir, sizeof(xp.pin_dir));
			return -EINVAL;
		}
		snprintf(xp.pin_dir, sizeof(xp.pin_dir), "%s", pin_dir);
		return 0;
	}
	/* One directory per instance, and the EAL file prefix names the
	 * instance: lb-control attaches with the same prefix. */
	snprintf(rt, sizeof(rt), "%s", rte_eal_get_runtime_dir());
	rc = lb_steer_pin_dir(xp.pin_dir, sizeof(xp.pin_dir), basename(rt));
	if (rc != 0) {
		fprintf(stderr, "lb-dataplane: no pin directory for the file "
				"prefix of %s: %s\n",
			rte_eal_get_runtime_dir(), strerror(-rc));
		return rc;
	}
	return 0;
}

/* The interface of a net_af_xdp port, 0 for another port. */
static int
af_xdp_ifindex(uint16_t port_id)
{
	struct rte_eth_dev_info di;

	if (rte_eth_dev_info_get(port_id, &di) != 0 ||
	    strcmp(di.driver_name, AF_XDP_DRIVER) != 0 || di.if_index == 0 ||
	    di.if_index > INT_MAX)
		return 0;
	return (int)di.if_index;
}

void
lb_xdp_port_prepare(uint16_t port_id)
{
	int ifindex = af_xdp_ifindex(port_id);
	int rc;

	if (ifindex == 0 || !xp.on)
		return;
	/* A dataplane killed with SIGKILL leaves its program attached, and
	 * the PMD refuses to attach over it. Only a steering program goes;
	 * anyone else's makes the port fail to start, as it should. */
	rc = lb_steer_detach_ifindex(ifindex);
	if (rc != 0 && rc != -EBUSY)
		LOG(WARNING, "port %u: cannot remove a stale steering "
			     "program: %s",
		    port_id, strerror(-rc));
	else if (rc == 0)
		LOG(DEBUG, "port %u: no stale steering program", port_id);
}

void
lb_xdp_port_started(uint16_t port_id)
{
	struct lb_steer_conf conf = {.pin_dir = xp.pin_dir};
	int ifindex = af_xdp_ifindex(port_id);
	int rc;

	if (ifindex == 0 || !xp.on)
		return;
	rc = lb_steer_adopt(&conf, ifindex, &xp.s[port_id]);
	if (rc == -EBUSY) {
		LOG(WARNING, "port %u: the XDP program on its interface is "
			     "not the steering program: its maps are not "
			     "managed",
		    port_id);
		return;
	}
	if (rc != 0) {
		/* No bpffs on /sys/fs/bpf (ip netns exec mounts a /sys
		 * without it; ENOENT or EPERM), or a pinned map of an older
		 * layout: steer by the boot configuration alone. */
		int rc2;

		conf.pin_dir = NULL;
		rc2 = lb_steer_adopt(&conf, ifindex, &xp.s[port_id]);
		if (rc2 != 0) {
			LOG(ERR, "port %u: cannot adopt the steering program "
				 "(%s); its maps are not managed",
			    port_id, strerror(-rc2));
			return;
		}
		LOG(WARNING, "port %u: cannot pin the steering maps in %s "
			     "(%s): steering from the boot configuration "
			     "only, lb-control cannot change it",
		    port_id, xp.pin_dir, strerror(-rc));
	} else {
		xp.pinned = true;
	}
	xp.ifindex[xp.nb_if++] = ifindex;
	LOG(INFO, "port %u: steering program adopted (maps %s)", port_id,
	    conf.pin_dir != NULL ? conf.pin_dir : "private");
}

void
lb_xdp_sync(const struct lb_dpconf *c)
{
	int n, n6;

	/* The addresses the host keeps on these interfaces: taken once,
	 * and published, so that lb-control's rules are the same. */
	n = lb_steer_host_addrs(xp.ifindex, xp.nb_if, xp.host,
				LB_SHM_STEER_HOST_MAX);
	n6 = lb_steer_host_addrs6(xp.ifindex, xp.nb_if, xp.host6,
				  LB_SHM_STEER_HOST_MAX);
	if (n < 0 || n6 < 0) {
		LOG(ERR, "cannot read the interfaces' addresses: %s",
		    strerror(n < 0 ? -n : -n6));
		n = n < 0 ? 0 : n;
		n6 = n6 < 0 ? 0 : n6;
	}
	xp.nb_host = (uint32_t)n;
	xp.nb_host6 = (uint32_t)n6;
	for (uint16_t p = 0; p < RTE_MAX_ETHPORTS; p++) {
		struct lb_steer_sync_res res, res6 = {0};
		int rc;

		if (xp.s[p] == NULL)
			continue;
		rc = lb_steer_sync_dpconf(xp.s[p], c, xp.host, xp.nb_host,
					  &res);
		if (rc == 0)
			rc = lb_steer_sync6_dpconf(
				xp.s[p], c, (const uint8_t(*)[16])xp.host6,
				xp.nb_host6, &res6);
		if (rc == -EOPNOTSUPP)
			rc = 0; /* maps pinned without IPv6 */
		if (rc != 0)
			LOG(ERR, "port %u: steering rules: %s", p,
			    strerror(-rc));
		else
			LOG(INFO, "port %u: steering rules: %u added, %u "
				  "removed, %u kept (IPv6: %u, %u, %u)",
			    p, res.added, res.removed, res.kept, res6.added,
			    res6.removed, res6.kept);
	}
}

void
lb_xdp_publish(struct lb_shm *shm)
{
	snprintf(shm->steer_pin, sizeof(shm->steer_pin), "%s",
		 xp.pinned ? xp.pin_dir : "");
	shm->steer_nb_host = xp.nb_host;
	memcpy(shm->steer_host, xp.host, sizeof(xp.host));
	shm->steer_nb_host6 = xp.nb_host6;
	memcpy(shm->steer_host6, xp.host6, sizeof(xp.host6));
}

void
lb_xdp_close(void)
{
	for (uint16_t p = 0; p < RTE_MAX_ETHPORTS; p++) {
		lb_steer_close(xp.s[p]);
		xp.s[p] = NULL;
	}
	for (int i = 0; i < xp.nb_owned; i++)
		free(xp.owned[i]);
	free(xp.owned);
	free(xp.argv);
	xp.owned = NULL;
	xp.argv = NULL;
	xp.nb_owned = 0;
	if (xp.obj_fd >= 0)
		close(xp.obj_fd);
	xp.obj_fd = -1;
}
