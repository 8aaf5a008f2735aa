/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_ops.h - the engine's ISA variants, the lib/raid6 way.
 *
 * One small ops table per ISA (scalar reference, AVX2+FMA+F16C, AVX-512,
 * AVX-512 with VNNI), one list in order of preference, one chosen at init
 * (enum cb_isa_level in cb_engine.h).  Every variant of
 * every op is tested against the scalar one (tests/unit/).
 *
 * FPU-side header: only engine objects (compiled with FPU flags in the
 * kernel) include it.  Non-FPU kernel code uses cb_engine.h.
 */
#ifndef CB_OPS_H
#define CB_OPS_H

#include "core/cb_engine.h"

/*
 * gemm_fn: out[m * ldo + r] = sum_i W[r][i] * act_m[i]
 *   for r in [0, nrows), m in [0, M).
 * W:   nrows rows of k elements of the op's weight type, row r at
 *      w + r * w_row_bytes (bytes).
 * act: M activation rows, row m at act + m * act_stride (bytes), in the
 *      form the weight type reads (cb_dtype_act(): f32 for the float types,
 *      q8_0, q8_1 or q8_K blocks from quantize_act[] for the block types).
 * ldo: in floats.  No alignment is required of any pointer or stride.
 * A row's result does not depend on nrows, M or where the call starts
 * (same variant), so any split into chunks gives identical outputs.
 * k is a whole number of the weight type's blocks (cb_dtype_info(): 32 or
 * 256 for the block types, 1 for the float types).
 * Each weight row is read from memory once for all M activations.
 */
typedef void (*cb_gemm_fn)(float *out, cb_size ldo, const void *w,
			   cb_size w_row_bytes, const void *act,
			   cb_size act_stride, int M, int nrows, int k);

struct cb_isa_ops {
	enum cb_isa_level level;
	int (*valid)(void);	/* all CPU features present? (cb_isa_valid.c) */

	cb_gemm_fn gemm[CB_DT__COUNT];
	/*
	 * What one multiply-add of each gemm costs this variant, in ps, with
	 * one token (the slowest case: no weight reuse, the weights streamed
	 * from memory), as measured on the reference machine (docs/kernel.md):
	 * the forward pass sizes gemm chunks with it.
	 */
	cb_u16 gemm_ps[CB_DT__COUNT];
	/*
	 * What one element of a DeltaNet state costs delta_step_f32 for one
	 * token (both passes), in ps, measured alike: the rounds of
	 * cb_delta.c are sized with it.
	 */
	cb_u16 delta_ps;
	/*
	 * Optional (NULL: none), for calls of M >= 2: gemm_pk[dt] is gemm[dt]
	 * over activation rows packed once per call, bit for bit the same
	 * results: q8_0 rows packed by pack_q8_0 (act_stride:
	 * cb_pk_row_bytes(k)) for the weight types reading q8_0, q8_K rows
	 * packed by pack_q8_K (act_stride: cb_pk_k_row_bytes(k)) for those
	 * reading q8_K.  pack_*(dst, src, k): one row of k to the variant's
	 * packed form (cb_pack_avx512.c and cb_pack_k_avx512.c for VNNI,
	 * cb_pack_avx2.c and cb_pack_k_avx2.c for AVX2 and AVX-512 describe
	 * them; the q8_0 forms both fit cb_pk_row_bytes(), the q8_K forms
	 * cb_pk_k_row_bytes()).
	 */
	cb_gemm_fn gemm_pk[CB_DT__COUNT];
	/*
	 * gemm_pk[dt] is taken from pk_min_m[dt] tokens on (0: from
	 * CB_PK_MIN_M), gemm[dt] below that: where the plain gemm has a tile
	 * for a few tokens that is faster than packing (cb_kq_few_avx2.c).
	 * cb_pk_takes() says which.
	 */
	cb_u8 pk_min_m[CB_DT__COUNT];
	void (*pack_q8_0)(void *dst, const void *src, int k);
	void (*pack_q8_K)(void *dst, const void *src, int k);

	/*
	 * x[n] -> the row in activation form k (enum cb_act_kind), for k >= 1
	 * (CB_ACT_F32 rows are x itself: NULL); n a whole number of the form's
	 * blocks.  Byte-identical to the form's cb_quantize_row_*_ref().
	 * Quantizes block by block: a row quantized in pieces of whole blocks
	 * is the same bytes.
	 */
	void (*quantize_act[CB_ACT__COUNT])(void *dst, const float *x, int n);
	/* y[i] += a * x[i] */
	void (*axpy_f32)(float *y, float a, const float *x, int n);
	/*
	 * o[g * ldo + d] += p[g * ldp + i] * v[i * ldv + d] for heads g < ng,
	 * positions i < n in order, d < w: bit for bit the ng x n calls of
	 * axpy_f32 (the attention's P.V of one tile of positions).
	 */
	void (*pv_f32)(float *o, cb_size ldo, const float *p, cb_size ldp, const float *v,
		       cb_size ldv, int ng, int n, int w);
	/*
	 * One token of the gated delta rule on columns [0, n) of a state S of
	 * @k rows, @ld floats apart (cb_delta.c): every row S_i = dec S_i and
	 * kv += S_i kk[i]; then d = beta (v - kv); every row S_i += d kk[i]
	 * and o += S_i q[i] (o written, not added to).  Per column, rows in
	 * order, a multiply and an add each: bit for bit the scalar table's
	 * for every n (tests/unit/test_ops.c).  @tmp: n floats of scratch.
	 */
	void (*delta_step_f32)(float *S, cb_size ld, int k, int n, const float *kk,
			       const float *q, const float *v, float dec, float beta, float *o,
			       float *tmp);
	/*
	 * Router top-k: the k largest of logits[0..n) into ids/vals in
	 * descending order, ties to the lower index, NaN as -infinity: the
	 * same ids and bit for bit the same values as cb_topk_ref() for every
	 * n and k (tests/unit/test_router.c).  Shapes or values a variant's
	 * fast path does not take go to cb_topk_base().
	 */
	void (*topk_f32)(const float *logits, int n, int k, cb_u32 *ids, float *vals);
	/*
	 * SwiGLU in place, gate[i] = silu(gate[i]) * up[i] for i < n, and
	 * GPT-OSS's clamped form: bit for bit cb_swiglu() and cb_swiglu_oss()
	 * (cb_math.c, the scalar variant's ops) for every input, element by
	 * element (tests/unit/test_vmath.c).  No alignment required.
	 */
	void (*swiglu_f32)(float *gate, const float *up, int n);
	void (*swiglu_oss_f32)(float *gate, const float *up, int n, float lim, float alpha);
	/* x[i] = cb_expf(x[i] - m) in place, bit for bit cb_expf_sub() */
	void (*expf_sub_f32)(float *x, float m, int n);
};

/*
 * Bytes of a packed q8_0 activation row of k elements (k / 32 blocks): per
 * pair of blocks 64 bytes of quants, 16 int32 lane sums and 2 f32 scales
 * (136 bytes per 64 elements), in three arrays; a multiple of 64.  Every
 * variant's packed form has this size (the arena's pack scratch does not
 * depend on the CPU).
 */
static inline cb_u64 cb_pk_row_bytes(cb_u64 k)
{
	return CB_ALIGN((k / 32 + 1) / 2 * 136, (cb_u64)64);
}

/*
 * Bytes of a packed q8_K activation row of k elements (k / 256
 * super-blocks of 384 bytes: quants, sums and scale, cb_pack_k_avx512.c;
 * cb_pack_k_avx2.c's form uses 276 of them); never more than
 * cb_pk_row_bytes(k).
 */
static inline cb_u64 cb_pk_k_row_bytes(cb_u64 k)
{
	return k / 256 * 384;
}

/* The packed row bytes of activation form @kind (q8_0 or q8_K) */
static inline cb_u64 cb_pk_act_row_bytes(cb_u32 kind, cb_u64 k)
{
	return kind == CB_ACT_Q8_K ? cb_pk_k_row_bytes(k) : cb_pk_row_bytes(k);
}

typedef void (*cb_pack_fn)(void *dst, const void *src, int k);

/* @ops's packer of activation form @kind; NULL for a form nothing packs */
static inline cb_pack_fn cb_pk_pack_fn(const struct cb_isa_ops *ops, cb_u32 kind)
{
	return kind == CB_ACT_Q8_0 ? ops->pack_q8_0 : kind == CB_ACT_Q8_K ? ops->pack_q8_K :
	       CB_NULL;
}

/* gemm calls of at least this many tokens may read packed activations */
#define CB_PK_MIN_M		2

/* Whether a gemm call of @M tokens of weight type @dt takes gemm_pk[dt] */
static inline int cb_pk_takes(const struct cb_isa_ops *ops, cb_u32 dt, int M)
{
	int from = CB_MAX(CB_PK_MIN_M, (int)ops->pk_min_m[dt]);

	return ops->gemm_pk[dt] && cb_pk_pack_fn(ops, cb_dtype_act(dt)) && M >= from;
}

extern const struct cb_isa_ops cb_isa_scalar;
extern const struct cb_isa_ops cb_isa_avx2;
extern const struct cb_isa_ops cb_isa_avx512;
extern const struct cb_isa_ops cb_isa_avx512_vnni;

/*
 * The variants' valid() hooks.  They live in cb_isa_valid.c, an integer-only
 * object (no SSE, Kbuild's cb-int-only-dirs), because the module asks them
 * outside FPU sections (at load and at every engine's init), while the
 * variants' own objects are compiled with SSE and their ISA.
 */
int cb_isa_scalar_valid(void);
int cb_isa_avx2_valid(void);
int cb_isa_avx512_valid(void);
int cb_isa_avx512_vnni_valid(void);

/*
 * The best valid variant whose level is <= max_level (so a test or an
 * administrator can cap it).  Never NULL: scalar is always valid.
 */
const struct cb_isa_ops *cb_isa_select(int max_level);
/* The variant of exactly this level, or NULL if absent or not valid here. */
const struct cb_isa_ops *cb_isa_get(int level);

/* The vector SwiGLUs and softmax exps (cb_vmath_x86_tmpl.h, cb_vmath_avx2/512.c) */
void cb_swiglu_avx2(float *gate, const float *up, int n);
void cb_swiglu_oss_avx2(float *gate, const float *up, int n, float lim, float alpha);
void cb_expf_sub_avx2(float *x, float m, int n);
void cb_swiglu_avx512(float *gate, const float *up, int n);
void cb_swiglu_oss_avx512(float *gate, const float *up, int n, float lim, float alpha);
void cb_expf_sub_avx512(float *x, float m, int n);

/* Scalar conversions, the reference for the SIMD ones. */
float cb_f16_to_f32(cb_u16 h);
cb_u16 cb_f32_to_f16(float f);		/* round to nearest even */
float cb_bf16_to_f32(cb_u16 h);
cb_u16 cb_f32_to_bf16(float f);		/* round to nearest even */

/* Quantize / dequantize rows (scalar, cb_quant_row.c; converters and tests use these). */
void cb_quantize_row(cb_u32 dt, void *dst, const float *x, int n);
void cb_dequantize_row(cb_u32 dt, float *dst, const void *src, int n);
/*
 * q8_0 quantization of a row, the scalar reference every variant's
 * quantize_act[CB_ACT_Q8_0] op matches byte for byte (GGUF's reference
 * arithmetic).
 */
void cb_quantize_row_q8_0_ref(void *dst, const float *x, int n);
/* q8_1 and q8_K activation rows (cb_quant.c), the references of quantize_act[] */
void cb_quantize_row_q8_1_ref(void *dst, const float *x, int n);
void cb_quantize_row_q8_K_ref(void *dst, const float *x, int n);

/*
 * Router selection (cb_ops_scalar.c).  cb_topk_ref() is the insertion
 * reference every topk_f32 op matches; cb_topk_base() is the x86-64
 * baseline (SSE2) path with the reference behind it, the scalar variant's
 * op and every variant's fallback.  cb_route() (cb_router.c) selects with
 * the variant it is given and computes the routing weights.
 */
void cb_topk_ref(const float *logits, int n, int k, cb_u32 *ids, float *vals);
void cb_topk_base(const float *logits, int n, int k, cb_u32 *ids, float *vals);
void cb_route(const struct cb_isa_ops *ops, const float *logits, int n, int k,
	      int renorm, cb_u32 *ids, float *weights);

#endif /* CB_OPS_H */
