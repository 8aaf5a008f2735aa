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

#include "ops/cb_math.h"
#include "ops/cb_ops.h"
#include "ops/cb_ops_q.h"

#define PFX(n) avx2_##n
#define VF __m256
#define VF_N 8
#define VF_ZERO() _mm256_setzero_ps()
#define VF_LOADU(p) _mm256_loadu_ps(p)
#define VF_STOREU(p, v) _mm256_storeu_ps(p, v)
#define VF_SET1(x) _mm256_set1_ps(x)
#define VF_ADD(a, b) _mm256_add_ps(a, b)
#define VF_MUL(a, b) _mm256_mul_ps(a, b)
#define VF_SUB(a, b) _mm256_sub_ps(a, b)
#define VF_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define VF_HSUM(v) avx2_hsum256(v)
#define VF_LOAD_F16(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
#define VF_LOAD_BF16(p)							\
	_mm256_castsi256_ps(_mm256_slli_epi32(				\
		_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(p))), 16))
#define F_MT 2
#define Q_MT 2
/* u8 x s8 pairs to s16 (|w| <= 128, |x| <= 127: no saturation), then to s32 */
#define Q_DOT(u, s)							\
	_mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1))

#include "x86/cb_ops_dec_avx2.h"
#define Q_DEC_TILE avx2_q_dec_tile

#include "x86/cb_ops_x86_tmpl.h"

/* --- router top-k ---------------------------------------------------------------- */

/*
 * The k largest of n <= 64 router logits (k <= 8) as cb_topk_ref() orders
 * them: the AVX-512 op's method (cb_ops_avx512.c) on 8-lane vectors.  Int
 * keys (NaN as -inf, -0.0 as 0.0); T = the 8th largest of 16 group maxima
 * (a bitonic sort of two 8-lane vectors in opposite directions, their
 * lane-wise max, its min), so the top k are all >= T; the <= 16 candidates
 * packed in index order by a permutation table (256 masks of 8 lanes);
 * rank(i) = #{j : K_j > K_i} in two vectors with K_j broadcast from memory.
 * A tie (two equal ranks) or more than 16 candidates goes to
 * cb_topk_base(), which ranks ties exactly.
 */

/* For each 8-bit mask: the positions of its set bits, one per byte, in order. */
static const cb_u64 avx2_tk_pack[256] = {
	0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000001ull, 0x0000000000000100ull,
	0x0000000000000002ull, 0x0000000000000200ull, 0x0000000000000201ull, 0x0000000000020100ull,
	0x0000000000000003ull, 0x0000000000000300ull, 0x0000000000000301ull, 0x0000000000030100ull,
	0x0000000000000302ull, 0x0000000000030200ull, 0x0000000000030201ull, 0x0000000003020100ull,
	0x0000000000000004ull, 0x0000000000000400ull, 0x0000000000000401ull, 0x0000000000040100ull,
	0x0000000000000402ull, 0x0000000000040200ull, 0x0000000000040201ull, 0x0000000004020100ull,
	0x0000000000000403ull, 0x0000000000040300ull, 0x0000000000040301ull, 0x0000000004030100ull,
	0x0000000000040302ull, 0x0000000004030200ull, 0x0000000004030201ull, 0x0000000403020100ull,
	0x0000000000000005ull, 0x0000000000000500ull, 0x0000000000000501ull, 0x0000000000050100ull,
	0x0000000000000502ull, 0x0000000000050200ull, 0x0000000000050201ull, 0x0000000005020100ull,
	0x0000000000000503ull, 0x0000000000050300ull, 0x0000000000050301ull, 0x0000000005030100ull,
	0x0000000000050302ull, 0x0000000005030200ull, 0x0000000005030201ull, 0x0000000503020100ull,
	0x0000000000000504ull, 0x0000000000050400ull, 0x0000000000050401ull, 0x0000000005040100ull,
	0x0000000000050402ull, 0x0000000005040200ull, 0x0000000005040201ull, 0x0000000504020100ull,
	0x0000000000050403ull, 0x0000000005040300ull, 0x0000000005040301ull, 0x0000000504030100ull,
	0x0000000005040302ull, 0x0000000504030200ull, 0x0000000504030201ull, 0x0000050403020100ull,
	0x0000000000000006ull, 0x0000000000000600ull, 0x0000000000000601ull, 0x0000000000060100ull,
	0x0000000000000602ull, 0x0000000000060200ull, 0x0000000000060201ull, 0x0000000006020100ull,
	0x0000000000000603ull, 0x0000000000060300ull, 0x0000000000060301ull, 0x0000000006030100ull,
	0x0000000000060302ull, 0x0000000006030200ull, 0x0000000006030201ull, 0x0000000603020100ull,
	0x0000000000000604ull, 0x0000000000060400ull, 0x0000000000060401ull, 0x0000000006040100ull,
	0x0000000000060402ull, 0x0000000006040200ull, 0x0000000006040201ull, 0x0000000604020100ull,
	0x0000000000060403ull, 0x0000000006040300ull, 0x0000000006040301ull, 0x0000000604030100ull,
	0x0000000006040302ull, 0x0000000604030200ull, 0x0000000604030201ull, 0x0000060403020100ull,
	0x0000000000000605ull, 0x0000000000060500ull, 0x0000000000060501ull, 0x0000000006050100ull,
	0x0000000000060502ull, 0x0000000006050200ull, 0x0000000006050201ull, 0x0000000605020100ull,
	0x0000000000060503ull, 0x0000000006050300ull, 0x0000000006050301ull, 0x0000000605030100ull,
	0x0000000006050302ull, 0x0000000605030200ull, 0x0000000605030201ull, 0x0000060503020100ull,
	0x0000000000060504ull, 0x0000000006050400ull, 0x0000000006050401ull, 0x0000000605040100ull,
	0x0000000006050402ull, 0x0000000605040200ull, 0x0000000605040201ull, 0x0000060504020100ull,
	0x0000000006050403ull, 0x0000000605040300ull, 0x0000000605040301ull, 0x0000060504030100ull,
	0x0000000605040302ull, 0x0000060504030200ull, 0x0000060504030201ull, 0x0006050403020100ull,
	0x0000000000000007ull, 0x0000000000000700ull, 0x0000000000000701ull, 0x0000000000070100ull,
	0x0000000000000702ull, 0x0000000000070200ull, 0x0000000000070201ull, 0x0000000007020100ull,
	0x0000000000000703ull, 0x0000000000070300ull, 0x0000000000070301ull, 0x0000000007030100ull,
	0x0000000000070302ull, 0x0000000007030200ull, 0x0000000007030201ull, 0x0000000703020100ull,
	0x0000000000000704ull, 0x0000000000070400ull, 0x0000000000070401ull, 0x0000000007040100ull,
	0x0000000000070402ull, 0x0000000007040200ull, 0x0000000007040201ull, 0x0000000704020100ull,
	0x0000000000070403ull, 0x0000000007040300ull, 0x0000000007040301ull, 0x0000000704030100ull,
	0x0000000007040302ull, 0x0000000704030200ull, 0x0000000704030201ull, 0x0000070403020100ull,
	0x0000000000000705ull, 0x0000000000070500ull, 0x0000000000070501ull, 0x0000000007050100ull,
	0x0000000000070502ull, 0x0000000007050200ull, 0x0000000007050201ull, 0x0000000705020100ull,
	0x0000000000070503ull, 0x0000000007050300ull, 0x0000000007050301ull, 0x0000000705030100ull,
	0x0000000007050302ull, 0x0000000705030200ull, 0x0000000705030201ull, 0x0000070503020100ull,
	0x0000000000070504ull, 0x0000000007050400ull, 0x0000000007050401ull, 0x0000000705040100ull,
	0x0000000007050402ull, 0x0000000705040200ull, 0x0000000705040201ull, 0x0000070504020100ull,
	0x0000000007050403ull, 0x0000000705040300ull, 0x0000000705040301ull, 0x0000070504030100ull,
	0x0000000705040302ull, 0x0000070504030200ull, 0x0000070504030201ull, 0x0007050403020100ull,
	0x0000000000000706ull, 0x0000000000070600ull, 0x0000000000070601ull, 0x0000000007060100ull,
	0x0000000000070602ull, 0x0000000007060200ull, 0x0000000007060201ull, 0x0000000706020100ull,
	0x0000000000070603ull, 0x0000000007060300ull, 0x0000000007060301ull, 0x0000000706030100ull,
	0x0000000007060302ull, 0x0000000706030200ull, 0x0000000706030201ull, 0x0000070603020100ull,
	0x0000000000070604ull, 0x0000000007060400ull, 0x0000000007060401ull, 0x0000000706040100ull,
	0x0000000007060402ull, 0x0000000706040200ull, 0x0000000706040201ull, 0x0000070604020100ull,
	0x0000000007060403ull, 0x0000000706040300ull, 0x0000000706040301ull, 0x0000070604030100ull,
	0x0000000706040302ull, 0x0000070604030200ull, 0x0000070604030201ull, 0x0007060403020100ull,
	0x0000000000070605ull, 0x0000000007060500ull, 0x0000000007060501ull, 0x0000000706050100ull,
	0x0000000007060502ull, 0x0000000706050200ull, 0x0000000706050201ull, 0x0000070605020100ull,
	0x0000000007060503ull, 0x0000000706050300ull, 0x0000000706050301ull, 0x0000070605030100ull,
	0x0000000706050302ull, 0x0000070605030200ull, 0x0000070605030201ull, 0x0007060503020100ull,
	0x0000000007060504ull, 0x0000000706050400ull, 0x0000000706050401ull, 0x0000070605040100ull,
	0x0000000706050402ull, 0x0000070605040200ull, 0x0000070605040201ull, 0x0007060504020100ull,
	0x0000000706050403ull, 0x0000070605040300ull, 0x0000070605040301ull, 0x0007060504030100ull,
	0x0000070605040302ull, 0x0007060504030200ull, 0x0007060504030201ull, 0x0706050403020100ull,
};

#define TK_SIGN (-0x7fffffff - 1)	/* 0x80000000 as an int: below every key */

static const int avx2_tk_iota[16] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
};

/*
 * 8 logits from p (only the first left of them when left < 8): the values
 * with NaN as -inf in *xf, the int keys as the result (negatives become
 * minus their magnitude, so -0.0 and 0.0 are one key), the lowest key in
 * the lanes past the end.
 */
static inline CB_ALWAYS_INLINE __m256i avx2_tk_load(const float *p, int left, __m256 *xf)
{
	__m256i lm = _mm256_cmpgt_epi32(_mm256_set1_epi32(left),
					_mm256_loadu_si256((const __m256i *)avx2_tk_iota));
	__m256 x = left >= 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, lm);
	__m256i b, s, key;

	*xf = _mm256_max_ps(x, _mm256_set1_ps(-__builtin_inff()));
	b = _mm256_castps_si256(*xf);
	s = _mm256_srai_epi32(b, 31);
	key = _mm256_and_si256(b, _mm256_set1_epi32(0x7fffffff));
	key = _mm256_sub_epi32(_mm256_xor_si256(key, s), s);
	return _mm256_blendv_epi8(_mm256_set1_epi32(TK_SIGN), key, lm);
}

#define TK2_SW1(v) _mm256_shuffle_epi32(v, 0xb1)		/* lane i ^ 1 */
#define TK2_SW2(v) _mm256_shuffle_epi32(v, 0x4e)		/* i ^ 2 */
#define TK2_SW4(v) _mm256_permute4x64_epi64(v, 0x4e)	/* i ^ 4 */
/* a bitonic step: lanes set in imm take the max of the pair, the others the min */
#define TK2_STEP(v, perm, imm) do {					\
		__m256i p_ = perm(v);					\
		v = _mm256_blend_epi32(_mm256_min_epi32(v, p_), _mm256_max_epi32(v, p_), imm); \
	} while (0)

/* The 8th largest of the 16 lanes of a and b, in every lane. */
static inline CB_ALWAYS_INLINE __m256i avx2_tk_top8_min(__m256i a, __m256i b)
{
	/* a ascending, b descending: lanes 0..7 and 8..15 of one 16-lane sort */
	TK2_STEP(a, TK2_SW1, 0x66);
	TK2_STEP(b, TK2_SW1, 0x66);
	TK2_STEP(a, TK2_SW2, 0x3c);
	TK2_STEP(b, TK2_SW2, 0x3c);
	TK2_STEP(a, TK2_SW1, 0x5a);
	TK2_STEP(b, TK2_SW1, 0x5a);
	TK2_STEP(a, TK2_SW4, 0xf0);
	TK2_STEP(b, TK2_SW4, 0x0f);
	TK2_STEP(a, TK2_SW2, 0xcc);
	TK2_STEP(b, TK2_SW2, 0x33);
	TK2_STEP(a, TK2_SW1, 0xaa);
	TK2_STEP(b, TK2_SW1, 0x55);
	a = _mm256_max_epi32(a, b);	/* the top 8 */
	a = _mm256_min_epi32(a, TK2_SW4(a));
	a = _mm256_min_epi32(a, TK2_SW2(a));
	return _mm256_min_epi32(a, TK2_SW1(a));
}

/* Returns 0, having written nothing, when it declines. */
static inline CB_ALWAYS_INLINE int avx2_topk_64(const float *logits, int n, int k,
						cb_u32 *ids, float *vals)
{
	const __m256i iota = _mm256_loadu_si256((const __m256i *)avx2_tk_iota);
	__m256 xf;
	__m256i x[8], t, ka, kb, va, vb, ra, rb, bits;
	unsigned int cm[8];
	int kbuf[24], ibuf[24], kr[16];
	int q, j, c = 0, off = 0;

#pragma GCC unroll 8
	for (q = 0; q < 8; q++)
		x[q] = avx2_tk_load(logits + 8 * q, n - 8 * q, &xf);
	/* groups: lane l of the even vectors, lane l of the odd ones */
	t = avx2_tk_top8_min(_mm256_max_epi32(_mm256_max_epi32(x[0], x[2]),
					      _mm256_max_epi32(x[4], x[6])),
			     _mm256_max_epi32(_mm256_max_epi32(x[1], x[3]),
					      _mm256_max_epi32(x[5], x[7])));
#pragma GCC unroll 8
	for (q = 0; q < 8; q++) {
		int left = n - 8 * q;
		unsigned int lm = left >= 8 ? 0xff : left > 0 ? (1u << left) - 1 : 0;

		/* x >= t: not t > x */
		__m256i gt = _mm256_cmpgt_epi32(t, x[q]);

		cm[q] = ~(unsigned int)_mm256_movemask_ps(_mm256_castsi256_ps(gt)) & lm;
		c += __builtin_popcount(cm[q]);
	}
	if (c > 16)
		return 0;
#pragma GCC unroll 8
	for (q = 0; q < 8; q++) {
		const __m128i *pk = (const __m128i *)&avx2_tk_pack[cm[q]];
		__m256i perm = _mm256_cvtepu8_epi32(_mm_loadl_epi64(pk));

		/* 8 lanes at off; the lanes past this piece's are rewritten or unused */
		_mm256_storeu_si256((__m256i *)(kbuf + off),
				    _mm256_permutevar8x32_epi32(x[q], perm));
		_mm256_storeu_si256((__m256i *)(ibuf + off),
				    _mm256_add_epi32(perm, _mm256_set1_epi32(8 * q)));
		off += __builtin_popcount(cm[q]);
	}
	/* lanes past c: below any real key (>= -0x7f800000), so never counted */
	va = _mm256_cmpgt_epi32(_mm256_set1_epi32(c), iota);
	vb = _mm256_cmpgt_epi32(_mm256_set1_epi32(c - 8), iota);
	ka = _mm256_blendv_epi8(_mm256_set1_epi32(TK_SIGN),
				_mm256_loadu_si256((const __m256i *)kbuf), va);
	kb = _mm256_blendv_epi8(_mm256_set1_epi32(TK_SIGN),
				_mm256_loadu_si256((const __m256i *)(kbuf + 8)), vb);
	/* rank by K_i < K_j over the c real j; the asm keeps kr[j] a load operand */
	_mm256_storeu_si256((__m256i *)kr, ka);
	_mm256_storeu_si256((__m256i *)(kr + 8), kb);
	__asm__("" : "+m"(kr));
	ra = _mm256_setzero_si256();
	rb = _mm256_setzero_si256();
	for (j = 0; j < 16; j++) {
		__m256i bc;

		if (j >= 8 && j >= c)
			break;
		bc = _mm256_set1_epi32(kr[j]);
		ra = _mm256_sub_epi32(ra, _mm256_cmpgt_epi32(bc, ka));
		rb = _mm256_sub_epi32(rb, _mm256_cmpgt_epi32(bc, kb));
	}
	/* the c real ranks are 0..c-1, each once, unless two keys tie */
	bits = _mm256_or_si256(_mm256_and_si256(va, _mm256_sllv_epi32(_mm256_set1_epi32(1), ra)),
			       _mm256_and_si256(vb, _mm256_sllv_epi32(_mm256_set1_epi32(1), rb)));
	bits = _mm256_or_si256(bits, TK2_SW4(bits));
	bits = _mm256_or_si256(bits, TK2_SW2(bits));
	bits = _mm256_or_si256(bits, TK2_SW1(bits));
	if (_mm256_cvtsi256_si32(bits) != (1 << c) - 1)
		return 0;
	/* the lane of rank j: its bit in the two compare masks */
	for (j = 0; j < k; j++) {
		__m256i r = _mm256_set1_epi32(j);
		__m256 ea = _mm256_castsi256_ps(_mm256_cmpeq_epi32(ra, r));
		__m256 eb = _mm256_castsi256_ps(_mm256_cmpeq_epi32(rb, r));
		unsigned int hit = (unsigned int)_mm256_movemask_ps(ea) |
				   (unsigned int)_mm256_movemask_ps(eb) << 8;
		int id = ibuf[__builtin_ctz(hit)];
		float v = logits[id];

		ids[j] = (cb_u32)id;
		vals[j] = v == v ? v : -__builtin_inff();
	}
	return 1;
}

static void avx2_topk_f32(const float *logits, int n, int k, cb_u32 *ids, float *vals)
{
	if (k >= 1 && k <= 8 && n >= k && n <= 64) {
		if (n == 64 && k == 8) {	/* the common router shape, all constant */
			if (avx2_topk_64(logits, 64, 8, ids, vals))
				return;
		} else if (avx2_topk_64(logits, n, k, ids, vals)) {
			return;
		}
	}
	cb_topk_base(logits, n, k, ids, vals);
}

const struct cb_isa_ops cb_isa_avx2 = {
	.level = CB_ISA_AVX2,
	.valid = cb_isa_avx2_valid,
	.gemm = {
		CB_X86_FLOAT_GEMMS,
		[CB_DT_Q8_0] = avx2_gemm_q8_0,
		[CB_DT_Q4_0] = avx2_gemm_q4_0,
		CB_GEMM_Q_TABLE_NO_Q46(avx2),
		/* M >= 2: the few-token tiles (cb_kq_few_avx2.c) */
		[CB_DT_Q4_K] = cb_avx2_gemm_few_q4_K,
		[CB_DT_Q6_K] = cb_avx2_gemm_few_q6_K,
	},
	.gemm_pk = {
		[CB_DT_Q8_0] = cb_avx2_gemm_pk_q8_0,
		[CB_DT_Q4_0] = cb_avx2_gemm_pk_q4_0,
		[CB_DT_Q4_K] = cb_avx2_gemm_pk_q4_K,
	},
	/*
	 * q4_K: 2 and 3 tokens are faster unpacked (performance.md (v)); q6_K
	 * has no packed tile: the few-token one is faster at every M ((u))
	 */
	.pk_min_m = {
		[CB_DT_Q4_K] = 4,
	},
	.pack_q8_0 = cb_avx2_pack_q8_0,
	.pack_q8_K = cb_avx2_pack_q8_K,
	.gemm_ps = {
		[CB_DT_F32] = 200,
		[CB_DT_F16] = 100,
		[CB_DT_BF16] = 100,
		[CB_DT_Q8_0] = 60,
		[CB_DT_Q4_0] = 60,
		[CB_DT_Q4_1] = 80,
		[CB_DT_Q5_0] = 90,
		[CB_DT_Q5_1] = 100,
		[CB_DT_IQ4_NL] = 70,
		[CB_DT_Q2_K] = 50,
		[CB_DT_Q3_K] = 70,
		[CB_DT_Q4_K] = 60,
		[CB_DT_Q5_K] = 70,
		[CB_DT_Q6_K] = 80,
		[CB_DT_IQ4_XS] = 70,
		[CB_DT_MXFP4] = 70,
	},
	.delta_ps = 300,	/* 155 to 260 measured */
	CB_X86_VECTOR_OPS(avx2),
};
#endif /* __CHECKER__ */
