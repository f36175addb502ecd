/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_FLOW6_H
#define LB_FLOW6_H

/**
 * @file
 * IPv6 flows in the per-worker flow table, through an indirection for
 * their addresses.
 *
 * An IPv6 flow is an ordinary entry of the flow table (flow_table.h), so
 * its expiry, reclaim, timeouts, counters and every per-flow side record
 * of the worker (TCP tracking, splice, L7) are the IPv4 ones, indexed by
 * the same flow index. What does not fit a 64-byte entry are its four
 * 128-bit addresses: each is folded to 32 bits with a keyed hash and the
 * entry's keys hold the folded addresses, the real ports and protocol,
 * and LB_FLOW_FAM6 in the key's first padding byte, so that a folded key
 * can never equal an IPv4 key. The full addresses sit in a side array,
 * one 64-byte record per flow index (struct lb_flow6_addrs).
 *
 * Exactness. The table admits each key once, so at most one flow holds a
 * folded key. A lookup that finds it compares the full addresses in the
 * side record and reports a miss when they differ; the insert of such a
 * colliding tuple then fails with -EEXIST. Two different tuples therefore
 * never share a flow: a collision refuses a new flow (counted), it never
 * misroutes a packet. The fold is keyed with the table's seed, so clients
 * that do not know it cannot aim at one.
 *
 * IPv4 keys and entries are unchanged: an IPv4 packet's lookup never
 * reads the side array.
 *
 * fnat64. A flow from an IPv6 client to an IPv4 backend has the folded
 * client-side key of an IPv6 flow and the plain IPv4 key of its backend
 * side (mark 0), so the backend's replies, which arrive as IPv4 at an
 * IPv4 SNAT address, find it by the IPv4 lookup with no second index,
 * and a fnat44 flow and a fnat64 flow can never take the same IPv4 SNAT
 * pair. Its side record holds the client side's addresses and, for the
 * backend side, the IPv4 ones as IPv4-mapped IPv6 addresses (::ffff:a.b.c.d),
 * never equal to an IPv6 SNAT address or backend.
 */

#include <stdint.h>
#include <string.h>

#include "lb/flow_table.h"

/** Key padding byte 0 of an IPv6 flow's (folded) keys. */
#define LB_FLOW_FAM6 6

/** One direction's IPv6 5-tuple as in the packet (network byte order). */
struct lb_flow6_tuple {
	uint8_t src[16];
	uint8_t dst[16];
	uint16_t sport;
	uint16_t dport;
	uint8_t proto;
};

/** The full addresses of one IPv6 flow: [direction][0 src, 1 dst]. */
struct lb_flow6_addrs {
	uint8_t a[2][2][16];
};

/** Whether flow @p f is an IPv6 one. */
static inline int
lb_flow_is6(const struct lb_flow *f)
{
	return f->key[LB_FLOW_DIR_ORIG].pad[0] == LB_FLOW_FAM6;
}

/** Whether flow @p f is an fnat64 one: an IPv6 client side and an IPv4
 * backend side. */
static inline int
lb_flow_is64(const struct lb_flow *f)
{
	return f->key[LB_FLOW_DIR_ORIG].pad[0] == LB_FLOW_FAM6 &&
	       f->key[LB_FLOW_DIR_REPLY].pad[0] != LB_FLOW_FAM6;
}

/** Bytes of the side array of a table of @p capacity flows. */
static inline size_t
lb_flow6_mem_size(uint32_t capacity)
{
	return (size_t)capacity * sizeof(struct lb_flow6_addrs);
}

/** An IPv6 address folded to 32 bits under table @p t's seed. */
static inline uint32_t
lb_flow6_fold(const struct lb_flow_table *t, const uint8_t a[16])
{
	uint64_t w[2];

	memcpy(w, a, sizeof(w));
	/* Another seed than the table's key hash, so the fold and the
	 * slot of a key are not the same function of the address. */
	return (uint32_t)(lb_flow_mix64(lb_flow_mix64(w[0] ^ t->seed ^
						       0x9e3779b97f4a7c15ULL) ^
					w[1]) >> 32);
}

/** The folded table key of @p tu. */
static inline void
lb_flow6_key(const struct lb_flow_table *t, struct lb_flow_key *k,
	     const struct lb_flow6_tuple *tu)
{
	lb_flow_key_set_mark(k, lb_flow6_fold(t, tu->src),
			     lb_flow6_fold(t, tu->dst), tu->sport, tu->dport,
			     tu->proto, LB_FLOW_FAM6);
}

/**
 * Looks up @p tu whose folded key @p k has hash @p hash (lb_flow_hash()
 * with the table's seed).
 * @return the flow index with @p *dir set, or LB_FLOW_NONE (a miss, or
 * a flow with the same folded key but other addresses)
 */
static inline uint32_t
lb_flow6_lookup_hash(const struct lb_flow_table *t,
		     const struct lb_flow6_addrs *side,
		     const struct lb_flow6_tuple *tu,
		     const struct lb_flow_key *k, uint64_t hash,
		     enum lb_flow_dir *dir)
{
	uint32_t idx = lb_flow_lookup_hash(t, k, hash, dir);
	const uint8_t(*a)[16];

	if (idx == LB_FLOW_NONE)
		return idx;
	a = side[idx].a[*dir];
	if (memcmp(a[0], tu->src, 16) != 0 || memcmp(a[1], tu->dst, 16) != 0) {
		*dir = LB_FLOW_DIR_ORIG;
		return LB_FLOW_NONE;
	}
	return idx;
}

/** lb_flow6_lookup_hash() that folds and hashes @p tu itself. */
static inline uint32_t
lb_flow6_lookup(const struct lb_flow_table *t,
		const struct lb_flow6_addrs *side,
		const struct lb_flow6_tuple *tu, enum lb_flow_dir *dir)
{
	struct lb_flow_key k;

	lb_flow6_key(t, &k, tu);
	return lb_flow6_lookup_hash(t, side, tu, &k, lb_flow_hash(t->seed, &k),
				    dir);
}

/**
 * Inserts an IPv6 flow (lb_flow_insert() with the folded keys) and
 * records its addresses in @p side.
 * @return the flow index, or lb_flow_insert()'s errors; -EEXIST also
 * when another tuple's flow holds the same folded key
 */
int lb_flow6_insert(struct lb_flow_table *t, struct lb_flow6_addrs *side,
		    const struct lb_flow6_tuple *orig,
		    const struct lb_flow6_tuple *reply, uint16_t svc,
		    uint32_t be, uint64_t now_ns);

/**
 * Inserts an fnat64 flow: client side @p orig (folded as an IPv6 flow's),
 * backend side the IPv4 tuple @p src:@p sport -> @p dst:@p dport
 * (network order, the plain IPv4 key), and records the addresses in
 * @p side, the IPv4 ones mapped.
 * @return as lb_flow6_insert()
 */
int lb_flow64_insert(struct lb_flow_table *t, struct lb_flow6_addrs *side,
		     const struct lb_flow6_tuple *orig, uint32_t src,
		     uint32_t dst, uint16_t sport, uint16_t dport, uint16_t svc,
		     uint32_t be, uint64_t now_ns);

/** @p ip4 (network order) as the IPv4-mapped IPv6 address ::ffff:ip4. */
static inline void
lb_flow6_mapped(uint8_t out[16], uint32_t ip4)
{
	memset(out, 0, 10);
	out[10] = 0xff;
	out[11] = 0xff;
	memcpy(out + 12, &ip4, 4);
}

/**
 * Whether a live flow holds tuple @p tu (lb_flow_holds() on its folded
 * key): a flow with the same folded key and other addresses counts as
 * holding it, which a SNAT allocator reads as "taken, try another port".
 */
int lb_flow6_holds(const struct lb_flow_table *t,
		   const struct lb_flow6_tuple *tu);

/** Fills @p tu from flow @p idx's direction @p dir (its full addresses). */
void lb_flow6_tuple_of(const struct lb_flow_table *t,
		       const struct lb_flow6_addrs *side, uint32_t idx,
		       enum lb_flow_dir dir, struct lb_flow6_tuple *tu);

#endif /* LB_FLOW6_H */
