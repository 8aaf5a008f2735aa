// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_dequant_k.c - k-quant super-blocks (q2_K .. q6_K) back to floats.
 *
 * Each weight is computed in f32 in GGUF's order: the sub-block factors
 * first (d * sc, dmin * m), then one product and one difference, so
 * every engine path that dequantizes (the embedding row of a token, the
 * converters, the tests) sees the values llama.cpp's dequantize_row_*
 * computes, and tests/ref/quants.py reproduces them bit for bit.  The
 * gemm kernels never dequantize: they take the integer dot products.
 */
#include "ops/cb_ops.h"
#include "quant/cb_quant_ref.h"

/* 2 bits of weight 128h + 32p + l: qs[32h + l] >> 2p */
static inline int q2_at(const cb_u8 *qs, int e)
{
	return (qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
}

/* w = (d * sc) * q - (dmin * m), 16 sub-blocks of 16 */
void cb_dequantize_q2_K(float *y, const void *src, int n)
{
	const struct cb_block_q2_K *b = src;
	int i, s, l;

	for (i = 0; i < n / CB_QK_K; i++) {
		float d = cb_f16_to_f32(b[i].d), dmin = cb_f16_to_f32(b[i].dmin);

		for (s = 0; s < 16; s++, y += 16) {
			float dl = d * (float)(b[i].scales[s] & 15);
			float ml = dmin * (float)(b[i].scales[s] >> 4);

			for (l = 0; l < 16; l++)
				y[l] = dl * (float)q2_at(b[i].qs, 16 * s + l) - ml;
		}
	}
}

/* w = (d * (sc - 32)) * (q - 4), q = 2 low bits | hmask bit << 2 */
void cb_dequantize_q3_K(float *y, const void *src, int n)
{
	const struct cb_block_q3_K *b = src;
	int i, s, l;

	for (i = 0; i < n / CB_QK_K; i++) {
		float d = cb_f16_to_f32(b[i].d);

		for (s = 0; s < 16; s++, y += 16) {
			float dl = d * (float)(cb_q3k_scale(b[i].scales, s) - 32);

			for (l = 0; l < 16; l++) {
				int e = 16 * s + l, h = (b[i].hmask[e % 32] >> (e / 32)) & 1;
				int q = q2_at(b[i].qs, e) | h << 2;

				y[l] = dl * (float)(q - 4);
			}
		}
	}
}

/*
 * q4_K and q5_K: w = (d * sc) * q - (dmin * m); weight 64c + l is the low
 * nibble of qs[32c + l], 64c + 32 + l its high nibble; q5_K's fifth bit
 * from qh.
 */
static void dequant_k45(float *y, const cb_u8 *scales, cb_u16 dh, cb_u16 dminh,
			const cb_u8 *qs, const cb_u8 *qh)
{
	float d = cb_f16_to_f32(dh), dmin = cb_f16_to_f32(dminh);
	int c, l;

	for (c = 0; c < 4; c++, y += 64) {
		int s0, m0, s1, m1;
		float d0, dm0, d1, dm1;

		cb_k4_scale_min(scales, 2 * c, &s0, &m0);
		cb_k4_scale_min(scales, 2 * c + 1, &s1, &m1);
		d0 = d * (float)s0;
		dm0 = dmin * (float)m0;
		d1 = d * (float)s1;
		dm1 = dmin * (float)m1;
		for (l = 0; l < 32; l++) {
			int lo = qs[32 * c + l] & 15, hi = qs[32 * c + l] >> 4;

			if (qh) {
				lo |= ((qh[l] >> (2 * c)) & 1) << 4;
				hi |= ((qh[l] >> (2 * c + 1)) & 1) << 4;
			}
			y[l] = d0 * (float)lo - dm0;
			y[l + 32] = d1 * (float)hi - dm1;
		}
	}
}

void cb_dequantize_q4_K(float *y, const void *src, int n)
{
	const struct cb_block_q4_K *b = src;
	int i;

	for (i = 0; i < n / CB_QK_K; i++, y += CB_QK_K)
		dequant_k45(y, b[i].scales, b[i].d, b[i].dmin, b[i].qs, CB_NULL);
}

void cb_dequantize_q5_K(float *y, const void *src, int n)
{
	const struct cb_block_q5_K *b = src;
	int i;

	for (i = 0; i < n / CB_QK_K; i++, y += CB_QK_K)
		dequant_k45(y, b[i].scales, b[i].d, b[i].dmin, b[i].qs, b[i].qh);
}

/* w = (d * sc) * (q - 32) */
void cb_dequantize_q6_K(float *y, const void *src, int n)
{
	const struct cb_block_q6_K *b = src;
	int i, h, l;

	for (i = 0; i < n / CB_QK_K; i++) {
		float d = cb_f16_to_f32(b[i].d);

		for (h = 0; h < 2; h++, y += 128) {
			const cb_u8 *ql = b[i].ql + 64 * h, *qh = b[i].qh + 32 * h;
			const cb_s8 *sc = b[i].scales + 8 * h;

			for (l = 0; l < 32; l++) {
				int s = l / 16;
				int q1 = (ql[l] & 15) | (qh[l] & 3) << 4;
				int q2 = (ql[l + 32] & 15) | ((qh[l] >> 2) & 3) << 4;
				int q3 = (ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4;
				int q4 = (ql[l + 32] >> 4) | (qh[l] >> 6) << 4;

				y[l] = d * (float)sc[s] * (float)(q1 - 32);
				y[l + 32] = d * (float)sc[s + 2] * (float)(q2 - 32);
				y[l + 64] = d * (float)sc[s + 4] * (float)(q3 - 32);
				y[l + 96] = d * (float)sc[s + 6] * (float)(q4 - 32);
			}
		}
	}
}
