/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_kq_dec_x86_tmpl.h - the decode tiles (4 rows x 1 token) of q4_K,
 * q5_K and q6_K on 512-bit vectors for the AVX-512 instances of
 * cb_kq_x86_tmpl.h, and on 256-bit vectors for the AVX2 one.  cb_kq_x86_tmpl.h
 * includes this file and calls KQ(dec_tile) from its k_tile when
 * KQ(dec_has) says so.  Same KQ(), KQ_VNNI, KQ_PERMW as there.
 *
 * Decode runs the M = 1 tiles only, and there the 256-bit k_tile spends
 * most of its instructions around the products: per 32-weight group a
 * scale broadcast, per row the scale decoding, the offset or min dot
 * product and half of a transpose.  Here, per super-block:
 *
 * - the token's 256 bytes are loaded once for the four rows, as four zmm
 *   in the order of the weights' 64-byte vectors (q4_K: the low nibbles of
 *   qs[0..63] are elements 0..31 and 64..95; q6_K: element order);
 * - the scales (and q4_K's mins) of the four rows are decoded together,
 *   one row per 128-bit lane, and widened to words once;
 * - per row and 64 weights: the unpacking, one vpmaddubsw and one
 *   vpdpwssd (vpmaddwd + vpaddd without VNNI) against the sub-block scales
 *   permuted to the words they go with (one vpermw);
 * - q4_K's mins and q6_K's offset 32: one vpmaddwd for the four rows
 *   (the rows' mins against the token's sums of 32) or one per row;
 * - the four rows' 16-lane sums are reduced in one tree that ends in the
 *   vector [isum r0..3 | imin r0..3] of the 256-bit tile;
 * - q5_K is q4_K (same scales, mins and qs layout) with the fifth bit of
 *   each weight added to its nibble: per 64 weights one vptestmb of the
 *   row's qh[32] (both halves) and one masked vpaddb.
 *
 * The integers are the scalar reference's, and the float steps are
 * k_tile's, lane for lane: one conversion, the product [d_r dx | -dmin_r
 * dx], one FMA into the same accumulator lanes, out = lane r + lane r + 4.
 * So a (row, token) gives the same bits in this tile as in any other.
 *
 * AVX2 (q4_K, q5_K): the same order of work on ymm, without the permutes:
 * the token is read from L1 per row (16 registers), 32 weights cost the
 * unpacking (q5_K: and its fifth bits, k_tile's bitmove and an or), a
 * vpmaddubsw, a vpshufb of the row's scale bytes into words
 * and vpmaddwd + vpaddd; per row one vpmaddwd of its mins (each twice)
 * against the token's 16-sums, and one tree for the eight 8-lane sums.
 * q6_K: per row the scales widened to words once (vpmovsxbw), the offset
 * 32 as the running sum's start (-32 sum sc bsum: one vpmaddwd and a
 * shift), and per 32 weights the unpacking (4 to 5 operations), a
 * vpmaddubsw, a vpshufb of the half's scale words and vpmaddwd + vpaddd;
 * one tree for the four rows' sums, which has no mins: [isum r0..3 | 0].
 */

/*
 * The four rows' [d | dmin] as floats, k_tile's dw: the halves at p and
 * p + 2 (q4_K), or [d | 0] with d at p + 2 (q6_K).
 */
static inline CB_ALWAYS_INLINE __m256 KQ(dec_dw)(const char *p, cb_size wrb, int mins)
{
	__m128i h = _mm_cvtsi32_si128((int)cb_rd32(p));

	h = _mm_insert_epi32(h, (int)cb_rd32(p + wrb), 1);
	h = _mm_insert_epi32(h, (int)cb_rd32(p + 2 * wrb), 2);
	h = _mm_insert_epi32(h, (int)cb_rd32(p + 3 * wrb), 3);
	if (mins)
		h = _mm_shuffle_epi8(h, _mm_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13,
						      2, 3, 6, 7, 10, 11, 14, 15));
	else
		h = _mm_shuffle_epi8(h, _mm_setr_epi8(2, 3, 6, 7, 10, 11, 14, 15,
						      -1, -1, -1, -1, -1, -1, -1, -1));
	return _mm256_cvtph_ps(h);
}

/* acc + t * [d_r dx | -dmin_r dx], k_tile's float steps. */
static inline CB_ALWAYS_INLINE __m256 KQ(dec_fma)(__m256 acc, __m256i t, __m256 dw,
						  const struct cb_block_q8_K *xb)
{
	/* [dx x 4 | -dx x 4]: the sign flipped by a xor, as negation does */
	const __m256 dx = _mm256_xor_ps(_mm256_castsi256_ps(_mm256_set1_epi32((int)xb->d_bits)),
					_mm256_setr_ps(0.0f, 0.0f, 0.0f, 0.0f,
						       -0.0f, -0.0f, -0.0f, -0.0f));
	__m256 s = _mm256_mul_ps(dw, dx);

	return _mm256_fmadd_ps(_mm256_cvtepi32_ps(t), s, acc);
}

/*
 * One row's prefetches for a block of n bytes (one line ahead in the row
 * into L1, the next row group's line into L2), k_tile's lines: one every
 * 64 bytes of the block.
 */
static inline CB_ALWAYS_INLINE void KQ(dec_prefetch)(const char *p, cb_size wrb, int n)
{
	int o;

#pragma GCC unroll 4
	for (o = 0; o < n; o += 64) {
		_mm_prefetch(p + o + KQ_PREFETCH, _MM_HINT_T0);
		_mm_prefetch(p + o + 4 * wrb, _MM_HINT_T1);
	}
}

#if KQ_PERMW

#undef KQ_DOTZ
#if KQ_VNNI
#define KQ_DOTZ(acc, p, s) _mm512_dpwssd_epi32(acc, p, s)
#else
#define KQ_DOTZ(acc, p, s) _mm512_add_epi32(acc, _mm512_madd_epi16(p, s))
#endif

static inline CB_ALWAYS_INLINE int KQ(dec_has)(int dt)
{
	return dt == CB_DT_Q4_K || dt == CB_DT_Q5_K || dt == CB_DT_Q6_K;
}

/* 32 bytes at p in the low half, 32 at q in the high half. */
static inline CB_ALWAYS_INLINE __m512i KQ(ld2x32)(const void *p, const void *q)
{
	return _mm512_inserti64x4(_mm512_castsi256_si512(cb_ld256(p)), cb_ld256(q), 1);
}

/* A vpermw index: words 0..15 take word a, words 16..31 word b. */
static inline CB_ALWAYS_INLINE __m512i KQ(idx2)(int a, int b)
{
	const int u = a | a << 16, v = b | b << 16;

	return _mm512_set_epi32(v, v, v, v, v, v, v, v, u, u, u, u, u, u, u, u);
}

/* A vpermw index: 128-bit lane j takes word a + j. */
static inline CB_ALWAYS_INLINE __m512i KQ(idx4)(int a)
{
	const int u = a | a << 16, v = (a + 1) * 0x10001, x = (a + 2) * 0x10001;
	const int y = (a + 3) * 0x10001;

	return _mm512_set_epi32(y, y, y, y, x, x, x, x, v, v, v, v, u, u, u, u);
}

/* The 16 bytes at p + r * wrb, r = 0..3, in 128-bit lane r. */
static inline CB_ALWAYS_INLINE __m512i KQ(ld4x16)(const char *p, cb_size wrb)
{
	__m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)p));

	v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(p + wrb)), 1);
	v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(p + 2 * wrb)), 2);
	return _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(p + 3 * wrb)), 3);
}

/*
 * The four rows' 16-lane sums z[r] less their parts in u, and a second sum
 * in q: [sum z_r - sum u_r | sum q_r], r = 0..3, where dword 4l + r of q
 * and u is row r's part l.
 */
static inline CB_ALWAYS_INLINE __m256i KQ(dec_reduce)(const __m512i *z, __m512i q, __m512i u)
{
	__m512i p01 = _mm512_add_epi32(_mm512_unpacklo_epi32(z[0], z[1]),
				       _mm512_unpackhi_epi32(z[0], z[1]));
	__m512i p23 = _mm512_add_epi32(_mm512_unpacklo_epi32(z[2], z[3]),
				       _mm512_unpackhi_epi32(z[2], z[3]));
	/* dword 4l + r: row r's part l */
	__m512i t = _mm512_sub_epi32(_mm512_add_epi32(_mm512_unpacklo_epi64(p01, p23),
						      _mm512_unpackhi_epi64(p01, p23)), u);
	/* [t0 + t2, t1 + t3, q0 + q2, q1 + q3] */
	__m512i s = _mm512_add_epi32(_mm512_shuffle_i64x2(t, q, 0x44),
				     _mm512_shuffle_i64x2(t, q, 0xee));

	s = _mm512_shuffle_i64x2(s, s, 0xd8);	/* [s0, s2, s1, s3] */
	return _mm256_add_epi32(_mm512_castsi512_si256(s), _mm512_extracti64x4_epi64(s, 1));
}

/* k4_scales of cb_kq_x86_tmpl.h in each 128-bit lane: [sc_0..7, m_0..7] bytes. */
static inline CB_ALWAYS_INLINE __m512i KQ(dec_k4_scales)(__m512i v)
{
	__m512i a = _mm512_shuffle_epi32(v, 0x98), b = _mm512_shuffle_epi32(v, 0x50);

	a = _mm512_srlv_epi32(a, _mm512_set4_epi32(4, 0, 0, 0));
	a = _mm512_and_si512(a, _mm512_set4_epi32(0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f));
	b = _mm512_and_si512(_mm512_srli_epi32(b, 2),
			     _mm512_set4_epi32(0x30303030, 0, 0x30303030, 0));
	return _mm512_or_si512(a, b);
}

/*
 * q5_K: w (one 64-byte vector of nibbles, groups (a, a + 2): element l of
 * each 256-bit half is element l of its group) with its fifth bits, bit a
 * (low half) and bit a + 2 (high half) of qh[l], as 16 added to the
 * nibble: one vptestmb and one masked vpaddb.
 */
static inline CB_ALWAYS_INLINE __m512i KQ(dec_bit5)(__m512i w, __m512i qh, int a)
{
	const __m512i sel = _mm512_inserti64x4(_mm512_set1_epi8((char)(1 << a)),
					       _mm256_set1_epi8((char)(1 << (a + 2))), 1);

	return _mm512_mask_add_epi8(w, _mm512_test_epi8_mask(qh, sel), w, _mm512_set1_epi8(16));
}

/*
 * The nibbles of v (m4: 15 in every byte) as weights of groups
 * (a, a + 2), with q5_K's fifth bits (q5) from qh.
 */
static inline CB_ALWAYS_INLINE __m512i KQ(dec_nib)(__m512i v, __m512i m4, const cb_u8 *qh,
						   int q5, int a)
{
	v = _mm512_and_si512(v, m4);
	if (q5)
		v = KQ(dec_bit5)(v, _mm512_broadcast_i64x4(cb_ld256(qh)), a);
	return v;
}

/*
 * q4_K and q5_K (q5: its fifth bits at qh): one row's 16-lane sum of
 * sc x (q . x) over its super-block, nibbles at qs.  q5_K's products stay
 * in vpmaddubsw's words: 2 x 31 x 128 < 2^15.
 */
static inline CB_ALWAYS_INLINE __m512i KQ(dec_q4k_row)(const cb_u8 *qs, const cb_u8 *qh, int q5,
						       const __m512i *x, __m512i sw, int o)
{
	const __m512i m4 = _mm512_set1_epi8(15);
	__m512i q0 = _mm512_loadu_si512(qs), q1 = _mm512_loadu_si512(qs + 64);
	__m512i z;

	/* the scale words of groups (0, 2), (1, 3), (4, 6), (5, 7) */
	z = _mm512_madd_epi16(_mm512_maddubs_epi16(KQ(dec_nib)(q0, m4, qh, q5, 0), x[0]),
			      _mm512_permutexvar_epi16(KQ(idx2)(o, o + 2), sw));
	z = KQ_DOTZ(z, _mm512_maddubs_epi16(KQ(dec_nib)(_mm512_srli_epi16(q0, 4), m4, qh, q5, 1),
					    x[1]),
		    _mm512_permutexvar_epi16(KQ(idx2)(o + 1, o + 3), sw));
	z = KQ_DOTZ(z, _mm512_maddubs_epi16(KQ(dec_nib)(q1, m4, qh, q5, 4), x[2]),
		    _mm512_permutexvar_epi16(KQ(idx2)(o + 4, o + 6), sw));
	return KQ_DOTZ(z, _mm512_maddubs_epi16(KQ(dec_nib)(_mm512_srli_epi16(q1, 4), m4, qh, q5,
							   5), x[3]),
		       _mm512_permutexvar_epi16(KQ(idx2)(o + 5, o + 7), sw));
}

/*
 * q4_K or q5_K (dt), 4 rows x 1 token over nb super-blocks.  The mins:
 * word 8l + 2r + k of mw is row r's min 2l + k, of bp the token's sum of
 * 32 over group 2l + k, so vpmaddwd gives dword 4l + r = row r's part l
 * of imin.
 */
static inline CB_ALWAYS_INLINE void KQ(dec_q4k)(float *out, const char *w, cb_size wrb,
						const char *act, int nb, int dt)
{
	static const cb_u16 mins_idx[32] CB_ALIGNED(64) = {
		8, 9, 24, 25, 40, 41, 56, 57, 10, 11, 26, 27, 42, 43, 58, 59,
		12, 13, 28, 29, 44, 45, 60, 61, 14, 15, 30, 31, 46, 47, 62, 63,
	};
	static const cb_u16 bp_idx[32] CB_ALIGNED(64) = {
		0, 2, 0, 2, 0, 2, 0, 2, 4, 6, 4, 6, 4, 6, 4, 6,
		8, 10, 8, 10, 8, 10, 8, 10, 12, 14, 12, 14, 12, 14, 12, 14,
	};
	__m256 acc = _mm256_setzero_ps();
	float v[8];
	int b, r;

	for (b = 0; b < nb; b++) {
		const struct cb_block_q8_K *xb = (const struct cb_block_q8_K *)act + b;
		const char *blk = w + (cb_size)b * KQ(blk_bytes)(dt);
		__m512i x[4], z[4], s, sw[2], bp, mn;

		x[0] = KQ(ld2x32)(xb->qs, xb->qs + 64);
		x[1] = KQ(ld2x32)(xb->qs + 32, xb->qs + 96);
		x[2] = KQ(ld2x32)(xb->qs + 128, xb->qs + 192);
		x[3] = KQ(ld2x32)(xb->qs + 160, xb->qs + 224);

		/* row r's [sc_0..7, m_0..7] bytes in lane r, then as words */
		s = KQ(dec_k4_scales)(KQ(ld4x16)(blk + 4, wrb));
		sw[0] = _mm512_cvtepu8_epi16(_mm512_castsi512_si256(s));	/* rows 0, 1 */
		sw[1] = _mm512_cvtepu8_epi16(_mm512_extracti64x4_epi64(s, 1));	/* rows 2, 3 */

#pragma GCC unroll 4
		for (r = 0; r < 4; r++) {
			const char *p = blk + r * wrb;

			KQ(dec_prefetch)(p, wrb, KQ(blk_bytes)(dt));
			z[r] = KQ(dec_q4k_row)(KQ(k4_qs)(p, dt), KQ(k5_qh)(p), dt == CB_DT_Q5_K, x,
					       sw[r / 2], 16 * (r % 2));
		}

		bp = _mm512_castsi256_si512(_mm256_madd_epi16(cb_ld256(xb->bsums),
							      _mm256_set1_epi16(1)));
		bp = _mm512_permutexvar_epi16(_mm512_load_si512(bp_idx), bp);
		mn = _mm512_permutex2var_epi16(sw[0], _mm512_load_si512(mins_idx), sw[1]);
		mn = _mm512_madd_epi16(mn, bp);
		acc = KQ(dec_fma)(acc, KQ(dec_reduce)(z, mn, _mm512_setzero_si512()),
				  KQ(dec_dw)(blk, wrb, 1), xb);
	}
	_mm256_storeu_ps(v, acc);
#pragma GCC unroll 4
	for (r = 0; r < 4; r++)
		out[r] = v[r] + v[r + 4];
}

/*
 * q6_K: one row's 16-lane sum of sc x (q . x), q = ql | qh << 4 unsigned
 * (0..63; the offset 32 comes off in dec_q6k).  Half h: the low nibbles
 * of ql[64h ..] are elements 128h .. 128h + 63, the high nibbles the next
 * 64; their top bits are qh[32h ..] at bits 0, 2 (low) and 4, 6 (high)
 * for the two 32-halves, moved to bits 4..5 by a shift per 256-bit half.
 * Sub-block 4v + j of vector v is its 128-bit lane j.
 */
static inline CB_ALWAYS_INLINE __m512i KQ(dec_q6k_row)(const struct cb_block_q6_K *wb,
						       const __m512i *x, __m512i sw, int o)
{
	const __m512i m4 = _mm512_set1_epi8(15), m2 = _mm512_set1_epi8(0x30);
	const __m512i sl = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1);
	const __m512i sr = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(2), 1);
	__m512i z = _mm512_setzero_si512();
	int h;

#pragma GCC unroll 2
	for (h = 0; h < 2; h++) {
		__m512i l = _mm512_loadu_si512(wb->ql + 64 * h);
		__m512i qh = _mm512_broadcast_i64x4(cb_ld256(wb->qh + 32 * h));
		__m512i ql = _mm512_or_si512(_mm512_and_si512(l, m4),
					     _mm512_and_si512(_mm512_sllv_epi16(qh, sl), m2));
		__m512i qu = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(l, 4), m4),
					     _mm512_and_si512(_mm512_srlv_epi16(qh, sr), m2));
		__m512i p0 = _mm512_maddubs_epi16(ql, x[2 * h]);
		__m512i p1 = _mm512_maddubs_epi16(qu, x[2 * h + 1]);
		__m512i s0 = _mm512_permutexvar_epi16(KQ(idx4)(o + 8 * h), sw);
		__m512i s1 = _mm512_permutexvar_epi16(KQ(idx4)(o + 8 * h + 4), sw);

		if (h == 0)
			z = _mm512_madd_epi16(p0, s0);
		else
			z = KQ_DOTZ(z, p0, s0);
		z = KQ_DOTZ(z, p1, s1);
	}
	return z;
}

/*
 * q6_K, 4 rows x 1 token over nb super-blocks.  The offset: word
 * 8l + 2r + k of sa (sb) is row r's scale 2l + k (8 + 2l + k), of ba (bb)
 * the token's 16-sum of that sub-block, so vpmaddwd + vpdpwssd give dword
 * 4l + r = row r's part l of sum sc bsum, 32 times which comes off isum.
 */
static inline CB_ALWAYS_INLINE void KQ(dec_q6k)(float *out, const char *w, cb_size wrb,
						const char *act, int nb)
{
	static const cb_u16 sc_idx[2][32] CB_ALIGNED(64) = {
		{ 0, 1, 16, 17, 32, 33, 48, 49, 2, 3, 18, 19, 34, 35, 50, 51,
		  4, 5, 20, 21, 36, 37, 52, 53, 6, 7, 22, 23, 38, 39, 54, 55 },
		{ 8, 9, 24, 25, 40, 41, 56, 57, 10, 11, 26, 27, 42, 43, 58, 59,
		  12, 13, 28, 29, 44, 45, 60, 61, 14, 15, 30, 31, 46, 47, 62, 63 },
	};
	static const cb_u16 bs_idx[2][32] CB_ALIGNED(64) = {
		{ 0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3,
		  4, 5, 4, 5, 4, 5, 4, 5, 6, 7, 6, 7, 6, 7, 6, 7 },
		{ 8, 9, 8, 9, 8, 9, 8, 9, 10, 11, 10, 11, 10, 11, 10, 11,
		  12, 13, 12, 13, 12, 13, 12, 13, 14, 15, 14, 15, 14, 15, 14, 15 },
	};
	__m256 acc = _mm256_setzero_ps();
	float v[8];
	int b, r;

	for (b = 0; b < nb; b++) {
		const struct cb_block_q8_K *xb = (const struct cb_block_q8_K *)act + b;
		const char *blk = w + (cb_size)b * sizeof(struct cb_block_q6_K);
		__m512i x[4], z[4], s, sw[2], bs, off;
		__m256i t;

		x[0] = _mm512_loadu_si512(xb->qs);
		x[1] = _mm512_loadu_si512(xb->qs + 64);
		x[2] = _mm512_loadu_si512(xb->qs + 128);
		x[3] = _mm512_loadu_si512(xb->qs + 192);
		s = KQ(ld4x16)(blk + __builtin_offsetof(struct cb_block_q6_K, scales), wrb);
		sw[0] = _mm512_cvtepi8_epi16(_mm512_castsi512_si256(s));	/* rows 0, 1 */
		sw[1] = _mm512_cvtepi8_epi16(_mm512_extracti64x4_epi64(s, 1));	/* rows 2, 3 */

#pragma GCC unroll 4
		for (r = 0; r < 4; r++) {
			KQ(dec_prefetch)(blk + r * wrb, wrb, sizeof(struct cb_block_q6_K));
			z[r] = KQ(dec_q6k_row)((const void *)(blk + r * wrb), x, sw[r / 2],
					       16 * (r % 2));
		}

		bs = _mm512_castsi256_si512(cb_ld256(xb->bsums));
		off = _mm512_madd_epi16(_mm512_permutex2var_epi16(sw[0],
								  _mm512_load_si512(sc_idx[0]),
								  sw[1]),
					_mm512_permutexvar_epi16(_mm512_load_si512(bs_idx[0]), bs));
		off = KQ_DOTZ(off, _mm512_permutex2var_epi16(sw[0], _mm512_load_si512(sc_idx[1]),
							     sw[1]),
			      _mm512_permutexvar_epi16(_mm512_load_si512(bs_idx[1]), bs));
		t = KQ(dec_reduce)(z, _mm512_setzero_si512(), _mm512_slli_epi32(off, 5));
		acc = KQ(dec_fma)(acc, t, KQ(dec_dw)(blk + 206, wrb, 0), xb);	/* d at 208 */
	}
	_mm256_storeu_ps(v, acc);
#pragma GCC unroll 4
	for (r = 0; r < 4; r++)
		out[r] = v[r] + v[r + 4];
}

static inline CB_ALWAYS_INLINE void KQ(dec_tile)(float *out, const char *w, cb_size wrb,
						 const char *act, int nb, int dt)
{
	if (dt == CB_DT_Q6_K)
		KQ(dec_q6k)(out, w, wrb, act, nb);
	else
		KQ(dec_q4k)(out, w, wrb, act, nb, dt);
}

#else /* !KQ_PERMW: AVX2, 16 ymm registers */

static inline CB_ALWAYS_INLINE int KQ(dec_has)(int dt)
{
	return dt == CB_DT_Q4_K || dt == CB_DT_Q5_K || dt == CB_DT_Q6_K;
}

/* vpshufb control: every word = byte i of its lane, zero-extended */
static inline CB_ALWAYS_INLINE __m256i KQ(bword)(int i)
{
	return _mm256_set1_epi16((short)(0x8000 | i));
}

/*
 * q4_K or q5_K (q5, fifth bits at qh): one row's 8-lane sum of
 * sc x (q . x), and in *mn its mins against the token's 16-sums (8 lanes).
 * sb: the row's [sc_0..7, m_0..7] bytes in both lanes.  qs[32i ..]: low
 * nibbles group 2i, high nibbles 2i + 1; bit g of qh[l] is the fifth bit
 * of element l of group g (k_tile's bitmove).
 */
static inline CB_ALWAYS_INLINE __m256i KQ(dec2_q4k_row)(const cb_u8 *qs, const cb_u8 *qh, int q5,
							const struct cb_block_q8_K *xb,
							__m256i sb, __m256i *mn)
{
	const __m256i m4 = _mm256_set1_epi8(15);
	/* words 2j, 2j + 1: min j, for bsums 2j and 2j + 1 */
	const __m256i mi = _mm256_setr_epi16(0x8008, 0x8008, 0x8009, 0x8009, 0x800a, 0x800a,
					     0x800b, 0x800b, 0x800c, 0x800c, 0x800d, 0x800d,
					     0x800e, 0x800e, 0x800f, 0x800f);
	__m256i z = _mm256_setzero_si256();
	int i;

#pragma GCC unroll 4
	for (i = 0; i < 4; i++) {
		__m256i q = cb_ld256(qs + 32 * i);
		__m256i pl, ph;

		if (q5) {
			const __m256i hb = cb_ld256(qh);
			__m256i lo = _mm256_or_si256(_mm256_and_si256(q, m4),
						     KQ(bitmove)(hb, 2 * i, 4, 0x10));
			__m256i hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4),
						     KQ(bitmove)(hb, 2 * i + 1, 4, 0x10));

			pl = _mm256_maddubs_epi16(lo, cb_ld256(xb->qs + 64 * i));
			ph = _mm256_maddubs_epi16(hi, cb_ld256(xb->qs + 64 * i + 32));
		} else {
			pl = _mm256_maddubs_epi16(_mm256_and_si256(q, m4),
						  cb_ld256(xb->qs + 64 * i));
			ph = _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4),
						  cb_ld256(xb->qs + 64 * i + 32));
		}
		if (i == 0)
			z = _mm256_madd_epi16(pl, _mm256_shuffle_epi8(sb, KQ(bword)(0)));
		else
			z = KQ_DOT16(z, pl, _mm256_shuffle_epi8(sb, KQ(bword)(2 * i)));
		z = KQ_DOT16(z, ph, _mm256_shuffle_epi8(sb, KQ(bword)(2 * i + 1)));
		/*
		 * One running sum: left alone, GCC reassociates the adds
		 * into a tree over all four rows and spills half of it.
		 */
		__asm__("" : "+x"(z));
	}
	*mn = _mm256_madd_epi16(_mm256_shuffle_epi8(sb, mi), cb_ld256(xb->bsums));
	return z;
}

/* Rows r, r + 1's 8-lane sums a, b: dwords [a b a b | a b a b] partly added. */
static inline CB_ALWAYS_INLINE __m256i KQ(dec2_zip)(__m256i a, __m256i b)
{
	return _mm256_add_epi32(_mm256_unpacklo_epi32(a, b), _mm256_unpackhi_epi32(a, b));
}

/* Two zips of rows (0, 1), (2, 3): per lane [r0 r1 r2 r3] partial sums. */
static inline CB_ALWAYS_INLINE __m256i KQ(dec2_zip4)(__m256i p01, __m256i p23)
{
	return _mm256_add_epi32(_mm256_unpacklo_epi64(p01, p23), _mm256_unpackhi_epi64(p01, p23));
}

/* q4_K or q5_K (dt), 4 rows x 1 token over nb super-blocks, on ymm. */
static inline CB_ALWAYS_INLINE void KQ(dec2_q4k)(float *out, const char *w, cb_size wrb,
						 const char *act, int nb, int dt)
{
	__m256 acc = _mm256_setzero_ps();
	float v[8];
	int b, r;

	for (b = 0; b < nb; b++) {
		const struct cb_block_q8_K *xb = (const struct cb_block_q8_K *)act + b;
		const char *blk = w + (cb_size)b * KQ(blk_bytes)(dt);
		__m256i z[4], n[4], s[2], i4, m4;

#pragma GCC unroll 4
		for (r = 0; r < 4; r++) {
			const struct cb_block_q8_K *xr = xb;
			__m256i sb;

			/*
			 * Each row loads the token again (from L1), as k_tile:
			 * hoisted, its 8 vectors would be spilled.
			 */
			__asm__("" : "+r"(xr));
			if (r % 2 == 0)
				s[r / 2] = cb_k4_scales2(blk + r * wrb + 4, wrb);
			sb = _mm256_permute4x64_epi64(s[r / 2], r % 2 ? 0xee : 0x44);
			KQ(dec_prefetch)(blk + r * wrb, wrb, KQ(blk_bytes)(dt));
			z[r] = KQ(dec2_q4k_row)(KQ(k4_qs)(blk + r * wrb, dt),
						KQ(k5_qh)(blk + r * wrb), dt == CB_DT_Q5_K, xr,
						sb, &n[r]);
		}
		i4 = KQ(dec2_zip4)(KQ(dec2_zip)(z[0], z[1]), KQ(dec2_zip)(z[2], z[3]));
		m4 = KQ(dec2_zip4)(KQ(dec2_zip)(n[0], n[1]), KQ(dec2_zip)(n[2], n[3]));
		i4 = _mm256_add_epi32(_mm256_permute2x128_si256(i4, m4, 0x20),
				      _mm256_permute2x128_si256(i4, m4, 0x31));
		acc = KQ(dec_fma)(acc, i4, KQ(dec_dw)(blk, wrb, 1), xb);
	}
	_mm256_storeu_ps(v, acc);
#pragma GCC unroll 4
	for (r = 0; r < 4; r++)
		out[r] = v[r] + v[r + 4];
}

/*
 * q6_K: one row's 8-lane sum of sc x (q - 32) . x over its super-block,
 * started at -32 sum_j sc_j bsum_j (nbs: the token's 16-sums negated).
 * Half h: ql[64h + 32i ..] holds groups 4h + i (low nibbles) and
 * 4h + 2 + i (high nibbles), i = 0, 1; bits 2p, 2p + 1 of qh[32h ..] are
 * the top bits of group 4h + p.  Group g takes scale words 2g (its first
 * 16 weights, low lane) and 2g + 1 (high lane): a vpshufb of the half's
 * eight words, in both lanes.
 */
static inline CB_ALWAYS_INLINE __m256i KQ(dec2_q6k_row)(const struct cb_block_q6_K *wb,
							const struct cb_block_q8_K *xb, __m256i nbs)
{
	const __m256i m4 = _mm256_set1_epi8(15), m2 = _mm256_set1_epi8(0x30);
	const __m256i sw = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)wb->scales));
	__m256i z = _mm256_slli_epi32(_mm256_madd_epi16(sw, nbs), 5);
	int h, p;

#pragma GCC unroll 2
	for (h = 0; h < 2; h++) {
		__m256i l0 = cb_ld256(wb->ql + 64 * h), l1 = cb_ld256(wb->ql + 64 * h + 32);
		__m256i hb = cb_ld256(wb->qh + 32 * h);
		__m256i sh = _mm256_permute4x64_epi64(sw, h ? 0xee : 0x44);
		__m256i q[4];

		q[0] = _mm256_or_si256(_mm256_and_si256(l0, m4),
				       _mm256_and_si256(_mm256_slli_epi16(hb, 4), m2));
		q[1] = _mm256_or_si256(_mm256_and_si256(l1, m4),
				       _mm256_and_si256(_mm256_slli_epi16(hb, 2), m2));
		q[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4),
				       _mm256_and_si256(hb, m2));
		q[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4),
				       _mm256_and_si256(_mm256_srli_epi16(hb, 2), m2));
#pragma GCC unroll 4
		for (p = 0; p < 4; p++) {
			const cb_s8 *xq = xb->qs + 128 * h + 32 * p;
			const void *ctl = cb_q6k_scale_ctl(p);
			__m256i pr = _mm256_maddubs_epi16(q[p], cb_ld256(xq));

			z = KQ_DOT16(z, pr, _mm256_shuffle_epi8(sh, _mm256_load_si256(ctl)));
			__asm__("" : "+x"(z));	/* one running sum, as in dec2_q4k_row */
		}
	}
	return z;
}

/* q6_K, 4 rows x 1 token over nb super-blocks, on ymm. */
static inline CB_ALWAYS_INLINE void KQ(dec2_q6k)(float *out, const char *w, cb_size wrb,
						 const char *act, int nb)
{
	__m256 acc = _mm256_setzero_ps();
	float v[8];
	int b, r;

	for (b = 0; b < nb; b++) {
		const struct cb_block_q8_K *xb = (const struct cb_block_q8_K *)act + b;
		const char *blk = w + (cb_size)b * sizeof(struct cb_block_q6_K);
		const __m256i nbs = _mm256_sub_epi16(_mm256_setzero_si256(), cb_ld256(xb->bsums));
		__m256i z[4], i4;
		__m128i t;

#pragma GCC unroll 4
		for (r = 0; r < 4; r++) {
			const struct cb_block_q8_K *xr = xb;

			__asm__("" : "+r"(xr));	/* the token from L1 per row */
			KQ(dec_prefetch)(blk + r * wrb, wrb, sizeof(struct cb_block_q6_K));
			z[r] = KQ(dec2_q6k_row)((const void *)(blk + r * wrb), xr, nbs);
		}
		i4 = KQ(dec2_zip4)(KQ(dec2_zip)(z[0], z[1]), KQ(dec2_zip)(z[2], z[3]));
		t = _mm_add_epi32(_mm256_castsi256_si128(i4), _mm256_extracti128_si256(i4, 1));
		/* [isum r0..3 | 0]: k_tile's vector without mins */
		acc = KQ(dec_fma)(acc, _mm256_zextsi128_si256(t), KQ(dec_dw)(blk + 206, wrb, 0),
				  xb);
	}
	_mm256_storeu_ps(v, acc);
#pragma GCC unroll 4
	for (r = 0; r < 4; r++)
		out[r] = v[r] + v[r + 4];
}

static inline CB_ALWAYS_INLINE void KQ(dec_tile)(float *out, const char *w, cb_size wrb,
						 const char *act, int nb, int dt)
{
	if (dt == CB_DT_Q6_K)
		KQ(dec2_q6k)(out, w, wrb, act, nb);
	else
		KQ(dec2_q4k)(out, w, wrb, act, nb, dt);
}

#endif /* KQ_PERMW */
