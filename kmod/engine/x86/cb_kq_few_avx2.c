// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_kq_few_avx2.c - the q4_K and q6_K gemms of the AVX2 variants at a few
 * tokens (M = 2 to 4, or more in tiles of 2 to 4): batched decode, where
 * each routed expert of a step sees about two tokens (docs/performance.md
 * (v)).  The avx2 and avx512 (no VNNI) tables take them as gemm[q4_K] and
 * gemm[q6_K]; M = 1 goes on to the variant's own decode tile, rows left
 * over after the groups of 4 to its k_tile.
 *
 * The 256-bit decode tile (cb_kq_dec_x86_tmpl.h) with the tokens inside:
 * per super-block and row, the quants are unpacked and the sub-block
 * scales broadcast to words once (q4_K: a vpshufb of the row's scale bytes
 * per 32 weights; q6_K: the 6-bit unpacking and a vpshufb of the scale
 * words), and for each of the MT tokens (read from L1 as memory operands)
 * a vpmaddubsw, a vpmaddwd by the scales and a vpaddd per 32 weights; the
 * q4_K mins are one vpmaddwd per row and token against the token's
 * 16-sums, the q6_K offset 32 the running sum's start (-32 sc as words by
 * the 16-sums).  The packed tile (cb_pack_k_avx2.c) transposes each weight
 * row for all its tokens (24 unpacks per row and super-block): cheaper per
 * token, dearer per row, and it costs 153 instructions per row and
 * super-block at two tokens where this tile needs about 100.
 *
 * Per token the four rows' integer sums are reduced to one vector
 * [isum r0, imin r0, isum r1, imin r1 | the same for r2, r3] (q6_K: imin 0)
 * and scaled by one FMA with [d_r dx, -dmin_r dx, ...]: k_tile's float
 * steps, in other lanes (the bit contract of cb_ops.h: per super-block one
 * conversion of each sum, times the single rounding of d_w x d_x and of
 * dmin_w x -d_x, FMA into two accumulators, out = isum's + imin's; q6_K's
 * imin lane is k_tile's 0 x (0 x -d_x)).  So a (row, token) has the same
 * bits here as in the decode tile and the packed one; tests/unit/test_pack.c
 * and test_ops_q.c compare them bitwise.
 *
 * Prefetches as k_tile's (one line ahead in the row into L1, the next row
 * group's line into L2), by the first token tile of a row group only.
 */
#ifndef __CHECKER__
#include <immintrin.h>

#include "x86/cb_kq_x86_util.h"
#include "ops/cb_math.h"
#include "ops/cb_ops.h"
#include "ops/cb_ops_q.h"
#include "quant/cb_quant.h"

#define KF_MT 4		/* tokens per tile at most */
#define KF_PREFETCH 512

/*
 * vpmaddubsw of the unsigned bytes u by the 32 signed bytes at p, with p
 * as the instruction's memory operand: GCC loads the tokens' vectors early
 * into registers instead, runs out of them and spills them to the stack.
 */
static inline CB_ALWAYS_INLINE __m256i kf_maddubs_m(__m256i u, const void *p)
{
	__m256i r;

	__asm__("vpmaddubsw %2, %1, %0"
		: "=x"(r) : "x"(u), "m"(*(const struct { char b[32]; } *)p));
	return r;
}

/* vpshufb control: every word = byte i of its 128-bit lane, zero-extended */
static inline CB_ALWAYS_INLINE __m256i kf_bword(int i)
{
	return _mm256_set1_epi16((short)(0x8000 | i));
}

/* One row's block of n bytes at p: k_tile's prefetches. */
static inline CB_ALWAYS_INLINE void kf_prefetch(const char *p, cb_size wrb, int n)
{
	int o;

#pragma GCC unroll 4
	for (o = 0; o < n; o += 64) {
		_mm_prefetch(p + o + KF_PREFETCH, _MM_HINT_T0);
		_mm_prefetch(p + o + 4 * wrb, _MM_HINT_T1);
	}
}

/*
 * A row's 8-lane sum z and second sum n (q4_K: its mins) folded to
 * [z0 + z2, n0 + n2, z1 + z3, n1 + n3] in each 128-bit lane.
 */
static inline CB_ALWAYS_INLINE __m256i kf_zip(__m256i z, __m256i n)
{
	return _mm256_add_epi32(_mm256_unpacklo_epi32(z, n), _mm256_unpackhi_epi32(z, n));
}

/* Rows a, b's kf_zip results to [z_a, n_a, z_b, n_b] in each 128-bit lane. */
static inline CB_ALWAYS_INLINE __m256i kf_pair(__m256i a, __m256i b)
{
	return _mm256_add_epi32(_mm256_unpacklo_epi64(a, b), _mm256_unpackhi_epi64(a, b));
}

/*
 * The two pairs' lanes added: [z0 n0 z1 n1 | z2 n2 z3 n3], converted and
 * scaled into acc: acc + t * (dw * [dx, -dx, ...]).  dw = [d0 dmin0 d1
 * dmin1 | d2 dmin2 d3 dmin3] as floats; the sign of -dx by a xor, as the
 * negation of k_tile does.
 */
static inline CB_ALWAYS_INLINE __m256 kf_fma(__m256 acc, __m256i p01, __m256i p23, __m256 dw,
					     const struct cb_block_q8_K *xb)
{
	const __m256 dx = _mm256_xor_ps(_mm256_castsi256_ps(_mm256_set1_epi32((int)xb->d_bits)),
					_mm256_setr_ps(0.0f, -0.0f, 0.0f, -0.0f,
						       0.0f, -0.0f, 0.0f, -0.0f));
	__m256i t = _mm256_add_epi32(_mm256_permute2x128_si256(p01, p23, 0x20),
				     _mm256_permute2x128_si256(p01, p23, 0x31));

	return _mm256_fmadd_ps(_mm256_cvtepi32_ps(t), _mm256_mul_ps(dw, dx), acc);
}

/* out[m * ldo + r] = lane 4 (r / 2) + 2 (r % 2) + its neighbour: isum's + imin's */
static inline CB_ALWAYS_INLINE void kf_store(float *out, cb_size ldo, const __m256 *acc, int MT)
{
	float v[8];
	int m, r;

#pragma GCC unroll 4
	for (m = 0; m < KF_MT; m++) {
		if (m >= MT)
			continue;
		_mm256_storeu_ps(v, acc[m]);
#pragma GCC unroll 4
		for (r = 0; r < 4; r++)
			out[m * ldo + r] = v[2 * r] + v[2 * r + 1];
	}
}

/*
 * q4_K, 4 rows x MT tokens over nb super-blocks; the token rows at act,
 * as bytes apart.  qs[32i ..]: low nibbles group 2i, high nibbles 2i + 1.
 */
static inline CB_ALWAYS_INLINE void kf_q4k(float *out, cb_size ldo, const char *w, cb_size wrb,
					   const char *act, cb_size as, int MT, int nb, int pf)
{
	const __m256i m4 = _mm256_set1_epi8(15);
	/* words 2j, 2j + 1: min j (byte 8 + j), for the 16-sums 2j and 2j + 1 */
	const __m256i mi = _mm256_setr_epi16(0x8008, 0x8008, 0x8009, 0x8009, 0x800a, 0x800a,
					     0x800b, 0x800b, 0x800c, 0x800c, 0x800d, 0x800d,
					     0x800e, 0x800e, 0x800f, 0x800f);
	__m256 acc[KF_MT];
	int b, r, m, i;

#pragma GCC unroll 4
	for (m = 0; m < KF_MT; m++)
		acc[m] = _mm256_setzero_ps();
	for (b = 0; b < nb; b++) {
		const char *blk = w + (cb_size)b * sizeof(struct cb_block_q4_K);
		const char *xa = act + (cb_size)b * sizeof(struct cb_block_q8_K);
		__m256i s2 = _mm256_setzero_si256(), rp[KF_MT], pr[2][KF_MT];
		__m128i h;
		__m256 dw;

#pragma GCC unroll 4
		for (r = 0; r < 4; r++) {
			const struct cb_block_q4_K *wb = (const void *)(blk + r * wrb);
			const char *xr = xa;
			__m256i z[KF_MT], sb;

			/* the tokens from L1 per row, as memory operands */
			__asm__("" : "+r"(xr));
			if (r % 2 == 0)
				s2 = cb_k4_scales2(blk + r * wrb + 4, wrb);
			sb = _mm256_permute4x64_epi64(s2, r % 2 ? 0xee : 0x44);
			if (pf)
				kf_prefetch(blk + r * wrb, wrb, sizeof(struct cb_block_q4_K));
#pragma GCC unroll 4
			for (i = 0; i < 4; i++) {
				__m256i q = cb_ld256(wb->qs + 32 * i);
				__m256i lo = _mm256_and_si256(q, m4);
				__m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
				__m256i sl = _mm256_shuffle_epi8(sb, kf_bword(2 * i));
				__m256i sh = _mm256_shuffle_epi8(sb, kf_bword(2 * i + 1));

				__asm__("" : "+r"(xr));	/* and per 64 weights */
#pragma GCC unroll 4
				for (m = 0; m < KF_MT; m++) {
					const cb_s8 *xq;
					__m256i pl, ph;

					if (m >= MT)
						continue;
					xq = ((const struct cb_block_q8_K *)(const void *)
					      (xr + m * as))->qs + 64 * i;
					pl = _mm256_madd_epi16(kf_maddubs_m(lo, xq), sl);
					ph = _mm256_madd_epi16(kf_maddubs_m(hi, xq + 32), sh);
					z[m] = i ? _mm256_add_epi32(z[m], pl) : pl;
					z[m] = _mm256_add_epi32(z[m], ph);
					/* one running sum per token, not a tree */
					__asm__("" : "+x"(z[m]));
				}
			}
			sb = _mm256_shuffle_epi8(sb, mi);
#pragma GCC unroll 4
			for (m = 0; m < KF_MT; m++) {
				const struct cb_block_q8_K *xb;
				__m256i t;

				if (m >= MT)
					continue;
				xb = (const void *)(xr + m * as);
				t = kf_zip(z[m], _mm256_madd_epi16(sb, cb_ld256(xb->bsums)));
				if (r % 2 == 0)
					rp[m] = t;
				else
					pr[r / 2][m] = kf_pair(rp[m], t);
			}
		}
		/* [d_r | dmin_r] of the four rows, in the lanes of their sums */
		h = _mm_setr_epi32((int)cb_rd32(blk), (int)cb_rd32(blk + wrb),
				   (int)cb_rd32(blk + 2 * wrb), (int)cb_rd32(blk + 3 * wrb));
		dw = _mm256_cvtph_ps(h);
#pragma GCC unroll 4
		for (m = 0; m < KF_MT; m++)
			if (m < MT)
				acc[m] = kf_fma(acc[m], pr[0][m], pr[1][m], dw,
						(const void *)(xa + m * as));
	}
	kf_store(out, ldo, acc, MT);
}

/* q6_K: half h's four groups 4h + p as unsigned bytes 0..63 (dec2_q6k_row's unpacking) */
static inline CB_ALWAYS_INLINE void kf_q6k_half(__m256i *q, const struct cb_block_q6_K *wb, int h)
{
	const __m256i m4 = _mm256_set1_epi8(15), m2 = _mm256_set1_epi8(0x30);
	const __m256i l0 = cb_ld256(wb->ql + 64 * h), l1 = cb_ld256(wb->ql + 64 * h + 32);
	const __m256i hb = cb_ld256(wb->qh + 32 * h);

	q[0] = _mm256_or_si256(_mm256_and_si256(l0, m4),
			       _mm256_and_si256(_mm256_slli_epi16(hb, 4), m2));
	q[1] = _mm256_or_si256(_mm256_and_si256(l1, m4),
			       _mm256_and_si256(_mm256_slli_epi16(hb, 2), m2));
	q[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4),
			       _mm256_and_si256(hb, m2));
	q[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4),
			       _mm256_and_si256(_mm256_srli_epi16(hb, 2), m2));
}

/*
 * q6_K, 4 rows x MT tokens over nb super-blocks.  Half h: ql[64h + 32i ..]
 * holds groups 4h + i (low nibbles) and 4h + 2 + i (high nibbles), i = 0,
 * 1; bits 2p, 2p + 1 of qh[32h ..] are the top bits of group 4h + p.
 * Group g takes scale words 2g (its first 16 weights, low lane) and 2g + 1
 * (high lane): a vpshufb of the half's eight words, in both lanes.
 */
static inline CB_ALWAYS_INLINE void kf_q6k(float *out, cb_size ldo, const char *w, cb_size wrb,
					   const char *act, cb_size as, int MT, int nb, int pf)
{
	__m256 acc[KF_MT];
	int b, r, m, g;

#pragma GCC unroll 4
	for (m = 0; m < KF_MT; m++)
		acc[m] = _mm256_setzero_ps();
	for (b = 0; b < nb; b++) {
		const char *blk = w + (cb_size)b * sizeof(struct cb_block_q6_K);
		const char *xa = act + (cb_size)b * sizeof(struct cb_block_q8_K);
		__m256i rp[KF_MT], pr[2][KF_MT];
		__m128i dh;
		__m256 dw;

#pragma GCC unroll 4
		for (r = 0; r < 4; r++) {
			const struct cb_block_q6_K *wb = (const void *)(blk + r * wrb);
			const char *xr = xa;
			const __m256i sw = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)
										wb->scales));
			/* -32 sc as words: the offset's start, by the 16-sums */
			const __m256i so = _mm256_sub_epi16(_mm256_setzero_si256(),
							    _mm256_slli_epi16(sw, 5));
			__m256i z[KF_MT], q[4], sh = sw;

			__asm__("" : "+r"(xr));	/* the tokens from L1 per row */
			if (pf)
				kf_prefetch(blk + r * wrb, wrb, sizeof(struct cb_block_q6_K));
#pragma GCC unroll 4
			for (m = 0; m < KF_MT; m++) {
				const struct cb_block_q8_K *xb = (const void *)(xr + m * as);

				if (m < MT)
					z[m] = _mm256_madd_epi16(so, cb_ld256(xb->bsums));
			}
#pragma GCC unroll 8
			for (g = 0; g < 8; g++) {
				const __m256i c = _mm256_load_si256((const void *)cb_q6k_scale_ctl(g % 4));

				if (g % 4 == 0) {	/* half g / 4: its scales, its quants */
					sh = _mm256_permute4x64_epi64(sw, g ? 0xee : 0x44);
					kf_q6k_half(q, wb, g / 4);
				}
#pragma GCC unroll 4
				for (m = 0; m < KF_MT; m++) {
					const char *xm = xr + m * as;
					__m256i t;

					if (m >= MT)
						continue;
					t = kf_maddubs_m(q[g % 4], ((const struct cb_block_q8_K *)
								    (const void *)xm)->qs + 32 * g);
					t = _mm256_madd_epi16(t, _mm256_shuffle_epi8(sh, c));
					z[m] = _mm256_add_epi32(z[m], t);
					__asm__("" : "+x"(z[m]));
				}
				__asm__("" : "+r"(xr));
			}
#pragma GCC unroll 4
			for (m = 0; m < KF_MT; m++) {
				__m256i t;

				if (m >= MT)
					continue;
				t = kf_zip(z[m], _mm256_setzero_si256());
				if (r % 2 == 0)
					rp[m] = t;
				else
					pr[r / 2][m] = kf_pair(rp[m], t);
			}
		}
		/* [d_r | 0]: d at byte 208, read with the two bytes before it */
		dh = _mm_setr_epi32((int)cb_rd32(blk + 206), (int)cb_rd32(blk + wrb + 206),
				    (int)cb_rd32(blk + 2 * wrb + 206),
				    (int)cb_rd32(blk + 3 * wrb + 206));
		dw = _mm256_cvtph_ps(_mm_srli_epi32(dh, 16));
#pragma GCC unroll 4
		for (m = 0; m < KF_MT; m++)
			if (m < MT)
				acc[m] = kf_fma(acc[m], pr[0][m], pr[1][m], dw,
						(const void *)(xa + m * as));
	}
	kf_store(out, ldo, acc, MT);
}

typedef void (*kf_tile_fn)(float *out, cb_size ldo, const char *w, cb_size wrb,
			   const char *act, cb_size as, int nb);

#define KF_TILE(t, MT, pf)							\
static CB_NOINLINE void kf_##t##_4x##MT##_##pf(float *out, cb_size ldo, const char *w,	\
					       cb_size wrb, const char *act,	\
					       cb_size as, int nb)		\
{ kf_##t(out, ldo, w, wrb, act, as, MT, nb, pf); }

KF_TILE(q4k, 2, 1) KF_TILE(q4k, 3, 1) KF_TILE(q4k, 4, 1)
KF_TILE(q4k, 2, 0) KF_TILE(q4k, 3, 0) KF_TILE(q4k, 4, 0)
KF_TILE(q6k, 2, 1) KF_TILE(q6k, 3, 1) KF_TILE(q6k, 4, 1)
KF_TILE(q6k, 2, 0) KF_TILE(q6k, 3, 0) KF_TILE(q6k, 4, 0)

/* [type: q4_K, q6_K][prefetch: no, yes][tokens - 2] */
static const kf_tile_fn kf_tiles[2][2][KF_MT - 1] = {
	{ { kf_q4k_4x2_0, kf_q4k_4x3_0, kf_q4k_4x4_0 },
	  { kf_q4k_4x2_1, kf_q4k_4x3_1, kf_q4k_4x4_1 } },
	{ { kf_q6k_4x2_0, kf_q6k_4x3_0, kf_q6k_4x4_0 },
	  { kf_q6k_4x2_1, kf_q6k_4x3_1, kf_q6k_4x4_1 } },
};

/*
 * Row groups of 4 outside, token tiles inside, as even as they go (the
 * fewest of at most KF_MT tokens: M >= 2 never makes a tile of one); the
 * first token tile of a row group prefetches.  M = 1 and the rows left
 * over go to the variant's own gemm (@base), with the same bits.
 */
static inline CB_ALWAYS_INLINE void kf_gemm(int t, cb_gemm_fn base, float *out, cb_size ldo,
					    const void *w, cb_size wrb, const void *act,
					    cb_size as, int M, int nrows, int k)
{
	const char *wc = w, *ac = act;
	int nb = k / CB_QK_K, r0, m0, mt;

	if (M < 2) {
		base(out, ldo, w, wrb, act, as, M, nrows, k);
		return;
	}
	for (r0 = 0; r0 + 4 <= nrows; r0 += 4)
		for (m0 = 0; m0 < M; m0 += mt) {
			int n = (M - m0 + KF_MT - 1) / KF_MT;

			mt = (M - m0 + n - 1) / n;
			kf_tiles[t][m0 == 0][mt - 2](out + (cb_size)m0 * ldo + r0, ldo,
						     wc + (cb_size)r0 * wrb, wrb,
						     ac + (cb_size)m0 * as, as, nb);
		}
	if (r0 < nrows)
		base(out + r0, ldo, wc + (cb_size)r0 * wrb, wrb, act, as, M, nrows - r0, k);
}

CB_GEMM_PROTO(cb_avx2_gemm_few_q4_K)
{
	kf_gemm(0, cb_avx2_gemm_q4_K, out, ldo, w, w_row_bytes, act, act_stride, M, nrows, k);
}

CB_GEMM_PROTO(cb_avx2_gemm_few_q6_K)
{
	kf_gemm(1, cb_avx2_gemm_q6_K, out, ldo, w, w_row_bytes, act, act_stride, M, nrows, k);
}

CB_GEMM_PROTO(cb_avx512_gemm_few_q4_K)
{
	kf_gemm(0, cb_avx512_gemm_q4_K, out, ldo, w, w_row_bytes, act, act_stride, M, nrows, k);
}

CB_GEMM_PROTO(cb_avx512_gemm_few_q6_K)
{
	kf_gemm(1, cb_avx512_gemm_q6_K, out, ldo, w, w_row_bytes, act, act_stride, M, nrows, k);
}
#endif /* __CHECKER__ */
