// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_math.c - the engine's own exp/log/pow/sin/cos/tanh/sqrt against libm.
 *
 * Reference for a float function f: libm's double f on the same input,
 * rounded to float.  glibc's double functions are accurate to well under
 * 1 ULP of double, so the reference is the correctly rounded float except
 * within ~1e-16 of a midpoint, where ours may pick the other neighbour too:
 * the bound asserted is 1 ULP (the one cb_math.h states), and the number of
 * results that differ from the reference at all is printed.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cb_test.h"
#include "ops/cb_math.h"

#define CB_TEST_RNG_SEED 0x9e3779b97f4a7c15ull
#include "cb_test_rng.h"

static double rnd_unit(void)
{
	return (rnd64() >> 11) * 0x1p-53;
}

static float rnd_range(double lo, double hi)
{
	return (float)(lo + (hi - lo) * rnd_unit());
}

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

/* Distance in representable floats (NaN vs NaN = 0, NaN vs number = huge). */
static int64_t ulp_dist(float a, float b)
{
	int64_t ia, ib;

	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b) ? 0 : INT64_MAX;
	ia = (int32_t)f_bits(a);
	ib = (int32_t)f_bits(b);
	if (ia < 0)
		ia = (int64_t)INT32_MIN - ia;
	if (ib < 0)
		ib = (int64_t)INT32_MIN - ib;
	return ia > ib ? ia - ib : ib - ia;
}

struct ulp_stat {
	const char *name;
	int64_t max_ulp;
	float worst_x;
	long n, inexact;
};

static void ulp_record(struct ulp_stat *s, float x, float got, float want)
{
	int64_t d = ulp_dist(got, want);

	s->n++;
	if (d)
		s->inexact++;
	if (d > s->max_ulp) {
		s->max_ulp = d;
		s->worst_x = x;
	}
}

static void ulp_report(struct ulp_stat *s, int64_t bound)
{
	printf("# %s: %ld inputs, max %lld ULP (at %a), %ld differ from libm\n",
	       s->name, s->n, (long long)s->max_ulp, s->worst_x, s->inexact);
	CB_CHECK(s->max_ulp <= bound, "%s: %lld ULP at x=%a (bound %lld)", s->name,
		 (long long)s->max_ulp, s->worst_x, (long long)bound);
}

typedef float (*f1_fn)(float);
typedef double (*d1_fn)(double);

/* Random inputs from [lo, hi] and the edge list, against (float)ref(x). */
static void check_f1(const char *name, f1_fn f, d1_fn ref, double lo, double hi,
		     long n, const float *edges, int nedges)
{
	struct ulp_stat s = { name, 0, 0, 0, 0 };
	long i;

	for (i = 0; i < n; i++) {
		float x = rnd_range(lo, hi);

		ulp_record(&s, x, f(x), (float)ref(x));
	}
	for (i = 0; i < nedges; i++)
		ulp_record(&s, edges[i], f(edges[i]), (float)ref(edges[i]));
	ulp_report(&s, 1);
}

/* Random bit patterns (every exponent), against (float)ref(x). */
static void check_f1_bits(const char *name, f1_fn f, d1_fn ref, long n)
{
	struct ulp_stat s = { name, 0, 0, 0, 0 };
	long i;

	for (i = 0; i < n; i++) {
		float x = bits_f((uint32_t)rnd64());

		ulp_record(&s, x, f(x), (float)ref(x));
	}
	ulp_report(&s, 1);
}

static const float special[] = {
	0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1.0f, -1.0f, 0x1p-149f,
	-0x1p-149f, 0x1p-126f, 0.5f, 2.0f, 0x1.fffffep127f, -0x1.fffffep127f,
};
/* sin and cos state no accuracy for the two huge values at the end */
#define NSPECIAL_TRIG (CB_ARRAY_SIZE(special) - 2)

static void test_expf(void)
{
	static const float edges[] = {
		88.72283f, 88.72284f, 88.7f, 89.0f, -87.33654f, -87.3f, -103.97207f,
		-103.9721f, -104.0f, -150.0f, 0x1p-30f, -0x1p-30f, 1e-7f, 0.34657359f,
		-0.34657359f, 0.6931472f,
	};

	check_f1("expf [-104,89]", cb_expf, exp, -104, 89, 1000000, edges,
		 CB_ARRAY_SIZE(edges));
	check_f1("expf [-1,1]", cb_expf, exp, -1, 1, 300000, special,
		 CB_ARRAY_SIZE(special));
	check_f1_bits("expf any bits", cb_expf, exp, 300000);
	CB_CHECK(cb_expf(INFINITY) == INFINITY, "exp(inf)");
	CB_CHECK(cb_expf(-INFINITY) == 0.0f, "exp(-inf)");
	CB_CHECK(isnan(cb_expf(NAN)), "exp(nan)");
	CB_CHECK(cb_expf(89.0f) == INFINITY, "exp(89) overflows");
	CB_CHECK(cb_expf(0.0f) == 1.0f, "exp(0)");
}

static void test_logf(void)
{
	static const float edges[] = {
		0x1p-149f, 0x1.fffffcp-127f, 0x1p-126f, 1.0f, 0x1.000002p+0f,
		0x1.fffffep-1f, 2.0f, 0.70710677f, 1.4142135f, 0x1.fffffep127f,
	};

	check_f1("logf (0,4]", cb_logf, log, 1e-30, 4, 500000, edges,
		 CB_ARRAY_SIZE(edges));
	check_f1("logf near 1", cb_logf, log, 0.99, 1.01, 300000, special,
		 CB_ARRAY_SIZE(special));
	check_f1_bits("logf any bits", cb_logf, log, 500000);
	CB_CHECK(cb_logf(0.0f) == -INFINITY, "log(0)");
	CB_CHECK(cb_logf(-0.0f) == -INFINITY, "log(-0)");
	CB_CHECK(isnan(cb_logf(-1.0f)), "log(-1)");
	CB_CHECK(cb_logf(INFINITY) == INFINITY, "log(inf)");
	CB_CHECK(cb_logf(1.0f) == 0.0f, "log(1)");
}

/* Floats nearest to multiples of pi/2 (worst cancellation) up to k. */
static void check_trig_near_multiples(const char *name, f1_fn f, d1_fn ref,
				      long kmax)
{
	struct ulp_stat s = { name, 0, 0, 0, 0 };
	long k;
	int j;

	for (k = 1; k <= kmax; k = k < 5000 ? k + 1 : k + 1 + k / 3000) {
		float c = (float)(k * M_PI_2);

		for (j = -2; j <= 2; j++) {
			float x = bits_f(f_bits(c) + j);

			ulp_record(&s, x, f(x), (float)ref(x));
			ulp_record(&s, -x, f(-x), (float)ref(-x));
		}
	}
	ulp_report(&s, 1);
}

static void test_sinf(void)
{
	check_f1("sinf [-pi,pi]", cb_sinf, sin, -M_PI, M_PI, 300000, special,
		 NSPECIAL_TRIG);
	check_f1("sinf [-4e4,4e4]", cb_sinf, sin, -4e4, 4e4, 500000, NULL, 0);
	check_f1("sinf [-1.6e6,1.6e6]", cb_sinf, sin, -1.6e6, 1.6e6, 300000, NULL, 0);
	check_f1("sinf [-8e8,8e8]", cb_sinf, sin, -8e8, 8e8, 200000, NULL, 0);
	check_trig_near_multiples("sinf near k*pi/2", cb_sinf, sin, 4000000);
	CB_CHECK(isnan(cb_sinf(INFINITY)) && isnan(cb_sinf(NAN)), "sin(inf/nan)");
	CB_CHECK(f_bits(cb_sinf(-0.0f)) == 0x80000000u, "sin(-0) = -0");
	CB_CHECK(cb_sinf(0x1p-140f) == 0x1p-140f, "sin(tiny) = tiny");
	CB_CHECK(cb_fabsf(cb_sinf(3e38f)) <= 1.0f, "sin(huge) bounded");
}

static void test_cosf(void)
{
	check_f1("cosf [-pi,pi]", cb_cosf, cos, -M_PI, M_PI, 300000, special,
		 NSPECIAL_TRIG);
	check_f1("cosf [-4e4,4e4]", cb_cosf, cos, -4e4, 4e4, 500000, NULL, 0);
	check_f1("cosf [-1.6e6,1.6e6]", cb_cosf, cos, -1.6e6, 1.6e6, 300000, NULL, 0);
	check_f1("cosf [-8e8,8e8]", cb_cosf, cos, -8e8, 8e8, 200000, NULL, 0);
	check_trig_near_multiples("cosf near k*pi/2", cb_cosf, cos, 4000000);
	CB_CHECK(isnan(cb_cosf(-INFINITY)) && isnan(cb_cosf(NAN)), "cos(inf/nan)");
	CB_CHECK(cb_cosf(0x1p-140f) == 1.0f, "cos(tiny) = 1");
}

/* sincosf agrees bit for bit with sinf and cosf. */
static void test_sincosf_matches(void)
{
	int i, bad = 0;

	for (i = 0; i < 100000; i++) {
		float x = rnd_range(-1e5, 1e5), s, c;

		cb_sincosf(x, &s, &c);
		if (f_bits(s) != f_bits(cb_sinf(x)) || f_bits(c) != f_bits(cb_cosf(x)))
			bad++;
	}
	CB_CHECK(bad == 0, "%d sincosf mismatches", bad);
}

/* The double versions: relative error vs libm's double, a few 1e-16. */
static void test_double_functions(void)
{
	double worst_exp = 0, worst_log = 0, worst_sin = 0, worst_pow = 0;
	int i;

	for (i = 0; i < 200000; i++) {
		double x = -700 + 1400 * rnd_unit();
		double y = exp(-700 + 1400 * rnd_unit());
		double a = -1e5 + 2e5 * rnd_unit();
		double b = 1 + 1e6 * rnd_unit(), e = -1 + 2 * rnd_unit();
		double r;

		r = fabs(cb_exp(x) - exp(x)) / exp(x);
		worst_exp = r > worst_exp ? r : worst_exp;
		r = fabs(cb_log(y) - log(y)) / fmax(fabs(log(y)), 1e-300);
		worst_log = r > worst_log ? r : worst_log;
		/* absolute for sin/cos: near zeros relative error is meaningless */
		r = fmax(fabs(cb_sin(a) - sin(a)), fabs(cb_cos(a) - cos(a)));
		worst_sin = r > worst_sin ? r : worst_sin;
		r = fabs(cb_pow(b, e) - pow(b, e)) / pow(b, e);
		worst_pow = r > worst_pow ? r : worst_pow;
	}
	printf("# double: exp rel %.2g, log rel %.2g, sin/cos abs %.2g, pow rel %.2g\n",
	       worst_exp, worst_log, worst_sin, worst_pow);
	CB_CHECK(worst_exp < 1e-15, "cb_exp rel error %g", worst_exp);
	CB_CHECK(worst_log < 1e-15, "cb_log rel error %g", worst_log);
	CB_CHECK(worst_sin < 1e-15, "cb_sin/cos abs error %g", worst_sin);
	CB_CHECK(worst_pow < 2e-15, "cb_pow rel error %g", worst_pow);
	CB_CHECK(cb_exp(710) == INFINITY && cb_exp(-746) == 0, "exp range");
	CB_CHECK(fabs(cb_exp(-744) - exp(-744)) <= 0x1p-1074, "exp subnormal");
	CB_CHECK(cb_log(0x1p-1074) == log(0x1p-1074), "log of the least subnormal");
}


/* RoPE: theta^(-2i/d) for the thetas and head sizes models use. */
static void test_powf_rope(void)
{
	static const float thetas[] = { 10000.0f, 500000.0f, 1000000.0f, 1e4f * 8,
					75000000.0f, 2.0f, 1.5f };
	static const int dims[] = { 32, 64, 80, 96, 128, 256 };
	struct ulp_stat s = { "powf rope", 0, 0, 0, 0 };
	unsigned t, d;
	int i;

	for (t = 0; t < CB_ARRAY_SIZE(thetas); t++) {
		for (d = 0; d < CB_ARRAY_SIZE(dims); d++) {
			for (i = 0; i < dims[d] / 2; i++) {
				float e = -(float)(2 * i) / (float)dims[d];

				ulp_record(&s, e, cb_powf(thetas[t], e),
					   (float)pow(thetas[t], e));
			}
		}
	}
	ulp_report(&s, 1);
	CB_CHECK(s.inexact == 0, "%ld RoPE frequencies not correctly rounded",
		 s.inexact);
}

static void test_powf_random(void)
{
	struct ulp_stat s = { "powf random", 0, 0, 0, 0 };
	int i;

	for (i = 0; i < 300000; i++) {
		float b = (float)exp(-20 + 40 * rnd_unit());
		float e = rnd_range(-4, 4);

		ulp_record(&s, b, cb_powf(b, e), (float)pow(b, e));
	}
	ulp_report(&s, 1);
	CB_CHECK(cb_powf(0.0f, 2.0f) == 0.0f && cb_powf(0.0f, -1.0f) == INFINITY,
		 "pow(0, y)");
	CB_CHECK(cb_powf(5.0f, 0.0f) == 1.0f && cb_powf(1.0f, 1e30f) == 1.0f,
		 "pow(x, 0), pow(1, y)");
	CB_CHECK(isnan(cb_powf(-2.0f, 0.5f)), "pow(negative, y) is NaN");
	CB_CHECK(cb_powf(INFINITY, 1.0f) == INFINITY && cb_powf(INFINITY, -1.0f) == 0,
		 "pow(inf, y)");
	CB_CHECK(cb_powf(2.0f, 10.0f) == 1024.0f, "pow(2, 10) exact");
}

static double sigmoid_ref(double x)
{
	return 1.0 / (1.0 + exp(-x));
}

static double silu_ref(double x)
{
	return x / (1.0 + exp(-x));
}

static void test_tanh_sigmoid_silu(void)
{
	check_f1("tanhf [-12,12]", cb_tanhf, tanh, -12, 12, 300000, special,
		 CB_ARRAY_SIZE(special));
	check_f1("tanhf [-0.01,0.01]", cb_tanhf, tanh, -0.01, 0.01, 100000, NULL, 0);
	check_f1_bits("tanhf any bits", cb_tanhf, tanh, 200000);
	check_f1("sigmoidf [-110,110]", cb_sigmoidf, sigmoid_ref, -110, 110, 300000,
		 special, CB_ARRAY_SIZE(special));
	check_f1("siluf [-110,110]", cb_siluf, silu_ref, -110, 110, 300000, NULL, 0);
	check_f1("siluf [-8,8]", cb_siluf, silu_ref, -8, 8, 300000, NULL, 0);
	check_f1("sigmoidf [-800,800]", cb_sigmoidf, sigmoid_ref, -800, 800, 100000,
		 NULL, 0);
	check_f1("siluf [-800,800]", cb_siluf, silu_ref, -800, 800, 100000, NULL, 0);
	CB_CHECK(cb_siluf(-INFINITY) == 0.0f && cb_siluf(INFINITY) == INFINITY &&
		 cb_sigmoidf(-INFINITY) == 0.0f && cb_sigmoidf(INFINITY) == 1.0f &&
		 isnan(cb_siluf(NAN)) && isnan(cb_sigmoidf(NAN)), "silu/sigmoid edges");
}

/* sqrt is the IEEE operation: bit-exact, including NaN for negatives. */
static void test_sqrtf(void)
{
	long i, bad = 0;

	for (i = 0; i < 2000000; i++) {
		float x = bits_f((uint32_t)rnd64() & 0x7fffffffu);

		if (i < 64)
			x = bits_f((uint32_t)i);	/* smallest subnormals */
		if (isnan(x))
			continue;
		if (f_bits(cb_sqrtf(x)) != f_bits((float)sqrt((double)x)))
			bad++;
	}
	CB_CHECK(bad == 0, "%ld sqrtf results differ from IEEE sqrt", bad);
	CB_CHECK(isnan(cb_sqrtf(-1.0f)), "sqrt(-1)");
	CB_CHECK(f_bits(cb_sqrtf(-0.0f)) == 0x80000000u, "sqrt(-0) = -0");
	CB_CHECK(cb_sqrtf(INFINITY) == INFINITY, "sqrt(inf)");
	CB_CHECK(cb_sqrt(2.0) == sqrt(2.0), "double sqrt");
}

static void test_round_even(void)
{
	CB_CHECK(cb_round_even(2.5) == 2.0 && cb_round_even(3.5) == 4.0 &&
		 cb_round_even(-2.5) == -2.0 && cb_round_even(-0.4) == 0.0 &&
		 cb_round_even(1e15 + 0.5) == 1e15, "round half even");
}

int main(void)
{
	CB_RUN(test_expf);
	CB_RUN(test_logf);
	CB_RUN(test_sinf);
	CB_RUN(test_cosf);
	CB_RUN(test_sincosf_matches);
	CB_RUN(test_double_functions);
	CB_RUN(test_powf_rope);
	CB_RUN(test_powf_random);
	CB_RUN(test_tanh_sigmoid_silu);
	CB_RUN(test_sqrtf);
	CB_RUN(test_round_even);
	return cb_test_done();
}
