// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_ops.c - every ISA variant of every op against the scalar reference,
 * and the scalar reference against a double-precision computation.
 *
 * Tolerances (S = sum over the products of |w_i * x_i|, with w and x as the
 * op sees them, i.e. dequantized; u = 2^-24):
 *  - float weight types: two f32 sums of k products in different orders
 *    differ by at most 2 * (k + 1) * u * S (the bound of recursive
 *    summation, applied to both);
 *  - q8_0 / q4_0: the integer block sums are exact, only the nb = k / 32
 *    f32 block terms are summed in a different order (and scaled by FMA):
 *    2 * (nb + 8) * u * S;
 *  - axpy_f32 and quantize_act must be bit-identical.
 * Variants the CPU (or COLIBRI_ISA) lacks are reported as SKIP.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cb_test.h"
#include "core/cb_engine_priv.h"
#include "util/host.h"
#include "cb_test_variant.h"

#define CB_TEST_RNG_SEED 0x243f6a8885a308d3ull
#include "cb_test_rng.h"

/* Uniform in [-1, 1), times a per-call scale. */
static float rndf(void)
{
	return (float)((rnd64() >> 40) * 0x1p-24 * 2.0 - 1.0);
}

static void fill(float *x, int n, float scale)
{
	int i;

	for (i = 0; i < n; i++)
		x[i] = rndf() * scale;
}

static const char *dt_name(int dt)
{
	return cb_dtype_name(dt);
}

static int is_block(int dt)
{
	return dt == CB_DT_Q8_0 || dt == CB_DT_Q4_0;
}

/*
 * A random problem: weights of type dt (rows padded to wrb bytes), the
 * activations the op takes (f32 rows, or q8_0 rows), and the dequantized
 * f32 copies of both for the double reference.
 */
struct problem {
	int dt, M, nrows, k;
	cb_size wrb, as, ldo;
	void *w, *act;
	float *wf, *af;		/* dequantized, nrows x k and M x k */
};

/*
 * When set, block weights get random quant bytes over their whole range
 * (q8_0 -128 included, which no quantizer writes but a file may hold).
 */
static int raw_weights;

static void randomize_quants(int dt, void *row, int k)
{
	int b, j;

	for (b = 0; b < k / 32; b++) {
		if (dt == CB_DT_Q8_0) {
			struct cb_block_q8_0 *blk = (struct cb_block_q8_0 *)row + b;

			for (j = 0; j < 32; j++)
				blk->qs[j] = (cb_s8)rnd64();
			if (b == 0)
				blk->qs[0] = -128;
		} else {
			struct cb_block_q4_0 *blk = (struct cb_block_q4_0 *)row + b;

			for (j = 0; j < 16; j++)
				blk->qs[j] = (cb_u8)rnd64();
		}
	}
}

static void problem_make(struct problem *p, int dt, int M, int nrows, int k)
{
	float *tmp = malloc(sizeof(float) * k);
	int r, m;

	p->dt = dt;
	p->M = M;
	p->nrows = nrows;
	p->k = k;
	/* odd paddings so that no row is specially aligned */
	p->wrb = cb_dtype_row_bytes(dt, k) + 6;
	p->as = (is_block(dt) ? cb_dtype_row_bytes(CB_DT_Q8_0, k) : 4 * (cb_size)k) + 12;
	p->ldo = nrows + 3;
	p->w = calloc(nrows, p->wrb);
	p->act = calloc(M, p->as);
	p->wf = malloc(sizeof(float) * nrows * k);
	p->af = malloc(sizeof(float) * M * k);
	for (r = 0; r < nrows; r++) {
		/* per-row magnitudes vary, as in real weights */
		fill(tmp, k, 0.01f + (rnd64() % 100) * 0.02f);
		if (r % 5 == 3)
			memset(tmp, 0, sizeof(float) * (k < 32 ? k : 32));
		cb_quantize_row(dt, (char *)p->w + r * p->wrb, tmp, k);
		if (raw_weights && is_block(dt))
			randomize_quants(dt, (char *)p->w + r * p->wrb, k);
		cb_dequantize_row(dt, p->wf + (cb_size)r * k,
				  (char *)p->w + r * p->wrb, k);
	}
	for (m = 0; m < M; m++) {
		fill(tmp, k, 0.5f + (rnd64() % 50));
		if (is_block(dt)) {
			cb_quantize_row_q8_0_ref((char *)p->act + m * p->as, tmp, k);
			cb_dequantize_row(CB_DT_Q8_0, p->af + (cb_size)m * k,
					  (char *)p->act + m * p->as, k);
		} else {
			memcpy((char *)p->act + m * p->as, tmp, sizeof(float) * k);
			memcpy(p->af + (cb_size)m * k, tmp, sizeof(float) * k);
		}
	}
	free(tmp);
}

static void problem_free(struct problem *p)
{
	free(p->w);
	free(p->act);
	free(p->wf);
	free(p->af);
}

static float *out_alloc(const struct problem *p)
{
	float *o = malloc(sizeof(float) * p->M * p->ldo);
	size_t i;

	for (i = 0; i < (size_t)p->M * p->ldo; i++)
		o[i] = -12345.0f;	/* poison: padding must stay untouched */
	return o;
}

/* exact (double) product and S for output (m, r) */
static double ref_dot(const struct problem *p, int m, int r, double *S)
{
	double s = 0, a = 0;
	int i;

	for (i = 0; i < p->k; i++) {
		double t = (double)p->wf[(size_t)r * p->k + i] * p->af[(size_t)m * p->k + i];

		s += t;
		a += fabs(t);
	}
	*S = a;
	return s;
}

static double tol_factor(const struct problem *p)
{
	if (is_block(p->dt))
		return 2.0 * (p->k / 32 + 8) * 0x1p-24;
	return 2.0 * (p->k + 1) * 0x1p-24;
}

/* Compare out to want (or to exact when want is NULL); count failures. */
static int check_out(const struct problem *p, const float *out, const float *want,
		     const char *what)
{
	/* against exact only one side has rounding errors */
	double tf = want ? tol_factor(p) : tol_factor(p) / 2;
	int m, r, bad = 0;

	for (m = 0; m < p->M; m++) {
		for (r = 0; r < (int)p->ldo; r++) {
			float o = out[m * p->ldo + r];
			double S, ref, err;

			if (r >= p->nrows) {
				if (o != -12345.0f && bad++ < 3)
					CB_CHECK(0, "%s %s: wrote padding at m=%d r=%d",
						 what, dt_name(p->dt), m, r);
				continue;
			}
			ref = ref_dot(p, m, r, &S);
			if (want)
				ref = want[m * p->ldo + r];
			err = fabs(o - ref);
			if (!(err <= tf * S + 1e-30)) {
				if (bad++ < 3)
					CB_CHECK(0, "%s %s M=%d nrows=%d k=%d (m=%d r=%d): "
						 "%.9g vs %.9g, err %.3g > tol %.3g",
						 what, dt_name(p->dt), p->M, p->nrows,
						 p->k, m, r, o, ref, err, tf * S);
			}
		}
	}
	return bad;
}

static const int ks_float[] = { 1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 48, 63, 64,
				65, 100, 130, 259, 1000, 2051 };
static const int ks_block[] = { 32, 64, 96, 160, 256, 1024, 2048 };
static const int nrows_list[] = { 1, 2, 3, 4, 5, 7, 8, 9, 13 };

/* Scalar gemm against double precision: validates the reference itself. */
static void run_scalar_vs_exact(int dt)
{
	const int *ks = is_block(dt) ? ks_block : ks_float;
	int nk = is_block(dt) ? CB_ARRAY_SIZE(ks_block) : CB_ARRAY_SIZE(ks_float);
	int ik, M, bad = 0;

	for (ik = 0; ik < nk; ik++) {
		for (M = 1; M <= 9; M += 4) {
			struct problem p;
			float *out;

			problem_make(&p, dt, M, 5, ks[ik]);
			out = out_alloc(&p);
			cb_isa_scalar.gemm[dt](out, p.ldo, p.w, p.wrb, p.act, p.as,
					      M, p.nrows, p.k);
			bad += check_out(&p, out, NULL, "scalar vs exact");
			free(out);
			problem_free(&p);
		}
	}
	CB_CHECK(bad == 0, "%d outputs out of tolerance", bad);
}

static void test_scalar_gemm_f32_exact(void) { run_scalar_vs_exact(CB_DT_F32); }
static void test_scalar_gemm_f16_exact(void) { run_scalar_vs_exact(CB_DT_F16); }
static void test_scalar_gemm_bf16_exact(void) { run_scalar_vs_exact(CB_DT_BF16); }
static void test_scalar_gemm_q8_0_exact(void) { run_scalar_vs_exact(CB_DT_Q8_0); }
static void test_scalar_gemm_q4_0_exact(void) { run_scalar_vs_exact(CB_DT_Q4_0); }

/*
 * The scalar gemm into @want and @ops' into @got, each over the whole of
 * @p; returns check_out()'s count of outputs out of tolerance.
 */
static int gemm_vs_scalar(const struct cb_isa_ops *ops, const struct problem *p,
			  float *want, float *got)
{
	cb_isa_scalar.gemm[p->dt](want, p->ldo, p->w, p->wrb, p->act, p->as, p->M,
				 p->nrows, p->k);
	ops->gemm[p->dt](got, p->ldo, p->w, p->wrb, p->act, p->as, p->M, p->nrows, p->k);
	return check_out(p, got, want, cb_isa_names[ops->level]);
}

/*
 * One variant's gemm against the scalar one over many shapes; also checks
 * that splitting rows and tokens into arbitrary chunks (as the forward
 * pass does) gives bit-identical results.
 */
static void run_gemm(int level, int dt)
{
	const struct cb_isa_ops *ops = cb_test_variant(level);
	const int *ks = is_block(dt) ? ks_block : ks_float;
	int nk = is_block(dt) ? CB_ARRAY_SIZE(ks_block) : CB_ARRAY_SIZE(ks_float);
	int ik, M, in, bad = 0, split_bad = 0, n = 0;

	if (!ops)
		return;
	CB_CHECK(ops->gemm[dt] != NULL, "no gemm for %s", dt_name(dt));
	if (!ops->gemm[dt])
		return;
	for (ik = 0; ik < nk; ik++) {
		for (M = 1; M <= 9; M++) {
			for (in = 0; in < (int)CB_ARRAY_SIZE(nrows_list); in++) {
				struct problem p;
				float *want, *got, *split;
				int r0, m0;

				if (ks[ik] > 300 && (M + in) % 3)
					continue;	/* keep the run short */
				raw_weights = (M + in) % 2;
				problem_make(&p, dt, M, nrows_list[in], ks[ik]);
				raw_weights = 0;
				want = out_alloc(&p);
				got = out_alloc(&p);
				split = out_alloc(&p);
				bad += gemm_vs_scalar(ops, &p, want, got);
				/* chunks of 3 rows x 2 tokens */
				for (r0 = 0; r0 < p.nrows; r0 += 3)
					for (m0 = 0; m0 < M; m0 += 2)
						ops->gemm[dt](split + m0 * p.ldo + r0, p.ldo,
							      (char *)p.w + r0 * p.wrb,
							      p.wrb,
							      (char *)p.act + m0 * p.as,
							      p.as, CB_MIN(2, M - m0),
							      CB_MIN(3, p.nrows - r0), p.k);
				if (memcmp(split, got, sizeof(float) * M * p.ldo))
					split_bad++;
				n++;
				free(want);
				free(got);
				free(split);
				problem_free(&p);
			}
		}
	}
	printf("# %s gemm %s: %d shapes\n", cb_isa_names[ops->level], dt_name(dt), n);
	CB_CHECK(bad == 0, "%d outputs out of tolerance", bad);
	CB_CHECK(split_bad == 0, "%d shapes depend on the chunking", split_bad);
}

/* Bits of out (m, r) equal to those of ref (m, r)? */
static int same_bits(const float *a, const float *b)
{
	return !memcmp(a, b, sizeof(float));
}

/*
 * Block gemms at the decode shapes (k = 2048, 4096, and an odd number of
 * blocks), with nrows not a multiple of the 4-row group: against scalar,
 * and every row's bits against those of the one full call whatever the
 * call it comes from: one row and one token at a time, row ranges that
 * start off the group boundary (offsets 1..3) with tokens in chunks of
 * 1..5, and the first M tokens alone for every M in 1..9.
 */
static void run_gemm_splits(int level, int dt)
{
	static const int ks[] = { 2048, 4096, 1056 };
	static const int nrs[] = { 21, 7 };
	const struct cb_isa_ops *ops = cb_test_variant(level);
	int ik, in, bad = 0, split_bad = 0, n = 0;

	if (!ops)
		return;
	for (ik = 0; ik < (int)CB_ARRAY_SIZE(ks); ik++) {
		for (in = 0; in < (int)CB_ARRAY_SIZE(nrs); in++) {
			const int M = 9;
			struct problem p;
			float *want, *got, *part;
			int r, m, r0, cs, Ms;

			raw_weights = (ik + in) % 2;
			problem_make(&p, dt, M, nrs[in], ks[ik]);
			raw_weights = 0;
			want = out_alloc(&p);
			got = out_alloc(&p);
			part = out_alloc(&p);
			bad += gemm_vs_scalar(ops, &p, want, got);
			/* one row, one token per call */
			for (r = 0; r < p.nrows; r++)
				for (m = 0; m < M; m++) {
					ops->gemm[dt](part + m * p.ldo + r, p.ldo,
						      (char *)p.w + r * p.wrb, p.wrb,
						      (char *)p.act + m * p.as, p.as, 1, 1, p.k);
					split_bad += !same_bits(part + m * p.ldo + r,
								got + m * p.ldo + r);
				}
			/* rows [0, r0) and [r0, nrows), tokens in chunks of cs */
			for (r0 = 1; r0 <= 3; r0++)
				for (cs = 1; cs <= 5; cs++) {
					int m0;

					for (m0 = 0; m0 < M; m0 += cs) {
						int mc = CB_MIN(cs, M - m0);

						ops->gemm[dt](part + m0 * p.ldo, p.ldo, p.w,
							      p.wrb, (char *)p.act + m0 * p.as,
							      p.as, mc, r0, p.k);
						ops->gemm[dt](part + m0 * p.ldo + r0, p.ldo,
							      (char *)p.w + r0 * p.wrb,
							      p.wrb, (char *)p.act + m0 * p.as,
							      p.as, mc, p.nrows - r0, p.k);
					}
					split_bad += !!memcmp(part, got,
							      sizeof(float) * M * p.ldo);
				}
			/* the first Ms tokens alone */
			for (Ms = 1; Ms <= M; Ms++) {
				ops->gemm[dt](part, p.ldo, p.w, p.wrb, p.act, p.as, Ms,
					      p.nrows, p.k);
				split_bad += !!memcmp(part, got, sizeof(float) * Ms * p.ldo);
			}
			n++;
			free(want);
			free(got);
			free(part);
			problem_free(&p);
		}
	}
	printf("# %s gemm %s at decode shapes: %d problems\n", cb_isa_names[ops->level], dt_name(dt), n);
	CB_CHECK(bad == 0, "%d outputs out of tolerance", bad);
	CB_CHECK(split_bad == 0, "%d calls gave other bits than the full call", split_bad);
}

/*
 * Block gemms at prefill shapes: M = 1..70 tokens (the prefill tiles and
 * their leftovers), nrows off every row group (8k + 1, + 5, + 7) and odd
 * numbers of blocks.  Every (row, token) of every call must carry the bits
 * of the decode path: the same token alone, M = 1, over all rows.  Also
 * the chunks a forward pass makes (16 rows x 32 tokens), and scalar within
 * the tolerance at M = 70.
 */
static void run_gemm_prefill(int level, int dt)
{
	static const int ks[] = { 1056, 96, 2048 };
	static const int nrs[] = { 37, 13, 23 };
	const int MMAX = 70;
	const struct cb_isa_ops *ops = cb_test_variant(level);
	int ik, bad = 0, split_bad = 0, n = 0;

	if (!ops)
		return;
	for (ik = 0; ik < (int)CB_ARRAY_SIZE(ks); ik++) {
		struct problem p;
		float *want, *one, *got;
		int m, M, r0, m0;

		raw_weights = ik % 2;
		problem_make(&p, dt, MMAX, nrs[ik], ks[ik]);
		raw_weights = 0;
		want = out_alloc(&p);
		one = out_alloc(&p);
		got = out_alloc(&p);
		/* the decode path: one token per call */
		for (m = 0; m < MMAX; m++)
			ops->gemm[dt](one + m * p.ldo, p.ldo, p.w, p.wrb,
				      (char *)p.act + m * p.as, p.as, 1, p.nrows, p.k);
		bad += gemm_vs_scalar(ops, &p, want, got);
		split_bad += !!memcmp(got, one, sizeof(float) * MMAX * p.ldo);
		for (M = 1; M < MMAX; M++) {
			free(got);
			got = out_alloc(&p);
			ops->gemm[dt](got, p.ldo, p.w, p.wrb, p.act, p.as, M, p.nrows, p.k);
			split_bad += !!memcmp(got, one, sizeof(float) * M * p.ldo);
			n++;
		}
		/* a forward pass's chunks: 16 rows x 32 tokens */
		free(got);
		got = out_alloc(&p);
		for (r0 = 0; r0 < p.nrows; r0 += 16)
			for (m0 = 0; m0 < MMAX; m0 += 32)
				ops->gemm[dt](got + m0 * p.ldo + r0, p.ldo,
					      (char *)p.w + r0 * p.wrb, p.wrb,
					      (char *)p.act + m0 * p.as, p.as,
					      CB_MIN(32, MMAX - m0), CB_MIN(16, p.nrows - r0),
					      p.k);
		split_bad += !!memcmp(got, one, sizeof(float) * MMAX * p.ldo);
		free(want);
		free(one);
		free(got);
		problem_free(&p);
	}
	printf("# %s gemm %s at prefill shapes: %d calls\n", cb_isa_names[ops->level], dt_name(dt), n);
	CB_CHECK(bad == 0, "%d outputs out of tolerance", bad);
	CB_CHECK(split_bad == 0, "%d calls gave other bits than one token at a time",
		 split_bad);
}

/* Blocks that probe the rounding: ties, near-ties, zeros, extremes. */
static void make_quant_input(float *x, int n)
{
	int b, j;

	for (b = 0; b < n / 32; b++) {
		float *xb = x + b * 32;
		int kind = b % 8;

		fill(xb, 32, (float)ldexp(1.0, (int)(rnd64() % 40) - 20));
		switch (kind) {
		case 0:		/* d = 1: x * id = x, exact halves */
			for (j = 0; j < 32; j++)
				xb[j] = (float)((int)(rnd64() % 253) - 126) + 0.5f;
			xb[5] = 127.0f;
			break;
		case 1:		/* all zero: d = 0 */
			memset(xb, 0, 32 * sizeof(float));
			break;
		case 2:		/* just below and above one half */
			for (j = 0; j < 32; j++)
				xb[j] = j & 1 ? 0.49999997f : -0.50000006f;
			xb[0] = 127.0f;
			break;
		case 3:		/* negative maximum */
			xb[7] = -3.0f * fabsf(xb[7]) - 1e-3f;
			break;
		case 4:		/* subnormals and a tiny amax (1/d overflows) */
			for (j = 0; j < 32; j++)
				xb[j] = (float)(rndf() * 0x1p-140);
			break;
		default:
			break;
		}
	}
}

static void run_quantize(int level)
{
	const struct cb_isa_ops *ops = cb_test_variant(level);
	int n, bad = 0, trial;

	if (!ops)
		return;
	for (trial = 0; trial < 200; trial++) {
		unsigned char *a, *b;
		float *x;

		n = 32 * (1 + trial % 37);
		x = malloc(sizeof(float) * n);
		a = malloc(n / 32 * 34);
		b = malloc(n / 32 * 34);
		make_quant_input(x, n);
		if (trial == 7) {
			x[3] = NAN;
			x[40 % n] = INFINITY;
			x[70 % n] = -INFINITY;
		}
		memset(a, 0x5a, n / 32 * 34);
		memset(b, 0xa5, n / 32 * 34);
		cb_quantize_row_q8_0_ref(a, x, n);
		if (trial % 2)
			ops->quantize_act[CB_ACT_Q8_0](b, x, n);
		else	/* in pieces of whole blocks, as column-split phases do */
			for (int p = 0; p < n; p += 64)
				ops->quantize_act[CB_ACT_Q8_0](b + p / 32 * 34, x + p,
							       p + 64 <= n ? 64 : n - p);
		if (memcmp(a, b, n / 32 * 34)) {
			int i;

			for (i = 0; i < n / 32 * 34 && a[i] == b[i]; i++)
				;
			if (bad++ < 3)
				CB_CHECK(0, "%s quantize_q8_0 n=%d: byte %d differs "
					 "(%02x vs %02x)", cb_isa_names[ops->level], n, i, b[i], a[i]);
		}
		free(x);
		free(a);
		free(b);
	}
	CB_CHECK(bad == 0, "%d rows differ", bad);
	CB_CHECK(cb_isa_scalar.quantize_act[CB_ACT_Q8_0] == cb_quantize_row_q8_0_ref,
		 "scalar quantize_act[q8_0] is the reference");
}

/* one axpy_f32 call: y (buf) += alpha * a over n, and buf has one more float */
struct axpy_call {
	const float *a;
	float alpha;
	int n;
};

static void axpy_op(const struct cb_isa_ops *ops, float *buf, const void *arg)
{
	const struct axpy_call *c = arg;

	ops->axpy_f32(buf, c->alpha, c->a, c->n);
}

static void run_axpy(int level)
{
	const struct cb_isa_ops *ops = cb_test_variant(level);
	int n, bad_axpy = 0;

	if (!ops)
		return;
	for (n = 0; n < 300; n += 1 + n / 20) {
		float *a = malloc(sizeof(float) * (n + 1));
		float *y = malloc(sizeof(float) * (n + 1));
		struct axpy_call c = { .a = a, .alpha = rndf() * 3, .n = n };

		fill(a, n + 1, 2.0f);
		fill(y, n + 1, 1.0f);
		/* the +1 element must stay untouched: n written, not n + 1 */
		if (cb_vs_scalar(ops, "axpy_f32", axpy_op, y, n + 1, &c, NULL))
			bad_axpy++;
		free(a);
		free(y);
	}
	CB_CHECK(bad_axpy == 0, "%s axpy_f32: %d lengths not bit-identical",
		 cb_isa_names[ops->level], bad_axpy);
}

/*
 * pv_f32 (the attention's P.V of a tile) against ng x n calls of the
 * scalar axpy_f32 in position order, bitwise: widths around the vector
 * and block sizes (tails of one vector and of scalars), 1..9 heads
 * (groups of 4 and heads left over), 0..33 positions, rows of o with a
 * gap after each that must stay untouched.  The scalar table too.
 */
static int pv_bad(const struct cb_isa_ops *ops)
{
	static const int ws[] = { 1, 7, 16, 17, 48, 64, 65, 80, 128, 129, 192, 256 };
	int wi, ng, n, bad = 0;

	for (wi = 0; wi < (int)CB_ARRAY_SIZE(ws); wi++)
		for (ng = 1; ng <= 9; ng++)
			for (n = 0; n <= 33; n += 1 + n / 4) {
				int w = ws[wi], ldo = w + 3, ldv = w + 5, ldp = n + 2, g, i;
				float *o1 = malloc(sizeof(float) * ng * ldo);
				float *o2 = malloc(sizeof(float) * ng * ldo);
				float *p = malloc(sizeof(float) * ng * ldp);
				float *v = malloc(sizeof(float) * (n * ldv + 1));

				fill(o1, ng * ldo, 1.0f);
				memcpy(o2, o1, sizeof(float) * ng * ldo);
				fill(p, ng * ldp, 1.0f);
				fill(v, n * ldv + 1, 2.0f);
				for (g = 0; g < ng; g++)
					for (i = 0; i < n; i++)
						cb_isa_scalar.axpy_f32(o1 + g * ldo, p[g * ldp + i],
								       v + i * ldv, w);
				ops->pv_f32(o2, ldo, p, ldp, v, ldv, ng, n, w);
				if (memcmp(o1, o2, sizeof(float) * ng * ldo))
					bad++;
				free(o1);
				free(o2);
				free(p);
				free(v);
			}
	return bad;
}

static void run_pv(int level)
{
	const struct cb_isa_ops *ops = cb_test_variant(level);
	int bad;

	if (!ops)
		return;
	bad = pv_bad(ops);
	CB_CHECK(bad == 0, "%s pv_f32: %d shapes not bit-identical to axpy_f32", cb_isa_names[ops->level], bad);
}

/*
 * delta_step_f32 (a DeltaNet token, cb_delta.c) against the scalar table's,
 * bitwise: column counts around the vector and block sizes (tails of one
 * vector and of scalars), 1, 16 and 128 rows, rows with a gap after the
 * columns that must stay untouched, three tokens one after another (the
 * state carried), decays of 1 and below.
 */
static void run_delta(int level)
{
	static const int ns[] = { 1, 3, 4, 15, 16, 17, 31, 32, 48, 63, 64, 65, 100, 128 };
	static const int ks[] = { 1, 16, 128 };
	const struct cb_isa_ops *ops = cb_test_variant(level);
	int ni, ki, t, bad = 0;

	if (!ops)
		return;
	for (ni = 0; ni < (int)CB_ARRAY_SIZE(ns); ni++)
		for (ki = 0; ki < (int)CB_ARRAY_SIZE(ks); ki++) {
			int n = ns[ni], k = ks[ki], ld = n + 5;
			float *s1 = malloc(sizeof(float) * k * ld), *s2 = malloc(sizeof(float) * k * ld);
			float *kk = malloc(sizeof(float) * k), *q = malloc(sizeof(float) * k);
			float *v = malloc(sizeof(float) * n), *o1 = malloc(sizeof(float) * (n + 1));
			float *o2 = malloc(sizeof(float) * (n + 1)), *tmp = malloc(sizeof(float) * n);

			fill(s1, k * ld, 1.0f);
			memcpy(s2, s1, sizeof(float) * k * ld);
			for (t = 0; t < 3; t++) {
				float dec = t ? 0.9f + 0.05f * rndf() : 1.0f, beta = 0.5f + 0.4f * rndf();

				fill(kk, k, 0.3f);
				fill(q, k, 0.3f);
				fill(v, n, 1.0f);
				fill(o1, n + 1, 1.0f);
				memcpy(o2, o1, sizeof(float) * (n + 1));
				cb_isa_scalar.delta_step_f32(s1, (cb_size)ld, k, n, kk, q, v, dec, beta,
							     o1, tmp);
				ops->delta_step_f32(s2, (cb_size)ld, k, n, kk, q, v, dec, beta, o2, tmp);
				if (memcmp(s1, s2, sizeof(float) * k * ld) ||
				    memcmp(o1, o2, sizeof(float) * (n + 1)))
					bad++;
			}
			free(s1);
			free(s2);
			free(kk);
			free(q);
			free(v);
			free(o1);
			free(o2);
			free(tmp);
		}
	CB_CHECK(bad == 0, "%s delta_step_f32: %d shapes not bit-identical to scalar",
		 cb_isa_names[ops->level], bad);
}

static void test_scalar_pv(void)
{
	int bad = pv_bad(&cb_isa_scalar);

	CB_CHECK(bad == 0, "scalar pv_f32: %d shapes differ from axpy_f32", bad);
}

/*
 * The decode tiles (M = 1) against the others at the ends of the ranges:
 * rows whose blocks hold every nibble 0 (q4_0: -8) or 15 (+7), every
 * byte -128 or 127 (q8_0), or random ones, with scales of either sign
 * from the smallest subnormal half to 65504; tokens of all +127, all -127
 * and random quants, random scales; 1, 3 and 65 blocks (odd: a last
 * block alone) and 7 or 13 rows (rows left over after the groups of 4).
 * Each token alone (the decode tile) must give the bits of the same token
 * in one call of all four (tiles of 2 or 4 tokens).
 */
static void run_gemm_dec_extremes(int level, int dt)
{
	static const cb_u16 dh[] = { 0x0001, 0x8001, 0x7bff, 0xfbff, 0x3c00, 0x0400 };
	static const int nbs[] = { 1, 3, 65 }, nrs[] = { 7, 13 };
	const struct cb_isa_ops *ops = cb_test_variant(level);
	const int M = 4, bsz = dt == CB_DT_Q4_0 ? 18 : 34;
	int ik, in, bad = 0, n = 0;

	if (!ops)
		return;
	for (ik = 0; ik < (int)CB_ARRAY_SIZE(nbs); ik++)
		for (in = 0; in < (int)CB_ARRAY_SIZE(nrs); in++) {
			struct problem p;
			float *all, *one;
			int r, b, m, i;

			problem_make(&p, dt, M, nrs[in], nbs[ik] * 32);
			for (r = 0; r < p.nrows; r++)
				for (b = 0; b < nbs[ik]; b++) {
					cb_u8 *blk = (cb_u8 *)p.w + r * p.wrb + b * bsz;
					int fill = (r + b) % 3;
					cb_u16 d = (r + b) % 4 ? dh[(r + 2 * b) % 6] :
						(cb_u16)(rnd64() & 0xfbff);

					memcpy(blk, &d, 2);
					for (i = 2; i < bsz; i++)
						blk[i] = fill == 2 ? (cb_u8)rnd64() :
							 dt == CB_DT_Q4_0 ? (fill ? 0xff : 0x00) :
							 (fill ? 0x7f : 0x80);
				}
			for (m = 0; m < M; m++)
				for (b = 0; b < nbs[ik]; b++) {
					char *xr = (char *)p.act + m * p.as;
					struct cb_block_q8_0 *xb = (struct cb_block_q8_0 *)xr + b;

					xb->d = (cb_u16)(rnd64() & 0x7bff);
					for (i = 0; i < 32 && m < 2; i++)
						xb->qs[i] = m ? -127 : 127;
				}
			all = out_alloc(&p);
			one = out_alloc(&p);
			ops->gemm[dt](all, p.ldo, p.w, p.wrb, p.act, p.as, M, p.nrows, p.k);
			for (m = 0; m < M; m++)
				ops->gemm[dt](one + m * p.ldo, p.ldo, p.w, p.wrb,
					      (char *)p.act + m * p.as, p.as, 1, p.nrows, p.k);
			for (i = 0; i < M * (int)p.ldo; i++)
				if (!same_bits(&one[i], &all[i]) && bad++ < 3)
					CB_CHECK(0, "%s %s k=%d nrows=%d m=%d r=%d: %.9g, %.9g",
						 cb_isa_names[ops->level], dt_name(dt), p.k, p.nrows,
						 i / (int)p.ldo, i % (int)p.ldo, one[i], all[i]);
			n++;
			free(all);
			free(one);
			problem_free(&p);
		}
	printf("# %s %s decode tile at the extremes: %d problems\n", cb_isa_names[ops->level], dt_name(dt), n);
	CB_CHECK(bad == 0, "%d outputs of M = 1 differ from M = 4", bad);
}

static void gemm_f32(int level) { run_gemm(level, CB_DT_F32); }
static void gemm_f16(int level) { run_gemm(level, CB_DT_F16); }
static void gemm_bf16(int level) { run_gemm(level, CB_DT_BF16); }
static void gemm_q8_0(int level) { run_gemm(level, CB_DT_Q8_0); }
static void gemm_q4_0(int level) { run_gemm(level, CB_DT_Q4_0); }
static void gemm_q8_0_splits(int level) { run_gemm_splits(level, CB_DT_Q8_0); }
static void gemm_q4_0_splits(int level) { run_gemm_splits(level, CB_DT_Q4_0); }
static void gemm_q8_0_prefill(int level) { run_gemm_prefill(level, CB_DT_Q8_0); }
static void gemm_q4_0_prefill(int level) { run_gemm_prefill(level, CB_DT_Q4_0); }
static void gemm_q8_0_dec_extremes(int level) { run_gemm_dec_extremes(level, CB_DT_Q8_0); }
static void gemm_q4_0_dec_extremes(int level) { run_gemm_dec_extremes(level, CB_DT_Q4_0); }

static const struct cb_variant_test variant_tests[] = {
	{ "gemm_f32", gemm_f32 },
	{ "gemm_f16", gemm_f16 },
	{ "gemm_bf16", gemm_bf16 },
	{ "gemm_q8_0", gemm_q8_0 },
	{ "gemm_q4_0", gemm_q4_0 },
	{ "gemm_q8_0_splits", gemm_q8_0_splits },
	{ "gemm_q4_0_splits", gemm_q4_0_splits },
	{ "gemm_q8_0_prefill", gemm_q8_0_prefill },
	{ "gemm_q4_0_prefill", gemm_q4_0_prefill },
	{ "gemm_q8_0_dec_extremes", gemm_q8_0_dec_extremes },
	{ "gemm_q4_0_dec_extremes", gemm_q4_0_dec_extremes },
	{ "quantize_q8_0_bytes", run_quantize },
	{ "axpy", run_axpy },
	{ "pv", run_pv },
	{ "delta_step", run_delta },
};

/* The selection follows the preference list and the cap. */
static void test_isa_select(void)
{
	const struct cb_isa_ops *best = cb_isa_select(CB_ISA__COUNT - 1);
	int lvl;

	CB_CHECK(cb_isa_select(CB_ISA_SCALAR) == &cb_isa_scalar, "cap 0 -> scalar");
	CB_CHECK(cb_isa_select(-1) == &cb_isa_scalar, "cap -1 -> scalar");
	CB_CHECK(cb_isa_get(CB_ISA_SCALAR) == &cb_isa_scalar, "scalar always valid");
	CB_CHECK(cb_isa_get(7) == NULL, "unknown level");
	for (lvl = CB_ISA__COUNT - 1; lvl > CB_ISA_SCALAR; lvl--)
		if (cb_isa_get(lvl))
			break;
	CB_CHECK((int)best->level == lvl, "best %s, expected level %d", cb_isa_names[best->level], lvl);
	if (cb_isa_get(CB_ISA_AVX2))
		CB_CHECK(cb_isa_select(CB_ISA_AVX2) == &cb_isa_avx2, "cap 1 -> avx2");
	CB_CHECK(cb_isa_get(CB_ISA_AVX512) == NULL || cb_cpu_has(CB_CPU_AVX512BW),
		 "avx512 valid without BW");
	/* VNNI is a variant of its own: valid exactly when the CPU has it */
	CB_CHECK(!cb_isa_get(CB_ISA_AVX512_VNNI) ==
		 (!cb_isa_get(CB_ISA_AVX512) || !cb_cpu_has(CB_CPU_AVX512VNNI)),
		 "avx512_vnni valid %d, avx512 %d, vnni %d", !!cb_isa_get(CB_ISA_AVX512_VNNI),
		 !!cb_isa_get(CB_ISA_AVX512), cb_cpu_has(CB_CPU_AVX512VNNI));
	if (cb_isa_get(CB_ISA_AVX512))
		CB_CHECK(cb_isa_select(CB_ISA_AVX512) == &cb_isa_avx512,
			 "cap 2 -> avx512, without VNNI");
	printf("# selected %s (avx512 vnni %s)\n", cb_isa_names[best->level],
	       cb_cpu_has(CB_CPU_AVX512VNNI) ? "yes" : "no");
}

/* Every variant fills every slot of the table. */
static void test_tables_complete(void)
{
	const struct cb_isa_ops *all[] = { &cb_isa_scalar, &cb_isa_avx2, &cb_isa_avx512,
					   &cb_isa_avx512_vnni };
	unsigned i, dt;

	for (i = 0; i < CB_ARRAY_SIZE(all); i++) {
		CB_CHECK(all[i]->valid && all[i]->axpy_f32 && all[i]->pv_f32 &&
			 all[i]->topk_f32,
			 "table %u incomplete", i);
		for (dt = CB_ACT_F32 + 1; dt < CB_ACT__COUNT; dt++)
			CB_CHECK(all[i]->quantize_act[dt], "%s lacks quantize_act %s",
				 cb_isa_names[i], cb_act_info(dt)->name);
		CB_CHECK((int)all[i]->level == (int)i, "table %u level %d", i,
			 all[i]->level);
		/* a variant's name is its level's (cb_isa_names.c), looked up both ways */
		CB_CHECK(cb_isa_level_of(cb_isa_names[i]) == (int)i,
			 "%s is not level %u", cb_isa_names[i], i);
		for (dt = 0; dt < CB_DT__COUNT; dt++) {
			CB_CHECK(all[i]->gemm[dt], "%s lacks gemm %s", cb_isa_names[i],
				 dt_name(dt));
			/* the planner's cost, within what the shape limits assume */
			CB_CHECK(all[i]->gemm_ps[dt] > 0 && all[i]->gemm_ps[dt] <= CB_PS_GEMM_MAX,
				 "%s gemm_ps %s = %u, outside 1..%u", cb_isa_names[i], dt_name(dt),
				 all[i]->gemm_ps[dt], CB_PS_GEMM_MAX);
		}
	}
}

/* ISA names: unknown ones have no level; the message list names them all. */
static void test_isa_names(void)
{
	char list[128], small[8];

	CB_CHECK(CB_ARRAY_SIZE(cb_isa_names) == CB_ISA__COUNT, "name table size");
	CB_CHECK(cb_isa_level_of("neon") == -1 && cb_isa_level_of("avx") == -1 &&
		 cb_isa_level_of("avx2x") == -1 && cb_isa_level_of("") == -1 &&
		 cb_isa_level_of(NULL) == -1, "an unknown name has a level");
	cb_isa_name_list(list, sizeof(list));
	CB_CHECK(!strcmp(list, "scalar, avx2, avx512 or avx512_vnni"), "list '%s'", list);
	cb_isa_name_list(small, sizeof(small));
	CB_CHECK(!strcmp(small, "scalar,"), "cut short: '%s'", small);
}

/*
 * Every weight type reads an activation form that exists, and the row
 * sizes are whole blocks of the structs cb_quant.h documents.
 */
static void test_dtype_and_activation_tables(void)
{
	unsigned dt, k;

	for (dt = 0; dt < CB_DT__COUNT; dt++) {
		const struct cb_block_info *b = cb_dtype_info(dt);

		CB_CHECK(b && b->name && b->block && b->block_bytes && b->act < CB_ACT__COUNT,
			 "dtype %u: incomplete entry", dt);
		CB_CHECK(cb_dtype_row_bytes(dt, 64 * b->block) == 64ull * b->block_bytes,
			 "dtype %s: row bytes", b->name);
		CB_CHECK(b->block == 1 || !cb_dtype_row_bytes(dt, b->block + 1),
			 "dtype %s: a partial block accepted", b->name);
		/* whatever a weight row holds, its activation row has whole blocks */
		CB_CHECK(b->block % cb_act_info(b->act)->block == 0,
			 "dtype %s: block %u not a multiple of its activation's", b->name,
			 b->block);
	}
	CB_CHECK(!cb_dtype_info(CB_DT__COUNT) && !cb_dtype_row_bytes(CB_DT__COUNT, 32),
		 "unknown dtype has an entry");
	CB_CHECK(cb_dtype_act(CB_DT_Q8_0) == CB_ACT_Q8_0 && cb_dtype_act(CB_DT_Q4_0) == CB_ACT_Q8_0 &&
		 cb_dtype_act(CB_DT_F16) == CB_ACT_F32, "activation forms of today's types");
	CB_CHECK(cb_act_row_bytes(CB_ACT_Q8_0, 64) == 2 * sizeof(struct cb_block_q8_0) &&
		 cb_act_row_bytes(CB_ACT_F32, 5) == 20, "activation row bytes");
	for (k = 0; k < CB_ACT__COUNT; k++) {
		CB_CHECK(cb_act_info(k) && cb_act_info(k)->name, "form %u: no entry", k);
		/* column-split phases cut rows into pieces that quantize alone */
		CB_CHECK(CB_ACT_PIECE % cb_act_info(k)->block == 0,
			 "form %s: CB_ACT_PIECE %d is not whole blocks of %u", cb_act_info(k)->name,
			 CB_ACT_PIECE, cb_act_info(k)->block);
	}
}

int main(void)
{
	CB_RUN(test_tables_complete);
	CB_RUN(test_isa_names);
	CB_RUN(test_dtype_and_activation_tables);
	CB_RUN(test_isa_select);
	CB_RUN(test_scalar_gemm_f32_exact);
	CB_RUN(test_scalar_gemm_f16_exact);
	CB_RUN(test_scalar_gemm_bf16_exact);
	CB_RUN(test_scalar_gemm_q8_0_exact);
	CB_RUN(test_scalar_gemm_q4_0_exact);
	CB_RUN(test_scalar_pv);
	cb_run_variants(variant_tests, (int)CB_ARRAY_SIZE(variant_tests));
	return cb_test_done();
}
