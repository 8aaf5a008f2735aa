// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * gguf_names.c - the GGUF name of each tensor role, as llama.cpp writes
 * them (llama-arch.cpp): the usual names below, an architecture's own
 * from its arch file (GPT-OSS's post_attention_norm).  The GGUF loader
 * asks here for every role it reads by name; DeepSeek's MLA block
 * (gguf_deepseek.c) also reads the tensors llama.cpp splits or fuses
 * there, which are not roles.
 */
#include <stdio.h>

#include "format/cb_format.h"
#include "format/cb_role.h"
#include "import/gguf_names.h"

/* The usual name of each role: whole for the model's own, after "blk.N." for a layer's. */
static const char *const usual[] = {
	[COLIBRI_T_EMBED] = "token_embd.weight",
	[COLIBRI_T_FINAL_NORM] = "output_norm.weight",
	[COLIBRI_T_LM_HEAD] = "output.weight",
	[COLIBRI_T_ATTN_NORM] = "attn_norm.weight",
	[COLIBRI_T_FFN_NORM] = "ffn_norm.weight",
	[COLIBRI_T_WQ] = "attn_q.weight",
	[COLIBRI_T_WK] = "attn_k.weight",
	[COLIBRI_T_WV] = "attn_v.weight",
	[COLIBRI_T_WO] = "attn_output.weight",
	[COLIBRI_T_BQ] = "attn_q.bias",
	[COLIBRI_T_BK] = "attn_k.bias",
	[COLIBRI_T_BV] = "attn_v.bias",
	[COLIBRI_T_Q_NORM] = "attn_q_norm.weight",
	[COLIBRI_T_K_NORM] = "attn_k_norm.weight",
	[COLIBRI_T_ROUTER] = "ffn_gate_inp.weight",
	[COLIBRI_T_EXPERT_GATE] = "ffn_gate_exps.weight",
	[COLIBRI_T_EXPERT_UP] = "ffn_up_exps.weight",
	[COLIBRI_T_EXPERT_DOWN] = "ffn_down_exps.weight",
	[COLIBRI_T_SHARED_GATE] = "ffn_gate_shexp.weight",
	[COLIBRI_T_SHARED_UP] = "ffn_up_shexp.weight",
	[COLIBRI_T_SHARED_DOWN] = "ffn_down_shexp.weight",
	[COLIBRI_T_SHARED_EXPERT_GATE] = "ffn_gate_inp_shexp.weight",
	[COLIBRI_T_MLP_GATE] = "ffn_gate.weight",
	[COLIBRI_T_MLP_UP] = "ffn_up.weight",
	[COLIBRI_T_MLP_DOWN] = "ffn_down.weight",
	[COLIBRI_T_ATTN_SINKS] = "attn_sinks.weight",
	[COLIBRI_T_BO] = "attn_output.bias",
	[COLIBRI_T_ROUTER_BIAS] = "ffn_gate_inp.bias",
	[COLIBRI_T_EXPERT_GATE_BIAS] = "ffn_gate_exps.bias",
	[COLIBRI_T_EXPERT_UP_BIAS] = "ffn_up_exps.bias",
	[COLIBRI_T_EXPERT_DOWN_BIAS] = "ffn_down_exps.bias",
	[COLIBRI_T_MLA_Q_A] = "attn_q_a.weight",
	[COLIBRI_T_MLA_Q_A_NORM] = "attn_q_a_norm.weight",
	[COLIBRI_T_MLA_Q_B] = "attn_q_b.weight",
	[COLIBRI_T_MLA_KV_A] = "attn_kv_a_mqa.weight",
	[COLIBRI_T_MLA_KV_A_NORM] = "attn_kv_a_norm.weight",
	[COLIBRI_T_MLA_K_B] = "attn_k_b.weight",
	[COLIBRI_T_MLA_V_B] = "attn_v_b.weight",
	[COLIBRI_T_ROUTER_SEL_BIAS] = "exp_probs_b.bias",
	/* Gated DeltaNet (qwen35moe's; qwen3next fuses b and a in ssm_ba) */
	[COLIBRI_T_DELTA_QKV] = "attn_qkv.weight",
	[COLIBRI_T_DELTA_Z] = "attn_gate.weight",
	[COLIBRI_T_DELTA_B] = "ssm_beta.weight",
	[COLIBRI_T_DELTA_A] = "ssm_alpha.weight",
	[COLIBRI_T_DELTA_CONV] = "ssm_conv1d.weight",
	[COLIBRI_T_DELTA_DECAY] = "ssm_a",
	[COLIBRI_T_DELTA_DT_BIAS] = "ssm_dt.bias",
	[COLIBRI_T_DELTA_NORM] = "ssm_norm.weight",
	[COLIBRI_T_DELTA_OUT] = "ssm_out.weight",
};

int gguf_tensor_name(const struct cb_arch_desc *a, uint32_t role, uint32_t layer, char *buf,
		     size_t len)
{
	const char *s = role < sizeof(usual) / sizeof(usual[0]) ? usual[role] : NULL;
	int n;

	if (a)
		s = cb_arch_name_in(a->gguf_names, role, s);
	if (!s)
		return -1;
	if (cb_role_scope(role) == CB_ROLE_MODEL)
		n = snprintf(buf, len, "%s", s);
	else
		n = snprintf(buf, len, "blk.%u.%s", layer, s);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}
