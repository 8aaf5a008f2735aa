// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * arch_olmoe.c - OLMoE: RMSNorm over the whole q and k projections, clip_qkv, routed
 * experts.
 */
#include "cb_arch.h"
#include "cb_engine.h"

static const char *const hf_classes[] = { "OlmoeForCausalLM", CB_NULL };

const struct cb_arch_desc cb_arch_olmoe = {
	.id = CB_ARCH_OLMOE,
	.name = "olmoe",
	.hf_classes = hf_classes,
	.hf_model_type = "olmoe",
	.gguf_arch = "olmoe",
	.gguf_rope = CB_ROPE_NEOX,
	.gguf_norm_topk = 0,
	.hf_add_bos = 0,
	.qk_norm = CB_QK_NORM_FULL,
	.attn = CB_ATTN_GQA,
	.ffn = CB_FFN_MOE,
	.router = CB_ROUTER_SOFTMAX_TOPK,
	.expert = CB_EXPERT_SWIGLU,
};
