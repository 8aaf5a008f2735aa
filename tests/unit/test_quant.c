// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_quant.c - half / bfloat16 conversions and the GGUF block quantizers.
 *
 * Conversions are checked exhaustively where the domain is 16 bits, and on
 * every rounding boundary plus millions of random floats the other way,
 * against the compiler's _Float16 (libgcc's IEEE conversions), the F16C
 * instructions (when present) and, for bfloat16, a reference built from
 * the definition in double precision.  The block quantizers are checked
 * against known blocks computed independently (numpy float32 arithmetic
 * following GGUF's reference quantizers) and against error bounds.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <immintrin.h>

#include "cb_test.h"
#include "ops/cb_ops.h"
#include "util/host.h"

#define CB_TEST_RNG_SEED 0x13198a2e03707344ull
#include "cb_test_rng.h"

static float bits_f(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static uint32_t f_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static uint16_t f16_via_compiler(float f)
{
	_Float16 h = (_Float16)f;
	uint16_t u;

	memcpy(&u, &h, 2);
	return u;
}

static float f16_to_f32_via_compiler(uint16_t u)
{
	_Float16 h;

	memcpy(&h, &u, 2);
	return (float)h;
}

__attribute__((target("f16c"))) static uint16_t f16_via_f16c(float f)
{
	return _cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT);
}

__attribute__((target("f16c"))) static float f16_to_f32_via_f16c(uint16_t h)
{
	return _cvtsh_ss(h);
}

/* Every half: value as the compiler converts it, NaN bits as F16C does. */
static void test_f16_to_f32_exhaustive(void)
{
	int have_f16c = cb_cpu_has(CB_CPU_F16C);
	unsigned h, bad = 0, bad_hw = 0;

	for (h = 0; h < 65536; h++) {
		float got = cb_f16_to_f32(h), want = f16_to_f32_via_compiler(h);

		if (isnan(want) ? !isnan(got) : f_bits(got) != f_bits(want))
			bad++;
		if (have_f16c && f_bits(got) != f_bits(f16_to_f32_via_f16c(h)))
			bad_hw++;
	}
	CB_CHECK(bad == 0, "%u halves convert wrongly", bad);
	CB_CHECK(bad_hw == 0, "%u halves differ from F16C", bad_hw);
	CB_CHECK(cb_f16_to_f32(0x3c00) == 1.0f && cb_f16_to_f32(0xc000) == -2.0f &&
		 cb_f16_to_f32(0x0001) == 0x1p-24f && cb_f16_to_f32(0x7bff) == 65504.0f,
		 "known halves");
	if (!have_f16c)
		printf("# no F16C: hardware comparison skipped\n");
}

static int check_f32_to_f16(float f, int have_f16c)
{
	uint16_t got = cb_f32_to_f16(f);

	if (isnan(f)) {
		if ((got & 0x7c00) != 0x7c00 || !(got & 0x03ff))
			return 1;
	} else if (got != f16_via_compiler(f)) {
		return 1;
	}
	if (have_f16c && got != f16_via_f16c(f))
		return 1;
	return 0;
}

/*
 * Every half's exact value, the midpoints to its neighbours (ties) and the
 * floats on either side of them, plus random bit patterns.
 */
static void test_f32_to_f16_boundaries(void)
{
	int have_f16c = cb_cpu_has(CB_CPU_F16C);
	unsigned h, bad = 0, n = 0;
	long i;
	int d;

	for (h = 0; h < 0x7c00; h++) {
		float lo = cb_f16_to_f32(h), hi = cb_f16_to_f32(h + 1);
		float mid = (float)(((double)lo + hi) / 2);	/* exact */
		int s;

		for (s = 0; s < 2; s++) {
			float sign = s ? -1.0f : 1.0f;

			for (d = -2; d <= 2; d++) {
				bad += check_f32_to_f16(sign * bits_f(f_bits(mid) + d),
							have_f16c);
				bad += check_f32_to_f16(sign * bits_f(f_bits(lo) + d),
							have_f16c);
				n += 2;
			}
		}
	}
	for (i = 0; i < 4000000; i++) {
		bad += check_f32_to_f16(bits_f((uint32_t)rnd64()), have_f16c);
		n++;
	}
	printf("# f32->f16: %u inputs\n", n);
	CB_CHECK(bad == 0, "%u floats convert wrongly", bad);
	CB_CHECK(cb_f32_to_f16(65504.0f) == 0x7bff && cb_f32_to_f16(65520.0f) == 0x7c00 &&
		 cb_f32_to_f16(65519.996f) == 0x7bff && cb_f32_to_f16(-INFINITY) == 0xfc00 &&
		 cb_f32_to_f16(0x1p-25f) == 0 && cb_f32_to_f16(0x1.000002p-25f) == 1 &&
		 cb_f32_to_f16(-0.0f) == 0x8000, "known conversions");
}

static void test_bf16_to_f32_exhaustive(void)
{
	unsigned h, bad = 0;

	for (h = 0; h < 65536; h++)
		if (f_bits(cb_bf16_to_f32(h)) != h << 16)
			bad++;
	CB_CHECK(bad == 0, "%u bfloat16 values convert wrongly", bad);
}

/* bfloat16 rounding from the definition: nearest, ties to even mantissa. */
static uint16_t bf16_ref(float f)
{
	uint32_t u = f_bits(f);
	uint32_t lo = u & 0xffff0000u, hi = lo + 0x10000u;
	double dl, dh, df;

	if (isnan(f))
		return (u >> 16) | 0x40;
	if ((u & 0x7fffffffu) >= 0x7f800000u)
		return u >> 16;
	/* hi may be infinity's bits: compare in double, where it is 2^128 */
	dl = fabs((double)bits_f(lo));
	dh = ((hi & 0x7fffffffu) == 0x7f800000u) ? ldexp(1.0, 128) : fabs((double)bits_f(hi));
	df = fabs((double)f);
	if (df - dl < dh - df)
		return lo >> 16;
	if (df - dl > dh - df)
		return hi >> 16;
	return ((lo >> 16) & 1) ? hi >> 16 : lo >> 16;
}

static void test_f32_to_bf16(void)
{
	unsigned h, bad = 0, n = 0;
	long i;
	int d;

	for (h = 0; h < 65536; h++) {
		uint32_t base = h << 16;

		for (d = -2; d <= 2; d++) {
			float f1 = bits_f(base + 0x8000u + d);	/* around the tie */
			float f2 = bits_f(base + d);

			bad += cb_f32_to_bf16(f1) != bf16_ref(f1);
			bad += cb_f32_to_bf16(f2) != bf16_ref(f2);
			n += 2;
		}
	}
	for (i = 0; i < 4000000; i++) {
		float f = bits_f((uint32_t)rnd64());

		bad += cb_f32_to_bf16(f) != bf16_ref(f);
		n++;
	}
	printf("# f32->bf16: %u inputs\n", n);
	CB_CHECK(bad == 0, "%u floats convert wrongly", bad);
	CB_CHECK(cb_f32_to_bf16(1.0f) == 0x3f80 && cb_f32_to_bf16(bits_f(0x3f808000)) == 0x3f80 &&
		 cb_f32_to_bf16(bits_f(0x3f818000)) == 0x3f82 &&
		 cb_f32_to_bf16(0x1.fffffep127f) == 0x7f80 &&
		 (cb_f32_to_bf16(NAN) & 0x7fc0) == 0x7fc0, "known conversions");
}

static const float xa[32] = {
	-0x1.7ae1480000000p+2f, -0x1.0000000000000p-1f, 0x1.0000000000000p-2f,
	-0x1.33d70a0000000p+2f, -0x1.1c28f60000000p+2f, -0x1.047ae20000000p+2f,
	-0x1.d9999a0000000p+1f, -0x1.aa3d700000000p+1f, -0x1.7ae1480000000p+1f,
	-0x1.4b851e0000000p+1f, -0x1.1c28f60000000p+1f, -0x1.d9999a0000000p+0f,
	-0x1.7ae1480000000p+0f, -0x1.1c28f60000000p+0f, -0x1.7ae1480000000p-1f,
	-0x1.7ae1480000000p-2f, 0x0.0p+0f, 0x1.7ae1480000000p-2f,
	0x1.7ae1480000000p-1f, 0x1.1c28f60000000p+0f, 0x1.7ae1480000000p+0f,
	0x1.d9999a0000000p+0f, 0x1.1c28f60000000p+1f, 0x1.4b851e0000000p+1f,
	0x1.7ae1480000000p+1f, 0x1.aa3d700000000p+1f, 0x1.d9999a0000000p+1f,
	0x1.047ae20000000p+2f, 0x1.1c28f60000000p+2f, 0x1.33d70a0000000p+2f,
	0x1.4b851e0000000p+2f, 0x1.6333340000000p+2f,
};
static const cb_u16 q8_0_xa_d = 0x29f7;
static const cb_s8 q8_0_xa_qs[] = { -127, -11, 5, -103, -95, -87, -79, -71, -63, -56, -48, -40, -32, -24, -16, -8, 0, 8, 16, 24, 32, 40, 48, 56, 63, 71, 79, 87, 95, 103, 111, 119 };
static const cb_u16 q4_0_xa_d = 0x39ec;
static const cb_u8 q4_0_xa_qs[] = { 0x80, 0x97, 0x98, 0xa2, 0xa2, 0xb2, 0xb3, 0xc4, 0xc4, 0xd5, 0xd5, 0xe6, 0xe6, 0xf7, 0xf7, 0xf8 };
static const float xb[32] = {
	-0x1.0000000000000p+1f, -0x1.e666660000000p+0f, -0x1.cccccc0000000p+0f,
	-0x1.b333340000000p+0f, -0x1.99999a0000000p+0f, -0x1.8000000000000p+0f,
	-0x1.6666660000000p+0f, -0x1.4ccccc0000000p+0f, -0x1.3333340000000p+0f,
	-0x1.19999a0000000p+0f, -0x1.0000000000000p+0f, -0x1.cccccc0000000p-1f,
	-0x1.99999a0000000p-1f, -0x1.6666660000000p-1f, -0x1.3333340000000p-1f,
	-0x1.0000000000000p-1f, -0x1.99999a0000000p-2f, -0x1.3333340000000p-2f,
	-0x1.99999a0000000p-3f, -0x1.99999a0000000p-4f, 0x0.0p+0f,
	0x1.99999a0000000p-4f, 0x1.99999a0000000p-3f, 0x1.3333340000000p-2f,
	0x1.99999a0000000p-2f, 0x1.0000000000000p-1f, 0x1.3333340000000p-1f,
	0x1.6666660000000p-1f, 0x1.99999a0000000p-1f, 0x1.cccccc0000000p-1f,
	0x1.0000000000000p+0f, 0x1.19999a0000000p+0f,
};
static const cb_u16 q8_0_xb_d = 0x2408;
static const cb_s8 q8_0_xb_qs[] = { -127, -121, -114, -108, -102, -95, -89, -83, -76, -70, -64, -57, -51, -44, -38, -32, -25, -19, -13, -6, 0, 6, 13, 19, 25, 32, 38, 44, 51, 57, 64, 70 };
static const cb_u16 q4_0_xb_d = 0x3400;
static const cb_u8 q4_0_xb_qs[] = { 0x60, 0x70, 0x71, 0x81, 0x82, 0x82, 0x92, 0x93, 0xa3, 0xa4, 0xa4, 0xb4, 0xb5, 0xc5, 0xc6, 0xc6 };
static const float xc[32] = {
	0x0.0p+0f, 0x1.49d6e60000000p+0f, 0x1.7a69a60000000p+1f,
	0x1.b9f6940000000p+1f, 0x1.acc8ea0000000p+0f, -0x1.0d66ca0000000p+1f,
	-0x1.8677480000000p+2f, -0x1.f704080000000p+2f, -0x1.6b9c0e0000000p+2f,
	0x1.5859440000000p-3f, 0x1.ce84c00000000p+2f, 0x1.7b74e40000000p+3f,
	0x1.63835e0000000p+3f, 0x1.1de9820000000p+2f, -0x1.5fd1ea0000000p+2f,
	-0x1.c2677c0000000p+3f, -0x1.0a561a0000000p+4f, -0x1.640c060000000p+3f,
	0x1.4715c20000000p-1f, 0x1.ac86500000000p+3f, 0x1.4cd8160000000p+4f,
	0x1.29b3f00000000p+4f, 0x1.be30b20000000p+2f, -0x1.256e4c0000000p+3f,
	-0x1.6306de0000000p+4f, -0x1.95dc440000000p+4f, -0x1.0549ac0000000p+4f,
	0x1.696e0a0000000p+0f, 0x1.3c6e5e0000000p+4f, 0x1.dc87220000000p+4f,
	0x1.9efb300000000p+4f, 0x1.25f1220000000p+3f,
};
static const cb_u16 q8_0_xc_d = 0x3381;
static const cb_s8 q8_0_xc_qs[] = { 0, 5, 13, 15, 7, -9, -26, -34, -24, 1, 31, 51, 47, 19, -23, -60, -71, -47, 3, 57, 89, 79, 30, -39, -95, -108, -70, 6, 84, 127, 111, 39 };
static const cb_u16 q4_0_xc_d = 0xc372;
static const cb_u8 q4_0_xc_qs[] = { 0xc8, 0xb8, 0x87, 0x47, 0x28, 0x39, 0x6a, 0xaa, 0xea, 0xf8, 0xc6, 0x85, 0x35, 0x07, 0x19, 0x6c };

/* Blocks computed independently with numpy float32 (see the file header). */
static void test_known_blocks(void)
{
	static const struct {
		const float *x;
		cb_u16 d8, d4;
		const cb_s8 *q8;
		const cb_u8 *q4;
	} cases[] = {
		{ xa, q8_0_xa_d, q4_0_xa_d, q8_0_xa_qs, q4_0_xa_qs },
		{ xb, q8_0_xb_d, q4_0_xb_d, q8_0_xb_qs, q4_0_xb_qs },
		{ xc, q8_0_xc_d, q4_0_xc_d, q8_0_xc_qs, q4_0_xc_qs },
	};
	unsigned i;

	for (i = 0; i < CB_ARRAY_SIZE(cases); i++) {
		struct cb_block_q8_0 b8;
		struct cb_block_q4_0 b4;
		unsigned char raw[34];

		cb_quantize_row(CB_DT_Q8_0, &b8, cases[i].x, 32);
		cb_quantize_row(CB_DT_Q4_0, &b4, cases[i].x, 32);
		CB_CHECK(b8.d == cases[i].d8, "case %u q8_0 d %04x want %04x", i, b8.d,
			 cases[i].d8);
		CB_CHECK(!memcmp(b8.qs, cases[i].q8, 32), "case %u q8_0 quants", i);
		CB_CHECK(b4.d == cases[i].d4, "case %u q4_0 d %04x want %04x", i, b4.d,
			 cases[i].d4);
		CB_CHECK(!memcmp(b4.qs, cases[i].q4, 16), "case %u q4_0 nibbles", i);
		/* the byte layout: little-endian d first, then the quants */
		memcpy(raw, &b8, 34);
		CB_CHECK(raw[0] == (cases[i].d8 & 0xff) && raw[1] == cases[i].d8 >> 8 &&
			 (cb_s8)raw[2] == cases[i].q8[0] && (cb_s8)raw[33] == cases[i].q8[31],
			 "case %u q8_0 byte layout", i);
	}
	CB_CHECK(cb_dtype_row_bytes(CB_DT_Q8_0, 64) == 68 &&
		 cb_dtype_row_bytes(CB_DT_Q4_0, 64) == 36 &&
		 cb_dtype_row_bytes(CB_DT_Q4_0, 48) == 0, "row sizes");
}

/* Nibble layout: element j low nibble of byte j, element j+16 high nibble. */
static void test_q4_0_nibble_layout(void)
{
	struct cb_block_q4_0 b;
	float x[32], y[32];
	int j;

	/* d = -8 / -8 = 1: element j maps to nibble (x + 8) */
	for (j = 0; j < 32; j++)
		x[j] = (float)((j * 5) % 16 - 8);
	x[3] = -8.0f;
	cb_quantize_row(CB_DT_Q4_0, &b, x, 32);
	CB_CHECK(b.d == 0x3c00, "d = 1.0 expected, got %04x", b.d);
	for (j = 0; j < 16; j++) {
		CB_CHECK((b.qs[j] & 15) == (int)x[j] + 8, "low nibble %d", j);
		CB_CHECK((b.qs[j] >> 4) == (int)x[j + 16] + 8, "high nibble %d", j);
	}
	cb_dequantize_row(CB_DT_Q4_0, y, &b, 32);
	CB_CHECK(!memcmp(x, y, sizeof(x)), "exact round trip of integers");
}

static void fill_random(float *x, int n)
{
	int i;
	double scale = ldexp(1.0, (int)(rnd64() % 30) - 15);

	for (i = 0; i < n; i++)
		x[i] = (float)(((double)(rnd64() >> 11) * 0x1p-53 * 2 - 1) * scale *
			       (i % 7 == 0 ? 4 : 1));
}

/*
 * Round trip error bounds.  q8_0: |x - q d16| <= d/2 + 127 |d - d16| with
 * |d - d16| <= d 2^-11.  q4_0: |x - (q - 8) d16| <= |d| (the +8 end is
 * clamped to 7, one step away) + 8 |d| 2^-11.  f16 / bf16: half an ulp
 * relative (2^-11 / 2^-8), for values in the normal range.  The scale
 * bounds hold while d is a normal half (d >= 2^-14); below, the stored
 * scale itself loses precision (as in GGUF), which is only counted.
 */
static void test_round_trip_bounds(void)
{
	float x[1024], y[1024];
	unsigned char buf[4096];
	int t, b, j, bad8 = 0, bad4 = 0, badh = 0, badb = 0;
	double worst8 = 0, worst4 = 0;

	for (t = 0; t < 300; t++) {
		fill_random(x, 1024);
		cb_quantize_row(CB_DT_Q8_0, buf, x, 1024);
		cb_dequantize_row(CB_DT_Q8_0, y, buf, 1024);
		for (b = 0; b < 32; b++) {
			double amax = 0, d;

			for (j = 0; j < 32; j++)
				amax = fmax(amax, fabs(x[b * 32 + j]));
			d = amax / 127;
			for (j = 0; j < 32; j++) {
				double e = fabs((double)x[b * 32 + j] - y[b * 32 + j]);

				if (d < 0x1p-14)
					continue;
				if (e > d * (0.5 + 127 * 0x1p-11) * (1 + 1e-6))
					bad8++;
				worst8 = fmax(worst8, d ? e / d : 0);
			}
		}
		cb_quantize_row(CB_DT_Q4_0, buf, x, 1024);
		cb_dequantize_row(CB_DT_Q4_0, y, buf, 1024);
		for (b = 0; b < 32; b++) {
			double amax = 0, d;

			for (j = 0; j < 32; j++)
				amax = fmax(amax, fabs(x[b * 32 + j]));
			d = amax / 8;
			for (j = 0; j < 32; j++) {
				double e = fabs((double)x[b * 32 + j] - y[b * 32 + j]);

				if (d < 0x1p-14)
					continue;
				if (e > d * (1 + 8 * 0x1p-11) * (1 + 1e-6))
					bad4++;
				worst4 = fmax(worst4, d ? e / d : 0);
			}
		}
		cb_quantize_row(CB_DT_F16, buf, x, 1024);
		cb_dequantize_row(CB_DT_F16, y, buf, 1024);
		for (j = 0; j < 1024; j++)
			if (fabs(x[j]) >= 0x1p-14 && fabs(x[j]) < 65504 &&
			    fabs((double)x[j] - y[j]) > fabs(x[j]) * 0x1p-11)
				badh++;
		cb_quantize_row(CB_DT_BF16, buf, x, 1024);
		cb_dequantize_row(CB_DT_BF16, y, buf, 1024);
		for (j = 0; j < 1024; j++)
			if (fabs((double)x[j] - y[j]) > fabs(x[j]) * 0x1p-8)
				badb++;
		cb_quantize_row(CB_DT_F32, buf, x, 1024);
		cb_dequantize_row(CB_DT_F32, y, buf, 1024);
		if (memcmp(x, y, sizeof(x)))
			badh += 1000;
	}
	printf("# worst |x - deq| / d: q8_0 %.4f, q4_0 %.4f\n", worst8, worst4);
	CB_CHECK(bad8 == 0, "%d q8_0 values beyond the bound", bad8);
	CB_CHECK(bad4 == 0, "%d q4_0 values beyond the bound", bad4);
	CB_CHECK(badh == 0, "%d f16 (or f32) values beyond the bound", badh);
	CB_CHECK(badb == 0, "%d bf16 values beyond the bound", badb);
}

/* Zero blocks, and rows with n not a whole number of blocks left alone. */
static void test_zero_and_partial(void)
{
	struct cb_block_q8_0 b8[2];
	struct cb_block_q4_0 b4[2];
	float x[64] = { 0 };
	int j;

	memset(b8, 0x77, sizeof(b8));
	memset(b4, 0x77, sizeof(b4));
	cb_quantize_row(CB_DT_Q8_0, b8, x, 40);	/* one block, 8 ignored */
	cb_quantize_row(CB_DT_Q4_0, b4, x, 40);
	/* q4_0: d = 0 / -8 = -0, stored as 0x8000, as GGUF's quantizer does */
	CB_CHECK(b8[0].d == 0 && b4[0].d == 0x8000, "zero block d: %04x %04x",
		 b8[0].d, b4[0].d);
	for (j = 0; j < 32; j++)
		CB_CHECK(b8[0].qs[j] == 0, "zero block quant %d", j);
	for (j = 0; j < 16; j++)
		CB_CHECK(b4[0].qs[j] == 0x88, "zero q4_0 block nibbles are 8");
	CB_CHECK(b8[1].d == 0x7777 && b4[1].d == 0x7777, "wrote past n / 32 blocks");
	cb_quantize_row(CB_DT__COUNT, b8, x, 32);	/* unknown type: nothing */
	CB_CHECK(b8[1].d == 0x7777, "unknown dtype wrote");
}

int main(void)
{
	CB_RUN(test_f16_to_f32_exhaustive);
	CB_RUN(test_f32_to_f16_boundaries);
	CB_RUN(test_bf16_to_f32_exhaustive);
	CB_RUN(test_f32_to_bf16);
	CB_RUN(test_known_blocks);
	CB_RUN(test_q4_0_nibble_layout);
	CB_RUN(test_round_trip_bounds);
	CB_RUN(test_zero_and_partial);
	return cb_test_done();
}
