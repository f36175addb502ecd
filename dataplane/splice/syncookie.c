/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SYN cookies: see dataplane/splice/syncookie.h.
 */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "syncookie.h"

const uint16_t lb_syncookie_mss_tab[LB_SYNCOOKIE_MSS_CLASSES] = {
	536,  /* the default MSS, and old or tunnelled paths */
	1300, /* behind VPNs and tunnels */
	1440, /* PPPoE and the like */
	1460, /* Ethernet */
};

/* Linux's IPv6 classes: an MTU of 1280, 1480, 1500 and 9000 less the
 * headers; no IPv6 path carries less than the first. */
const uint16_t lb_syncookie_mss6_tab[LB_SYNCOOKIE_MSS_CLASSES] = {
	1220,
	1420,
	1440,
	8940,
};

#define MSS_BITS 2
#define COUNT_BITS 2
#define KEY_SHIFT (MSS_BITS + COUNT_BITS)
#define MAC_SHIFT (KEY_SHIFT + 1)
#define MSS_MASK ((1u << MSS_BITS) - 1)
#define COUNT_MASK ((1u << COUNT_BITS) - 1)
#define MAC_MASK (~0u << MAC_SHIFT)

#define TS_MASK ((1u << LB_SYNCOOKIE_TS_BITS) - 1)
#define TS_WSCALE_MASK 0x0fu
#define TS_SACK 0x10u
#define TS_ECN 0x20u
#define WSCALE_MAX 14 /* RFC 7323 section 2.3 */

static inline uint64_t
rotl(uint64_t x, unsigned int b)
{
	return x << b | x >> (64 - b);
}

static inline void
sipround(uint64_t v[4])
{
	v[0] += v[1];
	v[1] = rotl(v[1], 13) ^ v[0];
	v[0] = rotl(v[0], 32);
	v[2] += v[3];
	v[3] = rotl(v[3], 16) ^ v[2];
	v[0] += v[3];
	v[3] = rotl(v[3], 21) ^ v[0];
	v[2] += v[1];
	v[1] = rotl(v[1], 17) ^ v[2];
	v[2] = rotl(v[2], 32);
}

/* Up to 8 bytes at @p p as a little-endian number. */
static inline uint64_t
le64(const uint8_t *p, size_t n)
{
	uint64_t m = 0;

	for (size_t i = 0; i < n; i++)
		m |= (uint64_t)p[i] << (8 * i);
	return m;
}

/* One message word: c = 2 rounds of compression. */
static inline void
absorb(uint64_t v[4], uint64_t m)
{
	v[3] ^= m;
	sipround(v);
	sipround(v);
	v[0] ^= m;
}

uint64_t
lb_siphash24(const uint64_t key[2], const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t v[4] = {
		key[0] ^ 0x736f6d6570736575ull, /* "somepseudorandomly" */
		key[1] ^ 0x646f72616e646f6dull, /* "generatedbytes" */
		key[0] ^ 0x6c7967656e657261ull,
		key[1] ^ 0x7465646279746573ull,
	};
	size_t left = len;

	for (; left >= 8; left -= 8, p += 8)
		absorb(v, le64(p, 8));
	absorb(v, (uint64_t)(len & 0xff) << 56 | le64(p, left));
	/* d = 4 rounds of finalisation. */
	v[2] ^= 0xff;
	for (int i = 0; i < 4; i++)
		sipround(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

void
lb_syncookie_rekey(struct lb_syncookie_secrets *s, const uint64_t key[2])
{
	s->cur = !s->cur;
	s->key[s->cur][0] = key[0];
	s->key[s->cur][1] = key[1];
}

/* 128 bits from the kernel's pool, whole (a signal may cut a read). */
static int
draw(uint64_t key[2])
{
	uint8_t *p = (uint8_t *)key;
	size_t got = 0;

	while (got < 2 * sizeof(key[0])) {
		ssize_t n = getrandom(p + got, 2 * sizeof(key[0]) - got, 0);

		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0)
			got += (size_t)n;
	}
	return 0;
}

int
lb_syncookie_init(struct lb_syncookie_secrets *s)
{
	uint64_t k[2][2];
	int rc;

	if ((rc = draw(k[0])) != 0 || (rc = draw(k[1])) != 0)
		return rc;
	memcpy(s->key, k, sizeof(s->key));
	s->cur = 0;
	return 0;
}

int
lb_syncookie_rotate(struct lb_syncookie_secrets *s)
{
	uint64_t k[2];
	int rc = draw(k);

	if (rc == 0)
		lb_syncookie_rekey(s, k);
	return rc;
}

static void
put32le(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* The bytes a cookie's MAC covers past the addresses: ports, the
 * client's ISN and the counter with the MSS index. */
#define MAC_TAIL 12u
#define MAC_MAX (32u + MAC_TAIL)

/* The connection a cookie is for, as its MAC reads it: the addresses as
 * in the packet (4 or 16 bytes each), then the tail. */
struct mac_in {
	uint8_t m[MAC_MAX];
	uint32_t alen; /* bytes of one address */
	const uint16_t *mss_tab;
};

static void
mac_in4(const struct lb_syncookie_tuple *t, struct mac_in *in)
{
	memcpy(in->m, &t->saddr, 4);
	memcpy(in->m + 4, &t->daddr, 4);
	memcpy(in->m + 8, &t->sport, 2);
	memcpy(in->m + 10, &t->dport, 2);
	put32le(in->m + 12, t->cisn);
	in->alen = 4;
	in->mss_tab = lb_syncookie_mss_tab;
}

static void
mac_in6(const struct lb_syncookie_tuple6 *t, struct mac_in *in)
{
	memcpy(in->m, t->saddr, 16);
	memcpy(in->m + 16, t->daddr, 16);
	memcpy(in->m + 32, &t->sport, 2);
	memcpy(in->m + 34, &t->dport, 2);
	put32le(in->m + 36, t->cisn);
	in->alen = 16;
	in->mss_tab = lb_syncookie_mss6_tab;
}

/*
 * The MAC bits of a cookie: the tuple as in the packet, the client's ISN
 * and the counter with the MSS index (little-endian) under secret
 * @p key; 20 bytes for IPv4, 44 for IPv6.
 */
static uint32_t
mac(const struct lb_syncookie_secrets *s, unsigned int key,
    struct mac_in *in, uint32_t count, uint32_t mss)
{
	uint32_t n = 2 * in->alen + MAC_TAIL;

	put32le(in->m + n - 4, count << MSS_BITS | mss);
	return (uint32_t)(lb_siphash24(s->key[key], in->m, n) >> 32) &
	       MAC_MASK;
}

static uint32_t
counter(const struct lb_syncookie_clock *now)
{
	return (uint32_t)(now->sec / LB_SYNCOOKIE_PERIOD);
}

/* Linux's cookie_init_timestamp(): the options in the low bits, and the
 * time part moved back a step rather than ahead of the clock. */
static uint32_t
ts_encode(const struct lb_syncookie_opts *in, uint32_t ts_now)
{
	uint32_t o = TS_WSCALE_MASK, ts;

	if (in->wscale >= 0)
		o = in->wscale > WSCALE_MAX ? WSCALE_MAX : (uint32_t)in->wscale;
	o |= (in->sack ? TS_SACK : 0) | (in->ecn ? TS_ECN : 0);
	ts = (ts_now & ~TS_MASK) | o;
	/* A TSval of 0 would read as no timestamps on the way back. */
	if ((int32_t)(ts - ts_now) > 0 || ts == 0)
		ts = ((ts_now & ~TS_MASK) - (TS_MASK + 1)) | o;
	return ts;
}

static uint32_t
make(const struct lb_syncookie_secrets *s, struct mac_in *t,
     const struct lb_syncookie_clock *now, const struct lb_syncookie_opts *in,
     uint32_t *tsval)
{
	uint32_t count = counter(now), idx = LB_SYNCOOKIE_MSS_CLASSES - 1;

	while (idx > 0 && in->mss < t->mss_tab[idx])
		idx--;
	*tsval = in->ts ? ts_encode(in, now->ts) : 0;
	return mac(s, s->cur, t, count, idx) | s->cur << KEY_SHIFT |
	       (count & COUNT_MASK) << MSS_BITS | idx;
}

static int
check(const struct lb_syncookie_secrets *s, struct mac_in *t,
      const struct lb_syncookie_clock *now, uint32_t cookie, uint32_t tsecr,
      struct lb_syncookie_opts *out)
{
	uint32_t idx = cookie & MSS_MASK, key = cookie >> KEY_SHIFT & 1;
	uint32_t age = (counter(now) - (cookie >> MSS_BITS)) & COUNT_MASK;
	uint32_t o = tsecr & TS_MASK;

	/* The MAC first, so that "expired" is said of our cookies only; one
	 * older than the counter's two bits can tell reads as forged. */
	if ((cookie & MAC_MASK) != mac(s, key, t, counter(now) - age, idx))
		return LB_SYNCOOKIE_FORGED;
	if (age >= LB_SYNCOOKIE_MAX_AGE)
		return LB_SYNCOOKIE_EXPIRED;
	memset(out, 0, sizeof(*out));
	out->mss = t->mss_tab[idx];
	out->wscale = -1;
	if (tsecr == 0)
		return LB_SYNCOOKIE_OK;
	if ((int32_t)(tsecr - now->ts) > 0)
		return LB_SYNCOOKIE_BAD_TS;
	out->ts = true;
	out->sack = (o & TS_SACK) != 0;
	out->ecn = (o & TS_ECN) != 0;
	/* 4 bits: 0 to 14 are shifts, 15 is none. */
	if ((o & TS_WSCALE_MASK) != TS_WSCALE_MASK)
		out->wscale = (int8_t)(o & TS_WSCALE_MASK);
	return LB_SYNCOOKIE_OK;
}

uint32_t
lb_syncookie_make(const struct lb_syncookie_secrets *s,
		  const struct lb_syncookie_tuple *t,
		  const struct lb_syncookie_clock *now,
		  const struct lb_syncookie_opts *in, uint32_t *tsval)
{
	struct mac_in m;

	mac_in4(t, &m);
	return make(s, &m, now, in, tsval);
}

int
lb_syncookie_check(const struct lb_syncookie_secrets *s,
		   const struct lb_syncookie_tuple *t,
		   const struct lb_syncookie_clock *now, uint32_t cookie,
		   uint32_t tsecr, struct lb_syncookie_opts *out)
{
	struct mac_in m;

	mac_in4(t, &m);
	return check(s, &m, now, cookie, tsecr, out);
}

uint32_t
lb_syncookie_make6(const struct lb_syncookie_secrets *s,
		   const struct lb_syncookie_tuple6 *t,
		   const struct lb_syncookie_clock *now,
		   const struct lb_syncookie_opts *in, uint32_t *tsval)
{
	struct mac_in m;

	mac_in6(t, &m);
	return make(s, &m, now, in, tsval);
}

int
lb_syncookie_check6(const struct lb_syncookie_secrets *s,
		    const struct lb_syncookie_tuple6 *t,
		    const struct lb_syncookie_clock *now, uint32_t cookie,
		    uint32_t tsecr, struct lb_syncookie_opts *out)
{
	struct mac_in m;

	mac_in6(t, &m);
	return check(s, &m, now, cookie, tsecr, out);
}
