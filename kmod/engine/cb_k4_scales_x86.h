/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_k4_scales_x86.h - q4_K's six-bit sub-block scales and mins of two
 * weight rows in one ymm, for the AVX2 k-quant tiles (the M = 1 decode
 * tile of cb_kq_dec_x86_tmpl.h and the few-token tile of cb_kq_few_avx2.c).
 */
#ifndef CB_K4_SCALES_X86_H
#define CB_K4_SCALES_X86_H

#include <immintrin.h>

#include "cb_ops.h"

/*
 * The [sc_0..7, m_0..7] bytes of the rows whose scales[12] are at p and
 * p + wrb, one row per 128-bit lane: k4_scales of cb_kq_x86_tmpl.h for two
 * rows at once.  The 16 bytes read from each end inside its block.
 */
static inline CB_ALWAYS_INLINE __m256i cb_k4_scales2(const char *p, cb_size wrb)
{
	__m128i r0 = _mm_loadu_si128((const __m128i *)p);
	__m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(r0),
					    _mm_loadu_si128((const __m128i *)(p + wrb)), 1);
	__m256i a = _mm256_shuffle_epi32(v, 0x98), b = _mm256_shuffle_epi32(v, 0x50);

	a = _mm256_srlv_epi32(a, _mm256_setr_epi32(0, 0, 0, 4, 0, 0, 0, 4));
	a = _mm256_and_si256(a, _mm256_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f,
						  0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f));
	b = _mm256_and_si256(_mm256_srli_epi32(b, 2),
			     _mm256_setr_epi32(0, 0x30303030, 0, 0x30303030,
					       0, 0x30303030, 0, 0x30303030));
	return _mm256_or_si256(a, b);
}

#endif /* CB_K4_SCALES_X86_H */
