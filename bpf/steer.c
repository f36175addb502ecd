/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * User-space half of the XDP steering program: loading, attaching and
 * adopting it, and the per-instance pins in bpffs. The maps it pins are
 * worked on in steer_rules.c, steer_acl.c and steer_stats.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <linux/if_link.h>
#include <netinet/in.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lb/steer.h"
#include "steer.skel.h"
#include "steer_priv.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* The maps shared through bpffs, with what a pinned one must look like. */
enum { MAP_RULES, MAP_ACL, MAP_CTR, MAP_RULES6, MAP_ACL6, NB_SHARED };

static const struct shared_map {
	const char *name;
	uint32_t type;
	uint32_t key_size;
	uint32_t value_size;
	/** Pinned since IPv6 only: a directory of an older version lacks
	 * it, and lb_steer_open_pinned() does without. */
	int since_ipv6;
} shared_maps[NB_SHARED] = {
	[MAP_RULES] = {"steer_rules", BPF_MAP_TYPE_HASH,
		       sizeof(struct lb_steer_key),
		       sizeof(struct lb_steer_val)},
	[MAP_ACL] = {"acl_v4", BPF_MAP_TYPE_LPM_TRIE,
		     sizeof(struct lb_steer_acl_key),
		     sizeof(struct lb_steer_acl_val)},
	[MAP_CTR] = {"counters", BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(uint32_t),
		     sizeof(struct lb_steer_ctr_val)},
	[MAP_RULES6] = {"steer_rules6", BPF_MAP_TYPE_HASH,
			sizeof(struct lb_steer_key6),
			sizeof(struct lb_steer_val), 1},
	[MAP_ACL6] = {"acl_v6", BPF_MAP_TYPE_LPM_TRIE,
		      sizeof(struct lb_steer_acl_key6),
		      sizeof(struct lb_steer_acl_val), 1},
};

uint64_t
lb_steer_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int
lb_steer_pin_dir(char *buf, size_t len, const char *inst)
{
	size_t n;

	if (buf == NULL || inst == NULL)
		return -EINVAL;
	n = strnlen(inst, 65);
	if (n == 0 || n > 64 || strchr(inst, '/') != NULL ||
	    strcmp(inst, ".") == 0 || strcmp(inst, "..") == 0)
		return -EINVAL;
	if ((size_t)snprintf(buf, len, "%s/%s", LB_STEER_PIN_ROOT, inst) >= len)
		return -ENOSPC;
	return 0;
}

static int
pin_path(char *buf, size_t len, const char *dir, const char *name)
{
	if ((size_t)snprintf(buf, len, "%s/%s", dir, name) >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* mkdir -p: bpffs holds directories, and a fresh host has none of ours. */
static int
make_dirs(const char *dir)
{
	char p[PATH_MAX];
	size_t n = strlen(dir);

	if (n == 0 || n >= sizeof(p))
		return -EINVAL;
	memcpy(p, dir, n + 1);
	for (char *c = p + 1;; c++) {
		char was = *c;

		if (was != '/' && was != '\0')
			continue;
		*c = '\0';
		if (mkdir(p, 0700) != 0 && errno != EEXIST)
			return -errno;
		*c = was;
		if (was == '\0')
			return 0;
	}
}

/* Is a pinned map one this version of the program can use? */
static int
check_map(int fd, const struct shared_map *m)
{
	struct bpf_map_info info;
	uint32_t len = sizeof(info);
	int rc;

	memset(&info, 0, sizeof(info));
	rc = bpf_obj_get_info_by_fd(fd, &info, &len);
	if (rc != 0)
		return rc;
	if (info.type != m->type || info.key_size != m->key_size ||
	    info.value_size != m->value_size)
		return -EINVAL;
	if (m->type == BPF_MAP_TYPE_PERCPU_ARRAY &&
	    info.max_entries != LB_STEER_CTR_MAX)
		return -EINVAL;
	return 0;
}

/* Opens the pinned map @p m of @p dir: its fd, or -errno. */
static int
open_pin(const char *dir, const struct shared_map *m)
{
	char path[PATH_MAX];
	int fd, rc;

	rc = pin_path(path, sizeof(path), dir, m->name);
	if (rc != 0)
		return rc;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return fd;
	rc = check_map(fd, m);
	if (rc != 0) {
		close(fd);
		return rc;
	}
	return fd;
}

static struct bpf_map *
skel_map(struct steer_bpf *skel, int i)
{
	switch (i) {
	case MAP_RULES:
		return skel->maps.steer_rules;
	case MAP_ACL:
		return skel->maps.acl_v4;
	case MAP_RULES6:
		return skel->maps.steer_rules6;
	case MAP_ACL6:
		return skel->maps.acl_v6;
	default:
		return skel->maps.counters;
	}
}

static struct lb_steer *
steer_alloc(void)
{
	struct lb_steer *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->fd_rules = s->fd_acl = s->fd_ctr = -1;
	s->fd_rules6 = s->fd_acl6 = -1;
	s->ncpus = libbpf_num_possible_cpus();
	if (s->ncpus <= 0) {
		free(s);
		return NULL;
	}
	return s;
}

/*
 * Opens the object, points its shared maps at the pins of conf->pin_dir
 * that exist (and xsks_map at @p xsks_fd when >= 0), loads it and pins
 * the maps that were not pinned yet.
 */
static int
steer_load(const struct lb_steer_conf *conf, int xsks_fd, struct lb_steer **out)
{
	struct lb_steer *s;
	int to_pin[NB_SHARED] = {0};
	char path[PATH_MAX];
	int rc;

	if (conf == NULL || out == NULL)
		return -EINVAL;
	*out = NULL;
	s = steer_alloc();
	if (s == NULL)
		return -ENOMEM;
	s->skel = steer_bpf__open();
	if (s->skel == NULL) {
		rc = -errno;
		goto fail;
	}
	/* Each family gets the sizes of the configuration. */
	for (int i = 0; i < NB_SHARED; i++) {
		uint32_t n = 0;

		if (i == MAP_RULES || i == MAP_RULES6)
			n = conf->max_rules;
		else if (i == MAP_ACL || i == MAP_ACL6)
			n = conf->max_acl;
		if (n == 0)
			continue;
		rc = bpf_map__set_max_entries(skel_map(s->skel, i), n);
		if (rc != 0)
			goto fail;
	}
	if (xsks_fd >= 0) {
		rc = bpf_map__reuse_fd(s->skel->maps.xsks_map, xsks_fd);
		if (rc != 0)
			goto fail;
	}
	if (conf->pin_dir != NULL) {
		rc = make_dirs(conf->pin_dir);
		if (rc != 0)
			goto fail;
		for (int i = 0; i < NB_SHARED; i++) {
			int fd = open_pin(conf->pin_dir, &shared_maps[i]);

			if (fd == -ENOENT) {
				to_pin[i] = 1;
				continue;
			}
			if (fd < 0) {
				rc = fd;
				goto fail;
			}
			/* reuse_fd takes the pinned map's size and flags. */
			rc = bpf_map__reuse_fd(skel_map(s->skel, i), fd);
			close(fd);
			if (rc != 0)
				goto fail;
		}
	}
	rc = steer_bpf__load(s->skel);
	if (rc != 0)
		goto fail;
	for (int i = 0; i < NB_SHARED; i++) {
		if (!to_pin[i])
			continue;
		rc = pin_path(path, sizeof(path), conf->pin_dir,
			      shared_maps[i].name);
		if (rc == 0)
			rc = bpf_map__pin(skel_map(s->skel, i), path);
		if (rc != 0)
			goto fail;
	}
	s->fd_rules = bpf_map__fd(s->skel->maps.steer_rules);
	s->fd_acl = bpf_map__fd(s->skel->maps.acl_v4);
	s->fd_ctr = bpf_map__fd(s->skel->maps.counters);
	s->fd_rules6 = bpf_map__fd(s->skel->maps.steer_rules6);
	s->fd_acl6 = bpf_map__fd(s->skel->maps.acl_v6);
	*out = s;
	return 0;
fail:
	steer_bpf__destroy(s->skel);
	free(s);
	return rc < 0 ? rc : -EINVAL;
}

int
lb_steer_load(const struct lb_steer_conf *conf, struct lb_steer **out)
{
	return steer_load(conf, -1, out);
}

int
lb_steer_attach(struct lb_steer *s, int ifindex, uint32_t xdp_flags)
{
	uint32_t mode = xdp_flags & XDP_FLAGS_MODES;
	int rc;

	if (s == NULL || s->skel == NULL || ifindex <= 0 || s->ifindex != 0 ||
	    (xdp_flags & ~XDP_FLAGS_MODES) != 0)
		return -EINVAL;
	rc = bpf_xdp_attach(ifindex, bpf_program__fd(s->skel->progs.lb_steer),
			    mode | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	if (rc != 0)
		return rc;
	s->ifindex = ifindex;
	s->xdp_mode = mode;
	return 0;
}

/* The program attached to @p ifindex: its fd (the caller closes it) and
 * the mode flag to address it with. */
static int
attached_prog(int ifindex, int *prog_fd, uint32_t *mode)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	uint32_t id;
	int rc, fd;

	rc = bpf_xdp_query(ifindex, 0, &q);
	if (rc != 0)
		return rc;
	if (q.drv_prog_id != 0) {
		id = q.drv_prog_id;
		*mode = XDP_FLAGS_DRV_MODE;
	} else if (q.skb_prog_id != 0) {
		id = q.skb_prog_id;
		*mode = XDP_FLAGS_SKB_MODE;
	} else if (q.hw_prog_id != 0) {
		return -EBUSY; /* offloaded: not something we made */
	} else {
		return -ENOENT;
	}
	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return fd;
	*prog_fd = fd;
	return 0;
}

/* Is @p prog_fd a steering program? Then its xsks_map fd in *xsks_fd
 * (when xsks_fd is not NULL; the caller closes it). */
static int
steering_prog(int prog_fd, int *xsks_fd)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info), ids[16], nb;
	int rc;

	memset(&info, 0, sizeof(info));
	rc = bpf_obj_get_info_by_fd(prog_fd, &info, &len);
	if (rc != 0)
		return rc;
	if (info.type != BPF_PROG_TYPE_XDP ||
	    strncmp(info.name, LB_STEER_PROG_NAME, sizeof(info.name)) != 0)
		return -EBUSY;
	if (xsks_fd == NULL)
		return 0;
	nb = info.nr_map_ids;
	if (nb > ARRAY_SIZE(ids))
		return -EBUSY;
	memset(&info, 0, sizeof(info));
	info.nr_map_ids = nb;
	info.map_ids = (uint64_t)(uintptr_t)ids;
	len = sizeof(info);
	rc = bpf_obj_get_info_by_fd(prog_fd, &info, &len);
	if (rc != 0)
		return rc;
	for (uint32_t i = 0; i < nb && i < info.nr_map_ids; i++) {
		struct bpf_map_info mi;
		uint32_t mlen = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd < 0)
			return fd;
		memset(&mi, 0, sizeof(mi));
		rc = bpf_obj_get_info_by_fd(fd, &mi, &mlen);
		if (rc == 0 && mi.type == BPF_MAP_TYPE_XSKMAP &&
		    strcmp(mi.name, "xsks_map") == 0) {
			*xsks_fd = fd;
			return 0;
		}
		close(fd);
		if (rc != 0)
			return rc;
	}
	return -EBUSY;
}

int
lb_steer_adopt(const struct lb_steer_conf *conf, int ifindex,
	       struct lb_steer **out)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, ao);
	struct lb_steer *s = NULL;
	int old_fd = -1, xsks_fd = -1, rc;
	uint32_t mode;

	if (conf == NULL || out == NULL || ifindex <= 0)
		return -EINVAL;
	*out = NULL;
	rc = attached_prog(ifindex, &old_fd, &mode);
	if (rc != 0)
		return rc;
	rc = steering_prog(old_fd, &xsks_fd);
	if (rc != 0)
		goto out;
	rc = steer_load(conf, xsks_fd, &s);
	if (rc != 0)
		goto out;
	/* REPLACE: only if the PMD's program is still the one attached,
	 * so a concurrent change is reported instead of overwritten. */
	ao.old_prog_fd = old_fd;
	rc = bpf_xdp_attach(ifindex, bpf_program__fd(s->skel->progs.lb_steer),
			    mode | XDP_FLAGS_REPLACE, &ao);
	if (rc != 0) {
		lb_steer_close(s);
		goto out;
	}
	s->ifindex = ifindex;
	s->xdp_mode = mode;
	*out = s;
out:
	if (xsks_fd >= 0)
		close(xsks_fd);
	close(old_fd);
	return rc;
}

int
lb_steer_detach(struct lb_steer *s)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, ao);
	int rc;

	if (s == NULL)
		return -EINVAL;
	if (s->ifindex == 0 || s->skel == NULL)
		return 0;
	ao.old_prog_fd = bpf_program__fd(s->skel->progs.lb_steer);
	rc = bpf_xdp_detach(s->ifindex, s->xdp_mode | XDP_FLAGS_REPLACE, &ao);
	/* EEXIST: ours is no longer the attached program (the PMD detached
	 * it, or something replaced it), so there is nothing of ours to
	 * remove. ENODEV: the interface is gone, and our program with it. */
	if (rc == -EEXIST || rc == -ENODEV)
		rc = 0;
	if (rc == 0)
		s->ifindex = 0;
	return rc;
}

void
lb_steer_disown(struct lb_steer *s)
{
	if (s != NULL)
		s->ifindex = 0;
}

int
lb_steer_detach_ifindex(int ifindex)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, ao);
	uint32_t mode;
	int fd, rc;

	if (ifindex <= 0)
		return -EINVAL;
	rc = attached_prog(ifindex, &fd, &mode);
	if (rc == -ENOENT)
		return 0;
	if (rc != 0)
		return rc;
	rc = steering_prog(fd, NULL);
	if (rc == 0) {
		ao.old_prog_fd = fd;
		rc = bpf_xdp_detach(ifindex, mode | XDP_FLAGS_REPLACE, &ao);
	}
	close(fd);
	return rc;
}

int
lb_steer_open_pinned(const char *pin_dir, struct lb_steer **out)
{
	struct lb_steer *s;
	int fds[NB_SHARED];
	int rc = 0;

	if (pin_dir == NULL || out == NULL)
		return -EINVAL;
	*out = NULL;
	s = steer_alloc();
	if (s == NULL)
		return -ENOMEM;
	for (int i = 0; i < NB_SHARED; i++)
		fds[i] = -1;
	for (int i = 0; i < NB_SHARED; i++) {
		fds[i] = open_pin(pin_dir, &shared_maps[i]);
		/* A running dataplane of an older version: IPv4 works, the
		 * IPv6 calls say -EOPNOTSUPP until its next load pins them. */
		if (fds[i] == -ENOENT && shared_maps[i].since_ipv6) {
			fds[i] = -1;
			continue;
		}
		if (fds[i] < 0) {
			rc = fds[i];
			break;
		}
	}
	if (rc != 0) {
		for (int i = 0; i < NB_SHARED; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		free(s);
		return rc;
	}
	s->fd_rules = fds[MAP_RULES];
	s->fd_acl = fds[MAP_ACL];
	s->fd_ctr = fds[MAP_CTR];
	s->fd_rules6 = fds[MAP_RULES6];
	s->fd_acl6 = fds[MAP_ACL6];
	s->own_fds = 1;
	*out = s;
	return 0;
}

void
lb_steer_close(struct lb_steer *s)
{
	if (s == NULL)
		return;
	lb_steer_detach(s);
	if (s->own_fds) {
		close(s->fd_rules);
		close(s->fd_acl);
		close(s->fd_ctr);
		if (s->fd_rules6 >= 0)
			close(s->fd_rules6);
		if (s->fd_acl6 >= 0)
			close(s->fd_acl6);
	}
	steer_bpf__destroy(s->skel);
	free(s);
}

int
lb_steer_unpin(const char *pin_dir)
{
	char path[PATH_MAX];
	int rc;

	if (pin_dir == NULL)
		return -EINVAL;
	for (int i = 0; i < NB_SHARED; i++) {
		rc = pin_path(path, sizeof(path), pin_dir, shared_maps[i].name);
		if (rc != 0)
			return rc;
		if (unlink(path) != 0 && errno != ENOENT)
			return -errno;
	}
	if (rmdir(pin_dir) != 0 && errno != ENOENT)
		return -errno;
	return 0;
}

/* Writes the object built into the library to @p fd. */
static int
write_obj_fd(int fd)
{
	const unsigned char *p;
	size_t sz, done = 0;

	p = steer_bpf__elf_bytes(&sz);
	while (done < sz) {
		ssize_t n = write(fd, p + done, sz - done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		done += (size_t)n;
	}
	return 0;
}

int
lb_steer_write_obj(const char *path)
{
	char tmp[PATH_MAX];
	int fd, rc;

	if (path == NULL)
		return -EINVAL;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path,
			     (long)getpid()) >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	rc = write_obj_fd(fd);
	if (close(fd) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
	if (rc != 0)
		unlink(tmp);
	return rc;
}

int
lb_steer_obj_memfd(void)
{
	int fd = memfd_create("steer.bpf.o", MFD_CLOEXEC);
	int rc;

	if (fd < 0)
		return -errno;
	rc = write_obj_fd(fd);
	if (rc != 0) {
		close(fd);
		return rc;
	}
	return fd;
}

int
lb_steer_prog_fd(const struct lb_steer *s)
{
	if (s == NULL || s->skel == NULL)
		return -1;
	return bpf_program__fd(s->skel->progs.lb_steer);
}

int
lb_steer_xsks_fd(const struct lb_steer *s)
{
	if (s == NULL || s->skel == NULL)
		return -1;
	return bpf_map__fd(s->skel->maps.xsks_map);
}
