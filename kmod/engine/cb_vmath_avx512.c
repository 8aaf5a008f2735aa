// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_vmath_avx512.c - SwiGLU, GPT-OSS's clamped SwiGLU and the softmax
 * rows' exponentials on 8-lane double vectors: the AVX-512 variants'
 * swiglu_f32, swiglu_oss_f32 and expf_sub_f32 (cb_ops.h), bit for bit
 * cb_swiglu(), cb_swiglu_oss() and cb_expf_sub() (cb_math.c) for every
 * input.
 *
 * The same lane arithmetic as cb_vmath_avx2.c (which says why it is
 * exactly the scalar's, and why no product may be fused into an FMA:
 * mul_nf()), with masks for the range checks and the tails.
 * Only AVX-512F instructions: cb_isa_avx512_valid() does not ask for DQ.
 */
/* sparse cannot parse GCC's intrinsic headers; gcc -W builds this in full */
#ifndef __CHECKER__
#include <immintrin.h>

#include "cb_math.h"
#include "cb_ops.h"

/*
 * A product the compiler cannot fuse with the add that follows it (see
 * the file comment): the empty asm makes it opaque, at no cost.
 */
static inline __m512d mul_nf(__m512d a, __m512d b)
{
	__m512d v = _mm512_mul_pd(a, b);

	__asm__("" : "+v"(v));
	return v;
}

/* exp_fast (cb_math.c) of 8 doubles, op for op */
static inline __m512d exp_fast8(__m512d x)
{
	const __m512d magic = _mm512_set1_pd(6755399441055744.0);	/* 1.5 * 2^52 */
	__m512d t = _mm512_add_pd(mul_nf(x, _mm512_set1_pd(CB_INV_LN2_32)), magic);
	__m512d kd = _mm512_sub_pd(t, magic);
	__m512d r = _mm512_sub_pd(x, mul_nf(kd, _mm512_set1_pd(CB_LN2_32)));
	__m512i tb = _mm512_castpd_si512(t);
	__m512i j = _mm512_and_si512(tb, _mm512_set1_epi64(31));
	__m512i e = _mm512_slli_epi64(_mm512_srli_epi64(tb, 5), 52);
	__m512d s = _mm512_i64gather_pd(j, cb_exp2_32, 8);
	__m512d p;

	s = _mm512_castsi512_pd(_mm512_add_epi64(_mm512_castpd_si512(s), e));
	p = _mm512_add_pd(mul_nf(r, _mm512_set1_pd(1.0 / 120)), _mm512_set1_pd(1.0 / 24));
	p = _mm512_add_pd(mul_nf(p, r), _mm512_set1_pd(1.0 / 6));
	p = _mm512_add_pd(mul_nf(p, r), _mm512_set1_pd(0.5));
	p = _mm512_add_pd(mul_nf(p, r), _mm512_set1_pd(1.0));
	p = _mm512_add_pd(mul_nf(p, r), _mm512_set1_pd(1.0));
	return mul_nf(s, p);	/* 1 + s p follows: not fused either */
}

/* 1 + e^-x of 8 floats, in double */
static inline __m512d one_plus_exp_neg8(__m512d x)
{
	__m512i nx = _mm512_xor_si512(_mm512_castpd_si512(x),
				      _mm512_castpd_si512(_mm512_set1_pd(-0.0)));

	return _mm512_add_pd(_mm512_set1_pd(1.0), exp_fast8(_mm512_castsi512_pd(nx)));
}

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

/* cb_siluf() of 16 floats */
static inline __m512 silu16(__m512 x)
{
	__m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(x));
	__m512d hi = _mm512_cvtps_pd(hi8(x));
	__m512 v = join16(_mm512_cvtpd_ps(_mm512_div_pd(lo, one_plus_exp_neg8(lo))),
			  _mm512_cvtpd_ps(_mm512_div_pd(hi, one_plus_exp_neg8(hi))));
	__mmask16 keep = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q) |
			 _mm512_cmp_ps_mask(x, _mm512_set1_ps(700.0f), _CMP_GT_OQ);

	v = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(-700.0f), _CMP_LT_OQ),
				 v, _mm512_set1_ps(-0.0f));
	return _mm512_mask_blend_ps(keep, v, x);
}

/* cb_sigmoidf() of 16 floats */
static inline __m512 sigmoid16(__m512 x)
{
	const __m512d one = _mm512_set1_pd(1.0);
	__m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(x));
	__m512d hi = _mm512_cvtps_pd(hi8(x));
	__m512 v = join16(_mm512_cvtpd_ps(_mm512_div_pd(one, one_plus_exp_neg8(lo))),
			  _mm512_cvtpd_ps(_mm512_div_pd(one, one_plus_exp_neg8(hi))));

	v = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(-700.0f), _CMP_LT_OQ),
				 v, _mm512_setzero_ps());
	v = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(700.0f), _CMP_GT_OQ),
				 v, _mm512_set1_ps(1.0f));
	return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), v, x);
}

/* cb_expf() of 16 floats */
static inline __m512 expf16(__m512 x)
{
	__m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(x));
	__m512d hi = _mm512_cvtps_pd(hi8(x));
	__m512 v = join16(_mm512_cvtpd_ps(exp_fast8(lo)), _mm512_cvtpd_ps(exp_fast8(hi)));

	v = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(89.0f), _CMP_GT_OQ),
				 v, _mm512_set1_ps(__builtin_inff()));
	v = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(-104.0f), _CMP_LT_OQ),
				 v, _mm512_setzero_ps());
	return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), v, x);
}

void cb_swiglu_avx512(float *gate, const float *up, int n)
{
	__mmask16 m;
	int i;

	for (i = 0; i + 16 <= n; i += 16)
		_mm512_storeu_ps(gate + i, _mm512_mul_ps(silu16(_mm512_loadu_ps(gate + i)),
							 _mm512_loadu_ps(up + i)));
	if (i < n) {
		m = (__mmask16)((1u << (n - i)) - 1);
		_mm512_mask_storeu_ps(gate + i, m,
				      _mm512_mul_ps(silu16(_mm512_maskz_loadu_ps(m, gate + i)),
						    _mm512_maskz_loadu_ps(m, up + i)));
	}
}

/* cb_swiglu_oss()'s element of 16: min/max keep the scalar's NaN choices */
static inline __m512 oss16(__m512 g, __m512 u, __m512 lim, __m512 nlim, __m512 alpha)
{
	g = _mm512_min_ps(lim, g);			/* lim < g ? lim : g */
	u = _mm512_min_ps(lim, _mm512_max_ps(nlim, u));	/* -lim > u ? -lim : u */
	return _mm512_mul_ps(_mm512_add_ps(u, _mm512_set1_ps(1.0f)),
			     _mm512_mul_ps(g, sigmoid16(_mm512_mul_ps(alpha, g))));
}

void cb_swiglu_oss_avx512(float *gate, const float *up, int n, float lim, float alpha)
{
	__m512 vl = _mm512_set1_ps(lim), vn = _mm512_set1_ps(-lim), va = _mm512_set1_ps(alpha);
	__mmask16 m;
	int i;

	for (i = 0; i + 16 <= n; i += 16)
		_mm512_storeu_ps(gate + i, oss16(_mm512_loadu_ps(gate + i), _mm512_loadu_ps(up + i),
						 vl, vn, va));
	if (i < n) {
		m = (__mmask16)((1u << (n - i)) - 1);
		_mm512_mask_storeu_ps(gate + i, m,
				      oss16(_mm512_maskz_loadu_ps(m, gate + i),
					    _mm512_maskz_loadu_ps(m, up + i), vl, vn, va));
	}
}

void cb_expf_sub_avx512(float *x, float m, int n)
{
	__m512 vm = _mm512_set1_ps(m);
	__mmask16 k;
	int i;

	for (i = 0; i + 16 <= n; i += 16)
		_mm512_storeu_ps(x + i, expf16(_mm512_sub_ps(_mm512_loadu_ps(x + i), vm)));
	if (i < n) {
		k = (__mmask16)((1u << (n - i)) - 1);
		_mm512_mask_storeu_ps(x + i, k,
				      expf16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), vm)));
	}
}
#endif /* __CHECKER__ */
