// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_vmath_avx512.c - the AVX-512 variants' swiglu_f32, swiglu_oss_f32
 * and expf_sub_f32: cb_vmath_x86_tmpl.h (which says why they are exactly
 * the scalar's) on 8-double / 16-float vectors, with mask registers for
 * the range checks and the tails.  Only AVX-512F instructions:
 * cb_isa_avx512_valid() does not ask for DQ (hence the sign flip as an
 * integer xor, and join16() without insertf32x8).
 */
/* sparse cannot parse GCC's intrinsic headers; gcc -W builds this in full */
#ifndef __CHECKER__
#include <immintrin.h>

#include "ops/cb_math.h"
#include "ops/cb_ops.h"

/* two 8-float halves into 16 floats (AVX-512F only: no insertf32x8) */
static inline __m512 join16(__m256 lo, __m256 hi)
{
	__m512d v = _mm512_castpd256_pd512(_mm256_castps_pd(lo));

	return _mm512_castpd_ps(_mm512_insertf64x4(v, _mm256_castps_pd(hi), 1));
}

static inline __m256 hi8(__m512 x)
{
	return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1));
}

#define PFX(n) n##_avx512
#define VD __m512d
#define VI __m512i
#define VD_SET1(x) _mm512_set1_pd(x)
#define VD_ADD(a, b) _mm512_add_pd(a, b)
#define VD_SUB(a, b) _mm512_sub_pd(a, b)
#define VD_MUL(a, b) _mm512_mul_pd(a, b)
#define VD_DIV(a, b) _mm512_div_pd(a, b)
#define VD_NEG(x)							\
	_mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(x),	\
					     _mm512_castpd_si512(_mm512_set1_pd(-0.0))))
#define VD_AS_VI(x) _mm512_castpd_si512(x)
#define VI_AS_VD(x) _mm512_castsi512_pd(x)
#define VI_SET1_64(x) _mm512_set1_epi64(x)
#define VI_AND(a, b) _mm512_and_si512(a, b)
#define VI_ADD_64(a, b) _mm512_add_epi64(a, b)
#define VI_SRLI_64(v, n) _mm512_srli_epi64(v, n)
#define VI_SLLI_64(v, n) _mm512_slli_epi64(v, n)
#define VD_GATHER(tab, j) _mm512_i64gather_pd(j, tab, 8)

#define VF __m512
#define VF_N 16
#define VF_SET1(x) _mm512_set1_ps(x)
#define VF_ZERO() _mm512_setzero_ps()
#define VF_ADD(a, b) _mm512_add_ps(a, b)
#define VF_SUB(a, b) _mm512_sub_ps(a, b)
#define VF_MUL(a, b) _mm512_mul_ps(a, b)
#define VF_MIN(a, b) _mm512_min_ps(a, b)
#define VF_MAX(a, b) _mm512_max_ps(a, b)
#define VF_LOADU(p) _mm512_loadu_ps(p)
#define VF_STOREU(p, v) _mm512_storeu_ps(p, v)
#define VD_LO(x) _mm512_cvtps_pd(_mm512_castps512_ps256(x))
#define VD_HI(x) _mm512_cvtps_pd(hi8(x))
#define VF_JOIN(lo, hi) join16(_mm512_cvtpd_ps(lo), _mm512_cvtpd_ps(hi))

#define VM __mmask16
#define VF_CMP(a, b, pred) _mm512_cmp_ps_mask(a, b, pred)
#define VM_OR(a, b) ((__mmask16)((a) | (b)))
#define VF_BLEND(m, a, b) _mm512_mask_blend_ps(m, a, b)

#define VT __mmask16
#define VT_MAKE(n) ((__mmask16)((1u << (n)) - 1))
#define VF_LOAD_T(p, t) _mm512_maskz_loadu_ps(t, p)
#define VF_STORE_T(p, t, v) _mm512_mask_storeu_ps(p, t, v)

#include "x86/cb_vmath_x86_tmpl.h"
#endif /* __CHECKER__ */
