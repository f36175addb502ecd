/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The health checker (control/health/health.h): a registry of every configured
 * backend with its rise/fall state, a schedule of probes, and the probes
 * themselves as non-blocking sockets driven by the caller's poll loop.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lb/dpconf.h"
#include "health.h"

#define MAX_LISTENERS 4
#define RESP_MAX 256 /* enough for a status line; the rest is not read */
#define REQ_MAX (LB_CONF_CHECK_PATH_LEN + 160)

enum phase { PH_IDLE = 0, PH_CONNECT, PH_SEND, PH_READ };

struct hc_be {
	struct lb_conf_ip ip; /* host order, as configured */
	uint16_t port;
	/* Its pool's check, or its service's (lb_conf_pool_check()). */
	struct lb_conf_check check;
	bool seen; /* still configured at the last sync */
	struct lb_health_fsm fsm;
	uint64_t next_ns; /* next probe due */
	int probe;	  /* index of its probe in flight, -1 */
	struct lb_health_be_info info;
	/* Times it came back up (pending or down to up), and the count
	 * the last table built was given (lb_health_mark()). */
	uint32_t rises, rises_marked;
};

struct hc_svc {
	struct lb_conf_svc_key key;
	bool seen;
	unsigned int nb;
	struct hc_be be[LB_CONF_MAX_BES];
};

struct probe {
	int fd; /* -1: free */
	unsigned int svc, be;
	enum phase ph;
	uint64_t start_ns, deadline_ns;
	uint16_t req_len, req_off, resp_len;
	bool moved; /* went on in this round: its deadline waits a round */
	char req[REQ_MAX];
	char resp[RESP_MAX];
};

struct lb_health {
	const struct lb_conf *conf;
	uint64_t conf_gen;
	bool synced; /* the first sync is done: new backends start pending */
	struct hc_svc *svc[LB_CONF_MAX_SVCS];
	struct probe probe[LB_HEALTH_MAX_PROBES];
	struct {
		lb_health_change_fn *fn;
		void *ctx;
	} listener[MAX_LISTENERS];
	struct lb_health_stats st;
};

/* ---- names and the pure parts ------------------------------------------ */

const char *
lb_health_state_name(enum lb_health_state s)
{
	static const char *const n[LB_HEALTH_NB] = {
		[LB_HEALTH_NONE] = "none",
		[LB_HEALTH_PENDING] = "pending",
		[LB_HEALTH_UP] = "up",
		[LB_HEALTH_DOWN] = "down",
	};

	return (unsigned int)s < LB_HEALTH_NB ? n[s] : "unknown";
}

const char *
lb_health_why_name(enum lb_health_why w)
{
	static const char *const n[LB_HC_NB] = {
		[LB_HC_OK] = "ok",
		[LB_HC_REFUSED] = "refused",
		[LB_HC_TIMEOUT] = "timeout",
		[LB_HC_CONN_ERROR] = "conn_error",
		[LB_HC_STATUS] = "bad_status",
		[LB_HC_BAD_RESPONSE] = "bad_response",
		[LB_HC_CLOSED] = "closed",
		[LB_HC_LOCAL] = "local_error",
	};

	return (unsigned int)w < LB_HC_NB ? n[w] : "unknown";
}

bool
lb_health_fsm_result(struct lb_health_fsm *f, bool ok, uint32_t rise,
		     uint32_t fall)
{
	uint8_t old = f->state;

	if (f->state == LB_HEALTH_NONE)
		return false;
	if (ok) {
		f->fail_run = 0;
		f->ok_run++;
		if (f->state != LB_HEALTH_UP && f->ok_run >= rise)
			f->state = LB_HEALTH_UP;
	} else {
		f->ok_run = 0;
		f->fail_run++;
		/* A pending backend stays pending: it has never been up,
		 * and whoever added it decides when to give up on it. */
		if (f->state == LB_HEALTH_UP && f->fail_run >= fall)
			f->state = LB_HEALTH_DOWN;
	}
	return f->state != old;
}

int
lb_health_http_status(const char *buf, size_t len, unsigned int *status)
{
	static const char pat[] = "HTTP/d.d ddd";
	size_t n = len < sizeof(pat) - 1 ? len : sizeof(pat) - 1;

	for (size_t i = 0; i < n; i++) {
		char c = buf[i];
		bool ok = pat[i] == 'd' ? c >= '0' && c <= '9' : c == pat[i];

		if (!ok)
			return -1;
	}
	if (len < sizeof(pat) - 1)
		return 0;
	/* The status code ends with the reason's space or the line. */
	if (len > 12 && buf[12] != ' ' && buf[12] != '\r' && buf[12] != '\n')
		return -1;
	if (len == 12)
		return 0;
	*status = (unsigned int)((buf[9] - '0') * 100 + (buf[10] - '0') * 10 +
				 (buf[11] - '0'));
	return 1;
}

/* ---- the registry ------------------------------------------------------- */

static struct hc_svc *
svc_find(const struct lb_health *h, const struct lb_conf_svc_key *k)
{
	for (unsigned int i = 0; i < LB_CONF_MAX_SVCS; i++)
		if (h->svc[i] != NULL && lb_conf_svc_key_eq(&h->svc[i]->key, k))
			return h->svc[i];
	return NULL;
}

static struct hc_be *
be_find(struct hc_svc *s, const struct lb_conf_ip *ip, uint16_t port)
{
	for (unsigned int i = 0; s != NULL && i < s->nb; i++)
		if (s->be[i].port == port && lb_conf_ip_eq(&s->be[i].ip, ip))
			return &s->be[i];
	return NULL;
}

static void
notify(struct lb_health *h, const struct hc_svc *s, const struct hc_be *b,
       enum lb_health_state from)
{
	h->st.changes++;
	for (unsigned int i = 0; i < MAX_LISTENERS; i++)
		if (h->listener[i].fn != NULL)
			h->listener[i].fn(h->listener[i].ctx, &s->key, &b->ip,
					  b->port, from, b->fsm.state);
}

static void
set_state(struct lb_health *h, struct hc_svc *s, struct hc_be *b,
	  enum lb_health_state to, uint64_t now)
{
	enum lb_health_state from = b->fsm.state;

	b->fsm = (struct lb_health_fsm){.state = (uint8_t)to};
	b->info.since_ns = now;
	if (from != to)
		notify(h, s, b, from);
}

static void
probe_close(struct lb_health *h, struct probe *p)
{
	if (p->fd < 0)
		return;
	close(p->fd);
	p->fd = -1;
	p->ph = PH_IDLE;
	h->st.inflight--;
}

/* Spreads the first probes of backends that were up already over the
 * interval, so that a restart does not probe everything at once. */
static uint64_t
spread(const struct hc_be *b, uint64_t now)
{
	uint64_t a = b->ip.ip;
	uint64_t x;

	for (unsigned int i = 0; b->ip.af == LB_CONF_AF_INET6 && i < 16; i++)
		a = a * 31 + b->ip.ip6[i];
	x = (a << 16 ^ b->port) * 0x9e3779b97f4a7c15ull;
	return now + (x >> 11) % b->check.interval_ns;
}

static void
be_drop(struct lb_health *h, struct hc_be *b)
{
	if (b->probe >= 0)
		probe_close(h, &h->probe[b->probe]);
	b->probe = -1;
}

/* A backend whose check was changed: its probe in flight, made for the
 * old check, is dropped, and the runs toward rise or fall start again
 * from the next probe, at once. The state stays until the new check's
 * results change it. */
static void
be_restart(struct lb_health *h, struct hc_be *b, uint64_t now)
{
	be_drop(h, b);
	b->fsm.ok_run = 0;
	b->fsm.fail_run = 0;
	b->next_ns = now;
}

/* Follows one configured service: its backends, each with the check of
 * its pool (lb_conf_pool_check()), so that a change of one pool's check
 * touches the backends of that pool only. */
static void
sync_svc(struct lb_health *h, struct hc_svc *s, const struct lb_conf_svc *sv,
	 uint64_t now)
{
	unsigned int k = 0;

	for (unsigned int i = 0; i < s->nb; i++)
		s->be[i].seen = false;
	for (unsigned int j = 0; j < sv->nb_be; j++) {
		const struct lb_conf_check *want =
			lb_conf_pool_check(sv, sv->be[j].pool);
		struct lb_conf_ip ip = LB_CONF_IP_OF(&sv->be[j]);
		struct hc_be *b = be_find(s, &ip, sv->be[j].port);
		bool checked = want->type != LB_CONF_CHECK_NONE;

		if (b == NULL) {
			b = &s->be[s->nb++];
			memset(b, 0, sizeof(*b));
			b->ip = ip;
			b->port = sv->be[j].port;
			b->check = *want;
			b->probe = -1;
			b->info.since_ns = now;
			/* Configured at start: up until `fall` failures.
			 * Added later: pending until `rise` successes. */
			if (checked) {
				b->fsm.state = h->synced ? LB_HEALTH_PENDING
							 : LB_HEALTH_UP;
				b->next_ns = h->synced ? now : spread(b, now);
			}
		} else if (!lb_conf_check_eq(&b->check, want)) {
			bool was = b->check.type != LB_CONF_CHECK_NONE;

			b->check = *want;
			if (checked && !was) {
				/* The check is new: what served goes on
				 * serving. */
				set_state(h, s, b, LB_HEALTH_UP, now);
				b->next_ns = spread(b, now);
			} else if (!checked) {
				be_drop(h, b);
				set_state(h, s, b, LB_HEALTH_NONE, now);
			} else {
				be_restart(h, b, now);
			}
		}
		b->seen = true;
	}
	/* Forget what is gone; probes follow their backend's new index. */
	for (unsigned int i = 0; i < s->nb; i++) {
		struct hc_be *b = &s->be[i];

		if (!b->seen) {
			be_drop(h, b);
			continue;
		}
		if (k != i)
			s->be[k] = *b;
		if (s->be[k].probe >= 0)
			h->probe[s->be[k].probe].be = k;
		k++;
	}
	s->nb = k;
}

void
lb_health_sync(struct lb_health *h, uint64_t now)
{
	unsigned int nsvc = lb_conf_nb_svcs(h->conf);

	if (h->synced && lb_conf_generation(h->conf) == h->conf_gen)
		return;
	for (unsigned int i = 0; i < LB_CONF_MAX_SVCS; i++)
		if (h->svc[i] != NULL)
			h->svc[i]->seen = false;
	for (unsigned int i = 0; i < nsvc; i++) {
		const struct lb_conf_svc *sv = lb_conf_svc_at(h->conf, i);
		struct hc_svc *s = svc_find(h, &sv->key);

		for (unsigned int j = 0; s == NULL && j < LB_CONF_MAX_SVCS;
		     j++) {
			if (h->svc[j] != NULL)
				continue;
			/* calloc: 256 backends' worth, once per service. */
			h->svc[j] = calloc(1, sizeof(*h->svc[j]));
			s = h->svc[j];
			if (s != NULL)
				s->key = sv->key;
		}
		if (s == NULL)
			continue; /* out of memory: it stays unchecked */
		sync_svc(h, s, sv, now);
		s->seen = true;
	}
	for (unsigned int i = 0; i < LB_CONF_MAX_SVCS; i++) {
		struct hc_svc *s = h->svc[i];

		if (s == NULL || s->seen)
			continue;
		for (unsigned int j = 0; j < s->nb; j++)
			be_drop(h, &s->be[j]);
		free(s);
		h->svc[i] = NULL;
	}
	h->conf_gen = lb_conf_generation(h->conf);
	h->synced = true;
}

struct lb_health *
lb_health_create(const struct lb_conf *conf)
{
	struct lb_health *h = calloc(1, sizeof(*h));

	if (h == NULL)
		return NULL;
	h->conf = conf;
	for (unsigned int i = 0; i < LB_HEALTH_MAX_PROBES; i++)
		h->probe[i].fd = -1;
	return h;
}

void
lb_health_free(struct lb_health *h)
{
	if (h == NULL)
		return;
	for (unsigned int i = 0; i < LB_HEALTH_MAX_PROBES; i++)
		probe_close(h, &h->probe[i]);
	for (unsigned int i = 0; i < LB_CONF_MAX_SVCS; i++)
		free(h->svc[i]);
	free(h);
}

int
lb_health_listen(struct lb_health *h, lb_health_change_fn *fn, void *ctx)
{
	for (unsigned int i = 0; i < MAX_LISTENERS; i++) {
		if (h->listener[i].fn == NULL) {
			h->listener[i].fn = fn;
			h->listener[i].ctx = ctx;
			return 0;
		}
	}
	return -ENOSPC;
}

int
lb_health_get(const struct lb_health *h, const struct lb_conf_svc_key *k,
	      uint32_t ip, uint16_t port, struct lb_health_be_info *info)
{
	struct lb_conf_ip a = lb_conf_ip4(ip);

	return lb_health_get_ip(h, k, &a, port, info);
}

int
lb_health_get_ip(const struct lb_health *h, const struct lb_conf_svc_key *k,
		 const struct lb_conf_ip *ip, uint16_t port,
		 struct lb_health_be_info *info)
{
	struct hc_be *b = be_find(svc_find(h, k), ip, port);

	if (b == NULL)
		return -ENOENT;
	*info = b->info;
	info->state = (enum lb_health_state)b->fsm.state;
	info->ok_run = b->fsm.ok_run;
	info->fail_run = b->fsm.fail_run;
	return 0;
}

bool
lb_health_eligible(const struct lb_health *h, const struct lb_conf_svc_key *k,
		   uint32_t ip, uint16_t port)
{
	struct lb_conf_ip a = lb_conf_ip4(ip);
	struct hc_be *b = be_find(svc_find(h, k), &a, port);

	return b == NULL || b->fsm.state == LB_HEALTH_NONE ||
	       b->fsm.state == LB_HEALTH_UP;
}

void
lb_health_mark(struct lb_health *h, struct lb_dpconf *d, uint64_t now)
{
	lb_health_sync(h, now);
	for (uint32_t s = 0; s < d->nb_svc; s++) {
		struct lb_dpconf_svc *v = &d->svc[s];
		struct lb_conf_svc_key k = lb_dpconf_svc_key(v);
		struct hc_svc *hs = svc_find(h, &k);

		for (uint32_t b = 0; b < v->nb_be; b++) {
			struct lb_conf_ip ip = lb_dpconf_be_addr(&v->be[b]);
			struct hc_be *e = be_find(hs, &ip, ntohs(v->be[b].port));
			bool down = e != NULL &&
				    (e->fsm.state == LB_HEALTH_PENDING ||
				     e->fsm.state == LB_HEALTH_DOWN);

			v->be[b].health = down ? LB_BE_HEALTH_DOWN
					       : LB_BE_HEALTH_UP;
			/* up_gen comes from the previous table; one more
			 * for a backend back up tells workers to drop the
			 * errors of its failed instance, even a worker that
			 * never took up a table marking it down. */
			if (e != NULL && e->rises != e->rises_marked) {
				v->be[b].up_gen++;
				e->rises_marked = e->rises;
			}
		}
	}
}

/* ---- probes -------------------------------------------------------------- */

/* The outcome of a probe of @p b started at @p t0: rise/fall, next. */
static void
record(struct lb_health *h, struct hc_svc *s, struct hc_be *b,
       enum lb_health_why why, unsigned int status, uint64_t t0,
       uint64_t now)
{
	enum lb_health_state from = b->fsm.state;
	bool ok = why == LB_HC_OK;

	b->info.probes++;
	b->info.failures += !ok;
	b->info.has_last = true;
	b->info.last = why;
	b->info.last_status = status;
	b->info.last_latency_ns = now - t0;
	b->info.last_ns = now;
	h->st.probes++;
	h->st.failures += !ok;
	b->next_ns = t0 + b->check.interval_ns;
	if (b->next_ns < now)
		b->next_ns = now;
	if (lb_health_fsm_result(&b->fsm, ok, b->check.rise, b->check.fall)) {
		if (b->fsm.state == LB_HEALTH_UP)
			b->rises++;
		b->info.since_ns = now;
		notify(h, s, b, from);
	}
}

static void
finish(struct lb_health *h, struct probe *p, enum lb_health_why why,
       unsigned int status, uint64_t now)
{
	struct hc_svc *s = h->svc[p->svc];
	struct hc_be *b = &s->be[p->be];

	b->probe = -1;
	probe_close(h, p);
	record(h, s, b, why, status, p->start_ns, now);
}

static enum lb_health_why
sock_why(int err)
{
	return err == ECONNREFUSED ? LB_HC_REFUSED : LB_HC_CONN_ERROR;
}

/* The socket address of @p ip : @p port; returns its length. */
static socklen_t
sockaddr_of(const struct lb_conf_ip *ip, uint16_t port,
	    struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (ip->af == LB_CONF_AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		memcpy(&s6->sin6_addr, ip->ip6, sizeof(s6->sin6_addr));
		return sizeof(*s6);
	}
	{
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		s4->sin_addr.s_addr = htonl(ip->ip);
		return sizeof(*s4);
	}
}

static void
start(struct lb_health *h, unsigned int si, unsigned int bi, uint64_t now)
{
	struct hc_svc *s = h->svc[si];
	struct hc_be *b = &s->be[bi];
	uint16_t port = b->check.port != 0 ? b->check.port : b->port;
	struct sockaddr_storage ss;
	struct probe *p = NULL;
	char a[LB_CMD_IP_ADDR_STRLEN];
	socklen_t sl;
	int n;

	for (unsigned int i = 0; i < LB_HEALTH_MAX_PROBES && p == NULL; i++)
		if (h->probe[i].fd < 0)
			p = &h->probe[i];
	if (p == NULL)
		return;
	memset(p->resp, 0, sizeof(p->resp));
	p->svc = si;
	p->be = bi;
	p->start_ns = now;
	p->deadline_ns = now + b->check.timeout_ns;
	p->req_off = p->resp_len = p->req_len = 0;
	p->moved = false;
	sl = sockaddr_of(&b->ip, port, &ss);
	p->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		       0);
	if (p->fd < 0) {
		/* No socket, no answer: the probe failed. */
		record(h, s, b, LB_HC_LOCAL, 0, now, now);
		return;
	}
	b->probe = (int)(p - h->probe);
	h->st.inflight++;
	if (b->check.type == LB_CONF_CHECK_HTTP) {
		/* Host: an IPv6 literal in brackets (RFC 7230 5.4). */
		lb_cmd_fmt_ip_port(&b->ip, port, a);
		n = snprintf(p->req, sizeof(p->req),
			     "GET %s HTTP/1.1\r\nHost: %s\r\n"
			     "User-Agent: sluice-health-check\r\n"
			     "Accept: */*\r\nConnection: close\r\n\r\n",
			     b->check.path, a);
		p->req_len = (uint16_t)(n < (int)sizeof(p->req) ? n : 0);
	}
	p->ph = PH_CONNECT;
	if (connect(p->fd, (struct sockaddr *)&ss, sl) != 0 &&
	    errno != EINPROGRESS)
		finish(h, p, sock_why(errno), 0, now);
}

/* Sends what is left of the request; then the answer is awaited. */
static void
step_send(struct lb_health *h, struct probe *p, uint64_t now)
{
	while (p->req_off < p->req_len) {
		ssize_t n = send(p->fd, p->req + p->req_off,
				 p->req_len - p->req_off, MSG_NOSIGNAL);

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			p->ph = PH_SEND;
			return;
		}
		if (n <= 0) {
			finish(h, p, sock_why(errno), 0, now);
			return;
		}
		p->req_off += (uint16_t)n;
	}
	p->ph = PH_READ;
}

static void
step_read(struct lb_health *h, struct probe *p, uint64_t now)
{
	const struct lb_conf_check *c = &h->svc[p->svc]->be[p->be].check;
	unsigned int status = 0;
	ssize_t n;
	int rc;

	n = recv(p->fd, p->resp + p->resp_len, sizeof(p->resp) - p->resp_len,
		 0);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return;
	if (n < 0) {
		finish(h, p, sock_why(errno), 0, now);
		return;
	}
	p->resp_len += (uint16_t)n;
	rc = lb_health_http_status(p->resp, p->resp_len, &status);
	if (rc > 0)
		finish(h, p,
		       status >= c->status_lo && status <= c->status_hi ?
			       LB_HC_OK :
			       LB_HC_STATUS,
		       status, now);
	else if (rc < 0 || p->resp_len == sizeof(p->resp))
		finish(h, p, LB_HC_BAD_RESPONSE, 0, now);
	else if (n == 0)
		finish(h, p, LB_HC_CLOSED, 0, now);
}

static void
step(struct lb_health *h, struct probe *p, short revents, uint64_t now)
{
	int err = 0;
	socklen_t len = sizeof(err);

	p->moved = true;
	if (p->ph == PH_CONNECT) {
		if (!(revents & (POLLOUT | POLLERR | POLLHUP)))
			return;
		if (getsockopt(p->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
			err = errno;
		if (err != 0) {
			finish(h, p, sock_why(err), 0, now);
			return;
		}
		if (h->svc[p->svc]->be[p->be].check.type !=
		    LB_CONF_CHECK_HTTP) {
			finish(h, p, LB_HC_OK, 0, now);
			return;
		}
		step_send(h, p, now);
		return;
	}
	if (p->ph == PH_SEND && (revents & (POLLOUT | POLLERR | POLLHUP)))
		step_send(h, p, now);
	else if (p->ph == PH_READ && (revents & (POLLIN | POLLERR | POLLHUP)))
		step_read(h, p, now);
}

unsigned int
lb_health_pollfds(const struct lb_health *h, struct pollfd *pfd,
		  unsigned int max)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < LB_HEALTH_MAX_PROBES && n < max; i++) {
		const struct probe *p = &h->probe[i];

		if (p->fd < 0)
			continue;
		pfd[n++] = (struct pollfd){
			.fd = p->fd,
			.events = p->ph == PH_READ ? POLLIN : POLLOUT,
		};
	}
	return n;
}

void
lb_health_process(struct lb_health *h, const struct pollfd *pfd,
		  unsigned int n, uint64_t now)
{
	lb_health_sync(h, now);
	for (unsigned int i = 0; i < n; i++) {
		if (pfd[i].revents == 0)
			continue;
		for (unsigned int j = 0; j < LB_HEALTH_MAX_PROBES; j++) {
			if (h->probe[j].fd == pfd[i].fd) {
				step(h, &h->probe[j], pfd[i].revents, now);
				break;
			}
		}
	}
	/* A probe that just went on (connected, sent) gets one more poll
	 * before its deadline counts: when this loop was late, its answer
	 * may be waiting already. */
	for (unsigned int j = 0; j < LB_HEALTH_MAX_PROBES; j++) {
		struct probe *p = &h->probe[j];

		if (p->fd >= 0 && now >= p->deadline_ns && !p->moved)
			finish(h, p, LB_HC_TIMEOUT, 0, now);
		p->moved = false;
	}
	for (unsigned int i = 0; i < LB_CONF_MAX_SVCS; i++) {
		struct hc_svc *s = h->svc[i];

		for (unsigned int j = 0; s != NULL && j < s->nb; j++) {
			struct hc_be *b = &s->be[j];

			if (b->check.type == LB_CONF_CHECK_NONE ||
			    b->probe >= 0 || now < b->next_ns)
				continue;
			if (h->st.inflight >= LB_HEALTH_MAX_PROBES) {
				h->st.deferred++;
				continue;
			}
			start(h, i, j, now);
		}
	}
}

int
lb_health_timeout_ms(const struct lb_health *h, uint64_t now)
{
	uint64_t next = UINT64_MAX;

	for (unsigned int j = 0; j < LB_HEALTH_MAX_PROBES; j++)
		if (h->probe[j].fd >= 0 && h->probe[j].deadline_ns < next)
			next = h->probe[j].deadline_ns;
	for (unsigned int i = 0; i < LB_CONF_MAX_SVCS; i++) {
		const struct hc_svc *s = h->svc[i];

		for (unsigned int j = 0; s != NULL && j < s->nb; j++)
			if (s->be[j].check.type != LB_CONF_CHECK_NONE &&
			    s->be[j].probe < 0 && s->be[j].next_ns < next)
				next = s->be[j].next_ns;
	}
	if (next == UINT64_MAX)
		return -1;
	if (next <= now)
		return 0;
	return (int)((next - now + 999999) / 1000000 < 60000 ?
			     (next - now + 999999) / 1000000 :
			     60000);
}

const struct lb_health_stats *
lb_health_stats(const struct lb_health *h)
{
	return &h->st;
}
