/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the files of the steering library share: the handle behind
 * struct lb_steer. steer.c loads, attaches and pins the program;
 * steer_rules.c, steer_acl.c and steer_stats.c work on its maps
 * through the descriptors kept here.
 */
#ifndef LB_STEER_PRIV_H
#define LB_STEER_PRIV_H

#include <stdint.h>

struct steer_bpf;

struct lb_steer {
	struct steer_bpf *skel; /**< NULL for lb_steer_open_pinned() */
	int fd_rules;
	int fd_acl;
	int fd_ctr;
	/** IPv6 maps; -1 for lb_steer_open_pinned() of a directory that a
	 * version without IPv6 pinned (its program has no IPv6 maps). */
	int fd_rules6;
	int fd_acl6;
	int own_fds;	   /**< the fds above are ours to close */
	int ifindex;	   /**< where we attached, 0 when nowhere */
	uint32_t xdp_mode; /**< XDP_FLAGS_*_MODE of that attachment */
	int ncpus;
};

#endif /* LB_STEER_PRIV_H */
