/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_quant_ref.h - the scalar quantizers and dequantizers of every block
 * type, behind cb_quantize_row() / cb_dequantize_row() (cb_quant_row.c).
 *
 * FPU-side header: only engine objects include it.
 *
 * Each quantize function takes n floats (n a multiple of the type's block;
 * a partial last block is ignored) and writes n / block blocks; each
 * dequantize function writes n floats.  Dequantization computes every
 * weight in f32 in the order GGUF's reference does (for q4_K:
 * (d * sc) * q - (dmin * m)), and tests/ref/quants.py reproduces those
 * values bit for bit from the layouts in numpy.
 */
#ifndef CB_QUANT_REF_H
#define CB_QUANT_REF_H

#include "ops/cb_math.h"
#include "quant/cb_quant.h"

/*
 * Round to nearest, halfway cases to even (GGUF's nearest_int), for the
 * quantizers.  NaN gives 0; values beyond +-2^22 are clamped first (no
 * quantizer needs them, and it keeps the magic-number trick defined).
 */
static inline int cb_nearest_int(float v)
{
	if (v != v)
		return 0;
	if (v > 4194303.0f)
		v = 4194303.0f;
	else if (v < -4194303.0f)
		v = -4194303.0f;
	/* adding 1.5 * 2^23 rounds to an integer in the low mantissa bits */
	return (int)(cb_f32_bits(v + 12582912.0f) & 0x007fffff) - 0x00400000;
}

/* cb_quant_legacy.c */
void cb_quantize_q4_1(void *dst, const float *x, int n);
void cb_quantize_q5_0(void *dst, const float *x, int n);
void cb_quantize_q5_1(void *dst, const float *x, int n);
void cb_dequantize_q4_1(float *y, const void *src, int n);
void cb_dequantize_q5_0(float *y, const void *src, int n);
void cb_dequantize_q5_1(float *y, const void *src, int n);

/* cb_quant_iq4.c */
void cb_quantize_iq4_nl(void *dst, const float *x, int n);
void cb_quantize_iq4_xs(void *dst, const float *x, int n);
void cb_dequantize_iq4_nl(float *y, const void *src, int n);
void cb_dequantize_iq4_xs(float *y, const void *src, int n);

/* cb_quant_mxfp4.c */
void cb_quantize_mxfp4(void *dst, const float *x, int n);
void cb_dequantize_mxfp4(float *y, const void *src, int n);

/* cb_quant_k.c */
void cb_quantize_q2_K(void *dst, const float *x, int n);
void cb_quantize_q3_K(void *dst, const float *x, int n);
void cb_quantize_q4_K(void *dst, const float *x, int n);
void cb_quantize_q5_K(void *dst, const float *x, int n);
void cb_quantize_q6_K(void *dst, const float *x, int n);

/* cb_dequant_k.c */
void cb_dequantize_q2_K(float *y, const void *src, int n);
void cb_dequantize_q3_K(float *y, const void *src, int n);
void cb_dequantize_q4_K(float *y, const void *src, int n);
void cb_dequantize_q5_K(float *y, const void *src, int n);
void cb_dequantize_q6_K(float *y, const void *src, int n);

/*
 * The packed 6-bit scales of q4_K / q5_K: sub-block j's scale and min
 * (j in 0..7), as the layout comment in cb_quant.h says.
 */
static inline void cb_k4_scale_min(const cb_u8 *q, int j, int *sc, int *m)
{
	if (j < 4) {
		*sc = q[j] & 63;
		*m = q[j + 4] & 63;
	} else {
		*sc = (q[j + 4] & 15) | (q[j - 4] >> 6) << 4;
		*m = (q[j + 4] >> 4) | (q[j] >> 6) << 4;
	}
}

/* q3_K's sub-block scale s (0..15), unsigned 0..63 (the weight uses sc - 32). */
static inline int cb_q3k_scale(const cb_u8 *sc, int s)
{
	int lo = s < 8 ? sc[s] & 15 : sc[s - 8] >> 4;

	return lo | ((sc[8 + s % 4] >> (2 * (s / 4))) & 3) << 4;
}

/* iq4_xs's sub-block scale j (0..7), unsigned 0..63 (the weight uses ls - 32). */
static inline int cb_iq4xs_scale(const struct cb_block_iq4_xs *b, int j)
{
	return ((b->scales_l[j / 2] >> (4 * (j % 2))) & 15) |
	       ((b->scales_h >> (2 * j)) & 3) << 4;
}

#endif /* CB_QUANT_REF_H */
