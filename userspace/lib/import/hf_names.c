// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * hf_names.c - the Hugging Face name of each tensor role, as the HF
 * modeling files name them: the usual names below (Llama's, Qwen's), an
 * architecture's own from its arch file (Mixtral's block_sparse_moe.*,
 * DeepSeek's shared_experts, GPT-OSS's router).  The HF loader and the
 * converter both ask here; nobody else spells an HF tensor name.
 */
#include <stdio.h>
#include <string.h>

#include "arch/cb_arch.h"
#include "format/cb_format.h"
#include "format/cb_role.h"
#include "import/hf_names.h"

/*
 * The usual name of each role: whole for the model's own, after
 * "model.layers.N." for a layer's; a routed expert's has one "%u", the
 * expert.  GPT-OSS's fused expert biases have none: hf_gpt_oss.c cuts
 * them from the fused tensors.
 */
static const char *const usual[] = {
	[COLIBRI_T_EMBED] = "model.embed_tokens.weight",
	[COLIBRI_T_FINAL_NORM] = "model.norm.weight",
	[COLIBRI_T_LM_HEAD] = "lm_head.weight",
	[COLIBRI_T_ATTN_NORM] = "input_layernorm.weight",
	[COLIBRI_T_FFN_NORM] = "post_attention_layernorm.weight",
	[COLIBRI_T_WQ] = "self_attn.q_proj.weight",
	[COLIBRI_T_WK] = "self_attn.k_proj.weight",
	[COLIBRI_T_WV] = "self_attn.v_proj.weight",
	[COLIBRI_T_WO] = "self_attn.o_proj.weight",
	[COLIBRI_T_BQ] = "self_attn.q_proj.bias",
	[COLIBRI_T_BK] = "self_attn.k_proj.bias",
	[COLIBRI_T_BV] = "self_attn.v_proj.bias",
	[COLIBRI_T_Q_NORM] = "self_attn.q_norm.weight",
	[COLIBRI_T_K_NORM] = "self_attn.k_norm.weight",
	[COLIBRI_T_ROUTER] = "mlp.gate.weight",
	[COLIBRI_T_EXPERT_GATE] = "mlp.experts.%u.gate_proj.weight",
	[COLIBRI_T_EXPERT_UP] = "mlp.experts.%u.up_proj.weight",
	[COLIBRI_T_EXPERT_DOWN] = "mlp.experts.%u.down_proj.weight",
	[COLIBRI_T_SHARED_GATE] = "mlp.shared_expert.gate_proj.weight",
	[COLIBRI_T_SHARED_UP] = "mlp.shared_expert.up_proj.weight",
	[COLIBRI_T_SHARED_DOWN] = "mlp.shared_expert.down_proj.weight",
	[COLIBRI_T_SHARED_EXPERT_GATE] = "mlp.shared_expert_gate.weight",
	[COLIBRI_T_MLP_GATE] = "mlp.gate_proj.weight",
	[COLIBRI_T_MLP_UP] = "mlp.up_proj.weight",
	[COLIBRI_T_MLP_DOWN] = "mlp.down_proj.weight",
	[COLIBRI_T_ATTN_SINKS] = "self_attn.sinks",
	[COLIBRI_T_BO] = "self_attn.o_proj.bias",
	[COLIBRI_T_ROUTER_BIAS] = "mlp.router.bias",
	[COLIBRI_T_MLA_Q_A] = "self_attn.q_a_proj.weight",
	[COLIBRI_T_MLA_Q_A_NORM] = "self_attn.q_a_layernorm.weight",
	[COLIBRI_T_MLA_Q_B] = "self_attn.q_b_proj.weight",
	[COLIBRI_T_MLA_KV_A] = "self_attn.kv_a_proj_with_mqa.weight",
	[COLIBRI_T_MLA_KV_A_NORM] = "self_attn.kv_a_layernorm.weight",
	/* k_b and v_b are both cut from kv_b_proj (hf_deepseek.c) */
	[COLIBRI_T_MLA_K_B] = "self_attn.kv_b_proj.weight",
	[COLIBRI_T_MLA_V_B] = "self_attn.kv_b_proj.weight",
	[COLIBRI_T_ROUTER_SEL_BIAS] = "mlp.gate.e_score_correction_bias",
	/* Gated DeltaNet (Qwen3.5's; Qwen3-Next fuses qkv/z and b/a) */
	[COLIBRI_T_DELTA_QKV] = "linear_attn.in_proj_qkv.weight",
	[COLIBRI_T_DELTA_Z] = "linear_attn.in_proj_z.weight",
	[COLIBRI_T_DELTA_B] = "linear_attn.in_proj_b.weight",
	[COLIBRI_T_DELTA_A] = "linear_attn.in_proj_a.weight",
	[COLIBRI_T_DELTA_CONV] = "linear_attn.conv1d.weight",
	[COLIBRI_T_DELTA_DECAY] = "linear_attn.A_log",
	[COLIBRI_T_DELTA_DT_BIAS] = "linear_attn.dt_bias",
	[COLIBRI_T_DELTA_NORM] = "linear_attn.norm.weight",
	[COLIBRI_T_DELTA_OUT] = "linear_attn.out_proj.weight",
};

int hf_tensor_name(const struct cb_model_config *c, uint32_t role, uint32_t layer,
		   uint32_t expert, char *buf, size_t len)
{
	const struct cb_arch_desc *a = cb_arch_of(c->arch);
	const char *s = role < sizeof(usual) / sizeof(usual[0]) ? usual[role] : NULL;
	const char *e, *pre = a && a->hf_prefix ? a->hf_prefix : "model.";
	int n;

	if (a)
		s = cb_arch_name_in(a->hf_names, role, s);
	if (!s)
		return -1;
	e = strstr(s, "%u");
	switch (cb_role_scope(role)) {
	case CB_ROLE_MODEL:
		/* the text model's own (not lm_head) under the arch's prefix */
		if (!strncmp(s, "model.", 6))
			n = snprintf(buf, len, "%s%s", pre, s + 6);
		else
			n = snprintf(buf, len, "%s", s);
		break;
	case CB_ROLE_EXPERT:
		if (!e)
			return -1;
		/* the pattern is data: its one "%u" is put in by hand */
		n = snprintf(buf, len, "%slayers.%u.%.*s%u%s", pre, layer, (int)(e - s), s, expert,
			     e + 2);
		break;
	default:
		n = snprintf(buf, len, "%slayers.%u.%s", pre, layer, s);
		break;
	}
	return n < 0 || (size_t)n >= len ? -1 : 0;
}
