// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_pack.c - each variant's quantized gemms against each other, bit for
 * bit: over packed activations (ops->gemm_pk: q8_0 and q4_0 of the VNNI
 * variant, cb_pack_avx512.c, and of the AVX2 and AVX-512 variants,
 * cb_pack_avx2.c; the VNNI q4_K, q5_K and q6_K over packed q8_K rows,
 * cb_pack_k_avx512.c, and the AVX2 and AVX-512 q4_K, cb_pack_k_avx2.c), at M = 1 (ops->gemm's decode tiles, the VNNI ones
 * in cb_q_dec_avx512.c) and at M >= 2 unpacked (ops->gemm's block tiles).
 *
 * The decode path (ops->gemm at M = 1, one token per call) defines every
 * (row, token) result.  The packed gemm is compared for every M (1..33:
 * the token counts of experts in a prefill, none a multiple of the tile or
 * all of them), the unpacked one for M = 2..5 (its token tiles of 2, 3, 4
 * and 3 + 2), over every number of rows (1 to 37: whole groups of 4 and of
 * the VNNI decode tiles' 16, and every kind of rows left over), every k
 * from one block to CB_MAX_FFN (odd numbers of blocks: a last pair of one
 * block), every start token, and when the call is cut into the forward
 * pass's chunks.  Weights are raw random quants (q8_0's -128 included;
 * k-quants: any scale and min bytes) with finite f16 scales, and every
 * fifth row all ones bits but those (q4_K: q = 15 by sc = m = 63, the
 * largest sums of the tile's 16-bit step; q5_K: q = 31, sums past 16
 * bits); the activations include
 * all-zero blocks, rows of +-127 only and a q8_K row of -128 only (the
 * AVX2 packed q4_K sums 16 products in a 16-bit word: 16 x 15 x -128).  The last weight row ends at an
 * unmapped page, so a read past a row faults; the packer must write
 * exactly its row bytes per row.  Each variant packs with its own packer
 * and is compared with its own decode gemm.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cb_test.h"
#include "ops/cb_ops.h"

#define MMAX 33

#define CB_TEST_RNG_SEED 0x9e3779b97f4a7c15ull
#include "cb_test_rng.h"

static float rndf(void)
{
	return (float)(rnd64() >> 40) / (float)(1 << 24) * 2.0f - 1.0f;
}

struct weights {
	char *map;		/* the mapping; the matrix ends at its last, unmapped page */
	size_t map_len;
	char *w;
	size_t wrb;
};

/* nrows raw random rows of dt, ending at an inaccessible page. */
static int weights_make(struct weights *W, int dt, int nrows, int k)
{
	const struct cb_block_info *bi = cb_dtype_info(dt);
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), bytes;
	int r, b, s, nb = k / (int)bi->block;

	W->wrb = cb_dtype_row_bytes(dt, k);
	bytes = W->wrb * nrows;
	W->map_len = (bytes + pg - 1) / pg * pg + pg;
	W->map = mmap(NULL, W->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		      -1, 0);
	if (W->map == MAP_FAILED)
		return -1;
	if (mprotect(W->map + W->map_len - pg, pg, PROT_NONE))
		return -1;
	W->w = W->map + W->map_len - pg - bytes;
	for (r = 0; r < nrows; r++) {
		char *row = W->w + r * W->wrb;
		size_t bsz = W->wrb / nb;

		for (b = 0; b < nb; b++) {
			char *blk = row + b * bsz;
			size_t i;

			for (i = 0; i < bsz; i++)
				blk[i] = r % 5 == 4 ? (char)0xff : (char)rnd64();
			for (s = 0; s < bi->nscale; s++) {
				cb_u16 d = cb_f32_to_f16(ldexpf(rndf(), -(int)(rnd64() % 12)));

				memcpy(blk + bi->scale_off[s], &d, 2);
			}
		}
	}
	return 0;
}

/*
 * MMAX activation rows of k in form @kind (q8_0, q8_K): random scales per
 * block, some blocks all zero, some rows +-127 only.
 */
static char *acts_make(int kind, int k, size_t *as)
{
	float *x = malloc(sizeof(float) * k);
	char *a;
	int m, i, b;

	*as = cb_act_row_bytes(kind, k);
	a = malloc(*as * MMAX);
	for (m = 0; m < MMAX; m++) {
		for (i = 0; i < k; i++)
			x[i] = rndf() * ldexpf(1.0f, (int)((i / 32 + m) % 9) - 4);
		if (m % 7 == 6)
			for (i = 0; i < k; i++)
				x[i] = m % 2 ? 1.0f : -1.0f;
		if (k >= 64 && m % 3 == 0)
			memset(x + 32, 0, 32 * sizeof(float));	/* d = 0 */
		if (k >= 512 && m % 3 == 0)
			memset(x + 256, 0, 256 * sizeof(float));	/* a q8_K d = 0 */
		cb_isa_scalar.quantize_act[kind](a + m * *as, x, k);
		if (kind == CB_ACT_Q8_K && m == 12) {	/* q8's -128, which no quantizer makes */
			struct cb_block_q8_K *xb = (void *)(a + m * *as);

			for (i = 0; i < k / CB_QK_K; i++) {
				memset(xb[i].qs, 0x80, sizeof(xb[i].qs));
				for (b = 0; b < 16; b++)
					xb[i].bsums[b] = -128 * 16;
			}
		}
	}
	free(x);
	return a;
}

/*
 * Returns the number of calls whose bits differed from the decode path.
 * @ms: the token counts to try (all from token 0, and from token MMAX - M).
 */
static int check_shape(const struct cb_isa_ops *ops, int dt, int nrows, int k, const int *ms,
		       int nm, int *calls, int *guard_bad)
{
	const int kind = (int)cb_dtype_act(dt);
	cb_pack_fn pack = cb_pk_pack_fn(ops, kind);
	struct weights W;
	size_t as, ps = cb_pk_act_row_bytes(kind, k);
	char *act = acts_make(kind, k, &as), *pk;
	float *one, *got;
	int m, i, M, bad = 0;

	if (weights_make(&W, dt, nrows, k)) {
		free(act);
		return 1;
	}
	one = malloc(sizeof(float) * MMAX * nrows);
	got = malloc(sizeof(float) * MMAX * nrows);
	/* packed rows, with 64 guard bytes after the last */
	pk = aligned_alloc(64, ps * MMAX + 64);
	memset(pk, 0xa5, ps * MMAX + 64);
	for (m = 0; m < MMAX; m++)
		pack(pk + m * ps, act + m * as, k);
	for (i = 0; i < 64; i++)
		*guard_bad += (unsigned char)pk[ps * MMAX + i] != 0xa5;
	/* the decode path */
	for (m = 0; m < MMAX; m++)
		ops->gemm[dt](one + m * nrows, nrows, W.w, W.wrb, act + m * as, as, 1, nrows, k);
	for (i = 0; i < nm; i++) {
		int m0;

		M = ms[i];
		for (m0 = 0; m0 <= MMAX - M; m0 += CB_MAX(MMAX - M, 1)) {
			memset(got, 0xff, sizeof(float) * MMAX * nrows);
			ops->gemm_pk[dt](got, nrows, W.w, W.wrb, pk + m0 * ps, ps, M, nrows, k);
			bad += !!memcmp(got, one + m0 * nrows, sizeof(float) * M * nrows);
			++*calls;
		}
	}
	/* the unpacked block tile at M = 2..5 */
	for (M = 2; M <= 5; M++) {
		int m0;

		for (m0 = 0; m0 <= MMAX - M; m0 += MMAX - M) {
			memset(got, 0xff, sizeof(float) * MMAX * nrows);
			ops->gemm[dt](got, nrows, W.w, W.wrb, act + m0 * as, as, M, nrows, k);
			bad += !!memcmp(got, one + m0 * nrows, sizeof(float) * M * nrows);
			++*calls;
		}
	}
	/* the forward pass's chunks: 16 rows x 32 tokens */
	memset(got, 0xff, sizeof(float) * MMAX * nrows);
	for (i = 0; i < nrows; i += 16)
		for (m = 0; m < MMAX; m += 32)
			ops->gemm_pk[dt](got + m * nrows + i, nrows, W.w + i * W.wrb, W.wrb,
					 pk + m * ps, ps, CB_MIN(32, MMAX - m),
					 CB_MIN(16, nrows - i), k);
	bad += !!memcmp(got, one, sizeof(float) * MMAX * nrows);
	++*calls;
	free(pk);
	free(one);
	free(got);
	free(act);
	munmap(W.map, W.map_len);
	return bad;
}

static void run_packed(int level, int dt)
{
	static const int ks[] = { 32, 64, 96, 160, 2048, 5632 };
	static const int kks[] = { 256, 512, 768, 1280, 2048, 5632 };	/* k-quants */
	/* 16 + 8 + 4 + 3, 16 + 16 + 4 + 1, 16 + 8 + 1, 8, 4 + 3 */
	static const int nrs[] = { 1, 3, 4, 5, 7, 8, 13, 16, 25, 31, 37 };
	static const int wide_ms[] = { 1, 2, 5, 32, 33 };
	int all_ms[MMAX], ik, ir, calls = 0, bad = 0, guard_bad = 0;
	const struct cb_isa_ops *ops = cb_isa_get(level);
	const int kq = cb_dtype_act(dt) == CB_ACT_Q8_K;

	if (!ops) {
		CB_SKIP("the variant does not run on this CPU");
		return;
	}
	CB_CHECK(ops->gemm_pk[dt] && cb_pk_pack_fn(ops, cb_dtype_act(dt)),
		 "%s has no packed %s gemm", cb_isa_names[ops->level], cb_dtype_info(dt)->name);
	if (!ops->gemm_pk[dt] || !cb_pk_pack_fn(ops, cb_dtype_act(dt)))
		return;
	for (ik = 0; ik < MMAX; ik++)
		all_ms[ik] = ik + 1;
	for (ik = 0; ik < (int)CB_ARRAY_SIZE(ks); ik++)
		for (ir = 0; ir < (int)CB_ARRAY_SIZE(nrs); ir++)
			bad += check_shape(ops, dt, nrs[ir], kq ? kks[ik] : ks[ik], all_ms,
					   MMAX, &calls, &guard_bad);
	/* the widest gemm input: CB_MAX_FFN, an odd row count */
	bad += check_shape(ops, dt, 5, (int)CB_MAX_FFN, wide_ms, CB_ARRAY_SIZE(wide_ms),
			   &calls, &guard_bad);
	bad += check_shape(ops, dt, 7, (int)CB_MAX_FFN - (kq ? 256 : 32), wide_ms,
			   CB_ARRAY_SIZE(wide_ms), &calls, &guard_bad);
	printf("# %s %s: %d calls (packed M = 1..33, unpacked M = 2..5)\n", cb_isa_names[ops->level],
	       cb_dtype_info(dt)->name, calls);
	CB_CHECK(bad == 0, "%d of %d calls gave other bits than the decode path", bad, calls);
	CB_CHECK(guard_bad == 0, "the packer wrote %d bytes past its rows", guard_bad);
}

static void test_packed_q8_0_equals_decode(void)
{
	run_packed(CB_ISA_AVX512_VNNI, CB_DT_Q8_0);
}

static void test_packed_q4_0_equals_decode(void)
{
	run_packed(CB_ISA_AVX512_VNNI, CB_DT_Q4_0);
}

static void test_avx2_packed_q8_0_equals_decode(void)
{
	run_packed(CB_ISA_AVX2, CB_DT_Q8_0);
}

static void test_avx2_packed_q4_0_equals_decode(void)
{
	run_packed(CB_ISA_AVX2, CB_DT_Q4_0);
}

/* AVX-512 without VNNI: the AVX2 packed gemms against its own q_tile */
static void test_avx512_packed_q8_0_equals_decode(void)
{
	run_packed(CB_ISA_AVX512, CB_DT_Q8_0);
}

static void test_avx512_packed_q4_0_equals_decode(void)
{
	run_packed(CB_ISA_AVX512, CB_DT_Q4_0);
}

static void test_packed_q4_K_equals_decode(void)
{
	run_packed(CB_ISA_AVX512_VNNI, CB_DT_Q4_K);
}

/* q5_K: sums of 16 x 31 x 127 in the all-ones rows, past 16 bits */
static void test_packed_q5_K_equals_decode(void)
{
	run_packed(CB_ISA_AVX512_VNNI, CB_DT_Q5_K);
}

static void test_packed_q6_K_equals_decode(void)
{
	run_packed(CB_ISA_AVX512_VNNI, CB_DT_Q6_K);
}

/* The AVX2 q4_K over packed q8_K rows (cb_pack_k_avx2.c) */
static void test_avx2_packed_q4_K_equals_decode(void)
{
	run_packed(CB_ISA_AVX2, CB_DT_Q4_K);
}

/* AVX-512 without VNNI: the same gemm against its own k_tile */
static void test_avx512_packed_q4_K_equals_decode(void)
{
	run_packed(CB_ISA_AVX512, CB_DT_Q4_K);
}

/* The packed row: 136 bytes per pair of blocks, rounded up to 64. */
static void test_packed_row_bytes(void)
{
	CB_CHECK(cb_pk_row_bytes(32) == 192, "k = 32: %llu",
		 (unsigned long long)cb_pk_row_bytes(32));
	CB_CHECK(cb_pk_row_bytes(64) == 192, "k = 64");
	CB_CHECK(cb_pk_row_bytes(2048) == 32 * 136, "k = 2048");
	CB_CHECK(cb_pk_row_bytes(5632) == 88 * 136, "k = 5632");
	CB_CHECK(cb_pk_row_bytes(96) % 64 == 0 && cb_pk_row_bytes(96) >= 2 * 136, "k = 96");
	/* q8_K: 384 bytes per super-block, never more than the q8_0 form */
	CB_CHECK(cb_pk_k_row_bytes(256) == 384, "q8_K k = 256");
	CB_CHECK(cb_pk_k_row_bytes(5632) == 22 * 384, "q8_K k = 5632");
	CB_CHECK(cb_pk_k_row_bytes(CB_MAX_FFN) <= cb_pk_row_bytes(CB_MAX_FFN), "q8_K k = max");
}

int main(void)
{
	CB_RUN(test_packed_row_bytes);
	CB_RUN(test_packed_q8_0_equals_decode);
	CB_RUN(test_packed_q4_0_equals_decode);
	CB_RUN(test_avx2_packed_q8_0_equals_decode);
	CB_RUN(test_avx2_packed_q4_0_equals_decode);
	CB_RUN(test_avx512_packed_q8_0_equals_decode);
	CB_RUN(test_avx512_packed_q4_0_equals_decode);
	CB_RUN(test_packed_q4_K_equals_decode);
	CB_RUN(test_packed_q5_K_equals_decode);
	CB_RUN(test_packed_q6_K_equals_decode);
	CB_RUN(test_avx2_packed_q4_K_equals_decode);
	CB_RUN(test_avx512_packed_q4_K_equals_decode);
	return cb_test_done();
}
