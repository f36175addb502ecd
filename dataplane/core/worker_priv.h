/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_WORKER_PRIV_H
#define LB_WORKER_PRIV_H

/*
 * What the worker's stage files (worker*.c) share: the functions one stage
 * calls in another, and the small helpers of the packet path, static
 * inline here so that each stage inlines them as one file did.
 */

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_memcpy.h>
#include <rte_prefetch.h>
#include <rte_rcu_qsbr.h>

#include "dp.h"
#include "exc.h"
#include "bytes.h"
#include "nat.h"

#define LOG(level, fmt, ...) \
	RTE_LOG(level, USER1, "worker: " fmt "\n", ##__VA_ARGS__)

#define HOLD_CAP 4096u
#define REDIRECT_RING 4096u
#define NEIGH_RING 256u
#define NEIGH_CAP 1024u
#define HOUSE_NS 1000000ull  /* housekeeping at most every 1 ms */
#define DEFERQ_BUDGET 64u
#define IDLE_LOOPS 64u       /* empty polls before the first sleep */
#define MAX_TRIALS 15u       /* four bits of flow->flags */
#define TRIALS_SHIFT 4

/* lb_worker_l7_follow(): the flow was reset both ways, drop the segment. */
#define L7_RESET (LB_L7_REPEAT + 1)

#define VLAN_VID_MASK 0x0fff

/* Functions of one stage that another calls: what one file kept static. */

/* worker.c: transmit and feedback buffers of the loop. */
void lb_worker_tx_flush(struct lb_worker *w, uint16_t port);
void lb_worker_fb_put_full(struct lb_worker *w, enum lb_fb_kind kind,
			   uint32_t svc, uint32_t be, uint16_t flags,
			   uint32_t u32, uint32_t u32b, uint64_t v);
/* An LB_FB_REJECT of an IPv6 client: its key @p key / @p len (lb/fb.h). */
void lb_worker_fb_put_reject6(struct lb_worker *w, uint32_t svc, uint16_t flags,
			      uint8_t len, const uint8_t key[16]);

/* worker_rx.c: a burst, parsed and dispatched. */
void lb_worker_handle_burst(struct lb_worker *w, struct rte_mbuf **m,
			    unsigned int n, uint64_t now);

/* worker6.c: IPv6 frames, from the ethertype on. */
void lb_worker_handle_ipv6(struct lb_worker *w, struct rte_mbuf *m,
			   uint64_t now);
/* The end of IPv6 flow @p f (expiry, reclaim): counts, and with
 * @p release its SNAT port and SYN copy (else a trial keeps them). */
void lb_worker_flow6_forget(struct lb_worker *w, const struct lb_flow *f,
			    int release);
/* lb_worker_rst_client() for an IPv6 segment (a SYN refused by
 * admission, a queued SYN at its expiry). */
void lb_worker_rst_client6(struct lb_worker *w, struct rte_mbuf *m,
			   uint64_t now);
struct lb_pkt6;
/* Starts the sequence tracking of new IPv6 flow @p idx at its first
 * segment @p m, parsed in @p pkt (nothing for UDP). */
void lb_worker_track6_init(struct lb_worker *w, uint32_t idx,
			   const struct rte_mbuf *m,
			   const struct lb_pkt6 *pkt);
/* The next trial of IPv6 trial @p t, towards backend @p be, from its SYN
 * copy. @return 0, or a negative errno with the copy kept. */
int lb_worker_trial6_next(struct lb_worker *w, const struct lb_trial *t,
			  uint32_t be, uint64_t now);
/* An IPv6 SYN copy @p hold due in its deferred queue, @p m a copy of it
 * to send (taken): lb_worker_on_deferq()'s verdict. */
enum lb_deferq_verdict lb_worker_deferq6_due(struct lb_worker *w,
					     uint32_t hold, struct rte_mbuf *m,
					     uint64_t now);
/* The active IPv6 SNAT addresses of @p c as w->snat6 knows them. */
uint32_t lb_worker_snat6_active(const struct lb_worker *w,
				const struct lb_dpconf *c, uint32_t *keys);

/* worker64.c: fnat64, an IPv6 client to an IPv4 backend (flow6.h). */
struct lb_flow6_tuple;
struct lb_pkt6;
/* Trial @p trials + 1 of a flow of IPv6 service @p s to its IPv4
 * backend @p be, with its SYN copy @p hold and @p m its first packet:
 * 0 (@p m sent), or a negative errno (-EADDRNOTAVAIL: no IPv4 SNAT
 * port) with @p m the caller's. */
int lb_worker_fnat64_start(struct lb_worker *w, struct rte_mbuf *m,
			   struct lb_pkt6 *pkt, int s, uint32_t be,
			   const struct lb_flow6_tuple *orig, uint32_t hold,
			   uint32_t trials, uint64_t now);
/* The client's packet @p m of fnat64 flow @p idx, to its backend, the
 * flow already touched (the follower's: worker6.c, worker_l7.c). */
void lb_worker_fnat64_out(struct lb_worker *w, struct rte_mbuf *m,
			  struct lb_pkt6 *pkt, uint32_t idx, uint64_t now);
/* The client's packet @p m of fnat64 flow @p idx, to its backend; the
 * flow moves on TCP flags @p fl (what the sequence checks let count). */
void lb_worker_fnat64_fwd(struct lb_worker *w, struct rte_mbuf *m,
			  struct lb_pkt6 *pkt, uint32_t idx, uint8_t fl,
			  uint64_t now);
/* The backend's reply @p m of fnat64 flow @p idx, to its client. */
void lb_worker_fnat64_reply(struct lb_worker *w, struct rte_mbuf *m,
			    struct lb_pkt *pkt, uint32_t idx, uint64_t now);
/* An ICMP error quoting fnat64 flow @p idx from side @p dir. */
void lb_worker_icmp64_error(struct lb_worker *w, struct rte_mbuf *m,
			    struct lb_pkt *pkt, uint32_t idx,
			    enum lb_flow_dir dir, uint64_t now);
/* An ICMPv6 error quoting fnat64 flow @p idx from side @p dir. */
void lb_worker_icmp46_error(struct lb_worker *w, struct rte_mbuf *m,
			    struct lb_pkt6 *pkt, uint32_t idx,
			    enum lb_flow_dir dir, uint64_t now);

/* worker6.c, for fnat66 and fnat64: the backend's answer of TCP flags
 * @p flags to trial flow @p f (entry @p idx) in SYN_SENT. A RST fails
 * the trial, which goes on to the next backend with the SYN copy (@p m
 * consumed, true); a SYN-ACK is the trial's success. */
bool lb_worker_trial6_answer(struct lb_worker *w, struct lb_flow *f,
			     uint32_t idx, struct rte_mbuf *m, uint8_t flags,
			     uint64_t now);
/* worker_client.c: keeps @p m as the SYN copy of a new flow's trials
 * (LB_HOLD_NONE when the pool is empty); a flow of the SYN proxy keeps
 * its record @p sc with it, and the client's ACK @p ack (consumed) when
 * it carries data. */
uint32_t lb_worker_hold_syn(struct lb_worker *w, struct rte_mbuf *m,
			    struct rte_mbuf *ack, const struct lb_pkt *apkt,
			    const struct lb_synp_conn *sc);
/* worker_backend.c: the sequence number at @p th + 4 quoted by the
 * ICMP or ICMPv6 error @p icmp about spliced flow @p idx, arrived from
 * side @p dir, taken into the numbers of the side that gets it. */
void lb_worker_quote_seq(struct lb_worker *w, uint32_t idx, uint8_t *th,
			 uint8_t *icmp, bool l4csum, enum lb_flow_dir dir);
/* worker6.c: whether the first packet @p m of a new flow of IPv6
 * service @p s may open it (own source, checksum, per-source budget,
 * admission); counted and consumed otherwise. */
bool lb_worker_flow6_first_ok(struct lb_worker *w, struct rte_mbuf *m,
			      struct lb_pkt6 *pkt, int s,
			      const struct lb_flow6_tuple *orig, uint64_t now);
/* worker6.c: the first trial of a new flow of IPv6 service @p s, SYN or
 * datagram @p m; for the SYN proxy, @p m is the SYN made from the
 * client's ACK @p ack (@p apkt), @p sc what the ACK said. */
void lb_worker_flow6_open(struct lb_worker *w, struct rte_mbuf *m,
			  struct lb_pkt6 *pkt, int s,
			  const struct lb_flow6_tuple *orig,
			  struct rte_mbuf *ack, const struct lb_pkt *apkt,
			  const struct lb_synp_conn *sc, uint64_t now);
/* worker6.c, for fnat66 and fnat64: a packet too big @p m (parsed in
 * @p pkt) of MTU below IPv6's minimum raised to it, counted; other
 * errors untouched. */
void lb_worker_icmp6_mtu_floor(struct lb_worker *w, struct rte_mbuf *m,
			       const struct lb_pkt6 *pkt);

/* worker_client.c: client to VIP; fwd() is full-NAT either way. */
void lb_worker_flow_forget(struct lb_worker *w, const struct lb_flow *f,
			   int free_port, int free_hold);
void lb_worker_fwd(struct lb_worker *w, struct rte_mbuf *m, struct lb_pkt *pkt,
		   const struct lb_flow *f, enum lb_flow_dir dir, uint64_t now);
void lb_worker_rst_client(struct lb_worker *w, struct rte_mbuf *m,
			  uint64_t now);
/* Admission of a new flow of IPv6 service @p svc_idx from @p client;
 * true when refused (@p m freed). */
bool lb_worker_admit6_reject(struct lb_worker *w, struct rte_mbuf *m,
			     int svc_idx, const uint8_t client[16],
			     uint64_t now);
void lb_worker_no_flow(struct lb_worker *w, struct rte_mbuf *m,
		       struct lb_pkt *pkt, uint32_t b, uint64_t rate,
		       uint64_t now);
void lb_worker_from_client(struct lb_worker *w, struct rte_mbuf *m,
			   struct lb_pkt *pkt, int svc_idx, uint64_t hash,
			   uint64_t now);

/* worker_trial.c: SYN copies, trials, the deferred queue. */
uint32_t lb_worker_hold_put(struct lb_worker *w, struct rte_mbuf *m);
/* Keeps @p m itself (not a copy); LB_HOLD_NONE (counted) when the pool is
 * empty, @p m then still the caller's. */
uint32_t lb_worker_hold_take(struct lb_worker *w, struct rte_mbuf *m);
void lb_worker_hold_release(struct lb_worker *w, uint32_t i);
/* Takes copy or segment @p i out of the pool, to the caller; NULL when
 * there is none. What waits with a SYN copy stays (hold_release()). */
struct rte_mbuf *lb_worker_hold_out(struct lb_worker *w, uint32_t i);
void lb_worker_trial_feedback(struct lb_worker *w, uint32_t svc, uint32_t be,
			      bool ok);
/* A SNAT port for trial @p t towards backend @p be: 0 or -ENOSPC. */
int lb_worker_snat_take(struct lb_worker *w, struct lb_trial *t, uint32_t be,
			uint64_t now);
/* @p sc: the SYN proxy's record of a first trial without a SYN copy,
 * or NULL (the copy's is used). */
int lb_worker_flow_start(struct lb_worker *w, struct rte_mbuf *m,
			 struct lb_pkt *pkt, const struct lb_trial *t,
			 uint32_t be, const struct lb_synp_conn *sc,
			 uint64_t now);
void lb_worker_trial_failed(struct lb_worker *w, struct lb_trial *t,
			    uint64_t now);
void lb_worker_defer_or_rst(struct lb_worker *w, struct lb_trial *t,
			    uint64_t now);
enum lb_deferq_verdict lb_worker_on_deferq(enum lb_deferq_event ev,
					   const struct lb_deferq_entry *e,
					   void *arg);

/* worker_backend.c: backend to SNAT address, ICMP errors. */
void lb_worker_from_backend(struct lb_worker *w, struct rte_mbuf *m,
			    struct lb_pkt *pkt, uint64_t hash, uint64_t now);
void lb_worker_icmp_error(struct lb_worker *w, struct rte_mbuf *m,
			  struct lb_pkt *pkt, uint64_t now);

/* worker_l7.c: HTTP following and admission per request. */
void lb_worker_on_l7_obs(void *owner, uint32_t tag, const struct lb_l7_obs *o);
void lb_worker_on_l7_inflight(void *owner, uint32_t tag, int delta);
void lb_worker_gate_end(struct lb_worker *w, const struct lb_flow *f,
			uint32_t l7, bool flush, uint64_t now);
void lb_worker_l7_stop(struct lb_worker *w, struct lb_flow *f);
bool lb_worker_l7_unfollowed(struct lb_worker *w, struct lb_flow *f, int dir,
			     const uint8_t *frame, const struct lb_pkt *pkt,
			     uint64_t now);
int lb_worker_l7_follow(struct lb_worker *w, struct lb_flow *f, int dir,
			const uint8_t *frame, const struct lb_pkt *pkt,
			uint64_t now);
bool lb_worker_l7_gated(const struct lb_dpconf_svc *svc);
int lb_worker_l7_decide(struct lb_worker *w, uint32_t svc, unsigned int rank,
			uint32_t client, const uint8_t *client6, uint64_t now);
bool lb_worker_l7_nopool(struct lb_worker *w, struct rte_mbuf *m, int svc_idx,
			 uint32_t client, const uint8_t *client6, uint64_t now);
bool lb_worker_on_l7_admit(void *owner, uint32_t tag,
			   const struct lb_l7_req *rq);
/* A fresh mbuf holding the first @p l3 bytes (link header) of @p frame,
 * for lb_worker_seg_send(); NULL (counted) when the pool is empty. */
struct rte_mbuf *lb_worker_seg_alloc(struct lb_worker *w, const uint8_t *frame,
				     uint32_t l3);
void lb_worker_seg_send(struct lb_worker *w, const struct lb_flow *f,
			struct rte_mbuf *m, uint32_t l3_off, bool to_client,
			uint32_t seq, uint32_t ack, uint8_t flags, uint16_t win,
			const void *data, uint16_t len, uint64_t now);
void lb_worker_l7_refuse_late(struct lb_worker *w, struct lb_flow *f,
			      uint32_t idx, uint64_t now);
void lb_worker_rej_client(struct lb_worker *w, struct lb_flow *f,
			  struct lb_l7_rej *r, struct rte_mbuf *m,
			  const struct lb_pkt *pkt, uint64_t now);
bool lb_worker_l7_admission(struct lb_worker *w, struct lb_flow *f,
			    uint32_t idx, struct rte_mbuf *m,
			    const struct lb_pkt *pkt, int v, uint64_t now);
bool lb_worker_l7_no_entry(struct lb_worker *w, struct lb_flow *f, uint32_t idx,
			   struct rte_mbuf *m, const struct lb_pkt *pkt,
			   uint64_t now);

/*
 * The client's ACK completes the handshake (syn_recv to established):
 * only now does an http flow take an entry of the L7 pool. Taken at the
 * backend's SYN-ACK, entries were held for syn_recv's timeout by
 * half-open handshakes, which spoofed SYNs open at will. The ACK's
 * sequence number @p cli_isn is the client's ISN + 1 and its
 * acknowledgement @p srv_isn the backend's ISN + 1: where each
 * direction's bytes start. It runs before the ACK is followed, which may
 * carry the first bytes of a request. @return false when the pool had no
 * entry for the flow.
 */
static inline bool
lb_worker_l7_open(struct lb_worker *w, struct lb_flow *f, uint32_t cli_isn,
		  uint32_t srv_isn)
{
	const struct lb_dpconf_svc *svc = &w->conf->svc[f->svc];
	bool routed;

	if (w->l7 == NULL || !svc->opts.http || f->l7 != LB_L7_NONE)
		return true;
	f->l7 = lb_l7_open(w->l7, cli_isn, srv_isn,
			   (uint32_t)f->svc << 16 | f->be, f->svc);
	if (f->l7 == LB_L7_NONE)
		return false;
	/* A routed connection's later requests are read by the rules
	 * again (lb_worker_on_l7_head()); under `rebind close` one may be
	 * refused, which the gate does. */
	routed = f->svc < 64 && (w->bind_svc >> f->svc & 1);
	lb_l7_gate(
		w->l7, f->l7,
		lb_worker_l7_gated(svc) ||
			(routed && svc->opts.rebind == LB_CONF_REBIND_CLOSE));
	lb_l7_heads(w->l7, f->l7, routed);
	return true;
}

/* worker6.c: IPv6 frames through the L7 hooks above. */
/* Parses the IPv6 frame at @p frame into @p p6 and gives its TCP
 * offsets, flags and ports as an lb_pkt (no addresses) in @p pkt, the
 * view the family-blind L7 hooks read. @return 0 or -EINVAL. */
int lb_worker_view6(const uint8_t *frame, uint32_t len, struct lb_pkt6 *p6,
		    struct lb_pkt *pkt);
void lb_worker_fwd6(struct lb_worker *w, struct rte_mbuf *m,
		    struct lb_pkt6 *pkt, uint32_t idx, enum lb_flow_dir dir,
		    uint64_t now);

/* worker_pp.c: the PROXY protocol header and the offsets it makes. */
void lb_worker_pp_open(struct lb_worker *w, const struct lb_flow *f,
		       uint32_t idx, struct rte_mbuf *m,
		       const struct lb_pkt *pkt, uint64_t now);
bool lb_worker_pp_client(struct lb_worker *w, const struct lb_flow *f,
			 uint32_t idx, struct rte_mbuf *m, struct lb_pkt *pkt);
bool lb_worker_pp_datagram(struct lb_worker *w, const struct lb_flow *f,
			   struct rte_mbuf *m, struct lb_pkt *pkt);
void lb_worker_pp_house(struct lb_worker *w, uint64_t now);
bool lb_worker_pp_backend(struct lb_worker *w, const struct lb_flow *f,
			  uint32_t idx, struct rte_mbuf *m,
			  const struct lb_pkt *pkt, uint64_t now);

/* worker_synp.c: the SYN proxy. */
void lb_worker_synp_syn(struct lb_worker *w, struct rte_mbuf *m,
			struct lb_pkt *pkt, int svc_idx, uint64_t now);
/* 0 when the ACK @p m proves a cookie: @p so says what the cookie
 * carried, @p sc what the ACK said; else -ETIMEDOUT (expired) or -EPERM
 * (forged), counted. */
int lb_worker_synp_check(struct lb_worker *w, struct rte_mbuf *m,
			 const struct lb_pkt *pkt, int svc_idx,
			 struct lb_synp_conn *sc, struct lb_syncookie_opts *so,
			 uint64_t now);
/* The SYN to the backend made from the client's ACK, parsed in @p spkt;
 * NULL (counted) when the pool is empty. */
struct rte_mbuf *lb_worker_synp_syn_of(struct lb_worker *w,
				       struct rte_mbuf *ack,
				       const struct lb_pkt *pkt,
				       const struct lb_syncookie_opts *so,
				       const struct lb_synp_conn *sc,
				       struct lb_pkt *spkt);
/* Keeps @p sc with SYN copy @p hold (LB_HOLD_NONE: none was made) and
 * the ACK @p ack if it carries data; consumes @p ack. */
void lb_worker_synp_attach(struct lb_worker *w, uint32_t hold,
			   struct rte_mbuf *ack, const struct lb_pkt *pkt,
			   const struct lb_synp_conn *sc);
/* The record of flow entry @p idx, new, from @p sc or the one kept with
 * SYN copy @p hold; nothing when neither is the proxy's. */
void lb_worker_synp_flow(struct lb_worker *w, uint32_t idx, uint32_t hold,
			 const struct lb_synp_conn *sc);
void lb_worker_synp_release(struct lb_worker *w, uint32_t hold);
/* RST to the client of SYN copy @p hold if it is the proxy's, releasing
 * the copy and what waits with it; false (nothing done) otherwise. */
bool lb_worker_synp_rst(struct lb_worker *w, uint32_t hold, uint64_t now);
/* Turns client frame @p m into a RST at sequence number @p seq back to
 * its sender, consuming it. */
void lb_worker_synp_rst_to(struct lb_worker *w, struct rte_mbuf *m,
			   uint32_t seq, uint64_t now);
bool lb_worker_synp_early(struct lb_worker *w, const struct lb_flow *f,
			  struct rte_mbuf *m, const struct lb_pkt *pkt,
			  uint64_t now);
void lb_worker_synp_open(struct lb_worker *w, struct lb_flow *f, uint32_t idx,
			 struct rte_mbuf *m, struct lb_pkt *pkt, uint64_t now);
/* IPv6 services (fnat66). A client's segment @p m of service slot @p s
 * without a flow (tuple @p orig): a SYN answered with a cookie while the
 * proxy is on, an ACK proving one opening the flow with a SYN of the
 * worker's own; true when @p m was taken. */
bool lb_worker_synp6_client(struct lb_worker *w, struct rte_mbuf *m,
			    struct lb_pkt6 *p6, int s,
			    const struct lb_flow6_tuple *orig, uint64_t now);
/* A segment of flow @p f (entry @p idx) while its backend's handshake
 * runs: the backend's SYN-ACK completes it, the client's data waits;
 * true when @p m was taken. */
bool lb_worker_synp6_pend(struct lb_worker *w, struct lb_flow *f,
			  uint32_t idx, struct rte_mbuf *m, struct lb_pkt6 *p6,
			  enum lb_flow_dir dir, uint64_t now);
void lb_worker_synp6_open(struct lb_worker *w, struct lb_flow *f,
			  uint32_t idx, struct rte_mbuf *m, struct lb_pkt6 *p6,
			  uint64_t now);
/* Segment @p m of direction @p dir of flow @p f of a service whose
 * proxy is not off, before it is touched and sent: its numbers
 * translated when the flow is the proxy's; `auto` counts handshakes. */
void lb_worker_synp6_seg(struct lb_worker *w, struct lb_flow *f,
			 uint32_t idx, struct rte_mbuf *m,
			 const struct lb_pkt6 *p6, enum lb_flow_dir dir);
/* The IPv4 backend's segment @p m of fnat64 flow @p f of a service whose
 * proxy is not off: its SYN-ACK completes a proxied flow's handshake
 * (true: @p m taken), a segment of a proxied flow is translated. */
bool lb_worker_synp64_reply(struct lb_worker *w, struct lb_flow *f,
			    uint32_t idx, struct rte_mbuf *m,
			    struct lb_pkt *pkt, uint64_t now);
/* New entry @p idx: the proxy's record from SYN copy @p hold, or none. */
void lb_worker_synp6_flow(struct lb_worker *w, uint32_t idx, uint32_t hold);
int lb_worker_synp_init(struct lb_worker *w);
void lb_worker_synp_switch(struct lb_worker *w);
void lb_worker_synp_house(struct lb_worker *w, uint64_t now);
/* Counts a SYN of service slot @p s whose proxy is not off; `auto`
 * turns the proxy on the moment the counts reach its thresholds. */
void lb_worker_synp_auto_syn(struct lb_worker *w, uint32_t s, uint64_t now);

/* worker_bind.c: delayed binding (content routing). */
/* A client segment @p m without a flow: true when it was a waiting
 * connection's (taken). */
bool lb_worker_bind_seg(struct lb_worker *w, struct rte_mbuf *m,
			const struct lb_pkt *pkt, const struct lb_flow_key *k,
			uint64_t now);
/* The ACK @p m proved its cookie on a service with rules: the connection
 * waits for its first bytes. Consumes @p m. */
void lb_worker_bind_open(struct lb_worker *w, struct rte_mbuf *m,
			 const struct lb_pkt *pkt, int svc_idx,
			 const struct lb_flow_key *k,
			 const struct lb_synp_conn *sc,
			 const struct lb_syncookie_opts *so, uint64_t now);
/* A client segment while the backend's handshake of bound connection
 * @p d (a SYN copy's data) runs: 0 when @p d is no binding, 2 when the
 * segment brought only bytes already kept (the client sent it again),
 * 1 otherwise; the segment is taken unless 0. */
int lb_worker_bind_early(struct lb_worker *w, uint32_t d, struct rte_mbuf *m,
			 const struct lb_pkt *pkt);
/* The segments of slot @p i to the caller, in order; the slot is free. */
unsigned int lb_worker_bind_out(struct lb_worker *w, uint32_t i,
				struct rte_mbuf **seg);
void lb_worker_bind_free(struct lb_worker *w, uint32_t i);
/* The next backend after @p be in the pool of the connection of SYN copy
 * @p hold: -ENOENT when it has none (not bound by content), -EAGAIN when
 * the pool has no other. */
void lb_worker_on_l7_head(void *owner, uint32_t tag, uint32_t entry,
			  const uint8_t *head, size_t len);

/* A request that `rebind close` would refuse and the gate did not (it
 * shares its segment with an earlier request, or was let through before
 * its head ended): it went on to the first pool. */
static inline void
lb_worker_rebind_done(struct lb_worker *w)
{
	if (unlikely(w->rebind_hit != 0)) {
		w->st.rebind_kept++;
		w->rebind_hit = 0;
	}
}
int lb_worker_bind_next(struct lb_worker *w, uint32_t hold, uint32_t s,
			uint32_t be, uint32_t *next);
/* A backend of that pool, for a deferred connection; errors as above. */
int lb_worker_bind_pick(struct lb_worker *w, uint32_t hold, uint32_t s,
			uint32_t *be);
void lb_worker_bind_house(struct lb_worker *w, uint64_t now);

/*
 * The scheduler that weighs backend @p be of service slot @p s, its
 * operations in @p *ops: its named pool's when the pool has one (the
 * service routes by content), else the service's own. Trials' outcomes
 * and HTTP answers go there, so that a pool's error-adaptive weights
 * learn from its members. NULL when neither exists.
 */
static inline void *
lb_worker_sched_of(const struct lb_worker *w, uint32_t s, uint32_t be,
		   const struct lb_sched_ops **ops)
{
	uint32_t p = be < LB_CONF_MAX_BES ? w->conf->svc[s].be[be].pool : 0;

	if (p != 0 && p <= LB_CONF_MAX_POOLS &&
	    w->psched[s][p - 1].st != NULL) {
		*ops = w->psched[s][p - 1].ops;
		return w->psched[s][p - 1].st;
	}
	*ops = w->ops[s];
	return w->sched[s];
}
void lb_worker_bind_switch(struct lb_worker *w, const struct lb_dpconf *pub);
int lb_worker_bind_init(struct lb_worker *w, int socket);
void lb_worker_bind_fini(struct lb_worker *w);

/* worker_neigh.c: ARP, neighbours, the way out of a frame. */
void lb_worker_send_arp_request(struct lb_worker *w, uint16_t port,
				uint32_t src, uint32_t target,
				const uint8_t *dst_mac);
void lb_worker_neigh_release(void *ctx, uint32_t ip, uint64_t handle,
			     const uint8_t *mac);
void lb_worker_route_out(struct lb_worker *w, struct rte_mbuf *m, uint32_t dst,
			 uint64_t now);
void lb_worker_neigh_learn(struct lb_worker *w, uint32_t ip, const uint8_t *mac,
			   uint16_t port, uint64_t now, int broadcast);
void lb_worker_handle_arp(struct lb_worker *w, struct rte_mbuf *m,
			  struct lb_pkt *pkt, uint64_t now);

/* worker_neigh.c, IPv6: solicitations, the way out of an IPv6 frame,
 * neighbours learnt from neighbour discovery. */
void lb_worker_send_ns(struct lb_worker *w, uint16_t port, const uint8_t *src,
		       const uint8_t *target, const uint8_t *dst_mac);
void lb_worker_send_na_announce(struct lb_worker *w, uint16_t port,
				const uint8_t *addr);
void lb_worker_route_out6(struct lb_worker *w, struct rte_mbuf *m,
			  const uint8_t *dst, uint64_t now);
void lb_worker_neigh6_learn(struct lb_worker *w, const uint8_t *ip,
			    const uint8_t *mac, uint16_t port, uint64_t now);
void lb_worker_neigh6_poll(struct lb_worker *w, uint64_t now);
/* A neighbour another worker learnt (struct lb_neigh_msg). */
void lb_worker_neigh_msg(struct lb_worker *w, const struct lb_neigh_msg *msg,
			 uint64_t now);
/* Writes the snapshot of the neighbour tables if a reader asked. */
void lb_worker_neigh_view(struct lb_worker *w, uint64_t now);

/* worker_switch.c: taking up a new table. */
uint32_t lb_worker_snat_active(const struct lb_dpconf *c, uint32_t *ips);

static inline uint64_t
now_ns(const struct lb_dp *dp)
{
	return (uint64_t)((double)rte_rdtsc() * dp->ns_per_tsc);
}

static inline void
drop(struct lb_worker *w, struct rte_mbuf *m, enum lb_drop why)
{
	w->st.drop[why]++;
	rte_pktmbuf_free(m);
}

static inline uint8_t *
frame_of(struct rte_mbuf *m)
{
	return rte_pktmbuf_mtod(m, uint8_t *);
}

/*
 * Whether the TCP or UDP checksum of @p m verifies: the port's word when
 * it checked (RTE_ETH_RX_OFFLOAD_*_CKSUM, lb_port_setup()), else our own.
 */
static inline bool
l4_csum_ok(struct rte_mbuf *m, const struct lb_pkt *pkt)
{
	switch (m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) {
	case RTE_MBUF_F_RX_L4_CKSUM_GOOD:
	case RTE_MBUF_F_RX_L4_CKSUM_NONE: /* data verified, field not */
		return true;
	case RTE_MBUF_F_RX_L4_CKSUM_BAD:
		return false;
	default:
		return lb_pkt_l4_csum_ok(frame_of(m), pkt);
	}
}

/* What we have no use for but is addressed to a local address is the
 * kernel's, through the exception path when it is on (exc.h). */
static inline void
drop_or_kernel(struct lb_worker *w, struct rte_mbuf *m, uint32_t dst,
	       enum lb_drop why)
{
	if (w->exc_out != NULL && lb_exc_local(w->conf, dst))
		lb_exc_put(w, m);
	else
		drop(w, m, why);
}

/* drop_or_kernel() of an IPv6 frame to @p dst. */
static inline void
drop_or_kernel6(struct lb_worker *w, struct rte_mbuf *m, const uint8_t *dst,
		enum lb_drop why)
{
	if (w->exc_out != NULL && lb_exc_local6(w->conf, dst))
		lb_exc_put(w, m);
	else
		drop(w, m, why);
}

static inline void
tx_enqueue(struct lb_worker *w, uint16_t port, struct rte_mbuf *m)
{
	w->tx[port].m[w->tx[port].n++] = m;
	if (w->tx[port].n == LB_BURST)
		lb_worker_tx_flush(w, port);
}

/* Hands @p m to worker @p owner, whose flow it is, through its ring. */
static inline void
redirect(struct lb_worker *w, struct rte_mbuf *m, uint32_t owner)
{
	if (rte_ring_mp_enqueue(w->dp->w[owner]->redirect, m) != 0)
		drop(w, m, LB_DROP_REDIRECT);
	else
		w->st.redirect_out++;
}

/*
 * An ICMP or ICMPv6 error about a client-side flow (quoting VIP ->
 * client) that is not in this worker's table. Which worker owns it
 * depends on where the client's SYN arrived (the NIC's RSS on the
 * client's tuple with its own key and table, an XDP program's choice,
 * queue 0 without RSS), which the error's own address pair (router,
 * VIP) does not tell. So the workers are asked in turn, each in its own
 * table: the error goes on to the next worker, nb_workers - 1 times at
 * most; the count rides in the mbuf's user tag while it is in a
 * redirect ring. The caller lets only errors quoting a service's VIP and
 * port go round.
 * @return true if @p m was passed on (or dropped as redirect_full),
 *   false when every worker has had it.
 */
static inline bool
icmp_pass_next(struct lb_worker *w, struct rte_mbuf *m)
{
	struct lb_dp *dp = w->dp;
	uint64_t hops = w->in_redirect ? (uint64_t)m->hash.usr + 1 : 1;
	struct lb_worker *next;

	if (hops >= dp->nb_workers)
		return false;
	next = dp->w[(w->wid + 1u) % dp->nb_workers];
	m->hash.usr = (uint32_t)hops;
	if (rte_ring_mp_enqueue(next->redirect, m) != 0)
		drop(w, m, LB_DROP_REDIRECT);
	else
		w->st.redirect_out++;
	return true;
}

/* The flow of @p pkt (its key in @p k), by the hash the burst computed. */
static inline uint32_t
flow_of(struct lb_worker *w, const struct lb_pkt *pkt, uint64_t hash,
	struct lb_flow_key *k, enum lb_flow_dir *dir)
{
	lb_flow_key_set(k, pkt->src, pkt->dst, pkt->sport, pkt->dport,
			pkt->proto);
	return lb_flow_lookup_hash(w->ft, k, hash, dir);
}

/* The VLAN a frame arrived in: 0 untagged (or priority-tagged). */
static inline uint16_t
pkt_vid(const struct lb_pkt *pkt)
{
	return pkt->has_vlan ? (uint16_t)(pkt->vlan_tci & VLAN_VID_MASK) : 0;
}

/*
 * lb_flow_touch() for the worker. While a flow is in SYN_SENT its l7 slot
 * holds the SYN copy kept for retries; in every other state it holds its
 * L7 entry (or nothing). A flow leaves SYN_SENT by the backend's SYN-ACK,
 * but also by a RST or a FIN from either side: the copy is released on
 * every way out, here, so that no reader ever takes a copy's index for an
 * entry's, and no copy outlives the one state that retries with it. (A
 * flag saying what the slot holds would keep copies nobody can use and
 * leave every reader one test to forget.)
 */
static inline int
flow_touch(struct lb_worker *w, struct lb_flow *f, uint32_t idx,
	   enum lb_flow_dir dir, uint8_t tcp_flags, uint64_t now)
{
	uint8_t old = f->state;
	int st = lb_flow_touch(w->ft, idx, dir, tcp_flags, now);

	if (unlikely(old == LB_FLOW_SYN_SENT) && st != LB_FLOW_SYN_SENT) {
		lb_worker_hold_release(w, f->l7);
		f->l7 = LB_L7_NONE;
	}
	return st;
}

/* Flow @p f (entry @p idx) is the SYN proxy's, its backend's handshake
 * under way (worker_synp.c). */
static inline bool
synp_holds(const struct lb_worker *w, const struct lb_flow *f, uint32_t idx)
{
	return f->state == LB_FLOW_SYN_SENT &&
	       unlikely(w->synp[idx].state == LB_SYNP_PEND);
}

static inline void
fb_put(struct lb_worker *w, enum lb_fb_kind kind, uint32_t svc, uint32_t be,
       uint32_t u32, uint64_t v)
{
	lb_worker_fb_put_full(w, kind, svc, be, 0, u32, 0, v);
}

static inline uint32_t
tcp_word(const uint8_t *frame, const struct lb_pkt *pkt, uint32_t off)
{
	uint32_t v;

	memcpy(&v, frame + pkt->l4_off + off, 4);
	return rte_be_to_cpu_32(v);
}

/*
 * The TCP segment whose header is at @p l4_off of frame @p fr, as
 * lb_tcp_track() reads it: @p payload_len bytes of payload at
 * @p payload_off (the parser checked the data offset), flags @p flags.
 * Either family's parse gives these.
 */
static inline void
tcp_seg_at(struct lb_tcp_seg *s, const uint8_t *fr, uint32_t l4_off,
	   uint32_t payload_off, uint32_t payload_len, uint8_t flags)
{
	const uint8_t *th = fr + l4_off;

	s->seq = rd32(th + 4);
	s->ack = rd32(th + 8);
	s->len = payload_len;
	s->win = (uint16_t)(th[14] << 8 | th[15]);
	s->flags = flags;
	/* Options run from byte 20 to the payload; only SYNs carry the
	 * window scale. */
	s->wscale = flags & LB_TCP_SYN ?
			    (int8_t)lb_tcp_opt_wscale(th + 20,
						      payload_off - l4_off -
							      20u) :
			    -1;
}

/* TCP segment @p pkt as lb_tcp_track() reads it. */
static inline void
tcp_seg(struct lb_tcp_seg *s, const uint8_t *fr, const struct lb_pkt *pkt)
{
	tcp_seg_at(s, fr, pkt->l4_off, pkt->payload_off, pkt->payload_len,
		   pkt->tcp_flags);
}

/*
 * The admission state of L7 entry @p l7, or NULL when there is none: the
 * index comes from a flow, and rej[] is sized by the L7 pool, not by the
 * table, so every access is checked.
 */
static inline struct lb_l7_rej *
rej_of(const struct lb_worker *w, uint32_t l7)
{
	return w->rej != NULL && l7 < w->nb_rej ? &w->rej[l7] : NULL;
}

/*
 * Both directions have sent their FIN, in order (a gap stops following
 * before): the exchange can report nothing more. Holding the entry until
 * the flow expires (TIME_WAIT lasts minutes) would let connection churn
 * empty the pool. A refused flow keeps it: the worker still answers for
 * the server.
 */
static inline void
l7_closed(struct lb_worker *w, struct lb_flow *f)
{
	const struct lb_l7_rej *r;

	if (likely(f->l7 == LB_L7_NONE) || f->state != LB_FLOW_TIME_WAIT)
		return;
	r = rej_of(w, f->l7);
	if (r == NULL || r->state == LB_L7_RJ_OPEN)
		lb_worker_l7_stop(w, f);
}

static inline void
trial_snapshot(const struct lb_flow *f, struct lb_trial *t)
{
	t->orig = f->key[LB_FLOW_DIR_ORIG];
	t->snat_ip = f->key[LB_FLOW_DIR_REPLY].dst;
	t->snat_port = f->key[LB_FLOW_DIR_REPLY].dport;
	t->svc = f->svc;
	t->be = f->be;
	t->trials = f->flags >> TRIALS_SHIFT;
	t->hold = f->l7;
	/* Only fnat64's two keys differ in family (flow6.h). */
	t->v4_backend = f->key[LB_FLOW_DIR_REPLY].pad[0] !=
			f->key[LB_FLOW_DIR_ORIG].pad[0];
}

/*
 * One token of @p b at @p rate per second, holding at most one second's
 * worth; false when it is empty or @p rate is 0. Credit is kept in
 * token-nanoseconds, so any rate up to 10^6 fits 64 bits.
 */
static inline bool
rst_token(struct lb_rst_tb *b, uint64_t rate, uint64_t now)
{
	const uint64_t one = 1000000000ull;
	uint64_t dt = now - b->last;

	if (rate == 0)
		return false;
	b->last = now;
	b->credit += (dt < one ? dt : one) * rate;
	if (b->credit > rate * one)
		b->credit = rate * one;
	if (b->credit < one)
		return false;
	b->credit -= one;
	return true;
}

/*
 * Key of a client's SYN in the deferred queue, under which its
 * retransmissions join it. Keyed with this worker's secret flow table
 * seed, not the schedulers' hash seed, which hosts may share: a client
 * who could compute keys could make its SYN take another's place.
 */
static inline uint64_t
deferq_key(const struct lb_worker *w, const struct lb_flow_key *orig)
{
	return lb_flow_hash(w->ft->seed, orig);
}

/*
 * A packet that arrived with TTL 0 or 1 is never forwarded (lb_worker_fwd()
 * drops it): dropped before it can change anything, or a RST nobody receives
 * would close the flow, a SYN take a SNAT port and a copy, and data the
 * backend never gets move the follower past bytes it will see again.
 */
static inline bool
ttl_expires(struct lb_worker *w, struct rte_mbuf *m, const struct lb_pkt *pkt)
{
	if (likely(pkt->ttl > 1))
		return false;
	drop(w, m, LB_DROP_TTL);
	return true;
}

/*
 * Judges TCP segment @p s (@p m, its IP header at @p l3_off) of flow
 * @p f (entry @p idx), from side @p dir, against the flow's sequence
 * numbers before it can change anything (dataplane/flow/tcp_track.h): a
 * blind sender's RST or FIN must not close a flow its peers keep open.
 * Either family's: the challenge ACK leaves in the family of the side it
 * goes to (lb_worker_seg_send()).
 * @return the TCP flags the flow's state may move on (0: none), or -1
 *   when @p m was taken: dropped out of window, or turned into the
 *   challenge ACK of a RST in window but not exact (RFC 5961 3.2).
 */
static inline int
tcp_judge(struct lb_worker *w, const struct lb_flow *f, uint32_t idx,
	  enum lb_flow_dir dir, struct rte_mbuf *m, uint32_t l3_off,
	  const struct lb_tcp_seg *s, uint64_t now)
{
	struct lb_tcp_track *t = &w->trk[idx];
	uint32_t seq, ack;
	uint16_t win;

	switch (lb_tcp_track(t, dir, f->state, s)) {
	case LB_TCP_TRK_PASS:
		return s->flags;
	case LB_TCP_TRK_KEEP:
		return 0;
	case LB_TCP_TRK_CHALLENGE:
		/* The RST's sender gets an ACK in its peer's name: a peer
		 * whose connection is gone answers with the exact RST. */
		lb_tcp_track_challenge(t, dir, &seq, &ack, &win);
		/* To the backend in the client's name: in its numbers,
		 * past the PROXY header it got and from the SYN proxy's
		 * (worker_pp.c); the record is current, the backend's
		 * segment went through it. IPv6 flows have neither, and
		 * their entries leave those records as they found them. */
		if (dir == LB_FLOW_DIR_REPLY && unlikely(w->pp_used) &&
		    !lb_flow_is6(f) &&
		    (w->pp[idx].state != LB_PP_NONE ||
		     w->synp[idx].state == LB_SYNP_ON)) {
			seq += w->spl[idx].seq[LB_FLOW_DIR_ORIG];
			ack -= w->spl[idx].seq[LB_FLOW_DIR_REPLY];
		}
		w->st.challenge_acks++;
		lb_worker_seg_send(w, f, m, l3_off, dir == LB_FLOW_DIR_ORIG,
				   seq, ack, LB_TCP_ACK, win, NULL, 0, now);
		return -1;
	default:
		drop(w, m, LB_DROP_TCP_WINDOW);
		return -1;
	}
}

/* tcp_judge() of IPv4 segment @p m (parsed in @p pkt); other protocols
 * pass with their flags. */
static inline int
tcp_check(struct lb_worker *w, const struct lb_flow *f, uint32_t idx,
	  enum lb_flow_dir dir, struct rte_mbuf *m, const struct lb_pkt *pkt,
	  uint64_t now)
{
	struct lb_tcp_seg s;

	if (pkt->proto != LB_IPPROTO_TCP)
		return pkt->tcp_flags;
	tcp_seg(&s, frame_of(m), pkt);
	return tcp_judge(w, f, idx, dir, m, pkt->l3_off, &s, now);
}

/*
 * A segment of no flow, TCP protocol @p proto and flags @p flags, to a
 * VIP or a SNAT address, of either family: counted as dropped, and
 * whether it gets a RST (RFC 793), at most @p rate per second from
 * bucket @p b, so that an end the dataplane forgot (expiry, restart)
 * learns it at its next segment instead of retransmitting into silence.
 */
static inline bool
no_flow_rst(struct lb_worker *w, uint8_t proto, uint8_t flags, uint32_t b,
	    uint64_t rate, uint64_t now)
{
	w->st.drop[LB_DROP_NO_FLOW]++;
	/* Never a RST for a RST (RFC 793), nor for a SYN: only one to a
	 * SNAT address gets here, and its sender is no client of ours. */
	if (proto != LB_IPPROTO_TCP || (flags & LB_TCP_RST) ||
	    (flags & (LB_TCP_SYN | LB_TCP_ACK)) == LB_TCP_SYN || rate == 0)
		return false;
	if (!rst_token(&w->rst_tb[b], rate, now)) {
		w->st.rst_limited++;
		return false;
	}
	return true;
}

#endif /* LB_WORKER_PRIV_H */
