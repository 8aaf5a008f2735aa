// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_q_dec_avx512.c - the VNNI variant's q8_0 / q4_0 gemms at M = 1
 * (decode): 16 rows x 1 token per tile.
 *
 * The block tile of cb_ops_avx512.c (avx512_q2_tile) was written for 4
 * tokens; at M = 1 it spent, per pair of blocks and 4 rows, about 30
 * instructions gathering and converting the scales in scalar registers and
 * 12 on the token, and prefetched one line per 68 bytes of a q8_0 row, so
 * one line in 17 of the next row group came from DRAM on demand
 * (docs/performance.md, section (n)).  Here, per pair of blocks:
 *
 * - the token's two blocks, their c sum x and scales are taken once for
 *   16 rows;
 * - each row's two scales are broadcast from memory into the two halves of
 *   a ymm of halves (no scalar gathering, no permute), converted and
 *   multiplied by the token's [dx b x 8 | dx b+1 x 8];
 * - each row prefetches every block's place (q8_0: two per pair), so no
 *   line is skipped;
 * - q4_0: the weights enter vpdpbusd as [lo b | hi b | lo b+1 | hi b+1]
 *   with the high nibbles left in place (16 n, one vpandd for both), and
 *   the base and the token's scale of those lanes follow (16 x 8 sum x,
 *   dx / 16).
 *
 * THE BIT CONTRACT (cb_ops.h: a (row, token) result does not depend on M
 * or the tile): the float operations are avx512_q2_tile's, lane for lane:
 * per pair one conversion of the 16 int32 lane sums (lanes 0..7 block b's
 * 4-element groups, 8..15 block b + 1's; zero past an odd last block), one
 * FMA with the single rounding of d_w x d_x of the lane's block into the
 * same accumulator lane, in block order, and the same final
 * _mm512_reduce_add_ps().  The q4_0 high-nibble lanes hold 16 i instead of
 * i and take round(d_w x dx / 16) = round(d_w x dx) / 16 (d_w x dx is 0,
 * at least 2^-48 or not finite, so dividing by 16 is exact), and FMA uses
 * the exact product: 16 i x s / 16 = i x s.  tests/unit/test_pack.c holds
 * every row of these tiles to the M >= 2 tiles, packed and unpacked.
 */
#ifndef __CHECKER__
#include <immintrin.h>

#include "ops/cb_ops.h"
#include "ops/cb_ops_q.h"
#include "quant/cb_quant.h"

/*
 * 16 rows: 16 accumulators and the token's 3 vectors leave room in the
 * 32 registers; 16 rows streamed at once kept DRAM busier than 8 (q4_0
 * 0.55 to 0.59 ns per block-row against 0.66 to 0.77, one thread).
 */
#define DEC_R 16
#define DEC_PREFETCH 512	/* bytes ahead in the row, into L1 */

/* lanes 4..7 of each 128 bits: q4_0 lanes of the high nibbles */
#define DEC_HI 0xf0f0

/*
 * Blocks b, b + 1 (b alone unless two) of a row as vpdpbusd's unsigned
 * bytes, in the token's element order: q8_0 w + 128; q4_0 [n b | 16 n b |
 * n b+1 | 16 n b+1] with the low nibbles n of a block its elements 0..15
 * and the high ones 16..31.  Nothing past block b is read unless two.
 */
static inline CB_ALWAYS_INLINE __m512i dec_load_w(int q4, const char *w, int b, int two)
{
	if (q4) {
		const struct cb_block_q4_0 *wb = (const struct cb_block_q4_0 *)w + b;
		__m512i z = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)wb[0].qs));

		if (two)
			z = _mm512_mask_broadcast_i32x4(z, 0xff00,
							_mm_loadu_si128((const __m128i *)wb[1].qs));
		return _mm512_and_si512(z, _mm512_mask_blend_epi32(DEC_HI, _mm512_set1_epi8(0x0f),
								   _mm512_set1_epi8(-0x10)));
	}
	{
		const struct cb_block_q8_0 *wb = (const struct cb_block_q8_0 *)w + b;
		__m512i z = _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)wb[0].qs));

		if (two)
			z = _mm512_inserti64x4(z, _mm256_loadu_si256((const __m256i *)wb[1].qs), 1);
		return _mm512_xor_si512(z, _mm512_set1_epi8(-128));
	}
}

/* Blocks b, b + 1 (only b when !two) of R rows. */
static inline CB_ALWAYS_INLINE void dec_step(__m512 *acc, const char *w, cb_size wrb,
					     const char *act, int R, int b, int q4, int two)
{
	const cb_size bsz = q4 ? sizeof(struct cb_block_q4_0) : sizeof(struct cb_block_q8_0);
	const struct cb_block_q8_0 *xb = (const struct cb_block_q8_0 *)act + b;
	__m512i xq, c, base;
	__m512 dx16;
	__m128 dx;
	cb_u32 px;
	int r;

	xq = _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)xb[0].qs));
	if (two)
		xq = _mm512_inserti64x4(xq, _mm256_loadu_si256((const __m256i *)xb[1].qs), 1);
	/*
	 * sum w x = sum u x - c sum x with u the bytes above: c = 128 (q8_0),
	 * 8 for low nibbles and 16 x 8 for high ones (q4_0), per token.
	 */
	c = q4 ? _mm512_mask_blend_epi32(DEC_HI, _mm512_set1_epi8(8), _mm512_set1_epi8(-128)) :
		 _mm512_set1_epi8(-128);
	base = _mm512_sub_epi32(_mm512_setzero_si512(),
				_mm512_dpbusd_epi32(_mm512_setzero_si512(), c, xq));
	/* [dx b x 8 | dx b+1 x 8], dx b+1 = 0 past the last block */
	px = xb[0].d | (two ? (cb_u32)xb[1].d << 16 : 0);
	dx = _mm_cvtph_ps(_mm_cvtsi32_si128((int)px));
	dx16 = _mm512_permutexvar_ps(_mm512_inserti64x4(_mm512_setzero_si512(),
							_mm256_set1_epi32(1), 1),
				     _mm512_castps128_ps512(dx));
	if (q4) {	/* exact: dx is 0 or at least 2^-24 */
		__m512 sixteenth = _mm512_mask_blend_ps(DEC_HI, _mm512_set1_ps(1.0f),
							_mm512_set1_ps(0.0625f));

		dx16 = _mm512_mul_ps(dx16, sixteenth);
	}
#pragma GCC unroll 16
	for (r = 0; r < DEC_R; r++) {
		const char *row = w + r * wrb;
		const short *d;
		__m512i isum;
		__m256i h;

		if (r >= R)
			continue;
		/* every block's place: q8_0 pairs (68 bytes) would skip lines */
		_mm_prefetch(row + b * bsz + DEC_PREFETCH, _MM_HINT_T0);
		_mm_prefetch(row + R * wrb + b * bsz, _MM_HINT_T1);
		if (!q4 && two) {
			_mm_prefetch(row + (b + 1) * bsz + DEC_PREFETCH, _MM_HINT_T0);
			_mm_prefetch(row + R * wrb + (b + 1) * bsz, _MM_HINT_T1);
		}
		isum = _mm512_dpbusd_epi32(base, dec_load_w(q4, row, b, two), xq);
		/* the row's d b x 8 | d b+1 x 8 (0 past the last block) as halves */
		d = (const short *)(row + b * bsz);
		h = _mm256_maskz_set1_epi16(0x00ff, d[0]);
		if (two)
			h = _mm256_mask_set1_epi16(h, 0xff00, d[bsz / 2]);
		acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum),
					 _mm512_mul_ps(_mm512_cvtph_ps(h), dx16), acc[r]);
	}
}

static inline CB_ALWAYS_INLINE void dec_tile(float *out, const char *w, cb_size wrb,
					     const char *act, int R, int nb, int q4)
{
	__m512 acc[DEC_R];
	int r, b;

#pragma GCC unroll 16
	for (r = 0; r < DEC_R; r++)
		acc[r] = _mm512_setzero_ps();
	for (b = 0; b + 2 <= nb; b += 2)
		dec_step(acc, w, wrb, act, R, b, q4, 1);
	if (b < nb)
		dec_step(acc, w, wrb, act, R, b, q4, 0);
#pragma GCC unroll 16
	for (r = 0; r < DEC_R; r++)
		if (r < R)
			out[r] = _mm512_reduce_add_ps(acc[r]);
}

/* Groups of 16 rows, then at most one of 8, one of 4 and three single rows. */
static inline CB_ALWAYS_INLINE void dec_gemm(float *out, const char *w, cb_size wrb,
					     const char *act, int nrows, int k, int q4)
{
	int nb = k / CB_QK, r0 = 0;

	for (; r0 + DEC_R <= nrows; r0 += DEC_R)
		dec_tile(out + r0, w + r0 * wrb, wrb, act, DEC_R, nb, q4);
	if (r0 + 8 <= nrows) {
		dec_tile(out + r0, w + r0 * wrb, wrb, act, 8, nb, q4);
		r0 += 8;
	}
	if (r0 + 4 <= nrows) {
		dec_tile(out + r0, w + r0 * wrb, wrb, act, 4, nb, q4);
		r0 += 4;
	}
	for (; r0 < nrows; r0++)
		dec_tile(out + r0, w + r0 * wrb, wrb, act, 1, nb, q4);
}

void cb_avx512_vnni_gemm_dec_q8_0(float *out, const void *w, cb_size wrb, const void *act,
				  int nrows, int k)
{
	dec_gemm(out, w, wrb, act, nrows, k, 0);
}

void cb_avx512_vnni_gemm_dec_q4_0(float *out, const void *w, cb_size wrb, const void *act,
				  int nrows, int k)
{
	dec_gemm(out, w, wrb, act, nrows, k, 1);
}
#endif /* __CHECKER__ */
