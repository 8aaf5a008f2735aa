/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_kq_x86_tmpl.h - x86 gemms of the k-quants (q2_K .. q6_K, iq4_xs) and of
 * q4_1, q5_0, q5_1, iq4_nl, mxfp4, and the q8_1 / q8_K activation quantizers;
 * written once on 256-bit vectors, instantiated by cb_kq_avx2.c (AVX2) and
 * twice by cb_kq_avx512.c (AVX-512VL, with and without VNNI).
 *
 * Not a normal header: the including file defines first
 *   KQ(name)   prefix for every function of this instance
 *   KQ_VNNI    1: accumulate with vpdpwssd / vpdpbusd (AVX512-VNNI);
 *              0: vpmaddwd + vpaddd
 *   KQ_PERMW   1: vpermw (AVX512BW+VL) broadcasts sub-block scales;
 *              0: vpermq + vpshufb
 *   KQ_MT      tokens per register tile (2 or 4)
 * and may define
 *   KQ_LINKAGE     storage class of the gemms and quantizers (default static)
 *   KQ_NO_QUANT    leave the activation quantizers out of this instance
 *
 * k-quants.  A tile is R <= 4 weight rows by MT tokens.  Per super-block
 * and row, the scales are decoded once; each 32-weight group is unpacked
 * once into unsigned bytes in the activation's element order (iq4_xs: the
 * table values' magnitudes, their signs moved onto the activations), and
 * for each token vpmaddubsw gives 16 pair sums (no saturation: weights
 * <= 127 by activations <= 127) that vpmaddwd (or vpdpwssd) scales by the
 * group's sub-block scales as 16-bit words and adds into 8 int32 lanes.
 * Offsets folded into the quants (q6_K's 32, q3_K's 4) come off once per
 * super-block through the activation's 16-sums: sum (q - c) sc x =
 * sum q sc x - c sum sc bsum.  Mins (q2_K, q4_K, q5_K) are one more
 * vpmaddwd of the mins by those 16-sums.  The integers
 * are exactly the scalar reference's.  Then, per token, the R rows' sums
 * are transposed and added into one vector (lanes 0..3: isum of rows
 * 0..3, lanes 4..7: their imin), converted once and scaled by FMA with
 * [d_w d_x | -dmin_w d_x] into one float accumulator, so a super-block
 * costs every (row, token) one conversion and a quarter of an FMA instead
 * of a permute, a conversion and an FMA each.  out = lane r + lane r + 4.
 * A row's lanes never mix with another row's, so the result does not
 * depend on the tile, the chunking or M.
 *
 * The 32-block types keep the q8_0 kernels' structure (cb_ops_x86_tmpl.h):
 * one block at a time, the R rows' scales converted together, and per
 * (row, token) a conversion, a permute and an FMA; the offsets of q4_1 and
 * q5_1 (m_w d_x sum x) are accumulated per token for all rows at once.
 * mxfp4 is iq4_nl with another table (CB_MXFP4_VALUES) and a scale that is
 * a power of two: the R rows' E8M0 bytes become the f32 bits of 2^(e - 128)
 * with integer vector operations (e8m0_half4, cb_e8m0_half_bits' bits), so
 * there is nothing to convert.
 *
 * Weight rows are prefetched as the q8_0 kernels do (one line ahead in the
 * row into L1, the next row group's line into L2).
 */

#ifndef KQ_R
#define KQ_R 4
#endif
#ifndef KQ_LINKAGE
#define KQ_LINKAGE static
#endif
#ifndef KQ_PREFETCH
#define KQ_PREFETCH 512
#endif
#undef KQ_DOT16
#undef KQ_DOTU8

#if KQ_VNNI
/* acc + the 16-bit word pairs of p times s, summed per int32 lane */
#define KQ_DOT16(acc, p, s) _mm256_dpwssd_epi32(acc, p, s)
/* acc + the groups of 4 u8 x s8 products */
#define KQ_DOTU8(acc, u, s) _mm256_dpbusd_epi32(acc, u, s)
#else
#define KQ_DOT16(acc, p, s) _mm256_add_epi32(acc, _mm256_madd_epi16(p, s))
#define KQ_DOTU8(acc, u, s)						\
	_mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s),	\
						_mm256_set1_epi16(1)))
#endif

static inline CB_ALWAYS_INLINE float KQ(h2f)(cb_u16 h)
{
	return _cvtsh_ss(h);
}

static inline CB_ALWAYS_INLINE float KQ(hsum)(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));

	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

/* Both prefetches for one row's bytes [off, off + n) of its block. */
static inline CB_ALWAYS_INLINE void KQ(prefetch)(const char *w, cb_size wrb, int r, int R,
						 cb_size off, int n)
{
	int o;

	for (o = 0; o < n; o += 64) {
		_mm_prefetch(w + r * wrb + off + o + KQ_PREFETCH, _MM_HINT_T0);
		_mm_prefetch(w + (R + r) * wrb + off + o, _MM_HINT_T1);
	}
}

/* The iq4 table in both 128-bit lanes, for vpshufb. */
static inline CB_ALWAYS_INLINE __m256i KQ(iq4_table)(void)
{
	static const cb_s8 t[16] CB_ALIGNED(16) = CB_IQ4NL_VALUES;

	return _mm256_broadcastsi128_si256(_mm_load_si128((const __m128i *)t));
}

/* The doubled E2M1 values of mxfp4 in both 128-bit lanes, for vpshufb. */
static inline CB_ALWAYS_INLINE __m256i KQ(mxfp4_table)(void)
{
	static const cb_s8 t[16] CB_ALIGNED(16) = CB_MXFP4_VALUES;

	return _mm256_broadcastsi128_si256(_mm_load_si128((const __m128i *)t));
}

/* ---- sub-block scales as 16-bit words ---------------------------------- */

/* All 16 words = word i of v. */
static inline CB_ALWAYS_INLINE __m256i KQ(bcast16)(__m256i v, int i)
{
#if KQ_PERMW
	return _mm256_permutexvar_epi16(_mm256_set1_epi16((short)i), v);
#else
	__m256i h = _mm256_permute4x64_epi64(v, i < 8 ? 0x44 : 0xee);
	int b = 2 * (i % 8);

	return _mm256_shuffle_epi8(h, _mm256_set1_epi16((short)(b | (b + 1) << 8)));
#endif
}

/* Words 0..7 = word i of v, words 8..15 = word i + 1 (i even). */
static inline CB_ALWAYS_INLINE __m256i KQ(bcast16x2)(__m256i v, int i)
{
#if KQ_PERMW
	return _mm256_permutexvar_epi16(_mm256_set_m128i(_mm_set1_epi16((short)(i + 1)),
							 _mm_set1_epi16((short)i)), v);
#else
	__m256i h = _mm256_permute4x64_epi64(v, i < 8 ? 0x44 : 0xee);
	int b0 = 2 * (i % 8), b1 = 2 * ((i + 1) % 8);

	__m128i p1 = _mm_set1_epi16((short)(b1 | (b1 + 1) << 8));
	__m128i p0 = _mm_set1_epi16((short)(b0 | (b0 + 1) << 8));

	return _mm256_shuffle_epi8(h, _mm256_set_m128i(p1, p0));
#endif
}

/*
 * q4_K / q5_K: the 12 scale bytes to words [sc_0..sc_7, m_0..m_7].  The 16
 * bytes read are the scales and the first 4 quant bytes (inside the block).
 */
static inline CB_ALWAYS_INLINE __m256i KQ(k4_scales)(const cb_u8 *s)
{
	__m128i v = _mm_loadu_si128((const __m128i *)s);	/* u0 u1 u2 . */
	__m128i a = _mm_shuffle_epi32(v, 0x98);			/* u0 u2 u1 u2 */
	__m128i b = _mm_shuffle_epi32(v, 0x50);			/* u0 u0 u1 u1 */
	__m128i lo, hi;

	/*
	 * sc 0..3 = u0 & 63, m 0..3 = u1 & 63; sc 4..7 = (u2 & 15) | (u0 >> 6) << 4;
	 * m 4..7 = (u2 >> 4 & 15) | (u1 >> 6) << 4
	 */
	a = _mm_srlv_epi32(a, _mm_setr_epi32(0, 0, 0, 4));
	lo = _mm_and_si128(a, _mm_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f));
	hi = _mm_and_si128(_mm_srli_epi32(b, 2), _mm_setr_epi32(0, 0x30303030, 0, 0x30303030));
	v = _mm_or_si128(lo, hi);		/* sc0..3 sc4..7 m0..3 m4..7 */
	return _mm256_cvtepu8_epi16(v);
}

/* q3_K: the 16 six-bit scales minus 32, as words. */
static inline CB_ALWAYS_INLINE __m256i KQ(k3_scales)(const cb_u8 *s)
{
	cb_u32 u0 = cb_rd32(s), u1 = cb_rd32(s + 4), u2 = cb_rd32(s + 8);
	cb_u32 a0 = (u0 & 0x0f0f0f0f) | ((u2 >> 0) & 0x03030303) << 4;
	cb_u32 a1 = (u1 & 0x0f0f0f0f) | ((u2 >> 2) & 0x03030303) << 4;
	cb_u32 a2 = ((u0 >> 4) & 0x0f0f0f0f) | ((u2 >> 4) & 0x03030303) << 4;
	cb_u32 a3 = ((u1 >> 4) & 0x0f0f0f0f) | ((u2 >> 6) & 0x03030303) << 4;
	__m128i v = _mm_setr_epi32((int)a0, (int)a1, (int)a2, (int)a3);

	return _mm256_cvtepi8_epi16(_mm_sub_epi8(v, _mm_set1_epi8(32)));
}

/* iq4_xs: the 8 six-bit scales minus 32, as words 0..7. */
static inline CB_ALWAYS_INLINE __m256i KQ(iq4xs_scales)(const struct cb_block_iq4_xs *b)
{
	__m128i l = _mm_cvtsi32_si128((int)cb_rd32(b->scales_l));
	__m128i lo = _mm_and_si128(l, _mm_set1_epi8(15));
	__m128i hi = _mm_and_si128(_mm_srli_epi16(l, 4), _mm_set1_epi8(15));
	/* nibbles in order: scale j's low four bits in byte j */
	__m128i nib = _mm_cvtepu8_epi16(_mm_unpacklo_epi8(lo, hi));
	/* (scales_h >> 2j) & 3: shifted up to the top of each word, then down */
	__m128i h = _mm_mullo_epi16(_mm_set1_epi16((short)b->scales_h),
				    _mm_setr_epi16(1 << 14, 1 << 12, 1 << 10, 1 << 8,
						   1 << 6, 1 << 4, 1 << 2, 1));

	h = _mm_slli_epi16(_mm_srli_epi16(h, 14), 4);
	return _mm256_castsi128_si256(_mm_sub_epi16(_mm_or_si128(nib, h), _mm_set1_epi16(32)));
}

/* ---- per-row decoding of a super-block ---------------------------------- */

/*
 * The decoded scales of one row's super-block: sc holds the sub-block
 * scales as words (layout per type, see kq_group_scale), mn the min of
 * each 16-weight sub-block as a word (q4_K, q5_K: each of their 8 mins
 * twice; q2_K: its 16), off the scales times the offset
 * folded into the quants (q6_K: 32, q3_K: 4), per 16-weight sub-block.
 */
struct KQ(row) {
	__m256i sc, mn, off;
	__m256i hb;		/* q5_K: qh; q6_K/q3_K: per half */
};

static inline CB_ALWAYS_INLINE void KQ(row_prep)(struct KQ(row) *st, int dt, const char *blk)
{
	if (dt == CB_DT_Q4_K || dt == CB_DT_Q5_K) {
		const struct cb_block_q4_K *b = (const void *)blk;

		__m128i m;

		st->sc = KQ(k4_scales)(b->scales);
		/* the mins, each twice: the pair of 16-sums of its sub-block */
		m = _mm256_extracti128_si256(st->sc, 1);
		st->mn = _mm256_set_m128i(_mm_unpackhi_epi16(m, m), _mm_unpacklo_epi16(m, m));
		if (dt == CB_DT_Q5_K)
			st->hb = cb_ld256(((const struct cb_block_q5_K *)blk)->qh);
	} else if (dt == CB_DT_Q6_K) {
		const struct cb_block_q6_K *b = (const void *)blk;

		st->sc = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)b->scales));
		st->off = _mm256_slli_epi16(st->sc, 5);
	} else if (dt == CB_DT_Q3_K) {
		const struct cb_block_q3_K *b = (const void *)blk;

		st->sc = KQ(k3_scales)(b->scales);
		st->off = _mm256_slli_epi16(st->sc, 2);
		st->hb = cb_ld256(b->hmask);
	} else if (dt == CB_DT_Q2_K) {
		__m128i s = _mm_loadu_si128((const __m128i *)((const struct cb_block_q2_K *)
							       (const void *)blk)->scales);

		st->sc = _mm256_cvtepu8_epi16(_mm_and_si128(s, _mm_set1_epi8(15)));
		st->mn = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(s, 4),
							    _mm_set1_epi8(15)));
	} else {	/* iq4_xs */
		st->sc = KQ(iq4xs_scales)((const void *)blk);
	}
}

/* 2 bits at bit 2p of every byte of q */
static inline CB_ALWAYS_INLINE __m256i KQ(bits2)(__m256i q, int p)
{
	return _mm256_and_si256(_mm256_srli_epi16(q, 2 * p), _mm256_set1_epi8(3));
}

/*
 * Bit i of every byte of v moved to bit j (bits i..i+n-1 to j.., masked):
 * a 16-bit shift is right as long as the kept bits stay in their byte.
 */
static inline CB_ALWAYS_INLINE __m256i KQ(bitmove)(__m256i v, int i, int j, int mask)
{
	if (i > j)
		v = _mm256_srli_epi16(v, i - j);
	else if (i < j)
		v = _mm256_slli_epi16(v, j - i);
	return _mm256_and_si256(v, _mm256_set1_epi8((char)mask));
}

/* The nibbles (qs) and q5_K's fifth bits (qh) of a q4_K or q5_K block at p. */
static inline CB_ALWAYS_INLINE const cb_u8 *KQ(k4_qs)(const char *p, int dt)
{
	if (dt == CB_DT_Q5_K)
		return ((const struct cb_block_q5_K *)(const void *)p)->qs;
	return ((const struct cb_block_q4_K *)(const void *)p)->qs;
}

static inline CB_ALWAYS_INLINE const cb_u8 *KQ(k5_qh)(const char *p)
{
	return ((const struct cb_block_q5_K *)(const void *)p)->qh;
}

/*
 * Weights 32g .. 32g + 31 of a row's super-block as unsigned bytes in
 * element order (iq4_xs: the table values, signed; the caller takes their
 * magnitude and sign).
 */
static inline CB_ALWAYS_INLINE __m256i KQ(group_w)(const struct KQ(row) *st, int dt,
						   const char *blk, int g)
{
	const __m256i m4 = _mm256_set1_epi8(15);

	if (dt == CB_DT_Q4_K || dt == CB_DT_Q5_K) {
		__m256i q = cb_ld256(KQ(k4_qs)(blk, dt) + 32 * (g / 2));

		q = g % 2 ? _mm256_and_si256(_mm256_srli_epi16(q, 4), m4) : _mm256_and_si256(q, m4);
		if (dt == CB_DT_Q5_K)	/* fifth bit: bit g of qh[l] */
			q = _mm256_or_si256(q, KQ(bitmove)(st->hb, g, 4, 0x10));
		return q;
	}
	if (dt == CB_DT_Q6_K) {
		const struct cb_block_q6_K *b = (const void *)blk;
		int h = g / 4, p = g % 4;
		__m256i l = cb_ld256(b->ql + 64 * h + 32 * (p & 1));
		__m256i hi = cb_ld256(b->qh + 32 * h);

		l = p < 2 ? _mm256_and_si256(l, m4) : _mm256_and_si256(_mm256_srli_epi16(l, 4), m4);
		return _mm256_or_si256(l, KQ(bitmove)(hi, 2 * p, 4, 0x30));
	}
	if (dt == CB_DT_Q3_K) {
		const struct cb_block_q3_K *b = (const void *)blk;
		__m256i q = KQ(bits2)(cb_ld256(b->qs + 32 * (g / 4)), g % 4);

		/* third bit: bit g of hmask[l] */
		return _mm256_or_si256(q, KQ(bitmove)(st->hb, g, 2, 0x04));
	}
	if (dt == CB_DT_Q2_K) {
		const struct cb_block_q2_K *b = (const void *)blk;

		return KQ(bits2)(cb_ld256(b->qs + 32 * (g / 4)), g % 4);
	}
	{	/* iq4_xs: sub-block g is qs[16g .. 16g + 15], low nibbles first */
		const struct cb_block_iq4_xs *b = (const void *)blk;
		const __m256i tab = KQ(iq4_table)();
		__m128i q = _mm_loadu_si128((const __m128i *)(b->qs + 16 * g));
		__m256i i = _mm256_set_m128i(_mm_srli_epi16(q, 4), q);

		return _mm256_shuffle_epi8(tab, _mm256_and_si256(i, m4));
	}
}

/* The scale words that go with group g's 16 pair sums. */
static inline CB_ALWAYS_INLINE __m256i KQ(group_scale)(const struct KQ(row) *st, int dt, int g)
{
	/* q4_K, q5_K, iq4_xs: one scale per 32; the others one per 16 */
	if (dt == CB_DT_Q4_K || dt == CB_DT_Q5_K || dt == CB_DT_IQ4_XS)
		return KQ(bcast16)(st->sc, g);
	return KQ(bcast16x2)(st->sc, 2 * g);
}

static inline CB_ALWAYS_INLINE int KQ(has_min)(int dt)
{
	return dt == CB_DT_Q2_K || dt == CB_DT_Q4_K || dt == CB_DT_Q5_K;
}

static inline CB_ALWAYS_INLINE int KQ(blk_bytes)(int dt)
{
	switch (dt) {
	case CB_DT_Q2_K: return 84;
	case CB_DT_Q3_K: return 110;
	case CB_DT_Q4_K: return 144;
	case CB_DT_Q5_K: return 176;
	case CB_DT_Q6_K: return 210;
	default: return 136;	/* iq4_xs */
	}
}

/* Byte offsets of d and dmin in a k-quant block. */
static inline CB_ALWAYS_INLINE int KQ(d_off)(int dt)
{
	return dt == CB_DT_Q2_K ? 80 : dt == CB_DT_Q3_K ? 108 : dt == CB_DT_Q6_K ? 208 : 0;
}

#include "x86/cb_kq_dec_x86_tmpl.h"

/*
 * R rows x MT tokens of a k-quant gemm over nb super-blocks (R <= KQ_R,
 * MT <= KQ_MT, both constant after inlining).
 */
static inline CB_ALWAYS_INLINE void KQ(k_tile)(float *out, cb_size ldo, const char *w,
					       cb_size wrb, const char *act, cb_size as,
					       int R, int MT, int nb, int dt)
{
	const int bsz = KQ(blk_bytes)(dt), doff = KQ(d_off)(dt), mins = KQ(has_min)(dt);
	__m256 acc[KQ_MT];
	int r, m, b, g;

	if (R == 4 && MT == 1 && KQ(dec_has)(dt)) {	/* decode: cb_kq_dec_x86_tmpl.h */
		KQ(dec_tile)(out, w, wrb, act, nb, dt);
		return;
	}
#pragma GCC unroll 8
	for (m = 0; m < KQ_MT; m++)
		acc[m] = _mm256_setzero_ps();

	for (b = 0; b < nb; b++) {
		__m256i c[2][KQ_MT];	/* per row of a pair, token: [isum (4 lanes) | imin] */
		__m256i tp[2][KQ_MT];	/* per row pair, token: the pair transposed */
		cb_u64 hd = 0, hm = 0;
		__m256 dw;

		/* d (and dmin) of the R rows, converted together: [d_r | dmin_r] */
#pragma GCC unroll 4
		for (r = 0; r < KQ_R; r++) {
			const char *p = w + r * wrb + (cb_size)b * bsz + doff;

			if (r >= R)
				continue;
			hd |= (cb_u64)*(const cb_u16 *)p << (16 * r);
			if (mins)
				hm |= (cb_u64)*(const cb_u16 *)(p + 2) << (16 * r);
		}
		dw = _mm256_cvtph_ps(_mm_set_epi64x((long long)hm, (long long)hd));

#pragma GCC unroll 4
		for (r = 0; r < KQ_R; r++) {
			const char *blk = w + r * wrb + (cb_size)b * bsz, *ar = act;
			__m256i isum[KQ_MT];
			struct KQ(row) st;

			/*
			 * Each row loads the activations again (from L1): left to
			 * itself the compiler keeps all 8 x MT of them live across
			 * the rows and groups and spills them, a 2 KiB frame.
			 */
			__asm__("" : "+r"(ar));

#pragma GCC unroll 8
			for (m = 0; m < KQ_MT; m++) {
				isum[m] = _mm256_setzero_si256();
				c[r % 2][m] = _mm256_setzero_si256();
			}
			if (r >= R)
				goto pair;
			KQ(prefetch)(w, wrb, r, R, (cb_size)b * bsz, bsz);
			KQ(row_prep)(&st, dt, blk);
#pragma GCC unroll 8
			for (g = 0; g < 8; g++) {
				__m256i wq = KQ(group_w)(&st, dt, blk, g);
				__m256i sc = KQ(group_scale)(&st, dt, g);
				__m256i aw = dt == CB_DT_IQ4_XS ? _mm256_sign_epi8(wq, wq) : wq;

				__asm__("" : "+r"(ar));	/* and each group's, when it needs them */
#pragma GCC unroll 8
				for (m = 0; m < KQ_MT; m++) {
					const struct cb_block_q8_K *xb;
					__m256i x;

					if (m >= MT)
						continue;
					xb = (const struct cb_block_q8_K *)(ar + m * as) + b;
					x = cb_ld256(xb->qs + 32 * g);
					if (dt == CB_DT_IQ4_XS)
						x = _mm256_sign_epi8(x, wq);
					x = _mm256_maddubs_epi16(aw, x);
					isum[m] = KQ_DOT16(isum[m], x, sc);
				}
			}
#pragma GCC unroll 8
			for (m = 0; m < KQ_MT; m++) {
				const struct cb_block_q8_K *xb;
				__m128i lo, mn = _mm_setzero_si128();

				if (m >= MT)
					continue;
				xb = (const struct cb_block_q8_K *)(ar + m * as) + b;
				if (dt == CB_DT_Q6_K || dt == CB_DT_Q3_K) {
					__m256i o = _mm256_madd_epi16(st.off, cb_ld256(xb->bsums));

					isum[m] = _mm256_sub_epi32(isum[m], o);
				}
				if (mins) {	/* sum over sub-blocks of min * 16-sum */
					__m256i t = _mm256_madd_epi16(st.mn, cb_ld256(xb->bsums));

					mn = _mm_add_epi32(_mm256_castsi256_si128(t),
							   _mm256_extracti128_si256(t, 1));
				}
				lo = _mm_add_epi32(_mm256_castsi256_si128(isum[m]),
						   _mm256_extracti128_si256(isum[m], 1));
				c[r % 2][m] = _mm256_set_m128i(mn, lo);
			}
pair:
			/* rows 2p, 2p + 1 done: the first step of the 4-row transpose */
#pragma GCC unroll 8
			for (m = 0; m < KQ_MT; m++) {
				__m256i a = c[0][m], d = c[1][m];

				if (r % 2 && m < MT)
					tp[r / 2][m] = _mm256_add_epi32(_mm256_unpacklo_epi32(a, d),
									_mm256_unpackhi_epi32(a, d));
			}
		}
		/* per token: the R rows' [isum | imin] transposed into one vector */
#pragma GCC unroll 8
		for (m = 0; m < KQ_MT; m++) {
			const struct cb_block_q8_K *xb;
			__m256i t;
			__m256 s;
			float dx;

			if (m >= MT)
				continue;
			xb = (const struct cb_block_q8_K *)(act + m * as) + b;
			t = _mm256_add_epi32(_mm256_unpacklo_epi64(tp[0][m], tp[1][m]),
					     _mm256_unpackhi_epi64(tp[0][m], tp[1][m]));
			dx = cb_f32_from_bits(xb->d_bits);
			/* [d_r dx | -dmin_r dx]; lanes 4..7 are 0 without mins */
			s = _mm256_mul_ps(dw, _mm256_setr_ps(dx, dx, dx, dx, -dx, -dx, -dx, -dx));
			acc[m] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(t), s, acc[m]);
		}
	}
#pragma GCC unroll 8
	for (m = 0; m < KQ_MT; m++) {
		float v[8];

		if (m >= MT)
			continue;
		_mm256_storeu_ps(v, acc[m]);
#pragma GCC unroll 4
		for (r = 0; r < KQ_R; r++)
			if (r < R)
				out[m * ldo + r] = v[r] + v[r + 4];
	}
}

/* ---- 32-weight blocks --------------------------------------------------- */

static inline CB_ALWAYS_INLINE int KQ(lblk_bytes)(int dt)
{
	switch (dt) {
	case CB_DT_Q4_1: return 20;
	case CB_DT_Q5_0: return 22;
	case CB_DT_Q5_1: return 24;
	case CB_DT_MXFP4: return 17;
	default: return 18;	/* iq4_nl */
	}
}

/* 32 bytes: bit i of the little-endian word h at byte i as 0x10 or 0. */
static inline CB_ALWAYS_INLINE __m256i KQ(bits_to_0x10)(cb_u32 h)
{
	const __m256i sel = _mm256_set1_epi64x(0x8040201008040201ll);
	__m256i v = _mm256_shuffle_epi8(_mm256_set1_epi32((int)h),
					_mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1,
							 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3,
							 3, 3, 3, 3, 3));

	v = _mm256_cmpeq_epi8(_mm256_and_si256(v, sel), sel);
	return _mm256_and_si256(v, _mm256_set1_epi8(0x10));
}

/*
 * The 32 weights of block b in element order: unsigned quants (q4_1: 0..15,
 * q5_0 / q5_1: 0..31) or, for iq4_nl and mxfp4, the signed table values.
 */
static inline CB_ALWAYS_INLINE __m256i KQ(lgroup_w)(int dt, const char *blk)
{
	const __m256i m4 = _mm256_set1_epi8(15);
	const cb_u8 *qs = (const cb_u8 *)blk + (dt == CB_DT_Q4_1 ? 4 : dt == CB_DT_Q5_0 ? 6 :
						dt == CB_DT_Q5_1 ? 8 : dt == CB_DT_MXFP4 ? 1 : 2);
	__m128i q = _mm_loadu_si128((const __m128i *)qs);
	__m256i v = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(q, 4), q), m4);

	if (dt == CB_DT_Q5_0 || dt == CB_DT_Q5_1)
		v = _mm256_or_si256(v, KQ(bits_to_0x10)(cb_rd32(qs - 4)));
	if (dt == CB_DT_IQ4_NL)
		v = _mm256_shuffle_epi8(KQ(iq4_table)(), v);
	if (dt == CB_DT_MXFP4)
		v = _mm256_shuffle_epi8(KQ(mxfp4_table)(), v);
	return v;
}

/*
 * cb_e8m0_half_bits() of the four bytes of @eb, lane r from byte r, in
 * vector registers.  Building the four words in memory and loading them as
 * one vector stalled on store forwarding once per block, which held mxfp4
 * at about half of iq4_nl's speed (docs/performance.md); the bits are the
 * same: (e - 1) << 23 for e >= 2, 0x00200000 << e for e < 2, a quiet NaN
 * for 255.
 */
static inline CB_ALWAYS_INLINE __m128 KQ(e8m0_half4)(cb_u32 eb)
{
	const __m128i e = _mm_cvtepu8_epi32(_mm_cvtsi32_si128((int)eb));
	const __m128i one = _mm_set1_epi32(1);
	__m128i v = _mm_slli_epi32(_mm_sub_epi32(e, one), 23);
	__m128i sub = _mm_sllv_epi32(_mm_set1_epi32(0x00200000), e);

	v = _mm_blendv_epi8(v, sub, _mm_cmplt_epi32(e, _mm_set1_epi32(2)));
	v = _mm_blendv_epi8(v, _mm_set1_epi32(0x7fc00000),
			    _mm_cmpeq_epi32(e, _mm_set1_epi32(CB_MXFP4_E_NAN)));
	return _mm_castsi128_ps(v);
}

/*
 * R rows x MT tokens of a 32-block gemm against q8_0 (q5_0, iq4_nl, mxfp4)
 * or q8_1 (q4_1, q5_1) activations.
 */
static inline CB_ALWAYS_INLINE void KQ(l_tile)(float *out, cb_size ldo, const char *w,
					       cb_size wrb, const char *act, cb_size as,
					       int R, int MT, int nb, int dt)
{
	const int bsz = KQ(lblk_bytes)(dt), q81 = dt == CB_DT_Q4_1 || dt == CB_DT_Q5_1;
	const int xsz = q81 ? 36 : 34, xq = q81 ? 4 : 2;
	const int tab = dt == CB_DT_IQ4_NL || dt == CB_DT_MXFP4;	/* signed values */
	__m256 acc[KQ_R][KQ_MT];
	__m128 macc[KQ_MT];	/* q4_1 / q5_1: sum m_w d_x sum x, lane r */
	__m256i lane[KQ_R];
	int r, m, b;

#pragma GCC unroll 4
	for (r = 0; r < KQ_R; r++) {
		lane[r] = _mm256_set1_epi32(r);
#pragma GCC unroll 8
		for (m = 0; m < KQ_MT; m++)
			acc[r][m] = _mm256_setzero_ps();
	}
#pragma GCC unroll 8
	for (m = 0; m < KQ_MT; m++)
		macc[m] = _mm_setzero_ps();

	for (b = 0; b < nb; b++) {
		__m256i xv[KQ_MT], base[KQ_MT];
		__m256 s[KQ_MT];
		cb_u64 hd = 0, hm = 0;
		cb_u32 eb = 0;		/* mxfp4: the R E8M0 bytes, row r in byte r */
		__m128 dw, mw;

#pragma GCC unroll 4
		for (r = 0; r < KQ_R; r++) {
			const char *p = w + r * wrb + (cb_size)b * bsz;

			if (r >= R)
				continue;
			if (dt == CB_DT_MXFP4) {
				eb |= (cb_u32)*(const cb_u8 *)p << (8 * r);
				continue;
			}
			hd |= (cb_u64)*(const cb_u16 *)p << (16 * r);
			if (q81)
				hm |= (cb_u64)*(const cb_u16 *)(p + 2) << (16 * r);
		}
		if (dt == CB_DT_MXFP4)
			dw = KQ(e8m0_half4)(eb);
		else
			dw = _mm_cvtph_ps(_mm_cvtsi64_si128((long long)hd));
		mw = _mm_cvtph_ps(_mm_cvtsi64_si128((long long)hm));
#pragma GCC unroll 8
		for (m = 0; m < KQ_MT; m++) {
			const char *xb;
			float dx;

			if (m >= MT)
				continue;
			xb = act + m * as + (cb_size)b * xsz;
			dx = KQ(h2f)(*(const cb_u16 *)xb);
			xv[m] = cb_ld256(xb + xq);
			s[m] = _mm256_castps128_ps256(_mm_mul_ps(dw, _mm_set1_ps(dx)));
			base[m] = _mm256_setzero_si256();
			if (dt == CB_DT_Q5_0) {	/* sum (q - 16) x = sum q x - 16 sum x */
				__m256i s16 = KQ_DOTU8(_mm256_setzero_si256(), _mm256_set1_epi8(16),
						       xv[m]);

				base[m] = _mm256_sub_epi32(base[m], s16);
			}
			if (q81)
				macc[m] = _mm_fmadd_ps(mw, _mm_set1_ps(dx * (float)*(const cb_s16 *)
								       (xb + 2)), macc[m]);
		}
#pragma GCC unroll 4
		for (r = 0; r < KQ_R; r++) {
			__m256i wq, aw;

			if (r >= R)
				continue;
			KQ(prefetch)(w, wrb, r, R, (cb_size)b * bsz, 1);
			wq = KQ(lgroup_w)(dt, w + r * wrb + (cb_size)b * bsz);
			aw = tab ? _mm256_sign_epi8(wq, wq) : wq;
#pragma GCC unroll 8
			for (m = 0; m < KQ_MT; m++) {
				__m256i x, isum;

				if (m >= MT)
					continue;
				x = tab ? _mm256_sign_epi8(xv[m], wq) : xv[m];
				isum = KQ_DOTU8(base[m], aw, x);
				acc[r][m] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum),
							    _mm256_permutevar8x32_ps(s[m], lane[r]),
							    acc[r][m]);
			}
		}
	}
#pragma GCC unroll 8
	for (m = 0; m < KQ_MT; m++) {
		float mv[4];

		if (m >= MT)
			continue;
		_mm_storeu_ps(mv, macc[m]);
#pragma GCC unroll 4
		for (r = 0; r < KQ_R; r++)
			if (r < R)
				out[m * ldo + r] = KQ(hsum)(acc[r][m]) + mv[r];
	}
}

/* ---- the gemm entry points --------------------------------------------- */

/* The fewest tiles of at most mtmax tokens, as even as they go. */
static inline CB_ALWAYS_INLINE int KQ(tile_len)(int left, int mtmax)
{
	int tiles = (left + mtmax - 1) / mtmax;

	return (left + tiles - 1) / tiles;
}

/*
 * Each (R, MT) instance of a tile is a function of its own: inlined into
 * one gemm, the instances' spill slots add up (over 2 KiB of stack, too
 * much for a kernel frame); apart, each frame holds one tile's.
 */
#undef KQ_TILE_ARGS
#undef KQ_TILES
#undef KQ_CALL_MT
#undef KQ_DEFINE_GEMM
#define KQ_TILE_ARGS float *out, cb_size ldo, const char *w, cb_size wrb,	\
		     const char *act, cb_size as, int nb
#if KQ_MT == 4
#define KQ_TILES(name, tile, dt)						\
static CB_NOINLINE void KQ(name##_4x1)(KQ_TILE_ARGS)				\
{ tile(out, ldo, w, wrb, act, as, 4, 1, nb, dt); }				\
static CB_NOINLINE void KQ(name##_4x2)(KQ_TILE_ARGS)				\
{ tile(out, ldo, w, wrb, act, as, 4, 2, nb, dt); }				\
static CB_NOINLINE void KQ(name##_4x3)(KQ_TILE_ARGS)				\
{ tile(out, ldo, w, wrb, act, as, 4, 3, nb, dt); }				\
static CB_NOINLINE void KQ(name##_4x4)(KQ_TILE_ARGS)				\
{ tile(out, ldo, w, wrb, act, as, 4, 4, nb, dt); }				\
static CB_NOINLINE void KQ(name##_1x1)(KQ_TILE_ARGS)				\
{ tile(out, ldo, w, wrb, act, as, 1, 1, nb, dt); }				\
static CB_NOINLINE void KQ(name##_1x2)(KQ_TILE_ARGS)				\
{ tile(out, ldo, w, wrb, act, as, 1, 2, nb, dt); }				\
static CB_NOINLINE void KQ(name##_1x3)(KQ_TILE_ARGS)				\
{ tile(out, ldo, w, wrb, act, as, 1, 3, nb, dt); }				\
static CB_NOINLINE void KQ(name##_1x4)(KQ_TILE_ARGS)				\
{ tile(out, ldo, w, wrb, act, as, 1, 4, nb, dt); }
#define KQ_CALL_MT(name, R, mt, args)						\
	do {									\
		int mt_ = (mt);							\
										\
		if (mt_ == 1)							\
			KQ(name##_##R##x1) args;				\
		else if (mt_ == 2)						\
			KQ(name##_##R##x2) args;				\
		else if (mt_ == 3)						\
			KQ(name##_##R##x3) args;				\
		else								\
			KQ(name##_##R##x4) args;				\
	} while (0)
#elif KQ_MT == 2
#define KQ_TILES(name, tile, dt)						\
static CB_NOINLINE void KQ(name##_4x1)(KQ_TILE_ARGS)				\
{ tile(out, ldo, w, wrb, act, as, 4, 1, nb, dt); }				\
static CB_NOINLINE void KQ(name##_4x2)(KQ_TILE_ARGS)				\
{ tile(out, ldo, w, wrb, act, as, 4, 2, nb, dt); }				\
static CB_NOINLINE void KQ(name##_1x1)(KQ_TILE_ARGS)				\
{ tile(out, ldo, w, wrb, act, as, 1, 1, nb, dt); }				\
static CB_NOINLINE void KQ(name##_1x2)(KQ_TILE_ARGS)				\
{ tile(out, ldo, w, wrb, act, as, 1, 2, nb, dt); }
#define KQ_CALL_MT(name, R, mt, args)						\
	do {									\
		if ((mt) == 1)							\
			KQ(name##_##R##x1) args;				\
		else								\
			KQ(name##_##R##x2) args;				\
	} while (0)
#else
#error "KQ_MT must be 2 or 4"
#endif

/* The gemm entry points: row groups outside, token tiles inside. */
#define KQ_DEFINE_GEMM(name, tile, dt, qk)					\
KQ_TILES(name, tile, dt)							\
KQ_LINKAGE void KQ(name)(float *out, cb_size ldo, const void *w,		\
			 cb_size wrb, const void *act, cb_size as, int M,	\
			 int nrows, int k)					\
{										\
	const char *wc = w, *ac = act;						\
	int r0 = 0, m0, mt;							\
										\
	for (; r0 + KQ_R <= nrows; r0 += KQ_R)					\
		for (m0 = 0; m0 < M; m0 += mt) {				\
			mt = KQ(tile_len)(M - m0, KQ_MT);			\
			KQ_CALL_MT(name, 4, mt, (out + m0 * ldo + r0, ldo,	\
						 wc + r0 * wrb, wrb,		\
						 ac + m0 * as, as, k / (qk)));	\
		}								\
	for (; r0 < nrows; r0++)						\
		for (m0 = 0; m0 < M; m0 += mt) {				\
			mt = KQ(tile_len)(M - m0, KQ_MT);			\
			KQ_CALL_MT(name, 1, mt, (out + m0 * ldo + r0, ldo,	\
						 wc + r0 * wrb, wrb,		\
						 ac + m0 * as, as, k / (qk)));	\
		}								\
}

KQ_DEFINE_GEMM(gemm_q4_1, KQ(l_tile), CB_DT_Q4_1, CB_QK)
KQ_DEFINE_GEMM(gemm_q5_0, KQ(l_tile), CB_DT_Q5_0, CB_QK)
KQ_DEFINE_GEMM(gemm_q5_1, KQ(l_tile), CB_DT_Q5_1, CB_QK)
KQ_DEFINE_GEMM(gemm_iq4_nl, KQ(l_tile), CB_DT_IQ4_NL, CB_QK)
KQ_DEFINE_GEMM(gemm_mxfp4, KQ(l_tile), CB_DT_MXFP4, CB_QK)
KQ_DEFINE_GEMM(gemm_q2_K, KQ(k_tile), CB_DT_Q2_K, CB_QK_K)
KQ_DEFINE_GEMM(gemm_q3_K, KQ(k_tile), CB_DT_Q3_K, CB_QK_K)
KQ_DEFINE_GEMM(gemm_q4_K, KQ(k_tile), CB_DT_Q4_K, CB_QK_K)
KQ_DEFINE_GEMM(gemm_q5_K, KQ(k_tile), CB_DT_Q5_K, CB_QK_K)
KQ_DEFINE_GEMM(gemm_q6_K, KQ(k_tile), CB_DT_Q6_K, CB_QK_K)
KQ_DEFINE_GEMM(gemm_iq4_xs, KQ(k_tile), CB_DT_IQ4_XS, CB_QK_K)

/* ---- activation quantizers ---------------------------------------------- */
#ifndef KQ_NO_QUANT

/*
 * Round-half-even of p clamped to [-127, 127], NaN -> 0, as int32 lanes:
 * cb_nearest_int() of the reference's clamped value (the default MXCSR
 * rounding is to nearest even).
 */
static inline CB_ALWAYS_INLINE __m256i KQ(round_q)(__m256 p)
{
	__m256 ord = _mm256_cmp_ps(p, p, _CMP_ORD_Q);

	p = _mm256_min_ps(_mm256_max_ps(p, _mm256_set1_ps(-127.0f)), _mm256_set1_ps(127.0f));
	return _mm256_cvtps_epi32(_mm256_and_ps(p, ord));
}

/* Four vectors of int32 in [-127, 127] to 32 bytes in element order. */
static inline CB_ALWAYS_INLINE __m256i KQ(pack4)(__m256i a, __m256i b, __m256i c, __m256i d)
{
	__m256i p = _mm256_packs_epi16(_mm256_packs_epi32(a, b), _mm256_packs_epi32(c, d));

	return _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

/* Largest |x| of n (a multiple of 8) floats; NaN lanes lose. */
static inline CB_ALWAYS_INLINE float KQ(amax)(const float *x, int n)
{
	const __m256 sign = _mm256_set1_ps(-0.0f);
	__m256 mx = _mm256_setzero_ps();
	__m128 m;
	int j;

	for (j = 0; j < n; j += 8)	/* max returns its second operand for NaN */
		mx = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(x + j)), mx);
	m = _mm_max_ps(_mm256_castps256_ps128(mx), _mm256_extractf128_ps(mx, 1));
	m = _mm_max_ps(m, _mm_movehl_ps(m, m));
	m = _mm_max_ss(m, _mm_movehdup_ps(m));
	return _mm_cvtss_f32(m);
}

/*
 * q8_1, byte-identical to cb_quantize_row_q8_1_ref(): q8_0's quants
 * (round half away from zero of x / d, d = amax / 127) and their sum.
 */
KQ_LINKAGE void KQ(quantize_q8_1)(void *dst, const float *x, int n)
{
	struct cb_block_q8_1 *blk = dst;
	const __m256 half = _mm256_set1_ps(0.5f), mhalf = _mm256_set1_ps(-0.5f);
	const __m256 one = _mm256_set1_ps(1.0f);
	int b, j;

	for (b = 0; b < n / CB_QK; b++) {
		const float *xb = x + b * CB_QK;
		float amax = KQ(amax)(xb, CB_QK), d = amax / 127.0f;
		float id = d != 0.0f ? 1.0f / d : 0.0f;
		__m256i q[4], s;

		blk[b].d = cb_f32_to_f16(d);
#pragma GCC unroll 4
		for (j = 0; j < 4; j++) {
			__m256 p = _mm256_mul_ps(_mm256_loadu_ps(xb + 8 * j), _mm256_set1_ps(id));
			__m256 ord = _mm256_cmp_ps(p, p, _CMP_ORD_Q);
			__m256 t, f, up, dn;

			p = _mm256_min_ps(_mm256_max_ps(p, _mm256_set1_ps(-127.0f)),
					  _mm256_set1_ps(127.0f));
			t = _mm256_round_ps(p, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
			f = _mm256_sub_ps(p, t);
			up = _mm256_and_ps(_mm256_cmp_ps(f, half, _CMP_GE_OQ), one);
			dn = _mm256_and_ps(_mm256_cmp_ps(f, mhalf, _CMP_LE_OQ), one);
			t = _mm256_sub_ps(_mm256_add_ps(t, up), dn);
			q[j] = _mm256_cvttps_epi32(_mm256_and_ps(t, ord));
		}
		_mm256_storeu_si256((__m256i *)blk[b].qs, KQ(pack4)(q[0], q[1], q[2], q[3]));
		s = _mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3]));
		{
			__m128i t = _mm_add_epi32(_mm256_castsi256_si128(s),
						  _mm256_extracti128_si256(s, 1));

			t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0x4e));
			t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0xb1));
			blk[b].sum = (cb_s16)_mm_cvtsi128_si32(t);
		}
	}
}

/* q8_K, byte-identical to cb_quantize_row_q8_K_ref(). */
KQ_LINKAGE void KQ(quantize_q8_K)(void *dst, const float *x, int n)
{
	struct cb_block_q8_K *blk = dst;
	int b, j;

	for (b = 0; b < n / CB_QK_K; b++) {
		const float *xb = x + b * CB_QK_K;
		float amax = KQ(amax)(xb, CB_QK_K), mx = 0.0f, is;
		__m256 vis;

		if (amax == 0.0f) {
			__builtin_memset(&blk[b], 0, sizeof(blk[b]));
			continue;
		}
		/* the first x of that magnitude, with its sign */
		for (j = 0; j < CB_QK_K; j += 8) {
			__m256 a = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), _mm256_loadu_ps(xb + j));
			int msk = _mm256_movemask_ps(_mm256_cmp_ps(a, _mm256_set1_ps(amax),
								   _CMP_EQ_OQ));

			if (msk) {
				mx = xb[j + __builtin_ctz((unsigned int)msk)];
				break;
			}
		}
		is = -127.0f / mx;
		vis = _mm256_set1_ps(is);
		for (j = 0; j < CB_QK_K; j += 32) {
			__m256i q0 = KQ(round_q)(_mm256_mul_ps(_mm256_loadu_ps(xb + j), vis));
			__m256i q1 = KQ(round_q)(_mm256_mul_ps(_mm256_loadu_ps(xb + j + 8), vis));
			__m256i q2 = KQ(round_q)(_mm256_mul_ps(_mm256_loadu_ps(xb + j + 16), vis));
			__m256i q3 = KQ(round_q)(_mm256_mul_ps(_mm256_loadu_ps(xb + j + 24), vis));
			__m256i s0 = _mm256_add_epi32(q0, q1), s1 = _mm256_add_epi32(q2, q3);
			__m256i hs = _mm256_hadd_epi32(s0, s1);	/* [s0 01 23 s1 01 23 | 45 67 ..] */
			__m128i t;

			_mm256_storeu_si256((__m256i *)(blk[b].qs + j), KQ(pack4)(q0, q1, q2, q3));
			t = _mm256_extracti128_si256(hs, 1);
			t = _mm_add_epi32(_mm256_castsi256_si128(hs), t);
			t = _mm_hadd_epi32(t, t);	/* [sum 0..15, sum 16..31, ...] */
			blk[b].bsums[j / 16] = (cb_s16)_mm_cvtsi128_si32(t);
			blk[b].bsums[j / 16 + 1] = (cb_s16)_mm_extract_epi32(t, 1);
		}
		blk[b].d_bits = cb_f32_bits(1.0f / is);
	}
}
#endif /* KQ_NO_QUANT */
