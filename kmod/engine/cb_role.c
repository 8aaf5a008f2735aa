// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_role.c - the one table of tensor roles: name, scope and field of
 * each uapi COLIBRI_T_* (cb_role.h).
 */
#include "cb_role.h"

#define MODEL(r, n, f)	[r] = { n, CB_ROLE_MODEL, __builtin_offsetof(struct cb_model_weights, f) }
#define LAYER(r, n, f)	[r] = { n, CB_ROLE_LAYER, __builtin_offsetof(struct cb_layer_weights, f) }
#define EXPERT(r, n, f)	[r] = { n, CB_ROLE_EXPERT, __builtin_offsetof(struct cb_expert_weights, f) }

static const struct cb_role_entry {
	const char *name;	/* the file's and the tools' name of it */
	cb_u16 scope;		/* enum cb_role_scope */
	cb_u16 offset;		/* of its struct cb_tensor in the scope's struct */
} roles[] = {
	MODEL(COLIBRI_T_EMBED, "embed", embed),
	MODEL(COLIBRI_T_FINAL_NORM, "final_norm", final_norm),
	MODEL(COLIBRI_T_LM_HEAD, "lm_head", lm_head),
	/* attention */
	LAYER(COLIBRI_T_ATTN_NORM, "attn_norm", attn_norm),
	LAYER(COLIBRI_T_WQ, "wq", wq),
	LAYER(COLIBRI_T_WK, "wk", wk),
	LAYER(COLIBRI_T_WV, "wv", wv),
	LAYER(COLIBRI_T_WO, "wo", wo),
	LAYER(COLIBRI_T_BQ, "bq", bq),
	LAYER(COLIBRI_T_BK, "bk", bk),
	LAYER(COLIBRI_T_BV, "bv", bv),
	LAYER(COLIBRI_T_Q_NORM, "q_norm", q_norm),
	LAYER(COLIBRI_T_K_NORM, "k_norm", k_norm),
	LAYER(COLIBRI_T_FFN_NORM, "ffn_norm", ffn_norm),
	/* routed experts, shared experts */
	LAYER(COLIBRI_T_ROUTER, "router", router),
	EXPERT(COLIBRI_T_EXPERT_GATE, "expert_gate", gate),
	EXPERT(COLIBRI_T_EXPERT_UP, "expert_up", up),
	EXPERT(COLIBRI_T_EXPERT_DOWN, "expert_down", down),
	LAYER(COLIBRI_T_SHARED_GATE, "shared_gate", shared_gate_proj),
	LAYER(COLIBRI_T_SHARED_UP, "shared_up", shared_up_proj),
	LAYER(COLIBRI_T_SHARED_DOWN, "shared_down", shared_down_proj),
	LAYER(COLIBRI_T_SHARED_EXPERT_GATE, "shared_expert_gate", shared_expert_gate),
	/* dense MLP */
	LAYER(COLIBRI_T_MLP_GATE, "mlp_gate", mlp_gate),
	LAYER(COLIBRI_T_MLP_UP, "mlp_up", mlp_up),
	LAYER(COLIBRI_T_MLP_DOWN, "mlp_down", mlp_down),
	/* GPT-OSS */
	LAYER(COLIBRI_T_ATTN_SINKS, "attn_sinks", oss.sinks),
	LAYER(COLIBRI_T_BO, "bo", oss.bo),
	LAYER(COLIBRI_T_ROUTER_BIAS, "router_bias", oss.router_bias),
	LAYER(COLIBRI_T_EXPERT_GATE_BIAS, "expert_gate_bias", oss.gate_bias),
	LAYER(COLIBRI_T_EXPERT_UP_BIAS, "expert_up_bias", oss.up_bias),
	LAYER(COLIBRI_T_EXPERT_DOWN_BIAS, "expert_down_bias", oss.down_bias),
	/* MLA, and DeepSeek-V3's selection bias */
	LAYER(COLIBRI_T_MLA_Q_A, "q_a", q_a),
	LAYER(COLIBRI_T_MLA_Q_A_NORM, "q_a_norm", q_a_norm),
	LAYER(COLIBRI_T_MLA_Q_B, "q_b", q_b),
	LAYER(COLIBRI_T_MLA_KV_A, "kv_a", kv_a),
	LAYER(COLIBRI_T_MLA_KV_A_NORM, "kv_a_norm", kv_a_norm),
	LAYER(COLIBRI_T_MLA_K_B, "k_b", k_b),
	LAYER(COLIBRI_T_MLA_V_B, "v_b", v_b),
	LAYER(COLIBRI_T_ROUTER_SEL_BIAS, "router_sel_bias", router_sel_bias),
};

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
