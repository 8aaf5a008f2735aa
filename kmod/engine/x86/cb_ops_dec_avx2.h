/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_ops_dec_avx2.h - the decode tile (4 rows x 1 token) of the AVX2
 * variant's q4_0 gemm.  cb_ops_avx2.c includes it before cb_ops_x86_tmpl.h,
 * whose q_tile calls it (Q_DEC_TILE) for R = 4, MT = 1.
 *
 * The float steps are q_tile's at MT = 1, in the same order: per block
 * the four rows' d_w converted together and multiplied by d_x (one
 * vmulps: s_r = d_w[r] d_x), per row the block's 8 int32 lane sums (lane
 * j: the products of elements 4j .. 4j + 3) converted and added by one FMA
 * with s_r into the row's 8-lane accumulator, block after block; out = the
 * accumulator's sum in hsum256's order.  So a (row, token) has the same
 * bits in this tile as in any other of the variant.
 *
 * What changes is the work around them (docs/performance.md (n)):
 *
 * - the 16 quant bytes are broadcast to both 128-bit lanes by the load;
 *   one vpsrlvq (0 in the low lane, 4 in the high lane) and one vpand give
 *   the low nibbles (elements 0..15) and the high ones (16..31), where
 *   q_tile takes two 128-bit halves and an insert;
 * - sum (n - 8) x = sum n x - 8 sum x comes off in 16 bits: one vpsubw
 *   per row of the token's 8 (x_2i + x_2i+1), shared by the rows, before
 *   the vpmaddwd (|n x| pairs <= 3810, 8 x pairs <= 2032: no overflow);
 * - each row takes s_r by a broadcast load from the block's four products
 *   on the stack instead of a vpermps: the load ports have room, the
 *   vector ports do not;
 * - the prefetches (q_tile's lines: Q_PREFETCH ahead in the row into L1,
 *   the next row group's into L2) come once per two blocks (36 bytes of a
 *   row) instead of once per block.
 *
 * q8_0 keeps q_tile at MT = 1: the same changes (without the unpacking)
 * measured no faster there.
 */

#ifndef Q_PREFETCH
#define Q_PREFETCH 512
#endif

/* The 32 q4_0 nibbles n of a block in element order, as bytes. */
static inline CB_ALWAYS_INLINE __m256i avx2_qd_q4(const char *blk)
{
	__m256i q = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(blk + 2)));

	q = _mm256_srlv_epi64(q, _mm256_setr_epi64x(0, 0, 4, 4));
	return _mm256_and_si256(q, _mm256_set1_epi8(15));
}

/* hsum256 of cb_ops_x86_tmpl.h: the same additions in the same order. */
static inline CB_ALWAYS_INLINE float avx2_qd_hsum(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));

	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

/* The four rows' prefetches for the block at byte off. */
static inline CB_ALWAYS_INLINE void avx2_qd_prefetch(const char *w, cb_size wrb, cb_size off)
{
	int r;

#pragma GCC unroll 4
	for (r = 0; r < 4; r++) {
		_mm_prefetch(w + r * wrb + off + Q_PREFETCH, _MM_HINT_T0);
		_mm_prefetch(w + (4 + r) * wrb + off, _MM_HINT_T1);
	}
}

/* Block b of the four rows into acc[0..3]: q_tile's float steps at MT = 1. */
static inline CB_ALWAYS_INLINE void avx2_qd_block(__m256 *acc, const char *w, cb_size wrb,
						  const char *act, int b)
{
	const struct cb_block_q8_0 *xb = (const struct cb_block_q8_0 *)act + b;
	const cb_size off = (cb_size)b * sizeof(struct cb_block_q4_0);
	const __m256i x = _mm256_loadu_si256((const __m256i *)xb->qs);
	const __m256i b16 = _mm256_maddubs_epi16(_mm256_set1_epi8(8), x);
	float sv[4] CB_ALIGNED(16);
	const float *sp = sv;
	cb_u64 hd = 0;
	int r;

	/* q_tile's s: the four d_w converted together, times d_x */
#pragma GCC unroll 4
	for (r = 0; r < 4; r++)
		hd |= (cb_u64)*(const cb_u16 *)(w + r * wrb + off) << (16 * r);
	_mm_store_ps(sv, _mm_mul_ps(_mm_cvtph_ps(_mm_cvtsi64_si128((long long)hd)),
				    _mm_set1_ps(_cvtsh_ss(xb->d))));
	/* read back through sp: broadcast loads, not register shuffles */
	__asm__("" : "+r"(sp) : "m"(sv));
#pragma GCC unroll 4
	for (r = 0; r < 4; r++) {
		__m256i p = _mm256_maddubs_epi16(avx2_qd_q4(w + r * wrb + off), x);

		p = _mm256_madd_epi16(_mm256_sub_epi16(p, b16), _mm256_set1_epi16(1));
		acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_broadcast_ss(sp + r),
					 acc[r]);
	}
}

/* Q_DEC_TILE of cb_ops_x86_tmpl.h: 4 rows x 1 token of q4_0 over nb blocks. */
static inline CB_ALWAYS_INLINE void avx2_q_dec_tile(float *out, const char *w, cb_size wrb,
						    const char *act, int nb)
{
	__m256 acc[4];
	int b, r;

#pragma GCC unroll 4
	for (r = 0; r < 4; r++)
		acc[r] = _mm256_setzero_ps();
	for (b = 0; b + 2 <= nb; b += 2) {	/* 36 bytes of each row: one line */
		avx2_qd_prefetch(w, wrb, (cb_size)b * sizeof(struct cb_block_q4_0));
		avx2_qd_block(acc, w, wrb, act, b);
		avx2_qd_block(acc, w, wrb, act, b + 1);
	}
	if (b < nb) {
		avx2_qd_prefetch(w, wrb, (cb_size)b * sizeof(struct cb_block_q4_0));
		avx2_qd_block(acc, w, wrb, act, b);
	}
#pragma GCC unroll 4
	for (r = 0; r < 4; r++)
		out[r] = avx2_qd_hsum(acc[r]);
}
