// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * arch_deepseek_v3.c - DeepSeek-V3: V2's layers with sigmoid routing, a selection bias and a
 * routed scale.  Its GGUF files say "deepseek2" (sigmoid gating makes it
 * V3: gguf_deepseek.c).
 */
#include "arch/cb_arch.h"
#include "core/cb_engine.h"
#include "format/cb_format.h"

static const char *const hf_classes[] = { "DeepseekV3ForCausalLM", CB_NULL };

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

const struct cb_arch_desc cb_arch_deepseek_v3 = {
	.id = COLIBRI_ARCH_DEEPSEEK_V3,
	.name = "deepseek_v3",
	.hf_classes = hf_classes,
	.hf_names = hf_names,
	.hf_config = hf_config,
	.hf_model_type = "deepseek_v3",
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
		.score_func = CB_SCORE_SIGMOID,
		.hf_topk_method = "noaux_tc",
		.scale_always = 1,
	},
	.synth = {
		.rope_theta_bits = CB_F32_1E4,
		.rms_eps_bits = CB_F32_1EM6,
		.norm_topk_prob = 1,
		.qkv_bias = 0,
		.dense_layers = 3,
		.dense_ffn_mult = 9,
		.shared_experts = 1,
		.topk_group = 4,
		.routed_scale_bits = CB_F32_2_5,
	},
};
