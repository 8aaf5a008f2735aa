// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_pack_avx512.c - the VNNI variant's q8_0 / q4_0 gemms over packed
 * activations, for prefill and batched steps (M >= 2).
 *
 * The block tile of cb_ops_avx512.c (avx512_q2_tile) does, per pair of
 * 32-blocks and token, about ten instructions that depend on the token
 * alone (load and insert its two blocks, their c sum x by vpdpbusd, the
 * scale conversion), and repeats them for every group of four weight rows.
 * Here they are done once per call: the forward pass packs each q8_0 row
 * (cb_phase.c, a phase of its own before the gemms) into
 *
 *   x[np][64]    the quants of blocks 2p and 2p + 1, contiguous (a
 *                vpdpbusd memory operand); zeros past an odd last block
 *   ns[np][16]   int32: minus the sum of each 4-byte lane of x[p]
 *   dx[np][2]    f32: the two blocks' scales (0 past an odd last block)
 *
 * np = (blocks + 1) / 2 pairs, the three arrays one after the other in a
 * row of cb_pk_row_bytes(k) bytes.  The tile then does per pair, row and
 * token one copy of the base (ns << 3 for q4_0 nibbles, << 7 for q8_0
 * bytes + 128), a vpdpbusd, a conversion, a permute of the scale products
 * and an FMA; per token one shift and one multiply of the four rows' scale
 * pairs by the token's.
 *
 * The bit contract (cb_ops.h: a (row, token) result does not depend on M
 * or the tile) is kept by doing exactly avx512_q2_tile's float operations:
 * the same int32 lane sums (sum of w x over the same four elements, exact
 * integers whatever the route), converted, times the same single rounding
 * of d_w x d_x, by FMA into the same 16 lanes in block order, and the same
 * final _mm512_reduce_add_ps().  tests/unit/test_pack.c compares every
 * output bitwise with the unpacked gemm at M = 1.
 *
 * Rows of the weights are prefetched (as the template's prefetch_row) by
 * the first token tile of each row group only: the later tiles find them
 * in L1.
 */
#ifndef __CHECKER__
#include <immintrin.h>

#include "ops/cb_ops.h"
#include "ops/cb_ops_q.h"
#include "ops/cb_pack_walk.h"
#include "x86/cb_pair_scales_x86.h"
#include "quant/cb_quant.h"

/*
 * 4 rows x 4 tokens: 3 x 6 and 2 x 8 were slower (each token's packed
 * pair, 136 bytes, then serves fewer rows); the 16 accumulators, 4 permute
 * indices, 4 weight pairs and the token's base and scales fill the 32
 * registers.
 */
#define PK_R CB_PK_ROWS	/* weight rows per tile */
#define PK_MT 4		/* tokens per tile */
#define PK_PREFETCH 512

void cb_avx512_vnni_pack_q8_0(void *dst, const void *src, int k)
{
	const struct cb_block_q8_0 *xb = src;
	int nb = k / CB_QK, np = (nb + 1) / 2, p;
	char *x = dst;
	cb_s32 *ns = (cb_s32 *)(x + (cb_size)np * 64);
	float *dx = (float *)(x + (cb_size)np * 128);

	for (p = 0; p < np; p++) {
		int two = 2 * p + 1 < nb;
		__m256i x0 = _mm256_loadu_si256((const __m256i *)xb[2 * p].qs);
		__m256i x1 = two ? _mm256_loadu_si256((const __m256i *)xb[2 * p + 1].qs) :
				   _mm256_setzero_si256();
		__m512i v = _mm512_inserti64x4(_mm512_castsi256_si512(x0), x1, 1);
		__m512i s = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_set1_epi8(1), v);

		_mm512_storeu_si512(x + (cb_size)p * 64, v);
		s = _mm512_sub_epi32(_mm512_setzero_si512(), s);
		_mm512_storeu_si512(ns + (cb_size)p * 16, s);
		dx[2 * p] = _cvtsh_ss(xb[2 * p].d);
		dx[2 * p + 1] = two ? _cvtsh_ss(xb[2 * p + 1].d) : 0.0f;
	}
}

/*
 * The weights of blocks b, b + 1 (b only when !two) as unsigned bytes in
 * the activation's element order: q4_0 nibbles n = w + 8, q8_0 bytes
 * w + 128.  Past an odd last block the lanes hold anything: the packed
 * quants there are zero.
 */
static inline CB_ALWAYS_INLINE __m512i pk_load_w(int q4, const char *w, int b, int two)
{
	if (q4) {
		const struct cb_block_q4_0 *wb = (const struct cb_block_q4_0 *)w + b;
		__m512i z = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)wb[0].qs));

		if (two)	/* [q0 q0 q1 q1] */
			z = _mm512_mask_broadcast_i32x4(z, 0xff00,
							_mm_loadu_si128((const __m128i *)wb[1].qs));
		/* low nibbles are elements 0..15 (lanes 0, 2), high 16..31 (1, 3) */
		z = _mm512_mask_srli_epi16(z, (__mmask32)0xff00ff00u, z, 4);
		return _mm512_and_si512(z, _mm512_set1_epi8(0x0f));
	}
	{
		const struct cb_block_q8_0 *wb = (const struct cb_block_q8_0 *)w + b;
		__m512i z = _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)wb[0].qs));

		if (two)
			z = _mm512_inserti64x4(z, _mm256_loadu_si256((const __m256i *)wb[1].qs), 1);
		return _mm512_xor_si512(z, _mm512_set1_epi8(-128));
	}
}

/* Pair p (blocks 2p, 2p + 1; only 2p when !two) of R rows x MT tokens. */
static inline CB_ALWAYS_INLINE void pk_step(__m512 acc[PK_R][PK_MT], const __m512i *lane,
					    const char *w, cb_size wrb, const char *pk,
					    cb_size ps, int np, int R, int MT, int p, int dt,
					    int two, int pf)
{
	const int q4 = dt == CB_DT_Q4_0;
	const cb_size bsz = q4 ? sizeof(struct cb_block_q4_0) : sizeof(struct cb_block_q8_0);
	const int b = 2 * p;
	__m512i u[PK_R];
	__m256 dw;
	int r, m;

	/* the rows' scales of blocks b, b + 1: [r0 b, r0 b+1, r1 b, r1 b+1, ...] */
	dw = cb_pair_scales(w, wrb, b, bsz, R, two);
#pragma GCC unroll 4
	for (r = 0; r < PK_R; r++) {
		if (r >= R)
			continue;
		if (pf) {
			_mm_prefetch(w + r * wrb + b * bsz + PK_PREFETCH, _MM_HINT_T0);
			_mm_prefetch(w + (R + r) * wrb + b * bsz, _MM_HINT_T1);
		}
		u[r] = pk_load_w(q4, w + r * wrb, b, two);
	}
#pragma GCC unroll 4
	for (m = 0; m < PK_MT; m++) {
		const char *row = pk + m * ps;
		__m512i xq, base;
		__m256 dx, s;

		if (m >= MT)
			continue;
		xq = _mm512_loadu_si512(row + (cb_size)p * 64);
		base = _mm512_slli_epi32(_mm512_loadu_si512(row + ((cb_size)np + p) * 64),
					 q4 ? 3 : 7);
		/* [dx b, dx b+1] repeated, to match dw's pairs */
		dx = _mm256_castpd_ps(_mm256_broadcast_sd((const double *)(row + (cb_size)np * 128 +
									   (cb_size)p * 8)));
		s = _mm256_mul_ps(dw, dx);
#pragma GCC unroll 4
		for (r = 0; r < PK_R; r++) {
			__m512i isum;
			__m512 sc;

			if (r >= R)
				continue;
			isum = _mm512_dpbusd_epi32(base, u[r], xq);
			sc = _mm512_permutexvar_ps(lane[r], _mm512_castps256_ps512(s));
			acc[r][m] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), sc, acc[r][m]);
		}
	}
}

static inline CB_ALWAYS_INLINE void pk_tile(float *out, cb_size ldo, const char *w, cb_size wrb,
					    const char *pk, cb_size ps, int R, int MT, int nb,
					    int dt, int pf)
{
	__m512 acc[PK_R][PK_MT];
	__m512i lane[PK_R];
	int np = (nb + 1) / 2, r, m, p;

#pragma GCC unroll 4
	for (r = 0; r < PK_R; r++) {
		/* lanes 0..7 take scale lane 2r (block b), 8..15 lane 2r + 1 */
		lane[r] = _mm512_inserti64x4(_mm512_set1_epi32(2 * r),
					     _mm256_set1_epi32(2 * r + 1), 1);
#pragma GCC unroll 4
		for (m = 0; m < PK_MT; m++)
			acc[r][m] = _mm512_setzero_ps();
	}
	for (p = 0; 2 * p + 2 <= nb; p++)
		pk_step(acc, lane, w, wrb, pk, ps, np, R, MT, p, dt, 1, pf);
	if (2 * p < nb)
		pk_step(acc, lane, w, wrb, pk, ps, np, R, MT, p, dt, 0, pf);
#pragma GCC unroll 4
	for (r = 0; r < PK_R; r++)
#pragma GCC unroll 4
		for (m = 0; m < PK_MT; m++)
			if (r < R && m < MT)
				out[m * ldo + r] = _mm512_reduce_add_ps(acc[r][m]);
}

CB_PK_TILE(pk_tile, pk_q8_0, CB_DT_Q8_0, 4, 1, 0)
CB_PK_TILE(pk_tile, pk_q8_0, CB_DT_Q8_0, 4, 2, 0)
CB_PK_TILE(pk_tile, pk_q8_0, CB_DT_Q8_0, 4, 3, 0)
CB_PK_TILE(pk_tile, pk_q8_0, CB_DT_Q8_0, 4, 4, 0)
CB_PK_TILE(pk_tile, pk_q8_0, CB_DT_Q8_0, 4, 1, 1)
CB_PK_TILE(pk_tile, pk_q8_0, CB_DT_Q8_0, 4, 2, 1)
CB_PK_TILE(pk_tile, pk_q8_0, CB_DT_Q8_0, 4, 3, 1)
CB_PK_TILE(pk_tile, pk_q8_0, CB_DT_Q8_0, 4, 4, 1)
CB_PK_TILE(pk_tile, pk_q8_0, CB_DT_Q8_0, 1, 1, 1)
CB_PK_TILE(pk_tile, pk_q8_0, CB_DT_Q8_0, 1, 2, 1)
CB_PK_TILE(pk_tile, pk_q8_0, CB_DT_Q8_0, 1, 3, 1)
CB_PK_TILE(pk_tile, pk_q8_0, CB_DT_Q8_0, 1, 4, 1)
static const cb_pk_tile_fn pk_q8_0[3 * 4] = CB_PK_TABLE_4x4(pk_q8_0);

CB_PK_TILE(pk_tile, pk_q4_0, CB_DT_Q4_0, 4, 1, 0)
CB_PK_TILE(pk_tile, pk_q4_0, CB_DT_Q4_0, 4, 2, 0)
CB_PK_TILE(pk_tile, pk_q4_0, CB_DT_Q4_0, 4, 3, 0)
CB_PK_TILE(pk_tile, pk_q4_0, CB_DT_Q4_0, 4, 4, 0)
CB_PK_TILE(pk_tile, pk_q4_0, CB_DT_Q4_0, 4, 1, 1)
CB_PK_TILE(pk_tile, pk_q4_0, CB_DT_Q4_0, 4, 2, 1)
CB_PK_TILE(pk_tile, pk_q4_0, CB_DT_Q4_0, 4, 3, 1)
CB_PK_TILE(pk_tile, pk_q4_0, CB_DT_Q4_0, 4, 4, 1)
CB_PK_TILE(pk_tile, pk_q4_0, CB_DT_Q4_0, 1, 1, 1)
CB_PK_TILE(pk_tile, pk_q4_0, CB_DT_Q4_0, 1, 2, 1)
CB_PK_TILE(pk_tile, pk_q4_0, CB_DT_Q4_0, 1, 3, 1)
CB_PK_TILE(pk_tile, pk_q4_0, CB_DT_Q4_0, 1, 4, 1)
static const cb_pk_tile_fn pk_q4_0[3 * 4] = CB_PK_TABLE_4x4(pk_q4_0);

CB_GEMM_PROTO(cb_avx512_vnni_gemm_pk_q8_0)
{
	cb_pk_walk(pk_q8_0, PK_MT, out, ldo, w, w_row_bytes, act, act_stride, M, nrows,
		   k / CB_QK);
}

CB_GEMM_PROTO(cb_avx512_vnni_gemm_pk_q4_0)
{
	cb_pk_walk(pk_q4_0, PK_MT, out, ldo, w, w_row_bytes, act, act_stride, M, nrows,
		   k / CB_QK);
}
#endif /* __CHECKER__ */
