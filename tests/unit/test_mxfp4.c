// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_mxfp4.c - the mxfp4 weight type's scalar pieces: the E8M0 scale,
 * the dequantizer on every code, the quantizer's exponent choice and
 * rounding (checked against an independent double-precision search), the
 * loaders' refusal of the NaN exponent, and the repacking of Hugging Face
 * MXFP4 blocks (mxfp4_hf.h) against a decoder written from the Hugging Face
 * layout.  The gemms are in test_ops_q.c; tests/quant/run checks the
 * dequantizer bit for bit against numpy.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cb_test.h"
#include "ops/cb_ops.h"
#include "import/mxfp4_hf.h"

/* The E2M1 values of codes 0..15 (bit 3 the sign), from the OCP spec. */
static const double fp4[16] = { 0, 0.5, 1, 1.5, 2, 3, 4, 6,
				-0.0, -0.5, -1, -1.5, -2, -3, -4, -6 };

#define CB_TEST_RNG_SEED 0x243f6a8885a308d3ull
#include "cb_test_rng.h"

static float scale_of(uint8_t e)
{
	uint32_t u = cb_e8m0_half_bits(e);
	float f;

	memcpy(&f, &u, 4);
	return f;
}

/* Half the E8M0 scale, 2^(e - 128), for every byte; 255 is NaN. */
static void test_e8m0_half_scale(void)
{
	int e, bad = 0;

	for (e = 0; e < 255; e++)
		bad += (double)scale_of((uint8_t)e) != ldexp(1.0, e - 128);
	CB_CHECK(bad == 0, "%d exponents decode wrongly", bad);
	CB_CHECK(isnan(scale_of(255)), "e = 255 is not NaN");
}

/* Every code at exponents across the range (the subnormal scales too). */
static void test_dequant_every_code(void)
{
	static const int es[] = { 0, 1, 2, 100, 126, 127, 128, 200, 252 };
	struct cb_block_mxfp4 b;
	float y[32];
	unsigned i;
	int j, bad = 0;

	for (i = 0; i < CB_ARRAY_SIZE(es); i++) {
		b.e = (uint8_t)es[i];
		for (j = 0; j < 16; j++)	/* weight j: code j, weight j + 16: code 15 - j */
			b.qs[j] = (uint8_t)(j | (15 - j) << 4);
		cb_dequantize_row(CB_DT_MXFP4, y, &b, 32);
		for (j = 0; j < 16; j++) {
			bad += (double)y[j] != ldexp(fp4[j], es[i] - 127);
			bad += (double)y[j + 16] != ldexp(fp4[15 - j], es[i] - 127);
		}
	}
	CB_CHECK(bad == 0, "%d values differ from FP4 * 2^(e - 127)", bad);
	CB_CHECK(cb_dtype_row_bytes(CB_DT_MXFP4, 64) == 34 &&
		 cb_dtype_act(CB_DT_MXFP4) == CB_ACT_Q8_0 &&
		 !strcmp(cb_dtype_name(CB_DT_MXFP4), "mxfp4"), "type table entry");
}

/* The nearest code of v under 2^(e - 127), ties to the even code, in double. */
static int nearest_code(double v, int e)
{
	double t = fabs(v) / ldexp(1.0, e - 127), best = INFINITY;
	int c, code = 0;

	if (isnan(v))
		return 0;
	for (c = 0; c < 8; c++) {
		double d = fabs(t - fp4[c]);

		if (d < best || (d == best && c % 2 == 0 && code % 2)) {
			best = d;
			code = c;
		}
	}
	return code && signbit(v) ? code | 8 : code;
}

static double sse_at(const float *x, int e)
{
	double s = 0;
	int j;

	for (j = 0; j < 32; j++)
		if (!isnan(x[j])) {
			double r = x[j] - ldexp(fp4[nearest_code(x[j], e)], e - 127);

			s += r * r;
		}
	return s;
}

static int code_of(const struct cb_block_mxfp4 *b, int j)
{
	return j < 16 ? b->qs[j] & 15 : b->qs[j - 16] >> 4;
}

/*
 * Random blocks of every magnitude: the exponent is the OCP rule's e0 =
 * floor(log2 amax) + 125 or e0 + 1 where that leaves a smaller squared
 * error (never more than e0's), and every code is the nearest E2M1 value
 * of x under it.
 */
static void test_quantize_random(void)
{
	int t, j, bad_e = 0, bad_c = 0, up = 0;

	for (t = 0; t < 20000; t++) {
		struct cb_block_mxfp4 b;
		float x[32], amax = 0;
		int e0, want;
		double s0, s1;

		for (j = 0; j < 32; j++) {
			double r = ((double)(rnd64() >> 11) * 0x1p-53 * 2 - 1);

			x[j] = (float)ldexp(r, (int)(rnd64() % 200) / 25 + t % 240 - 120);
		}
		if (t % 11 == 0)
			x[t % 32] = NAN;
		for (j = 0; j < 32; j++)
			amax = fmaxf(amax, fabsf(x[j]));	/* NaN ignored */
		cb_quantize_row(CB_DT_MXFP4, &b, x, 32);
		e0 = ilogb(amax) + 125;
		e0 = e0 < 0 ? 0 : e0;
		s0 = sse_at(x, e0);
		s1 = sse_at(x, e0 + 1);
		want = s1 < s0 ? e0 + 1 : e0;
		/* the engine sums its error in float: a near tie may go either way */
		if (b.e != want && !(fabs(s1 - s0) <= 1e-5 * s0 && (b.e == e0 || b.e == e0 + 1)))
			bad_e++;
		up += b.e == e0 + 1;
		for (j = 0; j < 32; j++)
			bad_c += code_of(&b, j) != nearest_code(x[j], b.e);
	}
	printf("# %d of 20000 blocks took e0 + 1\n", up);
	CB_CHECK(bad_e == 0, "%d blocks with the wrong exponent", bad_e);
	CB_CHECK(bad_c == 0, "%d codes not the nearest", bad_c);
	CB_CHECK(up > 0 && up < 20000, "both exponents chosen");
}

/* Blocks of representable values come back exactly, at any exponent. */
static void test_quantize_representable(void)
{
	int t, j, bad = 0;

	for (t = 0; t < 2000; t++) {
		struct cb_block_mxfp4 b, q;
		float y[32], z[32];

		b.e = (uint8_t)(t % 253);
		for (j = 0; j < 16; j++)
			b.qs[j] = (uint8_t)rnd64();
		b.qs[t % 16] = (uint8_t)(b.qs[t % 16] & 0xf0) | 7;	/* amax 6 */
		cb_dequantize_row(CB_DT_MXFP4, y, &b, 32);
		cb_quantize_row(CB_DT_MXFP4, &q, y, 32);
		cb_dequantize_row(CB_DT_MXFP4, z, &q, 32);
		bad += memcmp(y, z, sizeof(y)) != 0 || q.e != b.e;
	}
	CB_CHECK(bad == 0, "%d blocks did not round trip", bad);
}

/* Ties to the even code; [6, 8) times the scale takes the next exponent. */
static void test_quantize_ties_and_clip(void)
{
	static const float mids[] = { 0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f };
	static const int codes[] = { 0, 2, 2, 4, 4, 6, 6 };
	struct cb_block_mxfp4 b;
	float x[32] = { 6.0f };
	unsigned i;

	for (i = 0; i < CB_ARRAY_SIZE(mids); i++) {
		x[1 + i] = mids[i];
		x[16 + i] = -mids[i];
	}
	cb_quantize_row(CB_DT_MXFP4, &b, x, 32);
	CB_CHECK(b.e == 127, "e %d, want 127", b.e);
	CB_CHECK(code_of(&b, 0) == 7, "6 is code 7");
	for (i = 0; i < CB_ARRAY_SIZE(mids); i++) {
		CB_CHECK(code_of(&b, 1 + (int)i) == codes[i], "%g: code %d, want %d",
			 mids[i], code_of(&b, 1 + (int)i), codes[i]);
		CB_CHECK(code_of(&b, 16 + (int)i) == (codes[i] ? (codes[i] | 8) : 0),
			 "-%g: code %d", mids[i], code_of(&b, 16 + (int)i));
	}
	memset(x, 0, sizeof(x));
	x[5] = 7.9f;	/* e0 = 127 clips it to 6; e = 128 has 8 */
	cb_quantize_row(CB_DT_MXFP4, &b, x, 32);
	CB_CHECK(b.e == 128 && code_of(&b, 5) == 6, "7.9: e %d code %d, want 128 and 6",
		 b.e, code_of(&b, 5));
	memset(x, 0, sizeof(x));
	x[3] = -0.0f;
	x[4] = NAN;
	memset(&b, 0x5a, sizeof(b));
	cb_quantize_row(CB_DT_MXFP4, &b, x, 32);
	CB_CHECK(b.e == 0 && !code_of(&b, 3) && !code_of(&b, 4),
		 "a zero / NaN block: e %d", b.e);
	x[0] = INFINITY;
	cb_quantize_row(CB_DT_MXFP4, &b, x, 32);
	CB_CHECK(b.e == 254 && code_of(&b, 0) == 7, "inf: e %d code %d", b.e, code_of(&b, 0));
}

/* The loaders' check: e = 255 (NaN) is a bad scale, every other byte is not. */
static void test_nan_exponent_refused(void)
{
	struct cb_block_mxfp4 b[8];
	int i;

	for (i = 0; i < 8; i++) {
		memset(&b[i], 0xff, sizeof(b[i]));
		b[i].e = (uint8_t)(254 - i);
	}
	CB_CHECK(cb_quant_find_bad_scale(CB_DT_MXFP4, b, 8) == -1, "a finite scale refused");
	b[5].e = 255;
	b[7].e = 255;
	CB_CHECK(cb_quant_find_bad_scale(CB_DT_MXFP4, b, 8) == 5, "NaN scale of block 5: %lld",
		 (long long)cb_quant_find_bad_scale(CB_DT_MXFP4, b, 8));
	CB_CHECK(cb_quant_find_bad_scale(CB_DT_MXFP4, b, 5) == -1, "looked past nblocks");
}

/* f equals v, or v is beyond f32's range and f the infinity of its sign */
static int same_value(float f, double v)
{
	if (fabs(v) > FLT_MAX)
		return isinf(f) && !signbit(f) == !signbit(v);
	return (double)f == v;
}

/*
 * Hugging Face blocks: element 2k the low nibble of byte k, 2k + 1 the
 * high nibble, value FP4(code) * 2^(s - 127).  The repacked block
 * dequantizes to exactly those values, for every byte and scale.
 */
static void test_hf_repack(void)
{
	uint8_t hb[64 * 16], hs[64];
	struct cb_block_mxfp4 b[64];
	float y[64 * 32];
	int i, k, bad = 0;

	for (i = 0; i < 64 * 16; i++)
		hb[i] = (uint8_t)(i < 256 ? (uint64_t)i : rnd64());	/* every byte, first */
	for (i = 0; i < 64; i++)	/* the extreme scales, then random finite ones */
		hs[i] = (uint8_t)(i < 3 ? (uint64_t)i : i < 5 ? 250 + (uint64_t)i : rnd64() % 255);
	CB_CHECK(cb_mxfp4_row_from_hf(b, hb, hs, 64) == -1, "a finite scale refused");
	cb_dequantize_row(CB_DT_MXFP4, y, b, 64 * 32);
	for (i = 0; i < 64; i++) {
		CB_CHECK(b[i].e == hs[i], "block %d: scale byte %d, want %d", i, b[i].e, hs[i]);
		for (k = 0; k < 16; k++) {
			const uint8_t v = hb[16 * i + k];

			bad += !same_value(y[32 * i + 2 * k], ldexp(fp4[v & 15], hs[i] - 127));
			bad += !same_value(y[32 * i + 2 * k + 1], ldexp(fp4[v >> 4], hs[i] - 127));
		}
	}
	CB_CHECK(bad == 0, "%d values differ from the Hugging Face decoding", bad);
	hs[9] = 255;
	hs[40] = 255;
	CB_CHECK(cb_mxfp4_row_from_hf(b, hb, hs, 64) == 9, "first NaN scale at 9");
	CB_CHECK(b[63].e == hs[63], "stopped converting at the NaN scale");
}

int main(void)
{
	CB_RUN(test_e8m0_half_scale);
	CB_RUN(test_dequant_every_code);
	CB_RUN(test_quantize_random);
	CB_RUN(test_quantize_representable);
	CB_RUN(test_quantize_ties_and_clip);
	CB_RUN(test_nan_exponent_refused);
	CB_RUN(test_hf_repack);
	return cb_test_done();
}
