// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_ops_scalar.c - the reference ISA variant: plain C, always valid.
 *
 * Every SIMD variant is tested against these functions.  They are written
 * for clarity, with one rule the SIMD variants share: float weight types
 * accumulate in f32 (each weight converted exactly to f32 first), block
 * types take an exact integer dot product per 32-block and then add
 * isum * (d_w * d_x) to an f32 sum, as ggml does.  The SIMD variants
 * differ from these only in the order of the f32 additions.
 *
 * The router top-k is here too: the insertion reference every variant's
 * topk_f32 matches, and the x86-64 baseline (SSE2, no dispatch) that is this
 * variant's op and the other variants' fallback.
 */
#include "core/cb_engine.h"
#include "ops/cb_math.h"
#include "ops/cb_ops.h"
#include "ops/cb_ops_q.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/*
 * The float weight types: out[m][r] = sum over i, in order, of w[r][i] *
 * x[m][i], one f32 accumulator per (row, token), each weight converted
 * exactly to f32 first.  Tokens go four at a time so that a weight is
 * converted once per four products and four independent sums hide the add
 * latency; the sum of each (row, token) is the same one chain either way.
 */
#define F_TILE 4

static inline CB_ALWAYS_INLINE float w_f32(const void *w, int i)
{
	return ((const float *)w)[i];
}

static inline CB_ALWAYS_INLINE float w_f16(const void *w, int i)
{
	return cb_half_to_f32(((const cb_u16 *)w)[i]);
}

static inline CB_ALWAYS_INLINE float w_bf16(const void *w, int i)
{
	return cb_bfloat_to_f32(((const cb_u16 *)w)[i]);
}

/* One weight row against mt <= F_TILE tokens (mt constant once inlined). */
static inline CB_ALWAYS_INLINE void f_row(float *out, cb_size ldo, const void *wr,
					  float (*wget)(const void *, int),
					  const char *act, cb_size as, int mt, int k)
{
	const float *x[F_TILE];
	float sum[F_TILE];
	int i, m;

#pragma GCC unroll 4
	for (m = 0; m < F_TILE; m++) {
		x[m] = (const float *)(act + (m < mt ? m : 0) * as);
		sum[m] = 0.0f;
	}
	for (i = 0; i < k; i++) {
		float wi = wget(wr, i);

#pragma GCC unroll 4
		for (m = 0; m < F_TILE; m++)
			if (m < mt)
				sum[m] += wi * x[m][i];
	}
#pragma GCC unroll 4
	for (m = 0; m < F_TILE; m++)
		if (m < mt)
			out[m * ldo] = sum[m];
}

static inline CB_ALWAYS_INLINE void f_gemm(float *out, cb_size ldo, const void *w,
					   cb_size w_row_bytes, const char *act,
					   cb_size as, int M, int nrows, int k,
					   float (*wget)(const void *, int))
{
	int r, m;

	for (r = 0; r < nrows; r++) {
		const void *wr = (const char *)w + r * w_row_bytes;

		for (m = 0; m + F_TILE <= M; m += F_TILE)
			f_row(out + m * ldo + r, ldo, wr, wget, act + m * as, as, F_TILE, k);
		if (M - m == 3)
			f_row(out + m * ldo + r, ldo, wr, wget, act + m * as, as, 3, k);
		else if (M - m == 2)
			f_row(out + m * ldo + r, ldo, wr, wget, act + m * as, as, 2, k);
		else if (M - m == 1)
			f_row(out + m * ldo + r, ldo, wr, wget, act + m * as, as, 1, k);
	}
}

static void gemm_f32(float *out, cb_size ldo, const void *w, cb_size w_row_bytes,
		     const void *act, cb_size act_stride, int M, int nrows, int k)
{
	f_gemm(out, ldo, w, w_row_bytes, act, act_stride, M, nrows, k, w_f32);
}

static void gemm_f16(float *out, cb_size ldo, const void *w, cb_size w_row_bytes,
		     const void *act, cb_size act_stride, int M, int nrows, int k)
{
	f_gemm(out, ldo, w, w_row_bytes, act, act_stride, M, nrows, k, w_f16);
}

static void gemm_bf16(float *out, cb_size ldo, const void *w, cb_size w_row_bytes,
		      const void *act, cb_size act_stride, int M, int nrows, int k)
{
	f_gemm(out, ldo, w, w_row_bytes, act, act_stride, M, nrows, k, w_bf16);
}

/* Integer dot product of one weight block with one q8_0 activation block. */
static int block_dot_q8_0(const struct cb_block_q8_0 *w, const struct cb_block_q8_0 *x)
{
	int isum = 0, j;

	for (j = 0; j < CB_QK; j++)
		isum += w->qs[j] * x->qs[j];
	return isum;
}

/* Low nibbles are weights 0..15, high nibbles 16..31, both offset by 8. */
static int block_dot_q4_0(const struct cb_block_q4_0 *w, const struct cb_block_q8_0 *x)
{
	int isum = 0, j;

	for (j = 0; j < CB_QK / 2; j++) {
		int lo = (w->qs[j] & 0x0f) - 8;
		int hi = (w->qs[j] >> 4) - 8;

		isum += lo * x->qs[j] + hi * x->qs[j + CB_QK / 2];
	}
	return isum;
}

/*
 * Block-quantized weights against q8_0 activations, the way ggml does it:
 * an integer dot per block, scaled by both block scales, summed in f32.
 */
#define DEFINE_GEMM_Q(name, wblock, block_dot)					\
static void name(float *out, cb_size ldo, const void *w, cb_size w_row_bytes,	\
		 const void *act, cb_size act_stride, int M, int nrows, int k)	\
{										\
	int nb = k / CB_QK, r, m, b;						\
										\
	for (r = 0; r < nrows; r++) {						\
		const wblock *wb = (const void *)((const char *)w +		\
						  r * w_row_bytes);		\
										\
		for (m = 0; m < M; m++) {					\
			const struct cb_block_q8_0 *xb = (const void *)		\
				((const char *)act + m * act_stride);		\
			float sum = 0.0f;					\
										\
			for (b = 0; b < nb; b++)				\
				sum += (float)block_dot(&wb[b], &xb[b]) *	\
				       (cb_f16_to_f32(wb[b].d) *		\
					cb_f16_to_f32(xb[b].d));		\
			out[m * ldo + r] = sum;					\
		}								\
	}									\
}

DEFINE_GEMM_Q(gemm_q8_0, struct cb_block_q8_0, block_dot_q8_0)
DEFINE_GEMM_Q(gemm_q4_0, struct cb_block_q4_0, block_dot_q4_0)

static void axpy_f32(float *y, float a, const float *x, int n)
{
	int i;

	for (i = 0; i < n; i++)
		y[i] += a * x[i];
}

static void pv_f32(float *o, cb_size ldo, const float *p, cb_size ldp, const float *v,
		   cb_size ldv, int ng, int n, int w)
{
	int g, i;

	for (g = 0; g < ng; g++)
		for (i = 0; i < n; i++)
			axpy_f32(o + g * ldo, p[g * ldp + i], v + i * ldv, w);
}

static void delta_step_f32(float *S, cb_size ld, int k, int n, const float *kk,
			   const float *q, const float *v, float dec, float beta, float *o,
			   float *tmp)
{
	int i, j;

	for (j = 0; j < n; j++)
		tmp[j] = 0.0f;
	for (i = 0; i < k; i++) {
		float *s = S + i * ld;

		for (j = 0; j < n; j++) {
			s[j] *= dec;
			tmp[j] += s[j] * kk[i];
		}
	}
	for (j = 0; j < n; j++) {
		tmp[j] = (v[j] - tmp[j]) * beta;
		o[j] = 0.0f;
	}
	for (i = 0; i < k; i++) {
		float *s = S + i * ld;

		for (j = 0; j < n; j++) {
			s[j] += tmp[j] * kk[i];
			o[j] += s[j] * q[i];
		}
	}
}

/* --- router top-k ---------------------------------------------------------------- */

/* Insert x (index i) into the sorted v/id of length k, dropping the last. */
static inline void topk_insert(float *v, cb_u32 *id, int k, float x, cb_u32 i)
{
	int j;

	/* strictly greater moves up: an equal earlier value stays ahead */
	for (j = k - 1; j > 0 && x > v[j - 1]; j--) {
		v[j] = v[j - 1];
		id[j] = id[j - 1];
	}
	v[j] = x;
	id[j] = i;
}

/*
 * The reference selection: one pass of insertion into a k-long sorted
 * buffer.  After the first k, elements are screened eight at a time against
 * the current k-th value and only the survivors (about k * ln(n / k) for
 * random logits) are inserted.  Any n and k; NaN counts as -infinity.  Its
 * data-dependent insertion loops mispredict about once per survivor, which
 * is what the SSE2 path below avoids.
 */
static void topk_insertion(const float *logits, int n, int k, cb_u32 *ids, float *vals)
{
	/* local copies: no aliasing with logits, the threshold stays in a register */
	float v[CB_MAX_TOP_K], thr;
	cb_u32 id[CB_MAX_TOP_K];
	int i, j, have;

	if (k > CB_MAX_TOP_K)
		k = CB_MAX_TOP_K;
	if (k <= 0)
		return;
	have = CB_MIN(k, n);
	for (i = 0; i < k; i++) {
		v[i] = -__builtin_inff();
		id[i] = 0;
	}
	/* the first k fill the buffer (insertion into the first i + 1 slots) */
	for (i = 0; i < have; i++) {
		float x = logits[i] == logits[i] ? logits[i] : -__builtin_inff();

		topk_insert(v, id, i + 1, x, (cb_u32)i);
	}
	thr = v[k - 1];
	for (; i + 8 <= n; i += 8) {
		unsigned int mask = 0;

		for (j = 0; j < 8; j++)
			mask |= (unsigned int)(logits[i + j] > thr) << j;
		while (mask) {
			float x;

			j = __builtin_ctz(mask);
			mask &= mask - 1;
			x = logits[i + j];
			if (x > thr) {	/* thr may have risen since the mask */
				topk_insert(v, id, k, x, (cb_u32)(i + j));
				thr = v[k - 1];
			}
		}
	}
	for (; i < n; i++)
		if (logits[i] > thr) {
			topk_insert(v, id, k, logits[i], (cb_u32)i);
			thr = v[k - 1];
		}
	for (i = 0; i < k; i++) {
		vals[i] = i < have ? v[i] : 0.0f;
		ids[i] = i < have ? id[i] : 0;
	}
}

#ifdef __SSE2__
#define TOPK_MAX_N 256		/* fast path: n <= this, n % 4 == 0 */
#define TOPK_MAX_CAND 64	/* fast path: at most this many candidates */

/*
 * Fast path for the common router shapes.  Split the n logits into at
 * least k groups; the smallest of the group maxima, T, is a value at least
 * k distinct elements reach, so the top k are all >= T.  Gather those
 * candidates (typically about 2k) in index order and rank each one against
 * all the others in SIMD:
 *   rank(i) = #{j < i : v_j >= v_i} + #{j > i : v_j > v_i}
 * which is exactly its place in the reference order (descending, ties to
 * the lower index), without a single data-dependent branch.  Returns 0 if
 * it declined (NaN present, odd shape, too many candidates), and the
 * caller runs the reference then.
 */
static int topk_sse2(const float *logits, int n, int k, cb_u32 *ids, float *vals)
{
	float cv[TOPK_MAX_CAND] CB_ALIGNED(16);
	float ov[CB_MAX_TOP_K + 1];	/* slot k takes every rank >= k */
	cb_u32 cid[TOPK_MAX_CAND], oid[CB_MAX_TOP_K + 1];
	cb_u64 mask[TOPK_MAX_N / 64];
	__m128 bad = _mm_setzero_ps(), thr = _mm_set1_ps(__builtin_inff());
	__m128 V[TOPK_MAX_CAND / 4];
	__m128i L[TOPK_MAX_CAND / 4];
	int nv = n / 4, nb = (k + 3) / 4, g, q, i, w, c = 0, nq;

	if (n % 4 || n > TOPK_MAX_N || nv < k)
		return 0;
	/*
	 * T = min over >= k groups of the group's max; NaN anywhere: decline.
	 * A group is one lane of a block of consecutive vectors, so a block's
	 * four group maxima are one vertical max; ceil(k / 4) blocks.
	 */
	for (g = 0; g < nb; g++) {
		int v0 = g * nv / nb, v1 = (g + 1) * nv / nb;
		__m128 m = _mm_loadu_ps(logits + 4 * v0);

		bad = _mm_or_ps(bad, _mm_cmpunord_ps(m, m));
		for (q = v0 + 1; q < v1; q++) {
			__m128 x = _mm_loadu_ps(logits + 4 * q);

			bad = _mm_or_ps(bad, _mm_cmpunord_ps(x, x));
			m = _mm_max_ps(m, x);
		}
		thr = _mm_min_ps(thr, m);
	}
	thr = _mm_min_ps(thr, _mm_shuffle_ps(thr, thr, 0x4e));
	thr = _mm_min_ps(thr, _mm_shuffle_ps(thr, thr, 0xb1));
	if (_mm_movemask_ps(bad))
		return 0;
	/* a register per mask word: or-ing into memory would chain the stores */
	for (w = 0; w < (nv + 15) / 16; w++) {
		cb_u64 m = 0;

		for (q = 16 * w; q < nv && q < 16 * w + 16; q++)
			m |= (cb_u64)_mm_movemask_ps(_mm_cmpge_ps(_mm_loadu_ps(logits + 4 * q),
								  thr)) << (4 * (q % 16));
		mask[w] = m;
	}
	for (w = 0; w < (nv + 15) / 16; w++)
		for (; mask[w]; mask[w] &= mask[w] - 1) {
			if (c == TOPK_MAX_CAND)
				return 0;
			i = 64 * w + __builtin_ctzll(mask[w]);
			cv[c] = logits[i];
			cid[c++] = (cb_u32)i;
		}
	nq = (c + 3) / 4;
	for (i = c; i < 4 * nq; i++)
		cv[i] = __builtin_nanf("");	/* compares false with everything */
	for (q = 0; q < nq; q++) {
		V[q] = _mm_load_ps(cv + 4 * q);
		L[q] = _mm_setr_epi32(4 * q, 4 * q + 1, 4 * q + 2, 4 * q + 3);
	}
	/*
	 * Candidates before i count when >= v_i, those after it when > v_i:
	 * whole vectors on either side take one compare each, only the vector
	 * holding i needs the lane mask.
	 */
	for (i = 0; i < c; i++) {
		__m128 b = _mm_set1_ps(cv[i]);
		__m128i before = _mm_cmplt_epi32(L[i / 4], _mm_set1_epi32(i));
		__m128i acc = _mm_or_si128(
			_mm_and_si128(before, _mm_castps_si128(_mm_cmpge_ps(V[i / 4], b))),
			_mm_andnot_si128(before, _mm_castps_si128(_mm_cmpgt_ps(V[i / 4], b))));
		int r;

		acc = _mm_sub_epi32(_mm_setzero_si128(), acc);
		for (q = 0; q < i / 4; q++)
			acc = _mm_sub_epi32(acc, _mm_castps_si128(_mm_cmpge_ps(V[q], b)));
		for (q = i / 4 + 1; q < nq; q++)
			acc = _mm_sub_epi32(acc, _mm_castps_si128(_mm_cmpgt_ps(V[q], b)));
		acc = _mm_add_epi32(acc, _mm_shuffle_epi32(acc, 0x4e));
		acc = _mm_add_epi32(acc, _mm_shuffle_epi32(acc, 0xb1));
		r = _mm_cvtsi128_si32(acc);
		r = r < k ? r : k;
		ov[r] = cv[i];
		oid[r] = cid[i];
	}
	for (i = 0; i < k; i++) {
		vals[i] = ov[i];
		ids[i] = oid[i];
	}
	return 1;
}
#endif

/**
 * cb_topk_ref() - the reference selection every topk_f32 op matches.
 * @logits: the values to choose from, [n].
 * @n: number of values.
 * @k: how many to choose (at most CB_MAX_TOP_K are written).
 * @ids: out, [k], indices of the chosen values in rank order.
 * @vals: out, [k], the chosen values.
 *
 * Descending order, ties to the lower index, NaN counts as -infinity (and
 * is returned as -infinity); -0.0 and 0.0 are equal, so the lower index
 * wins, and each keeps its own sign in @vals.  With n < k the slots past n
 * get id 0 and value 0.0.
 */
void cb_topk_ref(const float *logits, int n, int k, cb_u32 *ids, float *vals)
{
	topk_insertion(logits, n, k, ids, vals);
}

/**
 * cb_topk_base() - the x86-64 baseline selection, same results as the reference.
 * @logits: the values to choose from, [n].
 * @n: number of values.
 * @k: how many to choose.
 * @ids: out, [k], indices of the chosen values in rank order.
 * @vals: out, [k], the chosen values.
 *
 * The scalar variant's topk_f32 op and the fallback of the others: for 64
 * experts, k = 8 the SSE2 path is about 2.8x faster than the reference
 * (docs/performance.md).
 */
void cb_topk_base(const float *logits, int n, int k, cb_u32 *ids, float *vals)
{
#ifdef __SSE2__
	if (k >= 1 && k <= CB_MAX_TOP_K && topk_sse2(logits, n, k, ids, vals))
		return;
#endif
	topk_insertion(logits, n, k, ids, vals);
}

const struct cb_isa_ops cb_isa_scalar = {
	.level = CB_ISA_SCALAR,
	.valid = cb_isa_scalar_valid,
	.gemm = {
		[CB_DT_F32] = gemm_f32,
		[CB_DT_F16] = gemm_f16,
		[CB_DT_BF16] = gemm_bf16,
		[CB_DT_Q8_0] = gemm_q8_0,
		[CB_DT_Q4_0] = gemm_q4_0,
		CB_GEMM_Q_TABLE(scalar),
	},
	.gemm_ps = {
		[CB_DT_F32] = 1200,
		[CB_DT_F16] = 1500,
		[CB_DT_BF16] = 1000,
		[CB_DT_Q8_0] = 400,
		[CB_DT_Q4_0] = 350,
		[CB_DT_Q4_1] = 390,
		[CB_DT_Q5_0] = 720,
		[CB_DT_Q5_1] = 750,
		[CB_DT_IQ4_NL] = 830,
		[CB_DT_Q2_K] = 260,
		[CB_DT_Q3_K] = 330,
		[CB_DT_Q4_K] = 210,
		[CB_DT_Q5_K] = 340,
		[CB_DT_Q6_K] = 250,
		[CB_DT_IQ4_XS] = 550,
		[CB_DT_MXFP4] = 830,
	},
	.delta_ps = 1700,	/* 1530 to 1620 measured */
	.quantize_act = {
		[CB_ACT_Q8_0] = cb_quantize_row_q8_0_ref,
		[CB_ACT_Q8_1] = cb_quantize_row_q8_1_ref,
		[CB_ACT_Q8_K] = cb_quantize_row_q8_K_ref,
	},
	.axpy_f32 = axpy_f32,
	.pv_f32 = pv_f32,
	.delta_step_f32 = delta_step_f32,
	.topk_f32 = cb_topk_base,
	.swiglu_f32 = cb_swiglu,
	.swiglu_oss_f32 = cb_swiglu_oss,
	.expf_sub_f32 = cb_expf_sub,
};
