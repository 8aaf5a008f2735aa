// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_vmath_avx2.c - the AVX2 variant's swiglu_f32, swiglu_oss_f32 and
 * expf_sub_f32: cb_vmath_x86_tmpl.h (which says why they are exactly the
 * scalar's) on 4-double / 8-float vectors, with vector masks for the
 * range checks and vmaskmov for the tails.
 */
/* sparse cannot parse GCC's intrinsic headers; gcc -W builds this in full */
#ifndef __CHECKER__
#include <immintrin.h>

#include "ops/cb_math.h"
#include "ops/cb_ops.h"

#define PFX(n) n##_avx2
#define VD __m256d
#define VI __m256i
#define VD_SET1(x) _mm256_set1_pd(x)
#define VD_ADD(a, b) _mm256_add_pd(a, b)
#define VD_SUB(a, b) _mm256_sub_pd(a, b)
#define VD_MUL(a, b) _mm256_mul_pd(a, b)
#define VD_DIV(a, b) _mm256_div_pd(a, b)
#define VD_NEG(x) _mm256_xor_pd(x, _mm256_set1_pd(-0.0))
#define VD_AS_VI(x) _mm256_castpd_si256(x)
#define VI_AS_VD(x) _mm256_castsi256_pd(x)
#define VI_SET1_64(x) _mm256_set1_epi64x(x)
#define VI_AND(a, b) _mm256_and_si256(a, b)
#define VI_ADD_64(a, b) _mm256_add_epi64(a, b)
#define VI_SRLI_64(v, n) _mm256_srli_epi64(v, n)
#define VI_SLLI_64(v, n) _mm256_slli_epi64(v, n)
#define VD_GATHER(tab, j) _mm256_i64gather_pd(tab, j, 8)

#define VF __m256
#define VF_N 8
#define VF_SET1(x) _mm256_set1_ps(x)
#define VF_ZERO() _mm256_setzero_ps()
#define VF_ADD(a, b) _mm256_add_ps(a, b)
#define VF_SUB(a, b) _mm256_sub_ps(a, b)
#define VF_MUL(a, b) _mm256_mul_ps(a, b)
#define VF_MIN(a, b) _mm256_min_ps(a, b)
#define VF_MAX(a, b) _mm256_max_ps(a, b)
#define VF_LOADU(p) _mm256_loadu_ps(p)
#define VF_STOREU(p, v) _mm256_storeu_ps(p, v)
#define VD_LO(x) _mm256_cvtps_pd(_mm256_castps256_ps128(x))
#define VD_HI(x) _mm256_cvtps_pd(_mm256_extractf128_ps(x, 1))
#define VF_JOIN(lo, hi) _mm256_set_m128(_mm256_cvtpd_ps(hi), _mm256_cvtpd_ps(lo))

#define VM __m256
#define VF_CMP(a, b, pred) _mm256_cmp_ps(a, b, pred)
#define VM_OR(a, b) _mm256_or_ps(a, b)
#define VF_BLEND(m, a, b) _mm256_blendv_ps(a, b, m)

#define VT __m256i
#define VT_MAKE(n)							\
	_mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))
#define VF_LOAD_T(p, t) _mm256_maskload_ps(p, t)
#define VF_STORE_T(p, t, v) _mm256_maskstore_ps(p, t, v)

#include "x86/cb_vmath_x86_tmpl.h"
#endif /* __CHECKER__ */
