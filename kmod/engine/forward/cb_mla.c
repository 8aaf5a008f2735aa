// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_mla.c - multi-head latent attention (DeepSeek-V2/V3), absorbed form
 * (the naive form, which prefill may take instead, is cb_mla_naive.c).
 *
 * Per token, kv_a = Wkv_a x holds the latent c (kv_lora_rank) and one
 * RoPE key k_pe (qk_rope_dim) shared by every head; the cache stores
 * rmsnorm(c) and rope(k_pe) and nothing else.  HF's per-head key and value
 * are k_h = [W_uk[h] c, k_pe] and v_h = W_uv[h] c (W_uk, W_uv: kv_b_proj
 * split per head), so with q_h = [q_nope, q_pe]:
 *
 *   q_h . k_h = (W_uk[h]^T q_nope) . c + q_pe . k_pe
 *   out_h     = W_uv[h] (sum_p w_p c_p)
 *
 * which is what runs here: q_nope is projected into the latent space once
 * per token (k_b = W_uk^T per head), the scores and the weighted sum are
 * taken over the cached rows [c | k_pe] directly, and W_uv projects the
 * result out (v_b).  No position's keys or values are ever expanded.
 *
 * The per-head buffers are head-major ([n_heads][T][...]) so that each
 * head's k_b and v_b product is one gemm job over contiguous rows.  The
 * attention itself is cb_attention.c's scheme on one shared kv head of
 * mla_row dimensions: tiles of positions scored by an f32 gemm, online
 * softmax, splits of e->att_split positions merged after.
 */
#include "core/cb_engine_priv.h"
#include "ops/cb_math.h"
#include "arch/cb_mla.h"
#include "forward/cb_rope.h"

#define MLA_TILE 32		/* positions per score tile (on the stack) */
#define MLA_HEADS 8		/* heads scored together: 1 KiB of stack */

/* one split of 32 positions of one head, on the widest cache row */
CB_STATIC_ASSERT(32ull * (CB_MAX_MLA_ROW * CB_PS_ATT + CB_PS_EXP) <= CB_CHUNK_PS,
		 "MLA attention split of 32");
/* the RMSNorm of one q_a row and its forms */
CB_STATIC_ASSERT((cb_u64)CB_MAX_Q_LORA * (CB_PS_NORM + 3 * CB_PS_QUANT) <= CB_CHUNK_PS,
		 "q_a norm of one row");

static cb_size T_of(const struct cb_engine *e)
{
	return e->p.max_batch_tokens;
}

/* q_a = rmsnorm(Wq_a x) * q_a_norm in place, in the forms q_b reads */
static void q_a_norm_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	float eps = cb_f32_from_bits(e->cfg.rms_eps_bits);
	int Rq = (int)e->cfg.mla.q_lora_rank, t, t1, p0, p1;

	cb_plan_chunk(&e->pl, c, &t, &t1, &p0, &p1);
	for (; t < t1; t++) {
		float *x = e->q_lat_in.f + (cb_size)t * Rq;

		cb_rmsnorm(x, x, e->lw->q_a_norm.data, Rq, eps);
		cb_acts_quantize(e, &e->q_lat_in, (cb_size)t);
	}
}

/*
 * Heads [h0, h1) of a token: q_nope to its head-major row (and forms),
 * q_pe roped into the tail of its q_cat row; the chunk of head 0 also
 * norms the latent, ropes k_pe and stores both in the cache.
 */
static void prep_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	const struct cb_model_config *cf = &e->cfg;
	const struct cb_mla_config *m = &cf->mla;
	float eps = cb_f32_from_bits(cf->rms_eps_bits);
	int R = e->mla_R, row = e->mla_row, dn = (int)m->qk_nope_dim, dr = e->rd;
	int t, t1, h0, h1, h, i;

	cb_plan_chunk(&e->pl, c, &t, &t1, &h0, &h1);
	for (; t < t1; t++) {
		const float *cs = e->rope + (cb_size)t * e->hd;

		if (!h0) {
			const float *kv = e->kv_lat + (cb_size)t * row;
			float *dst = e->lat_cache +
				(((cb_size)e->b->seq[t] * cf->n_layers + e->layer) *
				 e->p.max_context + e->b->pos[t]) * row;

			cb_rms_apply(dst, kv, e->lw->kv_a_norm.data, cb_rms_inv(kv, R, eps), R);
			for (i = 0; i < dr; i++)
				dst[R + i] = kv[R + i];
			cb_rope_rotate(dst + R, cs, dr, (int)cf->rope_layout);
		}
		for (h = h0; h < h1; h++) {
			const float *qh = e->q + (cb_size)t * e->qdim + (cb_size)h * e->hd;
			cb_size r = (cb_size)h * T_of(e) + t;
			float *qn = e->q_nope.f + r * dn, *qp = e->q_cat + r * row + R;

			for (i = 0; i < dn; i++)
				qn[i] = qh[i];
			cb_acts_quantize(e, &e->q_nope, r);
			for (i = 0; i < dr; i++)
				qp[i] = qh[dn + i];
			cb_rope_rotate(qp, cs, dr, (int)cf->rope_layout);
		}
	}
}

/*
 * Causal attention of one token for a block of heads over one split of
 * its slot's cached rows: scores against [c | k_pe] (mla_row wide), the
 * weighted sum of the latents c (kv_lora_rank).  As attn_chunk in
 * cb_attention.c: a chunk is (token, block of e->att_hb heads, split).
 */
static void attn_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	const struct cb_model_config *cf = &e->cfg;
	int nh = (int)cf->n_heads, R = e->mla_R, row = e->mla_row, S = e->att_split;
	int nhb = (nh + e->att_hb - 1) / e->att_hb;
	int sp = c % e->att_nsplit, hb = c / e->att_nsplit % nhb, t = c / e->att_nsplit / nhb;
	int npos = (int)e->b->pos[t] + 1, nsplit = (npos + S - 1) / S;
	int pbeg = sp * S, pend = CB_MIN(npos, pbeg + S);
	int gend = CB_MIN(nh, (hb + 1) * e->att_hb), g0, g, i, ng, p0;
	cb_size T = T_of(e);
	const float *base = e->lat_cache + ((cb_size)e->b->seq[t] * cf->n_layers + e->layer) *
			    e->p.max_context * row;
	/* HF: qk_head_dim^-0.5, times YaRN's mscale(factor, mscale_all_dim)^2 */
	float scale = cf->mla.attn_scale_bits ? cb_f32_from_bits(cf->mla.attn_scale_bits)
					      : cb_rope_softmax_mscale(cf) / cb_sqrtf((float)e->hd);
	float s[MLA_HEADS][MLA_TILE], mx[MLA_HEADS], l[MLA_HEADS];
	float *o[MLA_HEADS];
	/* the heads' outputs are rows of one stride (pv_f32 takes o[0]) */
	cb_size ldo = nsplit == 1 ? T * R : (cb_size)e->att_nsplit * (R + 2);

	if (pbeg >= npos)
		return;		/* this token has fewer splits */
	for (g0 = hb * e->att_hb; g0 < gend; g0 += MLA_HEADS) {
		ng = CB_MIN(MLA_HEADS, gend - g0);
		for (g = 0; g < ng; g++) {
			if (nsplit == 1)
				o[g] = e->o_lat.f + ((cb_size)(g0 + g) * T + t) * R;
			else
				o[g] = e->att_part + 2 + (((cb_size)t * nh + g0 + g) *
							  e->att_nsplit + sp) * (R + 2);
			for (i = 0; i < R; i++)
				o[g][i] = 0.0f;
		}
		for (p0 = pbeg; p0 < pend; p0 += MLA_TILE) {
			int n = CB_MIN(MLA_TILE, pend - p0);

			/* s[g][i] = q_cat_(g0+g) . cache_(p0+i), the heads at once */
			e->ops->gemm[CB_DT_F32](&s[0][0], MLA_TILE, base + (cb_size)p0 * row,
						(cb_size)row * sizeof(float),
						e->q_cat + ((cb_size)g0 * T + t) * row,
						T * row * sizeof(float), ng, n, row);
			for (g = 0; g < ng; g++) {
				for (i = 0; i < n; i++)
					s[g][i] *= scale;
				cb_att_tile_max(s[g], n, p0 == pbeg, &mx[g], &l[g], o[g], R);
				e->ops->expf_sub_f32(s[g], mx[g], n);
				for (i = 0; i < n; i++)
					l[g] += s[g][i];
			}
			/* o_g += sum_i s[g][i] c_(p0+i), in position order: the latents */
			e->ops->pv_f32(o[0], ldo, &s[0][0], MLA_TILE, base + (cb_size)p0 * row,
				       (cb_size)row, ng, n, R);
		}
		for (g = 0; g < ng; g++)
			cb_att_finish(o[g], R, nsplit, mx[g], l[g]);
	}
}

/* Combine the splits: rows (token, head), pieces the latent's dimensions. */
static void merge_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	int nh = (int)e->cfg.n_heads, R = e->mla_R, S = e->att_split;
	int r, r1, d0, d1;

	cb_plan_chunk(&e->pl, c, &r, &r1, &d0, &d1);
	for (; r < r1; r++) {
		int t = r / nh, h = r % nh, nsplit = ((int)e->b->pos[t] + S) / S;

		if (nsplit == 1)
			continue;
		cb_att_merge(e, e->att_part + (cb_size)r * e->att_nsplit * (R + 2), nsplit, R,
			     CB_NULL, e->o_lat.f + ((cb_size)h * T_of(e) + t) * R, d0, d1);
	}
}

/* o_lat rows (head-major) into the forms v_b reads: rows (head, token) */
static void o_lat_quant_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	int r, r1, p0, p1;

	cb_plan_chunk(&e->pl, c, &r, &r1, &p0, &p1);
	for (; r < r1; r++)
		cb_acts_quantize(e, &e->o_lat, (cb_size)(r / e->n) * T_of(e) + r % e->n);
}

/* One job per head: rows [h * rows, (h + 1) * rows) of @w times head h's input. */
static void head_jobs(struct cb_engine *e, const struct cb_tensor *w, cb_u32 rows,
		      float *out, cb_size out_head, cb_size ldo, const struct cb_acts *in)
{
	cb_size rb = cb_dtype_row_bytes(w->dtype, w->cols);
	int h;

	for (h = 0; h < (int)e->cfg.n_heads; h++) {
		struct cb_tensor t = *w;

		t.rows = rows;
		t.data = (const char *)w->data + (cb_size)h * rows * rb;
		cb_job_add(e, &t, out + (cb_size)h * out_head, ldo, in,
			   (cb_size)h * T_of(e), e->n, CB_NULL);
	}
}

static void attend(struct cb_engine *e, struct cb_exec *ex)
{
	int nh = (int)e->cfg.n_heads, S = e->att_split, t, longest = 1;
	cb_u64 head_ps;

	for (t = 0; t < e->n; t++)
		longest = CB_MAX(longest, (int)e->b->pos[t] + 1);
	e->att_nsplit = (longest + S - 1) / S;
	head_ps = (cb_u64)CB_MIN(longest, S) * ((cb_u64)e->mla_row * CB_PS_ATT + CB_PS_EXP);
	e->att_hb = (int)CB_MAX((cb_u64)1, CB_MIN((cb_u64)nh, e->chunk_ps / head_ps));
	/* chunks of (token, block of heads, split) */
	cb_run_phase(e, ex, attn_chunk, e->n * ((nh + e->att_hb - 1) / e->att_hb) *
		     e->att_nsplit);
	if (e->att_nsplit > 1)
		cb_run_planned(e, ex, merge_chunk, e->n * nh, e->mla_R,
			       (cb_u64)e->att_nsplit * CB_PS_EXP,
			       (cb_u64)e->att_nsplit * CB_PS_AXPY);
	if (cb_acts_nforms(&e->o_lat))
		cb_run_rows(e, ex, o_lat_quant_chunk, e->n * nh,
			    (cb_u64)e->mla_R * CB_PS_QUANT * cb_acts_nforms(&e->o_lat));
}

void cb_mla_attention(struct cb_engine *e, struct cb_exec *ex)
{
	const struct cb_model_config *cf = &e->cfg;
	const struct cb_layer_weights *L = e->lw;
	int n = e->n, Rq = (int)cf->mla.q_lora_rank, dn = (int)cf->mla.qk_nope_dim;
	cb_size T = T_of(e), row = (cb_size)e->mla_row;

	/* q (directly, or its low-rank input), and kv_a = [latent | k_pe] */
	cb_jobs_reset(e);
	if (Rq)
		cb_job_add(e, &L->q_a, e->q_lat_in.f, Rq, &e->x_norm, 0, n,
			   CB_NULL);	/* q_a: [q_lora_rank, hidden] */
	else
		cb_job_add(e, &L->wq, e->q, e->qdim, &e->x_norm, 0, n,
			   CB_NULL);	/* wq: [n_heads*head_dim, hidden] */
	cb_job_add(e, &L->kv_a, e->kv_lat, row, &e->x_norm, 0, n,
		   CB_NULL);		/* kv_a: [kv_lora_rank + rope, hidden] */
	cb_run_jobs(e, ex);
	if (Rq) {
		/* q = q_b rmsnorm(q_a) */
		cb_run_rows(e, ex, q_a_norm_chunk, n, (cb_u64)Rq *
			    (CB_PS_NORM + (cb_u64)CB_PS_QUANT * cb_acts_nforms(&e->q_lat_in)));
		cb_jobs_reset(e);
		cb_job_add(e, &L->q_b, e->q, e->qdim, &e->q_lat_in, 0, n,
			   CB_NULL);	/* q_b: [n_heads*head_dim, q_lora_rank] */
		cb_run_jobs(e, ex);
	}

	/* latent norm and RoPE into the cache; q split per head, q_pe roped */
	cb_run_planned(e, ex, prep_chunk, n, (int)cf->n_heads,
		       (cb_u64)e->mla_R * CB_PS_NORM + (cb_u64)e->rd * CB_PS_ROPE,
		       (cb_u64)e->hd * CB_PS_ROPE +
		       (cb_u64)dn * CB_PS_QUANT * cb_acts_nforms(&e->q_nope));

	if (cb_mla_naive_chosen(e)) {
		/* prefill: keys and values decompressed, attention per head */
		cb_mla_naive_attend(e, ex);
	} else {
		/* absorb: q_cat[h] = k_b[h] q_nope[h], the query in latent space */
		cb_jobs_reset(e);
		head_jobs(e, &L->k_b, (cb_u32)e->mla_R, e->q_cat, T * row, row, &e->q_nope);
		cb_run_jobs(e, ex);

		/* attention over the cached latents */
		attend(e, ex);

		/* out: att[h] = v_b[h] o_lat[h] */
		cb_jobs_reset(e);
		head_jobs(e, &L->v_b, cf->mla.v_head_dim, e->att.f, cf->mla.v_head_dim,
			  e->odim, &e->o_lat);
		cb_run_jobs(e, ex);
	}
	cb_att_quantize(e, ex);
}
