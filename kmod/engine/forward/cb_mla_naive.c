// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_mla_naive.c - multi-head latent attention (DeepSeek-V2/V3), the naive
 * form, for prefill.
 *
 * The cache holds per position the normed latent c (R = kv_lora_rank) and
 * the roped shared key k_pe.  The naive form decompresses, for the
 * positions of the pass's context, each head's key k_nope = W_uk[h] c and
 * value v = W_uv[h] c, and attends as HF's code does:
 *
 *   score = (q_nope . k_nope + q_pe . k_pe) * scale,  out_h = sum_p w_p v_p
 *
 * It costs R (nope + v) multiply-adds per head and context position to
 * decompress, and (nope + rope + v) per head, query token and position to
 * attend; the absorbed form (cb_mla.c) costs R (nope + v) per head and
 * query token to absorb and project out, and (2 R + rope) per head, query
 * token and position.  A prefill of T tokens amortises the decompression
 * over T queries; a decode step cannot.  cb_mla_naive_chosen() compares
 * the two costs for the pass.
 *
 * Steps per layer: k_b and v_b to f32 (W_uk transposed so that a latent's
 * key is one gemm row), then split by split of nv_split positions: the
 * split's keys and values decompressed by one f32 gemm, every token's heads
 * attended over it (online softmax, the split's (max, sum, output) kept as
 * cb_attention.c keeps them), and the splits merged (cb_att_merge()).  The
 * split points depend on the shape alone, so a token's bits depend neither
 * on the threads nor on how the pass was chunked.
 */
#include "core/cb_engine_priv.h"
#include "ops/cb_math.h"
#include "arch/cb_mla.h"
#include "forward/cb_rope.h"

#define NV_TILE 32		/* positions per score tile (on the stack) */

/* one naive split of 32 positions of one head, at the widest heads */
CB_STATIC_ASSERT(32ull * (3ull * CB_MAX_HEAD_DIM * CB_PS_ATT + CB_PS_EXP) <= CB_CHUNK_PS,
		 "naive MLA split of 32");
/* one row of k_b or v_b dequantized; one transposed row of W_uk */
CB_STATIC_ASSERT((cb_u64)CB_MAX_MLA_ROW * (CB_PS_DEQUANT + CB_PS_COPY) <= CB_CHUNK_PS,
		 "naive MLA weight row");

/*
 * The rule's weights, measured for V3's shape on AVX-512
 * (docs/performance.md, "MLA: absorbed or naive"):
 * NV_WEIGHT_POSITIONS: k_b and v_b to f32 and W_uk's transposition, per
 *	pass and layer, in positions of decompression (scalar code against an
 *	f32 gemm): 21 to 100 measured, under load;
 * NV_ATT_COST: a multiply-add of the attention loops (tiles of scores,
 *	exp, P.V) against one of a gemm (absorbing q, projecting out,
 *	decompressing): about 3, measured when P.V was one axpy per position.
 */
#define NV_WEIGHT_POSITIONS 64
#define NV_ATT_COST 3

void cb_engine_set_mla_form(struct cb_engine *e, int form)
{
	e->mla_form = form;
}

/*
 * The naive form for this pass?  Only a pass of one sequence's tokens (a
 * prefill piece: the decompression is that sequence's alone), only where
 * the scratch was carved, and only when it costs less, counting per head
 * with C = sum over tokens of (pos + 1), L = the longest context, T the
 * tokens, W = NV_WEIGHT_POSITIONS and a = NV_ATT_COST:
 *
 *   absorbed  T R (nope + v)       + a C (2 R + rope)
 *   naive     (L + W) R (nope + v) + a C (nope + rope + v)
 *
 * Integer only (the calling thread runs it between phases), and a function
 * of the batch alone: the same batch takes the same form in the kernel and
 * in-process, whatever the threads.
 */
int cb_mla_naive_chosen(const struct cb_engine *e)
{
	const struct cb_mla_config *m = &e->cfg.mla;
	cb_u64 P = (cb_u64)e->mla_R * (m->qk_nope_dim + m->v_head_dim), C = 0, L = 0, A, N;
	int t;

	if (!e->nv_w || e->mla_form == CB_MLA_ABSORBED)
		return 0;
	for (t = 0; t < e->n; t++) {
		if (e->b->seq[t] != e->b->seq[0])
			return 0;
		C += (cb_u64)e->b->pos[t] + 1;
		L = CB_MAX(L, (cb_u64)e->b->pos[t] + 1);
	}
	if (e->mla_form == CB_MLA_NAIVE)
		return 1;
	if (e->n < 2)
		return 0;
	A = (cb_u64)e->n * P + NV_ATT_COST * C * (2ull * e->mla_R + m->qk_rope_dim);
	N = (L + NV_WEIGHT_POSITIONS) * P +
	    NV_ATT_COST * C * ((cb_u64)m->qk_nope_dim + m->qk_rope_dim + m->v_head_dim);
	return N < A;
}

static cb_size T_of(const struct cb_engine *e)
{
	return e->p.max_batch_tokens;
}

/* The cache rows of this layer of @seq, from position 0. */
static const float *lat_rows(const struct cb_engine *e, cb_u32 seq)
{
	return e->lat_cache + ((cb_size)seq * e->cfg.n_layers + e->layer) *
	       e->p.max_context * e->mla_row;
}

/*
 * Rows of k_b ([n_heads * R][nope], W_uk^T) into the staging (nv_kv) and
 * rows of v_b ([n_heads * v][R], W_uv) into their place in nv_w, in f32.
 */
static void w_dequant_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	const struct cb_tensor *kb = &e->lw->k_b, *vb = &e->lw->v_b;
	int dn = (int)e->cfg.mla.qk_nope_dim, R = e->mla_R, nk = (int)kb->rows;
	int r, r1, p0, p1;

	cb_plan_chunk(&e->pl, c, &r, &r1, &p0, &p1);
	for (; r < r1; r++) {
		if (r < nk) {
			cb_dequantize_row(kb->dtype, e->nv_kv + (cb_size)r * dn,
					  (const char *)kb->data +
					  (cb_size)r * cb_dtype_row_bytes(kb->dtype, kb->cols), dn);
			continue;
		}
		cb_dequantize_row(vb->dtype, e->nv_w + ((cb_size)e->cfg.n_heads * dn + r - nk) * R,
				  (const char *)vb->data +
				  (cb_size)(r - nk) * cb_dtype_row_bytes(vb->dtype, vb->cols), R);
	}
}

/*
 * Rows (h, d) of W_uk: nv_w[h*nope + d][i] = k_b[h*R + i][d], from the
 * staging, NV_TBLK rows at a time (each staging row read in one run, the
 * rows written NV_TBLK streams at once).
 */
#define NV_TBLK 16
static void w_transpose_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	int dn = (int)e->cfg.mla.qk_nope_dim, R = e->mla_R, r, r1, p0, p1, i, j, n;

	cb_plan_chunk(&e->pl, c, &r, &r1, &p0, &p1);
	for (; r < r1; r += n) {
		const float *src = e->nv_kv + (cb_size)(r / dn) * R * dn + r % dn;
		float *dst = e->nv_w + (cb_size)r * R;

		/* a block stays in one head */
		n = CB_MIN(CB_MIN(NV_TBLK, r1 - r), dn - r % dn);
		for (i = 0; i < R; i++)
			for (j = 0; j < n; j++)
				dst[(cb_size)j * R + i] = src[(cb_size)i * dn + j];
	}
}

/*
 * Token t's heads of block hb over split nv_round: each head alone, tiles
 * of NV_TILE positions scored by two f32 gemms (the nope part against the
 * decompressed keys, the rope part against the cached k_pe), online
 * softmax, the decompressed values summed.  A chunk is (token, block of
 * e->att_hb heads).
 */
static void attn_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	const struct cb_model_config *cf = &e->cfg;
	const struct cb_mla_config *m = &cf->mla;
	int nh = (int)cf->n_heads, S = e->nv_split, sp = e->nv_round;
	int nhb = (nh + e->att_hb - 1) / e->att_hb, hb = c % nhb, t = c / nhb;
	int dn = (int)m->qk_nope_dim, dr = e->rd, dv = (int)m->v_head_dim;
	int R = e->mla_R, row = e->mla_row, ld = nh * (dn + dv);
	int npos = (int)e->b->pos[t] + 1, nsplit = (npos + S - 1) / S;
	int pbeg = sp * S, pend = CB_MIN(npos, pbeg + S);
	int hend = CB_MIN(nh, (hb + 1) * e->att_hb), h, i, p0;
	cb_size T = T_of(e);
	const float *cache = lat_rows(e, e->b->seq[t]);
	float scale = m->attn_scale_bits ? cb_f32_from_bits(m->attn_scale_bits)
					 : cb_rope_softmax_mscale(cf) / cb_sqrtf((float)e->hd);
	float s[NV_TILE], sr[NV_TILE], mx = 0.0f, l = 0.0f;

	if (pbeg >= npos)
		return;		/* this token has fewer splits */
	for (h = hb * e->att_hb; h < hend; h++) {
		const float *qn = e->q_nope.f + ((cb_size)h * T + t) * dn;
		const float *qp = e->q_cat + ((cb_size)h * T + t) * row + R;
		float *o;

		if (nsplit == 1)
			o = e->att.f + (cb_size)t * e->odim + (cb_size)h * dv;
		else
			o = e->att_part + 2 + (((cb_size)t * nh + h) * e->att_nsplit + sp) *
			    (dv + 2);
		for (i = 0; i < dv; i++)
			o[i] = 0.0f;
		for (p0 = pbeg; p0 < pend; p0 += NV_TILE) {
			int n = CB_MIN(NV_TILE, pend - p0);
			const float *kv = e->nv_kv + (cb_size)(p0 - pbeg) * ld;

			/* s[i] = q_nope . k_nope_(p0+i); sr[i] = q_pe . k_pe_(p0+i) */
			e->ops->gemm[CB_DT_F32](s, NV_TILE, kv + (cb_size)h * dn,
						(cb_size)ld * sizeof(float), qn,
						(cb_size)dn * sizeof(float), 1, n, dn);
			e->ops->gemm[CB_DT_F32](sr, NV_TILE, cache + (cb_size)p0 * row + R,
						(cb_size)row * sizeof(float), qp,
						(cb_size)dr * sizeof(float), 1, n, dr);
			for (i = 0; i < n; i++)
				s[i] = (s[i] + sr[i]) * scale;
			cb_att_tile_max(s, n, p0 == pbeg, &mx, &l, o, dv);
			e->ops->expf_sub_f32(s, mx, n);
			for (i = 0; i < n; i++)
				l += s[i];
			/* o += sum_i s[i] v_(p0+i), in position order */
			e->ops->pv_f32(o, (cb_size)dv, s, NV_TILE,
				       kv + (cb_size)nh * dn + (cb_size)h * dv, (cb_size)ld,
				       1, n, dv);
		}
		cb_att_finish(o, dv, nsplit, mx, l);
	}
}

/* Combine the splits: rows (token, head), pieces the value's dimensions. */
static void merge_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	int nh = (int)e->cfg.n_heads, dv = (int)e->cfg.mla.v_head_dim, S = e->nv_split;
	int r, r1, d0, d1;

	cb_plan_chunk(&e->pl, c, &r, &r1, &d0, &d1);
	for (; r < r1; r++) {
		int t = r / nh, h = r % nh, nsplit = ((int)e->b->pos[t] + S) / S;

		if (nsplit == 1)
			continue;
		cb_att_merge(e, e->att_part + (cb_size)r * e->att_nsplit * (dv + 2), nsplit, dv,
			     CB_NULL, e->att.f + (cb_size)t * e->odim + (cb_size)h * dv, d0, d1);
	}
}

void cb_mla_naive_attend(struct cb_engine *e, struct cb_exec *ex)
{
	const struct cb_model_config *cf = &e->cfg;
	int nh = (int)cf->n_heads, dn = (int)cf->mla.qk_nope_dim, dv = (int)cf->mla.v_head_dim;
	int R = e->mla_R, S = e->nv_split, t, longest = 1, nk = nh * R;
	struct cb_tensor w = { .dtype = CB_DT_F32, .rows = (cb_u32)(nh * (dn + dv)),
			       .cols = (cb_u32)R };
	struct cb_acts lat = { .n = e->mla_row };
	cb_u64 head_ps;

	for (t = 0; t < e->n; t++)
		longest = CB_MAX(longest, (int)e->b->pos[t] + 1);
	e->att_nsplit = (longest + S - 1) / S;
	head_ps = (cb_u64)CB_MIN(longest, S) *
		  ((cb_u64)(dn + e->rd + dv) * CB_PS_ATT + CB_PS_EXP);
	e->att_hb = (int)CB_MAX((cb_u64)1, CB_MIN((cb_u64)nh, e->chunk_ps / head_ps));

	/* W_uk and W_uv in f32, W_uk transposed through the staging */
	cb_run_rows(e, ex, w_dequant_chunk, nk + nh * dv,
		    (cb_u64)CB_MAX(dn, R) * CB_PS_DEQUANT);
	cb_run_rows(e, ex, w_transpose_chunk, nh * dn, (cb_u64)R * CB_PS_COPY);
	w.data = e->nv_w;

	/* one sequence (cb_mla_naive_chosen()): its cache rows, split by split */
	lat.q[CB_ACT_F32] = (void *)lat_rows(e, e->b->seq[0]);
	lat.q_bytes[CB_ACT_F32] = (cb_size)e->mla_row * sizeof(float);
	for (e->nv_round = 0; e->nv_round < e->att_nsplit; e->nv_round++) {
		int p0 = e->nv_round * S;

		cb_jobs_reset(e);
		cb_job_add(e, &w, e->nv_kv, w.rows, &lat, (cb_size)p0,
			   CB_MIN(S, longest - p0), CB_NULL);
		cb_run_jobs(e, ex);
		cb_run_phase(e, ex, attn_chunk, e->n * ((nh + e->att_hb - 1) / e->att_hb));
	}
	if (e->att_nsplit > 1)
		cb_run_planned(e, ex, merge_chunk, e->n * nh, dv,
			       (cb_u64)e->att_nsplit * CB_PS_EXP,
			       (cb_u64)e->att_nsplit * CB_PS_AXPY);
}
