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
 */
#include "cb_math.h"
#include "cb_ops.h"

static void gemm_f32(float *out, cb_size ldo, const void *w, cb_size w_row_bytes,
		     const void *act, cb_size act_stride, int M, int nrows, int k)
{
	int r, m, i;

	for (r = 0; r < nrows; r++) {
		const float *wr = (const float *)((const char *)w + r * w_row_bytes);

		for (m = 0; m < M; m++) {
			const float *x = (const float *)((const char *)act +
							 m * act_stride);
			float sum = 0.0f;

			for (i = 0; i < k; i++)
				sum += wr[i] * x[i];
			out[m * ldo + r] = sum;
		}
	}
}

/* f16 and bf16 differ only in the conversion: one body, two instances. */
#define DEFINE_GEMM_HALF(name, cvt)					\
static void name(float *out, cb_size ldo, const void *w,		\
		 cb_size w_row_bytes, const void *act,			\
		 cb_size act_stride, int M, int nrows, int k)		\
{									\
	int r, m, i;							\
									\
	for (r = 0; r < nrows; r++) {					\
		const cb_u16 *wr = (const cb_u16 *)((const char *)w +	\
						    r * w_row_bytes);	\
									\
		for (m = 0; m < M; m++) {				\
			const float *x = (const float *)		\
				((const char *)act + m * act_stride);	\
			float sum = 0.0f;				\
									\
			for (i = 0; i < k; i++)				\
				sum += cvt(wr[i]) * x[i];		\
			out[m * ldo + r] = sum;				\
		}							\
	}								\
}

DEFINE_GEMM_HALF(gemm_f16, cb_f16_to_f32)
DEFINE_GEMM_HALF(gemm_bf16, cb_bf16_to_f32)

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

static float dot_f32(const float *a, const float *b, int n)
{
	float sum = 0.0f;
	int i;

	for (i = 0; i < n; i++)
		sum += a[i] * b[i];
	return sum;
}

static void axpy_f32(float *y, float a, const float *x, int n)
{
	int i;

	for (i = 0; i < n; i++)
		y[i] += a * x[i];
}

static float exp_sum_f32(float *x, float m, int n)
{
	float sum = 0.0f;
	int i;

	for (i = 0; i < n; i++) {
		x[i] = cb_expf(x[i] - m);
		sum += x[i];
	}
	return sum;
}

static int scalar_valid(void)
{
	return 1;
}

const struct cb_isa_ops cb_isa_scalar = {
	.name = "scalar",
	.level = CB_ISA_SCALAR,
	.valid = scalar_valid,
	.gemm = {
		[CB_DT_F32] = gemm_f32,
		[CB_DT_F16] = gemm_f16,
		[CB_DT_BF16] = gemm_bf16,
		[CB_DT_Q8_0] = gemm_q8_0,
		[CB_DT_Q4_0] = gemm_q4_0,
	},
	.quantize_q8_0 = cb_quantize_row_q8_0_ref,
	.dot_f32 = dot_f32,
	.axpy_f32 = axpy_f32,
	.exp_sum_f32 = exp_sum_f32,
};
