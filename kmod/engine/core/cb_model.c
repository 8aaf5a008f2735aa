// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_model.c - model validation, arena layout and engine construction.
 *
 * The arena is carved by one function (layout()) that both sizes it and,
 * given a real base, assigns the engine's pointers, so the two can never
 * disagree.  No floating point here, and no call into code that has it:
 * init may be called from non-FPU code (tests/layout/run checks).
 */
#include "core/cb_engine_priv.h"
#include "arch/cb_gpt_oss.h"
#include "arch/cb_mla.h"
#include "arch/cb_delta.h"

struct bump {
	cb_u64 off;
	cb_u64 cap;		/* 0 while sizing */
	char *base;		/* NULL while sizing */
	int overflow;
};

/* Reserve a*b*c bytes (64-byte aligned); NULL while sizing or on overflow. */
static void *carve(struct bump *a, cb_u64 x, cb_u64 y, cb_u64 z)
{
	cb_u64 n, off;

	if (__builtin_mul_overflow(x, y, &n) || __builtin_mul_overflow(n, z, &n) ||
	    __builtin_add_overflow(n, (cb_u64)63, &n)) {
		a->overflow = 1;
		return CB_NULL;
	}
	n &= ~(cb_u64)63;
	off = a->off;
	if (__builtin_add_overflow(off, n, &a->off)) {
		a->overflow = 1;
		return CB_NULL;
	}
	return a->base ? a->base + off : CB_NULL;
}

static int check_tensor(const struct cb_tensor *t, cb_u32 rows, cb_u32 cols,
			int vector)
{
	if (!t->data || t->rows != rows || t->cols != cols || t->dtype >= CB_DT__COUNT)
		return -CB_EINVAL;
	if (vector && t->dtype != CB_DT_F32)
		return -CB_EINVAL;
	if (!cb_dtype_row_bytes(t->dtype, cols))
		return -CB_EINVAL;
	return 0;
}

static int check_mlp(const struct cb_tensor *g, const struct cb_tensor *u,
		     const struct cb_tensor *d, cb_u32 ffn, cb_u32 hidden)
{
	if (check_tensor(g, ffn, hidden, 0) || check_tensor(u, ffn, hidden, 0) ||
	    check_tensor(d, hidden, ffn, 0))
		return -CB_EINVAL;
	return 0;
}

int cb_engine_check_model(const struct cb_model_config *c,
			  const struct cb_model_weights *w)
{
	cb_u32 qd, kvd, l, x;

	if (cb_config_check(c, CB_NULL, 0))
		return -CB_EINVAL;
	qd = c->n_heads * c->head_dim;
	kvd = c->n_kv_heads * c->head_dim;
	if (check_tensor(&w->embed, c->vocab_size, c->hidden, 0) ||
	    check_tensor(&w->final_norm, 1, c->hidden, 1) || !w->layers)
		return -CB_EINVAL;
	if (!c->tied_embeddings && check_tensor(&w->lm_head, c->vocab_size, c->hidden, 0))
		return -CB_EINVAL;
	for (l = 0; l < c->n_layers; l++) {
		const struct cb_layer_weights *L = &w->layers[l];

		if (check_tensor(&L->attn_norm, 1, c->hidden, 1) ||
		    check_tensor(&L->ffn_norm, 1, c->hidden, 1) ||
		    cb_mla_check_layer(c, L, cb_layer_is_moe(c, l)))
			return -CB_EINVAL;
		if (cb_is_mla(c))
			goto mlp;	/* MLA's attention: cb_mla_check_layer() */
		if (cb_layer_is_delta(c, l)) {
			if (cb_delta_check_layer(c, L))
				return -CB_EINVAL;
			goto mlp;
		}
		if (check_tensor(&L->wq, cb_has_delta(c) ? 2 * qd : qd, c->hidden, 0) ||
		    check_tensor(&L->wk, kvd, c->hidden, 0) ||
		    check_tensor(&L->wv, kvd, c->hidden, 0) ||
		    check_tensor(&L->wo, c->hidden, qd, 0))
			return -CB_EINVAL;
		if (c->qkv_bias && (check_tensor(&L->bq, 1, qd, 1) ||
				    check_tensor(&L->bk, 1, kvd, 1) ||
				    check_tensor(&L->bv, 1, kvd, 1)))
			return -CB_EINVAL;
		if (c->qk_norm == CB_QK_NORM_HEAD &&
		    (check_tensor(&L->q_norm, 1, c->head_dim, 1) ||
		     check_tensor(&L->k_norm, 1, c->head_dim, 1)))
			return -CB_EINVAL;
		if (c->qk_norm == CB_QK_NORM_FULL &&
		    (check_tensor(&L->q_norm, 1, qd, 1) ||
		     check_tensor(&L->k_norm, 1, kvd, 1)))
			return -CB_EINVAL;
		if (cb_gpt_oss_check_layer(c, L))
			return -CB_EINVAL;
mlp:
		if (!cb_layer_is_moe(c, l)) {
			if (!c->dense_ffn || check_mlp(&L->mlp_gate, &L->mlp_up,
						       &L->mlp_down, c->dense_ffn,
						       c->hidden))
				return -CB_EINVAL;
			continue;
		}
		if (check_tensor(&L->router, c->n_experts, c->hidden, 0) || !L->experts)
			return -CB_EINVAL;
		for (x = 0; x < c->n_experts; x++)
			if (check_mlp(&L->experts[x].gate, &L->experts[x].up,
				      &L->experts[x].down, c->expert_ffn, c->hidden))
				return -CB_EINVAL;
		if (c->shared_ffn &&
		    check_mlp(&L->shared_gate_proj, &L->shared_up_proj,
			      &L->shared_down_proj, c->shared_ffn, c->hidden))
			return -CB_EINVAL;
		if (c->shared_ffn && c->shared_gate &&
		    check_tensor(&L->shared_expert_gate, 1, c->hidden, 0))
			return -CB_EINVAL;
	}
	return 0;
}

/*
 * Rows of @n activations in f32 and in every quantized form.  A form's
 * row has room for whole blocks of n rounded up: rows shared by users of
 * different widths (the dense MLP's and the shared expert's, n the wider)
 * are written and read over one user's width at a time, whole blocks of
 * the form it reads (the validator sees to that), never past it.  A model
 * whose every layer is MoE may carry a dense_ffn wider than its shared
 * expert and not whole blocks; sizing a form by n's own whole blocks left
 * the shared expert's form empty (test_forward's
 * test_unused_dense_ffn_changes_nothing).
 */
static void carve_acts(struct bump *a, struct cb_acts *acts, cb_u64 rows, cb_u32 n)
{
	cb_u32 k, blk;

	acts->n = (int)n;
	acts->f = carve(a, rows, n, sizeof(float));
	acts->q[CB_ACT_F32] = acts->f;
	acts->q_bytes[CB_ACT_F32] = (cb_size)n * sizeof(float);
	for (k = CB_ACT_F32 + 1; k < CB_ACT__COUNT; k++) {
		blk = cb_act_info(k)->block;
		acts->q_bytes[k] = (cb_size)cb_act_row_bytes(k, ((cb_u64)n + blk - 1) / blk * blk);
		acts->q[k] = acts->q_bytes[k] ? carve(a, rows, acts->q_bytes[k], 1) : CB_NULL;
	}
}

/*
 * The packed activations of the largest gemm phase at a full batch
 * (cb_job_add() packs the rows of every job of M >= CB_PK_MIN_M once per
 * distinct input, when the variant has gemm_pk): x_norm for q, k, v, the
 * router and the MLP's gate and up; att for Wo; the MLP's down; the
 * experts' gathered rows with the shared expert's down; the experts'
 * activations for their down.  An input read by several weights (x_norm,
 * the gathered rows) may be packed in both forms, q8_0 and q8_K (a
 * Q4_K_M file's q8_0 k and v next to its q4_K q); one read by a single
 * weight in one, at most cb_pk_row_bytes().  Jobs that find no room (MLA's
 * per-head ones, say) take the plain gemm, with the same results.  None
 * when a pass is a single token.  Carved whatever the variant, so that
 * the arena's size depends on the config and the parameters alone, not on
 * the CPU.
 */
static cb_u64 pk_bytes(const struct cb_engine *e)
{
	cb_u64 T = e->p.max_batch_tokens, S = T * (cb_u64)e->K, m;
	cb_u64 both = cb_pk_row_bytes((cb_u64)e->H) + cb_pk_k_row_bytes((cb_u64)e->H);

	if (T < CB_PK_MIN_M)
		return 0;
	m = T * both;
	m = CB_MAX(m, T * cb_pk_row_bytes((cb_u64)CB_MAX(e->odim, e->dn_vd)));
	m = CB_MAX(m, T * cb_pk_row_bytes((cb_u64)e->F2));
	m = CB_MAX(m, S * both + T * cb_pk_row_bytes((cb_u64)e->F2));
	return CB_MAX(m, S * cb_pk_row_bytes((cb_u64)e->F));
}

/* The shortest attention split (MLA's naive form has its own). */
static int att_min_split(const struct cb_engine *e)
{
	return e->nv_split ? CB_MIN(e->att_split, e->nv_split) : e->att_split;
}

/* The KV rows layer @l keeps per slot. */
static cb_u32 kv_layer_rows(const struct cb_engine *e, cb_u32 l)
{
	if (cb_layer_is_delta(&e->cfg, l))
		return 0;
	return cb_gpt_oss_sliding(&e->cfg, l) ? e->ring_rows : e->p.max_context;
}

/*
 * Carve every buffer of the engine.  With a->base == NULL only sizes; the
 * pointers then stored in *e are meaningless and never used.
 */
static void layout(struct cb_engine *e, struct bump *a)
{
	const struct cb_model_config *c = &e->cfg;
	cb_u64 T = e->p.max_batch_tokens, S = T * (e->E ? e->K : 0), rows = 0;
	cb_u64 kv, *off;
	cb_u32 l, *nr;

	/*
	 * a GPT-OSS sliding layer keeps a ring of ring_rows, a DeltaNet layer
	 * none (its state is fixed: dn_state), the others every position
	 */
	for (l = 0; l < c->n_layers; l++)
		rows += kv_layer_rows(e, l);
	e->kv_slot_rows = rows;
	kv = (cb_u64)e->p.n_seqs * rows;

	carve(a, sizeof(*e), 1, 1);	/* the engine itself, first */
	/*
	 * The KV cache: full k and v (rows per layer as above), or MLA's
	 * latent and RoPE key (kvdim 0), [n_seqs][n_layers][max_context].
	 */
	if (e->kvdim) {
		e->k_cache = carve(a, kv, e->kvdim, sizeof(float));
		e->v_cache = carve(a, kv, e->kvdim, sizeof(float));
	}
	off = carve(a, c->n_layers, sizeof(cb_u64), 1);
	nr = carve(a, c->n_layers, sizeof(cb_u32), 1);
	e->kv_off = off;
	e->kv_rows = nr;
	for (l = 0, rows = 0; off && l < c->n_layers; l++) {
		off[l] = rows;
		nr[l] = kv_layer_rows(e, l);
		rows += nr[l];
	}
	e->seq_hi = carve(a, e->p.n_seqs, sizeof(cb_u32), 1);
	if (cb_is_mla(c)) {
		cb_u64 nhT = T * c->n_heads;

		e->lat_cache = carve(a, kv, e->mla_row, sizeof(float));
		carve_acts(a, &e->q_lat_in, T, c->mla.q_lora_rank);
		e->kv_lat = carve(a, T, e->mla_row, sizeof(float));
		carve_acts(a, &e->q_nope, nhT, c->mla.qk_nope_dim);
		e->q_cat = carve(a, nhT, e->mla_row, sizeof(float));
		carve_acts(a, &e->o_lat, nhT, e->mla_R);
		if (e->nv_split) {
			cb_u64 ld = (cb_u64)c->n_heads * (c->mla.qk_nope_dim + c->mla.v_head_dim);

			e->nv_w = carve(a, ld, e->mla_R, sizeof(float));
			e->nv_kv = carve(a, CB_MAX((cb_u64)e->nv_split * ld,
						   (cb_u64)c->n_heads * e->mla_R *
						   c->mla.qk_nope_dim), 1, sizeof(float));
		}
	}
	e->seq_len = carve(a, e->p.n_seqs, sizeof(cb_u32), 1);
	e->seq_next = carve(a, e->p.n_seqs, sizeof(cb_u32), 1);
	if (cb_has_delta(c)) {
		/* each slot's state, two banks; the batch by slot; the layer's rows */
		e->dn_state = carve(a, (cb_u64)e->p.n_seqs * 2, e->dn_floats, sizeof(float));
		e->dn_bank = carve(a, e->p.n_seqs, 1, 1);
		e->dn_run = carve(a, T, sizeof(cb_u32), 1);
		e->dn_slots = carve(a, T, sizeof(cb_u32), 1);
		e->dn_start = carve(a, e->p.n_seqs, sizeof(cb_u32), 1);
		e->dn_len = carve(a, e->p.n_seqs, sizeof(cb_u32), 1);
		e->dn_qkv = carve(a, T, e->dn_conv_dim, sizeof(float));
		e->dn_conv = carve(a, T, e->dn_conv_dim, sizeof(float));
		e->dn_z = carve(a, T, e->dn_vd, sizeof(float));
		e->dn_beta = carve(a, T, c->delta.v_heads, sizeof(float));
		e->dn_g = carve(a, T, c->delta.v_heads, sizeof(float));
		e->dn_o = carve(a, T, e->dn_vd, sizeof(float));
		carve_acts(a, &e->dn_att, T, e->dn_vd);
		e->qg = carve(a, T, 2 * (cb_u64)e->qdim, sizeof(float));
		e->att_gate = carve(a, T, e->qdim, sizeof(float));
	}

	e->x = carve(a, T, e->H, sizeof(float));
	carve_acts(a, &e->x_norm, T, e->H);
	e->block_out = carve(a, T, e->H, sizeof(float));
	e->q = carve(a, T, e->qdim, sizeof(float));
	e->k = carve(a, T, e->kvdim, sizeof(float));
	e->v = carve(a, T, e->kvdim, sizeof(float));
	carve_acts(a, &e->att, T, e->odim);
	e->rope = carve(a, T, e->hd, sizeof(float));
	e->qk_inv = carve(a, T, 2, sizeof(float));
	/* partial softmax states, only when a context can exceed one split */
	if (e->p.max_context > (cb_u32)att_min_split(e))
		e->att_part = carve(a, T * c->n_heads,
				    ((cb_u64)e->p.max_context + att_min_split(e) - 1) /
				    att_min_split(e), (cb_u64)(e->att_w + 2) * sizeof(float));
	e->logit_row = carve(a, T, sizeof(cb_u32), 1);

	carve_acts(a, &e->mlp_gate, T, e->F2);
	e->mlp_up = carve(a, T, e->F2, sizeof(float));
	e->mlp_out = carve(a, T, e->H, sizeof(float));
	e->shared_logit = carve(a, T, sizeof(float), 1);

	if (e->E) {
		e->router_logits = carve(a, T, e->E, sizeof(float));
		if (cb_route_is_grouped(c)) {
			e->route_tmp = carve(a, T, 2 * ((cb_u64)e->E + e->route_ng), sizeof(float));
			e->route_ids = carve(a, T, e->route_ng, sizeof(cb_u32));
		}
		e->top_w = carve(a, T, e->K, sizeof(float));
		e->top_id = carve(a, T, e->K, sizeof(cb_u32));
		e->slot_of = carve(a, T, e->K, sizeof(cb_u32));
		e->exp_cnt = carve(a, e->E, sizeof(cb_u32), 1);
		e->exp_off = carve(a, e->E + 1, sizeof(cb_u32), 1);
		e->exp_cur = carve(a, e->E, sizeof(cb_u32), 1);
		e->slot_tok = carve(a, S, sizeof(cb_u32), 1);
		carve_acts(a, &e->exp_in, S, e->H);
		carve_acts(a, &e->exp_gate, S, e->F);
		e->exp_up = carve(a, S, e->F, sizeof(float));
		e->exp_out = carve(a, S, e->H, sizeof(float));
		e->tasks = carve(a, e->E, sizeof(struct cb_expert_task), 1);
		e->exp_run = carve(a, e->E, 1, 1);
		e->slot_run = carve(a, S, 1, 1);
	}
	/* MLA queues one job per head */
	e->max_jobs = CB_MAX(2 * e->E, cb_is_mla(c) ? (int)c->n_heads : 0) + 8;
	e->jobs = carve(a, e->max_jobs, sizeof(struct cb_gemm_job), 1);
	e->pk_size = pk_bytes(e);
	e->pk_buf = e->pk_size ? carve(a, e->pk_size, 1, 1) : CB_NULL;
	e->sample_scratch = carve(a, cb_sample_scratch_size(c->vocab_size), 1, 1);
}

/*
 * The activation forms each buffer must be kept in: those of every weight
 * that reads it.  The experts' gathered rows (exp_in) are chosen per layer,
 * from the experts the batch selected.
 */
static void set_kinds(struct cb_engine *e, const struct cb_model_weights *w)
{
	const struct cb_model_config *c = &e->cfg;
	cb_u32 l, x, f32 = 1u << CB_ACT_F32;

	e->x_norm.kinds = f32 | cb_tensor_kinds(c->tied_embeddings ? &w->embed : &w->lm_head);
	e->att.kinds = f32;
	e->mlp_gate.kinds = f32;
	e->exp_gate.kinds = f32;
	e->q_lat_in.kinds = f32;
	e->q_nope.kinds = f32;
	e->o_lat.kinds = f32;
	e->dn_att.kinds = f32;
	for (l = 0; l < c->n_layers; l++) {
		const struct cb_layer_weights *L = &w->layers[l];
		const struct cb_delta_layer *D = &L->delta;

		/* Gated DeltaNet (absent tensors add no form) */
		e->x_norm.kinds |= cb_tensor_kinds(&D->qkv) | cb_tensor_kinds(&D->z) |
				   cb_tensor_kinds(&D->b) | cb_tensor_kinds(&D->a);
		e->dn_att.kinds |= cb_tensor_kinds(&D->out);

		e->x_norm.kinds |= cb_tensor_kinds(&L->wq) | cb_tensor_kinds(&L->wk) |
				   cb_tensor_kinds(&L->wv);
		/* MLA (absent tensors add no form) */
		e->x_norm.kinds |= cb_tensor_kinds(&L->q_a) | cb_tensor_kinds(&L->kv_a);
		e->q_lat_in.kinds |= cb_tensor_kinds(&L->q_b);
		e->q_nope.kinds |= cb_tensor_kinds(&L->k_b);
		e->o_lat.kinds |= cb_tensor_kinds(&L->v_b);
		e->att.kinds |= cb_tensor_kinds(&L->wo);
		if (!cb_layer_is_moe(c, l)) {
			e->x_norm.kinds |= cb_tensor_kinds(&L->mlp_gate) |
					   cb_tensor_kinds(&L->mlp_up);
			e->mlp_gate.kinds |= cb_tensor_kinds(&L->mlp_down);
			continue;
		}
		e->x_norm.kinds |= cb_tensor_kinds(&L->router);
		if (c->shared_ffn) {
			e->x_norm.kinds |= cb_tensor_kinds(&L->shared_gate_proj) |
					   cb_tensor_kinds(&L->shared_up_proj);
			e->mlp_gate.kinds |= cb_tensor_kinds(&L->shared_down_proj);
		}
		if (c->shared_ffn && c->shared_gate)
			e->x_norm.kinds |= cb_tensor_kinds(&L->shared_expert_gate);
		for (x = 0; x < c->n_experts; x++) {
			e->x_norm.kinds |= cb_tensor_kinds(&L->experts[x].gate) |
					   cb_tensor_kinds(&L->experts[x].up);
			e->exp_gate.kinds |= cb_tensor_kinds(&L->experts[x].down);
		}
	}
}

/* chunks of one gemm job at the slowest cost of any variant (the most) */
static cb_u64 gemm_chunks(const struct cb_engine *e, cb_u32 rows, cb_u32 k, cb_u64 M)
{
	int rblk, mblk;

	if (!rows || !k || !M)
		return 0;
	cb_gemm_plan((int)rows, (int)k, (int)CB_MIN(M, (cb_u64)0x7fffffff), CB_PS_GEMM_MAX,
		     e->chunk_ps, &rblk, &mblk);
	return ((cb_u64)rows + rblk - 1) / rblk * ((M + mblk - 1) / mblk);
}

static cb_u64 row_chunks(const struct cb_engine *e, cb_u64 rows, int pieces, cb_u64 row_ps,
			 cb_u64 piece_ps)
{
	struct cb_plan pl;

	cb_plan_rows(&pl, (int)CB_MIN(rows, (cb_u64)0x7fffffff), pieces, row_ps, piece_ps,
		     e->chunk_ps);
	return (cb_u64)pl.nchunks + (rows > 0x7fffffff ? rows : 0);
}

/*
 * Chunk indices are ints: a bound on the chunks of the largest phase at a
 * full batch, with the costs of the slowest variant (the most chunks).
 * The gemms of one phase are summed; the experts' jobs carry T * K slots
 * between them, at most one job per expert more than T * K alone needs.
 */
static cb_u64 max_chunks(const struct cb_engine *e)
{
	const struct cb_model_config *c = &e->cfg;
	cb_u64 T = e->p.max_batch_tokens, S = T * (cb_u64)e->K, m = 0, v;
	cb_u32 grp = c->n_heads / c->n_kv_heads;
	cb_u64 splits = ((cb_u64)e->p.max_context + att_min_split(e) - 1) / att_min_split(e);

	/* gemms: lm_head; q, k, v; the experts' gate and up; the MLPs */
	m = CB_MAX(m, gemm_chunks(e, c->vocab_size, e->H, T));
	m = CB_MAX(m, gemm_chunks(e, e->qdim, e->H, T) + 2 * gemm_chunks(e, e->kvdim, e->H, T));
	m = CB_MAX(m, gemm_chunks(e, e->H, e->qdim, T));
	m = CB_MAX(m, 2 * gemm_chunks(e, e->F2, e->H, T) + gemm_chunks(e, e->E, e->H, T));
	m = CB_MAX(m, gemm_chunks(e, e->H, e->F2, T));
	v = S ? gemm_chunks(e, e->F, e->H, S) + (cb_u64)e->E * gemm_chunks(e, e->F, e->H, 1) : 0;
	m = CB_MAX(m, 2 * v + gemm_chunks(e, e->H, e->F2, T));
	v = S ? gemm_chunks(e, e->H, e->F, S) + (cb_u64)e->E * gemm_chunks(e, e->H, e->F, 1) : 0;
	m = CB_MAX(m, v);
	/* attention: (token, kv head, head block, split), a head per block at most */
	m = CB_MAX(m, T * c->n_kv_heads * grp * splits);
	/* the merge: (token, head) rows cut in up to head_dim pieces */
	if (splits > 1)
		m = CB_MAX(m, row_chunks(e, T * c->n_heads, e->hd, splits * CB_PS_EXP,
					 splits * CB_PS_AXPY));
	/* rows of whole pieces: the widest of the MLPs, the slots */
	m = CB_MAX(m, row_chunks(e, CB_MAX(T, S), cb_col_pieces(CB_MAX(CB_MAX(e->F, e->F2), e->H)),
				 0, CB_ACT_PIECE * (CB_PS_SWIGLU + 2ull * CB_PS_QUANT)));
	m = CB_MAX(m, T * c->n_kv_heads);
	if (cb_has_delta(c)) {
		/* the projections; the convolution's and the recurrence's rows and pieces */
		m = CB_MAX(m, 2 * gemm_chunks(e, 2 * e->qdim, e->H, T) +
			      2 * gemm_chunks(e, e->kvdim, e->H, T));
		m = CB_MAX(m, gemm_chunks(e, e->dn_conv_dim, e->H, T) +
			      gemm_chunks(e, e->dn_vd, e->H, T) +
			      2 * gemm_chunks(e, c->delta.v_heads, e->H, T));
		m = CB_MAX(m, gemm_chunks(e, e->H, e->dn_vd, T));
		m = CB_MAX(m, T * cb_col_pieces(e->dn_conv_dim));
		m = CB_MAX(m, T * (cb_u64)c->delta.v_heads * c->delta.v_dim);
		m = CB_MAX(m, T * (cb_u64)c->delta.v_heads);
	}
	if (cb_is_mla(c)) {
		/* the per-head jobs; the merge over the latent; q_a, kv_a */
		m = CB_MAX(m, c->n_heads * gemm_chunks(e, e->mla_R, c->mla.qk_nope_dim, T));
		m = CB_MAX(m, c->n_heads * gemm_chunks(e, c->mla.v_head_dim, e->mla_R, T));
		m = CB_MAX(m, gemm_chunks(e, e->qdim, CB_MAX(c->mla.q_lora_rank, 1u), T));
		m = CB_MAX(m, gemm_chunks(e, e->qdim, e->H, T) +
			      gemm_chunks(e, c->mla.q_lora_rank, e->H, T) +
			      gemm_chunks(e, e->mla_row, e->H, T));
		m = CB_MAX(m, T * c->n_heads);
		if (splits > 1)
			m = CB_MAX(m, row_chunks(e, T * c->n_heads, e->mla_R,
						 splits * CB_PS_EXP, splits * CB_PS_AXPY));
		/* the naive form: k_b and v_b rows, W_uk's, one split's keys and values */
		if (e->nv_split) {
			m = CB_MAX(m, (cb_u64)c->n_heads * (e->mla_R + c->mla.v_head_dim +
							   c->mla.qk_nope_dim));
			m = CB_MAX(m, gemm_chunks(e, c->n_heads * (c->mla.qk_nope_dim +
								 c->mla.v_head_dim),
						  e->mla_R, e->nv_split));
		}
	}
	return m;
}

static int setup(struct cb_engine *e, const struct cb_model_config *cfg,
		 const struct cb_engine_params *p)
{
	if (cb_config_check(cfg, CB_NULL, 0) || !p->max_batch_tokens || !p->n_seqs ||
	    !p->max_context || p->max_batch_tokens > CB_MAX_BATCH_TOKENS ||
	    p->n_seqs > CB_MAX_SEQS || p->max_context > CB_MAX_CONTEXT)
		return -CB_EINVAL;
	if (cfg->max_context && p->max_context > cfg->max_context)
		return -CB_EINVAL;
	e->cfg = *cfg;
	e->arch = cb_arch_of(cfg->arch);	/* known: the config check said so */
	e->p = *p;
	e->H = cfg->hidden;
	e->hd = cfg->head_dim;
	e->qdim = cfg->n_heads * cfg->head_dim;
	e->kvdim = cfg->n_kv_heads * cfg->head_dim;
	e->E = cfg->n_experts;
	e->K = cfg->n_experts ? cfg->top_k : 0;
	e->F = cfg->expert_ffn;
	e->F2 = CB_MAX(cfg->shared_ffn, cfg->dense_ffn);

	e->rd = (int)(cfg->rope_dim ? cfg->rope_dim : cfg->head_dim);
	e->route_ng = (int)CB_MAX(cfg->mla.n_group, 1u);
	e->odim = e->qdim;
	e->att_w = e->hd;
	if (cb_is_mla(cfg)) {
		/* one shared latent "kv head" of mla_row dimensions; no k/v cache */
		e->kvdim = 0;
		e->rd = (int)cfg->mla.qk_rope_dim;
		e->odim = (int)(cfg->n_heads * cfg->mla.v_head_dim);
		e->mla_R = (int)cfg->mla.kv_lora_rank;
		e->mla_row = e->mla_R + e->rd;
		/* att_part holds latents (absorbed) or values (naive) */
		e->att_w = (int)CB_MAX((cb_u32)e->mla_R, cfg->mla.v_head_dim);
		/* the naive form, for prefill, needs passes of more than a token */
		if (p->max_batch_tokens > 1)
			e->nv_split = cb_att_split((int)(cfg->head_dim + cfg->mla.v_head_dim));
	}

	if (cb_has_delta(cfg)) {
		e->dn_floats = cb_delta_state_floats(cfg);
		e->dn_conv_dim = (int)cb_delta_conv_dim(cfg);
		e->dn_vd = (int)(cfg->delta.v_heads * cfg->delta.v_dim);
	}
	e->chunk_ps = p->chunk_ns ? (cb_u64)p->chunk_ns * 1000 : CB_CHUNK_PS;
	e->att_split = cb_att_split(cb_is_mla(cfg) ? e->mla_row : e->hd);
	e->ring_rows = cb_gpt_oss_ring_rows(cfg, p->max_context, p->max_batch_tokens);
	return max_chunks(e) > 0x7fffffffull ? -CB_EINVAL : 0;
}

cb_u64 cb_engine_arena_size(const struct cb_model_config *cfg,
			    const struct cb_engine_params *p)
{
	struct cb_engine tmp = { 0 };
	struct bump a = { 0 };

	if (setup(&tmp, cfg, p))
		return 0;
	layout(&tmp, &a);
	return a.overflow ? 0 : a.off;
}

int cb_engine_init(struct cb_engine **out, const struct cb_model_config *cfg,
		   const struct cb_model_weights *w,
		   const struct cb_engine_params *p, void *arena,
		   cb_u64 arena_size)
{
	struct cb_engine tmp = { 0 }, *e;
	struct bump a = { 0 };
	cb_u32 i;

	if (!out || !cfg || !w || !p || !arena || ((cb_uptr)arena & 63))
		return -CB_EINVAL;
	if (setup(&tmp, cfg, p) || cb_engine_check_model(cfg, w))
		return -CB_EINVAL;
	layout(&tmp, &a);
	if (a.overflow)
		return -CB_EINVAL;
	if (a.off > arena_size)
		return -CB_ENOMEM;

	e = arena;
	*e = tmp;
	a.off = 0;
	a.base = arena;
	a.cap = arena_size;
	layout(e, &a);
	e->w = w;
	set_kinds(e, w);
	e->arena_used = a.off;
	e->ops = cb_isa_select(p->isa_max_level);
	for (i = 0; i < p->n_seqs; i++) {
		e->seq_len[i] = 0;
		e->seq_hi[i] = 0;
		if (e->dn_bank)
			e->dn_bank[i] = 0;
	}
	*out = e;
	return 0;
}

cb_u64 cb_engine_arena_used(const struct cb_engine *e)
{
	return e->arena_used;
}

const char *cb_engine_isa_name(const struct cb_engine *e)
{
	return cb_isa_names[e->ops->level];
}

int cb_engine_seq_reset(struct cb_engine *e, cb_u32 seq)
{
	if (seq >= e->p.n_seqs)
		return -CB_EINVAL;
	e->seq_len[seq] = 0;
	e->seq_hi[seq] = 0;
	return 0;
}

int cb_engine_seq_len(const struct cb_engine *e, cb_u32 seq)
{
	if (seq >= e->p.n_seqs)
		return -CB_EINVAL;
	return (int)e->seq_len[seq];
}
