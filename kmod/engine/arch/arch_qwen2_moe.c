// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * arch_qwen2_moe.c - Qwen2-MoE: q/k/v biases, routed experts plus a shared expert behind a
 * sigmoid gate, sparse steps and dense (mlp_only) layers from the config.
 */
#include "cb_arch.h"
#include "cb_engine.h"

static const char *const hf_classes[] = { "Qwen2MoeForCausalLM", CB_NULL };

const struct cb_arch_desc cb_arch_qwen2_moe = {
	.id = CB_ARCH_QWEN2_MOE,
	.name = "qwen2_moe",
	.hf_classes = hf_classes,
	.hf_model_type = "qwen2_moe",
	.gguf_arch = "qwen2moe",
	.gguf_rope = CB_ROPE_NEOX,
	.gguf_norm_topk = 0,
	.hf_add_bos = 0,
	.qk_norm = CB_QK_NORM_NONE,
	.attn = CB_ATTN_GQA,
	.ffn = CB_FFN_MOE_SHARED,
	.router = CB_ROUTER_SOFTMAX_TOPK,
	.expert = CB_EXPERT_SWIGLU,
};
