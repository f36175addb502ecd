/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_DP_XDP_PORT_H
#define LB_DP_XDP_PORT_H

/*
 * net_af_xdp ports started with the XDP steering program (docs/xdp.md):
 * the program's object goes into the PMD's xdp_prog= devarg before the
 * EAL probes the ports; once a port is up, a copy on the instance's
 * pinned maps takes over from the PMD's and the boot configuration's
 * rules are synced into them. lb-dataplane is its only user.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lb/dpconf.h"
#include "lb/shm.h"

/** Option of lb-dataplane that leaves net_af_xdp ports to the PMD's own
 * program; looked for before the EAL parses its arguments. */
#define LB_XDP_OPT_OFF "--no-xdp-steer"

#ifdef LB_WITH_STEER

/**
 * Before rte_eal_init(): returns @p argv with ",xdp_prog=/proc/self/fd/N"
 * (the steering program's object) added to each --vdev of net_af_xdp that
 * names no program, unless LB_XDP_OPT_OFF follows "--". The result lives
 * until lb_xdp_close(); it is @p argv itself when nothing changed.
 * @return NULL when the object cannot be made (a message is printed).
 */
char **lb_xdp_eal_args(int argc, char **argv);

/**
 * After the EAL: where the maps are pinned. @p pin_dir NULL for
 * LB_STEER_PIN_ROOT/<EAL file prefix>.
 * @return 0 or -EINVAL (a message is printed).
 */
int lb_xdp_init(const char *pin_dir);

/** Before lb_port_setup() of a net_af_xdp port: removes a steering
 * program that a killed run left on its interface. No-op for others. */
void lb_xdp_port_prepare(uint16_t port_id);

/**
 * After lb_port_setup() of a net_af_xdp port: adopts the program the PMD
 * attached onto the pinned maps. A port whose program is someone else's
 * (their own xdp_prog=) or pinning that fails are reported and leave the
 * port as the PMD set it up (with unpinned maps when only pinning
 * failed). No-op for other ports.
 */
void lb_xdp_port_started(uint16_t port_id);

/** Syncs the rules of @p c into the maps of the adopted ports. */
void lb_xdp_sync(const struct lb_dpconf *c);

/** Tells lb-control where the pinned maps are (none: "") and which
 * addresses the host shares (struct lb_shm). */
void lb_xdp_publish(struct lb_shm *shm);

/** Releases the handles (the PMD detaches the program when it closes the
 * port) and what lb_xdp_eal_args() allocated. */
void lb_xdp_close(void);

#else /* !LB_WITH_STEER */

/* Built without bpf/ (no clang, bpftool or libbpf): net_af_xdp ports run
 * the PMD's own program, which takes every frame of its queues. */
static inline char **
lb_xdp_eal_args(int argc, char **argv)
{
	(void)argc;
	return argv;
}
static inline int
lb_xdp_init(const char *pin_dir)
{
	(void)pin_dir;
	return 0;
}
static inline void
lb_xdp_port_prepare(uint16_t port_id)
{
	(void)port_id;
}
static inline void
lb_xdp_port_started(uint16_t port_id)
{
	(void)port_id;
}
static inline void
lb_xdp_sync(const struct lb_dpconf *c)
{
	(void)c;
}
static inline void
lb_xdp_publish(struct lb_shm *shm)
{
	(void)shm;
}
static inline void
lb_xdp_close(void)
{
}

#endif /* LB_WITH_STEER */

#endif /* LB_DP_XDP_PORT_H */
