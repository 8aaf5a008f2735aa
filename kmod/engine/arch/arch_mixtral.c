// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * arch_mixtral.c - Mixtral: Llama's attention, routed SwiGLU experts in every layer,
 * softmax over all of them and the top_k renormalised.  Its GGUF files say
 * "llama" (with experts).
 */
#include "cb_arch.h"
#include "cb_engine.h"

static const char *const hf_classes[] = { "MixtralForCausalLM", CB_NULL };

const struct cb_arch_desc cb_arch_mixtral = {
	.id = CB_ARCH_MIXTRAL,
	.name = "mixtral",
	.hf_classes = hf_classes,
	.hf_model_type = "mixtral",
	.gguf_arch = "llama",
	.gguf_rope = CB_ROPE_INTERLEAVED,
	.gguf_norm_topk = 1,
	.hf_add_bos = 1,
	.qk_norm = CB_QK_NORM_NONE,
	.attn = CB_ATTN_GQA,
	.ffn = CB_FFN_MOE,
	.router = CB_ROUTER_SOFTMAX_TOPK,
	.expert = CB_EXPERT_SWIGLU,
};
