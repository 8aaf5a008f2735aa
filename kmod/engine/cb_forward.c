// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_forward.c - the forward pass over one batch, for every architecture.
 *
 * One code path, parameterised by struct cb_model_config: read
 * cb_forward_run() top to bottom as the model.  Each step is a "phase": a
 * parallel_for over chunks with disjoint outputs (so the result does not
 * depend on which thread ran what), followed by a yield.  The calling thread
 * itself does only integer bookkeeping (validation, grouping tokens by
 * expert).
 *
 * Batch layout: token t of the batch owns row t of every per-token buffer.
 * The phase machinery is cb_phase.c, attention cb_attention.c, the routed
 * experts cb_moe.c.
 */
#include "cb_engine_priv.h"
#include "cb_math.h"

/* Number of token-loop chunks: blocks of e->tblk tokens. */
static int tok_chunks(struct cb_engine *e, int n)
{
	return (n + e->tblk - 1) / e->tblk;
}

/* embedding lookup + RoPE angles of each token's position */
static void embed_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	const struct cb_batch *b = e->b;
	const struct cb_tensor *emb = &e->w->embed;
	cb_size rb = cb_dtype_row_bytes(emb->dtype, emb->cols);
	float theta = cb_f32_from_bits(e->cfg.rope_theta_bits);
	int half = e->hd / 2, t, i;
	int t1 = CB_MIN((int)b->n_tokens, (c + 1) * e->tblk);

	for (t = c * e->tblk; t < t1; t++) {
		float *cs = e->rope + (cb_size)t * e->hd;
		float pos = (float)b->pos[t];

		cb_dequantize_row(emb->dtype, e->x + (cb_size)t * e->H,
				  (const char *)emb->data + (cb_size)b->tokens[t] * rb,
				  e->H);
		/* HF: inv_freq = 1 / theta^(2i/d), angle = pos * inv_freq (f32) */
		for (i = 0; i < half; i++) {
			float inv = 1.0f / cb_powf(theta, (float)(2 * i) / (float)e->hd);
			float angle = pos * inv;

			cb_sincosf(angle, &cs[half + i], &cs[i]);
		}
	}
}

/* x -> xn = rmsnorm(x), in its activation forms; with @add, x += tmp first */
static void norm_rows(struct cb_engine *e, int c, const struct cb_tensor *w, int add)
{
	float eps = cb_f32_from_bits(e->cfg.rms_eps_bits);
	int t, i, t1 = CB_MIN((int)e->b->n_tokens, (c + 1) * e->tblk);

	for (t = c * e->tblk; t < t1; t++) {
		float *x = e->x + (cb_size)t * e->H;

		if (add)
			for (i = 0; i < e->H; i++)
				x[i] += e->tmp[(cb_size)t * e->H + i];
		cb_rmsnorm(e->xn.f + (cb_size)t * e->H, x, w->data, e->H, eps);
		cb_acts_quantize(e, &e->xn, t);
	}
}

static void attn_norm_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;

	norm_rows(e, c, &e->lw->attn_norm, 0);
}

static void ffn_norm_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;

	norm_rows(e, c, &e->lw->ffn_norm, 1);
}

/* final norm of the tokens whose logits are wanted, compacted */
static void final_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	float eps = cb_f32_from_bits(e->cfg.rms_eps_bits);
	int t, t1 = CB_MIN((int)e->b->n_tokens, (c + 1) * e->tblk);

	for (t = c * e->tblk; t < t1; t++) {
		cb_size j = e->out_idx[t];

		if (j == 0xffffffffu)
			continue;
		cb_rmsnorm(e->xn.f + j * e->H, e->x + (cb_size)t * e->H,
			   e->w->final_norm.data, e->H, eps);
		cb_acts_quantize(e, &e->xn, j);
	}
}

/* ---- bookkeeping (integers only) -------------------------------------- */

static int check_batch(struct cb_engine *e, const struct cb_batch *b)
{
	cb_u32 t, s;

	if (!b || b->flags || !b->n_tokens || b->n_tokens > e->p.max_batch_tokens ||
	    !b->tokens || !b->seq || !b->pos || !b->logits)
		return -CB_EINVAL;
	for (s = 0; s < e->p.n_seqs; s++)
		e->seq_tmp[s] = 0xffffffffu;	/* not seen in this batch */
	for (t = 0; t < b->n_tokens; t++) {
		s = b->seq[t];
		if (s >= e->p.n_seqs || b->tokens[t] >= e->cfg.vocab_size ||
		    b->pos[t] >= e->p.max_context)
			return -CB_EINVAL;
		if (e->seq_tmp[s] == 0xffffffffu ? b->pos[t] > e->seq_len[s]
						 : b->pos[t] != e->seq_tmp[s])
			return -CB_EINVAL;
		e->seq_tmp[s] = b->pos[t] + 1;
	}
	return 0;
}

/* ---- the model -------------------------------------------------------- */

int cb_forward_run(struct cb_engine *e, struct cb_exec *ex,
		   const struct cb_batch *b)
{
	const struct cb_model_config *cf = &e->cfg;
	const struct cb_model_weights *W = e->w;
	int n, l, x, tc, s, r, slot_chunks = 0;
	cb_u32 t, n_out = 0;
	int H = e->H;

	if (!ex || !ex->parallel_for || (ex->experts_submit && !ex->experts_wait))
		return -CB_EINVAL;
	r = check_batch(e, b);
	if (r)
		return r;
	e->b = b;
	e->ntaken = 0;
	/* without an expert executor every expert runs here, unfiltered */
	e->run_all = !ex->experts_submit;
	e->nrun = 0;
	n = (int)b->n_tokens;
	/* splits of the longest context in this batch */
	e->att_nsplit = 1;
	for (t = 0; t < b->n_tokens; t++)
		e->att_nsplit = CB_MAX(e->att_nsplit,
				       (int)(b->pos[t] + CB_ATT_SPLIT) / CB_ATT_SPLIT);
	/* token-loop chunks: ~16K elements of per-token work each */
	e->tblk = (int)CB_MAX(1, 16384 / (H + e->qdim + e->F2 + 1));
	tc = tok_chunks(e, n);

	/* embedding: x[t] = embed[token]; RoPE angles per position */
	r = cb_run_phase(e, ex, embed_chunk, tc);
	if (r)
		return r;

	for (l = 0; l < (int)cf->n_layers; l++) {
		const struct cb_layer_weights *L = &W->layers[l];

		e->lw = L;
		e->layer = l;
		e->is_moe = cb_layer_is_moe(cf, l);

		/* attention norm: xn = rmsnorm(x) */
		r = cb_run_phase(e, ex, attn_norm_chunk, tc);
		if (r)
			return r;

		/* q, k, v = W xn (+ bias) */
		cb_jobs_reset(e);
		cb_job_add(e, &L->wq, e->q, e->qdim, &e->xn, 0, n,
			   cf->qkv_bias ? L->bq.data : CB_NULL);
		cb_job_add(e, &L->wk, e->k, e->kvdim, &e->xn, 0, n,
			   cf->qkv_bias ? L->bk.data : CB_NULL);
		cb_job_add(e, &L->wv, e->v, e->kvdim, &e->xn, 0, n,
			   cf->qkv_bias ? L->bv.data : CB_NULL);
		r = cb_run_jobs(e, ex);
		if (r)
			return r;

		/* q/k norm, RoPE, K/V into the cache */
		r = cb_run_phase(e, ex, cb_qk_chunk, tc);
		if (r)
			return r;

		/* attention over the cache: chunks of (token, kv head, split) */
		r = cb_run_phase(e, ex, cb_attn_chunk, n * (int)cf->n_kv_heads * e->att_nsplit);
		if (r)
			return r;
		if (e->att_nsplit > 1) {
			r = cb_run_phase(e, ex, cb_attn_merge_chunk, tc);
			if (r)
				return r;
		}
		r = cb_run_phase(e, ex, cb_att_quant_chunk, tc);
		if (r)
			return r;

		/* output projection: tmp = Wo att */
		cb_jobs_reset(e);
		cb_job_add(e, &L->wo, e->tmp, H, &e->att, 0, n, CB_NULL);
		r = cb_run_jobs(e, ex);
		if (r)
			return r;

		/* residual, then FFN norm: x += tmp; xn = rmsnorm(x) */
		r = cb_run_phase(e, ex, ffn_norm_chunk, tc);
		if (r)
			return r;

		/* router logits, shared expert / dense MLP gate and up */
		cb_jobs_reset(e);
		if (e->is_moe) {
			cb_job_add(e, &L->router, e->rl, e->E, &e->xn, 0, n, CB_NULL);
			if (cf->shared_ffn) {
				cb_job_add(e, &L->shared_gate_proj, e->mg.f, e->F2, &e->xn, 0,
					   n, CB_NULL);
				cb_job_add(e, &L->shared_up_proj, e->mu, e->F2, &e->xn, 0, n,
					   CB_NULL);
				if (cf->shared_gate)
					cb_job_add(e, &L->shared_expert_gate, e->sgv, 1,
						   &e->xn, 0, n, CB_NULL);
			}
		} else {
			cb_job_add(e, &L->mlp_gate, e->mg.f, e->F2, &e->xn, 0, n, CB_NULL);
			cb_job_add(e, &L->mlp_up, e->mu, e->F2, &e->xn, 0, n, CB_NULL);
		}
		r = cb_run_jobs(e, ex);
		if (r)
			return r;

		/* routing (softmax, top-k) and SwiGLU of the shared/dense MLP */
		r = cb_run_phase(e, ex, cb_route_chunk, tc);
		if (r)
			return r;

		cb_jobs_reset(e);
		if (e->is_moe) {
			/* group the batch by expert, gather the inputs */
			cb_group_by_expert(e);
			slot_chunks = (e->nslots + e->tblk - 1) / e->tblk;
			/* copy only the activation forms the experts' dtypes read */
			e->xg.kinds = 0;
			for (x = 0; x < e->E; x++)
				if (e->exp_cnt[x])
					e->xg.kinds |= cb_tensor_kinds(&L->experts[x].gate) |
						       cb_tensor_kinds(&L->experts[x].up);
			/* tasks carry f32 rows; the others stay for a CPU fallback */
			if (!e->run_all)
				e->xg.kinds |= 1u << CB_ACT_F32;
			r = cb_run_phase(e, ex, cb_gather_chunk, slot_chunks);
			if (r)
				return r;
			/* offer the experts to the host; the CPU runs what it leaves */
			if (!e->run_all) {
				r = cb_experts_offer(e, ex);
				if (r)
					return r;
			}
			/* each CPU expert's gate and up, once for all its tokens */
			cb_expert_gate_up_jobs(e);
		}
		/* shared expert / dense MLP down: mo = Wd swiglu */
		if (!e->is_moe || cf->shared_ffn)
			cb_job_add(e, e->is_moe ? &L->shared_down_proj : &L->mlp_down,
				   e->mo, H, &e->mg, 0, n, CB_NULL);
		r = cb_run_jobs(e, ex);
		if (r)
			return cb_experts_abort(e, ex, r);

		if (e->is_moe) {
			/* SwiGLU per slot, then each expert's down projection */
			r = cb_expert_act_down(e, ex, slot_chunks);
			if (r)
				return cb_experts_abort(e, ex, r);
			/* the host's experts; a second CPU round for those it gave back */
			if (e->ntaken) {
				r = cb_experts_collect(e, ex);
				if (r)
					return r;
				if (e->nrun) {
					cb_jobs_reset(e);
					cb_expert_gate_up_jobs(e);
					r = cb_run_jobs(e, ex);
					if (r)
						return r;
					r = cb_expert_act_down(e, ex, slot_chunks);
					if (r)
						return r;
				}
			}
		}

		/* weighted scatter-add of the experts into the residual */
		r = cb_run_phase(e, ex, cb_combine_chunk, tc);
		if (r)
			return r;
	}

	/* final norm of the wanted rows, then logits = lm_head xn */
	for (t = 0; t < b->n_tokens; t++)
		e->out_idx[t] = !b->logits_mask || b->logits_mask[t] ? n_out++ : 0xffffffffu;
	e->n_out = (int)n_out;
	r = cb_run_phase(e, ex, final_chunk, tc);
	if (r)
		return r;
	cb_jobs_reset(e);
	cb_job_add(e, cf->tied_embeddings ? &W->embed : &W->lm_head, b->logits,
		   cf->vocab_size, &e->xn, 0, (int)n_out, CB_NULL);
	r = cb_run_jobs(e, ex);
	if (r)
		return r;

	/* commit the new sequence lengths */
	for (s = 0; s < (int)e->p.n_seqs; s++)
		if (e->seq_tmp[s] != 0xffffffffu)
			e->seq_len[s] = e->seq_tmp[s];
	return 0;
}
