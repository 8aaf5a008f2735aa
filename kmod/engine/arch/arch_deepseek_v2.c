// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * arch_deepseek_v2.c - DeepSeek-V2: multi-head latent attention, softmax routing with expert
 * groups, shared experts, dense leading layers (struct cb_mla_config).
 */
#include "arch/cb_arch.h"
#include "core/cb_engine.h"
#include "format/cb_format.h"

static const char *const hf_classes[] = { "DeepseekV2ForCausalLM", CB_NULL };

/* Everything past the shared keys is MLA's and its routing's: hf_deepseek.c. */
static const struct cb_arch_hf_key hf_config[] = {
	{ CB_NULL, CB_HF_END, 0, 0 },
};

/* its HF names: n_shared_experts fused in one MLP, "shared_experts" */
static const struct cb_arch_name hf_names[] = {
	{ COLIBRI_T_SHARED_GATE, "mlp.shared_experts.gate_proj.weight" },
	{ COLIBRI_T_SHARED_UP, "mlp.shared_experts.up_proj.weight" },
	{ COLIBRI_T_SHARED_DOWN, "mlp.shared_experts.down_proj.weight" },
	{ 0, CB_NULL },
};

const struct cb_arch_desc cb_arch_deepseek_v2 = {
	.id = COLIBRI_ARCH_DEEPSEEK_V2,
	.name = "deepseek_v2",
	.hf_classes = hf_classes,
	.hf_names = hf_names,
	.hf_config = hf_config,
	.hf_model_type = "deepseek_v2",
	.gguf_arch = "deepseek2",
	.gguf_rope = CB_ROPE_INTERLEAVED,
	.gguf_norm_topk = 0,
	.gguf_expert_ffn_key = "expert_feed_forward_length",
	.hf_add_bos = 0,
	.qk_norm = CB_QK_NORM_NONE,
	.attn = CB_ATTN_MLA,
	.ffn = CB_FFN_MOE_SHARED,
	.router = CB_ROUTER_SCORED,
	.expert = CB_EXPERT_SWIGLU,
	.scored = {
		.score_func = CB_SCORE_SOFTMAX,
		.hf_topk_method = "greedy",
		.scale_always = 0,
	},
	.synth = {
		.rope_theta_bits = CB_F32_1E4,
		.rms_eps_bits = CB_F32_1EM6,
		.norm_topk_prob = 0,
		.qkv_bias = 0,
		.dense_layers = 1,
		.dense_ffn_mult = 8,
		.shared_experts = 2,
		.topk_group = 3,
		.routed_scale_bits = CB_F32_16,
	},
};
