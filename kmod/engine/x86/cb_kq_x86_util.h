/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_kq_x86_util.h - small pieces shared by the x86 k-quant tiles
 * (cb_kq_x86_tmpl.h, cb_kq_dec_x86_tmpl.h, cb_kq_few_avx2.c and the packed
 * tiles of cb_pack_k_avx2.c / cb_pack_k_avx512.c): unaligned loads, q4_K's
 * six-bit scales of two rows in one ymm, q6_K's scale-word shuffle.
 */
#ifndef CB_KQ_X86_UTIL_H
#define CB_KQ_X86_UTIL_H

#include <immintrin.h>

#include "ops/cb_ops.h"

/* 4 bytes at any alignment */
static inline CB_ALWAYS_INLINE cb_u32 cb_rd32(const void *p)
{
	cb_u32 v;

	__builtin_memcpy(&v, p, 4);
	return v;
}

static inline CB_ALWAYS_INLINE __m256i cb_ld256(const void *p)
{
	return _mm256_loadu_si256((const __m256i *)p);
}

/*
 * vpshufb controls of q6_K's AVX2 tiles: row g puts scale word 2g (its
 * group's first 16 weights) in every word of the low lane and word 2g + 1
 * in the high lane, from a half's eight words in both lanes.
 */
static inline CB_ALWAYS_INLINE const cb_u8 *cb_q6k_scale_ctl(int g)
{
	static const cb_u8 ctl[4][32] CB_ALIGNED(32) = {
		{ 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1,
		  2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3 },
		{ 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5,
		  6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7 },
		{ 8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9,
		  10, 11, 10, 11, 10, 11, 10, 11, 10, 11, 10, 11, 10, 11, 10, 11 },
		{ 12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13,
		  14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15 },
	};

	return ctl[g];
}

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

#endif /* CB_KQ_X86_UTIL_H */
