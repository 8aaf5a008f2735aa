// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_vmath_avx2.c - SwiGLU, GPT-OSS's clamped SwiGLU and the softmax
 * rows' exponentials on 4-lane double vectors: the AVX2 variant's
 * swiglu_f32, swiglu_oss_f32 and expf_sub_f32 (cb_ops.h), bit for bit
 * cb_swiglu(), cb_swiglu_oss() and cb_expf_sub() (cb_math.c) for every
 * input.
 *
 * The scalar silu is x / (1 + exp_fast(-x)) in double, rounded to float
 * once; cb_expf is exp_fast rounded to float.  exp_fast is a fixed
 * sequence of IEEE double operations (a round-to-even by the 1.5 * 2^52
 * trick, multiplies and adds, a 32-entry table, an integer add to the
 * exponent field); each lane here does the same operations in the same
 * order, so each rounds the same way.  The integer k of the scalar is the
 * low bits of t = x * 32/ln2 + 1.5 * 2^52 (|k| < 2^15 for |x| <= 700):
 * k & 31 is the table index, and (k >> 5) << 52 keeps only k's bits
 * 5..16, which a logical shift of t's bits gives as well.  The scalar's
 * range checks (NaN, < -700, > 700; cb_expf's > 89, < -104) are blends on
 * the float input; lanes outside the range compute garbage (the table
 * index is masked, so the gather stays in the table) that the blends
 * discard.
 *
 * No FMA: GCC sees the intrinsics' mul and add as plain vector * and +,
 * and with -mfma under its default -ffp-contract=fast it would fuse each
 * multiply with the add after it into an FMA that rounds once: other
 * doubles, and now and then (when the double lies next to a float
 * rounding boundary) other float bits, too rarely for random tests to
 * see.  The engine is built with -ffp-contract=off (Kbuild, Makefile,
 * tests/accel/Kbuild), and besides every product that an add or subtract
 * consumes goes through mul_nf(), which the compiler cannot fuse whatever
 * the flags (the objects have no vfmadd: docs/performance.md (r)).
 *
 * Tails (n not a multiple of 8) go through the same vector code with
 * masked loads and stores.
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
static inline __m256d mul_nf(__m256d a, __m256d b)
{
	__m256d v = _mm256_mul_pd(a, b);

	__asm__("" : "+v"(v));
	return v;
}

/* exp_fast (cb_math.c) of 4 doubles, op for op */
static inline __m256d exp_fast4(__m256d x)
{
	const __m256d magic = _mm256_set1_pd(6755399441055744.0);	/* 1.5 * 2^52 */
	__m256d t = _mm256_add_pd(mul_nf(x, _mm256_set1_pd(CB_INV_LN2_32)), magic);
	__m256d kd = _mm256_sub_pd(t, magic);
	__m256d r = _mm256_sub_pd(x, mul_nf(kd, _mm256_set1_pd(CB_LN2_32)));
	__m256i tb = _mm256_castpd_si256(t);
	__m256i j = _mm256_and_si256(tb, _mm256_set1_epi64x(31));
	__m256i e = _mm256_slli_epi64(_mm256_srli_epi64(tb, 5), 52);
	__m256d s = _mm256_i64gather_pd(cb_exp2_32, j, 8);
	__m256d p;

	s = _mm256_castsi256_pd(_mm256_add_epi64(_mm256_castpd_si256(s), e));
	p = _mm256_add_pd(mul_nf(r, _mm256_set1_pd(1.0 / 120)), _mm256_set1_pd(1.0 / 24));
	p = _mm256_add_pd(mul_nf(p, r), _mm256_set1_pd(1.0 / 6));
	p = _mm256_add_pd(mul_nf(p, r), _mm256_set1_pd(0.5));
	p = _mm256_add_pd(mul_nf(p, r), _mm256_set1_pd(1.0));
	p = _mm256_add_pd(mul_nf(p, r), _mm256_set1_pd(1.0));
	return mul_nf(s, p);	/* 1 + s p follows: not fused either */
}

/* 1 + e^-x of 4 floats, in double */
static inline __m256d one_plus_exp_neg4(__m256d x)
{
	__m256d nx = _mm256_xor_pd(x, _mm256_set1_pd(-0.0));

	return _mm256_add_pd(_mm256_set1_pd(1.0), exp_fast4(nx));
}

/* cb_siluf() of 8 floats */
static inline __m256 silu8(__m256 x)
{
	__m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(x));
	__m256d hi = _mm256_cvtps_pd(_mm256_extractf128_ps(x, 1));
	__m128 flo = _mm256_cvtpd_ps(_mm256_div_pd(lo, one_plus_exp_neg4(lo)));
	__m128 fhi = _mm256_cvtpd_ps(_mm256_div_pd(hi, one_plus_exp_neg4(hi)));
	__m256 v = _mm256_set_m128(fhi, flo);
	__m256 keep = _mm256_or_ps(_mm256_cmp_ps(x, x, _CMP_UNORD_Q),
				   _mm256_cmp_ps(x, _mm256_set1_ps(700.0f), _CMP_GT_OQ));

	v = _mm256_blendv_ps(v, _mm256_set1_ps(-0.0f),
			     _mm256_cmp_ps(x, _mm256_set1_ps(-700.0f), _CMP_LT_OQ));
	return _mm256_blendv_ps(v, x, keep);
}

/* cb_sigmoidf() of 8 floats */
static inline __m256 sigmoid8(__m256 x)
{
	const __m256d one = _mm256_set1_pd(1.0);
	__m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(x));
	__m256d hi = _mm256_cvtps_pd(_mm256_extractf128_ps(x, 1));
	__m128 flo = _mm256_cvtpd_ps(_mm256_div_pd(one, one_plus_exp_neg4(lo)));
	__m128 fhi = _mm256_cvtpd_ps(_mm256_div_pd(one, one_plus_exp_neg4(hi)));
	__m256 v = _mm256_set_m128(fhi, flo);

	v = _mm256_blendv_ps(v, _mm256_setzero_ps(),
			     _mm256_cmp_ps(x, _mm256_set1_ps(-700.0f), _CMP_LT_OQ));
	v = _mm256_blendv_ps(v, _mm256_set1_ps(1.0f),
			     _mm256_cmp_ps(x, _mm256_set1_ps(700.0f), _CMP_GT_OQ));
	return _mm256_blendv_ps(v, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

/* cb_expf() of 8 floats */
static inline __m256 expf8(__m256 x)
{
	__m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(x));
	__m256d hi = _mm256_cvtps_pd(_mm256_extractf128_ps(x, 1));
	__m256 v = _mm256_set_m128(_mm256_cvtpd_ps(exp_fast4(hi)), _mm256_cvtpd_ps(exp_fast4(lo)));

	v = _mm256_blendv_ps(v, _mm256_set1_ps(__builtin_inff()),
			     _mm256_cmp_ps(x, _mm256_set1_ps(89.0f), _CMP_GT_OQ));
	v = _mm256_blendv_ps(v, _mm256_setzero_ps(),
			     _mm256_cmp_ps(x, _mm256_set1_ps(-104.0f), _CMP_LT_OQ));
	return _mm256_blendv_ps(v, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

/* lanes < n set: the tail mask of a row with n < 8 elements left */
static inline __m256i tail_mask(int n)
{
	return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

void cb_swiglu_avx2(float *gate, const float *up, int n)
{
	__m256i m;
	int i;

	for (i = 0; i + 8 <= n; i += 8)
		_mm256_storeu_ps(gate + i, _mm256_mul_ps(silu8(_mm256_loadu_ps(gate + i)),
							 _mm256_loadu_ps(up + i)));
	if (i < n) {
		m = tail_mask(n - i);
		_mm256_maskstore_ps(gate + i, m,
				    _mm256_mul_ps(silu8(_mm256_maskload_ps(gate + i, m)),
						  _mm256_maskload_ps(up + i, m)));
	}
}

/* cb_swiglu_oss()'s element of 8: min/max keep the scalar's NaN choices */
static inline __m256 oss8(__m256 g, __m256 u, __m256 lim, __m256 nlim, __m256 alpha)
{
	g = _mm256_min_ps(lim, g);			/* lim < g ? lim : g */
	u = _mm256_min_ps(lim, _mm256_max_ps(nlim, u));	/* -lim > u ? -lim : u */
	return _mm256_mul_ps(_mm256_add_ps(u, _mm256_set1_ps(1.0f)),
			     _mm256_mul_ps(g, sigmoid8(_mm256_mul_ps(alpha, g))));
}

void cb_swiglu_oss_avx2(float *gate, const float *up, int n, float lim, float alpha)
{
	__m256 vl = _mm256_set1_ps(lim), vn = _mm256_set1_ps(-lim), va = _mm256_set1_ps(alpha);
	__m256i m;
	int i;

	for (i = 0; i + 8 <= n; i += 8)
		_mm256_storeu_ps(gate + i, oss8(_mm256_loadu_ps(gate + i), _mm256_loadu_ps(up + i),
						vl, vn, va));
	if (i < n) {
		m = tail_mask(n - i);
		_mm256_maskstore_ps(gate + i, m,
				    oss8(_mm256_maskload_ps(gate + i, m),
					 _mm256_maskload_ps(up + i, m), vl, vn, va));
	}
}

void cb_expf_sub_avx2(float *x, float m, int n)
{
	__m256 vm = _mm256_set1_ps(m);
	__m256i k;
	int i;

	for (i = 0; i + 8 <= n; i += 8)
		_mm256_storeu_ps(x + i, expf8(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm)));
	if (i < n) {
		k = tail_mask(n - i);
		_mm256_maskstore_ps(x + i, k,
				    expf8(_mm256_sub_ps(_mm256_maskload_ps(x + i, k), vm)));
	}
}
#endif /* __CHECKER__ */
