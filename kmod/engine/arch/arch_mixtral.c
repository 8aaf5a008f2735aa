// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * arch_mixtral.c - Mixtral: Llama's attention, routed SwiGLU experts in every layer,
 * softmax over all of them and the top_k renormalised.  Its GGUF files say
 * "llama" (with experts).
 */
#include "cb_arch.h"
#include "cb_engine.h"

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

const struct cb_arch_desc cb_arch_mixtral = {
	.id = CB_ARCH_MIXTRAL,
	.name = "mixtral",
	.hf_classes = hf_classes,
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
};
