// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_quant.c - half/bfloat16 conversions and the q8 quantizers, the
 * bottom of the scalar quantization code: the per-type files
 * (cb_quant_ref.h) use the conversions, and cb_quant_row.c's
 * cb_quantize_row() / cb_dequantize_row() dispatch over all of them.
 *
 * These are the scalar references: the converters use them to write
 * .colibri files, the SIMD variants must agree with them (bit for bit
 * where cb_ops.h says so), and they follow the GGUF reference quantizers'
 * arithmetic step by step so that a tensor quantized here is byte-identical
 * to the one llama.cpp's reference quantizer would write:
 *
 * q8_0:  amax = max |x|, d = amax / 127, id = d ? 1/d : 0 (from the float d,
 *        not the rounded half), stored d = half(d), q = round(x * id) with
 *        halfway cases away from zero (C roundf).
 *
 * The activation forms the other block types read:
 * q8_1:  q8_0's block plus the integer sum of its 32 quants.
 * q8_K:  per 256, m = the x of largest |x| (first on ties), iscale =
 *        -127 / m, q = min(127, round_half_even(x * iscale)), d = 1 / iscale
 *        stored as f32, and the sum of each 16 quants (GGUF's
 *        quantize_row_q8_K).  An all-zero block gets d = 0; NaN quantizes to
 *        0 and a product beyond +-127 (a subnormal m) is clamped, so every
 *        input has one defined result that the SIMD variants reproduce.
 *
 * All float operations are single IEEE operations in the order written
 * (the engine is built with -ffp-contract=off), so no FMA changes a
 * rounding.  The other block types' scalar code is in cb_quant_legacy.c,
 * cb_quant_iq4.c, cb_quant_mxfp4.c, cb_quant_k.c and cb_dequant_k.c
 * (cb_quant_ref.h), q4_0's and the dispatch in cb_quant_row.c.
 */
#include "ops/cb_math.h"
#include "ops/cb_ops.h"
#include "quant/cb_quant_ref.h"

/**
 * cb_f16_to_f32() - IEEE half to float (exact).
 * @h: half bits.
 *
 * NaNs come out quiet with their payload kept, as F16C's vcvtph2ps does.
 * The body is cb_half_to_f32() (cb_math.h), which the scalar gemm inlines.
 */
float cb_f16_to_f32(cb_u16 h)
{
	return cb_half_to_f32(h);
}

/**
 * cb_f32_to_f16() - float to IEEE half, round to nearest even.
 * @f: the value.
 *
 * Overflow gives infinity; results below half's range round into its
 * subnormals or to signed zero.  NaNs stay NaN, quiet, keeping the top of
 * the payload (as F16C's vcvtps2ph does).
 */
cb_u16 cb_f32_to_f16(float f)
{
	cb_u32 u = cb_f32_bits(f);
	cb_u32 sign = (u >> 16) & 0x8000;
	cb_u32 a = u & 0x7fffffff;
	cb_u32 h, rem, half, shift, m;

	if (a > 0x7f800000)
		return sign | 0x7e00 | ((a >> 13) & 0x3ff);
	if (a >= 0x477ff000)	/* >= 65520: rounds to infinity */
		return sign | 0x7c00;
	if (a >= 0x38800000) {	/* >= 2^-14: normal half */
		h = (a - 0x38000000) >> 13;	/* rebias 127 -> 15 */
		rem = a & 0x1fff;
		if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
			h++;	/* a carry into the exponent is right */
		return sign | h;
	}
	if (a < 0x33000000)	/* < 2^-25: rounds to zero */
		return sign;
	/* subnormal half: value / 2^-24, rounded to an integer, even on ties */
	m = (a & 0x7fffff) | 0x800000;
	shift = 126 - (a >> 23);	/* 14 ... 24 */
	h = m >> shift;
	rem = m & ((1u << shift) - 1);
	half = 1u << (shift - 1);
	if (rem > half || (rem == half && (h & 1)))
		h++;
	return sign | h;
}

/**
 * cb_bf16_to_f32() - bfloat16 to float (exact: the top half of the bits).
 * @h: bfloat16 bits.
 */
float cb_bf16_to_f32(cb_u16 h)
{
	return cb_bfloat_to_f32(h);
}

/**
 * cb_f32_to_bf16() - float to bfloat16, round to nearest even.
 * @f: the value.
 *
 * As PyTorch does: subnormals are rounded, not flushed; NaNs are kept
 * (quieted).
 */
cb_u16 cb_f32_to_bf16(float f)
{
	cb_u32 u = cb_f32_bits(f);

	if ((u & 0x7fffffff) > 0x7f800000)
		return (u >> 16) | 0x40;
	return (u + 0x7fff + ((u >> 16) & 1)) >> 16;
}

/* C roundf for |v| < 2^31: nearest, halfway cases away from zero. */
static inline int round_away(float v)
{
	int i = (int)v;			/* truncates */
	float frac = v - (float)i;	/* exact */

	/* compares, not branches: on activations the step is a coin toss */
	return i + (frac >= 0.5f) - (frac <= -0.5f);
}

/* One q8_0 block from 32 floats; see the file comment. */
static void quantize_block_q8_0(struct cb_block_q8_0 *b, const float *x)
{
	float amax = 0.0f, d, id;
	int j;

	for (j = 0; j < CB_QK; j++) {
		float v = cb_fabsf(x[j]);

		if (v > amax)
			amax = v;
	}
	d = amax / 127.0f;
	id = d != 0.0f ? 1.0f / d : 0.0f;
	b->d = cb_f32_to_f16(d);
	for (j = 0; j < CB_QK; j++) {
		float v = x[j] * id;

		/*
		 * Only non-finite inputs (or a subnormal amax, where 1/d
		 * overflows) leave [-127, 127]; the clamp and NaN -> 0 make
		 * those cases defined, and the SIMD variants do the same.
		 */
		if (v != v)
			v = 0.0f;
		else if (v > 127.0f)
			v = 127.0f;
		else if (v < -127.0f)
			v = -127.0f;
		b->qs[j] = (cb_s8)round_away(v);
	}
}

/**
 * cb_quantize_row_q8_0_ref() - n floats to n / 32 q8_0 blocks.
 * @dst: the blocks.
 * @x: the values, n of them.
 * @n: a multiple of 32 (a partial last block is ignored).
 *
 * The reference for every variant's quantize_act[CB_ACT_Q8_0] op: those
 * must produce the same bytes.
 */
void cb_quantize_row_q8_0_ref(void *dst, const float *x, int n)
{
	struct cb_block_q8_0 *b = dst;
	int i;

	for (i = 0; i < n / CB_QK; i++)
		quantize_block_q8_0(&b[i], x + i * CB_QK);
}

/**
 * cb_quantize_row_q8_1_ref() - n floats to n / 32 q8_1 blocks.
 * @dst: the blocks.
 * @x: the values, n of them.
 * @n: a multiple of 32 (a partial last block is ignored).
 *
 * The quants and scale of q8_0, plus their sum.  The reference for every
 * variant's q8_1 quantizer.
 */
void cb_quantize_row_q8_1_ref(void *dst, const float *x, int n)
{
	struct cb_block_q8_1 *b = dst;
	struct cb_block_q8_0 t;
	int i, j, sum;

	for (i = 0; i < n / CB_QK; i++) {
		quantize_block_q8_0(&t, x + i * CB_QK);
		sum = 0;
		for (j = 0; j < CB_QK; j++) {
			b[i].qs[j] = t.qs[j];
			sum += t.qs[j];
		}
		b[i].d = t.d;
		b[i].sum = (cb_s16)sum;
	}
}

/**
 * cb_quantize_row_q8_K_ref() - n floats to n / 256 q8_K blocks.
 * @dst: the blocks.
 * @x: the values, n of them.
 * @n: a multiple of 256 (a partial last block is ignored).
 *
 * See the file comment.  The reference for every variant's q8_K quantizer.
 */
void cb_quantize_row_q8_K_ref(void *dst, const float *x, int n)
{
	struct cb_block_q8_K *b = dst;
	int i, j;

	for (i = 0; i < n / CB_QK_K; i++, x += CB_QK_K) {
		float amax = 0.0f, mx = 0.0f, is;

		for (j = 0; j < CB_QK_K; j++) {
			float v = cb_fabsf(x[j]);

			if (v > amax) {
				amax = v;
				mx = x[j];
			}
		}
		if (amax == 0.0f) {
			b[i].d_bits = 0;
			for (j = 0; j < CB_QK_K; j++)
				b[i].qs[j] = 0;
			for (j = 0; j < CB_QK_K / 16; j++)
				b[i].bsums[j] = 0;
			continue;
		}
		is = -127.0f / mx;
		for (j = 0; j < CB_QK_K; j++) {
			float v = x[j] * is;

			if (v != v)
				v = 0.0f;
			else if (v > 127.0f)
				v = 127.0f;
			else if (v < -127.0f)
				v = -127.0f;
			b[i].qs[j] = (cb_s8)cb_nearest_int(v);
		}
		for (j = 0; j < CB_QK_K / 16; j++) {
			int s = 0, l;

			for (l = 0; l < 16; l++)
				s += b[i].qs[16 * j + l];
			b[i].bsums[j] = (cb_s16)s;
		}
		b[i].d_bits = cb_f32_bits(1.0f / is);
	}
}
