/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_vmath_x86_tmpl.h - SwiGLU, GPT-OSS's clamped SwiGLU and the softmax
 * rows' exponentials on vectors of doubles, written once, instantiated by
 * cb_vmath_avx2.c (4 doubles, 8 floats) and cb_vmath_avx512.c (8 doubles,
 * 16 floats): the variants' swiglu_f32, swiglu_oss_f32 and expf_sub_f32
 * (cb_ops.h), bit for bit cb_swiglu(), cb_swiglu_oss() and cb_expf_sub()
 * (cb_math.c) for every input.
 *
 * Not a normal header: the including file defines these first.
 *
 *   PFX(name)            the exported names (cb_swiglu_avx2, ...)
 *   VD                   double vector; VI the integer vector of its width
 *   VD_SET1(x), VD_ADD, VD_SUB, VD_MUL, VD_DIV   one rounding each
 *   VD_NEG(x)            x with its sign bits flipped
 *   VD_AS_VI(x), VI_AS_VD(x)  bit casts
 *   VI_SET1_64(x), VI_AND, VI_ADD_64, VI_SRLI_64(v, n), VI_SLLI_64(v, n)
 *   VD_GATHER(tab, j)    tab[j] of a double table, per 64-bit lane of j
 *   VF, VF_N             float vector (twice VD's lanes) and its lanes
 *   VF_SET1(x), VF_ZERO(), VF_ADD, VF_SUB, VF_MUL, VF_MIN, VF_MAX
 *                        VF_MIN(a, b) is a < b ? a : b (x86 minps), VF_MAX alike
 *   VF_LOADU(p), VF_STOREU(p, v)
 *   VD_LO(x), VD_HI(x)   the low / high half of VF x converted to doubles
 *   VF_JOIN(lo, hi)      VF of the VDs lo and hi, each rounded to float
 *   VM                   a lane mask of VF
 *   VF_CMP(a, b, pred)   VM of a pred b (_CMP_*)
 *   VM_OR(a, b)
 *   VF_BLEND(m, a, b)    m ? b : a, per lane
 *   VT, VT_MAKE(n)       a tail mask: lanes < n set (0 < n < VF_N)
 *   VF_LOAD_T(p, t)      lanes of t loaded from p, the others 0
 *   VF_STORE_T(p, t, v)  lanes of t stored to p, the others untouched
 *
 * The scalar silu is x / (1 + exp_fast(-x)) in double, rounded to float
 * once; cb_expf is exp_fast rounded to float.  exp_fast is a fixed
 * sequence of IEEE double operations (a round-to-even by the 1.5 * 2^52
 * trick, multiplies and adds, a 32-entry table, an integer add to the
 * exponent field); each lane here does the same operations in the same
 * order, so each rounds the same way.  The integer k of the scalar is the
 * low bits of t = x * 32/ln2 + 1.5 * 2^52 (|k| < 2^15 for |x| <= 700):
 * k & 31 is the table index, and (k >> 5) << 52 keeps only k's bits
 * 5..16, which a logical shift of t's bits gives as well.  The scalar's
 * range checks (NaN, < -700, > 700; cb_expf's > 89, < -104) are blends on
 * the float input; lanes outside the range compute garbage (the table
 * index is masked, so the gather stays in the table) that the blends
 * discard.
 *
 * No FMA: GCC sees the intrinsics' mul and add as plain vector * and +,
 * and with -mfma under its default -ffp-contract=fast it would fuse each
 * multiply with the add after it into an FMA that rounds once: other
 * doubles, and now and then (when the double lies next to a float
 * rounding boundary) other float bits, too rarely for random tests to
 * see.  The engine is built with -ffp-contract=off (Kbuild, Makefile,
 * tests/accel/Kbuild), and besides every product that an add or subtract
 * consumes goes through mul_nf(), which the compiler cannot fuse whatever
 * the flags (the objects have no vfmadd: docs/performance.md (r)).
 *
 * Tails (n not a multiple of VF_N) go through the same vector code with
 * masked loads and stores.
 */

/*
 * A product the compiler cannot fuse with the add that follows it (see
 * above): the empty asm makes it opaque, at no cost.
 */
static inline VD mul_nf(VD a, VD b)
{
	VD v = VD_MUL(a, b);

	__asm__("" : "+v"(v));
	return v;
}

/* exp_fast (cb_math.c) of a VD, op for op */
static inline VD exp_fast_v(VD x)
{
	const VD magic = VD_SET1(6755399441055744.0);	/* 1.5 * 2^52 */
	VD t = VD_ADD(mul_nf(x, VD_SET1(CB_INV_LN2_32)), magic);
	VD kd = VD_SUB(t, magic);
	VD r = VD_SUB(x, mul_nf(kd, VD_SET1(CB_LN2_32)));
	VI tb = VD_AS_VI(t);
	VI j = VI_AND(tb, VI_SET1_64(31));
	VI e = VI_SLLI_64(VI_SRLI_64(tb, 5), 52);
	VD s = VD_GATHER(cb_exp2_32, j);
	VD p;

	s = VI_AS_VD(VI_ADD_64(VD_AS_VI(s), e));
	p = VD_ADD(mul_nf(r, VD_SET1(1.0 / 120)), VD_SET1(1.0 / 24));
	p = VD_ADD(mul_nf(p, r), VD_SET1(1.0 / 6));
	p = VD_ADD(mul_nf(p, r), VD_SET1(0.5));
	p = VD_ADD(mul_nf(p, r), VD_SET1(1.0));
	p = VD_ADD(mul_nf(p, r), VD_SET1(1.0));
	return mul_nf(s, p);	/* 1 + s p follows: not fused either */
}

/* 1 + e^-x of floats widened to double */
static inline VD one_plus_exp_neg_v(VD x)
{
	return VD_ADD(VD_SET1(1.0), exp_fast_v(VD_NEG(x)));
}

/* cb_siluf() per lane */
static inline VF silu_v(VF x)
{
	VD lo = VD_LO(x), hi = VD_HI(x);
	VF v = VF_JOIN(VD_DIV(lo, one_plus_exp_neg_v(lo)), VD_DIV(hi, one_plus_exp_neg_v(hi)));
	VM keep = VM_OR(VF_CMP(x, x, _CMP_UNORD_Q), VF_CMP(x, VF_SET1(700.0f), _CMP_GT_OQ));

	v = VF_BLEND(VF_CMP(x, VF_SET1(-700.0f), _CMP_LT_OQ), v, VF_SET1(-0.0f));
	return VF_BLEND(keep, v, x);
}

/* cb_sigmoidf() per lane */
static inline VF sigmoid_v(VF x)
{
	const VD one = VD_SET1(1.0);
	VD lo = VD_LO(x), hi = VD_HI(x);
	VF v = VF_JOIN(VD_DIV(one, one_plus_exp_neg_v(lo)), VD_DIV(one, one_plus_exp_neg_v(hi)));

	v = VF_BLEND(VF_CMP(x, VF_SET1(-700.0f), _CMP_LT_OQ), v, VF_ZERO());
	v = VF_BLEND(VF_CMP(x, VF_SET1(700.0f), _CMP_GT_OQ), v, VF_SET1(1.0f));
	return VF_BLEND(VF_CMP(x, x, _CMP_UNORD_Q), v, x);
}

/* cb_expf() per lane */
static inline VF expf_v(VF x)
{
	VD lo = VD_LO(x), hi = VD_HI(x);
	VF v = VF_JOIN(exp_fast_v(lo), exp_fast_v(hi));

	v = VF_BLEND(VF_CMP(x, VF_SET1(89.0f), _CMP_GT_OQ), v, VF_SET1(__builtin_inff()));
	v = VF_BLEND(VF_CMP(x, VF_SET1(-104.0f), _CMP_LT_OQ), v, VF_ZERO());
	return VF_BLEND(VF_CMP(x, x, _CMP_UNORD_Q), v, x);
}

void PFX(cb_swiglu)(float *gate, const float *up, int n)
{
	VT t;
	int i;

	for (i = 0; i + VF_N <= n; i += VF_N)
		VF_STOREU(gate + i, VF_MUL(silu_v(VF_LOADU(gate + i)), VF_LOADU(up + i)));
	if (i < n) {
		t = VT_MAKE(n - i);
		VF_STORE_T(gate + i, t, VF_MUL(silu_v(VF_LOAD_T(gate + i, t)),
					       VF_LOAD_T(up + i, t)));
	}
}

/* cb_swiglu_oss()'s element per lane: min/max keep the scalar's NaN choices */
static inline VF oss_v(VF g, VF u, VF lim, VF nlim, VF alpha)
{
	g = VF_MIN(lim, g);			/* lim < g ? lim : g */
	u = VF_MIN(lim, VF_MAX(nlim, u));	/* -lim > u ? -lim : u */
	return VF_MUL(VF_ADD(u, VF_SET1(1.0f)), VF_MUL(g, sigmoid_v(VF_MUL(alpha, g))));
}

void PFX(cb_swiglu_oss)(float *gate, const float *up, int n, float lim, float alpha)
{
	VF vl = VF_SET1(lim), vn = VF_SET1(-lim), va = VF_SET1(alpha);
	VT t;
	int i;

	for (i = 0; i + VF_N <= n; i += VF_N)
		VF_STOREU(gate + i, oss_v(VF_LOADU(gate + i), VF_LOADU(up + i), vl, vn, va));
	if (i < n) {
		t = VT_MAKE(n - i);
		VF_STORE_T(gate + i, t, oss_v(VF_LOAD_T(gate + i, t), VF_LOAD_T(up + i, t),
					      vl, vn, va));
	}
}

void PFX(cb_expf_sub)(float *x, float m, int n)
{
	VF vm = VF_SET1(m);
	VT t;
	int i;

	for (i = 0; i + VF_N <= n; i += VF_N)
		VF_STOREU(x + i, expf_v(VF_SUB(VF_LOADU(x + i), vm)));
	if (i < n) {
		t = VT_MAKE(n - i);
		VF_STORE_T(x + i, t, expf_v(VF_SUB(VF_LOAD_T(x + i, t), vm)));
	}
}
