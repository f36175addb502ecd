/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_ADMIT_CONF_H
#define LB_ADMIT_CONF_H

/**
 * @file
 * A service's admission settings (`service add|set ... admit-*`): which
 * throttle key new work is counted under, the rate and burst of each key's
 * token bucket, how an L4 service rejects, and whether several hosts share
 * the limit through the cluster tier. Types and small inline helpers only,
 * so that the configuration (control/conf/conf.c) and the published table carry
 * them without linking the admission module.
 *
 * Rates are new connections per second on L4 services and requests per
 * second on HTTP services. A rate of 0 turns admission off.
 */

#include <stdint.h>
#include <string.h>

/** What a token bucket is kept for (the seed's throttle key). */
enum lb_admit_key {
	LB_ADMIT_KEY_SVC = 0,	 /**< the service as a whole (default) */
	LB_ADMIT_KEY_CLIENT,	 /**< each client address */
	LB_ADMIT_KEY_PREFIX,	 /**< each client prefix of admit-prefix bits */
	LB_ADMIT_KEY_CLIENT_SVC, /**< each client, per service */
	LB_ADMIT_KEY_PRIO,	 /**< each request priority rank */
	LB_ADMIT_KEY_MAX,
};

/** How an L4 service turns a rejected SYN (or first datagram) away. */
enum lb_admit_reject {
	LB_ADMIT_REJECT_DROP = 0, /**< drop it; the client retransmits */
	LB_ADMIT_REJECT_RST,	  /**< answer a TCP RST (UDP: drop) */
	LB_ADMIT_REJECT_MAX,
};

/** The cluster tier (Redis) and what to do when it cannot be reached. */
enum lb_admit_cluster {
	LB_ADMIT_CLUSTER_OFF = 0, /**< this host's bucket refills itself */
	LB_ADMIT_CLUSTER_OPEN,	  /**< Redis down: refill locally at rate */
	LB_ADMIT_CLUSTER_CLOSED, /**< Redis down: no tokens beyond those held */
	LB_ADMIT_CLUSTER_MAX,
};

/** What a check does when the shared table has no room for its key. */
enum lb_admit_full {
	/** Charge the service's overflow bucket (default): a flood of new
	 * keys shares one key's rate instead of switching the limit off. */
	LB_ADMIT_FULL_OVERFLOW = 0,
	LB_ADMIT_FULL_OPEN,   /**< admit without a token */
	LB_ADMIT_FULL_CLOSED, /**< refuse */
	LB_ADMIT_FULL_MAX,
};

/** What becomes of a gated HTTP flow that can no longer be followed
 * (docs/admission.md): its later requests would escape admission. */
enum lb_admit_unfollow {
	LB_ADMIT_UNF_REFUSE = 0, /**< reset both ways (default) */
	/** Charged as one request; admitted, it goes on unfollowed. */
	LB_ADMIT_UNF_FLOW,
	LB_ADMIT_UNF_MAX,
};

/** Demand interval of the per-worker buckets; a refused key stays
 * throttled on that worker until its interval ends (seed, claim 3). */
#define LB_ADMIT_INTERVAL_NS 10000000ULL
/** Largest rate and burst accepted. */
#define LB_ADMIT_RATE_MAX 100000000ULL
#define LB_ADMIT_BURST_MAX 100000000ULL
#define LB_ADMIT_PREFIX_DEFAULT 24u
/** IPv6 clients' prefix length: a /64 is what one host or one site's
 * link is handed, so it is the unit a source controls. */
#define LB_ADMIT_PREFIX6_DEFAULT 64u

struct lb_admit_conf {
	uint64_t rate;	 /**< tokens per second; 0 = no admission control */
	uint64_t burst;	 /**< bucket capacity; 0 = rate / 10, at least 1 */
	uint8_t key;	 /**< enum lb_admit_key */
	uint8_t prefix;	 /**< LB_ADMIT_KEY_PREFIX: prefix length 1..32 */
	uint8_t reject;	 /**< enum lb_admit_reject */
	uint8_t cluster; /**< enum lb_admit_cluster */
	uint8_t full;	 /**< enum lb_admit_full */
	uint8_t unfollow; /**< enum lb_admit_unfollow */
	/** LB_ADMIT_KEY_PREFIX on IPv6 services: prefix length 1..128;
	 * 0 (a table written without it) means the default. */
	uint8_t prefix6;
};

/** Most client prefixes a service trusts with X-Priority (prio-trust). */
#define LB_ADMIT_TRUST_MAX 4u

/** Clients whose X-Priority is believed; the others get the service's
 * default-priority whatever they send. None by default: clients are not
 * trusted (docs/security.md). */
struct lb_admit_trust {
	uint32_t net[LB_ADMIT_TRUST_MAX]; /**< host order, host bits zero */
	uint8_t len[LB_ADMIT_TRUST_MAX];  /**< prefix lengths, 0..32 */
	uint8_t n;			  /**< prefixes in use; 0: nobody */
};

/** Mask of a prefix of @p len bits (0..32), host order. */
static inline uint32_t
lb_admit_mask(uint8_t len)
{
	return len == 0 ? 0 : UINT32_MAX << (32 - (len > 32 ? 32 : len));
}

/** Whether client @p client (host order) is in one of @p t's prefixes. */
static inline int
lb_admit_trusted(const struct lb_admit_trust *t, uint32_t client)
{
	for (unsigned int i = 0; i < t->n && i < LB_ADMIT_TRUST_MAX; i++)
		if ((client & lb_admit_mask(t->len[i])) == t->net[i])
			return 1;
	return 0;
}

static inline int
lb_admit_trust_eq(const struct lb_admit_trust *a,
		  const struct lb_admit_trust *b)
{
	if (a->n != b->n)
		return 0;
	for (unsigned int i = 0; i < a->n && i < LB_ADMIT_TRUST_MAX; i++)
		if (a->net[i] != b->net[i] || a->len[i] != b->len[i])
			return 0;
	return 1;
}

static const char *const lb_admit_key_names[LB_ADMIT_KEY_MAX] = {
	"svc", "client", "prefix", "client-svc", "prio",
};
static const char *const lb_admit_reject_names[LB_ADMIT_REJECT_MAX] = {
	"drop",
	"rst",
};
static const char *const lb_admit_cluster_names[LB_ADMIT_CLUSTER_MAX] = {
	"off",
	"open",
	"closed",
};

static const char *const lb_admit_full_names[LB_ADMIT_FULL_MAX] = {
	"overflow",
	"open",
	"closed",
};
static const char *const lb_admit_unfollow_names[LB_ADMIT_UNF_MAX] = {
	"refuse",
	"admit-flow",
};

static inline void
lb_admit_conf_default(struct lb_admit_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->prefix = LB_ADMIT_PREFIX_DEFAULT;
	c->prefix6 = LB_ADMIT_PREFIX6_DEFAULT;
}

/** IPv6 address @p ip with the bits after the first @p len (0..128)
 * cleared, into @p out. */
static inline void
lb_admit_mask6(const uint8_t ip[16], unsigned int len, uint8_t out[16])
{
	for (unsigned int i = 0; i < 16; i++) {
		unsigned int bits = len > 8 * i ? len - 8 * i : 0;

		out[i] = bits >= 8 ? ip[i]
				   : (uint8_t)(ip[i] & (0xff00u >> bits));
	}
}

/**
 * The source an IPv6 client @p ip (network order) is admitted as under
 * @p c: the address (`admit-key client`, `client-svc`) or its prefix of
 * prefix6 bits (`prefix`), into @p key with host bits zero.
 * @return its length, or 0 for a key that is no source (svc, prio).
 */
static inline uint8_t
lb_admit_key6(const struct lb_admit_conf *c, const uint8_t ip[16],
	      uint8_t key[16])
{
	unsigned int len;

	switch (c->key) {
	case LB_ADMIT_KEY_CLIENT:
	case LB_ADMIT_KEY_CLIENT_SVC:
		len = 128;
		break;
	case LB_ADMIT_KEY_PREFIX:
		len = c->prefix6 != 0 && c->prefix6 <= 128
			      ? c->prefix6
			      : LB_ADMIT_PREFIX6_DEFAULT;
		break;
	default:
		memset(key, 0, 16);
		return 0;
	}
	lb_admit_mask6(ip, len, key);
	return (uint8_t)len;
}

/** Index of @p s in @p names[0..n-1], or @p n when absent (the check
 * below rejects it), so an unknown word never silently becomes a default. */
static inline uint8_t
lb_admit_word(const char *s, const char *const *names, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n && strcmp(s, names[i]) != 0; i++)
		;
	return (uint8_t)i;
}

/** The burst in force: the configured one, or a tenth of the rate. */
static inline uint64_t
lb_admit_burst(const struct lb_admit_conf *c)
{
	if (c->burst != 0)
		return c->burst;
	return c->rate / 10 > 0 ? c->rate / 10 : 1;
}

/** Smallest burst that keeps a full interval's refill: below it, tokens
 * that arrive while workers sit in their negative cache would be lost at
 * the cap and the service would admit less than its rate. */
static inline uint64_t
lb_admit_burst_min(uint64_t rate)
{
	uint64_t per = 1000000000ULL / LB_ADMIT_INTERVAL_NS;

	return (rate + per - 1) / per;
}

/**
 * Checks @p c. @return NULL when valid, else a message naming the
 * offending option.
 */
static inline const char *
lb_admit_conf_error(const struct lb_admit_conf *c)
{
	if (c->key >= LB_ADMIT_KEY_MAX)
		return "admit-key: expected svc, client, prefix, client-svc or "
		       "prio";
	if (c->reject >= LB_ADMIT_REJECT_MAX)
		return "admit-reject: expected drop or rst";
	if (c->cluster >= LB_ADMIT_CLUSTER_MAX)
		return "admit-cluster: expected off, open or closed";
	if (c->full >= LB_ADMIT_FULL_MAX)
		return "admit-full: expected overflow, open or closed";
	if (c->unfollow >= LB_ADMIT_UNF_MAX)
		return "unfollowable: expected refuse or admit-flow";
	if (c->prefix < 1 || c->prefix > 32)
		return "admit-prefix: out of range 1..32";
	if (c->prefix6 > 128)
		return "admit-prefix6: out of range 1..128";
	if (c->rate > LB_ADMIT_RATE_MAX || c->burst > LB_ADMIT_BURST_MAX)
		return "admit-rate or admit-burst: above 100000000";
	if (c->rate == 0 && (c->burst != 0 || c->cluster != 0))
		return "admit-burst and admit-cluster need an admit-rate";
	if (c->rate != 0 && lb_admit_burst(c) < lb_admit_burst_min(c->rate))
		return "admit-burst: below admit-rate / 100 (10 ms of the "
		       "rate), so tokens would be lost while throttled";
	if (c->cluster != 0 && c->key != LB_ADMIT_KEY_SVC)
		return "admit-cluster: only with admit-key svc";
	return 0;
}

static inline int
lb_admit_conf_eq(const struct lb_admit_conf *a, const struct lb_admit_conf *b)
{
	return a->rate == b->rate && a->burst == b->burst && a->key == b->key &&
	       a->prefix == b->prefix && a->reject == b->reject &&
	       a->cluster == b->cluster && a->full == b->full &&
	       a->unfollow == b->unfollow && a->prefix6 == b->prefix6;
}

#endif /* LB_ADMIT_CONF_H */
