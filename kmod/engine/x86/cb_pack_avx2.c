// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_pack_avx2.c - the AVX2 variants' q8_0 / q4_0 gemms over packed
 * activations, for prefill and batched steps (M >= 2); the AVX-512 variant
 * without VNNI uses them too (its block tile is the same 256-bit template
 * q_tile, the same float operations).
 *
 * The template's q_tile (cb_ops_x86_tmpl.h) does, per 32-block and token,
 * the work that depends on the token alone (load its quants, convert its
 * scale, for q4_0 the lane sums -8 sum x by two multiply-adds) again for
 * every group of four weight rows (4 rows x 2 tokens a tile).  Here the
 * forward pass packs each q8_0 row once per call (cb_phase.c) into the
 * VNNI layout's three arrays, per block:
 *
 *   x[b][32]    the quants, as they are
 *   base[b][8]  int32: -8 times the sum of each 4-byte lane of x[b]
 *   dx[b]       f32: the scale
 *
 * (room for an even number of blocks, zeros past an odd last one), so
 * cb_pk_row_bytes() holds both layouts, byte for byte the same size.  The
 * tile then does per block, row and token six vector operations: the dot
 * product (q4_0: vpmaddubsw of the nibbles by x from memory, vpmaddwd by
 * ones, vpaddd of base from memory; q8_0: the sign trick, vpsignb,
 * vpmaddubsw, vpmaddwd), a conversion, a broadcast load of the scale
 * product and an FMA.  Per block and token there is one multiply of the
 * tile's row scales by the token's, stored where the broadcasts find it;
 * per block and row the weights are loaded and unpacked once for all the
 * tile's tokens.
 *
 * The bit contract (cb_ops.h) is q_tile's: per block the same int32 lane
 * sums (lane i: elements 4i..4i+3, exact integers: u8 x s8 pairs stay
 * within int16, |w| <= 128 and |x| <= 127 for q8_0, n <= 15 for q4_0), the
 * same conversion, the same single rounding of d_w x d_x, by FMA into the
 * same 8 lanes in block order, and the same horizontal sum.
 * tests/unit/test_pack.c compares every output bitwise with the unpacked
 * gemm at M = 1.
 *
 * Rows of the weights are prefetched as q_tile does, by the first token
 * tile of each row group only: the later tiles find them in L1.
 */
#ifndef __CHECKER__
#include <immintrin.h>

#include "ops/cb_ops.h"
#include "ops/cb_ops_q.h"
#include "ops/cb_pack_walk.h"
#include "quant/cb_quant.h"

/*
 * 4 rows x 2 tokens: 4 x 3, 3 x 4 and 2 x 4 were no faster (within the
 * noise, docs/performance.md) and spill accumulators (probably the vector
 * multiply ports bound them all).  8 accumulators, ones, the q4_0 mask and shift, a row's
 * weights (and |w|), temporaries: no spills.
 */
#define PK2_R CB_PK_ROWS	/* weight rows per tile */
#define PK2_MT 2	/* tokens per tile */
#define PK2_PREFETCH 512

void cb_avx2_pack_q8_0(void *dst, const void *src, int k)
{
	const struct cb_block_q8_0 *xb = src;
	int nb = k / CB_QK, np = (nb + 1) / 2, b;
	char *x = dst;
	cb_s32 *base = (cb_s32 *)(x + (cb_size)np * 64);
	float *dx = (float *)(x + (cb_size)np * 128);
	const __m256i eight = _mm256_set1_epi8(8), one = _mm256_set1_epi16(1);

	for (b = 0; b < nb; b++) {
		__m256i v = _mm256_loadu_si256((const __m256i *)xb[b].qs);
		/* 8 x, in pairs (|8 x| <= 1016), then in fours */
		__m256i s = _mm256_madd_epi16(_mm256_maddubs_epi16(eight, v), one);

		_mm256_storeu_si256((__m256i *)(x + (cb_size)b * 32), v);
		_mm256_storeu_si256((__m256i *)(base + (cb_size)b * 8),
				    _mm256_sub_epi32(_mm256_setzero_si256(), s));
		dx[b] = _cvtsh_ss(xb[b].d);
	}
	if (nb & 1) {
		_mm256_storeu_si256((__m256i *)(x + (cb_size)nb * 32), _mm256_setzero_si256());
		_mm256_storeu_si256((__m256i *)(base + (cb_size)nb * 8), _mm256_setzero_si256());
		dx[nb] = 0.0f;
	}
}

/* q_tile's (the template's hsum256): the same additions in the same order */
static inline CB_ALWAYS_INLINE float pk2_hsum(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));

	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

/*
 * The 32 weights of block b in the activation's element order: q8_0 bytes
 * as they are, q4_0 nibbles n = w + 8 (low nibbles are elements 0..15,
 * high ones 16..31: one broadcast load, the upper half shifted by 4).
 */
static inline CB_ALWAYS_INLINE __m256i pk2_load_w(int q4, const char *w, int b)
{
	if (q4) {
		const struct cb_block_q4_0 *wb = (const struct cb_block_q4_0 *)w + b;
		__m256i z = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)wb->qs));

		z = _mm256_srlv_epi64(z, _mm256_set_epi64x(4, 4, 0, 0));
		return _mm256_and_si256(z, _mm256_set1_epi8(0x0f));
	}
	return _mm256_loadu_si256((const __m256i *)((const struct cb_block_q8_0 *)w + b)->qs);
}

static inline CB_ALWAYS_INLINE void pk2_tile(float *out, cb_size ldo, const char *w, cb_size wrb,
					     const char *pk, cb_size ps, int R, int MT, int nb,
					     int dt, int pf)
{
	const int q4 = dt == CB_DT_Q4_0;
	const cb_size bsz = q4 ? sizeof(struct cb_block_q4_0) : sizeof(struct cb_block_q8_0);
	const cb_size np = (cb_size)(nb + 1) / 2;
	const __m256i ones = _mm256_set1_epi16(1);
	__m256 acc[PK2_R][PK2_MT];
	/* per token, the R products d_w[r] * d_x of the current block */
	float sc[PK2_MT][4];
	int r, m, b;

#pragma GCC unroll 4
	for (r = 0; r < PK2_R; r++)
#pragma GCC unroll 4
		for (m = 0; m < PK2_MT; m++)
			acc[r][m] = _mm256_setzero_ps();
	for (b = 0; b < nb; b++) {
		float *scp = &sc[0][0];
		cb_u64 hd = 0;
		__m128 dw;

		/*
		 * An opaque pointer to sc: the stores below and the broadcasts
		 * from it stay memory operations at scp + constant (else GCC
		 * keeps an address per element, or shuffles in registers).
		 */
		__asm__("" : "+r"(scp));
		/* the scale is the first field of both block types */
#pragma GCC unroll 4
		for (r = 0; r < PK2_R; r++)
			if (r < R)
				hd |= (cb_u64)*(const cb_u16 *)(w + r * wrb + b * bsz) << (16 * r);
		dw = _mm_cvtph_ps(_mm_cvtsi64_si128((long long)hd));
#pragma GCC unroll 4
		for (m = 0; m < PK2_MT; m++) {
			const float *dx = (const float *)(pk + m * ps + np * 128) + b;

			if (m < MT)
				_mm_storeu_ps(scp + 4 * m, _mm_mul_ps(dw, _mm_broadcast_ss(dx)));
		}
#pragma GCC unroll 4
		for (r = 0; r < PK2_R; r++) {
			__m256i wq, aw;

			if (r >= R)
				continue;
			if (pf) {
				_mm_prefetch(w + r * wrb + b * bsz + PK2_PREFETCH, _MM_HINT_T0);
				_mm_prefetch(w + (R + r) * wrb + b * bsz, _MM_HINT_T1);
			}
			wq = pk2_load_w(q4, w + r * wrb, b);
			aw = q4 ? wq : _mm256_sign_epi8(wq, wq);	/* q8_0: |w| as u8 */
#pragma GCC unroll 4
			for (m = 0; m < PK2_MT; m++) {
				const char *row = pk + m * ps;
				const __m256i *base = (const __m256i *)(row + np * 64);
				__m256i xq, isum;
				__m256 sc1;

				if (m >= MT)
					continue;
				xq = _mm256_loadu_si256((const __m256i *)(row + (cb_size)b * 32));
				if (!q4)
					xq = _mm256_sign_epi8(xq, wq);	/* x sign(w) */
				isum = _mm256_madd_epi16(_mm256_maddubs_epi16(aw, xq), ones);
				if (q4)		/* + base, -8 sum x */
					isum = _mm256_add_epi32(isum, _mm256_loadu_si256(base + b));
				sc1 = _mm256_broadcast_ss(scp + 4 * m + r);
				acc[r][m] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), sc1,
							    acc[r][m]);
			}
		}
	}
#pragma GCC unroll 4
	for (r = 0; r < PK2_R; r++)
#pragma GCC unroll 4
		for (m = 0; m < PK2_MT; m++)
			if (r < R && m < MT)
				out[m * ldo + r] = pk2_hsum(acc[r][m]);
}

CB_PK_TILE(pk2_tile, pk2_q8_0, CB_DT_Q8_0, 4, 1, 0)
CB_PK_TILE(pk2_tile, pk2_q8_0, CB_DT_Q8_0, 4, 2, 0)
CB_PK_TILE(pk2_tile, pk2_q8_0, CB_DT_Q8_0, 4, 1, 1)
CB_PK_TILE(pk2_tile, pk2_q8_0, CB_DT_Q8_0, 4, 2, 1)
CB_PK_TILE(pk2_tile, pk2_q8_0, CB_DT_Q8_0, 1, 1, 1)
CB_PK_TILE(pk2_tile, pk2_q8_0, CB_DT_Q8_0, 1, 2, 1)
static const cb_pk_tile_fn pk2_q8_0[3 * 2] = CB_PK_TABLE_4x2(pk2_q8_0);

CB_PK_TILE(pk2_tile, pk2_q4_0, CB_DT_Q4_0, 4, 1, 0)
CB_PK_TILE(pk2_tile, pk2_q4_0, CB_DT_Q4_0, 4, 2, 0)
CB_PK_TILE(pk2_tile, pk2_q4_0, CB_DT_Q4_0, 4, 1, 1)
CB_PK_TILE(pk2_tile, pk2_q4_0, CB_DT_Q4_0, 4, 2, 1)
CB_PK_TILE(pk2_tile, pk2_q4_0, CB_DT_Q4_0, 1, 1, 1)
CB_PK_TILE(pk2_tile, pk2_q4_0, CB_DT_Q4_0, 1, 2, 1)
static const cb_pk_tile_fn pk2_q4_0[3 * 2] = CB_PK_TABLE_4x2(pk2_q4_0);

CB_GEMM_PROTO(cb_avx2_gemm_pk_q8_0)
{
	cb_pk_walk(pk2_q8_0, PK2_MT, out, ldo, w, w_row_bytes, act, act_stride, M, nrows,
		   k / CB_QK);
}

CB_GEMM_PROTO(cb_avx2_gemm_pk_q4_0)
{
	cb_pk_walk(pk2_q4_0, PK2_MT, out, ldo, w, w_row_bytes, act, act_stride, M, nrows,
		   k / CB_QK);
}
#endif /* __CHECKER__ */
