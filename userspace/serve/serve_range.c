// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * serve_range.c - numbers between bounds as grammar rules (serve_range.h).
 *
 * The whole numbers from a to b of one length n are: a's first digit then
 * the rest from a's rest up to 9...9, the digits strictly between the two
 * first digits then any n - 1 digits, and b's first digit then the rest
 * from 0...0 up to b's rest; lengths from a's to b's each get such a span.
 * A number with a fraction is in range when its whole part is, but at the
 * ends: at an exclusive low end the fraction must not be zero, at an
 * inclusive high end it must be.
 */
#include <stdio.h>
#include <string.h>

#include "serve_grammar.h"
#include "serve_range.h"

static uint32_t any_digits(struct grammar *g, uint32_t min, uint32_t max)
{
	uint32_t d = gram_rule_new(g);

	gram_add_range(g, d, '0', '9');
	return gram_repeat(g, d, min, max);
}

/* The digit strings from @a to @b, both @n digits long. */
static uint32_t span(struct grammar *g, const char *a, const char *b, size_t n)
{
	uint32_t r = gram_rule_new(g);
	char nines[RANGE_DIGITS + 1], zeros[RANGE_DIGITS + 1];

	if (!n)
		return r;
	if (a[0] == b[0]) {
		gram_add_byte(g, r, (uint8_t)a[0]);
		gram_add_rule(g, r, span(g, a + 1, b + 1, n - 1));
		return r;
	}
	memset(nines, '9', n - 1);
	memset(zeros, '0', n - 1);
	if (!memcmp(a + 1, zeros, n - 1) && !memcmp(b + 1, nines, n - 1)) {
		gram_add_range(g, r, (uint8_t)a[0], (uint8_t)b[0]);
		gram_add_rule(g, r, any_digits(g, n - 1, n - 1));
		return r;
	}
	gram_add_byte(g, r, (uint8_t)a[0]);
	gram_add_rule(g, r, span(g, a + 1, nines, n - 1));
	if (b[0] - a[0] > 1) {
		gram_or(g, r);
		gram_add_range(g, r, (uint8_t)(a[0] + 1), (uint8_t)(b[0] - 1));
		gram_add_rule(g, r, any_digits(g, n - 1, n - 1));
	}
	gram_or(g, r);
	gram_add_byte(g, r, (uint8_t)b[0]);
	gram_add_rule(g, r, span(g, zeros, b + 1, n - 1));
	return r;
}

/* The whole numbers from @lo to @hi (0 <= lo <= hi <= RANGE_MAX), no leading zero. */
static uint32_t whole(struct grammar *g, int64_t lo, int64_t hi)
{
	uint32_t r = gram_rule_new(g);
	char a[24], b[24];
	int64_t first = 1, from, to;
	int n, alt = 0;

	for (n = 1; n <= RANGE_DIGITS; n++, first *= 10) {
		from = n == 1 ? 0 : first;
		to = first * 10 - 1;
		from = lo > from ? lo : from;
		to = hi < to ? hi : to;
		if (from > to)
			continue;
		snprintf(a, sizeof(a), "%0*lld", n, (long long)from);
		snprintf(b, sizeof(b), "%0*lld", n, (long long)to);
		if (alt++)
			gram_or(g, r);
		gram_add_rule(g, r, span(g, a, b, (size_t)n));
	}
	return r;
}

static int64_t clamp(int64_t v)
{
	return v > RANGE_MAX ? RANGE_MAX : v < -RANGE_MAX ? -RANGE_MAX : v;
}

uint32_t range_integer(struct grammar *g, int64_t lo, int64_t hi)
{
	uint32_t r = gram_rule_new(g);

	lo = clamp(lo);
	hi = clamp(hi);
	if (hi < 0) {
		gram_add_byte(g, r, '-');
		gram_add_rule(g, r, whole(g, -hi, -lo));
	} else if (lo >= 0) {
		gram_add_rule(g, r, whole(g, lo, hi));
	} else {
		gram_add_byte(g, r, '-');
		gram_add_rule(g, r, whole(g, 1, -lo));
		gram_or(g, r);
		gram_add_rule(g, r, whole(g, 0, hi));
	}
	return r;
}

/* "." and 1 to RANGE_DIGITS digits: any, all zero, or not all zero. */
enum frac { FRAC_ANY, FRAC_ZERO, FRAC_NONZERO };

static uint32_t fraction(struct grammar *g, enum frac f)
{
	uint32_t r = gram_rule_new(g), zero;

	gram_add_byte(g, r, '.');
	if (f == FRAC_ANY) {
		gram_add_rule(g, r, any_digits(g, 1, RANGE_DIGITS));
		return r;
	}
	zero = gram_literal(g, "0", 1);
	if (f == FRAC_ZERO) {
		gram_add_rule(g, r, gram_repeat(g, zero, 1, RANGE_DIGITS));
		return r;
	}
	gram_add_rule(g, r, gram_repeat(g, zero, 0, RANGE_DIGITS - 1));
	gram_add_range(g, r, '1', '9');
	gram_add_rule(g, r, any_digits(g, 0, RANGE_DIGITS - 1));
	return r;
}

/*
 * Into @r, as alternatives (*@alt of them so far): the numbers x >= 0 with
 * @lo < x (<= unless @lo_excl), x < @hi (<= unless @hi_excl); @open: no
 * high end at all.
 */
static void unsigned_real(struct grammar *g, uint32_t r, int *alt, int64_t lo, int lo_excl,
			  int64_t hi, int hi_excl, int open)
{
	int64_t top = open ? hi : hi - 1;

	if (lo + lo_excl <= top) {	/* whole parts strictly inside: any fraction */
		if ((*alt)++)
			gram_or(g, r);
		gram_add_rule(g, r, whole(g, lo + lo_excl, top));
		gram_add_rule(g, r, gram_opt(g, fraction(g, FRAC_ANY)));
	}
	if (lo_excl && lo < hi) {	/* lo and a bit */
		if ((*alt)++)
			gram_or(g, r);
		gram_add_rule(g, r, whole(g, lo, lo));
		gram_add_rule(g, r, fraction(g, FRAC_NONZERO));
	}
	if (!open && !hi_excl && (hi > lo || !lo_excl)) {	/* hi itself */
		if ((*alt)++)
			gram_or(g, r);
		gram_add_rule(g, r, whole(g, hi, hi));
		gram_add_rule(g, r, gram_opt(g, fraction(g, FRAC_ZERO)));
	}
}

uint32_t range_number(struct grammar *g, int64_t lo, int lo_excl, int64_t hi, int hi_excl)
{
	uint32_t r = gram_rule_new(g), neg;
	int open_lo, open_hi, alt = 0, n_alt = 0;

	lo = clamp(lo);
	hi = clamp(hi);
	open_lo = lo == -RANGE_MAX;
	open_hi = hi == RANGE_MAX;
	/* x >= 0 */
	if (hi > 0 || (hi == 0 && !hi_excl))
		unsigned_real(g, r, &alt, lo >= 0 ? lo : 0, lo >= 0 ? lo_excl : 0, hi, hi_excl,
			      open_hi);
	/* x < 0: -x > 0 from -hi (or 0) to -lo */
	if (lo < 0) {
		neg = gram_rule_new(g);
		unsigned_real(g, neg, &n_alt, hi < 0 ? -hi : 0, hi < 0 ? hi_excl : 1, -lo, lo_excl,
			      open_lo);
		if (n_alt) {
			if (alt++)
				gram_or(g, r);
			gram_add_byte(g, r, '-');
			gram_add_rule(g, r, neg);
		}
	}
	return r;
}
