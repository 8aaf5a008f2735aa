/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_math.h - the engine's own elementary functions (it has no libm).
 *
 * FPU-side header: only engine objects include it.
 *
 * The float functions evaluate in double precision and round once at the
 * end, so they are correctly rounded except when the exact result lies
 * within ~1e-15 (relative) of a midpoint between two floats: their error is
 * at most 1 ULP, and tests/unit/test_math.c checks that bound against libm
 * (and counts how often the result is not the correctly rounded one, which
 * is a handful of inputs in a million).  The double functions are accurate
 * to a few ULP of double.
 *
 * Domains and special values follow C99 Annex F where it matters to the
 * engine (NaN in, NaN out; exp overflow to +inf, underflow to +0; log(0) =
 * -inf, log(x < 0) = NaN).  Trigonometric functions reduce their argument
 * with a four-part Cody-Waite split of pi/2 in double, exact while
 * |x| <= 2^29 * pi/2 (~8.4e8); beyond that the result is still in [-1, 1]
 * but has no stated accuracy (RoPE angles stay far below).
 */
#ifndef CB_MATH_H
#define CB_MATH_H

#include "core/cb_platform.h"

/* Bit casts. */
static inline cb_u32 cb_f32_bits(float f)
{
	union { float f; cb_u32 u; } v = { .f = f };

	return v.u;
}

static inline float cb_f32_from_bits(cb_u32 u)
{
	union { cb_u32 u; float f; } v = { .u = u };

	return v.f;
}

/*
 * IEEE half to float, exact, without a branch the compiler must keep: a
 * normal half is its bits rebiased; a subnormal (or zero) is m * 2^-24,
 * which is a normal float (computed exactly, whatever the rounding mode
 * or the denormal flags); inf and NaN keep their bits, a NaN quieted with
 * its payload (as F16C's vcvtph2ps).  cb_f16_to_f32() is this.
 */
static inline float cb_half_to_f32(cb_u16 h)
{
	cb_u32 v = h & 0x7fffu, m = h & 0x3ffu, sign = (cb_u32)(h & 0x8000u) << 16;
	cb_u32 normal = (v << 13) + 0x38000000u;
	cb_u32 sub = cb_f32_bits((float)(int)m * 0x1p-24f);
	cb_u32 infnan = 0x7f800000u | m << 13 | (m ? 0x400000u : 0);

	return cb_f32_from_bits(sign | (v < 0x400 ? sub : v >= 0x7c00 ? infnan : normal));
}

/* bfloat16 to float: exact, the top half of the bits */
static inline float cb_bfloat_to_f32(cb_u16 h)
{
	return cb_f32_from_bits((cb_u32)h << 16);
}

static inline cb_u64 cb_f64_bits(double d)
{
	union { double d; cb_u64 u; } v = { .d = d };

	return v.u;
}

static inline double cb_f64_from_bits(cb_u64 u)
{
	union { cb_u64 u; double d; } v = { .u = u };

	return v.d;
}

static inline int cb_isnanf(float x)
{
	return (cb_f32_bits(x) & 0x7fffffffu) > 0x7f800000u;
}

static inline int cb_isinff(float x)
{
	return (cb_f32_bits(x) & 0x7fffffffu) == 0x7f800000u;
}

static inline float cb_fabsf(float x)
{
	return cb_f32_from_bits(cb_f32_bits(x) & 0x7fffffffu);
}

static inline double cb_fabs(double x)
{
	return cb_f64_from_bits(cb_f64_bits(x) & 0x7fffffffffffffffull);
}

#define CB_INFINITY_F (__builtin_inff())
#define CB_NAN_F (__builtin_nanf(""))

/*
 * Square roots: correctly rounded (IEEE sqrt).  __builtin_sqrtf would be
 * lowered to a libm call for negative inputs (errno), so use the instruction
 * directly.  sqrt of a negative number is NaN.
 */
static inline float cb_sqrtf(float x)
{
#if defined(__x86_64__) || defined(__i386__)
	float r;

	__asm__("sqrtss %1, %0" : "=x"(r) : "x"(x));
	return r;
#else
#error "cb_sqrtf: no implementation for this architecture"
#endif
}

static inline double cb_sqrt(double x)
{
#if defined(__x86_64__) || defined(__i386__)
	double r;

	__asm__("sqrtsd %1, %0" : "=x"(r) : "x"(x));
	return r;
#else
#error "cb_sqrt: no implementation for this architecture"
#endif
}

/*
 * Round to the nearest integer, ties to even, as a double (|x| < 2^51).
 * Neither rint nor nearbyint: without SSE4.1 they are libm calls.
 */
static inline double cb_round_even(double x)
{
	const double magic = 6755399441055744.0;	/* 1.5 * 2^52 */

	return (x + magic) - magic;
}

/* Float functions: max error 1 ULP (see above). */
float cb_expf(float x);
float cb_logf(float x);
float cb_sinf(float x);
float cb_cosf(float x);
void cb_sincosf(float x, float *s, float *c);
float cb_tanhf(float x);
float cb_sigmoidf(float x);		/* 1 / (1 + e^-x) */
float cb_siluf(float x);		/* x / (1 + e^-x), rounded once */
/*
 * SwiGLU in place: gate[i] = silu(gate[i]) * up[i], i < n.  The scalar
 * reference of the variants' swiglu_f32 op (cb_ops.h), which match it bit
 * for bit; the engine calls the op.
 */
void cb_swiglu(float *gate, const float *up, int n);
/* x[i] = cb_expf(x[i] - m), i < n: the reference of expf_sub_f32 (softmax rows) */
void cb_expf_sub(float *x, float m, int n);
/* GPT-OSS's clamped SwiGLU (cb_ffn_oss.c), the reference of swiglu_oss_f32 */
void cb_swiglu_oss(float *gate, const float *up, int n, float lim, float alpha);
/*
 * The fast exponential's table and constants (cb_math.c), shared with its
 * vector copies: 2^(j/32) for j < 32, 32 / ln 2 and ln 2 / 32.
 */
extern const double cb_exp2_32[32];
#define CB_INV_LN2_32 (0x1.71547652b82fep+5)
#define CB_LN2_32 (0x1.62e42fefa39efp-6)
/*
 * base^e for base >= 0 (a negative base gives NaN, except that e == 0
 * gives 1): RoPE frequencies theta^(-2i/d).  Computed as exp(e * log(base))
 * in double with both steps accurate to ~1e-16, so even for large |e log b|
 * the float result is within 1 ULP.
 */
float cb_powf(float base, float e);

/* Double functions: relative error a few 1e-16. */
double cb_exp(double x);
double cb_log(double x);
double cb_pow(double base, double e);	/* same domain as cb_powf */
double cb_sin(double x);
double cb_cos(double x);
void cb_sincos(double x, double *s, double *c);

#endif /* CB_MATH_H */
