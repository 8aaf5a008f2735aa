// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * arch_llama.c - Llama (and Mistral): the dense model, GQA and a SwiGLU MLP in every layer.
 */
#include "arch/cb_arch.h"
#include "core/cb_engine.h"
#include "format/cb_format.h"

static const char *const hf_classes[] = { "LlamaForCausalLM", "MistralForCausalLM", CB_NULL };

/* config.json */
static const struct cb_arch_hf_key hf_config[] = {
	{ "intermediate_size", CB_HF_REQ, CB_HF_FIELD(dense_ffn), 0 },
	{ CB_NULL, CB_HF_END, 0, 0 },
};

const struct cb_arch_desc cb_arch_llama = {
	.id = COLIBRI_ARCH_LLAMA,
	.name = "llama",
	.hf_classes = hf_classes,
	.hf_config = hf_config,
	.hf_model_type = "llama",
	.gguf_arch = "llama",
	.gguf_rope = CB_ROPE_INTERLEAVED,
	.gguf_norm_topk = 1,
	.gguf_expert_ffn_key = "feed_forward_length",
	.hf_add_bos = 1,
	.qk_norm = CB_QK_NORM_NONE,
	.attn = CB_ATTN_GQA,
	.ffn = CB_FFN_DENSE,
	.router = CB_ROUTER_NONE,
	.expert = CB_EXPERT_SWIGLU,
	.synth = {
		.rope_theta_bits = CB_F32_1E4,
		.rms_eps_bits = CB_F32_1EM6,
		.norm_topk_prob = 0,
		.qkv_bias = 0,
	},
};
