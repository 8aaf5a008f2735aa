// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * arch_mixtral.c - Mixtral: Llama's attention, routed SwiGLU experts in every layer,
 * softmax over all of them and the top_k renormalised.  Its GGUF files say
 * "llama" (with experts).
 */
#include "arch/cb_arch.h"
#include "core/cb_engine.h"
#include "format/cb_format.h"

static const char *const hf_classes[] = { "MixtralForCausalLM", CB_NULL };

/* config.json */
static const struct cb_arch_hf_key hf_config[] = {
	{ "intermediate_size", CB_HF_REQ, CB_HF_FIELD(expert_ffn), 0 },
	{ "num_local_experts", CB_HF_REQ, CB_HF_FIELD(n_experts), 0 },
	{ "num_experts_per_tok", CB_HF_REQ, CB_HF_FIELD(top_k), 0 },
	/* Mixtral always renormalises */
	{ CB_NULL, CB_HF_SET, CB_HF_FIELD(norm_topk_prob), 1 },
	{ CB_NULL, CB_HF_END, 0, 0 },
};

/* its HF names: the MoE block is block_sparse_moe, the experts w1, w3, w2 */
static const struct cb_arch_name hf_names[] = {
	{ COLIBRI_T_ROUTER, "block_sparse_moe.gate.weight" },
	{ COLIBRI_T_EXPERT_GATE, "block_sparse_moe.experts.%u.w1.weight" },
	{ COLIBRI_T_EXPERT_UP, "block_sparse_moe.experts.%u.w3.weight" },
	{ COLIBRI_T_EXPERT_DOWN, "block_sparse_moe.experts.%u.w2.weight" },
	{ 0, CB_NULL },
};

const struct cb_arch_desc cb_arch_mixtral = {
	.id = COLIBRI_ARCH_MIXTRAL,
	.name = "mixtral",
	.hf_classes = hf_classes,
	.hf_names = hf_names,
	.hf_config = hf_config,
	.hf_model_type = "mixtral",
	.gguf_arch = "llama",
	.gguf_rope = CB_ROPE_INTERLEAVED,
	.gguf_norm_topk = 1,
	.gguf_expert_ffn_key = "feed_forward_length",
	.hf_add_bos = 1,
	.qk_norm = CB_QK_NORM_NONE,
	.attn = CB_ATTN_GQA,
	.ffn = CB_FFN_MOE,
	.router = CB_ROUTER_SOFTMAX_TOPK,
	.expert = CB_EXPERT_SWIGLU,
	.synth = {
		.rope_theta_bits = CB_F32_1E4,
		.rms_eps_bits = CB_F32_1EM6,
		.norm_topk_prob = 1,
		.qkv_bias = 0,
	},
};
