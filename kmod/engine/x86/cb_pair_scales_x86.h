/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_pair_scales_x86.h - the f16 scales of blocks b and b + 1 of up to four
 * weight rows, as the VNNI block tiles pair them (avx512_q2_step in
 * cb_ops_avx512.c, pk_step in cb_pack_avx512.c): eight floats
 * [r0 b, r0 b+1, r1 b, r1 b+1, ...].  They are paired in scalar registers
 * and moved over in two steps: vpinsrw per half would crowd the shuffle
 * port that the tiles' loops need.  Rows from @R on and, unless @two, the
 * second block are not read (their lanes are 0).
 */
#ifndef CB_PAIR_SCALES_X86_H
#define CB_PAIR_SCALES_X86_H

#include <immintrin.h>

#include "ops/cb_ops.h"

static inline CB_ALWAYS_INLINE __m256 cb_pair_scales(const char *w, cb_size wrb, int b,
						    cb_size bsz, int R, int two)
{
	cb_u64 q01 = 0, q23 = 0;
	int r;

#pragma GCC unroll 4
	for (r = 0; r < 4; r++) {
		const char *wb = w + r * wrb + b * bsz;
		cb_u64 pr;

		if (r >= R)
			continue;
		pr = *(const cb_u16 *)wb;
		if (two)
			pr |= (cb_u64)*(const cb_u16 *)(wb + bsz) << 16;
		if (r < 2)
			q01 |= pr << (32 * r);
		else
			q23 |= pr << (32 * (r - 2));
	}
	return _mm256_cvtph_ps(_mm_set_epi64x((long long)q23, (long long)q01));
}

#endif /* CB_PAIR_SCALES_X86_H */
