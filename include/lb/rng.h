/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_RNG_H
#define LB_RNG_H

/**
 * @file
 * Injected random numbers for the policy core.
 *
 * Policies never call rand() or read a hidden global: they take a
 * struct lb_rng, so tests can replay exact sequences and each lcore can
 * own an independent stream. The default stream is xoshiro256**, seeded
 * through splitmix64 (both public domain, Blackman and Vigna).
 */

#include <stdint.h>

struct lb_rng {
	/** Returns 64 uniformly distributed bits. */
	uint64_t (*next)(void *ctx);
	void *ctx;
};

/** State of the default generator; one per lcore, never shared. */
struct lb_xoshiro {
	uint64_t s[4];
};

static inline uint64_t
lb_rotl64(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t
lb_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline void
lb_xoshiro_seed(struct lb_xoshiro *x, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		x->s[i] = lb_splitmix64(&seed);
}

static inline uint64_t
lb_xoshiro_next(struct lb_xoshiro *x)
{
	uint64_t *s = x->s;
	uint64_t result = lb_rotl64(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = lb_rotl64(s[3], 45);
	return result;
}

static inline uint64_t
lb_xoshiro_next_cb(void *ctx)
{
	return lb_xoshiro_next(ctx);
}

/** Binds a seeded xoshiro state to the generic interface. */
static inline struct lb_rng
lb_rng_xoshiro(struct lb_xoshiro *x)
{
	struct lb_rng r = { .next = lb_xoshiro_next_cb, .ctx = x };

	return r;
}

static inline uint64_t
lb_rng_u64(const struct lb_rng *r)
{
	return r->next(r->ctx);
}

/**
 * Uniform integer in [0, n) without modulo bias (Lemire's multiply and
 * reject). n must be > 0.
 */
static inline uint64_t
lb_rng_below(const struct lb_rng *r, uint64_t n)
{
	unsigned __int128 m = (unsigned __int128)lb_rng_u64(r) * n;
	uint64_t lo = (uint64_t)m;

	if (lo < n) {
		uint64_t thresh = -n % n;

		while (lo < thresh) {
			m = (unsigned __int128)lb_rng_u64(r) * n;
			lo = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

/** Uniform double in [0, 1) with 53 random bits. */
static inline double
lb_rng_unit(const struct lb_rng *r)
{
	return (double)(lb_rng_u64(r) >> 11) * 0x1.0p-53;
}

#endif /* LB_RNG_H */
