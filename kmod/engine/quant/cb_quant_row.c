// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_quant_row.c - one row of any weight type to and from f32:
 * cb_quantize_row() and cb_dequantize_row(), the top of the scalar
 * quantization code.  They dispatch to the per-type files (cb_quant_ref.h)
 * and to cb_quant.c's conversions and q8_0 quantizer; q8_0's and q4_0's
 * dequantizers and q4_0's quantizer are here, inline:
 *
 * q4_0:  m = the x of largest |x| (first one on ties, sign kept),
 *        d = m / -8, id = d ? 1/d : 0, stored d = half(d),
 *        q = min(15, (int)(x * id + 8.5f)) (truncation), weight j in the low
 *        nibble of byte j and weight j + 16 in its high nibble.
 *
 * All float operations are single IEEE operations in the order written
 * (the engine is built with -ffp-contract=off).
 */
#include "ops/cb_math.h"
#include "ops/cb_ops.h"
#include "quant/cb_quant_ref.h"

static void quantize_block_q4_0(struct cb_block_q4_0 *b, const float *x)
{
	float amax = 0.0f, max = 0.0f, d, id;
	int j;

	for (j = 0; j < CB_QK; j++) {
		float v = cb_fabsf(x[j]);

		if (amax < v) {
			amax = v;
			max = x[j];
		}
	}
	d = max / -8.0f;
	id = d != 0.0f ? 1.0f / d : 0.0f;
	b->d = cb_f32_to_f16(d);
	for (j = 0; j < CB_QK / 2; j++) {
		int lo = (cb_s8)(x[j] * id + 8.5f);
		int hi = (cb_s8)(x[j + CB_QK / 2] * id + 8.5f);

		lo = lo < 15 ? lo : 15;
		hi = hi < 15 ? hi : 15;
		b->qs[j] = (cb_u8)(lo | hi << 4);
	}
}

/**
 * cb_quantize_row() - n floats to one row of type dt.
 * @dt: enum cb_dtype.
 * @dst: cb_dtype_row_bytes(dt, n) bytes.
 * @x: n floats.
 * @n: elements; a multiple of the type's block (a partial last block is
 *	ignored: callers validate n with cb_dtype_row_bytes()).
 *
 * An unknown dt writes nothing.
 */
void cb_quantize_row(cb_u32 dt, void *dst, const float *x, int n)
{
	int i;

	switch (dt) {
	case CB_DT_F32: {
		float *y = dst;

		for (i = 0; i < n; i++)
			y[i] = x[i];
		break;
	}
	case CB_DT_F16: {
		cb_u16 *y = dst;

		for (i = 0; i < n; i++)
			y[i] = cb_f32_to_f16(x[i]);
		break;
	}
	case CB_DT_BF16: {
		cb_u16 *y = dst;

		for (i = 0; i < n; i++)
			y[i] = cb_f32_to_bf16(x[i]);
		break;
	}
	case CB_DT_Q8_0:
		cb_quantize_row_q8_0_ref(dst, x, n);
		break;
	case CB_DT_Q4_0: {
		struct cb_block_q4_0 *b = dst;

		for (i = 0; i < n / CB_QK; i++)
			quantize_block_q4_0(&b[i], x + i * CB_QK);
		break;
	}
	case CB_DT_Q4_1:
		cb_quantize_q4_1(dst, x, n);
		break;
	case CB_DT_Q5_0:
		cb_quantize_q5_0(dst, x, n);
		break;
	case CB_DT_Q5_1:
		cb_quantize_q5_1(dst, x, n);
		break;
	case CB_DT_IQ4_NL:
		cb_quantize_iq4_nl(dst, x, n);
		break;
	case CB_DT_Q2_K:
		cb_quantize_q2_K(dst, x, n);
		break;
	case CB_DT_Q3_K:
		cb_quantize_q3_K(dst, x, n);
		break;
	case CB_DT_Q4_K:
		cb_quantize_q4_K(dst, x, n);
		break;
	case CB_DT_Q5_K:
		cb_quantize_q5_K(dst, x, n);
		break;
	case CB_DT_Q6_K:
		cb_quantize_q6_K(dst, x, n);
		break;
	case CB_DT_IQ4_XS:
		cb_quantize_iq4_xs(dst, x, n);
		break;
	case CB_DT_MXFP4:
		cb_quantize_mxfp4(dst, x, n);
		break;
	default:
		break;
	}
}

/**
 * cb_dequantize_row() - one row of type dt back to n floats.
 * @dt: enum cb_dtype.
 * @dst: n floats.
 * @src: the row.
 * @n: elements; a multiple of the type's block.
 *
 * Values are computed in float as GGUF's dequantizers compute them (q8_0:
 * d * q; q4_K: (d * sc) * q - dmin * m; see each type's function).
 * An unknown dt writes nothing.
 */
void cb_dequantize_row(cb_u32 dt, float *dst, const void *src, int n)
{
	int i, j;

	switch (dt) {
	case CB_DT_F32: {
		const float *s = src;

		for (i = 0; i < n; i++)
			dst[i] = s[i];
		break;
	}
	case CB_DT_F16: {
		const cb_u16 *s = src;

		for (i = 0; i < n; i++)
			dst[i] = cb_f16_to_f32(s[i]);
		break;
	}
	case CB_DT_BF16: {
		const cb_u16 *s = src;

		for (i = 0; i < n; i++)
			dst[i] = cb_bf16_to_f32(s[i]);
		break;
	}
	case CB_DT_Q8_0: {
		const struct cb_block_q8_0 *b = src;

		for (i = 0; i < n / CB_QK; i++) {
			float d = cb_f16_to_f32(b[i].d);

			for (j = 0; j < CB_QK; j++)
				dst[i * CB_QK + j] = d * (float)b[i].qs[j];
		}
		break;
	}
	case CB_DT_Q4_0: {
		const struct cb_block_q4_0 *b = src;

		for (i = 0; i < n / CB_QK; i++) {
			float d = cb_f16_to_f32(b[i].d);

			for (j = 0; j < CB_QK / 2; j++) {
				dst[i * CB_QK + j] =
					(float)((b[i].qs[j] & 0x0f) - 8) * d;
				dst[i * CB_QK + j + CB_QK / 2] =
					(float)((b[i].qs[j] >> 4) - 8) * d;
			}
		}
		break;
	}
	case CB_DT_Q4_1:
		cb_dequantize_q4_1(dst, src, n);
		break;
	case CB_DT_Q5_0:
		cb_dequantize_q5_0(dst, src, n);
		break;
	case CB_DT_Q5_1:
		cb_dequantize_q5_1(dst, src, n);
		break;
	case CB_DT_IQ4_NL:
		cb_dequantize_iq4_nl(dst, src, n);
		break;
	case CB_DT_Q2_K:
		cb_dequantize_q2_K(dst, src, n);
		break;
	case CB_DT_Q3_K:
		cb_dequantize_q3_K(dst, src, n);
		break;
	case CB_DT_Q4_K:
		cb_dequantize_q4_K(dst, src, n);
		break;
	case CB_DT_Q5_K:
		cb_dequantize_q5_K(dst, src, n);
		break;
	case CB_DT_Q6_K:
		cb_dequantize_q6_K(dst, src, n);
		break;
	case CB_DT_IQ4_XS:
		cb_dequantize_iq4_xs(dst, src, n);
		break;
	case CB_DT_MXFP4:
		cb_dequantize_mxfp4(dst, src, n);
		break;
	default:
		break;
	}
}
