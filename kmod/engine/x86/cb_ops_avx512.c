// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_ops_avx512.c - the two AVX-512 variants: F, BW, VL ("avx512") and
 * the same with VNNI ("avx512_vnni").
 *
 * The kernels are in cb_ops_x86_tmpl.h.  Float gemms use 16-float zmm
 * vectors and, with 32 registers, 4 rows x 4 tokens of accumulators.  The
 * block gemms: the VNNI variant's q2_tile below takes two 32-blocks per
 * zmm and vpdpbusd; the other's are the template's one-block-per-ymm tile
 * with vpmaddubsw + vpmaddwd (EVEX-encoded, so all 32 registers are
 * usable).  Everything but the block gemms is shared by the two tables.
 *
 * Only AVX512F/BW/VL (and VNNI in the VNNI variant's gemms) instructions
 * are used here, although the file is compiled with -mavx512dq too.
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
#include "x86/cb_pair_scales_x86.h"

#define PFX(n) avx512_##n
#define VF __m512
#define VF_N 16
#define VF_ZERO() _mm512_setzero_ps()
#define VF_LOADU(p) _mm512_loadu_ps(p)
#define VF_STOREU(p, v) _mm512_storeu_ps(p, v)
#define VF_SET1(x) _mm512_set1_ps(x)
#define VF_ADD(a, b) _mm512_add_ps(a, b)
#define VF_MUL(a, b) _mm512_mul_ps(a, b)
#define VF_SUB(a, b) _mm512_sub_ps(a, b)
#define VF_FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define VF_HSUM(v) _mm512_reduce_add_ps(v)
#define VF_LOAD_F16(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p)))
#define VF_LOAD_BF16(p)							\
	_mm512_castsi512_ps(_mm512_slli_epi32(				\
		_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(p))), 16))
#define F_MT 4
#define Q_MT 4
#define Q_DOT(u, s)							\
	_mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1))
#define Q_HAVE_VNNI
#define Q_VNNI_TILE avx512_q2_tile
/*
 * 4 rows x 4 tokens: 10% faster than 3 tokens at M = 4 and 8 on
 * Sapphire Rapids, with some spills; 5 spills too much (2.6 KiB frame).
 */
#define Q_VNNI_MT 4

static inline CB_ALWAYS_INLINE void
avx512_q2_tile(float *out, cb_size ldo, const char *w, cb_size wrb,
	       const char *act, cb_size as, int R, int MT, int nb, int dt);
#define Q_DPBUSD(acc, u, s) _mm256_dpbusd_epi32(acc, u, s)

#include "x86/cb_ops_x86_tmpl.h"

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
	__m256 dw;
	int r, m;

	/* the scales of blocks b, b + 1 of each row (cb_pair_scales_x86.h) */
	dw = cb_pair_scales(w, wrb, b, bsz, R, two);
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
		avx512_prefetch_row(w, wrb, r, R, b * bsz);
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

/* At M = 1, the decode tiles of cb_q_dec_avx512.c: the same bits. */
static void avx512_gemm_q8_0_vnni_m(float *out, cb_size ldo, const void *w, cb_size wrb,
				    const void *act, cb_size as, int M, int nrows, int k)
{
	if (M == 1)
		cb_avx512_vnni_gemm_dec_q8_0(out, w, wrb, act, nrows, k);
	else
		avx512_gemm_q8_0_vnni(out, ldo, w, wrb, act, as, M, nrows, k);
}

static void avx512_gemm_q4_0_vnni_m(float *out, cb_size ldo, const void *w, cb_size wrb,
				    const void *act, cb_size as, int M, int nrows, int k)
{
	if (M == 1)
		cb_avx512_vnni_gemm_dec_q4_0(out, w, wrb, act, nrows, k);
	else
		avx512_gemm_q4_0_vnni(out, ldo, w, wrb, act, as, M, nrows, k);
}

/* --- router top-k ---------------------------------------------------------------- */

/*
 * The k largest of n router logits (k <= 8, n <= 256), exactly as
 * cb_topk_ref() orders them, in four steps without a data-dependent branch
 * on the usual inputs:
 *
 * 1. Keys.  NaN becomes -inf (vmaxps returns its second operand for NaN),
 *    then the float bits become a signed int that orders like the float,
 *    with -0.0 and 0.0 the same key (negatives map to minus their
 *    magnitude), so integer min/max/compare (1 cycle) do the rest.
 * 2. Threshold.  Lane g of the vertical max over the 16-lane vectors is
 *    the maximum of group g (elements g, g + 16, ...).  The 8th largest of
 *    those 16 maxima, T, is reached by 8 >= k distinct elements, so the top
 *    k are all >= T.  A bitonic network sorts the two 8-lane halves in
 *    opposite directions; the lane-wise max of the halves is then the top 8,
 *    and their min is T.  For 64 random logits about 10 elements are >= T
 *    (16 or fewer in 99.95% of rows); more than 16 go to cb_topk_base().
 * 3. Compaction.  Each vector's candidates are compressed (index with the
 *    sign bit set to mark a filled lane) and the pieces are joined by
 *    vpexpandd into the lanes still empty, in index order; the keys follow
 *    by permutes (n <= 64) or by the same compress/expand chain.
 * 4. Rank.  rank(i) = #{j : K_j > K_i} with K_j broadcast from memory (a
 *    load, not a port-5 permute), over the c real j only.  Without
 *    ties the ranks are a permutation and one scatter of the lane numbers
 *    by rank inverts it; a tie leaves a hole in that scatter, and then the
 *    exact rank(i) = #{j < i : K_j >= K_i} + #{j > i : K_j > K_i} (ties to
 *    the lower index) is counted with 15 rotations of [K | K + 1] instead.
 * Empty lanes get a key below every real key, so they never count.
 */
#define TK_MAX_N 256	/* the fast path's reach; beyond, cb_topk_base() */
#define TK_SIGN (-0x7fffffff - 1)	/* 0x80000000 as an int: below every key */

static const int avx512_tk_iota[16] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
};

/*
 * 16 logits from p (only the first left > 0 of them when left < 16): the
 * values with NaN as -inf in *xf, the int keys as the result, the lowest
 * key in the lanes past the end (they are never candidates either).
 */
static inline CB_ALWAYS_INLINE __m512i avx512_tk_load(const float *p, int left, __m512 *xf)
{
	const __m512i sign = _mm512_set1_epi32(TK_SIGN);
	__mmask16 lm = left >= 16 ? 0xffff : left > 0 ? (__mmask16)((1u << left) - 1) : 0;
	__m512i b;

	*xf = _mm512_max_ps(_mm512_maskz_loadu_ps(lm, p), _mm512_set1_ps(-__builtin_inff()));
	b = _mm512_castps_si512(*xf);
	/* negative: 0x80000000 - bits = -magnitude, so -0.0 -> 0 like 0.0 */
	return _mm512_mask_mov_epi32(sign, lm, _mm512_mask_sub_epi32(b, _mm512_movepi32_mask(b),
								   sign, b));
}

/*
 * The 8th largest of the 16 lanes of v, in every lane: a bitonic sort of
 * lanes 0..7 ascending and 8..15 descending (the first three merge levels
 * of a 16-lane bitonic sort; a lane takes the max of its pair where the
 * mask bit is set), the lane-wise max of the two halves (the top 8), and
 * the min of those.
 */
static inline CB_ALWAYS_INLINE __m512i avx512_tk_top8_min(__m512i v)
{
#define TK_STEP(perm, maxlanes) do {					\
		__m512i p_ = (perm);					\
		v = _mm512_mask_blend_epi32((maxlanes), _mm512_min_epi32(v, p_), \
					    _mm512_max_epi32(v, p_));	\
	} while (0)
	TK_STEP(_mm512_shuffle_epi32(v, _MM_PERM_CDAB), 0x6666);	/* pairs i ^ 1 */
	TK_STEP(_mm512_shuffle_epi32(v, _MM_PERM_BADC), 0x3c3c);	/* i ^ 2 */
	TK_STEP(_mm512_shuffle_epi32(v, _MM_PERM_CDAB), 0x5a5a);
	TK_STEP(_mm512_shuffle_i32x4(v, v, 0xb1), 0x0ff0);		/* i ^ 4 */
	TK_STEP(_mm512_shuffle_epi32(v, _MM_PERM_BADC), 0x33cc);
	TK_STEP(_mm512_shuffle_epi32(v, _MM_PERM_CDAB), 0x55aa);
#undef TK_STEP
	v = _mm512_max_epi32(v, _mm512_shuffle_i32x4(v, v, 0x4e));
	v = _mm512_min_epi32(v, _mm512_shuffle_i32x4(v, v, 0xb1));
	v = _mm512_min_epi32(v, _mm512_shuffle_epi32(v, _MM_PERM_BADC));
	return _mm512_min_epi32(v, _mm512_shuffle_epi32(v, _MM_PERM_CDAB));
}

/* Candidate indices of vector q, sign bit set, packed to the low lanes. */
static inline CB_ALWAYS_INLINE __m512i avx512_tk_cidx(__mmask16 cm, int q)
{
	__m512i idx = _mm512_add_epi32(_mm512_loadu_si512(avx512_tk_iota),
				       _mm512_set1_epi32(16 * q));

	return _mm512_maskz_compress_epi32(cm, _mm512_or_si512(idx,
							       _mm512_set1_epi32(TK_SIGN)));
}

/*
 * Steps 4 and the output, for the c <= 16 candidates: idx holds their
 * indices (sign bit set) and key their keys in lanes 0..c-1, in index
 * order.  The values come from xf (n <= 64: the four vectors) or, with xf
 * NULL, from memory.
 */
static inline CB_ALWAYS_INLINE void avx512_tk_rank(__m512i idx, __m512i key, int c,
						   const __m512 *xf, const float *logits,
						   int k, cb_u32 *ids, float *vals)
{
	const __m512i iota = _mm512_loadu_si512(avx512_tk_iota);
	const __m512i one = _mm512_set1_epi32(1);
	const __mmask16 km = (__mmask16)((1u << k) - 1);
	__mmask16 filled = _mm512_movepi32_mask(idx);
	__m512i ra, rb, lane;
	__m512 v;
	int kb[16], pos[16];
	int j;

	idx = _mm512_andnot_si512(_mm512_set1_epi32(TK_SIGN), idx);
	/* empty lanes: below any real key (>= -0x7f800000), so never counted */
	key = _mm512_mask_mov_epi32(_mm512_set1_epi32(TK_SIGN), filled, key);
	/*
	 * rank by K_i < K_j over the c real j, two chains; the asm keeps kb[j]
	 * a load operand.  c is 9 to 12 in nine rows of ten.
	 */
	_mm512_storeu_si512(kb, key);
	__asm__("" : "+m"(kb));
	ra = _mm512_setzero_si512();
	rb = _mm512_setzero_si512();
#define TK_RANK4(j0) do {						\
		int j_;							\
		_Pragma("GCC unroll 4")					\
		for (j_ = (j0); j_ < (j0) + 4; j_ += 2) {		\
			ra = _mm512_mask_add_epi32(ra, _mm512_cmplt_epi32_mask(key, \
						   _mm512_set1_epi32(kb[j_])), ra, one); \
			rb = _mm512_mask_add_epi32(rb, _mm512_cmplt_epi32_mask(key, \
						   _mm512_set1_epi32(kb[j_ + 1])), rb, one); \
		}							\
	} while (0)
	TK_RANK4(0);
	TK_RANK4(4);
	if (c > 8)
		TK_RANK4(8);
	if (c > 12)
		TK_RANK4(12);
#undef TK_RANK4
	/* the c real lanes rank 0..c-1, each once unless there is a tie */
	_mm512_storeu_si512(pos, _mm512_set1_epi32(-1));
	_mm512_mask_i32scatter_epi32(pos, filled, _mm512_add_epi32(ra, rb), iota, 4);
	lane = _mm512_loadu_si512(pos);
	if (_mm512_mask_cmplt_epi32_mask(filled, lane, _mm512_setzero_si512())) {
		/* a tie: rotate [K | K + 1] so that j < i compares as >= */
		__m512i k1 = _mm512_add_epi32(key, one);

		ra = _mm512_setzero_si512();
		for (j = 1; j < 16; j++) {
			__m512i p = _mm512_permutex2var_epi32(key, _mm512_add_epi32(iota,
							      _mm512_set1_epi32(j)), k1);

			ra = _mm512_mask_add_epi32(ra, _mm512_cmpgt_epi32_mask(p, key), ra, one);
		}
		_mm512_i32scatter_epi32(pos, ra, iota, 4);
		lane = _mm512_loadu_si512(pos);
	}

	/* lane of rank r -> expert id and value */
	idx = _mm512_permutexvar_epi32(lane, idx);
	if (xf)
		v = _mm512_mask_blend_ps(_mm512_test_epi32_mask(idx, _mm512_set1_epi32(32)),
					 _mm512_permutex2var_ps(xf[0], idx, xf[1]),
					 _mm512_permutex2var_ps(xf[2], idx, xf[3]));
	else
		v = _mm512_max_ps(_mm512_mask_i32gather_ps(_mm512_setzero_ps(), km, idx, logits, 4),
				  _mm512_set1_ps(-__builtin_inff()));
	if (k == 8) {
		/* whole stores: a masked store would not forward to the reader */
		_mm256_storeu_si256((__m256i *)ids, _mm512_castsi512_si256(idx));
		_mm256_storeu_ps(vals, _mm512_castps512_ps256(v));
	} else {
		_mm512_mask_storeu_epi32(ids, km, idx);
		_mm512_mask_storeu_ps(vals, km, v);
	}
}

/*
 * n <= 64: four vectors (the lanes past n masked off), a tree of joins
 * and the keys by two permutes.  Returns 0, having written nothing, when
 * more than 16 candidates pass the threshold.
 */
static inline CB_ALWAYS_INLINE int avx512_topk_64(const float *logits, int n, int k,
						  cb_u32 *ids, float *vals)
{
	__m512 xf[4];
	__m512i x[4], t, c0, c1, c2, c3, i01, i23, idx, key;
	__mmask16 cm[4];
	int q, c = 0;

#pragma GCC unroll 4
	for (q = 0; q < 4; q++)
		x[q] = avx512_tk_load(logits + 16 * q, n - 16 * q, &xf[q]);
	t = avx512_tk_top8_min(_mm512_max_epi32(_mm512_max_epi32(x[0], x[1]),
						_mm512_max_epi32(x[2], x[3])));
#pragma GCC unroll 4
	for (q = 0; q < 4; q++) {
		/* lanes past n hold the lowest key: >= t only if t is that key */
		cm[q] = _mm512_mask_cmpge_epi32_mask(n - 16 * q >= 16 ? 0xffff :
						     n - 16 * q > 0 ?
						     (__mmask16)((1u << (n - 16 * q)) - 1) : 0,
						     x[q], t);
		c += __builtin_popcount(cm[q]);
	}
	if (c > 16)
		return 0;
	c0 = avx512_tk_cidx(cm[0], 0);
	c1 = avx512_tk_cidx(cm[1], 1);
	c2 = avx512_tk_cidx(cm[2], 2);
	c3 = avx512_tk_cidx(cm[3], 3);
	i01 = _mm512_mask_expand_epi32(c0, (__mmask16)~_mm512_movepi32_mask(c0), c1);
	i23 = _mm512_mask_expand_epi32(c2, (__mmask16)~_mm512_movepi32_mask(c2), c3);
	idx = _mm512_mask_expand_epi32(i01, (__mmask16)~_mm512_movepi32_mask(i01), i23);
	key = _mm512_mask_blend_epi32(_mm512_test_epi32_mask(idx, _mm512_set1_epi32(32)),
				      _mm512_permutex2var_epi32(x[0], idx, x[1]),
				      _mm512_permutex2var_epi32(x[2], idx, x[3]));
	avx512_tk_rank(idx, key, c, xf, logits, k, ids, vals);
	return 1;
}

/*
 * 64 < n <= 256: the same in two passes over memory (the keys are cheap to
 * make again; keeping 16 vectors would not fit a kernel stack frame), with
 * a chain of joins.
 */
static CB_NOINLINE int
avx512_topk_wide(const float *logits, int n, int k, cb_u32 *ids, float *vals)
{
	int nv = (n + 15) / 16, q, c = 0;
	__m512i m, t, idx, key;
	__m512 xf;

	m = avx512_tk_load(logits, 16, &xf);
	for (q = 1; q < nv; q++)
		m = _mm512_max_epi32(m, avx512_tk_load(logits + 16 * q, n - 16 * q, &xf));
	t = avx512_tk_top8_min(m);
	idx = _mm512_setzero_si512();
	key = _mm512_setzero_si512();
	for (q = 0; q < nv; q++) {
		int left = n - 16 * q;
		__mmask16 lm = left >= 16 ? 0xffff : (__mmask16)((1u << left) - 1);
		__m512i x = avx512_tk_load(logits + 16 * q, left, &xf);
		__mmask16 cm = _mm512_mask_cmpge_epi32_mask(lm, x, t);
		__mmask16 empty = (__mmask16)~_mm512_movepi32_mask(idx);

		c += __builtin_popcount(cm);
		if (c > 16)
			return 0;
		idx = _mm512_mask_expand_epi32(idx, empty, avx512_tk_cidx(cm, q));
		key = _mm512_mask_expand_epi32(key, empty, _mm512_maskz_compress_epi32(cm, x));
	}
	avx512_tk_rank(idx, key, c, CB_NULL, logits, k, ids, vals);
	return 1;
}

static void avx512_topk_f32(const float *logits, int n, int k, cb_u32 *ids, float *vals)
{
	if (k >= 1 && k <= 8 && n >= k) {
		if (n == 64 && k == 8) {	/* the common router shape, all constant */
			if (avx512_topk_64(logits, 64, 8, ids, vals))
				return;
		} else if (n <= 64) {
			if (avx512_topk_64(logits, n, k, ids, vals))
				return;
		} else if (n <= TK_MAX_N) {
			if (avx512_topk_wide(logits, n, k, ids, vals))
				return;
		}
	}
	cb_topk_base(logits, n, k, ids, vals);
}

/*
 * What the two AVX-512 variants share: the cost of a multiply-add of each
 * gemm (gemm_ps: the forward pass sizes gemm chunks with it), the
 * activation quantizers and the vector ops.  Their gemms and packed tiles
 * differ (VNNI's dpbusd ones).
 */
/* delta_step_f32: 150 to 190 ps an element measured (AVX2's: 155 to 260) */
#define DELTA_PS_AVX512 200
#define CB_AVX512_SHARED_OPS \
	.gemm_ps = { \
		[CB_DT_F32] = 200, \
		[CB_DT_F16] = 100, \
		[CB_DT_BF16] = 100, \
		[CB_DT_Q8_0] = 60, \
		[CB_DT_Q4_0] = 60, \
		[CB_DT_Q4_1] = 80, \
		[CB_DT_Q5_0] = 100, \
		[CB_DT_Q5_1] = 100, \
		[CB_DT_IQ4_NL] = 80, \
		[CB_DT_Q2_K] = 50, \
		[CB_DT_Q3_K] = 60, \
		[CB_DT_Q4_K] = 60, \
		[CB_DT_Q5_K] = 80, \
		[CB_DT_Q6_K] = 80, \
		[CB_DT_IQ4_XS] = 80, \
		[CB_DT_MXFP4] = 80, \
	}, \
	.delta_ps = DELTA_PS_AVX512, \
	CB_X86_VECTOR_OPS(avx512),

const struct cb_isa_ops cb_isa_avx512 = {
	.level = CB_ISA_AVX512,
	.valid = cb_isa_avx512_valid,
	.gemm = {
		CB_X86_FLOAT_GEMMS,
		[CB_DT_Q8_0] = avx512_gemm_q8_0,
		[CB_DT_Q4_0] = avx512_gemm_q4_0,
		CB_GEMM_Q_TABLE_NO_Q46(avx512),
		/* M >= 2: the AVX2 few-token tiles (cb_kq_few_avx2.c) */
		[CB_DT_Q4_K] = cb_avx512_gemm_few_q4_K,
		[CB_DT_Q6_K] = cb_avx512_gemm_few_q6_K,
	},
	.gemm_pk = {
		[CB_DT_Q8_0] = cb_avx2_gemm_pk_q8_0,
		[CB_DT_Q4_0] = cb_avx2_gemm_pk_q4_0,
		[CB_DT_Q4_K] = cb_avx2_gemm_pk_q4_K,
	},
	.pk_min_m = {
		[CB_DT_Q4_K] = 4,	/* as the avx2 variant's */
	},
	.pack_q8_0 = cb_avx2_pack_q8_0,
	.pack_q8_K = cb_avx2_pack_q8_K,
	CB_AVX512_SHARED_OPS
};

const struct cb_isa_ops cb_isa_avx512_vnni = {
	.level = CB_ISA_AVX512_VNNI,
	.valid = cb_isa_avx512_vnni_valid,
	.gemm = {
		CB_X86_FLOAT_GEMMS,
		[CB_DT_Q8_0] = avx512_gemm_q8_0_vnni_m,
		[CB_DT_Q4_0] = avx512_gemm_q4_0_vnni_m,
		CB_GEMM_Q_TABLE(avx512_vnni),
	},
	.gemm_pk = {
		[CB_DT_Q8_0] = cb_avx512_vnni_gemm_pk_q8_0,
		[CB_DT_Q4_0] = cb_avx512_vnni_gemm_pk_q4_0,
		[CB_DT_Q4_K] = cb_avx512_vnni_gemm_pk_q4_K,
		/* from M = 2 (no pk_min_m): bench-gemm k = 2048, 137 vs 107 Gop/s */
		[CB_DT_Q5_K] = cb_avx512_vnni_gemm_pk_q5_K,
		[CB_DT_Q6_K] = cb_avx512_vnni_gemm_pk_q6_K,
	},
	.pack_q8_0 = cb_avx512_vnni_pack_q8_0,
	.pack_q8_K = cb_avx512_vnni_pack_q8_K,
	CB_AVX512_SHARED_OPS
};
#endif /* __CHECKER__ */
