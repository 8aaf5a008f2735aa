/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_ops_x86_tmpl.h - the x86 SIMD kernels, written once, instantiated by
 * cb_ops_avx2.c (8-float vectors) and cb_ops_avx512.c (16-float vectors).
 *
 * Not a normal header: the including file defines these first.
 *
 *   PFX(name)          prefix for every function (avx2_name, avx512_name)
 *   VF, VF_N           float vector type and its lanes
 *   VF_ZERO()          all-zero vector
 *   VF_LOADU(p)        VF_N floats from p (unaligned)
 *   VF_STOREU(p, v)
 *   VF_SET1(x)
 *   VF_ADD, VF_SUB, VF_MUL  lane-wise, one rounding each
 *   VF_FMA(a, b, c)    a * b + c, one rounding (an explicit FMA)
 *   VF_HSUM(v)         sum of the lanes as a float
 *   VF_LOAD_F16(p)     VF_N halves at p, converted to floats (exact)
 *   VF_LOAD_BF16(p)    VF_N bfloat16 at p, converted to floats (exact)
 *   F_MT               tokens per register tile in the float kernels
 *   Q_MT               tokens per register tile in the block kernels
 *   Q_DOT(u, s)        __m256i of 8 int32: the 32 u8 x s8 products of u
 *                      and s summed in groups (only the total of the 8
 *                      lanes matters); u <= 128, |s| <= 127 so that no
 *                      16-bit intermediate saturates
 *   Q_DPBUSD(acc, u, s) optional: acc + the same, with vpdpbusd; with
 *                      Q_HAVE_VNNI, gemm_q8_0_vnni and gemm_q4_0_vnni are
 *                      made too, for a variant of its own (the CPU is
 *                      checked once, by that variant's valid())
 *   Q_VNNI_TILE, Q_VNNI_MT  optional: a tile function (same signature as
 *                      q_tile) and its token tile for the VNNI gemms
 *   Q_DEC_TILE(out, w, wrb, act, nb)  optional: q_tile's 4 rows x 1
 *                      token (decode) of q4_0, with q_tile's float steps
 *                      (cb_ops_dec_avx2.h)
 *
 * Tiling: R_TILE = 4 weight rows times up to F_MT / Q_MT tokens of
 * accumulators live in registers; each group of 4 rows is streamed from
 * memory once and its later token tiles hit the cache.  Rows left over
 * (nrows % 4) go one at a time.  All loops over R_TILE and the token tile
 * are unrolled, and the tile functions are always inlined with constant
 * R / MT / dtype, so every instance is straight-line code.
 *
 * The block kernels (q_tile) work one 32-block per 256-bit vector: the 8
 * int32 partial sums of a block are converted to float and accumulated
 * with the block's scale d_w * d_x by FMA, as ggml does.  AVX-512 with VNNI
 * replaces q_tile by its own two-blocks-per-zmm tile (cb_ops_avx512.c).
 * Weight rows are software-prefetched twice per block (prefetch_row):
 * Q_PREFETCH bytes ahead in the row into L1, and the same place R rows on,
 * i.e. in the next row group, into L2.  The second one is what keeps
 * decode at the read bandwidth: without it, rows 1..3 of every new group
 * start cold (the hardware streamers follow row 0 of the next group, the
 * continuation of this group's row 3, but nothing else), which cost a
 * quarter to a third of the bandwidth with 2 KiB rows (docs/performance.md,
 * (a)).  The last group of a call prefetches past its rows: harmless (a
 * prefetch never faults) and usually useful, as the next chunk follows.
 */

#define R_TILE 4
/* Flag or'ed into the dtype argument of the block tiles: use Q_DPBUSD. */
#define QF_VNNI 0x100
#define Q_BLK_BYTES(dt) ((((dt) & 0xff) == CB_DT_Q4_0) ? 18 : 34)
#ifndef Q_PREFETCH
#define Q_PREFETCH 512
#endif
#ifndef Q_DPBUSD
#define Q_DPBUSD(acc, u, s) _mm256_add_epi32(acc, Q_DOT(u, s))
#endif
/* acc + sum of u8 x s8 products, by the dot product the dtype flag picks */
#define Q_DOTACC(acc, u, s, dt)						\
	(((dt) & QF_VNNI) ? Q_DPBUSD(acc, u, s) : _mm256_add_epi32(acc, Q_DOT(u, s)))

static inline CB_ALWAYS_INLINE float PFX(h2f)(cb_u16 h)
{
	return _cvtsh_ss(h);
}

static inline CB_ALWAYS_INLINE float PFX(hsum256)(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v),
			      _mm256_extractf128_ps(v, 1));

	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

/* The two prefetches for row r of an R-row group, at byte off of its rows. */
static inline CB_ALWAYS_INLINE void PFX(prefetch_row)(const char *w, cb_size wrb, int r,
						      int R, cb_size off)
{
	_mm_prefetch(w + r * wrb + off + Q_PREFETCH, _MM_HINT_T0);
	_mm_prefetch(w + (R + r) * wrb + off, _MM_HINT_T1);
}

/* VF_N weights of row w from element i, as floats. */
static inline CB_ALWAYS_INLINE VF PFX(load_w)(int dt, const char *w, int i)
{
	if (dt == CB_DT_F16)
		return VF_LOAD_F16((const cb_u16 *)w + i);
	if (dt == CB_DT_BF16)
		return VF_LOAD_BF16((const cb_u16 *)w + i);
	return VF_LOADU((const float *)w + i);
}

/* One weight as a float; inline (no calls: they would spill the tile). */
static inline CB_ALWAYS_INLINE float PFX(scalar_w)(int dt, const char *w, int i)
{
	if (dt == CB_DT_F16)
		return PFX(h2f)(((const cb_u16 *)w)[i]);
	if (dt == CB_DT_BF16)
		return cb_f32_from_bits((cb_u32)((const cb_u16 *)w)[i] << 16);
	return ((const float *)w)[i];
}

/* R rows x MT tokens of a float-weight gemm (R <= R_TILE, MT <= F_MT). */
static inline CB_ALWAYS_INLINE void PFX(f_tile)(float *out, cb_size ldo, const char *w,
					 cb_size wrb, const char *act, cb_size as,
					 int R, int MT, int k, int dt)
{
	VF acc[R_TILE][F_MT];
	float tail[R_TILE][F_MT];
	int kv = k - k % VF_N;
	int r, m, i;

#pragma GCC unroll 4
	for (r = 0; r < R_TILE; r++)
#pragma GCC unroll 8
		for (m = 0; m < F_MT; m++) {
			acc[r][m] = VF_ZERO();
			tail[r][m] = 0.0f;
		}

	for (i = 0; i < kv; i += VF_N) {
		VF xv[F_MT];

#pragma GCC unroll 8
		for (m = 0; m < F_MT; m++)
			if (m < MT)
				xv[m] = VF_LOADU((const float *)(act + m * as) + i);
#pragma GCC unroll 4
		for (r = 0; r < R_TILE; r++) {
			VF wv;

			if (r >= R)
				continue;
			wv = PFX(load_w)(dt, w + r * wrb, i);
#pragma GCC unroll 8
			for (m = 0; m < F_MT; m++)
				if (m < MT)
					acc[r][m] = VF_FMA(wv, xv[m], acc[r][m]);
		}
	}
	/* k % VF_N left: plain scalar products, added after the lanes. */
	for (; i < k; i++) {
#pragma GCC unroll 4
		for (r = 0; r < R_TILE; r++) {
			float wi;

			if (r >= R)
				continue;
			wi = PFX(scalar_w)(dt, w + r * wrb, i);
#pragma GCC unroll 8
			for (m = 0; m < F_MT; m++)
				if (m < MT)
					tail[r][m] += wi *
						((const float *)(act + m * as))[i];
		}
	}
#pragma GCC unroll 4
	for (r = 0; r < R_TILE; r++)
#pragma GCC unroll 8
		for (m = 0; m < F_MT; m++)
			if (r < R && m < MT)
				out[m * ldo + r] = VF_HSUM(acc[r][m]) + tail[r][m];
}

/*
 * 32 weights of block b in a 256-bit vector, in the activation's element
 * order: signed bytes for q8_0, the unsigned nibbles (w + 8) for q4_0.
 */
static inline CB_ALWAYS_INLINE __m256i PFX(load_wq)(int dt, const char *w, int b)
{
	if ((dt & 0xff) == CB_DT_Q4_0) {
		const struct cb_block_q4_0 *wb = (const struct cb_block_q4_0 *)w + b;
		__m128i q = _mm_loadu_si128((const __m128i *)wb->qs);
		__m128i m4 = _mm_set1_epi8(0x0f);
		__m128i lo = _mm_and_si128(q, m4);
		__m128i hi = _mm_and_si128(_mm_srli_epi16(q, 4), m4);

		/* low nibbles are elements 0..15, high nibbles 16..31 */
		return _mm256_set_m128i(hi, lo);
	}
	return _mm256_loadu_si256((const __m256i *)((const struct cb_block_q8_0 *)w + b)->qs);
}

/*
 * R rows x MT tokens of a block-weight gemm against q8_0 activations.
 *
 * Per block, the R weight scales are gathered into one vector and
 * converted and multiplied by each token's scale together; each (row,
 * token) term then takes its lane with one permute.  The products are the
 * same single roundings of d_w * d_x as in the scalar code.
 *
 * q8_0: sum w x = sum |w| (x sign(w)), an unsigned-by-signed byte product.
 * q4_0: sum (n - 8) x = sum n x - 8 sum x with the nibbles n unsigned, so
 * the per-token 8 sum x is taken once per block for all rows and the
 * rows need neither the subtraction nor the sign trick.
 */
static inline CB_ALWAYS_INLINE void PFX(q_tile)(float *out, cb_size ldo, const char *w,
					 cb_size wrb, const char *act, cb_size as,
					 int R, int MT, int nb, int dt)
{
	const cb_size bsz = Q_BLK_BYTES(dt);
	__m256 acc[R_TILE][Q_MT];
	__m256i lane[R_TILE];
	int r, m, b;

#ifdef Q_DEC_TILE
	/* decode: the variant's own 4 x 1 tile, the same float steps */
	if (dt == CB_DT_Q4_0 && MT == 1 && R == R_TILE) {
		Q_DEC_TILE(out, w, wrb, act, nb);
		return;
	}
#endif
#pragma GCC unroll 4
	for (r = 0; r < R_TILE; r++) {
		lane[r] = _mm256_set1_epi32(r);
#pragma GCC unroll 8
		for (m = 0; m < Q_MT; m++)
			acc[r][m] = _mm256_setzero_ps();
	}

	for (b = 0; b < nb; b++) {
		__m256i xq[Q_MT];
		__m256 s[Q_MT];		/* lanes 0..R-1: d_w[r] * d_x[m] */
		__m256i base[Q_MT];	/* q4_0: -8 sum x; q8_0: 0 */
		cb_u64 hd = 0;
		__m128 dw;

		/*
		 * The scale is the first field of both block types.  The R
		 * halves are packed in a scalar register and moved over once:
		 * a vpinsrw each would load the shuffle port.
		 */
#pragma GCC unroll 4
		for (r = 0; r < R_TILE; r++)
			if (r < R)
				hd |= (cb_u64)*(const cb_u16 *)(w + r * wrb + b * bsz) << (16 * r);
		dw = _mm_cvtph_ps(_mm_cvtsi64_si128((long long)hd));
#pragma GCC unroll 8
		for (m = 0; m < Q_MT; m++) {
			const struct cb_block_q8_0 *xb;

			if (m >= MT)
				continue;
			xb = (const struct cb_block_q8_0 *)(act + m * as) + b;
			xq[m] = _mm256_loadu_si256((const __m256i *)xb->qs);
			s[m] = _mm256_castps128_ps256(_mm_mul_ps(dw, _mm_set1_ps(PFX(h2f)(xb->d))));
			base[m] = _mm256_setzero_si256();
			if ((dt & 0xff) == CB_DT_Q4_0)
				base[m] = _mm256_sub_epi32(base[m],
							   Q_DOTACC(base[m], _mm256_set1_epi8(8),
								    xq[m], dt));
		}
#pragma GCC unroll 4
		for (r = 0; r < R_TILE; r++) {
			__m256i wq, aw;

			if (r >= R)
				continue;
			PFX(prefetch_row)(w, wrb, r, R, b * bsz);
			wq = PFX(load_wq)(dt, w + r * wrb, b);
			if ((dt & 0xff) == CB_DT_Q8_0)
				aw = _mm256_sign_epi8(wq, wq);	/* |w| as u8 */
			else
				aw = wq;			/* n = w + 8 */
#pragma GCC unroll 8
			for (m = 0; m < Q_MT; m++) {
				__m256i sx, isum;

				if (m >= MT)
					continue;
				if ((dt & 0xff) == CB_DT_Q8_0)
					sx = _mm256_sign_epi8(xq[m], wq); /* x sign(w) */
				else
					sx = xq[m];
				isum = Q_DOTACC(base[m], aw, sx, dt);
				acc[r][m] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum),
							    _mm256_permutevar8x32_ps(s[m], lane[r]),
							    acc[r][m]);
			}
		}
	}
#pragma GCC unroll 4
	for (r = 0; r < R_TILE; r++)
#pragma GCC unroll 8
		for (m = 0; m < Q_MT; m++)
			if (r < R && m < MT)
				out[m * ldo + r] = PFX(hsum256)(acc[r][m]);
}

/*
 * Call tile(o, ldo, w, wrb, a, as, R, mt, klen, dt) with mt a compile-time
 * constant (cases above MTMAX are dead code the compiler drops).
 */
#define PFX_CALL_MT(tile, MTMAX, mt, R, o, ldo, w, wrb, a, as, klen, dt)	\
	do {									\
		if ((mt) == 1)							\
			tile(o, ldo, w, wrb, a, as, R, 1, klen, dt);		\
		else if ((MTMAX) >= 2 && (mt) == 2)				\
			tile(o, ldo, w, wrb, a, as, R, 2, klen, dt);		\
		else if ((MTMAX) >= 3 && (mt) == 3)				\
			tile(o, ldo, w, wrb, a, as, R, 3, klen, dt);		\
		else if ((MTMAX) >= 4 && (mt) == 4)				\
			tile(o, ldo, w, wrb, a, as, R, 4, klen, dt);		\
		else if ((MTMAX) >= 5 && (mt) == 5)				\
			tile(o, ldo, w, wrb, a, as, R, 5, klen, dt);		\
		else if ((MTMAX) >= 6 && (mt) == 6)				\
			tile(o, ldo, w, wrb, a, as, R, 6, klen, dt);		\
	} while (0)

/*
 * Tokens in the next tile when left remain: the fewest tiles of at most
 * mtmax, as even as they go (6 with mtmax 4 is 3 + 3, not 4 + 2; 9 is
 * 3 + 3 + 3): the row group is read once per tile, and a short last tile
 * costs nearly as much as a full one.  A token's result does not depend
 * on its tile, only the speed does.
 */
static inline CB_ALWAYS_INLINE int PFX(tile_len)(int left, int mtmax)
{
	int tiles = (left + mtmax - 1) / mtmax;

	return (left + tiles - 1) / tiles;
}

/* The gemm entry points: row groups outside, token tiles inside. */
#define DEFINE_GEMM(name, tile, MTMAX, dt, klen)			\
static void PFX(name)(float *out, cb_size ldo, const void *w,		\
		      cb_size wrb, const void *act, cb_size as, int M,	\
		      int nrows, int k)					\
{									\
	const char *wc = w, *ac = act;					\
	int r0 = 0, m0, mt;						\
									\
	for (; r0 + R_TILE <= nrows; r0 += R_TILE)			\
		for (m0 = 0; m0 < M; m0 += mt) {			\
			mt = PFX(tile_len)(M - m0, MTMAX);		\
			PFX_CALL_MT(tile, MTMAX, mt, R_TILE,		\
				    out + m0 * ldo + r0, ldo,		\
				    wc + r0 * wrb, wrb,			\
				    ac + m0 * as, as, klen, dt);	\
		}							\
	for (; r0 < nrows; r0++)					\
		for (m0 = 0; m0 < M; m0 += mt) {			\
			mt = PFX(tile_len)(M - m0, MTMAX);		\
			PFX_CALL_MT(tile, MTMAX, mt, 1,			\
				    out + m0 * ldo + r0, ldo,		\
				    wc + r0 * wrb, wrb,			\
				    ac + m0 * as, as, klen, dt);	\
		}							\
}

DEFINE_GEMM(gemm_f32, PFX(f_tile), F_MT, CB_DT_F32, k)
DEFINE_GEMM(gemm_f16, PFX(f_tile), F_MT, CB_DT_F16, k)
DEFINE_GEMM(gemm_bf16, PFX(f_tile), F_MT, CB_DT_BF16, k)
DEFINE_GEMM(gemm_q8_0, PFX(q_tile), Q_MT, CB_DT_Q8_0, k / CB_QK)
DEFINE_GEMM(gemm_q4_0, PFX(q_tile), Q_MT, CB_DT_Q4_0, k / CB_QK)
#ifdef Q_HAVE_VNNI
/* The VNNI variant's block gemms: its own tile, vpdpbusd. */
#ifndef Q_VNNI_TILE
#define Q_VNNI_TILE PFX(q_tile)
#define Q_VNNI_MT Q_MT
#endif
DEFINE_GEMM(gemm_q8_0_vnni, Q_VNNI_TILE, Q_VNNI_MT, CB_DT_Q8_0 | QF_VNNI, k / CB_QK)
DEFINE_GEMM(gemm_q4_0_vnni, Q_VNNI_TILE, Q_VNNI_MT, CB_DT_Q4_0 | QF_VNNI, k / CB_QK)
#endif

/*
 * q8_0 quantization, byte-identical to cb_quantize_row_q8_0_ref(): the
 * same scalar d and id, then per lane the same product, clamp, NaN -> 0
 * and roundf (truncate, then step away from zero when the exact fraction
 * is >= 0.5).  256-bit in both variants: it is a small part of the work.
 */
static void PFX(quantize_q8_0)(void *dst, const float *x, int n)
{
	struct cb_block_q8_0 *blk = dst;
	const __m256 signbit = _mm256_set1_ps(-0.0f);
	const __m256 half = _mm256_set1_ps(0.5f), mhalf = _mm256_set1_ps(-0.5f);
	const __m256 one = _mm256_set1_ps(1.0f);
	const __m256 lim = _mm256_set1_ps(127.0f), mlim = _mm256_set1_ps(-127.0f);
	const __m256i perm = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
	int b, j;

	for (b = 0; b < n / CB_QK; b++) {
		const float *xb = x + b * CB_QK;
		__m256 v[4], mx;
		__m256i q[4];
		float amax, d, id;

		mx = _mm256_setzero_ps();
#pragma GCC unroll 4
		for (j = 0; j < 4; j++) {
			v[j] = _mm256_loadu_ps(xb + 8 * j);
			/* NaN lanes lose: max returns its second operand */
			mx = _mm256_max_ps(_mm256_andnot_ps(signbit, v[j]), mx);
		}
		{
			__m128 m = _mm_max_ps(_mm256_castps256_ps128(mx),
					      _mm256_extractf128_ps(mx, 1));

			m = _mm_max_ps(m, _mm_movehl_ps(m, m));
			m = _mm_max_ss(m, _mm_movehdup_ps(m));
			amax = _mm_cvtss_f32(m);
		}
		d = amax / 127.0f;
		id = d != 0.0f ? 1.0f / d : 0.0f;
		blk[b].d = cb_f32_to_f16(d);
#pragma GCC unroll 4
		for (j = 0; j < 4; j++) {
			__m256 p = _mm256_mul_ps(v[j], _mm256_set1_ps(id));
			__m256 ord = _mm256_cmp_ps(p, p, _CMP_ORD_Q);
			__m256 t, f, up, dn;

			p = _mm256_min_ps(_mm256_max_ps(p, mlim), lim);
			t = _mm256_round_ps(p, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
			f = _mm256_sub_ps(p, t);
			up = _mm256_and_ps(_mm256_cmp_ps(f, half, _CMP_GE_OQ), one);
			dn = _mm256_and_ps(_mm256_cmp_ps(f, mhalf, _CMP_LE_OQ), one);
			t = _mm256_sub_ps(_mm256_add_ps(t, up), dn);
			q[j] = _mm256_cvttps_epi32(_mm256_and_ps(t, ord));
		}
		{
			/* packs interleave 128-bit lanes; perm puts them back */
			__m256i a = _mm256_packs_epi32(q[0], q[1]);
			__m256i c = _mm256_packs_epi32(q[2], q[3]);

			a = _mm256_packs_epi16(a, c);
			a = _mm256_permutevar8x32_epi32(a, perm);
			_mm256_storeu_si256((__m256i *)blk[b].qs, a);
		}
	}
}

/*
 * y += a * x with a multiply and an add (no FMA), exactly as the scalar
 * reference rounds: the result is bit-identical across variants.
 */
static void PFX(axpy_f32)(float *y, float a, const float *x, int n)
{
	VF va = VF_SET1(a);
	int i = 0;

	for (; i + VF_N <= n; i += VF_N)
		VF_STOREU(y + i, VF_ADD(VF_LOADU(y + i), VF_MUL(va, VF_LOADU(x + i))));
	for (; i < n; i++)
		y[i] += a * x[i];
}

/*
 * pv_f32's block: heads [0, G) of @o, PV_V vectors of each (or fewer, V),
 * in registers over all n positions: per element the same multiply and
 * add, in the same position order, as one axpy_f32 per (head, position).
 */
#define PV_G 4
#define PV_V 4
static inline CB_ALWAYS_INLINE void PFX(pv_blk)(float *o, cb_size ldo, const float *p,
						cb_size ldp, const float *v, cb_size ldv,
						int n, int G, int V)
{
	VF acc[PV_G][PV_V], x[PV_V];
	int g, u, i;

#pragma GCC unroll 4
	for (g = 0; g < PV_G; g++)
#pragma GCC unroll 4
		for (u = 0; u < PV_V; u++)
			if (g < G && u < V)
				acc[g][u] = VF_LOADU(o + g * ldo + u * VF_N);
	for (i = 0; i < n; i++) {
#pragma GCC unroll 4
		for (u = 0; u < PV_V; u++)
			if (u < V)
				x[u] = VF_LOADU(v + i * ldv + u * VF_N);
#pragma GCC unroll 4
		for (g = 0; g < PV_G; g++) {
			VF a;

			if (g >= G)
				continue;
			a = VF_SET1(p[g * ldp + i]);
#pragma GCC unroll 4
			for (u = 0; u < PV_V; u++)
				if (u < V)
					acc[g][u] = VF_ADD(acc[g][u], VF_MUL(a, x[u]));
		}
	}
#pragma GCC unroll 4
	for (g = 0; g < PV_G; g++)
#pragma GCC unroll 4
		for (u = 0; u < PV_V; u++)
			if (g < G && u < V)
				VF_STOREU(o + g * ldo + u * VF_N, acc[g][u]);
}

/* the heads of one column block: groups of PV_G, then one at a time */
static inline CB_ALWAYS_INLINE void PFX(pv_cols)(float *o, cb_size ldo, const float *p,
						 cb_size ldp, const float *v, cb_size ldv,
						 int ng, int n, int V)
{
	int g;

	for (g = 0; g + PV_G <= ng; g += PV_G)
		PFX(pv_blk)(o + g * ldo, ldo, p + g * ldp, ldp, v, ldv, n, PV_G, V);
	for (; g < ng; g++)
		PFX(pv_blk)(o + g * ldo, ldo, p + g * ldp, ldp, v, ldv, n, 1, V);
}

/*
 * o[g][0..w) += sum over i of p[g][i] * v[i][0..w), i in order: the
 * attention's P.V of a tile, bit for bit ng x n calls of axpy_f32
 * (cb_ops.h), with the heads' outputs held in registers across the tile.
 */
static void PFX(pv_f32)(float *o, cb_size ldo, const float *p, cb_size ldp,
			const float *v, cb_size ldv, int ng, int n, int w)
{
	int d = 0, g, i;

	for (; d + PV_V * VF_N <= w; d += PV_V * VF_N)
		PFX(pv_cols)(o + d, ldo, p, ldp, v + d, ldv, ng, n, PV_V);
	for (; d + VF_N <= w; d += VF_N)
		PFX(pv_cols)(o + d, ldo, p, ldp, v + d, ldv, ng, n, 1);
	if (d < w)
		for (g = 0; g < ng; g++)
			for (i = 0; i < n; i++)
				PFX(axpy_f32)(o + g * ldo + d, p[g * ldp + i], v + i * ldv + d,
					      w - d);
}

/*
 * delta_step_f32's block: V vectors of columns, their kv and then their o
 * in registers over all k rows of S; each row's piece loaded twice (decay
 * and read, then correct and read).  Per column the scalar steps.
 */
#define DS_V 4
static inline CB_ALWAYS_INLINE void PFX(delta_blk)(float *S, cb_size ld, int k, const float *kk,
						   const float *q, const float *v, float dec,
						   float beta, float *o, int V)
{
	VF acc[DS_V], d[DS_V], vdec = VF_SET1(dec), vbeta = VF_SET1(beta);
	int i, u;

#pragma GCC unroll 4
	for (u = 0; u < DS_V; u++)
		if (u < V)
			acc[u] = VF_ZERO();
	for (i = 0; i < k; i++) {
		float *s = S + i * ld;
		VF ki = VF_SET1(kk[i]);

#pragma GCC unroll 4
		for (u = 0; u < DS_V; u++) {
			VF x;

			if (u >= V)
				continue;
			x = VF_MUL(VF_LOADU(s + u * VF_N), vdec);
			VF_STOREU(s + u * VF_N, x);
			acc[u] = VF_ADD(acc[u], VF_MUL(x, ki));
		}
	}
#pragma GCC unroll 4
	for (u = 0; u < DS_V; u++)
		if (u < V) {
			d[u] = VF_MUL(VF_SUB(VF_LOADU(v + u * VF_N), acc[u]), vbeta);
			acc[u] = VF_ZERO();
		}
	for (i = 0; i < k; i++) {
		float *s = S + i * ld;
		VF ki = VF_SET1(kk[i]), qi = VF_SET1(q[i]);

#pragma GCC unroll 4
		for (u = 0; u < DS_V; u++) {
			VF x;

			if (u >= V)
				continue;
			x = VF_ADD(VF_LOADU(s + u * VF_N), VF_MUL(d[u], ki));
			VF_STOREU(s + u * VF_N, x);
			acc[u] = VF_ADD(acc[u], VF_MUL(x, qi));
		}
	}
#pragma GCC unroll 4
	for (u = 0; u < DS_V; u++)
		if (u < V)
			VF_STOREU(o + u * VF_N, acc[u]);
}

/*
 * One token of the gated delta rule on n columns of S (cb_ops.h): blocks
 * of DS_V vectors, then single vectors, then the scalar table's steps for
 * the columns left over.
 */
static void PFX(delta_step_f32)(float *S, cb_size ld, int k, int n, const float *kk,
				const float *q, const float *v, float dec, float beta, float *o,
				float *tmp)
{
	int j = 0;

	for (; j + DS_V * VF_N <= n; j += DS_V * VF_N)
		PFX(delta_blk)(S + j, ld, k, kk, q, v + j, dec, beta, o + j, DS_V);
	for (; j + VF_N <= n; j += VF_N)
		PFX(delta_blk)(S + j, ld, k, kk, q, v + j, dec, beta, o + j, 1);
	if (j < n)
		cb_isa_scalar.delta_step_f32(S + j, ld, k, n - j, kk, q, v + j, dec, beta, o + j,
					     tmp);
}

/*
 * The table entries every x86 variant fills the same way (cb_ops.h's
 * struct cb_isa_ops), v its name: the float gemms and the q8_0 quantizer
 * of this template, the other activation quantizers (cb_q_dec_avx512.c,
 * cb_kq_*), the vector ops of this template and the variant's file, and
 * its vector math (cb_vmath_x86_tmpl.h).  What differs between variants
 * (the block gemms, packed tiles, gemm_ps) stays in each table.
 */
#define CB_X86_FLOAT_GEMMS					\
	[CB_DT_F32] = PFX(gemm_f32),				\
	[CB_DT_F16] = PFX(gemm_f16),				\
	[CB_DT_BF16] = PFX(gemm_bf16)
#define CB_X86_VECTOR_OPS(v)					\
	.quantize_act = {					\
		[CB_ACT_Q8_0] = PFX(quantize_q8_0),		\
		[CB_ACT_Q8_1] = cb_##v##_quantize_q8_1,		\
		[CB_ACT_Q8_K] = cb_##v##_quantize_q8_K,		\
	},							\
	.axpy_f32 = PFX(axpy_f32),				\
	.pv_f32 = PFX(pv_f32),					\
	.delta_step_f32 = PFX(delta_step_f32),			\
	.topk_f32 = PFX(topk_f32),				\
	.swiglu_f32 = cb_swiglu_##v,				\
	.swiglu_oss_f32 = cb_swiglu_oss_##v,			\
	.expf_sub_f32 = cb_expf_sub_##v
