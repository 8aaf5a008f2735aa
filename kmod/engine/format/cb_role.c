// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_role.c - the one table of tensor roles: name, scope, field and shape
 * of each uapi COLIBRI_T_* (cb_role.h).
 */
#include "format/cb_role.h"

/*
 * The dimensions a role's rows and columns are, from the config (a row of
 * the table names two of them and whether the tensor is a vector).
 */
enum cb_dim {
	D_ONE = 0,
	D_HIDDEN,
	D_VOCAB,
	D_Q,		/* n_heads * head_dim */
	D_KV,		/* n_kv_heads * head_dim */
	D_ATTN_OUT,	/* what wo reads: D_Q, or n_heads * v_head_dim for MLA */
	D_Q_NORM,	/* head_dim (CB_QK_NORM_HEAD) or D_Q (FULL) */
	D_K_NORM,	/* head_dim or D_KV */
	D_HEADS,
	D_EXPERTS,
	D_EXPERT_FFN,
	D_SHARED_FFN,
	D_DENSE_FFN,
	D_Q_LORA,	/* MLA: q_lora_rank */
	D_KV_A,		/* kv_lora_rank + qk_rope_dim */
	D_KV_LORA,	/* kv_lora_rank */
	D_HEADS_KV_LORA,	/* n_heads * kv_lora_rank */
	D_QK_NOPE,	/* qk_nope_dim */
	D_HEADS_V,	/* n_heads * v_head_dim */
	D_Q_PROJ,	/* D_Q, twice for gated attention (q and its gate per head) */
	D_DELTA_CONV,	/* DeltaNet: the convolution's channels, 2 Kd + Vd */
	D_DELTA_VD,	/* v_heads * v_dim */
	D_DELTA_VHEADS,	/* v_heads */
	D_DELTA_VDIM,	/* v_dim */
	D_DELTA_TAPS,	/* conv_kernel */
};

#define ROLE(sc, n, st, f, r, c, v) \
	{ n, sc, __builtin_offsetof(struct st, f), r, c, v }
#define MODEL(n, f, r, c)	ROLE(CB_ROLE_MODEL, n, cb_model_weights, f, r, c, 0)
#define LAYER(n, f, r, c)	ROLE(CB_ROLE_LAYER, n, cb_layer_weights, f, r, c, 0)
#define EXPERT(n, f, r, c)	ROLE(CB_ROLE_EXPERT, n, cb_expert_weights, f, r, c, 0)
/* f32 vectors (norms, biases, sinks): one row, or one per expert */
#define MODEL_VEC(n, f, c)	ROLE(CB_ROLE_MODEL, n, cb_model_weights, f, D_ONE, c, 1)
#define LAYER_VEC(n, f, r, c)	ROLE(CB_ROLE_LAYER, n, cb_layer_weights, f, r, c, 1)

static const struct cb_role_entry {
	const char *name;	/* the file's and the tools' name of it */
	cb_u16 scope;		/* enum cb_role_scope */
	cb_u16 offset;		/* of its struct cb_tensor in the scope's struct */
	cb_u8 rows, cols;	/* enum cb_dim */
	cb_u8 vector;		/* f32 only */
} roles[] = {
	[COLIBRI_T_EMBED] = MODEL("embed", embed, D_VOCAB, D_HIDDEN),
	[COLIBRI_T_FINAL_NORM] = MODEL_VEC("final_norm", final_norm, D_HIDDEN),
	[COLIBRI_T_LM_HEAD] = MODEL("lm_head", lm_head, D_VOCAB, D_HIDDEN),
	/* attention */
	[COLIBRI_T_ATTN_NORM] = LAYER_VEC("attn_norm", attn_norm, D_ONE, D_HIDDEN),
	[COLIBRI_T_WQ] = LAYER("wq", wq, D_Q_PROJ, D_HIDDEN),
	[COLIBRI_T_WK] = LAYER("wk", wk, D_KV, D_HIDDEN),
	[COLIBRI_T_WV] = LAYER("wv", wv, D_KV, D_HIDDEN),
	[COLIBRI_T_WO] = LAYER("wo", wo, D_HIDDEN, D_ATTN_OUT),
	[COLIBRI_T_BQ] = LAYER_VEC("bq", bq, D_ONE, D_Q),
	[COLIBRI_T_BK] = LAYER_VEC("bk", bk, D_ONE, D_KV),
	[COLIBRI_T_BV] = LAYER_VEC("bv", bv, D_ONE, D_KV),
	[COLIBRI_T_Q_NORM] = LAYER_VEC("q_norm", q_norm, D_ONE, D_Q_NORM),
	[COLIBRI_T_K_NORM] = LAYER_VEC("k_norm", k_norm, D_ONE, D_K_NORM),
	[COLIBRI_T_FFN_NORM] = LAYER_VEC("ffn_norm", ffn_norm, D_ONE, D_HIDDEN),
	/* routed experts, shared experts */
	[COLIBRI_T_ROUTER] = LAYER("router", router, D_EXPERTS, D_HIDDEN),
	[COLIBRI_T_EXPERT_GATE] = EXPERT("expert_gate", gate, D_EXPERT_FFN, D_HIDDEN),
	[COLIBRI_T_EXPERT_UP] = EXPERT("expert_up", up, D_EXPERT_FFN, D_HIDDEN),
	[COLIBRI_T_EXPERT_DOWN] = EXPERT("expert_down", down, D_HIDDEN, D_EXPERT_FFN),
	[COLIBRI_T_SHARED_GATE] = LAYER("shared_gate", shared_gate_proj, D_SHARED_FFN, D_HIDDEN),
	[COLIBRI_T_SHARED_UP] = LAYER("shared_up", shared_up_proj, D_SHARED_FFN, D_HIDDEN),
	[COLIBRI_T_SHARED_DOWN] = LAYER("shared_down", shared_down_proj, D_HIDDEN, D_SHARED_FFN),
	[COLIBRI_T_SHARED_EXPERT_GATE] = LAYER("shared_expert_gate", shared_expert_gate, D_ONE,
					       D_HIDDEN),
	/* dense MLP */
	[COLIBRI_T_MLP_GATE] = LAYER("mlp_gate", mlp_gate, D_DENSE_FFN, D_HIDDEN),
	[COLIBRI_T_MLP_UP] = LAYER("mlp_up", mlp_up, D_DENSE_FFN, D_HIDDEN),
	[COLIBRI_T_MLP_DOWN] = LAYER("mlp_down", mlp_down, D_HIDDEN, D_DENSE_FFN),
	/* GPT-OSS */
	[COLIBRI_T_ATTN_SINKS] = LAYER_VEC("attn_sinks", oss.sinks, D_ONE, D_HEADS),
	[COLIBRI_T_BO] = LAYER_VEC("bo", oss.bo, D_ONE, D_HIDDEN),
	[COLIBRI_T_ROUTER_BIAS] = LAYER_VEC("router_bias", oss.router_bias, D_ONE, D_EXPERTS),
	[COLIBRI_T_EXPERT_GATE_BIAS] = LAYER_VEC("expert_gate_bias", oss.gate_bias, D_EXPERTS,
						 D_EXPERT_FFN),
	[COLIBRI_T_EXPERT_UP_BIAS] = LAYER_VEC("expert_up_bias", oss.up_bias, D_EXPERTS,
					       D_EXPERT_FFN),
	[COLIBRI_T_EXPERT_DOWN_BIAS] = LAYER_VEC("expert_down_bias", oss.down_bias, D_EXPERTS,
						 D_HIDDEN),
	/* MLA, and DeepSeek-V3's selection bias */
	[COLIBRI_T_MLA_Q_A] = LAYER("q_a", q_a, D_Q_LORA, D_HIDDEN),
	[COLIBRI_T_MLA_Q_A_NORM] = LAYER_VEC("q_a_norm", q_a_norm, D_ONE, D_Q_LORA),
	[COLIBRI_T_MLA_Q_B] = LAYER("q_b", q_b, D_Q, D_Q_LORA),
	[COLIBRI_T_MLA_KV_A] = LAYER("kv_a", kv_a, D_KV_A, D_HIDDEN),
	[COLIBRI_T_MLA_KV_A_NORM] = LAYER_VEC("kv_a_norm", kv_a_norm, D_ONE, D_KV_LORA),
	[COLIBRI_T_MLA_K_B] = LAYER("k_b", k_b, D_HEADS_KV_LORA, D_QK_NOPE),
	[COLIBRI_T_MLA_V_B] = LAYER("v_b", v_b, D_HEADS_V, D_KV_LORA),
	[COLIBRI_T_ROUTER_SEL_BIAS] = LAYER_VEC("router_sel_bias", router_sel_bias, D_ONE,
						D_EXPERTS),
	/* Gated DeltaNet */
	[COLIBRI_T_DELTA_QKV] = LAYER("delta_qkv", delta.qkv, D_DELTA_CONV, D_HIDDEN),
	[COLIBRI_T_DELTA_Z] = LAYER("delta_z", delta.z, D_DELTA_VD, D_HIDDEN),
	[COLIBRI_T_DELTA_B] = LAYER("delta_b", delta.b, D_DELTA_VHEADS, D_HIDDEN),
	[COLIBRI_T_DELTA_A] = LAYER("delta_a", delta.a, D_DELTA_VHEADS, D_HIDDEN),
	[COLIBRI_T_DELTA_CONV] = LAYER_VEC("delta_conv", delta.conv, D_DELTA_CONV, D_DELTA_TAPS),
	[COLIBRI_T_DELTA_DECAY] = LAYER_VEC("delta_decay", delta.decay, D_ONE, D_DELTA_VHEADS),
	[COLIBRI_T_DELTA_DT_BIAS] = LAYER_VEC("delta_dt_bias", delta.dt_bias, D_ONE,
					      D_DELTA_VHEADS),
	[COLIBRI_T_DELTA_NORM] = LAYER_VEC("delta_norm", delta.norm, D_ONE, D_DELTA_VDIM),
	[COLIBRI_T_DELTA_OUT] = LAYER("delta_out", delta.out, D_HIDDEN, D_DELTA_VD),
};

/* The size of dimension @d in config @c. */
static cb_u32 dim(const struct cb_model_config *c, cb_u32 d)
{
	const struct cb_mla_config *m = &c->mla;
	cb_u32 q = c->n_heads * c->head_dim, kv = c->n_kv_heads * c->head_dim;
	int head = c->qk_norm == CB_QK_NORM_HEAD;

	switch (d) {
	case D_HIDDEN:
		return c->hidden;
	case D_VOCAB:
		return c->vocab_size;
	case D_Q:
		return q;
	case D_KV:
		return kv;
	case D_ATTN_OUT:
		return cb_is_mla(c) ? c->n_heads * m->v_head_dim : q;
	case D_Q_NORM:
		return head ? c->head_dim : q;
	case D_K_NORM:
		return head ? c->head_dim : kv;
	case D_HEADS:
		return c->n_heads;
	case D_EXPERTS:
		return c->n_experts;
	case D_EXPERT_FFN:
		return c->expert_ffn;
	case D_SHARED_FFN:
		return c->shared_ffn;
	case D_DENSE_FFN:
		return c->dense_ffn;
	case D_Q_LORA:
		return m->q_lora_rank;
	case D_KV_A:
		return m->kv_lora_rank + m->qk_rope_dim;
	case D_KV_LORA:
		return m->kv_lora_rank;
	case D_HEADS_KV_LORA:
		return c->n_heads * m->kv_lora_rank;
	case D_QK_NOPE:
		return m->qk_nope_dim;
	case D_HEADS_V:
		return c->n_heads * m->v_head_dim;
	case D_Q_PROJ:
		return c->delta.full_interval ? 2 * q : q;
	case D_DELTA_CONV:
		return 2 * c->delta.k_heads * c->delta.k_dim + c->delta.v_heads * c->delta.v_dim;
	case D_DELTA_VD:
		return c->delta.v_heads * c->delta.v_dim;
	case D_DELTA_VHEADS:
		return c->delta.v_heads;
	case D_DELTA_VDIM:
		return c->delta.v_dim;
	case D_DELTA_TAPS:
		return c->delta.conv_kernel;
	default:
		return 1;
	}
}

static const struct cb_role_entry *entry(cb_u32 role)
{
	return role < CB_ARRAY_SIZE(roles) && roles[role].scope ? &roles[role] : CB_NULL;
}

/* cb_format.h: a role's name, "?" for a number that is no role. */
const char *cb_format_role_name(cb_u32 role)
{
	return entry(role) ? entry(role)->name : "?";
}

cb_u32 cb_role_scope(cb_u32 role)
{
	return entry(role) ? entry(role)->scope : CB_ROLE_NONE;
}

int cb_role_shape(const struct cb_model_config *c, cb_u32 role, cb_u32 *rows, cb_u32 *cols,
		  cb_u32 *vector)
{
	const struct cb_role_entry *e = entry(role);

	*rows = 1;
	*cols = c->hidden;
	*vector = 0;
	if (!e)
		return 0;
	*rows = dim(c, e->rows);
	*cols = dim(c, e->cols);
	*vector = e->vector;
	return 1;
}

static struct cb_tensor *at(void *base, cb_u32 offset)
{
	return (struct cb_tensor *)((cb_u8 *)base + offset);
}

struct cb_tensor *cb_role_layer_tensor(struct cb_layer_weights *L, cb_u32 role)
{
	const struct cb_role_entry *e = entry(role);

	return e && e->scope == CB_ROLE_LAYER ? at(L, e->offset) : CB_NULL;
}

struct cb_tensor *cb_role_tensor(struct cb_model_weights *w, struct cb_layer_weights *layers,
				 cb_u32 n_layers, cb_u32 n_experts,
				 const struct cb_format_slot *s)
{
	const struct cb_role_entry *e = entry(s->role);
	struct cb_layer_weights *L;

	if (!e)
		return CB_NULL;
	if (e->scope == CB_ROLE_MODEL)
		return at(w, e->offset);
	if (s->layer >= n_layers)
		return CB_NULL;
	L = &layers[s->layer];
	if (e->scope == CB_ROLE_LAYER)
		return at(L, e->offset);
	if (!L->experts || s->expert >= n_experts)
		return CB_NULL;
	/* the experts are the caller's, written through this like the rest */
	return at((struct cb_expert_weights *)&L->experts[s->expert], e->offset);
}
