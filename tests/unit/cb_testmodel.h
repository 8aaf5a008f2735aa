/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_testmodel.h - small random models for the native unit tests.
 *
 * A struct cb_tm_spec names an architecture and its shapes and dtypes;
 * cb_tm_build() fills a struct cb_tm_model (config, weights, the layer and
 * expert arrays they point to) from one deterministic xorshift stream, so
 * a test that seeds the stream the same way gets the same model, bit for
 * bit, every run.  Tensors come from malloc() and live as long as the test.
 *
 *	static const struct cb_tm_spec sp = { .arch = COLIBRI_ARCH_MIXTRAL, ... };
 *	static struct cb_tm_model m;
 *
 *	cb_tm_seed(42);
 *	cb_tm_build(&m, &sp);
 */
#ifndef CB_TESTMODEL_H
#define CB_TESTMODEL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cb_engine.h"
#include "ops/cb_ops.h"

#define CB_TM_MAXL 3		/* layers */
#define CB_TM_MAXE 16		/* routed experts per layer */
#define CB_TM_MAXCOLS 1024	/* columns of one generated row */

struct cb_tm_spec {
	const char *name;
	cb_u32 arch, vocab, hidden, n_layers, n_heads, n_kv_heads, head_dim;
	cb_u32 ffn, n_exp, top_k, norm_topk, shared_ffn, shared_gate, dense_ffn;
	cb_u32 dense_layer;		/* 1 + index of the dense layer, 0: none */
	cb_u32 qk_norm, qkv_bias;
	cb_u32 dt;			/* every matrix but the router (f32) */
	/*
	 * Routed experts take dt_gate/dt_up/dt_down only if own_expert_dt is
	 * set, else dt: CB_DT_F32 is 0, so a zero field cannot mean "unset".
	 */
	cb_u32 own_expert_dt, dt_gate, dt_up, dt_down;
	float scale;			/* range of every projection's values */
	float router_scale;
};

struct cb_tm_model {
	const struct cb_tm_spec *sp;
	struct cb_model_config cfg;
	struct cb_model_weights w;
	struct cb_layer_weights layers[CB_TM_MAXL];
	struct cb_expert_weights experts[CB_TM_MAXL][CB_TM_MAXE];
};

static unsigned long long cb_tm_rng = 0x9e3779b97f4a7c15ull;

/* xorshift state must not be 0 */
static inline void cb_tm_seed(unsigned long long seed)
{
	cb_tm_rng = seed ? seed : 0x9e3779b97f4a7c15ull;
}

/* Uniform in [-1, 1). */
static inline float cb_tm_frand(void)
{
	cb_tm_rng ^= cb_tm_rng << 13;
	cb_tm_rng ^= cb_tm_rng >> 7;
	cb_tm_rng ^= cb_tm_rng << 17;
	return (float)((cb_tm_rng >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

static inline cb_u32 cb_tm_bits(float f)
{
	cb_u32 u;

	memcpy(&u, &f, 4);
	return u;
}

/* [rows, cols] of dtype, values uniform in [-scale, scale) before quantization */
static inline struct cb_tensor cb_tm_mat(int rows, int cols, float scale, int dtype)
{
	struct cb_tensor t = { .dtype = dtype, .rows = rows, .cols = cols };
	cb_u64 rb = cb_dtype_row_bytes(dtype, cols);
	char *p = malloc(rb * rows);
	float row[CB_TM_MAXCOLS];
	int r, i;

	if (!p || cols > CB_TM_MAXCOLS) {
		fprintf(stderr, "%s: %d x %d\n", __func__, rows, cols);
		abort();
	}
	for (r = 0; r < rows; r++) {
		for (i = 0; i < cols; i++)
			row[i] = cb_tm_frand() * scale;
		cb_quantize_row(dtype, p + r * rb, row, cols);
	}
	t.data = p;
	return t;
}

/* f32 vector of n, values in [base - scale, base + scale) */
static inline struct cb_tensor cb_tm_vec(int n, float base, float scale)
{
	struct cb_tensor t = { .dtype = CB_DT_F32, .rows = 1, .cols = n };
	float *p = malloc(n * sizeof(float));
	int i;

	if (!p)
		abort();
	for (i = 0; i < n; i++)
		p[i] = base + cb_tm_frand() * scale;
	t.data = p;
	return t;
}

/*
 * Fill @m from @sp (which must outlive it).  The order in which tensors
 * draw from the stream is part of the contract: changing it changes every
 * test's model.
 */
static inline void cb_tm_build(struct cb_tm_model *m, const struct cb_tm_spec *sp)
{
	struct cb_model_config *c = &m->cfg;
	int l, x, H = sp->hidden, F = sp->ffn, NH = sp->n_heads, NKV = sp->n_kv_heads;
	int HD = sp->head_dim, dt = sp->dt;
	int dt_gate = sp->own_expert_dt ? (int)sp->dt_gate : dt;
	int dt_up = sp->own_expert_dt ? (int)sp->dt_up : dt;
	int dt_down = sp->own_expert_dt ? (int)sp->dt_down : dt;
	float s = sp->scale;

	if (sp->n_layers > CB_TM_MAXL || sp->n_exp > CB_TM_MAXE ||
	    sp->dense_layer > sp->n_layers) {
		fprintf(stderr, "%s: spec %s too large\n", __func__, sp->name);
		abort();
	}
	memset(m, 0, sizeof(*m));
	m->sp = sp;
	c->arch = sp->arch;
	c->vocab_size = sp->vocab;
	c->hidden = H;
	c->n_layers = sp->n_layers;
	c->n_heads = NH;
	c->n_kv_heads = NKV;
	c->head_dim = HD;
	c->expert_ffn = F;
	c->n_experts = sp->n_exp;
	c->top_k = sp->top_k;
	c->norm_topk_prob = sp->norm_topk;
	c->shared_ffn = sp->shared_ffn;
	c->shared_gate = sp->shared_gate;
	c->dense_ffn = sp->dense_ffn;
	c->decoder_sparse_step = 1;
	if (sp->dense_layer)
		c->mlp_only_layers[0] = 1ull << (sp->dense_layer - 1);
	c->rope_layout = CB_ROPE_NEOX;
	c->rope_theta_bits = cb_tm_bits(10000.0f);
	c->rms_eps_bits = cb_tm_bits(1e-6f);
	c->qkv_bias = sp->qkv_bias;
	c->qk_norm = sp->qk_norm;
	c->max_context = 64;

	m->w.embed = cb_tm_mat(sp->vocab, H, 1.0f, dt);
	m->w.final_norm = cb_tm_vec(H, 1.0f, 0.1f);
	m->w.lm_head = cb_tm_mat(sp->vocab, H, 0.3f, dt);
	m->w.layers = m->layers;
	for (l = 0; l < (int)sp->n_layers; l++) {
		struct cb_layer_weights *L = &m->layers[l];

		L->attn_norm = cb_tm_vec(H, 1.0f, 0.1f);
		L->ffn_norm = cb_tm_vec(H, 1.0f, 0.1f);
		L->wq = cb_tm_mat(NH * HD, H, s, dt);
		L->wk = cb_tm_mat(NKV * HD, H, s, dt);
		L->wv = cb_tm_mat(NKV * HD, H, s, dt);
		L->wo = cb_tm_mat(H, NH * HD, s, dt);
		if (sp->qkv_bias) {
			L->bq = cb_tm_vec(NH * HD, 0.0f, 0.1f);
			L->bk = cb_tm_vec(NKV * HD, 0.0f, 0.1f);
			L->bv = cb_tm_vec(NKV * HD, 0.0f, 0.1f);
		}
		if (sp->qk_norm == CB_QK_NORM_HEAD) {
			L->q_norm = cb_tm_vec(HD, 1.0f, 0.1f);
			L->k_norm = cb_tm_vec(HD, 1.0f, 0.1f);
		} else if (sp->qk_norm == CB_QK_NORM_FULL) {
			L->q_norm = cb_tm_vec(NH * HD, 1.0f, 0.1f);
			L->k_norm = cb_tm_vec(NKV * HD, 1.0f, 0.1f);
		}
		if (!cb_layer_is_moe(c, l)) {
			L->mlp_gate = cb_tm_mat(sp->dense_ffn, H, s, dt);
			L->mlp_up = cb_tm_mat(sp->dense_ffn, H, s, dt);
			L->mlp_down = cb_tm_mat(H, sp->dense_ffn, s, dt);
			continue;
		}
		L->router = cb_tm_mat(sp->n_exp, H, sp->router_scale, CB_DT_F32);
		for (x = 0; x < (int)sp->n_exp; x++) {
			m->experts[l][x].gate = cb_tm_mat(F, H, s, dt_gate);
			m->experts[l][x].up = cb_tm_mat(F, H, s, dt_up);
			m->experts[l][x].down = cb_tm_mat(H, F, s, dt_down);
		}
		L->experts = m->experts[l];
		if (sp->shared_ffn) {
			L->shared_gate_proj = cb_tm_mat(sp->shared_ffn, H, s, dt);
			L->shared_up_proj = cb_tm_mat(sp->shared_ffn, H, s, dt);
			L->shared_down_proj = cb_tm_mat(H, sp->shared_ffn, s, dt);
			if (sp->shared_gate)
				L->shared_expert_gate = cb_tm_mat(1, H, s, dt);
		}
	}
}

/*
 * One step of a batching schedule: @plan[s] tokens of each of @nseq
 * sequences, the next ones of @prompts (row s, @prompt_len wide) after
 * @done[s], in sequence order into @tok/@seq/@pos.  Advances @done;
 * returns the number of tokens.
 */
static inline cb_u32 cb_tm_plan_step(const int *plan, int nseq, const cb_u32 *prompts,
				     int prompt_len, int *done, cb_u32 *tok, cb_u32 *seq,
				     cb_u32 *pos)
{
	cb_u32 n = 0;
	int s, i;

	for (s = 0; s < nseq; s++) {
		for (i = 0; i < plan[s]; i++, n++) {
			tok[n] = prompts[s * prompt_len + done[s] + i];
			seq[n] = s;
			pos[n] = done[s] + i;
		}
		done[s] += plan[s];
	}
	return n;
}

#endif /* CB_TESTMODEL_H */
