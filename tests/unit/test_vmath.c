// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_vmath.c - the ISA variants' swiglu_f32, swiglu_oss_f32 and
 * expf_sub_f32 against the scalar cb_swiglu(), cb_swiglu_oss() and
 * cb_expf_sub(), bit for bit (NaN payloads included): every pair of edge
 * values (NaN, +-inf, +-0, subnormals, the +-700, 89 and -104 borders and
 * the floats next to them, huge and tiny),
 * a stride through all 2^32 float bit patterns, millions of random inputs
 * in the ranges that matter, every row length 0..67 at every alignment
 * with guards that must stay untouched.  Variants the CPU (or COLIBRI_ISA)
 * lacks are reported as SKIP.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cb_test.h"
#include "core/cb_engine_priv.h"
#include "ops/cb_math.h"
#include "cb_test_variant.h"

#define CB_TEST_RNG_SEED 0x9b05688c2b3e6c1full
#include "cb_test_rng.h"

/* uniform in [-a, a) */
static float rnd_in(float a)
{
	return (float)(((double)(rnd64() >> 11) * 0x1p-53 * 2.0 - 1.0) * a);
}

static float bits_f(uint32_t u)
{
	return cb_f32_from_bits(u);
}

#define N_EDGE 80
static float edges[N_EDGE];
static int n_edges;

static void add_edge(float x)
{
	if (n_edges < N_EDGE)
		edges[n_edges++] = x;
}

/* x and the floats on either side of it */
static void add_around(float x)
{
	add_edge(nextafterf(x, -INFINITY));
	add_edge(x);
	add_edge(nextafterf(x, INFINITY));
}

static void make_edges(void)
{
	static const float borders[] = { 700.0f, -700.0f, 89.0f, -89.0f, -104.0f, 104.0f,
					 88.72f, -87.33f, 7.0f, -7.0f, 1.0f, -1.0f };
	unsigned int i;

	n_edges = 0;
	add_edge(bits_f(0x7fc00000u));		/* quiet NaN */
	add_edge(bits_f(0xffc00001u));		/* negative quiet NaN, payload */
	add_edge(bits_f(0x7f800001u));		/* signaling NaN */
	add_edge(bits_f(0x7fa5a5a5u));		/* signaling NaN, payload */
	add_edge(INFINITY);
	add_edge(-INFINITY);
	add_edge(0.0f);
	add_edge(-0.0f);
	add_edge(bits_f(1));			/* smallest subnormal */
	add_edge(bits_f(0x80000001u));
	add_edge(bits_f(0x007fffffu));		/* largest subnormal */
	add_edge(bits_f(0x807fffffu));
	add_edge(0x1p-126f);
	add_edge(-0x1p-126f);
	add_edge(1e-30f);
	add_edge(-1e-30f);
	add_edge(1e30f);
	add_edge(-1e30f);
	add_edge(0x1.fffffep127f);		/* FLT_MAX */
	add_edge(-0x1.fffffep127f);
	for (i = 0; i < CB_ARRAY_SIZE(borders); i++)
		add_around(borders[i]);
	add_edge(0.5f);
	add_edge(-0.5f);
	add_edge(1e-8f);
	add_edge(-3.0f);
}

/* one swiglu_f32 or swiglu_oss_f32 call on buf + off (cb_vs_op) */
struct sw_call {
	int oss, off, n;
	const float *up;
	float lim, alpha;
};

static void sw_op(const struct cb_isa_ops *ops, float *buf, const void *arg)
{
	const struct sw_call *c = arg;

	if (c->oss)
		ops->swiglu_oss_f32(buf + c->off, c->up, c->n, c->lim, c->alpha);
	else
		ops->swiglu_f32(buf + c->off, c->up, c->n);
}

/*
 * gate/up of n elements through the variant and through the scalar
 * reference; counts the elements whose bits differ (the first one, with
 * its inputs, fails the test).
 */
static long compare_rows(const struct cb_isa_ops *ops, int oss, const float *g, const float *u,
			 int n, float lim, float alpha)
{
	struct sw_call c = { .oss = oss, .n = n, .up = u, .lim = lim, .alpha = alpha };
	long first, bad;

	bad = cb_vs_scalar(ops, oss ? "swiglu_oss" : "swiglu", sw_op, g, n, &c, &first);
	if (bad)
		CB_CHECK(0, "%s: %ld differ, the first at gate %a (0x%08x) up %a, lim %a",
			 cb_isa_names[ops->level], bad, g[first], cb_f32_bits(g[first]), u[first], lim);
	return bad;
}

/* every (gate, up) pair of edge values, gate and up swapped too */
static void run_edges(int level, int oss)
{
	const struct cb_isa_ops *ops = cb_test_variant(level);
	float *g, *u;
	int i, j, n;

	if (!ops)
		return;
	make_edges();
	n = n_edges * n_edges;
	g = malloc(sizeof(float) * (size_t)n);
	u = malloc(sizeof(float) * (size_t)n);
	for (i = 0; i < n_edges; i++)
		for (j = 0; j < n_edges; j++) {
			g[i * n_edges + j] = edges[i];
			u[i * n_edges + j] = edges[j];
		}
	compare_rows(ops, oss, g, u, n, 7.0f, 1.702f);
	/* odd limits: around the edges themselves */
	for (i = 0; i < n_edges; i++) {
		float lim = fabsf(edges[i]);

		if (lim > 0 && lim < INFINITY)
			compare_rows(ops, 1, g, u, n, lim, 1.702f);
	}
	free(g);
	free(u);
}

/*
 * Every 61st float bit pattern as the gate (70 million of them cover
 * every exponent and sign), with random up values; then random gates in
 * the ranges where silu is neither 0 nor x: [-110, 110], [-20, 20],
 * [-800, 800], and random bit patterns.
 */
static void run_random(int level, int oss)
{
	const struct cb_isa_ops *ops = cb_test_variant(level);
	const int n = 1 << 16;
	float *g, *u;
	uint64_t p = 0;
	long bad = 0, total = 0;
	int i, r;

	if (!ops)
		return;
	g = malloc(sizeof(float) * n);
	u = malloc(sizeof(float) * n);
	while (p < (1ull << 32)) {
		for (i = 0; i < n && p < (1ull << 32); i++, p += 61) {
			g[i] = bits_f((uint32_t)p);
			u[i] = rnd_in(4.0f);
		}
		bad += compare_rows(ops, oss, g, u, i, 7.0f, 1.702f);
		total += i;
	}
	for (r = 0; r < 64; r++) {
		static const float range[] = { 110.0f, 20.0f, 800.0f, 10.0f };
		float a = range[r & 3];

		for (i = 0; i < n; i++) {
			g[i] = r % 5 == 4 ? bits_f((uint32_t)rnd64()) : rnd_in(a);
			u[i] = r % 7 == 6 ? bits_f((uint32_t)rnd64()) : rnd_in(10.0f);
		}
		bad += compare_rows(ops, oss, g, u, n, oss && (r & 1) ? 1.5f : 7.0f, 1.702f);
		total += n;
	}
	CB_CHECK(bad == 0, "%s: %ld of %ld elements differ", cb_isa_names[ops->level], bad, total);
	printf("# %s %s: %ld elements compared, %ld differ\n", cb_isa_names[ops->level],
	       oss ? "swiglu_oss" : "swiglu", total, bad);
	free(g);
	free(u);
}

/*
 * The floats around a row.  Every op changes this one (silu: 12345 times
 * a random up, oss: the limit, exp: inf); a NaN guard would come back
 * with its own bits and hide a write past the row.
 */
#define GUARD 12345.0f

/*
 * Row lengths 0..67 at every float offset 0..15 of gate and up: the
 * results equal the scalar's and the floats around the row are untouched.
 */
static void run_tails(int level, int oss)
{
	const struct cb_isa_ops *ops = cb_test_variant(level);
	struct sw_call c = { .oss = oss, .lim = 7.0f, .alpha = 1.702f };
	float gbuf[67 + 32], ubuf[67 + 32], src[67];
	int n, og, ou, i;

	if (!ops)
		return;
	make_edges();
	for (i = 0; i < 67; i++)
		src[i] = i % 9 == 8 ? edges[(i / 9) % n_edges] : rnd_in(30.0f);
	for (n = 0; n <= 67; n++)
		for (og = 0; og < 16; og++)
			for (ou = 0; ou < 16; ou += 3) {
				for (i = 0; i < 67 + 32; i++) {
					gbuf[i] = GUARD;
					ubuf[i] = rnd_in(3.0f);
				}
				memcpy(gbuf + og, src, sizeof(float) * (size_t)n);
				c.off = og;
				c.n = n;
				c.up = ubuf + ou;
				CB_CHECK(!cb_vs_scalar(ops, "tails", sw_op, gbuf,
						       CB_ARRAY_SIZE(gbuf), &c, NULL),
					 "%s: n %d, gate offset %d, up offset %d differ", cb_isa_names[ops->level],
					 n, og, ou);
			}
}

/*
 * expf_sub_f32 against cb_expf_sub(), bit for bit: every edge value minus
 * every edge value as m, every 61st float bit pattern with m = 0 and with
 * random m, random scores below random maxima as softmax forms them, and
 * row lengths 0..67 at 16 offsets with guards.
 */
struct exp_call {
	int off, n;
	float m;
};

static void exp_op(const struct cb_isa_ops *ops, float *buf, const void *arg)
{
	const struct exp_call *c = arg;

	ops->expf_sub_f32(buf + c->off, c->m, c->n);
}

static long compare_exp(const struct cb_isa_ops *ops, const float *x, int n, float m)
{
	struct exp_call c = { .n = n, .m = m };
	long first, bad;

	bad = cb_vs_scalar(ops, "expf_sub", exp_op, x, n, &c, &first);
	if (bad)
		CB_CHECK(0, "%s expf_sub: %ld differ, the first at x %a (0x%08x) m %a", cb_isa_names[ops->level],
			 bad, x[first], cb_f32_bits(x[first]), m);
	return bad;
}

static void run_exp(int level)
{
	const struct cb_isa_ops *ops = cb_test_variant(level);
	const int n = 1 << 16;
	float buf[67 + 32], src[67];
	struct exp_call c = { .m = 3.0f };
	float *x;
	uint64_t p = 0;
	long bad = 0, total = 0;
	int i, r, o;

	if (!ops)
		return;
	make_edges();
	for (i = 0; i < n_edges; i++)
		bad += compare_exp(ops, edges, n_edges, edges[i]);
	x = malloc(sizeof(float) * n);
	for (r = 0; p < (1ull << 32); r++) {
		float m = r & 1 ? rnd_in(50.0f) : 0.0f;

		for (i = 0; i < n && p < (1ull << 32); i++, p += 61)
			x[i] = bits_f((uint32_t)p);
		bad += compare_exp(ops, x, i, m);
		total += i;
	}
	for (r = 0; r < 64; r++) {
		float m = rnd_in(100.0f);

		for (i = 0; i < n; i++)
			x[i] = m - fabsf(rnd_in(r & 1 ? 120.0f : 12.0f));
		bad += compare_exp(ops, x, n, m);
		total += n;
	}
	free(x);
	CB_CHECK(bad == 0, "%s: %ld of %ld elements differ", cb_isa_names[ops->level], bad, total);
	printf("# %s expf_sub: %ld elements compared, %ld differ\n", cb_isa_names[ops->level], total, bad);
	for (i = 0; i < 67; i++)
		src[i] = i % 9 == 8 ? edges[(i / 9) % n_edges] : rnd_in(30.0f);
	for (r = 0; r <= 67; r++)
		for (o = 0; o < 16; o++) {
			for (i = 0; i < 67 + 32; i++)
				buf[i] = GUARD;
			memcpy(buf + o, src, sizeof(float) * (size_t)r);
			c.off = o;
			c.n = r;
			CB_CHECK(!cb_vs_scalar(ops, "expf tails", exp_op, buf, CB_ARRAY_SIZE(buf),
					       &c, NULL),
				 "%s: expf_sub n %d offset %d differ", cb_isa_names[ops->level], r, o);
		}
}

/* The engine's tables: every variant has both ops, scalar's are the references. */
static void test_ops_present(void)
{
	int level;

	CB_CHECK(cb_isa_scalar.swiglu_f32 == cb_swiglu, "scalar swiglu is the reference");
	CB_CHECK(cb_isa_scalar.swiglu_oss_f32 == cb_swiglu_oss, "scalar oss is the reference");
	CB_CHECK(cb_isa_scalar.expf_sub_f32 == cb_expf_sub, "scalar expf_sub is the reference");
	for (level = 0; level < CB_ISA__COUNT; level++) {
		const struct cb_isa_ops *ops = cb_isa_get(level);

		if (ops)
			CB_CHECK(ops->swiglu_f32 && ops->swiglu_oss_f32 && ops->expf_sub_f32,
				 "%s lacks an op", cb_isa_names[ops->level]);
	}
}

static void swiglu_edges(int level) { run_edges(level, 0); }
static void swiglu_random(int level) { run_random(level, 0); }
static void swiglu_tails(int level) { run_tails(level, 0); }
static void swiglu_oss_edges(int level) { run_edges(level, 1); }
static void swiglu_oss_random(int level) { run_random(level, 1); }
static void swiglu_oss_tails(int level) { run_tails(level, 1); }

static const struct cb_variant_test variant_tests[] = {
	{ "swiglu_edges", swiglu_edges },
	{ "swiglu_random", swiglu_random },
	{ "swiglu_tails", swiglu_tails },
	{ "swiglu_oss_edges", swiglu_oss_edges },
	{ "swiglu_oss_random", swiglu_oss_random },
	{ "swiglu_oss_tails", swiglu_oss_tails },
	{ "expf_sub", run_exp },
};

int main(void)
{
	CB_RUN(test_ops_present);
	cb_run_variants(variant_tests, (int)CB_ARRAY_SIZE(variant_tests));
	return cb_test_done();
}
