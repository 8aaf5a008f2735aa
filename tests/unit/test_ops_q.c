// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_ops_q.c - the gemms of q4_1, q5_0, q5_1, iq4_nl, mxfp4, the k-quants
 * and iq4_xs, and the q8_1 / q8_K activation quantizers: every ISA variant
 * against the scalar reference, and the scalar reference against a
 * double-precision dot product of the dequantized operands.
 *
 * Tolerance.  A weight is w = a - b with a = d sc q (the scaled quant) and
 * b = dmin m or -m_w (the offset part; 0 for the types without one).  With
 * S = sum_i (|a_i| + |b_i|) |x_i| (x the dequantized activation) and
 * u = 2^-24: the integer dot products are exact in every variant; only the
 * at most 2 nb f32 terms per output (nb = k / block) and their sum are
 * rounded, in different orders: |variant - scalar| <= 2 (2 nb + 8) u S,
 * |scalar - exact| <= (2 nb + 8) u S + 2 u S (the second part: the
 * dequantized weight itself may be rounded, e.g. q6_K's d sc (q - 32)
 * needs 25 bits).  S is computed from a copy of the weights whose scales
 * are made non-negative and whose offsets subtract their magnitude, which
 * dequantizes to |a| + |b|.
 *
 * Shapes: k from one block to the longest rows of real models (16384 for
 * the k-quants, 14336 = 56 super-blocks among them), M = 1 .. 9 (one and
 * two register tiles and their remainders), nrows 1 .. 13 (the 4-row
 * groups and their remainders).  Weights are quantized from random rows
 * or, every other problem, random bytes with random finite scales of
 * either sign (bit patterns no quantizer writes, which a file may hold;
 * mxfp4: E8M0 exponents 2^-20 .. 2^20, every code).
 * Every call's rows and tokens must also give the same bits when the call
 * is split into chunks, as the forward pass splits it.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cb_test.h"
#include "ops/cb_ops.h"
#include "util/host.h"

#define CB_TEST_RNG_SEED 0x452821e638d01377ull
#include "cb_test_rng.h"

static float rndf(void)
{
	return (float)((rnd64() >> 40) * 0x1p-24 * 2.0 - 1.0);
}

/* A random finite half of either sign, 2^-14 .. 2^1. */
static uint16_t rnd_half(void)
{
	return (uint16_t)((rnd64() & 0x8000) | ((1 + rnd64() % 16) << 10) | (rnd64() & 0x3ff));
}

/* Random bytes over a row's blocks, with random finite scales. */
static void randomize_row(int dt, uint8_t *row, int k)
{
	const struct cb_block_info *d = cb_dtype_info(dt);
	int b, i, s;

	for (b = 0; b < k / (int)d->block; b++) {
		uint8_t *p = row + b * d->block_bytes;

		for (i = 0; i < (int)d->block_bytes; i++)
			p[i] = (uint8_t)rnd64();
		for (s = 0; s < d->nscale; s++) {
			uint16_t h = rnd_half();

			memcpy(p + d->scale_off[s], &h, 2);
		}
		if (dt == CB_DT_MXFP4)	/* its scale is the E8M0 byte 0 */
			p[0] = (uint8_t)(107 + rnd64() % 41);
	}
}

/*
 * A copy of one row that dequantizes to |a_i| + |b_i| (see the file
 * comment): scales made non-negative; the types with a subtracted min get
 * a negative dmin, those with an added offset a non-negative one.
 */
static void magnitude_row(int dt, float *mag, const uint8_t *row, int k)
{
	const struct cb_block_info *d = cb_dtype_info(dt);
	size_t rb = cb_dtype_row_bytes(dt, k);
	uint8_t *c = malloc(rb);
	int b, i;

	memcpy(c, row, rb);
	for (b = 0; b < k / (int)d->block; b++) {
		uint8_t *p = c + b * d->block_bytes;

		if (d->nscale)	/* mxfp4's E8M0 scale has no sign */
			p[d->scale_off[0] + 1] &= 0x7f;
		if (d->nscale == 2) {
			int sub = dt == CB_DT_Q2_K || dt == CB_DT_Q4_K || dt == CB_DT_Q5_K;

			p[d->scale_off[1] + 1] = sub ? p[d->scale_off[1] + 1] | 0x80 :
						       p[d->scale_off[1] + 1] & 0x7f;
		}
	}
	cb_dequantize_row(dt, mag, c, k);
	for (i = 0; i < k; i++)
		mag[i] = fabsf(mag[i]);
	free(c);
}

/* Dequantized activation row of form a. */
static void act_dequant(int a, float *x, const void *src, int k)
{
	int i;

	if (a == CB_ACT_Q8_0) {
		cb_dequantize_row(CB_DT_Q8_0, x, src, k);
	} else if (a == CB_ACT_Q8_1) {
		const struct cb_block_q8_1 *b = src;

		for (i = 0; i < k; i++)
			x[i] = cb_f16_to_f32(b[i / 32].d) * b[i / 32].qs[i % 32];
	} else {
		const struct cb_block_q8_K *b = src;

		for (i = 0; i < k; i++) {
			float d;

			memcpy(&d, &b[i / 256].d_bits, 4);
			x[i] = d * b[i / 256].qs[i % 256];
		}
	}
}

struct problem {
	int dt, M, nrows, k;
	size_t wrb, as, ldo;
	uint8_t *w, *act;
	float *wf, *mag, *af;	/* dequantized weights, magnitudes, activations */
};

static void problem_make(struct problem *p, int dt, int M, int nrows, int k, int raw)
{
	int a = (int)cb_dtype_act(dt), r, m, i;
	float *tmp = malloc(sizeof(float) * k);

	p->dt = dt;
	p->M = M;
	p->nrows = nrows;
	p->k = k;
	p->wrb = cb_dtype_row_bytes(dt, k) + 5;	/* odd strides: nothing aligned */
	p->as = cb_act_row_bytes(a, k) + 7;
	p->ldo = nrows + 3;
	p->w = calloc(nrows, p->wrb);
	p->act = calloc(M, p->as);
	p->wf = malloc(sizeof(float) * nrows * k);
	p->mag = malloc(sizeof(float) * nrows * k);
	p->af = malloc(sizeof(float) * M * k);
	for (r = 0; r < nrows; r++) {
		uint8_t *row = p->w + r * p->wrb;
		float scale = 0.01f + (rnd64() % 100) * 0.03f;

		for (i = 0; i < k; i++)
			tmp[i] = rndf() * scale;
		if (r % 5 == 3)		/* an all-zero first block */
			memset(tmp, 0, sizeof(float) * cb_dtype_block(dt));
		if (r % 7 == 6)		/* one large outlier per row */
			tmp[rnd64() % k] = 40.0f * scale;
		cb_quantize_row(dt, row, tmp, k);
		if (raw)
			randomize_row(dt, row, k);
		cb_dequantize_row(dt, p->wf + (size_t)r * k, row, k);
		magnitude_row(dt, p->mag + (size_t)r * k, row, k);
	}
	for (m = 0; m < M; m++) {
		for (i = 0; i < k; i++)
			tmp[i] = rndf() * (0.5f + (rnd64() % 50));
		cb_isa_scalar.quantize_act[a](p->act + m * p->as, tmp, k);
		act_dequant(a, p->af + (size_t)m * k, p->act + m * p->as, k);
	}
	free(tmp);
}

static void problem_free(struct problem *p)
{
	free(p->w);
	free(p->act);
	free(p->wf);
	free(p->mag);
	free(p->af);
}

static float *out_alloc(const struct problem *p)
{
	float *o = malloc(sizeof(float) * p->M * p->ldo);
	size_t i;

	for (i = 0; i < (size_t)p->M * p->ldo; i++)
		o[i] = -12345.0f;	/* poison: the padding must stay untouched */
	return o;
}

/* exact dot of the dequantized operands, and S */
static double exact(const struct problem *p, int m, int r, double *S)
{
	const float *w = p->wf + (size_t)r * p->k, *g = p->mag + (size_t)r * p->k;
	const float *x = p->af + (size_t)m * p->k;
	double s = 0, a = 0;
	int i;

	for (i = 0; i < p->k; i++) {
		s += (double)w[i] * x[i];
		a += (double)g[i] * fabs((double)x[i]);
	}
	*S = a;
	return s;
}

/* got against want (or exact when want is NULL); returns the failures */
static int check(const struct problem *p, const float *got, const float *want, const char *what)
{
	int nb = p->k / (int)cb_dtype_block(p->dt), m, r, bad = 0;
	double tf = want ? 2.0 * (2 * nb + 8) * 0x1p-24 : (2 * nb + 10) * 0x1p-24;

	for (m = 0; m < p->M; m++)
		for (r = 0; r < (int)p->ldo; r++) {
			float o = got[m * p->ldo + r];
			double S, ref, err;

			if (r >= p->nrows) {
				if (o != -12345.0f && bad++ < 3)
					CB_CHECK(0, "%s %s: wrote padding at m=%d r=%d", what,
						 cb_dtype_name(p->dt), m, r);
				continue;
			}
			ref = exact(p, m, r, &S);
			if (want)
				ref = want[m * p->ldo + r];
			err = fabs(o - ref);
			if (!(err <= tf * S + 1e-30) && bad++ < 3)
				CB_CHECK(0, "%s %s M=%d nrows=%d k=%d (m=%d r=%d): %.9g vs %.9g, "
					 "err %.3g > tol %.3g", what, cb_dtype_name(p->dt), p->M,
					 p->nrows, p->k, m, r, o, ref, err, tf * S);
		}
	return bad;
}

static void gemm(const struct cb_isa_ops *ops, const struct problem *p, float *out)
{
	ops->gemm[p->dt](out, p->ldo, p->w, p->wrb, p->act, p->as, p->M, p->nrows, p->k);
}

/* Row lengths in blocks: one, the tile remainders, and the long rows. */
static int kblocks(int dt, int i)
{
	static const int k_super[] = { 1, 2, 3, 5, 8, 11, 16, 56, 64 };
	static const int k_legacy[] = { 1, 2, 3, 5, 8, 33, 64, 128, 448 };

	if (cb_dtype_block(dt) == CB_QK_K)
		return i < (int)CB_ARRAY_SIZE(k_super) ? k_super[i] : 0;
	return i < (int)CB_ARRAY_SIZE(k_legacy) ? k_legacy[i] : 0;
}

/* The scalar reference against double precision. */
static void run_scalar_exact(int dt)
{
	int i, M, bad = 0, n = 0;

	for (i = 0; kblocks(dt, i); i++)
		for (M = 1; M <= 5; M += 4) {
			struct problem p;
			float *o;

			problem_make(&p, dt, M, 5, kblocks(dt, i) * (int)cb_dtype_block(dt), i % 2);
			o = out_alloc(&p);
			gemm(&cb_isa_scalar, &p, o);
			bad += check(&p, o, NULL, "scalar vs exact");
			n++;
			free(o);
			problem_free(&p);
		}
	printf("# scalar %s: %d problems\n", cb_dtype_name(dt), n);
	CB_CHECK(bad == 0, "%d outputs out of tolerance", bad);
}

static const struct cb_isa_ops *variant(int level)
{
	const struct cb_isa_ops *ops = cb_isa_get(level);

	if (!ops)
		CB_SKIP(level == CB_ISA_AVX512_VNNI ? "CPU (or COLIBRI_ISA) lacks AVX-512 VNNI" :
			level == CB_ISA_AVX512 ? "CPU (or COLIBRI_ISA) lacks AVX-512" :
			"CPU (or COLIBRI_ISA) lacks AVX2/FMA/F16C");
	return ops;
}

static int same(const float *a, const float *b, size_t n)
{
	return !memcmp(a, b, sizeof(float) * n);
}

/*
 * One variant against scalar over the shapes, and the same call split into
 * chunks: rows [0, r0) and [r0, nrows) with r0 off the 4-row grid, tokens
 * in chunks of 1 .. 3, one row and one token per call, and the first Ms
 * tokens alone.
 */
static void run_variant(int level, int dt)
{
	static const int nrows_list[] = { 1, 2, 3, 4, 5, 7, 8, 9, 13 };
	const struct cb_isa_ops *ops = variant(level);
	int i, M, in, bad = 0, split_bad = 0, n = 0;

	if (!ops)
		return;
	for (i = 0; kblocks(dt, i); i++)
		for (M = 1; M <= 9; M++)
			for (in = 0; in < (int)CB_ARRAY_SIZE(nrows_list); in++) {
				int k = kblocks(dt, i) * (int)cb_dtype_block(dt), r0, cs, m0, r, m;
				struct problem p;
				float *want, *got, *part;

				if (kblocks(dt, i) > 8 && (M + in) % 4)
					continue;	/* keep the run short */
				problem_make(&p, dt, M, nrows_list[in], k, (M + in) % 2);
				want = out_alloc(&p);
				got = out_alloc(&p);
				part = out_alloc(&p);
				gemm(&cb_isa_scalar, &p, want);
				gemm(ops, &p, got);
				bad += check(&p, got, want, cb_isa_names[ops->level]);
				for (r0 = 1; r0 <= 3 && r0 < p.nrows; r0++)
					for (cs = 1; cs <= 3; cs++) {
						for (m0 = 0; m0 < M; m0 += cs) {
							int mc = CB_MIN(cs, M - m0);
							const uint8_t *a = p.act + m0 * p.as;

							ops->gemm[dt](part + m0 * p.ldo, p.ldo, p.w, p.wrb,
								      a, p.as, mc, r0, k);
							ops->gemm[dt](part + m0 * p.ldo + r0, p.ldo,
								      p.w + r0 * p.wrb, p.wrb, a, p.as,
								      mc, p.nrows - r0, k);
						}
						split_bad += !same(part, got, M * p.ldo);
					}
				if (M <= 3 && in % 3 == 0) {
					for (r = 0; r < p.nrows; r++)
						for (m = 0; m < M; m++)
							ops->gemm[dt](part + m * p.ldo + r, p.ldo,
								      p.w + r * p.wrb, p.wrb,
								      p.act + m * p.as, p.as, 1, 1, k);
					split_bad += !same(part, got, M * p.ldo);
				}
				for (m = 1; m < M; m++) {
					ops->gemm[dt](part, p.ldo, p.w, p.wrb, p.act, p.as, m,
						      p.nrows, k);
					split_bad += !same(part, got, m * p.ldo);
				}
				n++;
				free(want);
				free(got);
				free(part);
				problem_free(&p);
			}
	printf("# %s gemm %s: %d problems\n", cb_isa_names[ops->level], cb_dtype_name(dt), n);
	CB_CHECK(bad == 0, "%d outputs out of tolerance", bad);
	CB_CHECK(split_bad == 0, "%d calls gave other bits than the full call", split_bad);
}

/* Inputs that probe the activation quantizers: ties, zeros, signs, extremes. */
static void make_act_input(float *x, int n, int trial)
{
	int b, j;

	for (b = 0; b < n / 32; b++) {
		float *xb = x + 32 * b;

		for (j = 0; j < 32; j++)
			xb[j] = rndf() * (float)ldexp(1.0, (int)(rnd64() % 40) - 20);
		switch ((b + trial) % 9) {
		case 0:		/* scale 1: exact halves, ties both ways */
			for (j = 0; j < 32; j++)
				xb[j] = (float)((int)(rnd64() % 253) - 126) + 0.5f;
			xb[5] = 127.0f;
			break;
		case 1:
			memset(xb, 0, 32 * sizeof(float));
			break;
		case 2:		/* the largest magnitude twice, with both signs */
			xb[3] = -2.5f;
			xb[9] = 2.5f;
			break;
		case 3:
			for (j = 0; j < 32; j++)
				xb[j] = (float)(rndf() * 0x1p-140);	/* subnormal: 1/d overflows */
			break;
		case 4:
			xb[11] = 3e38f;
			xb[12] = -3e38f;
			break;
		default:
			break;
		}
	}
	if (trial % 10 == 7) {
		x[3] = NAN;
		x[(70 % n)] = INFINITY;
		x[(100 % n)] = -INFINITY;
	}
	if (trial % 10 == 8)
		x[n - 1] = -NAN;
}

/* q8_1 and q8_K of every variant: the reference's bytes. */
static void run_quantize(int level)
{
	const struct cb_isa_ops *ops = variant(level);
	int trial, a, bad = 0;

	if (!ops)
		return;
	for (a = CB_ACT_Q8_1; a <= CB_ACT_Q8_K; a++)
		for (trial = 0; trial < 200; trial++) {
			int n = (int)cb_act_info(a)->block * (1 + trial % 9);
			size_t nb = cb_act_row_bytes(a, n);
			uint8_t *r1 = malloc(nb), *r2 = malloc(nb);
			float *x = malloc(sizeof(float) * n);

			make_act_input(x, n, trial);
			memset(r1, 0x5a, nb);
			memset(r2, 0xa5, nb);
			cb_isa_scalar.quantize_act[a](r1, x, n);
			ops->quantize_act[a](r2, x, n);
			if (memcmp(r1, r2, nb) && bad++ < 3) {
				size_t i;

				for (i = 0; r1[i] == r2[i]; i++)
					;
				CB_CHECK(0, "%s %s n=%d trial %d: byte %zu is %02x, reference %02x",
					 cb_isa_names[ops->level], a == CB_ACT_Q8_1 ? "q8_1" : "q8_K", n, trial,
					 i, r2[i], r1[i]);
			}
			free(r1);
			free(r2);
			free(x);
		}
	CB_CHECK(bad == 0, "%d rows differ", bad);
}

/* The scalar activation quantizers against the rules written out. */
static void test_act_quant_rules(void)
{
	struct cb_block_q8_K k8;
	struct cb_block_q8_1 q1[2];
	float x[256], d;
	int i, s;

	for (i = 0; i < 256; i++)
		x[i] = (float)(i % 17) - 8.0f;
	x[40] = -16.0f;		/* the largest magnitude, negative: d = 16 / 127 */
	x[41] = 16.0f;		/* same magnitude later: the first one counts */
	cb_quantize_row_q8_K_ref(&k8, x, 256);
	memcpy(&d, &k8.d_bits, 4);
	CB_CHECK(d == 1.0f / (-127.0f / -16.0f), "q8_K d = %g", d);
	CB_CHECK(k8.qs[40] == -127 && k8.qs[41] == 127, "extremes %d %d", k8.qs[40], k8.qs[41]);
	/* 8 * 127/16 = 63.5: a tie, to even (64); 4 * 127/16 = 31.75 -> 32 */
	CB_CHECK(k8.qs[16] == 64 && k8.qs[12] == 32 && k8.qs[4] == -32,
		 "ties to even: %d %d %d", k8.qs[16], k8.qs[12], k8.qs[4]);
	for (s = 0; s < 16; s++) {
		int sum = 0;

		for (i = 0; i < 16; i++)
			sum += k8.qs[16 * s + i];
		CB_CHECK(k8.bsums[s] == sum, "bsums[%d] %d, want %d", s, k8.bsums[s], sum);
	}
	memset(x, 0, sizeof(x));
	cb_quantize_row_q8_K_ref(&k8, x, 256);
	CB_CHECK(k8.d_bits == 0 && !k8.qs[0] && !k8.bsums[0], "zero block");
	for (i = 0; i < 64; i++)
		x[i] = (float)(i - 31) * 0.25f;
	cb_quantize_row_q8_1_ref(q1, x, 64);
	for (s = 0; s < 2; s++) {
		int sum = 0;

		for (i = 0; i < 32; i++)
			sum += q1[s].qs[i];
		CB_CHECK(q1[s].sum == sum, "q8_1 sum %d, want %d", q1[s].sum, sum);
	}
	CB_CHECK(q1[1].qs[31] == 127, "q8_1 max %d", q1[1].qs[31]);
}

/*
 * The VNNI kernels (vpdpwssd, vpdpbusd) add the same integers as the
 * avx512 ones (vpmaddwd + vpaddd): bit for bit the same outputs, so
 * max_isa=2 and 3 give the same logits.
 */
static void run_vnni_same(int dt)
{
	const struct cb_isa_ops *v = variant(CB_ISA_AVX512_VNNI), *a;
	int i, M, nr, n = 0, bad = 0;

	if (!v)
		return;
	a = &cb_isa_avx512;
	CB_CHECK(v->gemm[dt] != a->gemm[dt], "avx512_vnni's %s gemm is avx512's",
		 cb_dtype_name(dt));
	for (i = 0; kblocks(dt, i); i++)
		for (M = 1; M <= 6; M++)
			for (nr = 1; nr <= 9; nr += 4) {
				struct problem p;
				float *x, *y;

				problem_make(&p, dt, M, nr, kblocks(dt, i) * (int)cb_dtype_block(dt),
					     (M + nr) % 2);
				x = out_alloc(&p);
				y = out_alloc(&p);
				gemm(a, &p, x);
				gemm(v, &p, y);
				bad += !same(x, y, M * p.ldo);
				n++;
				free(x);
				free(y);
				problem_free(&p);
			}
	printf("# avx512_vnni == avx512, %s: %d problems\n", cb_dtype_name(dt), n);
	CB_CHECK(bad == 0, "%d of %d problems differ", bad, n);
}

/*
 * mxfp4 with every E8M0 exponent 0..254, the subnormal scales 2^-128 and
 * 2^-127 included (the random rows above keep to 2^-20 .. 2^20): each of
 * 5 rows has all its blocks at one exponent, the activations scaled by
 * 2^14 below e = 128 and 2^-14 from there (d_x is an f16), so that
 * d_w * d_x and the sums stay normal floats, and each variant's
 * gemm is held to the same bound against scalar.  A variant that builds
 * the scale's bits wrongly for any exponent is off by a power of two.
 */
static int row_e(int e0, int r)
{
	return e0 + r < 255 ? e0 + r : 254;
}

static void run_mxfp4_exponents(int level)
{
	const struct cb_isa_ops *ops = variant(level);
	int e0, bad = 0, n = 0;

	if (!ops)
		return;
	for (e0 = 0; e0 < 255; e0 += 5) {
		struct problem p;
		float *want, *got, *x = malloc(sizeof(float) * 96);
		int r, b, m, i;

		problem_make(&p, CB_DT_MXFP4, 2, 5, 96, 1);
		for (r = 0; r < p.nrows; r++) {
			uint8_t *row = p.w + r * p.wrb;
			int e = row_e(e0, r);

			for (b = 0; b < 3; b++)
				row[b * 17] = (uint8_t)e;
			cb_dequantize_row(CB_DT_MXFP4, p.wf + (size_t)r * 96, row, 96);
			magnitude_row(CB_DT_MXFP4, p.mag + (size_t)r * 96, row, 96);
		}
		for (m = 0; m < p.M; m++) {
			for (i = 0; i < 96; i++)
				x[i] = ldexpf(rndf(), e0 < 128 ? 14 : -14);
			cb_isa_scalar.quantize_act[CB_ACT_Q8_0](p.act + m * p.as, x, 96);
			act_dequant(CB_ACT_Q8_0, p.af + (size_t)m * 96, p.act + m * p.as, 96);
		}
		want = out_alloc(&p);
		got = out_alloc(&p);
		gemm(&cb_isa_scalar, &p, want);
		gemm(ops, &p, got);
		/* check()'s bound without its 1e-30 floor, which is above
		 * every result of the smallest exponents */
		for (m = 0; m < p.M; m++)
			for (r = 0; r < p.nrows; r++) {
				double S, e = fabs(got[m * p.ldo + r] - want[m * p.ldo + r]);

				exact(&p, m, r, &S);
				if (!(e <= 2.0 * (2 * 3 + 8) * 0x1p-24 * S) && bad++ < 3)
					CB_CHECK(0, "%s mxfp4 exponent %d: %.9g vs %.9g", cb_isa_names[ops->level],
						 row_e(e0, r), got[m * p.ldo + r],
						 want[m * p.ldo + r]);
			}
		n++;
		free(want);
		free(got);
		free(x);
		problem_free(&p);
	}
	printf("# %s mxfp4, exponents 0..254: %d problems\n", cb_isa_names[ops->level], n);
	CB_CHECK(bad == 0, "%d outputs out of tolerance", bad);
}

static void test_avx2_mxfp4_every_exponent(void) { run_mxfp4_exponents(CB_ISA_AVX2); }
static void test_avx512_mxfp4_every_exponent(void) { run_mxfp4_exponents(CB_ISA_AVX512); }
static void test_avx512_vnni_mxfp4_every_exponent(void)
{
	run_mxfp4_exponents(CB_ISA_AVX512_VNNI);
}

/*
 * The k-quant integers at their bounds: q4_K and q5_K rows whose 64
 * sub-blocks take every scale 0..63 and every min 63..0 (q5_K: the fifth
 * bits all 1, all 0 or random with the nibbles), q6_K rows whose 256 sub-blocks
 * take every signed scale -128..127, the quants at their ends (all 15 /
 * 31 / 63, all 0) or random, against tokens of all +127, all -127 and random.
 * With one super-block and d = dmin = d_x = 1 every variant's float steps
 * give fl(fl(isum) - fl(imin)), the scalar reference's value: so the
 * outputs must be bit for bit the scalar ones, for M = 1 (the decode
 * tiles), M = 3 and one row per call.
 */
static void kq_extreme_rows(int dt, uint8_t *w, size_t wrb, int nrows)
{
	int r, j, i;

	for (r = 0; r < nrows; r++) {
		uint8_t *b = w + r * wrb;
		int fill = r % 3 == 0 ? 0xff : r % 3 == 1 ? 0x00 : -1;

		memset(b, 0, wrb);
		if (dt == CB_DT_Q4_K || dt == CB_DT_Q5_K) {
			int sc[8], mn[8];

			for (j = 0; j < 8; j++) {
				sc[j] = (8 * r + j) % 64;
				mn[j] = 63 - sc[j];
			}
			b[1] = 0x3c;	/* d = 1 */
			b[3] = 0x3c;	/* dmin = 1 */
			for (j = 0; j < 4; j++) {
				b[4 + j] = (uint8_t)(sc[j] | (sc[j + 4] >> 4) << 6);
				b[8 + j] = (uint8_t)(mn[j] | (mn[j + 4] >> 4) << 6);
				b[12 + j] = (uint8_t)((sc[j + 4] & 15) | (mn[j + 4] & 15) << 4);
			}
			/* q4_K: qs[128]; q5_K: qh[32] qs[128] */
			for (i = 16; i < (int)wrb; i++)
				b[i] = (uint8_t)(fill >= 0 ? fill : (int)rnd64());
		} else {	/* q6_K: ql[128] qh[64] scales[16] d */
			for (i = 0; i < 192; i++)
				b[i] = (uint8_t)(fill >= 0 ? fill : (int)rnd64());
			for (j = 0; j < 16; j++)
				b[192 + j] = (uint8_t)(16 * r + j);	/* -128..127 over 16 rows */
			b[209] = 0x3c;
		}
	}
}

static void kq_extreme_token(struct cb_block_q8_K *x, int m)
{
	float one = 1.0f;
	int i;

	memcpy(&x->d_bits, &one, 4);
	for (i = 0; i < CB_QK_K; i++)
		x->qs[i] = (int8_t)(m == 0 ? 127 : m == 1 ? -127 : (int)(rnd64() % 255) - 127);
	for (i = 0; i < CB_QK_K / 16; i++) {
		int s = 0, l;

		for (l = 0; l < 16; l++)
			s += x->qs[16 * i + l];
		x->bsums[i] = (int16_t)s;
	}
}

static int kq_diff(const struct cb_isa_ops *ops, int dt, const float *got, const float *want,
		   int n, int nrows, const char *what)
{
	int i, bad = 0;

	for (i = 0; i < n; i++)
		if (memcmp(&got[i], &want[i], 4) && bad++ < 2)
			CB_CHECK(0, "%s %s, %s, m=%d r=%d: %.9g, scalar %.9g", cb_isa_names[ops->level],
				 cb_dtype_name(dt), what, i / nrows, i % nrows, got[i], want[i]);
	return bad;
}

static void run_kq_extremes(int level, int dt)
{
	const struct cb_isa_ops *ops = variant(level);
	const int nrows = dt == CB_DT_Q6_K ? 16 : 8, M = 3, k = CB_QK_K;
	size_t wrb = cb_dtype_row_bytes(dt, k), as = sizeof(struct cb_block_q8_K);
	uint8_t *w = malloc(wrb * nrows);
	struct cb_block_q8_K x[3];
	float want[3 * 16], got[3 * 16];
	int bad = 0, m, r;

	if (!ops) {
		free(w);
		return;
	}
	kq_extreme_rows(dt, w, wrb, nrows);
	for (m = 0; m < M; m++)
		kq_extreme_token(&x[m], m);
	cb_isa_scalar.gemm[dt](want, nrows, w, wrb, x, as, M, nrows, k);
	ops->gemm[dt](got, nrows, w, wrb, x, as, M, nrows, k);
	bad += kq_diff(ops, dt, got, want, M * nrows, nrows, "M = 3");
	for (m = 0; m < M; m++) {
		ops->gemm[dt](got, nrows, w, wrb, &x[m], as, 1, nrows, k);
		bad += kq_diff(ops, dt, got, want + m * nrows, nrows, nrows, "M = 1");
		for (r = 0; r < nrows; r++)
			ops->gemm[dt](got + r, 1, w + r * wrb, wrb, &x[m], as, 1, 1, k);
		bad += kq_diff(ops, dt, got, want + m * nrows, nrows, nrows, "a row per call");
	}
	printf("# %s %s extremes: %d rows x %d tokens\n", cb_isa_names[ops->level], cb_dtype_name(dt), nrows, M);
	CB_CHECK(bad == 0, "%d outputs with other bits than scalar", bad);
	free(w);
}

/*
 * The decode tiles against the multi-token ones at the same extremes, with
 * scales that are not 1: kq_extreme_rows' super-blocks laid out as 7 rows
 * of 3 (rows left over after the group of 4, an odd number of
 * super-blocks), d and dmin random halves of either sign, tokens of +127,
 * -127 and random quants with random d.  Each token alone (M = 1: the
 * decode tile for rows 0..3) must give the bits of the same token in one
 * call of all four.
 */
static void run_kq_dec_same(int level, int dt)
{
	const struct cb_isa_ops *ops = variant(level);
	const int nrows = 7, nb = 3, M = 4, k = nb * CB_QK_K;
	const size_t bsz = cb_dtype_row_bytes(dt, CB_QK_K), wrb = nb * bsz;
	const size_t as = nb * sizeof(struct cb_block_q8_K);
	cb_u8 *w = malloc(wrb * nrows), *blks = malloc(bsz * nrows * nb);
	struct cb_block_q8_K x[4 * 3];
	float all[4 * 7], one[4 * 7];
	int bad = 0, r, b, m, i;

	if (!ops) {
		free(w);
		free(blks);
		return;
	}
	kq_extreme_rows(dt, blks, bsz, nrows * nb);
	for (r = 0; r < nrows; r++)
		for (b = 0; b < nb; b++) {
			cb_u8 *p = w + r * wrb + b * bsz;
			cb_u16 d = rnd_half(), dmin = rnd_half();

			memcpy(p, blks + (r * nb + b) * bsz, bsz);
			memcpy(p + (dt == CB_DT_Q6_K ? 208 : 0), &d, 2);
			if (dt != CB_DT_Q6_K)
				memcpy(p + 2, &dmin, 2);
		}
	for (m = 0; m < M; m++)
		for (b = 0; b < nb; b++) {
			float d = ldexpf(1.0f + 0.5f * rndf(), (int)(rnd64() % 21) - 10);

			kq_extreme_token(&x[m * nb + b], m);
			memcpy(&x[m * nb + b].d_bits, &d, 4);
		}
	ops->gemm[dt](all, nrows, w, wrb, x, as, M, nrows, k);
	for (m = 0; m < M; m++)
		ops->gemm[dt](one + m * nrows, nrows, w, wrb, &x[m * nb], as, 1, nrows, k);
	for (i = 0; i < M * nrows; i++)
		if (memcmp(&one[i], &all[i], 4) && bad++ < 2)
			CB_CHECK(0, "%s %s m=%d r=%d: M = 1 %.9g, M = 4 %.9g", cb_isa_names[ops->level],
				 cb_dtype_name(dt), i / nrows, i % nrows, one[i], all[i]);
	printf("# %s %s decode tile against M = 4: %d rows x %d super-blocks\n", cb_isa_names[ops->level],
	       cb_dtype_name(dt), nrows, nb);
	CB_CHECK(bad == 0, "%d outputs of M = 1 differ from M = 4", bad);
	free(w);
	free(blks);
}

/*
 * The few-token tiles (cb_kq_few_avx2.c: gemm[q4_K], gemm[q6_K] of the
 * avx2 and avx512 variants at M >= 2) against the decode path: every M of
 * 2..9 (tiles of 2, 3 and 4 tokens and their balanced splits), 4 to 13
 * rows (the rows after the groups of 4 go to k_tile), the call started at
 * row 0 and at row 1, 1 and 3 super-blocks of kq_extreme_rows' scales with
 * random d and dmin, tokens of +127, -127 and random quants with random
 * d: every output bit for bit the token's M = 1 call.
 */
static void run_kq_few(int level, int dt)
{
	static const int nrs[] = { 4, 7, 9, 13 };
	const struct cb_isa_ops *ops = variant(level);
	const int MX = 9;
	int bad = 0, calls = 0, nb, in, r, b, m, M, r0, i;

	if (!ops)
		return;
	for (nb = 1; nb <= 3; nb += 2)
		for (in = 0; in < (int)CB_ARRAY_SIZE(nrs); in++) {
			const int nrows = nrs[in], k = nb * CB_QK_K;
			const size_t bsz = cb_dtype_row_bytes(dt, CB_QK_K), wrb = nb * bsz;
			const size_t as = nb * sizeof(struct cb_block_q8_K);
			cb_u8 *w = malloc(wrb * nrows);
			struct cb_block_q8_K *x = malloc(as * MX);
			float *one = malloc(sizeof(float) * MX * nrows);
			float *got = malloc(sizeof(float) * MX * nrows);

			kq_extreme_rows(dt, w, bsz, nrows * nb);
			for (r = 0; r < nrows; r++)
				for (b = 0; b < nb; b++) {
					cb_u8 *p = w + r * wrb + b * bsz;
					cb_u16 d = rnd_half(), dmin = rnd_half();

					memcpy(p + (dt == CB_DT_Q6_K ? 208 : 0), &d, 2);
					if (dt == CB_DT_Q4_K)
						memcpy(p + 2, &dmin, 2);
				}
			for (m = 0; m < MX; m++)
				for (b = 0; b < nb; b++) {
					float d = ldexpf(1.0f + 0.5f * rndf(), (int)(rnd64() % 21) - 10);

					kq_extreme_token(&x[m * nb + b], m % 3);
					memcpy(&x[m * nb + b].d_bits, &d, 4);
				}
			for (m = 0; m < MX; m++)
				ops->gemm[dt](one + m * nrows, nrows, w, wrb, &x[m * nb], as, 1, nrows, k);
			for (M = 2; M <= MX; M++)
				for (r0 = 0; r0 <= 1; r0++) {
					memset(got, 0xff, sizeof(float) * MX * nrows);
					ops->gemm[dt](got + r0, nrows, w + r0 * wrb, wrb, x, as, M,
						      nrows - r0, k);
					for (i = 0; i < M * nrows; i++)
						if (i % nrows >= r0 && memcmp(&got[i], &one[i], 4) &&
						    bad++ < 2)
							CB_CHECK(0, "%s %s M=%d rows %d..%d nb=%d m=%d "
								 "r=%d: %.9g, M = 1 %.9g", cb_isa_names[ops->level],
								 cb_dtype_name(dt), M, r0, nrows - 1, nb,
								 i / nrows, i % nrows, got[i], one[i]);
					calls++;
				}
			free(w);
			free(x);
			free(one);
			free(got);
		}
	printf("# %s %s few-token tiles against M = 1: %d calls\n", cb_isa_names[ops->level],
	       cb_dtype_name(dt), calls);
	CB_CHECK(bad == 0, "%d outputs of M >= 2 differ from M = 1", bad);
}

static void test_avx2_q4_K_few(void) { run_kq_few(CB_ISA_AVX2, CB_DT_Q4_K); }
static void test_avx2_q6_K_few(void) { run_kq_few(CB_ISA_AVX2, CB_DT_Q6_K); }
static void test_avx512_q4_K_few(void) { run_kq_few(CB_ISA_AVX512, CB_DT_Q4_K); }
static void test_avx512_q6_K_few(void) { run_kq_few(CB_ISA_AVX512, CB_DT_Q6_K); }

#define TYPE_TESTS(t)								\
static void test_scalar_gemm_##t##_exact(void) { run_scalar_exact(CB_DT_##t); }	\
static void test_avx2_gemm_##t(void) { run_variant(CB_ISA_AVX2, CB_DT_##t); }	\
static void test_avx512_gemm_##t(void) { run_variant(CB_ISA_AVX512, CB_DT_##t); }	\
static void test_avx512_vnni_gemm_##t(void) { run_variant(CB_ISA_AVX512_VNNI, CB_DT_##t); } \
static void test_avx512_vnni_same_bits_##t(void) { run_vnni_same(CB_DT_##t); }

TYPE_TESTS(Q4_1)
TYPE_TESTS(Q5_0)
TYPE_TESTS(Q5_1)
TYPE_TESTS(IQ4_NL)
TYPE_TESTS(Q2_K)
TYPE_TESTS(Q3_K)
TYPE_TESTS(Q4_K)
TYPE_TESTS(Q5_K)
TYPE_TESTS(Q6_K)
TYPE_TESTS(IQ4_XS)
TYPE_TESTS(MXFP4)

static void test_avx2_q4_K_extremes(void) { run_kq_extremes(CB_ISA_AVX2, CB_DT_Q4_K); }
static void test_avx512_q4_K_extremes(void) { run_kq_extremes(CB_ISA_AVX512, CB_DT_Q4_K); }
static void test_avx512_vnni_q4_K_extremes(void)
{
	run_kq_extremes(CB_ISA_AVX512_VNNI, CB_DT_Q4_K);
}
static void test_avx2_q5_K_extremes(void) { run_kq_extremes(CB_ISA_AVX2, CB_DT_Q5_K); }
static void test_avx512_q5_K_extremes(void) { run_kq_extremes(CB_ISA_AVX512, CB_DT_Q5_K); }
static void test_avx512_vnni_q5_K_extremes(void)
{
	run_kq_extremes(CB_ISA_AVX512_VNNI, CB_DT_Q5_K);
}

static void test_avx2_q6_K_extremes(void) { run_kq_extremes(CB_ISA_AVX2, CB_DT_Q6_K); }
static void test_avx512_q6_K_extremes(void) { run_kq_extremes(CB_ISA_AVX512, CB_DT_Q6_K); }
static void test_avx512_vnni_q6_K_extremes(void)
{
	run_kq_extremes(CB_ISA_AVX512_VNNI, CB_DT_Q6_K);
}

static void test_avx2_q4_K_dec_same(void) { run_kq_dec_same(CB_ISA_AVX2, CB_DT_Q4_K); }
static void test_avx2_q5_K_dec_same(void) { run_kq_dec_same(CB_ISA_AVX2, CB_DT_Q5_K); }
static void test_avx2_q6_K_dec_same(void) { run_kq_dec_same(CB_ISA_AVX2, CB_DT_Q6_K); }
static void test_avx512_vnni_q4_K_dec_same(void)
{
	run_kq_dec_same(CB_ISA_AVX512_VNNI, CB_DT_Q4_K);
}

static void test_avx512_vnni_q5_K_dec_same(void)
{
	run_kq_dec_same(CB_ISA_AVX512_VNNI, CB_DT_Q5_K);
}

static void test_avx512_vnni_q6_K_dec_same(void)
{
	run_kq_dec_same(CB_ISA_AVX512_VNNI, CB_DT_Q6_K);
}

static void test_avx512_q4_K_dec_same(void) { run_kq_dec_same(CB_ISA_AVX512, CB_DT_Q4_K); }
static void test_avx512_q5_K_dec_same(void) { run_kq_dec_same(CB_ISA_AVX512, CB_DT_Q5_K); }
static void test_avx512_q6_K_dec_same(void) { run_kq_dec_same(CB_ISA_AVX512, CB_DT_Q6_K); }

static void test_avx2_quantize_act_bytes(void) { run_quantize(CB_ISA_AVX2); }
static void test_avx512_quantize_act_bytes(void) { run_quantize(CB_ISA_AVX512); }
static void test_avx512_vnni_quantize_act_bytes(void) { run_quantize(CB_ISA_AVX512_VNNI); }

/* Every variant has every activation quantizer and the scalar ones are the references. */
static void test_act_tables(void)
{
	const struct cb_isa_ops *all[] = { &cb_isa_scalar, &cb_isa_avx2, &cb_isa_avx512,
					   &cb_isa_avx512_vnni };
	unsigned int i, a;

	for (i = 0; i < CB_ARRAY_SIZE(all); i++)
		for (a = CB_ACT_Q8_0; a < CB_ACT__COUNT; a++)
			CB_CHECK(all[i]->quantize_act[a], "%s lacks quantize_act[%u]",
				 cb_isa_names[all[i]->level], a);
	CB_CHECK(cb_isa_scalar.quantize_act[CB_ACT_Q8_1] == cb_quantize_row_q8_1_ref &&
		 cb_isa_scalar.quantize_act[CB_ACT_Q8_K] == cb_quantize_row_q8_K_ref &&
		 cb_isa_scalar.quantize_act[CB_ACT_Q8_0] == cb_quantize_row_q8_0_ref,
		 "scalar quantizers are the references");
}

int main(void)
{
	CB_RUN(test_act_tables);
	CB_RUN(test_act_quant_rules);
#define RUN_TYPE(t)						\
	do {							\
		CB_RUN(test_scalar_gemm_##t##_exact);		\
		CB_RUN(test_avx2_gemm_##t);			\
		CB_RUN(test_avx512_gemm_##t);			\
		CB_RUN(test_avx512_vnni_gemm_##t);		\
		CB_RUN(test_avx512_vnni_same_bits_##t);		\
	} while (0)
	RUN_TYPE(Q4_1);
	RUN_TYPE(Q5_0);
	RUN_TYPE(Q5_1);
	RUN_TYPE(IQ4_NL);
	RUN_TYPE(Q2_K);
	RUN_TYPE(Q3_K);
	RUN_TYPE(Q4_K);
	RUN_TYPE(Q5_K);
	RUN_TYPE(Q6_K);
	RUN_TYPE(IQ4_XS);
	RUN_TYPE(MXFP4);
	CB_RUN(test_avx2_mxfp4_every_exponent);
	CB_RUN(test_avx512_mxfp4_every_exponent);
	CB_RUN(test_avx512_vnni_mxfp4_every_exponent);
	CB_RUN(test_avx2_q4_K_extremes);
	CB_RUN(test_avx512_q4_K_extremes);
	CB_RUN(test_avx512_vnni_q4_K_extremes);
	CB_RUN(test_avx2_q5_K_extremes);
	CB_RUN(test_avx512_q5_K_extremes);
	CB_RUN(test_avx512_vnni_q5_K_extremes);
	CB_RUN(test_avx2_q6_K_extremes);
	CB_RUN(test_avx512_q6_K_extremes);
	CB_RUN(test_avx512_vnni_q6_K_extremes);
	CB_RUN(test_avx2_q4_K_dec_same);
	CB_RUN(test_avx2_q5_K_dec_same);
	CB_RUN(test_avx512_q5_K_dec_same);
	CB_RUN(test_avx512_vnni_q5_K_dec_same);
	CB_RUN(test_avx2_q6_K_dec_same);
	CB_RUN(test_avx512_q4_K_dec_same);
	CB_RUN(test_avx512_q6_K_dec_same);
	CB_RUN(test_avx512_vnni_q4_K_dec_same);
	CB_RUN(test_avx512_vnni_q6_K_dec_same);
	CB_RUN(test_avx2_q4_K_few);
	CB_RUN(test_avx2_q6_K_few);
	CB_RUN(test_avx512_q4_K_few);
	CB_RUN(test_avx512_q6_K_few);
	CB_RUN(test_avx2_quantize_act_bytes);
	CB_RUN(test_avx512_quantize_act_bytes);
	CB_RUN(test_avx512_vnni_quantize_act_bytes);
	return cb_test_done();
}
