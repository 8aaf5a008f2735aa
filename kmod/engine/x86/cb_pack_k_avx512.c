// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_pack_k_avx512.c - the VNNI variant's q4_K, q5_K and q6_K gemms over
 * packed q8_K activations, for prefill and batched steps (M >= 2).
 *
 * The k-quant tiles of cb_kq_x86_tmpl.h spend two multiplies per 32
 * weights, row and token (vpmaddubsw, then vpdpwssd by the sub-block
 * scales) on 256-bit vectors.  Here the scales come after a sum of 16
 * products: the forward pass packs each q8_K row once per call
 * (cb_phase.c) so that dword lane l of each of four zmm holds four quants
 * of the same 16-element sub-block l,
 *
 *   x[j][4l + i] = qs[16l + 4j + i]      j = 0..3, l = 0..15, i = 0..3
 *
 * and the weight rows are permuted to match (one vpermt2d, a shift and a
 * mask per zmm and row; q5_K: that and a vpermd, a rotate, a mask and an
 * or for the fifth bits; q6_K: two permutes, a shift, a rotate, two masks
 * and an or).  Per row and token a super-block is then four chained
 * vpdpbusd into one vector whose lane l is sum q x over sub-block l, one
 * multiply by the scale of lane l (q4_K: vpmaddwd, the sum is at most 16 x
 * 15 x 127 = 30480, a 16-bit word; q5_K: vpmulld, its sum reaches 16 x 31
 * x 127 = 62992, past a signed word; q6_K: vpmulld, its chain starting at
 * -32 bsum_l, which takes the offset 32 off), and a quarter of a 16-to-1
 * reduction tree shared by 4 rows x 4 tokens.  Per super-block a packed
 * row holds
 *
 *   x[4][64]       the quants as above                     bytes   0..255
 *   nb[16]         s32: -32 x bsums[l] (q6_K)              bytes 256..319
 *   b32[8]         s16: sum of quants 32g .. 32g + 31      bytes 320..335
 *   d              f32: the scale (d_bits)                 bytes 336..339
 *
 * in cb_pk_k_row_bytes(k) = k / 256 x 384 bytes (the rest zero).
 *
 * The bit contract (cb_ops.h): the integers are the scalar reference's
 * (isum = sum sc_g sum q x, q with q5_K's fifth bit, less 32 sum sc_l
 * bsum_l for q6_K; imin = sum m_g sum x, 0 for q6_K; exact whatever the
 * order), and the float steps
 * are k_tile's of cb_kq_x86_tmpl.h lane for lane: per super-block one
 * conversion of each, times the single rounding of d_w x d_x and of
 * dmin_w x -d_x, by FMA into two accumulators, and out = isum's + imin's.
 * tests/unit/test_pack.c compares every output bitwise with the gemm at
 * M = 1.
 */
#ifndef __CHECKER__
#include <immintrin.h>

#include "x86/cb_kq_x86_util.h"
#include "ops/cb_ops.h"
#include "ops/cb_ops_q.h"
#include "ops/cb_pack_walk.h"
#include "quant/cb_quant.h"

#define PKK_R CB_PK_ROWS	/* weight rows per tile */
#define PKK_MT 4	/* tokens per tile */
#define PKK_SB 384	/* packed bytes per super-block */
#define PKK_PREFETCH 512

void cb_avx512_vnni_pack_q8_K(void *dst, const void *src, int k)
{
	const struct cb_block_q8_K *xb = src;
	int nb = k / CB_QK_K, b, j, l;

	for (b = 0; b < nb; b++) {
		char *o = (char *)dst + (cb_size)b * PKK_SB;
		cb_s32 *ns = (cb_s32 *)(o + 256);
		cb_s16 *b32 = (cb_s16 *)(o + 320);

		__builtin_memset(o + 256, 0, PKK_SB - 256);
		for (j = 0; j < 4; j++)
			for (l = 0; l < 16; l++)
				__builtin_memcpy(o + 64 * j + 4 * l, xb[b].qs + 16 * l + 4 * j, 4);
		for (l = 0; l < 16; l++)
			ns[l] = -32 * (cb_s32)xb[b].bsums[l];
		for (l = 0; l < 8; l++)
			b32[l] = (cb_s16)(xb[b].bsums[2 * l] + xb[b].bsums[2 * l + 1]);
		__builtin_memcpy(o + 336, &xb[b].d_bits, 4);
	}
}

/* 128-bit lane r (a constant) of v */
static inline CB_ALWAYS_INLINE __m128i pkk_lane(__m512i v, int r)
{
	switch (r) {
	case 0: return _mm512_castsi512_si128(v);
	case 1: return _mm512_extracti32x4_epi32(v, 1);
	case 2: return _mm512_extracti32x4_epi32(v, 2);
	default: return _mm512_extracti32x4_epi32(v, 3);
	}
}

/*
 * q4_K: the four weight vectors of a row's super-block in the packed
 * order.  Lane l of vector j: group g = l / 2 is the nibble g % 2 of qs
 * chunk g / 2 (32 bytes), its bytes 16 (l % 2) + 4j ..: dword 8 (l / 4) +
 * 4 (l % 2) + j of qs, shifted right by 4 (g % 2).
 */
static inline CB_ALWAYS_INLINE void pkk_q4k_w(__m512i v[4], const cb_u8 *qs, const __m512i *ix,
					      __m512i cnt)
{
	const __m512i m4 = _mm512_set1_epi8(15);
	__m512i q0 = _mm512_loadu_si512(qs), q1 = _mm512_loadu_si512(qs + 64);
	int j;

#pragma GCC unroll 4
	for (j = 0; j < 4; j++)
		v[j] = _mm512_and_si512(_mm512_srlv_epi32(_mm512_permutex2var_epi32(q0, ix[j], q1),
							  cnt), m4);
}

/*
 * q5_K: q4_K's vectors, each byte or'ed with its fifth bit (bit 4).
 * Element 16l + 4j + i is weight 16 (l % 2) + 4j + i of group g = l / 2,
 * whose fifth bit is bit g of that qh byte: dword 4 (l % 2) + j of qh,
 * rotated left by 4 - g (mod 32: a rotate keeps each byte's bits in its
 * byte, where a shift by a lane's own count would lose the top byte's).
 */
static inline CB_ALWAYS_INLINE void pkk_q5k_w(__m512i v[4], const struct cb_block_q5_K *wb,
					      const __m512i *ix, __m512i cnt)
{
	const __m512i m10 = _mm512_set1_epi8(0x10);
	const __m512i ih = _mm512_set_epi32(4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0);
	const __m512i rh = _mm512_set_epi32(29, 29, 30, 30, 31, 31, 0, 0,
					    1, 1, 2, 2, 3, 3, 4, 4);
	/* qh and the first half of qs: only qh's dwords 0..7 are indexed */
	__m512i h = _mm512_loadu_si512(wb->qh);
	int j;

	pkk_q4k_w(v, wb->qs, ix, cnt);
#pragma GCC unroll 4
	for (j = 0; j < 4; j++) {
		__m512i hi = _mm512_permutexvar_epi32(_mm512_add_epi32(ih, _mm512_set1_epi32(j)),
						      h);

		v[j] = _mm512_or_si512(v[j], _mm512_and_si512(_mm512_rolv_epi32(hi, rh), m10));
	}
}

/*
 * q6_K: the same for q = ql | qh << 4 (0..63; the offset 32 comes off
 * through the packed -32 bsums).  Element 16l + 4j + i: half h = l / 8,
 * e = 16 (l % 8) + 4j + i; its low bits are nibble e / 64 of ql[64h + e %
 * 64], dword 16h + 4 (l % 4) + j of ql; its high bits are bits 2 (e / 32)
 * of qh[32h + e % 32], dword 8h + 4 (l % 2) + j of qh, rotated to bits 4, 5.
 */
static inline CB_ALWAYS_INLINE void pkk_q6k_w(__m512i v[4], const struct cb_block_q6_K *wb)
{
	const __m512i m4 = _mm512_set1_epi8(15), m30 = _mm512_set1_epi8(0x30);
	const __m512i il = _mm512_set_epi32(28, 24, 20, 16, 28, 24, 20, 16,
					    12, 8, 4, 0, 12, 8, 4, 0);
	const __m512i sl = _mm512_set_epi32(4, 4, 4, 4, 0, 0, 0, 0, 4, 4, 4, 4, 0, 0, 0, 0);
	const __m512i ih = _mm512_set_epi32(12, 8, 12, 8, 12, 8, 12, 8, 4, 0, 4, 0, 4, 0, 4, 0);
	const __m512i rh = _mm512_set_epi32(30, 30, 0, 0, 2, 2, 4, 4, 30, 30, 0, 0, 2, 2, 4, 4);
	__m512i l0 = _mm512_loadu_si512(wb->ql), l1 = _mm512_loadu_si512(wb->ql + 64);
	__m512i h = _mm512_loadu_si512(wb->qh);
	int j;

#pragma GCC unroll 4
	for (j = 0; j < 4; j++) {
		const __m512i jj = _mm512_set1_epi32(j);
		__m512i lo = _mm512_permutex2var_epi32(l0, _mm512_add_epi32(il, jj), l1);
		__m512i hi = _mm512_permutexvar_epi32(_mm512_add_epi32(ih, jj), h);

		v[j] = _mm512_or_si512(_mm512_and_si512(_mm512_srlv_epi32(lo, sl), m4),
				       _mm512_and_si512(_mm512_rolv_epi32(hi, rh), m30));
	}
}

/*
 * The [sc_0..7, m_0..7] bytes of rows 0..R-1 (q4_K scales at p + r * wrb),
 * row r in 128-bit lane r (the q4_K unpacking of cb_kq_x86_tmpl.h's
 * k4_scales); rows from R on are not read.
 */
static inline CB_ALWAYS_INLINE __m512i pkk_k4_scales(const char *p, cb_size wrb, int R)
{
	__m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)p));
	__m512i a, b;

	if (R > 1) {
		v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(p + wrb)), 1);
		v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(p + 2 * wrb)), 2);
		v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(p + 3 * wrb)), 3);
	}
	a = _mm512_shuffle_epi32(v, 0x98);
	b = _mm512_shuffle_epi32(v, 0x50);
	a = _mm512_srlv_epi32(a, _mm512_set4_epi32(4, 0, 0, 0));
	a = _mm512_and_si512(a, _mm512_set4_epi32(0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f));
	b = _mm512_and_si512(_mm512_srli_epi32(b, 2),
			     _mm512_set4_epi32(0x30303030, 0, 0x30303030, 0));
	return _mm512_or_si512(a, b);
}

/*
 * Four tokens' 16-lane vectors to one: 128-bit lane L, dword m = the sum
 * of lane L's four dwords of z[m].
 */
static inline CB_ALWAYS_INLINE __m512i pkk_reduce4(__m512i z0, __m512i z1, __m512i z2, __m512i z3)
{
	__m512i a = _mm512_add_epi32(_mm512_unpacklo_epi32(z0, z1), _mm512_unpackhi_epi32(z0, z1));
	__m512i b = _mm512_add_epi32(_mm512_unpacklo_epi32(z2, z3), _mm512_unpackhi_epi32(z2, z3));

	return _mm512_add_epi32(_mm512_unpacklo_epi64(a, b), _mm512_unpackhi_epi64(a, b));
}

/* Rows' pkk_reduce4 results to dword 4r + m: the sum of b[r]'s four lanes' dword m. */
static inline CB_ALWAYS_INLINE __m512i pkk_reduce_rows(const __m512i *b)
{
	__m512i c01 = _mm512_add_epi32(_mm512_shuffle_i64x2(b[0], b[1], 0x44),
				       _mm512_shuffle_i64x2(b[0], b[1], 0xee));
	__m512i c23 = _mm512_add_epi32(_mm512_shuffle_i64x2(b[2], b[3], 0x44),
				       _mm512_shuffle_i64x2(b[2], b[3], 0xee));

	return _mm512_add_epi32(_mm512_shuffle_i64x2(c01, c23, 0x88),
				_mm512_shuffle_i64x2(c01, c23, 0xdd));
}

/*
 * R rows x MT tokens of the q4_K, q5_K or q6_K gemm over nb super-blocks;
 * the packed token rows at pk, ps bytes apart.  Float lanes 4r + m.  q5_K
 * is q4_K's but for the fifth bit and the multiply: its lane sums reach
 * 16 x 31 x 127 = 62992 (and -63488 with x = -128), past a signed word,
 * so they are multiplied by the scale as dwords (vpmulld; vpmaddwd would
 * take the low word as signed).  q6_K: each lane's sum starts at the
 * token's -32 bsum, and is multiplied by its signed scale as a dword (it
 * may pass 16 bits); no mins (k_tile's imin lanes: 0, times dmin 0).
 */
static inline CB_ALWAYS_INLINE void pkk_tile(float *out, cb_size ldo, const char *w, cb_size wrb,
					     const char *pk, cb_size ps, int R, int MT, int nb,
					     int dt, int pf)
{
	static const cb_u16 mins_idx[32] CB_ALIGNED(64) = {
		8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31,
		40, 41, 42, 43, 44, 45, 46, 47, 56, 57, 58, 59, 60, 61, 62, 63,
	};
	const int q6 = dt == CB_DT_Q6_K, q5 = dt == CB_DT_Q5_K;
	const int wide = q6 || q5;	/* lane sums past a signed word: vpmulld */
	const cb_size bsz = q6 ? sizeof(struct cb_block_q6_K) : q5 ?
			    sizeof(struct cb_block_q5_K) : sizeof(struct cb_block_q4_K);
	/* pkk_q4k_w's dword indices and shifts */
	const __m512i cnt = _mm512_set_epi32(4, 4, 0, 0, 4, 4, 0, 0, 4, 4, 0, 0, 4, 4, 0, 0);
	const __m128i sc2 = _mm_setr_epi8(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
	__m512i ix[4];
	__m512 accd = _mm512_setzero_ps(), accm = _mm512_setzero_ps();
	float vd[16], vm[16];
	int b, r, m, j, o;

#pragma GCC unroll 4
	for (j = 0; j < 4; j++)
		ix[j] = _mm512_add_epi32(_mm512_set_epi32(28, 24, 28, 24, 20, 16, 20, 16,
							  12, 8, 12, 8, 4, 0, 4, 0),
					 _mm512_set1_epi32(j));

	for (b = 0; b < nb; b++) {
		const char *blk = w + (cb_size)b * bsz;
		const char *xp = pk + (cb_size)b * PKK_SB;
		__m512i s, bs[4], t, mn, sw0, sw1, tm[4];
		__m512 dwv, dmv, dxv, dw8;
		cb_u64 hd01 = 0, hd23 = 0, x01 = 0, x23 = 0;
		__m128i h8, b32;

		s = q6 ? _mm512_setzero_si512() : pkk_k4_scales(blk + 4, wrb, R);
#pragma GCC unroll 4
		for (r = 0; r < PKK_R; r++) {
			const char *wr = blk + r * wrb, *xr = xp;
			__m512i v[4], sc, z[PKK_MT];
			cb_u32 hd;

			bs[r] = _mm512_setzero_si512();
			if (r >= R)
				continue;
			/* one line ahead in the row into L1, the next row group's into L2 */
#pragma GCC unroll 4
			for (o = 0; o < (int)bsz; o += 64) {
				if (!pf)
					break;
				_mm_prefetch(wr + o + PKK_PREFETCH, _MM_HINT_T0);
				_mm_prefetch(wr + o + 4 * wrb, _MM_HINT_T1);
			}
			/* [d | dmin] (q6_K: [d | 0]) */
			hd = q6 ? (cb_u32)*(const cb_u16 *)(wr + 208) : cb_rd32(wr);
			if (r < 2)
				hd01 |= (cb_u64)hd << (32 * r);
			else
				hd23 |= (cb_u64)hd << (32 * (r - 2));
			if (q6) {
				pkk_q6k_w(v, (const void *)wr);
				/* lane l: scale l */
				sc = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)
									  (wr + 192)));
			} else {
				if (q5)
					pkk_q5k_w(v, (const void *)wr, ix, cnt);
				else
					pkk_q4k_w(v, (const cb_u8 *)wr + 16, ix, cnt);
				/* lane l: sc of group l / 2, a dword (a word and 0) */
				sc = _mm512_cvtepu8_epi32(_mm_shuffle_epi8(pkk_lane(s, r), sc2));
			}
			/* keep the tokens' quants in memory operands */
			__asm__("" : "+r"(xr));
#pragma GCC unroll 4
			for (m = 0; m < PKK_MT; m++) {
				const char *x = xr + m * ps;
				__m512i y;

				z[m] = _mm512_setzero_si512();
				if (m >= MT)
					continue;
				y = q6 ? _mm512_loadu_si512(x + 256) : _mm512_setzero_si512();
				y = _mm512_dpbusd_epi32(y, v[0], _mm512_loadu_si512(x));
				y = _mm512_dpbusd_epi32(y, v[1], _mm512_loadu_si512(x + 64));
				y = _mm512_dpbusd_epi32(y, v[2], _mm512_loadu_si512(x + 128));
				y = _mm512_dpbusd_epi32(y, v[3], _mm512_loadu_si512(x + 192));
				z[m] = wide ? _mm512_mullo_epi32(y, sc) : _mm512_madd_epi16(y, sc);
			}
			bs[r] = pkk_reduce4(z[0], z[1], z[2], z[3]);
		}
		t = pkk_reduce_rows(bs);

		/* imin, dword 4r + m: the rows' mins (words 8r + g) by the tokens' b32 */
		mn = _mm512_setzero_si512();
		if (!q6) {
			sw0 = _mm512_cvtepu8_epi16(_mm512_castsi512_si256(s));
			sw1 = _mm512_cvtepu8_epi16(_mm512_extracti64x4_epi64(s, 1));
			mn = _mm512_permutex2var_epi16(sw0, _mm512_load_si512(mins_idx), sw1);
		}
#pragma GCC unroll 4
		for (m = 0; m < PKK_MT; m++) {
			tm[m] = _mm512_setzero_si512();
			if (m >= MT)
				continue;
			if (!q6) {
				b32 = _mm_loadu_si128((const __m128i *)(xp + m * ps + 320));
				tm[m] = _mm512_madd_epi16(mn, _mm512_broadcast_i32x4(b32));
			}
			if (m < 2)
				x01 |= (cb_u64)cb_rd32(xp + m * ps + 336) << (32 * m);
			else
				x23 |= (cb_u64)cb_rd32(xp + m * ps + 336) << (32 * (m - 2));
		}
		mn = pkk_reduce4(tm[0], tm[1], tm[2], tm[3]);

		/* [d_r | dmin_r] of k_tile, to lanes 4r + m; d_x to lanes 4r + m */
		h8 = _mm_set_epi64x((long long)hd23, (long long)hd01);
		h8 = _mm_shuffle_epi8(h8, _mm_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13,
							2, 3, 6, 7, 10, 11, 14, 15));
		dw8 = _mm512_castps256_ps512(_mm256_cvtph_ps(h8));
		dwv = _mm512_permutexvar_ps(_mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2,
							     1, 1, 1, 1, 0, 0, 0, 0), dw8);
		dmv = _mm512_permutexvar_ps(_mm512_set_epi32(7, 7, 7, 7, 6, 6, 6, 6,
							     5, 5, 5, 5, 4, 4, 4, 4), dw8);
		dxv = _mm512_broadcast_f32x4(_mm_castsi128_ps(_mm_set_epi64x((long long)x23,
									     (long long)x01)));
		accd = _mm512_fmadd_ps(_mm512_cvtepi32_ps(t), _mm512_mul_ps(dwv, dxv), accd);
		dxv = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(dxv),
							   _mm512_set1_epi32(-0x7fffffff - 1)));
		accm = _mm512_fmadd_ps(_mm512_cvtepi32_ps(mn), _mm512_mul_ps(dmv, dxv), accm);
	}
	_mm512_storeu_ps(vd, accd);
	_mm512_storeu_ps(vm, accm);
#pragma GCC unroll 4
	for (r = 0; r < PKK_R; r++)
#pragma GCC unroll 4
		for (m = 0; m < PKK_MT; m++)
			if (r < R && m < MT)
				out[m * ldo + r] = vd[4 * r + m] + vm[4 * r + m];
}

CB_PK_TILE(pkk_tile, pkk_q4k, CB_DT_Q4_K, 4, 1, 0)
CB_PK_TILE(pkk_tile, pkk_q4k, CB_DT_Q4_K, 4, 2, 0)
CB_PK_TILE(pkk_tile, pkk_q4k, CB_DT_Q4_K, 4, 3, 0)
CB_PK_TILE(pkk_tile, pkk_q4k, CB_DT_Q4_K, 4, 4, 0)
CB_PK_TILE(pkk_tile, pkk_q4k, CB_DT_Q4_K, 4, 1, 1)
CB_PK_TILE(pkk_tile, pkk_q4k, CB_DT_Q4_K, 4, 2, 1)
CB_PK_TILE(pkk_tile, pkk_q4k, CB_DT_Q4_K, 4, 3, 1)
CB_PK_TILE(pkk_tile, pkk_q4k, CB_DT_Q4_K, 4, 4, 1)
CB_PK_TILE(pkk_tile, pkk_q4k, CB_DT_Q4_K, 1, 1, 1)
CB_PK_TILE(pkk_tile, pkk_q4k, CB_DT_Q4_K, 1, 2, 1)
CB_PK_TILE(pkk_tile, pkk_q4k, CB_DT_Q4_K, 1, 3, 1)
CB_PK_TILE(pkk_tile, pkk_q4k, CB_DT_Q4_K, 1, 4, 1)
static const cb_pk_tile_fn pkk_q4k[3 * 4] = CB_PK_TABLE_4x4(pkk_q4k);

CB_PK_TILE(pkk_tile, pkk_q5k, CB_DT_Q5_K, 4, 1, 0)
CB_PK_TILE(pkk_tile, pkk_q5k, CB_DT_Q5_K, 4, 2, 0)
CB_PK_TILE(pkk_tile, pkk_q5k, CB_DT_Q5_K, 4, 3, 0)
CB_PK_TILE(pkk_tile, pkk_q5k, CB_DT_Q5_K, 4, 4, 0)
CB_PK_TILE(pkk_tile, pkk_q5k, CB_DT_Q5_K, 4, 1, 1)
CB_PK_TILE(pkk_tile, pkk_q5k, CB_DT_Q5_K, 4, 2, 1)
CB_PK_TILE(pkk_tile, pkk_q5k, CB_DT_Q5_K, 4, 3, 1)
CB_PK_TILE(pkk_tile, pkk_q5k, CB_DT_Q5_K, 4, 4, 1)
CB_PK_TILE(pkk_tile, pkk_q5k, CB_DT_Q5_K, 1, 1, 1)
CB_PK_TILE(pkk_tile, pkk_q5k, CB_DT_Q5_K, 1, 2, 1)
CB_PK_TILE(pkk_tile, pkk_q5k, CB_DT_Q5_K, 1, 3, 1)
CB_PK_TILE(pkk_tile, pkk_q5k, CB_DT_Q5_K, 1, 4, 1)
static const cb_pk_tile_fn pkk_q5k[3 * 4] = CB_PK_TABLE_4x4(pkk_q5k);

CB_PK_TILE(pkk_tile, pkk_q6k, CB_DT_Q6_K, 4, 1, 0)
CB_PK_TILE(pkk_tile, pkk_q6k, CB_DT_Q6_K, 4, 2, 0)
CB_PK_TILE(pkk_tile, pkk_q6k, CB_DT_Q6_K, 4, 3, 0)
CB_PK_TILE(pkk_tile, pkk_q6k, CB_DT_Q6_K, 4, 4, 0)
CB_PK_TILE(pkk_tile, pkk_q6k, CB_DT_Q6_K, 4, 1, 1)
CB_PK_TILE(pkk_tile, pkk_q6k, CB_DT_Q6_K, 4, 2, 1)
CB_PK_TILE(pkk_tile, pkk_q6k, CB_DT_Q6_K, 4, 3, 1)
CB_PK_TILE(pkk_tile, pkk_q6k, CB_DT_Q6_K, 4, 4, 1)
CB_PK_TILE(pkk_tile, pkk_q6k, CB_DT_Q6_K, 1, 1, 1)
CB_PK_TILE(pkk_tile, pkk_q6k, CB_DT_Q6_K, 1, 2, 1)
CB_PK_TILE(pkk_tile, pkk_q6k, CB_DT_Q6_K, 1, 3, 1)
CB_PK_TILE(pkk_tile, pkk_q6k, CB_DT_Q6_K, 1, 4, 1)
static const cb_pk_tile_fn pkk_q6k[3 * 4] = CB_PK_TABLE_4x4(pkk_q6k);

CB_GEMM_PROTO(cb_avx512_vnni_gemm_pk_q4_K)
{
	cb_pk_walk(pkk_q4k, PKK_MT, out, ldo, w, w_row_bytes, act, act_stride, M, nrows,
		   k / CB_QK_K);
}

CB_GEMM_PROTO(cb_avx512_vnni_gemm_pk_q5_K)
{
	cb_pk_walk(pkk_q5k, PKK_MT, out, ldo, w, w_row_bytes, act, act_stride, M, nrows,
		   k / CB_QK_K);
}

CB_GEMM_PROTO(cb_avx512_vnni_gemm_pk_q6_K)
{
	cb_pk_walk(pkk_q6k, PKK_MT, out, ldo, w, w_row_bytes, act, act_stride, M, nrows,
		   k / CB_QK_K);
}
#endif /* __CHECKER__ */
