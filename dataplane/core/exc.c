/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The exception path's service thread and its taps (see exc.h).
 *
 * Why one thread and rings rather than a tap queue per worker: a tap's RX
 * is a read() system call per poll even when nothing waits, which would
 * put a system call into every worker loop; and the kernel's traffic
 * (probes, routing sessions, management) is small. The thread sleeps in
 * epoll on the taps' RX interrupts and wakes at least every millisecond
 * to collect what the workers queued, so a frame waits at most that long.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_epoll.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>
#include <rte_telemetry.h>

#include "exc.h"

#define LOG(level, fmt, ...)                                                   \
	RTE_LOG(level, USER1, "exception path: " fmt "\n", ##__VA_ARGS__)

#define EXC_RING 1024u		/* per worker and direction */
#define EXC_DESC 256u		/* tap RX descriptors */
#define EXC_WAIT_MS 1		/* longest sleep: what workers queued waits */
#define EXC_SYNC_NS 50000000ull /* table checks for kernel addresses */
#define ETH_HLEN 14

/* Counters of one tap; written by the service thread only. */
struct exc_stats {
	uint64_t to_kernel;	 /* frames written to the tap */
	uint64_t to_kernel_fail; /* the tap refused them */
	uint64_t from_kernel;	 /* frames the kernel sent, queued out */
	uint64_t ignored;	 /* not IPv4, ARP or IPv6: not sent */
	uint64_t in_full;	 /* the worker's ring was full */
	uint64_t nl_errors;	 /* addresses or routes the kernel refused */
};

/* An address or route of either family: IPv4 ones in the first 4 bytes,
 * network order; a gateway of zeros is on-link. */
struct exc_addr {
	uint8_t ip[16];
	uint8_t gw[16];
	uint8_t len;
	uint8_t af; /* AF_INET or AF_INET6 */
};

/* The kernel's addresses and routes, IPv4 and IPv6, per port. */
#define EXC_ADDRS (2u * LB_CONF_MAX_ADDRS)
#define EXC_ROUTES (2u * LB_CONF_MAX_ROUTES)

struct exc_port {
	uint16_t tap; /* DPDK port id of the tap */
	int ifindex;
	char ifname[IF_NAMESIZE];
	/* what the kernel has from us */
	uint32_t nb_addr, nb_route;
	struct exc_addr addr[EXC_ADDRS];
	struct exc_addr route[EXC_ROUTES];
	bool ipv6; /* IPv6 turned on in the kernel's interface */
	struct exc_stats st;
};

/* The table's addresses and routes, copied out of it under RCU. */
struct exc_want {
	uint32_t na, nr, na6, nr6;
	struct lb_dpconf_addr addr[LB_CONF_MAX_ADDRS];
	struct lb_dpconf_route route[LB_CONF_MAX_ROUTES];
	struct lb_dpconf_addr6 addr6[LB_CONF_MAX_ADDRS];
	struct lb_dpconf_route6 route6[LB_CONF_MAX_ROUTES];
};

struct lb_exc {
	struct lb_dp *dp;
	uint16_t nb_ports;
	struct exc_port port[LB_MAX_PORTS];
	struct rte_ring *out[LB_MAX_WORKERS];
	struct rte_ring *in[LB_MAX_WORKERS];
	int nl;
	uint32_t nl_seq;
	uint64_t gen; /* table generation mirrored into the kernel */
	struct exc_want want; /* what that table has */
	bool synced;
	bool intr; /* the taps' RX interrupts wake the thread */
	unsigned int rcu_id;
	pthread_t thread;
	bool running;
	volatile int quit;
};

static struct lb_exc *tel_exc;

/* ---- rtnetlink: addresses and routes of the taps ----------------------- */

struct nl_req {
	struct nlmsghdr n;
	union {
		struct ifaddrmsg ifa;
		struct rtmsg rt;
	};
	char attrs[96];
};

static void
nl_attr(struct nl_req *r, uint16_t type, const void *v, size_t len)
{
	struct rtattr *a =
		(struct rtattr *)((char *)r + NLMSG_ALIGN(r->n.nlmsg_len));

	a->rta_type = type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(a), v, len);
	r->n.nlmsg_len = NLMSG_ALIGN(r->n.nlmsg_len) + RTA_ALIGN(a->rta_len);
}

static void
nl_attr32(struct nl_req *r, uint16_t type, uint32_t v)
{
	nl_attr(r, type, &v, sizeof(v));
}

static size_t
alen(const struct exc_addr *a)
{
	return a->af == AF_INET6 ? 16 : 4;
}

static bool
gw_set(const struct exc_addr *a)
{
	static const uint8_t zero[16];

	return memcmp(a->gw, zero, alen(a)) != 0;
}

/* Sends @p r and waits for the kernel's answer: 0 or a negative errno. */
static int
nl_talk(struct lb_exc *x, struct nl_req *r)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
	char buf[512];
	ssize_t n;

	r->n.nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	r->n.nlmsg_seq = ++x->nl_seq;
	if (sendto(x->nl, r, r->n.nlmsg_len, 0, (struct sockaddr *)&sa,
		   sizeof(sa)) < 0)
		return -errno;
	for (;;) {
		struct nlmsghdr *h = (struct nlmsghdr *)buf;

		n = recv(x->nl, buf, sizeof(buf), 0);
		if (n < 0)
			return -errno;
		for (; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != x->nl_seq)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR)
				return ((struct nlmsgerr *)NLMSG_DATA(h))
					->error;
		}
	}
}

static int
nl_addr(struct lb_exc *x, const struct exc_port *p, int add,
	const struct exc_addr *a)
{
	struct nl_req r;

	memset(&r, 0, sizeof(r));
	r.n.nlmsg_len = NLMSG_LENGTH(sizeof(r.ifa));
	r.n.nlmsg_type = add ? RTM_NEWADDR : RTM_DELADDR;
	r.n.nlmsg_flags = add ? NLM_F_CREATE | NLM_F_REPLACE : 0;
	r.ifa.ifa_family = a->af;
	r.ifa.ifa_prefixlen = a->len;
	r.ifa.ifa_index = (unsigned int)p->ifindex;
	/* The dataplane answers for the address already: the kernel's
	 * duplicate address check would only keep it tentative. */
	if (a->af == AF_INET6)
		r.ifa.ifa_flags = IFA_F_NODAD;
	nl_attr(&r, IFA_LOCAL, a->ip, alen(a));
	nl_attr(&r, IFA_ADDRESS, a->ip, alen(a));
	return nl_talk(x, &r);
}

static int
nl_route(struct lb_exc *x, const struct exc_port *p, int add,
	 const struct exc_addr *a)
{
	struct nl_req r;

	memset(&r, 0, sizeof(r));
	r.n.nlmsg_len = NLMSG_LENGTH(sizeof(r.rt));
	r.n.nlmsg_type = add ? RTM_NEWROUTE : RTM_DELROUTE;
	/* Never replace a route the host has of its own (its default route
	 * through a management interface, say). */
	r.n.nlmsg_flags = add ? NLM_F_CREATE | NLM_F_EXCL : 0;
	r.rt.rtm_family = a->af;
	r.rt.rtm_dst_len = a->len;
	r.rt.rtm_table = RT_TABLE_MAIN;
	r.rt.rtm_protocol = RTPROT_STATIC;
	r.rt.rtm_scope = gw_set(a) ? RT_SCOPE_UNIVERSE : RT_SCOPE_LINK;
	r.rt.rtm_type = RTN_UNICAST;
	if (a->len > 0)
		nl_attr(&r, RTA_DST, a->ip, alen(a));
	if (gw_set(a))
		nl_attr(&r, RTA_GATEWAY, a->gw, alen(a));
	nl_attr32(&r, RTA_OIF, (uint32_t)p->ifindex);
	return nl_talk(x, &r);
}

static bool
addr_in(const struct exc_addr *set, uint32_t n, const struct exc_addr *a)
{
	for (uint32_t i = 0; i < n; i++)
		if (set[i].af == a->af && set[i].len == a->len &&
		    memcmp(set[i].ip, a->ip, 16) == 0 &&
		    memcmp(set[i].gw, a->gw, 16) == 0)
			return true;
	return false;
}

typedef int nl_fn(struct lb_exc *x, const struct exc_port *p, int add,
		  const struct exc_addr *a);

/* Removes from the kernel's set @p have what @p want no longer has. */
static void
sync_del(struct lb_exc *x, struct exc_port *p, struct exc_addr *have,
	 uint32_t *nb, const struct exc_addr *want, uint32_t nwant, nl_fn *fn,
	 const char *what)
{
	char a[INET6_ADDRSTRLEN];
	uint32_t k = 0;
	int rc;

	for (uint32_t i = 0; i < *nb; i++) {
		if (addr_in(want, nwant, &have[i])) {
			have[k++] = have[i];
			continue;
		}
		/* Gone already (with its address, say) is as good. */
		rc = fn(x, p, 0, &have[i]);
		if (rc != 0 && rc != -EADDRNOTAVAIL && rc != -ESRCH) {
			p->st.nl_errors++;
			LOG(WARNING, "%s: cannot remove %s %s/%u: %s",
			    p->ifname, what,
			    inet_ntop(have[i].af, have[i].ip, a, sizeof(a)),
			    have[i].len, strerror(-rc));
		}
	}
	*nb = k;
}

/*
 * Adds to the kernel's set @p have what @p want has in addition. What the
 * kernel refuses is logged and tried again at the next check.
 */
static void
sync_add(struct lb_exc *x, struct exc_port *p, struct exc_addr *have,
	 uint32_t *nb, const struct exc_addr *want, uint32_t nwant, nl_fn *fn,
	 const char *what)
{
	char a[INET6_ADDRSTRLEN];
	int rc;

	for (uint32_t i = 0; i < nwant; i++) {
		if (addr_in(have, *nb, &want[i]))
			continue;
		rc = fn(x, p, 1, &want[i]);
		if (rc != 0) {
			p->st.nl_errors++;
			x->synced = false;
			LOG(WARNING, "%s: cannot add %s %s/%u: %s", p->ifname,
			    what, inet_ntop(want[i].af, want[i].ip, a, sizeof(a)),
			    want[i].len, strerror(-rc));
			continue;
		}
		have[(*nb)++] = want[i];
	}
}

/* Turns IPv6 on in the kernel's interface (it is off until the table
 * gives the port an IPv6 address): the kernel then takes its link-local
 * address and the addresses mirrored. Never turned off again, which
 * would take every IPv6 address of the interface with it. */
static void
ipv6_on(struct exc_port *ep)
{
	char path[128];
	int fd;

	if (ep->ipv6)
		return;
	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/disable_ipv6",
		 ep->ifname);
	fd = open(path, O_WRONLY);
	if (fd < 0 || write(fd, "0", 1) != 1)
		LOG(WARNING, "%s: cannot turn IPv6 on", ep->ifname);
	else
		ep->ipv6 = true;
	if (fd >= 0)
		close(fd);
}

/* What port @p p's interface should have, of both families. */
static void
port_want(const struct exc_want *t, uint16_t p, struct exc_addr *wa,
	  uint32_t *nwa, struct exc_addr *wr, uint32_t *nwr)
{
	struct exc_addr e;

	*nwa = *nwr = 0;
	for (uint32_t i = 0; i < t->na; i++) {
		if (t->addr[i].port != p)
			continue;
		memset(&e, 0, sizeof(e));
		memcpy(e.ip, &t->addr[i].ip, 4);
		e.len = (uint8_t)__builtin_popcount(t->addr[i].mask);
		e.af = AF_INET;
		wa[(*nwa)++] = e;
	}
	for (uint32_t i = 0; i < t->na6; i++) {
		if (t->addr6[i].port != p)
			continue;
		memset(&e, 0, sizeof(e));
		memcpy(e.ip, t->addr6[i].ip, 16);
		e.len = t->addr6[i].len;
		e.af = AF_INET6;
		wa[(*nwa)++] = e;
	}
	for (uint32_t i = 0; i < t->nr; i++) {
		if (t->route[i].port != p)
			continue;
		memset(&e, 0, sizeof(e));
		memcpy(e.ip, &t->route[i].net, 4);
		memcpy(e.gw, &t->route[i].gw, 4);
		e.len = t->route[i].len;
		e.af = AF_INET;
		wr[(*nwr)++] = e;
	}
	for (uint32_t i = 0; i < t->nr6; i++) {
		if (t->route6[i].port != p)
			continue;
		memset(&e, 0, sizeof(e));
		memcpy(e.ip, t->route6[i].net, 16);
		memcpy(e.gw, t->route6[i].gw, 16);
		e.len = t->route6[i].len;
		e.af = AF_INET6;
		wr[(*nwr)++] = e;
	}
}

/* Mirrors the addresses and routes of a new table into the kernel. */
static void
exc_sync(struct lb_exc *x)
{
	struct lb_dp *dp = x->dp;
	struct exc_want *t = &x->want;
	const struct lb_dpconf *c;
	uint64_t gen;

	if (dp->shm != NULL)
		rte_rcu_qsbr_thread_online(dp->shm->qsbr, x->rcu_id);
	c = lb_dp_conf(dp);
	gen = c->gen;
	if (!x->synced || gen != x->gen) {
		t->na = RTE_MIN(c->nb_addr, LB_CONF_MAX_ADDRS);
		t->nr = RTE_MIN(c->nb_route, LB_CONF_MAX_ROUTES);
		t->na6 = RTE_MIN(c->nb_addr6, LB_CONF_MAX_ADDRS);
		t->nr6 = RTE_MIN(c->nb_route6, LB_CONF_MAX_ROUTES);
		memcpy(t->addr, c->addr, t->na * sizeof(t->addr[0]));
		memcpy(t->route, c->route, t->nr * sizeof(t->route[0]));
		memcpy(t->addr6, c->addr6, t->na6 * sizeof(t->addr6[0]));
		memcpy(t->route6, c->route6, t->nr6 * sizeof(t->route6[0]));
	}
	if (dp->shm != NULL)
		rte_rcu_qsbr_thread_offline(dp->shm->qsbr, x->rcu_id);
	if (x->synced && gen == x->gen)
		return;
	x->gen = gen;
	x->synced = true;
	for (uint16_t p = 0; p < x->nb_ports; p++) {
		struct exc_port *ep = &x->port[p];
		struct exc_addr wa[EXC_ADDRS], wr[EXC_ROUTES];
		uint32_t nwa, nwr;

		port_want(t, p, wa, &nwa, wr, &nwr);
		for (uint32_t i = 0; i < nwa; i++)
			if (wa[i].af == AF_INET6)
				ipv6_on(ep);
		/* Routes go first and come last: their gateways lie in the
		 * addresses' subnets. */
		sync_del(x, ep, ep->route, &ep->nb_route, wr, nwr, nl_route,
			 "route");
		sync_del(x, ep, ep->addr, &ep->nb_addr, wa, nwa, nl_addr,
			 "address");
		sync_add(x, ep, ep->addr, &ep->nb_addr, wa, nwa, nl_addr,
			 "address");
		sync_add(x, ep, ep->route, &ep->nb_route, wr, nwr, nl_route,
			 "route");
	}
}

/* ---- moving frames ----------------------------------------------------- */

/* Workers -> taps. Returns frames moved. */
static unsigned int
exc_to_kernel(struct lb_exc *x)
{
	struct rte_mbuf *m[LB_BURST], *b[LB_MAX_PORTS][LB_BURST];
	uint16_t nb[LB_MAX_PORTS];
	unsigned int total = 0;

	for (uint16_t i = 0; i < x->dp->nb_workers; i++) {
		unsigned int n = rte_ring_sc_dequeue_burst(
			x->out[i], (void **)m, LB_BURST, NULL);

		if (n == 0)
			continue;
		total += n;
		memset(nb, 0, sizeof(nb));
		for (unsigned int k = 0; k < n; k++) {
			uint16_t p = m[k]->port;

			if (p >= x->nb_ports) {
				rte_pktmbuf_free(m[k]);
				continue;
			}
			b[p][nb[p]++] = m[k];
		}
		for (uint16_t p = 0; p < x->nb_ports; p++) {
			uint16_t sent;

			if (nb[p] == 0)
				continue;
			sent = rte_eth_tx_burst(x->port[p].tap, 0, b[p], nb[p]);
			x->port[p].st.to_kernel += sent;
			if (sent < nb[p]) {
				x->port[p].st.to_kernel_fail += nb[p] - sent;
				rte_pktmbuf_free_bulk(&b[p][sent],
						      nb[p] - sent);
			}
		}
	}
	return total;
}

/* Only what the dataplane speaks leaves the port: IPv4, ARP and IPv6. */
static bool
sendable(const struct rte_mbuf *m)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	uint16_t type;

	if (rte_pktmbuf_data_len(m) < ETH_HLEN)
		return false;
	type = (uint16_t)(f[12] << 8 | f[13]);
	return type == RTE_ETHER_TYPE_IPV4 || type == RTE_ETHER_TYPE_ARP ||
	       type == RTE_ETHER_TYPE_IPV6;
}

/*
 * Taps -> workers. Port p's frames all go through one worker so that a
 * connection of the kernel keeps its order on the wire.
 */
static unsigned int
exc_from_kernel(struct lb_exc *x)
{
	struct rte_mbuf *m[LB_BURST];
	unsigned int total = 0;

	for (uint16_t p = 0; p < x->nb_ports; p++) {
		struct exc_port *ep = &x->port[p];
		uint16_t n = rte_eth_rx_burst(ep->tap, 0, m, LB_BURST), k = 0;
		unsigned int q;

		total += n;
		for (uint16_t i = 0; i < n; i++) {
			if (!sendable(m[i])) {
				ep->st.ignored++;
				rte_pktmbuf_free(m[i]);
				continue;
			}
			m[i]->port = p;
			m[k++] = m[i];
		}
		if (k == 0)
			continue;
		q = rte_ring_sp_enqueue_burst(x->in[p % x->dp->nb_workers],
					      (void **)m, k, NULL);
		ep->st.from_kernel += q;
		if (q < k) {
			ep->st.in_full += k - q;
			rte_pktmbuf_free_bulk(&m[q], k - q);
		}
	}
	return total;
}

static void
exc_wait(struct lb_exc *x)
{
	struct rte_epoll_event ev[LB_MAX_PORTS];

	if (!x->intr) {
		rte_delay_us_sleep(EXC_WAIT_MS * 1000);
		return;
	}
	for (uint16_t p = 0; p < x->nb_ports; p++)
		rte_eth_dev_rx_intr_enable(x->port[p].tap, 0);
	rte_epoll_wait(RTE_EPOLL_PER_THREAD, ev, LB_MAX_PORTS, EXC_WAIT_MS);
	for (uint16_t p = 0; p < x->nb_ports; p++)
		rte_eth_dev_rx_intr_disable(x->port[p].tap, 0);
}

static void *
exc_main(void *arg)
{
	struct lb_exc *x = arg;
	struct lb_dp *dp = x->dp;
	uint64_t next_sync = 0;

	if (dp->shm != NULL)
		rte_rcu_qsbr_thread_register(dp->shm->qsbr, x->rcu_id);
	for (uint16_t p = 0; x->intr && p < x->nb_ports; p++)
		if (rte_eth_dev_rx_intr_ctl_q(x->port[p].tap, 0,
					      RTE_EPOLL_PER_THREAD,
					      RTE_INTR_EVENT_ADD, NULL) != 0) {
			LOG(INFO, "%s: no RX interrupt; polling every %d ms",
			    x->port[p].ifname, EXC_WAIT_MS);
			x->intr = false;
		}
	while (!x->quit) {
		uint64_t now = rte_get_timer_cycles();

		if (now >= next_sync) {
			exc_sync(x);
			next_sync = now + EXC_SYNC_NS * rte_get_timer_hz() /
						  1000000000ull;
		}
		if (exc_to_kernel(x) + exc_from_kernel(x) == 0)
			exc_wait(x);
	}
	if (dp->shm != NULL)
		rte_rcu_qsbr_thread_unregister(dp->shm->qsbr, x->rcu_id);
	return NULL;
}

/* ---- setup ------------------------------------------------------------- */

/* The kernel side speaks IPv4 until the table gives the port an IPv6
 * address (ipv6_on()): no link-local address, router solicitations or
 * listener reports out of a port that has no IPv6 before then. */
static void
no_ipv6(const char *ifname)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/disable_ipv6",
		 ifname);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return;
	if (write(fd, "1", 1) != 1)
		LOG(INFO, "%s: IPv6 stays on", ifname);
	close(fd);
}

static int
tap_setup(struct lb_exc *x, uint16_t p, const char *prefix)
{
	struct lb_dp *dp = x->dp;
	struct exc_port *ep = &x->port[p];
	const struct rte_ether_addr *mac = &dp->port[p].mac;
	struct rte_eth_conf conf;
	char name[RTE_DEV_NAME_MAX_LEN], args[128];
	uint16_t nrx = EXC_DESC, ntx = EXC_DESC;
	int rc;

	if ((size_t)snprintf(ep->ifname, sizeof(ep->ifname), "%s%u", prefix,
			     p) >= sizeof(ep->ifname)) {
		LOG(ERR, "interface name %s%u is too long", prefix, p);
		return -ENAMETOOLONG;
	}
	snprintf(name, sizeof(name), "net_tap_%s", ep->ifname);
	snprintf(args, sizeof(args), "iface=%s,mac=" RTE_ETHER_ADDR_PRT_FMT,
		 ep->ifname, RTE_ETHER_ADDR_BYTES(mac));
	rc = rte_vdev_init(name, args);
	if (rc != 0) {
		LOG(ERR, "%s: cannot create the tap (%s): %s", ep->ifname, args,
		    strerror(-rc));
		return rc;
	}
	rc = rte_eth_dev_get_port_by_name(name, &ep->tap);
	if (rc != 0)
		return rc;
	memset(&conf, 0, sizeof(conf));
	conf.intr_conf.rxq = 1;
	rc = rte_eth_dev_configure(ep->tap, 1, 1, &conf);
	if (rc != 0) {
		/* Without interrupts the thread polls. */
		x->intr = false;
		conf.intr_conf.rxq = 0;
		rc = rte_eth_dev_configure(ep->tap, 1, 1, &conf);
	}
	if (rc == 0)
		rc = rte_eth_dev_adjust_nb_rx_tx_desc(ep->tap, &nrx, &ntx);
	if (rc == 0)
		rc = rte_eth_rx_queue_setup(ep->tap, 0, nrx,
					    rte_eth_dev_socket_id(ep->tap),
					    NULL, dp->pool);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(
			ep->tap, 0, ntx, rte_eth_dev_socket_id(ep->tap), NULL);
	if (rc == 0 && rte_eth_dev_set_mtu(ep->tap, dp->port[p].mtu) != 0)
		LOG(WARNING, "%s: MTU %u refused", ep->ifname, dp->port[p].mtu);
	if (rc == 0)
		rc = rte_eth_dev_start(ep->tap);
	if (rc != 0) {
		LOG(ERR, "%s: cannot set the tap up: %s", ep->ifname,
		    strerror(-rc));
		return rc;
	}
	ep->ifindex = (int)if_nametoindex(ep->ifname);
	if (ep->ifindex == 0) {
		LOG(ERR, "%s: no such interface after creation", ep->ifname);
		return -ENODEV;
	}
	no_ipv6(ep->ifname);
	LOG(INFO, "port %u: kernel interface %s, mac " RTE_ETHER_ADDR_PRT_FMT,
	    p, ep->ifname, RTE_ETHER_ADDR_BYTES(mac));
	return 0;
}

struct lb_exc *
lb_exc_create(struct lb_dp *dp, const char *prefix)
{
	struct lb_exc *x;
	char name[RTE_RING_NAMESIZE];
	struct timeval tv = {.tv_sec = 2};
	int rc = -ENOMEM;

	x = rte_zmalloc("lb_exc", sizeof(*x), RTE_CACHE_LINE_SIZE);
	if (x == NULL)
		goto fail;
	x->dp = dp;
	x->nl = -1;
	x->intr = true;
	for (uint16_t p = 0; p < LB_MAX_PORTS; p++)
		x->port[p].tap = RTE_MAX_ETHPORTS;
	for (uint16_t i = 0; i < dp->nb_workers; i++) {
		snprintf(name, sizeof(name), "lb_exc_out_%u", i);
		x->out[i] = rte_ring_create(name, EXC_RING, rte_socket_id(),
					    RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(name, sizeof(name), "lb_exc_in_%u", i);
		x->in[i] = rte_ring_create(name, EXC_RING, rte_socket_id(),
					   RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (x->out[i] == NULL || x->in[i] == NULL)
			goto fail;
	}
	x->nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (x->nl < 0 ||
	    setsockopt(x->nl, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0) {
		rc = -errno;
		LOG(ERR, "no rtnetlink socket: %s", strerror(errno));
		goto fail;
	}
	for (uint16_t p = 0; p < dp->nb_ports; p++) {
		rc = tap_setup(x, p, prefix);
		if (rc != 0)
			goto fail;
		x->nb_ports = p + 1;
	}
	for (uint16_t i = 0; i < dp->nb_workers; i++) {
		dp->w[i]->exc_out = x->out[i];
		dp->w[i]->exc_in = x->in[i];
	}
	dp->exc = x;
	return x;
fail:
	lb_exc_free(x);
	errno = -rc;
	return NULL;
}

int
lb_exc_start(struct lb_exc *x, unsigned int rcu_id)
{
	int rc;

	x->rcu_id = rcu_id;
	rc = rte_ctrl_thread_create(&x->thread, "lb-exc", NULL, exc_main, x);
	if (rc != 0) {
		LOG(ERR, "cannot start the thread: %s", strerror(rc));
		return -rc;
	}
	x->running = true;
	return 0;
}

void
lb_exc_free(struct lb_exc *x)
{
	struct rte_mbuf *m;

	if (x == NULL)
		return;
	if (x->running) {
		x->quit = 1;
		pthread_join(x->thread, NULL);
	}
	if (tel_exc == x)
		tel_exc = NULL;
	if (x->dp->exc == x) {
		x->dp->exc = NULL;
		for (uint16_t i = 0; i < x->dp->nb_workers; i++) {
			x->dp->w[i]->exc_out = NULL;
			x->dp->w[i]->exc_in = NULL;
		}
	}
	for (uint16_t p = 0; p < LB_MAX_PORTS; p++) {
		char name[RTE_DEV_NAME_MAX_LEN];

		if (x->port[p].tap == RTE_MAX_ETHPORTS)
			continue;
		rte_eth_dev_stop(x->port[p].tap);
		rte_eth_dev_close(x->port[p].tap);
		snprintf(name, sizeof(name), "net_tap_%s", x->port[p].ifname);
		rte_vdev_uninit(name);
	}
	for (uint16_t i = 0; i < LB_MAX_WORKERS; i++) {
		while (x->out[i] != NULL &&
		       rte_ring_dequeue(x->out[i], (void **)&m) == 0)
			rte_pktmbuf_free(m);
		while (x->in[i] != NULL &&
		       rte_ring_dequeue(x->in[i], (void **)&m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(x->out[i]);
		rte_ring_free(x->in[i]);
	}
	if (x->nl >= 0)
		close(x->nl);
	rte_free(x);
}

/* ---- telemetry --------------------------------------------------------- */

static int
cmd_exception(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct lb_exc *x = tel_exc;

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	if (x == NULL)
		return 0;
	rte_tel_data_add_dict_u64(d, "interrupts", x->intr);
	rte_tel_data_add_dict_u64(d, "conf_gen", x->gen);
	for (uint16_t p = 0; p < x->nb_ports; p++) {
		const struct exc_port *ep = &x->port[p];
		struct rte_tel_data *e = rte_tel_data_alloc();
		char key[16];

		if (e == NULL)
			break;
		rte_tel_data_start_dict(e);
		rte_tel_data_add_dict_string(e, "ifname", ep->ifname);
		rte_tel_data_add_dict_u64(e, "addresses", ep->nb_addr);
		rte_tel_data_add_dict_u64(e, "routes", ep->nb_route);
		rte_tel_data_add_dict_u64(e, "to_kernel", ep->st.to_kernel);
		rte_tel_data_add_dict_u64(e, "to_kernel_failed",
					  ep->st.to_kernel_fail);
		rte_tel_data_add_dict_u64(e, "from_kernel", ep->st.from_kernel);
		rte_tel_data_add_dict_u64(e, "ignored", ep->st.ignored);
		rte_tel_data_add_dict_u64(e, "ring_full", ep->st.in_full);
		rte_tel_data_add_dict_u64(e, "netlink_errors",
					  ep->st.nl_errors);
		snprintf(key, sizeof(key), "port%u", p);
		rte_tel_data_add_dict_container(d, key, e, 0);
	}
	return 0;
}

int
lb_exc_telemetry_init(struct lb_exc *x)
{
	tel_exc = x;
	return rte_telemetry_register_cmd(
		"/lb/exception", cmd_exception,
		"The exception path: per port its kernel interface and "
		"counters. No parameters.");
}
