// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_math.c - exp, log, pow, sin, cos, tanh without libm.
 *
 * Everything is evaluated in double and, for the float entry points,
 * rounded to float once at the end (see cb_math.h for the error bounds).
 * The polynomials are truncated Taylor / atanh series evaluated by Horner's
 * rule: slower than minimax fits, but their coefficients are exact
 * rationals anyone can check, and the truncation errors are stated next to
 * them.  The hot loops of the engine (softmax over logits, SiLU) are short
 * enough per token that a few extra multiplies do not matter.
 */
#include "ops/cb_math.h"

/*
 * ln 2 split so that k * LN2_HI is exact for |k| < 2^21 (LN2_HI has 32
 * significant bits).
 */
static const double LN2_HI = 0x1.62e42ffp-1;
static const double LN2_LO = -0x1.718432a1b0e26p-35;
static const double LOG2E = 0x1.71547652b82fep+0;

/*
 * pi/2 in four parts of at most 24 significant bits plus a tail: k * PIO2_n
 * is exact for |k| < 2^29, so the reduction x - k*pi/2 loses nothing
 * there.  The sum of the parts equals pi/2 to about 2^-150.
 */
static const double PIO2_1 = 0x1.921fb4p+0;
static const double PIO2_2 = 0x1.4442dp-24;
static const double PIO2_3 = 0x1.846988p-48;
static const double PIO2_4 = 0x1.8cc518p-72;
static const double PIO2_5 = -0x1.fc8f8cbb5bf6cp-97;
static const double TWO_OVER_PI = 0x1.45f306dc9c883p-1;

/*
 * 2^(j/32), j = 0..31, correctly rounded to double: the table of the fast
 * exponential below (values from exact decimal arithmetic).  Shared with
 * the vector copies of exp_fast (cb_vmath_x86_tmpl.h).
 */
const double cb_exp2_32[32] = {
	0x1.0000000000000p+0, 0x1.059b0d3158574p+0,
	0x1.0b5586cf9890fp+0, 0x1.11301d0125b51p+0,
	0x1.172b83c7d517bp+0, 0x1.1d4873168b9aap+0,
	0x1.2387a6e756238p+0, 0x1.29e9df51fdee1p+0,
	0x1.306fe0a31b715p+0, 0x1.371a7373aa9cbp+0,
	0x1.3dea64c123422p+0, 0x1.44e086061892dp+0,
	0x1.4bfdad5362a27p+0, 0x1.5342b569d4f82p+0,
	0x1.5ab07dd485429p+0, 0x1.6247eb03a5585p+0,
	0x1.6a09e667f3bcdp+0, 0x1.71f75e8ec5f74p+0,
	0x1.7a11473eb0187p+0, 0x1.82589994cce13p+0,
	0x1.8ace5422aa0dbp+0, 0x1.93737b0cdc5e5p+0,
	0x1.9c49182a3f090p+0, 0x1.a5503b23e255dp+0,
	0x1.ae89f995ad3adp+0, 0x1.b7f76f2fb5e47p+0,
	0x1.c199bdd85529cp+0, 0x1.cb720dcef9069p+0,
	0x1.d5818dcfba487p+0, 0x1.dfc97337b9b5fp+0,
	0x1.ea4afa2a490dap+0, 0x1.f50765b6e4540p+0,
};

static const double INV_LN2_32 = CB_INV_LN2_32;
static const double LN2_32 = CB_LN2_32;

/*
 * e^x for |x| <= 700, relative error < 1e-13: for the float functions,
 * where that is 0.002 ULP.  x = (32 k' + j) ln2/32 + r with |r| <= ln2/64;
 * e^r by Taylor to degree 5 (truncation 0.0109^6 / 720 < 3e-15); r carries
 * the rounding of kd * LN2_32, below |x| 2^-53.  cb_vmath_x86_tmpl.h
 * repeats this op for op on vectors of doubles (cb_swiglu's vector
 * variants): a change here must be made there too (tests/unit/test_vmath.c
 * compares them bit for bit).
 */
static inline double exp_fast(double x)
{
	double kd = cb_round_even(x * INV_LN2_32);
	double r = x - kd * LN2_32;
	cb_s64 k = (cb_s64)kd;
	double p = r * (1.0 / 120) + 1.0 / 24;

	p = p * r + 1.0 / 6;
	p = p * r + 0.5;
	p = p * r + 1.0;
	p = p * r + 1.0;
	/* 2^(k >> 5) by adding to the table entry's exponent field */
	return cb_f64_from_bits(cb_f64_bits(cb_exp2_32[k & 31]) +
				((cb_u64)(k >> 5) << 52)) * p;
}

static inline double nan_d(void)
{
	return cb_f64_from_bits(0x7ff8000000000000ull);
}

static inline double inf_d(void)
{
	return cb_f64_from_bits(0x7ff0000000000000ull);
}

/* 2^k for -1022 <= k <= 1023 */
static inline double pow2i(int k)
{
	return cb_f64_from_bits((cb_u64)(k + 1023) << 52);
}

/* p * 2^k for any k the exp range needs, -1100 < k < 1100 */
static double scale2(double p, int k)
{
	if (k > 1023) {
		p *= pow2i(1023);
		k -= 1023;
		if (k > 1023)
			k = 1023;
	} else if (k < -1022) {
		/* Two steps so that only the last multiply rounds. */
		p *= pow2i(-1022 + 54);
		k += 1022 - 54;
		if (k < -1022)
			k = -1022;
	}
	return p * pow2i(k);
}

/*
 * e^r for |r| <= ln2/2 + tiny: Taylor to degree 13.  Truncation
 * |r|^14 / 14! < 5e-18 relative.
 */
static inline double exp_poly(double r)
{
	double p = 1.0 / 6227020800.0;	/* 1/13! */

	p = p * r + 1.0 / 479001600.0;	/* 1/12! */
	p = p * r + 1.0 / 39916800.0;
	p = p * r + 1.0 / 3628800.0;
	p = p * r + 1.0 / 362880.0;
	p = p * r + 1.0 / 40320.0;
	p = p * r + 1.0 / 5040.0;
	p = p * r + 1.0 / 720.0;
	p = p * r + 1.0 / 120.0;
	p = p * r + 1.0 / 24.0;
	p = p * r + 1.0 / 6.0;
	p = p * r + 0.5;
	p = p * r + 1.0;
	return p * r + 1.0;
}

/**
 * cb_exp() - e^x in double.
 * @x: any double.
 *
 * Return: e^x, +inf on overflow, +0 on underflow, NaN for NaN.
 */
double cb_exp(double x)
{
	double kd, r;

	if (x != x)
		return x;
	if (x > 709.8)
		return inf_d();
	if (x < -745.2)
		return 0.0;
	kd = cb_round_even(x * LOG2E);
	r = (x - kd * LN2_HI) - kd * LN2_LO;
	return scale2(exp_poly(r), (int)kd);
}

/**
 * cb_log() - natural logarithm in double.
 * @x: any double.
 *
 * Return: ln x; -inf for +-0, NaN for x < 0 or NaN, +inf for +inf.
 */
double cb_log(double x)
{
	cb_u64 u = cb_f64_bits(x);
	double m, s, z, p;
	int e;

	if (x != x)
		return x;
	if (x < 0)
		return nan_d();
	if (x == 0)
		return -inf_d();
	if (u == 0x7ff0000000000000ull)
		return x;
	e = 0;
	if (u < 0x0010000000000000ull) {	/* subnormal */
		x *= 0x1p54;
		u = cb_f64_bits(x);
		e = -54;
	}
	e += (int)(u >> 52) - 1023;
	m = cb_f64_from_bits((u & 0x000fffffffffffffull) | 0x3ff0000000000000ull);
	if (m > 1.4142135623730951) {	/* m in [sqrt(1/2), sqrt(2)] */
		m *= 0.5;
		e++;
	}
	/*
	 * ln m = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...), s = (m-1)/(m+1),
	 * |s| <= 0.1716, so s^2 <= 0.0295; terms through s^23 leave
	 * < 0.0295^12 / 25 < 1e-19 relative.  m - 1 is exact.
	 */
	s = (m - 1.0) / (m + 1.0);
	z = s * s;
	p = 1.0 / 23;
	p = p * z + 1.0 / 21;
	p = p * z + 1.0 / 19;
	p = p * z + 1.0 / 17;
	p = p * z + 1.0 / 15;
	p = p * z + 1.0 / 13;
	p = p * z + 1.0 / 11;
	p = p * z + 1.0 / 9;
	p = p * z + 1.0 / 7;
	p = p * z + 1.0 / 5;
	p = p * z + 1.0 / 3;
	p = 2.0 * s + 2.0 * s * (z * p);
	/* e*ln2 and ln m never cancel badly: |ln m| <= ln2/2. */
	return e * LN2_HI + (e * LN2_LO + p);
}

/**
 * cb_pow() - base^e in double, for base >= 0.
 * @base: the base; negative gives NaN (unless e == 0).
 * @e: the exponent.
 *
 * Return: base^e.  pow(x, 0) = 1, pow(1, y) = 1, pow(0, y>0) = 0,
 * pow(0, y<0) = +inf, NaN otherwise propagates.
 */
double cb_pow(double base, double e)
{
	double l;

	if (e == 0 || base == 1.0)
		return 1.0;
	if (base != base || e != e)
		return base + e;
	if (base < 0)
		return nan_d();
	if (base == 0)
		return e > 0 ? 0.0 : inf_d();
	l = cb_log(base);
	if (l == inf_d())	/* base = +inf */
		return e > 0 ? inf_d() : 0.0;
	/*
	 * e * l rounds with relative error 2^-53; for |e l| <= 10 (RoPE:
	 * theta <= 1e6, |e| <= 1) that is an absolute error < 1.2e-15 in the
	 * exponent, i.e. the same relative error in the result.
	 */
	return cb_exp(e * l);
}

float cb_expf(float x)
{
	if (x != x)
		return x;
	if (x > 89.0f)		/* e^88.73 > FLT_MAX; (float) overflows below */
		return CB_INFINITY_F;
	if (x < -104.0f)	/* < 2^-150: rounds to +0 */
		return 0.0f;
	return (float)exp_fast(x);
}

float cb_logf(float x)
{
	return (float)cb_log(x);
}

float cb_powf(float base, float e)
{
	return (float)cb_pow(base, e);
}

/*
 * Reduce x to r in [-pi/4, pi/4] (slightly more at the rounding edge) with
 * x = r + q*pi/2; returns q mod 4.  Exact products for |q| < 2^29.
 */
static int reduce_pio2(double x, double *r)
{
	double kd, t;

	if (cb_fabs(x) <= 0.78539816339744828) {
		*r = x;
		return 0;
	}
	t = x * TWO_OVER_PI;
	if (cb_fabs(t) > 0x1p50) {
		/* Far beyond any angle the engine forms: bounded, no claim. */
		*r = 0;
		return 0;
	}
	kd = cb_round_even(t);
	t = x - kd * PIO2_1;
	t -= kd * PIO2_2;
	t -= kd * PIO2_3;
	t -= kd * PIO2_4;
	t -= kd * PIO2_5;
	*r = t;
	return (int)((cb_s64)kd & 3);
}

/*
 * sin r and cos r for |r| <= pi/4 (+tiny): Taylor through r^15 and r^16.
 * Truncation < 0.79^17/17! < 5e-17 and 0.79^18/18! < 3e-18.
 */
static inline double sin_poly(double r)
{
	double z = r * r;
	double p = -1.0 / 1307674368000.0;	/* -1/15! */

	p = p * z + 1.0 / 6227020800.0;		/* 1/13! */
	p = p * z - 1.0 / 39916800.0;		/* 1/11! */
	p = p * z + 1.0 / 362880.0;
	p = p * z - 1.0 / 5040.0;
	p = p * z + 1.0 / 120.0;
	p = p * z - 1.0 / 6.0;
	return r + r * (z * p);
}

static inline double cos_poly(double r)
{
	double z = r * r;
	double p = 1.0 / 20922789888000.0;	/* 1/16! */

	p = p * z - 1.0 / 87178291200.0;	/* 1/14! */
	p = p * z + 1.0 / 479001600.0;		/* 1/12! */
	p = p * z - 1.0 / 3628800.0;
	p = p * z + 1.0 / 40320.0;
	p = p * z - 1.0 / 720.0;
	p = p * z + 1.0 / 24.0;
	p = p * z - 0.5;
	return 1.0 + z * p;
}

/**
 * cb_sincos() - sin x and cos x in double with one argument reduction.
 * @x: the angle in radians; NaN or infinite gives NaN.
 * @s: where sin x goes.
 * @c: where cos x goes.
 */
void cb_sincos(double x, double *s, double *c)
{
	double r, sr, cr;
	int q;

	if (x - x != 0) {		/* NaN or infinity */
		*s = *c = nan_d();
		return;
	}
	if (cb_fabs(x) < 0x1p-27) {	/* keeps sin(-0) = -0; exact below */
		*s = x;
		*c = 1.0;
		return;
	}
	q = reduce_pio2(x, &r);
	sr = sin_poly(r);
	cr = cos_poly(r);
	switch (q) {
	case 0:
		*s = sr;
		*c = cr;
		break;
	case 1:
		*s = cr;
		*c = -sr;
		break;
	case 2:
		*s = -sr;
		*c = -cr;
		break;
	default:
		*s = -cr;
		*c = sr;
		break;
	}
}

double cb_sin(double x)
{
	double s, c;

	cb_sincos(x, &s, &c);
	return s;
}

double cb_cos(double x)
{
	double s, c;

	cb_sincos(x, &s, &c);
	return c;
}

float cb_sinf(float x)
{
	return (float)cb_sin(x);
}

float cb_cosf(float x)
{
	return (float)cb_cos(x);
}

void cb_sincosf(float x, float *s, float *c)
{
	double sd, cd;

	cb_sincos(x, &sd, &cd);
	*s = (float)sd;
	*c = (float)cd;
}

float cb_tanhf(float x)
{
	double d = x, z, e;

	if (x != x)
		return x;
	if (cb_fabs(d) < 0.0078125) {
		/*
		 * Taylor: x - x^3/3 + 2x^5/15 - 17x^7/315; next term
		 * 62x^9/2835 < 1e-21 relative here.  Avoids the cancellation
		 * of the formula below near 0.
		 */
		z = d * d;
		return (float)(d + d * z * (-1.0 / 3 + z * (2.0 / 15 - z * (17.0 / 315))));
	}
	if (d > 10)	/* tanh(10) = 1 - 4e-9 rounds to 1.0f */
		return 1.0f;
	if (d < -10)
		return -1.0f;
	/* |e - 1| >= 0.0157 here, so 1e-13 in e stays < 1e-11 in the result */
	e = exp_fast(2 * d);
	return (float)((e - 1.0) / (e + 1.0));
}

float cb_sigmoidf(float x)
{
	if (x != x)
		return x;
	if (x < -700.0f)	/* e^x underflows every float */
		return 0.0f;
	if (x > 700.0f)
		return 1.0f;
	return (float)(1.0 / (1.0 + exp_fast(-(double)x)));
}

float cb_siluf(float x)
{
	if (x != x)
		return x;
	if (x < -700.0f)	/* x e^x underflows every float */
		return -0.0f;
	if (x > 700.0f)
		return x;
	return (float)((double)x / (1.0 + exp_fast(-(double)x)));
}

/**
 * cb_swiglu() - the SwiGLU activation, in place.
 * @gate: the gate projection; out: silu(gate) * up.
 * @up: the up projection.
 * @n: elements.
 *
 * Element by element (one silu, one product each), so any split of a row
 * gives the same values.
 */
void cb_swiglu(float *gate, const float *up, int n)
{
	int i;

	for (i = 0; i < n; i++)
		gate[i] = cb_siluf(gate[i]) * up[i];
}

/**
 * cb_expf_sub() - a softmax row's exponentials, in place.
 * @x: the scores; out: cb_expf(x[i] - m).
 * @m: the row's maximum (any float).
 * @n: elements.
 *
 * The reference of the variants' expf_sub_f32 (cb_ops.h).
 */
void cb_expf_sub(float *x, float m, int n)
{
	int i;

	for (i = 0; i < n; i++)
		x[i] = cb_expf(x[i] - m);
}

/**
 * cb_swiglu_oss() - GPT-OSS's clamped SwiGLU, in place (cb_ffn_oss.c).
 * @gate: the gate projection; out: (u + 1) * g * sigmoid(alpha * g) with
 *        g = min(gate, limit), u = clamp(up, -limit, limit).
 * @up: the up projection.
 * @n: elements.
 * @lim: the limit (finite, positive).
 * @alpha: the sigmoid's alpha.
 *
 * Element by element, the reference of the variants' swiglu_oss_f32.
 */
void cb_swiglu_oss(float *gate, const float *up, int n, float lim, float alpha)
{
	int i;

	for (i = 0; i < n; i++) {
		float g = gate[i] > lim ? lim : gate[i];
		float u = up[i] > lim ? lim : (up[i] < -lim ? -lim : up[i]);

		gate[i] = (u + 1.0f) * (g * cb_sigmoidf(alpha * g));
	}
}
