/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_test_rng.h - the unit tests' random bits: splitmix64.
 *
 * A test file picks its own seed, so that each has a sequence of its own
 * and the same one on every run:
 *
 *	#define CB_TEST_RNG_SEED 0x243f6a8885a308d3ull
 *	#include "cb_test_rng.h"
 *
 * rnd64() returns the next 64 bits; rng_state is the file's state.
 */
#ifndef CB_TEST_RNG_H
#define CB_TEST_RNG_H

#include <stdint.h>

#ifndef CB_TEST_RNG_SEED
#error "define CB_TEST_RNG_SEED before including cb_test_rng.h"
#endif

static uint64_t rng_state = CB_TEST_RNG_SEED;

static inline uint64_t rnd64(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#endif
