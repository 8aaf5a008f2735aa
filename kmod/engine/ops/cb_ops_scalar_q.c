// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_ops_scalar_q.c - the scalar reference gemms of q4_1, q5_0, q5_1,
 * iq4_nl, mxfp4 and the k-quants (q8_0 and q4_0 are in cb_ops_scalar.c).
 *
 * Every type reads its activation form (cb_dtype_act(dt)) and takes
 * an exact integer dot product per block; only the scaling and the sum over
 * blocks are in f32, in this order (d_w, m_w, dmin_w the weight block's
 * halves as floats, d_x the activation block's scale):
 *
 *   q5_0, iq4_nl (q8_0):   sum += isum * (d_w * d_x)
 *   mxfp4 (q8_0):          sum += isum * (d_w * d_x), d_w = 2^(e - 128)
 *   q4_1, q5_1 (q8_1):     sum += isum * (d_w * d_x) + xsum * (m_w * d_x)
 *   q3_K, q6_K, iq4_xs (q8_K):
 *                          sum += isum * (d_w * d_x)
 *   q2_K, q4_K, q5_K (q8_K):
 *                          sum += isum * (d_w * d_x) - imin * (dmin_w * d_x)
 *
 * with isum = sum over sub-blocks of scale * (sum of q * x) and imin =
 * sum over sub-blocks of min * (sum of x), both integers (|isum| < 2^28 for
 * every type).  The SIMD variants compute the same integers and differ only
 * in the order of the f32 operations (tests/unit/test_ops_q.c bounds that).
 */
#include "ops/cb_math.h"
#include "ops/cb_ops.h"
#include "ops/cb_ops_q.h"
#include "quant/cb_quant_ref.h"

static const cb_s8 iq4_values[16] = CB_IQ4NL_VALUES;
static const cb_s8 mxfp4_values[16] = CB_MXFP4_VALUES;

static inline float h2f(cb_u16 h)
{
	return cb_half_to_f32(h);
}

/*
 * The kernels unpack a block's quants into bytes in element order with
 * loops that follow the layout (no per-element index arithmetic), then take
 * the integer dot products: the same integers as element by element, at a
 * fraction of the cost (the scalar variant is what max_isa=0 runs, and the
 * chunk planner budgets its speed: ops->gemm_ps).
 */

/* Eight bytes at p (any alignment), and back. */
static inline cb_u64 ld64(const void *p)
{
	cb_u64 v;

	__builtin_memcpy(&v, p, 8);
	return v;
}

static inline void st64(void *p, cb_u64 v)
{
	__builtin_memcpy(p, &v, 8);
}

#define CB_BYTES(b) (0x0101010101010101ull * (b))

/*
 * Bit i of byte v to bit 0 of byte i, for the eight bits at once: the
 * fifth bits of q5_0, q5_1 and q5_K and q3_K's third bits without a
 * variable shift per weight.  v in every byte, byte i masked to bit i,
 * then + 0x7f carries into bit 7 exactly when that bit was set.
 */
static inline cb_u64 spread8(cb_u32 v)
{
	cb_u64 x = (cb_u64)(v & 0xff) * CB_BYTES(1) & 0x8040201008040201ull;

	return (x + CB_BYTES(0x7f)) >> 7 & CB_BYTES(1);
}

/* The 32 quants of a q4/q5 block in element order, with fifth bits if qh. */
static inline void unpack32(const cb_u8 *qs, const cb_u8 *qh, cb_s8 *q)
{
	cb_u64 a = ld64(qs), b = ld64(qs + 8);
	int j;

	st64(q, a & CB_BYTES(15));
	st64(q + 8, b & CB_BYTES(15));
	st64(q + 16, a >> 4 & CB_BYTES(15));
	st64(q + 24, b >> 4 & CB_BYTES(15));
	if (qh)
		for (j = 0; j < 4; j++)
			st64(q + 8 * j, ld64(q + 8 * j) | spread8(qh[j]) << 4);
}

static inline int idot(const cb_s8 *q, const cb_s8 *x, int n)
{
	int s = 0, j;

	for (j = 0; j < n; j++)
		s += q[j] * x[j];
	return s;
}

/* sum (q - off) x = sum q x - off sum x */
static inline int idot32(const cb_s8 *q, const cb_s8 *x, int off)
{
	int s = 0, sx = 0, j;

	for (j = 0; j < 32; j++) {
		s += q[j] * x[j];
		sx += x[j];
	}
	return s - off * sx;
}

/* ---- legacy blocks ------------------------------------------------------ */

static float term_q4_1(const void *wv, const void *xv)
{
	const struct cb_block_q4_1 *w = wv;
	const struct cb_block_q8_1 *x = xv;
	float dx = h2f(x->d);
	cb_s8 q[32];

	unpack32(w->qs, CB_NULL, q);
	return (float)idot(q, x->qs, 32) * (h2f(w->d) * dx) +
	       (float)x->sum * (h2f(w->m) * dx);
}

static float term_q5_0(const void *wv, const void *xv)
{
	const struct cb_block_q5_0 *w = wv;
	const struct cb_block_q8_0 *x = xv;
	cb_s8 q[32];

	unpack32(w->qs, w->qh, q);
	return (float)idot32(q, x->qs, 16) * (h2f(w->d) * h2f(x->d));
}

static float term_q5_1(const void *wv, const void *xv)
{
	const struct cb_block_q5_1 *w = wv;
	const struct cb_block_q8_1 *x = xv;
	float dx = h2f(x->d);
	cb_s8 q[32];

	unpack32(w->qs, w->qh, q);
	return (float)idot(q, x->qs, 32) * (h2f(w->d) * dx) +
	       (float)x->sum * (h2f(w->m) * dx);
}

static float term_iq4_nl(const void *wv, const void *xv)
{
	const struct cb_block_iq4_nl *w = wv;
	const struct cb_block_q8_0 *x = xv;
	cb_s8 q[32];
	int j;

	for (j = 0; j < 16; j++) {
		q[j] = iq4_values[w->qs[j] & 15];
		q[j + 16] = iq4_values[w->qs[j] >> 4];
	}
	return (float)idot(q, x->qs, 32) * (h2f(w->d) * h2f(x->d));
}

static float term_mxfp4(const void *wv, const void *xv)
{
	const struct cb_block_mxfp4 *w = wv;
	const struct cb_block_q8_0 *x = xv;
	cb_s8 q[32];
	int j;

	for (j = 0; j < 16; j++) {
		q[j] = mxfp4_values[w->qs[j] & 15];
		q[j + 16] = mxfp4_values[w->qs[j] >> 4];
	}
	return (float)idot(q, x->qs, 32) *
	       (cb_f32_from_bits(cb_e8m0_half_bits(w->e)) * h2f(x->d));
}

/* ---- k-quants ------------------------------------------------------------- */

static inline float q8k_d(const struct cb_block_q8_K *x)
{
	return cb_f32_from_bits(x->d_bits);
}

/* The 2-bit fields of q2_K and q3_K: weight 128h + 32p + l is qs[32h + l] >> 2p. */
static inline void unpack_2bit(const cb_u8 *qs, cb_s8 *q)
{
	int h, p, l;

	for (h = 0; h < 2; h++)
		for (l = 0; l < 32; l += 8) {
			cb_u64 v = ld64(qs + 32 * h + l);

			for (p = 0; p < 4; p++)
				st64(q + 128 * h + 32 * p + l, v >> (2 * p) & CB_BYTES(3));
		}
}

static float term_q2_K(const void *wv, const void *xv)
{
	const struct cb_block_q2_K *w = wv;
	const struct cb_block_q8_K *x = xv;
	float dx = q8k_d(x);
	int isum = 0, imin = 0, s;
	cb_s8 q[CB_QK_K];

	unpack_2bit(w->qs, q);
	for (s = 0; s < 16; s++) {
		isum += (w->scales[s] & 15) * idot(q + 16 * s, x->qs + 16 * s, 16);
		imin += (w->scales[s] >> 4) * x->bsums[s];
	}
	return (float)isum * (h2f(w->d) * dx) - (float)imin * (h2f(w->dmin) * dx);
}

static float term_q3_K(const void *wv, const void *xv)
{
	const struct cb_block_q3_K *w = wv;
	const struct cb_block_q8_K *x = xv;
	int isum = 0, s, e, j, l;
	cb_s8 q[CB_QK_K];

	/* q = low two bits | third bit << 2 (bit j of hmask[l]), less 4 */
	unpack_2bit(w->qs, q);
	for (j = 0; j < 8; j++)
		for (l = 0; l < 32; l += 8) {
			cb_u64 m = ld64(w->hmask + l) >> j & CB_BYTES(1);

			st64(q + 32 * j + l, ld64(q + 32 * j + l) | m << 2);
		}
	for (e = 0; e < CB_QK_K; e++)
		q[e] = (cb_s8)(q[e] - 4);
	for (s = 0; s < 16; s++)
		isum += (cb_q3k_scale(w->scales, s) - 32) * idot(q + 16 * s, x->qs + 16 * s, 16);
	return (float)isum * (h2f(w->d) * q8k_d(x));
}

/* q4_K / q5_K: the same but for the fifth bit */
static float term_k45(const cb_u8 *scales, cb_u16 dh, cb_u16 dminh, const cb_u8 *qs,
		      const cb_u8 *qh, const struct cb_block_q8_K *x)
{
	float dx = q8k_d(x);
	int isum = 0, imin = 0, j, c, l;
	cb_s8 q[CB_QK_K];

	for (c = 0; c < 4; c++)
		for (l = 0; l < 32; l++) {
			q[64 * c + l] = (cb_s8)(qs[32 * c + l] & 15);
			q[64 * c + 32 + l] = (cb_s8)(qs[32 * c + l] >> 4);
		}
	if (qh)		/* weight 32j + l's fifth bit is bit j of qh[l] */
		for (j = 0; j < 8; j++)
			for (l = 0; l < 32; l += 8)
				st64(q + 32 * j + l, ld64(q + 32 * j + l) |
				     (ld64(qh + l) >> j & CB_BYTES(1)) << 4);
	for (j = 0; j < 8; j++) {
		int sc, m;

		cb_k4_scale_min(scales, j, &sc, &m);
		isum += sc * idot(q + 32 * j, x->qs + 32 * j, 32);
		imin += m * (x->bsums[2 * j] + x->bsums[2 * j + 1]);
	}
	return (float)isum * (h2f(dh) * dx) - (float)imin * (h2f(dminh) * dx);
}

static float term_q4_K(const void *wv, const void *xv)
{
	const struct cb_block_q4_K *w = wv;

	return term_k45(w->scales, w->d, w->dmin, w->qs, CB_NULL, xv);
}

static float term_q5_K(const void *wv, const void *xv)
{
	const struct cb_block_q5_K *w = wv;

	return term_k45(w->scales, w->d, w->dmin, w->qs, w->qh, xv);
}

static float term_q6_K(const void *wv, const void *xv)
{
	const struct cb_block_q6_K *w = wv;
	const struct cb_block_q8_K *x = xv;
	int isum = 0, s, h, l;
	cb_s8 q[CB_QK_K];

	/* the four quarters of each half (cb_quant.h), stored as q - 32 */
	for (h = 0; h < 2; h++) {
		const cb_u8 *L = w->ql + 64 * h, *H = w->qh + 32 * h;
		cb_s8 *o = q + 128 * h;

		for (l = 0; l < 32; l++) {
			o[l] = (cb_s8)(((L[l] & 15) | (H[l] & 3) << 4) - 32);
			o[l + 32] = (cb_s8)(((L[l + 32] & 15) | (H[l] >> 2 & 3) << 4) - 32);
			o[l + 64] = (cb_s8)(((L[l] >> 4) | (H[l] >> 4 & 3) << 4) - 32);
			o[l + 96] = (cb_s8)(((L[l + 32] >> 4) | (H[l] >> 6) << 4) - 32);
		}
	}
	for (s = 0; s < 16; s++)
		isum += w->scales[s] * idot(q + 16 * s, x->qs + 16 * s, 16);
	return (float)isum * (h2f(w->d) * q8k_d(x));
}

static float term_iq4_xs(const void *wv, const void *xv)
{
	const struct cb_block_iq4_xs *w = wv;
	const struct cb_block_q8_K *x = xv;
	int isum = 0, j, l;
	cb_s8 q[CB_QK_K];

	for (j = 0; j < 8; j++)
		for (l = 0; l < 16; l++) {
			q[32 * j + l] = iq4_values[w->qs[16 * j + l] & 15];
			q[32 * j + 16 + l] = iq4_values[w->qs[16 * j + l] >> 4];
		}
	for (j = 0; j < 8; j++)
		isum += (cb_iq4xs_scale(w, j) - 32) * idot(q + 32 * j, x->qs + 32 * j, 32);
	return (float)isum * (h2f(w->d) * q8k_d(x));
}

/* ---- the gemms -------------------------------------------------------------- */

/*
 * out[m * ldo + r] = sum over blocks b of term(W[r] block b, act_m block b),
 * summed in block order.  WB, XB: weight and activation block sizes; QB:
 * elements per block.
 */
#define DEFINE_GEMM_TERM(name, term, WB, XB, QB)				\
void name(float *out, cb_size ldo, const void *w, cb_size w_row_bytes,	\
	  const void *act, cb_size act_stride, int M, int nrows, int k)	\
{										\
	int nb = k / (QB), r, m, b;						\
										\
	for (r = 0; r < nrows; r++) {						\
		const char *wr = (const char *)w + r * w_row_bytes;		\
										\
		for (m = 0; m < M; m++) {					\
			const char *xr = (const char *)act + m * act_stride;	\
			float sum = 0.0f;					\
										\
			for (b = 0; b < nb; b++)				\
				sum += term(wr + b * (WB), xr + b * (XB));	\
			out[m * ldo + r] = sum;					\
		}								\
	}									\
}

DEFINE_GEMM_TERM(cb_scalar_gemm_q4_1, term_q4_1, 20, 36, CB_QK)
DEFINE_GEMM_TERM(cb_scalar_gemm_q5_0, term_q5_0, 22, 34, CB_QK)
DEFINE_GEMM_TERM(cb_scalar_gemm_q5_1, term_q5_1, 24, 36, CB_QK)
DEFINE_GEMM_TERM(cb_scalar_gemm_iq4_nl, term_iq4_nl, 18, 34, CB_QK)
DEFINE_GEMM_TERM(cb_scalar_gemm_mxfp4, term_mxfp4, 17, 34, CB_QK)
DEFINE_GEMM_TERM(cb_scalar_gemm_q2_K, term_q2_K, 84, 292, CB_QK_K)
DEFINE_GEMM_TERM(cb_scalar_gemm_q3_K, term_q3_K, 110, 292, CB_QK_K)
DEFINE_GEMM_TERM(cb_scalar_gemm_q4_K, term_q4_K, 144, 292, CB_QK_K)
DEFINE_GEMM_TERM(cb_scalar_gemm_q5_K, term_q5_K, 176, 292, CB_QK_K)
DEFINE_GEMM_TERM(cb_scalar_gemm_q6_K, term_q6_K, 210, 292, CB_QK_K)
DEFINE_GEMM_TERM(cb_scalar_gemm_iq4_xs, term_iq4_xs, 136, 292, CB_QK_K)
