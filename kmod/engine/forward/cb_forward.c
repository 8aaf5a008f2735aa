// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_forward.c - the forward pass over one batch, for every architecture.
 *
 * One code path, parameterised by struct cb_model_config: read
 * cb_engine_forward() top to bottom as the model.  Each step is a phase of
 * chunks with disjoint outputs (cb_phase.c), attention is cb_attention.c,
 * the routed experts cb_moe.c.  The calling thread itself does only
 * integer bookkeeping.  Token t of the batch owns row t of every
 * per-token buffer (struct cb_engine).
 *
 * The error is sticky: a step after a failure does nothing, and the pass
 * returns the first failure at the end (slot lengths unchanged).
 */
#include "core/cb_engine_priv.h"
#include "ops/cb_math.h"
#include "forward/cb_rope.h"

/*
 * Embedding lookup + RoPE angles of each token's position: tokens, or
 * pieces of one token's row (whole blocks of any weight type, each
 * dequantized alone); the chunk of the first piece makes the angles
 * (cb_rope.c: the frequencies, plain or YaRN, and the factor that scales
 * cos and sin).
 */
static void embed_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	const struct cb_batch *b = e->b;
	const struct cb_tensor *emb = &e->w->embed;
	const struct cb_block_info *bi = cb_dtype_info(emb->dtype);
	cb_size rb = cb_dtype_row_bytes(emb->dtype, emb->cols);
	struct cb_rope rp;
	int half = e->rd / 2, t, t1, p0, p1, c0, c1, i;

	cb_plan_chunk(&e->pl, c, &t, &t1, &p0, &p1);
	c0 = p0 * CB_ACT_PIECE;
	c1 = CB_MIN(e->H, p1 * CB_ACT_PIECE);
	if (!p0)
		cb_rope_prepare(&rp, &e->cfg, e->rd);
	for (; t < t1; t++) {
		float *cs = e->rope + (cb_size)t * e->hd;
		float pos = (float)b->pos[t];

		cb_dequantize_row(emb->dtype, e->x + (cb_size)t * e->H + c0,
				  (const char *)emb->data + (cb_size)b->tokens[t] * rb +
				  (cb_size)(c0 / bi->block) * bi->block_bytes, c1 - c0);
		if (p0)
			continue;
		/* HF: angle = pos * inv_freq (f32); cos, sin * attention factor */
		for (i = 0; i < half; i++) {
			float angle = pos * cb_rope_inv_freq(&rp, i);

			cb_sincosf(angle, &cs[half + i], &cs[i]);
			cs[i] *= rp.attn;
			cs[half + i] *= rp.attn;
		}
	}
}

/*
 * x -> x_norm = rmsnorm(x) * w, in its forms; with @add, x += block_out
 * first.  A chunk is tokens, or pieces of the columns of one token: each
 * piece takes the row's 1 / rms itself (the same sum, the same bits) and
 * norms its columns; a row cut into pieces never has @add (the forward
 * adds first, in a phase of its own: a piece may not change x while
 * another sums it).
 */
static void norm_rows(struct cb_engine *e, int c, const struct cb_tensor *w, int add)
{
	float eps = cb_f32_from_bits(e->cfg.rms_eps_bits);
	int t, t1, p0, p1, c0, c1, i;

	cb_plan_chunk(&e->pl, c, &t, &t1, &p0, &p1);
	c0 = p0 * CB_ACT_PIECE;
	c1 = CB_MIN(e->H, p1 * CB_ACT_PIECE);
	for (; t < t1; t++) {
		float *x = e->x + (cb_size)t * e->H, inv;

		if (add)
			for (i = 0; i < e->H; i++)
				x[i] += e->block_out[(cb_size)t * e->H + i];
		inv = cb_rms_inv(x, e->H, eps);
		cb_rms_apply(e->x_norm.f + (cb_size)t * e->H + c0, x + c0,
			     (const float *)w->data + c0, inv, c1 - c0);
		cb_acts_quantize_cols(e, &e->x_norm, t, c0, c1);
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

	norm_rows(e, c, &e->lw->ffn_norm, 0);
}

static void ffn_add_norm_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;

	norm_rows(e, c, &e->lw->ffn_norm, 1);
}

/*
 * gate = silu(gate) * up of the dense MLP, in the forms down reads; a
 * chunk is tokens, or pieces of columns of one token (element by element,
 * so any cut gives the same values).
 */
static void swiglu_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	int t, t1, p0, p1, c0, c1, n = (int)e->cfg.dense_ffn;

	cb_plan_chunk(&e->pl, c, &t, &t1, &p0, &p1);
	c0 = p0 * CB_ACT_PIECE;
	c1 = CB_MIN(n, p1 * CB_ACT_PIECE);
	for (; t < t1; t++) {
		e->ops->swiglu_f32(e->mlp_gate.f + (cb_size)t * e->F2 + c0,
				   e->mlp_up + (cb_size)t * e->F2 + c0, c1 - c0);
		cb_acts_quantize_cols(e, &e->mlp_gate, t, c0, c1);
	}
}

/* x += src, by tokens or pieces of columns */
static void add_rows(struct cb_engine *e, int c, const float *src)
{
	int t, t1, p0, p1, c1, i;

	cb_plan_chunk(&e->pl, c, &t, &t1, &p0, &p1);
	c1 = CB_MIN(e->H, p1 * CB_ACT_PIECE);
	for (; t < t1; t++) {
		float *x = e->x + (cb_size)t * e->H;
		const float *y = src + (cb_size)t * e->H;

		for (i = p0 * CB_ACT_PIECE; i < c1; i++)
			x[i] += y[i];
	}
}

/* x += mlp_out */
static void residual_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;

	add_rows(e, c, e->mlp_out);
}

/* x += block_out */
static void attn_residual_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;

	add_rows(e, c, e->block_out);
}

/* final norm of the tokens whose logits are wanted, compacted */
static void final_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	float eps = cb_f32_from_bits(e->cfg.rms_eps_bits);
	int t, t1, p0, p1, c0, c1;

	cb_plan_chunk(&e->pl, c, &t, &t1, &p0, &p1);
	c0 = p0 * CB_ACT_PIECE;
	c1 = CB_MIN(e->H, p1 * CB_ACT_PIECE);
	for (; t < t1; t++) {
		cb_size j = e->logit_row[t];
		const float *x = e->x + (cb_size)t * e->H;

		if (j == CB_NONE)
			continue;
		cb_rms_apply(e->x_norm.f + j * e->H + c0, x + c0,
			     (const float *)e->w->final_norm.data + c0,
			     cb_rms_inv(x, e->H, eps), c1 - c0);
		cb_acts_quantize_cols(e, &e->x_norm, j, c0, c1);
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
		e->seq_next[s] = CB_NONE;	/* not seen in this batch */
	for (t = 0; t < b->n_tokens; t++) {
		s = b->seq[t];
		if (s >= e->p.n_seqs || b->tokens[t] >= e->cfg.vocab_size ||
		    b->pos[t] >= e->p.max_context)
			return -CB_EINVAL;
		if (e->seq_next[s] == CB_NONE ? b->pos[t] > e->seq_len[s]
					      : b->pos[t] != e->seq_next[s])
			return -CB_EINVAL;
		/*
		 * A recurrent state holds the whole past in one: a slot goes on
		 * where it stopped, or starts over at 0.
		 */
		if (e->seq_next[s] == CB_NONE && e->dn_state && b->pos[t] &&
		    b->pos[t] != e->seq_len[s])
			return -CB_EINVAL;
		/*
		 * A sliding layer's ring keeps the positions after seq_hi -
		 * ring_rows: a rewind may not need one before them.
		 */
		if (e->seq_next[s] == CB_NONE && e->ring_rows && b->pos[t] &&
		    (cb_u64)b->pos[t] + 1 + e->ring_rows <
		    (cb_u64)e->seq_hi[s] + CB_MIN(b->pos[t] + 1, e->cfg.oss.sliding_window))
			return -CB_EINVAL;
		e->seq_next[s] = b->pos[t] + 1;
	}
	/* the pass writes these positions, whether it completes or not */
	for (s = 0; s < e->p.n_seqs; s++)
		if (e->seq_next[s] != CB_NONE && e->seq_next[s] > e->seq_hi[s])
			e->seq_hi[s] = e->seq_next[s];
	return 0;
}

/*
 * The pass's state: the batch, the chunking of token loops, the logits row
 * of each token, who computes the routed experts.
 */
static void start_pass(struct cb_engine *e, struct cb_exec *ex, const struct cb_batch *b)
{
	cb_u32 t, n_out = 0;

	e->b = b;
	e->n = (int)b->n_tokens;
	e->err = 0;
	e->ntaken = 0;
	/*
	 * without an expert executor every expert runs here, unfiltered; so
	 * does every expert a task cannot describe (GPT-OSS's biases and
	 * clamped activation)
	 */
	e->run_all = !ex->experts_submit || e->arch->expert != CB_EXPERT_SWIGLU;
	e->nrun = 0;
	for (t = 0; t < b->n_tokens; t++)
		e->logit_row[t] = !b->logits_mask || b->logits_mask[t] ? n_out++ : CB_NONE;
	e->n_out = (int)n_out;
	if (e->dn_state)
		cb_delta_batch(e);
}

/* A MoE model's dense layer: no experts for this layer in the trace. */
static void trace_dense_layer(struct cb_engine *e)
{
	cb_u32 *tr;
	int i, j;

	if (!e->b->route_trace || !e->K)
		return;
	for (i = 0; i < e->n; i++) {
		tr = e->b->route_trace + ((cb_size)i * e->cfg.n_layers + e->layer) * e->K * 2;
		for (j = 0; j < e->K; j++) {
			tr[2 * j] = CB_TRACE_NONE;
			tr[2 * j + 1] = 0;
		}
	}
}

static const float *bias(const struct cb_model_config *cf, const struct cb_tensor *t)
{
	return cf->qkv_bias ? t->data : CB_NULL;
}

/*
 * RMSNorm of the rows into x_norm, planned: the row's sum once per chunk
 * (per piece when cut), then per column the product and the forms kept.
 */
static void run_norm(struct cb_engine *e, struct cb_exec *ex, void (*fn)(void *, int))
{
	cb_run_planned(e, ex, fn, e->n, cb_col_pieces(e->H), (cb_u64)e->H * CB_PS_NORM / 2,
		       CB_ACT_PIECE * (CB_PS_NORM / 2 + (cb_u64)CB_PS_QUANT *
				       cb_acts_nforms(&e->x_norm)));
}

/*
 * x += block_out, then the FFN norm: in one phase when each row fits a
 * chunk, else the addition first (a row cut into pieces is read whole).
 */
static void run_ffn_norm(struct cb_engine *e, struct cb_exec *ex)
{
	struct cb_plan pl;

	cb_plan_rows(&pl, e->n, cb_col_pieces(e->H), (cb_u64)e->H * (CB_PS_NORM / 2 + CB_PS_AXPY),
		     CB_ACT_PIECE * (CB_PS_NORM / 2 + (cb_u64)CB_PS_QUANT *
				     cb_acts_nforms(&e->x_norm)), e->chunk_ps);
	if (pl.per_row == 1) {
		cb_run_plan(e, ex, ffn_add_norm_chunk, &pl);
		return;
	}
	cb_run_planned(e, ex, attn_residual_chunk, e->n, cb_col_pieces(e->H), 0,
		       CB_ACT_PIECE * CB_PS_AXPY);
	run_norm(e, ex, ffn_norm_chunk);
}

/* ---- the model -------------------------------------------------------- */

int cb_engine_forward(struct cb_engine *e, struct cb_exec *ex,
		      const struct cb_batch *b)
{
	const struct cb_model_config *cf = &e->cfg;
	const struct cb_model_weights *W = e->w;
	int l, s, n, H = e->H, F2 = e->F2, r;

	if (!ex || !ex->parallel_for || (ex->experts_submit && !ex->experts_wait))
		return -CB_EINVAL;
	r = check_batch(e, b);
	if (r)
		return r;
	start_pass(e, ex, b);
	n = e->n;

	/* embedding: x = embed[token]; the RoPE angles of each position */
	cb_run_planned(e, ex, embed_chunk, n, cb_col_pieces(H), (cb_u64)e->rd / 2 * CB_PS_ANGLE,
		       CB_ACT_PIECE * CB_PS_DEQUANT);

	for (l = 0; l < (int)cf->n_layers; l++) {
		const struct cb_layer_weights *L = &W->layers[l];

		e->lw = L;
		e->layer = l;

		/* attention norm: x_norm = rmsnorm(x) * attn_norm */
		run_norm(e, ex, attn_norm_chunk);

		if (cb_is_mla(cf)) {
			/* MLA: latent and RoPE key cached, attention in latent space */
			cb_mla_attention(e, ex);
			goto out_proj;
		}
		if (cb_layer_is_delta(cf, l)) {
			/* Gated DeltaNet: block_out from the slot's recurrent state */
			cb_delta_layer(e, ex);
			goto ffn;
		}

		/* q, k, v = Wq x_norm + bq, Wk x_norm + bk, Wv x_norm + bv */
		cb_jobs_reset(e);
		e->att_gated = e->dn_state != CB_NULL;
		if (e->att_gated)	/* wq: per head, q then its output gate */
			cb_job_add(e, &L->wq, e->qg, 2 * (cb_size)e->qdim, &e->x_norm, 0, n,
				   bias(cf, &L->bq));
		else
			cb_job_add(e, &L->wq, e->q, e->qdim, &e->x_norm, 0, n,
				   bias(cf, &L->bq));	/* wq: [n_heads*head_dim, hidden] */
		cb_job_add(e, &L->wk, e->k, e->kvdim, &e->x_norm, 0, n,
			   bias(cf, &L->bk));	/* wk: [n_kv_heads*head_dim, hidden] */
		cb_job_add(e, &L->wv, e->v, e->kvdim, &e->x_norm, 0, n,
			   bias(cf, &L->bv));	/* wv: [n_kv_heads*head_dim, hidden] */
		cb_run_jobs(e, ex);
		if (e->att_gated)
			cb_gated_q_split(e, ex);

		/* q/k norm and RoPE; k and v into the cache */
		cb_attn_rope_cache(e, ex);

		/* attention: att = softmax(q k^T / sqrt(head_dim)) v over the cache */
		cb_attention(e, ex);	/* GPT-OSS's: with sinks and sliding windows */

out_proj:
		/* output: block_out = Wo att (+ bo: GPT-OSS) */
		cb_jobs_reset(e);
		cb_job_add(e, &L->wo, e->block_out, H, &e->att, 0, n,
			   L->oss.bo.data);	/* wo: [hidden, n_heads*head_dim] */
		cb_run_jobs(e, ex);
		e->att_gated = 0;

ffn:
		/* residual, FFN norm: x += block_out; x_norm = rmsnorm(x) * ffn_norm */
		run_ffn_norm(e, ex);

		if (cb_layer_is_moe(cf, l)) {
			/* routed experts, residual: x += the top_k experts, weighted */
			cb_moe_layer(e, ex);
			continue;
		}

		/* MLP: gate, up = Wg x_norm, Wu x_norm */
		cb_jobs_reset(e);
		cb_job_add(e, &L->mlp_gate, e->mlp_gate.f, F2, &e->x_norm, 0, n,
			   CB_NULL);		/* mlp_gate: [dense_ffn, hidden] */
		cb_job_add(e, &L->mlp_up, e->mlp_up, F2, &e->x_norm, 0, n,
			   CB_NULL);		/* mlp_up: [dense_ffn, hidden] */
		cb_run_jobs(e, ex);

		/* gate = silu(gate) * up */
		cb_run_planned(e, ex, swiglu_chunk, n, cb_col_pieces((int)cf->dense_ffn), 0,
			       CB_ACT_PIECE * (CB_PS_SWIGLU + (cb_u64)CB_PS_QUANT *
					       cb_acts_nforms(&e->mlp_gate)));

		/* down: mlp_out = Wd gate */
		cb_jobs_reset(e);
		cb_job_add(e, &L->mlp_down, e->mlp_out, H, &e->mlp_gate, 0, n,
			   CB_NULL);		/* mlp_down: [hidden, dense_ffn] */
		cb_run_jobs(e, ex);

		/* residual: x += mlp_out */
		cb_run_planned(e, ex, residual_chunk, n, cb_col_pieces(H), 0,
			       CB_ACT_PIECE * CB_PS_AXPY);
		trace_dense_layer(e);
	}

	/* final norm of the rows that want logits, compacted */
	run_norm(e, ex, final_chunk);

	/* logits = lm_head x_norm */
	cb_jobs_reset(e);
	cb_job_add(e, cf->tied_embeddings ? &W->embed : &W->lm_head, b->logits,
		   cf->vocab_size, &e->x_norm, 0, e->n_out,
		   CB_NULL);			/* lm_head: [vocab, hidden] */
	cb_run_jobs(e, ex);
	if (e->err)
		return e->err;

	/* commit the new sequence lengths, and the banks the pass wrote */
	for (s = 0; s < (int)e->p.n_seqs; s++)
		if (e->seq_next[s] != CB_NONE) {
			e->seq_len[s] = e->seq_next[s];
			if (e->dn_state)
				e->dn_bank[s] ^= 1;
		}
	return 0;
}
