/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LB_FUZZ_H
#define LB_FUZZ_H

/*
 * Shared by the libFuzzer targets. An invariant that does not hold is a
 * finding like a crash: FUZZ_CHECK prints it and aborts, which libFuzzer
 * reports with the input that caused it.
 */

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FUZZ_CHECK(cond)                                                     \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "%s:%d: invariant failed: %s\n",     \
				__FILE__, __LINE__, #cond);                  \
			abort();                                             \
		}                                                            \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads input bytes as a little control stream: fuzz_take() hands out the
 * next byte (0 once the input is spent). */
struct fuzz_in {
	const uint8_t *p;
	size_t n;
};

static inline uint8_t
fuzz_take(struct fuzz_in *in)
{
	uint8_t b;

	if (in->n == 0)
		return 0;
	b = *in->p++;
	in->n--;
	return b;
}

/* The next four bytes as a big-endian number (0 bytes once spent). */
static inline uint32_t
fuzz_take32(struct fuzz_in *in)
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++)
		v = v << 8 | fuzz_take(in);
	return v;
}

#endif /* LB_FUZZ_H */
