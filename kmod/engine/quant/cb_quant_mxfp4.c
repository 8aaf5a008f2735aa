// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_quant_mxfp4.c - mxfp4 (OCP MX FP4: E2M1 codes under an E8M0 shared
 * exponent, cb_quant.h): the scalar quantizer and dequantizer (see
 * cb_quant_ref.h).
 *
 * The quantizer, per 32-weight block:
 *   amax = the largest |x| (NaN ignored); an all-zero (or all-NaN) block
 *   gets e = 0 and every code 0.  The OCP rule takes the exponent that puts
 *   amax in [4, 8) times the scale (E2M1's largest power of two is 4):
 *   e0 = floor(log2 amax) - 2 + 127, clamped to 0 .. 254.  Its codes clip
 *   everything in [6, 8) to 6, so e0 + 1 (amax in [2, 4)) is tried too and
 *   the one whose dequantized block has the smaller squared error is kept
 *   (e0 on ties; each error is summed in f32 in units of its own half
 *   scale, never underflowing, and e0 + 1's counts four times).  Each
 *   weight is rounded to the nearest E2M1 value of x / 2^(e - 127), halfway
 *   cases to the even code (the OCP conversion's round-half-even),
 *   magnitudes above 6 to 6; NaN to code 0, and a zero magnitude is stored
 *   as code 0 (+0), never -0.
 * x / 2^(e - 127) is computed as two multiplications by powers of two, each
 * exact (2^(128 - e) alone does not fit f32 for e = 0), against the table
 * doubled: the midpoints are compared in units of half the scale.
 */
#include "ops/cb_ops.h"
#include "quant/cb_quant_ref.h"

static const cb_s8 mxfp4_values[16] = CB_MXFP4_VALUES;

/* 2^k as f32 bits, k in -126 .. 127 */
static inline float pow2f(int k)
{
	return cb_f32_from_bits((cb_u32)(k + 127) << 23);
}

/*
 * The magnitude code 0..7 nearest t, t = |x| / (half the scale), against
 * the doubled values 0 1 2 3 4 6 8 12; ties go to the even code.
 */
static int e2m1_code(float t)
{
	if (t <= 0.5f)
		return 0;
	if (t < 1.5f)
		return 1;
	if (t <= 2.5f)
		return 2;
	if (t < 3.5f)
		return 3;
	if (t <= 5.0f)
		return 4;
	if (t < 7.0f)
		return 5;
	if (t <= 10.0f)
		return 6;
	return 7;
}

/* floor(log2 a) of a finite a > 0, from its bits (subnormals too) */
static int floor_log2f(float a)
{
	cb_u32 u = cb_f32_bits(a), ex = u >> 23 & 0xff;

	if (ex)
		return (int)ex - 127;
	return 31 - __builtin_clz(u & 0x7fffff) - 149;
}

/*
 * The 32 codes of x under exponent e; returns their squared error in units
 * of half the scale (t - doubled value, t < 16: no underflow however small
 * the block).
 */
static float mxfp4_assign(cb_u8 *qs, const float *x, int e)
{
	/* 2^(128 - e) = 2^a * 2^b with both factors in f32's normal range */
	int k = 128 - e, a = k / 2, b = k - a;
	float err = 0.0f;
	cb_u8 c[CB_QK];
	int j;

	for (j = 0; j < CB_QK; j++) {
		float v = x[j];
		float t = cb_fabsf(v) * pow2f(a) * pow2f(b), r;

		if (v != v) {
			c[j] = 0;
			continue;
		}
		c[j] = (cb_u8)e2m1_code(t);
		if (c[j] && cb_f32_bits(v) >> 31)
			c[j] |= 8;
		r = t - (float)mxfp4_values[c[j] & 7];
		err += r * r;
	}
	for (j = 0; j < CB_QK / 2; j++)
		qs[j] = (cb_u8)(c[j] | c[j + CB_QK / 2] << 4);
	return err;
}

static void quantize_block_mxfp4(struct cb_block_mxfp4 *b, const float *x)
{
	float amax = 0.0f, e0err, e1err;
	cb_u8 q1[CB_QK / 2];
	int j, e0;

	for (j = 0; j < CB_QK; j++)
		if (cb_fabsf(x[j]) > amax)	/* false for NaN */
			amax = cb_fabsf(x[j]);
	if (amax == 0.0f) {
		__builtin_memset(b, 0, sizeof(*b));
		return;
	}
	e0 = cb_isinff(amax) ? 254 : floor_log2f(amax) - 2 + 127;
	e0 = CB_MAX(0, CB_MIN(254, e0));
	e0err = mxfp4_assign(b->qs, x, e0);
	b->e = (cb_u8)e0;
	if (e0 == 254)
		return;
	/* e0 + 1's units are twice e0's: its squared error counts 4 times */
	e1err = mxfp4_assign(q1, x, e0 + 1);
	if (4.0f * e1err < e0err) {
		b->e = (cb_u8)(e0 + 1);
		__builtin_memcpy(b->qs, q1, sizeof(q1));
	}
}

void cb_quantize_mxfp4(void *dst, const float *x, int n)
{
	struct cb_block_mxfp4 *b = dst;
	int i;

	for (i = 0; i < n / CB_QK; i++)
		quantize_block_mxfp4(&b[i], x + i * CB_QK);
}

/* w = d * value[nibble], d = 2^(e - 128) (cb_e8m0_half_bits) */
void cb_dequantize_mxfp4(float *y, const void *src, int n)
{
	const struct cb_block_mxfp4 *b = src;
	int i, j;

	for (i = 0; i < n / CB_QK; i++, y += CB_QK) {
		float d = cb_f32_from_bits(cb_e8m0_half_bits(b[i].e));

		for (j = 0; j < CB_QK / 2; j++) {
			y[j] = d * (float)mxfp4_values[b[i].qs[j] & 15];
			y[j + CB_QK / 2] = d * (float)mxfp4_values[b[i].qs[j] >> 4];
		}
	}
}
