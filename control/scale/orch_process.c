/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The `process` orchestrator driver: local instances of a command.
 *
 * target "A.B.C.D:P1-P2": each instance runs in lb-control's network
 * namespace on its own port of A.B.C.D.
 *
 * target "netns A.B.C.D-E/LEN SWNS BRIDGE [NAME]": each instance runs in
 * a network namespace of its own, with a veth whose far end joins BRIDGE
 * in namespace SWNS (the switch the dataplane's backend-side port is on)
 * and an address from A.B.C.D..A.B.C.E; inst-port is its port. NAME
 * names the namespaces, "{id}" standing for the instance id (default
 * "SWNS-i{id}", or "SWNS-POOL-i{id}" for a named pool of a service: the
 * pools of one service number their instances alike).
 *
 * The command is run by /bin/sh with LB_INST_ADDR, LB_INST_PORT, LB_INST_ID
 * and LB_SVC in its environment, in its own process group; a stop sends
 * that group SIGTERM, then SIGKILL after LB_ORCH_KILL_GRACE_NS. Exits are
 * reported; a namespace is deleted once its instance is gone.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "orch.h"

enum pstate { P_FREE = 0, P_RUN, P_TERM, P_CLEAN };

struct pinst {
	enum pstate st;
	uint32_t inst;
	unsigned int slot;
	bool stop_asked;
	bool announced; /* UP reported */
	uint64_t kill_ns;
	struct lb_orch_job job;	  /* the instance */
	struct lb_orch_job clean; /* deleting its namespace */
	char ns[64];
	char veth[16];
};

struct pdrv {
	char cmd[LB_AS_ARG_LEN + 1];
	char svc[LB_ORCH_UNIT_LEN];
	bool netns;
	uint32_t base;	   /* first address (netns) */
	struct lb_conf_ip addr; /* the address (ports), either family */
	uint16_t port0;	   /* first port (ports) */
	unsigned int size; /* slots in the pool */
	uint8_t len;	   /* netns subnet length */
	uint16_t inst_port;
	char swns[64];
	char bridge[16];
	/* An instance's namespace is ns_pre, its id, ns_suf (ns_names()). */
	char ns_pre[64], ns_suf[64];
	char name[48]; /* namespace name pattern, "" for SWNS-i{id} */
	struct pinst p[LB_AS_INST_MAX];
	bool used[LB_AS_INST_MAX];
};

/* Reads the target into @p d (may be NULL: only check). */
static int
parse_target(const char *t, struct pdrv *d, struct lb_cmd_out *out)
{
	char a[LB_CMD_IP_ADDR_STRLEN + 8], sw[64], br[32], nm[48] = "";
	unsigned int last, p1, p2, len;
	struct lb_conf_ip addr;
	uint32_t ip;
	uint16_t port;
	char *dash;

	if (strncmp(t, "netns ", 6) == 0) {
		int nf = sscanf(t + 6, "%31[0-9.]-%u/%u %63s %31s %47s", a,
				&last, &len, sw, br, nm);

		if (nf < 5 || (nf == 6 && strstr(nm, "{id}") == NULL) ||
		    lb_cmd_parse_ipv4(a, &ip, NULL) != 0 || last > 254 ||
		    last < (ip & 0xff) || len < 8 || len > 30 ||
		    strlen(br) > 15)
			return lb_cmd_error(out, -EINVAL,
					    "invalid target '%s': expected "
					    "'netns A.B.C.D-E/LEN SWITCHNS "
					    "BRIDGE [NAME-WITH-{id}]'",
					    t);
		if (d != NULL) {
			d->netns = true;
			d->base = ip;
			d->size = last - (ip & 0xff) + 1;
			d->len = (uint8_t)len;
			snprintf(d->swns, sizeof(d->swns), "%s", sw);
			snprintf(d->bridge, sizeof(d->bridge), "%s", br);
			snprintf(d->name, sizeof(d->name), "%s", nm);
		}
		return 0;
	}
	snprintf(a, sizeof(a), "%.*s", (int)sizeof(a) - 1, t);
	dash = strrchr(a, '-');
	if (dash == NULL || sscanf(dash + 1, "%u", &p2) != 1)
		return lb_cmd_error(out, -EINVAL,
				    "invalid target '%s': expected "
				    "'A.B.C.D:PORT-PORT', '[IPV6]:PORT-PORT' "
				    "or 'netns A.B.C.D-E/LEN SWITCHNS BRIDGE'",
				    t);
	*dash = '\0';
	if (lb_cmd_parse_ip_port(a, &addr, &port, out) != 0)
		return -EINVAL;
	p1 = port;
	if (p2 < p1 || p2 > 65535)
		return lb_cmd_error(out, -EINVAL,
				    "invalid port range %u-%u in target '%s'",
				    p1, p2, t);
	if (d != NULL) {
		d->addr = addr;
		d->port0 = port;
		d->size = p2 - p1 + 1;
	}
	return 0;
}

static int
p_check(const struct lb_as_conf *c, struct lb_cmd_out *out)
{
	if (c->command[0] == '\0')
		return lb_cmd_error(out, -EINVAL,
				    "driver process needs a command (run by "
				    "/bin/sh with LB_INST_ADDR and "
				    "LB_INST_PORT set)");
	if (c->target[0] == '\0')
		return lb_cmd_error(out, -EINVAL,
				    "driver process needs a target: "
				    "'A.B.C.D:PORT-PORT', '[IPV6]:PORT-PORT' "
				    "or 'netns A.B.C.D-E/LEN SWITCHNS "
				    "BRIDGE'");
	return parse_target(c->target, NULL, out);
}

/* The names of the instances' namespaces: the target's NAME around
 * "{id}", else names that tell whose they are: the switch namespace's
 * (a test's tag) and, for a named pool (svc "tcp:VIP:PORT/POOL"), the
 * pool's, since the pools of a service number their instances alike. */
static void
ns_names(struct pdrv *d)
{
	const char *at = strstr(d->name, "{id}");
	const char *pool = strchr(d->svc, '/');

	if (d->name[0] != '\0' && at != NULL) {
		snprintf(d->ns_pre, sizeof(d->ns_pre), "%.*s",
			 (int)(at - d->name), d->name);
		snprintf(d->ns_suf, sizeof(d->ns_suf), "%s", at + 4);
	} else if (pool != NULL) {
		snprintf(d->ns_pre, sizeof(d->ns_pre), "%.24s-%.24s-i", d->swns,
			 pool + 1);
	} else {
		snprintf(d->ns_pre, sizeof(d->ns_pre), "%.40s-i", d->swns);
	}
}

/*
 * Namespaces of this driver's names that a killed lb-control left: its
 * instances died with it (they get SIGTERM when lb-control dies), their
 * namespaces stayed. An instance started again under a name deletes the
 * old namespace of that name (netns_script), but one whose id is not
 * used again would stay for good. The middle of a name must be digits,
 * so that "sw-i{id}" does not take a named pool's "sw-api-i{id}".
 */
static const char sweep_script[] =
	"for n in $(ip netns list | cut -d' ' -f1); do\n"
	"  case $n in \"$0\"*\"$1\") ;; *) continue ;; esac\n"
	"  m=${n#\"$0\"}; m=${m%\"$1\"}\n"
	"  case $m in ''|*[!0-9]*) continue ;; esac\n"
	"  ip netns del \"$n\" && echo \"$n\"\n"
	"done\n";

static void
sweep(struct pdrv *d)
{
	char *argv[] = {d->ns_pre, d->ns_suf, NULL};
	struct lb_orch_job j;

	/* Before the first instance is started (the driver is made only
	 * when the unit has none), so that nothing of ours is taken; a
	 * bounded wait, once per driver. */
	if (lb_orch_job_start(&j, sweep_script, argv, NULL, false,
			      lb_orch_now() + 5000000000ull) != 0)
		return;
	if (lb_orch_job_wait(&j, 5000000000ull) == 0 && j.len > 0)
		fprintf(stderr,
			"lb-control: scale: %s: removed the namespaces a "
			"stopped lb-control left: %.*s",
			d->svc, (int)j.len, j.out);
}

static void *
p_create(const struct lb_as_conf *c, const char *svc, char *err, size_t len)
{
	struct pdrv *d = calloc(1, sizeof(*d));
	struct lb_cmd_out o;

	if (d == NULL) {
		snprintf(err, len, "out of memory");
		return NULL;
	}
	lb_cmd_out_init(&o);
	if (parse_target(c->target, d, &o) != 0) {
		snprintf(err, len, "%s", lb_cmd_out_errmsg(&o));
		free(d);
		return NULL;
	}
	if (d->size > LB_AS_INST_MAX)
		d->size = LB_AS_INST_MAX;
	snprintf(d->cmd, sizeof(d->cmd), "%s", c->command);
	snprintf(d->svc, sizeof(d->svc), "%s", svc);
	d->inst_port = c->inst_port;
	if (d->netns) {
		ns_names(d);
		/* In a cluster a new leader may find the instances of the
		 * one before it on this host: they are not leftovers. */
		if (!c->cluster)
			sweep(d);
	}
	return d;
}

/* Numbers the veths of this lb-control (p_start()). */
static unsigned int veth_seq;

static const char netns_script[] =
	"set -e\n"
	/* A namespace of this name is one a killed lb-control left. */
	"ip netns del \"$0\" 2>/dev/null || true\n"
	"ip netns add \"$0\"\n"
	"ip -n \"$0\" link set lo up\n"
	"ip netns exec \"$0\" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 "
	"net.ipv6.conf.default.disable_ipv6=1 || true\n"
	/* The MAC follows from the address ($6), so that an address given
	 * to a new instance keeps the MAC the dataplane's ARP cache holds
	 * for it. */
	"ip link add eth0 address \"$6\" netns \"$0\" type veth peer name "
	"\"$1\" netns \"$2\"\n"
	/* Frames the dataplane reads through AF_PACKET must carry whole
	 * checksums: no offloads on either end. */
	"ip netns exec \"$0\" ethtool -K eth0 rx off tx off tso off gso off "
	"gro off >/dev/null\n"
	"ip netns exec \"$2\" ethtool -K \"$1\" rx off tx off tso off gso off "
	"gro off >/dev/null\n"
	"ip -n \"$2\" link set \"$1\" master \"$3\"\n"
	"ip -n \"$2\" link set \"$1\" up\n"
	"ip -n \"$0\" addr add \"$4\" dev eth0\n"
	"ip -n \"$0\" link set eth0 up\n"
	"exec ip netns exec \"$0\" /bin/sh -c \"$5\"\n";

static int
p_start(void *dv, uint32_t inst, uint64_t now)
{
	struct pdrv *d = dv;
	char addr[LB_CMD_IP_STRLEN], port[8], id[16], cidr[LB_CMD_IP_ADDR_STRLEN];
	char e_addr[LB_CMD_IP_STRLEN + 16], e_port[24], e_id[32];
	char e_svc[LB_ORCH_UNIT_LEN + 8];
	char *env[] = {e_addr, e_port, e_id, e_svc, NULL};
	struct pinst *p = NULL;
	unsigned int slot;
	uint32_t ip;
	int rc;

	(void)now;
	for (slot = 0; slot < d->size && d->used[slot]; slot++)
		;
	for (unsigned int i = 0; i < LB_AS_INST_MAX && p == NULL; i++)
		if (d->p[i].st == P_FREE)
			p = &d->p[i];
	if (slot == d->size || p == NULL)
		return -ENOSPC;
	memset(p, 0, sizeof(*p));
	p->inst = inst;
	p->slot = slot;
	ip = d->base + slot;
	snprintf(port, sizeof(port), "%u",
		 d->netns ? d->inst_port : d->port0 + slot);
	if (d->netns)
		lb_cmd_fmt_ipv4(ip, addr);
	else
		lb_cmd_fmt_ip(&d->addr, addr);
	snprintf(id, sizeof(id), "%u", inst);
	snprintf(e_addr, sizeof(e_addr), "LB_INST_ADDR=%s", addr);
	snprintf(e_port, sizeof(e_port), "LB_INST_PORT=%s", port);
	snprintf(e_id, sizeof(e_id), "LB_INST_ID=%s", id);
	snprintf(e_svc, sizeof(e_svc), "LB_SVC=%s", d->svc);
	if (d->netns) {
		char mac[24];
		char *argv[] = {p->ns, p->veth, d->swns, d->bridge,
				cidr,  d->cmd,	mac,	 NULL};

		/* Locally administered, unicast: 02:5c and the address. */
		snprintf(mac, sizeof(mac), "02:5c:%02x:%02x:%02x:%02x",
			 ip >> 24, (ip >> 16) & 0xff, (ip >> 8) & 0xff,
			 ip & 0xff);

		if (snprintf(p->ns, sizeof(p->ns), "%s%u%s", d->ns_pre, inst,
			     d->ns_suf) >= (int)sizeof(p->ns))
			return -ENAMETOOLONG;
		/* Unique in the switch namespace among this lb-control's
		 * veths, whichever service or pool (their instance ids
		 * overlap). */
		snprintf(p->veth, sizeof(p->veth), "vi%x.%u",
			 (unsigned int)getpid() & 0xffffffu,
			 veth_seq++ % 100000u);
		snprintf(cidr, sizeof(cidr), "%s/%u", addr, d->len);
		rc = lb_orch_job_start(&p->job, netns_script, argv, env, true,
				       0);
	} else {
		rc = lb_orch_job_start(&p->job, d->cmd, NULL, env, true, 0);
	}
	if (rc != 0)
		return rc;
	d->used[slot] = true;
	p->st = P_RUN;
	return 0;
}

static struct pinst *
p_find(struct pdrv *d, uint32_t inst)
{
	for (unsigned int i = 0; i < LB_AS_INST_MAX; i++)
		if (d->p[i].st != P_FREE && d->p[i].inst == inst)
			return &d->p[i];
	return NULL;
}

static int
p_stop(void *dv, uint32_t inst, const char *id, uint64_t now)
{
	struct pdrv *d = dv;
	struct pinst *p = p_find(d, inst);

	(void)id;
	if (p == NULL)
		return 1;
	p->stop_asked = true;
	if (p->st == P_RUN) {
		kill(-p->job.pid, SIGTERM);
		p->st = P_TERM;
		p->kill_ns = now + LB_ORCH_KILL_GRACE_NS;
	}
	return 0;
}

/* The instance is gone: delete its namespace, or free the slot. */
static void
p_gone(struct pdrv *d, struct pinst *p)
{
	char *argv[] = {p->ns, NULL};

	if (d->netns &&
	    lb_orch_job_start(&p->clean, "ip netns del \"$0\"", argv, NULL,
			      true, lb_orch_now() + 10000000000ull) == 0) {
		p->st = P_CLEAN;
		return;
	}
	p->st = P_FREE;
	d->used[p->slot] = false;
}

static void
p_fill(const struct pdrv *d, const struct pinst *p, struct lb_orch_ev *ev,
       enum lb_orch_ev_kind k)
{
	*ev = (struct lb_orch_ev){.kind = k, .inst = p->inst};
	ev->ip = d->netns ? lb_conf_ip4(d->base + p->slot) : d->addr;
	ev->port = d->netns ? d->inst_port : (uint16_t)(d->port0 + p->slot);
	snprintf(ev->id, sizeof(ev->id), "%s", d->netns ? p->ns : "");
	if (!d->netns)
		snprintf(ev->id, sizeof(ev->id), "pid-%d", (int)p->job.pid);
	snprintf(ev->ns, sizeof(ev->ns), "%s", d->netns ? p->ns : "");
}

static unsigned int
p_poll(void *dv, uint64_t now, struct lb_orch_ev *ev, unsigned int max)
{
	struct pdrv *d = dv;
	unsigned int n = 0;

	for (unsigned int i = 0; i < LB_AS_INST_MAX && n < max; i++) {
		struct pinst *p = &d->p[i];
		int st;

		switch (p->st) {
		case P_FREE:
			break;
		case P_RUN:
		case P_TERM:
			if (!p->announced && n < max) {
				/* The address is the driver's own choice:
				 * known as soon as the process runs. */
				p->announced = true;
				p_fill(d, p, &ev[n++], LB_ORCH_EV_UP);
				if (n == max)
					break;
			}
			if (p->st == P_TERM && now >= p->kill_ns) {
				kill(-p->job.pid, SIGKILL);
				p->kill_ns = UINT64_MAX;
			}
			if (lb_orch_job_poll(&p->job, now, &st) == 0)
				break;
			if (p->st == P_RUN) {
				p_fill(d, p, &ev[n], LB_ORCH_EV_EXITED);
				if (WIFEXITED(st))
					snprintf(ev[n].msg, sizeof(ev[n].msg),
						 "exited with status %d",
						 WEXITSTATUS(st));
				else
					snprintf(ev[n].msg, sizeof(ev[n].msg),
						 "killed by signal %d",
						 WTERMSIG(st));
				n++;
			}
			p_gone(d, p);
			if (p->st == P_FREE && p->stop_asked)
				p_fill(d, p, &ev[n++], LB_ORCH_EV_STOPPED);
			break;
		case P_CLEAN:
			if (lb_orch_job_poll(&p->clean, now, &st) == 0)
				break;
			p->st = P_FREE;
			d->used[p->slot] = false;
			if (p->stop_asked)
				p_fill(d, p, &ev[n++], LB_ORCH_EV_STOPPED);
			break;
		}
	}
	return n;
}

static unsigned int
p_busy(void *dv)
{
	struct pdrv *d = dv;
	unsigned int n = 0;

	for (unsigned int i = 0; i < LB_AS_INST_MAX; i++)
		n += d->p[i].st != P_FREE;
	return n;
}

static void
p_destroy(void *dv, uint64_t wait_ns)
{
	struct pdrv *d = dv;
	uint64_t end = lb_orch_now() + wait_ns;

	for (unsigned int i = 0; i < LB_AS_INST_MAX; i++)
		if (d->p[i].st == P_RUN || d->p[i].st == P_TERM)
			kill(-d->p[i].job.pid, SIGTERM);
	for (unsigned int i = 0; i < LB_AS_INST_MAX; i++) {
		struct pinst *p = &d->p[i];
		uint64_t now = lb_orch_now();

		if (p->st == P_RUN || p->st == P_TERM)
			lb_orch_job_wait(&p->job, end > now ? end - now : 0);
		if (p->st == P_RUN || p->st == P_TERM)
			p_gone(d, p);
		if (p->st == P_CLEAN)
			lb_orch_job_wait(&p->clean, 5000000000ull);
		p->st = P_FREE;
	}
	free(d);
}

static const struct lb_orch_ops process_ops = {
	.name = "process",
	.check = p_check,
	.create = p_create,
	.start = p_start,
	.stop = p_stop,
	.poll = p_poll,
	.busy = p_busy,
	.destroy = p_destroy,
};

LB_ORCH_REGISTER(process_ops);
