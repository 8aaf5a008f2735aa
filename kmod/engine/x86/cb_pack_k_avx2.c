// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_pack_k_avx2.c - the AVX2 variants' q4_K gemm over packed q8_K
 * activations, for prefill and batched steps (M >= 2); the AVX-512
 * variant without VNNI uses it too (its k_tile is the same 256-bit
 * template, the same float operations).
 *
 * k_tile (cb_kq_x86_tmpl.h) spends two multiplies per 32 weights, row and
 * token: vpmaddubsw, then vpmaddwd by the group's scale broadcast to 16
 * words.  Without VNNI the scale can still come after a longer sum: 16
 * products of a q4_K nibble (<= 15) by a q8 quant (|x| <= 128) are at
 * most 30720, a 16-bit word.  So the forward pass packs each q8_K row
 * once per call (cb_phase.c) so that, in each 128-bit half h of each of
 * eight ymm, word g holds two quants of group g (of 32 elements):
 *
 *   x[j][16h + 2g + i] = qs[32g + 16h + 2j + i]   j = 0..7, h = 0..1,
 *                                                 g = 0..7, i = 0..1
 *
 * and the weight rows are brought to the same order: the eight nibble
 * vectors (group g's 32 weights in element order) transposed as 8 x 8
 * words in each half (24 unpacks per row and super-block, for all the
 * tile's tokens).  Per row and token a super-block is then eight
 * vpmaddubsw added as words (vpaddw: word g of half h is a sum of 16
 * products of group g), one vpmaddwd by [sc_0..sc_7 | sc_0..sc_7], and a
 * quarter of a reduction shared by 4 rows x 4 tokens; the mins are one
 * vpmaddwd per pair of rows and token ([m | m'] by the token's group sums,
 * b32, in both halves).  Per super-block a packed row holds
 *
 *   x[8][32]      the quants as above                      bytes   0..255
 *   b32[8]        s16: sum of quants 32g .. 32g + 31       bytes 256..271
 *   d             f32: the scale (d_bits)                  bytes 272..275
 *
 * in cb_pk_k_row_bytes(k) = k / 256 x 384 bytes (the rest zero).
 *
 * The bit contract (cb_ops.h): the integers are the scalar reference's
 * (isum = sum sc_g sum q x, imin = sum m_g sum x; exact whatever the
 * order), and the float steps are k_tile's lane for lane: per super-block
 * one conversion of each, times the single rounding of d_w x d_x and of
 * dmin_w x -d_x, by FMA into two accumulators (k_tile's lanes r and r +
 * 4), and out = isum's + imin's.  tests/unit/test_pack.c compares every
 * output bitwise with the gemm at M = 1.
 *
 * Weight rows are prefetched as k_tile does (one line ahead in the row
 * into L1, the next row group's line into L2), by the first token tile of
 * each row group only.
 */
#ifndef __CHECKER__
#include <immintrin.h>

#include "x86/cb_kq_x86_util.h"
#include "ops/cb_math.h"
#include "ops/cb_ops.h"
#include "ops/cb_ops_q.h"
#include "ops/cb_pack_walk.h"
#include "quant/cb_quant.h"

#define PKA_R CB_PK_ROWS	/* weight rows per tile */
#define PKA_MT 4	/* tokens per tile */
#define PKA_SB 384	/* packed bytes per super-block */
#define PKA_B32 256	/* offset of b32 */
#define PKA_D 272	/* offset of d */
#define PKA_PREFETCH 512

void cb_avx2_pack_q8_K(void *dst, const void *src, int k)
{
	const struct cb_block_q8_K *xb = src;
	int nb = k / CB_QK_K, b, j, h, g;

	for (b = 0; b < nb; b++) {
		char *o = (char *)dst + (cb_size)b * PKA_SB;
		cb_s16 *b32 = (cb_s16 *)(o + PKA_B32);

		__builtin_memset(o + PKA_B32, 0, PKA_SB - PKA_B32);
		for (j = 0; j < 8; j++)
			for (h = 0; h < 2; h++)
				for (g = 0; g < 8; g++)
					__builtin_memcpy(o + 32 * j + 16 * h + 2 * g,
							 xb[b].qs + 32 * g + 16 * h + 2 * j, 2);
		for (g = 0; g < 8; g++)
			b32[g] = (cb_s16)(xb[b].bsums[2 * g] + xb[b].bsums[2 * g + 1]);
		__builtin_memcpy(o + PKA_D, &xb[b].d_bits, 4);
	}
}

/*
 * A row's super-block of q4_K quants in the packed order: v[j], half h,
 * word g = weights 32g + 16h + 2j, + 1 (nibble vectors n[g], word j of
 * each half, transposed).
 */
static inline CB_ALWAYS_INLINE void pka_q4k_w(__m256i v[8], const cb_u8 *qs)
{
	const __m256i m4 = _mm256_set1_epi8(15);
	__m256i n[8], p[8], q[8];
	int c;

#pragma GCC unroll 4
	for (c = 0; c < 4; c++) {
		__m256i t = _mm256_loadu_si256((const __m256i *)(qs + 32 * c));

		n[2 * c] = _mm256_and_si256(t, m4);
		n[2 * c + 1] = _mm256_and_si256(_mm256_srli_epi16(t, 4), m4);
	}
	/* p[2c]: words 0..3 of groups 2c, 2c + 1 interleaved; p[2c + 1]: words 4..7 */
#pragma GCC unroll 4
	for (c = 0; c < 4; c++) {
		p[2 * c] = _mm256_unpacklo_epi16(n[2 * c], n[2 * c + 1]);
		p[2 * c + 1] = _mm256_unpackhi_epi16(n[2 * c], n[2 * c + 1]);
	}
	/* q[4c + i]: words 2i, 2i + 1 of groups 4c .. 4c + 3 */
#pragma GCC unroll 2
	for (c = 0; c < 2; c++) {
		q[4 * c] = _mm256_unpacklo_epi32(p[4 * c], p[4 * c + 2]);
		q[4 * c + 1] = _mm256_unpackhi_epi32(p[4 * c], p[4 * c + 2]);
		q[4 * c + 2] = _mm256_unpacklo_epi32(p[4 * c + 1], p[4 * c + 3]);
		q[4 * c + 3] = _mm256_unpackhi_epi32(p[4 * c + 1], p[4 * c + 3]);
	}
	/* v[j]: word j of groups 0..7 */
#pragma GCC unroll 4
	for (c = 0; c < 4; c++) {
		v[2 * c] = _mm256_unpacklo_epi64(q[c], q[4 + c]);
		v[2 * c + 1] = _mm256_unpackhi_epi64(q[c], q[4 + c]);
	}
}

/*
 * q4_K's 12 scale bytes to [sc_0..sc_7, m_0..m_7] (k4_scales of
 * cb_kq_x86_tmpl.h); the 16 bytes read end inside the block.
 */
static inline CB_ALWAYS_INLINE __m128i pka_k4_scales(const cb_u8 *s)
{
	__m128i v = _mm_loadu_si128((const __m128i *)s);
	__m128i a = _mm_shuffle_epi32(v, 0x98);
	__m128i b = _mm_shuffle_epi32(v, 0x50);
	__m128i lo, hi;

	a = _mm_srlv_epi32(a, _mm_setr_epi32(0, 0, 0, 4));
	lo = _mm_and_si128(a, _mm_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f));
	hi = _mm_and_si128(_mm_srli_epi32(b, 2), _mm_setr_epi32(0, 0x30303030, 0, 0x30303030));
	return _mm_or_si128(lo, hi);
}

/* Four tokens' 8-lane vectors to one: in each half, dword m = the sum of z[m]'s four. */
static inline CB_ALWAYS_INLINE __m256i pka_reduce4(const __m256i *z)
{
	__m256i a = _mm256_add_epi32(_mm256_unpacklo_epi32(z[0], z[1]),
				     _mm256_unpackhi_epi32(z[0], z[1]));
	__m256i b = _mm256_add_epi32(_mm256_unpacklo_epi32(z[2], z[3]),
				     _mm256_unpackhi_epi32(z[2], z[3]));

	return _mm256_add_epi32(_mm256_unpacklo_epi64(a, b), _mm256_unpackhi_epi64(a, b));
}

/* Two rows' pka_reduce4 results to [row a's 4 tokens | row b's]. */
static inline CB_ALWAYS_INLINE __m256i pka_halves(__m256i a, __m256i b)
{
	return _mm256_add_epi32(_mm256_permute2x128_si256(a, b, 0x20),
				_mm256_permute2x128_si256(a, b, 0x31));
}

/*
 * R rows x MT tokens of the q4_K gemm over nb super-blocks; the packed
 * token rows at pk, ps bytes apart.  Lanes 4r + m of two vectors per kind
 * (rows 0, 1 and rows 2, 3).
 */
static inline CB_ALWAYS_INLINE void pka_tile(float *out, cb_size ldo, const char *w, cb_size wrb,
					     const char *pk, cb_size ps, int R, int MT, int nb,
					     int dt, int pf)
{
	const cb_size bsz = sizeof(struct cb_block_q4_K);
	__m256 accd[2], accm[2];
	float vd[16], vm[16];
	int b, r, m, j, o;

#pragma GCC unroll 2
	for (r = 0; r < 2; r++) {
		accd[r] = _mm256_setzero_ps();
		accm[r] = _mm256_setzero_ps();
	}
	for (b = 0; b < nb; b++) {
		const char *blk = w + (cb_size)b * bsz;
		const char *xp = pk + (cb_size)b * PKA_SB;
		__m256i c[PKA_R], t[2], mn[2];
		__m128i s8[PKA_R];
		cb_u64 hd = 0, hm = 0;
		__m256 dw8, dxv, ndx;
		float dx[4];

#pragma GCC unroll 4
		for (r = 0; r < PKA_R; r++) {
			const char *wr = blk + r * wrb, *xr = xp;
			__m256i v[8], sc, z[PKA_MT];

			c[r] = _mm256_setzero_si256();
			s8[r] = _mm_setzero_si128();
			if (r >= R)
				continue;
#pragma GCC unroll 4
			for (o = 0; o < (int)bsz; o += 64) {
				if (!pf)
					break;
				_mm_prefetch(wr + o + PKA_PREFETCH, _MM_HINT_T0);
				_mm_prefetch(wr + o + 4 * wrb, _MM_HINT_T1);
			}
			hd |= (cb_u64)*(const cb_u16 *)wr << (16 * r);
			hm |= (cb_u64)*(const cb_u16 *)(wr + 2) << (16 * r);
			s8[r] = pka_k4_scales((const cb_u8 *)wr + 4);
			sc = _mm256_cvtepu8_epi16(_mm_unpacklo_epi64(s8[r], s8[r]));
			pka_q4k_w(v, (const cb_u8 *)wr + 16);
			/* keep the tokens' quants in memory operands */
			__asm__("" : "+r"(xr));
#pragma GCC unroll 4
			for (m = 0; m < PKA_MT; m++) {
				const char *x = xr + m * ps;
				__m256i y;

				z[m] = _mm256_setzero_si256();
				if (m >= MT)
					continue;
				y = _mm256_maddubs_epi16(v[0], cb_ld256(x));
#pragma GCC unroll 8
				for (j = 1; j < 8; j++) {
					__m256i p = _mm256_maddubs_epi16(v[j],
									 cb_ld256(x + 32 * j));

					y = _mm256_add_epi16(y, p);
				}
				z[m] = _mm256_madd_epi16(y, sc);
			}
			c[r] = pka_reduce4(z);
		}
		t[0] = pka_halves(c[0], c[1]);
		t[1] = pka_halves(c[2], c[3]);

		/* imin: [m of row 2i | of row 2i + 1] by the tokens' b32, lanes 4r + m */
#pragma GCC unroll 2
		for (r = 0; r < 2; r++) {
			__m256i mw = _mm256_cvtepu8_epi16(_mm_unpackhi_epi64(s8[2 * r],
									    s8[2 * r + 1]));
			__m256i y[PKA_MT];

#pragma GCC unroll 4
			for (m = 0; m < PKA_MT; m++) {
				const char *bp = xp + m * ps + PKA_B32;
				__m128i b32;

				y[m] = _mm256_setzero_si256();
				if (m >= MT || 2 * r >= R)
					continue;
				b32 = _mm_loadu_si128((const __m128i *)bp);
				y[m] = _mm256_madd_epi16(mw, _mm256_broadcastsi128_si256(b32));
			}
			mn[r] = 2 * r < R ? pka_reduce4(y) : _mm256_setzero_si256();
		}

		/* [d_r | dmin_r] as k_tile converts them; d_x to lanes 4r + m */
#pragma GCC unroll 4
		for (m = 0; m < PKA_MT; m++)
			dx[m] = m < MT ? cb_f32_from_bits(cb_rd32(xp + m * ps + PKA_D)) : 0.0f;
		dw8 = _mm256_cvtph_ps(_mm_set_epi64x((long long)hm, (long long)hd));
		dxv = _mm256_set_m128(_mm_loadu_ps(dx), _mm_loadu_ps(dx));
		ndx = _mm256_xor_ps(dxv, _mm256_set1_ps(-0.0f));
#pragma GCC unroll 2
		for (r = 0; r < 2; r++) {
			__m256 d = _mm256_permutevar8x32_ps(dw8, _mm256_setr_epi32(2 * r, 2 * r,
				2 * r, 2 * r, 2 * r + 1, 2 * r + 1, 2 * r + 1, 2 * r + 1));
			__m256 dm = _mm256_permutevar8x32_ps(dw8, _mm256_setr_epi32(2 * r + 4,
				2 * r + 4, 2 * r + 4, 2 * r + 4, 2 * r + 5, 2 * r + 5, 2 * r + 5,
				2 * r + 5));

			if (2 * r >= R)
				continue;
			accd[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(t[r]), _mm256_mul_ps(d, dxv),
						  accd[r]);
			accm[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(mn[r]), _mm256_mul_ps(dm, ndx),
						  accm[r]);
		}
	}
	_mm256_storeu_ps(vd, accd[0]);
	_mm256_storeu_ps(vd + 8, accd[1]);
	_mm256_storeu_ps(vm, accm[0]);
	_mm256_storeu_ps(vm + 8, accm[1]);
#pragma GCC unroll 4
	for (r = 0; r < PKA_R; r++)
#pragma GCC unroll 4
		for (m = 0; m < PKA_MT; m++)
			if (r < R && m < MT)
				out[m * ldo + r] = vd[4 * r + m] + vm[4 * r + m];
}

/* dt: q4_K, the one type of this tile */
CB_PK_TILE(pka_tile, pka_q4k, CB_DT_Q4_K, 4, 1, 0)
CB_PK_TILE(pka_tile, pka_q4k, CB_DT_Q4_K, 4, 2, 0)
CB_PK_TILE(pka_tile, pka_q4k, CB_DT_Q4_K, 4, 3, 0)
CB_PK_TILE(pka_tile, pka_q4k, CB_DT_Q4_K, 4, 4, 0)
CB_PK_TILE(pka_tile, pka_q4k, CB_DT_Q4_K, 4, 1, 1)
CB_PK_TILE(pka_tile, pka_q4k, CB_DT_Q4_K, 4, 2, 1)
CB_PK_TILE(pka_tile, pka_q4k, CB_DT_Q4_K, 4, 3, 1)
CB_PK_TILE(pka_tile, pka_q4k, CB_DT_Q4_K, 4, 4, 1)
CB_PK_TILE(pka_tile, pka_q4k, CB_DT_Q4_K, 1, 1, 1)
CB_PK_TILE(pka_tile, pka_q4k, CB_DT_Q4_K, 1, 2, 1)
CB_PK_TILE(pka_tile, pka_q4k, CB_DT_Q4_K, 1, 3, 1)
CB_PK_TILE(pka_tile, pka_q4k, CB_DT_Q4_K, 1, 4, 1)
static const cb_pk_tile_fn pka_q4k[3 * 4] = CB_PK_TABLE_4x4(pka_q4k);

CB_GEMM_PROTO(cb_avx2_gemm_pk_q4_K)
{
	cb_pk_walk(pka_q4k, PKA_MT, out, ldo, w, w_row_bytes, act, act_stride, M, nrows,
		   k / CB_QK_K);
}
#endif /* __CHECKER__ */
