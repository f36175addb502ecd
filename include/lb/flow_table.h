/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_FLOW_TABLE_H
#define LB_FLOW_TABLE_H

/**
 * @file
 * Per-worker flow table of the full-NAT path.
 *
 * A flow client_ip:cport -> vip:vport is rewritten to snat_ip:sport ->
 * be_ip:bport, and its replies be_ip:bport -> snat_ip:sport back to
 * vip:vport -> client_ip:cport. The table therefore indexes every flow
 * twice: by its client-side key (LB_FLOW_DIR_ORIG, as the client's packets
 * arrive) and by its backend-side key (LB_FLOW_DIR_REPLY, as the backend's
 * packets arrive). One lookup returns the flow and the direction that
 * matched.
 *
 * Layout. The whole table is one block of caller-provided memory holding a
 * header, an array of 64-byte flow entries and an array of 8-byte index
 * slots. Entries and slots refer to each other by index, never by pointer,
 * so the block can live in a hugepage memzone that a secondary process maps
 * at another address and reads (for example to count flows per backend).
 * There is exactly one writer: the worker that owns the table.
 *
 * Index. Open addressing with linear probing over a power-of-two slot array
 * of at least four slots per flow (two keys per flow, so the load factor is
 * at most 1/2 when the table is full). A slot holds 32 bits of the key's
 * hash and a reference (flow index << 1 | direction); probing starts at
 * the slot given by the low bits of those 32 bits, compares the stored hash
 * bits first and reads a flow entry only when they match. At load 1/2 a
 * hit probes 1.5 slots and a miss 2.5 slots on average, eight slots sharing
 * a cache line, so a hit costs one slot line and one entry line. Deletion
 * shifts the following slots back instead of leaving tombstones, so
 * lookups never slow down as flows come and go.
 *
 * Hash. lb_flow_hash(): the 16-byte key is read as two 64-bit words w0, w1
 * and hashed as mix(mix(w0 ^ seed) ^ w1), where mix is the 64-bit
 * xor-shift-multiply finaliser also used by splitmix64 (a bijection of 64
 * bits). The per-table seed keeps the bucket of a key unpredictable to
 * clients that choose their addresses and ports.
 *
 * Capacity. A fixed number of flows chosen at init. When every entry is in
 * use, a new flow is refused with -ENOSPC and counted; existing flows are
 * never evicted to make room.
 *
 * Expiry. Each flow sits in one doubly-linked list (by index) per pair of
 * state and timeout class, and every flow of a list has the same timeout.
 * A class is a set of timeouts, one per state: class 0 holds the table's
 * own (lb_flow_table_init(), lb_flow_set_timeout()), and each service is
 * mapped to one of the LB_FLOW_CLASSES - 1 others by
 * lb_flow_svc_timeouts(), services with equal timeouts sharing one. A
 * packet moves its flow to the tail of the list of its state and its
 * service's class, so each list stays ordered by last-seen time and
 * lb_flow_expire() only ever looks at list heads: its work is bounded by
 * the number of flows it expires plus one check per list
 * (LB_FLOW_NB_LISTS), whatever the size of the table. The table also
 * keeps the earliest tick at which any list head can be due, so a call
 * when nothing is due costs one compare: a worker calls it every poll,
 * and the flows it expires per poll follow the backlog of timed-out ones
 * up to the caller's bound. A flow stores no
 * class: it is its service's, read from the table's map, and the list a
 * flow leaves is found, when it heads or ends one, among the ends of its
 * state's lists (one compare per class), so a flow keeps its 64 bytes.
 *
 * Time is kept per flow in 32-bit ticks of 2^20 ns (about 1.05 ms), so a
 * flow fits one cache line; a timeout is rounded up to whole ticks, so a
 * flow expires within about 1 ms after its timeout. Tick arithmetic wraps
 * after about 52 days and is compared as a signed difference, which stays
 * exact as long as lb_flow_expire() runs at least once every 24 days (the
 * longest timeout is 7 days).
 *
 * Reclaim. A flow past its timeout is dead even before expiry reaches
 * it: lb_flow_holds() does not count it as holding its keys, and
 * lb_flow_insert() expires it on the spot (through the callback given
 * to lb_flow_set_reaper()) when a new flow wants one of its keys, or
 * wants an entry while the table is full. A backlog of expiry therefore
 * never blocks a SNAT port or an entry.
 */

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/** Index meaning "no flow" (lookup miss, end of a list). */
#define LB_FLOW_NONE UINT32_MAX
/** Largest capacity accepted by lb_flow_table_init(): 16M flows. */
#define LB_FLOW_MAX_CAPACITY (1u << 24)
/** Index slots per flow, rounded up to a power of two (load <= 1/2). */
#define LB_FLOW_SLOTS_PER_FLOW 4u
/** A tick is 2^LB_FLOW_TICK_SHIFT nanoseconds. */
#define LB_FLOW_TICK_SHIFT 20
/** Longest accepted timeout: 7 days. */
#define LB_FLOW_TIMEOUT_MAX_NS (7ULL * 86400 * 1000000000ULL)
/** Version of the memory layout, checked by lb_flow_table_check(). */
#define LB_FLOW_TABLE_VERSION 4u
/** Timeout classes of a table: class 0 and one per distinct service set. */
#define LB_FLOW_CLASSES 16u
/** Services the table maps to a class; any higher index takes class 0. */
#define LB_FLOW_MAX_SVCS 256u
#define LB_FLOW_TABLE_MAGIC 0x4c42464cu /* "LBFL" */

#define LB_FLOW_PROTO_TCP 6
#define LB_FLOW_PROTO_UDP 17

/**
 * A one-way 5-tuple as it sits in the packet: addresses and ports in
 * network byte order. The padding must be zero (lb_flow_key_set() does
 * it) because keys are hashed and compared as 16 bytes; only its first
 * byte may be 6, which marks an IPv6 flow's folded key (flow6.h).
 */
struct lb_flow_key {
	uint32_t src;
	uint32_t dst;
	uint16_t sport;
	uint16_t dport;
	uint8_t proto;
	uint8_t pad[3];
};

/** Which of a flow's two keys a packet matched. */
enum lb_flow_dir {
	LB_FLOW_DIR_ORIG = 0,  /**< client -> vip (client-side key) */
	LB_FLOW_DIR_REPLY = 1, /**< backend -> snat address (backend side) */
};

/**
 * Flow states. Each state is also a timeout class with its own timeout and
 * its own expiry list. TCP flows start in SYN_SENT, UDP flows in
 * UDP_UNREPLIED and move to UDP with their backend's first datagram, and
 * any other protocol (e.g. ICMP echo) is in OTHER. UDP_UNREPLIED's short
 * timeout keeps datagrams that nobody answers (spoofed or scanning
 * sources) from holding a flow and its SNAT port for UDP's long one.
 */
enum lb_flow_state {
	LB_FLOW_SYN_SENT = 0, /**< client SYN seen */
	LB_FLOW_SYN_RECV,     /**< backend SYN-ACK seen */
	LB_FLOW_ESTABLISHED,  /**< client ACK of the SYN-ACK seen */
	LB_FLOW_CLOSING,      /**< FIN seen in one direction */
	LB_FLOW_TIME_WAIT,    /**< FIN seen in both directions */
	LB_FLOW_CLOSED,       /**< RST seen */
	LB_FLOW_UDP,          /**< UDP, the backend answered */
	LB_FLOW_OTHER,        /**< other protocols */
	LB_FLOW_UDP_UNREPLIED, /**< UDP, nothing from the backend yet */
	LB_FLOW_NB_STATES,
	LB_FLOW_FREE = 0xff, /**< entry not in use */
};

/** Expiry lists: list c * LB_FLOW_NB_STATES + s holds the flows in state
 * s of class c, so the lists of class 0 are numbered as the states. */
#define LB_FLOW_NB_LISTS (LB_FLOW_CLASSES * LB_FLOW_NB_STATES)

/** Flow flag bits: the low nibble is the table's, the high the caller's. */
#define LB_FLOW_F_FIN_ORIG 0x01  /**< client sent FIN */
#define LB_FLOW_F_FIN_REPLY 0x02 /**< backend sent FIN */
#define LB_FLOW_F_USER_MASK 0xf0 /**< free for the caller */

/**
 * One flow: 64 bytes, one cache line. Both keys are stored whole so a
 * lookup compares 16 bytes and the NAT rewrite of either direction is the
 * reverse of the other direction's key. Per-direction packet counters fit;
 * byte counters do not and belong to the caller's per-backend counters.
 */
struct lb_flow {
	struct lb_flow_key key[2]; /**< [LB_FLOW_DIR_ORIG], [..._REPLY] */
	uint32_t prev;             /**< expiry list links (indices) */
	uint32_t next;             /**< (free list link when free) */
	uint32_t last_seen;        /**< ticks of the last packet */
	uint32_t pkts[2];          /**< packets per direction (wrap) */
	uint32_t l7;               /**< caller's per-flow L7 state slot */
	uint32_t be;               /**< backend index */
	uint16_t svc;              /**< service index */
	uint8_t state;             /**< enum lb_flow_state */
	uint8_t flags;             /**< LB_FLOW_F_* */
};

/** Timeout of each state, in nanoseconds. */
struct lb_flow_timeouts {
	uint64_t ns[LB_FLOW_NB_STATES];
};

/** Sets of default timeouts. */
enum lb_flow_timeout_preset {
	/** Linux IPVS defaults (the default): SYN_SENT 120 s, SYN_RECV 60 s,
	 * ESTABLISHED 900 s, CLOSING 120 s, TIME_WAIT 120 s, CLOSED 10 s,
	 * UDP 300 s; OTHER 30 s (Linux conntrack ICMP); UDP_UNREPLIED 30 s
	 * (Linux conntrack's UDP without a reply; IPVS has no such state). */
	LB_FLOW_TIMEOUTS_IPVS = 0,
	/** DPVS defaults, far shorter for the handshake and the close:
	 * SYN_SENT 3 s, SYN_RECV 30 s, ESTABLISHED 90 s, CLOSING 7 s,
	 * TIME_WAIT 7 s, CLOSED 3 s, UDP 300 s; OTHER 30 s, UDP_UNREPLIED
	 * 30 s as for IPVS. */
	LB_FLOW_TIMEOUTS_DPVS,
};

/** Counters; read by other processes, written only by the owner. */
struct lb_flow_stats {
	uint64_t flows;   /**< flows in the table now */
	uint64_t inserts; /**< flows inserted */
	uint64_t refused; /**< inserts refused because the table was full */
	uint64_t dup;     /**< inserts refused because a key existed */
	uint64_t deleted; /**< flows removed by lb_flow_delete() */
	uint64_t expired[LB_FLOW_NB_STATES]; /**< flows expired per class */
	/** Of the expired, those expired on demand by lb_flow_insert(): a
	 * new flow wanted their key or their entry. */
	uint64_t reclaimed;
	/** Calls of lb_flow_expire() that found flows due. */
	uint64_t expire_passes;
};

/** Called by lb_flow_expire() for each flow, before it is freed. */
typedef void (*lb_flow_expire_fn)(uint32_t idx, const struct lb_flow *f,
				  void *ctx);

/** Header at the start of the table's memory block. */
struct lb_flow_table {
	/* Read by every lookup. */
	uint64_t seed;
	uint32_t capacity;  /**< flow entries */
	uint32_t slot_mask; /**< index slots - 1 */
	uint64_t flows_off; /**< byte offset of the entries */
	uint64_t slots_off; /**< byte offset of the index slots */
	uint64_t mem_size;  /**< bytes of the whole block */
	uint32_t magic;
	uint32_t version;
	/* Written on inserts, state changes and expiry. */
	uint32_t timeout[LB_FLOW_NB_LISTS]; /**< in ticks, per list */
	uint32_t head[LB_FLOW_NB_LISTS];    /**< oldest flow of each list */
	uint32_t tail[LB_FLOW_NB_LISTS];    /**< newest flow of each list */
	uint32_t free_head;
	uint32_t expire_from; /**< list the next expiry pass starts at */
	/** When due_known, no list head is due before this tick (see
	 * lb_flow_expire()); a new table and changed timeouts clear it. */
	uint32_t next_due;
	uint32_t due_known;
	/** The owner's clock: the tick of its last lb_flow_clock(),
	 * lb_flow_expire() or lb_flow_insert(). */
	uint32_t now;
	/** What lb_flow_insert() calls for a flow it expires on demand; the
	 * owner's pointers, meaningless in any other process. */
	lb_flow_expire_fn reaper;
	void *reaper_ctx;
	uint8_t svc_class[LB_FLOW_MAX_SVCS]; /**< timeout class by service */
	struct lb_flow_stats stats;
};

/** Fills @p to with one of the presets; -EINVAL for an unknown preset. */
int lb_flow_timeouts_preset(struct lb_flow_timeouts *to,
			    enum lb_flow_timeout_preset p);

/**
 * Bytes needed for a table of @p capacity flows (header, entries, index),
 * or 0 if @p capacity is 0 or above LB_FLOW_MAX_CAPACITY.
 */
size_t lb_flow_table_mem_size(uint32_t capacity);

/**
 * Prepares @p mem, lb_flow_table_mem_size(@p capacity) bytes aligned to 64,
 * as an empty table.
 * @param to timeouts, or NULL for LB_FLOW_TIMEOUTS_IPVS
 * @param seed hash seed; draw it at random for each table
 * @return 0, -EINVAL (NULL or misaligned memory, bad capacity or zero
 * timeout) or -ERANGE (a timeout above LB_FLOW_TIMEOUT_MAX_NS)
 */
int lb_flow_table_init(void *mem, uint32_t capacity,
		       const struct lb_flow_timeouts *to, uint64_t seed);

/** Allocates and initialises a table; NULL with errno set on failure. */
struct lb_flow_table *lb_flow_table_create(uint32_t capacity,
					   const struct lb_flow_timeouts *to,
					   uint64_t seed);

void lb_flow_table_free(struct lb_flow_table *t);

/**
 * Checks that the @p len bytes at @p mem hold a table of this layout
 * version, for a process that attaches to it.
 * @return 0, -EINVAL (too short, bad magic or inconsistent sizes) or
 * -EPROTO (another layout version)
 */
int lb_flow_table_check(const void *mem, size_t len);

/**
 * Changes the table's own timeout (class 0) of one state; flows already
 * under it follow the new value at the next lb_flow_expire().
 * @return 0, -EINVAL (NULL, bad state, zero) or -ERANGE (too long)
 */
int lb_flow_set_timeout(struct lb_flow_table *t, enum lb_flow_state s,
			uint64_t ns);

/** The table's own timeout of a state in ns (rounded up to ticks), or 0. */
uint64_t lb_flow_timeout_ns(const struct lb_flow_table *t,
			    enum lb_flow_state s);

/**
 * Maps services 0 .. @p nb_svc - 1 to timeout classes: service i gets the
 * timeouts @p to[i] (all zero: the table's own, class 0); services from
 * @p nb_svc on get class 0. Services with equal timeouts share a class. A
 * service keeps its class when its timeouts did not change; when they
 * did and no other service keeps that class, the class takes the new
 * values, so the service's idle flows follow them at once. Otherwise its
 * flows move to the new class with their next packet and expire under the
 * old values until then. When more than LB_FLOW_CLASSES - 1 distinct sets
 * are asked for, the extra services share the class with the longest
 * ESTABLISHED timeout (never the shortest: an idle connection is never cut
 * earlier than asked). Not for the packet path: O(@p nb_svc x classes).
 * @return the number of services that had to share a class with other
 * timeouts (0 normally), -EINVAL (NULL, a zero timeout in a set that is
 * not all zero) or -ERANGE (a timeout above LB_FLOW_TIMEOUT_MAX_NS); on an
 * error nothing changes.
 */
int lb_flow_svc_timeouts(struct lb_flow_table *t,
			 const struct lb_flow_timeouts *to, uint32_t nb_svc);

/** Timeout in ns (rounded up to ticks) that a flow of service @p svc in
 * state @p s is held to now, or 0 for a bad state. */
uint64_t lb_flow_svc_timeout_ns(const struct lb_flow_table *t, uint32_t svc,
				enum lb_flow_state s);

/**
 * Inserts a flow under both its keys, in its protocol's initial state,
 * last seen at @p now_ns, with zero counters, flags and L7 slot.
 * Call lb_flow_touch() for its first packet as for every other one.
 * A flow timed out by @p now_ns that holds either key, or, when the
 * table is full, a timed-out flow (the oldest of its list), is expired
 * first through the reaper (lb_flow_set_reaper()), if one is set, and
 * counted in stats.expired and stats.reclaimed: a caller must not keep a
 * pointer to a timed-out flow across an insert. Also sets the owner's
 * clock.
 * @param orig client-side key (client -> vip)
 * @param reply backend-side key (backend -> snat address), same protocol
 * @return the flow index (>= 0), -ENOSPC when the table is full (counted
 * in stats.refused), -EEXIST when either key is present (stats.dup), or
 * -EINVAL (NULL, protocols differ, equal keys, key padding other than
 * flow6.h's mark)
 */
int lb_flow_insert(struct lb_flow_table *t, const struct lb_flow_key *orig,
		   const struct lb_flow_key *reply, uint16_t svc, uint32_t be,
		   uint64_t now_ns);

/**
 * Removes flow @p idx from the index and its expiry list and frees it.
 * @return 0, -EINVAL (NULL, index out of range) or -ENOENT (not in use)
 */
int lb_flow_delete(struct lb_flow_table *t, uint32_t idx);

/**
 * Accounts one packet of flow @p idx in direction @p dir: counts it, sets
 * its last-seen time, advances the TCP state with @p tcp_flags
 * (LB_TCP_* of pkt_parse.h; ignored for other protocols) or, for a UDP
 * flow, to UDP on its first LB_FLOW_DIR_REPLY datagram, and moves the
 * flow to the tail of its (possibly new) state's expiry list. O(1).
 * @return the new state (>= 0), -EINVAL (NULL, bad direction, index out
 * of range) or -ENOENT (not in use)
 */
int lb_flow_touch(struct lb_flow_table *t, uint32_t idx,
		  enum lb_flow_dir dir, uint8_t tcp_flags, uint64_t now_ns);

/**
 * The state machine alone (TCP's, and UDP's one step): advances
 * @p f->state and its FIN flags for one packet in direction @p dir with
 * @p tcp_flags, and returns the new state. It does not move the flow between expiry lists, so on a flow
 * inside a table use lb_flow_touch(). Transitions:
 * - RST in either direction: CLOSED;
 * - client SYN without ACK in TIME_WAIT or CLOSED: SYN_SENT with the FIN
 *   flags cleared (a new connection reusing the 5-tuple); otherwise a
 *   retransmitted SYN changes nothing;
 * - backend SYN-ACK in SYN_SENT: SYN_RECV;
 * - client ACK in SYN_RECV: ESTABLISHED;
 * - FIN: records the direction; CLOSING after the first direction's FIN,
 *   TIME_WAIT once both directions sent one (TIME_WAIT and CLOSED stay);
 * - a UDP_UNREPLIED flow's first packet in LB_FLOW_DIR_REPLY: UDP;
 * - anything else, and any other packet of a UDP or OTHER flow: unchanged.
 * @return the new state, or -EINVAL (NULL, bad direction, free entry)
 */
int lb_flow_tcp_advance(struct lb_flow *f, enum lb_flow_dir dir,
			uint8_t tcp_flags);

/**
 * Expires flows whose timeout has passed since their last packet, oldest
 * first in each list, at most @p max of them. For each, calls
 * @p cb (if not NULL) before the flow is freed, so the caller can release
 * its SNAT port; @p cb must not modify the table. Successive calls start
 * at successive lists so that no list starves another. When no list head
 * can be due yet it returns at once (one compare), so it can run every
 * poll: its work then follows the backlog of timed-out flows, bounded by
 * @p max. Also sets the owner's clock (lb_flow_clock()).
 * @return the number of flows expired
 */
unsigned int lb_flow_expire(struct lb_flow_table *t, uint64_t now_ns,
			    unsigned int max, lb_flow_expire_fn cb, void *ctx);

/**
 * Sets the owner's clock to @p now_ns, the time
 * lb_flow_holds() judges flows by. Once per poll, before packets.
 */
static inline void
lb_flow_clock(struct lb_flow_table *t, uint64_t now_ns)
{
	t->now = (uint32_t)(now_ns >> LB_FLOW_TICK_SHIFT);
}

/**
 * Whether lb_flow_expire() at @p now_ns has flows to look at: false when
 * no list head can be due yet. For a caller that measures the passes
 * that do work and skips the rest for the price of this compare.
 */
static inline int
lb_flow_expire_due(const struct lb_flow_table *t, uint64_t now_ns)
{
	uint32_t tk = (uint32_t)(now_ns >> LB_FLOW_TICK_SHIFT);

	return !t->due_known || (int32_t)(tk - t->next_due) >= 0;
}

/**
 * Sets what lb_flow_insert() calls for a flow it expires on demand (the
 * same contract as lb_flow_expire()'s @p cb). With none set (NULL, the
 * default), lb_flow_insert() expires nothing and treats a timed-out
 * holder of a key as alive (-EEXIST), a full table as full (-ENOSPC).
 */
void lb_flow_set_reaper(struct lb_flow_table *t, lb_flow_expire_fn cb,
			void *ctx);

/**
 * Whether a live flow holds key @p k: one that has it and has not timed
 * out by the owner's clock (lb_flow_clock()). A timed-out flow that
 * expiry has not reached yet holds nothing: lb_flow_insert() takes its
 * key over. For a SNAT allocator's "is this pair taken" question.
 */
int lb_flow_holds(const struct lb_flow_table *t, const struct lb_flow_key *k);

/**
 * Counts flows timed out by @p now_ns that expiry has not reached yet, at
 * most @p max of them, oldest first in each list, calling @p fn (if not
 * NULL) for each; nothing changes. Its work is the count plus one check
 * per list, so callers bound it with @p max.
 * @return the number counted (at most @p max)
 */
unsigned int lb_flow_overdue(const struct lb_flow_table *t, uint64_t now_ns,
			     unsigned int max, lb_flow_expire_fn fn,
			     void *ctx);

/**
 * Index of the first flow in use at or after @p pos, or LB_FLOW_NONE: for
 * display and draining (O(capacity) over a full pass, never per packet).
 */
uint32_t lb_flow_next(const struct lb_flow_table *t, uint32_t pos);

/** Copies the counters. */
void lb_flow_stats_get(const struct lb_flow_table *t,
		       struct lb_flow_stats *st);

/** Short stable name of a state ("established", "free", "?"). */
const char *lb_flow_state_name(unsigned int state);

/**
 * Fills a key with padding byte 0 set to @p mark (0, or flow6.h's mark of
 * an IPv6 flow); addresses and ports in network byte order. The key is
 * written as the two 64-bit words it is hashed and compared as: written
 * field by field, a lookup that reads it back at once (an out-of-line
 * lb_flow_insert(), for instance) waits for the narrow stores to reach
 * the cache, since a load cannot take its bytes from several of them.
 */
static inline void
lb_flow_key_set_mark(struct lb_flow_key *k, uint32_t src, uint32_t dst,
		     uint16_t sport, uint16_t dport, uint8_t proto,
		     uint8_t mark)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t w[2] = {
		(uint64_t)dst << 32 | src,
		(uint64_t)mark << 40 | (uint64_t)proto << 32 |
			(uint32_t)dport << 16 | sport,
	};

	memcpy(k, w, sizeof(w));
#else
	memset(k, 0, sizeof(*k));
	k->src = src;
	k->dst = dst;
	k->sport = sport;
	k->dport = dport;
	k->proto = proto;
	k->pad[0] = mark;
#endif
}

/** Fills a key; addresses and ports in network byte order. */
static inline void
lb_flow_key_set(struct lb_flow_key *k, uint32_t src, uint32_t dst,
		uint16_t sport, uint16_t dport, uint8_t proto)
{
	lb_flow_key_set_mark(k, src, dst, sport, dport, proto, 0);
}

/** The key of packets flowing the other way. */
static inline void
lb_flow_key_reverse(struct lb_flow_key *out, const struct lb_flow_key *in)
{
	lb_flow_key_set(out, in->dst, in->src, in->dport, in->sport,
			in->proto);
}

static inline uint64_t
lb_flow_mix64(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/** The table's hash of a key (see the file comment). */
static inline uint64_t
lb_flow_hash(uint64_t seed, const struct lb_flow_key *k)
{
	uint64_t w[2];

	memcpy(w, k, sizeof(w));
	return lb_flow_mix64(lb_flow_mix64(w[0] ^ seed) ^ w[1]);
}

/** Bits of the hash stored in a slot; their low bits pick the slot. */
static inline uint32_t
lb_flow_sig(uint64_t hash)
{
	return (uint32_t)(hash >> 32);
}

static inline struct lb_flow *
lb_flow_entries(const struct lb_flow_table *t)
{
	return (struct lb_flow *)((uintptr_t)t + t->flows_off);
}

static inline uint64_t *
lb_flow_slots(const struct lb_flow_table *t)
{
	return (uint64_t *)((uintptr_t)t + t->slots_off);
}

/** Flow @p idx if it is in use, else NULL. */
static inline struct lb_flow *
lb_flow_get(const struct lb_flow_table *t, uint32_t idx)
{
	struct lb_flow *f;

	if (t == NULL || idx >= t->capacity)
		return NULL;
	f = &lb_flow_entries(t)[idx];
	return f->state == LB_FLOW_FREE ? NULL : f;
}

/** Prefetches the index slot a lookup of @p hash starts at. */
static inline void
lb_flow_prefetch(const struct lb_flow_table *t, uint64_t hash)
{
	__builtin_prefetch(&lb_flow_slots(t)[lb_flow_sig(hash) & t->slot_mask]);
}

/**
 * The flow a lookup of @p hash would most likely find: the first one in
 * its slot run whose stored hash bits match, keys not compared (that is
 * lb_flow_lookup_hash()'s job). For prefetching the flow's own state a
 * burst ahead; @return a flow index or LB_FLOW_NONE.
 */
static inline uint32_t
lb_flow_peek(const struct lb_flow_table *t, uint64_t hash)
{
	const uint64_t *slot = lb_flow_slots(t);
	uint32_t sig = lb_flow_sig(hash);

	for (uint32_t i = sig & t->slot_mask;; i = (i + 1) & t->slot_mask) {
		uint64_t s = slot[i];

		if (s == UINT64_MAX)
			return LB_FLOW_NONE;
		if ((uint32_t)(s >> 32) == sig)
			return (uint32_t)s >> 1;
	}
}

static inline int
lb_flow_key_eq(const struct lb_flow_key *a, const struct lb_flow_key *b)
{
	uint64_t x[2], y[2];

	memcpy(x, a, sizeof(x));
	memcpy(y, b, sizeof(y));
	return ((x[0] ^ y[0]) | (x[1] ^ y[1])) == 0;
}

/**
 * Looks up @p k whose hash is @p hash (from lb_flow_hash() with the
 * table's seed), e.g. computed ahead for a burst with lb_flow_prefetch().
 * @return the flow index with @p *dir set to the direction that matched,
 * or LB_FLOW_NONE (with @p *dir set to LB_FLOW_DIR_ORIG)
 */
static inline uint32_t
lb_flow_lookup_hash(const struct lb_flow_table *t, const struct lb_flow_key *k,
		    uint64_t hash, enum lb_flow_dir *dir)
{
	const uint64_t *slot;
	const struct lb_flow *flows;
	uint32_t sig = lb_flow_sig(hash);
	uint32_t mask;

	if (dir == NULL)
		return LB_FLOW_NONE;
	*dir = LB_FLOW_DIR_ORIG;
	if (t == NULL || k == NULL)
		return LB_FLOW_NONE;
	slot = lb_flow_slots(t);
	flows = lb_flow_entries(t);
	mask = t->slot_mask;
	/* Terminates: at most half of the slots are ever in use. */
	for (uint32_t i = sig & mask;; i = (i + 1) & mask) {
		uint64_t s = slot[i];
		uint32_t ref = (uint32_t)s;

		if (s == UINT64_MAX)
			return LB_FLOW_NONE;
		if ((uint32_t)(s >> 32) == sig &&
		    lb_flow_key_eq(&flows[ref >> 1].key[ref & 1], k)) {
			*dir = (enum lb_flow_dir)(ref & 1);
			return ref >> 1;
		}
	}
}

/** lb_flow_lookup_hash() that hashes @p k itself. */
static inline uint32_t
lb_flow_lookup(const struct lb_flow_table *t, const struct lb_flow_key *k,
	       enum lb_flow_dir *dir)
{
	if (t == NULL || k == NULL) {
		if (dir != NULL)
			*dir = LB_FLOW_DIR_ORIG;
		return LB_FLOW_NONE;
	}
	return lb_flow_lookup_hash(t, k, lb_flow_hash(t->seed, k), dir);
}

#endif /* LB_FLOW_TABLE_H */
