// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * arch_glm4_moe.c - GLM-4.5/4.6 (and -Air): grouped-query attention with
 * q/k/v biases, optional per-head q/k RMSNorm and partial RoPE (the leading
 * half of each head: config rope_dim), then DeepSeek-V3's MoE: sigmoid
 * scores with a selection bias (noaux_tc, optional groups), renormalised and
 * scaled weights, shared experts, dense first layers.  The routing keys are
 * DeepSeek's (hf_scored.c); the MTP layer after the last is not read.
 */
#include "arch/cb_arch.h"
#include "core/cb_engine.h"
#include "format/cb_format.h"

static const char *const hf_classes[] = { "Glm4MoeForCausalLM", CB_NULL };

/* config.json, besides the routing block (hf_scored.c) and partial_rotary_factor */
static const struct cb_arch_hf_key hf_config[] = {
	/* per-head q/k RMSNorm (GLM-4.5; -Air has none) */
	{ "use_qk_norm", CB_HF_BOOL, CB_HF_FIELD(qk_norm), CB_QK_NORM_NONE },
	{ CB_NULL, CB_HF_END, 0, 0 },
};

/* its HF names: n_shared_experts fused in one MLP, "shared_experts" */
static const struct cb_arch_name hf_names[] = {
	{ COLIBRI_T_SHARED_GATE, "mlp.shared_experts.gate_proj.weight" },
	{ COLIBRI_T_SHARED_UP, "mlp.shared_experts.up_proj.weight" },
	{ COLIBRI_T_SHARED_DOWN, "mlp.shared_experts.down_proj.weight" },
	{ 0, CB_NULL },
};

/* llama.cpp's glm4moe: the FFN's input norm is "post_attention_norm" */
static const struct cb_arch_name gguf_names[] = {
	{ COLIBRI_T_FFN_NORM, "post_attention_norm.weight" },
	{ 0, CB_NULL },
};

const struct cb_arch_desc cb_arch_glm4_moe = {
	.id = COLIBRI_ARCH_GLM4_MOE,
	.name = "glm4_moe",
	.hf_classes = hf_classes,
	.hf_names = hf_names,
	.hf_config = hf_config,
	.hf_model_type = "glm4_moe",
	.gguf_arch = "glm4moe",
	.gguf_rope = CB_ROPE_NEOX,
	.gguf_norm_topk = 1,
	.gguf_expert_ffn_key = "expert_feed_forward_length",
	.gguf_names = gguf_names,
	.hf_add_bos = 0,
	.qk_norm = CB_QK_NORM_NONE,
	.attn = CB_ATTN_GQA,
	.ffn = CB_FFN_MOE_SHARED,
	.router = CB_ROUTER_SCORED,
	.expert = CB_EXPERT_SWIGLU,
	.scored = {
		.score_func = CB_SCORE_SIGMOID,
		.hf_topk_method = "noaux_tc",
		.scale_always = 1,
		.norm_any_k = 1,
	},
	.synth = {
		.rope_theta_bits = CB_F32_1E6,
		.rms_eps_bits = CB_F32_1EM5,
		.norm_topk_prob = 1,
		.qkv_bias = 1,
		.dense_layers = 1,
		.dense_ffn_mult = 8,
		.shared_experts = 1,
		.topk_group = 1,
		.routed_scale_bits = CB_F32_2_5,
		.rope_part = 2,
	},
};
