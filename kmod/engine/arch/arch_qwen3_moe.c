// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * arch_qwen3_moe.c - Qwen3-MoE: RMSNorm of q and k per head before RoPE, routed experts.
 */
#include "arch/cb_arch.h"
#include "core/cb_engine.h"
#include "format/cb_format.h"

static const char *const hf_classes[] = { "Qwen3MoeForCausalLM", CB_NULL };

/* config.json */
static const struct cb_arch_hf_key hf_config[] = {
	{ "moe_intermediate_size", CB_HF_REQ, CB_HF_FIELD(expert_ffn), 0 },
	{ "num_experts", CB_HF_REQ, CB_HF_FIELD(n_experts), 0 },
	{ "num_experts_per_tok", CB_HF_REQ, CB_HF_FIELD(top_k), 0 },
	{ "intermediate_size", CB_HF_OPT, CB_HF_FIELD(dense_ffn), 0 },
	{ "decoder_sparse_step", CB_HF_OPT, CB_HF_FIELD(decoder_sparse_step), 1 },
	{ "norm_topk_prob", CB_HF_BOOL, CB_HF_FIELD(norm_topk_prob), 0 },
	{ "mlp_only_layers", CB_HF_LAYERS, CB_HF_FIELD(mlp_only_layers), 0 },
	{ CB_NULL, CB_HF_END, 0, 0 },
};

const struct cb_arch_desc cb_arch_qwen3_moe = {
	.id = COLIBRI_ARCH_QWEN3_MOE,
	.name = "qwen3_moe",
	.hf_classes = hf_classes,
	.hf_config = hf_config,
	.hf_model_type = "qwen3_moe",
	.gguf_arch = "qwen3moe",
	.gguf_rope = CB_ROPE_NEOX,
	.gguf_norm_topk = 1,
	.gguf_expert_ffn_key = "expert_feed_forward_length",
	.hf_add_bos = 0,
	.qk_norm = CB_QK_NORM_HEAD,
	.attn = CB_ATTN_GQA,
	.ffn = CB_FFN_MOE,
	.router = CB_ROUTER_SOFTMAX_TOPK,
	.expert = CB_EXPERT_SWIGLU,
	.synth = {
		.rope_theta_bits = CB_F32_1E6,
		.rms_eps_bits = CB_F32_1EM6,
		.norm_topk_prob = 1,
		.qkv_bias = 0,
	},
};
