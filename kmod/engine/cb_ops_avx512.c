// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_ops_avx512.c - the AVX-512 variant (F, BW, VL; VNNI when present).
 *
 * The kernels are in cb_ops_x86_tmpl.h.  Float gemms use 16-float zmm
 * vectors and, with 32 registers, 4 rows x 4 tokens of accumulators.  The
 * block gemms: with AVX512-VNNI, q2_tile below takes two 32-blocks per zmm
 * and vpdpbusd; without it, the template's one-block-per-ymm tile with
 * vpmaddubsw + vpmaddwd (EVEX-encoded, so all 32 registers are usable).
 *
 * Only AVX512F/BW/VL (and VNNI, checked per call) instructions are used
 * here, although the file is compiled with -mavx512dq too.
 */
/*
 * sparse cannot parse GCC's intrinsic headers (it lacks the target
 * builtins), so it checks nothing in this file; gcc -W builds it in full.
 */
#ifndef __CHECKER__
#include <immintrin.h>

#include "cb_math.h"
#include "cb_ops.h"

#define PFX(n) avx512_##n
#define VF __m512
#define VF_N 16
#define VF_ZERO() _mm512_setzero_ps()
#define VF_LOADU(p) _mm512_loadu_ps(p)
#define VF_STOREU(p, v) _mm512_storeu_ps(p, v)
#define VF_SET1(x) _mm512_set1_ps(x)
#define VF_ADD(a, b) _mm512_add_ps(a, b)
#define VF_MUL(a, b) _mm512_mul_ps(a, b)
#define VF_FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define VF_HSUM(v) _mm512_reduce_add_ps(v)
#define VF_LOAD_F16(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p)))
#define VF_LOAD_BF16(p)							\
	_mm512_castsi512_ps(_mm512_slli_epi32(				\
		_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(p))), 16))
#define VF_SUB(a, b) _mm512_sub_ps(a, b)
#define VF_MIN(a, b) _mm512_min_ps(a, b)
#define VF_MAX(a, b) _mm512_max_ps(a, b)
#define VF_ROUND(v) _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define VI __m512i
#define VF_CVT_I(v) _mm512_cvtps_epi32(v)
#define VI_ADD(a, b) _mm512_add_epi32(a, b)
#define VI_SUB(a, b) _mm512_sub_epi32(a, b)
#define VI_SRAI1(v) _mm512_srai_epi32(v, 1)
#define VI_SLLI23(v) _mm512_slli_epi32(v, 23)
#define VI_SET1(x) _mm512_set1_epi32(x)
#define VF_FROM_VI(v) _mm512_castsi512_ps(v)
#define F_MT 4
#define Q_MT 4
#define Q_DOT(u, s)							\
	_mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1))
#define Q_HAVE_VNNI
#define Q_VNNI_TILE avx512_q2_tile
#define Q_VNNI_MT 3

static inline CB_ALWAYS_INLINE void
avx512_q2_tile(float *out, cb_size ldo, const char *w, cb_size wrb,
	       const char *act, cb_size as, int R, int MT, int nb, int dt);
#define Q_DPBUSD(acc, u, s) _mm256_dpbusd_epi32(acc, u, s)

#include "cb_ops_x86_tmpl.h"

/*
 * 32 weights of blocks b and b + 1 (or zeros when !two) in one zmm, in the
 * activation's element order: signed bytes for q8_0, nibbles for q4_0.
 */
static inline CB_ALWAYS_INLINE __m512i avx512_load_wq2(int dt, const char *w, int b, int two)
{
	if ((dt & 0xff) == CB_DT_Q4_0) {
		const struct cb_block_q4_0 *wb = (const struct cb_block_q4_0 *)w + b;
		__m128i q0 = _mm_loadu_si128((const __m128i *)wb[0].qs);
		__m128i q1 = two ? _mm_loadu_si128((const __m128i *)wb[1].qs) :
				   _mm_set1_epi8(0);
		__m256i q = _mm256_set_m128i(q1, q0);
		__m256i m4 = _mm256_set1_epi8(0x0f);
		__m256i lo = _mm256_and_si256(q, m4);
		__m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
		/* [lo0 lo1 hi0 hi1] -> [lo0 hi0 lo1 hi1] (128-bit lanes) */
		__m512i z = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);

		return _mm512_shuffle_i64x2(z, z, _MM_SHUFFLE(3, 1, 2, 0));
	}
	{
		const struct cb_block_q8_0 *wb = (const struct cb_block_q8_0 *)w + b;
		__m256i q0 = _mm256_loadu_si256((const __m256i *)wb[0].qs);
		__m256i q1 = two ? _mm256_loadu_si256((const __m256i *)wb[1].qs) :
				   _mm256_setzero_si256();

		return _mm512_inserti64x4(_mm512_castsi256_si512(q0), q1, 1);
	}
}

/*
 * Blocks b and b + 1 (only b when !two) of R rows x MT tokens: the VNNI
 * block tile.  Scales: lanes 2r and 2r + 1 of an 8-float vector hold d_w
 * of row r at blocks b and b + 1, times the token's d_x of the same block;
 * one permute spreads a row's pair over the two halves of a zmm.
 */
static inline CB_ALWAYS_INLINE void avx512_q2_step(__m512 acc[R_TILE][Q_VNNI_MT],
					    const __m512i *lane, const char *w,
					    cb_size wrb, const char *act, cb_size as,
					    int R, int MT, int b, int dt, int two)
{
	const cb_size bsz = Q_BLK_BYTES(dt);
	const int q4 = (dt & 0xff) == CB_DT_Q4_0;
	__m512i xq[Q_VNNI_MT], base[Q_VNNI_MT];
	__m256 s[Q_VNNI_MT];
	cb_u64 q01 = 0, q23 = 0;
	__m256 dw;
	int r, m;

	/*
	 * The scales of blocks b, b + 1 of each row, paired in scalar
	 * registers and moved over in two steps: vpinsrw per half would
	 * crowd the shuffle port that the loop below needs.
	 */
#pragma GCC unroll 4
	for (r = 0; r < R_TILE; r++) {
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
	/* [r0 b, r0 b+1, r1 b, r1 b+1, ...] */
	dw = _mm256_cvtph_ps(_mm_set_epi64x((long long)q23, (long long)q01));
#pragma GCC unroll 4
	for (m = 0; m < Q_VNNI_MT; m++) {
		const struct cb_block_q8_0 *xb;
		__m256i x0, x1;
		__m128 dx;
		__m256 dx8;
		cb_u32 px;

		if (m >= MT)
			continue;
		xb = (const struct cb_block_q8_0 *)(act + m * as) + b;
		x0 = _mm256_loadu_si256((const __m256i *)xb[0].qs);
		x1 = two ? _mm256_loadu_si256((const __m256i *)xb[1].qs) :
			   _mm256_setzero_si256();
		px = xb[0].d | (two ? (cb_u32)xb[1].d << 16 : 0);
		dx = _mm_cvtph_ps(_mm_cvtsi32_si128((int)px));	/* [dx b, dx b+1, 0, 0] */
		xq[m] = _mm512_inserti64x4(_mm512_castsi256_si512(x0), x1, 1);
		/* [dx b, dx b+1] repeated, to match dw's pairs */
		dx8 = _mm256_castpd_ps(_mm256_broadcastsd_pd(_mm_castps_pd(dx)));
		s[m] = _mm256_mul_ps(dw, dx8);
		/*
		 * The weights enter vpdpbusd as unsigned bytes u = w + c:
		 * q4_0 nibbles (c = 8), q8_0 bytes with the sign bit flipped
		 * (c = 128).  sum w x = sum u x - c sum x, and c sum x is
		 * taken here once per token for all rows.
		 */
		base[m] = _mm512_sub_epi32(_mm512_setzero_si512(),
					   _mm512_dpbusd_epi32(_mm512_setzero_si512(),
							       _mm512_set1_epi8(q4 ? 8 : -128),
							       xq[m]));
	}
#pragma GCC unroll 4
	for (r = 0; r < R_TILE; r++) {
		__m512i u;

		if (r >= R)
			continue;
#ifdef Q_PREFETCH
		_mm_prefetch(w + r * wrb + b * bsz + Q_PREFETCH, _MM_HINT_T0);
#endif
		u = avx512_load_wq2(dt, w + r * wrb, b, two);
		if (!q4)	/* w + 128 as an unsigned byte */
			u = _mm512_xor_si512(u, _mm512_set1_epi8(-128));
#pragma GCC unroll 4
		for (m = 0; m < Q_VNNI_MT; m++) {
			__m512i isum;
			__m512 sc;

			if (m >= MT)
				continue;
			isum = _mm512_dpbusd_epi32(base[m], u, xq[m]);
			sc = _mm512_permutexvar_ps(lane[r], _mm512_castps256_ps512(s[m]));
			acc[r][m] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), sc, acc[r][m]);
		}
	}
}

static inline CB_ALWAYS_INLINE void
avx512_q2_tile(float *out, cb_size ldo, const char *w, cb_size wrb,
	       const char *act, cb_size as, int R, int MT, int nb, int dt)
{
	__m512 acc[R_TILE][Q_VNNI_MT];
	__m512i lane[R_TILE];
	int r, m, b;

#pragma GCC unroll 4
	for (r = 0; r < R_TILE; r++) {
		/* lanes 0..7 take scale lane 2r (block b), 8..15 lane 2r + 1 */
		lane[r] = _mm512_inserti64x4(_mm512_set1_epi32(2 * r),
					     _mm256_set1_epi32(2 * r + 1), 1);
#pragma GCC unroll 4
		for (m = 0; m < Q_VNNI_MT; m++)
			acc[r][m] = _mm512_setzero_ps();
	}
	for (b = 0; b + 2 <= nb; b += 2)
		avx512_q2_step(acc, lane, w, wrb, act, as, R, MT, b, dt, 1);
	if (b < nb)
		avx512_q2_step(acc, lane, w, wrb, act, as, R, MT, b, dt, 0);
#pragma GCC unroll 4
	for (r = 0; r < R_TILE; r++)
#pragma GCC unroll 4
		for (m = 0; m < Q_VNNI_MT; m++)
			if (r < R && m < MT)
				out[m * ldo + r] = _mm512_reduce_add_ps(acc[r][m]);
}

static int avx512_valid(void)
{
	/* the 256-bit parts and F16C conversions need AVX2/FMA/F16C too */
	return cb_cpu_has(CB_CPU_AVX512F) && cb_cpu_has(CB_CPU_AVX512BW) &&
	       cb_cpu_has(CB_CPU_AVX512VL) && cb_cpu_has(CB_CPU_AVX2) &&
	       cb_cpu_has(CB_CPU_FMA) && cb_cpu_has(CB_CPU_F16C);
}

const struct cb_isa_ops cb_isa_avx512 = {
	.name = "avx512",
	.level = CB_ISA_AVX512,
	.valid = avx512_valid,
	.gemm = {
		[CB_DT_F32] = avx512_gemm_f32,
		[CB_DT_F16] = avx512_gemm_f16,
		[CB_DT_BF16] = avx512_gemm_bf16,
		[CB_DT_Q8_0] = avx512_gemm_q8_0,
		[CB_DT_Q4_0] = avx512_gemm_q4_0,
	},
	.quantize_q8_0 = avx512_quantize_q8_0,
	.dot_f32 = avx512_dot_f32,
	.axpy_f32 = avx512_axpy_f32,
	.exp_sum_f32 = avx512_exp_sum_f32,
};
#endif /* __CHECKER__ */
