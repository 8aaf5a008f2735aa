// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_quant_iq4.c - iq4_nl and iq4_xs: nibbles that index the non-uniform
 * table CB_IQ4NL_VALUES.  Scalar references (see cb_quant_ref.h).
 *
 * The quantizer is GGUF's reference search (no importance matrix), per
 * 32-weight sub-block:
 *   weights w_i = x_i^2; m = the x of largest |x|; start from d = m / 127
 *   (the table's extreme is -127, so the largest weight lands on it), put
 *   every x on the nearest table value of x / d, and take the least-squares
 *   scale d = sum w q x / sum w q^2 of that assignment; then for
 *   t = -7 .. 7 try the assignment made with 1/d = (t - 127) / m and keep
 *   the least-squares scale of whichever assignment maximises
 *   (sum w q x)^2 / sum w q^2 (the error it leaves is the least).
 * iq4_nl stores that scale as the block's half and assigns the nibbles
 * with it.  iq4_xs stores d = -s / 32 for the sub-block scale s of largest
 * magnitude, each sub-block's l = clamp(round(s_j / d), -32, 31) + 32 in
 * six bits, and assigns the nibbles with d * (l - 32).  A sub-block whose
 * largest |x| is below 1e-15 gets scale 0.
 */
#include "ops/cb_ops.h"
#include "quant/cb_quant_ref.h"

#define GROUP_MAX_EPS 1e-15f

static const cb_s8 iq4_values[16] = CB_IQ4NL_VALUES;

/* The index of the table value nearest x (the upper one on ties). */
static int best_index(float x)
{
	int lo = 0, hi = 15;

	if (x <= (float)iq4_values[0])
		return 0;
	if (x >= (float)iq4_values[15])
		return 15;
	while (hi - lo > 1) {
		int mid = (lo + hi) / 2;

		if (x < (float)iq4_values[mid])
			hi = mid;
		else
			lo = mid;
	}
	return x - (float)iq4_values[hi - 1] < (float)iq4_values[hi] - x ? hi - 1 : hi;
}

/* sum w q x and sum w q^2 of the assignment made with inverse scale id */
static void iq4_sums(const float *x, const float *w, float id, float *sqx, float *sq2)
{
	float a = 0.0f, b = 0.0f;
	int j;

	for (j = 0; j < CB_QK; j++) {
		float q = (float)iq4_values[best_index(id * x[j])];

		a += w[j] * q * x[j];
		b += w[j] * q * q;
	}
	*sqx = a;
	*sq2 = b;
}

/* The least-squares scale of the best assignment of one sub-block (above). */
static float iq4_sub_scale(const float *x)
{
	float w[CB_QK], amax = 0.0f, mx = 0.0f, d, sqx, sq2, best;
	int j, t;

	for (j = 0; j < CB_QK; j++) {
		float ax = cb_fabsf(x[j]);

		w[j] = x[j] * x[j];
		if (ax > amax) {
			amax = ax;
			mx = x[j];
		}
	}
	if (!(amax >= GROUP_MAX_EPS))	/* also NaN */
		return 0.0f;
	d = -mx / (float)iq4_values[0];
	iq4_sums(x, w, 1.0f / d, &sqx, &sq2);
	d = sq2 > 0.0f ? sqx / sq2 : d;
	best = d * sqx;
	for (t = -7; t <= 7; t++) {
		iq4_sums(x, w, ((float)t + (float)iq4_values[0]) / mx, &sqx, &sq2);
		if (sq2 > 0.0f && sqx * sqx > best * sq2) {
			d = sqx / sq2;
			best = d * sqx;
		}
	}
	return d;
}

/* 32 nibbles of the weights x against scale d (0: index of the value nearest 0) */
static void iq4_assign(cb_u8 *qs, const float *x, float d)
{
	float id = d != 0.0f ? 1.0f / d : 0.0f;
	int j;

	for (j = 0; j < CB_QK / 2; j++)
		qs[j] = (cb_u8)(best_index(id * x[j]) |
				best_index(id * x[j + CB_QK / 2]) << 4);
}

void cb_quantize_iq4_nl(void *dst, const float *x, int n)
{
	struct cb_block_iq4_nl *b = dst;
	int i;

	for (i = 0; i < n / CB_QK; i++, x += CB_QK) {
		float d = iq4_sub_scale(x);

		b[i].d = cb_f32_to_f16(d);
		iq4_assign(b[i].qs, x, d);
	}
}

void cb_quantize_iq4_xs(void *dst, const float *x, int n)
{
	struct cb_block_iq4_xs *b = dst;
	int i, j;

	for (i = 0; i < n / CB_QK_K; i++, x += CB_QK_K) {
		float s[CB_QK_K / CB_QK], smax = 0.0f, amax = 0.0f, d, id;

		for (j = 0; j < CB_QK_K / CB_QK; j++) {
			s[j] = iq4_sub_scale(x + CB_QK * j);
			if (cb_fabsf(s[j]) > amax) {
				amax = cb_fabsf(s[j]);
				smax = s[j];
			}
		}
		d = -smax / 32.0f;
		id = d != 0.0f ? 1.0f / d : 0.0f;
		b[i].d = cb_f32_to_f16(d);
		b[i].scales_h = 0;
		for (j = 0; j < CB_QK_K / CB_QK; j++) {
			int l = cb_nearest_int(id * s[j]);

			l = CB_MAX(-32, CB_MIN(31, l));
			iq4_assign(b[i].qs + 16 * j, x + CB_QK * j, d * (float)l);
			l += 32;
			if (j % 2 == 0)
				b[i].scales_l[j / 2] = (cb_u8)(l & 15);
			else
				b[i].scales_l[j / 2] |= (cb_u8)((l & 15) << 4);
			b[i].scales_h |= (cb_u16)((l >> 4) << (2 * j));
		}
	}
}

/* w = d * value[nibble] */
void cb_dequantize_iq4_nl(float *y, const void *src, int n)
{
	const struct cb_block_iq4_nl *b = src;
	int i, j;

	for (i = 0; i < n / CB_QK; i++, y += CB_QK) {
		float d = cb_f16_to_f32(b[i].d);

		for (j = 0; j < CB_QK / 2; j++) {
			y[j] = d * (float)iq4_values[b[i].qs[j] & 15];
			y[j + CB_QK / 2] = d * (float)iq4_values[b[i].qs[j] >> 4];
		}
	}
}

/* w = (d * (ls - 32)) * value[nibble] */
void cb_dequantize_iq4_xs(float *y, const void *src, int n)
{
	const struct cb_block_iq4_xs *b = src;
	int i, j, l;

	for (i = 0; i < n / CB_QK_K; i++) {
		float d = cb_f16_to_f32(b[i].d);

		for (j = 0; j < CB_QK_K / CB_QK; j++, y += CB_QK) {
			const cb_u8 *qs = b[i].qs + 16 * j;
			float dl = d * (float)(cb_iq4xs_scale(&b[i], j) - 32);

			for (l = 0; l < 16; l++) {
				y[l] = dl * (float)iq4_values[qs[l] & 15];
				y[l + 16] = dl * (float)iq4_values[qs[l] >> 4];
			}
		}
	}
}
