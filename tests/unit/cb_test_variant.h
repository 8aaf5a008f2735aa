/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_test_variant.h - "this ISA variant's op against the scalar one",
 * shared by the unit tests of the variants' ops (test_ops.c, test_vmath.c).
 *
 *   cb_test_variant(level)    the variant, or NULL with the test marked SKIP
 *                             (the CPU, or COLIBRI_ISA, lacks it)
 *   cb_vs_scalar(...)         one op over one buffer through the variant and
 *                             through cb_isa_scalar, compared bit for bit
 *                             (NaN payloads included); the first difference
 *                             fails the current test
 *   cb_run_variants(t, n)     each of a file's per-variant tests for each x86
 *                             variant, named test_<variant>_<name>
 *
 * Include after cb_test.h and cb_engine_priv.h.
 */
#ifndef CB_TEST_VARIANT_H
#define CB_TEST_VARIANT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline const struct cb_isa_ops *cb_test_variant(int level)
{
	const struct cb_isa_ops *ops = cb_isa_get(level);

	if (!ops)
		CB_SKIP(level == CB_ISA_AVX512_VNNI ? "CPU (or COLIBRI_ISA) lacks AVX512-VNNI" :
			level == CB_ISA_AVX512 ? "CPU (or COLIBRI_ISA) lacks AVX-512" :
			"CPU (or COLIBRI_ISA) lacks AVX2/FMA/F16C");
	return ops;
}

/*
 * An op applied in place to buf, through the table @ops (the variant's or
 * cb_isa_scalar); arg is the test's description of the call (the other
 * operands, the offsets of the row in buf).
 */
typedef void cb_vs_op(const struct cb_isa_ops *ops, float *buf, const void *arg);

/*
 * The n floats of @buf copied twice, @op run on one copy with @ops and on
 * the other with cb_isa_scalar, and every float of the two compared (the
 * whole buffer: floats around the op's row are guards that must match
 * too).  Returns the number whose bits differ; the first one fails the
 * current test, named by @what and its index, and *first (when not NULL)
 * is its index, -1 if none.
 */
static inline long cb_vs_scalar(const struct cb_isa_ops *ops, const char *what, cb_vs_op *op,
				const float *buf, long n, const void *arg, long *first)
{
	float *got = malloc(sizeof(float) * (size_t)(n ? n : 1));
	float *want = malloc(sizeof(float) * (size_t)(n ? n : 1));
	long bad = 0, i, at = -1;

	memcpy(got, buf, sizeof(float) * (size_t)n);
	memcpy(want, buf, sizeof(float) * (size_t)n);
	op(ops, got, arg);
	op(&cb_isa_scalar, want, arg);
	for (i = 0; i < n; i++) {
		cb_u32 g, w;

		memcpy(&g, &got[i], sizeof(g));
		memcpy(&w, &want[i], sizeof(w));
		if (g == w)
			continue;
		if (!bad++) {
			at = i;
			CB_CHECK(0, "%s %s: [%ld] of %ld: %a (0x%08x), scalar %a (0x%08x)",
				 cb_isa_names[ops->level], what, i, n, got[i], g, want[i], w);
		}
	}
	free(got);
	free(want);
	if (first)
		*first = at;
	return bad;
}

/* One test of a file, run once per variant with that variant's level. */
struct cb_variant_test {
	const char *name;
	void (*run)(int level);
};

static inline void cb_run_variants(const struct cb_variant_test *t, int n)
{
	static const struct {
		const char *name;
		int level;
	} v[] = {
		{ "avx2", CB_ISA_AVX2 },
		{ "avx512", CB_ISA_AVX512 },
		{ "avx512_vnni", CB_ISA_AVX512_VNNI },
	};
	char name[128];
	unsigned int vi;
	int i;

	for (vi = 0; vi < CB_ARRAY_SIZE(v); vi++)
		for (i = 0; i < n; i++) {
			snprintf(name, sizeof(name), "test_%s_%s", v[vi].name, t[i].name);
			cb_test_begin();
			t[i].run(v[vi].level);
			cb_test_end(name);
		}
}

#endif /* CB_TEST_VARIANT_H */
