// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * arch_qwen2_moe.c - Qwen2-MoE: q/k/v biases, routed experts plus a shared expert behind a
 * sigmoid gate, sparse steps and dense (mlp_only) layers from the config.
 */
#include "arch/cb_arch.h"
#include "core/cb_engine.h"
#include "format/cb_format.h"

static const char *const hf_classes[] = { "Qwen2MoeForCausalLM", CB_NULL };

/* config.json */
static const struct cb_arch_hf_key hf_config[] = {
	{ "moe_intermediate_size", CB_HF_REQ, CB_HF_FIELD(expert_ffn), 0 },
	{ "num_experts", CB_HF_REQ, CB_HF_FIELD(n_experts), 0 },
	{ "num_experts_per_tok", CB_HF_REQ, CB_HF_FIELD(top_k), 0 },
	{ "intermediate_size", CB_HF_OPT, CB_HF_FIELD(dense_ffn), 0 },
	{ "decoder_sparse_step", CB_HF_OPT, CB_HF_FIELD(decoder_sparse_step), 1 },
	{ "norm_topk_prob", CB_HF_BOOL, CB_HF_FIELD(norm_topk_prob), 0 },
	{ "shared_expert_intermediate_size", CB_HF_OPT, CB_HF_FIELD(shared_ffn), 0 },
	/* Qwen2 attention always has q/k/v biases */
	{ "qkv_bias", CB_HF_BOOL, CB_HF_FIELD(qkv_bias), 1 },
	{ "mlp_only_layers", CB_HF_LAYERS, CB_HF_FIELD(mlp_only_layers), 0 },
	{ CB_NULL, CB_HF_END, 0, 0 },
};

const struct cb_arch_desc cb_arch_qwen2_moe = {
	.id = COLIBRI_ARCH_QWEN2_MOE,
	.name = "qwen2_moe",
	.hf_classes = hf_classes,
	.hf_config = hf_config,
	.hf_model_type = "qwen2_moe",
	.gguf_arch = "qwen2moe",
	.gguf_rope = CB_ROPE_NEOX,
	.gguf_norm_topk = 0,
	.gguf_expert_ffn_key = "expert_feed_forward_length",
	.hf_add_bos = 0,
	.qk_norm = CB_QK_NORM_NONE,
	.attn = CB_ATTN_GQA,
	.ffn = CB_FFN_MOE_SHARED_GATED,
	.router = CB_ROUTER_SOFTMAX_TOPK,
	.expert = CB_EXPERT_SWIGLU,
	.synth = {
		.rope_theta_bits = CB_F32_1E6,
		.rms_eps_bits = CB_F32_1EM6,
		.norm_topk_prob = 0,
		.qkv_bias = 1,
	},
};
