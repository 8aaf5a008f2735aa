// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * arch_olmoe.c - OLMoE: RMSNorm over the whole q and k projections, clip_qkv, routed
 * experts.
 */
#include "arch/cb_arch.h"
#include "core/cb_engine.h"
#include "format/cb_format.h"

static const char *const hf_classes[] = { "OlmoeForCausalLM", CB_NULL };

/* config.json */
static const struct cb_arch_hf_key hf_config[] = {
	{ "intermediate_size", CB_HF_REQ, CB_HF_FIELD(expert_ffn), 0 },
	{ "num_experts", CB_HF_REQ, CB_HF_FIELD(n_experts), 0 },
	{ "num_experts_per_tok", CB_HF_REQ, CB_HF_FIELD(top_k), 0 },
	{ "norm_topk_prob", CB_HF_BOOL, CB_HF_FIELD(norm_topk_prob), 0 },
	{ "clip_qkv", CB_HF_F32, CB_HF_FIELD(clip_qkv_bits), 0 },
	{ CB_NULL, CB_HF_END, 0, 0 },
};

const struct cb_arch_desc cb_arch_olmoe = {
	.id = COLIBRI_ARCH_OLMOE,
	.name = "olmoe",
	.hf_classes = hf_classes,
	.hf_config = hf_config,
	.hf_model_type = "olmoe",
	.gguf_arch = "olmoe",
	.gguf_rope = CB_ROPE_NEOX,
	.gguf_norm_topk = 0,
	.gguf_expert_ffn_key = "feed_forward_length",
	.hf_add_bos = 0,
	.qk_norm = CB_QK_NORM_FULL,
	.attn = CB_ATTN_GQA,
	.ffn = CB_FFN_MOE,
	.router = CB_ROUTER_SOFTMAX_TOPK,
	.expert = CB_EXPERT_SWIGLU,
	.synth = {
		.rope_theta_bits = CB_F32_1E4,
		.rms_eps_bits = CB_F32_1EM6,
		.norm_topk_prob = 0,
		.qkv_bias = 0,
	},
};
