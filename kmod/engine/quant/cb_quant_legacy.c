// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_quant_legacy.c - the 32-weight block types with an offset or a fifth
 * bit: q4_1, q5_0, q5_1.  Scalar references (see cb_quant_ref.h).
 *
 * The quantizers follow GGUF's reference rules:
 * q4_1:  min, max of the block; d = (max - min) / 15, id = d ? 1/d : 0,
 *        stored d = half(d), m = half(min); q = min(15, trunc((x - min) * id
 *        + 0.5)).
 * q5_0:  m = the x of largest |x| (first on ties, sign kept), d = m / -16,
 *        id = d ? 1/d : 0, q = min(31, trunc(x * id + 16.5)).
 * q5_1:  as q4_1 with 31 levels: d = (max - min) / 31,
 *        q = min(31, trunc((x - min) * id + 0.5)).
 * Every float operation is one IEEE operation in the order written (the
 * engine is built with -ffp-contract=off).  A NaN input gives quant 0 and
 * NaN or infinite scales, which the converters refuse (the scale check of
 * cb_quant_find_bad_scale()).
 */
#include "ops/cb_ops.h"
#include "quant/cb_quant_ref.h"

/* trunc(v) clamped to [0, max]: the reference's (int8_t) cast plus MIN */
static inline int trunc_q(float v, int max)
{
	if (!(v >= 0.0f))	/* also NaN */
		return 0;
	if (v >= (float)max)
		return max;
	return (int)v;
}

static void block_min_max(const float *x, float *mn, float *mx)
{
	float lo = x[0], hi = x[0];
	int j;

	for (j = 1; j < CB_QK; j++) {
		if (x[j] < lo)
			lo = x[j];
		if (x[j] > hi)
			hi = x[j];
	}
	*mn = lo;
	*mx = hi;
}

void cb_quantize_q4_1(void *dst, const float *x, int n)
{
	struct cb_block_q4_1 *b = dst;
	int i, j;

	for (i = 0; i < n / CB_QK; i++, x += CB_QK) {
		float mn, mx, d, id;

		block_min_max(x, &mn, &mx);
		d = (mx - mn) / 15.0f;
		id = d != 0.0f ? 1.0f / d : 0.0f;
		b[i].d = cb_f32_to_f16(d);
		b[i].m = cb_f32_to_f16(mn);
		for (j = 0; j < CB_QK / 2; j++) {
			int lo = trunc_q((x[j] - mn) * id + 0.5f, 15);
			int hi = trunc_q((x[j + CB_QK / 2] - mn) * id + 0.5f, 15);

			b[i].qs[j] = (cb_u8)(lo | hi << 4);
		}
	}
}

/* 32 five-bit quants into the low nibbles and the fifth-bit word */
static void pack_q5(cb_u8 *qs, cb_u8 *qh, const int *q)
{
	cb_u32 h = 0;
	int j;

	for (j = 0; j < CB_QK / 2; j++) {
		qs[j] = (cb_u8)((q[j] & 15) | (q[j + CB_QK / 2] & 15) << 4);
		h |= (cb_u32)(q[j] >> 4) << j;
		h |= (cb_u32)(q[j + CB_QK / 2] >> 4) << (j + CB_QK / 2);
	}
	qh[0] = (cb_u8)h;
	qh[1] = (cb_u8)(h >> 8);
	qh[2] = (cb_u8)(h >> 16);
	qh[3] = (cb_u8)(h >> 24);
}

void cb_quantize_q5_0(void *dst, const float *x, int n)
{
	struct cb_block_q5_0 *b = dst;
	int i, j, q[CB_QK];

	for (i = 0; i < n / CB_QK; i++, x += CB_QK) {
		float amax = 0.0f, mx = 0.0f, d, id;

		for (j = 0; j < CB_QK; j++) {
			float v = cb_fabsf(x[j]);

			if (amax < v) {
				amax = v;
				mx = x[j];
			}
		}
		d = mx / -16.0f;
		id = d != 0.0f ? 1.0f / d : 0.0f;
		b[i].d = cb_f32_to_f16(d);
		for (j = 0; j < CB_QK; j++)
			q[j] = trunc_q(x[j] * id + 16.5f, 31);
		pack_q5(b[i].qs, b[i].qh, q);
	}
}

void cb_quantize_q5_1(void *dst, const float *x, int n)
{
	struct cb_block_q5_1 *b = dst;
	int i, j, q[CB_QK];

	for (i = 0; i < n / CB_QK; i++, x += CB_QK) {
		float mn, mx, d, id;

		block_min_max(x, &mn, &mx);
		d = (mx - mn) / 31.0f;
		id = d != 0.0f ? 1.0f / d : 0.0f;
		b[i].d = cb_f32_to_f16(d);
		b[i].m = cb_f32_to_f16(mn);
		for (j = 0; j < CB_QK; j++)
			q[j] = trunc_q((x[j] - mn) * id + 0.5f, 31);
		pack_q5(b[i].qs, b[i].qh, q);
	}
}

/* The 32 quants (0..15 or 0..31) of a q4/q5 block in element order. */
static void unpack_q(const cb_u8 *qs, const cb_u8 *qh, int *q)
{
	cb_u32 h = qh ? (cb_u32)qh[0] | (cb_u32)qh[1] << 8 | (cb_u32)qh[2] << 16 |
			(cb_u32)qh[3] << 24 : 0;
	int j;

	for (j = 0; j < CB_QK / 2; j++) {
		q[j] = (qs[j] & 15) | ((h >> j) & 1) << 4;
		q[j + CB_QK / 2] = (qs[j] >> 4) | ((h >> (j + CB_QK / 2)) & 1) << 4;
	}
}

/* w = d * q + m */
void cb_dequantize_q4_1(float *y, const void *src, int n)
{
	const struct cb_block_q4_1 *b = src;
	int i, j, q[CB_QK];

	for (i = 0; i < n / CB_QK; i++, y += CB_QK) {
		float d = cb_f16_to_f32(b[i].d), m = cb_f16_to_f32(b[i].m);

		unpack_q(b[i].qs, CB_NULL, q);
		for (j = 0; j < CB_QK; j++)
			y[j] = (float)q[j] * d + m;
	}
}

/* w = d * (q - 16) */
void cb_dequantize_q5_0(float *y, const void *src, int n)
{
	const struct cb_block_q5_0 *b = src;
	int i, j, q[CB_QK];

	for (i = 0; i < n / CB_QK; i++, y += CB_QK) {
		float d = cb_f16_to_f32(b[i].d);

		unpack_q(b[i].qs, b[i].qh, q);
		for (j = 0; j < CB_QK; j++)
			y[j] = (float)(q[j] - 16) * d;
	}
}

/* w = d * q + m */
void cb_dequantize_q5_1(float *y, const void *src, int n)
{
	const struct cb_block_q5_1 *b = src;
	int i, j, q[CB_QK];

	for (i = 0; i < n / CB_QK; i++, y += CB_QK) {
		float d = cb_f16_to_f32(b[i].d), m = cb_f16_to_f32(b[i].m);

		unpack_q(b[i].qs, b[i].qh, q);
		for (j = 0; j < CB_QK; j++)
			y[j] = (float)q[j] * d + m;
	}
}
