/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * serve_range.h - numbers between bounds as grammar rules (a JSON Schema's
 * minimum, maximum, exclusiveMinimum, exclusiveMaximum): decimal digits
 * split by prefix, as regex generators for numeric ranges do, so that
 * every number the rule takes is in range and every one in range (of at
 * most RANGE_DIGITS digits before the point) is taken.
 */
#ifndef COLIBRI_SERVE_RANGE_H
#define COLIBRI_SERVE_RANGE_H

#include <stdint.h>

struct grammar;

/* The most digits of a number's whole part; the bounds are clamped to ±RANGE_MAX. */
#define RANGE_DIGITS 16
#define RANGE_MAX 9999999999999999ll

/* The integers from @lo to @hi (lo <= hi), as JSON writes them: -?(0|[1-9][0-9]*). */
uint32_t range_integer(struct grammar *g, int64_t lo, int64_t hi);

/*
 * The numbers x with @lo < x (or <= when !@lo_excl) and x < @hi (or <=), the
 * bounds whole, written without an exponent: an integer part and an
 * optional fraction of up to RANGE_DIGITS digits.
 */
uint32_t range_number(struct grammar *g, int64_t lo, int lo_excl, int64_t hi, int hi_excl);

#endif /* COLIBRI_SERVE_RANGE_H */
