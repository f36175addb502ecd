/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The instance's own load: clocks, the CPU work a request asks for, and
 * the figures sent in endpoint-load-metrics (ORCA), measured over a
 * sliding window from the process's CPU clock and its answer count.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "inst.h"

static uint64_t
clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t
lb_inst_mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t
lb_inst_wall_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

/* Keeps the optimiser from dropping the work. */
static volatile uint64_t burn_sink;

void
lb_inst_load_burn(uint64_t ns)
{
	uint64_t end, x = burn_sink | 1;

	if (ns == 0)
		return;
	/*
	 * Thread CPU time, not wall time: a request asks for a fixed
	 * amount of work, so when threads compete for CPUs it takes longer
	 * and its SPL rises, as it would in a real service.
	 */
	end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + ns;
	do {
		for (int i = 0; i < 256; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	} while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end);
	burn_sink = x;
}

#define SAMPLES 64u

struct sample {
	uint64_t t_ns;
	uint64_t cpu_ns;
	uint64_t responses;
};

struct lb_inst_load_sampler {
	uint64_t window_ns;
	unsigned int threads;
	struct sample ring[SAMPLES];
	unsigned int first;
	unsigned int n;
};

struct lb_inst_load_sampler *
lb_inst_load_sampler_create(uint64_t window_ns, unsigned int threads)
{
	struct lb_inst_load_sampler *s;

	if (window_ns == 0 || threads == 0) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->window_ns = window_ns;
	s->threads = threads;
	return s;
}

void
lb_inst_load_sampler_free(struct lb_inst_load_sampler *s)
{
	free(s);
}

static void
publish(_Atomic uint64_t *bits, double v)
{
	uint64_t u;

	memcpy(&u, &v, sizeof(u));
	atomic_store_explicit(bits, u, memory_order_relaxed);
}

double
lb_inst_load_get(const _Atomic uint64_t *bits)
{
	uint64_t u = atomic_load_explicit(bits, memory_order_relaxed);
	double v;

	memcpy(&v, &u, sizeof(v));
	return v;
}

void
lb_inst_load_sample(struct lb_inst_load_sampler *s, struct lb_inst_srv *srv,
		    uint64_t responses)
{
	struct sample now = {
		.t_ns = lb_inst_mono_ns(),
		.cpu_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID),
		.responses = responses,
	};
	const struct sample *old;
	double dt;

	if (s->n == SAMPLES) {
		s->first = (s->first + 1) % SAMPLES;
		s->n--;
	}
	s->ring[(s->first + s->n) % SAMPLES] = now;
	s->n++;
	/* Keep the oldest sample that is still at least a window old. */
	while (s->n > 2 && now.t_ns - s->ring[(s->first + 1) % SAMPLES].t_ns >=
				   s->window_ns) {
		s->first = (s->first + 1) % SAMPLES;
		s->n--;
	}
	old = &s->ring[s->first];
	if (now.t_ns <= old->t_ns)
		return;
	dt = (double)(now.t_ns - old->t_ns);
	publish(&srv->cpu_util_bits,
		(double)(now.cpu_ns - old->cpu_ns) / dt / s->threads);
	publish(&srv->rps_bits,
		(double)(now.responses - old->responses) * 1e9 / dt);
}
