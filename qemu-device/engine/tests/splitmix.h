/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * splitmix.h: the random numbers of the tests that generate their cases from
 * a seed (the engine's differential test, the compiler's differential
 * fuzzer): splitmix64, so that a seed names the same case on every machine.
 */
#ifndef LOOM_ENGINE_TESTS_SPLITMIX_H
#define LOOM_ENGINE_TESTS_SPLITMIX_H

#include <stdbool.h>
#include <stdint.h>

static inline uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform-ish in [0, n); 0 for n = 0. */
static inline unsigned rnd(uint64_t *s, unsigned n)
{
	return n ? (unsigned)(rng_next(s) % n) : 0;
}

static inline bool chance(uint64_t *s, unsigned percent)
{
	return rnd(s, 100) < percent;
}

#endif /* LOOM_ENGINE_TESTS_SPLITMIX_H */
