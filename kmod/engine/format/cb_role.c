// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_role.c - the one table of tensor roles: name, scope and field of
 * each uapi COLIBRI_T_* (cb_role.h).
 */
#include "format/cb_role.h"

#define MODEL(n, f)	{ n, CB_ROLE_MODEL, __builtin_offsetof(struct cb_model_weights, f) }
#define LAYER(n, f)	{ n, CB_ROLE_LAYER, __builtin_offsetof(struct cb_layer_weights, f) }
#define EXPERT(n, f)	{ n, CB_ROLE_EXPERT, __builtin_offsetof(struct cb_expert_weights, f) }

static const struct cb_role_entry {
	const char *name;	/* the file's and the tools' name of it */
	cb_u16 scope;		/* enum cb_role_scope */
	cb_u16 offset;		/* of its struct cb_tensor in the scope's struct */
} roles[] = {
	[COLIBRI_T_EMBED] = MODEL("embed", embed),
	[COLIBRI_T_FINAL_NORM] = MODEL("final_norm", final_norm),
	[COLIBRI_T_LM_HEAD] = MODEL("lm_head", lm_head),
	/* attention */
	[COLIBRI_T_ATTN_NORM] = LAYER("attn_norm", attn_norm),
	[COLIBRI_T_WQ] = LAYER("wq", wq),
	[COLIBRI_T_WK] = LAYER("wk", wk),
	[COLIBRI_T_WV] = LAYER("wv", wv),
	[COLIBRI_T_WO] = LAYER("wo", wo),
	[COLIBRI_T_BQ] = LAYER("bq", bq),
	[COLIBRI_T_BK] = LAYER("bk", bk),
	[COLIBRI_T_BV] = LAYER("bv", bv),
	[COLIBRI_T_Q_NORM] = LAYER("q_norm", q_norm),
	[COLIBRI_T_K_NORM] = LAYER("k_norm", k_norm),
	[COLIBRI_T_FFN_NORM] = LAYER("ffn_norm", ffn_norm),
	/* routed experts, shared experts */
	[COLIBRI_T_ROUTER] = LAYER("router", router),
	[COLIBRI_T_EXPERT_GATE] = EXPERT("expert_gate", gate),
	[COLIBRI_T_EXPERT_UP] = EXPERT("expert_up", up),
	[COLIBRI_T_EXPERT_DOWN] = EXPERT("expert_down", down),
	[COLIBRI_T_SHARED_GATE] = LAYER("shared_gate", shared_gate_proj),
	[COLIBRI_T_SHARED_UP] = LAYER("shared_up", shared_up_proj),
	[COLIBRI_T_SHARED_DOWN] = LAYER("shared_down", shared_down_proj),
	[COLIBRI_T_SHARED_EXPERT_GATE] = LAYER("shared_expert_gate", shared_expert_gate),
	/* dense MLP */
	[COLIBRI_T_MLP_GATE] = LAYER("mlp_gate", mlp_gate),
	[COLIBRI_T_MLP_UP] = LAYER("mlp_up", mlp_up),
	[COLIBRI_T_MLP_DOWN] = LAYER("mlp_down", mlp_down),
	/* GPT-OSS */
	[COLIBRI_T_ATTN_SINKS] = LAYER("attn_sinks", oss.sinks),
	[COLIBRI_T_BO] = LAYER("bo", oss.bo),
	[COLIBRI_T_ROUTER_BIAS] = LAYER("router_bias", oss.router_bias),
	[COLIBRI_T_EXPERT_GATE_BIAS] = LAYER("expert_gate_bias", oss.gate_bias),
	[COLIBRI_T_EXPERT_UP_BIAS] = LAYER("expert_up_bias", oss.up_bias),
	[COLIBRI_T_EXPERT_DOWN_BIAS] = LAYER("expert_down_bias", oss.down_bias),
	/* MLA, and DeepSeek-V3's selection bias */
	[COLIBRI_T_MLA_Q_A] = LAYER("q_a", q_a),
	[COLIBRI_T_MLA_Q_A_NORM] = LAYER("q_a_norm", q_a_norm),
	[COLIBRI_T_MLA_Q_B] = LAYER("q_b", q_b),
	[COLIBRI_T_MLA_KV_A] = LAYER("kv_a", kv_a),
	[COLIBRI_T_MLA_KV_A_NORM] = LAYER("kv_a_norm", kv_a_norm),
	[COLIBRI_T_MLA_K_B] = LAYER("k_b", k_b),
	[COLIBRI_T_MLA_V_B] = LAYER("v_b", v_b),
	[COLIBRI_T_ROUTER_SEL_BIAS] = LAYER("router_sel_bias", router_sel_bias),
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
