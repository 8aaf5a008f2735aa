// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_quant_k.c - the k-quant quantizers (q2_K .. q6_K), scalar.
 *
 * These follow GGUF's reference quantizers (quantize_row_qN_K_ref, no
 * importance matrix) step by step: the same searches, in the same order of
 * float operations, so that a tensor quantized here is what llama.cpp's
 * reference path would write (a cross-check against llama.cpp itself is not
 * part of the tests).  Per super-block of 256:
 *
 * q6_K: per 16-weight sub-block, make_qx: the scale that maximises
 *   (sum w q x)^2 / sum w q^2 with w = x^2 over the assignments made with
 *   1/d = -(32 + t/10) / m (t = -9 .. 9, m the x of largest |x|), q in
 *   -32..31; the super-block scale d = s / -128 for the sub-block scale s
 *   of largest magnitude, each sub-block scale min(127, round(s_j / d)) in a
 *   signed byte, and the quants re-assigned against the rounded scales.
 * q3_K: per 16-weight sub-block, make_q3: start from 1/d = -4 / m, then up
 *   to 5 passes that move single quants to where they lower the weighted
 *   (w = x^2) error; d = s / -32 over the sub-block scales, 6-bit scales
 *   round(s_j / d) + 32, quants (-4..3) re-assigned against them.
 * q2_K, q4_K, q5_K: per sub-block (16, 32, 32 weights), make_qkx2: an
 *   asymmetric fit w ~ d q + mn (mn <= 0) with weights (q2_K: |x|, and the
 *   absolute error; q4_K/q5_K: sqrt(mean x^2) + |x| and the squared error),
 *   trying 1/d = (levels + rmin + t * rdelta) / (max - min) for t = 0 .. n
 *   and keeping the least-error least-squares (d, mn) of those
 *   assignments; the super-block keeps d, dmin = max / 63 (q4_K, q5_K) or
 *   / 15 (q2_K) of the sub-block scales and mins, each sub-block's as
 *   round(s_j / d), and the quants are re-assigned against the rounded
 *   scales and mins.
 *
 * Every float operation is one IEEE operation in the order written
 * (-ffp-contract=off).  Non-finite input is defined but not meaningful: the
 * searches skip NaN (its quant becomes 0) and an infinity zeroes or
 * poisons its sub-block; the converters refuse any tensor whose stored
 * scales are not finite (cb_quant_find_bad_scale()).
 */
#include "ops/cb_ops.h"
#include "quant/cb_quant_ref.h"

#define GROUP_MAX_EPS 1e-15f

/* make_qx with rmse_type 1 (weights x^2): returns the scale, quants + nmax in L. */
static float make_qx(int n, int nmax, const float *x, cb_s8 *L)
{
	float amax = 0.0f, mx = 0.0f, iscale, sumlx = 0.0f, suml2 = 0.0f, scale, best;
	int i, t;

	for (i = 0; i < n; i++) {
		float ax = cb_fabsf(x[i]);

		if (ax > amax) {
			amax = ax;
			mx = x[i];
		}
	}
	if (!(amax >= GROUP_MAX_EPS)) {
		for (i = 0; i < n; i++)
			L[i] = 0;
		return 0.0f;
	}
	iscale = -(float)nmax / mx;
	for (i = 0; i < n; i++) {
		int l = CB_MAX(-nmax, CB_MIN(nmax - 1, cb_nearest_int(iscale * x[i])));
		float w = x[i] * x[i];

		L[i] = (cb_s8)(l + nmax);
		sumlx += w * x[i] * (float)l;
		suml2 += w * (float)l * (float)l;
	}
	scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
	best = scale * sumlx;
	for (t = -9; t <= 9; t++) {
		if (!t)
			continue;
		iscale = -((float)nmax + 0.1f * (float)t) / mx;
		sumlx = 0.0f;
		suml2 = 0.0f;
		for (i = 0; i < n; i++) {
			int l = CB_MAX(-nmax, CB_MIN(nmax - 1, cb_nearest_int(iscale * x[i])));
			float w = x[i] * x[i];

			sumlx += w * x[i] * (float)l;
			suml2 += w * (float)l * (float)l;
		}
		if (suml2 > 0.0f && sumlx * sumlx > best * suml2) {
			for (i = 0; i < n; i++)
				L[i] = (cb_s8)(nmax + CB_MAX(-nmax, CB_MIN(nmax - 1,
					cb_nearest_int(iscale * x[i]))));
			scale = sumlx / suml2;
			best = scale * sumlx;
		}
	}
	return scale;
}

/* make_q3_quants with the rmse refinement: returns the scale, quants + nmax in L. */
static float make_q3(int n, int nmax, const float *x, cb_s8 *L)
{
	float amax = 0.0f, mx = 0.0f, iscale, sumlx = 0.0f, suml2 = 0.0f;
	int i, pass;

	for (i = 0; i < n; i++) {
		float ax = cb_fabsf(x[i]);

		if (ax > amax) {
			amax = ax;
			mx = x[i];
		}
	}
	if (!(amax >= GROUP_MAX_EPS)) {
		for (i = 0; i < n; i++)
			L[i] = 0;
		return 0.0f;
	}
	iscale = -(float)nmax / mx;
	for (i = 0; i < n; i++) {
		int l = CB_MAX(-nmax, CB_MIN(nmax - 1, cb_nearest_int(iscale * x[i])));
		float w = x[i] * x[i];

		L[i] = (cb_s8)l;
		sumlx += w * x[i] * (float)l;
		suml2 += w * (float)l * (float)l;
	}
	for (pass = 0; pass < 5; pass++) {
		int changed = 0;

		for (i = 0; i < n; i++) {
			float w = x[i] * x[i];
			float slx = sumlx - w * x[i] * (float)L[i], sl2;
			int nl;

			if (!(slx > 0.0f))
				continue;
			sl2 = suml2 - w * (float)L[i] * (float)L[i];
			nl = CB_MAX(-nmax, CB_MIN(nmax - 1, cb_nearest_int(x[i] * sl2 / slx)));
			if (nl == L[i])
				continue;
			slx += w * x[i] * (float)nl;
			sl2 += w * (float)nl * (float)nl;
			if (sl2 > 0.0f && slx * slx * suml2 > sumlx * sumlx * sl2) {
				L[i] = (cb_s8)nl;
				sumlx = slx;
				suml2 = sl2;
				changed++;
			}
		}
		if (!changed)
			break;
	}
	for (i = 0; i < n; i++)
		L[i] = (cb_s8)(L[i] + nmax);
	return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

/*
 * make_qkx2_quants: fit x ~ scale * L + mn (mn <= 0, L in 0..nmax) under
 * weights w; returns scale, stores -mn in *the_min.  mad: absolute instead
 * of squared error.
 */
static float make_qkx2(int n, int nmax, const float *x, const float *w, cb_u8 *L,
		       float *the_min, float rmin, float rdelta, int nstep, int mad)
{
	float mn = x[0], mx = x[0], sum_w = w[0], sum_x = sum_w * x[0];
	float iscale, scale, best = 0.0f;
	cb_u8 aux[32];
	int i, t;

	for (i = 1; i < n; i++) {
		if (x[i] < mn)
			mn = x[i];
		if (x[i] > mx)
			mx = x[i];
		sum_w += w[i];
		sum_x += w[i] * x[i];
	}
	if (mn > 0.0f)
		mn = 0.0f;
	if (mx == mn || !(mx > mn)) {	/* constant block, or NaN */
		for (i = 0; i < n; i++)
			L[i] = 0;
		*the_min = -mn;
		return 0.0f;
	}
	iscale = (float)nmax / (mx - mn);
	scale = 1.0f / iscale;
	for (i = 0; i < n; i++) {
		int l = CB_MAX(0, CB_MIN(nmax, cb_nearest_int(iscale * (x[i] - mn))));
		float diff = scale * (float)l + mn - x[i];

		L[i] = (cb_u8)l;
		best += w[i] * (mad ? cb_fabsf(diff) : diff * diff);
	}
	for (t = 0; t <= nstep; t++) {
		float sum_l = 0.0f, sum_l2 = 0.0f, sum_xl = 0.0f, D;

		iscale = (rmin + rdelta * (float)t + (float)nmax) / (mx - mn);
		for (i = 0; i < n; i++) {
			int l = CB_MAX(0, CB_MIN(nmax, cb_nearest_int(iscale * (x[i] - mn))));

			aux[i] = (cb_u8)l;
			sum_l += w[i] * (float)l;
			sum_l2 += w[i] * (float)l * (float)l;
			sum_xl += w[i] * (float)l * x[i];
		}
		D = sum_w * sum_l2 - sum_l * sum_l;
		if (D > 0.0f) {
			float ts = (sum_w * sum_xl - sum_x * sum_l) / D;
			float tm = (sum_l2 * sum_x - sum_l * sum_xl) / D;
			float err = 0.0f;

			if (tm > 0.0f) {
				tm = 0.0f;
				ts = sum_xl / sum_l2;
			}
			for (i = 0; i < n; i++) {
				float diff = ts * (float)aux[i] + tm - x[i];

				err += w[i] * (mad ? cb_fabsf(diff) : diff * diff);
			}
			if (err < best) {
				for (i = 0; i < n; i++)
					L[i] = aux[i];
				best = err;
				scale = ts;
				mn = tm;
			}
		}
	}
	*the_min = -mn;
	return scale;
}

/* the two-bit planes of q2_K / q3_K: weight 128h + 32p + l at qs[32h + l] bits 2p */
static void pack_2bit(cb_u8 *qs, const cb_u8 *L)
{
	int j, l;

	for (j = 0; j < CB_QK_K; j += 128)
		for (l = 0; l < 32; l++)
			qs[j / 4 + l] = (cb_u8)(L[j + l] | L[j + l + 32] << 2 |
						L[j + l + 64] << 4 | L[j + l + 96] << 6);
}

void cb_quantize_q2_K(void *dst, const float *x, int n)
{
	struct cb_block_q2_K *y = dst;
	cb_u8 L[CB_QK_K];
	float w[16], sc[16], mins[16];
	int i, j, l;

	for (i = 0; i < n / CB_QK_K; i++, x += CB_QK_K) {
		float max_sc = 0.0f, max_min = 0.0f, d, dm;

		for (j = 0; j < 16; j++) {
			for (l = 0; l < 16; l++)
				w[l] = cb_fabsf(x[16 * j + l]);
			sc[j] = make_qkx2(16, 3, x + 16 * j, w, L + 16 * j, &mins[j],
					  -0.5f, 0.1f, 15, 1);
			if (sc[j] > max_sc)
				max_sc = sc[j];
			if (mins[j] > max_min)
				max_min = mins[j];
		}
		if (max_sc > 0.0f) {
			float is = 15.0f / max_sc;

			for (j = 0; j < 16; j++)
				y[i].scales[j] = (cb_u8)cb_nearest_int(is * sc[j]);
			y[i].d = cb_f32_to_f16(max_sc / 15.0f);
		} else {
			for (j = 0; j < 16; j++)
				y[i].scales[j] = 0;
			y[i].d = cb_f32_to_f16(0.0f);
		}
		if (max_min > 0.0f) {
			float im = 15.0f / max_min;

			for (j = 0; j < 16; j++)
				y[i].scales[j] |= (cb_u8)(cb_nearest_int(im * mins[j]) << 4);
			y[i].dmin = cb_f32_to_f16(max_min / 15.0f);
		} else {
			y[i].dmin = cb_f32_to_f16(0.0f);
		}
		for (j = 0; j < 16; j++) {
			d = cb_f16_to_f32(y[i].d) * (float)(y[i].scales[j] & 15);
			if (d == 0.0f)
				continue;
			dm = cb_f16_to_f32(y[i].dmin) * (float)(y[i].scales[j] >> 4);
			for (l = 0; l < 16; l++)
				L[16 * j + l] = (cb_u8)CB_MAX(0, CB_MIN(3,
					cb_nearest_int((x[16 * j + l] + dm) / d)));
		}
		pack_2bit(y[i].qs, L);
	}
}

void cb_quantize_q3_K(void *dst, const float *x, int n)
{
	struct cb_block_q3_K *y = dst;
	cb_s8 L[CB_QK_K];
	cb_u8 U[CB_QK_K];
	float sc[16];
	int i, j, l;

	for (i = 0; i < n / CB_QK_K; i++, x += CB_QK_K) {
		float max_sc = 0.0f, amax = 0.0f;

		for (j = 0; j < 16; j++) {
			sc[j] = make_q3(16, 4, x + 16 * j, L + 16 * j);
			if (cb_fabsf(sc[j]) > amax) {
				amax = cb_fabsf(sc[j]);
				max_sc = sc[j];
			}
		}
		for (j = 0; j < 12; j++)
			y[i].scales[j] = 0;
		if (max_sc != 0.0f) {
			float is = -32.0f / max_sc;

			for (j = 0; j < 16; j++) {
				int q = CB_MAX(-32, CB_MIN(31, cb_nearest_int(is * sc[j]))) + 32;

				if (j < 8)
					y[i].scales[j] = (cb_u8)(q & 15);
				else
					y[i].scales[j - 8] |= (cb_u8)((q & 15) << 4);
				y[i].scales[j % 4 + 8] |= (cb_u8)((q >> 4) << (2 * (j / 4)));
			}
			y[i].d = cb_f32_to_f16(1.0f / is);
		} else {
			y[i].d = cb_f32_to_f16(0.0f);
		}
		for (j = 0; j < 16; j++) {
			float d = cb_f16_to_f32(y[i].d) *
				  (float)(cb_q3k_scale(y[i].scales, j) - 32);

			if (d == 0.0f)
				continue;
			for (l = 0; l < 16; l++)
				L[16 * j + l] = (cb_s8)(CB_MAX(-4, CB_MIN(3,
					cb_nearest_int(x[16 * j + l] / d))) + 4);
		}
		/* the third bit of weight j into bit j / 32 of hmask[j % 32] */
		for (j = 0; j < 32; j++)
			y[i].hmask[j] = 0;
		for (j = 0; j < CB_QK_K; j++) {
			U[j] = (cb_u8)L[j];
			if (U[j] > 3) {
				y[i].hmask[j % 32] |= (cb_u8)(1 << (j / 32));
				U[j] -= 4;
			}
		}
		pack_2bit(y[i].qs, U);
	}
}

/* q4_K / q5_K share everything but the number of levels and the search. */
static void quantize_k45(cb_u8 *scales, cb_u16 *dh, cb_u16 *dminh, cb_u8 *L,
			 const float *x, int nmax)
{
	float w[32], sc[8], mins[8], max_sc = 0.0f, max_min = 0.0f, is, im;
	int j, l;

	for (j = 0; j < 8; j++) {
		float sum_x2 = 0.0f, av_x;

		for (l = 0; l < 32; l++)
			sum_x2 += x[32 * j + l] * x[32 * j + l];
		av_x = cb_sqrtf(sum_x2 / 32.0f);
		for (l = 0; l < 32; l++)
			w[l] = av_x + cb_fabsf(x[32 * j + l]);
		if (nmax == 15)
			sc[j] = make_qkx2(32, 15, x + 32 * j, w, L + 32 * j, &mins[j],
					  -1.0f, 0.1f, 20, 0);
		else
			sc[j] = make_qkx2(32, 31, x + 32 * j, w, L + 32 * j, &mins[j],
					  -0.5f, 0.1f, 15, 0);
		if (sc[j] > max_sc)
			max_sc = sc[j];
		if (mins[j] > max_min)
			max_min = mins[j];
	}
	is = max_sc > 0.0f ? 63.0f / max_sc : 0.0f;
	im = max_min > 0.0f ? 63.0f / max_min : 0.0f;
	for (j = 0; j < 8; j++) {
		/* the reference stores these through uint8_t before its MIN */
		cb_u8 ls = (cb_u8)cb_nearest_int(is * sc[j]);
		cb_u8 lm = (cb_u8)cb_nearest_int(im * mins[j]);

		ls = CB_MIN(63, ls);
		lm = CB_MIN(63, lm);
		if (j < 4) {
			scales[j] = ls;
			scales[j + 4] = lm;
		} else {
			scales[j + 4] = (cb_u8)((ls & 15) | (lm & 15) << 4);
			scales[j - 4] |= (cb_u8)((ls >> 4) << 6);
			scales[j] |= (cb_u8)((lm >> 4) << 6);
		}
	}
	*dh = cb_f32_to_f16(max_sc / 63.0f);
	*dminh = cb_f32_to_f16(max_min / 63.0f);
	for (j = 0; j < 8; j++) {
		int s, m;
		float d, dm;

		cb_k4_scale_min(scales, j, &s, &m);
		d = cb_f16_to_f32(*dh) * (float)s;
		if (d == 0.0f)
			continue;
		dm = cb_f16_to_f32(*dminh) * (float)m;
		for (l = 0; l < 32; l++)
			L[32 * j + l] = (cb_u8)CB_MAX(0, CB_MIN(nmax,
				cb_nearest_int((x[32 * j + l] + dm) / d)));
	}
}

void cb_quantize_q4_K(void *dst, const float *x, int n)
{
	struct cb_block_q4_K *y = dst;
	cb_u8 L[CB_QK_K];
	int i, c, l;

	for (i = 0; i < n / CB_QK_K; i++, x += CB_QK_K) {
		quantize_k45(y[i].scales, &y[i].d, &y[i].dmin, L, x, 15);
		for (c = 0; c < 4; c++)
			for (l = 0; l < 32; l++)
				y[i].qs[32 * c + l] = (cb_u8)(L[64 * c + l] |
							      L[64 * c + 32 + l] << 4);
	}
}

void cb_quantize_q5_K(void *dst, const float *x, int n)
{
	struct cb_block_q5_K *y = dst;
	cb_u8 L[CB_QK_K];
	int i, c, l;

	for (i = 0; i < n / CB_QK_K; i++, x += CB_QK_K) {
		quantize_k45(y[i].scales, &y[i].d, &y[i].dmin, L, x, 31);
		for (l = 0; l < 32; l++)
			y[i].qh[l] = 0;
		for (c = 0; c < 4; c++)
			for (l = 0; l < 32; l++) {
				int a = L[64 * c + l], b = L[64 * c + 32 + l];

				int h = (a >> 4) << (2 * c) | (b >> 4) << (2 * c + 1);

				y[i].qh[l] |= (cb_u8)h;
				y[i].qs[32 * c + l] = (cb_u8)((a & 15) | (b & 15) << 4);
			}
	}
}

void cb_quantize_q6_K(void *dst, const float *x, int n)
{
	struct cb_block_q6_K *y = dst;
	cb_s8 L[CB_QK_K];
	float sc[16];
	int i, j, l;

	for (i = 0; i < n / CB_QK_K; i++, x += CB_QK_K) {
		float max_sc = 0.0f, amax = 0.0f, is;

		for (j = 0; j < 16; j++) {
			sc[j] = make_qx(16, 32, x + 16 * j, L + 16 * j);
			if (cb_fabsf(sc[j]) > amax) {
				amax = cb_fabsf(sc[j]);
				max_sc = sc[j];
			}
		}
		if (!(amax >= GROUP_MAX_EPS)) {
			cb_u8 *p = (cb_u8 *)&y[i];

			for (j = 0; j < (int)sizeof(y[i]); j++)
				p[j] = 0;
			continue;
		}
		is = -128.0f / max_sc;
		y[i].d = cb_f32_to_f16(1.0f / is);
		for (j = 0; j < 16; j++)
			y[i].scales[j] = (cb_s8)CB_MIN(127, cb_nearest_int(is * sc[j]));
		for (j = 0; j < 16; j++) {
			float d = cb_f16_to_f32(y[i].d) * (float)y[i].scales[j];

			if (d == 0.0f)
				continue;
			for (l = 0; l < 16; l++)
				L[16 * j + l] = (cb_s8)(CB_MAX(-32, CB_MIN(31,
					cb_nearest_int(x[16 * j + l] / d))) + 32);
		}
		for (j = 0; j < CB_QK_K; j += 128)
			for (l = 0; l < 32; l++) {
				int q1 = L[j + l], q2 = L[j + l + 32];
				int q3 = L[j + l + 64], q4 = L[j + l + 96];

				y[i].ql[j / 2 + l] = (cb_u8)((q1 & 15) | (q3 & 15) << 4);
				y[i].ql[j / 2 + l + 32] = (cb_u8)((q2 & 15) | (q4 & 15) << 4);
				y[i].qh[j / 4 + l] = (cb_u8)(q1 >> 4 | (q2 >> 4) << 2 |
							     (q3 >> 4) << 4 | (q4 >> 4) << 6);
			}
	}
}
