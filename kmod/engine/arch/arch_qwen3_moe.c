// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * arch_qwen3_moe.c - Qwen3-MoE: RMSNorm of q and k per head before RoPE, routed experts.
 */
#include "cb_arch.h"
#include "cb_engine.h"

static const char *const hf_classes[] = { "Qwen3MoeForCausalLM", CB_NULL };

const struct cb_arch_desc cb_arch_qwen3_moe = {
	.id = CB_ARCH_QWEN3_MOE,
	.name = "qwen3_moe",
	.hf_classes = hf_classes,
	.hf_model_type = "qwen3_moe",
	.gguf_arch = "qwen3moe",
	.gguf_rope = CB_ROPE_NEOX,
	.gguf_norm_topk = 1,
	.hf_add_bos = 0,
	.qk_norm = CB_QK_NORM_HEAD,
	.attn = CB_ATTN_GQA,
	.ffn = CB_FFN_MOE,
	.router = CB_ROUTER_SOFTMAX_TOPK,
	.expert = CB_EXPERT_SWIGLU,
};
