// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_ops_avx2.c - the AVX2 + FMA + F16C variant (8-float vectors).
 *
 * The kernels are in cb_ops_x86_tmpl.h; this file picks the vector width
 * and the int8 dot product (vpmaddubsw + vpmaddwd).  Register budget (16
 * ymm): 4 rows x 2 tokens of accumulators, the token vectors, the weights
 * and temporaries.
 */
/*
 * sparse cannot parse GCC's intrinsic headers (it lacks the target
 * builtins), so it checks nothing in this file; gcc -W builds it in full.
 */
#ifndef __CHECKER__
#include <immintrin.h>

#include "cb_math.h"
#include "cb_ops.h"

#define PFX(n) avx2_##n
#define VF __m256
#define VF_N 8
#define VF_ZERO() _mm256_setzero_ps()
#define VF_LOADU(p) _mm256_loadu_ps(p)
#define VF_STOREU(p, v) _mm256_storeu_ps(p, v)
#define VF_SET1(x) _mm256_set1_ps(x)
#define VF_ADD(a, b) _mm256_add_ps(a, b)
#define VF_MUL(a, b) _mm256_mul_ps(a, b)
#define VF_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define VF_HSUM(v) avx2_hsum256(v)
#define VF_LOAD_F16(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
#define VF_LOAD_BF16(p)							\
	_mm256_castsi256_ps(_mm256_slli_epi32(				\
		_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(p))), 16))
#define VF_SUB(a, b) _mm256_sub_ps(a, b)
#define VF_MIN(a, b) _mm256_min_ps(a, b)
#define VF_MAX(a, b) _mm256_max_ps(a, b)
#define VF_ROUND(v) _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define VI __m256i
#define VF_CVT_I(v) _mm256_cvtps_epi32(v)
#define VI_ADD(a, b) _mm256_add_epi32(a, b)
#define VI_SUB(a, b) _mm256_sub_epi32(a, b)
#define VI_SRAI1(v) _mm256_srai_epi32(v, 1)
#define VI_SLLI23(v) _mm256_slli_epi32(v, 23)
#define VI_SET1(x) _mm256_set1_epi32(x)
#define VF_FROM_VI(v) _mm256_castsi256_ps(v)
#define F_MT 2
#define Q_MT 2
/* u8 x s8 pairs to s16 (|w| <= 128, |x| <= 127: no saturation), then to s32 */
#define Q_DOT(u, s)							\
	_mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1))

#include "cb_ops_x86_tmpl.h"

static int avx2_valid(void)
{
	return cb_cpu_has(CB_CPU_AVX2) && cb_cpu_has(CB_CPU_FMA) &&
	       cb_cpu_has(CB_CPU_F16C);
}

const struct cb_isa_ops cb_isa_avx2 = {
	.name = "avx2",
	.level = CB_ISA_AVX2,
	.valid = avx2_valid,
	.gemm = {
		[CB_DT_F32] = avx2_gemm_f32,
		[CB_DT_F16] = avx2_gemm_f16,
		[CB_DT_BF16] = avx2_gemm_bf16,
		[CB_DT_Q8_0] = avx2_gemm_q8_0,
		[CB_DT_Q4_0] = avx2_gemm_q4_0,
	},
	.quantize_q8_0 = avx2_quantize_q8_0,
	.dot_f32 = avx2_dot_f32,
	.axpy_f32 = avx2_axpy_f32,
	.exp_sum_f32 = avx2_exp_sum_f32,
};
#endif /* __CHECKER__ */
